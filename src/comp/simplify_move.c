/* simplify_move.c - the simplifier's rules for data movement: copies,
 * reshapes, transposes, slices, concatenation, padding, dynamic slices,
 * gather and scatter, tuples (simplify_rules.def, docs/COMPILER.md). */
#include "simplify_int.h"

/* ---- data movement ---- */

/* copy(x) -> x: trench ignores layouts for semantics, and copy only
 * changes the layout. */
bool rule_copy_elim(simp *s, tr_instr *in) {
  return fire_replace(s, in, in->operands[0]);
}

/* reshape(x) -> x when the dims are x's already. */
bool rule_reshape_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* reshape(reshape(x)) -> reshape(x): both keep row-major element order. */
bool rule_reshape_of_reshape(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_RESHAPE || !fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x->operands[0]));
}

static bool broadcast_of_scalar(const tr_instr *x) {
  return x->op == TR_OP_BROADCAST && x->operands[0]->shape->rank == 0;
}

/* reshape(broadcast(scalar)) -> broadcast(scalar) of the new dims. */
bool rule_reshape_of_broadcast_scalar(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!broadcast_of_scalar(x) || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

static bool same_layout(const tr_shape *a, const tr_shape *b) {
  if (a->has_layout != b->has_layout) return false;
  if (!a->has_layout) return true;
  if (!a->layout != !b->layout) return false;
  if (a->layout && memcmp(a->layout, b->layout, sizeof(int64_t) * (size_t)a->rank) != 0)
    return false;
  if (!a->layout_ext != !b->layout_ext) return false;
  return !a->layout_ext || strcmp(a->layout_ext, b->layout_ext) == 0;
}

/* bitcast(x) -> x when shape and layout are x's: the bits do not move. */
bool rule_bitcast_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape) || !same_layout(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

static bool perm_identity(const int64_t *p, int n) {
  for (int i = 0; i < n; i++)
    if (p[i] != i) return false;
  return true;
}

/* transpose(x, {0,1,..}) -> x. */
bool rule_transpose_identity(simp *s, tr_instr *in) {
  int n;
  const int64_t *p = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  if (!perm_identity(p, n)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* transpose(transpose(x, p1), p2) -> transpose(x, q), q[i] = p1[p2[i]]
 * (result dim i is inner dim p2[i], which is x dim p1[p2[i]]); x itself
 * when q is the identity. */
bool rule_transpose_of_transpose(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_TRANSPOSE) return false;
  int n1, n2;
  const int64_t *p1 = tr_attr_ints(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *p2 = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n2);
  if (n1 != n2 || n1 > MAX_RANK) return false;
  int64_t q[MAX_RANK];
  for (int i = 0; i < n2; i++) q[i] = p1[p2[i]];
  if (!fire(s, in)) return false;
  if (perm_identity(q, n2)) return replace(s, in, x->operands[0]);
  tr_instr *t = emit1(s, in, TR_OP_TRANSPOSE, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, q, n2);
  return replace(s, in, t);
}

/* transpose(broadcast(scalar)) -> broadcast(scalar): every element is the
 * same. */
bool rule_transpose_of_broadcast_scalar(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!broadcast_of_scalar(x) || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

/* transpose that only moves size-1 dims -> reshape (XLA's "transpose is a
 * bitcast"): the dims larger than 1 keep their order, so the row-major
 * element order is unchanged. */
bool rule_transpose_to_reshape(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *p = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  int64_t last = -1;
  /* defect: the size-1 test reads operand dim i, not the dim p[i] that
   * lands at position i */
  bool wrong_dim = TR_INJECTED(s->ctx->inject, LAYOUT_TRANSPOSE_SIZE1_WRONG_DIM);
  for (int i = 0; i < n; i++) {
    if (x->shape->dims[wrong_dim ? i : p[i]] == 1) continue;
    if (p[i] < last) return false;
    last = p[i];
  }
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x));
}

/* transpose(reshape(x)) where the reshape only inserts or removes size-1
 * dims -> reshape(transpose(x, q)): x and the reshape have the same list
 * of dims larger than 1, so the transpose only reorders that list, and
 * the row-major order of a result depends on nothing else. q puts x's
 * size-1 dims first and then x's larger dims in the order the transpose
 * gives them. A transpose that keeps that order is transpose-to-reshape's
 * (it is tried first). */
bool rule_transpose_of_degenerate_reshape(simp *s, tr_instr *in) {
  tr_instr *r = in->operands[0];
  if (r->op != TR_OP_RESHAPE) return false;
  tr_instr *x = r->operands[0];
  int n, xr = x->shape->rank, rr = r->shape->rank;
  const int64_t *p = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  if (n != rr || xr > MAX_RANK || rr > MAX_RANK) return false;
  /* big[k]: x's k-th dim larger than 1; rank[d]: k for the reshape's dim
   * d (-1 for size 1) */
  int64_t big[MAX_RANK], rank[MAX_RANK], order[MAX_RANK], q[MAX_RANK], dims[MAX_RANK];
  int nbig = 0, k = 0;
  for (int d = 0; d < xr; d++)
    if (x->shape->dims[d] != 1) big[nbig++] = d;
  for (int d = 0; d < rr; d++) {
    rank[d] = -1;
    if (r->shape->dims[d] == 1) continue;
    if (k >= nbig || r->shape->dims[d] != x->shape->dims[big[k]]) return false;
    rank[d] = k++;
  }
  if (k != nbig) return false;
  /* order[j]: the big dim that comes j-th in the result */
  bool moved = false;
  for (int i = 0, j = 0; i < n; i++)
    if (rank[p[i]] >= 0) {
      order[j] = rank[p[i]];
      moved |= order[j] != j;
      j++;
    }
  if (!moved) return false;
  /* defect: the inverse permutation taken for the order (the same for a
   * swap, not for a cycle of three or more) */
  if (TR_INJECTED(s->ctx->inject, LAYOUT_RESHAPE_TRANSPOSE_INVERSE_PERM)) {
    int64_t inv[MAX_RANK];
    for (int j = 0; j < nbig; j++) inv[order[j]] = j;
    memcpy(order, inv, sizeof(int64_t) * (size_t)nbig);
  }
  int nq = 0;
  for (int d = 0; d < xr; d++)
    if (x->shape->dims[d] == 1) q[nq++] = d;
  for (int j = 0; j < nbig; j++) q[nq++] = big[order[j]];
  for (int i = 0; i < xr; i++) dims[i] = x->shape->dims[q[i]];
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_TRANSPOSE, arr(s, x->shape->dtype, xr, dims), x);
  set_ints(s, t, TR_ATTR_DIMENSIONS, q, xr);
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), t));
}

