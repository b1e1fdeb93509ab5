/* target.h - the target interface: something that compiles and runs a
 * module on inputs and says what came out (outputs, or a verdict such as a
 * crash or a hang). A target is an explicit object with an ops table, so
 * several can live side by side (one per thread, one per version) and the
 * reducer can drive one while the oracle drives another.
 *
 * Targets so far: "interp" (interp.c), the reference interpreter;
 * "cmd:PROGRAM ARGS..." (proc.c), a child process speaking the process
 * protocol of docs/PROTOCOL.md; "xla-cpu" (target.c), the XLA adapter
 * under that protocol. */
#ifndef TR_TARGET_H
#define TR_TARGET_H

#include <signal.h>

#include "../ir/ir.h"
#include "../ir/tensor.h"

/* What a run ended with. Only OK carries outputs. Everything but OK and
 * UNSUPPORTED is a finding about the target (CRASH, HANG and
 * PROTOCOL_ERROR also restart a process target). */
typedef enum {
  TR_VERDICT_OK,             /* ran; outputs are set */
  TR_VERDICT_CRASH,          /* the target died (signal or exit) mid-request */
  TR_VERDICT_HANG,           /* no reply within the timeout; killed */
  TR_VERDICT_COMPILE_ERROR,  /* the target refused to compile the module */
  TR_VERDICT_UNSUPPORTED,    /* the target does not handle this module */
  TR_VERDICT_ERROR,          /* compiled, but the target reported a failure
                                while running it */
  TR_VERDICT_PROTOCOL_ERROR, /* malformed reply or unusable outputs; killed */
  TR_VERDICT_COUNT
} tr_verdict;

const char *tr_verdict_name(tr_verdict v); /* "ok", "crash", ... */

/* Optional capabilities, as the target announces them. */
enum {
  TR_CAP_OPTIMIZED_HLO = 1 << 0,  /* can return the module it actually ran */
  TR_CAP_DISABLE_PASSES = 1 << 1, /* honours tr_run_opts.disable_passes */
  TR_CAP_LIST_PASSES = 1 << 2,    /* lists passes (ran / changed) */
  TR_CAP_TIMINGS = 1 << 3,        /* reports compile and run times */
  TR_CAP_RECEIVED_HLO = 1 << 4,   /* returns the module its passes started
                                     from (checked against the one sent) */
  TR_CAP_MLIR = 1 << 5,           /* compiles StableHLO/MHLO text as it is
                                     and converts it to HLO ("convert") */
  TR_CAP_PASS_DUMPS = 1 << 6      /* returns the module after each pass that
                                     changed it (translation validation) */
};

typedef struct {
  const char *const *disable_passes; /* pass names the target must skip */
  int ndisable_passes;
  bool want_optimized_hlo; /* ask for the optimized module's text */
  bool want_passes;        /* ask for the passes that changed the module */
  bool want_pass_dumps;    /* ask for the module after each of them
                              (TR_CAP_PASS_DUMPS) */
  bool want_received_hlo;  /* ask for the module as the compiler received
                              it, before its own passes (XLA: after the
                              HLO->MLIR->HLO trip jaxlib imposes) */
  double timeout_s;        /* this request; <= 0: the target's default */
  const char *module_text; /* process targets: send this text verbatim
                              instead of the module printed (StableHLO the
                              module was converted from); NULL: print it */
  bool same_module;        /* the caller's previous run on this target was
                              this module (the same object, unchanged):
                              the target may run what it compiled then
                              (builtin does; later seeds of a check) */
} tr_run_opts;

