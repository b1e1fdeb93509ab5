/* test_fft.c - fft in shadow mode: the derived bound's value on a case
 * worked out by hand, uncertain results where the derivation does not
 * reach (a prime factor above 64), and located errors for fft attributes
 * that do not fit the operand. Exact values are in tests/eval/dtypes/fft.hlo. */
#include "../../src/eval/shadow.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static tr_module *fft_module(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m || tr_verify(m, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  return m;
}

/* FFT of c64[8] {1, 0, ..., 0} (an impulse): every output is 1; the bound
 * is ((1 + 11u)^3 - 1) * S + u * |y| with S = 1 (the input moduli) and
 * |y| = |re| + |im| = 1, u = 2^-24 (three radix-2 steps, eta_2 = 11u). */
TR_TEST(shadow_fft_bound_by_hand) {
  tr_module *m = fft_module("HloModule m\nENTRY e {\n  x = c64[8] constant({(1, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0), (0, 0)})\n"
                            "  ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={8}\n}\n");
  if (!m) return;
  tr_shadow_out *o = NULL;
  int n = 0;
  tr_diag d = {0};
  CHECK(tr_eval_shadow(m, NULL, NULL, 0, &o, &n, &d) == TR_OK);
  if (n == 1) {
    long double u = ldexpl(1, -24), g = 1 + 11 * u;
    long double want = (g * g * g - 1) + 8 * ldexpl(1, -62) + u;
    for (size_t k = 0; k < 8; k++) {
      CHECK(!o[0].uncertain[k]);
      CHECK(o[0].bound[k] >= (double)want && o[0].bound[k] <= (double)want * (1 + 1e-12));
    }
  }
  tr_shadow_free(o, n);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* Length 67 is prime and above 64: Bluestein's or Rader's algorithm may
 * compute it, which the derivation does not cover: uncertain. */
TR_TEST(shadow_fft_large_prime_uncertain) {
  tr_module *m = fft_module("HloModule m\nENTRY e {\n  x = f32[67] parameter(0)\n"
                            "  ROOT f = c64[34] fft(x), fft_type=RFFT, fft_length={67}\n}\n");
  if (!m) return;
  int64_t dims[1] = {67};
  tr_tensor *a = tr_tensor_new(TR_DT_F32, 1, dims, NULL);
  for (size_t i = 0; i < 67; i++) tr_tensor_set_f(a, i, (double)(i % 5));
  tr_shadow_out *o = NULL;
  int n = 0;
  tr_diag d = {0};
  CHECK(tr_eval_shadow(m, NULL, &a, 1, &o, &n, &d) == TR_OK);
  if (n == 1) CHECK(o[0].nuncertain == 34);
  tr_shadow_free(o, n);
  tr_tensor_free(a);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* An fft_length that does not fit the operand is a located error. */
TR_TEST(eval_fft_bad_length) {
  tr_module *m = fft_module("HloModule m\nENTRY e {\n  x = c64[8] parameter(0)\n"
                            "  ROOT f = c64[8] fft(x), fft_type=FFT, fft_length={4}\n}\n");
  if (!m) return;
  int64_t dims[1] = {8};
  tr_tensor *a = tr_tensor_new(TR_DT_C64, 1, dims, NULL);
  tr_tensor **outs = NULL;
  int n = 0;
  tr_diag d = {0};
  CHECK(tr_eval(m, &a, 1, &outs, &n, &d) != TR_OK);
  const char *msg = tr_diag_first(&d);
  CHECK(msg != NULL);
  if (msg) {
    CHECK_CONTAINS(msg, "fft dimension 0 is 8");
    CHECK_CONTAINS(msg, "t.hlo:4:");
  }
  tr_eval_free_outputs(outs, n);
  tr_tensor_free(a);
  tr_diag_clear(&d);
  tr_module_free(m);
}
