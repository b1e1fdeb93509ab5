/* gen_ops.c - the generator's op makers: for each opcode, how to choose
 * its operands (from the pool, converted, broadcast or new) and its
 * attributes so that shape inference accepts it. gen_makers is the table
 * keyed by opcode; a new op is its ops.def row (weight) plus a maker here.
 * Every maker returns the new instruction or NULL (the driver then tries
 * another op); helpers it makes on the way join the pool. */
#include "genint.h"

#include <stdlib.h>
#include <string.h>


/* n dims from src (a rank-0 shape has no dims array at all). */
static void copy_dims(int64_t *dst, const int64_t *src, int n) {
  if (n > 0) memcpy(dst, src, sizeof(int64_t) * (size_t)n);
}


/* Elementwise ops the reference evaluates on complex values (the rest
 * take real operands only). */
static bool cplx_op(tr_op op) {
  switch (op) {
  case TR_OP_ABS: case TR_OP_NEGATE: case TR_OP_SIGN: case TR_OP_EXPONENTIAL:
  case TR_OP_EXPONENTIAL_MINUS_ONE: case TR_OP_LOG: case TR_OP_LOG_PLUS_ONE: case TR_OP_SQRT:
  case TR_OP_RSQRT: case TR_OP_TANH: case TR_OP_LOGISTIC: case TR_OP_SINE: case TR_OP_COSINE:
  case TR_OP_TAN: case TR_OP_ADD: case TR_OP_SUBTRACT: case TR_OP_MULTIPLY: case TR_OP_DIVIDE:
    return true;
  default: return false;
  }
}

/* An operand for op: a pool value in op's type class (ops.def types
 * column), converted when it is not. Unsigned values are refused where
 * XLA wants a sign (abs, sign). */
static tr_instr *operand_for(gen_ctx *g, tr_op op) {
  gen_class k = gen_class_of(tr_ops[op].types);
  bool cplx = cplx_op(op) && gen_chance(g, 50);
  /* a value already of the class when the pool has one: conversions
   * (pred to float and back) lose the information checks need */
  tr_instr *x = gen_pick(g);
  for (int tries = 0; tries < 6 && !gen_in_class(x->shape->dtype, k); tries++) x = gen_pick(g);
  x = gen_to_class(g, x, k, cplx);
  for (int tries = 0; x && tries < 4 && (op == TR_OP_ABS || op == TR_OP_SIGN) &&
                      tr_dtypes[x->shape->dtype].kind == TR_DK_UINT;
       tries++) {
    tr_dtype dt = gen_dtype(g, k, cplx);
    x = dt == TR_DT_COUNT ? NULL : gen_to_dtype(g, x, dt);
  }
  if (x && (op == TR_OP_ABS || op == TR_OP_SIGN) && tr_dtypes[x->shape->dtype].kind == TR_DK_UINT)
    return NULL;
  return x;
}

/* ---- elementwise ---- */
static tr_instr *in_domain(gen_ctx *g, tr_op op, tr_instr *x, int arg);

static tr_instr *mk_unary(gen_ctx *g, tr_op op) {
  tr_instr *x = in_domain(g, op, operand_for(g, op), 0);
  if (!x) return NULL;
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  if (op == TR_OP_REDUCE_PRECISION) {
    static const int64_t eb[] = {1, 2, 4, 5, 5, 8, 8, 11};
    static const int64_t mb[] = {0, 1, 3, 10, 2, 7, 23, 52};
    int i = (int)gen_below(g, TR_NELEMS(eb));
    tr_build_int(in, TR_ATTR_EXPONENT_BITS, eb[i]);
    tr_build_int(in, TR_ATTR_MANTISSA_BITS, mb[i]);
  }
  tr_shape *decl = NULL;
  if (op == TR_OP_COPY && x->shape->rank > 1 && !(g->o->flags & TR_GEN_NO_LAYOUTS) &&
      gen_chance(g, 50)) {
    /* a copy that changes the layout, as layout assignment inserts */
    int64_t m2m[8];
    decl = tr_shape_clone(g->m->arena, x->shape);
    gen_perm(g, m2m, x->shape->rank);
    tr_shape_set_layout(g->m->arena, decl, m2m);
  }
  return gen_end(g, in, decl);
}

/* Most of the time an op with a restricted domain gets operands inside
 * it (log of |x|, a shift by less than the width), so its output says
 * something; the rest of the time it meets NaN and saturation. */
static tr_instr *in_domain(gen_ctx *g, tr_op op, tr_instr *x, int arg) {
  if (!x || !gen_chance(g, 70)) return x;
  tr_dtype dt = x->shape->dtype;
  bool flt = tr_dtype_is_float(dt);
  tr_instr *y = NULL;
  switch (op) {
  case TR_OP_LOG: case TR_OP_SQRT: case TR_OP_RSQRT: case TR_OP_LOG_PLUS_ONE:
    if (flt) y = tr_build_unary(g->c, TR_OP_ABS, x, &g->why);
    break;
  case TR_OP_POWER:
    if (flt && arg == 0) y = tr_build_unary(g->c, TR_OP_ABS, x, &g->why);
    break;
  case TR_OP_SHIFT_LEFT: case TR_OP_SHIFT_RIGHT_ARITHMETIC: case TR_OP_SHIFT_RIGHT_LOGICAL:
    if (arg == 1 && tr_dtype_is_int(dt)) {
      tr_instr *m = gen_scalar_const(g, dt, (double)(tr_dtypes[dt].bits - 1));
      int64_t none = 0;
      tr_instr *b = tr_build_broadcast(g->c, m, x->shape->dims, x->shape->rank, &none, &g->why);
      y = b ? tr_build_binary(g->c, TR_OP_AND, x, b, &g->why) : NULL;
    }
    break;
  default: break;
  }
  if (!y) return x;
  gen_push(g, y);
  return y;
}

static tr_instr *mk_binary(gen_ctx *g, tr_op op) {
  tr_instr *x = in_domain(g, op, operand_for(g, op), 0);
  if (!x) return NULL;
  /* x + x and x * x (squares) now and then; other ops of x with itself
   * are constant or uncertain */
  bool self = (op == TR_OP_ADD || op == TR_OP_MULTIPLY) && gen_chance(g, 5);
  tr_instr *y = self ? x : in_domain(g, op, gen_partner(g, x, x->shape->dtype), 1);
  return y ? tr_build_binary(g->c, op, x, y, &g->why) : NULL;
}

static tr_instr *mk_compare(gen_ctx *g, tr_op op) {
  static const char *dirs[] = {"EQ", "NE", "LT", "GT", "LE", "GE"};
  tr_instr *x = gen_pick(g);
  bool cplx = gen_is_cplx(x->shape->dtype);
  tr_instr *y = gen_partner(g, x, x->shape->dtype);
  if (!y) return NULL;
  tr_instr *ops[2] = {x, y};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  /* EQ and NE of unrelated values are nearly always false and true */
  int d = cplx ? (int)gen_below(g, 2) : gen_chance(g, 15) ? (int)gen_below(g, 2) : 2 + (int)gen_below(g, 4);
  tr_build_ident(in, TR_ATTR_DIRECTION, dirs[d]);
  if (tr_dtype_is_float(x->shape->dtype) && gen_chance(g, 25)) tr_build_ident(in, TR_ATTR_TYPE, "TOTALORDER");
  return gen_end(g, in, NULL);
}

static tr_instr *mk_select(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  tr_instr *p = gen_pred_like(g, x);
  tr_instr *y = p ? gen_partner(g, x, x->shape->dtype) : NULL;
  if (!y) return NULL;
  tr_instr *ops[3] = {p, x, y};
  return gen_end(g, tr_build_begin(g->c, op, ops, 3), NULL);
}

static tr_instr *mk_clamp(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_to_class(g, gen_pick(g), GC_NUM, false);
  if (!x) return NULL;
  tr_dtype dt = x->shape->dtype;
  tr_instr *lo, *hi;
  if (gen_chance(g, 50)) {
    /* scalar bounds around the data (inputs are mostly within +-3),
     * lo <= hi most of the time (lo > hi is defined too) */
    double a = -(double)gen_below(g, 5) / 2, b = (double)gen_below(g, 5) / 2;
    if (gen_chance(g, 10)) {
      double t = a;
      a = b + 1;
      b = t;
    }
    lo = gen_scalar_const(g, dt, a);
    hi = gen_scalar_const(g, dt, b);
  } else {
    lo = gen_partner(g, x, dt);
    hi = lo ? gen_partner(g, x, dt) : NULL;
  }
  if (!hi) return NULL;
  tr_instr *ops[3] = {lo, x, hi};
  return gen_end(g, tr_build_begin(g->c, op, ops, 3), NULL);
}