/* Everything a run produced. Heap-owned; tr_run_result_free releases it. */
typedef struct {
  tr_verdict verdict;
  tr_tensor **outputs;    /* OK only: one per array leaf of the root shape,
                             depth-first */
  int noutputs;
  char *optimized_hlo;    /* text of the module the target ran, or NULL */
  char *received_hlo;     /* text of the module before the target's passes,
                             or NULL */
  char *message;          /* why (the target's words or trench's), or NULL */
  char *stderr_tail;      /* the child's last stderr bytes on a non-OK
                             verdict (process targets), or NULL */
  double compile_ms;      /* -1 when not reported */
  double run_ms;          /* -1 when not reported */
  double wall_ms;         /* request round trip as trench measured it */
  char **passes_changed;  /* want_passes: in pipeline order */
  int npasses_changed;
  char **pass_dump_names; /* want_pass_dumps: pass of each dump, in order */
  char **pass_dump_texts; /* the module after it (HLO text) */
  int npass_dumps;
} tr_run_result;

void tr_run_result_init(tr_run_result *r);
void tr_run_result_free(tr_run_result *r); /* leaves r re-initialized */

typedef struct tr_target tr_target;

typedef struct {
  const char *kind; /* "cmd", ... */
  /* Runs m on inputs (one per array leaf of the entry parameters, in
   * parameter order, depth-first in tuples). Returns TR_OK whenever a
   * verdict was reached, misbehaving targets included; non-OK only for
   * trouble on trench's side (cannot write a temporary file, a module with
   * no entry), with a diagnostic. */
  tr_status (*run)(tr_target *t, const tr_module *m,
                   tr_tensor *const *inputs, int ninputs,
                   const tr_run_opts *o, tr_run_result *r, tr_diag *d);
  /* Names of the passes the target would run on m; NULL when the target
   * cannot list them. *names is a heap array of heap strings. */
  tr_status (*list_passes)(tr_target *t, const tr_module *m, char ***names,
                           int *nnames, tr_diag *d);
  void (*close)(tr_target *t); /* frees impl (not t) */
} tr_target_ops;

struct tr_target {
  const tr_target_ops *ops;
  char *spec;      /* as given to tr_target_open */
  char *name;      /* the target's own name ("echo", "xla-cpu") */
  char *version;   /* the target's own version string */
  unsigned caps;   /* TR_CAP_* */
  void *impl;      /* the kind's state */
};

/* What a signal handler needs to clean up after a process target when
 * trench is interrupted (SIGINT, SIGTERM, SIGHUP; src/cli/guard.c): the
 * running child's pid (the keeper of keeper.c: SIGTERM makes it kill the
 * adapter and all it started, then exit) and the private folder. The
 * target keeps it current; the handler only reads it, with
 * async-signal-safe calls (kill, waitpid, fork, execve of rm). The caller
 * owns the storage: a handler can reach nothing else. */
typedef struct {
  volatile sig_atomic_t pid; /* running child (the keeper); 0: none */
  char tmp[4096];            /* private folder; "" when none */
} tr_target_guard;

typedef struct {
  double timeout_s;       /* per run request; default 60 */
  double start_timeout_s; /* start + hello; 0 (the default): the target's
                             own, tr_target_start_timeout */
  const char *tmp_dir;    /* parent of the private folder; NULL: $TMPDIR
                             or /tmp */
  const char *home;       /* trench's source tree (adapters/, .venv/), for
                             xla-cpu; NULL: $TRENCH_HOME */
  tr_target_guard *guard; /* kept current for a signal handler; NULL: none */
  const char *realisation; /* torch-*: force this realisation (the adapter's
                              --realisation; docs/TORCH.md); NULL: by hash */
} tr_target_config;

void tr_target_config_init(tr_target_config *c);

/* Opens a target from its spec:
 *   cmd:PROGRAM [ARG...]  the process protocol; words split on blanks,
 *                         '...' and "..." quote, PROGRAM found on $PATH.
 *   xla-cpu               cmd: with HOME/.venv/bin/python and
 *                         HOME/adapters/xla/adapter.py (scripts/venv.sh)
 *   xla-cpu@VER           the same with HOME/.venv/jax-VER (another jax
 *                         release: scripts/venv.sh --jax VER)
 *   iree-cpu[@VER]        HOME/adapters/iree/adapter.py under
 *                         HOME/.venv/iree[-VER] (scripts/venv-iree.sh)
 *   interp                the reference interpreter (exact mode)
 * Starts the child and exchanges hello, so a misspelt program or a child
 * that cannot start is reported here (TR_ERR_IO / TR_ERR_USAGE), not on
 * the first run. cfg may be NULL for the defaults. A cmd: child runs under
 * a keeper (keeper.c) that ends it when the thread that started it exits
 * (Linux's parent-death signal follows the thread): open and use a target
 * from a thread that outlives it, such as the main thread. */
