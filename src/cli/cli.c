/* cli.c - helpers every subcommand uses: option scanning, usage errors,
 * loading a module from a file or stdin, and the final flush of stdout. */
#include "cli.h"

#include "../target/target.h"
#include "../oracle/profile.h"

#include <errno.h>
#include <stdarg.h>
#include <inttypes.h>
#include <sys/resource.h>
#include <stdint.h>
#include <stdio.h>

#include "../eval/eval.h"
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void cli_opts_init(cli_opts *o, const cli_cmd *cmd, int argc, char **argv) {
  memset(o, 0, sizeof *o);
  o->argc = argc;
  o->argv = argv;
  o->cmd = cmd;
  o->i = 1;
}

int cli_opts_next(cli_opts *o) {
  o->val = NULL;
  while (o->i < o->argc) {
    const char *a = o->argv[o->i++];
    o->arg = a;
    if (o->no_more_opts || a[0] != '-' || a[1] == 0) return 'f';
    if (strcmp(a, "--") == 0) {
      o->no_more_opts = true;
      continue;
    }
    return 'o';
  }
  o->arg = NULL;
  return 0;
}

bool cli_opt_is(cli_opts *o, const char *shortname, const char *longname) {
  const char *a = o->arg;
  o->val = NULL;
  if (a[1] == '-') {
    if (!longname) return false;
    size_t n = strlen(longname);
    if (strncmp(a, longname, n) != 0) return false;
    if (a[n] == '=') {
      o->val = a + n + 1;
      return true;
    }
    return a[n] == 0;
  }
  if (!shortname) return false;
  if (a[1] != shortname[1]) return false;
  if (a[2]) o->val = a + 2;
  return true;
}

