/* eval_elem.c - elementwise ops of the exact interpreter: canonical loads
 * and stores, unary and binary arithmetic, compare, select, clamp,
 * convert, iota and bitcast. Each kernel switches on the op once and loops
 * inside. Integers are computed in uint64 (wrapping) and truncated by the
 * store; floats in double and rounded once to the op's type by the store,
 * which is exact for + - * / sqrt of f32 and narrower (53 >= 2p+2).
 * Transcendentals are computed in long double (64-bit significand on x86)
 * and rounded to double, so they are correctly rounded but for rare
 * double-rounding cases even for f64 (glibc's double cbrt(27) is not 3).
 * Edge cases follow docs/SEMANTICS.md. */
#include "evalint.h"
#include "par.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- canonical loads and stores ---- */

static uint64_t slot_get(const unsigned char *p, int es, size_t i) {
  switch (es) {
  case 1: return p[i];
  case 2: { uint16_t v; memcpy(&v, p + 2 * i, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p + 4 * i, 4); return v; }
  default: { uint64_t v; memcpy(&v, p + 8 * i, 8); return v; }
  }
}

static void slot_put(unsigned char *p, int es, size_t i, uint64_t v) {
  switch (es) {
  case 1: p[i] = (unsigned char)v; break;
  case 2: { uint16_t x = (uint16_t)v; memcpy(p + 2 * i, &x, 2); break; }
  case 4: { uint32_t x = (uint32_t)v; memcpy(p + 4 * i, &x, 4); break; }
  default: memcpy(p + 8 * i, &v, 8); break;
  }
}

static uint64_t mask_of(int bits) { return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1; }

int64_t ev_sext(tr_dtype dt, uint64_t v) {
  int bits = tr_dtypes[dt].bits;
  if (bits >= 64) return (int64_t)v;
  v &= mask_of(bits);
  if ((v >> (bits - 1)) & 1) v |= ~mask_of(bits);
  return (int64_t)v;
}

void ev_load_ints(const tr_tensor *t, uint64_t *v) {
  size_t n = tr_tensor_count(t);
  const unsigned char *p = t->data;
  int es = tr_dtype_size(t->dtype), bits = tr_dtypes[t->dtype].bits;
  uint64_t m = mask_of(bits);
  switch (tr_dtypes[t->dtype].kind) {
  case TR_DK_PRED:
    for (size_t i = 0; i < n; i++) v[i] = p[i] != 0;
    break;
  case TR_DK_SINT:
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)ev_sext(t->dtype, slot_get(p, es, i));
    break;
  default:
    for (size_t i = 0; i < n; i++) v[i] = slot_get(p, es, i) & m;
    break;
  }
}

void ev_store_ints(tr_tensor *t, const uint64_t *v) {
  size_t n = tr_tensor_count(t);
  unsigned char *p = t->data;
  int es = tr_dtype_size(t->dtype);
  switch (tr_dtypes[t->dtype].kind) {
  case TR_DK_PRED:
    for (size_t i = 0; i < n; i++) p[i] = v[i] != 0;
    break;
  case TR_DK_SINT:
    /* Sub-byte slots hold the value sign-extended (tensor.h). */
    for (size_t i = 0; i < n; i++) slot_put(p, es, i, (uint64_t)ev_sext(t->dtype, v[i]));
    break;
  default: {
    uint64_t m = mask_of(tr_dtypes[t->dtype].bits);
    for (size_t i = 0; i < n; i++) slot_put(p, es, i, v[i] & m);
    break;
  }
  }
}

void ev_canon_ints(tr_dtype dt, uint64_t *v, size_t n) {
  switch (tr_dtypes[dt].kind) {
  case TR_DK_PRED:
    for (size_t i = 0; i < n; i++) v[i] = v[i] != 0;
    break;
  case TR_DK_SINT:
    for (size_t i = 0; i < n; i++) v[i] = (uint64_t)ev_sext(dt, v[i]);
    break;
  default: {
    uint64_t m = mask_of(tr_dtypes[dt].bits);
    for (size_t i = 0; i < n; i++) v[i] &= m;
    break;
  }
  }
}

/* bf16 <-> double without the generic per-format code (most of the time
 * of bf16 models went there); both give exactly tr_float_to_double's and
 * tr_float_from_double's bits (NaNs canonical with their sign). */
static double bf16_to_double(uint16_t b) {
  if ((b & 0x7f80) == 0x7f80 && (b & 0x7f)) return (b & 0x8000) ? -NAN : NAN;
  uint32_t w = (uint32_t)b << 16;
  float f;
  memcpy(&f, &w, 4);
  return f;
}

/* Round to nearest even in one step, by way of float: first v rounded to
 * float *to odd* (truncate, then set the last bit when inexact), which
 * keeps the information a second rounding needs because float has 16 more
 * significand bits than bf16 at every exponent (same exponent range); then
 * float -> bf16 to nearest even on the bits. */
static uint16_t bf16_from_double(double v) {
  if (v != v) return signbit(v) ? 0xffc0 : 0x7fc0;
  if (isinf(v)) return v < 0 ? 0xff80 : 0x7f80;
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  if ((double)f != v) {
    if (fabs((double)f) > fabs(v)) b -= 1; /* rounded away from zero: step back */
    b |= 1;
  }
  return (uint16_t)((b + 0x7fffu + ((b >> 16) & 1u)) >> 16);
}

/* The same for f16 (IEEE, 5 exponent bits): exact widening; narrowing
 * again by way of float rounded to odd, which has 13 or more spare bits
 * over f16 everywhere in f16's range, then to nearest even on the bits. */
static double f16_to_double(uint16_t h) {
  bool neg = h >> 15;
  unsigned e = (h >> 10) & 0x1f, m = h & 0x3ff;
  double r;
  if (e == 31) return m ? (neg ? -NAN : NAN) : (neg ? -INFINITY : INFINITY);
  if (e == 0) {
    r = (double)m * 0x1p-24;
  } else {
    uint64_t b = ((uint64_t)(e - 15 + 1023) << 52) | ((uint64_t)m << 42);
    memcpy(&r, &b, 8);
  }
  return neg ? -r : r;
}

static uint16_t f16_from_double(double v) {
  if (v != v) return signbit(v) ? 0xfe00 : 0x7e00;
  uint16_t sign = signbit(v) ? 0x8000 : 0;
  if (isinf(v)) return sign | 0x7c00;
  float f = (float)v;
  uint32_t b;
  memcpy(&b, &f, 4);
  if ((double)f != v) {
    if (fabs((double)f) > fabs(v)) b -= 1;
    b |= 1;
  }
  uint32_t a = b & 0x7fffffffu;
  if (a >= 0x477ff000u) return sign | 0x7c00; /* >= 65520: past the largest, to inf */
  if (a <= 0x33000000u) return sign;          /* <= 2^-25: to zero (2^-25 ties to even) */
  int e = (int)(a >> 23) - 127;
  uint32_t mant = (a & 0x7fffffu) | 0x800000u;
  if (e < -14) { /* subnormal: round mant * 2^(e+1) to an integer */
    int sh = -(e + 1);
    uint32_t q = mant >> sh, rem = mant & ((1u << sh) - 1), half = 1u << (sh - 1);
    if (rem > half || (rem == half && (q & 1))) q++;
    return (uint16_t)(sign | q);
  }
  uint32_t h = ((uint32_t)(e + 15) << 10) | ((mant & 0x7fffffu) >> 13), rem = mant & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (h & 1))) h++;
  return (uint16_t)(sign | h);
}

