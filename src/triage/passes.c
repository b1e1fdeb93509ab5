/* passes.c - the pass level by translation validation: one compile with
 * the builtin compiler's after-pass hook (pipeline.h); each pass's output
 * module is evaluated with the reference on the failing inputs and judged
 * against the original module's shadow bounds. The first pass run whose
 * module fails is the culprit. When every pass keeps the result and the
 * target is still wrong, the blame goes to code generation and the
 * fused-kernel level (fusion.c) goes down from there. */
#include "triageint.h"
#include "../comp/jit_builtin.h"
#include "../eval/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  tr_tensor *const *ins;
  int nins;
  tr_shadow_out *ref;
  int nref;
  tr_compare_opts co;
  bool found;
  char pass[64];
  int run;
} tv_state;

/* Whether m, evaluated exactly on the inputs, stays within ref's bounds. */
static bool keeps_result(tv_state *s, const tr_module *m) {
  tr_tensor **outs = NULL;
  int nouts = 0;
  tr_diag dd = {0};
  bool ok = tr_eval(m, s->ins, s->nins, &outs, &nouts, &dd) == TR_OK && nouts == s->nref;
  for (int i = 0; ok && i < nouts; i++) {
    tr_compare_result cr;
    ok = tr_compare_output(&s->ref[i], outs[i], &s->co, &cr, &dd) == TR_OK && !cr.has_fail;
  }
  tr_eval_free_outputs(outs, nouts);
  tr_diag_clear(&dd);
  return ok;
}

static void after_pass(void *user, const char *pass, int run, bool changed, const tr_module *m) {
  tv_state *s = user;
  if (s->found || !changed) return;
  if (keeps_result(s, m)) return;
  s->found = true;
  snprintf(s->pass, sizeof s->pass, "%s", pass);
  s->run = run;
}

bool tg_validate_passes(tr_target *t, const tr_module *m, tr_tensor *const *ins, int nins,
                        const tr_triage_opts *o, char *guilty, size_t nguilty, int *run,
                        tr_module **opt, tr_diag *d) {
  if (opt) *opt = NULL;
  guilty[0] = 0;
  *run = 0;
  tr_comp_ctx ctx;
  tr_diag cd = {0};
  if (!tr_builtin_comp_ctx(t, &ctx, &cd)) {
    tr_diag_clear(&cd);
    return false;
  }
  tv_state s;
  memset(&s, 0, sizeof s);
  s.ins = ins;
  s.nins = nins;
  tr_compare_opts_default(&s.co);
  s.co.k = o->k > 0 ? o->k : 1;
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  bool ok = tr_eval_shadow(m, &so, ins, nins, &s.ref, &s.nref, &cd) == TR_OK;
  tr_module *x = ok ? tr_module_clone(m) : NULL;
  if (ok) {
    ctx.after_pass = after_pass;
    ctx.after_pass_user = &s;
    ok = tr_comp_pipeline_run(&ctx, x, &cd) == TR_OK;
  }
  if (ok) {
    if (s.found) {
      snprintf(guilty, nguilty, "%s", s.pass);
      *run = s.run;
    } else {
      snprintf(guilty, nguilty, "codegen");
    }
    if (opt) {
      *opt = x;
      x = NULL;
    }
  }
  tr_module_free(x);
  tr_shadow_free(s.ref, s.nref);
  tr_comp_ctx_free(&ctx);
  tr_diag_clear(&cd);
  return ok;
}

tr_status tg_passes_level(tg_ctx *g, const tr_module *m, tr_module **opt) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->passes;
  double t0 = tg_now_ms();
  *opt = NULL;
  bool ok = tg_validate_passes(g->t, m, r->inputs, r->ninputs, g->o, r->guilty_pass,
                               sizeof r->guilty_pass, &r->guilty_run, opt, g->d);
  if (!ok) {
    /* A target that is not trench's own: its optimized module, when it
     * returns one, still feeds the kernel level. */
    lv->state = TR_LEVEL_SKIPPED;
    tg_note(lv, "translation validation needs the module after each pass; %s does not give it",
            g->t->name ? g->t->name : "the target");
    if (g->t->caps & TR_CAP_OPTIMIZED_HLO) {
      tr_run_opts ro;
      memset(&ro, 0, sizeof ro);
      ro.want_optimized_hlo = true;
      ro.timeout_s = g->o->timeout_s;
      tr_run_result res;
      tr_run_result_init(&res);
      tr_diag dd = {0};
      if (tr_target_run(g->t, m, r->inputs, r->ninputs, &ro, &res, &dd) == TR_OK && res.optimized_hlo) {
        lv->runs++;
        r->total_runs++;
        *opt = tr_parse("optimized.hlo", res.optimized_hlo, strlen(res.optimized_hlo), NULL, &dd);
      }
      tr_run_result_free(&res);
      tr_diag_clear(&dd);
    }
  } else if (strcmp(r->guilty_pass, "codegen") == 0) {
    lv->state = TR_LEVEL_NONE;
    tg_note(lv, "every pass keeps the result (translation validation, one compile): code generation is wrong");
  } else {
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "pass %s (pass run %d) changes the result (translation validation, one compile)",
            r->guilty_pass, r->guilty_run);
  }
  if (*opt) {
    tr_buf b = {0};
    tr_print_module(&b, *opt);
    r->kernel_text = b.p;
  }
  lv->ms = tg_now_ms() - t0;
  return TR_OK;
}
