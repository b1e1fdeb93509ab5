/* shadow_complex.c - shadow mode on c64 and c128 (docs/ORACLE.md,
 * "Complex"). A complex array holds the exact interpreter's values (the
 * parts in t) and one bound per element that holds for both parts; the
 * rules here give that bound, or the uncertain mark where none is
 * derived. shadow.c sends every elementwise op, convert, dot and
 * convolution that touches a complex value here, and reduce-style results
 * after their own rule. */
#include "shadowint.h"

#include <complex.h>
#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Rounds a long double bound up to a double, so the stored bound never
 * shrinks. */
static double up(long double x) {
  double d = (double)x;
  if ((long double)d < x) d = nextafter(d, INFINITY);
  return d;
}

/* Whether a complex op has one correct result on exact operands: sign
 * and component moves, EQ/NE compares, widening converts, and add and
 * subtract (one correctly rounded operation per component). */
static bool cplx_exact_op(const tr_instr *in) {
  switch (in->op) {
  case TR_OP_NEGATE: case TR_OP_REAL: case TR_OP_IMAG: case TR_OP_COMPLEX: case TR_OP_COMPARE:
  case TR_OP_ADD: case TR_OP_SUBTRACT:
    return true;
  case TR_OP_CONVERT: {
    tr_dtype from = in->operands[0]->shape->dtype, to = in->shape->dtype;
    if (to == TR_DT_C128) return from == TR_DT_C64 || from == TR_DT_C128 || from == TR_DT_F64 ||
                                 from == TR_DT_F32 || from == TR_DT_F16 || from == TR_DT_BF16;
    return from == TR_DT_C64 || from == TR_DT_F32 || from == TR_DT_F16 || from == TR_DT_BF16;
  }
  default: return false;
  }
}

/* Component facts of a complex type: unit roundoff and smallest step. */
static void cplx_fmt(tr_dtype dt, long double *u, long double *tiny) {
  bool f = dt == TR_DT_C64;
  *u = ldexpl(1.0L, f ? -24 : -53);
  *tiny = ldexpl(1.0L, f ? -149 : -1074);
}

/* Element i of a complex or real shadow array: value (complex: the parts
 * of t; real: the shadow value) and bound. */
static void cplx_at(const sh_val *a, size_t i, long double *re, long double *im, long double *e) {
  if (sh_is_flt(a)) {
    *re = sh_get(a, i);
    *im = 0;
  } else if (tr_dtypes[a->dt].kind != TR_DK_COMPLEX) { /* an integer or pred: exact */
    bool sg = tr_dtypes[a->dt].kind == TR_DK_SINT;
    *re = sg ? (long double)tr_tensor_get_i(a->t, i) : (long double)tr_tensor_get_u(a->t, i);
    if (a->dt == TR_DT_PRED) *re = *re != 0;
    *im = 0;
  } else {
    double r, m;
    tr_tensor_get_c(a->t, i, &r, &m);
    *re = r;
    *im = m;
  }
  *e = a->e ? a->e[i] : 0;
}

/* Element i of the first operand (parts a, b, bound ea) and of the second
 * where there is one (c, d, ec; left as they are otherwise); the OR of
 * their marks. */
static unsigned char operands_at(sh_val **ops, int nops, size_t i, long double *a, long double *b,
                                 long double *ea, long double *c, long double *d, long double *ec) {
  cplx_at(ops[0], i, a, b, ea);
  unsigned char un = ops[0]->u[i];
  if (nops > 1) {
    cplx_at(ops[1], i, c, d, ec);
    un |= ops[1]->u[i];
  }
  return un;
}

/* The exact kernel of dot or convolution on real twins. */
static tr_status contract(sh_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                          tr_tensor **out) {
  return in->op == TR_OP_DOT ? ev_dot(&c->ev, in, x, y, out) : ev_convolution(&c->ev, in, x, y, out);
}

/* The bound of a complex dot or convolution: with X = |a| + |b| + 2 e_x
 * and Y likewise, every correct result is within (nk + 5) u sum X Y of
 * the true one in each part (each product, by any of the usual formulas,
 * within 6u X Y; a sum of nk terms in any order within (nk - 1) u
 * sum|terms|), and the operands' bounds move it by at most sum (2 e_x Y +
 * 2 e_y X).
 * The reference is one correct result, so the bound around it is twice
 * the rounding part plus the propagated one. The sums are real dots or
 * convolutions with the instruction's own attributes (exact mode, f64);
 * a convolution's nk per output is the kernel run on ones (padded
 * positions add exact zeros). */
