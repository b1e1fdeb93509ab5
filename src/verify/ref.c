/* ref.c - the HLO reference evaluated symbolically per output element
 * (ref.h): each op maps an element index of its result to the elements of
 * its operands it reads (elementwise ops, broadcast, reshape, transpose,
 * slice, pad, concatenate, reverse, iota, convert, select, compare,
 * reduce with an add/max/min/multiply reducer, dot, convolution, gather,
 * dynamic-slice with concrete starts), memoised by (instruction, element). */
#include "ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct { int id, fr; int64_t flat; vx *v; } memo;

/* The value of a tuple (or array) in a called computation: its leaves,
 * each a materialised array of elements. */
typedef struct { int n; vx ***leaf; int64_t *count; } vstate;

/* A frame of a while's condition or body: the computation and the state
 * its parameter is bound to; frame 0 is the entry computation. */
typedef struct { const tr_comp *comp; vstate st; } vframe;

/* A while evaluated in a frame: its final state. */
typedef struct { int id, fr; vstate st; } vloop;

struct vr_ctx {
  const tr_module *m;
  vx_ctx *cx;
  tr_tensor *const *ints;
  const tr_instr **outs;
  int nouts;
  memo *tab;
  size_t cap, n;
  tr_diag *d;
  bool bad;
  vframe *frames;
  int nframes, fr;            /* frames made so far; the current one */
  vloop *loops;
  int nloops;
  int64_t work;               /* elements materialised for loops */
};

static void vstate_free(vstate *s) {
  for (int i = 0; i < s->n; i++) tr_free(s->leaf[i]);
  tr_free(s->leaf);
  tr_free(s->count);
  memset(s, 0, sizeof *s);
}

vr_ctx *vr_new(const tr_module *m, vx_ctx *cx, tr_tensor *const *ints) {
  vr_ctx *r = tr_xcalloc(1, sizeof *r);
  r->m = m; r->cx = cx; r->ints = ints;
  const tr_instr *root = m->entry->root;
  if (root->op == TR_OP_TUPLE) {
    r->nouts = root->noperands;
    r->outs = tr_xcalloc((size_t)r->nouts + 1, sizeof *r->outs);
    for (int i = 0; i < r->nouts; i++) r->outs[i] = root->operands[i];
  } else {
    r->nouts = 1;
    r->outs = tr_xcalloc(1, sizeof *r->outs);
    r->outs[0] = root;
  }
  r->cap = 1 << 12;
  r->tab = tr_xcalloc(r->cap, sizeof *r->tab);
  r->frames = tr_xcalloc(1, sizeof *r->frames);
  r->frames[0].comp = m->entry;
  r->nframes = 1;
  return r;
}

void vr_free(vr_ctx *r) {
  if (!r) return;
  tr_free(r->outs);
  tr_free(r->tab);
  for (int i = 0; i < r->nframes; i++) vstate_free(&r->frames[i].st);
  for (int i = 0; i < r->nloops; i++) vstate_free(&r->loops[i].st);
  tr_free(r->frames);
  tr_free(r->loops);
  tr_free(r);
}

static void mark_cone(const tr_instr *in, bool *idx, int depth) {
  if (depth > 10000) return;
  if (in->op == TR_OP_PARAMETER && in->parent->is_entry) { if (in->param_index < 16) idx[in->param_index] = true; return; }
  for (int i = 0; i < in->noperands; i++) mark_cone(in->operands[i], idx, depth + 1);
}

void vr_index_params(const tr_module *m, bool *idx) {
  const tr_comp *e = m->entry;
  for (int p = 0; p < e->nparams && p < 16; p++) idx[p] = false;
  for (int i = 0; i < e->ninstrs; i++) {
    const tr_instr *in = e->instrs[i];
    int from = in->op == TR_OP_GATHER || in->op == TR_OP_SCATTER ? 1 : in->op == TR_OP_DYNAMIC_SLICE ? 1
             : in->op == TR_OP_DYNAMIC_UPDATE_SLICE ? 2 : -1;
    int to = in->op == TR_OP_GATHER || in->op == TR_OP_SCATTER ? 2 : in->noperands;
    for (int j = from; j >= 0 && j < to; j++) mark_cone(in->operands[j], idx, 0);
  }
  for (int p = 0; p < e->nparams && p < 16; p++)
    if (tr_dtype_is_float(e->params[p]->shape->dtype)) idx[p] = false;
}

int vr_nouts(const vr_ctx *r) { return r->nouts; }
const tr_shape *vr_out_shape(const vr_ctx *r, int out) { return r->outs[out]->shape; }

static size_t mhash(int id, int fr, int64_t flat, size_t cap) {
  uint64_t h = (uint64_t)id * 0x9E3779B97F4A7C15ULL ^ (uint64_t)flat * 0xC2B2AE3D27D4EB4FULL ^
               (uint64_t)fr * 0x165667B19E3779F9ULL;
  h ^= h >> 29;
  return (size_t)h & (cap - 1);
}
static vx *memo_get(vr_ctx *r, int id, int fr, int64_t flat) {
  for (size_t i = mhash(id, fr, flat, r->cap); r->tab[i].v; i = (i + 1) & (r->cap - 1))
    if (r->tab[i].id == id && r->tab[i].fr == fr && r->tab[i].flat == flat) return r->tab[i].v;
  return NULL;
}
static void memo_put(vr_ctx *r, int id, int fr, int64_t flat, vx *v) {
  if (2 * (r->n + 1) > r->cap) {
    memo *old = r->tab;
    size_t oc = r->cap;
    r->cap *= 2;
    r->tab = tr_xcalloc(r->cap, sizeof *r->tab);
    r->n = 0;
    for (size_t i = 0; i < oc; i++) if (old[i].v) memo_put(r, old[i].id, old[i].fr, old[i].flat, old[i].v);
    tr_free(old);
  }
  size_t i = mhash(id, fr, flat, r->cap);
  while (r->tab[i].v) i = (i + 1) & (r->cap - 1);
  r->tab[i].id = id; r->tab[i].fr = fr; r->tab[i].flat = flat; r->tab[i].v = v;
  r->n++;
}

static void unflat(const tr_shape *s, int64_t flat, int64_t *idx) {
  for (int i = s->rank - 1; i >= 0; i--) {
    idx[i] = s->dims[i] ? flat % s->dims[i] : 0;
    flat = s->dims[i] ? flat / s->dims[i] : 0;
  }
}
static int64_t toflat(const tr_shape *s, const int64_t *idx) {
  int64_t f = 0;
  for (int i = 0; i < s->rank; i++) f = f * s->dims[i] + idx[i];
  return f;
}

static vx *bad(vr_ctx *r, const tr_instr *in, const char *what) {
  if (!r->bad) {
    tr_diag_errorf(r->d, "%s:%d:%d: in %%%s: the symbolic reference does not model %s",
                   r->m->file ? r->m->file : "<module>", in->line, in->col, in->name, what);
  }
  r->bad = true;
  return NULL;
}

