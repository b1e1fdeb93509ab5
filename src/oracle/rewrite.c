/* rewrite.c - the module rewrites behind the profile's rewrite rules
 * (profile.h, docs/PROFILES.md). A target that rewrites a module before
 * running it (XLA's algebraic simplifier folds log(exp(x)) to x) computes
 * a different function where the rewrite is not exact; the rule excuses an
 * element only where the target agrees with the reference evaluated on the
 * rewritten module, so the excuse is as narrow as the rewrite itself. */
#include "profile.h"

#include <stdio.h>

/* log(exp(x)) -> x on the fold dtypes: the log's users read x. */
static int fold_log_exp(const tr_profile *p, tr_module *m) {
  int n = 0;
  for (int k = 0; k < m->ncomps; k++) {
    tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *lg = c->instrs[i];
      if (lg->op != TR_OP_LOG || lg->noperands != 1 || !lg->shape) continue;
      tr_instr *ex = lg->operands[0];
      if (ex->op != TR_OP_EXPONENTIAL || ex->noperands != 1 || !ex->shape) continue;
      tr_dtype dt = lg->shape->dtype;
      if (!p->fold[dt] || ex->shape->dtype != dt || ex->operands[0]->shape->dtype != dt) continue;
      tr_instr_replace_uses(lg, ex->operands[0]);
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

tr_module *tr_profile_rewrite(const tr_profile *p, tr_prule r, const tr_module *m, int *count) {
  *count = 0;
  if (!p || !p->on[r] || (r != TR_PR_LOG_EXP_FOLD && r != TR_PR_INT_CONV_WRAP)) return NULL;
  tr_module *d = tr_module_clone(m);
  int n = r == TR_PR_LOG_EXP_FOLD ? fold_log_exp(p, d) : wrap_int_conv(p, d);
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
