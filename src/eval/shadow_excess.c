/* shadow_excess.c - excess precision (tr_shadow_opts.excess,
 * docs/PROFILES.md excess-precision): a target that keeps the values of
 * narrow float dtypes in f32 between the ops of a fused kernel rounds to
 * the narrow dtype only where it stores a buffer, and which ops share a
 * kernel is not known here. The shadow value already carries every op's
 * exact result with half an ulp of the narrow dtype as bound, which an
 * f32 rounding stays within; what it cannot cover is an overflow: inf in
 * the narrow dtype, finite in f32. So an element of a listed dtype that
 * overflowed in this op becomes uncertain (either may be right), and with
 * it everything computed from it; an output of the module that nothing
 * else reads is stored, so its own rounding stays. A dtype without an
 * infinity (f8e4m3fn, the fnuz types) makes that overflow a NaN, and
 * an infinite result too (log(0), 1/0), where the wider type keeps a
 * number or an infinity: a NaN of such a dtype from operands without NaN
 * becomes uncertain likewise, poles included. The fma-contraction mark
 * (sh_fma_mark, at the end) is the same overflow seen from a fused
 * multiply-add. */
#include "shadowint.h"

#include <math.h>

/* Whether t's value leaves the entry computation only as (part of) its
 * result: the root itself, or read only by tuples that lead there. */
static bool only_out(const tr_instr *t) {
  const tr_comp *k = t->parent;
  if (!k || !k->is_entry) return false;
  if (t == k->root) return t->nusers == 0;
  if (t->nusers == 0) return false;
  for (int j = 0; j < t->nusers; j++)
    if (t->users[j]->op != TR_OP_TUPLE || !only_out(t->users[j])) return false;
  return true;
}

/* Ops that may overflow an element of a finite operand value (elementwise
 * ones: operands at the same index), and the contractions and sums whose
 * every operand element must be finite for an inf or NaN result to be an
 * overflow (a partial sum or product past the dtype's largest value). A
 * divide by zero, a power of zero, log(0) are poles, infinite in f32 too. */
static int overflow_kind(tr_op op) {
  switch (op) {
  case TR_OP_ADD: case TR_OP_SUBTRACT: case TR_OP_MULTIPLY: case TR_OP_DIVIDE: case TR_OP_POWER:
  case TR_OP_EXPONENTIAL: case TR_OP_EXPONENTIAL_MINUS_ONE: case TR_OP_CONVERT: case TR_OP_COSH:
  case TR_OP_SINH:
    return 1;
  case TR_OP_DOT: case TR_OP_CONVOLUTION: case TR_OP_REDUCE: case TR_OP_REDUCE_WINDOW: case TR_OP_SCATTER:
  case TR_OP_SELECT_AND_SCATTER: case TR_OP_ALL_REDUCE: case TR_OP_REDUCE_SCATTER:
    return 2;
  default:
    return 0;
  }
}

/* Whether in (a contraction or sum) only adds and multiplies: its
 * combiner, where it has one, is a plain add or multiply of dtype dt (an
 * arbitrary reducer may make a NaN of finite values without overflow). */
static bool sums_only(const tr_instr *in, tr_dtype dt) {
  if (in->op == TR_OP_DOT || in->op == TR_OP_CONVOLUTION) return true;
  const tr_comp *k = tr_attr_comp(in, in->op == TR_OP_SELECT_AND_SCATTER ? TR_ATTR_SCATTER : TR_ATTR_TO_APPLY);
  tr_op op;
  bool swap;
  return k && ev_simple_binary(k, dt, &op, &swap) && (op == TR_OP_ADD || op == TR_OP_MULTIPLY);
}

/* Whether float array v holds a non-finite or uncertain element (v
 * materialized). */
static bool any_nonfinite(const sh_val *v) {
  for (size_t i = 0; i < v->n; i++)
    if ((v->u && v->u[i]) || !isfinite(sh_get(v, i))) return true;
  return false;
}

/* Whether element i of in's result r (certain, a NaN), of a dtype without
 * an infinity, comes from operands without a NaN (an overflow or an
 * infinite result, or a NaN of the op's own, which the wider type gives
 * too). */
static bool noinf_nan(const tr_instr *in, sh_val **ops, const sh_val *r, size_t i) {
  if (!isnan(sh_get(r, i)) || tr_float_has_inf(r->dt)) return false;
  for (int j = 0; j < in->noperands; j++) {
    const sh_val *o = ops[j];
    if (!sh_is_flt(o)) continue;
    size_t k = o->n == r->n ? i : 0;
    if (o->n != r->n && o->n != 1) return false;
    if ((o->u && o->u[k]) || isnan(sh_get(o, k))) return false;
  }
  return true;
}

/* Whether element i of in's result r (certain, not finite) is an overflow
 * of its dtype from finite operands, or a NaN that noinf_nan allows. */
