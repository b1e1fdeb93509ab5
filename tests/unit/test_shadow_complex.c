/* test_shadow_complex.c - property tests of shadow mode's complex bounds
 * (src/eval/shadow_complex.c, docs/ORACLE.md "Complex"): random c64 and
 * c128 operands through divide, sign, sqrt, rsqrt, exp, log, sine,
 * cosine, tanh, tan, expm1, log1p, logistic, atan2 and power, alone and
 * after a multiply, and
 * complex sums (reduce, reduce-window, scatter, convolution), each
 * recomputed by OTHER correct implementations (Smith's and an FMA
 * textbook divide, the naive modulus, the float formulas of sqrt, rsqrt,
 * exp, log, sin, cos, tanh, tan, an expm1 by real expm1 and sin^2, a
 * plain log(1 + z), XLA:CPU's logistic (1/(1 + exp(-z))), atan2 (-i
 * log((x + iy)/sqrt(x^2 + y^2))) and power formulas and other forms of
 * them, each op in long double rounded once, sums in other
 * orders). Every certain element of each must lie within the bound
 * around the reference, and the bounds must not be vacuous: a bound a
 * fixed factor smaller is broken by the same implementations, so the
 * test can fail. */
#include <complex.h>
#include <math.h>
#include <stdlib.h>

#include "../../src/eval/shadow.h"
#include "test.h"

typedef struct {
  uint64_t s;
} crng;

