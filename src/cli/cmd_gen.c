/* cmd_gen.c - "trench gen": prints generated modules (src/fuzz/gen.c), one
 * to stdout or many into a folder. */
#include "cli.h"

#include "../fuzz/gen.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_gen = {
  "gen", "generate random valid HLO modules",
  "Usage: trench gen --seed S [OPTIONS]\n"
  "\n"
  "Prints a random HLO module that verifies, made from seed S: the same\n"
  "seed, options and trench version give the same bytes (docs/FUZZ.md,\n"
  "\"Generator\").\n"
  "\n"
  "Options:\n"
  "      --seed S        the module's seed (default 0)\n"
  "      --size N        about N ops in the entry computation (default 20)\n"
  "      --ops LIST      comma list of opcodes to choose from (helpers such as\n"
  "                      parameter, constant, convert and tuple still appear)\n"
  "      --dtypes LIST   comma list of element types to choose from\n"
  "      --core          core element types only (what builtin compiles)\n"
  "      --no-control    no while, conditional or call\n"
  "      --no-params     parameterless modules (every leaf a constant)\n"
  "      --no-layouts    default layouts only\n"
  "      --no-big        no sizes past the strategy thresholds\n"
  "      --count N       N modules, seeds S to S+N-1 (needs --out)\n"
  "      --out DIR       write DIR/gen_SEED.hlo instead of printing\n"
  "  -h, --help          show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  generated\n"
  "  1  internal error: a generated module did not verify\n"
  "  2  usage error or unwritable output\n",
  run,
};

static long long number(const char *s, const char *what) {
  char *e;
  errno = 0;
  long long v = strtoll(s, &e, 10);
  if (!*s || *e || errno || v < 0) cli_usage_error(&cli_cmd_gen, "%s wants a number >= 0, not '%s'", what, s);
  return v;
}

/* A seed: any 64-bit value, as campaign lineages record them
 * ("gen:gen-6:SEED"). */
static uint64_t seed_of(const char *s) {
  char *e;
  errno = 0;
  unsigned long long v = strtoull(s, &e, 10);
  if (!*s || *s == '-' || *e || errno)
    cli_usage_error(&cli_cmd_gen, "--seed wants a number from 0 to 2^64-1, not '%s'", s);
  return (uint64_t)v;
}

static int run(int argc, char **argv) {
  cli_opts o;
  cli_opts_init(&o, &cli_cmd_gen, argc, argv);
  tr_gen_opts g;
  tr_gen_opts_init(&g);
  long long count = 1;
  const char *out = NULL;
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') cli_usage_error(&cli_cmd_gen, "unexpected operand '%s'", o.arg);
    cli_opt_help(&o);
    if (cli_opt_is(&o, NULL, "--seed")) g.seed = seed_of(cli_opt_value(&o));
    else if (cli_opt_is(&o, NULL, "--size")) g.size = (int)number(cli_opt_value(&o), "--size");
    else if (cli_opt_is(&o, NULL, "--ops")) g.ops = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--dtypes")) g.dtypes = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--count")) count = number(cli_opt_value(&o), "--count");
    else if (cli_opt_is(&o, NULL, "--out")) out = cli_opt_value(&o);
    else if (cli_opt_flag(&o, NULL, "--core")) g.flags |= TR_GEN_CORE_TYPES;
    else if (cli_opt_flag(&o, NULL, "--no-control")) g.flags |= TR_GEN_NO_CONTROL;
    else if (cli_opt_flag(&o, NULL, "--no-params")) g.flags |= TR_GEN_NO_PARAMS;
    else if (cli_opt_flag(&o, NULL, "--no-layouts")) g.flags |= TR_GEN_NO_LAYOUTS;
    else if (cli_opt_flag(&o, NULL, "--no-big")) g.flags |= TR_GEN_NO_BIG;
    else cli_usage_error(&cli_cmd_gen, "unknown option '%s'", o.arg);
  }
  if (g.size > 100000) cli_usage_error(&cli_cmd_gen, "--size %d is over the limit of 100000", g.size);
  if (count != 1 && !out) cli_usage_error(&cli_cmd_gen, "--count needs --out DIR");
  if (out && mkdir(out, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "trench gen: cannot make folder %s: %s\n", out, strerror(errno));
    return CLI_EXIT_USAGE;
  }
  uint64_t first = g.seed;
  tr_buf b = {0};
  for (long long i = 0; i < count; i++) {
    g.seed = first + (uint64_t)i;
    tr_diag d = {0};
    tr_module *m = NULL;
    tr_status st = tr_gen_module(&g, &m, &d);
    if (st) {
      tr_diag_print(&d, stderr);
      tr_diag_clear(&d);
      tr_buf_free(&b);
      return st == TR_ERR_USAGE ? CLI_EXIT_USAGE : CLI_EXIT_FINDING;
    }
    b.n = 0;
    tr_print_module(&b, m);
    tr_module_free(m);
    if (!out) {
      fwrite(b.p, 1, b.n, stdout);
      continue;
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/gen_%llu.hlo", out, (unsigned long long)g.seed);
    FILE *f = fopen(path, "wb");
    bool ok = f && fwrite(b.p, 1, b.n, f) == b.n;
    if (f && fclose(f) != 0) ok = false;
    if (!ok) {
      fprintf(stderr, "trench gen: cannot write %s: %s\n", path, strerror(errno));
      tr_buf_free(&b);
      return CLI_EXIT_USAGE;
    }
  }
  tr_buf_free(&b);
  return cli_finish(CLI_EXIT_OK);
}
