/* shadow_linalg.c - shadow rules of triangular-solve and cholesky.
 *
 * Triangular-solve: the value is the
 * substitution in long double on the shadow operands (as exact mode,
 * eval_linalg.c), the bound a forward error bound of a
 * backward-stable solver on operands known within their bounds:
 *
 *   x = T^-1 b,  (T + dT) x' = b + db,  |db| <= e_b,
 *   |dT| <= D = e_T + g (|T| + e_T)
 *   T (x' - x) = db - dT x'  so  d = |x' - x| <= |T^-1| (e_b + D (|x| + d))
 *
 * with g = (m+1) u for the implementation's own rounding (substitution is
 * backward stable with |dT| <= gamma_m |T + e_T|: Higham, Accuracy and
 * Stability of Numerical Algorithms, 2nd ed., Theorem 8.5) plus the
 * long double substitution's own. |T^-1| D is lower triangular, so the
 * inequality is solved for d by substitution, row by row, and holds to
 * every order: a first-order bound (d dropped on the right) is exceeded
 * where e_T is a good part of T's diagonal (a clean builtin campaign,
 * seed 10: an f64 solve on bf16-rounded operands, 1.1 times it).
 *
 * Cholesky (lower form; upper is its transpose): the value is the
 * column algorithm in long double on the shadow operand (as exact mode);
 * the implementation's factor L' is the exact factor of some A + dA with
 *
 *   |dA| <= e_A + g |L||L^T|
 *
 * (g = (n+1) u: a backward-stable Cholesky has |dA| <= gamma_{n+1}
 * |L'||L'^T|, Higham, Theorem 10.3; |L| for |L'| differs by a term of
 * order g times the bound). Two bounds, both holding to every order in
 * dA, and the smaller is kept: a majorant of X = L^-1 (L' - L) from
 * X + X^T + X X^T = L^-1 dA L^-T (majorant(), below), and the column
 * algorithm run in interval arithmetic on A +- |dA| (chol_intervals()).
 * The first-order bound |L| Phi(|L^-1| |dA| |L^-T|) they replace was
 * exceeded where e_A is a good part of a pivot (bf16-rounded operands:
 * 369 of 30,612 solver results in shadow_cholesky_large_operand_error).
 * Where neither settles (the perturbation may move a pivot to 0), the
 * matrix is uncertain. docs/ORACLE.md states both rules. */
#include "shadowint.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

