/* report.c - the triage bundle and its reports: report.json (every
 * level), report.md and a self-contained report.html a person reads in a
 * minute, the reduced module with its inputs, and regression artifacts
 * the target's developers use directly (builtin: a tests/defects-style
 * module; xla-cpu: the HLO file and a short jax script). */
#include "triageint.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <ftw.h>
#include <sys/stat.h>

static const char *const level_names[] = {"outputs", "instruction", "passes", "kernel", "disable", "fuel", "reduce"};

static const tr_level *level_at(const tr_triage_report *r, int i) {
  const tr_level *lv[] = {&r->outputs, &r->instr, &r->passes, &r->kernel, &r->disable, &r->fuel, &r->reduce};
  return lv[i];
}

#define NLEVELS 7

cJSON *tr_triage_json(const tr_triage_report *r) {
  cJSON *js = cJSON_CreateObject();
  cJSON_AddStringToObject(js, "module", r->label ? r->label : "");
  cJSON_AddStringToObject(js, "target", r->target ? r->target : "");
  cJSON_AddNumberToObject(js, "instructions", r->module_instrs);
  cJSON *sig = cJSON_AddObjectToObject(js, "signature");
  cJSON_AddStringToObject(sig, "kind", r->sig.kind);
  cJSON_AddStringToObject(sig, "culprit_op", r->culprit_op < TR_OP_COUNT ? tr_ops[r->culprit_op].name : "");
  cJSON_AddStringToObject(sig, "pass", r->guilty_pass);
  cJSON_AddStringToObject(sig, "value", r->sig.value_kind);
  if (!r->given) cJSON_AddNumberToObject(js, "seed", (double)r->seed);
  cJSON *levels = cJSON_AddObjectToObject(js, "levels");
  for (int i = 0; i < NLEVELS; i++) {
    const tr_level *lv = level_at(r, i);
    cJSON *l = cJSON_AddObjectToObject(levels, level_names[i]);
    cJSON_AddStringToObject(l, "state", tr_level_state_name(lv->state));
    cJSON_AddNumberToObject(l, "target_runs", lv->runs);
    cJSON_AddNumberToObject(l, "ms", lv->ms);
    cJSON_AddStringToObject(l, "note", lv->note);
    if (i == 0) {
      cJSON_AddNumberToObject(l, "seeds_tried", r->nseeds_tried);
      cJSON_AddNumberToObject(l, "seeds_failing", r->nseeds_failing);
      cJSON_AddStringToObject(l, "failing_outputs", r->failing_outputs);
      if (r->first_output >= 0) {
        cJSON *f = cJSON_AddObjectToObject(l, "first_failure");
        cJSON_AddNumberToObject(f, "output", r->first_output);
        cJSON_AddStringToObject(f, "index", r->first_index);
        cJSON_AddNumberToObject(f, "target", r->first_target);
        cJSON_AddNumberToObject(f, "reference", r->first_value);
        cJSON_AddNumberToObject(f, "allowed", r->first_bound);
      }
    } else if (i == 1) {
      cJSON_AddStringToObject(l, "culprit", r->culprit);
      cJSON_AddStringToObject(l, "op", r->culprit_op < TR_OP_COUNT ? tr_ops[r->culprit_op].name : "");
      cJSON_AddNumberToObject(l, "bisection_runs", r->bisect_runs);
      cJSON_AddStringToObject(l, "alone", r->alone);
      cJSON_AddStringToObject(l, "per_instruction", r->per_instr);
      cJSON_AddBoolToObject(l, "agree", r->agree);
      cJSON_AddStringToObject(l, "inner", r->inner);
      cJSON_AddStringToObject(l, "inner_op", r->inner[0] ? tr_ops[r->inner_op].name : "");
      if (r->kase.has) {
        cJSON *c = cJSON_AddObjectToObject(l, "wrong_element");
        cJSON_AddStringToObject(c, "text", r->kase.text);
        cJSON_AddBoolToObject(c, "seen", r->kase.elem);
        cJSON_AddBoolToObject(c, "alone", r->kase.alone);
        if (r->kase.elem) {
          cJSON_AddStringToObject(c, "index", r->kase.index);
          cJSON_AddNumberToObject(c, "target", r->kase.target);
          cJSON_AddNumberToObject(c, "reference", r->kase.ref);
          cJSON_AddNumberToObject(c, "allowed", r->kase.bound);
        }
      }
      cJSON_AddStringToObject(l, "known", r->known);
      cJSON_AddStringToObject(l, "known_title", r->known_title);
    } else if (i == 2) {
      cJSON_AddStringToObject(l, "pass", r->guilty_pass);
      cJSON_AddNumberToObject(l, "pass_run", r->guilty_run);
    } else if (i == 3) {
      cJSON_AddStringToObject(l, "kernel", r->kernel_name);
      cJSON_AddStringToObject(l, "instruction", r->kernel_instr);
    } else if (i == 4) {
      cJSON_AddStringToObject(l, "fixed_by_disabling", r->disabled_fix);
    } else if (i == 5) {
      cJSON_AddNumberToObject(l, "application", (double)r->fuel_n);
      cJSON_AddStringToObject(l, "rule", r->rule);
      cJSON_AddStringToObject(l, "pass", r->rule_pass);
      cJSON_AddStringToObject(l, "instruction", r->rule_instr);
    } else if (i == 6) {
      cJSON_AddNumberToObject(l, "reproduced", r->repro_ok);
      cJSON_AddNumberToObject(l, "reproduction_runs", r->repro_of);
      cJSON_AddBoolToObject(l, "flaky", r->flaky);
      cJSON_AddNumberToObject(l, "instructions_before", r->module_instrs);
      cJSON_AddNumberToObject(l, "instructions_after", r->reduced_instrs);
      cJSON_AddNumberToObject(l, "instructions_all_before", r->module_instrs_all);
      cJSON_AddNumberToObject(l, "instructions_all_after", r->reduced_instrs_all);
      cJSON_AddNumberToObject(l, "candidates", r->candidates);
      cJSON_AddNumberToObject(l, "accepted", r->accepted);
      cJSON_AddStringToObject(l, "culprit_op", r->reduced_op < TR_OP_COUNT ? tr_ops[r->reduced_op].name : "");
    }
  }
  cJSON_AddNumberToObject(js, "target_runs", r->total_runs);
  cJSON_AddNumberToObject(js, "ms", r->total_ms);
  return js;
}

