/* whilesimp.c - while-loop simplification (pass while-simplify), after
 * XLA's WhileLoopSimplifier: an exact trip count for the canonical counted
 * loop, and three rules built on it and on the loop state's use graph:
 *   while-zero-trip          condition false on entry: the loop is its init
 *   while-remove-dead-state  drop state elements nothing observes
 *   while-unroll             inline the body of a loop of at most 8 trips
 * Loops whose condition or body has side effects are left alone: every
 * rule changes how often the condition and body run. Also home of the
 * instruction-copy and naming helpers the newer passes share. */
#include "compint.h"

#include <stdlib.h>
#include <string.h>

/* Full unrolling limits: trips, body size, and total instructions added. */
#define UNROLL_MAX_TRIPS 8
#define UNROLL_MAX_BODY 64
#define UNROLL_MAX_TOTAL 512
/* Sweeps of one computation: a rewritten loop may qualify for another rule. */
#define MAX_SWEEPS 8

/* ISO C has no 128-bit type; trip counts of u64/s64 loops need one to see
 * where the induction variable would wrap. */
__extension__ typedef __int128 i128;

/* ---- shared helpers (declared in compint.h) ---- */

tr_instr *tr_bc_copy_instr(tr_comp *dst, tr_instr *pos, const tr_instr *src, const char *name,
                             tr_shape *shape, tr_instr **ops, int n) {
  tr_module *m = dst->module;
  tr_instr *in = tr_instr_new(m, src->op, name, shape ? shape : tr_shape_clone(m->arena, src->shape));
  in->opname = src->opname;
  in->literal = src->literal;
  in->param_index = src->param_index;
  for (int i = 0; i < src->nattrs; i++) {
    const tr_attr *a = &src->attrs[i];
    /* They order src among its neighbours, which the copy does not have. */
    if (a->key == TR_ATTR_CONTROL_PREDECESSORS) continue;
    tr_attr *at = tr_instr_add_attr(m, in, a->key, a->kind, a->key == TR_ATTR_RAW ? a->name : NULL);
    at->n = a->n;
    at->u = a->u;
  }
  tr_comp_insert_before(dst, pos, in);
  if (n) tr_instr_set_operands(in, ops, n);
  return in;
}

const char *tr_bc_unique_name(tr_comp *c, const char *base) {
  if (!tr_comp_find(c, base)) return tr_arena_strdup(c->module->arena, base);
  tr_buf b = {0};
  const char *out = NULL;
  for (int k = 1; !out; k++) {
    b.n = 0;
    tr_buf_printf(&b, "%s.%d", base, k);
    if (!tr_comp_find(c, tr_buf_str(&b))) out = tr_arena_strdup(c->module->arena, tr_buf_str(&b));
  }
  tr_buf_free(&b);
  return out;
}

const char *tr_module_unique_comp_name(tr_module *m, const char *base) {
  if (!tr_module_find_comp(m, base)) return tr_arena_strdup(m->arena, base);
  tr_buf b = {0};
  const char *out = NULL;
  for (int k = 1; !out; k++) {
    b.n = 0;
    tr_buf_printf(&b, "%s.%d", base, k);
    if (!tr_module_find_comp(m, tr_buf_str(&b))) out = tr_arena_strdup(m->arena, tr_buf_str(&b));
  }
  tr_buf_free(&b);
  return out;
}

tr_comp *tr_bc_new_before(tr_module *m, const char *name, const tr_comp *caller) {
  tr_comp *k = tr_comp_new(m, name);
  int at = -1;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i] == caller) at = i;
  if (at >= 0) {
    memmove(&m->comps[at + 1], &m->comps[at], sizeof(tr_comp *) * (size_t)(m->ncomps - 1 - at));
    m->comps[at] = k;
  }
  return k;
}

/* ---- reading loops ---- */

typedef struct {
  tr_bc_ctx *ctx;
  tr_module *m;
  tr_comp *c;       /* computation holding the loop */
  unsigned char *mark; /* scratch, indexed by instruction id */
  int nmark;
} ws;

