/* test_jit_tcc.c - the JIT's libtcc backend (builtin:jit=tcc): every
 * module of the project's corpora (tests/hlo, tests/eval, tests/comp,
 * examples) and a batch of random modules gives the same bits through
 * libtcc as through cc -O2 (NaN payloads aside); a crashing or hanging
 * tcc-compiled kernel is still a verdict; a compile error is located by
 * line. Skipped (with a note) in a build without libtcc. */
#include "../../src/target/builtin.h"
#include "../../src/comp/emit.h"
#include "test.h"
#include "testutil.h"

#include <dirent.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <unistd.h>

/* Shared with test_builtin.c and test_emit.c. */
tr_target *tb_open(const char *spec);
tr_module *tb_parse(const char *text, const char *what);
void te_random_module(uint64_t seed, tr_buf *t);

/* libtcc, compiling every unit afresh (no cache hit hides a compile). */
static tr_jit_opts tcc_uncached(void) {
  tr_jit_opts o;
  tr_jit_opts_init(&o);
  o.backend = TR_JIT_TCC;
  o.no_cache = true;
  return o;
}

static bool skip_without_tcc(void) {
  if (tr_jit_have_tcc()) return false;
  fprintf(stderr, "  (built without libtcc: skipped)\n");
  return true;
}

typedef struct {
  int ncompared; /* both ran and every output matched */
  int nunsupported;
} tally;

static void report_difference(const char *what, int out, const tr_tensor *a, const tr_tensor *b) {
  size_t n = tr_tensor_count(a), i = 0;
  if (n == tr_tensor_count(b))
    while (i < n && tr_tensor_get_bits(a, i) == tr_tensor_get_bits(b, i)) i++;
  fprintf(stderr, "  %s: output %d differs between cc and tcc at %zu: %.17g (0x%llx) vs %.17g (0x%llx)\n",
          what, out, i, i < n ? tr_tensor_get_f(a, i) : 0.0,
          i < n ? (unsigned long long)tr_tensor_get_bits(a, i) : 0ull,
          i < tr_tensor_count(b) ? tr_tensor_get_f(b, i) : 0.0,
          i < tr_tensor_count(b) ? (unsigned long long)tr_tensor_get_bits(b, i) : 0ull);
}

/* Runs m on cc and tcc with the same inputs. Both must give the same
 * verdict; OK ones must give the same bits. */
static void compare_backends(tr_target *cc, tr_target *tcc, const tr_module *m, int seed,
                             const char *what, tally *t) {
  tr_tensor *args[64];
  int nargs = 0;
  bool ok = true;
  for (int p = 0; p < m->entry->nparams && ok; p++)
    ok = tr_test_add_inputs(m->entry->params[p]->shape, args, &nargs, 64, seed);
  if (ok) {
    tr_run_result a, b;
    tr_run_opts o = {0};
    o.timeout_s = 20;
    tr_diag d = {0};
    tr_status sa = tr_target_run(cc, m, args, nargs, &o, &a, &d);
    tr_status sb = tr_target_run(tcc, m, args, nargs, &o, &b, &d);
    CHECK(sa == TR_OK && sb == TR_OK);
    if (sa == TR_OK && sb == TR_OK) {
      if (a.verdict != b.verdict) {
        fprintf(stderr, "  %s: cc says %s (%s), tcc says %s (%s)\n", what,
                tr_verdict_name(a.verdict), a.message ? a.message : "",
                tr_verdict_name(b.verdict), b.message ? b.message : "");
        tr_test_failed++;
      } else if (a.verdict == TR_VERDICT_UNSUPPORTED) {
        t->nunsupported++;
      } else if (a.verdict == TR_VERDICT_OK) {
        bool same = a.noutputs == b.noutputs;
        for (int i = 0; same && i < a.noutputs; i++) {
          same = tr_test_same_bits(a.outputs[i], b.outputs[i]);
          if (!same) report_difference(what, i, a.outputs[i], b.outputs[i]);
        }
        if (same) t->ncompared++;
        else tr_test_failed++;
      }
      tr_run_result_free(&a);
      tr_run_result_free(&b);
    } else {
      tr_diag_print(&d, stderr);
    }
    tr_diag_clear(&d);
  }
  for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
}