/* ---- shape and data movement ---- */
static tr_instr *mk_broadcast(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  const tr_shape *s = x->shape;
  int extra = 1 + (int)gen_below(g, 2);
  if (s->rank + extra > 7) return NULL;
  int rank = s->rank + extra;
  /* operand dims go to increasing result positions (as XLA requires for
   * broadcast in HLO), the rest are new */
  int64_t pos[8], map[8], dims[8];
  gen_perm(g, pos, rank);
  for (int i = 0; i < s->rank; i++) map[i] = pos[i];
  for (int i = 1; i < s->rank; i++)
    for (int j = i; j > 0 && map[j - 1] > map[j]; j--) {
      int64_t t = map[j];
      map[j] = map[j - 1];
      map[j - 1] = t;
    }
  int64_t count = tr_shape_count(s) > 0 ? tr_shape_count(s) : 1;
  for (int d = 0; d < rank; d++) dims[d] = 0;
  for (int d = 0, k = 0; d < rank; d++) {
    if (k < s->rank && map[k] == d) {
      dims[d] = s->dims[k++];
    } else {
      dims[d] = gen_dim(g);
      if (count * (dims[d] ? dims[d] : 1) > 4096) dims[d] = 1 + gen_below(g, 3);
      count *= dims[d] ? dims[d] : 1;
    }
  }
  return tr_build_broadcast(g->c, x, dims, rank, map, &g->why);
}

/* New dims with the same element count: merge neighbours, split a dim,
 * add or drop size-1 dims, or flatten. */
static int reshape_dims(gen_ctx *g, const tr_shape *s, int64_t *dims) {
  int rank = s->rank;
  copy_dims(dims, s->dims, rank);
  int steps = 1 + (int)gen_below(g, 2);
  for (int k = 0; k < steps; k++) {
    int r = (int)gen_below(g, 5);
    if (r == 0 && rank >= 2) {
      int i = (int)gen_below(g, rank - 1);
      dims[i] *= dims[i + 1];
      memmove(dims + i + 1, dims + i + 2, sizeof(int64_t) * (size_t)(rank - i - 2));
      rank--;
    } else if (r == 1 && rank >= 1 && rank < 7) {
      int i = (int)gen_below(g, rank);
      int64_t d = dims[i], f = 0;
      for (int64_t q = 2; q * q <= d; q++)
        if (d % q == 0) {
          f = q;
          if (gen_chance(g, 50)) break;
        }
      if (!f) continue;
      memmove(dims + i + 2, dims + i + 1, sizeof(int64_t) * (size_t)(rank - i - 1));
      dims[i] = d / f;
      dims[i + 1] = f;
      rank++;
    } else if (r == 2 && rank < 7) {
      int i = (int)gen_below(g, rank + 1);
      memmove(dims + i + 1, dims + i, sizeof(int64_t) * (size_t)(rank - i));
      dims[i] = 1;
      rank++;
    } else if (r == 3) {
      for (int i = 0; i < rank; i++)
        if (dims[i] == 1) {
          memmove(dims + i, dims + i + 1, sizeof(int64_t) * (size_t)(rank - i - 1));
          rank--;
          break;
        }
    } else if (rank > 1) {
      int64_t n = 1;
      for (int i = 0; i < rank; i++) n *= dims[i];
      dims[0] = n;
      rank = 1;
    }
  }
  return rank;
}

static tr_instr *mk_reshape(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  int64_t dims[8];
  int rank = reshape_dims(g, x->shape, dims);
  if (op == TR_OP_BITCAST) {
    /* a bitcast is a reshape only between default (row-major) layouts */
    if (x->shape->has_layout || gen_is_cplx(x->shape->dtype)) return NULL;
    return gen_end(g, tr_build_begin(g->c, op, &x, 1), tr_shape_array(g->m->arena, x->shape->dtype, rank, dims));
  }
  return tr_build_reshape(g->c, x, dims, rank, &g->why);
}

/* Rewrite patterns: an op's operand is sometimes made by the op a
 * simplifier or fusion pass looks for in front of it (a transpose of a
 * reshape, a slice of a pad or concatenate, a reduce of a broadcast, a dot
 * of a transpose). */
static tr_instr *producer(gen_ctx *g, gen_maker mk, tr_op op) {
  tr_instr *x = mk(g, op);
  if (!x) return gen_pick(g);
  gen_push(g, x);
  return x;
}

static tr_instr *mk_transpose(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_chance(g, 30) ? producer(g, mk_reshape, TR_OP_RESHAPE) : gen_pick(g);
  int64_t perm[8];
  gen_perm(g, perm, x->shape->rank);
  return tr_build_transpose(g->c, x, perm, &g->why);
}

static tr_instr *mk_pad(gen_ctx *g, tr_op op);
static tr_instr *mk_concatenate(gen_ctx *g, tr_op op);

/* A slice or window size along a dim of n: the whole dim 30 % of the
 * time, rarely 0 (an empty result tells nothing), else 1..n. */
static int64_t part_size(gen_ctx *g, int64_t n) {
  if (n == 0 || gen_chance(g, 30)) return n;
  return gen_chance(g, 3) ? 0 : 1 + gen_below(g, n);
}

static tr_instr *mk_slice(gen_ctx *g, tr_op op) {
  int r = (int)gen_below(g, 100);
  tr_instr *x = r < 15 ? producer(g, mk_pad, TR_OP_PAD)
                : r < 30 ? producer(g, mk_concatenate, TR_OP_CONCATENATE) : gen_pick(g);
  const tr_shape *s = x->shape;
  tr_slice_dim sl[8];
  const tr_attr *pa = x->op == TR_OP_PAD ? tr_instr_attr(x, TR_ATTR_PADDING) : NULL;
  bool grid = pa && pa->n == s->rank && gen_chance(g, 50);
  for (int d = 0; d < s->rank; d++) {
    int64_t n = s->dims[d];
    /* mostly non-empty: an empty slice tells nothing */
    sl[d].start = gen_chance(g, 40) || n == 0 ? 0 : gen_below(g, gen_chance(g, 3) ? n + 1 : n);
    sl[d].limit = gen_chance(g, 40) ? n : sl[d].start + part_size(g, n - sl[d].start);
    sl[d].stride = gen_chance(g, 70) ? 1 : 2 + gen_below(g, 3);
    int64_t m = grid ? x->operands[0]->shape->dims[d] : 0;
    if (grid && m > 0) {
      /* a slice of a pad that starts on its operand's grid (where a
       * simplifier folds it into a slice of the operand), with strides
       * that are and are not multiples of the grid step; a negative low
       * padding crops the grid's first points */
      int64_t q = pa->u.pad[d].interior + 1, lo = pa->u.pad[d].lo;
      int64_t first = lo < 0 ? (-lo + q - 1) / q : 0;
      int64_t last = lo + (m - 1) * q < n - 1 ? lo + (m - 1) * q : n - 1;
      int64_t start = lo + (first + gen_below(g, m - first)) * q;
      if (start > last) continue;
      sl[d].start = start;
      sl[d].stride = 1 + gen_below(g, 2 * q + 1);
      int64_t most = (last - start) / sl[d].stride + 1;
      int64_t cnt = gen_chance(g, 70) ? most : 1 + gen_below(g, most);
      sl[d].limit = start + (cnt - 1) * sl[d].stride + 1;
    }
  }
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  tr_build_slice(in, sl, s->rank);
  return gen_end(g, in, NULL);
}

/* A start index for a dimension of size n read in pieces of size k:
 * a value the inputs choose (a parameter, input percent of the time), or
 * a constant in bounds, at the boundary, past it (clamped), negative or
 * extreme. */
/* An index computed from the data: one element of an integer value made
 * so far, converted to it. Nothing bounds it, so it is often out of range
 * (clamped) and never a constant the compiler could fold. NULL when the
 * pool has no such value. */
static tr_instr *data_index(gen_ctx *g, tr_dtype it) {
  tr_instr *x = NULL;
  for (int k = g->npool - 1; k >= 0 && !x; k--) {
    tr_instr *y = g->pool[k];
    if (tr_shape_is_array(y->shape) && tr_dtype_is_int(y->shape->dtype) && y->op != TR_OP_CONSTANT &&
        tr_shape_count(y->shape) > 0 && gen_chance(g, 50))
      x = y;
  }
  if (!x) return NULL;
  tr_slice_dim sl[8];
  for (int d = 0; d < x->shape->rank; d++) {
    sl[d].start = gen_below(g, x->shape->dims[d]);
    sl[d].limit = sl[d].start + 1;
    sl[d].stride = 1;
  }
  tr_instr *in = tr_build_begin(g->c, TR_OP_SLICE, &x, 1);
  tr_build_slice(in, sl, x->shape->rank);
  tr_instr *e = tr_build_end(in, NULL, &g->why);
  tr_instr *v = e ? tr_build_reshape(g->c, e, NULL, 0, &g->why) : NULL;
  return v ? gen_to_dtype(g, v, it) : NULL;
}

static tr_instr *start_index(gen_ctx *g, tr_dtype it, int64_t n, int64_t k, int input) {
  if (!g->consts_only && g->depth == 0 && gen_chance(g, input)) {
    tr_instr *v = gen_chance(g, 30) ? data_index(g, it) : NULL;
    return v ? v : gen_leaf(g, gen_scalar(g, it));
  }
  int r = (int)gen_below(g, 100);
  int64_t v;
  if (r < 47) v = gen_below(g, n - k + 1);
  else if (r < 65) v = n - k;
  else if (r < 79) v = n - k + 1 + gen_below(g, 5);
  else if (r < 93) v = -1 - gen_below(g, 3);
  else v = tr_dtypes[it].kind == TR_DK_SINT ? tr_int_min(it) : (int64_t)(tr_int_max(it) >> 1) + 1; /* top bit */
  /* An unsigned start is never negative: a "negative" one is its two's
   * complement pattern (the top bit set; -1 is the type's max), what an
   * index computation that wrapped hands over and what a compiler that
   * reads the start as signed gets wrong. */
  if (tr_dtypes[it].kind == TR_DK_UINT && v < 0) v = (int64_t)(tr_int_max(it) + 1 - (uint64_t)-v);
  return gen_scalar_const(g, it, (double)v);
}

