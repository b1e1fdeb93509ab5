/* eval_complex.c - c64 and c128 arithmetic in the exact interpreter, as
 * XLA's HloEvaluator computes it on std::complex<float/double>
 * (docs/SEMANTICS.md, "Complex"): add, subtract and negate per component;
 * multiply and divide by the formulas clang emits and compiler-rt's
 * __mulsc3/__divsc3 (C11 Annex G) with every primitive operation rounded
 * to the component type; the transcendentals from libm's long double
 * complex functions, rounded once per component; abs, real and imag give
 * the component type; compare is EQ or NE only. Sort, reduce-window,
 * scatter and select-and-scatter move complex values and call their
 * computations, so they need nothing here (ev_complex_ok admits them);
 * clamp is not defined on complex (E: UnsupportedTypeError). Cholesky
 * and triangular-solve are in eval_linalg.c, bitcast-convert between
 * complex types in eval_elem.c.
 *
 * Values are held as pairs of doubles: for c64 every primitive op is
 * followed by a rounding to float (R), which gives float arithmetic's bits
 * (double holds the exact product or sum of two floats' worth of bits
 * before the one rounding, 53 >= 2*24+2); for c128 R is the identity and
 * the ops are double's own. */
#include "evalint.h"

#include <complex.h>
#include <math.h>
#include <string.h>

typedef struct {
  double re, im;
} cplx;

/* Rounds to the component type: float for c64, nothing for c128. */
static inline double R(bool f, double x) { return f ? (double)(float)x : x; }

static cplx cmul(bool f, double a, double b, double c, double d) {
  /* clang's inline form (x = ac - bd, y = ad + bc) and, when both parts
   * are NaN, compiler-rt __mulsc3's recovery of infinities. */
  double ac = R(f, a * c), bd = R(f, b * d), ad = R(f, a * d), bc = R(f, b * c);
  cplx z = {R(f, ac - bd), R(f, ad + bc)};
  if (isnan(z.re) && isnan(z.im)) {
    bool recalc = false;
    if (isinf(a) || isinf(b)) {
      a = copysign(isinf(a) ? 1.0 : 0.0, a);
      b = copysign(isinf(b) ? 1.0 : 0.0, b);
      if (isnan(c)) c = copysign(0.0, c);
      if (isnan(d)) d = copysign(0.0, d);
      recalc = true;
    }
    if (isinf(c) || isinf(d)) {
      c = copysign(isinf(c) ? 1.0 : 0.0, c);
      d = copysign(isinf(d) ? 1.0 : 0.0, d);
      if (isnan(a)) a = copysign(0.0, a);
      if (isnan(b)) b = copysign(0.0, b);
      recalc = true;
    }
    if (!recalc && (isinf(ac) || isinf(bd) || isinf(ad) || isinf(bc))) {
      if (isnan(a)) a = copysign(0.0, a);
      if (isnan(b)) b = copysign(0.0, b);
      if (isnan(c)) c = copysign(0.0, c);
      if (isnan(d)) d = copysign(0.0, d);
      recalc = true;
    }
    if (recalc) {
      z.re = INFINITY * R(f, R(f, a * c) - R(f, b * d));
      z.im = INFINITY * R(f, R(f, a * d) + R(f, b * c));
    }
  }
  return z;
}

static cplx cdiv(bool f, double a, double b, double c, double d) {
  /* compiler-rt __divsc3 / __divdc3: scale the divisor by 2^-logb(max),
   * then the textbook formula, then Annex G's special cases. */
  int ilogbw = 0;
  double logbw = logb(fmax(fabs(c), fabs(d)));
  if (isfinite(logbw)) {
    ilogbw = (int)logbw;
    c = R(f, scalbn(c, -ilogbw));
    d = R(f, scalbn(d, -ilogbw));
  }
  double denom = R(f, R(f, c * c) + R(f, d * d));
  cplx z;
  z.re = R(f, scalbn(R(f, R(f, R(f, a * c) + R(f, b * d)) / denom), -ilogbw));
  z.im = R(f, scalbn(R(f, R(f, R(f, b * c) - R(f, a * d)) / denom), -ilogbw));
  if (isnan(z.re) && isnan(z.im)) {
    if (denom == 0.0 && (!isnan(a) || !isnan(b))) {
      z.re = copysign(INFINITY, c) * a;
      z.im = copysign(INFINITY, c) * b;
    } else if ((isinf(a) || isinf(b)) && isfinite(c) && isfinite(d)) {
      a = copysign(isinf(a) ? 1.0 : 0.0, a);
      b = copysign(isinf(b) ? 1.0 : 0.0, b);
      z.re = INFINITY * R(f, R(f, a * c) + R(f, b * d));
      z.im = INFINITY * R(f, R(f, b * c) - R(f, a * d));
    } else if (isinf(logbw) && logbw > 0 && isfinite(a) && isfinite(b)) {
      c = copysign(isinf(c) ? 1.0 : 0.0, c);
      d = copysign(isinf(d) ? 1.0 : 0.0, d);
      z.re = 0.0 * R(f, R(f, a * c) + R(f, b * d));
      z.im = 0.0 * R(f, R(f, b * c) - R(f, a * d));
    }
  }
  return z;
}

