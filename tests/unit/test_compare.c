/* test_compare.c - the comparison policy on shadow outputs of small
 * modules: the exact evaluation passes, a corruption just past the bound
 * fails at the right index, NaN/Inf classes, integers, uncertain elements
 * and weak outputs. */
#include "../../src/oracle/compare.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static tr_shadow_out *shadow_of(const char *text, tr_tensor **args, int nargs, int *nouts) {
  tr_diag d = {0};
  tr_module *m = tr_parse("c.hlo", text, strlen(text), NULL, &d);
  tr_shadow_out *outs = NULL;
  if (m && tr_eval_shadow(m, NULL, args, nargs, &outs, nouts, &d) != TR_OK) outs = NULL;
  if (!outs) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_module_free(m);
  return outs;
}

static tr_tensor *f32_vec(const float *v, int n) {
  int64_t dims[1] = {n};
  tr_tensor *t = tr_tensor_new(TR_DT_F32, 1, dims, NULL);
  for (int i = 0; i < n; i++) tr_tensor_set_f(t, (size_t)i, v[i]);
  return t;
}

static const char *k_sum =
    "HloModule s\n"
    "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = f32[] add(a, b) }\n"
    "ENTRY e {\n  p = f32[4,64] parameter(0)\n  z = f32[] constant(0)\n"
    "  ROOT r = f32[4] reduce(p, z), dimensions={1}, to_apply=add\n}\n";

TR_TEST(compare_exact_passes_and_corruption_fails) {
  int64_t dims[2] = {4, 64};
  tr_tensor *p = tr_tensor_new(TR_DT_F32, 2, dims, NULL);
  for (size_t i = 0; i < 256; i++) tr_tensor_set_f(p, i, 1.0 / (double)(i + 3) - 0.1);
  int n = 0;
  tr_shadow_out *o = shadow_of(k_sum, &p, 1, &n);
  CHECK(o && n == 1);
  if (!o) {
    tr_tensor_free(p);
    return;
  }
  tr_compare_result r;
  tr_diag d = {0};
  /* The per-dtype exact evaluation is a correct implementation. */
  CHECK_EQ_INT(tr_compare_output(&o[0], o[0].exact, NULL, &r, &d), TR_OK);
  CHECK_EQ_INT(r.judgement, TR_JUDGE_PASS);
  CHECK_EQ_INT(r.checked, 4);
  CHECK(r.worst_ratio <= 1.0);
  /* Move element 2 just past its allowance: a mismatch there, nowhere else. */
  tr_tensor *bad = tr_tensor_clone(o[0].exact);
  double allow = o[0].bound[2] + tr_compare_tiny(TR_DT_F32);
  double moved = o[0].value[2] + 2.5 * allow;
  tr_tensor_set_f(bad, 2, moved);
  CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
  CHECK_EQ_INT(r.judgement, TR_JUDGE_MISMATCH);
  CHECK_EQ_INT(r.failing, 1);
  CHECK(r.has_fail && r.first_fail == 2);
  CHECK(r.first_value == o[0].value[2]);
  CHECK(fabs(r.first_target - moved) <= fabs(moved) * 1e-6);
  CHECK(r.worst_index == 2 && r.worst_ratio > 2.0);
  /* A NaN where the reference is finite fails too. */
  tr_tensor_set_f(bad, 2, o[0].value[2]);
  tr_tensor_set_f(bad, 0, NAN);
  CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
  CHECK(r.judgement == TR_JUDGE_MISMATCH && r.first_fail == 0 && isnan(r.first_target));
  /* Wrong shape: an error, not a verdict. */
  float three[3] = {1, 2, 3};
  tr_tensor *wrong = f32_vec(three, 3);
  CHECK_EQ_INT(tr_compare_output(&o[0], wrong, NULL, &r, &d), TR_ERR_INVALID);
  CHECK_CONTAINS(tr_diag_first(&d), "target output is f32[3] but the reference gives f32[4]");
  tr_diag_clear(&d);
  tr_tensor_free(wrong);
  tr_tensor_free(bad);
  tr_shadow_free(o, n);
  tr_tensor_free(p);
}

TR_TEST(compare_integers_exact_and_weak_outputs) {
  const char *text = "HloModule i\nENTRY e {\n  p = s32[5] parameter(0)\n  ROOT r = s32[5] multiply(p, p)\n}\n";
  int64_t dims[1] = {5};
  tr_tensor *p = tr_tensor_new(TR_DT_S32, 1, dims, NULL);
  for (int i = 0; i < 5; i++) tr_tensor_set_i(p, (size_t)i, i - 2);
  int n = 0;
  tr_shadow_out *o = shadow_of(text, &p, 1, &n);
  CHECK(o != NULL);
  if (!o) {
    tr_tensor_free(p);
    return;
  }
  tr_compare_result r;
  tr_diag d = {0};
  CHECK_EQ_INT(tr_compare_output(&o[0], o[0].exact, NULL, &r, &d), TR_OK);
  CHECK_EQ_INT(r.judgement, TR_JUDGE_PASS);
  tr_tensor *bad = tr_tensor_clone(o[0].exact);
  tr_tensor_set_i(bad, 4, 5); /* 2*2 = 4, off by one */
  CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
  CHECK(r.judgement == TR_JUDGE_MISMATCH && r.first_fail == 4 && r.first_value == 4 && r.first_target == 5);
  tr_tensor_free(bad);
  tr_shadow_free(o, n);
  /* A constant output cannot tell a right answer from a wrong one. */
  const char *cst = "HloModule k\nENTRY e {\n  p = s32[5] parameter(0)\n  z = s32[5] subtract(p, p)\n"
                    "  ROOT r = s32[5] add(z, z)\n}\n";
  o = shadow_of(cst, &p, 1, &n);
  CHECK(o != NULL);
  if (o) {
    CHECK_EQ_INT(tr_compare_output(&o[0], o[0].exact, NULL, &r, &d), TR_OK);
    CHECK_EQ_INT(r.judgement, TR_JUDGE_WEAK);
    CHECK_STR(r.weak_reason, "constant output");
    tr_shadow_free(o, n);
  }
  tr_tensor_free(p);
}