static tr_dtype index_type(gen_ctx *g) {
  static const tr_dtype t[] = {TR_DT_S32, TR_DT_S32, TR_DT_S64, TR_DT_U32, TR_DT_S8, TR_DT_U8};
  return t[gen_below(g, TR_NELEMS(t))];
}

static tr_instr *mk_dynamic_slice(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  const tr_shape *s = x->shape;
  tr_instr *ops[9];
  int64_t sizes[8];
  tr_dtype it = index_type(g);
  ops[0] = x;
  /* nested dynamic-slices read their starts from the inputs more often,
   * so that neither folds into a static slice */
  int input = x->op == TR_OP_DYNAMIC_SLICE ? 60 : 25;
  for (int d = 0; d < s->rank; d++) {
    sizes[d] = part_size(g, s->dims[d]);
    ops[1 + d] = start_index(g, it, s->dims[d], sizes[d], input);
  }
  tr_instr *in = tr_build_begin(g->c, op, ops, 1 + s->rank);
  tr_build_ints(in, TR_ATTR_DYNAMIC_SLICE_SIZES, sizes, s->rank);
  return gen_end(g, in, NULL);
}

static tr_instr *mk_dynamic_update_slice(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  const tr_shape *s = x->shape;
  int64_t sizes[8];
  for (int d = 0; d < s->rank; d++) sizes[d] = part_size(g, s->dims[d]);
  tr_instr *u = NULL;
  /* the update: a value of that shape from the pool, else a new leaf */
  for (int k = g->npool - 1; k >= 0 && !u; k--) {
    tr_instr *y = g->pool[k];
    if (y != x && tr_shape_is_array(y->shape) && y->shape->rank == s->rank) {
      bool fits = true;
      for (int d = 0; d < s->rank; d++) fits &= y->shape->dims[d] <= s->dims[d];
      if (fits && gen_chance(g, 60)) {
        u = gen_to_dtype(g, y, s->dtype);
        if (u) copy_dims(sizes, y->shape->dims, s->rank);
      }
    }
  }
  if (!u) u = gen_leaf(g, tr_shape_array(g->m->arena, s->dtype, s->rank, sizes));
  tr_instr *ops[10];
  tr_dtype it = index_type(g);
  ops[0] = x;
  ops[1] = u;
  for (int d = 0; d < s->rank; d++) ops[2 + d] = start_index(g, it, s->dims[d], sizes[d], 15);
  return gen_end(g, tr_build_begin(g->c, op, ops, 2 + s->rank), NULL);
}

static tr_instr *mk_concatenate(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  const tr_shape *s = x->shape;
  if (s->rank == 0) return NULL;
  int dim = (int)gen_below(g, s->rank);
  int n = 2 + (int)gen_below(g, 2);
  tr_instr *ops[4] = {x};
  if (g->op_ok[TR_OP_SLICE] && s->dims[dim] >= 3 && gen_chance(g, 25)) {
    /* slices of x along dim, adjacent, one apart or overlapping by one:
     * the concatenates of slices that simplifiers merge into one slice */
    int64_t full = s->dims[dim], at = gen_below(g, 2);
    for (int i = 0; i < n; i++) {
      int64_t len = 1 + gen_below(g, full / n);
      if (at + len > full) len = full - at;
      if (len <= 0) return NULL;
      tr_slice_dim sd[8];
      for (int d = 0; d < s->rank; d++) sd[d] = (tr_slice_dim){0, s->dims[d], 1};
      sd[dim].start = at;
      sd[dim].limit = at + len;
      tr_instr *sl = tr_build_begin(g->c, TR_OP_SLICE, &x, 1);
      tr_build_slice(sl, sd, s->rank);
      if (!(ops[i] = gen_end(g, sl, NULL))) return NULL;
      at += len + gen_below(g, 3) - 1;
    }
  }
  for (int i = 1; i < n && ops[0] == x; i++) {
    tr_instr *y = NULL;
    for (int k = g->npool - 1; k >= 0 && !y; k--) {
      tr_instr *c = g->pool[k];
      if (!tr_shape_is_array(c->shape) || c->shape->rank != s->rank || c->shape->dtype != s->dtype) continue;
      bool ok = true;
      for (int d = 0; d < s->rank; d++) ok &= d == dim || c->shape->dims[d] == s->dims[d];
      if (ok && gen_chance(g, 50)) y = c;
    }
    if (!y) {
      int64_t dims[8];
      copy_dims(dims, s->dims, s->rank);
      dims[dim] = gen_dim(g);
      if (dims[dim] > 33) dims[dim] = 1 + gen_below(g, 8);
      y = gen_leaf(g, tr_shape_array(g->m->arena, s->dtype, s->rank, dims));
    }
    ops[i] = y;
  }
  tr_instr *in = tr_build_begin(g->c, op, ops, n);
  int64_t d = dim;
  tr_build_ints(in, TR_ATTR_DIMENSIONS, &d, 1);
  return gen_end(g, in, NULL);
}

static tr_instr *mk_pad(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  const tr_shape *s = x->shape;
  /* a rank-0 pad would print "padding=" with no spec, which no parser reads */
  if (s->rank == 0) return NULL;
  tr_pad_dim pd[8];
  int64_t count = 1;
  for (int d = 0; d < s->rank; d++) {
    int64_t n = s->dims[d];
    pd[d].interior = gen_chance(g, 75) || n < 2 ? 0 : 1 + gen_below(g, 2);
    int64_t full = n + (n > 0 ? (n - 1) * pd[d].interior : 0);
    pd[d].lo = gen_below(g, 4) - (gen_chance(g, 20) ? gen_below(g, full / 2 + 1) : 0);
    pd[d].hi = gen_below(g, 4) - (gen_chance(g, 20) ? gen_below(g, full / 2 + 1) : 0);
    if (full + pd[d].lo + pd[d].hi < 0) pd[d].lo = pd[d].hi = 0;
    count *= full + pd[d].lo + pd[d].hi;
  }
  if (count > 65536) return NULL;
  tr_instr *ops[2] = {x, NULL};
  tr_shape *ps = gen_scalar(g, s->dtype);
  ops[1] = gen_chance(g, 70) ? gen_constant(g, ps) : gen_leaf(g, ps);
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  tr_build_padding(in, pd, s->rank);
  return gen_end(g, in, NULL);
}

static tr_instr *mk_reverse(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  int64_t dims[8];
  int n = 0;
  for (int d = 0; d < x->shape->rank; d++)
    if (gen_chance(g, 50)) dims[n++] = d;
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  tr_build_ints(in, TR_ATTR_DIMENSIONS, dims, n);
  return gen_end(g, in, NULL);
}

static tr_instr *mk_iota(gen_ctx *g, tr_op op) {
  int64_t dims[8];
  int rank = 1 + (int)gen_below(g, 3);
  gen_dims(g, rank, dims, 1024);
  tr_dtype dt = gen_dtype(g, GC_NUM, gen_chance(g, 10));
  if (dt == TR_DT_COUNT) return NULL;
  tr_instr *in = tr_build_begin(g->c, op, NULL, 0);
  /* along a dim of size 1 an iota is all zeros: prefer a longer one */
  int64_t id = gen_below(g, rank);
  for (int tries = 0; tries < 4 && dims[id] < 2; tries++) id = gen_below(g, rank);
  tr_build_int(in, TR_ATTR_IOTA_DIMENSION, id);
  return gen_end(g, in, tr_shape_array(g->m->arena, dt, rank, dims));
}

static tr_instr *mk_constant(gen_ctx *g, tr_op op) {
  int64_t dims[8];
  int rank = gen_rank(g);
  gen_dims(g, rank, dims, 256);
  tr_dtype dt = gen_dtype(g, GC_ANY, gen_chance(g, 20));
  if (dt == TR_DT_COUNT) return NULL;
  return gen_constant(g, tr_shape_array(g->m->arena, dt, rank, dims));
}

/* ---- gather and scatter ---- */
/* Index values for k start positions per row into dims lim (each the
 * operand size less the slice size): in bounds, on the edge, past it,
 * negative, repeated rows (duplicates). */
static tr_instr *index_array(gen_ctx *g, tr_dtype it, const tr_shape *is, const int64_t *lim,
                             const int64_t *map, int k, int ivd) {
  if (!g->consts_only && g->depth == 0 && gen_chance(g, 15)) return gen_leaf(g, is);
  int64_t n = tr_shape_count(is);
  size_t es = (size_t)tr_dtype_size(it);
  unsigned char *data = tr_xcalloc((size_t)(n > 0 ? n : 1), es);
  /* the element's position along the index vector dimension decides
   * which operand dimension it indexes */
  int64_t stride = 1;
  for (int d = is->rank - 1; d > ivd; d--) stride *= is->dims[d];
  bool dup = gen_chance(g, 15), copy = false;
  for (int64_t i = 0; i < n; i++) {
    int j = ivd < is->rank ? (int)((i / stride) % (k ? k : 1)) : 0;
    /* duplicates: a whole index row repeats the one before it */
    if (j == 0) copy = dup && i >= k && gen_chance(g, 30);
    if (copy) {
      memcpy(data + i * es, data + (i - k) * es, es);
      continue;
    }
    int64_t hi = lim[map[j]], v;
    int r = (int)gen_below(g, 100);
    if (r < 65) v = gen_below(g, hi + 1);
    else if (r < 75) v = hi;
    else if (r < 85) v = hi + 1 + gen_below(g, 3);
    else v = -1 - gen_below(g, 2);
    if (tr_dtypes[it].kind == TR_DK_UINT && v < 0) v = hi + 2;
    memcpy(data + i * es, &v, es);
  }
  tr_instr *in = tr_build_constant(g->c, is, data);
  tr_free(data);
  return in;
}

