/* shadow_lin.c - shadow rules of sums and contractions: reduce (add,
 * multiply, max and min reducers by formula, any other reducer by
 * calling it in shadow mode in the reference's order), dot and
 * convolution. A compiler may sum in any order, so a sum's bound is the
 * order-free classic one: propagated input errors plus
 * (n-1)·u·Σ(|x|+e). Dot and convolution reuse the exact kernels on twins
 * of the instruction: one f64 run (plain double) for the values, and one
 * or two runs on scaled magnitudes for the whole bound (sh_dot_conv), in
 * f32 rounded up for types up to 32 bits; the kernels' own error goes
 * into the bound. The element-wise work around the kernels (operand
 * preparation, output bounds, add reductions over narrow types) runs in
 * double or straight from the double arrays, on both cores where large. */
#include "shadowint.h"
#include "par.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

static long double fmax_e(long double a, long double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a); }
static long double fmin_e(long double a, long double b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }

/* Whether a sum r ± b of terms with magnitudes summing to mag overflows
 * to the sign of r in every order: r is past the edge and the terms of
 * the other sign (at most (mag - |r|) / 2) cannot overflow alone. */
static bool sure_overflow(long double r, long double b, long double mag, const sh_fmt *f) {
  return fabsl(r) - b >= f->lim && (mag - fabsl(r)) / 2 + b < f->lim;
}

static double up(long double x) {
  double d = (double)x;
  if ((long double)d < x) d = nextafter(d, INFINITY);
  return d;
}

/* ---- reduce ---- */

/* Offsets of the kept (output) and reduced elements of an operand of
 * dims[rank], both in row-major order. */
static void reduce_offsets(const int64_t *dims, int rank, const tr_attr *da, int64_t **ko, size_t *nout,
                           int64_t **ro, size_t *nred) {
  int64_t st[TR_TENSOR_MAX_RANK], kd[TR_TENSOR_MAX_RANK], ks[TR_TENSOR_MAX_RANK];
  int64_t rd[TR_TENSOR_MAX_RANK], rs[TR_TENSOR_MAX_RANK];
  ev_strides(dims, rank, st);
  int nk = 0, nr = 0;
  for (int d = 0; d < rank; d++) {
    bool red = false;
    for (int j = 0; j < da->n; j++) red |= da->u.ints[j] == d;
    if (red) {
      rd[nr] = dims[d];
      rs[nr++] = st[d];
    } else {
      kd[nk] = dims[d];
      ks[nk++] = st[d];
    }
  }
  *nout = 1;
  *nred = 1;
  for (int i = 0; i < nk; i++) *nout *= (size_t)kd[i];
  for (int i = 0; i < nr; i++) *nred *= (size_t)rd[i];
  *ko = tr_xmalloc(sizeof(int64_t) * (*nout ? *nout : 1));
  *ro = tr_xmalloc(sizeof(int64_t) * (*nred ? *nred : 1));
  for (size_t o = 0; o < *nout; o++) {
    size_t rem = o;
    (*ko)[o] = 0;
    for (int i = nk - 1; i >= 0; i--) {
      (*ko)[o] += (int64_t)(rem % (size_t)kd[i]) * ks[i];
      rem /= (size_t)kd[i];
    }
  }
  for (size_t q = 0; q < *nred; q++) {
    size_t rem = q;
    (*ro)[q] = 0;
    for (int i = nr - 1; i >= 0; i--) {
      (*ro)[q] += (int64_t)(rem % (size_t)rd[i]) * rs[i];
      rem /= (size_t)rd[i];
    }
  }
}

/* One output of an add, multiply, max or min reduction over the terms
 * x[base + ro[q]] and the init value. */
static void reduce_gen(tr_op op, const sh_fmt *f, double k, const sh_val *x, const sh_val *init,
                       int64_t base, const int64_t *ro, size_t nred, long double *rv, double *re,
                       unsigned char *ru) {
  unsigned char u = init->u[0];
  bool fin = isfinite(sh_get(init, 0));
  for (size_t q = 0; q < nred; q++) {
    size_t i = (size_t)(base + ro[q]);
    u |= x->u[i];
    fin = fin && isfinite(sh_get(x, i));
  }
  /* Terms, the init included unless it is an exact 0 (adding it is exact). */
  size_t n = nred + !(sh_get(init, 0) == 0 && init->e[0] == 0);
  if (n == 0) n = 1;
  if (op == TR_OP_MAXIMUM || op == TR_OP_MINIMUM) {
    long double r = sh_get(init, 0), e = init->e[0];
    bool zs[2] = {false, false}; /* a +0, a -0 among the terms */
    if (r == 0) zs[signbit(r) != 0] = true;
    for (size_t q = 0; q < nred; q++) {
      size_t i = (size_t)(base + ro[q]);
      long double v = sh_get(x, i);
      r = op == TR_OP_MAXIMUM ? fmax_e(r, v) : fmin_e(r, v);
      if (v == 0) zs[signbit(v) != 0] = true;
      if (x->e[i] > e) e = x->e[i];
    }
    /* |max(a') - max(a)| <= max |a'_i - a_i|: no rounding, no marks. But
     * -0 and +0 tie and the combiner keeps the one it meets first, so a
     * zero result's sign is the order's, which is the implementation's. */
    *rv = r;
    *re = isnan(r) ? 0 : (double)e;
    *ru = u | (r == 0 && zs[0] && zs[1]);
    return;
  }
  long double unit = (long double)k * ldexpl(1.0L, 1 - f->p);
  if (op == TR_OP_ADD) {
    long double s = sh_get(init, 0), e = init->e[0], mag = 0, fmag = 0;
    bool pinf = false, ninf = false;
    for (size_t q = 0; q <= nred; q++) {
      long double v = q < nred ? sh_get(x, (size_t)(base + ro[q])) : sh_get(init, 0);
      double ev = q < nred ? x->e[base + ro[q]] : init->e[0];
      if (q < nred) {
        s += v;
        e += ev;
      }
      mag += fabsl(v) + ev;
      if (isfinite(v)) fmag += fabsl(v) + ev;
      pinf |= v == INFINITY;
      ninf |= v == -INFINITY;
    }
    *rv = s;
    if (!fin) {
      /* A NaN or both infinities give NaN in any order; one infinity
       * decides the sum unless the finite terms may overflow the other
       * way first. */
      *re = 0;
      *ru = u | (!isnan(s) && !(pinf && ninf) && fmag >= f->lim);
      return;
    }
    long double b = e + ((long double)(n - 1) * unit + (long double)n * f->slack) * mag;
    /* Some order's partial sum may pass the largest finite value. */
    if (mag + b >= f->lim) {
      if (sure_overflow(s, b, mag, f)) {
        *rv = f->has_inf ? copysignl(INFINITY, s) : (long double)NAN;
        b = 0;
      } else {
        u = 1;
      }
    }
    *re = up(b);
    *ru = u;
    return;
  }
  /* Multiply: |prod(a') - prod(a)| <= prod(|a|+e) - prod(|a|). */
  long double pr = sh_get(init, 0), pmag = fabsl(sh_get(init, 0)) + init->e[0], pabs = fabsl(sh_get(init, 0));
  long double big = pmag > 1 ? pmag : 1, small = pabs < 1 ? pabs : 1;
  /* a term whose interval holds 0 without being 0: with an inf term the
   * product may be NaN (pmag and pabs are both inf then, so their
   * difference cannot tell) */
  bool may0 = init->e[0] > 0 && pabs <= init->e[0];
  for (size_t q = 0; q < nred; q++) {
    size_t i = (size_t)(base + ro[q]);
    long double a = fabsl(sh_get(x, i));
    may0 |= x->e[i] > 0 && a <= x->e[i];
    pr *= sh_get(x, i);
    pmag *= a + x->e[i];
    pabs *= a;
    big *= a + x->e[i] > 1 ? a + x->e[i] : 1;
    small *= a < 1 ? a : 1;
  }
  *rv = pr;
  if (!fin) {
    *re = 0;
    /* inf times an interval holding 0; or times finite terms whose
     * partial product may underflow to 0 in some order (inf * 0 = NaN) */
    *ru = u | (pmag != pabs) | (!isnan(pr) && (may0 || small < ldexpl(1.0L, f->emin)));
    return;
  }
  long double b = (pmag - pabs) + ((long double)(n - 1) * unit + (long double)(2 * n) * f->slack) * pmag +
                  (long double)(n - 1) * k * f->tiny;
  /* Some order's partial product may overflow or underflow; the partial
   * products' roundings may carry it past the largest value too (f8e4m3fn
   * 5 * 7 * 13 = 455 fits, but 5 * 7 rounds to 36 and 36 * 13 to NaN: a
   * clean builtin campaign, seed 10). */
  if (big + b >= f->lim || (pabs != 0 && small < ldexpl(1.0L, f->emin))) u = 1;
  *re = up(b);
  *ru = u;
}