void ev_load_flts(const tr_tensor *t, double *v) {
  size_t n = tr_tensor_count(t);
  const unsigned char *p = t->data;
  tr_dtype dt = t->dtype;
  if (dt == TR_DT_F64) {
    memcpy(v, p, n * 8);
  } else if (dt == TR_DT_F32) {
    for (size_t i = 0; i < n; i++) {
      float f;
      memcpy(&f, p + 4 * i, 4);
      v[i] = f;
    }
  } else if (dt == TR_DT_BF16) {
    for (size_t i = 0; i < n; i++) {
      uint16_t b;
      memcpy(&b, p + 2 * i, 2);
      v[i] = bf16_to_double(b);
    }
  } else if (dt == TR_DT_F16) {
    for (size_t i = 0; i < n; i++) {
      uint16_t b;
      memcpy(&b, p + 2 * i, 2);
      v[i] = f16_to_double(b);
    }
  } else if (tr_dtypes[dt].bits <= 8) {
    double lut[256];
    for (int b = 0; b < 256; b++) lut[b] = tr_float_to_double(dt, (uint64_t)b);
    for (size_t i = 0; i < n; i++) v[i] = lut[p[i]];
  } else {
    int es = tr_dtype_size(dt);
    for (size_t i = 0; i < n; i++) v[i] = tr_float_to_double(dt, slot_get(p, es, i));
  }
}

void ev_store_flts(tr_tensor *t, const double *v) {
  size_t n = tr_tensor_count(t);
  unsigned char *p = t->data;
  tr_dtype dt = t->dtype;
  if (dt == TR_DT_F64) {
    memcpy(p, v, n * 8);
  } else if (dt == TR_DT_F32) {
    for (size_t i = 0; i < n; i++) {
      float f = (float)v[i];
      memcpy(p + 4 * i, &f, 4);
    }
  } else if (dt == TR_DT_BF16) {
    for (size_t i = 0; i < n; i++) {
      uint16_t b = bf16_from_double(v[i]);
      memcpy(p + 2 * i, &b, 2);
    }
  } else if (dt == TR_DT_F16) {
    for (size_t i = 0; i < n; i++) {
      uint16_t b = f16_from_double(v[i]);
      memcpy(p + 2 * i, &b, 2);
    }
  } else {
    int es = tr_dtype_size(dt);
    for (size_t i = 0; i < n; i++) slot_put(p, es, i, tr_float_from_double(dt, v[i]));
  }
}

void ev_round_flts(tr_dtype dt, double *v, size_t n) {
  if (dt == TR_DT_F64) return;
  if (dt == TR_DT_F32) {
    for (size_t i = 0; i < n; i++) v[i] = (float)v[i];
    return;
  }
  if (dt == TR_DT_BF16) {
    for (size_t i = 0; i < n; i++) v[i] = bf16_to_double(bf16_from_double(v[i]));
    return;
  }
  if (dt == TR_DT_F16) {
    for (size_t i = 0; i < n; i++) v[i] = f16_to_double(f16_from_double(v[i]));
    return;
  }
  for (size_t i = 0; i < n; i++) v[i] = tr_float_to_double(dt, tr_float_from_double(dt, v[i]));
}

static bool is_flt(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_FLOAT; }
static bool is_signed(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_SINT; }

/* k scratch arrays of n 8-byte elements (double or uint64_t) into s[].
 * Running out of memory is an error at in, never an abort: what was
 * allocated and the result r are freed, and false returned. */
static bool scratch(ev_ctx *c, const tr_instr *in, tr_tensor *r, size_t n, int k, void **s) {
  size_t ns[3] = {n, n, n}, es[3] = {8, 8, 8};
  if (ev_scratch(c, in, k, ns, es, s)) return true;
  tr_tensor_free(r);
  return false;
}

/* ---- scalar helpers ---- */

/* Ties to even, independent of the FPU rounding mode. */
static double round_even(double x) {
  if (!isfinite(x) || fabs(x) >= 4503599627370496.0) return x; /* 2^52: integral */
  double r = floor(x), diff = x - r;
  if (diff > 0.5 || (diff == 0.5 && fmod(r, 2.0) != 0)) r += 1;
  return r == 0 ? copysign(0.0, x) : r;
}

/* IPow (xla/util.h): square-and-multiply over all exponent bits, mod 2^64. */
static uint64_t ipow(uint64_t base, uint64_t e) {
  uint64_t r = 1;
  while (e) {
    if (e & 1) r *= base;
    base *= base;
    e >>= 1;
  }
  return r;
}

/* ---- scalar kernels (kernels.def) ----
 * One array loop per elementwise op and type family: fk_* on doubles
 * (unrounded results; the store rounds), ik_* on canonical integers of
 * type dt (results truncated by the store). r may alias the operands:
 * each element reads its operands first. */

#define FK1(name, EXPR)                                          \
  static void name(const double *a, double *r, size_t n) {       \
    for (size_t i = 0; i < n; i++) {                             \
      double x = a[i];                                           \
      r[i] = EXPR;                                               \
    }                                                            \
  }
#define FK2(name, EXPR)                                                      \
  static void name(const double *a, const double *b, double *r, size_t n) {  \
    for (size_t i = 0; i < n; i++) {                                         \
      double x = a[i], y = b[i];                                             \
      r[i] = EXPR;                                                           \
    }                                                                        \
  }
/* NaN bits of + - * /: the first operand's NaN, else the second's
 * (quieted), as the compiled loops happened to give on x86; explicit so
 * no compiler's operand order changes them. */
#define NAN_FIRST(v) ((v) == (v) ? (v) : x != x ? ev_quiet_f64(x) : y != y ? ev_quiet_f64(y) : (v))

