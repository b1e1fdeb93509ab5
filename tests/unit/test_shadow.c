/* test_shadow.c - shadow mode: bounds and marks derived by hand for small
 * modules, and property tests over thousands of random programs: the
 * bound contains the exact interpreter's actual error on every certain
 * element, and uncertain marks appear exactly where a perturbation within
 * the operands' bounds flips a discontinuous op. */
#include "../../src/eval/shadow.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* ---- harness ---- */

typedef struct {
  tr_tensor **ex;     /* exact-mode outputs */
  int nex;
  tr_shadow_out *sh;  /* shadow outputs */
  int nsh;
} both;

static void both_free(both *b) {
  tr_eval_free_outputs(b->ex, b->nex);
  tr_shadow_free(b->sh, b->nsh);
  memset(b, 0, sizeof *b);
}

/* Parses text and evaluates it in both modes; false (and a failure) when
 * anything goes wrong. */
static bool run_both(const char *text, tr_tensor *const *args, int nargs, both *b, int line) {
  memset(b, 0, sizeof *b);
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  bool ok = m && tr_verify(m, &d) == TR_OK;
  ok = ok && tr_eval(m, args, nargs, &b->ex, &b->nex, &d) == TR_OK;
  ok = ok && tr_eval_shadow(m, NULL, args, nargs, &b->sh, &b->nsh, &d) == TR_OK;
  if (!ok) {
    fprintf(stderr, "  %s:%d: module did not evaluate:\n", __FILE__, line);
    tr_diag_print(&d, stderr);
    fprintf(stderr, "%s\n", text);
    tr_test_failed++;
  } else if (b->nex != b->nsh) {
    fprintf(stderr, "  %s:%d: %d exact outputs but %d shadow outputs\n", __FILE__, line, b->nex, b->nsh);
    tr_test_failed++;
    ok = false;
  }
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  return ok;
}

static tr_tensor *vec(tr_dtype dt, int n, const double *v) {
  int64_t dims[1] = {n};
  tr_tensor *t = tr_tensor_new(dt, 1, dims, NULL);
  for (int i = 0; i < n; i++) tr_tensor_set_f(t, (size_t)i, v[i]);
  return t;
}

typedef struct {
  long checked;     /* certain elements compared */
  long uncertain;   /* elements skipped */
  long bad;         /* certain elements outside their bound */
  double worst;     /* max |exact - shadow| / bound */
} stats;

/* The containment property on every output: a certain element of the
 * exact run lies within bound of the shadow value (NaN and inf match
 * exactly); a certain integer equals the shadow's. */
static void contain(const both *b, stats *s, const char *text) {
  for (int i = 0; i < b->nsh; i++) {
    const tr_shadow_out *o = &b->sh[i];
    const tr_tensor *x = b->ex[i];
    for (size_t j = 0; j < o->n; j++) {
      if (o->uncertain[j]) {
        s->uncertain++;
        continue;
      }
      s->checked++;
      bool ok;
      double ratio = 0;
      if (o->value) {
        double ev = tr_tensor_get_f(x, j), sv = o->value[j], bd = o->bound[j];
        if (isnan(sv)) ok = isnan(ev);
        else if (isinf(sv)) ok = ev == sv;
        else {
          double diff = fabs(ev - sv);
          ok = isfinite(ev) && diff <= bd;
          ratio = bd > 0 ? diff / bd : (diff > 0 ? INFINITY : 0);
        }
        if (!ok && s->bad < 5)
          fprintf(stderr, "  output %d element %zu: exact %.17g shadow %.17g bound %.3g\n", i, j, ev, sv, bd);
      } else if (tr_dtypes[o->dtype].kind == TR_DK_COMPLEX) {
        double a, bb, c, d;
        tr_tensor_get_c(x, j, &a, &bb);
        tr_tensor_get_c(o->exact, j, &c, &d);
        double bd = o->bound ? o->bound[j] : 0;
        ok = (fabs(a - c) <= bd || (isnan(a) && isnan(c))) && (fabs(bb - d) <= bd || (isnan(bb) && isnan(d)));
        if (!ok && s->bad < 5)
          fprintf(stderr, "  output %d element %zu: exact (%g, %g) shadow (%g, %g)\n", i, j, a, bb, c, d);
      } else {
        ok = tr_tensor_get_bits(x, j) == tr_tensor_get_bits(o->exact, j);
        if (!ok && s->bad < 5)
          fprintf(stderr, "  output %d element %zu: exact %lld shadow %lld\n", i, j,
                  (long long)tr_tensor_get_i(x, j), (long long)tr_tensor_get_i(o->exact, j));
      }
      if (ratio > s->worst) s->worst = ratio;
      if (!ok) {
        if (s->bad == 0 && text) fprintf(stderr, "%s\n", text);
        s->bad++;
      }
    }
  }
}

/* ---- hand-derived bounds ---- */

#define U24 ldexp(1.0, -24)

static bool near(double got, double want, double rel) { return fabs(got - want) <= rel * fabs(want); }

TR_TEST(shadow_sum_of_four) {
  /* The sum of 4 f32 values in any order: 3 additions of at most half an
   * ulp each of a partial sum <= sum|x|: 3 * 2^-24 * 10 (plus the
   * shadow's own 2^-50 per term). */
  const char *text = "HloModule m\n"
                     "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
                     "ENTRY e {\n  x = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                     "  ROOT r = f32[] reduce(x, z), dimensions={0}, to_apply=add\n}\n";
  double v[4] = {1, 2, 3, 4};
  tr_tensor *x = vec(TR_DT_F32, 4, v);
  both b;
  if (run_both(text, &x, 1, &b, __LINE__)) {
    CHECK(b.sh[0].value[0] == 10);
    CHECK(!b.sh[0].uncertain[0]);
    CHECK(near(b.sh[0].bound[0], 3 * U24 * 10 + 4 * ldexp(1.0, -50) * 10, 1e-12));
  }
  both_free(&b);
  tr_tensor_free(x);
}

