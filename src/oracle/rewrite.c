/* rewrite.c - the module rewrites behind the profile's rewrite rules
 * (profile.h, docs/PROFILES.md). A target that rewrites a module before
 * running it (XLA's algebraic simplifier folds log(exp(x)) to x) computes
 * a different function where the rewrite is not exact; the rule excuses an
 * element only where the target agrees with the reference evaluated on the
 * rewritten module, so the excuse is as narrow as the rewrite itself. */
#include "profile.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static tr_instr *add_before(tr_module *m, tr_comp *c, tr_instr *pos, tr_op op, const char *base,
                            const char *suffix, tr_shape *shape, tr_instr **ops, int nops);

/* log(exp(x)) -> x on the fold dtypes: the log's users read x; and
 * log(pow(a, b)) -> b * log(abs(a)), XLA's simplifier's other log fold
 * (measured: log(pow(1e10, 5)) is 115.13 where pow overflows f32). Also
 * log(abs(exp(x))): the simplifier drops an abs of what is never
 * negative first (a 10-minute xla-cpu campaign, seed 20: log(abs(exp(x)))
 * of an exp that overflows gave x = 470.56). Moves between them
 * (transpose, reshape, copy, broadcast) commute with both ops, so
 * log(abs(transpose(exp(x)))) -> transpose(x), the move made again on x
 * (seed 25: 1.9357e11 for log of an overflowed exp through a transpose). */
static int fold_log_exp(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *lg = c->instrs[i];
      if (lg->op != TR_OP_LOG || lg->noperands != 1 || !lg->shape) continue;
      tr_instr *moves[8], *ex = lg->operands[0];
      int nm = 0;
      bool abs = false;
      while (ex->noperands == 1 && (ex->op == TR_OP_ABS || ((ex->op == TR_OP_TRANSPOSE || ex->op == TR_OP_RESHAPE ||
                                                           ex->op == TR_OP_COPY || ex->op == TR_OP_BROADCAST) &&
                                                          nm < 8))) {
        if (ex->op != TR_OP_ABS) moves[nm++] = ex;
        abs |= ex->op == TR_OP_ABS;
        ex = ex->operands[0];
      }
      tr_dtype dt = lg->shape->dtype;
      bool pw = ex->op == TR_OP_POWER && !abs && ex->noperands == 2 && ex->shape &&
                tr_shape_equal(ex->operands[0]->shape, ex->shape) && tr_shape_equal(ex->operands[1]->shape, ex->shape);
      if ((ex->op != TR_OP_EXPONENTIAL || ex->noperands != 1 || !ex->shape) && !pw) continue;
      if (!p->fold[dt] || ex->shape->dtype != dt || ex->operands[0]->shape->dtype != dt) continue;
      tr_instr *v = ex->operands[0];
      if (pw) { /* log(pow(a, b)) -> b * log(abs(a)) (seed 26: 124.4 for log of an overflowed pow) */
        tr_instr *a0 = ex->operands[0], *b0 = ex->operands[1];
        tr_instr *ab = add_before(m, c, lg, TR_OP_ABS, ex->name, "logpow.abs", ex->shape, &a0, 1);
        tr_instr *la = add_before(m, c, lg, TR_OP_LOG, ex->name, "logpow.log", ex->shape, &ab, 1);
        tr_instr *mo[2] = {b0, la};
        v = add_before(m, c, lg, TR_OP_MULTIPLY, ex->name, "logpow", ex->shape, mo, 2);
        i += 3;
      }
      for (int j = nm - 1; j >= 0; j--) {
        tr_instr *mv = add_before(m, c, lg, moves[j]->op, moves[j]->name, "logexp", moves[j]->shape, &v, 1);
        mv->attrs = moves[j]->attrs; /* shared: tr_instr_add_attr copies first */
        mv->nattrs = moves[j]->nattrs;
        v = mv;
      }
      i += nm; /* past the moves made before the log */
      tr_instr_replace_uses(lg, v);
      n++;
    }
  }
  return n;
}

/* An integer convolution of a wrap dtype computed in 64 bits and then
 * converted down: the reference's narrow integer convolution saturates
 * (as XLA's HloEvaluator does), an int -> int convert wraps (as XLA CPU's
 * convolution does). The sums of the suite's and of real models' integer
 * convolutions stay far below 2^63. */
