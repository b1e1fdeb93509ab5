/* shadow_move.c - shadow rules of the ops that only move elements
 * (broadcast, reshape, transpose, slice, reverse, concatenate, pad,
 * dynamic-slice, dynamic-update-slice, same-type bitcast, gather). The
 * exact kernels are element-type agnostic, so they run once on s64 "id"
 * tensors (operand number and flat index of each element) and the shadow
 * values, bounds and marks follow the ids: no rule is duplicated. For
 * values held in double the kernels move the value, bound and mark
 * planes themselves (work by result size), and a part of a lazy argument
 * is read from the argument. A moved element keeps its bound and mark;
 * an index operand that is uncertain marks the whole result (a correct
 * run may read elsewhere). */
#include "shadowint.h"

#include <stdlib.h>
#include <string.h>

#define ID_SHIFT 40

/* An s64 tensor of a's shape holding (j << ID_SHIFT) | i at element i. */
static tr_tensor *id_tensor(sh_ctx *c, const tr_instr *in, const sh_val *a, int j) {
  tr_tensor *t = ev_new(&c->ev, in, TR_DT_S64, a->rank, a->dims);
  if (!t) return NULL;
  int64_t *p = t->data;
  for (size_t i = 0; i < a->n; i++) p[i] = ((int64_t)j << ID_SHIFT) | (int64_t)i;
  return t;
}

/* The result of shape s whose element i copies from the operand element
 * ids[i] names; marks everything when unsure. */