static tr_status cplx_dot_bound(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *o) {
  const sh_val *x = ops[0], *y = ops[1];
  tr_tensor *mx = ev_new(&c->ev, in, TR_DT_F64, x->rank, x->dims);
  tr_tensor *my = mx ? ev_new(&c->ev, in, TR_DT_F64, y->rank, y->dims) : NULL;
  tr_tensor *ex = my ? ev_new(&c->ev, in, TR_DT_F64, x->rank, x->dims) : NULL;
  tr_tensor *ey = ex ? ev_new(&c->ev, in, TR_DT_F64, y->rank, y->dims) : NULL;
  if (!ey) {
    tr_tensor_free(mx);
    tr_tensor_free(my);
    tr_tensor_free(ex);
    return TR_ERR_UNSUPPORTED;
  }
  bool unsure = false;
  const sh_val *src[2] = {x, y};
  tr_tensor *mag[2] = {mx, my}, *err[2] = {ex, ey};
  for (int k = 0; k < 2; k++)
    for (size_t i = 0; i < src[k]->n; i++) {
      long double re, im, e;
      cplx_at(src[k], i, &re, &im, &e);
      ((double *)mag[k]->data)[i] = (double)(fabsl(re) + fabsl(im) + 2 * e);
      ((double *)err[k]->data)[i] = (double)(2 * e);
      unsure |= src[k]->u[i] != 0;
    }
  tr_instr fake = *in;
  tr_shape fs = *in->shape;
  fs.dtype = TR_DT_F64;
  fake.shape = &fs;
  tr_tensor *sxy = NULL, *sexy = NULL, *sxey = NULL, *cnt = NULL;
  tr_status st = contract(c, &fake, mx, my, &sxy);
  if (st == TR_OK) st = contract(c, &fake, ex, my, &sexy);
  if (st == TR_OK) st = contract(c, &fake, mx, ey, &sxey);
  if (st == TR_OK && in->op == TR_OP_CONVOLUTION) {
    /* the products per output (padding left out): the kernel on ones */
    for (size_t i = 0; i < x->n; i++) ((double *)ex->data)[i] = 1;
    for (size_t i = 0; i < y->n; i++) ((double *)ey->data)[i] = 1;
    st = contract(c, &fake, ex, ey, &cnt);
  }
  if (st == TR_OK) {
    const tr_attr *lc = tr_instr_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS);
    long double nk0 = 1, u, tiny;
    for (int i = 0; lc && i < lc->n; i++) nk0 *= (long double)x->dims[lc->u.ints[i]];
    cplx_fmt(o->dt, &u, &tiny);
    const double *a = sxy->data, *b = sexy->data, *d = sxey->data;
    for (size_t i = 0; i < o->n; i++) {
      long double nk = cnt ? (long double)((const double *)cnt->data)[i] : nk0;
      /* The real dots round: a relative 2^-50 more covers them. */
      long double rnd = (nk + 5) * u * a[i] * (1 + 0x1p-50L) + 4 * nk * tiny;
      long double e = (long double)b[i] + d[i] + 2 * rnd;
      double r, m;
      tr_tensor_get_c(o->t, i, &r, &m);
      o->e[i] = up(e * (1 + 0x1p-50L));
      o->u[i] = unsure || !isfinite(o->e[i]) || !isfinite(r) || !isfinite(m);
    }
  }
  tr_tensor_free(mx);
  tr_tensor_free(my);
  tr_tensor_free(ex);
  tr_tensor_free(ey);
  tr_tensor_free(sxy);
  tr_tensor_free(sexy);
  tr_tensor_free(sxey);
  tr_tensor_free(cnt);
  return st;
}

/* Bounds of the elementwise complex ops that have one (docs/ORACLE.md,
 * "Complex"): around the reference's result r, a correct result lies
 * within the propagated operand bounds plus its own rounding plus the
 * reference's distance from the true value (|r - s|, s in long double).
 * Writes o's bounds and marks; false for ops without a rule. */
static bool cplx_elem_bound(const tr_instr *in, sh_val **ops, sh_val *o) {
  tr_op op = in->op;
  if (op != TR_OP_ADD && op != TR_OP_SUBTRACT && op != TR_OP_MULTIPLY && op != TR_OP_NEGATE &&
      op != TR_OP_REAL && op != TR_OP_IMAG && op != TR_OP_COMPLEX && op != TR_OP_CONVERT &&
      op != TR_OP_ABS)
    return false;
  bool from_int = op == TR_OP_CONVERT && tr_dtypes[ops[0]->dt].kind != TR_DK_COMPLEX &&
                  !sh_is_flt(ops[0]);
  tr_dtype ct = op == TR_OP_REAL || op == TR_OP_IMAG || op == TR_OP_ABS ? ops[0]->dt : o->dt;
  long double u = 0, tiny = 0;
  if (tr_dtypes[ct].kind == TR_DK_COMPLEX) cplx_fmt(ct, &u, &tiny);
  for (size_t i = 0; i < o->n; i++) {
    long double a, b, ea, c = 0, d = 0, ec = 0;
    unsigned char un = operands_at(ops, in->noperands, i, &a, &b, &ea, &c, &d, &ec);
    long double sre, sim, e;
    switch (op) {
    case TR_OP_ADD: case TR_OP_SUBTRACT:
      sre = op == TR_OP_ADD ? a + c : a - c;
      sim = op == TR_OP_ADD ? b + d : b - d;
      e = ea + ec + u * (fmaxl(fabsl(sre), fabsl(sim)) + ea + ec) + tiny;
      break;
    case TR_OP_MULTIPLY: {
      long double X = fabsl(a) + fabsl(b) + 2 * ea, Y = fabsl(c) + fabsl(d) + 2 * ec;
      sre = a * c - b * d;
      sim = a * d + b * c;
      /* 6u X Y: the textbook formula needs 2u (with or without FMA); the
       * 3-multiplication one, (a + b)(c + d) - ac - bd, up to 6u X Y. */
      e = 2 * ea * Y + 2 * ec * X + 6 * u * X * Y + 4 * tiny;
      break;
    }
    case TR_OP_NEGATE: sre = -a; sim = -b; e = ea; break;
    case TR_OP_COMPLEX: sre = a; sim = c; e = fmaxl(ea, ec); break;
    case TR_OP_CONVERT:
      sre = a;
      sim = b;
      /* From an integer: exact up to 2^p = 1/u, else one rounding (half
       * an ulp, at most u|a|), which the reference made too (gap). */
      if (from_int) e = fabsl(a) <= 1 / u ? 0 : u * fabsl(a);
      else e = ea + u * (fmaxl(fabsl(a), fabsl(b)) + ea) + tiny;
      break;
    case TR_OP_ABS:
      /* hypot: |z| moves by at most |dz| <= sqrt(2) e; an implementation's
       * own error is allowed 2 ulps of the component type (4u relative):
       * XLA:CPU's is within 1 ulp of E's (measured, 256 pairs). */
      sre = hypotl(a, b);
      sim = 0;
      e = 1.5L * ea;
      e += 4 * u * (sre + e) + tiny;
      break;
    default: sre = a; sim = b; e = ea; break; /* real, imag: the part of t, exact */
    }
    if (op == TR_OP_REAL || op == TR_OP_IMAG || op == TR_OP_ABS) {
      /* A float result: its shadow value is the part itself (abs: the
       * long double hypot). */
      long double v = op == TR_OP_IMAG ? sim : sre;
      if (o->d) o->d[i] = (double)v;
      else o->lv[i] = v;
      o->e[i] = up(e);
      o->u[i] = un || !isfinite(v);
      continue;
    }
    double r, m;
    tr_tensor_get_c(o->t, i, &r, &m);
    long double gap = fmaxl(fabsl((long double)r - sre), fabsl((long double)m - sim));
    long double E = (e + gap) * (1 + 0x1p-60L);
    o->e[i] = up(E);
    o->u[i] = un || !isfinite(r) || !isfinite(m) || !isfinite(o->e[i]);
  }
  return true;
}

