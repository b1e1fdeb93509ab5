/* domain.c - where each op's inputs get interesting: the per-op domain
 * table (docs/INPUTS.md, "Domain-edge inputs"). An entry is a range of
 * input magnitudes where the op saturates, overflows, underflows or where
 * implementations switch algorithm, for one float width; the default
 * input plan draws every third seed from the ranges of the module's ops
 * (inputs.c), and the fuzzer can ask for them (tr_inputs_domain). The
 * numbers are properties of the math and of the formats: ln of the
 * largest and smallest values for exp, the arguments where tanh, logistic
 * and erf round to +-1 or 0, the magnitudes where sin and cos need a long
 * range reduction; |x| of 5 to 20 for every f64 transcendental, the range
 * a polynomial approximation's segments usually split. */
#include "inputs.h"

#include <math.h>
#include <string.h>

/* Float width classes: 16 is f16 (5 exponent bits), 32 is f32 and bf16
 * (8 exponent bits), 64 is f64; 0 is any float type. */
typedef struct {
  tr_op op;
  int width;
  double lo, hi; /* magnitudes */
  bool sym;      /* both signs */
  bool half;     /* halfway between integers (ties of the rounding ops) */
} dom_entry;

static const dom_entry dom_table[] = {
  /* exp: overflow at ln(max), subnormal results below ln(min normal),
   * zero below ln(min subnormal) */
  {TR_OP_EXPONENTIAL, 16, 10, 11.2, false, false},
  {TR_OP_EXPONENTIAL, 16, -18, -9, false, false},
  {TR_OP_EXPONENTIAL, 32, 80, 89, false, false},
  {TR_OP_EXPONENTIAL, 32, -104, -86, false, false},
  {TR_OP_EXPONENTIAL, 64, 700, 710, false, false},
  {TR_OP_EXPONENTIAL, 64, -746, -707, false, false},
  {TR_OP_EXPONENTIAL, 64, 5, 20, true, false},
  /* expm1: exp's overflow, the small-argument branch, saturation at -1 */
  {TR_OP_EXPONENTIAL_MINUS_ONE, 32, 80, 89, false, false},
  {TR_OP_EXPONENTIAL_MINUS_ONE, 32, 1e-8, 1e-3, true, false},
  {TR_OP_EXPONENTIAL_MINUS_ONE, 32, -40, -15, false, false},
  {TR_OP_EXPONENTIAL_MINUS_ONE, 64, 700, 710, false, false},
  {TR_OP_EXPONENTIAL_MINUS_ONE, 64, 1e-12, 1e-5, true, false},
  {TR_OP_EXPONENTIAL_MINUS_ONE, 64, 5, 40, true, false},
  /* log: just around 1 (cancellation), huge arguments */
  {TR_OP_LOG, 0, 0.999, 1.001, false, false},
  {TR_OP_LOG, 32, 1e30, 3e38, false, false},
  {TR_OP_LOG, 64, 5, 20, false, false},
  {TR_OP_LOG, 64, 1e300, 1e308, false, false},
  /* log1p: near -1 and the small-argument branch */
  {TR_OP_LOG_PLUS_ONE, 0, -0.9999, -0.9, false, false},
  {TR_OP_LOG_PLUS_ONE, 32, 1e-8, 1e-3, true, false},
  {TR_OP_LOG_PLUS_ONE, 64, 1e-12, 1e-5, true, false},
  {TR_OP_LOG_PLUS_ONE, 64, 5, 20, false, false},
  /* tanh: rounds to +-1 past 9 (f32), 19.1 (f64), 4.2 (f16); the
   * small-argument branch (tanh x = x) */
  {TR_OP_TANH, 16, 3, 6, true, false},
  {TR_OP_TANH, 32, 7, 10, true, false},
  {TR_OP_TANH, 32, 1e-5, 1e-3, true, false},
  {TR_OP_TANH, 64, 5, 20, true, false},
  {TR_OP_TANH, 64, 1e-9, 1e-6, true, false},
  /* logistic: rounds to 1 past 17 (f32), 37 (f64); underflows towards 0
   * on the negative side down to exp's range */
  {TR_OP_LOGISTIC, 32, 10, 90, true, false},
  {TR_OP_LOGISTIC, 64, 5, 40, true, false},
  {TR_OP_LOGISTIC, 64, 600, 745, true, false},
  /* sin, cos, tan: long range reductions */
  {TR_OP_SINE, 32, 100, 1e4, true, false},
  {TR_OP_SINE, 64, 5, 20, true, false},
  {TR_OP_SINE, 64, 1e4, 1e6, true, false},
  {TR_OP_COSINE, 32, 100, 1e4, true, false},
  {TR_OP_COSINE, 64, 5, 20, true, false},
  {TR_OP_COSINE, 64, 1e4, 1e6, true, false},
  {TR_OP_TAN, 32, 100, 1e4, true, false},
  {TR_OP_TAN, 64, 5, 20, true, false},
  /* erf: rounds to +-1 past 3.9 (f32), 5.9 (f64) */
  {TR_OP_ERF, 32, 2.5, 5, true, false},
  {TR_OP_ERF, 64, 4, 7, true, false},
  {TR_OP_ERF, 64, 5, 20, true, false},
  /* atan2 and the square roots: huge and tiny magnitudes (the generic
   * entries below add subnormals) */
  {TR_OP_ATAN2, 64, 5, 20, true, false},
  {TR_OP_SQRT, 0, 1e10, 1e30, false, false},
  {TR_OP_RSQRT, 0, 1e10, 1e30, false, false},
  {TR_OP_CBRT, 64, 5, 20, true, false},
  /* power: a base near 1 and large exponents */
  {TR_OP_POWER, 0, 0.99, 1.01, false, false},
  {TR_OP_POWER, 0, 20, 100, true, false},
  /* rounding ops: ties, and magnitudes where every value is an integer */
  {TR_OP_ROUND_NEAREST_EVEN, 0, 0, 1000, true, true},
  {TR_OP_ROUND_NEAREST_AFZ, 0, 0, 1000, true, true},
  {TR_OP_FLOOR, 0, 0, 1000, true, true},
  {TR_OP_CEIL, 0, 0, 1000, true, true},
  {TR_OP_ROUND_NEAREST_EVEN, 32, 4e6, 2e7, true, true},
  /* float to int converts: the s32 and s64 limits */
  {TR_OP_CONVERT, 32, 2.1e9, 2.2e9, true, false},
  {TR_OP_CONVERT, 64, 2.1e9, 2.2e9, true, false},
  {TR_OP_CONVERT, 64, 9.2e18, 9.3e18, true, false},
};

