/* reduce.c - the reducer: delta debugging over the instructions of the
 * entry with tensor-aware moves, each candidate judged by tr_check on
 * the target and kept only when the finding's signature is unchanged:
 * the same kind (mismatch, crash, ...), the same op producing the first
 * wrong output, the same kind of first wrong element (finite, nan, inf,
 * zero) and, for builtin, the same guilty pass by translation
 * validation. So no candidate turns the bug into another one, a crash,
 * a NaN-only or a weak test. Moves, tried in this order until none
 * applies (the result is 1-minimal with respect to them):
 *   culprit   return the isolated culprit instead of the root
 *   drop      drop one output of a tuple root
 *   root      return an intermediate value instead of the root
 *   forward   delete an instruction by forwarding an operand of its shape
 *             (also inside called computations: while and conditional
 *             bodies, calls, fusions, reduce/sort/scatter computations)
 *   param     replace a value by a new parameter fed its recorded value
 *   const     replace a value whose recorded elements are all equal by a
 *             broadcast scalar constant
 *   splat     simplify a constant: every element made its first one
 *             (in any computation)
 *   inline    a call, a conditional's taken branch, one trip of a while
 *   shrink    a dimension made 1 or half; narrow: a narrower dtype
 *             (shrink.c)
 * after each, dead instructions and unused parameters (with their inputs)
 * go. The reproduction rate of the original is measured first, and each
 * accepted candidate is run a second time before it is kept. */
#include "triageint.h"
#include "../eval/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  tr_module *m;
  tr_tensor **ins; /* one per entry parameter (array parameters only) */
  int nins;
} cand;

static void cand_free(cand *c) {
  tr_module_free(c->m);
  tr_inputs_free(c->ins, c->nins);
  memset(c, 0, sizeof *c);
}

static bool array_params(const tr_module *m) {
  for (int i = 0; i < m->entry->nparams; i++)
    if (!tr_shape_is_array(m->entry->params[i]->shape)) return false;
  return true;
}

/* Drops unused parameters and their inputs; renumbers the rest. */
static void drop_params(cand *c) {
  tr_comp *e = c->m->entry;
  int k = 0;
  for (int i = 0; i < e->nparams; i++) {
    tr_instr *p = e->params[i];
    if (p->nusers == 0 && p != e->root && e->nparams > 0) {
      tr_tensor_free(c->ins[i]);
      tr_comp_remove(e, p);
      continue;
    }
    c->ins[k] = c->ins[i];
    p->param_index = k;
    e->params[k++] = p;
  }
  e->nparams = k;
  c->nins = k;
  tr_drop_entry_layout(c->m);
}

/* A candidate: module m (taken) with copies of ins (one more slot for a
 * new parameter). */
static cand cand_of(tr_module *m, tr_tensor *const *ins, int nins) {
  cand c = {m, tr_xcalloc((size_t)nins + 2, sizeof(tr_tensor *)), nins};
  for (int i = 0; i < nins; i++) c.ins[i] = tr_tensor_clone(ins[i]);
  return c;
}

static tr_instr *by_id(const tr_comp *e, int id) {
  for (int i = 0; i < e->ninstrs; i++)
    if (e->instrs[i]->id == id) return e->instrs[i];
  return NULL;
}

/* The instruction with id in any computation of m (ids are the
 * module's): the moves that stay legal inside a called computation
 * (forward, splat) look there too. */
static tr_instr *any_by_id(const tr_module *m, int id) {
  tr_instr *in = by_id(m->entry, id);
  for (int c = 0; c < m->ncomps && !in; c++) in = by_id(m->comps[c], id);
  return in;
}

