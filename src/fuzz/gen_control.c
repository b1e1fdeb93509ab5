/* gen_control.c - the generator's makers of tuples and control flow:
 * tuple, get-tuple-element, call (and kLoop fusion), map, counted while
 * loops in the forms loop analyses count, conditional. */
#include "genint.h"

#include <string.h>

tr_instr *gen_mk_tuple(gen_ctx *g, tr_op op) {
  int n = 1 + (int)gen_below(g, 3);
  tr_instr *xs[3];
  for (int i = 0; i < n; i++) xs[i] = gen_pick(g);
  tr_instr *t = tr_build_tuple(g->c, xs, n, &g->why);
  if (!t) return NULL;
  gen_push(g, t);
  return tr_build_gte(g->c, t, gen_below(g, n), &g->why);
}

tr_instr *gen_mk_gte(gen_ctx *g, tr_op op) {
  for (int k = g->npool - 1; k >= 0; k--) {
    tr_instr *t = g->pool[k];
    if (t->shape->dtype == TR_DT_TUPLE && t->shape->nelems > 0 && gen_chance(g, 70))
      return tr_build_gte(g->c, t, gen_below(g, t->shape->nelems), &g->why);
  }
  return gen_mk_tuple(g, op);
}

/* A computation taking params of the given shapes whose root is a short
 * elementwise chain on param 0 (tuple params are opened first). */
static tr_comp *chain_comp(gen_ctx *g, const char *base, tr_shape *const *ps, int n, int len) {
  tr_comp *k = tr_build_comp(g->m, gen_comp_name(g, base), false);
  for (int i = 0; i < n; i++) tr_build_param(k, ps[i]);
  gen_saved sv;
  gen_enter(g, k, &sv);
  tr_instr *x = k->params[0];
  if (x->shape->dtype == TR_DT_TUPLE) x = tr_build_gte(k, x, 0, &g->why);
  tr_instr *r = x ? gen_chain(g, x, len) : NULL;
  gen_leave(g, &sv);
  tr_build_root(k, r ? r : k->params[0]);
  return k;
}

tr_instr *gen_mk_call(gen_ctx *g, tr_op op) {
  if (g->depth > 1) return NULL;
  tr_instr *x = gen_pick(g);
  if (gen_is_cplx(x->shape->dtype)) return NULL;
  tr_instr *ops[2] = {x, gen_pick(g)};
  int n = 1 + (int)gen_below(g, 2);
  tr_shape *ps[2] = {ops[0]->shape, ops[1]->shape};
  tr_comp *k = chain_comp(g, op == TR_OP_MAP ? "mapped" : op == TR_OP_FUSION ? "fused" : "called", ps, n,
                          1 + (int)gen_below(g, 4));
  tr_instr *in = tr_build_begin(g->c, op, ops, n);
  if (op == TR_OP_FUSION) {
    tr_build_ident(in, TR_ATTR_KIND, "kLoop");
    tr_build_callee(in, TR_ATTR_CALLS, k);
  } else {
    tr_build_callee(in, TR_ATTR_TO_APPLY, k);
  }
  return gen_end(g, in, NULL);
}

tr_instr *gen_mk_map(gen_ctx *g, tr_op op) {
  tr_instr *x = gen_pick(g);
  tr_dtype dt = x->shape->dtype;
  if (gen_is_cplx(dt)) return NULL;
  tr_instr *ops[2] = {x, NULL};
  int n = 1 + (int)gen_below(g, 2);
  if (n == 2 && !(ops[1] = gen_partner(g, x, dt))) return NULL;
  tr_shape *ps[2] = {gen_scalar(g, dt), gen_scalar(g, dt)};
  tr_comp *k = chain_comp(g, "mapped", ps, n, 1 + (int)gen_below(g, 3));
  tr_instr *in = tr_build_begin(g->c, op, ops, n);
  int64_t dims[8];
  for (int d = 0; d < x->shape->rank; d++) dims[d] = d;
  tr_build_ints(in, TR_ATTR_DIMENSIONS, dims, x->shape->rank);
  tr_build_callee(in, TR_ATTR_TO_APPLY, k);
  return gen_end(g, in, NULL);
}

/* A counted loop's shape: the counter starts at i0 and steps by step
 * (up or down) while compare(counter, limit, dir) holds (or the mirrored
 * compare(limit, counter), when swap), for `trips` trips. The forms are
 * the ones loop analyses count differently: exclusive and inclusive
 * bounds, both directions, steps past 1, NE, starts off zero. */