/* The width class of a float dtype (0: none of the three). */
static int width_of(tr_dtype dt) {
  if (dt == TR_DT_F64 || dt == TR_DT_C128) return 64;
  if (dt == TR_DT_F32 || dt == TR_DT_BF16 || dt == TR_DT_C64) return 32;
  if (dt == TR_DT_F16) return 16;
  return 0;
}

static bool has_op(const tr_module *m, tr_op op) {
  for (int i = 0; i < m->ncomps; i++)
    for (int j = 0; j < m->comps[i]->ninstrs; j++)
      if (m->comps[i]->instrs[j]->op == op) return true;
  return false;
}

static int add(tr_domain_range *out, int n, int max, double lo, double hi, bool sym, bool half) {
  if (n >= max) return n;
  out[n].lo = lo;
  out[n].hi = hi;
  out[n].sym = sym;
  out[n].half = half;
  return n + 1;
}

int tr_inputs_domain(const tr_module *m, tr_dtype dt, tr_domain_range *out, int max) {
  int w = width_of(dt), n = 0;
  if (w == 0 || max <= 0) return 0;
  for (size_t k = 0; k < sizeof dom_table / sizeof dom_table[0]; k++) {
    const dom_entry *e = &dom_table[k];
    if ((e->width != 0 && e->width != w) || !has_op(m, e->op)) continue;
    n = add(out, n, max, e->lo, e->hi, e->sym, e->half);
  }
  /* Every float type: values that overflow a sum or a product, and
   * subnormals (flushed by some targets). */
  double big = w == 64 ? 1.7976931348623157e308 : w == 32 ? 3.4028234663852886e38 : 65504;
  double tiny = w == 64 ? 4.9406564584124654e-324 : w == 32 ? 1.4012984643248171e-45 : 5.9604644775390625e-08;
  double minn = w == 64 ? 2.2250738585072014e-308 : w == 32 ? 1.1754943508222875e-38 : 6.103515625e-05;
  if (dt == TR_DT_BF16) tiny = 9.183549615799121e-41;
  n = add(out, n, max, big / 8, big, true, false);
  n = add(out, n, max, tiny, minn, true, false);
  return n;
}