TR_TEST(compare_uncertain_not_judged) {
  /* floor(exp(log(x))): exp and log may each be off by a few ulps, so where
   * x is an integer the bound reaches it and the reference cannot say on
   * which side a correct implementation lands (elements 0 and 2); 2.5 and
   * 0.75 are far from one (elements 1 and 3). */
  const char *text = "HloModule u\nENTRY e {\n  p = f32[4] parameter(0)\n  l = f32[4] log(p)\n"
                     "  x = f32[4] exponential(l)\n  ROOT r = f32[4] floor(x)\n}\n";
  float a[4] = {3.0f, 2.5f, 7.0f, 0.75f};
  tr_tensor *arg = f32_vec(a, 4);
  int n = 0;
  tr_shadow_out *o = shadow_of(text, &arg, 1, &n);
  CHECK(o != NULL);
  if (o) {
    tr_compare_result r;
    tr_diag d = {0};
    CHECK_EQ_INT(o[0].nuncertain, 2);
    CHECK(o[0].uncertain[0] && !o[0].uncertain[1] && o[0].uncertain[2] && !o[0].uncertain[3]);
    tr_tensor *bad = tr_tensor_clone(o[0].exact);
    tr_tensor_set_f(bad, 0, 2.0); /* an uncertain element: not judged */
    CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
    CHECK_EQ_INT(r.checked, 2);
    CHECK_EQ_INT(r.uncertain, 2);
    CHECK(r.judgement != TR_JUDGE_MISMATCH);
    tr_tensor_set_f(bad, 1, 1.0); /* a certain one: floor(2.5) is 2 */
    CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
    CHECK(r.judgement == TR_JUDGE_MISMATCH && r.first_fail == 1 && r.first_value == 2);
    tr_tensor_free(bad);
    tr_shadow_free(o, n);
  }
  tr_tensor_free(arg);
}

TR_TEST(compare_exact_zero_judged_tiny_values_weak) {
  /* A scalar zero computed exactly (bound 0) is judged: anything else is
   * wrong. Tiny values against positive bounds are weak. */
  const char *zero = "HloModule z\nENTRY e {\n  p = f32[1] parameter(0)\n  c = f32[] constant(0)\n"
                     "  ROOT h = bf16[] convert(c)\n}\n";
  float one[1] = {1};
  tr_tensor *p = f32_vec(one, 1);
  int n = 0;
  tr_shadow_out *o = shadow_of(zero, &p, 1, &n);
  CHECK(o != NULL);
  tr_compare_result r;
  tr_diag d = {0};
  if (o) {
    CHECK_EQ_INT(tr_compare_output(&o[0], o[0].exact, NULL, &r, &d), TR_OK);
    CHECK_EQ_INT(r.judgement, TR_JUDGE_PASS);
    CHECK_EQ_INT(r.checked, 1);
    tr_tensor *bad = tr_tensor_clone(o[0].exact);
    tr_tensor_set_f(bad, 0, 0x1p-100);
    CHECK_EQ_INT(tr_compare_output(&o[0], bad, NULL, &r, &d), TR_OK);
    CHECK_EQ_INT(r.judgement, TR_JUDGE_MISMATCH);
    tr_tensor_free(bad);
    tr_shadow_free(o, n);
  }
  /* [1, -1] . [1, 1] = 0, with the any-order bound of a 2-term dot */
  const char *tiny = "HloModule t\nENTRY e {\n  p = f32[2] parameter(0)\n  o = f32[2] constant({1, 1})\n"
                     "  ROOT d = f32[] dot(p, o), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  float pm[2] = {1, -1};
  tr_tensor *p2 = f32_vec(pm, 2);
  o = shadow_of(tiny, &p2, 1, &n);
  CHECK(o != NULL);
  if (o) {
    CHECK_EQ_INT(tr_compare_output(&o[0], o[0].exact, NULL, &r, &d), TR_OK);
    CHECK(o[0].value[0] == 0 && o[0].bound[0] > 0);
    CHECK_EQ_INT(r.judgement, TR_JUDGE_WEAK);
    CHECK_STR(r.weak_reason, "values tiny against their bounds");
    tr_shadow_free(o, n);
  }
  tr_tensor_free(p2);
  tr_diag_clear(&d);
  tr_tensor_free(p);
}
