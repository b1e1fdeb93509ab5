/* eval_linalg.c - cholesky and triangular-solve in the exact interpreter.
 * XLA defines their results mathematically (operation_semantics.md,
 * Cholesky and TriangularSolve) and computes them with blocked expansions
 * whose rounding is an implementation detail, so the reference computes
 * the textbook algorithms in long double from the exact inputs and rounds
 * each result once: nearly the correctly rounded true value, which the
 * oracle compares within error bounds. Only the triangle XLA reads is
 * read. What XLA leaves implementation-defined - the other triangle of a
 * cholesky result, non-positive-definite or singular inputs - comes out as
 * zeros and as whatever the arithmetic gives (NaN, inf). c64 and c128
 * follow the expanders' complex forms (cholesky_c, trsolve_c). */
#include "evalint.h"

#include <complex.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Complex matrices (c64, c128) as XLA's expanders define them
 * (cholesky_expander.cc, triangular_solve_expander.cc): a = l l^H with a
 * real positive diagonal taken from the real part of a's diagonal (the
 * imaginary part of a's diagonal is not read); the upper form factors the
 * transpose of a's upper triangle and transposes back without conjugating
 * (u^H u = a); ADJOINT conjugates, TRANSPOSE does not. Long double
 * complex throughout, each part rounded once at the end. */
static long double complex cget(const tr_tensor *t, size_t i) {
  double re, im;
  tr_tensor_get_c(t, i, &re, &im);
  return (long double)re + (long double)im * I;
}

static void cset(tr_tensor *t, size_t i, long double complex z) {
  tr_tensor_set_c(t, i, (double)creall(z), (double)cimagl(z));
}

static void cholesky_c(const tr_tensor *a, tr_tensor *res, bool lower) {
  int r = a->rank;
  size_t n = (size_t)a->dims[r - 1], nn = n * n, nb = nn ? tr_tensor_count(a) / nn : 0;
  long double complex *l = tr_xmalloc(sizeof(long double complex) * (nn ? nn : 1));
  for (size_t b = 0; b < nb; b++) {
    size_t base = b * nn;
    /* A(i, j), i >= j, from the triangle read (upper: a(j, i), as is). */
#define A(i, j) cget(a, base + (lower ? (i) * n + (j) : (j) * n + (i)))
    for (size_t q = 0; q < nn; q++) l[q] = 0;
    for (size_t j = 0; j < n; j++) {
      long double s = creall(A(j, j));
      for (size_t k = 0; k < j; k++) {
        long double complex v = l[j * n + k];
        s -= creall(v) * creall(v) + cimagl(v) * cimagl(v);
      }
      l[j * n + j] = sqrtl(s);
      for (size_t i = j + 1; i < n; i++) {
        long double complex t = A(i, j);
        for (size_t k = 0; k < j; k++) t -= l[i * n + k] * conjl(l[j * n + k]);
        l[i * n + j] = t / creall(l[j * n + j]);
      }
    }
#undef A
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++)
        cset(res, base + i * n + j, lower ? (j <= i ? l[i * n + j] : 0) : (i <= j ? l[j * n + i] : 0));
  }
  tr_free(l);
}

tr_status ev_cholesky(ev_ctx *c, const tr_instr *in, const tr_tensor *a, tr_tensor **out) {
  int r = a->rank;
  if (r < 2 || a->dims[r - 1] != a->dims[r - 2])
    return ev_err(c, in, TR_ERR_INVALID, "cholesky needs square matrices");
  bool lower = tr_attr_bool(in, TR_ATTR_LOWER); /* XLA's default is upper */
  tr_tensor *res = ev_new(c, in, a->dtype, r, a->dims);
  if (!res) return TR_ERR_UNSUPPORTED;
  if (tr_dtypes[a->dtype].kind == TR_DK_COMPLEX) {
    cholesky_c(a, res, lower);
    *out = res;
    return TR_OK;
  }
  size_t n = (size_t)a->dims[r - 1], total = tr_tensor_count(a), nb = n ? total / (n * n) : 0;
  double *x = tr_xmalloc(sizeof(double) * (total ? total : 1));
  size_t nn = n * n;
  long double *l = tr_xmalloc(sizeof(long double) * (nn ? nn : 1));
  ev_load_flts(a, x);
  for (size_t b = 0; b < nb; b++) {
    double *m = x + b * n * n;
    /* A(i, j) for i >= j from the triangle XLA reads. */
#define A(i, j) ((long double)(lower ? m[(i) * n + (j)] : m[(j) * n + (i)]))
    memset(l, 0, sizeof(long double) * n * n);
    for (size_t j = 0; j < n; j++) {
      long double s = A(j, j);
      for (size_t k = 0; k < j; k++) s -= l[j * n + k] * l[j * n + k];
      l[j * n + j] = sqrtl(s);
      for (size_t i = j + 1; i < n; i++) {
        long double t = A(i, j);
        for (size_t k = 0; k < j; k++) t -= l[i * n + k] * l[j * n + k];
        l[i * n + j] = t / l[j * n + j];
      }
    }
#undef A
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++)
        m[i * n + j] = lower ? (double)(j <= i ? l[i * n + j] : 0) : (double)(i <= j ? l[j * n + i] : 0);
  }
  ev_store_flts(res, x);
  tr_free(x);
  tr_free(l);
  *out = res;
  return TR_OK;
}