static const tr_attr *attr(const tr_instr *in, tr_attr_key k) { return tr_instr_attr(in, k); }
static int attr_n(const tr_instr *in, tr_attr_key k) { const tr_attr *a = attr(in, k); return a ? a->n : 0; }
static int64_t attr_i(const tr_instr *in, tr_attr_key k, int j) { return attr(in, k)->u.ints[j]; }
static bool attr_has(const tr_instr *in, tr_attr_key k, int64_t v) {
  for (int j = 0; j < attr_n(in, k); j++) if (attr_i(in, k, j) == v) return true;
  return false;
}

static vx *el(vr_ctx *r, const tr_instr *in, int64_t flat);

/* The element at a multi-index of an operand. */
static vx *at(vr_ctx *r, const tr_instr *in, const int64_t *idx) { return el(r, in, toflat(in->shape, idx)); }

/* The combining op of a reducer computation: add, maximum, minimum, multiply. */
static tr_op reducer(const tr_instr *in) {
  const tr_attr *a = attr(in, TR_ATTR_TO_APPLY);
  if (!a || !a->u.comp) return TR_OP_COUNT;
  const tr_instr *root = a->u.comp->root;
  if (root->noperands != 2 || root->operands[0]->op != TR_OP_PARAMETER || root->operands[1]->op != TR_OP_PARAMETER)
    return TR_OP_COUNT;
  switch (root->op) {
  case TR_OP_ADD: case TR_OP_MAXIMUM: case TR_OP_MINIMUM: case TR_OP_MULTIPLY: return root->op;
  default: return TR_OP_COUNT;
  }
}

/* Integer elements are bitvectors of the type's width (ints: wrap-around,
 * signed or unsigned order by type); pred elements are booleans. */
static bool is_bv(tr_dtype dt) { return tr_dtype_is_int(dt); }
static int bw(tr_dtype dt) { return tr_dtypes[dt].bits; }
static bool is_signed(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_SINT; }

static vx *imax(vr_ctx *r, tr_dtype dt, vx *a, vx *b, bool mx) {
  vx *lt = vx_bv(r->cx, is_signed(dt) ? BV_SLT : BV_ULT, 0, a, b);
  return vx_ite(r->cx, lt, mx ? b : a, mx ? a : b);
}

static vx *combine_int(vr_ctx *r, tr_op op, tr_dtype dt, vx **xs, int n) {
  vx *acc = xs[0];
  for (int i = 1; i < n; i++)
    acc = op == TR_OP_ADD ? vx_bv(r->cx, BV_ADD, 0, acc, xs[i]) : op == TR_OP_MULTIPLY ? vx_bv(r->cx, BV_MUL, 0, acc, xs[i])
        : imax(r, dt, acc, xs[i], op == TR_OP_MAXIMUM);
  return acc;
}

static vx *combine(vr_ctx *r, tr_op op, vx **xs, int n) {
  vx_ctx *c = r->cx;
  if (op == TR_OP_ADD) return vx_sum(c, xs, n);
  vx *acc = xs[0];
  for (int i = 1; i < n; i++)
    acc = op == TR_OP_MAXIMUM ? vx_max(c, acc, xs[i]) : op == TR_OP_MINIMUM ? vx_min(c, acc, xs[i]) : vx_mul(c, acc, xs[i]);
  return acc;
}

static vx *combine_dt(vr_ctx *r, tr_op op, tr_dtype dt, vx **xs, int n) {
  if (is_bv(dt)) return combine_int(r, op, dt, xs, n);
  if (dt == TR_DT_PRED) {
    vx *acc = xs[0];
    for (int i = 1; i < n; i++)
      acc = op == TR_OP_ADD || op == TR_OP_MAXIMUM ? vx_or(r->cx, acc, xs[i]) : vx_and(r->cx, acc, xs[i]);
    return acc;
  }
  return combine(r, op, xs, n);
}

typedef struct { vx **v; int n, cap; } vbuf;
static void vb_push(vbuf *b, vx *e) {
  if (b->n == b->cap) { b->cap = b->cap ? b->cap * 2 : 64; b->v = tr_xrealloc(b->v, (size_t)b->cap * sizeof *b->v); }
  b->v[b->n++] = e;
}

static vx *cmp(vr_ctx *r, const tr_instr *in, vx *a, vx *b) {
  const tr_attr *d = attr(in, TR_ATTR_DIRECTION);
  const char *s = d ? d->u.s : "EQ";
  vx_ctx *c = r->cx;
  tr_dtype odt = in->operands[0]->shape->dtype;
  if (is_bv(odt)) {
    vx_bvop lt = is_signed(odt) ? BV_SLT : BV_ULT, le = is_signed(odt) ? BV_SLE : BV_ULE;
    if (!strcmp(s, "EQ")) return vx_bv(c, BV_EQ, 0, a, b);
    if (!strcmp(s, "NE")) return vx_not(c, vx_bv(c, BV_EQ, 0, a, b));
    if (!strcmp(s, "LT")) return vx_bv(c, lt, 0, a, b);
    if (!strcmp(s, "LE")) return vx_bv(c, le, 0, a, b);
    if (!strcmp(s, "GT")) return vx_bv(c, lt, 0, b, a);
    return vx_bv(c, le, 0, b, a);
  }
  if (odt == TR_DT_PRED && (!strcmp(s, "EQ") || !strcmp(s, "NE"))) {
    /* booleans: equal when both or neither */
    vx *eq = vx_or(c, vx_and(c, a, b), vx_and(c, vx_not(c, a), vx_not(c, b)));
    return !strcmp(s, "EQ") ? eq : vx_not(c, eq);
  }
  if (!strcmp(s, "EQ")) return vx_eq(c, a, b);
  if (!strcmp(s, "NE")) return vx_not(c, vx_eq(c, a, b));
  if (!strcmp(s, "LT")) return vx_lt(c, a, b);
  if (!strcmp(s, "LE")) return vx_le(c, a, b);
  if (!strcmp(s, "GT")) return vx_lt(c, b, a);
  return vx_le(c, b, a);
}

/* Conversions between the three domains (reals, bitvectors, booleans). */
static vx *convert(vr_ctx *r, const tr_instr *in, vx *a) {
  vx_ctx *c = r->cx;
  tr_dtype from = in->operands[0]->shape->dtype, to = in->shape->dtype;
  if (is_bv(from)) {
    if (is_bv(to)) {
      if (bw(to) < bw(from)) return vx_bv(c, BV_TRUNC, bw(to), a, NULL);
      return vx_bv(c, is_signed(from) ? BV_SEXT : BV_ZEXT, bw(to), a, NULL);
    }
    if (to == TR_DT_PRED) return vx_not(c, vx_bv(c, BV_EQ, 0, a, vx_bvconst(c, 0, bw(from))));
    return vx_bv(c, is_signed(from) ? BV_SREAL : BV_UREAL, 0, a, NULL); /* over the reals */
  }
  if (from == TR_DT_PRED) {
    if (is_bv(to)) return vx_ite(c, a, vx_bvconst(c, 1, bw(to)), vx_bvconst(c, 0, bw(to)));
    if (to == TR_DT_PRED) return a;
    return vx_ite(c, a, vx_const(c, 1), vx_const(c, 0));
  }
  /* from a float */
  if (to == TR_DT_PRED) return vx_not(c, vx_eq(c, a, vx_const(c, 0)));
  if (is_bv(to)) {
    /* XLA: toward zero, saturating at the type's bounds (docs/SEMANTICS.md;
     * NaN does not exist over the reals) */
    int w = bw(to);
    double lo = is_signed(to) ? -ldexp(1, w - 1) : 0, hi = is_signed(to) ? ldexp(1, w - 1) - 1 : ldexp(1, w) - 1;
    vx *vlo = vx_bvconst(c, (uint64_t)(int64_t)lo, w), *vhi = vx_bvconst(c, (uint64_t)hi, w);
    return vx_ite(c, vx_le(c, a, vx_const(c, lo)), vlo,
                  vx_ite(c, vx_le(c, vx_const(c, hi), a), vhi, vx_bv(c, BV_FROMREAL, w, a, NULL)));
  }
  return a; /* a float convert is the identity over the reals */
}

