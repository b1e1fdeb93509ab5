/* infer_reduce.c - shape rules of reduce, reduce-window,
 * select-and-scatter, sort and topk, with the reducer check (also used
 * by scatter) and the window arithmetic (also used by convolution). */
#include "inferint.h"

/* Element i of a result that is either one shape or a tuple. */
static const tr_shape *elem_of(const tr_shape *s, int i) {
  return s->dtype == TR_DT_TUPLE ? s->elems[i] : s;
}

/* XLA's VerifyReducerShape: the computation takes n accumulators then n
 * inputs, all scalars, and returns n scalars (a tuple when n > 1).
 * Accumulator i has exactly the type returned at i; init value i and input
 * i must match it up to float precision. The returned types go to acc. */
bool in_check_reducer(in_ctx *c, tr_attr_key key, int n, const tr_dtype *init,
                      const tr_dtype *input, tr_dtype *acc) {
  const tr_comp *k = in_callee(c, key, 2 * n);
  if (!k) return false;
  const char *an = tr_attrs[key].name;
  const tr_shape *r = k->root->shape;
  int ne = r->dtype == TR_DT_TUPLE ? r->nelems : 1;
  if ((r->dtype != TR_DT_TUPLE && n != 1) || ne != n)
    return in_bad(c, "%s computation %s must return %d scalar(s) but returns %s", an, k->name, n,
                  in_str(c, r));
  for (int i = 0; i < n; i++)
    if (!in_is_scalar(elem_of(r, i)))
      return in_bad(c, "%s computation %s must return scalars but returns %s", an, k->name, in_str(c, r));
  for (int i = 0; i < n; i++) {
    acc[i] = elem_of(r, i)->dtype;
    if (!in_scalar_param(c, an, k, i, acc[i])) return false;
    const tr_shape *q = in_param_shape(k, n + i);
    if (!in_is_scalar(q) || !in_same_ignoring_fp(q->dtype, acc[i]))
      return in_bad(c, "parameter %d of %s computation %s has shape %s but it returns %s", n + i,
                    an, k->name, in_str(c, q), in_str(c, r));
    if (!in_same_ignoring_fp(init[i], acc[i]))
      return in_bad(c, "init value %d of %s has type %s but %s computation %s accumulates %s", i,
                    c->op, tr_dtype_name(init[i]), an, k->name, tr_dtype_name(acc[i]));
    if (!in_same_ignoring_fp(input[i], q->dtype))
      return in_bad(c, "input %d of %s has element type %s but parameter %d of %s computation %s is %s",
                    i, c->op, tr_dtype_name(input[i]), n + i, an, k->name, in_str(c, q));
  }
  return true;
}

/* ---- windows ---- */
/* XLA's InferWindowOutputShape for the n window dims over base sizes. */
bool in_window_out(in_ctx *c, const tr_window_dim *w, int n, const int64_t *base,
                   int64_t *out) {
  for (int i = 0; i < n; i++) {
    const tr_window_dim *d = &w[i];
    if (d->size <= 0)
      return in_bad(c, "%s window dimension %d has size %lld; sizes must be positive", c->op, i,
                    (long long)d->size);
    if (d->stride <= 0)
      return in_bad(c, "%s window dimension %d has stride %lld; strides must be positive", c->op,
                    i, (long long)d->stride);
    if (d->lhs_dilate < 1 || d->rhs_dilate < 1)
      return in_bad(c, "%s window dimension %d has dilation %lldx%lld; dilations must be at least 1",
                    c->op, i, (long long)d->lhs_dilate, (long long)d->rhs_dilate);
    if (base[i] < 0) {
      out[i] = -1;
      continue;
    }
    /* Dilating n elements by d gives (n - 1) * d + 1 (0 stays 0). */
    int64_t db = 0, dw, pb;
    if ((base[i] > 0 && (__builtin_mul_overflow(base[i] - 1, d->lhs_dilate, &db) ||
                         __builtin_add_overflow(db, 1, &db))) ||
        __builtin_mul_overflow(d->size - 1, d->rhs_dilate, &dw) ||
        __builtin_add_overflow(dw, 1, &dw) || __builtin_add_overflow(d->pad_lo, d->pad_hi, &pb) ||
        __builtin_add_overflow(pb, db, &pb))
      return in_bad(c, "%s window dimension %d overflows", c->op, i);
    out[i] = dw > pb ? 0 : (pb - dw) / d->stride + 1;
  }
  return true;
}

