/* shadow_flush.c - the shadow rules of flushing targets: an op of a
 * target that flushes denormals (tr_shadow_opts.flush) reads its
 * operands' denormals as zeros and flushes its results and the partial
 * results of its sums; a flush-results target (tr_shadow_opts.
 * flush_results) flushes the results of chosen ops only. shadow.c's
 * dispatch calls sh_instr_flushed and sh_flush_result; docs/PROFILES.md
 * (denormal-flush) states the rules. */
#include "shadowint.h"

#include <math.h>
#include <string.h>

/* Whether in computes on its operands' values, so that a flushing target
 * reads their denormals as zero and flushes its results: arithmetic,
 * compare, convert, clamp, reductions and contractions. Moves, select,
 * sort, abs and negate (sign-bit ops: XLA CPU keeps negate(d) = -d,
 * docs/PROFILES.md), bitcasts and control flow hand values on; the
 * instructions of a called computation are flushed one by one. A
 * TOTALORDER compare orders bit patterns: XLA CPU has 1e-40 < 2e-40
 * there (jax 0.10.2, shadow_flush_total_order_compare). */
bool sh_flushes(const tr_instr *in) {
  bool total;
  switch (tr_ops[in->op].cls) {
  case TR_OPC_COMPARE:
    (void)ev_cmp_attrs(in, &total);
    return !total;
  case TR_OPC_UFLOAT: case TR_OPC_BARITH: case TR_OPC_REDUCE: case TR_OPC_LINALG:
    return true;
  case TR_OPC_UNUM: return in->op != TR_OP_ABS && in->op != TR_OP_NEGATE;
  case TR_OPC_CONVERT: return in->op == TR_OP_CONVERT;
  case TR_OPC_SELECT: return in->op == TR_OP_CLAMP;
  default: return false;
  }
}

/* The smallest normal of dt where c flushes dt, else 0. */
static double flush_min(const sh_ctx *c, tr_dtype dt) {
  if (!c->flush || !tr_dtype_is_float(dt) || !c->flush[dt]) return 0;
  return ldexp(1.0, 1 - tr_dtypes[dt].bias);
}

/* Whether element i of a may be flushed: a correct computation may give
 * a nonzero value below mn there. */
static bool flush_reaches(const sh_val *a, size_t i, double mn) {
  long double x = sh_get(a, i);
  return x != 0 && !isnan(x) && fabsl(x) < (long double)mn + a->e[i];
}


/* A fresh float array value with v's values, bounds, marks and bits (v
 * materialized), for the flushes to change elements of. */
sh_val *sh_dup_flt(sh_ctx *c, const tr_instr *in, const sh_val *v) {
  sh_val *r = sh_arr_new_raw(c, in, v->dt, v->rank, v->dims);
  if (!r) return NULL;
  if (v->d) memcpy(r->d, v->d, sizeof(double) * v->n);
  else memcpy(r->lv, v->lv, sizeof(long double) * v->n);
  memcpy(r->e, v->e, sizeof(double) * v->n);
  memcpy(r->u, v->u, v->n);
  if (v->bits) r->bits = tr_tensor_clone(v->bits);
  return r;
}
/* v with the denormals of its flushed float arrays flushed: a new value,
 * or v itself (one more reference) when nothing changes; NULL after a
 * located error. A value certainly below mn becomes exactly a zero of
 * its sign (bound 0: the target's own result is flushed too); one whose
 * bound reaches across mn may come out flushed or not, so it becomes 0
 * with a bound reaching the unflushed value (below mn) or keeps its
 * value with a bound reaching 0 (above). */
/* Whether a complex part p with bound e may be flushed (flush_reaches's
 * test on one part). */
static bool part_reaches(double p, double e, double mn) {
  return p != 0 && !isnan(p) && fabs(p) < mn + e;
}

/* flush_val on a c64 or c128 array: each part is flushed as its part type
 * (f32, f64) is, since XLA CPU computes complex values in the part type
 * under the same flags (docs/PROFILES.md, denormal-flush: c128 (-5e-324
 * + 1i) * 1 reads -5e-324 as -0). The parts share one bound, so a part
 * that may or may not be flushed widens the element's bound to reach
 * both. */
