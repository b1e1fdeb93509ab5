/* cmd_fuzz.c - "trench fuzz" and "trench merge": the command line over
 * the campaign (src/fuzz/campaign.h): options, the target's profile, the
 * default corpus, signals; and the merge of shard folders. */
#include "cli.h"

#include "../fuzz/campaign.h"
#include "../fuzz/gen.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int run_fuzz(int argc, char **argv);
static int run_merge(int argc, char **argv);

const cli_cmd cli_cmd_fuzz = {
  "fuzz", "a fuzz campaign: mutated and generated modules against a target",
  "Usage: trench fuzz --target T [--time D | --count N] [--jobs J] [--seed S]\n"
  "                   [--shard K/N] [--corpus DIR]... [--out DIR] [--resume]\n"
  "\n"
  "Makes tests (generated modules, trench gen, and corpus modules, each\n"
  "through up to three mutators, trench mutate --list), checks each on the target\n"
  "against the reference over --seeds input seeds (as trench check), and\n"
  "keeps each finding as a bundle in OUT/findings/SIGNATURE, one per\n"
  "signature (verdict class, op of the first wrong output, dtype). Every\n"
  "test is a line of OUT/log.jsonl; a killed campaign continues with\n"
  "--resume. The same seed and shard give the same tests. docs/FUZZ.md.\n"
  "\n"
  "Options:\n"
  "  -t, --target T         the target (builtin, builtin:inject=NAME, xla-cpu,\n"
  "                         cmd:...); its profile as trench check finds it\n"
  "      --time D           stop after D (seconds, or 30s, 10m, 2h)\n"
  "  -n, --count N          stop after N tests of this shard\n"
  "  -j, --jobs J           worker processes, each with its own target (1)\n"
  "  -s, --seed S           the campaign seed (0)\n"
  "      --shard K/N        run global tests K, K+N, K+2N, ... (0/1)\n"
  "      --corpus PATH      .hlo files or folders (repeatable; default: the\n"
  "                         shipped examples/, tests/hlo/, tests/xla-suite/);\n"
  "                         .mlir files (jax's StableHLO) are converted by the\n"
  "                         target and mutated as HLO (docs/FUZZ.md)\n"
  "      --no-corpus        no default corpus (generated modules only)\n"
  "      --no-gen           no generated modules (corpus mutations only)\n"
  "      --gen-size N       instructions per generated module (about; 20)\n"
  "      --seeds N          input seeds per test (2)\n"
  "      --realisation NAME torch-eager, torch-inductor: every run in this\n"
  "                         realisation (docs/TORCH.md), not by hash\n"
  "  -o, --out DIR          the campaign folder (fuzz-out)\n"
  "      --resume           continue the campaign in DIR\n"
  "      --until-finding    stop at the first finding\n"
  "      --triage           isolate and reduce each new finding in the\n"
  "                         background (trench reduce; BUNDLE/triage)\n"
  "      --triage-timeout S one finding's triage (600)\n"
  "      --mutator-cmd CMD  also mutate with CMD (sh -c): module text on\n"
  "                         stdin, a module on stdout, $TRENCH_SEED set\n"
  "      --generator-cmd CMD  also test modules CMD prints ($TRENCH_SEED)\n"
  "      --profile FILE     the target's semantic profile\n"
  "      --strict           no profile\n"
  "      --test-timeout S   a test on trench's side (120; at least the\n"
  "                         target's runs: 20 s per seed for builtin and\n"
  "                         interp, 60 for process targets, iree-cpu 120,\n"
  "                         torch-inductor 180; and each run may first\n"
  "                         restart the target: --start-timeout)\n"  CLI_START_TIMEOUT_HELP
  "  -q, --quiet            no progress line\n"
  "  -h, --help             show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  the campaign ran; no finding\n"
  "  1  the campaign ran; findings (see OUT/findings)\n"
  "  2  usage error, nothing to test, unusable OUT\n",
  run_fuzz,
};

const cli_cmd cli_cmd_merge = {
  "merge", "merge fuzz campaign folders (shards) into one",
  "Usage: trench merge --out DIR CAMPAIGN...\n"
  "\n"
  "Combines the logs of the campaign folders (in global test order) and\n"
  "their findings (the first bundle of each signature) into DIR, with\n"
  "summary.json and the closing table.\n"
  "\n"
  "Options:\n"
  "  -o, --out DIR  the merged folder (new)\n"
  "  -h, --help     show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  merged; no finding\n"
  "  1  merged; findings\n"
  "  2  usage error, a folder that is not a campaign\n",
  run_merge,
};

