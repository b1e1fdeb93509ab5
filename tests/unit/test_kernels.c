/* test_kernels.c - the interpreter's packed matrix-product kernels: the
 * 32-byte vector ones (AVX2 machines) and the 16-byte ones must give the
 * bits of the plain sequential loop, NaN payloads included, on shapes that
 * leave partial tiles and several contraction passes. */
#include "../../src/eval/par.h"
#include "test.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static uint64_t rng_next(uint64_t *s) {
  *s = *s * 6364136223846793005ull + 1442695040888963407ull;
  return *s >> 11;
}

/* Mostly normal values, a few denormals, zeros of both signs, infs and NaNs. */
static double pick(uint64_t *s, int specials) {
  uint64_t r = rng_next(s) % 1000;
  if (specials && r == 0) return NAN;
  if (specials && r == 1) return -INFINITY;
  if (r == 2) return -0.0;
  if (r == 3) return 1e-39;
  return ((double)(rng_next(s) % 2000001) - 1000000.0) / 65536.0;
}

TR_TEST(kernels_vector_widths_same_bits) {
  enum { NB = 2, M = 37, N = 45, K = 300 };
  static int64_t ab[NB], ai[M], ak[K], bb[NB], bk[K], bj[N];
  for (int b = 0; b < NB; b++) ab[b] = b * M * K, bb[b] = b * K * N;
  for (int i = 0; i < M; i++) ai[i] = i * K;
  for (int k = 0; k < K; k++) ak[k] = k, bk[k] = k * N;
  for (int j = 0; j < N; j++) bj[j] = j;
  for (int specials = 0; specials < 2; specials++) {
    uint64_t s = 7 + (uint64_t)specials;
    float *a = malloc(sizeof(float) * NB * M * K), *bm = malloc(sizeof(float) * NB * K * N);
    double *ad = malloc(sizeof(double) * NB * M * K), *bd = malloc(sizeof(double) * NB * K * N);
    for (int i = 0; i < NB * M * K; i++) ad[i] = pick(&s, specials), a[i] = (float)ad[i];
    for (int i = 0; i < NB * K * N; i++) bd[i] = pick(&s, specials), bm[i] = (float)bd[i];
    float *c1 = malloc(sizeof(float) * NB * M * N), *c2 = malloc(sizeof(float) * NB * M * N);
    double *d1 = malloc(sizeof(double) * NB * M * N), *d2 = malloc(sizeof(double) * NB * M * N);
    ev_mm_f32(a, ab, ai, ak, bm, bb, bk, bj, c1, NB, M, N, K, 2);
    ev_mm_f32_base(a, ab, ai, ak, bm, bb, bk, bj, c2, NB, M, N, K, 1);
    ev_mm_f64(ad, ab, ai, ak, bd, bb, bk, bj, d1, NB, M, N, K, 2);
    ev_mm_f64_base(ad, ab, ai, ak, bd, bb, bk, bj, d2, NB, M, N, K, 1);
    CHECK(memcmp(c1, c2, sizeof(float) * NB * M * N) == 0);
    CHECK(memcmp(d1, d2, sizeof(double) * NB * M * N) == 0);
    /* and the plain loop, product then sum, in k order from +0 */
    int nan = 0, bad = 0;
    for (int b = 0; b < NB; b++)
      for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
          float acc = 0;
          double dacc = 0;
          for (int k = 0; k < K; k++) {
            float p = a[b * M * K + i * K + k] * bm[b * K * N + k * N + j];
            acc = acc + p;
            double q = ad[b * M * K + i * K + k] * bd[b * K * N + k * N + j];
            dacc = dacc + q;
          }
          size_t o = (size_t)(b * M * N + i * N + j);
          if (acc != acc) nan++;
          if (acc != acc ? c1[o] == c1[o] : memcmp(&acc, &c1[o], 4) != 0) bad++;
          if (dacc != dacc ? d1[o] == d1[o] : memcmp(&dacc, &d1[o], 8) != 0) bad++;
        }
    CHECK_EQ_INT(bad, 0);
    if (specials) CHECK(nan > 0);
    free(a), free(bm), free(ad), free(bd), free(c1), free(c2), free(d1), free(d2);
  }
}