/* Operand k's element for result element flat: clamp takes scalar bounds
 * with an array operand (XLA broadcasts them). */
static vx *opnd_el(vr_ctx *r, const tr_instr *in, int k, int64_t flat) {
  const tr_instr *x = in->operands[k];
  return el(r, x, x->shape->rank == 0 && in->shape->rank > 0 ? 0 : flat);
}

static vx *int_elementwise(vr_ctx *r, const tr_instr *in, vx *a, vx *b, int64_t flat) {
  vx_ctx *c = r->cx;
  tr_dtype dt = in->operands[0]->shape->dtype;
  int w = bw(dt);
  switch (in->op) {
  case TR_OP_ADD: return vx_bv(c, BV_ADD, 0, a, b);
  case TR_OP_SUBTRACT: return vx_bv(c, BV_SUB, 0, a, b);
  case TR_OP_MULTIPLY: return vx_bv(c, BV_MUL, 0, a, b);
  case TR_OP_AND: return vx_bv(c, BV_AND, 0, a, b);
  case TR_OP_OR: return vx_bv(c, BV_OR, 0, a, b);
  case TR_OP_XOR: return vx_bv(c, BV_XOR, 0, a, b);
  case TR_OP_NOT: return vx_bv(c, BV_XOR, 0, a, vx_bvconst(c, vx_bvmask(w), w));
  case TR_OP_NEGATE: return vx_bv(c, BV_SUB, 0, vx_bvconst(c, 0, w), a);
  case TR_OP_ABS:
    if (!is_signed(dt)) return a;
    return vx_ite(c, vx_bv(c, BV_SLT, 0, a, vx_bvconst(c, 0, w)), vx_bv(c, BV_SUB, 0, vx_bvconst(c, 0, w), a), a);
  case TR_OP_MAXIMUM: return imax(r, dt, a, b, true);
  case TR_OP_MINIMUM: return imax(r, dt, a, b, false);
  /* XLA: an amount of the width or more gives 0 (logical) or all sign
   * bits (arithmetic), as the bitvector shifts */
  case TR_OP_SHIFT_LEFT: return vx_bv(c, BV_SHL, 0, a, b);
  case TR_OP_SHIFT_RIGHT_LOGICAL: return vx_bv(c, BV_LSHR, 0, a, b);
  case TR_OP_SHIFT_RIGHT_ARITHMETIC: return vx_bv(c, BV_ASHR, 0, a, b);
  /* XLA: x / 0 = -1 (all ones), MIN / -1 = MIN, x % 0 = x, MIN % -1 = 0,
   * the remainder has the dividend's sign: Z3's bitvector divisions but
   * for a signed x / 0 */
  case TR_OP_DIVIDE:
    if (!is_signed(dt)) return vx_bv(c, BV_UDIV, 0, a, b);
    return vx_ite(c, vx_bv(c, BV_EQ, 0, b, vx_bvconst(c, 0, w)), vx_bvconst(c, vx_bvmask(w), w),
                  vx_bv(c, BV_SDIV, 0, a, b));
  case TR_OP_REMAINDER: return vx_bv(c, is_signed(dt) ? BV_SREM : BV_UREM, 0, a, b);
  case TR_OP_COMPARE: return cmp(r, in, a, b);
  case TR_OP_CLAMP: {
    vx *e = opnd_el(r, in, 2, flat);
    return e ? imax(r, dt, imax(r, dt, b, a, true), e, false) : NULL;
  }
  case TR_OP_CONVERT: case TR_OP_COPY: return convert(r, in, a);
  default: return bad(r, in, tr_ops[in->op].name);
  }
}

static vx *elementwise(vr_ctx *r, const tr_instr *in, int64_t flat) {
  vx_ctx *c = r->cx;
  vx *a = in->noperands > 0 ? opnd_el(r, in, 0, flat) : NULL;
  if (in->noperands > 0 && !a) return NULL;
  vx *b = NULL;
  if (in->noperands > 1 && !(b = opnd_el(r, in, 1, flat))) return NULL;
  if (in->op == TR_OP_CONVERT && (is_bv(in->shape->dtype) || is_bv(in->operands[0]->shape->dtype) ||
                                  in->shape->dtype == TR_DT_PRED))
    return convert(r, in, a);
  if (in->op == TR_OP_CLAMP && is_bv(in->shape->dtype)) return int_elementwise(r, in, a, b, flat);
  if (in->op != TR_OP_SELECT && in->op != TR_OP_CLAMP && in->noperands > 0 && is_bv(in->operands[0]->shape->dtype))
    return int_elementwise(r, in, a, b, flat);
  switch (in->op) {
  case TR_OP_ADD: return vx_add(c, a, b);
  case TR_OP_SUBTRACT: return vx_sub(c, a, b);
  case TR_OP_MULTIPLY: return vx_mul(c, a, b);
  case TR_OP_DIVIDE:
    if (!tr_dtype_is_float(in->shape->dtype)) {
      if (a->kind == VX_CONST && b->kind == VX_CONST && b->c != 0) return vx_const(c, trunc(a->c / b->c));
      return bad(r, in, "integer division of data");
    }
    return vx_div(c, a, b);
  case TR_OP_MAXIMUM: return vx_max(c, a, b);
  case TR_OP_MINIMUM: return vx_min(c, a, b);
  case TR_OP_NEGATE: return vx_neg(c, a);
  case TR_OP_ABS: return vx_abs(c, a);
  case TR_OP_EXPONENTIAL: return vx_fn1(c, VX_FN_EXP, a);
  case TR_OP_LOG: return vx_fn1(c, VX_FN_LOG, a);
  case TR_OP_SQRT: return vx_fn1(c, VX_FN_SQRT, a);
  case TR_OP_RSQRT: return vx_inv(c, vx_fn1(c, VX_FN_SQRT, a));
  case TR_OP_TANH: return vx_fn1(c, VX_FN_TANH, a);
  case TR_OP_SINE: return vx_fn1(c, VX_FN_SIN, a);
  case TR_OP_COSINE: return vx_fn1(c, VX_FN_COS, a);
  case TR_OP_ERF: return vx_fn1(c, VX_FN_ERF, a);
  case TR_OP_LOG_PLUS_ONE: return vx_fn1(c, VX_FN_LOG1P, a);
  case TR_OP_EXPONENTIAL_MINUS_ONE: return vx_fn1(c, VX_FN_EXPM1, a);
  case TR_OP_FLOOR: return vx_floor(c, a);
  case TR_OP_CEIL: return vx_ceil(c, a);
  case TR_OP_ROUND_NEAREST_AFZ: return vx_round_afz(c, a);
  case TR_OP_ROUND_NEAREST_EVEN: return vx_round_even(c, a);
  case TR_OP_LOGISTIC: /* 1 / (1 + exp(-x)) */
    return vx_inv(c, vx_add(c, vx_const(c, 1), vx_fn1(c, VX_FN_EXP, vx_neg(c, a))));
  case TR_OP_POWER:
    if (b->kind == VX_CONST && b->c == 2) return vx_mul(c, a, a);
    if (b->kind == VX_CONST && b->c == 0.5) return vx_fn1(c, VX_FN_SQRT, a);
    if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, pow(a->c, b->c));
    return bad(r, in, "power of data by a non-constant exponent");
  case TR_OP_COMPARE: return cmp(r, in, a, b);
  case TR_OP_AND: return tr_dtype_is_float(in->shape->dtype) ? bad(r, in, "and of floats") :
      in->shape->dtype == TR_DT_PRED ? vx_and(c, a, b) : (a->kind == VX_CONST && b->kind == VX_CONST ? vx_const(c, (double)((int64_t)a->c & (int64_t)b->c)) : bad(r, in, "bitwise and of data"));
  case TR_OP_OR: return in->shape->dtype == TR_DT_PRED ? vx_or(c, a, b) : bad(r, in, "bitwise or");
  case TR_OP_NOT: return in->shape->dtype == TR_DT_PRED ? vx_not(c, a) : bad(r, in, "bitwise not");
  case TR_OP_SELECT: {
    vx *e = opnd_el(r, in, 2, flat);
    return e ? vx_ite(c, a, b, e) : NULL;
  }
  case TR_OP_CLAMP: {
    vx *e = opnd_el(r, in, 2, flat);
    return e ? vx_min(c, vx_max(c, b, a), e) : NULL;
  }
  case TR_OP_CONVERT: case TR_OP_COPY: case TR_OP_REDUCE_PRECISION:
    /* over the reals a float convert is the identity; to an int only for
     * concrete values (indices), from pred a 0/1 choice */
    if (in->operands[0]->shape->dtype == TR_DT_PRED && a->kind != VX_CONST)
      return vx_ite(c, a, vx_const(c, 1), vx_const(c, 0));
    if (!tr_dtype_is_float(in->shape->dtype) && in->shape->dtype != TR_DT_PRED && a->kind != VX_CONST)
      return bad(r, in, "conversion of data to an integer");
    if (!tr_dtype_is_float(in->shape->dtype) && a->kind == VX_CONST) return vx_const(c, trunc(a->c));
    return a;
  default: return bad(r, in, tr_ops[in->op].name);
  }
}