_Noreturn void cli_usage_error(const cli_cmd *cmd, const char *fmt, ...) {
  va_list ap;
  fprintf(stderr, "trench%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  if (cmd)
    fprintf(stderr, "\nRun 'trench %s --help' for usage.\n", cmd->name);
  else
    fprintf(stderr, "\nRun 'trench --help' for usage.\n");
  exit(CLI_EXIT_USAGE);
}

const char *cli_opt_value(cli_opts *o) {
  if (o->val) return o->val;
  if (o->i >= o->argc)
    cli_usage_error(o->cmd, "option '%s' needs a value", o->arg);
  return o->argv[o->i++];
}

bool cli_opt_ref_limits(cli_opts *o, double *deadline_s, int64_t *max_trips) {
  char *end;
  if (cli_opt_is(o, NULL, "--ref-timeout")) {
    const char *v = cli_opt_value(o);
    double s = strtod(v, &end);
    if (!*v || *end || !(s > 0) || !(s < 1e9))
      cli_usage_error(o->cmd, "--ref-timeout needs seconds > 0, not '%s'", v);
    *deadline_s = s;
    return true;
  }
  if (cli_opt_is(o, NULL, "--max-trips")) {
    const char *v = cli_opt_value(o);
    errno = 0;
    long long n = strtoll(v, &end, 10);
    if (!*v || *end || errno || n < 1)
      cli_usage_error(o->cmd, "--max-trips needs a positive integer, not '%s'", v);
    *max_trips = n;
    return true;
  }
  return false;
}

bool cli_opt_start_timeout(cli_opts *o, double *start_timeout_s) {
  if (!cli_opt_is(o, NULL, "--start-timeout")) return false;
  const char *v = cli_opt_value(o);
  char *end;
  double s = strtod(v, &end);
  if (!*v || *end || !(s > 0) || !(s < 1e9))
    cli_usage_error(o->cmd, "--start-timeout needs seconds > 0, not '%s'", v);
  *start_timeout_s = s;
  return true;
}

bool cli_opt_flag(cli_opts *o, const char *shortname, const char *longname) {
  if (!cli_opt_is(o, shortname, longname)) return false;
  if (o->val && o->arg[1] == '-')
    cli_usage_error(o->cmd, "option '%.*s' takes no value",
                    (int)(o->val - 1 - o->arg), o->arg);
  if (o->val) cli_usage_error(o->cmd, "unknown option '%s'", o->arg);
  return true;
}

void cli_opt_help(cli_opts *o) {
  if (!cli_opt_flag(o, "-h", "--help")) return;
  fputs(o->cmd->help, stdout);
  exit(cli_finish(CLI_EXIT_OK));
}

const char *cli_input_name(const char *path) {
  return strcmp(path, "-") == 0 ? "<stdin>" : path;
}

bool cli_parse_size(const char *v, uint64_t *out) {
  char *end;
  errno = 0;
  if (!*v || *v == '-') return false;
  double x = strtod(v, &end);
  if (errno || end == v || !(x >= 0)) return false;
  double mul = 1;
  switch (*end) {
  case 'k': case 'K': mul = 1024.0; end++; break;
  case 'm': case 'M': mul = 1024.0 * 1024; end++; break;
  case 'g': case 'G': mul = 1024.0 * 1024 * 1024; end++; break;
  case 't': case 'T': mul = 1024.0 * 1024 * 1024 * 1024; end++; break;
  }
  if (*end == 'B' || *end == 'b') end++;
  if (*end || x * mul >= 18446744073709551615.0) return false;
  *out = (uint64_t)(x * mul);
  return true;
}

size_t cli_read_limit(void) {
  const char *v = getenv("TRENCH_MAX_INPUT");
  uint64_t n;
  if (v && cli_parse_size(v, &n) && n > 0 && n <= SIZE_MAX - 2) return (size_t)n;
  return TR_READ_MAX;
}

void cli_parse_opts_env(tr_parse_opts *po) {
  const char *v = getenv("TRENCH_ARENA_LIMIT");
  uint64_t n;
  if (v && cli_parse_size(v, &n) && n <= SIZE_MAX) po->arena_limit = (size_t)n;
}

tr_status cli_read_input(const char *path, char **out, size_t *len, tr_diag *d) {
  size_t max = cli_read_limit();
  int before = d->nmsgs;
  tr_status s = strcmp(path, "-") == 0 ? tr_read_stream(stdin, "<stdin>", max, out, len, d)
                                       : tr_read_file_max(path, max, out, len, d);
  if (s != TR_OK && d->nmsgs > before && strstr(d->msgs[d->nmsgs - 1], "read limit"))
    tr_diag_errorf(d, "hint: TRENCH_MAX_INPUT=SIZE (such as 4G) raises the limit");
  return s;
}

/* A "Key: N kB" line of a /proc file, in bytes; 0 when absent. */
static uint64_t proc_kb(const char *file, const char *key) {
  FILE *f = fopen(file, "r");
  if (!f) return 0;
  char line[256];
  size_t kl = strlen(key);
  uint64_t kb = 0;
  while (fgets(line, sizeof line, f))
    if (strncmp(line, key, kl) == 0 && sscanf(line + kl, " %" SCNu64, &kb) == 1) break;
  fclose(f);
  return kb * 1024;
}

uint64_t cli_memory_available(void) {
  uint64_t avail = proc_kb("/proc/meminfo", "MemAvailable:");
  /* An address-space limit (ulimit -v) binds sooner than the machine. */
  struct rlimit rl;
  if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY) {
    uint64_t used = proc_kb("/proc/self/status", "VmSize:");
    uint64_t room = rl.rlim_cur > used ? rl.rlim_cur - used : 1;
    if (!avail || room < avail) avail = room;
  }
  return avail;
}

void cli_put_bytes(tr_buf *b, uint64_t n) {
  if (n >= ((uint64_t)1 << 30)) tr_buf_printf(b, "%.1f GiB", (double)n / (1 << 30));
  else if (n >= ((uint64_t)1 << 20)) tr_buf_printf(b, "%.1f MiB", (double)n / (1 << 20));
  else tr_buf_printf(b, "%" PRIu64 " bytes", n);
}