static int wrap_int_conv(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *cv = c->instrs[i];
      if (cv->op != TR_OP_CONVOLUTION || !cv->shape || !tr_shape_is_array(cv->shape)) continue;
      tr_dtype dt = cv->shape->dtype;
      if (!p->wrap[dt]) continue;
      tr_shape *narrow = cv->shape;
      tr_dtype wide = tr_dtypes[dt].kind == TR_DK_UINT ? TR_DT_U64 : TR_DT_S64;
      char name[256];
      snprintf(name, sizeof name, "%s.wrap", cv->name);
      tr_instr *down = tr_instr_new(m, TR_OP_CONVERT, name, narrow);
      tr_comp_insert_before(c, i + 1 < c->ninstrs ? c->instrs[i + 1] : NULL, down);
      tr_instr_replace_uses(cv, down);
      tr_instr_set_operands(down, &cv, 1);
      cv->shape = tr_shape_array(m->arena, wide, narrow->rank, narrow->dims);
      n++;
      i++; /* past the convert */
    }
  }
  return n;
}

/* A convolution of a zpad dtype with edge padding or base dilation
 * becomes an explicit pad with zeros (edges and holes) and a convolution
 * without either: the reference (like XLA's HloEvaluator) skips padded
 * taps, a target that pads first multiplies the zeros, and 0 * inf is
 * NaN. Where the target skips them after all, the element still matches
 * the original reference and is not excused. */
static int zero_pad_conv(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *cv = c->instrs[i];
      if (cv->op != TR_OP_CONVOLUTION || cv->noperands != 2 || !cv->shape || !p->zpad[cv->shape->dtype])
        continue;
      tr_attr *wa = tr_instr_attr(cv, TR_ATTR_WINDOW);
      const tr_attr *dl = tr_instr_attr(cv, TR_ATTR_DIM_LABELS);
      tr_instr *x = cv->operands[0];
      if (!wa || !dl || !dl->u.conv || !x->shape || !tr_shape_is_array(x->shape) ||
          wa->n != dl->u.conv->nspatial)
        continue;
      bool any = false;
      for (int d = 0; d < wa->n; d++)
        any |= wa->u.win[d].pad_lo > 0 || wa->u.win[d].pad_hi > 0 || wa->u.win[d].lhs_dilate > 1;
      if (!any) continue;
      const tr_shape *xs = x->shape;
      tr_arena *a = m->arena;
      char name[256];
      /* The zero scalar of x's dtype (all-zero bits: +0, 0, false). */
      tr_literal *lit = tr_arena_alloc(a, sizeof *lit);
      memset(lit, 0, sizeof *lit);
      lit->shape = tr_shape_array(a, xs->dtype, 0, NULL);
      lit->data = tr_arena_alloc(a, 16);
      memset(lit->data, 0, 16);
      snprintf(name, sizeof name, "%s.zero", cv->name);
      tr_instr *z = tr_instr_new(m, TR_OP_CONSTANT, name, lit->shape);
      z->literal = lit;
      /* Padding per dim of x: the window's edges and holes on the spatial
       * dims (negative edges too: pad applies them after the holes, as the
       * convolution does). */
      tr_pad_dim *pd = tr_arena_alloc(a, sizeof(tr_pad_dim) * (size_t)(xs->rank + 1));
      memset(pd, 0, sizeof(tr_pad_dim) * (size_t)(xs->rank + 1));
      tr_window_dim *nw = tr_arena_alloc(a, sizeof(tr_window_dim) * (size_t)wa->n);
      memcpy(nw, wa->u.win, sizeof(tr_window_dim) * (size_t)wa->n);
      int64_t *dims = tr_arena_alloc(a, sizeof(int64_t) * (size_t)(xs->rank + 1));
      memcpy(dims, xs->dims, sizeof(int64_t) * (size_t)xs->rank);
      for (int d = 0; d < wa->n; d++) {
        int64_t sd = dl->u.conv->in_spatial[d];
        pd[sd].lo = nw[d].pad_lo;
        pd[sd].hi = nw[d].pad_hi;
        pd[sd].interior = nw[d].lhs_dilate > 1 ? nw[d].lhs_dilate - 1 : 0;
        int64_t e = dims[sd];
        dims[sd] = e + pd[sd].lo + pd[sd].hi + (e > 0 ? (e - 1) * pd[sd].interior : 0);
        nw[d].pad_lo = nw[d].pad_hi = 0;
        nw[d].lhs_dilate = 1;
      }
      snprintf(name, sizeof name, "%s.pad", cv->name);
      tr_instr *pad = tr_instr_new(m, TR_OP_PAD, name, tr_shape_array(a, xs->dtype, xs->rank, dims));
      tr_comp_insert_before(c, cv, z);
      tr_comp_insert_before(c, cv, pad);
      tr_instr *ops[2] = {x, z};
      tr_instr_set_operands(pad, ops, 2);
      tr_attr *pa = tr_instr_add_attr(m, pad, TR_ATTR_PADDING, TR_AK_PADDING, NULL);
      pa->n = xs->rank;
      pa->u.pad = pd;
      wa = tr_instr_attr(cv, TR_ATTR_WINDOW);
      wa->u.win = nw;
      tr_instr_replace_operand(cv, 0, pad);
      n++;
      i += 2; /* cv moved past the two new instructions */
    }
  }
  return n;
}

