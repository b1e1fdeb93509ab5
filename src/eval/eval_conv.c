/* eval_conv.c - convolution in the exact interpreter, as E computes it
 * (hlo_evaluator_typed_visitor.h:882-1075): operands are converted to the
 * result type; each output element walks the kernel's spatial positions in
 * row-major order and, inside each, the input features of its group,
 * accumulating products in the result type's ElementwiseT (double for f64,
 * float for narrower floats, 64-bit integers for ints). Integer results are
 * then SATURATED to the result type, as E does (CPU wraps).
 *
 * Floats without lhs dilation take a fast path with the same sums: for
 * each run of output features sharing a feature group and a batch group,
 * the output pixels whose whole window lies inside the input are one
 * matrix product (rows: pixels, K: kernel positions then input features,
 * exactly the walking order) on the packed kernels of par.h; the border
 * pixels walk only their valid kernel positions, so skipped taps stay
 * skipped (a zero-padded tap would turn 0 * inf into NaN). Integer types
 * and lhs dilation take the plain loop. */
#include "evalint.h"
#include "par.h"

#include <stdlib.h>
#include <string.h>

#define MAXR TR_TENSOR_MAX_RANK

static bool next_index(int64_t *ix, const int64_t *dims, int rank) {
  for (int d = rank - 1; d >= 0; d--) {
    if (++ix[d] < dims[d]) return true;
    ix[d] = 0;
  }
  return false;
}

/* ---- the float fast path ---- */

typedef float v4f __attribute__((vector_size(16)));
typedef double v2d __attribute__((vector_size(16)));

/* What both the fast path's kernels need to know about one convolution. */
typedef struct {
  int ns;                     /* spatial dims */
  int64_t ind[MAXR], xsp[MAXR]; /* input spatial sizes and x steps */
  const tr_window_dim *win;
  int64_t nout[MAXR];         /* output spatial sizes */
  size_t npix, nkpos;         /* output pixels, kernel positions */
  int64_t *kidx;              /* [nkpos][ns] kernel index per spatial dim */
  int64_t *xk, *wk;           /* x and w offset of each kernel position */
  int64_t *px, *po;           /* per pixel: x base (at kernel index 0), out offset */
} cgeom;

static size_t atleast1(size_t n) { return n ? n : 1; }

/* Whether kernel position kp is inside the input for the pixel whose
 * spatial index is o. */
static bool tap_ok(const cgeom *g, const int64_t *o, size_t kp) {
  for (int i = 0; i < g->ns; i++) {
    const tr_window_dim *w = &g->win[i];
    int64_t k = g->kidx[kp * (size_t)g->ns + (size_t)i];
    int64_t p = o[i] * w->stride - w->pad_lo + k * w->rhs_dilate;
    if (p < 0 || p >= g->ind[i]) return false;
  }
  return true;
}

