/* inputs.c - input distributions and the default policy (inputs.h).
 *
 * Every value is a pure function of (seed, stream, element, draw number):
 * no generator state, so tensors can be filled in any order or in parallel
 * and a seed means the same bytes everywhere. Only integer operations and
 * correctly rounded IEEE arithmetic (+ - * / sqrt, ldexp, frexp) are used:
 * libm's log/exp/cos differ between C libraries, so the normal
 * distribution uses the polar method with a logarithm written here. */
#include "inputs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const dist_names[TR_DIST_COUNT] = {
  "default", "normal", "uniform", "positive", "large", "tiny", "denormal",
  "integer", "full", "boundary", "index", "index-edge", "index-oob",
  "index-dup",
};

const char *tr_dist_name(tr_dist d) {
  return (unsigned)d < TR_DIST_COUNT ? dist_names[d] : "?";
}

bool tr_dist_lookup(const char *name, tr_dist *d) {
  for (int i = 0; i < TR_DIST_COUNT; i++)
    if (strcmp(name, dist_names[i]) == 0) {
      *d = (tr_dist)i;
      return true;
    }
  return false;
}

void tr_input_spec_init(tr_input_spec *s, tr_dist dist) {
  memset(s, 0, sizeof *s);
  s->dist = dist;
  s->bound = 15;
  s->bound_axis = -1;
}

void tr_input_spec_print(tr_buf *b, const tr_input_spec *s) {
  if (s->ndomain > 0) {
    tr_buf_printf(b, "domain-edge (%d ranges)", s->ndomain);
    return;
  }
  tr_buf_puts(b, tr_dist_name(s->dist));
  if (tr_dist_is_index(s->dist)) {
    if (s->bound_axis < 0) {
      tr_buf_printf(b, " bound=%lld", (long long)s->bound);
    } else {
      tr_buf_puts(b, " bound=[");
      for (int i = 0; i < s->nbounds; i++)
        tr_buf_printf(b, "%s%lld", i ? "," : "", (long long)s->bounds[i]);
      tr_buf_printf(b, "]@%d", s->bound_axis);
    }
  }
  if (s->special_rate > 0) tr_buf_printf(b, " specials=%g", s->special_rate);
}

/* ---- the generator ---- */

/* splitmix64's output function on x + golden ratio: a bijection that
 * mixes every input bit into every output bit. */
