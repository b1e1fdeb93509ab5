/* core_scan.c - scan, routed by the core for every value domain
 * (docs/SEMANTICS.md "Scan"): `scan(inputs..., inits...), dimensions={d},
 * num_carries=k, to_apply=f` calls f once per index s along dimension d
 * (from the last index down when is_reverse=true) on the inputs' slices at
 * s and the carries (the inits first), and stacks f's first results along
 * d; its last k results are the next carries, and the result holds the
 * stacked outputs, then the final carries. is_associative only permits
 * another order of evaluation; the reference runs the sequential one.
 * Elements move one at a time through the domain's scalar_at and put, so
 * exact and shadow mode share this code. */
#include "core.h"

#include <stdlib.h>
#include <string.h>

/* The flat index in an array of shape full of element e of its slice at
 * index s along dimension d (the slice is full without d, row-major). */
static size_t full_index(const tr_shape *full, int d, int64_t s, size_t e) {
  size_t idx = 0, stride = 1;
  for (int i = full->rank - 1; i >= 0; i--) {
    size_t coord;
    if (i == d) {
      coord = (size_t)s;
    } else {
      coord = e % (size_t)full->dims[i];
      e /= (size_t)full->dims[i];
    }
    idx += coord * stride;
    stride *= (size_t)full->dims[i];
  }
  return idx;
}

/* full without dimension d (dims points into buf). */
static tr_shape without_dim(const tr_shape *full, int d, int64_t *buf) {
  tr_shape s = {.dtype = full->dtype, .rank = full->rank - 1, .dims = buf};
  for (int i = 0, j = 0; i < full->rank; i++)
    if (i != d) buf[j++] = full->dims[i];
  return s;
}

