/* test_builtin.c - the builtin target end to end: every module of the
 * project's corpora (tests/hlo, tests/eval, tests/comp, examples) either
 * runs and agrees with the reference interpreter (bit for bit, NaN
 * payloads aside; within 4 ulp where a transcendental is involved) or is
 * cleanly UNSUPPORTED; options (fuel, disabled passes, optimized module,
 * pass list); a kernel that crashes is CRASH, one that loops forever is
 * HANG, and the next run works. The helpers here are shared with
 * test_emit.c. */
#include "../../src/target/builtin.h"
#include "../../src/eval/eval.h"
#include "test.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdlib.h>

/* Shared with test_emit.c. */
void tb_fill(tr_tensor *t, int seed);
int tb_compare(tr_target *t, const tr_module *m, int seed, const char *what);
tr_module *tb_parse(const char *text, const char *what);
tr_target *tb_open(const char *spec);
/* From test_emit.c. */
void te_random_module(uint64_t seed, tr_buf *t);

tr_target *tb_open(const char *spec) {
  tr_diag d = {0};
  tr_target *t = NULL;
  if (tr_target_open(spec, NULL, &t, &d) != TR_OK) {
    fprintf(stderr, "  cannot open %s:\n", spec);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  return t;
}

tr_module *tb_parse(const char *text, const char *what) {
  tr_diag d = {0};
  tr_module *m = tr_parse(what, text, strlen(text), NULL, &d);
  if (!m || tr_verify(m, &d) != TR_OK) {
    fprintf(stderr, "  %s: module does not parse and verify:\n", what);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    if (m) tr_module_free(m);
    m = NULL;
  }
  tr_diag_clear(&d);
  return m;
}

/* Deterministic values: signs, zeros, boundaries, inf, NaN, denormals,
 * INT_MIN; seed shifts the pattern. */
void tb_fill(tr_tensor *t, int seed) {
  static const double fv[] = {0.5, -1.25, 3.0, -0.0, 0.0, 2.5, -7.75, 1e-3, 100.0, NAN,
                              INFINITY, -INFINITY, 1.0, -1.0, 65504.0, 1e-40, 0.1, -3.5,
                              1e30, 2.0, 448.0, -0.75};
  static const int64_t iv[] = {0, 1, -1, 2, -3, 5, 127, -128, 7, 100, -50, 3, 4000000000LL,
                               -2147483648LL, 6, 255, 31, 64, -9, 65535};
  size_t n = tr_tensor_count(t);
  for (size_t i = 0; i < n; i++) {
    size_t k = i * 7 + (size_t)seed * 3;
    if (tr_dtype_is_float(t->dtype)) tr_tensor_set_f(t, i, fv[k % TR_NELEMS(fv)]);
    else if (t->dtype == TR_DT_PRED) tr_tensor_set_i(t, i, (int64_t)(k % 3 == 0));
    else tr_tensor_set_i(t, i, iv[k % TR_NELEMS(iv)]);
  }
}

static bool add_inputs(const tr_shape *s, tr_tensor **args, int *n, int max, int seed) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (!add_inputs(s->elems[i], args, n, max, seed)) return false;
    return true;
  }
  if (s->dtype == TR_DT_TOKEN) return true;
  if (*n >= max || !tr_shape_is_array(s) || tr_dtypes[s->dtype].kind == TR_DK_COMPLEX) return false;
  tr_diag d = {0};
  tr_tensor *t = tr_tensor_new(s->dtype, s->rank, s->dims, &d);
  tr_diag_clear(&d);
  if (!t) return false;
  tb_fill(t, seed + *n);
  args[(*n)++] = t;
  return true;
}

/* Whether the module computes a transcendental (judged within 4 ulp). */
static bool has_transcendental(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++) switch (m->comps[c]->instrs[i]->op) {
      case TR_OP_EXPONENTIAL: case TR_OP_EXPONENTIAL_MINUS_ONE: case TR_OP_LOG:
      case TR_OP_LOG_PLUS_ONE: case TR_OP_RSQRT: case TR_OP_CBRT: case TR_OP_TANH:
      case TR_OP_LOGISTIC: case TR_OP_SINE: case TR_OP_COSINE: case TR_OP_TAN: case TR_OP_ERF:
      case TR_OP_ATAN2: case TR_OP_POWER:
        return true;
      default: break;
      }
  return false;
}

