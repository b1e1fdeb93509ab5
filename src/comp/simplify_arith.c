/* simplify_arith.c - the simplifier's rules for values: selection and
 * comparison, conversions, contractions and reductions, identities and
 * absorbing elements, unary chains, powers (simplify_rules.def,
 * docs/COMPILER.md). */
#include "simplify_int.h"

/* ---- selection and comparison ---- */

/* select(constant predicate, a, b) -> a or b. */
bool rule_select_const_pred(simp *s, tr_instr *in) {
  int64_t v;
  if (!splat_int(in->operands[0], &v)) return false;
  return fire_replace(s, in, in->operands[v ? 1 : 2]);
}

/* select(p, a, a) -> a. */
bool rule_select_same(simp *s, tr_instr *in) {
  if (in->operands[1] != in->operands[2]) return false;
  return fire_replace(s, in, in->operands[1]);
}

/* select(not(p), a, b) -> select(p, b, a). */
bool rule_select_not_pred(simp *s, tr_instr *in) {
  tr_instr *p = in->operands[0];
  if (p->op != TR_OP_NOT || !fire(s, in)) return false;
  tr_instr *ops[3] = {p->operands[0], in->operands[2], in->operands[1]};
  return replace(s, in, emit(s, in, TR_OP_SELECT, like(s, in), ops, 3));
}

/* compare(x, x) -> constant for integers and pred (EQ, GE, LE true; NE,
 * GT, LT false), and for floats under type=TOTALORDER, where x equals
 * itself even when NaN. Not for partial-order floats: NaN != NaN. */
bool rule_compare_self(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  const char *dir = tr_attr_ident(in, TR_ATTR_DIRECTION), *ty = tr_attr_ident(in, TR_ATTR_TYPE);
  if (x != in->operands[1] || !dir) return false;
  if (!(is_int(x) || kind(x) == TR_DK_PRED || (is_flt(x) && ty && strcmp(ty, "TOTALORDER") == 0)))
    return false;
  bool t = strcmp(dir, "EQ") == 0 || strcmp(dir, "GE") == 0 || strcmp(dir, "LE") == 0;
  if (!fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, t));
}

/* compare(x >= 0) -> true and compare(x < 0) -> false for unsigned x (and
 * the mirrored 0 <= x, 0 > x). */
bool rule_compare_unsigned_zero(simp *s, tr_instr *in) {
  tr_instr *a = in->operands[0], *b = in->operands[1];
  const char *dir = tr_attr_ident(in, TR_ATTR_DIRECTION), *ty = tr_attr_ident(in, TR_ATTR_TYPE);
  if (kind(a) != TR_DK_UINT || !dir || (ty && strcmp(ty, "UNSIGNED") != 0)) return false;
  int v = -1;
  if (int_is(b, 0)) {
    if (strcmp(dir, "GE") == 0) v = 1;
    if (strcmp(dir, "LT") == 0) v = 0;
  } else if (int_is(a, 0)) {
    if (strcmp(dir, "LE") == 0) v = 1;
    if (strcmp(dir, "GT") == 0) v = 0;
  }
  if (v < 0 || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, (uint64_t)v));
}

/* ---- conversions ---- */

static bool ieee(tr_dtype t) {
  return t == TR_DT_F16 || t == TR_DT_BF16 || t == TR_DT_F32 || t == TR_DT_F64;
}

/* Whether converting a to b keeps every value of a exactly (so converting
 * back, or on to a third type, sees the same value). */
static bool convert_exact(tr_dtype a, tr_dtype b) {
  const tr_dtype_info *fa = &tr_dtypes[a], *fb = &tr_dtypes[b];
  if (a == b || !fa->core || !fb->core) return false;
  switch (fa->kind) {
  case TR_DK_PRED: return fb->kind == TR_DK_SINT || fb->kind == TR_DK_UINT || ieee(b);
  case TR_DK_SINT:
    if (fb->kind == TR_DK_SINT) return fb->bits > fa->bits;
    return ieee(b) && fb->mbits + 1 >= fa->bits - 1;
  case TR_DK_UINT:
    if (fb->kind == TR_DK_SINT || fb->kind == TR_DK_UINT) return fb->bits > fa->bits;
    return ieee(b) && fb->mbits + 1 >= fa->bits;
  case TR_DK_FLOAT:
    return ieee(a) && ieee(b) && fb->ebits >= fa->ebits && fb->mbits >= fa->mbits;
  default: return false;
  }
}

