/* cmd_verify.c - "trench verify": checks a C or CUDA kernel against an HLO
 * reference for all inputs, one output location at a time
 * (src/verify/, docs/VERIFY.md). */
#include "cli.h"

#include "../verify/verify.h"

#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_verify = {
  "verify", "check a C or CUDA kernel against a reference for all inputs",
  "Usage: trench verify --ref REF.hlo --kernel K.c|K.cu [OPTIONS]\n"
  "\n"
  "Executes the kernel symbolically over its LLVM IR (clang-14 compiles it)\n"
  "and evaluates the HLO reference symbolically, for chosen output\n"
  "locations, with every float input element a symbol. Each location gets\n"
  "a verdict: 'equivalent over the reals' (same normal form, or Z3 proves\n"
  "no input makes them differ), 'counterexample' (Z3 found inputs where\n"
  "they differ and the kernel run concretely on them fails trench's\n"
  "oracle against the reference) or 'unknown'. Out-of-bounds accesses and\n"
  "races are reported for the whole kernel, each confirmed concretely.\n"
  "The kernel is void kernel(T *in0, ..., float *out0, ...): one pointer\n"
  "per reference parameter, then one per output, shapes those of the\n"
  "reference (docs/VERIFY.md).\n"
  "\n"
  "Options:\n"
  "      --ref FILE        the HLO reference module\n"
  "      --kernel FILE     the kernel: .c (C11) or .cu (CUDA device code)\n"
  "      --grid X[,Y[,Z]]  CUDA grid (default: a 'trench-launch: grid=..'\n"
  "                        line in the kernel file)\n"
  "      --block X[,Y[,Z]] CUDA block (likewise 'block=..')\n"
  "      --locations L     'i,j;k,l' element indices of out0 ('outN:i,j' for\n"
  "                        others), or 'all'; default: every corner, each\n"
  "                        dim's ends, middle and tile boundaries with\n"
  "                        their neighbours, and random interior points\n"
  "      --tile N          tile size for the default locations (default: the\n"
  "                        CUDA block's x size; none for C)\n"
  "      --random-locations N  random interior points (default 8)\n"
  "      --max-locations N cap on the default set (default 64)\n"
  "      --budget S        solver seconds per location (default 10)\n"
  "      --max-paths N     paths through branches on data (default 64)\n"
  "      --seed N          seed of the base inputs (integer inputs, symbols\n"
  "                        a model leaves free) and of random locations\n"
  "      --cflags FLAGS    extra clang flags (e.g. '-DN=64')\n"
  "      --save DIR        write the first counterexample's bundle to DIR\n"
  "      --random N        instead: random differential testing on N seeds\n"
  "                        (the kernel run concretely, judged by the oracle)\n"
  "  -v, --verbose         print paths, slicing and expressions\n"
  "  -h, --help            show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  no counterexample (every verdict equivalent or unknown)\n"
  "  1  a confirmed counterexample (or random: a failing seed); or the\n"
  "     reference or kernel cannot be handled\n"
  "  2  usage error, unreadable file\n",
  run,
};

static void parse_dim3(const char *s, unsigned d[3], const char *what) {
  d[0] = d[1] = d[2] = 1;
  char *e;
  for (int i = 0; i < 3; i++) {
    long v = strtol(s, &e, 10);
    if (e == s || v < 1 || v > 65535) cli_usage_error(&cli_cmd_verify, "%s: expected X[,Y[,Z]] of positive sizes, got '%s'", what, s);
    d[i] = (unsigned)v;
    if (*e != ',') break;
    s = e + 1;
  }
  if (*e) cli_usage_error(&cli_cmd_verify, "%s: expected X[,Y[,Z]], got '%s'", what, s);
}

/* The launch line of a kernel file: "trench-launch: grid=4 block=64". */
static void read_launch(const char *path, unsigned grid[3], unsigned block[3], bool have_g, bool have_b) {
  char *txt = NULL;
  size_t len;
  tr_diag d = {0};
  if (tr_read_file(path, &txt, &len, &d) != TR_OK) { tr_diag_clear(&d); return; }
  char *l = strstr(txt, "trench-launch:");
  if (l) {
    char *nl = strchr(l, '\n');
    if (nl) *nl = 0;
    char *g = strstr(l, "grid="), *b = strstr(l, "block=");
    char tmp[64];
    if (g && !have_g) { sscanf(g + 5, "%63[0-9,]", tmp); parse_dim3(tmp, grid, "trench-launch grid"); }
    if (b && !have_b) { sscanf(b + 6, "%63[0-9,]", tmp); parse_dim3(tmp, block, "trench-launch block"); }
  }
  free(txt);
}