/* Shared choices: an operand, which dims are indexed (map, k of them),
 * which of those are collapsed/inserted (size-1 windows), window sizes,
 * and the batch dims of the indices. */
typedef struct {
  tr_instr *x;
  int rank, k, ncol, nb, ivd;
  int64_t map[8], col[8], win[8], lim[8], bdims[4];
} gen_index;

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

static bool choose_index(gen_ctx *g, gen_index *ix, tr_instr *x, int single) {
  const tr_shape *s = x->shape;
  if (s->rank < 1 || s->rank > 7 || tr_shape_count(s) <= 0) return false;
  memset(ix, 0, sizeof *ix);
  ix->x = x;
  ix->rank = s->rank;
  int64_t perm[8];
  gen_perm(g, perm, s->rank);
  ix->k = 1 + (int)gen_below(g, s->rank);
  for (int i = 0; i < ix->k; i++) ix->map[i] = perm[i];
  for (int i = 0; i < ix->k; i++)
    if (gen_chance(g, 60)) ix->col[ix->ncol++] = ix->map[i];
  /* collapsed dims are listed in increasing order */
  for (int i = 1; i < ix->ncol; i++)
    for (int j = i; j > 0 && ix->col[j - 1] > ix->col[j]; j--) {
      int64_t t = ix->col[j];
      ix->col[j] = ix->col[j - 1];
      ix->col[j - 1] = t;
    }
  for (int d = 0; d < s->rank; d++) {
    ix->win[d] = has(ix->col, ix->ncol, d) ? 1 : 1 + gen_below(g, s->dims[d]);
    ix->lim[d] = s->dims[d] - ix->win[d];
  }
  /* one index (a single window, the form rewrites turn into slices,
   * dynamic-update-slices and pads) single percent of the time */
  ix->nb = gen_chance(g, single) ? 0 : 1 + (int)gen_below(g, 2);
  for (int i = 0; i < ix->nb; i++) ix->bdims[i] = 1 + gen_below(g, 5);
  ix->ivd = ix->nb; /* index vector last */
  return true;
}

static tr_instr *make_indices(gen_ctx *g, gen_index *ix) {
  int64_t dims[8];
  for (int i = 0; i < ix->nb; i++) dims[i] = ix->bdims[i];
  dims[ix->nb] = ix->k;
  tr_dtype it = gen_chance(g, 70) ? TR_DT_S32 : gen_chance(g, 50) ? TR_DT_S64 : TR_DT_U32;
  return index_array(g, it, tr_shape_array(g->m->arena, it, ix->nb + 1, dims), ix->lim, ix->map, ix->k, ix->nb);
}

static tr_instr *mk_gather(gen_ctx *g, tr_op op) {
  gen_index ix;
  if (!choose_index(g, &ix, gen_pick(g), 33)) return NULL;
  /* offset dims: the non-collapsed window dims, at the end of the result
   * or first; ranks stay within 0..7 */
  int noff = ix.rank - ix.ncol, rr = ix.nb + noff;
  if (rr > 7) return NULL;
  tr_instr *ops[2] = {ix.x, make_indices(g, &ix)};
  int64_t off[8];
  bool front = gen_chance(g, 30);
  for (int i = 0; i < noff; i++) off[i] = front ? i : rr - noff + i;
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  tr_build_ints(in, TR_ATTR_OFFSET_DIMS, off, noff);
  tr_build_ints(in, TR_ATTR_COLLAPSED_SLICE_DIMS, ix.col, ix.ncol);
  tr_build_ints(in, TR_ATTR_START_INDEX_MAP, ix.map, ix.k);
  tr_build_int(in, TR_ATTR_INDEX_VECTOR_DIM, ix.ivd);
  tr_build_ints(in, TR_ATTR_SLICE_SIZES, ix.win, ix.rank);
  return gen_end(g, in, NULL);
}

/* A scatter combiner: commutative ones anywhere; "overwrite" and a
 * non-commutative formula only where indices are unique (the order of
 * duplicate updates is unspecified). */
static tr_comp *scatter_comp(gen_ctx *g, tr_dtype dt, bool unique) {
  if (unique && gen_chance(g, 15)) {
    tr_comp *k = tr_build_comp(g->m, gen_comp_name(g, "combine"), false);
    tr_instr *a = tr_build_param(k, gen_scalar(g, dt)), *b = tr_build_param(k, gen_scalar(g, dt));
    tr_instr *r = b;
    if (dt != TR_DT_PRED && gen_chance(g, 50)) {
      tr_instr *bb = tr_build_binary(k, TR_OP_MULTIPLY, b, b, NULL);
      r = bb ? tr_build_binary(k, TR_OP_SUBTRACT, bb, a, NULL) : NULL;
      if (!r) r = b;
    }
    tr_build_root(k, r);
    return k;
  }
  return gen_binary_comp(g, gen_reducer_op(g, dt), dt);
}

static tr_instr *mk_scatter(gen_ctx *g, tr_op op) {
  gen_index ix;
  tr_instr *x = gen_pick(g);
  if (gen_is_cplx(x->shape->dtype) || !choose_index(g, &ix, x, 50)) return NULL;
  tr_instr *idx = make_indices(g, &ix);
  /* updates: batch dims then the window dims of the non-inserted dims */
  int64_t ud[8];
  int nu = 0, nw = 0;
  int64_t uw[8];
  for (int i = 0; i < ix.nb; i++) ud[nu++] = ix.bdims[i];
  for (int d = 0; d < ix.rank; d++)
    if (!has(ix.col, ix.ncol, d)) {
      uw[nw++] = nu;
      ud[nu++] = ix.win[d];
    }
  if (nu > 7) return NULL;
  tr_instr *u = gen_leaf(g, tr_shape_array(g->m->arena, x->shape->dtype, nu, ud));
  bool unique = idx->op == TR_OP_CONSTANT && tr_shape_count(idx->shape) <= ix.k;
  tr_instr *ops[3] = {x, idx, u};
  tr_instr *in = tr_build_begin(g->c, op, ops, 3);
  tr_build_ints(in, TR_ATTR_UPDATE_WINDOW_DIMS, uw, nw);
  tr_build_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, ix.col, ix.ncol);
  tr_build_ints(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, ix.map, ix.k);
  tr_build_int(in, TR_ATTR_INDEX_VECTOR_DIM, ix.ivd);
  tr_build_callee(in, TR_ATTR_TO_APPLY, scatter_comp(g, x->shape->dtype, unique));
  if (unique) tr_build_bool(in, TR_ATTR_UNIQUE_INDICES, true);
  return gen_end(g, in, NULL);
}

/* ---- reductions and windows ---- */
/* The init value of a reducer: its identity. XLA defines reduce and
 * reduce-window only for a monoid (jax.lax.reduce: "init_values must be an
 * identity of computation ... if violated the result is undefined"): XLA
 * CPU drops a non-identity init where a reduced dim has size 1. */
static tr_instr *init_for(gen_ctx *g, tr_op red, tr_dtype dt) {
  double v = red == TR_OP_MULTIPLY || red == TR_OP_AND ? 1 : 0;
  if (red == TR_OP_MAXIMUM) v = tr_dtype_is_float(dt) ? -1e308 : (double)tr_int_min(dt);
  if (red == TR_OP_MINIMUM) v = tr_dtype_is_float(dt) ? 1e308 : (double)tr_int_max(dt);
  if (dt == TR_DT_PRED) v = red == TR_OP_AND;
  if (tr_dtype_is_float(dt) && (red == TR_OP_MAXIMUM || red == TR_OP_MINIMUM))
    v = tr_float_has_inf(dt) ? (red == TR_OP_MAXIMUM ? -1.0 / 0.0 : 1.0 / 0.0)
                             : (red == TR_OP_MAXIMUM ? -tr_float_max(dt) : tr_float_max(dt));
  return gen_scalar_const(g, dt, v);
}

/* A compare in a total order for floats (NaN and -0 have their places),
 * so reducers and comparators built on it are deterministic. */
static tr_instr *total_compare(tr_comp *k, tr_instr *a, tr_instr *b, const char *dir) {
  tr_instr *ops[2] = {a, b};
  tr_instr *in = tr_build_begin(k, TR_OP_COMPARE, ops, 2);
  tr_build_ident(in, TR_ATTR_DIRECTION, dir);
  if (tr_dtype_is_float(a->shape->dtype)) tr_build_ident(in, TR_ATTR_TYPE, "TOTALORDER");
  return tr_build_end(in, NULL, NULL);
}

