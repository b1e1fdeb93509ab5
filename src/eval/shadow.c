/* shadow.c - shadow mode's driver: shadow values, the ulp table, rounding
 * facts, computation frames, dispatch, control flow (call, fusion, while,
 * conditional, map), the conservative fallback and the public entry
 * point. The op rules live in shadow_elem.c, shadow_move.c,
 * shadow_lin.c and shadow_complex.c, flushing targets' in shadow_flush.c; docs/ORACLE.md states them. Frames mirror the exact
 * interpreter's (evaluate what feeds the root, drop values after their
 * last use), reusing its liveness facts and its error reporting. */
#include "shadowint.h"
#include "core.h"
#include "par.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- the ulp table ---- */

void tr_ulp_table_default(tr_ulp_table *t) {
  memset(t, 0, sizeof *t);
  for (int d = 0; d < TR_DT_COUNT; d++) {
    if (!tr_dtype_is_float((tr_dtype)d)) continue;
    /* Elementwise ops: their kernels.def row. Correctly rounded IEEE
     * operations have half an ulp; transcendentals XLA's own CPU accuracy
     * budgets for f32 and f64 (xla/codegen/intrinsic/accuracy/
     * accuracy_budget.h), rounded up; types narrower than f32 are
     * computed in f32 and rounded once, so one ulp of the narrow type
     * covers them. */
    int col = d == TR_DT_F64 ? 0 : d == TR_DT_F32 ? 1 : 2;
    for (int op = 0; op < TR_OP_COUNT; op++)
      if (ev_kernels[op].row) t->ulps[op][d] = ev_kernels[op].ulps[col];
#define SET(op, v) t->ulps[TR_OP_##op][d] = (float)(v)
    /* Correctly rounded: half an ulp; for sums and contractions, of each
     * addition and product. */
    SET(CONVERT, 0.5); SET(IOTA, 0.5); SET(DOT, 0.5); SET(CONVOLUTION, 0.5);
    SET(REDUCE, 0.5); SET(REDUCE_WINDOW, 0.5); SET(SCATTER, 0.5); SET(SELECT_AND_SCATTER, 0.5);
    /* Per operation of a backward-stable substitution (see shadow_linalg.c). */
    SET(TRIANGULAR_SOLVE, 0.5); SET(CHOLESKY, 0.5);
#undef SET
  }
}

double sh_allow(const sh_ctx *c, tr_op op, tr_dtype dt) { return c->ut->ulps[op][dt]; }

/* ---- rounding facts ---- */

void sh_fmt_of(tr_dtype dt, sh_fmt *f) {
  const tr_dtype_info *di = &tr_dtypes[dt];
  f->p = di->mbits + 1;
  f->emin = 1 - di->bias;
  f->maxf = tr_float_max(dt);
  int ex;
  frexpl(f->maxf, &ex);
  f->lim = f->maxf + ldexpl(0.5L, ex - f->p);
  f->tiny = ldexp(1.0, f->emin - f->p + 1);
  f->slack = dt == TR_DT_F64 ? ldexp(1.0, -60) : dt == TR_DT_F32 ? ldexp(1.0, -50) : ldexp(1.0, -23);
  /* The saturating formats (f4e2m1fn, f6*) overflow to their largest
   * value: the rules produce inf, which sh_fix_format turns into it. */
  f->has_inf = di->fstyle == TR_FS_IEEE || di->fstyle == TR_FS_FINITE;
  if (di->fstyle == TR_FS_E8M0) {
    /* No subnormals and no zero: the smallest value 2^-127 has exponent
     * bits 0, and a positive value below it rounds up to it. */
    f->emin = -di->bias;
    f->tiny = ldexp(1.0, f->emin);
  }
}

/* Brings element results of the formats whose special values the double
 * rules do not model into the format's own terms (docs/ORACLE.md, "Narrow
 * float formats"):
 *  - saturating (f4e2m1fn, f6e2m3fn, f6e3m2fn): +-inf is +-max (exact, as
 *    the rounding saturates), NaN is the format's "NaN" result -0;
 *  - fnuz: no -0 (a zero is +0, so TOTALORDER compares see it as +0);
 *  - f8e8m0fnu: zero and negatives are NaN. A result whose interval holds
 *    zero or reaches below zero either way is uncertain; one that reaches
 *    below the smallest value 2^-127 may round up to it: its bound grows
 *    by 2^-127.
 * Idempotent, so shared operands passed through unchanged are harmless. */
static void sh_fix_format(sh_val *v) {
  if (!v) return;
  if (!sh_is_arr(v)) {
    for (int i = 0; i < v->hd.nelems; i++) sh_fix_format(sh_elems(v)[i]);
    return;
  }
  if (!sh_is_flt(v) || !v->d) return;
  tr_fstyle fs = tr_dtypes[v->dt].fstyle;
  if (fs != TR_FS_FINITE && fs != TR_FS_FNUZ && fs != TR_FS_E8M0) return;
  double maxf = tr_float_max(v->dt), minv = ldexp(1.0, -tr_dtypes[v->dt].bias);
  for (size_t i = 0; i < v->n; i++) {
    double x = v->d[i];
    if (fs == TR_FS_FINITE) {
      if (isinf(x)) {
        v->d[i] = copysign(maxf, x);
        if (v->e) v->e[i] = 0;
      } else if (isnan(x)) {
        v->d[i] = -0.0;
        if (v->e) v->e[i] = 0;
      }
    } else if (fs == TR_FS_FNUZ) {
      if (x == 0) v->d[i] = 0.0;
    } else if (!isnan(x)) {
      double e = v->e ? v->e[i] : 0;
      if (x - e <= 0) {
        if (x + e < 0 || (x == 0 && e == 0)) {
          v->d[i] = NAN;
          if (v->e) v->e[i] = 0;
        } else {
          v->u[i] = 1;
        }
      } else if (x - e < minv && v->e) {
        v->e[i] = e + minv;
      }
    }
  }
}

/* 2^e as a double, built from its bits (ldexp is a slow library call in
 * the per-element path). */
static double pow2(int e) {
  if (e < -1022 || e > 1023) return ldexp(1.0, e);
  uint64_t b = (uint64_t)(e + 1023) << 52;
  double d;
  memcpy(&d, &b, 8);
  return d;
}

/* floor(log2(x)) of a positive normal double. */
static int ilog2(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return (int)((b >> 52) & 0x7ff) - 1023;
}

long double sh_ulp(const sh_fmt *f, long double x) {
  /* Rounding |x| to double is monotone, so the ulp at the rounded value
   * is never smaller. */
  double ax = (double)fabsl(x);
  if (!(ax >= pow2(f->emin))) return f->tiny;
  if (isinf(ax)) ax = (double)f->maxf;
  return pow2(ilog2(ax) - (f->p - 1));
}

double sh_up(long double x) {
  double d = (double)x;
  if ((long double)d < x) d = nextafter(d, INFINITY);
  return d;
}

/* Whether x is a value of the type (range aside): no more significant
 * bits than p below its leading one, and not below the subnormal grid. */
static bool representable(const sh_fmt *f, long double x) {
  if (x == 0) return true;
  double q = (double)fabsl(x);
  if ((long double)q != fabsl(x) || isinf(q) || q < DBL_MIN) return false; /* dtypes fit in double */
  int lsb = ilog2(q) - (f->p - 1); /* exponent of the last kept bit */
  int tiny_exp = f->emin - f->p + 1;
  if (lsb < tiny_exp) lsb = tiny_exp;
  double scaled = q * pow2(-lsb);
  return scaled == trunc(scaled);
}