tr_status sh_triangular_solve(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const sh_val *a = ops[0], *b = ops[1];
  int r = a->rank;
  if (in->noperands != 2 || !sh_is_flt(a) || !sh_is_flt(b) || a->dt != b->dt || in->shape->dtype != a->dt ||
      r < 2 || b->rank != r || a->dims[r - 1] != a->dims[r - 2])
    return sh_fallback(c, in, ops, out);
  bool left = tr_attr_bool(in, TR_ATTR_LEFT_SIDE), lower = tr_attr_bool(in, TR_ATTR_LOWER);
  bool unit = tr_attr_bool(in, TR_ATTR_UNIT_DIAGONAL);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TRANSPOSE_A);
  bool trans = ta && ta->u.s && strcmp(ta->u.s, "NO_TRANSPOSE") != 0;
  size_t m = (size_t)a->dims[r - 1];
  size_t rows = (size_t)b->dims[r - 2], cols = (size_t)b->dims[r - 1];
  size_t nrhs = left ? cols : rows;
  if ((left ? rows : cols) != m) return sh_fallback(c, in, ops, out);
  sh_val *o = sh_arr_new(c, in, b->dt, b->rank, b->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  sh_fmt f;
  sh_fmt_of(b->dt, &f);
  double k = sh_allow(c, TR_OP_TRIANGULAR_SOLVE, b->dt);
  /* the implementation's backward error and the long double one's */
  long double g = (long double)(m + 1) * k * ldexpl(1.0L, 1 - f.p) + (long double)(m + 2) * ldexpl(1.0L, -63);
  /* As eval_linalg.c: the system matrix is op(a) (left) or op(a)^T
   * (right), lower or upper; re-indexed by p(i) it is lower triangular. */
  bool t_eff = left ? trans : !trans, t_lower = lower != t_eff;
  size_t mm = m * m, nb = m ? a->n / mm : 0;
  long double *L = tr_xcalloc(mm ? mm : 1, sizeof(long double)), *Li = tr_xcalloc(mm ? mm : 1, sizeof(long double));
  long double *E = tr_xcalloc(mm ? mm : 1, sizeof(long double));
  long double *y = tr_xmalloc(sizeof(long double) * (m ? m : 1)), *d = tr_xmalloc(sizeof(long double) * (m ? m : 1));
  long double *ec = tr_xmalloc(sizeof(long double) * (m ? m : 1));
  for (size_t bi = 0; bi < nb; bi++) {
    size_t abase = bi * mm, bbase = bi * rows * cols;
    bool unsure = false, singular = false;
    for (size_t i = 0; i < m; i++)
      for (size_t q = 0; q <= i; q++) {
        /* L(i, q) = T(p(i), p(q)); T(s, t) reads a as eval_linalg.c does */
        size_t s = t_lower ? i : m - 1 - i, t = t_lower ? q : m - 1 - q;
        size_t ai = abase + (t_eff ? t * m + s : s * m + t);
        bool diag = i == q;
        L[i * m + q] = diag && unit ? 1.0L : sh_get(a, ai);
        E[i * m + q] = diag && unit ? 0.0L : (long double)a->e[ai];
        if (!(diag && unit)) unsure |= a->u[ai] != 0;
        if (diag && !unit && !(fabsl(L[i * m + i]) > E[i * m + i])) singular = true;
      }
    /* |L^-1| by substitution on the identity's columns; a product in it
     * beyond the dtype's range overflows in an implementation that
     * inverts (below), even where the entry itself fits */
    bool inv_big = false;
    for (size_t j = 0; j < m; j++)
      for (size_t i = 0; i < m; i++) {
        long double v = i == j ? 1.0L : 0.0L;
        for (size_t q = j; q < i; q++) {
          long double t = L[i * m + q] * Li[q * m + j];
          inv_big |= fabsl(t) > f.maxf;
          v -= t;
        }
        Li[i * m + j] = i < j ? 0 : v / L[i * m + i];
      }
    unsure |= inv_big;
    /* XLA's expander (triangular_solve_expander.cc) may solve with
     * explicit inverses of the diagonal blocks (MAGMA's algorithm,
     * InvertDiagonalBlocks): an entry of T^-1, or a product forming one,
     * beyond the dtype's range overflows there, and inf * 0 is NaN in the
     * products after it, though the solution may be finite (xla-cpu
     * campaigns: seed 18, NaN for 2 with a 4x4 T holding 3.4e38; seed 20,
     * NaN for 3484 with -2.9e34 over a diagonal of 2.1e-14). */
    for (size_t e = 0; e < mm && !unsure; e++) unsure = fabsl(Li[e]) > f.maxf;
    for (size_t q = 0; q < nrhs; q++) {
      bool u = unsure || singular;
      /* An intermediate beyond the dtype's range (a product, a partial
       * sum, a solved entry: finite in long double) overflows in the
       * implementation, whose order of operations is its own: inf - inf
       * may be NaN there. Such a row and every row after it (they read
       * its entry) are uncertain; a row whose entry alone overflows
       * (rounds to inf, as the implementation's) is not, the rows after
       * it are. */
      size_t ovf = m;
      bool ovf_mid = false;
      for (size_t i = 0; i < m; i++) {
        size_t s = t_lower ? i : m - 1 - i;
        size_t bix = bbase + (left ? s * cols + q : q * cols + s);
        long double v = sh_get(b, bix);
        ec[i] = b->e[bix];
        u |= b->u[bix] != 0;
        bool big = false;
        for (size_t t = 0; t < i; t++) {
          long double pt = L[i * m + t] * y[t];
          big |= fabsl(pt) > f.maxf;
          v -= pt;
          big |= fabsl(v) > f.maxf;
        }
        y[i] = v / L[i * m + i];
        if ((big || fabsl(y[i]) > f.maxf) && ovf == m) {
          ovf = i;
          ovf_mid = big;
        }
      }
      /* d = |L^-1| w with w = e_b + D (|y| + d), by substitution. Row i
       * reads d_i itself through D(i,i) |L^-1(i,i)|, which must stay
       * below 1 (else T + dT is not known to be regular). ec[t] becomes
       * w_t once row t is done. */
      bool fin = true;
      for (size_t i = 0; i < m; i++) fin = fin && isfinite(y[i]);
      for (size_t i = 0; fin && i < m; i++) {
        long double ci = ec[i], p = 0;
        for (size_t t = 0; t <= i; t++) {
          long double D = E[i * m + t] + g * (fabsl(L[i * m + t]) + E[i * m + t]);
          ci += D * (fabsl(y[t]) + (t < i ? d[t] : 0));
        }
        for (size_t t = 0; t < i; t++) p += fabsl(Li[i * m + t]) * ec[t];
        long double ai = fabsl(Li[i * m + i]);
        long double Dii = E[i * m + i] + g * (fabsl(L[i * m + i]) + E[i * m + i]);
        long double den = 1 - ai * Dii;
        d[i] = den > 0 ? (p + ai * ci) / den : INFINITY;
        ec[i] = ci + Dii * d[i];
      }
      for (size_t i = 0; i < m; i++) {
        long double p = fin ? d[i] : INFINITY;
        size_t s = t_lower ? i : m - 1 - i;
        size_t ox = bbase + (left ? s * cols + q : q * cols + s);
        unsigned char ui = u || !fin || !isfinite(p) || i > ovf || (i == ovf && ovf_mid);
        long double rv;
        double re;
        if (ui && !(isfinite(y[i]) && isfinite(p))) {
          rv = y[i];
          re = 0;
        } else {
          /* the rounding to the dtype and the overflow edge */
          /* d's own long double sums: 4m+8 roundings of 2^-64 a row,
           * carried through the m rows before it */
          sh_finish(&f, y[i], p * (1 + (long double)(4 * m + 8) * (m + 1) * ldexpl(1.0L, -64)), k, &rv, &re, &ui);
        }
        sh_put(o, ox, rv, re);
        o->u[ox] = ui;
      }
    }
  }
  tr_free(L);
  tr_free(Li);
  tr_free(E);
  tr_free(y);
  tr_free(d);
  tr_free(ec);
  *out = o;
  return TR_OK;
}

