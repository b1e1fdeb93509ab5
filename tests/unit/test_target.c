/* test_target.c - the cmd: process target against the example echo adapter
 * and against tests/adapters/bad_adapter.py, whose planted misbehaviours
 * (crash, signal, hang, garbage, wrong ids, bad outputs) must each become
 * the right verdict while the test process survives and the next request
 * runs on a restarted child. The adapters need only the system python3. */
#include "../../src/fuzz/campaign.h"
#include "../../src/target/target.h"
#include "test.h"

#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ---- harness ---- */

static const char ADD_NEG[] =
    "HloModule add_neg\n"
    "ENTRY e {\n"
    "  p0 = f32[2,2] parameter(0)\n"
    "  p1 = f32[2,2]{1,0} parameter(1)\n"
    "  a = f32[2,2] add(p0, p1)\n"
    "  n = f32[2,2] negate(a)\n"
    "  ROOT t = (f32[2,2], f32[2,2]) tuple(a, n)\n"
    "}\n";

static const char MUL_S32[] =
    "HloModule mul\n"
    "ENTRY e {\n"
    "  p0 = s32[3] parameter(0)\n"
    "  p1 = s32[3] parameter(1)\n"
    "  ROOT m = s32[3] multiply(p0, p1)\n"
    "}\n";

static const char EXP[] =
    "HloModule ex\n"
    "ENTRY e {\n"
    "  p0 = f32[2,2] parameter(0)\n"
    "  p1 = f32[2,2] parameter(1)\n"
    "  ROOT x = f32[2,2] exponential(p0)\n"
    "}\n";

static tr_module *parse_ok(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  return m;
}

static tr_tensor *tensor(tr_dtype dt, int64_t n0, int64_t n1, const double *v) {
  int64_t dims[2] = {n0, n1};
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(dt, n1 > 0 ? 2 : 1, dims, &d);
  TR_ASSERT(t);
  for (size_t i = 0; i < tr_tensor_count(t); i++) tr_tensor_set_f(t, i, v[i]);
  return t;
}

/* "cmd:python3 'TESTS/../adapters/example/echo_adapter.py'" and friends. */
static char *spec_for(const char *script, const char *args) {
  tr_buf b = {0};
  tr_buf_printf(&b, "cmd:python3 '%s/%s' %s", tr_test_dir, script, args);
  char *s = tr_xstrdup(tr_buf_str(&b));
  tr_buf_free(&b);
  return s;
}

