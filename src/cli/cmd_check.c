/* cmd_check.c - trench check: runs a module on a target and on the
 * reference (shadow mode) over several input seeds and judges every output
 * element against the reference's bounds (src/oracle/compare.h), applying
 * the target's semantic profile (src/oracle/profile.h, docs/PROFILES.md)
 * unless --strict. */
#include "cli.h"

#include "../eval/shadow.h"
#include "../oracle/alts.h"
#include "../oracle/anchor.h"
#include "../oracle/compare.h"
#include "../oracle/inputs.h"
#include "../oracle/profile.h"
#include "../oracle/received.h"
#include "../target/target.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_check = {
  "check", "run a module on a target and judge it against the reference",
  "Usage: trench check [OPTIONS] MODULE... --target T\n"
  "\n"

  "Runs MODULE on the target T and on the reference interpreter in shadow\n"
  "mode (docs/ORACLE.md) for each input seed, and judges every output\n"
  "element: a float passes when |target - reference| <= k * bound + tiny,\n"
  "integers and pred must match exactly, NaN and Inf must match where the\n"
  "reference is certain; uncertain elements are not judged. Prints one line\n"
  "per seed and output, then a summary line per module (\"check: VERDICT\n"
  "(MODULE on T)\"). Several MODULEs share one target process (one adapter\n"
  "start); a last line then totals them, --json prints an array with one\n"
  "report per module, and --save DIR writes DIR/NAME per module.\n"
  "A target's by-design deviations (denormal flushing, polynomial\n"
  "transcendentals, ...) are excused by its profile (docs/PROFILES.md),\n"
  "found as HOME/profiles/NAME.conf for target NAME (xla-cpu, xla-cpu@VER\n"
  "-> profiles/xla-cpu.conf); each output line says how many elements each\n"
  "rule excused (\"excused N by RULE\"). A narrowing rule (dot-accumulate:\n"
  "bf16 dots and convolutions accumulated in f32) makes the reference compute\n"
  "as the target does (\"narrowed: N dots or convolutions\"). --strict uses no\n"
  "profile and shows every deviation.\n"
  "Verdicts: pass, mismatch, weak (the check says little: constant output,\n"
  "mostly uncertain, values tiny against their bounds), and the target's\n"
  "own: crash, hang, compile-error, error, protocol-error, unsupported.\n"
  "\n"
  "Targets: builtin, interp (the reference), xla-cpu (XLA through jax; also\n"
  "takes StableHLO MODULEs), cmd:PROGRAM (docs/PROTOCOL.md).\n"
  "\n"
  "Options:\n"
  "      --target T     the target (required)\n"
  "      --seeds N      number of input seeds (default 3)\n"
  "      --seed S       first seed (default 0)\n"
  "      --input FILE   a .npy file per input, in order, instead of seeds\n"
  "      --dist NAME    distribution of drawn data inputs, or with an index-*\n"
  "                     NAME of index inputs (docs/INPUTS.md)\n"
  "      --specials R   share R (0..1) of drawn floats made NaN, +-Inf, -0.0\n"
  "      --k K          bound multiplier (default 1)\n"
  "      --profile FILE the target's semantic profile (default: by target)\n"
  "      --strict       no profile: every deviation is a finding\n"
  "      --timeout S    per-run timeout of the target in seconds\n"
  "      --fill-elided  give constants written {...} deterministic values;\n"
  "                     the target gets the module with those values written\n"
  "      --per-instruction[=all|chains]\n"
  "                     also judge every entry instruction on its own: the\n"
  "                     target runs a copy of MODULE that returns every\n"
  "                     instruction's value, and each instruction is evaluated\n"
  "                     alone on the target's values of its operands, so its\n"
  "                     bound covers one op (deep models; docs/ORACLE.md).\n"
  "                     Prints a per-instruction line per seed and the first\n"
  "                     mismatching instruction; a mismatch is a finding.\n"
  "                     chains: elementwise producers with one user are judged\n"
  "                     with that user, not returned, so the target fuses them\n"
  "                     as in MODULE (finds fusion bugs that returning hides)\n"
  "      --show-received  diff of the module the target received and MODULE\n"
  "      --json         print the report as JSON instead of text\n"
  "      --save DIR     write a bundle for the first finding (or the first\n"
  "                     seed when there is none): module, inputs, reference\n"
  "                     and target outputs, report.json and a README with the\n"
  "                     command that reproduces it; with --per-instruction,\n"
  "                     DIR/instruction holds the first mismatching\n"
  "                     instruction alone with the target's operand values\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  every check passed, was weak, or the target does not support it\n"
  "  1  a finding: mismatch, crash, hang, compile-error, error or\n"
  "     protocol-error (or MODULE has a syntax or verify error)\n"
  "  2  usage error, unreadable MODULE or --input, the target cannot be\n"
  "     opened, or the reference cannot evaluate MODULE\n",
  run,
};

/* Row-major index of flat element i, as "[i,j,k]". */
static void put_index(tr_buf *b, const tr_shadow_out *o, size_t i) {
  int64_t idx[64];
  for (int k = o->rank - 1; k >= 0; k--) {
    int64_t dk = o->dims[k] ? o->dims[k] : 1;
    idx[k] = (int64_t)(i % (size_t)dk);
    i /= (size_t)dk;
  }
  tr_buf_putc(b, '[');
  for (int k = 0; k < o->rank; k++) tr_buf_printf(b, k ? ",%lld" : "%lld", (long long)idx[k]);
  tr_buf_putc(b, ']');
}