/* Position of a float pattern on a line where neighbours differ by 1. */
static int64_t ordered(uint64_t bits, int w) {
  uint64_t sign = (uint64_t)1 << (w - 1);
  int64_t mag = (int64_t)(bits & (sign - 1));
  return (bits & sign) ? -mag : mag;
}

static bool same_values(const tr_tensor *a, const tr_tensor *b, bool loose, size_t *where) {
  if (a->dtype != b->dtype || a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (a->dims[i] != b->dims[i]) return false;
  size_t n = tr_tensor_count(a);
  int w = tr_dtypes[a->dtype].bits;
  for (size_t i = 0; i < n; i++) {
    uint64_t x = tr_tensor_get_bits(a, i), y = tr_tensor_get_bits(b, i);
    if (x == y) continue;
    if (tr_dtype_is_float(a->dtype)) {
      double fx = tr_tensor_get_f(a, i), fy = tr_tensor_get_f(b, i);
      if (isnan(fx) && isnan(fy)) continue; /* payloads are not judged */
      if (loose && !isnan(fx) && !isnan(fy) && llabs((long long)(ordered(x, w) - ordered(y, w))) <= 4)
        continue;
    }
    *where = i;
    return false;
  }
  return true;
}

/* Runs m through the reference and t on the same inputs. Returns 1 when
 * both ran and agree, 0 when the reference declined, 2 when the target
 * declined (unsupported), -1 (and a failure) on disagreement or any other
 * verdict. */
int tb_compare(tr_target *t, const tr_module *m, int seed, const char *what) {
  tr_tensor *args[512];
  int nargs = 0, ret = 0;
  for (int p = 0; p < m->entry->nparams; p++)
    if (!add_inputs(m->entry->params[p]->shape, args, &nargs, 512, seed)) {
      for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
      return 0;
    }
  tr_tensor **ref = NULL;
  int nref = 0;
  tr_diag d = {0};
  tr_eval_opts eo = {1000000, false, 0, 0};
  tr_status es = tr_eval_opt(m, &eo, args, nargs, &ref, &nref, &d);
  tr_diag_clear(&d);
  if (es == TR_OK) {
    tr_run_result r;
    tr_run_opts o = {0};
    o.timeout_s = 20;
    tr_status s = tr_target_run(t, m, args, nargs, &o, &r, &d);
    if (s != TR_OK) {
      fprintf(stderr, "  %s: run failed:\n", what);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
      ret = -1;
    } else if (r.verdict == TR_VERDICT_UNSUPPORTED) {
      CHECK_CONTAINS(r.message, "unsupported");
      if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "  %s: %s\n", what, r.message);
      ret = 2;
    } else if (r.verdict != TR_VERDICT_OK) {
      fprintf(stderr, "  %s: verdict %s: %s\n", what, tr_verdict_name(r.verdict),
              r.message ? r.message : "");
      tr_test_failed++;
      ret = -1;
    } else if (r.noutputs != nref) {
      fprintf(stderr, "  %s: %d outputs, the reference has %d\n", what, r.noutputs, nref);
      tr_test_failed++;
      ret = -1;
    } else {
      bool loose = has_transcendental(m);
      ret = 1;
      for (int i = 0; i < nref; i++) {
        size_t at = 0;
        if (!same_values(ref[i], r.outputs[i], loose, &at)) {
          tr_buf tb = {0};
          tr_tensor_print_type(&tb, ref[i]);
          fprintf(stderr, "  %s: output %d (%s) differs at %zu: reference %.17g (0x%llx), builtin %.17g (0x%llx)\n",
                  what, i, tr_buf_str(&tb), at,
                  at < tr_tensor_count(ref[i]) ? tr_tensor_get_f(ref[i], at) : 0.0,
                  at < tr_tensor_count(ref[i]) ? (unsigned long long)tr_tensor_get_bits(ref[i], at) : 0ull,
                  at < tr_tensor_count(r.outputs[i]) ? tr_tensor_get_f(r.outputs[i], at) : 0.0,
                  at < tr_tensor_count(r.outputs[i]) ? (unsigned long long)tr_tensor_get_bits(r.outputs[i], at) : 0ull);
          tr_buf_free(&tb);
          tr_test_failed++;
          ret = -1;
          break;
        }
      }
    }
    tr_run_result_free(&r);
  }
  tr_diag_clear(&d);
  tr_eval_free_outputs(ref, nref);
  for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
  return ret;
}