/* convert(x) -> x when the type does not change. */
bool rule_convert_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (in->shape->dtype != x->shape->dtype) return false;
  return fire_replace(s, in, x);
}

/* convert(convert(x: A -> B) -> A) -> x when A -> B is exact (widening
 * ints, u->s of more bits, small ints to floats, f16/bf16 -> f32 -> f64). */
bool rule_convert_roundtrip(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_CONVERT) return false;
  tr_instr *x = y->operands[0];
  if (x->shape->dtype != in->shape->dtype || !convert_exact(x->shape->dtype, y->shape->dtype))
    return false;
  return fire_replace(s, in, x);
}

/* convert(convert(x: A -> B) -> C) -> convert(x: A -> C) when A -> B is
 * exact and A, B are both integers (or pred) or both floats: then B -> C
 * converts the same value the same way A -> C does. Not int -> float ->
 * int: float -> int saturates where int -> int wraps. */
bool rule_convert_chain_exact(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_CONVERT) return false;
  tr_instr *x = y->operands[0];
  tr_dtype a = x->shape->dtype, b = y->shape->dtype, c = in->shape->dtype;
  if (a == c || !convert_exact(a, b)) return false;
  if (tr_dtype_is_float(a) != tr_dtype_is_float(b)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_CONVERT, like(s, in), x));
}

/* bitcast-convert(x) -> x when the type does not change. */
bool rule_bitcast_convert_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* bitcast-convert(bitcast-convert(x: A -> B) -> A) -> x for types of the
 * same width: the bits come back unchanged. */
bool rule_bitcast_convert_roundtrip(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_BITCAST_CONVERT) return false;
  tr_instr *x = y->operands[0];
  if (!tr_shape_equal(in->shape, x->shape) || tr_dtypes[x->shape->dtype].bits != tr_dtypes[y->shape->dtype].bits)
    return false;
  return fire_replace(s, in, x);
}

/* reduce-precision(x) -> x when it keeps every bit. The reference (as
 * XLA's evaluator) reduces narrow floats through f32, where an exponent
 * below 8 bits also flushes their subnormals: so f16 with exponent_bits=5
 * is NOT a no-op, and narrow types need exponent_bits >= 8. */
