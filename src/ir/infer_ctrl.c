/* infer_ctrl.c - shape rules of control flow and structure: while,
 * conditional, call and fusion, map, tuple, get-tuple-element and
 * all-reduce; each checks its called computations against its operands. */
#include "inferint.h"

tr_shape *in_r_while(in_ctx *c) {
  const tr_shape *s = in_opnd(c, 0);
  const tr_comp *cond = in_callee(c, TR_ATTR_CONDITION, 1), *body = cond ? in_callee(c, TR_ATTR_BODY, 1) : NULL;
  if (!body) return NULL;
  if (!tr_shape_compatible(in_param_shape(cond, 0), s))
    return IN_FAIL("condition computation %s takes %s but the while operand is %s", cond->name,
                   in_str(c, in_param_shape(cond, 0)), in_str(c, s));
  if (!in_is_scalar(cond->root->shape) || cond->root->shape->dtype != TR_DT_PRED)
    return IN_FAIL("condition computation %s must return pred[] but returns %s", cond->name,
                   in_str(c, cond->root->shape));
  if (!tr_shape_compatible(in_param_shape(body, 0), s))
    return IN_FAIL("body computation %s takes %s but the while operand is %s", body->name,
                   in_str(c, in_param_shape(body, 0)), in_str(c, s));
  if (!tr_shape_compatible(body->root->shape, s))
    return IN_FAIL("body computation %s returns %s but the while operand is %s", body->name,
                   in_str(c, body->root->shape), in_str(c, s));
  return in_clone(c, s);
}

tr_shape *in_r_conditional(in_ctx *c) {
  if (!in_min_operands(c, 1) || !in_want_scalar(c, 0, "selector")) return NULL;
  tr_dtype sel = in_opnd(c, 0)->dtype;
  const tr_attr *t = in_attr(c, TR_ATTR_TRUE_COMPUTATION), *f = in_attr(c, TR_ATTR_FALSE_COMPUTATION);
  const tr_attr *bc = in_attr(c, TR_ATTR_BRANCH_COMPUTATIONS);
  tr_comp *two[2];
  tr_comp **br;
  int nb;
  if (sel != TR_DT_PRED && sel != TR_DT_S32)
    return IN_FAIL("selector of conditional must be pred[] or s32[], not %s", in_str(c, in_opnd(c, 0)));
  if (bc && !t && !f) {
    br = bc->u.comps;
    nb = bc->n;
    if (nb < 1) return IN_FAIL("conditional needs at least one branch computation");
    if (sel == TR_DT_PRED && nb != 2)
      return IN_FAIL("conditional with a pred selector needs 2 branches, not %d", nb);
  } else if (t && f && !bc && sel == TR_DT_PRED) {
    two[0] = t->u.comp;
    two[1] = f->u.comp;
    br = two;
    nb = 2;
  } else if (sel == TR_DT_PRED) {
    return IN_FAIL("conditional with a pred selector needs true_computation and false_computation");
  } else {
    return IN_FAIL("conditional with an s32 selector needs branch_computations");
  }
  if (in_nopnds(c) != nb + 1)
    return IN_FAIL("conditional with %d branches needs %d operands, not %d", nb, nb + 1, in_nopnds(c));
  const tr_shape *res = NULL;
  for (int i = 0; i < nb; i++) {
    const tr_comp *k = br[i];
    if (!k || !k->root || !k->root->shape) return IN_FAIL("branch %d of conditional has no computation or root", i);
    if (in_comp_nparams(k) != 1 || !in_comp_param(k, 0))
      return IN_FAIL("branch computation %s must take 1 parameter but takes %d", k->name, in_comp_nparams(k));
    if (!tr_shape_compatible(in_param_shape(k, 0), in_opnd(c, i + 1)))
      return IN_FAIL("branch computation %s takes %s but operand %d is %s", k->name,
                     in_str(c, in_param_shape(k, 0)), i + 1, in_str(c, in_opnd(c, i + 1)));
    if (!res) res = k->root->shape;
    else if (!tr_shape_compatible(k->root->shape, res))
      return IN_FAIL("branch computation %s returns %s but %s returns %s", k->name,
                     in_str(c, k->root->shape), br[0]->name, in_str(c, res));
  }
  return in_clone(c, res);
}