static sh_val *flush_cplx(sh_ctx *c, const tr_instr *in, sh_val *v) {
  double mn = flush_min(c, v->dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64);
  if (!(mn > 0) || !v->e) return sh_ref(v);
  size_t first = v->n;
  for (size_t i = 0; i < v->n && first == v->n; i++) {
    double re, im;
    tr_tensor_get_c(v->t, i, &re, &im);
    if (part_reaches(re, v->e[i], mn) || part_reaches(im, v->e[i], mn)) first = i;
  }
  if (first == v->n) return sh_ref(v);
  sh_val *r = sh_arr_new_raw(c, in, v->dt, v->rank, v->dims);
  if (!r) return NULL;
  memcpy(r->t->data, v->t->data, tr_dtype_size(v->dt) * v->n);
  memcpy(r->e, v->e, sizeof(double) * v->n);
  memcpy(r->u, v->u, v->n);
  for (size_t i = first; i < v->n; i++) {
    double p[2], e = v->e[i], ne = e;
    tr_tensor_get_c(v->t, i, &p[0], &p[1]);
    for (int k = 0; k < 2; k++) {
      if (!part_reaches(p[k], e, mn)) continue;
      double ap = fabs(p[k]);
      if (ap < mn) {
        if (ap + e >= mn && ap + e > ne) ne = ap + e; /* may also stay */
        p[k] = copysign(0.0, p[k]);
      } else if (ap > ne) {
        ne = ap; /* may come out flushed */
      }
    }
    tr_tensor_set_c(r->t, i, p[0], p[1]);
    r->e[i] = ne;
  }
  return r;
}

static sh_val *flush_val(sh_ctx *c, const tr_instr *in, sh_val *v) {
  if (v->hd.kind == EV_TOKEN) return sh_ref(v);
  if (!sh_is_arr(v)) {
    int n = v->hd.nelems;
    sh_val *t = sh_tuple(n, NULL);
    bool same = true;
    for (int i = 0; i < n; i++) {
      if (!(sh_elems(t)[i] = flush_val(c, in, sh_elems(v)[i]))) {
        sh_unref(t);
        return NULL;
      }
      same = same && sh_elems(t)[i] == sh_elems(v)[i];
    }
    if (!same) return t;
    sh_unref(t);
    return sh_ref(v);
  }
  if (tr_dtypes[v->dt].kind == TR_DK_COMPLEX) return flush_cplx(c, in, v);
  double mn = flush_min(c, v->dt);
  if (!(mn > 0)) return sh_ref(v);
  sh_materialize(c, v);
  size_t first = v->n;
  for (size_t i = 0; i < v->n && first == v->n; i++)
    if (flush_reaches(v, i, mn)) first = i;
  if (first == v->n) return sh_ref(v);
  sh_val *r = sh_dup_flt(c, in, v);
  if (!r) return NULL;
  for (size_t i = first; i < v->n; i++) {
    if (!flush_reaches(v, i, mn)) continue;
    long double x = sh_get(v, i), ax = fabsl(x);
    if (ax < mn) {
      double e = ax + v->e[i] < mn ? 0 : (double)(ax + v->e[i]);
      sh_put(r, i, copysignl(0.0L, x), e);
    } else if ((double)ax > r->e[i]) {
      r->e[i] = (double)ax;
    }
  }
  return r;
}

sh_val *sh_flush_read(sh_ctx *c, const tr_instr *in, sh_val *v) { return flush_val(c, in, v); }

/* How many times the combiner of a reduce or reduce-window (the adds of a
 * dot or convolution) may run into one result element on a flushing
 * target, each run a partial result that the target may flush (FTZ)
 * while a correct run keeps it; 0 for other ops and for max/min
 * combiners, which make no new values. */
