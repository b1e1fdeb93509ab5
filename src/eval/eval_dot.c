/* eval_dot.c - dot (dot_general) in the exact interpreter, as XLA's
 * HloEvaluator computes it (hlo_evaluator_typed_visitor.h HandleDot): both
 * operands are first converted to the result type; each output element
 * accumulates its products in that type's ElementwiseT (double for f64,
 * float for f32 and every narrower float, wrapping 64-bit integers for ints,
 * OR of ANDs for pred), walking the contracting dimensions in row-major
 * order with the last one fastest, and rounds once at the end. Products
 * and sums are separate statements so no compiler fuses them into FMAs.
 *
 * Speed without changing a bit: every dot is a batch of matrix products
 * C[b] = A[b] B[b] with K the flattened contracting dims (in walking
 * order), read through offset tables. The float kernels (also used by
 * convolution, par.h) pack B into column strips and A into row tiles and
 * keep a 4-row tile of C in vector registers, but each lane is one output
 * element doing the same +0, +p0, +p1, ... sequence in increasing k: the
 * vectors run across output elements, never across k. Blocking over k
 * stores the running float/double sum into C and reloads it, which is
 * exact. Threads split output blocks, so each element is computed by one
 * thread in the same order. Integer and pred sums are associative (wrapping
 * adds, ORs), so their loop order is free. */
#include "evalint.h"
#include "par.h"

#include <stdlib.h>
#include <string.h>
#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#endif

/* ---- packed float kernels (shared with convolution via par.h) ---- */

/* GCC/Clang vector extensions: plain element-wise IEEE ops on 16 bytes,
 * SSE2 on any x86-64 without -march. */
typedef float v4f __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

/* NaN payloads. The plain loop, as compiled, propagated the NaN of its
 * first operand (x86 SSE keeps the first source's payload): the product
 * takes the lhs's NaN before the rhs's, the sum the running total's before
 * the product's. Vector code may order operands either way, so every NaN
 * result is recomputed by ev_nan_dot_*, which applies that rule
 * explicitly; NaNs are rare, so this costs nothing otherwise. */
float ev_nan_dot_f32(const float *a, const int64_t *ak, const float *b, const int64_t *bk,
                     size_t k) {
  float acc = 0;
  for (size_t i = 0; i < k && acc == acc; i++) {
    float x = a[ak[i]], y = b[bk[i]], p;
    if (x != x) p = ev_quiet_f32(x);
    else if (y != y) p = ev_quiet_f32(y);
    else p = x * y;
    if (p != p) acc = ev_quiet_f32(p);
    else acc = acc + p;
  }
  return acc;
}

double ev_nan_dot_f64(const double *a, const int64_t *ak, const double *b, const int64_t *bk,
                      size_t k) {
  double acc = 0;
  for (size_t i = 0; i < k && acc == acc; i++) {
    double x = a[ak[i]], y = b[bk[i]], p;
    if (x != x) p = ev_quiet_f64(x);
    else if (y != y) p = ev_quiet_f64(y);
    else p = x * y;
    if (p != p) acc = ev_quiet_f64(p);
    else acc = acc + p;
  }
  return acc;
}

/* Tile of C kept in registers: MR rows by 2 vectors; blocks of C per
 * work item: MC rows by NC columns; KC contraction steps per pass (the
 * A tile and the B strip of one pass stay in L1). */
#define MR 4
#define MC 64
#define NC 256
#define KC 256

/* One kernel body per element type and vector width: T the scalar, V its
 * vector of VL lanes, NR = 2 * VL columns per strip; NANDOT recomputes a
 * NaN result, ATTR is the functions' target attribute (or nothing) and
 * MADD(c, a, b) the multiply-add. */