static int64_t gte_index(const tr_instr *in) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_INDEX);
  return at && at->kind == TR_AK_INT ? at->u.i : -1;
}

/* x is get-tuple-element(p, k) of the computation's single parameter p. */
static bool is_state_elem(const tr_instr *x, const tr_comp *k, int64_t *idx) {
  if (x->op != TR_OP_GET_TUPLE_ELEMENT || k->nparams != 1 || x->operands[0] != k->params[0])
    return false;
  *idx = gte_index(x);
  return *idx >= 0;
}

/* A scalar integer constant's value, sign- or zero-extended by its type. */
static bool const_int(const tr_instr *x, i128 *v) {
  tr_dtype dt = x->shape->dtype;
  if (x->op != TR_OP_CONSTANT || !x->literal || x->literal->elided || !x->literal->data ||
      x->shape->rank != 0 || !tr_dtype_is_int(dt))
    return false;
  int es = tr_dtype_size(dt), w = tr_dtypes[dt].bits;
  uint64_t b = 0;
  switch (es) {
  case 1: { uint8_t t; memcpy(&t, x->literal->data, 1); b = t; break; }
  case 2: { uint16_t t; memcpy(&t, x->literal->data, 2); b = t; break; }
  case 4: { uint32_t t; memcpy(&t, x->literal->data, 4); b = t; break; }
  default: memcpy(&b, x->literal->data, 8); break;
  }
  if (w < 64) b &= ((uint64_t)1 << w) - 1;
  if (tr_dtypes[dt].kind == TR_DK_SINT && w < 64 && (b >> (w - 1)) & 1) *v = (i128)b - ((i128)1 << w);
  else if (tr_dtypes[dt].kind == TR_DK_SINT && w == 64) *v = (int64_t)b;
  else *v = b;
  return true;
}

typedef enum { D_EQ, D_NE, D_LT, D_LE, D_GT, D_GE, D_NONE } dir;

static dir parse_dir(const char *s) {
  static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  for (int i = 0; s && i < 6; i++)
    if (strcmp(s, names[i]) == 0) return (dir)i;
  return D_NONE;
}

/* a OP b as the compare of a signed or unsigned type orders them: both
 * hold the type's value range, where integer order is the type's. */
static bool holds(dir d, i128 a, i128 b) {
  switch (d) {
  case D_EQ: return a == b;
  case D_NE: return a != b;
  case D_LT: return a < b;
  case D_LE: return a <= b;
  case D_GT: return a > b;
  case D_GE: return a >= b;
  default: return false;
  }
}

/* The counted loop: state element k, i0 on entry, compared by d against
 * bound, stepped by step (a value of the type, as a signed distance). */
typedef struct {
  int64_t k;
  dir d;
  i128 i0, bound, step, lo, hi;
  bool has_step;  /* the body's update was recognized */
} counted;

/* The bound of the condition: a constant, or a state element the body
 * passes on unchanged whose init is a constant (loops often carry their
 * limit). */
static bool bound_of(const tr_instr *w, const tr_instr *x, i128 *v) {
  if (const_int(x, v)) return true;
  const tr_comp *cond = tr_attr_comp(w, TR_ATTR_CONDITION), *body = tr_attr_comp(w, TR_ATTR_BODY);
  const tr_instr *init = w->operands[0], *root = body ? body->root : NULL;
  int64_t m, j;
  if (!is_state_elem(x, cond, &m) || !root || root->op != TR_OP_TUPLE || m >= root->noperands ||
      m >= init->noperands)
    return false;
  return is_state_elem(root->operands[m], body, &j) && j == m && const_int(init->operands[m], v);
}

/* Reads the loop's condition (element k compared against a bound) and
 * its init (a tuple whose element k is a constant); then, if it can, the
 * body's update of element k (k + c or k - c). */
