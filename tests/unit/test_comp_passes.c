/* test_comp_passes.c - constant folding, while-loop simplification and
 * fusion: for every rule a hand-written module where it fires (in the
 * rewrite log, on the printed result, by the verifier, through a print and
 * parse round trip, and by evaluating before and after bit for bit on
 * fixed inputs), the same module with the rule disabled, modules where a
 * rule must not fire, trip counts at the edges of wrapping arithmetic,
 * fuel, the test corpus, random counted loops and fusible graphs, and
 * random modules for the simplifier's window-folding and layout rules. */
#include "../../src/comp/pipeline.h"
#include "../../src/eval/eval.h"
#include "test.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

#define HEAD "HloModule t\n"
#define ENTRY(body) "ENTRY e {\n" body "}\n"
#define ADD_F32 \
  "add_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"

/* Loops that would run longer than this are not evaluated (and a bad
 * unrolling of one shows up as a mismatch well before it). */
#define MAX_TRIPS 3000

/* ---- harness ---- */

static tr_module *parse_text(const char *text, const char *what) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m || tr_verify(m, &d) != TR_OK) {
    fprintf(stderr, "  %s: module does not parse and verify:\n%s", what, text);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    if (m) tr_module_free(m);
    m = NULL;
  }
  tr_diag_clear(&d);
  return m;
}




static int nskipped, ncompared;

/* Evaluates before and after on four input sets and compares bit for bit
 * (NaN payloads aside). Skipped when the reference cannot run the
 * original (or it loops past MAX_TRIPS). */
static void check_same_values(const tr_module *before, const tr_module *after, const char *what) {
  tr_eval_opts opts = {0};
  opts.max_while_trips = MAX_TRIPS;
  for (int seed = 0; seed < 4; seed++) {
    tr_tensor *args[16];
    int nargs = 0;
    bool ok = true;
    const tr_comp *e = before->entry;
    for (int i = 0; i < e->nparams && ok; i++) ok = tr_test_add_inputs(e->params[i]->shape, args, &nargs, 16, seed);
    tr_tensor **o1 = NULL, **o2 = NULL;
    int n1 = 0, n2 = 0;
    tr_diag d = {0};
    if (ok && tr_eval_opt(before, &opts, args, nargs, &o1, &n1, &d) != TR_OK) {
      if (getenv("TR_TEST_VERBOSE")) {
        fprintf(stderr, "  %s: semantic check skipped:\n", what);
        tr_diag_print(&d, stderr);
      }
      nskipped++;
      ok = false;
    }
    tr_diag_clear(&d);
    if (ok && tr_eval_opt(after, &opts, args, nargs, &o2, &n2, &d) != TR_OK) {
      fprintf(stderr, "  %s: the optimized module does not evaluate:\n", what);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
      ok = false;
    }
    tr_diag_clear(&d);
    if (ok) {
      ncompared++;
      if (n1 != n2) {
        fprintf(stderr, "  %s: %d outputs before, %d after\n", what, n1, n2);
        tr_test_failed++;
      }
      for (int i = 0; i < n1 && i < n2; i++)
        if (!tr_test_same_bits(o1[i], o2[i])) {
          fprintf(stderr, "  %s: output %d differs after optimization (inputs seed %d)\n", what, i, seed);
          tr_test_failed++;
        }
    }
    tr_eval_free_outputs(o1, n1);
    tr_eval_free_outputs(o2, n2);
    for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
    if (!ok) break;
  }
}

static int log_count(const tr_bc_ctx *c, const char *rule) {
  int n = 0;
  for (int i = 0; i < c->nlog; i++) n += strcmp(c->log[i].rule, rule) == 0;
  return n;
}

/* The optimized module verifies, prints, parses back, verifies again and
 * prints the same text. */
static void check_round_trip(const tr_module *m, const char *what) {
  tr_diag d = {0};
  if (tr_verify(m, &d) != TR_OK) {
    fprintf(stderr, "  %s: the optimized module does not verify:\n", what);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  tr_buf a = {0}, b = {0};
  tr_print_module(&a, m);
  tr_module *r = tr_parse("opt.hlo", tr_buf_str(&a), a.n, NULL, &d);
  if (!r || tr_verify(r, &d) != TR_OK) {
    fprintf(stderr, "  %s: the optimized module does not parse back:\n%s", what, tr_buf_str(&a));
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  } else {
    tr_print_module(&b, r);
    if (strcmp(tr_buf_str(&a), tr_buf_str(&b)) != 0) {
      fprintf(stderr, "  %s: printed differently after a round trip:\n%s---\n%s", what, tr_buf_str(&a),
              tr_buf_str(&b));
      tr_test_failed++;
    }
  }
  if (r) tr_module_free(r);
  tr_diag_clear(&d);
  tr_buf_free(&a);
  tr_buf_free(&b);
}

/* Compiles text's module under c: the whole pipeline (rule NULL) or
 * rule's pass alone (tr_test_compile); returns the optimized module (NULL
 * on failure, counted) and its text in out. */
static tr_module *compile_with(const char *text, const char *rule, tr_bc_ctx *c, tr_buf *out,
                               const char *what) {
  tr_module *m = parse_text(text, what);
  if (!m) return NULL;
  tr_diag d = {0};
  if (tr_test_compile(c, m, rule, &d) != TR_OK) {
    fprintf(stderr, "  %s: compiling failed:\n", what);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
    tr_diag_clear(&d);
    tr_module_free(m);
    return NULL;
  }
  tr_diag_clear(&d);
  check_round_trip(m, what);
  out->n = 0;
  tr_print_module(out, m);
  return m;
}

static tr_module *compile(const char *text, tr_bc_ctx *c, tr_buf *out, const char *what) {
  return compile_with(text, NULL, c, out, what);
}

static tr_module *compile_rule(const char *rule, const char *text, tr_bc_ctx *c, tr_buf *out) {
  return compile_with(text, rule, c, out, rule);
}

typedef struct {
  const char *rule;    /* rule under test */
  const char *hlo;     /* module where it fires */
  const char *expect;  /* text the optimized module must contain */
  const char *absent;  /* text its live part must not contain, or NULL */
} rule_case;

/* m's text without its dead instructions and computations: what a rule
 * left computed. Dropping the dead code the rule orphaned is DCE's job,
 * so it runs here on a copy, under a context of its own, for the check
 * alone. */
static void live_text(const tr_module *m, tr_buf *out) {
  tr_module *l = tr_module_clone(m);
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_diag d = {0};
  if (tr_bc_pass_run(&c, l, "dce", &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  out->n = 0;
  tr_print_module(out, l);
  tr_diag_clear(&d);
  tr_bc_ctx_free(&c);
  tr_module_free(l);
}

static void check_rule_case(const rule_case *rc) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_text(rc->hlo, rc->rule);
  tr_module *m = compile_rule(rc->rule, rc->hlo, &c, &out);
  if (m) {
    if (!log_count(&c, rc->rule)) {
      fprintf(stderr, "  rule %s did not fire; result:\n%s", rc->rule, tr_buf_str(&out));
      tr_test_failed++;
    } else if (!strstr(tr_buf_str(&out), rc->expect)) {
      fprintf(stderr, "  rule %s: result lacks \"%s\":\n%s", rc->rule, rc->expect, tr_buf_str(&out));
      tr_test_failed++;
    } else if (rc->absent) {
      tr_buf live = {0};
      live_text(m, &live);
      if (strstr(tr_buf_str(&live), rc->absent)) {
        fprintf(stderr, "  rule %s: result still computes \"%s\":\n%s", rc->rule, rc->absent,
                tr_buf_str(&live));
        tr_test_failed++;
      }
      tr_buf_free(&live);
    }
    if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "---- %s\n%s", rc->rule, tr_buf_str(&out));
    if (orig) check_same_values(orig, m, rc->rule);
    tr_module_free(m);
  }
  tr_bc_ctx_free(&c);

  tr_bc_ctx_init(&c);
  tr_diag d = {0};
  CHECK(tr_bc_ctx_disable(&c, rc->rule, &d) == TR_OK);
  tr_diag_clear(&d);
  m = compile_rule(rc->rule, rc->hlo, &c, &out);
  if (m) {
    if (log_count(&c, rc->rule)) {
      fprintf(stderr, "  rule %s fired although disabled\n", rc->rule);
      tr_test_failed++;
    }
    if (orig) check_same_values(orig, m, rc->rule);
    tr_module_free(m);
  }
  tr_bc_ctx_free(&c);
  tr_buf_free(&out);
  if (orig) tr_module_free(orig);
}

/* Must not fire; with eval false the module is not run (it loops). */
static void check_no_fire(const char *rule, const char *hlo, bool eval) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_text(hlo, rule);
  tr_module *m = compile_rule(rule, hlo, &c, &out);
  if (m) {
    if (log_count(&c, rule)) {
      fprintf(stderr, "  rule %s fired where it must not:\n%s", rule, tr_buf_str(&out));
      tr_test_failed++;
    }
    if (orig && eval) check_same_values(orig, m, rule);
    tr_module_free(m);
  }
  if (orig) tr_module_free(orig);
  tr_bc_ctx_free(&c);
  tr_buf_free(&out);
}