/* One type's fast path: T the scalar, V its 16-byte vector of VL lanes. */
#define DEFINE_CONV(SUF, T, V, VL)                                                            \
  typedef struct {                                                                             \
    const cgeom *g;                                                                            \
    const T *x, *wp; /* wp: this run's kernel packed [K][nf] */                                \
    T *r;                                                                                      \
    const size_t *edge;                                                                        \
    size_t nedge, cg, nf;                                                                      \
    int64_t xf, xb0, xbs; /* x: group's first feature, batch group base, batch step */       \
    int64_t rb, rf;       /* r: batch step, run's first feature */                             \
    int64_t xfs, rfs;     /* feature steps in x and r */                                       \
  } edge_##SUF;                                                                                \
                                                                                               \
  /* Feature f of a border pixel again, with the NaN rule of par.h. */                       \
  static T nan_tap_##SUF(const edge_##SUF *e, const int64_t *o, const T *xp, size_t f) {        \
    const cgeom *g = e->g;                                                                     \
    size_t n = 0, cap = g->nkpos * e->cg;                                                      \
    int64_t *ak = tr_xmalloc(sizeof(int64_t) * atleast1(cap));                                 \
    int64_t *wk = tr_xmalloc(sizeof(int64_t) * atleast1(cap));                                 \
    for (size_t kp = 0; kp < g->nkpos; kp++)                                                   \
      if (tap_ok(g, o, kp))                                                                    \
        for (size_t ci = 0; ci < e->cg; ci++, n++) {                                           \
          ak[n] = g->xk[kp] + (int64_t)ci * e->xfs;                                            \
          wk[n] = (int64_t)((kp * e->cg + ci) * e->nf + f);                                    \
        }                                                                                      \
    T v = ev_nan_dot_##SUF(xp, ak, e->wp, wk, n);                                              \
    tr_free(ak);                                                                                  \
    tr_free(wk);                                                                                  \
    return v;                                                                                  \
  }                                                                                            \
                                                                                               \
  /* Border pixels [lo, hi) of the (batch, edge pixel) range: only valid taps, in order. */  \
  static void edge_run_##SUF(void *ctx, size_t lo, size_t hi) {                                \
    edge_##SUF *e = ctx;                                                                       \
    const cgeom *g = e->g;                                                                     \
    T *acc = tr_xmalloc(sizeof(T) * (e->nf ? e->nf : 1));                                      \
    for (size_t it = lo; it < hi; it++) {                                                      \
      size_t b = it / e->nedge, p = e->edge[it % e->nedge];                                    \
      int64_t o[MAXR];                                                                         \
      size_t rem = p;                                                                          \
      for (int i = g->ns - 1; i >= 0; i--) {                                                   \
        o[i] = (int64_t)(rem % (size_t)g->nout[i]);                                            \
        rem /= (size_t)g->nout[i];                                                             \
      }                                                                                        \
      for (size_t f = 0; f < e->nf; f++) acc[f] = 0;                                           \
      const T *xp = e->x + e->xb0 + (int64_t)b * e->xbs + g->px[p] + e->xf;                    \
      for (size_t kp = 0; kp < g->nkpos; kp++) {                                               \
        if (!tap_ok(g, o, kp)) continue;                                                       \
        for (size_t ci = 0; ci < e->cg; ci++) {                                                \
          T a = xp[g->xk[kp] + (int64_t)ci * e->xfs];                                          \
          const T *w = e->wp + (kp * e->cg + ci) * e->nf;                                      \
          size_t f = 0;                                                                        \
          V av;                                                                                \
          for (int l = 0; l < (VL); l++) av[l] = a;                                            \
          for (; f + (VL) <= e->nf; f += (VL)) {                                               \
            V wv, cv, pv;                                                                      \
            memcpy(&wv, w + f, sizeof(V));                                                     \
            memcpy(&cv, acc + f, sizeof(V));                                                   \
            pv = av * wv;                                                                      \
            cv = cv + pv;                                                                      \
            memcpy(acc + f, &cv, sizeof(V));                                                   \
          }                                                                                    \
          for (; f < e->nf; f++) {                                                             \
            T pr = a * w[f];                                                                   \
            acc[f] = acc[f] + pr;                                                              \
          }                                                                                    \
        }                                                                                      \
      }                                                                                        \
      for (size_t f = 0; f < e->nf; f++)                                                       \
        if (acc[f] != acc[f]) acc[f] = nan_tap_##SUF(e, o, xp, f);                              \
      T *rp = e->r + (int64_t)b * e->rb + g->po[p] + e->rf;                                    \
      for (size_t f = 0; f < e->nf; f++) rp[(int64_t)f * e->rfs] = acc[f];                     \
    }                                                                                          \
    tr_free(acc);                                                                                 \
  }                                                                                            \
                                                                                               \
  /* Depthwise (one input feature per group): per pixel, the vectors run  \
   * across output features, each lane summing its valid taps in order. */                  \
  typedef struct {                                                                             \
    const cgeom *g;                                                                            \
    const T *x, *w;                                                                            \
    T *r;                                                                                      \
    size_t nf, og;            /* output features, per group */                                 \
    int64_t xbs, xfs, wos;    /* x batch and feature steps, w output-feature step */          \
    int64_t rbs, rfs;         /* r batch and feature steps */                                  \
  } dw_##SUF;                                                                                  \
                                                                                               \
  static void dw_run_##SUF(void *ctx, size_t lo, size_t hi) {                                  \
    dw_##SUF *e = ctx;                                                                         \
    const cgeom *g = e->g;                                                                     \
    size_t nf = e->nf;                                                                         \
    T *acc = tr_xmalloc(sizeof(T) * atleast1(nf));                                             \
    int64_t *taps = tr_xmalloc(sizeof(int64_t) * atleast1(g->nkpos));                          \
    bool flat = e->og == 1 && e->xfs == 1 && e->wos == 1;                                      \
    for (size_t it = lo; it < hi; it++) {                                                      \
      size_t b = it / g->npix, p = it % g->npix, nt = 0;                                       \
      int64_t o[MAXR];                                                                         \
      size_t rem = p;                                                                          \
      for (int i = g->ns - 1; i >= 0; i--) {                                                   \
        o[i] = (int64_t)(rem % (size_t)g->nout[i]);                                            \
        rem /= (size_t)g->nout[i];                                                             \
      }                                                                                        \
      for (size_t kp = 0; kp < g->nkpos; kp++)                                                 \
        if (tap_ok(g, o, kp)) taps[nt++] = (int64_t)kp;                                        \
      const T *xp = e->x + (int64_t)b * e->xbs + g->px[p];                                     \
      for (size_t f = 0; f < nf; f++) acc[f] = 0;                                              \
      for (size_t t = 0; t < nt; t++) {                                                        \
        const T *xr = xp + g->xk[taps[t]], *wr = e->w + g->wk[taps[t]];                        \
        size_t f = 0;                                                                          \
        if (flat)                                                                              \
          for (; f + (VL) <= nf; f += (VL)) {                                                  \
            V xv, wv, cv, pv;                                                                  \
            memcpy(&xv, xr + f, sizeof(V));                                                    \
            memcpy(&wv, wr + f, sizeof(V));                                                    \
            memcpy(&cv, acc + f, sizeof(V));                                                   \
            pv = xv * wv;                                                                      \
            cv = cv + pv;                                                                      \
            memcpy(acc + f, &cv, sizeof(V));                                                   \
          }                                                                                    \
        for (; f < nf; f++) {                                                                  \
          T pr = xr[(int64_t)(f / e->og) * e->xfs] * wr[(int64_t)f * e->wos];                  \
          acc[f] = acc[f] + pr;                                                                \
        }                                                                                      \
      }                                                                                        \
      for (size_t f = 0; f < nf; f++)                                                          \
        if (acc[f] != acc[f]) {                                                                \
          int64_t *ak = tr_xmalloc(sizeof(int64_t) * atleast1(nt));                            \
          int64_t *wk = tr_xmalloc(sizeof(int64_t) * atleast1(nt));                            \
          for (size_t t = 0; t < nt; t++) {                                                    \
            ak[t] = g->xk[taps[t]] + (int64_t)(f / e->og) * e->xfs;                            \
            wk[t] = g->wk[taps[t]] + (int64_t)f * e->wos;                                      \
          }                                                                                    \
          acc[f] = ev_nan_dot_##SUF(xp, ak, e->w, wk, nt);                                     \
          tr_free(ak);                                                                            \
          tr_free(wk);                                                                            \
        }                                                                                      \
      T *rp = e->r + (int64_t)b * e->rbs + g->po[p];                                           \
      for (size_t f = 0; f < nf; f++) rp[(int64_t)f * e->rfs] = acc[f];                        \
    }                                                                                          \
    tr_free(acc);                                                                                 \
    tr_free(taps);                                                                                \
  }                                                                                            \
                                                                                               \
  /* Output features [f0, f1): one feature group fg and batch group bgi. */                  \
  static void conv_run_##SUF(mm_fn_##SUF mm, const cgeom *g, const T *x, const T *w, T *r,     \
                             const size_t *inner, size_t ninner, const size_t *edge,           \
                             size_t nedge, size_t nbo,                                         \
                             int64_t xbs, int64_t xb0, int64_t xfs, int64_t xf, size_t cg,    \
                             int64_t wis, int64_t wos, int64_t rbs, int64_t rfs, size_t f0,    \
                             size_t f1) {                                                      \
    size_t nf = f1 - f0, K = g->nkpos * cg;                                                    \
    int64_t *ak = tr_xmalloc(sizeof(int64_t) * (K ? K : 1));                                   \
    int64_t *bk = tr_xmalloc(sizeof(int64_t) * (K ? K : 1));                                   \
    int64_t *bj = tr_xmalloc(sizeof(int64_t) * (nf ? nf : 1));                                 \
    int64_t *ab = tr_xmalloc(sizeof(int64_t) * (nbo ? nbo : 1));                               \
    int64_t *ai = tr_xmalloc(sizeof(int64_t) * (ninner ? ninner : 1));                         \
    for (size_t kp = 0; kp < g->nkpos; kp++)                                                   \
      for (size_t ci = 0; ci < cg; ci++) {                                                     \
        ak[kp * cg + ci] = g->xk[kp] + xf + (int64_t)ci * xfs;                                 \
        bk[kp * cg + ci] = g->wk[kp] + (int64_t)ci * wis;                                      \
      }                                                                                        \
    for (size_t f = 0; f < nf; f++) bj[f] = (int64_t)(f0 + f) * wos;                           \
    for (size_t b = 0; b < nbo; b++) ab[b] = xb0 + (int64_t)b * xbs;                           \
    for (size_t i = 0; i < ninner; i++) ai[i] = g->px[inner[i]];                               \
    double work = (double)nbo * (double)g->npix * (double)nf * (double)K;                     \
    int threads = ev_par_threads(work);                                                        \
    if (ninner) {                                                                              \
      /* The bb table only needs one entry per batch: the kernel is shared. */                \
      int64_t *bb = tr_xcalloc(nbo ? nbo : 1, sizeof(int64_t));                                \
      T *cm = tr_xmalloc(sizeof(T) * atleast1(nbo * ninner * nf));             \
      mm(x, ab, ai, ak, w, bb, bk, bj, cm, nbo, ninner, nf, K, threads);                       \
      for (size_t b = 0; b < nbo; b++)                                                         \
        for (size_t i = 0; i < ninner; i++) {                                                  \
          T *rp = r + (int64_t)b * rbs + g->po[inner[i]] + (int64_t)f0 * rfs;                  \
          const T *cp = cm + (b * ninner + i) * nf;                                            \
          for (size_t f = 0; f < nf; f++) rp[(int64_t)f * rfs] = cp[f];                        \
        }                                                                                      \
      tr_free(bb);                                                                                \
      tr_free(cm);                                                                                \
    }                                                                                          \
    if (nedge) {                                                                               \
      T *wp = tr_xmalloc(sizeof(T) * atleast1(K * nf));                                   \
      for (size_t kk = 0; kk < K; kk++)                                                        \
        for (size_t f = 0; f < nf; f++) wp[kk * nf + f] = w[bk[kk] + bj[f]];                   \
      edge_##SUF e = {g, x, wp, r, edge, nedge, cg, nf, xf, xb0, xbs, rbs,                     \
                      (int64_t)f0 * rfs, xfs, rfs};                                            \
      ev_par_for(threads, nbo * nedge, edge_run_##SUF, &e);                                    \
      tr_free(wp);                                                                                \
    }                                                                                          \
    tr_free(ak);                                                                                  \
    tr_free(bk);                                                                                  \
    tr_free(bj);                                                                                  \
    tr_free(ab);                                                                                  \
    tr_free(ai);                                                                                  \
  }