void sh_finish(const sh_fmt *f, long double r, long double p, double k, long double *v, double *e,
               unsigned char *u) {
  if (isnan(r) || isinf(r)) {
    /* Formats without inf (f8e4m3fn) overflow to NaN. */
    *v = isinf(r) && !f->has_inf ? (long double)NAN : r;
    *e = 0;
    return;
  }
  if (!isfinite(p)) {
    *v = r;
    *e = INFINITY;
    *u = 1;
    return;
  }
  if (p == 0 && k <= 0.5 && fabsl(r) <= f->maxf && representable(f, r)) {
    /* A correctly rounded op whose exact result is a value of the type
     * returns it exactly. */
    *v = r;
    *e = 0;
    return;
  }
  long double mag = fabsl(r) + p;
  long double E = p + (long double)k * sh_ulp(f, mag) + (long double)f->slack * mag;
  if (fabsl(r) + E >= f->lim) {
    if (fabsl(r) - E >= f->lim) {
      /* Every value in the interval rounds past the largest finite one. */
      *v = f->has_inf ? copysignl(INFINITY, r) : (long double)NAN;
      *e = 0;
      return;
    }
    *u = 1; /* at the edge: a correct result may be finite or not */
  }
  *v = r;
  *e = sh_up(E);
}

/* ---- values ---- */

bool sh_is_flt(const sh_val *a) { return sh_is_arr(a) && tr_dtype_is_float(a->dt); }

/* Buffers below this size come from calloc and go back to free. */
#define POOL_MIN ((size_t)1 << 18)

/* A buffer of the given size (zeroed when asked), reused from the pool
 * when one of between that size and twice it is there; NULL when memory
 * runs out. */
static void *pool_try(sh_pool *pl, size_t bytes, bool zero) {
  if (bytes >= POOL_MIN) {
    int best = -1;
    for (int i = 0; i < pl->n; i++)
      if (pl->bytes[i] >= bytes && pl->bytes[i] / 2 <= bytes && (best < 0 || pl->bytes[i] < pl->bytes[best]))
        best = i;
    if (best >= 0) {
      void *p = pl->p[best];
      pl->held -= pl->bytes[best];
      pl->n--;
      pl->p[best] = pl->p[pl->n];
      pl->bytes[best] = pl->bytes[pl->n];
      if (zero) memset(p, 0, bytes);
      return p;
    }
  }
  return zero ? tr_try_calloc(bytes, 1) : tr_try_malloc(bytes);
}

void *sh_pool_take(sh_pool *pl, size_t bytes, bool zero) {
  void *p = pool_try(pl, bytes, zero);
  if (!p) tr_heap_raise(bytes);
  return p;
}

/* Gives a buffer of the given size back: into the pool when it is big
 * (displacing the smallest there when full), else to free. */
void sh_pool_give(sh_pool *pl, void *p, size_t bytes) {
  if (!p) return;
  if (!pl || bytes < POOL_MIN || bytes > SH_POOL_MAX_BYTES) {
    tr_free(p);
    return;
  }
  /* Full (in count or bytes): drop the smallest buffers while they are
   * smaller than this one. */
  while (pl->n == SH_POOL || pl->held + bytes > SH_POOL_MAX_BYTES) {
    int small = 0;
    for (int i = 1; i < pl->n; i++)
      if (pl->bytes[i] < pl->bytes[small]) small = i;
    if (pl->n == 0 || pl->bytes[small] >= bytes) {
      tr_free(p);
      return;
    }
    tr_free(pl->p[small]);
    pl->held -= pl->bytes[small];
    pl->n--;
    pl->p[small] = pl->p[pl->n];
    pl->bytes[small] = pl->bytes[pl->n];
  }
  pl->p[pl->n] = p;
  pl->bytes[pl->n++] = bytes;
  pl->held += bytes;
}

tr_tensor *sh_pool_tensor(sh_ctx *c, tr_dtype dt, int rank, const int64_t *dims) {
  tr_tensor *t = tr_xcalloc(1, sizeof *t);
  t->dtype = dt;
  t->rank = rank;
  t->dims = tr_xmalloc(sizeof(int64_t) * (size_t)(rank > 0 ? rank : 1));
  size_t n = 1;
  for (int i = 0; i < rank; i++) {
    t->dims[i] = dims[i];
    n *= (size_t)dims[i];
  }
  t->nbytes = n * (size_t)tr_dtype_size(dt);
  t->data = sh_pool_take(&c->pool, t->nbytes ? t->nbytes : 1, false);
  return t;
}

void sh_pool_drop(sh_ctx *c, tr_tensor *t) {
  if (!t) return;
  sh_pool_give(&c->pool, t->data, t->nbytes ? t->nbytes : 1);
  t->data = NULL;
  tr_tensor_free(t);
}

static void free_planes(sh_val *v);

static void pool_free(sh_pool *pl) {
  for (int i = 0; i < pl->n; i++) tr_free(pl->p[i]);
  pl->n = 0;
  pl->held = 0;
  for (int k = 0; k < TR_DT_COUNT; k++) {
    for (sh_val *v = pl->spare[k], *nx; v; v = nx) {
      nx = v->spare_next;
      v->pool = NULL;
      free_planes(v);
      tr_free(v);
    }
    pl->spare[k] = NULL;
    pl->nspare[k] = 0;
  }
}

/* sh_val is the shadow domain's ev_v (its first member). */
#define V(v) ((sh_val *)(v))
#define W(v) ((ev_v *)(v))

/* An array's own data: its buffers go back to its pool. */
static void free_planes(sh_val *v) {
  tr_tensor_free(v->t);
  tr_tensor_free(v->bits);
  tr_free(v->dims);
  size_t m = v->n ? v->n : 1;
  sh_pool_give(v->pool, v->d, m * sizeof(double));
  tr_free(v->lv);
  sh_pool_give(v->pool, v->e, m * sizeof(double));
  sh_pool_give(v->pool, v->u, m);
}

/* Whether v is a scalar in the form arr_new makes for its dtype (planes
 * of one element, nothing borrowed), so that it can be made again. */
static bool spare_form(const sh_val *v) {
  if (v->rank != 0 || v->n != 1 || !v->pool || v->src || !v->dims || !v->u) return false;
  tr_dtype dt = v->dt;
  if (v->t && (v->t->dtype != dt || v->t->rank != 0 || v->t->nbytes != (size_t)tr_dtype_size(dt))) return false;
  if (tr_dtype_is_float(dt)) return !v->t && v->e && (sh_narrow(dt) ? v->d && !v->lv : v->lv && !v->d);
  bool cplx = tr_dtypes[dt].kind == TR_DK_COMPLEX;
  return v->t && !v->d && !v->lv && (cplx ? v->e != NULL : v->e == NULL);
}

static bool s_drop(ev_v *w) {
  sh_val *v = V(w);
  if (spare_form(v) && v->pool->nspare[v->dt] < SH_SPARE) {
    tr_tensor_free(v->bits);
    v->bits = NULL;
    v->spare_next = v->pool->spare[v->dt];
    v->pool->spare[v->dt] = v;
    v->pool->nspare[v->dt]++;
    return true;
  }
  free_planes(v);
  return false;
}

/* A spare scalar of dt, as new (zeroed when asked), or NULL. */
static sh_val *spare_take(sh_pool *pl, tr_dtype dt, bool zero) {
  sh_val *v = pl->spare[dt];
  if (!v) return NULL;
  pl->spare[dt] = v->spare_next;
  pl->nspare[dt]--;
  v->spare_next = NULL;
  v->hd.refs = 1;
  v->hd.kind = EV_ARRAY;
  v->hd.nelems = 0;
  v->hd.elems = NULL;
  if (zero) {
    if (v->d) v->d[0] = 0;
    if (v->lv) v->lv[0] = 0;
    if (v->e) v->e[0] = 0;
    if (v->t) memset(v->t->data, 0, v->t->nbytes);
    v->u[0] = 0;
  }
  return v;
}
static const ev_layout shadow_layout = {sizeof(sh_val), s_drop};