static vx *reduce(vr_ctx *r, const tr_instr *in, int64_t flat) {
  if (in->noperands != 2) return bad(r, in, "a variadic reduce");
  tr_op op = reducer(in);
  if (op == TR_OP_COUNT) return bad(r, in, "a reduce whose reducer is not add, maximum, minimum or multiply");
  const tr_instr *x = in->operands[0];
  int64_t oidx[TR_TENSOR_MAX_RANK], xidx[TR_TENSOR_MAX_RANK];
  unflat(in->shape, flat, oidx);
  int rdims[TR_TENSOR_MAX_RANK], nr = 0, j = 0;
  for (int d = 0; d < x->shape->rank; d++) {
    if (attr_has(in, TR_ATTR_DIMENSIONS, d)) { rdims[nr++] = d; xidx[d] = 0; }
    else xidx[d] = oidx[j++];
  }
  vbuf terms = {0};
  vx *init = el(r, in->operands[1], 0);
  if (!init) return NULL;
  vb_push(&terms, init);
  for (;;) {
    vx *e = at(r, x, xidx);
    if (!e) { tr_free(terms.v); return NULL; }
    vb_push(&terms, e);
    int k = nr - 1;
    while (k >= 0 && ++xidx[rdims[k]] == x->shape->dims[rdims[k]]) xidx[rdims[k--]] = 0;
    if (k < 0) break;
  }
  bool empty = false;
  for (int k = 0; k < nr; k++) empty |= x->shape->dims[rdims[k]] == 0;
  vx *v = empty ? init : combine_dt(r, op, in->shape->dtype, terms.v, terms.n);
  tr_free(terms.v);
  return v;
}

/* reduce-window as the exact interpreter computes it (eval_window.c): the
 * init value once, then every window position that lands on an input
 * element (out*stride + k*window_dilation - pad_lo, divided by the base
 * dilation when a multiple of it); padding and holes are skipped. */
static vx *reduce_window(vr_ctx *r, const tr_instr *in, int64_t flat) {
  if (in->noperands != 2) return bad(r, in, "a variadic reduce-window");
  tr_op op = reducer(in);
  if (op == TR_OP_COUNT) return bad(r, in, "a reduce-window whose reducer is not add, maximum, minimum or multiply");
  const tr_instr *x = in->operands[0];
  const tr_attr *wa = attr(in, TR_ATTR_WINDOW);
  int rank = x->shape->rank;
  int64_t oidx[TR_TENSOR_MAX_RANK], w[TR_TENSOR_MAX_RANK] = {0}, xi[TR_TENSOR_MAX_RANK];
  unflat(in->shape, flat, oidx);
  if (wa && wa->n != rank) return bad(r, in, "a window whose rank is not the operand's");
  vbuf terms = {0};
  vx *init = el(r, in->operands[1], 0);
  if (!init) return NULL;
  vb_push(&terms, init);
  for (int d = 0; d < rank; d++) if (wa && wa->u.win[d].size <= 0) goto out;
  for (;;) {
    bool inside = true;
    for (int d = 0; d < rank && inside; d++) {
      const tr_window_dim *wd = wa ? &wa->u.win[d] : NULL;
      if (wd && wd->reversal) { tr_free(terms.v); return bad(r, in, "window reversal"); }
      int64_t stride = wd ? wd->stride : 1, lo = wd ? wd->pad_lo : 0;
      int64_t ld = wd && wd->lhs_dilate > 1 ? wd->lhs_dilate : 1, rd = wd && wd->rhs_dilate > 1 ? wd->rhs_dilate : 1;
      int64_t p = oidx[d] * stride + w[d] * rd - lo;
      if (p < 0 || p % ld) { inside = false; break; }
      p /= ld;
      if (p >= x->shape->dims[d]) inside = false;
      xi[d] = p;
    }
    if (inside) {
      vx *e = at(r, x, xi);
      if (!e) { tr_free(terms.v); return NULL; }
      vb_push(&terms, e);
    }
    int d = rank - 1;
    while (d >= 0 && ++w[d] == (wa ? wa->u.win[d].size : 1)) w[d--] = 0;
    if (d < 0) break;
  }
out:;
  vx *v = combine_dt(r, op, in->shape->dtype, terms.v, terms.n);
  tr_free(terms.v);
  return v;
}

/* A product term of a dot or convolution: integer operands are extended
 * to the result type first, as XLA does; the sum of the terms. */
