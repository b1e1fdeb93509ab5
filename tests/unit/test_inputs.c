/* test_inputs.c - input distributions and the default policy
 * (src/oracle/inputs.h): determinism, each distribution's range on concrete
 * seeds, special-value rates, and the bounds the policy finds for index
 * parameters. */
#include "test.h"

#include "../../src/eval/eval.h"
#include "../../src/oracle/inputs.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>

/* A tensor of dtype and dims filled with dist (no specials, bound 15). */
static tr_tensor *drawn(tr_dtype dt, int rank, const int64_t *dims,
                        tr_dist dist, uint64_t seed) {
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(dt, rank, dims, &d);
  tr_input_spec s;
  tr_input_spec_init(&s, dist);
  if (!t || tr_input_fill(t, &s, seed, 0, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    abort();
  }
  tr_diag_clear(&d);
  return t;
}

static tr_tensor *drawn1(tr_dtype dt, int64_t n, tr_dist dist, uint64_t seed) {
  return drawn(dt, 1, &n, dist, seed);
}

static tr_tensor *fill_spec(tr_dtype dt, int rank, const int64_t *dims,
                            const tr_input_spec *s, uint64_t seed) {
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(dt, rank, dims, &d);
  if (!t || tr_input_fill(t, s, seed, 0, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    abort();
  }
  return t;
}

static float f32_at(const tr_tensor *t, size_t i) {
  float f;
  memcpy(&f, (const char *)t->data + 4 * i, 4);
  return f;
}

TR_TEST(inputs_generator_pinned) {
  /* The formula of docs/INPUTS.md, computed independently in Python. */
  CHECK(tr_input_bits(0, 0, 0, 0) == 0x2130748aaac80268ull);
  CHECK(tr_input_bits(1, 2, 3, 4) == 0xd55ccd4aeb3ccafbull);
  CHECK(tr_input_bits(UINT64_MAX, 7, 12345, 1000) == 0xbfd65f6480a88a8aull);
}

TR_TEST(inputs_same_seed_same_bytes) {
  for (int dist = TR_DIST_NORMAL; dist < TR_DIST_COUNT; dist++) {
    tr_dtype types[] = {TR_DT_F32, TR_DT_BF16, TR_DT_F16, TR_DT_F64,
                        TR_DT_F8E4M3FN, TR_DT_F8E5M2, TR_DT_S32, TR_DT_U8,
                        TR_DT_S4, TR_DT_S64, TR_DT_U64, TR_DT_PRED, TR_DT_C64};
    for (int k = 0; k < TR_NELEMS(types); k++) {
      tr_tensor *a = drawn1(types[k], 500, (tr_dist)dist, 42);
      tr_tensor *b = drawn1(types[k], 500, (tr_dist)dist, 42);
      tr_tensor *c = drawn1(types[k], 500, (tr_dist)dist, 43);
      if (!tr_tensor_equal_bits(a, b)) {
        fprintf(stderr, "  %s %s: same seed, different bytes\n",
                tr_dist_name((tr_dist)dist), tr_dtype_name(types[k]));
        tr_test_failed++;
      }
      /* index-dup on bound 15 has 3 values: still 500 draws differ. */
      if (memcmp(a->data, c->data, a->nbytes) == 0) {
        fprintf(stderr, "  %s %s: seeds 42 and 43 gave the same bytes\n",
                tr_dist_name((tr_dist)dist), tr_dtype_name(types[k]));
        tr_test_failed++;
      }
      tr_tensor_free(a);
      tr_tensor_free(b);
      tr_tensor_free(c);
    }
  }
}

TR_TEST(inputs_element_depends_only_on_its_index) {
  /* Element i is a function of (seed, stream, i): a bigger tensor, or
   * another shape of it, starts with the same values. */
  int64_t d2[2] = {10, 30};
  tr_tensor *a = drawn1(TR_DT_F32, 100, TR_DIST_NORMAL, 5);
  tr_tensor *b = drawn(TR_DT_F32, 2, d2, TR_DIST_NORMAL, 5);
  CHECK(memcmp(a->data, b->data, a->nbytes) == 0);
  /* Another stream differs. */
  tr_diag d = {0};
  tr_tensor *c = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){100}, &d);
  tr_input_spec s;
  tr_input_spec_init(&s, TR_DIST_NORMAL);
  CHECK(tr_input_fill(c, &s, 5, 1, &d) == TR_OK);
  CHECK(memcmp(a->data, c->data, a->nbytes) != 0);
  tr_tensor_free(a);
  tr_tensor_free(b);
  tr_tensor_free(c);
}

TR_TEST(inputs_normal_pinned_values) {
  /* First values of normal f32, seed 0, stream 0: a change here changes
   * every saved reproduction, so it must be deliberate. A Python
   * reimplementation (polar method, math.log) gives the same. */
  tr_tensor *t = drawn1(TR_DT_F32, 4, TR_DIST_NORMAL, 0);
  uint32_t want[4] = {0xbd723112, 0xbf563357, 0xc00f7c34, 0xbec0f966};
  for (int i = 0; i < 4; i++) {
    uint32_t got;
    memcpy(&got, (char *)t->data + 4 * i, 4);
    if (got != want[i]) {
      fprintf(stderr, "  element %d: 0x%08x, expected 0x%08x\n", i, got, want[i]);
      tr_test_failed++;
    }
  }
  tr_tensor_free(t);
}