/* The add rule of reduce_gen over narrow-type terms, the same long
 * double sums in the same order, with the terms read straight from the
 * double arrays. Returns false on a non-finite term (reduce_gen decides). */
static bool reduce_add_fast(const sh_fmt *f, double k, const sh_val *x, const sh_val *init, int64_t base,
                            const int64_t *ro, size_t nred, long double *rv, double *re,
                            unsigned char *ru) {
  const double *xd = x->d + base, *xe = x->e + base;
  const unsigned char *xu = x->u + base;
  double iv = init->d[0], ie = init->e[0];
  long double s = iv, e = ie, mag = 0;
  unsigned char u = init->u[0];
  bool fin = isfinite(iv);
  if (ro) {
    for (size_t q = 0; q < nred; q++) {
      double v = xd[ro[q]], ev = xe[ro[q]];
      s += v;
      e += ev;
      mag += fabsl((long double)v) + ev;
      fin &= isfinite(v) != 0;
      u |= xu[ro[q]];
    }
  } else {
    for (size_t q = 0; q < nred; q++) {
      double v = xd[q], ev = xe[q];
      s += v;
      e += ev;
      mag += fabsl((long double)v) + ev;
      fin &= isfinite(v) != 0;
      u |= xu[q];
    }
  }
  if (!fin) return false;
  mag += fabsl((long double)iv) + ie;
  size_t n = nred + !(iv == 0 && ie == 0);
  if (n == 0) n = 1;
  long double unit = (long double)k * ldexpl(1.0L, 1 - f->p);
  long double b = e + ((long double)(n - 1) * unit + (long double)n * f->slack) * mag;
  *rv = s;
  if (mag + b >= f->lim) {
    if (sure_overflow(s, b, mag, f)) {
      *rv = f->has_inf ? copysignl(INFINITY, s) : (long double)NAN;
      b = 0;
    } else {
      u = 1;
    }
  }
  *re = up(b);
  *ru = u;
  return true;
}

/* Output `at` of res: the reduction over x[base + ro[q]] and the init
 * value; contiguous: ro[q] == q (the fast add reads the terms in a row). */
static void reduce_one(tr_op op, const sh_fmt *f, double k, const sh_val *x, const sh_val *init,
                       int64_t base, const int64_t *ro, bool contiguous, size_t nred, sh_val *res,
                       size_t at) {
  long double rv;
  double re;
  unsigned char u = 0;
  if (!(op == TR_OP_ADD && x->d &&
        reduce_add_fast(f, k, x, init, base, contiguous ? NULL : ro, nred, &rv, &re, &u)))
    reduce_gen(op, f, k, x, init, base, ro, nred, &rv, &re, &u);
  sh_put(res, at, rv, re);
  res->u[at] = u;
}

/* Outputs [lo, hi) of a reduction, for ev_par_for: each output is one
 * sequential reduce_one, whichever thread runs it. */
typedef struct {
  tr_op op;
  sh_fmt f;
  double k;
  const sh_val *x, *init;
  const int64_t *ko, *ro;
  bool contiguous;
  size_t nred;
  sh_val *res;
} red_job;

static void reduce_chunk(void *ctx, size_t lo, size_t hi) {
  const red_job *j = ctx;
  for (size_t o = lo; o < hi; o++)
    reduce_one(j->op, &j->f, j->k, j->x, j->init, j->ko[o], j->ro, j->contiguous, j->nred, j->res, o);
}

/* Any reducer: the computation called in shadow mode on scalars, in the
 * reference's order. */
static tr_status reduce_generic(sh_ctx *c, const tr_instr *in, sh_val **ops, int nin, const tr_comp *k,
                                const int64_t *ko, size_t nout, const int64_t *ro, size_t nred,
                                sh_val **res) {
  tr_status st = TR_OK;
  sh_val *acc[64], *args[128];
  for (size_t o = 0; o < nout && st == TR_OK; o++) {
    for (int i = 0; i < nin; i++) acc[i] = sh_ref(ops[nin + i]);
    for (size_t q = 0; q < nred && st == TR_OK; q++) {
      int made = 0;
      for (int i = 0; i < nin; i++) args[i] = acc[i];
      for (int i = 0; i < nin && st == TR_OK; i++, made++)
        if (!(args[nin + i] = sh_scalar_at(c, in, ops[i], (size_t)(ro[q] + ko[o])))) st = TR_ERR_UNSUPPORTED;
      sh_val *r = NULL;
      if (st == TR_OK) st = sh_call(c, in, k, args, 2 * nin, &r);
      for (int i = 0; i < made; i++) sh_unref(args[nin + i]);
      if (st != TR_OK) break;
      for (int i = 0; i < nin; i++) {
        sh_val *e = nin == 1 ? r : (i < r->hd.nelems ? sh_elems(r)[i] : NULL);
        if (!e || !sh_is_arr(e) || e->dt != res[i]->dt || e->n != 1) {
          st = ev_err(&c->ev, in, TR_ERR_INVALID, "to_apply did not return %d scalar(s) of the result types", nin);
          break;
        }
        sh_unref(acc[i]);
        acc[i] = sh_ref(e);
      }
      sh_unref(r);
    }
    for (int i = 0; i < nin; i++) {
      if (st == TR_OK) {
        sh_val *a = res[i], *s = acc[i];
        if (sh_is_flt(a)) {
          sh_copy(a, o, s, 0);
        } else {
          size_t es = (size_t)tr_dtype_size(a->dt);
          memcpy((char *)a->t->data + o * es, s->t->data, es);
        }
        a->u[o] = s->u[0];
      }
      sh_unref(acc[i]);
    }
  }
  return st;
}