/* NaN stays NaN, +-0 stays +-0 (E typed_visitor.h Sign). */
FK1(fk_sign, (isnan(x) || x == 0) ? x : copysign(1.0, x))
FK1(fk_abs, fabs(x))
FK1(fk_negate, -x)
FK1(fk_floor, floor(x))
FK1(fk_ceil, ceil(x))
FK1(fk_round_afz, round(x))
FK1(fk_round_even, round_even(x))
FK1(fk_exp, (double)expl(x))
FK1(fk_expm1, (double)expm1l(x))
FK1(fk_log, (double)logl(x))
FK1(fk_log1p, (double)log1pl(x))
FK1(fk_sqrt, sqrt(x))
FK1(fk_rsqrt, (double)(1.0L / sqrtl(x)))
FK1(fk_cbrt, (double)cbrtl(x))
FK1(fk_tanh, (double)tanhl(x))
/* XLA's LogisticExpander and E: 1 / (1 + exp(-x)). */
FK1(fk_logistic, (double)(1.0L / (1.0L + expl(-(long double)x))))
FK1(fk_sine, (double)sinl(x))
FK1(fk_cosine, (double)cosl(x))
FK1(fk_tan, (double)tanl(x))
FK1(fk_erf, (double)erfl(x))
FK1(fk_is_finite, isfinite(x) ? 1.0 : 0.0)
FK2(fk_add, NAN_FIRST(x + y))
FK2(fk_subtract, NAN_FIRST(x - y))
FK2(fk_multiply, NAN_FIRST(x * y))
FK2(fk_divide, NAN_FIRST(x / y))
FK2(fk_remainder, fmod(x, y))
FK2(fk_atan2, (double)atan2l(x, y))
/* E checks lhs == 1 or rhs == 0 first: pow(NaN, 0) = pow(1, NaN) = 1. */
FK2(fk_power, (x == 1 || y == 0) ? 1.0 : (double)powl(x, y))
/* E: a NaN lhs, else a NaN rhs, else std::max (lhs on ties, so
 * max(-0, +0) = -0). */
FK2(fk_maximum, isnan(x) ? x : isnan(y) ? y : (x < y ? y : x))
FK2(fk_minimum, isnan(x) ? x : isnan(y) ? y : (y < x ? y : x))
#undef FK1
#undef FK2
#undef NAN_FIRST

/* abs(INT_MIN) wraps to INT_MIN (E negates as unsigned). */
static void ik_abs(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = (int64_t)a[i] < 0 ? 0 - a[i] : a[i];
}

static void ik_negate(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = 0 - a[i];
}

static void ik_sign(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) {
    if (!is_signed(dt)) r[i] = a[i] != 0;
    else r[i] = (uint64_t)(int64_t)(((int64_t)a[i] > 0) - ((int64_t)a[i] < 0));
  }
}

static void ik_not(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  bool pred = dt == TR_DT_PRED;
  for (size_t i = 0; i < n; i++) r[i] = pred ? !a[i] : ~a[i];
}

static void ik_popcnt(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  uint64_t m = mask_of(tr_dtypes[dt].bits);
  for (size_t i = 0; i < n; i++) r[i] = (uint64_t)__builtin_popcountll(a[i] & m);
}

static void ik_clz(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n) {
  int bits = tr_dtypes[dt].bits;
  uint64_t m = mask_of(bits);
  for (size_t i = 0; i < n; i++) {
    uint64_t x = a[i] & m;
    r[i] = x ? (uint64_t)(__builtin_clzll(x) - (64 - bits)) : (uint64_t)bits;
  }
}

/* pred add is OR, pred multiply AND (the store keeps x != 0). */
static void ik_add(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool pred = dt == TR_DT_PRED;
  for (size_t i = 0; i < n; i++) r[i] = pred ? (a[i] | b[i]) : a[i] + b[i];
}

static void ik_subtract(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = a[i] - b[i];
}

static void ik_multiply(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = a[i] * b[i];
}

/* x / 0 = -1 (all ones), INT_MIN / -1 = INT_MIN. */
static void ik_divide(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool sg = is_signed(dt);
  int64_t imin = tr_int_min(dt);
  for (size_t i = 0; i < n; i++) {
    if (b[i] == 0) r[i] = ~(uint64_t)0;
    else if (!sg) r[i] = a[i] / b[i];
    else if ((int64_t)a[i] == imin && (int64_t)b[i] == -1) r[i] = a[i];
    else r[i] = (uint64_t)((int64_t)a[i] / (int64_t)b[i]);
  }
}

/* x % 0 = x, INT_MIN % -1 = 0, sign of the dividend. */
static void ik_remainder(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool sg = is_signed(dt);
  int64_t imin = tr_int_min(dt);
  for (size_t i = 0; i < n; i++) {
    if (b[i] == 0) r[i] = a[i];
    else if (!sg) r[i] = a[i] % b[i];
    else if ((int64_t)a[i] == imin && (int64_t)b[i] == -1) r[i] = 0;
    else r[i] = (uint64_t)((int64_t)a[i] % (int64_t)b[i]);
  }
}

/* E: 1 when lhs == 1 or rhs == 0; a negative signed exponent gives 0 (so
 * (-1)^-1 = 0); otherwise exact powering mod 2^64. */
static void ik_power(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool sg = is_signed(dt);
  for (size_t i = 0; i < n; i++) {
    if (a[i] == 1 || b[i] == 0) r[i] = 1;
    else if (sg && (int64_t)b[i] < 0) r[i] = 0;
    else r[i] = ipow(a[i], b[i]);
  }
}

static void ik_maximum(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool sg = is_signed(dt);
  for (size_t i = 0; i < n; i++) {
    bool lt = sg ? (int64_t)a[i] < (int64_t)b[i] : a[i] < b[i];
    r[i] = lt ? b[i] : a[i];
  }
}

static void ik_minimum(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  bool sg = is_signed(dt);
  for (size_t i = 0; i < n; i++) {
    bool lt = sg ? (int64_t)b[i] < (int64_t)a[i] : b[i] < a[i];
    r[i] = lt ? b[i] : a[i];
  }
}

static void ik_and(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = a[i] & b[i];
}

static void ik_or(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = a[i] | b[i];
}

static void ik_xor(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  for (size_t i = 0; i < n; i++) r[i] = a[i] ^ b[i];
}

/* The amount is read as unsigned of the operand width: >= width (a
 * negative amount included) gives 0. */
static void ik_shift_left(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n) {
  int bits = tr_dtypes[dt].bits;
  uint64_t m = mask_of(bits);
  for (size_t i = 0; i < n; i++) {
    uint64_t s = b[i] & m;
    r[i] = s >= (uint64_t)bits ? 0 : a[i] << s;
  }
}

static void ik_shift_right_logical(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r,
                                   size_t n) {
  int bits = tr_dtypes[dt].bits;
  uint64_t m = mask_of(bits);
  for (size_t i = 0; i < n; i++) {
    uint64_t s = b[i] & m;
    r[i] = s >= (uint64_t)bits ? 0 : (a[i] & m) >> s;
  }
}

/* Too far: all sign bits (the top bit, also for unsigned types). */
static void ik_shift_right_arithmetic(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r,
                                      size_t n) {
  int bits = tr_dtypes[dt].bits;
  uint64_t m = mask_of(bits);
  for (size_t i = 0; i < n; i++) {
    uint64_t s = b[i] & m;
    int64_t x = ev_sext(dt, a[i]);
    if (s >= (uint64_t)bits) s = (uint64_t)bits - 1;
    r[i] = x < 0 ? ~(~(uint64_t)x >> s) : (uint64_t)x >> s;
  }
}

