/* test_eval.c - the exact interpreter on hand-made modules: every op and
 * dtype it implements, with expected values worked out by hand, and one
 * test per edge case of docs/SEMANTICS.md. */
#include "../../src/eval/eval.h"
#include "../../src/eval/shadow.h"
#include "test.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

/* ---- harness ---- */

static tr_module *parse_ok(const char *text, int line) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m || tr_verify(m, &d) != TR_OK) {
    fprintf(stderr, "  %s:%d: module did not parse and verify:\n", __FILE__, line);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    if (m) tr_module_free(m);
    m = NULL;
  }
  tr_diag_clear(&d);
  return m;
}

/* Parses, verifies and evaluates; returns the outputs (NULL on failure,
 * counted as a test failure). */
static tr_tensor **run_args(const char *text, tr_tensor *const *args, int nargs, int *n,
                            int line) {
  *n = 0;
  tr_module *m = parse_ok(text, line);
  if (!m) return NULL;
  tr_diag d = {0};
  tr_tensor **outs = NULL;
  if (tr_eval(m, args, nargs, &outs, n, &d) != TR_OK) {
    fprintf(stderr, "  %s:%d: evaluation failed:\n", __FILE__, line);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    outs = NULL;
  }
  tr_diag_clear(&d);
  tr_module_free(m);
  return outs;
}

/* Checks output i of outs (from run) against expected integers, bits or
 * doubles. NaN expectations match any NaN. */
static void want_ints(tr_tensor **outs, int n, int i, const int64_t *v, int count, int line) {
  if (!outs || i >= n) {
    fprintf(stderr, "  %s:%d: no output %d\n", __FILE__, line, i);
    tr_test_failed++;
    return;
  }
  const tr_tensor *t = outs[i];
  if ((int)tr_tensor_count(t) != count) {
    fprintf(stderr, "  %s:%d: output %d has %zu elements, expected %d\n", __FILE__, line, i,
            tr_tensor_count(t), count);
    tr_test_failed++;
    return;
  }
  for (int k = 0; k < count; k++) {
    int64_t got = tr_tensor_get_i(t, (size_t)k);
    if (got != v[k]) {
      fprintf(stderr, "  %s:%d: output %d element %d is %lld, expected %lld\n", __FILE__, line,
              i, k, (long long)got, (long long)v[k]);
      tr_test_failed++;
    }
  }
}

static void want_bits(tr_tensor **outs, int n, int i, const uint64_t *v, int count, int line) {
  if (!outs || i >= n) {
    fprintf(stderr, "  %s:%d: no output %d\n", __FILE__, line, i);
    tr_test_failed++;
    return;
  }
  const tr_tensor *t = outs[i];
  if ((int)tr_tensor_count(t) != count) {
    fprintf(stderr, "  %s:%d: output %d has %zu elements, expected %d\n", __FILE__, line, i,
            tr_tensor_count(t), count);
    tr_test_failed++;
    return;
  }
  for (int k = 0; k < count; k++) {
    uint64_t got = tr_tensor_get_bits(t, (size_t)k);
    if (got != v[k]) {
      fprintf(stderr, "  %s:%d: output %d element %d has bits 0x%llx, expected 0x%llx\n",
              __FILE__, line, i, k, (unsigned long long)got, (unsigned long long)v[k]);
      tr_test_failed++;
    }
  }
}

static void want_flts(tr_tensor **outs, int n, int i, const double *v, int count, int line) {
  if (!outs || i >= n) {
    fprintf(stderr, "  %s:%d: no output %d\n", __FILE__, line, i);
    tr_test_failed++;
    return;
  }
  const tr_tensor *t = outs[i];
  if ((int)tr_tensor_count(t) != count) {
    fprintf(stderr, "  %s:%d: output %d has %zu elements, expected %d\n", __FILE__, line, i,
            tr_tensor_count(t), count);
    tr_test_failed++;
    return;
  }
  for (int k = 0; k < count; k++) {
    double got = tr_tensor_get_f(t, (size_t)k);
    bool ok = isnan(v[k]) ? isnan(got) : (got == v[k] && signbit(got) == signbit(v[k]));
    if (!ok) {
      fprintf(stderr, "  %s:%d: output %d element %d is %.17g, expected %.17g\n", __FILE__,
              line, i, k, got, v[k]);
      tr_test_failed++;
    }
  }
}

#define RUN(text, n) run_args(text, NULL, 0, n, __LINE__)
#define INTS(outs, n, i, ...)                                                    \
  do {                                                                           \
    const int64_t v_[] = {__VA_ARGS__};                                          \
    want_ints(outs, n, i, v_, (int)(sizeof v_ / sizeof v_[0]), __LINE__);        \
  } while (0)
#define BITS(outs, n, i, ...)                                                    \
  do {                                                                           \
    const uint64_t v_[] = {__VA_ARGS__};                                         \
    want_bits(outs, n, i, v_, (int)(sizeof v_ / sizeof v_[0]), __LINE__);        \
  } while (0)
#define FLTS(outs, n, i, ...)                                                    \
  do {                                                                           \
    const double v_[] = {__VA_ARGS__};                                           \
    want_flts(outs, n, i, v_, (int)(sizeof v_ / sizeof v_[0]), __LINE__);        \
  } while (0)

/* Evaluates text expecting failure; returns the first message in buf. */
static const char *run_err(const char *text, char *buf, size_t cap) {
  tr_diag d = {0};
  snprintf(buf, cap, "(no error)");
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m) {
    snprintf(buf, cap, "(parse failed: %s)", tr_diag_first(&d) ? tr_diag_first(&d) : "");
    tr_diag_clear(&d);
    return buf;
  }
  tr_tensor **outs = NULL;
  int n = 0;
  if (tr_eval(m, NULL, 0, &outs, &n, &d) != TR_OK) {
    CHECK(outs == NULL && n == 0);
    snprintf(buf, cap, "%s", tr_diag_first(&d) ? tr_diag_first(&d) : "(no message)");
  } else {
    tr_eval_free_outputs(outs, n);
  }
  tr_diag_clear(&d);
  tr_module_free(m);
  return buf;
}

/* ---- arithmetic on every core dtype ---- */

TR_TEST(eval_add_wraps_every_int_type) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s4[2] constant({7, -8})\n"
                      "  b = s4[2] constant({1, -1})\n"
                      "  s4r = s4[2] add(a, b)\n"
                      "  c = u4[2] constant({15, 3})\n"
                      "  u4r = u4[2] add(c, c)\n"
                      "  d = s8[] constant(100)\n"
                      "  s8r = s8[] add(d, d)\n"
                      "  f = u8[] constant(200)\n"
                      "  g = u8[] constant(100)\n"
                      "  u8r = u8[] add(f, g)\n"
                      "  h = s16[] constant(30000)\n"
                      "  s16r = s16[] add(h, h)\n"
                      "  i = u16[] constant(65535)\n"
                      "  j = u16[] constant(1)\n"
                      "  u16r = u16[] add(i, j)\n"
                      "  k = s32[] constant(2147483647)\n"
                      "  l = s32[] constant(1)\n"
                      "  s32r = s32[] add(k, l)\n"
                      "  mm = u32[] constant(4294967295)\n"
                      "  nn = u32[] constant(1)\n"
                      "  u32r = u32[] add(mm, nn)\n"
                      "  p = s64[] constant(9223372036854775807)\n"
                      "  q = s64[] constant(1)\n"
                      "  s64r = s64[] add(p, q)\n"
                      "  r = u64[] constant(18446744073709551615)\n"
                      "  s = u64[] constant(1)\n"
                      "  u64r = u64[] add(r, s)\n"
                      "  t = pred[4] constant({0, 0, 1, 1})\n"
                      "  u = pred[4] constant({0, 1, 0, 1})\n"
                      "  pa = pred[4] add(t, u)\n"
                      "  pm = pred[4] multiply(t, u)\n"
                      "  ROOT out = (s4[2], u4[2], s8[], u8[], s16[], u16[], s32[], u32[], s64[], u64[], pred[4], pred[4]) "
                      "tuple(s4r, u4r, s8r, u8r, s16r, u16r, s32r, u32r, s64r, u64r, pa, pm)\n"
                      "}\n",
                      &n);
  CHECK_EQ_INT(n, 12);
  INTS(o, n, 0, -8, 7);      /* 7+1 wraps; -8-1 wraps to 7 */
  INTS(o, n, 1, 14, 6);      /* 30 mod 16 */
  INTS(o, n, 2, -56);        /* 200 - 256 */
  INTS(o, n, 3, 44);
  INTS(o, n, 4, -5536);
  INTS(o, n, 5, 0);
  INTS(o, n, 6, INT32_MIN);
  INTS(o, n, 7, 0);
  INTS(o, n, 8, INT64_MIN);
  BITS(o, n, 9, 0);
  INTS(o, n, 10, 0, 1, 1, 1); /* pred add is or */
  INTS(o, n, 11, 0, 0, 0, 1); /* pred multiply is and */
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_add_rounds_every_float_type) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f16[2] constant({1, 1})\n"
                      "  b = f16[2] constant({0.00048828125, 0.000732421875})\n"
                      "  f16r = f16[2] add(a, b)\n"
                      "  c = bf16[2] constant({1, 1})\n"
                      "  d = bf16[2] constant({0.00390625, 0.005859375})\n"
                      "  bf16r = bf16[2] add(c, d)\n"
                      "  f = f32[2] constant({16777216, 16777216})\n"
                      "  g = f32[2] constant({1, 3})\n"
                      "  f32r = f32[2] add(f, g)\n"
                      "  h = f64[] constant(9007199254740992)\n"
                      "  i = f64[] constant(1)\n"
                      "  f64r = f64[] add(h, i)\n"
                      "  j = f8e4m3fn[2] constant({448, 448})\n"
                      "  k = f8e4m3fn[2] constant({16, 32})\n"
                      "  e4r = f8e4m3fn[2] add(j, k)\n"
                      "  l = f8e5m2[2] constant({1, 57344})\n"
                      "  mm = f8e5m2[2] constant({0.125, 8192})\n"
                      "  e5r = f8e5m2[2] add(l, mm)\n"
                      "  ROOT out = (f16[2], bf16[2], f32[2], f64[], f8e4m3fn[2], f8e5m2[2]) "
                      "tuple(f16r, bf16r, f32r, f64r, e4r, e5r)\n"
                      "}\n",
                      &n);
  CHECK_EQ_INT(n, 6);
  /* 1 + 2^-11 ties to 1; 1 + 3*2^-12 rounds up to 1 + 2^-10. */
  BITS(o, n, 0, 0x3c00, 0x3c01);
  /* bf16: 1 + 2^-8 ties to 1; 1 + 3*2^-9 rounds to 1 + 2^-7. */
  BITS(o, n, 1, 0x3f80, 0x3f81);
  /* 2^24 + 1 ties to 2^24; 2^24 + 3 ties to the even 2^24 + 4. */
  FLTS(o, n, 2, 16777216, 16777220);
  FLTS(o, n, 3, 9007199254740992.0);
  /* 464 ties to the even 448; 480 is past the largest finite: NaN. */
  BITS(o, n, 4, 0x7e, 0x7f);
  /* 1.125 ties to 1; 65536 overflows to inf. */
  BITS(o, n, 5, 0x3c, 0x7c);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_float_binary_ops) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[4] constant({7, -7, 1, 3})\n"
                      "  b = f32[4] constant({2, 2, 3, 0})\n"
                      "  sub = f32[4] subtract(a, b)\n"
                      "  mul = f32[4] multiply(a, b)\n"
                      "  div = f32[4] divide(a, b)\n"
                      "  rem = f32[4] remainder(a, b)\n"
                      "  pw = f32[4] power(a, b)\n"
                      "  c = f64[2] constant({1, -1})\n"
                      "  d = f64[2] constant({1, -1})\n"
                      "  at = f64[2] atan2(c, d)\n"
                      "  ROOT out = (f32[4], f32[4], f32[4], f32[4], f32[4], f64[2]) tuple(sub, mul, div, rem, pw, at)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 5, -9, -2, 3);
  FLTS(o, n, 1, 14, -14, 3, 0);
  FLTS(o, n, 2, 3.5, -3.5, (double)(1.0f / 3.0f), INFINITY);
  FLTS(o, n, 3, 1, -1, 1, NAN); /* fmod: sign of the dividend; x % 0 = NaN */
  FLTS(o, n, 4, 49, 49, 1, 1);
  FLTS(o, n, 5, atan2(1.0, 1.0), atan2(-1.0, -1.0));
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_float_power_special_cases) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[4] constant({nan, 1, 0, -2})\n"
                      "  b = f32[4] constant({0, nan, 0, 0.5})\n"
                      "  ROOT p = f32[4] power(a, b)\n"
                      "}\n",
                      &n);
  /* E: lhs == 1 or rhs == 0 gives 1 before anything else. */
  FLTS(o, n, 0, 1, 1, 1, NAN);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_bf16_multiply_rounds_once) {
  int n;
  /* 1.0078125^2 = 1.01568603515625 = 1 + 2^-6 + 2^-14: rounds down to
   * 1 + 2^-6 (0x3f82). */
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = bf16[] constant(1.0078125)\n"
                      "  ROOT m = bf16[] multiply(a, a)\n"
                      "}\n",
                      &n);
  BITS(o, n, 0, 0x3f82);
  tr_eval_free_outputs(o, n);
}

/* ---- integer edge cases ---- */