tr_status tr_target_open(const char *spec, const tr_target_config *cfg,
                         tr_target **out, tr_diag *d);
/* The per-run timeout, in seconds, that a fuzz campaign gives spec's
 * runs: 20, or more for a shipped adapter whose compiler is slow
 * (iree-cpu: iree-compile takes seconds per module, minutes on a loaded
 * machine; torch-inductor: each new module is C++ compiled, 10-60 s
 * under load). */
double tr_target_run_timeout(const char *spec);
/* How long spec's start (the adapter's spawn and hello) may take under
 * cfg: cfg's start_timeout_s when set, else 120 s (jax's imports), or
 * 300 s for torch-* (importing torch maps 1.2 GB of shared objects: 26 s
 * at load 19 on 2 cores, over 120 s at worse load); 0 for the
 * in-process targets (builtin, interp), which have no start to wait for. */
double tr_target_start_timeout(const char *spec, const tr_target_config *cfg);
tr_status tr_target_run(tr_target *t, const tr_module *m,
                        tr_tensor *const *inputs, int ninputs,
                        const tr_run_opts *o, tr_run_result *r, tr_diag *d);
/* The passes t would run on m (capability TR_CAP_LIST_PASSES); a target
 * that cannot list them gives TR_ERR_UNSUPPORTED. */
tr_status tr_target_list_passes(tr_target *t, const tr_module *m,
                                char ***names, int *nnames, tr_diag *d);
void tr_target_close(tr_target *t); /* NULL is fine */

/* Array leaves of a shape, depth-first (tuples flattened; tokens and
 * opaque leaves skipped): how parameters and results map to .npy files.
 * Returns the count; fills out[0..max) when out is given. */
int tr_shape_leaves(const tr_shape *s, const tr_shape **out, int max);

/* ---- interp (interp.c): the reference interpreter, exact mode ---- */
tr_status tr_interp_open(tr_target **out);

/* ---- cmd: targets (proc.c) ---- */
tr_status tr_proc_open(const char *spec, const char *cmdline,
                       const tr_target_config *cfg, tr_target **out,
                       tr_diag *d);
/* A target's own conversion of StableHLO/MHLO text to HLO text (capability
 * TR_CAP_MLIR; XLA: the MlirToXlaComputation its compile runs). *hlo is
 * heap text. */
tr_status tr_proc_convert(tr_target *t, const char *text, char **hlo, tr_diag *d);
/* ---- StableHLO input (mlir.c) ---- */
/* Whether text is an MLIR module (StableHLO/MHLO text) rather than HLO. */
bool tr_text_is_mlir(const char *text, size_t len);
/* t's conversion of MLIR text (from file, for messages) to a verified
 * module; *hlo gets the HLO text as t wrote it (heap). */
tr_status tr_mlir_convert(tr_target *t, const char *file, const char *text, tr_module **m,
                          char **hlo, tr_diag *d);
/* Process id of the running child (the keeper), or -1 when none (tests). */
int tr_proc_pid(const tr_target *t);
/* ---- the keeper (keeper.c) ----
 * Runs in the child of a fork (async-signal-safe calls only) and never
 * returns: a subreaper that execs argv (argv[0] a path) with the
 * descriptors it was given, writes errno to errfd (a CLOEXEC pipe) when
 * that fails, kills and reaps every process the adapter leaves when it
 * ends, when SIGTERM comes, or when trench (pid trench) dies (then it
 * also removes the folder tmp), then exits as the adapter did. */
_Noreturn void tr_keeper_run(char **argv, int errfd, pid_t trench, char *tmp);

#endif