/* The built-in generator behind the campaign's seam. */
static tr_status gen_fn(void *user, uint64_t seed, tr_module **out, tr_diag *d) {
  tr_gen_opts g = *(const tr_gen_opts *)user;
  g.seed = seed;
  return tr_gen_module(&g, out, d);
}

static volatile sig_atomic_t stop_flag;
static void on_signal(int s) {
  (void)s;
  stop_flag = 1;
}

static double parse_duration(const cli_cmd *cmd, const char *v) {
  char *end;
  double x = strtod(v, &end);
  double mul = 1;
  if (*end == 's') end++;
  else if (*end == 'm') mul = 60, end++;
  else if (*end == 'h') mul = 3600, end++;
  if (end == v || *end || x <= 0) cli_usage_error(cmd, "--time wants a duration (30, 30s, 10m, 2h), not '%s'", v);
  return x * mul;
}

/* The source tree: $TRENCH_HOME, else the folder above BUILD/trench. */
static void find_home(char *home, size_t n) {
  const char *h = getenv("TRENCH_HOME");
  if (h) {
    snprintf(home, n, "%s", h);
    return;
  }
  home[0] = 0;
  ssize_t k = readlink("/proc/self/exe", home, n - 1);
  if (k <= 0) return;
  home[k] = 0;
  for (int up = 0; up < 2; up++) {
    char *sl = strrchr(home, '/');
    if (sl) *sl = 0;
  }
}