static double flush_partials(const tr_instr *in, sh_val *const *ops, const sh_val *r) {
  const sh_val *x = ops[0];
  if (in->op == TR_OP_DOT || in->op == TR_OP_CONVOLUTION) {
    /* terms per output: the contraction size, or the kernel's elements
     * per output feature (as sh_dot_conv counts them) */
    const sh_val *y = in->noperands > 1 ? ops[1] : NULL;
    if (!x || !y || !sh_is_arr(x) || !sh_is_arr(y)) return 0;
    double n = 1;
    if (in->op == TR_OP_DOT) {
      const tr_attr *lc = tr_instr_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS);
      for (int i = 0; lc && i < lc->n; i++)
        if (lc->u.ints[i] >= 0 && lc->u.ints[i] < x->rank) n *= (double)x->dims[lc->u.ints[i]];
    } else {
      const tr_attr *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS);
      if (!dl || !dl->u.conv) return 0;
      int64_t o = y->dims[dl->u.conv->k_out];
      n = o > 0 ? (double)y->n / (double)o : 0;
    }
    return n;
  }
  if (in->op != TR_OP_REDUCE && in->op != TR_OP_REDUCE_WINDOW) return 0;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  tr_op bop;
  bool swap;
  if (!k || !x || !sh_is_arr(x)) return 0;
  if (ev_simple_binary(k, x->dt, &bop, &swap) && (bop == TR_OP_MAXIMUM || bop == TR_OP_MINIMUM)) return 0;
  if (in->op == TR_OP_REDUCE) {
    size_t nr = sh_is_arr(r) ? r->n : 0;
    return nr ? (double)x->n / (double)nr : 0;
  }
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
  double win = 1;
  for (int i = 0; w && w->kind == TR_AK_WINDOW && i < w->n; i++) win *= (double)w->u.win[i].size;
  return win;
}

/* r with every finite element's bound widened by k smallest normals of
 * its dtype where c flushes it (a new value, or r itself with one more
 * reference); NULL after a located error. Each of k flushed partial
 * results is off by less than the smallest normal. */
static sh_val *flush_widen(sh_ctx *c, const tr_instr *in, sh_val *r, double k) {
  double mn = sh_is_arr(r) ? flush_min(c, r->dt) : 0;
  if (!(mn > 0) || !(k > 0) || !r->n) return sh_ref(r);
  sh_materialize(c, r);
  sh_val *w = sh_dup_flt(c, in, r);
  if (!w) return NULL;
  for (size_t i = 0; i < r->n; i++)
    if (isfinite((double)sh_get(r, i))) w->e[i] += k * mn;
  return w;
}

/* in on a flushing target: its operands flushed, then its result. */
tr_status sh_instr_flushed(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out,
                                  tr_status (*rule)(sh_ctx *, const tr_instr *, sh_val **, sh_val **)) {
  int n = in->noperands;
  sh_val **fl = tr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(sh_val *));
  tr_status st = TR_OK;
  for (int i = 0; i < n && st == TR_OK; i++)
    if (ops[i] && !(fl[i] = flush_val(c, in, ops[i]))) st = TR_ERR_UNSUPPORTED;
  sh_val *r = NULL;
  if (st == TR_OK) st = rule(c, in, fl, &r);
  for (int i = 0; i < n; i++) sh_unref(fl[i]);
  tr_free(fl);
  *out = NULL;
  if (st != TR_OK) {
    sh_unref(r);
    return st;
  }
  double k = r && n > 0 ? flush_partials(in, ops, r) : 0;
  if (k > 0) {
    sh_val *w = flush_widen(c, in, r, k);
    sh_unref(r);
    r = w;
    if (!r) st = TR_ERR_UNSUPPORTED;
  }
  if (r && !(*out = flush_val(c, in, r))) st = TR_ERR_UNSUPPORTED;
  sh_unref(r);
  return st;
}


/* in's result where a flush-results target may flush it
 * (tr_shadow_opts.flush_results): r itself (one more reference) unless
 * an element may be a nonzero value below the smallest normal; then a new
 * value where each such element is 0 with a bound reaching the value
 * (the target may give either). NULL after a located error. */
sh_val *sh_flush_result(sh_ctx *c, const tr_instr *in, sh_val *r) {
  if (!sh_is_arr(r) || !tr_dtype_is_float(r->dt) ||
      !c->flush_res[(size_t)in->op * TR_DT_COUNT + r->dt])
    return sh_ref(r);
  double mn = ldexp(1.0, 1 - tr_dtypes[r->dt].bias);
  sh_materialize(c, r);
  size_t first = r->n;
  for (size_t i = 0; i < r->n && first == r->n; i++)
    if (!r->u[i] && flush_reaches(r, i, mn)) first = i;
  if (first == r->n) return sh_ref(r);
  sh_val *w = sh_dup_flt(c, in, r);
  if (!w) return NULL;
  for (size_t i = first; i < r->n; i++) {
    if (r->u[i] || !flush_reaches(r, i, mn)) continue;
    long double x = sh_get(r, i);
    sh_put(w, i, copysignl(0.0L, x), sh_up(fabsl(x) + r->e[i]));
  }
  return w;
}