typedef struct {
  int64_t i0, step, limit;
  const char *dir;
  bool swap;
} loop_form;

static loop_form draw_loop(gen_ctx *g, int64_t trips) {
  loop_form f;
  int64_t s = 1 + gen_below(g, 3), t = trips;
  f.i0 = gen_chance(g, 50) ? 0 : gen_below(g, 7) - 3;
  f.swap = gen_chance(g, 25);
  switch (gen_below(g, 5)) {
  case 0: /* up, i < limit: ceil((limit - i0) / s) trips */
    f.step = s, f.dir = "LT";
    f.limit = t ? f.i0 + (t - 1) * s + 1 + gen_below(g, s) : f.i0 - gen_below(g, 2);
    break;
  case 1: /* up, i <= limit: floor((limit - i0) / s) + 1 trips */
    f.step = s, f.dir = "LE";
    f.limit = t ? f.i0 + (t - 1) * s + gen_below(g, s) : f.i0 - 1 - gen_below(g, 2);
    break;
  case 2: /* down, i > limit */
    f.step = -s, f.dir = "GT";
    f.limit = t ? f.i0 - (t - 1) * s - 1 - gen_below(g, s) : f.i0 + gen_below(g, 2);
    break;
  case 3: /* down, i >= limit */
    f.step = -s, f.dir = "GE";
    f.limit = t ? f.i0 - (t - 1) * s - gen_below(g, s) : f.i0 + 1 + gen_below(g, 2);
    break;
  default: /* i != limit, which the counter meets exactly */
    f.step = gen_chance(g, 50) ? s : -s, f.dir = "NE";
    f.limit = f.i0 + t * f.step;
    break;
  }
  return f;
}

/* The mirrored direction: compare(a, b, d) == compare(b, a, mirror(d)). */
static const char *mirror_dir(const char *d) {
  return !strcmp(d, "LT") ? "GT" : !strcmp(d, "GT") ? "LT" : !strcmp(d, "LE") ? "GE" : !strcmp(d, "GE") ? "LE" : d;
}

/* while: state (counter, limit, value); a counted loop of 0 to 4 trips
 * (draw_loop), or, on the plain up-and-LT form, min(limit, ...) trips
 * with a limit read from the inputs and clamped to [0, 4]; the body
 * updates the value (elementwise, or in place through a
 * dynamic-update-slice at the counter, which clamps a counter outside
 * the rows). */