static uint64_t mix(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* The first two mixes depend only on the leaf: done once per tensor. */
static uint64_t leaf_key(uint64_t seed, uint64_t stream) {
  return mix(mix(seed) ^ stream);
}

uint64_t tr_input_bits(uint64_t seed, uint64_t stream, uint64_t index,
                       uint64_t k) {
  return mix(mix(leaf_key(seed, stream) ^ index) ^ k);
}

/* Draw numbers: value draws count up from 0 (the imaginary part from
 * K_IMAG), the special-value decision has its own so that a rate changes
 * only the elements it replaces. */
enum { K_IMAG = 64, K_SPECIAL = 1000, K_SPECIAL_WHICH = 1001 };

static uint64_t draw(uint64_t e, uint64_t k) { return mix(e ^ k); }

/* [0, 1) with 53 random bits. */
static double unit(uint64_t bits) { return (double)(bits >> 11) * 0x1p-53; }

/* High 64 bits of a*b, without a 128-bit type (-Wpedantic). */
static uint64_t mulhi(uint64_t a, uint64_t b) {
  uint64_t al = a & 0xffffffffu, ah = a >> 32, bl = b & 0xffffffffu,
           bh = b >> 32;
  uint64_t ll = al * bl, lh = al * bh, hl = ah * bl, hh = ah * bh;
  uint64_t mid = (ll >> 32) + (lh & 0xffffffffu) + (hl & 0xffffffffu);
  return hh + (lh >> 32) + (hl >> 32) + (mid >> 32);
}

/* Uniform in [0, n) by multiply-shift (no modulo bias worth the name);
 * n == 0 stands for 2^64. */
static uint64_t below(uint64_t bits, uint64_t n) {
  return n == 0 ? bits : mulhi(bits, n);
}

/* Uniform integer in [lo, hi] (int64 values, lo <= hi). */
static int64_t range_i(uint64_t bits, int64_t lo, int64_t hi) {
  uint64_t span = (uint64_t)hi - (uint64_t)lo + 1; /* 0 = all of int64 */
  return (int64_t)((uint64_t)lo + below(bits, span));
}

/* Natural logarithm of x > 0 finite, from frexp and the atanh series:
 * libm's log is not the same on every machine. Good to ~1 ulp. */
static double det_log(double x) {
  int e;
  double m = frexp(x, &e); /* x = m·2^e, m in [0.5, 1) */
  if (m < 0.70710678118654752440) {
    m *= 2;
    e--;
  }
  double t = (m - 1) / (m + 1), t2 = t * t, term = t, sum = 0;
  for (int k = 1; k <= 27; k += 2) { /* |t| <= 0.172: t^29 < 2^-70 */
    sum += term / k;
    term *= t2;
  }
  return 2 * sum + e * 0.69314718055994530942;
}

/* N(0,1) by Marsaglia's polar method (rejection: draws k0, k0+1, ...). */
static double normal01(uint64_t e, uint64_t k0) {
  for (int i = 0; i < 30; i++) {
    double u = 2 * unit(draw(e, k0 + 2 * (uint64_t)i)) - 1;
    double v = 2 * unit(draw(e, k0 + 2 * (uint64_t)i + 1)) - 1;
    double s = u * u + v * v;
    if (s > 0 && s < 1) return u * sqrt(-2 * det_log(s) / s);
  }
  return 0; /* 0.215^30: never in practice, but bounded */
}

/* ---- floats ---- */

/* Facts about a float dtype the distributions need. */
typedef struct {
  tr_dtype t;
  int mbits;      /* stored mantissa bits */
  int emin, emax; /* exponents of the smallest normal and the largest value */
  double max;     /* largest finite value */
  bool unsigned_; /* no sign bit (f8e8m0fnu) */
  bool has_sub;   /* has subnormals */
} fl_info;

static void fl_info_init(fl_info *f, tr_dtype t) {
  const tr_dtype_info *di = &tr_dtypes[t];
  f->t = t;
  f->mbits = di->mbits;
  f->unsigned_ = di->fstyle == TR_FS_E8M0;
  f->emin = f->unsigned_ ? -di->bias : 1 - di->bias;
  f->has_sub = di->mbits > 0;
  f->max = tr_float_max(t);
  int e;
  frexp(f->max, &e);
  f->emax = e - 1;
}

/* v rounded to the dtype (nearest even), clamped to ±max first so narrow
 * types without inf never turn a large draw into NaN. */
static double fl_round(const fl_info *f, double v) {
  if (isnan(v)) return v;
  if (f->unsigned_ && v < 0) v = -v;
  if (v > f->max) v = f->max;
  if (v < -f->max) v = -f->max;
  return tr_float_to_double(f->t, tr_float_from_double(f->t, v));
}

static double with_sign(const fl_info *f, double v, uint64_t bits) {
  return !f->unsigned_ && (bits & 1) ? -v : v;
}

/* (1 + random mantissa)·2^exp with exp uniform in [lo, hi]. */
static double binade(const fl_info *f, uint64_t e, int lo, int hi) {
  if (hi < lo) hi = lo;
  int x = (int)range_i(draw(e, 0), lo, hi);
  double m = 1 + unit(draw(e, 1));
  return fl_round(f, with_sign(f, ldexp(m, x), draw(e, 2)));
}

/* The edge values of a float type; a fixed order so draws pick the same. */
static int fl_boundary(const fl_info *f, double *out) {
  int n = 0, mb = f->mbits;
  double cand[16];
  cand[n++] = 0;
  cand[n++] = 1;
  cand[n++] = 0.5;
  cand[n++] = 2;
  cand[n++] = f->max;
  cand[n++] = f->max - ldexp(1, f->emax - mb); /* just below max */
  cand[n++] = ldexp(1, f->emin);               /* smallest normal */
  if (f->has_sub) {
    cand[n++] = ldexp(1, f->emin - mb);                      /* smallest */
    cand[n++] = ldexp(1, f->emin) - ldexp(1, f->emin - mb); /* largest sub */
  }
  cand[n++] = 1 + ldexp(1, -mb);       /* next after 1 */
  cand[n++] = 1 - ldexp(1, -mb - 1);   /* last before 1 */
  cand[n++] = ldexp(1, mb + 1);        /* last of the contiguous integers */
  cand[n++] = ldexp(1, mb + 1) + 2;    /* first gap above them */
  int k = 0;
  for (int i = 0; i < n; i++) {
    double v = cand[i];
    if (v > f->max || fl_round(f, v) != v) continue; /* not in this type */
    out[k++] = v;
  }
  return k;
}

/* A uniformly chosen special value the dtype has; false when it has none
 * (the element keeps its drawn value). */
static bool fl_special(const fl_info *f, uint64_t bits, double *v) {
  double c[4];
  int n = 0;
  const tr_dtype_info *di = &tr_dtypes[f->t];
  if (tr_float_has_nan(f->t)) c[n++] = NAN;
  if (tr_float_has_inf(f->t)) {
    c[n++] = INFINITY;
    c[n++] = -INFINITY;
  }
  if (di->fstyle != TR_FS_FNUZ && !f->unsigned_) c[n++] = -0.0;
  if (n == 0) return false;
  *v = c[below(bits, (uint64_t)n)];
  return true;
}

/* A domain-edge value (tr_input_spec.ndomain): draws from K_DOMAIN on. */
enum { K_DOMAIN = 2000 };
static double domain_value(const fl_info *f, const tr_input_spec *s, uint64_t e) {
  uint64_t r = draw(e, K_DOMAIN);
  unsigned sel = (unsigned)(r & 15);
  if (sel == 0) {
    const tr_dtype_info *di = &tr_dtypes[f->t];
    double c[8];
    int n = 0;
    if (tr_float_has_nan(f->t)) c[n++] = NAN;
    if (tr_float_has_inf(f->t)) c[n++] = INFINITY;
    if (di->fstyle != TR_FS_FNUZ && !f->unsigned_) c[n++] = -0.0;
    c[n++] = f->max;
    c[n++] = ldexp(1.0, f->emin);                       /* smallest normal */
    if (f->has_sub) c[n++] = ldexp(1.0, f->emin - f->mbits); /* smallest subnormal */
    double v = c[below(draw(e, K_DOMAIN + 1), (uint64_t)n)];
    return with_sign(f, v, draw(e, K_DOMAIN + 2));
  }
  if (sel <= 3) return fl_round(f, normal01(e, K_DOMAIN + 10));
  const tr_domain_range *g = &s->domain[below(draw(e, K_DOMAIN + 3), (uint64_t)s->ndomain)];
  double u = unit(draw(e, K_DOMAIN + 4)), v;
  if (g->lo > 0 && g->hi > 16 * g->lo) {
    /* by binade: a uniform exponent, then a uniform significand */
    int elo = ilogb(g->lo), ehi = ilogb(g->hi);
    int ex = elo + (int)below(draw(e, K_DOMAIN + 5), (uint64_t)(ehi - elo + 1));
    v = ldexp(1 + u, ex);
    if (v < g->lo) v = g->lo;
    if (v > g->hi) v = g->hi;
  } else {
    v = g->lo + (g->hi - g->lo) * u;
  }
  if (g->half) v = floor(v) + 0.5;
  if (g->sym) v = with_sign(f, v, draw(e, K_DOMAIN + 6));
  return fl_round(f, v);
}

/* Index values (index dists on a float leaf): see the int versions. */
static bool index_value(const tr_input_spec *s, int64_t bound, int64_t lo,
                        uint64_t hi, uint64_t e, int64_t *out);

/* One float value of dtype f->t from draws starting at k0 of element e. */
static double fl_value(const fl_info *f, const tr_input_spec *s, uint64_t e,
                       uint64_t k0, int64_t bound) {
  /* Sub-draws: a second element key keeps the imaginary part's draws
   * apart from the real part's without renumbering every distribution. */
  if (k0) e = mix(e ^ k0);
  switch (s->dist) {
  case TR_DIST_NORMAL: return fl_round(f, normal01(e, 0));
  case TR_DIST_UNIFORM: return fl_round(f, 2 * unit(draw(e, 0)) - 1);
  case TR_DIST_POSITIVE: {
    int lo = f->emin > -4 ? f->emin : -4, hi = f->emax < 3 ? f->emax : 3;
    return fabs(binade(f, e, lo, hi));
  }
  case TR_DIST_LARGE: return binade(f, e, (f->emax + 1) / 2, f->emax);
  case TR_DIST_DENORMAL: /* a type without subnormals gets tiny normals */
    if (f->has_sub) {
      uint64_t m = 1 + below(draw(e, 0), ((uint64_t)1 << f->mbits) - 1);
      return with_sign(f, ldexp((double)m, f->emin - f->mbits), draw(e, 2));
    }
    /* fall through */
  case TR_DIST_TINY: {
    int hi = f->emin + 7 < f->emax ? f->emin + 7 : f->emax;
    return binade(f, e, f->emin, hi);
  }
  case TR_DIST_INTEGER: {
    int64_t lim = 8;
    if (draw(e, 1) & 1) {
      int b = f->mbits + 1 < 24 ? f->mbits + 1 : 24;
      lim = (int64_t)1 << b;
      if ((double)lim > f->max) lim = (int64_t)f->max;
    }
    return fl_round(f, (double)range_i(draw(e, 0), -lim, lim));
  }
  case TR_DIST_FULL: {
    int bits = tr_dtypes[f->t].bits;
    uint64_t mask = bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1;
    for (int i = 0; i < 64; i++) {
      double v = tr_float_to_double(f->t, draw(e, (uint64_t)i) & mask);
      if (isfinite(v)) return v;
    }
    return 0;
  }
  case TR_DIST_BOUNDARY: {
    double c[16];
    int n = fl_boundary(f, c);
    return with_sign(f, c[below(draw(e, 0), (uint64_t)n)], draw(e, 2));
  }
  default: {
    int64_t v = 0;
    int64_t lim = f->max < 0x1p62 ? (int64_t)f->max : INT64_MAX / 2;
    index_value(s, bound, -lim, (uint64_t)lim, e, &v);
    return fl_round(f, (double)v);
  }
  }
}

/* ---- integers ----
 * Values travel as int64 ("mathematical" values) where they are small or
 * signed; an unsigned 64-bit value above INT64_MAX travels as its bits,
 * which tr_tensor_set_u stores unchanged. */

static bool in_range(int64_t v, int64_t lo, uint64_t hi) {
  if (v < lo) return false;
  return v < 0 || (uint64_t)v <= hi;
}

/* Index values for bound B >= 0 in a type of range [lo, hi]. Returns
 * false when the distribution has no value that fits (index-oob on an
 * unsigned type whose whole range is in bounds); *out is then B. */
static bool index_value(const tr_input_spec *s, int64_t bound, int64_t lo,
                        uint64_t hi, uint64_t e, int64_t *out) {
  int64_t b = bound < 0 ? 0 : bound;
  int64_t bh = (uint64_t)b > hi ? (int64_t)hi : b; /* in bounds and in type */
  uint64_t r = draw(e, 0), r2 = draw(e, 1);
  int64_t cand[8];
  int n = 0;
  switch (s->dist) {
  case TR_DIST_INDEX_EDGE: {
    int64_t c[6] = {0, 1, b - 1, b, -1, b < INT64_MAX ? b + 1 : b};
    for (int i = 0; i < 6; i++)
      if (in_range(c[i], lo, hi) && (i >= 4 || (c[i] >= 0 && c[i] <= b)))
        cand[n++] = c[i];
    break;
  }
  case TR_DIST_INDEX_OOB: {
    /* Fixed order; the random ones reach the far ends, where index
     * arithmetic in a compiler overflows. */
    int64_t c[8] = {-1, b < INT64_MAX ? b + 1 : -1, -b - 1,
                    b < INT64_MAX / 2 ? 2 * b + 2 : -1, lo,
                    hi > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)hi, 0, 0};
    c[6] = lo < 0 ? range_i(r2, lo, -1) : -1;
    int64_t top = hi > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)hi;
    c[7] = b < top ? range_i(r2, b + 1, top) : -1;
    for (int i = 0; i < 8; i++)
      if (in_range(c[i], lo, hi) && (c[i] < 0 || c[i] > b)) cand[n++] = c[i];
    break;
  }
  case TR_DIST_INDEX_DUP: {
    int64_t c[3] = {0, bh, bh / 2};
    n = bh >= 2 ? 3 : (int)bh + 1;
    memcpy(cand, c, sizeof(int64_t) * (size_t)n);
    break;
  }
  default: /* TR_DIST_INDEX */
    *out = range_i(r, 0, bh);
    return true;
  }
  if (n == 0) {
    *out = bh;
    return false;
  }
  *out = cand[below(r, (uint64_t)n)];
  return true;
}