/* The identity of a reducer computation whose root is op(p0, p1) for
 * dtype dt, as a scalar tensor; NULL when op has none in dt (max/min of
 * a float type without infinities) or the reducer is anything else. */
static tr_tensor *reducer_identity(const tr_comp *k, tr_dtype dt) {
  const tr_instr *r = k ? k->root : NULL;
  if (!r || r->noperands != 2 || r->operands[0]->op != TR_OP_PARAMETER || r->operands[1]->op != TR_OP_PARAMETER)
    return NULL;
  bool fl = tr_dtype_is_float(dt), pred = dt == TR_DT_PRED, sgn = tr_dtypes[dt].kind == TR_DK_SINT;
  if (!fl && !pred && !tr_dtype_is_int(dt)) return NULL;
  int bits = tr_dtypes[dt].bits;
  tr_tensor *t = tr_tensor_new(dt, 0, NULL, NULL);
  if (!t) return NULL;
  bool ok = true;
  switch (r->op) {
  case TR_OP_ADD: case TR_OP_OR: case TR_OP_XOR: tr_tensor_set_bits(t, 0, 0); break;
  case TR_OP_MULTIPLY:
    if (fl) tr_tensor_set_f(t, 0, 1.0);
    else tr_tensor_set_bits(t, 0, 1);
    break;
  case TR_OP_AND: tr_tensor_set_bits(t, 0, pred ? 1 : (bits >= 64 ? ~0ull : (1ull << bits) - 1)); break;
  case TR_OP_MAXIMUM: case TR_OP_MINIMUM: {
    bool mx = r->op == TR_OP_MAXIMUM;
    if (fl) {
      ok = tr_float_has_inf(dt);
      if (ok) tr_tensor_set_f(t, 0, mx ? -INFINITY : INFINITY);
    } else if (pred) {
      tr_tensor_set_bits(t, 0, mx ? 0 : 1);
    } else if (sgn) {
      tr_tensor_set_i(t, 0, mx ? -(int64_t)(bits >= 64 ? (1ull << 63) : (1ull << (bits - 1)))
                               : (int64_t)((bits >= 64 ? (1ull << 63) : (1ull << (bits - 1))) - 1));
    } else {
      tr_tensor_set_u(t, 0, mx ? 0 : (bits >= 64 ? ~0ull : (1ull << bits) - 1));
    }
    break;
  }
  default: ok = false;
  }
  if (!ok) {
    tr_tensor_free(t);
    return NULL;
  }
  return t;
}

/* reduce and reduce-window of one operand whose init is a constant other
 * than its reducer's identity: the init made the identity. XLA documents
 * that the init must be an identity, and its simplifier relies on it (a
 * reduce over size-1 dims becomes a reshape that drops the init), so with
 * any other init both answers are XLA's; an element is excused only where
 * the target equals the reference of this module. */