/* ---- counted loops ----
 * loop(T, init, update, cmp): state (i: T, v: f32[3]); the condition is
 * cmp (an expression of i and constants), the body sets i to update and
 * v to v * p + 1, so every trip shows in the result. */
static void loop_text(tr_buf *b, const char *t, const char *init, const char *update,
                      const char *cmp) {
  b->n = 0;
  tr_buf_printf(b,
                HEAD "cond {\n s = (%s[], f32[3]) parameter(0)\n i = %s[] get-tuple-element(s), index=0\n"
                " %s\n}\n"
                "body {\n s = (%s[], f32[3]) parameter(0)\n i = %s[] get-tuple-element(s), index=0\n"
                " v = f32[3] get-tuple-element(s), index=1\n %s\n"
                " one = f32[] constant(1)\n ones = f32[3] broadcast(one), dimensions={}\n"
                " x = f32[3] multiply(v, v)\n y = f32[3] add(x, ones)\n"
                " ROOT o = (%s[], f32[3]) tuple(j, y)\n}\n"
                ENTRY(" p = f32[3] parameter(0)\n z = %s[] constant(%s)\n t = (%s[], f32[3]) tuple(z, p)\n"
                      " w = (%s[], f32[3]) while(t), condition=cond, body=body\n"
                      " ROOT g = f32[3] get-tuple-element(w), index=1\n"),
                t, t, cmp, t, t, update, t, t, init, t, t);
}

/* ---- one module per rule ---- */

#define LOOP_COND_LT5 " n = s32[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT\n"
#define LOOP_INC_S32 " k = s32[] constant(1)\n j = s32[] add(i, k)\n"