tr_status sh_reduce(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  int nin = in->noperands / 2;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  if (!k || !da || nin < 1) return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed reduce");
  if (nin > 64) return ev_err(&c->ev, in, TR_ERR_UNSUPPORTED, "unsupported: reduce of more than 64 inputs");
  for (int i = 0; i < 2 * nin; i++)
    if (!sh_is_arr(ops[i])) return ev_err(&c->ev, in, TR_ERR_INVALID, "operand %d is not an array", i);
  const sh_val *x0 = ops[0];
  if (x0->rank > TR_TENSOR_MAX_RANK)
    return ev_err(&c->ev, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", TR_TENSOR_MAX_RANK);
  /* Reducer parameters of another type than the operands: the exact
   * interpreter converts; be conservative. */
  for (int i = 0; i < 2 * nin; i++) {
    const tr_instr *p = k->params && i < k->nparams ? k->params[i] : NULL;
    if (!p || !p->shape || p->shape->dtype != ops[i % nin]->dt || ops[nin + i % nin]->dt != ops[i % nin]->dt)
      return sh_fallback(c, in, ops, out);
  }
  int64_t *ko, *ro;
  size_t nout, nred;
  reduce_offsets(x0->dims, x0->rank, da, &ko, &nout, &ro, &nred);
  tr_op bop;
  bool swap;
  tr_status st = TR_OK;
  tr_dtype dt = x0->dt;
  bool simple = nin == 1 && ev_simple_binary(k, dt, &bop, &swap);
  if (simple && sh_is_flt(x0) &&
      (bop == TR_OP_ADD || bop == TR_OP_MULTIPLY || bop == TR_OP_MAXIMUM || bop == TR_OP_MINIMUM)) {
    sh_val *r = sh_arr_new(c, in, dt, in->shape->rank, in->shape->dims);
    if (!r) st = TR_ERR_UNSUPPORTED;
    red_job j = {bop, {0}, sh_allow(c, TR_OP_REDUCE, dt), x0, ops[1], ko, ro, true, nred, r};
    sh_fmt_of(dt, &j.f);
    /* Reduced dims that are the trailing ones in order: contiguous terms. */
    for (size_t q = 0; q < nred && j.contiguous; q++) j.contiguous = ro[q] == (int64_t)q;
    if (r) ev_par_for(ev_par_threads(4.0 * (double)nout * (double)nred), nout, reduce_chunk, &j);
    *out = r;
  } else if (simple && !sh_is_flt(x0)) {
    /* Integers are exact; each output carries its terms' marks. */
    st = sh_fallback(c, in, ops, out);
    if (st == TR_OK) {
      sh_val *r = *out;
      for (size_t o = 0; o < nout; o++) {
        unsigned char u = ops[1]->u[0];
        for (size_t q = 0; q < nred; q++) u |= x0->u[ko[o] + ro[q]];
        r->u[o] = u;
      }
    }
  } else {
    sh_val *res[64] = {0};
    for (int i = 0; i < nin && st == TR_OK; i++) {
      const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
      if (!(res[i] = sh_arr_new(c, in, os->dtype, os->rank, os->dims))) st = TR_ERR_UNSUPPORTED;
    }
    if (st == TR_OK) st = reduce_generic(c, in, ops, nin, k, ko, nout, ro, nred, res);
    if (st != TR_OK) {
      for (int i = 0; i < nin; i++) sh_unref(res[i]);
    } else if (nin == 1 && in->shape->dtype != TR_DT_TUPLE) {
      *out = res[0];
    } else {
      *out = sh_tuple(nin, res);
    }
  }
  tr_free(ko);
  tr_free(ro);
  return st;
}

/* ---- dot and convolution ---- */

/* One contraction operand: its values in f64 (v: a view of the shadow
 * value's own doubles where it holds them, else an array made here), the
 * errors e (NULL: all 0) and the marks u (NULL: none). */
typedef struct {
  tr_tensor v;
  const double *e;
  const unsigned char *u;
  tr_tensor *own_v, *own_e; /* pool arrays behind v and e, or NULL */
} cop;

/* Whether any element of [lo, hi) has a bound or a mark (for ev_par_for). */
typedef struct {
  const sh_val *a;
  atomic_bool any;
} any_job;

static void any_chunk(void *ctx, size_t lo, size_t hi) {
  any_job *j = ctx;
  const double *e = j->a->e;
  const unsigned char *u = j->a->u;
  /* blocks of 256, stopping at the first block with one (activations
   * usually have bounds from their first element on) */
  for (size_t b = lo; b < hi; b += 256) {
    if (atomic_load_explicit(&j->any, memory_order_relaxed)) return;
    size_t end = hi - b < 256 ? hi : b + 256;
    unsigned char any = 0;
    for (size_t i = b; i < end; i++) any |= u[i] | (e[i] != 0);
    if (any) {
      atomic_store_explicit(&j->any, true, memory_order_relaxed);
      return;
    }
  }
}

static bool operand_of(sh_ctx *c, const tr_instr *in, const sh_val *a, tr_dtype dt, cop *o) {
  memset(o, 0, sizeof *o);
  size_t n = a->n;
  o->v = (tr_tensor){TR_DT_F64, a->rank, a->dims, NULL, n * sizeof(double)};
  sh_fmt f;
  sh_fmt_of(dt, &f);
  bool narrowing = tr_dtype_is_float(a->dt) ? tr_dtypes[a->dt].mbits > tr_dtypes[dt].mbits : true;
  if (a->src && !narrowing && tr_dtype_is_float(a->dt)) {
    /* A lazy entry argument (weights): exact and certain, so its values
     * are all the kernels need, read straight from the caller's tensor. */
    o->own_v = sh_pool_tensor(c, TR_DT_F64, a->rank, a->dims);
    o->v.data = o->own_v->data;
    sh_load_doubles(a->src, o->own_v->data);
    return true;
  }
  if (a->src) sh_materialize(c, (sh_val *)a);
  if (a->d && !narrowing) {
    /* Values already doubles, no rounding to add: the kernels read the
     * shadow value itself; its bounds and marks count where any is set
     * (the usual weights and inputs have none). */
    o->v.data = a->d;
    any_job j = {.a = a};
    atomic_init(&j.any, false);
    ev_par_for(ev_par_threads((double)n), n, any_chunk, &j);
    if (atomic_load(&j.any)) {
      o->e = a->e;
      o->u = a->u;
    }
    return true;
  }
  double kc = sh_allow(c, TR_OP_CONVERT, dt);
  o->own_v = sh_pool_tensor(c, TR_DT_F64, a->rank, a->dims);
  o->own_e = sh_pool_tensor(c, TR_DT_F64, a->rank, a->dims);
  double *v = o->own_v->data, *e = o->own_e->data;
  o->v.data = v;
  bool any = false;
  if (sh_is_flt(a)) {
    for (size_t i = 0; i < n; i++) {
      long double x = sh_get(a, i);
      v[i] = (double)x;
      long double err = a->e[i] + fabsl((long double)v[i] - x);
      /* The kernel first converts the operand to the result type. */
      if (narrowing && isfinite(x)) err += kc * sh_ulp(&f, fabsl(x) + err);
      e[i] = a->u[i] ? INFINITY : up(err);
      any |= e[i] != 0;
    }
  } else {
    tr_tensor *cv = ev_convert_to(&c->ev, in, a->t, TR_DT_F64);
    if (!cv) return false;
    memcpy(v, cv->data, sizeof(double) * n);
    tr_tensor_free(cv);
    long double exact_below = ldexpl(1.0L, f.p);
    for (size_t i = 0; i < n; i++) {
      long double err = fabsl((long double)v[i]) > exact_below ? kc * sh_ulp(&f, fabsl((long double)v[i])) : 0;
      e[i] = a->u[i] ? INFINITY : up(err);
      any |= e[i] != 0;
    }
  }
  if (any) o->e = e;
  return true;
}

static void operand_drop(sh_ctx *c, cop *o) {
  sh_pool_drop(c, o->own_v);
  sh_pool_drop(c, o->own_e);
}

/* A kernel operand of the bound: w = al·|v| + be·e, rounded up (to f32
 * for the f32 kernel), infinite where marked; a term whose factor is 0 is
 * left out (0·inf is no bound), and so are the marks with the errors
 * (then the other kernel operand or run carries them). The double
 * arithmetic rounds at most three times by 2^-53 (covered by the factor
 * kf, 1 where w = |v| is exact); the f32 value is one float step up where
 * the conversion went down (the bits of a non-negative float count up
 * with it: 0 steps to the smallest subnormal, FLT_MAX to inf). Branch-free
 * loops the compiler vectorizes. */
typedef struct {
  const cop *o;
  double al, be;
  float *w32;
  double *w64;
} kop_job;

#define KOP_LOOP(EXPR)                                                   \
  do {                                                                   \
    if (j->w32)                                                          \
      for (size_t i = lo; i < hi; i++) {                                 \
        double w = (EXPR) * kf;                                          \
        float f = (float)w;                                              \
        uint32_t bits;                                                   \
        memcpy(&bits, &f, 4);                                            \
        bits += (double)f < w;                                           \
        memcpy(&j->w32[i], &bits, 4);                                    \
      }                                                                  \
    else                                                                 \
      for (size_t i = lo; i < hi; i++) j->w64[i] = (EXPR) * kf;          \
  } while (0)

static void kop_chunk(void *ctx, size_t lo, size_t hi) {
  const kop_job *j = ctx;
  const double *v = j->o->v.data, *e = j->o->e;
  const unsigned char *u = j->o->u;
  const double al = j->al, be = j->be;
  bool plain = be == 0 || !e;
  const double kf = plain && al == 1 ? 1 : 1 + 0x1p-50;
  if (plain) KOP_LOOP(al * fabs(v[i]));
  else if (al == 0 && !u) KOP_LOOP(be * e[i]);
  else if (al == 0) KOP_LOOP(be * (u[i] ? INFINITY : e[i]));
  else if (!u) KOP_LOOP(al * fabs(v[i]) + be * e[i]);
  else KOP_LOOP(al * fabs(v[i]) + be * (u[i] ? INFINITY : e[i]));
}

static tr_tensor *kop(sh_ctx *c, const cop *o, double al, double be, bool lo) {
  tr_tensor *t = sh_pool_tensor(c, lo ? TR_DT_F32 : TR_DT_F64, o->v.rank, o->v.dims);
  kop_job j = {o, al, be, lo ? t->data : NULL, lo ? NULL : t->data};
  size_t n = tr_tensor_count(t);
  ev_par_for(ev_par_threads((double)n), n, kop_chunk, &j);
  return t;
}

typedef tr_status (*contract_fn)(ev_ctx *, const tr_instr *, const tr_tensor *, const tr_tensor *,
                                  tr_tensor **);

/* Reads a bound kernel's result as an upper bound in double: an f32
 * result (all terms non-negative, so n roundings of 2^-24 cost at most
 * (n+2)·2^-23 relative, and products that underflow at most 2^-149 each)
 * scaled by g and raised by tiny, with two more double roundings of 2^-53
 * each inside the 2^-50 added; an f64 one as it is (its roundings are in
 * the caller's dbl); none: 0. */
typedef struct {
  const float *f;
  const double *d;
  double g, tiny;
} mag_view;

static mag_view mag_of(const tr_tensor *t, double nterms) {
  mag_view m = {NULL, NULL, (1 + (nterms + 2) * 0x1p-23) * (1 + 0x1p-50), (nterms + 1) * 0x1p-149};
  if (t && t->dtype == TR_DT_F32) m.f = t->data;
  else if (t) m.d = t->data;
  return m;
}

static inline double mag_at(const mag_view *m, size_t i) {
  return m->f ? ((double)m->f[i] * m->g + m->tiny) * (1 + 0x1p-50) : m->d ? m->d[i] : 0;
}

/* The bound of one output from the kernels' results: b = s·W1 + W2 + c3,
 * and the magnitude sum for the overflow rule: Wm where it was computed,
 * W1 where s holds the whole scale (no operand errors), else
 * (W1 + W2)·mk, an upper bound (see sh_dot_conv). */
typedef struct {
  mag_view w1, w2, wm;
  double s, c3, mk;
  int magk; /* 0: Wm, 1: W1, 2: (W1 + W2)·mk */
} bnd;

static inline void bound_at(const bnd *k, size_t i, double *b, double *mag) {
  double w1 = mag_at(&k->w1, i), w2 = mag_at(&k->w2, i);
  *b = (k->s * w1 + w2 + k->c3) * (1 + 0x1p-50);
  *mag = k->magk == 0 ? mag_at(&k->wm, i) : k->magk == 1 ? w1 : (w1 + w2) * k->mk * (1 + 0x1p-50);
}

/* The output loop of sh_dot_conv for types up to 32 bits, over ranges of
 * outputs for ev_par_for: finite elements away from overflow in double;
 * the rest marked 2 for the general loop. */
typedef struct {
  const double *pv;
  bnd k;
  double lim;
  sh_val *o;
} dot_job;

static void dot_out_chunk(void *ctx, size_t lo, size_t hi) {
  const dot_job *j = ctx;
  double *od = j->o->d, *oe = j->o->e;
  unsigned char *ou = j->o->u;
  for (size_t i = lo; i < hi; i++) {
    double r = j->pv[i], b, mag;
    bound_at(&j->k, i, &b, &mag);
    if (isfinite(r) && isfinite(mag) && isfinite(b) && mag + b < j->lim) {
      od[i] = r;
      oe[i] = b;
      ou[i] = 0;
    } else {
      ou[i] = 2;
    }
  }
}

/* Whether every element of v is finite. */
static bool all_finite(sh_ctx *c, const sh_val *v) {
  sh_materialize(c, (sh_val *)v);
  for (size_t i = 0; i < v->n; i++)
    if (!isfinite(sh_get(v, i))) return false;
  return true;
}

/* An indicator of the operand's elements for nan_terms: 1 where the
 * element is (ones) anything, (nan) a certain NaN, (zero) an exact 0 or
 * (inf) a certain infinity, else 0; certain: neither marked nor of
 * unbounded error. */
typedef enum { IND_ONES, IND_NAN, IND_ZERO, IND_INF } ind_kind;

static tr_tensor *nan_ind(sh_ctx *c, const cop *o, ind_kind k) {
  tr_tensor *t = sh_pool_tensor(c, TR_DT_F64, o->v.rank, o->v.dims);
  double *w = t->data;
  const double *v = o->v.data;
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    bool sure = !(o->u && o->u[i]) && !(o->e && isinf(o->e[i]));
    w[i] = k == IND_ONES ? 1
         : k == IND_NAN  ? sure && isnan(v[i])
         : k == IND_ZERO ? sure && v[i] == 0 && !(o->e && o->e[i] != 0)
                         : sure && isinf(v[i]);
  }
  return t;
}