static void corpus(tr_target *cc, tr_target *tcc, const char *sub, tally *t) {
  /* A missing or empty folder fails the test (testutil.c). */
  tr_test_files fl = tr_test_list_hlo(sub);
  for (int fi = 0; fi < fl.n; fi++) {
    const char *path = fl.paths[fi];
  tr_diag d = {0};
  tr_parse_opts po = {.fill_elided = true};
  tr_module *m = tr_parse_file(path, &po, &d);
  if (m && tr_verify(m, &d) == TR_OK) compare_backends(cc, tcc, m, 1, path, t);
  tr_diag_clear(&d);
  if (m) tr_module_free(m);
  }
  tr_test_files_free(&fl);
}

TR_TEST(jit_tcc_corpus_same_bits_as_cc) {
  if (skip_without_tcc()) return;
  tr_target *cc = tb_open("builtin");
  tr_target *tcc = tb_open("builtin:jit=tcc");
  if (cc && tcc) {
    CHECK_CONTAINS(tcc->version, "libtcc");
    tally t = {0, 0};
    corpus(cc, tcc, "hlo", &t);
    corpus(cc, tcc, "eval", &t);
        corpus(cc, tcc, "../examples", &t);
    if (getenv("TR_TEST_VERBOSE"))
      fprintf(stderr, "  tcc corpus: %d same, %d unsupported\n", t.ncompared, t.nunsupported);
    /* 39 modules of the corpus ran on both when this was written, 6 were
     * unsupported by the emitter. */
    CHECK(t.ncompared >= 35);
  }
  tr_target_close(cc);
  tr_target_close(tcc);
}

/* The random modules of test_emit.c (every op kind and dtype it draws).
 * TRENCH_TEST_RANDOM=N runs N (default 8). */
TR_TEST(jit_tcc_random_modules_same_bits_as_cc) {
  if (skip_without_tcc()) return;
  tr_target *cc = tb_open("builtin");
  tr_target *tcc = tb_open("builtin:jit=tcc");
  const char *env = getenv("TRENCH_TEST_RANDOM");
  int nmod = env && atoi(env) > 0 ? atoi(env) : 8;
  tally t = {0, 0};
  for (uint64_t seed = 1000; cc && tcc && seed < 1000 + (uint64_t)nmod; seed++) {
    tr_buf text = {0};
    te_random_module(seed, &text);
    tr_module *m = tb_parse(tr_buf_str(&text), "random");
    char what[64];
    snprintf(what, sizeof what, "random module %llu", (unsigned long long)seed);
    if (m) compare_backends(cc, tcc, m, (int)seed, what, &t);
    if (m) tr_module_free(m);
    tr_buf_free(&text);
  }
  CHECK_EQ_INT(t.ncompared, nmod);
  tr_target_close(cc);
  tr_target_close(tcc);
}

static const char small[] =
  "HloModule s\n"
  "ENTRY e {\n"
  "  x = f32[9] parameter(0)\n"
  "  ROOT m = f32[9] multiply(x, x)\n"
  "}\n";

/* The forked worker catches tcc-compiled code crashing and hanging, and
 * the process goes on. */
