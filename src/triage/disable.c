/* disable.c - pass attribution by disabling, then fuel bisection.
 *
 * Disabling: each pass of the target's pass list is disabled in turn and
 * the finding rerun; the passes whose disabling removes it are named.
 * When none does alone, all are disabled together and, when that removes
 * it, the set is narrowed by dropping one pass at a time (delta debugging
 * on a list this short). A disabling that breaks compilation is
 * "unresolved", never "fixed".
 *
 * Fuel (builtin): the compiler stops rewriting after N applications; the
 * smallest N at which the finding appears names the one application that
 * causes it, and the rewrite log names its pass, rule and instruction. */
#include "triageint.h"
#include "../target/builtin.h"
#include "../eval/eval.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The target spec with one more builtin option. */
static char *spec_with(const char *spec, const char *opt) {
  tr_buf b = {0};
  tr_buf_printf(&b, "%s%s%s", spec, strchr(spec, ':') ? "," : ":", opt);
  return b.p;
}

typedef struct {
  tg_ctx *h;
  tr_level *lv;
  const tr_module *m;
  tr_check_report *cr;
  tr_status st;
} spec_job;

static void spec_check(void *p) {
  spec_job *j = p;
  j->st = tg_check(j->h, j->lv, j->m, j->h->r->inputs, j->h->r->ninputs, j->cr);
}

/* 1: the finding is there, 0: it is gone, -1: the target did not
 * compile or run (unresolved). */
static int try_spec(tg_ctx *g, tr_level *lv, const tr_module *m, const char *spec) {
  tr_target *t = NULL;
  tr_diag dd = {0};
  if (tr_target_open(spec, NULL, &t, &dd) != TR_OK) {
    tr_diag_clear(&dd);
    return -1;
  }
  tg_ctx h = *g;
  h.t = t;
  h.oom[0] = 0;
  tr_check_report cr;
  int v = -1;
  /* The check in a frame of its own: out of memory closes this target
   * (an adapter process, a folder) before the level unwinds. */
  spec_job sj = {&h, lv, m, &cr, TR_OK};
  size_t bytes = 0;
  if (!tr_heap_run(spec_check, &sj, &bytes)) {
    tr_target_close(t);
    tr_diag_clear(&dd);
    memcpy(g->oom, h.oom, sizeof g->oom);
    tr_heap_raise(bytes);
  }
  if (sj.st == TR_OK) {
    if (tg_same_kind(&cr, &g->r->sig)) v = 1;
    else if (cr.outcome == TR_CHECK_PASS || cr.outcome == TR_CHECK_WEAK) v = 0;
    else if (cr.outcome == TR_CHECK_FINDING && cr.runs[0].verdict == TR_VERDICT_OK) v = 1; /* another mismatch */
  }
  tr_check_report_free(&cr);
  tr_target_close(t);
  tr_diag_clear(&dd);
  return v;
}

static int try_disabled(tg_ctx *g, tr_level *lv, const tr_module *m, const char *const *names, int n) {
  tr_buf b = {0};
  for (int i = 0; i < n; i++) tr_buf_printf(&b, "%sdisable=%s", i ? "," : "", names[i]);
  char *spec = spec_with(g->t->spec, b.p);
  int v = try_spec(g, lv, m, spec);
  tr_free(spec);
  tr_buf_free(&b);
  return v;
}

static void disable_passes(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->disable;
  const char *const *names = tr_bc_pass_names();
  int n = 0;
  while (names[n]) n++;
  tr_buf fix = {0}, unres = {0};
  for (int i = 0; i < n; i++) {
    int v = try_disabled(g, lv, m, &names[i], 1);
    tg_progress(g, "disable %s: %s", names[i], v == 0 ? "fixed" : v == 1 ? "still wrong" : "unresolved");
    if (v == 0) tr_buf_printf(&fix, "%s%s", fix.n ? "," : "", names[i]);
    if (v < 0) tr_buf_printf(&unres, "%s%s", unres.n ? "," : "", names[i]);
  }
  if (!fix.n && try_disabled(g, lv, m, names, n) == 0) {
    /* Only together: drop passes from the set while it still fixes. */
    const char **set = tr_xcalloc((size_t)n + 1, sizeof *set);
    int ns = n;
    for (int i = 0; i < n; i++) set[i] = names[i];
    for (int i = 0; i < ns;) {
      const char **rest = tr_xcalloc((size_t)ns + 1, sizeof *rest);
      int nr = 0;
      for (int j = 0; j < ns; j++)
        if (j != i) rest[nr++] = set[j];
      if (nr && try_disabled(g, lv, m, rest, nr) == 0) {
        memcpy(set, rest, sizeof *rest * (size_t)nr);
        ns = nr;
      } else {
        i++;
      }
      tr_free(rest);
    }
    for (int i = 0; i < ns; i++) tr_buf_printf(&fix, "%s%s", i ? "+" : "", set[i]);
    tr_free(set);
  }
  snprintf(r->disabled_fix, sizeof r->disabled_fix, "%s", tr_buf_str(&fix));
  if (fix.n) {
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "disabling %s removes the mismatch%s%s", fix.p, unres.n ? "; disabling breaks compilation: " : "",
            tr_buf_str(&unres));
  } else if (unres.n) {
    lv->state = TR_LEVEL_UNRESOLVED;
    tg_note(lv, "no disabling removes it; disabling %s breaks compilation", unres.p);
  } else {
    lv->state = TR_LEVEL_NONE;
    tg_note(lv, "no pass's disabling removes it: the bug is not in a pass (code generation)");
  }
  tr_buf_free(&fix);
  tr_buf_free(&unres);
}

