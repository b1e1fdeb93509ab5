/* infer.c - shape inference: tr_infer_shape computes an instruction's
 * result shape from its operands and attributes by the rules of XLA's shape
 * inference (xla/service/shape_inference.cc; the StableHLO spec for the
 * batching dimensions of gather and scatter). Layouts are ignored; an
 * unbounded dynamic dimension ('?', stored as -1) matches any size. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* ---- inference context ---- */
#define NSCRATCH 8

typedef struct {
  tr_arena *a;          /* results and scratch arrays */
  const tr_instr *in;   /* instruction being inferred */
  const tr_shape *decl; /* its declared shape, NULL when omitted */
  const char *op;       /* its op spelling, for messages */
  tr_buf *why;          /* reason on failure */
  bool failed;          /* a reason was written: the first one stands */
  tr_buf tmp[NSCRATCH]; /* rotating buffers for shapes and lists in messages */
  int ntmp;             /* next buffer to use */
} ictx;

static bool bad(ictx *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool bad(ictx *c, const char *fmt, ...) {
  if (c->failed) return false;
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(c->why, fmt, ap);
  va_end(ap);
  return false;
}

/* Failing rules return NULL after bad() wrote the reason. */
#define FAIL(...) (bad(c, __VA_ARGS__), (tr_shape *)NULL)

static tr_buf *scratch(ictx *c) {
  tr_buf *b = &c->tmp[c->ntmp++ % NSCRATCH];
  b->n = 0;
  if (b->p) b->p[0] = 0;
  return b;
}

/* Shape text for messages; valid until NSCRATCH more are made. */
static const char *S(ictx *c, const tr_shape *s) {
  tr_buf *b = scratch(c);
  if (s) tr_shape_print(b, s, false);
  else tr_buf_puts(b, "(no shape)");
  return tr_buf_str(b);
}

/* "{0,1}" for messages. */
static const char *L(ictx *c, const int64_t *v, int n) {
  tr_buf *b = scratch(c);
  tr_buf_putc(b, '{');
  for (int i = 0; i < n; i++) tr_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
  tr_buf_putc(b, '}');
  return tr_buf_str(b);
}

static const tr_shape *opnd(const ictx *c, int i) { return c->in->operands[i]->shape; }
static int nopnds(const ictx *c) { return c->in->noperands; }

static tr_shape *new_array(ictx *c, tr_dtype dt, int rank) {
  tr_shape *s = tr_arena_alloc(c->a, sizeof *s);
  s->dtype = dt;
  s->rank = rank;
  if (rank > 0) s->dims = tr_arena_alloc(c->a, sizeof(int64_t) * (size_t)rank);
  return s;
}

static tr_shape *clone(ictx *c, const tr_shape *s) { return tr_shape_clone(c->a, s); }

static int64_t *scratch_ints(ictx *c, int n) {
  return tr_arena_alloc(c->a, sizeof(int64_t) * (size_t)(n > 0 ? n : 1));
}

/* ---- shape and type predicates ---- */
static bool is_array(const tr_shape *s) { return s && tr_dtype_is_array(s->dtype); }
static bool is_scalar(const tr_shape *s) { return is_array(s) && s->rank == 0; }
static bool is_float(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_FLOAT; }
static bool is_complex(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_COMPLEX; }
static bool is_int(tr_dtype t) { return tr_dtype_is_int(t); }

/* XLA's "ignoring floating-point precision": f32 and bf16 count as one. */
static bool same_ignoring_fp(tr_dtype a, tr_dtype b) {
  return a == b || (is_float(a) && is_float(b));
}

static bool dim_eq(int64_t a, int64_t b) { return a == b || a < 0 || b < 0; }

static bool same_dims(const tr_shape *a, const tr_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (!dim_eq(a->dims[i], b->dims[i])) return false;
  return true;
}

/* Same element type and dims, tuples elementwise; layouts and dynamic
 * bounds are ignored. */
bool tr_shape_compatible(const tr_shape *a, const tr_shape *b) {
  if (!a || !b || a->dtype != b->dtype) return false;
  if (a->dtype == TR_DT_TUPLE) {
    if (a->nelems != b->nelems) return false;
    for (int i = 0; i < a->nelems; i++)
      if (!tr_shape_compatible(a->elems[i], b->elems[i])) return false;
    return true;
  }
  return same_dims(a, b);
}

static bool type_allowed(const char *types, tr_dtype t) {
  if (strcmp(types, "f") == 0) return is_float(t) || is_complex(t);
  if (strcmp(types, "i") == 0) return is_int(t);
  if (strcmp(types, "ip") == 0) return is_int(t) || t == TR_DT_PRED;
  if (strcmp(types, "n") == 0) return is_int(t) || is_float(t) || is_complex(t);
  return true;
}

static const char *types_desc(const char *types) {
  if (strcmp(types, "f") == 0) return "a float";
  if (strcmp(types, "i") == 0) return "an integer";
  if (strcmp(types, "ip") == 0) return "an integer or pred";
  if (strcmp(types, "n") == 0) return "a numeric (not pred)";
  return "any";
}

/* Element count, or -1 when unknown (dynamic) or too big for int64. */
static int64_t count(const tr_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0 || __builtin_mul_overflow(n, s->dims[i], &n)) return -1;
  }
  return n;
}

/* ---- attributes ---- */
/* The attribute if present with the kind attrs.def gives it; a wrong kind
 * counts as absent here (tr_verify reports it on its own). */
static const tr_attr *attr(const ictx *c, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(c->in, k);
  return at && at->kind == tr_attrs[k].kind ? at : NULL;
}

static const tr_attr *need(ictx *c, tr_attr_key k) {
  const tr_attr *at = attr(c, k);
  if (!at) bad(c, "%s needs attribute %s", c->op, tr_attrs[k].name);
  return at;
}

/* An int-list attribute; absent reads as the empty list. */
static const int64_t *ints(const ictx *c, tr_attr_key k, int *n) {
  const tr_attr *at = attr(c, k);
  *n = at ? at->n : 0;
  return at ? at->u.ints : NULL;
}

/* Checks a list of dimension numbers: each in [0, bound), no repeats, and
 * ascending when sorted is asked for. */
static bool dims_ok(ictx *c, const char *name, const int64_t *v, int n, int64_t bound,
                    bool sorted) {
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= bound)
      return bad(c, "%s %s=%s: dimension %lld is out of range for rank %lld", c->op, name,
                 L(c, v, n), (long long)v[i], (long long)bound);
    for (int j = 0; j < i; j++)
      if (v[j] == v[i])
        return bad(c, "%s %s=%s repeats dimension %lld", c->op, name, L(c, v, n),
                   (long long)v[i]);
    if (sorted && i > 0 && v[i - 1] > v[i])
      return bad(c, "%s %s=%s must be sorted", c->op, name, L(c, v, n));
  }
  return true;
}

static bool disjoint(ictx *c, const char *n1, const int64_t *v1, int k1, const char *n2,
                     const int64_t *v2, int k2) {
  for (int i = 0; i < k1; i++)
    if (tr_ints_has(v2, k2, v1[i]))
      return bad(c, "%s: dimension %lld is in both %s and %s", c->op, (long long)v1[i], n1, n2);
  return true;
}

/* ---- operands ---- */
static bool want_array(ictx *c, int i) {
  if (is_array(opnd(c, i))) return true;
  return bad(c, "operand %d of %s must be an array but has shape %s", i, c->op,
             S(c, opnd(c, i)));
}

static bool want_arrays(ictx *c, int from, int to) {
  for (int i = from; i < to; i++)
    if (!want_array(c, i)) return false;
  return true;
}

static bool want_scalar(ictx *c, int i, const char *what) {
  if (is_scalar(opnd(c, i))) return true;
  return bad(c, "%s (operand %d) of %s must be a scalar but has shape %s", what, i, c->op,
             S(c, opnd(c, i)));
}

static bool min_operands(ictx *c, int n) {
  if (nopnds(c) >= n) return true;
  return bad(c, "%s needs at least %d operand(s) but has %d", c->op, n, nopnds(c));
}

/* A declared array shape, needed by rules whose result is not determined
 * by the operands (reshape, broadcast, convert, ...). */
static const tr_shape *want_decl(ictx *c) {
  if (is_array(c->decl)) return c->decl;
  if (!c->decl) bad(c, "%s needs a declared result shape", c->op);
  else bad(c, "%s must produce an array but is declared %s", c->op, S(c, c->decl));
  return NULL;
}

/* Start indices of dynamic-slice and dynamic-update-slice, from operand
 * `first` on: one integer scalar per dimension, all of one type; the old
 * form with a single rank-1 index vector is accepted too. */
static bool start_indices_ok(ictx *c, int first, int rank) {
  int n = nopnds(c) - first;
  bool scalars = n == rank;
  for (int i = first; scalars && i < nopnds(c); i++) scalars = is_scalar(opnd(c, i));
  bool vector = !scalars && n == 1 && is_array(opnd(c, first)) && opnd(c, first)->rank == 1 &&
                dim_eq(opnd(c, first)->dims[0], rank);
  if (!scalars && !vector)
    return bad(c, "%s of a rank-%d operand needs %d scalar start indices but has %d", c->op,
               rank, rank, n);
  for (int i = first; i < nopnds(c); i++) {
    tr_dtype t = opnd(c, i)->dtype;
    if (!is_int(t))
      return bad(c, "start index (operand %d) of %s must be an integer but has shape %s", i,
                 c->op, S(c, opnd(c, i)));
    if (t != opnd(c, first)->dtype)
      return bad(c, "start indices of %s must share one type; operand %d is %s but operand %d is %s",
                 c->op, first, S(c, opnd(c, first)), i, S(c, opnd(c, i)));
  }
  return true;
}