/* N inputs then N scalar init values, shared by reduce and reduce-window;
 * fills the reducer's types. */
static bool reduce_operands(in_ctx *c, int *nin, tr_dtype **acc) {
  int n = in_nopnds(c);
  if (n < 2 || n % 2)
    return in_bad(c, "%s needs N inputs and N init values (an even count of at least 2), not %d operands", c->op, n);
  *nin = n / 2;
  if (!in_want_arrays(c, 0, n)) return false;
  const tr_shape *o = in_opnd(c, 0);
  for (int i = 1; i < *nin; i++)
    if (!in_same_dims(in_opnd(c, i), o))
      return in_bad(c, "input %d of %s has shape %s but input 0 has %s", i, c->op, in_str(c, in_opnd(c, i)), in_str(c, o));
  for (int i = *nin; i < n; i++)
    if (!in_want_scalar(c, i, "init value")) return false;
  tr_dtype *t = tr_arena_alloc(c->a, sizeof(tr_dtype) * (size_t)n * 2);
  for (int i = 0; i < *nin; i++) {
    t[i] = in_opnd(c, *nin + i)->dtype; /* init */
    t[*nin + i] = in_opnd(c, i)->dtype; /* input */
  }
  *acc = t + n;
  return in_check_reducer(c, TR_ATTR_TO_APPLY, *nin, t, t + *nin, *acc);
}

tr_shape *in_r_reduce(in_ctx *c) {
  int nin;
  tr_dtype *acc;
  const tr_attr *at = in_need(c, TR_ATTR_DIMENSIONS);
  if (!at || !reduce_operands(c, &nin, &acc)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  if (!in_dims_ok(c, "dimensions", at->u.ints, at->n, o->rank, false)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    el[i] = in_new_array(c, acc[i], o->rank - at->n);
    for (int d = 0, k = 0; d < o->rank; d++)
      if (!tr_ints_has(at->u.ints, at->n, d)) el[i]->dims[k++] = in_opnd(c, i)->dims[d];
  }
  return in_tuple_of(c, el, nin);
}

tr_shape *in_r_reduce_window(in_ctx *c) {
  int nin;
  tr_dtype *acc;
  if (!reduce_operands(c, &nin, &acc)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  const tr_attr *w = in_attr(c, TR_ATTR_WINDOW);
  int nw = w ? w->n : 0;
  if (nw != o->rank)
    return IN_FAIL("window of reduce-window has %d dimensions but the input %s has rank %d", nw, in_str(c, o), o->rank);
  int64_t *out = in_scratch_ints(c, o->rank);
  if (!in_window_out(c, w ? w->u.win : NULL, nw, o->dims, out)) return NULL;
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)nin);
  for (int i = 0; i < nin; i++) {
    el[i] = in_new_array(c, acc[i], o->rank);
    for (int d = 0; d < o->rank; d++) el[i]->dims[d] = out[d];
  }
  return in_tuple_of(c, el, nin);
}