bool rule_reduce_precision_noop(simp *s, tr_instr *in) {
  tr_dtype dt = in->shape->dtype;
  int64_t e = tr_attr_int(in, TR_ATTR_EXPONENT_BITS, -1), m = tr_attr_int(in, TR_ATTR_MANTISSA_BITS, -1);
  int need_e = dt == TR_DT_F64 ? 11 : 8;
  if (!tr_dtype_is_float(dt) || !tr_dtypes[dt].core || e < need_e || m < tr_dtypes[dt].mbits)
    return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- contractions and reductions ---- */

/* dot whose contracting dims hold no element -> zeros: every output is
 * an empty sum, which the reference starts (and ends) at +0. */
bool rule_dot_empty_contraction(simp *s, tr_instr *in) {
  int nc;
  const int64_t *c = tr_attr_ints(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nc);
  const tr_instr *a = in->operands[0];
  bool empty = false;
  for (int i = 0; i < nc; i++) empty |= a->shape->dims[c[i]] == 0;
  if (!empty || !tr_dtype_is_array(in->shape->dtype) || kind(in) == TR_DK_COMPLEX || !fire(s, in))
    return false;
  return replace(s, in, emit_splat(s, in, in->shape, value_bits(in->shape->dtype, 0)));
}

/* dot(transpose(a), b) -> dot(a, b) with a's contracting and batch dims
 * renamed through the permutation, when the free dims keep their order
 * (else the result's dims would come out permuted). The contracting list
 * keeps its order, so the reference sums in the same order. One side per
 * application, lhs first. */
bool rule_dot_transpose_operand(simp *s, tr_instr *in) {
  for (int side = 0; side < 2; side++) {
    tr_instr *t = in->operands[side];
    if (t->op != TR_OP_TRANSPOSE) continue;
    tr_attr_key kb = side ? TR_ATTR_RHS_BATCH_DIMS : TR_ATTR_LHS_BATCH_DIMS;
    tr_attr_key kc = side ? TR_ATTR_RHS_CONTRACTING_DIMS : TR_ATTR_LHS_CONTRACTING_DIMS;
    int np, nb, nc;
    const int64_t *p = tr_attr_ints(t, TR_ATTR_DIMENSIONS, &np);
    const int64_t *b = tr_attr_ints(in, kb, &nb);
    const int64_t *c = tr_attr_ints(in, kc, &nc);
    if (np != t->shape->rank || np > MAX_RANK) continue;
    int64_t last = -1;
    bool ok = true;
    for (int i = 0; i < np && ok; i++) {
      if (tr_ints_has(b, nb, i) || tr_ints_has(c, nc, i)) continue;
      ok = p[i] > last;
      last = p[i];
    }
    if (!ok || !fire(s, in)) continue;
    int64_t nbv[MAX_RANK], ncv[MAX_RANK];
    for (int i = 0; i < nb; i++) nbv[i] = p[b[i]];
    for (int i = 0; i < nc; i++) ncv[i] = p[c[i]];
    tr_instr *ops[2] = {in->operands[0], in->operands[1]};
    ops[side] = t->operands[0];
    tr_instr *d = emit(s, in, TR_OP_DOT, like(s, in), ops, 2);
    copy_attrs(s, d, in, kb, kc);
    if (nb) set_ints(s, d, kb, nbv, nb);
    if (nc) set_ints(s, d, kc, ncv, nc);
    return replace(s, in, d);
  }
  return false;
}

/* convolution(slice(x), w) -> convolution(x, w) with the slice folded
 * into negative window padding (XLA's negative-padding form of a crop):
 * on a spatial dim, cutting `a` elements from the start of the input is
 * padding_lo - a, cutting `b` from the end is padding_hi - b. Exact only
 * where the window padding on that side is not positive: taps into
 * padding are skipped, and positive padding after a cut would put those
 * skipped taps onto the cut elements instead. The slice must have stride
 * 1, keep the batch and feature dims whole, and the cut dims must have no
 * lhs (base) dilation. */
bool rule_conv_input_slice(simp *s, tr_instr *in) {
  tr_instr *sl = in->operands[0];
  if (sl->op != TR_OP_SLICE) return false;
  tr_instr *x = sl->operands[0];
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW), *la = tr_instr_attr(in, TR_ATTR_DIM_LABELS);
  const tr_attr *sa = tr_instr_attr(sl, TR_ATTR_SLICE);
  if (!wa || wa->kind != TR_AK_WINDOW || !la || la->kind != TR_AK_DIMLABELS || !sa) return false;
  const tr_convdims *cd = la->u.conv;
  int r = x->shape->rank, ns = cd->nspatial;
  if (wa->n != ns || sa->n != r || r > MAX_RANK || ns > MAX_RANK) return false;
  const tr_slice_dim *sd = sa->u.slice;
  bool spatial[MAX_RANK] = {0};
  for (int i = 0; i < ns; i++) spatial[cd->in_spatial[i]] = true;
  for (int d = 0; d < r; d++) {
    if (sd[d].stride != 1) return false;
    if (!spatial[d] && (sd[d].start != 0 || sd[d].limit != x->shape->dims[d])) return false;
  }
  tr_window_dim win[MAX_RANK];
  bool any = false;
  for (int i = 0; i < ns; i++) {
    int64_t d = cd->in_spatial[i], a = sd[d].start, b = x->shape->dims[d] - sd[d].limit;
    win[i] = wa->u.win[i];
    if (!a && !b) continue;
    /* defect: only the high side's padding is checked, so a slice start
     * is folded into positive low padding */
    bool lo_ok = TR_INJECTED(s->ctx->inject, SIMP_CONV_SLICE_HALO_UNDERFLOW) || win[i].pad_lo <= 0;
    if (win[i].lhs_dilate != 1 || (a && !lo_ok) || (b && win[i].pad_hi > 0)) return false;
    win[i].pad_lo -= a;
    win[i].pad_hi -= b;
    any = true;
  }
  if (!any || !fire(s, in)) return false;
  tr_instr *c = emit2(s, in, TR_OP_CONVOLUTION, like(s, in), x, in->operands[1]);
  copy_attrs(s, c, in, TR_ATTR_WINDOW, TR_ATTR_COUNT);
  tr_attr *at = tr_instr_add_attr(s->m, c, TR_ATTR_WINDOW, TR_AK_WINDOW, NULL);
  at->n = ns;
  at->u.win = tr_arena_memdup(s->m->arena, win, sizeof(tr_window_dim) * (size_t)(ns ? ns : 1));
  return replace(s, in, c);
}