TR_TEST(shadow_add_mul_bounds) {
  /* s = 1 + 2^-30 rounds in f32: bound half an ulp at 1 (2^-24). Then
   * s * 3: the propagated 3 * 2^-24 plus half an ulp at 3 (2^-23). */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n"
                     "  c = f32[1] parameter(2)\n  s = f32[1] add(a, b)\n  p = f32[1] multiply(s, c)\n"
                     "  ROOT t = (f32[1], f32[1]) tuple(s, p)\n}\n";
  double va = 1, vb = ldexp(1.0, -30), vc = 3;
  tr_tensor *args[3] = {vec(TR_DT_F32, 1, &va), vec(TR_DT_F32, 1, &vb), vec(TR_DT_F32, 1, &vc)};
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    CHECK(b.sh[0].value[0] == 1 + ldexp(1.0, -30));
    CHECK(near(b.sh[0].bound[0], U24, 1e-6));
    CHECK(near(b.sh[1].bound[0], 3 * U24 + 2 * U24, 1e-6));
    stats s = {0};
    contain(&b, &s, NULL);
    CHECK_EQ_INT(s.bad, 0);
    CHECK_EQ_INT(s.uncertain, 0);
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_dot_bound) {
  /* dot of [1,2] and [3,4] in f32: n = 2 products and sums, each at most
   * half an ulp of sum|a b| = 11: 2 * 2^-24 * 11, plus the double
   * kernel's own error. */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                     "  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  double va[2] = {1, 2}, vb[2] = {3, 4};
  tr_tensor *args[2] = {vec(TR_DT_F32, 2, va), vec(TR_DT_F32, 2, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK(b.sh[0].value[0] == 11);
    CHECK(near(b.sh[0].bound[0], 2 * U24 * 11, 1e-6));
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

/* An f64 convolution of finite operands whose partial sums overflow the
 * f64 kernel: max + max - max is NaN in the reference's order but finite
 * or inf in another, so such a NaN is uncertain (XLA CPU gives -inf where
 * the reference said NaN: a 10-minute xla-cpu campaign, --dist boundary
 * inputs, reduced by trench reduce). */
TR_TEST(shadow_conv_f64_overflow_nan) {
  const char *text =
      "HloModule m\n"
      "ENTRY e {\n"
      "  k = f64[3,2,1,2] constant({{{{-2.225073858507201e-308, 0.5}}, {{-2.0, 0.5}}}, {{{-1.7976931348623157e+308, 0.0}}, {{-9007199254740992.0, -5e-324}}}, {{{-9007199254740994.0, -1.7976931348623155e+308}}, {{-2.2250738585072014e-308, -1.7976931348623155e+308}}}})\n"
      "  a = f64[3,6,3,2] constant({{{{-0.5, 1.7976931348623157e+308}, {0.5, 1.7976931348623155e+308}, {9007199254740994.0, -0.0}}, {{2.2250738585072014e-308, -1.7976931348623155e+308}, {1.0000000000000002, 0.5}, {-1.0, -0.5}}, {{-1.0000000000000002, -0.0}, {1.0000000000000002, -1.7976931348623155e+308}, {-2.2250738585072014e-308, 1.7976931348623157e+308}}, {{9007199254740994.0, -1.0}, {9007199254740992.0, -9007199254740994.0}, {0.5, 0.5}}, {{-1.7976931348623157e+308, -9007199254740994.0}, {-1.7976931348623157e+308, 5e-324}, {-1.7976931348623157e+308, 0.5}}, {{1.7976931348623155e+308, 5e-324}, {-2.225073858507201e-308, -1.0000000000000002}, {-1.7976931348623157e+308, 1.7976931348623157e+308}}}, {{{-2.225073858507201e-308, -1.7976931348623155e+308}, {1.7976931348623157e+308, -2.0}, {0.0, 2.0}}, {{-0.9999999999999999, -5e-324}, {5e-324, 2.225073858507201e-308}, {-9007199254740992.0, 1.0000000000000002}}, {{-1.0000000000000002, 1.0}, {-9007199254740994.0, -5e-324}, {-1.0, 0.0}}, {{2.0, 0.9999999999999999}, {2.225073858507201e-308, -5e-324}, {9007199254740994.0, -5e-324}}, {{1.7976931348623155e+308, -9007199254740994.0}, {-0.9999999999999999, 1.0000000000000002}, {-1.0, -9007199254740994.0}}, {{-5e-324, -0.9999999999999999}, {0.5, 0.5}, {-1.7976931348623157e+308, -1.0000000000000002}}}, {{{-1.7976931348623157e+308, 5e-324}, {-1.0, 9007199254740994.0}, {9007199254740992.0, -9007199254740994.0}}, {{1.0, 9007199254740994.0}, {1.7976931348623157e+308, 9007199254740992.0}, {1.0, 0.0}}, {{1.7976931348623157e+308, 1.7976931348623157e+308}, {-5e-324, -9007199254740992.0}, {1.7976931348623155e+308, -1.7976931348623157e+308}}, {{0.0, 1.0}, {1.7976931348623155e+308, -0.9999999999999999}, {0.5, -1.7976931348623157e+308}}, {{1.0, -5e-324}, {-2.0, -9007199254740992.0}, {-1.0, 0.0}}, {{-1.7976931348623157e+308, -1.7976931348623157e+308}, {-1.7976931348623157e+308, 0.0}, {-2.0, 1.0000000000000002}}}})\n"
      "  ROOT c = f64[3,1,6,2] convolution(k, a), window={size=2x3 pad=0_2x2_1}, dim_labels=fb01_1oi0->1bf0, batch_group_count=2\n"
      "}\n";
  both b;
  if (run_both(text, NULL, 0, &b, __LINE__)) {
    int nan = 0, certain_nan = 0;
    for (size_t i = 0; i < 36; i++) {
      if (!isnan(b.sh[0].value[i])) continue;
      nan++;
      certain_nan += !b.sh[0].uncertain[i];
    }
    CHECK(nan > 0);
    CHECK_EQ_INT(certain_nan, 0);
  }
  both_free(&b);
}

/* A certain NaN operand element makes every dot or convolution sum it
 * enters NaN in any order, even where the other terms carry rounding
 * errors (a 10-minute xla-cpu campaign: an f16 convolution whose
 * zero padding met an infinite tap fed a second, padded convolution; its
 * NaN outputs were uncertain, so the conv-zero-pad rule could not excuse
 * XLA's NaN). Rows without the NaN stay finite and certain. */
TR_TEST(shadow_contraction_certain_nan_term) {
  const char *text =
      "HloModule m\nENTRY e {\n  a = f16[2,3] parameter(0)\n  b = f16[2,3] parameter(1)\n"
      "  w = f16[3,2] parameter(2)\n  s = f16[2,3] add(a, b)\n  v = f16[3,2] multiply(w, w)\n"
      "  d = f16[2,2] dot(s, v), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  x = f16[1,2,3] reshape(s)\n  k = f16[1,2,3] reshape(v)\n"
      "  c = f16[1,1,3] convolution(x, k), window={size=3 pad=1_1}, dim_labels=bf0_oi0->bf0\n"
      "  ROOT t = (f16[2,2], f16[1,1,3]) tuple(d, c)\n}\n";
  double va[6] = {NAN, 1.001, 2.003, 0.3, 0.7, 1.1}, vb[6] = {0.1, 0.2, 0.3, 0.4, 0.5, 0.6};
  double vw[6] = {1.1, 0.3, 0.7, 1.3, 0.9, 0.2};
  int64_t d23[2] = {2, 3}, d32[2] = {3, 2};
  tr_tensor *args[3] = {tr_tensor_new(TR_DT_F16, 2, d23, NULL), tr_tensor_new(TR_DT_F16, 2, d23, NULL),
                        tr_tensor_new(TR_DT_F16, 2, d32, NULL)};
  for (int i = 0; i < 6; i++) {
    tr_tensor_set_f(args[0], (size_t)i, va[i]);
    tr_tensor_set_f(args[1], (size_t)i, vb[i]);
    tr_tensor_set_f(args[2], (size_t)i, vw[i]);
  }
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    /* dot: row 0 holds a[0,0] = NaN, row 1 none */
    for (size_t i = 0; i < 4; i++) {
      CHECK_EQ_INT(isnan(b.sh[0].value[i]) != 0, i < 2);
      CHECK(!b.sh[0].uncertain[i]);
    }
    /* convolution over x[0,0,:] = {NaN, ., .} and x[0,1,:], window 3
     * padded by one each side: the windows at 0 and 1 hold x[0,0,0] (NaN,
     * certain), the one at 2 does not (finite, certain) */
    for (size_t i = 0; i < 3; i++) {
      CHECK_EQ_INT(isnan(b.sh[1].value[i]) != 0, i < 2);
      CHECK(!b.sh[1].uncertain[i]);
    }
  }
  both_free(&b);
  /* An exact 0 times a certain inf is NaN too (a zero the conv-zero-pad
   * rule makes explicit, under an inf kernel tap): a[0,0] + b[0,0] = 0 + 0
   * exactly, w[0,0] = inf, the other terms inexact. */
  tr_tensor_set_f(args[0], 0, 0);
  tr_tensor_set_f(args[1], 0, 0);
  tr_tensor_set_f(args[2], 0, INFINITY);
  if (run_both(text, args, 3, &b, __LINE__)) {
    /* dot row 0, column 0: s[0,0] * v[0,0] = 0 * inf */
    CHECK(isnan(b.sh[0].value[0]));
    CHECK(!b.sh[0].uncertain[0]);
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

/* flush-results (tr_shadow_opts.flush_results): an f16 logistic result
 * below the smallest normal (x = -12: 6.1e-6) may be 0, and so may what
 * is computed from it: logistic(x) * 300 allows both 0 and 1.8e-3 (a
 * 10-minute xla-cpu campaign: XLA's 0 times a constant was held against
 * the product); a normal result (x = 0.5) keeps its tight bound, and
 * without the flag the small product is tight too. */
TR_TEST(shadow_flush_results_propagate) {
  const char *text = "HloModule m\nENTRY e {\n  p = f16[2] parameter(0)\n  l = f16[2] logistic(p)\n"
                     "  c = f16[] constant(300)\n  b = f16[2] broadcast(c), dimensions={}\n"
                     "  ROOT r = f16[2] multiply(l, b)\n}\n";
  double vx[2] = {-12, 0.5};
  tr_tensor *x = vec(TR_DT_F16, 2, vx);
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(m && tr_verify(m, &d) == TR_OK);
  bool *fl = tr_xcalloc((size_t)TR_OP_COUNT * TR_DT_COUNT, 1);
  fl[(size_t)TR_OP_LOGISTIC * TR_DT_COUNT + TR_DT_F16] = true;
  for (int with = 0; with < 2 && m; with++) {
    tr_shadow_opts so;
    memset(&so, 0, sizeof so);
    so.flush_results = with ? fl : NULL;
    tr_shadow_out *o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval_shadow(m, &so, &x, 1, &o, &no, &d), TR_OK);
    if (no == 1) {
      double small = 300 / (1 + exp(12.0)); /* 1.84e-3 */
      CHECK(!o[0].uncertain[0] && !o[0].uncertain[1]);
      /* both 0 and the product within the bound with the flag; only the
       * product without it */
      CHECK_EQ_INT(fabs(o[0].value[0]) <= o[0].bound[0], with);
      CHECK(fabs(o[0].value[0] - small) <= o[0].bound[0] + 1e-6);
      CHECK(o[0].bound[1] < 0.5); /* 300 * 0.622: a normal result, tight */
    }
    tr_shadow_free(o, no);
  }
  tr_free(fl);
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  tr_tensor_free(x);
}

/* An add scatter copies the elements no update touches: an inf there is
 * a certain inf (it was marked uncertain like an inf sum, so an inf
 * kernel tap over zero padding after it could not be a certain NaN for
 * conv-zero-pad: a 10-minute xla-cpu campaign). A touched inf stays
 * uncertain (a sum's inf may meet the other infinity in another order). */
TR_TEST(shadow_scatter_untouched_inf) {
  const char *text =
      "HloModule m\nadd {\n  a = f16[] parameter(0)\n  b = f16[] parameter(1)\n  ROOT s = f16[] add(a, b)\n}\n"
      "ENTRY e {\n  k = f16[4] parameter(0)\n  u = f16[2] parameter(1)\n  i = s32[2,1] constant({{2}, {3}})\n"
      "  ROOT r = f16[4] scatter(k, i, u), update_window_dims={}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n}\n";
  double vk[4] = {INFINITY, 1.5, -INFINITY, 2}, vu[2] = {0.1, 0.3};
  tr_tensor *args[2] = {vec(TR_DT_F16, 4, vk), vec(TR_DT_F16, 2, vu)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK(isinf(b.sh[0].value[0]) && !b.sh[0].uncertain[0]); /* untouched inf */
    CHECK(!b.sh[0].uncertain[1]);
    CHECK(isinf(b.sh[0].value[2]) && b.sh[0].uncertain[2]); /* -inf + 0.1 */
    CHECK(!b.sh[0].uncertain[3]);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

/* select-and-scatter with nothing selected is its init, sign included:
 * init -0 stays -0 (a seed-8 builtin campaign: atan2 of it flipped from
 * -pi to +pi in the shadow, which started its sums at +0). */
TR_TEST(shadow_select_and_scatter_keeps_negative_zero_init) {
  const char *text =
      "HloModule m\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT c = pred[] compare(a, b), direction=GE\n}\n"
      "add {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
      "ENTRY e {\n  x = f32[1,4] parameter(0)\n  src = f32[0,2] constant({})\n  z = f32[] constant(-0.0)\n"
      "  ROOT r = f32[1,4] select-and-scatter(x, src, z), window={size=2x2 stride=2x2}, select=ge, scatter=add\n}\n";
  double vx[4] = {1, 2, 3, 4};
  int64_t dx[2] = {1, 4};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 2, dx, NULL);
  for (int k = 0; k < 4; k++) tr_tensor_set_f(x, (size_t)k, vx[k]);
  tr_tensor *args[1] = {x};
  both b;
  if (run_both(text, args, 1, &b, __LINE__))
    for (int k = 0; k < 4; k++) CHECK(b.sh[0].value[k] == 0 && signbit(b.sh[0].value[k]) && !b.sh[0].uncertain[k]);
  both_free(&b);
  tr_tensor_free(x);
}

/* A triangular solve whose substitution passes the dtype's range
 * (finite in long double): f32 x0 = 3e38, x1 = b1 - 3e38 * x0 overflows,
 * and an implementation's order may give NaN where long double gives a
 * large finite value rounded to -inf (a seed-18 xla-cpu campaign: NaN for
 * inf). x0 stays certain, x1 is uncertain; without the huge entry all are
 * certain. */
TR_TEST(shadow_triangular_solve_overflow_uncertain) {
  const char *text = "HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,1] parameter(1)\n"
                     "  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=true, "
                     "transpose_a=NO_TRANSPOSE\n}\n";
  for (int huge = 0; huge < 2; huge++) {
    double va[4] = {1, 0, huge ? 3e38 : 2, 1}, vb[2] = {huge ? 3e38 : 1, 1};
    int64_t da[2] = {2, 2}, db[2] = {2, 1};
    tr_tensor *args[2] = {tr_tensor_new(TR_DT_F32, 2, da, NULL), tr_tensor_new(TR_DT_F32, 2, db, NULL)};
    for (int k = 0; k < 4; k++) tr_tensor_set_f(args[0], (size_t)k, va[k]);
    for (int k = 0; k < 2; k++) tr_tensor_set_f(args[1], (size_t)k, vb[k]);
    both b;
    if (run_both(text, args, 2, &b, __LINE__)) {
      CHECK(!b.sh[0].uncertain[0]);
      CHECK_EQ_INT(b.sh[0].uncertain[1], huge);
    }
    both_free(&b);
    for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  }
  /* T^-1 beyond the range: T = [[1,0,0],[3e38,1,0],[0,3e38,1]] has
   * (T^-1)[2][0] = 9e76, though x = T^-1 (0, 0, 2) = (0, 0, 2) needs no
   * large intermediate: every entry uncertain. */
  const char *t3 = "HloModule m\nENTRY e {\n  a = f32[3,3] parameter(0)\n  b = f32[3,1] parameter(1)\n"
                   "  ROOT x = f32[3,1] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=true, "
                   "transpose_a=NO_TRANSPOSE\n}\n";
  double va[9] = {1, 0, 0, 3e38, 1, 0, 0, 3e38, 1}, vb[3] = {0, 0, 2};
  int64_t da[2] = {3, 3}, db[2] = {3, 1};
  tr_tensor *args[2] = {tr_tensor_new(TR_DT_F32, 2, da, NULL), tr_tensor_new(TR_DT_F32, 2, db, NULL)};
  for (int k = 0; k < 9; k++) tr_tensor_set_f(args[0], (size_t)k, va[k]);
  for (int k = 0; k < 3; k++) tr_tensor_set_f(args[1], (size_t)k, vb[k]);
  both b;
  if (run_both(t3, args, 2, &b, __LINE__)) {
    CHECK(b.sh[0].value[2] == 2);
    CHECK(b.sh[0].uncertain[0] && b.sh[0].uncertain[1] && b.sh[0].uncertain[2]);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  /* A product forming T^-1 beyond the range though every entry fits:
   * T = [[1e-10, 0], [1e30, 1e10]], (T^-1)[1][0] = -1e30 / (1e-10 * 1e10)
   * = -1e30 is formed from 1e30 * 1e10 = 1e40; x = (1, -1e20) needs no
   * large intermediate. */
  const char *t2 = "HloModule m\nENTRY e {\n  a = f32[2,2] parameter(0)\n  b = f32[2,1] parameter(1)\n"
                   "  ROOT x = f32[2,1] triangular-solve(a, b), left_side=true, lower=true, unit_diagonal=false, "
                   "transpose_a=NO_TRANSPOSE\n}\n";
  double wa[4] = {1e-10, 0, 1e30, 1e10}, wb[2] = {1e-10, 1};
  int64_t d2[2] = {2, 2}, d21[2] = {2, 1};
  tr_tensor *a2[2] = {tr_tensor_new(TR_DT_F32, 2, d2, NULL), tr_tensor_new(TR_DT_F32, 2, d21, NULL)};
  for (int k = 0; k < 4; k++) tr_tensor_set_f(a2[0], (size_t)k, wa[k]);
  for (int k = 0; k < 2; k++) tr_tensor_set_f(a2[1], (size_t)k, wb[k]);
  if (run_both(t2, a2, 2, &b, __LINE__)) CHECK(b.sh[0].uncertain[0] && b.sh[0].uncertain[1]);
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(a2[i]);
}

/* reduce-init-identity (tr_shadow_opts.init_undef): a sum whose init, as
 * run, is not 0 is undefined in XLA's semantics, and XLA CPU adds such an
 * init 0, 1, 3, 5 or 33 times by the size (a 10-minute xla-cpu campaign:
 * 64 s4 zeros with init 7 gave 3): every element uncertain; an init of 0
 * (a parameter: judged as run), a max with init -inf and the option off
 * keep the result certain. */
TR_TEST(shadow_init_undef) {
  const char *text =
      "HloModule m\nadd {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
      "mx {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] maximum(a, b)\n}\n"
      "ENTRY e {\n  x = s32[2,64] parameter(0)\n  i = s32[] parameter(1)\n  y = f32[4] parameter(2)\n"
      "  r = s32[2] reduce(x, i), dimensions={1}, to_apply=add\n"
      "  ninf = f32[] constant(-inf)\n  m = f32[] reduce(y, ninf), dimensions={0}, to_apply=mx\n"
      "  ROOT t = (s32[2], f32[]) tuple(r, m)\n}\n";
  tr_diag d = {0};
  tr_module *mod = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(mod && tr_verify(mod, &d) == TR_OK);
  int64_t dx[2] = {2, 64}, dy[1] = {4};
  tr_tensor *x = tr_tensor_new(TR_DT_S32, 2, dx, NULL), *y = tr_tensor_new(TR_DT_F32, 1, dy, NULL);
  for (size_t k = 0; k < 128; k++) tr_tensor_set_i(x, k, 0);
  for (size_t k = 0; k < 4; k++) tr_tensor_set_f(y, k, (double)k - 1.5);
  for (int run = 0; run < 3 && mod; run++) {
    /* run 0: init 7, option on; 1: init 0, on; 2: init 7, off */
    tr_tensor *i = tr_tensor_new(TR_DT_S32, 0, NULL, NULL);
    tr_tensor_set_i(i, 0, run == 1 ? 0 : 7);
    tr_tensor *args[3] = {x, i, y};
    tr_shadow_opts so;
    memset(&so, 0, sizeof so);
    so.init_undef = run < 2;
    tr_shadow_out *o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval_shadow(mod, &so, args, 3, &o, &no, &d), TR_OK);
    if (no == 2) {
      CHECK_EQ_INT(o[0].uncertain[0], run == 0);
      CHECK_EQ_INT(o[0].uncertain[1], run == 0);
      CHECK(!o[1].uncertain[0]);
    }
    tr_shadow_free(o, no);
    tr_tensor_free(i);
  }
  tr_diag_clear(&d);
  if (mod) tr_module_free(mod);
  tr_tensor_free(x);
  tr_tensor_free(y);
}

/* A variadic reduce (argmax with a lower-index tie-break) whose init
 * (-inf, 0) is not an identity for an element (-inf, 3): reducer(init, x)
 * is (-inf, 0), not x, so with init_undef the result is undefined
 * (XLA drops the init over a size-1 dim and gives index 3); over 1.0 the
 * init is an identity and the result is judged. */
TR_TEST(shadow_init_undef_variadic) {
  const char *text =
      "HloModule m\nargmax {\n  a = f32[] parameter(0)\n  ai = s32[] parameter(1)\n  b = f32[] parameter(2)\n"
      "  bi = s32[] parameter(3)\n  gt = pred[] compare(a, b), direction=GT\n  eq = pred[] compare(a, b), direction=EQ\n"
      "  lt = pred[] compare(ai, bi), direction=LT\n  tie = pred[] and(eq, lt)\n  keep = pred[] or(gt, tie)\n"
      "  v = f32[] select(keep, a, b)\n  i = s32[] select(keep, ai, bi)\n  ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
      "ENTRY e {\n  y = f32[1] parameter(0)\n  io = s32[1] constant({3})\n  ninf = f32[] constant(-inf)\n"
      "  z = s32[] constant(0)\n  ROOT r = (f32[], s32[]) reduce(y, io, ninf, z), dimensions={0}, to_apply=argmax\n}\n";
  tr_diag d = {0};
  tr_module *mod = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(mod && tr_verify(mod, &d) == TR_OK);
  int64_t dy[1] = {1};
  for (int run = 0; run < 3 && mod; run++) {
    /* run 0: -inf, option on; 1: 1.0, on; 2: -inf, off */
    tr_tensor *y = tr_tensor_new(TR_DT_F32, 1, dy, NULL);
    tr_tensor_set_f(y, 0, run == 1 ? 1.0 : -INFINITY);
    tr_tensor *args[1] = {y};
    tr_shadow_opts so;
    memset(&so, 0, sizeof so);
    so.init_undef = run < 2;
    tr_shadow_out *o = NULL;
    int no = 0;
    CHECK_EQ_INT(tr_eval_shadow(mod, &so, args, 1, &o, &no, &d), TR_OK);
    CHECK_EQ_INT(no, 2);
    if (no == 2) {
      CHECK_EQ_INT(o[0].uncertain[0], run == 0);
      CHECK_EQ_INT(o[1].uncertain[0], run == 0);
    }
    tr_shadow_free(o, no);
    tr_tensor_free(y);
  }
  tr_diag_clear(&d);
  if (mod) tr_module_free(mod);
}

/* The shadow outputs of mod on args as a target flushing the dtypes
 * marked in fl reads them (fl NULL: a plain target), *no of them,
 * CHECKing the evaluation. */
static tr_shadow_out *shadow_flushed(const tr_module *mod, tr_tensor **args, int nargs, const bool *fl, int *no,
                                     tr_diag *d) {
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.flush = fl;
  tr_shadow_out *o = NULL;
  *no = 0;
  CHECK_EQ_INT(tr_eval_shadow(mod, &so, args, nargs, &o, no, d), TR_OK);
  return o;
}

/* A flushing target (tr_shadow_opts.flush) may flush a dot's or a
 * convolution's denormal partial sums as it does a reduce's: 1.5m - m is
 * 0.5m, a denormal (m the smallest normal), flushed to 0, so the dot
 * (1.5m, -m, m) . (1, 1, 1) may be m instead of 1.5m (a 10-minute xla-cpu
 * campaign: an f32 convolution with lhs dilation 1 ulp of m off the
 * flushed reference). The flushing reference's bound reaches m; the plain
 * one's does not. */
TR_TEST(shadow_flush_dot_partials) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[3] parameter(0)\n  y = f32[3] parameter(1)\n"
                     "  ROOT d = f32[] dot(x, y), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n}\n";
  double m = ldexp(1.0, -126), vx[3] = {1.5 * m, -m, m}, vy[3] = {1, 1, 1};
  tr_tensor *args[2] = {vec(TR_DT_F32, 3, vx), vec(TR_DT_F32, 3, vy)};
  tr_diag d = {0};
  tr_module *mod = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(mod && tr_verify(mod, &d) == TR_OK);
  bool fl[TR_DT_COUNT] = {0};
  fl[TR_DT_F32] = true;
  for (int with = 0; with < 2 && mod; with++) {
    int no = 0;
    tr_shadow_out *o = shadow_flushed(mod, args, 2, with ? fl : NULL, &no, &d);
    if (no == 1) {
      CHECK(!o[0].uncertain[0]);
      CHECK_EQ_INT(fabs(o[0].value[0] - m) <= o[0].bound[0], with);
    }
    tr_shadow_free(o, no);
  }
  tr_diag_clear(&d);
  if (mod) tr_module_free(mod);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_flush_complex_parts) {
  /* c128 (-1e308i) * (5e-324i) (a 10-minute xla-cpu campaign, seed 20,
   * met it inside a larger product): the real part is 1e308 * 5e-324 =
   * 4.94e-16, but XLA CPU reads the denormal imaginary part as 0 (DAZ in
   * f64, the part type) and gives 0 (measured, jax 0.10.2). The flushing
   * reference gives that; the plain one does not; a profile flushing
   * only f32 leaves c128 alone. */
  const char *text = "HloModule m\nENTRY e {\n  x = c128[1] parameter(0)\n  y = c128[1] parameter(1)\n"
                     "  ROOT p = c128[1] multiply(x, y)\n}\n";
  int64_t dim = 1;
  tr_tensor *args[2] = {tr_tensor_new(TR_DT_C128, 1, &dim, NULL), tr_tensor_new(TR_DT_C128, 1, &dim, NULL)};
  tr_tensor_set_c(args[0], 0, 0.0, -1e308);
  tr_tensor_set_c(args[1], 0, 0.0, ldexp(1.0, -1074));
  tr_diag d = {0};
  tr_module *mod = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(mod && tr_verify(mod, &d) == TR_OK);
  bool f64[TR_DT_COUNT] = {0}, f32[TR_DT_COUNT] = {0};
  f64[TR_DT_F64] = true;
  f32[TR_DT_F32] = true;
  const bool *flush[3] = {NULL, f64, f32};
  for (int k = 0; k < 3 && mod; k++) {
    int no = 0;
    tr_shadow_out *o = shadow_flushed(mod, args, 2, flush[k], &no, &d);
    if (no == 1) {
      double re, im;
      tr_tensor_get_c(o[0].exact, 0, &re, &im);
      CHECK(!o[0].uncertain[0]);
      CHECK_EQ_INT(fabs(re) <= o[0].bound[0], k == 1); /* 0 is within the flushed reference only */
      CHECK(im == 0);
    }
    tr_shadow_free(o, no);
  }
  tr_diag_clear(&d);
  if (mod) tr_module_free(mod);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_flush_sort_keys) {
  /* A flushing target's sort compares keys as its compare reads them,
   * denormals as zeros: XLA CPU (jax 0.10.2, the seed-23 campaign) sorts
   * f32 [7.7e-39, 2.7e-39, inf, -6.6e-39] by LT to [7.7e-39, 2.7e-39,
   * -6.6e-39, inf]. The flushing reference gives that order (stable); the
   * plain one sorts the denormals by value. Without is_stable the flushed
   * ties may come in any order (uncertain); a TOTALORDER compare orders
   * the patterns (no flush). */
  double v[4] = {7.7e-39, 2.7e-39, INFINITY, -6.6e-39};
  double flushed[4] = {7.7e-39, 2.7e-39, -6.6e-39, INFINITY}, sorted[4] = {-6.6e-39, 2.7e-39, 7.7e-39, INFINITY};
  bool fl[TR_DT_COUNT] = {0};
  fl[TR_DT_F32] = true;
  for (int form = 0; form < 3; form++) { /* stable LT, unstable LT, stable TOTALORDER LT */
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\n"
             "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
             " ROOT r = pred[] compare(a, b), direction=LT%s }\n"
             "ENTRY e {\n  x = f32[4] parameter(0)\n"
             "  ROOT s = f32[4] sort(x), dimensions={0}%s, to_apply=lt\n}\n",
             form == 2 ? ", type=TOTALORDER" : "", form == 1 ? "" : ", is_stable=true");
    tr_diag d = {0};
    tr_module *mod = tr_parse("t.hlo", text, strlen(text), NULL, &d);
    CHECK(mod && tr_verify(mod, &d) == TR_OK);
    tr_tensor *args[1] = {vec(TR_DT_F32, 4, v)};
    for (int with = 0; with < 2 && mod; with++) {
      int no = 0;
      tr_shadow_out *o = shadow_flushed(mod, args, 1, with ? fl : NULL, &no, &d);
      CHECK_EQ_INT(no, 1);
      if (no == 1) {
        const double *want = with && form != 2 ? flushed : sorted;
        for (int i = 0; i < 4; i++) {
          CHECK(o[0].value[i] == (double)(float)want[i]);
          /* the three flushed ties, unstable: any order */
          CHECK_EQ_INT(o[0].uncertain[i], with && form == 1 && i < 3);
        }
      }
      tr_shadow_free(o, no);
    }
    tr_tensor_free(args[0]);
    tr_diag_clear(&d);
    if (mod) tr_module_free(mod);
  }
}

TR_TEST(shadow_flush_bf16_sort_keys) {
  /* XLA CPU sorts bf16 in f32 and its comparator converts each key back
   * to bf16, a convert that flushes: jax 0.10.2 orders bf16 [1e-40
   * (0x0001), 1.2e-38 (0x007f), -1e-40, +0, -0, 2^-126, -1.2e-38] as +0,
   * +0, -0, +0, -0, normal, -0, ties by position, under every comparator:
   * topk (seed-28 xla-cpu campaign, mismatch-topk-s32 and
   * mismatch-copy-s32), a stable sort by TOTALORDER LT, and one by LT of
   * the bitcast s16 patterns. The flushing reference gives those orders,
   * certain; the plain one orders the patterns. f32 keys reach the
   * comparator as they are: an f32 topk orders the denormals. */
  const double dn = ldexp(1.0, -133);
  double v[7] = {dn, 127 * dn, -dn, 0.0, -0.0, ldexp(1.0, -126), -127 * dn};
  static const char *const text[4] = {
      "HloModule m\nENTRY e {\n  x = bf16[7] parameter(0)\n"
      "  ROOT r = (bf16[7], s32[7]) topk(x), k=7, largest=true\n}\n",
      "HloModule m\nlt {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
      "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n"
      "ENTRY e {\n  x = bf16[7] parameter(0)\n  i = s32[7] iota(), iota_dimension=0\n"
      "  ROOT s = (bf16[7], s32[7]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n}\n",
      "HloModule m\nlt {\n  a = bf16[] parameter(0)\n  b = bf16[] parameter(1)\n"
      "  c = s32[] parameter(2)\n  d = s32[] parameter(3)\n"
      "  ia = s16[] bitcast-convert(a)\n  ib = s16[] bitcast-convert(b)\n"
      "  ROOT r = pred[] compare(ia, ib), direction=LT\n}\n"
      "ENTRY e {\n  x = bf16[7] parameter(0)\n  i = s32[7] iota(), iota_dimension=0\n"
      "  ROOT s = (bf16[7], s32[7]) sort(x, i), dimensions={0}, is_stable=true, to_apply=lt\n}\n",
      "HloModule m\nENTRY e {\n  x = f32[7] parameter(0)\n"
      "  ROOT r = (f32[7], s32[7]) topk(x), k=7, largest=true\n}\n"};
  /* [form][flushed?]: the index output */
  static const int want[4][2][7] = {{{5, 1, 0, 3, 4, 2, 6}, {5, 0, 1, 3, 2, 4, 6}},
                                    {{6, 2, 4, 3, 0, 1, 5}, {2, 4, 6, 0, 1, 3, 5}},
                                    {{4, 2, 6, 3, 0, 1, 5}, {2, 4, 6, 0, 1, 3, 5}},
                                    {{5, 1, 0, 3, 4, 2, 6}, {5, 1, 0, 3, 4, 2, 6}}};
  double vf[7];
  for (int i = 0; i < 7; i++) vf[i] = v[i] * 0x1p-3; /* f32 denormals, same order */
  vf[5] = ldexp(1.0, -126);
  bool fl[TR_DT_COUNT] = {0};
  fl[TR_DT_BF16] = fl[TR_DT_F32] = true;
  for (int form = 0; form < 4; form++) {
    tr_diag d = {0};
    tr_module *mod = tr_parse("t.hlo", text[form], strlen(text[form]), NULL, &d);
    CHECK(mod && tr_verify(mod, &d) == TR_OK);
    tr_tensor *args[1] = {form == 3 ? vec(TR_DT_F32, 7, vf) : vec(TR_DT_BF16, 7, v)};
    for (int with = 0; with < 2 && mod; with++) {
      int no = 0;
      tr_shadow_out *o = shadow_flushed(mod, args, 1, with ? fl : NULL, &no, &d);
      CHECK_EQ_INT(no, 2);
      if (no == 2)
        for (int i = 0; i < 7; i++) {
          CHECK_EQ_INT((int)tr_tensor_get_i(o[1].exact, (size_t)i), want[form][with][i]);
          CHECK(!o[1].uncertain[i]);
        }
      tr_shadow_free(o, no);
    }
    tr_tensor_free(args[0]);
    tr_diag_clear(&d);
    if (mod) tr_module_free(mod);
  }
}

TR_TEST(shadow_flush_total_order_compare) {
  /* A TOTALORDER compare orders bit patterns, denormals as they are:
   * XLA CPU (jax 0.10.2, with its denormal flush) has 1e-40 < 2e-40 by
   * TOTALORDER LT and 1e-40 < 2e-40 false by LT (both read as 0). The
   * flushing reference does the same. */
  const char *fmt[2] = {
      "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  y = f32[1] parameter(1)\n"
      "  ROOT c = pred[1] compare(x, y), direction=LT, type=TOTALORDER\n}\n",
      "HloModule m\nENTRY e {\n  x = f32[1] parameter(0)\n  y = f32[1] parameter(1)\n"
      "  ROOT c = pred[1] compare(x, y), direction=LT\n}\n"};
  double vx[1] = {1e-40}, vy[1] = {2e-40};
  tr_tensor *args[2] = {vec(TR_DT_F32, 1, vx), vec(TR_DT_F32, 1, vy)};
  bool fl[TR_DT_COUNT] = {0};
  fl[TR_DT_F32] = true;
  for (int k = 0; k < 2; k++) {
    tr_diag d = {0};
    tr_module *mod = tr_parse("t.hlo", fmt[k], strlen(fmt[k]), NULL, &d);
    CHECK(mod && tr_verify(mod, &d) == TR_OK);
    int no = 0;
    tr_shadow_out *o = mod ? shadow_flushed(mod, args, 2, fl, &no, &d) : NULL;
    if (no == 1) {
      CHECK(!o[0].uncertain[0]);
      CHECK_EQ_INT((int)tr_tensor_get_u(o[0].exact, 0), k == 0);
    }
    tr_shadow_free(o, no);
    tr_diag_clear(&d);
    if (mod) tr_module_free(mod);
  }
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_minmax_signed_zero_order) {
  /* -0 and +0 tie under max and min, and the combiner keeps the one it
   * meets first: a zero result with both among its terms has the sign of
   * the order, which a reduce leaves to the implementation and a scatter
   * with duplicate indices too (XLA CPU, a 10-minute campaign, seed 21:
   * a scatter-min gave -0 where the reference's order gives +0). Such an
   * element is uncertain; one with zeros of one sign is not. */
  const char *text =
      "HloModule m\n"
      "mn { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT r = f32[] minimum(a, b) }\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  one = f32[] constant(1)\n"
      "  r = f32[] reduce(x, one), dimensions={0}, to_apply=mn\n"
      "  o = f32[2] parameter(1)\n  ix = s32[4,1] constant({{1},{1},{0},{1}})\n"
      "  s = f32[2] scatter(o, ix, x), update_window_dims={}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mn\n"
      "  ROOT t = (f32[], f32[2]) tuple(r, s)\n}\n";
  double mixed[4] = {0.0, -0.0, 2, 0.0}, plain[4] = {0.0, 0.0, 2, 0.0}, ov[2] = {3, 3};
  for (int k = 0; k < 2; k++) {
    tr_tensor *args[2] = {vec(TR_DT_F32, 4, k ? plain : mixed), vec(TR_DT_F32, 2, ov)};
    both b;
    if (run_both(text, args, 2, &b, __LINE__) && b.nsh == 2) {
      CHECK_EQ_INT(b.sh[0].uncertain[0], k == 0); /* reduce: +0, -0, 2, +0 */
      CHECK_EQ_INT(b.sh[1].uncertain[1], k == 0); /* scatter into [1]: +0, -0, +0 */
      CHECK(!b.sh[1].uncertain[0]);               /* [0]: min(3, 2) */
    }
    both_free(&b);
    for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  }
}

TR_TEST(shadow_round_zero_either_sign) {
  /* 1e-30 * -1e-30 underflows: -1e-60 in the shadow, with half a
   * denormal of bound, so a correct f32 product is -0 or +0 and so is its
   * rounding, though the two are equal as numbers. atan2 of it over a
   * negative x is -pi or pi: uncertain (a clean builtin campaign, seed 9,
   * met it through a convolution of tiny values). A round of a value
   * away from zero keeps its sign and is judged. */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[2] parameter(0)\n  b = f32[2] parameter(1)\n"
                     "  p = f32[2] multiply(a, b)\n  r = f32[2] round-nearest-afz(p)\n"
                     "  m = f32[2] constant({-1, -1})\n  ROOT t = f32[2] atan2(r, m)\n}\n";
  double va[2] = {1e-30, 3}, vb[2] = {-1e-30, 0.25};
  tr_tensor *args[2] = {vec(TR_DT_F32, 2, va), vec(TR_DT_F32, 2, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]); /* round(0.75) = 1: atan2(1, -1) */
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_minmax_zero_tie_either_sign) {
  /* max and min of zeros of opposite signs tie: the exact interpreter
   * keeps the lhs (XLA's constant folder too), XLA CPU's code orders -0
   * below +0. The result gets one smallest denormal of bound, so a total
   * order compare of it is uncertain (a 10-minute xla-cpu campaign, seed
   * 22: an argmin by total order over flushed denormals); zeros of one
   * sign, or a zero and a number, stay exact. clamp likewise. */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
                     "  mn = f32[4] minimum(a, b)\n  mx = f32[4] maximum(a, b)\n"
                     "  o = f32[4] constant({1, 1, 1, 1})\n  c = f32[4] clamp(a, b, o)\n"
                     "  z = f32[4] constant({0, 0, 0, 0})\n"
                     "  lt = pred[4] compare(mn, z), direction=LT, type=TOTALORDER\n"
                     "  ROOT t = (f32[4], f32[4], f32[4], pred[4]) tuple(mn, mx, c, lt)\n}\n";
  double va[4] = {0.0, -0.0, 1, -0.0}, vb[4] = {-0.0, 0.0, -0.0, -0.0};
  tr_tensor *args[2] = {vec(TR_DT_F32, 4, va), vec(TR_DT_F32, 4, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    double tiny = ldexp(1.0, -149);
    for (int k = 0; k < 3; k++) {
      CHECK(b.sh[k].bound[0] == tiny && b.sh[k].bound[1] == tiny);
      CHECK(b.sh[k].bound[2] == 0 && b.sh[k].bound[3] == 0);
      for (int i = 0; i < 4; i++) CHECK(!b.sh[k].uncertain[i]);
    }
    CHECK(b.sh[3].uncertain[0] && b.sh[3].uncertain[1]);
    CHECK(!b.sh[3].uncertain[2] && !b.sh[3].uncertain[3]);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_reduce_multiply_rounding_overflow) {
  /* f8e4m3fn: 5 * 7 * 13 = 455 is below the overflow edge (464), but an
   * order that multiplies 5 * 7 first rounds to 36, and 36 * 13 = 468
   * overflows to NaN: the product is uncertain. 2 * 3 * 5 stays judged. */
  const char *text = "HloModule m\nmul {\n  a = f8e4m3fn[] parameter(0)\n  b = f8e4m3fn[] parameter(1)\n"
                     "  ROOT r = f8e4m3fn[] multiply(a, b)\n}\n"
                     "ENTRY e {\n  x = f8e4m3fn[2,3] parameter(0)\n  one = f8e4m3fn[] constant(1)\n"
                     "  ROOT p = f8e4m3fn[2] reduce(x, one), dimensions={1}, to_apply=mul\n}\n";
  double va[6] = {5, 7, 13, 2, 3, 5};
  int64_t dims[2] = {2, 3};
  tr_tensor *a = tr_tensor_new(TR_DT_F8E4M3FN, 2, dims, NULL);
  for (int i = 0; i < 6; i++) tr_tensor_set_f(a, (size_t)i, va[i]);
  both b;
  if (run_both(text, &a, 1, &b, __LINE__)) {
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]);
  }
  both_free(&b);
  tr_tensor_free(a);
}

TR_TEST(shadow_transcendental_propagation) {
  /* exp(s) with s = 1 + 2^-30 (bound 2^-24): the change of exp over
   * [s - e, s + e] is about e * exp(1), plus 6 ulps of f32 at e. */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n"
                     "  s = f32[1] add(a, b)\n  ROOT x = f32[1] exponential(s)\n}\n";
  double va = 1, vb = ldexp(1.0, -30);
  tr_tensor *args[2] = {vec(TR_DT_F32, 1, &va), vec(TR_DT_F32, 1, &vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    double want = U24 * exp(1.0) + 6 * ldexp(1.0, -22);
    CHECK(near(b.sh[0].bound[0], want, 1e-3));
    CHECK(!b.sh[0].uncertain[0]);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

/* ---- uncertain marks, both directions ---- */

/* float -> pred is x != 0: NaN converts to true, and a value whose
 * interval holds 0 (a product that rounds to 0 in f8e4m3fn) is uncertain
 * even though both ends of the interval convert to true. */
TR_TEST(shadow_convert_to_pred) {
  const char *text =
      "HloModule m\nENTRY e {\n  a = f8e4m3fn[3] constant({nan, 0.01, 2})\n"
      "  p = f8e4m3fn[3] multiply(a, a)\n  ROOT c = pred[3] convert(p)\n}\n";
  both b;
  if (run_both(text, NULL, 0, &b, __LINE__)) {
    CHECK(tr_tensor_get_u(b.sh[0].exact, 0) == 1 && !b.sh[0].uncertain[0]);
    CHECK(b.sh[0].uncertain[1]);
    CHECK(tr_tensor_get_u(b.sh[0].exact, 2) == 1 && !b.sh[0].uncertain[2]);
    CHECK(tr_tensor_get_u(b.ex[0], 0) == 1 && tr_tensor_get_u(b.ex[0], 1) == 0);
  }
  both_free(&b);
}

/* real and imag of a real value (the value, and zeros) in a module with
 * no complex value anywhere: certain, exact (the complex checks are
 * skipped in such a module, these three ops excepted). */
TR_TEST(shadow_real_imag_of_real) {
  const char *text =
      "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  r = f32[3] real(a)\n"
      "  i = f32[3] imag(a)\n  ROOT t = (f32[3], f32[3]) tuple(r, i)\n}\n";
  double v[3] = {1.5, -2, 0.25};
  tr_tensor *x = vec(TR_DT_F32, 3, v);
  both b;
  if (run_both(text, &x, 1, &b, __LINE__)) {
    for (int i = 0; i < 3; i++) {
      CHECK(!b.sh[0].uncertain[i] && b.sh[0].bound[i] == 0 && b.sh[0].value[i] == v[i]);
      CHECK(!b.sh[1].uncertain[i] && b.sh[1].bound[i] == 0 && b.sh[1].value[i] == 0);
    }
  }
  both_free(&b);
  tr_tensor_free(x);
}

/* A min or max scatter keeps the largest bound of the terms it chooses
 * between: a rounded tanh that wins over an exact update keeps its own
 * bound (the bounds were once combined with min, giving the update's 0). */
TR_TEST(shadow_scatter_min_keeps_bounds) {
  const char *text =
      "HloModule m\nmn { a = f16[] parameter(0)\n b = f16[] parameter(1)\n ROOT m = f16[] minimum(a, b) }\n"
      "ENTRY e {\n  x = f16[4] parameter(0)\n  t = f16[4] tanh(x)\n  i = s32[2,1] constant({ {1}, {3} })\n"
      "  u = f16[2] parameter(1)\n  s = f16[4] scatter(t, i, u), update_window_dims={},"
      " inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mn\n"
      "  ROOT r = (f16[4], f16[4]) tuple(t, s)\n}\n";
  double vx[4] = {0.3, 0.7, -0.5, 1.1}, vu[2] = {2, 3};
  tr_tensor *args[2] = {vec(TR_DT_F16, 4, vx), vec(TR_DT_F16, 2, vu)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    for (int i = 0; i < 4; i++) {
      CHECK(b.sh[1].value[i] == b.sh[0].value[i]);
      CHECK(b.sh[1].bound[i] >= b.sh[0].bound[i] && b.sh[1].bound[i] > 0);
    }
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

/* reduce-precision that keeps the exponent width still rounds the
 * pattern of a subnormal: 2 * 2^-149 with 7 mantissa bits is 0, so the
 * bound of a computed subnormal must reach it (the subnormal spacing of
 * the reduced format is 2^(emin - 7), not the source's 2^-149). */
TR_TEST(shadow_reduce_precision_subnormal) {
  const char *text =
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n  c = f32[2] constant({1e-45, 1e-40})\n"
      "  p = f32[2] multiply(c, x)\n  ROOT r = f32[2] reduce-precision(p), exponent_bits=8, mantissa_bits=7\n}\n";
  double vx[2] = {2.02, 1.7};
  tr_tensor *args[1] = {vec(TR_DT_F32, 2, vx)};
  both b;
  if (run_both(text, args, 1, &b, __LINE__)) {
    for (int i = 0; i < 2; i++) {
      double ex = tr_tensor_get_f(b.ex[0], (size_t)i);
      CHECK(b.sh[0].uncertain[i] || fabs(b.sh[0].value[i] - ex) <= b.sh[0].bound[i]);
    }
    CHECK(tr_tensor_get_f(b.ex[0], 0) == 0);
  }
  both_free(&b);
  tr_tensor_free(args[0]);
}

/* reduce-precision of a NaN to 0 mantissa bits: XLA's HloEvaluator gives
 * +inf, its CPU emitter and IREE keep the NaN, so the element is not
 * judged; with a mantissa bit left the NaN stays and is certain. */
TR_TEST(shadow_reduce_precision_nan_no_mantissa) {
  const char *t0 =
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
      "  ROOT r = f32[2] reduce-precision(x), exponent_bits=5, mantissa_bits=0\n}\n";
  const char *t1 =
      "HloModule m\nENTRY e {\n  x = f32[2] parameter(0)\n"
      "  ROOT r = f32[2] reduce-precision(x), exponent_bits=5, mantissa_bits=1\n}\n";
  double vx[2] = {NAN, 1.5};
  tr_tensor *args[1] = {vec(TR_DT_F32, 2, vx)};
  both b;
  if (run_both(t0, args, 1, &b, __LINE__)) {
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]);
  }
  both_free(&b);
  if (run_both(t1, args, 1, &b, __LINE__)) {
    CHECK(!b.sh[0].uncertain[0]);
    CHECK(isnan(b.sh[0].value[0]));
  }
  both_free(&b);
  tr_tensor_free(args[0]);
  /* an f16 subnormal reduced to f16's own 5/10: E flushes, CPU keeps */
  const char *t2 =
      "HloModule m\nENTRY e {\n  x = f16[2] parameter(0)\n"
      "  ROOT r = f16[2] reduce-precision(x), exponent_bits=5, mantissa_bits=10\n}\n";
  double vh[2] = {ldexp(1.0, -20), 1.5};
  tr_tensor *h[1] = {vec(TR_DT_F16, 2, vh)};
  if (run_both(t2, h, 1, &b, __LINE__)) {
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]);
  }
  both_free(&b);
  tr_tensor_free(h[0]);
}

/* A product reduce of inf with a term whose bound holds 0: the fuzzer's
 * reduce-precision to 2 exponent bits of expm1's 1.7e-29 gives 0 (the
 * shadow keeps 1.7e-29 with a bound of 1.5),
 * so inf * 0 * -1 is NaN while the shadow's values multiply to -inf. The
 * element must be uncertain, never a certain -inf. */
TR_TEST(shadow_reduce_product_inf_times_maybe_zero) {
  const char *text =
      "HloModule m\nmul {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
      "  ROOT m = f32[] multiply(a, b)\n}\nENTRY e {\n  x = f32[1,3] parameter(0)\n"
      "  y = f32[1,3] exponential-minus-one(x)\n"
      "  r = f32[1,3] reduce-precision(y), exponent_bits=2, mantissa_bits=1\n"
      "  one = f32[] constant(1)\n  ROOT p = f32[1] reduce(r, one), dimensions={1}, to_apply=mul\n}\n";
  double vx[3] = {1.1385647e+26, 1.6810504e-29, -2.0528463e+13}; /* expm1: inf, 1.7e-29, -1 */
  int64_t dims[2] = {1, 3};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 2, dims, NULL);
  for (int i = 0; i < 3; i++) tr_tensor_set_f(x, (size_t)i, vx[i]);
  tr_tensor *args[1] = {x};
  both b;
  if (run_both(text, args, 1, &b, __LINE__)) {
    CHECK(isnan(tr_tensor_get_f(b.ex[0], 0)));
    CHECK(b.sh[0].uncertain[0]);
  }
  both_free(&b);
  tr_tensor_free(x);
}

TR_TEST(shadow_marks_compare_floor_convert) {
  /* x = 3 + (-2^-25): the shadow is just below 3, the f32 result is 3,
   * and the bound (2^-23) reaches 3 on both sides. */
  const char *text =
      "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
      "  c = f32[3] parameter(2)\n  x = f32[3] add(a, b)\n"
      "  lt = pred[3] compare(x, c), direction=LT\n  fl = f32[3] floor(x)\n"
      "  cv = s32[3] convert(x)\n  one = s32[] constant(1)\n  ones = s32[3] broadcast(one), dimensions={}\n"
      "  inc = s32[3] add(cv, ones)\n  sel = f32[3] select(lt, a, c)\n"
      "  ROOT t = (pred[3], f32[3], s32[3], s32[3], f32[3]) tuple(lt, fl, cv, inc, sel)\n}\n";
  /* element 0 near 3; element 1: 2.75 (far from any step); element 2:
   * 3 - 2^-25 compared with 3.001 (far). */
  double va[3] = {3, 2.5, 3}, vb[3] = {-ldexp(1.0, -25), 0.25, -ldexp(1.0, -25)};
  double vc[3] = {3, 2, 3.001};
  tr_tensor *args[3] = {vec(TR_DT_F32, 3, va), vec(TR_DT_F32, 3, vb), vec(TR_DT_F32, 3, vc)};
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    /* compare: near 3 uncertain; 2.75 < 2 and 2.99999997 < 3.001 certain */
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]);
    CHECK(!b.sh[0].uncertain[2]);
    CHECK(tr_tensor_get_i(b.sh[0].exact, 1) == 0);
    CHECK(tr_tensor_get_i(b.sh[0].exact, 2) == 1);
    /* floor and convert of 2.99999997 +- 2^-23: uncertain; of 2.75: 2 */
    CHECK(b.sh[1].uncertain[0] && b.sh[2].uncertain[0]);
    CHECK(!b.sh[1].uncertain[1] && !b.sh[2].uncertain[1]);
    CHECK(b.sh[1].value[1] == 2 && b.sh[1].bound[1] == 0);
    CHECK(tr_tensor_get_i(b.sh[2].exact, 1) == 2);
    /* an integer computed from an uncertain one is uncertain */
    CHECK(b.sh[3].uncertain[0]);
    CHECK(!b.sh[3].uncertain[1]);
    CHECK(tr_tensor_get_i(b.sh[3].exact, 1) == 3);
    /* select on an uncertain predicate */
    CHECK(b.sh[4].uncertain[0]);
    CHECK(!b.sh[4].uncertain[1] && !b.sh[4].uncertain[2]);
    stats s = {0};
    contain(&b, &s, NULL);
    CHECK_EQ_INT(s.bad, 0);
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_marks_exact_inputs_are_certain) {
  /* Discontinuous ops on exact inputs decide exactly, ties included. */
  const char *text = "HloModule m\nENTRY e {\n  a = f32[3] parameter(0)\n  b = f32[3] parameter(1)\n"
                     "  eq = pred[3] compare(a, b), direction=EQ\n  fl = f32[3] floor(a)\n"
                     "  rn = f32[3] round-nearest-even(a)\n  cv = s32[3] convert(a)\n"
                     "  ROOT t = (pred[3], f32[3], f32[3], s32[3]) tuple(eq, fl, rn, cv)\n}\n";
  double va[3] = {3, 2.5, -0.5}, vb[3] = {3, 2, 1};
  tr_tensor *args[2] = {vec(TR_DT_F32, 3, va), vec(TR_DT_F32, 3, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    for (int i = 0; i < 4; i++) CHECK_EQ_INT(b.sh[i].nuncertain, 0);
    CHECK(tr_tensor_get_i(b.sh[0].exact, 0) == 1);
    CHECK(b.sh[2].value[1] == 2 && b.sh[2].value[2] == 0);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_marks_overflow_edge) {
  /* f16 products: 300*300 overflows whatever the rounding (certain inf),
   * 255*257 = 65535 is within an ulp of the overflow threshold 65520
   * (uncertain), 200*300 = 60000 is finite (certain). */
  const char *text = "HloModule m\nENTRY e {\n  a = f16[3] parameter(0)\n  b = f16[3] parameter(1)\n"
                     "  ROOT p = f16[3] multiply(a, b)\n}\n";
  double va[3] = {300, 255, 200}, vb[3] = {300, 257, 300};
  tr_tensor *args[2] = {vec(TR_DT_F16, 3, va), vec(TR_DT_F16, 3, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK(!b.sh[0].uncertain[0] && isinf(b.sh[0].value[0]));
    CHECK(b.sh[0].uncertain[1]);
    CHECK(!b.sh[0].uncertain[2] && b.sh[0].value[2] == 60000);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_nan_inf_rules) {
  /* Exact special results are certain with bound 0; a result whose
   * input interval reaches the domain's edge is uncertain. */
  const char *text =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n"
      "  c = f32[4] parameter(2)\n  lg = f32[4] log(a)\n  q = f32[4] divide(a, b)\n"
      "  ab = f32[4] add(a, b)\n  d = f32[4] subtract(ab, c)\n  sq = f32[4] sqrt(d)\n"
      "  pinf = f32[] constant(inf)\n  infs = f32[4] broadcast(pinf), dimensions={}\n"
      "  m = f32[4] add(d, infs)\n"
      "  ROOT t = (f32[4], f32[4], f32[4], f32[4]) tuple(lg, q, sq, m)\n}\n";
  /* d = a + b - c: element 2 is (1 + 2^-30) - 1 = 2^-30 with a bound of
   * 2^-24 that reaches below 0. */
  double va[4] = {-1, 0, 1, 2}, vb[4] = {1, 0, ldexp(1.0, -30), 0}, vc[4] = {0, 0, 1, 0};
  tr_tensor *args[3] = {vec(TR_DT_F32, 4, va), vec(TR_DT_F32, 4, vb), vec(TR_DT_F32, 4, vc)};
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    CHECK(isnan(b.sh[0].value[0]) && !b.sh[0].uncertain[0]);     /* log(-1) */
    CHECK(b.sh[0].value[1] == -INFINITY && !b.sh[0].uncertain[1]); /* log(0) */
    CHECK(isnan(b.sh[1].value[1]) && !b.sh[1].uncertain[1]);     /* 0/0 */
    CHECK(b.sh[1].value[3] == INFINITY && !b.sh[1].uncertain[3]); /* 2/0 */
    CHECK(b.sh[2].uncertain[2]);
    CHECK(!b.sh[2].uncertain[3] && !b.sh[2].uncertain[0]);
    /* finite + inf: inf whatever the finite error */
    CHECK(b.sh[3].value[2] == INFINITY && !b.sh[3].uncertain[2]);
    stats s = {0};
    contain(&b, &s, NULL);
    CHECK_EQ_INT(s.bad, 0);
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_marks_argmax) {
  /* An argmax reducer (compare + select on (value, index)) called in
   * shadow mode: a near tie within the bound makes the index uncertain;
   * a clear winner is certain. */
  const char *text =
      "HloModule m\n"
      "amax { a = f32[] parameter(0)\n ai = s32[] parameter(1)\n b = f32[] parameter(2)\n"
      " bi = s32[] parameter(3)\n ge = pred[] compare(a, b), direction=GE\n"
      " v = f32[] select(ge, a, b)\n i = s32[] select(ge, ai, bi)\n"
      " ROOT t = (f32[], s32[]) tuple(v, i) }\n"
      "ENTRY e {\n  a = f32[2,3] parameter(0)\n  b = f32[2,3] parameter(1)\n  x = f32[2,3] add(a, b)\n"
      "  io = s32[2,3] iota(), iota_dimension=1\n  ninf = f32[] constant(-inf)\n  z = s32[] constant(0)\n"
      "  r = (f32[2], s32[2]) reduce(x, io, ninf, z), dimensions={1}, to_apply=amax\n"
      "  ROOT i = s32[2] get-tuple-element(r), index=1\n}\n";
  /* row 0: 1 + 2^-30 vs 1 (tie within 2^-24); row 1: 2, 1, 0 */
  double va[6] = {1, 1, 0, 2, 1, 0}, vb[6] = {ldexp(1.0, -30), 0, 0, 0, 0, 0};
  int64_t dims[2] = {2, 3};
  tr_tensor *args[2] = {tr_tensor_new(TR_DT_F32, 2, dims, NULL), tr_tensor_new(TR_DT_F32, 2, dims, NULL)};
  for (int i = 0; i < 6; i++) {
    tr_tensor_set_f(args[0], (size_t)i, va[i]);
    tr_tensor_set_f(args[1], (size_t)i, vb[i]);
  }
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK(b.sh[0].uncertain[0]);
    CHECK(!b.sh[0].uncertain[1]);
    CHECK(tr_tensor_get_i(b.sh[0].exact, 1) == 0);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_moves_keep_bounds) {
  /* Data movement keeps each element's bound and mark; an uncertain
   * dynamic-slice start marks the whole result. */
  const char *text =
      "HloModule m\nENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  x = f32[4] add(a, b)\n"
      "  r = f32[4] reverse(x), dimensions={0}\n  t = f32[2,4] broadcast(r), dimensions={1}\n"
      "  s = f32[2,2] slice(t), slice={[0:2], [1:3]}\n"
      "  c = f32[1] slice(x), slice={[0:1]}\n  k = s32[1] convert(c)\n  k0 = s32[] reshape(k)\n"
      "  ds = f32[2] dynamic-slice(x, k0), dynamic_slice_sizes={2}\n"
      "  ROOT o = (f32[2,2], f32[2]) tuple(s, ds)\n}\n";
  double va[4] = {1, 2, 3, 4}, vb[4] = {-ldexp(1.0, -26), ldexp(1.0, -30), 0, 0};
  tr_tensor *args[2] = {vec(TR_DT_F32, 4, va), vec(TR_DT_F32, 4, vb)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    /* s[0][0] = r[1] = x[2] = 3 exactly: bound 0; s[0][1] = x[1] (rounded) */
    CHECK(b.sh[0].value[0] == 3 && b.sh[0].bound[0] == 0);
    CHECK(b.sh[0].bound[1] > 0 && b.sh[0].bound[3] == b.sh[0].bound[1]);
    CHECK_EQ_INT(b.sh[0].nuncertain, 0);
    /* convert(1 - 2^-26) is 0 or 1: the start is uncertain */
    CHECK_EQ_INT(b.sh[1].nuncertain, 2);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_ulp_table_is_data) {
  /* A wider table widens the bound: twice the add allowance, twice the
   * bound of a rounding add on exact inputs. */
  tr_ulp_table *t = malloc(sizeof *t);
  tr_ulp_table_default(t);
  CHECK(t->ulps[TR_OP_ADD][TR_DT_F32] == 0.5f);
  CHECK(t->ulps[TR_OP_MAXIMUM][TR_DT_F32] == 0);
  t->ulps[TR_OP_ADD][TR_DT_F32] = 1;
  const char *text = "HloModule m\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n"
                     "  ROOT s = f32[1] add(a, b)\n}\n";
  double va = 1, vb = ldexp(1.0, -30);
  tr_tensor *args[2] = {vec(TR_DT_F32, 1, &va), vec(TR_DT_F32, 1, &vb)};
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  tr_shadow_opts so = {0};
  so.ulps = t;
  tr_shadow_out *o = NULL;
  int n = 0;
  CHECK(m && tr_eval_shadow(m, &so, args, 2, &o, &n, &d) == TR_OK);
  if (o) CHECK(near(o[0].bound[0], 2 * U24, 1e-6));
  tr_shadow_free(o, n);
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  free(t);
}

TR_TEST(shadow_marks_sort) {
  /* argsort of x = a * b: a key within its bound of another key makes
   * both uncertain, the far ones stay certain; exact keys are certain. A
   * lexicographic comparator runs in shadow mode: any uncertain
   * comparison marks the row. */
  const char *text =
      "HloModule m\n"
      "lt { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ai = s32[] parameter(2)\n bi = s32[] parameter(3)\n"
      " ROOT l = pred[] compare(a, b), direction=LT }\n"
      "lex { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ai = s32[] parameter(2)\n bi = s32[] parameter(3)\n"
      " lt = pred[] compare(a, b), direction=LT\n eq = pred[] compare(a, b), direction=EQ\n"
      " il = pred[] compare(ai, bi), direction=LT\n t = pred[] and(eq, il)\n ROOT o = pred[] or(lt, t) }\n"
      "ENTRY e {\n  a = f32[2,4] parameter(0)\n  b = f32[2,4] parameter(1)\n  x = f32[2,4] multiply(a, b)\n"
      "  io = s32[2,4] iota(), iota_dimension=1\n"
      "  s = (f32[2,4], s32[2,4]) sort(x, io), dimensions={1}, to_apply=lt\n"
      "  l = (f32[2,4], s32[2,4]) sort(x, io), dimensions={1}, to_apply=lex\n"
      "  si = s32[2,4] get-tuple-element(s), index=1\n  li = s32[2,4] get-tuple-element(l), index=1\n"
      "  ROOT t = (s32[2,4], s32[2,4]) tuple(si, li)\n}\n";
  int64_t dims[2] = {2, 4};
  /* row 0: 5, (1+2^-23)(1-2^-24) = 1 + 2^-24 - 2^-47 [bound 2^-24], 1, 7;
   * row 1: exact products 1.4, 9, 1.2, 1 */
  double va[8] = {5, 1 + ldexp(1.0, -23), 1, 7, 1.4, 9, 1.2, 1};
  double vb[8] = {1, 1 - ldexp(1.0, -24), 1, 1, 1, 1, 1, 1};
  tr_tensor *args[2] = {tr_tensor_new(TR_DT_F32, 2, dims, NULL), tr_tensor_new(TR_DT_F32, 2, dims, NULL)};
  for (int i = 0; i < 8; i++) {
    tr_tensor_set_f(args[0], (size_t)i, va[i]);
    tr_tensor_set_f(args[1], (size_t)i, vb[i]);
  }
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    /* row 0 sorted: 1 (index 2), 1+ (index 1), 5, 7: the first two marked */
    const unsigned char *u = b.sh[0].uncertain;
    CHECK(u[0] && u[1] && !u[2] && !u[3]);
    CHECK(tr_tensor_get_i(b.sh[0].exact, 2) == 0 && tr_tensor_get_i(b.sh[0].exact, 3) == 3);
    /* row 1: exact products, all certain */
    CHECK(!u[4] && !u[5] && !u[6] && !u[7]);
    /* lexicographic: row 0 has an uncertain comparison */
    const unsigned char *w = b.sh[1].uncertain;
    CHECK(w[0] && w[1] && w[2] && w[3]);
    CHECK(!w[4] && !w[5] && !w[6] && !w[7]);
    stats st = {0};
    contain(&b, &st, NULL);
    CHECK_EQ_INT(st.bad, 0);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_control_flow) {
  /* while (x < limit) x += d: with 0.1 steps to 0.3 the last test is a
   * near tie, so the trip count (and everything after) is uncertain; to
   * 0.35 every test is clear and x carries the sum's bound. A conditional
   * on an uncertain predicate is uncertain too. */
  const char *text =
      "HloModule m\n"
      "cond { s = (f32[], f32[], f32[]) parameter(0)\n x = f32[] get-tuple-element(s), index=0\n"
      " l = f32[] get-tuple-element(s), index=2\n ROOT lt = pred[] compare(x, l), direction=LT }\n"
      "body { s = (f32[], f32[], f32[]) parameter(0)\n x = f32[] get-tuple-element(s), index=0\n"
      " d = f32[] get-tuple-element(s), index=1\n l = f32[] get-tuple-element(s), index=2\n"
      " y = f32[] add(x, d)\n ROOT t = (f32[], f32[], f32[]) tuple(y, d, l) }\n"
      "neg { p = f32[] parameter(0)\n ROOT n = f32[] negate(p) }\n"
      "id { p = f32[] parameter(0)\n ROOT c = f32[] copy(p) }\n"
      "ENTRY e {\n  z = f32[] constant(0)\n  d = f32[] parameter(0)\n  l = f32[] parameter(1)\n"
      "  s = (f32[], f32[], f32[]) tuple(z, d, l)\n"
      "  w = (f32[], f32[], f32[]) while(s), condition=cond, body=body\n"
      "  x = f32[] get-tuple-element(w), index=0\n  p = pred[] compare(x, l), direction=GE\n"
      "  c = f32[] conditional(p, x, x), true_computation=neg, false_computation=id\n"
      "  ROOT t = (f32[], f32[]) tuple(x, c)\n}\n";
  for (int k = 0; k < 2; k++) {
    tr_tensor *args[2] = {tr_tensor_new(TR_DT_F32, 0, NULL, NULL), tr_tensor_new(TR_DT_F32, 0, NULL, NULL)};
    tr_tensor_set_f(args[0], 0, 0.1);
    tr_tensor_set_f(args[1], 0, k == 0 ? 0.3 : 0.35);
    both b;
    if (run_both(text, args, 2, &b, __LINE__)) {
      if (k == 0) {
        CHECK(b.sh[0].uncertain[0] && b.sh[1].uncertain[0]);
      } else {
        CHECK(!b.sh[0].uncertain[0] && !b.sh[1].uncertain[0]);
        CHECK(b.sh[0].bound[0] > 0 && near(b.sh[1].value[0], -0.4, 1e-6));
      }
      stats st = {0};
      contain(&b, &st, NULL);
      CHECK_EQ_INT(st.bad, 0);
    }
    both_free(&b);
    for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  }
}

TR_TEST(shadow_scatter_and_fallback) {
  /* scatter-add of 0.5 and 0.25 onto element 1 (duplicates, any order):
   * 3 terms, bound 2 * 2^-24 * 2.75 (plus the double kernels' own). An op
   * without a rule (scatter with a multiply combiner) marks its floats
   * uncertain; a rule-less op on exact operands that leaves no choice
   * (bitcast-convert) is exact. */
  const char *text =
      "HloModule m\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "mul { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] multiply(a, b) }\n"
      "ENTRY e {\n  x = f32[4] parameter(0)\n  i = s32[2,1] constant({{1}, {1}})\n"
      "  u = f32[2] parameter(1)\n"
      "  s = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
      "  p = f32[4] scatter(x, i, u), update_window_dims={}, inserted_window_dims={0},"
      " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mul\n"
      "  b = s32[4] bitcast-convert(x)\n  f = f32[4] bitcast-convert(b)\n"
      "  ROOT t = (f32[4], f32[4], s32[4], f32[4]) tuple(s, p, b, f)\n}\n";
  double vx[4] = {1, 2, 3, 4}, vu[2] = {0.5, 0.25};
  tr_tensor *args[2] = {vec(TR_DT_F32, 4, vx), vec(TR_DT_F32, 2, vu)};
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    CHECK_EQ_INT(b.sh[0].nuncertain, 0);
    CHECK(b.sh[0].value[1] == 2.75 && near(b.sh[0].bound[1], 2 * U24 * 2.75, 1e-6));
    CHECK(b.sh[0].value[2] == 3 && b.sh[0].bound[2] < 1e-12);
    CHECK_EQ_INT(b.sh[1].nuncertain, 4);
    CHECK_EQ_INT(b.sh[2].nuncertain, 0);
    CHECK_EQ_INT(b.sh[3].nuncertain, 0);
    CHECK(b.sh[3].value[3] == 4 && b.sh[3].bound[3] == 0);
    stats st = {0};
    contain(&b, &st, NULL);
    CHECK_EQ_INT(st.bad, 0);
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_select_and_scatter) {
  /* Max-pool gradient over windows of 2: window 0 = {3, 1} picks 3
   * (certain, gets 0.5); window 1 = {x, 2} with x = 2 + 2^-30 rounding to
   * 2: a near tie within the bound, so both positions are uncertain. */
  const char *text =
      "HloModule m\n"
      "ge { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT g = pred[] compare(a, b), direction=GE }\n"
      "add { a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b) }\n"
      "ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  x = f32[4] add(a, b)\n"
      "  s = f32[2] parameter(2)\n  z = f32[] constant(0)\n"
      "  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2}, select=ge, scatter=add\n}\n";
  double va[4] = {3, 1, 2, 2}, vb[4] = {0, 0, ldexp(1.0, -30), 0}, vs[2] = {0.5, 0.25};
  tr_tensor *args[3] = {vec(TR_DT_F32, 4, va), vec(TR_DT_F32, 4, vb), vec(TR_DT_F32, 2, vs)};
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    const tr_shadow_out *o = &b.sh[0];
    CHECK(!o->uncertain[0] && !o->uncertain[1] && o->value[0] == 0.5 && o->value[1] == 0);
    CHECK(o->uncertain[2] && o->uncertain[3]);
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

/* ---- random programs ---- */

typedef struct {
  uint64_t s;
} rng;

static uint64_t next(rng *r) {
  uint64_t z = (r->s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static int pick(rng *r, int n) { return (int)(next(r) % (uint64_t)n); }
static double unif(rng *r) { return (double)(next(r) >> 11) * ldexp(1.0, -53); }
static double gauss(rng *r) {
  double u = unif(r) + 1e-300, v = unif(r);
  return sqrt(-2 * log(u)) * cos(6.283185307179586 * v);
}

#define NP 3  /* parameters */
#define SIDE 6 /* every value is DT[SIDE,SIDE] */

/* Appends a random program over DT[SIDE,SIDE] values: elementwise ops,
 * compare/select, clamp, dtype round trips, reductions, dot and
 * convolution. The root is a tuple of every value, so every instruction
 * is checked. */
static void gen_program(rng *r, const char *dt, int nops, tr_buf *b) {
  static const char *un[] = {"negate", "abs", "exponential", "log", "tanh", "logistic", "sqrt",
                             "sine", "cosine", "floor", "ceil", "round-nearest-even",
                             "round-nearest-afz", "sign", "rsqrt", "cbrt", "exponential-minus-one",
                             "log-plus-one", "erf", "tan"};
  static const char *bin[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum",
                              "power", "atan2", "remainder", "add", "multiply", "subtract"};
  static const char *dirs[] = {"LT", "LE", "GT", "GE", "EQ", "NE"};
  const char *other = strcmp(dt, "bf16") == 0 ? "f16" : "bf16";
  tr_buf_printf(b, "HloModule rnd\n");
  tr_buf_printf(b, "add_r { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] add(a, b) }\n", dt, dt, dt);
  tr_buf_printf(b, "max_r { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] maximum(a, b) }\n", dt, dt, dt);
  tr_buf_printf(b, "lt_r { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ai = s32[] parameter(2)\n"
                " bi = s32[] parameter(3)\n ROOT l = pred[] compare(a, b), direction=LT }\n", dt, dt);
  tr_buf_printf(b, "ge_r { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT g = pred[] compare(a, b), "
                "direction=GE }\n", dt, dt);
  /* lexicographic on (key, index): not a single compare, so called */
  tr_buf_printf(b, "lex_r { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ai = s32[] parameter(2)\n"
                " bi = s32[] parameter(3)\n gt = pred[] compare(a, b), direction=GT\n"
                " eq = pred[] compare(a, b), direction=EQ\n il = pred[] compare(ai, bi), direction=LT\n"
                " t = pred[] and(eq, il)\n ROOT o = pred[] or(gt, t) }\n", dt, dt);
  tr_buf_printf(b, "ENTRY e {\n");
  for (int i = 0; i < NP; i++) tr_buf_printf(b, "  v%d = %s[%d,%d] parameter(%d)\n", i, dt, SIDE, SIDE, i);
  /* The max reducer's init: -inf, or the lowest value where the format
   * has no inf (e8m0 has no negatives: 2^-127). */
  tr_dtype dtv = TR_DT_F32;
  tr_dtype_lookup(dt, strlen(dt), &dtv);
  char ninf[40] = "-inf";
  if (!tr_float_has_inf(dtv))
    snprintf(ninf, sizeof ninf, "%.17g",
             tr_dtypes[dtv].fstyle == TR_FS_E8M0 ? ldexp(1.0, -127) : -tr_float_max(dtv));
  const char *zero = tr_dtypes[dtv].fstyle == TR_FS_E8M0 ? ninf : "0"; /* e8m0 has no 0 */
  tr_buf_printf(b, "  zero = %s[] constant(%s)\n  ninf = %s[] constant(%s)\n", dt, zero, dt, ninf);
  tr_buf_printf(b, "  io = s32[%d,%d] iota(), iota_dimension=1\n", SIDE, SIDE);
  tr_buf extra = {0}; /* non-float values for the root tuple: "type\tname" lines */
  int nv = NP;
  const char *S = dt;
  for (int k = 0; k < nops; k++) {
    int a = pick(r, nv), c = pick(r, nv), d = pick(r, nv), e = pick(r, nv);
    int kind = pick(r, 100);
    if (kind < 25) {
      tr_buf_printf(b, "  v%d = %s[%d,%d] %s(v%d)\n", nv, S, SIDE, SIDE, un[pick(r, 20)], a);
    } else if (kind < 50) {
      tr_buf_printf(b, "  v%d = %s[%d,%d] %s(v%d, v%d)\n", nv, S, SIDE, SIDE, bin[pick(r, 12)], a, c);
    } else if (kind < 58) {
      tr_buf_printf(b, "  cp%d = pred[%d,%d] compare(v%d, v%d), direction=%s\n", nv, SIDE, SIDE, a, c, dirs[pick(r, 6)]);
      tr_buf_printf(b, "  v%d = %s[%d,%d] select(cp%d, v%d, v%d)\n", nv, S, SIDE, SIDE, nv, d, e);
    } else if (kind < 62) {
      tr_buf_printf(b, "  v%d = %s[%d,%d] clamp(v%d, v%d, v%d)\n", nv, S, SIDE, SIDE, a, c, d);
    } else if (kind < 67) {
      if (pick(r, 2)) {
        tr_buf_printf(b, "  cw%d = %s[%d,%d] convert(v%d)\n", nv, other, SIDE, SIDE, a);
        tr_buf_printf(b, "  v%d = %s[%d,%d] convert(cw%d)\n", nv, S, SIDE, SIDE, nv);
      } else {
        tr_buf_printf(b, "  v%d = %s[%d,%d] reduce-precision(v%d), exponent_bits=4, mantissa_bits=3\n", nv, S,
                      SIDE, SIDE, a);
      }
    } else if (kind < 77) {
      bool mx = pick(r, 3) == 0;
      int dim = pick(r, 2);
      tr_buf_printf(b, "  rd%d = %s[%d] reduce(v%d, %s), dimensions={%d}, to_apply=%s\n", nv, S, SIDE, a,
                    mx ? "ninf" : "zero", dim, mx ? "max_r" : "add_r");
      tr_buf_printf(b, "  v%d = %s[%d,%d] broadcast(rd%d), dimensions={%d}\n", nv, S, SIDE, SIDE, nv, 1 - dim);
    } else if (kind < 87) {
      tr_buf_printf(b, "  v%d = %s[%d,%d] dot(v%d, v%d), lhs_contracting_dims={1}, rhs_contracting_dims={%d}\n",
                    nv, S, SIDE, SIDE, a, c, pick(r, 2));
    } else if (kind < 95) {
      tr_buf_printf(b, "  cx%d = %s[1,%d,%d,1] reshape(v%d)\n", nv, S, SIDE, SIDE, a);
      tr_buf_printf(b, "  cs%d = %s[3,3] slice(v%d), slice={[0:3], [1:4]}\n", nv, S, c);
      tr_buf_printf(b, "  ck%d = %s[3,3,1,1] reshape(cs%d)\n", nv, S, nv);
      tr_buf_printf(b, "  cy%d = %s[1,%d,%d,1] convolution(cx%d, ck%d), window={size=3x3 pad=1_1x1_1}, "
                    "dim_labels=b01f_01io->b01f\n", nv, S, SIDE, SIDE, nv, nv);
      tr_buf_printf(b, "  v%d = %s[%d,%d] reshape(cy%d)\n", nv, S, SIDE, SIDE, nv);
    } else if (kind < 94) {
      tr_buf_printf(b, "  v%d = %s[%d,%d] transpose(v%d), dimensions={1,0}\n", nv, S, SIDE, SIDE, a);
    } else if (kind < 96) {
      /* argsort, by one compare (fast path) or lexicographically (calls) */
      tr_buf_printf(b, "  so%d = (%s[%d,%d], s32[%d,%d]) sort(v%d, io), dimensions=%s, to_apply=%s\n", nv, S,
                    SIDE, SIDE, SIDE, SIDE, a, "{1}", pick(r, 2) ? "lt_r" : "lex_r");
      tr_buf_printf(b, "  v%d = %s[%d,%d] get-tuple-element(so%d), index=0\n", nv, S, SIDE, SIDE, nv);
      tr_buf_printf(b, "  si%d = s32[%d,%d] get-tuple-element(so%d), index=1\n", nv, SIDE, SIDE, nv);
      tr_buf_printf(&extra, ", si%d", nv);
    } else if (kind < 98) {
      /* pooling: 2x3 windows, padded to keep the shape, dilated by 2 */
      bool mx = pick(r, 2) == 0;
      tr_buf_printf(b, "  v%d = %s[%d,%d] reduce-window(v%d, %s), window={size=2x3 pad=1_0x2_2 rhs_dilate=1x2}, "
                    "to_apply=%s\n", nv, S, SIDE, SIDE, a, mx ? "ninf" : "zero", mx ? "max_r" : "add_r");
    } else if (kind < 99 && pick(r, 2)) {
      /* max-pool gradient: 2x2 windows, stride 2, padded on the right */
      tr_buf_printf(b, "  cg%d = %s[3,3] slice(v%d), slice={[0:3], [2:5]}\n", nv, S, c);
      tr_buf_printf(b, "  v%d = %s[%d,%d] select-and-scatter(v%d, cg%d, zero), window={size=2x3 stride=2x2 "
                    "pad=0_0x0_1}, select=ge_r, scatter=add_r\n", nv, S, SIDE, SIDE, a, nv);
    } else if (kind < 99) {
      /* scatter-add of 3 rows onto rows 1, 4, 1 (a duplicate) */
      tr_buf_printf(b, "  ci%d = s32[3,1] constant({{1}, {4}, {1}})\n", nv);
      tr_buf_printf(b, "  cu%d = %s[3,%d] slice(v%d), slice={[0:3], [0:%d]}\n", nv, S, SIDE, c, SIDE);
      tr_buf_printf(b, "  v%d = %s[%d,%d] scatter(v%d, ci%d, cu%d), update_window_dims={1}, "
                    "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, "
                    "to_apply=%s\n", nv, S, SIDE, SIDE, a, nv, nv, pick(r, 3) ? "add_r" : "max_r");
    } else {
      tr_buf_printf(b, "  cq%d = %s[] constant(1.5)\n", nv, S);
      tr_buf_printf(b, "  v%d = %s[%d,%d] broadcast(cq%d), dimensions={}\n", nv, S, SIDE, SIDE, nv);
    }
    nv++;
  }
  int nextra = 0;
  for (const char *q = tr_buf_str(&extra); *q; q++) nextra += *q == ',';
  tr_buf_printf(b, "  ROOT t = (");
  for (int i = 0; i < nv; i++) tr_buf_printf(b, "%s%s[%d,%d]", i ? ", " : "", S, SIDE, SIDE);
  for (int i = 0; i < nextra; i++) tr_buf_printf(b, ", s32[%d,%d]", SIDE, SIDE);
  tr_buf_printf(b, ") tuple(");
  for (int i = 0; i < nv; i++) tr_buf_printf(b, "%sv%d", i ? ", " : "", i);
  tr_buf_printf(b, "%s)\n}\n", tr_buf_str(&extra));
  tr_buf_free(&extra);
}

/* Inputs: mostly N(0,1), some quarters (exact ties and integers), some
 * large or tiny magnitudes. */
static tr_tensor *random_input(rng *r, tr_dtype dt) {
  int64_t dims[2] = {SIDE, SIDE};
  tr_tensor *t = tr_tensor_new(dt, 2, dims, NULL);
  int style = pick(r, 4);
  for (size_t i = 0; i < tr_tensor_count(t); i++) {
    double v;
    if (style == 0) v = (double)(pick(r, 17) - 8) / 4;
    else if (style == 3 && pick(r, 4) == 0) v = gauss(r) * ldexp(1.0, pick(r, 20) - 10);
    else v = gauss(r);
    tr_tensor_set_f(t, i, v);
  }
  return t;
}

TR_TEST(shadow_property_random_programs) {
  /* Thousands of random programs over f32, bf16, f16 and f64: every certain
   * element of every instruction lies within its bound. */
  static const tr_dtype dts[4] = {TR_DT_F32, TR_DT_BF16, TR_DT_F16, TR_DT_F64};
  /* TRENCH_SHADOW_PROGRAMS and TRENCH_SHADOW_SEED run a longer search. */
  const char *np = getenv("TRENCH_SHADOW_PROGRAMS"), *sd = getenv("TRENCH_SHADOW_SEED");
  int want = np ? atoi(np) : 3000;
  rng r = {sd ? strtoull(sd, NULL, 0) : 12345};
  stats s = {0};
  int programs = 0, nfail = 0;
  double worst_dt[4] = {0, 0, 0, 0};
  for (int p = 0; p < want && nfail < 3; p++) {
    int di = p % 4;
    tr_buf b = {0};
    gen_program(&r, tr_dtype_name(dts[di]), 4 + pick(&r, 12), &b);
    tr_tensor *args[NP];
    for (int i = 0; i < NP; i++) args[i] = random_input(&r, dts[di]);
    both bb;
    long before = s.bad;
    double w = s.worst;
    s.worst = 0;
    if (run_both(tr_buf_str(&b), args, NP, &bb, __LINE__)) {
      contain(&bb, &s, tr_buf_str(&b));
      programs++;
    } else {
      nfail++;
    }
    if (s.worst > worst_dt[di]) worst_dt[di] = s.worst;
    if (w > s.worst) s.worst = w;
    if (s.bad > before) nfail++;
    both_free(&bb);
    for (int i = 0; i < NP; i++) tr_tensor_free(args[i]);
    tr_buf_free(&b);
  }
  CHECK_EQ_INT(s.bad, 0);
  CHECK(programs >= want - want / 30);
  /* The marks are for edges, not the common case. */
  CHECK(s.uncertain < s.checked / 4);
  printf("  shadow property: %d programs, %ld elements checked, %ld uncertain, max |err|/bound "
         "f32 %.3g bf16 %.3g f16 %.3g f64 %.3g\n",
         programs, s.checked, s.uncertain, worst_dt[0], worst_dt[1], worst_dt[2], worst_dt[3]);
}

TR_TEST(shadow_complex_marks) {
  /* Add, subtract, negate, real, imag, complex and EQ compares of exact
   * c64 operands have one correct result (certain, bound 0); multiply,
   * abs, divide and exp are certain with a bound (src/eval/shadow_complex.c;
   * tests/unit/test_shadow_complex.c tests those rules). */
  const char *text = "HloModule m\nENTRY e {\n  a = c64[2] parameter(0)\n  b = c64[2] parameter(1)\n"
                     "  s = c64[2] add(a, b)\n  p = c64[2] multiply(a, b)\n  q = c64[2] divide(a, b)\n"
                     "  n = c64[2] negate(a)\n  r = f32[2] real(p)\n  i = f32[2] imag(a)\n"
                     "  ab = f32[2] abs(a)\n  x = c64[2] exponential(a)\n  c = c64[2] complex(i, i)\n"
                     "  eq = pred[2] compare(a, b), direction=EQ\n"
                     "  ROOT t = (c64[2], c64[2], c64[2], c64[2], f32[2], f32[2], f32[2], c64[2], c64[2], pred[2]) "
                     "tuple(s, p, q, n, r, i, ab, x, c, eq)\n}\n";
  int64_t dims[1] = {2};
  tr_tensor *args[2] = {tr_tensor_new(TR_DT_C64, 1, dims, NULL), tr_tensor_new(TR_DT_C64, 1, dims, NULL)};
  tr_tensor_set_c(args[0], 0, 1, 2);
  tr_tensor_set_c(args[0], 1, 0.1, -3);
  tr_tensor_set_c(args[1], 0, 1, 2);
  tr_tensor_set_c(args[1], 1, 7, 0.25);
  both b;
  if (run_both(text, args, 2, &b, __LINE__)) {
    /* s, p (bounded), q (bounded), n, r (bounded), i, ab (bounded), x (bounded), c, eq */
    static const int certain[10] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1};
    for (int o = 0; o < 10; o++)
      for (size_t j = 0; j < 2; j++) CHECK_EQ_INT(b.sh[o].uncertain[j], !certain[o]);
    stats s = {0};
    contain(&b, &s, NULL); /* the certain ones equal the exact run */
    CHECK_EQ_INT(s.bad, 0);
    CHECK_EQ_INT(s.checked, 20);
    double re, im;
    tr_tensor_get_c(b.sh[0].exact, 1, &re, &im);
    CHECK(re == (double)(0.1f + 7.0f) && im == -2.75);
    /* Exact operands: add is exact (bound 0); multiply of (1, 2) and
     * (1, 2): X = Y = 3, bound 6 u X Y + 4 tiny plus the reference's own
     * distance from -3 + 4i (0): 54 * 2^-24. */
    CHECK(b.sh[0].bound[0] == 0);
    CHECK(near(b.sh[1].bound[0], 54 * U24, 1e-6));
    CHECK(near(b.sh[4].bound[0], 54 * U24, 1e-6)); /* real(p) keeps it */
    /* (1, 2) / (1, 2) = 1 exactly: only the divide allowance 8u |x|/|y|. */
    CHECK(near(b.sh[2].bound[0], 8 * U24, 1e-6));
  }
  both_free(&b);
  for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_complex_bounds_hold) {
  /* Random chains of c64 add, subtract, multiply, negate, dot, real, imag,
   * abs and complex: on every certain element another correct implementation
   * lies within the bound around the c64 reference. The other one computes
   * each op exactly (c128, exact mode) and rounds its result to c64 once
   * per part: a different multiply formula and a dot summed exactly. */
  rng r = {4242};
  static const char *bin[] = {"add", "subtract", "multiply"};
  long checked = 0, bad = 0;
  for (int p = 0; p < 60 && bad == 0; p++) {
    tr_buf b[2] = {{0}, {0}};
    for (int w = 0; w < 2; w++) {
      const char *C = w ? "c128" : "c64";
      tr_buf_printf(&b[w], "HloModule m\nENTRY e {\n  v0 = %s[4] parameter(0)\n  v1 = %s[4] parameter(1)\n", C, C);
    }
    rng save = r;
    for (int w = 0; w < 2; w++) {
      r = save;
      const char *C = w ? "c128" : "c64", *F = w ? "f64" : "f32";
      int nv = 2, nops = 3 + pick(&r, 6);
      /* c128: each result is w<N>, rounded to c64 and back as v<N>. */
      const char *V = w ? "w" : "v";
      for (int k = 0; k < nops; k++, nv++) {
        int a = pick(&r, nv), c2 = pick(&r, nv), kind = pick(&r, 10);
        if (kind < 6)
          tr_buf_printf(&b[w], "  %s%d = %s[4] %s(v%d, v%d)\n", V, nv, C, bin[pick(&r, 3)], a, c2);
        else if (kind < 7)
          tr_buf_printf(&b[w], "  %s%d = %s[4] negate(v%d)\n", V, nv, C, a);
        else if (kind < 8)
          tr_buf_printf(&b[w], "  re%d = %s[4] real(v%d)\n  im%d = %s[4] imag(v%d)\n"
                        "  %s%d = %s[4] complex(im%d, re%d)\n", nv, F, a, nv, F, c2, V, nv, C, nv, nv);
        else if (kind < 9)
          tr_buf_printf(&b[w], "  ab%d = %s[4] abs(v%d)\n  im%d = %s[4] imag(v%d)\n"
                        "  %s%d = %s[4] complex(ab%d, im%d)\n", nv, F, a, nv, F, c2, V, nv, C, nv, nv);
        else
          tr_buf_printf(&b[w], "  d%d = %s[] dot(v%d, v%d), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
                        "  %s%d = %s[4] broadcast(d%d), dimensions={}\n", nv, C, a, c2, V, nv, C, nv);
        if (w)
          tr_buf_printf(&b[w], "  n%d = c64[4] convert(w%d)\n  v%d = c128[4] convert(n%d)\n", nv, nv, nv, nv);
      }
      tr_buf_printf(&b[w], "  ROOT t = %s[4] copy(v%d)\n}\n", C, nv - 1);
    }
    int64_t dims[1] = {4};
    tr_tensor *a64[2], *a128[2];
    for (int k = 0; k < 2; k++) {
      a64[k] = tr_tensor_new(TR_DT_C64, 1, dims, NULL);
      a128[k] = tr_tensor_new(TR_DT_C128, 1, dims, NULL);
      for (size_t i = 0; i < 4; i++) {
        double re = (double)(float)gauss(&r), im = (double)(float)gauss(&r);
        tr_tensor_set_c(a64[k], i, re, im);
        tr_tensor_set_c(a128[k], i, re, im);
      }
    }
    both bb;
    tr_tensor **t128 = NULL;
    int n128 = 0;
    tr_diag d = {0};
    tr_module *m128 = tr_parse("t.hlo", tr_buf_str(&b[1]), strlen(tr_buf_str(&b[1])), NULL, &d);
    bool ok128 = m128 && tr_eval(m128, a128, 2, &t128, &n128, &d) == TR_OK;
    CHECK(ok128);
    if (ok128 && run_both(tr_buf_str(&b[0]), a64, 2, &bb, __LINE__)) {
      const tr_shadow_out *o = &bb.sh[0];
      for (size_t i = 0; i < o->n; i++) {
        if (o->uncertain[i]) continue;
        double rr, ri, tr, ti;
        tr_tensor_get_c(o->exact, i, &rr, &ri);
        tr_tensor_get_c(t128[0], i, &tr, &ti);
        double bd = o->bound ? o->bound[i] : 0;
        checked++;
        if (!(fabs(rr - tr) <= bd && fabs(ri - ti) <= bd)) {
          if (bad++ == 0)
            fprintf(stderr, "  element %zu: c64 (%.9g, %.9g) bound %.3g, c128 (%.17g, %.17g)\n%s\n", i, rr, ri,
                    bd, tr, ti, tr_buf_str(&b[0]));
        }
      }
      both_free(&bb);
    }
    tr_eval_free_outputs(t128, n128);
    if (m128) tr_module_free(m128);
    tr_diag_clear(&d);
    for (int k = 0; k < 2; k++) {
      tr_tensor_free(a64[k]);
      tr_tensor_free(a128[k]);
      tr_buf_free(&b[k]);
    }
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(checked > 150);
  printf("  shadow complex: %ld certain c64 elements hold the c128 result within their bound\n", checked);
}

TR_TEST(shadow_property_narrow_formats) {
  /* The same random programs over every non-core real float format: the
   * exact interpreter's result (one rounding per op with the format's own
   * NaN, inf, saturation, fnuz and e8m0 rules) lies within the shadow's
   * bound on every certain element. */
  static const tr_dtype dts[] = {TR_DT_F8E4M3, TR_DT_F8E3M4, TR_DT_F8E4M3FNUZ, TR_DT_F8E5M2FNUZ,
                                 TR_DT_F8E4M3B11FNUZ, TR_DT_F8E8M0FNU, TR_DT_F4E2M1FN,
                                 TR_DT_F6E3M2FN, TR_DT_F6E2M3FN};
  enum { NDT = sizeof dts / sizeof dts[0], PER = 40 };
  rng r = {777};
  for (int di = 0; di < NDT; di++) {
    stats s = {0};
    int programs = 0, nfail = 0;
    for (int p = 0; p < PER && nfail < 3; p++) {
      tr_buf b = {0};
      gen_program(&r, tr_dtype_name(dts[di]), 4 + pick(&r, 12), &b);
      tr_tensor *args[NP];
      for (int i = 0; i < NP; i++) args[i] = random_input(&r, dts[di]);
      both bb;
      long before = s.bad;
      if (run_both(tr_buf_str(&b), args, NP, &bb, __LINE__)) {
        contain(&bb, &s, tr_buf_str(&b));
        programs++;
      } else {
        nfail++;
      }
      if (s.bad > before) nfail++;
      both_free(&bb);
      for (int i = 0; i < NP; i++) tr_tensor_free(args[i]);
      tr_buf_free(&b);
    }
    if (s.bad) fprintf(stderr, "  in %s\n", tr_dtype_name(dts[di]));
    CHECK_EQ_INT(s.bad, 0);
    CHECK_EQ_INT(programs, PER);
    CHECK(s.checked > 0);
    printf("  shadow narrow %s: %d programs, %ld checked, %ld uncertain, max |err|/bound %.3g\n",
           tr_dtype_name(dts[di]), programs, s.checked, s.uncertain, s.worst);
  }
}

/* x rounded to dt. */
static double rnd_to(tr_dtype dt, double x) { return tr_float_to_double(dt, tr_float_from_double(dt, x)); }

static int cmp_abs(const void *a, const void *b) {
  double x = fabs(*(const double *)a), y = fabs(*(const double *)b);
  return (x > y) - (x < y);
}

/* Sums v[0..n) in dt with a rounding after every addition, in one of
 * several orders: forward, backward, pairwise, by increasing magnitude, in
 * 8 interleaved lanes. */
static double sum_order(tr_dtype dt, const double *v, int n, int order) {
  double *w = malloc(sizeof(double) * (size_t)n);
  memcpy(w, v, sizeof(double) * (size_t)n);
  double s = 0;
  if (order == 0) {
    for (int i = 0; i < n; i++) s = rnd_to(dt, s + w[i]);
  } else if (order == 1) {
    for (int i = n - 1; i >= 0; i--) s = rnd_to(dt, s + w[i]);
  } else if (order == 2) {
    /* pairwise: a tree of rounded additions */
    int len = n;
    while (len > 1) {
      int h = 0;
      for (int i = 0; i + 1 < len; i += 2) w[h++] = rnd_to(dt, w[i] + w[i + 1]);
      if (len & 1) w[h++] = w[len - 1];
      len = h;
    }
    s = w[0];
  } else if (order == 3) {
    qsort(w, (size_t)n, sizeof(double), cmp_abs);
    for (int i = 0; i < n; i++) s = rnd_to(dt, s + w[i]);
  } else {
    double lane[8] = {0};
    for (int i = 0; i < n; i++) lane[i % 8] = rnd_to(dt, lane[i % 8] + w[i]);
    for (int i = 0; i < 8; i++) s = rnd_to(dt, s + lane[i]);
  }
  free(w);
  return s;
}

TR_TEST(shadow_sum_bound_any_order) {
  /* The reduce bound is order-free: sums of the same terms in five orders,
   * each rounding every addition to the dtype, stay within it. */
  static const tr_dtype dts[3] = {TR_DT_F32, TR_DT_BF16, TR_DT_F16};
  rng r = {99};
  double worst = 0;
  int sums = 0;
  for (int t = 0; t < 60; t++) {
    tr_dtype dt = dts[t % 3];
    int n = 16 + pick(&r, 500);
    double *v = malloc(sizeof(double) * (size_t)n);
    for (int i = 0; i < n; i++) v[i] = rnd_to(dt, gauss(&r) + (t % 2 ? 0.5 : 0));
    char text[512];
    snprintf(text, sizeof text,
             "HloModule m\nadd { a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] add(a, b) }\n"
             "ENTRY e {\n  x = %s[%d] parameter(0)\n  z = %s[] constant(0)\n"
             "  ROOT r = %s[] reduce(x, z), dimensions={0}, to_apply=add\n}\n",
             tr_dtype_name(dt), tr_dtype_name(dt), tr_dtype_name(dt), tr_dtype_name(dt), n, tr_dtype_name(dt),
             tr_dtype_name(dt));
    tr_tensor *x = vec(dt, n, v);
    both b;
    if (run_both(text, &x, 1, &b, __LINE__)) {
      double sv = b.sh[0].value[0], bd = b.sh[0].bound[0];
      CHECK(!b.sh[0].uncertain[0]);
      for (int o = 0; o < 5; o++) {
        double got = sum_order(dt, v, n, o);
        double ratio = fabs(got - sv) / bd;
        if (ratio > worst) worst = ratio;
        if (!(fabs(got - sv) <= bd))
          fprintf(stderr, "  %s n=%d order %d: %.9g vs shadow %.9g bound %.3g\n", tr_dtype_name(dt), n, o, got,
                  sv, bd);
        CHECK(fabs(got - sv) <= bd);
        sums++;
      }
    }
    both_free(&b);
    tr_tensor_free(x);
    free(v);
  }
  printf("  shadow sums: %d sums in 5 orders within the bound, max |err|/bound %.3g\n", sums, worst);
}

/* Whether some values within the bounds make op(x[, y]) differ from
 * others: the independent statement of "a perturbation within the bound
 * flips it". */
static bool flips_cmp(const char *dir, double x, double bx, double y, double by) {
  double xl = x - bx, xh = x + bx, yl = y - by, yh = y + by;
  bool can_lt = xl < yh, can_ge = xh >= yl, can_eq = xl <= yh && yl <= xh;
  bool can_ne = !(xl == xh && yl == yh && xl == yl);
  if (!strcmp(dir, "LT") || !strcmp(dir, "GE")) return can_lt && can_ge;
  if (!strcmp(dir, "GT") || !strcmp(dir, "LE")) return (xh > yl) && (xl <= yh);
  return can_eq && can_ne; /* EQ, NE */
}

TR_TEST(shadow_property_marks_where_flips) {
  /* x = a*b + c on quarters (exact ties are common), then compare with d,
   * floor and convert to s32: a mark appears exactly where values within
   * the operands' bounds flip the op, and certain results agree with the
   * exact interpreter. */
  static const char *dirs[] = {"LT", "LE", "GT", "GE", "EQ", "NE"};
  static const tr_dtype dts[3] = {TR_DT_F32, TR_DT_BF16, TR_DT_F16};
  rng r = {777};
  long marked = 0, unmarked = 0, wrong = 0;
  stats s = {0};
  for (int p = 0; p < 600; p++) {
    tr_dtype dt = dts[p % 3];
    const char *D = tr_dtype_name(dt), *dir = dirs[pick(&r, 6)];
    char text[2048];
    snprintf(text, sizeof text,
             "HloModule m\nENTRY e {\n  a = %s[16] parameter(0)\n  b = %s[16] parameter(1)\n"
             "  c = %s[16] parameter(2)\n  d = %s[16] parameter(3)\n  m = %s[16] multiply(a, b)\n"
             "  x = %s[16] add(m, c)\n  cmp = pred[16] compare(x, d), direction=%s\n"
             "  fl = %s[16] floor(x)\n  cv = s32[16] convert(x)\n"
             "  ROOT t = (%s[16], %s[16], pred[16], %s[16], s32[16]) tuple(x, d, cmp, fl, cv)\n}\n",
             D, D, D, D, D, D, dir, D, D, D, D);
    tr_tensor *args[4];
    for (int i = 0; i < 4; i++) {
      int64_t dims[1] = {16};
      args[i] = tr_tensor_new(dt, 1, dims, NULL);
      for (int j = 0; j < 16; j++) {
        double v = (double)(pick(&r, 25) - 12) / 4;
        if (pick(&r, 3) == 0) v += ldexp((double)(pick(&r, 9) - 4), -12 - pick(&r, 14));
        if (i == 1 && pick(&r, 2)) v = 1 + ldexp((double)(pick(&r, 5) - 2), -pick(&r, 20) - 4);
        tr_tensor_set_f(args[i], (size_t)j, v);
      }
    }
    both b;
    if (run_both(text, args, 4, &b, __LINE__)) {
      contain(&b, &s, text);
      const tr_shadow_out *X = &b.sh[0], *Dd = &b.sh[1];
      for (int j = 0; j < 16; j++) {
        if (X->uncertain[j]) continue;
        double x = X->value[j], bx = X->bound[j], y = Dd->value[j];
        if (!isfinite(x)) continue;
        bool f[3] = {flips_cmp(dir, x, bx, y, 0), floor(x - bx) != floor(x + bx),
                     trunc(x - bx) != trunc(x + bx)};
        const unsigned char u[3] = {b.sh[2].uncertain[j], b.sh[3].uncertain[j], b.sh[4].uncertain[j]};
        for (int k = 0; k < 3; k++) {
          /* x's bound is closed: an end exactly on a step counts; x's
           * double value is within 2^-60 of the shadow, so only a gap
           * that small could tell the two apart. */
          if (u[k] != f[k]) {
            wrong++;
            if (wrong < 5)
              fprintf(stderr, "  op %d dir %s x %.17g bound %.3g d %.17g marked %d flips %d\n", k, dir, x, bx,
                      y, u[k], f[k]);
          }
          if (u[k]) marked++;
          else unmarked++;
        }
      }
    }
    both_free(&b);
    for (int i = 0; i < 4; i++) tr_tensor_free(args[i]);
  }
  CHECK_EQ_INT(wrong, 0);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(marked > 100 && unmarked > 1000);
  printf("  shadow marks: %ld marked where a flip is possible, %ld certain, %ld disagreements\n", marked,
         unmarked, wrong);
}

/* ---- bulk loops against the element rule ----
 * Arrays of 64 elements and more go through the vectorized block loops of
 * shadow_elem.c, shorter ones through the scalar loop: the same op on a
 * 4099-element array and on one-element arrays of sampled elements must
 * give the same values and marks and the same bounds (up to the 2^-48
 * widening, and the 2^-53 relative rounding that the general rule's long
 * double result adds when stored as a double), over inputs full of specials: zeros of both signs, NaN, inf,
 * subnormals of the type, values at the overflow edge, small integers
 * (exact results), and operands with bounds (a product's). */

static double special_value(rng *r, tr_dtype dt) {
  double mx = tr_float_max(dt), tiny = ldexp(1.0, 1 - tr_dtypes[dt].bias - (int)tr_dtypes[dt].mbits);
  switch (pick(r, 12)) {
  case 0: return pick(r, 2) ? 0.0 : -0.0;
  case 1: return NAN;
  case 2: return pick(r, 2) ? INFINITY : -INFINITY;
  case 3: return tiny * (1 + pick(r, 5)) * (pick(r, 2) ? 1 : -1);
  case 4: return mx * (0.5 + 0.5 * unif(r)) * (pick(r, 2) ? 1 : -1);
  case 5: case 6: return (double)(pick(r, 41) - 20);
  default: return gauss(r) * ldexp(1.0, pick(r, 21) - 10);
  }
}

static void bulk_case(rng *r, tr_dtype dt, const char *op, stats *s) {
  enum { N = 4099, NS = 40 };
  const char *dn = tr_dtype_name(dt);
  char text[1024];
  snprintf(text, sizeof text,
           "HloModule bulk\nENTRY e {\n  p0 = %s[%d] parameter(0)\n  p1 = %s[%d] parameter(1)\n"
           "  p2 = %s[%d] parameter(2)\n  m = %s[%d] multiply(p0, p2)\n  r1 = %s[%d] %s(p0, p1)\n"
           "  r2 = %s[%d] %s(m, p1)\n  ROOT t = (%s[%d], %s[%d]) tuple(r1, r2)\n}\n",
           dn, N, dn, N, dn, N, dn, N, dn, N, op, dn, N, op, dn, N, dn, N);
  double *v[3];
  tr_tensor *args[3];
  for (int i = 0; i < 3; i++) {
    v[i] = malloc(sizeof(double) * N);
    for (int k = 0; k < N; k++) v[i][k] = tr_float_to_double(dt, tr_float_from_double(dt, special_value(r, dt)));
    args[i] = vec(dt, N, v[i]);
  }
  both big;
  if (run_both(text, args, 3, &big, __LINE__)) {
    contain(&big, s, text);
    char one[1024];
    snprintf(one, sizeof one,
             "HloModule one\nENTRY e {\n  p0 = %s[1] parameter(0)\n  p1 = %s[1] parameter(1)\n"
             "  p2 = %s[1] parameter(2)\n  m = %s[1] multiply(p0, p2)\n  r1 = %s[1] %s(p0, p1)\n"
             "  r2 = %s[1] %s(m, p1)\n  ROOT t = (%s[1], %s[1]) tuple(r1, r2)\n}\n",
             dn, dn, dn, dn, dn, op, dn, op, dn, dn);
    for (int q = 0; q < NS; q++) {
      int k = q < 8 ? q * 523 : pick(r, N);
      double e[3] = {v[0][k], v[1][k], v[2][k]};
      tr_tensor *a1[3] = {vec(dt, 1, &e[0]), vec(dt, 1, &e[1]), vec(dt, 1, &e[2])};
      both sm;
      if (run_both(one, a1, 3, &sm, __LINE__)) {
        for (int o = 0; o < 2; o++) {
          double bv = big.sh[o].value[k], sv = sm.sh[o].value[0];
          double bb = big.sh[o].bound[k], sb = sm.sh[o].bound[0];
          bool same = (isnan(bv) ? isnan(sv) : bv == sv) && big.sh[o].uncertain[k] == sm.sh[o].uncertain[0] &&
                      (bb == sb || fabs(bb - sb) <= ldexp(fabs(sb), -45) + ldexp(fabs(sv), -52)) &&
                      (bb == 0) == (sb == 0);
          if (!same) {
            fprintf(stderr, "  %s %s element %d output %d: bulk %.17g +- %.17g (u %d), element %.17g +- %.17g (u %d)\n",
                    dn, op, k, o, bv, bb, big.sh[o].uncertain[k], sv, sb, sm.sh[o].uncertain[0]);
            s->bad++;
          }
        }
      }
      both_free(&sm);
      for (int i = 0; i < 3; i++) tr_tensor_free(a1[i]);
    }
  }
  both_free(&big);
  for (int i = 0; i < 3; i++) {
    tr_tensor_free(args[i]);
    free(v[i]);
  }
}

TR_TEST(shadow_bulk_loops_match_element_rule) {
  static const tr_dtype dts[3] = {TR_DT_F32, TR_DT_BF16, TR_DT_F16};
  static const char *ops[6] = {"add", "subtract", "multiply", "divide", "maximum", "minimum"};
  rng r = {777};
  stats s = {0};
  for (int d = 0; d < 3; d++)
    for (int o = 0; o < 6; o++) bulk_case(&r, dts[d], ops[o], &s);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(s.checked > 100000);
  printf("  shadow bulk: %ld elements checked, %ld uncertain, max |err|/bound %.3g\n", s.checked,
         s.uncertain, s.worst);
}

/* async-start / -done around a computation is the computation: the same
 * values, bounds and marks as a call of it, on inputs with specials. */
TR_TEST(shadow_async_equals_call) {
  const char *body = "wrapped {\n  p = f32[64] parameter(0)\n  q = f32[64] parameter(1)\n"
                     "  m = f32[64] multiply(p, q)\n  ROOT l = f32[64] log(m)\n}\n";
  char a[1024], c[1024];
  snprintf(a, sizeof a,
           "HloModule a\n%sENTRY e {\n  x = f32[64] parameter(0)\n  y = f32[64] parameter(1)\n"
           "  s = ((f32[64], f32[64]), f32[64], u32[]) async-start(x, y), calls=wrapped\n"
           "  d = f32[64] async-done(s)\n  ROOT r = f32[64] add(d, x)\n}\n", body);
  snprintf(c, sizeof c,
           "HloModule c\n%sENTRY e {\n  x = f32[64] parameter(0)\n  y = f32[64] parameter(1)\n"
           "  d = f32[64] call(x, y), to_apply=wrapped\n  ROOT r = f32[64] add(d, x)\n}\n", body);
  rng r = {99};
  double v[2][64];
  for (int k = 0; k < 64; k++) {
    v[0][k] = (double)(float)special_value(&r, TR_DT_F32);
    v[1][k] = (double)(float)special_value(&r, TR_DT_F32);
  }
  tr_tensor *args[2] = {vec(TR_DT_F32, 64, v[0]), vec(TR_DT_F32, 64, v[1])};
  both ba, bc;
  if (run_both(a, args, 2, &ba, __LINE__) && run_both(c, args, 2, &bc, __LINE__)) {
    CHECK_EQ_INT(ba.nsh, 1);
    int same = 0, finite = 0;
    for (int k = 0; k < 64; k++) {
      double x = ba.sh[0].value[k], y = bc.sh[0].value[k];
      same += (isnan(x) ? isnan(y) : x == y) && ba.sh[0].bound[k] == bc.sh[0].bound[k] &&
              ba.sh[0].uncertain[k] == bc.sh[0].uncertain[k];
      finite += isfinite(x) && ba.sh[0].bound[k] > 0;
    }
    CHECK_EQ_INT(same, 64);
    CHECK(finite > 10); /* the comparison saw real bounds */
    stats s = {0};
    contain(&ba, &s, a);
    CHECK_EQ_INT(s.bad, 0);
  }
  both_free(&ba);
  both_free(&bc);
  tr_tensor_free(args[0]);
  tr_tensor_free(args[1]);
}

/* ---- triangular-solve ----
 * The bound is a first-order forward error bound (shadow_linalg.c). On
 * random well-conditioned systems of every form (left/right, lower/upper,
 * transposed, unit diagonal; f32 and f64) whose operands carry bounds (a
 * rounded product each), a solver written here - column-oriented
 * substitution, another order than the reference's, each operation
 * rounded to the dtype - on operands moved anywhere within their bounds
 * lands within the result's bound of its value. */

static double rnd_dt(tr_dtype dt, double v) { return dt == TR_DT_F32 ? (double)(float)v : v; }

/* x = solution of S x = rhs with S = the system matrix of the form. */
static void ts_solve(tr_dtype dt, int m, const double *A, const double *B, int rows, int cols, bool left,
                     bool lower, bool trans, bool unit, double *X) {
  double S[64], x[8];
  for (int i = 0; i < m; i++)
    for (int j = 0; j < m; j++) {
      /* op(A)(i, j), from the triangle read */
      int r = trans ? j : i, c = trans ? i : j;
      double v = (lower ? r >= c : r <= c) ? A[r * m + c] : 0;
      if (r == c && unit) v = 1;
      if (left) S[i * m + j] = v;
      else S[j * m + i] = v; /* x op(A) = b: op(A)^T x^T = b^T */
    }
  bool slower = left ? lower != trans : lower == trans;
  int nrhs = left ? cols : rows;
  for (int q = 0; q < nrhs; q++) {
    for (int i = 0; i < m; i++) x[i] = left ? B[i * cols + q] : B[q * cols + i];
    for (int s = 0; s < m; s++) {
      int j = slower ? s : m - 1 - s;
      x[j] = rnd_dt(dt, x[j] / S[j * m + j]);
      for (int i = 0; i < m; i++)
        if (slower ? i > j : i < j) x[i] = rnd_dt(dt, x[i] - rnd_dt(dt, S[i * m + j] * x[j]));
    }
    for (int i = 0; i < m; i++) {
      if (left) X[i * cols + q] = x[i];
      else X[q * cols + i] = x[i];
    }
  }
}

/* One system of the form: the operands' shadow results oa and ob (their
 * values and bounds), the solve's ox; the solver on operands anywhere in
 * their intervals (trials 0 and 1 at the corners) within ox's bound. */
typedef struct {
  long checked, bad, marked;
} ts_count;

static void ts_trials(rng *r, tr_dtype dt, int m, int rows, int cols, bool left, bool lower, bool trans, bool unit,
                      const tr_shadow_out *oa, const tr_shadow_out *ob, const tr_shadow_out *ox, ts_count *n) {
  for (int trial = 0; trial < 6; trial++) {
    double A[64], B[32], X[32];
    for (int i = 0; i < m * m; i++) {
      double z = trial == 0 ? 1 : trial == 1 ? -1 : 2 * unif(r) - 1;
      A[i] = oa->value[i] + z * oa->bound[i];
    }
    for (int i = 0; i < rows * cols; i++) {
      double z = trial == 0 ? -1 : trial == 1 ? 1 : 2 * unif(r) - 1;
      B[i] = ob->value[i] + z * ob->bound[i];
    }
    ts_solve(dt, m, A, B, rows, cols, left, lower, trans, unit, X);
    for (int i = 0; i < rows * cols; i++) {
      if (ox->uncertain[i]) {
        n->marked += trial == 0;
        continue;
      }
      n->checked++;
      if (!(fabs(X[i] - ox->value[i]) <= ox->bound[i])) {
        if (n->bad < 5)
          fprintf(stderr, "  %s m=%d left=%d lower=%d trans=%d unit=%d element %d: solver %.17g value %.17g bound %.3g\n",
                  tr_dtype_name(dt), m, left, lower, trans, unit, i, X[i], ox->value[i], ox->bound[i]);
        n->bad++;
      }
    }
  }
}

/* Random systems whose operands are products a0 * s and b0 * u computed
 * in the dtype nt (the solve's own, or a narrow one converted to it, so
 * the operand bounds are that dtype's rounding); off-diagonal entries of
 * scale off against a diagonal of 1.5 to 3. */
static void ts_random(unsigned seed, int count, tr_dtype nt, double off, ts_count *n, stats *s) {
  rng r = {seed};
  for (int t = 0; t < count; t++) {
    tr_dtype dt = nt != TR_DT_F32 && nt != TR_DT_F64 ? TR_DT_F64 : t % 2 ? TR_DT_F64 : TR_DT_F32;
    tr_dtype pt = nt == TR_DT_F32 || nt == TR_DT_F64 ? dt : nt;
    bool left = pick(&r, 2), lower = pick(&r, 2), trans = pick(&r, 2), unit = pick(&r, 4) == 0;
    int m = 1 + pick(&r, 8), n2 = 1 + pick(&r, 4), rows = left ? m : n2, cols = left ? n2 : m;
    const char *dn = tr_dtype_name(dt), *pn = tr_dtype_name(pt);
    char text[1800];
    snprintf(text, sizeof text,
             "HloModule ts\nENTRY e {\n  a0 = %s[%d,%d] parameter(0)\n  s = %s[%d,%d] parameter(1)\n"
             "  b0 = %s[%d,%d] parameter(2)\n  u = %s[%d,%d] parameter(3)\n"
             "  ap = %s[%d,%d] multiply(a0, s)\n  bp = %s[%d,%d] multiply(b0, u)\n"
             "  a = %s[%d,%d] convert(ap)\n  b = %s[%d,%d] convert(bp)\n"
             "  x = %s[%d,%d] triangular-solve(a, b), left_side=%s, lower=%s, unit_diagonal=%s, "
             "transpose_a=%s\n  ROOT t = (%s[%d,%d], %s[%d,%d], %s[%d,%d]) tuple(a, b, x)\n}\n",
             pn, m, m, pn, m, m, pn, rows, cols, pn, rows, cols, pn, m, m, pn, rows, cols, dn, m, m, dn, rows,
             cols, dn, rows, cols, left ? "true" : "false", lower ? "true" : "false", unit ? "true" : "false",
             trans ? "TRANSPOSE" : "NO_TRANSPOSE", dn, m, m, dn, rows, cols, dn, rows, cols);
    double A0[64], S0[64], B0[32], U0[32];
    int sh = pt == dt ? -10 : -6;
    for (int i = 0; i < m * m; i++) {
      bool diag = i / m == i % m;
      A0[i] = diag ? (1.5 + 1.5 * unif(&r)) * (pick(&r, 2) ? 1 : -1) : off * gauss(&r);
      S0[i] = 1 + ldexp(gauss(&r), sh);
    }
    for (int i = 0; i < rows * cols; i++) {
      B0[i] = gauss(&r);
      U0[i] = 1 + ldexp(gauss(&r), sh);
    }
    tr_tensor *args[4];
    int64_t da[2] = {m, m}, db[2] = {rows, cols};
    double *src[4] = {A0, S0, B0, U0};
    for (int i = 0; i < 4; i++) {
      args[i] = tr_tensor_new(pt, 2, i < 2 ? da : db, NULL);
      for (int k = 0; k < (i < 2 ? m * m : rows * cols); k++) tr_tensor_set_f(args[i], (size_t)k, src[i][k]);
    }
    both bb;
    if (run_both(text, args, 4, &bb, __LINE__)) {
      contain(&bb, s, text);
      ts_trials(&r, dt, m, rows, cols, left, lower, trans, unit, &bb.sh[0], &bb.sh[1], &bb.sh[2], n);
    }
    both_free(&bb);
    for (int i = 0; i < 4; i++) tr_tensor_free(args[i]);
  }
}

TR_TEST(shadow_triangular_solve_bound) {
  ts_count n = {0};
  stats s = {0};
  ts_random(4242, 160, TR_DT_F32, 0.3, &n, &s);
  CHECK_EQ_INT(n.bad, 0);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(n.checked > 5000);
  CHECK(n.marked < n.checked / 100);
  printf("  shadow triangular-solve: %ld solver results within the bound, %ld uncertain\n", n.checked, n.marked);
}

/* Operands known only to a bf16 rounding (products in bf16 converted to
 * f64) and off-diagonal entries as large as the diagonal: the error of
 * the operands is a good part of T's diagonal, and a bound first order in
 * it is exceeded (a clean builtin campaign, seed 10: 1.1 times it); the
 * bound holds to every order. */
TR_TEST(shadow_triangular_solve_large_operand_error) {
  ts_count n = {0};
  stats s = {0};
  ts_random(977, 200, TR_DT_BF16, 2.0, &n, &s);
  CHECK_EQ_INT(n.bad, 0);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(n.checked > 5000);
  CHECK(n.marked < n.checked / 20);
  printf("  shadow triangular-solve, bf16 operands: %ld solver results within the bound, %ld uncertain\n",
         n.checked, n.marked);
}

/* ---- cholesky ----
 * Random symmetric positive definite matrices b b^T + n I (lower and
 * upper forms, f32 and f64, the matrix with a dot's bounds): a right-looking (outer product)
 * Cholesky written here, another order than the reference's column
 * algorithm, each operation rounded to the dtype, on the read triangle
 * moved anywhere within its bounds, lands within the bound of every
 * certain element; the other triangle is an exact 0. */

static void chol_solve(tr_dtype dt, int n, const double *A, bool lower, double *Lout) {
  double W[64];
  for (int i = 0; i < n; i++)
    for (int j = 0; j <= i; j++) W[i * n + j] = lower ? A[i * n + j] : A[j * n + i];
  for (int k = 0; k < n; k++) {
    W[k * n + k] = rnd_dt(dt, sqrt(W[k * n + k]));
    for (int i = k + 1; i < n; i++) W[i * n + k] = rnd_dt(dt, W[i * n + k] / W[k * n + k]);
    for (int j = k + 1; j < n; j++)
      for (int i = j; i < n; i++) W[i * n + j] = rnd_dt(dt, W[i * n + j] - rnd_dt(dt, W[i * n + k] * W[j * n + k]));
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double v = j <= i ? W[i * n + j] : 0;
      if (lower) Lout[i * n + j] = v;
      else Lout[j * n + i] = v;
    }
}

typedef struct {
  long checked, bad, marked, zeros;
} ch_count;

/* Random systems a = b b^T + d I computed in nt (the factor's own dtype,
 * or bf16 converted to f64, so a's bounds are bf16's rounding), factored
 * in the module; a right-looking Cholesky on a moved anywhere within its
 * bounds lands within l's bound of every certain element. */
static void ch_random(unsigned seed, int count, tr_dtype nt, double dscale, ch_count *c, stats *s) {
  rng r = {seed};
  for (int t = 0; t < count; t++) {
    tr_dtype dt = nt != TR_DT_F32 && nt != TR_DT_F64 ? TR_DT_F64 : t % 2 ? TR_DT_F64 : TR_DT_F32;
    tr_dtype pt = nt == TR_DT_F32 || nt == TR_DT_F64 ? dt : nt;
    bool lower = pick(&r, 2);
    int n = 1 + pick(&r, 8);
    const char *dn = tr_dtype_name(dt), *pn = tr_dtype_name(pt);
    char text[900];
    /* a = b b^T + d I in the module: a sum's bound, wider than the
     * factorization's own rounding */
    snprintf(text, sizeof text,
             "HloModule ch\nENTRY e {\n  b = %s[%d,%d] parameter(0)\n  dg = %s[%d,%d] parameter(1)\n"
             "  p = %s[%d,%d] dot(b, b), lhs_contracting_dims={1}, rhs_contracting_dims={1}\n"
             "  ap = %s[%d,%d] add(p, dg)\n  a = %s[%d,%d] convert(ap)\n  l = %s[%d,%d] cholesky(a), lower=%s\n"
             "  ROOT t = (%s[%d,%d], %s[%d,%d]) tuple(a, l)\n}\n",
             pn, n, n, pn, n, n, pn, n, n, pn, n, n, dn, n, n, dn, n, n, lower ? "true" : "false", dn, n, n, dn,
             n, n);
    double A0[64], S0[64];
    for (int i = 0; i < n * n; i++) {
      A0[i] = gauss(&r);
      S0[i] = i / n == i % n ? dscale * n : 0;
    }
    tr_tensor *args[2];
    int64_t da[2] = {n, n};
    for (int i = 0; i < 2; i++) {
      args[i] = tr_tensor_new(pt, 2, da, NULL);
      for (int k = 0; k < n * n; k++) tr_tensor_set_f(args[i], (size_t)k, i ? S0[k] : A0[k]);
    }
    both bb;
    if (run_both(text, args, 2, &bb, __LINE__)) {
      contain(&bb, s, text);
      const tr_shadow_out *oa = &bb.sh[0], *ol = &bb.sh[1];
      for (int trial = 0; trial < 6; trial++) {
        double A[64], L[64];
        for (int i = 0; i < n * n; i++) {
          double z = trial == 0 ? 1 : trial == 1 ? -1 : 2 * unif(&r) - 1;
          A[i] = oa->value[i] + z * oa->bound[i];
        }
        chol_solve(dt, n, A, lower, L);
        for (int i = 0; i < n * n; i++) {
          if (ol->uncertain[i]) {
            c->marked += trial == 0;
            continue;
          }
          c->checked++;
          c->zeros += ol->value[i] == 0 && ol->bound[i] == 0;
          if (!(fabs(L[i] - ol->value[i]) <= ol->bound[i])) {
            if (c->bad < 5)
              fprintf(stderr, "  %s n=%d lower=%d element %d: solver %.17g value %.17g bound %.3g\n", dn, n,
                      lower, i, L[i], ol->value[i], ol->bound[i]);
            c->bad++;
          }
        }
      }
    }
    both_free(&bb);
    for (int i = 0; i < 2; i++) tr_tensor_free(args[i]);
  }
}

TR_TEST(shadow_cholesky_bound) {
  ch_count c = {0};
  stats s = {0};
  ch_random(5151, 120, TR_DT_F32, 1, &c, &s);
  CHECK_EQ_INT(c.bad, 0);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(c.checked > 5000 && c.zeros > 1000);
  CHECK(c.marked < c.checked / 100);
  printf("  shadow cholesky: %ld solver results within the bound (%ld exact zeros), %ld uncertain\n", c.checked,
         c.zeros, c.marked);
}

/* The matrix known only to a bf16 rounding (products and sums in bf16,
 * converted to f64) and a smaller diagonal shift (d = n / 4): the error
 * of a is a good part of some pivots, where a bound first order in it
 * was exceeded (369 of 30,612 results); the bound holds where the factor
 * is certain, and most of it stays certain. */
TR_TEST(shadow_cholesky_large_operand_error) {
  ch_count c = {0};
  stats s = {0};
  ch_random(6262, 200, TR_DT_BF16, 1.0 / 4, &c, &s);
  CHECK_EQ_INT(c.bad, 0);
  CHECK_EQ_INT(s.bad, 0);
  CHECK(c.checked > 5000);
  CHECK(c.marked < c.checked / 10);
  printf("  shadow cholesky, bf16 operands: %ld solver results within the bound, %ld uncertain\n", c.checked,
         c.marked);
}

/* ---- moves ----
 * Moves and gathers of narrow types run the exact kernels on the value,
 * bound and mark planes (shadow_move.c). Each result element must be the
 * operand element the move takes it from, with its value, bound and mark:
 * the map comes from exact mode on operands holding their own flat index
 * (y1's offset by 100), the check from shadow mode on operands with bounds
 * (a product) and marks (a compare of x*s/s with x, uncertain where s is
 * not 1). */
TR_TEST(shadow_moves_carry_bound_and_mark) {
  static const char *moves[] = {
      "f32[6,4] transpose(y0), dimensions={1,0}",
      "f32[2,4,6] broadcast(y0), dimensions={1,2}",
      "f32[24] reshape(y0)",
      "f32[2,3] slice(y0), slice={[1:3], [0:6:2]}",
      "f32[4,6] reverse(y0), dimensions={0,1}",
      "f32[8,6] concatenate(y0, y1), dimensions={0}",
      "f32[7,14] pad(y0, y1s), padding=1_2x0_3_1",
      "f32[2,3] dynamic-slice(y0, i1, i2), dynamic_slice_sizes={2,3}",
      "f32[4,6] dynamic-update-slice(y0, ys, i1, i2)",
      "f32[3,6] gather(y0, gi), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,6}",
  };
  int bad = 0, checked = 0, marks = 0, bounded = 0;
  for (size_t t = 0; t < sizeof moves / sizeof moves[0]; t++) {
    char shape[64], mod[1600];
    snprintf(shape, sizeof shape, "%.*s", (int)(strchr(moves[t], ' ') - moves[t]), moves[t]);
    snprintf(mod, sizeof mod,
             "HloModule mv\nENTRY e {\n  x0 = f32[4,6] parameter(0)\n  x1 = f32[4,6] parameter(1)\n"
             "  s = f32[4,6] parameter(2)\n  i1 = s32[] parameter(3)\n  i2 = s32[] parameter(4)\n"
             "  gi = s32[3] parameter(5)\n  p0 = f32[4,6] multiply(x0, s)\n  p1 = f32[4,6] multiply(x1, s)\n"
             "  q0 = f32[4,6] divide(p0, s)\n  c = pred[4,6] compare(q0, x0), direction=GT\n"
             "  y0 = f32[4,6] select(c, x0, p0)\n  y1 = f32[4,6] select(c, x1, p1)\n"
             "  ys = f32[2,3] slice(y1), slice={[0:2], [0:3]}\n"
             "  y1c = f32[1,1] slice(y1), slice={[3:4], [5:6]}\n  y1s = f32[] reshape(y1c)\n"
             "  m = %s\n  ROOT t = (f32[4,6], f32[4,6], f32[2,3], f32[], %s) tuple(y0, y1, ys, y1s, m)\n}\n",
             moves[t], shape);
    /* exact-mode map: x = index (y0: 0..23, y1: 100..123, s = 1, so the
     * products and selects are the indices) */
    double ix0[24], ix1[24], one[24], v0[24], v1[24], sv[24];
    rng r = {31 + t};
    for (int k = 0; k < 24; k++) {
      ix0[k] = k;
      ix1[k] = 100 + k;
      one[k] = 1;
      v0[k] = 0.5 + unif(&r);
      v1[k] = 0.5 + unif(&r);
      sv[k] = k % 2 ? 1 + ldexp(gauss(&r), -12) : 1;
    }
    int64_t d0[1] = {0};
    tr_tensor *i1 = tr_tensor_new(TR_DT_S32, 0, d0, NULL), *i2 = tr_tensor_new(TR_DT_S32, 0, d0, NULL);
    tr_tensor_set_i(i1, 0, 1);
    tr_tensor_set_i(i2, 0, 2);
    int64_t d3[1] = {3};
    tr_tensor *gi = tr_tensor_new(TR_DT_S32, 1, d3, NULL);
    tr_tensor_set_i(gi, 0, 2);
    tr_tensor_set_i(gi, 1, 0);
    tr_tensor_set_i(gi, 2, 3);
    int64_t d46[2] = {4, 6};
    tr_tensor *mk[6];
    double *srcs[2][3] = {{ix0, ix1, one}, {v0, v1, sv}};
    both ex, sh;
    bool ok = true;
    for (int pass = 0; pass < 2 && ok; pass++) {
      for (int q = 0; q < 3; q++) {
        mk[q] = tr_tensor_new(TR_DT_F32, 2, d46, NULL);
        for (int k = 0; k < 24; k++) tr_tensor_set_f(mk[q], (size_t)k, srcs[pass][q][k]);
      }
      mk[3] = i1;
      mk[4] = i2;
      mk[5] = gi;
      ok = run_both(mod, mk, 6, pass ? &sh : &ex, __LINE__);
      for (int q = 0; q < 3; q++) tr_tensor_free(mk[q]);
    }
    if (ok) {
      /* ex: outputs 0 y0, 1 y1, 2 ys, 3 y1s, 4 m hold indices; sh: the shadow */
      const tr_tensor *map = ex.ex[4];
      const tr_shadow_out *o = &sh.sh[4];
      for (size_t k = 0; k < o->n; k++) {
        int id = (int)tr_tensor_get_f(map, k);
        const tr_shadow_out *from = id >= 100 ? &sh.sh[1] : &sh.sh[0];
        size_t j = (size_t)(id >= 100 ? id - 100 : id);
        bool same = o->value[k] == from->value[j] && o->bound[k] == from->bound[j] &&
                    o->uncertain[k] == from->uncertain[j];
        checked++;
        marks += o->uncertain[k];
        bounded += o->bound[k] > 0;
        if (!same) {
          if (bad < 5)
            fprintf(stderr, "  %s: element %zu from %d: %.9g +- %.3g (u %d), source %.9g +- %.3g (u %d)\n",
                    moves[t], k, id, o->value[k], o->bound[k], o->uncertain[k], from->value[j], from->bound[j],
                    from->uncertain[j]);
          bad++;
        }
      }
    }
    if (ok) {
      both_free(&ex);
      both_free(&sh);
    }
    tr_tensor_free(i1);
    tr_tensor_free(i2);
    tr_tensor_free(gi);
  }
  CHECK_EQ_INT(bad, 0);
  CHECK(checked > 150 && marks > 20 && marks < checked && bounded > 20);
  printf("  shadow moves: %d moved elements carry their source's value, bound and mark (%d marked, %d with "
         "bounds)\n", checked, marks, bounded);
}

/* ---- lazy arguments ----
 * Entry arguments of 65536 elements and more stay lazy until an op needs
 * their planes; gather, slice and dynamic-slice read them as they are.
 * Those parts must equal the same ops on the materialized argument (a
 * copy materializes it), marks from uncertain indices included, also
 * through a call; a root that is the argument itself comes out whole. */
TR_TEST(shadow_lazy_arguments) {
  const char *text =
      "HloModule lz\ntake {\n  t = f32[70000,4] parameter(0)\n  i = s32[5,1] parameter(1)\n"
      "  ROOT g = f32[5,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}\n}\n"
      "ENTRY e {\n  tab = f32[70000,4] parameter(0)\n  gi = s32[5,1] parameter(1)\n"
      "  fi = f32[5] parameter(2)\n  s = f32[5] parameter(3)\n  st = s32[] parameter(4)\n"
      "  fm = f32[5] multiply(fi, s)\n  fs = f32[5] divide(fm, s)\n  ix = s32[5] convert(fs)\n  gu = s32[5,1] reshape(ix)\n"
      "  z = s32[] constant(0)\n"
      "  g1 = f32[5,4] gather(tab, gi), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}\n"
      "  h1 = f32[5,4] gather(tab, gu), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}\n"
      "  c1 = f32[3,4] slice(tab), slice={[69990:69993], [0:4]}\n"
      "  d1 = f32[3,4] dynamic-slice(tab, st, z), dynamic_slice_sizes={3,4}\n"
      "  k1 = f32[5,4] call(tab, gi), to_apply=take\n"
      "  cp = f32[70000,4] copy(tab)\n"
      "  g2 = f32[5,4] gather(cp, gi), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}\n"
      "  h2 = f32[5,4] gather(cp, gu), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, "
      "index_vector_dim=1, slice_sizes={1,4}\n"
      "  c2 = f32[3,4] slice(cp), slice={[69990:69993], [0:4]}\n"
      "  d2 = f32[3,4] dynamic-slice(cp, st, z), dynamic_slice_sizes={3,4}\n"
      "  ROOT t = (f32[5,4], f32[5,4], f32[3,4], f32[3,4], f32[5,4], f32[5,4], f32[3,4], f32[3,4], f32[70000,4], "
      "f32[5,4]) tuple(g1, h1, c1, d1, g2, h2, c2, d2, tab, k1)\n}\n";
  int64_t dt[2] = {70000, 4}, dg[2] = {5, 1}, d5[1] = {5}, d0[1] = {0};
  tr_tensor *tab = tr_tensor_new(TR_DT_F32, 2, dt, NULL), *gi = tr_tensor_new(TR_DT_S32, 2, dg, NULL);
  tr_tensor *fi = tr_tensor_new(TR_DT_F32, 1, d5, NULL), *s = tr_tensor_new(TR_DT_F32, 1, d5, NULL);
  tr_tensor *st = tr_tensor_new(TR_DT_S32, 0, d0, NULL);
  rng r = {808};
  for (size_t k = 0; k < 280000; k++) tr_tensor_set_f(tab, k, gauss(&r));
  static const int rows[5] = {0, 69999, 12345, 7, 50000};
  for (int k = 0; k < 5; k++) {
    tr_tensor_set_i(gi, (size_t)k, rows[k]);
    /* 3 * s / s: an interval around 3 where s is not 1 (uncertain index) */
    tr_tensor_set_f(fi, (size_t)k, 3.0);
    tr_tensor_set_f(s, (size_t)k, k == 2 ? 1 + ldexp(1.0, -23) : 1.0);
  }
  tr_tensor_set_i(st, 0, 69998); /* clamped to 69997 */
  tr_tensor *args[5] = {tab, gi, fi, s, st};
  both b;
  if (run_both(text, args, 5, &b, __LINE__)) {
    CHECK_EQ_INT(b.nsh, 10);
    int same = 0, total = 0;
    for (int o = 0; o < 4; o++)
      for (size_t k = 0; k < b.sh[o].n; k++, total++)
        same += b.sh[o].value[k] == b.sh[o + 4].value[k] && b.sh[o].bound[k] == b.sh[o + 4].bound[k] &&
                b.sh[o].uncertain[k] == b.sh[o + 4].uncertain[k] &&
                b.sh[o].value[k] == tr_tensor_get_f(b.ex[o], k);
    CHECK_EQ_INT(same, total);
    CHECK(b.sh[0].nuncertain == 0 && b.sh[1].nuncertain == 20); /* one uncertain index marks all */
    CHECK(b.sh[0].value[4] == tr_tensor_get_f(tab, 69999 * 4)); /* row 69999 */
    CHECK(b.sh[3].value[0] == tr_tensor_get_f(tab, 69997 * 4)); /* clamped start */
    CHECK(b.sh[8].n == 280000 && b.sh[8].nuncertain == 0 && b.sh[8].max_bound == 0);
    CHECK(b.sh[8].value[123457] == tr_tensor_get_f(tab, 123457));
    /* a gather inside a called computation (how jax spells take) */
    int sk = 0;
    for (size_t k = 0; k < 20; k++) sk += b.sh[9].value[k] == b.sh[4].value[k] && b.sh[9].bound[k] == 0 && !b.sh[9].uncertain[k];
    CHECK_EQ_INT(sk, 20);
  }
  both_free(&b);
  for (int i = 0; i < 5; i++) tr_tensor_free(args[i]);
}

/* reduce-precision to a type's own widths is not the identity for types
 * narrower than f32 in exact mode (like XLA's evaluator): it reduces in
 * f32 and keeps no reduced subnormals, so f16 and f8e4m3fn subnormals
 * flush to 0. XLA CPU keeps them where its simplifier removes the op as
 * an identity, so shadow mode leaves those subnormals unjudged; the other
 * exact inputs take exact mode's result with no bound; inputs with
 * bounds keep the interval rule. */
TR_TEST(shadow_reduce_precision_own_widths) {
  const char *text = "HloModule rp\nENTRY e {\n  h = f16[4] parameter(0)\n  q = f8e4m3fn[4] parameter(1)\n"
                     "  s = f16[4] parameter(2)\n"
                     "  rh = f16[4] reduce-precision(h), exponent_bits=5, mantissa_bits=10\n"
                     "  rq = f8e4m3fn[4] reduce-precision(q), exponent_bits=4, mantissa_bits=3\n"
                     "  hs = f16[4] multiply(h, s)\n"
                     "  rs = f16[4] reduce-precision(hs), exponent_bits=5, mantissa_bits=10\n"
                     "  ROOT t = (f16[4], f8e4m3fn[4], f16[4]) tuple(rh, rq, rs)\n}\n";
  double hv[4] = {ldexp(1.0, -20), -ldexp(3.0, -16), 1.5, ldexp(1.0, -14)};
  double qv[4] = {ldexp(1.0, -7), ldexp(1.0, -9), 0.5, -448};
  double sv[4] = {1.0009765625, 1.0009765625, 1.0009765625, 1.0009765625};
  tr_tensor *args[3] = {vec(TR_DT_F16, 4, hv), vec(TR_DT_F8E4M3FN, 4, qv), vec(TR_DT_F16, 4, sv)};
  both b;
  if (run_both(text, args, 3, &b, __LINE__)) {
    /* f16: 2^-20 and -3*2^-16 are subnormal: flushed; 1.5 and 2^-14 stay */
    CHECK(b.sh[0].value[0] == 0 && b.sh[0].value[1] == 0 && b.sh[0].value[2] == 1.5 &&
          b.sh[0].value[3] == ldexp(1.0, -14));
    /* f8e4m3fn: 2^-7 and 2^-9 are subnormal (its smallest normal is 2^-6);
     * -448 = -1.75*2^8 is past 4 exponent bits' range (f32's reduction
     * gives -inf) and the type stores that as NaN */
    CHECK(b.sh[1].value[0] == 0 && b.sh[1].value[1] == 0 && b.sh[1].value[2] == 0.5 && isnan(b.sh[1].value[3]));
    int exact = 0;
    for (int o = 0; o < 2; o++)
      for (int k = 0; k < 4; k++) {
        exact += b.sh[o].bound[k] == 0 && !b.sh[o].uncertain[k];
        double xv = tr_tensor_get_f(b.ex[o], (size_t)k);
        CHECK(isnan(xv) ? isnan(b.sh[o].value[k]) : b.sh[o].value[k] == xv);
      }
    CHECK_EQ_INT(exact, 4);
    CHECK(b.sh[0].uncertain[0] && b.sh[0].uncertain[1] && b.sh[1].uncertain[0] && b.sh[1].uncertain[1]);
    stats s = {0};
    contain(&b, &s, text);
    CHECK_EQ_INT(s.bad, 0);
    CHECK(b.sh[2].bound[2] > 0); /* 1.5 * s rounds: the interval rule */
  }
  both_free(&b);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

/* Bitcast-convert hands NaN patterns on bit for bit in shadow mode too:
 * a chain through bf16, f16, s16 and data movement gives the entry
 * argument's bits back, certain (signalling NaNs and payloads included);
 * a NaN made by arithmetic has no pattern in the contract, so its bitcast
 * is uncertain rather than a canonical guess. */
TR_TEST(shadow_bitcast_keeps_nan_bits) {
  const char *text = "HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n"
                     "  b = bf16[4,2] bitcast-convert(p)\n"
                     "  t = bf16[2,4] transpose(b), dimensions={1,0}\n"
                     "  t2 = bf16[4,2] transpose(t), dimensions={1,0}\n"
                     "  h = f16[4,2] bitcast-convert(t2)\n"
                     "  s = s16[4,2] bitcast-convert(h)\n"
                     "  r = s16[8] reshape(s)\n  r2 = s16[4,2] reshape(r)\n"
                     "  g = f16[4,2] bitcast-convert(r2)\n  k = bf16[4,2] bitcast-convert(g)\n"
                     "  f = f32[4] bitcast-convert(k)\n  u = u32[4] bitcast-convert(f)\n"
                     "  a = f32[4] add(p, p)\n  ua = u32[4] bitcast-convert(a)\n"
                     "  sl = f32[2] slice(a), slice={[0:2]}\n  z = s32[] constant(0)\n"
                     "  d = f32[4] dynamic-update-slice(p, sl, z)\n  ud = u32[4] bitcast-convert(d)\n"
                     "  ROOT o = (u32[4], u32[4], u32[4]) tuple(u, ua, ud)\n}\n";
  uint32_t pat[4] = {0x7f800001u, 0xffa00000u, 0x7f817fc1u, 0x3f800000u};
  int64_t dims[1] = {4};
  tr_tensor *arg = tr_tensor_new(TR_DT_F32, 1, dims, NULL);
  memcpy(arg->data, pat, sizeof pat);
  both b;
  if (run_both(text, &arg, 1, &b, __LINE__)) {
    for (size_t k = 0; k < 4; k++) {
      CHECK(tr_tensor_get_bits(b.ex[0], k) == pat[k]);
      CHECK(tr_tensor_get_bits(b.sh[0].exact, k) == pat[k]);
      CHECK(!b.sh[0].uncertain[k]);
    }
    CHECK(b.sh[1].uncertain[0] && b.sh[1].uncertain[1]); /* NaN + NaN: no pattern */
    /* moved into p beside p's own NaNs (a 10-minute xla-cpu campaign,
     * seed 21: an f8 NaN from an overflowing sum, updated into a
     * constant holding NaNs, took a pattern it never had) */
    CHECK(b.sh[2].uncertain[0] && b.sh[2].uncertain[1]);
    stats s = {0};
    contain(&b, &s, text);
    CHECK_EQ_INT(s.bad, 0);
  }
  both_free(&b);
  tr_tensor_free(arg);
}