/* slice(x) -> x when it keeps every element (same dims imply start 0 and
 * stride 1 on every dim larger than 1). */
bool rule_slice_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

static const tr_slice_dim *slice_attr(const tr_instr *in, int *n) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_SLICE);
  *n = at ? at->n : 0;
  return at ? at->u.slice : NULL;
}

/* slice(slice(x, s1:l1:t1), s2:l2:t2) -> slice(x, s1+s2*t1 : .. : t1*t2):
 * outer element j is inner element s2+j*t2, which is x element
 * s1+(s2+j*t2)*t1. */
bool rule_slice_of_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_SLICE) return false;
  int n1, n2;
  const tr_slice_dim *a = slice_attr(x, &n1), *b = slice_attr(in, &n2);
  int r = in->shape->rank;
  if (n1 != r || n2 != r || r > MAX_RANK) return false;
  tr_slice_dim d[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t cnt = in->shape->dims[i];
    d[i].stride = a[i].stride * b[i].stride;
    d[i].start = a[i].start + b[i].start * a[i].stride;
    /* defect: the outer start is not scaled by the inner stride (matters
     * only when that stride != 1 and the outer start != 0) */
    if (TR_INJECTED(s->ctx->inject, SIMP_SLICE_OF_SLICE_STRIDE)) d[i].start = a[i].start + b[i].start;
    d[i].limit = d[i].start + (cnt - 1) * d[i].stride + 1;
    if (cnt == 0) d[i].start = d[i].limit = 0;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x->operands[0]);
  set_slice(s, t, d, r);
  return replace(s, in, t);
}

/* slice(concatenate(a0, a1, ..)) -> slice(ak) when the slice along the
 * concatenated dim reads only from ak. */
bool rule_slice_of_concat(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_CONCATENATE) return false;
  int nd, n;
  const int64_t *dd = tr_attr_ints(x, TR_ATTR_DIMENSIONS, &nd);
  const tr_slice_dim *sl = slice_attr(in, &n);
  int r = in->shape->rank;
  if (nd != 1 || n != r || r > MAX_RANK) return false;
  int64_t d = dd[0], cnt = in->shape->dims[d];
  if (cnt == 0) return false;
  int64_t first = sl[d].start, last = sl[d].start + (cnt - 1) * sl[d].stride, off = 0;
  for (int k = 0; k < x->noperands; k++) {
    int64_t size = x->operands[k]->shape->dims[d];
    if (first >= off && last < off + size) {
      if (!fire(s, in)) return false;
      tr_slice_dim nd2[MAX_RANK];
      memcpy(nd2, sl, sizeof(tr_slice_dim) * (size_t)r);
      nd2[d].start = first - off;
      nd2[d].limit = last - off + 1;
      tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x->operands[k]);
      set_slice(s, t, nd2, r);
      return replace(s, in, t);
    }
    off += size;
  }
  return false;
}

static const tr_pad_dim *pad_attr(const tr_instr *in, int *n);

/* slice(pad(x, v)) -> slice(x) when the slice reads no padding. With
 * interior padding q - 1 (q = interior + 1; 1 without), pad element i of
 * a dim is x element (i - lo) / q when i - lo is a multiple of q in
 * [0, (m-1)q], padding otherwise: the slice reads only x when its first
 * index and (for more than one element) its stride are multiples of q
 * away from lo, and then it is the slice of x with start (first - lo) / q
 * and stride stride / q. */