static void md_summary(tr_buf *b, const tr_triage_report *r) {
  tr_buf_printf(b, "- **Finding**: %s%s%s on `%s`", r->sig.kind[0] ? r->sig.kind : "none",
                r->sig.value_kind[0] ? ", first wrong value " : "", r->sig.value_kind, r->target);
  if (!r->given && r->sig.kind[0]) tr_buf_printf(b, ", seed %llu", (unsigned long long)r->seed);
  tr_buf_puts(b, "\n");
  if (r->first_output >= 0)
    tr_buf_printf(b, "- **Failing elements**: outputs %s; first at output %d%s: got %.9g, allowed %.9g +- %.3g\n",
                  r->failing_outputs, r->first_output, r->first_index, r->first_target, r->first_value,
                  r->first_bound);
  if (r->culprit[0])
    tr_buf_printf(b, "- **Culprit instruction**: `%%%s` (%s)%s%s%s%s\n", r->culprit, tr_ops[r->culprit_op].name,
                  r->inner[0] ? "; inside it `%" : "", r->inner, r->inner[0] ? "` " : "",
                  r->inner[0] ? tr_ops[r->inner_op].name : "");
  if (r->kase.has) tr_buf_printf(b, "- **Wrong element**: `%s`\n", r->kase.text);
  if (r->known[0])
    tr_buf_printf(b, "- **Known bug**: %s, %s (docs/FINDINGS.md); its trigger matches this culprit\n", r->known,
                  r->known_title);
  if (r->kernel_name[0])
    tr_buf_printf(b, "- **Fused kernel**: `%%%s`%s%s%s\n", r->kernel_name, r->kernel_instr[0] ? ", inside it `%" : "",
                  r->kernel_instr, r->kernel_instr[0] ? "`" : "");
  if (r->guilty_pass[0]) tr_buf_printf(b, "- **Guilty pass**: %s\n", r->guilty_pass);
  if (r->rule[0]) tr_buf_printf(b, "- **Rule**: %s (pass %s, rewrite %lld, at `%%%s`)\n", r->rule, r->rule_pass,
                                (long long)r->fuel_n, r->rule_instr);
  if (r->reduced_text)
    tr_buf_printf(b, "- **Reduced**: %d -> %d instructions (%d -> %d in all computations); reproduced %d of %d%s\n",
                  r->module_instrs, r->reduced_instrs, r->module_instrs_all, r->reduced_instrs_all, r->repro_ok,
                  r->repro_of, r->flaky ? " (flaky)" : "");
  tr_buf_printf(b, "- **Target runs**: %d in %.1f s\n", r->total_runs, r->total_ms / 1e3);
}