/* Range facts of a complex type for the divide and function rules: a
 * nonzero magnitude in [small, big] keeps every intermediate of the usual
 * algorithms (|z|^2, ac + bd, the scaled forms) away from overflow and
 * from underflow that matters: small^2 = 2^(emin + p + 4), big^2 =
 * 2^(emax - 4). */
typedef struct {
  long double u, tiny, small, big;
  tr_dtype comp; /* f32 or f64 */
} cplx_range;

static void cplx_range_of(tr_dtype dt, cplx_range *r) {
  bool f = dt == TR_DT_C64;
  cplx_fmt(dt, &r->u, &r->tiny);
  r->comp = f ? TR_DT_F32 : TR_DT_F64;
  int p = f ? 24 : 53, emin = f ? -126 : -1022, emax = f ? 127 : 1023;
  r->small = ldexpl(1.0L, (emin + p) / 2 + 2);
  r->big = ldexpl(1.0L, emax / 2 - 2);
}

static bool in_range(const cplx_range *r, long double m) { return m >= r->small && m <= r->big; }

/* Bounds of divide, sign, sqrt, rsqrt, exp, expm1, log, log1p, sin, cos,
 * tanh, tan, logistic, atan2 and power (docs/ORACLE.md, "Complex", with
 * the derivations). Around the long
 * double value s of the op on the reference's operands: the operands'
 * bounds moved through a rigorous Lipschitz bound on the box (Dx =
 * sqrt(2) e_x is the distance of any point of the box), plus an
 * implementation's own rounding in units of the result's modulus (sin,
 * cos, tanh, tan: of cosh terms), plus the reference's distance from s.
 * Uncertain where the box reaches a pole, zero or a branch cut, or a
 * magnitude is near the range edges. Writes o's bounds and marks; false
 * for other ops. */

/* min |cosh(w)|^2 = sinh^2(Re w) + cos^2(Im w) over the box |w - (x+iy)|
 * <= D (each part within D): sinh^2 at the smallest |Re|, cos^2 at the
 * box edge nearest a zero of cos, 0 when one is inside. */