static const rule_case cases[] = {
  /* constant-fold: exact reference semantics (rounding, -0, wrapping). */
  {"fold-constant",
   HEAD ENTRY(" p = f32[3] parameter(0)\n a = f32[3] constant({1, 2.5, -0})\n b = f32[3] constant({3, 0.5, 0})\n"
              " s = f32[3] add(a, b)\n n = f32[3] negate(s)\n ROOT r = f32[3] multiply(p, n)\n"),
   "f32[3] constant({-4, -3, -0.0})", "add("},
  {"fold-constant",
   HEAD ENTRY(" p = s8[2] parameter(0)\n a = s8[2] constant({127, -128})\n b = s8[2] constant({1, -1})\n"
              " s = s8[2] add(a, b)\n ROOT r = s8[2] xor(p, s)\n"),
   "s8[2] constant({-128, 127})", NULL},
  {"fold-constant",
   HEAD ADD_F32 ENTRY(" p = f32[] parameter(0)\n a = f32[4] constant({1, 2, 3, 4})\n z = f32[] constant(0)\n"
                      " r = f32[] reduce(a, z), dimensions={0}, to_apply=add_f32\n ROOT m = f32[] multiply(p, r)\n"),
   "f32[] constant(10)", "reduce("},
  /* f32 1 + 2^-11 lies halfway between two f16 values: to even, 1. */
  {"fold-constant",
   HEAD ENTRY(" p = f16[] parameter(0)\n a = f32[] constant(1.00048828125)\n b = f16[] convert(a)\n"
              " ROOT r = f16[] add(p, b)\n"),
   "f16[] constant(1)", "convert("},
  {"fold-broadcast",
   HEAD ENTRY(" p = s32[3,2] parameter(0)\n c = s32[2] constant({1, 2})\n b = s32[3,2] broadcast(c), dimensions={1}\n"
              " ROOT r = s32[3,2] add(p, b)\n"),
   "s32[3,2] constant({ { 1, 2 }, { 1, 2 }, { 1, 2 } })", "broadcast("},

  /* while-simplify */
  {"while-zero-trip",
   HEAD "cond {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n" LOOP_COND_LT5 "}\n"
   "body {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
   " v = f32[3] get-tuple-element(s), index=1\n" LOOP_INC_S32 " x = f32[3] multiply(v, v)\n"
   " ROOT o = (s32[], f32[3]) tuple(j, x)\n}\n"
   ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(5)\n t = (s32[], f32[3]) tuple(z, p)\n"
         " w = (s32[], f32[3]) while(t), condition=cond, body=body\n ROOT g = f32[3] get-tuple-element(w), index=1\n"),
   "ROOT %g = f32[3] get-tuple-element(%t), index=1", "while("},
  {"while-unroll",
   HEAD "cond {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n" LOOP_COND_LT5 "}\n"
   "body {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
   " v = f32[3] get-tuple-element(s), index=1\n" LOOP_INC_S32 " x = f32[3] multiply(v, v)\n"
   " ROOT o = (s32[], f32[3]) tuple(j, x)\n}\n"
   ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(2)\n t = (s32[], f32[3]) tuple(z, p)\n"
         " w = (s32[], f32[3]) while(t), condition=cond, body=body\n ROOT g = f32[3] get-tuple-element(w), index=1\n"),
   "%x.u2 = f32[3] multiply(%v.u2, %v.u2)", "while("},
  /* The limit carried in the state, passed on unchanged: 3 trips. */
  {"while-unroll",
   HEAD "cond {\n s = (s32[], s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
   " n = s32[] get-tuple-element(s), index=1\n ROOT c = pred[] compare(n, i), direction=GT\n}\n"
   "body {\n s = (s32[], s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
   " n = s32[] get-tuple-element(s), index=1\n v = f32[3] get-tuple-element(s), index=2\n" LOOP_INC_S32
   " x = f32[3] multiply(v, v)\n ROOT o = (s32[], s32[], f32[3]) tuple(j, n, x)\n}\n"
   ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(-1)\n l = s32[] constant(2)\n"
         " t = (s32[], s32[], f32[3]) tuple(z, l, p)\n w = (s32[], s32[], f32[3]) while(t), condition=cond, body=body\n"
         " ROOT g = f32[3] get-tuple-element(w), index=2\n"),
   "%x.u2 = f32[3] multiply(%v.u2, %v.u2)", "%x.u3"},
  /* The dead element d feeds only itself; i's start is a parameter, so
   * the trip count is unknown and the loop stays. */
  {"while-remove-dead-state",
   HEAD "cond {\n s = (s8[], f32[3], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
   " n = s8[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
   "body {\n s = (s8[], f32[3], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
   " v = f32[3] get-tuple-element(s), index=1\n d = f32[3] get-tuple-element(s), index=2\n"
   " k = s8[] constant(1)\n j = s8[] add(i, k)\n x = f32[3] multiply(v, v)\n e = f32[3] add(d, v)\n"
   " ROOT o = (s8[], f32[3], f32[3]) tuple(j, x, e)\n}\n"
   ENTRY(" p = f32[3] parameter(0)\n q = s8[] parameter(1)\n t = (s8[], f32[3], f32[3]) tuple(q, p, p)\n"
         " w = (s8[], f32[3], f32[3]) while(t), condition=cond, body=body\n ROOT g = f32[3] get-tuple-element(w), index=1\n"),
   "(s8[], f32[3]) while(%t.d1), condition=%cond.1, body=%body.1", "f32[3], f32[3]) while("},

  /* fusion */
  {"fuse-elementwise",
   HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n b = f32[4] negate(a)\n ROOT r = f32[4] abs(b)\n"),
   "ROOT %r = f32[4] fusion(%p), kind=kLoop, calls=%fused_computation", NULL},
  {"fuse-producer",
   HEAD ENTRY(" p = f32[4,3] parameter(0)\n s = f32[] parameter(1)\n b = f32[4,3] broadcast(s), dimensions={}\n"
              " t = f32[3,4] transpose(p), dimensions={1,0}\n u = f32[4,3] reshape(t)\n"
              " l = f32[2,3] slice(u), slice={[1:3], [0:3]}\n m = f32[2,3] slice(b), slice={[0:2], [0:3]}\n"
              " ROOT r = f32[2,3] add(l, m)\n"),
   "ROOT %r = f32[2,3] fusion(%s, %p), kind=kLoop, calls=%fused_computation", NULL},
  {"fuse-producer",
   HEAD ENTRY(" p = f32[4,3] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n"
              " d = f32[2,2] dynamic-slice(p, i, j), dynamic_slice_sizes={2,2}\n ROOT r = f32[2,2] negate(d)\n"),
   "%d = f32[2,2] dynamic-slice(%p, %i, %j), dynamic_slice_sizes={2,2}", NULL},
  {"fuse-reduce-input",
   HEAD ADD_F32 ENTRY(" p = f32[4,3] parameter(0)\n z = f32[] constant(0)\n m = f32[4,3] multiply(p, p)\n"
                      " ROOT r = f32[4] reduce(m, z), dimensions={1}, to_apply=add_f32\n"),
   "ROOT %r = f32[4] fusion(%p, %z), kind=kInput, calls=%fused_computation", NULL},
  {"fuse-multi-output",
   HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n x = f32[4] negate(a)\n"
              " b = f32[4] sqrt(p)\n y = f32[4] abs(b)\n ROOT r = (f32[4], f32[4]) tuple(x, y)\n"),
   "%x = f32[4] get-tuple-element(%fusion), index=", "%fused_computation.1 ("},
};

TR_TEST(comp_passes_rules_fire_and_disable) {
  ncompared = nskipped = 0;
  for (int i = 0; i < TR_NELEMS(cases); i++) check_rule_case(&cases[i]);
  /* Values were compared, not skipped. */
  CHECK(nskipped == 0 && ncompared >= TR_NELEMS(cases) * 8);
}

