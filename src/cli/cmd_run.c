/* cmd_run.c - "trench run": evaluates a module's entry computation with the
 * reference interpreter on given or drawn inputs, writes the tensors as
 * .npy and prints a summary per output. The inputs it draws are written
 * too, so any run can be repeated with --input. */
#include "cli.h"

#include "../eval/eval.h"
#include "../eval/shadow.h"
#include "../ir/tensor.h"
#include "../oracle/inputs.h"
#include "../target/target.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_run = {
  "run", "evaluate a module with the reference interpreter",
  "Usage: trench run [OPTIONS] MODULE\n"
  "\n"
  "Evaluates the entry computation of the HLO text file MODULE (\"-\" reads\n"
  "stdin) with the reference interpreter (exact mode: XLA's semantics, each\n"
  "op rounded to its dtype) and prints one line per input and per output:\n"
  "  in0: f32[8,16] normal seed=0          (or: from FILE)\n"
  "  out0: f32[8,10] min=.. max=.. mean=.. nan=N inf=N\n"
  "Integer and pred outputs print min, max and mean only; min, max and mean\n"
  "leave NaNs out; complex outputs summarise their real parts.\n"
  "Inputs are the array leaves of the entry parameters in order (tuple\n"
  "parameters depth-first, tokens take none). Without --input they are drawn\n"
  "by the default policy of docs/INPUTS.md: floats normal(0,1), pred a fair\n"
  "coin, integers that index an operand (dynamic-slice starts, gather and\n"
  "scatter indices) in bounds of it, other integers round(16 N(0,1)).\n"
  "\n"
  "Options:\n"
  "      --input FILE   a .npy file for the next input, in order; give one\n"
  "                     per input or none (read with the parameter's dtype,\n"
  "                     so raw '<V2' bf16 files work)\n"
  "      --seed N       seed of the drawn inputs (default 0)\n"
  "      --dist NAME    distribution for drawn data inputs, or with an index-*\n"
  "                     NAME for index inputs: normal uniform positive large\n"
  "                     tiny denormal integer full boundary index index-edge\n"
  "                     index-oob index-dup\n"
  "      --specials R   replace a share R (0..1) of drawn float elements by\n"
  "                     NaN, +-Inf or -0.0 (default 0)\n"
  "      --out DIR      write the inputs as DIR/in0.npy, in1.npy, ... and the\n"
  "                     outputs as DIR/out0.npy, ... (DIR is created)\n"
  "      --fill-elided  give constants written {...} deterministic values\n"
  "                     instead of failing on them\n"
  "      --convert T    StableHLO MODULE: evaluate target T's conversion of\n"
  "                     it to HLO (default xla-cpu)\n"
  CLI_START_TIMEOUT_HELP
  "      --shadow       also evaluate in shadow mode (docs/ORACLE.md) and print\n"
  "                     per output: outN: shadow max_bound=B uncertain=U/N\n"
  "                     (B: largest error bound of a certain float element)\n"
  "                     and with --out also DIR/shadow_valueN.npy (f64),\n"
  "                     shadow_boundN.npy (f64), shadow_uncertainN.npy (u8)\n"
  CLI_REF_LIMITS_HELP
  CLI_MAX_COST_HELP
  "      --max-memory SIZE  decline (exit 1) a module whose evaluation needs\n"
  "                     more than SIZE bytes by an estimate from its shapes\n"
  "                     (K, M, G suffixes; 0: no budget; default: the\n"
  "                     machine's available memory)\n"
  "  -h, --help         show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  evaluated\n"
  "  1  MODULE has a syntax or verify error, or cannot be evaluated\n"
  "     (an unsupported op or dtype, an elided constant, ...)\n"
  "  2  usage error, unreadable MODULE, an --input that is unreadable or\n"
  "     does not match its parameter, unwritable --out\n",
  run,
};

/* ---- loading (cli_load, plus the parse options) ---- */