/* Boundary integers: min, max, 0, ±1 half the time, else also ±2^k and
 * ±2^k±1 of every k the type holds. */
static uint64_t int_boundary(tr_dtype t, uint64_t e) {
  bool sgn = tr_dtypes[t].kind == TR_DK_SINT;
  int bits = tr_dtypes[t].bits;
  int64_t lo = tr_int_min(t);
  uint64_t hi = tr_int_max(t);
  uint64_t c[8 + 6 * 64];
  int n = 0;
  c[n++] = (uint64_t)lo;
  c[n++] = hi;
  c[n++] = 0;
  c[n++] = 1;
  if (sgn) c[n++] = (uint64_t)-1;
  int core = n;
  if (sgn) {
    c[n++] = (uint64_t)lo + 1;
    c[n++] = hi - 1;
  }
  for (int k = 1; k < bits && k < 63; k++) {
    int64_t p = (int64_t)1 << k;
    int64_t v[6] = {p - 1, p, p + 1, -p + 1, -p, -p - 1};
    for (int i = 0; i < 6; i++)
      if (in_range(v[i], lo, hi) && v[i] != lo && (uint64_t)v[i] != hi &&
          v[i] != 0 && v[i] != 1 && v[i] != -1)
        c[n++] = (uint64_t)v[i];
  }
  if (!sgn && bits == 64) { /* 2^63 and its neighbours */
    c[n++] = (uint64_t)1 << 63;
    c[n++] = ((uint64_t)1 << 63) - 1;
    c[n++] = ((uint64_t)1 << 63) + 1;
  }
  if (draw(e, 1) & 1) return c[below(draw(e, 0), (uint64_t)core)];
  return c[below(draw(e, 0), (uint64_t)n)];
}