typedef struct {
  tg_ctx *g;
  tr_check_sig want;   /* kind, value kind, op */
  bool fixed_op;       /* want.op must match */
  bool check_pass;     /* the guilty pass must stay r->guilty_pass */
  /* The signature's op follows the culprit: a candidate whose first
   * wrong output comes from another op is bisected, and kept when its
   * culprit is still of op cul_op (or, inlining the culprit, one of the
   * ops of what was inlined: follow). */
  tr_op cul_op;        /* TR_OP_COUNT: unknown, the output's op decides */
  const bool *follow;  /* NULL, or TR_OP_COUNT flags */
  tr_op got_cul;       /* the culprit op the last kept candidate showed */
  double ref_s;        /* reference seconds a candidate with a loop gets */
  bool *stop;          /* set when judging a candidate ran out of memory
                          (the reduction ends there; NULL: never) */
} judge;

static bool has_while(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (m->comps[c]->instrs[i]->op == TR_OP_WHILE) return true;
  return false;
}

/* Whether the reference finishes c within the judge's time: a forward
 * inside a loop's body can make the loop endless (the counter's
 * increment forwarded), and such a candidate is refused before the
 * target runs it to its timeout. */
static bool ref_finishes(const judge *j, const cand *c) {
  if (!has_while(c->m)) return true;
  tr_eval_opts eo;
  memset(&eo, 0, sizeof eo);
  eo.verified = true;
  eo.deadline_s = j->ref_s;
  tr_tensor **v = NULL;
  int nv = 0;
  tr_diag dd = {0};
  tr_status st = tr_eval_opt(c->m, &eo, c->ins, c->nins, &v, &nv, &dd);
  tr_eval_free_outputs(v, nv);
  tr_diag_clear(&dd);
  return st == TR_OK;
}

/* The op of c's culprit by prefix bisection, TR_OP_COUNT when none. */
static tr_op culprit_op(judge *j, const cand *c) {
  int nbl = 0;
  const tr_instr **bl = tg_blamable(c->m, &nbl);
  int k = tg_bisect(j->g, &j->g->r->reduce, c->m, bl, nbl, c->ins, c->nins, &j->want);
  tr_op op = k >= 0 ? bl[k]->op : TR_OP_COUNT;
  tr_free(bl);
  return op;
}

/* Whether candidate c shows the same bug. */
static bool keeps(judge *j, const cand *c, tr_check_sig *got) {
  tg_ctx *g = j->g;
  tr_diag vd = {0};
  bool valid = tr_verify(c->m, &vd) == TR_OK;
  tr_diag_clear(&vd);
  if (!valid) return false;
  g->r->candidates++;
  if (!ref_finishes(j, c)) return false;
  tr_check_report cr;
  bool ok = tg_check(g, &g->r->reduce, c->m, c->ins, c->nins, &cr) == TR_OK;
  ok = ok && cr.outcome == TR_CHECK_FINDING && strcmp(cr.sig.kind, j->want.kind) == 0 &&
       strcmp(cr.sig.value_kind, j->want.value_kind) == 0;
  tr_op out_op = cr.sig.op;
  if (got) *got = cr.sig;
  tr_check_report_free(&cr);
  j->got_cul = j->cul_op;
  if (ok && j->fixed_op && (out_op != j->want.op || j->follow)) {
    ok = false;
    if (j->cul_op < TR_OP_COUNT) {
      tr_op op = culprit_op(j, c);
      ok = op < TR_OP_COUNT && (op == j->cul_op || (j->follow && j->follow[op]));
      j->got_cul = op;
    }
  }
  if (ok && j->check_pass) {
    char pass[64];
    int run = 0;
    tr_diag dd = {0};
    ok = tg_validate_passes(g, g->t, c->m, c->ins, c->nins, g->o, pass, sizeof pass, &run, NULL, &dd) &&
         strcmp(pass, g->r->guilty_pass) == 0;
    tr_diag_clear(&dd);
  }
  return ok;
}

/* keeps, confirmed by a second run: a candidate that shows the bug once
 * and not again is refused, and the finding is called flaky. */
static bool accept(judge *j, const cand *c) {
  tr_check_sig got;
  if (!keeps(j, c, &got)) return false;
  tr_op cul = j->got_cul;
  if (keeps(j, c, NULL)) {
    j->want.op = got.op;
    j->cul_op = cul;
    return true;
  }
  j->g->r->flaky = true;
  return false;
}