/* Fuel bisection of m; where says on what ("" or " on the culprit's
 * cone"). Returns the try of fuel 0 (0 right, 1 wrong, -1 the target did
 * not run) or 2 when there is no rewrite to bisect. */
static int fuel_on(tg_ctx *g, const tr_module *m, const char *where) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->fuel;
  tr_bc_ctx ctx;
  tr_diag dd = {0};
  if (!tr_builtin_comp_ctx(g->t, &ctx, &dd)) {
    tr_diag_clear(&dd);
    return 2;
  }
  tr_module *x = tr_module_clone(m);
  bool ok = tr_bc_pipeline_run(&ctx, x, &dd) == TR_OK;
  tr_module_free(x);
  /* A pipeline that fails (a pass left an invalid module: a
   * compile-error finding) has logged the rewrites before it stopped;
   * the bisection below runs over those. */
  int64_t total = ctx.nlog;
  if (total == 0) {
    lv->state = TR_LEVEL_NONE;
    tg_note(lv, ok ? "the compiler applies no rewrite to this module%s"
                   : "the pipeline fails on this module%s before any rewrite", where);
    tr_bc_ctx_free(&ctx);
    tr_diag_clear(&dd);
    return 2;
  }
  /* fuel=0 must pass and fuel=total fail; bisect between. */
  int64_t lo = 0, hi = total;
  char opt[64];
  snprintf(opt, sizeof opt, "fuel=0");
  char *spec = spec_with(g->t->spec, opt);
  int v0 = try_spec(g, lv, m, spec);
  tr_free(spec);
  if (v0 != 0) {
    lv->state = v0 == 1 ? TR_LEVEL_NONE : TR_LEVEL_UNRESOLVED;
    tg_note(lv, v0 == 1 ? "wrong even with no rewrite applied (fuel 0)%s: no single rewrite is to blame"
                        : "with fuel 0 the target does not run%s", where);
    tr_bc_ctx_free(&ctx);
    tr_diag_clear(&dd);
    return v0;
  }
  while (hi - lo > 1) {
    int64_t mid = lo + (hi - lo) / 2;
    snprintf(opt, sizeof opt, "fuel=%lld", (long long)mid);
    spec = spec_with(g->t->spec, opt);
    int v = try_spec(g, lv, m, spec);
    tr_free(spec);
    tg_progress(g, "fuel %lld of %lld: %s", (long long)mid, (long long)total, v == 1 ? "wrong" : "right");
    if (v == 1) hi = mid;
    else lo = mid;
  }
  const tr_bc_rewrite *w = &ctx.log[hi - 1];
  r->fuel_n = hi;
  snprintf(r->rule, sizeof r->rule, "%s", w->rule);
  snprintf(r->rule_pass, sizeof r->rule_pass, "%s", w->pass);
  snprintf(r->rule_instr, sizeof r->rule_instr, "%s", w->instr ? w->instr : "");
  lv->state = TR_LEVEL_FOUND;
  tg_note(lv, "rewrite %lld of %lld%s: rule %s of pass %s at %%%s", (long long)hi, (long long)total, where, w->rule,
          w->pass, r->rule_instr);
  tr_bc_ctx_free(&ctx);
  tr_diag_clear(&dd);
  return 0;
}

/* Fuel on the whole module; where fuel 0 does not run (a part of the
 * module only some rewrite makes compilable, e.g. an op builtin supports
 * only once a pass removed or rewrote it), again on the culprit's cone:
 * the culprit as the root, what it does not need dropped, the inputs
 * the same. The rewrite that breaks the culprit is in that cone. */
static void fuel(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  if (fuel_on(g, m, "") != -1 || !r->culprit[0]) return;
  const tr_instr *c = tr_comp_find(m->entry, r->culprit);
  if (!c || c == m->entry->root) return;
  int id = c->id;
  tr_module *x = tg_with_root(m, &id, 1);
  if (!x) return;
  char first[sizeof r->fuel.note];
  snprintf(first, sizeof first, "%s", r->fuel.note);
  int v = fuel_on(g, x, " on the culprit's cone");
  if (v != 0) {
    char second[sizeof r->fuel.note];
    snprintf(second, sizeof second, "%s", r->fuel.note);
    tg_note(&r->fuel, "%s; %s", first, second);
    r->fuel.state = TR_LEVEL_UNRESOLVED;
  }
  tr_module_free(x);
}

/* ---- targets with TR_CAP_DISABLE_PASSES (XLA): run options ---- */

/* The run with these passes disabled, judged against the reference:
 * 1 still wrong, 0 right, -1 the target did not compile or run. */
