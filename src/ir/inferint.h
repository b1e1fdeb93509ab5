/* inferint.h - what the shape inference files share: the inference
 * context, located reasons (in_bad, IN_FAIL), shape and list text for
 * messages, the operand, attribute and called-computation checks, and the
 * per-op rules infer.c dispatches to. Not a public interface. */
#ifndef TR_INFERINT_H
#define TR_INFERINT_H

#include "ir.h"

/* ---- inference context ---- */
#define IN_NSCRATCH 8

typedef struct {
  tr_arena *a;             /* results and scratch arrays */
  const tr_instr *in;      /* instruction being inferred */
  const tr_shape *decl;    /* its declared shape, NULL when omitted */
  const char *op;          /* its op spelling, for messages */
  tr_buf *why;             /* reason on failure */
  bool failed;             /* a reason was written: the first one stands */
  tr_buf tmp[IN_NSCRATCH]; /* rotating buffers for shapes and lists in messages */
  int ntmp;                /* next buffer to use */
} in_ctx;

bool in_bad(in_ctx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Failing rules return NULL after in_bad() wrote the reason. */
#define IN_FAIL(...) (in_bad(c, __VA_ARGS__), (tr_shape *)NULL)

/* Shape text for messages; valid until IN_NSCRATCH more are made. */
const char *in_str(in_ctx *c, const tr_shape *s);
/* "{0,1}" for messages. */
const char *in_list(in_ctx *c, const int64_t *v, int n);

static inline const tr_shape *in_opnd(const in_ctx *c, int i) { return c->in->operands[i]->shape; }
static inline int in_nopnds(const in_ctx *c) { return c->in->noperands; }

tr_shape *in_new_array(in_ctx *c, tr_dtype dt, int rank);
static inline tr_shape *in_clone(in_ctx *c, const tr_shape *s) { return tr_shape_clone(c->a, s); }

static inline int64_t *in_scratch_ints(in_ctx *c, int n) {
  return tr_arena_alloc(c->a, sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
}

/* ---- shape and type predicates ---- */
static inline bool in_is_array(const tr_shape *s) { return s && tr_dtype_is_array(s->dtype); }
static inline bool in_is_scalar(const tr_shape *s) { return in_is_array(s) && s->rank == 0; }
static inline bool in_is_float(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_FLOAT; }
static inline bool in_is_complex(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_COMPLEX; }
static inline bool in_is_int(tr_dtype t) { return tr_dtype_is_int(t); }

/* XLA's "ignoring floating-point precision": f32 and bf16 count as one. */
static inline bool in_same_ignoring_fp(tr_dtype a, tr_dtype b) {
  return a == b || (in_is_float(a) && in_is_float(b));
}

static inline bool in_dim_eq(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }

bool in_same_dims(const tr_shape *a, const tr_shape *b);

/* ---- attributes ---- */
/* The attribute if present with the kind attrs.def gives it; a wrong kind
 * counts as absent here (tr_verify reports it on its own). */
const tr_attr *in_attr(const in_ctx *c, tr_attr_key k);
/* The attribute, or a reason naming it when it is absent. */
const tr_attr *in_need(in_ctx *c, tr_attr_key k);
/* An int-list attribute; absent reads as the empty list. */
const int64_t *in_ints(const in_ctx *c, tr_attr_key k, int *n);
/* Checks a list of dimension numbers: each in [0, bound), no repeats, and
 * ascending when sorted is asked for. */
bool in_dims_ok(in_ctx *c, const char *name, const int64_t *v, int n, int64_t bound,
               bool sorted);
/* No dimension in both lists. */
bool in_disjoint(in_ctx *c, const char *n1, const int64_t *v1, int k1, const char *n2,
                 const int64_t *v2, int k2);

/* ---- operands: each check writes a reason and returns false ---- */
bool in_want_array(in_ctx *c, int i);
/* Operands [from, to) are arrays. */
bool in_want_arrays(in_ctx *c, int from, int to);
bool in_want_scalar(in_ctx *c, int i, const char *what);
bool in_min_operands(in_ctx *c, int n);
/* A declared array shape, needed by rules whose result is not determined
 * by the operands (reshape, broadcast, convert, ...). */
const tr_shape *in_want_decl(in_ctx *c);

/* ---- called computations ---- */
int in_comp_nparams(const tr_comp *k);
/* Parameter i of k; falls back to a search when the table was not filled
 * (modules built through the API). */
const tr_instr *in_comp_param(const tr_comp *k, int i);
/* The computation attribute k names, checked to have a root and n
 * parameters (n < 0: any number). */
const tr_comp *in_callee(in_ctx *c, tr_attr_key key, int n);
static inline const tr_shape *in_param_shape(const tr_comp *k, int i) { return in_comp_param(k, i)->shape; }

/* Parameter i of k must be a scalar of type t. */
bool in_scalar_param(in_ctx *c, const char *an, const tr_comp *k, int i, tr_dtype t);
/* One shape, or a tuple of n > 1. */
static inline tr_shape *in_tuple_of(in_ctx *c, tr_shape **elems, int n) {
  return n == 1 ? elems[0] : tr_shape_tuple(c->a, n, elems);
}

/* ---- reducers and windows (infer_reduce.c) ---- */
/* XLA's VerifyReducerShape: the computation takes n accumulators then n
 * inputs, all scalars, and returns n scalars (a tuple when n > 1).
 * Accumulator i has exactly the type returned at i; init value i and input
 * i must match it up to float precision. The returned types go to acc. */
bool in_check_reducer(in_ctx *c, tr_attr_key key, int n, const tr_dtype *init,
                      const tr_dtype *input, tr_dtype *acc);
/* XLA's InferWindowOutputShape for the n window dims over base sizes. */
bool in_window_out(in_ctx *c, const tr_window_dim *w, int n, const int64_t *base,
                   int64_t *out);

/* ---- the rules: the result shape, or NULL after a reason ---- */
/* infer_elem.c: leaves, elementwise ops and the declared-shape ops */
tr_shape *in_r_parameter(in_ctx *c);
tr_shape *in_r_constant(in_ctx *c);
tr_shape *in_r_iota(in_ctx *c);
tr_shape *in_r_after_all(in_ctx *c);
tr_shape *in_r_same(in_ctx *c);
tr_shape *in_r_select(in_ctx *c);
tr_shape *in_r_clamp(in_ctx *c);
tr_shape *in_r_compare(in_ctx *c);
tr_shape *in_r_is_finite(in_ctx *c);
tr_shape *in_r_binary(in_ctx *c);
tr_shape *in_r_declared(in_ctx *c);
/* infer_move.c: data movement and conversions */
tr_shape *in_r_broadcast(in_ctx *c);
tr_shape *in_r_reshape(in_ctx *c);
tr_shape *in_r_bitcast(in_ctx *c);
tr_shape *in_r_transpose(in_ctx *c);
tr_shape *in_r_convert(in_ctx *c);
tr_shape *in_r_bitcast_convert(in_ctx *c);
tr_shape *in_r_slice(in_ctx *c);
tr_shape *in_r_concatenate(in_ctx *c);
tr_shape *in_r_pad(in_ctx *c);
tr_shape *in_r_reverse(in_ctx *c);
/* infer_index.c: indexed access */
tr_shape *in_r_dynamic_slice(in_ctx *c);
tr_shape *in_r_dynamic_update_slice(in_ctx *c);
tr_shape *in_r_gather(in_ctx *c);
tr_shape *in_r_scatter(in_ctx *c);
/* infer_reduce.c: reductions, windows and sorting */
tr_shape *in_r_reduce(in_ctx *c);
tr_shape *in_r_reduce_window(in_ctx *c);
tr_shape *in_r_select_and_scatter(in_ctx *c);
tr_shape *in_r_sort(in_ctx *c);
tr_shape *in_r_topk(in_ctx *c);
/* infer_contract.c: contractions and linear algebra */
tr_shape *in_r_dot(in_ctx *c);
tr_shape *in_r_convolution(in_ctx *c);
tr_shape *in_r_cholesky(in_ctx *c);
tr_shape *in_r_triangular_solve(in_ctx *c);
/* infer_ctrl.c: control flow, calls and tuples */
tr_shape *in_r_while(in_ctx *c);
tr_shape *in_r_conditional(in_ctx *c);
tr_shape *in_r_call(in_ctx *c, tr_attr_key key);
tr_shape *in_r_map(in_ctx *c);
tr_shape *in_r_tuple(in_ctx *c);
tr_shape *in_r_gte(in_ctx *c);
tr_shape *in_r_all_reduce(in_ctx *c);

#endif
