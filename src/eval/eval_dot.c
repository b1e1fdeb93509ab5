/* eval_dot.c - dot (dot_general) in the exact interpreter, as XLA's
 * HloEvaluator computes it (hlo_evaluator_typed_visitor.h HandleDot): both
 * operands are first converted to the result type; each output element
 * accumulates its products in that type's ElementwiseT (double for f64,
 * float for f32 and every narrower float, wrapping 64-bit integers for ints,
 * OR of ANDs for pred), walking the contracting dimensions in row-major
 * order with the last one fastest, and rounds once at the end. Products
 * and sums are separate statements so no compiler fuses them into FMAs. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

static const int64_t *dims_attr(const tr_instr *in, tr_attr_key k, int *n) {
  const tr_attr *at = tr_instr_attr(in, k);
  *n = at ? at->n : 0;
  return at ? at->u.ints : NULL;
}

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

tr_status ev_dot(ev_ctx *c, const tr_instr *in, const tr_tensor *x0, const tr_tensor *y0,
                 tr_tensor **out) {
  const tr_shape *s = in->shape;
  tr_dtype dt = s->dtype;
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = dims_attr(in, TR_ATTR_LHS_BATCH_DIMS, &nlb);
  const int64_t *lc = dims_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = dims_attr(in, TR_ATTR_RHS_BATCH_DIMS, &nrb);
  const int64_t *rc = dims_attr(in, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  if (x0->rank > TR_TENSOR_MAX_RANK || y0->rank > TR_TENSOR_MAX_RANK || s->rank > TR_TENSOR_MAX_RANK)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", TR_TENSOR_MAX_RANK);
  tr_tensor *x = ev_convert_to(c, in, x0, dt);
  tr_tensor *y = x ? ev_convert_to(c, in, y0, dt) : NULL;
  tr_tensor *r = y ? ev_new(c, in, dt, s->rank, s->dims) : NULL;
  if (!r) {
    tr_tensor_free(x);
    tr_tensor_free(y);
    return TR_ERR_UNSUPPORTED;
  }
  int64_t xst[TR_TENSOR_MAX_RANK], yst[TR_TENSOR_MAX_RANK];
  ev_strides(x->dims, x->rank, xst);
  ev_strides(y->dims, y->rank, yst);
  /* Result dims: batch, lhs free, rhs free; each with its step in x and y. */
  int64_t odim[TR_TENSOR_MAX_RANK], ox[TR_TENSOR_MAX_RANK], oy[TR_TENSOR_MAX_RANK];
  int no = 0;
  for (int i = 0; i < nlb; i++, no++) {
    odim[no] = x->dims[lb[i]];
    ox[no] = xst[lb[i]];
    oy[no] = yst[rb[i]];
  }
  for (int i = 0; i < x->rank; i++)
    if (!has(lb, nlb, i) && !has(lc, nlc, i)) {
      odim[no] = x->dims[i];
      ox[no] = xst[i];
      oy[no++] = 0;
    }
  for (int i = 0; i < y->rank; i++)
    if (!has(rb, nrb, i) && !has(rc, nrc, i)) {
      odim[no] = y->dims[i];
      ox[no] = 0;
      oy[no++] = yst[i];
    }
  TR_ASSERT(no == s->rank);
  /* Offsets of every contraction step, in walking order. */
  size_t nk = 1;
  for (int i = 0; i < nlc; i++) nk *= (size_t)x->dims[lc[i]];
  int64_t *kx = tr_xmalloc(sizeof(int64_t) * (nk ? nk : 1));
  int64_t *ky = tr_xmalloc(sizeof(int64_t) * (nk ? nk : 1));
  for (size_t k = 0; k < nk; k++) {
    size_t rem = k;
    kx[k] = ky[k] = 0;
    for (int i = nlc - 1; i >= 0; i--) {
      size_t d = (size_t)x->dims[lc[i]];
      size_t j = rem % d;
      rem /= d;
      kx[k] += (int64_t)j * xst[lc[i]];
      ky[k] += (int64_t)j * yst[rc[i]];
    }
  }
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
  int64_t idx[TR_TENSOR_MAX_RANK] = {0}, xb = 0, yb = 0;
  for (size_t o = 0; o < nr; o++) {
    if (dt == TR_DT_F64) {
      double acc = 0;
      for (size_t k = 0; k < nk; k++) {
        double p = fx[xb + kx[k]] * fy[yb + ky[k]];
        acc = acc + p;
      }
      fr[o] = acc;
    } else if (flt) {
      float acc = 0;
      for (size_t k = 0; k < nk; k++) {
        float p = (float)fx[xb + kx[k]] * (float)fy[yb + ky[k]];
        acc = acc + p;
      }
      fr[o] = acc;
    } else if (dt == TR_DT_PRED) {
      uint64_t acc = 0;
      for (size_t k = 0; k < nk; k++) acc |= ix[xb + kx[k]] & iy[yb + ky[k]];
      ir[o] = acc;
    } else {
      uint64_t acc = 0;
      for (size_t k = 0; k < nk; k++) acc += ix[xb + kx[k]] * iy[yb + ky[k]];
      ir[o] = acc;
    }
    /* Next result index (row-major). */
    for (int d = no - 1; d >= 0; d--) {
      idx[d]++;
      xb += ox[d];
      yb += oy[d];
      if (idx[d] < odim[d]) break;
      xb -= ox[d] * odim[d];
      yb -= oy[d] * odim[d];
      idx[d] = 0;
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
  free(kx);
  free(ky);
  tr_tensor_free(x);
  tr_tensor_free(y);
  *out = r;
  return TR_OK;
}