static long double min_cosh2(long double x, long double y, long double D) {
  long double lo = fabsl(x) - D, ms = lo > 0 ? sinhl(lo) * sinhl(lo) : 0;
  const long double pi = 3.14159265358979323846264338327950288L;
  long double z0 = pi / 2 + ceill((y - D - pi / 2) / pi) * pi; /* first zero of cos >= y - D */
  long double mc = z0 <= y + D ? 0 : fminl(cosl(y - D) * cosl(y - D), cosl(y + D) * cosl(y + D));
  return ms + mc;
}
static bool cplx_fn_bound(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *o) {
  tr_op op = in->op;
  if (op != TR_OP_DIVIDE && op != TR_OP_SIGN && op != TR_OP_SQRT && op != TR_OP_RSQRT &&
      op != TR_OP_EXPONENTIAL && op != TR_OP_LOG && op != TR_OP_SINE && op != TR_OP_COSINE &&
      op != TR_OP_TANH && op != TR_OP_TAN && op != TR_OP_EXPONENTIAL_MINUS_ONE &&
      op != TR_OP_LOG_PLUS_ONE && op != TR_OP_LOGISTIC && op != TR_OP_ATAN2 && op != TR_OP_POWER)
    return false;
  if (tr_dtypes[o->dt].kind != TR_DK_COMPLEX) return false;
  cplx_range rg;
  cplx_range_of(o->dt, &rg);
  long double u = rg.u, tiny = rg.tiny, ld = 0x1p-60L; /* ld: long double's own error */
  /* Allowances of the real functions the usual algorithms use, in ulps
   * (k ulps <= 2k u of the value: an ulp is at most 2u of it). */
  long double kexp = sh_allow(c, TR_OP_EXPONENTIAL, rg.comp);
  long double ksin = fmaxl(sh_allow(c, TR_OP_SINE, rg.comp), sh_allow(c, TR_OP_COSINE, rg.comp));
  long double klog = fmaxl(sh_allow(c, TR_OP_LOG, rg.comp), sh_allow(c, TR_OP_ATAN2, rg.comp));
  long double kpow = sh_allow(c, TR_OP_POWER, rg.comp);
  const long double r2 = 1.4142135623730950488L;
  for (size_t i = 0; i < o->n; i++) {
    long double a, b, ea, cc = 0, d = 0, ec = 0;
    unsigned char un = operands_at(ops, in->noperands, i, &a, &b, &ea, &cc, &d, &ec);
    if (op == TR_OP_LOG_PLUS_ONE) {
      /* log(1 + z): the log rule on 1 + z (exact in long double), whose
       * box grows by the rounding of 1 + a a plain implementation makes. */
      a += 1;
      ea += u * fabsl(a);
    }
    long double Z = hypotl(a, b), D = r2 * ea, sre = a, sim = b, e = 0;
    bool exact0 = false; /* an exact result (sre, sim) with no error (sign, sqrt of an exact 0, x^0) */
    switch (op) {
    case TR_OP_DIVIDE: {
      /* |x'/y' - x/y| = |dx y - x dy| / |y y'| <= (Dx + |x| Dy/|y|) / (|y| - Dy).
       * Rounding: every usual algorithm (textbook, Smith's, the scaled
       * one of compiler-rt, XLA:CPU's) errs per part by a few u |x|/|y|:
       * the textbook numerator ac + bd by 2u(|ac| + |bd|) <= 2u|x||y|
       * (Cauchy-Schwarz), c^2 + d^2 by 2u|y|^2, the division by u: 5u;
       * Smith's (a + b r)/(c + d r), r = d/c with |d| <= |c|, by about 7u,
       * as |a| + |b r| <= |x| sqrt(1 + r^2) and |c + d r| = |y| sqrt(1 +
       * r^2); allowed: 8u. */
      long double Y = hypotl(cc, d), Dy = r2 * ec;
      if (!(Y > 0) || !in_range(&rg, Y) || (Z != 0 && !in_range(&rg, Z)) || Dy > Y / 2) {
        un = 1;
        break;
      }
      long double den = cc * cc + d * d;
      sre = (a * cc + b * d) / den;
      sim = (b * cc - a * d) / den;
      long double q = (Z + D) / (Y - Dy);
      e = (D + Z * Dy / Y) / (Y - Dy) + 8 * u * q + 4 * ld * q + 2 * tiny;
      break;
    }
    case TR_OP_SIGN:
      /* z/|z|: |z'/|z'| - z/|z|| <= 2|dz|/|z|; |z| (hypot or the naive
       * root, 2u) and the divisions (u) give 3u of the unit result:
       * allowed 4u. */
      if (Z == 0 && ea == 0) {
        exact0 = true;
        break;
      }
      if (!in_range(&rg, Z) || D > Z / 2) {
        un = 1;
        break;
      }
      sre = a / Z;
      sim = b / Z;
      e = 2 * D / Z + 4 * u + 4 * ld + 2 * tiny;
      break;
    case TR_OP_SQRT: case TR_OP_RSQRT: case TR_OP_LOG: case TR_OP_LOG_PLUS_ONE: {
      /* Both have a cut along the negative reals: uncertain when the box
       * reaches it (or 0). sqrt: |sqrt z' - sqrt z| = |dz| / |sqrt z' +
       * sqrt z| <= |dz| / sqrt|z| (the roots are less than pi/2 apart);
       * allowed 8u |result| (t = sqrt((|a| + |z|)/2) within 2u, b/(2t)
       * within 3u). log: |log z' - log z| <= |dz| / (|z| - |dz|); the
       * real part log|z| with |z| 2u off moves by 2u absolutely, then
       * log's and atan2's own budgets of k ulps: 4u + 2k u |result|.
       * rsqrt: |1/sqrt z' - 1/sqrt z| = |sqrt z - sqrt z'| / |sqrt z'
       * sqrt z| <= |dz| / (|z| sqrt(|z| - |dz|)); 1/sqrt z as sqrt (8u)
       * then a reciprocal (p - iq)/(p^2 + q^2) (4u), or sqrt(1/z):
       * allowed 16u |result|. */
      if (Z == 0 && ea == 0 && op == TR_OP_SQRT) {
        exact0 = true;
        break;
      }
      if ((ea > 0 && a - ea < 0 && fabsl(b) <= ea) || !in_range(&rg, Z) || D > Z / 2) {
        un = 1;
        break;
      }
      long double complex w = op == TR_OP_SQRT || op == TR_OP_RSQRT ? csqrtl(a + b * I) : clogl(a + b * I);
      if (op == TR_OP_RSQRT) w = 1.0L / w;
      sre = creall(w);
      sim = cimagl(w);
      long double W = cabsl(w);
      if (op == TR_OP_SQRT) {
        long double p = D / sqrtl(Z);
        e = p + 8 * u * (W + p) + 4 * ld * W + 2 * tiny;
      } else if (op == TR_OP_RSQRT) {
        long double p = D / (Z * sqrtl(Z - D));
        e = p + 16 * u * (W + p) + 4 * ld * W + 2 * tiny;
      } else {
        long double p = D / (Z - D);
        e = p + 4 * u + 2 * klog * u * (W + p) + 4 * ld * W + 2 * tiny;
      }
      break;
    }
    case TR_OP_SINE: case TR_OP_COSINE: {
      /* sin z = sin a cosh b + i cos a sinh b, cos z = cos a cosh b - i
       * sin a sinh b: each part is at most cosh b, and |sin w|, |cos w| <=
       * cosh(Im w), so over the box |f(z') - f(z)| <= Dz cosh(|b| + Dz).
       * The usual formula: sin and cos within ksin ulps of a unit, cosh
       * and sinh as (e^b +- e^-b)/2 within (2 kexp + 1)u of cosh b, the
       * product u: (2 ksin + 2 kexp + 2)u cosh b per part, 2 more
       * allowed (absolute, in units of cosh b: a part near a zero of sin
       * or cos has no relative accuracy). Uncertain near overflow. */
      if (!isfinite(a) || !isfinite(b) || fabsl(b) + D > (rg.comp == TR_DT_F32 ? 86 : 707)) {
        un = 1;
        break;
      }
      long double complex w = op == TR_OP_SINE ? csinl(a + b * I) : ccosl(a + b * I);
      sre = creall(w);
      sim = cimagl(w);
      long double C = coshl(fabsl(b) + D);
      e = D * C + (2 * ksin + 2 * kexp + 4) * u * C + 4 * ld * C + (ksin + kexp + 3) * tiny;
      break;
    }
    case TR_OP_TANH: case TR_OP_TAN: {
      /* tanh z = (sinh 2x + i sin 2y) / (cosh 2x + cos 2y), z = x + iy; tan
       * z = -i tanh(iz), the same rule on (x, y) = (-b, a). Over the box
       * |f(z') - f(z)| <= Dz / M, M = min |cosh w|^2 = min sinh^2 x' + min
       * cos^2 y' (both parts bounded apart). The formula: numerator and
       * denominator each within (2 kexp + 2 ksin + 2)u of C = cosh 2x + 1
       * (sinh, cosh via exp, sin, cos, the sum), so the quotient within
       * c u (1 + |w|) C / (2M) with c = 2 kexp + 2 ksin + 4; sinh z / cosh
       * z errs by less (cosh x / |cosh z| <= C / (2M)) plus a divide,
       * 9u |w| more. Uncertain when the box holds a pole (M = 0) or cosh
       * 2x nears overflow. */
      long double x = op == TR_OP_TANH ? a : -b, y = op == TR_OP_TANH ? b : a;
      long double lim = rg.comp == TR_DT_F32 ? 86 : 707;
      if (!isfinite(x) || !isfinite(y) || 2 * (fabsl(x) + D) > lim) {
        un = 1;
        break;
      }
      long double M = min_cosh2(x, y, D);
      if (!(M > 0) || D > M) {
        un = 1;
        break;
      }
      long double complex w = op == TR_OP_TANH ? ctanhl(a + b * I) : ctanl(a + b * I);
      sre = creall(w);
      sim = cimagl(w);
      long double W = cabsl(w), p = D / M, C = coshl(2 * (fabsl(x) + D)) + 1;
      e = p + (2 * kexp + 2 * ksin + 4) * u * (1 + W + p) * C / (2 * M) + 9 * u * (W + p) + 4 * ld * (W + 1) +
          (kexp + ksin + 3) * tiny;
      break;
    }
    case TR_OP_LOGISTIC: {
      /* 1/(1 + e^-z) = (1 + tanh(z/2))/2, so |f'(w)| = 1/(4|cosh(w/2)|^2):
       * over the box Dz/(4M), M = min |cosh|^2 over the box of z/2 (radius
       * Dz/2), as in the tanh rule. Rounding, XLA's expansion 1/(1 +
       * exp(-z)) (logistic_expander.cc): with |1 + e^-z|^2 = 4e^-a
       * |cosh(z/2)|^2 >= 4e^-a M, exp's error eps e^-a and the add's u|q|
       * reach the quotient as eps/(4M) + u|w|, the divide 8u|w| more; 0.5
       * + 0.5 tanh(z/2): half the tanh rule at z/2 (its C = cosh(|a| + Dz)
       * + 1, its propagation 2p, t = tanh(z/2) = 2w - 1) plus the add's
       * u(1 + |t|)/2. Allowed: the larger of c u (1 + p)/(4M) + 10u(|w| +
       * p) and c u (1 + |t| + 2p) C/(4M) + 4.5u(|t| + 2p) + u(1 + |t| +
       * 2p)/2, c = 2kexp + 2ksin + 4 (exp's own 2kexp + 2ksin + 3, one u
       * more for second order).
       * Uncertain at the poles (M = 0, Dz/2 > M) and where e^-a nears
       * overflow. */
      long double x = a / 2, y = b / 2, Dh = D / 2;
      long double lim = rg.comp == TR_DT_F32 ? 86 : 707;
      if (!isfinite(x) || !isfinite(y) || fabsl(a) + D > lim) {
        un = 1;
        break;
      }
      long double M = min_cosh2(x, y, Dh);
      if (!(M > 0) || Dh > M) {
        un = 1;
        break;
      }
      long double complex w = 1.0L / (1.0L + cexpl(-(a + b * I)));
      sre = creall(w);
      sim = cimagl(w);
      long double W = cabsl(w), T = cabsl(2 * w - 1), p = D / (4 * M), C = coshl(fabsl(a) + D) + 1;
      long double cr = 2 * kexp + 2 * ksin + 4;
      long double ra = cr * u * (1 + p) / (4 * M) + 10 * u * (W + p);
      long double rb = cr * u * (1 + T + 2 * p) * C / (4 * M) + 4.5L * u * (T + 2 * p) + u * (1 + T + 2 * p) / 2;
      e = p + fmaxl(ra, rb) + 4 * ld * (W + 1) + (kexp + ksin + 3) * tiny;
      break;
    }
    case TR_OP_ATAN2: {
      /* E and XLA:CPU: atan2(y, x) = -i log(q), q = (x + iy)/sqrt(s),
       * s = x^2 + y^2 (here y = lhs (a, b), x = rhs (cc, d)). Where s
       * stays off sqrt's cut and q off log's, f is analytic with f_y =
       * x/s, f_x = -y/s; the rule bounds it through discs: every s' of
       * the box (and of a correct computation) lies within Rs = (2|x| +
       * Dx)Dx + (2|y| + Dy)Dy + 6u(|x|_1^2 + |y|_1^2) + 2u|s| of s (the
       * squares by any multiply, 6u each, |.|_1 over the box; the add),
       * its root within Rr = Rs/sqrt|s| + 8u sqrt(|s| + Rs) (sqrt's rule),
       * x + iy within Rv = Dx + Dy + 2u(|x| + |y| + Dx + Dy) (i y is
       * exact), q within Rq = (Rv|r| + |v|Rr)/(|r|
       * (|r| - Rr)) + 8u(|v| + Rv)/(|r| - Rr) (divide), and log moves by
       * Rq/(|q| - Rq); log's own 4u + 2k u |f|; the product by -i is
       * exact. Uncertain where a disc reaches a cut or 0 (the side taken
       * there depends on signs of zero an implementation may produce
       * otherwise), or magnitudes leave the range. */
      long double complex Yv = a + b * I, Xv = cc + d * I;
      long double Dx = r2 * ec, Dy = D, nx = cabsl(Xv), ny = Z;
      long double m = fmaxl(nx, ny);
      if (!isfinite(m) || !in_range(&rg, m)) {
        un = 1;
        break;
      }
      long double complex s2 = Xv * Xv + Yv * Yv, v = Xv + I * Yv;
      long double S = cabsl(s2), x1 = fabsl(cc) + fabsl(d) + 2 * ec, y1 = fabsl(a) + fabsl(b) + 2 * ea;
      long double Rs = (2 * nx + Dx) * Dx + (2 * ny + Dy) * Dy + 6 * u * (x1 * x1 + y1 * y1) + 2 * u * S;
      long double ds = creall(s2) > 0 ? S : fabsl(cimagl(s2));
      if (!(ds > Rs) || !(sqrtl(S) >= rg.small)) {
        un = 1;
        break;
      }
      long double R = sqrtl(S), Rr = Rs / R + 8 * u * sqrtl(S + Rs), V = cabsl(v);
      long double Rv = Dx + Dy + 2 * u * (nx + ny + Dx + Dy);
      if (!(Rr < R / 2)) {
        un = 1;
        break;
      }
      long double complex q = v / csqrtl(s2);
      long double Q = cabsl(q), Rq = (Rv * R + V * Rr) / (R * (R - Rr)) + 8 * u * (V + Rv) / (R - Rr);
      long double dq = creall(q) > 0 ? Q : fabsl(cimagl(q));
      if (!(dq > Rq) || !(Rq < Q / 2)) {
        un = 1;
        break;
      }
      long double complex L = clogl(q);
      sre = -0.0L * creall(L) + cimagl(L);
      sim = -0.0L * cimagl(L) - creall(L);
      long double F = cabsl(L), pq = Rq / (Q - Rq);
      e = pq + 4 * u + 2 * klog * u * (F + pq) + 4 * ld * F + 2 * tiny;
      break;
    }
    case TR_OP_POWER: {
      /* x^y = exp(y log x) (E: 1 when y is 0; cpow). Over the boxes: log
       * x moves by DL = Dx/(|x| - Dx) (log's rule), M = y log x by dM =
       * |y| DL + Dy (|L| + DL), the result by W expm1(dM), W = e^Re M.
       * Rounding, as a change of M: log within 4u + 2k u |L| (absolute),
       * times y: sqrt2 (|y| + Dy) of that, the product 12u |y|_1 |L|_1
       * (any multiply, modulus); XLA:CPU's |x|^c e^(-d arg x) (cos + i
       * sin)(c arg x + d ln|x|) (EmitComplexPower; older: (|x|^2)^(c/2))
       * errs by
       * the same terms (|c|u from |x|^2's 2u, the products, arg's and
       * ln's ulps); then exp, pow, cos and sin's own ulps and the
       * products: (2kpow + 2kexp + 2ksin + 4)u of the result. Uncertain
       * where x's box reaches 0 or log's cut (as log), near overflow, and
       * on non-finite values; y exactly 0 gives 1 exactly for finite x. */
      if (cc == 0 && d == 0 && ec == 0 && !un) {
        if (isfinite(a) && isfinite(b) && isfinite(ea)) exact0 = true;
        else un = 1;
        sre = 1;
        sim = 0;
        break;
      }
      if ((ea > 0 && a - ea < 0 && fabsl(b) <= ea) || !in_range(&rg, Z) || D > Z / 2 || !isfinite(cc) ||
          !isfinite(d)) {
        un = 1;
        break;
      }
      long double complex L = clogl(a + b * I), yv = cc + d * I;
      long double Ln = cabsl(L), Yn = cabsl(yv), Dyy = r2 * ec, DL = D / (Z - D);
      long double dM = Yn * DL + Dyy * (Ln + DL);
      long double complex Mv = yv * L;
      long double lim = rg.comp == TR_DT_F32 ? 86 : 707;
      /* Only the result's own range: XLA:CPU's split of e^Re M into |x|^c
       * e^(-d arg x) overflows in one factor for results in range and
       * gives NaN or inf there (docs/FINDINGS.md, finding 14); exp(y log
       * x) has no such intermediate. */
      if (!(creall(Mv) + dM + 1 < lim)) {
        un = 1;
        break;
      }
      long double complex w = cexpl(Mv);
      sre = creall(w);
      sim = cimagl(w);
      long double W = expl(creall(Mv)), p = W * expm1l(dM);
      long double y1 = fabsl(cc) + fabsl(d) + 2 * ec, l1 = fabsl(creall(L)) + fabsl(cimagl(L)) + 2 * DL;
      long double dr = r2 * (Yn + Dyy) * (4 * u + 2 * klog * u * (Ln + DL)) + 12 * u * y1 * l1;
      long double Wb = W + p;
      e = p + Wb * (expm1l(dr) + (2 * kpow + 2 * kexp + 2 * ksin + 4) * u) + 4 * ld * W +
          (kpow + kexp + ksin + 3) * tiny;
      break;
    }
    default: { /* exponential, exponential-minus-one */
      /* |exp z' - exp z| = |exp z| |exp dz - 1| <= e^a expm1(Dz). The
       * usual exp(a) (cos b + i sin b): exp within kexp ulps, cos and sin
       * within ksin ulps of a unit, the products u: (2 kexp + 2 ksin + 1)u
       * of the modulus, 2 more allowed; below the normal range each of
       * them may be its ulps of tiny off. Uncertain near overflow. */
      long double W = expl(a);
      if (!isfinite(a) || !isfinite(b) || a > (rg.comp == TR_DT_F32 ? 86 : 707)) {
        un = 1;
        break;
      }
      long double complex w = cexpl(a + b * I);
      sre = creall(w);
      sim = cimagl(w);
      long double p = W * expm1l(D);
      e = p + (2 * kexp + 2 * ksin + 3) * u * (W + p) + 4 * ld * W + (kexp + ksin + 3) * tiny;
      if (op == TR_OP_EXPONENTIAL_MINUS_ONE) {
        /* exp(z) - 1 = (e^a cos b - 1) + i e^a sin b: the same errors in
         * units of e^a + 1 (the real part by exp(z) - 1, or by expm1(a)
         * cos b - 2 sin^2(b/2), is a sum of terms that large), one more u
         * for the subtraction. */
        sre -= 1;
        e = p + (2 * kexp + 2 * ksin + 4) * u * (W + p + 1) + 4 * ld * (W + 1) + (kexp + ksin + 3) * tiny;
      }
      break;
    }
    }
    double r, m;
    tr_tensor_get_c(o->t, i, &r, &m);
    if (exact0) {
      o->e[i] = 0;
      o->u[i] = un || r != sre || m != sim;
      continue;
    }
    long double gap = fmaxl(fabsl((long double)r - sre), fabsl((long double)m - sim));
    long double E = (e + gap) * (1 + 0x1p-60L);
    o->e[i] = up(E);
    o->u[i] = un || !isfinite(r) || !isfinite(m) || !isfinite(o->e[i]) || isnan(E);
    if (o->u[i]) o->e[i] = isfinite(o->e[i]) ? o->e[i] : 0;
  }
  return true;
}

