/* verify_cli.c - the command line of "trench verify" (its help text is in
 * src/cli/cmd_verify.c): options, the kernel's launch line, the driver
 * call and the exit code. Linked into trench-verify only, with LLVM and Z3. */
#include "../cli/cli.h"
#include "verify.h"

#include <llvm-c/ErrorHandling.h>

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int tr_verify_cli(const cli_cmd *cmd, int argc, char **argv);

static void parse_dim3(const cli_cmd *me, const char *s, unsigned d[3], const char *what) {
  d[0] = d[1] = d[2] = 1;
  char *e;
  for (int i = 0; i < 3; i++) {
    long v = strtol(s, &e, 10);
    if (e == s || v < 1 || v > 65535) cli_usage_error(me, "%s: expected X[,Y[,Z]] of positive sizes, got '%s'", what, s);
    d[i] = (unsigned)v;
    if (*e != ',') break;
    s = e + 1;
  }
  if (*e) cli_usage_error(me, "%s: expected X[,Y[,Z]], got '%s'", what, s);
}

/* The launch line of a kernel file: "trench-launch: grid=4 block=64";
 * "trench-outputs: zero" says the outputs start zeroed (a kernel written
 * from a .py whose host wrapper allocates them with torch::zeros). */
static void read_launch(const cli_cmd *me, const char *path, unsigned grid[3], unsigned block[3], bool have_g, bool have_b,
                        bool *zero_out) {
  char *txt = NULL;
  size_t len;
  tr_diag d = {0};
  if (tr_read_file(path, &txt, &len, &d) != TR_OK) { tr_diag_clear(&d); return; }
  if (strstr(txt, "trench-outputs: zero")) *zero_out = true;
  char *l = strstr(txt, "trench-launch:");
  if (l) {
    char *nl = strchr(l, '\n');
    if (nl) *nl = 0;
    char *g = strstr(l, "grid="), *b = strstr(l, "block=");
    char tmp[64];
    if (g && !have_g) { sscanf(g + 5, "%63[0-9,]", tmp); parse_dim3(me, tmp, grid, "trench-launch grid"); }
    if (b && !have_b) { sscanf(b + 6, "%63[0-9,]", tmp); parse_dim3(me, tmp, block, "trench-launch block"); }
  }
  tr_free(txt);
}

/* LLVM's fatal errors end the process (LLVM exits when its handler
 * returns): the handler says so in trench's words, removes the scratch
 * folder and exits 2 (trench's own trouble; 1 would read as a
 * counterexample). It takes no context, so the folder's slot is the one
 * process-wide pointer here, as in src/cli/guard.c. */
static char *fatal_tmp;

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st, (void)flag, (void)ftw;
  remove(path);
  return 0;
}

static void on_llvm_fatal(const char *reason) {
  fflush(stdout);
  fprintf(stderr, "trench verify: error: LLVM failed: %s\n", reason ? reason : "?");
  if (fatal_tmp && fatal_tmp[0]) nftw(fatal_tmp, rm_entry, 16, FTW_DEPTH | FTW_PHYS);
  _exit(CLI_EXIT_USAGE);
}

static long num(const cli_cmd *me, const char *s, const char *what, long lo, long hi) {
  char *e;
  long v = strtol(s, &e, 10);
  if (e == s || *e || v < lo || v > hi) cli_usage_error(me, "%s: expected an integer in [%ld, %ld], got '%s'", what, lo, hi, s);
  return v;
}