/* Whether v (a splat) is the identity of op on its type: op(v, x) = x for
 * every x. Float add's identity is -0.0 (+0.0 + -0.0 = +0.0). */
static bool is_identity(tr_op op, const tr_instr *v) {
  switch (op) {
  case TR_OP_ADD: return is_flt(v) ? flt_is(v, -0.0) : is_int(v) && int_is(v, 0);
  case TR_OP_MULTIPLY: return is_one(v);
  case TR_OP_MAXIMUM: return is_lowest(v);
  case TR_OP_MINIMUM: return is_highest(v);
  case TR_OP_AND: return is_ones(v);
  case TR_OP_OR: return !is_flt(v) && int_is(v, 0);
  default: return false;
  }
}

/* op(init, x) in the order the reducer applies it: acc = f(acc, elem). */
static tr_instr *emit_combine(simp *s, tr_instr *pos, tr_op op, bool swap, tr_instr *init,
                              tr_instr *x) {
  tr_instr *b = emit1(s, pos, TR_OP_BROADCAST, tr_shape_clone(s->m->arena, x->shape), init);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  tr_shape *sh = tr_shape_clone(s->m->arena, x->shape);
  return swap ? emit2(s, pos, op, sh, x, b) : emit2(s, pos, op, sh, b, x);
}

/* reduce(x, init) over no dims -> x when init is op's identity, else
 * op(init, x) elementwise: the reducer runs once per element, from init. */
bool rule_reduce_no_dims(simp *s, tr_instr *in) {
  int n;
  tr_op op;
  bool swap;
  tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  if (in->noperands != 2 || n != 0 || !simple_binary(tr_attr_comp(in, TR_ATTR_TO_APPLY), &op, &swap))
    return false;
  tr_instr *x = in->operands[0], *init = in->operands[1];
  if (init->shape->dtype != x->shape->dtype || !fire(s, in)) return false;
  if (is_identity(op, init)) return replace(s, in, x);
  return replace(s, in, emit_combine(s, in, op, swap, init, x));
}

/* reduce over a dim of size 0 -> broadcast(init): no element reaches the
 * reducer. */
bool rule_reduce_of_empty(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0];
  int nr;
  const int64_t *rd = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &nr);
  bool empty = false;
  for (int i = 0; i < nr; i++) empty |= x->shape->dims[rd[i]] == 0;
  if (!empty || in->operands[1]->shape->dtype != in->shape->dtype || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), in->operands[1]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