/* StableHLO text: the module is the converting target's HLO for it. */
static tr_module *load_mlir(const char *path, const char *text, const char *conv, double start_timeout,
                            int *rc) {
  tr_target_config tc;
  tr_target_config_init(&tc);
  char home[4096];
  tc.home = cli_home(home, sizeof home);
  if (start_timeout > 0) tc.start_timeout_s = start_timeout;
  tc.guard = cli_guard_slot();
  tr_target *t = NULL;
  tr_diag d = {0};
  tr_module *m = NULL;
  char *hlo = NULL;
  *rc = CLI_EXIT_USAGE;
  if (tr_target_open(conv, &tc, &t, &d) == TR_OK) {
    tr_status st = tr_mlir_convert(t, path, text, &m, &hlo, &d);
    if (st == TR_OK) {
      fprintf(stderr, "%s: StableHLO; evaluating %s's conversion of it to HLO\n", path, t->name);
      *rc = CLI_EXIT_OK;
    } else if (st == TR_ERR_SYNTAX || st == TR_ERR_INVALID) {
      *rc = CLI_EXIT_FINDING;
    }
  }
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_free(hlo);
  tr_target_close(t);
  return m;
}

static tr_module *load(const char *path, bool fill_elided, const char *conv, double start_timeout, int *rc) {
  tr_diag d = {0};
  char *text = NULL;
  size_t len = 0;
  const char *name = cli_input_name(path);
  if (cli_read_input(path, &text, &len, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_diag_clear(&d);
    *rc = CLI_EXIT_USAGE;
    return NULL;
  }
  if (tr_text_is_mlir(text, len)) {
    tr_module *m = load_mlir(name, text, conv, start_timeout, rc);
    tr_free(text);
    return m;
  }
  tr_parse_opts po = {.fill_elided = fill_elided};
  cli_parse_opts_env(&po);
  tr_module *m = tr_parse(name, text, len, &po, &d);
  if (m && tr_verify(m, &d) != TR_OK) {
    tr_module_free(m);
    m = NULL;
  }
  if (!m && d.nmsgs == 0)
    tr_diag_errorf(&d, "%s: failed without a diagnostic", name);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_free(text);
  *rc = m ? CLI_EXIT_OK : CLI_EXIT_FINDING;
  return m;
}

/* ---- summaries ---- */

static void print_num(double v, tr_dtype t) {
  printf(t == TR_DT_F64 || t == TR_DT_C128 ? "%.17g" : "%.9g", v);
}

static void print_type(const tr_tensor *t) {
  tr_buf b = {0};
  tr_tensor_print_type(&b, t);
  printf("%s", tr_buf_str(&b));
  tr_buf_free(&b);
}

/* min/max/mean over the non-NaN elements; NaN and Inf counted apart. */
static void summarize(const tr_tensor *t) {
  size_t n = tr_tensor_count(t);
  tr_dkind k = tr_dtypes[t->dtype].kind;
  if (n == 0) {
    printf(" empty\n");
    return;
  }
  if (k == TR_DK_SINT) {
    int64_t lo = INT64_MAX, hi = INT64_MIN;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
      int64_t v = tr_tensor_get_i(t, i);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += (double)v;
    }
    printf(" min=%lld max=%lld mean=%.9g\n", (long long)lo, (long long)hi,
           sum / (double)n);
    return;
  }
  if (k == TR_DK_UINT || k == TR_DK_PRED) {
    uint64_t lo = UINT64_MAX, hi = 0;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
      uint64_t v = tr_tensor_get_u(t, i);
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
      sum += (double)v;
    }
    printf(" min=%llu max=%llu mean=%.9g\n", (unsigned long long)lo,
           (unsigned long long)hi, sum / (double)n);
    return;
  }
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  size_t nnan = 0, ninf = 0, nval = 0;
  for (size_t i = 0; i < n; i++) {
    double re, im = 0;
    if (k == TR_DK_COMPLEX)
      tr_tensor_get_c(t, i, &re, &im);
    else
      re = tr_tensor_get_f(t, i);
    if (isnan(re) || isnan(im)) nnan++;
    else if (isinf(re) || isinf(im)) ninf++;
    if (isnan(re)) continue;
    lo = re < lo ? re : lo;
    hi = re > hi ? re : hi;
    sum += re;
    nval++;
  }
  if (nval == 0) lo = hi = sum = NAN;
  printf(" min=");
  print_num(lo, t->dtype);
  printf(" max=");
  print_num(hi, t->dtype);
  printf(" mean=");
  print_num(nval ? sum / (double)nval : NAN, t->dtype);
  printf(" nan=%zu inf=%zu\n", nnan, ninf);
}