/* A long double complex result rounded once per component. */
static cplx from_ld(bool f, long double complex z) {
  cplx r = {R(f, (double)creall(z)), R(f, (double)cimagl(z))};
  return r;
}

static bool is_cplx(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_COMPLEX; }

static bool shape_has_complex(const tr_shape *s) {
  if (!s) return false;
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (shape_has_complex(s->elems[i])) return true;
    return false;
  }
  return is_cplx(s->dtype);
}

bool ev_complex_involved(const tr_instr *in) {
  if (shape_has_complex(in->shape)) return true;
  for (int i = 0; i < in->noperands; i++)
    if (shape_has_complex(in->operands[i]->shape)) return true;
  return false;
}

bool ev_module_complex(const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++)
      if (shape_has_complex(m->comps[k]->instrs[i]->shape)) return true;
  return false;
}

/* Elementwise ops XLA's evaluator defines on complex values. */
static bool cplx_unary(tr_op op) {
  switch (op) {
  case TR_OP_ABS: case TR_OP_NEGATE: case TR_OP_SIGN: case TR_OP_EXPONENTIAL:
  case TR_OP_EXPONENTIAL_MINUS_ONE: case TR_OP_LOG: case TR_OP_LOG_PLUS_ONE: case TR_OP_SQRT:
  case TR_OP_RSQRT: case TR_OP_TANH: case TR_OP_LOGISTIC: case TR_OP_SINE: case TR_OP_COSINE:
  case TR_OP_TAN: case TR_OP_REAL: case TR_OP_IMAG:
    return true;
  default: return false;
  }
}

static bool cplx_binary(tr_op op) {
  return op == TR_OP_ADD || op == TR_OP_SUBTRACT || op == TR_OP_MULTIPLY || op == TR_OP_DIVIDE ||
         op == TR_OP_POWER || op == TR_OP_ATAN2 || op == TR_OP_COMPLEX || op == TR_OP_COMPARE;
}

bool ev_complex_ok(tr_op op) {
  /* reduce and map call their computation per element (ev_simple_binary
   * declines complex), so the combiner's own ops decide. */
  return cplx_unary(op) || cplx_binary(op) || op == TR_OP_CONVERT || op == TR_OP_DOT ||
         op == TR_OP_CONVOLUTION || op == TR_OP_REDUCE || op == TR_OP_MAP || op == TR_OP_GATHER ||
         op == TR_OP_SORT || op == TR_OP_REDUCE_WINDOW || op == TR_OP_SCATTER ||
         op == TR_OP_SELECT_AND_SCATTER || op == TR_OP_IOTA || op == TR_OP_CHOLESKY ||
         op == TR_OP_TRIANGULAR_SOLVE || op == TR_OP_BITCAST_CONVERT || op == TR_OP_FFT;
}

/* Element i of t as a complex pair (a real t gives im = 0). */
static cplx get(const tr_tensor *t, size_t i) {
  cplx z = {0, 0};
  if (is_cplx(t->dtype)) tr_tensor_get_c(t, i, &z.re, &z.im);
  else z.re = tr_tensor_get_f(t, i);
  return z;
}