bool cli_memory_fits(const tr_module *m, bool shadow, uint64_t extra, uint64_t budget,
                     const char *prefix, const char *name) {
  if (!budget) return true;
  uint64_t est = tr_eval_estimate_bytes(m, shadow);
  if (shadow) {
    uint64_t ex = tr_eval_estimate_bytes(m, false);
    est = est > UINT64_MAX - ex ? UINT64_MAX : est + ex;
  }
  est = est > UINT64_MAX - extra ? UINT64_MAX : est + extra;
  if (est <= budget) return true;
  tr_buf b = {0};
  tr_buf_printf(&b, "%s: declined: %s needs about ", prefix, name);
  cli_put_bytes(&b, est);
  tr_buf_puts(&b, " to evaluate (an estimate from its shapes), over the memory budget of ");
  cli_put_bytes(&b, budget);
  tr_buf_puts(&b, " (--max-memory; the default is the machine's available memory)");
  fprintf(stderr, "%s\n", tr_buf_str(&b));
  tr_buf_free(&b);
  return false;
}

bool cli_opt_max_cost(cli_opts *o, double *max_ops) {
  if (!cli_opt_is(o, NULL, "--max-cost")) return false;
  const char *v = cli_opt_value(o);
  char *end;
  double n = strtod(v, &end);
  if (!*v || *end || !(n >= 1) || !(n < 1e300))
    cli_usage_error(o->cmd, "--max-cost needs a number of operations >= 1 such as 1e12, not '%s'", v);
  *max_ops = n;
  return true;
}

bool cli_cost_fits(const tr_module *m, double deadline_s, double max_ops, const char *prefix,
                   const char *name) {
  double ops = tr_eval_estimate_ops(m);
  if (max_ops > 0) {
    if (ops <= max_ops) return true;
    fprintf(stderr, "%s: declined: %s needs at least %.3g scalar operations to evaluate (an estimate from its "
            "shapes), over the budget of %.3g (--max-cost)\n", prefix, name, ops, max_ops);
    return false;
  }
  if (!(deadline_s > 0)) return true;
  long cores = sysconf(_SC_NPROCESSORS_ONLN);
  double rate = CLI_REF_OPS_PER_CORE * (double)(cores > 0 ? cores : 1);
  if (ops <= rate * deadline_s) return true;
  fprintf(stderr, "%s: declined: %s needs at least %.3g scalar operations to evaluate (an estimate from its "
          "shapes); at the reference's fastest rate (%.3g a second on %ld cores) that takes over %.3g s, past its "
          "deadline of %g s (--ref-timeout, or --timeout)\n", prefix, name, ops, rate, cores > 0 ? cores : 1L,
          ops / rate, deadline_s);
  return false;
}

/* Reads the text here rather than through tr_parse_file so an unreadable
 * file (exit 2) stays apart from a malformed one (exit 1), and "-" works. */
tr_module *cli_load(const char *path, bool verify, int *exit_code) {
  return cli_load_opts(path, verify, NULL, exit_code);
}

tr_module *cli_load_opts(const char *path, bool verify, const tr_parse_opts *po, int *exit_code) {
  tr_diag d = {0};
  char *text = NULL;
  size_t len = 0;
  const char *name = cli_input_name(path);
  tr_status st = cli_read_input(path, &text, &len, &d);
  if (st != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    *exit_code = CLI_EXIT_USAGE;
    return NULL;
  }
  tr_parse_opts o = {0};
  if (po) o = *po;
  cli_parse_opts_env(&o);
  tr_module *m = tr_parse(name, text, len, &o, &d);
  if (m && verify && tr_verify(m, &d) != TR_OK) {
    tr_module_free(m);
    m = NULL;
  }
  if (!m && d.nmsgs == 0) /* never fail silently, whatever the library did */
    tr_diag_errorf(&d, "%s: failed without a diagnostic", name);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_free(text);
  *exit_code = m ? CLI_EXIT_OK : CLI_EXIT_FINDING;
  return m;
}