/* One integer element (as bits for tr_tensor_set_u). */
static uint64_t int_value(tr_dtype t, const tr_input_spec *s, uint64_t e,
                          int64_t bound) {
  bool sgn = tr_dtypes[t].kind == TR_DK_SINT;
  int64_t lo = tr_int_min(t);
  uint64_t hi = tr_int_max(t);
  int64_t hi_s = hi > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)hi;
  uint64_t r = draw(e, 0);
  switch (s->dist) {
  case TR_DIST_NORMAL: {
    double v = floor(16 * normal01(e, 0) + 0.5);
    if (!sgn) v = fabs(v);
    if (v < (double)lo) v = (double)lo;
    if (v > (double)hi_s) v = (double)hi_s;
    return (uint64_t)(int64_t)v;
  }
  case TR_DIST_UNIFORM: case TR_DIST_INTEGER:
    return sgn ? (uint64_t)range_i(r, lo > -128 ? lo : -128, hi_s < 127 ? hi_s : 127)
               : (uint64_t)range_i(r, 0, hi_s < 255 ? hi_s : 255);
  case TR_DIST_POSITIVE:
    return (uint64_t)range_i(r, 1, hi_s < 127 ? hi_s : 127);
  case TR_DIST_LARGE:
    if (!sgn) return hi / 2 + 1 + below(r, hi - hi / 2);
    if (draw(e, 1) & 1) return (uint64_t)range_i(r, lo, lo / 2);
    return (uint64_t)range_i(r, hi_s / 2 + 1, hi_s);
  case TR_DIST_TINY: case TR_DIST_DENORMAL:
    return (uint64_t)range_i(r, sgn ? -2 : 0, 2);
  case TR_DIST_FULL: return r; /* the low bits: every value equally likely */
  case TR_DIST_BOUNDARY: return int_boundary(t, e);
  default: {
    int64_t v;
    index_value(s, bound, lo, hi, e, &v);
    return (uint64_t)v;
  }
  }
}

/* ---- filling ---- */

tr_status tr_input_fill(tr_tensor *t, const tr_input_spec *spec,
                        uint64_t seed, uint64_t stream, tr_diag *d) {
  if ((unsigned)spec->dist >= TR_DIST_COUNT || spec->dist == TR_DIST_DEFAULT) {
    tr_diag_errorf(d, "inputs: no distribution given");
    return TR_ERR_USAGE;
  }
  if (!(spec->special_rate >= 0 && spec->special_rate <= 1)) {
    tr_diag_errorf(d, "inputs: special-value rate %g is outside [0, 1]",
                   spec->special_rate);
    return TR_ERR_USAGE;
  }
  int ax = spec->bound_axis;
  if (ax >= 0 && (ax >= t->rank || spec->nbounds != t->dims[ax] ||
                  spec->nbounds > TR_TENSOR_MAX_RANK)) {
    tr_diag_errorf(d, "inputs: %d bounds along axis %d do not match the "
                   "tensor's dims", spec->nbounds, ax);
    return TR_ERR_USAGE;
  }
  size_t stride = 1;
  if (ax >= 0)
    for (int i = ax + 1; i < t->rank; i++) stride *= (size_t)t->dims[i];
  tr_dtype dt = t->dtype;
  tr_dkind kind = tr_dtypes[dt].kind;
  fl_info f;
  if (kind == TR_DK_FLOAT) fl_info_init(&f, dt);
  if (kind == TR_DK_COMPLEX) fl_info_init(&f, dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64);
  uint64_t key = leaf_key(seed, stream);
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    uint64_t e = mix(key ^ (uint64_t)i);
    int64_t bound = ax >= 0 ? spec->bounds[(i / stride) % (size_t)spec->nbounds]
                            : spec->bound;
    switch (kind) {
    case TR_DK_PRED: tr_tensor_set_u(t, i, draw(e, 0) >> 63); break;
    case TR_DK_SINT: case TR_DK_UINT:
      tr_tensor_set_u(t, i, int_value(dt, spec, e, bound));
      break;
    case TR_DK_FLOAT: case TR_DK_COMPLEX: {
      double re = spec->ndomain > 0 && kind == TR_DK_FLOAT ? domain_value(&f, spec, e)
                                                          : fl_value(&f, spec, e, 0, bound), sv;
      if (spec->special_rate > 0 &&
          unit(draw(e, K_SPECIAL)) < spec->special_rate &&
          fl_special(&f, draw(e, K_SPECIAL_WHICH), &sv))
        re = sv;
      if (kind == TR_DK_FLOAT)
        tr_tensor_set_f(t, i, re);
      else
        tr_tensor_set_c(t, i, re, fl_value(&f, spec, e, K_IMAG, bound));
      break;
    }
    default:
      tr_diag_errorf(d, "inputs: cannot draw %s values", tr_dtype_name(dt));
      return TR_ERR_UNSUPPORTED;
    }
  }
  return TR_OK;
}

