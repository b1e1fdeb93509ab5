/* jit.h - turns the C emitter's translation unit into running code: the
 * system C compiler builds a shared object in a private temporary folder
 * and dlopen loads it, or (backend tcc, the fast mode for fuzzing) libtcc
 * compiles the text in memory; each run executes the kernel in a forked
 * child so a
 * crashing or hanging (miscompiled) kernel becomes a verdict instead of
 * taking the caller down. Compiled code is cached by a hash of the C text
 * (plus compiler and flags): in memory for the process and on disk under
 * $XDG_CACHE_HOME/trench or ~/.cache/trench. docs/EMITTER.md has the
 * details. */
#ifndef TR_COMP_JIT_H
#define TR_COMP_JIT_H

#include "../base/base.h"
#include "emit.h"

/* The entry point every translation unit exports (emit.h): in[] are the
 * entry parameters' array leaves, out[] the root's array leaves, both as
 * raw tensor storage (tensor.h). Returns 0 on success, nonzero when the
 * kernel gave up (out of memory). */
typedef int (*tr_jit_entry)(unsigned char **in, unsigned char **out);

/* Who compiles the C text. */
typedef enum {
  TR_JIT_CC,  /* the system C compiler (-O2) into a .so, dlopen (default) */
  TR_JIT_TCC  /* libtcc, in process and in memory: ~10x faster to compile,
                 slower code; never on disk */
} tr_jit_backend;

typedef struct {
  tr_jit_backend backend; /* TR_JIT_CC unless set */
  const char *cc;        /* compiler; NULL: $TRENCH_CC, else "cc" */
  const char *cflags;    /* NULL: $TRENCH_CFLAGS, else "-O2" (cc only) */
  const char *tmp_dir;   /* parent of the private folder; NULL: $TMPDIR
                            or /tmp */
  const char *cache_dir; /* NULL: $XDG_CACHE_HOME/trench, else
                            ~/.cache/trench; "" turns the disk cache off */
  bool no_cache;         /* skip both caches (tests of the compile path) */
} tr_jit_opts;

void tr_jit_opts_init(tr_jit_opts *o);

/* A loaded translation unit, shared through the process-wide cache and
 * counted: release it with tr_jit_release. */
typedef struct tr_jit_code tr_jit_code;

typedef struct {
  double compile_ms;  /* time spent in the C compiler (0 on a cache hit) */
  bool memory_hit;    /* found loaded already */
  bool disk_hit;      /* found on disk, only loaded */
} tr_jit_stats;

/* Compiles and loads src (NUL-terminated C). A compiler failure is
 * TR_ERR_INVALID with the compiler's last messages as diagnostic (an
 * emitter bug: the target's COMPILE_ERROR); trouble with temporary files,
 * a missing compiler or dlopen is TR_ERR_IO; backend tcc in a build
 * without libtcc is TR_ERR_UNSUPPORTED. */
tr_status tr_jit_compile(const tr_jit_opts *o, const char *src,
                         tr_jit_code **out, tr_jit_stats *st, tr_diag *d);
/* The address of an exported function, or NULL. */
tr_jit_entry tr_jit_symbol(tr_jit_code *c, const char *name);
void tr_jit_release(tr_jit_code *c); /* NULL is fine */
/* One more holder of c (released with tr_jit_release); returns c. */
tr_jit_code *tr_jit_retain(tr_jit_code *c);

/* Whether this build has the tcc backend (Makefile: TCC=1). */
bool tr_jit_have_tcc(void);

/* The hash the caches use: 32 hex digits into hex[33]. */
void tr_jit_hash_text(const tr_jit_opts *o, const char *src, char hex[33]);

typedef enum {
  TR_JIT_RUN_OK,    /* the kernel returned 0; outputs are written */
  TR_JIT_RUN_CRASH, /* the child died of a signal or exited abnormally */
  TR_JIT_RUN_HANG,  /* no end within the timeout; the child was killed */
  TR_JIT_RUN_ERROR  /* the kernel returned nonzero (it gave up) */
} tr_jit_outcome;

typedef struct {
  tr_jit_outcome outcome; /* how the run ended */
  int signal;             /* CRASH by a signal: its number, else 0 */
  int code;               /* kernel return value or exit status */
  double run_ms;          /* wall time of the child (fork to reaped) */
  double kernel_ms;       /* the entry call alone, timed in the child
                             (OK and ERROR runs; else 0) */
  char msg[160];          /* "killed by signal 11 (Segmentation fault)" */
} tr_jit_run;

/* Runs fn(in, out) in a forked child. out[i] receives out_bytes[i] bytes;
 * the child writes them into one MAP_SHARED mapping and the parent copies
 * them out only when the run ended well. timeout_s <= 0: no limit.
 * Returns non-OK only when the run could not be attempted (no memory for
 * the mapping, fork failed), with a diagnostic. */
tr_status tr_jit_run_forked(tr_jit_entry fn, unsigned char *const *in,
                            unsigned char **out, const size_t *out_bytes,
                            int nout, double timeout_s, tr_jit_run *r,
                            tr_diag *d);

/* A runner: a process forked once (while its owner is small) that forks
 * the child of each run itself, so a run costs a fork of a small process
 * instead of one of the caller (docs/EMITTER.md). It runs code that
 * libtcc compiled after it started; anything else, or a run while another
 * thread uses it, takes tr_jit_run_forked. NULL when it cannot start
 * (no libtcc, no fork): then every run is a tr_jit_run_forked. */
typedef struct tr_jit_runner tr_jit_runner;
tr_jit_runner *tr_jit_runner_new(void);
void tr_jit_runner_free(tr_jit_runner *rn); /* NULL is fine */

/* tr_jit_run_forked through rn (NULL: forked directly); in_bytes[i] is
 * the size of in[i]. The same outcomes, messages and containment. */
tr_status tr_jit_runner_run(tr_jit_runner *rn, tr_jit_code *code, tr_jit_entry fn,
                            unsigned char *const *in, const size_t *in_bytes, int nin,
                            unsigned char **out, const size_t *out_bytes, int nout,
                            double timeout_s, tr_jit_run *r, tr_diag *d);

#endif