/* ---- called computations ---- */
static int comp_nparams(const tr_comp *k) {
  if (k->params) return k->nparams;
  int n = 0;
  for (int i = 0; i < k->ninstrs; i++)
    if (k->instrs[i]->op == TR_OP_PARAMETER) n++;
  return n;
}

/* Parameter i of k; falls back to a search when the table was not filled
 * (modules built through the API). */
static const tr_instr *comp_param(const tr_comp *k, int i) {
  if (k->params && i < k->nparams && k->params[i]) return k->params[i];
  for (int j = 0; j < k->ninstrs; j++)
    if (k->instrs[j]->op == TR_OP_PARAMETER && k->instrs[j]->param_index == i) return k->instrs[j];
  return NULL;
}

/* The computation attribute k names, checked to have a root and n
 * parameters (n < 0: any number). */
static const tr_comp *callee(ictx *c, tr_attr_key key, int n) {
  const tr_attr *at = attr(c, key);
  const char *an = tr_attrs[key].name;
  if (!at || !at->u.comp) {
    bad(c, "%s needs a %s computation", c->op, an);
    return NULL;
  }
  const tr_comp *k = at->u.comp;
  if (!k->root || !k->root->shape) {
    bad(c, "%s computation %s has no root", an, k->name);
    return NULL;
  }
  if (n < 0) return k;
  if (comp_nparams(k) != n) {
    bad(c, "%s computation %s must take %d parameter(s) but takes %d", an, k->name, n,
        comp_nparams(k));
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!comp_param(k, i) || !comp_param(k, i)->shape) {
      bad(c, "%s computation %s has no parameter %d", an, k->name, i);
      return NULL;
    }
  return k;
}

static const tr_shape *param_shape(const tr_comp *k, int i) { return comp_param(k, i)->shape; }

/* Parameter i of k must be a scalar of type t. */
static bool scalar_param(ictx *c, const char *an, const tr_comp *k, int i, tr_dtype t) {
  const tr_shape *p = param_shape(k, i);
  if (is_scalar(p) && p->dtype == t) return true;
  return bad(c, "parameter %d of %s computation %s has shape %s but %s[] is needed", i, an,
             k->name, S(c, p), tr_dtype_name(t));
}

/* Element i of a result that is either one shape or a tuple. */
static const tr_shape *elem_of(const tr_shape *s, int i) {
  return s->dtype == TR_DT_TUPLE ? s->elems[i] : s;
}

/* XLA's VerifyReducerShape: the computation takes n accumulators then n
 * inputs, all scalars, and returns n scalars (a tuple when n > 1).
 * Accumulator i has exactly the type returned at i; init value i and input
 * i must match it up to float precision. The returned types go to acc. */
static bool check_reducer(ictx *c, tr_attr_key key, int n, const tr_dtype *init,
                          const tr_dtype *input, tr_dtype *acc) {
  const tr_comp *k = callee(c, key, 2 * n);
  if (!k) return false;
  const char *an = tr_attrs[key].name;
  const tr_shape *r = k->root->shape;
  int ne = r->dtype == TR_DT_TUPLE ? r->nelems : 1;
  if ((r->dtype != TR_DT_TUPLE && n != 1) || ne != n)
    return bad(c, "%s computation %s must return %d scalar(s) but returns %s", an, k->name, n,
               S(c, r));
  for (int i = 0; i < n; i++)
    if (!is_scalar(elem_of(r, i)))
      return bad(c, "%s computation %s must return scalars but returns %s", an, k->name, S(c, r));
  for (int i = 0; i < n; i++) {
    acc[i] = elem_of(r, i)->dtype;
    if (!scalar_param(c, an, k, i, acc[i])) return false;
    const tr_shape *q = param_shape(k, n + i);
    if (!is_scalar(q) || !same_ignoring_fp(q->dtype, acc[i]))
      return bad(c, "parameter %d of %s computation %s has shape %s but it returns %s", n + i,
                 an, k->name, S(c, q), S(c, r));
    if (!same_ignoring_fp(init[i], acc[i]))
      return bad(c, "init value %d of %s has type %s but %s computation %s accumulates %s", i,
                 c->op, tr_dtype_name(init[i]), an, k->name, tr_dtype_name(acc[i]));
    if (!same_ignoring_fp(input[i], q->dtype))
      return bad(c, "input %d of %s has element type %s but parameter %d of %s computation %s is %s",
                 i, c->op, tr_dtype_name(input[i]), n + i, an, k->name, S(c, q));
  }
  return true;
}

static tr_shape *tuple_of(ictx *c, tr_shape **elems, int n) {
  return n == 1 ? elems[0] : tr_shape_tuple(c->a, n, elems);
}

/* ---- windows ---- */
/* XLA's InferWindowOutputShape for the n window dims over base sizes. */
static bool window_out(ictx *c, const tr_window_dim *w, int n, const int64_t *base,
                       int64_t *out) {
  for (int i = 0; i < n; i++) {
    const tr_window_dim *d = &w[i];
    if (d->size <= 0)
      return bad(c, "%s window dimension %d has size %lld; sizes must be positive", c->op, i,
                 (long long)d->size);
    if (d->stride <= 0)
      return bad(c, "%s window dimension %d has stride %lld; strides must be positive", c->op,
                 i, (long long)d->stride);
    if (d->lhs_dilate < 1 || d->rhs_dilate < 1)
      return bad(c, "%s window dimension %d has dilation %lldx%lld; dilations must be at least 1",
                 c->op, i, (long long)d->lhs_dilate, (long long)d->rhs_dilate);
    if (base[i] < 0) {
      out[i] = -1;
      continue;
    }
    /* Dilating n elements by d gives (n - 1) * d + 1 (0 stays 0). */
    int64_t db = 0, dw, pb;
    if ((base[i] > 0 && (__builtin_mul_overflow(base[i] - 1, d->lhs_dilate, &db) ||
                         __builtin_add_overflow(db, 1, &db))) ||
        __builtin_mul_overflow(d->size - 1, d->rhs_dilate, &dw) ||
        __builtin_add_overflow(dw, 1, &dw) || __builtin_add_overflow(d->pad_lo, d->pad_hi, &pb) ||
        __builtin_add_overflow(pb, db, &pb))
      return bad(c, "%s window dimension %d overflows", c->op, i);
    out[i] = dw > pb ? 0 : (pb - dw) / d->stride + 1;
  }
  return true;
}

/* ---- the rules ---- */
static tr_shape *r_parameter(ictx *c) {
  if (!c->decl) return FAIL("%s needs a declared shape", c->op);
  return clone(c, c->decl);
}

static tr_shape *r_constant(ictx *c) {
  if (!c->decl) return FAIL("constant needs a declared shape");
  const tr_literal *lit = c->in->literal;
  if (lit && lit->shape && !tr_shape_compatible(lit->shape, c->decl))
    return FAIL("constant is declared %s but its literal has shape %s", S(c, c->decl),
                S(c, lit->shape));
  return clone(c, c->decl);
}

static tr_shape *r_iota(ictx *c) {
  const tr_shape *d = want_decl(c);
  const tr_attr *at = need(c, TR_ATTR_IOTA_DIMENSION);
  if (!d || !at) return NULL;
  if (d->rank < 1) return FAIL("iota needs a result of rank 1 or more, not %s", S(c, d));
  if (at->u.i < 0 || at->u.i >= d->rank)
    return FAIL("iota_dimension=%lld is out of range for %s", (long long)at->u.i, S(c, d));
  return clone(c, d);
}

static tr_shape *r_after_all(ictx *c) {
  for (int i = 0; i < nopnds(c); i++)
    if (opnd(c, i)->dtype != TR_DT_TOKEN)
      return FAIL("operand %d of after-all must be a token but has shape %s", i,
                  S(c, opnd(c, i)));
  return new_array(c, TR_DT_TOKEN, 0);
}

/* HLO's broadcast: operand dimension i becomes result dimension
 * dimensions[i]; the result dims come from the declared shape. */
static tr_shape *r_broadcast(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0), *d = want_decl(c);
  if (!d) return NULL;
  const tr_attr *at = attr(c, TR_ATTR_DIMENSIONS);
  int n = at ? at->n : 0;
  const int64_t *v = at ? at->u.ints : NULL;
  if (n != o->rank)
    return FAIL("broadcast dimensions=%s has %d entries but the operand %s has rank %d",
                L(c, v, n), n, S(c, o), o->rank);
  if (!dims_ok(c, "dimensions", v, n, d->rank, false)) return NULL;
  for (int i = 0; i < n; i++)
    if (!dim_eq(o->dims[i], d->dims[v[i]]))
      return FAIL("broadcast maps operand dimension %d (size %lld) to result dimension %lld of size %lld",
                  i, (long long)o->dims[i], (long long)v[i], (long long)d->dims[v[i]]);
  tr_shape *r = new_array(c, o->dtype, d->rank);
  for (int i = 0; i < d->rank; i++) r->dims[i] = d->dims[i];
  return r;
}

static tr_shape *r_reshape(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0), *d = want_decl(c);
  if (!d) return NULL;
  int64_t n1 = count(o), n2 = count(d);
  if (n1 >= 0 && n2 >= 0 && n1 != n2)
    return FAIL("reshape from %s to %s changes the element count from %lld to %lld", S(c, o),
                S(c, d), (long long)n1, (long long)n2);
  tr_shape *r = new_array(c, o->dtype, d->rank);
  for (int i = 0; i < d->rank; i++) r->dims[i] = d->dims[i];
  return r;
}

static int64_t bits_of(const tr_shape *s) {
  int64_t n = count(s), b;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)tr_dtypes[s->dtype].bits, &b)) return -1;
  return b;
}