const ev_kernel ev_kernels[TR_OP_COUNT] = {
#define K1(E, fk, ik, sl, sd, rule, c, ci, cp, cost, u64, u32, un) \
  [TR_OP_##E] = {true, 1, fk, ik, 0, 0, #sl, #rule, c, ci, cp, cost, {u64, u32, un}},
#define K2(E, fk, ik, c, ci, cp, cost, u64, u32, un) \
  [TR_OP_##E] = {true, 2, 0, 0, fk, ik, NULL, NULL, c, ci, cp, cost, {u64, u32, un}},
#include "../ir/kernels.def"
#undef K1
#undef K2
};

/* ---- unary ---- */

typedef struct {
  ev_flt1 *f;
  double *a; /* operand and result, in place */
} flt_unary_job;

static void flt_unary_chunk(void *ctx, size_t lo, size_t hi) {
  flt_unary_job *j = ctx;
  j->f(j->a + lo, j->a + lo, hi - lo);
}

tr_status ev_unary(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out) {
  tr_op op = in->op;
  tr_dtype dt = x->dtype;
  tr_dtype rt = op == TR_OP_IS_FINITE ? TR_DT_PRED : dt;
  const ev_kernel *k = &ev_kernels[op];
  if (is_flt(dt) ? !k->flt1 : !k->int1)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s of %s", tr_ops[op].name, tr_dtype_name(dt));
  tr_tensor *r = ev_new(c, in, rt, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x);
  tr_fstyle fs = tr_dtypes[dt].fstyle;
  if (is_flt(dt) && (op == TR_OP_ABS || op == TR_OP_NEGATE) && fs != TR_FS_FNUZ &&
      fs != TR_FS_E8M0) {
    /* Sign-bit operations, exact on every value including NaN payloads.
     * Not for fnuz (the sign bit alone is NaN; -0 is +0, -NaN is NaN, as
     * ml_dtypes' operator-) or e8m0 (no sign bit; -x is NaN): those go by
     * value below. */
    int es = tr_dtype_size(dt);
    uint64_t sign = (uint64_t)1 << (tr_dtypes[dt].bits - 1);
    for (size_t i = 0; i < n; i++) {
      uint64_t b = slot_get(x->data, es, i);
      slot_put(r->data, es, i, op == TR_OP_ABS ? b & ~sign : b ^ sign);
    }
  } else if (is_flt(dt)) {
    void *s1;
    if (!scratch(c, in, r, n, 1, &s1)) return TR_ERR_UNSUPPORTED;
    double *a = s1;
    ev_load_flts(x, a);
    /* Long-double transcendentals cost ~50 ns an element: worth a
     * second core on big arrays (each element is independent). */
    flt_unary_job j = {k->flt1, a};
    if (op == TR_OP_IS_FINITE) {
      k->flt1(a, a, n);
      unsigned char *p = r->data;
      for (size_t i = 0; i < n; i++) p[i] = a[i] != 0;
    } else {
      ev_par_for(ev_par_threads(50.0 * (double)n), n, flt_unary_chunk, &j);
      ev_store_flts(r, a);
    }
    tr_free(a);
  } else {
    void *s1;
    if (!scratch(c, in, r, n, 1, &s1)) return TR_ERR_UNSUPPORTED;
    uint64_t *a = s1;
    ev_load_ints(x, a);
    k->int1(dt, a, a, n);
    ev_store_ints(r, a);
    tr_free(a);
  }
  *out = r;
  return TR_OK;
}

/* ---- binary ---- */

void ev_flt_binary(tr_op op, tr_dtype dt, const double *a, const double *b, double *r,
                   size_t n) {
  (void)dt;
  TR_ASSERT(ev_kernels[op].flt2 && "not a float binary op");
  ev_kernels[op].flt2(a, b, r, n);
}

void ev_int_binary(tr_op op, tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r,
                   size_t n) {
  TR_ASSERT(ev_kernels[op].int2 && "not an integer binary op");
  ev_kernels[op].int2(dt, a, b, r, n);
}

/* f32 + - * / max min straight on the stored floats: for these ops the
 * double result rounded to f32 equals the f32 operation (53 >= 2*24+2),
 * so only the NaNs need care. The double loop kept its first operand's
 * NaN, then the second's (quieted; x86 order as compiled); the fix-up pass
 * applies that rule, whatever order the vector code used. false: another
 * op, use the double loop. */
static bool f32_binary(tr_op op, const float *a, const float *b, float *r, size_t n) {
  switch (op) {
  case TR_OP_ADD: for (size_t i = 0; i < n; i++) r[i] = a[i] + b[i]; break;
  case TR_OP_SUBTRACT: for (size_t i = 0; i < n; i++) r[i] = a[i] - b[i]; break;
  case TR_OP_MULTIPLY: for (size_t i = 0; i < n; i++) r[i] = a[i] * b[i]; break;
  case TR_OP_DIVIDE: for (size_t i = 0; i < n; i++) r[i] = a[i] / b[i]; break;
  case TR_OP_MAXIMUM:
    /* As ev_flt_binary: a NaN lhs, else a NaN rhs, else lhs on ties. */
    for (size_t i = 0; i < n; i++) r[i] = a[i] < b[i] ? b[i] : a[i];
    break;
  case TR_OP_MINIMUM: for (size_t i = 0; i < n; i++) r[i] = b[i] < a[i] ? b[i] : a[i]; break;
  default: return false;
  }
  for (size_t i = 0; i < n; i++)
    if (r[i] != r[i] || a[i] != a[i] || b[i] != b[i])
      r[i] = a[i] != a[i] ? ev_quiet_f32(a[i]) : b[i] != b[i] ? ev_quiet_f32(b[i]) : r[i];
  return true;
}

tr_status ev_binary(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                    tr_tensor **out) {
  tr_dtype dt = x->dtype;
  tr_tensor *r = ev_new(c, in, dt, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x);
  if (dt == TR_DT_F32 && f32_binary(in->op, x->data, y->data, r->data, n)) {
    /* done */
  } else if (is_flt(dt)) {
    void *s[2];
    if (!scratch(c, in, r, n, 2, s)) return TR_ERR_UNSUPPORTED;
    double *a = s[0], *b = s[1];
    ev_load_flts(x, a);
    ev_load_flts(y, b);
    ev_flt_binary(in->op, dt, a, b, a, n);
    ev_store_flts(r, a);
    tr_free(a);
    tr_free(b);
  } else {
    void *s[2];
    if (!scratch(c, in, r, n, 2, s)) return TR_ERR_UNSUPPORTED;
    uint64_t *a = s[0], *b = s[1];
    ev_load_ints(x, a);
    ev_load_ints(y, b);
    ev_int_binary(in->op, dt, a, b, a, n);
    ev_store_ints(r, a);
    tr_free(a);
    tr_free(b);
  }
  *out = r;
  return TR_OK;
}

/* ---- compare ---- */

/* TOTALORDER key (XLA's ToSignMagnitude): -NaN < -inf < ... < -0 < +0 <
 * ... < inf < NaN, NaNs ordered by payload; equal keys mean equal bits.
 * Types without -0 (fnuz) close the gap: -x is -mag, and their one NaN,
 * the sign bit alone, is below everything (ComparisonExpander maps it to
 * INT_MIN; xla/util.h SignAndMagnitude). f8e8m0fnu has no sign bit: its
 * order is its bits (NaN 0xff last). */
static int64_t total_key(tr_dtype dt, uint64_t bits) {
  int w = tr_dtypes[dt].bits;
  if (tr_dtypes[dt].fstyle == TR_FS_E8M0) return (int64_t)bits;
  uint64_t sign = (uint64_t)1 << (w - 1);
  int64_t mag = (int64_t)(bits & (sign - 1));
  if (tr_dtypes[dt].fstyle == TR_FS_FNUZ && (bits & sign)) return mag ? -mag : -(int64_t)sign;
  return (bits & sign) ? -mag - 1 : mag;
}

ev_cmpdir ev_cmp_attrs(const tr_instr *in, bool *total) {
  const tr_attr *da = NULL, *ta = NULL;
  /* one pass over the attributes, and the names by their letters: a
   * comparator runs this once per element pair */
  for (int i = 0; i < in->nattrs; i++) {
    if (in->attrs[i].key == TR_ATTR_DIRECTION && !da) da = &in->attrs[i];
    else if (in->attrs[i].key == TR_ATTR_TYPE && !ta) ta = &in->attrs[i];
  }
  const char *d = da && da->u.s ? da->u.s : "";
  ev_cmpdir dir = EV_CMP_EQ;
  if (d[0] && d[1] && !d[2]) {
    switch (d[0] << 8 | d[1]) {
    case 'N' << 8 | 'E': dir = EV_CMP_NE; break;
    case 'L' << 8 | 'T': dir = EV_CMP_LT; break;
    case 'L' << 8 | 'E': dir = EV_CMP_LE; break;
    case 'G' << 8 | 'T': dir = EV_CMP_GT; break;
    case 'G' << 8 | 'E': dir = EV_CMP_GE; break;
    default: break;
    }
  }
  *total = ta && ta->u.s && strcmp(ta->u.s, "TOTALORDER") == 0;
  return dir;
}

bool ev_compare_slots(const tr_instr *cmp, tr_dtype dt, const void *a, const void *b) {
  bool total;
  ev_cmpdir dir = ev_cmp_attrs(cmp, &total);
  int es = tr_dtype_size(dt);
  uint64_t ba = slot_get(a, es, 0), bb = slot_get(b, es, 0);
  int c3;
  if (is_flt(dt) && total) {
    int64_t ka = total_key(dt, ba & mask_of(tr_dtypes[dt].bits));
    int64_t kb = total_key(dt, bb & mask_of(tr_dtypes[dt].bits));
    c3 = (ka > kb) - (ka < kb);
  } else if (is_flt(dt)) {
    double x = tr_float_to_double(dt, ba), y = tr_float_to_double(dt, bb);
    if (isnan(x) || isnan(y)) return dir == EV_CMP_NE;
    c3 = (x > y) - (x < y);
  } else if (is_signed(dt)) {
    int64_t x = ev_sext(dt, ba), y = ev_sext(dt, bb);
    c3 = (x > y) - (x < y);
  } else {
    uint64_t m = dt == TR_DT_PRED ? 1 : mask_of(tr_dtypes[dt].bits);
    uint64_t x = ba & m, y = bb & m;
    if (dt == TR_DT_PRED) {
      x = ba != 0;
      y = bb != 0;
    }
    c3 = (x > y) - (x < y);
  }
  return ev_cmp_ok(dir, c3);
}

int ev_total_cmp(tr_dtype dt, const void *a, const void *b) {
  int es = tr_dtype_size(dt);
  uint64_t ba = slot_get(a, es, 0), bb = slot_get(b, es, 0);
  if (is_flt(dt)) {
    int64_t ka = total_key(dt, ba & mask_of(tr_dtypes[dt].bits));
    int64_t kb = total_key(dt, bb & mask_of(tr_dtypes[dt].bits));
    return (ka > kb) - (ka < kb);
  }
  if (is_signed(dt)) {
    int64_t x = ev_sext(dt, ba), y = ev_sext(dt, bb);
    return (x > y) - (x < y);
  }
  uint64_t m = mask_of(tr_dtypes[dt].bits), x = ba & m, y = bb & m;
  return (x > y) - (x < y);
}

tr_status ev_compare(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                     tr_tensor **out) {
  bool total;
  ev_cmpdir dir = ev_cmp_attrs(in, &total);
  tr_dtype dt = x->dtype;
  tr_tensor *r = ev_new(c, in, TR_DT_PRED, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x);
  unsigned char *p = r->data;
  if (is_flt(dt) && total) {
    int es = tr_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
      int64_t ka = total_key(dt, slot_get(x->data, es, i) & mask_of(tr_dtypes[dt].bits));
      int64_t kb = total_key(dt, slot_get(y->data, es, i) & mask_of(tr_dtypes[dt].bits));
      p[i] = ev_cmp_ok(dir, (ka > kb) - (ka < kb));
    }
  } else if (is_flt(dt)) {
    /* Partial order: every direction but NE is false with a NaN. */
    void *s[2];
    if (!scratch(c, in, r, n, 2, s)) return TR_ERR_UNSUPPORTED;
    double *a = s[0], *b = s[1];
    ev_load_flts(x, a);
    ev_load_flts(y, b);
    for (size_t i = 0; i < n; i++) {
      bool v;
      switch (dir) {
      case EV_CMP_EQ: v = a[i] == b[i]; break;
      case EV_CMP_NE: v = !(a[i] == b[i]); break;
      case EV_CMP_LT: v = a[i] < b[i]; break;
      case EV_CMP_LE: v = a[i] <= b[i]; break;
      case EV_CMP_GT: v = a[i] > b[i]; break;
      default: v = a[i] >= b[i]; break;
      }
      p[i] = v;
    }
    tr_free(a);
    tr_free(b);
  } else {
    void *s[2];
    if (!scratch(c, in, r, n, 2, s)) return TR_ERR_UNSUPPORTED;
    uint64_t *a = s[0], *b = s[1];
    ev_load_ints(x, a);
    ev_load_ints(y, b);
    bool sg = is_signed(dt);
    for (size_t i = 0; i < n; i++) {
      int c3 = sg ? ((int64_t)a[i] > (int64_t)b[i]) - ((int64_t)a[i] < (int64_t)b[i])
                  : (a[i] > b[i]) - (a[i] < b[i]);
      p[i] = ev_cmp_ok(dir, c3);
    }
    tr_free(a);
    tr_free(b);
  }
  *out = r;
  return TR_OK;
}

/* ---- select, clamp ---- */

tr_status ev_select(ev_ctx *c, const tr_instr *in, const tr_tensor *p, const tr_tensor *x,
                    const tr_tensor *y, tr_tensor **out) {
  tr_tensor *r = ev_new(c, in, x->dtype, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x), es = (size_t)tr_dtype_size(x->dtype);
  const unsigned char *pp = p->data;
  if (p->rank == 0) {
    memcpy(r->data, pp[0] ? x->data : y->data, n * es);
  } else {
    /* One loop per slot size, so the copy is a plain load and store. */
#define SELECT_LOOP(T)                                                                     \
  do {                                                                                     \
    T *rd = r->data;                                                                       \
    const T *xd = x->data, *yd = y->data;                                                  \
    for (size_t i = 0; i < n; i++) rd[i] = pp[i] ? xd[i] : yd[i];                          \
  } while (0)
    switch (es) {
    case 1: SELECT_LOOP(uint8_t); break;
    case 2: SELECT_LOOP(uint16_t); break;
    case 4: SELECT_LOOP(uint32_t); break;
    case 8: SELECT_LOOP(uint64_t); break;
    default:
      for (size_t i = 0; i < n; i++)
        memcpy((char *)r->data + i * es, (const char *)(pp[i] ? x->data : y->data) + i * es, es);
    }
#undef SELECT_LOOP
  }
  *out = r;
  return TR_OK;
}

/* Loads t (a scalar or n elements) as n canonical values. */
static void load_bcast_flts(const tr_tensor *t, double *v, size_t n) {
  if (t->rank == 0 && n != 1) {
    double s;
    ev_load_flts(t, &s);
    for (size_t i = 0; i < n; i++) v[i] = s;
  } else {
    ev_load_flts(t, v);
  }
}

static void load_bcast_ints(const tr_tensor *t, uint64_t *v, size_t n) {
  if (t->rank == 0 && n != 1) {
    uint64_t s;
    ev_load_ints(t, &s);
    for (size_t i = 0; i < n; i++) v[i] = s;
  } else {
    ev_load_ints(t, v);
  }
}

/* E: a NaN lo, x or hi (checked in that order) is the result; otherwise
 * std::min(hi, std::max(x, lo)), so lo > hi gives hi. */
tr_status ev_clamp(ev_ctx *c, const tr_instr *in, const tr_tensor *lo, const tr_tensor *x,
                   const tr_tensor *hi, tr_tensor **out) {
  tr_dtype dt = x->dtype;
  tr_tensor *r = ev_new(c, in, dt, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x);
  if (is_flt(dt)) {
    void *s[3];
    if (!scratch(c, in, r, n, 3, s)) return TR_ERR_UNSUPPORTED;
    double *l = s[0], *v = s[1], *h = s[2];
    load_bcast_flts(lo, l, n);
    ev_load_flts(x, v);
    load_bcast_flts(hi, h, n);
    for (size_t i = 0; i < n; i++) {
      if (isnan(l[i])) v[i] = l[i];
      else if (isnan(v[i])) continue;
      else if (isnan(h[i])) v[i] = h[i];
      else {
        double mx = v[i] < l[i] ? l[i] : v[i];
        v[i] = mx < h[i] ? mx : h[i];
      }
    }
    ev_store_flts(r, v);
    tr_free(l);
    tr_free(v);
    tr_free(h);
  } else {
    void *s[3];
    if (!scratch(c, in, r, n, 3, s)) return TR_ERR_UNSUPPORTED;
    uint64_t *l = s[0], *v = s[1], *h = s[2];
    load_bcast_ints(lo, l, n);
    ev_load_ints(x, v);
    load_bcast_ints(hi, h, n);
    bool sg = is_signed(dt);
    for (size_t i = 0; i < n; i++) {
      bool lt = sg ? (int64_t)v[i] < (int64_t)l[i] : v[i] < l[i];
      uint64_t mx = lt ? l[i] : v[i];
      bool lt2 = sg ? (int64_t)mx < (int64_t)h[i] : mx < h[i];
      v[i] = lt2 ? mx : h[i];
    }
    ev_store_ints(r, v);
    tr_free(l);
    tr_free(v);
    tr_free(h);
  }
  *out = r;
  return TR_OK;
}

/* ---- convert ---- */

/* float -> integer (xla/literal.cc): NaN -> 0, saturating at the type's
 * range (compared in double), otherwise truncation toward zero. */
static uint64_t flt_to_int(tr_dtype dt, double v) {
  if (dt == TR_DT_PRED) return v != 0; /* unordered: NaN is true */
  if (isnan(v)) return 0;
  if (is_signed(dt)) {
    int64_t lo = tr_int_min(dt), hi = (int64_t)tr_int_max(dt);
    if (v >= (double)hi) return (uint64_t)hi;
    if (v <= (double)lo) return (uint64_t)lo;
    return (uint64_t)(int64_t)v;
  }
  uint64_t hi = tr_int_max(dt);
  if (v >= (double)hi) return hi;
  if (v <= 0) return 0;
  return (uint64_t)v;
}

/* A NaN widened from a 16- or 8-bit float keeps its sign and payload,
 * shifted to the top of the wider mantissa, as XLA's bit-level
 * conversions do (bf16 -> f32 is a shift; f8 e4m3fn NaN -> f32 is
 * 0x7ff00000 with the sign). f32 -> f64 already went through the hardware,
 * which does the same and quiets signalling NaNs. */
static void widen_nans(const tr_tensor *x, tr_tensor *r, const double *a) {
  const tr_dtype_info *sf = &tr_dtypes[x->dtype], *df = &tr_dtypes[r->dtype];
  if (sf->bits > 16 || df->mbits <= sf->mbits || df->fstyle != TR_FS_IEEE) return;
  if (sf->fstyle == TR_FS_FNUZ) {
    /* The fnuz NaN (the sign bit alone) widens to the negative quiet NaN
     * (ml_dtypes ConvertImpl keeps the sign bit: 0xffc00000 in f32). */
    size_t n = tr_tensor_count(x);
    int des = tr_dtype_size(r->dtype);
    uint64_t o = ((uint64_t)1 << (df->bits - 1)) | (mask_of(df->ebits) << df->mbits) |
                 ((uint64_t)1 << (df->mbits - 1));
    for (size_t i = 0; i < n; i++)
      if (isnan(a[i])) slot_put(r->data, des, i, o);
    return;
  }
  if (sf->fstyle != TR_FS_IEEE && sf->fstyle != TR_FS_FN) return;
  size_t n = tr_tensor_count(x);
  int ses = tr_dtype_size(x->dtype), des = tr_dtype_size(r->dtype);
  for (size_t i = 0; i < n; i++) {
    if (!isnan(a[i])) continue;
    uint64_t b = slot_get(x->data, ses, i);
    uint64_t sign = (b >> (sf->bits - 1)) & 1, pay = b & mask_of(sf->mbits);
    uint64_t o = (sign << (df->bits - 1)) | (mask_of(df->ebits) << df->mbits) |
                 (pay << (df->mbits - sf->mbits));
    slot_put(r->data, des, i, o);
  }
}

tr_tensor *ev_convert_to(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_dtype dt) {
  tr_tensor *r = ev_new(c, in, dt, x->rank, x->dims);
  if (!r) return NULL;
  tr_dtype st = x->dtype;
  size_t n = tr_tensor_count(x);
  if (st == dt) {
    memcpy(r->data, x->data, x->nbytes);
    return r;
  }
  if (tr_dtypes[st].kind == TR_DK_COMPLEX || tr_dtypes[dt].kind == TR_DK_COMPLEX) {
    tr_tensor_free(r);
    return ev_convert_complex(c, in, x, dt);
  }
  if (is_flt(st)) {
    bool to_int = !is_flt(dt) && dt != TR_DT_PRED;
    void *sc[2];
    if (!scratch(c, in, r, n, to_int ? 2 : 1, sc)) return NULL;
    double *a = sc[0];
    ev_load_flts(x, a);
    if (is_flt(dt)) {
      /* Widening is exact; narrowing rounds once from the exact value. */
      ev_store_flts(r, a);
      widen_nans(x, r, a);
    } else if (dt == TR_DT_PRED) {
      /* x != 0 with an unordered compare: NaN -> true. */
      unsigned char *p = r->data;
      for (size_t i = 0; i < n; i++) p[i] = a[i] != 0;
    } else {
      uint64_t *v = sc[1];
      for (size_t i = 0; i < n; i++) v[i] = flt_to_int(dt, a[i]);
      ev_store_ints(r, v);
      tr_free(v);
    }
    tr_free(a);
    return r;
  }
  void *sc[2];
  if (!scratch(c, in, r, n, is_flt(dt) ? 2 : 1, sc)) return NULL;
  uint64_t *v = sc[0];
  ev_load_ints(x, v);
  if (is_flt(dt)) {
    /* int -> float rounds to nearest even; to a type narrower than f32 it
     * goes through f32 as XLA does (int -> f32 -> f8; Eigen's bf16/half
     * constructors take a float). */
    double *a = sc[1];
    bool sg = is_signed(st);
    for (size_t i = 0; i < n; i++) {
      if (dt == TR_DT_F64) a[i] = sg ? (double)(int64_t)v[i] : (double)v[i];
      else a[i] = sg ? (double)(float)(int64_t)v[i] : (double)(float)v[i];
    }
    ev_store_flts(r, a);
    tr_free(a);
  } else {
    /* int <-> int keeps the low bits of the source value, extended by the
     * source's signedness; to pred it is x != 0. */
    ev_store_ints(r, v);
  }
  tr_free(v);
  return r;
}

/* ---- iota ---- */

tr_status ev_iota(ev_ctx *c, const tr_instr *in, tr_tensor **out) {
  const tr_shape *s = in->shape;
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_IOTA_DIMENSION);
  int dim = at ? (int)at->u.i : 0;
  tr_tensor *r = ev_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(r);
  uint64_t inner = 1;
  for (int i = dim + 1; i < s->rank; i++) inner *= (uint64_t)s->dims[i];
  uint64_t size = (uint64_t)s->dims[dim];
  if (tr_dtypes[s->dtype].kind == TR_DK_COMPLEX) {
    /* E: static_cast<complex<T>>(index), one rounding to the component. */
    for (size_t i = 0; i < n; i++) tr_tensor_set_c(r, i, (double)((i / inner) % size), 0);
  } else if (is_flt(s->dtype)) {
    void *s1;
    if (!scratch(c, in, r, n, 1, &s1)) return TR_ERR_UNSUPPORTED;
    double *a = s1;
    for (size_t i = 0; i < n; i++) a[i] = (double)((i / inner) % size);
    /* One rounding for every float type, fnuz f8 included: the notes
     * (§16) say XLA goes through f16 there, but jaxlib 0.10.2's folder
     * and CPU code both round f8e5m2fnuz iota 2305 to 2560 directly (f16
     * first would give 2048). */
    ev_store_flts(r, a);
    tr_free(a);
  } else {
    /* Integers: the index truncated to the type (it wraps). */
    void *s1;
    if (!scratch(c, in, r, n, 1, &s1)) return TR_ERR_UNSUPPORTED;
    uint64_t *v = s1;
    for (size_t i = 0; i < n; i++) v[i] = (i / inner) % size;
    ev_store_ints(r, v);
    tr_free(v);
  }
  *out = r;
  return TR_OK;
}

