/* par.h - what the interpreter's heavy kernels share: a per-call pthread
 * fan-out (no pool, no global state: threads are made per call), and the
 * packed matrix-multiply kernels that dot (eval_dot.c, where they live)
 * and convolution both run. Splitting only decides which thread computes
 * an output element, never how, so results do not depend on the thread
 * count. Not a public interface. */
#ifndef TR_EVAL_PAR_H
#define TR_EVAL_PAR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Work on items [lo, hi) of a range; ctx is the caller's. */
typedef void (*ev_par_fn)(void *ctx, size_t lo, size_t hi);

/* Threads worth using for `work` scalar multiply-adds (or elements times
 * their cost): 1 below a threshold where thread start-up would dominate,
 * else the online CPUs (at most 16). TRENCH_THREADS=N in the environment
 * caps it (1: sequential), for measurements. */
int ev_par_threads(double work);
/* Runs fn over [0, n) in chunks on up to nthreads threads (the caller is
 * one of them) and returns when every item is done. Which thread runs a
 * chunk varies from run to run; fn must compute each item the same way
 * whichever it is. If no thread can be started the caller runs all. */
void ev_par_for(int nthreads, size_t n, ev_par_fn fn, void *ctx);

/* C[b][i][j] = sum over k of A(b, i, k) * B(b, k, j), computed in float
 * (mm_f32) or double (mm_f64): each element starts from +0, adds its
 * products one by one in increasing k, each product rounded to the type
 * before the add (no fused multiply-add), exactly like the sequential
 * loop. Operands are gathered through offset tables: A(b, i, k) =
 * a[ab[b] + ai[i] + ak[k]], B(b, k, j) = bsrc[bb[b] + bk[k] + bj[j]]; C
 * is dense row-major [nb][m][n]. Uses up to nthreads threads. */
typedef void ev_mm_f32_fn(const float *a, const int64_t *ab, const int64_t *ai, const int64_t *ak,
                          const float *bsrc, const int64_t *bb, const int64_t *bk,
                          const int64_t *bj, float *c, size_t nb, size_t m, size_t n, size_t k,
                          int nthreads);
typedef void ev_mm_f64_fn(const double *a, const int64_t *ab, const int64_t *ai, const int64_t *ak,
                          const double *bsrc, const int64_t *bb, const int64_t *bk,
                          const int64_t *bj, double *c, size_t nb, size_t m, size_t n, size_t k,
                          int nthreads);
ev_mm_f32_fn ev_mm_f32;
ev_mm_f64_fn ev_mm_f64;
/* The same where the order and rounding of each sum may be any (the
 * shadow's value and bound runs, whose error is bounded, not their bits):
 * fused multiply-adds where the CPU has them. Never for exact mode. */
ev_mm_f32_fn ev_mm_f32_any;
ev_mm_f64_fn ev_mm_f64_any;
/* The same as ev_mm_* on 16-byte vectors whatever the CPU (ev_mm_* take
 * 32-byte ones where it has AVX2); for tests, which compare the two. */
ev_mm_f32_fn ev_mm_f32_base;
ev_mm_f64_fn ev_mm_f64_base;

/* v with its quiet bit set: what an x86 arithmetic op returns for a NaN
 * operand (signalling NaNs are quieted, payload and sign kept). */
static inline float ev_quiet_f32(float v) {
  uint32_t b;
  __builtin_memcpy(&b, &v, 4);
  b |= 0x00400000u;
  __builtin_memcpy(&v, &b, 4);
  return v;
}

static inline double ev_quiet_f64(double v) {
  uint64_t b;
  __builtin_memcpy(&b, &v, 8);
  b |= 0x0008000000000000ull;
  __builtin_memcpy(&v, &b, 8);
  return v;
}

/* The element sum a[ak[i]] * b[bk[i]] over i < k, in order, with
 * the NaN rule of the plain loops: a product takes its lhs's NaN before its
 * rhs's, a sum its running total's before the product's (quieted). The
 * kernels recompute every NaN result with it, so NaN payloads and signs do
 * not depend on how the vector code ordered its operands. */
float ev_nan_dot_f32(const float *a, const int64_t *ak, const float *b, const int64_t *bk,
                     size_t k);
double ev_nan_dot_f64(const double *a, const int64_t *ak, const double *b, const int64_t *bk,
                      size_t k);

#endif