static long num(const char *s, const char *what, long lo, long hi) {
  char *e;
  long v = strtol(s, &e, 10);
  if (e == s || *e || v < lo || v > hi) cli_usage_error(&cli_cmd_verify, "%s: expected an integer in [%ld, %ld], got '%s'", what, lo, hi, s);
  return v;
}

static int run(int argc, char **argv) {
  cli_opts o;
  cli_opts_init(&o, &cli_cmd_verify, argc, argv);
  tv_opts v = {0};
  const char *ref = NULL;
  bool have_g = false, have_b = false;
  v.grid[0] = v.grid[1] = v.grid[2] = 1;
  v.block[0] = v.block[1] = v.block[2] = 1;
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') cli_usage_error(&cli_cmd_verify, "unexpected operand '%s' (use --ref and --kernel)", o.arg);
    cli_opt_help(&o);
    if (cli_opt_is(&o, NULL, "--ref")) ref = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--kernel")) v.kernel_path = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--grid")) { parse_dim3(cli_opt_value(&o), v.grid, "--grid"); have_g = true; }
    else if (cli_opt_is(&o, NULL, "--block")) { parse_dim3(cli_opt_value(&o), v.block, "--block"); have_b = true; }
    else if (cli_opt_is(&o, NULL, "--locations")) v.locations = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--tile")) v.tile = num(cli_opt_value(&o), "--tile", 1, 1 << 30);
    else if (cli_opt_is(&o, NULL, "--random-locations")) v.nrandom = (int)num(cli_opt_value(&o), "--random-locations", 1, 100000);
    else if (cli_opt_is(&o, NULL, "--max-locations")) v.max_locations = (int)num(cli_opt_value(&o), "--max-locations", 1, 1000000);
    else if (cli_opt_is(&o, NULL, "--budget")) {
      const char *s = cli_opt_value(&o);
      char *e;
      v.budget_s = strtod(s, &e);
      if (e == s || *e || !(v.budget_s > 0) || v.budget_s > 86400) cli_usage_error(&cli_cmd_verify, "--budget: expected seconds > 0, got '%s'", s);
    } else if (cli_opt_is(&o, NULL, "--max-paths")) v.max_paths = (int)num(cli_opt_value(&o), "--max-paths", 1, 100000);
    else if (cli_opt_is(&o, NULL, "--seed")) v.seed = (uint64_t)num(cli_opt_value(&o), "--seed", 0, 1L << 40);
    else if (cli_opt_is(&o, NULL, "--cflags")) v.cflags = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--save")) v.save_dir = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--random")) v.random_seeds = (int)num(cli_opt_value(&o), "--random", 1, 10000000);
    else if (cli_opt_flag(&o, "-v", "--verbose")) v.verbose = true;
    else cli_usage_error(&cli_cmd_verify, "unknown option '%s'", o.arg);
  }
  if (!ref) cli_usage_error(&cli_cmd_verify, "--ref REF.hlo is required");
  if (!v.kernel_path) cli_usage_error(&cli_cmd_verify, "--kernel K.c|K.cu is required");
  size_t kl = strlen(v.kernel_path);
  if (kl > 3 && !strcmp(v.kernel_path + kl - 3, ".cu")) v.cuda = true;
  else if (!(kl > 2 && !strcmp(v.kernel_path + kl - 2, ".c")))
    cli_usage_error(&cli_cmd_verify, "--kernel: expected a .c or .cu file, got '%s'", v.kernel_path);
  FILE *kf = fopen(v.kernel_path, "r");
  if (!kf) {
    fprintf(stderr, "trench verify: cannot read %s\n", v.kernel_path);
    return CLI_EXIT_USAGE;
  }
  fclose(kf);
  if (v.cuda) read_launch(v.kernel_path, v.grid, v.block, have_g, have_b);
  int rc;
  tr_module *m = cli_load(ref, true, &rc);
  if (!m) return rc;
  v.m = m;
  v.out = stdout;
  tv_summary s;
  tr_diag d = {0};
  tr_status st = tr_verify_kernel(&v, &s, &d);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_module_free(m);
  if (st == TR_ERR_USAGE) return cli_finish(CLI_EXIT_USAGE);
  if (st == TR_ERR_IO) return cli_finish(CLI_EXIT_USAGE);
  if (st != TR_OK) return cli_finish(CLI_EXIT_FINDING);
  return cli_finish(s.found ? CLI_EXIT_FINDING : CLI_EXIT_OK);
}