TR_TEST(eval_int_divide_by_zero_and_overflow) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[5] constant({7, -7, 5, -2147483648, 0})\n"
                      "  b = s32[5] constant({2, 2, 0, -1, 0})\n"
                      "  div = s32[5] divide(a, b)\n"
                      "  rem = s32[5] remainder(a, b)\n"
                      "  c = u32[2] constant({5, 7})\n"
                      "  d = u32[2] constant({0, 2})\n"
                      "  udiv = u32[2] divide(c, d)\n"
                      "  urem = u32[2] remainder(c, d)\n"
                      "  f = s64[] constant(-9223372036854775808)\n"
                      "  g = s64[] constant(-1)\n"
                      "  div64 = s64[] divide(f, g)\n"
                      "  rem64 = s64[] remainder(f, g)\n"
                      "  h = s8[2] constant({-128, 9})\n"
                      "  i = s8[2] constant({-1, 0})\n"
                      "  div8 = s8[2] divide(h, i)\n"
                      "  ROOT out = (s32[5], s32[5], u32[2], u32[2], s64[], s64[], s8[2]) "
                      "tuple(div, rem, udiv, urem, div64, rem64, div8)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 3, -3, -1, INT32_MIN, -1); /* x/0 = -1; INT_MIN/-1 = INT_MIN */
  INTS(o, n, 1, 1, -1, 5, 0, 0);           /* x%0 = x; INT_MIN%-1 = 0 */
  INTS(o, n, 2, 4294967295, 3);            /* unsigned x/0 = all ones */
  INTS(o, n, 3, 5, 1);
  INTS(o, n, 4, INT64_MIN);
  INTS(o, n, 5, 0);
  INTS(o, n, 6, -128, -1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_int_shifts_past_width) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[5] constant({1, 1, -8, 8, -8})\n"
                      "  b = s32[5] constant({33, 31, 33, 33, -1})\n"
                      "  shl = s32[5] shift-left(a, b)\n"
                      "  sra = s32[5] shift-right-arithmetic(a, b)\n"
                      "  srl = s32[5] shift-right-logical(a, b)\n"
                      "  c = s32[2] constant({-8, -8})\n"
                      "  d = s32[2] constant({28, 1})\n"
                      "  srl2 = s32[2] shift-right-logical(c, d)\n"
                      "  sra2 = s32[2] shift-right-arithmetic(c, d)\n"
                      "  f = u8[2] constant({128, 128})\n"
                      "  g = u8[2] constant({9, 1})\n"
                      "  usra = u8[2] shift-right-arithmetic(f, g)\n"
                      "  h = s4[2] constant({1, 1})\n"
                      "  i = s4[2] constant({4, 3})\n"
                      "  shl4 = s4[2] shift-left(h, i)\n"
                      "  ROOT out = (s32[5], s32[5], s32[5], s32[2], s32[2], u8[2], s4[2]) "
                      "tuple(shl, sra, srl, srl2, sra2, usra, shl4)\n"
                      "}\n",
                      &n);
  /* A shift of >= 32 (or a negative amount, read as unsigned) gives 0 for
   * shl/shrl and the sign fill for shra. */
  INTS(o, n, 0, 0, INT32_MIN, 0, 0, 0);
  INTS(o, n, 1, 0, 0, -1, 0, -1);
  INTS(o, n, 2, 0, 0, 0, 0, 0);
  INTS(o, n, 3, 15, 2147483644);
  INTS(o, n, 4, -1, -4);
  INTS(o, n, 5, 255, 192); /* unsigned shra copies the top bit */
  INTS(o, n, 6, 0, -8);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_int_power) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[7] constant({2, -1, -1, 1, 0, 2, 3})\n"
                      "  b = s32[7] constant({10, -1, -2, -5, 0, 32, 64})\n"
                      "  p = s32[7] power(a, b)\n"
                      "  c = u8[2] constant({2, 3})\n"
                      "  d = u8[2] constant({8, 5})\n"
                      "  q = u8[2] power(c, d)\n"
                      "  ROOT out = (s32[7], u8[2]) tuple(p, q)\n"
                      "}\n",
                      &n);
  /* E: negative exponents give 0 unless the base is 1; 3^64 is exact
   * powering mod 2^32 (2038349057), not 3^(64 & 63) = 1 as on CPU. */
  INTS(o, n, 0, 1024, 0, 0, 1, 1, 0, 2038349057);
  INTS(o, n, 1, 0, 243);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_int_unary_ops) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[4] constant({-2147483648, -5, 0, 5})\n"
                      "  ab = s32[4] abs(a)\n"
                      "  ng = s32[4] negate(a)\n"
                      "  sg = s32[4] sign(a)\n"
                      "  pc = s32[4] popcnt(a)\n"
                      "  cz = s32[4] count-leading-zeros(a)\n"
                      "  nt = s32[4] not(a)\n"
                      "  b = u8[3] constant({0, 1, 255})\n"
                      "  cz8 = u8[3] count-leading-zeros(b)\n"
                      "  c = s4[2] constant({-1, 1})\n"
                      "  pc4 = s4[2] popcnt(c)\n"
                      "  d = pred[2] constant({0, 1})\n"
                      "  np = pred[2] not(d)\n"
                      "  ROOT out = (s32[4], s32[4], s32[4], s32[4], s32[4], s32[4], u8[3], s4[2], pred[2]) "
                      "tuple(ab, ng, sg, pc, cz, nt, cz8, pc4, np)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, INT32_MIN, 5, 0, 5); /* abs(INT_MIN) = INT_MIN */
  INTS(o, n, 1, INT32_MIN, 5, 0, -5);
  INTS(o, n, 2, -1, -1, 0, 1);
  INTS(o, n, 3, 1, 31, 0, 2);
  INTS(o, n, 4, 0, 0, 32, 29);
  INTS(o, n, 5, 2147483647, 4, -1, -6);
  INTS(o, n, 6, 8, 7, 0);
  INTS(o, n, 7, 4, 1);
  INTS(o, n, 8, 1, 0);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_int_bitwise_min_max) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s8[2] constant({-1, 12})\n"
                      "  b = s8[2] constant({1, 10})\n"
                      "  an = s8[2] and(a, b)\n"
                      "  or = s8[2] or(a, b)\n"
                      "  xo = s8[2] xor(a, b)\n"
                      "  mx = s8[2] maximum(a, b)\n"
                      "  mn = s8[2] minimum(a, b)\n"
                      "  c = u8[2] constant({255, 12})\n"
                      "  d = u8[2] constant({1, 10})\n"
                      "  umx = u8[2] maximum(c, d)\n"
                      "  f = u64[] constant(18446744073709551615)\n"
                      "  g = u64[] constant(1)\n"
                      "  umn = u64[] minimum(f, g)\n"
                      "  sb = s8[2] subtract(b, a)\n"
                      "  ml = s8[2] multiply(a, a)\n"
                      "  ROOT out = (s8[2], s8[2], s8[2], s8[2], s8[2], u8[2], u64[], s8[2], s8[2]) "
                      "tuple(an, or, xo, mx, mn, umx, umn, sb, ml)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 1, 8);
  INTS(o, n, 1, -1, 14);
  INTS(o, n, 2, -2, 6);
  INTS(o, n, 3, 1, 12);
  INTS(o, n, 4, -1, 10);
  INTS(o, n, 5, 255, 12);
  INTS(o, n, 6, 1);
  INTS(o, n, 7, 2, -2);
  INTS(o, n, 8, 1, -112); /* 144 wraps */
  tr_eval_free_outputs(o, n);
}

/* ---- float edge cases ---- */

TR_TEST(eval_max_min_nan_and_signed_zero) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[4] constant({nan, 1, -0, 0})\n"
                      "  b = f32[4] constant({1, nan, 0, -0})\n"
                      "  mx = f32[4] maximum(a, b)\n"
                      "  mn = f32[4] minimum(a, b)\n"
                      "  c = bf16[2] constant({nan, 2})\n"
                      "  d = bf16[2] constant({3, nan})\n"
                      "  bmx = bf16[2] maximum(c, d)\n"
                      "  ROOT out = (f32[4], f32[4], bf16[2]) tuple(mx, mn, bmx)\n"
                      "}\n",
                      &n);
  /* NaN from either side propagates; ties return the lhs. */
  FLTS(o, n, 0, NAN, NAN, -0.0, 0.0);
  FLTS(o, n, 1, NAN, NAN, -0.0, 0.0);
  FLTS(o, n, 2, NAN, NAN);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_float_unary_ops) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[6] constant({2.5, -2.5, -0.4, 3.5, 0.5, -0})\n"
                      "  afz = f32[6] round-nearest-afz(a)\n"
                      "  even = f32[6] round-nearest-even(a)\n"
                      "  fl = f32[6] floor(a)\n"
                      "  ce = f32[6] ceil(a)\n"
                      "  sg = f32[6] sign(a)\n"
                      "  ab = f32[6] abs(a)\n"
                      "  ng = f32[6] negate(a)\n"
                      "  b = f64[4] constant({0, 1, 4, 27})\n"
                      "  ex = f64[4] exponential(b)\n"
                      "  lg = f64[4] log(b)\n"
                      "  sq = f64[4] sqrt(b)\n"
                      "  rs = f64[4] rsqrt(b)\n"
                      "  cb = f64[4] cbrt(b)\n"
                      "  c = f64[1] constant({0})\n"
                      "  em = f64[1] exponential-minus-one(c)\n"
                      "  l1 = f64[1] log-plus-one(c)\n"
                      "  th = f64[1] tanh(c)\n"
                      "  lo = f64[1] logistic(c)\n"
                      "  si = f64[1] sine(c)\n"
                      "  co = f64[1] cosine(c)\n"
                      "  ta = f64[1] tan(c)\n"
                      "  er = f64[1] erf(c)\n"
                      "  d = f32[4] constant({inf, nan, 1, -inf})\n"
                      "  fin = pred[4] is-finite(d)\n"
                      "  sgn = f32[4] sign(d)\n"
                      "  ROOT out = (f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], f32[6], f64[4], f64[4], f64[4], "
                      "f64[4], f64[4], f64[1], f64[1], f64[1], f64[1], f64[1], f64[1], f64[1], f64[1], pred[4], f32[4]) "
                      "tuple(afz, even, fl, ce, sg, ab, ng, ex, lg, sq, rs, cb, em, l1, th, lo, si, co, ta, er, fin, sgn)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 3, -3, -0.0, 4, 1, -0.0);
  FLTS(o, n, 1, 2, -2, -0.0, 4, 0, -0.0);
  FLTS(o, n, 2, 2, -3, -1, 3, 0, -0.0);
  FLTS(o, n, 3, 3, -2, -0.0, 4, 1, -0.0);
  FLTS(o, n, 4, 1, -1, -1, 1, 1, -0.0);
  FLTS(o, n, 5, 2.5, 2.5, (double)0.4f, 3.5, 0.5, 0.0);
  FLTS(o, n, 6, -2.5, 2.5, (double)0.4f, -3.5, -0.5, 0.0);
  FLTS(o, n, 7, 1, exp(1.0), exp(4.0), exp(27.0));
  FLTS(o, n, 8, -INFINITY, 0, log(4.0), log(27.0));
  FLTS(o, n, 9, 0, 1, 2, sqrt(27.0));
  FLTS(o, n, 10, INFINITY, 1, 0.5, 1 / sqrt(27.0));
  FLTS(o, n, 11, 0, 1, cbrt(4.0), cbrt(27.0));
  FLTS(o, n, 12, 0);
  FLTS(o, n, 13, 0);
  FLTS(o, n, 14, 0);
  FLTS(o, n, 15, 0.5);
  FLTS(o, n, 16, 0);
  FLTS(o, n, 17, 1);
  FLTS(o, n, 18, 0);
  FLTS(o, n, 19, 0);
  INTS(o, n, 20, 0, 0, 1, 0);
  FLTS(o, n, 21, 1, NAN, 1, -1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_abs_negate_keep_nan_payload) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[2] constant({nan(0x1234), -nan(0x5)})\n"
                      "  ng = f32[2] negate(a)\n"
                      "  ab = f32[2] abs(a)\n"
                      "  b = bf16[1] constant({-nan(0x3)})\n"
                      "  bab = bf16[1] abs(b)\n"
                      "  ROOT out = (f32[2], f32[2], bf16[1]) tuple(ng, ab, bab)\n"
                      "}\n",
                      &n);
  BITS(o, n, 0, 0xff801234, 0x7f800005); /* signalling NaNs stay as they are */
  BITS(o, n, 1, 0x7f801234, 0x7f800005);
  BITS(o, n, 2, 0x7f83);
  tr_eval_free_outputs(o, n);
}

/* ---- compare ---- */

TR_TEST(eval_compare_float_partial_order) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[4] constant({nan, -0, 1, nan})\n"
                      "  b = f32[4] constant({nan, 0, 2, 1})\n"
                      "  eq = pred[4] compare(a, b), direction=EQ\n"
                      "  ne = pred[4] compare(a, b), direction=NE\n"
                      "  lt = pred[4] compare(a, b), direction=LT\n"
                      "  le = pred[4] compare(a, b), direction=LE\n"
                      "  gt = pred[4] compare(a, b), direction=GT\n"
                      "  ge = pred[4] compare(a, b), direction=GE, type=FLOAT\n"
                      "  ROOT out = (pred[4], pred[4], pred[4], pred[4], pred[4], pred[4]) tuple(eq, ne, lt, le, gt, ge)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 0, 1, 0, 0);
  INTS(o, n, 1, 1, 0, 1, 1);
  INTS(o, n, 2, 0, 0, 1, 0);
  INTS(o, n, 3, 0, 1, 1, 0);
  INTS(o, n, 4, 0, 0, 0, 0);
  INTS(o, n, 5, 0, 1, 0, 0);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_compare_totalorder) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[5] constant({-0, -0, nan, -nan, nan})\n"
                      "  b = f32[5] constant({0, -0, inf, -inf, nan})\n"
                      "  lt = pred[5] compare(a, b), direction=LT, type=TOTALORDER\n"
                      "  eq = pred[5] compare(a, b), direction=EQ, type=TOTALORDER\n"
                      "  c = bf16[2] constant({-0, 1})\n"
                      "  d = bf16[2] constant({0, -nan})\n"
                      "  gt = pred[2] compare(c, d), direction=GT, type=TOTALORDER\n"
                      "  ROOT out = (pred[5], pred[5], pred[2]) tuple(lt, eq, gt)\n"
                      "}\n",
                      &n);
  /* -0 < +0; NaN > inf; -NaN < -inf; equal means equal bits. */
  INTS(o, n, 0, 1, 0, 0, 1, 0);
  INTS(o, n, 1, 0, 1, 0, 0, 1);
  INTS(o, n, 2, 0, 1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_compare_ints_signedness) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[2] constant({-1, 3})\n"
                      "  b = s32[2] constant({1, 3})\n"
                      "  slt = pred[2] compare(a, b), direction=LT\n"
                      "  c = u32[2] constant({4294967295, 3})\n"
                      "  d = u32[2] constant({1, 3})\n"
                      "  ult = pred[2] compare(c, d), direction=LT, type=UNSIGNED\n"
                      "  f = pred[2] constant({0, 1})\n"
                      "  g = pred[2] constant({1, 1})\n"
                      "  plt = pred[2] compare(f, g), direction=LT\n"
                      "  s4a = s4[2] constant({-8, 7})\n"
                      "  s4b = s4[2] constant({7, 7})\n"
                      "  s4ge = pred[2] compare(s4a, s4b), direction=GE\n"
                      "  ROOT out = (pred[2], pred[2], pred[2], pred[2]) tuple(slt, ult, plt, s4ge)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 1, 0);
  INTS(o, n, 1, 0, 0);
  INTS(o, n, 2, 1, 0);
  INTS(o, n, 3, 0, 1);
  tr_eval_free_outputs(o, n);
}

/* ---- select, clamp ---- */

