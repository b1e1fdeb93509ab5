/* eval.h - the reference interpreter, exact mode: evaluates a verified
 * module's entry computation with XLA's operation semantics (the
 * HloEvaluator's where backends differ), each op rounded to its own element
 * type. docs/SEMANTICS.md lists every edge case and its source. */
#ifndef TR_EVAL_H
#define TR_EVAL_H

#include "../ir/ir.h"
#include "../ir/tensor.h"
#include "value.h"

/* A runtime value: an array (t), a tuple of values, or a token (its
 * structure in hd, value.h). Values are immutable once made and shared by
 * reference count, so get-tuple-element, parameters and pass-through ops
 * copy nothing. */
typedef struct tr_value tr_value;
struct tr_value {
  ev_v hd;           /* reference count, kind, tuple elements */
  tr_tensor *t;      /* the array, or NULL for a tuple or token */
};

tr_value *tr_value_tensor(tr_tensor *t);           /* takes ownership of t */
/* Takes the refs; elems NULL leaves n slots to fill (tr_value_elems). */
tr_value *tr_value_tuple(int n, tr_value *const *elems);
tr_value *tr_value_token(void);
tr_value *tr_value_ref(tr_value *v);               /* returns v */
void tr_value_unref(tr_value *v);                  /* NULL is fine */
/* A tuple's elements (hd.elems seen as values of this domain). */
static inline tr_value **tr_value_elems(const tr_value *v) { return (tr_value **)v->hd.elems; }

/* The trip limit of a while loop when the options leave it 0: far more
 * than any real model's loops run, reached in seconds by a loop that never
 * ends. */
#define TR_EVAL_DEFAULT_TRIPS 10000000

/* Limits: an evaluation that reaches one ends with a located diagnostic
 * (TR_ERR_UNSUPPORTED), never a hang. */
typedef struct {
  int64_t max_while_trips; /* per run of a while instruction; 0 = the default
                              TR_EVAL_DEFAULT_TRIPS, negative = no limit */
  bool verified;           /* the caller ran tr_verify: skip it here */
  int64_t max_bytes;       /* per result tensor; 0 = the tensor limit */
  double deadline_s;       /* wall-clock seconds for the whole evaluation,
                              checked between instructions; 0 = none */
} tr_eval_opts;

/* Evaluates m's entry computation. args are the array leaves of the entry
 * parameters in order (a tuple parameter takes as many args as it has array
 * leaves; token parameters take none); each must have the parameter's dtype
 * and dims. On success *outs is a new array of *nouts new tensors, the
 * array leaves of the root in order (tuples flattened, tokens left out);
 * free them with tr_eval_free_outputs. On failure returns non-OK, sets
 * *outs = NULL, *nouts = 0 and adds a diagnostic located at the
 * instruction ("file:line:col: error: in %name: unsupported: sort").
 * The module is verified first (unless opts say it was), because the
 * kernels trust operand shapes: an invalid module is TR_ERR_INVALID with
 * the verifier's diagnostics, never a crash. */
tr_status tr_eval(const tr_module *m, tr_tensor *const *args, int nargs,
                  tr_tensor ***outs, int *nouts, tr_diag *d);
tr_status tr_eval_opt(const tr_module *m, const tr_eval_opts *opts,
                      tr_tensor *const *args, int nargs, tr_tensor ***outs,
                      int *nouts, tr_diag *d);
void tr_eval_free_outputs(tr_tensor **outs, int nouts);
/* The bytes an evaluation of m holds at its peak (budget.c): the
 * arguments, the evaluator's values live at once in schedule order with
 * the peaks of called computations, and the outputs; shadow mode counts
 * its wider elements (value, bound and mark). Made from shapes alone, in
 * time linear in the module, so a caller can decline a module over its
 * memory budget before allocating anything. UINT64_MAX when it does not
 * fit in 64 bits. */
uint64_t tr_eval_estimate_bytes(const tr_module *m, bool shadow);
/* A lower bound of the scalar operations an evaluation of m performs
 * (budget.c): result elements, multiply-adds of dots and convolutions,
 * elements read by reductions and windows, n log n per sort; a while loop
 * counts one trip. Made from shapes alone, so a caller can decline a
 * module whose bound cannot finish before the reference's deadline. */
double tr_eval_estimate_ops(const tr_module *m);
/* Whether the interpreter evaluates op (for core element types). */
bool tr_eval_supports(tr_op op);

#endif