/* The solve below on complex values: the system matrix entry T(i, k) is
 * a's entry, transposed as below, and conjugated for ADJOINT. */
static void trsolve_c(const tr_tensor *a, tr_tensor *res, size_t m, size_t rows, size_t cols, bool left,
                      bool t_eff, bool t_lower, bool unit, bool adj) {
  size_t nrhs = left ? cols : rows, mm = m * m, nb = mm ? tr_tensor_count(a) / mm : 0;
  long double complex *y = tr_xmalloc(sizeof(long double complex) * (m ? m : 1));
  for (size_t bi = 0; bi < nb; bi++) {
    size_t ab = bi * mm, bb = bi * rows * cols;
#define T(i, k) (adj ? conjl(cget(a, ab + (t_eff ? (k) * m + (i) : (i) * m + (k)))) \
                     : cget(a, ab + (t_eff ? (k) * m + (i) : (i) * m + (k))))
#define RHS(i) (bb + (left ? (i) * cols + q : q * cols + (i)))
    for (size_t q = 0; q < nrhs; q++) {
      for (size_t s = 0; s < m; s++) {
        size_t i = t_lower ? s : m - 1 - s;
        long double complex v = cget(res, RHS(i));
        if (t_lower)
          for (size_t k = 0; k < i; k++) v -= T(i, k) * y[k];
        else
          for (size_t k = i + 1; k < m; k++) v -= T(i, k) * y[k];
        y[i] = unit ? v : v / T(i, i);
      }
      for (size_t i = 0; i < m; i++) cset(res, RHS(i), y[i]);
    }
#undef RHS
#undef T
  }
  tr_free(y);
}

tr_status ev_triangular_solve(ev_ctx *c, const tr_instr *in, const tr_tensor *a,
                              const tr_tensor *b, tr_tensor **out) {
  int r = a->rank;
  bool left = tr_attr_bool(in, TR_ATTR_LEFT_SIDE), lower = tr_attr_bool(in, TR_ATTR_LOWER);
  bool unit = tr_attr_bool(in, TR_ATTR_UNIT_DIAGONAL);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TRANSPOSE_A);
  bool trans = ta && ta->u.s && strcmp(ta->u.s, "NO_TRANSPOSE") != 0; /* ADJOINT = TRANSPOSE for reals */
  bool adj = trans && strcmp(ta->u.s, "ADJOINT") == 0; /* conjugates complex a */
  if (r < 2 || b->rank != r || a->dims[r - 1] != a->dims[r - 2])
    return ev_err(c, in, TR_ERR_INVALID, "malformed triangular-solve");
  size_t m = (size_t)a->dims[r - 1];
  size_t rows = (size_t)b->dims[r - 2], cols = (size_t)b->dims[r - 1];
  size_t nrhs = left ? cols : rows; /* independent systems per matrix */
  if ((left ? rows : cols) != m) return ev_err(c, in, TR_ERR_INVALID, "malformed triangular-solve");
  tr_tensor *res = ev_new(c, in, b->dtype, b->rank, b->dims);
  if (!res) return TR_ERR_UNSUPPORTED;
  if (tr_dtypes[b->dtype].kind == TR_DK_COMPLEX) {
    /* see below for t_eff and t_lower; b's values are solved in place */
    bool t_eff = left ? trans : !trans;
    memcpy(res->data, b->data, b->nbytes);
    trsolve_c(a, res, m, rows, cols, left, t_eff, lower != t_eff, unit, adj);
    *out = res;
    return TR_OK;
  }
  size_t na = tr_tensor_count(a), nbt = tr_tensor_count(b), nb = m ? na / (m * m) : 0;
  double *xa = tr_xmalloc(sizeof(double) * (na ? na : 1));
  double *xb = tr_xmalloc(sizeof(double) * (nbt ? nbt : 1));
  long double *y = tr_xmalloc(sizeof(long double) * (m ? m : 1));
  ev_load_flts(a, xa);
  ev_load_flts(b, xb);
  /* op(a) is lower triangular when exactly one of lower and transpose
   * holds... for the left side. The right side solves x op(a) = b, that
   * is op(a)^T x^T = b^T: one more transpose. */
  bool t_eff = left ? trans : !trans;
  bool t_lower = lower != t_eff;
  for (size_t bi = 0; bi < nb; bi++) {
    const double *am = xa + bi * m * m;
    double *bm = xb + bi * rows * cols;
    /* T(i, k): entry of the triangular system matrix, from a's triangle. */
#define T(i, k) ((long double)(t_eff ? am[(k) * m + (i)] : am[(i) * m + (k)]))
    for (size_t q = 0; q < nrhs; q++) {
      /* Right-hand side q: a column of b (left) or a row (right). */
#define RHS(i) bm[left ? (i) * cols + q : q * cols + (i)]
      for (size_t s = 0; s < m; s++) {
        size_t i = t_lower ? s : m - 1 - s;
        long double v = RHS(i);
        if (t_lower)
          for (size_t k = 0; k < i; k++) v -= T(i, k) * y[k];
        else
          for (size_t k = i + 1; k < m; k++) v -= T(i, k) * y[k];
        y[i] = unit ? v : v / T(i, i);
      }
      for (size_t i = 0; i < m; i++) RHS(i) = (double)y[i];
#undef RHS
    }
#undef T
  }
  ev_store_flts(res, xb);
  tr_free(xa);
  tr_free(xb);
  tr_free(y);
  *out = res;
  return TR_OK;
}