TR_TEST(eval_select_and_clamp) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  p = pred[3] constant({1, 0, 1})\n"
                      "  a = s32[3] constant({1, 2, 3})\n"
                      "  b = s32[3] constant({10, 20, 30})\n"
                      "  s = s32[3] select(p, a, b)\n"
                      "  q = pred[] constant(0)\n"
                      "  t2 = s32[3] select(q, a, b)\n"
                      "  lo = s32[] constant(2)\n"
                      "  hi = s32[] constant(25)\n"
                      "  x = s32[4] constant({1, 5, 30, -7})\n"
                      "  cl = s32[4] clamp(lo, x, hi)\n"
                      "  flo = f32[4] constant({0, 0, nan, 5})\n"
                      "  fx = f32[4] constant({-1, nan, 1, 1})\n"
                      "  fhi = f32[4] constant({1, 1, 1, 2})\n"
                      "  fcl = f32[4] clamp(flo, fx, fhi)\n"
                      "  ROOT out = (s32[3], s32[3], s32[4], f32[4]) tuple(s, t2, cl, fcl)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 1, 20, 3);
  INTS(o, n, 1, 10, 20, 30);
  INTS(o, n, 2, 2, 5, 25, 2);
  /* E: NaN in lo, x or hi is the result; lo > hi gives hi. */
  FLTS(o, n, 3, 0, NAN, NAN, 2);
  tr_eval_free_outputs(o, n);
}

/* ---- convert ---- */

TR_TEST(eval_convert_float_to_int_saturates) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[7] constant({nan, 3e9, -3e9, -1.9, 1.9, inf, -inf})\n"
                      "  s = s32[7] convert(a)\n"
                      "  u = u8[7] convert(a)\n"
                      "  p = pred[7] convert(a)\n"
                      "  b = f64[3] constant({1e30, -1e30, 9.2233720368547758e18})\n"
                      "  bs = s64[3] convert(b)\n"
                      "  bu = u64[3] convert(b)\n"
                      "  c = f32[2] constant({7.9, -8.5})\n"
                      "  c4 = s4[2] convert(c)\n"
                      "  ROOT out = (s32[7], u8[7], pred[7], s64[3], u64[3], s4[2]) tuple(s, u, p, bs, bu, c4)\n"
                      "}\n",
                      &n);
  /* NaN -> 0; out of range saturates; otherwise truncation. */
  INTS(o, n, 0, 0, INT32_MAX, INT32_MIN, -1, 1, INT32_MAX, INT32_MIN);
  INTS(o, n, 1, 0, 255, 0, 0, 1, 255, 0);
  INTS(o, n, 2, 1, 1, 1, 1, 1, 1, 1); /* NaN -> true */
  INTS(o, n, 3, INT64_MAX, INT64_MIN, INT64_MAX);
  BITS(o, n, 4, UINT64_MAX, 0, 9223372036854775808ull);
  INTS(o, n, 5, 7, -8);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_convert_narrowing_ties_to_even) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[5] constant({1.00390625, 1.01171875, 3.4e38, nan, -0})\n"
                      "  b = bf16[5] convert(a)\n"
                      "  c = f32[3] constant({65520, 65519, 5.9604645e-08})\n"
                      "  h = f16[3] convert(c)\n"
                      "  d = f32[3] constant({1000, 1.0625, -0.0009765625})\n"
                      "  e4 = f8e4m3fn[3] convert(d)\n"
                      "  e5 = f8e5m2[3] convert(d)\n"
                      "  f = f64[2] constant({1.0000000596046448, 1.00000006})\n"
                      "  g = f32[2] convert(f)\n"
                      "  ROOT out = (bf16[5], f16[3], f8e4m3fn[3], f8e5m2[3], f32[2]) tuple(b, h, e4, e5, g)\n"
                      "}\n",
                      &n);
  /* 1 + 2^-8 ties down to 1; 1 + 3*2^-8 ties up to the even 1 + 2^-6;
   * 3.4e38 rounds past the bf16 max to inf. */
  BITS(o, n, 0, 0x3f80, 0x3f82, 0x7f80, 0x7fc0, 0x8000);
  /* 65520 ties to 65536 = inf; 65519 rounds to 65504; 2^-24 is the
   * smallest f16 subnormal. */
  BITS(o, n, 1, 0x7c00, 0x7bff, 0x0001);
  /* e4m3fn: 1000 overflows to NaN; 1.0625 ties to 1; -2^-10 underflows to
   * -0 (the smallest subnormal is 2^-9, 2^-10 ties to even 0). */
  BITS(o, n, 2, 0x7f, 0x38, 0x80);
  /* e5m2: 1000 -> 1024; 1.0625 -> 1; -2^-10 is normal (exponent -10). */
  BITS(o, n, 3, 0x64, 0x3c, 0x94);
  /* f64 -> f32: 1 + 2^-24 ties to 1; a little more rounds up. */
  BITS(o, n, 4, 0x3f800000, 0x3f800001);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_convert_int_sources) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[3] constant({16777217, 300, -1})\n"
                      "  f = f32[3] convert(a)\n"
                      "  a8 = s8[3] convert(a)\n"
                      "  a32 = u32[3] convert(a)\n"
                      "  b = s32[2] constant({257, 259})\n"
                      "  bf = bf16[2] convert(b)\n"
                      "  c = u8[1] constant({255})\n"
                      "  cs = s32[1] convert(c)\n"
                      "  d = pred[2] constant({1, 0})\n"
                      "  ds = s32[2] convert(d)\n"
                      "  df = f32[2] convert(d)\n"
                      "  e = s64[2] constant({9007199254740993, -3})\n"
                      "  ef = f64[2] convert(e)\n"
                      "  ep = pred[2] convert(e)\n"
                      "  g = u64[1] constant({18446744073709551615})\n"
                      "  gf = f32[1] convert(g)\n"
                      "  h = s8[1] constant({-1})\n"
                      "  hu = u64[1] convert(h)\n"
                      "  ROOT out = (f32[3], s8[3], u32[3], bf16[2], s32[1], s32[2], f32[2], f64[2], pred[2], f32[1], u64[1]) "
                      "tuple(f, a8, a32, bf, cs, ds, df, ef, ep, gf, hu)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 16777216, 300, -1); /* 2^24 + 1 ties to 2^24 */
  INTS(o, n, 1, 1, 44, -1);         /* low 8 bits */
  INTS(o, n, 2, 16777217, 300, 4294967295);
  FLTS(o, n, 3, 256, 260); /* bf16 spacing 2 at 256: 257 -> 256, 259 -> 260 (even) */
  INTS(o, n, 4, 255);
  INTS(o, n, 5, 1, 0);
  FLTS(o, n, 6, 1, 0);
  FLTS(o, n, 7, 9007199254740992.0, -3);
  INTS(o, n, 8, 1, 1);
  FLTS(o, n, 9, 18446744073709551616.0);
  BITS(o, n, 10, UINT64_MAX); /* sign-extended from the source */
  tr_eval_free_outputs(o, n);
}

/* ---- data movement ---- */

TR_TEST(eval_iota_broadcast_reshape_transpose) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  i = s32[2,3] iota(), iota_dimension=1\n"
                      "  j = f32[2,3] iota(), iota_dimension=0\n"
                      "  k = s4[10] iota(), iota_dimension=0\n"
                      "  a = s32[2] constant({1, 2})\n"
                      "  b = s32[2,3] broadcast(a), dimensions={0}\n"
                      "  c = s32[] constant(7)\n"
                      "  d = s32[2] broadcast(c), dimensions={}\n"
                      "  r = s32[3,2] reshape(i)\n"
                      "  t = s32[3,2] transpose(b), dimensions={1,0}\n"
                      "  t3 = s32[3,2] transpose(i), dimensions={1,0}\n"
                      "  ROOT out = (s32[2,3], f32[2,3], s4[10], s32[2,3], s32[2], s32[3,2], s32[3,2], s32[3,2]) "
                      "tuple(i, j, k, b, d, r, t, t3)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 0, 1, 2, 0, 1, 2);
  FLTS(o, n, 1, 0, 0, 0, 1, 1, 1);
  INTS(o, n, 2, 0, 1, 2, 3, 4, 5, 6, 7, -8, -7); /* integer iota wraps */
  INTS(o, n, 3, 1, 1, 1, 2, 2, 2);
  INTS(o, n, 4, 7, 7);
  INTS(o, n, 5, 0, 1, 2, 0, 1, 2);
  INTS(o, n, 6, 1, 2, 1, 2, 1, 2);
  INTS(o, n, 7, 0, 0, 1, 1, 2, 2);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_slice_reverse_concatenate) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  i = s32[3,4] iota(), iota_dimension=1\n"
                      "  j = s32[3,4] iota(), iota_dimension=0\n"
                      "  k = s32[3,4] multiply(j, j)\n"
                      "  x = s32[3,4] add(i, k)\n"
                      "  s = s32[2,2] slice(x), slice={[1:3], [0:4:2]}\n"
                      "  r = s32[3,4] reverse(x), dimensions={0,1}\n"
                      "  a = s32[2] constant({1, 2})\n"
                      "  b = s32[1] constant({3})\n"
                      "  c = s32[3] concatenate(a, b), dimensions={0}\n"
                      "  m2 = s32[2,2] constant({{1, 2}, {3, 4}})\n"
                      "  m1 = s32[2,1] constant({{5}, {6}})\n"
                      "  c2 = s32[2,3] concatenate(m2, m1), dimensions={1}\n"
                      "  ROOT out = (s32[2,2], s32[3,4], s32[3], s32[2,3]) tuple(s, r, c, c2)\n"
                      "}\n",
                      &n);
  /* x[r][c] = c + r*r: rows {0,1,2,3}, {1,2,3,4}, {4,5,6,7}. */
  INTS(o, n, 0, 1, 3, 4, 6);
  INTS(o, n, 1, 7, 6, 5, 4, 4, 3, 2, 1, 3, 2, 1, 0);
  INTS(o, n, 2, 1, 2, 3);
  INTS(o, n, 3, 1, 2, 5, 3, 4, 6);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_dynamic_slice_clamps_starts) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = s32[5] iota(), iota_dimension=0\n"
                      "  four = s32[] constant(4)\n"
                      "  neg = s32[] constant(-2)\n"
                      "  one = s32[] constant(1)\n"
                      "  a = s32[2] dynamic-slice(x, four), dynamic_slice_sizes={2}\n"
                      "  b = s32[2] dynamic-slice(x, neg), dynamic_slice_sizes={2}\n"
                      "  c = s32[2] dynamic-slice(x, one), dynamic_slice_sizes={2}\n"
                      "  y = s32[3,3] iota(), iota_dimension=1\n"
                      "  d = s32[2,2] dynamic-slice(y, four, one), dynamic_slice_sizes={2,2}\n"
                      "  big = u64[] constant(18446744073709551615)\n"
                      "  e = s32[2] dynamic-slice(x, big), dynamic_slice_sizes={2}\n"
                      "  z = s32[4] constant({0, 0, 0, 0})\n"
                      "  u = s32[2] constant({8, 9})\n"
                      "  f = s32[4] dynamic-update-slice(z, u, four)\n"
                      "  g = s32[4] dynamic-update-slice(z, u, neg)\n"
                      "  h = s32[4] dynamic-update-slice(z, u, one)\n"
                      "  ROOT out = (s32[2], s32[2], s32[2], s32[2,2], s32[2], s32[4], s32[4], s32[4]) "
                      "tuple(a, b, c, d, e, f, g, h)\n"
                      "}\n",
                      &n);
  /* Each start is clamped to [0, dim - size]. */
  INTS(o, n, 0, 3, 4);
  INTS(o, n, 1, 0, 1);
  INTS(o, n, 2, 1, 2);
  INTS(o, n, 3, 1, 2, 1, 2);
  INTS(o, n, 4, 0, 1); /* a u64 index >= 2^63 is negative to E: clamps to 0 */
  INTS(o, n, 5, 0, 0, 8, 9);
  INTS(o, n, 6, 8, 9, 0, 0);
  INTS(o, n, 7, 0, 8, 9, 0);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_pad_negative_and_interior) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = s32[3] constant({1, 2, 3})\n"
                      "  z = s32[] constant(0)\n"
                      "  a = s32[5] pad(x, z), padding=-1_1_1\n"
                      "  b = s32[2] pad(x, z), padding=-2_-3_2\n"
                      "  m = f32[2,2] constant({{1, 2}, {3, 4}})\n"
                      "  nine = f32[] constant(9)\n"
                      "  c = f32[3,4] pad(m, nine), padding=1_0x0_1_1\n"
                      "  d = s32[3] pad(x, z), padding=0_-2_1\n"
                      "  ROOT out = (s32[5], s32[2], f32[3,4], s32[3]) tuple(a, b, c, d)\n"
                      "}\n",
                      &n);
  /* Interior-padded 1 0 2 0 3; low -1 drops the 1; high 1 adds a 0. */
  INTS(o, n, 0, 0, 2, 0, 3, 0);
  /* 1 0 0 2 0 0 3 cropped by 2 low and 3 high: 0 2. */
  INTS(o, n, 1, 0, 2);
  FLTS(o, n, 2, 9, 9, 9, 9, 1, 9, 2, 9, 3, 9, 4, 9);
  INTS(o, n, 3, 1, 0, 2);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_bitcast_and_bitcast_convert) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[2] constant({1, -2})\n"
                      "  b = s32[2] bitcast-convert(a)\n"
                      "  c = u16[2,2] bitcast-convert(a)\n"
                      "  d = s32[2,1] bitcast(a)\n"
                      "  e = u8[4] constant({1, 2, 3, 4})\n"
                      "  f = u32[] bitcast-convert(e)\n"
                      "  g = s8[2] constant({-1, 1})\n"
                      "  h = s4[2,2] bitcast-convert(g)\n"
                      "  ROOT out = (s32[2], u16[2,2], s32[2,1], u32[], s4[2,2]) tuple(b, c, d, f, h)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 0x3f800000, (int32_t)0xc0000000);
  INTS(o, n, 1, 0, 0x3f80, 0, 0xc000); /* little-endian: low half first */
  INTS(o, n, 2, 0x3f800000, (int32_t)0xc0000000);
  INTS(o, n, 3, 0x04030201);
  INTS(o, n, 4, -1, -1, 1, 0);
  tr_eval_free_outputs(o, n);
}

/* ---- reduce ---- */