static vx *prod_term(vr_ctx *r, const tr_instr *in, vx *a, vx *b) {
  tr_dtype dt = in->shape->dtype;
  if (!is_bv(dt)) {
    if (vx_is_bv(a) || vx_is_bv(b)) return bad(r, in, "a product of integers with a float result");
    return vx_mul(r->cx, a, b);
  }
  tr_dtype da = in->operands[0]->shape->dtype, db = in->operands[1]->shape->dtype;
  if (!vx_is_bv(a) || !vx_is_bv(b)) return bad(r, in, "a product of booleans or floats with an integer result");
  if (a->w < bw(dt)) a = vx_bv(r->cx, is_signed(da) ? BV_SEXT : BV_ZEXT, bw(dt), a, NULL);
  if (b->w < bw(dt)) b = vx_bv(r->cx, is_signed(db) ? BV_SEXT : BV_ZEXT, bw(dt), b, NULL);
  return vx_bv(r->cx, BV_MUL, 0, a, b);
}
static vx *sum_terms(vr_ctx *r, const tr_instr *in, vx **xs, int n) {
  if (!is_bv(in->shape->dtype)) return vx_sum(r->cx, xs, n);
  vx *acc = vx_bvconst(r->cx, 0, bw(in->shape->dtype));
  for (int i = 0; i < n; i++) acc = vx_bv(r->cx, BV_ADD, 0, acc, xs[i]);
  return acc;
}

static vx *dot(vr_ctx *r, const tr_instr *in, int64_t flat) {
  const tr_instr *L = in->operands[0], *Rr = in->operands[1];
  int64_t oidx[TR_TENSOR_MAX_RANK], li[TR_TENSOR_MAX_RANK], ri[TR_TENSOR_MAX_RANK];
  unflat(in->shape, flat, oidx);
  int nb = attr_n(in, TR_ATTR_LHS_BATCH_DIMS), nc = attr_n(in, TR_ATTR_LHS_CONTRACTING_DIMS);
  int o = 0;
  for (int k = 0; k < nb; k++) {
    li[attr_i(in, TR_ATTR_LHS_BATCH_DIMS, k)] = oidx[o];
    ri[attr_i(in, TR_ATTR_RHS_BATCH_DIMS, k)] = oidx[o];
    o++;
  }
  for (int d = 0; d < L->shape->rank; d++)
    if (!attr_has(in, TR_ATTR_LHS_BATCH_DIMS, d) && !attr_has(in, TR_ATTR_LHS_CONTRACTING_DIMS, d)) li[d] = oidx[o++];
  for (int d = 0; d < Rr->shape->rank; d++)
    if (!attr_has(in, TR_ATTR_RHS_BATCH_DIMS, d) && !attr_has(in, TR_ATTR_RHS_CONTRACTING_DIMS, d)) ri[d] = oidx[o++];
  int64_t cdim[TR_TENSOR_MAX_RANK], cidx[TR_TENSOR_MAX_RANK];
  int64_t total = 1;
  for (int k = 0; k < nc; k++) {
    cdim[k] = L->shape->dims[attr_i(in, TR_ATTR_LHS_CONTRACTING_DIMS, k)];
    cidx[k] = 0;
    total *= cdim[k];
  }
  vbuf terms = {0};
  for (int64_t t = 0; t < total; t++) {
    for (int k = 0; k < nc; k++) {
      li[attr_i(in, TR_ATTR_LHS_CONTRACTING_DIMS, k)] = cidx[k];
      ri[attr_i(in, TR_ATTR_RHS_CONTRACTING_DIMS, k)] = cidx[k];
    }
    vx *a = at(r, L, li), *b = a ? at(r, Rr, ri) : NULL;
    if (!b) { tr_free(terms.v); return NULL; }
    vx *pt = prod_term(r, in, a, b);
    if (!pt) { tr_free(terms.v); return NULL; }
    vb_push(&terms, pt);
    for (int k = nc - 1; k >= 0 && ++cidx[k] == cdim[k]; k--) cidx[k] = 0;
  }
  vx *v = sum_terms(r, in, terms.v, terms.n);
  tr_free(terms.v);
  return v;
}

static vx *convolution(vr_ctx *r, const tr_instr *in, int64_t flat) {
  const tr_attr *dl = attr(in, TR_ATTR_DIM_LABELS), *wa = attr(in, TR_ATTR_WINDOW);
  if (!dl) return bad(r, in, "a convolution without dim_labels");
  const tr_convdims *cd = dl->u.conv;
  const tr_instr *X = in->operands[0], *K = in->operands[1];
  int ns = cd->nspatial;
  const tr_attr *fg = attr(in, TR_ATTR_FEATURE_GROUP_COUNT), *bg = attr(in, TR_ATTR_BATCH_GROUP_COUNT);
  int64_t groups = fg ? fg->u.i : 1;
  if (bg && bg->u.i != 1) return bad(r, in, "batch_group_count");
  int64_t oidx[TR_TENSOR_MAX_RANK], xi[TR_TENSOR_MAX_RANK], ki[TR_TENSOR_MAX_RANK];
  unflat(in->shape, flat, oidx);
  int64_t cin = X->shape->dims[cd->in_feature] / groups;
  int64_t cout = in->shape->dims[cd->out_feature];
  int64_t f = oidx[cd->out_feature];
  int64_t g = f / (cout / groups);
  xi[cd->in_batch] = oidx[cd->out_batch];
  ki[cd->k_out] = f;
  int64_t kd[TR_TENSOR_MAX_RANK], kk[TR_TENSOR_MAX_RANK];
  int64_t total = cin;
  for (int s = 0; s < ns; s++) { kd[s] = K->shape->dims[cd->k_spatial[s]]; kk[s] = 0; total *= kd[s]; }
  vbuf terms = {0};
  for (int64_t ci = 0; ci < cin; ci++) {
    for (int s = 0; s < ns; s++) kk[s] = 0;
    for (;;) {
      bool inside = true;
      for (int s = 0; s < ns && inside; s++) {
        const tr_window_dim *w = wa ? &wa->u.win[s] : NULL;
        int64_t stride = w ? w->stride : 1, lo = w ? w->pad_lo : 0, ld = w ? w->lhs_dilate : 1, rd = w ? w->rhs_dilate : 1;
        if (w && w->reversal) { inside = false; r->bad = true; break; }
        int64_t kpos = kk[s];
        int64_t p = oidx[cd->out_spatial[s]] * stride - lo + kpos * rd;
        if (p < 0 || p % ld) { inside = false; break; }
        p /= ld;
        if (p >= X->shape->dims[cd->in_spatial[s]]) { inside = false; break; }
        xi[cd->in_spatial[s]] = p;
        ki[cd->k_spatial[s]] = kpos;
      }
      if (r->bad) { tr_free(terms.v); return bad(r, in, "window reversal"); }
      if (inside) {
        xi[cd->in_feature] = g * cin + ci;
        ki[cd->k_in] = ci;
        vx *a = at(r, X, xi), *b = a ? at(r, K, ki) : NULL;
        if (!b) { tr_free(terms.v); return NULL; }
        vx *t = prod_term(r, in, a, b);
        if (!t) { tr_free(terms.v); return NULL; }
        vb_push(&terms, t);
      }
      int s = ns - 1;
      while (s >= 0 && ++kk[s] == kd[s]) kk[s--] = 0;
      if (s < 0) break;
    }
  }
  (void)total;
  vx *v = sum_terms(r, in, terms.v, terms.n);
  tr_free(terms.v);
  return v;
}