bool rule_slice_of_pad(simp *s, tr_instr *in) {
  tr_instr *p = in->operands[0];
  if (p->op != TR_OP_PAD) return false;
  tr_instr *x = p->operands[0];
  int n, np;
  const tr_slice_dim *sl = slice_attr(in, &n);
  const tr_pad_dim *pd = pad_attr(p, &np);
  int r = in->shape->rank;
  if (n != r || np != r || r > MAX_RANK) return false;
  tr_slice_dim nd[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t cnt = in->shape->dims[i];
    if (pd[i].interior < 0 || pd[i].lo < 0 || pd[i].hi < 0 || cnt == 0) return false;
    int64_t q = pd[i].interior + 1, m = x->shape->dims[i];
    int64_t first = sl[i].start, last = sl[i].start + (cnt - 1) * sl[i].stride;
    if (first < pd[i].lo || last > pd[i].lo + (m - 1) * q || (first - pd[i].lo) % q != 0) return false;
    /* defect: a stride of at least q is taken to step over the gaps,
     * multiple of q or not */
    bool gaps = TR_INJECTED(s->ctx->inject, SIMP_SLICE_DILATED_PAD_STRIDE) ? sl[i].stride < q
                                                                           : sl[i].stride % q != 0;
    if (cnt > 1 && gaps) return false;
    nd[i].start = (first - pd[i].lo) / q;
    nd[i].stride = cnt > 1 ? sl[i].stride / q : 1;
    nd[i].limit = nd[i].start + (cnt - 1) * nd[i].stride + 1;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x);
  set_slice(s, t, nd, r);
  return replace(s, in, t);
}

/* slice(broadcast(y, bd)) -> broadcast(slice(y), bd): a broadcast only
 * maps indices, so slicing commutes with it (the inner slice is left out
 * when it keeps all of y). */
bool rule_slice_of_broadcast(simp *s, tr_instr *in) {
  tr_instr *b = in->operands[0];
  if (b->op != TR_OP_BROADCAST) return false;
  tr_instr *y = b->operands[0];
  int n, nb;
  const tr_slice_dim *sl = slice_attr(in, &n);
  const int64_t *bd = tr_attr_ints(b, TR_ATTR_DIMENSIONS, &nb);
  int yr = y->shape->rank;
  if (n != in->shape->rank || nb != yr || yr > MAX_RANK) return false;
  tr_slice_dim ys[MAX_RANK];
  int64_t dims[MAX_RANK];
  bool full = true;
  for (int i = 0; i < yr; i++) {
    ys[i] = sl[bd[i]];
    dims[i] = in->shape->dims[bd[i]];
    full &= dims[i] == y->shape->dims[i];
  }
  if (!fire(s, in)) return false;
  tr_instr *src = y;
  if (!full) {
    src = emit1(s, in, TR_OP_SLICE, arr(s, y->shape->dtype, yr, dims), y);
    set_slice(s, src, ys, yr);
  }
  tr_instr *t = emit1(s, in, TR_OP_BROADCAST, like(s, in), src);
  set_ints(s, t, TR_ATTR_DIMENSIONS, bd, nb);
  return replace(s, in, t);
}

/* reverse(x, dims) -> x when every reversed dim has at most one element. */
bool rule_reverse_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  for (int i = 0; i < n; i++)
    if (x->shape->dims[d[i]] > 1) return false;
  return fire_replace(s, in, x);
}

/* reverse(reverse(x, d1), d2) -> reverse(x, d1 xor d2), or x. */
bool rule_reverse_of_reverse(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_REVERSE) return false;
  int n1, n2, n = 0;
  const int64_t *d1 = tr_attr_ints(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *d2 = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n2);
  int64_t d[MAX_RANK];
  if (in->shape->rank > MAX_RANK) return false;
  for (int i = 0; i < in->shape->rank; i++)
    if (tr_ints_has(d1, n1, i) != tr_ints_has(d2, n2, i)) d[n++] = i;
  if (!fire(s, in)) return false;
  if (n == 0) return replace(s, in, x->operands[0]);
  tr_instr *t = emit1(s, in, TR_OP_REVERSE, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, d, n);
  return replace(s, in, t);
}

/* broadcast(x) -> x when it adds no dims and keeps their order. */
bool rule_broadcast_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  if (!tr_shape_equal(in->shape, x->shape) || !perm_identity(d, n)) return false;
  return fire_replace(s, in, x);
}

/* broadcast(broadcast(x, d1), d2) -> broadcast(x, d2[d1[i]]). */
bool rule_broadcast_of_broadcast(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_BROADCAST) return false;
  int n1, n2;
  const int64_t *d1 = tr_attr_ints(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *d2 = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n2);
  int r0 = x->operands[0]->shape->rank;
  if (n1 != r0 || n2 != x->shape->rank || r0 > MAX_RANK) return false;
  int64_t d[MAX_RANK];
  for (int i = 0; i < r0; i++) d[i] = d2[d1[i]];
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, d, r0);
  return replace(s, in, t);
}

/* broadcast(iota(k)) -> iota along the dim that k went to. */
bool rule_broadcast_of_iota(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_IOTA) return false;
  int n;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  int64_t k = tr_attr_int(x, TR_ATTR_IOTA_DIMENSION, -1);
  if (k < 0 || k >= n) return false;
  if (!fire(s, in)) return false;
  tr_instr *t = emit(s, in, TR_OP_IOTA, like(s, in), NULL, 0);
  set_int(s, t, TR_ATTR_IOTA_DIMENSION, d[k]);
  return replace(s, in, t);
}