/* Every rule of the three passes has a case above and is documented. */
TR_TEST(comp_passes_rules_tested_and_documented) {
  const char *rules[32];
  int nrules = 0;
  const char *const *names = tr_bc_rule_names();
  for (int i = 0; names[i]; i++) {
    const char *pass = tr_bc_rule_pass(names[i]);
    if ((strcmp(pass, "constant-fold") == 0 || strcmp(pass, "while-simplify") == 0 ||
         strcmp(pass, "fusion") == 0) && nrules < TR_NELEMS(rules))
      rules[nrules++] = names[i];
  }
  CHECK(nrules >= 9); /* 2 folding, 3 loop and 4 fusion rules */
  tr_buf path = {0};
  tr_buf_printf(&path, "%s/../docs/COMPILER.md", tr_test_dir);
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(tr_buf_str(&path), &text, &len, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  for (int i = 0; i < nrules; i++) {
    bool found = false;
    for (int k = 0; k < TR_NELEMS(cases) && !found; k++) found = strcmp(cases[k].rule, rules[i]) == 0;
    if (!found) {
      fprintf(stderr, "  rule %s has no test case\n", rules[i]);
      tr_test_failed++;
    }
    tr_bc_ctx c;
    tr_bc_ctx_init(&c);
    CHECK(tr_bc_ctx_disable(&c, rules[i], &d) == TR_OK);
    tr_bc_ctx_free(&c);
    tr_buf q = {0};
    tr_buf_printf(&q, "`%s`", rules[i]);
    if (text && !strstr(text, tr_buf_str(&q))) {
      fprintf(stderr, "  docs/COMPILER.md does not describe rule %s\n", rules[i]);
      tr_test_failed++;
    }
    tr_buf_free(&q);
  }
  const char *const *p = tr_bc_pass_names();
  int npass = 0;
  for (int i = 0; p[i]; i++)
    npass += strcmp(p[i], "constant-fold") == 0 || strcmp(p[i], "while-simplify") == 0 ||
             strcmp(p[i], "fusion") == 0;
  CHECK_EQ_INT(npass, 3);
  free(text);
  tr_diag_clear(&d);
  tr_buf_free(&path);
}

/* ---- must not fire ---- */

TR_TEST(comp_passes_no_fire) {
  /* Side effects, unknown values, expansion: no folding. */
  check_no_fire("fold-constant",
                HEAD ENTRY(" s = u64[2] constant({1, 2})\n ROOT r = (u64[2], u32[4]) rng-bit-generator(s), algorithm=rng_default\n"),
                true);
  check_no_fire("fold-constant",
                HEAD ENTRY(" a = f32[3] constant({...})\n ROOT n = f32[3] negate(a)\n"), false);
  check_no_fire("fold-constant",
                HEAD ENTRY(" a = f32[] constant(2)\n b = f32[2048] broadcast(a), dimensions={}\n"
                           " ROOT n = f32[2048] negate(b)\n"),
                true);
  check_no_fire("fold-constant", HEAD ENTRY(" i = s32[4] iota(), iota_dimension=0\n ROOT n = s32[4] negate(i)\n"), true);
  /* A call of constants whose loop never ends: given up on, not hung. */
  check_no_fire("fold-constant",
                HEAD "cond {\n s = s32[] parameter(0)\n n = s32[] constant(5)\n ROOT c = pred[] compare(s, n), direction=LT\n}\n"
                "body {\n s = s32[] parameter(0)\n ROOT t = s32[] copy(s)\n}\n"
                "f {\n x = s32[] parameter(0)\n ROOT w = s32[] while(x), condition=cond, body=body\n}\n"
                ENTRY(" z = s32[] constant(0)\n ROOT r = s32[] call(z), to_apply=f\n"),
                false);
  check_no_fire("fold-broadcast",
                HEAD ENTRY(" c = s32[8] constant({1, 2, 3, 4, 5, 6, 7, 8})\n b = s32[4,8] broadcast(c), dimensions={1}\n"
                           " p = s32[4,8] parameter(0)\n ROOT r = s32[4,8] add(p, b)\n"),
                true);
  /* A producer with users in two fusions is not expensive to keep once. */
  check_no_fire("fuse-elementwise",
                HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n x = f32[4] negate(a)\n"
                           " y = f32[4] abs(a)\n ROOT r = (f32[4], f32[4]) tuple(x, y)\n"),
                true);
  /* Nothing crosses a side effect or a control edge. */
  check_no_fire("fuse-elementwise",
                HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n"
                           " b = f32[4] negate(a), control-predecessors={a}\n ROOT r = f32[4] abs(b)\n"),
                true);
  /* Different output dims: no sibling fusion. */
  check_no_fire("fuse-multi-output",
                HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n x = f32[4] negate(a)\n"
                           " b = f32[2] slice(p), slice={[0:2]}\n y = f32[2] abs(b)\n ROOT r = (f32[4], f32[2]) tuple(x, y)\n"),
                true);
  /* One sibling reads the other: merging them would make a cycle. */
  check_no_fire("fuse-multi-output",
                HEAD ENTRY(" p = f32[4] parameter(0)\n a = f32[4] exponential(p)\n x = f32[4] negate(a)\n"
                           " c = f32[4] custom-call(x), custom_call_target=\"f\"\n b = f32[4] sqrt(p)\n"
                           " y = f32[4] add(b, c)\n ROOT r = (f32[4], f32[4]) tuple(x, y)\n"),
                false);
  /* Every element is observed: nothing to remove. */
  check_no_fire("while-remove-dead-state",
                HEAD "cond {\n s = (s8[], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
                " n = s8[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
                "body {\n s = (s8[], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
                " v = f32[3] get-tuple-element(s), index=1\n k = s8[] constant(1)\n j = s8[] add(i, k)\n"
                " ROOT o = (s8[], f32[3]) tuple(j, v)\n}\n"
                ENTRY(" p = f32[3] parameter(0)\n q = s8[] parameter(1)\n t = (s8[], f32[3]) tuple(q, p)\n"
                      " ROOT w = (s8[], f32[3]) while(t), condition=cond, body=body\n"),
                true);
  /* A side effect in the body: the loop stays as it is. */
  check_no_fire("while-unroll",
                HEAD "cond {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n" LOOP_COND_LT5 "}\n"
                "body {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
                " v = f32[3] get-tuple-element(s), index=1\n" LOOP_INC_S32
                " x = f32[3] custom-call(v), custom_call_target=\"f\"\n ROOT o = (s32[], f32[3]) tuple(j, x)\n}\n"
                ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(2)\n t = (s32[], f32[3]) tuple(z, p)\n"
                      " w = (s32[], f32[3]) while(t), condition=cond, body=body\n ROOT g = f32[3] get-tuple-element(w), index=1\n"),
                false);
}

/* ---- trip counts ---- */

typedef struct {
  const char *t, *init, *update, *cmp;
  int trips;   /* expected copies of the body; -1: must not unroll */
  bool eval;   /* the original terminates: evaluate it */
} trip_case;

static const trip_case trips[] = {
  {"s32", "0", " k = s32[] constant(1)\n j = s32[] add(i, k)",
   " n = s32[] constant(8)\n ROOT c = pred[] compare(i, n), direction=LT", 8, true},
  {"s32", "0", " k = s32[] constant(1)\n j = s32[] add(i, k)",
   " n = s32[] constant(9)\n ROOT c = pred[] compare(i, n), direction=LT", -1, true},
  {"s32", "1", " k = s32[] constant(2)\n j = s32[] add(k, i)",
   " n = s32[] constant(7)\n ROOT c = pred[] compare(i, n), direction=LE", 4, true},
  {"s32", "10", " k = s32[] constant(-3)\n j = s32[] add(i, k)",
   " n = s32[] constant(2)\n ROOT c = pred[] compare(i, n), direction=GE", 3, true},
  {"s32", "10", " k = s32[] constant(3)\n j = s32[] subtract(i, k)",
   " n = s32[] constant(2)\n ROOT c = pred[] compare(i, n), direction=GT", 3, true},
  {"s32", "0", " k = s32[] constant(2)\n j = s32[] add(i, k)",
   " n = s32[] constant(6)\n ROOT c = pred[] compare(i, n), direction=NE", 3, true},
  {"s32", "5", " k = s32[] constant(1)\n j = s32[] add(i, k)",
   " n = s32[] constant(5)\n ROOT c = pred[] compare(i, n), direction=EQ", 1, true},
  /* the bound on the left: 5 > i is i < 5 */
  {"s32", "0", " k = s32[] constant(1)\n j = s32[] add(i, k)",
   " n = s32[] constant(5)\n ROOT c = pred[] compare(n, i), direction=GT", 5, true},
  /* unsigned counting down: subtract 1, and add of 2^32 - 1 */
  {"u32", "3", " k = u32[] constant(1)\n j = u32[] subtract(i, k)",
   " n = u32[] constant(0)\n ROOT c = pred[] compare(i, n), direction=GT", 3, true},
  {"u32", "3", " k = u32[] constant(4294967295)\n j = u32[] add(i, k)",
   " n = u32[] constant(0)\n ROOT c = pred[] compare(i, n), direction=NE", 3, true},
  /* u32 3 - 1 - 1 - 1 - 1 wraps to 2^32 - 1 > 0: runs on for 2^32 trips */
  {"u32", "3", " k = u32[] constant(1)\n j = u32[] subtract(i, k)",
   " n = u32[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT", -1, false},
  /* s8 120, 122, 124, 126, then -128 < 127 again: never ends */
  {"s8", "120", " k = s8[] constant(2)\n j = s8[] add(i, k)",
   " n = s8[] constant(127)\n ROOT c = pred[] compare(i, n), direction=LT", -1, false},
  /* s8 ending exactly at the top: 121, 123, 125 then 127 stops */
  {"s8", "121", " k = s8[] constant(2)\n j = s8[] add(i, k)",
   " n = s8[] constant(127)\n ROOT c = pred[] compare(i, n), direction=LT", 3, true},
  /* s64 at the top: i <= max holds forever */
  {"s64", "9223372036854775805", " k = s64[] constant(1)\n j = s64[] add(i, k)",
   " n = s64[] constant(9223372036854775807)\n ROOT c = pred[] compare(i, n), direction=LE", -1, false},
  {"s64", "9223372036854775805", " k = s64[] constant(1)\n j = s64[] add(i, k)",
   " n = s64[] constant(9223372036854775807)\n ROOT c = pred[] compare(i, n), direction=LT", 2, true},
  /* u64 max - 6, - 4, - 2, then 2^64 wraps to 0: never ends */
  {"u64", "18446744073709551610", " k = u64[] constant(2)\n j = u64[] add(i, k)",
   " n = u64[] constant(18446744073709551615)\n ROOT c = pred[] compare(i, n), direction=LT", -1, false},
  {"u64", "18446744073709551609", " k = u64[] constant(2)\n j = u64[] add(i, k)",
   " n = u64[] constant(18446744073709551615)\n ROOT c = pred[] compare(i, n), direction=LT", 3, true},
  /* u8 250 + 3k reaches 1 only after wrapping, 173 trips later */
  {"u8", "250", " k = u8[] constant(3)\n j = u8[] add(i, k)",
   " n = u8[] constant(1)\n ROOT c = pred[] compare(i, n), direction=NE", -1, true},
  /* s4: 6 + 1 = 7, then 7 + 1 wraps to -8 < 7 */
  {"s4", "5", " k = s4[] constant(1)\n j = s4[] add(i, k)",
   " n = s4[] constant(7)\n ROOT c = pred[] compare(i, n), direction=LT", 2, true},
  {"s4", "5", " k = s4[] constant(1)\n j = s4[] add(i, k)",
   " n = s4[] constant(7)\n ROOT c = pred[] compare(i, n), direction=LE", -1, false},
  /* zero step: never ends, never unrolled */
  {"s32", "0", " k = s32[] constant(0)\n j = s32[] add(i, k)",
   " n = s32[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT", -1, false},
  /* step away from the bound */
  {"s32", "0", " k = s32[] constant(-1)\n j = s32[] add(i, k)",
   " n = s32[] constant(5)\n ROOT c = pred[] compare(i, n), direction=LT", -1, false},
};