TR_TEST(inputs_normal_and_uniform_moments) {
  size_t n = 20000;
  tr_tensor *t = drawn1(TR_DT_F32, (int64_t)n, TR_DIST_NORMAL, 1);
  double s = 0, s2 = 0, mx = 0;
  for (size_t i = 0; i < n; i++) {
    double v = f32_at(t, i);
    s += v;
    s2 += v * v;
    mx = fabs(v) > mx ? fabs(v) : mx;
  }
  double mean = s / (double)n, sd = sqrt(s2 / (double)n - mean * mean);
  CHECK(fabs(mean) < 0.03);
  CHECK(fabs(sd - 1) < 0.03);
  CHECK(mx > 3 && mx < 6); /* real tails */
  tr_tensor_free(t);

  t = drawn1(TR_DT_F32, (int64_t)n, TR_DIST_UNIFORM, 1);
  double lo = 1, hi = -1;
  s = 0;
  for (size_t i = 0; i < n; i++) {
    double v = f32_at(t, i);
    lo = v < lo ? v : lo;
    hi = v > hi ? v : hi;
    s += v;
  }
  CHECK(lo >= -1 && lo < -0.99);
  CHECK(hi < 1 && hi > 0.99);
  CHECK(fabs(s / (double)n) < 0.02);
  tr_tensor_free(t);

  /* Integers: normal is round(16 N(0,1)), saturated. */
  t = drawn1(TR_DT_S8, (int64_t)n, TR_DIST_NORMAL, 1);
  s = 0;
  for (size_t i = 0; i < n; i++) s += (double)tr_tensor_get_i(t, i);
  CHECK(fabs(s / (double)n) < 0.5);
  tr_tensor_free(t);
}

TR_TEST(inputs_float_ranges) {
  int64_t n = 4000;
  tr_tensor *t = drawn1(TR_DT_F32, n, TR_DIST_POSITIVE, 3);
  for (int64_t i = 0; i < n; i++) {
    float v = f32_at(t, (size_t)i);
    if (!(v >= 1.0f / 16 && v <= 16)) {
      CHECK(!"positive out of [1/16, 16]");
      break;
    }
  }
  tr_tensor_free(t);

  t = drawn1(TR_DT_F32, n, TR_DIST_LARGE, 3);
  bool neg = false;
  for (int64_t i = 0; i < n; i++) {
    float v = f32_at(t, (size_t)i);
    neg |= v < 0;
    if (!(isfinite(v) && fabsf(v) >= 0x1p64f)) {
      CHECK(!"large below 2^64 or not finite");
      break;
    }
  }
  CHECK(neg);
  tr_tensor_free(t);

  /* f8e4m3fn has no inf: large values must never overflow to NaN. */
  t = drawn1(TR_DT_F8E4M3FN, n, TR_DIST_LARGE, 3);
  for (int64_t i = 0; i < n; i++) {
    double v = tr_tensor_get_f(t, (size_t)i);
    if (!(fabs(v) >= 16 && fabs(v) <= 448)) {
      CHECK(!"f8e4m3fn large out of [16, 448]");
      break;
    }
  }
  tr_tensor_free(t);

  t = drawn1(TR_DT_F32, n, TR_DIST_TINY, 3);
  for (int64_t i = 0; i < n; i++) {
    float v = fabsf(f32_at(t, (size_t)i));
    if (!(v >= FLT_MIN && v < 0x1p-118f)) {
      CHECK(!"tiny outside the lowest 8 normal binades");
      break;
    }
  }
  tr_tensor_free(t);

  t = drawn1(TR_DT_F32, n, TR_DIST_INTEGER, 3);
  bool big = false;
  for (int64_t i = 0; i < n; i++) {
    float v = f32_at(t, (size_t)i);
    big |= fabsf(v) > 1000;
    if (v != truncf(v) || fabsf(v) > 0x1p24f) {
      CHECK(!"integer not an integer within 2^24");
      break;
    }
  }
  CHECK(big);
  tr_tensor_free(t);

  t = drawn1(TR_DT_F32, n, TR_DIST_FULL, 3);
  bool huge = false, small = false;
  for (int64_t i = 0; i < n; i++) {
    float v = fabsf(f32_at(t, (size_t)i));
    huge |= v > 1e30f;
    small |= v < 1e-30f;
    if (!isfinite(v)) {
      CHECK(!"full gave NaN or inf");
      break;
    }
  }
  CHECK(huge && small);
  tr_tensor_free(t);
}

TR_TEST(inputs_denormal_only_subnormals) {
  tr_dtype types[] = {TR_DT_F32, TR_DT_F64, TR_DT_F16, TR_DT_BF16,
                      TR_DT_F8E4M3FN, TR_DT_F8E5M2};
  for (int k = 0; k < TR_NELEMS(types); k++) {
    tr_dtype dt = types[k];
    tr_tensor *t = drawn1(dt, 3000, TR_DIST_DENORMAL, 11);
    int mb = tr_dtypes[dt].mbits, eb = tr_dtypes[dt].ebits;
    bool neg = false;
    for (size_t i = 0; i < 3000; i++) {
      uint64_t bits = tr_tensor_get_bits(t, i);
      uint64_t exp = (bits >> mb) & (((uint64_t)1 << eb) - 1);
      uint64_t man = bits & (((uint64_t)1 << mb) - 1);
      neg |= (bits >> (mb + eb)) & 1;
      if (exp != 0 || man == 0) {
        fprintf(stderr, "  %s element %zu: 0x%llx is not subnormal\n",
                tr_dtype_name(dt), i, (unsigned long long)bits);
        tr_test_failed++;
        break;
      }
    }
    CHECK(neg);
    if (dt == TR_DT_F32)
      for (size_t i = 0; i < 3000; i++)
        if (fpclassify(f32_at(t, i)) != FP_SUBNORMAL) {
          CHECK(!"f32 denormal: fpclassify says not subnormal");
          break;
        }
    tr_tensor_free(t);
  }
}

TR_TEST(inputs_float_boundary) {
  tr_tensor *t = drawn1(TR_DT_F32, 4000, TR_DIST_BOUNDARY, 2);
  bool max = false, minn = false, mins = false, one = false, zero = false;
  for (size_t i = 0; i < 4000; i++) {
    float v = fabsf(f32_at(t, i));
    max |= v == FLT_MAX;
    minn |= v == FLT_MIN;
    mins |= v == 0x1p-149f;
    one |= v == 1;
    zero |= v == 0;
    CHECK(isfinite(v));
  }
  CHECK(max && minn && mins && one && zero);
  tr_tensor_free(t);
}

/* Whether v is one of the boundary integers of a type of `bits`. */
static bool is_boundary(int64_t v, int64_t lo, int64_t hi) {
  if (v == lo || v == hi || v == 0 || v == 1 || v == -1 || v == lo + 1 ||
      v == hi - 1)
    return true;
  for (int k = 1; k < 63; k++) {
    int64_t p = (int64_t)1 << k;
    if (v == p || v == p - 1 || v == p + 1 || v == -p || v == -p + 1 ||
        v == -p - 1)
      return true;
  }
  return false;
}

