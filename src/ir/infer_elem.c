/* infer_elem.c - shape rules of the leaves (parameter, constant, iota,
 * after-all), the elementwise ops (same shape, select, clamp, compare,
 * binary) and the ops of the DECLARED rule whose result the operands
 * still determine (complex, real, rng-bit-generator, ...). */
#include "inferint.h"

#include <string.h>

tr_shape *in_r_parameter(in_ctx *c) {
  if (!c->decl) return IN_FAIL("%s needs a declared shape", c->op);
  return in_clone(c, c->decl);
}

tr_shape *in_r_constant(in_ctx *c) {
  if (!c->decl) return IN_FAIL("constant needs a declared shape");
  const tr_literal *lit = c->in->literal;
  if (lit && lit->shape && !tr_shape_compatible(lit->shape, c->decl))
    return IN_FAIL("constant is declared %s but its literal has shape %s", in_str(c, c->decl),
                   in_str(c, lit->shape));
  return in_clone(c, c->decl);
}

tr_shape *in_r_iota(in_ctx *c) {
  const tr_shape *d = in_want_decl(c);
  const tr_attr *at = in_need(c, TR_ATTR_IOTA_DIMENSION);
  if (!d || !at) return NULL;
  if (d->rank < 1) return IN_FAIL("iota needs a result of rank 1 or more, not %s", in_str(c, d));
  if (at->u.i < 0 || at->u.i >= d->rank)
    return IN_FAIL("iota_dimension=%lld is out of range for %s", (long long)at->u.i, in_str(c, d));
  return in_clone(c, d);
}

tr_shape *in_r_after_all(in_ctx *c) {
  for (int i = 0; i < in_nopnds(c); i++)
    if (in_opnd(c, i)->dtype != TR_DT_TOKEN)
      return IN_FAIL("operand %d of after-all must be a token but has shape %s", i,
                     in_str(c, in_opnd(c, i)));
  return in_new_array(c, TR_DT_TOKEN, 0);
}