TR_TEST(comp_passes_trip_counts) {
  tr_buf text = {0}, out = {0};
  for (int i = 0; i < TR_NELEMS(trips); i++) {
    const trip_case *tc = &trips[i];
    loop_text(&text, tc->t, tc->init, tc->update, tc->cmp);
    tr_bc_ctx c;
    tr_bc_ctx_init(&c);
    tr_module *orig = parse_text(tr_buf_str(&text), "trip count");
    tr_module *m = compile_rule("while-unroll", tr_buf_str(&text), &c, &out);
    if (m) {
      int fired = log_count(&c, "while-unroll");
      bool ok = tc->trips < 0 ? !fired : fired == 1;
      if (ok && tc->trips > 0) {
        /* n copies: names x, x.u1, ..., x.u(n-1), and no x.un. */
        tr_buf last = {0}, next = {0};
        if (tc->trips > 1) tr_buf_printf(&last, "%%x.u%d = ", tc->trips - 1);
        else tr_buf_puts(&last, "%x = ");
        tr_buf_printf(&next, "%%x.u%d = ", tc->trips);
        ok = strstr(tr_buf_str(&out), tr_buf_str(&last)) && !strstr(tr_buf_str(&out), tr_buf_str(&next));
        tr_buf_free(&last);
        tr_buf_free(&next);
      }
      if (!ok) {
        fprintf(stderr, "  trip case %d: expected %d trips:\n%s", i, tc->trips, tr_buf_str(&out));
        tr_test_failed++;
      }
      if (orig && tc->eval) check_same_values(orig, m, "trip count");
      tr_module_free(m);
    }
    if (orig) tr_module_free(orig);
    tr_bc_ctx_free(&c);
  }
  tr_buf_free(&text);
  tr_buf_free(&out);
}

/* ---- fuel ---- */

/* Folds, a loop to unroll, fusions. */
static const char FUEL_MOD[] =
    HEAD "cond {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n" LOOP_COND_LT5 "}\n"
    "body {\n s = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
    " v = f32[3] get-tuple-element(s), index=1\n" LOOP_INC_S32 " x = f32[3] multiply(v, v)\n"
    " ROOT o = (s32[], f32[3]) tuple(j, x)\n}\n"
    ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(3)\n t = (s32[], f32[3]) tuple(z, p)\n"
          " w = (s32[], f32[3]) while(t), condition=cond, body=body\n g = f32[3] get-tuple-element(w), index=1\n"
          " a = f32[3] constant({1, 2, 3})\n b = f32[3] negate(a)\n e = f32[3] exponential(g)\n"
          " f = f32[3] add(e, b)\n q = f32[3] sqrt(g)\n h = f32[3] abs(q)\n"
          " ROOT r = (f32[3], f32[3]) tuple(f, h)\n");

TR_TEST(comp_passes_fuel) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_text(FUEL_MOD, "fuel");
  tr_module *m = compile(FUEL_MOD, &c, &out, "fuel");
  int64_t total = c.napplied;
  CHECK(log_count(&c, "fold-constant") >= 1);
  CHECK(log_count(&c, "while-unroll") == 1);
  CHECK(log_count(&c, "fuse-elementwise") >= 1);
  CHECK(log_count(&c, "fuse-multi-output") == 1);
  if (m) tr_module_free(m);
  tr_bc_ctx_free(&c);
  for (int64_t fuel = 0; fuel <= total; fuel++) {
    tr_bc_ctx_init(&c);
    c.fuel = fuel;
    m = compile(FUEL_MOD, &c, &out, "fuel prefix");
    if (m) {
      CHECK_EQ_INT(c.napplied, fuel);
      CHECK_EQ_INT(c.nlog, fuel);
      if (orig) check_same_values(orig, m, "fuel prefix");
      tr_module_free(m);
    }
    tr_bc_ctx_free(&c);
  }
  /* Disabling the passes by name turns their rules off. */
  tr_bc_ctx_init(&c);
  tr_diag d = {0};
  CHECK(tr_bc_ctx_disable(&c, "fusion", &d) == TR_OK);
  CHECK(tr_bc_ctx_disable(&c, "while-simplify", &d) == TR_OK);
  CHECK(tr_bc_ctx_disable(&c, "constant-fold", &d) == TR_OK);
  tr_diag_clear(&d);
  m = compile(FUEL_MOD, &c, &out, "passes disabled");
  for (int i = 0; i < c.nlog; i++)
    CHECK(strcmp(c.log[i].pass, "fusion") != 0 && strcmp(c.log[i].pass, "while-simplify") != 0 &&
          strcmp(c.log[i].pass, "constant-fold") != 0);
  CHECK_CONTAINS(tr_buf_str(&out), "while(");
  if (m) tr_module_free(m);
  tr_bc_ctx_free(&c);
  if (orig) tr_module_free(orig);
  tr_buf_free(&out);
}

/* ---- the corpus ---- */

typedef struct {
  int nrun, nfold, nwhile, nfuse;
} corpus_stats;

