/* test_comp.c - the built-in compiler's passes: for every simplifier rule a
 * hand-written module where it fires (checked on the printed result, in
 * the rewrite log, by the verifier, and - where the reference interpreter
 * runs the ops - by evaluating before and after on fixed inputs, bit for
 * bit up to NaN payloads); that disabling the rule stops it; modules where
 * a tempting but inexact rule must NOT fire; fuel, dump-after, DCE, CSE. */
#include "../../src/comp/pipeline.h"
#include "../../src/eval/eval.h"
#include "test.h"
#include "testutil.h"

#include <dirent.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>

/* ---- harness ---- */

#define HEAD "HloModule t\n"
#define ADD_F32 \
  "add_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
#define ADD_S32 \
  "add_s32 {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n"
#define MAX_F32 \
  "max_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n"
#define ASSIGN_F32 \
  "assign_f32 {\n a = f32[] parameter(0)\n ROOT b = f32[] parameter(1)\n}\n"
#define ENTRY(body) "ENTRY e {\n" body "}\n"

static tr_module *parse_ok(const char *text, const char *what) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
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




static int nsemantic_skipped;

/* Evaluates before and after on four input sets and compares. Skipped
 * (counted) when the reference cannot run the original. */
static void check_same_values(const tr_module *before, const tr_module *after, const char *what) {
  for (int seed = 0; seed < 4; seed++) {
    tr_tensor *args[16];
    int nargs = 0;
    bool ok = true;
    const tr_comp *e = before->entry;
    for (int i = 0; i < e->nparams && ok; i++) ok = tr_test_add_inputs(e->params[i]->shape, args, &nargs, 16, seed);
    tr_tensor **o1 = NULL, **o2 = NULL;
    int n1 = 0, n2 = 0;
    tr_diag d = {0};
    if (ok && tr_eval(before, args, nargs, &o1, &n1, &d) != TR_OK) {
      if (getenv("TR_TEST_VERBOSE")) {
        fprintf(stderr, "  %s: semantic check skipped:\n", what);
        tr_diag_print(&d, stderr);
      }
      nsemantic_skipped++;
      ok = false;
    }
    tr_diag_clear(&d);
    if (ok && tr_eval(after, args, nargs, &o2, &n2, &d) != TR_OK) {
      fprintf(stderr, "  %s: the optimized module does not evaluate:\n", what);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
      ok = false;
    }
    tr_diag_clear(&d);
    if (ok) {
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

static bool log_has(const tr_bc_ctx *c, const char *rule) {
  for (int i = 0; i < c->nlog; i++)
    if (strcmp(c->log[i].rule, rule) == 0) return true;
  return false;
}

/* Compiles a copy of text's module under c: the whole pipeline (rule
 * NULL) or rule's pass alone (tr_test_compile); returns the optimized
 * module (NULL on failure, counted) and its text in out. */
static tr_module *run_passes(const char *text, const char *rule, tr_bc_ctx *c, tr_buf *out,
                             const char *what) {
  tr_module *m = parse_ok(text, what);
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
  if (tr_verify(m, &d) != TR_OK) {
    fprintf(stderr, "  %s: the optimized module does not verify:\n", what);
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  tr_diag_clear(&d);
  tr_print_module(out, m);
  return m;
}

static tr_module *run_pipeline(const char *text, tr_bc_ctx *c, tr_buf *out, const char *what) {
  return run_passes(text, NULL, c, out, what);
}

static tr_module *run_rule_pass(const char *rule, const char *text, tr_bc_ctx *c, tr_buf *out) {
  return run_passes(text, rule, c, out, rule);
}

typedef struct {
  const char *rule;   /* rule under test */
  const char *hlo;    /* module where it fires */
  const char *expect; /* text the optimized module must contain */
} rule_case;

/* Fires: the rule is logged, the result contains expect, verifies, and
 * computes what the original computes. Disabled: the rule is not logged
 * and the result still computes the same. */
static void check_rule_case(const rule_case *rc) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_ok(rc->hlo, rc->rule);
  tr_module *m = run_rule_pass(rc->rule, rc->hlo, &c, &out);
  if (m) {
    if (!log_has(&c, rc->rule)) {
      fprintf(stderr, "  rule %s did not fire; result:\n%s", rc->rule, tr_buf_str(&out));
      tr_test_failed++;
    } else if (!strstr(tr_buf_str(&out), rc->expect)) {
      fprintf(stderr, "  rule %s: result lacks \"%s\":\n%s", rc->rule, rc->expect, tr_buf_str(&out));
      tr_test_failed++;
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
  out.n = 0;
  m = run_rule_pass(rc->rule, rc->hlo, &c, &out);
  if (m) {
    if (log_has(&c, rc->rule)) {
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

/* Must not fire: the tempting rewrite would change values. */
static void check_no_fire(const char *rule, const char *hlo) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_ok(hlo, rule);
  tr_module *m = run_rule_pass(rule, hlo, &c, &out);
  if (m) {
    if (log_has(&c, rule)) {
      fprintf(stderr, "  rule %s fired where it is not exact:\n%s", rule, tr_buf_str(&out));
      tr_test_failed++;
    }
    if (orig) check_same_values(orig, m, rule);
    tr_module_free(m);
  }
  if (orig) tr_module_free(orig);
  tr_bc_ctx_free(&c);
  tr_buf_free(&out);
}

/* ---- one module per rule ---- */

static const rule_case cases[] = {
  {"copy-elim", HEAD ENTRY(" p = f32[2,3] parameter(0)\n c = f32[2,3] copy(p)\n ROOT r = f32[2,3] negate(c)\n"),
   "negate(%p)"},
  /* Rules also rewrite called computations: a while body, a fusion. */
  {"copy-elim",
   HEAD "cond {\n t = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(t), index=0\n"
   " n = s32[] constant(3)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
   "body {\n t = (s32[], f32[3]) parameter(0)\n i = s32[] get-tuple-element(t), index=0\n"
   " v = f32[3] get-tuple-element(t), index=1\n one = s32[] constant(1)\n j = s32[] add(i, one)\n"
   " w = f32[3] copy(v)\n x = f32[3] multiply(w, v)\n ROOT o = (s32[], f32[3]) tuple(j, x)\n}\n"
   ENTRY(" p = f32[3] parameter(0)\n z = s32[] constant(0)\n t = (s32[], f32[3]) tuple(z, p)\n"
         " r = (s32[], f32[3]) while(t), condition=cond, body=body\n ROOT g = f32[3] get-tuple-element(r), index=1\n"),
   "x = f32[3] multiply(%v, %v)"},
  {"mul-one",
   HEAD "fused {\n a = f32[2,3] parameter(0)\n o = f32[] constant(1)\n b = f32[2,3] broadcast(o), dimensions={}\n"
   " ROOT m = f32[2,3] multiply(a, b)\n}\n"
   ENTRY(" p = f32[2,3] parameter(0)\n ROOT f = f32[2,3] fusion(p), kind=kLoop, calls=fused\n"),
   "ROOT %a = f32[2,3] parameter(0)"},
  {"reshape-noop", HEAD ENTRY(" p = f32[2,3] parameter(0)\n c = f32[2,3] reshape(p)\n ROOT r = f32[2,3] negate(c)\n"),
   "negate(%p)"},
  {"reshape-of-reshape",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n a = f32[6] reshape(p)\n b = f32[3,2] reshape(a)\n ROOT r = f32[3,2] negate(b)\n"),
   "f32[3,2] reshape(%p)"},
  {"reshape-of-broadcast-scalar",
   HEAD ENTRY(" p = f32[] parameter(0)\n b = f32[20,3] broadcast(p), dimensions={}\n a = f32[60] reshape(b)\n ROOT r = f32[60] negate(a)\n"),
   "f32[60] broadcast(%p), dimensions={}"},
  {"bitcast-noop", HEAD ENTRY(" p = f32[2,3] parameter(0)\n c = f32[2,3] bitcast(p)\n ROOT r = f32[2,3] negate(c)\n"),
   "negate(%p)"},
  {"transpose-identity",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n t = f32[2,3] transpose(p), dimensions={0,1}\n ROOT r = f32[2,3] negate(t)\n"),
   "negate(%p)"},
  {"transpose-of-transpose",
   HEAD ENTRY(" p = f32[2,3,4] parameter(0)\n t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}\n"
              " t2 = f32[4,2,3] transpose(t1), dimensions={1,2,0}\n ROOT r = f32[4,2,3] negate(t2)\n"),
   "f32[4,2,3] transpose(%p), dimensions={2,0,1}"},
  {"transpose-of-transpose",
   HEAD ENTRY(" p = f32[2,3,4] parameter(0)\n t1 = f32[3,4,2] transpose(p), dimensions={1,2,0}\n"
              " t2 = f32[2,3,4] transpose(t1), dimensions={2,0,1}\n ROOT r = f32[2,3,4] negate(t2)\n"),
   "negate(%p)"},
  {"transpose-of-broadcast-scalar",
   HEAD ENTRY(" s = f32[] parameter(0)\n b = f32[20,3] broadcast(s), dimensions={}\n t = f32[3,20] transpose(b), dimensions={1,0}\n"
              " ROOT r = f32[3,20] negate(t)\n"),
   "f32[3,20] broadcast(%s), dimensions={}"},
  {"transpose-to-reshape",
   HEAD ENTRY(" p = f32[1,3,1,4] parameter(0)\n t = f32[3,1,4,1] transpose(p), dimensions={1,0,3,2}\n ROOT r = f32[3,1,4,1] negate(t)\n"),
   "f32[3,1,4,1] reshape(%p)"},
  /* the larger dims 2, 3, 4 come out as 3, 4, 2 */
  {"transpose-of-degenerate-reshape",
   HEAD ENTRY(" x = f32[2,3,4] parameter(0)\n r = f32[2,1,3,4] reshape(x)\n"
              " t = f32[3,4,1,2] transpose(r), dimensions={2,3,1,0}\n ROOT n = f32[3,4,1,2] negate(t)\n"),
   "f32[3,4,2] transpose(%x), dimensions={1,2,0}"},
  /* size-1 dims of x go first; a dropped one and an added one */
  {"transpose-of-degenerate-reshape",
   HEAD ENTRY(" x = f32[1,2,3,1,4] parameter(0)\n r = f32[2,3,4,1] reshape(x)\n"
              " t = f32[4,1,2,3] transpose(r), dimensions={2,3,0,1}\n ROOT n = f32[4,1,2,3] negate(t)\n"),
   "f32[1,1,4,2,3] transpose(%x), dimensions={0,3,4,1,2}"},
  {"slice-noop", HEAD ENTRY(" p = f32[2,3] parameter(0)\n s = f32[2,3] slice(p), slice={[0:2], [0:3]}\n ROOT r = f32[2,3] negate(s)\n"),
   "negate(%p)"},
  {"slice-of-slice",
   HEAD ENTRY(" p = f32[10,8] parameter(0)\n a = f32[4,4] slice(p), slice={[2:10:2], [1:5]}\n"
              " b = f32[2,2] slice(a), slice={[1:3], [2:4]}\n ROOT r = f32[2,2] negate(b)\n"),
   "slice(%p), slice={[4:7:2], [3:5:1]}"},
  {"slice-of-concat",
   HEAD ENTRY(" a = f32[2,3] parameter(0)\n b = f32[4,3] parameter(1)\n c = f32[6,3] concatenate(a, b), dimensions={0}\n"
              " s = f32[2,3] slice(c), slice={[3:5], [0:3]}\n ROOT r = f32[2,3] negate(s)\n"),
   "slice(%b), slice={[1:3], [0:3]}"},
  {"slice-of-pad",
   HEAD ENTRY(" p = f32[4,3] parameter(0)\n z = f32[] constant(0)\n q = f32[7,5] pad(p, z), padding=2_1x1_1\n"
              " s = f32[2,2] slice(q), slice={[3:6:2], [1:3]}\n ROOT r = f32[2,2] negate(s)\n"),
   "slice(%p), slice={[1:4:2], [0:2:1]}"},
  /* interior padding 1: pad element 1 + 2k is p[k]; stride 4 reads every
   * other one */
  {"slice-of-pad",
   HEAD ENTRY(" p = f32[4] parameter(0)\n z = f32[] constant(0)\n q = f32[9] pad(p, z), padding=1_1_1\n"
              " s = f32[2] slice(q), slice={[1:9:4]}\n ROOT r = f32[2] negate(s)\n"),
   "slice(%p), slice={[0:3:2]}"},
  {"slice-of-broadcast",
   HEAD ENTRY(" p = f32[3] parameter(0)\n b = f32[4,3] broadcast(p), dimensions={1}\n"
              " s = f32[2,3] slice(b), slice={[1:3], [0:3]}\n ROOT r = f32[2,3] negate(s)\n"),
   "f32[2,3] broadcast(%p), dimensions={1}"},
  {"slice-of-broadcast",
   HEAD ENTRY(" p = f32[5] parameter(0)\n b = f32[4,5] broadcast(p), dimensions={1}\n"
              " s = f32[2,2] slice(b), slice={[1:3], [0:4:2]}\n ROOT r = f32[2,2] negate(s)\n"),
   "f32[2] slice(%p), slice={[0:4:2]}"},
  {"reverse-noop", HEAD ENTRY(" p = f32[1,3] parameter(0)\n v = f32[1,3] reverse(p), dimensions={0}\n ROOT r = f32[1,3] negate(v)\n"),
   "negate(%p)"},
  {"reverse-of-reverse",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n v = f32[2,3] reverse(p), dimensions={0,1}\n w = f32[2,3] reverse(v), dimensions={1}\n"
              " ROOT r = f32[2,3] negate(w)\n"),
   "reverse(%p), dimensions={0}"},
  {"broadcast-noop",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n b = f32[2,3] broadcast(p), dimensions={0,1}\n ROOT r = f32[2,3] negate(b)\n"),
   "negate(%p)"},
  {"broadcast-of-broadcast",
   HEAD ENTRY(" p = f32[3] parameter(0)\n b = f32[2,3] broadcast(p), dimensions={1}\n c = f32[4,2,3] broadcast(b), dimensions={1,2}\n"
              " ROOT r = f32[4,2,3] negate(c)\n"),
   "f32[4,2,3] broadcast(%p), dimensions={2}"},
  {"broadcast-of-iota",
   HEAD ENTRY(" i = s32[3] iota(), iota_dimension=0\n b = s32[2,3] broadcast(i), dimensions={1}\n ROOT r = s32[2,3] negate(b)\n"),
   "s32[2,3] iota(), iota_dimension=1"},
  {"broadcast-scalar-const",
   HEAD ENTRY(" p = f32[2,2] parameter(0)\n c = f32[] constant(2.5)\n b = f32[2,2] broadcast(c), dimensions={}\n"
              " ROOT r = f32[2,2] add(p, b)\n"),
   "f32[2,2] constant({ { 2.5, 2.5 }, { 2.5, 2.5 } })"},
  {"concat-single",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n c = f32[2,3] concatenate(p), dimensions={0}\n ROOT r = f32[2,3] negate(c)\n"),
   "negate(%p)"},
  {"concat-empty-operand",
   HEAD ENTRY(" a = f32[2,3] parameter(0)\n e = f32[0,3] parameter(1)\n b = f32[1,3] parameter(2)\n"
              " c = f32[3,3] concatenate(a, e, b), dimensions={0}\n ROOT r = f32[3,3] negate(c)\n"),
   "concatenate(%a, %b), dimensions={0}"},
  {"concat-adjacent-slices",
   HEAD ENTRY(" p = f32[6,3] parameter(0)\n sa = f32[2,3] slice(p), slice={[0:2], [0:3]}\n sb = f32[3,3] slice(p), slice={[2:5], [0:3]}\n"
              " c = f32[5,3] concatenate(sa, sb), dimensions={0}\n ROOT r = f32[5,3] negate(c)\n"),
   "f32[5,3] slice(%p), slice={[0:5], [0:3]}"},
  {"pad-noop",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n z = f32[] constant(0)\n q = f32[2,3] pad(p, z), padding=0_0x0_0\n ROOT r = f32[2,3] negate(q)\n"),
   "negate(%p)"},
  {"pad-interior-trivial",
   HEAD ENTRY(" p = f32[1,3] parameter(0)\n z = f32[] constant(0)\n q = f32[2,3] pad(p, z), padding=1_0_2x0_0\n ROOT r = f32[2,3] negate(q)\n"),
   "pad(%p, %z), padding=1_0x0_0"},
  {"pad-negative-to-slice",
   HEAD ENTRY(" p = f32[5,4] parameter(0)\n z = f32[] constant(7)\n q = f32[6,6] pad(p, z), padding=-1_2x0_-1_1\n ROOT r = f32[6,6] negate(q)\n"),
   "slice={[1:7], [0:6]}"},
  {"pad-negative-to-slice",
   HEAD ENTRY(" p = f32[5,4] parameter(0)\n z = f32[] constant(7)\n q = f32[3,4] pad(p, z), padding=-1_-1x0_0\n ROOT r = f32[3,4] negate(q)\n"),
   "slice(%p), slice={[1:4], [0:4]}"},
  {"dynamic-slice-full",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n"
              " d = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}\n ROOT r = f32[2,3] negate(d)\n"),
   "negate(%p)"},
  {"dynamic-slice-const",
   HEAD ENTRY(" p = f32[8,4] parameter(0)\n i = s32[] constant(7)\n j = s32[] constant(-2)\n"
              " d = f32[3,2] dynamic-slice(p, i, j), dynamic_slice_sizes={3,2}\n ROOT r = f32[3,2] negate(d)\n"),
   "slice(%p), slice={[5:8], [0:2]}"},
  {"dynamic-slice-const",
   HEAD ENTRY(" p = f32[8] parameter(0)\n i = u32[] constant(4000000000)\n"
              " d = f32[3] dynamic-slice(p, i), dynamic_slice_sizes={3}\n ROOT r = f32[3] negate(d)\n"),
   "slice(%p), slice={[5:8]}"},
  {"dynamic-slice-nested",
   HEAD ENTRY(" p = f32[10] parameter(0)\n i = s32[] parameter(1)\n j = s32[] parameter(2)\n"
              " a = f32[6] dynamic-slice(p, i), dynamic_slice_sizes={6}\n b = f32[2] dynamic-slice(a, j), dynamic_slice_sizes={2}\n"
              " ROOT r = f32[2] negate(b)\n"),
   "f32[2] dynamic-slice(%p, "},
  {"dynamic-slice-nested",
   HEAD ENTRY(" p = f32[10,3] parameter(0)\n i = u8[] parameter(1)\n j = s64[] parameter(2)\n k = u8[] constant(1)\n"
              " l = s64[] constant(1)\n a = f32[6,3] dynamic-slice(p, i, k), dynamic_slice_sizes={6,3}\n b = f32[2,2] dynamic-slice(a, j, l), dynamic_slice_sizes={2,2}\n"
              " ROOT r = f32[2,2] negate(b)\n"),
   "f32[2,2] dynamic-slice(%p, "},
  {"dynamic-update-slice-full",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n u = f32[2,3] parameter(1)\n i = s32[] parameter(2)\n"
              " d = f32[2,3] dynamic-update-slice(p, u, i, i)\n ROOT r = f32[2,3] negate(d)\n"),
   "negate(%u)"},
  {"gather-whole-operand",
   HEAD ENTRY(" p = f32[1,4] parameter(0)\n i = s32[2] parameter(1)\n"
              " g = f32[4] gather(p, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,4}\n"
              " ROOT r = f32[4] negate(g)\n"),
   "f32[4] reshape(%p)"},
  {"gather-const-to-slice",
   HEAD ENTRY(" p = f32[5,4] parameter(0)\n i = s32[1,2] constant({ { 9, -1 } })\n"
              " g = f32[1,2,3] gather(p, i), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}\n"
              " ROOT r = f32[1,2,3] negate(g)\n"),
   "slice(%p), slice={[3:5], [0:3]}"},
  {"gather-const-to-slice",
   HEAD ENTRY(" p = f32[5,4] parameter(0)\n i = u8[] constant(2)\n"
              " g = f32[4] gather(p, i), offset_dims={0}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=0, slice_sizes={1,4}\n"
              " ROOT r = f32[4] negate(g)\n"),
   "slice(%p), slice={[2:3], [0:4]}"},
  {"scatter-no-updates",
   HEAD ADD_F32 ENTRY(" p = f32[4] parameter(0)\n i = s32[0,1] parameter(1)\n u = f32[0] parameter(2)\n"
                      " s = f32[4] scatter(p, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32\n"
                      " ROOT r = f32[4] negate(s)\n"),
   "negate(%p)"},
  {"scatter-overwrite-whole",
   HEAD ASSIGN_F32 ENTRY(" p = f32[1,3] parameter(0)\n i = s32[2] constant({0, 0})\n u = f32[3] parameter(1)\n"
                         " s = f32[1,3] scatter(p, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=assign_f32\n"
                         " ROOT r = f32[1,3] negate(s)\n"),
   "f32[1,3] reshape(%u)"},
  {"scatter-const-to-dus",
   HEAD ASSIGN_F32 ENTRY(" p = f32[5,4] parameter(0)\n i = s32[2] constant({3, 1})\n u = f32[2,3] parameter(1)\n"
                         " s = f32[5,4] scatter(p, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=assign_f32\n"
                         " ROOT r = f32[5,4] negate(s)\n"),
   "dynamic-update-slice(%p, %u, "},
  {"scatter-const-to-dus",
   HEAD ASSIGN_F32 ENTRY(" p = f32[5,4] parameter(0)\n i = s32[1,1] constant({ { 3 } })\n u = f32[4,1] parameter(1)\n"
                         " s = f32[5,4] scatter(p, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=assign_f32\n"
                         " ROOT r = f32[5,4] negate(s)\n"),
   "f32[1,4] reshape(%u)"},
  {"scatter-const-to-dus",
   HEAD ASSIGN_F32 ENTRY(" p = f32[5,4] parameter(0)\n i = s32[2] constant({4, 1})\n u = f32[2,3] parameter(1)\n"
                         " s = f32[5,4] scatter(p, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=assign_f32\n"
                         " ROOT r = f32[5,4] negate(s)\n"),
   "ROOT %r = f32[5,4] negate(%p)"},
  {"scatter-const-add-to-pad",
   HEAD ADD_F32 ENTRY(" p = f32[5,4] parameter(0)\n i = s32[2] constant({1, 2})\n u = f32[2,2] parameter(1)\n"
                      " s = f32[5,4] scatter(p, i, u), update_window_dims={0,1}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add_f32\n"
                      " ROOT r = f32[5,4] negate(s)\n"),
   "padding=1_2x2_0"},
  /* an inserted dim, integers, and a window that leaves the operand */
  {"scatter-const-add-to-pad",
   HEAD ADD_S32 ENTRY(" p = s32[4,3] parameter(0)\n i = s32[2] constant({3, 0})\n u = s32[3] parameter(1)\n"
                      " s = s32[4,3] scatter(p, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add_s32\n"
                      " ROOT r = s32[4,3] negate(s)\n"),
   "padding=3_0x0_0"},
  {"scatter-const-add-to-pad",
   HEAD ADD_S32 ENTRY(" p = s32[4,3] parameter(0)\n i = s32[2] constant({4, 0})\n u = s32[3] parameter(1)\n"
                      " s = s32[4,3] scatter(p, i, u), update_window_dims={0}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add_s32\n"
                      " ROOT r = s32[4,3] negate(s)\n"),
   "ROOT %r = s32[4,3] negate(%p)"},
  {"gte-of-tuple",
   HEAD ENTRY(" p = f32[2] parameter(0)\n q = s32[3] parameter(1)\n t = (f32[2], s32[3]) tuple(p, q)\n"
              " g = s32[3] get-tuple-element(t), index=1\n ROOT r = s32[3] negate(g)\n"),
   "negate(%q)"},
  {"tuple-of-gtes",
   HEAD ENTRY(" p = (f32[2], s32[3]) parameter(0)\n a = f32[2] get-tuple-element(p), index=0\n b = s32[3] get-tuple-element(p), index=1\n"
              " t = (f32[2], s32[3]) tuple(a, b)\n ROOT r = (f32[2], s32[3]) copy(t)\n"),
   "ROOT %p ="},
  {"select-const-pred",
   HEAD ENTRY(" p = f32[2,3] parameter(0)\n q = f32[2,3] parameter(1)\n c = pred[] constant(false)\n b = pred[2,3] broadcast(c), dimensions={}\n"
              " s = f32[2,3] select(b, p, q)\n ROOT r = f32[2,3] negate(s)\n"),
   "negate(%q)"},
  {"select-same",
   HEAD ENTRY(" c = pred[2,3] parameter(0)\n p = f32[2,3] parameter(1)\n s = f32[2,3] select(c, p, p)\n ROOT r = f32[2,3] negate(s)\n"),
   "negate(%p)"},
  {"select-not-pred",
   HEAD ENTRY(" c = pred[2,3] parameter(0)\n p = f32[2,3] parameter(1)\n q = f32[2,3] parameter(2)\n n = pred[2,3] not(c)\n"
              " s = f32[2,3] select(n, p, q)\n ROOT r = f32[2,3] negate(s)\n"),
   "select(%c, %q, %p)"},
  {"compare-self",
   HEAD ENTRY(" x = s32[4] parameter(0)\n c = pred[4] compare(x, x), direction=GE\n ROOT r = pred[4] not(c)\n"),
   "pred[4] constant({1, 1, 1, 1})"},
  {"compare-self",
   HEAD ENTRY(" x = f32[4] parameter(0)\n c = pred[4] compare(x, x), direction=NE, type=TOTALORDER\n ROOT r = pred[4] not(c)\n"),
   "pred[4] constant({0, 0, 0, 0})"},
  {"compare-unsigned-zero",
   HEAD ENTRY(" x = u32[4] parameter(0)\n z = u32[] constant(0)\n b = u32[4] broadcast(z), dimensions={}\n"
              " c = pred[4] compare(x, b), direction=LT\n ROOT r = pred[4] not(c)\n"),
   "pred[4] constant({0, 0, 0, 0})"},
  {"convert-noop", HEAD ENTRY(" p = f32[4] parameter(0)\n c = f32[4] convert(p)\n ROOT r = f32[4] negate(c)\n"),
   "negate(%p)"},
  {"convert-roundtrip",
   HEAD ENTRY(" x = s8[4] parameter(0)\n a = s32[4] convert(x)\n b = s8[4] convert(a)\n ROOT r = s8[4] negate(b)\n"),
   "negate(%x)"},
  {"convert-roundtrip",
   HEAD ENTRY(" x = f16[4] parameter(0)\n a = f32[4] convert(x)\n b = f16[4] convert(a)\n ROOT r = f16[4] negate(b)\n"),
   "negate(%x)"},
  {"convert-chain-exact",
   HEAD ENTRY(" x = s8[4] parameter(0)\n a = s32[4] convert(x)\n b = f32[4] convert(a)\n ROOT r = f32[4] negate(b)\n"),
   "f32[4] convert(%x)"},
  {"bitcast-convert-noop",
   HEAD ENTRY(" p = f32[4] parameter(0)\n c = f32[4] bitcast-convert(p)\n ROOT r = f32[4] negate(c)\n"),
   "negate(%p)"},
  {"bitcast-convert-roundtrip",
   HEAD ENTRY(" p = f32[4] parameter(0)\n a = s32[4] bitcast-convert(p)\n b = f32[4] bitcast-convert(a)\n ROOT r = f32[4] negate(b)\n"),
   "negate(%p)"},
  {"reduce-precision-noop",
   HEAD ENTRY(" p = f32[4] parameter(0)\n c = f32[4] reduce-precision(p), exponent_bits=8, mantissa_bits=23\n ROOT r = f32[4] negate(c)\n"),
   "negate(%p)"},
  {"reduce-precision-noop",
   HEAD ENTRY(" p = bf16[4] parameter(0)\n c = bf16[4] reduce-precision(p), exponent_bits=8, mantissa_bits=7\n ROOT r = bf16[4] negate(c)\n"),
   "negate(%p)"},
  {"dot-empty-contraction",
   HEAD ENTRY(" a = f32[2,0] parameter(0)\n b = f32[0,3] parameter(1)\n ROOT d = f32[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
   "f32[2,3] constant({ { 0, 0, 0 }, { 0, 0, 0 } })"},
  {"reduce-of-empty",
   HEAD ADD_F32 ENTRY(" p = f32[0,3] parameter(0)\n z = f32[] constant(-0)\n"
                      " s = f32[3] reduce(p, z), dimensions={0}, to_apply=add_f32\n ROOT r = f32[3] negate(s)\n"),
   "f32[3] constant({-0.0, -0.0, -0.0})"},
  {"dot-transpose-operand",
   HEAD ENTRY(" a = f32[3,2] parameter(0)\n b = f32[3,4] parameter(1)\n t = f32[2,3] transpose(a), dimensions={1,0}\n"
              " ROOT d = f32[2,4] dot(t, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"),
   "dot(%a, %b), lhs_contracting_dims={0}, rhs_contracting_dims={0}"},
  {"dot-transpose-operand",
   HEAD ENTRY(" a = f32[5,2,3] parameter(0)\n b = f32[5,4,3] parameter(1)\n t = f32[5,3,4] transpose(b), dimensions={0,2,1}\n"
              " ROOT d = f32[5,2,4] dot(a, t), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n"),
   "dot(%a, %b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={2}"},
  /* cut 2 at the start (low padding 0) and 1 at the end (high padding
   * -1 already): both become negative padding */
  {"conv-input-slice",
   HEAD ENTRY(" x = f32[1,12,2] parameter(0)\n w = f32[3,2,2] parameter(1)\n"
              " s = f32[1,9,2] slice(x), slice={[0:1], [2:11], [0:2]}\n"
              " ROOT c = f32[1,6,2] convolution(s, w), window={size=3 pad=0_-1}, dim_labels=b0f_0io->b0f\n"),
   "convolution(%x, %w), window={size=3 pad=-2_-2}"},
  {"reduce-no-dims",
   HEAD ADD_F32 ENTRY(" p = f32[4] parameter(0)\n z = f32[] constant(-0)\n s = f32[4] reduce(p, z), dimensions={}, to_apply=add_f32\n"
                      " ROOT r = f32[4] negate(s)\n"),
   "negate(%p)"},
  {"reduce-no-dims",
   HEAD ADD_F32 ENTRY(" p = f32[4] parameter(0)\n z = f32[] constant(0)\n s = f32[4] reduce(p, z), dimensions={}, to_apply=add_f32\n"
                      " ROOT r = f32[4] negate(s)\n"),
   "f32[4] add(%"},
  {"reduce-of-broadcast",
   HEAD MAX_F32 ENTRY(" p = f32[3] parameter(0)\n b = f32[4,3] broadcast(p), dimensions={1}\n m = f32[] constant(-inf)\n"
                      " s = f32[3] reduce(b, m), dimensions={0}, to_apply=max_f32\n ROOT r = f32[3] negate(s)\n"),
   "negate(%p)"},
  {"reduce-of-broadcast",
   HEAD ADD_S32 ENTRY(" p = s32[3] parameter(0)\n b = s32[4,3,5] broadcast(p), dimensions={1}\n z = s32[] constant(9)\n"
                      " s = s32[3] reduce(b, z), dimensions={0,2}, to_apply=add_s32\n ROOT r = s32[3] negate(s)\n"),
   "multiply(%p, "},
  {"reduce-of-reshape",
   HEAD ADD_F32 ENTRY(" p = f32[1,3,1,4] parameter(0)\n a = f32[3,4] reshape(p)\n z = f32[] constant(0)\n"
                      " s = f32[3] reduce(a, z), dimensions={1}, to_apply=add_f32\n ROOT r = f32[3] negate(s)\n"),
   "reduce(%p, %z), dimensions={0,2,3}"},
  {"reduce-window-trivial",
   HEAD MAX_F32 ENTRY(" p = f32[3,4] parameter(0)\n m = f32[] constant(-inf)\n"
                      " w = f32[3,4] reduce-window(p, m), window={size=1x1}, to_apply=max_f32\n ROOT r = f32[3,4] negate(w)\n"),
   "negate(%p)"},
  {"reduce-window-trivial",
   HEAD ADD_F32 ENTRY(" p = f32[3,4] parameter(0)\n m = f32[] constant(1.5)\n"
                      " w = f32[3,4] reduce-window(p, m), window={size=1x1 stride=1x1}, to_apply=add_f32\n ROOT r = f32[3,4] negate(w)\n"),
   "f32[3,4] add(%"},
  {"add-zero",
   HEAD ENTRY(" x = s32[4] parameter(0)\n z = s32[] constant(0)\n b = s32[4] broadcast(z), dimensions={}\n"
              " a = s32[4] add(b, x)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%x)"},
  {"add-zero",
   HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[] constant(-0)\n b = f32[4] broadcast(z), dimensions={}\n"
              " a = f32[4] add(x, b)\n ROOT r = f32[4] negate(a)\n"),
   "negate(%x)"},
  {"sub-zero",
   HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[4] constant({0, 0, 0, 0})\n a = f32[4] subtract(x, z)\n ROOT r = f32[4] negate(a)\n"),
   "negate(%x)"},
  {"sub-self-int",
   HEAD ENTRY(" x = s32[4] parameter(0)\n a = s32[4] subtract(x, x)\n ROOT r = s32[4] negate(a)\n"),
   "s32[4] constant({0, 0, 0, 0})"},
  {"mul-one",
   HEAD ENTRY(" x = f32[4] parameter(0)\n o = f32[] constant(1)\n b = f32[4] broadcast(o), dimensions={}\n"
              " a = f32[4] multiply(b, x)\n ROOT r = f32[4] negate(a)\n"),
   "negate(%x)"},
  {"mul-zero-int",
   HEAD ENTRY(" x = s32[4] parameter(0)\n z = s32[4] constant({0, 0, 0, 0})\n a = s32[4] multiply(x, z)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%z)"},
  {"div-one",
   HEAD ENTRY(" x = s32[4] parameter(0)\n o = s32[4] constant({1, 1, 1, 1})\n a = s32[4] divide(x, o)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%x)"},
  {"and-ones",
   HEAD ENTRY(" x = u8[4] parameter(0)\n o = u8[4] constant({255, 255, 255, 255})\n a = u8[4] and(o, x)\n ROOT r = u8[4] not(a)\n"),
   "not(%x)"},
  {"and-zero",
   HEAD ENTRY(" x = pred[4] parameter(0)\n o = pred[4] constant({0, 0, 0, 0})\n a = pred[4] and(x, o)\n ROOT r = pred[4] not(a)\n"),
   "not(%o)"},
  {"or-zero",
   HEAD ENTRY(" x = s16[4] parameter(0)\n o = s16[4] constant({0, 0, 0, 0})\n a = s16[4] or(x, o)\n ROOT r = s16[4] not(a)\n"),
   "not(%x)"},
  {"or-ones",
   HEAD ENTRY(" x = s16[4] parameter(0)\n o = s16[4] constant({-1, -1, -1, -1})\n a = s16[4] or(x, o)\n ROOT r = s16[4] not(a)\n"),
   "not(%o)"},
  {"xor-zero",
   HEAD ENTRY(" x = s32[4] parameter(0)\n o = s32[4] constant({0, 0, 0, 0})\n a = s32[4] xor(o, x)\n ROOT r = s32[4] not(a)\n"),
   "not(%x)"},
  {"xor-self",
   HEAD ENTRY(" x = s32[4] parameter(0)\n a = s32[4] xor(x, x)\n ROOT r = s32[4] negate(a)\n"),
   "s32[4] constant({0, 0, 0, 0})"},
  {"idempotent-self",
   HEAD ENTRY(" x = f32[4] parameter(0)\n a = f32[4] maximum(x, x)\n ROOT r = f32[4] negate(a)\n"), "negate(%x)"},
  {"max-lowest",
   HEAD ENTRY(" x = f32[4] parameter(0)\n m = f32[] constant(-inf)\n b = f32[4] broadcast(m), dimensions={}\n"
              " a = f32[4] maximum(b, x)\n ROOT r = f32[4] negate(a)\n"),
   "negate(%x)"},
  {"min-highest",
   HEAD ENTRY(" x = s32[4] parameter(0)\n m = s32[] constant(2147483647)\n b = s32[4] broadcast(m), dimensions={}\n"
              " a = s32[4] minimum(x, b)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%x)"},
  {"shift-zero",
   HEAD ENTRY(" x = s32[4] parameter(0)\n z = s32[4] constant({0, 0, 0, 0})\n a = s32[4] shift-right-arithmetic(x, z)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%x)"},
  {"abs-of-abs",
   HEAD ENTRY(" x = f32[4] parameter(0)\n a = f32[4] abs(x)\n b = f32[4] abs(a)\n ROOT r = f32[4] negate(b)\n"), "negate(%a)"},
  {"negate-of-negate",
   HEAD ENTRY(" x = s32[4] parameter(0)\n a = s32[4] negate(x)\n b = s32[4] negate(a)\n ROOT r = s32[4] abs(b)\n"), "abs(%x)"},
  {"not-of-not",
   HEAD ENTRY(" x = pred[4] parameter(0)\n a = pred[4] not(x)\n b = pred[4] not(a)\n ROOT r = pred[4] and(b, b)\n"), "ROOT %x"},
  {"sign-of-sign",
   HEAD ENTRY(" x = f32[4] parameter(0)\n a = f32[4] sign(x)\n b = f32[4] sign(a)\n ROOT r = f32[4] negate(b)\n"), "negate(%a)"},
  {"rounding-idempotent",
   HEAD ENTRY(" x = f32[4] parameter(0)\n a = f32[4] ceil(x)\n b = f32[4] round-nearest-even(a)\n ROOT r = f32[4] negate(b)\n"),
   "negate(%a)"},
  {"pow-zero",
   HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[] constant(0)\n b = f32[4] broadcast(z), dimensions={}\n"
              " a = f32[4] power(x, b)\n ROOT r = f32[4] negate(a)\n"),
   "f32[4] constant({1, 1, 1, 1})"},
  {"pow-one",
   HEAD ENTRY(" x = s32[4] parameter(0)\n o = s32[4] constant({1, 1, 1, 1})\n a = s32[4] power(x, o)\n ROOT r = s32[4] negate(a)\n"),
   "negate(%x)"},
  {"pow-two",
   HEAD ENTRY(" x = f32[4] parameter(0)\n o = f32[4] constant({2, 2, 2, 2})\n a = f32[4] power(x, o)\n ROOT r = f32[4] negate(a)\n"),
   "multiply(%x, %x)"},
  {"pow-three-int",
   HEAD ENTRY(" x = s32[4] parameter(0)\n o = s32[4] constant({3, 3, 3, 3})\n a = s32[4] power(x, o)\n ROOT r = s32[4] negate(a)\n"),
   "multiply(%x, %x)"},
};

TR_TEST(comp_rules_fire_and_disable) {
  for (int i = 0; i < TR_NELEMS(cases); i++) check_rule_case(&cases[i]);
}

/* Every rule of the simplifier has at least one case above. */
TR_TEST(comp_rules_all_tested) {
  const char *const *names = tr_bc_rule_names();
  int n = 0;
  for (int i = 0; names[i]; i++) {
    /* CSE's and DCE's rules: comp_cse and comp_dce; the other passes':
     * test_comp_passes.c. */
    if (strcmp(tr_bc_rule_pass(names[i]), "simplify") != 0) continue;
    n++;
    bool found = false;
    for (int k = 0; k < TR_NELEMS(cases) && !found; k++) found = strcmp(cases[k].rule, names[i]) == 0;
    if (!found) {
      fprintf(stderr, "  rule %s has no test case\n", names[i]);
      tr_test_failed++;
    }
  }
  CHECK(n >= 40); /* at least 40 simplifier rules */
  CHECK(tr_bc_rule_pass("common-subexpression") && !strcmp(tr_bc_rule_pass("common-subexpression"), "cse"));
  CHECK(tr_bc_rule_pass("dead-instruction") && !strcmp(tr_bc_rule_pass("dead-instruction"), "dce"));
  CHECK(tr_bc_rule_pass("no-such-rule") == NULL);
}

/* ---- rewrites that look right but are not exact ---- */

TR_TEST(comp_rules_inexact_do_not_fire) {
  /* positive low padding after a cut: its skipped taps would land on the
   * cut elements */
  check_no_fire("conv-input-slice",
                HEAD ENTRY(" x = f32[1,12,2] parameter(0)\n w = f32[3,2,2] parameter(1)\n"
                           " s = f32[1,10,2] slice(x), slice={[0:1], [2:12], [0:2]}\n"
                           " ROOT c = f32[1,10,2] convolution(s, w), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n"));
  /* stride 3 over interior padding 1 reads padding at every other step */
  check_no_fire("slice-of-pad",
                HEAD ENTRY(" p = f32[4] parameter(0)\n z = f32[] constant(0)\n q = f32[7] pad(p, z), padding=0_0_1\n"
                           " ROOT s = f32[3] slice(q), slice={[0:7:3]}\n"));
  check_no_fire("add-zero",
                HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[] constant(0)\n b = f32[4] broadcast(z), dimensions={}\n"
                           " ROOT a = f32[4] add(x, b)\n"));
  check_no_fire("sub-zero",
                HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[] constant(-0)\n b = f32[4] broadcast(z), dimensions={}\n"
                           " ROOT a = f32[4] subtract(x, b)\n"));
  check_no_fire("compare-self",
                HEAD ENTRY(" x = f32[4] parameter(0)\n ROOT c = pred[4] compare(x, x), direction=EQ\n"));
  check_no_fire("mul-zero-int",
                HEAD ENTRY(" x = f32[4] parameter(0)\n z = f32[4] constant({0, 0, 0, 0})\n ROOT a = f32[4] multiply(x, z)\n"));
  check_no_fire("sub-self-int", HEAD ENTRY(" x = f32[4] parameter(0)\n ROOT a = f32[4] subtract(x, x)\n"));
  check_no_fire("pow-two",
                HEAD ENTRY(" x = f64[4] parameter(0)\n o = f64[4] constant({2, 2, 2, 2})\n ROOT a = f64[4] power(x, o)\n"));
  check_no_fire("pow-three-int",
                HEAD ENTRY(" x = f32[4] parameter(0)\n o = f32[4] constant({3, 3, 3, 3})\n ROOT a = f32[4] power(x, o)\n"));
  check_no_fire("reduce-precision-noop",
                HEAD ENTRY(" p = f16[4] parameter(0)\n ROOT c = f16[4] reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"));
  check_no_fire("convert-chain-exact",
                HEAD ENTRY(" x = s16[4] parameter(0)\n a = f32[4] convert(x)\n ROOT b = s8[4] convert(a)\n"));
  check_no_fire("convert-roundtrip",
                HEAD ENTRY(" x = s32[4] parameter(0)\n a = f32[4] convert(x)\n ROOT b = s32[4] convert(a)\n"));
  check_no_fire("dot-transpose-operand",
                HEAD ENTRY(" a = f32[2,5,3] parameter(0)\n b = f32[3,4] parameter(1)\n t = f32[5,2,3] transpose(a), dimensions={1,0,2}\n"
                           " ROOT d = f32[5,2,4] dot(t, b), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n"));
  check_no_fire("reduce-of-broadcast",
                HEAD ADD_F32 ENTRY(" p = f32[3] parameter(0)\n b = f32[4,3] broadcast(p), dimensions={1}\n z = f32[] constant(-0)\n"
                                   " ROOT s = f32[3] reduce(b, z), dimensions={0}, to_apply=add_f32\n"));
  check_no_fire("reduce-of-broadcast",
                HEAD MAX_F32 ENTRY(" p = f32[3] parameter(0)\n b = f32[0,3] broadcast(p), dimensions={1}\n z = f32[] constant(5)\n"
                                   " ROOT s = f32[3] reduce(b, z), dimensions={0}, to_apply=max_f32\n"));
  check_no_fire("transpose-to-reshape",
                HEAD ENTRY(" p = f32[2,1,3] parameter(0)\n ROOT t = f32[3,1,2] transpose(p), dimensions={2,1,0}\n"));
  check_no_fire("slice-noop", HEAD ENTRY(" p = f32[4] parameter(0)\n ROOT s = f32[2] slice(p), slice={[0:4:2]}\n"));
}

/* The semantic checks ran for most cases (the reference implements the
 * ops); this keeps a silent skip of everything from passing unnoticed. */
TR_TEST(comp_rules_semantics_ran) {
  nsemantic_skipped = 0;
  for (int i = 0; i < TR_NELEMS(cases); i++) {
    tr_module *m = parse_ok(cases[i].hlo, cases[i].rule);
    if (!m) continue;
    check_same_values(m, m, cases[i].rule);
    tr_module_free(m);
  }
  CHECK(nsemantic_skipped * 4 < TR_NELEMS(cases));
}

/* ---- the pipeline ---- */

static const char FUEL_MOD[] = HEAD ENTRY(
    " p = f32[2,3] parameter(0)\n a = f32[2,3] copy(p)\n b = f32[2,3] negate(a)\n c = f32[2,3] negate(b)\n"
    " d = f32[2,3] transpose(c), dimensions={0,1}\n ROOT r = f32[2,3] abs(d)\n");

TR_TEST(comp_fuel_counts_applications) {
  int64_t total = -1;
  for (int64_t fuel = 0; fuel <= 8; fuel++) {
    tr_bc_ctx c;
    tr_bc_ctx_init(&c);
    c.fuel = fuel;
    tr_buf out = {0};
    tr_module *orig = parse_ok(FUEL_MOD, "fuel");
    tr_module *m = run_pipeline(FUEL_MOD, &c, &out, "fuel");
    if (m && orig) {
      /* Each prefix of the rewrites is itself a correct program. */
      check_same_values(orig, m, "fuel prefix");
      if (fuel < 3) {
        CHECK_EQ_INT(c.napplied, fuel);
        CHECK_EQ_INT(c.nlog, fuel);
        CHECK_EQ_INT(c.fuel, 0);
      }
      if (fuel == 8) total = c.napplied;
    }
    if (m) tr_module_free(m);
    if (orig) tr_module_free(orig);
    tr_buf_free(&out);
    tr_bc_ctx_free(&c);
  }
  /* Unlimited fuel applies the same number as ample fuel. */
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *m = run_pipeline(FUEL_MOD, &c, &out, "fuel");
  CHECK(total > 3 && total < 8);
  CHECK_EQ_INT(c.napplied, total);
  CHECK_CONTAINS(tr_buf_str(&out), "ROOT %r = f32[2,3] abs(%p)");
  CHECK_EQ_INT(c.fuel, -1);
  /* The log names pass, rule and instruction. */
  CHECK(c.nlog > 0 && strcmp(c.log[0].pass, "simplify") == 0);
  CHECK(c.nlog > 0 && strcmp(c.log[0].rule, "copy-elim") == 0);
  CHECK(c.nlog > 0 && strcmp(c.log[0].instr, "a") == 0 && strcmp(c.log[0].comp, "e") == 0);
  if (m) tr_module_free(m);
  tr_buf_free(&out);
  tr_bc_ctx_free(&c);
}

TR_TEST(comp_dump_after) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf dump = {0}, out = {0};
  c.dump_after = "simplify";
  c.dump = &dump;
  tr_module *m = run_pipeline(FUEL_MOD, &c, &out, "dump");
  CHECK_CONTAINS(tr_buf_str(&dump), "// after pass simplify (run 1)\nHloModule t");
  CHECK_CONTAINS(tr_buf_str(&dump), "abs(%p)");
  /* The dumped module still holds the dead code that DCE removes later. */
  CHECK_CONTAINS(tr_buf_str(&dump), "%a = f32[2,3] copy(%p)");
  CHECK(!strstr(tr_buf_str(&dump), "after pass dce"));
  if (m) tr_module_free(m);
  tr_buf_free(&dump);
  tr_buf_free(&out);
  tr_bc_ctx_free(&c);
}

TR_TEST(comp_disable_pass_and_names) {
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_diag d = {0};
  CHECK(tr_bc_ctx_disable(&c, "simplify", &d) == TR_OK);
  CHECK(tr_bc_ctx_disable(&c, "no-such-rule", &d) == TR_ERR_USAGE);
  CHECK_CONTAINS(tr_diag_first(&d), "no-such-rule");
  tr_diag_clear(&d);
  tr_buf out = {0};
  tr_module *m = run_pipeline(FUEL_MOD, &c, &out, "disable");
  for (int i = 0; i < c.nlog; i++) CHECK(strcmp(c.log[i].pass, "simplify") != 0);
  CHECK_CONTAINS(tr_buf_str(&out), "copy(%p)");
  if (m) tr_module_free(m);
  tr_buf_free(&out);
  tr_bc_ctx_free(&c);
  const char *const *p = tr_bc_pass_names();
  bool dce = false, cse = false, simp = false;
  for (int i = 0; p[i]; i++) {
    dce |= strcmp(p[i], "dce") == 0;
    cse |= strcmp(p[i], "cse") == 0;
    simp |= strcmp(p[i], "simplify") == 0;
  }
  CHECK(dce && cse && simp);
}

TR_TEST(comp_invalid_input_rejected) {
  tr_diag d = {0};
  const char *text = HEAD ENTRY(" p = f32[2] parameter(0)\n ROOT r = f32[2] negate(p)\n");
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  CHECK(m != NULL);
  if (!m) return;
  m->entry->root->shape->dims[0] = 3; /* now the declared shape is wrong */
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  CHECK(tr_bc_pipeline_run(&c, m, &d) == TR_ERR_INVALID);
  CHECK(tr_diag_first(&d) != NULL);
  tr_diag_clear(&d);
  tr_bc_ctx_free(&c);
  tr_module_free(m);
}

/* ---- DCE ---- */

TR_TEST(comp_dce) {
  const char *text = HEAD ADD_F32 ENTRY(
      " p = f32[2] parameter(0)\n q = f32[2] parameter(1)\n dead1 = f32[2] add(p, q)\n dead2 = f32[2] negate(dead1)\n"
      " cc = f32[2] custom-call(p), custom_call_target=\"log_it\"\n"
      " ROOT r = f32[2] abs(p)\n");
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *m = run_rule_pass("dead-instruction", text, &c, &out);
  const char *s = tr_buf_str(&out);
  CHECK(!strstr(s, "dead1") && !strstr(s, "dead2"));
  CHECK_CONTAINS(s, "custom-call(%p)"); /* side effects stay */
  CHECK_CONTAINS(s, "%q = f32[2] parameter(1)"); /* the signature stays */
  CHECK(!strstr(s, "add_f32")); /* nothing calls it */
  CHECK(log_has(&c, "dead-instruction") && log_has(&c, "dead-computation"));
  if (m) tr_module_free(m);
  tr_bc_ctx_free(&c);

  /* Disabled by rule name, dead code stays. */
  tr_bc_ctx_init(&c);
  tr_diag d = {0};
  CHECK(tr_bc_ctx_disable(&c, "dead-instruction", &d) == TR_OK);
  out.n = 0;
  m = run_rule_pass("dead-instruction", text, &c, &out);
  CHECK_CONTAINS(tr_buf_str(&out), "dead2");
  CHECK(!log_has(&c, "dead-instruction") && log_has(&c, "dead-computation"));
  if (m) tr_module_free(m);
  tr_bc_ctx_free(&c);
  tr_buf_free(&out);
}

/* ---- CSE ---- */

TR_TEST(comp_cse) {
  const char *text = HEAD ENTRY(
      " p = f32[2] parameter(0)\n a = f32[2] exponential(p)\n b = f32[2] exponential(p)\n"
      " z1 = f32[] constant(0)\n z2 = f32[] constant(-0)\n z3 = f32[] constant(0)\n"
      " v1 = s32[9] constant({1, 2, 3, 4, 5, 6, 7, 8, 9})\n v2 = s32[9] constant({1, 2, 3, 4, 5, 6, 7, 8, 0})\n"
      " v3 = s32[9] constant({1, 2, 3, 4, 5, 6, 7, 8, 9})\n"
      " r1 = f32[2] custom-call(p), custom_call_target=\"rng\"\n r2 = f32[2] custom-call(p), custom_call_target=\"rng\"\n"
      " s = f32[2] add(a, b)\n t = f32[2] add(r1, r2)\n"
      " ROOT o = (f32[2], f32[2], f32[], f32[], f32[], s32[9], s32[9], s32[9]) tuple(s, t, z1, z2, z3, v1, v2, v3)\n");
  tr_bc_ctx c;
  tr_bc_ctx_init(&c);
  tr_buf out = {0};
  tr_module *orig = parse_ok(text, "cse");
  tr_module *m = run_rule_pass("common-subexpression", text, &c, &out);
  const char *s = tr_buf_str(&out);
  CHECK_CONTAINS(s, "add(%a, %a)");
  CHECK_CONTAINS(s, "add(%r1, %r2)");                /* side effects never merge */
  /* -0 is not 0; arrays merge on equal bytes, the last element counts */
  CHECK_CONTAINS(s, "tuple(%s, %t, %z1, %z2, %z1, %v1, %v2, %v1)");
  CHECK(log_has(&c, "common-subexpression"));
  if (m && orig) check_same_values(orig, m, "cse");
  if (m) tr_module_free(m);
  if (orig) tr_module_free(orig);
  tr_bc_ctx_free(&c);

  /* Commutative ops (ops.def flag C) merge with their operands swapped;
   * float maximum does not (+0 ties -0, the lhs wins), integer maximum
   * does, and subtract never. */
  text = HEAD ENTRY(
      " p = f32[2] parameter(0)\n q = f32[2] parameter(1)\n i = s32[2] parameter(2)\n j = s32[2] parameter(3)\n"
      " a1 = f32[2] add(p, q)\n a2 = f32[2] add(q, p)\n m1 = f32[2] maximum(p, q)\n m2 = f32[2] maximum(q, p)\n"
      " k1 = s32[2] maximum(i, j)\n k2 = s32[2] maximum(j, i)\n d1 = f32[2] subtract(p, q)\n d2 = f32[2] subtract(q, p)\n"
      " ROOT o = (f32[2], f32[2], f32[2], f32[2], s32[2], s32[2], f32[2], f32[2]) tuple(a1, a2, m1, m2, k1, k2, d1, d2)\n");
  tr_bc_ctx_init(&c);
  out.n = 0;
  orig = parse_ok(text, "cse-commutative");
  m = run_rule_pass("common-subexpression", text, &c, &out);
  CHECK_CONTAINS(tr_buf_str(&out), "tuple(%a1, %a1, %m1, %m2, %k1, %k1, %d1, %d2)");
  if (m && orig) check_same_values(orig, m, "cse-commutative");
  if (m) tr_module_free(m);
  if (orig) tr_module_free(orig);
  tr_bc_ctx_free(&c);
  tr_buf_free(&out);
}

/* ---- every module of the test corpus ---- */

/* Compiles one file: the result must verify and, where the reference runs
 * the original, compute the same values. */
static void check_corpus_file(const char *path, int *nrun) {
  tr_diag d = {0};
  tr_parse_opts opts = {.fill_elided = true};
  tr_module *orig = tr_parse_file(path, &opts, &d);
  if (!orig || tr_verify(orig, &d) != TR_OK) {
    /* A broken module that parses must be refused, not compiled. */
    if (orig) {
      tr_bc_ctx c;
      tr_bc_ctx_init(&c);
      if (tr_bc_pipeline_run(&c, orig, &d) != TR_ERR_INVALID) {
        fprintf(stderr, "  %s: invalid module not refused\n", path);
        tr_test_failed++;
      }
      tr_bc_ctx_free(&c);
      tr_module_free(orig);
    }
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
    check_same_values(orig, m, path);
    (*nrun)++;
  }
  tr_diag_clear(&d);
  tr_bc_ctx_free(&c);
  tr_module_free(m);
  tr_module_free(orig);
}

static void check_corpus_dir(const char *sub, int *nrun) {
  /* A missing or empty folder fails the test (testutil.c). */
  tr_test_files fl = tr_test_list_hlo(sub);
  for (int fi = 0; fi < fl.n; fi++) {
    const char *path = fl.paths[fi];
  check_corpus_file(path, nrun);
  }
  tr_test_files_free(&fl);
}

TR_TEST(comp_corpus_compiles_and_agrees) {
  int nrun = 0;
  check_corpus_dir("hlo", &nrun);
  check_corpus_dir("eval", &nrun);
  check_corpus_dir("bad", &nrun);
  check_corpus_dir("../examples", &nrun);
  if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "  corpus: %d modules compiled\n", nrun);
  CHECK(nrun >= 30);
}

/* ---- random modules aimed at the rules ---- */

/* A small deterministic generator (xorshift), local to each test. */
typedef struct {
  uint64_t s;       /* state */
  tr_buf b;         /* module text being built */
  int n;            /* names issued */
  bool flt;         /* f32 values, else s32 */
  const char *t;    /* "f32" or "s32" */
} gen;

static uint64_t rnd(gen *g) {
  g->s ^= g->s << 13;
  g->s ^= g->s >> 7;
  g->s ^= g->s << 17;
  return g->s;
}

static int pick(gen *g, int n) { return (int)(rnd(g) % (uint64_t)n); }

/* Emits "  vN = <fmt>" and returns N. */
static int line(gen *g, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int line(gen *g, const char *fmt, ...) {
  int id = ++g->n;
  tr_buf_printf(&g->b, "  v%d = ", id);
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(&g->b, fmt, ap);
  va_end(ap);
  tr_buf_putc(&g->b, '\n');
  return id;
}

static const char *rconst(gen *g) {
  static const char *const f[] = {"0", "-0", "1", "2", "-1", "0.5", "3", "inf", "-inf"};
  static const char *const i[] = {"0", "1", "2", "3", "-1", "-2147483648", "2147483647", "33"};
  return g->flt ? f[pick(g, TR_NELEMS(f))] : i[pick(g, TR_NELEMS(i))];
}

/* A T[4,6] splat of a random constant. */
static int splat(gen *g) {
  int c = line(g, "%s[] constant(%s)", g->t, rconst(g));
  return line(g, "%s[4,6] broadcast(v%d), dimensions={}", g->t, c);
}

/* A scalar s32 index: a constant (often out of range) or the parameter. */
static int index_val(gen *g) {
  if (pick(g, 3) == 0) return 1; /* v1 is the s32[] parameter */
  static const int v[] = {-3, 0, 1, 2, 5, 9, 100};
  return line(g, "s32[] constant(%d)", v[pick(g, TR_NELEMS(v))]);
}

/* One snippet: consumes value x (T[4,6]) and returns a new T[4,6]. */
static int snippet(gen *g, int x) {
  const char *t = g->t;
  switch (pick(g, 26)) {
  case 0: {
    int a = line(g, "%s[6,4] transpose(v%d), dimensions={1,0}", t, x);
    return line(g, "%s[4,6] transpose(v%d), dimensions={1,0}", t, a);
  }
  case 1: {
    static const char *const mid[] = {"[24]", "[2,2,6]", "[4,1,6]", "[1,4,6,1]"};
    int a = line(g, "%s%s reshape(v%d)", t, mid[pick(g, 4)], x);
    return line(g, "%s[4,6] reshape(v%d)", t, a);
  }
  case 2: {
    int lo0 = pick(g, 5) - 2, hi0 = pick(g, 5) - 2, in0 = pick(g, 3);
    int lo1 = pick(g, 5) - 2, hi1 = pick(g, 5) - 2, in1 = pick(g, 3);
    int d0 = lo0 + hi0 + 4 + 3 * in0, d1 = lo1 + hi1 + 6 + 5 * in1;
    if (d0 < 4 || d1 < 6) return x;
    int c = line(g, "%s[] constant(%s)", t, rconst(g));
    int p = line(g, "%s[%d,%d] pad(v%d, v%d), padding=%d_%d_%dx%d_%d_%d", t, d0, d1, x, c, lo0, hi0,
                 in0, lo1, hi1, in1);
    int a = pick(g, d0 - 3), b = pick(g, d1 - 5);
    return line(g, "%s[4,6] slice(v%d), slice={[%d:%d], [%d:%d]}", t, p, a, a + 4, b, b + 6);
  }
  case 3: {
    int k = pick(g, 5);
    int a = line(g, "%s[%d,6] slice(v%d), slice={[0:%d], [0:6]}", t, k, x, k);
    int b = line(g, "%s[%d,6] slice(v%d), slice={[%d:4], [0:6]}", t, 4 - k, x, k);
    return line(g, "%s[4,6] concatenate(v%d, v%d), dimensions={0}", t, a, b);
  }
  case 4: {
    static const char *const fo[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power"};
    static const char *const io[] = {"add", "subtract", "multiply", "divide", "maximum", "minimum", "power",
                                     "and", "or", "xor", "shift-left", "shift-right-arithmetic",
                                     "shift-right-logical"};
    const char *op = g->flt ? fo[pick(g, TR_NELEMS(fo))] : io[pick(g, TR_NELEMS(io))];
    int c = splat(g);
    if (pick(g, 2)) return line(g, "%s[4,6] %s(v%d, v%d)", t, op, x, c);
    return line(g, "%s[4,6] %s(v%d, v%d)", t, op, c, x);
  }
  case 5: {
    static const char *const fo[] = {"maximum", "minimum", "subtract", "add"};
    static const char *const io[] = {"maximum", "minimum", "subtract", "and", "or", "xor"};
    const char *op = g->flt ? fo[pick(g, TR_NELEMS(fo))] : io[pick(g, TR_NELEMS(io))];
    return line(g, "%s[4,6] %s(v%d, v%d)", t, op, x, x);
  }
  case 6: {
    static const char *const fo[] = {"negate", "abs", "sign", "floor", "ceil", "round-nearest-even",
                                     "round-nearest-afz"};
    static const char *const io[] = {"negate", "abs", "not", "sign"};
    int a = line(g, "%s[4,6] %s(v%d)", t, g->flt ? fo[pick(g, 7)] : io[pick(g, 4)], x);
    return line(g, "%s[4,6] %s(v%d)", t, g->flt ? fo[pick(g, 7)] : io[pick(g, 4)], a);
  }
  case 7: {
    static const char *const dir[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
    int y = pick(g, 2) ? x : splat(g);
    int c = line(g, "pred[4,6] compare(v%d, v%d), direction=%s%s", x, y, dir[pick(g, 6)],
                 g->flt && pick(g, 2) ? ", type=TOTALORDER" : "");
    if (pick(g, 2)) c = line(g, "pred[4,6] not(v%d)", c);
    int n = line(g, "%s[4,6] negate(v%d)", t, x);
    return line(g, "%s[4,6] select(v%d, v%d, v%d)", t, c, x, n);
  }
  case 8: {
    static const char *const fm[] = {"f64", "f16", "bf16", "s32", "s64"};
    static const char *const im[] = {"s64", "f64", "f32", "s8", "u32", "s16", "pred"};
    const char *m1 = g->flt ? fm[pick(g, 5)] : im[pick(g, 7)];
    const char *m2 = g->flt ? fm[pick(g, 5)] : im[pick(g, 7)];
    int a = line(g, "%s[4,6] convert(v%d)", m1, x);
    if (pick(g, 2)) a = line(g, "%s[4,6] convert(v%d)", m2, a);
    return line(g, "%s[4,6] convert(v%d)", t, a);
  }
  case 9: {
    int c = line(g, "%s[] constant(%s)", t, rconst(g));
    int p = line(g, "%s[7,8] pad(v%d, v%d), padding=1_2x0_2", t, x, c);
    int i1 = index_val(g), j1 = index_val(g);
    int a = line(g, "%s[6,7] dynamic-slice(v%d, v%d, v%d), dynamic_slice_sizes={6,7}", t, p, i1, j1);
    int i2 = index_val(g), j2 = index_val(g);
    return line(g, "%s[4,6] dynamic-slice(v%d, v%d, v%d), dynamic_slice_sizes={4,6}", t, a, i2, j2);
  }
  case 10: {
    int b = line(g, "%s[3,4,6] broadcast(v%d), dimensions={1,2}", t, x);
    int init = line(g, "%s[] constant(%s)", t, rconst(g));
    static const char *const red[] = {"max", "min", "add"};
    return line(g, "%s[4,6] reduce(v%d, v%d), dimensions={0}, to_apply=%s_%s", t, b, init,
                red[pick(g, g->flt ? 2 : 3)], t);
  }
  case 11: {
    int init = line(g, "%s[] constant(%s)", t, rconst(g));
    static const char *const red[] = {"max", "min", "add"};
    return line(g, "%s[4,6] reduce(v%d, v%d), dimensions={}, to_apply=%s_%s", t, x, init,
                red[pick(g, 3)], t);
  }
  case 12: {
    static const char *const d[] = {"{}", "{0}", "{1}", "{0,1}"};
    int a = line(g, "%s[4,6] reverse(v%d), dimensions=%s", t, x, d[pick(g, 4)]);
    return line(g, "%s[4,6] reverse(v%d), dimensions=%s", t, a, d[pick(g, 4)]);
  }
  case 13: {
    int a = line(g, "%s[6,4] transpose(v%d), dimensions={1,0}", t, x);
    int d = line(g, "%s[6,6] dot(v%d, v2), lhs_contracting_dims={1}, rhs_contracting_dims={0}", t, a);
    return line(g, "%s[4,6] slice(v%d), slice={[1:5], [0:6]}", t, d);
  }
  case 14: {
    int n = line(g, "%s[4,6] negate(v%d)", t, x);
    return line(g, "%s[4,6] dynamic-update-slice(v%d, v%d, v1, v1)", t, x, n);
  }
  case 15: {
    int r = line(g, "%s[1,6] slice(v%d), slice={[2:3], [0:6]}", t, x);
    int s = line(g, "%s[6] reshape(v%d)", t, r);
    int b1 = line(g, "%s[1,6] broadcast(v%d), dimensions={1}", t, s);
    int b2 = line(g, "%s[4,1,6] broadcast(v%d), dimensions={1,2}", t, b1);
    return line(g, "%s[4,6] reshape(v%d)", t, b2);
  }
  case 16: {
    int i = line(g, "s32[2] constant({%d, %d})", pick(g, 7) - 2, pick(g, 9) - 2);
    int ga = line(g, "%s[2,3] gather(v%d, v%d), offset_dims={0,1}, collapsed_slice_dims={}, "
                  "start_index_map={0,1}, index_vector_dim=0, slice_sizes={2,3}", t, x, i);
    int c = line(g, "%s[] constant(%s)", t, rconst(g));
    return line(g, "%s[4,6] pad(v%d, v%d), padding=1_1x1_2", t, ga, c);
  }
  case 17: return line(g, "%s[4,6] copy(v%d)", t, x);
  case 18: {
    int n = line(g, "%s[4,6] negate(v%d)", t, x);
    int c = line(g, "%s[8,6] concatenate(v%d, v%d), dimensions={0}", t, x, n);
    int a = pick(g, 5);
    return line(g, "%s[4,6] slice(v%d), slice={[%d:%d], [0:6]}", t, c, a, a + 4);
  }
  case 19: {
    static const char *const red[] = {"max", "min", "add"};
    int y = line(g, "%s[1,4,1,6] broadcast(v%d), dimensions={1,3}", t, x);
    int r = line(g, "%s[4,6] reshape(v%d)", t, y);
    int init = line(g, "%s[] constant(%s)", t, rconst(g));
    int d = line(g, "%s[4] reduce(v%d, v%d), dimensions={1}, to_apply=%s_%s", t, r, init,
                 red[pick(g, 3)], t);
    return line(g, "%s[4,6] broadcast(v%d), dimensions={0}", t, d);
  }
  case 20: {
    static const char *const red[] = {"max", "min", "add"};
    int init = line(g, "%s[] constant(%s)", t, rconst(g));
    return line(g, "%s[4,6] reduce-window(v%d, v%d), window={size=1x1}, to_apply=%s_%s", t, x, init,
                red[pick(g, 3)], t);
  }
  case 21: {
    int i = pick(g, 2) ? 1 : line(g, "s32[] constant(%d)", pick(g, 9) - 3);
    int v = line(g, "s32[2] broadcast(v%d), dimensions={}", i);
    return line(g, "%s[4,6] gather(v%d, v%d), offset_dims={0,1}, collapsed_slice_dims={}, "
                "start_index_map={0,1}, index_vector_dim=0, slice_sizes={4,6}", t, x, v);
  }
  case 22: {
    int a = pick(g, 4);
    int r = line(g, "%s[1,6] slice(v%d), slice={[%d:%d], [0:6]}", t, x, a, a + 1);
    int c = line(g, "%s[] constant(%s)", t, rconst(g));
    return line(g, "%s[4,6] pad(v%d, v%d), padding=2_1_3x0_0", t, r, c);
  }
  case 23: {
    int b = line(g, "%s[2,4,6] broadcast(v%d), dimensions={1,2}", t, x);
    int a = pick(g, 2);
    int sl = line(g, "%s[1,4,6] slice(v%d), slice={[%d:%d], [0:4], [0:6]}", t, b, a, a + 1);
    return line(g, "%s[4,6] reshape(v%d)", t, sl);
  }
  case 24: {
    int i = line(g, "s32[2] constant({%d, %d})", pick(g, 6) - 1, pick(g, 8) - 1);
    int u = line(g, "%s[2,3] slice(v%d), slice={[0:2], [3:6]}", t, x);
    return line(g, "%s[4,6] scatter(v%d, v%d, v%d), update_window_dims={0,1}, inserted_window_dims={}, "
                "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=assign_%s", t, x, i, u, t);
  }
  default: {
    int a = line(g, "%s[4,6] bitcast-convert(v%d)", g->flt ? "s32" : "f32", x);
    return line(g, "%s[4,6] bitcast-convert(v%d)", t, a);
  }
  }
}

static void random_module(gen *g) {
  const char *t = g->t;
  g->b.n = 0;
  g->n = 0;
  tr_buf_puts(&g->b, "HloModule rnd\n");
  static const char *const red[] = {"add", "maximum", "minimum"};
  static const char *const rn[] = {"add", "max", "min"};
  for (int k = 0; k < 3; k++)
    tr_buf_printf(&g->b, "%s_%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
                  "  ROOT r = %s[] %s(a, b)\n}\n", rn[k], t, t, t, t, red[k]);
  tr_buf_printf(&g->b, "assign_%s {\n  a = %s[] parameter(0)\n  ROOT b = %s[] parameter(1)\n}\n", t, t, t);
  tr_buf_puts(&g->b, "ENTRY e {\n");
  line(g, "s32[] parameter(1)");              /* v1: an index */
  line(g, "%s[4,6] parameter(2)", t);         /* v2: a dot operand */
  int x = line(g, "%s[4,6] parameter(0)", t); /* v3: the value */
  int first = x;
  int steps = 1 + pick(g, 8);
  for (int i = 0; i < steps; i++) x = snippet(g, x);
  tr_buf_printf(&g->b, "  ROOT out = (%s[4,6], %s[4,6]) tuple(v%d, v%d)\n}\n", t, t, x,
                pick(g, 2) ? first : x);
}

TR_TEST(comp_random_modules_agree) {
  gen g = {.s = 0x9e3779b97f4a7c15ull};
  int nfired = 0;
  for (int i = 0; i < 2000; i++) {
    g.flt = i % 2 == 0;
    g.t = g.flt ? "f32" : "s32";
    random_module(&g);
    const char *text = tr_buf_str(&g.b);
    tr_diag d = {0};
    tr_module *orig = tr_parse("rnd.hlo", text, strlen(text), NULL, &d);
    if (!orig || tr_verify(orig, &d) != TR_OK) {
      fprintf(stderr, "  random module %d is invalid (a generator bug):\n%s", i, text);
      tr_diag_print(&d, stderr);
      tr_test_failed++;
      tr_diag_clear(&d);
      if (orig) tr_module_free(orig);
      break;
    }
    tr_module *m = tr_module_clone(orig);
    tr_bc_ctx c;
    tr_bc_ctx_init(&c);
    int before = tr_test_failed;
    if (tr_bc_pipeline_run(&c, m, &d) != TR_OK) {
      tr_diag_print(&d, stderr);
      tr_test_failed++;
    } else {
      check_same_values(orig, m, "random module");
    }
    if (tr_test_failed != before) {
      tr_buf out = {0};
      tr_print_module(&out, m);
      fprintf(stderr, "  random module %d:\n%s  optimized:\n%s  rewrites:", i, text, tr_buf_str(&out));
      for (int k = 0; k < c.nlog; k++) fprintf(stderr, " %s", c.log[k].rule);
      fprintf(stderr, "\n");
      tr_buf_free(&out);
    }
    nfired += c.nlog;
    /* Every prefix of the rewrites is correct too: stop at a random one. */
    if (c.nlog > 1 && tr_test_failed == before) {
      tr_module *m2 = tr_module_clone(orig);
      tr_bc_ctx c2;
      tr_bc_ctx_init(&c2);
      c2.fuel = pick(&g, c.nlog);
      if (tr_bc_pipeline_run(&c2, m2, &d) != TR_OK) {
        tr_diag_print(&d, stderr);
        tr_test_failed++;
      } else {
        check_same_values(orig, m2, "random module, fuel prefix");
        CHECK_EQ_INT(c2.nlog, (int)(c2.napplied));
      }
      if (tr_test_failed != before) fprintf(stderr, "  random module %d with fuel %d:\n%s", i, c2.nlog, text);
      tr_bc_ctx_free(&c2);
      tr_module_free(m2);
    }
    if (getenv("TR_TEST_VERBOSE"))
      for (int k = 0; k < c.nlog; k++) fprintf(stderr, "  fired %s\n", c.log[k].rule);
    tr_diag_clear(&d);
    tr_bc_ctx_free(&c);
    tr_module_free(m);
    tr_module_free(orig);
    if (tr_test_failed > 3) break;
  }
  tr_buf_free(&g.b);
  if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "  random: %d rewrites\n", nfired);
  CHECK(nfired > 2000);
}

/* docs/COMPILER.md describes every rule (by its name in backquotes). */
TR_TEST(comp_rules_documented) {
  tr_buf path = {0};
  tr_buf_printf(&path, "%s/../docs/COMPILER.md", tr_test_dir);
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(tr_buf_str(&path), &text, &len, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_test_failed++;
  }
  const char *const *names = tr_bc_rule_names();
  for (int i = 0; text && names[i]; i++) {
    tr_buf q = {0};
    tr_buf_printf(&q, "`%s`", names[i]);
    if (!strstr(text, tr_buf_str(&q))) {
      fprintf(stderr, "  docs/COMPILER.md does not describe rule %s\n", names[i]);
      tr_test_failed++;
    }
    tr_buf_free(&q);
  }
  free(text);
  tr_diag_clear(&d);
  tr_buf_free(&path);
}