/* ev_mm_* or ev_mm_*_any (par.h) */
typedef ev_mm_f32_fn *mm_fn_f32;
typedef ev_mm_f64_fn *mm_fn_f64;

DEFINE_CONV(f32, float, v4f, 4)
DEFINE_CONV(f64, double, v2d, 2)

/* The fast path on float operands already converted to the result type;
 * false when it does not apply (lhs dilation, or a type it does not
 * take), and then nothing was written. */
static bool conv_fast(const tr_convdims *cd, const tr_window_dim *win,
                      int64_t G, int64_t B, const tr_tensor *x, const tr_tensor *y, tr_tensor *r,
                      bool fused) {
  tr_dtype dt = r->dtype;
  int ns = cd->nspatial;
  if (!tr_dtype_is_float(dt) || (dt != TR_DT_F64 && tr_dtypes[dt].bits > 32)) return false;
  for (int i = 0; i < ns; i++)
    if (win[i].lhs_dilate != 1 || win[i].size <= 0) return false;
  int64_t xs[MAXR], ys[MAXR], rs[MAXR];
  ev_strides(x->dims, x->rank, xs);
  ev_strides(y->dims, y->rank, ys);
  ev_strides(r->dims, r->rank, rs);
  int64_t N = x->dims[cd->in_batch], C = x->dims[cd->in_feature], O = y->dims[cd->k_out];
  if (G <= 0 || B <= 0) return false;
  int64_t Cg = C / G, Og = O / G, Ob = O / B, Nb = N / B;
  cgeom g;
  memset(&g, 0, sizeof g);
  g.ns = ns;
  g.win = win;
  g.npix = 1;
  g.nkpos = 1;
  for (int i = 0; i < ns; i++) {
    g.ind[i] = x->dims[cd->in_spatial[i]];
    g.xsp[i] = xs[cd->in_spatial[i]];
    g.nout[i] = r->dims[cd->out_spatial[i]];
    g.npix *= (size_t)g.nout[i];
    g.nkpos *= (size_t)win[i].size;
  }
  size_t nbo = (size_t)r->dims[cd->out_batch];
  if (g.npix == 0 || nbo == 0 || O == 0) return true; /* nothing to write */
  g.kidx = tr_xmalloc(sizeof(int64_t) * g.nkpos * (size_t)(ns ? ns : 1));
  g.xk = tr_xmalloc(sizeof(int64_t) * g.nkpos);
  g.wk = tr_xmalloc(sizeof(int64_t) * g.nkpos);
  for (size_t kp = 0; kp < g.nkpos; kp++) {
    size_t rem = kp;
    g.xk[kp] = g.wk[kp] = 0;
    for (int i = ns - 1; i >= 0; i--) {
      int64_t k = (int64_t)(rem % (size_t)win[i].size);
      rem /= (size_t)win[i].size;
      g.kidx[kp * (size_t)ns + (size_t)i] = k;
      g.xk[kp] += k * win[i].rhs_dilate * g.xsp[i];
      g.wk[kp] += (win[i].reversal ? win[i].size - 1 - k : k) * ys[cd->k_spatial[i]];
    }
  }
  /* Pixels: x base at kernel index 0, output offset, and inner or border. */
  g.px = tr_xmalloc(sizeof(int64_t) * g.npix);
  g.po = tr_xmalloc(sizeof(int64_t) * g.npix);
  size_t *inner = tr_xmalloc(sizeof(size_t) * g.npix), *edge = tr_xmalloc(sizeof(size_t) * g.npix);
  size_t ninner = 0, nedge = 0;
  for (size_t p = 0; p < g.npix; p++) {
    size_t rem = p;
    bool ok = true;
    g.px[p] = g.po[p] = 0;
    for (int i = ns - 1; i >= 0; i--) {
      int64_t o = (int64_t)(rem % (size_t)g.nout[i]);
      rem /= (size_t)g.nout[i];
      int64_t first = o * win[i].stride - win[i].pad_lo;
      int64_t last = first + (win[i].size - 1) * win[i].rhs_dilate;
      ok &= first >= 0 && last < g.ind[i];
      g.px[p] += first * g.xsp[i];
      g.po[p] += o * rs[cd->out_spatial[i]];
    }
    if (ok) inner[ninner++] = p;
    else edge[nedge++] = p;
  }
  /* Runs of output features with the same feature group and batch group. */
  size_t nx = tr_tensor_count(x), ny = tr_tensor_count(y), nr = tr_tensor_count(r);
  float *fx = NULL, *fy = NULL, *fr = NULL;
  if (dt != TR_DT_F64 && dt != TR_DT_F32) {
    size_t most = nx > ny ? nx : ny;
    double *d = tr_xmalloc(sizeof(double) * (most > nr ? most : nr));
    fx = tr_xmalloc(sizeof(float) * nx);
    fy = tr_xmalloc(sizeof(float) * ny);
    fr = tr_xcalloc(nr, sizeof(float));
    ev_load_flts(x, d);
    for (size_t i = 0; i < nx; i++) fx[i] = (float)d[i];
    ev_load_flts(y, d);
    for (size_t i = 0; i < ny; i++) fy[i] = (float)d[i];
    tr_free(d);
  }
  if (Cg == 1 && G > 1 && B == 1) {
    /* Depthwise: one pass over the pixels for all groups. */
    double work = (double)nbo * (double)g.npix * (double)O * (double)g.nkpos;
    int threads = ev_par_threads(work);
    if (dt == TR_DT_F64) {
      dw_f64 e = {&g, x->data, y->data, r->data, (size_t)O, (size_t)Og, xs[cd->in_batch],
                  xs[cd->in_feature], ys[cd->k_out], rs[cd->out_batch], rs[cd->out_feature]};
      ev_par_for(threads, nbo * g.npix, dw_run_f64, &e);
    } else {
      dw_f32 e = {&g, fx ? fx : x->data, fy ? fy : y->data, fr ? fr : r->data, (size_t)O,
                  (size_t)Og, xs[cd->in_batch], xs[cd->in_feature], ys[cd->k_out],
                  rs[cd->out_batch], rs[cd->out_feature]};
      ev_par_for(threads, nbo * g.npix, dw_run_f32, &e);
    }
  }
  for (int64_t f0 = 0; f0 < O && !(Cg == 1 && G > 1 && B == 1);) {
    int64_t fg = Og ? f0 / Og : 0, bgi = Ob ? f0 / Ob : 0;
    int64_t f1 = O;
    if (Og && (fg + 1) * Og < f1) f1 = (fg + 1) * Og;
    if (Ob && (bgi + 1) * Ob < f1) f1 = (bgi + 1) * Ob;
    int64_t xb0 = bgi * Nb * xs[cd->in_batch], xf = fg * Cg * xs[cd->in_feature];
    if (dt == TR_DT_F64)
      conv_run_f64(fused ? ev_mm_f64_any : ev_mm_f64, &g, x->data, y->data, r->data, inner, ninner,
                   edge, nedge, nbo, xs[cd->in_batch], xb0, xs[cd->in_feature], xf, (size_t)Cg,
                   ys[cd->k_in], ys[cd->k_out], rs[cd->out_batch], rs[cd->out_feature], (size_t)f0,
                   (size_t)f1);
    else
      conv_run_f32(fused ? ev_mm_f32_any : ev_mm_f32, &g, fx ? fx : x->data, fy ? fy : y->data,
                   fr ? fr : r->data, inner, ninner, edge, nedge, nbo, xs[cd->in_batch], xb0,
                   xs[cd->in_feature], xf, (size_t)Cg, ys[cd->k_in], ys[cd->k_out], rs[cd->out_batch],
                   rs[cd->out_feature], (size_t)f0, (size_t)f1);
    f0 = f1;
  }
  if (fr) {
    double *d = tr_xmalloc(sizeof(double) * nr);
    for (size_t i = 0; i < nr; i++) d[i] = fr[i];
    ev_store_flts(r, d); /* rounds once to dt, as the plain loop does */
    tr_free(d);
  }
  tr_free(fx);
  tr_free(fy);
  tr_free(fr);
  tr_free(g.kidx);
  tr_free(g.xk);
  tr_free(g.wk);
  tr_free(g.px);
  tr_free(g.po);
  tr_free(inner);
  tr_free(edge);
  return true;
}