TR_TEST(inputs_int_boundary) {
  tr_tensor *t = drawn1(TR_DT_S32, 4000, TR_DIST_BOUNDARY, 9);
  bool mn = false, mx = false, z = false, m1 = false, p16 = false;
  for (size_t i = 0; i < 4000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    mn |= v == INT32_MIN;
    mx |= v == INT32_MAX;
    z |= v == 0;
    m1 |= v == -1;
    p16 |= v == 65537 || v == 65535 || v == 65536;
    if (!is_boundary(v, INT32_MIN, INT32_MAX)) {
      fprintf(stderr, "  %lld is not a boundary s32\n", (long long)v);
      tr_test_failed++;
      break;
    }
  }
  CHECK(mn && mx && z && m1);
  tr_tensor_free(t);

  t = drawn1(TR_DT_S64, 4000, TR_DIST_BOUNDARY, 9);
  mn = mx = false;
  for (size_t i = 0; i < 4000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    mn |= v == INT64_MIN;
    mx |= v == INT64_MAX;
  }
  CHECK(mn && mx);
  tr_tensor_free(t);

  t = drawn1(TR_DT_U8, 2000, TR_DIST_BOUNDARY, 9);
  mn = mx = false;
  for (size_t i = 0; i < 2000; i++) {
    uint64_t v = tr_tensor_get_u(t, i);
    mn |= v == 0;
    mx |= v == 255;
  }
  CHECK(mn && mx);
  tr_tensor_free(t);

  t = drawn1(TR_DT_U64, 2000, TR_DIST_BOUNDARY, 9);
  mx = false;
  bool top = false;
  for (size_t i = 0; i < 2000; i++) {
    uint64_t v = tr_tensor_get_u(t, i);
    mx |= v == UINT64_MAX;
    top |= v == (uint64_t)1 << 63;
  }
  CHECK(mx && top);
  tr_tensor_free(t);
}

TR_TEST(inputs_int_ranges) {
  /* full s8: every value shows up. */
  tr_tensor *t = drawn1(TR_DT_S8, 20000, TR_DIST_FULL, 4);
  bool seen[256] = {false};
  for (size_t i = 0; i < 20000; i++) seen[tr_tensor_get_i(t, i) + 128] = true;
  int nseen = 0;
  for (int i = 0; i < 256; i++) nseen += seen[i];
  CHECK_EQ_INT(nseen, 256);
  tr_tensor_free(t);

  /* s4 (one byte per element): only -8..7, every value. */
  t = drawn1(TR_DT_S4, 2000, TR_DIST_FULL, 4);
  bool s4[16] = {false};
  for (size_t i = 0; i < 2000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    CHECK(v >= -8 && v <= 7);
    if (v >= -8 && v <= 7) s4[v + 8] = true;
  }
  for (int i = 0; i < 16; i++) CHECK(s4[i]);
  tr_tensor_free(t);

  t = drawn1(TR_DT_S32, 2000, TR_DIST_LARGE, 4);
  for (size_t i = 0; i < 2000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    if (!(v >= INT32_MAX / 2 || v <= INT32_MIN / 2)) {
      CHECK(!"s32 large not in the top half");
      break;
    }
  }
  tr_tensor_free(t);

  t = drawn1(TR_DT_U32, 2000, TR_DIST_POSITIVE, 4);
  for (size_t i = 0; i < 2000; i++) {
    uint64_t v = tr_tensor_get_u(t, i);
    CHECK(v >= 1 && v <= 127);
  }
  tr_tensor_free(t);

  t = drawn1(TR_DT_PRED, 10000, TR_DIST_NORMAL, 4);
  size_t ones = 0;
  for (size_t i = 0; i < 10000; i++) ones += tr_tensor_get_u(t, i);
  CHECK(ones > 4800 && ones < 5200);
  tr_tensor_free(t);
}

static tr_tensor *index_draw(tr_dtype dt, tr_dist dist, int64_t bound) {
  tr_input_spec s;
  tr_input_spec_init(&s, dist);
  s.bound = bound;
  int64_t n = 3000;
  return fill_spec(dt, 1, &n, &s, 21);
}

TR_TEST(inputs_index_distributions) {
  tr_tensor *t = index_draw(TR_DT_S32, TR_DIST_INDEX, 5);
  bool lo = false, hi = false;
  for (size_t i = 0; i < 3000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    CHECK(v >= 0 && v <= 5);
    lo |= v == 0;
    hi |= v == 5;
  }
  CHECK(lo && hi);
  tr_tensor_free(t);

  t = index_draw(TR_DT_S32, TR_DIST_INDEX_EDGE, 5);
  bool seen[8] = {false}; /* -1..6 */
  for (size_t i = 0; i < 3000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    CHECK(v == -1 || v == 0 || v == 1 || v == 4 || v == 5 || v == 6);
    if (v >= -1 && v <= 6) seen[v + 1] = true;
  }
  CHECK(seen[0] && seen[1] && seen[2] && seen[5] && seen[6] && seen[7]);
  tr_tensor_free(t);

  t = index_draw(TR_DT_S32, TR_DIST_INDEX_OOB, 5);
  bool mn = false, mx = false, m1 = false, p1 = false;
  for (size_t i = 0; i < 3000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    if (!(v < 0 || v > 5)) {
      fprintf(stderr, "  index-oob gave %lld with bound 5\n", (long long)v);
      tr_test_failed++;
      break;
    }
    mn |= v == INT32_MIN;
    mx |= v == INT32_MAX;
    m1 |= v == -1;
    p1 |= v == 6;
  }
  CHECK(mn && mx && m1 && p1);
  tr_tensor_free(t);

  /* u8 with bound 255: no out-of-bounds value fits, so the bound. */
  t = index_draw(TR_DT_U8, TR_DIST_INDEX_OOB, 255);
  for (size_t i = 0; i < 3000; i++) CHECK(tr_tensor_get_u(t, i) == 255);
  tr_tensor_free(t);
  /* u32: only values above the bound. */
  t = index_draw(TR_DT_U32, TR_DIST_INDEX_OOB, 5);
  for (size_t i = 0; i < 3000; i++) CHECK(tr_tensor_get_u(t, i) > 5);
  tr_tensor_free(t);

  t = index_draw(TR_DT_S32, TR_DIST_INDEX_DUP, 9);
  bool dup[10] = {false};
  for (size_t i = 0; i < 3000; i++) {
    int64_t v = tr_tensor_get_i(t, i);
    CHECK(v == 0 || v == 4 || v == 9);
    if (v >= 0 && v <= 9) dup[v] = true;
  }
  CHECK(dup[0] && dup[4] && dup[9]);
  tr_tensor_free(t);

  /* A bound of 0 (the slice covers the whole dim): only 0 in bounds. */
  t = index_draw(TR_DT_S64, TR_DIST_INDEX, 0);
  for (size_t i = 0; i < 3000; i++) CHECK(tr_tensor_get_i(t, i) == 0);
  tr_tensor_free(t);

  /* Index dists on a float leaf give integer values. */
  t = index_draw(TR_DT_F32, TR_DIST_INDEX, 7);
  for (size_t i = 0; i < 3000; i++) {
    float v = f32_at(t, i);
    CHECK(v >= 0 && v <= 7 && v == truncf(v));
  }
  tr_tensor_free(t);
}