/* ---- files ---- */

static bool make_dir(const char *dir) {
  struct stat st;
  if (mkdir(dir, 0777) == 0) return true;
  if (errno == EEXIST && stat(dir, &st) == 0 && S_ISDIR(st.st_mode)) return true;
  fprintf(stderr, "trench run: cannot create directory '%s': %s\n", dir,
          errno == EEXIST ? "a file of that name exists" : strerror(errno));
  return false;
}

static bool write_npy(const char *dir, const char *stem, int i,
                      const tr_tensor *t) {
  tr_buf path = {0};
  tr_buf_printf(&path, "%s/%s%d.npy", dir, stem, i);
  tr_diag d = {0};
  bool ok = tr_npy_write(tr_buf_str(&path), t, &d) == TR_OK;
  if (!ok) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_buf_free(&path);
  return ok;
}

/* The shadow planes of output j (value and bound as f64, the uncertain
 * flags as u8; an integer leaf has no value or bound plane). */
static bool write_shadow(const char *dir, int j, const tr_shadow_out *o) {
  tr_diag d = {0};
  bool ok = true;
  int64_t n = (int64_t)o->n;
  const char *names[3] = {"shadow_value", "shadow_bound", "shadow_uncertain"};
  const void *planes[3] = {o->value, o->bound, o->uncertain};
  for (int p = 0; p < 3 && ok; p++) {
    if (!planes[p]) continue;
    tr_dtype dt = p == 2 ? TR_DT_U8 : TR_DT_F64;
    tr_tensor *t = tr_tensor_new(dt, 1, &n, &d);
    if (!t) {
      ok = false;
      break;
    }
    memcpy(t->data, planes[p], t->nbytes);
    ok = write_npy(dir, names[p], j, t);
    tr_tensor_free(t);
  }
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return ok;
}

static bool same_dims(const tr_tensor *t, const tr_shape *s) {
  if (t->rank != s->rank) return false;
  for (int i = 0; i < s->rank; i++)
    if (t->dims[i] != s->dims[i]) return false;
  return true;
}