static void corpus_file(const char *path, corpus_stats *st) {
  tr_diag d = {0};
  tr_parse_opts opts = {.fill_elided = true};
  tr_module *orig = tr_parse_file(path, &opts, &d);
  if (!orig || tr_verify(orig, &d) != TR_OK) {
    if (orig) tr_module_free(orig);
    tr_diag_clear(&d);
    return;
  }
  tr_module *m = tr_module_clone(orig);
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  if (tr_bc_pipeline_run(&c, m, &d) != TR_OK) {
    fprintf(stderr, "  %s: pipeline failed:\n", path);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  } else {
    check_round_trip(m, path);
    check_same_values(orig, m, path);
    st->nrun++;
    for (int i = 0; i < c.nlog; i++) {
      st->nfold += strcmp(c.log[i].pass, "constant-fold") == 0;
      st->nwhile += strcmp(c.log[i].pass, "while-simplify") == 0;
      st->nfuse += strcmp(c.log[i].pass, "fusion") == 0;
    }
  }
  tr_diag_clear(&d);
  tr_bc_ctx_free(&c);
  tr_module_free(m);
  tr_module_free(orig);
}

static void corpus_dir(const char *sub, corpus_stats *st) {
  /* A missing or empty folder fails the test (testutil.c). */
  tr_test_files fl = tr_test_list_hlo(sub);
  for (int fi = 0; fi < fl.n; fi++) {
    const char *path = fl.paths[fi];
  corpus_file(path, st);
  }
  tr_test_files_free(&fl);
}

TR_TEST(comp_passes_corpus) {
  corpus_stats st = {0};
  corpus_dir("hlo", &st);
  corpus_dir("eval", &st);
  corpus_dir("../examples", &st);
  if (getenv("TR_TEST_VERBOSE"))
    fprintf(stderr, "  corpus: %d modules; %d folds, %d loop rewrites, %d fusions\n", st.nrun, st.nfold,
            st.nwhile, st.nfuse);
  CHECK(st.nrun >= 30);
  CHECK(st.nfuse > 0);
}

/* ---- random modules ---- */

typedef struct {
  uint64_t s;
  tr_buf b;
} gen;

static uint64_t rnd(gen *g) {
  g->s ^= g->s << 13;
  g->s ^= g->s >> 7;
  g->s ^= g->s << 17;
  return g->s;
}

static int pick(gen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }

/* A counted loop with a random type, start, step, bound and direction,
 * often near the type's edges; the bound a constant, or carried in the
 * state unchanged (copy, which the simplifier removes), or stepped along
 * with the counter (not a bound at all). */
static void random_loop(gen *g) {
  static const char *types[] = {"s8", "u8", "s32", "u32", "s64", "s4", "u4"};
  static const char *dirs[] = {"LT", "LE", "GT", "GE", "NE", "EQ"};
  static const int64_t smallv[] = {0, 1, 2, 3, 5, 7, 8, -1, -2, -3, -8, 120, 125, 127, -128, -126, 250, 255, 13, 15};
  const char *t = types[pick(g, TR_NELEMS(types))];
  int64_t init = smallv[pick(g, TR_NELEMS(smallv))], bound = smallv[pick(g, TR_NELEMS(smallv))];
  int64_t step = smallv[pick(g, 8)] * (pick(g, 2) ? 1 : -1);
  if (pick(g, 4) == 0) step = smallv[pick(g, TR_NELEMS(smallv))];
  /* Constants must be in range for the type: wrap them there. */
  int bits = t[1] == '4' ? 4 : t[1] == '8' ? 8 : t[1] == '3' ? 32 : 64;
  bool sgn = t[0] == 's';
  int64_t *vals[3] = {&init, &bound, &step};
  for (int i = 0; i < 3; i++) {
    if (bits == 64) {
      if (!sgn && *vals[i] < 0) *vals[i] = -*vals[i];
      continue;
    }
    uint64_t mask = ((uint64_t)1 << bits) - 1, u = (uint64_t)*vals[i] & mask;
    if (sgn && (u >> (bits - 1))) *vals[i] = (int64_t)(u | ~mask);
    else *vals[i] = (int64_t)u;
  }
  const char *opname = pick(g, 3) == 0 ? "subtract" : "add";
  bool left = pick(g, 4) == 0;
  const char *dir = dirs[pick(g, TR_NELEMS(dirs))];
  int carry = pick(g, 3); /* 0: constant bound; 1: carried, unchanged; 2: carried, stepped too */
  if (carry) {
    /* state (i, n, v): the limit n travels with the loop. */
    g->b.n = 0;
    tr_buf_printf(&g->b,
                  HEAD "cond {\n s = (%s[], %s[], f32[3]) parameter(0)\n i = %s[] get-tuple-element(s), index=0\n"
                  " n = %s[] get-tuple-element(s), index=1\n ROOT c = pred[] compare(%s), direction=%s\n}\n"
                  "body {\n s = (%s[], %s[], f32[3]) parameter(0)\n i = %s[] get-tuple-element(s), index=0\n"
                  " n = %s[] get-tuple-element(s), index=1\n v = f32[3] get-tuple-element(s), index=2\n"
                  " k = %s[] constant(%lld)\n j = %s[] %s(i, k)\n m = %s[] %s\n x = f32[3] multiply(v, v)\n"
                  " ROOT o = (%s[], %s[], f32[3]) tuple(j, m, x)\n}\n"
                  "ENTRY e {\n p = f32[3] parameter(0)\n z = %s[] constant(%lld)\n l = %s[] constant(%lld)\n"
                  " t = (%s[], %s[], f32[3]) tuple(z, l, p)\n w = (%s[], %s[], f32[3]) while(t), condition=cond, body=body\n"
                  " ROOT g = f32[3] get-tuple-element(w), index=2\n}\n",
                  t, t, t, t, left ? "n, i" : "i, n", dir, t, t, t, t, t, (long long)step, t, opname, t,
                  carry == 1 ? "copy(n)" : "add(n, k)", t, t, t, (long long)init, t, (long long)bound, t, t, t, t);
    return;
  }
  tr_buf up = {0}, cmp = {0}, ini = {0};
  tr_buf_printf(&up, " k = %s[] constant(%lld)\n j = %s[] %s(i, k)", t, (long long)step, t, opname);
  tr_buf_printf(&cmp, " n = %s[] constant(%lld)\n ROOT c = pred[] compare(%s), direction=%s", t,
                (long long)bound, left ? "n, i" : "i, n", dir);
  tr_buf_printf(&ini, "%lld", (long long)init);
  loop_text(&g->b, t, tr_buf_str(&ini), tr_buf_str(&up), tr_buf_str(&cmp));
  tr_buf_free(&up);
  tr_buf_free(&cmp);
  tr_buf_free(&ini);
}

/* A loop with a third state element d that is dead or live at random:
 * read after the loop, read by v's update, or by the condition; the
 * counter starts at a parameter or a constant. */
