/* cmd_check.c - trench check: the command line over tr_check
 * (src/oracle/check.h): options, the target and profile, one report per
 * module rendered as text or JSON, totals, bundle names, the JSONL log. */
#include "cli.h"

#include "../oracle/check.h"

#include <errno.h>
#include <fcntl.h>
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
  "The target's profile (profiles/NAME.conf, docs/PROFILES.md) excuses its\n"
  "by-design deviations, each counted by rule (\"excused N by RULE\");\n"
  "--strict uses none.\n"
  "Verdicts: pass, mismatch, weak (the check says little: constant output,\n"
  "mostly uncertain, values tiny against their bounds), and the target's\n"
  "own: crash, hang, compile-error, error, protocol-error, unsupported.\n"
  "\n"
  "Targets: builtin, interp (the reference), xla-cpu (also takes StableHLO),\n"
  "iree-cpu, torch-eager, torch-inductor, cmd:PROGRAM (docs/PROTOCOL.md).\n"
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
  "      --realisation R  a torch realisation\n"
  "      --fill-elided  give constants written {...} deterministic values;\n"
  "                     the target gets the module with those values written\n"
  "      --per-instruction[=all|chains]\n"
  "                     also judge every entry instruction alone on the\n"
  "                     target's values of its operands (deep models); a\n"
  "                     mismatch is a finding. chains: single-user elementwise\n"
  "                     producers stay fused with their user (docs/ORACLE.md)\n"
  CLI_REF_LIMITS_HELP
  "                       (check: the deadline is --timeout or 60 s)\n"
  CLI_MAX_COST_HELP
  "      --max-memory SIZE  decline a module over this memory budget\n"
  CLI_START_TIMEOUT_HELP
  "      --log FILE     append one JSON line per module to FILE, each synced\n"
  "                     to disk as it is written (a killed run keeps them)\n"
  "      --show-received  diff of the module the target received and MODULE\n"
  "      --json         print the report as JSON instead of text\n"
  "      --save DIR     write a bundle for the first finding (or the last\n"
  "                     seed): module, inputs, outputs, report.json, README;\n"
  "                     DIR must not exist (bundles are never mixed) and gets\n"
  "                     a COMPLETE marker last; several MODULEs: DIR/NAME\n"
  "                     (NAME-2, ... when taken); docs/CLI.md\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  every check passed, was weak, or the target does not support it\n"
  "  1  a finding: mismatch, crash, hang, compile-error, error or\n"
  "     protocol-error (or MODULE has a syntax or verify error)\n"
  "  2  usage error, unreadable MODULE or --input, the target cannot be\n"
  "     opened, a bundle cannot be written, or the reference declines\n"
  "     MODULE (unsupported, over a limit)\n",
  run,
};

/* What every module of one invocation shares. */
typedef struct {
  tr_target *t;          /* opened on first need (target_get) */
  const tr_target_config *tc;
  bool open_failed;      /* the target could not be opened: stop */
  const char *spec;
  tr_check_opts co;      /* the options every module is checked with */
  char **files;          /* --input, in order */
  int nfiles;
  const char *save;      /* --save DIR, or NULL */
  bool many;             /* several modules: bundles go to DIR/NAME */
  bool json_mode;        /* --json */
  bool fill_elided;      /* --fill-elided */
  int log_fd;            /* --log, or -1 */
  uint64_t max_memory;   /* --max-memory (0: no budget) */
  double max_cost;       /* --max-cost (0: derived from the deadline) */
} check_env;

/* The target, opened the first time a module needs it: a module declined
 * before it runs (over the memory budget) never waits for an adapter to
 * start. NULL, after printing why, when it cannot be opened. */