tr_instr *gen_mk_while(gen_ctx *g, tr_op op) {
  if (g->depth > 0) return NULL;
  tr_instr *v = gen_pick(g);
  if (gen_is_cplx(v->shape->dtype)) return NULL;
  loop_form f = draw_loop(g, gen_below(g, 5));
  tr_instr *zero = gen_scalar_const(g, TR_DT_S32, 0), *limit;
  if (!g->consts_only && gen_chance(g, 35)) {
    f = (loop_form){0, 1, 0, "LT", f.swap};
    tr_instr *p = gen_leaf(g, gen_scalar(g, TR_DT_S32));
    tr_instr *ops[3] = {zero, p, gen_scalar_const(g, TR_DT_S32, 4)};
    limit = gen_end(g, tr_build_begin(g->c, TR_OP_CLAMP, ops, 3), NULL);
    if (!limit) return NULL;
  } else {
    limit = gen_scalar_const(g, TR_DT_S32, (double)f.limit);
  }
  tr_instr *start = f.i0 ? gen_scalar_const(g, TR_DT_S32, (double)f.i0) : zero;
  tr_instr *st[3] = {start, limit, v};
  tr_instr *init = tr_build_tuple(g->c, st, 3, &g->why);
  if (!init) return NULL;
  /* condition */
  tr_comp *cond = tr_build_comp(g->m, gen_comp_name(g, "cond"), false);
  tr_instr *cp = tr_build_param(cond, init->shape);
  tr_instr *ci = tr_build_gte(cond, cp, 0, NULL), *cl = tr_build_gte(cond, cp, 1, NULL);
  tr_build_root(cond, f.swap ? tr_build_compare(cond, cl, ci, mirror_dir(f.dir), NULL)
                             : tr_build_compare(cond, ci, cl, f.dir, NULL));
  /* body */
  tr_comp *body = tr_build_comp(g->m, gen_comp_name(g, "body"), false);
  tr_instr *bp = tr_build_param(body, init->shape);
  gen_saved sv;
  gen_enter(g, body, &sv);
  tr_instr *bi = tr_build_gte(body, bp, 0, NULL), *bl = tr_build_gte(body, bp, 1, NULL);
  tr_instr *bv = tr_build_gte(body, bp, 2, NULL);
  /* counter + step, or counter - |step| half the time when going down */
  bool sub = f.step < 0 && gen_chance(g, 50);
  tr_instr *stepc = gen_scalar_const(g, TR_DT_S32, (double)(sub ? -f.step : f.step));
  tr_instr *next = tr_build_binary(body, sub ? TR_OP_SUBTRACT : TR_OP_ADD, bi, stepc, NULL);
  tr_instr *nv = NULL;
  const tr_shape *s = bv->shape;
  if (s->rank >= 1 && s->dims[0] >= 1 && gen_chance(g, 40)) {
    /* row `counter` of the value, changed and written back in place */
    tr_instr *ix[9];
    int64_t sizes[8];
    ix[0] = bv;
    for (int d = 0; d < s->rank; d++) {
      sizes[d] = d == 0 ? 1 : s->dims[d];
      ix[1 + d] = d == 0 ? bi : zero->parent == body ? zero : gen_scalar_const(g, TR_DT_S32, 0);
    }
    tr_instr *ds = tr_build_begin(body, TR_OP_DYNAMIC_SLICE, ix, 1 + s->rank);
    tr_build_ints(ds, TR_ATTR_DYNAMIC_SLICE_SIZES, sizes, s->rank);
    ds = gen_end(g, ds, NULL);
    tr_instr *row = ds ? gen_chain(g, ds, 1 + (int)gen_below(g, 2)) : NULL;
    if (row) {
      tr_instr *u[10];
      u[0] = bv;
      u[1] = row;
      for (int d = 0; d < s->rank; d++) u[2 + d] = ix[1 + d];
      nv = gen_end(g, tr_build_begin(body, TR_OP_DYNAMIC_UPDATE_SLICE, u, 2 + s->rank), NULL);
    }
  }
  if (!nv) nv = gen_chain(g, bv, 1 + (int)gen_below(g, 3));
  gen_leave(g, &sv);
  tr_instr *bs[3] = {next, bl, nv};
  tr_build_root(body, tr_build_tuple(body, bs, 3, NULL));
  tr_instr *in = tr_build_begin(g->c, op, &init, 1);
  tr_build_callee(in, TR_ATTR_CONDITION, cond);
  tr_build_callee(in, TR_ATTR_BODY, body);
  in = gen_end(g, in, NULL);
  if (!in) return NULL;
  gen_push(g, in);
  return tr_build_gte(g->c, in, gen_chance(g, 85) ? 2 : 0, &g->why);
}

/* conditional: a pred (two branches) or an s32 index (two to four, an
 * index out of range takes the last); every branch takes one operand and
 * returns the value's shape. */
tr_instr *gen_mk_conditional(gen_ctx *g, tr_op op) {
  if (g->depth > 0) return NULL;
  tr_instr *x = gen_pick(g);
  if (gen_is_cplx(x->shape->dtype)) return NULL;
  bool pred = gen_chance(g, 50);
  int nb = pred ? 2 : 2 + (int)gen_below(g, 3);
  tr_instr *sel;
  if (pred) {
    tr_instr *a = gen_leaf(g, gen_scalar(g, TR_DT_F32));
    tr_instr *b = gen_scalar_const(g, TR_DT_F32, 0);
    sel = tr_build_compare(g->c, a, b, gen_chance(g, 50) ? "LT" : "GE", &g->why);
  } else {
    sel = g->consts_only || gen_chance(g, 40) ? gen_scalar_const(g, TR_DT_S32, (double)(gen_below(g, nb + 2) - 1))
                                              : gen_leaf(g, gen_scalar(g, TR_DT_S32));
  }
  if (!sel) return NULL;
  tr_comp *br[4];
  tr_instr *ops[5] = {sel};
  for (int i = 0; i < nb; i++) {
    ops[1 + i] = x;
    tr_shape *ps = x->shape;
    br[i] = chain_comp(g, "branch", &ps, 1, (int)gen_below(g, 3));
  }
  tr_instr *in = tr_build_begin(g->c, op, ops, 1 + nb);
  if (pred) {
    tr_build_callee(in, TR_ATTR_TRUE_COMPUTATION, br[0]);
    tr_build_callee(in, TR_ATTR_FALSE_COMPUTATION, br[1]);
  } else {
    tr_build_callees(in, TR_ATTR_BRANCH_COMPUTATIONS, br, nb);
  }
  return gen_end(g, in, NULL);
}