/* Complex arithmetic (docs/ORACLE.md, "Complex"). The exact interpreter
 * computes the result. Where the op is exact on exact operands it is
 * certain with bound 0; add, subtract, multiply, negate, real, imag,
 * complex, abs, converts, dot, convolution, divide, sign, sqrt, rsqrt,
 * exp, expm1, log, log1p, sin, cos, tanh, tan, logistic, atan2 and power
 * get a bound per element (both parts) around it; anything else marks
 * its complex and float results uncertain: a correct implementation may
 * round otherwise (other formulas, FMA, approximate transcendentals) and
 * no bound is derived. */
tr_status sh_complex(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  bool exact = true;
  for (int i = 0; i < in->noperands; i++) exact = exact && sh_is_exact(ops[i]);
  tr_status st = sh_fallback(c, in, ops, out);
  if (st != TR_OK) return st;
  if (cplx_exact_op(in) && exact) {
    sh_mark_leaves(*out, true, TR_DK_COMPLEX, 0);
    return TR_OK;
  }
  sh_val *o = *out;
  if (sh_is_arr(o) && (in->op == TR_OP_DOT || in->op == TR_OP_CONVOLUTION) && o->e && in->noperands == 2 &&
      sh_is_arr(ops[0]) && sh_is_arr(ops[1]))
    return cplx_dot_bound(c, in, ops, o);
  if (sh_is_arr(o) && o->e && in->op != TR_OP_COMPARE &&
      (cplx_fn_bound(c, in, ops, o) || cplx_elem_bound(in, ops, o)))
    return TR_OK;
  if (in->op != TR_OP_COMPARE) { /* compare: the fallback's marks (exact operands: certain) */
    sh_mark_leaves(o, false, TR_DK_COMPLEX, 1);
    sh_mark_leaves(o, false, TR_DK_FLOAT, 1);
  }
  return TR_OK;
}

