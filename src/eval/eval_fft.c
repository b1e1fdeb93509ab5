/* eval_fft.c - fft of the exact interpreter: fft_type FFT, IFFT, RFFT and
 * IRFFT over the last len(fft_length) dimensions (1 to 3), XLA's cascade
 * of one-dimensional transforms (docs/SEMANTICS.md): RFFT transforms the
 * innermost axis first and keeps its fft_length/2+1 leading bins, IRFFT
 * transforms the outer axes first (complex to complex) and the innermost
 * one last, complex to real, reading bins 1..n/2 for their conjugate
 * mirror (so the imaginary parts of bin 0 and of the Nyquist bin do not
 * count). Every one-dimensional transform is the DFT summed directly in
 * long double, with each twiddle taken from the exact index product
 * j*k mod n, and the result is rounded to double, then to the output
 * type. The inverse transforms divide by the length. */
#include "evalint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const long double TWO_PI = 6.283185307179586476925286766559005768L;

/* A long double complex work array in row-major order over dims. */
typedef struct {
  int rank;
  int64_t dims[EV_FFT_MAX_RANK + 1]; /* the batch, then the transformed axes */
  size_t n;
  long double *re, *im;
} work;

/* cos and sin of 2 pi m / n: the angle reduced to a quarter turn plus
 * a rest below it, so the multiples of a quarter turn are exact (0, +-1)
 * and the rest is evaluated where cosl and sinl are most accurate. */
static void twiddle(int64_t m, int64_t n, long double *c, long double *s) {
  uint64_t m4 = 4 * (uint64_t)m;
  uint64_t q = m4 / (uint64_t)n, rest = m4 % (uint64_t)n;
  long double t = (TWO_PI / 4) * (long double)rest / (long double)n;
  long double c0 = rest ? cosl(t) : 1, s0 = rest ? sinl(t) : 0;
  switch (q & 3) {
  case 0: *c = c0; *s = s0; break;
  case 1: *c = -s0; *s = c0; break;
  case 2: *c = -c0; *s = -s0; break;
  default: *c = s0; *s = -c0; break;
  }
}

/* One-dimensional DFT along axis a of w: sign -1 forward, +1 inverse
 * (divided by the length). */
static void dft_axis(work *w, int a, int sign) {
  int64_t len = w->dims[a];
  size_t stride = 1;
  for (int i = a + 1; i < w->rank; i++) stride *= (size_t)w->dims[i];
  size_t outer = w->n / ((size_t)len * stride);
  long double *cs = tr_xmalloc(sizeof(long double) * (size_t)len);
  long double *sn = tr_xmalloc(sizeof(long double) * (size_t)len);
  long double *xr = tr_xmalloc(sizeof(long double) * (size_t)len);
  long double *xi = tr_xmalloc(sizeof(long double) * (size_t)len);
  for (int64_t m = 0; m < len; m++) {
    twiddle(m, len, &cs[m], &sn[m]);
    sn[m] *= sign;
  }
  for (size_t o = 0; o < outer; o++)
    for (size_t s = 0; s < stride; s++) {
      size_t base = o * (size_t)len * stride + s;
      for (int64_t j = 0; j < len; j++) {
        xr[j] = w->re[base + (size_t)j * stride];
        xi[j] = w->im[base + (size_t)j * stride];
      }
      for (int64_t k = 0; k < len; k++) {
        long double ar = 0, ai = 0;
        for (int64_t j = 0; j < len; j++) {
          int64_t m = (int64_t)((uint64_t)j * (uint64_t)k % (uint64_t)len);
          ar += xr[j] * cs[m] - xi[j] * sn[m];
          ai += xr[j] * sn[m] + xi[j] * cs[m];
        }
        if (sign > 0) {
          ar /= (long double)len;
          ai /= (long double)len;
        }
        w->re[base + (size_t)k * stride] = ar;
        w->im[base + (size_t)k * stride] = ai;
      }
    }
  tr_free(cs);
  tr_free(sn);
  tr_free(xr);
  tr_free(xi);
}