static sh_val *arr_new(sh_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims, bool zero) {
  double n = 1;
  for (int i = 0; i < rank; i++) n *= dims[i] > 0 ? (double)dims[i] : 0;
  bool flt = tr_dtype_is_float(dt);
  /* Admitted as exact mode admits the same result (its size in the
   * dtype), so both modes refuse the same modules; the shadow takes
   * 25 bytes per float element on top. */
  double bytes = n * tr_dtype_size(dt), shadow = n * (sizeof(long double) + sizeof(double) + 1.0);
  double limit = c->ev.opts.max_bytes > 0 ? (double)c->ev.opts.max_bytes : (double)TR_TENSOR_MAX_BYTES;
  if (bytes > limit || shadow > (double)TR_TENSOR_MAX_BYTES) {
    if (bytes > limit)
      ev_err(&c->ev, in, TR_ERR_UNSUPPORTED, "unsupported: a result of %.0f bytes is over the limit of %.0f",
             bytes, limit);
    else /* the shadow form is what does not fit: say its size, not the dtype's */
      ev_err(&c->ev, in, TR_ERR_UNSUPPORTED,
             "unsupported: a result of %.0f bytes in shadow form (value, bound and mark per element) "
             "is over the limit of %.0f", shadow, (double)TR_TENSOR_MAX_BYTES);
    return NULL;
  }
  sh_val *v = rank == 0 ? spare_take(&c->pool, dt, zero) : NULL;
  if (v) return v;
  tr_tensor *t = NULL;
  if (!flt && !(t = ev_new(&c->ev, in, dt, rank, dims))) return NULL;
  v = V(ev_value_array(&shadow_layout));
  v->dt = dt;
  v->rank = rank;
  v->dims = tr_xmalloc(sizeof(int64_t) * (size_t)(rank > 0 ? rank : 1));
  for (int i = 0; i < rank; i++) v->dims[i] = dims[i];
  v->n = (size_t)n;
  size_t m = v->n ? v->n : 1;
  v->t = t;
  v->pool = &c->pool;
  /* A result's planes are the big allocations: running out of memory
   * there is the module's size, reported as for a result over the limit. */
  bool ok = true;
  if (flt) {
    if (sh_narrow(dt)) ok = (v->d = pool_try(&c->pool, m * sizeof(double), zero)) != NULL;
    else ok = (v->lv = tr_try_calloc(m, sizeof(long double))) != NULL;
    ok = ok && (v->e = pool_try(&c->pool, m * sizeof(double), zero)) != NULL;
  } else if (tr_dtypes[dt].kind == TR_DK_COMPLEX) {
    /* One bound per element for both parts, around the values in t. */
    ok = (v->e = pool_try(&c->pool, m * sizeof(double), zero)) != NULL;
  }
  ok = ok && (v->u = pool_try(&c->pool, m, zero)) != NULL;
  if (!ok) {
    ev_err(&c->ev, in, TR_ERR_UNSUPPORTED, "unsupported: out of memory for a result of %zu elements in shadow form",
           v->n);
    sh_unref(v);
    return NULL;
  }
  return v;
}

sh_val *sh_arr_new(sh_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims) {
  return arr_new(c, in, dt, rank, dims, true);
}

sh_val *sh_arr_new_raw(sh_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims) {
  return arr_new(c, in, dt, rank, dims, false);
}

void sh_put(sh_val *a, size_t i, long double v, double e) {
  if (a->lv) {
    a->lv[i] = v;
  } else {
    double d = (double)v;
    a->d[i] = d;
    if (isfinite(d) && (long double)d != v) e = sh_up((long double)e + fabsl((long double)d - v));
  }
  a->e[i] = e;
}

sh_val *sh_tuple(int n, sh_val *const *elems) {
  return V(ev_value_tuple(&shadow_layout, n, (ev_v *const *)elems));
}

sh_val *sh_ref(sh_val *v) { return V(ev_value_ref(W(v))); }
void sh_unref(sh_val *v) { ev_value_unref(&shadow_layout, W(v)); }

tr_tensor *sh_round_tensor(sh_ctx *c, const tr_instr *in, const sh_val *a) {
  if (!sh_is_flt(a)) return tr_tensor_clone(a->t);
  tr_tensor *t = ev_new(&c->ev, in, a->dt, a->rank, a->dims);
  if (!t) return NULL;
  if (a->d) {
    ev_store_flts(t, a->d);
  } else {
    double *d = tr_xmalloc(sizeof(double) * (a->n ? a->n : 1));
    for (size_t i = 0; i < a->n; i++) d[i] = (double)a->lv[i];
    ev_store_flts(t, d);
    tr_free(d);
  }
  sh_bits_apply(a, t);
  return t;
}

bool sh_any_uncertain(const sh_val *a) {
  if (!sh_is_arr(a)) {
    for (int i = 0; i < a->hd.nelems; i++)
      if (sh_any_uncertain(sh_elems(a)[i])) return true;
    return false;
  }
  for (size_t i = 0; i < a->n; i++)
    if (a->u[i]) return true;
  return false;
}

bool sh_is_exact(const sh_val *a) {
  if (!sh_is_arr(a)) {
    for (int i = 0; i < a->hd.nelems; i++)
      if (!sh_is_exact(sh_elems(a)[i])) return false;
    return true;
  }
  for (size_t i = 0; i < a->n; i++)
    if (a->u[i] || (a->e && a->e[i] != 0)) return false;
  return true;
}

/* ev_load_flts over element ranges, for ev_par_for (parameters can be
 * large: embedding tables). */
typedef struct {
  const tr_tensor *t;
  double *d;
} load_job;

static void load_chunk(void *ctx, size_t lo, size_t hi) {
  const load_job *j = ctx;
  size_t es = (size_t)tr_dtype_size(j->t->dtype);
  int64_t len = (int64_t)(hi - lo);
  tr_tensor part = {j->t->dtype, 1, &len, (char *)j->t->data + lo * es, (hi - lo) * es};
  ev_load_flts(&part, j->d + lo);
}

void sh_load_doubles(const tr_tensor *t, double *d) {
  size_t n = tr_tensor_count(t);
  load_job j = {t, d};
  ev_par_for(ev_par_threads((double)n), n, load_chunk, &j);
}

void sh_materialize(sh_ctx *c, sh_val *v) {
  if (!v || !v->src) return;
  const tr_tensor *t = v->src;
  size_t m = v->n ? v->n : 1;
  v->pool = &c->pool;
  v->d = sh_pool_take(&c->pool, m * sizeof(double), false);
  v->e = sh_pool_take(&c->pool, m * sizeof(double), true);
  v->u = sh_pool_take(&c->pool, m, true);
  sh_load_doubles(t, v->d);
  v->src = NULL;
  sh_bits_capture(v, t);
}

/* Entry arguments of at least this many elements of a type up to 32 bits
 * stay lazy until an op needs their planes: a gather of a few rows from
 * an embedding table then costs the rows, not the table. */
#define LAZY_MIN ((size_t)1 << 16)

/* v (a new array value) as the lazy value of t, which outlives it. */
static void lazy_init(sh_val *v, const tr_tensor *t) {
  v->dt = t->dtype;
  v->rank = t->rank;
  v->dims = tr_xmalloc(sizeof(int64_t) * (size_t)(t->rank > 0 ? t->rank : 1));
  for (int i = 0; i < t->rank; i++) v->dims[i] = t->dims[i];
  v->n = tr_tensor_count(t);
  v->src = t;
}

static sh_val *lazy_arg(const tr_tensor *t) {
  sh_val *v = V(ev_value_array(&shadow_layout));
  lazy_init(v, t);
  return v;
}