static tr_instr *mk_reduce(gen_ctx *g, tr_op op) {
  tr_instr *x;
  if (!(g->o->flags & TR_GEN_NO_BIG) && g->depth == 0 && gen_chance(g, 3)) {
    /* past the row counts where compilers switch to tree reductions */
    static const int64_t rows[] = {16385, 20011, 32769, 40000};
    int64_t dims[2] = {rows[gen_below(g, 4)], 1 + gen_below(g, 3)};
    x = gen_leaf(g, tr_shape_array(g->m->arena, TR_DT_F32, 1 + (int)gen_below(g, 2), dims));
  } else {
    x = gen_chance(g, 25) ? producer(g, mk_broadcast, TR_OP_BROADCAST) : gen_pick(g);
  }
  if (x->shape->rank == 0) return NULL;
  tr_dtype dt = x->shape->dtype;
  int64_t dims[8];
  int n = 0;
  for (int d = 0; d < x->shape->rank; d++)
    if (gen_chance(g, 50)) dims[n++] = d;
  if (!n) dims[n++] = gen_below(g, x->shape->rank);
  if (x->op == TR_OP_BROADCAST && x->noperands == 1 && x->operands[0]->shape->rank < x->shape->rank &&
      gen_chance(g, 80)) {
    /* a reduce of a broadcast over dims the broadcast added: the pattern
     * simplifiers turn into a multiply (reducing the old dims would leave
     * copies of one value) */
    const tr_attr *bm = tr_instr_attr(x, TR_ATTR_DIMENSIONS);
    n = 0;
    for (int d = 0; d < x->shape->rank; d++)
      if (!bm || !has(bm->u.ints, bm->n, d)) dims[n++] = d;
  }
  if (tr_shape_count(x->shape) > 10000) {
    n = 1;
    dims[0] = 0;
  }
  tr_op red = gen_reducer_op(g, dt);
  if (gen_chance(g, 15) && !gen_is_cplx(dt) && x->shape->rank >= 1) {
    /* variadic: the value and its position (argmax/argmin) */
    tr_instr *io = tr_build_begin(g->c, TR_OP_IOTA, NULL, 0);
    tr_build_int(io, TR_ATTR_IOTA_DIMENSION, dims[0]);
    io = gen_end(g, io, tr_shape_array(g->m->arena, TR_DT_S32, x->shape->rank, x->shape->dims));
    if (!io) return NULL;
    gen_push(g, io);
    tr_comp *k = tr_build_comp(g->m, gen_comp_name(g, "argbest"), false);
    tr_instr *av = tr_build_param(k, gen_scalar(g, dt)), *ai = tr_build_param(k, gen_scalar(g, TR_DT_S32));
    tr_instr *bv = tr_build_param(k, gen_scalar(g, dt)), *bi = tr_build_param(k, gen_scalar(g, TR_DT_S32));
    bool mx = gen_chance(g, 50);
    tr_instr *lt = total_compare(k, av, bv, mx ? "GT" : "LT");
    tr_instr *eq = total_compare(k, av, bv, "EQ");
    tr_instr *il = tr_build_compare(k, ai, bi, "LT", NULL);
    tr_instr *tie = tr_build_binary(k, TR_OP_AND, eq, il, NULL);
    tr_instr *take = tr_build_binary(k, TR_OP_OR, lt, tie, NULL);
    tr_instr *s1[3] = {take, av, bv}, *s2[3] = {take, ai, bi};
    tr_instr *rv = tr_build_end(tr_build_begin(k, TR_OP_SELECT, s1, 3), NULL, NULL);
    tr_instr *ri = tr_build_end(tr_build_begin(k, TR_OP_SELECT, s2, 3), NULL, NULL);
    tr_instr *rr[2] = {rv, ri};
    tr_build_root(k, tr_build_tuple(k, rr, 2, NULL));
    tr_instr *ops[4] = {x, io, init_for(g, mx ? TR_OP_MAXIMUM : TR_OP_MINIMUM, dt),
                        gen_scalar_const(g, TR_DT_S32, 0)};
    tr_instr *in = tr_build_begin(g->c, op, ops, 4);
    tr_build_ints(in, TR_ATTR_DIMENSIONS, dims, 1);
    tr_build_callee(in, TR_ATTR_TO_APPLY, k);
    in = gen_end(g, in, NULL);
    if (!in) return NULL;
    gen_push(g, in);
    return tr_build_gte(g->c, in, gen_below(g, 2), &g->why);
  }
  tr_instr *ops[2] = {x, init_for(g, red, dt)};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  tr_build_ints(in, TR_ATTR_DIMENSIONS, dims, n);
  tr_build_callee(in, TR_ATTR_TO_APPLY, gen_binary_comp(g, red, dt));
  return gen_end(g, in, NULL);
}

static void choose_window(gen_ctx *g, const tr_shape *s, tr_window_dim *w, bool dilate) {
  for (int d = 0; d < s->rank; d++) {
    memset(&w[d], 0, sizeof w[d]);
    w[d].size = 1 + gen_below(g, s->dims[d] < 3 ? s->dims[d] + 1 : 3);
    w[d].stride = 1 + gen_below(g, 2);
    w[d].pad_lo = gen_chance(g, 30) ? gen_below(g, 2) : 0;
    w[d].pad_hi = gen_chance(g, 30) ? gen_below(g, 2) : 0;
    w[d].lhs_dilate = dilate && gen_chance(g, 15) ? 2 : 1;
    w[d].rhs_dilate = dilate && gen_chance(g, 15) ? 2 : 1;
  }
}

static tr_instr *mk_reduce_window(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  if (x->shape->rank > 4 || gen_is_cplx(x->shape->dtype)) return NULL;
  tr_dtype dt = x->shape->dtype;
  tr_window_dim w[8];
  choose_window(g, x->shape, w, true);
  tr_op red = gen_reducer_op(g, dt);
  tr_instr *ops[2] = {x, init_for(g, red, dt)};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  if (x->shape->rank) tr_build_window(in, w, x->shape->rank);
  tr_build_callee(in, TR_ATTR_TO_APPLY, gen_binary_comp(g, red, dt));
  return gen_end(g, in, NULL);
}

static tr_instr *mk_select_and_scatter(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_to_class(g, gen_pick(g), GC_NUM, false);
  if (!x || x->shape->rank < 1 || x->shape->rank > 4) return NULL;
  tr_dtype dt = x->shape->dtype;
  const tr_shape *s = x->shape;
  tr_window_dim w[8];
  choose_window(g, s, w, false);
  int64_t od[8];
  for (int d = 0; d < s->rank; d++) {
    int64_t span = s->dims[d] + w[d].pad_lo + w[d].pad_hi;
    od[d] = span < w[d].size ? 0 : (span - w[d].size) / w[d].stride + 1;
  }
  tr_instr *src = gen_leaf(g, tr_shape_array(g->m->arena, dt, s->rank, od));
  tr_comp *sel = tr_build_comp(g->m, gen_comp_name(g, "select"), false);
  tr_instr *a = tr_build_param(sel, gen_scalar(g, dt)), *b = tr_build_param(sel, gen_scalar(g, dt));
  tr_build_root(sel, tr_build_compare(sel, a, b, gen_chance(g, 50) ? "GE" : "LE", NULL));
  /* the result starts as init everywhere: any value is defined here */
  tr_instr *ops[3] = {x, src, gen_constant(g, gen_scalar(g, dt))};
  tr_instr *in = tr_build_begin(g->c, op, ops, 3);
  tr_build_window(in, w, s->rank);
  tr_build_callee(in, TR_ATTR_SELECT, sel);
  tr_build_callee(in, TR_ATTR_SCATTER, gen_binary_comp(g, TR_OP_ADD, dt));
  return gen_end(g, in, NULL);
}

/* ---- contractions ---- */
static tr_dtype contraction_type(gen_ctx *g, tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (dt == TR_DT_PRED) return TR_DT_COUNT;
  return dt;
}