/* Complex to real along the last axis of w (whose last dim holds bins
 * 0..n/2), into out (n values per line): y_j = (Re Z_0 + sum over
 * 0 < k < n/2 of 2 Re(Z_k e^{2 pi i jk/n}) + (-1)^j Re Z_{n/2}) / n. */
static void c2r_last(const work *w, int64_t n, long double *out) {
  int64_t h = w->dims[w->rank - 1];
  size_t lines = w->n / (size_t)(h ? h : 1);
  long double *cs = tr_xmalloc(sizeof(long double) * (size_t)n);
  long double *sn = tr_xmalloc(sizeof(long double) * (size_t)n);
  for (int64_t m = 0; m < n; m++) twiddle(m, n, &cs[m], &sn[m]);
  for (size_t l = 0; l < lines; l++) {
    const long double *zr = w->re + l * (size_t)h, *zi = w->im + l * (size_t)h;
    for (int64_t j = 0; j < n; j++) {
      long double acc = zr[0];
      for (int64_t k = 1; k < h; k++) {
        int64_t m = (int64_t)((uint64_t)j * (uint64_t)k % (uint64_t)n);
        long double t = zr[k] * cs[m] - zi[k] * sn[m];
        acc += 2 * k == n ? t : 2 * t;
      }
      out[l * (size_t)n + (size_t)j] = acc / (long double)n;
    }
  }
  tr_free(cs);
  tr_free(sn);
}

tr_status ev_fft_spec_of(ev_ctx *c, const tr_instr *in, const tr_shape *x, ev_fft_spec *p) {
  memset(p, 0, sizeof *p);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_FFT_TYPE), *la = tr_instr_attr(in, TR_ATTR_FFT_LENGTH);
  if (!ta || !la || !ta->u.s) return ev_err(c, in, TR_ERR_INVALID, "fft needs fft_type and fft_length");
  const char *t = ta->u.s;
  p->type = strcmp(t, "FFT") == 0 ? EV_FFT_FFT : strcmp(t, "IFFT") == 0 ? EV_FFT_IFFT
          : strcmp(t, "RFFT") == 0 ? EV_FFT_RFFT : strcmp(t, "IRFFT") == 0 ? EV_FFT_IRFFT : -1;
  if (p->type < 0) return ev_err(c, in, TR_ERR_INVALID, "unknown fft_type %s", t);
  p->r = la->n;
  if (p->r < 1 || p->r > EV_FFT_MAX_RANK)
    return ev_err(c, in, TR_ERR_INVALID, "fft_length has %d entries; XLA takes 1 to 3", p->r);
  if (x->rank < p->r)
    return ev_err(c, in, TR_ERR_INVALID, "fft of rank %d needs an operand of at least that rank", p->r);
  for (int i = 0; i < p->r; i++) {
    p->len[i] = la->u.ints[i];
    if (p->len[i] <= 0 || p->len[i] > ((int64_t)1 << 31))
      return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: fft_length entry %lld", (long long)p->len[i]);
  }
  bool cplx = tr_dtypes[x->dtype].kind == TR_DK_COMPLEX;
  const tr_shape *s = in->shape;
  if (p->type == EV_FFT_RFFT ? !(x->dtype == TR_DT_F32 || x->dtype == TR_DT_F64) : !cplx)
    return ev_err(c, in, TR_ERR_INVALID, "fft_type=%s does not take %s", t, tr_dtype_name(x->dtype));
  tr_dtype want = p->type == EV_FFT_RFFT ? (x->dtype == TR_DT_F32 ? TR_DT_C64 : TR_DT_C128)
                : p->type == EV_FFT_IRFFT ? (x->dtype == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64)
                : x->dtype;
  if (s->dtype != want || s->rank != x->rank)
    return ev_err(c, in, TR_ERR_INVALID, "fft_type=%s of %s gives %s[...] of rank %d", t,
                  tr_dtype_name(x->dtype), tr_dtype_name(want), x->rank);
  int lead = x->rank - p->r;
  for (int i = 0; i < x->rank; i++) {
    int64_t xd = x->dims[i], sd = s->dims[i];
    int64_t k = i - lead; /* index into len, or negative */
    bool last = i == x->rank - 1;
    int64_t wx = xd, ws = sd;
    if (k >= 0) {
      int64_t L = p->len[k];
      wx = last && p->type == EV_FFT_IRFFT ? L / 2 + 1 : L;
      ws = last && p->type == EV_FFT_RFFT ? L / 2 + 1 : L;
    }
    if (xd != wx || sd != ws)
      return ev_err(c, in, TR_ERR_UNSUPPORTED,
                    "unsupported: fft dimension %d is %lld in and %lld out; fft_length wants %lld and %lld", i,
                    (long long)xd, (long long)sd, (long long)wx, (long long)ws);
  }
  return TR_OK;
}