TR_TEST(inputs_index_bounds_per_axis) {
  tr_input_spec s;
  tr_input_spec_init(&s, TR_DIST_INDEX);
  s.bound_axis = 1;
  s.nbounds = 2;
  s.bounds[0] = 3;
  s.bounds[1] = 9;
  int64_t dims[2] = {500, 2};
  tr_tensor *t = fill_spec(TR_DT_S32, 2, dims, &s, 1);
  bool over3 = false;
  for (size_t r = 0; r < 500; r++) {
    int64_t a = tr_tensor_get_i(t, 2 * r), b = tr_tensor_get_i(t, 2 * r + 1);
    CHECK(a >= 0 && a <= 3);
    CHECK(b >= 0 && b <= 9);
    over3 |= b > 3;
  }
  CHECK(over3);
  tr_tensor_free(t);
}

TR_TEST(inputs_special_rate) {
  int64_t n = 20000;
  tr_input_spec s;
  tr_input_spec_init(&s, TR_DIST_NORMAL);
  tr_tensor *base = fill_spec(TR_DT_F32, 1, &n, &s, 8);
  s.special_rate = 0.25;
  tr_tensor *t = fill_spec(TR_DT_F32, 1, &n, &s, 8);
  size_t nan = 0, pinf = 0, ninf = 0, nzero = 0, changed = 0;
  for (size_t i = 0; i < (size_t)n; i++) {
    float v = f32_at(t, i);
    if (memcmp((char *)t->data + 4 * i, (char *)base->data + 4 * i, 4) == 0)
      continue;
    changed++;
    if (isnan(v)) nan++;
    else if (v == INFINITY) pinf++;
    else if (v == -INFINITY) ninf++;
    else if (v == 0 && signbit(v)) nzero++;
    else {
      CHECK(!"an element changed to something not special");
      break;
    }
  }
  /* 5000 expected; 4 sigma is about 245. */
  CHECK(changed > 4750 && changed < 5250);
  CHECK(nan > 1000 && pinf > 1000 && ninf > 1000 && nzero > 1000);
  tr_tensor_free(t);
  tr_tensor_free(base);

  /* f8e4m3fn has no inf: NaN and -0 only. */
  t = fill_spec(TR_DT_F8E4M3FN, 1, &n, &s, 8);
  size_t sp = 0;
  for (size_t i = 0; i < (size_t)n; i++) {
    double v = tr_tensor_get_f(t, i);
    CHECK(!isinf(v));
    sp += isnan(v);
  }
  CHECK(sp > 2000);
  tr_tensor_free(t);

  /* Integers ignore the rate. */
  t = fill_spec(TR_DT_S32, 1, &n, &s, 8);
  tr_input_spec_init(&s, TR_DIST_NORMAL);
  base = fill_spec(TR_DT_S32, 1, &n, &s, 8);
  CHECK(tr_tensor_equal_bits(t, base));
  tr_tensor_free(t);
  tr_tensor_free(base);
}

TR_TEST(inputs_fill_errors) {
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){4}, &d);
  tr_input_spec s;
  tr_input_spec_init(&s, TR_DIST_DEFAULT);
  CHECK(tr_input_fill(t, &s, 0, 0, &d) == TR_ERR_USAGE);
  tr_input_spec_init(&s, TR_DIST_NORMAL);
  s.special_rate = 2;
  CHECK(tr_input_fill(t, &s, 0, 0, &d) == TR_ERR_USAGE);
  tr_input_spec_init(&s, TR_DIST_INDEX);
  s.bound_axis = 0;
  s.nbounds = 3;
  CHECK(tr_input_fill(t, &s, 0, 0, &d) == TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "inputs:");
  tr_diag_clear(&d);
  tr_tensor_free(t);

  tr_dist x;
  for (int i = 0; i < TR_DIST_COUNT; i++) {
    CHECK(tr_dist_lookup(tr_dist_name((tr_dist)i), &x));
    CHECK_EQ_INT(x, i);
  }
  CHECK(!tr_dist_lookup("gaussian", &x));
}

/* ---- the policy ---- */

static tr_module *parse(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (m && tr_verify(m, &d) != TR_OK) {
    tr_module_free(m);
    m = NULL;
  }
  if (!m) {
    tr_diag_print(&d, stderr);
    abort();
  }
  tr_diag_clear(&d);
  return m;
}

