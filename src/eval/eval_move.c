/* eval_move.c - data-movement ops of the exact interpreter: broadcast,
 * reshape, transpose, slice, dynamic-slice, dynamic-update-slice,
 * concatenate, pad and reverse. All copy raw element slots (bits are never
 * changed) through one strided box copy; each op only works out the box,
 * the strides and the base offsets. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

void ev_strides(const int64_t *dims, int rank, int64_t *st) {
  int64_t s = 1;
  for (int i = rank - 1; i >= 0; i--) {
    st[i] = s;
    s *= dims[i];
  }
}

static void copy_elem(char *d, const char *s, size_t es) {
  switch (es) {
  case 1: *d = *s; break;
  case 2: memcpy(d, s, 2); break;
  case 4: memcpy(d, s, 4); break;
  case 8: memcpy(d, s, 8); break;
  default: memcpy(d, s, es); break;
  }
}

void ev_copy_box(void *dst, int64_t dbase, const int64_t *ds, const void *src, int64_t sbase,
                 const int64_t *ss, const int64_t *dims, int rank, size_t es) {
  char *d = dst;
  const char *s = src;
  if (rank == 0) {
    copy_elem(d + (size_t)dbase * es, s + (size_t)sbase * es, es);
    return;
  }
  for (int i = 0; i < rank; i++)
    if (dims[i] <= 0) return;
  int64_t idx[TR_TENSOR_MAX_RANK] = {0};
  int64_t inner = dims[rank - 1], dsi = ds[rank - 1], ssi = ss[rank - 1];
  int64_t doff = dbase, soff = sbase;
  for (;;) {
    int64_t dj = doff, sj = soff;
    for (int64_t j = 0; j < inner; j++, dj += dsi, sj += ssi)
      copy_elem(d + (size_t)dj * es, s + (size_t)sj * es, es);
    /* Odometer over the outer dims. */
    int k = rank - 2;
    while (k >= 0) {
      idx[k]++;
      doff += ds[k];
      soff += ss[k];
      if (idx[k] < dims[k]) break;
      doff -= ds[k] * dims[k];
      soff -= ss[k] * dims[k];
      idx[k] = 0;
      k--;
    }
    if (k < 0) return;
  }
}

/* Start indices of dynamic-slice / dynamic-update-slice from operand
 * `first` on (scalars, or the old single index vector), each clamped to
 * [0, dim - size]. E converts every index to int64 first, so a u64 index
 * of 2^63 or more counts as negative. */
static void dyn_starts(tr_tensor *const *ops, int nops, int first, const tr_tensor *o,
                       const int64_t *size, int64_t *start) {
  uint64_t v[TR_TENSOR_MAX_RANK];
  if (nops - first == 1 && ops[first]->rank == 1 && o->rank > 0)
    ev_load_ints(ops[first], v); /* the old form: one index vector */
  else
    for (int i = 0; i < o->rank; i++) ev_load_ints(ops[first + i], &v[i]);
  for (int i = 0; i < o->rank; i++) {
    int64_t s = (int64_t)v[i], hi = o->dims[i] - size[i];
    if (s > hi) s = hi;
    if (s < 0) s = 0;
    start[i] = s;
  }
}