void tr_triage_markdown(tr_buf *b, const tr_triage_report *r) {
  tr_buf_printf(b, "# Triage of %s\n\n", r->label ? r->label : "module");
  md_summary(b, r);
  tr_buf_puts(b, "\n| level | state | target runs | ms | what |\n|---|---|---|---|---|\n");
  for (int i = 0; i < NLEVELS; i++) {
    const tr_level *lv = level_at(r, i);
    tr_buf_printf(b, "| %s | %s | %d | %.0f | %s |\n", level_names[i], tr_level_state_name(lv->state), lv->runs,
                  lv->ms, lv->note);
  }
  if (r->reduced_text) tr_buf_printf(b, "\n## Reduced module\n\n```\n%s```\n", r->reduced_text);
  tr_buf_printf(b, "\n## Module as triaged (%d instructions)\n\n```\n%s```\n", r->module_instrs,
                r->module_text ? r->module_text : "");
  if (r->kernel_text && r->kernel_name[0])
    tr_buf_printf(b, "\n## Optimized module (the target's)\n\n```\n%s```\n", r->kernel_text);
}

static void html_esc(tr_buf *b, const char *s) {
  for (; s && *s; s++) {
    if (*s == '<') tr_buf_puts(b, "&lt;");
    else if (*s == '>') tr_buf_puts(b, "&gt;");
    else if (*s == '&') tr_buf_puts(b, "&amp;");
    else if (*s == '"') tr_buf_puts(b, "&quot;");
    else tr_buf_putc(b, *s);
  }
}

/* Module text with the lines defining the named instructions marked. */
static void html_module(tr_buf *b, const char *text, const char *mark1, const char *mark2) {
  tr_buf_puts(b, "<pre>");
  const char *p = text ? text : "";
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *line = tr_xcalloc(n + 1, 1);
    memcpy(line, p, n);
    bool hit = false;
    const char *marks[] = {mark1, mark2};
    for (int k = 0; k < 2 && !hit; k++) {
      if (!marks[k] || !marks[k][0]) continue;
      char pat[160];
      snprintf(pat, sizeof pat, " %s = ", marks[k]);
      char pat2[160];
      snprintf(pat2, sizeof pat2, " %%%s = ", marks[k]);
      hit = strstr(line, pat) || strstr(line, pat2);
    }
    if (hit) tr_buf_puts(b, "<mark>");
    html_esc(b, line);
    if (hit) tr_buf_puts(b, "</mark>");
    tr_buf_putc(b, '\n');
    tr_free(line);
    p += n + (e ? 1 : 0);
  }
  tr_buf_puts(b, "</pre>\n");
}