tr_status ev_convolution(ev_ctx *c, const tr_instr *in, const tr_tensor *x0, const tr_tensor *y0,
                         tr_tensor **out) {
  const tr_shape *s = in->shape;
  const tr_attr *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS), *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  const tr_attr *fa = tr_instr_attr(in, TR_ATTR_FEATURE_GROUP_COUNT);
  const tr_attr *ba = tr_instr_attr(in, TR_ATTR_BATCH_GROUP_COUNT);
  if (!dl || !dl->u.conv) return ev_err(c, in, TR_ERR_INVALID, "convolution needs dim_labels");
  const tr_convdims *cd = dl->u.conv;
  int ns = cd->nspatial;
  if (ns + 2 > MAXR || (ns > 0 && (!wa || wa->n != ns)))
    return ev_err(c, in, TR_ERR_INVALID, "malformed convolution window");
  const tr_window_dim *win = ns > 0 ? wa->u.win : NULL;
  int64_t G = fa ? fa->u.i : 1, B = ba ? ba->u.i : 1;
  tr_dtype dt = s->dtype;
  tr_tensor *x = ev_convert_to(c, in, x0, dt);
  tr_tensor *y = x ? ev_convert_to(c, in, y0, dt) : NULL;
  tr_tensor *r = y ? ev_new(c, in, dt, s->rank, s->dims) : NULL;
  if (!r) {
    tr_tensor_free(x);
    tr_tensor_free(y);
    return TR_ERR_UNSUPPORTED;
  }
  if (conv_fast(cd, win, G, B, x, y, r, c->fused)) {
    tr_tensor_free(x);
    tr_tensor_free(y);
    *out = r;
    return TR_OK;
  }
  int64_t xs[MAXR], ys[MAXR], wsize[MAXR];
  ev_strides(x->dims, x->rank, xs);
  ev_strides(y->dims, y->rank, ys);
  for (int i = 0; i < ns; i++) wsize[i] = win[i].size;
  int64_t N = x->dims[cd->in_batch], C = x->dims[cd->in_feature], O = y->dims[cd->k_out];
  int64_t Cg = G > 0 ? C / G : 0, Og = G > 0 ? O / G : 0, Ob = B > 0 ? O / B : 0, Nb = B > 0 ? N / B : 0;
  size_t nx = tr_tensor_count(x), ny = tr_tensor_count(y), nr = tr_tensor_count(r);
  bool flt = tr_dtype_is_float(dt), cplx = tr_dtypes[dt].kind == TR_DK_COMPLEX;
  double *fx = NULL, *fy = NULL, *fr = NULL;
  uint64_t *ix = NULL, *iy = NULL, *ir = NULL;
  if (cplx) {
    /* Complex: read in place by ev_complex_mac (eval_complex.c). */
  } else if (flt) {
    fx = tr_xmalloc(sizeof(double) * (nx ? nx : 1));
    fy = tr_xmalloc(sizeof(double) * (ny ? ny : 1));
    fr = tr_xmalloc(sizeof(double) * (nr ? nr : 1));
    ev_load_flts(x, fx);
    ev_load_flts(y, fy);
  } else {
    ix = tr_xmalloc(sizeof(uint64_t) * (nx ? nx : 1));
    iy = tr_xmalloc(sizeof(uint64_t) * (ny ? ny : 1));
    ir = tr_xmalloc(sizeof(uint64_t) * (nr ? nr : 1));
    ev_load_ints(x, ix);
    ev_load_ints(y, iy);
  }
  bool sg = tr_dtypes[dt].kind == TR_DK_SINT;
  bool empty_window = false;
  for (int i = 0; i < ns; i++) empty_window |= wsize[i] <= 0;
  int64_t o[MAXR] = {0}, k[MAXR];
  for (size_t q = 0; q < nr; q++, next_index(o, r->dims, r->rank)) {
    int64_t ob = o[cd->out_batch], of = o[cd->out_feature];
    int64_t fg = Og ? of / Og : 0, bgi = Ob ? of / Ob : 0;
    int64_t xbase = (ob + bgi * Nb) * xs[cd->in_batch], ybase = of * ys[cd->k_out];
    double dacc = 0, cacc[2] = {0, 0};
    float facc = 0;
    uint64_t iacc = 0;
    memset(k, 0, sizeof k);
    if (!empty_window) do {
      int64_t xo = xbase, yo = ybase;
      bool skip = false;
      for (int i = 0; i < ns && !skip; i++) {
        const tr_window_dim *w = &win[i];
        int64_t p = o[cd->out_spatial[i]] * w->stride - w->pad_lo + k[i] * w->rhs_dilate;
        if (w->lhs_dilate > 1) {
          if (p % w->lhs_dilate) {
            skip = true;
            break;
          }
          p /= w->lhs_dilate;
        }
        if (p < 0 || p >= x->dims[cd->in_spatial[i]]) {
          skip = true;
          break;
        }
        xo += p * xs[cd->in_spatial[i]];
        yo += (w->reversal ? w->size - 1 - k[i] : k[i]) * ys[cd->k_spatial[i]];
      }
      if (skip) continue;
      for (int64_t j = 0; j < Cg; j++) {
        int64_t xi = xo + (fg * Cg + j) * xs[cd->in_feature], yi = yo + j * ys[cd->k_in];
        /* NaNs with the rule of par.h, whatever order the compiler picks. */
        if (cplx) {
          ev_complex_mac(cacc, x, (size_t)xi, y, (size_t)yi);
        } else if (dt == TR_DT_F64) {
          double a = fx[xi], b = fy[yi];
          double p = a != a ? ev_quiet_f64(a) : b != b ? ev_quiet_f64(b) : a * b;
          dacc = dacc != dacc ? dacc : p != p ? p : dacc + p;
        } else if (flt) {
          float a = (float)fx[xi], b = (float)fy[yi];
          float p = a != a ? ev_quiet_f32(a) : b != b ? ev_quiet_f32(b) : a * b;
          facc = facc != facc ? facc : p != p ? p : facc + p;
        } else if (dt == TR_DT_PRED) {
          iacc |= ix[xi] & iy[yi];
        } else {
          iacc += ix[xi] * iy[yi];
        }
      }
    } while (next_index(k, wsize, ns));
    if (cplx) tr_tensor_set_c(r, q, cacc[0], cacc[1]);
    else if (dt == TR_DT_F64) fr[q] = dacc;
    else if (flt) fr[q] = facc;
    else if (dt == TR_DT_PRED || tr_dtypes[dt].bits >= 64) ir[q] = iacc;
    else if (sg) {
      int64_t v = (int64_t)iacc, lo = tr_int_min(dt), hi = (int64_t)tr_int_max(dt);
      ir[q] = (uint64_t)(v < lo ? lo : v > hi ? hi : v);
    } else {
      uint64_t hi = tr_int_max(dt);
      ir[q] = iacc > hi ? hi : iacc;
    }
  }
  if (flt) ev_store_flts(r, fr);
  else if (!cplx) ev_store_ints(r, ir);
  tr_free(fx);
  tr_free(fy);
  tr_free(fr);
  tr_free(ix);
  tr_free(iy);
  tr_free(ir);
  tr_tensor_free(x);
  tr_tensor_free(y);
  *out = r;
  return TR_OK;
}
