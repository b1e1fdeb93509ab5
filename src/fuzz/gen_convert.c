/* gen_convert.c - the generator's conversions: the convert and
 * bitcast-convert makers and the values at a conversion's edges.
 *
 * A convert is where a value leaves one type's range and precision for
 * another's, and its bugs (in the emitted code and in constant folding)
 * sit at the destination's edges: past its largest finite value, in its
 * subnormals, on ties of its rounding, at the ends of an integer range.
 * Values drawn for the source type alone seldom land there (an f16
 * subnormal is an ordinary f32 normal, an f8 overflow an ordinary f32), so
 * a convert sometimes reads a constant drawn at the destination's edges,
 * either directly (constant folding meets it) or mixed into a computed
 * value by a select (the compiled conversion meets it). */
#include "genint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>


/* One value (as a double) at an edge of float type t (genint.h): its largest finite
 * value and just past it (the overflow tie included), its smallest normal
 * and subnormals (their ties too), ties and near-ties of its rounding,
 * and the first integers it cannot hold. Either sign. */
double gen_float_edge(gen_ctx *g, tr_dtype t) {
  const tr_dtype_info *f = &tr_dtypes[t];
  double max = tr_float_max(t);
  int e;
  frexp(max, &e);
  double ulp_max = ldexp(1.0, e - 1 - f->mbits);   /* spacing below max */
  double mn = ldexp(1.0, 1 - f->bias);             /* smallest normal */
  double den = ldexp(mn, -f->mbits);               /* smallest subnormal */
  double s = gen_chance(g, 50) ? -1 : 1, v;
  switch (gen_below(g, 8)) {
  case 0: v = max; break;
  case 1: v = max + ulp_max / 2; break;                          /* the overflow tie */
  case 2: v = max + ulp_max * (double)(1 + gen_below(g, 4)) / 4; break;
  case 3: v = mn * (1 - (double)(1 + gen_below(g, 8)) / 64); break; /* just below normal */
  case 4: v = den * (double)(1 + gen_below(g, ((int64_t)1 << f->mbits) - 1)); break;
  case 5: v = den * (double)(1 + 2 * gen_below(g, 3)) / 4; break; /* subnormal ties */
  case 6: {
    /* a value of t plus a quarter, half or three quarters of its ulp */
    int ex = (int)gen_below(g, 17) - 8;
    double m = 1 + (double)gen_below(g, (int64_t)1 << f->mbits) / ldexp(1.0, f->mbits);
    v = ldexp(m + (double)(1 + gen_below(g, 3)) / ldexp(4.0, f->mbits), ex);
    break;
  }
  default: v = ldexp(1.0, f->mbits + 1) + (double)(1 + gen_below(g, 3)); break;
  }
  return s * v;
}

/* One value at an edge of integer type t: its ends, one past them, and
 * fractions around them and around zero (truncation). */
static double int_edge(gen_ctx *g, tr_dtype t) {
  double lo = (double)tr_int_min(t), hi = (double)tr_int_max(t);
  switch (gen_below(g, 6)) {
  case 0: return hi;
  case 1: return lo;
  case 2: return hi + 1;
  case 3: return lo - 1;
  case 4: return hi + (gen_chance(g, 50) ? 0.5 : -0.5);
  default: return (double)(gen_below(g, 5) - 2) + (gen_chance(g, 50) ? 0.5 : -0.5);
  }
}

tr_instr *gen_edge_constant(gen_ctx *g, const tr_shape *s, tr_dtype to) {
  int64_t n = tr_shape_count(s);
  size_t es = (size_t)tr_dtype_size(s->dtype);
  unsigned char *data = tr_xcalloc((size_t)(n > 0 ? n : 1), es);
  bool fs = tr_dtype_is_float(s->dtype);
  for (int64_t i = 0; i < n; i++) {
    unsigned char *p = data + i * es;
    if (gen_chance(g, 30)) {
      gen_value(g, s->dtype, p);
      continue;
    }
    double v = tr_dtype_is_float(to) ? gen_float_edge(g, to) : int_edge(g, to);
    if (fs) {
      uint64_t bits = tr_float_from_double(s->dtype, v);
      memcpy(p, &bits, es);
    } else {
      double lo = (double)tr_int_min(s->dtype), hi = (double)tr_int_max(s->dtype);
      uint64_t bits = v <= lo ? (uint64_t)tr_int_min(s->dtype)
                      : v >= hi ? tr_int_max(s->dtype) : (uint64_t)(int64_t)trunc(v);
      /* sub-byte types: sign- or zero-extended into their slot */
      int b = tr_dtypes[s->dtype].bits;
      if (b < 64) {
        bits &= (1ull << b) - 1;
        if (tr_dtypes[s->dtype].kind == TR_DK_SINT && (bits >> (b - 1)) & 1) bits |= ~((1ull << b) - 1);
      }
      memcpy(p, &bits, es);
    }
  }
  tr_instr *in = tr_build_constant(g->c, s, data);
  tr_free(data);
  return in;
}

/* x, or (percent of the time) a value of x's shape and type holding edge
 * values of type to: the edge constant itself, or half the time x with
 * the constant selected in where a computed predicate holds. */