typedef struct {
  tg_ctx *g;
  const tr_module *m;
  tr_tensor *const *ins;
  int nins;
  bool keeps;
} keeps_job;

static void keeps_fn(void *p) {
  keeps_job *kj = p;
  tg_ctx *g = kj->g;
  judge j = {g, g->r->sig, true, g->r->guilty_pass[0] != 0 && tg_can_validate(g->t), g->r->culprit_op, NULL,
             TR_OP_COUNT, 0, NULL};
  cand c = cand_of(tr_module_clone(kj->m), kj->ins, kj->nins);
  kj->keeps = keeps(&j, &c, NULL);
  cand_free(&c);
}

/* In a heap frame of its own: running out of memory is "not shown". */
bool tr_triage_keeps_sig(tr_target *t, const tr_module *m, tr_tensor *const *ins, int nins,
                         const tr_triage_opts *o, tr_triage_report *r) {
  tg_ctx g = {t, o, r, NULL, ""};
  keeps_job kj = {&g, m, ins, nins, false};
  int cands = r->candidates;
  if (!tr_heap_run(keeps_fn, &kj, NULL)) {
    r->candidates = cands + 1;
    return false;
  }
  return kj.keeps;
}

/* ---- moves: each makes candidate number i of its kind, or returns
 * false when there is no such candidate. ---- */

static bool finish(cand *c, const cand *cur) {
  tg_dce(c->m);
  if (array_params(c->m)) drop_params(c);
  return tg_count_all(c->m) < tg_count_all(cur->m) || c->nins < cur->nins;
}

/* Whether every element of an array (slots of size bytes) equals the first. */
static bool uniform(const void *data, size_t n, size_t size) {
  for (size_t i = 1; i < n; i++)
    if (memcmp((const char *)data + i * size, data, size) != 0) return false;
  return true;
}

/* A scalar constant of dt holding the bytes at slot. */
static tr_instr *scalar_const(tr_module *x, tr_dtype dt, const void *slot, const char *name) {
  size_t size = (size_t)tr_dtype_size(dt);
  tr_shape *sh = tr_shape_array(x->arena, dt, 0, NULL);
  tr_instr *c = tr_instr_new(x, TR_OP_CONSTANT, tr_arena_strdup(x->arena, name), sh);
  tr_literal *lit = tr_arena_alloc(x->arena, sizeof *lit);
  lit->shape = sh;
  lit->data = tr_arena_memdup(x->arena, slot, size);
  c->literal = lit;
  return c;
}

/* Replace the instruction with id, whose recorded value is uniform, by
 * broadcast(constant). */
static bool move_const(const cand *cur, int id, cand *out) {
  tr_instr *in = by_id(cur->m->entry, id);
  if (!in || in->op == TR_OP_PARAMETER || in->op == TR_OP_CONSTANT || in->op == TR_OP_BROADCAST ||
      !tr_shape_is_array(in->shape) || in->noperands == 0)
    return false;
  tr_tensor **v = NULL;
  int nv = 0;
  tr_diag dd = {0};
  tr_status st = tg_ref_values(cur->m, &id, 1, cur->ins, cur->nins, &v, &nv, &dd);
  tr_diag_clear(&dd);
  size_t size = nv == 1 ? (size_t)tr_dtype_size(v[0]->dtype) : 0;
  bool ok = st == TR_OK && nv == 1 && size > 0 && tr_tensor_count(v[0]) > 0 &&
            v[0]->nbytes == tr_tensor_count(v[0]) * size && uniform(v[0]->data, tr_tensor_count(v[0]), size);
  if (!ok) {
    tr_eval_free_outputs(v, nv);
    return false;
  }
  tr_module *x = tr_module_clone(cur->m);
  tr_comp *e = x->entry;
  tr_instr *xi = by_id(e, id);
  char name[160];
  snprintf(name, sizeof name, "%s.const", xi->name);
  tr_instr *c = scalar_const(x, v[0]->dtype, v[0]->data, name);
  tr_comp_insert_before(e, xi, c);
  tr_instr *with = c;
  if (xi->shape->rank > 0) {
    snprintf(name, sizeof name, "%s.splat", xi->name);
    with = tr_instr_new(x, TR_OP_BROADCAST, tr_arena_strdup(x->arena, name), tr_shape_clone(x->arena, xi->shape));
    tr_comp_insert_before(e, xi, with);
    tr_instr_set_operands(with, &c, 1);
    tr_attr *at = tr_instr_add_attr(x, with, TR_ATTR_DIMENSIONS, TR_AK_INTS, NULL);
    at->n = 0;
    at->u.ints = NULL;
  }
  tr_instr_replace_uses(xi, with);
  tr_drop_entry_layout(x);
  tr_eval_free_outputs(v, nv);
  *out = cand_of(x, cur->ins, cur->nins);
  return finish(out, cur);
}