static tr_instr *mk_dot(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_chance(g, 20) ? producer(g, mk_transpose, TR_OP_TRANSPOSE) : gen_pick(g);
  const tr_shape *s = x->shape;
  tr_dtype dt = contraction_type(g, x);
  if (dt == TR_DT_COUNT || s->rank > 4) return NULL;
  /* roles of lhs dims: batch, contracting or free */
  int64_t perm[8], lb[4], lc[4], rb[4], rc[4];
  int nb = 0, nc = 0;
  gen_perm(g, perm, s->rank);
  for (int i = 0; i < s->rank; i++) {
    int r = (int)gen_below(g, 3);
    if (r == 0 && nb < 2) lb[nb++] = perm[i];
    else if (r == 1 && nc < 2 && s->dims[perm[i]] > 0) lc[nc++] = perm[i]; /* an empty sum is 0 */
  }
  /* rhs: batch dims first or anywhere, contracting dims, free dims */
  int nfree = (int)gen_below(g, 3), rrank = nb + nc + nfree;
  int64_t rd[8], rp[8];
  gen_perm(g, rp, rrank);
  int k = 0;
  for (int i = 0; i < nb; i++) {
    rb[i] = rp[k++];
    rd[rb[i]] = s->dims[lb[i]];
  }
  for (int i = 0; i < nc; i++) {
    rc[i] = rp[k++];
    rd[rc[i]] = s->dims[lc[i]];
  }
  int64_t count = 1;
  for (int i = 0; i < rrank; i++)
    if (!has(rb, nb, i) && !has(rc, nc, i)) {
      rd[i] = gen_dim(g);
      if (rd[i] > 33) rd[i] = 1 + gen_below(g, 9);
    }
  for (int i = 0; i < rrank; i++) count *= rd[i] ? rd[i] : 1;
  if (count > 8192) return NULL;
  /* The result (lhs batch and free dims, rhs free dims) as the other
   * makers bound theirs: an outer product of a large lhs made a 35
   * million element s64 result that ran 20 s on builtin. */
  int64_t out = 1;
  for (int i = 0; i < s->rank; i++)
    if (!has(lc, nc, i)) out *= s->dims[i] ? s->dims[i] : 1;
  for (int i = 0; i < rrank; i++)
    if (!has(rb, nb, i) && !has(rc, nc, i)) out *= rd[i] ? rd[i] : 1;
  if (out > 65536) return NULL;
  tr_instr *y = NULL;
  for (int j = g->npool - 1; j >= 0 && !y; j--) {
    tr_instr *c = g->pool[j];
    if (tr_shape_is_array(c->shape) && c->shape->dtype == dt && c->shape->rank == rrank &&
        (rrank == 0 || !memcmp(c->shape->dims, rd, sizeof(int64_t) * (size_t)rrank)))
      y = c;
  }
  if (!y) y = gen_leaf(g, tr_shape_array(g->m->arena, dt, rrank, rd));
  tr_instr *ops[2] = {x, y};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  if (nb) {
    tr_build_ints(in, TR_ATTR_LHS_BATCH_DIMS, lb, nb);
    tr_build_ints(in, TR_ATTR_RHS_BATCH_DIMS, rb, nb);
  }
  if (nc || gen_chance(g, 50)) {
    tr_build_ints(in, TR_ATTR_LHS_CONTRACTING_DIMS, lc, nc);
    tr_build_ints(in, TR_ATTR_RHS_CONTRACTING_DIMS, rc, nc);
  }
  /* bf16/f16 products with an f32 result, as mixed-precision models do */
  tr_shape *decl = NULL;
  if ((dt == TR_DT_BF16 || dt == TR_DT_F16) && gen_chance(g, 40)) {
    decl = tr_shape_array(g->m->arena, TR_DT_F32, 0, NULL);
  }
  if (decl) {
    /* the result dims come from inference; only the type is preferred */
    tr_instr *probe = gen_end(g, in, NULL);
    if (!probe) return NULL;
    probe->shape->dtype = TR_DT_F32;
    return probe;
  }
  return gen_end(g, in, NULL);
}

/* A convolution's input of dims xd: a leaf, or (a third of the time) a
 * crop of a larger one, a slice along the spatial dims sp that rewrites
 * fold into the window's padding. */
static tr_instr *conv_input(gen_ctx *g, tr_dtype dt, int rank, const int64_t *xd, const int64_t *sp, int ns) {
  if (ns == 0 || !gen_chance(g, 50)) return gen_leaf(g, tr_shape_array(g->m->arena, dt, rank, xd));
  int64_t big[5];
  tr_slice_dim sl[5];
  copy_dims(big, xd, rank);
  for (int d = 0; d < rank; d++) {
    sl[d].start = 0;
    sl[d].limit = xd[d];
    sl[d].stride = 1;
  }
  for (int i = 0; i < ns; i++) {
    /* cut from the start, the end or both (a halo trimmed off) */
    int r = (int)gen_below(g, 4);
    int64_t d = sp[i], a = r != 1 ? 1 + gen_below(g, 3) : 0, b = r >= 2 ? 1 + gen_below(g, 2) : 0;
    big[d] = xd[d] + a + b;
    sl[d].start = a;
    sl[d].limit = a + xd[d];
  }
  tr_instr *x = gen_leaf(g, tr_shape_array(g->m->arena, dt, rank, big));
  tr_instr *in = tr_build_begin(g->c, TR_OP_SLICE, &x, 1);
  tr_build_slice(in, sl, rank);
  tr_instr *y = tr_build_end(in, NULL, &g->why);
  if (!y) return gen_leaf(g, tr_shape_array(g->m->arena, dt, rank, xd));
  gen_push(g, y);
  return y;
}

static tr_instr *mk_convolution(gen_ctx *g, tr_op op) {
  /* In a chain the input is the previous result (a convolution of a
   * slice, a pad, a transpose, ...) when it has rank 3 to 5 and a small
   * feature dim; else a leaf or a crop of one. */
  tr_instr *x = g->prefer;
  g->prefer = NULL;
  if (x && !(tr_shape_is_array(x->shape) && x->shape->rank >= 3 && x->shape->rank <= 5 &&
             (tr_dtype_is_float(x->shape->dtype) || tr_dtype_is_int(x->shape->dtype)) &&
             tr_shape_count(x->shape) > 0 && tr_shape_count(x->shape) <= 8192))
    x = NULL;
  tr_dtype dt = x ? x->shape->dtype : gen_dtype(g, GC_NUM, gen_chance(g, 10));
  if (dt == TR_DT_COUNT) return NULL;
  int ns = (int)gen_below(g, 4);
  if (ns == 3 && gen_chance(g, 50)) ns = 1;
  if (x) ns = x->shape->rank - 2;
  int rank = ns + 2;
  int64_t fg = 1, bg = 1;
  int r = x ? 9 : (int)gen_below(g, 10);
  if (r == 0) fg = 2 + gen_below(g, 2);
  else if (r == 1) bg = 2;
  int64_t batch = (1 + gen_below(g, 3)) * bg, kin = 1 + gen_below(g, 4);
  int64_t kout = (1 + gen_below(g, 3)) * fg * bg, feat = kin * fg;
  int64_t sp[3], ks[3];
  for (int i = 0; i < ns; i++) {
    sp[i] = 1 + gen_below(g, 9);
    ks[i] = 1 + gen_below(g, 3);
  }
  /* dim_labels: random positions for every role */
  int64_t ip[5], kp[5], op_[5];
  gen_perm(g, ip, rank);
  gen_perm(g, kp, rank);
  gen_perm(g, op_, rank);
  tr_convdims cd;
  int64_t isp[3], ksp[3], osp[3];
  cd.nspatial = ns;
  cd.in_batch = ip[0];
  cd.in_feature = ip[1];
  cd.k_in = kp[0];
  cd.k_out = kp[1];
  cd.out_batch = op_[0];
  cd.out_feature = op_[1];
  for (int i = 0; i < ns; i++) {
    isp[i] = ip[2 + i];
    ksp[i] = kp[2 + i];
    osp[i] = op_[2 + i];
  }
  cd.in_spatial = isp;
  cd.k_spatial = ksp;
  cd.out_spatial = osp;
  if (x) {
    batch = x->shape->dims[ip[0]];
    kin = feat = x->shape->dims[ip[1]];
    if (feat > 16) return NULL;
    for (int i = 0; i < ns; i++) {
      sp[i] = x->shape->dims[isp[i]];
      ks[i] = 1 + gen_below(g, sp[i] < 3 ? sp[i] : 3);
    }
  }
  int64_t xd[5], kd[5];
  xd[cd.in_batch] = batch;
  xd[cd.in_feature] = feat;
  kd[cd.k_in] = kin;
  kd[cd.k_out] = kout;
  tr_window_dim w[3];
  for (int i = 0; i < ns; i++) {
    xd[isp[i]] = sp[i];
    kd[ksp[i]] = ks[i];
    memset(&w[i], 0, sizeof w[i]);
    w[i].size = ks[i];
    w[i].stride = gen_chance(g, 70) ? 1 : 2;
    w[i].pad_lo = gen_below(g, 3) - (gen_chance(g, 10) ? 1 : 0);
    w[i].pad_hi = gen_below(g, 3);
    w[i].lhs_dilate = gen_chance(g, 15) ? 2 : 1;
    w[i].rhs_dilate = gen_chance(g, 15) ? 2 : 1;
  }
  tr_instr *ops[2] = {x ? x : conv_input(g, dt, rank, xd, isp, ns),
                      gen_leaf(g, tr_shape_array(g->m->arena, dt, rank, kd))};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  tr_build_window(in, w, ns);
  tr_build_convdims(in, &cd);
  if (fg > 1 || gen_chance(g, 10)) tr_build_int(in, TR_ATTR_FEATURE_GROUP_COUNT, fg);
  if (bg > 1) tr_build_int(in, TR_ATTR_BATCH_GROUP_COUNT, bg);
  return gen_end(g, in, NULL);
}