TR_TEST(eval_reduce_sequential_order) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "sum {\n"
                      "  x = f32[] parameter(0)\n"
                      "  y = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(x, y)\n"
                      "}\n"
                      "bsum {\n"
                      "  x = bf16[] parameter(0)\n"
                      "  y = bf16[] parameter(1)\n"
                      "  ROOT s = bf16[] add(x, y)\n"
                      "}\n"
                      "isum {\n"
                      "  x = s32[] parameter(0)\n"
                      "  y = s32[] parameter(1)\n"
                      "  ROOT s = s32[] add(x, y)\n"
                      "}\n"
                      "isub {\n"
                      "  x = s32[] parameter(0)\n"
                      "  y = s32[] parameter(1)\n"
                      "  ROOT s = s32[] subtract(y, x)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  a = f32[3] constant({16777216, 1, 1})\n"
                      "  z = f32[] constant(0)\n"
                      "  r = f32[] reduce(a, z), dimensions={0}, to_apply=sum\n"
                      "  b = bf16[3] constant({256, 1, 1})\n"
                      "  bz = bf16[] constant(0)\n"
                      "  br = bf16[] reduce(b, bz), dimensions={0}, to_apply=bsum\n"
                      "  i = s32[2,3] iota(), iota_dimension=1\n"
                      "  iz = s32[] constant(10)\n"
                      "  r1 = s32[2] reduce(i, iz), dimensions={1}, to_apply=isum\n"
                      "  r0 = s32[3] reduce(i, iz), dimensions={0}, to_apply=isum\n"
                      "  rall = s32[] reduce(i, iz), dimensions={0,1}, to_apply=isum\n"
                      "  rs = s32[2] reduce(i, iz), dimensions={1}, to_apply=isub\n"
                      "  ROOT out = (f32[], bf16[], s32[2], s32[3], s32[], s32[2]) tuple(r, br, r1, r0, rall, rs)\n"
                      "}\n",
                      &n);
  /* Left to right: 2^24 + 1 rounds back to 2^24 twice (a tree would give
   * 2^24 + 2). bf16 likewise stays 256. */
  FLTS(o, n, 0, 16777216);
  FLTS(o, n, 1, 256);
  INTS(o, n, 2, 13, 13);
  INTS(o, n, 3, 10, 12, 14);
  INTS(o, n, 4, 16);
  /* acc = x - acc with x in order 0,1,2: 10 -> -10 -> 11 -> -9. */
  INTS(o, n, 5, -9, -9);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_reduce_general_reducer) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "argmax {\n"
                      "  v0 = f32[] parameter(0)\n"
                      "  i0 = s32[] parameter(1)\n"
                      "  v1 = f32[] parameter(2)\n"
                      "  i1 = s32[] parameter(3)\n"
                      "  gt = pred[] compare(v1, v0), direction=GT\n"
                      "  v = f32[] select(gt, v1, v0)\n"
                      "  i = s32[] select(gt, i1, i0)\n"
                      "  ROOT t = (f32[], s32[]) tuple(v, i)\n"
                      "}\n"
                      "sq {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  bb = f32[] multiply(b, b)\n"
                      "  ROOT s = f32[] add(a, bb)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  x = f32[2,4] constant({{1, 5, 5, 2}, {-1, -3, 0, -1}})\n"
                      "  idx = s32[2,4] iota(), iota_dimension=1\n"
                      "  ninf = f32[] constant(-inf)\n"
                      "  zero = s32[] constant(0)\n"
                      "  r = (f32[2], s32[2]) reduce(x, idx, ninf, zero), dimensions={1}, to_apply=argmax\n"
                      "  v = f32[2] get-tuple-element(r), index=0\n"
                      "  i = s32[2] get-tuple-element(r), index=1\n"
                      "  fz = f32[] constant(0)\n"
                      "  ss = f32[4] reduce(x, fz), dimensions={0}, to_apply=sq\n"
                      "  ROOT out = (f32[2], s32[2], f32[4]) tuple(v, i, ss)\n"
                      "}\n",
                      &n);
  /* First maximum wins (strict GT keeps the earlier index). */
  FLTS(o, n, 0, 5, 0);
  INTS(o, n, 1, 1, 2);
  FLTS(o, n, 2, 2, 34, 25, 5);
  tr_eval_free_outputs(o, n);
}

/* ---- dot ---- */

TR_TEST(eval_dot_ints_and_batches) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = s32[2,3] constant({{1, 2, 3}, {4, 5, 6}})\n"
                      "  b = s32[3,2] constant({{1, 0}, {0, 1}, {1, 1}})\n"
                      "  mm = s32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                      "  c = s32[2,1,2] constant({{{1, 2}}, {{3, 4}}})\n"
                      "  d = s32[2,2,1] constant({{{5}, {6}}, {{7}, {8}}})\n"
                      "  bm = s32[2,1,1] dot(c, d), lhs_batch_dims={0}, lhs_contracting_dims={2}, "
                      "rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
                      "  e8 = s8[2] constant({100, 100})\n"
                      "  f8 = s8[2] constant({1, 1})\n"
                      "  w = s8[] dot(e8, f8), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  w32 = s32[] dot(e8, f8), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  v = s32[3] constant({1, 2, 3})\n"
                      "  outer = s32[3,3] dot(v, v)\n"
                      "  ROOT out = (s32[2,2], s32[2,1,1], s8[], s32[], s32[3,3]) tuple(mm, bm, w, w32, outer)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 4, 5, 10, 11);
  INTS(o, n, 1, 17, 53);
  INTS(o, n, 2, -56); /* 200 wraps in s8 */
  INTS(o, n, 3, 200); /* s8 x s8 -> s32 does not */
  INTS(o, n, 4, 1, 2, 3, 2, 4, 6, 3, 6, 9);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_dot_float_accumulation) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[3] constant({16777216, 1, 1})\n"
                      "  b = f32[3] constant({1, 1, 1})\n"
                      "  f = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  c = bf16[3] constant({256, 1, 1})\n"
                      "  d = bf16[3] constant({1, 1, 1})\n"
                      "  g = bf16[] dot(c, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  h = f32[] dot(c, d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                      "  k = f64[2,2] constant({{1, 2}, {3, 4}})\n"
                      "  kk = f64[2,2] dot(k, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
                      "  ROOT out = (f32[], bf16[], f32[], f64[2,2]) tuple(f, g, h, kk)\n"
                      "}\n",
                      &n);
  /* f32 accumulates in f32 left to right: 2^24 stays. bf16 accumulates in
   * f32 (258) and rounds once: 258 is a bf16 value. */
  FLTS(o, n, 0, 16777216);
  FLTS(o, n, 1, 258);
  FLTS(o, n, 2, 258);
  FLTS(o, n, 3, 7, 10, 15, 22);
  tr_eval_free_outputs(o, n);
}

/* ---- structure and control flow ---- */