#define DEFINE_MM(SUF, T, V, VL, NANDOT, ATTR, MADD)                                          \
  enum { NR_##SUF = 2 * (VL) };                                                                \
                                                                                               \
  /* C tile (mr x nr valid of MR x NR) (+)= Ap (kc x MR) Bp (kc x NR); load: C holds the    \
   * running sums of earlier k, else they start from +0. */                                  \
  ATTR static void micro_##SUF(size_t kc, const T *ap, const T *bp, T *c, size_t ldc,         \
                               size_t mr, size_t nr, bool load) {                              \
    T tmp[MR * NR_##SUF];                                                                      \
    T *cc = c;                                                                                 \
    size_t ld = ldc;                                                                           \
    bool full = mr == MR && nr == NR_##SUF;                                                    \
    if (!full) {                                                                               \
      memset(tmp, 0, sizeof tmp);                                                              \
      if (load)                                                                                \
        for (size_t r = 0; r < mr; r++) memcpy(tmp + r * NR_##SUF, c + r * ldc, nr * sizeof(T)); \
      cc = tmp;                                                                                \
      ld = NR_##SUF;                                                                           \
      load = true;                                                                             \
    }                                                                                          \
    V c00 = {0}, c01 = {0}, c10 = {0}, c11 = {0}, c20 = {0}, c21 = {0}, c30 = {0}, c31 = {0}; \
    if (load) {                                                                                \
      memcpy(&c00, cc, sizeof(V));                                                             \
      memcpy(&c01, cc + VL, sizeof(V));                                                        \
      memcpy(&c10, cc + ld, sizeof(V));                                                        \
      memcpy(&c11, cc + ld + VL, sizeof(V));                                                   \
      memcpy(&c20, cc + 2 * ld, sizeof(V));                                                    \
      memcpy(&c21, cc + 2 * ld + VL, sizeof(V));                                               \
      memcpy(&c30, cc + 3 * ld, sizeof(V));                                                    \
      memcpy(&c31, cc + 3 * ld + VL, sizeof(V));                                               \
    }                                                                                          \
    for (size_t k = 0; k < kc; k++) {                                                          \
      V b0, b1, a;                                                                             \
      memcpy(&b0, bp, sizeof(V));                                                              \
      memcpy(&b1, bp + VL, sizeof(V));                                                         \
      for (int l = 0; l < (VL); l++) a[l] = ap[0];                                             \
      c00 = MADD(c00, a, b0);                                                                  \
      c01 = MADD(c01, a, b1);                                                                  \
      for (int l = 0; l < (VL); l++) a[l] = ap[1];                                             \
      c10 = MADD(c10, a, b0);                                                                  \
      c11 = MADD(c11, a, b1);                                                                  \
      for (int l = 0; l < (VL); l++) a[l] = ap[2];                                             \
      c20 = MADD(c20, a, b0);                                                                  \
      c21 = MADD(c21, a, b1);                                                                  \
      for (int l = 0; l < (VL); l++) a[l] = ap[3];                                             \
      c30 = MADD(c30, a, b0);                                                                  \
      c31 = MADD(c31, a, b1);                                                                  \
      ap += MR;                                                                                \
      bp += NR_##SUF;                                                                          \
    }                                                                                          \
    memcpy(cc, &c00, sizeof(V));                                                               \
    memcpy(cc + VL, &c01, sizeof(V));                                                          \
    memcpy(cc + ld, &c10, sizeof(V));                                                          \
    memcpy(cc + ld + VL, &c11, sizeof(V));                                                     \
    memcpy(cc + 2 * ld, &c20, sizeof(V));                                                      \
    memcpy(cc + 2 * ld + VL, &c21, sizeof(V));                                                 \
    memcpy(cc + 3 * ld, &c30, sizeof(V));                                                      \
    memcpy(cc + 3 * ld + VL, &c31, sizeof(V));                                                 \
    if (!full)                                                                                 \
      for (size_t r = 0; r < mr; r++) memcpy(c + r * ldc, tmp + r * NR_##SUF, nr * sizeof(T)); \
  }                                                                                            \
                                                                                               \
  typedef struct {                                                                             \
    const T *a, *bsrc;                                                                         \
    const int64_t *ab, *ai, *ak, *bb, *bk, *bj;                                                \
    T *bp; /* packed B: [nb][strips][k][NR], zero past n */                                    \
    T *c;                                                                                      \
    size_t nb, m, n, k, strips, mblocks, nblocks;                                              \
  } mm_##SUF;                                                                                  \
                                                                                               \
  /* Packs B strips [lo, hi) of the flattened (batch, strip) range. */                        \
  ATTR static void pack_b_##SUF(void *ctx, size_t lo, size_t hi) {                             \
    mm_##SUF *j = ctx;                                                                         \
    for (size_t bs = lo; bs < hi; bs++) {                                                      \
      size_t b = bs / j->strips, s = bs % j->strips, j0 = s * NR_##SUF;                        \
      T *dst = j->bp + bs * j->k * NR_##SUF;                                                   \
      const T *src = j->bsrc + j->bb[b];                                                       \
      size_t w = j->n - j0 < NR_##SUF ? j->n - j0 : NR_##SUF;                                  \
      for (size_t k = 0; k < j->k; k++, dst += NR_##SUF) {                                     \
        const T *row = src + j->bk[k];                                                         \
        size_t c = 0;                                                                          \
        for (; c < w; c++) dst[c] = row[j->bj[j0 + c]];                                        \
        for (; c < NR_##SUF; c++) dst[c] = 0;                                                  \
      }                                                                                        \
    }                                                                                          \
  }                                                                                            \
                                                                                               \
  /* Computes the C blocks [lo, hi) of the (batch, row block, column block) range. */        \
  ATTR static void mm_run_##SUF(void *ctx, size_t lo, size_t hi) {                             \
    mm_##SUF *j = ctx;                                                                         \
    size_t kcap = j->k < KC ? j->k : KC;                                                       \
    T *ap = tr_xmalloc(sizeof(T) * MC * (kcap ? kcap : 1));                                    \
    for (size_t it = lo; it < hi; it++) {                                                      \
      size_t b = it / (j->mblocks * j->nblocks), rest = it % (j->mblocks * j->nblocks);        \
      size_t i0 = rest / j->nblocks * MC, j0 = rest % j->nblocks * NC;                         \
      size_t i1 = i0 + MC < j->m ? i0 + MC : j->m, j1 = j0 + NC < j->n ? j0 + NC : j->n;       \
      T *cb = j->c + b * j->m * j->n;                                                          \
      if (j->k == 0) {                                                                         \
        for (size_t i = i0; i < i1; i++)                                                       \
          for (size_t c = j0; c < j1; c++) cb[i * j->n + c] = 0;                               \
        continue;                                                                              \
      }                                                                                        \
      for (size_t k0 = 0; k0 < j->k; k0 += KC) {                                               \
        size_t kc = j->k - k0 < KC ? j->k - k0 : KC;                                           \
        /* A rows i0..i1 in MR-row tiles, k-major inside a tile, zero rows past m. */         \
        const T *asrc = j->a + j->ab[b];                                                       \
        for (size_t i = i0; i < i0 + MC && i < (i1 + MR - 1) / MR * MR; i += MR) {             \
          T *t = ap + (i - i0) * kc;                                                           \
          for (size_t r = 0; r < MR; r++) {                                                    \
            if (i + r < i1) {                                                                  \
              const T *row = asrc + j->ai[i + r];                                              \
              for (size_t k = 0; k < kc; k++) t[k * MR + r] = row[j->ak[k0 + k]];              \
            } else {                                                                           \
              for (size_t k = 0; k < kc; k++) t[k * MR + r] = 0;                               \
            }                                                                                  \
          }                                                                                    \
        }                                                                                      \
        for (size_t c = j0; c < j1; c += NR_##SUF) {                                           \
          const T *bpp = j->bp + ((b * j->strips + c / NR_##SUF) * j->k + k0) * NR_##SUF;      \
          size_t nr = j1 - c < NR_##SUF ? j1 - c : NR_##SUF;                                   \
          for (size_t i = i0; i < i1; i += MR) {                                               \
            size_t mr = i1 - i < MR ? i1 - i : MR;                                             \
            micro_##SUF(kc, ap + (i - i0) * kc, bpp, cb + i * j->n + c, j->n, mr, nr, k0 > 0); \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
      for (size_t i = i0; i < i1; i++)                                                         \
        for (size_t c = j0; c < j1; c++) {                                                     \
          T *e = cb + i * j->n + c;                                                            \
          if (*e != *e)                                                                        \
            *e = NANDOT(j->a + j->ab[b] + j->ai[i], j->ak,                                     \
                                  j->bsrc + j->bb[b] + j->bj[c], j->bk, j->k);              \
        }                                                                                      \
    }                                                                                          \
    tr_free(ap);                                                                                  \
  }                                                                                            \
                                                                                               \
  ATTR static void matmul_##SUF(const T *a, const int64_t *ab, const int64_t *ai,              \
                                const int64_t *ak, const T *bsrc, const int64_t *bb,           \
                                const int64_t *bk, const int64_t *bj, T *c, size_t nb,         \
                                size_t m, size_t n, size_t k, int nthreads) {                  \
    if (nb == 0 || m == 0 || n == 0) return;                                                   \
    mm_##SUF j = {a, bsrc, ab, ai, ak, bb, bk, bj, NULL, c, nb, m, n, k,                       \
                  (n + NR_##SUF - 1) / NR_##SUF, (m + MC - 1) / MC, (n + NC - 1) / NC};        \
    j.bp = tr_xmalloc(sizeof(T) * nb * j.strips * NR_##SUF * (k ? k : 1));                     \
    ev_par_for(nthreads, nb * j.strips, pack_b_##SUF, &j);                                     \
    ev_par_for(nthreads, nb * j.mblocks * j.nblocks, mm_run_##SUF, &j);                        \
    tr_free(j.bp);                                                                                \
  }

/* c + a·b: the product rounded, then the sum (ISO C mode does not
 * contract), as the sequential loop; or fused, for the any-order runs. */
#define MADD_PLAIN(c, a, b) ((c) + (a) * (b))
DEFINE_MM(f32, float, v4f, 4, ev_nan_dot_f32, , MADD_PLAIN)
DEFINE_MM(f64, double, v2d, 2, ev_nan_dot_f64, , MADD_PLAIN)
#if defined(__x86_64__) && defined(__GNUC__)
/* The same kernels on 32-byte vectors for machines with AVX2 (twice the
 * lanes; no FMA: the target adds none, and ISO C mode does not contract),
 * chosen at run time. Same operations per element, so the same bits. */
typedef float v8f __attribute__((vector_size(32)));
typedef double v4d __attribute__((vector_size(32)));
#define AVX2 __attribute__((target("avx2")))
DEFINE_MM(f32x8, float, v8f, 8, ev_nan_dot_f32, AVX2, MADD_PLAIN)
DEFINE_MM(f64x4, double, v4d, 4, ev_nan_dot_f64, AVX2, MADD_PLAIN)
/* And with fused multiply-adds, for the runs whose sums may be in any
 * order and rounding (ev_mm_*_any). */
#define AVX2FMA __attribute__((target("avx2,fma")))
#define MADD_F32(c, a, b) ((v8f)_mm256_fmadd_ps((__m256)(a), (__m256)(b), (__m256)(c)))
#define MADD_F64(c, a, b) ((v4d)_mm256_fmadd_pd((__m256d)(a), (__m256d)(b), (__m256d)(c)))
DEFINE_MM(f32fma, float, v8f, 8, ev_nan_dot_f32, AVX2FMA, MADD_F32)
DEFINE_MM(f64fma, double, v4d, 4, ev_nan_dot_f64, AVX2FMA, MADD_F64)
static bool has_avx2(void) { return __builtin_cpu_supports("avx2"); }
static bool has_fma(void) { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
#else
#define matmul_f32x8 matmul_f32
#define matmul_f64x4 matmul_f64
#define matmul_f32fma matmul_f32
#define matmul_f64fma matmul_f64
static bool has_avx2(void) { return false; }
static bool has_fma(void) { return false; }
#endif

/* The entry points of par.h: which kernel runs on this CPU. */
#define MM_ENTRY(NAME, T, KERNEL)                                                                \
  void NAME(const T *a, const int64_t *ab, const int64_t *ai, const int64_t *ak, const T *bsrc,  \
            const int64_t *bb, const int64_t *bk, const int64_t *bj, T *c, size_t nb, size_t m,  \
            size_t n, size_t k, int nthreads) {                                                  \
    KERNEL(a, ab, ai, ak, bsrc, bb, bk, bj, c, nb, m, n, k, nthreads);                           \
  }

MM_ENTRY(ev_mm_f32_base, float, matmul_f32)
MM_ENTRY(ev_mm_f64_base, double, matmul_f64)
MM_ENTRY(ev_mm_f32, float, (has_avx2() ? matmul_f32x8 : matmul_f32))
MM_ENTRY(ev_mm_f64, double, (has_avx2() ? matmul_f64x4 : matmul_f64))
MM_ENTRY(ev_mm_f32_any, float, (has_fma() ? matmul_f32fma : ev_mm_f32))
MM_ENTRY(ev_mm_f64_any, double, (has_fma() ? matmul_f64fma : ev_mm_f64))

/* ---- integer and pred dots ---- */

typedef struct {
  const uint64_t *x, *yp; /* yp: B packed [nb][k][n] */
  const int64_t *ab, *ai, *ak;
  uint64_t *r;
  size_t m, n, k;
  bool pred;
} imm;

/* Output rows [lo, hi) of the flattened (batch, row) range. */
static void imm_run(void *ctx, size_t lo, size_t hi) {
  imm *j = ctx;
  for (size_t row = lo; row < hi; row++) {
    size_t b = row / j->m, i = row % j->m;
    uint64_t *acc = j->r + row * j->n;
    const uint64_t *a = j->x + j->ab[b] + j->ai[i];
    const uint64_t *yb = j->yp + b * j->k * j->n;
    for (size_t c = 0; c < j->n; c++) acc[c] = 0;
    for (size_t k = 0; k < j->k; k++) {
      uint64_t av = a[j->ak[k]];
      const uint64_t *brow = yb + k * j->n;
      if (j->pred)
        for (size_t c = 0; c < j->n; c++) acc[c] |= av & brow[c];
      else
        for (size_t c = 0; c < j->n; c++) acc[c] += av * brow[c];
    }
  }
}

/* ---- dot ---- */

/* Offsets of every index of the row-major box dims[0..n) with steps st. */
static int64_t *offsets(const int64_t *dims, const int64_t *st, int n, size_t *count) {
  size_t total = 1;
  for (int i = 0; i < n; i++) total *= (size_t)dims[i];
  int64_t *o = tr_xmalloc(sizeof(int64_t) * (total ? total : 1));
  for (size_t q = 0; q < total; q++) {
    size_t rem = q;
    o[q] = 0;
    for (int i = n - 1; i >= 0; i--) {
      size_t d = (size_t)dims[i];
      o[q] += (int64_t)(rem % d) * st[i];
      rem /= d;
    }
  }
  *count = total;
  return o;
}

tr_status ev_dot(ev_ctx *c, const tr_instr *in, const tr_tensor *x0, const tr_tensor *y0,
                 tr_tensor **out) {
  const tr_shape *s = in->shape;
  tr_dtype dt = s->dtype;
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = tr_attr_ints(in, TR_ATTR_LHS_BATCH_DIMS, &nlb);
  const int64_t *lc = tr_attr_ints(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = tr_attr_ints(in, TR_ATTR_RHS_BATCH_DIMS, &nrb);
  const int64_t *rc = tr_attr_ints(in, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  if (x0->rank > TR_TENSOR_MAX_RANK || y0->rank > TR_TENSOR_MAX_RANK || s->rank > TR_TENSOR_MAX_RANK)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", TR_TENSOR_MAX_RANK);
  tr_tensor *x = ev_convert_to(c, in, x0, dt);
  tr_tensor *y = x ? ev_convert_to(c, in, y0, dt) : NULL;
  tr_tensor *r = y ? ev_new(c, in, dt, s->rank, s->dims) : NULL;
  if (!r) {
    tr_tensor_free(x);
    tr_tensor_free(y);
    return TR_ERR_UNSUPPORTED;
  }
  int64_t xst[TR_TENSOR_MAX_RANK], yst[TR_TENSOR_MAX_RANK];
  ev_strides(x->dims, x->rank, xst);
  ev_strides(y->dims, y->rank, yst);
  /* The batch, lhs-free, rhs-free and contracting boxes with their steps
   * in x and y; the result is row-major over (batch, lhs free, rhs free). */
  int64_t bd[TR_TENSOR_MAX_RANK], bxs[TR_TENSOR_MAX_RANK], bys[TR_TENSOR_MAX_RANK];
  int64_t md[TR_TENSOR_MAX_RANK], mxs[TR_TENSOR_MAX_RANK];
  int64_t nd[TR_TENSOR_MAX_RANK], nys[TR_TENSOR_MAX_RANK];
  int64_t kd[TR_TENSOR_MAX_RANK], kxs[TR_TENSOR_MAX_RANK], kys[TR_TENSOR_MAX_RANK];
  int nm = 0, nn = 0;
  for (int i = 0; i < nlb; i++) {
    bd[i] = x->dims[lb[i]];
    bxs[i] = xst[lb[i]];
    bys[i] = yst[rb[i]];
  }
  for (int i = 0; i < x->rank; i++)
    if (!tr_ints_has(lb, nlb, i) && !tr_ints_has(lc, nlc, i)) {
      md[nm] = x->dims[i];
      mxs[nm++] = xst[i];
    }
  for (int i = 0; i < y->rank; i++)
    if (!tr_ints_has(rb, nrb, i) && !tr_ints_has(rc, nrc, i)) {
      nd[nn] = y->dims[i];
      nys[nn++] = yst[i];
    }
  for (int i = 0; i < nlc; i++) {
    kd[i] = x->dims[lc[i]];
    kxs[i] = xst[lc[i]];
    kys[i] = yst[rc[i]];
  }
  TR_ASSERT(nlb + nm + nn == s->rank);
  size_t nb, m, n, nk, t;
  int64_t *xb = offsets(bd, bxs, nlb, &nb), *yb = offsets(bd, bys, nlb, &t);
  int64_t *xm = offsets(md, mxs, nm, &m), *yn = offsets(nd, nys, nn, &n);
  int64_t *kx = offsets(kd, kxs, nlc, &nk), *ky = offsets(kd, kys, nlc, &t);
  size_t nx = tr_tensor_count(x), ny = tr_tensor_count(y), nr = tr_tensor_count(r);
  TR_ASSERT(nr == nb * m * n);
  int threads = ev_par_threads((double)nr * (double)nk);
  if (tr_dtypes[dt].kind == TR_DK_COMPLEX) {
    ev_complex_dot(x, y, r, xb, xm, kx, yb, ky, yn, nb, m, n, nk);
  } else if (dt == TR_DT_F64) {
    (c->fused ? ev_mm_f64_any : ev_mm_f64)(x->data, xb, xm, kx, y->data, yb, ky, yn, r->data, nb, m, n, nk,
                                           threads);
  } else if (tr_dtype_is_float(dt) && tr_dtypes[dt].bits <= 32) {
    /* Every type up to f32 is exact in float, the accumulator type. */
    float *fx = x->data, *fy = y->data, *fr = r->data;
    if (dt != TR_DT_F32) {
      size_t most = nx > ny ? nx : ny;
      if (nr > most) most = nr;
      double *d = tr_xmalloc(sizeof(double) * (most ? most : 1));
      fx = tr_xmalloc(sizeof(float) * (nx ? nx : 1));
      fy = tr_xmalloc(sizeof(float) * (ny ? ny : 1));
      fr = tr_xmalloc(sizeof(float) * (nr ? nr : 1));
      ev_load_flts(x, d);
      for (size_t i = 0; i < nx; i++) fx[i] = (float)d[i];
      ev_load_flts(y, d);
      for (size_t i = 0; i < ny; i++) fy[i] = (float)d[i];
      ev_mm_f32(fx, xb, xm, kx, fy, yb, ky, yn, fr, nb, m, n, nk, threads);
      for (size_t i = 0; i < nr; i++) d[i] = fr[i];
      ev_store_flts(r, d); /* rounds once to dt */
      tr_free(d);
      tr_free(fx);
      tr_free(fy);
      tr_free(fr);
    } else {
      (c->fused ? ev_mm_f32_any : ev_mm_f32)(fx, xb, xm, kx, fy, yb, ky, yn, fr, nb, m, n, nk, threads);
    }
  } else {
    uint64_t *ix = tr_xmalloc(sizeof(uint64_t) * (nx ? nx : 1));
    uint64_t *iy = tr_xmalloc(sizeof(uint64_t) * (ny ? ny : 1));
    size_t nyp = nb * nk * n;
    uint64_t *yp = tr_xmalloc(sizeof(uint64_t) * (nyp ? nyp : 1));
    uint64_t *ir = tr_xmalloc(sizeof(uint64_t) * (nr ? nr : 1));
    ev_load_ints(x, ix);
    ev_load_ints(y, iy);
    for (size_t b = 0; b < nb; b++)
      for (size_t k = 0; k < nk; k++)
        for (size_t j = 0; j < n; j++) yp[(b * nk + k) * n + j] = iy[yb[b] + ky[k] + yn[j]];
    imm job = {ix, yp, xb, xm, kx, ir, m, n, nk, dt == TR_DT_PRED};
    ev_par_for(threads, nb * m, imm_run, &job);
    ev_store_ints(r, ir);
    tr_free(ix);
    tr_free(iy);
    tr_free(yp);
    tr_free(ir);
  }
  tr_free(xb);
  tr_free(yb);
  tr_free(xm);
  tr_free(yn);
  tr_free(kx);
  tr_free(ky);
  tr_tensor_free(x);
  tr_tensor_free(y);
  *out = r;
  return TR_OK;
}