tr_status ev_move(ev_ctx *c, const tr_instr *in, tr_tensor *const *ops, int nops,
                  tr_tensor **out) {
  const tr_shape *s = in->shape;
  const tr_tensor *x = ops[0];
  size_t es = (size_t)tr_dtype_size(x->dtype);
  int rank = s->rank, xr = x->rank;
  int64_t ost[TR_TENSOR_MAX_RANK], xst[TR_TENSOR_MAX_RANK], ss[TR_TENSOR_MAX_RANK];
  int64_t dims[TR_TENSOR_MAX_RANK], start[TR_TENSOR_MAX_RANK];
  if (rank > TR_TENSOR_MAX_RANK || xr > TR_TENSOR_MAX_RANK)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", TR_TENSOR_MAX_RANK);
  tr_tensor *r = ev_new(c, in, x->dtype, rank, s->dims);
  if (!r) return TR_ERR_UNSUPPORTED;
  ev_strides(r->dims, rank, ost);
  ev_strides(x->dims, xr, xst);
  int64_t sbase = 0;
  const tr_attr *at;
  switch (in->op) {
  case TR_OP_BROADCAST:
    /* Operand dimension i is result dimension dimensions[i]; the others
     * repeat (stride 0). */
    at = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
    for (int i = 0; i < rank; i++) ss[i] = 0;
    for (int i = 0; at && i < at->n && i < xr; i++) ss[at->u.ints[i]] = xst[i];
    ev_copy_box(r->data, 0, ost, x->data, 0, ss, r->dims, rank, es);
    break;
  case TR_OP_RESHAPE:
    memcpy(r->data, x->data, x->nbytes);
    break;
  case TR_OP_TRANSPOSE:
    at = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
    for (int i = 0; i < rank; i++) ss[i] = xst[at->u.ints[i]];
    ev_copy_box(r->data, 0, ost, x->data, 0, ss, r->dims, rank, es);
    break;
  case TR_OP_REVERSE:
    at = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
    for (int i = 0; i < rank; i++) ss[i] = xst[i];
    for (int k = 0; at && k < at->n; k++) {
      int d = (int)at->u.ints[k];
      if (x->dims[d] > 0) sbase += (x->dims[d] - 1) * xst[d];
      ss[d] = -xst[d];
    }
    ev_copy_box(r->data, 0, ost, x->data, sbase, ss, r->dims, rank, es);
    break;
  case TR_OP_SLICE:
    at = tr_instr_attr(in, TR_ATTR_SLICE);
    for (int i = 0; i < rank; i++) {
      sbase += at->u.slice[i].start * xst[i];
      ss[i] = at->u.slice[i].stride * xst[i];
    }
    ev_copy_box(r->data, 0, ost, x->data, sbase, ss, r->dims, rank, es);
    break;
  case TR_OP_DYNAMIC_SLICE:
    dyn_starts(ops, nops, 1, x, r->dims, start);
    for (int i = 0; i < rank; i++) sbase += start[i] * xst[i];
    ev_copy_box(r->data, 0, ost, x->data, sbase, xst, r->dims, rank, es);
    break;
  case TR_OP_DYNAMIC_UPDATE_SLICE: {
    const tr_tensor *u = ops[1];
    int64_t ust[TR_TENSOR_MAX_RANK], dbase = 0;
    memcpy(r->data, x->data, x->nbytes);
    dyn_starts(ops, nops, 2, x, u->dims, start);
    ev_strides(u->dims, u->rank, ust);
    for (int i = 0; i < rank; i++) dbase += start[i] * ost[i];
    ev_copy_box(r->data, dbase, ost, u->data, 0, ust, u->dims, rank, es);
    break;
  }
  case TR_OP_CONCATENATE: {
    at = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
    int d = (int)at->u.ints[0];
    int64_t off = 0;
    for (int k = 0; k < nops; k++) {
      const tr_tensor *y = ops[k];
      int64_t yst[TR_TENSOR_MAX_RANK];
      ev_strides(y->dims, y->rank, yst);
      ev_copy_box(r->data, off * ost[d], ost, y->data, 0, yst, y->dims, rank, es);
      off += y->dims[d];
    }
    break;
  }
  case TR_OP_PAD: {
    /* Operand element i goes to lo + i*(interior+1); targets outside the
     * result (negative lo/hi) are dropped; everything else is the pad
     * value. */
    at = tr_instr_attr(in, TR_ATTR_PADDING);
    size_t n = tr_tensor_count(r);
    for (size_t i = 0; i < n; i++) memcpy((char *)r->data + i * es, ops[1]->data, es);
    int64_t dbase = 0, ds[TR_TENSOR_MAX_RANK];
    for (int i = 0; i < rank; i++) {
      const tr_pad_dim *p = &at->u.pad[i];
      int64_t step = p->interior + 1, first = 0;
      if (p->lo < 0) first = (-p->lo + step - 1) / step; /* first i with lo + i*step >= 0 */
      int64_t last = x->dims[i] - 1;                        /* last i with target < out */
      if (x->dims[i] > 0 && p->lo + last * step >= r->dims[i])
        last = r->dims[i] - 1 - p->lo < 0 ? -1 : (r->dims[i] - 1 - p->lo) / step;
      dims[i] = last >= first ? last - first + 1 : 0;
      ds[i] = step * ost[i];
      dbase += (p->lo + first * step) * ost[i];
      sbase += first * xst[i];
    }
    ev_copy_box(r->data, dbase, ds, x->data, sbase, xst, dims, rank, es);
    break;
  }
  default:
    tr_tensor_free(r);
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s", tr_ops[in->op].name);
  }
  *out = r;
  return TR_OK;
}