TR_TEST(jit_tcc_crash_and_hang_are_verdicts) {
  if (skip_without_tcc()) return;
  tr_module *m = tb_parse(small, "small");
  tr_module *loop = tb_parse("HloModule l\n"
                             "c {\n p = s32[] parameter(0)\n ROOT t = pred[] constant(true)\n}\n"
                             "b {\n p = s32[] parameter(0)\n one = s32[] constant(1)\n"
                             " ROOT q = s32[] add(p, one)\n}\n"
                             "ENTRY e {\n x = s32[] parameter(0)\n"
                             " ROOT w = s32[] while(x), condition=c, body=b\n}\n", "loop");
  tr_target *crash = tb_open("builtin:jit=tcc,crash-test");
  tr_target *t = tb_open("builtin:jit=tcc");
  if (m && loop && crash && t) {
    tr_diag d = {0};
    tr_tensor *x = tr_tensor_new(TR_DT_F32, 1, (int64_t[]){9}, &d);
    tr_test_fill(x, 1);
    tr_run_result r;
    tr_run_opts o = {0};
    CHECK(tr_target_run(crash, m, &x, 1, &o, &r, &d) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_CRASH);
    CHECK_CONTAINS(r.message, "signal");
    tr_run_result_free(&r);
    CHECK(tr_target_run(t, m, &x, 1, &o, &r, &d) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_OK);
    /* run_ms is the kernel alone, inside the request's wall time. */
    CHECK(r.run_ms >= 0 && r.run_ms <= r.wall_ms);
    if (r.verdict == TR_VERDICT_OK) {
      double v = tr_tensor_get_f(x, 2);
      CHECK(tr_tensor_get_f(r.outputs[0], 2) == (double)(float)(v * v));
    }
    tr_run_result_free(&r);
    tr_tensor *s = tr_tensor_new(TR_DT_S32, 0, NULL, &d);
    o.timeout_s = 0.3;
    CHECK(tr_target_run(t, loop, &s, 1, &o, &r, &d) == TR_OK);
    CHECK(r.verdict == TR_VERDICT_HANG);
    tr_run_result_free(&r);
    tr_tensor_free(s);
    tr_tensor_free(x);
    tr_diag_clear(&d);
  }
  tr_target_close(crash);
  tr_target_close(t);
  if (m) tr_module_free(m);
  if (loop) tr_module_free(loop);
}

/* Through the JIT directly: the symbol is found, a syntax error is
 * TR_ERR_INVALID with tcc's located message, the same text from the two
 * backends hashes apart, and the memory cache answers a second compile. */
TR_TEST(jit_tcc_compile_errors_and_cache) {
  if (skip_without_tcc()) return;
  tr_jit_opts o;
  tr_jit_opts_init(&o);
  o.backend = TR_JIT_TCC;
  tr_diag d = {0};
  tr_jit_code *c = NULL;
  tr_jit_stats st;
  const char *ok_src = "int trench_entry(unsigned char **in, unsigned char **out) {\n"
                       "  out[0][0] = (unsigned char)(in[0][0] * 3 + 7); return 0; }\n"
                       "/* test_jit_tcc */\n";
  CHECK(tr_jit_compile(&o, ok_src, &c, &st, &d) == TR_OK);
  CHECK(!st.memory_hit && !st.disk_hit);
  tr_jit_entry fn = tr_jit_symbol(c, "trench_entry");
  CHECK(fn != NULL);
  if (fn) {
    unsigned char a = 5, b = 0, *in[1] = {&a}, *out[1] = {&b};
    CHECK_EQ_INT(fn(in, out), 0);
    CHECK_EQ_INT(b, 22);
  }
  tr_jit_code *c2 = NULL;
  CHECK(tr_jit_compile(&o, ok_src, &c2, &st, &d) == TR_OK);
  CHECK(st.memory_hit);
  CHECK(c2 == c);
  tr_jit_release(c2);
  tr_jit_release(c);
  char h1[33], h2[33];
  tr_jit_hash_text(&o, ok_src, h1);
  tr_jit_opts occ;
  tr_jit_opts_init(&occ);
  tr_jit_hash_text(&occ, ok_src, h2);
  CHECK(strcmp(h1, h2) != 0);
  c = NULL;
  CHECK(tr_jit_compile(&o, "int f(void) {\n  return nowhere;\n}\n", &c, &st, &d) == TR_ERR_INVALID);
  CHECK(c == NULL);
  CHECK_CONTAINS(tr_diag_first(&d), ":2: error: 'nowhere' undeclared");
  tr_diag_clear(&d);
  tr_target *t = NULL;
  CHECK(tr_target_open("builtin:jit=gcc", NULL, &t, &d) == TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "jit=cc|tcc");
  tr_diag_clear(&d);
}

/* libtcc keeps global state: compiles from several threads at once must
 * still each give working code (the JIT serializes them). */
