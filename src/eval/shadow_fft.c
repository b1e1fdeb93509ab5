/* shadow_fft.c - shadow rule of fft (docs/ORACLE.md, "FFT"). The value is
 * the exact transform (eval_fft.c) of the operand's values; the bound is
 * derived from the arithmetic of the algorithms a compiler uses, mixed
 * radix Cooley-Tukey FFTs whose radix-p step is a direct p-point sum:
 *
 * An output of a length-n transform with n = p1 p2 ... pm (primes) is
 * formed through m steps; in step i each value is a sum of p_i terms,
 * each an earlier value times a twiddle of modulus 1. With u the unit
 * roundoff, a complex product by a twiddle computed to within 2u errs by
 * at most (2 sqrt(2) + 2) u < 5u relative, twice per step (the radix-p
 * sum's own roots and the inter-step twiddle), and the p - 1 additions by
 * (p - 1) u of the sum of the terms' moduli; so a step's error is within
 * eta_p = (p + 9) u of the moduli it adds up, and by induction over the
 * steps |computed - exact| <= (prod_i (1 + eta_p_i) - 1) * S, where S is
 * the sum of the input moduli the output depends on (every input of its
 * transformed hyperplane: twiddles have modulus 1). Several axes multiply
 * their factors; real transforms (RFFT, IRFFT) add one pre- or
 * post-processing step (eta_4); inverse transforms divide the bound by
 * the length and add the scaling's rounding. Input bounds propagate
 * linearly (sum of the hyperplane's bounds, sqrt(2) for complex moduli).
 * Lengths with a prime factor above 64 may be computed by Bluestein's or
 * Rader's algorithm, which this derivation does not cover: their results
 * are uncertain, as are hyperplanes with an uncertain or non-finite
 * input. */
#include "shadowint.h"

#include <math.h>
#include <string.h>

#define FFT_MAX_PRIME 64

/* prod (1 + (p + 9) u) - 1 over the prime factors p of n (into *g as the
 * product); false when a factor is above FFT_MAX_PRIME. */
static bool grow(int64_t n, long double u, long double *g) {
  for (int64_t p = 2; n > 1; p++) {
    if (p * p > n) p = n; /* n itself is prime */
    while (n % p == 0) {
      if (p > FFT_MAX_PRIME) return false;
      *g *= 1 + (long double)(p + 9) * u;
      n /= p;
    }
  }
  return true;
}

static double up(long double x) {
  double d = (double)x;
  if ((long double)d < x) d = nextafter(d, INFINITY);
  return d;
}

tr_status sh_fft(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  *out = NULL;
  if (in->noperands != 1 || !sh_is_arr(ops[0])) return ev_err(&c->ev, in, TR_ERR_INVALID, "fft needs one array operand");
  sh_val *x = ops[0];
  sh_materialize(c, x);
  tr_shape xs = {.dtype = x->dt, .rank = x->rank, .dims = x->dims};
  ev_fft_spec p;
  tr_status st = ev_fft_spec_of(&c->ev, in, &xs, &p);
  if (st != TR_OK) return st;
  tr_tensor *xt = sh_round_tensor(c, in, x), *r = NULL;
  if (!xt) return TR_ERR_UNSUPPORTED;
  st = ev_fft(&c->ev, in, xt, &r);
  tr_tensor_free(xt);
  if (st != TR_OK) return st;
  sh_val *o = NULL;
  st = sh_from_tensor(c, in, r, true, &o);
  tr_tensor_free(r);
  if (st != TR_OK) return st;

  bool cin = tr_dtypes[x->dt].kind == TR_DK_COMPLEX, cout = tr_dtypes[o->dt].kind == TR_DK_COMPLEX;
  bool wide = x->dt == TR_DT_F64 || x->dt == TR_DT_C128;
  long double u = wide ? ldexpl(1, -53) : ldexpl(1, -24);
  long double g = 1, total = 1;
  bool covered = true;
  for (int i = 0; i < p.r; i++) {
    covered = covered && grow(p.len[i], u, &g);
    total *= (long double)p.len[i];
  }
  if (p.type == EV_FFT_RFFT || p.type == EV_FFT_IRFFT) g *= 1 + 13 * u;
  long double F = g - 1;
  bool inverse = p.type == EV_FFT_IFFT || p.type == EV_FFT_IRFFT;
  /* The reference's own sum in long double and its roundings. */
  long double own = total * ldexpl(1, -62);

  size_t per_in = 1, per_out = 1;
  for (int i = x->rank - p.r; i < x->rank; i++) {
    per_in *= (size_t)x->dims[i];
    per_out *= (size_t)o->dims[i];
  }
  size_t batches = per_in ? x->n / per_in : 0;
  for (size_t b = 0; b < batches; b++) {
    long double S = 0, E = 0;
    bool unsure = !covered;
    for (size_t j = 0; j < per_in; j++) {
      size_t i = b * per_in + j;
      long double mag, e = x->e ? x->e[i] : 0;
      if (cin) {
        double re, im;
        tr_tensor_get_c(x->t, i, &re, &im);
        mag = hypotl(re, im);
        e *= 1.4142135623730951L;
      } else {
        mag = fabsl(sh_get(x, i));
      }
      /* IRFFT counts the mirrored bins twice. */
      long double wgt = 1;
      if (p.type == EV_FFT_IRFFT) {
        int64_t k = (int64_t)(j % (size_t)x->dims[x->rank - 1]);
        wgt = k == 0 || 2 * k == p.len[p.r - 1] ? 1 : 2;
      }
      S += wgt * (mag + e);
      E += wgt * e;
      unsure = unsure || x->u[i] || !isfinite(mag) || !isfinite(e);
    }
    for (size_t k = 0; k < per_out; k++) {
      size_t i = b * per_out + k;
      long double y;
      if (cout) {
        double re, im;
        tr_tensor_get_c(o->t, i, &re, &im);
        y = fabsl((long double)re) + fabsl((long double)im);
      } else {
        y = fabsl(sh_get(o, i));
      }
      long double bound = F * S + E + own * S;
      if (inverse) bound = bound / total + 2 * u * y;
      bound += u * y; /* the result's rounding to its type */
      o->e[i] = up(bound);
      o->u[i] = unsure || !isfinite(y) || !isfinite(bound);
    }
  }
  *out = o;
  return TR_OK;
}
