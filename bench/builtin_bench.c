/* builtin_bench.c - speed of the built-in compiler (src/comp, the builtin
 * target): (a) compile latency of small modules, cold (no cache), with
 * libtcc and with cc -O2; (b) run time of the compiled kernels against the
 * reference interpreter's exact mode on elementwise, reduction, dot and
 * convolution modules (dense and depthwise) of realistic size; (c) the same modules on XLA CPU
 * (the xla-cpu target) when the project virtualenv exists. Every ratio is
 * between numbers measured in this run. bench/builtin_bench.sh builds and
 * runs it; bench/README.md explains the columns. */
#include "../src/target/builtin.h"
#include "../src/comp/pipeline.h"
#include "../src/eval/eval.h"
#include "../src/oracle/inputs.h"
#include "../src/target/target.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int reps;          /* timed runs per case (median) */
  int compile_reps;  /* compiles per module and backend (median) */
  bool quick;        /* smaller run sizes, for a smoke run */
  bool xla;          /* also the xla-cpu target */
  const char *only;  /* only run cases whose name contains this */
} opts;

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + 1e-6 * (double)ts.tv_nsec;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n <= 0) return -1;
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static tr_module *parse_text(const char *text, const char *what) {
  tr_diag d = {0};
  tr_module *m = tr_parse(what, text, strlen(text), NULL, &d);
  if (m && tr_verify(m, &d) != TR_OK) {
    tr_module_free(m);
    m = NULL;
  }
  if (!m) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return m;
}

/* ---- the modules ---- */

static void elementwise(tr_buf *b, long n) {
  tr_buf_printf(b,
                "HloModule ew\nENTRY e {\n"
                "  x = f32[%ld] parameter(0)\n  y = f32[%ld] parameter(1)\n"
                "  a = f32[%ld] multiply(x, y)\n  b = f32[%ld] add(a, x)\n"
                "  z = f32[] constant(0)\n  zb = f32[%ld] broadcast(z), dimensions={}\n"
                "  c = f32[%ld] maximum(b, zb)\n  d = f32[%ld] multiply(c, c)\n"
                "  ROOT r = f32[%ld] subtract(d, y)\n}\n",
                n, n, n, n, n, n, n, n);
}

static void row_reduce(tr_buf *b, long r, long c) {
  tr_buf_printf(b,
                "HloModule rr\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
                "  ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[%ld,%ld] parameter(0)\n"
                "  z = f32[] constant(0)\n"
                "  ROOT r = f32[%ld] reduce(x, z), dimensions={1}, to_apply=add\n}\n",
                r, c, r);
}

static void dot(tr_buf *b, long m, long k, long n) {
  tr_buf_printf(b,
                "HloModule dot\nENTRY e {\n  a = f32[%ld,%ld] parameter(0)\n"
                "  b = f32[%ld,%ld] parameter(1)\n"
                "  ROOT d = f32[%ld,%ld] dot(a, b), lhs_contracting_dims={1}, "
                "rhs_contracting_dims={0}\n}\n",
                m, k, k, n, m, n);
}

static void conv(tr_buf *b, long batch, long hw, long cin, long cout) {
  tr_buf_printf(b,
                "HloModule conv\nENTRY e {\n  x = f32[%ld,%ld,%ld,%ld] parameter(0)\n"
                "  w = f32[3,3,%ld,%ld] parameter(1)\n"
                "  ROOT c = f32[%ld,%ld,%ld,%ld] convolution(x, w), window={size=3x3 "
                "pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n",
                batch, hw, hw, cin, cin, cout, batch, hw, hw, cout);
}

/* Depthwise: one input feature per group (feature_group_count = c). */
static void conv_dw(tr_buf *b, long batch, long hw, long c) {
  tr_buf_printf(b,
                "HloModule convdw\nENTRY e {\n  x = f32[%ld,%ld,%ld,%ld] parameter(0)\n"
                "  w = f32[3,3,1,%ld] parameter(1)\n"
                "  ROOT c = f32[%ld,%ld,%ld,%ld] convolution(x, w), window={size=3x3 "
                "pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=%ld\n}\n",
                batch, hw, hw, c, c, batch, hw, hw, c, c);
}