typedef struct {
  int id;
  int good;
} thread_job;

static void *compile_many(void *arg) {
  thread_job *j = arg;
  tr_jit_opts o = tcc_uncached();
  for (int k = 0; k < 8; k++) {
    char src[256];
    snprintf(src, sizeof src,
             "int trench_entry(unsigned char **in, unsigned char **out) {\n"
             "  out[0][0] = (unsigned char)(in[0][0] + %d); return 0; }\n", j->id * 10 + k);
    tr_jit_code *c = NULL;
    tr_diag d = {0};
    if (tr_jit_compile(&o, src, &c, NULL, &d) == TR_OK) {
      tr_jit_entry fn = tr_jit_symbol(c, "trench_entry");
      unsigned char a = 1, b = 0, *in[1] = {&a}, *out[1] = {&b};
      if (fn && fn(in, out) == 0 && b == 1 + j->id * 10 + k) j->good++;
    }
    tr_jit_release(c);
    tr_diag_clear(&d);
  }
  return NULL;
}

TR_TEST(jit_tcc_threads) {
  if (skip_without_tcc()) return;
  pthread_t th[3];
  thread_job jobs[3] = {{1, 0}, {2, 0}, {3, 0}};
  for (int i = 0; i < 3; i++) pthread_create(&th[i], NULL, compile_many, &jobs[i]);
  for (int i = 0; i < 3; i++) pthread_join(th[i], NULL);
  for (int i = 0; i < 3; i++) CHECK_EQ_INT(jobs[i].good, 8);
}

/* The prelude declares the C library itself under tcc (no system
 * headers): its classification macros give the host's answers on float,
 * double and long double operands (the float and long double forms call
 * other functions than the double one), the declared libm functions link,
 * and a call of an undeclared function is a compile error, never an
 * implicit int. */
TR_TEST(jit_tcc_prelude_declarations) {
  if (skip_without_tcc()) return;
  tr_jit_opts o = tcc_uncached();
  tr_buf src = {0};
  tr_emit_prelude(&src, NULL);
  tr_buf_puts(&src,
              "int trench_entry(unsigned char **in, unsigned char **out) {\n"
              "  volatile float f[4] = {0.0f, -0.0f, 1.0f, 0.0f};\n"
              "  double d[4];\n  long double l[4];\n  int i, k = 0;\n"
              "  f[0] = NAN; f[1] = -INFINITY; f[3] = -f[3];\n"
              "  for (i = 0; i < 4; i++) { d[i] = f[i]; l[i] = f[i]; }\n"
              "  for (i = 0; i < 4; i++) {\n"
              "    out[0][k++] = isnan(f[i]) != 0; out[0][k++] = isinf(f[i]) != 0;\n"
              "    out[0][k++] = signbit(f[i]) != 0; out[0][k++] = isfinite(f[i]) != 0;\n"
              "    out[0][k++] = isnan(d[i]) != 0; out[0][k++] = isinf(d[i]) != 0;\n"
              "    out[0][k++] = signbit(d[i]) != 0; out[0][k++] = isfinite(d[i]) != 0;\n"
              "    out[0][k++] = isnan(l[i]) != 0; out[0][k++] = isinf(l[i]) != 0;\n"
              "    out[0][k++] = signbit(l[i]) != 0; out[0][k++] = isfinite(l[i]) != 0;\n"
              "  }\n"
              "  out[0][k++] = sinf(0.5f) == (float)sinf(0.5f) && expl(1.0L) > 2.7L && sqrt(4.0) == 2.0;\n"
              "  (void)in;\n  return 0;\n}\n");
  tr_jit_code *c = NULL;
  tr_diag d = {0};
  CHECK(tr_jit_compile(&o, tr_buf_str(&src), &c, NULL, &d) == TR_OK);
  tr_jit_entry fn = tr_jit_symbol(c, "trench_entry");
  CHECK(fn != NULL);
  if (fn) {
    unsigned char got[64] = {0}, *out[1] = {got};
    CHECK_EQ_INT(fn(NULL, out), 0);
    /* NaN, -inf, 1, -0: isnan isinf signbit isfinite, in each width (not
     * the NaN's sign: 0.0f / 0.0f is x86's default NaN, sign set) */
    const unsigned char want[4][4] = {{1, 0, 0, 0}, {0, 1, 1, 0}, {0, 0, 0, 1}, {0, 0, 1, 1}};
    for (int i = 0; i < 4; i++)
      for (int w = 0; w < 3; w++)
        for (int q = 0; q < 4; q++)
          if (i || q != 2) CHECK_EQ_INT(got[i * 12 + w * 4 + q], want[i][q]);
    CHECK_EQ_INT(got[48], 1);
  }
  tr_jit_release(c);
  tr_diag_clear(&d);
  /* An undeclared function: rejected, not called as an implicit int. */
  tr_buf bad = {0};
  tr_emit_prelude(&bad, NULL);
  tr_buf_puts(&bad, "int trench_entry(unsigned char **in, unsigned char **out) {\n"
                    "  (void)in; out[0][0] = (unsigned char)j0(1.0); return 0; }\n");
  c = NULL;
  CHECK(tr_jit_compile(&o, tr_buf_str(&bad), &c, NULL, &d) == TR_ERR_INVALID);
  CHECK(c == NULL);
  CHECK_CONTAINS(tr_diag_first(&d), "implicit declaration");
  tr_diag_clear(&d);
  tr_buf_free(&bad);
  tr_buf_free(&src);
}