static bool read_counted(const tr_instr *w, counted *lc) {
  const tr_comp *cond = tr_attr_comp(w, TR_ATTR_CONDITION), *body = tr_attr_comp(w, TR_ATTR_BODY);
  const tr_instr *init = w->operands[0];
  if (!cond || !body || init->op != TR_OP_TUPLE || !cond->root) return false;
  const tr_instr *cmp = cond->root;
  if (cmp->op != TR_OP_COMPARE) return false;
  const tr_attr *da = tr_instr_attr(cmp, TR_ATTR_DIRECTION);
  dir d = parse_dir(da && da->kind == TR_AK_IDENT ? da->u.s : NULL);
  if (d == D_NONE) return false;
  int64_t k;
  i128 bound;
  if (is_state_elem(cmp->operands[0], cond, &k) && bound_of(w, cmp->operands[1], &bound)) {
  } else if (is_state_elem(cmp->operands[1], cond, &k) && bound_of(w, cmp->operands[0], &bound)) {
    /* bound OP x is x OP' bound with the order mirrored. */
    static const dir mirror[] = {D_EQ, D_NE, D_GT, D_GE, D_LT, D_LE};
    d = mirror[d];
  } else {
    return false;
  }
  tr_dtype dt = cmp->operands[0]->shape->dtype;
  if (!tr_dtype_is_int(dt) || k >= init->noperands || !const_int(init->operands[k], &lc->i0))
    return false;
  lc->k = k;
  lc->d = d;
  lc->bound = bound;
  lc->lo = tr_int_min(dt);
  lc->hi = tr_int_max(dt);
  lc->has_step = false;
  const tr_instr *root = body->root;
  if (!root || root->op != TR_OP_TUPLE || k >= root->noperands) return true;
  const tr_instr *up = root->operands[k];
  int64_t j;
  i128 c;
  if (up->op == TR_OP_ADD && is_state_elem(up->operands[0], body, &j) && j == k &&
      const_int(up->operands[1], &c)) {
  } else if (up->op == TR_OP_ADD && is_state_elem(up->operands[1], body, &j) && j == k &&
             const_int(up->operands[0], &c)) {
  } else if (up->op == TR_OP_SUBTRACT && is_state_elem(up->operands[0], body, &j) && j == k &&
             const_int(up->operands[1], &c)) {
    c = -c;
  } else {
    return true;
  }
  /* The step as the distance in (-2^(w-1), 2^(w-1)]: adding c wraps to
   * the same value as adding c - 2^w (unsigned "minus one" is 2^w - 1). */
  i128 mod = (i128)1 << tr_dtypes[dt].bits;
  c %= mod;
  if (c > mod / 2) c -= mod;
  if (c <= -mod / 2) c += mod;
  lc->step = c;
  lc->has_step = true;
  return true;
}

/* The exact number of body runs, or -1 when it cannot be shown: the
 * induction variable must reach the exit without wrapping, since after a
 * wrap the comparison's order turns around. Counting on the unbounded
 * integers is exact while every value stays in the type's range: then
 * each wrapped addition equals the plain one. */
static int64_t trip_count(const counted *lc, uint64_t inj) {
  i128 i0 = lc->i0, b = lc->bound, s = lc->step, n;
  if (!holds(lc->d, i0, b)) return 0;
  if (!lc->has_step || s == 0) return -1;
  switch (lc->d) {
  case D_LT: if (s < 0) return -1; n = (b - i0 + s - 1) / s; break;
  case D_LE:
    if (s < 0) return -1;
    n = (b - i0) / s + 1;
    /* defect: an inclusive bound counted like an exclusive one */
    if (TR_INJECTED(inj, WHILE_TRIP_COUNT_LE)) n--;
    break;
  case D_GT: if (s > 0) return -1; n = (i0 - b + (-s) - 1) / (-s); break;
  case D_GE: if (s > 0) return -1; n = (i0 - b) / (-s) + 1; break;
  case D_NE:
    if ((b - i0) % s != 0 || (b - i0) / s <= 0) return -1;
    n = (b - i0) / s;
    break;
  case D_EQ: return 1; /* a nonzero step never wraps back to the bound in one trip */
  default: return -1;
  }
  i128 last = i0 + n * s;
  if (last < lc->lo || last > lc->hi || n > INT64_MAX) return -1;
  return (int64_t)n;
}

/* ---- closure marking ---- */

/* Grows the scratch marks to cover every instruction made so far (rules
 * create instructions and computations as they go). */