/* ---- the policy ---- */

void tr_input_config_init(tr_input_config *c) {
  memset(c, 0, sizeof *c);
  c->data = TR_DIST_DEFAULT;
  c->index = TR_DIST_DEFAULT;
}

/* What the index uses of one leaf allow, merged over every use. */
typedef struct {
  bool found;      /* some use takes the leaf as indices */
  int64_t scalar;  /* the smallest bound of every use */
  int axis;        /* >= 0: bounds vary along this axis of the leaf */
  int nb;          /* entries of b */
  int64_t b[TR_TENSOR_MAX_RANK]; /* bound per position on axis */
} idx_use;

/* Records a use: bounds b[0..nb) along axis (or one bound when axis < 0).
 * lost: the value was reshaped or broadcast on its way, so positions no
 * longer line up with the leaf's and only the smallest bound is kept. */
static void note_use(idx_use *u, bool lost, int axis, int nb, const int64_t *b) {
  int64_t m = INT64_MAX;
  for (int i = 0; i < nb; i++) m = b[i] < m ? b[i] : m;
  if (m < 0) m = 0;
  bool vec = !lost && axis >= 0 && nb > 1 && nb <= TR_TENSOR_MAX_RANK;
  if (!u->found) {
    u->found = true;
    u->scalar = m;
    u->axis = vec ? axis : -1;
    u->nb = vec ? nb : 0;
    if (vec)
      for (int i = 0; i < nb; i++) u->b[i] = b[i] < 0 ? 0 : b[i];
    return;
  }
  if (m < u->scalar) u->scalar = m;
  if (u->axis >= 0 && vec && axis == u->axis && nb == u->nb) {
    for (int i = 0; i < nb; i++)
      if (b[i] < u->b[i]) u->b[i] = b[i] < 0 ? 0 : b[i];
  } else {
    u->axis = -1;
  }
}

/* Bound of a start index into dim d: operand dim - window size. */
static int64_t start_bound(const tr_shape *op, int64_t d, int64_t size) {
  if (!tr_shape_is_array(op) || d < 0 || d >= op->rank || op->dims[d] < 0)
    return -1;
  return op->dims[d] - size;
}

/* A use of value v as operand j of dynamic-slice/-update-slice. */
static void use_dynamic(idx_use *u, const tr_instr *w, int j, bool lost) {
  bool dus = w->op == TR_OP_DYNAMIC_UPDATE_SLICE;
  int first = dus ? 2 : 1; /* operand of the first start index */
  const tr_shape *op = w->operands[0]->shape;
  if (!tr_shape_is_array(op) || j < first) return;
  int64_t b[TR_TENSOR_MAX_RANK];
  int nsz = 0;
  const int64_t *sizes = dus ? NULL : tr_attr_ints(w, TR_ATTR_DYNAMIC_SLICE_SIZES, &nsz);
  const tr_shape *upd = dus ? w->operands[1]->shape : NULL;
  int r = op->rank < TR_TENSOR_MAX_RANK ? op->rank : TR_TENSOR_MAX_RANK;
  for (int d = 0; d < r; d++) {
    int64_t size = dus ? (tr_shape_is_array(upd) && d < upd->rank ? upd->dims[d] : 0)
                       : (d < nsz ? sizes[d] : 0);
    b[d] = start_bound(op, d, size);
  }
  /* The old form takes one rank-1 tensor of starts. */
  const tr_shape *vs = w->operands[j]->shape;
  if (w->noperands == first + 1 && tr_shape_is_array(vs) && vs->rank == 1) {
    for (int d = 0; d < r; d++)
      if (b[d] < 0) return;
    note_use(u, lost, 0, r, b);
    return;
  }
  int d = j - first;
  if (d < r && b[d] >= 0) note_use(u, lost, -1, 1, &b[d]);
}