/* Per output, the number of products that are certainly NaN (kern on
 * indicator operands, each product 1 or 0, padded taps skipped as in the
 * value kernel): a certain NaN factor, or an exact 0 times a certain
 * infinity (an inf tap over a zero the conv-zero-pad rule makes explicit).
 * Such a product is NaN whatever else, and so is every sum holding it, in
 * any order. NULL on failure. */
static tr_tensor *nan_terms(sh_ctx *c, contract_fn kern, const tr_instr *twin, const cop *X,
                            const cop *Y) {
  static const ind_kind pairs[4][2] = {{IND_NAN, IND_ONES}, {IND_ONES, IND_NAN}, {IND_ZERO, IND_INF},
                                       {IND_INF, IND_ZERO}};
  tr_tensor *sum = NULL;
  tr_status st = TR_OK;
  for (int q = 0; q < 4 && st == TR_OK; q++) {
    tr_tensor *a = nan_ind(c, X, pairs[q][0]), *b = nan_ind(c, Y, pairs[q][1]), *t = NULL;
    st = kern(&c->ev, twin, a, b, &t);
    if (st == TR_OK && !sum) {
      sum = t;
      t = NULL;
    } else if (st == TR_OK) {
      double *s = sum->data;
      const double *d = t->data;
      size_t n = tr_tensor_count(sum);
      for (size_t i = 0; i < n; i++) s[i] += d[i];
    }
    sh_pool_drop(c, a);
    sh_pool_drop(c, b);
    sh_pool_drop(c, t);
  }
  if (st != TR_OK) {
    sh_pool_drop(c, sum);
    return NULL;
  }
  return sum;
}

