/* cmd_compile.c - "trench compile": runs the built-in compiler's pass
 * pipeline and C emitter on a module and writes the translation unit (or
 * the optimized module), with the pass and rewrite summary on stderr. The
 * same steps the builtin target takes before it runs a kernel
 * (src/target/builtin.c), made visible: --disable, --fuel and --inject
 * steer them, --dump-after shows the module between passes, --jit checks
 * that the C compiles and says how long it took, --run runs the kernel
 * once against the reference. */
#include "cli.h"

#include "../comp/defects.h"
#include "../comp/emit.h"
#include "../comp/jit.h"
#include "../target/builtin.h"
#include "../comp/pipeline.h"
#include "../eval/eval.h"
#include "../oracle/inputs.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_compile = {
  "compile", "compile a module with the built-in compiler to C",
  "Usage: trench compile [OPTIONS] MODULE\n"
  "\n"
  "Runs the built-in compiler's pass pipeline (docs/COMPILER.md) on the\n"
  "HLO module MODULE (\"-\" reads stdin) and its C emitter (docs/EMITTER.md)\n"
  "on the result, and writes the C translation unit to stdout or -o FILE.\n"
  "It exports int trench_entry(unsigned char **in, unsigned char **out).\n"
  "A summary goes to stderr: the passes run, the rewrites applied per pass\n"
  "and per rule, the fuel used, the size of the C text and, with --jit,\n"
  "the compile time.\n"
  "\n"
  "Options:\n"
  "  -o, --output FILE    write the result to FILE instead of stdout\n"
  "      --emit WHAT      what to write: c (default), hlo (the optimized\n"
  "                       module, with its fusions) or none\n"
  "      --disable NAME   skip a pass or a rewrite rule (repeatable)\n"
  "      --fuel N         stop rewriting after N rule applications\n"
  "      --inject NAME    plant a defect of 'trench defects' (repeatable)\n"
  "      --dump-after P   print the module to stderr after each run of pass P\n"
  "      --jit cc|tcc     also compile the C in-process: cc (the system C\n"
  "                       compiler, -O2, a shared object) or tcc (libtcc,\n"
  "                       in memory); no cache\n"
  "      --run            also run it once, as the builtin target does, on\n"
  "                       inputs drawn with --seed (docs/INPUTS.md), and\n"
  "                       compare every output with the reference\n"
  "                       interpreter bit for bit (NaN payloads aside);\n"
  "                       the report goes to stderr\n"
  "      --seed N         seed of --run's inputs (default 0)\n"
  CLI_REF_LIMITS_HELP
  "      --lanes N        the emitter's lane width (default 8)\n"
  "      --tile N         the emitter's output tile (default 16)\n"
  "  -q, --quiet          no summary on stderr\n"
  "  -h, --help           show this help\n"
  "\n"
  "Passes: dce constant-fold simplify cse while-simplify fusion.\n"
  "\n"
  "Exit codes:\n"
  "  0  compiled\n"
  "  1  MODULE has a syntax or verify error, a pass left an invalid module,\n"
  "     (--jit, --run) the C compiler rejected the emitted C, or (--run) the\n"
  "     kernel crashed, hung, gave up or differs from the reference: all\n"
  "     but the first are bugs of the built-in compiler (or planted ones)\n"
  "  2  usage error (unknown pass, rule, defect or option), unreadable\n"
  "     MODULE, unwritable output, an op or dtype the emitter does not\n"
  "     support, or the C compiler cannot be run\n",
  run,
};

typedef struct {
  const char *name;
  int count;
} tally;

/* Adds one to name's count in v (names are static strings). */
static void tally_add(tally **v, int *n, const char *name) {
  for (int i = 0; i < *n; i++)
    if (strcmp((*v)[i].name, name) == 0) {
      (*v)[i].count++;
      return;
    }
  *v = tr_xrealloc(*v, sizeof **v * (size_t)(*n + 1));
  (*v)[*n].name = name;
  (*v)[(*n)++].count = 1;
}

static int by_count(const void *a, const void *b) {
  const tally *x = a, *y = b;
  if (x->count != y->count) return y->count - x->count;
  return strcmp(x->name, y->name);
}

/* The rewrite summary: total, per pass (in order of first use), per rule
 * (most applied first). */