bool sh_is_complex_arith(const tr_instr *in) {
  tr_op op = in->op;
  if (op == TR_OP_REAL || op == TR_OP_IMAG || op == TR_OP_COMPLEX) return true;
  if (!(tr_op_is_unary_kernel(op) || tr_op_is_binary_kernel(op) || op == TR_OP_COMPARE || op == TR_OP_CONVERT ||
        op == TR_OP_DOT || op == TR_OP_CONVOLUTION))
    return false;
  return ev_complex_involved(in);
}

/* Whether k is add(p0, p1) of two dt scalars: a sum in any order. */
static bool cplx_add_comp(const tr_comp *k, tr_dtype dt) {
  const tr_instr *r = k ? k->root : NULL;
  if (!r || r->op != TR_OP_ADD || r->noperands != 2 || k->nparams != 2) return false;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  return a->op == TR_OP_PARAMETER && b->op == TR_OP_PARAMETER && a != b && a->shape &&
         b->shape && r->shape && a->shape->rank == 0 && b->shape->rank == 0 &&
         a->shape->dtype == dt && b->shape->dtype == dt && r->shape->dtype == dt;
}

/* Planes of a complex array for the sum rule: |re| + e, |im| + e, e, 1
 * and the mark, as f64 tensors of its shape. */