tr_status ev_fft(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out) {
  *out = NULL;
  tr_shape xs = {.dtype = x->dtype, .rank = x->rank, .dims = x->dims};
  ev_fft_spec p;
  tr_status st = ev_fft_spec_of(c, in, &xs, &p);
  if (st != TR_OK) return st;
  const tr_shape *s = in->shape;
  /* The work array holds the full complex spectrum of the transformed
   * axes (RFFT: the real input with zero imaginary parts; IRFFT: the
   * input's half spectrum on the last axis). */
  work w = {0};
  /* Leading (batch) dims fold into the first work dim. */
  int lead = x->rank - p.r;
  size_t batch = 1;
  for (int i = 0; i < lead; i++) batch *= (size_t)x->dims[i];
  w.rank = p.r + 1;
  w.dims[0] = (int64_t)batch;
  for (int i = 0; i < p.r; i++) w.dims[i + 1] = x->dims[lead + i];
  w.n = tr_tensor_count(x);
  tr_tensor *r = ev_new(c, in, s->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t m = w.n ? w.n : 1;
  w.re = tr_xcalloc(m, sizeof(long double));
  w.im = tr_xcalloc(m, sizeof(long double));
  for (size_t i = 0; i < w.n; i++) {
    double a = 0, b = 0;
    if (p.type == EV_FFT_RFFT) a = tr_tensor_get_f(x, i);
    else tr_tensor_get_c(x, i, &a, &b);
    w.re[i] = a;
    w.im[i] = b;
  }
  if (p.type == EV_FFT_IRFFT) {
    for (int a = 1; a < p.r; a++) dft_axis(&w, a, +1);
    size_t no = tr_tensor_count(r);
    long double *y = tr_xcalloc(no ? no : 1, sizeof(long double));
    c2r_last(&w, p.len[p.r - 1], y);
    for (size_t i = 0; i < no; i++) tr_tensor_set_f(r, i, (double)y[i]);
    tr_free(y);
  } else {
    int sign = p.type == EV_FFT_IFFT ? +1 : -1;
    for (int a = p.r; a >= 1; a--) dft_axis(&w, a, sign); /* innermost first */
    /* RFFT keeps bins 0..n/2 of the last axis. */
    int64_t full = w.dims[p.r], keep = s->dims[s->rank - 1];
    size_t lines = w.n / (size_t)(full ? full : 1), o = 0;
    for (size_t l = 0; l < lines; l++)
      for (int64_t k = 0; k < keep; k++, o++)
        tr_tensor_set_c(r, o, (double)w.re[l * (size_t)full + (size_t)k],
                        (double)w.im[l * (size_t)full + (size_t)k]);
  }
  tr_free(w.re);
  tr_free(w.im);
  *out = r;
  return TR_OK;
}