static void print_summary(FILE *f, const tr_bc_ctx *c, int64_t fuel) {
  fprintf(f, "passes: ");
  const char *const *p = tr_bc_pass_names();
  for (int i = 0; p[i]; i++)
    fprintf(f, "%s%s%s", i ? " " : "", p[i], tr_bc_pass_enabled(c, p[i]) ? "" : "(off)");
  fprintf(f, "\n");
  tally *passes = NULL, *rules = NULL;
  int npasses = 0, nrules = 0;
  for (int i = 0; i < c->nlog; i++) {
    tally_add(&passes, &npasses, c->log[i].pass);
    tally_add(&rules, &nrules, c->log[i].rule);
  }
  fprintf(f, "rewrites: %d", c->nlog);
  for (int i = 0; i < npasses; i++)
    fprintf(f, "%s%s %d", i ? ", " : " (", passes[i].name, passes[i].count);
  fprintf(f, "%s\n", npasses ? ")" : "");
  if (nrules) qsort(rules, (size_t)nrules, sizeof *rules, by_count);
  for (int i = 0; i < nrules; i++) fprintf(f, "  %-32s %d\n", rules[i].name, rules[i].count);
  if (fuel >= 0)
    fprintf(f, "fuel: %lld of %lld used%s\n", (long long)(fuel - c->fuel), (long long)fuel,
            c->fuel == 0 ? " (spent: later rewrites skipped)" : "");
  tr_free(passes);
  tr_free(rules);
}

static bool parse_count(const char *s, int64_t lo, int64_t hi, int64_t *v) {
  char *end;
  errno = 0;
  long long x = strtoll(s, &end, 10);
  if (!*s || *end || errno || x < lo || x > hi) return false;
  *v = x;
  return true;
}

static bool known_pass(const char *name) {
  const char *const *p = tr_bc_pass_names();
  for (int i = 0; p[i]; i++)
    if (strcmp(p[i], name) == 0) return true;
  return false;
}

/* Flat index i of t as "[i,j,k]". */
static void put_index(tr_buf *b, const tr_tensor *t, size_t i) {
  int64_t idx[64];
  for (int k = t->rank - 1; k >= 0; k--) {
    int64_t dk = t->dims[k] ? t->dims[k] : 1;
    idx[k] = (int64_t)(i % (size_t)dk);
    i /= (size_t)dk;
  }
  tr_buf_putc(b, '[');
  for (int k = 0; k < t->rank; k++) tr_buf_printf(b, k ? ",%lld" : "%lld", (long long)idx[k]);
  tr_buf_putc(b, ']');
}

/* Elements of a and b (same type) that differ: bits, except that two
 * NaNs of a float type are equal (payloads are not semantics). *first
 * gets the first one. */
static size_t count_diffs(const tr_tensor *a, const tr_tensor *b, size_t *first) {
  size_t n = tr_tensor_count(a), bad = 0;
  bool flt = tr_dtype_is_float(a->dtype);
  for (size_t i = 0; i < n; i++) {
    if (tr_tensor_get_bits(a, i) == tr_tensor_get_bits(b, i)) continue;
    if (flt && isnan(tr_tensor_get_f(a, i)) && isnan(tr_tensor_get_f(b, i))) continue;
    if (bad++ == 0) *first = i;
  }
  return bad;
}

/* --run: the module once through the builtin target configured as this
 * compile (same passes, fuel, defects, emitter options, backend) and
 * through the reference, on the same drawn inputs. */
/* The pass pipeline and the emitter run in heap frames (base.h): out of
 * memory in them is a verdict, declined, not a finding and not an abort.
 * The passes run on a clone made in the frame, so an unwind leaves the
 * loaded module whole. */
typedef struct {
  tr_bc_ctx *ctx;
  const tr_module *m;
  tr_module *opt;
  tr_diag *d;
  tr_status s;
} pipe_job;

static void pipe_fn(void *p) {
  pipe_job *j = p;
  j->opt = tr_module_clone(j->m);
  j->s = tr_bc_pipeline_run(j->ctx, j->opt, j->d);
}

typedef struct {
  const tr_module *m;
  const tr_emit_opts *eo;
  tr_buf c;
  tr_diag *d;
  tr_status s;
} emit_job;