int tr_verify_cli(const cli_cmd *me, int argc, char **argv) {
  cli_opts o;
  cli_opts_init(&o, me, argc, argv);
  tv_opts v = {0};
  const char *ref = NULL;
  tr_buf flags = {0};
  bool have_g = false, have_b = false;
  v.grid[0] = v.grid[1] = v.grid[2] = 1;
  v.block[0] = v.block[1] = v.block[2] = 1;
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') cli_usage_error(me, "unexpected operand '%s' (use --ref and --kernel)", o.arg);
    cli_opt_help(&o);
    if (cli_opt_is(&o, NULL, "--ref")) ref = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--kernel")) v.kernel_path = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--grid")) { parse_dim3(me, cli_opt_value(&o), v.grid, "--grid"); have_g = true; }
    else if (cli_opt_is(&o, NULL, "--block")) { parse_dim3(me, cli_opt_value(&o), v.block, "--block"); have_b = true; }
    else if (cli_opt_is(&o, NULL, "--locations")) v.locations = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--tile")) v.tile = num(me, cli_opt_value(&o), "--tile", 1, 1 << 30);
    else if (cli_opt_is(&o, NULL, "--random-locations")) v.nrandom = (int)num(me, cli_opt_value(&o), "--random-locations", 1, 100000);
    else if (cli_opt_is(&o, NULL, "--max-locations")) v.max_locations = (int)num(me, cli_opt_value(&o), "--max-locations", 1, 1000000);
    else if (cli_opt_is(&o, NULL, "--budget")) {
      const char *s = cli_opt_value(&o);
      char *e;
      v.budget_s = strtod(s, &e);
      if (e == s || *e || !(v.budget_s > 0) || v.budget_s > 86400) cli_usage_error(me, "--budget: expected seconds > 0, got '%s'", s);
    } else if (cli_opt_is(&o, NULL, "--max-paths")) v.max_paths = (int)num(me, cli_opt_value(&o), "--max-paths", 1, 100000);
    else if (cli_opt_is(&o, NULL, "--seed")) v.seed = (uint64_t)num(me, cli_opt_value(&o), "--seed", 0, 1L << 40);
    else if (cli_opt_is(&o, NULL, "--cflags")) tr_buf_printf(&flags, " %s", cli_opt_value(&o));
    else if (cli_opt_is(&o, NULL, "--shapes")) {
      const char *sv = cli_opt_value(&o), *p = sv;
      while (*p) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        const char *eq = memchr(p, '=', len);
        if (!eq || eq == p || eq + 1 == p + len)
          cli_usage_error(me, "--shapes: expected NAME=VALUE[,NAME=VALUE...], got '%s'", sv);
        for (const char *c = p; c < p + len; c++)
          if (*c == ' ' || *c == '\'' || *c == '"')
            cli_usage_error(me, "--shapes: no spaces or quotes in '%s'", sv);
        tr_buf_printf(&flags, " -D%.*s", (int)len, p);
        p += len;
        if (*p == ',') p++;
      }
    }
    else if (cli_opt_is(&o, NULL, "--save")) v.save_dir = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--random")) v.random_seeds = (int)num(me, cli_opt_value(&o), "--random", 1, 10000000);
    else if (cli_opt_flag(&o, "-v", "--verbose")) v.verbose = true;
    else if (cli_opt_flag(&o, NULL, "--first")) v.first = true;
    else if (cli_opt_flag(&o, NULL, "--emitted")) v.emitted = true;
    else cli_usage_error(me, "unknown option '%s'", o.arg);
  }
  if (!ref) cli_usage_error(me, "--ref REF.hlo is required");
  if (!v.kernel_path) cli_usage_error(me, "--kernel K.c|K.cu is required");
  size_t kl = strlen(v.kernel_path);
  if (kl > 3 && !strcmp(v.kernel_path + kl - 3, ".cu")) v.cuda = true;
  else if (kl > 3 && !strcmp(v.kernel_path + kl - 3, ".py")) v.cuda = v.python = true;
  else if (!(kl > 2 && !strcmp(v.kernel_path + kl - 2, ".c")))
    cli_usage_error(me, "--kernel: expected a .c, .cu or .py file, got '%s'", v.kernel_path);
  FILE *kf = fopen(v.kernel_path, "r");
  if (!kf) {
    fprintf(stderr, "trench verify: cannot read %s\n", v.kernel_path);
    return CLI_EXIT_USAGE;
  }
  fclose(kf);
  if (v.cuda && v.emitted) cli_usage_error(me, "--emitted takes the C of trench compile, not a .cu file");
  if (v.python && v.emitted) cli_usage_error(me, "--emitted takes the C of trench compile, not a .py file");
  if (v.cuda && !v.python) read_launch(me, v.kernel_path, v.grid, v.block, have_g, have_b, &v.zero_out);
  int rc;
  tr_module *m = cli_load(ref, true, &rc);
  if (!m) return rc;
  v.m = m;
  v.out = stdout;
  v.cflags = flags.n ? tr_buf_str(&flags) : NULL;
  /* The scratch folder goes on Ctrl-C (guard.c) and on LLVM's fatal
   * errors as well. */
  tr_target_guard *slot = cli_guard_slot();
  v.guard_tmp = slot ? slot->tmp : NULL;
  fatal_tmp = v.guard_tmp;
  LLVMInstallFatalErrorHandler(on_llvm_fatal);
  tv_summary s;
  tr_diag d = {0};
  tr_status st = tr_verify_kernel(&v, &s, &d);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_module_free(m);
  tr_buf_free(&flags);
  if (s.out_of_memory) return cli_finish(CLI_EXIT_USAGE); /* no verdict */
  if (st == TR_ERR_USAGE) return cli_finish(CLI_EXIT_USAGE);
  if (st == TR_ERR_IO) return cli_finish(CLI_EXIT_USAGE);
  if (st != TR_OK) return cli_finish(CLI_EXIT_FINDING);
  return cli_finish(s.found ? CLI_EXIT_FINDING : CLI_EXIT_OK);
}
