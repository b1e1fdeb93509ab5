/* fusion.c - producer-consumer and sibling fusion (pass fusion), after
 * XLA's InstructionFusion and multi-output fusion:
 *   fuse-elementwise   an elementwise producer into its consumer's fusion
 *   fuse-producer      a broadcast, iota, constant, reshape, bitcast,
 *                      transpose, slice or dynamic-slice producer likewise
 *   fuse-reduce-input  a producer into the kInput fusion of the reduce it
 *                      feeds
 *   fuse-multi-output  two kLoop fusions of the same output dims sharing
 *                      an operand into one whose root is a tuple; their
 *                      users read get-tuple-elements
 * A fusion is grown from a consumer (the later instructions first, so a
 * chain ends in one fusion): a producer joins when every user of it is
 * already inside (it moves), or when it is cheap to recompute (iota,
 * broadcast, a small constant: it is duplicated, the original stays for
 * its other users). The group then becomes a computation
 * fused_computation[.N] whose parameters are the group's outside operands
 * (named after them, so the fused code reads like the original) and an
 * instruction with kind= and calls= that takes the consumer's name (a
 * multi-output fusion is named fusion[.N]). Fusion only regroups
 * instructions: each keeps its op and attributes, so values are bit for
 * bit the same. Fused: the entry and the computations it runs as code
 * (while condition and body, conditional branches, call targets), not
 * reducers, comparators or existing fusion bodies. */
#include "compint.h"

#include <stdlib.h>
#include <string.h>

#define MAX_FUSED 64        /* instructions in one fusion */
#define MAX_PARAMS 32       /* operands of one fusion */
#define MAX_DUP_CONST 16    /* elements of a constant worth duplicating */

enum { M_NONE, M_MOVED, M_DUP, M_ROOT };

typedef struct {
  tr_bc_ctx *ctx;
  tr_module *m;
  tr_comp *c;             /* computation being fused */
  unsigned char *grp;     /* instruction id -> M_*: membership of the group */
  unsigned char *pinned;  /* instruction id -> named as a control predecessor */
  int nids;
  tr_instr **mem;         /* the group, in the order it grew */
  int nmem;
  tr_instr **made;        /* kLoop fusions made in c (for sibling fusion) */
  int nmade, capmade;
  int *pos;               /* instruction id -> position in c (sibling fusion) */
  int npos;
} fz;