enum { P_RE, P_IM, P_E, P_ONE, P_MARK, NPLANES };

static tr_tensor *plane(sh_ctx *c, const tr_instr *in, const sh_val *a, int k) {
  tr_tensor *t = ev_new(&c->ev, in, TR_DT_F64, a->rank, a->dims);
  if (!t) return NULL;
  double *p = t->data;
  for (size_t i = 0; i < a->n; i++) {
    long double re, im, e;
    cplx_at(a, i, &re, &im, &e);
    switch (k) {
    case P_RE: p[i] = up(fabsl(re) + e); break;
    case P_IM: p[i] = up(fabsl(im) + e); break;
    case P_E: p[i] = (double)e; break;
    case P_ONE: p[i] = 1; break;
    default: p[i] = a->u[i]; break;
    }
  }
  return t;
}

/* The f64 sums of each plane over the terms of each output of a reduce
 * (one input, dims attribute): term i goes to the output whose index is
 * i's without the reduced dims. sums[k] has o->n entries. */
static void reduce_sums(const tr_instr *in, sh_val **ops, const sh_val *o, tr_tensor **pl,
                        tr_tensor **ipl, double **sums) {
  const sh_val *x = ops[0];
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  bool red[TR_TENSOR_MAX_RANK] = {0};
  for (int q = 0; da && q < da->n; q++)
    if (da->u.ints[q] >= 0 && da->u.ints[q] < x->rank) red[da->u.ints[q]] = true;
  int64_t ost[TR_TENSOR_MAX_RANK] = {0}, ix[TR_TENSOR_MAX_RANK] = {0};
  int64_t s = 1;
  for (int d = x->rank - 1; d >= 0; d--)
    if (!red[d]) {
      ost[d] = s;
      s *= x->dims[d];
    }
  for (int k = 0; k < NPLANES; k++)
    for (size_t j = 0; j < o->n; j++) sums[k][j] = ((const double *)ipl[k]->data)[0];
  for (size_t i = 0; i < x->n; i++) {
    int64_t oj = 0;
    for (int d = 0; d < x->rank; d++) oj += ix[d] * ost[d];
    for (int k = 0; k < NPLANES; k++) sums[k][oj] += ((const double *)pl[k]->data)[i];
    for (int d = x->rank - 1; d >= 0; d--) { /* next multi-index, row-major */
      if (++ix[d] < x->dims[d]) break;
      ix[d] = 0;
    }
  }
}

static const char sum_helper[] =
    "HloModule cplx_sum\n"
    "add64 { a = f64[] parameter(0)\n b = f64[] parameter(1)\n ROOT r = f64[] add(a, b) }\n"
    "ENTRY e { p = f64[] parameter(0)\n ROOT r = f64[] copy(p) }\n";

/* The same sums for reduce-window and scatter: the exact kernel on f64
 * twins of the planes whose combiner is an f64 add. */
static tr_status twin_sums(sh_ctx *c, const tr_instr *in, sh_val **ops, const sh_val *o,
                           tr_tensor **pl, tr_tensor **ipl, double **sums) {
  tr_diag d = {0};
  tr_module *h = tr_parse("<complex sum helper>", sum_helper, sizeof sum_helper - 1, NULL, &d);
  tr_diag_clear(&d);
  const tr_comp *add64 = h ? tr_module_find_comp(h, "add64") : NULL;
  if (!add64) {
    if (h) tr_module_free(h);
    return TR_ERR_UNSUPPORTED;
  }
  tr_instr twin;
  tr_shape ts;
  tr_attr *at = sh_f64_twin(in, add64, &twin, &ts);
  tr_status st = TR_OK;
  for (int k = 0; k < NPLANES && st == TR_OK; k++) {
    tr_value *vs[3] = {0}, *r = NULL;
    if (in->op == TR_OP_SCATTER) {
      vs[0] = tr_value_tensor(tr_tensor_clone(pl[k]));
      vs[1] = tr_value_tensor(tr_tensor_clone(ops[1]->t));
      vs[2] = tr_value_tensor(tr_tensor_clone(ipl[k])); /* the updates' planes */
      st = ev_scatter(&c->ev, &twin, vs, &r);
    } else {
      vs[0] = tr_value_tensor(tr_tensor_clone(pl[k]));
      vs[1] = tr_value_tensor(tr_tensor_clone(ipl[k]));
      st = ev_reduce_window(&c->ev, &twin, vs, &r);
    }
    if (st == TR_OK && (!r || !r->t || tr_tensor_count(r->t) != o->n)) st = TR_ERR_UNSUPPORTED;
    if (st == TR_OK) memcpy(sums[k], r->t->data, sizeof(double) * o->n);
    tr_value_unref(r);
    for (int i = 0; i < 3; i++) tr_value_unref(vs[i]);
  }
  tr_free(at);
  tr_module_free(h);
  return st;
}