static tr_target *target_get(void *ctx) {
  check_env *env = ctx;
  if (env->t || env->open_failed) return env->t;
  tr_diag d = {0};
  if (tr_target_open(env->spec, env->tc, &env->t, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    env->open_failed = true;
    env->t = NULL;
  }
  tr_diag_clear(&d);
  return env->t;
}

/* Overall counts of a multi-module run (printed at the end). */
typedef struct {
  int modules, checks, pass, weak, mismatch, unsupported, crash, other, errors;
  /* --per-instruction: instructions judged over all runs, and runs whose
   * anchored module gave no outputs */
  int pi_checked, pi_pass, pi_weak, pi_mismatch, pi_skipped, pi_noruns;
  int pi_excused[TR_PR_COUNT]; /* instructions each profile rule excused */
  int pi_narrowed;             /* judged against a narrowed reference */
  int received_checked, received_changed; /* modules whose received module
                                             was compared / differed */
  int received_equivalent;                /* ... was an equivalent form */
} check_totals;

/* A fresh "DIR/NAME" for module path: NAME is the file name without
 * ".hlo", with "-2", "-3", ... when that folder exists already. */
static void bundle_dir(char *out, size_t n, const char *dir, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  size_t bl = strlen(base);
  if (bl > 4 && strcmp(base + bl - 4, ".hlo") == 0) bl -= 4;
  snprintf(out, n, "%s/%.*s", dir, (int)bl, base);
  struct stat st;
  for (int k = 2; stat(out, &st) == 0 && k < 100000; k++)
    snprintf(out, n, "%s/%.*s-%d", dir, (int)bl, base, k);
}

/* Counts one run's verdicts into tot: a run whose target gave no outputs
 * is one check, else one per output. */
static void count_run(check_totals *tot, cJSON *js) {
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

/* Prints each run's lines as soon as it is judged (progress survives a
 * killed run: stdout is line-buffered). */
static void print_run(void *user, const tr_check_report *r, int i) {
  const check_env *env = user;
  if (env->json_mode) return;
  tr_buf b = {0};
  tr_check_run_text(&b, r, i);
  fputs(tr_buf_str(&b), stdout);
  fflush(stdout);
  tr_buf_free(&b);
}

/* Reads the --input files with each parameter's dtype as the hint.
 * Returns false with a message on stderr. */
static bool read_inputs(const check_env *env, const tr_module *m, tr_tensor ***out, int *nout) {
  tr_diag d = {0};
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  tr_input_leaf *lv = NULL;
  int nins = 0;
  if (tr_inputs_plan(m, &cfg, &lv, &nins, &d) != TR_OK || nins != env->nfiles) {
    if (d.nmsgs) tr_diag_print(&d, stderr);
    else fprintf(stderr, "trench check: MODULE takes %d inputs, %d --input given\n", nins, env->nfiles);
    tr_diag_clear(&d);
    tr_free(lv);
    return false;
  }
  tr_tensor **ins = tr_xcalloc((size_t)nins + 1, sizeof *ins);
  bool ok = true;
  for (int i = 0; ok && i < nins; i++) {
    ok = tr_npy_read(env->files[i], lv[i].shape->dtype, &ins[i], &d) == TR_OK;
    if (ok && (ins[i]->rank != lv[i].shape->rank ||
               (ins[i]->rank && memcmp(ins[i]->dims, lv[i].shape->dims, sizeof(int64_t) * (size_t)ins[i]->rank)))) {
      tr_diag_errorf(&d, "%s: shape does not match input %d of MODULE", env->files[i], i);
      ok = false;
    }
  }
  tr_free(lv);
  if (!ok) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    tr_inputs_free(ins, nins);
    return false;
  }
  *out = ins;
  *nout = nins;
  return true;
}

/* Appends one line to the --log file and syncs it. */
static void log_report(const check_env *env, cJSON *rep) {
  if (env->log_fd < 0 || !rep) return;
  char *s = tr_json_print(rep, false);
  if (!s) {
    fprintf(stderr, "trench check: cannot append to the log: out of memory\n");
    return;
  }
  size_t n = strlen(s);
  s[n] = '\n'; /* the NUL becomes the newline; written as n + 1 bytes */
  if (write(env->log_fd, s, n + 1) != (ssize_t)(n + 1) || fsync(env->log_fd) != 0)
    fprintf(stderr, "trench check: cannot append to the log: %s\n", strerror(errno));
  tr_free(s);
}

/* Checks one module over every seed; returns its exit code and sets
 * *report (owned by the caller). */
static int check_module(check_env *env, const char *path, check_totals *tot, cJSON **report) {
  int rc = CLI_EXIT_OK;
  tot->modules++;
  tr_parse_opts po = {.fill_elided = env->fill_elided};
  char *mlir = NULL;
  tr_module *m = cli_load_source(path, target_get, env, &po, &mlir, &rc);
  if (!m && env->open_failed) return CLI_EXIT_USAGE;
  if (!m) {
    cJSON *rep = cJSON_CreateObject();
    cJSON_AddStringToObject(rep, "module", path);
    cJSON_AddStringToObject(rep, "target", env->spec);
    /* exit 1 (an input that does not parse or verify) but no finding:
     * no target ran */
    cJSON_AddStringToObject(rep, "summary", rc == CLI_EXIT_USAGE ? "error" : "invalid");
    cJSON_AddStringToObject(rep, "error", rc == CLI_EXIT_USAGE ? "cannot read the module"
                                                               : "the module does not parse or verify");
    if (!env->json_mode) printf("check: %s (%s on %s)\n", rc == CLI_EXIT_USAGE ? "error" : "invalid", path, env->spec);
    tot->errors++;
    *report = rep;
    return rc;
  }
  /* Over the memory budget: declined before any input is drawn, like a
   * module over the reference's other limits (exit 2, no verdict). */
  bool fits = cli_memory_fits(m, true, 0, env->max_memory, "trench check", path);
  if (!fits || !cli_cost_fits(m, env->co.ref_timeout_s, env->max_cost, "trench check", path)) {
    cJSON *rep = cJSON_CreateObject();
    cJSON_AddStringToObject(rep, "module", path);
    cJSON_AddStringToObject(rep, "target", env->spec);
    cJSON_AddStringToObject(rep, "summary", "declined");
    cJSON_AddStringToObject(rep, "declined", fits ? "over the cost budget (--max-cost, or the reference's deadline)"
                                                  : "over the memory budget (--max-memory)");
    if (!env->json_mode) printf("check: declined (%s on %s)\n", path, env->spec);
    fflush(stdout);
    log_report(env, rep);
    tot->errors++;
    *report = rep;
    tr_module_free(m);
    tr_free(mlir);
    return CLI_EXIT_USAGE;
  }
  if (!target_get(env)) {
    tr_module_free(m);
    tr_free(mlir);
    return CLI_EXIT_USAGE;
  }
  tr_check_opts co = env->co;
  co.label = path;
  co.module_text = mlir;
  co.on_run = print_run;
  co.user = env;
  char savedir[4200];
  if (env->save && env->many) {
    if (mkdir(env->save, 0777) != 0 && errno != EEXIST)
      fprintf(stderr, "trench check: cannot create %s: %s\n", env->save, strerror(errno));
    bundle_dir(savedir, sizeof savedir, env->save, path);
    co.save_dir = savedir;
  } else {
    co.save_dir = env->save;
  }
  tr_tensor **ins = NULL;
  int nins = 0;
  if (env->nfiles) {
    if (!read_inputs(env, m, &ins, &nins)) {
      tr_module_free(m);
      tot->errors++;
      *report = NULL;
      return CLI_EXIT_USAGE;
    }
    co.inputs = ins;
    co.ninputs = nins;
  }
  if (!env->json_mode && co.profile) {
    int ndots = 0;
    tr_module *nm = tr_profile_narrowed(co.profile, m, &ndots);
    if (nm)
      printf("narrowed: %d dot%s or convolution%s judged as the profile's %s rule computes them "
             "(--strict: the dtype's own accumulation)\n", ndots, ndots == 1 ? "" : "s",
             ndots == 1 ? "" : "s", tr_prule_name(TR_PR_DOT_ACCUMULATE));
    tr_module_free(nm);
  }
  tr_diag d = {0};
  tr_check_report r;
  tr_status st = tr_check(env->t, m, &co, &r, &d);
  if (st != TR_OK) {
    tr_diag_print(&d, stderr);
    rc = CLI_EXIT_USAGE;
  }
  tr_diag_clear(&d);
  if (mlir) cJSON_AddStringToObject(r.json, "source", "stablehlo");
  if (r.received_text && !env->json_mode) fputs(r.received_text, stdout);
  tot->received_checked += r.received_checked;
  tot->received_changed += r.received_changed;
  tot->received_equivalent += r.received_equivalent;
  if (r.declined) {
    fprintf(stderr, "trench check: the reference cannot evaluate %s:\n%s\n", path, r.declined);
    rc = CLI_EXIT_USAGE;
  }
  cJSON *runs = cJSON_GetObjectItem(r.json, "runs");
  for (cJSON *js = runs ? runs->child : NULL; js; js = js->next) count_run(tot, js);
  if (r.outcome == TR_CHECK_FINDING) rc = cli_worse(rc, CLI_EXIT_FINDING);
  if (rc == CLI_EXIT_USAGE) tot->errors++;
  const char *summary = r.outcome == TR_CHECK_DECLINED ? "declined"
                        : rc == CLI_EXIT_USAGE           ? "error"
                                                         : tr_check_outcome_name(r.outcome);
  /* tr_check sets "summary" unless it stopped early (trench's trouble). */
  if (cJSON_GetObjectItem(r.json, "summary"))
    cJSON_ReplaceItemInObject(r.json, "summary", cJSON_CreateString(summary));
  else
    cJSON_AddStringToObject(r.json, "summary", summary);
  if (!env->json_mode)
    printf("check: %s (%s on %s%s)\n", summary, path, env->spec,
           r.received_changed      ? "; the module it received was changed"
           : r.received_equivalent ? "; it received an equivalent form"
                                   : "");
  fflush(stdout);
  log_report(env, r.json);
  *report = r.json;
  r.json = NULL;
  tr_check_report_free(&r);
  if (ins) tr_inputs_free(ins, nins);
  tr_module_free(m);
  tr_free(mlir);
  return rc;
}

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_check;
  const char *spec = NULL;
  char **files = tr_xcalloc((size_t)argc + 1, sizeof(char *));
  char **paths = tr_xcalloc((size_t)argc + 1, sizeof(char *));
  int nfiles = 0, npaths = 0;
  check_env env;
  memset(&env, 0, sizeof env);
  env.log_fd = -1;
  env.max_memory = cli_memory_available();
  tr_check_opts_init(&env.co); /* seeds, k, how seeds draw inputs (--dist, --specials) */
  const char *profile_arg = NULL, *log_path = NULL, *realisation = NULL;
  bool strict = false;
  double timeout = 0, start_timeout = 0;
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
      long ns = strtol(v, &end, 10);
      if (!*v || *end || ns < 1 || ns > 1000000)
        cli_usage_error(cmd, "--seeds needs a count from 1, not '%s'", v);
      env.co.nseeds = (int)ns;
    } else if (cli_opt_is(&o, NULL, "--seed")) {
      const char *v = cli_opt_value(&o);
      errno = 0;
      env.co.seed0 = strtoull(v, &end, 0);
      if (!*v || *end || errno || v[0] == '-')
        cli_usage_error(cmd, "--seed needs a non-negative integer, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--input")) {
      files[nfiles++] = (char *)cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--dist")) {
      const char *v = cli_opt_value(&o);
      tr_dist dist;
      if (!tr_dist_lookup(v, &dist) || dist == TR_DIST_DEFAULT)
        cli_usage_error(cmd, "unknown distribution '%s'", v);
      if (tr_dist_is_index(dist)) env.co.draw.index = dist;
      else env.co.draw.data = dist;
    } else if (cli_opt_is(&o, NULL, "--specials")) {
      const char *v = cli_opt_value(&o);
      double r = strtod(v, &end);
      if (!*v || *end || !(r >= 0 && r <= 1))
        cli_usage_error(cmd, "--specials needs a rate in [0, 1], not '%s'", v);
      env.co.draw.special_rate = r;
    } else if (cli_opt_is(&o, NULL, "--k")) {
      const char *v = cli_opt_value(&o);
      env.co.k = strtod(v, &end);
      if (!*v || *end || !(env.co.k > 0)) cli_usage_error(cmd, "--k needs a positive number, not '%s'", v);
    } else if (cli_opt_start_timeout(&o, &start_timeout)) {
      /* set */
    } else if (cli_opt_is(&o, NULL, "--realisation")) {
      realisation = cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--timeout")) {
      const char *v = cli_opt_value(&o);
      timeout = strtod(v, &end);
      if (!*v || *end || !(timeout > 0))
        cli_usage_error(cmd, "--timeout needs seconds > 0, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--profile")) {
      profile_arg = cli_opt_value(&o);
    } else if (cli_opt_flag(&o, NULL, "--strict")) {
      strict = true;
    } else if (cli_opt_is(&o, NULL, "--per-instruction")) {
      env.co.per_instruction = 1;
      if (o.val && strcmp(o.val, "chains") == 0) env.co.per_instruction = 2;
      else if (o.val && strcmp(o.val, "all") != 0)
        cli_usage_error(cmd, "--per-instruction takes all or chains, not '%s'", o.val);
    } else if (cli_opt_flag(&o, NULL, "--fill-elided")) {
      env.fill_elided = true;
    } else if (cli_opt_flag(&o, NULL, "--show-received")) {
      env.co.show_received = true;
    } else if (cli_opt_flag(&o, NULL, "--json")) {
      env.json_mode = true;
    } else if (cli_opt_is(&o, NULL, "--save")) {
      env.save = cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--log")) {
      log_path = cli_opt_value(&o);
    } else if (cli_opt_ref_limits(&o, &env.co.ref_timeout_s, &env.co.max_trips) ||
               cli_opt_max_cost(&o, &env.max_cost)) {
      /* set */
    } else if (cli_opt_is(&o, NULL, "--max-memory")) {
      const char *v = cli_opt_value(&o);
      if (!cli_parse_size(v, &env.max_memory))
        cli_usage_error(cmd, "--max-memory needs a size such as 4G (0: no budget), not '%s'", v);
    } else {
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
    }
  }
  if (!npaths) cli_usage_error(cmd, "no MODULE given");
  if (!spec) cli_usage_error(cmd, "no --target given");
  if (strict && profile_arg) cli_usage_error(cmd, "--strict and --profile exclude each other");
  if (nfiles && npaths > 1) cli_usage_error(cmd, "--input needs a single MODULE (%d given)", npaths);
  env.spec = spec;
  env.files = files;
  env.nfiles = nfiles;
  env.many = npaths > 1;
  if (nfiles) env.co.nseeds = 1;
  env.co.timeout_s = timeout;
  /* The reference never runs unbounded in a check: --ref-timeout, else
   * --timeout, else 60 s (a runaway loop costs one verdict). */
  if (!env.co.ref_timeout_s) env.co.ref_timeout_s = timeout > 0 ? timeout : 60;
  tr_target_config tc;
  tr_target_config_init(&tc);
  /* Without TRENCH_HOME, the source tree is the one this binary was built
   * in (BUILD/trench): where adapters/ and .venv/ are. */
  char home[4096] = "";
  tc.home = cli_home(home, sizeof home);
  if (timeout > 0) tc.timeout_s = timeout;
  if (start_timeout > 0) tc.start_timeout_s = start_timeout;
  tc.guard = cli_guard_slot();
  tc.realisation = realisation;
  tr_profile *prof = NULL;
  char ppath[4200] = "";
  if (cli_profile_open(spec, profile_arg, strict, &prof, ppath, sizeof ppath)) {
    tr_free(files);
    tr_free(paths);
    return CLI_EXIT_USAGE;
  }
  /* One target process for every module: the adapter starts once, when
   * the first module needs it (target_get). */
  env.tc = &tc;
  env.co.profile = prof;
  env.co.profile_path = prof ? ppath : NULL;
  if (log_path && (env.log_fd = open(log_path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666)) < 0) {
    fprintf(stderr, "trench check: cannot open the log %s: %s\n", log_path, strerror(errno));
    tr_profile_free(prof);
    tr_free(files);
    tr_free(paths);
    return CLI_EXIT_USAGE;
  }
  if (prof && !env.json_mode) printf("profile: %s (--strict to see every deviation)\n", ppath);
  check_totals tot;
  memset(&tot, 0, sizeof tot);
  int code = CLI_EXIT_OK;
  cJSON *all = env.many ? cJSON_CreateArray() : NULL;
  cJSON *one = NULL;
  for (int i = 0; i < npaths; i++) {
    cJSON *rep = NULL;
    code = cli_worse(code, check_module(&env, paths[i], &tot, &rep));
    if (env.open_failed) {
      cJSON_Delete(rep);
      cJSON_Delete(all);
      tr_profile_free(prof);
      tr_free(files);
      tr_free(paths);
      return CLI_EXIT_USAGE;
    }
    if (!rep) continue;
    if (all) cJSON_AddItemToArray(all, rep);
    else one = rep;
  }
  if (env.json_mode) {
    char *s = tr_json_print(all ? all : one, true);
    if (s) puts(s);
    else fprintf(stderr, "trench check: out of memory printing the report\n");
    tr_free(s);
  } else if (env.many) {
    printf("check: %d modules, %d checks: %d pass, %d weak, %d mismatch, %d unsupported, "
           "%d crash, %d other, %d errors (on %s)\n",
           tot.modules, tot.checks, tot.pass, tot.weak, tot.mismatch, tot.unsupported,
           tot.crash, tot.other, tot.errors, spec);
    if (tot.received_checked)
      printf("check: received: %d of %d modules reached the target changed, %d as an equivalent form\n",
             tot.received_changed, tot.received_checked, tot.received_equivalent);
    if (env.co.per_instruction) {
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
  if (env.log_fd >= 0) close(env.log_fd);
  tr_target_close(env.t);
  tr_profile_free(prof);
  tr_free(files);
  tr_free(paths);
  return cli_finish(code);
}