static cplx unary1(tr_op op, bool f, cplx z) {
  long double complex w = (long double)z.re + (long double)z.im * I;
  cplx r = z;
  switch (op) {
  case TR_OP_NEGATE: r.re = -z.re; r.im = -z.im; break;
  case TR_OP_SIGN: {
    /* z / |z|, with |z| rounded first (E: std::complex / its abs), and 0
     * for 0 (notes §14). */
    if (z.re == 0 && z.im == 0) break;
    double m = R(f, hypot(z.re, z.im));
    r.re = R(f, z.re / m);
    r.im = R(f, z.im / m);
    break;
  }
  case TR_OP_EXPONENTIAL: r = from_ld(f, cexpl(w)); break;
  case TR_OP_EXPONENTIAL_MINUS_ONE: r = from_ld(f, cexpl(w) - 1.0L); break;
  case TR_OP_LOG: r = from_ld(f, clogl(w)); break;
  case TR_OP_LOG_PLUS_ONE: r = from_ld(f, clogl(1.0L + w)); break;
  case TR_OP_SQRT: r = from_ld(f, csqrtl(w)); break;
  case TR_OP_RSQRT: r = from_ld(f, 1.0L / csqrtl(w)); break;
  case TR_OP_TANH: r = from_ld(f, ctanhl(w)); break;
  case TR_OP_LOGISTIC: r = from_ld(f, 1.0L / (1.0L + cexpl(-w))); break;
  case TR_OP_SINE: r = from_ld(f, csinl(w)); break;
  case TR_OP_COSINE: r = from_ld(f, ccosl(w)); break;
  case TR_OP_TAN: r = from_ld(f, ctanl(w)); break;
  default: TR_ASSERT(!"not a complex unary op");
  }
  return r;
}

static cplx binary1(tr_op op, bool f, cplx x, cplx y) {
  cplx r = {0, 0};
  switch (op) {
  case TR_OP_ADD: r.re = R(f, x.re + y.re); r.im = R(f, x.im + y.im); break;
  case TR_OP_SUBTRACT: r.re = R(f, x.re - y.re); r.im = R(f, x.im - y.im); break;
  case TR_OP_MULTIPLY: r = cmul(f, x.re, x.im, y.re, y.im); break;
  case TR_OP_DIVIDE: r = cdiv(f, x.re, x.im, y.re, y.im); break;
  case TR_OP_POWER:
    /* E: y == 0 gives 1 first (as for reals, notes §2), else std::pow,
     * here cpowl rounded once per component. */
    if (y.re == 0 && y.im == 0) r.re = 1;
    else
      r = from_ld(f, cpowl((long double)x.re + (long double)x.im * I,
                           (long double)y.re + (long double)y.im * I));
    break;
  case TR_OP_ATAN2: {
    /* E: atan2(y, x) = -i log((x + iy) / sqrt(x^2 + y^2)), every op on
     * the complex type; here in long double, the product by -i written
     * out as E's multiply does it (-i is (-0, -1); times (c, d): re =
     * -0c + d, im = -0d - c, which keeps E's signs of zero: atan2(0, 1)
     * = (0, -0)), rounded once. */
    long double complex ey = (long double)x.re + (long double)x.im * I; /* lhs */
    long double complex ex = (long double)y.re + (long double)y.im * I; /* rhs */
    long double complex L = clogl((ex + I * ey) / csqrtl(ex * ex + ey * ey));
    long double c0 = creall(L), d0 = cimagl(L);
    r.re = R(f, (double)(-0.0L * c0 + d0));
    r.im = R(f, (double)(-0.0L * d0 + -c0));
    break;
  }
  default: TR_ASSERT(!"not a complex binary op");
  }
  return r;
}

tr_status ev_complex_elem(ev_ctx *c, const tr_instr *in, tr_tensor *const *t, tr_tensor **out) {
  tr_op op = in->op;
  const tr_shape *s = in->shape;
  *out = NULL;
  if (op == TR_OP_COMPARE) {
    const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIRECTION);
    const char *dir = da && da->u.s ? da->u.s : "";
    bool ne = strcmp(dir, "NE") == 0;
    /* XLA's shape inference takes any direction, but its evaluator
     * defines EQ and NE only on complex (hlo_evaluator.cc Compare: LOG(FATAL)
     * "unhandled direction"); XLA:CPU orders (re, im) lexicographically.
     * The reference follows the evaluator: no result. */
    if (!ne && strcmp(dir, "EQ") != 0)
      return ev_err(c, in, TR_ERR_UNSUPPORTED,
                    "unsupported: compare of %s values with direction=%s: XLA's evaluator defines "
                    "only EQ and NE on complex", tr_dtype_name(t[0]->dtype), dir);
    tr_tensor *r = ev_new(c, in, TR_DT_PRED, s->rank, s->dims);
    if (!r) return TR_ERR_UNSUPPORTED;
    size_t n = tr_tensor_count(r);
    unsigned char *p = r->data;
    for (size_t i = 0; i < n; i++) {
      cplx x = get(t[0], i), y = get(t[1], i);
      bool eq = x.re == y.re && x.im == y.im; /* NaN: not equal */
      p[i] = ne ? !eq : eq;
    }
    *out = r;
    return TR_OK;
  }
  tr_tensor *r = ev_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t n = tr_tensor_count(r);
  tr_dtype xt = t[0]->dtype;
  bool f = xt == TR_DT_C64 || xt == TR_DT_F32 || s->dtype == TR_DT_C64;
  for (size_t i = 0; i < n; i++) {
    cplx x = get(t[0], i);
    if (op == TR_OP_ABS) {
      tr_tensor_set_f(r, i, R(f, hypot(x.re, x.im))); /* the component type */
    } else if (op == TR_OP_REAL || op == TR_OP_IMAG) {
      /* Of a real operand: the value, or 0 (XLA allows both). */
      tr_tensor_set_f(r, i, op == TR_OP_REAL ? x.re : x.im);
    } else if (op == TR_OP_COMPLEX) {
      tr_tensor_set_c(r, i, x.re, get(t[1], i).re);
    } else if (cplx_unary(op)) {
      cplx z = unary1(op, f, x);
      tr_tensor_set_c(r, i, z.re, z.im);
    } else {
      cplx z = binary1(op, f, x, get(t[1], i));
      tr_tensor_set_c(r, i, z.re, z.im);
    }
  }
  *out = r;
  return TR_OK;
}