static int identity_inits(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *rd = c->instrs[i];
      if ((rd->op != TR_OP_REDUCE && rd->op != TR_OP_REDUCE_WINDOW) || rd->noperands != 2) continue;
      tr_instr *init = rd->operands[1];
      if (init->op != TR_OP_CONSTANT || !init->literal || init->literal->elided || !init->shape ||
          !tr_shape_is_array(init->shape) || init->shape->rank != 0)
        continue;
      const void *have = init->literal->single ? init->literal->one : init->literal->data;
      tr_tensor *id = reducer_identity(tr_attr_comp(rd, TR_ATTR_TO_APPLY), init->shape->dtype);
      if (!id || !have) {
        tr_tensor_free(id);
        continue;
      }
      if (memcmp(have, id->data, id->nbytes) == 0) {
        tr_tensor_free(id);
        continue;
      }
      tr_literal *lit = tr_arena_alloc(m->arena, sizeof *lit);
      memset(lit, 0, sizeof *lit);
      lit->shape = init->shape;
      lit->data = tr_arena_memdup(m->arena, id->data, id->nbytes);
      tr_tensor_free(id);
      char name[256];
      snprintf(name, sizeof name, "%s.identity", init->name);
      tr_instr *z = tr_instr_new(m, TR_OP_CONSTANT, name, init->shape);
      z->literal = lit;
      tr_comp_insert_before(c, rd, z);
      tr_instr_replace_operand(rd, 1, z);
      n++;
      i++; /* rd moved past the new constant */
    }
  }
  return n;
}

/* A new instruction of c placed before pos (NULL: at the end). */
static tr_instr *add_before(tr_module *m, tr_comp *c, tr_instr *pos, tr_op op, const char *base,
                            const char *suffix, tr_shape *shape, tr_instr **ops, int nops) {
  char name[256];
  snprintf(name, sizeof name, "%s.%s", base, suffix);
  tr_instr *in = tr_instr_new(m, op, name, shape);
  tr_comp_insert_before(c, pos, in);
  tr_instr_set_operands(in, ops, nops);
  return in;
}

/* isnan(x) as HLO: compare(x, x), direction=NE. */
static tr_instr *is_nan(tr_module *m, tr_comp *c, tr_instr *pos, tr_instr *x, const char *sfx) {
  tr_instr *ops[2] = {x, x};
  tr_instr *cmp = add_before(m, c, pos, TR_OP_COMPARE, x->name, sfx,
                             tr_shape_array(m->arena, TR_DT_PRED, x->shape->rank, x->shape->dims), ops, 2);
  tr_attr *at = tr_instr_add_attr(m, cmp, TR_ATTR_DIRECTION, TR_AK_IDENT, NULL);
  at->u.s = tr_arena_strdup(m->arena, "NE");
  return cmp;
}

/* Every maximum and minimum of a fast-minmax dtype (element-wise, and so
 * inside reduce, reduce-window and clamp-free bodies too) made to drop a
 * NaN operand: select(isnan(a), b, select(isnan(b), a, max(a, b))). The
 * reference on this module is what a NaN-dropping target computes: an
 * element is excused only where the target equals it, so a NaN turned
 * into a number where no min or max was on its path stays a mismatch. */
static int drop_nan_minmax(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *mm = c->instrs[i];
      if ((mm->op != TR_OP_MAXIMUM && mm->op != TR_OP_MINIMUM) || mm->noperands != 2 || !mm->shape ||
          !tr_shape_is_array(mm->shape) || !p->minmax[mm->shape->dtype])
        continue;
      tr_instr *a = mm->operands[0], *b = mm->operands[1];
      if (!a->shape || !b->shape || !tr_shape_same_dims(a->shape, mm->shape) ||
          !tr_shape_same_dims(b->shape, mm->shape))
        continue;
      tr_instr *next = i + 1 < c->ninstrs ? c->instrs[i + 1] : NULL;
      tr_instr *na = is_nan(m, c, next, a, "nan0");
      tr_instr *nb = is_nan(m, c, next, b, "nan1");
      tr_instr *ops[3] = {nb, a, b};
      tr_instr *inner = add_before(m, c, next, TR_OP_SELECT, mm->name, "keep0", mm->shape, ops, 3);
      tr_instr *outer_ops[3] = {na, b, inner};
      tr_instr *outer = add_before(m, c, next, TR_OP_SELECT, mm->name, "dropnan", mm->shape, outer_ops, 3);
      tr_instr_replace_uses(mm, outer);
      tr_instr_replace_operand(inner, 2, mm);
      n++;
      i += 4; /* past the new instructions */
    }
  }
  return n;
}