/* ---- the corpora ---- */

/* Whether some value of m has an element type outside the core set, which
 * builtin declines by design (docs/EMITTER.md). */
static bool shape_noncore(const tr_shape *s) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (shape_noncore(s->elems[i])) return true;
    return false;
  }
  return tr_dtype_is_array(s->dtype) && !tr_dtypes[s->dtype].core;
}

static bool module_noncore(const tr_module *m) {
  for (int c = 0; c < m->ncomps; c++)
    for (int i = 0; i < m->comps[c]->ninstrs; i++)
      if (shape_noncore(m->comps[c]->instrs[i]->shape)) return true;
  return false;
}

static void corpus_dir(tr_target *t, const char *sub, int *nrun, int *nagree, int *nunsup) {
  /* A missing or empty folder fails the test (testutil.c). */
  tr_test_files fl = tr_test_list_hlo(sub);
  for (int fi = 0; fi < fl.n; fi++) {
    const char *path = fl.paths[fi];
  tr_diag d = {0};
  tr_parse_opts po = {.fill_elided = true};
  tr_module *m = tr_parse_file(path, &po, &d);
  if (m && tr_verify(m, &d) == TR_OK && !module_noncore(m)) {
    (*nrun)++;
    int rc = tb_compare(t, m, 1, path);
    if (rc == 1) (*nagree)++;
    else if (rc == 2) (*nunsup)++;
    else if (rc == 0) (*nrun)--; /* the reference declines it too */
  }
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  }
  tr_test_files_free(&fl);
}

TR_TEST(builtin_corpus_agrees_or_unsupported) {
  tr_target *t = tb_open("builtin");
  if (!t) return;
  int nrun = 0, nagree = 0, nunsup = 0;
  corpus_dir(t, "hlo", &nrun, &nagree, &nunsup);
  corpus_dir(t, "eval", &nrun, &nagree, &nunsup);
  corpus_dir(t, "../examples", &nrun, &nagree, &nunsup);
  if (getenv("TR_TEST_VERBOSE"))
    fprintf(stderr, "  builtin corpus: %d modules the reference evaluates, %d agree, %d unsupported\n",
            nrun, nagree, nunsup);
  CHECK(nrun >= 40);
  /* Every module the reference evaluates agrees bit for bit, except six
   * builtin declines (unsupported): the sparse dot of xla_quirks.hlo, the
   * wrapped computation of async_calls.hlo, the custom calls of
   * custom_call_identity.hlo (ops.def: no 'e' for async-start or
   * custom-call), eval/scan.hlo (scan, an HLO-only op),
   * eval/outfeed.hlo (no 'e' for scan or outfeed) and
   * eval/set_dimension_size.hlo (no 'e' for set-dimension-size). */
  CHECK_EQ_INT(nunsup, 6);
  CHECK_EQ_INT(nagree, nrun - 6);
  tr_target_close(t);
}

/* ---- the target's options and verdicts ---- */

static const char small[] =
  "HloModule s\n"
  "ENTRY e {\n"
  "  x = f32[9] parameter(0)\n"
  "  z = f32[] constant(0)\n"
  "  zb = f32[9] broadcast(z), dimensions={}\n"
  "  a = f32[9] add(x, zb)\n"
  "  n = f32[9] negate(a)\n"
  "  nn = f32[9] negate(n)\n"
  "  ROOT m = f32[9] multiply(nn, x)\n"
  "}\n";