static void plan(const tr_module *m, const tr_input_config *cfg,
                 tr_input_leaf **lv, int *n) {
  tr_diag d = {0};
  tr_input_config dflt;
  tr_input_config_init(&dflt);
  if (tr_inputs_plan(m, cfg ? cfg : &dflt, lv, n, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    abort();
  }
}

TR_TEST(inputs_policy_leaf_order_and_kinds) {
  tr_module *m = parse(
    "HloModule t\n"
    "ENTRY e {\n"
    "  p0 = (f32[2], (s32[], f32[3]), token[]) parameter(0)\n"
    "  p1 = pred[4] parameter(1)\n"
    "  p2 = s8[3] parameter(2)\n"
    "  ROOT r = pred[4] copy(p1)\n"
    "}\n");
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.special_rate = 0.5;
  tr_input_leaf *lv;
  int n;
  plan(m, &cfg, &lv, &n);
  CHECK_EQ_INT(n, 5);
  if (n == 5) {
    int64_t want_counts[5] = {2, 1, 3, 4, 3};
    tr_dtype want_types[5] = {TR_DT_F32, TR_DT_S32, TR_DT_F32, TR_DT_PRED, TR_DT_S8};
    for (int i = 0; i < 5; i++) {
      CHECK_EQ_INT(tr_shape_count(lv[i].shape), want_counts[i]);
      CHECK_EQ_INT(lv[i].shape->dtype, want_types[i]);
      CHECK(!lv[i].is_index);
    }
    CHECK(lv[0].spec.dist == TR_DIST_NORMAL && lv[0].spec.special_rate == 0.5);
    CHECK(lv[1].spec.dist == TR_DIST_NORMAL && lv[1].spec.special_rate == 0);
    CHECK(lv[3].spec.dist == TR_DIST_UNIFORM); /* pred: a fair coin */
    CHECK_STR(lv[3].param->name, "p1");
  }
  free(lv);

  /* tr_inputs_make: leaf j drawn with stream j. */
  tr_tensor **ts;
  int nt;
  tr_diag d = {0};
  cfg.seed = 77;
  CHECK(tr_inputs_make(m, &cfg, &ts, &nt, &d) == TR_OK);
  CHECK_EQ_INT(nt, 5);
  if (nt == 5) {
    tr_input_spec s;
    tr_input_spec_init(&s, TR_DIST_NORMAL);
    tr_tensor *c = fill_spec(TR_DT_S8, 1, (int64_t[]){3}, &s, 77);
    tr_tensor *c4 = tr_tensor_new(TR_DT_S8, 1, (int64_t[]){3}, &d);
    tr_input_fill(c4, &s, 77, 4, &d);
    CHECK(tr_tensor_equal_bits(ts[4], c4));
    tr_tensor_free(c);
    tr_tensor_free(c4);
  }
  tr_inputs_free(ts, nt);
  tr_module_free(m);
}

TR_TEST(inputs_policy_dynamic_slice_bounds) {
  tr_module *m = parse(
    "HloModule t\n"
    "fb {\n"
    "  a = f32[10,4] parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  j = s32[] parameter(2)\n"
    "  ROOT ds = f32[3,4] dynamic-slice(a, i, j), dynamic_slice_sizes={3,4}\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[10,4] parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  j = s32[] parameter(2)\n"
    "  u = f32[2,2] parameter(3)\n"
    "  k = s64[] parameter(4)\n"
    "  zero = s64[] constant(0)\n"
    "  f = f32[3,4] fusion(a, i, j), kind=kLoop, calls=fb\n"
    "  ci = s64[] convert(i)\n"
    "  ROOT d = f32[10,4] dynamic-update-slice(a, u, k, zero)\n"
    "}\n");
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 5);
  if (n == 5) {
    CHECK(!lv[0].is_index);
    CHECK(lv[1].is_index && lv[1].spec.dist == TR_DIST_INDEX);
    CHECK_EQ_INT(lv[1].spec.bound, 7); /* 10 - 3, through the fusion */
    CHECK(lv[2].is_index);
    CHECK_EQ_INT(lv[2].spec.bound, 0); /* 4 - 4 */
    CHECK(lv[4].is_index);
    CHECK_EQ_INT(lv[4].spec.bound, 8); /* 10 - 2 for the update */
  }
  free(lv);
  /* --dist index-oob reaches index leaves only. */
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.index = TR_DIST_INDEX_OOB;
  cfg.data = TR_DIST_LARGE;
  plan(m, &cfg, &lv, &n);
  if (n == 5) {
    CHECK(lv[0].spec.dist == TR_DIST_LARGE);
    CHECK(lv[1].spec.dist == TR_DIST_INDEX_OOB);
  }
  free(lv);
  tr_module_free(m);
}

TR_TEST(inputs_policy_gather_scatter_bounds) {
  tr_module *m = parse(
    "HloModule t\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT s = f32[] add(x, y)\n"
    "}\n"
    "ENTRY e {\n"
    "  op = f32[10,6] parameter(0)\n"
    "  idx = s32[5,2] parameter(1)\n"
    "  g = f32[5,2,3] gather(op, idx), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}\n"
    "  acc = f32[64,16] parameter(2)\n"
    "  sidx = s32[7] parameter(3)\n"
    "  upd = f32[7,16] parameter(4)\n"
    "  sc = f32[64,16] scatter(acc, sidx, upd), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "  b = s32[10] parameter(5)\n"
    "  rb = s32[5,2] reshape(b)\n"
    "  g2 = f32[5,2,3] gather(op, rb), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}\n"
    "  ROOT t = (f32[5,2,3], f32[64,16], f32[5,2,3]) tuple(g, sc, g2)\n"
    "}\n");
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 6);
  if (n == 6) {
    /* Per position of the index vector: 10 - 2 for dim 0, 6 - 3 for dim 1. */
    CHECK(lv[1].is_index);
    CHECK_EQ_INT(lv[1].spec.bound_axis, 1);
    CHECK_EQ_INT(lv[1].spec.nbounds, 2);
    CHECK_EQ_INT(lv[1].spec.bounds[0], 8);
    CHECK_EQ_INT(lv[1].spec.bounds[1], 3);
    tr_buf b = {0};
    tr_input_spec_print(&b, &lv[1].spec);
    CHECK_STR(tr_buf_str(&b), "index bound=[8,3]@1");
    tr_buf_free(&b);
    /* Scatter: inserted dim 0 has window 1: 64 - 1. */
    CHECK(lv[3].is_index);
    CHECK_EQ_INT(lv[3].spec.bound_axis, -1);
    CHECK_EQ_INT(lv[3].spec.bound, 63);
    CHECK(!lv[4].is_index);
    /* Through a reshape positions are lost: the smallest bound. */
    CHECK(lv[5].is_index);
    CHECK_EQ_INT(lv[5].spec.bound_axis, -1);
    CHECK_EQ_INT(lv[5].spec.bound, 3);
  }
  free(lv);

  /* Drawn and evaluated: in-bounds indices never need clamping, so the
   * gather returns exactly the rows the indices name. */
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.seed = 3;
  tr_tensor **ts, **outs;
  int nt, no;
  tr_diag d = {0};
  CHECK(tr_inputs_make(m, &cfg, &ts, &nt, &d) == TR_OK);
  for (size_t i = 0; i < 10; i++) {
    int64_t v = tr_tensor_get_i(ts[1], i);
    CHECK(v >= 0 && v <= (i % 2 ? 3 : 8));
  }
  if (tr_eval(m, ts, nt, &outs, &no, &d) == TR_OK) {
    int64_t r = tr_tensor_get_i(ts[1], 0), c = tr_tensor_get_i(ts[1], 1);
    CHECK(tr_tensor_get_f(outs[0], 0) == tr_tensor_get_f(ts[0], (size_t)(r * 6 + c)));
    tr_eval_free_outputs(outs, no);
  } else {
    tr_diag_print(&d, stderr);
    CHECK(!"evaluation failed");
  }
  tr_diag_clear(&d);
  tr_inputs_free(ts, nt);
  tr_module_free(m);
}