/* ---- bitcast and bitcast-convert ---- */

/* Both reinterpret the row-major element bits as one little-endian bit
 * string: element j of w bits holds bits [j*w, (j+1)*w). That is bitcast's
 * meaning for the default layout and bitcast-convert's documented order for
 * a width change. */
tr_status ev_bitcast(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out) {
  const tr_shape *s = in->shape;
  tr_tensor *r = ev_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  int iw = tr_dtypes[x->dtype].bits, ow = tr_dtypes[s->dtype].bits;
  size_t ni = tr_tensor_count(x), no = tr_tensor_count(r);
  if ((uint64_t)ni * (uint64_t)iw != (uint64_t)no * (uint64_t)ow) {
    tr_tensor_free(r);
    return ev_err(c, in, TR_ERR_INVALID, "%s changes the number of bits", in->opname);
  }
  if (tr_dtypes[x->dtype].kind == TR_DK_COMPLEX && tr_dtypes[s->dtype].kind == TR_DK_COMPLEX) {
    /* c64 <-> c64, c128 <-> c64[..., 2] (the verifier allows no complex
     * <-> real): the parts are stored as XLA stores them, (re, im) in
     * memory order, so the bit string is the bytes (E: Literal's
     * BitcastConvert copies the buffer). */
    memcpy(r->data, x->data, x->nbytes);
    *out = r;
    return TR_OK;
  }
  if (iw == ow && iw % 8 == 0 && tr_dtype_size(x->dtype) * 8 == iw &&
      x->dtype != TR_DT_PRED && s->dtype != TR_DT_PRED) {
    memcpy(r->data, x->data, x->nbytes);
    *out = r;
    return TR_OK;
  }
  size_t nbytes = (ni * (size_t)iw + 7) / 8;
  unsigned char *bs = tr_xcalloc(nbytes ? nbytes : 1, 1);
  int ies = tr_dtype_size(x->dtype), oes = tr_dtype_size(s->dtype);
  for (size_t i = 0; i < ni; i++) {
    uint64_t v = slot_get(x->data, ies, i) & mask_of(iw);
    for (int k = 0; k < iw; k++)
      if ((v >> k) & 1) {
        size_t bit = i * (size_t)iw + (size_t)k;
        bs[bit / 8] |= (unsigned char)(1u << (bit % 8));
      }
  }
  bool sg = is_signed(s->dtype);
  for (size_t j = 0; j < no; j++) {
    uint64_t v = 0;
    for (int k = 0; k < ow; k++) {
      size_t bit = j * (size_t)ow + (size_t)k;
      if ((bs[bit / 8] >> (bit % 8)) & 1) v |= (uint64_t)1 << k;
    }
    if (s->dtype == TR_DT_PRED) v = v != 0;
    else if (sg) v = (uint64_t)ev_sext(s->dtype, v);
    slot_put(r->data, oes, j, v);
  }
  tr_free(bs);
  *out = r;
  return TR_OK;
}