static void ensure_marks(ws *s) {
  int want = s->m->next_id + 1;
  if (want <= s->nmark) return;
  s->mark = tr_xrealloc(s->mark, (size_t)want);
  memset(s->mark + s->nmark, 0, (size_t)(want - s->nmark));
  s->nmark = want;
}

/* Marks x and everything it reads with bit; iterative, because a body
 * can be one long chain. */
static void mark_closure(ws *s, tr_instr *x, unsigned char bit) {
  int n = 0, cap = 64;
  tr_instr **stack = tr_xmalloc(sizeof(tr_instr *) * (size_t)cap);
  stack[n++] = x;
  while (n) {
    tr_instr *y = stack[--n];
    if (y->id < 0 || y->id >= s->nmark || (s->mark[y->id] & bit)) continue;
    s->mark[y->id] |= bit;
    if (n + y->noperands > cap) {
      cap = (n + y->noperands) * 2;
      stack = tr_xrealloc(stack, sizeof(tr_instr *) * (size_t)cap);
    }
    for (int i = 0; i < y->noperands; i++) stack[n++] = y->operands[i];
  }
  tr_free(stack);
}

static int count_marked(ws *s, const tr_comp *k, unsigned char bit) {
  int n = 0;
  for (int i = 0; i < k->ninstrs; i++)
    if (k->instrs[i]->id < s->nmark && (s->mark[k->instrs[i]->id] & bit)) n++;
  return n;
}

static void clear_marks(ws *s, const tr_comp *k) {
  for (int i = 0; i < k->ninstrs; i++)
    if (k->instrs[i]->id < s->nmark) s->mark[k->instrs[i]->id] = 0;
}

/* ---- rules ---- */

/* Named in a control-predecessors list: x must stay where it is. */
static bool ordered(const tr_comp *c, const tr_instr *x) {
  for (int i = 0; i < c->ninstrs; i++) {
    const tr_attr *at = tr_instr_attr(c->instrs[i], TR_ATTR_CONTROL_PREDECESSORS);
    for (int j = 0; at && j < at->n; j++)
      if (at->u.instrs[j] == x) return true;
  }
  return false;
}

static bool fire(ws *s, const char *rule, const tr_instr *in) {
  return tr_bc_fire(s->ctx, "while-simplify", rule, in);
}

/* while-zero-trip: the condition is false on the init value, so the body
 * never runs and the loop returns its operand. */
static bool rule_zero_trip(ws *s, tr_instr *w) {
  counted lc;
  if (!read_counted(w, &lc) || holds(lc.d, lc.i0, lc.bound)) return false;
  if (!fire(s, "while-zero-trip", w)) return false;
  tr_bc_replace_uses(w, w->operands[0]);
  return true;
}

/* while-unroll: a loop of n <= 8 trips becomes n inlined copies of its
 * body, each reading the previous copy's result. The condition, which has
 * no side effects, is not needed once n is known. */
static bool rule_unroll(ws *s, tr_instr *w) {
  counted lc;
  if (!read_counted(w, &lc)) return false;
  int64_t n = trip_count(&lc, s->ctx->inject);
  if (n < 1 || n > UNROLL_MAX_TRIPS) return false;
  tr_comp *body = tr_attr_comp(w, TR_ATTR_BODY);
  if (body->nparams != 1 || !body->params[0] || body == s->c) return false;
  ensure_marks(s);
  mark_closure(s, body->root, 1);
  int size = count_marked(s, body, 1);
  if (size > UNROLL_MAX_BODY || size * n > UNROLL_MAX_TOTAL || !fire(s, "while-unroll", w)) {
    clear_marks(s, body);
    return false;
  }
  tr_instr **map = tr_xcalloc((size_t)s->m->next_id + 1, sizeof(tr_instr *));
  tr_instr **ops = NULL;
  int capops = 0;
  tr_instr *state = w->operands[0];
  for (int64_t t = 0; t < n; t++) {
    map[body->params[0]->id] = state;
    for (int i = 0; i < body->ninstrs; i++) {
      tr_instr *x = body->instrs[i];
      if (!(s->mark[x->id] & 1) || x == body->params[0]) continue;
      if (x->noperands > capops) {
        capops = x->noperands;
        ops = tr_xrealloc(ops, sizeof(tr_instr *) * (size_t)capops);
      }
      for (int k = 0; k < x->noperands; k++) ops[k] = map[x->operands[k]->id];
      /* The first copy keeps the body's names where the caller has none
       * of them, so the unrolled code reads like the body. */
      const char *name = tr_comp_find(s->c, x->name) ? tr_bc_fresh_name(s->c, x->name, "u") : x->name;
      map[x->id] = tr_bc_copy_instr(s->c, w, x, name, NULL, ops, x->noperands);
    }
    state = map[body->root->id];
  }
  clear_marks(s, body);
  tr_free(map);
  tr_free(ops);
  tr_bc_replace_uses(w, state);
  return true;
}