/* A dot or convolution whose result dtype the rule names, on float
 * operands no wider than the accumulator: operands converted up (exact),
 * the contraction in the accumulator, one convert down to the result
 * dtype. */
static int accumulate_dots(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *dot = c->instrs[i];
      if ((dot->op != TR_OP_DOT && dot->op != TR_OP_CONVOLUTION) || dot->noperands != 2 || !dot->shape ||
          !tr_shape_is_array(dot->shape))
        continue;
      tr_shape *rs = dot->shape;
      tr_dtype acc = p->dot_acc[rs->dtype];
      if (acc == TR_DT_PRED) continue;
      bool fits = true;
      for (int q = 0; q < 2; q++) {
        const tr_shape *os = dot->operands[q]->shape;
        fits &= os && tr_shape_is_array(os) && tr_dtype_is_float(os->dtype) &&
                tr_dtypes[os->dtype].bits <= tr_dtypes[acc].bits;
      }
      if (!fits) continue;
      char name[256];
      for (int q = 0; q < 2; q++) {
        tr_instr *x = dot->operands[q];
        if (x->shape->dtype == acc) continue;
        snprintf(name, sizeof name, "%s.acc%d", dot->name, q);
        tr_instr *up = tr_instr_new(m, TR_OP_CONVERT, name,
                                    tr_shape_array(m->arena, acc, x->shape->rank, x->shape->dims));
        tr_comp_insert_before(c, dot, up);
        tr_instr_set_operands(up, &x, 1);
        tr_instr_replace_operand(dot, q, up);
        i++; /* dot moved past it */
      }
      snprintf(name, sizeof name, "%s.round", dot->name);
      tr_instr *down = tr_instr_new(m, TR_OP_CONVERT, name, rs);
      tr_comp_insert_before(c, i + 1 < c->ninstrs ? c->instrs[i + 1] : NULL, down);
      tr_instr_replace_uses(dot, down);
      tr_instr_set_operands(down, &dot, 1);
      dot->shape = tr_shape_array(m->arena, acc, rs->rank, rs->dims);
      n++;
      i++; /* past the convert */
    }
  }
  return n;
}

/* A constant of shape s, every element v (a signed integer dtype). */
static tr_instr *int_splat(tr_module *m, tr_comp *c, tr_instr *pos, const char *base, const char *sfx,
                           tr_shape *s, int64_t v) {
  tr_tensor *t = tr_tensor_new(s->dtype, s->rank, s->dims, NULL);
  if (!t) return NULL;
  for (size_t e = 0; e < tr_tensor_count(t); e++) tr_tensor_set_i(t, e, v);
  tr_literal *lit = tr_arena_alloc(m->arena, sizeof *lit);
  memset(lit, 0, sizeof *lit);
  lit->shape = s;
  lit->data = tr_arena_memdup(m->arena, t->data, t->nbytes);
  tr_tensor_free(t);
  tr_instr *k = add_before(m, c, pos, TR_OP_CONSTANT, base, sfx, s, NULL, 0);
  k->literal = lit;
  return k;
}

/* compare(a, b), direction=dir, as a new instruction before pos. */
static tr_instr *cmp_before(tr_module *m, tr_comp *c, tr_instr *pos, const char *base, const char *sfx,
                            tr_instr *a, tr_instr *b, const char *dir) {
  tr_instr *ops[2] = {a, b};
  tr_instr *in = add_before(m, c, pos, TR_OP_COMPARE, base, sfx,
                            tr_shape_array(m->arena, TR_DT_PRED, a->shape->rank, a->shape->dims), ops, 2);
  tr_attr *at = tr_instr_add_attr(m, in, TR_ATTR_DIRECTION, TR_AK_IDENT, NULL);
  at->u.s = tr_arena_strdup(m->arena, dir);
  return in;
}

/* Every power of an int-power-unit-base dtype made StableHLO's:
 * select(a == -1 & b < 0, select(b & 1 == 1, -1, 1), power(a, b)). The
 * reference (XLA's semantics) gives 0 there; elsewhere the two agree, so
 * the rewritten module differs from the reference only where a power of
 * -1 to a negative exponent is on the element's path. */
