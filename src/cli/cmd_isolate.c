/* cmd_isolate.c - "trench isolate": hierarchical triage of a finding
 * (src/triage, docs/TRIAGE.md), and the loading, target and report code
 * "trench reduce" (cmd_reduce.c) shares with it. */
#include "cli.h"

#include "../triage/triage.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_isolate = {
  "isolate", "triage a finding: outputs, instruction, pass, kernel, rule",
  "Usage: trench isolate MODULE|BUNDLE [OPTIONS]\n"
  "\n"
  "Triages a module a target gets wrong, level by level (docs/TRIAGE.md):\n"
  "which outputs fail on which seeds; the first wrong instruction, by\n"
  "bisection over prefixes that keep the compiler's context (about log2 N\n"
  "target runs), cross-checked alone and per instruction; the guilty pass\n"
  "by translation validation (builtin: the module after each pass judged\n"
  "with the reference), or code generation and then the wrong fused kernel\n"
  "and its body instruction; the passes whose disabling removes the bug;\n"
  "the one rewrite (rule) by fuel bisection (builtin). A BUNDLE is a folder\n"
  "written by `trench check --save` (module.hlo and inN.npy).\n"
  "\n"
  "Options:\n"
  "  -t, --target SPEC  the target (default builtin)\n"
  "      --seeds N      seeds the outputs level tries (default 3)\n"
  "      --seed S       first seed (default 0)\n"
  "      --input FILE   a .npy file per input, in order, instead of seeds\n"
  "      --profile FILE the target's semantic profile (default: by target)\n"
  "      --strict       no profile\n"
  "      --timeout S    per target run\n"
  CLI_START_TIMEOUT_HELP
  "      --save DIR     write the triage bundle (reports, reduced module,\n"
  "                     regression artifacts) into DIR; for a BUNDLE the\n"
  "                     default is BUNDLE/triage\n"
  "      --json         print report.json instead of the markdown report\n"
  "      --no-passes    skip the pass levels\n"
  "  -v, --verbose      progress on stderr\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  no finding to triage\n"
  "  1  a finding, triaged (or the module does not parse)\n"
  "  2  usage error, unreadable input, trench's own trouble\n",
  run,
};

static bool is_dir(const char *p) {
  struct stat st;
  return stat(p, &st) == 0 && S_ISDIR(st.st_mode);
}