/* ---- sort and top-k ---- */
static tr_instr *mk_sort(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  if (x->shape->rank < 1 || gen_is_cplx(x->shape->dtype)) return NULL;
  int n = 1 + (int)gen_below(g, 3);
  tr_instr *ops[3] = {x};
  for (int i = 1; i < n; i++) {
    tr_dtype dt = gen_dtype(g, GC_ANY, false);
    if (dt == TR_DT_COUNT) return NULL;
    ops[i] = gen_partner(g, x, dt);
    if (!ops[i]) return NULL;
  }
  /* comparator: the first operand's order (total order for floats, so
   * NaNs and -0 sort the same everywhere), ties broken by the second */
  tr_comp *k = tr_build_comp(g->m, gen_comp_name(g, "compare"), false);
  tr_instr *p[6];
  for (int i = 0; i < n; i++) {
    p[2 * i] = tr_build_param(k, gen_scalar(g, ops[i]->shape->dtype));
    p[2 * i + 1] = tr_build_param(k, gen_scalar(g, ops[i]->shape->dtype));
  }
  const char *dir = gen_chance(g, 50) ? "LT" : "GT";
  tr_instr *c0 = tr_build_begin(k, TR_OP_COMPARE, p, 2);
  tr_build_ident(c0, TR_ATTR_DIRECTION, dir);
  if (tr_dtype_is_float(ops[0]->shape->dtype)) tr_build_ident(c0, TR_ATTR_TYPE, "TOTALORDER");
  c0 = tr_build_end(c0, NULL, NULL);
  tr_instr *root = c0;
  if (n > 1 && c0 && gen_chance(g, 50) && ops[1]->shape->dtype != TR_DT_PRED) {
    tr_instr *eq = tr_build_begin(k, TR_OP_COMPARE, p, 2);
    tr_build_ident(eq, TR_ATTR_DIRECTION, "EQ");
    if (tr_dtype_is_float(ops[0]->shape->dtype)) tr_build_ident(eq, TR_ATTR_TYPE, "TOTALORDER");
    eq = tr_build_end(eq, NULL, NULL);
    tr_instr *c1 = tr_build_begin(k, TR_OP_COMPARE, p + 2, 2);
    tr_build_ident(c1, TR_ATTR_DIRECTION, "LT");
    if (tr_dtype_is_float(ops[1]->shape->dtype)) tr_build_ident(c1, TR_ATTR_TYPE, "TOTALORDER");
    c1 = tr_build_end(c1, NULL, NULL);
    tr_instr *s[3] = {eq, c1, c0};
    tr_instr *sel = eq && c1 ? tr_build_end(tr_build_begin(k, TR_OP_SELECT, s, 3), NULL, NULL) : NULL;
    if (sel) root = sel;
  }
  if (!root) return NULL;
  tr_build_root(k, root);
  tr_instr *in = tr_build_begin(g->c, op, ops, n);
  int64_t dim = gen_below(g, x->shape->rank);
  tr_build_ints(in, TR_ATTR_DIMENSIONS, &dim, 1);
  /* equal keys keep their order only when stable: the other operands
   * would differ otherwise */
  tr_build_bool(in, TR_ATTR_IS_STABLE, true);
  tr_build_callee(in, TR_ATTR_TO_APPLY, k);
  in = gen_end(g, in, NULL);
  if (!in || n == 1) return in;
  gen_push(g, in);
  return tr_build_gte(g->c, in, gen_below(g, n), &g->why);
}

static tr_instr *mk_topk(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_to_class(g, gen_pick(g), GC_NUM, false);
  if (!x || x->shape->rank < 1) return NULL;
  int64_t last = x->shape->dims[x->shape->rank - 1];
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  tr_build_int(in, TR_ATTR_K, gen_chance(g, 20) ? last : gen_below(g, last + 1));
  tr_build_bool(in, TR_ATTR_LARGEST, gen_chance(g, 70));
  in = gen_end(g, in, NULL);
  if (!in) return NULL;
  gen_push(g, in);
  return tr_build_gte(g->c, in, gen_below(g, 2), &g->why);
}

/* ---- linear algebra ---- */
/* An identity matrix of dt and size n: convert(iota == iota). */
static tr_instr *identity(gen_ctx *g, tr_dtype dt, int64_t n) {
  int64_t d[2] = {n, n};
  tr_shape *s = tr_shape_array(g->m->arena, TR_DT_S32, 2, d);
  tr_instr *i0 = tr_build_begin(g->c, TR_OP_IOTA, NULL, 0);
  tr_build_int(i0, TR_ATTR_IOTA_DIMENSION, 0);
  i0 = gen_end(g, i0, s);
  tr_instr *i1 = tr_build_begin(g->c, TR_OP_IOTA, NULL, 0);
  tr_build_int(i1, TR_ATTR_IOTA_DIMENSION, 1);
  i1 = gen_end(g, i1, s);
  tr_instr *eq = i0 && i1 ? tr_build_compare(g->c, i0, i1, "EQ", &g->why) : NULL;
  return eq ? tr_build_convert(g->c, eq, dt, &g->why) : NULL;
}

/* A well-conditioned square matrix: x + (n + 2) * I, or x x^T + n * I
 * (positive definite) when spd. */
static tr_instr *square_matrix(gen_ctx *g, tr_dtype dt, int64_t n, bool spd) {
  int64_t d[2] = {n, n};
  tr_instr *x = gen_leaf(g, tr_shape_array(g->m->arena, dt, 2, d));
  if (spd) {
    tr_instr *ops[2] = {x, x};
    tr_instr *dot = tr_build_begin(g->c, TR_OP_DOT, ops, 2);
    int64_t one = 1;
    tr_build_ints(dot, TR_ATTR_LHS_CONTRACTING_DIMS, &one, 1);
    tr_build_ints(dot, TR_ATTR_RHS_CONTRACTING_DIMS, &one, 1);
    x = gen_end(g, dot, NULL);
    if (!x) return NULL;
  }
  tr_instr *id = identity(g, dt, n);
  int64_t none = 0;
  tr_instr *c = gen_scalar_const(g, dt, (double)(n + 2) * (spd ? 4 : 1));
  tr_instr *b = id && c ? tr_build_broadcast(g->c, c, d, 2, &none, &g->why) : NULL;
  tr_instr *sc = b ? tr_build_binary(g->c, TR_OP_MULTIPLY, id, b, &g->why) : NULL;
  return sc ? tr_build_binary(g->c, TR_OP_ADD, x, sc, &g->why) : NULL;
}

static tr_instr *mk_cholesky(gen_ctx *g, tr_op op) {
  tr_dtype dt = gen_chance(g, 50) ? TR_DT_F32 : TR_DT_F64;
  if (!g->dt_ok[dt]) return NULL;
  tr_instr *a = square_matrix(g, dt, 1 + gen_below(g, 6), true);
  if (!a) return NULL;
  tr_instr *in = tr_build_begin(g->c, op, &a, 1);
  tr_build_bool(in, TR_ATTR_LOWER, gen_chance(g, 50));
  return gen_end(g, in, NULL);
}

static tr_instr *mk_triangular_solve(gen_ctx *g, tr_op op) {
  tr_dtype dt = gen_chance(g, 50) ? TR_DT_F32 : TR_DT_F64;
  if (!g->dt_ok[dt]) return NULL;
  int64_t n = 1 + gen_below(g, 6), m = 1 + gen_below(g, 5);
  bool left = gen_chance(g, 50);
  tr_instr *a = square_matrix(g, dt, n, false);
  if (!a) return NULL;
  int64_t bd[2] = {left ? n : m, left ? m : n};
  tr_instr *ops[2] = {a, gen_leaf(g, tr_shape_array(g->m->arena, dt, 2, bd))};
  tr_instr *in = tr_build_begin(g->c, op, ops, 2);
  tr_build_bool(in, TR_ATTR_LEFT_SIDE, left);
  tr_build_bool(in, TR_ATTR_LOWER, gen_chance(g, 50));
  tr_build_bool(in, TR_ATTR_UNIT_DIAGONAL, gen_chance(g, 10));
  tr_build_ident(in, TR_ATTR_TRANSPOSE_A, gen_chance(g, 50) ? "NO_TRANSPOSE" : "TRANSPOSE");
  return gen_end(g, in, NULL);
}

/* ---- fft ---- */
/* A transform over the last one or two axes of a fresh leaf (lengths up
 * to 8, a batch axis or none), of each fft_type. */
static tr_instr *mk_fft(gen_ctx *g, tr_op op) {
  static const char *const types[4] = {"FFT", "IFFT", "RFFT", "IRFFT"};
  int t = (int)gen_below(g, 4);
  bool wide = gen_chance(g, 50);
  tr_dtype c = wide ? TR_DT_C128 : TR_DT_C64, f = wide ? TR_DT_F64 : TR_DT_F32;
  tr_dtype xdt = t == 2 ? f : c, rdt = t == 2 ? c : t == 3 ? f : c;
  if (!g->dt_ok[xdt] || !g->dt_ok[rdt]) return NULL;
  int r = 1 + (int)gen_below(g, 2), lead = (int)gen_below(g, 2), rank = lead + r;
  int64_t len[2], xd[3], rd[3];
  for (int i = 0; i < r; i++) len[i] = 1 + gen_below(g, 8);
  if (lead) xd[0] = rd[0] = 1 + gen_below(g, 3);
  for (int i = 0; i < r; i++) xd[lead + i] = rd[lead + i] = len[i];
  if (t == 2) rd[rank - 1] = len[r - 1] / 2 + 1;
  if (t == 3) xd[rank - 1] = len[r - 1] / 2 + 1;
  tr_instr *x = gen_leaf(g, tr_shape_array(g->m->arena, xdt, rank, xd));
  if (!x) return NULL;
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  tr_build_ident(in, TR_ATTR_FFT_TYPE, types[t]);
  tr_build_ints(in, TR_ATTR_FFT_LENGTH, len, r);
  return gen_end(g, in, tr_shape_array(g->m->arena, rdt, rank, rd));
}

/* ---- complex parts ---- */
static tr_instr *mk_real_imag(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  if (!gen_is_cplx(x->shape->dtype)) {
    tr_dtype to = gen_chance(g, 50) ? TR_DT_C64 : TR_DT_C128;
    if (!g->dt_ok[to]) return NULL;
    x = gen_to_dtype(g, x, to);
    if (!x) return NULL;
  }
  tr_dtype part = x->shape->dtype == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
  return gen_end(g, tr_build_begin(g->c, op, &x, 1), tr_shape_array(g->m->arena, part, x->shape->rank, x->shape->dims));
}