/* Copies the marked instructions of k (marked with bit) into the new
 * computation nk, reading the new parameter np through remapped
 * get-tuple-elements. Returns the copy map (heap, by id). */
static tr_instr **copy_pruned(ws *s, tr_comp *k, tr_comp *nk, tr_instr *np, const int *newidx,
                              unsigned char bit) {
  tr_instr **map = tr_xcalloc((size_t)s->m->next_id + 1, sizeof(tr_instr *));
  map[k->params[0]->id] = np;
  tr_instr **ops = NULL;
  int capops = 0;
  for (int i = 0; i < k->ninstrs; i++) {
    tr_instr *x = k->instrs[i];
    if (!(s->mark[x->id] & bit) || x == k->params[0]) continue;
    if (x->noperands > capops) {
      capops = x->noperands;
      ops = tr_xrealloc(ops, sizeof(tr_instr *) * (size_t)capops);
    }
    for (int j = 0; j < x->noperands; j++) ops[j] = map[x->operands[j]->id];
    tr_instr *y = tr_bc_copy_instr(nk, NULL, x, x->name, NULL, ops, x->noperands);
    int64_t idx;
    if (is_state_elem(x, k, &idx)) tr_instr_attr(y, TR_ATTR_INDEX)->u.i = newidx[idx];
    map[x->id] = y;
  }
  tr_free(ops);
  return map;
}

/* A fresh computation named after k with one parameter of shape sh. */
static tr_comp *pruned_comp(ws *s, tr_comp *k, tr_shape *sh, tr_instr **param) {
  tr_comp *nk = tr_bc_new_before(s->m, tr_module_unique_comp_name(s->m, k->name), s->c);
  nk->exec_thread = k->exec_thread;
  *param = tr_bc_copy_instr(nk, NULL, k->params[0], k->params[0]->name, sh, NULL, 0);
  nk->nparams = 1;
  nk->params = tr_arena_alloc(s->m->arena, sizeof(tr_instr *));
  nk->params[0] = *param;
  return nk;
}

/* while-remove-dead-state: a state element is live when the loop's users
 * read it, the condition reads it, or the body reads it to compute a live
 * element; the rest are removed from the state, the condition, the body
 * and the init. The condition and body are rebuilt as new computations
 * (the old ones may be shared; DCE drops them when unused). */