int cli_triage_main(const cli_cmd *cmd, int argc, char **argv, bool reduce) {
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  const char *path = NULL, *spec = "builtin", *profile_arg = NULL, *save = NULL;
  const char *files[64];
  int nfiles = 0;
  bool json = false, strict = false;
  double start_timeout = 0;
  tr_triage_opts to;
  tr_triage_opts_init(&to);
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') {
      if (path) cli_usage_error(cmd, "one module or bundle at a time ('%s' and '%s')", path, o.arg);
      path = o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_is(&o, "-t", "--target")) spec = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--seeds")) to.nseeds = atoi(cli_opt_value(&o));
    else if (cli_opt_is(&o, NULL, "--seed")) to.seed0 = strtoull(cli_opt_value(&o), NULL, 10);
    else if (cli_opt_is(&o, NULL, "--input")) {
      if (nfiles >= 64) cli_usage_error(cmd, "at most 64 --input files");
      files[nfiles++] = cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--profile")) profile_arg = cli_opt_value(&o);
    else if (cli_opt_flag(&o, NULL, "--strict")) strict = true;
    else if (cli_opt_is(&o, NULL, "--timeout")) to.timeout_s = atof(cli_opt_value(&o));
    else if (cli_opt_start_timeout(&o, &start_timeout)) continue;
    else if (cli_opt_is(&o, NULL, "--save")) save = cli_opt_value(&o);
    else if (cli_opt_flag(&o, NULL, "--json")) json = true;
    else if (cli_opt_flag(&o, NULL, "--no-passes")) to.no_passes = true;
    else if (cli_opt_flag(&o, "-v", "--verbose")) to.verbose = true;
    else if (reduce && cli_opt_is(&o, NULL, "--repro")) to.repro_runs = atoi(cli_opt_value(&o));
    else cli_usage_error(cmd, "unknown option '%s'", o.arg);
  }
  if (!path) cli_usage_error(cmd, "a MODULE or BUNDLE is required");
  if (to.nseeds < 1) cli_usage_error(cmd, "--seeds wants a positive count");
  /* A bundle: its module and inputs. */
  char modpath[4200], savedef[4200];
  char **bundle_ins = NULL;
  int nbundle = 0;
  bool bundle = is_dir(path);
  if (bundle) {
    snprintf(modpath, sizeof modpath, "%s/module.hlo", path);
    snprintf(savedef, sizeof savedef, "%s/triage", path);
    if (!save) save = savedef;
    for (int i = 0; i < 64; i++) {
      char p[4300];
      snprintf(p, sizeof p, "%s/in%d.npy", path, i);
      if (access(p, R_OK) != 0) break;
      bundle_ins = realloc(bundle_ins, sizeof(char *) * (size_t)(nbundle + 1));
      bundle_ins[nbundle++] = strdup(p);
    }
  } else {
    snprintf(modpath, sizeof modpath, "%s", path);
  }
  int rc = CLI_EXIT_OK;
  tr_module *m = cli_load(modpath, true, &rc);
  if (!m) return rc;
  to.label = path;
  /* Inputs: --input files, else the bundle's. */
  const char *const *inpaths = nfiles ? files : (const char *const *)bundle_ins;
  int ninp = nfiles ? nfiles : nbundle;
  tr_tensor **ins = NULL;
  tr_diag d = {0};
  if (ninp) {
    const tr_shape *lv[256];
    int nl = 0;
    for (int p = 0; p < m->entry->nparams && nl < 256; p++)
      nl += tr_shape_leaves(m->entry->params[p]->shape, lv + nl, 256 - nl);
    if (nl != ninp) {
      fprintf(stderr, "trench %s: the module takes %d inputs, %d given\n", cmd->name, nl, ninp);
      return CLI_EXIT_USAGE;
    }
    ins = calloc((size_t)ninp, sizeof *ins);
    for (int i = 0; i < ninp; i++)
      if (tr_npy_read(inpaths[i], lv[i]->dtype, &ins[i], &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        return CLI_EXIT_USAGE;
      }
    to.inputs = ins;
    to.ninputs = ninp;
  }
  /* Target and profile, as trench check finds them. */
  tr_target_config tc;
  tr_target_config_init(&tc);
  tc.guard = cli_guard_slot();
  char home[4096] = "";
  tc.home = cli_home(home, sizeof home);
  if (to.timeout_s > 0) tc.timeout_s = to.timeout_s;
  if (start_timeout > 0) tc.start_timeout_s = start_timeout;
  tr_profile *prof = NULL;
  char ppath[4200] = "";
  if (cli_profile_open(spec, profile_arg, strict, &prof, ppath, sizeof ppath)) return CLI_EXIT_USAGE;
  to.profile = prof;
  tr_target *t = NULL;
  if (tr_target_open(spec, &tc, &t, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    tr_profile_free(prof);
    tr_inputs_free(ins, ninp);
    for (int i = 0; i < nbundle; i++) tr_free(bundle_ins[i]);
    tr_free(bundle_ins);
    tr_module_free(m);
    return CLI_EXIT_USAGE;
  }
  tr_triage_report r;
  tr_status st = tr_isolate(t, m, &to, &r, &d);
  if (st == TR_OK && reduce && r.outputs.state == TR_LEVEL_FOUND) st = tr_reduce(t, m, &to, &r, &d);
  if (st != TR_OK) {
    tr_diag_print(&d, stderr);
    rc = CLI_EXIT_USAGE;
  } else {
    rc = r.outputs.state == TR_LEVEL_FOUND ? CLI_EXIT_FINDING : CLI_EXIT_OK;
    if (json) {
      cJSON *js = tr_triage_json(&r);
      char *s = tr_json_print(js, true);
      if (s) printf("%s\n", s);
      else {
        fprintf(stderr, "trench %s: out of memory printing the report\n", cmd->name);
        rc = CLI_EXIT_USAGE;
      }
      tr_free(s);
      cJSON_Delete(js);
    } else {
      tr_buf b = {0};
      tr_triage_markdown(&b, &r);
      fputs(tr_buf_str(&b), stdout);
      tr_buf_free(&b);
    }
    if (save && r.outputs.state == TR_LEVEL_FOUND) {
      if (tr_triage_write(save, &r, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        rc = CLI_EXIT_USAGE;
      } else {
        fprintf(stderr, "trench %s: bundle in %s\n", cmd->name, save);
      }
    }
  }
  tr_triage_report_free(&r);
  tr_target_close(t);
  tr_profile_free(prof);
  tr_inputs_free(ins, ninp);
  for (int i = 0; i < nbundle; i++) tr_free(bundle_ins[i]);
  tr_free(bundle_ins);
  tr_module_free(m);
  tr_diag_clear(&d);
  return cli_finish(rc);
}

static int run(int argc, char **argv) { return cli_triage_main(&cli_cmd_isolate, argc, argv, false); }
