/* mutate_value.c - the value-level mutators: self-operand (x op x, with
 * identity breakers selected in) and convert-chain (a value through
 * other types and back). mutate.c holds the table and the driver. */
#include "mutint.h"

#include <math.h>
#include <string.h>

/* ---- self-operand ---- */
static bool is_binary_pair(const tr_instr *in) {
  if (!mz_is_value(in) || in->noperands != 2 || in->operands[0] == in->operands[1]) return false;
  if (!(tr_ops[in->op].flags & TR_OPF_E) && in->op != TR_OP_COMPARE) return false;
  return tr_shape_is_array(in->operands[0]->shape) && tr_shape_equal(in->operands[0]->shape, in->operands[1]->shape);
}

static bool is_compare_pair(const tr_instr *in) { return in->op == TR_OP_COMPARE && is_binary_pair(in); }

/* The values that break the identities of x op x: NaN (a third of the
 * draws), infinities, signed zeros and the largest finite for floats;
 * 0, -1, MIN and MAX for integers. */
static double identity_breaker(mz *z, tr_dtype dt) {
  if (tr_dtype_is_float(dt)) {
    double mx = tr_float_max(dt);
    double cands[] = {NAN, NAN, NAN, INFINITY, -INFINITY, 0.0, -0.0, mx, -mx};
    double v = cands[mz_rndn(z, TR_NELEMS(cands))];
    if ((isnan(v) && !tr_float_has_nan(dt)) || (isinf(v) && !tr_float_has_inf(dt))) v = mx;
    return v;
  }
  double cands[] = {0, -1, (double)tr_int_min(dt), (double)tr_int_max(dt)};
  double v = cands[mz_rndn(z, TR_NELEMS(cands))];
  return v < (double)tr_int_min(dt) ? 0 : v;
}

/* v with identity breakers selected in at about a quarter of its
 * elements: select(mask, values, v), both constants. NULL when v is too
 * big or not of a real type. */
static tr_instr *with_boundary_values(mz *z, tr_comp *c, tr_instr *v) {
  const tr_shape *s = v->shape;
  int64_t n = tr_shape_count(s);
  tr_dtype dt = s->dtype;
  if (n <= 0 || n > 4096 || !mz_is_real(dt)) return NULL;
  int sz = tr_dtype_size(dt);
  char *mask = tr_arena_alloc(z->m->arena, (size_t)n), *vals = tr_arena_alloc(z->m->arena, (size_t)(n * sz));
  memset(vals, 0, (size_t)(n * sz));
  for (int64_t i = 0; i < n; i++) {
    mask[i] = i == 0 || mz_rndn(z, 4) == 0;
    uint64_t b = mz_bits_of(dt, identity_breaker(z, dt));
    memcpy(vals + i * sz, &b, (size_t)(sz < 8 ? sz : 8));
  }
  tr_instr *ops[3];
  ops[0] = mz_fin(tr_build_constant(c, tr_shape_array(z->m->arena, TR_DT_PRED, s->rank, s->dims), mask));
  ops[1] = mz_fin(tr_build_constant(c, tr_shape_array(z->m->arena, dt, s->rank, s->dims), vals));
  ops[2] = v;
  if (!ops[0] || !ops[1]) return NULL;
  return mz_fin(tr_build_end(tr_build_begin(c, TR_OP_SELECT, ops, 3), NULL, NULL));
}

bool mz_self_operand(mz *z) {
  /* compare(x, x) half the time when there is one: NaN decides it */
  tr_instr *x = mz_rndn(z, 2) ? mz_pick(z, is_compare_pair) : NULL;
  if (!x) x = mz_pick(z, is_binary_pair);
  if (!x) return mz_say(z, "no binary op with two operands of one shape"), false;
  tr_instr *v = x->operands[mz_rndn(z, 2)];
  /* half the time the shared operand meets the values that break the
   * identity in some elements, whatever the inputs are */
  tr_instr *w = mz_rndn(z, 2) ? with_boundary_values(z, x->parent, v) : NULL;
  if (w) v = w;
  tr_instr_replace_operand(x, 0, v);
  tr_instr_replace_operand(x, 1, v);
  if (w) mz_reorder(x->parent);
  return true;
}

/* ---- convert-chain ---- */
static const tr_dtype chain_types[] = {
  TR_DT_F32, TR_DT_F64, TR_DT_BF16, TR_DT_F16, TR_DT_F8E4M3FN, TR_DT_F8E5M2, TR_DT_S4, TR_DT_U4, TR_DT_S8,
  TR_DT_U8, TR_DT_S16, TR_DT_U16, TR_DT_S32, TR_DT_U32, TR_DT_S64, TR_DT_U64, TR_DT_PRED,
};

bool mz_convert_chain(mz *z) {
  tr_instr *x = mz_pick(z, mz_is_num_value);
  if (!x) return mz_say(z, "no value of a real type"), false;
  tr_comp *c = x->parent;
  tr_dtype a = x->shape->dtype, b = chain_types[mz_rndn(z, TR_NELEMS(chain_types))];
  /* mostly across kinds (int <-> float), where folding the pair is wrong */
  if (mz_rndn(z, 3) && tr_dtype_is_float(a) == tr_dtype_is_float(b)) b = tr_dtype_is_float(a) ? TR_DT_S8 : TR_DT_F32;
  if (b == a) return mz_say(z, "the same type"), false;
  bool third = c == z->m->entry && mz_rndn(z, 2);
  tr_dtype d = third ? chain_types[mz_rndn(z, TR_NELEMS(chain_types))] : a;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *y = mz_fin(tr_build_convert(c, x, b, NULL));
  tr_instr *w = y ? mz_fin(tr_build_convert(c, y, d, NULL)) : NULL;
  if (!w) return false;
  if (third) return mz_add_output(z, c, w);
  mz_rewire(u, x, w);
  return true;
}