static tr_target *open_spec(const char *script, const char *args,
                            double timeout_s) {
  char *spec = spec_for(script, args);
  tr_target_config cfg;
  tr_target_config_init(&cfg);
  cfg.timeout_s = timeout_s;
  cfg.start_timeout_s = 20;
  tr_diag d = {0};
  tr_target *t = NULL;
  if (tr_target_open(spec, &cfg, &t, &d) != TR_OK) {
    fprintf(stderr, "  cannot open %s:\n", spec);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  free(spec);
  return t;
}

static tr_target *open_echo(void) {
  return open_spec("../adapters/example/echo_adapter.py", "", 20);
}

static tr_target *open_bad(const char *args, double timeout_s) {
  return open_spec("adapters/bad_adapter.py", args, timeout_s);
}

/* Runs text on two inputs of the module's entry parameter type. */
static tr_status run_text(tr_target *t, const char *text, tr_run_opts *o,
                          tr_run_result *r) {
  static const double a[4] = {1, 2, 3, 4}, b[4] = {0.5, -2, 10, 0.25};
  tr_module *m = parse_ok(text);
  if (!m) {
    tr_run_result_init(r);
    return TR_ERR_SYNTAX;
  }
  bool is_s32 = m->entry->params[0]->shape->dtype == TR_DT_S32;
  tr_tensor *in[2];
  if (is_s32) {
    static const double x[3] = {3, 65536, -7}, y[3] = {5, 65536, 6};
    in[0] = tensor(TR_DT_S32, 3, 0, x);
    in[1] = tensor(TR_DT_S32, 3, 0, y);
  } else {
    in[0] = tensor(TR_DT_F32, 2, 2, a);
    in[1] = tensor(TR_DT_F32, 2, 2, b);
  }
  tr_diag d = {0};
  tr_status s = tr_target_run(t, m, in, 2, o, r, &d);
  if (s != TR_OK) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_tensor_free(in[0]);
  tr_tensor_free(in[1]);
  tr_module_free(m);
  return s;
}

static void check_add_neg(const tr_run_result *r) {
  CHECK_EQ_INT(r->verdict, TR_VERDICT_OK);
  CHECK_EQ_INT(r->noutputs, 2);
  if (r->noutputs != 2) return;
  static const double sum[4] = {1.5, 0, 13, 4.25};
  for (int i = 0; i < 4; i++) {
    CHECK(tr_tensor_get_f(r->outputs[0], (size_t)i) == sum[i]);
    CHECK(tr_tensor_get_f(r->outputs[1], (size_t)i) == -sum[i]);
  }
  CHECK_EQ_INT(r->outputs[0]->dtype, TR_DT_F32);
  CHECK_EQ_INT(r->outputs[1]->rank, 2);
}

/* ---- the echo adapter ---- */

TR_TEST(target_echo_hello) {
  tr_target *t = open_echo();
  if (!t) return;
  CHECK_STR(t->name, "echo");
  CHECK_STR(t->version, "1.0");
  CHECK(t->caps & TR_CAP_OPTIMIZED_HLO);
  CHECK(t->caps & TR_CAP_TIMINGS);
  CHECK(!(t->caps & TR_CAP_DISABLE_PASSES));
  CHECK(tr_proc_pid(t) > 0);
  CHECK_STR(t->ops->kind, "cmd");
  tr_target_close(t);
}

TR_TEST(target_echo_run) {
  tr_target *t = open_echo();
  if (!t) return;
  tr_run_opts o = {0};
  o.want_optimized_hlo = true;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, &o, &r), TR_OK);
  check_add_neg(&r);
  CHECK_CONTAINS(r.optimized_hlo, "negate(%a)");
  CHECK(r.compile_ms >= 0 && r.run_ms >= 0 && r.wall_ms >= 0);
  CHECK(r.stderr_tail == NULL);
  tr_run_result_free(&r);
  /* Integers wrap as HLO's do: 65536 * 65536 is 0 in s32. */
  CHECK_EQ_INT(run_text(t, MUL_S32, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_OK);
  CHECK_EQ_INT(r.noutputs, 1);
  if (r.noutputs == 1) {
    CHECK_EQ_INT(r.outputs[0]->dtype, TR_DT_S32);
    CHECK_EQ_INT(tr_tensor_get_i(r.outputs[0], 0), 15);
    CHECK_EQ_INT(tr_tensor_get_i(r.outputs[0], 1), 0);
    CHECK_EQ_INT(tr_tensor_get_i(r.outputs[0], 2), -42);
  }
  CHECK(r.optimized_hlo == NULL); /* not asked for */
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_echo_unsupported) {
  tr_target *t = open_echo();
  if (!t) return;
  int pid = tr_proc_pid(t);
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, EXP, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_UNSUPPORTED);
  CHECK_CONTAINS(r.message, "exponential");
  CHECK_EQ_INT(r.noutputs, 0);
  tr_run_result_free(&r);
  CHECK_EQ_INT(tr_proc_pid(t), pid); /* a clean refusal keeps the child */
  tr_target_close(t);
}

TR_TEST(target_bad_inputs_are_callers_error) {
  tr_target *t = open_echo();
  if (!t) return;
  tr_module *m = parse_ok(ADD_NEG);
  static const double v[3] = {1, 2, 3};
  tr_tensor *in[2] = {tensor(TR_DT_F32, 3, 0, v), tensor(TR_DT_F32, 3, 0, v)};
  tr_run_result r;
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_run(t, m, in, 2, NULL, &r, &d), TR_ERR_INVALID);
  CHECK_CONTAINS(tr_diag_first(&d), "input 0 is f32[3], parameter 0 wants f32[2,2]");
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_run(t, m, in, 1, NULL, &r, &d), TR_ERR_INVALID);
  tr_diag_clear(&d);
  tr_tensor_free(in[0]);
  tr_tensor_free(in[1]);
  tr_module_free(m);
  tr_target_close(t);
}

