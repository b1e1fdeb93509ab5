/* shadow_elem.c - shadow rules of the elementwise ops: unary and binary
 * arithmetic, compare, select, clamp, convert and iota. A float result is
 * the op in long double on the shadow operands; its bound is the
 * propagated input error (the exact change over the input interval for
 * monotone functions, a Lipschitz or derivative bound otherwise) plus the
 * op's rounding allowance (sh_finish). Discontinuous ops mark an element
 * uncertain when its input interval reaches the discontinuity. Integers
 * are computed by the exact kernels (they are exact) and carry the OR of
 * their operands' marks. docs/ORACLE.md lists each rule.
 *
 * Unary and binary ops run as whole-array loops split across threads;
 * for types up to 32 bits (values in double) add, subtract, multiply and
 * divide have branch-free blocks the compiler vectorizes, and every
 * element they cannot settle (non-finite, overflow edge, subnormal range)
 * goes through the general rule (flt_binary1), so both give the same
 * values and marks (tests: shadow_bulk_loops_match_element_rule). */
#include "shadowint.h"
#include "par.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const long double PI_L = 3.141592653589793238462643383279502884L;

static long double max2(long double a, long double b) { return a > b ? a : b; }

/* The exact kernel's result on integer operands, as a shadow value whose
 * marks are the OR of the operands' (a scalar operand marks every
 * element). */
static tr_status int_result(sh_ctx *c, const tr_instr *in, tr_tensor *r, const sh_val *const *ops,
                            int nops, sh_val **out) {
  sh_val *o = sh_arr_new(c, in, r->dtype, r->rank, r->dims);
  if (!o) {
    tr_tensor_free(r);
    return TR_ERR_UNSUPPORTED;
  }
  tr_tensor_free(o->t);
  o->t = r;
  for (int k = 0; k < nops; k++) {
    const sh_val *a = ops[k];
    if (!a) continue;
    for (size_t i = 0; i < o->n; i++) o->u[i] |= a->u[a->n == o->n ? i : 0];
  }
  *out = o;
  return TR_OK;
}

/* A binary op or compare on two integer (or pred) scalars: the exact
 * kernel on one element, written into the result's own tensor, without
 * the whole-array path's result and scratch allocations (a reducer's call
 * runs several of these per element). false: not such a case; else *st
 * says how it went. */
static bool int_scalar(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out,
                       tr_status *st) {
  tr_dtype dt = x->dt;
  bool cmp = in->op == TR_OP_COMPARE;
  if (x->n != 1 || y->n != 1 || !x->t || !y->t || (!tr_dtype_is_int(dt) && dt != TR_DT_PRED) ||
      (!cmp && !ev_kernels[in->op].int2))
    return false;
  sh_val *o = sh_arr_new_raw(c, in, cmp ? TR_DT_PRED : dt, x->rank, x->dims);
  *st = o ? TR_OK : TR_ERR_UNSUPPORTED;
  if (!o) return true;
  if (cmp) {
    *(unsigned char *)o->t->data = ev_compare_slots(in, dt, x->t->data, y->t->data);
  } else {
    uint64_t a, b;
    ev_load_ints(x->t, &a);
    ev_load_ints(y->t, &b);
    ev_int_binary(in->op, dt, &a, &b, &a, 1);
    ev_store_ints(o->t, &a);
  }
  o->u[0] = x->u[0] | y->u[0];
  *out = o;
  return true;
}

/* ---- unary ---- */

static long double round_even_l(long double x) {
  if (!isfinite(x) || fabsl(x) >= 9223372036854775808.0L) return x;
  long double r = floorl(x), diff = x - r;
  if (diff > 0.5L || (diff == 0.5L && fmodl(r, 2.0L) != 0)) r += 1;
  return r == 0 ? copysignl(0.0L, x) : r;
}

/* Shadow values of the unary float ops (kernels.def): sl_* in long
 * double; sd_* in double, for types up to 32 bits the shadow needs no more
 * (its 2^-53 is far below their ulps, and the slack covers libm's error),
 * and double libm is several times faster. */
static long double sl_abs(long double a) { return fabsl(a); }
static long double sl_negate(long double a) { return -a; }
static long double sl_sign(long double a) { return (isnan(a) || a == 0) ? a : copysignl(1.0L, a); }
static long double sl_floor(long double a) { return floorl(a); }
static long double sl_ceil(long double a) { return ceill(a); }
static long double sl_round_afz(long double a) { return roundl(a); }
static long double sl_round_even(long double a) { return round_even_l(a); }
static long double sl_exp(long double a) { return expl(a); }
static long double sl_expm1(long double a) { return expm1l(a); }
static long double sl_log(long double a) { return logl(a); }
static long double sl_log1p(long double a) { return log1pl(a); }
static long double sl_sqrt(long double a) { return sqrtl(a); }
static long double sl_rsqrt(long double a) { return 1.0L / sqrtl(a); }
static long double sl_cbrt(long double a) { return cbrtl(a); }
static long double sl_tanh(long double a) { return tanhl(a); }
static long double sl_logistic(long double a) { return 1.0L / (1.0L + expl(-a)); }
static long double sl_sine(long double a) { return sinl(a); }
static long double sl_cosine(long double a) { return cosl(a); }
static long double sl_tan(long double a) { return tanl(a); }
static long double sl_erf(long double a) { return erfl(a); }
static double sd_exp(double a) { return exp(a); }
static double sd_expm1(double a) { return expm1(a); }
static double sd_log(double a) { return log(a); }
static double sd_log1p(double a) { return log1p(a); }
static double sd_sqrt(double a) { return sqrt(a); }
static double sd_rsqrt(double a) { return 1.0 / sqrt(a); }
static double sd_cbrt(double a) { return cbrt(a); }
static double sd_tanh(double a) { return tanh(a); }
static double sd_logistic(double a) { return 1.0 / (1.0 + exp(-a)); }
static double sd_sine(double a) { return sin(a); }
static double sd_cosine(double a) { return cos(a); }
static double sd_tan(double a) { return tan(a); }
static double sd_erf(double a) { return erf(a); }