/* Make every element of the constant with id its first one. */
static bool move_splat(const cand *cur, int id, cand *out) {
  tr_instr *in = any_by_id(cur->m, id);
  if (!in || in->op != TR_OP_CONSTANT || !in->literal || !in->literal->data || !tr_shape_is_array(in->shape))
    return false;
  size_t size = (size_t)tr_dtype_size(in->shape->dtype);
  int64_t n = tr_shape_count(in->shape);
  if (size == 0 || n < 2 || uniform(in->literal->data, (size_t)n, size)) return false;
  tr_module *x = tr_module_clone(cur->m);
  tr_instr *xi = any_by_id(x, id);
  char *data = tr_arena_alloc(x->arena, size * (size_t)n);
  for (int64_t i = 0; i < n; i++) memcpy(data + (size_t)i * size, xi->literal->data, size);
  xi->literal->data = data;
  *out = cand_of(x, cur->ins, cur->nins);
  tg_dce(out->m);
  return true; /* progress: one constant fewer distinct values */
}

/* Return the instruction with id instead of the root. */
static bool move_root(const cand *cur, int id, cand *out) {
  tr_instr *in = by_id(cur->m->entry, id);
  if (!in || in == cur->m->entry->root || in->op == TR_OP_PARAMETER) return false;
  tr_module *x = tg_with_root(cur->m, &id, 1);
  if (!x) return false;
  *out = cand_of(x, cur->ins, cur->nins);
  return finish(out, cur);
}

static bool move_drop(const cand *cur, int i, cand *out) {
  const tr_instr *root = cur->m->entry->root;
  if (root->op != TR_OP_TUPLE || root->noperands < 2 || i >= root->noperands) return false;
  int *ids = tr_xcalloc((size_t)root->noperands, sizeof *ids);
  int n = 0;
  for (int k = 0; k < root->noperands; k++)
    if (k != i) ids[n++] = root->operands[k]->id;
  tr_module *x = tg_with_root(cur->m, ids, n);
  tr_free(ids);
  if (!x) return false;
  *out = cand_of(x, cur->ins, cur->nins);
  return finish(out, cur);
}

static bool move_gte(const cand *cur, int id, cand *out);

/* Forward operand opi of the instruction with id to its users. */
static bool move_forward(const cand *cur, int id, int opi, cand *out) {
  tr_instr *in = any_by_id(cur->m, id);
  if (!in || in->op == TR_OP_PARAMETER || opi >= in->noperands) return false;
  if (!tr_shape_equal(in->operands[opi]->shape, in->shape)) return opi == 0 && move_gte(cur, id, out);
  tr_module *x = tr_module_clone(cur->m);
  tr_instr *xi = any_by_id(x, id);
  tr_instr_replace_uses(xi, xi->operands[opi]);
  tr_drop_entry_layout(x);
  *out = cand_of(x, cur->ins, cur->nins);
  return finish(out, cur);
}