/* The runner (jit.h): kernels compiled after it started run in its
 * children (their parent is the runner, not this process); crash, hang
 * and give-up are the same verdicts as a plain fork and the next run
 * works; outputs start zeroed whatever the last run left; a write past
 * the outputs faults; a dead runner leaves the runs to plain forks. */
static const char runner_c[] =
  "int getppid(void);\n"
  "int trench_entry(unsigned char **in, unsigned char **out) {\n"
  "  int *o = (int *)out[0];\n"
  "  if (in[0][0] == 1) { volatile int *volatile p = 0; *p = 1; }\n"
  "  if (in[0][0] == 2) for (;;) {}\n"
  "  if (in[0][0] == 3) return 7;\n"
  "  if (in[0][0] == 4) { o[0] = 5; return 0; }\n"
  "  if (in[0][0] == 5) { for (int i = 0; i < (1 << 22); i++) out[0][i] = 1; return 0; }\n"
  "  o[0] = getppid(); o[1] = in[0][1] * 2;\n  return 0;\n}\n/* runner */\n";

TR_TEST(jit_tcc_runner) {
  if (skip_without_tcc()) return;
  tr_jit_runner *rn = tr_jit_runner_new();
  CHECK(rn != NULL);
  tr_jit_opts o;
  tr_jit_opts_init(&o);
  o.backend = TR_JIT_TCC;
  tr_diag d = {0};
  tr_jit_code *c = NULL;
  CHECK(tr_jit_compile(&o, runner_c, &c, NULL, &d) == TR_OK);
  tr_jit_entry fn = tr_jit_symbol(c, "trench_entry");
  CHECK(fn != NULL);
  if (rn && fn) {
    unsigned char x[2] = {0, 21}, *in[1] = {x}, *out[1];
    int y[2];
    out[0] = (unsigned char *)y;
    size_t ib = 2, ob = sizeof y;
    tr_jit_run r;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_OK);
    int runner = y[0];
    CHECK(runner > 0 && runner != (int)getpid());
    CHECK_EQ_INT(y[1], 42);
    x[0] = 1;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_CRASH);
    CHECK_EQ_INT(r.signal, 11);
    x[0] = 2;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 0.2, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_HANG);
    x[0] = 3;
    y[0] = y[1] = -1;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_ERROR);
    CHECK_EQ_INT(r.code, 7);
    CHECK_EQ_INT(y[0], -1); /* nothing copied out of a failed run */
    x[0] = 4;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_OK);
    CHECK_EQ_INT(y[0], 5);
    CHECK_EQ_INT(y[1], 0); /* not the 42 of the first run */
    x[0] = 5;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_CRASH);
    x[0] = 0;
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_OK);
    CHECK_EQ_INT(y[0], runner); /* the same runner all along */
    kill((pid_t)runner, SIGKILL);
    CHECK(tr_jit_runner_run(rn, c, fn, in, &ib, 1, out, &ob, 1, 10, &r, &d) == TR_OK);
    CHECK(r.outcome == TR_JIT_RUN_OK);
    CHECK_EQ_INT(y[0], (int)getpid());
    CHECK_EQ_INT(y[1], 42);
  }
  tr_jit_release(c);
  tr_jit_runner_free(rn);
  tr_diag_clear(&d);
}