/* Dot and convolution (docs/ORACLE.md, "Contractions"). With m = |v| + e
 * per operand element, c1 = 1 + dbl and c2 = n·unit + dbl, the bound is
 *   c1·Σ(e_x·|v_y| + m_x·e_y) + c2·Σ m_x·m_y + c3
 *   = Σ m_x·(c2·m_y + c1·e_y) + Σ (c1·e_x)·|v_y| + c3,
 * which takes the bound kernel once when y is exact (then it is
 * Σ (c2·|v_x| + (c1 + c2)·e_x)·|v_y|) and twice when both operands have
 * errors, besides the f64 kernel for the value. The overflow rule needs
 * Σ m_x·m_y: at most W/c2 of those kernels' sum W; types whose edge is
 * near (f16 and narrower) compute it exactly with one more kernel. */
tr_status sh_dot_conv(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out) {
  const tr_shape *s = in->shape;
  tr_dtype dt = s->dtype;
  if (!tr_dtype_is_float(dt)) {
    sh_val *ops[2] = {(sh_val *)x, (sh_val *)y};
    return sh_fallback(c, in, ops, out);
  }
  /* Terms per output: the contraction size (dot) or the kernel's
   * elements per output feature (convolution; padding only removes terms). */
  double nterms = 1;
  if (in->op == TR_OP_DOT) {
    const tr_attr *lc = tr_instr_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS);
    for (int i = 0; lc && i < lc->n; i++)
      if (lc->u.ints[i] >= 0 && lc->u.ints[i] < x->rank) nterms *= (double)x->dims[lc->u.ints[i]];
  } else {
    const tr_attr *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS);
    if (!dl || !dl->u.conv) return ev_err(&c->ev, in, TR_ERR_INVALID, "convolution needs dim_labels");
    int64_t o = y->dims[dl->u.conv->k_out];
    nterms = o > 0 ? (double)y->n / (double)o : 0;
  }
  /* Twins: the same attributes with an f64 result (no rounding) for the
   * values, and an f32 one for the upper bounds of types up to 32 bits
   * (half the f64 kernel's cost). */
  tr_instr twin = *in, twin32 = *in;
  tr_shape ts = *s, ts32 = *s;
  ts.dtype = TR_DT_F64;
  ts32.dtype = TR_DT_F32;
  twin.shape = &ts;
  twin32.shape = &ts32;
  bool lo = tr_dtypes[dt].bits <= 32 && nterms < 1e6;
  const tr_instr *tb = lo ? &twin32 : &twin;
  sh_fmt f;
  sh_fmt_of(dt, &f);
  double k = sh_allow(c, in->op, dt);
  long double unit = (long double)k * ldexpl(1.0L, 1 - f.p);
  /* The double kernels' own error on V and the bound sums: n+2 roundings each. */
  long double dbl = (long double)(nterms + 4) * ldexpl(1.0L, -52);
  double c1 = up(1 + dbl), c2 = up((long double)nterms * unit + dbl);
  contract_fn kern = in->op == TR_OP_DOT ? ev_dot : ev_convolution;
  cop X, Y;
  tr_tensor *V = NULL, *a1 = NULL, *b1 = NULL, *a2 = NULL, *b2 = NULL, *am = NULL, *bm = NULL;
  tr_tensor *W1 = NULL, *W2 = NULL, *Wm = NULL, *NT = NULL;
  bool okx = operand_of(c, in, x, dt, &X), oky = operand_of(c, in, y, dt, &Y);
  tr_status st = okx && oky ? TR_OK : TR_ERR_UNSUPPORTED;
  bool xe = X.e || X.u, ye = Y.e || Y.u, near_edge = f.lim < 1e30L;
  bnd bk = {.c3 = up((long double)nterms * k * f.tiny)};
  /* The value and the bounds may be summed in any order and rounding:
   * the f64 value's error is inside dbl whichever, and the bound runs
   * need upper bounds, which fused sums give too. */
  bool fused = c->ev.fused;
  c->ev.fused = true;
  if (st == TR_OK) st = kern(&c->ev, &twin, &X.v, &Y.v, &V);
  if (st == TR_OK) {
    if (!xe && !ye) {
      /* Σ|v_x|·|v_y| is the magnitude sum itself. */
      a1 = kop(c, &X, 1, 0, lo);
      b1 = kop(c, &Y, 1, 0, lo);
      bk.s = c2;
      bk.magk = 1;
    } else if (!ye) {
      a1 = kop(c, &X, c2, c1 + c2, lo);
      b1 = kop(c, &Y, 1, 0, lo);
    } else {
      a1 = kop(c, &X, 1, 1, lo);
      b1 = kop(c, &Y, c2, c1 + c2, lo);
      if (xe) {
        a2 = kop(c, &X, 0, c1, lo);
        b2 = kop(c, &Y, 1, 0, lo);
      }
    }
    if (xe || ye) {
      bk.s = 1;
      bk.magk = near_edge ? 0 : 2;
      bk.mk = up(1 / (long double)c2);
      if (near_edge) {
        am = ye ? NULL : kop(c, &X, 1, 1, lo);
        bm = ye ? kop(c, &Y, 1, 1, lo) : NULL;
      }
    }
    st = kern(&c->ev, tb, a1, b1, &W1);
    if (st == TR_OK && a2) st = kern(&c->ev, tb, a2, b2, &W2);
    if (st == TR_OK && (am || bm)) st = kern(&c->ev, tb, am ? am : a1, bm ? bm : b1, &Wm);
  }
  c->ev.fused = fused;
  sh_val *o = NULL;
  /* every element written by the two output loops */
  if (st == TR_OK && !(o = sh_arr_new_raw(c, in, dt, s->rank, s->dims))) st = TR_ERR_UNSUPPORTED;
  if (st == TR_OK) {
    bool exact_in = !xe && !ye;
    int fin_ops = -1; /* f64: whether every operand element is finite (-1: not looked) */
    bool nan_done = false;
    const double *pv = V->data;
    bk.w1 = mag_of(W1, nterms);
    bk.w2 = mag_of(W2, nterms);
    bk.wm = mag_of(Wm, nterms);
    if (o->d) {
      dot_job j = {pv, bk, (double)f.lim, o};
      ev_par_for(ev_par_threads(2.0 * (double)o->n), o->n, dot_out_chunk, &j);
    }
    for (size_t i = 0; i < o->n; i++) {
      if (o->d && o->u[i] != 2) continue;
      double bd, md;
      bound_at(&bk, i, &bd, &md);
      long double r = pv[i], b = bd, mag = md;
      unsigned char u = 0;
      if (!isfinite(r) || !isfinite(mag) || !isfinite(b)) {
        /* inf or NaN operands, or an uncertain one: a NaN of exact
         * operands is NaN in any order; an inf may meet a partial sum
         * that overflowed the other way, so it is not judged. f64 sums
         * in the f64 kernel, which overflows itself: with finite
         * operands a NaN there is max + max - max·2, an inf in another
         * order (XLA CPU: -inf, --dist boundary). */
        if (dt == TR_DT_F64 && fin_ops < 0) fin_ops = all_finite(c, x) && all_finite(c, y);
        sh_put(o, i, isinf(r) && !f.has_inf ? (long double)NAN : r, 0);
        o->u[i] = !(exact_in && isnan(r) && !(dt == TR_DT_F64 && fin_ops));
        /* Inexact operands: a NaN is still certain where a product of
         * the sum is certainly NaN (counted once, on demand). */
        if (o->u[i] && isnan(r) && !exact_in) {
          if (!nan_done) {
            nan_done = true;
            NT = nan_terms(c, kern, &twin, &X, &Y);
          }
          if (NT && ((const double *)NT->data)[i] > 0) o->u[i] = 0;
        }
        continue;
      }
      if (mag + b >= f.lim) {
        /* Some order's partial sum may overflow. */
        if (sure_overflow(r, b, mag, &f)) {
          r = f.has_inf ? copysignl(INFINITY, r) : (long double)NAN;
          b = 0;
        } else {
          u = 1;
        }
      }
      sh_put(o, i, r, up(b));
      o->u[i] = u;
    }
    *out = o;
  }
  operand_drop(c, &X);
  operand_drop(c, &Y);
  tr_tensor *drop[] = {V, a1, b1, a2, b2, am, bm, W1, W2, Wm, NT};
  for (size_t i = 0; i < sizeof drop / sizeof *drop; i++) sh_pool_drop(c, drop[i]);
  return st;
}