TR_TEST(target_open_errors) {
  tr_target *t = NULL;
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_open("cmd:no-such-program-xyz", NULL, &t, &d),
               TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "not found");
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_open("cmd:", NULL, &t, &d), TR_ERR_USAGE);
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_open("cmd:python3 'unclosed", NULL, &t, &d),
               TR_ERR_USAGE);
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_open("nonesuch", NULL, &t, &d), TR_ERR_USAGE);
  tr_diag_clear(&d);
  tr_target_config cfg;
  tr_target_config_init(&cfg);
  cfg.home = tr_test_dir;
  CHECK_EQ_INT(tr_target_open("xla-cpu@0.x", &cfg, &t, &d), TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "expected xla-cpu@VERSION");
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_open("xla-cpu@9.9.9", &cfg, &t, &d), TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "create it with scripts/venv.sh --jax 9.9.9");
  tr_diag_clear(&d);
  CHECK_EQ_INT(tr_target_open("cmd:/dev/null", NULL, &t, &d), TR_ERR_IO);
  CHECK_CONTAINS(tr_diag_first(&d), "cannot run");
  tr_diag_clear(&d);
  /* A program that is no adapter: it exits at once. */
  CHECK_EQ_INT(tr_target_open("cmd:true", NULL, &t, &d), TR_ERR_IO);
  CHECK_CONTAINS(tr_diag_first(&d), "exited with status 0 during 'hello'");
  tr_diag_clear(&d);
  CHECK(t == NULL);
}

TR_TEST(target_hello_timeout) {
  char *spec = spec_for("adapters/bad_adapter.py", "hang-hello");
  tr_target_config cfg;
  tr_target_config_init(&cfg);
  cfg.start_timeout_s = 1;
  tr_target *t = NULL;
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_open(spec, &cfg, &t, &d), TR_ERR_IO);
  CHECK_CONTAINS(tr_diag_first(&d), "no reply to 'hello' within 1 s");
  tr_diag_clear(&d);
  free(spec);
}

/* The start a target is allowed: the caller's, else the target's own. */
TR_TEST(target_start_timeout) {
  tr_target_config cfg;
  tr_target_config_init(&cfg);
  CHECK(tr_target_start_timeout("builtin", &cfg) == 0);
  CHECK(tr_target_start_timeout("interp", &cfg) == 0);
  CHECK(tr_target_start_timeout("xla-cpu", &cfg) == 120);
  CHECK(tr_target_start_timeout("cmd:python3 x.py", &cfg) == 120);
  CHECK(tr_target_start_timeout("torch-inductor", &cfg) == 300);
  CHECK(tr_target_start_timeout("torch-eager@2.4.0", NULL) == 300);
  cfg.start_timeout_s = 600;
  CHECK(tr_target_start_timeout("torch-inductor", &cfg) == 600);
  CHECK(tr_target_start_timeout("xla-cpu", &cfg) == 600);
  CHECK(tr_target_start_timeout("builtin", &cfg) == 0);
}

/* A fuzz test's watchdog holds the worst case a slow target may take
 * without trench being at fault: every seed's run hangs out its timeout
 * and the next one restarts the adapter first (an Inductor test, seed
 * 15: two slow runs and a restart were logged as a trench-hang), plus a
 * finding's extra run and the reference's time per seed. */