/* Intervals in long double for the Cholesky bound: each operation's
 * result widened outward by 2^-63 of its magnitude (one long double
 * rounding is at most 2^-64 of it), so an interval holds every real the
 * operation can give on reals of its operands. */
typedef struct {
  long double lo, hi;
} ivl;

static ivl iv_out(long double lo, long double hi) {
  ivl r = {lo - fabsl(lo) * ldexpl(1.0L, -63) - LDBL_TRUE_MIN, hi + fabsl(hi) * ldexpl(1.0L, -63) + LDBL_TRUE_MIN};
  return r;
}
static ivl iv_sub(ivl a, ivl b) { return iv_out(a.lo - b.hi, a.hi - b.lo); }
static ivl iv_mul(ivl a, ivl b) {
  long double p[4] = {a.lo * b.lo, a.lo * b.hi, a.hi * b.lo, a.hi * b.hi}, lo = p[0], hi = p[0];
  for (int i = 1; i < 4; i++) {
    lo = fminl(lo, p[i]);
    hi = fmaxl(hi, p[i]);
  }
  return iv_out(lo, hi);
}
static ivl iv_sqr(ivl a) {
  long double x = a.lo * a.lo, y = a.hi * a.hi;
  if (a.lo <= 0 && a.hi >= 0) return iv_out(0, fmaxl(x, y));
  return iv_out(fminl(x, y), fmaxl(x, y));
}
/* a / d for d > 0 */
static ivl iv_div_pos(ivl a, ivl d) {
  long double p[4] = {a.lo / d.lo, a.lo / d.hi, a.hi / d.lo, a.hi / d.hi}, lo = p[0], hi = p[0];
  for (int i = 1; i < 4; i++) {
    lo = fminl(lo, p[i]);
    hi = fmaxl(hi, p[i]);
  }
  return iv_out(lo, hi);
}

/* The majorant of X = L^-1 dL, lower triangular: (L + dL)(L + dL)^T =
 * A + dA gives X + X^T + X X^T = G = L^-1 dA L^-T, so X = Phi(G - X X^T)
 * and |X| <= B + Phi(|X||X|^T) with B >= Phi(|G|). Y = B + Phi(Y Y^T)
 * by iteration from B; Z = Y a little enlarged is kept (in Y) when it
 * satisfies Z >= B + Phi(Z Z^T) with Z(i,i) < 1: |X| <= Z along the path
 * from dA = 0 (X moves continuously from 0 and cannot cross Z), and
 * 1 + X(i,i) > 0 keeps the perturbed factor regular. False when the
 * iteration does not settle: the perturbation is too large for it. W is
 * scratch. */