/* ---- reduce-window ---- */

static bool next_ix(int64_t *ix, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++ix[d] < dims[d]) return true;
    ix[d] = 0;
  }
  return false;
}

/* The flat input offset window position w of output o reads, or -1 for
 * padding, a base-dilation hole or outside the input (as eval_window.c:
 * those positions contribute nothing). */
static int64_t window_at(const tr_window_dim *win, const sh_val *x, const int64_t *xst, const int64_t *o,
                         const int64_t *w) {
  int64_t off = 0;
  for (int d = 0; d < x->rank; d++) {
    const tr_window_dim *wd = &win[d];
    int64_t p = o[d] * wd->stride + w[d] * wd->rhs_dilate - wd->pad_lo;
    if (p < 0) return -1;
    if (wd->lhs_dilate > 1) {
      if (p % wd->lhs_dilate) return -1;
      p /= wd->lhs_dilate;
    }
    if (p >= x->dims[d]) return -1;
    off += p * xst[d];
  }
  return off;
}

tr_status sh_reduce_window(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  tr_op bop;
  bool swap;
  const sh_val *x = in->noperands == 2 ? ops[0] : NULL;
  /* One float input with an add, multiply, max or min reducer by formula;
   * anything else conservatively. */
  if (!x || !k || !sh_is_flt(x) || !sh_is_arr(ops[1]) || ops[1]->dt != x->dt || ops[1]->n != 1 ||
      in->shape->dtype != x->dt || x->rank < 1 || x->rank > TR_TENSOR_MAX_RANK || !wa ||
      wa->n != x->rank || !ev_simple_binary(k, x->dt, &bop, &swap) ||
      !(bop == TR_OP_ADD || bop == TR_OP_MULTIPLY || bop == TR_OP_MAXIMUM || bop == TR_OP_MINIMUM))
    return sh_fallback(c, in, ops, out);
  const tr_window_dim *win = wa->u.win;
  const tr_shape *s = in->shape;
  sh_val *r = sh_arr_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  int rank = x->rank;
  int64_t wsize[TR_TENSOR_MAX_RANK], xst[TR_TENSOR_MAX_RANK], o[TR_TENSOR_MAX_RANK] = {0};
  size_t nw = 1;
  for (int d = 0; d < rank; d++) {
    wsize[d] = win[d].size;
    nw *= (size_t)(wsize[d] > 0 ? wsize[d] : 0);
  }
  ev_strides(x->dims, rank, xst);
  int64_t *src = tr_xmalloc(sizeof(int64_t) * (nw ? nw : 1));
  sh_fmt f;
  sh_fmt_of(x->dt, &f);
  double kk = sh_allow(c, TR_OP_REDUCE_WINDOW, x->dt);
  for (size_t q = 0; q < r->n; q++) {
    size_t cnt = 0;
    if (nw) {
      int64_t w[TR_TENSOR_MAX_RANK] = {0};
      do {
        int64_t off = window_at(win, x, xst, o, w);
        if (off >= 0) src[cnt++] = off;
      } while (next_ix(w, wsize, rank));
    }
    reduce_one(bop, &f, kk, x, ops[1], 0, src, false, cnt, r, q);
    next_ix(o, r->dims, rank);
  }
  tr_free(src);
  *out = r;
  return TR_OK;
}

/* ---- scatter ---- */

/* Scatter with an add, max or min combiner of the operand's float type:
 * each target element combines its operand value with the updates that
 * hit it, in an order a compiler may choose, so it is a sum (or max) of
 * 1 + hits terms. The exact kernel runs on f64 twins whose combiner is a
 * helper f64 computation of the same op (the kernel applies it directly),
 * once each for values, bounds, magnitudes, hit counts and marks. */
static const char helper_text[] =
    "HloModule shadow_helpers\n"
    "add64 { a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT r = f64[] add(a, b) }\n"
    "max64 { a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT r = f64[] maximum(a, b) }\n"
    "min64 { a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT r = f64[] minimum(a, b) }\n"
    "ENTRY e { p = f64[] parameter(0)\n ROOT r = f64[] copy(p) }\n";

static const tr_comp *helper(sh_ctx *c, const char *name) {
  if (!c->helpers) {
    tr_diag d = {0};
    c->helpers = tr_parse("<shadow helpers>", helper_text, sizeof helper_text - 1, NULL, &d);
    tr_diag_clear(&d);
    if (!c->helpers) return NULL;
  }
  return tr_module_find_comp(c->helpers, name);
}

/* An f64 tensor of a's shape from f(element). */
typedef enum { F_VALUE, F_BOUND, F_MAG, F_ONE, F_MARK, F_NEGZ, F_POSZ } f64kind;

static tr_tensor *f64_of(sh_ctx *c, const tr_instr *in, const sh_val *a, f64kind k) {
  tr_tensor *t = ev_new(&c->ev, in, TR_DT_F64, a->rank, a->dims);
  if (!t) return NULL;
  double *p = t->data;
  for (size_t i = 0; i < a->n; i++) {
    switch (k) {
    case F_VALUE: p[i] = (double)sh_get(a, i); break;
    case F_BOUND: {
      long double v = sh_get(a, i);
      p[i] = isfinite(v) ? up(a->e[i] + fabsl((long double)(double)v - v)) : a->e[i];
      break;
    }
    case F_MAG: p[i] = up(fabsl(sh_get(a, i)) + a->e[i]); break;
    case F_ONE: p[i] = 1; break;
    case F_NEGZ: case F_POSZ: { /* 1 for a zero of that sign */
      long double v = sh_get(a, i);
      p[i] = v == 0 && (signbit(v) != 0) == (k == F_NEGZ);
      break;
    }
    default: p[i] = a->u[i]; break;
    }
  }
  return t;
}

/* An integer (or pred) scatter whose combiner keeps the update (its root
 * is its second parameter, XLA's TensorFlowScatter "update"): a target
 * hit by at most one update holds the operand or that update whatever
 * the order; where two or more hit one target the last writer is the
 * implementation's choice, so only those elements are marked. Hits are
 * counted by the exact kernel on f64 ones with the add64 combiner. */
static bool scatter_overwrite_int(const tr_instr *in, const tr_comp *k) {
  if (in->noperands != 3 || !k || !k->root || k->nparams != 2 || !in->shape ||
      !tr_shape_is_array(in->shape))
    return false;
  tr_dkind kind = tr_dtypes[in->shape->dtype].kind;
  return (kind == TR_DK_SINT || kind == TR_DK_UINT || kind == TR_DK_PRED) &&
         k->root->op == TR_OP_PARAMETER && k->root->param_index == 1;
}