TR_TEST(inputs_policy_tuple_and_conditional) {
  tr_module *m = parse(
    "HloModule t\n"
    "b0 {\n"
    "  x = f32[] parameter(0)\n"
    "  ROOT y = f32[] negate(x)\n"
    "}\n"
    "b1 {\n"
    "  x = f32[] parameter(0)\n"
    "  ROOT y = f32[] abs(x)\n"
    "}\n"
    "b2 {\n"
    "  x = f32[] parameter(0)\n"
    "  ROOT y = f32[] copy(x)\n"
    "}\n"
    "ENTRY e {\n"
    "  p = (f32[8], s32[]) parameter(0)\n"
    "  v = f32[8] get-tuple-element(p), index=0\n"
    "  i = s32[] get-tuple-element(p), index=1\n"
    "  s = f32[1] dynamic-slice(v, i), dynamic_slice_sizes={1}\n"
    "  br = s32[] parameter(1)\n"
    "  x = f32[] parameter(2)\n"
    "  c = f32[] conditional(br, x, x, x), branch_computations={b0, b1, b2}\n"
    "  ROOT t = (f32[1], f32[]) tuple(s, c)\n"
    "}\n");
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 4);
  if (n == 4) {
    CHECK(lv[1].is_index);
    CHECK_EQ_INT(lv[1].spec.bound, 7);
    CHECK(lv[2].is_index);
    CHECK_EQ_INT(lv[2].spec.bound, 2); /* three branches */
  }
  free(lv);
  tr_module_free(m);

  /* An unbounded dynamic dim cannot be drawn. */
  tr_diag d = {0};
  m = parse("HloModule t\nENTRY e {\n  p = f32[?] parameter(0)\n  ROOT r = f32[?] copy(p)\n}\n");
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  CHECK(tr_inputs_plan(m, &cfg, &lv, &n, &d) == TR_ERR_UNSUPPORTED);
  CHECK_CONTAINS(tr_diag_first(&d), "dynamic");
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* jax's jnp.take: the ids go into a nested call (jit(_where)) that wraps
 * negative ids, and its RESULT indexes the gather; out-of-range rows
 * become NaN. One _where serves two tables, so the walk must return to the
 * call site it came from: ids of the 5-row table get 4, of the 7-row 6. */
static const char *take_module =
  "HloModule t\n"
  "_where {\n"
  "  c = pred[6] parameter(0)\n"
  "  a = s32[6] parameter(1)\n"
  "  b = s32[6] parameter(2)\n"
  "  ROOT s = s32[6] select(c, a, b)\n"
  "}\n"
  "_take5 {\n"
  "  t = f32[5,8] parameter(0)\n"
  "  i = s32[6] parameter(1)\n"
  "  z = s32[6] broadcast(s32[] constant(0)), dimensions={}\n"
  "  lt = pred[6] compare(i, z), direction=LT\n"
  "  n = s32[6] broadcast(s32[] constant(5)), dimensions={}\n"
  "  w = s32[6] add(i, n)\n"
  "  j = s32[6] call(lt, w, i), to_apply=_where\n"
  "  r = s32[6,1] reshape(j)\n"
  "  g = f32[6,8] gather(t, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n"
  "  ge = pred[6] compare(j, z), direction=GE\n"
  "  m = s32[6] broadcast(s32[] constant(4)), dimensions={}\n"
  "  le = pred[6] compare(j, m), direction=LE\n"
  "  ok = pred[6] and(ge, le)\n"
  "  okb = pred[6,8] broadcast(ok), dimensions={0}\n"
  "  qn = f32[6,8] broadcast(f32[] constant(nan)), dimensions={}\n"
  "  ROOT y = f32[6,8] select(okb, g, qn)\n"
  "}\n"
  "_take7 {\n"
  "  t = f32[7,8] parameter(0)\n"
  "  i = s32[6] parameter(1)\n"
  "  z = s32[6] broadcast(s32[] constant(0)), dimensions={}\n"
  "  lt = pred[6] compare(i, z), direction=LT\n"
  "  n = s32[6] broadcast(s32[] constant(7)), dimensions={}\n"
  "  w = s32[6] add(i, n)\n"
  "  j = s32[6] call(lt, w, i), to_apply=_where\n"
  "  r = s32[6,1] reshape(j)\n"
  "  ROOT g = f32[6,8] gather(t, r), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,8}\n"
  "}\n"
  "ENTRY e {\n"
  "  t5 = f32[5,8] parameter(0)\n"
  "  a = s32[6] parameter(1)\n"
  "  t7 = f32[7,8] parameter(2)\n"
  "  b = s32[6] parameter(3)\n"
  "  x = f32[6,8] call(t5, a), to_apply=_take5\n"
  "  y = f32[6,8] call(t7, b), to_apply=_take7\n"
  "  ROOT s = f32[6,8] add(x, y)\n"
  "}\n";

