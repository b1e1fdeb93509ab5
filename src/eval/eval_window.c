/* eval_window.c - reduce-window and select-and-scatter in the exact
 * interpreter, as E computes them (hlo_evaluator.cc ~3938-4240): for each
 * output position the window is walked in row-major order; a window
 * position reads input index out*stride + k*window_dilation - pad_low,
 * divided by the base dilation when it is a multiple of it; padding, holes
 * and positions outside the input are skipped (they never contribute the
 * init value again). */
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

static bool any_zero(const int64_t *dims, int rank) {
  for (int i = 0; i < rank; i++)
    if (dims[i] <= 0) return true;
  return false;
}

/* The flat input offset window position w of output position o reads, or
 * -1 for padding, a base-dilation hole or a position outside the input. */
static int64_t window_at(const tr_window_dim *win, const tr_tensor *x, const int64_t *xst,
                         const int64_t *o, const int64_t *w) {
  int64_t off = 0;
  for (int d = 0; d < x->rank; d++) {
    const tr_window_dim *wd = &win[d];
    int64_t p = o[d] * wd->stride + w[d] * wd->rhs_dilate - wd->pad_lo;
    if (p < 0) return -1;
    if (wd->lhs_dilate > 1) {
      if (p % wd->lhs_dilate) return -1;
      p /= wd->lhs_dilate;
    }
    if (p >= x->dims[d]) return -1;
    off += p * xst[d];
  }
  return off;
}

/* The window of x's rank; a scalar has none. */
static const tr_window_dim *get_window(const tr_instr *in, int rank, int64_t *wsize) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0) return NULL;
  if (!at || at->n != rank) return NULL;
  for (int d = 0; d < rank; d++) wsize[d] = at->u.win[d].size;
  return at->u.win;
}

static tr_value *pack(tr_tensor **res, int n, const tr_shape *s) {
  if (n == 1 && s->dtype != TR_DT_TUPLE) return tr_value_tensor(res[0]);
  tr_value *el[64];
  for (int i = 0; i < n; i++) el[i] = tr_value_tensor(res[i]);
  return tr_value_tuple(n, el);
}