static int run_fuzz(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_fuzz;
  tr_fuzz_opts fo;
  tr_fuzz_opts_init(&fo);
  fo.out = "fuzz-out";
  const char **corp = tr_xcalloc((size_t)argc + 4, sizeof(char *));
  int ncorp = 0;
  const char *profile_arg = NULL;
  bool strict = false, quiet = false, no_gen = false, no_corpus = false;
  tr_gen_opts gen;
  tr_gen_opts_init(&gen);
  char *end;
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') cli_usage_error(cmd, "unexpected operand '%s'", o.arg);
    cli_opt_help(&o);
    if (cli_opt_is(&o, "-t", "--target")) fo.target = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--time")) fo.time_s = parse_duration(cmd, cli_opt_value(&o));
    else if (cli_opt_is(&o, "-n", "--count")) {
      const char *v = cli_opt_value(&o);
      fo.count = strtol(v, &end, 10);
      if (!*v || *end || fo.count < 1) cli_usage_error(cmd, "--count wants a positive number, not '%s'", v);
    } else if (cli_opt_is(&o, "-j", "--jobs")) {
      const char *v = cli_opt_value(&o);
      fo.jobs = (int)strtol(v, &end, 10);
      if (!*v || *end || fo.jobs < 1 || fo.jobs > 256) cli_usage_error(cmd, "--jobs wants 1..256, not '%s'", v);
    } else if (cli_opt_is(&o, "-s", "--seed")) {
      const char *v = cli_opt_value(&o);
      fo.seed = strtoull(v, &end, 0);
      if (!*v || *end) cli_usage_error(cmd, "--seed wants a number, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--shard")) {
      const char *v = cli_opt_value(&o);
      if (sscanf(v, "%d/%d", &fo.shard, &fo.nshards) != 2 || fo.nshards < 1 || fo.shard < 0 ||
          fo.shard >= fo.nshards)
        cli_usage_error(cmd, "--shard wants K/N with 0 <= K < N, not '%s'", v);
    } else if (cli_opt_is(&o, NULL, "--corpus")) corp[ncorp++] = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--seeds")) {
      const char *v = cli_opt_value(&o);
      fo.nseeds = (int)strtol(v, &end, 10);
      if (!*v || *end || fo.nseeds < 1 || fo.nseeds > 100) cli_usage_error(cmd, "--seeds wants 1..100, not '%s'", v);
    } else if (cli_opt_is(&o, "-o", "--out")) fo.out = cli_opt_value(&o);
    else if (cli_opt_flag(&o, NULL, "--resume")) fo.resume = true;
    else if (cli_opt_flag(&o, NULL, "--until-finding")) fo.until_finding = true;
    else if (cli_opt_flag(&o, NULL, "--triage")) fo.triage = true;
    else if (cli_opt_is(&o, NULL, "--triage-timeout")) fo.triage_timeout_s = parse_duration(cmd, cli_opt_value(&o));
    else if (cli_opt_is(&o, NULL, "--mutator-cmd")) fo.mutator_cmd = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--generator-cmd")) fo.generator_cmd = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--profile")) profile_arg = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--realisation")) fo.tcfg.realisation = cli_opt_value(&o);
    else if (cli_opt_flag(&o, NULL, "--strict")) strict = true;
    else if (cli_opt_is(&o, NULL, "--test-timeout")) fo.test_timeout_s = parse_duration(cmd, cli_opt_value(&o));
    else if (cli_opt_start_timeout(&o, &fo.tcfg.start_timeout_s)) continue;
    else if (cli_opt_flag(&o, "-q", "--quiet")) quiet = true;
    else if (cli_opt_flag(&o, NULL, "--no-gen")) no_gen = true;
    else if (cli_opt_flag(&o, NULL, "--no-corpus")) no_corpus = true;
    else if (cli_opt_is(&o, NULL, "--gen-size")) {
      const char *v = cli_opt_value(&o);
      gen.size = (int)strtol(v, &end, 10);
      if (!*v || *end || gen.size < 1 || gen.size > 10000) cli_usage_error(cmd, "--gen-size wants 1..10000, not '%s'", v);
    }
    else cli_usage_error(cmd, "unknown option '%s'", o.arg);
  }
  if (!fo.target) cli_usage_error(cmd, "no --target");
  if (strict && profile_arg) cli_usage_error(cmd, "--strict and --profile exclude each other");
  char home[4096];
  find_home(home, sizeof home);
  if (home[0]) fo.tcfg.home = home;
  fo.tcfg.guard = cli_guard_slot();
  static char defaults[3][4200];
  if (!no_gen) {
    fo.gen = gen_fn;
    fo.gen_user = &gen;
    fo.gen_version = TR_GEN_VERSION;
  }
  if (!ncorp && !no_corpus && !fo.generator_cmd && home[0]) {
    const char *sub[3] = {"examples", "tests/hlo", "tests/xla-suite"};
    for (int i = 0; i < 3; i++) {
      snprintf(defaults[i], sizeof defaults[i], "%s/%s", home, sub[i]);
      if (access(defaults[i], R_OK) == 0) corp[ncorp++] = defaults[i];
    }
  }
  fo.corpus = corp;
  fo.ncorpus = ncorp;
  /* The profile, as trench check finds it. */
  char ppath[4300] = "";
  tr_profile *prof = NULL;
  tr_diag d = {0};
  if (cli_profile_open(fo.target, profile_arg, strict, &prof, ppath, sizeof ppath)) {
    tr_free(corp);
    return CLI_EXIT_USAGE;
  }
  fo.profile = prof;
  fo.profile_path = prof ? ppath : NULL;
  fo.progress = !quiet && isatty(2);
  fo.stop = &stop_flag;
  fo.summary = stdout;
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_signal;
  sigaction(SIGINT, &sa, NULL);
  sigaction(SIGTERM, &sa, NULL);
  tr_fuzz_stats st;
  tr_status s = tr_fuzz_run(&fo, &st, &d);
  tr_profile_free(prof);
  tr_free(corp);
  if (s != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    return CLI_EXIT_USAGE;
  }
  return st.findings || st.trench_crash ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}

static int run_merge(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_merge;
  const char *out = NULL;
  const char **ins = tr_xcalloc((size_t)argc + 1, sizeof(char *));
  int nins = 0;
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') {
      ins[nins++] = o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_is(&o, "-o", "--out")) out = cli_opt_value(&o);
    else cli_usage_error(cmd, "unknown option '%s'", o.arg);
  }
  if (!out) cli_usage_error(cmd, "no --out");
  if (!nins) cli_usage_error(cmd, "no campaign folders");
  tr_fuzz_stats st;
  tr_diag d = {0};
  tr_status s = tr_fuzz_merge(out, ins, nins, &st, stdout, &d);
  tr_free(ins);
  if (s != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    return CLI_EXIT_USAGE;
  }
  return st.findings ? CLI_EXIT_FINDING : CLI_EXIT_OK;
}