tr_shape *in_r_same(in_ctx *c) {
  const tr_shape *o = in_opnd(c, 0);
  tr_op op = c->in->op;
  /* XLA accepts abs and sign only for signed (or float) operands. */
  if ((op == TR_OP_ABS || op == TR_OP_SIGN) && (tr_dtypes[o->dtype].kind == TR_DK_UINT))
    return IN_FAIL("%s needs a signed or float operand, not %s", c->op, in_str(c, o));
  if (op == TR_OP_REDUCE_PRECISION) {
    const tr_attr *e = in_need(c, TR_ATTR_EXPONENT_BITS), *m = in_need(c, TR_ATTR_MANTISSA_BITS);
    if (!e || !m) return NULL;
    if (e->u.i < 1) return IN_FAIL("reduce-precision needs exponent_bits >= 1, not %lld", (long long)e->u.i);
    if (m->u.i < 0) return IN_FAIL("reduce-precision needs mantissa_bits >= 0, not %lld", (long long)m->u.i);
  }
  tr_shape *r = in_clone(c, o);
  /* The magnitude of a complex number is real. */
  if (op == TR_OP_ABS && o->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
  if (op == TR_OP_ABS && o->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
  /* real and imag of a complex number are its component type; of a real
   * number, the same type (the verifier rejects other types). */
  if ((op == TR_OP_REAL || op == TR_OP_IMAG) && o->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
  if ((op == TR_OP_REAL || op == TR_OP_IMAG) && o->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
  return r;
}

tr_shape *in_r_select(in_ctx *c) {
  if (!in_want_arrays(c, 0, 3)) return NULL;
  const tr_shape *p = in_opnd(c, 0), *t = in_opnd(c, 1), *f = in_opnd(c, 2);
  if (p->dtype != TR_DT_PRED)
    return IN_FAIL("predicate of select must be pred but has shape %s", in_str(c, p));
  if (!tr_shape_compatible(t, f))
    return IN_FAIL("on_true %s and on_false %s of select must have the same shape", in_str(c, t), in_str(c, f));
  if (p->rank != 0 && !in_same_dims(p, t))
    return IN_FAIL("predicate %s of select must be a scalar or match the dims of %s", in_str(c, p), in_str(c, t));
  return in_clone(c, t);
}

tr_shape *in_r_clamp(in_ctx *c) {
  const tr_shape *lo = in_opnd(c, 0), *x = in_opnd(c, 1), *hi = in_opnd(c, 2);
  if (!(tr_shape_compatible(lo, x) || (lo->rank == 0 && lo->dtype == x->dtype)))
    return IN_FAIL("min %s of clamp must be a scalar or have the shape of operand %s", in_str(c, lo), in_str(c, x));
  if (!(tr_shape_compatible(hi, x) || (hi->rank == 0 && hi->dtype == x->dtype)))
    return IN_FAIL("max %s of clamp must be a scalar or have the shape of operand %s", in_str(c, hi), in_str(c, x));
  return in_clone(c, x);
}

/* Comparison types XLA accepts for an element type. */
static bool cmp_type_ok(const char *ty, tr_dtype t) {
  if (in_is_float(t) || in_is_complex(t)) return strcmp(ty, "FLOAT") == 0 || strcmp(ty, "TOTALORDER") == 0;
  if (tr_dtypes[t].kind == TR_DK_SINT) return strcmp(ty, "SIGNED") == 0;
  return strcmp(ty, "UNSIGNED") == 0;
}


tr_shape *in_r_compare(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = in_opnd(c, 0), *y = in_opnd(c, 1);
  if (!tr_shape_compatible(x, y))
    return IN_FAIL("operand 1 of compare has shape %s but operand 0 has %s", in_str(c, y), in_str(c, x));
  const tr_attr *dir = in_need(c, TR_ATTR_DIRECTION), *ty = in_attr(c, TR_ATTR_TYPE);
  if (!dir) return NULL;
  if (!tr_attr_value_allowed(tr_attrs[TR_ATTR_DIRECTION].allowed, dir->u.s))
    return IN_FAIL("compare direction=%s is not one of %s", dir->u.s, tr_attrs[TR_ATTR_DIRECTION].allowed);
  if (ty && !cmp_type_ok(ty->u.s, x->dtype))
    return IN_FAIL("compare type=%s does not fit element type %s", ty->u.s, tr_dtype_name(x->dtype));
  tr_shape *r = in_clone(c, x);
  r->dtype = TR_DT_PRED;
  return r;
}

tr_shape *in_r_is_finite(in_ctx *c) {
  if (!in_is_float(in_opnd(c, 0)->dtype))
    return IN_FAIL("is-finite needs a float operand, not %s", in_str(c, in_opnd(c, 0)));
  tr_shape *r = in_clone(c, in_opnd(c, 0));
  r->dtype = TR_DT_PRED;
  return r;
}

tr_shape *in_r_binary(in_ctx *c) {
  if (!in_want_arrays(c, 0, 2)) return NULL;
  const tr_shape *x = in_opnd(c, 0), *y = in_opnd(c, 1);
  if (!tr_shape_compatible(x, y))
    return IN_FAIL("operand 1 of %s has shape %s but operand 0 has %s", c->op, in_str(c, y), in_str(c, x));
  return in_clone(c, x);
}

/* Ops of the DECLARED rule whose result XLA's shape inference or verifier
 * still determines from the operands: the declared shape is checked
 * against it (a non-complex complex(), a real() of the wrong width, an
 * rng-bit-generator whose new state differs from its state). The rest
 * (collectives, custom-call, infeed, ...) stay declared only; the
 * evaluator runs none of them but custom-call, whose result XLA does not
 * check either. tr_declared_inferred says which ops are covered. */
tr_shape *in_r_declared(in_ctx *c) {
  tr_op op = c->in->op;
  switch (op) {
  case TR_OP_COMPLEX: {
    if (!in_want_arrays(c, 0, 2)) return NULL;
    const tr_shape *x = in_opnd(c, 0), *y = in_opnd(c, 1);
    if (!tr_shape_compatible(x, y))
      return IN_FAIL("operand 1 of complex has shape %s but operand 0 has %s", in_str(c, y), in_str(c, x));
    if (x->dtype != TR_DT_F32 && x->dtype != TR_DT_F64) return c->decl ? in_clone(c, c->decl) : NULL; /* the verifier's type rule says why */
    tr_shape *r = in_clone(c, x);
    r->dtype = x->dtype == TR_DT_F32 ? TR_DT_C64 : TR_DT_C128;
    return r;
  }
  case TR_OP_REAL: case TR_OP_IMAG: {
    if (!in_want_array(c, 0)) return NULL;
    const tr_shape *x = in_opnd(c, 0);
    if (!in_is_complex(x->dtype) && !in_is_float(x->dtype)) return c->decl ? in_clone(c, c->decl) : NULL; /* as for complex */
    tr_shape *r = in_clone(c, x);
    if (x->dtype == TR_DT_C64) r->dtype = TR_DT_F32;
    if (x->dtype == TR_DT_C128) r->dtype = TR_DT_F64;
    return r;
  }
  case TR_OP_MULHI: case TR_OP_BATCH_NORM_INFERENCE:
    if (!in_want_array(c, 0)) return NULL;
    if (op == TR_OP_MULHI) {
      if (!in_want_array(c, 1)) return NULL;
      if (!tr_shape_compatible(in_opnd(c, 0), in_opnd(c, 1)))
        return IN_FAIL("operand 1 of %s has shape %s but operand 0 has %s", c->op, in_str(c, in_opnd(c, 1)),
                       in_str(c, in_opnd(c, 0)));
      if (!in_is_int(in_opnd(c, 0)->dtype)) return IN_FAIL("%s takes integers, not %s", c->op, in_str(c, in_opnd(c, 0)));
    }
    return in_clone(c, in_opnd(c, 0));
  case TR_OP_SET_DIMENSION_SIZE:
    if (!in_want_array(c, 0) || !in_want_scalar(c, 1, "size")) return NULL;
    if (in_opnd(c, 1)->dtype != TR_DT_S32) return IN_FAIL("the size of set-dimension-size must be s32, not %s", in_str(c, in_opnd(c, 1)));
    return in_clone(c, in_opnd(c, 0));
  case TR_OP_GET_DIMENSION_SIZE:
    if (!in_want_array(c, 0)) return NULL;
    return in_new_array(c, TR_DT_S32, 0);
  case TR_OP_STOCHASTIC_CONVERT: {
    if (!in_want_arrays(c, 0, 2)) return NULL;
    const tr_shape *d = in_want_decl(c);
    if (!d) return NULL;
    if (!in_is_float(in_opnd(c, 0)->dtype)) return IN_FAIL("stochastic-convert takes a float operand, not %s", in_str(c, in_opnd(c, 0)));
    if (!in_same_dims(in_opnd(c, 0), in_opnd(c, 1)))
      return IN_FAIL("the random bits of stochastic-convert have shape %s but the operand %s", in_str(c, in_opnd(c, 1)),
                     in_str(c, in_opnd(c, 0)));
    tr_shape *r = in_clone(c, in_opnd(c, 0));
    r->dtype = d->dtype;
    return r;
  }
  case TR_OP_RNG_BIT_GENERATOR: {
    /* XLA's verifier: a (new state, bits) tuple whose state has the
     * operand's shape; the state is a vector of u64 words. */
    if (!in_want_array(c, 0)) return NULL;
    const tr_shape *st = in_opnd(c, 0), *d = c->decl;
    if (st->dtype != TR_DT_U64 || st->rank != 1)
      return IN_FAIL("the state of rng-bit-generator must be a u64 vector, not %s", in_str(c, st));
    if (st->dims[0] >= 0 && st->dims[0] < 2)
      return IN_FAIL("the state of rng-bit-generator needs at least 2 words, not %s", in_str(c, st));
    /* StableHLO's C2: ThreeFry's state is 2 words, Philox's 2 or 3 (XLA
     * CPU's expander builds a u64[2] ThreeFry state whatever was
     * declared, then its verifier rejects the module). */
    const tr_attr *alg = tr_instr_attr(c->in, TR_ATTR_ALGORITHM);
    const char *an = alg && alg->u.s ? alg->u.s : "";
    if (st->dims[0] >= 0 && ((strcmp(an, "rng_three_fry") == 0 && st->dims[0] != 2) ||
                             (strcmp(an, "rng_philox") == 0 && st->dims[0] > 3)))
      return IN_FAIL("the state of rng-bit-generator with algorithm=%s is u64[%s], not %s", an,
                     an[4] == 't' ? "2" : "2] or u64[3", in_str(c, st));
    if (!d || d->dtype != TR_DT_TUPLE || d->nelems != 2 || !in_is_array(d->elems[1]))
      return IN_FAIL("rng-bit-generator must produce a (state, bits) tuple, not %s", in_str(c, d));
    if (!in_is_int(d->elems[1]->dtype))
      return IN_FAIL("rng-bit-generator makes integer bits, not %s", in_str(c, d->elems[1]));
    tr_shape *el[2] = {in_clone(c, st), in_clone(c, d->elems[1])};
    return in_tuple_of(c, el, 2);
  }
  default:
    /* Nothing to infer: the declared shape is trusted; without one there
     * is no shape and no reason either. */
    return c->decl ? in_clone(c, c->decl) : NULL;
  }
}

bool tr_declared_inferred(tr_op op) {
  switch (op) {
  case TR_OP_COMPLEX: case TR_OP_REAL: case TR_OP_IMAG: case TR_OP_MULHI: case TR_OP_BATCH_NORM_INFERENCE:
  case TR_OP_SET_DIMENSION_SIZE: case TR_OP_GET_DIMENSION_SIZE: case TR_OP_STOCHASTIC_CONVERT:
  case TR_OP_RNG_BIT_GENERATOR:
    return true;
  default:
    return false;
  }
}