static long double phi_yyt(const long double *Y, size_t n, size_t i, size_t j) {
  long double s = 0;
  for (size_t q = 0; q <= j; q++) s += Y[i * n + q] * Y[j * n + q];
  return i == j ? s / 2 : s;
}

static bool majorant(const long double *B, long double *Y, long double *W, size_t n) {
  size_t nn = n * n;
  memcpy(Y, B, sizeof(long double) * nn);
  bool settled = false;
  for (int it = 0; it < 60 && !settled; it++) {
    long double change = 0;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) {
        long double v = B[i * n + j] + phi_yyt(Y, n, i, j);
        if (!(v < 1e300L)) return false;
        long double d = v - Y[i * n + j];
        if (d > change * v) change = v > 0 ? d / v : 0;
        W[i * n + j] = v;
      }
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) Y[i * n + j] = W[i * n + j];
    settled = change < ldexpl(1.0L, -40);
  }
  if (!settled) return false;
  for (size_t i = 0; i < n; i++)
    for (size_t j = 0; j <= i; j++) Y[i * n + j] *= 1 + ldexpl(1.0L, -20);
  for (size_t i = 0; i < n; i++) {
    if (!(Y[i * n + i] < 1)) return false;
    for (size_t j = 0; j <= i; j++) {
      long double rhs = (B[i * n + j] + phi_yyt(Y, n, i, j)) * (1 + (long double)(2 * n + 4) * ldexpl(1.0L, -64));
      if (!(rhs <= Y[i * n + j])) return false;
    }
  }
  return true;
}

/* The column algorithm on the intervals A +- D (A the lower triangle of
 * a's matrix at base), into IL; false where a pivot's interval reaches 0
 * or overflows. */
static bool chol_intervals(const sh_val *a, size_t base, bool lower, size_t n, const long double *D, ivl *IL) {
  for (size_t j = 0; j < n; j++) {
    size_t ajj = base + j * n + j;
    ivl sj = iv_out(sh_get(a, ajj) - D[j * n + j], sh_get(a, ajj) + D[j * n + j]);
    for (size_t q = 0; q < j; q++) sj = iv_sub(sj, iv_sqr(IL[j * n + q]));
    if (!(sj.lo > 0) || !isfinite(sj.hi)) return false;
    IL[j * n + j] = iv_out(sqrtl(sj.lo), sqrtl(sj.hi));
    for (size_t i = j + 1; i < n; i++) {
      size_t aij = base + (lower ? i * n + j : j * n + i);
      ivl t = iv_out(sh_get(a, aij) - D[i * n + j], sh_get(a, aij) + D[i * n + j]);
      for (size_t q = 0; q < j; q++) t = iv_sub(t, iv_mul(IL[i * n + q], IL[j * n + q]));
      IL[i * n + j] = iv_div_pos(t, IL[j * n + j]);
    }
  }
  return true;
}