void tr_triage_html(tr_buf *b, const tr_triage_report *r) {
  tr_buf_puts(b, "<!doctype html>\n<html><head><meta charset=\"utf-8\"><title>trench triage</title>\n"
                 "<style>body{font-family:sans-serif;max-width:60em;margin:2em auto}"
                 "pre{background:#f4f4f4;padding:.5em;overflow:auto}mark{background:#fd6}"
                 "td,th{border:1px solid #ccc;padding:.2em .5em}table{border-collapse:collapse}</style>"
                 "</head><body>\n<h1>Triage of ");
  html_esc(b, r->label);
  tr_buf_puts(b, "</h1>\n<ul>\n");
  tr_buf s = {0};
  md_summary(&s, r);
  const char *p = tr_buf_str(&s);
  while (*p) {
    const char *e = strchr(p, '\n');
    size_t n = e ? (size_t)(e - p) : strlen(p);
    char *line = tr_xcalloc(n + 1, 1);
    memcpy(line, p + (n > 2 ? 2 : 0), n > 2 ? n - 2 : 0);
    tr_buf_puts(b, "<li>");
    html_esc(b, line);
    tr_buf_puts(b, "</li>\n");
    tr_free(line);
    p += n + (e ? 1 : 0);
  }
  tr_buf_free(&s);
  tr_buf_puts(b, "</ul>\n<table><tr><th>level</th><th>state</th><th>target runs</th><th>ms</th><th>what</th></tr>\n");
  for (int i = 0; i < NLEVELS; i++) {
    const tr_level *lv = level_at(r, i);
    tr_buf_printf(b, "<tr><td>%s</td><td>%s</td><td>%d</td><td>%.0f</td><td>", level_names[i],
                  tr_level_state_name(lv->state), lv->runs, lv->ms);
    html_esc(b, lv->note);
    tr_buf_puts(b, "</td></tr>\n");
  }
  tr_buf_puts(b, "</table>\n");
  if (r->reduced_text) {
    tr_buf_puts(b, "<h2>Reduced module</h2>\n");
    html_module(b, r->reduced_text, NULL, NULL);
  }
  tr_buf_printf(b, "<h2>Module before reduction (%d instructions), culprit marked</h2>\n", r->module_instrs);
  html_module(b, r->module_text, r->culprit, NULL);
  if (r->kernel_text && r->kernel_name[0]) {
    tr_buf_puts(b, "<h2>The target's optimized module, fused kernel marked</h2>\n");
    html_module(b, r->kernel_text, r->kernel_name, r->kernel_instr);
  }
  tr_buf_puts(b, "</body></html>\n");
}

static tr_status write_text(const char *dir, const char *name, const char *text, tr_diag *d) {
  char path[4400];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "w");
  if (!f || fputs(text ? text : "", f) < 0 || fclose(f) != 0) {
    tr_diag_errorf(d, "%s: cannot write: %s", path, strerror(errno));
    return TR_ERR_IO;
  }
  return TR_OK;
}

static tr_status write_npys(const char *dir, const char *stem, tr_tensor *const *ts, int n, tr_diag *d) {
  for (int i = 0; i < n; i++) {
    char path[4400];
    snprintf(path, sizeof path, "%s/%s%d.npy", dir, stem, i);
    tr_status st = tr_npy_write(path, ts[i], d);
    if (st != TR_OK) return st;
  }
  return TR_OK;
}

/* The regression artifacts: builtin gets a tests/defects-style module
 * whose comment says what check must find; xla-cpu gets a jax script. */