TR_TEST(eval_while_call_fusion_map) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "cond {\n"
                      "  s = (s32[], f32[2]) parameter(0)\n"
                      "  i = s32[] get-tuple-element(s), index=0\n"
                      "  ten = s32[] constant(10)\n"
                      "  ROOT lt = pred[] compare(i, ten), direction=LT\n"
                      "}\n"
                      "body {\n"
                      "  s = (s32[], f32[2]) parameter(0)\n"
                      "  i = s32[] get-tuple-element(s), index=0\n"
                      "  v = f32[2] get-tuple-element(s), index=1\n"
                      "  one = s32[] constant(1)\n"
                      "  i1 = s32[] add(i, one)\n"
                      "  v1 = f32[2] add(v, v)\n"
                      "  ROOT t = (s32[], f32[2]) tuple(i1, v1)\n"
                      "}\n"
                      "twice {\n"
                      "  x = f32[2] parameter(0)\n"
                      "  ROOT y = f32[2] add(x, x)\n"
                      "}\n"
                      "fused {\n"
                      "  p0 = f32[2] parameter(0)\n"
                      "  p1 = f32[2] parameter(1)\n"
                      "  m = f32[2] multiply(p0, p1)\n"
                      "  ROOT n = f32[2] negate(m)\n"
                      "}\n"
                      "sub {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT d = f32[] subtract(b, a)\n"
                      "}\n"
                      "cube {\n"
                      "  a = s32[] parameter(0)\n"
                      "  sq = s32[] multiply(a, a)\n"
                      "  ROOT c = s32[] multiply(sq, a)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  zero = s32[] constant(0)\n"
                      "  v = f32[2] constant({1, -0.5})\n"
                      "  init = (s32[], f32[2]) tuple(zero, v)\n"
                      "  w = (s32[], f32[2]) while(init), condition=cond, body=body\n"
                      "  cnt = s32[] get-tuple-element(w), index=0\n"
                      "  vv = f32[2] get-tuple-element(w), index=1\n"
                      "  c = f32[2] call(v), to_apply=twice\n"
                      "  f = f32[2] fusion(v, c), kind=kLoop, calls=fused\n"
                      "  mp = f32[2] map(v, c), dimensions={0}, to_apply=sub\n"
                      "  k = s32[3] constant({1, -2, 3})\n"
                      "  mc = s32[3] map(k), dimensions={0}, to_apply=cube\n"
                      "  ob = f32[2] opt-barrier(v)\n"
                      "  cp = f32[2] copy(ob)\n"
                      "  ROOT out = (s32[], f32[2], f32[2], f32[2], f32[2], s32[3], f32[2]) tuple(cnt, vv, c, f, mp, mc, cp)\n"
                      "}\n",
                      &n);
  CHECK_EQ_INT(n, 7);
  INTS(o, n, 0, 10);
  FLTS(o, n, 1, 1024, -512);
  FLTS(o, n, 2, 2, -1);
  FLTS(o, n, 3, -2, -0.5);
  FLTS(o, n, 4, 1, -0.5); /* sub(a, b) = b - a */
  INTS(o, n, 5, 1, -8, 27);
  FLTS(o, n, 6, 1, -0.5);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_conditional_branches) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "neg {\n"
                      "  x = s32[] parameter(0)\n"
                      "  ROOT y = s32[] negate(x)\n"
                      "}\n"
                      "dbl {\n"
                      "  x = s32[] parameter(0)\n"
                      "  ROOT y = s32[] add(x, x)\n"
                      "}\n"
                      "id {\n"
                      "  ROOT x = s32[] parameter(0)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  v = s32[] constant(5)\n"
                      "  t = pred[] constant(1)\n"
                      "  f = pred[] constant(0)\n"
                      "  a = s32[] conditional(t, v, v), true_computation=neg, false_computation=dbl\n"
                      "  b = s32[] conditional(f, v, v), true_computation=neg, false_computation=dbl\n"
                      "  i1 = s32[] constant(1)\n"
                      "  i9 = s32[] constant(9)\n"
                      "  im = s32[] constant(-1)\n"
                      "  c = s32[] conditional(i1, v, v, v), branch_computations={neg, dbl, id}\n"
                      "  d = s32[] conditional(i9, v, v, v), branch_computations={neg, dbl, id}\n"
                      "  g = s32[] conditional(im, v, v, v), branch_computations={dbl, neg, id}\n"
                      "  ROOT out = (s32[], s32[], s32[], s32[], s32[]) tuple(a, b, c, d, g)\n"
                      "}\n",
                      &n);
  /* An s32 index outside [0, N) runs the last branch. */
  INTS(o, n, 0, -5);
  INTS(o, n, 1, 10);
  INTS(o, n, 2, 10);
  INTS(o, n, 3, 5);
  INTS(o, n, 4, 5);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_parameters_and_tuple_outputs) {
  tr_diag d = {0};
  int64_t dims[1] = {3};
  tr_tensor *a = tr_tensor_new(TR_DT_F32, 1, dims, &d);
  tr_tensor *b = tr_tensor_new(TR_DT_S32, 0, NULL, &d);
  tr_tensor *c = tr_tensor_new(TR_DT_F32, 1, dims, &d);
  for (int i = 0; i < 3; i++) {
    tr_tensor_set_f(a, (size_t)i, i + 1);
    tr_tensor_set_f(c, (size_t)i, 10 * (i + 1));
  }
  tr_tensor_set_i(b, 0, 4);
  tr_tensor *args[3] = {a, b, c};
  int n;
  tr_tensor **o = run_args("HloModule m\n"
                           "ENTRY e {\n"
                           "  p = (f32[3], s32[]) parameter(0)\n"
                           "  q = f32[3] parameter(1)\n"
                           "  x = f32[3] get-tuple-element(p), index=0\n"
                           "  y = s32[] get-tuple-element(p), index=1\n"
                           "  s = f32[3] add(x, q)\n"
                           "  inner = (s32[], f32[3]) tuple(y, s)\n"
                           "  ROOT out = ((s32[], f32[3]), f32[3]) tuple(inner, x)\n"
                           "}\n",
                           args, 3, &n, __LINE__);
  CHECK_EQ_INT(n, 3);
  INTS(o, n, 0, 4);
  FLTS(o, n, 1, 11, 22, 33);
  FLTS(o, n, 2, 1, 2, 3);
  tr_eval_free_outputs(o, n);
  /* A wrong argument is a usage error, not a crash. */
  tr_module *m = parse_ok("HloModule m\nENTRY e {\n  ROOT p = s32[2] parameter(0)\n}\n", __LINE__);
  if (m) {
    tr_tensor **outs = NULL;
    CHECK(tr_eval(m, args, 1, &outs, &n, &d) == TR_ERR_USAGE);
    CHECK_CONTAINS(tr_diag_first(&d), "argument 0 is f32[3] but the parameter is s32[2]");
    CHECK(outs == NULL && n == 0);
    tr_diag_clear(&d);
    CHECK(tr_eval(m, NULL, 0, &outs, &n, &d) == TR_ERR_USAGE);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
  tr_tensor_free(a);
  tr_tensor_free(b);
  tr_tensor_free(c);
}

/* ---- errors ---- */

TR_TEST(eval_unsupported_is_located) {
  char buf[512];
  const char *msg = run_err("HloModule m\n"
                            "ENTRY e {\n"
                            "  a = f32[2] constant({1, 2})\n"
                            "  ROOT c = f32[2] cosh(a)\n"
                            "}\n",
                            buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:8: error: in %c: unsupported: cosh");
  msg = run_err("HloModule m\n"
                "ENTRY e {\n"
                "  ROOT a = f32[1000] constant({...})\n"
                "}\n",
                buf, sizeof buf);
  CHECK_CONTAINS(msg, "t.hlo:3:");
  CHECK_CONTAINS(msg, "unsupported: elided constant '%a' has no values (use the deterministic fill)");
  msg = run_err("HloModule m\n"
                "ENTRY e {\n"
                "  a = c64[2] constant({(1, 2), (3, 4)})\n"
                "  ROOT b = c64[2] remainder(a, a)\n"
                "}\n",
                buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:8: error: in %b: unsupported: c64 elements in remainder");
  msg = run_err("HloModule m\n"
                "ENTRY e {\n"
                "  a = c64[2] constant({(1, 2), (3, 4)})\n"
                "  ROOT b = pred[2] compare(a, a), direction=LT\n"
                "}\n",
                buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:8: error: in %b: unsupported: compare of c64 values with direction=LT: XLA's evaluator defines only EQ and NE on complex");
  msg = run_err("HloModule m\n"
                "ENTRY e {\n"
                "  a = c64[2] constant({(1, 2), (3, 4)})\n"
                "  ROOT b = f32[2] convert(a)\n"
                "}\n",
                buf, sizeof buf);
  CHECK_CONTAINS(msg, "convert from complex c64[2] to real f32 is not allowed"); /* the verifier */
  msg = run_err("HloModule m\n"
                "ENTRY e {\n"
                "  a = c64[2] constant({(1, 2), (3, 4)})\n"
                "  ROOT b = c64[2] clamp(a, a, a)\n"
                "}\n",
                buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:8: error: in %b: unsupported: c64 elements in clamp");
}

/* An async start whose tuple is read other than by its done is not a
 * plain pair: it stays, and is unsupported at the start. */
TR_TEST(eval_async_start_read_elsewhere_unsupported) {
  char buf[512];
  const char *msg = run_err("HloModule m\n"
                            "ENTRY e {\n"
                            "  p = f32[4] constant({1, 2, 3, 4})\n"
                            "  ags = (f32[4], f32[4]) all-gather-start(p), replica_groups={{0}}, dimensions={0}\n"
                            "  agd = f32[4] all-gather-done(ags)\n"
                            "  g = f32[4] get-tuple-element(ags), index=0\n"
                            "  ROOT t = (f32[4], f32[4]) tuple(agd, g)\n"
                            "}\n",
                            buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:3: error: in %ags: unsupported: all-gather-start");
}

TR_TEST(eval_dead_code_is_not_evaluated) {
  int n;
  /* The unsupported instruction does not feed the root. */
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[2] constant({1, 2})\n"
                      "  dead = f32[2] cosh(a)\n"
                      "  ROOT b = f32[2] add(a, a)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 2, 4);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_while_trip_limit) {
  const char *text = "HloModule m\n"
                     "cond {\n"
                     "  s = s32[] parameter(0)\n"
                     "  ROOT t = pred[] constant(1)\n"
                     "}\n"
                     "body {\n"
                     "  ROOT s = s32[] parameter(0)\n"
                     "}\n"
                     "ENTRY e {\n"
                     "  z = s32[] constant(0)\n"
                     "  ROOT w = s32[] while(z), condition=cond, body=body\n"
                     "}\n";
  tr_module *m = parse_ok(text, __LINE__);
  if (!m) return;
  tr_diag d = {0};
  tr_eval_opts opts = {.max_while_trips = 100};
  tr_tensor **outs;
  int n;
  CHECK(tr_eval_opt(m, &opts, NULL, 0, &outs, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "t.hlo:11:8: error: in %w: unsupported: while loop ran past the limit of 100 trips");
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* The same endless loop under a wall-clock deadline, and both limits in
 * shadow mode: each a located verdict, never a hang. */
static const char *endless_text =
    "HloModule m\n"
    "cond {\n"
    "  s = s32[] parameter(0)\n"
    "  ROOT t = pred[] constant(1)\n"
    "}\n"
    "body {\n"
    "  s = s32[] parameter(0)\n"
    "  one = s32[] constant(0)\n"
    "  ROOT a = s32[] add(s, one)\n"
    "}\n"
    "ENTRY e {\n"
    "  z = s32[] constant(0)\n"
    "  ROOT w = s32[] while(z), condition=cond, body=body\n"
    "}\n";

TR_TEST(eval_while_deadline) {
  tr_module *m = parse_ok(endless_text, __LINE__);
  if (!m) return;
  tr_diag d = {0};
  tr_eval_opts opts = {.max_while_trips = -1, .deadline_s = 0.2};
  tr_tensor **outs;
  int n;
  CHECK(tr_eval_opt(m, &opts, NULL, 0, &outs, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "reference deadline of 0.2 s passed");
  CHECK_CONTAINS(tr_diag_first(&d), "t.hlo:");
  tr_diag_clear(&d);
  tr_module_free(m);
}

TR_TEST(eval_shadow_limits) {
  tr_module *m = parse_ok(endless_text, __LINE__);
  if (!m) return;
  tr_diag d = {0};
  tr_shadow_opts so = {0};
  so.eval.max_while_trips = 100;
  tr_shadow_out *o = NULL;
  int n = 0;
  CHECK(tr_eval_shadow(m, &so, NULL, 0, &o, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "t.hlo:13:8: error: in %w: unsupported: while loop ran past the limit of 100 trips");
  tr_diag_clear(&d);
  so.eval.max_while_trips = -1;
  so.eval.deadline_s = 0.2;
  CHECK(tr_eval_shadow(m, &so, NULL, 0, &o, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "reference deadline of 0.2 s passed");
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* ---- more dtypes ---- */

TR_TEST(eval_divide_sqrt_every_float_type) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a1 = f16[] constant(1)\n"
                      "  a3 = f16[] constant(3)\n"
                      "  a2 = f16[] constant(2)\n"
                      "  ad = f16[] divide(a1, a3)\n"
                      "  as = f16[] sqrt(a2)\n"
                      "  b1 = bf16[] constant(1)\n"
                      "  b3 = bf16[] constant(3)\n"
                      "  b2 = bf16[] constant(2)\n"
                      "  bd = bf16[] divide(b1, b3)\n"
                      "  bs = bf16[] sqrt(b2)\n"
                      "  c1 = f32[] constant(1)\n"
                      "  c3 = f32[] constant(3)\n"
                      "  c2 = f32[] constant(2)\n"
                      "  cd = f32[] divide(c1, c3)\n"
                      "  cs = f32[] sqrt(c2)\n"
                      "  d1 = f64[] constant(1)\n"
                      "  d3 = f64[] constant(3)\n"
                      "  d2 = f64[] constant(2)\n"
                      "  dd = f64[] divide(d1, d3)\n"
                      "  ds = f64[] sqrt(d2)\n"
                      "  e1 = f8e4m3fn[] constant(1)\n"
                      "  e3 = f8e4m3fn[] constant(3)\n"
                      "  e2 = f8e4m3fn[] constant(2)\n"
                      "  ed = f8e4m3fn[] divide(e1, e3)\n"
                      "  es = f8e4m3fn[] sqrt(e2)\n"
                      "  g1 = f8e5m2[] constant(1)\n"
                      "  g3 = f8e5m2[] constant(3)\n"
                      "  g2 = f8e5m2[] constant(2)\n"
                      "  gd = f8e5m2[] divide(g1, g3)\n"
                      "  gs = f8e5m2[] sqrt(g2)\n"
                      "  ROOT out = (f16[], f16[], bf16[], bf16[], f32[], f32[], f64[], f64[], f8e4m3fn[], "
                      "f8e4m3fn[], f8e5m2[], f8e5m2[]) tuple(ad, as, bd, bs, cd, cs, dd, ds, ed, es, gd, gs)\n"
                      "}\n",
                      &n);
  BITS(o, n, 0, 0x3555);
  BITS(o, n, 1, 0x3da8);
  BITS(o, n, 2, 0x3eab); /* 1/3 -> 0.333984375 */
  BITS(o, n, 3, 0x3fb5); /* 1.4140625 */
  BITS(o, n, 4, 0x3eaaaaab);
  BITS(o, n, 5, 0x3fb504f3);
  BITS(o, n, 6, 0x3fd5555555555555ull);
  BITS(o, n, 7, 0x3ff6a09e667f3bcdull);
  BITS(o, n, 8, 0x2b); /* 1.375 * 2^-2 */
  BITS(o, n, 9, 0x3b); /* 1.375 */
  BITS(o, n, 10, 0x35); /* 1.25 * 2^-2 */
  BITS(o, n, 11, 0x3e); /* 1.5 */
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_int_ops_more_widths) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = u16[2] constant({300, 65535})\n"
                      "  am = u16[2] multiply(a, a)\n"
                      "  b = s16[2] constant({-32768, 7})\n"
                      "  c = s16[2] constant({-1, -2})\n"
                      "  bd = s16[2] divide(b, c)\n"
                      "  br = s16[2] remainder(b, c)\n"
                      "  d = u64[2] constant({4294967296, 3})\n"
                      "  dm = u64[2] multiply(d, d)\n"
                      "  e = s64[3] constant({1, 1, -1})\n"
                      "  f = s64[3] constant({64, 63, 64})\n"
                      "  el = s64[3] shift-left(e, f)\n"
                      "  er = s64[3] shift-right-arithmetic(e, f)\n"
                      "  g = u32[2] constant({2147483648, 2147483648})\n"
                      "  h = u32[2] constant({31, 32})\n"
                      "  gr = u32[2] shift-right-arithmetic(g, h)\n"
                      "  gl = u32[2] shift-right-logical(g, h)\n"
                      "  i = u4[2] constant({15, 8})\n"
                      "  j = u4[2] constant({2, 4})\n"
                      "  ir = u4[2] shift-right-logical(i, j)\n"
                      "  im = u4[2] multiply(i, i)\n"
                      "  k = s4[2] constant({-8, 5})\n"
                      "  kk = s4[2] constant({-1, 0})\n"
                      "  kd = s4[2] divide(k, kk)\n"
                      "  kn = s4[2] negate(k)\n"
                      "  ROOT out = (u16[2], s16[2], s16[2], u64[2], s64[3], s64[3], u32[2], u32[2], u4[2], u4[2], s4[2], s4[2]) "
                      "tuple(am, bd, br, dm, el, er, gr, gl, ir, im, kd, kn)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 24464, 1); /* 90000 mod 2^16; (2^16-1)^2 mod 2^16 = 1 */
  INTS(o, n, 1, -32768, -3);
  INTS(o, n, 2, 0, 1);
  BITS(o, n, 3, 0, 9);
  INTS(o, n, 4, 0, INT64_MIN, 0);
  INTS(o, n, 5, 0, 0, -1);
  INTS(o, n, 6, 4294967295, 4294967295);
  INTS(o, n, 7, 1, 0);
  INTS(o, n, 8, 3, 0);
  INTS(o, n, 9, 1, 0);
  INTS(o, n, 10, -8, -1); /* INT_MIN/-1 = INT_MIN at 4 bits; x/0 = -1 */
  INTS(o, n, 11, -8, -5);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_reduce_mixed_precision_and_pred) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "fsum {\n"
                      "  x = f32[] parameter(0)\n"
                      "  y = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(x, y)\n"
                      "}\n"
                      "all {\n"
                      "  x = pred[] parameter(0)\n"
                      "  y = pred[] parameter(1)\n"
                      "  ROOT a = pred[] and(x, y)\n"
                      "}\n"
                      "s4sum {\n"
                      "  x = s4[] parameter(0)\n"
                      "  y = s4[] parameter(1)\n"
                      "  ROOT a = s4[] add(x, y)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  b = bf16[3] constant({256, 1, 1})\n"
                      "  z = f32[] constant(0)\n"
                      "  r = f32[] reduce(b, z), dimensions={0}, to_apply=fsum\n"
                      "  p = pred[2,2] constant({{1, 0}, {1, 1}})\n"
                      "  t = pred[] constant(1)\n"
                      "  pr = pred[2] reduce(p, t), dimensions={1}, to_apply=all\n"
                      "  q = s4[3] constant({7, 7, 7})\n"
                      "  qz = s4[] constant(0)\n"
                      "  qr = s4[] reduce(q, qz), dimensions={0}, to_apply=s4sum\n"
                      "  ROOT out = (f32[], pred[2], s4[]) tuple(r, pr, qr)\n"
                      "}\n",
                      &n);
  /* bf16 inputs go to the f32 reducer exactly: 258. */
  FLTS(o, n, 0, 258);
  INTS(o, n, 1, 0, 1);
  INTS(o, n, 2, 5); /* 21 mod 16 */
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_convert_from_narrow_floats) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f8e4m3fn[4] constant({448, -nan, 0.001953125, -1.5})\n"
                      "  af = f32[4] convert(a)\n"
                      "  ai = s8[4] convert(a)\n"
                      "  b = f8e5m2[3] constant({inf, -57344, 1.5})\n"
                      "  bh = f16[3] convert(b)\n"
                      "  bi = s32[3] convert(b)\n"
                      "  c = bf16[2] constant({1.5, -2.5})\n"
                      "  ce = f8e5m2[2] convert(c)\n"
                      "  ROOT out = (f32[4], s8[4], f16[3], s32[3], f8e5m2[2]) tuple(af, ai, bh, bi, ce)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 448, NAN, 0.001953125, -1.5);
  BITS(o, n, 0, 0x43e00000, 0xfff00000, 0x3b000000, 0xbfc00000); /* NaN payload moves up */
  INTS(o, n, 1, 127, 0, 0, -1);
  BITS(o, n, 2, 0x7c00, 0xfb00, 0x3e00);
  INTS(o, n, 3, INT32_MAX, -57344, 1);
  BITS(o, n, 4, 0x3e, 0xc1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_reduce_precision) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[5] constant({1.00390625, 1.01171875, 3.4e38, nan(0x1234), -nan})\n"
                      "  b = f32[5] reduce-precision(a), exponent_bits=8, mantissa_bits=7\n"
                      "  c = f32[5] reduce-precision(a), exponent_bits=8, mantissa_bits=0\n"
                      "  d = f32[5] constant({65520, 1e-05, 6.1035156e-05, 3.0517578e-05, -70000})\n"
                      "  h = f32[5] reduce-precision(d), exponent_bits=5, mantissa_bits=10\n"
                      "  g = bf16[2] constant({1.5, 3.0})\n"
                      "  gr = bf16[2] reduce-precision(g), exponent_bits=8, mantissa_bits=0\n"
                      "  ROOT out = (f32[5], f32[5], f32[5], bf16[2]) tuple(b, c, h, gr)\n"
                      "}\n",
                      &n);
  /* Like a bf16 round trip, but NaN payloads stay. */
  BITS(o, n, 0, 0x3f800000, 0x3f820000, 0x7f800000, 0x7f801234, 0xffc00000);
  /* mantissa_bits=0: 1.0039 -> 1, 1.0117 -> 1, NaN -> +inf (E). */
  BITS(o, n, 1, 0x3f800000, 0x3f800000, 0x7f800000, 0x7f800000, 0x7f800000);
  /* f16-like: overflow -> inf, below the normal range -> 0 (no subnormals),
   * 2^-14 stays, 2^-15 -> 0. */
  FLTS(o, n, 2, INFINITY, 0, 6.103515625e-05, 0, -INFINITY);
  /* No mantissa bits: ties go to the even exponent, 1.5 -> 2, 3 -> 2. */
  FLTS(o, n, 3, 2, 2);
  tr_eval_free_outputs(o, n);
}

/* ---- self-describing modules in tests/eval ----
 * Each file's header comments name what its evaluation must give:
 *   // EXPECT <shape> <literal>   one per output, in order, compared by bits
 *   // ERROR <text>               evaluation must fail with a message
 *                                 containing text
 * The literal is HLO constant syntax (scalar: 0.5; array: {1, 2}). */

/* The tensor an "EXPECT shape literal" line describes, or NULL. */
static tr_tensor *expected_tensor(const char *line, const char *path) {
  const char *sp = strchr(line, ' ');
  if (!sp) return NULL;
  tr_buf text = {0};
  tr_buf_printf(&text, "HloModule x\nENTRY e {\n  ROOT c = %.*s constant(%s)\n}\n",
                (int)(sp - line), line, sp + 1);
  tr_diag d = {0};
  tr_module *m = tr_parse(path, tr_buf_str(&text), text.n, NULL, &d);
  tr_tensor *t = NULL;
  if (m && m->entry && m->entry->root && m->entry->root->literal &&
      m->entry->root->literal->data) {
    const tr_literal *lit = m->entry->root->literal;
    t = tr_tensor_new(lit->shape->dtype, lit->shape->rank, lit->shape->dims, &d);
    if (t) memcpy(t->data, lit->data, t->nbytes);
  }
  if (!t) fprintf(stderr, "  %s: bad EXPECT line '%s': %s\n", path, line,
                  tr_diag_first(&d) ? tr_diag_first(&d) : "");
  if (m) tr_module_free(m);
  tr_diag_clear(&d);
  tr_buf_free(&text);
  return t;
}

static void check_eval_file(const char *path) {
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(path, &text, &len, &d) != TR_OK) {
    fprintf(stderr, "  %s\n", tr_diag_first(&d));
    tr_test_failed++;
    tr_diag_clear(&d);
    return;
  }
  tr_tensor *want[64];
  int nwant = 0;
  char *err = NULL;
  for (char *p = text; *p == '/' && p[1] == '/';) {
    char *eol = strchr(p, '\n');
    if (!eol) break;
    *eol = 0;
    const char *q = p + 2;
    while (*q == ' ') q++;
    if (strncmp(q, "EXPECT ", 7) == 0 && nwant < 64) {
      want[nwant] = expected_tensor(q + 7, path);
      if (!want[nwant]) tr_test_failed++;
      nwant++;
    } else if (strncmp(q, "ERROR ", 6) == 0) {
      err = tr_xstrdup(q + 6);
    }
    *eol = '\n';
    p = eol + 1;
  }
  if (!nwant && !err) {
    fprintf(stderr, "  %s: no EXPECT or ERROR line\n", path);
    tr_test_failed++;
  }
  tr_parse_opts opts = {.fill_elided = false};
  tr_module *m = tr_parse(path, text, len, &opts, &d);
  tr_tensor **outs = NULL;
  int n = 0;
  tr_status st = m ? tr_eval(m, NULL, 0, &outs, &n, &d) : TR_ERR_SYNTAX;
  if (err) {
    if (st == TR_OK || !tr_diag_first(&d) || !strstr(tr_diag_first(&d), err)) {
      fprintf(stderr, "  %s: expected an error containing '%s', got: %s\n", path, err,
              st == TR_OK ? "success" : tr_diag_first(&d));
      tr_test_failed++;
    }
  } else if (st != TR_OK) {
    fprintf(stderr, "  %s: evaluation failed: %s\n", path, tr_diag_first(&d));
    tr_test_failed++;
  } else if (n != nwant) {
    fprintf(stderr, "  %s: %d outputs, %d EXPECT lines\n", path, n, nwant);
    tr_test_failed++;
  } else {
    for (int i = 0; i < n; i++) {
      if (want[i] && !tr_tensor_equal_bits(outs[i], want[i])) {
        tr_buf b = {0};
        tr_tensor_print_type(&b, outs[i]);
        fprintf(stderr, "  %s: output %d (%s) differs from its EXPECT line; elements:", path, i,
                tr_buf_str(&b));
        /* Raw bytes, most significant first: complex elements too. */
        size_t es = (size_t)tr_dtype_size(outs[i]->dtype);
        const unsigned char *raw = (const unsigned char *)outs[i]->data;
        for (size_t k = 0; k < tr_tensor_count(outs[i]) && k < 16; k++) {
          fprintf(stderr, " 0x");
          for (size_t j = es; j-- > 0;) fprintf(stderr, "%02x", raw[k * es + j]);
        }
        fprintf(stderr, "\n");
        tr_buf_free(&b);
        tr_test_failed++;
      }
    }
  }
  tr_eval_free_outputs(outs, n);
  for (int i = 0; i < nwant; i++) tr_tensor_free(want[i]);
  free(err);
  if (m) tr_module_free(m);
  tr_diag_clear(&d);
  free(text);
}

/* Checks every .hlo file of tests/SUB; returns how many. */
static int eval_dir(const char *sub) {
  tr_buf dir = {0};
  tr_buf_printf(&dir, "%s/%s", tr_test_dir, sub);
  DIR *dp = opendir(tr_buf_str(&dir));
  if (!dp) {
    fprintf(stderr, "  cannot open folder %s\n", tr_buf_str(&dir));
    tr_test_failed++;
    tr_buf_free(&dir);
    return 0;
  }
  int nfiles = 0;
  struct dirent *e;
  while ((e = readdir(dp)) != NULL) {
    size_t len = strlen(e->d_name);
    if (e->d_name[0] == '.' || len < 4 || strcmp(e->d_name + len - 4, ".hlo") != 0) continue;
    tr_buf p = {0};
    tr_buf_printf(&p, "%s/%s", tr_buf_str(&dir), e->d_name);
    check_eval_file(tr_buf_str(&p));
    tr_buf_free(&p);
    nfiles++;
  }
  closedir(dp);
  tr_buf_free(&dir);
  return nfiles;
}

TR_TEST(eval_files) { CHECK(eval_dir("eval") > 0); }

/* Modules on the non-core dtypes (complex, the narrow float formats):
 * kept out of tests/eval because the builtin compiler's corpus test runs
 * that folder and the builtin compiler declines these types. */
TR_TEST(eval_dtype_files) { CHECK(eval_dir("eval/dtypes") > 0); }

/* ---- gather, scatter ---- */

TR_TEST(eval_gather_clamps_slices) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  emb = f32[4,2] constant({{0, 1}, {10, 11}, {20, 21}, {30, 31}})\n"
                      "  ids = s32[4] constant({2, 0, 5, -1})\n"
                      "  g = f32[4,2] gather(emb, ids), offset_dims={1}, collapsed_slice_dims={0}, "
                      "start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}\n"
                      "  i = s32[3,3] iota(), iota_dimension=0\n"
                      "  j = s32[3,3] iota(), iota_dimension=1\n"
                      "  ten = s32[3,3] broadcast(s32[] constant(10)), dimensions={}\n"
                      "  i10 = s32[3,3] multiply(i, ten)\n"
                      "  v = s32[3,3] add(i10, j)\n"
                      "  st = s32[2,2] constant({{0, 1}, {2, 2}})\n"
                      "  g2 = s32[2,2,2] gather(v, st), offset_dims={1,2}, collapsed_slice_dims={}, "
                      "start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2}\n"
                      "  b = s32[2,3] constant({{0, 1, 2}, {10, 11, 12}})\n"
                      "  bi = s32[2,1] constant({{2}, {0}})\n"
                      "  g3 = s32[2] gather(b, bi), offset_dims={}, collapsed_slice_dims={1}, "
                      "start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, "
                      "index_vector_dim=1, slice_sizes={1,1}\n"
                      "  ROOT out = (f32[4,2], s32[2,2,2], s32[2]) tuple(g, g2, g3)\n"
                      "}\n",
                      &n);
  /* 5 and -1 clamp to the last and first rows. */
  FLTS(o, n, 0, 20, 21, 0, 1, 30, 31, 0, 1);
  /* Start (2,2) clamps to (1,1) so the 2x2 slice fits. */
  INTS(o, n, 1, 1, 2, 11, 12, 11, 12, 21, 22);
  INTS(o, n, 2, 2, 10);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_scatter_order_and_bounds) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "add {\n"
                      "  a = s32[] parameter(0)\n"
                      "  b = s32[] parameter(1)\n"
                      "  ROOT s = s32[] add(a, b)\n"
                      "}\n"
                      "shift_in {\n"
                      "  a = s32[] parameter(0)\n"
                      "  b = s32[] parameter(1)\n"
                      "  ten = s32[] constant(10)\n"
                      "  a10 = s32[] multiply(a, ten)\n"
                      "  ROOT s = s32[] add(a10, b)\n"
                      "}\n"
                      "set {\n"
                      "  a = s32[] parameter(0)\n"
                      "  ROOT b = s32[] parameter(1)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  z = s32[4] constant({0, 0, 0, 0})\n"
                      "  ix = s32[5,1] constant({{1}, {3}, {1}, {4}, {-1}})\n"
                      "  up = s32[5] constant({5, 6, 7, 8, 9})\n"
                      "  sa = s32[4] scatter(z, ix, up), update_window_dims={}, inserted_window_dims={0}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
                      "  so = s32[4] scatter(z, ix, up), update_window_dims={}, inserted_window_dims={0}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=shift_in\n"
                      "  wi = s32[2,1] constant({{2}, {3}})\n"
                      "  wu = s32[2,2] constant({{1, 2}, {3, 4}})\n"
                      "  sw = s32[4] scatter(z, wi, wu), update_window_dims={1}, inserted_window_dims={}, "
                      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set\n"
                      "  ROOT out = (s32[4], s32[4], s32[4]) tuple(sa, so, sw)\n"
                      "}\n",
                      &n);
  /* Duplicates combine in update order; indices 4 and -1 are skipped. */
  INTS(o, n, 0, 0, 12, 0, 6);
  INTS(o, n, 1, 0, 57, 0, 6); /* (0*10 + 5)*10 + 7 */
  /* The window at 3 would leave the operand: it is skipped whole. */
  INTS(o, n, 2, 0, 0, 1, 2);
  tr_eval_free_outputs(o, n);
}

