/* check.c - tr_check: the checking loop (check.h). Per seed: draw inputs,
 * evaluate the reference in shadow mode, run the target, judge every
 * output in two passes (what the profile can tell from the reference
 * alone first, its other references only where something failed), then
 * optionally every instruction alone. The report is structured (runs,
 * outputs, signature) and mirrored as JSON; text is rendered on request.
 * Bundles are written into a hidden sibling folder and renamed into place
 * with a COMPLETE marker, so a killed run never leaves a bundle that looks
 * complete and is not. */
#include "check.h"

#include "../eval/shadow.h"
#include "alts.h"
#include "anchor.h"
#include "received.h"

#include <errno.h>
#include <ftw.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

const char *tr_check_outcome_name(tr_check_outcome o) {
  static const char *const names[] = {"pass", "weak", "unsupported", "declined", "finding", "error"};
  return (unsigned)o < sizeof names / sizeof names[0] ? names[o] : "?";
}

void tr_check_opts_init(tr_check_opts *o) {
  memset(o, 0, sizeof *o);
  o->label = "module";
  o->nseeds = 3;
  o->k = 1;
  tr_input_config_init(&o->draw);
}

void tr_check_report_free(tr_check_report *r) {
  for (int i = 0; i < r->nruns; i++) {
    tr_free(r->runs[i].message);
    tr_free(r->runs[i].outs);
    tr_free(r->runs[i].pi_text);
  }
  tr_free(r->runs);
  tr_free(r->declined);
  tr_free(r->bundle);
  tr_free(r->received_text);
  cJSON_Delete(r->json);
  memset(r, 0, sizeof *r);
  r->first_finding = -1;
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static bool is_finding(tr_verdict v) {
  return v != TR_VERDICT_OK && v != TR_VERDICT_UNSUPPORTED;
}

/* The first instruction of m, in any computation, of an op that XLA's
 * compilers make in their own pipeline and refuse as input (ops.def flag
 * P: bitcast, fusion); NULL when none. */
static const tr_instr *pipeline_op(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (tr_ops[m->comps[c]->instrs[i]->op].flags & TR_OPF_P) return m->comps[c]->instrs[i];
  return NULL;
}

/* A compiler outside trench that refuses to compile a module holding such
 * a form keeps its input contract (XLA: "Unexpected bitcast operation" in
 * layout assignment; kInput fusions exist only on GPU): unsupported, with
 * the form named, not a finding. trench's own compiler takes these forms,
 * so its compile errors stay findings, and so do crashes and wrong values
 * everywhere. */
static void pipeline_form(const tr_target *t, const tr_module *m, tr_run_result *res) {
  if (res->verdict != TR_VERDICT_COMPILE_ERROR || strcmp(t->ops->kind, "cmd") != 0) return;
  const tr_instr *in = pipeline_op(m);
  if (!in) return;
  tr_buf b = {0};
  tr_buf_printf(&b, "the module holds %%%s, a %s, which compilers make in their own pipeline and do not take as "
                "input; the target refused to compile it: %s", in->name, tr_ops[in->op].name,
                res->message ? res->message : "(no message)");
  tr_free(res->message);
  res->message = tr_xstrdup(tr_buf_str(&b));
  tr_buf_free(&b);
  res->verdict = TR_VERDICT_UNSUPPORTED;
}

/* Row-major index of flat element i, as "[i,j,k]". */
static void index_text(char *out, size_t n, const tr_shadow_out *o, size_t i) {
  int64_t idx[TR_TENSOR_MAX_RANK + 1];
  for (int k = o->rank - 1; k >= 0; k--) {
    int64_t dk = o->dims[k] ? o->dims[k] : 1;
    idx[k] = (int64_t)(i % (size_t)dk);
    i /= (size_t)dk;
  }
  size_t at = 0;
  at += (size_t)snprintf(out + at, n - at, "[");
  for (int k = 0; k < o->rank && at < n; k++)
    at += (size_t)snprintf(out + at, n - at, k ? ",%lld" : "%lld", (long long)idx[k]);
  if (at < n) snprintf(out + at, n - at, "]");
}

/* ---- the profile's other references, computed only when needed ---- */

typedef struct {
  const tr_profile *p;   /* NULL: strict */
  const tr_module *m;
  tr_tensor **ins;
  int nins;
  bool done;             /* alternatives computed (or found unneeded) */
  tr_profile_alts a;
} prof_ctx;

static void prof_compute(prof_ctx *pc) {
  if (pc->done || !pc->p) return;
  pc->done = true;
  tr_profile_alts_compute(pc->p, pc->m, pc->ins, pc->nins, NULL, &pc->a);
}

/* Compare options for output leaf i under pc. */
static void prof_opts(const prof_ctx *pc, int i, tr_compare_opts *co) {
  co->profile = pc->p;
  tr_profile_alts_use(&pc->a, i, co);
  /* flush-results is the widest rule: offered only once the narrower
   * ones have their references (the second comparison). */
  bool fr = pc->p && pc->done && pc->p->on[TR_PR_FLUSH_RESULTS];
  for (int dt = 0; dt < TR_DT_COUNT; dt++)
    co->result_flush[dt] = fr && tr_profile_flushes_results(pc->p, pc->m, (tr_dtype)dt);
}

/* ---- judging one run ---- */

/* Judges a run's outputs into run->outs and JSON js. */
static void judge_run(tr_check_run *run, const tr_shadow_out *ref, int nref, const tr_run_result *res,
                      double k, prof_ctx *pc, cJSON *js) {
  cJSON_AddStringToObject(js, "verdict", tr_verdict_name(res->verdict));
  /* An ok reply's message says how the target ran the module (torch: its
   * realisation), so the report and a bundle's report.json keep it. */
  if (res->verdict == TR_VERDICT_OK && res->message) cJSON_AddStringToObject(js, "message", res->message);
  if (res->verdict != TR_VERDICT_OK) {
    if (res->message) cJSON_AddStringToObject(js, "message", res->message);
    if (res->stderr_tail) cJSON_AddStringToObject(js, "stderr", res->stderr_tail);
    run->finding = is_finding(res->verdict);
    return;
  }
  if (res->noutputs != nref) {
    cJSON_ReplaceItemInObject(js, "verdict", cJSON_CreateString("protocol-error"));
    run->verdict = TR_VERDICT_PROTOCOL_ERROR;
    char msg[96];
    snprintf(msg, sizeof msg, "%d outputs, expected %d", res->noutputs, nref);
    tr_free(run->message);
    run->message = tr_xstrdup(msg);
    cJSON_AddStringToObject(js, "message", msg);
    run->finding = true;
    return;
  }
  cJSON *arr = cJSON_AddArrayToObject(js, "outputs");
  tr_compare_opts co;
  tr_compare_opts_default(&co);
  co.k = k;
  run->outs = tr_xcalloc((size_t)nref + 1, sizeof *run->outs);
  run->nouts = nref;
  tr_status *st = tr_xcalloc((size_t)nref + 1, sizeof *st);
  tr_diag *ds = tr_xcalloc((size_t)nref + 1, sizeof *ds);
  bool again = false;
  for (int i = 0; i < nref; i++) {
    prof_opts(pc, i, &co);
    st[i] = tr_compare_output(&ref[i], res->outputs[i], &co, &run->outs[i].cmp, &ds[i]);
    if (st[i] == TR_OK && run->outs[i].cmp.failing && pc->p && !pc->done) again = true;
  }
  if (again) {
    prof_compute(pc);
    for (int i = 0; i < nref; i++) {
      if (st[i] != TR_OK || !run->outs[i].cmp.failing) continue;
      tr_diag_clear(&ds[i]);
      prof_opts(pc, i, &co);
      st[i] = tr_compare_output(&ref[i], res->outputs[i], &co, &run->outs[i].cmp, &ds[i]);
    }
  }
  for (int i = 0; i < nref; i++) {
    tr_check_output *out = &run->outs[i];
    const tr_compare_result *r = &out->cmp;
    out->dtype = ref[i].dtype;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    if (st[i] != TR_OK) {
      out->protocol_error = true;
      cJSON_AddStringToObject(o, "judgement", "protocol-error");
      cJSON_AddStringToObject(o, "message", tr_diag_first(&ds[i]));
      tr_diag_clear(&ds[i]);
      run->finding = true;
      continue;
    }
    cJSON_AddStringToObject(o, "judgement", tr_judgement_name(r->judgement));
    cJSON_AddNumberToObject(o, "elements", (double)r->n);
    cJSON_AddNumberToObject(o, "checked", (double)r->checked);
    cJSON_AddNumberToObject(o, "uncertain", (double)r->uncertain);
    cJSON_AddNumberToObject(o, "failing", (double)r->failing);
    if (isfinite(r->worst_ratio)) cJSON_AddNumberToObject(o, "worst_ratio", r->worst_ratio);
    else cJSON_AddStringToObject(o, "worst_ratio", "inf");
    if (r->weak_reason) cJSON_AddStringToObject(o, "weak_reason", r->weak_reason);
    if (r->judgement == TR_JUDGE_WEAK) run->weak = true;
    if (r->excused) {
      cJSON *ex = cJSON_AddObjectToObject(o, "excused");
      for (int q = 0; q < TR_PR_COUNT; q++)
        if (r->excused_by[q]) cJSON_AddNumberToObject(ex, tr_prule_name((tr_prule)q), (double)r->excused_by[q]);
      if (r->excused_tables) cJSON_AddNumberToObject(ex, tr_compare_tables_name(), (double)r->excused_tables);
    }
    if (r->has_fail) {
      index_text(out->index, sizeof out->index, &ref[i], r->first_fail);
      cJSON_AddStringToObject(o, "first_index", out->index);
      cJSON_AddNumberToObject(o, "first_reference", r->first_value);
      cJSON_AddNumberToObject(o, "first_target", r->first_target);
      cJSON_AddNumberToObject(o, "first_allowed", r->first_bound);
      /* A denormal reference is the usual reason a flushing target
       * differs there (--strict, or a dtype its profile omits). */
      out->first_denormal = tr_dtype_is_float(ref[i].dtype) && r->first_value != 0 &&
                            fabs(r->first_value) < tr_min_normal(ref[i].dtype);
      if (out->first_denormal) cJSON_AddBoolToObject(o, "first_reference_denormal", true);
      run->finding = true;
    }
  }
  tr_free(st);
  tr_free(ds);
}

/* --per-instruction for one run (anchor.h): the anchored module on the
 * target, each instruction judged alone. Returns false on trench's own
 * trouble (diagnostic in d). */
static bool per_instr_run(tr_target *t, const tr_check_opts *o, tr_anchored *an, tr_check_run *run,
                          tr_tensor **ins, int nins, cJSON *js, const char *label, const char *pidir,
                          bool *saved, tr_diag *d) {
  tr_run_opts ro = {0};
  ro.timeout_s = o->timeout_s;
  tr_run_result res;
  tr_run_result_init(&res);
  tr_buf text = {0};
  bool ok = true;
  if (tr_anchor_run(an, t, ins, nins, &ro, &res, d) != TR_OK) {
    ok = false;
  } else if (res.verdict != TR_VERDICT_OK) {
    cJSON *pj = cJSON_AddObjectToObject(js, "per_instruction");
    cJSON_AddStringToObject(pj, "verdict", tr_verdict_name(res.verdict));
    if (res.message) cJSON_AddStringToObject(pj, "message", res.message);
    if (res.stderr_tail) cJSON_AddStringToObject(pj, "stderr", res.stderr_tail);
    tr_buf_printf(&text, "%s per-instruction: %s%s%s\n", label, tr_verdict_name(res.verdict),
                  res.message ? ": " : "", res.message ? res.message : "");
    if (is_finding(res.verdict)) run->finding = true;
  } else {
    tr_anchor_opts ao;
    tr_anchor_opts_default(&ao);
    ao.k = o->k;
    ao.profile = o->profile;
    tr_anchor_summary sum;
    if (tr_anchor_judge(an, ins, nins, res.outputs, res.noutputs, &ao, &sum, d) != TR_OK) {
      /* The target's outputs do not fit the module: its fault. */
      tr_buf_printf(&text, "%s per-instruction: protocol-error: %s\n", label, tr_diag_first(d));
      tr_diag_clear(d);
      run->finding = true;
    } else {
      tr_anchor_summary_json(js, an, &sum);
      tr_anchor_summary_text(&text, label, an, &sum);
      if (sum.mismatch) run->finding = true;
      /* The first mismatching instruction alone, inside the bundle. */
      if (pidir && sum.first_bad >= 0 && !*saved) {
        if (tr_anchor_save(pidir, an, sum.first_bad, ins, nins, res.outputs, res.noutputs, t->spec, d) != TR_OK)
          ok = false;
        *saved = true;
      }
    }
    tr_anchor_summary_free(&sum);
  }
  if (text.n) run->pi_text = tr_xstrdup(tr_buf_str(&text));
  tr_buf_free(&text);
  tr_run_result_free(&res);
  return ok;
}

/* ---- bundles ---- */

static bool write_text(const char *path, const char *text, tr_diag *d) {
  FILE *f = fopen(path, "w");
  if (!f) {
    tr_diag_errorf(d, "cannot write %s: %s", path, strerror(errno));
    return false;
  }
  bool ok = fputs(text, f) >= 0;
  ok = fflush(f) == 0 && ok;
  ok = fsync(fileno(f)) == 0 && ok;
  ok = fclose(f) == 0 && ok;
  if (!ok) tr_diag_errorf(d, "cannot write %s: %s", path, strerror(errno));
  return ok;
}

static bool save_npy(const char *dir, const char *stem, int i, const tr_tensor *t, tr_diag *d) {
  char path[4200];
  snprintf(path, sizeof path, "%s/%s%d.npy", dir, stem, i);
  return tr_npy_write(path, t, d) == TR_OK;
}

/* Removes a folder tree that trench wrote (plain files and folders). */
static int remove_one(const char *path, const struct stat *st, int flag, struct FTW *f) {
  (void)st, (void)flag, (void)f;
  remove(path);
  return 0;
}

static void remove_tree(const char *dir) {
  nftw(dir, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

/* The hidden work folder beside dest where a bundle is assembled. */
static void work_dir(char *out, size_t n, const char *dest) {
  const char *sl = strrchr(dest, '/');
  if (sl) snprintf(out, n, "%.*s/.%s.partial-%ld", (int)(sl - dest), dest, sl + 1, (long)getpid());
  else snprintf(out, n, ".%s.partial-%ld", dest, (long)getpid());
}

/* Whether dest can take a new bundle: it must not exist (or be an empty
 * folder) and its parent must be writable. Checked before the target runs. */
static bool dest_ok(const char *dest, tr_diag *d) {
  struct stat st;
  if (stat(dest, &st) == 0) {
    bool empty = false;
    if (S_ISDIR(st.st_mode)) empty = rmdir(dest) == 0; /* only an empty one goes */
    if (!empty) {
      tr_diag_errorf(d, "%s exists: a bundle is never written over another; remove it or choose another name",
                     dest);
      return false;
    }
  }
  char parent[4200];
  const char *sl = strrchr(dest, '/');
  if (sl) snprintf(parent, sizeof parent, "%.*s", (int)(sl - dest) ? (int)(sl - dest) : 1, dest);
  else snprintf(parent, sizeof parent, ".");
  if (access(parent, W_OK) != 0) {
    tr_diag_errorf(d, "cannot write a bundle into %s: %s", parent, strerror(errno));
    return false;
  }
  return true;
}

static const char bundle_readme[] =
    "\n\nFiles: module.hlo (canonical text), inN.npy (inputs), refN.npy (the\n"
    "reference in exact mode, each op rounded to its dtype: what `trench run\n"
    "module.hlo --input ...` gives; the check itself judges against the\n"
    "shadow values and bounds, summarised in report.json), shadowN.npy (the\n"
    "shadow values rounded once to the output dtype: the centre of those\n"
    "bounds), targetN.npy (the target's outputs, when it ran), optimized.hlo\n"
    "(what the target ran, when it says), report.json, COMPLETE (written\n"
    "last: a folder without it is not a bundle).\n";

/* Writes the bundle of one run into work (an existing folder). */
static bool write_bundle(const char *work, tr_target *t, const tr_check_opts *o, const tr_module *m,
                         tr_tensor **ins, int nins, const tr_shadow_out *ref, int nref,
                         const tr_run_result *res, cJSON *run_js, tr_diag *d) {
  tr_buf b = {0}, path = {0};
  tr_print_module(&b, m);
  tr_buf_printf(&path, "%s/module.hlo", work);
  bool ok = write_text(path.p, tr_buf_str(&b), d);
  if (ok && o->module_text) { /* the module as given; module.hlo is its conversion */
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/module.mlir", work);
    ok = write_text(path.p, o->module_text, d);
  }
  for (int i = 0; ok && i < nins; i++) ok = save_npy(work, "in", i, ins[i], d);
  /* refN.npy: the reference in exact mode (what `trench run` gives on
   * these inputs), not the shadow values (computed wider, rounded once). */
  tr_eval_opts eo = {0};
  eo.verified = true;
  eo.max_while_trips = o->max_trips;
  eo.deadline_s = o->ref_timeout_s;
  tr_tensor **exact = NULL;
  int nexact = 0;
  tr_diag ed = {0};
  bool have_exact = tr_eval_opt(m, &eo, ins, nins, &exact, &nexact, &ed) == TR_OK && nexact == nref;
  for (int i = 0; ok && have_exact && i < nexact; i++) ok = save_npy(work, "ref", i, exact[i], d);
  for (int i = 0; ok && i < nref; i++) ok = save_npy(work, "shadow", i, ref[i].exact, d);
  tr_eval_free_outputs(exact, nexact);
  tr_diag_clear(&ed);
  for (int i = 0; ok && res && i < res->noutputs; i++) ok = save_npy(work, "target", i, res->outputs[i], d);
  if (ok && res && res->optimized_hlo) {
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/optimized.hlo", work);
    ok = write_text(path.p, res->optimized_hlo, d);
  }
  if (ok) {
    char *js = tr_json_print(run_js, true);
    if (!js) tr_heap_raise(0); /* in the check's frame: it unwinds */
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/report.json", work);
    ok = write_text(path.p, js, d);
    tr_free(js);
  }
  if (ok) {
    tr_buf rd = {0};
    const char *dir = o->save_dir; /* the name it will have */
    tr_buf_printf(&rd, "# trench check bundle\n\nModule %s on target `%s` (%s %s).\n\nReproduce:\n\n"
                       "    trench check %s/module.%s --target '%s'",
                  o->label, t->spec, t->name ? t->name : "", t->version ? t->version : "", dir,
                  o->module_text ? "mlir" : "hlo", t->spec);
    if (!o->profile) tr_buf_puts(&rd, " --strict");
    else if (o->profile_path) tr_buf_printf(&rd, " --profile '%s'", o->profile_path);
    for (int i = 0; i < nins; i++) tr_buf_printf(&rd, " --input %s/in%d.npy", dir, i);
    if (o->module_text)
      tr_buf_puts(&rd, "\n\nmodule.mlir is the StableHLO module as given (the target compiled it\n"
                       "unchanged); module.hlo is the target's own conversion of it to HLO,\n"
                       "which the reference evaluated.");
    if (!have_exact) tr_buf_puts(&rd, "\n\nNo refN.npy: the exact evaluation failed.");
    tr_buf_puts(&rd, bundle_readme);
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/README.md", work);
    ok = write_text(path.p, tr_buf_str(&rd), d);
    tr_buf_free(&rd);
  }
  tr_buf_free(&b);
  tr_buf_free(&path);
  return ok;
}

/* Marks work complete and renames it to dest. */
static bool seal_bundle(const char *work, const char *dest, tr_diag *d) {
  tr_buf path = {0};
  tr_buf_printf(&path, "%s/COMPLETE", work);
  bool ok = write_text(tr_buf_str(&path), "trench bundle\n", d);
  tr_buf_free(&path);
  if (!ok) return false;
  if (rename(work, dest) != 0) {
    tr_diag_errorf(d, "cannot move the bundle into %s: %s", dest, strerror(errno));
    return false;
  }
  return true;
}

/* ---- the loop ---- */

/* The first wrong output leaf's op, dtype and value kind. */
static void make_sig(tr_check_report *r, const tr_module *m) {
  tr_check_sig *s = &r->sig;
  s->op = TR_OP_COUNT;
  s->dtype = TR_DT_COUNT;
  s->output = -1;
  if (r->first_finding < 0) return;
  const tr_check_run *run = &r->runs[r->first_finding];
  if (run->verdict != TR_VERDICT_OK) {
    snprintf(s->kind, sizeof s->kind, "%s", tr_verdict_name(run->verdict));
    return;
  }
  for (int i = 0; i < run->nouts; i++) {
    const tr_check_output *out = &run->outs[i];
    if (!out->protocol_error && !out->cmp.has_fail) continue;
    snprintf(s->kind, sizeof s->kind, "%s", out->protocol_error ? "protocol-error" : "mismatch");
    s->output = i;
    s->dtype = out->dtype;
    const tr_instr *root = m->entry ? m->entry->root : NULL;
    if (root && root->op == TR_OP_TUPLE && i < root->noperands) root = root->operands[i];
    if (root) s->op = root->op;
    double v = out->cmp.first_target;
    snprintf(s->value_kind, sizeof s->value_kind, "%s",
             out->protocol_error ? "" : isnan(v) ? "nan" : isinf(v) ? "inf" : v == 0 ? "zero" : "finite");
    return;
  }
  snprintf(s->kind, sizeof s->kind, "per-instruction-mismatch");
}

#define CHECK_WORK_MAX 4400 /* the bundle's temporary folder's path */

static tr_status fail(tr_check_report *r, tr_status st) {
  r->outcome = TR_CHECK_ERROR;
  return st;
}

static void report_head(tr_target *t, const tr_check_opts *o, tr_check_report *r) {
  r->json = cJSON_CreateObject();
  cJSON_AddStringToObject(r->json, "module", o->label);
  cJSON_AddStringToObject(r->json, "target", t->spec ? t->spec : "");
  cJSON_AddStringToObject(r->json, "target_name", t->name ? t->name : "");
  cJSON_AddStringToObject(r->json, "target_version", t->version ? t->version : "");
  if (o->profile) cJSON_AddStringToObject(r->json, "profile", o->profile_path ? o->profile_path : "");
  else cJSON_AddNullToObject(r->json, "profile");
}

static tr_status check_body(tr_target *t, const tr_module *m, const tr_check_opts *o,
                            tr_check_report *r, char *work, tr_diag *d) {
  report_head(t, o, r);
  if (o->save_dir && !dest_ok(o->save_dir, d)) return fail(r, TR_ERR_IO);
  /* A narrowing profile rule (dot-accumulate) changes the reference: the
   * shadow evaluation runs on the module as the target computes it. */
  int ndots = 0;
  tr_module *nm = tr_profile_narrowed(o->profile, m, &ndots);
  const tr_module *refm = nm ? nm : m;
  if (nm) {
    r->narrowed = ndots;
    cJSON *nr = cJSON_AddObjectToObject(r->json, "narrowed");
    cJSON_AddNumberToObject(nr, tr_prule_name(TR_PR_DOT_ACCUMULATE), ndots);
  }
  tr_anchored anch;
  memset(&anch, 0, sizeof anch);
  tr_status st = TR_OK;
  if (o->per_instruction && (st = tr_anchor_module(m, o->per_instruction == 2, &anch, d)) != TR_OK) {
    tr_module_free(nm);
    return fail(r, st);
  }
  bool saved = false, saved_instr = false, made_work = false;
  int nruns = o->inputs ? 1 : (o->nseeds > 0 ? o->nseeds : 1);
  r->runs = tr_xcalloc((size_t)nruns + 1, sizeof *r->runs);
  cJSON *runs_js = cJSON_AddArrayToObject(r->json, "runs");
  int nfind = 0, nweak = 0, nunsupported = 0;
  for (int s = 0; s < nruns && st == TR_OK; s++) {
    tr_check_run *run = &r->runs[s];
    run->seed = o->seed0 + (uint64_t)s;
    run->given = o->inputs != NULL;
    tr_tensor **ins = NULL;
    int nins = 0;
    if (o->inputs) {
      ins = (tr_tensor **)o->inputs;
      nins = o->ninputs;
    } else {
      tr_input_config cfg = o->draw;
      cfg.seed = run->seed;
      if ((st = tr_inputs_make(m, &cfg, &ins, &nins, d)) != TR_OK) break;
    }
    char label[64];
    if (run->given) snprintf(label, sizeof label, "inputs");
    else snprintf(label, sizeof label, "seed %llu", (unsigned long long)run->seed);
    tr_shadow_opts so = {0};
    so.eval.max_while_trips = o->max_trips;
    so.eval.deadline_s = o->ref_timeout_s;
    /* Under a profile the reference's ulp table is capped by the target's
     * stated accuracy contract (a default wider than it excuses nothing). */
    tr_ulp_table *capped = o->profile ? tr_xmalloc(sizeof *capped) : NULL;
    if (capped) tr_profile_ulp_table(o->profile, 0, capped);
    so.ulps = capped;
    tr_shadow_out *ref = NULL;
    int nref = 0;
    double t0 = now_ms();
    tr_diag rd = {0};
    tr_status est = tr_eval_shadow(refm, &so, ins, nins, &ref, &nref, &rd);
    tr_free(capped);
    if (est != TR_OK) {
      /* The reference declines: no verdict for this module. */
      tr_buf msg = {0};
      for (int i = 0; i < rd.nmsgs; i++) tr_buf_printf(&msg, "%s%s", i ? "\n" : "", rd.msgs[i]);
      r->declined = tr_xstrdup(tr_buf_str(&msg));
      tr_buf_free(&msg);
      tr_diag_clear(&rd);
      if (!o->inputs) tr_inputs_free(ins, nins);
      break;
    }
    tr_diag_clear(&rd); /* notes of a reference that succeeded */
    run->ref_ms = now_ms() - t0;
    r->nruns = s + 1;
    tr_run_opts ro = {0};
    /* With bundles for findings only, the optimized module is fetched
     * by a second run when there is one (below): printing it on every
     * run was a fuzz campaign's largest cost after the reference. */
    ro.want_optimized_hlo = o->save_dir != NULL && !o->save_findings_only;
    ro.timeout_s = o->timeout_s;
    ro.module_text = o->module_text;
    /* The first run asks what the target received (compiling is cached,
     * so later seeds run the same executable). */
    ro.want_received_hlo = s == 0 && (t->caps & TR_CAP_RECEIVED_HLO);
    ro.same_module = s > 0;
    tr_run_result res;
    tr_run_result_init(&res);
    t0 = now_ms();
    if ((st = tr_target_run(t, m, ins, nins, &ro, &res, d)) != TR_OK) {
      tr_shadow_free(ref, nref);
      if (!o->inputs) tr_inputs_free(ins, nins);
      break;
    }
    run->target_ms = now_ms() - t0;
    if (res.received_hlo) {
      tr_received rcv;
      tr_received_compare(m, res.received_hlo, &rcv);
      tr_received_json(r->json, &rcv);
      r->received_checked = rcv.checked;
      r->received_changed = rcv.checked && !rcv.same && !rcv.equivalent;
      r->received_equivalent = rcv.checked && !rcv.same && rcv.equivalent;
      tr_buf rb = {0};
      tr_received_line(&rb, &rcv, o->show_received);
      r->received_text = tr_xstrdup(tr_buf_str(&rb));
      tr_buf_free(&rb);
      tr_received_free(&rcv);
    }
    pipeline_form(t, m, &res);
    run->verdict = res.verdict;
    if (res.message) run->message = tr_xstrdup(res.message);
    cJSON *js = cJSON_CreateObject();
    cJSON_AddItemToArray(runs_js, js);
    if (!run->given) cJSON_AddNumberToObject(js, "seed", (double)run->seed);
    prof_ctx pc = {.p = o->profile, .m = refm, .ins = ins, .nins = nins};
    judge_run(run, ref, nref, &res, o->k, &pc, js);
    tr_profile_alts_free(&pc.a);
    bool want_save = o->save_dir && !saved && (run->finding || (!o->save_findings_only && s == nruns - 1));
    if (o->save_dir && !made_work && (want_save || anch.nparts)) {
      work_dir(work, CHECK_WORK_MAX, o->save_dir);
      if (mkdir(work, 0777) != 0) {
        tr_diag_errorf(d, "cannot create %s: %s", work, strerror(errno));
        st = TR_ERR_IO;
      }
      made_work = st == TR_OK;
    }
    if (st == TR_OK && anch.nparts) {
      tr_buf pidir = {0};
      tr_buf_printf(&pidir, "%s/instruction", work);
      if (!per_instr_run(t, o, &anch, run, ins, nins, js, label, made_work ? tr_buf_str(&pidir) : NULL,
                         &saved_instr, d))
        st = TR_ERR_IO;
      tr_buf_free(&pidir);
      want_save = o->save_dir && !saved && (run->finding || (!o->save_findings_only && s == nruns - 1));
    }
    if (run->finding) {
      nfind++;
      if (r->first_finding < 0) r->first_finding = s;
    }
    if (run->weak) nweak++;
    if (res.verdict == TR_VERDICT_UNSUPPORTED) nunsupported++;
    if (st == TR_OK && want_save && !res.optimized_hlo && (t->caps & TR_CAP_OPTIMIZED_HLO) &&
        res.verdict != TR_VERDICT_HANG) {
      /* The same module on the same inputs again, for its optimized form
       * only: this run's verdict and outputs stay the ones judged. Not
       * after a hang, which would wait out the timeout a second time. */
      tr_run_opts ro2 = ro;
      ro2.want_optimized_hlo = true;
      ro2.want_received_hlo = false;
      tr_run_result res2;
      tr_run_result_init(&res2);
      tr_diag d2 = {0};
      if (tr_target_run(t, m, ins, nins, &ro2, &res2, &d2) == TR_OK && res2.optimized_hlo) {
        res.optimized_hlo = res2.optimized_hlo;
        res2.optimized_hlo = NULL;
      }
      tr_run_result_free(&res2);
      tr_diag_clear(&d2);
    }
    if (st == TR_OK && want_save) {
      if (!write_bundle(work, t, o, m, ins, nins, ref, nref, &res, js, d)) st = TR_ERR_IO;
      saved = true;
    }
    tr_run_result_free(&res);
    tr_shadow_free(ref, nref);
    if (!o->inputs) tr_inputs_free(ins, nins);
    if (o->on_run) o->on_run(o->user, r, s);
    if (run->finding && o->stop_at_finding) break;
  }
  if (made_work) {
    if (st == TR_OK && (saved || saved_instr) && seal_bundle(work, o->save_dir, d)) {
      r->bundle = tr_xstrdup(o->save_dir);
    } else {
      if (st == TR_OK && (saved || saved_instr)) st = TR_ERR_IO;
      remove_tree(work); /* never a partial bundle under the real name */
    }
  }
  make_sig(r, m);
  r->outcome = st != TR_OK       ? TR_CHECK_ERROR
               : nfind           ? TR_CHECK_FINDING
               : r->declined     ? TR_CHECK_DECLINED
               : nunsupported    ? TR_CHECK_UNSUPPORTED
               : nweak           ? TR_CHECK_WEAK
                                 : TR_CHECK_PASS;
  cJSON_AddStringToObject(r->json, "summary", tr_check_outcome_name(r->outcome));
  if (r->declined) cJSON_AddStringToObject(r->json, "declined", r->declined);
  if (r->bundle) cJSON_AddStringToObject(r->json, "bundle", r->bundle);
  if (r->first_finding >= 0) {
    cJSON *sj = cJSON_AddObjectToObject(r->json, "signature");
    cJSON_AddStringToObject(sj, "kind", r->sig.kind);
    if (r->sig.op != TR_OP_COUNT) cJSON_AddStringToObject(sj, "op", tr_ops[r->sig.op].name);
    if (r->sig.dtype != TR_DT_COUNT) cJSON_AddStringToObject(sj, "dtype", tr_dtype_name(r->sig.dtype));
    if (r->sig.output >= 0) cJSON_AddNumberToObject(sj, "output", r->sig.output);
    if (r->sig.value_kind[0]) cJSON_AddStringToObject(sj, "value", r->sig.value_kind);
  }
  tr_anchored_free(&anch);
  tr_module_free(nm);
  return st;
}

/* The check of one module runs in a heap frame: running out of memory
 * anywhere in it (inputs, the reference, a target's reply, the comparison,
 * a bundle) frees what it made and declines the module (not a finding, not
 * an error of the target), and a campaign goes on with the next. */
typedef struct {
  tr_target *t;
  const tr_module *m;
  const tr_check_opts *o;
  tr_check_report *r;
  tr_diag *d;
  char work[CHECK_WORK_MAX]; /* the bundle being written, "" when none */
  tr_status st;
} check_job;

static void check_job_fn(void *p) {
  check_job *j = p;
  j->st = check_body(j->t, j->m, j->o, j->r, j->work, j->d);
}

tr_status tr_check(tr_target *t, const tr_module *m, const tr_check_opts *o, tr_check_report *r,
                   tr_diag *d) {
  memset(r, 0, sizeof *r);
  r->first_finding = -1;
  check_job j = {t, m, o, r, d, "", TR_OK};
  size_t bytes = 0;
  bool ok = tr_heap_run(check_job_fn, &j, &bytes);
  tr_status st = j.st;
  if (!ok) {
    if (j.work[0]) remove_tree(j.work); /* never a partial bundle */
    memset(r, 0, sizeof *r); /* its blocks went with the frame */
    r->first_finding = -1;
    tr_diag od = {0};
    tr_heap_diag(&od, o->label ? o->label : "<module>", "checking the module", bytes);
    r->declined = tr_xstrdup(tr_diag_first(&od));
    tr_diag_clear(&od);
    r->outcome = TR_CHECK_DECLINED;
    report_head(t, o, r);
    cJSON_AddArrayToObject(r->json, "runs");
    cJSON_AddStringToObject(r->json, "summary", tr_check_outcome_name(r->outcome));
    cJSON_AddStringToObject(r->json, "declined", r->declined);
    st = TR_OK;
  }
  return st;
}

/* ---- text ---- */

void tr_check_run_text(tr_buf *b, const tr_check_report *r, int i) {
  const tr_check_run *run = &r->runs[i];
  char label[64];
  if (run->given) snprintf(label, sizeof label, "inputs");
  else snprintf(label, sizeof label, "seed %llu", (unsigned long long)run->seed);
  if (run->verdict != TR_VERDICT_OK || (!run->nouts && run->message)) {
    tr_buf_printf(b, "%s: %s%s%s\n", label, tr_verdict_name(run->verdict), run->message ? ": " : "",
                  run->message ? run->message : "");
  }
  for (int k = 0; k < run->nouts; k++) {
    const tr_check_output *out = &run->outs[k];
    const tr_compare_result *c = &out->cmp;
    if (out->protocol_error) {
      tr_buf_printf(b, "%s out%d: protocol-error\n", label, k);
      continue;
    }
    tr_buf_printf(b, "%s out%d: %s (checked %zu, uncertain %zu", label, k, tr_judgement_name(c->judgement),
                  c->checked, c->uncertain);
    if (c->judgement == TR_JUDGE_WEAK) tr_buf_printf(b, "; %s", c->weak_reason);
    for (int q = 0; q < TR_PR_COUNT; q++)
      if (c->excused_by[q]) tr_buf_printf(b, "; excused %zu by %s", c->excused_by[q], tr_prule_name((tr_prule)q));
    if (c->excused_tables) tr_buf_printf(b, "; excused %zu by %s", c->excused_tables, tr_compare_tables_name());
    if (c->has_fail) {
      /* Round-trip precision (tr_put_value): f64 %.17g, f32 and narrower
       * %.9g, integers exactly, pred true/false. */
      tr_buf_printf(b, "; failing %zu, first at %s: reference ", c->failing, out->index);
      tr_put_value(b, out->dtype, c->first_value);
      tr_buf_printf(b, "%s, target ", out->first_denormal ? " (denormal)" : "");
      tr_put_value(b, out->dtype, c->first_target);
      tr_buf_printf(b, ", allowed %.3g", c->first_bound);
    }
    tr_buf_printf(b, "; worst ratio %.3g)\n", c->worst_ratio);
  }
  if (run->pi_text) tr_buf_puts(b, run->pi_text);
}