/* Reads the --input files, one per leaf; exit code 2 on any mismatch. */
static int read_inputs(const cli_cmd *cmd, char **files, int nfiles,
                       const tr_input_leaf *lv, int n, tr_tensor **ts) {
  if (nfiles != n) {
    fprintf(stderr, "trench %s: the module takes %d input%s (array leaves "
            "of the entry parameters), %d --input given\n", cmd->name, n,
            n == 1 ? "" : "s", nfiles);
    return CLI_EXIT_USAGE;
  }
  for (int j = 0; j < n; j++) {
    tr_diag d = {0};
    const tr_shape *s = lv[j].shape;
    if (tr_npy_read(files[j], s->dtype, &ts[j], &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      tr_diag_clear(&d);
      return CLI_EXIT_USAGE;
    }
    tr_diag_print(&d, stderr); /* warnings */
    tr_diag_clear(&d);
    if (ts[j]->dtype != s->dtype || !same_dims(ts[j], s)) {
      tr_buf want = {0}, got = {0};
      tr_shape_print(&want, s, false);
      tr_tensor_print_type(&got, ts[j]);
      fprintf(stderr, "%s: input %d (parameter %lld, %%%s) must be %s, the "
              "file holds %s\n", files[j], j, (long long)lv[j].param->param_index,
              lv[j].param->name, tr_buf_str(&want), tr_buf_str(&got));
      tr_buf_free(&want);
      tr_buf_free(&got);
      return CLI_EXIT_USAGE;
    }
  }
  return CLI_EXIT_OK;
}

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_run;
  const char *path = NULL, *outdir = NULL;
  char **files = tr_xcalloc((size_t)argc, sizeof(char *));
  int nfiles = 0;
  bool fill_elided = false, shadow = false;
  uint64_t budget = cli_memory_available();
  double ref_timeout = 0, start_timeout = 0;
  int64_t max_trips = 0;
  double max_cost = 0; /* --max-cost (0: from the deadline) */
  const char *conv = "xla-cpu";
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') {
      if (path) cli_usage_error(cmd, "one MODULE only ('%s' and '%s')", path, o.arg);
      path = o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_is(&o, NULL, "--input")) {
      files[nfiles++] = (char *)cli_opt_value(&o);
    } else if (cli_opt_is(&o, NULL, "--seed")) {
      const char *v = cli_opt_value(&o);
      char *end;
      errno = 0;
      unsigned long long s = strtoull(v, &end, 0);
      if (!*v || *end || errno || v[0] == '-')
        cli_usage_error(cmd, "--seed needs a non-negative integer, not '%s'", v);
      cfg.seed = s;
    } else if (cli_opt_is(&o, NULL, "--dist")) {
      const char *v = cli_opt_value(&o);
      tr_dist dist;
      if (!tr_dist_lookup(v, &dist) || dist == TR_DIST_DEFAULT)
        cli_usage_error(cmd, "unknown distribution '%s'", v);
      if (tr_dist_is_index(dist))
        cfg.index = dist;
      else
        cfg.data = dist;
    } else if (cli_opt_is(&o, NULL, "--specials")) {
      const char *v = cli_opt_value(&o);
      char *end;
      double r = strtod(v, &end);
      if (!*v || *end || !(r >= 0 && r <= 1))
        cli_usage_error(cmd, "--specials needs a rate in [0, 1], not '%s'", v);
      cfg.special_rate = r;
    } else if (cli_opt_is(&o, NULL, "--out")) {
      outdir = cli_opt_value(&o);
    } else if (cli_opt_flag(&o, NULL, "--fill-elided")) {
      fill_elided = true;
    } else if (cli_opt_flag(&o, NULL, "--shadow")) {
      shadow = true;
    } else if (cli_opt_is(&o, NULL, "--max-memory")) {
      const char *v = cli_opt_value(&o);
      if (!cli_parse_size(v, &budget))
        cli_usage_error(cmd, "--max-memory needs a size such as 4G (0: no budget), not '%s'", v);
    } else if (cli_opt_ref_limits(&o, &ref_timeout, &max_trips) ||
               cli_opt_max_cost(&o, &max_cost)) {
      /* set */
    } else if (cli_opt_is(&o, NULL, "--convert")) {
      conv = cli_opt_value(&o);
    } else if (cli_opt_start_timeout(&o, &start_timeout)) {
      /* set: the --convert target's start */
    } else {
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
    }
  }
  if (!path) cli_usage_error(cmd, "no MODULE given");
  int rc;
  tr_module *m = load(path, fill_elided, conv, start_timeout, &rc);
  if (!m) {
    tr_free(files);
    return rc;
  }
  tr_diag d = {0};
  tr_input_leaf *lv = NULL;
  int n = 0, nouts = 0;
  tr_tensor **ins = NULL, **outs = NULL;
  /* Before any input is drawn: a module over the budget is declined in
   * microseconds instead of swapping or running out of memory midway. */
  if (!cli_memory_fits(m, shadow, 0, budget, "trench run", cli_input_name(path)) ||
      !cli_cost_fits(m, ref_timeout, max_cost, "trench run", cli_input_name(path))) {
    tr_module_free(m);
    tr_free(files);
    return CLI_EXIT_FINDING;
  }
  if (tr_inputs_plan(m, &cfg, &lv, &n, &d) != TR_OK) {
    /* A parameter trench cannot build inputs for: the module, not the
     * user, is at fault, as for an op the interpreter lacks. */
    tr_diag_print(&d, stderr);
    rc = CLI_EXIT_FINDING;
    goto done;
  }
  ins = tr_xcalloc(n ? (size_t)n : 1, sizeof *ins);
  if (nfiles > 0) {
    rc = read_inputs(cmd, files, nfiles, lv, n, ins);
    if (rc != CLI_EXIT_OK) goto done;
  } else {
    for (int j = 0; j < n; j++) {
      const tr_shape *s = lv[j].shape;
      ins[j] = tr_tensor_new(s->dtype, s->rank, s->dims, &d);
      if (!ins[j] || tr_input_fill(ins[j], &lv[j].spec, cfg.seed, (uint64_t)j, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        rc = CLI_EXIT_FINDING; /* a parameter too large to allocate */
        goto done;
      }
    }
  }
  for (int j = 0; j < n; j++) {
    printf("in%d: ", j);
    print_type(ins[j]);
    if (nfiles > 0) {
      printf(" from %s\n", files[j]);
    } else {
      tr_buf b = {0};
      tr_input_spec_print(&b, &lv[j].spec);
      printf(" %s seed=%llu\n", tr_buf_str(&b), (unsigned long long)cfg.seed);
      tr_buf_free(&b);
    }
  }
  /* Inputs go to disk before evaluating, so a run that fails can still be
   * repeated and reported. */
  if (outdir) {
    if (!make_dir(outdir)) {
      rc = CLI_EXIT_USAGE;
      goto done;
    }
    for (int j = 0; j < n; j++)
      if (!write_npy(outdir, "in", j, ins[j])) {
        rc = CLI_EXIT_USAGE;
        goto done;
      }
  }
  tr_eval_opts eo = {0};
  eo.verified = true;
  eo.deadline_s = ref_timeout;
  eo.max_while_trips = max_trips;
  if (tr_eval_opt(m, &eo, ins, n, &outs, &nouts, &d) != TR_OK) {
    if (d.nmsgs == 0) tr_diag_errorf(&d, "%s: evaluation failed without a "
                                     "diagnostic", cli_input_name(path));
    tr_diag_print(&d, stderr);
    for (int i = 0; i < d.nmsgs && !fill_elided; i++)
      if (strstr(d.msgs[i], "elided constant")) {
        fprintf(stderr, "hint: --fill-elided gives elided constants "
                "deterministic values\n");
        break;
      }
    rc = CLI_EXIT_FINDING;
    goto done;
  }
  for (int j = 0; j < nouts; j++) {
    printf("out%d: ", j);
    print_type(outs[j]);
    summarize(outs[j]);
    if (outdir && !write_npy(outdir, "out", j, outs[j])) rc = CLI_EXIT_USAGE;
  }
  if (shadow) {
    tr_shadow_opts so = {0};
    so.eval = eo;
    tr_shadow_out *sh = NULL;
    int nsh = 0;
    if (tr_eval_shadow(m, &so, ins, n, &sh, &nsh, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      rc = CLI_EXIT_FINDING;
      goto done;
    }
    for (int j = 0; j < nsh; j++) {
      printf("out%d: shadow max_bound=%.6g uncertain=%zu/%zu\n", j, sh[j].max_bound,
             sh[j].nuncertain, sh[j].n);
      if (outdir && !write_shadow(outdir, j, &sh[j])) rc = CLI_EXIT_USAGE;
    }
    tr_shadow_free(sh, nsh);
  }

done:
  tr_diag_clear(&d);
  tr_eval_free_outputs(outs, nouts);
  tr_inputs_free(ins, n);
  tr_free(lv);
  tr_free(files);
  tr_module_free(m);
  return rc;
}
