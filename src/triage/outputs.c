/* outputs.c - the outputs level: which outputs fail, on which seeds. One
 * tr_check over the seeds (or the given inputs); the first failing run
 * fixes the finding's signature and the inputs every later level uses. */
#include "triageint.h"

#include <stdio.h>
#include <string.h>

tr_status tg_outputs(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->outputs;
  double t0 = tg_now_ms();
  tr_check_opts co;
  tr_check_opts_init(&co);
  co.label = g->o->label;
  co.seed0 = g->o->seed0;
  co.nseeds = g->o->nseeds > 0 ? g->o->nseeds : 3;
  co.inputs = g->o->inputs;
  co.ninputs = g->o->ninputs;
  co.k = g->o->k;
  co.profile = g->o->profile;
  co.timeout_s = g->o->timeout_s;
  tr_check_report cr;
  tr_status st = tr_check(g->t, m, &co, &cr, g->d);
  tg_check_oom(g, &cr);
  lv->runs += cr.nruns;
  r->total_runs += cr.nruns;
  if (st != TR_OK) {
    lv->state = TR_LEVEL_ERROR;
    tg_note(lv, "the check failed: %s", tr_diag_first(g->d) ? tr_diag_first(g->d) : "trench error");
    tr_check_report_free(&cr);
    lv->ms = tg_now_ms() - t0;
    return st;
  }
  r->nseeds_tried = cr.nruns;
  tr_buf seeds = {0};
  for (int i = 0; i < cr.nruns; i++)
    if (cr.runs[i].finding) {
      r->nseeds_failing++;
      if (!cr.runs[i].given) tr_buf_printf(&seeds, "%s%llu", seeds.n ? "," : "", (unsigned long long)cr.runs[i].seed);
    }
  if (cr.outcome != TR_CHECK_FINDING || cr.first_finding < 0) {
    lv->state = TR_LEVEL_NONE;
    tg_note(lv, "no finding on %d run%s (%s)%s%s", cr.nruns, cr.nruns == 1 ? "" : "s",
            tr_check_outcome_name(cr.outcome), cr.declined ? ": " : "", cr.declined ? cr.declined : "");
    tr_buf_free(&seeds);
    tr_check_report_free(&cr);
    lv->ms = tg_now_ms() - t0;
    return TR_OK;
  }
  r->sig = cr.sig;
  const tr_check_run *run = &cr.runs[cr.first_finding];
  r->seed = run->seed;
  r->given = run->given;
  r->first_output = -1;
  tr_buf outs = {0};
  for (int i = 0; i < run->nouts; i++) {
    const tr_check_output *out = &run->outs[i];
    if (!out->protocol_error && !out->cmp.has_fail) continue;
    tr_buf_printf(&outs, "%s%d", outs.n ? "," : "", i);
    if (r->first_output < 0 && !out->protocol_error) {
      r->first_output = i;
      snprintf(r->first_index, sizeof r->first_index, "%s", out->index);
      r->first_value = out->cmp.first_value;
      r->first_target = out->cmp.first_target;
      r->first_bound = out->cmp.first_bound;
    }
  }
  snprintf(r->failing_outputs, sizeof r->failing_outputs, "%s", tr_buf_str(&outs));
  /* The failing run's inputs: given, or drawn again from its seed. */
  if (run->given) {
    r->ninputs = g->o->ninputs;
    r->inputs = tr_xcalloc((size_t)r->ninputs + 1, sizeof *r->inputs);
    for (int i = 0; i < r->ninputs; i++) r->inputs[i] = tr_tensor_clone(g->o->inputs[i]);
  } else {
    tr_input_config cfg = co.draw;
    cfg.seed = run->seed;
    st = tr_inputs_make(m, &cfg, &r->inputs, &r->ninputs, g->d);
  }
  lv->state = st == TR_OK ? TR_LEVEL_FOUND : TR_LEVEL_ERROR;
  if (run->verdict != TR_VERDICT_OK)
    tg_note(lv, "%s on %d of %d run%s%s%s", cr.sig.kind, r->nseeds_failing, cr.nruns,
            cr.nruns == 1 ? "" : "s", seeds.n ? ", seeds " : "", tr_buf_str(&seeds));
  else
    tg_note(lv, "output%s %s wrong%s%s (%d of %d run%s); first at output %d%s: %.9g, allowed %.9g +- %.3g",
            strchr(tr_buf_str(&outs), ',') ? "s" : "", tr_buf_str(&outs), seeds.n ? " on seeds " : "",
            tr_buf_str(&seeds), r->nseeds_failing, cr.nruns, cr.nruns == 1 ? "" : "s", r->first_output,
            r->first_index, r->first_target, r->first_value, r->first_bound);
  tr_buf_free(&seeds);
  tr_buf_free(&outs);
  tr_check_report_free(&cr);
  lv->ms = tg_now_ms() - t0;
  return st;
}