tr_status sh_cholesky(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const sh_val *a = ops[0];
  int r = a->rank;
  if (in->noperands != 1 || !sh_is_flt(a) || in->shape->dtype != a->dt || r < 2 || a->dims[r - 1] != a->dims[r - 2])
    return sh_fallback(c, in, ops, out);
  bool lower = tr_attr_bool(in, TR_ATTR_LOWER); /* XLA's default is upper */
  size_t n = (size_t)a->dims[r - 1], nn = n * n, nb = n ? a->n / nn : 0;
  sh_val *o = sh_arr_new(c, in, a->dt, a->rank, a->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  sh_fmt f;
  sh_fmt_of(a->dt, &f);
  double k = sh_allow(c, TR_OP_CHOLESKY, a->dt);
  long double g = (long double)(n + 1) * k * ldexpl(1.0L, 1 - f.p) + (long double)(n + 2) * ldexpl(1.0L, -63);
  size_t sz = nn ? nn : 1;
  long double *L = tr_xmalloc(sizeof(long double) * sz), *Li = tr_xmalloc(sizeof(long double) * sz);
  long double *D = tr_xmalloc(sizeof(long double) * sz), *B = tr_xmalloc(sizeof(long double) * sz);
  long double *Y = tr_xmalloc(sizeof(long double) * sz), *T = tr_xmalloc(sizeof(long double) * sz);
  ivl *IL = tr_xcalloc(sz, sizeof(ivl));
  for (size_t bi = 0; bi < nb; bi++) {
    size_t base = bi * nn;
    /* A(i, j) for i >= j from the triangle XLA reads; element index */
#define AX(i, j) (base + (lower ? (i) * n + (j) : (j) * n + (i)))
    bool unsure = false;
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) unsure |= a->u[AX(i, j)] != 0;
    memset(L, 0, sizeof(long double) * sz);
    for (size_t j = 0; j < n; j++) {
      long double s = sh_get(a, AX(j, j));
      for (size_t q = 0; q < j; q++) s -= L[j * n + q] * L[j * n + q];
      L[j * n + j] = sqrtl(s);
      for (size_t i = j + 1; i < n; i++) {
        long double t = sh_get(a, AX(i, j));
        for (size_t q = 0; q < j; q++) t -= L[i * n + q] * L[j * n + q];
        L[i * n + j] = t / L[j * n + j];
      }
    }
    bool fin = true;
    for (size_t i = 0; i < nn; i++) fin = fin && isfinite(L[i]);
    /* L^-1 (lower), by substitution on the identity's columns */
    for (size_t j = 0; j < n; j++)
      for (size_t i = 0; i < n; i++) {
        long double v = i == j ? 1.0L : 0.0L;
        for (size_t q = j; q < i; q++) v -= L[i * n + q] * Li[q * n + j];
        Li[i * n + j] = i < j ? 0 : v / L[i * n + i];
      }
    /* |dA| (symmetric): the input bounds plus g |L||L^T| */
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j <= i; j++) {
        long double s = 0;
        for (size_t q = 0; q <= j; q++) s += fabsl(L[i * n + q]) * fabsl(L[j * n + q]);
        D[i * n + j] = D[j * n + i] = (long double)a->e[AX(i, j)] + g * s;
      }
    /* First bound: B = Phi(|L^-1| |dA| |L^-T|) bounds Phi(|G|), then the
     * majorant Y of X = L^-1 dL (T is scratch here) */
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        long double s = 0;
        for (size_t q = 0; q <= i; q++) s += fabsl(Li[i * n + q]) * D[q * n + j];
        T[i * n + j] = s;
      }
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        long double s = 0;
        for (size_t q = 0; j <= i && q <= j; q++) s += T[i * n + q] * fabsl(Li[j * n + q]);
        B[i * n + j] = j > i ? 0 : (i == j ? s / 2 : s) * (1 + (long double)(4 * n + 8) * ldexpl(1.0L, -64));
      }
    bool maj = fin && majorant(B, Y, T, n);
    if (maj)
      for (size_t i = 0; i < n; i++)
        for (size_t j = 0; j <= i; j++) {
          long double s = 0;
          for (size_t q = j; q <= i; q++) s += fabsl(L[i * n + q]) * Y[q * n + j];
          T[i * n + j] = s * (1 + (long double)(2 * n + 4) * ldexpl(1.0L, -64));
        }
    /* Second bound: the column algorithm again, on the intervals
     * A +- |dA|: every factor of a matrix in them lies in IL. It fails
     * where a pivot's interval reaches 0. */
    bool ivok = fin && chol_intervals(a, base, lower, n, D, IL);
    unsigned char mark = unsure || !(maj || ivok);
    for (size_t i = 0; i < n; i++)
      for (size_t j = 0; j < n; j++) {
        /* result element (i, j) of the lower factor; upper: its transpose */
        size_t ox = base + (lower ? i * n + j : j * n + i);
        if (j > i) {
          /* the other triangle: 0 (eval_linalg.c), as XLA:CPU gives on a
           * positive definite input; XLA leaves it implementation-defined,
           * and XLA:CPU gives NaN there when the input holds a NaN, so it
           * is certain only with the factor itself */
          sh_put(o, ox, 0, 0);
          o->u[ox] = mark;
          continue;
        }
        unsigned char u = mark;
        long double rv = L[i * n + j], rad = INFINITY;
        double re = 0;
        /* both bounds hold, so the smaller does */
        if (maj) rad = T[i * n + j];
        if (ivok) rad = fminl(rad, fmaxl(IL[i * n + j].hi - rv, rv - IL[i * n + j].lo));
        if (!u && isfinite(rv) && isfinite(rad)) sh_finish(&f, rv, rad, k, &rv, &re, &u);
        else u = 1;
        sh_put(o, ox, rv, re);
        o->u[ox] = u;
      }
#undef AX
  }
  tr_free(L);
  tr_free(Li);
  tr_free(D);
  tr_free(B);
  tr_free(Y);
  tr_free(T);
  tr_free(IL);
  *out = o;
  return TR_OK;
}
