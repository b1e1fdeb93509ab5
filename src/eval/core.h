/* core.h - the interpreter core: computation frames (only what feeds the
 * root, values dropped after their last use, the limits checked), and the
 * ops that only route values - call and fusion, while, conditional, map,
 * async, tuple, get-tuple-element - plus binding entry arguments to
 * parameters and flattening results, written once for every value domain.
 *
 * Every domain's values begin with the same header (value.h: reference
 * count, tuples, tokens), which the core reads; a value domain says what
 * its arrays are and how one op is computed on values, and the core never
 * looks inside an array. Exact mode (eval.c, values tr_value) and shadow
 * mode (shadow.c, values sh_val with bounds and uncertain marks) are two
 * domains. A third (say a symbolic reference for a kernel verifier)
 * supplies the same hooks: the layout of its values (value.h), the shape
 * of its arrays, its op dispatch (which calls evc_route for the
 * ops this core routes, where it wants its own checks around them), how a
 * control value reads as an integer and whether that reading is certain,
 * what a loop or a branch does to its result when it was not, and the
 * few element operations map needs. Not a public interface. */
#ifndef TR_EVAL_CORE_H
#define TR_EVAL_CORE_H

#include "evalint.h"

typedef struct {
  const char *name; /* "value", "shadow value": for internal-error messages */
  /* ---- values (value.h): shared by reference count, immutable once made ---- */
  const ev_layout *layout; /* the domain's value size and array drop */
  /* An array's element type, rank and dims (borrowed). */
  void (*shape)(const ev_v *v, tr_dtype *dt, int *rank, const int64_t **dims);
  /* ---- evaluation ---- */
  /* One instruction other than a parameter; every ops[j] is set. */
  tr_status (*instr)(void *dc, const tr_instr *in, ev_v **ops, ev_v **out);
  /* Optional: operand j of in is about to be read (shadow mode gives a
   * lazy argument its planes here, unless in reads only a part of it). */
  void (*operand)(void *dc, const tr_instr *in, int j, ev_v *v);
  /* Reads a one-element integer or pred array for control flow: its dtype,
   * its value in canonical form (ev_load_ints) and whether a correct run
   * may read another value. false: v is not a one-element array. */
  bool (*control)(const ev_v *v, tr_dtype *dt, uint64_t *val, bool *unsure);
  /* Optional: the result of a loop or branch whose control value was
   * unsure: a new value from v (v keeps its reference); NULL after a
   * located error. Without it the result is kept as it is. */
  ev_v *(*unsure)(void *dc, const tr_instr *in, ev_v *v);
  /* A value of shape s whose arrays are zero; NULL after a located error. */
  ev_v *(*zero)(void *dc, const tr_instr *in, const tr_shape *s);
  /* The value of an entry argument a (of the parameter leaf's dtype and
   * dims), for parameter p; top: a is the whole parameter, not a tuple
   * leaf. */
  tr_status (*arg)(void *dc, const tr_instr *p, const tr_tensor *a, bool top, ev_v **out);
  /* ---- map ---- */
  /* Optional: map in over whole arrays (*out set) or decline (*out NULL). */
  tr_status (*map_whole)(void *dc, const tr_instr *in, const tr_comp *k, ev_v **ops, ev_v **out);
  ev_v *(*array)(void *dc, const tr_instr *in, const tr_shape *s); /* zeros; NULL after an error */
  size_t (*count)(const ev_v *a);
  ev_v *(*scalar_at)(void *dc, const tr_instr *in, const ev_v *a, size_t i); /* NULL after an error */
  /* Stores scalar s into element i of a; false when s is not a scalar of
   * a's dtype. */
  bool (*put)(ev_v *a, size_t i, const ev_v *s);
} ev_domain;

/* A domain at work: its hooks, its context (passed to them) and the
 * evaluation's facts (errors, limits, liveness, nesting depth). */
typedef struct {
  const ev_domain *d;
  void *dc;
  ev_ctx *ev;
} ev_core;

/* Sets up c's per-module tables (instruction positions, liveness) and its
 * limits for evaluating m; evc_end frees the tables. */
void evc_begin(ev_ctx *c, const tr_module *m);
void evc_end(ev_ctx *c);

/* Evaluates computation comp on params; *out gets a new reference. */
tr_status evc_call(const ev_core *k, const tr_instr *caller, const tr_comp *comp,
                   ev_v *const *params, int np, ev_v **out);

/* Whether op is one the core routes (call, fusion, while, conditional,
 * map, async-*, tuple, get-tuple-element), and routing one. */
bool evc_routes(tr_op op);
tr_status evc_route(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out);
/* scan (core_scan.c). */
tr_status evc_route_scan(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out);

/* Binds the entry arguments to the parameters of e: params[i] gets a new
 * value per parameter (tuple parameters take as many args as they have
 * array leaves, tokens none); every arg must be used. */
tr_status evc_bind(const ev_core *k, const tr_comp *e, tr_tensor *const *args, int nargs,
                   ev_v **params);

/* The array leaves of v, depth-first (tokens left out): a new array of
 * *n borrowed values. */
ev_v **evc_leaves(const ev_core *k, ev_v *v, int *n);

#endif