static tr_shape *r_bitcast(ictx *c) {
  if (!c->decl) return FAIL("bitcast needs a declared shape");
  const tr_shape *o = opnd(c, 0), *d = c->decl;
  if (is_array(o) && is_array(d)) {
    int64_t b1 = bits_of(o), b2 = bits_of(d);
    if (b1 >= 0 && b2 >= 0 && b1 != b2)
      return FAIL("bitcast from %s to %s changes the size from %lld to %lld bits", S(c, o),
                  S(c, d), (long long)b1, (long long)b2);
  }
  return clone(c, d);
}

static tr_shape *r_transpose(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0);
  const tr_attr *at = need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  if (at->n != o->rank)
    return FAIL("transpose dimensions=%s is not a permutation of the %d dimensions of %s",
                L(c, at->u.ints, at->n), o->rank, S(c, o));
  if (!dims_ok(c, "dimensions", at->u.ints, at->n, o->rank, false)) return NULL;
  tr_shape *r = new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[at->u.ints[i]];
  return r;
}

static tr_shape *r_same(ictx *c) {
  const tr_shape *o = opnd(c, 0);
  tr_op op = c->in->op;
  /* XLA accepts abs and sign only for signed (or float) operands. */
  if ((op == TR_OP_ABS || op == TR_OP_SIGN) && (tr_dtypes[o->dtype].kind == TR_DK_UINT))
    return FAIL("%s needs a signed or float operand, not %s", c->op, S(c, o));
  if (op == TR_OP_REDUCE_PRECISION) {
    const tr_attr *e = need(c, TR_ATTR_EXPONENT_BITS), *m = need(c, TR_ATTR_MANTISSA_BITS);
    if (!e || !m) return NULL;
    if (e->u.i < 1) return FAIL("reduce-precision needs exponent_bits >= 1, not %lld", (long long)e->u.i);
    if (m->u.i < 0) return FAIL("reduce-precision needs mantissa_bits >= 0, not %lld", (long long)m->u.i);
  }
  tr_shape *r = clone(c, o);
  /* The magnitude of a complex number is real. */
  if (op == TR_OP_ABS && o->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
  if (op == TR_OP_ABS && o->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
  /* real and imag of a complex number are its component type; of a real
   * number, the same type (the verifier rejects other types). */
  if ((op == TR_OP_REAL || op == TR_OP_IMAG) && o->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
  if ((op == TR_OP_REAL || op == TR_OP_IMAG) && o->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
  return r;
}

static tr_shape *r_convert(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0), *d = want_decl(c);
  if (!d) return NULL;
  if (is_complex(o->dtype) && !is_complex(d->dtype))
    return FAIL("convert from complex %s to real %s is not allowed (use real or imag)", S(c, o),
                tr_dtype_name(d->dtype));
  tr_shape *r = new_array(c, d->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
  return r;
}

/* Equal widths keep the dims; a narrower result gains a minor dimension of
 * the width ratio, a wider one consumes a minor dimension of that size. */
static tr_shape *r_bitcast_convert(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0), *d = want_decl(c);
  if (!d) return NULL;
  int ib = tr_dtypes[o->dtype].bits, ob = tr_dtypes[d->dtype].bits;
  if ((ib > ob ? ib % ob : ob % ib) != 0)
    return FAIL("bitcast-convert from %d-bit %s to %d-bit %s: the widths do not divide", ib,
                S(c, o), ob, tr_dtype_name(d->dtype));
  if (ib == ob) {
    tr_shape *r = new_array(c, d->dtype, o->rank);
    for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
    return r;
  }
  if (ib > ob) {
    tr_shape *r = new_array(c, d->dtype, o->rank + 1);
    for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
    r->dims[o->rank] = ib / ob;
    return r;
  }
  if (o->rank < 1 || !dim_eq(o->dims[o->rank - 1], ob / ib))
    return FAIL("bitcast-convert from %s to the wider %s needs a last dimension of size %d",
                S(c, o), tr_dtype_name(d->dtype), ob / ib);
  tr_shape *r = new_array(c, d->dtype, o->rank - 1);
  for (int i = 0; i < o->rank - 1; i++) r->dims[i] = o->dims[i];
  return r;
}

static tr_shape *r_slice(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0);
  const tr_attr *at = need(c, TR_ATTR_SLICE);
  if (!at) return NULL;
  if (at->n != o->rank)
    return FAIL("slice has %d ranges but the operand %s has rank %d", at->n, S(c, o), o->rank);
  tr_shape *r = new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    const tr_slice_dim *s = &at->u.slice[i];
    int64_t dim = o->dims[i];
    if (s->stride < 1)
      return FAIL("slice dimension %d has stride %lld; strides must be positive", i, (long long)s->stride);
    if (s->start < 0 || s->start > s->limit || (dim >= 0 && s->limit > dim))
      return FAIL("slice dimension %d: [%lld:%lld] is not within [0:%lld] of %s", i,
                  (long long)s->start, (long long)s->limit, (long long)dim, S(c, o));
    r->dims[i] = (s->limit - s->start) / s->stride + ((s->limit - s->start) % s->stride != 0);
  }
  return r;
}

static tr_shape *r_dynamic_slice(ictx *c) {
  if (!min_operands(c, 1) || !want_array(c, 0)) return NULL;
  const tr_shape *o = opnd(c, 0);
  if (!start_indices_ok(c, 1, o->rank)) return NULL;
  const tr_attr *at = need(c, TR_ATTR_DYNAMIC_SLICE_SIZES);
  if (!at) return NULL;
  if (at->n != o->rank)
    return FAIL("dynamic_slice_sizes=%s has %d entries but the operand %s has rank %d",
                L(c, at->u.ints, at->n), at->n, S(c, o), o->rank);
  tr_shape *r = new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    int64_t s = at->u.ints[i];
    if (s < 0 || (o->dims[i] >= 0 && s > o->dims[i]))
      return FAIL("dynamic-slice size %lld of dimension %d is not within [0, %lld] of %s",
                  (long long)s, i, (long long)o->dims[i], S(c, o));
    r->dims[i] = s;
  }
  return r;
}

static tr_shape *r_dynamic_update_slice(ictx *c) {
  if (!min_operands(c, 2) || !want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = opnd(c, 0), *u = opnd(c, 1);
  if (u->rank != o->rank || u->dtype != o->dtype)
    return FAIL("update %s of dynamic-update-slice must have the rank and type of operand %s",
                S(c, u), S(c, o));
  for (int i = 0; i < o->rank; i++)
    if (u->dims[i] >= 0 && o->dims[i] >= 0 && u->dims[i] > o->dims[i])
      return FAIL("update %s of dynamic-update-slice is larger than operand %s in dimension %d",
                  S(c, u), S(c, o), i);
  if (!start_indices_ok(c, 2, o->rank)) return NULL;
  return clone(c, o);
}

static tr_shape *r_concatenate(ictx *c) {
  if (!min_operands(c, 1) || !want_arrays(c, 0, nopnds(c))) return NULL;
  const tr_attr *at = need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  const tr_shape *o = opnd(c, 0);
  if (at->n != 1)
    return FAIL("concatenate needs exactly one dimension, not dimensions=%s", L(c, at->u.ints, at->n));
  int64_t d = at->u.ints[0];
  if (d < 0 || d >= o->rank)
    return FAIL("concatenate dimension %lld is out of range for %s", (long long)d, S(c, o));
  tr_shape *r = clone(c, o);
  for (int i = 1; i < nopnds(c); i++) {
    const tr_shape *x = opnd(c, i);
    if (x->rank != o->rank || x->dtype != o->dtype)
      return FAIL("operand %d of concatenate has shape %s but operand 0 has %s", i, S(c, x), S(c, o));
    for (int k = 0; k < o->rank; k++)
      if (k != d && !dim_eq(x->dims[k], o->dims[k]))
        return FAIL("operand %d of concatenate has shape %s but operand 0 has %s; only dimension %lld may differ",
                    i, S(c, x), S(c, o), (long long)d);
    if (r->dims[d] < 0 || x->dims[d] < 0) r->dims[d] = -1;
    else if (__builtin_add_overflow(r->dims[d], x->dims[d], &r->dims[d]))
      return FAIL("concatenate result size overflows");
  }
  return r;
}

static tr_shape *r_pad(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = opnd(c, 0), *pv = opnd(c, 1);
  if (pv->rank != 0) return FAIL("padding value of pad must be a scalar but has shape %s", S(c, pv));
  if (pv->dtype != o->dtype)
    return FAIL("padding value %s of pad must have the element type of operand %s", S(c, pv), S(c, o));
  const tr_attr *at = need(c, TR_ATTR_PADDING);
  if (!at) return NULL;
  if (at->n != o->rank)
    return FAIL("padding has %d dimensions but the operand %s has rank %d", at->n, S(c, o), o->rank);
  tr_shape *r = new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    const tr_pad_dim *p = &at->u.pad[i];
    int64_t dim = o->dims[i], size, in;
    if (p->interior < 0)
      return FAIL("pad dimension %d has interior padding %lld; it cannot be negative", i, (long long)p->interior);
    if (dim < 0) {
      r->dims[i] = -1;
      continue;
    }
    if (__builtin_mul_overflow(dim > 0 ? dim - 1 : 0, p->interior, &in) ||
        __builtin_add_overflow(dim, in, &size) || __builtin_add_overflow(size, p->lo, &size) ||
        __builtin_add_overflow(size, p->hi, &size))
      return FAIL("pad dimension %d overflows", i);
    if (size < 0)
      return FAIL("pad gives dimension %d of %s the negative size %lld", i, S(c, o), (long long)size);
    r->dims[i] = size;
  }
  return r;
}

static tr_shape *r_reverse(ictx *c) {
  if (!want_array(c, 0)) return NULL;
  const tr_attr *at = need(c, TR_ATTR_DIMENSIONS);
  if (!at || !dims_ok(c, "dimensions", at->u.ints, at->n, opnd(c, 0)->rank, false)) return NULL;
  return clone(c, opnd(c, 0));
}

