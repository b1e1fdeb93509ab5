/* infer_move.c - shape rules of the ops that move or reinterpret data
 * without arithmetic: broadcast, reshape, bitcast, transpose, convert,
 * bitcast-convert, slice, concatenate, pad and reverse. */
#include "inferint.h"

/* Element count, or -1 when unknown (dynamic) or too big for int64. */
static int64_t count(const tr_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) {
    if (s->dims[i] < 0 || __builtin_mul_overflow(n, s->dims[i], &n)) return -1;
  }
  return n;
}

/* HLO's broadcast: operand dimension i becomes result dimension
 * dimensions[i]; the result dims come from the declared shape. */
tr_shape *in_r_broadcast(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *d = in_want_decl(c);
  if (!d) return NULL;
  const tr_attr *at = in_attr(c, TR_ATTR_DIMENSIONS);
  int n = at ? at->n : 0;
  const int64_t *v = at ? at->u.ints : NULL;
  if (n != o->rank)
    return IN_FAIL("broadcast dimensions=%s has %d entries but the operand %s has rank %d",
                   in_list(c, v, n), n, in_str(c, o), o->rank);
  if (!in_dims_ok(c, "dimensions", v, n, d->rank, false)) return NULL;
  for (int i = 0; i < n; i++)
    if (!in_dim_eq(o->dims[i], d->dims[v[i]]))
      return IN_FAIL("broadcast maps operand dimension %d (size %lld) to result dimension %lld of size %lld",
                     i, (long long)o->dims[i], (long long)v[i], (long long)d->dims[v[i]]);
  tr_shape *r = in_new_array(c, o->dtype, d->rank);
  for (int i = 0; i < d->rank; i++) r->dims[i] = d->dims[i];
  return r;
}

tr_shape *in_r_reshape(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *d = in_want_decl(c);
  if (!d) return NULL;
  int64_t n1 = count(o), n2 = count(d);
  if (n1 >= 0 && n2 >= 0 && n1 != n2)
    return IN_FAIL("reshape from %s to %s changes the element count from %lld to %lld", in_str(c, o),
                   in_str(c, d), (long long)n1, (long long)n2);
  tr_shape *r = in_new_array(c, o->dtype, d->rank);
  for (int i = 0; i < d->rank; i++) r->dims[i] = d->dims[i];
  return r;
}

static int64_t bits_of(const tr_shape *s) {
  int64_t n = count(s), b;
  if (n < 0 || __builtin_mul_overflow(n, (int64_t)tr_dtypes[s->dtype].bits, &b)) return -1;
  return b;
}

tr_shape *in_r_bitcast(in_ctx *c) {
  if (!c->decl) return IN_FAIL("bitcast needs a declared shape");
  const tr_shape *o = in_opnd(c, 0), *d = c->decl;
  if (in_is_array(o) && in_is_array(d)) {
    int64_t b1 = bits_of(o), b2 = bits_of(d);
    if (b1 >= 0 && b2 >= 0 && b1 != b2)
      return IN_FAIL("bitcast from %s to %s changes the size from %lld to %lld bits", in_str(c, o),
                     in_str(c, d), (long long)b1, (long long)b2);
  }
  return in_clone(c, d);
}

tr_shape *in_r_transpose(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  const tr_attr *at = in_need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  if (at->n != o->rank)
    return IN_FAIL("transpose dimensions=%s is not a permutation of the %d dimensions of %s",
                   in_list(c, at->u.ints, at->n), o->rank, in_str(c, o));
  if (!in_dims_ok(c, "dimensions", at->u.ints, at->n, o->rank, false)) return NULL;
  tr_shape *r = in_new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[at->u.ints[i]];
  return r;
}

