/* trench.h - the public API for embedding trench: load HLO text, verify
 * and print it, evaluate it on the reference, open a target and check a
 * module on it. Handles are opaque (module, target, report, tensor); every
 * call reports problems through a return value and a malloc'd message,
 * never by exiting. examples/embed.c uses only this header. */
#ifndef TRENCH_H
#define TRENCH_H

#include <stddef.h>

#define TRENCH_VERSION "0.1.0"

typedef struct tr_module tr_module;

/* Parses HLO text (XLA's format). Returns NULL on error and, when err is
 * given, a malloc'd "file:line:col: error: ..." message the caller frees. */
tr_module *trench_parse(const char *name, const char *text, size_t len, char **err);
/* Verifies shapes and attributes; 0 when valid, else -1 and *err. */
int trench_verify(const tr_module *m, char **err);
/* Canonical HLO text, malloc'd; the caller frees it. */
char *trench_print(const tr_module *m);
void trench_free(tr_module *m);

/* ---- the reference ---- */

typedef struct trench_tensor trench_tensor; /* a tensor of the reference */

/* Evaluates m in exact mode on inputs drawn from seed (the same inputs
 * `trench run --seed` and `trench check` draw). On success returns 0 and
 * sets *outs to a malloc'd array of *nouts tensors (the root's array
 * leaves), freed with trench_tensors_free; else -1 and *err. */
int trench_eval(const tr_module *m, unsigned long long seed, trench_tensor ***outs, int *nouts,
                char **err);
void trench_tensors_free(trench_tensor **ts, int n);
const char *trench_tensor_dtype(const trench_tensor *t); /* "f32", ... */
int trench_tensor_rank(const trench_tensor *t);
long long trench_tensor_dim(const trench_tensor *t, int i);
const void *trench_tensor_data(const trench_tensor *t); /* row-major */
size_t trench_tensor_nbytes(const trench_tensor *t);

/* ---- targets and checks ---- */

typedef struct tr_target trench_target;
typedef struct trench_report trench_report;

/* Opens a target: "builtin", "interp", "xla-cpu[@VER]", "cmd:PROGRAM
 * ARGS" (docs/PROTOCOL.md). home is trench's source tree (adapters/,
 * .venv/, profiles/) or NULL for $TRENCH_HOME. NULL and *err on failure. */
trench_target *trench_target_open(const char *spec, const char *home, char **err);
void trench_target_close(trench_target *t);

typedef struct {
  unsigned long long seed; /* first input seed (0) */
  int nseeds;              /* seeds (3) */
  int strict;              /* 1: no profile, every deviation counts */
  const char *profile;     /* profile file; NULL: HOME/profiles/NAME.conf
                              when it exists (unless strict) */
  double timeout_s;        /* per target run; <= 0: the target's default */
} trench_check_options;

void trench_check_options_init(trench_check_options *o);

/* Judges m on t against the reference's bounds (docs/ORACLE.md). Returns
 * a report (free it with trench_report_free), or NULL and *err when
 * trench itself failed (not for findings: those are in the report). */
trench_report *trench_check(trench_target *t, const tr_module *m, const trench_check_options *o,
                            char **err);
/* "pass", "weak", "unsupported", "declined", "finding" or "error". */
const char *trench_report_outcome(const trench_report *r);
/* The report as `trench check --json` prints it, or as its text lines;
 * malloc'd, the caller frees. The JSON is NULL when memory ran out. */
char *trench_report_json(const trench_report *r);
char *trench_report_text(const trench_report *r);
void trench_report_free(trench_report *r);

#endif