static void random_dead_state(gen *g) {
  int use = pick(g, 4); /* 0: dead, 1: read after, 2: feeds v, 3: in the condition */
  bool param = pick(g, 2);
  g->b.n = 0;
  tr_buf_printf(&g->b,
                HEAD "cond {\n s = (s8[], f32[3], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
                " n = s8[] constant(%d)\n c1 = pred[] compare(i, n), direction=LT\n%s}\n"
                "body {\n s = (s8[], f32[3], f32[3]) parameter(0)\n i = s8[] get-tuple-element(s), index=0\n"
                " v = f32[3] get-tuple-element(s), index=1\n d = f32[3] get-tuple-element(s), index=2\n"
                " k = s8[] constant(1)\n j = s8[] add(i, k)\n x = f32[3] multiply(v, v)\n y = f32[3] add(x, %s)\n"
                " e = f32[3] add(d, v)\n ROOT o = (s8[], f32[3], f32[3]) tuple(j, y, e)\n}\n"
                "ENTRY e {\n p = f32[3] parameter(0)\n q = s8[] parameter(1)\n z = s8[] constant(%d)\n"
                " t = (s8[], f32[3], f32[3]) tuple(%s, p, p)\n w = (s8[], f32[3], f32[3]) while(t), condition=cond, body=body\n"
                " ROOT g = f32[3] get-tuple-element(w), index=%d\n}\n",
                pick(g, 12) - 2,
                use == 3 ? " d = f32[3] get-tuple-element(s), index=2\n d0 = f32[1] slice(d), slice={[0:1]}\n"
                           " r = f32[] reshape(d0)\n h = f32[] constant(1e30)\n c2 = pred[] compare(r, h), direction=LT\n"
                           " ROOT c = pred[] and(c1, c2)\n"
                         : " ROOT c = pred[] and(c1, c1)\n",
                use == 2 ? "d" : "v", pick(g, 8) - 2, param ? "q" : "z", use == 1 ? 2 : 1);
}

/* A random graph of elementwise ops, broadcasts, slices, reshapes,
 * transposes, constants and reductions over two f32[4,6] inputs. */
static void random_graph(gen *g) {
  g->b.n = 0;
  tr_buf_puts(&g->b, HEAD ADD_F32 "ENTRY e {\n p = f32[4,6] parameter(0)\n q = f32[4,6] parameter(1)\n"
                     " s = f32[] parameter(2)\n");
  const char *names[40] = {"p", "q"};
  char buf[40][16];
  int nv = 2;
  int nins = 4 + pick(g, 12);
  for (int i = 0; i < nins; i++) {
    snprintf(buf[i], sizeof buf[i], "v%d", i);
    const char *a = names[pick(g, nv)], *b = names[pick(g, nv)];
    switch (pick(g, 10)) {
    case 0: tr_buf_printf(&g->b, " %s = f32[4,6] add(%s, %s)\n", buf[i], a, b); break;
    case 1: tr_buf_printf(&g->b, " %s = f32[4,6] multiply(%s, %s)\n", buf[i], a, b); break;
    case 2: tr_buf_printf(&g->b, " %s = f32[4,6] exponential(%s)\n", buf[i], a); break;
    case 3: tr_buf_printf(&g->b, " %s = f32[4,6] broadcast(s), dimensions={}\n", buf[i]); break;
    case 4:
      tr_buf_printf(&g->b, " %s.t = f32[6,4] transpose(%s), dimensions={1,0}\n %s = f32[4,6] reshape(%s.t)\n",
                    buf[i], a, buf[i], buf[i]);
      break;
    case 5:
      tr_buf_printf(&g->b, " %s.c = f32[4,6] constant({...})\n %s = f32[4,6] subtract(%s, %s.c)\n", buf[i], buf[i], a,
                    buf[i]);
      break;
    case 6:
      tr_buf_printf(&g->b, " %s.s = f32[2,6] slice(%s), slice={[1:3], [0:6]}\n %s = f32[4,6] concatenate(%s.s, %s.s), dimensions={0}\n",
                    buf[i], a, buf[i], buf[i], buf[i]);
      break;
    case 7:
      tr_buf_printf(&g->b, " %s.z = f32[] constant(0)\n %s.r = f32[4] reduce(%s, %s.z), dimensions={1}, to_apply=add_f32\n"
                    " %s = f32[4,6] broadcast(%s.r), dimensions={0}\n", buf[i], buf[i], a, buf[i], buf[i], buf[i]);
      break;
    case 8: tr_buf_printf(&g->b, " %s = f32[4,6] maximum(%s, %s)\n", buf[i], a, b); break;
    default: tr_buf_printf(&g->b, " %s = f32[4,6] negate(%s)\n", buf[i], a); break;
    }
    names[nv++] = buf[i];
  }
  /* Two or three outputs, so siblings have a chance. */
  int nout = 1 + pick(g, 3);
  tr_buf_puts(&g->b, " ROOT r = (");
  for (int i = 0; i < nout; i++) tr_buf_printf(&g->b, "%sf32[4,6]", i ? ", " : "");
  tr_buf_puts(&g->b, ") tuple(");
  for (int i = 0; i < nout; i++) tr_buf_printf(&g->b, "%s%s", i ? ", " : "", names[nv - 1 - pick(g, nv > 3 ? 3 : nv)]);
  tr_buf_puts(&g->b, ")\n}\n");
}