tr_status sh_from_tensor(sh_ctx *c, const tr_instr *in, const tr_tensor *t, bool certain,
                         sh_val **out) {
  sh_val *r = sh_arr_new(c, in, t->dtype, t->rank, t->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  if (sh_is_flt(r)) {
    if (r->d) {
      load_job j = {t, r->d};
      ev_par_for(ev_par_threads((double)r->n), r->n, load_chunk, &j);
    } else {
      double *d = tr_xmalloc(sizeof(double) * (r->n ? r->n : 1));
      ev_load_flts(t, d);
      for (size_t i = 0; i < r->n; i++) r->lv[i] = d[i];
      tr_free(d);
    }
  } else {
    memcpy(r->t->data, t->data, t->nbytes);
  }
  sh_bits_capture(r, t);
  if (!certain) memset(r->u, 1, r->n);
  *out = r;
  return TR_OK;
}

/* The exact value of a shadow value, floats rounded to their dtype. */
static tr_value *to_exact(sh_ctx *c, const tr_instr *in, const sh_val *a) {
  if (a->hd.kind == EV_TOKEN) return tr_value_token();
  if (sh_is_arr(a)) {
    tr_tensor *t = sh_round_tensor(c, in, a);
    return t ? tr_value_tensor(t) : NULL;
  }
  tr_value *v = tr_value_tuple(a->hd.nelems, NULL);
  for (int i = 0; i < a->hd.nelems; i++)
    if (!(tr_value_elems(v)[i] = to_exact(c, in, sh_elems(a)[i]))) {
      tr_value_unref(v);
      return NULL;
    }
  return v;
}

static tr_status from_exact(sh_ctx *c, const tr_instr *in, const tr_value *v, bool int_certain,
                            bool flt_certain, sh_val **out) {
  *out = NULL;
  if (v->hd.kind == EV_TOKEN) {
    *out = V(ev_value_token(&shadow_layout));
    return TR_OK;
  }
  if (v->t)
    return sh_from_tensor(c, in, v->t, tr_dtype_is_float(v->t->dtype) ? flt_certain : int_certain, out);
  sh_val *r = sh_tuple(v->hd.nelems, NULL);
  for (int i = 0; i < v->hd.nelems; i++) {
    tr_status st = from_exact(c, in, tr_value_elems(v)[i], int_certain, flt_certain, &sh_elems(r)[i]);
    if (st != TR_OK) {
      sh_unref(r);
      return st;
    }
  }
  *out = r;
  return TR_OK;
}

/* A scatter of one integer array whose combiner is one associative,
 * commutative op of that type (add and multiply wrap around; and, or,
 * xor, max, min): every order of the duplicate updates gives the same
 * bits, so the unspecified combine order leaves no choice. */
static bool scatter_order_free(const tr_instr *in) {
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  tr_op op;
  bool swap;
  if (in->noperands != 3 || !k || !in->shape || !tr_shape_is_array(in->shape)) return false;
  tr_dtype dt = in->shape->dtype;
  if (tr_dtypes[dt].kind != TR_DK_SINT && tr_dtypes[dt].kind != TR_DK_UINT) return false;
  if (!ev_simple_binary(k, dt, &op, &swap)) return false;
  return op == TR_OP_ADD || op == TR_OP_MULTIPLY || op == TR_OP_AND || op == TR_OP_OR ||
         op == TR_OP_XOR || op == TR_OP_MAXIMUM || op == TR_OP_MINIMUM;
}

/* Ops whose integer results a correct implementation may choose
 * differently from the reference even on exact operands: scatter's
 * combine order (unless the combiner makes it moot) and
 * select-and-scatter's ties are unspecified, the default rng algorithm
 * is the implementation's. */
static bool free_choice(const tr_instr *in) {
  if (in->op == TR_OP_SCATTER && scatter_order_free(in)) return false;
  if (in->op == TR_OP_RNG_BIT_GENERATOR) {
    const tr_attr *aa = tr_instr_attr(in, TR_ATTR_ALGORITHM);
    return !aa || !aa->u.s || strcmp(aa->u.s, "rng_default") == 0;
  }
  return in->op == TR_OP_SCATTER || in->op == TR_OP_SELECT_AND_SCATTER || in->op == TR_OP_CUSTOM_CALL;
}

tr_status sh_fallback(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  *out = NULL;
  tr_value **xs = tr_xcalloc(in->noperands > 0 ? (size_t)in->noperands : 1, sizeof(tr_value *));
  tr_status st = TR_OK;
  bool exact = !free_choice(in);
  for (int i = 0; i < in->noperands && st == TR_OK; i++) {
    if (!(xs[i] = to_exact(c, in, ops[i]))) st = TR_ERR_UNSUPPORTED;
    exact = exact && sh_is_exact(ops[i]);
  }
  tr_value *r = NULL;
  if (st == TR_OK) st = ev_eval_instr(&c->ev, in, xs, &r);
  /* Bit operations on exact operands have one result, floats included. */
  bool bits = in->op == TR_OP_BITCAST || in->op == TR_OP_BITCAST_CONVERT ||
              in->op == TR_OP_COLLECTIVE_PERMUTE;
  /* A NaN made by arithmetic has no pattern to hand on (shadow_bits.c). */
  for (int i = 0; i < in->noperands && bits && exact; i++) exact = !sh_bits_unknown(ops[i]);
  if (st == TR_OK) st = from_exact(c, in, r, exact, exact && bits, out);
  tr_value_unref(r);
  for (int i = 0; i < in->noperands; i++) tr_value_unref(xs[i]);
  tr_free(xs);
  return st;
}

sh_val *sh_scalar_at(sh_ctx *c, const tr_instr *in, const sh_val *a, size_t i) {
  sh_val *s = sh_arr_new(c, in, a->dt, 0, NULL);
  if (!s) return NULL;
  if (sh_is_flt(a)) {
    sh_copy(s, 0, a, i);
  } else {
    size_t es = (size_t)tr_dtype_size(a->dt);
    memcpy(s->t->data, (const char *)a->t->data + i * es, es);
    if (s->e) s->e[0] = a->e ? a->e[i] : 0; /* complex */
  }
  s->u[0] = a->u[i];
  return s;
}

/* Stores scalar s into element i of a (same dtype). */
static void put_scalar(sh_val *a, size_t i, const sh_val *s) {
  if (sh_is_flt(a)) {
    sh_copy(a, i, s, 0);
  } else {
    size_t es = (size_t)tr_dtype_size(a->dt);
    memcpy((char *)a->t->data + i * es, s->t->data, es);
    if (a->e) a->e[i] = s->e ? s->e[0] : 0; /* complex */
  }
  a->u[i] = s->u[0];
}

/* A copy of v with every array element marked uncertain. */
static sh_val *mark_all(sh_ctx *c, const tr_instr *in, sh_val *v) {
  if (v->hd.kind == EV_TOKEN) return sh_ref(v);
  if (!sh_is_arr(v)) {
    sh_val *t = sh_tuple(v->hd.nelems, NULL);
    for (int i = 0; i < v->hd.nelems; i++)
      if (!(sh_elems(t)[i] = mark_all(c, in, sh_elems(v)[i]))) {
        sh_unref(t);
        return NULL;
      }
    return t;
  }
  sh_val *r = sh_arr_new(c, in, v->dt, v->rank, v->dims);
  if (!r) return NULL;
  if (sh_is_flt(v)) {
    if (v->d) memcpy(r->d, v->d, sizeof(double) * v->n);
    else memcpy(r->lv, v->lv, sizeof(long double) * v->n);
    memcpy(r->e, v->e, sizeof(double) * v->n);
  } else {
    memcpy(r->t->data, v->t->data, v->t->nbytes);
    if (r->e && v->e) memcpy(r->e, v->e, sizeof(double) * v->n);
  }
  memset(r->u, 1, r->n);
  return r;
}

/* ---- the shadow domain (core.h) ---- */

static tr_status sh_instr(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
static tr_status exact_value(sh_ctx *c, const tr_instr *in, sh_val **out);

static void s_shape(const ev_v *v, tr_dtype *dt, int *rank, const int64_t **dims) {
  *dt = V(v)->dt;
  *rank = V(v)->rank;
  *dims = V(v)->dims;
}
/* Constants are exact and certain (large ones stay lazy). */
static tr_status s_instr(void *dc, const tr_instr *in, ev_v **ops, ev_v **out) {
  if (in->op == TR_OP_CONSTANT) return exact_value(dc, in, (sh_val **)out);
  return sh_instr(dc, in, (sh_val **)ops, (sh_val **)out);
}
/* Lazy arguments get their planes here, except as the operand a gather,
 * slice or dynamic-slice reads a part of, as an operand of a call or
 * fusion (jax wraps its lookups in calls): the called computation's
 * instructions decide, or of a dot or convolution, which reads the values
 * alone (weights). */
static void s_operand(void *dc, const tr_instr *in, int j, ev_v *v) {
  bool part = (j == 0 && (in->op == TR_OP_GATHER || in->op == TR_OP_SLICE || in->op == TR_OP_DYNAMIC_SLICE)) ||
              in->op == TR_OP_CALL || in->op == TR_OP_FUSION || in->op == TR_OP_DOT ||
              in->op == TR_OP_CONVOLUTION;
  if (V(v)->src && !part) sh_materialize(dc, V(v));
}
/* The value is the rounded one; an uncertain mark makes the decision
 * unsure. */
static bool s_control(const ev_v *v, tr_dtype *dt, uint64_t *val, bool *unsure) {
  const sh_val *a = V(v);
  if (!sh_is_arr(a) || a->n != 1) return false;
  *dt = a->dt;
  *val = 0;
  if (a->t && !sh_is_flt(a) && tr_dtypes[a->dt].kind != TR_DK_COMPLEX) ev_load_ints(a->t, val);
  *unsure = a->u && a->u[0] != 0;
  return true;
}
/* Another trip count or branch may run in a correct implementation:
 * every element of the result is uncertain. */
static ev_v *s_unsure(void *dc, const tr_instr *in, ev_v *v) { return W(mark_all(dc, in, V(v))); }
/* Zeros are exact. */
static ev_v *s_zero(void *dc, const tr_instr *in, const tr_shape *s) {
  tr_value *z = ev_zero_value(&((sh_ctx *)dc)->ev, in, s);
  sh_val *r = NULL;
  if (z && from_exact(dc, in, z, true, true, &r) != TR_OK) r = NULL;
  tr_value_unref(z);
  return W(r);
}
/* Entry arguments are exact and certain; large float ones stay lazy
 * (only top-level ones: a tuple never holds a lazy value). */
static tr_status s_arg(void *dc, const tr_instr *p, const tr_tensor *a, bool top, ev_v **out) {
  if (top && sh_narrow(a->dtype) && tr_tensor_count(a) >= LAZY_MIN) {
    *out = W(lazy_arg(a));
    return TR_OK;
  }
  return sh_from_tensor(dc, p, a, true, (sh_val **)out);
}
static ev_v *s_array(void *dc, const tr_instr *in, const tr_shape *s) {
  return W(sh_arr_new(dc, in, s->dtype, s->rank, s->dims));
}
static size_t s_count(const ev_v *a) { return V(a)->n; }
static ev_v *s_scalar_at(void *dc, const tr_instr *in, const ev_v *a, size_t i) {
  return W(sh_scalar_at(dc, in, V(a), i));
}
static bool s_put(ev_v *a, size_t i, const ev_v *s) {
  const sh_val *v = V(s);
  if (!sh_is_arr(v) || v->dt != V(a)->dt || v->rank != 0) return false;
  put_scalar(V(a), i, v);
  return true;
}

/* No map_whole: map calls its computation element by element. */
static const ev_domain shadow_domain = {
  .name = "shadow value", .layout = &shadow_layout, .shape = s_shape, .instr = s_instr,
  .operand = s_operand, .control = s_control, .unsure = s_unsure, .zero = s_zero, .arg = s_arg,
  .array = s_array, .count = s_count, .scalar_at = s_scalar_at, .put = s_put,
};

tr_status sh_call(sh_ctx *c, const tr_instr *caller, const tr_comp *k, sh_val *const *params,
                  int np, sh_val **out) {
  ev_core core = {&shadow_domain, c, &c->ev};
  return evc_call(&core, caller, k, (ev_v *const *)params, np, (ev_v **)out);
}

/* ---- dispatch ---- */

static tr_status sh_instr_rule(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  tr_op op = in->op;
  *out = NULL;
  for (int i = 0; i < in->noperands; i++)
    if (!ops[i]) return ev_err(&c->ev, in, TR_ERR_INVALID, "operand %d has no value", i);
  tr_status st = ev_check_instr(&c->ev, in);
  if (st != TR_OK) return st;
  int arrays = 0;
  switch (op) {
  case TR_OP_CONVERT: case TR_OP_IS_FINITE: case TR_OP_COMPARE: case TR_OP_SELECT: case TR_OP_CLAMP:
    arrays = op == TR_OP_CONVERT || op == TR_OP_IS_FINITE ? 1 : op == TR_OP_COMPARE ? 2 : 3;
    break;
  case TR_OP_DOT: case TR_OP_CONVOLUTION: arrays = 2; break;
  default:
    if (tr_op_is_unary_kernel(op)) arrays = 1;
    else if (tr_op_is_binary_kernel(op)) arrays = 2;
  }
  if (arrays > in->noperands) return ev_err(&c->ev, in, TR_ERR_INVALID, "too few operands");
  for (int i = 0; i < arrays; i++)
    if (!sh_is_arr(ops[i])) return ev_err(&c->ev, in, TR_ERR_INVALID, "operand %d is not an array", i);
  if (evc_routes(op)) {
    ev_core core = {&shadow_domain, c, &c->ev};
    return evc_route(&core, in, (ev_v **)ops, (ev_v **)out);
  }
  switch (op) {
  case TR_OP_COPY: case TR_OP_OPT_BARRIER: case TR_OP_DOMAIN: case TR_OP_ADD_DEPENDENCY:
    *out = sh_ref(ops[0]);
    return TR_OK;
  case TR_OP_AFTER_ALL: case TR_OP_OUTFEED: *out = V(ev_value_token(&shadow_layout)); return TR_OK;
  case TR_OP_IOTA: return sh_iota(c, in, out);
  case TR_OP_CONVERT: return sh_convert(c, in, ops[0], out);
  case TR_OP_COMPARE: return sh_compare(c, in, ops[0], ops[1], out);
  case TR_OP_SELECT: return sh_select(c, in, ops[0], ops[1], ops[2], out);
  case TR_OP_CLAMP: return sh_clamp(c, in, ops[0], ops[1], ops[2], out);
  case TR_OP_BITCAST:
    if (sh_is_arr(ops[0]) && ops[0]->dt == in->shape->dtype) return sh_move(c, in, ops, out);
    return sh_fallback(c, in, ops, out);
  case TR_OP_BROADCAST: case TR_OP_RESHAPE: case TR_OP_TRANSPOSE: case TR_OP_SLICE:
  case TR_OP_DYNAMIC_SLICE: case TR_OP_DYNAMIC_UPDATE_SLICE: case TR_OP_CONCATENATE:
  case TR_OP_PAD: case TR_OP_REVERSE:
    return sh_move(c, in, ops, out);
  case TR_OP_GATHER: return sh_gather(c, in, ops, out);
  case TR_OP_DOT: case TR_OP_CONVOLUTION:
    return sh_dot_conv(c, in, ops[0], ops[1], out);
  case TR_OP_CUSTOM_CALL: case TR_OP_ALL_REDUCE: case TR_OP_ALL_GATHER: case TR_OP_REDUCE_SCATTER:
  case TR_OP_ALL_TO_ALL: {
    /* The exact interpreter accepts only the forms that hand their
     * operands back unchanged (identity custom calls, one participant):
     * let it check, then pass the shadow operands through. */
    sh_val *r = NULL;
    if ((st = sh_fallback(c, in, ops, &r)) != TR_OK) return st;
    sh_unref(r);
    if (in->shape->dtype != TR_DT_TUPLE) {
      *out = sh_ref(ops[0]);
    } else {
      sh_val **el = tr_xcalloc(in->noperands > 0 ? (size_t)in->noperands : 1, sizeof(sh_val *));
      for (int i = 0; i < in->noperands; i++) el[i] = sh_ref(ops[i]);
      *out = sh_tuple(in->noperands, el);
      tr_free(el);
    }
    return TR_OK;
  }
  case TR_OP_REDUCE_PRECISION: return sh_reduce_precision(c, in, ops[0], out);
  case TR_OP_REDUCE: return sh_reduce(c, in, ops, out);
  case TR_OP_REDUCE_WINDOW: return sh_reduce_window(c, in, ops, out);
  case TR_OP_SORT: return sh_sort(c, in, ops, out);
  case TR_OP_SCATTER: return sh_scatter(c, in, ops, out);
  case TR_OP_SELECT_AND_SCATTER:
    if (in->noperands != 3) return ev_err(&c->ev, in, TR_ERR_INVALID, "select-and-scatter needs 3 operands");
    return sh_select_and_scatter(c, in, ops, out);
  case TR_OP_TOPK: return sh_topk(c, in, ops, out);
  case TR_OP_FFT: return sh_fft(c, in, ops, out);
  case TR_OP_CHOLESKY:
    if (in->noperands != 1 || !sh_is_arr(ops[0])) return ev_err(&c->ev, in, TR_ERR_INVALID, "cholesky needs an array operand");
    return sh_cholesky(c, in, ops, out);
  case TR_OP_TRIANGULAR_SOLVE:
    if (in->noperands != 2 || !sh_is_arr(ops[0]) || !sh_is_arr(ops[1]))
      return ev_err(&c->ev, in, TR_ERR_INVALID, "triangular-solve needs 2 array operands");
    return sh_triangular_solve(c, in, ops, out);
  default:
    if (tr_op_is_unary_kernel(op)) return sh_unary(c, in, ops[0], out);
    if (tr_op_is_binary_kernel(op)) return sh_binary(c, in, ops[0], ops[1], out);
    return sh_fallback(c, in, ops, out);
  }
}

/* Sets the marks of every array leaf of v whose element kind is k (or of
 * every leaf when all), and clears float bounds when certain. */
void sh_mark_leaves(sh_val *v, bool all, tr_dkind k, unsigned char u) {
  if (!sh_is_arr(v)) {
    for (int i = 0; i < v->hd.nelems; i++) sh_mark_leaves(sh_elems(v)[i], all, k, u);
    return;
  }
  if (!all && tr_dtypes[v->dt].kind != k) return;
  memset(v->u, u, v->n);
  if (!u && v->e) memset(v->e, 0, sizeof(double) * v->n);
}

static tr_status sh_instr_one(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  /* real, imag and complex are complex arithmetic on any operand (real of
   * a real value too); the others only in a module with complex values */
  bool cplx_op = in->op == TR_OP_REAL || in->op == TR_OP_IMAG || in->op == TR_OP_COMPLEX;
  if ((c->cplx || cplx_op) && sh_is_complex_arith(in)) {
    tr_status cst = ev_check_instr(&c->ev, in);
    return cst != TR_OK ? cst : sh_complex(c, in, ops, out);
  }
  tr_status st = sh_instr_rule(c, in, ops, out);
  if (st == TR_OK && *out) sh_fix_format(*out);
  if (st == TR_OK && *out && c->cplx && ev_complex_involved(in)) st = sh_complex_combined(c, in, ops, *out);
  return st;
}

/* Whether in is a reduce or reduce-window of one operand whose reducer
 * has an identity and whose init (ops[1], as run) is not certainly it
 * (tr_shadow_opts.init_undef). Max and min of a float type without
 * infinities have none and are left alone. */
static bool init_undefined(sh_ctx *c, const tr_instr *in, sh_val **ops) {
  if ((in->op != TR_OP_REDUCE && in->op != TR_OP_REDUCE_WINDOW) || in->noperands != 2) return false;
  sh_val *init = ops[1];
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  tr_op op;
  bool swap;
  if (!k || !init || !sh_is_arr(init) || init->n != 1 || !ev_simple_binary(k, init->dt, &op, &swap)) return false;
  tr_dtype dt = init->dt;
  if (op != TR_OP_ADD && op != TR_OP_MULTIPLY && op != TR_OP_MAXIMUM && op != TR_OP_MINIMUM &&
      op != TR_OP_AND && op != TR_OP_OR && op != TR_OP_XOR)
    return false;
  if (tr_dtype_is_float(dt)) {
    if ((op == TR_OP_MAXIMUM || op == TR_OP_MINIMUM) && !tr_float_has_inf(dt)) return false;
    if (op == TR_OP_AND || op == TR_OP_OR || op == TR_OP_XOR) return false;
    sh_materialize(c, init);
    if (init->u[0] || init->e[0] != 0) return true;
    long double v = sh_get(init, 0);
    return op == TR_OP_ADD ? v != 0 : op == TR_OP_MULTIPLY ? v != 1
         : op == TR_OP_MAXIMUM ? v != -INFINITY : v != INFINITY;
  }
  if (!init->t || (dt != TR_DT_PRED && !tr_dtype_is_int(dt))) return false;
  if (init->u && init->u[0]) return true;
  bool sgn = tr_dtypes[dt].kind == TR_DK_SINT;
  int64_t iv = sgn ? tr_tensor_get_i(init->t, 0) : (int64_t)tr_tensor_get_u(init->t, 0);
  int64_t lo = dt == TR_DT_PRED ? 0 : tr_int_min(dt), hi = dt == TR_DT_PRED ? 1 : (int64_t)tr_int_max(dt);
  switch (op) {
  case TR_OP_ADD: case TR_OP_OR: case TR_OP_XOR: return iv != 0;
  case TR_OP_MULTIPLY: return iv != 1;
  case TR_OP_AND: return iv != (sgn ? -1 : hi);
  case TR_OP_MAXIMUM: return iv != lo;
  default: return iv != hi;
  }
}

/* r with every element marked uncertain: r itself when it is the only
 * reference, else a copy; NULL after a located error. */
static sh_val *all_uncertain(sh_ctx *c, const tr_instr *in, sh_val *r) {
  if (r->hd.refs == 1 && r->u) {
    memset(r->u, 1, r->n);
    return sh_ref(r);
  }
  sh_materialize(c, r);
  sh_val *w = sh_arr_new_raw(c, in, r->dt, r->rank, r->dims);
  if (!w) return NULL;
  if (r->t) {
    tr_tensor_free(w->t);
    w->t = tr_tensor_clone(r->t);
  }
  if (r->d) memcpy(w->d, r->d, sizeof(double) * r->n);
  else if (r->lv) memcpy(w->lv, r->lv, sizeof(long double) * r->n);
  if (r->e) memcpy(w->e, r->e, sizeof(double) * r->n);
  if (r->bits) w->bits = tr_tensor_clone(r->bits);
  memset(w->u, 1, r->n);
  return w;
}

/* Whether in is a reduce of several operands (a variadic reducer such as
 * argmax's) whose init, as run, is not an identity of its reducer on the
 * operands' values: reducer(init, x) differs from x, bit for bit, for
 * some certain element x (tr_shadow_opts.init_undef; XLA drops the init
 * of a reduce over size-1 dims). An uncertain init, and reduces of more
 * than 65,536 elements, are left alone. */
static bool init_undefined_variadic(sh_ctx *c, const tr_instr *in, sh_val **ops) {
  int n = in->noperands / 2;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  if (in->op != TR_OP_REDUCE || n < 2 || n > 8 || in->noperands % 2 || !k) return false;
  tr_tensor *xt[8] = {0}, *it[8] = {0};
  size_t cnt = 0;
  bool ok = true, undef = false;
  for (int i = 0; i < n && ok; i++) {
    sh_val *x = ops[i], *v = ops[n + i];
    ok = x && v && sh_is_arr(x) && sh_is_arr(v) && v->n == 1 && (i == 0 || x->n == cnt);
    if (!ok) break;
    cnt = x->n;
    sh_materialize(c, x);
    sh_materialize(c, v);
    ok = !(v->u && v->u[0]) && (xt[i] = sh_round_tensor(c, in, x)) && (it[i] = sh_round_tensor(c, in, v));
  }
  ok = ok && cnt <= 65536;
  for (size_t j = 0; ok && !undef && j < cnt; j++) {
    bool sure = true;
    for (int i = 0; i < n; i++) sure &= !(ops[i]->u && ops[i]->u[j]);
    if (!sure) continue; /* only a certain element shows the init is no identity */
    tr_value *args[16] = {0}, *r = NULL;
    for (int i = 0; i < n && ok; i++) {
      args[i] = ev_scalar_at(&c->ev, in, it[i], 0, it[i]->dtype);
      args[n + i] = ev_scalar_at(&c->ev, in, xt[i], j, xt[i]->dtype);
      ok = args[i] && args[n + i];
    }
    ok = ok && ev_call(&c->ev, in, k, args, 2 * n, &r) == TR_OK && r && r->hd.nelems == n;
    for (int i = 0; i < n && ok && !undef; i++) {
      const tr_value *e = tr_value_elems(r)[i];
      size_t es = (size_t)tr_dtype_size(xt[i]->dtype);
      ok = e->t && e->t->dtype == xt[i]->dtype;
      undef = ok && memcmp(e->t->data, (const char *)xt[i]->data + j * es, es) != 0;
    }
    for (int i = 0; i < 2 * n; i++)
      if (args[i]) tr_value_unref(args[i]);
    if (r) tr_value_unref(r);
  }
  for (int i = 0; i < n; i++) {
    tr_tensor_free(xt[i]);
    tr_tensor_free(it[i]);
  }
  return ok && undef;
}

/* A variadic reduce's tuple result with every element of every leaf
 * uncertain; NULL after a located error. */
static sh_val *all_uncertain_tuple(sh_ctx *c, const tr_instr *in, sh_val *r) {
  int n = r->hd.nelems;
  sh_val *el[8];
  for (int i = 0; i < n; i++) {
    el[i] = all_uncertain(c, in, sh_elems(r)[i]);
    if (!el[i]) {
      while (i-- > 0) sh_unref(el[i]);
      return NULL;
    }
  }
  return sh_tuple(n, el);
}

static tr_status sh_instr(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  tr_status st = c->flush && sh_flushes(in) ? sh_instr_flushed(c, in, ops, out, sh_instr_one)
                                         : sh_instr_one(c, in, ops, out);
  if (st == TR_OK && c->init_undef && *out && sh_is_arr(*out) && (*out)->n > 0 && init_undefined(c, in, ops)) {
    sh_val *w = all_uncertain(c, in, *out);
    sh_unref(*out);
    *out = w;
    if (!w) st = TR_ERR_UNSUPPORTED;
  }
  if (st == TR_OK && c->init_undef && *out && !sh_is_arr(*out) && (*out)->hd.nelems <= 8 &&
      init_undefined_variadic(c, in, ops)) {
    sh_val *w = all_uncertain_tuple(c, in, *out);
    sh_unref(*out);
    *out = w;
    if (!w) st = TR_ERR_UNSUPPORTED;
  }
  if (st == TR_OK && c->flush_res && *out) {
    sh_val *w = sh_flush_result(c, in, *out);
    sh_unref(*out);
    *out = w;
    if (!w) st = TR_ERR_UNSUPPORTED;
  }
  if (st == TR_OK && c->excess && *out) {
    sh_val *w = sh_excess_mark(c, in, ops, *out);
    sh_unref(*out);
    *out = w;
    if (!w) st = TR_ERR_UNSUPPORTED;
  }
  if (st == TR_OK && c->fma && *out) {
    sh_val *w = sh_fma_mark(c, in, ops, *out);
    sh_unref(*out);
    *out = w;
    if (!w) st = TR_ERR_UNSUPPORTED;
  }
  return st;
}

/* ---- frames ---- */

/* A constant: its literal, exact and certain. */
/* A large constant of a float type up to 32 bits stays lazy as the large
 * arguments do (an embedding table looked up by a gather): its sh_val and
 * a tensor view of the literal (data and dims in the module, which
 * outlives the evaluation) in one block, so freeing the value frees the
 * view. */
typedef struct {
  sh_val v;
  tr_tensor view;
} lazy_const;

static sh_val *lazy_constant(const tr_instr *in) {
  const tr_literal *l = in->literal;
  const tr_shape *s = in->shape;
  if (!l || l->elided || !l->data || !s || !tr_shape_is_array(s) || !sh_narrow(s->dtype)) return NULL;
  size_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= (size_t)s->dims[i];
  if (n < LAZY_MIN) return NULL;
  lazy_const *b = tr_xcalloc(1, sizeof *b);
  b->view = (tr_tensor){s->dtype, s->rank, s->dims, l->data, n * (size_t)tr_dtype_size(s->dtype)};
  b->v.hd = (ev_v){.refs = 1, .kind = EV_ARRAY}; /* what ev_value_array sets */
  lazy_init(&b->v, &b->view);
  return &b->v;
}

static tr_status exact_value(sh_ctx *c, const tr_instr *in, sh_val **out) {
  if ((*out = lazy_constant(in))) return TR_OK;
  tr_value *r = NULL;
  tr_status st = ev_eval_instr(&c->ev, in, NULL, &r);
  if (st == TR_OK) st = from_exact(c, in, r, true, true, out);
  tr_value_unref(r);
  return st;
}

/* ---- entry ---- */

static void make_out(sh_ctx *c, sh_val *a, tr_shadow_out *o) {
  memset(o, 0, sizeof *o);
  o->dtype = a->dt;
  o->rank = a->rank;
  o->dims = tr_xmalloc(sizeof(int64_t) * (size_t)(a->rank > 0 ? a->rank : 1));
  for (int i = 0; i < a->rank; i++) o->dims[i] = a->dims[i];
  o->n = a->n;
  size_t m = a->n ? a->n : 1;
  if (a->src) {
    /* A lazy argument or constant passed through (a step function
     * returning its weights): exact and certain, its values as they are. */
    o->uncertain = tr_xcalloc(m, 1);
    o->value = tr_xmalloc(sizeof(double) * m);
    o->bound = tr_xcalloc(m, sizeof(double));
    sh_load_doubles(a->src, o->value);
    o->exact = tr_tensor_clone(a->src);
    return;
  }
  for (size_t i = 0; i < a->n; i++) o->nuncertain += a->u[i] != 0;
  if (a->d) o->exact = sh_round_tensor(c, NULL, a);
  /* A leaf no one else holds hands its planes over (plain heap blocks,
   * pool ones included); a shared one is copied. */
  bool take = a->hd.refs == 1;
  if (take) {
    o->uncertain = a->u;
    a->u = NULL;
  } else {
    o->uncertain = tr_xmalloc(m);
    memcpy(o->uncertain, a->u, a->n);
  }
  if (sh_is_flt(a)) {
    if (a->d) {
      /* Doubles already: no rounding gap to add. */
      for (size_t i = 0; i < a->n; i++)
        if (!o->uncertain[i] && isfinite(a->d[i]) && a->e[i] > o->max_bound) o->max_bound = a->e[i];
      if (take) {
        o->value = a->d;
        o->bound = a->e;
        a->d = NULL;
        a->e = NULL;
      } else {
        o->value = tr_xmalloc(sizeof(double) * m);
        o->bound = tr_xmalloc(sizeof(double) * m);
        memcpy(o->value, a->d, sizeof(double) * a->n);
        memcpy(o->bound, a->e, sizeof(double) * a->n);
      }
      return;
    }
    o->value = tr_xmalloc(sizeof(double) * m);
    o->bound = tr_xmalloc(sizeof(double) * m);
    for (size_t i = 0; i < a->n; i++) {
      long double lv = sh_get(a, i);
      double d = (double)lv;
      long double gap = isfinite(d) ? fabsl((long double)d - lv) : 0;
      o->value[i] = d;
      o->bound[i] = sh_up((long double)a->e[i] + gap);
      if (!o->uncertain[i] && isfinite(d) && o->bound[i] > o->max_bound) o->max_bound = o->bound[i];
    }
  }
  if (tr_dtypes[a->dt].kind == TR_DK_COMPLEX && a->e) {
    o->bound = tr_xmalloc(sizeof(double) * m);
    memcpy(o->bound, a->e, sizeof(double) * a->n);
    for (size_t i = 0; i < a->n; i++)
      if (!o->uncertain[i] && a->e[i] > o->max_bound) o->max_bound = a->e[i];
  }
  o->exact = sh_round_tensor(c, NULL, a);
}

/* Gives the float leaves of v (argument *k onwards, depth-first) their
 * tr_shadow_opts.arg_ulps bounds. */
static void arg_bounds(sh_ctx *c, sh_val *v, const double *ulps, int *k) {
  if (v->hd.kind == EV_TOKEN) return;
  if (!sh_is_arr(v)) {
    for (int i = 0; i < v->hd.nelems; i++) arg_bounds(c, sh_elems(v)[i], ulps, k);
    return;
  }
  double q = ulps[(*k)++];
  if (!(q > 0) || !sh_is_flt(v)) return;
  sh_materialize(c, v);
  sh_fmt f;
  sh_fmt_of(v->dt, &f);
  for (size_t i = 0; i < v->n; i++) {
    long double x = sh_get(v, i);
    if (isfinite(x)) v->e[i] = (double)(q * sh_ulp(&f, x));
  }
}

static tr_status shadow_body(sh_ctx *c, const tr_module *m, const tr_shadow_opts *opts,
                             tr_tensor *const *args, int nargs, tr_shadow_out **outs, int *nouts,
                             tr_diag *d) {
  tr_ulp_table *deftab = NULL;
  c->ev.m = m;
  c->ev.d = d;
  if (opts) {
    c->ev.opts = opts->eval;
    c->flush = opts->flush;
    c->cvt_undef = opts->cvt_undef;
    c->flush_res = opts->flush_results;
    c->init_undef = opts->init_undef;
    c->sel_nan_undef = opts->select_nan_undef;
    c->excess = opts->excess;
    c->excess_ops = opts->excess_ops;
    c->fma = opts->fma;
    c->fma_recip = opts->fma_recip;
    c->nan_sign = opts->nan_sign;
  }
  if (opts && opts->ulps) {
    c->ut = opts->ulps;
  } else {
    deftab = tr_xmalloc(sizeof *deftab);
    tr_ulp_table_default(deftab);
    c->ut = deftab;
  }
  if (!m->entry) {
    tr_diag_errorf(d, "%s: error: module has no ENTRY computation", m->file ? m->file : "<module>");
    tr_free(deftab);
    return TR_ERR_INVALID;
  }
  if (!c->ev.opts.verified) {
    tr_status vs = tr_verify(m, d);
    if (vs != TR_OK) {
      tr_free(deftab);
      return vs;
    }
    c->ev.opts.verified = true;
  }
  /* As tr_eval_opt: each async pair is its synchronous op. */
  tr_module *sync = tr_desugared_copy(m);
  if (sync) {
    tr_shadow_opts o2;
    if (opts) o2 = *opts;
    else memset(&o2, 0, sizeof o2);
    o2.ulps = c->ut;
    o2.eval = c->ev.opts;
    o2.eval.verified = false;
    tr_status s = tr_eval_shadow(sync, &o2, args, nargs, outs, nouts, d);
    tr_module_free(sync);
    tr_free(deftab);
    return s;
  }
  evc_begin(&c->ev, m);
  c->cplx = ev_module_complex(m);
  ev_core core = {&shadow_domain, c, &c->ev};
  const tr_comp *e = m->entry;
  int np = e->nparams;
  sh_val **params = tr_xcalloc(np > 0 ? (size_t)np : 1, sizeof(sh_val *));
  tr_status st = evc_bind(&core, e, args, nargs, (ev_v **)params);
  if (st == TR_OK && opts && opts->arg_ulps) {
    int k = 0;
    for (int i = 0; i < np; i++) arg_bounds(c, params[i], opts->arg_ulps, &k);
  }
  sh_val *res = NULL;
  if (st == TR_OK) st = sh_call(c, NULL, e, params, np, &res);
  /* The arguments let go first: a result leaf that is an argument (a step
   * function returning its weights) is then held by the result alone and
   * hands its planes over. */
  for (int i = 0; i < np; i++) sh_unref(params[i]);
  if (st == TR_OK) {
    int n = 0;
    sh_val **leaves = (sh_val **)evc_leaves(&core, W(res), &n);
    *outs = tr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(tr_shadow_out));
    for (int i = 0; i < n; i++) make_out(c, leaves[i], &(*outs)[i]);
    *nouts = n;
    tr_free(leaves);
  }
  sh_unref(res);
  tr_free(params);
  evc_end(&c->ev);
  tr_free(deftab);
  pool_free(&c->pool);
  if (c->helpers) tr_module_free(c->helpers);
  return st;
}

/* One shadow evaluation in a heap frame, as tr_eval_opt's (eval.c). */
typedef struct {
  sh_ctx c;
  const tr_shadow_opts *opts;
  tr_tensor *const *args;
  int nargs;
  tr_shadow_out *outs;
  int nouts;
  tr_status st;
} shadow_job;

static void shadow_run(void *p) {
  shadow_job *j = p;
  j->st = shadow_body(&j->c, j->c.ev.m, j->opts, j->args, j->nargs, &j->outs, &j->nouts, j->c.ev.d);
}

tr_status tr_eval_shadow(const tr_module *m, const tr_shadow_opts *opts, tr_tensor *const *args,
                         int nargs, tr_shadow_out **outs, int *nouts, tr_diag *d) {
  *outs = NULL;
  *nouts = 0;
  shadow_job j;
  memset(&j, 0, sizeof j);
  j.c.ev.m = m;
  j.c.ev.d = d;
  j.opts = opts;
  j.args = args;
  j.nargs = nargs;
  size_t bytes = 0;
  if (!tr_heap_run(shadow_run, &j, &bytes)) return ev_oom(&j.c.ev, bytes);
  *outs = j.outs;
  *nouts = j.nouts;
  return j.st;
}

void tr_shadow_free(tr_shadow_out *outs, int nouts) {
  if (!outs) return;
  for (int i = 0; i < nouts; i++) {
    tr_free(outs[i].dims);
    tr_free(outs[i].value);
    tr_free(outs[i].bound);
    tr_free(outs[i].uncertain);
    tr_tensor_free(outs[i].exact);
  }
  tr_free(outs);
}