/* The bound rules of kernels.def's SHADOW RULE column. */
enum { SH_NONE, SH_EXACT, SH_STEP, SH_LIPSCHITZ1, SH_MONOTONE, SH_PRED, SH_INT };

static const struct {
  long double (*l)(long double);
  double (*d)(double);
  int rule;
} unary_k[TR_OP_COUNT] = {
#define K1(E, fk, ik, sl, sd, rule, c, ci, cp, cost, u64, u32, un) [TR_OP_##E] = {sl, sd, SH_##rule},
#define K2(E, fk, ik, c, ci, cp, cost, u64, u32, un)
#include "../ir/kernels.def"
#undef K1
#undef K2
};

static long double flt_unary(tr_op op, long double a) { return unary_k[op].l(a); }

static double flt_unary_d(tr_op op, double a) {
  return unary_k[op].d ? unary_k[op].d(a) : (double)unary_k[op].l(a);
}

/* Whether the closed interval [lo, hi] (lo < hi) leaves op's domain or
 * reaches a pole. */
static bool off_domain(tr_op op, long double lo, long double hi) {
  switch (op) {
  case TR_OP_LOG: case TR_OP_RSQRT: return lo <= 0;
  case TR_OP_SQRT: return lo < 0;
  case TR_OP_LOG_PLUS_ONE: return lo <= -1;
  case TR_OP_TAN:
    return hi - lo >= PI_L || floorl((lo - PI_L / 2) / PI_L) != floorl((hi - PI_L / 2) / PI_L);
  default: return false;
  }
}

/* The unary rule for one element of value a with bound ea; sets *u where
 * uncertain. dbl: compute in double (types up to 32 bits). */
static void flt_unary1(tr_op op, const sh_fmt *f, double k, bool dbl, long double a, long double ea,
                       long double *rv, double *re, unsigned char *u) {
  long double r = dbl ? (long double)flt_unary_d(op, (double)a) : flt_unary(op, a);
  long double lo = a - ea, hi = a + ea;
  switch (unary_k[op].rule) {
  case SH_EXACT:
    /* Exact and 1-Lipschitz. */
    *rv = r;
    *re = (double)ea;
    return;
  case SH_STEP:
    /* Exact, piecewise constant: uncertain where the ends differ. */
    if (ea > 0 && isfinite(a) && flt_unary(op, lo) != flt_unary(op, hi)) *u = 1;
    *rv = r;
    *re = 0;
    /* Ends that differ only in the sign of a zero (round(-0.3) is -0,
     * round(0.3) is +0) are equal as numbers: the element stays judged,
     * with one smallest step of bound, which says a zero of either sign
     * is right to the ops that read signs (atan2 on the negative x axis,
     * a division by it). A clean builtin campaign, seed 9: a rounded
     * convolution of tiny values was -0 in the reference and +0 on the
     * target, and atan2 of it -pi and pi. */
    if (ea > 0 && isfinite(a) && r == 0 && signbit(flt_unary(op, lo)) != signbit(flt_unary(op, hi))) *re = f->tiny;
    return;
  default: break;
  }
  long double p = 0;
  if (ea > 0 && isfinite(a)) {
    if (off_domain(op, lo, hi)) *u = 1;
    if (unary_k[op].rule == SH_LIPSCHITZ1) {
      p = ea < 2 ? ea : 2; /* |f'| <= 1 (sine, cosine: and within [-1, 1]) */
    } else {
      /* Monotone on the interval: the change is largest at an end. In
       * double the ends are widened outward, so the rounded argument of
       * r stays inside, and each value may be 2 of its ulps off. */
      long double flo, fhi, ev = 0;
      if (dbl) {
        double dlo = (double)lo, dhi = (double)hi;
        if (dlo > lo) dlo = nextafter(dlo, -INFINITY);
        if (dhi < hi) dhi = nextafter(dhi, INFINITY);
        flo = flt_unary_d(op, dlo);
        fhi = flt_unary_d(op, dhi);
        ev = ldexpl(fabsl(flo) + fabsl(fhi) + fabsl(r), -51);
      } else {
        flo = flt_unary(op, lo);
        fhi = flt_unary(op, hi);
      }
      p = max2(fabsl(flo - r), fabsl(fhi - r)) + ev;
      if (isnan(p)) p = INFINITY;
    }
  }
  sh_finish(f, r, p, k, rv, re, u);
  /* A non-finite result of a finite input with an error: a correct
   * result may be finite. */
  if (!isfinite(r) && isfinite(a) && ea > 0) *u = 1;
}

/* One elementwise job over whole arrays, split across threads by chunks
 * of elements (each element is computed the same way on any thread). */
typedef struct {
  tr_op op;
  sh_fmt f;
  double k;
  const sh_val *x, *y;
  sh_val *o;
} elem_job;

static void unary_chunk(void *ctx, size_t lo, size_t hi) {
  const elem_job *j = ctx;
  const sh_val *x = j->x;
  sh_val *o = j->o;
  tr_op op = j->op;
  if (x->d && (op == TR_OP_ABS || op == TR_OP_NEGATE)) {
    /* Exact and 1-Lipschitz: the bound and mark stay. */
    const double *xd = x->d;
    double *od = o->d;
    if (op == TR_OP_ABS)
      for (size_t i = lo; i < hi; i++) od[i] = fabs(xd[i]);
    else
      for (size_t i = lo; i < hi; i++) od[i] = -xd[i];
    memcpy(o->e + lo, x->e + lo, sizeof(double) * (hi - lo));
    memcpy(o->u + lo, x->u + lo, hi - lo);
    return;
  }
  bool dbl = x->d != NULL;
  for (size_t i = lo; i < hi; i++) {
    unsigned char u = x->u[i];
    long double rv;
    double re;
    flt_unary1(op, &j->f, j->k, dbl, sh_get(x, i), x->e[i], &rv, &re, &u);
    sh_put(o, i, rv, re);
    o->u[i] = u;
  }
}

/* Elementwise work worth threads: n elements at roughly `cost` scalar
 * operations each. */
static void run_elem(ev_par_fn fn, elem_job *j, size_t n, double cost) {
  ev_par_for(ev_par_threads(cost * (double)n), n, fn, j);
}