bool gen_edges_apply(tr_dtype from, tr_dtype to) {
  bool fl = tr_dtype_is_float(from), il = tr_dtype_is_int(from);
  return (fl || il) && (tr_dtype_is_float(to) || (fl && tr_dtype_is_int(to)));
}

static tr_instr *edged(gen_ctx *g, tr_instr *x, tr_dtype to, int percent) {
  if (!gen_edges_apply(x->shape->dtype, to) || !gen_chance(g, percent)) return x;
  tr_instr *k = gen_edge_constant(g, x->shape, to);
  gen_push(g, k);
  if (g->consts_only || gen_chance(g, 50)) return k;
  tr_instr *p = gen_pred_like(g, x);
  if (!p) return k;
  tr_instr *ops[3] = {p, k, x};
  tr_instr *sel = tr_build_end(tr_build_begin(g->c, TR_OP_SELECT, ops, 3), NULL, &g->why);
  if (!sel) return k;
  gen_push(g, sel);
  return sel;
}

/* A float type narrower than from in range or precision, allowed,
 * weighted as gen_dtype weighs types; TR_DT_COUNT when there is none. */
static tr_dtype narrower_float(gen_ctx *g, tr_dtype from) {
  int total = 0;
  for (int pass = 0; pass < 2; pass++) {
    int64_t r = pass ? gen_below(g, total) : 0;
    for (int t = 0; t < TR_DT_COUNT; t++) {
      if (!g->dt_ok[t] || t == (int)from || !tr_dtype_is_float((tr_dtype)t) ||
          (tr_dtypes[t].mbits >= tr_dtypes[from].mbits && tr_dtypes[t].ebits >= tr_dtypes[from].ebits))
        continue;
      if (!pass) total += gen_dtype_weight((tr_dtype)t);
      else if ((r -= gen_dtype_weight((tr_dtype)t)) < 0) return (tr_dtype)t;
    }
    if (!total) return TR_DT_COUNT;
  }
  return TR_DT_COUNT;
}

tr_instr *gen_mk_convert(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  bool cplx = gen_is_cplx(x->shape->dtype);
  /* a third of the float converts narrow, mostly from edge values */
  if (tr_dtype_is_float(x->shape->dtype) && gen_chance(g, 35)) {
    tr_dtype to = narrower_float(g, x->shape->dtype);
    if (to == TR_DT_COUNT) return NULL;
    tr_instr *y = edged(g, x, to, 60), *c = tr_build_convert(g->c, y, to, &g->why);
    /* what later ops make of an edge value is often uncertain (a sum
     * with an overflow, a passenger of a sort): the conversion itself
     * is an output */
    if (c && y != x && g->depth == 0 && g->nwatch < (int)TR_NELEMS(g->watch)) g->watch[g->nwatch++] = c;
    return c;
  }
  tr_dtype to = gen_dtype(g, GC_ANY, cplx || gen_chance(g, 20));
  if (to == TR_DT_COUNT || to == x->shape->dtype) return NULL;
  if (cplx && !gen_is_cplx(to)) return NULL;
  /* float -> pred is true almost everywhere */
  if (to == TR_DT_PRED && tr_dtype_is_float(x->shape->dtype) && gen_chance(g, 80)) return NULL;
  return tr_build_convert(g->c, edged(g, x, to, 30), to, &g->why);
}

/* Types of equal width for bitcast-convert (pred and sub-byte excluded). */
tr_instr *gen_mk_bitcast_convert(gen_ctx *g, tr_op op) {
  /* the bits of a computed float are as uncertain as its last ulp: a
   * leaf or an integer makes a checkable output more often */
  tr_instr *x = gen_pick(g);
  for (int tries = 0; tries < 4 && tr_dtype_is_float(x->shape->dtype) && x->op != TR_OP_PARAMETER &&
                      x->op != TR_OP_CONSTANT;
       tries++)
    x = gen_pick(g);
  tr_dtype from = x->shape->dtype;
  int bits = tr_dtypes[from].bits;
  if (from == TR_DT_PRED || bits < 8 || gen_is_cplx(from)) return NULL;
  tr_dtype cand[TR_DT_COUNT];
  int n = 0;
  for (int t = 0; t < TR_DT_COUNT; t++) {
    tr_dtype dt = (tr_dtype)t;
    if (!g->dt_ok[t] || dt == TR_DT_PRED || tr_dtypes[t].bits < 8 || gen_is_cplx(dt) || dt == from) continue;
    int ob = tr_dtypes[t].bits;
    /* same width; a wider target needs the minor dim to be the ratio */
    if (ob == bits || (ob < bits && gen_chance(g, 30)) ||
        (ob > bits && x->shape->rank > 0 && x->shape->dims[x->shape->rank - 1] == ob / bits))
      cand[n++] = dt;
  }
  if (!n) return NULL;
  tr_dtype to = cand[gen_below(g, n)];
  int ob = tr_dtypes[to].bits;
  int64_t dims[8];
  int rank = x->shape->rank;
  if (rank > 0) memcpy(dims, x->shape->dims, sizeof(int64_t) * (size_t)rank);
  if (ob < bits) {
    if (rank >= 7) return NULL;
    dims[rank++] = bits / ob;
  } else if (ob > bits) {
    rank--;
  }
  return tr_build_end(tr_build_begin(g->c, op, &x, 1), tr_shape_array(g->m->arena, to, rank, dims),
                      &g->why);
}