/* Forward the element of a tuple that a get-tuple-element reads. */
static bool move_gte(const cand *cur, int id, cand *out) {
  tr_instr *in = any_by_id(cur->m, id);
  if (!in || in->op != TR_OP_GET_TUPLE_ELEMENT || in->operands[0]->op != TR_OP_TUPLE) return false;
  int64_t k = tr_attr_int(in, TR_ATTR_INDEX, -1);
  if (k < 0 || k >= in->operands[0]->noperands) return false;
  tr_module *x = tr_module_clone(cur->m);
  tr_instr *xi = any_by_id(x, id);
  tr_instr_replace_uses(xi, xi->operands[0]->operands[k]);
  tr_drop_entry_layout(x);
  *out = cand_of(x, cur->ins, cur->nins);
  return finish(out, cur);
}

/* Replace the instruction with id by a new parameter fed its value. */
static bool move_param(const cand *cur, int id, cand *out) {
  tr_instr *in = by_id(cur->m->entry, id);
  if (!in || in->op == TR_OP_PARAMETER || in->op == TR_OP_CONSTANT || !tr_shape_is_array(in->shape) ||
      !array_params(cur->m))
    return false;
  /* Worth it only when it removes something: in has an operand. */
  if (in->noperands == 0) return false;
  tr_tensor **v = NULL;
  int nv = 0;
  tr_diag dd = {0};
  tr_status st = tg_ref_values(cur->m, &id, 1, cur->ins, cur->nins, &v, &nv, &dd);
  tr_diag_clear(&dd);
  if (st != TR_OK || nv != 1) {
    tr_eval_free_outputs(v, nv);
    return false;
  }
  tr_module *x = tr_module_clone(cur->m);
  tr_comp *e = x->entry;
  tr_instr *xi = by_id(e, id);
  char name[64];
  snprintf(name, sizeof name, "%s.value", xi->name);
  tr_instr *p = tr_instr_new(x, TR_OP_PARAMETER, tr_arena_strdup(x->arena, name), tr_shape_clone(x->arena, xi->shape));
  p->param_index = e->nparams;
  tr_instr **params = tr_arena_alloc(x->arena, sizeof(tr_instr *) * (size_t)(e->nparams + 1));
  for (int i = 0; i < e->nparams; i++) params[i] = e->params[i];
  params[e->nparams] = p;
  e->params = params;
  e->nparams++;
  tr_comp_insert_before(e, e->instrs[0], p);
  tr_instr_replace_uses(xi, p);
  tr_drop_entry_layout(x);
  *out = cand_of(x, cur->ins, cur->nins);
  out->ins[out->nins++] = v[0];
  tr_free(v);
  return finish(out, cur);
}

/* Inline the call-like instruction with id (shrink.c). */
static bool move_inline(const cand *cur, int id, cand *out) {
  tr_module *x = tg_move_inline(cur->m, id, cur->ins, cur->nins);
  if (!x) return false;
  *out = cand_of(x, cur->ins, cur->nins);
  finish(out, cur);
  return true; /* a call, branch or loop fewer, even when the count is not lower */
}

/* Flags the ops of c and of what it calls. */
static void ops_of(const tr_comp *c, bool *flags, int depth) {
  if (depth > 8) return;
  for (int i = 0; i < c->ninstrs; i++) {
    flags[c->instrs[i]->op] = true;
    tr_comp *callees[16];
    int n = tr_instr_called(c->instrs[i], callees, 16);
    for (int k = 0; k < n && k < 16; k++) ops_of(callees[k], flags, depth + 1);
  }
}

/* Tries candidate c (made or not); on acceptance it replaces *cur. */
/* accept in a heap frame of its own: running out of memory while judging
 * a candidate (its checks, its bisection) refuses it and stops the
 * reduction, which keeps the smallest module that showed the bug so far
 * (every one accepted before did): nothing reduced is lost. */
typedef struct {
  judge *j;
  const cand *c;
  bool ok;
} accept_job;