static bool concrete_int(vr_ctx *r, const tr_instr *in, const int64_t *idx, int64_t *out) {
  vx *e = at(r, in, idx);
  if (!e) return false;
  if (e->kind == VX_BVC) { *out = is_signed(in->shape->dtype) ? vx_bvsigned(e) : e->a; return true; }
  if (e->kind != VX_CONST) { bad(r, in, "indices computed from data"); return false; }
  *out = (int64_t)e->c;
  return true;
}

static vx *gather(vr_ctx *r, const tr_instr *in, int64_t flat) {
  const tr_instr *X = in->operands[0], *G = in->operands[1];
  if (attr_n(in, TR_ATTR_OPERAND_BATCHING_DIMS)) return bad(r, in, "gather batching dims");
  int64_t oidx[TR_TENSOR_MAX_RANK], gi[TR_TENSOR_MAX_RANK], xi[TR_TENSOR_MAX_RANK];
  unflat(in->shape, flat, oidx);
  const tr_attr *ivd = attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t iv = ivd ? ivd->u.i : G->shape->rank;
  /* batch dims of the result, in order, index the indices tensor */
  int gb = 0;
  for (int d = 0; d < in->shape->rank; d++) {
    if (attr_has(in, TR_ATTR_OFFSET_DIMS, d)) continue;
    if (gb == iv) gb++;
    gi[gb++] = oidx[d];
  }
  int64_t start[TR_TENSOR_MAX_RANK] = {0};
  for (int k = 0; k < attr_n(in, TR_ATTR_START_INDEX_MAP); k++) {
    int64_t od = attr_i(in, TR_ATTR_START_INDEX_MAP, k);
    if (iv < G->shape->rank) gi[iv] = k;
    int64_t s;
    if (!concrete_int(r, G, gi, &s)) return NULL;
    int64_t hi = X->shape->dims[od] - attr_i(in, TR_ATTR_SLICE_SIZES, (int)od);
    start[od] = s < 0 ? 0 : s > hi ? hi : s;
  }
  int o = 0;
  for (int d = 0; d < X->shape->rank; d++) {
    int64_t off = 0;
    if (!attr_has(in, TR_ATTR_COLLAPSED_SLICE_DIMS, d)) {
      while (o < in->shape->rank && !attr_has(in, TR_ATTR_OFFSET_DIMS, o)) o++;
      off = oidx[o++];
    }
    xi[d] = start[d] + off;
  }
  return at(r, X, xi);
}

/* ---- while loops and tuples ----
 * A while is run iteration by iteration on materialised states: its
 * condition must come out a constant (a trip count that does not depend
 * on data: counters), its body's root gives the next state. Each
 * evaluation of the condition or body is a frame of its own, so the
 * element memo never mixes iterations. */

enum { VR_LOOP_TRIPS = 100000, VR_LOOP_WORK = 20000000 };

static bool state_of(vr_ctx *r, const tr_instr *in, vstate *st);

/* Materialises every element of array instruction in (current frame). */
static vx **all_elems(vr_ctx *r, const tr_instr *in, int64_t *count) {
  int64_t n = tr_shape_count(in->shape);
  r->work += n;
  if (n < 0 || r->work > VR_LOOP_WORK) { bad(r, in, "loops over more than 20 million elements"); return NULL; }
  vx **v = tr_xcalloc((size_t)n + 1, sizeof *v);
  for (int64_t i = 0; i < n; i++)
    if (!(v[i] = el(r, in, i))) { tr_free(v); return NULL; }
  *count = n;
  return v;
}

static int push_frame(vr_ctx *r, const tr_comp *c, vstate *st) {
  r->frames = tr_xrealloc(r->frames, (size_t)(r->nframes + 1) * sizeof *r->frames);
  r->frames[r->nframes].comp = c;
  r->frames[r->nframes].st = *st;
  memset(st, 0, sizeof *st);
  return r->nframes++;
}

static const vstate *eval_while(vr_ctx *r, const tr_instr *in) {
  for (int i = 0; i < r->nloops; i++)
    if (r->loops[i].id == in->id && r->loops[i].fr == r->fr) return &r->loops[i].st;
  const tr_attr *ca = attr(in, TR_ATTR_CONDITION), *ba = attr(in, TR_ATTR_BODY);
  if (!ca || !ba || !ca->u.comp || !ba->u.comp) { bad(r, in, "a while without its computations"); return NULL; }
  vstate st = {0};
  if (!state_of(r, in->operands[0], &st)) return NULL;
  int outer = r->fr;
  for (int trip = 0;; trip++) {
    if (trip == VR_LOOP_TRIPS) { vstate_free(&st); bad(r, in, "a while running past 100000 trips"); return NULL; }
    vstate cs = {0};
    cs.n = st.n;
    cs.leaf = tr_xcalloc((size_t)st.n + 1, sizeof *cs.leaf);
    cs.count = tr_xcalloc((size_t)st.n + 1, sizeof *cs.count);
    for (int j = 0; j < st.n; j++) {
      cs.count[j] = st.count[j];
      cs.leaf[j] = tr_xmalloc(((size_t)st.count[j] + 1) * sizeof **cs.leaf);
      memcpy(cs.leaf[j], st.leaf[j], (size_t)st.count[j] * sizeof **cs.leaf);
    }
    r->fr = push_frame(r, ca->u.comp, &cs);
    vx *c = el(r, ca->u.comp->root, 0);
    r->fr = outer;
    if (!c) { vstate_free(&st); return NULL; }
    if (c->kind != VX_CONST) {
      vstate_free(&st);
      bad(r, ca->u.comp->root, "a while condition that depends on data");
      return NULL;
    }
    if (c->c == 0) break;
    r->fr = push_frame(r, ba->u.comp, &st);
    int fr = r->fr;
    vstate next = {0};
    bool ok = state_of(r, ba->u.comp->root, &next);
    (void)fr;
    r->fr = outer;
    if (!ok) return NULL;
    st = next;
  }
  r->loops = tr_xrealloc(r->loops, (size_t)(r->nloops + 1) * sizeof *r->loops);
  r->loops[r->nloops].id = in->id;
  r->loops[r->nloops].fr = r->fr;
  r->loops[r->nloops].st = st;
  return &r->loops[r->nloops++].st;
}

/* The leaves of a tuple-valued (or array) instruction in the current
 * frame, materialised: a tuple's operands, the frame's parameter, a
 * while's final state; an array is one leaf. */