tr_status sh_unary(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out) {
  tr_op op = in->op;
  if (!sh_is_flt(x)) {
    tr_tensor *r = NULL;
    tr_status st = ev_unary(&c->ev, in, x->t, &r);
    if (st != TR_OK) return st;
    return int_result(c, in, r, &x, 1, out);
  }
  tr_dtype rt = op == TR_OP_IS_FINITE ? TR_DT_PRED : x->dt;
  sh_val *o = sh_arr_new_raw(c, in, rt, x->rank, x->dims); /* every element written below */
  if (!o) return TR_ERR_UNSUPPORTED;
  if (op == TR_OP_IS_FINITE) {
    /* An interval that reaches inf was marked by the op that made it. */
    unsigned char *p = o->t->data;
    for (size_t i = 0; i < x->n; i++) {
      p[i] = isfinite(sh_get(x, i)) != 0;
      o->u[i] = x->u[i];
    }
    *out = o;
    return TR_OK;
  }
  elem_job j = {op, {0}, sh_allow(c, op, x->dt), x, NULL, o};
  sh_fmt_of(x->dt, &j.f);
  run_elem(unary_chunk, &j, x->n, ev_kernels[op].cost);
  *out = o;
  return TR_OK;
}

/* ---- binary ---- */

/* max and min with the exact interpreter's NaN and tie rules. */
static long double fmax_e(long double a, long double b) { return isnan(a) ? a : isnan(b) ? b : (a < b ? b : a); }
static long double fmin_e(long double a, long double b) { return isnan(a) ? a : isnan(b) ? b : (b < a ? b : a); }

/* Whether a and b are zeros of opposite signs: max and min tie on them,
 * and which one comes out is the implementation's (the exact interpreter
 * keeps the lhs, as XLA's constant folder does; XLA CPU's compiled code
 * orders -0 below +0). The result then gets one smallest step of bound,
 * which says a zero of either sign is right to the ops that read signs
 * (a total-order compare, atan2, a division by it). A 10-minute xla-cpu
 * campaign, seed 22: min(+0, -0) of flushed denormals was -0 on XLA and
 * +0 in the reference, and an argmin by total order picked another row. */
static bool zero_tie(long double a, long double b) { return a == 0 && b == 0 && signbit(a) != signbit(b); }

static long double pow_e(long double a, long double b) { return (a == 1 || b == 0) ? 1.0L : powl(a, b); }

/* The binary rule for one element; sets *u where uncertain. */
static void flt_binary1(tr_op op, const sh_fmt *f, double k, long double a, long double ea,
                        long double b, long double eb, long double *rv, double *re, unsigned char *u) {
  long double r, p = 0;
  bool fin = isfinite(a) && isfinite(b);
  switch (op) {
  case TR_OP_MAXIMUM: case TR_OP_MINIMUM:
    /* Exact and 1-Lipschitz in each operand. */
    r = op == TR_OP_MAXIMUM ? fmax_e(a, b) : fmin_e(a, b);
    *rv = r;
    *re = (double)(isnan(r) ? 0 : max2(ea, eb));
    if (zero_tie(a, b) && *re < f->tiny) *re = f->tiny;
    return;
  case TR_OP_ADD: r = a + b; p = ea + eb; break;
  case TR_OP_SUBTRACT: r = a - b; p = ea + eb; break;
  case TR_OP_MULTIPLY: r = a * b; p = fabsl(b) * ea + fabsl(a) * eb + ea * eb; break;
  case TR_OP_DIVIDE:
    r = a / b;
    if (fabsl(b) > eb) p = (fabsl(a) * eb + fabsl(b) * ea) / (fabsl(b) * (fabsl(b) - eb));
    else if (ea > 0 || eb > 0) {
      p = INFINITY;
      if (b == 0 && eb == 0 && fabsl(a) > ea) p = 0; /* x / exact 0: an inf of certain sign */
    }
    break;
  case TR_OP_REMAINDER: {
    r = fmodl(a, b);
    k = 0; /* fmod is exact */
    if (ea > 0 || eb > 0) {
      if (fabsl(b) <= eb) {
        p = INFINITY;
        break;
      }
      /* Continuous while trunc(a/b) stays the same over the box. */
      long double q[4] = {truncl((a - ea) / (b - eb)), truncl((a - ea) / (b + eb)),
                          truncl((a + ea) / (b - eb)), truncl((a + ea) / (b + eb))};
      if (q[0] != q[1] || q[0] != q[2] || q[0] != q[3]) *u = 1;
      p = ea + fabsl(truncl(a / b)) * eb;
    }
    break;
  }
  case TR_OP_POWER:
    r = pow_e(a, b);
    if ((ea > 0 || eb > 0) && fin) {
      bool integral = eb == 0 && b == truncl(b);
      if (a - ea > 0 || (integral && (a + ea < 0 || a - ea > 0))) {
        /* Monotone in each operand over the box: extremes at corners
         * (exp(b log a) is monotone in the product b log a). */
        long double c4[4] = {pow_e(a - ea, b - eb), pow_e(a - ea, b + eb), pow_e(a + ea, b - eb),
                             pow_e(a + ea, b + eb)};
        for (int j = 0; j < 4; j++) p = max2(p, fabsl(c4[j] - r));
        if (isnan(p)) p = INFINITY;
      } else {
        p = INFINITY;
      }
    }
    break;
  case TR_OP_ATAN2:
    r = atan2l(a, b);
    if ((ea > 0 || eb > 0) && fin) {
      /* y = a, x = b. Jumps where the box holds the origin or crosses
       * the negative x axis; elsewhere |grad| = 1/radius. */
      if ((fabsl(a) <= ea && b - eb <= 0)) {
        p = INFINITY;
      } else {
        long double dx = max2(0, fabsl(b) - eb), dy = max2(0, fabsl(a) - ea);
        p = (ea + eb) / sqrtl(dx * dx + dy * dy);
      }
    }
    break;
  default: r = NAN; break;
  }
  if (!fin) {
    /* Inf and NaN operands are exact; the result is certain when no
     * value in a finite operand's interval changes it. */
    *rv = r;
    *re = 0;
    bool sure;
    long double fa = isfinite(a) ? a : b, fe = isfinite(a) ? ea : eb; /* the finite one, if any */
    if (op == TR_OP_POWER) {
      /* pow(1, y) = pow(x, 0) = 1 even for NaN: an interval holding 1
       * (base) or 0 (exponent) may take that case. */
      bool near1 = ea > 0 && fabsl(a - 1) <= ea, near0 = eb > 0 && fabsl(b) <= eb;
      sure = (ea == 0 && eb == 0) || (isnan(b) && !near1) || (isnan(a) && !near0);
    } else if (isnan(a) || isnan(b) || (!isfinite(a) && !isfinite(b))) sure = true;
    else if (op == TR_OP_ADD || op == TR_OP_SUBTRACT) sure = true;
    else if (op == TR_OP_MULTIPLY) sure = fe == 0 || fabsl(fa) > fe;
    else if (op == TR_OP_DIVIDE) sure = !isfinite(b) || fe == 0 || fabsl(fa) > fe;
    else sure = ea == 0 && eb == 0;
    if (!sure) *u = 1;
    if (isinf(r) && !f->has_inf) *rv = NAN;
    /* A finite result of an inf operand (atan2(inf, x) = pi/2) still
     * rounds. */
    if (isfinite(r)) sh_finish(f, r, 0, k, rv, re, u);
    return;
  }
  if (isinf(p) && !isfinite(r)) {
    *rv = r;
    *re = 0;
    *u = 1;
    return;
  }
  sh_finish(f, r, p, k, rv, re, u);
  if (!isfinite(r) && p > 0) *u = 1;
}