tr_shape *in_r_convert(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *d = in_want_decl(c);
  if (!d) return NULL;
  if (in_is_complex(o->dtype) && !in_is_complex(d->dtype))
    return IN_FAIL("convert from complex %s to real %s is not allowed (use real or imag)", in_str(c, o),
                   tr_dtype_name(d->dtype));
  tr_shape *r = in_new_array(c, d->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
  return r;
}

/* Equal widths keep the dims; a narrower result gains a minor dimension of
 * the width ratio, a wider one consumes a minor dimension of that size. */
tr_shape *in_r_bitcast_convert(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *d = in_want_decl(c);
  if (!d) return NULL;
  int ib = tr_dtypes[o->dtype].bits, ob = tr_dtypes[d->dtype].bits;
  if ((ib > ob ? ib % ob : ob % ib) != 0)
    return IN_FAIL("bitcast-convert from %d-bit %s to %d-bit %s: the widths do not divide", ib,
                   in_str(c, o), ob, tr_dtype_name(d->dtype));
  if (ib == ob) {
    tr_shape *r = in_new_array(c, d->dtype, o->rank);
    for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
    return r;
  }
  if (ib > ob) {
    tr_shape *r = in_new_array(c, d->dtype, o->rank + 1);
    for (int i = 0; i < o->rank; i++) r->dims[i] = o->dims[i];
    r->dims[o->rank] = ib / ob;
    return r;
  }
  if (o->rank < 1 || !in_dim_eq(o->dims[o->rank - 1], ob / ib))
    return IN_FAIL("bitcast-convert from %s to the wider %s needs a last dimension of size %d",
                   in_str(c, o), tr_dtype_name(d->dtype), ob / ib);
  tr_shape *r = in_new_array(c, d->dtype, o->rank - 1);
  for (int i = 0; i < o->rank - 1; i++) r->dims[i] = o->dims[i];
  return r;
}

tr_shape *in_r_slice(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  const tr_attr *at = in_need(c, TR_ATTR_SLICE);
  if (!at) return NULL;
  if (at->n != o->rank)
    return IN_FAIL("slice has %d ranges but the operand %s has rank %d", at->n, in_str(c, o), o->rank);
  tr_shape *r = in_new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    const tr_slice_dim *s = &at->u.slice[i];
    int64_t dim = o->dims[i];
    if (s->stride < 1)
      return IN_FAIL("slice dimension %d has stride %lld; strides must be positive", i, (long long)s->stride);
    if (s->start < 0 || s->start > s->limit || (dim >= 0 && s->limit > dim))
      return IN_FAIL("slice dimension %d: [%lld:%lld] is not within [0:%lld] of %s", i,
                     (long long)s->start, (long long)s->limit, (long long)dim, in_str(c, o));
    r->dims[i] = (s->limit - s->start) / s->stride + ((s->limit - s->start) % s->stride != 0);
  }
  return r;
}

tr_shape *in_r_concatenate(in_ctx *c) {
  if (!in_min_operands(c, 1) || !in_want_arrays(c, 0, in_nopnds(c))) return NULL;
  const tr_attr *at = in_need(c, TR_ATTR_DIMENSIONS);
  if (!at) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  if (at->n != 1)
    return IN_FAIL("concatenate needs exactly one dimension, not dimensions=%s", in_list(c, at->u.ints, at->n));
  int64_t d = at->u.ints[0];
  if (d < 0 || d >= o->rank)
    return IN_FAIL("concatenate dimension %lld is out of range for %s", (long long)d, in_str(c, o));
  tr_shape *r = in_clone(c, o);
  for (int i = 1; i < in_nopnds(c); i++) {
    const tr_shape *x = in_opnd(c, i);
    if (x->rank != o->rank || x->dtype != o->dtype)
      return IN_FAIL("operand %d of concatenate has shape %s but operand 0 has %s", i, in_str(c, x), in_str(c, o));
    for (int k = 0; k < o->rank; k++)
      if (k != d && !in_dim_eq(x->dims[k], o->dims[k]))
        return IN_FAIL("operand %d of concatenate has shape %s but operand 0 has %s; only dimension %lld may differ",
                       i, in_str(c, x), in_str(c, o), (long long)d);
    if (r->dims[d] < 0 || x->dims[d] < 0) r->dims[d] = -1;
    else if (__builtin_add_overflow(r->dims[d], x->dims[d], &r->dims[d]))
      return IN_FAIL("concatenate result size overflows");
  }
  return r;
}

tr_shape *in_r_pad(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *o = in_opnd(c, 0), *pv = in_opnd(c, 1);
  if (pv->rank != 0) return IN_FAIL("padding value of pad must be a scalar but has shape %s", in_str(c, pv));
  if (pv->dtype != o->dtype)
    return IN_FAIL("padding value %s of pad must have the element type of operand %s", in_str(c, pv), in_str(c, o));
  const tr_attr *at = in_need(c, TR_ATTR_PADDING);
  if (!at) return NULL;
  if (at->n != o->rank)
    return IN_FAIL("padding has %d dimensions but the operand %s has rank %d", at->n, in_str(c, o), o->rank);
  tr_shape *r = in_new_array(c, o->dtype, o->rank);
  for (int i = 0; i < o->rank; i++) {
    const tr_pad_dim *p = &at->u.pad[i];
    int64_t dim = o->dims[i], size, in;
    if (p->interior < 0)
      return IN_FAIL("pad dimension %d has interior padding %lld; it cannot be negative", i, (long long)p->interior);
    if (dim < 0) {
      r->dims[i] = -1;
      continue;
    }
    if (__builtin_mul_overflow(dim > 0 ? dim - 1 : 0, p->interior, &in) ||
        __builtin_add_overflow(dim, in, &size) || __builtin_add_overflow(size, p->lo, &size) ||
        __builtin_add_overflow(size, p->hi, &size))
      return IN_FAIL("pad dimension %d overflows", i);
    if (size < 0)
      return IN_FAIL("pad gives dimension %d of %s the negative size %lld", i, in_str(c, o), (long long)size);
    r->dims[i] = size;
  }
  return r;
}

tr_shape *in_r_reverse(in_ctx *c) {
  if (!in_want_array(c, 0)) return NULL;
  const tr_attr *at = in_need(c, TR_ATTR_DIMENSIONS);
  if (!at || !in_dims_ok(c, "dimensions", at->u.ints, at->n, in_opnd(c, 0)->rank, false)) return NULL;
  return in_clone(c, in_opnd(c, 0));
}