TR_TEST(fuzz_test_limit_counts_restarts) {
  tr_fuzz_opts o;
  tr_fuzz_opts_init(&o);
  o.target = "torch-inductor";
  double run = tr_target_run_timeout(o.target), start = tr_target_start_timeout(o.target, &o.tcfg);
  CHECK(tr_fuzz_test_limit(&o) >= o.nseeds * (run + start) + run + start + 20.0 * o.nseeds);
  o.tcfg.start_timeout_s = 600;
  CHECK(tr_fuzz_test_limit(&o) >= o.nseeds * (run + 600) + run + 600);
  o.nseeds = 5;
  CHECK(tr_fuzz_test_limit(&o) >= 6 * (run + 600) + 100);
  /* in-process targets have no start: the given watchdog stands */
  tr_fuzz_opts_init(&o);
  o.target = "builtin";
  CHECK(tr_fuzz_test_limit(&o) == o.test_timeout_s);
  o.test_timeout_s = 5000;
  o.target = "xla-cpu";
  CHECK(tr_fuzz_test_limit(&o) == 5000);
}

/* ---- the reference as a target ---- */

/* interp and the echo adapter compute add/negate exactly: same bits. */
TR_TEST(target_interp_matches_echo) {
  tr_target *ti = NULL, *te = open_echo();
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_open("interp", NULL, &ti, &d), TR_OK);
  if (!ti || !te) {
    tr_target_close(ti);
    tr_target_close(te);
    return;
  }
  CHECK_STR(ti->ops->kind, "interp");
  tr_run_result a, b;
  CHECK_EQ_INT(run_text(ti, ADD_NEG, NULL, &a), TR_OK);
  check_add_neg(&a);
  CHECK(a.run_ms >= 0);
  CHECK_EQ_INT(run_text(te, ADD_NEG, NULL, &b), TR_OK);
  CHECK_EQ_INT(a.noutputs, b.noutputs);
  for (int i = 0; i < a.noutputs && i < b.noutputs; i++)
    CHECK(tr_tensor_equal_bits(a.outputs[i], b.outputs[i]));
  tr_run_result_free(&a);
  tr_run_result_free(&b);
  char **names;
  int n;
  tr_module *m = parse_ok(ADD_NEG);
  CHECK_EQ_INT(tr_target_list_passes(ti, m, &names, &n, &d), TR_ERR_UNSUPPORTED);
  CHECK_EQ_INT(tr_target_list_passes(te, m, &names, &n, &d), TR_ERR_UNSUPPORTED);
  tr_diag_clear(&d);
  tr_module_free(m);
  tr_target_close(ti);
  tr_target_close(te);
}

/* ---- misbehaving adapters ---- */

