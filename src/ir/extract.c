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
    tr_free(called);
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

tr_module *tr_extract_group(const tr_module *m, const tr_instr *const *group, int ngroup,
                            const tr_instr **sources, int *nsources) {
  if (nsources) *nsources = 0;
  if (ngroup < 1) return NULL;
  for (int g = 0; g < ngroup; g++)
    if (!group[g] || !group[g]->shape || !in_module(m, group[g]) || group[g]->parent != group[0]->parent ||
        group[g]->op == TR_OP_PARAMETER)
      return NULL;
  /* Work on a clone (ids are kept, so the instructions are found by id),
   * then build a new entry around them and drop what they do not call. */
  tr_module *x = tr_module_clone(m);
  tr_comp *old_parent = NULL;
  for (int k = 0; k < x->ncomps && !old_parent; k++)
    if (x->comps[k]->id == group[0]->parent->id) old_parent = x->comps[k];
  tr_instr **xg = tr_xcalloc((size_t)ngroup + 1, sizeof *xg);
  unsigned char *member = tr_xcalloc((size_t)x->next_id + 1, 1);
  for (int g = 0; g < ngroup; g++) member[group[g]->id] = 1;
  for (int i = 0; old_parent && i < old_parent->ninstrs; i++) {
    tr_instr *xi = old_parent->instrs[i];
    for (int g = 0; g < ngroup; g++)
      if (xi->id == group[g]->id) xg[g] = xi;
  }
  for (int g = 0; g < ngroup; g++)
    if (!xg[g]) {
      tr_free(xg);
      tr_free(member);
      tr_module_free(x);
      return NULL;
    }
  int k = 0;
  for (int i = 0; i < old_parent->ninstrs; i++)
    if (!member[old_parent->instrs[i]->id]) old_parent->instrs[k++] = old_parent->instrs[i];
  old_parent->ninstrs = k;
  for (int k2 = 0; k2 < x->ncomps; k2++) x->comps[k2]->is_entry = false;

  /* The new entry, named after the root so messages say where it came
   * from. */
  tr_instr *root = xg[ngroup - 1];
  tr_buf nb = {0};
  tr_buf_printf(&nb, "extract.%s", root->name);
  tr_comp *e = tr_comp_new(x, tr_buf_str(&nb));
  tr_buf_free(&nb);
  e->is_entry = true;
  x->entry = e;
  int nops = 0;
  for (int g = 0; g < ngroup; g++) nops += xg[g]->noperands;
  e->params = tr_arena_alloc(x->arena, sizeof(tr_instr *) * (size_t)(nops + 1));
  /* One parameter (or constant copy) per distinct outside operand, in the
   * order the group first uses them. */
  tr_instr **outside = tr_xcalloc((size_t)nops + 1, sizeof *outside);
  tr_instr **made = tr_xcalloc((size_t)nops + 1, sizeof *made);
  int nout = 0;
  for (int g = 0; g < ngroup; g++) {
    tr_instr *xi = xg[g];
    tr_instr **ops = tr_xcalloc((size_t)xi->noperands + 1, sizeof *ops);
    for (int i = 0; i < xi->noperands; i++) {
      tr_instr *op = xi->operands[i];
      if (member[op->id]) {
        ops[i] = op;
        continue;
      }
      int same = -1;
      for (int j = 0; j < nout && same < 0; j++)
        if (outside[j] == op) same = j;
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
        /* m's instruction of the same id */
        if (sources) {
          const tr_instr *src = NULL;
          for (int q = 0; q < group[g]->noperands && !src; q++)
            if (group[g]->operands[q]->id == op->id) src = group[g]->operands[q];
          sources[e->nparams - 1] = src;
        }
      }
      tr_comp_append(e, ni);
      outside[nout] = op;
      made[nout++] = ni;
      ops[i] = ni;
    }
    /* Control edges point into the old computation: they mean nothing
     * here. */
    int na = 0;
    for (int i = 0; i < xi->nattrs; i++)
      if (xi->attrs[i].key != TR_ATTR_CONTROL_PREDECESSORS) xi->attrs[na++] = xi->attrs[i];
    xi->nattrs = na;
    xi->operands = xi->noperands ? tr_arena_memdup(x->arena, ops, sizeof(tr_instr *) * (size_t)xi->noperands) : NULL;
    tr_free(ops);
  }
  for (int g = 0; g < ngroup; g++) tr_comp_append(e, xg[g]);
  e->root = root;
  if (old_parent->root && member[old_parent->root->id]) old_parent->root = NULL;
  tr_free(outside);
  tr_free(made);
  tr_free(member);
  tr_free(xg);

  /* Keep only the computations the new entry reaches, in their order
   * (callees before callers; the entry last). */
  unsigned char *reach = tr_xcalloc((size_t)x->next_id + 1, 1);
  reach_comp(e, reach, x->next_id);
  int nc = 0;
  for (int i = 0; i < x->ncomps; i++)
    if (reach[x->comps[i]->id]) x->comps[nc++] = x->comps[i];
  x->ncomps = nc;
  tr_free(reach);
  tr_module_rebuild_users(x);
  tr_drop_entry_layout(x);
  if (nsources) *nsources = e->nparams;
  return x;
}

tr_module *tr_extract_instr(const tr_module *m, const tr_instr *in, const tr_instr **sources,
                            int *nsources) {
  return tr_extract_group(m, &in, 1, sources, nsources);
}