tr_status ev_reduce_window(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  int nin = in->noperands / 2;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  if (!k || nin < 1 || nin > 64) return ev_err(c, in, TR_ERR_INVALID, "malformed reduce-window");
  tr_tensor *xs[128], *res[64] = {0};
  for (int i = 0; i < 2 * nin; i++)
    if (!(xs[i] = ev_want_tensor(c, in, ops[i], i))) return TR_ERR_INVALID;
  const tr_tensor *x = xs[0];
  int64_t wsize[MAXR], xst[MAXR];
  if (x->rank > MAXR) return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", MAXR);
  const tr_window_dim *win = get_window(in, x->rank, wsize);
  if (x->rank && !win) return ev_err(c, in, TR_ERR_INVALID, "reduce-window needs a window of rank %d", x->rank);
  ev_strides(x->dims, x->rank, xst);
  tr_status st = TR_OK;
  for (int i = 0; i < nin && st == TR_OK; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    if (!(res[i] = ev_new(c, in, os->dtype, os->rank, os->dims))) st = TR_ERR_UNSUPPORTED;
  }
  if (st != TR_OK) {
    for (int i = 0; i < nin; i++) tr_tensor_free(res[i]);
    return st;
  }
  const int64_t *odims = res[0]->dims;
  size_t nout = tr_tensor_count(res[0]);
  tr_dtype dt = x->dtype;
  tr_op bop;
  bool swap;
  int64_t o[MAXR] = {0}, w[MAXR] = {0};
  if (nin == 1 && xs[1]->dtype == dt && res[0]->dtype == dt && ev_simple_binary(k, dt, &bop, &swap)) {
    /* Window position by window position over all outputs at once: each
     * output still sees its elements in row-major window order. */
    bool flt = tr_dtype_is_float(dt);
    size_t nx = tr_tensor_count(x), sz = nout ? nout : 1;
    int64_t *src = tr_xmalloc(sizeof(int64_t) * sz);
    double *fx = NULL, *facc = NULL, *fbuf = NULL;
    uint64_t *ix = NULL, *iacc = NULL, *ibuf = NULL;
    if (flt) {
      fx = tr_xmalloc(sizeof(double) * (nx ? nx : 1));
      facc = tr_xmalloc(sizeof(double) * sz);
      fbuf = tr_xmalloc(sizeof(double) * sz);
      double init;
      ev_load_flts(x, fx);
      ev_load_flts(xs[1], &init);
      for (size_t q = 0; q < nout; q++) facc[q] = init;
    } else {
      ix = tr_xmalloc(sizeof(uint64_t) * (nx ? nx : 1));
      iacc = tr_xmalloc(sizeof(uint64_t) * sz);
      ibuf = tr_xmalloc(sizeof(uint64_t) * sz);
      uint64_t init;
      ev_load_ints(x, ix);
      ev_load_ints(xs[1], &init);
      for (size_t q = 0; q < nout; q++) iacc[q] = init;
    }
    if (nout && !any_zero(wsize, x->rank)) do {
      memset(o, 0, sizeof o);
      for (size_t q = 0; q < nout; q++) {
        src[q] = window_at(win, x, xst, o, w);
        next_index(o, odims, x->rank);
      }
      for (size_t q = 0; q < nout; q++) {
        if (src[q] < 0) continue;
        if (flt) {
          double v = fx[src[q]];
          if (swap) ev_flt_binary(bop, dt, &v, &facc[q], &fbuf[q], 1);
          else ev_flt_binary(bop, dt, &facc[q], &v, &fbuf[q], 1);
          ev_round_flts(dt, &fbuf[q], 1);
          facc[q] = fbuf[q];
        } else {
          uint64_t v = ix[src[q]];
          if (swap) ev_int_binary(bop, dt, &v, &iacc[q], &ibuf[q], 1);
          else ev_int_binary(bop, dt, &iacc[q], &v, &ibuf[q], 1);
          ev_canon_ints(dt, &ibuf[q], 1);
          iacc[q] = ibuf[q];
        }
      }
    } while (next_index(w, wsize, x->rank));
    if (flt) ev_store_flts(res[0], facc);
    else ev_store_ints(res[0], iacc);
    tr_free(src);
    tr_free(fx);
    tr_free(facc);
    tr_free(fbuf);
    tr_free(ix);
    tr_free(iacc);
    tr_free(ibuf);
    *out = pack(res, 1, in->shape);
    return TR_OK;
  }
  /* Any reducer: one call per (output, window element). */
  tr_value *args[128];
  for (size_t q = 0; q < nout && st == TR_OK; q++, next_index(o, odims, x->rank)) {
    tr_value *acc[64] = {0};
    for (int i = 0; i < nin && st == TR_OK; i++)
      if (!(acc[i] = ev_scalar_at(c, in, xs[nin + i], 0, res[i]->dtype))) st = TR_ERR_UNSUPPORTED;
    memset(w, 0, sizeof w);
    if (st == TR_OK && !any_zero(wsize, x->rank)) do {
      int64_t off = window_at(win, x, xst, o, w);
      if (off < 0) continue;
      int made = 0;
      for (int i = 0; i < nin; i++) args[i] = acc[i];
      for (int i = 0; i < nin && st == TR_OK; i++, made++) {
        const tr_instr *p = k->params && nin + i < k->nparams ? k->params[nin + i] : NULL;
        tr_dtype pt = p && p->shape ? p->shape->dtype : xs[i]->dtype;
        if (!(args[nin + i] = ev_scalar_at(c, in, xs[i], (size_t)off, pt))) st = TR_ERR_UNSUPPORTED;
      }
      tr_value *r = NULL;
      if (st == TR_OK) st = ev_call(c, in, k, args, 2 * nin, &r);
      for (int i = 0; i < made; i++) tr_value_unref(args[nin + i]);
      for (int i = 0; i < nin && st == TR_OK; i++) {
        tr_value *e = nin == 1 ? r : (i < r->hd.nelems ? tr_value_elems(r)[i] : NULL);
        if (!e || !e->t || e->t->dtype != res[i]->dtype) {
          st = ev_err(c, in, TR_ERR_INVALID, "to_apply did not return %d scalar(s)", nin);
          break;
        }
        tr_value_unref(acc[i]);
        acc[i] = tr_value_ref(e);
      }
      tr_value_unref(r);
    } while (st == TR_OK && next_index(w, wsize, x->rank));
    for (int i = 0; i < nin; i++) {
      if (st == TR_OK) {
        size_t es = (size_t)tr_dtype_size(res[i]->dtype);
        memcpy((char *)res[i]->data + q * es, acc[i]->t->data, es);
      }
      tr_value_unref(acc[i]);
    }
  }
  if (st != TR_OK) {
    for (int i = 0; i < nin; i++) tr_tensor_free(res[i]);
    return st;
  }
  *out = pack(res, nin, in->shape);
  return TR_OK;
}

