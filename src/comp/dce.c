/* dce.c - dead code elimination: instructions whose value nobody uses
 * (rule dead-instruction) and computations nothing calls (rule
 * dead-computation). Parameters stay (they are the signature), and so does
 * anything with side effects or named as a control predecessor. */
#include "compint.h"

#include <stdlib.h>
#include <string.h>

/* Removes dead instructions of k, last first so that whole dead chains go
 * in one walk. Returns false when fuel ran out. */
static bool dce_comp(tr_bc_ctx *c, tr_comp *k, unsigned char *pinned, bool *changed) {
  if (!tr_bc_rule_enabled(c, "dead-instruction")) return true;
  /* Control predecessors are references the use lists do not record. */
  for (int i = 0; i < k->ninstrs; i++) {
    const tr_attr *at = tr_instr_attr(k->instrs[i], TR_ATTR_CONTROL_PREDECESSORS);
    for (int j = 0; at && j < at->n; j++)
      if (at->u.instrs[j]) pinned[at->u.instrs[j]->id] = 1;
  }
  for (int i = k->ninstrs - 1; i >= 0; i--) {
    tr_instr *in = k->instrs[i];
    if (in->nusers || in == k->root || in->op == TR_OP_PARAMETER || pinned[in->id] ||
        tr_bc_has_side_effect(in))
      continue;
    if (!tr_bc_fire(c, "dce", "dead-instruction", in)) return false;
    tr_comp_remove(k, in);
    *changed = true; /* later entries shifted down; i-1 is still next */
  }
  return true;
}

static void mark_live(const tr_comp *k, unsigned char *live) {
  if (live[k->id]) return;
  live[k->id] = 1;
  for (int i = 0; i < k->ninstrs; i++) {
    tr_comp *called[16];
    int n = tr_instr_called(k->instrs[i], called, 16);
    if (n > 16) {
      tr_comp **all = tr_xmalloc(sizeof(tr_comp *) * (size_t)n);
      tr_instr_called(k->instrs[i], all, n);
      for (int j = 0; j < n; j++) mark_live(all[j], live);
      tr_free(all);
    } else {
      for (int j = 0; j < n; j++) mark_live(called[j], live);
    }
  }
}

/* The IR has no call to drop a computation: this one unlinks it from the
 * module's list (its memory stays in the arena until the module dies). */
static void module_drop_comp(tr_module *m, tr_comp *k) {
  int n = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i] != k) m->comps[n++] = m->comps[i];
  m->ncomps = n;
}

tr_status tr_pass_dce(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  unsigned char *mark = tr_xcalloc((size_t)m->next_id + 1, 1);
  bool fuel = true;
  for (int i = 0; fuel && i < m->ncomps; i++) fuel = dce_comp(c, m->comps[i], mark, changed);
  if (fuel && m->entry && tr_bc_rule_enabled(c, "dead-computation")) {
    memset(mark, 0, (size_t)m->next_id + 1);
    mark_live(m->entry, mark);
    /* Callers before callees: wherever fuel stops, every computation left
     * still finds the ones it calls. */
    int n = m->ncomps;
    tr_comp **order = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n + 1));
    tr_module_callee_order(m, order);
    for (int i = n - 1; i >= 0; i--) {
      tr_comp *k = order[i];
      if (mark[k->id]) continue;
      if (k->root && !tr_bc_fire(c, "dce", "dead-computation", k->root)) break;
      module_drop_comp(m, k);
      *changed = true;
    }
    tr_free(order);
  }
  tr_free(mark);
  return TR_OK;
}