/* call and fusion: parameters match the operands; the result is the root. */
tr_shape *in_r_call(in_ctx *c, tr_attr_key key) {
  const tr_comp *k = in_callee(c, key, in_nopnds(c));
  if (!k) return NULL;
  for (int i = 0; i < in_nopnds(c); i++)
    if (!tr_shape_compatible(in_param_shape(k, i), in_opnd(c, i)))
      return IN_FAIL("parameter %d of %s computation %s has shape %s but operand %d is %s", i,
                     tr_attrs[key].name, k->name, in_str(c, in_param_shape(k, i)), i, in_str(c, in_opnd(c, i)));
  return in_clone(c, k->root->shape);
}

tr_shape *in_r_map(in_ctx *c) {
  int n = in_nopnds(c);
  if (!in_min_operands(c, 1) || !in_want_arrays(c, 0, n)) return NULL;
  const tr_shape *o = in_opnd(c, 0);
  for (int i = 1; i < n; i++)
    if (!in_same_dims(in_opnd(c, i), o))
      return IN_FAIL("operand %d of map has shape %s but operand 0 has %s", i, in_str(c, in_opnd(c, i)), in_str(c, o));
  const tr_attr *at = in_attr(c, TR_ATTR_DIMENSIONS);
  if (at) {
    bool ident = at->n == o->rank;
    for (int i = 0; ident && i < at->n; i++) ident = at->u.ints[i] == i;
    if (!ident)
      return IN_FAIL("map dimensions=%s must list every dimension of %s in order", in_list(c, at->u.ints, at->n), in_str(c, o));
  }
  const tr_comp *k = in_callee(c, TR_ATTR_TO_APPLY, n);
  if (!k) return NULL;
  for (int i = 0; i < n; i++)
    if (!in_scalar_param(c, "to_apply", k, i, in_opnd(c, i)->dtype)) return NULL;
  if (!in_is_scalar(k->root->shape))
    return IN_FAIL("to_apply computation %s of map must return a scalar but returns %s", k->name,
                   in_str(c, k->root->shape));
  tr_shape *r = in_clone(c, o);
  r->dtype = k->root->shape->dtype;
  return r;
}

tr_shape *in_r_tuple(in_ctx *c) {
  int n = in_nopnds(c);
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)(n > 0 ? n : 1));
  for (int i = 0; i < n; i++) el[i] = in_clone(c, in_opnd(c, i));
  return tr_shape_tuple(c->a, n, el);
}

tr_shape *in_r_gte(in_ctx *c) {
  const tr_shape *t = in_opnd(c, 0);
  const tr_attr *at = in_need(c, TR_ATTR_INDEX);
  if (!at) return NULL;
  if (t->dtype != TR_DT_TUPLE)
    return IN_FAIL("operand of get-tuple-element must be a tuple but has shape %s", in_str(c, t));
  if (at->u.i < 0 || at->u.i >= t->nelems)
    return IN_FAIL("get-tuple-element index=%lld is out of range for %s", (long long)at->u.i, in_str(c, t));
  return in_clone(c, t->elems[at->u.i]);
}

tr_shape *in_r_all_reduce(in_ctx *c) {
  int n = in_nopnds(c);
  if (!in_min_operands(c, 1) || !in_want_arrays(c, 0, n)) return NULL;
  const tr_comp *k = in_callee(c, TR_ATTR_TO_APPLY, 2);
  if (!k) return NULL;
  if (!in_is_scalar(k->root->shape))
    return IN_FAIL("to_apply computation %s of all-reduce must return a scalar but returns %s", k->name,
                   in_str(c, k->root->shape));
  tr_shape **el = tr_arena_alloc(c->a, sizeof(tr_shape *) * (size_t)n);
  for (int i = 0; i < n; i++) el[i] = in_clone(c, in_opnd(c, i));
  return in_tuple_of(c, el, n);
}
