/* eval_gather.c - gather and scatter in the exact interpreter, with
 * batching dimensions. Gather clamps every start index so the whole slice
 * is in bounds; scatter skips a whole update window that would leave the
 * operand, and applies its updates in E's order: scatter indices in
 * row-major order, then each window in row-major order
 * (hlo_evaluator.cc:~2560-3230). Indices are read as int64, as E does. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

#define MAXR TR_TENSOR_MAX_RANK

/* Row-major next index of dims; false after the last. */
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

/* The start index vector for the index-array position sidx (index vector
 * dim ivd, filled in here), mapped to operand dims by map; operand
 * batching dims take the matching coordinate of sidx. */
static void start_vector(const int64_t *vals, const tr_tensor *idx, int64_t ivd, int64_t *sidx,
                         const int64_t *map, int nmap, const int64_t *ob, const int64_t *ib,
                         int nb, int xrank, int64_t *start) {
  int64_t ist[MAXR];
  ev_strides(idx->dims, idx->rank, ist);
  for (int d = 0; d < xrank; d++) start[d] = 0;
  for (int k = 0; k < nmap; k++) {
    if (ivd < idx->rank) sidx[ivd] = k;
    int64_t flat = 0;
    for (int d = 0; d < idx->rank; d++) flat += sidx[d] * ist[d];
    start[map[k]] = vals[flat];
  }
  for (int i = 0; i < nb; i++) start[ob[i]] = sidx[ib[i]];
}

tr_status ev_gather(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *idx,
                    tr_tensor **out) {
  const tr_shape *s = in->shape;
  int noff, ncol, nmap, nss, nob, nib;
  const int64_t *off = tr_attr_ints(in, TR_ATTR_OFFSET_DIMS, &noff);
  const int64_t *col = tr_attr_ints(in, TR_ATTR_COLLAPSED_SLICE_DIMS, &ncol);
  const int64_t *map = tr_attr_ints(in, TR_ATTR_START_INDEX_MAP, &nmap);
  const int64_t *ss = tr_attr_ints(in, TR_ATTR_SLICE_SIZES, &nss);
  const int64_t *ob = tr_attr_ints(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nob);
  const int64_t *ib = tr_attr_ints(in, TR_ATTR_START_INDICES_BATCHING_DIMS, &nib);
  int64_t ivd = tr_attr_int(in, TR_ATTR_INDEX_VECTOR_DIM, 0);
  if (s->rank > MAXR || x->rank > MAXR || idx->rank > MAXR || nss != x->rank || nob != nib)
    return ev_err(c, in, TR_ERR_INVALID, "malformed gather");
  tr_tensor *r = ev_new(c, in, x->dtype, s->rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  size_t ni = tr_tensor_count(idx), es = (size_t)tr_dtype_size(x->dtype);
  int64_t *vals = tr_xmalloc(sizeof(int64_t) * (ni ? ni : 1));
  ev_load_ints(idx, (uint64_t *)vals);
  /* Operand dims the offset dims walk, in order. */
  int64_t offop[MAXR], xst[MAXR];
  for (int d = 0, k = 0; d < x->rank; d++)
    if (!tr_ints_has(col, ncol, d) && !tr_ints_has(ob, nob, d) && k < noff) offop[k++] = d;
  ev_strides(x->dims, x->rank, xst);
  int64_t o[MAXR] = {0}, sidx[MAXR] = {0}, start[MAXR];
  tr_status st = TR_OK;
  if (!any_zero(s->dims, s->rank)) do {
    /* Batch coordinates (the result dims that are not offset dims) index
     * the start indices, skipping the index vector dim. */
    int j = 0;
    for (int d = 0; d < s->rank; d++) {
      if (tr_ints_has(off, noff, d)) continue;
      if (j == ivd) j++;
      sidx[j++] = o[d];
    }
    start_vector(vals, idx, ivd, sidx, map, nmap, ob, ib, nob, x->rank, start);
    for (int k = 0; k < nmap; k++) {
      int64_t d = map[k], hi = x->dims[d] - ss[d];
      if (start[d] > hi) start[d] = hi;
      if (start[d] < 0) start[d] = 0;
    }
    for (int k = 0; k < noff; k++) start[offop[k]] += o[off[k]];
    int64_t flat = 0;
    for (int d = 0; d < x->rank; d++) {
      if (start[d] < 0 || start[d] >= x->dims[d]) {
        st = ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: gather reads outside the operand "
                    "(a slice size of 0)");
        break;
      }
      flat += start[d] * xst[d];
    }
    if (st != TR_OK) break;
    size_t of = 0;
    for (int d = 0; d < s->rank; d++) of = of * (size_t)s->dims[d] + (size_t)o[d];
    memcpy((char *)r->data + of * es, (const char *)x->data + (size_t)flat * es, es);
  } while (next_index(o, s->dims, s->rank));
  tr_free(vals);
  if (st != TR_OK) {
    tr_tensor_free(r);
    return st;
  }
  *out = r;
  return TR_OK;
}