/* reduce(broadcast(y), init) over exactly the dims the broadcast added
 * (each non-empty): for max/min/and/or, which are idempotent, every
 * output is op(init, y) (y when init is the identity); for integer add it
 * is init + y*n (n the number of copies), exact in wrapping arithmetic.
 * Not float add: n copies summed one by one round differently from y*n. */
bool rule_reduce_of_broadcast(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *b = in->operands[0], *init = in->operands[1];
  tr_op op;
  bool swap;
  if (b->op != TR_OP_BROADCAST || !simple_binary(tr_attr_comp(in, TR_ATTR_TO_APPLY), &op, &swap))
    return false;
  tr_instr *y = b->operands[0];
  int nb, nr;
  const int64_t *bd = tr_attr_ints(b, TR_ATTR_DIMENSIONS, &nb);
  const int64_t *rd = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &nr);
  if (nb != y->shape->rank || y->shape->dtype != in->shape->dtype) return false;
  for (int i = 1; i < nb; i++)
    if (bd[i] <= bd[i - 1]) return false;
  int64_t copies = 1;
  for (int d = 0; d < b->shape->rank; d++) {
    if (tr_ints_has(bd, nb, d) == tr_ints_has(rd, nr, d)) return false; /* reduced iff added */
    if (!tr_ints_has(bd, nb, d)) {
      if (b->shape->dims[d] == 0) return false; /* then the result is init */
      copies *= b->shape->dims[d];
    }
  }
  bool idem = op == TR_OP_MAXIMUM || op == TR_OP_MINIMUM || op == TR_OP_AND || op == TR_OP_OR;
  bool iadd = op == TR_OP_ADD && is_int(y);
  if (!(idem || iadd) || !fire(s, in)) return false;
  tr_instr *r = y;
  if (iadd) {
    tr_dtype dt = y->shape->dtype;
    if (copies != 1)
      r = emit2(s, in, TR_OP_MULTIPLY, tr_shape_clone(s->m->arena, y->shape), y,
                emit_splat(s, in, y->shape, int_bits(dt, copies)));
  }
  if (!is_identity(op, init)) r = emit_combine(s, in, op, swap, init, r);
  if (r == y) return replace(s, in, y);
  r->shape = like(s, in);
  return replace(s, in, r);
}

/* reduce(reshape(y), init, dims) where the reshape only drops size-1 dims
 * of y -> reduce(y, init, mapped dims plus the dropped ones): reducing
 * over a size-1 dim adds no element, and the reduced elements come in the
 * same row-major order. */
bool rule_reduce_of_reshape(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_RESHAPE) return false;
  tr_instr *y = x->operands[0];
  int yr = y->shape->rank, xr = x->shape->rank;
  if (yr <= xr || yr > MAX_RANK) return false;
  int64_t map[MAX_RANK];
  bool dropped[MAX_RANK] = {0};
  int i = 0;
  for (int j = 0; j < xr; j++) {
    while (i < yr && y->shape->dims[i] != x->shape->dims[j]) {
      if (y->shape->dims[i] != 1) return false;
      dropped[i++] = true;
    }
    if (i == yr) return false;
    map[j] = i++;
  }
  for (; i < yr; i++) {
    if (y->shape->dims[i] != 1) return false;
    dropped[i] = true;
  }
  int nr;
  const int64_t *rd = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &nr);
  int64_t nd[MAX_RANK];
  int k = 0;
  for (int d = 0; d < yr; d++) {
    bool red = dropped[d];
    for (int j = 0; j < nr; j++) red |= map[rd[j]] == d;
    if (red) nd[k++] = d;
  }
  if (!fire(s, in)) return false;
  tr_instr *r = emit2(s, in, TR_OP_REDUCE, like(s, in), y, in->operands[1]);
  copy_attrs(s, r, in, TR_ATTR_DIMENSIONS, TR_ATTR_COUNT);
  set_ints(s, r, TR_ATTR_DIMENSIONS, nd, k);
  return replace(s, in, r);
}

/* reduce-window with a 1-element window, stride 1, no padding or
 * dilation -> op(init, x) elementwise (x when init is op's identity): each
 * window reduces one element, starting from init. */