/* ---- reduce-precision ---- */

/* E's algorithm (hlo_evaluator_typed_visitor.h:2167-2275) on the bit
 * pattern of a float with sm mantissa and se exponent bits: round the
 * mantissa to m bits (nearest even, by adding a bias and masking), then
 * send exponents above the reduced range to inf and those at or below its
 * minimum to zero (no reduced subnormals). A NaN stays, except that m == 0
 * makes it +inf. */
static uint64_t reduce_prec(uint64_t x, int width, int sm, int se, int64_t m, int64_t e,
                            bool nan) {
  uint64_t orig = x;
  if (m < sm) {
    uint64_t last = (uint64_t)1 << (sm - m);
    uint64_t base = (last >> 1) - 1;
    uint64_t xlast = (x & last) >> (sm - m);
    x = (x + xlast + base) & ~(last - 1);
  }
  if (e < se) {
    uint64_t sign = (uint64_t)1 << (width - 1);
    uint64_t expmask = (((uint64_t)1 << se) - 1) << sm;
    uint64_t bias = ((uint64_t)1 << (se - 1)) - 1;
    uint64_t rbias = ((uint64_t)1 << (e - 1)) - 1;
    uint64_t rmax = bias + rbias, rmin = bias - rbias;
    uint64_t xe = x & expmask;
    bool over = xe > (rmax << sm), under = xe <= (rmin << sm);
    uint64_t zero = x & sign, inf = zero | expmask;
    if (over) x = inf;
    if (under) x = zero;
  }
  if (nan) x = m > 0 ? orig : (((uint64_t)1 << se) - 1) << sm;
  return x;
}