static void accept_fn(void *p) {
  accept_job *a = p;
  a->ok = accept(a->j, a->c);
}

static bool accept_or_stop(judge *j, const cand *c) {
  if (!j->stop) return accept(j, c);
  if (*j->stop) return false;
  accept_job a = {j, c, false};
  size_t bytes = 0;
  if (tr_heap_run(accept_fn, &a, &bytes)) return a.ok;
  tg_ctx *g = j->g;
  if (!g->oom[0])
    tr_heap_msg(g->oom, sizeof g->oom, g->o->label ? g->o->label : "module", "judging a candidate", bytes);
  *j->stop = true;
  return false;
}

static bool try_cand(judge *j, cand *cur, bool made, cand *c, const char *what, int at) {
  if (made && accept_or_stop(j, c)) {
    cand_free(cur);
    *cur = *c;
    tg_progress(j->g, "reduce: %s at #%d -> %d instructions (%d in all computations)", what, at, tg_count(cur->m),
                tg_count_all(cur->m));
    return true;
  }
  cand_free(c);
  return false;
}

/* The moves that change shapes and dtypes everywhere: shrink a dim of a
 * parameter (and of everything of its shape) to 1 or to half, narrow a
 * dtype. */
static bool shape_moves(judge *j, cand *cur, int budget) {
  for (int w = 0; w < tg_narrow_count() && j->g->r->candidates < budget && !(j->stop && *j->stop); w++) {
    cand c;
    memset(&c, 0, sizeof c);
    tr_tensor **v = NULL;
    tr_module *x = tg_move_narrow(cur->m, w, cur->ins, cur->nins, &v);
    if (x) c = (cand){x, v, cur->nins};
    if (try_cand(j, cur, x != NULL, &c, "narrow", w)) return true;
  }
  const tr_comp *e = cur->m->entry;
  for (int p = 0; p < e->nparams; p++) {
    const tr_shape *s = e->params[p]->shape;
    for (int k = 0; tr_shape_is_array(s) && k < s->rank; k++)
      for (int h = 0; h < 2 && j->g->r->candidates < budget && !(j->stop && *j->stop); h++) {
        int64_t n = h == 0 ? 1 : s->dims[k] / 2;
        if (n < 1 || n >= s->dims[k] || (h == 1 && n == 1)) continue;
        cand c;
        memset(&c, 0, sizeof c);
        tr_tensor **v = NULL;
        tr_module *x = tg_move_shrink(cur->m, p, k, n, cur->ins, cur->nins, &v);
        if (x) c = (cand){x, v, cur->nins};
        if (try_cand(j, cur, x != NULL, &c, "shrink", p)) return true;
      }
  }
  return false;
}

/* One round: tries every move on every instruction; returns true and
 * replaces *cur at the first candidate that keeps the signature. */
