/* dtype.c - the dtype table and exact narrow-float conversions. */
#include "dtype.h"

#include <math.h>
#include <string.h>

const tr_dtype_info tr_dtypes[TR_DT_COUNT] = {
#define X(E, name, bits, kind, eb, mb, bias, fs, core) \
  {name, bits, kind, eb, mb, bias, fs, core},
#include "dtypes.def"
#undef X
};

bool tr_dtype_lookup(const char *s, size_t n, tr_dtype *dt) {
  for (int i = 0; i < TR_DT_COUNT; i++) {
    /* "tuple" is an enum value, not a shape keyword (XLA's lexer agrees). */
    if (i == TR_DT_TUPLE) continue;
    if (strlen(tr_dtypes[i].name) == n && memcmp(tr_dtypes[i].name, s, n) == 0) {
      *dt = (tr_dtype)i;
      return true;
    }
  }
  return false;
}

int tr_dtype_size(tr_dtype t) {
  int b = tr_dtypes[t].bits;
  return b <= 8 ? (b ? 1 : 0) : b / 8;
}

bool tr_float_has_inf(tr_dtype t) { return tr_dtypes[t].fstyle == TR_FS_IEEE; }

bool tr_float_has_nan(tr_dtype t) {
  tr_fstyle s = tr_dtypes[t].fstyle;
  return s == TR_FS_IEEE || s == TR_FS_FN || s == TR_FS_FNUZ || s == TR_FS_E8M0;
}

bool tr_float_has_payload(tr_dtype t) {
  return tr_dtypes[t].fstyle == TR_FS_IEEE && tr_dtypes[t].mbits >= 2;
}

/* Largest finite bit pattern (without sign) of a float format. */
static uint64_t max_pattern(const tr_dtype_info *f) {
  uint64_t mmask = ((uint64_t)1 << f->mbits) - 1;
  uint64_t emax = ((uint64_t)1 << f->ebits) - 1;
  switch (f->fstyle) {
  case TR_FS_IEEE: return ((emax - 1) << f->mbits) | mmask;
  case TR_FS_FN: return (emax << f->mbits) | (mmask - 1);
  case TR_FS_E8M0: return emax - 1;
  default: return (emax << f->mbits) | mmask; /* FNUZ, FINITE */
  }
}

static uint64_t nan_pattern(const tr_dtype_info *f, bool neg) {
  uint64_t sign = (uint64_t)1 << (f->bits - 1);
  uint64_t emax = ((uint64_t)1 << f->ebits) - 1;
  switch (f->fstyle) {
  case TR_FS_IEEE:
    return (neg ? sign : 0) | (emax << f->mbits) | ((uint64_t)1 << (f->mbits - 1));
  case TR_FS_FN: return (neg ? sign : 0) | (emax << f->mbits) | (((uint64_t)1 << f->mbits) - 1);
  case TR_FS_FNUZ: return sign;
  case TR_FS_E8M0: return 0xff;
  default: return sign; /* FINITE: no NaN; XLA produces the -0 pattern */
  }
}