/* Reduce, reduce-window and scatter of one complex array with an add
 * combiner: each output is a sum of its terms (the init or the operand
 * element, and the inputs or updates that reach it) in an order a
 * compiler may choose. Per part, a sum of n terms in any order is within
 * (n - 1)u sum|terms| of the exact sum of its terms (first order; with
 * (n - 1)u < 1/2 the factor 1/(1 - nu) makes it rigorous), and the terms
 * move by their bounds: around the reference, itself one such order,
 * bound = sum e + 2 (n - 1) u max(sum(|re| + e), sum(|im| + e)). Sums of
 * floats do not underflow. The f64 sums of the planes round: (n + 2)
 * 2^-52 more. Uncertain: marked terms, marked scatter indices, results
 * or magnitudes near overflow. false: not this case. */
static bool cplx_sum_bound(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *o) {
  tr_op op = in->op;
  int nterm_ops = op == TR_OP_SCATTER ? 3 : 2;
  if (!(op == TR_OP_REDUCE || op == TR_OP_REDUCE_WINDOW || op == TR_OP_SCATTER) ||
      in->noperands != nterm_ops || !sh_is_arr(o) || !o->e || tr_dtypes[o->dt].kind != TR_DK_COMPLEX ||
      !cplx_add_comp(tr_attr_comp(in, TR_ATTR_TO_APPLY), o->dt))
    return false;
  const sh_val *x = ops[0], *y = ops[op == TR_OP_SCATTER ? 2 : 1];
  if (!sh_is_arr(x) || !sh_is_arr(y) || x->dt != o->dt || y->dt != o->dt || x->rank > TR_TENSOR_MAX_RANK)
    return false;
  if (op != TR_OP_REDUCE && op != TR_OP_SCATTER && y->n != 1) return false;
  if (op == TR_OP_SCATTER && (!sh_is_arr(ops[1]) || !ops[1]->t)) return false;
  tr_tensor *pl[NPLANES] = {0}, *ipl[NPLANES] = {0};
  double *sums[NPLANES] = {0};
  bool ok = true;
  for (int k = 0; k < NPLANES && ok; k++) {
    pl[k] = plane(c, in, x, k);
    ipl[k] = plane(c, in, y, k);
    sums[k] = tr_xcalloc(o->n ? o->n : 1, sizeof(double));
    ok = pl[k] && ipl[k];
  }
  if (ok && op == TR_OP_REDUCE) reduce_sums(in, ops, o, pl, ipl, sums);
  else if (ok) ok = twin_sums(c, in, ops, o, pl, ipl, sums) == TR_OK;
  if (ok) {
    cplx_range rg;
    cplx_range_of(o->dt, &rg);
    long double lim = rg.comp == TR_DT_F32 ? (long double)FLT_MAX : (long double)DBL_MAX;
    bool idx_unsure = op == TR_OP_SCATTER && sh_any_uncertain(ops[1]);
    for (size_t i = 0; i < o->n; i++) {
      long double n = sums[P_ONE][i], S = fmaxl(sums[P_RE][i], sums[P_IM][i]);
      long double dbl = (n + 2) * 0x1p-52L;
      long double g = n > 1 ? 2 * (n - 1) * rg.u / (1 - n * rg.u) : 0;
      long double E = (sums[P_E][i] + g * S) * (1 + dbl);
      double r, m;
      tr_tensor_get_c(o->t, i, &r, &m);
      o->e[i] = up(E);
      o->u[i] = idx_unsure || sums[P_MARK][i] > 0 || !isfinite(r) || !isfinite(m) ||
                !(S + E < lim) || !(n * rg.u < 0.5L);
    }
  }
  for (int k = 0; k < NPLANES; k++) {
    tr_tensor_free(pl[k]);
    tr_tensor_free(ipl[k]);
    tr_free(sums[k]);
  }
  return ok;
}

/* Reduce, reduce-window, scatter, select-and-scatter, all-reduce and
 * reduce-scatter touching complex values, after their own rule (and
 * cholesky, triangular-solve and bitcast-convert, below): a sum of
 * one complex array with an add combiner gets the sum rule above;
 * anything else is marked, since a complex combination in another order
 * (a compiler may reassociate) rounds otherwise and the combiner's
 * per-call certainty does not carry over. */
tr_status sh_complex_combined(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *out) {
  tr_op op = in->op;
  if (op == TR_OP_REDUCE || op == TR_OP_REDUCE_WINDOW || op == TR_OP_SCATTER ||
      op == TR_OP_SELECT_AND_SCATTER || op == TR_OP_ALL_REDUCE || op == TR_OP_REDUCE_SCATTER) {
    if (cplx_sum_bound(c, in, ops, out)) return TR_OK;
    sh_mark_leaves(out, false, TR_DK_COMPLEX, 1);
  }
  /* Complex cholesky and triangular-solve: the reference is one correct
   * result (long double), but no bound is derived (the real rules in
   * shadow_linalg.c read real values), so a correct implementation's
   * other rounding is not judged: uncertain, even on exact operands. */
  if (op == TR_OP_CHOLESKY || op == TR_OP_TRIANGULAR_SOLVE) sh_mark_leaves(out, false, TR_DK_COMPLEX, 1);
  /* A bitcast-convert to its own complex type is the identity: the
   * operand's bounds and marks carry over (the fallback marks inexact
   * operands). Width changes split or join parts' bits: no bound. */
  if (op == TR_OP_BITCAST_CONVERT && in->noperands == 1 && sh_is_arr(ops[0]) && sh_is_arr(out) && ops[0]->dt == out->dt &&
      ops[0]->n == out->n && ops[0]->e && out->e && !ops[0]->src) {
    memcpy(out->e, ops[0]->e, sizeof(double) * out->n);
    memcpy(out->u, ops[0]->u, out->n);
  }
  return TR_OK;
}