/* ---- sort ---- */

TR_TEST(eval_sort_stable_and_totalorder) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "lt_total {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
                      "}\n"
                      "gt_keys {\n"
                      "  k0 = s32[] parameter(0)\n"
                      "  k1 = s32[] parameter(1)\n"
                      "  v0 = s32[] parameter(2)\n"
                      "  v1 = s32[] parameter(3)\n"
                      "  ROOT r = pred[] compare(k0, k1), direction=GT\n"
                      "}\n"
                      "lt_abs {\n"
                      "  a = s32[] parameter(0)\n"
                      "  b = s32[] parameter(1)\n"
                      "  aa = s32[] abs(a)\n"
                      "  ab = s32[] abs(b)\n"
                      "  ROOT r = pred[] compare(aa, ab), direction=LT\n"
                      "}\n"
                      "gt_swapped {\n"
                      "  a = s32[] parameter(0)\n"
                      "  b = s32[] parameter(1)\n"
                      "  ROOT r = pred[] compare(b, a), direction=LT\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  x = f32[7] constant({3, -1, nan, 2, 0, -0, -inf})\n"
                      "  sx = f32[7] sort(x), dimensions={0}, to_apply=lt_total\n"
                      "  k = s32[4] constant({1, 2, 1, 2})\n"
                      "  v = s32[4] iota(), iota_dimension=0\n"
                      "  kv = (s32[4], s32[4]) sort(k, v), dimensions={0}, to_apply=gt_keys\n"
                      "  sk = s32[4] get-tuple-element(kv), index=0\n"
                      "  sv = s32[4] get-tuple-element(kv), index=1\n"
                      "  a = s32[4] constant({-3, 1, -2, 2})\n"
                      "  sa = s32[4] sort(a), dimensions={0}, to_apply=lt_abs\n"
                      "  m = s32[2,3] constant({{3, 1, 2}, {0, 5, 1}})\n"
                      "  r0 = s32[2,3] sort(m), dimensions={0}, to_apply=gt_swapped\n"
                      "  r1 = s32[2,3] sort(m), dimensions={1}, to_apply=gt_swapped\n"
                      "  ROOT out = (f32[7], s32[4], s32[4], s32[4], s32[2,3], s32[2,3]) tuple(sx, sk, sv, sa, r0, r1)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, -INFINITY, -1, -0.0, 0, 2, 3, NAN);
  INTS(o, n, 1, 2, 2, 1, 1);
  INTS(o, n, 2, 1, 3, 0, 2); /* stable: equal keys keep their order */
  INTS(o, n, 3, 1, -2, 2, -3);
  INTS(o, n, 4, 3, 5, 2, 0, 1, 1);
  INTS(o, n, 5, 3, 2, 1, 5, 1, 0);
  tr_eval_free_outputs(o, n);
}

/* ---- reduce-window, select-and-scatter ---- */

TR_TEST(eval_reduce_window_padding_and_dilation) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "add {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n"
                      "}\n"
                      "max {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] maximum(a, b)\n"
                      "}\n"
                      "add8 {\n"
                      "  a = s8[] parameter(0)\n"
                      "  b = s8[] parameter(1)\n"
                      "  ROOT s = s8[] add(a, b)\n"
                      "}\n"
                      "argmax {\n"
                      "  v0 = f32[] parameter(0)\n"
                      "  i0 = s32[] parameter(1)\n"
                      "  v1 = f32[] parameter(2)\n"
                      "  i1 = s32[] parameter(3)\n"
                      "  gt = pred[] compare(v1, v0), direction=GT\n"
                      "  v = f32[] select(gt, v1, v0)\n"
                      "  i = s32[] select(gt, i1, i0)\n"
                      "  ROOT t = (f32[], s32[]) tuple(v, i)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  x = f32[5] constant({1, 2, 3, 4, 5})\n"
                      "  z = f32[] constant(0)\n"
                      "  a = f32[4] reduce-window(x, z), window={size=2}, to_apply=add\n"
                      "  b = f32[6] reduce-window(x, z), window={size=2 pad=1_1}, to_apply=add\n"
                      "  y = f32[3] constant({1, 2, 3})\n"
                      "  c = f32[4] reduce-window(y, z), window={size=2 lhs_dilate=2}, to_apply=add\n"
                      "  d = f32[3] reduce-window(x, z), window={size=2 rhs_dilate=2}, to_apply=add\n"
                      "  p = f32[2,4] constant({{1, 5, 2, 0}, {3, 4, 8, 7}})\n"
                      "  ninf = f32[] constant(-inf)\n"
                      "  mp = f32[1,2] reduce-window(p, ninf), window={size=2x2 stride=2x2}, to_apply=max\n"
                      "  ten = f32[] constant(10)\n"
                      "  w = f32[2] constant({1, 2})\n"
                      "  f = f32[2] reduce-window(w, ten), window={size=3 pad=1_1}, to_apply=add\n"
                      "  q = s8[2] constant({100, 100})\n"
                      "  q0 = s8[] constant(0)\n"
                      "  g = s8[1] reduce-window(q, q0), window={size=2}, to_apply=add8\n"
                      "  iv = s32[5] iota(), iota_dimension=0\n"
                      "  i0 = s32[] constant(-1)\n"
                      "  am = (f32[2], s32[2]) reduce-window(x, iv, ninf, i0), window={size=3 stride=2}, to_apply=argmax\n"
                      "  amv = f32[2] get-tuple-element(am), index=0\n"
                      "  ami = s32[2] get-tuple-element(am), index=1\n"
                      "  ROOT out = (f32[4], f32[6], f32[4], f32[3], f32[1,2], f32[2], s8[1], f32[2], s32[2]) "
                      "tuple(a, b, c, d, mp, f, g, amv, ami)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 3, 5, 7, 9);
  FLTS(o, n, 1, 1, 3, 5, 7, 9, 5);
  FLTS(o, n, 2, 1, 2, 2, 3); /* base dilation: holes are skipped */
  FLTS(o, n, 3, 4, 6, 8);
  FLTS(o, n, 4, 5, 8);
  FLTS(o, n, 5, 13, 13); /* padding never adds the init again */
  INTS(o, n, 6, -56);
  FLTS(o, n, 7, 3, 5);
  INTS(o, n, 8, 2, 4);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_select_and_scatter) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ge {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT r = pred[] compare(a, b), direction=GE\n"
                      "}\n"
                      "add {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n"
                      "}\n"
                      "sub {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] subtract(a, b)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  x = f32[4] constant({1, 3, 3, 2})\n"
                      "  s = f32[2] constant({10, 20})\n"
                      "  z = f32[] constant(0)\n"
                      "  a = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add\n"
                      "  y = f32[4] constant({5, 5, 1, 1})\n"
                      "  b = f32[4] select-and-scatter(y, s, z), window={size=2 stride=2}, select=ge, scatter=add\n"
                      "  v = f32[3] constant({1, 3, 2})\n"
                      "  one = f32[2] constant({1, 1})\n"
                      "  c = f32[3] select-and-scatter(v, one, z), window={size=2}, select=ge, scatter=sub\n"
                      "  ROOT out = (f32[4], f32[4], f32[3]) tuple(a, b, c)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 0, 10, 20, 0);
  FLTS(o, n, 1, 10, 0, 20, 0); /* GE keeps the first of equal maxima */
  /* E calls scatter(source, current): 1 - 0 = 1, then 1 - 1 = 0. */
  FLTS(o, n, 2, 0, 0, 0);
  tr_eval_free_outputs(o, n);
}