/* ---- the bulk loops of types up to 32 bits ---- */

/* sh_finish in double for the common case: finite r and p, away from the
 * overflow edge. Returns false when the general rule must decide. Each
 * double operation on the way rounds by at most 2^-53 relative and every
 * term is non-negative, so widening the sum by 2^-48 keeps it above
 * sh_finish's long double bound. A power of two is a double, and rounding
 * is monotone, so the ulp and the overflow test see the same binade as
 * the exact sum would. */
static inline bool finish_d(const sh_fmt *f, double lim, double maxf, double minnorm, double r,
                            double p, double k, double *e) {
  double ar = fabs(r);
  if (p == 0 && k <= 0.5 && ar <= maxf) {
    /* representable(): no bits below the type's last kept one */
    uint64_t b;
    memcpy(&b, &ar, 8);
    int ex = (int)(b >> 52) - 1023;
    if (ar == 0) {
      *e = 0;
      return true;
    }
    if (ex > -1023) {
      int lsb = ex - (f->p - 1), tiny = f->emin - f->p + 1;
      if (lsb < tiny) lsb = tiny;
      int drop = lsb - (ex - 52);
      if (drop <= 0 || (drop <= 52 && (b & ((1ull << drop) - 1)) == 0)) {
        *e = 0;
        return true;
      }
    }
  }
  double mag = ar + p, ulp;
  if (!(mag >= minnorm)) {
    ulp = f->tiny;
  } else {
    uint64_t b;
    memcpy(&b, &mag, 8);
    b = (b & 0x7ff0000000000000ull) - ((uint64_t)(f->p - 1) << 52);
    memcpy(&ulp, &b, 8);
  }
  double E = (p + k * ulp + f->slack * mag) * (1 + 0x1p-48);
  if (!(ar + E < lim)) return false;
  *e = E;
  return true;
}

static void binary_slow(const elem_job *j, size_t i) {
  const sh_val *x = j->x, *y = j->y;
  unsigned char u = x->u[i] | y->u[i];
  long double rv;
  double re;
  flt_binary1(j->op, &j->f, j->k, sh_get(x, i), x->e[i], sh_get(y, i), y->e[i], &rv, &re, &u);
  sh_put(j->o, i, rv, re);
  j->o->u[i] = u;
}

/* One loop per op, the op's value and propagated error as expressions of
 * a, ea, b, eb; anything non-finite goes to the general rule. */
#define BIN_LOOP(R, P)                                                                        \
  for (size_t i = lo; i < hi; i++) {                                                           \
    double a = xd[i], b = yd[i], ea = xe[i], eb = ye[i];                                       \
    double r = (R), p = (P), e;                                                                \
    if (isfinite(a) && isfinite(b) && isfinite(r) && isfinite(p) &&                            \
        finish_d(&j->f, lim, maxf, minnorm, r, p, k, &e)) {                                             \
      od[i] = r;                                                                               \
      oe[i] = e;                                                                               \
      ou[i] = xu[i] | yu[i];                                                                   \
    } else {                                                                                   \
      binary_slow(j, i);                                                                       \
    }                                                                                          \
  }

/* The same rule over a block of BLK elements, written without branches so
 * the compiler can vectorize it (a fixed trip count lets -O2's cheap
 * vectorizer in): it writes value, bound and mark of every element and
 * ok[t] = 0 where the general rule must decide instead (non-finite
 * operand, result or bound; the overflow edge; results in the subnormal
 * range of the type, whose exactness test needs the general rule). */
#define BLK 64

#define BLK_LOOP(R, P, OKX)                                                                    \
  for (int t = 0; t < BLK; t++) {                                                              \
    double a = xd[t], b = yd[t], ea = xe[t], eb = ye[t];                                       \
    double r = (R), p = (P), ar = fabs(r), mag = ar + p;                                       \
    /* the type's ulp at mag: mag's exponent, p-1 binades down */                              \
    uint64_t mb;                                                                               \
    memcpy(&mb, &mag, 8);                                                                      \
    mb = (mb & 0x7ff0000000000000ull) - shift;                                                 \
    double ulp;                                                                                \
    memcpy(&ulp, &mb, 8);                                                                      \
    ulp = mag < minnorm ? tiny : ulp;                                                          \
    double E = (p + k * ulp + slack * mag) * (1 + 0x1p-48);                                    \
    /* exact: a correctly rounded op on exact operands whose result is a                       \
     * value of the type; Veltkamp's split rounds ar to the type's p bits */                   \
    double sc = split * ar, hi = sc - (sc - ar);                                               \
    double ex = p == 0 ? kexact : 0.0;                                                         \
    ex = ar <= maxf ? ex : 0.0;                                                                \
    ex = hi == ar ? ex : 0.0;                                                                  \
    /* finite operands, result and bound (NaN fails the compare) */                            \
    double fin = fabs(a) + fabs(b) + ar + p <= DBL_MAX ? 1.0 : 0.0;                            \
    fin = (ar >= minnorm || ar == 0) ? fin : 0.0;                                              \
    fin = (OKX) ? fin : 0.0;                                                                   \
    double edge = ar + E < lim ? fin : 0.0;                                                    \
    od[t] = r;                                                                                 \
    oe[t] = ex != 0 ? 0.0 : E;                                                                 \
    ok[t] = ex != 0 ? fin : edge;                                                              \
  }