static tr_status sh_scatter_overwrite(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  tr_status st = sh_fallback(c, in, ops, out); /* values, every element marked */
  if (st != TR_OK || !sh_is_arr(*out)) return st;
  for (int i = 0; i < 3; i++)
    if (!sh_is_arr(ops[i]) || !sh_is_exact(ops[i])) return TR_OK;
  const tr_comp *hadd = helper(c, "add64");
  if (!hadd) return TR_OK;
  tr_instr twin;
  tr_shape ts;
  tr_attr *at = sh_f64_twin(in, hadd, &twin, &ts);
  tr_tensor *tx = f64_of(c, in, ops[0], F_ONE), *tu = f64_of(c, in, ops[2], F_ONE);
  tr_value *vs[3] = {tx ? tr_value_tensor(tx) : NULL, tr_value_tensor(tr_tensor_clone(ops[1]->t)),
                     tu ? tr_value_tensor(tu) : NULL};
  tr_value *r = NULL;
  if (tx && tu && ev_scatter(&c->ev, &twin, vs, &r) == TR_OK && r && r->t) {
    const double *n = r->t->data; /* 1 + hits */
    for (size_t i = 0; i < (*out)->n; i++) (*out)->u[i] = n[i] > 2;
  }
  tr_value_unref(r);
  for (int i = 0; i < 3; i++) tr_value_unref(vs[i]);
  tr_free(at);
  return TR_OK;
}

tr_attr *sh_f64_twin(const tr_instr *in, const tr_comp *comp, tr_instr *twin, tr_shape *ts) {
  *twin = *in;
  *ts = *in->shape;
  ts->dtype = TR_DT_F64;
  twin->shape = ts;
  tr_attr *at = tr_xmalloc(sizeof(tr_attr) * (size_t)(in->nattrs > 0 ? in->nattrs : 1));
  memcpy(at, in->attrs, sizeof(tr_attr) * (size_t)in->nattrs);
  for (int i = 0; i < in->nattrs; i++)
    if (at[i].key == TR_ATTR_TO_APPLY) at[i].u.comp = (tr_comp *)comp;
  twin->attrs = at;
  return at;
}

tr_status sh_scatter(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  tr_op bop;
  bool swap;
  const sh_val *x = ops[0];
  if (scatter_overwrite_int(in, k)) return sh_scatter_overwrite(c, in, ops, out);
  if (in->noperands != 3 || !k || !sh_is_arr(x) || !sh_is_flt(x) || !sh_is_arr(ops[1]) || sh_is_flt(ops[1]) ||
      !sh_is_arr(ops[2]) || ops[2]->dt != x->dt || !ev_simple_binary(k, x->dt, &bop, &swap) ||
      !(bop == TR_OP_ADD || bop == TR_OP_MAXIMUM || bop == TR_OP_MINIMUM))
    return sh_fallback(c, in, ops, out);
  const tr_comp *h = helper(c, bop == TR_OP_ADD ? "add64" : bop == TR_OP_MAXIMUM ? "max64" : "min64");
  const tr_comp *hadd = helper(c, "add64"), *hmax = helper(c, "max64");
  if (!h || !hadd || !hmax) return sh_fallback(c, in, ops, out);
  /* Twins: f64 result, the helper combiner. */
  tr_instr twin = *in, tadd, tmax;
  tr_shape ts = *in->shape;
  ts.dtype = TR_DT_F64;
  twin.shape = &ts;
  tr_attr *at = tr_xmalloc(sizeof(tr_attr) * (size_t)(in->nattrs > 0 ? in->nattrs : 1));
  tr_attr *at2 = tr_xmalloc(sizeof(tr_attr) * (size_t)(in->nattrs > 0 ? in->nattrs : 1));
  tr_attr *at3 = tr_xmalloc(sizeof(tr_attr) * (size_t)(in->nattrs > 0 ? in->nattrs : 1));
  memcpy(at, in->attrs, sizeof(tr_attr) * (size_t)in->nattrs);
  memcpy(at2, in->attrs, sizeof(tr_attr) * (size_t)in->nattrs);
  memcpy(at3, in->attrs, sizeof(tr_attr) * (size_t)in->nattrs);
  for (int i = 0; i < in->nattrs; i++)
    if (at[i].key == TR_ATTR_TO_APPLY) {
      at[i].u.comp = (tr_comp *)h;
      at2[i].u.comp = (tr_comp *)hadd;
      at3[i].u.comp = (tr_comp *)hmax;
    }
  twin.attrs = at;
  tadd = twin;
  tadd.attrs = at2;
  tmax = twin;
  tmax.attrs = at3;
  /* values with the op; bounds summed (add) or their largest taken (max,
   * min: the winner may be any term within its bound); magnitudes,
   * counts and marks summed; for max and min, whether a -0 and a +0 hit
   * (max of indicators) */
  static const f64kind kinds[7] = {F_VALUE, F_BOUND, F_MAG, F_ONE, F_MARK, F_NEGZ, F_POSZ};
  tr_tensor *res[7] = {0};
  tr_status st = TR_OK;
  for (int q = 0; q < (bop == TR_OP_ADD ? 5 : 7) && st == TR_OK; q++) {
    tr_tensor *tx = f64_of(c, in, x, kinds[q]), *tu = f64_of(c, in, ops[2], kinds[q]);
    tr_value *vs[3] = {tx ? tr_value_tensor(tx) : NULL, tr_value_tensor(tr_tensor_clone(ops[1]->t)),
                       tu ? tr_value_tensor(tu) : NULL};
    tr_value *r = NULL;
    const tr_instr *kin = q >= 5 || (q == 1 && bop != TR_OP_ADD) ? &tmax : q >= 1 ? &tadd : &twin;
    if (!tx || !tu) st = TR_ERR_UNSUPPORTED;
    else st = ev_scatter(&c->ev, kin, vs, &r);
    if (st == TR_OK) res[q] = tr_tensor_clone(r->t);
    tr_value_unref(r);
    for (int i = 0; i < 3; i++) tr_value_unref(vs[i]);
  }
  tr_free(at);
  tr_free(at2);
  tr_free(at3);
  sh_val *o = NULL;
  if (st == TR_OK && !(o = sh_arr_new(c, in, x->dt, x->rank, x->dims))) st = TR_ERR_UNSUPPORTED;
  if (st == TR_OK) {
    sh_fmt f;
    sh_fmt_of(x->dt, &f);
    long double unit = (long double)sh_allow(c, TR_OP_SCATTER, x->dt) * ldexpl(1.0L, 1 - f.p);
    bool unsure = sh_any_uncertain(ops[1]); /* indices: a correct run may write elsewhere */
    const double *V = res[0]->data, *E = res[1]->data, *M = res[2]->data, *N = res[3]->data,
                 *U = res[4]->data;
    for (size_t i = 0; i < o->n; i++) {
      long double r = V[i], n = N[i], mag = M[i];
      unsigned char u = unsure || U[i] > 0;
      double eb = 0;
      if (bop != TR_OP_ADD) {
        /* max, min: no rounding, the largest bound of the terms. A -0 and
         * a +0 tie, and the combiner keeps the one it meets first: with
         * both among the terms of a zero result, its sign is the update
         * order's, which duplicate indices leave to the implementation
         * (XLA CPU, a 10-minute campaign, seed 21: -0 where the
         * reference's order gives +0). */
        eb = isnan(r) ? 0 : E[i];
        u |= r == 0 && res[5]->data && ((const double *)res[5]->data)[i] > 0 &&
             ((const double *)res[6]->data)[i] > 0;
      } else if (!isfinite(r) || !isfinite(mag)) {
        /* NaN is NaN in any order; an inf may not be, unless the element
         * is untouched (n = 1: the operand's own value, copied) */
        u |= !isnan(r) && n > 1;
      } else {
        long double dbl = (n + 2) * ldexpl(1.0L, -52);
        long double b = (long double)E[i] * (1 + dbl) + ((n - 1) * unit + dbl + n * f.slack) * mag;
        if (mag + b >= f.lim) {
          if (sure_overflow(r, b, mag, &f)) {
            r = f.has_inf ? copysignl(INFINITY, r) : (long double)NAN; /* f8e4m3fn: NaN */
            b = 0;
          } else {
            u = 1;
          }
        }
        /* A target that flushes denormals (DAZ/FTZ, the denormal-flush
         * rule's alternative reference) reads each of the n terms and
         * writes each of the n - 1 partial sums of a touched element
         * with an error below the smallest normal; an untouched element
         * (n = 1) is only copied. */
        if (n > 1 && c->flush && c->flush[x->dt]) b += 2 * n * ldexpl(1.0L, 1 - tr_dtypes[x->dt].bias);
        eb = up(b);
      }
      sh_put(o, i, r, eb);
      o->u[i] = u;
    }
    *out = o;
  }
  for (int q = 0; q < 7; q++) tr_tensor_free(res[q]);
  return st;
}