static bool static_array(const tr_shape *s) {
  if (!tr_shape_is_array(s) || s->dynamic) return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

/* Ops a fusion may hold besides a reduce root: elementwise and the ops
 * that only map indices. */
static bool loop_op(tr_op op) {
  if ((tr_ops[op].flags & TR_OPF_E) && (tr_ops[op].flags & TR_OPF_K) && !(tr_ops[op].flags & TR_OPF_S))
    return true;
  switch (op) {
  case TR_OP_BROADCAST: case TR_OP_RESHAPE: case TR_OP_BITCAST: case TR_OP_TRANSPOSE:
  case TR_OP_SLICE: case TR_OP_DYNAMIC_SLICE: case TR_OP_IOTA: case TR_OP_CONSTANT:
    return true;
  default: return false;
  }
}

/* Cheap to recompute in every fusion that wants it. */
static bool cheap(const tr_instr *p) {
  if (p->op == TR_OP_IOTA || p->op == TR_OP_BROADCAST) return true;
  return p->op == TR_OP_CONSTANT && tr_shape_count(p->shape) <= MAX_DUP_CONST;
}

static bool in_range(const fz *f, const tr_instr *x) { return x->id >= 0 && x->id < f->nids; }

/* Group membership; instructions made during the pass are never members. */
static int grp_of(const fz *f, const tr_instr *x) { return in_range(f, x) ? f->grp[x->id] : M_NONE; }

/* An instruction that may be regrouped at all. */
static bool movable(const fz *f, const tr_instr *x) {
  if (x->parent != f->c || !in_range(f, x) || f->pinned[x->id]) return false;
  if (tr_instr_attr(x, TR_ATTR_CONTROL_PREDECESSORS) || !static_array(x->shape)) return false;
  for (int i = 0; i < x->noperands; i++)
    if (!tr_shape_is_array(x->operands[i]->shape) || x->operands[i]->shape->dynamic) return false;
  /* Elided constants hold no values: leave them where they are. */
  if (x->op == TR_OP_CONSTANT && (!x->literal || x->literal->elided || !x->literal->data)) return false;
  return true;
}

/* Outside operands of the group plus p (NULL: the group alone). */
static int count_params(fz *f, const tr_instr *p) {
  int n = 0;
  tr_instr *seen[MAX_FUSED * 4];
  for (int k = 0; k <= f->nmem; k++) {
    const tr_instr *x = k < f->nmem ? f->mem[k] : p;
    if (!x) continue;
    for (int i = 0; i < x->noperands; i++) {
      tr_instr *o = x->operands[i];
      if (grp_of(f, o) || o == p) continue;
      bool dup = false;
      for (int j = 0; j < n && !dup; j++) dup = seen[j] == o;
      if (!dup && n < (int)TR_NELEMS(seen)) seen[n++] = o;
    }
  }
  return n;
}

/* How p would join the group: M_MOVED, M_DUP, or M_NONE. */
static int join_kind(fz *f, const tr_instr *p) {
  if (!movable(f, p) || !loop_op(p->op) || p->op == TR_OP_PARAMETER) return M_NONE;
  bool all_inside = p != f->c->root && p->nusers > 0;
  for (int i = 0; all_inside && i < p->nusers; i++) {
    int g = grp_of(f, p->users[i]);
    all_inside = g == M_MOVED || g == M_ROOT;
  }
  if (all_inside) return M_MOVED;
  return cheap(p) ? M_DUP : M_NONE;
}

static void add_member(fz *f, tr_instr *x, int kind) {
  f->grp[x->id] = (unsigned char)kind;
  f->mem[f->nmem++] = x;
}

/* Grows the group rooted at r; every producer that joins is one
 * application of its rule. */
static void grow(fz *f, tr_instr *r) {
  bool reduce = r->op == TR_OP_REDUCE;
  for (bool grew = true; grew && f->nmem < MAX_FUSED && f->ctx->fuel != 0;) {
    grew = false;
    for (int k = 0; k < f->nmem && f->nmem < MAX_FUSED; k++) {
      tr_instr *x = f->mem[k];
      /* A reduce fuses its input; its init stays a parameter. */
      int nops = x == r && reduce ? 1 : x->noperands;
      for (int i = 0; i < nops && f->nmem < MAX_FUSED; i++) {
        tr_instr *p = x->operands[i];
        if (grp_of(f, p)) continue;
        int kind = join_kind(f, p);
        if (kind == M_NONE || count_params(f, p) > MAX_PARAMS) continue;
        const char *rule = reduce ? "fuse-reduce-input"
                           : (tr_ops[p->op].flags & TR_OPF_E) ? "fuse-elementwise" : "fuse-producer";
        if (!tr_bc_fire(f->ctx, "fusion", rule, p)) continue;
        add_member(f, p, kind);
        grew = true;
      }
    }
  }
}

static tr_instr *new_param(tr_comp *k, tr_instr *like, int index, const char *name) {
  tr_module *m = k->module;
  tr_instr *p = tr_instr_new(m, TR_OP_PARAMETER, tr_bc_unique_name(k, name), tr_shape_clone(m->arena, like->shape));
  p->param_index = index;
  tr_comp_append(k, p);
  return p;
}

static tr_instr *new_fusion(fz *f, tr_instr *pos, tr_comp *fc, tr_shape *shape, const char *kind,
                            tr_instr **ops, int n) {
  tr_instr *fi = tr_instr_new(f->m, TR_OP_FUSION, tr_bc_unique_name(f->c, "fusion"), shape);
  tr_comp_insert_before(f->c, pos, fi);
  tr_instr_set_operands(fi, ops, n);
  tr_instr_add_attr(f->m, fi, TR_ATTR_KIND, TR_AK_IDENT, NULL)->u.s = kind;
  tr_instr_add_attr(f->m, fi, TR_ATTR_CALLS, TR_AK_COMP, NULL)->u.comp = fc;
  return fi;
}

static void set_params(tr_comp *k, tr_instr **params, int n) {
  k->nparams = n;
  k->params = tr_arena_alloc(k->module->arena, sizeof(tr_instr *) * (size_t)(n + 1));
  if (n) memcpy(k->params, params, sizeof(tr_instr *) * (size_t)n);
}

/* Turns the group rooted at r into a fusion computation and instruction. */
static void build(fz *f, tr_instr *r) {
  tr_comp *c = f->c;
  /* Members in c's order, which has operands first. */
  tr_instr **order = tr_xmalloc(sizeof(tr_instr *) * (size_t)f->nmem);
  int n = 0;
  for (int i = 0; i < c->ninstrs; i++)
    if (grp_of(f, c->instrs[i])) order[n++] = c->instrs[i];
  tr_comp *fc = tr_bc_new_before(f->m, tr_module_unique_comp_name(f->m, "fused_computation"), f->c);
  fc->exec_thread = c->exec_thread;
  tr_instr **map = tr_xcalloc((size_t)f->m->next_id + 1, sizeof(tr_instr *));
  tr_instr *ext[MAX_PARAMS * 4], *params[MAX_PARAMS * 4];
  int next = 0;
  tr_instr **ops = NULL;
  int capops = 0;
  for (int k = 0; k < n; k++) {
    tr_instr *x = order[k];
    if (x->noperands > capops) {
      capops = x->noperands;
      ops = tr_xrealloc(ops, sizeof(tr_instr *) * (size_t)capops);
    }
    for (int i = 0; i < x->noperands; i++) {
      tr_instr *o = x->operands[i];
      if (!map[o->id]) {
        TR_ASSERT(!grp_of(f, o) && next < (int)TR_NELEMS(ext));
        ext[next] = o;
        params[next] = map[o->id] = new_param(fc, o, next, o->name);
        next++;
      }
      ops[i] = map[o->id];
    }
    map[x->id] = tr_bc_copy_instr(fc, NULL, x, tr_bc_unique_name(fc, x->name), NULL, ops, x->noperands);
  }
  fc->root = map[r->id];
  set_params(fc, params, next);
  tr_instr *fi = new_fusion(f, r, fc, tr_shape_clone(f->m->arena, r->shape),
                            r->op == TR_OP_REDUCE ? "kInput" : "kLoop", ext, next);
  tr_bc_replace_uses(r, fi);
  /* Users first: each moved member's users are all members. */
  for (int k = n - 1; k >= 0; k--)
    if (grp_of(f, order[k]) != M_DUP) tr_comp_remove(c, order[k]);
  /* The fusion computes r's value: it takes r's name, so users (and the
   * people reading dumps) find the value where it was. */
  fi->name = r->name;
  if (r->op != TR_OP_REDUCE) {
    if (f->nmade == f->capmade) {
      f->capmade = f->capmade ? f->capmade * 2 : 8;
      f->made = tr_xrealloc(f->made, sizeof(tr_instr *) * (size_t)f->capmade);
    }
    f->made[f->nmade++] = fi;
  }
  tr_free(ops);
  tr_free(map);
  tr_free(order);
}

/* A consumer a fusion may be grown from. */
static bool root_ok(const fz *f, const tr_instr *r) {
  if (!movable(f, r) || (!r->nusers && r != f->c->root)) return false;
  if (r->op == TR_OP_REDUCE) return r->noperands == 2 && !tr_bc_has_side_effect(r);
  return loop_op(r->op) && r->op != TR_OP_CONSTANT && r->op != TR_OP_IOTA;
}

static void fuse_producers(fz *f) {
  tr_comp *c = f->c;
  int n = c->ninstrs;
  tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
  memcpy(list, c->instrs, sizeof(tr_instr *) * (size_t)n);
  for (int i = n - 1; i >= 0 && f->ctx->fuel != 0; i--) {
    tr_instr *r = list[i];
    if (!root_ok(f, r)) continue;
    f->nmem = 0;
    add_member(f, r, M_ROOT);
    grow(f, r);
    if (f->nmem > 1) build(f, r);
    for (int k = 0; k < f->nmem; k++) f->grp[f->mem[k]->id] = M_NONE;
    f->nmem = 0;
  }
  tr_free(list);
}

/* ---- sibling (multi-output) fusion ---- */

/* Positions of c's instructions by id, rebuilt after each merge (which
 * inserts and removes instructions). */
static void number(fz *f) {
  tr_free(f->pos);
  f->npos = f->m->next_id + 1;
  f->pos = tr_xmalloc(sizeof(int) * (size_t)f->npos);
  for (int i = 0; i < f->npos; i++) f->pos[i] = -1;
  for (int i = 0; i < f->c->ninstrs; i++)
    if (f->c->instrs[i]->id >= 0 && f->c->instrs[i]->id < f->npos) f->pos[f->c->instrs[i]->id] = i;
}

static int position(const fz *f, const tr_instr *x) {
  return x->id >= 0 && x->id < f->npos ? f->pos[x->id] : -1;
}

static bool share_operand(const tr_instr *a, const tr_instr *b) {
  for (int i = 0; i < a->noperands; i++)
    for (int j = 0; j < b->noperands; j++)
      if (a->operands[i] == b->operands[j]) return true;
  return false;
}

/* Whether x and y can become one multi-output fusion; *a gets the earlier
 * of them, *b the later. b can take a's place only when nothing between
 * them reads a (which also rules out b depending on a). */
static bool siblings(const fz *f, tr_instr *x, tr_instr *y, tr_instr **a, tr_instr **b) {
  if (x->parent != f->c || y->parent != f->c || !share_operand(x, y)) return false;
  if (x->shape->rank != y->shape->rank || !tr_shape_same_dims(x->shape, y->shape)) return false;
  if (x->noperands + y->noperands > MAX_PARAMS) return false;
  int px = position(f, x), py = position(f, y);
  *a = px < py ? x : y;
  *b = px < py ? y : x;
  int pb = px < py ? py : px;
  for (int i = 0; i < (*a)->nusers; i++)
    if (position(f, (*a)->users[i]) <= pb) return false; /* b itself too */
  return true;
}

/* Copies fused computation k into nk, its parameters read from the
 * parameters of nk standing for operands; returns the root's copy. */
static tr_instr *inline_fused(tr_comp *nk, const tr_instr *fi, tr_instr **ext, tr_instr **params, int next,
                              uint64_t inject) {
  const tr_comp *k = tr_instr_fused(fi);
  tr_instr **map = tr_xcalloc((size_t)nk->module->next_id + 1, sizeof(tr_instr *));
  /* defect: an operand is looked up by shape, so it takes the first
   * merged parameter of its shape, whichever operand that stands for */
  bool by_shape = TR_INJECTED(inject, FUSION_MULTI_OUTPUT_OPERAND_BY_SHAPE);
  for (int i = 0; i < fi->noperands; i++)
    for (int j = 0; j < next; j++)
      if (k->params[i] && !map[k->params[i]->id] &&
          (by_shape ? tr_shape_equal(params[j]->shape, k->params[i]->shape) : ext[j] == fi->operands[i]))
        map[k->params[i]->id] = params[j];
  tr_instr **ops = NULL;
  int capops = 0;
  for (int i = 0; i < k->ninstrs; i++) {
    tr_instr *x = k->instrs[i];
    if (x->op == TR_OP_PARAMETER) continue;
    if (x->noperands > capops) {
      capops = x->noperands;
      ops = tr_xrealloc(ops, sizeof(tr_instr *) * (size_t)capops);
    }
    for (int j = 0; j < x->noperands; j++) ops[j] = map[x->operands[j]->id];
    map[x->id] = tr_bc_copy_instr(nk, NULL, x, tr_bc_unique_name(nk, x->name), NULL, ops, x->noperands);
  }
  tr_instr *root = map[k->root->id];
  tr_free(ops);
  tr_free(map);
  return root;
}

static void merge_siblings(fz *f, tr_instr *a, tr_instr *b) {
  tr_module *m = f->m;
  tr_comp *fc = tr_bc_new_before(m, tr_module_unique_comp_name(m, "fused_computation"), f->c);
  fc->exec_thread = f->c->exec_thread;
  tr_instr *ext[MAX_PARAMS], *params[MAX_PARAMS];
  int next = 0;
  const tr_instr *both[2] = {a, b};
  for (int s = 0; s < 2; s++)
    for (int i = 0; i < both[s]->noperands; i++) {
      tr_instr *o = both[s]->operands[i];
      bool seen = false;
      for (int j = 0; j < next && !seen; j++) seen = ext[j] == o;
      if (seen) continue;
      ext[next] = o;
      params[next] = new_param(fc, o, next, o->name);
      next++;
    }
  tr_instr *roots[2];
  roots[0] = inline_fused(fc, a, ext, params, next, f->ctx->inject);
  roots[1] = inline_fused(fc, b, ext, params, next, f->ctx->inject);
  tr_shape *el[2] = {tr_shape_clone(m->arena, a->shape), tr_shape_clone(m->arena, b->shape)};
  tr_shape *tsh = tr_shape_tuple(m->arena, 2, el);
  tr_instr *tup = tr_instr_new(m, TR_OP_TUPLE, tr_bc_unique_name(fc, "tuple"), tsh);
  tr_comp_append(fc, tup);
  tr_instr_set_operands(tup, roots, 2);
  fc->root = tup;
  set_params(fc, params, next);
  tr_instr *fi = new_fusion(f, b, fc, tr_shape_clone(m->arena, tsh), "kLoop", ext, next);
  tr_instr *g[2];
  for (int s = 0; s < 2; s++) {
    g[s] = tr_instr_new(m, TR_OP_GET_TUPLE_ELEMENT, tr_bc_fresh_name(f->c, both[s]->name, "m"),
                        tr_shape_clone(m->arena, both[s]->shape));
    tr_comp_insert_before(f->c, b, g[s]);
    tr_instr_set_operands(g[s], &fi, 1);
    tr_instr_add_attr(m, g[s], TR_ATTR_INDEX, TR_AK_INT, NULL)->u.i = s;
  }
  /* The element reads take the old fusions' names: their users keep
   * reading the same names. */
  const char *names[2] = {a->name, b->name};
  tr_bc_replace_uses(a, g[0]);
  tr_bc_replace_uses(b, g[1]);
  tr_comp_remove(f->c, a);
  tr_comp_remove(f->c, b);
  g[0]->name = names[0];
  g[1]->name = names[1];
}

static void fuse_siblings(fz *f) {
  char *done = tr_xcalloc((size_t)f->nmade + 1, 1);
  number(f);
  for (int i = 0; i < f->nmade && f->ctx->fuel != 0; i++)
    for (int j = i + 1; j < f->nmade && !done[i]; j++) {
      tr_instr *a, *b;
      if (done[j] || !siblings(f, f->made[i], f->made[j], &a, &b)) continue;
      if (!tr_bc_fire(f->ctx, "fusion", "fuse-multi-output", b)) continue;
      merge_siblings(f, a, b);
      number(f);
      done[i] = done[j] = 1;
    }
  tr_free(done);
  tr_free(f->pos);
}

/* ---- the pass ---- */

/* Marks the computations that run as code: the entry and what while,
 * conditional and call instructions in them run. */
static void mark_code(const tr_comp *k, unsigned char *code, int depth) {
  if (code[k->id] || depth > 64) return;
  code[k->id] = 1;
  for (int i = 0; i < k->ninstrs; i++) {
    const tr_instr *x = k->instrs[i];
    if (x->op != TR_OP_WHILE && x->op != TR_OP_CONDITIONAL && x->op != TR_OP_CALL) continue;
    /* A dead loop (left for DCE) runs nothing worth fusing. */
    if (!x->nusers && x != k->root && !tr_bc_has_side_effect(x)) continue;
    tr_comp *called[64];
    int n = tr_instr_called(x, called, 64);
    for (int j = 0; j < n && j < 64; j++) mark_code(called[j], code, depth + 1);
  }
}

tr_status tr_pass_fusion(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  if (!m->entry) return TR_OK;
  unsigned char *code = tr_xcalloc((size_t)m->next_id + 1, 1);
  mark_code(m->entry, code, 0);
  int n = m->ncomps;
  tr_comp **comps = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n ? n : 1));
  memcpy(comps, m->comps, sizeof(tr_comp *) * (size_t)n);
  int64_t before = c->napplied;
  for (int i = 0; i < n && c->fuel != 0; i++) {
    tr_comp *k = comps[i];
    if (!code[k->id]) continue;
    fz f = {c, m, k, NULL, NULL, 0, NULL, 0, NULL, 0, 0, NULL, 0};
    /* Ids of instructions made here are past nids: they are never
     * members or pinned, which is what the checks want. */
    f.nids = m->next_id + 1;
    f.grp = tr_xcalloc((size_t)f.nids, 1);
    f.pinned = tr_xcalloc((size_t)f.nids, 1);
    f.mem = tr_xmalloc(sizeof(tr_instr *) * (MAX_FUSED + 1));
    for (int j = 0; j < k->ninstrs; j++) {
      const tr_attr *at = tr_instr_attr(k->instrs[j], TR_ATTR_CONTROL_PREDECESSORS);
      for (int q = 0; at && q < at->n; q++)
        if (at->u.instrs[q] && in_range(&f, at->u.instrs[q])) f.pinned[at->u.instrs[q]->id] = 1;
    }
    fuse_producers(&f);
    fuse_siblings(&f);
    tr_free(f.grp);
    tr_free(f.pinned);
    tr_free(f.mem);
    tr_free(f.made);
  }
  *changed = c->napplied != before;
  tr_free(comps);
  tr_free(code);
  return TR_OK;
}