static tr_status write_regression(const char *dir, const tr_triage_report *r, tr_diag *d) {
  const char *text = r->reduced_text ? r->reduced_text : r->module_text;
  const char *ins = r->reduced_text ? "reduced_in" : "in";
  int nin = r->reduced_text ? r->nreduced_inputs : r->ninputs;
  tr_buf b = {0};
  tr_status st = TR_OK;
  if (strncmp(r->target, "builtin", 7) == 0) {
    tr_buf_printf(&b, "// Regression test (tests/defects style): `trench check regress.hlo --target '%s'",
                  r->target);
    for (int i = 0; i < nin; i++) tr_buf_printf(&b, " --input %s%d.npy", ins, i);
    tr_buf_printf(&b, "`\n// must find: %s (culprit %s%s%s%s%s), exit 1; without the defect it passes.\n",
                  r->sig.kind, r->culprit_op < TR_OP_COUNT ? tr_ops[r->culprit_op].name : "?",
                  r->guilty_pass[0] ? ", pass " : "", r->guilty_pass, r->rule[0] ? ", rule " : "", r->rule);
    tr_buf_puts(&b, text);
    st = write_text(dir, "regress.hlo", b.p, d);
  } else if (strncmp(r->target, "xla-cpu", 7) == 0) {
    tr_buf_puts(&b, text);
    st = write_text(dir, "regress.hlo", b.p, d);
    tr_buf_free(&b);
    tr_buf_printf(&b,
                  "# Reproduces the wrong result of XLA CPU that report.md describes:\n"
                  "# compiles regress.hlo as jax's CPU client does (HLO text -> XLA's parser\n"
                  "# -> StableHLO -> compile), runs it on the .npy inputs beside it and\n"
                  "# prints the outputs. Run: python repro.py\n"
                  "import os\n"
                  "import numpy as np\n"
                  "import jax\n"
                  "from jax._src.lib import xla_client as xc\n"
                  "jax.config.update('jax_enable_x64', True)\n"
                  "try:\n"
                  "    import jaxlib._hlo as hlo  # jaxlib >= 0.10.2\n"
                  "except ImportError:\n"
                  "    hlo = xc._xla\n"
                  "here = os.path.dirname(os.path.abspath(__file__))\n"
                  "text = open(os.path.join(here, 'regress.hlo')).read()\n"
                  "proto = hlo.hlo_module_from_text(text).as_serialized_hlo_module_proto()\n"
                  "m = xc._xla.mlir\n"
                  "mlir = m.hlo_to_stablehlo(proto) if hasattr(m, 'hlo_to_stablehlo') else \\\n"
                  "    m.xla_computation_to_mlir_module(xc.XlaComputation(proto))\n"
                  "dev = jax.devices('cpu')[0]\n"
                  "client = dev.client\n"
                  "opts = xc.CompileOptions()\n"
                  "exe = client.compile_and_load(mlir, [dev], opts) if hasattr(client, 'compile_and_load') \\\n"
                  "    else client.compile(mlir, compile_options=opts)\n"
                  "ins = [np.load(os.path.join(here, '%s%%d.npy' %% i)) for i in range(%d)]\n"
                  "outs = [np.asarray(x) for x in exe.execute([jax.device_put(a, dev) for a in ins])]\n"
                  "np.set_printoptions(precision=17)\n"
                  "for i, o in enumerate(outs):\n"
                  "    print('out%%d' %% i, o.dtype, o.shape)\n"
                  "    print(o)\n"
                  "# %s: first wrong element at output %d%s, allowed %.17g +- %.3g\n",
                  ins, nin, r->sig.kind, r->first_output, r->first_index, r->first_value, r->first_bound);
    st = write_text(dir, "repro.py", b.p, d);
  }
  tr_buf_free(&b);
  return st;
}