/* Constants this small are cheaper as literals than as broadcasts, and
 * later rules see their values directly. */
#define SPLAT_FOLD_MAX 16

/* broadcast(scalar constant) -> constant when it has at most 16 elements. */
bool rule_broadcast_scalar_const(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  uint64_t bits;
  int64_t n = tr_shape_count(in->shape);
  if (in->shape->rank == 0 || n <= 0 || n > SPLAT_FOLD_MAX) return false;
  if (x->op != TR_OP_CONSTANT || x->shape->rank != 0 || !splat_bits(x, &bits)) return false;
  if (!fire(s, in)) return false;
  tr_instr *c = emit_const(s, in, in->shape->dtype, in->shape->rank, in->shape->dims, bits);
  c->shape = like(s, in); /* keep the layout the users saw */
  return replace(s, in, c);
}

/* concatenate(x) -> x. */
bool rule_concat_single(simp *s, tr_instr *in) {
  if (in->noperands != 1) return false;
  return fire_replace(s, in, in->operands[0]);
}

static int64_t concat_dim(const tr_instr *in) {
  int n;
  const int64_t *d = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  return n == 1 ? d[0] : -1;
}

/* concatenate(.., empty, ..) -> concatenate without the operands that
 * contribute nothing along the concatenated dim. */
bool rule_concat_empty_operand(simp *s, tr_instr *in) {
  int64_t d = concat_dim(in);
  if (d < 0) return false;
  int keep = 0;
  for (int i = 0; i < in->noperands; i++) keep += in->operands[i]->shape->dims[d] != 0;
  if (keep == in->noperands || keep == 0) return false;
  if (!fire(s, in)) return false;
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)keep);
  int k = 0;
  for (int i = 0; i < in->noperands; i++)
    if (in->operands[i]->shape->dims[d] != 0) ops[k++] = in->operands[i];
  tr_instr *t = k == 1 ? ops[0] : emit(s, in, TR_OP_CONCATENATE, like(s, in), ops, k);
  if (k > 1) copy_attrs(s, t, in, TR_ATTR_COUNT, TR_ATTR_COUNT);
  tr_free(ops);
  return replace(s, in, t);
}

/* Whether slices a and b of the same operand are adjacent along d with
 * stride 1 and identical elsewhere. */
static bool adjacent_slices(const tr_instr *a, const tr_instr *b, int64_t d) {
  if (a->op != TR_OP_SLICE || b->op != TR_OP_SLICE || a->operands[0] != b->operands[0])
    return false;
  int na, nb;
  const tr_slice_dim *sa = slice_attr(a, &na), *sb = slice_attr(b, &nb);
  if (na != nb || na != a->shape->rank || na > MAX_RANK) return false;
  for (int i = 0; i < na; i++) {
    if (i == d) continue;
    if (sa[i].start != sb[i].start || sa[i].limit != sb[i].limit || sa[i].stride != sb[i].stride)
      return false;
  }
  return sa[d].stride == 1 && sb[d].stride == 1 && sa[d].limit == sb[d].start;
}

/* concatenate(slice(x, a:b), slice(x, b:c)) -> slice(x, a:c) along the
 * concatenated dim; every adjacent run merges in one application. */
bool rule_concat_adjacent_slices(simp *s, tr_instr *in) {
  int64_t d = concat_dim(in);
  int n = in->noperands;
  if (d < 0) return false;
  bool any = false;
  for (int i = 0; i + 1 < n && !any; i++) any = adjacent_slices(in->operands[i], in->operands[i + 1], d);
  if (!any || !fire(s, in)) return false;
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)n);
  int k = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && adjacent_slices(in->operands[j], in->operands[j + 1], d)) j++;
    if (j == i) {
      ops[k++] = in->operands[i++];
      continue;
    }
    tr_instr *first = in->operands[i], *lastop = in->operands[j];
    int r;
    const tr_slice_dim *sf = slice_attr(first, &r);
    const tr_slice_dim *sl = slice_attr(lastop, &r);
    tr_slice_dim nd[MAX_RANK];
    int64_t dims[MAX_RANK];
    memcpy(nd, sf, sizeof(tr_slice_dim) * (size_t)r);
    nd[d].limit = sl[d].limit;
    memcpy(dims, first->shape->dims, sizeof(int64_t) * (size_t)r);
    dims[d] = nd[d].limit - nd[d].start;
    tr_instr *t = emit1(s, in, TR_OP_SLICE, arr(s, in->shape->dtype, r, dims), first->operands[0]);
    set_slice(s, t, nd, r);
    ops[k++] = t;
    i = j + 1;
  }
  tr_instr *t;
  if (k == 1) {
    t = ops[0];
    t->shape = like(s, in);
  } else {
    t = emit(s, in, TR_OP_CONCATENATE, like(s, in), ops, k);
    copy_attrs(s, t, in, TR_ATTR_COUNT, TR_ATTR_COUNT);
  }
  tr_free(ops);
  return replace(s, in, t);
}

static const tr_pad_dim *pad_attr(const tr_instr *in, int *n) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_PADDING);
  *n = at ? at->n : 0;
  return at ? at->u.pad : NULL;
}