bool rule_reduce_window_trivial(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0], *init = in->operands[1];
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
  tr_op op;
  bool swap;
  int r = x->shape->rank;
  if ((!w && r > 0) || (w && (w->kind != TR_AK_WINDOW || w->n != r))) return false;
  for (int i = 0; w && i < r; i++) {
    const tr_window_dim *d = &w->u.win[i];
    if (d->size != 1 || d->stride != 1 || d->pad_lo || d->pad_hi || d->lhs_dilate != 1 ||
        d->rhs_dilate != 1 || d->reversal)
      return false;
  }
  if (!simple_binary(tr_attr_comp(in, TR_ATTR_TO_APPLY), &op, &swap)) return false;
  if (init->shape->dtype != x->shape->dtype || in->shape->dtype != x->shape->dtype || !fire(s, in))
    return false;
  if (is_identity(op, init)) return replace(s, in, x);
  tr_instr *t = emit_combine(s, in, op, swap, init, x);
  t->shape = like(s, in);
  return replace(s, in, t);
}

/* ---- identities and absorbing elements ---- */

/* For op(a, b): when pred holds for b (or, when op commutes by ops.def's
 * C flag, for a), sets *other to the remaining operand and *hit to the one
 * that matched. */
static bool match_const(const tr_instr *in, bool (*pred)(const tr_instr *), tr_instr **other,
                        tr_instr **hit) {
  bool commutes = (tr_ops[in->op].flags & TR_OPF_C) != 0;
  if (pred(in->operands[1])) {
    *other = in->operands[0];
    *hit = in->operands[1];
    return true;
  }
  if (commutes && pred(in->operands[0])) {
    *other = in->operands[1];
    *hit = in->operands[0];
    return true;
  }
  return false;
}

/* Additive identity: integer 0, float -0.0. */
static bool is_add_identity(const tr_instr *x) { return kind(x) != TR_DK_PRED && is_identity(TR_OP_ADD, x); }

/* x + 0 -> x for integers; x + (-0.0) -> x for floats. x + (+0.0) is NOT
 * folded: -0.0 + +0.0 = +0.0 (XLA folds it; trench's reference is exact). */
bool rule_add_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_add_identity, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* Subtracting +0.0 is adding -0.0: exact for every x, -0.0 included. */
static bool is_sub_identity(const tr_instr *x) {
  return is_flt(x) ? flt_is(x, 0.0) : is_int(x) && int_is(x, 0);
}

/* x - 0 -> x (integers; floats with +0.0). */
bool rule_sub_zero(simp *s, tr_instr *in) {
  if (!is_sub_identity(in->operands[1])) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* x - x -> 0 for integers (floats: inf - inf is NaN). */
bool rule_sub_self_int(simp *s, tr_instr *in) {
  if (in->operands[0] != in->operands[1] || !is_int(in) || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, 0));
}