static bool rule_remove_dead_state(ws *s, tr_instr *w) {
  tr_shape *sh = w->shape;
  tr_comp *cond = tr_attr_comp(w, TR_ATTR_CONDITION), *body = tr_attr_comp(w, TR_ATTR_BODY);
  if (sh->dtype != TR_DT_TUPLE || sh->nelems < 2 || !cond || !body || w == s->c->root) return false;
  if (cond->nparams != 1 || body->nparams != 1 || !cond->params[0] || !body->params[0]) return false;
  if (!body->root || body->root->op != TR_OP_TUPLE || body->root->noperands != sh->nelems) return false;
  if (cond == s->c || body == s->c) return false;
  ensure_marks(s);
  int n = sh->nelems;
  char *live = tr_xcalloc((size_t)n, 1);
  bool ok = true;
  int64_t idx;
  /* Users of the loop, then of the condition's and body's parameter:
   * all must be get-tuple-elements, or every element counts as read. */
  for (int i = 0; ok && i < w->nusers; i++) {
    /* (They are removed with the loop, so nothing may name them.) */
    ok = w->users[i]->op == TR_OP_GET_TUPLE_ELEMENT && (idx = gte_index(w->users[i])) >= 0 && idx < n &&
         !ordered(s->c, w->users[i]);
    if (ok) live[idx] = 1;
  }
  for (int i = 0; ok && i < cond->params[0]->nusers; i++) {
    ok = is_state_elem(cond->params[0]->users[i], cond, &idx) && idx < n;
    if (ok) live[idx] = 1;
  }
  if (cond->root == cond->params[0]) ok = false;
  for (int i = 0; ok && i < body->params[0]->nusers; i++)
    ok = is_state_elem(body->params[0]->users[i], body, &idx) && idx < n;
  /* Live elements make the elements their updates read live. */
  for (bool grew = ok; grew;) {
    grew = false;
    for (int e = 0; e < n; e++)
      if (live[e]) mark_closure(s, body->root->operands[e], 2);
    for (int i = 0; i < body->ninstrs; i++) {
      tr_instr *x = body->instrs[i];
      if ((s->mark[x->id] & 2) && is_state_elem(x, body, &idx) && idx < n && !live[idx])
        live[idx] = 1, grew = true;
    }
  }
  int nlive = 0;
  for (int e = 0; e < n; e++) nlive += live[e];
  if (!ok || nlive == 0 || nlive == n || !fire(s, "while-remove-dead-state", w)) {
    clear_marks(s, body);
    tr_free(live);
    return false;
  }
  tr_arena *a = s->m->arena;
  int *newidx = tr_xmalloc(sizeof(int) * (size_t)n);
  tr_shape **elems = tr_xmalloc(sizeof(tr_shape *) * (size_t)nlive);
  for (int e = 0, j = 0; e < n; e++) {
    newidx[e] = live[e] ? j : -1;
    if (live[e]) elems[j++] = tr_shape_clone(a, sh->elems[e]);
  }
  tr_shape *nsh = tr_shape_tuple(a, nlive, elems);
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)n);

  /* The condition: everything its root reads. */
  tr_instr *np;
  tr_comp *ncond = pruned_comp(s, cond, tr_shape_clone(a, nsh), &np);
  mark_closure(s, cond->root, 4);
  /* defect: the condition's element reads keep their old indices */
  int *condidx = newidx;
  if (TR_INJECTED(s->ctx->inject, WHILE_DEAD_STATE_COND_INDEX)) {
    condidx = tr_xmalloc(sizeof(int) * (size_t)n);
    for (int e = 0; e < n; e++) condidx[e] = e;
  }
  tr_instr **map = copy_pruned(s, cond, ncond, np, condidx, 4);
  if (condidx != newidx) tr_free(condidx);
  ncond->root = map[cond->root->id];
  clear_marks(s, cond);
  tr_free(map);

  /* The body: the updates of live elements, and a new root tuple. */
  tr_comp *nbody = pruned_comp(s, body, tr_shape_clone(a, nsh), &np);
  map = copy_pruned(s, body, nbody, np, newidx, 2);
  int j = 0;
  for (int e = 0; e < n; e++)
    if (live[e]) ops[j++] = map[body->root->operands[e]->id];
  nbody->root = tr_bc_copy_instr(nbody, NULL, body->root, body->root->name, tr_shape_clone(a, nsh),
                                   ops, nlive);
  clear_marks(s, body);
  tr_free(map);

  /* The caller: a pruned init, the new loop, and its element reads. */
  tr_instr *init = w->operands[0];
  j = 0;
  for (int e = 0; e < n; e++) {
    if (!live[e]) continue;
    if (init->op == TR_OP_TUPLE) {
      ops[j++] = init->operands[e];
      continue;
    }
    tr_instr *g = tr_instr_new(s->m, TR_OP_GET_TUPLE_ELEMENT, tr_bc_fresh_name(s->c, init->name, "d"),
                               tr_shape_clone(a, sh->elems[e]));
    tr_comp_insert_before(s->c, w, g);
    tr_instr_set_operands(g, &init, 1);
    tr_instr_add_attr(s->m, g, TR_ATTR_INDEX, TR_AK_INT, NULL)->u.i = e;
    ops[j++] = g;
  }
  tr_instr *ninit = tr_instr_new(s->m, TR_OP_TUPLE, tr_bc_fresh_name(s->c, init->name, "d"),
                                 tr_shape_clone(a, nsh));
  tr_comp_insert_before(s->c, w, ninit);
  tr_instr_set_operands(ninit, ops, nlive);
  tr_instr *nw = tr_instr_new(s->m, TR_OP_WHILE, tr_bc_fresh_name(s->c, w->name, "d"), nsh);
  tr_comp_insert_before(s->c, w, nw);
  tr_instr_set_operands(nw, &ninit, 1);
  for (int i = 0; i < w->nattrs; i++) {
    const tr_attr *at = &w->attrs[i];
    if (at->key == TR_ATTR_CONTROL_PREDECESSORS) continue;
    tr_attr *na = tr_instr_add_attr(s->m, nw, at->key, at->kind, at->key == TR_ATTR_RAW ? at->name : NULL);
    na->n = at->n;
    na->u = at->u;
    if (at->key == TR_ATTR_CONDITION) na->u.comp = ncond;
    if (at->key == TR_ATTR_BODY) na->u.comp = nbody;
  }
  int nu = w->nusers;
  tr_instr **us = tr_xmalloc(sizeof(tr_instr *) * (size_t)(nu + 1));
  memcpy(us, w->users, sizeof(tr_instr *) * (size_t)nu);
  for (int i = 0; i < nu; i++) {
    tr_instr *g = tr_bc_copy_instr(s->c, w, us[i], tr_bc_fresh_name(s->c, us[i]->name, "d"), NULL,
                                     &nw, 1);
    tr_instr_attr(g, TR_ATTR_INDEX)->u.i = newidx[gte_index(us[i])];
    tr_bc_replace_uses(us[i], g);
  }
  /* The old loop goes now, not at DCE: its dead readers would keep it
   * looking used, and the next sweep would prune it again. */
  for (int i = 0; i < nu; i++)
    if (us[i]->parent == s->c && !us[i]->nusers && us[i] != s->c->root) tr_comp_remove(s->c, us[i]);
  if (!w->nusers) tr_comp_remove(s->c, w);
  tr_free(us);
  tr_free(ops);
  tr_free(elems);
  tr_free(newidx);
  tr_free(live);
  return true;
}