/* pad(x, v, 0_0_0 everywhere) -> x. */
bool rule_pad_noop(simp *s, tr_instr *in) {
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  for (int i = 0; i < n; i++)
    if (p[i].lo || p[i].hi || p[i].interior) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* Interior padding goes between elements: a dim of 0 or 1 elements has no
 * gaps, so its interior padding is dropped (pad-noop may follow). */
bool rule_pad_interior_trivial(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  if (n != x->shape->rank || n > MAX_RANK) return false;
  tr_pad_dim q[MAX_RANK];
  bool any = false;
  for (int i = 0; i < n; i++) {
    q[i] = p[i];
    if (p[i].interior && x->shape->dims[i] <= 1) {
      q[i].interior = 0;
      any = true;
    }
  }
  if (!any || !fire(s, in)) return false;
  tr_instr *t = emit2(s, in, TR_OP_PAD, like(s, in), x, in->operands[1]);
  set_pad(s, t, q, n);
  return replace(s, in, t);
}

/* pad with negative edge padding -> slice(pad with the non-negative part):
 * negative padding removes elements from the edges of the interior- and
 * edge-padded array, which is exactly a slice of it. The inner pad is
 * left out when nothing remains of it. */
bool rule_pad_negative_to_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  if (n != x->shape->rank || n > MAX_RANK) return false;
  bool neg = false, inner = false;
  for (int i = 0; i < n; i++) {
    neg |= p[i].lo < 0 || p[i].hi < 0;
    inner |= p[i].lo > 0 || p[i].hi > 0 || p[i].interior > 0;
  }
  if (!neg || !fire(s, in)) return false;
  tr_pad_dim q[MAX_RANK];
  tr_slice_dim sl[MAX_RANK];
  int64_t dims[MAX_RANK];
  for (int i = 0; i < n; i++) {
    int64_t m = x->shape->dims[i];
    q[i].lo = p[i].lo > 0 ? p[i].lo : 0;
    q[i].hi = p[i].hi > 0 ? p[i].hi : 0;
    q[i].interior = p[i].interior;
    dims[i] = q[i].lo + q[i].hi + m + (m > 0 ? (m - 1) * p[i].interior : 0);
    sl[i].start = p[i].lo < 0 ? -p[i].lo : 0;
    sl[i].limit = dims[i] - (p[i].hi < 0 ? -p[i].hi : 0);
    sl[i].stride = 1;
  }
  tr_instr *base = x;
  if (inner) {
    base = emit2(s, in, TR_OP_PAD, arr(s, x->shape->dtype, n, dims), x, in->operands[1]);
    set_pad(s, base, q, n);
  }
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), base);
  set_slice(s, t, sl, n);
  return replace(s, in, t);
}

/* dynamic-slice and -update-slice in the scalar-index form: operand i
 * (from `first`) is the start along dim i. The old single-vector form is
 * left alone. */
static bool scalar_indices(const tr_instr *in, int first, int rank) {
  if (in->noperands != first + rank) return false;
  for (int i = first; i < in->noperands; i++)
    if (in->operands[i]->shape->rank != 0 || !is_int(in->operands[i])) return false;
  return true;
}

/* dynamic-slice(x, ..) -> x when the slice is as large as x: every start
 * is clamped to 0. */
bool rule_dynamic_slice_full(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* XLA's start clamping: the reference reads each index as int64 (a u64 of
 * 2^63 or more is negative) and clamps it to [0, dim - size]. */
static int64_t clamp_start(int64_t v, int64_t dim, int64_t size) {
  if (v > dim - size) v = dim - size;
  if (v < 0) v = 0;
  return v;
}

/* dynamic-slice(x, constant starts) -> slice(x) at the clamped starts. */
bool rule_dynamic_slice_const(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int r = x->shape->rank;
  if (!scalar_indices(in, 1, r) || r > MAX_RANK) return false;
  tr_slice_dim sl[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t v;
    if (!splat_int(in->operands[1 + i], &v)) return false;
    /* defect: a negative constant start wraps from the end (Python's
     * indexing) before the clamp, instead of clamping to 0 */
    if (TR_INJECTED(s->ctx->inject, SIMP_DYNAMIC_SLICE_NEGATIVE_WRAP) && v < 0 && v >= -x->shape->dims[i])
      v += x->shape->dims[i];
    sl[i].start = clamp_start(v, x->shape->dims[i], in->shape->dims[i]);
    sl[i].limit = sl[i].start + in->shape->dims[i];
    sl[i].stride = 1;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x);
  set_slice(s, t, sl, r);
  return replace(s, in, t);
}

/* The start idx clamped to [0, hi] as an s64 instruction (a constant when
 * idx is one). Converting to s64 first matches the reference, which reads
 * every index as int64; clamping in s64 cannot overflow. */