static bool round_once(judge *j, cand *cur, int budget) {
  const tr_module *m = cur->m;
  const tr_comp *e = m->entry;
  /* The called computations' instructions first, the entry's last: the
   * walk goes backwards, from the entry's root. Only forward and splat
   * apply inside a called computation (its signature stays). */
  int n = 0;
  for (int c = 0; c < m->ncomps; c++) n += m->comps[c] != e ? m->comps[c]->ninstrs : 0;
  int *ids = tr_xcalloc((size_t)(n + e->ninstrs) + 1, sizeof *ids);
  n = 0;
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; m->comps[c] != e && i < m->comps[c]->ninstrs; i++) ids[n++] = m->comps[c]->instrs[i]->id;
  for (int i = 0; i < e->ninstrs; i++) ids[n++] = e->instrs[i]->id;
  bool taken = false;
  int nroot = e->root->op == TR_OP_TUPLE ? e->root->noperands : 0;
  for (int i = 0; i < nroot && !taken && j->g->r->candidates < budget && !(j->stop && *j->stop); i++) {
    cand c;
    memset(&c, 0, sizeof c);
    taken = try_cand(j, cur, move_drop(cur, i, &c), &c, "drop output", i);
  }
  static const char *const names[] = {"root", "inline", "forward", "const", "param", "splat"};
  for (int pass = 0; pass < 6 && !taken; pass++)
    for (int i = n - 1; i >= 0 && !taken && j->g->r->candidates < budget && !(j->stop && *j->stop); i--) {
      int nops = 1;
      const tr_instr *in = by_id(cur->m->entry, ids[i]);
      if (pass == 2) {
        const tr_instr *a = any_by_id(cur->m, ids[i]);
        nops = a ? a->noperands : 0;
      }
      for (int k = 0; k < nops && !taken; k++) {
        cand c;
        memset(&c, 0, sizeof c);
        if (pass == 1) {
          /* Inlining the culprit itself: its op may become one of the
           * inlined ops (the call was only its wrapper). */
          bool made = move_inline(cur, ids[i], &c);
          judge jc = *j;
          bool *flags = NULL;
          if (made && in->op == j->cul_op) {
            flags = tr_xcalloc(TR_OP_COUNT, sizeof *flags);
            tr_comp *callees[16];
            int nc = tr_instr_called(in, callees, 16);
            for (int q = 0; q < nc && q < 16; q++) ops_of(callees[q], flags, 0);
            jc.follow = flags;
          }
          taken = try_cand(&jc, cur, made, &c, names[pass], ids[i]);
          if (taken) {
            jc.follow = NULL;
            *j = jc;
          }
          tr_free(flags);
          continue;
        }
        bool made = pass == 0   ? move_root(cur, ids[i], &c)
                    : pass == 2 ? move_forward(cur, ids[i], k, &c)
                    : pass == 3 ? move_const(cur, ids[i], &c)
                    : pass == 4 ? move_param(cur, ids[i], &c)
                                : move_splat(cur, ids[i], &c);
        taken = try_cand(j, cur, made, &c, names[pass], ids[i]);
      }
    }
  if (!taken && j->g->r->candidates < budget && !(j->stop && *j->stop)) taken = shape_moves(j, cur, budget);
  tr_free(ids);
  return taken;
}

