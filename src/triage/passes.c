/* passes.c - the pass level by translation validation: one compile with
 * the builtin compiler's after-pass hook (pipeline.h), or, for a target
 * with TR_CAP_PASS_DUMPS (XLA), one run returning the module after each
 * pass that changed it; each pass's output module is evaluated with the
 * reference on the failing inputs and judged against the original
 * module's shadow bounds. The first pass run whose
 * module fails is the culprit. When every pass keeps the result and the
 * target is still wrong, the blame goes to code generation and the
 * fused-kernel level (fusion.c) goes down from there. */
#include "triageint.h"
#include "../target/builtin.h"
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
  tg_ctx *g; /* for tg_oom */
} tv_state;

/* Whether m, evaluated exactly on the inputs, stays within ref's bounds. */
static bool keeps_result(tv_state *s, const tr_module *m) {
  tr_tensor **outs = NULL;
  int nouts = 0;
  tr_diag dd = {0};
  bool ok = tr_eval(m, s->ins, s->nins, &outs, &nouts, &dd) == TR_OK && nouts == s->nref;
  /* The reference out of memory says nothing about the pass. */
  tg_oom_diag(s->g, &dd);
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

bool tg_can_validate(tr_target *t) {
  tr_bc_ctx ctx;
  tr_diag cd = {0};
  bool ok = tr_builtin_comp_ctx(t, &ctx, &cd);
  if (ok) tr_bc_ctx_free(&ctx);
  tr_diag_clear(&cd);
  return ok;
}

bool tg_validate_passes(tg_ctx *g, tr_target *t, const tr_module *m, tr_tensor *const *ins, int nins,
                        const tr_triage_opts *o, char *guilty, size_t nguilty, int *run,
                        tr_module **opt, tr_diag *d) {
  if (opt) *opt = NULL;
  guilty[0] = 0;
  *run = 0;
  tr_bc_ctx ctx;
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
  s.g = g;
  bool ok = tr_eval_shadow(m, &so, ins, nins, &s.ref, &s.nref, &cd) == TR_OK;
  if (!ok) tg_oom_diag(g, &cd);
  tr_module *x = ok ? tr_module_clone(m) : NULL;
  bool invalid = false;
  if (ok) {
    ctx.after_pass = after_pass;
    ctx.after_pass_user = &s;
    ok = tr_bc_pipeline_run(&ctx, x, &cd) == TR_OK;
    /* A pass that leaves an invalid module (pipeline.c says which) is
     * guilty too, unless an earlier one already changed the result. */
    const char *why = ok ? NULL : tr_diag_first(&cd);
    const char *at = why ? strstr(why, "pass ") : NULL;
    const char *end = at ? strstr(at, " left an invalid module") : NULL;
    if (end && !s.found && end - at - 5 > 0 && end - at - 5 < (int)sizeof s.pass) {
      snprintf(s.pass, sizeof s.pass, "%.*s", (int)(end - at - 5), at + 5);
      s.found = invalid = ok = true;
      s.run = 0;
    } else if (!ok && s.found) {
      ok = true;
    }
  }
  if (ok) {
    if (s.found) {
      snprintf(guilty, nguilty, "%s", s.pass);
      *run = s.run;
    } else {
      snprintf(guilty, nguilty, "codegen");
    }
    if (opt && !invalid) {
      *opt = x;
      x = NULL;
    }
  }
  tr_module_free(x);
  tr_shadow_free(s.ref, s.nref);
  tr_bc_ctx_free(&ctx);
  tr_diag_clear(&cd);
  return ok;
}

/* Translation validation on the target's own pass dumps. Returns false
 * when it could not be done (note says why). */
static bool validate_dumps(tg_ctx *g, const tr_module *m, tr_level *lv, tr_module **opt) {
  tr_triage_report *r = g->r;
  tr_run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.want_pass_dumps = true;
  ro.want_optimized_hlo = true;
  tr_run_result res;
  tr_diag dd = {0};
  tr_status st = tg_run(g, lv, m, &ro, &res, &dd);
  if (st == TR_OK && res.optimized_hlo)
    *opt = tr_parse("optimized.hlo", res.optimized_hlo, strlen(res.optimized_hlo), NULL, &dd);
  tv_state s;
  memset(&s, 0, sizeof s);
  s.ins = r->inputs;
  s.nins = r->ninputs;
  tr_compare_opts_default(&s.co);
  s.co.k = g->o->k > 0 ? g->o->k : 1;
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  bool ok = st == TR_OK && res.verdict == TR_VERDICT_OK && res.npass_dumps > 0 &&
            tr_eval_shadow(m, &so, r->inputs, r->ninputs, &s.ref, &s.nref, &dd) == TR_OK;
  if (!ok) {
    tg_note(lv, "the target gave no pass dumps (%s)", st != TR_OK || res.verdict != TR_VERDICT_OK
                                                         ? "it did not run" : "none, or the reference declined");
    tr_run_result_free(&res);
    tr_shadow_free(s.ref, s.nref);
    tr_diag_clear(&dd);
    return false;
  }
  /* Each dump in order; one the reference cannot evaluate (an op it does
   * not model, a custom call) stops the walk: nothing after it can be
   * told. */
  int i = 0;
  const char *stop = NULL;
  for (; i < res.npass_dumps && !s.found; i++) {
    tr_diag pd = {0};
    tr_parse_opts po = {.fill_elided = false};
    tr_module *pm = tr_parse(res.pass_dump_names[i], res.pass_dump_texts[i], strlen(res.pass_dump_texts[i]), &po, &pd);
    tr_tensor **outs = NULL;
    int nouts = 0;
    bool evaluated = pm && tr_eval(pm, s.ins, s.nins, &outs, &nouts, &pd) == TR_OK && nouts == s.nref;
    tr_eval_free_outputs(outs, nouts);
    if (!evaluated) {
      stop = res.pass_dump_names[i];
      tr_module_free(pm);
      tr_diag_clear(&pd);
      break;
    }
    if (!keeps_result(&s, pm)) {
      s.found = true;
      snprintf(s.pass, sizeof s.pass, "%s", res.pass_dump_names[i]);
      s.run = i + 1;
    }
    tr_module_free(pm);
    tr_diag_clear(&pd);
  }
  if (s.found && strcmp(s.pass, "received") == 0) {
    /* Wrong before the first pass: the module the compiler received
     * (XLA: after jaxlib's HLO -> StableHLO -> HLO trip) already is. */
    snprintf(r->guilty_pass, sizeof r->guilty_pass, "import");
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "the module as the compiler received it already gives the wrong result: the import before "
                "its passes is to blame (translation validation on the target's pass dumps)");
  } else if (s.found) {
    snprintf(r->guilty_pass, sizeof r->guilty_pass, "%s", s.pass);
    r->guilty_run = s.run;
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "pass %s (dump %d of %d) changes the result (translation validation on the target's pass dumps)",
            s.pass, s.run, res.npass_dumps);
  } else if (stop) {
    lv->state = TR_LEVEL_UNRESOLVED;
    tg_note(lv, "the %d pass dumps before %s keep the result; the reference cannot evaluate the module after %s",
            i, stop, stop);
  } else {
    lv->state = TR_LEVEL_NONE;
    snprintf(r->guilty_pass, sizeof r->guilty_pass, "codegen");
    tg_note(lv, "every one of the %d pass dumps keeps the result: code generation (or a runtime library) is wrong",
            res.npass_dumps);
  }
  tr_run_result_free(&res);
  tr_shadow_free(s.ref, s.nref);
  tr_diag_clear(&dd);
  return true;
}

tr_status tg_passes_level(tg_ctx *g, const tr_module *m, tr_module **opt) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->passes;
  double t0 = tg_now_ms();
  *opt = NULL;
  bool ok = tg_validate_passes(g, g->t, m, r->inputs, r->ninputs, g->o, r->guilty_pass,
                               sizeof r->guilty_pass, &r->guilty_run, opt, g->d);
  if (!ok && (g->t->caps & TR_CAP_PASS_DUMPS) && validate_dumps(g, m, lv, opt)) {
    /* done: the target's own dumps */
  } else if (!ok) {
    /* A target that is not trench's own: its optimized module, when it
     * returns one, still feeds the kernel level. */
    tr_module_free(*opt);
    *opt = NULL;
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
  } else if (r->guilty_run == 0) {
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "pass %s leaves an invalid module (the pipeline's verifier, one compile)", r->guilty_pass);
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