tr_status ev_scatter(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  int nops = in->noperands, nin = (nops - 1) / 2;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  int nuw, niw, nsd, nib, nsb;
  const int64_t *uw = tr_attr_ints(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nuw);
  const int64_t *iw = tr_attr_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, &niw);
  const int64_t *sd = tr_attr_ints(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nsd);
  const int64_t *ib = tr_attr_ints(in, TR_ATTR_INPUT_BATCHING_DIMS, &nib);
  const int64_t *sb = tr_attr_ints(in, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, &nsb);
  int64_t ivd = tr_attr_int(in, TR_ATTR_INDEX_VECTOR_DIM, 0);
  if (!k || nin < 1 || nin > 64 || nib != nsb) return ev_err(c, in, TR_ERR_INVALID, "malformed scatter");
  tr_tensor *xs[64], *us[64], *idx;
  for (int i = 0; i < nin; i++) {
    if (!(xs[i] = ev_want_tensor(c, in, ops[i], i))) return TR_ERR_INVALID;
    if (!(us[i] = ev_want_tensor(c, in, ops[nin + 1 + i], nin + 1 + i))) return TR_ERR_INVALID;
  }
  if (!(idx = ev_want_tensor(c, in, ops[nin], nin))) return TR_ERR_INVALID;
  const tr_tensor *x = xs[0], *u = us[0];
  if (x->rank > MAXR || u->rank > MAXR || idx->rank > MAXR)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", MAXR);
  tr_tensor *res[64] = {0};
  for (int i = 0; i < nin; i++)
    if (!(res[i] = ev_clone(c, in, xs[i]))) {
      for (int j = 0; j < i; j++) tr_tensor_free(res[j]);
      return TR_ERR_UNSUPPORTED;
    }
  size_t ni = tr_tensor_count(idx);
  int64_t *vals = tr_xmalloc(sizeof(int64_t) * (ni ? ni : 1));
  ev_load_ints(idx, (uint64_t *)vals);
  /* Update dims: scatter dims (not window dims) index the indices; window
   * dims walk the operand dims that are neither inserted nor batching. */
  int64_t usd[MAXR], usz[MAXR], wsz[MAXR], wop[MAXR], xst[MAXR], ust[MAXR];
  int nsc = 0;
  for (int d = 0; d < u->rank; d++)
    if (!tr_ints_has(uw, nuw, d)) {
      usd[nsc] = d;
      usz[nsc++] = u->dims[d];
    }
  for (int d = 0, j = 0; d < x->rank; d++)
    if (!tr_ints_has(iw, niw, d) && !tr_ints_has(ib, nib, d) && j < nuw) wop[j++] = d;
  for (int j = 0; j < nuw; j++) wsz[j] = u->dims[uw[j]];
  ev_strides(x->dims, x->rank, xst);
  ev_strides(u->dims, u->rank, ust);
  /* One binary op of the same type throughout: apply it directly. */
  tr_op bop = TR_OP_ADD;
  bool swap = false, fast = nin == 1 && k->root && k->root->shape &&
                            ev_simple_binary(k, x->dtype, &bop, &swap);
  bool flt = tr_dtype_is_float(x->dtype);
  size_t nx = tr_tensor_count(x), nu = tr_tensor_count(u);
  double *fx = NULL, *fu = NULL;
  uint64_t *ix = NULL, *iu = NULL;
  if (fast && flt) {
    fx = tr_xmalloc(sizeof(double) * (nx ? nx : 1));
    fu = tr_xmalloc(sizeof(double) * (nu ? nu : 1));
    ev_load_flts(x, fx);
    ev_load_flts(u, fu);
  } else if (fast) {
    ix = tr_xmalloc(sizeof(uint64_t) * (nx ? nx : 1));
    iu = tr_xmalloc(sizeof(uint64_t) * (nu ? nu : 1));
    ev_load_ints(x, ix);
    ev_load_ints(u, iu);
  }
  tr_value *args[128];
  int64_t sc[MAXR] = {0}, sidx[MAXR] = {0}, start[MAXR], w[MAXR];
  tr_status st = TR_OK;
  if (!any_zero(usz, nsc)) do {
    int j = 0;
    for (int q = 0; q < nsc; q++) {
      if (j == ivd) j++;
      sidx[j++] = sc[q];
    }
    start_vector(vals, idx, ivd, sidx, sd, nsd, ib, sb, nib, x->rank, start);
    /* The whole window must fit, else E skips it. */
    bool fits = true;
    for (int d = 0; d < x->rank && fits; d++) {
      int64_t size = 1;
      for (int q = 0; q < nuw; q++)
        if (wop[q] == d) size = wsz[q];
      fits = start[d] >= 0 && start[d] <= x->dims[d] - size;
    }
    if (!fits || any_zero(wsz, nuw)) continue;
    memset(w, 0, sizeof w);
    do {
      int64_t xo = 0, uo = 0;
      for (int d = 0; d < x->rank; d++) {
        int64_t v = start[d];
        for (int q = 0; q < nuw; q++)
          if (wop[q] == d) v += w[q];
        xo += v * xst[d];
      }
      for (int q = 0; q < nsc; q++) uo += sc[q] * ust[usd[q]];
      for (int q = 0; q < nuw; q++) uo += w[q] * ust[uw[q]];
      if (fast && flt) {
        double *cur = &fx[xo];
        if (swap) ev_flt_binary(bop, x->dtype, &fu[uo], cur, cur, 1);
        else ev_flt_binary(bop, x->dtype, cur, &fu[uo], cur, 1);
        ev_round_flts(x->dtype, cur, 1);
      } else if (fast) {
        uint64_t *cur = &ix[xo], tmp;
        if (swap) ev_int_binary(bop, x->dtype, &iu[uo], cur, &tmp, 1);
        else ev_int_binary(bop, x->dtype, cur, &iu[uo], &tmp, 1);
        ev_canon_ints(x->dtype, &tmp, 1);
        *cur = tmp;
      } else {
        int made = 0;
        for (int i = 0; i < nin && st == TR_OK; i++, made++) {
          const tr_instr *p = k->params && i < k->nparams ? k->params[i] : NULL;
          tr_dtype pt = p && p->shape ? p->shape->dtype : res[i]->dtype;
          if (!(args[i] = ev_scalar_at(c, in, res[i], (size_t)xo, pt))) st = TR_ERR_UNSUPPORTED;
        }
        for (int i = 0; i < nin && st == TR_OK; i++, made++) {
          const tr_instr *p = k->params && nin + i < k->nparams ? k->params[nin + i] : NULL;
          tr_dtype pt = p && p->shape ? p->shape->dtype : us[i]->dtype;
          if (!(args[nin + i] = ev_scalar_at(c, in, us[i], (size_t)uo, pt))) st = TR_ERR_UNSUPPORTED;
        }
        tr_value *rv = NULL;
        if (st == TR_OK) st = ev_call(c, in, k, args, 2 * nin, &rv);
        for (int i = 0; i < made; i++) tr_value_unref(args[i]);
        for (int i = 0; i < nin && st == TR_OK; i++) {
          tr_value *e = nin == 1 ? rv : (i < rv->hd.nelems ? tr_value_elems(rv)[i] : NULL);
          if (!e || !e->t || e->t->rank != 0) {
            st = ev_err(c, in, TR_ERR_INVALID, "to_apply did not return %d scalar(s)", nin);
            break;
          }
          tr_tensor *cv = ev_convert_to(c, in, e->t, res[i]->dtype);
          if (!cv) {
            st = TR_ERR_UNSUPPORTED;
            break;
          }
          size_t es = (size_t)tr_dtype_size(res[i]->dtype);
          memcpy((char *)res[i]->data + (size_t)xo * es, cv->data, es);
          tr_tensor_free(cv);
        }
        tr_value_unref(rv);
      }
    } while (st == TR_OK && next_index(w, wsz, nuw));
  } while (st == TR_OK && next_index(sc, usz, nsc));
  if (fast && flt) ev_store_flts(res[0], fx);
  else if (fast) ev_store_ints(res[0], ix);
  tr_free(fx);
  tr_free(fu);
  tr_free(ix);
  tr_free(iu);
  tr_free(vals);
  if (st != TR_OK) {
    for (int i = 0; i < nin; i++) tr_tensor_free(res[i]);
    return st;
  }
  if (nin == 1 && in->shape->dtype != TR_DT_TUPLE) {
    *out = tr_value_tensor(res[0]);
  } else {
    tr_value *el[64];
    for (int i = 0; i < nin; i++) el[i] = tr_value_tensor(res[i]);
    *out = tr_value_tuple(nin, el);
  }
  return TR_OK;
}