/* Indices of gather (j == 1) or scatter (j == the indices operand). */
static void use_gather(idx_use *u, const tr_instr *w, const tr_shape *ix, bool lost) {
  bool sc = w->op == TR_OP_SCATTER;
  int nmap;
  const int64_t *map = tr_attr_ints(w, sc ? TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS
                                       : TR_ATTR_START_INDEX_MAP, &nmap);
  const tr_shape *op = w->operands[0]->shape;
  if (!map || !tr_shape_is_array(op) || !tr_shape_is_array(ix) ||
      nmap > TR_TENSOR_MAX_RANK || op->rank > TR_TENSOR_MAX_RANK)
    return;
  int64_t size[TR_TENSOR_MAX_RANK]; /* window size per operand dim */
  if (!sc) {
    int nss;
    const int64_t *ss = tr_attr_ints(w, TR_ATTR_SLICE_SIZES, &nss);
    for (int d = 0; d < op->rank; d++) size[d] = ss && d < nss ? ss[d] : 1;
  } else {
    int nuw, nins, nbat;
    const int64_t *uw = tr_attr_ints(w, TR_ATTR_UPDATE_WINDOW_DIMS, &nuw);
    const int64_t *ins = tr_attr_ints(w, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
    const int64_t *bat = tr_attr_ints(w, TR_ATTR_INPUT_BATCHING_DIMS, &nbat);
    const tr_shape *upd = w->operands[(w->noperands - 1) / 2 + 1]->shape;
    int k = 0;
    for (int d = 0; d < op->rank; d++) {
      size[d] = 1;
      if (tr_ints_has(ins, nins, d) || tr_ints_has(bat, nbat, d)) continue;
      if (k < nuw && tr_shape_is_array(upd) && uw[k] >= 0 && uw[k] < upd->rank)
        size[d] = upd->dims[uw[k]];
      k++;
    }
  }
  int64_t b[TR_TENSOR_MAX_RANK];
  for (int k = 0; k < nmap; k++) {
    b[k] = map[k] >= 0 && map[k] < op->rank ? start_bound(op, map[k], size[map[k]]) : -1;
    if (b[k] < 0) return;
  }
  int64_t ivd = tr_attr_int(w, TR_ATTR_INDEX_VECTOR_DIM, ix->rank);
  if (nmap == 0) return;
  if (ivd >= ix->rank) /* implicit trailing index vector of one element */
    note_use(u, lost, -1, 1, b);
  else if (ix->dims[ivd] == nmap)
    note_use(u, lost, (int)ivd, nmap, b);
}

/* ---- the walk from a leaf to its uses ----
 * A state is where the leaf's values are now: an instruction v, the tuple
 * path that still leads from v's value to them (a leaf inside a tuple
 * parameter starts with its path; a tuple built from the value puts the
 * element number in front; get-tuple-element takes it off), whether
 * positions were lost on the way, and the call frame: the call, fusion or
 * conditional whose body v is in, so that the body's root continues at
 * that instruction in the caller (jax's jit(_where) returns the wrapped
 * index from a nested call). Paths and frames are interned as linked
 * nodes, so a state is four small numbers; every state is visited once (a
 * hash set), so shared values and diamonds cost one visit each, not one
 * per path through them. */
typedef struct {
  int64_t a;  /* frame: the site's instruction id; path: the element index */
  int parent; /* frame: the frame the site is in; path: the rest; -1 none */
} walk_node;

typedef struct {
  const tr_instr *v;
  int path;  /* path node, -1 for the value itself */
  bool lost;
  int frame; /* frame node, -1 for the entry computation */
} walk_state;

/* Hash set entry; val is the node number for nodes. */
typedef struct {
  uint64_t a, b;
  int val;
  int used;
} walk_slot;

typedef struct {
  idx_use *u;
  walk_node *nodes; /* frames and path nodes, numbered together */
  const tr_instr **sites; /* per node: the frame's site (NULL for paths) */
  int nnodes, capnodes;
  walk_slot *tab;   /* open addressing, power-of-two size */
  size_t ntab, captab;
  walk_state *todo; /* states seen but not yet followed */
  int ntodo, captodo;
  long nstates;     /* states seen: bounded by WALK_MAX_STATES */
} walker;

/* A walk that reaches this many states stops (what it found still
 * counts): a safety net far above any real module's need. */
enum { WALK_MAX_STATES = 1 << 20 };

static uint64_t key_hash(uint64_t a, uint64_t b) { return mix(mix(a) ^ b); }

/* Finds (a, b) in the table; inserts it with val when absent. Returns the
 * slot and sets *fresh when it was inserted now. */
static walk_slot *walk_lookup(walker *w, uint64_t a, uint64_t b, int val, bool *fresh) {
  if (2 * (w->ntab + 1) > w->captab) { /* grow: load stays under 1/2 */
    size_t ncap = w->captab ? 2 * w->captab : 256;
    walk_slot *nt = tr_xcalloc(ncap, sizeof *nt);
    for (size_t i = 0; i < w->captab; i++) {
      if (!w->tab[i].used) continue;
      size_t h = (size_t)key_hash(w->tab[i].a, w->tab[i].b) & (ncap - 1);
      while (nt[h].used) h = (h + 1) & (ncap - 1);
      nt[h] = w->tab[i];
    }
    tr_free(w->tab);
    w->tab = nt;
    w->captab = ncap;
  }
  size_t h = (size_t)key_hash(a, b) & (w->captab - 1);
  while (w->tab[h].used) {
    if (w->tab[h].a == a && w->tab[h].b == b) {
      *fresh = false;
      return &w->tab[h];
    }
    h = (h + 1) & (w->captab - 1);
  }
  w->tab[h] = (walk_slot){a, b, val, 1};
  w->ntab++;
  *fresh = true;
  return &w->tab[h];
}

/* Key tags: states, frame nodes and path nodes share the table. */
#define WALK_STATE ((uint64_t)1 << 62)
#define WALK_FRAME ((uint64_t)2 << 62)
#define WALK_PATH ((uint64_t)3 << 62)

/* The node (a, parent) of kind tag, made on first use. */
static int walk_node_of(walker *w, uint64_t tag, int64_t a, int parent,
                        const tr_instr *site) {
  bool fresh;
  walk_slot *s = walk_lookup(w, tag ^ (uint64_t)a, (uint64_t)(uint32_t)parent,
                             w->nnodes, &fresh);
  if (fresh) {
    if (w->nnodes == w->capnodes) {
      w->capnodes = w->capnodes ? 2 * w->capnodes : 16;
      w->nodes = tr_xrealloc(w->nodes, (size_t)w->capnodes * sizeof *w->nodes);
      w->sites = tr_xrealloc(w->sites, (size_t)w->capnodes * sizeof *w->sites);
    }
    w->nodes[w->nnodes] = (walk_node){a, parent};
    w->sites[w->nnodes++] = site;
  }
  return s->val;
}

/* Queues state (v, path, lost, frame) unless it was seen before. */
static void walk_push(walker *w, const tr_instr *v, int path, bool lost, int frame) {
  if (w->nstates >= WALK_MAX_STATES) return;
  bool fresh;
  uint64_t a = WALK_STATE | (uint64_t)(uint32_t)v->id << 1 | (lost ? 1u : 0u);
  uint64_t b = (uint64_t)(uint32_t)path << 32 | (uint32_t)frame;
  walk_lookup(w, a, b, 0, &fresh);
  if (!fresh) return;
  w->nstates++;
  if (w->ntodo == w->captodo) {
    w->captodo = w->captodo ? 2 * w->captodo : 64;
    w->todo = tr_xrealloc(w->todo, (size_t)w->captodo * sizeof *w->todo);
  }
  w->todo[w->ntodo++] = (walk_state){v, path, lost, frame};
}

/* The body of site that receives its operand j, and the parameter there:
 * fusion and call pass operand j to parameter j, a conditional passes
 * operand j >= 1 to parameter 0 of branch j-1. NULL for anything else
 * (while loops, reductions and the other to_apply users are not followed). */
static const tr_instr *callee_param(const tr_instr *site, int j) {
  tr_comp *c = NULL;
  int pj = j;
  if (site->op == TR_OP_FUSION) {
    c = tr_instr_fused(site);
  } else if (site->op == TR_OP_CALL) {
    tr_comp *cs[1];
    if (tr_instr_called(site, cs, 1) >= 1) c = cs[0];
  } else if (site->op == TR_OP_CONDITIONAL && j >= 1) {
    const tr_attr *bc = tr_instr_attr(site, TR_ATTR_BRANCH_COMPUTATIONS);
    const tr_attr *t = tr_instr_attr(site, TR_ATTR_TRUE_COMPUTATION);
    const tr_attr *f = tr_instr_attr(site, TR_ATTR_FALSE_COMPUTATION);
    if (bc && bc->kind == TR_AK_COMPS && j - 1 < bc->n)
      c = bc->u.comps[j - 1];
    else if (!bc && t && f && t->kind == TR_AK_COMP && f->kind == TR_AK_COMP && j <= 2)
      c = j == 1 ? t->u.comp : f->u.comp;
    pj = 0;
  }
  return c && pj < c->nparams ? c->params[pj] : NULL;
}

/* One state: every use of v, then (v the root of a body) the instruction
 * that called the body. */
static void walk_step(walker *w, const walk_state *s) {
  const tr_instr *v = s->v;
  idx_use *u = w->u;
  bool lost = s->lost;
  for (int ui = 0; ui < v->nusers; ui++) {
    const tr_instr *x = v->users[ui];
    for (int j = 0; j < x->noperands; j++) {
      if (x->operands[j] != v) continue;
      if (x->op == TR_OP_TUPLE) {
        walk_push(w, x, walk_node_of(w, WALK_PATH, j, s->path, NULL), lost, s->frame);
        continue;
      }
      if (x->op == TR_OP_FUSION || x->op == TR_OP_CALL ||
          (x->op == TR_OP_CONDITIONAL && j >= 1)) {
        const tr_instr *p = callee_param(x, j);
        if (p)
          walk_push(w, p, s->path, lost, walk_node_of(w, WALK_FRAME, x->id, s->frame, x));
        continue;
      }
      if (s->path >= 0) {
        const walk_node *pn = &w->nodes[s->path];
        if (x->op == TR_OP_GET_TUPLE_ELEMENT && tr_attr_int(x, TR_ATTR_INDEX, -1) == pn->a)
          walk_push(w, x, pn->parent, lost, s->frame);
        continue;
      }
      bool int_result = tr_shape_is_array(x->shape) && tr_dtype_is_int(x->shape->dtype);
      switch (x->op) {
      case TR_OP_DYNAMIC_SLICE: case TR_OP_DYNAMIC_UPDATE_SLICE:
        use_dynamic(u, x, j, lost);
        break;
      case TR_OP_GATHER:
        if (j == 1) use_gather(u, x, v->shape, lost);
        break;
      case TR_OP_SCATTER:
        if (j == (x->noperands - 1) / 2) use_gather(u, x, v->shape, lost);
        break;
      case TR_OP_CONDITIONAL: /* j == 0: the branch index */
        if (tr_dtype_is_int(v->shape->dtype)) {
          const tr_attr *a = tr_instr_attr(x, TR_ATTR_BRANCH_COMPUTATIONS);
          int64_t b = a && a->n > 0 ? a->n - 1 : 0;
          note_use(u, lost, -1, 1, &b);
        }
        break;
      /* Index arithmetic keeps positions: jax wraps negative indices with
       * select(i < 0, i + n, i) and clamps. */
      case TR_OP_CONVERT: case TR_OP_COPY: case TR_OP_ADD: case TR_OP_SUBTRACT:
      case TR_OP_MAXIMUM: case TR_OP_MINIMUM: case TR_OP_SELECT: case TR_OP_CLAMP:
        if (int_result) walk_push(w, x, -1, lost, s->frame);
        break;
      case TR_OP_RESHAPE: case TR_OP_BITCAST: case TR_OP_BROADCAST:
      case TR_OP_TRANSPOSE: case TR_OP_SLICE: case TR_OP_CONCATENATE:
      case TR_OP_REVERSE: case TR_OP_PAD:
        if (int_result) walk_push(w, x, -1, true, s->frame);
        break;
      default: break;
      }
    }
  }
  /* The body's result is the call's (fusion's, conditional's) result. */
  if (v->parent && v->parent->root == v && s->frame >= 0)
    walk_push(w, w->sites[s->frame], s->path, lost, w->nodes[s->frame].parent);
}

/* Follows the leaf at path[0..npath) of entry parameter p to every use of
 * it as indices and records their bounds in u. */
static void walk_leaf(idx_use *u, const tr_instr *p, const int64_t *path, int npath) {
  walker w;
  memset(&w, 0, sizeof w);
  w.u = u;
  int pn = -1;
  for (int i = npath - 1; i >= 0; i--) pn = walk_node_of(&w, WALK_PATH, path[i], pn, NULL);
  walk_push(&w, p, pn, false, -1);
  while (w.ntodo > 0) {
    walk_state s = w.todo[--w.ntodo];
    walk_step(&w, &s);
  }
  tr_free(w.nodes);
  tr_free(w.sites);
  tr_free(w.tab);
  tr_free(w.todo);
}

typedef struct {
  tr_input_leaf *v;
  int n, cap;
} leaf_list;

static tr_status add_leaves(leaf_list *l, const tr_instr *p, const tr_shape *s,
                            int64_t *path, int npath, const tr_input_config *cfg,
                            tr_diag *d) {
  if (s->dtype == TR_DT_TUPLE) {
    if (npath >= 64) {
      tr_diag_errorf(d, "inputs: parameter %%%s nests tuples too deep", p->name);
      return TR_ERR_UNSUPPORTED;
    }
    for (int i = 0; i < s->nelems; i++) {
      path[npath] = i;
      tr_status st = add_leaves(l, p, s->elems[i], path, npath + 1, cfg, d);
      if (st != TR_OK) return st;
    }
    return TR_OK;
  }
  if (s->dtype == TR_DT_TOKEN) return TR_OK;
  if (!tr_dtype_is_array(s->dtype)) {
    tr_diag_errorf(d, "inputs: parameter %%%s has %s elements, which cannot be "
                   "drawn", p->name, tr_dtype_name(s->dtype));
    return TR_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) {
      tr_diag_errorf(d, "inputs: parameter %%%s has an unbounded dynamic "
                     "dimension", p->name);
      return TR_ERR_UNSUPPORTED;
    }
  if (l->n == l->cap) {
    l->cap = l->cap ? 2 * l->cap : 8;
    l->v = tr_xrealloc(l->v, (size_t)l->cap * sizeof *l->v);
  }
  tr_input_leaf *leaf = &l->v[l->n++];
  memset(leaf, 0, sizeof *leaf);
  leaf->shape = s;
  leaf->param = p;
  idx_use u;
  memset(&u, 0, sizeof u);
  u.axis = -1;
  if (tr_dtype_is_int(s->dtype)) walk_leaf(&u, p, path, npath);
  if (u.found) {
    leaf->is_index = true;
    tr_input_spec_init(&leaf->spec, cfg->index != TR_DIST_DEFAULT ? cfg->index
                                                                  : TR_DIST_INDEX);
    leaf->spec.bound = u.scalar;
    if (u.axis >= 0 && u.axis < s->rank && s->dims[u.axis] == u.nb) {
      leaf->spec.bound_axis = u.axis;
      leaf->spec.nbounds = u.nb;
      memcpy(leaf->spec.bounds, u.b, sizeof(int64_t) * (size_t)u.nb);
    }
  } else if (s->dtype == TR_DT_PRED) {
    tr_input_spec_init(&leaf->spec, TR_DIST_UNIFORM); /* a fair coin */
  } else {
    tr_input_spec_init(&leaf->spec, cfg->data != TR_DIST_DEFAULT ? cfg->data
                                                                 : TR_DIST_NORMAL);
    tr_dkind k = tr_dtypes[s->dtype].kind;
    if (k == TR_DK_FLOAT || k == TR_DK_COMPLEX)
      leaf->spec.special_rate = cfg->special_rate;
  }
  return TR_OK;
}

tr_status tr_inputs_plan(const tr_module *m, const tr_input_config *cfg,
                         tr_input_leaf **leaves, int *nleaves, tr_diag *d) {
  *leaves = NULL;
  *nleaves = 0;
  if (!m->entry) {
    tr_diag_errorf(d, "inputs: the module has no entry computation");
    return TR_ERR_INVALID;
  }
  leaf_list l = {0};
  int64_t path[64];
  const tr_comp *c = m->entry;
  for (int i = 0; i < c->nparams; i++) {
    const tr_instr *p = c->params[i];
    if (!p) {
      tr_diag_errorf(d, "inputs: entry parameter %d is missing", i);
      tr_free(l.v);
      return TR_ERR_INVALID;
    }
    tr_status st = add_leaves(&l, p, p->shape, path, 0, cfg, d);
    if (st != TR_OK) {
      tr_free(l.v);
      return st;
    }
  }
  /* Every third seed of the default plan draws float data leaves from
   * the domains of the module's ops (docs/INPUTS.md). */
  if (cfg->data == TR_DIST_DEFAULT && cfg->index == TR_DIST_DEFAULT && !cfg->no_domain &&
      cfg->seed % 3 == 2)
    for (int j = 0; j < l.n; j++) {
      tr_input_leaf *lf = &l.v[j];
      if (lf->is_index || tr_dtypes[lf->shape->dtype].kind != TR_DK_FLOAT) continue;
      lf->spec.ndomain = tr_inputs_domain(m, lf->shape->dtype, lf->spec.domain, TR_DOMAIN_MAX);
    }
  *leaves = l.v;
  *nleaves = l.n;
  return TR_OK;
}

tr_status tr_inputs_make(const tr_module *m, const tr_input_config *cfg,
                         tr_tensor ***outs, int *nouts, tr_diag *d) {
  *outs = NULL;
  *nouts = 0;
  tr_input_leaf *lv;
  int n;
  tr_status st = tr_inputs_plan(m, cfg, &lv, &n, d);
  if (st != TR_OK) return st;
  tr_tensor **ts = tr_xcalloc(n ? (size_t)n : 1, sizeof *ts);
  for (int j = 0; j < n && st == TR_OK; j++) {
    const tr_shape *s = lv[j].shape;
    ts[j] = tr_tensor_new(s->dtype, s->rank, s->dims, d);
    st = ts[j] ? tr_input_fill(ts[j], &lv[j].spec, cfg->seed, (uint64_t)j, d)
               : TR_ERR_UNSUPPORTED;
  }
  tr_free(lv);
  if (st != TR_OK) {
    tr_inputs_free(ts, n);
    return st;
  }
  *outs = ts;
  *nouts = n;
  return TR_OK;
}

void tr_inputs_free(tr_tensor **ts, int n) {
  if (!ts) return;
  for (int i = 0; i < n; i++) tr_tensor_free(ts[i]);
  tr_free(ts);
}