/* Calls k on two scalars (elements ia of a and ib of b, converted to k's
 * parameter types) and returns its scalar result, or NULL after an error. */
static tr_value *call2(ev_ctx *c, const tr_instr *in, const tr_comp *k, const tr_tensor *a,
                       size_t ia, const tr_tensor *b, size_t ib, tr_status *st) {
  tr_dtype t0 = k->params && k->nparams > 0 && k->params[0]->shape ? k->params[0]->shape->dtype : a->dtype;
  tr_dtype t1 = k->params && k->nparams > 1 && k->params[1]->shape ? k->params[1]->shape->dtype : b->dtype;
  tr_value *args[2] = {ev_scalar_at(c, in, a, ia, t0), NULL};
  if (args[0]) args[1] = ev_scalar_at(c, in, b, ib, t1);
  tr_value *r = NULL;
  if (!args[0] || !args[1]) *st = TR_ERR_UNSUPPORTED;
  else *st = ev_call(c, in, k, args, 2, &r);
  tr_value_unref(args[0]);
  tr_value_unref(args[1]);
  if (*st == TR_OK && (!r->t || r->t->rank != 0)) {
    *st = ev_err(c, in, TR_ERR_INVALID, "computation %s did not return a scalar", k->name);
    tr_value_unref(r);
    return NULL;
  }
  return *st == TR_OK ? r : NULL;
}

/* E: per source element, the first valid window position is the initial
 * choice and each later one x replaces it when select(choice, x) is
 * false (so a GE selector keeps the first of equal maxima); then
 * out[choice] = scatter(source, out[choice]) - E's argument order, the
 * reverse of the documented (current, source). */
tr_status ev_select_and_scatter(ev_ctx *c, const tr_instr *in, const tr_tensor *x,
                                const tr_tensor *src, const tr_tensor *init, tr_tensor **out) {
  const tr_comp *sel = tr_attr_comp(in, TR_ATTR_SELECT), *sc = tr_attr_comp(in, TR_ATTR_SCATTER);
  int64_t wsize[MAXR], xst[MAXR], o[MAXR] = {0}, w[MAXR] = {0};
  if (!sel || !sc || x->rank > MAXR) return ev_err(c, in, TR_ERR_INVALID, "malformed select-and-scatter");
  const tr_window_dim *win = get_window(in, x->rank, wsize);
  if (x->rank && !win) return ev_err(c, in, TR_ERR_INVALID, "select-and-scatter needs a window of rank %d", x->rank);
  ev_strides(x->dims, x->rank, xst);
  tr_tensor *r = ev_new(c, in, in->shape->dtype, in->shape->rank, in->shape->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  tr_tensor *iv = ev_convert_to(c, in, init, r->dtype);
  if (!iv) {
    tr_tensor_free(r);
    return TR_ERR_UNSUPPORTED;
  }
  size_t n = tr_tensor_count(r), es = (size_t)tr_dtype_size(r->dtype), ns = tr_tensor_count(src);
  for (size_t i = 0; i < n; i++) memcpy((char *)r->data + i * es, iv->data, es);
  tr_tensor_free(iv);
  tr_status st = TR_OK;
  for (size_t q = 0; q < ns && st == TR_OK; q++, next_index(o, src->dims, src->rank)) {
    int64_t best = -1;
    memset(w, 0, sizeof w);
    if (!any_zero(wsize, x->rank)) do {
      int64_t off = window_at(win, x, xst, o, w);
      if (off < 0) continue;
      if (best < 0) {
        best = off;
        continue;
      }
      tr_value *keep = call2(c, in, sel, x, (size_t)best, x, (size_t)off, &st);
      if (!keep) break;
      if (keep->t->dtype != TR_DT_PRED) st = ev_err(c, in, TR_ERR_INVALID, "select did not return pred[]");
      else if (!((unsigned char *)keep->t->data)[0]) best = off;
      tr_value_unref(keep);
    } while (st == TR_OK && next_index(w, wsize, x->rank));
    if (st != TR_OK || best < 0) continue;
    tr_value *v = call2(c, in, sc, src, q, r, (size_t)best, &st);
    if (!v) break;
    tr_tensor *cv = ev_convert_to(c, in, v->t, r->dtype);
    tr_value_unref(v);
    if (!cv) {
      st = TR_ERR_UNSUPPORTED;
      break;
    }
    memcpy((char *)r->data + (size_t)best * es, cv->data, es);
    tr_tensor_free(cv);
  }
  if (st != TR_OK) {
    tr_tensor_free(r);
    return st;
  }
  *out = r;
  return TR_OK;
}