tr_status evc_route_scan(const ev_core *k, const tr_instr *in, ev_v **ops, ev_v **out) {
  const ev_domain *D = k->d;
  ev_ctx *c = k->ev;
  *out = NULL;
  const tr_comp *f = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS), *ka = tr_instr_attr(in, TR_ATTR_NUM_CARRIES);
  const tr_attr *ra = tr_instr_attr(in, TR_ATTR_IS_REVERSE);
  if (!f || !da || da->n != 1 || !ka)
    return ev_err(c, in, TR_ERR_INVALID, "scan needs to_apply, dimensions={d} and num_carries");
  int nops = in->noperands, nc = (int)ka->u.i, m = nops - nc;
  if (nc < 0 || m < 1) return ev_err(c, in, TR_ERR_INVALID, "scan needs at least one input besides its %d carries", nc);
  const tr_shape *x0 = in->operands[0]->shape;
  int d = (int)da->u.ints[0];
  if (d < 0 || d >= x0->rank) return ev_err(c, in, TR_ERR_INVALID, "scan dimension %d is out of range", d);
  int64_t N = x0->dims[d];
  for (int i = 0; i < m; i++) {
    const tr_shape *xs = in->operands[i]->shape;
    if (ops[i]->kind != EV_ARRAY || xs->dtype == TR_DT_TUPLE || xs->rank != x0->rank || xs->dims[d] != N)
      return ev_err(c, in, TR_ERR_INVALID, "scan input %d is not an array with %lld along dimension %d", i,
                    (long long)N, d);
  }
  const tr_shape *root = f->root->shape, *s = in->shape;
  bool rtuple = root->dtype == TR_DT_TUPLE;
  int nout = rtuple ? root->nelems - nc : nc > 0 ? 0 : 1;
  if (nout < 0 || (!rtuple && nc > 1) || (s->dtype == TR_DT_TUPLE) != (nout + nc > 1 || rtuple))
    return ev_err(c, in, TR_ERR_INVALID, "scan result does not match to_apply's %d results and %d carries",
                  rtuple ? root->nelems : 1, nc);
  ev_v **outs = tr_xcalloc((size_t)(nout + nc + 1), sizeof(ev_v *));
  ev_v **carry = outs + nout;
  ev_v **args = tr_xcalloc((size_t)nops, sizeof(ev_v *));
  tr_status st = TR_OK;
  for (int j = 0; j < nout && st == TR_OK; j++) {
    const tr_shape *os = s->dtype == TR_DT_TUPLE ? s->elems[j] : s;
    if (os->dtype == TR_DT_TUPLE || os->rank <= d || os->dims[d] != N)
      st = ev_err(c, in, TR_ERR_INVALID, "scan output %d has no dimension %d of %lld", j, d, (long long)N);
    else if (!(outs[j] = D->array(k->dc, in, os)))
      st = TR_ERR_UNSUPPORTED;
  }
  for (int i = 0; i < nc; i++) carry[i] = ev_value_ref(ops[m + i]);
  int64_t buf[TR_TENSOR_MAX_RANK];
  bool reverse = ra && ra->u.b;
  for (int64_t step = 0; step < N && st == TR_OK; step++) {
    int64_t at = reverse ? N - 1 - step : step;
    int made = 0;
    for (int i = 0; i < m && st == TR_OK; i++, made++) {
      const tr_shape *xs = in->operands[i]->shape;
      tr_shape sl = without_dim(xs, d, buf);
      if (!(args[i] = D->array(k->dc, in, &sl))) {
        st = TR_ERR_UNSUPPORTED;
        break;
      }
      size_t cnt = D->count(args[i]);
      for (size_t e = 0; e < cnt && st == TR_OK; e++) {
        ev_v *v = D->scalar_at(k->dc, in, ops[i], full_index(xs, d, at, e));
        if (!v) st = TR_ERR_UNSUPPORTED;
        else if (!D->put(args[i], e, v)) st = ev_err(c, in, TR_ERR_INVALID, "scan input %d: element type", i);
        ev_value_unref(D->layout, v);
      }
    }
    for (int i = 0; i < nc; i++) args[m + i] = carry[i];
    ev_v *r = NULL;
    if (st == TR_OK) st = evc_call(k, in, f, args, nops, &r);
    for (int i = 0; i < made; i++) ev_value_unref(D->layout, args[i]);
    if (st != TR_OK) break;
    for (int j = 0; j < nout && st == TR_OK; j++) {
      ev_v *y = rtuple ? r->elems[j] : r;
      const tr_shape *os = s->dtype == TR_DT_TUPLE ? s->elems[j] : s;
      size_t cnt = y->kind == EV_ARRAY ? D->count(y) : 0, want = 1;
      for (int i = 0; i < os->rank; i++)
        if (i != d) want *= (size_t)os->dims[i];
      if (cnt != want) {
        st = ev_err(c, in, TR_ERR_INVALID, "scan output %d: to_apply gives %zu elements a step, the result %zu", j,
                    cnt, want);
        break;
      }
      for (size_t e = 0; e < cnt && st == TR_OK; e++) {
        ev_v *v = D->scalar_at(k->dc, in, y, e);
        if (!v) st = TR_ERR_UNSUPPORTED;
        else if (!D->put(outs[j], full_index(os, d, at, e), v))
          st = ev_err(c, in, TR_ERR_INVALID, "scan output %d: element type", j);
        ev_value_unref(D->layout, v);
      }
    }
    for (int i = 0; i < nc && st == TR_OK; i++) {
      ev_value_unref(D->layout, carry[i]);
      carry[i] = ev_value_ref(rtuple ? r->elems[nout + i] : r);
    }
    ev_value_unref(D->layout, r);
  }
  tr_free(args);
  if (st == TR_OK) {
    if (s->dtype == TR_DT_TUPLE) {
      *out = ev_value_tuple(D->layout, nout + nc, outs); /* takes the references */
    } else {
      *out = outs[0];
    }
  } else {
    for (int j = 0; j < nout + nc; j++) ev_value_unref(D->layout, outs[j]);
  }
  tr_free(outs);
  return st;
}