static void emit_fn(void *p) {
  emit_job *j = p;
  j->s = tr_emit_c(j->m, j->eo, &j->c, j->d);
}

static int run_once(const tr_module *m, const tr_builtin_config *bc, uint64_t seed,
                    const tr_eval_opts *limits) {
  tr_diag d = {0};
  tr_input_config ic;
  tr_input_config_init(&ic);
  ic.seed = seed;
  tr_tensor **in = NULL, **ref = NULL;
  int nin = 0, nref = 0, rc = CLI_EXIT_OK;
  tr_target *t = NULL;
  tr_run_result r;
  tr_run_result_init(&r);
  if (tr_inputs_make(m, &ic, &in, &nin, &d) != TR_OK) {
    rc = CLI_EXIT_USAGE;
    goto out;
  }
  tr_eval_opts eo = *limits;
  eo.verified = true;
  if (tr_eval_opt(m, &eo, in, nin, &ref, &nref, &d) != TR_OK) {
    fprintf(stderr, "run: the reference cannot evaluate the module\n");
    rc = CLI_EXIT_USAGE;
    goto out;
  }
  if (tr_builtin_open_config(bc, NULL, &t, &d) != TR_OK) {
    rc = CLI_EXIT_USAGE;
    goto out;
  }
  tr_run_opts ro = {0};
  if (tr_target_run(t, m, in, nin, &ro, &r, &d) != TR_OK) {
    rc = CLI_EXIT_USAGE;
    goto out;
  }
  if (r.verdict != TR_VERDICT_OK) {
    fprintf(stderr, "run: %s: %s\n", tr_verdict_name(r.verdict), r.message ? r.message : "");
    rc = r.verdict == TR_VERDICT_UNSUPPORTED ? CLI_EXIT_USAGE : CLI_EXIT_FINDING;
    goto out;
  }
  fprintf(stderr, "run: seed %llu, kernel %.3f ms\n", (unsigned long long)seed, r.run_ms);
  for (int i = 0; i < nref && i < r.noutputs; i++) {
    tr_buf line = {0};
    tr_tensor_print_type(&line, ref[i]);
    size_t first = 0, bad = count_diffs(ref[i], r.outputs[i], &first);
    if (!bad) {
      fprintf(stderr, "out%d: %s same as the reference\n", i, tr_buf_str(&line));
    } else {
      tr_buf_printf(&line, " differs in %zu of %zu elements; first at ", bad, tr_tensor_count(ref[i]));
      put_index(&line, ref[i], first);
      tr_buf_printf(&line, ": reference %.17g (0x%llx), builtin %.17g (0x%llx)",
                    tr_tensor_get_f(ref[i], first),
                    (unsigned long long)tr_tensor_get_bits(ref[i], first),
                    tr_tensor_get_f(r.outputs[i], first),
                    (unsigned long long)tr_tensor_get_bits(r.outputs[i], first));
      fprintf(stderr, "out%d: %s\n", i, tr_buf_str(&line));
      rc = CLI_EXIT_FINDING;
    }
    tr_buf_free(&line);
  }
out:
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_run_result_free(&r);
  tr_target_close(t);
  if (ref) tr_eval_free_outputs(ref, nref);
  tr_inputs_free(in, nin);
  return rc;
}

/* Writes text to path ("-" or NULL: stdout). */
static bool write_out(const char *path, const char *text, size_t n) {
  if (!path || strcmp(path, "-") == 0) return fwrite(text, 1, n, stdout) == n;
  FILE *f = fopen(path, "wb");
  if (!f) {
    fprintf(stderr, "trench compile: cannot write %s: %s\n", path, strerror(errno));
    return false;
  }
  bool ok = fwrite(text, 1, n, f) == n;
  ok &= fclose(f) == 0;
  if (!ok) fprintf(stderr, "trench compile: error writing %s\n", path);
  return ok;
}