tr_tensor *ev_convert_complex(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_dtype dt) {
  if (!is_cplx(dt)) {
    /* ShapeInference::InferConvertShape: "Conversion from complex to real
     * type ... is not implemented" (use real, imag or abs). */
    ev_err(c, in, TR_ERR_INVALID, "convert from %s to %s: XLA does not convert complex to real "
           "(use real, imag or abs)", tr_dtype_name(x->dtype), tr_dtype_name(dt));
    return NULL;
  }
  tr_tensor *r = ev_new(c, in, dt, x->rank, x->dims);
  if (!r) return NULL;
  size_t n = tr_tensor_count(x);
  tr_dtype st = x->dtype;
  for (size_t i = 0; i < n; i++) {
    double re, im = 0;
    if (is_cplx(st)) {
      tr_tensor_get_c(x, i, &re, &im);
    } else if (tr_dtype_is_float(st)) {
      re = tr_tensor_get_f(x, i);
    } else {
      /* static_cast<complex<T>>(int): the int to T, one rounding. */
      bool sg = tr_dtypes[st].kind == TR_DK_SINT;
      int64_t v = tr_tensor_get_i(x, i);
      uint64_t u = tr_tensor_get_u(x, i);
      if (dt == TR_DT_C64) re = sg ? (double)(float)v : (double)(float)u;
      else re = sg ? (double)v : (double)u;
      if (st == TR_DT_PRED) re = v != 0;
    }
    /* set_c rounds each component to the component type once. */
    tr_tensor_set_c(r, i, re, im);
  }
  return r;
}

void ev_complex_dot(const tr_tensor *x, const tr_tensor *y, tr_tensor *r, const int64_t *xb,
                    const int64_t *xm, const int64_t *kx, const int64_t *yb, const int64_t *ky,
                    const int64_t *yn, size_t nb, size_t m, size_t n, size_t nk) {
  /* E's HandleDot on complex64/128: result_val += lhs * rhs, from 0, in
   * the contracting order; each product and sum rounded as above. */
  bool f = r->dtype == TR_DT_C64;
  size_t o = 0;
  for (size_t b = 0; b < nb; b++)
    for (size_t i = 0; i < m; i++)
      for (size_t j = 0; j < n; j++, o++) {
        cplx acc = {0, 0};
        for (size_t k = 0; k < nk; k++) {
          cplx a = get(x, (size_t)(xb[b] + xm[i] + kx[k])), v = get(y, (size_t)(yb[b] + ky[k] + yn[j]));
          cplx p = cmul(f, a.re, a.im, v.re, v.im);
          acc.re = R(f, acc.re + p.re);
          acc.im = R(f, acc.im + p.im);
        }
        tr_tensor_set_c(r, o, acc.re, acc.im);
      }
}

void ev_complex_mac(double *acc, const tr_tensor *x, size_t i, const tr_tensor *y, size_t j) {
  /* E's convolution on complex: result_val += lhs * rhs, as the dot. */
  bool f = x->dtype == TR_DT_C64;
  cplx a = get(x, i), v = get(y, j);
  cplx p = cmul(f, a.re, a.im, v.re, v.im);
  acc[0] = R(f, acc[0] + p.re);
  acc[1] = R(f, acc[1] + p.im);
}