/* ---- the pass ---- */

static bool simplify_comp(ws *s, tr_comp *c) {
  s->c = c;
  bool changed = false;
  for (int sweep = 0; sweep < MAX_SWEEPS && s->ctx->fuel != 0; sweep++) {
    bool any = false;
    int n = c->ninstrs;
    tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
    memcpy(list, c->instrs, sizeof(tr_instr *) * (size_t)n);
    for (int i = 0; i < n && s->ctx->fuel != 0; i++) {
      tr_instr *w = list[i];
      if (w->op != TR_OP_WHILE || w->parent != c || (!w->nusers && w != c->root)) continue;
      if (tr_bc_has_side_effect(w) || tr_instr_attr(w, TR_ATTR_CONTROL_PREDECESSORS) || ordered(c, w))
        continue;
      if (rule_zero_trip(s, w) || rule_remove_dead_state(s, w) || rule_unroll(s, w)) any = true;
    }
    tr_free(list);
    if (!any) break;
    changed = true;
  }
  return changed;
}

tr_status tr_pass_whilesimp(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  ws s = {c, m, NULL, NULL, 0};
  int n = m->ncomps;
  tr_comp **comps = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n ? n : 1));
  memcpy(comps, m->comps, sizeof(tr_comp *) * (size_t)n);
  for (int i = 0; i < n && c->fuel != 0; i++)
    if (simplify_comp(&s, comps[i])) *changed = true;
  tr_free(s.mark);
  tr_free(comps);
  return TR_OK;
}