/* ---- (a) compile latency ---- */

static void compile_case(const opts *o, const char *name, const char *text) {
  tr_module *m = parse_text(text, name);
  if (!m) return;
  tr_bc_ctx ctx;
  tr_bc_ctx_init(&ctx);
  ctx.verify = false; /* as a release build would */
  tr_diag d = {0};
  tr_buf src = {0};
  double t0 = now_ms();
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  if (tr_bc_pipeline_run(&ctx, m, &d) != TR_OK || tr_emit_c(m, &eo, &src, &d) != TR_OK) {
    printf("%-22s  (does not compile: %s)\n", name, tr_diag_first(&d) ? tr_diag_first(&d) : "?");
    goto out;
  }
  double front = now_ms() - t0;
  double ms[2][64];
  int n[2] = {0, 0};
  for (int be = 0; be < 2; be++) {
    if (be == 1 && !tr_jit_have_tcc()) continue;
    tr_jit_opts jo;
    tr_jit_opts_init(&jo);
    jo.backend = be ? TR_JIT_TCC : TR_JIT_CC;
    jo.no_cache = true;
    for (int r = 0; r < o->compile_reps && r < 64; r++) {
      tr_jit_code *c = NULL;
      tr_jit_stats st;
      double c0 = now_ms();
      if (tr_jit_compile(&jo, tr_buf_str(&src), &c, &st, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        tr_diag_clear(&d);
        break;
      }
      ms[be][n[be]++] = now_ms() - c0; /* compile and load, as a run pays it */
      tr_jit_release(c);
    }
  }
  double cc = median(ms[0], n[0]), tcc = median(ms[1], n[1]);
  printf("%-22s %7zu %9.2f %10.1f %10.2f %8.1fx\n", name, src.n, front, cc, tcc,
         tcc > 0 ? cc / tcc : 0.0);
out:
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_bc_ctx_free(&ctx);
  tr_module_free(m);
}

/* ---- (b), (c) run time ---- */

typedef struct {
  tr_target *cc, *tcc, *xla;
} targets;

/* Median kernel time (run_ms) of target t on m, after one warm-up run
 * that compiles, and in *wall the median time of the whole request; -1
 * when the target declined. Sets *same when the outputs are bit for bit
 * the reference's (ref may be NULL: not checked). */
static double target_ms(tr_target *t, const tr_module *m, tr_tensor **in, int nin, int reps,
                        tr_tensor **ref, int nref, bool *same, double *wall, char *why,
                        size_t nwhy) {
  double v[64], w[64];
  int n = 0;
  tr_run_opts ro = {0};
  ro.timeout_s = 600;
  for (int r = 0; r <= reps && r < 64; r++) {
    tr_run_result res;
    tr_diag d = {0};
    tr_status s = tr_target_run(t, m, in, nin, &ro, &res, &d);
    if (s != TR_OK || res.verdict != TR_VERDICT_OK) {
      snprintf(why, nwhy, "%s", s != TR_OK ? (tr_diag_first(&d) ? tr_diag_first(&d) : "failed")
                                           : (res.message ? res.message : tr_verdict_name(res.verdict)));
      tr_diag_clear(&d);
      tr_run_result_free(&res);
      return -1;
    }
    if (r == 0 && same && ref) {
      *same = res.noutputs == nref;
      for (int i = 0; *same && i < nref; i++)
        *same = ref[i]->nbytes == res.outputs[i]->nbytes &&
                memcmp(ref[i]->data, res.outputs[i]->data, ref[i]->nbytes) == 0;
    }
    if (r > 0) {
      w[n] = res.wall_ms;
      v[n++] = res.run_ms; /* the kernel (timed in the worker, or XLA's execute) */
    }
    tr_diag_clear(&d);
    tr_run_result_free(&res);
  }
  if (wall) *wall = median(w, n);
  return median(v, n);
}

static void run_case(const opts *o, const targets *t, const char *name, const char *text,
                     int reps) {
  if (o->only && !strstr(name, o->only)) return;
  tr_module *m = parse_text(text, name);
  if (!m) return;
  tr_input_config ic;
  tr_input_config_init(&ic);
  ic.seed = 1;
  tr_tensor **in = NULL, **ref = NULL;
  int nin = 0, nref = 0;
  tr_diag d = {0};
  if (tr_inputs_make(m, &ic, &in, &nin, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    goto out;
  }
  /* The reference, exact mode: the median wall time of a whole evaluation. */
  double v[64];
  int n = 0;
  tr_eval_opts eo = {0, true, 0};
  for (int r = 0; r < reps && r < 64; r++) {
    if (ref) tr_eval_free_outputs(ref, nref);
    ref = NULL;
    double t0 = now_ms();
    if (tr_eval_opt(m, &eo, in, nin, &ref, &nref, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      goto out;
    }
    v[n++] = now_ms() - t0;
  }
  double ref_ms = median(v, n);
  char why[200] = "";
  bool same = false, same_tcc = false;
  double wall = -1;
  double cc = target_ms(t->cc, m, in, nin, reps, ref, nref, &same, &wall, why, sizeof why);
  if (cc < 0) fprintf(stderr, "  %s: builtin: %s\n", name, why);
  double tcc = t->tcc ? target_ms(t->tcc, m, in, nin, reps, ref, nref, &same_tcc, NULL, why,
                                  sizeof why) : -1;
  double xla = t->xla ? target_ms(t->xla, m, in, nin, reps, NULL, 0, NULL, NULL, why, sizeof why)
                      : -1;
  if (t->xla && xla < 0) fprintf(stderr, "  %s: xla-cpu: %s\n", name, why);
  printf("%-26s %9.2f %9.2f %7.1fx %9.2f %4s %9.2f %7.2fx", name, ref_ms, cc,
         cc > 0 ? ref_ms / cc : 0.0, wall, cc < 0 ? "-" : same && (!t->tcc || same_tcc) ? "yes" : "NO",
         tcc, tcc > 0 ? ref_ms / tcc : 0.0);
  if (xla > 0) printf(" %9.2f %7.2fx\n", xla, cc > 0 ? xla / cc : 0.0);
  else printf(" %9s %8s\n", "-", "-");
out:
  tr_diag_clear(&d);
  if (ref) tr_eval_free_outputs(ref, nref);
  tr_inputs_free(in, nin);
  tr_module_free(m);
}

static tr_target *open_target(const char *spec, bool quiet) {
  tr_target *t = NULL;
  tr_diag d = {0};
  if (tr_target_open(spec, NULL, &t, &d) != TR_OK) {
    if (!quiet) fprintf(stderr, "%s not available: %s\n", spec, tr_diag_first(&d));
    t = NULL;
  }
  tr_diag_clear(&d);
  return t;
}

int main(int argc, char **argv) {
  opts o = {3, 5, false, true, NULL};
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--reps") == 0 && i + 1 < argc) o.reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--compile-reps") == 0 && i + 1 < argc) o.compile_reps = atoi(argv[++i]);
    else if (strcmp(argv[i], "--quick") == 0) o.quick = true;
    else if (strcmp(argv[i], "--no-xla") == 0) o.xla = false;
    else if (strcmp(argv[i], "--only") == 0 && i + 1 < argc) o.only = argv[++i];
    else {
      fprintf(stderr, "usage: builtin_bench [--reps N] [--compile-reps N] [--quick] [--no-xla] "
                      "[--only NAME]\n");
      return 2;
    }
  }
  if (o.reps < 1) o.reps = 1;
  if (o.compile_reps < 1) o.compile_reps = 1;

  printf("(a) compile latency, cold (no cache): median of %d; ms from C text to a loaded entry\n",
         o.compile_reps);
  printf("%-22s %7s %9s %10s %10s %9s\n", "module", "C bytes", "passes+C", "cc -O2", "libtcc",
         "cc/tcc");
  tr_buf b = {0};
  elementwise(&b, 1024);
  compile_case(&o, "elementwise f32[1024]", b.p);
  b.n = 0;
  row_reduce(&b, 64, 64);
  compile_case(&o, "reduce f32[64,64]", b.p);
  b.n = 0;
  dot(&b, 64, 64, 64);
  compile_case(&o, "dot 64^3", b.p);
  b.n = 0;
  conv(&b, 1, 8, 4, 4);
  compile_case(&o, "conv 1x8x8x4->4", b.p);
  b.n = 0;
  char *mlp = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file("examples/mlp.hlo", &mlp, &len, &d) == TR_OK) compile_case(&o, "examples/mlp.hlo", mlp);
  tr_diag_clear(&d);
  free(mlp);

  targets t = {open_target("builtin", false), open_target("builtin:jit=tcc", true), NULL};
  if (!t.cc) return 1;
  if (o.xla) t.xla = open_target("xla-cpu", false);
  printf("\n(b) run time, median of %d after a warm-up; ms. ref: reference interpreter,\n"
         "exact mode (whole evaluation); builtin: cc -O2 kernel, timed in its forked worker;\n"
         "bi-req: builtin's whole request (passes, emit, cached JIT, fork, copies); same:\n"
         "builtin's outputs (cc and tcc) equal the reference's bit for bit; bi-tcc: the\n"
         "libtcc kernel; xla-cpu: XLA CPU's execute (jax adapter); xla/bi < 1: XLA faster\n",
         o.reps);
  printf("%-26s %9s %9s %8s %9s %4s %9s %8s %9s %8s\n", "module", "ref", "builtin", "ref/bi",
         "bi-req", "same", "bi-tcc", "ref/tcc", "xla-cpu", "xla/bi");
  long ew = o.quick ? 65536 : 1048576;
  b.n = 0;
  elementwise(&b, ew);
  char name[64];
  snprintf(name, sizeof name, "elementwise x5 f32[%ld]", ew);
  run_case(&o, &t, name, b.p, o.reps);
  long rr = o.quick ? 256 : 1024;
  b.n = 0;
  row_reduce(&b, rr, rr);
  snprintf(name, sizeof name, "row reduce f32[%ld,%ld]", rr, rr);
  run_case(&o, &t, name, b.p, o.reps);
  long sizes[2] = {o.quick ? 64 : 256, o.quick ? 128 : 512};
  for (int i = 0; i < 2; i++) {
    b.n = 0;
    dot(&b, sizes[i], sizes[i], sizes[i]);
    snprintf(name, sizeof name, "dot %ld^3 f32", sizes[i]);
    run_case(&o, &t, name, b.p, o.reps);
  }
  b.n = 0;
  long si = o.quick ? 64 : 256;
  dot(&b, si, si, si);
  for (char *p = strstr(b.p, "f32"); p; p = strstr(p, "f32")) memcpy(p, "s32", 3);
  snprintf(name, sizeof name, "dot %ld^3 s32", si);
  run_case(&o, &t, name, b.p, o.reps);
  b.n = 0;
  long hw = o.quick ? 8 : 32;
  conv(&b, 8, hw, 64, 64);
  snprintf(name, sizeof name, "conv 8x%ldx%ldx64->64 3x3", hw, hw);
  run_case(&o, &t, name, b.p, o.reps);
  b.n = 0;
  conv_dw(&b, 8, hw, 64);
  snprintf(name, sizeof name, "depthwise 8x%ldx%ldx64 3x3", hw, hw);
  run_case(&o, &t, name, b.p, o.reps);
  tr_buf_free(&b);
  tr_target_close(t.cc);
  tr_target_close(t.tcc);
  tr_target_close(t.xla);
  return 0;
}