static tr_instr *mk_complex(gen_ctx *g, tr_op op) {
  tr_dtype part = gen_chance(g, 50) ? TR_DT_F32 : TR_DT_F64;
  tr_dtype to = part == TR_DT_F32 ? TR_DT_C64 : TR_DT_C128;
  if (!g->dt_ok[to]) return NULL;
  tr_instr *x = gen_to_dtype(g, gen_to_class(g, gen_pick(g), GC_FLOAT, false), part);
  tr_instr *y = x ? gen_partner(g, x, part) : NULL;
  if (!y) return NULL;
  tr_instr *ops[2] = {x, y};
  return gen_end(g, tr_build_begin(g->c, op, ops, 2), tr_shape_array(g->m->arena, to, x->shape->rank, x->shape->dims));
}

/* ---- one-device collectives and markers: each hands its operand back ---- */
static tr_instr *mk_id(gen_ctx *g, tr_op op) {
  return gen_end(g, tr_build_begin(g->c, op, NULL, 0), gen_scalar(g, TR_DT_U32));
}

static tr_instr *mk_collective(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  if ((op == TR_OP_ALL_REDUCE || op == TR_OP_REDUCE_SCATTER || op == TR_OP_CUSTOM_CALL) &&
      gen_is_cplx(x->shape->dtype))
    return NULL;
  if ((op == TR_OP_ALL_GATHER || op == TR_OP_REDUCE_SCATTER) && x->shape->rank < 1) return NULL;
  tr_instr *in = tr_build_begin(g->c, op, &x, 1);
  if (op == TR_OP_ALL_REDUCE || op == TR_OP_REDUCE_SCATTER)
    tr_build_callee(in, TR_ATTR_TO_APPLY,
                    gen_binary_comp(g, gen_reducer_op(g, x->shape->dtype), x->shape->dtype));
  if (op == TR_OP_ALL_GATHER || op == TR_OP_REDUCE_SCATTER || (op == TR_OP_ALL_TO_ALL && x->shape->rank)) {
    int64_t d = gen_below(g, x->shape->rank);
    tr_build_ints(in, TR_ATTR_DIMENSIONS, &d, 1);
  }
  if (op == TR_OP_COLLECTIVE_PERMUTE) {
    tr_attr *at = tr_instr_add_attr(g->m, in, TR_ATTR_SOURCE_TARGET_PAIRS, TR_AK_INTSS, NULL);
    at->n = 1;
    at->u.intss.v = tr_arena_alloc(g->m->arena, sizeof(int64_t *));
    at->u.intss.lens = tr_arena_alloc(g->m->arena, sizeof(int));
    at->u.intss.v[0] = tr_arena_alloc(g->m->arena, 2 * sizeof(int64_t));
    at->u.intss.lens[0] = 2;
  }
  if (op == TR_OP_CUSTOM_CALL) {
    tr_attr *at = tr_instr_add_attr(g->m, in, TR_ATTR_CUSTOM_CALL_TARGET, TR_AK_STR, NULL);
    at->u.s = "Sharding";
  }
  return gen_end(g, in, x->shape);
}

static tr_instr *mk_opt_barrier(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  return gen_end(g, tr_build_begin(g->c, op, &x, 1), NULL);
}

/* add-dependency on an after-all token: the value, ordered after nothing */
static tr_instr *mk_add_dependency(gen_ctx *g, tr_op op) {
  tr_instr *tok = gen_end(g, tr_build_begin(g->c, TR_OP_AFTER_ALL, NULL, 0), NULL);
  if (!tok) return NULL;
  tr_instr *ops[2] = {gen_pick(g), tok};
  return gen_end(g, tr_build_begin(g->c, TR_OP_ADD_DEPENDENCY, ops, 2), NULL);
}

const gen_maker gen_makers[TR_OP_COUNT] = {
  [TR_OP_CONSTANT] = mk_constant, [TR_OP_IOTA] = mk_iota,
  [TR_OP_PARTITION_ID] = mk_id, [TR_OP_REPLICA_ID] = mk_id,
  [TR_OP_AFTER_ALL] = mk_add_dependency, [TR_OP_ADD_DEPENDENCY] = mk_add_dependency,
  [TR_OP_BROADCAST] = mk_broadcast, [TR_OP_RESHAPE] = mk_reshape, [TR_OP_BITCAST] = mk_reshape,
  [TR_OP_TRANSPOSE] = mk_transpose, [TR_OP_COPY] = mk_unary, [TR_OP_CONVERT] = gen_mk_convert,
  [TR_OP_BITCAST_CONVERT] = gen_mk_bitcast_convert, [TR_OP_REDUCE_PRECISION] = mk_unary,
  [TR_OP_SLICE] = mk_slice, [TR_OP_DYNAMIC_SLICE] = mk_dynamic_slice,
  [TR_OP_DYNAMIC_UPDATE_SLICE] = mk_dynamic_update_slice, [TR_OP_CONCATENATE] = mk_concatenate,
  [TR_OP_PAD] = mk_pad, [TR_OP_REVERSE] = mk_reverse, [TR_OP_GATHER] = mk_gather,
  [TR_OP_SCATTER] = mk_scatter, [TR_OP_SELECT] = mk_select, [TR_OP_CLAMP] = mk_clamp,
  [TR_OP_COMPARE] = mk_compare,
  [TR_OP_ABS] = mk_unary, [TR_OP_NEGATE] = mk_unary, [TR_OP_SIGN] = mk_unary,
  [TR_OP_FLOOR] = mk_unary, [TR_OP_CEIL] = mk_unary, [TR_OP_ROUND_NEAREST_AFZ] = mk_unary,
  [TR_OP_ROUND_NEAREST_EVEN] = mk_unary, [TR_OP_EXPONENTIAL] = mk_unary,
  [TR_OP_EXPONENTIAL_MINUS_ONE] = mk_unary, [TR_OP_LOG] = mk_unary, [TR_OP_LOG_PLUS_ONE] = mk_unary,
  [TR_OP_SQRT] = mk_unary, [TR_OP_RSQRT] = mk_unary, [TR_OP_CBRT] = mk_unary, [TR_OP_TANH] = mk_unary,
  [TR_OP_LOGISTIC] = mk_unary, [TR_OP_SINE] = mk_unary, [TR_OP_COSINE] = mk_unary, [TR_OP_TAN] = mk_unary,
  [TR_OP_ERF] = mk_unary, [TR_OP_IS_FINITE] = mk_unary, [TR_OP_NOT] = mk_unary, [TR_OP_POPCNT] = mk_unary,
  [TR_OP_COUNT_LEADING_ZEROS] = mk_unary,
  [TR_OP_ATAN2] = mk_binary, [TR_OP_ADD] = mk_binary, [TR_OP_SUBTRACT] = mk_binary,
  [TR_OP_MULTIPLY] = mk_binary, [TR_OP_DIVIDE] = mk_binary, [TR_OP_REMAINDER] = mk_binary,
  [TR_OP_POWER] = mk_binary, [TR_OP_MAXIMUM] = mk_binary, [TR_OP_MINIMUM] = mk_binary,
  [TR_OP_AND] = mk_binary, [TR_OP_OR] = mk_binary, [TR_OP_XOR] = mk_binary,
  [TR_OP_SHIFT_LEFT] = mk_binary, [TR_OP_SHIFT_RIGHT_ARITHMETIC] = mk_binary,
  [TR_OP_SHIFT_RIGHT_LOGICAL] = mk_binary,
  [TR_OP_REDUCE] = mk_reduce, [TR_OP_REDUCE_WINDOW] = mk_reduce_window,
  [TR_OP_SELECT_AND_SCATTER] = mk_select_and_scatter, [TR_OP_DOT] = mk_dot,
  [TR_OP_CONVOLUTION] = mk_convolution, [TR_OP_SORT] = mk_sort, [TR_OP_TOPK] = mk_topk,
  [TR_OP_CHOLESKY] = mk_cholesky, [TR_OP_TRIANGULAR_SOLVE] = mk_triangular_solve,
  [TR_OP_FFT] = mk_fft,
  [TR_OP_WHILE] = gen_mk_while, [TR_OP_CONDITIONAL] = gen_mk_conditional, [TR_OP_CALL] = gen_mk_call,
  [TR_OP_FUSION] = gen_mk_call, [TR_OP_MAP] = gen_mk_map, [TR_OP_TUPLE] = gen_mk_tuple,
  [TR_OP_GET_TUPLE_ELEMENT] = gen_mk_gte, [TR_OP_OPT_BARRIER] = mk_opt_barrier,
  [TR_OP_CUSTOM_CALL] = mk_collective, [TR_OP_ALL_REDUCE] = mk_collective,
  [TR_OP_ALL_GATHER] = mk_collective, [TR_OP_REDUCE_SCATTER] = mk_collective,
  [TR_OP_ALL_TO_ALL] = mk_collective, [TR_OP_COLLECTIVE_PERMUTE] = mk_collective,
  [TR_OP_REAL] = mk_real_imag, [TR_OP_IMAG] = mk_real_imag, [TR_OP_COMPLEX] = mk_complex,
};