static tr_instr *clamped_s64(simp *s, tr_instr *pos, tr_instr *idx, int64_t hi, int64_t *cval,
                             bool *is_const) {
  int64_t v;
  if (splat_int(idx, &v)) {
    *is_const = true;
    *cval = clamp_start(v, hi, 0);
    return NULL;
  }
  *is_const = false;
  tr_instr *x = idx;
  if (idx->shape->dtype != TR_DT_S64) x = emit1(s, pos, TR_OP_CONVERT, arr(s, TR_DT_S64, 0, NULL), idx);
  tr_instr *lo = emit_const(s, pos, TR_DT_S64, 0, NULL, 0);
  tr_instr *up = emit_const(s, pos, TR_DT_S64, 0, NULL, (uint64_t)hi);
  tr_instr *ops[3] = {lo, x, up};
  return emit(s, pos, TR_OP_CLAMP, arr(s, TR_DT_S64, 0, NULL), ops, 3);
}

/* dynamic-slice(dynamic-slice(x, i), j) -> dynamic-slice(x, i' + j') with
 * i' = clamp(i, 0, X - S1) and j' = clamp(j, 0, S1 - S2) in s64: the
 * inner and outer clamps made explicit. The sum lies in [0, X - S2], so
 * the new slice's own clamp changes nothing. */
bool rule_dynamic_slice_nested(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_DYNAMIC_SLICE) return false;
  tr_instr *x = y->operands[0];
  int r = x->shape->rank;
  if (r > MAX_RANK || !scalar_indices(in, 1, r) || !scalar_indices(y, 1, r)) return false;
  if (!fire(s, in)) return false;
  tr_instr *ops[1 + MAX_RANK];
  ops[0] = x;
  for (int d = 0; d < r; d++) {
    int64_t X = x->shape->dims[d], S1 = y->shape->dims[d], S2 = in->shape->dims[d];
    int64_t ci, cj;
    bool ki, kj;
    tr_instr *a = clamped_s64(s, in, y->operands[1 + d], X - S1, &ci, &ki);
    tr_instr *b = clamped_s64(s, in, in->operands[1 + d], S1 - S2, &cj, &kj);
    /* defect: the outer start is converted but its clamp is dropped (the
     * clamp's operand 1 is the converted start) */
    if (!kj && TR_INJECTED(s->ctx->inject, SIMP_DS_NESTED_LOST_CLAMP)) b = b->operands[1];
    tr_shape *sc = arr(s, TR_DT_S64, 0, NULL);
    if (ki && kj) ops[1 + d] = emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)(ci + cj));
    else if (ki) ops[1 + d] = ci ? emit2(s, in, TR_OP_ADD, sc, emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)ci), b) : b;
    else if (kj) ops[1 + d] = cj ? emit2(s, in, TR_OP_ADD, sc, a, emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)cj)) : a;
    else ops[1 + d] = emit2(s, in, TR_OP_ADD, sc, a, b);
  }
  tr_instr *t = emit(s, in, TR_OP_DYNAMIC_SLICE, like(s, in), ops, 1 + r);
  set_ints(s, t, TR_ATTR_DYNAMIC_SLICE_SIZES, in->shape->dims, r);
  return replace(s, in, t);
}

/* dynamic-update-slice(x, u, ..) -> u when u is as large as x: the start
 * is clamped to 0 and u overwrites everything. */
bool rule_dus_full(simp *s, tr_instr *in) {
  tr_instr *u = in->operands[1];
  if (!tr_shape_equal(in->shape, u->shape)) return false;
  return fire_replace(s, in, u);
}

/* gather whose slice is the whole operand and that gathers it once ->
 * reshape(operand): every start clamps to 0, and the offset dims keep the
 * operand's order (collapsed dims have size 1). */
bool rule_gather_whole_operand(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n, nb;
  const int64_t *sz = tr_attr_ints(in, TR_ATTR_SLICE_SIZES, &n);
  tr_attr_ints(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nb);
  if (nb || n != x->shape->rank || in->shape->dtype != x->shape->dtype) return false;
  for (int i = 0; i < n; i++)
    if (sz[i] != x->shape->dims[i]) return false;
  if (tr_shape_count(in->shape) != tr_shape_count(x->shape)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x));
}

/* Element k of a constant integer array, read as the reference reads
 * indices: as int64 (signed types sign-extended, unsigned zero-extended). */
static bool const_int_at(const tr_instr *x, int64_t k, int64_t *v) {
  if (x->op != TR_OP_CONSTANT || !x->literal || x->literal->elided || !x->literal->data || !is_int(x))
    return false;
  tr_dtype dt = x->shape->dtype;
  int es = tr_dtype_size(dt), w = es * 8;
  uint64_t b = slot_load(x->literal->data, es, k);
  *v = tr_dtypes[dt].kind == TR_DK_SINT && w < 64 ? (int64_t)(b << (64 - w)) >> (64 - w) : (int64_t)b;
  return true;
}

/* gather(x, constant indices) that gathers one slice -> reshape(slice(x))
 * at the clamped start: gather clamps each start so the slice fits, and
 * with a single batch element the output is the slice in row-major order
 * (offset dims follow the operand's order, collapsed dims have size 1). */