static tr_status run_on(tr_target *t, const tr_module *m, const tr_run_opts *o, tr_run_result *r) {
  tr_diag d = {0};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){9}, &d);
  tb_fill(x, 2);
  tr_status s = tr_target_run(t, m, &x, 1, o, r, &d);
  if (s != TR_OK) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_tensor_free(x);
  return s;
}

TR_TEST(builtin_options_passes_and_optimized_module) {
  tr_target *t = tb_open("builtin");
  tr_module *m = tb_parse(small, "small");
  if (!t || !m) goto out;
  CHECK(t->caps & TR_CAP_OPTIMIZED_HLO);
  CHECK(t->caps & TR_CAP_DISABLE_PASSES);
  CHECK_EQ_INT(tb_compare(t, m, 3, "small"), 1);
  /* The optimized module and the passes that changed it. */
  tr_run_result r;
  tr_run_opts o = {0};
  o.want_optimized_hlo = o.want_passes = o.want_received_hlo = true;
  CHECK(run_on(t, m, &o, &r) == TR_OK);
  CHECK(r.verdict == TR_VERDICT_OK);
  CHECK(r.optimized_hlo && r.received_hlo);
  CHECK(r.npasses_changed >= 1);
  CHECK(r.optimized_hlo && strstr(r.optimized_hlo, "negate") == NULL); /* --x folded */
  CHECK(r.compile_ms >= 0 && r.run_ms >= 0);
  tr_run_result_free(&r);
  /* Disabling the simplifier per run keeps the negates. */
  const char *dis[] = {"simplify"};
  o.disable_passes = dis;
  o.ndisable_passes = 1;
  CHECK(run_on(t, m, &o, &r) == TR_OK);
  CHECK(r.verdict == TR_VERDICT_OK);
  CHECK_CONTAINS(r.optimized_hlo, "negate");
  tr_run_result_free(&r);
  /* An unknown pass name is a usage error, not a silent no-op. */
  const char *bad[] = {"no-such-pass"};
  o.disable_passes = bad;
  tr_diag d = {0};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){9}, &d);
  CHECK(tr_target_run(t, m, &x, 1, &o, &r, &d) == TR_ERR_USAGE);
  tr_tensor_free(x);
  tr_diag_clear(&d);
  tr_run_result_free(&r);
  /* Pass list. */
  char **names = NULL;
  int nnames = 0;
  CHECK(tr_target_list_passes(t, m, &names, &nnames, &d) == TR_OK);
  CHECK(nnames >= 3);
  for (int i = 0; i < nnames; i++) free(names[i]);
  free(names);
out:
  if (m) tr_module_free(m);
  tr_target_close(t);
}

/* A check runs its module once per input seed: a run marked same_module
 * takes the previous run's code when that run compiled this module
 * (compile_ms 0), and only then; another module, or a run asking for the
 * optimized module, compiles. */
static bool squares_or_doubles(const tr_run_result *r, bool square) {
  tr_diag d = {0};
  tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){9}, &d);
  tb_fill(x, 2);
  bool ok = r->verdict == TR_VERDICT_OK && r->noutputs == 1;
  for (int i = 0; ok && i < 9; i++) {
    float a = ((float *)x->data)[i], got = ((float *)r->outputs[0]->data)[i];
    float want = square ? a * a : a + a;
    ok = (isnan(want) && isnan(got)) || want == got;
  }
  tr_tensor_free(x);
  tr_diag_clear(&d);
  return ok;
}

