/* cmd_mutate.c - "trench mutate": applies one mutator (named, or drawn by
 * the seed) to a module and prints the verified result; --list shows the
 * mutator table (src/fuzz/mutators.def). */
#include "cli.h"

#include "../fuzz/mutate.h"

#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_mutate = {
  "mutate", "turn a module into another valid module (a named mutator)",
  "Usage: trench mutate FILE --seed S [--mutator NAME] [--steps N]\n"
  "       trench mutate --list\n"
  "\n"
  "Applies a mutator to the module in FILE (\"-\" reads stdin) at places\n"
  "drawn from the seed and prints the result, which verifies, as HLO text.\n"
  "Without --mutator one is drawn from the seed (when it does not apply,\n"
  "the next one in the table is tried). The mutator that applied is named\n"
  "on stderr. The same FILE, seed and trench version give the same text.\n"
  "\n"
  "Options:\n"
  "  -s, --seed S        the seed (default 0)\n"
  "  -m, --mutator NAME  the mutator (trench mutate --list)\n"
  "  -n, --steps N       apply N mutations one after another (default 1)\n"
  "  -o, --output OUT    write the module to OUT instead of stdout\n"
  "      --list          list the mutators: NAME  DESCRIPTION\n"
  "  -h, --help          show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  a mutated module was printed\n"
  "  1  FILE does not parse or verify, or the mutator does not apply to it\n"
  "     (it says why on stderr; nothing is printed)\n"
  "  2  usage error, unreadable FILE or unwritable OUT\n",
  run,
};

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_mutate;
  const char *file = NULL, *out = NULL, *name = NULL;
  uint64_t seed = 0;
  long steps = 1;
  bool list = false;
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') {
      if (file) cli_usage_error(cmd, "one FILE only");
      file = o.arg;
      continue;
    }
    cli_opt_help(&o);
    char *end;
    if (cli_opt_is(&o, "-s", "--seed")) {
      const char *v = cli_opt_value(&o);
      seed = strtoull(v, &end, 0);
      if (!*v || *end) cli_usage_error(cmd, "--seed wants a number, not '%s'", v);
    } else if (cli_opt_is(&o, "-m", "--mutator")) {
      name = cli_opt_value(&o);
    } else if (cli_opt_is(&o, "-n", "--steps")) {
      const char *v = cli_opt_value(&o);
      steps = strtol(v, &end, 10);
      if (!*v || *end || steps < 1 || steps > 1000) cli_usage_error(cmd, "--steps wants 1..1000, not '%s'", v);
    } else if (cli_opt_is(&o, "-o", "--output")) {
      out = cli_opt_value(&o);
    } else if (cli_opt_flag(&o, NULL, "--list")) {
      list = true;
    } else {
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
    }
  }
  if (list) {
    for (int i = 0; i < TR_MUT_COUNT; i++) printf("%-16s  %s\n", tr_mutators[i].name, tr_mutators[i].desc);
    return CLI_EXIT_OK;
  }
  if (!file) cli_usage_error(cmd, "no FILE");
  tr_mutator mu = TR_MUT_COUNT;
  if (name && !tr_mutator_lookup(name, &mu))
    cli_usage_error(cmd, "unknown mutator '%s' (trench mutate --list)", name);
  int code;
  tr_module *m = cli_load(file, true, &code);
  if (!m) return code;
  for (long s = 0; s < steps; s++) {
    tr_module *r = NULL;
    tr_mutator used = mu;
    tr_buf why = {0};
    uint64_t sd = seed + (uint64_t)s * 0x100000001b3ULL;
    tr_status st = name ? tr_mutate(m, mu, sd, &r, &why) : tr_mutate_any(m, sd, &used, &r, &why);
    if (st != TR_OK) {
      fprintf(stderr, "trench mutate: %s: %s\n", cli_input_name(file), tr_buf_str(&why));
      tr_buf_free(&why);
      tr_module_free(m);
      return CLI_EXIT_FINDING;
    }
    tr_buf_free(&why);
    fprintf(stderr, "mutator: %s\n", tr_mutators[used].name);
    tr_module_free(m);
    m = r;
  }
  tr_buf b = {0};
  tr_print_module(&b, m);
  tr_module_free(m);
  FILE *f = out ? fopen(out, "wb") : stdout;
  if (!f) {
    fprintf(stderr, "trench mutate: cannot write '%s'\n", out);
    tr_buf_free(&b);
    return CLI_EXIT_USAGE;
  }
  bool bad = fwrite(tr_buf_str(&b), 1, b.n, f) != b.n;
  if (out && fclose(f) != 0) bad = true;
  tr_buf_free(&b);
  if (bad) {
    fprintf(stderr, "trench mutate: error writing '%s'\n", out ? out : "stdout");
    return CLI_EXIT_USAGE;
  }
  return CLI_EXIT_OK;
}
