/* fusion.c - the fused-kernel level: when code generation is to blame (or
 * the target's passes are out of sight), bisect the target's optimized
 * module the same way as the original (bisect.c) to the kernel that is
 * wrong, run that kernel alone on the target with the reference's values
 * of its operands, and bisect its fused body (made the entry, its
 * parameters fed those values) to the wrong instruction inside it. */
#include "triageint.h"
#include "../eval/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The reference's values of in's operands (in operand order). */
static tr_status operand_values(const tr_module *m, const tr_instr *in, tr_tensor *const *ins, int nins,
                                tr_tensor ***vals, int *nvals, tr_diag *d) {
  int *ids = tr_xcalloc((size_t)in->noperands + 1, sizeof *ids);
  for (int i = 0; i < in->noperands; i++) ids[i] = in->operands[i]->id;
  tr_status st = tg_ref_values(m, ids, in->noperands, ins, nins, vals, nvals, d);
  tr_free(ids);
  return st;
}

/* The fused computation of fusion instruction id, made the entry. */
static tr_module *body_module(const tr_module *m, int id) {
  tr_module *x = tr_module_clone(m);
  tr_instr *f = NULL;
  for (int i = 0; i < x->entry->ninstrs && !f; i++)
    if (x->entry->instrs[i]->id == id) f = x->entry->instrs[i];
  tr_comp *body = f ? tr_instr_fused(f) : NULL;
  if (!body) {
    tr_module_free(x);
    return NULL;
  }
  x->entry->is_entry = false;
  body->is_entry = true;
  x->entry = body;
  tr_drop_entry_layout(x);
  tg_dce(x);
  return x;
}

tr_status tg_kernel_level(tg_ctx *g, const tr_module *opt) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->kernel;
  double t0 = tg_now_ms();
  if (r->passes.state == TR_LEVEL_FOUND) {
    lv->state = TR_LEVEL_SKIPPED;
    tg_note(lv, "a pass is to blame, not code generation");
    return TR_OK;
  }
  int nbl = 0;
  const tr_instr **bl = tg_blamable(opt, &nbl);
  int k = tg_bisect(g, lv, opt, bl, nbl, r->inputs, r->ninputs, &r->sig);
  if (k < 0) {
    lv->state = TR_LEVEL_UNRESOLVED;
    tg_note(lv, "the optimized module, compiled again, does not fail the same way");
    tr_free(bl);
    lv->ms = tg_now_ms() - t0;
    return TR_OK;
  }
  const tr_instr *kin = bl[k];
  snprintf(r->kernel_name, sizeof r->kernel_name, "%s", kin->name);
  tr_free(bl);
  tr_tensor **vals = NULL;
  int nvals = 0;
  tr_diag dd = {0};
  if (operand_values(opt, kin, r->inputs, r->ninputs, &vals, &nvals, &dd) != TR_OK) {
    lv->state = TR_LEVEL_FOUND;
    tg_oom_diag(g, &dd);
    tg_note(lv, "kernel %%%s (%s); the reference cannot give its operands: %s", kin->name,
            tr_ops[kin->op].name, tr_diag_first(&dd) ? tr_diag_first(&dd) : "");
    tr_diag_clear(&dd);
    lv->ms = tg_now_ms() - t0;
    return TR_OK;
  }
  tr_diag_clear(&dd);
  /* Alone: the kernel as a module of its own whose parameters are its
   * operands, in order. */
  tr_module *body = tr_instr_fused(kin) ? body_module(opt, kin->id) : NULL;
  const char *alone = "";
  if (body && body->entry->nparams == nvals) {
    tr_check_report cr;
    if (tg_check(g, lv, body, vals, nvals, &cr) == TR_OK)
      alone = cr.outcome == TR_CHECK_FINDING ? "wrong alone" : "right alone (needs its context)";
    bool bad = cr.outcome == TR_CHECK_FINDING;
    tr_check_report_free(&cr);
    if (bad) {
      int nb = 0;
      const tr_instr **bb = tg_blamable(body, &nb);
      tr_check_sig any = r->sig;
      snprintf(any.kind, sizeof any.kind, "%s", r->sig.kind);
      int j = tg_bisect(g, lv, body, bb, nb, vals, nvals, &any);
      if (j >= 0) snprintf(r->kernel_instr, sizeof r->kernel_instr, "%s", bb[j]->name);
      tr_free(bb);
    }
  }
  lv->state = TR_LEVEL_FOUND;
  if (r->kernel_instr[0])
    tg_note(lv, "kernel %%%s (%s) of the optimized module, %s; inside it %%%s is the first wrong value",
            kin->name, tr_ops[kin->op].name, alone, r->kernel_instr);
  else
    tg_note(lv, "%%%s (%s) of the optimized module%s%s", kin->name, tr_ops[kin->op].name,
            alone[0] ? ", " : "", alone);
  tr_module_free(body);
  tr_eval_free_outputs(vals, nvals);
  lv->ms = tg_now_ms() - t0;
  return TR_OK;
}