/* The reduction, in the reduce level's heap frame (tg_level). */
static tr_status reduce_body(tg_ctx *g, void *arg) {
  const tr_module *m = arg;
  tr_target *t = g->t;
  const tr_triage_opts *o = g->o;
  tr_triage_report *r = g->r;
  double t0 = tg_now_ms();
  tr_level *lv = &r->reduce;
  /* Reproduction rate of the original on the failing inputs. */
  int nrep = o->repro_runs > 0 ? o->repro_runs : 3;
  bool stop = false;
  g->oom[0] = 0;
  judge j = {g, r->sig, true, false, r->culprit_op, NULL, TR_OP_COUNT, 0, &stop};
  cand orig = cand_of(tr_module_clone(m), r->inputs, r->ninputs);
  /* A candidate with a loop gets ten times the original's reference
   * time (at least a second). */
  {
    double t1 = tg_now_ms();
    tr_tensor **v = NULL;
    int nv = 0;
    tr_diag dd = {0};
    tr_eval(m, r->inputs, r->ninputs, &v, &nv, &dd);
    tr_eval_free_outputs(v, nv);
    tr_diag_clear(&dd);
    double s = 10 * (tg_now_ms() - t1) / 1e3;
    j.ref_s = s > 1 ? s : 1;
  }
  r->repro_of = nrep;
  for (int i = 0; i < nrep; i++) {
    tr_check_report cr;
    if (tg_check(g, lv, m, r->inputs, r->ninputs, &cr) == TR_OK && cr.outcome == TR_CHECK_FINDING &&
        strcmp(cr.sig.kind, r->sig.kind) == 0 && strcmp(cr.sig.value_kind, r->sig.value_kind) == 0)
      r->repro_ok++;
    tr_check_report_free(&cr);
  }
  r->flaky = r->repro_ok < r->repro_of;
  if (r->repro_ok == 0) {
    lv->state = TR_LEVEL_UNRESOLVED;
    tg_note(lv, "the finding does not reproduce on its inputs (0 of %d runs): not reduced", nrep);
    cand_free(&orig);
    lv->ms = tg_now_ms() - t0;
    return TR_OK;
  }
  /* The guilty pass is re-judged where one compile tells it (builtin);
   * a target judged on its own pass dumps keeps the other fields. */
  j.check_pass = r->guilty_pass[0] != 0 && r->passes.state != TR_LEVEL_SKIPPED && tg_can_validate(t);
  cand cur = orig;
  if (array_params(cur.m)) drop_params(&cur);
  int budget = o->max_candidates > 0 ? o->max_candidates : 5000;
  /* First: the culprit as the root; then its op is the signature's. */
  const tr_instr *cul = r->culprit[0] ? tr_comp_find(cur.m->entry, r->culprit) : NULL;
  if (cul && cul != cur.m->entry->root) {
    judge jc = j;
    jc.want.op = r->culprit_op;
    cand c;
    memset(&c, 0, sizeof c);
    if (move_root(&cur, cul->id, &c) && accept_or_stop(&jc, &c)) {
      cand_free(&cur);
      cur = c;
      j = jc;
      r->accepted++;
      tg_progress(g, "reduce: culprit %%%s as the root -> %d instructions", r->culprit, tg_count(cur.m));
    } else {
      cand_free(&c);
    }
  }
  while (r->candidates < budget && !stop && round_once(&j, &cur, budget)) r->accepted++;
  tr_buf b = {0};
  tr_print_module(&b, cur.m);
  tr_free(r->reduced_text);
  r->reduced_text = b.p;
  r->reduced_instrs = tg_count(cur.m);
  r->reduced_instrs_all = tg_count_all(cur.m);
  r->reduced_op = j.cul_op;
  r->reduced_inputs = cur.ins;
  r->nreduced_inputs = cur.nins;
  cur.ins = NULL;
  cur.nins = 0;
  cand_free(&cur);
  lv->state = TR_LEVEL_FOUND;
  char early[sizeof g->oom + 32] = "";
  if (stop) snprintf(early, sizeof early, "stopped early: %s; ", g->oom);
  tg_note(lv, "%s%d -> %d instructions (%d -> %d in all computations; %d candidates, %d kept%s); signature %s, op %s, value %s%s%s; reproduced %d of %d%s",
          early, r->module_instrs, r->reduced_instrs, r->module_instrs_all, r->reduced_instrs_all, r->candidates, r->accepted,
          r->candidates >= budget ? ", candidate budget spent: not 1-minimal"
          : stop                  ? ", not 1-minimal"
                                  : ", 1-minimal for the moves",
          r->sig.kind, j.want.op < TR_OP_COUNT ? tr_ops[j.want.op].name : "-", r->sig.value_kind,
          j.check_pass ? ", pass " : "", j.check_pass ? r->guilty_pass : "", r->repro_ok, r->repro_of,
          r->flaky ? " (flaky)" : "");
  lv->ms = tg_now_ms() - t0;
  r->total_ms += lv->ms;
  return TR_OK;
}

tr_status tr_reduce(tr_target *t, const tr_module *m, const tr_triage_opts *o,
                    tr_triage_report *r, tr_diag *d) {
  tg_ctx g = {t, o, r, d, ""};
  if (!r->target) {
    tr_status st = tr_isolate(t, m, o, r, d);
    if (st != TR_OK) return st;
  }
  tr_level *lv = &r->reduce;
  if (r->outputs.state != TR_LEVEL_FOUND) {
    lv->state = TR_LEVEL_SKIPPED;
    tg_note(lv, "nothing to reduce: no finding");
    return TR_OK;
  }
  bool oom = false;
  tr_status st = tg_level(&g, lv, "reducing the module", reduce_body, (void *)m, &oom);
  if (oom) r->total_ms += lv->ms;
  return st;
}