/* ---- convolution ---- */

TR_TEST(eval_convolution_windows_and_groups) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = f32[1,4,1] constant({{{1}, {2}, {3}, {4}}})\n"
                      "  k = f32[2,1,1] constant({{{1}}, {{10}}})\n"
                      "  a = f32[1,3,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f\n"
                      "  b = f32[1,2,1] convolution(x, k), window={size=2 stride=2 pad=1_0}, dim_labels=b0f_0io->b0f\n"
                      "  c = f32[1,3,1] convolution(x, k), window={size=2 rhs_reversal=1}, dim_labels=b0f_0io->b0f\n"
                      "  d = f32[1,6,1] convolution(x, k), window={size=2 lhs_dilate=2}, dim_labels=b0f_0io->b0f\n"
                      "  f = f32[1,2,1] convolution(x, k), window={size=2 rhs_dilate=2}, dim_labels=b0f_0io->b0f\n"
                      "  y = f32[1,1,2] constant({{{1, 2}}})\n"
                      "  ky = f32[1,2,3] constant({{{1, 2, 3}, {4, 5, 6}}})\n"
                      "  g = f32[1,1,3] convolution(y, ky), window={size=1}, dim_labels=b0f_0io->b0f\n"
                      "  kg = f32[1,1,2] constant({{{3, 5}}})\n"
                      "  h = f32[1,1,2] convolution(y, kg), window={size=1}, dim_labels=b0f_0io->b0f, feature_group_count=2\n"
                      "  z = f32[2,1,1] constant({{{1}}, {{2}}})\n"
                      "  i = f32[1,1,2] convolution(z, kg), window={size=1}, dim_labels=b0f_0io->b0f, batch_group_count=2\n"
                      "  xt = f32[1,1,4] constant({{{1, 2, 3, 4}}})\n"
                      "  kt = f32[1,1,2] constant({{{1, 10}}})\n"
                      "  j = f32[1,1,3] convolution(xt, kt), window={size=2}, dim_labels=bf0_oi0->bf0\n"
                      "  ROOT out = (f32[1,3,1], f32[1,2,1], f32[1,3,1], f32[1,6,1], f32[1,2,1], f32[1,1,3], f32[1,1,2], "
                      "f32[1,1,2], f32[1,1,3]) tuple(a, b, c, d, f, g, h, i, j)\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 21, 32, 43);
  FLTS(o, n, 1, 10, 32);        /* the padded position is skipped */
  FLTS(o, n, 2, 12, 23, 34);    /* reversed kernel */
  FLTS(o, n, 3, 1, 20, 2, 30, 3, 40); /* base-dilation holes are skipped */
  FLTS(o, n, 4, 31, 42);
  FLTS(o, n, 5, 9, 12, 15);
  FLTS(o, n, 6, 3, 10);         /* group f reads input feature f */
  FLTS(o, n, 7, 3, 10);         /* batch group f reads batch f */
  FLTS(o, n, 8, 21, 32, 43);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_convolution_ints_saturate) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = s8[1,2,1] constant({{{100}, {100}}})\n"
                      "  k = s8[2,1,1] constant({{{1}}, {{1}}})\n"
                      "  a = s8[1,1,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f\n"
                      "  b = s32[1,1,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f\n"
                      "  m = s8[2,1,1] constant({{{-1}}, {{1}}})\n"
                      "  c = s8[1,1,1] convolution(x, m), window={size=2}, dim_labels=b0f_0io->b0f\n"
                      "  ROOT out = (s8[1,1,1], s32[1,1,1], s8[1,1,1]) tuple(a, b, c)\n"
                      "}\n",
                      &n);
  INTS(o, n, 0, 127); /* E saturates integer convolutions (CPU wraps to -56) */
  INTS(o, n, 1, 200);
  INTS(o, n, 2, 0);
  tr_eval_free_outputs(o, n);
}

/* ---- collectives (one participant) ---- */

TR_TEST(eval_collectives_single_replica) {
  int n;
  tr_tensor **o = RUN("HloModule m, replica_count=1\n"
                      "add {\n"
                      "  a = f32[] parameter(0)\n"
                      "  b = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(a, b)\n"
                      "}\n"
                      "ENTRY e {\n"
                      "  v = f32[2] constant({1, 2})\n"
                      "  w = f32[1] constant({7})\n"
                      "  ar = f32[2] all-reduce(v), replica_groups={}, to_apply=add\n"
                      "  ar2 = (f32[2], f32[1]) all-reduce(v, w), replica_groups={{0}}, to_apply=add\n"
                      "  ag = f32[2] all-gather(v), replica_groups={{0}}, dimensions={0}\n"
                      "  cp = f32[2] collective-permute(v), source_target_pairs={{0,0}}\n"
                      "  cz = f32[2] collective-permute(v), source_target_pairs={{0,1}}\n"
                      "  rid = u32[] replica-id()\n"
                      "  ROOT out = (f32[2], (f32[2], f32[1]), f32[2], f32[2], f32[2], u32[]) tuple(ar, ar2, ag, cp, cz, rid)\n"
                      "}\n",
                      &n);
  CHECK_EQ_INT(n, 7);
  FLTS(o, n, 0, 1, 2);
  FLTS(o, n, 1, 1, 2);
  FLTS(o, n, 2, 7);
  FLTS(o, n, 3, 1, 2);
  FLTS(o, n, 4, 1, 2);
  FLTS(o, n, 5, 0, 0); /* nothing sends to replica 0 */
  INTS(o, n, 6, 0);
  tr_eval_free_outputs(o, n);
  char buf[512];
  const char *msg = run_err("HloModule m, replica_count=2\n"
                            "add {\n"
                            "  a = f32[] parameter(0)\n"
                            "  b = f32[] parameter(1)\n"
                            "  ROOT s = f32[] add(a, b)\n"
                            "}\n"
                            "ENTRY e {\n"
                            "  v = f32[2] constant({1, 2})\n"
                            "  ROOT ar = f32[2] all-reduce(v), replica_groups={}, to_apply=add\n"
                            "}\n",
                            buf, sizeof buf);
  CHECK_CONTAINS(msg, "unsupported: all-reduce with replica_count=2 (one participant is modelled)");
}

TR_TEST(eval_topk_total_order_stable) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = f32[2,4] constant({{1, nan, 3, 3}, {-0, 0, -inf, 2}})\n"
                      "  t = (f32[2,2], s32[2,2]) topk(x), k=2, largest=true\n"
                      "  y = s32[5] constant({5, -1, 5, -1, 0})\n"
                      "  b = (s32[3], s32[3]) topk(y), k=3, largest=false\n"
                      "  ROOT out = ((f32[2,2], s32[2,2]), (s32[3], s32[3])) tuple(t, b)\n"
                      "}\n",
                      &n);
  /* NaN is the largest (TOTALORDER); ties keep the lower index; +0 > -0. */
  FLTS(o, n, 0, NAN, 3, 2, 0);
  INTS(o, n, 1, 1, 2, 3, 1);
  INTS(o, n, 2, -1, -1, 0);
  INTS(o, n, 3, 1, 3, 4);
  tr_eval_free_outputs(o, n);
}

/* Coverage never shrinks silently: every op of the core set (flag K in
 * ops.def) is evaluated, except the ones listed here as not done yet
 * (none now). */
TR_TEST(eval_core_op_coverage) {
  static const tr_op todo[] = {TR_OP_COUNT}; /* none left; TR_OP_COUNT ends the list */
  for (int op = 0; op < TR_OP_COUNT; op++) {
    bool listed = false;
    for (int i = 0; todo[i] != TR_OP_COUNT; i++) listed |= todo[i] == (tr_op)op;
    bool core = (tr_ops[op].flags & TR_OPF_K) != 0;
    if (core && !listed && !tr_eval_supports((tr_op)op)) {
      fprintf(stderr, "  core op %s is not evaluated\n", tr_ops[op].name);
      tr_test_failed++;
    }
    if (listed && tr_eval_supports((tr_op)op)) {
      fprintf(stderr, "  %s is evaluated now: take it off the todo list\n", tr_ops[op].name);
      tr_test_failed++;
    }
  }
}

/* Errors inside called computations stop the run cleanly (no leaks under
 * ASan) and point at the inner instruction. */
TR_TEST(eval_errors_in_called_computations) {
  static const char *uses[] = {
      "  r = f32[] reduce(v, z), dimensions={0}, to_apply=bad2\n",
      "  r = f32[4] map(v, v), dimensions={0}, to_apply=bad2\n",
      "  r = f32[4] sort(v), dimensions={0}, to_apply=badp\n",
      "  r = f32[2] reduce-window(v, z), window={size=2 stride=2}, to_apply=bad2\n",
      "  r = f32[4] select-and-scatter(v, s, z), window={size=2 stride=2}, select=badp, scatter=bad2\n",
      ("  r = f32[4] scatter(v, i, s), update_window_dims={}, inserted_window_dims={0}, "
       "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=bad2\n"),
      "  r = f32[] call(z), to_apply=bad1\n",
      "  r = f32[] conditional(t, z, z), true_computation=bad1, false_computation=bad1\n",
      "  r = f32[] while(z), condition=badc, body=bad1\n",
  };
  for (int u = 0; u < TR_NELEMS(uses); u++) {
    tr_buf text = {0};
    tr_buf_printf(&text,
                  "HloModule m\n"
                  "bad2 {\n"
                  "  a = f32[] parameter(0)\n"
                  "  b = f32[] parameter(1)\n"
                  "  c = f32[] cosh(a)\n"
                  "  ROOT d = f32[] add(c, b)\n"
                  "}\n"
                  "badp {\n"
                  "  a = f32[] parameter(0)\n"
                  "  b = f32[] parameter(1)\n"
                  "  c = f32[] cosh(a)\n"
                  "  ROOT d = pred[] compare(c, b), direction=LT\n"
                  "}\n"
                  "bad1 {\n"
                  "  a = f32[] parameter(0)\n"
                  "  ROOT c = f32[] cosh(a)\n"
                  "}\n"
                  "badc {\n"
                  "  a = f32[] parameter(0)\n"
                  "  c = f32[] cosh(a)\n"
                  "  ROOT d = pred[] compare(c, a), direction=LT\n"
                  "}\n"
                  "ENTRY e {\n"
                  "  v = f32[4] constant({1, 2, 3, 4})\n"
                  "  s = f32[2] constant({1, 2})\n"
                  "  i = s32[2,1] constant({{0}, {1}})\n"
                  "  z = f32[] constant(0)\n"
                  "  t = pred[] constant(1)\n"
                  "%s"
                  "  ROOT o = tuple(r)\n"
                  "}\n",
                  uses[u]);
    char buf[512];
    const char *msg = run_err(tr_buf_str(&text), buf, sizeof buf);
    /* The first cosh of every helper computation is on its line 5, 11,
     * 16 or 20. */
    if (!strstr(msg, "unsupported: cosh") ||
        !(strstr(msg, "t.hlo:5:") || strstr(msg, "t.hlo:11:") || strstr(msg, "t.hlo:16:") ||
          strstr(msg, "t.hlo:20:"))) {
      fprintf(stderr, "  use %d: %s\n", u, msg);
      tr_test_failed++;
    }
    tr_buf_free(&text);
  }
}

/* ---- rng-bit-generator ---- */

TR_TEST(eval_rng_bit_generator_known_answers) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  z3 = u64[3] constant({0, 0, 0})\n"
                      "  p = (u64[3], u32[4]) rng-bit-generator(z3), algorithm=rng_philox\n"
                      "  z2 = u64[2] constant({0, 0})\n"
                      "  t = (u64[2], u32[2]) rng-bit-generator(z2), algorithm=rng_three_fry\n"
                      "  d = (u64[2], u8[4]) rng-bit-generator(z2), algorithm=rng_default\n"
                      "  ROOT out = ((u64[3], u32[4]), (u64[2], u32[2]), (u64[2], u8[4])) tuple(p, t, d)\n"
                      "}\n",
                      &n);
  /* Random123's known answers: Philox4x32-10 and ThreeFry2x32-20 with
   * counter 0 and key 0. The counter advances by one block. */
  BITS(o, n, 0, 0, 1, 0);
  BITS(o, n, 1, 0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8);
  BITS(o, n, 2, 0, 1);
  BITS(o, n, 3, 0x6b200159, 0x99ba4efe);
  /* rng_default is Philox on CPU; u8 keeps the low byte of each word. */
  BITS(o, n, 4, 0, 1);
  BITS(o, n, 5, 0xd5, 0x8d, 0x4c, 0xd8);
  tr_eval_free_outputs(o, n);
}

/* Appends tmpl with every '@' replaced by t. */
static void subst(tr_buf *b, const char *tmpl, const char *t) {
  for (const char *p = tmpl; *p; p++) {
    if (*p == '@') tr_buf_puts(b, t);
    else tr_buf_putc(b, *p);
  }
}

/* Every core numeric dtype through the data-movement and simple
 * elementwise ops, on small integers every type holds exactly. */