/* Index vector dim of gather/scatter and the indices' dims with the
 * implicit trailing 1 when index_vector_dim equals their rank. */
static int64_t *expand_indices(ictx *c, const tr_shape *idx, int64_t ivd, int *er) {
  if (ivd < 0 || ivd > idx->rank) {
    bad(c, "%s index_vector_dim=%lld is out of range for indices %s", c->op, (long long)ivd, S(c, idx));
    return NULL;
  }
  *er = idx->rank + (ivd == idx->rank);
  int64_t *ed = scratch_ints(c, *er);
  for (int i = 0; i < idx->rank; i++) ed[i] = idx->dims[i];
  if (ivd == idx->rank) ed[idx->rank] = 1;
  return ed;
}

/* Batching dims shared by gather and scatter: the operand side sorted and
 * unique, the indices side unique and not the index vector dim, pairwise of
 * equal size. */
static bool batching_ok(ictx *c, const char *on, const int64_t *ob, int nob, const char *in,
                        const int64_t *ib, int nib, const tr_shape *o, const tr_shape *idx,
                        int64_t ivd) {
  if (!dims_ok(c, on, ob, nob, o->rank, true) || !dims_ok(c, in, ib, nib, idx->rank, false))
    return false;
  if (tr_ints_has(ib, nib, ivd))
    return bad(c, "%s %s=%s contains index_vector_dim %lld", c->op, in, L(c, ib, nib), (long long)ivd);
  if (nob != nib)
    return bad(c, "%s %s=%s and %s=%s must have the same length", c->op, on, L(c, ob, nob), in,
               L(c, ib, nib));
  for (int i = 0; i < nob; i++)
    if (!dim_eq(o->dims[ob[i]], idx->dims[ib[i]]))
      return bad(c, "%s batching dimension %lld of %s and dimension %lld of indices %s differ in size",
                 c->op, (long long)ob[i], S(c, o), (long long)ib[i], S(c, idx));
  return true;
}

static tr_shape *r_gather(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = opnd(c, 0), *idx = opnd(c, 1);
  if (!is_int(idx->dtype))
    return FAIL("start indices of gather must be integers but have shape %s", S(c, idx));
  const tr_attr *a_off = need(c, TR_ATTR_OFFSET_DIMS), *a_col = need(c, TR_ATTR_COLLAPSED_SLICE_DIMS),
                *a_map = need(c, TR_ATTR_START_INDEX_MAP), *a_ivd = need(c, TR_ATTR_INDEX_VECTOR_DIM),
                *a_ss = need(c, TR_ATTR_SLICE_SIZES);
  if (!a_off || !a_col || !a_map || !a_ivd || !a_ss) return NULL;
  int noff = a_off->n, ncol = a_col->n, nmap = a_map->n, nss = a_ss->n, nob, nib, er;
  const int64_t *off = a_off->u.ints, *col = a_col->u.ints, *map = a_map->u.ints, *ss = a_ss->u.ints;
  const int64_t *ob = ints(c, TR_ATTR_OPERAND_BATCHING_DIMS, &nob);
  const int64_t *ib = ints(c, TR_ATTR_START_INDICES_BATCHING_DIMS, &nib);
  int64_t ivd = a_ivd->u.i;
  int64_t *ed = expand_indices(c, idx, ivd, &er);
  if (!ed) return NULL;
  if (noff + ncol + nob != o->rank)
    return FAIL("gather offset_dims (%d), collapsed_slice_dims (%d) and operand_batching_dims (%d) "
                "must add up to the operand rank %d", noff, ncol, nob, o->rank);
  int rr = noff + er - 1;
  if (!dims_ok(c, "offset_dims", off, noff, rr, true) ||
      !dims_ok(c, "collapsed_slice_dims", col, ncol, o->rank, true) ||
      !batching_ok(c, "operand_batching_dims", ob, nob, "start_indices_batching_dims", ib, nib, o, idx, ivd) ||
      !disjoint(c, "collapsed_slice_dims", col, ncol, "operand_batching_dims", ob, nob) ||
      !dims_ok(c, "start_index_map", map, nmap, o->rank, false) ||
      !disjoint(c, "start_index_map", map, nmap, "operand_batching_dims", ob, nob))
    return NULL;
  if (!dim_eq(nmap, ed[ivd]))
    return FAIL("gather start_index_map=%s has %d entries but dimension %lld of indices %s has size %lld",
                L(c, map, nmap), nmap, (long long)ivd, S(c, idx), (long long)ed[ivd]);
  if (nss != o->rank)
    return FAIL("gather slice_sizes=%s has %d entries but the operand %s has rank %d", L(c, ss, nss),
                nss, S(c, o), o->rank);
  for (int i = 0; i < nss; i++) {
    if (ss[i] < 0 || (o->dims[i] >= 0 && ss[i] > o->dims[i]))
      return FAIL("gather slice size %lld of dimension %d is not within [0, %lld] of %s",
                  (long long)ss[i], i, (long long)o->dims[i], S(c, o));
    if ((tr_ints_has(col, ncol, i) || tr_ints_has(ob, nob, i)) && ss[i] > 1)
      return FAIL("gather slice size of collapsed or batching dimension %d must be 0 or 1, not %lld",
                  i, (long long)ss[i]);
  }
  tr_shape *r = new_array(c, o->dtype, rr);
  int si = 0, bi = 0;
  for (int i = 0; i < rr; i++) {
    if (tr_ints_has(off, noff, i)) {
      while (tr_ints_has(col, ncol, si) || tr_ints_has(ob, nob, si)) si++;
      r->dims[i] = ss[si++];
    } else {
      if (bi == ivd) bi++;
      r->dims[i] = ed[bi++];
    }
  }
  return r;
}