static int unit_base_power(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *pw = c->instrs[i];
      if (pw->op != TR_OP_POWER || pw->noperands != 2 || !pw->shape || !tr_shape_is_array(pw->shape) ||
          !p->ipow_unit[pw->shape->dtype])
        continue;
      tr_instr *a = pw->operands[0], *b = pw->operands[1];
      if (!a->shape || !b->shape || !tr_shape_same_dims(a->shape, pw->shape) ||
          !tr_shape_same_dims(b->shape, pw->shape))
        continue;
      tr_instr *next = i + 1 < c->ninstrs ? c->instrs[i + 1] : NULL;
      tr_shape *s = pw->shape;
      tr_instr *m1 = int_splat(m, c, next, pw->name, "m1", s, -1);
      tr_instr *zero = int_splat(m, c, next, pw->name, "zero", s, 0);
      tr_instr *one = int_splat(m, c, next, pw->name, "one", s, 1);
      if (!m1 || !zero || !one) continue;
      tr_instr *ism1 = cmp_before(m, c, next, pw->name, "ism1", a, m1, "EQ");
      tr_instr *neg = cmp_before(m, c, next, pw->name, "neg", b, zero, "LT");
      tr_shape *ps = ism1->shape;
      tr_instr *both_ops[2] = {ism1, neg};
      tr_instr *both = add_before(m, c, next, TR_OP_AND, pw->name, "unitneg", ps, both_ops, 2);
      tr_instr *low_ops[2] = {b, one};
      tr_instr *low = add_before(m, c, next, TR_OP_AND, pw->name, "low", s, low_ops, 2);
      tr_instr *odd = cmp_before(m, c, next, pw->name, "odd", low, one, "EQ");
      tr_instr *sign_ops[3] = {odd, m1, one};
      tr_instr *sign = add_before(m, c, next, TR_OP_SELECT, pw->name, "sign", s, sign_ops, 3);
      tr_instr *out_ops[3] = {both, sign, pw};
      tr_instr *out = add_before(m, c, next, TR_OP_SELECT, pw->name, "stablehlo", s, out_ops, 3);
      tr_instr_replace_uses(pw, out);
      tr_instr_replace_operand(out, 2, pw);
      n++;
      i += 10; /* past the new instructions */
    }
  }
  return n;
}

tr_module *tr_profile_narrowed(const tr_profile *p, const tr_module *m, int *count) {
  *count = 0;
  if (!p || !p->on[TR_PR_DOT_ACCUMULATE]) return NULL;
  tr_module *d = tr_module_clone(m);
  int n = accumulate_dots(p, d);
  if (!n) {
    tr_module_free(d);
    return NULL;
  }
  tr_module_rebuild_users(d);
  *count = n;
  return d;
}

tr_module *tr_profile_rewrite(const tr_profile *p, tr_prule r, const tr_module *m, int *count) {
  *count = 0;
  if (!p || !p->on[r] || (r != TR_PR_LOG_EXP_FOLD && r != TR_PR_INT_CONV_WRAP && r != TR_PR_CONV_ZERO_PAD &&
                          r != TR_PR_FAST_MINMAX && r != TR_PR_REDUCE_INIT_IDENTITY &&
                          r != TR_PR_INT_POWER_UNIT_BASE))
    return NULL;
  tr_module *d = tr_module_clone(m);
  int n = r == TR_PR_LOG_EXP_FOLD    ? fold_log_exp(p, d)
          : r == TR_PR_INT_CONV_WRAP ? wrap_int_conv(p, d)
          : r == TR_PR_FAST_MINMAX   ? drop_nan_minmax(p, d)
          : r == TR_PR_REDUCE_INIT_IDENTITY ? identity_inits(p, d)
          : r == TR_PR_INT_POWER_UNIT_BASE ? unit_base_power(p, d)
                                     : zero_pad_conv(p, d);
  if (!n) {
    tr_module_free(d);
    return NULL;
  }
  tr_module_rebuild_users(d);
  *count = n;
  return d;
}

bool tr_profile_flushes_results(const tr_profile *p, const tr_module *m, tr_dtype dt) {
  if (!p || !p->on[TR_PR_FLUSH_RESULTS]) return false;
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (in->shape && tr_shape_is_array(in->shape) && in->shape->dtype == dt && p->flushres[in->op][dt])
        return true;
    }
  return false;
}