static bool overflowed(const tr_instr *in, int kind, sh_val **ops, const sh_val *r, size_t i) {
  long double v = sh_get(r, i);
  if (kind == 2) return true; /* every operand checked finite by the caller */
  if (noinf_nan(in, ops, r, i)) return true;
  if (kind == 3) return false;
  if (!isinf(v)) return false;
  for (int j = 0; j < in->noperands; j++) {
    const sh_val *o = ops[j];
    if (!sh_is_flt(o)) continue; /* an integer converted: any value is finite */
    size_t k = o->n == r->n ? i : 0;
    if (o->n != r->n && o->n != 1) return false;
    if ((o->u && o->u[k]) || !isfinite(sh_get(o, k))) return false;
    /* Poles: x / 0 and 0^-y are infinite in f32 as well. */
    if (j == 1 && in->op == TR_OP_DIVIDE && sh_get(o, k) == 0) return false;
    if (j == 0 && in->op == TR_OP_POWER && sh_get(o, k) == 0) return false;
  }
  return true;
}

sh_val *sh_excess_mark(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *r) {
  int kind = overflow_kind(in->op);
  /* Other element-wise float ops (log, sqrt, ...) only where the dtype has
   * no infinity: their poles are NaN there (kind 3). */
  tr_opclass cl = tr_ops[in->op].cls;
  if (!kind && sh_is_flt(r) && !tr_float_has_inf(r->dt) && (cl == TR_OPC_UFLOAT || cl == TR_OPC_UNUM || cl == TR_OPC_BARITH))
    kind = 3;
  if (c->excess_ops && in->op == TR_OP_CONVERT) kind = 0;
  if (!kind || !sh_is_flt(r) || !c->excess[r->dt] || r->n == 0 || only_out(in) ||
      (kind == 2 && !sums_only(in, r->dt)))
    return sh_ref(r);
  for (int j = 0; j < in->noperands; j++) {
    if (!ops[j] || !sh_is_arr(ops[j])) return sh_ref(r);
    sh_materialize(c, ops[j]);
    if (kind == 2 && sh_is_flt(ops[j]) && any_nonfinite(ops[j])) return sh_ref(r);
  }
  sh_materialize(c, r);
  size_t first = r->n;
  for (size_t i = 0; i < r->n && first == r->n; i++)
    if (!r->u[i] && !isfinite(sh_get(r, i)) && overflowed(in, kind, ops, r, i)) first = i;
  if (first == r->n) return sh_ref(r);
  sh_val *w = sh_dup_flt(c, in, r);
  if (!w) return NULL;
  for (size_t i = first; i < r->n; i++)
    if (!r->u[i] && !isfinite(sh_get(r, i)) && overflowed(in, kind, ops, r, i)) w->u[i] = 1;
  return w;
}

/* fma-contraction (tr_shadow_opts.fma) has the same blind spot: a target
 * that fuses a product into the add or subtract reading it never rounds
 * the product, so a product that overflowed from finite operands may give
 * a finite sum (XLA CPU: f32 3e38 * 2 - 3e38 is 3.0000000055e38, and
 * C / broadcast(y) + C, computed as fma(C, 1 / y, C), is finite where
 * C / y is -inf). Such a product element becomes uncertain, and with it
 * everything computed from it. */
static bool feeds_sum(const tr_instr *in) {
  for (int j = 0; j < in->nusers; j++)
    if (in->users[j]->op == TR_OP_ADD || in->users[j]->op == TR_OP_SUBTRACT) return true;
  return false;
}

sh_val *sh_fma_mark(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *r) {
  if (!sh_is_flt(r) || r->n == 0 || !tr_float_has_inf(r->dt) || in->noperands != 2 || !feeds_sum(in))
    return sh_ref(r);
  bool product = in->op == TR_OP_MULTIPLY || (in->op == TR_OP_DIVIDE && c->fma_recip && c->fma_recip[r->dt] &&
                                               in->operands[1]->op == TR_OP_BROADCAST);
  if (!product) return sh_ref(r);
  for (int j = 0; j < 2; j++) {
    if (!ops[j] || !sh_is_flt(ops[j])) return sh_ref(r);
    sh_materialize(c, ops[j]);
  }
  sh_materialize(c, r);
  size_t first = r->n;
  for (size_t i = 0; i < r->n && first == r->n; i++)
    if (!r->u[i] && isinf(sh_get(r, i)) && overflowed(in, 1, ops, r, i)) first = i;
  if (first == r->n) return sh_ref(r);
  sh_val *w = sh_dup_flt(c, in, r);
  if (!w) return NULL;
  for (size_t i = first; i < r->n; i++)
    if (!r->u[i] && isinf(sh_get(r, i)) && overflowed(in, 1, ops, r, i)) w->u[i] = 1;
  return w;
}
