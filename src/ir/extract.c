/* extract.c - one instruction as a module of its own: its operands become
 * parameters (constants keep their literal), the computations it calls come
 * along, and its result is the root. The per-instruction check of the
 * oracle (src/oracle/anchor.c) judges each instruction this way, on the
 * target's own operand values; a person triaging a finding can use it to
 * hand one suspicious instruction to a target alone. */
#include "ir.h"

#include <stdlib.h>
#include <string.h>

/* Marks c and everything it calls (reach[id] = 1). */
static void reach_comp(const tr_comp *c, unsigned char *reach, int nids) {
  if (c->id < 0 || c->id >= nids || reach[c->id]) return;
  reach[c->id] = 1;
  for (int i = 0; i < c->ninstrs; i++) {
    int n = tr_instr_called(c->instrs[i], NULL, 0);
    if (!n) continue;
    tr_comp **called = tr_xmalloc(sizeof(tr_comp *) * (size_t)n);
    tr_instr_called(c->instrs[i], called, n);
    for (int k = 0; k < n; k++) reach_comp(called[k], reach, nids);
    free(called);
  }
}

static bool in_module(const tr_module *m, const tr_instr *in) {
  for (int k = 0; k < m->ncomps; k++)
    if (in->parent == m->comps[k]) return true;
  return false;
}

void tr_drop_entry_layout(tr_module *m) {
  int k = 0;
  for (int i = 0; i < m->nhattrs; i++)
    if (strcmp(m->hattrs[i].name, "entry_computation_layout") != 0) m->hattrs[k++] = m->hattrs[i];
  m->nhattrs = k;
}

tr_module *tr_extract_instr(const tr_module *m, const tr_instr *in, const tr_instr **sources,
                            int *nsources) {
  if (nsources) *nsources = 0;
  if (!in || !in->shape || !in_module(m, in)) return NULL;
  /* Work on a clone (ids are kept, so the instruction is found by id),
   * then build a new entry around it and drop what it does not call. */
  tr_module *x = tr_module_clone(m);
  tr_instr *xi = NULL;
  for (int k = 0; k < x->ncomps && !xi; k++)
    for (int i = 0; i < x->comps[k]->ninstrs; i++)
      if (x->comps[k]->instrs[i]->id == in->id) {
        xi = x->comps[k]->instrs[i];
        break;
      }
  if (!xi) {
    tr_module_free(x);
    return NULL;
  }
  tr_comp *old_parent = xi->parent;
  int k = 0;
  for (int i = 0; i < old_parent->ninstrs; i++)
    if (old_parent->instrs[i] != xi) old_parent->instrs[k++] = old_parent->instrs[i];
  old_parent->ninstrs = k;
  if (old_parent->root == xi) old_parent->root = NULL;
  for (int k2 = 0; k2 < x->ncomps; k2++) x->comps[k2]->is_entry = false;

  /* The new entry, named after the instruction so messages say where it
   * came from. */
  tr_buf nb = {0};
  tr_buf_printf(&nb, "extract.%s", xi->name);
  tr_comp *e = tr_comp_new(x, tr_buf_str(&nb));
  tr_buf_free(&nb);
  e->is_entry = true;
  x->entry = e;
  int nops = xi->noperands;
  tr_instr **ops = tr_xcalloc((size_t)nops + 1, sizeof *ops);
  tr_instr **made = tr_xcalloc((size_t)nops + 1, sizeof *made); /* per distinct operand */
  e->params = tr_arena_alloc(x->arena, sizeof(tr_instr *) * (size_t)(nops + 1));
  for (int i = 0; i < nops; i++) {
    tr_instr *op = xi->operands[i];
    int same = -1;
    for (int j = 0; j < i && same < 0; j++)
      if (xi->operands[j] == op) same = j;
    if (same >= 0) {
      ops[i] = made[same];
      continue;
    }
    tr_instr *ni;
    if (op->op == TR_OP_CONSTANT && op->literal) {
      /* The literal is in x's arena already: share it. */
      ni = tr_instr_new(x, TR_OP_CONSTANT, op->name, op->shape);
      ni->literal = op->literal;
      ni->attrs = op->attrs;
      ni->nattrs = op->nattrs;
    } else {
      ni = tr_instr_new(x, TR_OP_PARAMETER, op->name, op->shape);
      ni->param_index = e->nparams;
      e->params[e->nparams++] = ni;
      if (sources) sources[e->nparams - 1] = in->operands[i];
    }
    tr_comp_append(e, ni);
    made[i] = ni;
    ops[i] = ni;
  }
  /* Control edges point into the old computation: they mean nothing
   * here. */
  int na = 0;
  for (int i = 0; i < xi->nattrs; i++)
    if (xi->attrs[i].key != TR_ATTR_CONTROL_PREDECESSORS) xi->attrs[na++] = xi->attrs[i];
  xi->nattrs = na;
  xi->operands = nops ? tr_arena_memdup(x->arena, ops, sizeof(tr_instr *) * (size_t)nops) : NULL;
  tr_comp_append(e, xi);
  e->root = xi;
  free(ops);
  free(made);

  /* Keep only the computations the new entry reaches, in their order
   * (callees before callers; the entry last). */
  unsigned char *reach = tr_xcalloc((size_t)x->next_id + 1, 1);
  reach_comp(e, reach, x->next_id);
  int nc = 0;
  for (int i = 0; i < x->ncomps; i++)
    if (reach[x->comps[i]->id]) x->comps[nc++] = x->comps[i];
  x->ncomps = nc;
  free(reach);
  tr_module_rebuild_users(x);
  tr_drop_entry_layout(x);
  if (nsources) *nsources = e->nparams;
  return x;
}