tr_shape *in_r_select_and_scatter(in_ctx *c) {
  if (!in_want_arrays(c, 0, 3)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *src = in_opnd(c, 1);
  if (!in_want_scalar(c, 2, "init value")) return NULL;
  const tr_attr *w = in_attr(c, TR_ATTR_WINDOW);
  int nw = w ? w->n : 0;
  if (nw != o->rank)
    return IN_FAIL("window of select-and-scatter has %d dimensions but the operand %s has rank %d", nw,
                   in_str(c, o), o->rank);
  tr_shape *ws = in_new_array(c, o->dtype, o->rank);
  if (!in_window_out(c, w ? w->u.win : NULL, nw, o->dims, ws->dims)) return NULL;
  if (!in_same_dims(src, ws) || !in_same_ignoring_fp(src->dtype, o->dtype))
    return IN_FAIL("source %s of select-and-scatter must have the window-reduced operand shape %s",
                   in_str(c, src), in_str(c, ws));
  const tr_comp *sel = in_callee(c, TR_ATTR_SELECT, 2);
  if (!sel || !in_scalar_param(c, "select", sel, 0, o->dtype) ||
      !in_scalar_param(c, "select", sel, 1, o->dtype))
    return NULL;
  if (!in_is_scalar(sel->root->shape) || sel->root->shape->dtype != TR_DT_PRED)
    return IN_FAIL("select computation %s must return pred[] but returns %s", sel->name,
                   in_str(c, sel->root->shape));
  tr_dtype init = in_opnd(c, 2)->dtype, acc;
  if (!in_check_reducer(c, TR_ATTR_SCATTER, 1, &init, &src->dtype, &acc)) return NULL;
  return in_clone(c, o);
}

tr_shape *in_r_sort(in_ctx *c) {
  int n = in_nopnds(c);
  if (!in_min_operands(c, 1) || !in_want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  for (int i = 1; i < n; i++)
    if (!in_same_dims(in_opnd(c, i), o))
      return IN_FAIL("operand %d of sort has shape %s but operand 0 has %s", i, in_str(c, in_opnd(c, i)), in_str(c, o));
  const tr_attr *at = in_need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  if (at->n != 1)
    return IN_FAIL("sort needs exactly one dimension, not dimensions=%s", in_list(c, at->u.ints, at->n));
  if (at->u.ints[0] < 0 || at->u.ints[0] >= o->rank)
    return IN_FAIL("sort dimension %lld is out of range for %s", (long long)at->u.ints[0], in_str(c, o));
  const tr_comp *k = in_callee(c, TR_ATTR_TO_APPLY, 2 * n);
  if (!k) return NULL;
  for (int i = 0; i < n; i++)
    if (!in_scalar_param(c, "to_apply", k, 2 * i, in_opnd(c, i)->dtype) ||
        !in_scalar_param(c, "to_apply", k, 2 * i + 1, in_opnd(c, i)->dtype))
      return NULL;
  if (!in_is_scalar(k->root->shape) || k->root->shape->dtype != TR_DT_PRED)
    return IN_FAIL("sort comparator %s must return pred[] but returns %s", k->name, in_str(c, k->root->shape));
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)n);
  for (int i = 0; i < n; i++) el[i] = in_clone(c, in_opnd(c, i));
  return in_tuple_of(c, el, n);
}

tr_shape *in_r_topk(in_ctx *c) {
  const tr_shape *o = in_opnd(c, 0);
  const tr_attr *at = in_need(c, TR_ATTR_K);
  if (!at) return NULL;
  if (o->rank < 1) return IN_FAIL("topk needs an operand of rank 1 or more, not %s", in_str(c, o));
  int64_t last = o->dims[o->rank - 1];
  if (at->u.i < 0 || (last >= 0 && at->u.i > last))
    return IN_FAIL("topk k=%lld is not within [0, %lld] of %s", (long long)at->u.i, (long long)last, in_str(c, o));
  tr_shape *el[2] = {in_clone(c, o), in_clone(c, o)};
  el[0]->dims[o->rank - 1] = el[1]->dims[o->rank - 1] = at->u.i;
  el[1]->dtype = TR_DT_S32;
  return tr_shape_tuple(c->a, 2, el);
}