static tr_status follow_ids(sh_ctx *c, const tr_instr *in, sh_val **ops, const int64_t *ids,
                            const tr_tensor *ints, bool unsure, sh_val **out) {
  const tr_shape *s = in->shape;
  sh_val *o = sh_arr_new(c, in, s->dtype, s->rank, s->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  bool flt = sh_is_flt(o);
  if (!flt) memcpy(o->t->data, ints->data, o->t->nbytes);
  int64_t mask = ((int64_t)1 << ID_SHIFT) - 1;
  for (size_t i = 0; i < o->n; i++) {
    const sh_val *a = ops[ids[i] >> ID_SHIFT];
    size_t k = (size_t)(ids[i] & mask);
    if (flt) sh_copy(o, i, a, k);
    else if (o->e) o->e[i] = a->e ? a->e[k] : 0; /* complex: its bound */
    o->u[i] = a->u[k] | unsure;
  }
  *out = o;
  return TR_OK;
}

/* The exact kernels copy elements by their size whatever the type, so for
 * values held in double (types up to 32 bits) they can move the value,
 * bound and mark planes directly: three runs over the result's elements
 * instead of an id per operand element (a gather or slice that reads a
 * few rows of a big table would otherwise pay for the whole table). */

/* A tensor header over a plane of a (borrowed data: never freed). */
static tr_tensor plane(const sh_val *a, int which) {
  tr_tensor t;
  t.dtype = which == 2 ? TR_DT_U8 : TR_DT_F64;
  t.rank = a->rank;
  t.dims = a->dims;
  t.data = which == 0 ? (void *)a->d : which == 1 ? (void *)a->e : (void *)a->u;
  t.nbytes = a->n * (which == 2 ? 1 : sizeof(double));
  return t;
}

static bool planes_movable(const tr_instr *in, sh_val **ops, int nd) {
  for (int i = 0; i < nd; i++)
    if (!ops[i]->d || ops[i]->dt != in->shape->dtype) return false;
  return true;
}

/* Runs the move (or gather: idx set) on each plane; *out takes the result
 * buffers. */
static tr_status move_planes(sh_ctx *c, const tr_instr *in, sh_val **ops, int nops, int nd,
                             const tr_tensor *idx, bool unsure, sh_val **out) {
  const tr_shape *s = in->shape;
  sh_val *o = sh_arr_new_raw(c, in, s->dtype, s->rank, s->dims);
  if (!o) return TR_ERR_UNSUPPORTED;
  size_t m = o->n ? o->n : 1;
  tr_tensor hdr[16], *ts[16];
  if (nops > 16) {
    sh_unref(o);
    return TR_ERR_UNSUPPORTED;
  }
  tr_status st = TR_OK;
  for (int w = 0; w < 3 && st == TR_OK; w++) {
    for (int i = 0; i < nops; i++) {
      if (i < nd) {
        hdr[i] = plane(ops[i], w);
        ts[i] = &hdr[i];
      } else {
        ts[i] = ops[i]->t;
      }
    }
    tr_tensor *r = NULL;
    st = idx ? ev_gather(&c->ev, in, ts[0], idx, &r) : ev_move(&c->ev, in, ts, nops, &r);
    if (st != TR_OK) break;
    /* the result's buffer becomes the plane */
    void **dst = w == 0 ? (void **)&o->d : w == 1 ? (void **)&o->e : (void **)&o->u;
    sh_pool_give(&c->pool, *dst, w == 2 ? m : m * sizeof(double));
    *dst = r->data;
    r->data = NULL;
    tr_tensor_free(r);
  }
  if (st != TR_OK) {
    sh_unref(o);
    return st;
  }
  if (unsure) memset(o->u, 1, o->n);
  *out = o;
  return TR_OK;
}

/* A part of a lazy argument (exact and certain): the exact kernel on the
 * argument itself, then the part in shadow form. */
static tr_status lazy_part(sh_ctx *c, const tr_instr *in, sh_val **ops, int nops, bool unsure,
                           sh_val **out) {
  tr_tensor *ts[16], *r = NULL;
  if (nops > 16) return ev_err(&c->ev, in, TR_ERR_UNSUPPORTED, "unsupported: %d operands", nops);
  ts[0] = (tr_tensor *)ops[0]->src;
  for (int i = 1; i < nops; i++) ts[i] = ops[i]->t;
  tr_status st = in->op == TR_OP_GATHER ? ev_gather(&c->ev, in, ts[0], ts[1], &r) : ev_move(&c->ev, in, ts, nops, &r);
  if (st == TR_OK) st = sh_from_tensor(c, in, r, !unsure, out);
  tr_tensor_free(r);
  return st;
}

/* Which operands carry data (the rest are start indices). */
static int data_operands(tr_op op, int nops) {
  switch (op) {
  case TR_OP_CONCATENATE: return nops;
  case TR_OP_PAD: case TR_OP_DYNAMIC_UPDATE_SLICE: return 2;
  default: return 1;
  }
}

tr_status sh_move(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  int nops = in->noperands, nd = data_operands(in->op, nops);
  for (int i = 0; i < nops; i++)
    if (!sh_is_arr(ops[i])) return ev_err(&c->ev, in, TR_ERR_INVALID, "operand %d is not an array", i);
  if (nd > nops) return ev_err(&c->ev, in, TR_ERR_INVALID, "too few operands");
  if (in->op == TR_OP_BITCAST) {
    /* Same element type: the row-major elements in order. */
    int64_t *ids = tr_xmalloc(sizeof(int64_t) * (ops[0]->n ? ops[0]->n : 1));
    for (size_t i = 0; i < ops[0]->n; i++) ids[i] = (int64_t)i;
    tr_status st = follow_ids(c, in, ops, ids, ops[0]->t, false, out);
    tr_free(ids);
    if (st == TR_OK && ops[0]->bits) (*out)->bits = tr_tensor_clone(ops[0]->bits);
    return st;
  }
  bool unsure = false;
  for (int i = nd; i < nops; i++) unsure |= sh_any_uncertain(ops[i]);
  if (ops[0]->src) return lazy_part(c, in, ops, nops, unsure, out); /* slice, dynamic-slice */
  if (planes_movable(in, ops, nd)) {
    tr_status st = move_planes(c, in, ops, nops, nd, NULL, unsure, out);
    return st == TR_OK ? sh_bits_move(c, in, ops, nops, nd, NULL, *out) : st;
  }
  tr_tensor **ts = tr_xcalloc((size_t)nops, sizeof(tr_tensor *));
  tr_status st = TR_OK;
  for (int i = 0; i < nd && st == TR_OK; i++)
    if (!(ts[i] = id_tensor(c, in, ops[i], i))) st = TR_ERR_UNSUPPORTED;
  for (int i = nd; i < nops; i++) ts[i] = ops[i]->t;
  tr_tensor *ids = NULL, *ints = NULL;
  if (st == TR_OK) st = ev_move(&c->ev, in, ts, nops, &ids);
  if (st == TR_OK && !sh_is_flt(ops[0])) {
    /* Integer data: the exact kernel on the values is the shadow. */
    tr_tensor **vs = tr_xcalloc((size_t)nops, sizeof(tr_tensor *));
    for (int i = 0; i < nops; i++) vs[i] = ops[i]->t;
    st = ev_move(&c->ev, in, vs, nops, &ints);
    tr_free(vs);
  }
  if (st == TR_OK) st = follow_ids(c, in, ops, ids->data, ints, unsure, out);
  if (st == TR_OK) st = sh_bits_move(c, in, ops, nops, nd, NULL, *out);
  for (int i = 0; i < nd; i++) tr_tensor_free(ts[i]);
  tr_free(ts);
  tr_tensor_free(ids);
  tr_tensor_free(ints);
  return st;
}

tr_status sh_gather(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  if (in->noperands < 2 || !sh_is_arr(ops[0]) || !sh_is_arr(ops[1]) || sh_is_flt(ops[1]))
    return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed gather");
  if (ops[0]->src) return lazy_part(c, in, ops, 2, sh_any_uncertain(ops[1]), out);
  if (planes_movable(in, ops, 1)) {
    tr_status st = move_planes(c, in, ops, 2, 1, ops[1]->t, sh_any_uncertain(ops[1]), out);
    return st == TR_OK ? sh_bits_move(c, in, ops, 2, 1, ops[1]->t, *out) : st;
  }
  tr_tensor *idt = id_tensor(c, in, ops[0], 0);
  if (!idt) return TR_ERR_UNSUPPORTED;
  tr_tensor *ids = NULL, *ints = NULL;
  tr_status st = ev_gather(&c->ev, in, idt, ops[1]->t, &ids);
  if (st == TR_OK && !sh_is_flt(ops[0])) st = ev_gather(&c->ev, in, ops[0]->t, ops[1]->t, &ints);
  if (st == TR_OK) st = follow_ids(c, in, ops, ids->data, ints, sh_any_uncertain(ops[1]), out);
  if (st == TR_OK) st = sh_bits_move(c, in, ops, 2, 1, ops[1]->t, *out);
  tr_tensor_free(idt);
  tr_tensor_free(ids);
  tr_tensor_free(ints);
  return st;
}