TR_TEST(builtin_same_module_reuses_the_compile) {
  tr_target *t = tb_open("builtin");
  tr_module *a = tb_parse(small, "small");
  tr_module *b = tb_parse("HloModule d\nENTRY e {\n  x = f32[9] parameter(0)\n  ROOT s = f32[9] add(x, x)\n}\n", "double");
  if (!t || !a || !b) goto out;
  tr_run_result r;
  tr_run_opts o = {0};
  CHECK(run_on(t, a, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, true) && r.compile_ms > 0);
  tr_run_result_free(&r);
  o.same_module = true;
  CHECK(run_on(t, a, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, true) && r.compile_ms == 0);
  tr_run_result_free(&r);
  /* the memo is a's: b compiles, then b's is reused */
  CHECK(run_on(t, b, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, false) && r.compile_ms > 0);
  tr_run_result_free(&r);
  CHECK(run_on(t, b, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, false) && r.compile_ms == 0);
  tr_run_result_free(&r);
  /* a run that asks for the optimized module compiles, and keeps none */
  o.want_optimized_hlo = true;
  CHECK(run_on(t, b, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, false) && r.compile_ms > 0 && r.optimized_hlo);
  tr_run_result_free(&r);
  o.want_optimized_hlo = false;
  CHECK(run_on(t, b, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, false) && r.compile_ms > 0);
  tr_run_result_free(&r);
  /* without the mark nothing is reused */
  o.same_module = false;
  CHECK(run_on(t, b, &o, &r) == TR_OK);
  CHECK(squares_or_doubles(&r, false) && r.compile_ms > 0);
  tr_run_result_free(&r);
out:
  if (a) tr_module_free(a);
  if (b) tr_module_free(b);
  tr_target_close(t);
}

TR_TEST(builtin_spec_fuel_and_disable) {
  tr_module *m = tb_parse(small, "small");
  if (!m) return;
  /* Fuel 0: nothing rewritten, and still the same values. */
  tr_target *t = tb_open("builtin:fuel=0,lanes=3,tile=2");
  if (t) {
    tr_run_result r;
    tr_run_opts o = {0};
    o.want_optimized_hlo = true;
    CHECK(run_on(t, m, &o, &r) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_OK);
    CHECK_CONTAINS(r.optimized_hlo, "negate");
    tr_run_result_free(&r);
    CHECK_EQ_INT(tb_compare(t, m, 5, "small fuel=0"), 1);
  }
  tr_target_close(t);
  t = tb_open("builtin:disable=simplify,nofuse");
  if (t) CHECK_EQ_INT(tb_compare(t, m, 5, "small disable=simplify"), 1);
  tr_target_close(t);
  tr_diag d = {0};
  tr_target *bad = NULL;
  CHECK(tr_target_open("builtin:disable=nope", NULL, &bad, &d) == TR_ERR_USAGE);
  CHECK(tr_target_open("builtin:lanes=0", NULL, &bad, &d) == TR_ERR_USAGE);
  CHECK(bad == NULL);
  tr_diag_clear(&d);
  tr_module_free(m);
}

TR_TEST(builtin_crash_and_hang_are_verdicts) {
  tr_module *m = tb_parse(small, "small");
  tr_module *loop = tb_parse("HloModule l\n"
                             "c {\n p = s32[] parameter(0)\n ROOT t = pred[] constant(true)\n}\n"
                             "b {\n p = s32[] parameter(0)\n one = s32[] constant(1)\n"
                             " ROOT q = s32[] add(p, one)\n}\n"
                             "ENTRY e {\n x = s32[] parameter(0)\n"
                             " ROOT w = s32[] while(x), condition=c, body=b\n}\n", "loop");
  tr_target *crash = tb_open("builtin:crash-test");
  tr_target *t = tb_open("builtin");
  if (m && loop && crash && t) {
    tr_run_result r;
    tr_run_opts o = {0};
    CHECK(run_on(crash, m, &o, &r) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_CRASH);
    CHECK_CONTAINS(r.message, "signal");
    CHECK_EQ_INT(r.noutputs, 0);
    tr_run_result_free(&r);
    /* The next run (same process, other target) works. */
    CHECK(run_on(t, m, &o, &r) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_OK);
    tr_run_result_free(&r);
    /* A loop that never ends is killed at the timeout. */
    tr_diag d = {0};
    tr_tensor *x = tr_tensor_new(TR_DT_S32, 0, NULL, &d);
    o.timeout_s = 0.3;
    CHECK(tr_target_run(t, loop, &x, 1, &o, &r, &d) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_HANG);
    tr_run_result_free(&r);
    tr_tensor_free(x);
    tr_diag_clear(&d);
    o.timeout_s = 0;
    CHECK(run_on(t, m, &o, &r) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_OK);
    tr_run_result_free(&r);
  }
  tr_target_close(crash);
  tr_target_close(t);
  if (m) tr_module_free(m);
  if (loop) tr_module_free(loop);
}