bool rule_gather_const_to_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0], *idx = in->operands[1];
  int n, nmap, nb;
  const int64_t *sz = tr_attr_ints(in, TR_ATTR_SLICE_SIZES, &n);
  const int64_t *map = tr_attr_ints(in, TR_ATTR_START_INDEX_MAP, &nmap);
  tr_attr_ints(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nb);
  int64_t ivd = tr_attr_int(in, TR_ATTR_INDEX_VECTOR_DIM, -1);
  int r = x->shape->rank;
  if (nb || n != r || r > MAX_RANK || ivd < 0 || ivd > idx->shape->rank) return false;
  int64_t ncomp = ivd < idx->shape->rank ? idx->shape->dims[ivd] : 1;
  if (ncomp != nmap || nmap == 0 || tr_shape_count(idx->shape) != ncomp) return false;
  tr_slice_dim sl[MAX_RANK];
  int64_t dims[MAX_RANK];
  for (int d = 0; d < r; d++) {
    sl[d].start = 0;
    sl[d].stride = 1;
    dims[d] = sz[d];
  }
  for (int k = 0; k < nmap; k++) {
    int64_t v;
    if (!const_int_at(idx, k, &v)) return false;
    sl[map[k]].start = clamp_start(v, x->shape->dims[map[k]], sz[map[k]]);
  }
  for (int d = 0; d < r; d++) sl[d].limit = sl[d].start + sz[d];
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, arr(s, x->shape->dtype, r, dims), x);
  set_slice(s, t, sl, r);
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), t));
}

/* scatter with no update elements (or into an empty operand) -> operand. */
bool rule_scatter_no_updates(simp *s, tr_instr *in) {
  if (in->noperands != 3) return false;
  if (tr_shape_count(in->operands[2]->shape) != 0 && tr_shape_count(in->operands[0]->shape) != 0)
    return false;
  return fire_replace(s, in, in->operands[0]);
}


/* scatter(x, zero indices, u) whose combiner returns the update and whose
 * single window covers all of x -> reshape(u). The window is in bounds at
 * start 0, so it is applied, and it overwrites every element. */
bool rule_scatter_overwrite_whole(simp *s, tr_instr *in) {
  if (in->noperands != 3) return false;
  tr_instr *x = in->operands[0], *idx = in->operands[1], *u = in->operands[2];
  tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  if (!k || k->nparams != 2 || !k->root || k->root->op != TR_OP_PARAMETER || k->root->param_index != 1)
    return false;
  int nw, nins, nb;
  const int64_t *uw = tr_attr_ints(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nw);
  const int64_t *ins = tr_attr_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
  tr_attr_ints(in, TR_ATTR_INPUT_BATCHING_DIMS, &nb);
  if (nb || nw + nins != x->shape->rank || u->shape->dtype != x->shape->dtype) return false;
  /* Window dims of u, in order, are x's non-inserted dims, in order. */
  int w = 0;
  for (int i = 0; i < x->shape->rank; i++) {
    if (tr_ints_has(ins, nins, i)) {
      if (x->shape->dims[i] != 1) return false;
      continue;
    }
    if (w >= nw || u->shape->dims[uw[w]] != x->shape->dims[i]) return false;
    w++;
  }
  if (tr_shape_count(u->shape) != tr_shape_count(x->shape) || !int_is(idx, 0)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), u));
}

/* The single window of scatter(x, constant indices, u): its size win[d]
 * and start start[d] on every dim of x (inserted dims have size 1, the
 * others take u's window dims in order; one scatter index, so u holds
 * exactly one window). False when the scatter is not of that form. */
static bool scatter_const_window(const tr_instr *in, int64_t *win, int64_t *start) {
  if (in->noperands != 3) return false;
  tr_instr *x = in->operands[0], *idx = in->operands[1], *u = in->operands[2];
  int nw, nins, nb, nmap;
  const int64_t *uw = tr_attr_ints(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nw);
  const int64_t *ins = tr_attr_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
  const int64_t *map = tr_attr_ints(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nmap);
  tr_attr_ints(in, TR_ATTR_INPUT_BATCHING_DIMS, &nb);
  int64_t ivd = tr_attr_int(in, TR_ATTR_INDEX_VECTOR_DIM, -1);
  int r = x->shape->rank;
  if (nb || nw + nins != r || r > MAX_RANK || ivd < 0 || ivd > idx->shape->rank) return false;
  int64_t ncomp = ivd < idx->shape->rank ? idx->shape->dims[ivd] : 1;
  if (ncomp != nmap || tr_shape_count(idx->shape) != ncomp) return false;
  for (int d = 0, w = 0; d < r; d++) {
    start[d] = 0;
    if (tr_ints_has(ins, nins, d)) win[d] = 1;
    else if (w < nw) win[d] = u->shape->dims[uw[w++]];
    else return false;
  }
  int64_t wcount = 1;
  for (int d = 0; d < r; d++) wcount *= win[d];
  if (wcount != tr_shape_count(u->shape) || wcount == 0) return false;
  for (int j = 0; j < nmap; j++) {
    int64_t v;
    if (!const_int_at(idx, j, &v)) return false;
    start[map[j]] = v;
  }
  return true;
}

/* Whether the window lies inside x: scatter skips a window that would
 * leave the operand (where dynamic-update-slice would clamp it back in),
 * so the bounds decide at compile time. */