static int try_run_disabled(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_shadow_out *ref, int nref,
                            const char *const *names, int n) {
  tr_run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.disable_passes = names;
  ro.ndisable_passes = n;
  tr_run_result res;
  tr_diag dd = {0};
  tr_status st = tg_run(g, lv, m, &ro, &res, &dd);
  int v = -1;
  if (st == TR_OK && res.verdict == TR_VERDICT_OK && res.noutputs == nref) {
    tr_compare_opts co;
    tr_compare_opts_default(&co);
    co.k = g->o->k;
    co.profile = g->o->profile;
    v = 0;
    for (int i = 0; i < nref && v == 0; i++) {
      tr_compare_result cr;
      if (tr_compare_output(&ref[i], res.outputs[i], &co, &cr, &dd) != TR_OK) v = -1;
      else if (cr.has_fail) v = 1;
    }
  } else if (st == TR_OK && strcmp(g->r->sig.kind, tr_verdict_name(res.verdict)) == 0) {
    v = 1; /* the same crash or error */
  }
  tr_run_result_free(&res);
  tr_diag_clear(&dd);
  return v;
}

/* Disables, one at a time, each pass that changed the module. */
static void disable_by_run_opts(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  tr_level *lv = &r->disable;
  tr_run_opts ro;
  memset(&ro, 0, sizeof ro);
  ro.want_passes = true;
  tr_run_result res;
  tr_diag dd = {0};
  tr_status st = tg_run(g, lv, m, &ro, &res, &dd);
  tr_shadow_out *ref = NULL;
  int nref = 0;
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  if (st != TR_OK || res.npasses_changed == 0 ||
      tr_eval_shadow(m, &so, r->inputs, r->ninputs, &ref, &nref, &dd) != TR_OK) {
    lv->state = TR_LEVEL_UNRESOLVED;
    tg_note(lv, "the target names no pass that changed the module%s%s", tr_diag_first(&dd) ? ": " : "",
            tr_diag_first(&dd) ? tr_diag_first(&dd) : "");
    tr_run_result_free(&res);
    tr_diag_clear(&dd);
    return;
  }
  tr_buf fix = {0}, unres = {0};
  for (int i = 0; i < res.npasses_changed; i++) {
    const char *name = res.passes_changed[i];
    int v = try_run_disabled(g, lv, m, ref, nref, &name, 1);
    tg_progress(g, "disable %s: %s", name, v == 0 ? "fixed" : v == 1 ? "still wrong" : "unresolved");
    if (v == 0) tr_buf_printf(&fix, "%s%s", fix.n ? "," : "", name);
    if (v < 0) tr_buf_printf(&unres, "%s%s", unres.n ? "," : "", name);
  }
  snprintf(r->disabled_fix, sizeof r->disabled_fix, "%s", tr_buf_str(&fix));
  /* Without translation validation, one pass whose disabling alone
   * removes the bug is the guilty pass. */
  if (fix.n && !strchr(fix.p, ',') && !r->guilty_pass[0]) snprintf(r->guilty_pass, sizeof r->guilty_pass, "%s", fix.p);
  if (fix.n) {
    lv->state = TR_LEVEL_FOUND;
    tg_note(lv, "of the %d passes that changed the module, disabling %s removes the mismatch%s%s",
            res.npasses_changed, fix.p, unres.n ? "; disabling breaks compilation or the run: " : "",
            tr_buf_str(&unres));
  } else {
    lv->state = unres.n ? TR_LEVEL_UNRESOLVED : TR_LEVEL_NONE;
    tg_note(lv, "disabling none of the %d passes that changed the module removes it%s%s", res.npasses_changed,
            unres.n ? "; disabling breaks compilation or the run: " : " (code generation or a pass that must run)",
            tr_buf_str(&unres));
  }
  tr_buf_free(&fix);
  tr_buf_free(&unres);
  tr_shadow_free(ref, nref);
  tr_run_result_free(&res);
  tr_diag_clear(&dd);
}

tr_status tg_disable_level(tg_ctx *g, const tr_module *m) {
  tr_triage_report *r = g->r;
  double t0 = tg_now_ms();
  tr_bc_ctx probe;
  tr_diag dd = {0};
  bool builtin = tr_builtin_comp_ctx(g->t, &probe, &dd);
  if (builtin) tr_bc_ctx_free(&probe);
  tr_diag_clear(&dd);
  if (!builtin) {
    r->fuel.state = TR_LEVEL_SKIPPED;
    tg_note(&r->fuel, "fuel exists in builtin only");
    if ((g->t->caps & TR_CAP_DISABLE_PASSES) && (g->t->caps & TR_CAP_LIST_PASSES)) {
      disable_by_run_opts(g, m);
    } else {
      r->disable.state = TR_LEVEL_SKIPPED;
      tg_note(&r->disable, "the target cannot disable passes");
    }
    r->disable.ms = tg_now_ms() - t0;
    return TR_OK;
  }
  disable_passes(g, m);
  r->disable.ms = tg_now_ms() - t0;
  double t1 = tg_now_ms();
  fuel(g, m);
  r->fuel.ms = tg_now_ms() - t1;
  return TR_OK;
}