static tr_shape *r_scatter(ictx *c) {
  int n = nopnds(c);
  if (n < 3 || n % 2 == 0)
    return FAIL("scatter needs N inputs, the indices and N updates (an odd count of at least 3), not %d operands", n);
  int nin = (n - 1) / 2;
  if (!want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = opnd(c, 0), *idx = opnd(c, nin), *u = opnd(c, nin + 1);
  for (int i = 1; i < nin; i++)
    if (!same_dims(opnd(c, i), o))
      return FAIL("input %d of scatter has shape %s but input 0 has %s", i, S(c, opnd(c, i)), S(c, o));
  for (int i = 0; i < nin; i++) {
    const tr_shape *ui = opnd(c, nin + 1 + i);
    if (!same_dims(ui, u))
      return FAIL("update %d of scatter has shape %s but update 0 has %s", i, S(c, ui), S(c, u));
    if (ui->dtype != opnd(c, i)->dtype)
      return FAIL("update %d of scatter has shape %s but input %d has element type %s", i, S(c, ui),
                  i, tr_dtype_name(opnd(c, i)->dtype));
  }
  if (!is_int(idx->dtype))
    return FAIL("scatter indices must be integers but have shape %s", S(c, idx));
  const tr_attr *a_uw = need(c, TR_ATTR_UPDATE_WINDOW_DIMS), *a_iw = need(c, TR_ATTR_INSERTED_WINDOW_DIMS),
                *a_sd = need(c, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS), *a_ivd = need(c, TR_ATTR_INDEX_VECTOR_DIM);
  if (!a_uw || !a_iw || !a_sd || !a_ivd) return NULL;
  int nuw = a_uw->n, niw = a_iw->n, nsd = a_sd->n, nib, nsb, er;
  const int64_t *uw = a_uw->u.ints, *iw = a_iw->u.ints, *sd = a_sd->u.ints;
  const int64_t *ib = ints(c, TR_ATTR_INPUT_BATCHING_DIMS, &nib);
  const int64_t *sb = ints(c, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, &nsb);
  int64_t ivd = a_ivd->u.i;
  int64_t *ed = expand_indices(c, idx, ivd, &er);
  if (!ed) return NULL;
  if (nuw + niw + nib != o->rank)
    return FAIL("scatter update_window_dims (%d), inserted_window_dims (%d) and input_batching_dims (%d) "
                "must add up to the input rank %d", nuw, niw, nib, o->rank);
  if (u->rank != er - 1 + nuw)
    return FAIL("updates of scatter must have rank %d but %s has rank %d", er - 1 + nuw, S(c, u), u->rank);
  if (!dims_ok(c, "update_window_dims", uw, nuw, u->rank, true) ||
      !dims_ok(c, "inserted_window_dims", iw, niw, o->rank, true) ||
      !batching_ok(c, "input_batching_dims", ib, nib, "scatter_indices_batching_dims", sb, nsb, o, idx, ivd) ||
      !disjoint(c, "inserted_window_dims", iw, niw, "input_batching_dims", ib, nib) ||
      !dims_ok(c, "scatter_dims_to_operand_dims", sd, nsd, o->rank, false) ||
      !disjoint(c, "scatter_dims_to_operand_dims", sd, nsd, "input_batching_dims", ib, nib))
    return NULL;
  if (!dim_eq(nsd, ed[ivd]))
    return FAIL("scatter_dims_to_operand_dims=%s has %d entries but dimension %lld of indices %s has size %lld",
                L(c, sd, nsd), nsd, (long long)ivd, S(c, idx), (long long)ed[ivd]);
  /* Window dims of the updates follow the input dims that are neither
   * inserted nor batching, in order, and may not exceed them. */
  for (int d = 0, k = 0; d < o->rank; d++) {
    if (tr_ints_has(iw, niw, d) || tr_ints_has(ib, nib, d)) continue;
    int64_t us = u->dims[uw[k]];
    if (us >= 0 && o->dims[d] >= 0 && us > o->dims[d])
      return FAIL("update window dimension %lld of %s (size %lld) exceeds dimension %d of input %s",
                  (long long)uw[k], S(c, u), (long long)us, d, S(c, o));
    k++;
  }
  for (int i = 0, bi = 0; i < u->rank; i++) {
    if (tr_ints_has(uw, nuw, i)) continue;
    if (bi == ivd) bi++;
    if (!dim_eq(u->dims[i], ed[bi]))
      return FAIL("scatter dimension %d of updates %s has size %lld but the indices %s give %lld", i,
                  S(c, u), (long long)u->dims[i], S(c, idx), (long long)ed[bi]);
    bi++;
  }
  tr_dtype *ti = tr_arena_alloc(c->a, sizeof(tr_dtype) * (size_t)nin * 3);
  for (int i = 0; i < nin; i++) {
    ti[i] = opnd(c, i)->dtype;
    ti[nin + i] = opnd(c, nin + 1 + i)->dtype;
  }
  if (!check_reducer(c, TR_ATTR_TO_APPLY, nin, ti, ti + nin, ti + 2 * nin)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) el[i] = clone(c, opnd(c, i));
  return tuple_of(c, el, nin);
}

static tr_shape *r_select(ictx *c) {
  if (!want_arrays(c, 0, 3)) return NULL;
  const tr_shape *p = opnd(c, 0), *t = opnd(c, 1), *f = opnd(c, 2);
  if (p->dtype != TR_DT_PRED)
    return FAIL("predicate of select must be pred but has shape %s", S(c, p));
  if (!tr_shape_compatible(t, f))
    return FAIL("on_true %s and on_false %s of select must have the same shape", S(c, t), S(c, f));
  if (p->rank != 0 && !same_dims(p, t))
    return FAIL("predicate %s of select must be a scalar or match the dims of %s", S(c, p), S(c, t));
  return clone(c, t);
}

static tr_shape *r_clamp(ictx *c) {
  const tr_shape *lo = opnd(c, 0), *x = opnd(c, 1), *hi = opnd(c, 2);
  if (!(tr_shape_compatible(lo, x) || (lo->rank == 0 && lo->dtype == x->dtype)))
    return FAIL("min %s of clamp must be a scalar or have the shape of operand %s", S(c, lo), S(c, x));
  if (!(tr_shape_compatible(hi, x) || (hi->rank == 0 && hi->dtype == x->dtype)))
    return FAIL("max %s of clamp must be a scalar or have the shape of operand %s", S(c, hi), S(c, x));
  return clone(c, x);
}

/* Comparison types XLA accepts for an element type. */
static bool cmp_type_ok(const char *ty, tr_dtype t) {
  if (is_float(t) || is_complex(t)) return strcmp(ty, "FLOAT") == 0 || strcmp(ty, "TOTALORDER") == 0;
  if (tr_dtypes[t].kind == TR_DK_SINT) return strcmp(ty, "SIGNED") == 0;
  return strcmp(ty, "UNSIGNED") == 0;
}


static tr_shape *r_compare(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = opnd(c, 0), *y = opnd(c, 1);
  if (!tr_shape_compatible(x, y))
    return FAIL("operand 1 of compare has shape %s but operand 0 has %s", S(c, y), S(c, x));
  const tr_attr *dir = need(c, TR_ATTR_DIRECTION), *ty = attr(c, TR_ATTR_TYPE);
  if (!dir) return NULL;
  if (!tr_attr_value_allowed(tr_attrs[TR_ATTR_DIRECTION].allowed, dir->u.s))
    return FAIL("compare direction=%s is not one of %s", dir->u.s, tr_attrs[TR_ATTR_DIRECTION].allowed);
  if (ty && !cmp_type_ok(ty->u.s, x->dtype))
    return FAIL("compare type=%s does not fit element type %s", ty->u.s, tr_dtype_name(x->dtype));
  tr_shape *r = clone(c, x);
  r->dtype = TR_DT_PRED;
  return r;
}

static tr_shape *r_is_finite(ictx *c) {
  if (!is_float(opnd(c, 0)->dtype))
    return FAIL("is-finite needs a float operand, not %s", S(c, opnd(c, 0)));
  tr_shape *r = clone(c, opnd(c, 0));
  r->dtype = TR_DT_PRED;
  return r;
}

static tr_shape *r_binary(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = opnd(c, 0), *y = opnd(c, 1);
  if (!tr_shape_compatible(x, y))
    return FAIL("operand 1 of %s has shape %s but operand 0 has %s", c->op, S(c, y), S(c, x));
  return clone(c, x);
}

/* N inputs then N scalar init values, shared by reduce and reduce-window;
 * fills the reducer's types. */
static bool reduce_operands(ictx *c, int *nin, tr_dtype **acc) {
  int n = nopnds(c);
  if (n < 2 || n % 2)
    return bad(c, "%s needs N inputs and N init values (an even count of at least 2), not %d operands", c->op, n);
  *nin = n / 2;
  if (!want_arrays(c, 0, n)) return false;
  const tr_shape *o = opnd(c, 0);
  for (int i = 1; i < *nin; i++)
    if (!same_dims(opnd(c, i), o))
      return bad(c, "input %d of %s has shape %s but input 0 has %s", i, c->op, S(c, opnd(c, i)), S(c, o));
  for (int i = *nin; i < n; i++)
    if (!want_scalar(c, i, "init value")) return false;
  tr_dtype *t = tr_arena_alloc(c->a, sizeof(tr_dtype) * (size_t)n * 2);
  for (int i = 0; i < *nin; i++) {
    t[i] = opnd(c, *nin + i)->dtype; /* init */
    t[*nin + i] = opnd(c, i)->dtype; /* input */
  }
  *acc = t + n;
  return check_reducer(c, TR_ATTR_TO_APPLY, *nin, t, t + *nin, *acc);
}

static tr_shape *r_reduce(ictx *c) {
  int nin;
  tr_dtype *acc;
  const tr_attr *at = need(c, TR_ATTR_DIMENSIONS);
  if (!at || !reduce_operands(c, &nin, &acc)) return NULL;
  const tr_shape *o = opnd(c, 0);
  if (!dims_ok(c, "dimensions", at->u.ints, at->n, o->rank, false)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    el[i] = new_array(c, acc[i], o->rank - at->n);
    for (int d = 0, k = 0; d < o->rank; d++)
      if (!tr_ints_has(at->u.ints, at->n, d)) el[i]->dims[k++] = opnd(c, i)->dims[d];
  }
  return tuple_of(c, el, nin);
}

static tr_shape *r_reduce_window(ictx *c) {
  int nin;
  tr_dtype *acc;
  if (!reduce_operands(c, &nin, &acc)) return NULL;
  const tr_shape *o = opnd(c, 0);
  const tr_attr *w = attr(c, TR_ATTR_WINDOW);
  int nw = w ? w->n : 0;
  if (nw != o->rank)
    return FAIL("window of reduce-window has %d dimensions but the input %s has rank %d", nw, S(c, o), o->rank);
  int64_t *out = scratch_ints(c, o->rank);
  if (!window_out(c, w ? w->u.win : NULL, nw, o->dims, out)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    el[i] = new_array(c, acc[i], o->rank);
    for (int d = 0; d < o->rank; d++) el[i]->dims[d] = out[d];
  }
  return tuple_of(c, el, nin);
}

static tr_shape *r_select_and_scatter(ictx *c) {
  if (!want_arrays(c, 0, 3)) return NULL;
  const tr_shape *o = opnd(c, 0), *src = opnd(c, 1);
  if (!want_scalar(c, 2, "init value")) return NULL;
  const tr_attr *w = attr(c, TR_ATTR_WINDOW);
  int nw = w ? w->n : 0;
  if (nw != o->rank)
    return FAIL("window of select-and-scatter has %d dimensions but the operand %s has rank %d", nw,
                S(c, o), o->rank);
  tr_shape *ws = new_array(c, o->dtype, o->rank);
  if (!window_out(c, w ? w->u.win : NULL, nw, o->dims, ws->dims)) return NULL;
  if (!same_dims(src, ws) || !same_ignoring_fp(src->dtype, o->dtype))
    return FAIL("source %s of select-and-scatter must have the window-reduced operand shape %s",
                S(c, src), S(c, ws));
  const tr_comp *sel = callee(c, TR_ATTR_SELECT, 2);
  if (!sel || !scalar_param(c, "select", sel, 0, o->dtype) ||
      !scalar_param(c, "select", sel, 1, o->dtype))
    return NULL;
  if (!is_scalar(sel->root->shape) || sel->root->shape->dtype != TR_DT_PRED)
    return FAIL("select computation %s must return pred[] but returns %s", sel->name,
                S(c, sel->root->shape));
  tr_dtype init = opnd(c, 2)->dtype, acc;
  if (!check_reducer(c, TR_ATTR_SCATTER, 1, &init, &src->dtype, &acc)) return NULL;
  return clone(c, o);
}

/* Operand types of dot and convolution: XLA does not compare them (bf16 x
 * s4 weights, f32 x pred masks occur in real dumps); only arrays are
 * required. The result type is the declared, preferred one. */
static bool contraction_types(ictx *c, const tr_shape *x, const tr_shape *y) {
  if (is_array(x) && is_array(y)) return true;
  return bad(c, "operands of %s must be arrays, not %s and %s", c->op, S(c, x), S(c, y));
}

/* The result element type: the declared (preferred) one, else the wider
 * operand type. Integers may not be narrowed (XLA's MaybeUpcast). */
static bool contraction_dtype(ictx *c, const tr_shape *x, const tr_shape *y, tr_dtype *out) {
  tr_dtype hi = tr_dtypes[y->dtype].bits > tr_dtypes[x->dtype].bits ? y->dtype : x->dtype;
  if (!c->decl || !is_array(c->decl)) {
    *out = hi;
    return true;
  }
  *out = c->decl->dtype;
  if (*out != hi && !is_float(hi) && tr_dtypes[*out].bits < tr_dtypes[hi].bits)
    return bad(c, "%s result type %s is narrower than its operand type %s", c->op,
               tr_dtype_name(*out), tr_dtype_name(hi));
  return true;
}

/* A sparse dot's operand holds n of every m values along one dimension
 * (sparsity=L.1@2:4 for lhs dimension 1); its logical size is m/n times
 * the stored one. Returns the logical shape. */
static const tr_shape *sparse_logical(ictx *c, const tr_shape *s, char side) {
  const tr_instr *in = c->in;
  for (int i = 0; i < in->nattrs; i++) {
    if (in->attrs[i].key != TR_ATTR_RAW || strcmp(in->attrs[i].name, "sparsity") != 0) continue;
    const char *p = in->attrs[i].u.s;
    while (*p) {
      long long dim, n, m;
      if (sscanf(p, "%*c.%lld@%lld:%lld", &dim, &n, &m) == 3 && *p == side && dim >= 0 &&
          dim < s->rank && n > 0 && m > 0 && s->dims[dim] >= 0) {
        tr_shape *t = clone(c, s);
        t->dims[dim] = s->dims[dim] / n * m;
        s = t;
      }
      const char *u = strchr(p, '_');
      if (!u) break;
      p = u + 1;
    }
  }
  return s;
}

static tr_shape *r_dot(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = sparse_logical(c, opnd(c, 0), 'L'), *y = sparse_logical(c, opnd(c, 1), 'R');
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = ints(c, TR_ATTR_LHS_BATCH_DIMS, &nlb), *lc = ints(c, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = ints(c, TR_ATTR_RHS_BATCH_DIMS, &nrb), *rc = ints(c, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  tr_dtype dt;
  if (!contraction_types(c, x, y) || !contraction_dtype(c, x, y, &dt)) return NULL;
  if (nlb != nrb)
    return FAIL("dot lhs_batch_dims=%s and rhs_batch_dims=%s must have the same length", L(c, lb, nlb), L(c, rb, nrb));
  if (nlc != nrc)
    return FAIL("dot lhs_contracting_dims=%s and rhs_contracting_dims=%s must have the same length",
                L(c, lc, nlc), L(c, rc, nrc));
  if (!dims_ok(c, "lhs_batch_dims", lb, nlb, x->rank, false) ||
      !dims_ok(c, "lhs_contracting_dims", lc, nlc, x->rank, false) ||
      !dims_ok(c, "rhs_batch_dims", rb, nrb, y->rank, false) ||
      !dims_ok(c, "rhs_contracting_dims", rc, nrc, y->rank, false) ||
      !disjoint(c, "lhs_batch_dims", lb, nlb, "lhs_contracting_dims", lc, nlc) ||
      !disjoint(c, "rhs_batch_dims", rb, nrb, "rhs_contracting_dims", rc, nrc))
    return NULL;
  for (int i = 0; i < nlb; i++)
    if (!dim_eq(x->dims[lb[i]], y->dims[rb[i]]))
      return FAIL("dot batch dimension %lld of lhs %s and %lld of rhs %s differ in size",
                  (long long)lb[i], S(c, x), (long long)rb[i], S(c, y));
  for (int i = 0; i < nlc; i++)
    if (!dim_eq(x->dims[lc[i]], y->dims[rc[i]]))
      return FAIL("dot contracting dimension %lld of lhs %s and %lld of rhs %s differ in size",
                  (long long)lc[i], S(c, x), (long long)rc[i], S(c, y));
  tr_shape *r = new_array(c, dt, x->rank + y->rank - nlb - 2 * nlc);
  int k = 0;
  for (int i = 0; i < nlb; i++) r->dims[k++] = x->dims[lb[i]];
  for (int i = 0; i < x->rank; i++)
    if (!tr_ints_has(lb, nlb, i) && !tr_ints_has(lc, nlc, i)) r->dims[k++] = x->dims[i];
  for (int i = 0; i < y->rank; i++)
    if (!tr_ints_has(rb, nrb, i) && !tr_ints_has(rc, nrc, i)) r->dims[k++] = y->dims[i];
  return r;
}

/* Positions of one side of dim_labels must be a permutation of 0..rank-1. */
static bool conv_perm(ictx *c, const char *side, int64_t a, int64_t b, const int64_t *sp, int ns) {
  int rank = ns + 2;
  int64_t *v = scratch_ints(c, rank);
  v[0] = a;
  v[1] = b;
  for (int i = 0; i < ns; i++) v[2 + i] = sp[i];
  for (int i = 0; i < rank; i++) {
    if (v[i] < 0 || v[i] >= rank || tr_ints_has(v, i, v[i]))
      return bad(c, "convolution dim_labels: the %s dimensions are not a permutation of 0..%d", side, rank - 1);
  }
  return true;
}

static tr_shape *r_convolution(ictx *c) {
  if (!want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = opnd(c, 0), *k = opnd(c, 1);
  const tr_attr *dl = need(c, TR_ATTR_DIM_LABELS), *w = attr(c, TR_ATTR_WINDOW);
  const tr_attr *fg = attr(c, TR_ATTR_FEATURE_GROUP_COUNT), *bg = attr(c, TR_ATTR_BATCH_GROUP_COUNT);
  if (!dl) return NULL;
  const tr_convdims *cd = dl->u.conv;
  int ns = cd->nspatial, nw = w ? w->n : 0;
  int64_t fgc = fg ? fg->u.i : 1, bgc = bg ? bg->u.i : 1;
  tr_dtype dt;
  if (!contraction_types(c, x, k) || !contraction_dtype(c, x, k, &dt)) return NULL;
  if (fgc <= 0) return FAIL("feature_group_count must be positive, not %lld", (long long)fgc);
  if (bgc <= 0) return FAIL("batch_group_count must be positive, not %lld", (long long)bgc);
  if (fgc > 1 && bgc > 1)
    return FAIL("feature_group_count %lld and batch_group_count %lld cannot both exceed 1",
                (long long)fgc, (long long)bgc);
  if (nw != ns)
    return FAIL("convolution window has %d dimensions but dim_labels has %d spatial dimensions", nw, ns);
  if (x->rank != ns + 2)
    return FAIL("lhs %s of convolution must have rank %d", S(c, x), ns + 2);
  if (k->rank != ns + 2)
    return FAIL("kernel %s of convolution must have rank %d", S(c, k), ns + 2);
  if (!conv_perm(c, "input", cd->in_batch, cd->in_feature, cd->in_spatial, ns) ||
      !conv_perm(c, "kernel", cd->k_in, cd->k_out, cd->k_spatial, ns) ||
      !conv_perm(c, "output", cd->out_batch, cd->out_feature, cd->out_spatial, ns))
    return NULL;
  int64_t batch = x->dims[cd->in_batch], feat = x->dims[cd->in_feature];
  int64_t kin = k->dims[cd->k_in], kout = k->dims[cd->k_out];
  if (kout >= 0 && kout % bgc)
    return FAIL("kernel output features %lld of convolution must be a multiple of batch_group_count %lld",
                (long long)kout, (long long)bgc);
  if (feat >= 0 && kin >= 0 && (feat % fgc || feat / fgc != kin))
    return FAIL("convolution input features %lld must be feature_group_count %lld times the kernel input features %lld",
                (long long)feat, (long long)fgc, (long long)kin);
  if (kout >= 0 && kout % fgc)
    return FAIL("kernel output features %lld of convolution must be a multiple of feature_group_count %lld",
                (long long)kout, (long long)fgc);
  if (batch >= 0 && batch % bgc)
    return FAIL("convolution input batch %lld must be a multiple of batch_group_count %lld",
                (long long)batch, (long long)bgc);
  int64_t *base = scratch_ints(c, ns), *out = scratch_ints(c, ns);
  for (int i = 0; i < ns; i++) {
    base[i] = x->dims[cd->in_spatial[i]];
    if (!dim_eq(w->u.win[i].size, k->dims[cd->k_spatial[i]]))
      return FAIL("convolution window size %lld of spatial dimension %d does not match kernel %s",
                  (long long)w->u.win[i].size, i, S(c, k));
  }
  if (!window_out(c, w ? w->u.win : NULL, ns, base, out)) return NULL;
  tr_shape *r = new_array(c, dt, ns + 2);
  r->dims[cd->out_batch] = batch < 0 ? -1 : batch / bgc;
  r->dims[cd->out_feature] = kout;
  for (int i = 0; i < ns; i++) r->dims[cd->out_spatial[i]] = out[i];
  return r;
}

static tr_shape *r_sort(ictx *c) {
  int n = nopnds(c);
  if (!min_operands(c, 1) || !want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = opnd(c, 0);
  for (int i = 1; i < n; i++)
    if (!same_dims(opnd(c, i), o))
      return FAIL("operand %d of sort has shape %s but operand 0 has %s", i, S(c, opnd(c, i)), S(c, o));
  const tr_attr *at = need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  if (at->n != 1)
    return FAIL("sort needs exactly one dimension, not dimensions=%s", L(c, at->u.ints, at->n));
  if (at->u.ints[0] < 0 || at->u.ints[0] >= o->rank)
    return FAIL("sort dimension %lld is out of range for %s", (long long)at->u.ints[0], S(c, o));
  const tr_comp *k = callee(c, TR_ATTR_TO_APPLY, 2 * n);
  if (!k) return NULL;
  for (int i = 0; i < n; i++)
    if (!scalar_param(c, "to_apply", k, 2 * i, opnd(c, i)->dtype) ||
        !scalar_param(c, "to_apply", k, 2 * i + 1, opnd(c, i)->dtype))
      return NULL;
  if (!is_scalar(k->root->shape) || k->root->shape->dtype != TR_DT_PRED)
    return FAIL("sort comparator %s must return pred[] but returns %s", k->name, S(c, k->root->shape));
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)n);
  for (int i = 0; i < n; i++) el[i] = clone(c, opnd(c, i));
  return tuple_of(c, el, n);
}

static tr_shape *r_topk(ictx *c) {
  const tr_shape *o = opnd(c, 0);
  const tr_attr *at = need(c, TR_ATTR_K);
  if (!at) return NULL;
  if (o->rank < 1) return FAIL("topk needs an operand of rank 1 or more, not %s", S(c, o));
  int64_t last = o->dims[o->rank - 1];
  if (at->u.i < 0 || (last >= 0 && at->u.i > last))
    return FAIL("topk k=%lld is not within [0, %lld] of %s", (long long)at->u.i, (long long)last, S(c, o));
  tr_shape *el[2] = {clone(c, o), clone(c, o)};
  el[0]->dims[o->rank - 1] = el[1]->dims[o->rank - 1] = at->u.i;
  el[1]->dtype = TR_DT_S32;
  return tr_shape_tuple(c->a, 2, el);
}

static tr_shape *r_cholesky(ictx *c) {
  const tr_shape *o = opnd(c, 0);
  if (o->rank < 2 || !dim_eq(o->dims[o->rank - 1], o->dims[o->rank - 2]))
    return FAIL("cholesky needs square matrices [..., n, n], not %s", S(c, o));
  return clone(c, o);
}

static tr_shape *r_triangular_solve(ictx *c) {
  const tr_shape *a = opnd(c, 0), *b = opnd(c, 1);
  const tr_attr *ls = attr(c, TR_ATTR_LEFT_SIDE);
  bool left = ls && ls->u.b;
  int r = a->rank;
  if (a->dtype != b->dtype)
    return FAIL("operands %s and %s of triangular-solve must have one element type", S(c, a), S(c, b));
  if (r < 2 || !dim_eq(a->dims[r - 1], a->dims[r - 2]))
    return FAIL("a of triangular-solve must be square matrices [..., m, m], not %s", S(c, a));
  if (b->rank != r)
    return FAIL("b %s of triangular-solve must have the rank of a %s", S(c, b), S(c, a));
  for (int i = 0; i < r - 2; i++)
    if (!dim_eq(a->dims[i], b->dims[i]))
      return FAIL("batch dimension %d of triangular-solve operands %s and %s differ", i, S(c, a), S(c, b));
  if (!dim_eq(b->dims[left ? r - 2 : r - 1], a->dims[r - 1]))
    return FAIL("b %s of triangular-solve must be %s for a %s", S(c, b),
                left ? "[..., m, n]" : "[..., n, m]", S(c, a));
  return clone(c, b);
}

static tr_shape *r_while(ictx *c) {
  const tr_shape *s = opnd(c, 0);
  const tr_comp *cond = callee(c, TR_ATTR_CONDITION, 1), *body = cond ? callee(c, TR_ATTR_BODY, 1) : NULL;
  if (!body) return NULL;
  if (!tr_shape_compatible(param_shape(cond, 0), s))
    return FAIL("condition computation %s takes %s but the while operand is %s", cond->name,
                S(c, param_shape(cond, 0)), S(c, s));
  if (!is_scalar(cond->root->shape) || cond->root->shape->dtype != TR_DT_PRED)
    return FAIL("condition computation %s must return pred[] but returns %s", cond->name,
                S(c, cond->root->shape));
  if (!tr_shape_compatible(param_shape(body, 0), s))
    return FAIL("body computation %s takes %s but the while operand is %s", body->name,
                S(c, param_shape(body, 0)), S(c, s));
  if (!tr_shape_compatible(body->root->shape, s))
    return FAIL("body computation %s returns %s but the while operand is %s", body->name,
                S(c, body->root->shape), S(c, s));
  return clone(c, s);
}

static tr_shape *r_conditional(ictx *c) {
  if (!min_operands(c, 1) || !want_scalar(c, 0, "selector")) return NULL;
  tr_dtype sel = opnd(c, 0)->dtype;
  const tr_attr *t = attr(c, TR_ATTR_TRUE_COMPUTATION), *f = attr(c, TR_ATTR_FALSE_COMPUTATION);
  const tr_attr *bc = attr(c, TR_ATTR_BRANCH_COMPUTATIONS);
  tr_comp *two[2];
  tr_comp **br;
  int nb;
  if (sel != TR_DT_PRED && sel != TR_DT_S32)
    return FAIL("selector of conditional must be pred[] or s32[], not %s", S(c, opnd(c, 0)));
  if (bc && !t && !f) {
    br = bc->u.comps;
    nb = bc->n;
    if (nb < 1) return FAIL("conditional needs at least one branch computation");
    if (sel == TR_DT_PRED && nb != 2)
      return FAIL("conditional with a pred selector needs 2 branches, not %d", nb);
  } else if (t && f && !bc && sel == TR_DT_PRED) {
    two[0] = t->u.comp;
    two[1] = f->u.comp;
    br = two;
    nb = 2;
  } else if (sel == TR_DT_PRED) {
    return FAIL("conditional with a pred selector needs true_computation and false_computation");
  } else {
    return FAIL("conditional with an s32 selector needs branch_computations");
  }
  if (nopnds(c) != nb + 1)
    return FAIL("conditional with %d branches needs %d operands, not %d", nb, nb + 1, nopnds(c));
  const tr_shape *res = NULL;
  for (int i = 0; i < nb; i++) {
    const tr_comp *k = br[i];
    if (!k || !k->root || !k->root->shape) return FAIL("branch %d of conditional has no computation or root", i);
    if (comp_nparams(k) != 1 || !comp_param(k, 0))
      return FAIL("branch computation %s must take 1 parameter but takes %d", k->name, comp_nparams(k));
    if (!tr_shape_compatible(param_shape(k, 0), opnd(c, i + 1)))
      return FAIL("branch computation %s takes %s but operand %d is %s", k->name,
                  S(c, param_shape(k, 0)), i + 1, S(c, opnd(c, i + 1)));
    if (!res) res = k->root->shape;
    else if (!tr_shape_compatible(k->root->shape, res))
      return FAIL("branch computation %s returns %s but %s returns %s", k->name,
                  S(c, k->root->shape), br[0]->name, S(c, res));
  }
  return clone(c, res);
}

/* call and fusion: parameters match the operands; the result is the root. */
static tr_shape *r_call(ictx *c, tr_attr_key key) {
  const tr_comp *k = callee(c, key, nopnds(c));
  if (!k) return NULL;
  for (int i = 0; i < nopnds(c); i++)
    if (!tr_shape_compatible(param_shape(k, i), opnd(c, i)))
      return FAIL("parameter %d of %s computation %s has shape %s but operand %d is %s", i,
                  tr_attrs[key].name, k->name, S(c, param_shape(k, i)), i, S(c, opnd(c, i)));
  return clone(c, k->root->shape);
}

static tr_shape *r_map(ictx *c) {
  int n = nopnds(c);
  if (!min_operands(c, 1) || !want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = opnd(c, 0);
  for (int i = 1; i < n; i++)
    if (!same_dims(opnd(c, i), o))
      return FAIL("operand %d of map has shape %s but operand 0 has %s", i, S(c, opnd(c, i)), S(c, o));
  const tr_attr *at = attr(c, TR_ATTR_DIMENSIONS);
  if (at) {
    bool ident = at->n == o->rank;
    for (int i = 0; ident && i < at->n; i++) ident = at->u.ints[i] == i;
    if (!ident)
      return FAIL("map dimensions=%s must list every dimension of %s in order", L(c, at->u.ints, at->n), S(c, o));
  }
  const tr_comp *k = callee(c, TR_ATTR_TO_APPLY, n);
  if (!k) return NULL;
  for (int i = 0; i < n; i++)
    if (!scalar_param(c, "to_apply", k, i, opnd(c, i)->dtype)) return NULL;
  if (!is_scalar(k->root->shape))
    return FAIL("to_apply computation %s of map must return a scalar but returns %s", k->name,
                S(c, k->root->shape));
  tr_shape *r = clone(c, o);
  r->dtype = k->root->shape->dtype;
  return r;
}

static tr_shape *r_tuple(ictx *c) {
  int n = nopnds(c);
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) el[i] = clone(c, opnd(c, i));
  return tr_shape_tuple(c->a, n, el);
}

static tr_shape *r_gte(ictx *c) {
  const tr_shape *t = opnd(c, 0);
  const tr_attr *at = need(c, TR_ATTR_INDEX);
  if (!at) return NULL;
  if (t->dtype != TR_DT_TUPLE)
    return FAIL("operand of get-tuple-element must be a tuple but has shape %s", S(c, t));
  if (at->u.i < 0 || at->u.i >= t->nelems)
    return FAIL("get-tuple-element index=%lld is out of range for %s", (long long)at->u.i, S(c, t));
  return clone(c, t->elems[at->u.i]);
}

static tr_shape *r_all_reduce(ictx *c) {
  int n = nopnds(c);
  if (!min_operands(c, 1) || !want_arrays(c, 0, n)) return NULL;
  const tr_comp *k = callee(c, TR_ATTR_TO_APPLY, 2);
  if (!k) return NULL;
  if (!is_scalar(k->root->shape))
    return FAIL("to_apply computation %s of all-reduce must return a scalar but returns %s", k->name,
                S(c, k->root->shape));
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)n);
  for (int i = 0; i < n; i++) el[i] = clone(c, opnd(c, i));
  return tuple_of(c, el, n);
}

/* Ops of the DECLARED rule whose result XLA's shape inference or verifier
 * still determines from the operands: the declared shape is checked
 * against it (a non-complex complex(), a real() of the wrong width, an
 * rng-bit-generator whose new state differs from its state). The rest
 * (collectives, custom-call, infeed, ...) stay declared only; the
 * evaluator runs none of them but custom-call, whose result XLA does not
 * check either. tr_declared_inferred says which ops are covered. */
static tr_shape *r_declared(ictx *c) {
  tr_op op = c->in->op;
  switch (op) {
  case TR_OP_COMPLEX: {
    if (!want_arrays(c, 0, 2)) return NULL;
    const tr_shape *x = opnd(c, 0), *y = opnd(c, 1);
    if (!tr_shape_compatible(x, y))
      return FAIL("operand 1 of complex has shape %s but operand 0 has %s", S(c, y), S(c, x));
    if (x->dtype != TR_DT_F32 && x->dtype != TR_DT_F64) return c->decl ? clone(c, c->decl) : NULL; /* the verifier's type rule says why */
    tr_shape *r = clone(c, x);
    r->dtype = x->dtype == TR_DT_F32 ? TR_DT_C64 : TR_DT_C128;
    return r;
  }
  case TR_OP_REAL: case TR_OP_IMAG: {
    if (!want_array(c, 0)) return NULL;
    const tr_shape *x = opnd(c, 0);
    if (!is_complex(x->dtype) && !is_float(x->dtype)) return c->decl ? clone(c, c->decl) : NULL; /* as for complex */
    tr_shape *r = clone(c, x);
    if (x->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
    if (x->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
    return r;
  }
  case TR_OP_MULHI: case TR_OP_BATCH_NORM_INFERENCE:
    if (!want_array(c, 0)) return NULL;
    if (op == TR_OP_MULHI) {
      if (!want_array(c, 1)) return NULL;
      if (!tr_shape_compatible(opnd(c, 0), opnd(c, 1)))
        return FAIL("operand 1 of %s has shape %s but operand 0 has %s", c->op, S(c, opnd(c, 1)),
                    S(c, opnd(c, 0)));
      if (!is_int(opnd(c, 0)->dtype)) return FAIL("%s takes integers, not %s", c->op, S(c, opnd(c, 0)));
    }
    return clone(c, opnd(c, 0));
  case TR_OP_SET_DIMENSION_SIZE:
    if (!want_array(c, 0) || !want_scalar(c, 1, "size")) return NULL;
    if (opnd(c, 1)->dtype != TR_DT_S32) return FAIL("the size of set-dimension-size must be s32, not %s", S(c, opnd(c, 1)));
    return clone(c, opnd(c, 0));
  case TR_OP_GET_DIMENSION_SIZE:
    if (!want_array(c, 0)) return NULL;
    return new_array(c, TR_DT_S32, 0);
  case TR_OP_STOCHASTIC_CONVERT: {
    if (!want_arrays(c, 0, 2)) return NULL;
    const tr_shape *d = want_decl(c);
    if (!d) return NULL;
    if (!is_float(opnd(c, 0)->dtype)) return FAIL("stochastic-convert takes a float operand, not %s", S(c, opnd(c, 0)));
    if (!same_dims(opnd(c, 0), opnd(c, 1)))
      return FAIL("the random bits of stochastic-convert have shape %s but the operand %s", S(c, opnd(c, 1)),
                  S(c, opnd(c, 0)));
    tr_shape *r = clone(c, opnd(c, 0));
    r->dtype = d->dtype;
    return r;
  }
  case TR_OP_RNG_BIT_GENERATOR: {
    /* XLA's verifier: a (new state, bits) tuple whose state has the
     * operand's shape; the state is a vector of u64 words. */
    if (!want_array(c, 0)) return NULL;
    const tr_shape *st = opnd(c, 0), *d = c->decl;
    if (st->dtype != TR_DT_U64 || st->rank != 1)
      return FAIL("the state of rng-bit-generator must be a u64 vector, not %s", S(c, st));
    if (st->dims[0] >= 0 && st->dims[0] < 2)
      return FAIL("the state of rng-bit-generator needs at least 2 words, not %s", S(c, st));
    if (!d || d->dtype != TR_DT_TUPLE || d->nelems != 2 || !is_array(d->elems[1]))
      return FAIL("rng-bit-generator must produce a (state, bits) tuple, not %s", S(c, d));
    if (!is_int(d->elems[1]->dtype))
      return FAIL("rng-bit-generator makes integer bits, not %s", S(c, d->elems[1]));
    tr_shape *el[2] = {clone(c, st), clone(c, d->elems[1])};
    return tuple_of(c, el, 2);
  }
  default:
    /* Nothing to infer: the declared shape is trusted; without one there
     * is no shape and no reason either. */
    return c->decl ? clone(c, c->decl) : NULL;
  }
}

bool tr_declared_inferred(tr_op op) {
  switch (op) {
  case TR_OP_COMPLEX: case TR_OP_REAL: case TR_OP_IMAG: case TR_OP_MULHI: case TR_OP_BATCH_NORM_INFERENCE:
  case TR_OP_SET_DIMENSION_SIZE: case TR_OP_GET_DIMENSION_SIZE: case TR_OP_STOCHASTIC_CONVERT:
  case TR_OP_RNG_BIT_GENERATOR:
    return true;
  default:
    return false;
  }
}

/* Operand count an instruction must have, -1 when variadic. A sparse dot
 * (sparsity=L.1@2:4_R.0@2:4) takes one metadata operand per descriptor. */
int tr_instr_arity(const tr_instr *in) {
  int arity = tr_ops[in->op].arity;
  if (in->op != TR_OP_DOT) return arity;
  for (int i = 0; i < in->nattrs; i++) {
    if (in->attrs[i].key != TR_ATTR_RAW || strcmp(in->attrs[i].name, "sparsity") != 0) continue;
    arity++;
    for (const char *p = in->attrs[i].u.s; *p; p++) arity += *p == '_';
  }
  return arity;
}

static tr_shape *infer(ictx *c) {
  const tr_instr *in = c->in;
  const tr_op_info *oi = &tr_ops[in->op];
  int arity = tr_instr_arity(in);
  if (arity >= 0 && in->noperands != arity)
    return FAIL("%s takes %d operand(s) but has %d", c->op, arity, in->noperands);
  for (int i = 0; i < in->noperands; i++)
    if (!in->operands[i] || !in->operands[i]->shape)
      return FAIL("operand %d of %s has no shape", i, c->op);
  if (strcmp(oi->types, "a") != 0)
    for (int i = 0; i < in->noperands; i++) {
      if (!want_array(c, i)) return NULL;
      if (!type_allowed(oi->types, opnd(c, i)->dtype))
        return FAIL("operand %d of %s has shape %s but %s needs %s type", i, c->op,
                    S(c, opnd(c, i)), c->op, types_desc(oi->types));
    }
  switch (oi->rule) {
  case TR_RULE_PARAMETER: return r_parameter(c);
  case TR_RULE_CONSTANT: return r_constant(c);
  case TR_RULE_IOTA: return r_iota(c);
  case TR_RULE_ID: return new_array(c, TR_DT_U32, 0);
  case TR_RULE_AFTER_ALL: return r_after_all(c);
  case TR_RULE_BROADCAST: return r_broadcast(c);
  case TR_RULE_RESHAPE: return r_reshape(c);
  case TR_RULE_BITCAST: return r_bitcast(c);
  case TR_RULE_TRANSPOSE: return r_transpose(c);
  case TR_RULE_SAME: return r_same(c);
  case TR_RULE_CONVERT: return r_convert(c);
  case TR_RULE_BITCAST_CONVERT: return r_bitcast_convert(c);
  case TR_RULE_SLICE: return r_slice(c);
  case TR_RULE_DYNAMIC_SLICE: return r_dynamic_slice(c);
  case TR_RULE_DYNAMIC_UPDATE_SLICE: return r_dynamic_update_slice(c);
  case TR_RULE_CONCATENATE: return r_concatenate(c);
  case TR_RULE_PAD: return r_pad(c);
  case TR_RULE_REVERSE: return r_reverse(c);
  case TR_RULE_GATHER: return r_gather(c);
  case TR_RULE_SCATTER: return r_scatter(c);
  case TR_RULE_SELECT: return r_select(c);
  case TR_RULE_CLAMP: return r_clamp(c);
  case TR_RULE_COMPARE: return r_compare(c);
  case TR_RULE_IS_FINITE: return r_is_finite(c);
  case TR_RULE_BINARY: return r_binary(c);
  case TR_RULE_REDUCE: return r_reduce(c);
  case TR_RULE_REDUCE_WINDOW: return r_reduce_window(c);
  case TR_RULE_SELECT_AND_SCATTER: return r_select_and_scatter(c);
  case TR_RULE_DOT: return r_dot(c);
  case TR_RULE_CONVOLUTION: return r_convolution(c);
  case TR_RULE_SORT: return r_sort(c);
  case TR_RULE_TOPK: return r_topk(c);
  case TR_RULE_CHOLESKY: return r_cholesky(c);
  case TR_RULE_TRIANGULAR_SOLVE: return r_triangular_solve(c);
  case TR_RULE_WHILE: return r_while(c);
  case TR_RULE_CONDITIONAL: return r_conditional(c);
  case TR_RULE_CALL: return r_call(c, TR_ATTR_TO_APPLY);
  case TR_RULE_FUSION: return r_call(c, TR_ATTR_CALLS);
  case TR_RULE_MAP: return r_map(c);
  case TR_RULE_TUPLE: return r_tuple(c);
  case TR_RULE_GTE: return r_gte(c);
  case TR_RULE_ADD_DEPENDENCY: return clone(c, opnd(c, 0));
  case TR_RULE_ALL_REDUCE: return r_all_reduce(c);
  case TR_RULE_DECLARED: return r_declared(c);
  }
  return FAIL("%s has no shape rule", c->op);
}

tr_shape *tr_infer_shape(tr_arena *a, const tr_instr *in, tr_buf *why) {
  tr_buf local = {0};
  ictx c;
  memset(&c, 0, sizeof c);
  c.a = a;
  c.in = in;
  c.decl = in->shape;
  c.op = in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
  c.why = why ? why : &local;
  tr_shape *s = infer(&c);
  for (int i = 0; i < NSCRATCH; i++) tr_buf_free(&c.tmp[i]);
  tr_buf_free(&local);
  return s;
}