static int run(int argc, char **argv) {
  const cli_cmd *me = &cli_cmd_compile;
  cli_opts o;
  cli_opts_init(&o, me, argc, argv);
  const char *module = NULL, *out_path = NULL, *emit_what = "c", *dump_after = NULL;
  const char *jit = NULL;
  bool quiet = false, run_it = false;
  int64_t fuel = -1, v;
  uint64_t seed = 0;
  tr_eval_opts limits = {0};
  const char *disabled[64];
  int ndisabled = 0;
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  tr_bc_ctx ctx;
  tr_bc_ctx_init(&ctx);
  tr_diag d = {0};
  int k;
  while ((k = cli_opts_next(&o))) {
    if (k == 'f') {
      if (module) cli_usage_error(me, "one MODULE only ('%s' and '%s')", module, o.arg);
      module = o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_is(&o, "-o", "--output")) out_path = cli_opt_value(&o);
    else if (cli_opt_is(&o, NULL, "--emit")) {
      emit_what = cli_opt_value(&o);
      if (strcmp(emit_what, "c") != 0 && strcmp(emit_what, "hlo") != 0 &&
          strcmp(emit_what, "none") != 0)
        cli_usage_error(me, "--emit takes c, hlo or none, not '%s'", emit_what);
    } else if (cli_opt_is(&o, NULL, "--disable")) {
      const char *name = cli_opt_value(&o);
      if (ndisabled == 64) cli_usage_error(me, "at most 64 --disable");
      disabled[ndisabled++] = name;
      if (tr_bc_ctx_disable(&ctx, name, &d) != TR_OK) {
        const char *m = tr_diag_first(&d);
        cli_usage_error(me, "%s (passes: dce constant-fold simplify cse while-simplify fusion)",
                        m ? m : "unknown pass or rule");
      }
    } else if (cli_opt_is(&o, NULL, "--fuel")) {
      const char *s = cli_opt_value(&o);
      if (!parse_count(s, 0, INT64_MAX, &fuel)) cli_usage_error(me, "--fuel wants a count >= 0, not '%s'", s);
    } else if (cli_opt_is(&o, NULL, "--inject")) {
      const char *s = cli_opt_value(&o);
      int id = tr_defect_lookup(s);
      if (id < 0) cli_usage_error(me, "unknown defect '%s' (see trench defects)", s);
      eo.inject |= (uint64_t)1 << id;
    } else if (cli_opt_is(&o, NULL, "--dump-after")) {
      dump_after = cli_opt_value(&o);
      if (!known_pass(dump_after))
        cli_usage_error(me, "--dump-after: no pass '%s' (passes: dce constant-fold simplify cse "
                        "while-simplify fusion)", dump_after);
    } else if (cli_opt_is(&o, NULL, "--jit")) {
      jit = cli_opt_value(&o);
      if (strcmp(jit, "cc") != 0 && strcmp(jit, "tcc") != 0)
        cli_usage_error(me, "--jit takes cc or tcc, not '%s'", jit);
    } else if (cli_opt_is(&o, NULL, "--lanes")) {
      const char *s = cli_opt_value(&o);
      if (!parse_count(s, 1, 64, &v)) cli_usage_error(me, "--lanes wants 1..64, not '%s'", s);
      eo.lanes = (int)v;
    } else if (cli_opt_is(&o, NULL, "--tile")) {
      const char *s = cli_opt_value(&o);
      if (!parse_count(s, 1, 256, &v)) cli_usage_error(me, "--tile wants 1..256, not '%s'", s);
      eo.tile = (int)v;
    } else if (cli_opt_is(&o, NULL, "--seed")) {
      const char *s = cli_opt_value(&o);
      char *end;
      errno = 0;
      seed = strtoull(s, &end, 0);
      if (!*s || *end || errno || *s == '-') cli_usage_error(me, "--seed wants a number, not '%s'", s);
    } else if (cli_opt_flag(&o, NULL, "--run")) run_it = true;
    else if (cli_opt_ref_limits(&o, &limits.deadline_s, &limits.max_while_trips)) continue;
    else if (cli_opt_flag(&o, "-q", "--quiet")) quiet = true;
    else cli_usage_error(me, "unknown option '%s'", o.arg);
  }
  if (!module) cli_usage_error(me, "no MODULE given");

  int rc;
  tr_module *m = cli_load(module, true, &rc);
  if (!m) {
    tr_bc_ctx_free(&ctx);
    return rc;
  }
  tr_buf dump = {0}, text = {0};
  /* --run takes the module as given: the target runs the passes itself. */
  tr_module *orig = run_it ? tr_module_clone(m) : NULL;
  ctx.fuel = fuel;
  ctx.inject = eo.inject; /* one defect set for passes and emitter, as builtin */
  ctx.dump_after = dump_after;
  ctx.dump = &dump;
  pipe_job pj = {&ctx, m, NULL, &d, TR_OK};
  size_t oom = 0;
  if (!tr_heap_run(pipe_fn, &pj, &oom)) {
    /* ctx was fresh: its log and the dump were made in the frame. */
    ctx.log = NULL;
    ctx.nlog = ctx.caplog = 0;
    ctx.napplied = 0;
    dump = (tr_buf){0};
    tr_heap_diag(&d, cli_input_name(module), "compiling the module", oom);
    tr_diag_print(&d, stderr);
    rc = CLI_EXIT_USAGE; /* declined, not a finding */
    goto done;
  }
  tr_module_free(m);
  m = pj.opt;
  tr_status s = pj.s;
  if (dump.n) fwrite(dump.p, 1, dump.n, stderr);
  if (s != TR_OK) {
    tr_diag_print(&d, stderr);
    fprintf(stderr, "trench compile: %s: the pass pipeline failed\n", cli_input_name(module));
    rc = s == TR_ERR_UNSUPPORTED ? CLI_EXIT_USAGE : CLI_EXIT_FINDING;
    goto done;
  }
  if (!quiet) print_summary(stderr, &ctx, fuel);
  if (strcmp(emit_what, "hlo") == 0) tr_print_module(&text, m);
  if (strcmp(emit_what, "c") == 0 || jit) {
    emit_job ej = {m, &eo, {0}, &d, TR_OK};
    if (!tr_heap_run(emit_fn, &ej, &oom)) {
      tr_heap_diag(&d, cli_input_name(module), "emitting C for the module", oom);
      tr_diag_print(&d, stderr);
      rc = CLI_EXIT_USAGE; /* declined, not a finding */
      goto done;
    }
    tr_buf c = ej.c;
    s = ej.s;
    if (s != TR_OK) {
      tr_buf_free(&c);
      tr_diag_print(&d, stderr);
      rc = CLI_EXIT_USAGE; /* the emitter's limits, not a finding */
      goto done;
    }
    if (!quiet) fprintf(stderr, "emitted: %zu bytes of C\n", c.n);
    if (jit) {
      tr_jit_opts jo;
      tr_jit_opts_init(&jo);
      jo.backend = strcmp(jit, "tcc") == 0 ? TR_JIT_TCC : TR_JIT_CC;
      jo.no_cache = true; /* the time of a compile, not of a lookup */
      tr_jit_code *code = NULL;
      tr_jit_stats st;
      s = tr_jit_compile(&jo, tr_buf_str(&c), &code, &st, &d);
      if (s == TR_OK && !tr_jit_symbol(code, TR_EMIT_ENTRY)) {
        tr_diag_errorf(&d, "jit: the compiled unit has no %s", TR_EMIT_ENTRY);
        s = TR_ERR_INVALID;
      }
      tr_jit_release(code);
      if (s != TR_OK) {
        tr_buf_free(&c);
        tr_diag_print(&d, stderr);
        rc = s == TR_ERR_INVALID ? CLI_EXIT_FINDING : CLI_EXIT_USAGE;
        goto done;
      }
      if (!quiet) fprintf(stderr, "jit: %s compiled it in %.1f ms\n", jit, st.compile_ms);
    }
    if (strcmp(emit_what, "c") == 0) {
      tr_buf_free(&text);
      text = c;
    } else {
      tr_buf_free(&c);
    }
  }
  if (strcmp(emit_what, "none") != 0 && !write_out(out_path, tr_buf_str(&text), text.n))
    rc = CLI_EXIT_USAGE;
  if (run_it && rc == CLI_EXIT_OK) {
    tr_builtin_config bc;
    tr_builtin_config_init(&bc);
    bc.fuel = fuel;
    bc.disable = disabled;
    bc.ndisable = ndisabled;
    bc.emit = eo;
    bc.jit.backend = jit && strcmp(jit, "tcc") == 0 ? TR_JIT_TCC : TR_JIT_CC;
    rc = run_once(orig, &bc, seed, &limits);
  }
done:
  tr_module_free(orig);
  tr_diag_clear(&d);
  tr_buf_free(&dump);
  tr_buf_free(&text);
  tr_bc_ctx_free(&ctx);
  tr_module_free(m);
  return rc;
}