TR_TEST(eval_every_dtype_sweep) {
  static const char *types[] = {"s4", "s8", "s16", "s32", "s64", "u4", "u8", "u16", "u32",
                                "u64", "f16", "bf16", "f32", "f64", "f8e4m3fn", "f8e5m2"};
  for (int ti = 0; ti < TR_NELEMS(types); ti++) {
    const char *t = types[ti];
    tr_buf text = {0};
    subst(&text,
                  "HloModule m\n"
                  "add {\n"
                  "  a = @[] parameter(0)\n"
                  "  b = @[] parameter(1)\n"
                  "  ROOT c = @[] add(a, b)\n"
                  "}\n"
                  "ENTRY e {\n"
                  "  x = @[4] constant({1, 2, 3, 0})\n"
                  "  y = @[4] constant({3, 2, 1, 1})\n"
                  "  z = @[] constant(0)\n"
                  "  rv = @[4] reverse(x), dimensions={0}\n"
                  "  sl = @[2] slice(x), slice={[1:4:2]}\n"
                  "  cc = @[6] concatenate(x, sl), dimensions={0}\n"
                  "  pd = @[6] pad(x, z), padding=1_-2_1\n"
                  "  bc = @[2,4] broadcast(x), dimensions={1}\n"
                  "  tr = @[4,2] transpose(bc), dimensions={1,0}\n"
                  "  rs = @[8] reshape(tr)\n"
                  "  p = pred[4] compare(x, y), direction=LT\n"
                  "  se = @[4] select(p, x, y)\n"
                  "  mx = @[4] maximum(x, y)\n"
                  "  mn = @[4] minimum(x, y)\n"
                  "  ad = @[4] add(x, y)\n"
                  "  ml = @[4] multiply(x, y)\n"
                  "  cv = s32[4] convert(ml)\n"
                  "  io = @[4] iota(), iota_dimension=0\n"
                  "  rd = @[] reduce(x, z), dimensions={0}, to_apply=add\n"
                  "  one = s32[] constant(1)\n"
                  "  ds = @[2] dynamic-slice(x, one), dynamic_slice_sizes={2}\n"
                  "  du = @[4] dynamic-update-slice(x, sl, one)\n"
                  "  cl = @[4] clamp(z, x, y)\n"
                  "  ROOT out = (@[4], @[6], @[6], @[8], @[4], @[4], @[4], @[4], "
                  "s32[4], @[4], @[], @[2], @[4], @[4]) "
                  "tuple(rv, cc, pd, rs, se, mx, mn, ad, cv, io, rd, ds, du, cl)\n"
                  "}\n",
                  t);
    int n;
    tr_tensor **o = run_args(tr_buf_str(&text), NULL, 0, &n, __LINE__);
    if (!o) fprintf(stderr, "  (dtype %s)\n", t);
    int before = tr_test_failed;
    FLTS(o, n, 0, 0, 3, 2, 1);
    FLTS(o, n, 1, 1, 2, 3, 0, 2, 0);
    FLTS(o, n, 2, 0, 1, 0, 2, 0, 3); /* 1 0 2 0 3 0 0 with low 1, high -2 */
    FLTS(o, n, 3, 1, 1, 2, 2, 3, 3, 0, 0);
    FLTS(o, n, 4, 1, 2, 1, 0);
    FLTS(o, n, 5, 3, 2, 3, 1);
    FLTS(o, n, 6, 1, 2, 1, 0);
    FLTS(o, n, 7, 4, 4, 4, 1);
    INTS(o, n, 8, 3, 4, 3, 0);
    FLTS(o, n, 9, 0, 1, 2, 3);
    FLTS(o, n, 10, 6);
    FLTS(o, n, 11, 2, 3);
    FLTS(o, n, 12, 1, 2, 0, 0);
    FLTS(o, n, 13, 1, 2, 1, 0);
    if (tr_test_failed != before) fprintf(stderr, "  (dtype %s)\n", t);
    tr_eval_free_outputs(o, n);
    tr_buf_free(&text);
  }
}

TR_TEST(eval_result_size_limit) {
  tr_module *m = parse_ok("HloModule m\n"
                          "ENTRY e {\n"
                          "  z = f32[] constant(0)\n"
                          "  ROOT b = f32[1000,1000] broadcast(z), dimensions={}\n"
                          "}\n",
                          __LINE__);
  if (!m) return;
  tr_diag d = {0};
  tr_eval_opts opts = {.max_bytes = 1000000};
  tr_tensor **outs;
  int n;
  CHECK(tr_eval_opt(m, &opts, NULL, 0, &outs, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "in %b: unsupported: a result of 4000000 bytes is over the limit of 1000000");
  tr_diag_clear(&d);
  opts.max_bytes = 4000000;
  CHECK(tr_eval_opt(m, &opts, NULL, 0, &outs, &n, &d) == TR_OK);
  tr_eval_free_outputs(outs, n);
  tr_module_free(m);
}

TR_TEST(eval_dynamic_slice_index_vector_form) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  x = s32[3,4] iota(), iota_dimension=1\n"
                      "  v = s32[2] constant({2, 9})\n"
                      "  a = s32[2,2] dynamic-slice(x, v), dynamic_slice_sizes={2,2}\n"
                      "  u = s32[1,1] constant({{7}})\n"
                      "  b = s32[3,4] dynamic-update-slice(x, u, v)\n"
                      "  ROOT out = (s32[2,2], s32[3,4]) tuple(a, b)\n"
                      "}\n",
                      &n);
  /* The old single-vector form: starts (2, 9) clamp to (1, 2) and (2, 3). */
  INTS(o, n, 0, 2, 3, 2, 3);
  INTS(o, n, 1, 0, 1, 2, 3, 0, 1, 2, 3, 0, 1, 2, 7);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_custom_call_identities) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[2] constant({1, 2})\n"
                      "  s = f32[2] custom-call(a), custom_call_target=\"Sharding\", sharding={replicated}\n"
                      "  ROOT h = f32[2] custom-call(s), custom_call_target=\"MoveToHost\"\n"
                      "}\n",
                      &n);
  FLTS(o, n, 0, 1, 2);
  tr_eval_free_outputs(o, n);
  char buf[512];
  const char *msg = run_err("HloModule m\n"
                            "ENTRY e {\n"
                            "  a = f32[2] constant({1, 2})\n"
                            "  ROOT k = f32[2] custom-call(a), custom_call_target=\"my_kernel\"\n"
                            "}\n",
                            buf, sizeof buf);
  CHECK_STR(msg, "t.hlo:4:8: error: in %k: unsupported: custom-call target \"my_kernel\"");
}

/* ---- one test per edge case named in the issue ---- */

TR_TEST(eval_edge_divide_by_zero_is_minus_one) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = s32[] constant(7)\n  z = s32[] constant(0)\n"
                      "  ROOT d = s32[] divide(a, z)\n}\n", &n);
  INTS(o, n, 0, -1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_int_min_divided_by_minus_one) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = s32[] constant(-2147483648)\n"
                      "  b = s32[] constant(-1)\n  ROOT d = s32[] divide(a, b)\n}\n", &n);
  INTS(o, n, 0, INT32_MIN);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_remainder_by_zero_is_dividend) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = s32[] constant(-7)\n  z = s32[] constant(0)\n"
                      "  ROOT r = s32[] remainder(a, z)\n}\n", &n);
  INTS(o, n, 0, -7);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_shift_by_33_on_s32) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = s32[] constant(-5)\n  s = s32[] constant(33)\n"
                      "  l = s32[] shift-left(a, s)\n  r = s32[] shift-right-logical(a, s)\n"
                      "  q = s32[] shift-right-arithmetic(a, s)\n"
                      "  ROOT t = (s32[], s32[], s32[]) tuple(l, r, q)\n}\n", &n);
  INTS(o, n, 0, 0);
  INTS(o, n, 1, 0);
  INTS(o, n, 2, -1);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_convert_nan_to_s32_is_zero) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = f32[] constant(nan)\n"
                      "  ROOT c = s32[] convert(a)\n}\n", &n);
  INTS(o, n, 0, 0);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_convert_3e9_to_s32_saturates) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = f32[] constant(3e9)\n"
                      "  ROOT c = s32[] convert(a)\n}\n", &n);
  INTS(o, n, 0, INT32_MAX);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_f32_to_bf16_ties_to_even) {
  int n;
  /* 1 + 2^-8 and 1 + 3*2^-8 are both halfway: to 1 (0x3f80) and to the
   * even 1 + 2^-6 (0x3f82). */
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = f32[2] constant({1.00390625, 1.01171875})\n"
                      "  ROOT c = bf16[2] convert(a)\n}\n", &n);
  BITS(o, n, 0, 0x3f80, 0x3f82);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_maximum_nan_one_is_nan) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = f32[] constant(nan)\n  b = f32[] constant(1)\n"
                      "  x = f32[] maximum(a, b)\n  y = f32[] maximum(b, a)\n"
                      "  ROOT t = (f32[], f32[]) tuple(x, y)\n}\n", &n);
  FLTS(o, n, 0, NAN);
  FLTS(o, n, 1, NAN);
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_dynamic_slice_start_clamped) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  x = s32[4] constant({10, 11, 12, 13})\n"
                      "  i = s32[] constant(3)\n"
                      "  ROOT d = s32[3] dynamic-slice(x, i), dynamic_slice_sizes={3}\n}\n", &n);
  INTS(o, n, 0, 11, 12, 13); /* start 3 clamps to 4 - 3 = 1 */
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_pad_negative_low_and_interior) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  x = s32[3] constant({1, 2, 3})\n"
                      "  z = s32[] constant(9)\n"
                      "  ROOT p = s32[4] pad(x, z), padding=-2_1_1\n}\n", &n);
  INTS(o, n, 0, 2, 9, 3, 9); /* 1 9 2 9 3, the first two cut, one 9 added */
  tr_eval_free_outputs(o, n);
}

TR_TEST(eval_edge_totalorder_negative_zero_below_zero) {
  int n;
  tr_tensor **o = RUN("HloModule m\nENTRY e {\n  a = f32[] constant(-0)\n  b = f32[] constant(0)\n"
                      "  t = pred[] compare(a, b), direction=LT, type=TOTALORDER\n"
                      "  f = pred[] compare(a, b), direction=LT\n"
                      "  q = pred[] compare(a, b), direction=EQ, type=TOTALORDER\n"
                      "  ROOT r = (pred[], pred[], pred[]) tuple(t, f, q)\n}\n", &n);
  INTS(o, n, 0, 1);
  INTS(o, n, 1, 0); /* the FLOAT order has -0 == +0 */
  INTS(o, n, 2, 0);
  tr_eval_free_outputs(o, n);
}

/* ---- cholesky, triangular-solve ---- */

TR_TEST(eval_cholesky_and_triangular_solve) {
  int n;
  tr_tensor **o = RUN("HloModule m\n"
                      "ENTRY e {\n"
                      "  a = f32[3,3] constant({{4, 99, 99}, {2, 10, 99}, {-2, 5, 9}})\n"
                      "  l = f32[3,3] cholesky(a), lower=true\n"
                      "  u = f32[3,3] constant({{4, 2, -2}, {-99, 10, 5}, {-99, -99, 9}})\n"
                      "  up = f32[3,3] cholesky(u)\n"
                      "  b = f32[3,1] constant({{2}, {7}, {6}})\n"
                      "  x = f32[3,1] triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
                      "  y = f32[3,1] triangular-solve(l, b), left_side=true, lower=true, transpose_a=TRANSPOSE\n"
                      "  c = f32[1,3] constant({{2, 7, 6}})\n"
                      "  z = f32[1,3] triangular-solve(l, c), lower=true, transpose_a=NO_TRANSPOSE\n"
                      "  w = f32[3,1] triangular-solve(l, b), left_side=true, lower=true, unit_diagonal=true, transpose_a=NO_TRANSPOSE\n"
                      "  ROOT out = (f32[3,3], f32[3,3], f32[3,1], f32[3,1], f32[1,3], f32[3,1]) tuple(l, up, x, y, z, w)\n"
                      "}\n",
                      &n);
  /* A = L L^T with L = {{2,0,0},{1,3,0},{-1,2,2}}; the 99s lie in the
   * triangle that is not read. */
  FLTS(o, n, 0, 2, 0, 0, 1, 3, 0, -1, 2, 2);
  FLTS(o, n, 1, 2, 1, -1, 0, 3, 2, 0, 0, 2); /* upper: U = L^T */
  /* L x = (2,7,6): x = (1, 2, 3/2). */
  FLTS(o, n, 2, 1, 2, 1.5);
  /* L^T y = (2,7,6): y3 = 3, y2 = (7 - 2*3)/3 = 1/3, y1 = (2 - 1/3 + 3)/2 = 7/3. */
  FLTS(o, n, 3, (double)(float)(7.0 / 3), (double)(float)(1.0 / 3), 3);
  /* z L = (2,7,6), i.e. L^T z^T = (2,7,6)^T: the same as y. */
  FLTS(o, n, 4, (double)(float)(7.0 / 3), (double)(float)(1.0 / 3), 3);
  /* Unit diagonal: x1 = 2, x2 = 7 - 2 = 5, x3 = 6 + 2 - 10 = -2. */
  FLTS(o, n, 5, 2, 5, -2);
  tr_eval_free_outputs(o, n);
}

/* async-start / -update / -done wrapping a computation (single-replica
 * semantics, docs/SEMANTICS.md): the done gives the wrapped computation's
 * result; the start's tuple holds the operands and zero context. */
TR_TEST(eval_async_wraps_computation) {
  const char *text =
      "HloModule m\n"
      "wrapped {\n  p = f32[3] parameter(0)\n  q = f32[3] parameter(1)\n"
      "  ROOT m = f32[3] multiply(p, q)\n}\n"
      "ENTRY e {\n  x = f32[3] constant({1.5, -2, 3})\n  y = f32[3] constant({2, 0.25, -1})\n"
      "  s = ((f32[3], f32[3]), f32[3], s32[]) async-start(x, y), calls=wrapped\n"
      "  u = ((f32[3], f32[3]), f32[3], s32[]) async-update(s)\n"
      "  d = f32[3] async-done(u)\n"
      "  o = (f32[3], f32[3]) get-tuple-element(s), index=0\n"
      "  y2 = f32[3] get-tuple-element(o), index=1\n"
      "  ctx = s32[] get-tuple-element(u), index=2\n"
      "  ROOT t = (f32[3], f32[3], s32[]) tuple(d, y2, ctx)\n}\n";
  int n = 0;
  tr_tensor **o = RUN(text, &n);
  CHECK_EQ_INT(n, 3);
  FLTS(o, n, 0, 3, -0.5, -3);
  FLTS(o, n, 1, 2, 0.25, -1);
  INTS(o, n, 2, 0);
  tr_eval_free_outputs(o, n);
}