TR_TEST(inputs_policy_through_call_result) {
  tr_module *m = parse(take_module);
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 4);
  if (n == 4) {
    CHECK(!lv[0].is_index && !lv[2].is_index);
    CHECK(lv[1].is_index && lv[1].spec.dist == TR_DIST_INDEX);
    CHECK_EQ_INT(lv[1].spec.bound, 4); /* 5 rows - 1 */
    CHECK(lv[3].is_index);
    CHECK_EQ_INT(lv[3].spec.bound, 6); /* 7 rows - 1, not the other site's 4 */
  }
  free(lv);

  /* Drawn and evaluated: every id in bounds, so no NaN row. */
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  tr_tensor **ts, **outs;
  int nt, no;
  tr_diag d = {0};
  for (uint64_t seed = 0; seed < 3; seed++) {
    cfg.seed = seed;
    CHECK(tr_inputs_make(m, &cfg, &ts, &nt, &d) == TR_OK);
    for (size_t i = 0; i < 6; i++) {
      CHECK(tr_tensor_get_i(ts[1], i) >= 0 && tr_tensor_get_i(ts[1], i) <= 4);
      CHECK(tr_tensor_get_i(ts[3], i) >= 0 && tr_tensor_get_i(ts[3], i) <= 6);
    }
    if (tr_eval(m, ts, nt, &outs, &no, &d) == TR_OK) {
      int nans = 0;
      for (size_t i = 0; i < 48; i++) nans += isnan(tr_tensor_get_f(outs[0], i));
      CHECK_EQ_INT(nans, 0);
      /* Element (0, 0) is t5[a0, 0] + t7[b0, 0]. */
      int64_t a0 = tr_tensor_get_i(ts[1], 0), b0 = tr_tensor_get_i(ts[3], 0);
      float want = (float)tr_tensor_get_f(ts[0], (size_t)(8 * a0)) +
                   (float)tr_tensor_get_f(ts[2], (size_t)(8 * b0));
      CHECK(tr_tensor_get_f(outs[0], 0) == want);
      tr_eval_free_outputs(outs, no);
    } else {
      tr_diag_print(&d, stderr);
      CHECK(!"evaluation failed");
    }
    tr_diag_clear(&d);
    tr_inputs_free(ts, nt);
  }
  tr_module_free(m);
}

TR_TEST(inputs_policy_through_fusion_and_tuples) {
  tr_module *m = parse(
    "HloModule t\n"
    "wrap {\n" /* a multi-output fusion: the wrapped index and a copy of it */
    "  i = s32[] parameter(0)\n"
    "  lt = pred[] compare(i, s32[] constant(0)), direction=LT\n"
    "  w = s32[] add(i, s32[] constant(10))\n"
    "  s = s32[] select(lt, w, i)\n"
    "  c = s32[] clamp(s32[] constant(0), s, s32[] constant(9))\n"
    "  ROOT t = (s32[], s32[]) tuple(s, c)\n"
    "}\n"
    "br0 {\n"
    "  p = (f32[20], s32[]) parameter(0)\n"
    "  v = f32[20] get-tuple-element(p), index=0\n"
    "  k = s32[] get-tuple-element(p), index=1\n"
    "  ROOT d = f32[4] dynamic-slice(v, k), dynamic_slice_sizes={4}\n"
    "}\n"
    "br1 {\n"
    "  p = (f32[20], s32[]) parameter(0)\n"
    "  ROOT z = f32[4] broadcast(f32[] constant(0)), dimensions={}\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[10,3] parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  f = (s32[], s32[]) fusion(i), kind=kLoop, calls=wrap\n"
    "  s = s32[] get-tuple-element(f), index=0\n"
    "  c = s32[] get-tuple-element(f), index=1\n"
    "  z = s32[] constant(0)\n"
    "  d1 = f32[2,3] dynamic-slice(a, s, z), dynamic_slice_sizes={2,3}\n"
    "  v = f32[20] parameter(2)\n"
    "  k = s32[] parameter(3)\n"
    "  q = pred[] parameter(4)\n"
    "  tk = (f32[20], s32[]) tuple(v, k)\n"
    "  cd = f32[4] conditional(q, tk, tk), true_computation=br0, false_computation=br1\n"
    "  h = s32[] parameter(5)\n"
    "  th = (s32[], f32[20]) tuple(h, v)\n"
    "  hh = s32[] get-tuple-element(th), index=0\n"
    "  d3 = f32[1] dynamic-slice(v, hh), dynamic_slice_sizes={1}\n"
    "  ROOT r = (f32[2,3], f32[4], f32[1], s32[]) tuple(d1, cd, d3, c)\n"
    "}\n");
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 6);
  if (n == 6) {
    /* Out of the fusion by its root tuple's element 0: 10 - 2. Element 1
     * (the clamp) only reaches the entry's root: no use. */
    CHECK(lv[1].is_index);
    CHECK_EQ_INT(lv[1].spec.bound, 8);
    /* Through a tuple into a branch and taken apart there: 20 - 4. */
    CHECK(lv[3].is_index);
    CHECK_EQ_INT(lv[3].spec.bound, 16);
    CHECK(!lv[4].is_index && lv[4].spec.dist == TR_DIST_UNIFORM); /* pred */
    /* A tuple taken apart at once: 20 - 1. */
    CHECK(lv[5].is_index);
    CHECK_EQ_INT(lv[5].spec.bound, 19);
  }
  free(lv);
  tr_module_free(m);
}