static bool state_of(vr_ctx *r, const tr_instr *in, vstate *st) {
  memset(st, 0, sizeof *st);
  const vframe *F = &r->frames[r->fr];
  const vstate *src = NULL;
  if (in->op == TR_OP_PARAMETER && in->parent != r->m->entry && in->parent == F->comp) src = &F->st;
  else if (in->op == TR_OP_WHILE) { if (!(src = eval_while(r, in))) return false; }
  if (src) {
    st->n = src->n;
    st->leaf = tr_xcalloc((size_t)src->n + 1, sizeof *st->leaf);
    st->count = tr_xcalloc((size_t)src->n + 1, sizeof *st->count);
    for (int j = 0; j < src->n; j++) {
      st->count[j] = src->count[j];
      st->leaf[j] = tr_xmalloc(((size_t)src->count[j] + 1) * sizeof **st->leaf);
      memcpy(st->leaf[j], src->leaf[j], (size_t)src->count[j] * sizeof **st->leaf);
    }
    return true;
  }
  int n = in->op == TR_OP_TUPLE ? in->noperands : 1;
  if (in->op != TR_OP_TUPLE && !tr_shape_is_array(in->shape)) { bad(r, in, "tuple values other than tuple, while and parameters"); return false; }
  st->n = n;
  st->leaf = tr_xcalloc((size_t)n + 1, sizeof *st->leaf);
  st->count = tr_xcalloc((size_t)n + 1, sizeof *st->count);
  for (int j = 0; j < n; j++) {
    const tr_instr *x = in->op == TR_OP_TUPLE ? in->operands[j] : in;
    if (!tr_shape_is_array(x->shape)) { vstate_free(st); bad(r, x, "nested tuples"); return false; }
    if (!(st->leaf[j] = all_elems(r, x, &st->count[j]))) { vstate_free(st); return false; }
  }
  return true;
}

static vx *tuple_elem(vr_ctx *r, const tr_instr *in, int64_t flat) {
  const tr_instr *t = in->operands[0];
  const tr_attr *ia = attr(in, TR_ATTR_INDEX);
  int64_t k = ia ? ia->u.i : 0;
  if (t->op == TR_OP_TUPLE) return k < t->noperands ? el(r, t->operands[k], flat) : bad(r, in, "an index past the tuple");
  const vstate *src = NULL;
  const vframe *F = &r->frames[r->fr];
  if (t->op == TR_OP_PARAMETER && t->parent != r->m->entry && t->parent == F->comp) src = &F->st;
  else if (t->op == TR_OP_WHILE) src = eval_while(r, t);
  else return bad(r, in, "a get-tuple-element of this operand");
  if (!src) return NULL;
  if (k >= src->n || flat >= src->count[k]) return bad(r, in, "an index past the tuple");
  return src->leaf[k][flat];
}

/* scatter as the exact interpreter applies it (eval_gather.c): the scatter
 * positions in row-major order, a window that would leave the operand
 * skipped whole; the element's value is the operand's combined, in that
 * order, with every update element that lands on it. Indices must be
 * concrete. The combiner is add, maximum, minimum, multiply or the
 * update itself (a reducer returning its second parameter). */
static vx *scatter(vr_ctx *r, const tr_instr *in, int64_t flat) {
  if (in->noperands != 3) return bad(r, in, "a variadic scatter");
  const tr_instr *X = in->operands[0], *G = in->operands[1], *U = in->operands[2];
  const tr_attr *ta = attr(in, TR_ATTR_TO_APPLY);
  const tr_instr *root = ta && ta->u.comp ? ta->u.comp->root : NULL;
  bool assign = root && root->op == TR_OP_PARAMETER && root->param_index == 1;
  tr_op op = assign ? TR_OP_COUNT : reducer(in);
  if (!assign && op == TR_OP_COUNT) return bad(r, in, "a scatter whose combiner is not add, maximum, minimum, multiply or assignment");
  int xr = X->shape->rank, ir = G->shape->rank, ur = U->shape->rank;
  int nuw = attr_n(in, TR_ATTR_UPDATE_WINDOW_DIMS), nsd = attr_n(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS);
  int nb = attr_n(in, TR_ATTR_INPUT_BATCHING_DIMS);
  const tr_attr *ivd = attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t iv = ivd ? ivd->u.i : ir;
  int64_t xi[TR_TENSOR_MAX_RANK], usd[TR_TENSOR_MAX_RANK], usz[TR_TENSOR_MAX_RANK], wop[TR_TENSOR_MAX_RANK];
  int64_t sc[TR_TENSOR_MAX_RANK] = {0}, sidx[TR_TENSOR_MAX_RANK] = {0}, start[TR_TENSOR_MAX_RANK], ui[TR_TENSOR_MAX_RANK];
  unflat(X->shape, flat, xi);
  int nsc = 0;
  for (int d = 0; d < ur; d++)
    if (!attr_has(in, TR_ATTR_UPDATE_WINDOW_DIMS, d)) { usd[nsc] = d; usz[nsc++] = U->shape->dims[d]; }
  for (int d = 0, j = 0; d < xr; d++)
    if (!attr_has(in, TR_ATTR_INSERTED_WINDOW_DIMS, d) && !attr_has(in, TR_ATTR_INPUT_BATCHING_DIMS, d) && j < nuw) wop[j++] = d;
  vx *acc = el(r, X, flat);
  if (!acc) return NULL;
  for (int q = 0; q < nsc; q++) if (usz[q] <= 0) return acc;
  for (int q = 0; q < nuw; q++) if (U->shape->dims[attr_i(in, TR_ATTR_UPDATE_WINDOW_DIMS, q)] <= 0) return acc;
  for (;;) {
    int j = 0;
    for (int q = 0; q < nsc; q++) { if (j == iv) j++; sidx[j++] = sc[q]; }
    for (int d = 0; d < xr; d++) start[d] = 0;
    for (int k = 0; k < nsd; k++) {
      if (iv < ir) sidx[iv] = k;
      int64_t v;
      if (!concrete_int(r, G, sidx, &v)) return NULL;
      start[attr_i(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, k)] = v;
    }
    for (int k = 0; k < nb; k++)
      start[attr_i(in, TR_ATTR_INPUT_BATCHING_DIMS, k)] = sidx[attr_i(in, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, k)];
    bool fits = true, hits = true;
    for (int d = 0; d < xr && fits; d++) {
      int64_t size = 1, w = -1;
      for (int q = 0; q < nuw; q++)
        if (wop[q] == d) { size = U->shape->dims[attr_i(in, TR_ATTR_UPDATE_WINDOW_DIMS, q)]; w = q; }
      fits = start[d] >= 0 && start[d] <= X->shape->dims[d] - size;
      int64_t off = xi[d] - start[d];
      if (w < 0) hits &= off == 0;
      else { hits &= off >= 0 && off < size; ui[attr_i(in, TR_ATTR_UPDATE_WINDOW_DIMS, w)] = off; }
    }
    if (fits && hits) {
      for (int q = 0; q < nsc; q++) ui[usd[q]] = sc[q];
      vx *u = at(r, U, ui);
      if (!u) return NULL;
      vx *pair[2] = {acc, u};
      acc = assign ? u : combine_dt(r, op, in->shape->dtype, pair, 2);
    }
    int q = nsc - 1;
    while (q >= 0 && ++sc[q] == usz[q]) sc[q--] = 0;
    if (q < 0) break;
  }
  return acc;
}