/* The constants of one dtype's block loops. */
typedef struct {
  double k, lim, maxf, minnorm, tiny, slack, split, kexact;
  uint64_t shift;
} blk_consts;

/* One function per op: restrict parameters tell the vectorizer that the
 * arrays do not overlap. */
#define BLK_FN(NAME, R, P, OKX)                                                                 \
  static void NAME(const double *restrict xd, const double *restrict yd,                        \
                   const double *restrict xe, const double *restrict ye, double *restrict od,   \
                   double *restrict oe, double *restrict ok, const blk_consts *q) {             \
    double k = q->k, lim = q->lim, maxf = q->maxf, minnorm = q->minnorm, tiny = q->tiny;         \
    double slack = q->slack, split = q->split, kexact = q->kexact;                               \
    uint64_t shift = q->shift;                                                                  \
    BLK_LOOP(R, P, OKX)                                                                         \
  }

BLK_FN(blk_add, a + b, ea + eb, 1)
BLK_FN(blk_sub, a - b, ea + eb, 1)
BLK_FN(blk_mul, a * b, fabs(b) * ea + fabs(a) * eb + ea * eb, 1)
/* (|a|eb + |b|ea) / (|b|(|b|-eb)), valid where |b| > eb; 0 for exact
 * operands (b = 0 makes r non-finite) */
BLK_FN(blk_div, a / b, (fabs(a) * eb + fabs(b) * ea) / (fabs(b) * (fabs(b) - eb)),
       fabs(b) > eb || (ea == 0 && eb == 0))

static void or_marks(const unsigned char *restrict a, const unsigned char *restrict b,
                     unsigned char *restrict o) {
  for (int t = 0; t < BLK; t++) o[t] = a[t] | b[t];
}

static void binary_block(const elem_job *j, const blk_consts *q, size_t i0) {
  const double *xd = j->x->d + i0, *yd = j->y->d + i0, *xe = j->x->e + i0, *ye = j->y->e + i0;
  double *od = j->o->d + i0, *oe = j->o->e + i0, ok[BLK];
  switch (j->op) {
  case TR_OP_ADD: blk_add(xd, yd, xe, ye, od, oe, ok, q); break;
  case TR_OP_SUBTRACT: blk_sub(xd, yd, xe, ye, od, oe, ok, q); break;
  case TR_OP_MULTIPLY: blk_mul(xd, yd, xe, ye, od, oe, ok, q); break;
  case TR_OP_DIVIDE: blk_div(xd, yd, xe, ye, od, oe, ok, q); break;
  default: return;
  }
  or_marks(j->x->u + i0, j->y->u + i0, j->o->u + i0);
  for (int t = 0; t < BLK; t++)
    if (ok[t] == 0) binary_slow(j, i0 + (size_t)t);
}

static double div_err(double a, double ea, double b, double eb) {
  double ab = fabs(b);
  if (ea == 0 && eb == 0) return 0;
  if (!(ab > eb)) return INFINITY;
  return (fabs(a) * eb + ab * ea) / (ab * (ab - eb));
}

static void binary_chunk(void *ctx, size_t lo, size_t hi) {
  const elem_job *j = ctx;
  const sh_val *x = j->x, *y = j->y;
  sh_val *o = j->o;
  if (!x->d) {
    for (size_t i = lo; i < hi; i++) binary_slow(j, i);
    return;
  }
  const double *xd = x->d, *yd = y->d, *xe = x->e, *ye = y->e;
  const unsigned char *xu = x->u, *yu = y->u;
  double *od = o->d, *oe = o->e, k = j->k;
  unsigned char *ou = o->u;
  double lim = (double)j->f.lim, maxf = (double)j->f.maxf, minnorm = ldexp(1.0, j->f.emin);
  if (j->op == TR_OP_ADD || j->op == TR_OP_SUBTRACT || j->op == TR_OP_MULTIPLY ||
      j->op == TR_OP_DIVIDE) {
    /* whole blocks vectorized, the rest below */
    const sh_fmt *f = &j->f;
    blk_consts q = {j->k, (double)f->lim, (double)f->maxf, ldexp(1.0, f->emin), f->tiny, f->slack,
                    ldexp(1.0, 53 - f->p) + 1, j->k <= 0.5 ? 1.0 : 0.0, (uint64_t)(f->p - 1) << 52};
    for (; lo + BLK <= hi; lo += BLK) binary_block(j, &q, lo);
  }
  switch (j->op) {
  case TR_OP_ADD: BIN_LOOP(a + b, ea + eb) break;
  case TR_OP_SUBTRACT: BIN_LOOP(a - b, ea + eb) break;
  case TR_OP_MULTIPLY: BIN_LOOP(a * b, fabs(b) * ea + fabs(a) * eb + ea * eb) break;
  case TR_OP_DIVIDE: BIN_LOOP(a / b, div_err(a, ea, b, eb)) break;
  case TR_OP_MAXIMUM: case TR_OP_MINIMUM: {
    /* Exact and 1-Lipschitz in each operand; NaN and tie rules as
     * flt_binary1. */
    bool mx = j->op == TR_OP_MAXIMUM;
    for (size_t i = lo; i < hi; i++) {
      double a = xd[i], b = yd[i];
      double r = isnan(a) ? a : isnan(b) ? b : mx ? (a < b ? b : a) : (b < a ? b : a);
      od[i] = r;
      oe[i] = isnan(r) ? 0 : xe[i] > ye[i] ? xe[i] : ye[i];
      if (zero_tie(a, b) && oe[i] < j->f.tiny) oe[i] = j->f.tiny;
      ou[i] = xu[i] | yu[i];
    }
    break;
  }
  default:
    for (size_t i = lo; i < hi; i++) binary_slow(j, i);
  }
}