static bool is_finding(tr_verdict v) {
  return v != TR_VERDICT_OK && v != TR_VERDICT_UNSUPPORTED;
}

typedef struct {
  const char *module;    /* path as given */
  const char *target;    /* spec */
  bool json;             /* print JSON */
  cJSON *report;         /* the report being built */
  int exit_code;         /* worst so far */
  bool saved;            /* a bundle was written */
  const char *profile_arg; /* --profile as given, for the bundle's README */
  bool strict;           /* --strict */
  const char *mlir;      /* StableHLO text the module was converted from */
} check_run;

/* The profile and the other references it needs for one seed (alts.h),
 * computed only when a strict comparison fails somewhere. */
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

static void prof_free(prof_ctx *pc) { tr_profile_alts_free(&pc->a); }

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

static bool save_npy(const char *dir, const char *stem, int i, const tr_tensor *t) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s%d.npy", dir, stem, i);
  tr_diag d = {0};
  bool ok = tr_npy_write(path, t, &d) == TR_OK;
  if (!ok) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return ok;
}

static bool write_text(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  if (!f) return false;
  bool ok = fputs(text, f) >= 0;
  return fclose(f) == 0 && ok;
}

/* The bundle of one seed: enough to reproduce without trench's state. */
static bool save_bundle(const char *dir, const check_run *cr, const tr_module *m,
                        tr_tensor **ins, int nins, const tr_shadow_out *ref, int nref,
                        const tr_run_result *res, cJSON *seed_report) {
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "trench check: cannot create %s: %s\n", dir, strerror(errno));
    return false;
  }
  tr_buf b = {0}, path = {0};
  tr_print_module(&b, m);
  tr_buf_printf(&path, "%s/module.hlo", dir);
  bool ok = write_text(path.p, tr_buf_str(&b));
  if (ok && cr->mlir) { /* the module as given; module.hlo is its conversion */
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/module.mlir", dir);
    ok = write_text(path.p, cr->mlir);
  }
  for (int i = 0; ok && i < nins; i++) ok = save_npy(dir, "in", i, ins[i]);
  /* refN.npy: the reference in exact mode (each op rounded to its dtype,
   * what `trench run` gives on these inputs), not the shadow values
   * (computed wider, then rounded once). */
  tr_eval_opts eo = {0};
  eo.verified = true;
  tr_tensor **exact = NULL;
  int nexact = 0;
  tr_diag ed = {0};
  bool have_exact = tr_eval_opt(m, &eo, ins, nins, &exact, &nexact, &ed) == TR_OK && nexact == nref;
  for (int i = 0; ok && have_exact && i < nexact; i++) ok = save_npy(dir, "ref", i, exact[i]);
  for (int i = 0; ok && i < nref; i++) ok = save_npy(dir, "shadow", i, ref[i].exact);
  if (!have_exact) {
    fprintf(stderr, "trench check: no refN.npy in %s: the exact evaluation failed%s%s\n", dir,
            ed.nmsgs ? ": " : "", ed.nmsgs ? tr_diag_first(&ed) : "");
  }
  tr_eval_free_outputs(exact, nexact);
  tr_diag_clear(&ed);
  for (int i = 0; ok && res && i < res->noutputs; i++) ok = save_npy(dir, "target", i, res->outputs[i]);
  if (ok && res && res->optimized_hlo) {
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/optimized.hlo", dir);
    ok = write_text(path.p, res->optimized_hlo);
  }
  if (ok) {
    char *js = cJSON_Print(seed_report);
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/report.json", dir);
    ok = write_text(path.p, js);
    free(js);
  }
  if (ok) {
    tr_buf rd = {0};
    tr_buf_printf(&rd, "# trench check bundle\n\nModule %s on target `%s`.\n\nReproduce:\n\n    trench check %s/module.%s --target '%s'",
                  cr->module, cr->target, dir, cr->mlir ? "mlir" : "hlo", cr->target);
    if (cr->strict) tr_buf_puts(&rd, " --strict");
    else if (cr->profile_arg) tr_buf_printf(&rd, " --profile '%s'", cr->profile_arg);
    for (int i = 0; i < nins; i++) tr_buf_printf(&rd, " --input %s/in%d.npy", dir, i);
    tr_buf_puts(&rd, "\n\nFiles: module.hlo (canonical text), inN.npy (inputs), refN.npy (the\n"
                     "reference in exact mode, each op rounded to its dtype: what `trench run\n"
                     "module.hlo --input ...` gives; the check itself judges against the\n"
                     "shadow values and bounds, summarised in report.json), shadowN.npy (the\n"
                     "shadow values rounded once to the output dtype: the centre of those\n"
                     "bounds), targetN.npy (the target's outputs, when it ran), optimized.hlo\n"
                     "(what the target ran, when it says), report.json.\n");
    if (cr->mlir)
      tr_buf_puts(&rd, "module.mlir is the StableHLO module as given (the target compiled it\n"
                       "unchanged); module.hlo is the target's own conversion of it to HLO,\n"
                       "which the reference evaluated.\n");
    tr_buf_free(&path);
    tr_buf_printf(&path, "%s/README.md", dir);
    ok = write_text(path.p, tr_buf_str(&rd));
    tr_buf_free(&rd);
  }
  if (!ok) fprintf(stderr, "trench check: cannot write the bundle in %s\n", dir);
  tr_buf_free(&b);
  tr_buf_free(&path);
  return ok;
}