TR_TEST(builtin_unsupported_and_bad_inputs) {
  tr_target *t = tb_open("builtin");
  tr_module *m = tb_parse("HloModule u\nENTRY e {\n x = f32[4] parameter(0)\n"
                          " ROOT c = f32[4] custom-call(x), custom_call_target=\"foo\"\n}\n", "custom-call");
  if (t && m) {
    tr_diag d = {0};
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){4}, &d);
    tr_run_result r;
    tr_run_opts o = {0};
    CHECK(tr_target_run(t, m, &x, 1, &o, &r, &d) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_UNSUPPORTED);
    CHECK_CONTAINS(r.message, "unsupported: custom-call in builtin");
    tr_run_result_free(&r);
    /* Inputs of the wrong shape: the caller's mistake. */
    tr_tensor *y = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){5}, &d);
    CHECK(tr_target_run(t, m, &y, 1, &o, &r, &d) == TR_ERR_USAGE);
    CHECK_CONTAINS(tr_diag_first(&d), "input 0");
    tr_run_result_free(&r);
    tr_tensor_free(x);
    tr_tensor_free(y);
    tr_diag_clear(&d);
  }
  if (m) tr_module_free(m);
  tr_target_close(t);
}

/* The random modules of test_emit.c through the whole compiler (passes,
 * fusion, emitter): every one must agree with the reference.
 * TRENCH_TEST_RANDOM=N runs N (default 8). */
TR_TEST(builtin_random_modules_agree) {
  tr_target *t = tb_open("builtin");
  if (!t) return;
  const char *env = getenv("TRENCH_TEST_RANDOM");
  int nmod = env && atoi(env) > 0 ? atoi(env) : 8, nagree = 0;
  for (uint64_t seed = 1000; seed < 1000 + (uint64_t)nmod; seed++) {
    tr_buf text = {0};
    te_random_module(seed, &text);
    tr_module *m = tb_parse(tr_buf_str(&text), "random");
    char what[64];
    snprintf(what, sizeof what, "random module %llu", (unsigned long long)seed);
    if (m && tb_compare(t, m, (int)seed, what) == 1) nagree++;
    else if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "%s\n", tr_buf_str(&text));
    if (m) tr_module_free(m);
    tr_buf_free(&text);
  }
  CHECK_EQ_INT(nagree, nmod);
  tr_target_close(t);
}

/* A step function returning all its weights: 300 inputs and 301 result
 * leaves (more than the emitter once took), passed through and added. */
TR_TEST(builtin_many_inputs_and_results) {
  tr_target *t = tb_open("builtin");
  tr_buf b = {0};
  tr_buf_puts(&b, "HloModule many\nENTRY e {\n");
  for (int i = 0; i < 300; i++) tr_buf_printf(&b, "  p%d = f32[2] parameter(%d)\n", i, i);
  tr_buf_puts(&b, "  s = f32[2] add(p0, p299)\n  ROOT t = (");
  for (int i = 0; i < 301; i++) tr_buf_printf(&b, "%sf32[2]", i ? ", " : "");
  tr_buf_puts(&b, ") tuple(");
  for (int i = 0; i < 300; i++) tr_buf_printf(&b, "p%d, ", i);
  tr_buf_puts(&b, "s)\n}\n");
  tr_module *m = tb_parse(b.p, "many");
  if (t && m) CHECK_EQ_INT(tb_compare(t, m, 1, "many"), 1);
  if (m) tr_module_free(m);
  tr_buf_free(&b);
  tr_target_close(t);
}