/* Every file of the bundle into dir (a fresh temporary folder). */
static tr_status write_files(const char *dir, const tr_triage_report *r, tr_diag *d) {
  tr_status st = write_text(dir, "module.hlo", r->module_text, d);
  if (st == TR_OK) st = write_npys(dir, "in", r->inputs, r->ninputs, d);
  if (st == TR_OK && r->reduced_text) st = write_text(dir, "reduced.hlo", r->reduced_text, d);
  if (st == TR_OK && r->reduced_text) st = write_npys(dir, "reduced_in", r->reduced_inputs, r->nreduced_inputs, d);
  if (st == TR_OK && r->kernel_text) st = write_text(dir, "optimized.hlo", r->kernel_text, d);
  if (st == TR_OK) {
    cJSON *js = tr_triage_json(r);
    char *s = tr_json_print(js, true);
    if (!s) {
      cJSON_Delete(js);
      tr_diag_errorf(d, "%s/report.json: cannot make the report", dir);
      return TR_ERR_IO;
    }
    tr_buf b = {0};
    tr_buf_printf(&b, "%s\n", s);
    st = write_text(dir, "report.json", b.p, d);
    tr_buf_free(&b);
    tr_free(s);
    cJSON_Delete(js);
  }
  if (st == TR_OK) {
    tr_buf b = {0};
    tr_triage_markdown(&b, r);
    st = write_text(dir, "report.md", b.p, d);
    tr_buf_free(&b);
  }
  if (st == TR_OK) {
    tr_buf b = {0};
    tr_triage_html(&b, r);
    st = write_text(dir, "report.html", b.p, d);
    tr_buf_free(&b);
  }
  if (st == TR_OK && r->sig.kind[0]) st = write_regression(dir, r, d);
  return st;
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void remove_tree(const char *dir) { nftw(dir, rm_entry, 16, FTW_DEPTH | FTW_PHYS); }

typedef struct {
  const char *dir;
  const tr_triage_report *r;
  tr_diag *d;
  tr_status st;
} write_job;

static void write_fn(void *p) {
  write_job *j = p;
  j->st = write_files(j->dir, j->r, j->d);
}

/* The bundle is written into a temporary folder beside dir, in a heap
 * frame, and moved into place only when complete: a kill, a full disk or
 * running out of memory midway leaves no partial bundle under dir, and a
 * bundle already there is swapped out whole (renameat2's exchange), never
 * mixed with the new files. */
tr_status tr_triage_write(const char *dir, const tr_triage_report *r, tr_diag *d) {
  char tmp[4400];
  if (snprintf(tmp, sizeof tmp, "%s.tmp-XXXXXX", dir) >= (int)sizeof tmp) {
    tr_diag_errorf(d, "%s: path too long", dir);
    return TR_ERR_IO;
  }
  if (!mkdtemp(tmp)) {
    tr_diag_errorf(d, "%s: cannot create a folder beside it: %s", dir, strerror(errno));
    return TR_ERR_IO;
  }
  mode_t um = umask(0);
  umask(um);
  chmod(tmp, 0777 & ~um); /* as mkdir would have made it */
  write_job j = {tmp, r, d, TR_OK};
  size_t bytes = 0;
  if (!tr_heap_run(write_fn, &j, &bytes)) {
    remove_tree(tmp);
    tr_heap_diag(d, dir, "writing the triage bundle", bytes);
    return TR_ERR_IO;
  }
  if (j.st != TR_OK) {
    remove_tree(tmp);
    return j.st;
  }
  /* rename replaces a missing or empty folder; a full one is exchanged
   * with the new one and then removed. */
  if (rename(tmp, dir) == 0) return TR_OK;
  int e = errno;
  if (e == ENOTEMPTY || e == EEXIST) {
    if (renameat2(AT_FDCWD, tmp, AT_FDCWD, dir, RENAME_EXCHANGE) == 0) {
      remove_tree(tmp); /* the old bundle, now under the temporary name */
      return TR_OK;
    }
    e = errno;
    /* A file system without the exchange: the old bundle moves aside
     * first (for a moment there is none, never a mixed one). */
    char old[4420];
    snprintf(old, sizeof old, "%s.old-%s", dir, tmp + strlen(tmp) - 6);
    if ((e == EINVAL || e == ENOSYS) && rename(dir, old) == 0) {
      if (rename(tmp, dir) == 0) {
        remove_tree(old);
        return TR_OK;
      }
      e = errno;
      rename(old, dir); /* put it back */
    }
  }
  tr_diag_errorf(d, "%s: cannot move the bundle into place: %s", dir, strerror(e));
  remove_tree(tmp);
  return TR_ERR_IO;
}