/* ---- select-and-scatter ---- */

/* The selector is called in shadow mode as exact mode calls it (the first
 * valid window position, replaced by each later x where select(choice, x)
 * is false); an uncertain selection may send the source element to any
 * position of its window, so all of them are marked (and so is a window
 * holding a NaN, under tr_shadow_opts.select_nan_undef). An add scatter then
 * makes each output a sum of the init and the sources that chose it, in an
 * order the implementation picks: the sum rule. Other scatter
 * computations are conservative. */
tr_status sh_select_and_scatter(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const tr_comp *sel = tr_attr_comp(in, TR_ATTR_SELECT), *sc = tr_attr_comp(in, TR_ATTR_SCATTER);
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  const sh_val *x = ops[0], *src = ops[1], *init = ops[2];
  const tr_shape *s = in->shape;
  tr_op bop;
  bool swap;
  if (!sel || !sc || !sh_is_arr(x) || !sh_is_arr(src) || !sh_is_arr(init) || !sh_is_flt(src) || src->dt != s->dtype ||
      init->dt != s->dtype || init->n != 1 || x->rank < 1 || x->rank > TR_TENSOR_MAX_RANK || !wa ||
      wa->n != x->rank || s->rank != x->rank || src->rank != x->rank ||
      !ev_simple_binary(sc, s->dtype, &bop, &swap) || bop != TR_OP_ADD || sel->nparams != 2 ||
      !sel->params || !sel->params[0]->shape || sel->params[0]->shape->dtype != x->dt)
    return sh_fallback(c, in, ops, out);
  const tr_window_dim *win = wa->u.win;
  /* A NaN unsettles the selection only for a select that does not order
   * NaN: a TOTALORDER comparison orders it like any value. */
  bool nan_unsure = false;
  if (c->sel_nan_undef && sh_is_flt(x)) {
    bool total = false;
    if (sel->root && sel->root->op == TR_OP_COMPARE) ev_cmp_attrs(sel->root, &total);
    nan_unsure = !total;
  }
  int rank = x->rank;
  int64_t wsize[TR_TENSOR_MAX_RANK], xst[TR_TENSOR_MAX_RANK], o[TR_TENSOR_MAX_RANK] = {0};
  size_t nw = 1;
  for (int d = 0; d < rank; d++) {
    wsize[d] = win[d].size;
    nw *= (size_t)(wsize[d] > 0 ? wsize[d] : 0);
  }
  ev_strides(x->dims, rank, xst);
  sh_val *r = sh_arr_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t m = r->n ? r->n : 1;
  long double *S = tr_xcalloc(m, sizeof(long double)), *E = tr_xcalloc(m, sizeof(long double));
  long double *M = tr_xcalloc(m, sizeof(long double)), *N = tr_xcalloc(m, sizeof(long double));
  /* -0 is the sum of nothing that keeps the init's sign: init -0 with
   * nothing selected stays -0 (a +0 start made it +0). */
  for (size_t i = 0; i < m; i++) S[i] = -0.0L;
  int64_t *offs = tr_xmalloc(sizeof(int64_t) * (nw ? nw : 1));
  tr_status st = TR_OK;
  for (size_t q = 0; q < src->n && st == TR_OK; q++, next_ix(o, src->dims, rank)) {
    size_t cnt = 0;
    int64_t best = -1;
    bool unsure = false;
    if (nw) {
      int64_t w[TR_TENSOR_MAX_RANK] = {0};
      do {
        int64_t off = window_at(win, x, xst, o, w);
        if (off < 0) continue;
        offs[cnt++] = off;
        if (nan_unsure && isnan(sh_get(x, (size_t)off))) unsure = true;
        if (best < 0) {
          best = off;
          continue;
        }
        sh_val *args[2] = {sh_scalar_at(c, in, x, (size_t)best), sh_scalar_at(c, in, x, (size_t)off)};
        sh_val *keep = NULL;
        if (!args[0] || !args[1]) st = TR_ERR_UNSUPPORTED;
        else st = sh_call(c, in, sel, args, 2, &keep);
        sh_unref(args[0]);
        sh_unref(args[1]);
        if (st != TR_OK) break;
        if (!sh_is_arr(keep) || keep->dt != TR_DT_PRED || keep->n != 1) {
          st = ev_err(&c->ev, in, TR_ERR_INVALID, "select did not return pred[]");
        } else {
          if (!((unsigned char *)keep->t->data)[0]) best = off;
          unsure |= keep->u[0] != 0;
        }
        sh_unref(keep);
      } while (st == TR_OK && next_ix(w, wsize, rank));
    }
    if (st != TR_OK || best < 0) continue;
    long double sv = sh_get(src, q);
    S[best] += sv;
    E[best] += src->e[q];
    M[best] += fabsl(sv) + src->e[q];
    N[best] += 1;
    r->u[best] |= src->u[q];
    if (unsure)
      for (size_t j = 0; j < cnt; j++) r->u[offs[j]] = 1;
  }
  if (st == TR_OK) {
    sh_fmt f;
    sh_fmt_of(s->dtype, &f);
    long double unit = (long double)sh_allow(c, TR_OP_SELECT_AND_SCATTER, s->dtype) * ldexpl(1.0L, 1 - f.p);
    long double iv = sh_get(init, 0), ie = init->e[0];
    bool izero = iv == 0 && ie == 0;
    for (size_t i = 0; i < r->n; i++) {
      long double v = iv + S[i], n = N[i] + !izero, mag = M[i] + fabsl(iv) + ie;
      r->u[i] |= init->u[0];
      if (!isfinite(v) || !isfinite(mag)) {
        sh_put(r, i, v, 0);
        r->u[i] |= !isnan(v);
        continue;
      }
      long double b = ie + E[i] + ((n > 1 ? n - 1 : 0) * unit + n * f.slack) * mag;
      if (mag + b >= f.lim) {
        if (sure_overflow(v, b, mag, &f)) {
          v = f.has_inf ? copysignl(INFINITY, v) : (long double)NAN;
          b = 0;
        } else {
          r->u[i] = 1;
        }
      }
      sh_put(r, i, v, up(b));
    }
  }
  tr_free(S);
  tr_free(E);
  tr_free(M);
  tr_free(N);
  tr_free(offs);
  if (st != TR_OK) {
    sh_unref(r);
    return st;
  }
  *out = r;
  return TR_OK;
}