TR_TEST(comp_passes_random) {
  gen g = {.s = 0x2545f4914f6cdd1dull};
  int nfired = 0, nunroll = 0, ndead = 0;
  for (int i = 0; i < 1800 && tr_test_failed <= 3; i++) {
    if (i % 3 == 0) random_loop(&g);
    else if (i % 3 == 1) random_dead_state(&g);
    else random_graph(&g);
    const char *text = tr_buf_str(&g.b);
    tr_diag d = {0};
    tr_parse_opts popts = {.fill_elided = true};
    tr_module *orig = tr_parse("rnd.hlo", text, strlen(text), &popts, &d);
    if (!orig || tr_verify(orig, &d) != TR_OK) {
      fprintf(stderr, "  random module %d is invalid (a generator bug):\n%s", i, text);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
      tr_diag_clear(&d);
      if (orig) tr_module_free(orig);
      break;
    }
    int before = tr_test_failed, n0 = 0;
    for (int round = 0; round < 2; round++) {
      tr_module *m = tr_module_clone(orig);
      tr_bc_ctx c;
      tr_bc_ctx_init(&c);
      /* Round 2 stops at a random prefix of round 1's rewrites. */
      if (round == 1) c.fuel = pick(&g, n0 + 1);
      if (tr_bc_pipeline_run(&c, m, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        tr_test_failed++;
      } else {
        check_round_trip(m, "random module");
        check_same_values(orig, m, "random module");
      }
      if (tr_test_failed != before) {
        tr_buf out = {0};
        tr_print_module(&out, m);
        fprintf(stderr, "  random module %d (fuel %lld):\n%s  optimized:\n%s  rewrites:", i,
                (long long)(round ? c.nlog : -1), text, tr_buf_str(&out));
        for (int k = 0; k < c.nlog; k++) fprintf(stderr, " %s", c.log[k].rule);
        fprintf(stderr, "\n");
        tr_buf_free(&out);
      }
      if (round == 0) {
        n0 = c.nlog;
        nfired += c.nlog;
        nunroll += log_count(&c, "while-unroll") + log_count(&c, "while-zero-trip");
        ndead += log_count(&c, "while-remove-dead-state");
      }
      tr_diag_clear(&d);
      tr_bc_ctx_free(&c);
      tr_module_free(m);
      if (tr_test_failed != before) break;
    }
    tr_module_free(orig);
  }
  tr_buf_free(&g.b);
  if (getenv("TR_TEST_VERBOSE"))
    fprintf(stderr, "  random: %d rewrites, %d loops removed, %d loop states pruned\n", nfired, nunroll, ndead);
  CHECK(nfired > 1000);
  CHECK(nunroll > 50);
  CHECK(ndead > 50);
}

/* ---- random modules for the window-folding simplifier rules ---- */

/* slice of an edge- and interior-padded s32[m,2]: random padding, start,
 * stride and count, so slice-of-pad sees aligned and unaligned starts,
 * strides that are and are not multiples of interior + 1, and slices that
 * read padding. */
static void random_slice_of_pad(gen *g) {
  int m = 1 + pick(g, 6), lo = pick(g, 4), hi = pick(g, 4), it = pick(g, 4);
  int n = lo + hi + m + (m - 1) * it;
  int st = 1 + pick(g, 5), s = pick(g, n), cnt = 1 + pick(g, (n - 1 - s) / st + 1);
  g->b.n = 0;
  tr_buf_printf(&g->b, HEAD "ENTRY e {\n x = s32[%d,2] parameter(0)\n z = s32[] constant(7)\n"
                " q = s32[%d,2] pad(x, z), padding=%d_%d_%dx0_0\n"
                " ROOT s = s32[%d,2] slice(q), slice={[%d:%d:%d], [0:2]}\n}\n",
                m, n, lo, hi, it, cnt, s, s + (cnt - 1) * st + 1, st);
}

/* convolution of a slice of s32[2,X,3]: random cuts at both ends, window
 * size, stride, rhs dilation and padding of either sign. Returns false
 * when the window does not fit (nothing generated). */
static bool random_conv_of_slice(gen *g) {
  int X = 3 + pick(g, 8), a = pick(g, 3), b = pick(g, 3);
  if (a + b >= X) a = b = 0;
  int L = X - a - b, w = 1 + pick(g, 3), st = 1 + pick(g, 2), rd = 1 + pick(g, 2);
  int plo = pick(g, 4) - 1, phi = pick(g, 4) - 1;
  int span = (w - 1) * rd + 1, padded = L + plo + phi;
  if (padded < span) return false;
  g->b.n = 0;
  tr_buf_printf(&g->b, HEAD "ENTRY e {\n x = s32[2,%d,3] parameter(0)\n k = s32[%d,3,2] parameter(1)\n"
                " s = s32[2,%d,3] slice(x), slice={[0:2], [%d:%d], [0:3]}\n"
                " ROOT c = s32[2,%d,2] convolution(s, k), window={size=%d stride=%d pad=%d_%d rhs_dilate=%d}, "
                "dim_labels=b0f_0io->b0f\n}\n",
                X, w, L, a, X - b, (padded - span) / st + 1, w, st, plo, phi, rd);
  return true;
}

/* scatter-add of one row window into s32[R,C] (or f32, where -0.0 must
 * survive) at constant indices in and out of bounds, with the combiner's
 * operands either way round. */
static void random_scatter_add(gen *g) {
  int R = 1 + pick(g, 5), C = 1 + pick(g, 4), wc = 1 + pick(g, C);
  int i0 = pick(g, R + 4) - 2, i1 = pick(g, C + 4) - 2;
  const char *t = pick(g, 2) ? "s32" : "f32";
  g->b.n = 0;
  tr_buf_printf(&g->b, HEAD "add {\n a = %s[] parameter(0)\n b = %s[] parameter(1)\n ROOT s = %s[] add(%s)\n}\n"
                "ENTRY e {\n x = %s[%d,%d] parameter(0)\n u = %s[%d] parameter(1)\n i = s32[2] constant({%d, %d})\n"
                " ROOT s = %s[%d,%d] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={0}, "
                "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add\n}\n",
                t, t, t, pick(g, 2) ? "a, b" : "b, a", t, R, C, t, wc, i0, i1, t, R, C);
}

/* transpose of a reshape of s32[a,b,c] (sizes 1 to 3) that drops its
 * size-1 dims and inserts new ones at random places, by a random
 * permutation. */
static void random_transpose_of_reshape(gen *g) {
  int64_t xd[3], rd[8], p[8];
  int nr = 0;
  for (int i = 0; i < 3; i++) xd[i] = 1 + pick(g, 3);
  for (int i = 0; i < 3; i++) {
    while (pick(g, 3) == 0 && nr < 5) rd[nr++] = 1;
    if (xd[i] != 1) rd[nr++] = xd[i];
  }
  while (pick(g, 3) == 0 && nr < 6) rd[nr++] = 1;
  if (nr == 0) rd[nr++] = 1;
  for (int i = 0; i < nr; i++) p[i] = i;
  for (int i = nr - 1; i > 0; i--) {
    int j = pick(g, i + 1);
    int64_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
  g->b.n = 0;
  tr_buf_printf(&g->b, HEAD "ENTRY e {\n x = s32[%lld,%lld,%lld] parameter(0)\n r = s32[", (long long)xd[0],
                (long long)xd[1], (long long)xd[2]);
  for (int i = 0; i < nr; i++) tr_buf_printf(&g->b, "%s%lld", i ? "," : "", (long long)rd[i]);
  tr_buf_puts(&g->b, "] reshape(x)\n ROOT t = s32[");
  for (int i = 0; i < nr; i++) tr_buf_printf(&g->b, "%s%lld", i ? "," : "", (long long)rd[p[i]]);
  tr_buf_puts(&g->b, "] transpose(r), dimensions={");
  for (int i = 0; i < nr; i++) tr_buf_printf(&g->b, "%s%lld", i ? "," : "", (long long)p[i]);
  tr_buf_puts(&g->b, "}\n}\n");
}

/* Each module, optimized, computes what the original computes, and each
 * of the four rules fires on a fair share of them. */
TR_TEST(comp_passes_random_window_folds) {
  gen g = {.s = 0x9e3779b97f4a7c15ull};
  int fired[4] = {0};
  static const char *const rules[4] = {"slice-of-pad", "conv-input-slice", "scatter-const-add-to-pad",
                                       "transpose-of-degenerate-reshape"};
  for (int i = 0; i < 400 && tr_test_failed <= 3; i++) {
    int k = i % 4;
    if (k == 0) random_slice_of_pad(&g);
    else if (k == 1) { if (!random_conv_of_slice(&g)) continue; }
    else if (k == 2) random_scatter_add(&g);
    else random_transpose_of_reshape(&g);
    const char *text = tr_buf_str(&g.b);
    tr_module *orig = parse_text(text, "random window module");
    if (!orig) break;
    tr_module *m = tr_module_clone(orig);
    tr_bc_ctx c;
    tr_bc_ctx_init(&c);
    tr_diag d = {0};
    int before = tr_test_failed;
    if (tr_bc_pipeline_run(&c, m, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      tr_test_failed++;
    } else {
      check_same_values(orig, m, "random window module");
    }
    if (tr_test_failed != before) fprintf(stderr, "  random window module %d:\n%s", i, text);
    fired[k] += log_count(&c, rules[k]) > 0;
    tr_diag_clear(&d);
    tr_bc_ctx_free(&c);
    tr_module_free(m);
    tr_module_free(orig);
  }
  tr_buf_free(&g.b);
  if (getenv("TR_TEST_VERBOSE"))
    fprintf(stderr, "  fired: slice-of-pad %d, conv-input-slice %d, scatter-const-add-to-pad %d, "
            "transpose-of-degenerate-reshape %d\n", fired[0], fired[1], fired[2], fired[3]);
  CHECK(fired[0] >= 10);
  CHECK(fired[1] >= 10);
  CHECK(fired[2] >= 50);
  CHECK(fired[3] >= 10);
}