static uint64_t next_u64(crng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

static double unif(crng *r) { return (double)(next_u64(r) >> 11) * 0x1p-53; }

static double gauss(crng *r) {
  double u1 = unif(r), u2 = unif(r);
  if (u1 < 1e-300) u1 = 1e-300;
  return sqrt(-2 * log(u1)) * cos(6.283185307179586 * u2);
}

/* A c64 value: Gaussian parts at a scale 2^s (s in [-span, span]), a part
 * zero now and then. */
static void draw(crng *r, int span, float *re, float *im) {
  int s = span ? (int)(next_u64(r) % (uint64_t)(2 * span + 1)) - span : 0;
  *re = (float)ldexp(gauss(r), s);
  *im = (float)ldexp(gauss(r), s);
  uint64_t z = next_u64(r) % 16;
  if (z == 0) *re = 0;
  if (z == 1) *im = 0;
}

enum { OP_DIV, OP_SIGN, OP_SQRT, OP_RSQRT, OP_EXP, OP_LOG, OP_SIN, OP_COS, OP_TANH, OP_TAN,
       OP_EXPM1, OP_LOG1P, OP_LOGISTIC, OP_ATAN2, OP_POW, NOPS };
static const char *const op_names[NOPS] = {"divide", "sign", "sqrt", "rsqrt", "exponential", "log",
                                           "sine", "cosine", "tanh", "tan", "exponential-minus-one",
                                           "log-plus-one", "logistic", "atan2", "power"};

/* Binary ops: the second operand is y. */
static bool binop(int op) { return op == OP_DIV || op == OP_ATAN2 || op == OP_POW; }

/* ---- other correct implementations, in float arithmetic ---- */

static void smith_div(float a, float b, float c, float d, float *re, float *im) {
  if (fabsf(c) >= fabsf(d)) {
    float r = d / c, den = c + d * r;
    *re = (a + b * r) / den;
    *im = (b - a * r) / den;
  } else {
    float r = c / d, den = c * r + d;
    *re = (a * r + b) / den;
    *im = (b * r - a) / den;
  }
}

static void fma_div(float a, float b, float c, float d, float *re, float *im) {
  float den = fmaf(c, c, d * d);
  *re = fmaf(a, c, b * d) / den;
  *im = fmaf(b, c, -(a * d)) / den;
}

/* The op on long double operands (alt 1 of both precisions). */
static long double complex exact_op(int op, long double complex x, long double complex y) {
  switch (op) {
  case OP_DIV: return x / y;
  case OP_SIGN: return x == 0 ? 0 : x / cabsl(x);
  case OP_SQRT: return csqrtl(x);
  case OP_RSQRT: return 1.0L / csqrtl(x);
  case OP_EXP: return cexpl(x);
  case OP_SIN: return csinl(x);
  case OP_COS: return ccosl(x);
  case OP_TANH: return ctanhl(x);
  case OP_TAN: return ctanl(x);
  case OP_EXPM1: return cexpl(x) - 1;
  case OP_LOG1P: return clogl(1 + x);
  default: return clogl(x);
  }
}

/* alt 0: the float formulas; alt 1: each op exact (long double) and
 * rounded once per part (divide: Smith's for alt 0, FMA textbook for 2). */
static void alt_op(int op, int alt, float a, float b, float c, float d, float *re, float *im) {
  if (alt == 1) {
    long double complex w = exact_op(op, (long double)a + (long double)b * I, (long double)c + (long double)d * I);
    *re = (float)creall(w);
    *im = (float)cimagl(w);
    return;
  }
  switch (op) {
  case OP_DIV:
    if (alt == 0) smith_div(a, b, c, d, re, im);
    else fma_div(a, b, c, d, re, im);
    break;
  case OP_SIGN: {
    float m = sqrtf(a * a + b * b);
    *re = m == 0 ? 0 : a / m;
    *im = m == 0 ? 0 : b / m;
    break;
  }
  case OP_SQRT: case OP_RSQRT: {
    if (a == 0 && b == 0) {
      *re = 0;
      *im = b;
      break;
    }
    float t = sqrtf((fabsf(a) + hypotf(a, b)) * 0.5f);
    if (a >= 0) {
      *re = t;
      *im = b / (2 * t);
    } else {
      *re = fabsf(b) / (2 * t);
      *im = copysignf(t, b);
    }
    if (op == OP_RSQRT) { /* the reciprocal (p - iq) / (p^2 + q^2) */
      float p = *re, q = *im, den = p * p + q * q;
      *re = p / den;
      *im = -q / den;
    }
    break;
  }
  case OP_EXP: {
    float m = expf(a);
    *re = m * cosf(b);
    *im = m * sinf(b);
    break;
  }
  case OP_SIN:
    *re = sinf(a) * coshf(b);
    *im = cosf(a) * sinhf(b);
    break;
  case OP_COS:
    *re = cosf(a) * coshf(b);
    *im = -(sinf(a) * sinhf(b));
    break;
  case OP_TANH: { /* (sinh 2a + i sin 2b) / (cosh 2a + cos 2b) */
    float den = coshf(2 * a) + cosf(2 * b);
    *re = sinhf(2 * a) / den;
    *im = sinf(2 * b) / den;
    break;
  }
  case OP_TAN: { /* (sin 2a + i sinh 2b) / (cos 2a + cosh 2b) */
    float den = cosf(2 * a) + coshf(2 * b);
    *re = sinf(2 * a) / den;
    *im = sinhf(2 * b) / den;
    break;
  }
  case OP_EXPM1: { /* exp(z) - 1, the real part with expm1 and sin^2 */
    float h = sinf(b / 2);
    *re = expm1f(a) * cosf(b) - 2 * h * h;
    *im = expf(a) * sinf(b);
    break;
  }
  case OP_LOG1P: /* plain: log of 1 + z */
    *re = logf(hypotf(1 + a, b));
    *im = atan2f(b, 1 + a);
    break;
  default:
    *re = logf(hypotf(a, b));
    *im = atan2f(b, a);
    break;
  }
}

/* ---- logistic, atan2, power: other implementations in the component
 * type's arithmetic (f: float, every op rounded to float) ---- */

static double rnd(bool f, double x) { return f ? (double)(float)x : x; }
static double fexp(bool f, double x) { return f ? expf((float)x) : exp(x); }
static double flog(bool f, double x) { return f ? logf((float)x) : log(x); }
static double fcos(bool f, double x) { return f ? cosf((float)x) : cos(x); }
static double fsin(bool f, double x) { return f ? sinf((float)x) : sin(x); }
static double fatan2(bool f, double y, double x) { return f ? atan2f((float)y, (float)x) : atan2(y, x); }

typedef struct {
  double re, im;
} cx;

static cx cmulf(bool f, cx x, cx y) { /* textbook, products rounded */
  cx r = {rnd(f, rnd(f, x.re * y.re) - rnd(f, x.im * y.im)), rnd(f, rnd(f, x.re * y.im) + rnd(f, x.im * y.re))};
  return r;
}

static cx cmulfma(bool f, cx x, cx y) { /* with FMA, one rounding per part */
  cx r = {rnd(f, fma(x.re, y.re, -rnd(f, x.im * y.im))), rnd(f, fma(x.re, y.im, rnd(f, x.im * y.re)))};
  return r;
}

static cx cdivf(bool f, cx x, cx y) { /* Smith's */
  cx r;
  if (fabs(y.re) >= fabs(y.im)) {
    double t = rnd(f, y.im / y.re), den = rnd(f, y.re + rnd(f, y.im * t));
    r.re = rnd(f, rnd(f, x.re + rnd(f, x.im * t)) / den);
    r.im = rnd(f, rnd(f, x.im - rnd(f, x.re * t)) / den);
  } else {
    double t = rnd(f, y.re / y.im), den = rnd(f, rnd(f, y.re * t) + y.im);
    r.re = rnd(f, rnd(f, rnd(f, x.re * t) + x.im) / den);
    r.im = rnd(f, rnd(f, rnd(f, x.im * t) - x.re) / den);
  }
  return r;
}

static cx cexpf_(bool f, cx z) {
  double m = fexp(f, z.re);
  cx r = {rnd(f, m * fcos(f, z.im)), rnd(f, m * fsin(f, z.im))};
  return r;
}

static cx clogf_(bool f, cx z) {
  cx r = {flog(f, rnd(f, hypot(z.re, z.im))), fatan2(f, z.im, z.re)};
  return r;
}

static cx csqrtf_(bool f, cx z) {
  cx r = {0, z.im};
  if (z.re == 0 && z.im == 0) return r;
  double t = rnd(f, sqrt(rnd(f, rnd(f, fabs(z.re) + rnd(f, hypot(z.re, z.im))) * 0.5)));
  if (z.re >= 0) {
    r.re = t;
    r.im = rnd(f, z.im / rnd(f, 2 * t));
  } else {
    r.re = rnd(f, fabs(z.im) / rnd(f, 2 * t));
    r.im = copysign(t, z.im);
  }
  return r;
}

/* alt 0: the XLA-like formula; 1: long double, rounded once per part;
 * 2: another formula (logistic: 0.5 + 0.5 tanh(z/2); power: exp(y log x)
 * by complex ops; atan2: the same formula with FMA products and an FMA
 * textbook quotient). */
static void alt_more(int op, int alt, bool f, double a, double b, double c, double d, double *re, double *im) {
  cx x = {a, b}, y = {c, d}, w = {0, 0};
  if (alt == 1) {
    long double complex X = (long double)a + (long double)b * I, Y = (long double)c + (long double)d * I, W;
    if (op == OP_LOGISTIC) W = 1.0L / (1.0L + cexpl(-X));
    else if (op == OP_POW) W = (c == 0 && d == 0) ? 1 : cpowl(X, Y);
    else W = -I * clogl((Y + I * X) / csqrtl(Y * Y + X * X));
    *re = rnd(f, (double)creall(W));
    *im = rnd(f, (double)cimagl(W));
    return;
  }
  if (op == OP_LOGISTIC) {
    if (alt == 0) {
      cx e = cexpf_(f, (cx){-a, -b}), one = {1, 0}, q = {rnd(f, 1 + e.re), e.im};
      w = cdivf(f, one, q);
    } else { /* (1 + tanh(z/2))/2, tanh by (sinh 2x + i sin 2y)/(cosh 2x + cos 2y) */
      double den = rnd(f, rnd(f, f ? coshf((float)a) : cosh(a)) + fcos(f, b));
      double tr = rnd(f, rnd(f, f ? sinhf((float)a) : sinh(a)) / den), ti = rnd(f, fsin(f, b) / den);
      w.re = rnd(f, 0.5 + 0.5 * tr);
      w.im = 0.5 * ti;
    }
  } else if (op == OP_POW) {
    if (c == 0 && d == 0) {
      w.re = 1;
    } else if (alt == 0) { /* XLA:CPU's EmitComplexPower */
      double s2 = rnd(f, rnd(f, a * a) + rnd(f, b * b)), th = fatan2(f, b, a);
      double coeff = rnd(f, rnd(f, f ? powf((float)s2, (float)(0.5 * c)) : pow(s2, 0.5 * c)) *
                               fexp(f, rnd(f, -d * th)));
      double q = rnd(f, rnd(f, c * th) + rnd(f, rnd(f, 0.5 * d) * flog(f, s2)));
      w.re = rnd(f, coeff * fcos(f, q));
      w.im = rnd(f, coeff * fsin(f, q));
    } else {
      w = cexpf_(f, cmulf(f, y, clogf_(f, x)));
    }
  } else { /* atan2(x, y): lhs x = (a, b) is atan2's y, rhs y = (c, d) its x */
    cx s2 = alt == 0 ? cmulf(f, y, y) : cmulfma(f, y, y), t = alt == 0 ? cmulf(f, x, x) : cmulfma(f, x, x);
    s2.re = rnd(f, s2.re + t.re);
    s2.im = rnd(f, s2.im + t.im);
    cx v = {rnd(f, c - b), rnd(f, d + a)};
    cx L;
    if (alt == 0) {
      L = clogf_(f, cdivf(f, v, csqrtf_(f, s2)));
    } else { /* the same formula, the products and the quotient with FMA */
      cx q2 = {rnd(f, fma(v.re, 1, 0)), v.im}, r = csqrtf_(f, s2);
      double den = rnd(f, fma(r.re, r.re, rnd(f, r.im * r.im)));
      cx q = {rnd(f, rnd(f, fma(q2.re, r.re, rnd(f, q2.im * r.im))) / den),
              rnd(f, rnd(f, fma(q2.im, r.re, -rnd(f, q2.re * r.im))) / den)};
      L = clogf_(f, q);
    }
    w.re = L.im; /* -i (p + iq) = q - ip */
    w.im = -L.re;
  }
  *re = w.re;
  *im = w.im;
}

/* The same in double, for c128. */
static void smith_div_d(double a, double b, double c, double d, double *re, double *im) {
  if (fabs(c) >= fabs(d)) {
    double r = d / c, den = c + d * r;
    *re = (a + b * r) / den;
    *im = (b - a * r) / den;
  } else {
    double r = c / d, den = c * r + d;
    *re = (a * r + b) / den;
    *im = (b * r - a) / den;
  }
}

static void alt_op_d(int op, int alt, double a, double b, double c, double d, double *re, double *im) {
  if (alt == 1) {
    long double complex w = exact_op(op, (long double)a + (long double)b * I, (long double)c + (long double)d * I);
    *re = (double)creall(w);
    *im = (double)cimagl(w);
    return;
  }
  switch (op) {
  case OP_DIV:
    if (alt == 0) {
      smith_div_d(a, b, c, d, re, im);
    } else {
      double den = fma(c, c, d * d);
      *re = fma(a, c, b * d) / den;
      *im = fma(b, c, -(a * d)) / den;
    }
    break;
  case OP_SIGN: {
    double m = sqrt(a * a + b * b);
    *re = m == 0 ? 0 : a / m;
    *im = m == 0 ? 0 : b / m;
    break;
  }
  case OP_SQRT: case OP_RSQRT: {
    if (a == 0 && b == 0) {
      *re = 0;
      *im = b;
      break;
    }
    double t = sqrt((fabs(a) + hypot(a, b)) * 0.5);
    if (a >= 0) {
      *re = t;
      *im = b / (2 * t);
    } else {
      *re = fabs(b) / (2 * t);
      *im = copysign(t, b);
    }
    if (op == OP_RSQRT) {
      double p = *re, q = *im, den = p * p + q * q;
      *re = p / den;
      *im = -q / den;
    }
    break;
  }
  case OP_EXP: {
    double m = exp(a);
    *re = m * cos(b);
    *im = m * sin(b);
    break;
  }
  case OP_SIN:
    *re = sin(a) * cosh(b);
    *im = cos(a) * sinh(b);
    break;
  case OP_COS:
    *re = cos(a) * cosh(b);
    *im = -(sin(a) * sinh(b));
    break;
  case OP_TANH: {
    double den = cosh(2 * a) + cos(2 * b);
    *re = sinh(2 * a) / den;
    *im = sin(2 * b) / den;
    break;
  }
  case OP_TAN: {
    double den = cos(2 * a) + cosh(2 * b);
    *re = sin(2 * a) / den;
    *im = sinh(2 * b) / den;
    break;
  }
  case OP_EXPM1: {
    double h = sin(b / 2);
    *re = expm1(a) * cos(b) - 2 * h * h;
    *im = exp(a) * sin(b);
    break;
  }
  case OP_LOG1P:
    *re = log(hypot(1 + a, b));
    *im = atan2(b, 1 + a);
    break;
  default:
    *re = log(hypot(a, b));
    *im = atan2(b, a);
    break;
  }
}

/* ---- the check ---- */

typedef struct {
  long checked, uncertain, bad;
  double worst;      /* max |alt - ref| / bound over certain elements */
  long over[4];      /* elements beyond bound/2, /4, /8, /16 */
} tally;

/* Counts element i of (ref, bound, marks) against the alternative value. */
static void judge(tally *t, const tr_shadow_out *o, size_t i, double re, double im, const char *what) {
  if (o->uncertain[i]) {
    t->uncertain++;
    return;
  }
  double rr, ri;
  tr_tensor_get_c(o->exact, i, &rr, &ri);
  double b = o->bound ? o->bound[i] : 0;
  double dev = fmax(fabs(re - rr), fabs(im - ri));
  if (isnan(re) || isnan(im)) dev = INFINITY;
  t->checked++;
  double ratio = b > 0 ? dev / b : (dev > 0 ? INFINITY : 0);
  if (ratio > t->worst) t->worst = ratio;
  for (int k = 0; k < 4; k++)
    if (dev > b / (double)(2 << k)) t->over[k]++;
  /* TR_DEBUG_RATIO=r prints the elements beyond r of their bound. */
  if (getenv("TR_DEBUG_RATIO") && dev > b * atof(getenv("TR_DEBUG_RATIO")))
    fprintf(stderr, "  %s element %zu: ratio %.3g reference (%.9g, %.9g) bound %.3g, other (%.9g, %.9g)\n", what, i,
            dev / b, rr, ri, b, re, im);
  if (!(dev <= b)) {
    if (t->bad++ < 3)
      fprintf(stderr, "  %s element %zu: reference (%.17g, %.17g) bound %.3g, other (%.17g, %.17g)\n", what,
              i, rr, ri, b, re, im);
  }
}

static tr_tensor *cvec(size_t n, const float *re, const float *im) {
  int64_t dims[1] = {(int64_t)n};
  tr_tensor *t = tr_tensor_new(TR_DT_C64, 1, dims, NULL);
  for (size_t i = 0; i < n; i++) tr_tensor_set_c(t, i, re[i], im[i]);
  return t;
}

static tr_tensor *cvec_d(tr_dtype dt, size_t n, const double *re, const double *im) {
  int64_t dims[1] = {(int64_t)n};
  tr_tensor *t = tr_tensor_new(dt, 1, dims, NULL);
  for (size_t i = 0; i < n; i++) tr_tensor_set_c(t, i, re[i], im[i]);
  return t;
}

static bool shadow_of(const char *text, tr_tensor *const *args, int nargs, tr_shadow_out **o, int *no) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  bool ok = m && tr_verify(m, &d) == TR_OK && tr_eval_shadow(m, NULL, args, nargs, o, no, &d) == TR_OK;
  if (!ok) {
    fprintf(stderr, "  module did not evaluate:\n");
    tr_diag_print(&d, stderr);
    fprintf(stderr, "%s\n", text);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  return ok;
}

enum { N = 2048 };

/* One op on random operands, alone (chain 0) or on the result of a
 * multiply (chain 1: the alternative multiplies with FMA, the reference
 * with per-product rounding, so the op's operand is itself off within
 * multiply's bound); c64, or c128 when wide (operands of full double
 * precision, the alternatives in double). */
static void run_op(int op, int chain, int span, bool wide, crng *r, tally *t) {
  static double a[N], b[N], c[N], d[N];
  if ((op == OP_SIN || op == OP_COS || op == OP_TANH || op == OP_TAN || op == OP_LOGISTIC) && span > 4)
    span = 4; /* cosh b, cosh 2a of range */
  for (int i = 0; i < N; i++) {
    float fa, fb, fc, fd;
    draw(r, span, &fa, &fb);
    draw(r, op == OP_DIV || op == OP_ATAN2 ? span : 0, &fc, &fd);
    a[i] = fa, b[i] = fb, c[i] = fc, d[i] = fd;
    if (wide) { /* below float's precision too */
      a[i] += ldexp(a[i], -30) * gauss(r);
      b[i] += ldexp(b[i], -30) * gauss(r);
      c[i] += ldexp(c[i], -30) * gauss(r);
      d[i] += ldexp(d[i], -30) * gauss(r);
    }
    if (op == OP_EXP && !chain && !span) a[i] *= 4; /* moduli e^-12..e^12 */
  }
  const char *C = wide ? "c128" : "c64";
  char text[512];
  snprintf(text, sizeof text,
           "HloModule m\nENTRY e {\n  x = %s[%d] parameter(0)\n  y = %s[%d] parameter(1)\n"
           "  m = %s[%d] multiply(x, y)\n  ROOT r = %s[%d] %s(%s%s)\n}\n",
           C, N, C, N, C, N, C, N, op_names[op], chain ? "m" : "x", binop(op) ? ", y" : "");
  tr_dtype dt = wide ? TR_DT_C128 : TR_DT_C64;
  tr_tensor *args[2] = {cvec_d(dt, N, a, b), cvec_d(dt, N, c, d)};
  tr_shadow_out *o = NULL;
  int no = 0;
  if (shadow_of(text, args, 2, &o, &no)) {
    for (int alt = 0; alt < (op == OP_DIV || op >= OP_LOGISTIC ? 3 : 2); alt++)
      for (int i = 0; i < N; i++) {
        double re, im;
        if (wide) {
          double xa = a[i], xb = b[i];
          if (chain) { /* the multiply, another way: FMA, one rounding per part */
            xa = fma(a[i], c[i], -(b[i] * d[i]));
            xb = fma(a[i], d[i], b[i] * c[i]);
          }
          if (op >= OP_LOGISTIC) alt_more(op, alt, false, xa, xb, c[i], d[i], &re, &im);
          else alt_op_d(op, alt, xa, xb, c[i], d[i], &re, &im);
        } else {
          float xa = (float)a[i], xb = (float)b[i], fr, fi;
          float fc = (float)c[i], fd = (float)d[i];
          if (chain) {
            xa = fmaf(xa, fc, -((float)b[i] * fd));
            xb = fmaf((float)a[i], fd, (float)b[i] * fc);
          }
          if (op >= OP_LOGISTIC) {
            alt_more(op, alt, true, xa, xb, fc, fd, &re, &im);
          } else {
            alt_op(op, alt, xa, xb, fc, fd, &fr, &fi);
            re = fr;
            im = fi;
          }
        }
        char what[192];
        snprintf(what, sizeof what, "%s (alt %d, chain %d, span %d; x (%.9g, %.9g), y (%.9g, %.9g))", op_names[op],
                 alt, chain, span, a[i], b[i], c[i], d[i]);
        judge(t, &o[0], (size_t)i, re, im, what);
      }
    tr_shadow_free(o, no);
  }
  tr_tensor_free(args[0]);
  tr_tensor_free(args[1]);
}

TR_TEST(shadow_complex_fn_bounds_hold) {
  crng r = {0x9e3779b97f4a7c15u};
  bool all_ok = true;
  for (int wide = 0; wide < 2; wide++)
    for (int op = 0; op < NOPS; op++) {
      tally t = {0};
      for (int chain = 0; chain < 2; chain++)
        for (int span = 0; span <= 20; span += 20) run_op(op, chain, span, wide, &r, &t);
      CHECK_EQ_INT(t.bad, 0);
      /* The marks are for poles, cuts and range edges, not the common case. */
      CHECK(t.uncertain < t.checked / 10);
      CHECK(t.checked >= 4 * N);
      all_ok = all_ok && t.bad == 0;
      printf("  shadow %s %s: %ld certain elements within the bound (%ld uncertain), max "
             "|other - ref|/bound %.3g; beyond 1/2, 1/4, 1/8, 1/16 of it: %ld %ld %ld %ld\n",
             wide ? "c128" : "c64", op_names[op], t.checked, t.uncertain, t.worst, t.over[0], t.over[1],
             t.over[2], t.over[3]);
      /* Not vacuous: a bound 16 times smaller is broken. */
      CHECK(t.over[3] > 0);
    }
  CHECK(all_ok);
}

/* Sums in other orders: reduce along the rows (reversed and pairwise),
 * reduce-window (window reversed) and scatter with duplicate indices
 * (updates applied last first); a reduce-window of bounded terms
 * (squares, computed with FMA by the other implementation); and a
 * convolution (FMA products, reversed sums). */
TR_TEST(shadow_complex_sum_bounds_hold) {
  enum { R = 16, K = 256, W = 5 };
  crng r = {12345};
  tally t = {0};
  for (int rep = 0; rep < 4; rep++) {
    static float a[R * K], b[R * K];
    for (int i = 0; i < R * K; i++) draw(&r, rep * 3, &a[i], &b[i]);
    int ix[K];
    for (int j = 0; j < K; j++) ix[j] = (int)(next_u64(&r) % 8);
    char text[1024];
    snprintf(text, sizeof text,
             "HloModule m\nadd {\n  p = c64[] parameter(0)\n  q = c64[] parameter(1)\n"
             "  ROOT s = c64[] add(p, q)\n}\n"
             "ENTRY e {\n  x = c64[%d,%d] parameter(0)\n  v = c64[%d] parameter(1)\n"
             "  i = s32[%d,1] parameter(2)\n  z = c64[] constant((0, 0))\n"
             "  r = c64[%d] reduce(x, z), dimensions={1}, to_apply=add\n"
             "  w = c64[%d] reduce-window(v, z), window={size=%d}, to_apply=add\n"
             "  vv = c64[%d] multiply(v, v)\n"
             "  v3 = c64[1,%d,1] reshape(v)\n  ks = c64[%d] slice(v), slice={[0:%d]}\n"
             "  k3 = c64[%d,1,1] reshape(ks)\n"
             "  cv = c64[1,%d,1] convolution(v3, k3), window={size=%d}, dim_labels=b0f_0io->b0f\n"
             "  w2 = c64[%d] reduce-window(vv, z), window={size=%d}, to_apply=add\n"
             "  b = c64[8] slice(v), slice={[0:8]}\n"
             "  s = c64[8] scatter(b, i, v), update_window_dims={}, inserted_window_dims={0}, "
             "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
             "  ROOT t = (c64[%d], c64[%d], c64[8], c64[%d], c64[1,%d,1]) tuple(r, w, s, w2, cv)\n}\n",
             R, K, K, K, R, K - W + 1, W, K, K, W, W, W, K - W + 1, W, K - W + 1, W, R, K - W + 1,
             K - W + 1, K - W + 1);
    int64_t idims[2] = {K, 1}, xdims[2] = {R, K};
    tr_tensor *args[3] = {tr_tensor_new(TR_DT_C64, 2, xdims, NULL), cvec(K, a, b),
                          tr_tensor_new(TR_DT_S32, 2, idims, NULL)};
    for (int i = 0; i < R * K; i++) tr_tensor_set_c(args[0], (size_t)i, a[i], b[i]);
    for (int j = 0; j < K; j++) ((int32_t *)args[2]->data)[j] = ix[j];
    tr_shadow_out *o = NULL;
    int no = 0;
    if (shadow_of(text, args, 3, &o, &no) && no == 5) {
      for (int row = 0; row < R; row++) {
        float sr = 0, si = 0, pr[K], pi[K];
        for (int j = K - 1; j >= 0; j--) {
          sr += a[row * K + j];
          si += b[row * K + j];
        }
        judge(&t, &o[0], (size_t)row, sr, si, "reduce (reversed)");
        for (int j = 0; j < K; j++) {
          pr[j] = a[row * K + j];
          pi[j] = b[row * K + j];
        }
        for (int h = 1; h < K; h *= 2) /* pairwise */
          for (int j = 0; j + h < K; j += 2 * h) {
            pr[j] += pr[j + h];
            pi[j] += pi[j + h];
          }
        judge(&t, &o[0], (size_t)row, pr[0], pi[0], "reduce (pairwise)");
      }
      for (int q = 0; q + W <= K; q++) {
        float sr = 0, si = 0;
        for (int j = q + W - 1; j >= q; j--) {
          sr += a[j];
          si += b[j];
        }
        judge(&t, &o[1], (size_t)q, sr, si, "reduce-window (reversed)");
      }
      float sr[8], si[8];
      for (int q = 0; q < 8; q++) {
        sr[q] = a[q];
        si[q] = b[q];
      }
      for (int j = K - 1; j >= 0; j--) {
        sr[ix[j]] += a[j];
        si[ix[j]] += b[j];
      }
      for (int q = 0; q < 8; q++) judge(&t, &o[2], (size_t)q, sr[q], si[q], "scatter (reversed)");
      /* bounded terms: squares by FMA (one rounding per part), summed reversed */
      for (int q = 0; q + W <= K; q++) {
        float s2r = 0, s2i = 0;
        for (int j = q + W - 1; j >= q; j--) {
          s2r += fmaf(a[j], a[j], -(b[j] * b[j]));
          s2i += fmaf(a[j], b[j], b[j] * a[j]);
        }
        judge(&t, &o[3], (size_t)q, s2r, s2i, "reduce-window of squares (FMA, reversed)");
      }
      /* the convolution: products by FMA, summed reversed */
      for (int q = 0; q + W <= K; q++) {
        float cr = 0, ci = 0;
        for (int j = W - 1; j >= 0; j--) {
          cr += fmaf(a[q + j], a[j], -(b[q + j] * b[j]));
          ci += fmaf(a[q + j], b[j], b[q + j] * a[j]);
        }
        judge(&t, &o[4], (size_t)q, cr, ci, "convolution (FMA, reversed)");
      }
    }
    if (o) tr_shadow_free(o, no);
    for (int k = 0; k < 3; k++) tr_tensor_free(args[k]);
  }
  CHECK_EQ_INT(t.bad, 0);
  CHECK_EQ_INT(t.uncertain, 0);
  CHECK(t.checked > 1000);
  printf("  shadow complex sums: %ld certain elements within the bound, max |other - ref|/bound %.3g; "
         "beyond 1/2, 1/4, 1/8, 1/16 of it: %ld %ld %ld %ld\n",
         t.checked, t.worst, t.over[0], t.over[1], t.over[2], t.over[3]);
  /* Not vacuous: a bound 16 times smaller is broken. */
  CHECK(t.over[3] > 0);
}

TR_TEST(shadow_complex_marks_at_cuts_poles_zeros) {
  /* m = p*q - r carries multiply's bound (e > 0). Element 0: m = (-4, 0)
   * lies on the negative reals, where sqrt and log jump (a correct
   * operand within the bound may have im -e or +e): uncertain; sign and
   * divide are continuous there: certain. Element 1: m = (-3, 4), and
   * element 3: m = (-4, 1), off the cut by far more than the bound: all
   * certain. Element 2: m = 3 * fl(1/3) - 1 = (0, 0) up to its bound:
   * divide by it (a pole), its sign, sqrt and log are all uncertain. */
  const char *text = "HloModule m\nENTRY e {\n  p = c64[4] parameter(0)\n  q = c64[4] parameter(1)\n"
                     "  r = c64[4] parameter(2)\n  x = c64[4] multiply(p, q)\n  m = c64[4] subtract(x, r)\n"
                     "  s = c64[4] sqrt(m)\n  l = c64[4] log(m)\n  d = c64[4] divide(p, m)\n"
                     "  g = c64[4] sign(m)\n  ROOT t = (c64[4], c64[4], c64[4], c64[4], c64[4]) tuple(m, s, l, d, g)\n}\n";
  float pr[4] = {0, 1, 3, 0}, pi[4] = {2, 2, 0, 2}, qr[4] = {0, 1, 1.0f / 3, 0}, qi[4] = {2, 2, 0, 2};
  float rr[4] = {0, 0, 1, 0}, ri[4] = {0, 0, 0, -1};
  tr_tensor *args[3] = {cvec(4, pr, pi), cvec(4, qr, qi), cvec(4, rr, ri)};
  tr_shadow_out *o = NULL;
  int no = 0;
  if (shadow_of(text, args, 3, &o, &no) && no == 5) {
    double re, im;
    tr_tensor_get_c(o[0].exact, 2, &re, &im);
    CHECK(re == 0 && im == 0); /* fl(3 * fl(1/3)) = 1 in f32 */
    for (int i = 0; i < 4; i++) CHECK(o[0].bound[i] > 0 && !o[0].uncertain[i]);
    static const int want[4][4] = {/* sqrt, log, divide, sign per element */
                                   {1, 1, 0, 0}, {0, 0, 0, 0}, {1, 1, 1, 1}, {0, 0, 0, 0}};
    for (int i = 0; i < 4; i++)
      for (int k = 0; k < 4; k++) CHECK_EQ_INT(o[1 + k].uncertain[i], want[i][k]);
  }
  if (o) tr_shadow_free(o, no);
  for (int k = 0; k < 3; k++) tr_tensor_free(args[k]);
}

TR_TEST(shadow_complex_convert_from_ints) {
  /* An integer converts to a complex value by one rounding of the real
   * part: exact (bound 0, certain) up to 2^24 for c64 and 2^53 for c128;
   * beyond, half an ulp (at most u|a|) around the exact value plus the
   * reference's own rounding (|r - a|): 16777217 -> 16777216 has bound
   * 2^-24 * 16777217 + 1, 2^31 - 1 -> 2^31 has 2^-24 (2^31 - 1) + 1. */
  const char *text = "HloModule m\nENTRY e {\n"
                     "  x = s32[5] constant({0, -7, 16777216, 16777217, 2147483647})\n"
                     "  p = pred[2] constant({1, 0})\n  a = c64[5] convert(x)\n  b = c128[5] convert(x)\n"
                     "  c = c64[2] convert(p)\n  ROOT t = (c64[5], c128[5], c64[2]) tuple(a, b, c)\n}\n";
  tr_shadow_out *o = NULL;
  int no = 0;
  if (shadow_of(text, NULL, 0, &o, &no) && no == 3) {
    static const double want[5] = {0, 0, 0, 0x1p-24 * 16777217 + 1, 0x1p-24 * 2147483647 + 1};
    for (int i = 0; i < 5; i++) {
      CHECK(!o[0].uncertain[i] && !o[1].uncertain[i]);
      CHECK(fabs(o[0].bound[i] - want[i]) <= 1e-6 * want[i]);
      CHECK(o[1].bound[i] == 0); /* every s32 is a double */
    }
    double re, im;
    tr_tensor_get_c(o[0].exact, 3, &re, &im);
    CHECK(re == 16777216 && im == 0);
    tr_tensor_get_c(o[2].exact, 0, &re, &im);
    CHECK(re == 1 && im == 0 && o[2].bound[0] == 0 && !o[2].uncertain[0]);
  }
  if (o) tr_shadow_free(o, no);
}

TR_TEST(shadow_complex_marks_logistic_atan2_power) {
  /* m = p * 1 carries multiply's bound (e > 0) around p. Element 0: m =
   * (0, fl(pi)), whose box holds i pi, a pole of logistic (1 + e^-i pi =
   * 0); atan2(m, (fl(pi), 0)) has x^2 + y^2 = 0 in the box (uncertain).
   * Element 2: m = (0, 0) up to its bound: atan2(m, (-1, 0)) has q = -1,
   * on log's cut, and power(m, 2) has its base at 0 (both uncertain).
   * Element 4: m = (-4, 0) on the cut: power(m, 0.5) is uncertain.
   * Everything else is away from poles, cuts and zeros: certain. power(m,
   * 0) is 1 exactly for every finite base, 0 included (E and XLA:CPU). */
  const char *text =
      "HloModule m\nENTRY e {\n"
      "  p = c64[5] constant({(0, 3.14159274), (1, 0), (0, 0), (-3, 4), (-4, 0)})\n"
      "  one = c64[5] constant({(1, 0), (1, 0), (1, 0), (1, 0), (1, 0)})\n"
      "  x = c64[5] constant({(3.14159274, 0), (1, 0), (-1, 0), (2, 0), (0, 0)})\n"
      "  y = c64[5] constant({(2, 0), (0.5, 0), (2, 0), (0.5, 1), (0.5, 0)})\n"
      "  z = c64[5] constant({(0, 0), (0, 0), (0, 0), (0, 0), (0, 0)})\n"
      "  m = c64[5] multiply(p, one)\n  l = c64[5] logistic(m)\n  a = c64[5] atan2(m, x)\n"
      "  w = c64[5] power(m, y)\n  w0 = c64[5] power(m, z)\n"
      "  ROOT t = (c64[5], c64[5], c64[5], c64[5], c64[5]) tuple(m, l, a, w, w0)\n}\n";
  tr_shadow_out *o = NULL;
  int no = 0;
  if (shadow_of(text, NULL, 0, &o, &no) && no == 5) {
    for (int i = 0; i < 5; i++) CHECK(!o[0].uncertain[i] && (i == 2 || o[0].bound[i] > 0));
    CHECK(o[0].bound[2] > 0); /* 4 tiny */
    static const int want[5][3] = {/* logistic, atan2, power per element */
                                   {1, 1, 0}, {0, 0, 0}, {0, 1, 1}, {0, 0, 0}, {0, 0, 1}};
    for (int i = 0; i < 5; i++)
      for (int k = 0; k < 3; k++) CHECK_EQ_INT(o[1 + k].uncertain[i], want[i][k]);
    for (int i = 0; i < 5; i++) {
      double re, im;
      tr_tensor_get_c(o[4].exact, i, &re, &im);
      CHECK(!o[4].uncertain[i] && o[4].bound[i] == 0 && re == 1 && im == 0);
    }
    /* atan2(1, 1) = pi/4 with a small bound */
    double re, im;
    tr_tensor_get_c(o[2].exact, 1, &re, &im);
    CHECK(fabs(re - 0.78539816) < 1e-6 && fabs(im) < 1e-6 && o[2].bound[1] < 1e-5);
  }
  if (o) tr_shadow_free(o, no);
}

TR_TEST(shadow_complex_bitcast_convert) {
  /* c64 -> c64 is the identity: m's bound carries over; c128 -> c64[2]
   * splits the parts' bits: exact operands give exact, certain words,
   * a bounded one gives uncertain words. */
  const char *text = "HloModule m\nENTRY e {\n  p = c64[2] constant({(1.5, 2), (3, -1)})\n"
                     "  m = c64[2] multiply(p, p)\n  a = c64[2] bitcast-convert(m)\n"
                     "  w = c128[1] constant({(1, 2)})\n  b = c64[1,2] bitcast-convert(w)\n"
                     "  wm = c128[1] multiply(w, w)\n  c = c64[1,2] bitcast-convert(wm)\n"
                     "  ROOT t = (c64[2], c64[2], c64[1,2], c64[1,2]) tuple(m, a, b, c)\n}\n";
  tr_shadow_out *o = NULL;
  int no = 0;
  if (shadow_of(text, NULL, 0, &o, &no) && no == 4) {
    for (int i = 0; i < 2; i++) {
      CHECK(!o[0].uncertain[i] && o[0].bound[i] > 0);
      CHECK(!o[1].uncertain[i] && o[1].bound[i] == o[0].bound[i]);
      CHECK(!o[2].uncertain[i] && o[2].bound[i] == 0);
      CHECK(o[3].uncertain[i]);
    }
    double re, im;
    tr_tensor_get_c(o[2].exact, 0, &re, &im);
    CHECK(re == 0 && im == 1.875);
  }
  if (o) tr_shadow_free(o, no);
}
