/* test_shadow_lazy.c - shadow mode's lazy values: a large weight argument
 * that reaches a dot or convolution lazily (values only, no bound planes)
 * gives the bits of the same weight materialized (an exact add of zero);
 * large constants and passed-through arguments keep their values. */
#include "../../src/eval/shadow.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tr_tensor *filled(int rank, const int64_t *dims, uint64_t seed) {
  tr_tensor *t = tr_tensor_new(TR_DT_F32, rank, dims, NULL);
  float *p = t->data;
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    seed = seed * 6364136223846793005ull + 1442695040888963407ull;
    p[i] = (float)((double)(seed >> 40) / (double)(1ull << 24) - 0.5);
  }
  return t;
}

/* Shadow outputs of text on args, or NULL (a failure) when it does not run. */
static tr_shadow_out *shadow_of(const char *text, tr_tensor *const *args, int nargs, int *n) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  tr_shadow_out *o = NULL;
  if (!m || tr_verify(m, &d) != TR_OK || tr_eval_shadow(m, NULL, args, nargs, &o, n, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    o = NULL;
  }
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  return o;
}

static void same_shadow(const char *lazy, const char *whole, tr_tensor *const *args, int nargs) {
  int n1 = 0, n2 = 0;
  tr_shadow_out *a = shadow_of(lazy, args, nargs, &n1), *b = shadow_of(whole, args, nargs, &n2);
  if (a && b) {
    CHECK_EQ_INT(n1, 1);
    CHECK_EQ_INT(n2, 1);
    CHECK(a[0].n == b[0].n);
    CHECK(memcmp(a[0].value, b[0].value, sizeof(double) * a[0].n) == 0);
    CHECK(memcmp(a[0].bound, b[0].bound, sizeof(double) * a[0].n) == 0);
    CHECK(memcmp(a[0].uncertain, b[0].uncertain, a[0].n) == 0);
    /* the lhs carries bounds, so every bound is positive */
    size_t pos = 0;
    for (size_t i = 0; i < a[0].n; i++) pos += a[0].bound[i] > 0;
    CHECK(pos == a[0].n);
  }
  if (a) tr_shadow_free(a, n1);
  if (b) tr_shadow_free(b, n2);
}

TR_TEST(shadow_dot_lazy_weight_same_bits) {
  int64_t xd[2] = {8, 1024}, wd[2] = {1024, 64};
  tr_tensor *args[3] = {filled(2, xd, 1), filled(2, xd, 2), filled(2, wd, 3)};
  const char *head = "HloModule m\nENTRY e {\n  p = f32[8,1024] parameter(0)\n  q = f32[8,1024] parameter(1)\n"
                     "  w = f32[1024,64] parameter(2)\n  x = f32[8,1024] add(p, q)\n";
  char lazy[1024], whole[1024];
  snprintf(lazy, sizeof lazy, "%s  ROOT d = f32[8,64] dot(x, w), lhs_contracting_dims={1}, "
           "rhs_contracting_dims={0}\n}\n", head);
  snprintf(whole, sizeof whole, "%s  z = f32[] constant(0)\n  zb = f32[1024,64] broadcast(z), dimensions={}\n"
           "  w2 = f32[1024,64] add(w, zb)\n  ROOT d = f32[8,64] dot(x, w2), lhs_contracting_dims={1}, "
           "rhs_contracting_dims={0}\n}\n", head);
  same_shadow(lazy, whole, args, 3);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

TR_TEST(shadow_conv_lazy_weight_same_bits) {
  int64_t xd[4] = {1, 6, 6, 128}, wd[4] = {3, 3, 128, 64};
  tr_tensor *args[3] = {filled(4, xd, 4), filled(4, xd, 5), filled(4, wd, 6)};
  const char *head = "HloModule m\nENTRY e {\n  p = f32[1,6,6,128] parameter(0)\n  q = f32[1,6,6,128] parameter(1)\n"
                     "  w = f32[3,3,128,64] parameter(2)\n  x = f32[1,6,6,128] add(p, q)\n";
  const char *conv = "window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n";
  char lazy[1024], whole[1024];
  snprintf(lazy, sizeof lazy, "%s  ROOT c = f32[1,6,6,64] convolution(x, w), %s", head, conv);
  snprintf(whole, sizeof whole, "%s  z = f32[] constant(0)\n  zb = f32[3,3,128,64] broadcast(z), dimensions={}\n"
           "  w2 = f32[3,3,128,64] add(w, zb)\n  ROOT c = f32[1,6,6,64] convolution(x, w2), %s", head, conv);
  same_shadow(lazy, whole, args, 3);
  for (int i = 0; i < 3; i++) tr_tensor_free(args[i]);
}

/* A large constant stays lazy too (a view of its literal): a slice of it
 * and the constant itself as an output carry its values exactly, bound 0,
 * certain; so does a large argument passed straight through. */
TR_TEST(shadow_lazy_constant_and_passthrough) {
  enum { N = 1 << 16 };
  tr_buf b = {0};
  tr_buf_printf(&b, "HloModule m\nENTRY e {\n  a = f32[%d] parameter(0)\n  c = f32[%d] constant({", N, N);
  for (int i = 0; i < N; i++) tr_buf_printf(&b, "%s%.2f", i ? ", " : "", i % 1000 - 500 + 0.25);
  tr_buf_printf(&b, "})\n  s = f32[4] slice(c), slice={[100:104]}\n  ROOT t = (f32[%d], f32[4], f32[%d]) tuple(c, s, a)\n}\n",
                N, N);
  int64_t d[1] = {N};
  tr_tensor *arg = filled(1, d, 9);
  int n = 0;
  tr_shadow_out *o = shadow_of(b.p, &arg, 1, &n);
  if (o) {
    CHECK_EQ_INT(n, 3);
    int bad = 0;
    for (int i = 0; i < N; i++) {
      bad += o[0].value[i] != i % 1000 - 500 + 0.25 || o[0].bound[i] != 0 || o[0].uncertain[i];
      bad += o[2].value[i] != ((float *)arg->data)[i] || o[2].bound[i] != 0 || o[2].uncertain[i];
    }
    for (int i = 0; i < 4; i++) bad += o[1].value[i] != (100 + i) % 1000 - 500 + 0.25 || o[1].bound[i] != 0;
    CHECK_EQ_INT(bad, 0);
    CHECK(o[2].exact && memcmp(o[2].exact->data, arg->data, sizeof(float) * N) == 0);
    CHECK(o[0].nuncertain == 0 && o[0].max_bound == 0);
    tr_shadow_free(o, n);
  }
  tr_tensor_free(arg);
  tr_buf_free(&b);
}