/* Judges one seed's outputs; adds lines (text mode) and JSON. Returns the
 * exit code this seed deserves. */
static int judge_seed(check_run *cr, const char *label, const tr_shadow_out *ref, int nref,
                      const tr_run_result *res, double k, prof_ctx *pc, cJSON *js) {
  cJSON_AddStringToObject(js, "verdict", tr_verdict_name(res->verdict));
  if (res->verdict != TR_VERDICT_OK) {
    if (res->message) cJSON_AddStringToObject(js, "message", res->message);
    if (res->stderr_tail) cJSON_AddStringToObject(js, "stderr", res->stderr_tail);
    if (!cr->json)
      printf("%s: %s%s%s\n", label, tr_verdict_name(res->verdict), res->message ? ": " : "",
             res->message ? res->message : "");
    return is_finding(res->verdict) ? CLI_EXIT_FINDING : CLI_EXIT_OK;
  }
  if (res->noutputs != nref) {
    cJSON_AddStringToObject(js, "verdict", "protocol-error");
    if (!cr->json) printf("%s: protocol-error: %d outputs, expected %d\n", label, res->noutputs, nref);
    return CLI_EXIT_FINDING;
  }
  int rc = CLI_EXIT_OK;
  cJSON *arr = cJSON_AddArrayToObject(js, "outputs");
  tr_compare_opts co;
  tr_compare_opts_default(&co);
  co.k = k;
  /* First with what the profile can tell from the reference alone; the
   * other references only where something failed. */
  tr_compare_result *rs = tr_xcalloc((size_t)nref + 1, sizeof *rs);
  tr_status *st = tr_xcalloc((size_t)nref + 1, sizeof *st);
  tr_diag *ds = tr_xcalloc((size_t)nref + 1, sizeof *ds);
  bool again = false;
  for (int i = 0; i < nref; i++) {
    prof_opts(pc, i, &co);
    st[i] = tr_compare_output(&ref[i], res->outputs[i], &co, &rs[i], &ds[i]);
    if (st[i] == TR_OK && rs[i].failing && pc->p && !pc->done) again = true;
  }
  if (again) {
    prof_compute(pc);
    for (int i = 0; i < nref; i++) {
      if (st[i] != TR_OK || !rs[i].failing) continue;
      prof_opts(pc, i, &co);
      st[i] = tr_compare_output(&ref[i], res->outputs[i], &co, &rs[i], &ds[i]);
    }
  }
  for (int i = 0; i < nref; i++) {
    tr_compare_result r = rs[i];
    tr_diag d = ds[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToArray(arr, o);
    if (st[i] != TR_OK) {
      cJSON_AddStringToObject(o, "judgement", "protocol-error");
      cJSON_AddStringToObject(o, "message", tr_diag_first(&d));
      if (!cr->json) printf("%s out%d: protocol-error: %s\n", label, i, tr_diag_first(&d));
      tr_diag_clear(&d);
      rc = CLI_EXIT_FINDING;
      continue;
    }
    cJSON_AddStringToObject(o, "judgement", tr_judgement_name(r.judgement));
    cJSON_AddNumberToObject(o, "elements", (double)r.n);
    cJSON_AddNumberToObject(o, "checked", (double)r.checked);
    cJSON_AddNumberToObject(o, "uncertain", (double)r.uncertain);
    cJSON_AddNumberToObject(o, "failing", (double)r.failing);
    if (isfinite(r.worst_ratio)) cJSON_AddNumberToObject(o, "worst_ratio", r.worst_ratio);
    else cJSON_AddStringToObject(o, "worst_ratio", "inf");
    if (r.weak_reason) cJSON_AddStringToObject(o, "weak_reason", r.weak_reason);
    tr_buf line = {0};
    tr_buf_printf(&line, "%s out%d: %s (checked %zu, uncertain %zu", label, i,
                  tr_judgement_name(r.judgement), r.checked, r.uncertain);
    if (r.judgement == TR_JUDGE_WEAK) tr_buf_printf(&line, "; %s", r.weak_reason);
    if (r.excused) {
      cJSON *ex = cJSON_AddObjectToObject(o, "excused");
      for (int q = 0; q < TR_PR_COUNT; q++)
        if (r.excused_by[q]) {
          cJSON_AddNumberToObject(ex, tr_prule_name((tr_prule)q), (double)r.excused_by[q]);
          tr_buf_printf(&line, "; excused %zu by %s", r.excused_by[q], tr_prule_name((tr_prule)q));
        }
      if (r.excused_tables) {
        cJSON_AddNumberToObject(ex, tr_compare_tables_name(), (double)r.excused_tables);
        tr_buf_printf(&line, "; excused %zu by %s", r.excused_tables, tr_compare_tables_name());
      }
    }
    if (r.has_fail) {
      tr_buf ix = {0};
      put_index(&ix, &ref[i], r.first_fail);
      cJSON_AddStringToObject(o, "first_index", tr_buf_str(&ix));
      cJSON_AddNumberToObject(o, "first_reference", r.first_value);
      cJSON_AddNumberToObject(o, "first_target", r.first_target);
      cJSON_AddNumberToObject(o, "first_allowed", r.first_bound);
      /* Say when the reference is a denormal: the usual reason a flushing
       * target differs there (--strict, or a dtype its profile omits). */
      bool den = tr_dtype_is_float(ref[i].dtype) && r.first_value != 0 &&
                 fabs(r.first_value) < tr_min_normal(ref[i].dtype);
      if (den) cJSON_AddBoolToObject(o, "first_reference_denormal", true);
      /* Round-trip digits (f64 %.17g, f32 %.9g, integers exactly): a
       * person must see the difference the check saw. */
      tr_buf rv = {0}, tv = {0};
      if (ref[i].exact) tr_tensor_put_elem(&rv, ref[i].exact, r.first_fail);
      else tr_put_value(&rv, ref[i].dtype, r.first_value);
      if (tr_dtype_is_float(ref[i].dtype) && ref[i].value) { /* the shadow value, not its rounding */
        rv.n = 0;
        tr_put_value(&rv, ref[i].dtype, r.first_value);
      }
      tr_tensor_put_elem(&tv, res->outputs[i], r.first_fail);
      tr_buf_printf(&line, "; failing %zu, first at %s: reference %s%s, target %s, allowed %.3g",
                    r.failing, tr_buf_str(&ix), tr_buf_str(&rv), den ? " (denormal)" : "",
                    tr_buf_str(&tv), r.first_bound);
      tr_buf_free(&rv);
      tr_buf_free(&tv);
      tr_buf_free(&ix);
      rc = CLI_EXIT_FINDING;
    }
    tr_buf_printf(&line, "; worst ratio %.3g)", r.worst_ratio);
    if (!cr->json) puts(tr_buf_str(&line));
    tr_buf_free(&line);
  }
  free(rs);
  free(st);
  free(ds);
  return rc;
}

/* What every module of one invocation shares. */
typedef struct {
  tr_target *t;
  const char *spec;
  const tr_profile *prof;
  const char *ppath;
  long nseeds;
  uint64_t seed0;
  double k, timeout;
  tr_input_config draw;
  char **files;
  int nfiles;
  const char *save;      /* --save DIR, or NULL */
  bool many;             /* several modules: bundles go to DIR/NAME */
  bool json_mode;        /* --json */
  bool strict;           /* --strict */
  const char *profile_arg; /* --profile as given */
  bool per_instr;        /* --per-instruction */
  bool chains;           /* --per-instruction=chains */
  bool fill_elided;      /* --fill-elided */
  bool show_received;    /* --show-received */
} check_env;

/* Overall counts of a multi-module run (printed at the end). */
typedef struct {
  int modules, checks, pass, weak, mismatch, unsupported, crash, other, errors;
  /* --per-instruction: instructions judged over all runs, and runs whose
   * anchored module gave no outputs */
  int pi_checked, pi_pass, pi_weak, pi_mismatch, pi_skipped, pi_noruns;
  int pi_excused[TR_PR_COUNT]; /* instructions each profile rule excused */
  int pi_narrowed;             /* judged against a narrowed reference */
  int received_checked, received_changed; /* modules whose received module was compared / differed */
} check_totals;

/* "DIR/NAME" for module path: NAME is the file name without ".hlo". */
static void bundle_dir(char *out, size_t n, const char *dir, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t bl = strlen(base);
  if (bl > 4 && strcmp(base + bl - 4, ".hlo") == 0) bl -= 4;
  snprintf(out, n, "%s/%.*s", dir, (int)bl, base);
}

/* Counts one seed's verdicts into tot: a seed whose target gave no outputs
 * is one check, else one per output. */
static void count_seed(check_totals *tot, cJSON *js) {
  cJSON *pi = cJSON_GetObjectItem(js, "per_instruction");
  if (pi) {
    cJSON *c = cJSON_GetObjectItem(pi, "checked");
    if (!c) tot->pi_noruns++;
    else {
      tot->pi_checked += c->valueint;
      tot->pi_pass += cJSON_GetObjectItem(pi, "pass")->valueint;
      tot->pi_weak += cJSON_GetObjectItem(pi, "weak")->valueint;
      tot->pi_mismatch += cJSON_GetObjectItem(pi, "mismatch")->valueint;
      tot->pi_skipped += cJSON_GetObjectItem(pi, "skipped")->valueint;
      cJSON *ex = cJSON_GetObjectItem(pi, "excused");
      for (cJSON *e = ex ? ex->child : NULL; e; e = e->next) {
        tr_prule r;
        if (e->string && tr_prule_lookup(e->string, strlen(e->string), &r)) tot->pi_excused[r] += e->valueint;
      }
      cJSON *nr = cJSON_GetObjectItem(pi, "narrowed");
      for (cJSON *e = nr ? nr->child : NULL; e; e = e->next) tot->pi_narrowed += e->valueint;
    }
  }
  cJSON *v = cJSON_GetObjectItem(js, "verdict");
  cJSON *outs = cJSON_GetObjectItem(js, "outputs");
  if (!outs || !outs->child) {
    tot->checks++;
    const char *vn = v && cJSON_IsString(v) ? v->valuestring : "";
    if (strcmp(vn, "unsupported") == 0) tot->unsupported++;
    else if (strcmp(vn, "crash") == 0 || strcmp(vn, "hang") == 0) tot->crash++;
    else tot->other++;
    return;
  }
  for (cJSON *o = outs->child; o; o = o->next) {
    cJSON *j = cJSON_GetObjectItem(o, "judgement");
    const char *jn = j && cJSON_IsString(j) ? j->valuestring : "";
    tot->checks++;
    if (strcmp(jn, "pass") == 0) tot->pass++;
    else if (strcmp(jn, "weak") == 0) tot->weak++;
    else if (strcmp(jn, "mismatch") == 0) tot->mismatch++;
    else tot->other++;
  }
}

/* --per-instruction for one seed (src/oracle/anchor.h): runs the anchored
 * module on the target and judges each instruction alone. Returns the
 * exit code it deserves. */
static int per_instr_seed(const check_env *env, tr_anchored *an, const char *label,
                          tr_tensor **ins, int nins, cJSON *js, const char *save, bool *saved) {
  tr_run_opts ro = {0};
  ro.timeout_s = env->timeout;
  tr_run_result res;
  tr_run_result_init(&res);
  tr_diag d = {0};
  int rc = CLI_EXIT_OK;
  if (tr_anchor_run(an, env->t, ins, nins, &ro, &res, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    rc = CLI_EXIT_USAGE;
  } else if (res.verdict != TR_VERDICT_OK) {
    cJSON *o = cJSON_AddObjectToObject(js, "per_instruction");
    cJSON_AddStringToObject(o, "verdict", tr_verdict_name(res.verdict));
    if (res.message) cJSON_AddStringToObject(o, "message", res.message);
    if (res.stderr_tail) cJSON_AddStringToObject(o, "stderr", res.stderr_tail);
    if (!env->json_mode)
      printf("%s per-instruction: %s%s%s\n", label, tr_verdict_name(res.verdict),
             res.message ? ": " : "", res.message ? res.message : "");
    rc = is_finding(res.verdict) ? CLI_EXIT_FINDING : CLI_EXIT_OK;
  } else {
    tr_anchor_opts ao;
    tr_anchor_opts_default(&ao);
    ao.k = env->k;
    ao.profile = env->prof;
    tr_anchor_summary sum;
    if (tr_anchor_judge(an, ins, nins, res.outputs, res.noutputs, &ao, &sum, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      rc = CLI_EXIT_FINDING; /* the target's outputs do not fit the module */
    } else {
      tr_anchor_summary_json(js, an, &sum);
      if (!env->json_mode) {
        tr_buf b = {0};
        tr_anchor_summary_text(&b, label, an, &sum);
        fputs(tr_buf_str(&b), stdout);
        tr_buf_free(&b);
      }
      if (sum.mismatch) rc = CLI_EXIT_FINDING;
      /* --save: the first mismatching instruction alone, in the bundle's
       * folder (the bundle itself is written by the caller). */
      if (save && sum.first_bad >= 0 && !*saved) {
        tr_buf dir = {0};
        tr_buf_printf(&dir, "%s/instruction", save);
        if (mkdir(save, 0777) != 0 && errno != EEXIST)
          fprintf(stderr, "trench check: cannot create %s: %s\n", save, strerror(errno));
        if (tr_anchor_save(tr_buf_str(&dir), an, sum.first_bad, ins, nins, res.outputs, res.noutputs,
                           env->spec, &d) != TR_OK)
          tr_diag_print(&d, stderr);
        *saved = true;
        tr_buf_free(&dir);
      }
    }
    tr_anchor_summary_free(&sum);
  }
  tr_diag_clear(&d);
  tr_run_result_free(&res);
  return rc;
}

/* Checks one module over every seed; returns its exit code and sets
 * *report (owned by the caller). */
static int check_module(const check_env *env, const char *path, check_totals *tot, cJSON **report) {
  const char *spec = env->spec;
  tr_target *t = env->t;
  check_run cr = {0};
  cr.module = path;
  cr.target = spec;
  cr.json = env->json_mode;
  cr.strict = env->strict;
  cr.profile_arg = env->profile_arg;
  const tr_profile *prof = env->prof;
  long nseeds = env->nseeds;
  int nfiles = env->nfiles;
  char **files = env->files;
  char savedir[4200];
  const char *save = env->save;
  if (save && env->many) {
    if (mkdir(env->save, 0777) != 0 && errno != EEXIST)
      fprintf(stderr, "trench check: cannot create %s: %s\n", env->save, strerror(errno));
    bundle_dir(savedir, sizeof savedir, env->save, path);
    save = savedir;
  }
  int rc = CLI_EXIT_OK;
  tr_diag d = {0};
  cr.report = cJSON_CreateObject();
  *report = cr.report;
  cJSON_AddStringToObject(cr.report, "module", path);
  cJSON_AddStringToObject(cr.report, "target", spec);
  cJSON_AddStringToObject(cr.report, "target_name", t->name ? t->name : "");
  cJSON_AddStringToObject(cr.report, "target_version", t->version ? t->version : "");
  if (prof) cJSON_AddStringToObject(cr.report, "profile", env->ppath);
  else cJSON_AddNullToObject(cr.report, "profile");
  tot->modules++;
  tr_parse_opts po = {env->fill_elided};
  char *mlir = NULL;
  tr_module *m = cli_load_source(path, t, &po, &mlir, &rc);
  cr.mlir = mlir;
  if (mlir) cJSON_AddStringToObject(cr.report, "source", "stablehlo");
  if (!m) {
    cJSON_AddStringToObject(cr.report, "summary", rc == CLI_EXIT_USAGE ? "error" : "finding");
    cJSON_AddStringToObject(cr.report, "error", rc == CLI_EXIT_USAGE ? "cannot read the module"
                                                                     : "the module does not parse or verify");
    if (!cr.json) printf("check: %s (%s on %s)\n", rc == CLI_EXIT_USAGE ? "error" : "finding", path, spec);
    tot->errors++;
    return rc;
  }
  /* A narrowing profile rule (dot-accumulate) changes the reference:
   * the shadow evaluation runs on the module as the target computes it. */
  int ndots = 0;
  tr_module *nm = tr_profile_narrowed(prof, m, &ndots);
  const tr_module *refm = nm ? nm : m;
  if (nm) {
    cJSON *nr = cJSON_AddObjectToObject(cr.report, "narrowed");
    cJSON_AddNumberToObject(nr, tr_prule_name(TR_PR_DOT_ACCUMULATE), ndots);
    if (!cr.json)
      printf("narrowed: %d dot%s or convolution%s judged as the profile's %s rule computes them "
             "(--strict: the dtype's own accumulation)\n", ndots, ndots == 1 ? "" : "s",
             ndots == 1 ? "" : "s", tr_prule_name(TR_PR_DOT_ACCUMULATE));
  }
  tr_anchored anch;
  memset(&anch, 0, sizeof anch);
  bool saved_instr = false;
  if (env->per_instr && tr_anchor_module(m, env->chains, &anch, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    rc = CLI_EXIT_USAGE;
    nseeds = 0;
  }
  cJSON *seeds = cJSON_AddArrayToObject(cr.report, "runs");
  int nfind = 0, nweak = 0, nunsupported = 0;
  bool received_changed = false;
  for (long s = 0; s < nseeds; s++) {
    uint64_t seed = env->seed0 + (uint64_t)s;
    tr_tensor **ins = NULL;
    int nins = 0;
    char label[64];
    if (nfiles) {
      snprintf(label, sizeof label, "inputs");
      /* Read each file with its parameter's dtype as the hint. */
      tr_input_config cfg;
      tr_input_config_init(&cfg);
      tr_input_leaf *lv = NULL;
      if (tr_inputs_plan(m, &cfg, &lv, &nins, &d) != TR_OK || nins != nfiles) {
        if (d.nmsgs) tr_diag_print(&d, stderr);
        else fprintf(stderr, "trench check: MODULE takes %d inputs, %d --input given\n", nins, nfiles);
        free(lv);
        rc = CLI_EXIT_USAGE;
        break;
      }
      ins = tr_xcalloc((size_t)nins + 1, sizeof *ins);
      bool ok = true;
      for (int i = 0; ok && i < nins; i++) {
        ok = tr_npy_read(files[i], lv[i].shape->dtype, &ins[i], &d) == TR_OK;
        if (ok && (ins[i]->rank != lv[i].shape->rank ||
                   (ins[i]->rank && memcmp(ins[i]->dims, lv[i].shape->dims,
                                           sizeof(int64_t) * (size_t)ins[i]->rank)))) {
          tr_diag_errorf(&d, "%s: shape does not match input %d of MODULE", files[i], i);
          ok = false;
        }
      }
      free(lv);
      if (!ok) {
        tr_diag_print(&d, stderr);
        tr_inputs_free(ins, nins);
        rc = CLI_EXIT_USAGE;
        break;
      }
    } else {
      snprintf(label, sizeof label, "seed %llu", (unsigned long long)seed);
      tr_input_config cfg = env->draw;
      cfg.seed = seed;
      if (tr_inputs_make(m, &cfg, &ins, &nins, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        rc = CLI_EXIT_USAGE;
        break;
      }
    }
    tr_shadow_out *ref = NULL;
    int nref = 0;
    /* Under a profile the reference's ulp table is capped by the target's
     * stated accuracy contract (a default wider than it excuses nothing). */
    tr_ulp_table *capped = prof ? tr_xmalloc(sizeof *capped) : NULL;
    tr_shadow_opts so = {0};
    if (capped) tr_profile_ulp_table(prof, 0, capped);
    so.ulps = capped;
    tr_status est = tr_eval_shadow(refm, &so, ins, nins, &ref, &nref, &d);
    free(capped);
    if (est != TR_OK) {
      fprintf(stderr, "trench check: the reference cannot evaluate %s:\n", path);
      tr_diag_print(&d, stderr);
      tr_inputs_free(ins, nins);
      rc = CLI_EXIT_USAGE;
      break;
    }
    tr_run_opts ro = {0};
    ro.want_optimized_hlo = save != NULL;
    ro.timeout_s = env->timeout;
    ro.module_text = mlir;
    /* The first seed asks what the target received (compiling is cached,
     * so later seeds run the same executable). */
    ro.want_received_hlo = s == 0 && (t->caps & TR_CAP_RECEIVED_HLO);
    tr_run_result res;
    tr_run_result_init(&res);
    if (tr_target_run(t, m, ins, nins, &ro, &res, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      tr_shadow_free(ref, nref);
      tr_inputs_free(ins, nins);
      rc = CLI_EXIT_USAGE;
      break;
    }
    cJSON *js = cJSON_CreateObject();
    cJSON_AddItemToArray(seeds, js);
    if (!nfiles) cJSON_AddNumberToObject(js, "seed", (double)seed);
    if (res.received_hlo) {
      tr_received rcv;
      tr_received_compare(m, res.received_hlo, &rcv);
      tr_received_json(cr.report, &rcv);
      if (rcv.checked && !rcv.same) received_changed = true;
      tot->received_checked += rcv.checked;
      tot->received_changed += rcv.checked && !rcv.same;
      if (!cr.json) {
        tr_buf rb = {0};
        tr_received_line(&rb, &rcv, env->show_received);
        fputs(tr_buf_str(&rb), stdout);
        tr_buf_free(&rb);
      }
      tr_received_free(&rcv);
    }
    prof_ctx pc = {prof, refm, ins, nins, false, {{0}, {0}, NULL, 0}};
    int src = judge_seed(&cr, label, ref, nref, &res, env->k, &pc, js);
    prof_free(&pc);
    if (anch.nparts) {
      int prc = per_instr_seed(env, &anch, label, ins, nins, js, save, &saved_instr);
      if (prc == CLI_EXIT_USAGE) rc = CLI_EXIT_USAGE;
      else src = cli_worse(src, prc);
    }
    cr.exit_code = cli_worse(cr.exit_code, src);
    if (src == CLI_EXIT_FINDING) nfind++;
    if (res.verdict == TR_VERDICT_UNSUPPORTED) nunsupported++;
    count_seed(tot, js);
    for (cJSON *o2 = cJSON_GetObjectItem(js, "outputs") ? cJSON_GetObjectItem(js, "outputs")->child : NULL; o2; o2 = o2->next) {
      cJSON *j = cJSON_GetObjectItem(o2, "judgement");
      if (j && cJSON_IsString(j) && strcmp(j->valuestring, "weak") == 0) nweak++;
    }
    if (save && !cr.saved && (src == CLI_EXIT_FINDING || s == nseeds - 1)) {
      if (!save_bundle(save, &cr, m, ins, nins, ref, nref, &res, js)) rc = CLI_EXIT_USAGE;
      cr.saved = true;
    }
    tr_run_result_free(&res);
    tr_shadow_free(ref, nref);
    tr_inputs_free(ins, nins);
    /* The first finding is saved; later seeds still run and report. */
  }
  tr_diag_clear(&d);
  int code = cli_worse(rc == CLI_EXIT_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_OK, cr.exit_code);
  const char *summary = code == CLI_EXIT_USAGE ? "error"
                        : nfind                 ? "finding"
                        : nunsupported          ? "unsupported"
                        : nweak                 ? "weak"
                                                : "pass";
  if (code == CLI_EXIT_USAGE) tot->errors++;
  cJSON_AddStringToObject(cr.report, "summary", summary);
  if (!cr.json)
    printf("check: %s (%s on %s%s)\n", summary, path, spec,
           received_changed ? "; the module it received was changed" : "");
  free(mlir);
  tr_anchored_free(&anch);
  tr_module_free(nm);
  tr_module_free(m);
  return code;
}

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_check;
  const char *spec = NULL;
  char **files = tr_xcalloc((size_t)argc + 1, sizeof(char *));
  char **paths = tr_xcalloc((size_t)argc + 1, sizeof(char *));
  int nfiles = 0, npaths = 0;
  check_env env;
  memset(&env, 0, sizeof env);
  env.nseeds = 3;
  env.k = 1;
  tr_input_config_init(&env.draw); /* how seeds draw inputs (--dist, --specials) */
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int kind; (kind = cli_opts_next(&o)) != 0;) {
    if (kind == 'f') {
      paths[npaths++] = (char *)o.arg;
      continue;
    }
    cli_opt_help(&o);
    char *end;
    if (cli_opt_is(&o, NULL, "--target")) {
      spec = cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--seeds")) {
      const char *v = cli_opt_value(&o);
      env.nseeds = strtol(v, &end, 10);
      if (!*v || *end || env.nseeds < 1 || env.nseeds > 1000000)
        cli_usage_error(cmd, "--seeds needs a count from 1, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--seed")) {
      const char *v = cli_opt_value(&o);
      errno = 0;
      env.seed0 = strtoull(v, &end, 0);
      if (!*v || *end || errno || v[0] == '-')
        cli_usage_error(cmd, "--seed needs a non-negative integer, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--input")) {
      files[nfiles++] = (char *)cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--dist")) {
      const char *v = cli_opt_value(&o);
      tr_dist dist;
      if (!tr_dist_lookup(v, &dist) || dist == TR_DIST_DEFAULT)
        cli_usage_error(cmd, "unknown distribution '%s'", v);
      if (tr_dist_is_index(dist)) env.draw.index = dist;
      else env.draw.data = dist;
    } else if (cli_opt_is(&o, NULL, "--specials")) {
      const char *v = cli_opt_value(&o);
      double r = strtod(v, &end);
      if (!*v || *end || !(r >= 0 && r <= 1))
        cli_usage_error(cmd, "--specials needs a rate in [0, 1], not '%s'", v);
      env.draw.special_rate = r;
    } else if (cli_opt_is(&o, NULL, "--k")) {
      const char *v = cli_opt_value(&o);
      env.k = strtod(v, &end);
      if (!*v || *end || !(env.k > 0)) cli_usage_error(cmd, "--k needs a positive number, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--timeout")) {
      const char *v = cli_opt_value(&o);
      env.timeout = strtod(v, &end);
      if (!*v || *end || !(env.timeout > 0))
        cli_usage_error(cmd, "--timeout needs seconds > 0, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--profile")) {
      env.profile_arg = cli_opt_value(&o);
    } else if (cli_opt_flag(&o, NULL, "--strict")) {
      env.strict = true;
    } else if (cli_opt_is(&o, NULL, "--per-instruction")) {
      env.per_instr = true;
      if (o.val && strcmp(o.val, "chains") == 0) env.chains = true;
      else if (o.val && strcmp(o.val, "all") != 0)
        cli_usage_error(cmd, "--per-instruction takes all or chains, not '%s'", o.val);
    } else if (cli_opt_flag(&o, NULL, "--fill-elided")) {
      env.fill_elided = true;
    } else if (cli_opt_flag(&o, NULL, "--show-received")) {
      env.show_received = true;
    } else if (cli_opt_flag(&o, NULL, "--json")) {
      env.json_mode = true;
    } else if (cli_opt_is(&o, NULL, "--save")) {
      env.save = cli_opt_value(&o);
    } else {
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
    }
  }
  if (!npaths) cli_usage_error(cmd, "no MODULE given");
  if (!spec) cli_usage_error(cmd, "no --target given");
  if (env.strict && env.profile_arg) cli_usage_error(cmd, "--strict and --profile exclude each other");
  if (nfiles && npaths > 1) cli_usage_error(cmd, "--input needs a single MODULE (%d given)", npaths);
  env.spec = spec;
  env.files = files;
  env.nfiles = nfiles;
  env.many = npaths > 1;
  if (nfiles) env.nseeds = 1;
  tr_diag d = {0};
  tr_target *t = NULL;
  tr_target_config tc;
  tr_target_config_init(&tc);
  /* Without TRENCH_HOME, the source tree is the one this binary was built
   * in (BUILD/trench): where adapters/ and .venv/ are. */
  char home[4096] = "";
  if (!getenv("TRENCH_HOME")) {
    ssize_t n = readlink("/proc/self/exe", home, sizeof home - 1);
    if (n > 0) {
      home[n] = 0;
      for (int up = 0; up < 2; up++) {
        char *sl = strrchr(home, '/');
        if (sl) *sl = 0;
      }
      tc.home = home;
    }
  }
  if (env.timeout > 0) tc.timeout_s = env.timeout;
  /* The profile: --profile, else HOME/profiles/NAME.conf for a target
   * named NAME (or NAME@VERSION) when that file exists. */
  tr_profile *prof = NULL;
  char ppath[4200] = "";
  const char *phome = getenv("TRENCH_HOME") ? getenv("TRENCH_HOME") : home;
  if (env.profile_arg) {
    snprintf(ppath, sizeof ppath, "%s", env.profile_arg);
  } else if (!env.strict && phome[0] && !strchr(spec, ':') && !strchr(spec, '/')) {
    size_t nl = strcspn(spec, "@");
    snprintf(ppath, sizeof ppath, "%s/profiles/%.*s.conf", phome, (int)nl, spec);
    if (access(ppath, R_OK) != 0) ppath[0] = 0;
  }
  /* Rules keyed by release ("@0.4.30 ..."): the release after '@' in the
   * spec, else the profile's own "release" line. */
  const char *at = strchr(spec, '@');
  if (ppath[0] && tr_profile_load_release(ppath, at && !strchr(spec, ':') ? at + 1 : NULL, &prof, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    free(files);
    free(paths);
    return CLI_EXIT_USAGE;
  }
  /* One target process for every module: the adapter starts once. */
  if (tr_target_open(spec, &tc, &t, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    tr_profile_free(prof);
    free(files);
    free(paths);
    return CLI_EXIT_USAGE;
  }
  env.t = t;
  env.prof = prof;
  env.ppath = ppath;
  if (prof && !env.json_mode) printf("profile: %s (--strict to see every deviation)\n", ppath);
  check_totals tot;
  memset(&tot, 0, sizeof tot);
  int code = CLI_EXIT_OK;
  cJSON *all = env.many ? cJSON_CreateArray() : NULL;
  cJSON *one = NULL;
  for (int i = 0; i < npaths; i++) {
    cJSON *rep = NULL;
    code = cli_worse(code, check_module(&env, paths[i], &tot, &rep));
    if (all) cJSON_AddItemToArray(all, rep);
    else one = rep;
  }
  if (env.json_mode) {
    char *s = cJSON_Print(all ? all : one);
    puts(s);
    free(s);
  } else if (env.many) {
    printf("check: %d modules, %d checks: %d pass, %d weak, %d mismatch, %d unsupported, "
           "%d crash, %d other, %d errors (on %s)\n",
           tot.modules, tot.checks, tot.pass, tot.weak, tot.mismatch, tot.unsupported,
           tot.crash, tot.other, tot.errors, spec);
    if (tot.received_checked)
      printf("check: received: %d of %d modules reached the target changed\n", tot.received_changed,
             tot.received_checked);
    if (env.per_instr) {
      printf("check: per-instruction: %d instructions judged: %d pass, %d weak, %d mismatch; "
             "%d skipped; %d runs without outputs",
             tot.pi_checked, tot.pi_pass, tot.pi_weak, tot.pi_mismatch, tot.pi_skipped, tot.pi_noruns);
      for (int r = 0; r < TR_PR_COUNT; r++)
        if (tot.pi_excused[r]) printf("; excused %d by %s", tot.pi_excused[r], tr_prule_name((tr_prule)r));
      if (tot.pi_narrowed)
        printf("; narrowed %d by %s", tot.pi_narrowed, tr_prule_name(TR_PR_DOT_ACCUMULATE));
      printf(" (on %s)\n", spec);
    }
  }
  cJSON_Delete(all ? all : one);
  tr_target_close(t);
  tr_profile_free(prof);
  free(files);
  free(paths);
  return cli_finish(code);
}
