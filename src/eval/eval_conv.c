/* eval_conv.c - convolution in the exact interpreter, as E computes it
 * (hlo_evaluator_typed_visitor.h:882-1075): operands are converted to the
 * result type; each output element walks the kernel's spatial positions in
 * row-major order and, inside each, the input features of its group,
 * accumulating products in the result type's ElementwiseT (double for f64,
 * float for narrower floats, 64-bit integers for ints). Integer results are
 * then SATURATED to the result type, as E does (CPU wraps). */
#include "evalint.h"

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
  int64_t xs[MAXR], ys[MAXR], wsize[MAXR];
  ev_strides(x->dims, x->rank, xs);
  ev_strides(y->dims, y->rank, ys);
  for (int i = 0; i < ns; i++) wsize[i] = win[i].size;
  int64_t N = x->dims[cd->in_batch], C = x->dims[cd->in_feature], O = y->dims[cd->k_out];
  int64_t Cg = G > 0 ? C / G : 0, Og = G > 0 ? O / G : 0, Ob = B > 0 ? O / B : 0, Nb = B > 0 ? N / B : 0;
  size_t nx = tr_tensor_count(x), ny = tr_tensor_count(y), nr = tr_tensor_count(r);
  bool flt = tr_dtype_is_float(dt);
  double *fx = NULL, *fy = NULL, *fr = NULL;
  uint64_t *ix = NULL, *iy = NULL, *ir = NULL;
  if (flt) {
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
    double dacc = 0;
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
        if (dt == TR_DT_F64) {
          double p = fx[xi] * fy[yi];
          dacc = dacc + p;
        } else if (flt) {
          float p = (float)fx[xi] * (float)fy[yi];
          facc = facc + p;
        } else if (dt == TR_DT_PRED) {
          iacc |= ix[xi] & iy[yi];
        } else {
          iacc += ix[xi] * iy[yi];
        }
      }
    } while (next_index(k, wsize, ns));
    if (dt == TR_DT_F64) fr[q] = dacc;
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
  else ev_store_ints(r, ir);
  free(fx);
  free(fy);
  free(fr);
  free(ix);
  free(iy);
  free(ir);
  tr_tensor_free(x);
  tr_tensor_free(y);
  *out = r;
  return TR_OK;
}