TR_TEST(target_crash_then_restart) {
  tr_target *t = open_bad("crash multiply", 20);
  if (!t) return;
  int pid = tr_proc_pid(t);
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  check_add_neg(&r);
  tr_run_result_free(&r);
  CHECK_EQ_INT(run_text(t, MUL_S32, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_CRASH);
  CHECK_CONTAINS(r.message, "exited with status 3 during 'run'");
  CHECK_CONTAINS(r.stderr_tail, "bad_adapter: crashing on multiply");
  CHECK_EQ_INT(tr_proc_pid(t), -1);
  tr_run_result_free(&r);
  /* The campaign goes on: a fresh child takes the next request. */
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  check_add_neg(&r);
  CHECK(tr_proc_pid(t) > 0 && tr_proc_pid(t) != pid);
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_signal) {
  tr_target *t = open_bad("segv multiply", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, MUL_S32, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_CRASH);
  CHECK_CONTAINS(r.message, "killed by signal 11");
  tr_run_result_free(&r);
  tr_target_close(t);
}

/* The child dies between requests: the next write meets a closed socket,
 * which must be a crash verdict, not a SIGPIPE that kills trench. */
TR_TEST(target_killed_between_requests) {
  tr_target *t = open_echo();
  if (!t) return;
  int pid = tr_proc_pid(t);
  CHECK(pid > 0);
  if (pid > 0) kill(pid, SIGKILL);
  /* The child is the keeper: once it has exited (a zombie, not yet
   * reaped), the adapter has its parent-death SIGKILL pending and runs no
   * more code, however loaded the machine is. */
  for (int i = 0; pid > 0 && i < 1000; i++) {
    siginfo_t si;
    memset(&si, 0, sizeof si);
    if (waitid(P_PID, (id_t)pid, &si, WEXITED | WNOHANG | WNOWAIT) == 0 && si.si_pid == pid) break;
    struct timespec ts = {0, 10 * 1000000L};
    nanosleep(&ts, NULL);
  }
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_CRASH);
  CHECK_CONTAINS(r.message, "killed by signal 9");
  tr_run_result_free(&r);
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  check_add_neg(&r);
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_hang) {
  tr_target *t = open_bad("hang", 20);
  if (!t) return;
  tr_run_opts o = {0};
  o.timeout_s = 1.5; /* the request's own timeout beats the target's 20 s */
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, &o, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_HANG);
  CHECK_CONTAINS(r.message, "no reply to 'run' within 1.5 s; killed");
  CHECK_CONTAINS(r.stderr_tail, "bad_adapter: run request");
  CHECK(r.wall_ms >= 1400 && r.wall_ms < 5000);
  CHECK_EQ_INT(tr_proc_pid(t), -1);
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_garbage) {
  tr_target *t = open_bad("garbage", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_PROTOCOL_ERROR);
  CHECK_CONTAINS(r.message, "not a JSON object: 'this is not JSON {'");
  CHECK(r.wall_ms < 5000); /* did not wait for the sleeping child */
  CHECK_EQ_INT(tr_proc_pid(t), -1);
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_wrong_id) {
  tr_target *t = open_bad("wrong-id", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_PROTOCOL_ERROR);
  CHECK_CONTAINS(r.message, "has id another");
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_bad_outputs) {
  tr_target *t = open_bad("bad-outputs", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_PROTOCOL_ERROR);
  CHECK_CONTAINS(r.message, "names 3 outputs, the module's root has 2");
  CHECK_EQ_INT(r.noutputs, 0);
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_quit) {
  tr_target *t = open_bad("quit", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_CRASH);
  CHECK_CONTAINS(r.message, "exited with status 0");
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_corrupt_is_silent) {
  tr_target *t = open_bad("corrupt 2 0.001", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  /* The protocol cannot tell: finding this is the oracle's job. */
  CHECK_EQ_INT(r.verdict, TR_VERDICT_OK);
  if (r.noutputs == 2) {
    CHECK(tr_tensor_get_f(r.outputs[0], 1) == 0);
    CHECK(tr_tensor_get_f(r.outputs[0], 2) == (double)(13.0f + 0.001f));
  }
  tr_run_result_free(&r);
  tr_target_close(t);
}

/* 300 KB of stderr per run, more than a pipe holds: trench must keep
 * draining while it waits, and keep only the last 64 KiB. */
TR_TEST(target_stderr_flood) {
  tr_target *t = open_bad("spew 300000", 20);
  if (!t) return;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
  check_add_neg(&r);
  tr_run_result_free(&r);
  CHECK_EQ_INT(run_text(t, EXP, NULL, &r), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_UNSUPPORTED);
  CHECK(r.stderr_tail && strlen(r.stderr_tail) <= 64 * 1024);
  CHECK_CONTAINS(r.stderr_tail, "bad_adapter: end of spew");
  tr_run_result_free(&r);
  tr_target_close(t);
}

TR_TEST(target_shape_leaves) {
  tr_module *m = parse_ok(ADD_NEG);
  if (!m) return;
  const tr_shape *lv[4];
  CHECK_EQ_INT(tr_shape_leaves(m->entry->root->shape, lv, 4), 2);
  CHECK_EQ_INT(lv[1]->dtype, TR_DT_F32);
  CHECK_EQ_INT(tr_shape_leaves(m->entry->params[0]->shape, NULL, 0), 1);
  CHECK_STR(tr_verdict_name(TR_VERDICT_PROTOCOL_ERROR), "protocol_error");
  CHECK_STR(tr_verdict_name(TR_VERDICT_COMPILE_ERROR), "compile_error");
  tr_module_free(m);
}

/* ---- real XLA (target xla-cpu: adapters/xla under .venv), only when
 * tests/adapters/test_xla.sh sets TRENCH_TEST_XLA after making the venv;
 * otherwise these return at once (make test needs no venv). ---- */

static tr_target *open_xla(void) {
  if (!getenv("TRENCH_TEST_XLA")) return NULL;
  tr_buf home = {0};
  tr_buf_printf(&home, "%s/..", tr_test_dir);
  tr_target_config cfg;
  tr_target_config_init(&cfg);
  cfg.home = home.p;
  tr_target *t = NULL;
  tr_diag d = {0};
  if (tr_target_open("xla-cpu", &cfg, &t, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  tr_buf_free(&home);
  return t;
}

/* Zero inputs for every array leaf of the entry parameters. */
static tr_tensor **zero_inputs(const tr_module *m, int *n) {
  const tr_shape *lv[64];
  *n = 0;
  for (int i = 0; i < m->entry->nparams; i++)
    *n += tr_shape_leaves(m->entry->params[i]->shape, lv + *n, 64 - *n);
  TR_ASSERT(*n <= 64);
  tr_tensor **in = tr_xcalloc((size_t)*n + 1, sizeof *in);
  for (int i = 0; i < *n; i++) {
    tr_diag d = {0};
    in[i] = tr_tensor_new(lv[i]->dtype, lv[i]->rank, lv[i]->dims, &d);
    TR_ASSERT(in[i]);
  }
  return in;
}

static void free_inputs(tr_tensor **in, int n) {
  for (int i = 0; i < n; i++) tr_tensor_free(in[i]);
  free(in);
}

TR_TEST(target_xla_run) {
  tr_target *t = open_xla();
  if (!t) return;
  CHECK_STR(t->name, "xla-cpu");
  CHECK_CONTAINS(t->version, "jax 0.10.2");
  CHECK_EQ_INT(t->caps, TR_CAP_OPTIMIZED_HLO | TR_CAP_DISABLE_PASSES | TR_CAP_LIST_PASSES |
                            TR_CAP_TIMINGS | TR_CAP_RECEIVED_HLO | TR_CAP_MLIR | TR_CAP_PASS_DUMPS);
  tr_run_opts o = {0};
  o.want_optimized_hlo = o.want_passes = o.want_received_hlo = true;
  tr_run_result r;
  CHECK_EQ_INT(run_text(t, ADD_NEG, &o, &r), TR_OK);
  check_add_neg(&r);
  CHECK_CONTAINS(r.optimized_hlo, "is_scheduled=true");
  CHECK_CONTAINS(r.received_hlo, "ENTRY");
  CHECK(r.npasses_changed > 0);
  CHECK(r.compile_ms > 0 && r.run_ms >= 0);
  tr_run_result_free(&r);

  /* bf16 leaves trench as raw '<V2' bytes and comes back the same way. */
  static const char BF[] =
      "HloModule bf\nENTRY e {\n  p0 = bf16[3] parameter(0)\n"
      "  ROOT a = bf16[3] add(p0, p0)\n}\n";
  tr_module *m = parse_ok(BF);
  static const double v[3] = {1.5, -0.0078125, 3};
  tr_tensor *in = tensor(TR_DT_BF16, 3, 0, v);
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_run(t, m, &in, 1, NULL, &r, &d), TR_OK);
  CHECK_EQ_INT(r.verdict, TR_VERDICT_OK);
  if (r.noutputs == 1) {
    CHECK_EQ_INT(r.outputs[0]->dtype, TR_DT_BF16);
    CHECK(tr_tensor_get_f(r.outputs[0], 0) == 3);
    CHECK(tr_tensor_get_f(r.outputs[0], 1) == -0.015625);
    CHECK(tr_tensor_get_f(r.outputs[0], 2) == 6);
  }
  tr_run_result_free(&r);
  tr_tensor_free(in);
  tr_module_free(m);
  tr_target_close(t);
}

TR_TEST(target_xla_passes) {
  tr_target *t = open_xla();
  if (!t) return;
  static const char DN[] =
      "HloModule dn\nENTRY e {\n  p0 = f32[8] parameter(0)\n"
      "  n = f32[8] negate(p0)\n  ROOT nn = f32[8] negate(n)\n}\n";
  tr_module *m = parse_ok(DN);
  int n;
  tr_tensor **in = zero_inputs(m, &n);
  static const char *const off[] = {"algsimp"};
  tr_run_opts o = {0};
  o.want_optimized_hlo = true;
  tr_run_result r;
  tr_diag d = {0};
  CHECK_EQ_INT(tr_target_run(t, m, in, n, &o, &r, &d), TR_OK);
  CHECK(r.optimized_hlo && !strstr(r.optimized_hlo, "negate("));
  tr_run_result_free(&r);
  o.disable_passes = off;
  o.ndisable_passes = 1;
  CHECK_EQ_INT(tr_target_run(t, m, in, n, &o, &r, &d), TR_OK);
  CHECK_CONTAINS(r.optimized_hlo, "negate(");
  tr_run_result_free(&r);
  char **names = NULL;
  int nnames = 0;
  CHECK_EQ_INT(tr_target_list_passes(t, m, &names, &nnames, &d), TR_OK);
  bool algsimp = false;
  for (int i = 0; i < nnames; i++) {
    algsimp |= strcmp(names[i], "algsimp") == 0;
    free(names[i]);
  }
  free(names);
  CHECK(algsimp && nnames > 20);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  free_inputs(in, n);
  tr_module_free(m);
  tr_target_close(t);
}

/* With the pinned jaxlib, XLA CPU dies of SIGSEGV compiling the collectives
 * of tests/hlo/collectives.hlo: a real crash, which must be a verdict, and
 * the next module runs on a restarted adapter. */
TR_TEST(target_xla_crash_restart) {
  tr_target *t = open_xla();
  if (!t) return;
  tr_buf path = {0};
  tr_buf_printf(&path, "%s/hlo/collectives.hlo", tr_test_dir);
  tr_diag d = {0};
  tr_module *m = tr_parse_file(path.p, NULL, &d);
  tr_buf_free(&path);
  CHECK(m != NULL);
  if (m) {
    int n;
    tr_tensor **in = zero_inputs(m, &n);
    tr_run_result r;
    CHECK_EQ_INT(tr_target_run(t, m, in, n, NULL, &r, &d), TR_OK);
    CHECK_EQ_INT(r.verdict, TR_VERDICT_CRASH);
    CHECK_CONTAINS(r.message, "killed by signal 11");
    tr_run_result_free(&r);
    free_inputs(in, n);
    tr_module_free(m);
    CHECK_EQ_INT(run_text(t, ADD_NEG, NULL, &r), TR_OK);
    check_add_neg(&r);
    tr_run_result_free(&r);
  }
  tr_diag_clear(&d);
  tr_target_close(t);
}

/* StableHLO text is told from HLO text by its first line (mlir.c). */
TR_TEST(target_text_is_mlir) {
  static const char *yes[] = {
      "module @jit_f attributes {mhlo.num_partitions = 1 : i32} {\n}",
      "// a comment\n#loc = loc(unknown)\n  module {\n}",
      "func.func @main(%a: tensor<f32>) -> tensor<f32> {\n}",
  };
  static const char *no[] = {
      "HloModule m\nENTRY e {\n  ROOT p = f32[] parameter(0)\n}\n",
      "modules_are_not_modules", "", "// only a comment\n",
  };
  for (int i = 0; i < TR_NELEMS(yes); i++) CHECK(tr_text_is_mlir(yes[i], strlen(yes[i])));
  for (int i = 0; i < TR_NELEMS(no); i++) CHECK(!tr_text_is_mlir(no[i], strlen(no[i])));
}