static vx *el_uncached(vr_ctx *r, const tr_instr *in, int64_t flat) {
  vx_ctx *c = r->cx;
  const tr_shape *s = in->shape;
  int64_t idx[TR_TENSOR_MAX_RANK], oi[TR_TENSOR_MAX_RANK];
  /* ops.def's y column is the set of ops modelled here: the rest are
   * declined by name before any rule is tried */
  if (!tr_op_can(in->op, TR_MODE_SYMBOLIC)) return bad(r, in, tr_ops[in->op].name);
  if (!tr_shape_is_array(s)) return bad(r, in, "tuple values");
  unflat(s, flat, idx);
  switch (in->op) {
  case TR_OP_GET_TUPLE_ELEMENT: return tuple_elem(r, in, flat);
  case TR_OP_PARAMETER: {
    int64_t p = in->param_index;
    if (in->parent != r->m->entry) {
      const vframe *F = &r->frames[r->fr];
      if (in->parent != F->comp || F->st.n != 1) return bad(r, in, "parameters of called computations");
      return F->st.leaf[0][flat];
    }
    if (tr_dtype_is_float(s->dtype)) return vx_sym(c, p, flat);
    const tr_tensor *t = r->ints ? r->ints[p] : NULL;
    if (t) {
      int64_t v = tr_tensor_get_i(t, (size_t)flat);
      return is_bv(s->dtype) ? vx_bvconst(c, (uint64_t)v, bw(s->dtype)) : vx_const(c, v != 0);
    }
    /* integer data: a bitvector symbol; pred: a 1-bit one, true when 1 */
    if (s->dtype == TR_DT_PRED) return vx_bv(c, BV_EQ, 0, vx_bvsym(c, p, flat, 1), vx_bvconst(c, 1, 1));
    if (is_bv(s->dtype)) return vx_bvsym(c, p, flat, bw(s->dtype));
    return bad(r, in, "a parameter of this type");
  }
  case TR_OP_CONSTANT: {
    const tr_literal *l = in->literal;
    if (!l || l->elided || !l->data) return bad(r, in, "an elided constant");
    tr_tensor t = {s->dtype, s->rank, s->dims, l->data, 0};
    t.nbytes = (size_t)tr_shape_count(s) * tr_dtype_size(s->dtype);
    if (is_bv(s->dtype)) return vx_bvconst(c, (uint64_t)tr_tensor_get_i(&t, (size_t)flat), bw(s->dtype));
    if (s->dtype == TR_DT_PRED) return vx_const(c, tr_tensor_get_i(&t, (size_t)flat) != 0);
    return vx_const(c, tr_tensor_get_f(&t, (size_t)flat));
  }
  case TR_OP_IOTA: {
    const tr_attr *a = attr(in, TR_ATTR_IOTA_DIMENSION);
    if (is_bv(s->dtype)) return vx_bvconst(c, (uint64_t)idx[a ? a->u.i : 0], bw(s->dtype));
    return vx_const(c, (double)idx[a ? a->u.i : 0]);
  }
  case TR_OP_BROADCAST: {
    const tr_instr *x = in->operands[0];
    for (int k = 0; k < x->shape->rank; k++) oi[k] = idx[attr_i(in, TR_ATTR_DIMENSIONS, k)];
    return at(r, x, oi);
  }
  case TR_OP_RESHAPE: case TR_OP_BITCAST:
    if (in->op == TR_OP_BITCAST && in->operands[0]->shape->dtype != s->dtype) return bad(r, in, "a bitcast changing type");
    return opnd_el(r, in, 0, flat);
  case TR_OP_TRANSPOSE:
    for (int k = 0; k < s->rank; k++) oi[attr_i(in, TR_ATTR_DIMENSIONS, k)] = idx[k];
    return at(r, in->operands[0], oi);
  case TR_OP_SLICE: {
    const tr_attr *a = attr(in, TR_ATTR_SLICE);
    for (int k = 0; k < s->rank; k++) oi[k] = a->u.slice[k].start + idx[k] * a->u.slice[k].stride;
    return at(r, in->operands[0], oi);
  }
  case TR_OP_REVERSE: {
    const tr_instr *x = in->operands[0];
    for (int k = 0; k < s->rank; k++) oi[k] = attr_has(in, TR_ATTR_DIMENSIONS, k) ? s->dims[k] - 1 - idx[k] : idx[k];
    return at(r, x, oi);
  }
  case TR_OP_PAD: {
    const tr_attr *a = attr(in, TR_ATTR_PADDING);
    const tr_instr *x = in->operands[0];
    for (int k = 0; k < s->rank; k++) {
      int64_t p = idx[k] - a->u.pad[k].lo, step = a->u.pad[k].interior + 1;
      if (p < 0 || p % step || p / step >= x->shape->dims[k]) return el(r, in->operands[1], 0);
      oi[k] = p / step;
    }
    return at(r, x, oi);
  }
  case TR_OP_CONCATENATE: {
    int64_t dim = attr_i(in, TR_ATTR_DIMENSIONS, 0), p = idx[dim];
    for (int j = 0; j < in->noperands; j++) {
      const tr_instr *x = in->operands[j];
      if (p < x->shape->dims[dim]) {
        memcpy(oi, idx, sizeof(int64_t) * (size_t)s->rank);
        oi[dim] = p;
        return at(r, x, oi);
      }
      p -= x->shape->dims[dim];
    }
    return bad(r, in, "a concatenate index past its operands");
  }
  case TR_OP_DYNAMIC_SLICE: {
    const tr_instr *x = in->operands[0];
    for (int k = 0; k < s->rank; k++) {
      int64_t st;
      int64_t zero[1] = {0};
      if (!concrete_int(r, in->operands[1 + k], zero, &st)) return NULL;
      int64_t hi = x->shape->dims[k] - s->dims[k];
      st = st < 0 ? 0 : st > hi ? hi : st;
      oi[k] = st + idx[k];
    }
    return at(r, x, oi);
  }
  case TR_OP_REDUCE: return reduce(r, in, flat);
  case TR_OP_REDUCE_WINDOW: return reduce_window(r, in, flat);
  case TR_OP_DOT: return dot(r, in, flat);
  case TR_OP_CONVOLUTION: return convolution(r, in, flat);
  case TR_OP_GATHER: return gather(r, in, flat);
  case TR_OP_SCATTER: return scatter(r, in, flat);
  default:
    if (tr_ops[in->op].flags & TR_OPF_E || in->op == TR_OP_SELECT || in->op == TR_OP_CLAMP ||
        in->op == TR_OP_COMPARE || in->op == TR_OP_CONVERT)
      return elementwise(r, in, flat);
    return bad(r, in, tr_ops[in->op].name);
  }
}

static vx *el(vr_ctx *r, const tr_instr *in, int64_t flat) {
  if (r->bad) return NULL;
  vx *v = memo_get(r, in->id, r->fr, flat);
  if (v) return v;
  v = el_uncached(r, in, flat);
  /* a float computed from constants only is rounded to its type, as the
   * evaluator rounds every result (data stays over the reals) */
  if (v && v->kind == VX_CONST && tr_dtype_is_float(in->shape->dtype) && isfinite(v->c))
    v = vx_const(r->cx, tr_float_to_double(in->shape->dtype, tr_float_from_double(in->shape->dtype, v->c)));
  if (v) memo_put(r, in->id, r->fr, flat, v);
  return v;
}

vx *vr_elem(vr_ctx *r, int out, int64_t flat, tr_diag *d) {
  r->d = d;
  return el(r, r->outs[out], flat);
}