const char *cli_home(char *buf, size_t n) {
  if (getenv("TRENCH_HOME") || n < 2) return NULL;
  ssize_t k = readlink("/proc/self/exe", buf, n - 1);
  if (k <= 0) return NULL;
  buf[k] = 0;
  for (int up = 0; up < 2; up++) {
    char *sl = strrchr(buf, '/');
    if (sl) *sl = 0;
  }
  return buf;
}

int cli_profile_open(const char *spec, const char *path_arg, bool strict, tr_profile **out, char *path,
                     size_t n) {
  *out = NULL;
  path[0] = 0;
  char buf[4096] = "";
  const char *home = getenv("TRENCH_HOME") ? getenv("TRENCH_HOME") : cli_home(buf, sizeof buf);
  bool named = !strchr(spec, ':') && !strchr(spec, '/');
  const char *at = strchr(spec, '@');
  if (path_arg) {
    snprintf(path, n, "%s", path_arg);
  } else if (!strict && named && home && home[0]) {
    snprintf(path, n, "%s/profiles", home);
    if (access(path, R_OK | X_OK) != 0) {
      fprintf(stderr, "trench: warning: no profiles folder at %s (set TRENCH_HOME to trench's source tree); "
              "%s is judged without a profile\n", path, spec);
      path[0] = 0;
      return 0;
    }
    snprintf(path, n, "%s/profiles/%.*s.conf", home, (int)strcspn(spec, "@"), spec);
    if (access(path, R_OK) != 0) path[0] = 0;
  }
  if (!path[0]) return 0;
  /* Rules keyed by release ("@0.4.30 ..."): the release after '@' in the
   * spec, else the profile's own "release" line. */
  tr_diag d = {0};
  if (tr_profile_load_release(path, at && named ? at + 1 : NULL, out, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    path[0] = 0;
    return CLI_EXIT_USAGE;
  }
  return 0;
}

tr_module *cli_load_source(const char *path, tr_target *(*get_conv)(void *ctx), void *ctx,
                           const tr_parse_opts *po, char **mlir, int *exit_code) {
  *mlir = NULL;
  tr_diag d = {0};
  char *text = NULL;
  size_t len = 0;
  if (strcmp(path, "-") == 0 || tr_read_file(path, &text, &len, &d) != TR_OK || !tr_text_is_mlir(text, len)) {
    tr_diag_clear(&d);
    tr_free(text);
    return cli_load_opts(path, true, po, exit_code);
  }
  /* The target is asked for only now: an HLO module never waits for it. */
  tr_target *conv = get_conv ? get_conv(ctx) : NULL;
  if (!conv) {
    fprintf(stderr, "%s: StableHLO/MHLO text needs a target that converts it to HLO (xla-cpu)\n", path);
    tr_free(text);
    *exit_code = CLI_EXIT_USAGE;
    return NULL;
  }
  tr_module *m = NULL;
  char *hlo = NULL;
  tr_status st = tr_mlir_convert(conv, path, text, &m, &hlo, &d);
  tr_free(hlo);
  if (st != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    tr_free(text);
    *exit_code = st == TR_ERR_SYNTAX || st == TR_ERR_INVALID ? CLI_EXIT_FINDING : CLI_EXIT_USAGE;
    return NULL;
  }
  *mlir = text;
  *exit_code = CLI_EXIT_OK;
  return m;
}

int cli_finish(int exit_code) {
  if (fflush(stdout) != 0 || ferror(stdout)) {
    fprintf(stderr, "trench: error writing to stdout\n");
    return cli_worse(exit_code, CLI_EXIT_USAGE);
  }
  return exit_code;
}