static bool scatter_window_inside(simp *s, const tr_instr *in, const int64_t *win, int64_t *start) {
  const tr_instr *x = in->operands[0];
  int nins;
  const int64_t *ins = tr_attr_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
  bool inside = true;
  for (int d = 0; d < x->shape->rank; d++) {
    /* defect: an inserted dim's size-1 window is taken to fit wherever it
     * starts (and is then clamped in) */
    if (TR_INJECTED(s->ctx->inject, SIMP_SCATTER_SIZE1_INSIDE) && tr_ints_has(ins, nins, d)) {
      start[d] = clamp_start(start[d], x->shape->dims[d], 1);
      continue;
    }
    inside &= start[d] >= 0 && start[d] <= x->shape->dims[d] - win[d];
  }
  return inside;
}

/* scatter(x, constant indices, u) of a single window whose combiner
 * returns the update -> dynamic-update-slice(x, reshape(u), starts) when
 * the window lies inside x, and x itself when it does not. */
bool rule_scatter_const_to_dus(simp *s, tr_instr *in) {
  tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  if (!k || k->nparams != 2 || !k->root || k->root->op != TR_OP_PARAMETER || k->root->param_index != 1)
    return false;
  int64_t win[MAX_RANK], start[MAX_RANK];
  if (!scatter_const_window(in, win, start)) return false;
  tr_instr *x = in->operands[0], *u = in->operands[2];
  int r = x->shape->rank;
  bool inside = scatter_window_inside(s, in, win, start);
  if (!fire(s, in)) return false;
  if (!inside) return replace(s, in, x);
  tr_instr *ops[1 + 1 + MAX_RANK];
  ops[0] = x;
  ops[1] = emit1(s, in, TR_OP_RESHAPE, arr(s, u->shape->dtype, r, win), u);
  for (int d = 0; d < r; d++) ops[2 + d] = emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)start[d]);
  return replace(s, in, emit(s, in, TR_OP_DYNAMIC_UPDATE_SLICE, like(s, in), ops, 2 + r));
}

/* scatter(x, constant indices, u) of a single window with an add
 * combiner -> add(x, pad(reshape(u))) when the window lies inside x, x
 * when it does not: outside the window x gains the additive identity
 * (-0.0 for floats, which keeps -0.0; 0 for integers), inside it gains u
 * in the combiner's operand order (add(x, u), or add(u, x) when the
 * combiner swaps them). */
bool rule_scatter_const_add_to_pad(simp *s, tr_instr *in) {
  tr_op op;
  bool swap;
  if (!simple_binary(tr_attr_comp(in, TR_ATTR_TO_APPLY), &op, &swap) || op != TR_OP_ADD) return false;
  tr_instr *x = in->operands[0], *u = in->operands[2];
  tr_dtype dt = x->shape->dtype;
  if (!(tr_dtype_is_int(dt) || tr_dtype_is_float(dt)) || u->shape->dtype != dt) return false;
  int64_t win[MAX_RANK], start[MAX_RANK];
  if (!scatter_const_window(in, win, start)) return false;
  int r = x->shape->rank;
  bool inside = scatter_window_inside(s, in, win, start);
  if (!fire(s, in)) return false;
  if (!inside) return replace(s, in, x);
  tr_pad_dim pd[MAX_RANK];
  for (int d = 0; d < r; d++) {
    pd[d].lo = start[d];
    pd[d].hi = x->shape->dims[d] - start[d] - win[d];
    pd[d].interior = 0;
  }
  uint64_t zero = tr_dtype_is_float(dt) ? tr_float_from_double(dt, -0.0) : 0;
  tr_instr *z = emit_const(s, in, dt, 0, NULL, zero);
  tr_instr *w = emit1(s, in, TR_OP_RESHAPE, arr(s, dt, r, win), u);
  tr_instr *p = emit2(s, in, TR_OP_PAD, like(s, in), w, z);
  set_pad(s, p, pd, r);
  return replace(s, in, swap ? emit2(s, in, TR_OP_ADD, like(s, in), p, x) : emit2(s, in, TR_OP_ADD, like(s, in), x, p));
}

/* get-tuple-element(tuple(a0, a1, ..), i) -> ai. */
bool rule_gte_of_tuple(simp *s, tr_instr *in) {
  tr_instr *t = in->operands[0];
  int64_t i = tr_attr_int(in, TR_ATTR_INDEX, -1);
  if (t->op != TR_OP_TUPLE || i < 0 || i >= t->noperands) return false;
  return fire_replace(s, in, t->operands[i]);
}

/* tuple(gte(t, 0), .., gte(t, n-1)) -> t when t has exactly n elements. */
bool rule_tuple_of_gtes(simp *s, tr_instr *in) {
  if (in->noperands == 0) return false;
  tr_instr *t = NULL;
  for (int i = 0; i < in->noperands; i++) {
    tr_instr *g = in->operands[i];
    if (g->op != TR_OP_GET_TUPLE_ELEMENT || tr_attr_int(g, TR_ATTR_INDEX, -1) != i) return false;
    if (t && g->operands[0] != t) return false;
    t = g->operands[0];
  }
  if (t->shape->dtype != TR_DT_TUPLE || t->shape->nelems != in->noperands ||
      !tr_shape_equal(t->shape, in->shape))
    return false;
  return fire_replace(s, in, t);
}