tr_status ev_reduce_precision(ev_ctx *c, const tr_instr *in, const tr_tensor *x,
                              tr_tensor **out) {
  const tr_attr *ea = tr_instr_attr(in, TR_ATTR_EXPONENT_BITS);
  const tr_attr *ma = tr_instr_attr(in, TR_ATTR_MANTISSA_BITS);
  if (!ea || !ma || ea->u.i < 1 || ma->u.i < 0)
    return ev_err(c, in, TR_ERR_INVALID, "reduce-precision needs exponent_bits >= 1 and mantissa_bits >= 0");
  tr_dtype dt = x->dtype;
  tr_tensor *r = ev_new(c, in, dt, x->rank, x->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(x);
  int64_t m = ma->u.i, e = ea->u.i;
  if (dt == TR_DT_F64 || dt == TR_DT_F32) {
    /* On the stored pattern, so NaN payloads (signalling ones too) stay. */
    bool f64 = dt == TR_DT_F64;
    int es = tr_dtype_size(dt);
    for (size_t i = 0; i < n; i++) {
      uint64_t b = slot_get(x->data, es, i);
      uint64_t mag = b & (f64 ? ~((uint64_t)1 << 63) : 0x7fffffffu);
      bool nan = f64 ? mag > 0x7ff0000000000000ull : mag > 0x7f800000u;
      slot_put(r->data, es, i, f64 ? reduce_prec(b, 64, 52, 11, m, e, nan)
                                   : reduce_prec(b, 32, 23, 8, m, e, nan));
    }
    *out = r;
    return TR_OK;
  }
  /* Narrower types are exact in f32, and the reduced value fits back. */
  void *s1;
  if (!scratch(c, in, r, n, 1, &s1)) return TR_ERR_UNSUPPORTED;
  double *a = s1;
  ev_load_flts(x, a);
  for (size_t i = 0; i < n; i++) {
    float f = (float)a[i];
    uint32_t b;
    memcpy(&b, &f, 4);
    b = (uint32_t)reduce_prec(b, 32, 23, 8, m, e, isnan(a[i]));
    memcpy(&f, &b, 4);
    a[i] = f;
  }
  ev_store_flts(r, a);
  tr_free(a);
  *out = r;
  return TR_OK;
}

/* ---- completeness of the kernel table ---- */

bool ev_kernels_complete(const tr_op_info *ops, const ev_kernel *kern, tr_buf *why) {
  for (int op = 0; op < TR_OP_COUNT; op++) {
    const tr_op_info *o = &ops[op];
    const ev_kernel *k = &kern[op];
    tr_opclass c = o->cls;
    bool unary = c == TR_OPC_UFLOAT || c == TR_OPC_UNUM || c == TR_OPC_UINT;
    bool binary = c == TR_OPC_BARITH || c == TR_OPC_BBIT;
    if (!unary && !binary) {
      if (k->row) {
        tr_buf_printf(why, "%s has a kernels.def row but is not of a kernel class", o->name);
        return false;
      }
      continue;
    }
    if (!k->row) {
      tr_buf_printf(why, "%s is elementwise (class %d) but has no kernels.def row", o->name, (int)c);
      return false;
    }
    if (k->arity != (unary ? 1 : 2)) {
      tr_buf_printf(why, "%s: a K%d row for a %s op", o->name, k->arity, unary ? "unary" : "binary");
      return false;
    }
    /* Type families from the types column: "f" floats, "i"/"ip" integers
     * (and pred), "n"/"a" both. */
    bool flts = strchr("fna", o->types[0]) != NULL;
    bool ints = strchr("ina", o->types[0]) != NULL;
    bool hasf = unary ? k->flt1 != NULL : k->flt2 != NULL;
    bool hasi = unary ? k->int1 != NULL : k->int2 != NULL;
    if (flts && !hasf) {
      tr_buf_printf(why, "%s accepts floats but has no float kernel", o->name);
      return false;
    }
    if (ints && !hasi) {
      tr_buf_printf(why, "%s accepts integers but has no integer kernel", o->name);
      return false;
    }
    if (!strchr(o->modes, TR_MODE_EXACT)) {
      tr_buf_printf(why, "%s has kernels but is not marked evaluated (x)", o->name);
      return false;
    }
    if (unary && flts && strcmp(k->srule, "PRED") != 0 && strcmp(k->shadow, "0") == 0) {
      tr_buf_printf(why, "%s accepts floats but has no shadow value function", o->name);
      return false;
    }
    if (ints && strchr(o->modes, TR_MODE_EMIT) && !k->c_int) {
      tr_buf_printf(why, "%s is emitted (e) but has no C int spelling", o->name);
      return false;
    }
    if (flts && strchr(o->modes, TR_MODE_EMIT) && !k->c) {
      tr_buf_printf(why, "%s is emitted (e) but has no C float spelling", o->name);
      return false;
    }
    for (int i = 0; i < 3; i++)
      if (!(k->ulps[i] >= 0)) {
        tr_buf_printf(why, "%s: negative ulp allowance", o->name);
        return false;
      }
  }
  return true;
}