/* The emitter keeps only the prelude helpers a unit calls (directly or
 * through other helpers): for every helper of the full prelude, a unit
 * that calls just it compiles (its dependencies came along: a missing one
 * would be an implicit declaration), and the unused others are gone. */
TR_TEST(jit_tcc_prelude_only_what_is_called) {
  if (skip_without_tcc()) return;
  tr_jit_opts o = tcc_uncached();
  tr_buf full = {0};
  tr_emit_prelude(&full, NULL);
  int nfun = 0;
  for (const char *p = tr_buf_str(&full); p && *p;) {
    const char *le = strchr(p, '\n');
    size_t n = le ? (size_t)(le - p) : strlen(p);
    /* "static [inline] TYPE NAME(" definitions, the attribute's too */
    if ((!strncmp(p, "static ", 7) || !strncmp(p, "__attribute__", 13)) && p[n - 1] != ';') {
      const char *q = p + (!strncmp(p, "__attribute__", 13) ? 13 : 0);
      const char *par = memchr(q, '(', n - (size_t)(q - p));
      const char *s = par;
      while (s && s > q && (s[-1] == '_' || (s[-1] >= 'a' && s[-1] <= 'z') || (s[-1] >= 'A' && s[-1] <= 'Z') ||
                            (s[-1] >= '0' && s[-1] <= '9')))
        s--;
      char name[64], mac[80];
      snprintf(name, sizeof name, "%.*s", par ? (int)(par - s) : 0, s ? s : "");
      snprintf(mac, sizeof mac, "#define %s", name);
      /* under tcc some are macros instead (the other branch of an #ifdef) */
      if (par && s < par && !strstr(tr_buf_str(&full), mac)) {
        char use[256];
        snprintf(use, sizeof use,
                 "int trench_entry(unsigned char **in, unsigned char **out) {\n"
                 "  (void)in; (void)out; (void)&%s; return 0;\n}\n", name);
        tr_buf src = {0};
        tr_emit_prelude(&src, use);
        tr_buf_puts(&src, use);
        /* the helper is defined once, and the unit is smaller than all */
        char def[160];
        snprintf(def, sizeof def, "%.*s", (int)(par - p + 1), p);
        CHECK(strstr(tr_buf_str(&src), def) != NULL);
        CHECK(src.n < full.n);
        tr_jit_code *c = NULL;
        tr_diag d = {0};
        tr_status st = tr_jit_compile(&o, tr_buf_str(&src), &c, NULL, &d);
        if (st != TR_OK) fprintf(stderr, "  prelude with %s alone: %s\n", name, tr_diag_first(&d));
        CHECK(st == TR_OK);
        tr_jit_release(c);
        tr_diag_clear(&d);
        tr_buf_free(&src);
        nfun++;
      }
    }
    p = le ? le + 1 : NULL;
  }
  CHECK(nfun >= 40);
  /* a unit that calls nothing gets none of the gather, scatter and sort */
  tr_buf none = {0};
  tr_emit_prelude(&none, "int trench_entry(unsigned char **in, unsigned char **out) { return 0; }\n");
  CHECK(strstr(tr_buf_str(&none), "tr_gather(") == NULL);
  CHECK(strstr(tr_buf_str(&none), "tr_msort(") == NULL);
  CHECK(strstr(tr_buf_str(&none), "LD_f32(") == NULL);
  tr_buf_free(&none);
  tr_buf_free(&full);
}