/* x * 1 -> x for every type: x * 1.0 is x, NaN and -0.0 included. */
bool rule_mul_one(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_one, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* x * 0 -> 0 for integers and pred only (floats: NaN * 0, inf * 0, -x * 0). */
bool rule_mul_zero_int(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* x / 1 -> x for integers and floats. */
bool rule_div_one(simp *s, tr_instr *in) {
  if (!is_one(in->operands[1])) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* and(x, all ones) -> x. */
bool rule_and_ones(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_ones, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* and(x, 0) -> 0. */
bool rule_and_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* or(x, 0) -> x. */
bool rule_or_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* or(x, all ones) -> all ones. */
bool rule_or_ones(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_ones, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* xor(x, 0) -> x. */
bool rule_xor_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* xor(x, x) -> 0. */
bool rule_xor_self(simp *s, tr_instr *in) {
  if (in->operands[0] != in->operands[1] || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, 0));
}

/* op(x, x) -> x for the binary ops ops.def marks idempotent (I): max,
 * min, and, or (a NaN x stays x). */
bool rule_idempotent_self(simp *s, tr_instr *in) {
  if (!(tr_ops[in->op].flags & TR_OPF_I)) return false;
  if (in->noperands != 2 || in->operands[0] != in->operands[1]) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* max(x, lowest) -> x (lowest: -inf, INT_MIN, 0 unsigned, false; the
 * reference's max returns a NaN operand, and x on ties). */
bool rule_max_lowest(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_lowest, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* min(x, highest) -> x. */
bool rule_min_highest(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_highest, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* shift(x, 0) -> x for all three shifts. */
bool rule_shift_zero(simp *s, tr_instr *in) {
  if (in->op != TR_OP_SHIFT_LEFT && in->op != TR_OP_SHIFT_RIGHT_ARITHMETIC &&
      in->op != TR_OP_SHIFT_RIGHT_LOGICAL)
    return false;
  if (!int_is(in->operands[1], 0)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- unary chains ---- */

/* abs(abs(x)) -> abs(x). */
bool rule_abs_of_abs(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_ABS) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* negate(negate(x)) -> x (ints wrap back: -(-INT_MIN) = INT_MIN). */
bool rule_negate_of_negate(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_NEGATE) return false;
  return fire_replace(s, in, in->operands[0]->operands[0]);
}

/* not(not(x)) -> x. */
bool rule_not_of_not(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_NOT) return false;
  return fire_replace(s, in, in->operands[0]->operands[0]);
}

/* sign(sign(x)) -> sign(x) (-1, +-0, 1 and NaN are fixed points). */
bool rule_sign_of_sign(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_SIGN) return false;
  return fire_replace(s, in, in->operands[0]);
}

static bool is_rounding(tr_op op) {
  return op == TR_OP_FLOOR || op == TR_OP_CEIL || op == TR_OP_ROUND_NEAREST_AFZ ||
         op == TR_OP_ROUND_NEAREST_EVEN;
}

/* round(round'(x)) -> round'(x) for floor, ceil and both round-nearest:
 * the inner result is integral (or inf, NaN, +-0), which every rounding
 * keeps. */
bool rule_rounding_idempotent(simp *s, tr_instr *in) {
  if (!is_rounding(in->op) || !is_rounding(in->operands[0]->op)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- powers ---- */

static bool exponent_is(const tr_instr *e, int64_t v) {
  return is_flt(e) ? flt_is(e, (double)v) || (v == 0 && flt_is(e, -0.0)) : int_is(e, v);
}

/* pow(x, 0) -> 1: the reference (as XLA's evaluator) gives 1 for every x,
 * NaN included; integer x^0 is 1 too. */
bool rule_pow_zero(simp *s, tr_instr *in) {
  if (!exponent_is(in->operands[1], 0) || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, value_bits(in->shape->dtype, 1)));
}

/* pow(x, 1) -> x. */
bool rule_pow_one(simp *s, tr_instr *in) {
  if (!exponent_is(in->operands[1], 1)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* pow(x, 2) -> x * x (XLA's rewrite). Exact for integers (both wrap) and
 * for floats of at most 32 bits, whose square is exact in double before
 * the one rounding to the type. Not f64: the reference's powl squares in
 * 64-bit-mantissa long double and rounds twice, x*x rounds once. */
bool rule_pow_two(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!exponent_is(in->operands[1], 2) || (is_flt(x) && tr_dtypes[x->shape->dtype].bits > 32))
    return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit2(s, in, TR_OP_MULTIPLY, like(s, in), x, x));
}

/* pow(x, 3) -> x * x * x for integers (wrapping products). Not floats: two
 * roundings instead of one (XLA rewrites them too, changing values). */
bool rule_pow_three_int(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!is_int(x) || !exponent_is(in->operands[1], 3) || !fire(s, in)) return false;
  tr_instr *sq = emit2(s, in, TR_OP_MULTIPLY, like(s, in), x, x);
  return replace(s, in, emit2(s, in, TR_OP_MULTIPLY, like(s, in), sq, x));
}