uint64_t tr_float_from_double(tr_dtype t, double v) {
  if (t == TR_DT_F64) {
    uint64_t b;
    memcpy(&b, &v, 8);
    return b;
  }
  if (t == TR_DT_F32) {
    float f = (float)v;
    uint32_t b;
    memcpy(&b, &f, 4);
    return b;
  }
  const tr_dtype_info *f = &tr_dtypes[t];
  TR_ASSERT(f->kind == TR_DK_FLOAT);
  bool neg = signbit(v) != 0;
  uint64_t sign = neg ? (uint64_t)1 << (f->bits - 1) : 0;
  double a = fabs(v);
  if (f->fstyle == TR_FS_E8M0) {
    /* As ml_dtypes: zero (either sign), negatives, NaN and inf have no
     * encoding and give NaN; a tie between two powers rounds up (3 -> 4,
     * 0.75 -> 1); below 2^-127 rounds to 2^-127. */
    if (isnan(v) || neg || isinf(v) || a == 0) return 0xff;
    int e;
    double m = frexp(a, &e); /* a = m * 2^e, m in [0.5,1) */
    e -= 1;                  /* a = 2m * 2^e */
    if (2 * m >= 1.5) e++;
    int be = e + f->bias;
    if (be < 0) return 0;
    if (be > 254) return 0xff;
    return (uint64_t)be;
  }
  if (isnan(v)) return nan_pattern(f, neg);
  if (isinf(v)) {
    if (f->fstyle == TR_FS_IEEE) return sign | ((((uint64_t)1 << f->ebits) - 1) << f->mbits);
    if (f->fstyle == TR_FS_FINITE) return sign | max_pattern(f);
    return nan_pattern(f, neg);
  }
  if (a == 0) return f->fstyle == TR_FS_FNUZ ? 0 : sign;
  int e;
  frexp(a, &e);
  e -= 1; /* a in [2^e, 2^(e+1)) */
  int emin = 1 - f->bias;
  int qexp = (e > emin ? e : emin) - f->mbits;
  double r = rint(ldexp(a, -qexp)); /* round to nearest even */
  uint64_t mant = (uint64_t)r;
  uint64_t one = (uint64_t)1 << f->mbits;
  uint64_t pat;
  if (mant == 0) {
    pat = 0;
  } else if (mant < one) {
    pat = mant; /* subnormal */
  } else {
    if (mant == 2 * one) { /* rounding carried into the next binade */
      mant = one;
      qexp++;
    }
    int64_t be = (int64_t)qexp + f->mbits + f->bias;
    pat = ((uint64_t)be << f->mbits) | (mant - one);
  }
  if (pat > max_pattern(f)) {
    if (f->fstyle == TR_FS_IEEE) return sign | ((((uint64_t)1 << f->ebits) - 1) << f->mbits);
    if (f->fstyle == TR_FS_FINITE) return sign | max_pattern(f);
    return nan_pattern(f, neg);
  }
  if (pat == 0 && f->fstyle == TR_FS_FNUZ) return 0;
  return sign | pat;
}

double tr_float_to_double(tr_dtype t, uint64_t bits) {
  if (t == TR_DT_F64) {
    double d;
    memcpy(&d, &bits, 8);
    return d;
  }
  if (t == TR_DT_F32) {
    uint32_t b = (uint32_t)bits;
    float f;
    memcpy(&f, &b, 4);
    return f;
  }
  const tr_dtype_info *f = &tr_dtypes[t];
  TR_ASSERT(f->kind == TR_DK_FLOAT);
  bits &= f->bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << f->bits) - 1);
  if (f->fstyle == TR_FS_E8M0) {
    if (bits == 0xff) return NAN;
    return ldexp(1.0, (int)bits - f->bias);
  }
  uint64_t sign = (uint64_t)1 << (f->bits - 1);
  bool neg = (bits & sign) != 0;
  uint64_t mag = bits & ~sign;
  uint64_t mmask = ((uint64_t)1 << f->mbits) - 1;
  uint64_t emax = ((uint64_t)1 << f->ebits) - 1;
  uint64_t be = mag >> f->mbits, m = mag & mmask;
  if (f->fstyle == TR_FS_FNUZ && bits == sign) return NAN;
  if (f->fstyle == TR_FS_IEEE && be == emax) {
    if (m) return neg ? -NAN : NAN;
    return neg ? -INFINITY : INFINITY;
  }
  if (f->fstyle == TR_FS_FN && be == emax && m == mmask) return neg ? -NAN : NAN;
  double r;
  if (be == 0)
    r = ldexp((double)m, 1 - f->bias - f->mbits);
  else
    r = ldexp((double)(m | (mmask + 1)), (int)be - f->bias - f->mbits);
  return neg ? -r : r;
}

double tr_float_max(tr_dtype t) {
  const tr_dtype_info *f = &tr_dtypes[t];
  if (t == TR_DT_F64) return 1.7976931348623157e308;
  if (t == TR_DT_F32) return 3.4028234663852886e38;
  return tr_float_to_double(t, max_pattern(f));
}

int64_t tr_int_min(tr_dtype t) {
  const tr_dtype_info *f = &tr_dtypes[t];
  if (f->kind != TR_DK_SINT) return 0;
  if (f->bits == 64) return INT64_MIN;
  return -((int64_t)1 << (f->bits - 1));
}

uint64_t tr_int_max(tr_dtype t) {
  const tr_dtype_info *f = &tr_dtypes[t];
  if (f->kind == TR_DK_PRED) return 1;
  if (f->kind == TR_DK_SINT) return ((uint64_t)1 << (f->bits - 1)) - 1;
  if (f->bits == 64) return UINT64_MAX;
  return ((uint64_t)1 << f->bits) - 1;
}