TR_TEST(inputs_policy_call_result_not_an_index) {
  /* The call's result is a sum of the ids, not the ids: drawn as data. A
   * while loop is not followed either. */
  tr_module *m = parse(
    "HloModule t\n"
    "add {\n"
    "  x = s32[] parameter(0)\n"
    "  y = s32[] parameter(1)\n"
    "  ROOT s = s32[] add(x, y)\n"
    "}\n"
    "total {\n"
    "  i = s32[4] parameter(0)\n"
    "  ROOT r = s32[] reduce(i, s32[] constant(0)), dimensions={0}, to_apply=add\n"
    "}\n"
    "cond {\n"
    "  p = (s32[], f32[8]) parameter(0)\n"
    "  ROOT f = pred[] constant(false)\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[8]) parameter(0)\n"
    "  k = s32[] get-tuple-element(p), index=0\n"
    "  v = f32[8] get-tuple-element(p), index=1\n"
    "  d = f32[1] dynamic-slice(v, k), dynamic_slice_sizes={1}\n"
    "  e = f32[] reshape(d)\n"
    "  b = f32[8] broadcast(e), dimensions={}\n"
    "  ROOT t = (s32[], f32[8]) tuple(k, b)\n"
    "}\n"
    "ENTRY e {\n"
    "  v = f32[8] parameter(0)\n"
    "  i = s32[4] parameter(1)\n"
    "  s = s32[] call(i), to_apply=total\n"
    "  d = f32[2] dynamic-slice(v, s), dynamic_slice_sizes={2}\n"
    "  k = s32[] parameter(2)\n"
    "  t = (s32[], f32[8]) tuple(k, v)\n"
    "  w = (s32[], f32[8]) while(t), condition=cond, body=body\n"
    "  ROOT r = (f32[2], (s32[], f32[8])) tuple(d, w)\n"
    "}\n");
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 3);
  if (n == 3) {
    CHECK(!lv[1].is_index && lv[1].spec.dist == TR_DIST_NORMAL);
    CHECK(!lv[2].is_index && lv[2].spec.dist == TR_DIST_NORMAL);
  }
  free(lv);
  tr_module_free(m);
}

TR_TEST(inputs_policy_shared_values_walked_once) {
  /* 60 levels of x = add(x, x) hang off the leaf before its real use:
   * 2^60 paths through them, 61 states. A walk that counts paths (or
   * stops after a step budget) never comes back to the copy that leads to
   * the dynamic-slice, and draws data. */
  tr_buf b = {0};
  tr_buf_puts(&b, "HloModule t\nENTRY e {\n  v = f32[50] parameter(0)\n"
                  "  x0 = s32[] parameter(1)\n");
  for (int i = 1; i <= 60; i++)
    tr_buf_printf(&b, "  x%d = s32[] add(x%d, x%d)\n", i, i - 1, i - 1);
  tr_buf_puts(&b, "  c = s32[] copy(x0)\n"
                  "  d = f32[8] dynamic-slice(v, c), dynamic_slice_sizes={8}\n"
                  "  ROOT r = (f32[8], s32[]) tuple(d, x60)\n}\n");
  tr_module *m = parse(tr_buf_str(&b));
  tr_buf_free(&b);
  tr_input_leaf *lv;
  int n;
  plan(m, NULL, &lv, &n);
  CHECK_EQ_INT(n, 2);
  if (n == 2) {
    CHECK(lv[1].is_index);
    CHECK_EQ_INT(lv[1].spec.bound, 42); /* 50 - 8 */
  }
  free(lv);
  tr_module_free(m);
}

/* Domain-edge inputs: the table's ranges for the module's ops at the
 * leaf's width, drawn on every third seed of the default plan for float
 * data leaves only; most drawn values fall in the ranges, the rest are
 * N(0,1) or specials, and a seed gives the same bytes. */
TR_TEST(inputs_domain_edge_plan) {
  const char *text = "HloModule m\nENTRY e {\n  x = f32[256] parameter(0)\n  d = f64[4] parameter(1)\n"
                     "  i = s32[4] parameter(2)\n  ex = f32[256] exponential(x)\n"
                     "  dt = f64[4] tanh(d)\n  ROOT t = (f32[256], f64[4], s32[4]) tuple(ex, dt, i)\n}\n";
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(m != NULL);
  if (!m) return;
  tr_domain_range r[TR_DOMAIN_MAX];
  int n = tr_inputs_domain(m, TR_DT_F32, r, TR_DOMAIN_MAX);
  bool over = false, under = false;
  for (int k = 0; k < n; k++) {
    over |= r[k].lo == 80 && r[k].hi == 89;
    under |= r[k].lo == -104 && r[k].hi == -86;
  }
  CHECK(over && under);
  n = tr_inputs_domain(m, TR_DT_F64, r, TR_DOMAIN_MAX);
  bool tanh64 = false;
  for (int k = 0; k < n; k++) tanh64 |= r[k].lo == 5 && r[k].hi == 20 && r[k].sym;
  CHECK(tanh64);
  CHECK_EQ_INT(tr_inputs_domain(m, TR_DT_S32, r, TR_DOMAIN_MAX), 0);
  for (uint64_t seed = 0; seed < 6; seed++) {
    tr_input_config cfg;
    tr_input_config_init(&cfg);
    cfg.seed = seed;
    tr_input_leaf *lv = NULL;
    int nl = 0;
    CHECK(tr_inputs_plan(m, &cfg, &lv, &nl, &d) == TR_OK);
    if (nl == 3) {
      CHECK((lv[0].spec.ndomain > 0) == (seed % 3 == 2));
      CHECK((lv[1].spec.ndomain > 0) == (seed % 3 == 2));
      CHECK_EQ_INT(lv[2].spec.ndomain, 0); /* integers keep their draws */
    }
    free(lv);
  }
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.seed = 5;
  tr_tensor **a = NULL, **b = NULL;
  int na = 0, nb = 0;
  CHECK(tr_inputs_make(m, &cfg, &a, &na, &d) == TR_OK);
  CHECK(tr_inputs_make(m, &cfg, &b, &nb, &d) == TR_OK);
  if (na == 3 && nb == 3) {
    CHECK(memcmp(a[0]->data, b[0]->data, a[0]->nbytes) == 0);
    int in_exp = 0;
    for (size_t k = 0; k < 256; k++) {
      double v = tr_tensor_get_f(a[0], k);
      in_exp += (v >= 80 && v <= 89) || (v >= -104 && v <= -86);
    }
    CHECK(in_exp > 60); /* about 3/4 * 2/4 of 256 from the two exp ranges */
  }
  tr_inputs_free(a, na);
  tr_inputs_free(b, nb);
  cfg.no_domain = true;
  tr_input_leaf *lv = NULL;
  int nl = 0;
  cfg.seed = 2;
  CHECK(tr_inputs_plan(m, &cfg, &lv, &nl, &d) == TR_OK);
  if (nl == 3) CHECK_EQ_INT(lv[0].spec.ndomain, 0);
  free(lv);
  tr_diag_clear(&d);
  tr_module_free(m);
}