tr_status sh_binary(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out) {
  if (x->dt != y->dt || x->n != y->n)
    return ev_err(&c->ev, in, TR_ERR_INVALID, "operands differ in type or size");
  if (!sh_is_flt(x)) {
    tr_status st;
    if (int_scalar(c, in, x, y, out, &st)) return st;
    tr_tensor *r = NULL;
    st = ev_binary(&c->ev, in, x->t, y->t, &r);
    if (st != TR_OK) return st;
    const sh_val *ops[2] = {x, y};
    return int_result(c, in, r, ops, 2, out);
  }
  sh_val *o = sh_arr_new_raw(c, in, x->dt, x->rank, x->dims); /* binary_chunk writes all */
  if (!o) return TR_ERR_UNSUPPORTED;
  elem_job j = {in->op, {0}, sh_allow(c, in->op, x->dt), x, y, o};
  sh_fmt_of(x->dt, &j.f);
  run_elem(binary_chunk, &j, x->n, ev_kernels[in->op].cost);
  *out = o;
  return TR_OK;
}

/* ---- compare ---- */

tr_status sh_compare(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out) {
  if (x->dt != y->dt || x->n != y->n)
    return ev_err(&c->ev, in, TR_ERR_INVALID, "operands differ in type or size");
  if (!sh_is_flt(x)) {
    tr_status st;
    if (int_scalar(c, in, x, y, out, &st)) return st;
    tr_tensor *r = NULL;
    st = ev_compare(&c->ev, in, x->t, y->t, &r);
    if (st != TR_OK) return st;
    const sh_val *ops[2] = {x, y};
    return int_result(c, in, r, ops, 2, out);
  }
  bool total;
  ev_cmpdir dir = ev_cmp_attrs(in, &total);
  sh_val *o = sh_arr_new(c, in, TR_DT_PRED, x->rank, x->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  unsigned char *p = o->t->data;
  for (size_t i = 0; i < x->n; i++) {
    long double a = sh_get(x, i), b = sh_get(y, i);
    long double eab = (long double)x->e[i] + y->e[i];
    unsigned char u = x->u[i] | y->u[i];
    if (isnan(a) || isnan(b)) {
      if (total) {
        /* NaNs order by sign and payload: compare the stored bits. */
        if (c->nan_sign) {
          /* tr_shadow_opts.nan_sign: a made NaN's sign as given */
          double qn = copysign(NAN, (double)c->nan_sign);
          if (isnan(a) && !x->bits) a = qn;
          if (isnan(b) && !y->bits) b = qn;
        }
        uint64_t ba = tr_float_from_double(x->dt, (double)a), bb = tr_float_from_double(x->dt, (double)b);
        unsigned char sa[8], sb[8];
        memcpy(sa, &ba, 8);
        memcpy(sb, &bb, 8);
        p[i] = ev_compare_slots(in, x->dt, sa, sb);
        /* The sign and payload of a NaN an operation makes are not
         * specified (log(-3) is -NaN on x86, +NaN elsewhere): where the
         * order hangs on them a correct run may differ. */
        if (!c->nan_sign || (isnan(a) && x->bits) || (isnan(b) && y->bits)) u = 1;
      } else {
        p[i] = dir == EV_CMP_NE;
      }
    } else {
      int c3 = (a > b) - (a < b);
      if (total && c3 == 0 && a == 0) c3 = (signbit(b) != 0) - (signbit(a) != 0);
      p[i] = ev_cmp_ok(dir, c3);
      /* A correct pair within the bounds may compare otherwise. */
      if (eab > 0 && fabsl(a - b) <= eab) u = 1;
    }
    o->u[i] = u;
  }
  *out = o;
  return TR_OK;
}

/* ---- select, clamp ---- */

tr_status sh_select(sh_ctx *c, const tr_instr *in, const sh_val *pr, const sh_val *x, const sh_val *y,
                    sh_val **out) {
  if (x->dt != y->dt || x->n != y->n || pr->dt != TR_DT_PRED || (pr->n != x->n && pr->rank != 0))
    return ev_err(&c->ev, in, TR_ERR_INVALID, "select operands do not match");
  sh_val *o = sh_arr_new(c, in, x->dt, x->rank, x->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  const unsigned char *pp = pr->t->data;
  size_t es = sh_is_flt(x) ? 0 : (size_t)tr_dtype_size(x->dt);
  for (size_t i = 0; i < x->n; i++) {
    size_t j = pr->rank == 0 ? 0 : i;
    const sh_val *s = pp[j] ? x : y;
    if (es) {
      memcpy((char *)o->t->data + i * es, (const char *)s->t->data + i * es, es);
      if (o->e) o->e[i] = s->e ? s->e[i] : 0; /* complex: its bound */
      o->u[i] = s->u[i];
    } else {
      sh_copy(o, i, s, i);
    }
    /* An uncertain predicate may pick the other operand. */
    o->u[i] |= pr->u[j];
  }
  *out = o;
  return TR_OK;
}

tr_status sh_clamp(sh_ctx *c, const tr_instr *in, const sh_val *lo, const sh_val *x, const sh_val *hi,
                   sh_val **out) {
  if (!sh_is_flt(x)) {
    tr_tensor *r = NULL;
    tr_status st = ev_clamp(&c->ev, in, lo->t, x->t, hi->t, &r);
    if (st != TR_OK) return st;
    const sh_val *ops[3] = {lo, x, hi};
    return int_result(c, in, r, ops, 3, out);
  }
  sh_val *o = sh_arr_new(c, in, x->dt, x->rank, x->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  sh_fmt f;
  sh_fmt_of(x->dt, &f);
  for (size_t i = 0; i < x->n; i++) {
    size_t il = lo->n == x->n ? i : 0, ih = hi->n == x->n ? i : 0;
    long double l = sh_get(lo, il), v = sh_get(x, i), h = sh_get(hi, ih);
    long double r;
    if (isnan(l)) r = l;
    else if (isnan(v)) r = v;
    else if (isnan(h)) r = h;
    else {
      long double mx = v < l ? l : v;
      r = mx < h ? mx : h;
    }
    /* Exact and 1-Lipschitz in each operand, ties included; a zero tie
     * of opposite signs as in max and min (zero_tie). */
    double e = isnan(r) ? 0 : (double)max2(max2(lo->e[il], x->e[i]), hi->e[ih]);
    if ((zero_tie(r, l) || zero_tie(r, v) || zero_tie(r, h)) && e < f.tiny) e = f.tiny;
    sh_put(o, i, r, e);
    o->u[i] = lo->u[il] | x->u[i] | hi->u[ih];
  }
  *out = o;
  return TR_OK;
}

/* ---- convert ---- */

/* float -> integer as the exact interpreter converts (NaN -> 0,
 * saturating, truncating toward zero). */
static uint64_t flt_to_int(tr_dtype dt, long double v) {
  if (dt == TR_DT_PRED) return v != 0; /* unordered: NaN is true */
  if (isnan(v)) return 0;
  if (tr_dtypes[dt].kind == TR_DK_SINT) {
    int64_t lo = tr_int_min(dt), hi = (int64_t)tr_int_max(dt);
    if (v >= (long double)(double)hi) return (uint64_t)hi;
    if (v <= (long double)(double)lo) return (uint64_t)lo;
    return (uint64_t)(int64_t)v;
  }
  uint64_t hi = tr_int_max(dt);
  if (v >= (long double)(double)hi) return hi;
  if (v <= 0) return 0;
  return (uint64_t)v;
}

/* Whether v truncated toward zero is not a value of the integer dtype dt
 * (NaN and inf never are): StableHLO's convert leaves that undefined. */
static bool int_out_of_range(tr_dtype dt, long double v) {
  if (!isfinite(v)) return true;
  long double t = truncl(v);
  if (tr_dtypes[dt].kind == TR_DK_SINT) return t < (long double)tr_int_min(dt) || t > (long double)(int64_t)tr_int_max(dt);
  return t < 0 || t > (long double)tr_int_max(dt);
}

tr_status sh_convert(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out) {
  tr_dtype dt = in->shape->dtype, st = x->dt;
  bool fs = tr_dtype_is_float(st), fd = tr_dtype_is_float(dt);
  if (!fs && !fd) {
    tr_tensor *r = ev_convert_to(&c->ev, in, x->t, dt);
    if (!r) return TR_ERR_UNSUPPORTED;
    return int_result(c, in, r, &x, 1, out);
  }
  sh_val *o = sh_arr_new(c, in, dt, x->rank, x->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  size_t n = x->n;
  if (fs && !fd) {
    uint64_t *v = tr_xmalloc(sizeof(uint64_t) * (n ? n : 1));
    bool undef = c->cvt_undef && tr_dtype_is_int(dt) && c->cvt_undef[dt];
    for (size_t i = 0; i < n; i++) {
      long double a = sh_get(x, i), ea = x->e[i];
      v[i] = flt_to_int(dt, a);
      o->u[i] = x->u[i];
      /* Truncation and saturation are steps: uncertain where the ends of
       * the interval convert differently. */
      if (ea > 0 && isfinite(a) && flt_to_int(dt, a - ea) != flt_to_int(dt, a + ea)) o->u[i] = 1;
      /* pred is x != 0, not monotone: both ends may be true with 0 between
       * (a product that rounds to 0 in its narrow type) */
      if (dt == TR_DT_PRED && ea > 0 && a - ea <= 0 && a + ea >= 0) o->u[i] = 1;
      /* A target free to give anything (tr_shadow_opts.cvt_undef). */
      if (undef && (int_out_of_range(dt, a - ea) || int_out_of_range(dt, a + ea))) o->u[i] = 1;
    }
    ev_store_ints(o->t, v);
    tr_free(v);
    *out = o;
    return TR_OK;
  }
  sh_fmt f;
  sh_fmt_of(dt, &f);
  double k = sh_allow(c, TR_OP_CONVERT, dt);
  if (!fs) {
    uint64_t *v = tr_xmalloc(sizeof(uint64_t) * (n ? n : 1));
    ev_load_ints(x->t, v);
    bool sg = tr_dtypes[st].kind == TR_DK_SINT;
    long double exact_below = ldexpl(1.0L, f.p);
    for (size_t i = 0; i < n; i++) {
      long double a = sg ? (long double)(int64_t)v[i] : (long double)v[i];
      unsigned char u = x->u[i];
      if (fabsl(a) <= exact_below && fabsl(a) <= f.maxf) {
        sh_put(o, i, a, 0); /* representable: exact */
      } else {
        long double rv;
        double re;
        sh_finish(&f, a, 0, k, &rv, &re, &u);
        sh_put(o, i, rv, re);
      }
      o->u[i] = u;
    }
    tr_free(v);
    *out = o;
    return TR_OK;
  }
  /* float -> float: the shadow value stays; narrowing adds its rounding
   * and may overflow, widening is exact. */
  const tr_dtype_info *si = &tr_dtypes[st], *di = &tr_dtypes[dt];
  bool widen = di->mbits >= si->mbits && di->ebits >= si->ebits && f.maxf >= tr_float_max(st);
  for (size_t i = 0; i < n; i++) {
    unsigned char u = x->u[i];
    if (widen) {
      sh_put(o, i, sh_get(x, i), x->e[i]);
    } else {
      long double rv;
      double re;
      sh_finish(&f, sh_get(x, i), x->e[i], k, &rv, &re, &u);
      sh_put(o, i, rv, re);
    }
    o->u[i] = u;
  }
  *out = o;
  return TR_OK;
}

/* ---- reduce-precision ---- */

/* A rounding to m mantissa bits and e exponent bits without subnormals:
 * the shadow value stays; the bound gains a whole ulp of the reduced
 * format (the rounding), plus the smallest normal where the interval
 * reaches below it (the flush to zero), and the reduced format's
 * overflow threshold marks the edge. */
tr_status sh_reduce_precision(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out) {
  const tr_attr *ea = tr_instr_attr(in, TR_ATTR_EXPONENT_BITS);
  const tr_attr *ma = tr_instr_attr(in, TR_ATTR_MANTISSA_BITS);
  if (!sh_is_flt(x) || !ea || !ma || ea->u.i < 1 || ma->u.i < 0 || ea->u.i > 30)
    return sh_fallback(c, in, (sh_val **)&x, out);
  int64_t m = ma->u.i, e = ea->u.i;
  /* As exact mode (eval_elem.c): f64 and f32 are reduced in their own
   * format, narrower types in f32; so e.g. f16 with its own 5 exponent
   * bits still flushes its subnormals (no reduced subnormals). */
  bool f64 = x->dt == TR_DT_F64;
  int sm = f64 ? 52 : 23, se = f64 ? 11 : 8, sbias = f64 ? 1023 : 127;
  sh_val *o = sh_arr_new(c, in, x->dt, x->rank, x->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  if (m >= sm && e >= se) {
    /* Nothing to reduce: the identity. */
    for (size_t i = 0; i < x->n; i++) sh_copy(o, i, x, i);
    *out = o;
    return TR_OK;
  }
  /* Exact elements: reduce-precision is a function of its input, so the
   * exact kernel's result is every correct implementation's. */
  tr_tensor *xt = sh_round_tensor(c, in, x), *rt = NULL;
  tr_status st = xt ? ev_reduce_precision(&c->ev, in, xt, &rt) : TR_ERR_UNSUPPORTED;
  tr_tensor_free(xt);
  if (st != TR_OK) {
    sh_unref(o);
    return st;
  }
  double *rx = tr_xmalloc(sizeof(double) * (x->n ? x->n : 1));
  ev_load_flts(rt, rx);
  tr_tensor_free(rt);
  sh_fmt src, f;
  sh_fmt_of(x->dt, &src);
  int rbias = e >= se ? sbias : (1 << (e - 1)) - 1;
  f = src;
  if (m < sm) {
    f.p = (int)m + 1;
    /* the source's subnormals are rounded on their pattern too: their
     * spacing grows to 2^(emin - m) */
    f.tiny = ldexp(1.0, f.emin - (int)m);
  }
  if (e < se) {
    f.emin = 1 - rbias;
    f.maxf = ldexpl(2.0L - ldexpl(1.0L, -(int)(m < sm ? m : sm)), rbias);
    f.lim = f.maxf + ldexpl(0.5L, rbias - (f.p - 1));
    f.tiny = ldexp(1.0, f.emin);
    f.has_inf = true;
  }
  for (size_t i = 0; i < x->n; i++) {
    unsigned char u = x->u[i];
    long double v = sh_get(x, i);
    if (x->e[i] == 0 && (long double)(double)v == v) {
      /* an exact value of the type (the rounded tensor holds it) */
      sh_put(o, i, rx[i], 0);
      /* A NaN with no mantissa left: XLA's HloEvaluator gives +inf, its
       * CPU emitter (and IREE) keep the NaN. A subnormal of a narrow
       * type reduced to the type's own exponent width: the evaluator (in
       * f32) flushes it to 0, XLA CPU keeps it. XLA's own implementations
       * disagree, so neither is judged (docs/SEMANTICS.md). */
      bool own_sub = !f64 && x->dt != TR_DT_F32 && e == tr_dtypes[x->dt].ebits && v != 0 && !isnan(v) &&
                     fabsl(v) < ldexpl(1.0L, 1 - tr_dtypes[x->dt].bias);
      o->u[i] = u || (m == 0 && isnan(v)) || own_sub;
      continue;
    }
    if (isnan(v) && m == 0) u = 1; /* the same disagreement */
    if (isnan(v) && m == 0) v = INFINITY; /* E: a NaN becomes inf with no mantissa */
    /* An interval reaching below the smallest normal may flush to 0. */
    long double flush = e < se && fabsl(v) - x->e[i] < ldexpl(1.0L, f.emin) ? ldexpl(1.0L, f.emin) : 0;
    long double rv;
    double re;
    sh_finish(&f, v, x->e[i] + flush, 1.0, &rv, &re, &u);
    /* a type without inf (f8e4m3fn) stores the overflow as NaN */
    if (isinf(rv) && !src.has_inf) rv = NAN;
    sh_put(o, i, rv, re);
    o->u[i] = u;
  }
  tr_free(rx);
  *out = o;
  return TR_OK;
}

/* ---- iota ---- */

tr_status sh_iota(sh_ctx *c, const tr_instr *in, sh_val **out) {
  const tr_shape *s = in->shape;
  if (!tr_dtype_is_float(s->dtype)) {
    tr_tensor *r = NULL;
    tr_status st = ev_iota(&c->ev, in, &r);
    if (st != TR_OK) return st;
    return int_result(c, in, r, NULL, 0, out);
  }
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_IOTA_DIMENSION);
  int dim = at ? (int)at->u.i : 0;
  sh_val *o = sh_arr_new(c, in, s->dtype, s->rank, s->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  uint64_t inner = 1;
  for (int i = dim + 1; i < s->rank; i++) inner *= (uint64_t)s->dims[i];
  uint64_t size = s->rank > 0 ? (uint64_t)s->dims[dim] : 1;
  sh_fmt f;
  sh_fmt_of(s->dtype, &f);
  double k = sh_allow(c, TR_OP_IOTA, s->dtype);
  long double exact_below = ldexpl(1.0L, f.p);
  for (size_t i = 0; i < o->n; i++) {
    long double a = (long double)((i / inner) % size);
    long double rv = a;
    double re = 0;
    if (!(a <= exact_below && a <= f.maxf)) sh_finish(&f, a, 0, k, &rv, &re, &o->u[i]);
    sh_put(o, i, rv, re);
  }
  *out = o;
  return TR_OK;
}
