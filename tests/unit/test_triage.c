/* test_triage.c - hierarchical triage (src/triage): the prefix bisection
 * names the planted instruction in a chain in about log2 N runs, the
 * pass levels name the guilty pass and rule of a rewrite defect, and the
 * reducer refuses a candidate that turns the finding into another bug. */
#include "test.h"

#include "../../src/triage/triage.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static tr_module *parse(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return m;
}

static tr_target *open_t(const char *spec) {
  tr_target *t = NULL;
  tr_diag d = {0};
  if (tr_target_open(spec, NULL, &t, &d) != TR_OK) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return t;
}

/* A chain of 40 exact integer ops with one shift by 33 in the middle: the
 * shift defect (emit-shift-amount-mod-width) corrupts only %x20. */
static tr_module *chain(void) {
  tr_buf b = {0};
  tr_buf_puts(&b, "HloModule chain\nENTRY e {\n  p = s32[8] parameter(0)\n  q = s32[8] parameter(1)\n"
                  "  c = s32[] constant(33)\n  k = s32[8] broadcast(c), dimensions={}\n  x0 = s32[8] add(p, q)\n");
  const char *ops[] = {"add", "xor", "subtract"};
  for (int i = 1; i < 40; i++) {
    if (i == 20) tr_buf_printf(&b, "  x%d = s32[8] shift-left(x%d, k)\n", i, i - 1);
    else tr_buf_printf(&b, "  x%d = s32[8] %s(x%d, %s)\n", i, ops[i % 3], i - 1, i % 2 ? "p" : "q");
  }
  tr_buf_puts(&b, "  ROOT r = s32[8] add(x39, q)\n}\n");
  tr_module *m = parse(b.p);
  tr_buf_free(&b);
  return m;
}

/* Isolates m (freed here) on builtin with the shift-width defect planted,
 * one seed, no pass level. False when the module or target is missing (a
 * CHECK failed); else *r holds the report, for the caller to check and
 * free. */
static bool isolate_shift(tr_module *m, tr_triage_report *r) {
  tr_target *t = open_t("builtin:inject=emit-shift-amount-mod-width");
  CHECK(m && t);
  bool ran = m && t;
  if (ran) {
    tr_triage_opts o;
    tr_triage_opts_init(&o);
    o.nseeds = 1;
    o.no_passes = true;
    tr_diag d = {0};
    CHECK(tr_isolate(t, m, &o, r, &d) == TR_OK);
    tr_diag_clear(&d);
  }
  tr_target_close(t);
  tr_module_free(m);
  return ran;
}

TR_TEST(triage_bisect_keeps_context_and_names_the_planted_instruction) {
  tr_triage_report r;
  if (!isolate_shift(chain(), &r)) return;
  CHECK_EQ_INT(r.outputs.state, TR_LEVEL_FOUND);
  CHECK(strcmp(r.sig.kind, "mismatch") == 0);
  CHECK(strcmp(r.culprit, "x20") == 0);
  CHECK_EQ_INT(r.culprit_op, TR_OP_SHIFT_LEFT);
  CHECK(strcmp(r.alone, "wrong") == 0);
  /* 41 blamable instructions: at most ceil(log2 41) + 1 bisection runs,
   * and the two cross-checks. */
  CHECK(r.instr.runs <= 6 + 1 + 2);
  tr_triage_report_free(&r);
}

TR_TEST(triage_names_pass_and_rule_of_a_rewrite_defect) {
  tr_module *m = parse("HloModule s\nENTRY e {\n  x = f32[32] parameter(0)\n"
                       "  i = f32[15] slice(x), slice={[1:31:2]}\n  ROOT o = f32[6] slice(i), slice={[3:9]}\n}\n");
  tr_target *t = open_t("builtin:inject=simplify-slice-of-slice-stride");
  CHECK(m && t);
  if (!m || !t) goto out;
  tr_triage_opts o;
  tr_triage_opts_init(&o);
  o.nseeds = 1;
  tr_triage_report r;
  tr_diag d = {0};
  CHECK(tr_isolate(t, m, &o, &r, &d) == TR_OK);
  CHECK(strcmp(r.guilty_pass, "simplify") == 0);
  CHECK_EQ_INT(r.passes.state, TR_LEVEL_FOUND);
  CHECK(strcmp(r.disabled_fix, "simplify") == 0);
  CHECK(strcmp(r.rule, "slice-of-slice") == 0);
  CHECK_EQ_INT(r.fuel_n, 1);
  CHECK_EQ_INT(r.culprit_op, TR_OP_SLICE);
  /* JSON carries every level. */
  cJSON *js = tr_triage_json(&r);
  cJSON *lv = cJSON_GetObjectItem(js, "levels");
  CHECK(lv && cJSON_GetObjectItem(lv, "fuel") && cJSON_GetObjectItem(lv, "kernel"));
  cJSON_Delete(js);
  tr_triage_report_free(&r);
  tr_diag_clear(&d);
out:
  tr_target_close(t);
  tr_module_free(m);
}

/* Two planted bugs in one module: the tail-mask defect wrongs the f32 add
 * (output 0, the finding), the shift defect the s32 shift (output 1). A
 * candidate keeping only output 1 is another bug and must be refused;
 * the reduced module keeps the add (the culprit) and loses the shift. */
TR_TEST(triage_reducer_refuses_a_candidate_that_changes_the_bug) {
  const char *two = "HloModule two\nENTRY e {\n  p = f32[13] parameter(0)\n  q = f32[13] parameter(1)\n"
                    "  a = f32[13] add(p, q)\n  n = f32[13] negate(a)\n  s = s32[4] parameter(2)\n"
                    "  c = s32[] constant(33)\n  k = s32[4] broadcast(c), dimensions={}\n"
                    "  h = s32[4] shift-left(s, k)\n  ROOT r = (f32[13], s32[4]) tuple(n, h)\n}\n";
  const char *only_shift = "HloModule two\nENTRY e {\n  p = f32[13] parameter(0)\n  q = f32[13] parameter(1)\n"
                           "  s = s32[4] parameter(2)\n  c = s32[] constant(33)\n"
                           "  k = s32[4] broadcast(c), dimensions={}\n  ROOT h = s32[4] shift-left(s, k)\n}\n";
  const char *only_neg = "HloModule two\nENTRY e {\n  p = f32[13] parameter(0)\n  q = f32[13] parameter(1)\n"
                         "  a = f32[13] add(p, q)\n  s = s32[4] parameter(2)\n  ROOT n = f32[13] negate(a)\n}\n";
  tr_module *m = parse(two), *ms = parse(only_shift), *mn = parse(only_neg);
  tr_target *t = open_t("builtin:inject=emit-tail-mask-short,inject=emit-shift-amount-mod-width");
  CHECK(m && ms && mn && t);
  if (!m || !ms || !mn || !t) goto out;
  tr_triage_opts o;
  tr_triage_opts_init(&o);
  o.nseeds = 1;
  o.repro_runs = 2;
  tr_triage_report r;
  tr_diag d = {0};
  CHECK(tr_isolate(t, m, &o, &r, &d) == TR_OK);
  CHECK(strcmp(r.failing_outputs, "0,1") == 0);
  CHECK_EQ_INT(r.sig.output, 0);
  CHECK_EQ_INT(r.sig.op, TR_OP_NEGATE);
  /* Output 1 alone fails too, but as another bug: refused. */
  CHECK(!tr_triage_keeps_sig(t, ms, r.inputs, r.ninputs, &o, &r));
  CHECK(tr_triage_keeps_sig(t, mn, r.inputs, r.ninputs, &o, &r));
  CHECK(tr_reduce(t, m, &o, &r, &d) == TR_OK);
  CHECK_EQ_INT(r.reduce.state, TR_LEVEL_FOUND);
  CHECK(r.reduced_text && !strstr(r.reduced_text, "shift-left"));
  /* The culprit (the add, before the negate) became the root. */
  CHECK(strcmp(r.culprit, "a") == 0);
  CHECK(r.reduced_text && strstr(r.reduced_text, "add("));
  CHECK(r.reduced_instrs < r.module_instrs);
  CHECK_EQ_INT(r.repro_ok, 2);
  CHECK(!r.flaky);
  tr_triage_report_free(&r);
  tr_diag_clear(&d);
out:
  tr_target_close(t);
  tr_module_free(m);
  tr_module_free(ms);
  tr_module_free(mn);
}

/* The reducer's structural moves: the tail-mask defect wrongs an f64 add
 * inside a called computation. Isolation names the call and, inlined
 * and bisected again, the add inside it; the reducer inlines the call
 * (its signature's op follows the culprit from call to add), narrows f64
 * to f32 and forwards the tuple, leaving the add alone. */
TR_TEST(triage_reducer_inlines_narrows_and_follows_the_culprit) {
  const char *text = "HloModule wrapped\n%f (t: (f64[4,13], f64[4,13])) -> f64[4,13] {\n"
                     "  t = (f64[4,13], f64[4,13]) parameter(0)\n  a = f64[4,13] get-tuple-element(t), index=0\n"
                     "  b = f64[4,13] get-tuple-element(t), index=1\n  ROOT s = f64[4,13] add(a, b)\n}\n"
                     "ENTRY e {\n  p = f64[4,13] parameter(0)\n  q = f64[4,13] parameter(1)\n"
                     "  t = (f64[4,13], f64[4,13]) tuple(p, q)\n  c = f64[4,13] call(t), to_apply=%f\n"
                     "  ROOT n = f64[4,13] negate(c)\n}\n";
  tr_module *m = parse(text);
  tr_target *t = open_t("builtin:inject=emit-tail-mask-short");
  CHECK(m && t);
  if (!m || !t) goto out;
  tr_triage_opts o;
  tr_triage_opts_init(&o);
  o.nseeds = 1;
  o.repro_runs = 1;
  tr_triage_report r;
  tr_diag d = {0};
  CHECK(tr_isolate(t, m, &o, &r, &d) == TR_OK);
  CHECK(strcmp(r.culprit, "c") == 0);
  CHECK_EQ_INT(r.inner_op, TR_OP_ADD);
  CHECK(tr_reduce(t, m, &o, &r, &d) == TR_OK);
  CHECK_EQ_INT(r.reduce.state, TR_LEVEL_FOUND);
  CHECK_EQ_INT(r.reduced_op, TR_OP_ADD);
  CHECK(r.reduced_text && !strstr(r.reduced_text, "call(") && !strstr(r.reduced_text, "f64") &&
        strstr(r.reduced_text, "f32") && strstr(r.reduced_text, "add("));
  CHECK(r.reduced_instrs <= 3);
  if (r.reduced_text && r.reduced_instrs > 3) fprintf(stderr, "%s", r.reduced_text);
  tr_triage_report_free(&r);
  tr_diag_clear(&d);
out:
  tr_target_close(t);
  tr_module_free(m);
}

/* Moves inside called computations: a call of two operands (not
 * inlined: the inline move takes one) whose body wraps the wrong f32 add
 * of the tail-mask defect in two negates and a multiply by one. The
 * forward move works inside the body too, so the body keeps its
 * parameters and the add; the signature (the call as culprit, the add
 * inside it) stays. */
TR_TEST(triage_reducer_forwards_inside_a_called_computation) {
  const char *text = "HloModule body\n%f (x: f32[13], y: f32[13]) -> f32[13] {\n"
                     "  x = f32[13] parameter(0)\n  y = f32[13] parameter(1)\n  a = f32[13] add(x, y)\n"
                     "  n = f32[13] negate(a)\n  one = f32[] constant(1)\n"
                     "  b = f32[13] broadcast(one), dimensions={}\n  m = f32[13] multiply(n, b)\n"
                     "  ROOT r = f32[13] negate(m)\n}\n"
                     "ENTRY e {\n  p = f32[13] parameter(0)\n  q = f32[13] parameter(1)\n"
                     "  ROOT c = f32[13] call(p, q), to_apply=%f\n}\n";
  tr_module *m = parse(text);
  tr_target *t = open_t("builtin:inject=emit-tail-mask-short");
  CHECK(m && t);
  if (!m || !t) goto out;
  tr_triage_opts o;
  tr_triage_opts_init(&o);
  o.nseeds = 1;
  o.repro_runs = 1;
  tr_triage_report r;
  tr_diag d = {0};
  CHECK(tr_isolate(t, m, &o, &r, &d) == TR_OK);
  CHECK(strcmp(r.culprit, "c") == 0);
  CHECK(tr_reduce(t, m, &o, &r, &d) == TR_OK);
  CHECK_EQ_INT(r.reduce.state, TR_LEVEL_FOUND);
  CHECK_EQ_INT(r.module_instrs_all, 11);
  CHECK(r.reduced_instrs_all < r.module_instrs_all);
  CHECK(r.reduced_text && strstr(r.reduced_text, "call(") && strstr(r.reduced_text, "add(") &&
        !strstr(r.reduced_text, "multiply(") && !strstr(r.reduced_text, "negate("));
  if (r.reduced_text && strstr(r.reduced_text, "negate(")) fprintf(stderr, "%s", r.reduced_text);
  tr_triage_report_free(&r);
  tr_diag_clear(&d);
out:
  tr_target_close(t);
  tr_module_free(m);
}

/* A module may have dead instructions written after its root (mutators
 * append them): the root's operands are still live at every cut, so the
 * bisection names the planted shift, not "nothing". */
TR_TEST(triage_bisect_with_dead_code_after_the_root) {
  const char *text = "HloModule dead\nENTRY e {\n  p = s32[8] parameter(0)\n  q = s32[8] parameter(1)\n"
                     "  c = s32[] constant(33)\n  k = s32[8] broadcast(c), dimensions={}\n"
                     "  a = s32[8] add(p, q)\n  s = s32[8] shift-left(a, k)\n  x = s32[8] xor(s, p)\n"
                     "  ROOT r = (s32[8], s32[8]) tuple(x, q)\n  d = s32[8] subtract(p, q)\n"
                     "  d2 = s32[8] multiply(d, d)\n}\n";
  tr_triage_report r;
  if (!isolate_shift(parse(text), &r)) return;
  CHECK_EQ_INT(r.instr.state, TR_LEVEL_FOUND);
  CHECK(strcmp(r.culprit, "s") == 0);
  tr_triage_report_free(&r);
}

/* The wrong value reaches the root only in a nested tuple written before
 * later instructions (seed-23 xla-cpu campaign, mismatch-tuple-bf16):
 * the cuts after the tuple must still return the value, or no prefix
 * fails and the bisection names nothing. */
TR_TEST(triage_bisect_through_a_nested_tuple) {
  const char *text = "HloModule nested\nENTRY e {\n  p = s32[8] parameter(0)\n  q = s32[8] parameter(1)\n"
                     "  c = s32[] constant(33)\n  k = s32[8] broadcast(c), dimensions={}\n"
                     "  a = s32[8] add(p, q)\n  s = s32[8] shift-left(a, k)\n  x = s32[8] xor(s, p)\n"
                     "  t = (s32[8], s32[8]) tuple(x, q)\n  y = s32[8] subtract(p, q)\n"
                     "  z = s32[8] multiply(y, q)\n  ROOT r = ((s32[8], s32[8]), s32[8]) tuple(t, z)\n}\n";
  tr_triage_report r;
  if (!isolate_shift(parse(text), &r)) return;
  CHECK_EQ_INT(r.instr.state, TR_LEVEL_FOUND);
  CHECK(strcmp(r.culprit, "s") == 0);
  tr_triage_report_free(&r);
}

/* xla-42 names a convolution padded -N_N only at an element whose window
 * reaches the high padding, and only with 2 or more input features. */
TR_TEST(triage_known_conv_negative_pad_needs_the_padded_tap) {
  static const char *const text[2] = {
      "HloModule k\nENTRY e {\n  x = f32[1,2,3,4] parameter(0)\n  k = f32[1,2,2,2] parameter(1)\n"
      "  ROOT r = f32[1,1,2,3] convolution(x, k), window={size=2x2 pad=-1_1x0_0}, dim_labels=bf01_oi01->bf01\n}\n",
      "HloModule k\nENTRY e {\n  x = f32[1,1,3,4] parameter(0)\n  k = f32[1,1,2,2] parameter(1)\n"
      "  ROOT r = f32[1,1,2,3] convolution(x, k), window={size=2x2 pad=-1_1x0_0}, dim_labels=bf01_oi01->bf01\n}\n"};
  for (int features = 0; features < 2; features++) {
    tr_module *m = parse(text[features]);
    if (!m) return;
    tr_triage_case c;
    memset(&c, 0, sizeof c);
    c.has = c.elem = true;
    c.op = TR_OP_CONVOLUTION;
    c.dtype = TR_DT_F32;
    c.nargs = c.noperands = 2;
    c.target = 42, c.ref = 38;
    tr_check_sig sig;
    memset(&sig, 0, sizeof sig);
    snprintf(sig.kind, sizeof sig.kind, "mismatch");
    const char *title = NULL, *id;
    /* row 1 reads input row 2 and the padded row 3 */
    snprintf(c.index, sizeof c.index, "[0,0,1,2]");
    id = tr_known_match("xla-cpu", m->entry->root, &c, &sig, &title);
    if (features == 0) CHECK(id && strcmp(id, "xla-42") == 0);
    else CHECK(id == NULL || strcmp(id, "xla-42") != 0); /* one input feature */
    /* row 0 reads input rows 1 and 2: no padding */
    snprintf(c.index, sizeof c.index, "[0,0,0,2]");
    id = tr_known_match("xla-cpu", m->entry->root, &c, &sig, &title);
    CHECK(id == NULL || strcmp(id, "xla-42") != 0);
    tr_module_free(m);
  }
}

/* xla-36 through moves: a transpose of a complex constant holding
 * (nan, y), whose wrong element is NaN in the real part on both sides
 * (the imaginary part differs), is named; a constant without such an
 * element, or a wrong element with a number in the real part, is not. */
TR_TEST(triage_known_parse_cnan_through_moves) {
  static const char *const text[2] = {
      "HloModule k\nENTRY e {\n  c = c64[2,2] constant({ { (1, 2), (nan, 3) }, { (4, 5), (6, 7) } })\n"
      "  t = c64[2,2] transpose(c), dimensions={1,0}\n  ROOT r = c64[2,2] reshape(t)\n}\n",
      "HloModule k\nENTRY e {\n  c = c64[2,2] constant({ { (1, 2), (nan, nan) }, { (4, 5), (6, 7) } })\n"
      "  t = c64[2,2] transpose(c), dimensions={1,0}\n  ROOT r = c64[2,2] reshape(t)\n}\n"};
  for (int k = 0; k < 2; k++) {
    tr_module *m = parse(text[k]);
    if (!m) return;
    tr_triage_case c;
    memset(&c, 0, sizeof c);
    c.has = c.elem = true;
    c.op = TR_OP_RESHAPE;
    c.dtype = TR_DT_C64;
    c.nargs = c.noperands = 1;
    c.arg_dt[0] = TR_DT_C64;
    c.arg_n[0] = 4;
    c.arg_folded[0] = true;
    c.target = NAN, c.ref = NAN;
    tr_check_sig sig;
    memset(&sig, 0, sizeof sig);
    snprintf(sig.kind, sizeof sig.kind, "mismatch");
    const char *title = NULL;
    const char *id = tr_known_match("xla-cpu", m->entry->root, &c, &sig, &title);
    if (k == 0) CHECK(id && strcmp(id, "xla-36") == 0);
    else CHECK(id == NULL || strcmp(id, "xla-36") != 0);
    c.ref = 3, c.target = NAN; /* the real part differs: not this bug */
    id = tr_known_match("xla-cpu", m->entry->root, &c, &sig, &title);
    CHECK(id == NULL || strcmp(id, "xla-36") != 0);
    tr_module_free(m);
  }
}

/* xla-45 names a select-and-scatter padded on its last window dimension
 * with a window wider than one on another; padding on the first only, or
 * an empty source, is not it. */
TR_TEST(triage_known_sas_padded_tie) {
  static const char *const win[3] = {"size=2x2 pad=0_0x0_1", "size=2x2 pad=0_1x0_0", "size=3x2 pad=0_0x0_1"};
  static const char *const src[3] = {"1,2", "2,1", "0,2"};
  for (int k = 0; k < 3; k++) {
    char text[600];
    snprintf(text, sizeof text,
             "HloModule k\nge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n"
             "  ROOT c = pred[] compare(a, b), direction=GE\n}\nadd {\n  a = f32[] parameter(0)\n"
             "  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\nENTRY e {\n  x = f32[2,2] parameter(0)\n"
             "  s = f32[%s] parameter(1)\n  i = f32[] constant(0)\n"
             "  ROOT r = f32[2,2] select-and-scatter(x, s, i), window={%s}, select=ge, scatter=add\n}\n",
             src[k], win[k]);
    tr_module *m = parse(text);
    if (!m) return;
    tr_triage_case c;
    memset(&c, 0, sizeof c);
    c.has = c.elem = true;
    c.op = TR_OP_SELECT_AND_SCATTER;
    c.dtype = TR_DT_F32;
    c.nargs = c.noperands = 3;
    c.arg_n[0] = 4, c.arg_n[1] = k == 2 ? 0 : 2, c.arg_n[2] = 1;
    c.target = 2, c.ref = 3;
    tr_check_sig sig;
    memset(&sig, 0, sizeof sig);
    snprintf(sig.kind, sizeof sig.kind, "mismatch");
    const char *title = NULL;
    const char *id = tr_known_match("xla-cpu", m->entry->root, &c, &sig, &title);
    if (k == 0) CHECK(id && strcmp(id, "xla-45") == 0);
    else CHECK(id == NULL || strcmp(id, "xla-45") != 0);
    tr_module_free(m);
  }
}

/* known.def: a recorded bug is named where its trigger holds, for its
 * target family only, and not where the trigger does not hold. */
TR_TEST(triage_known_bug_matched_by_its_trigger) {
  tr_module *m = parse("HloModule k\nENTRY e {\n  x = u32[3] parameter(0)\n  y = u32[3] parameter(1)\n"
                       "  ROOT p = u32[3] power(x, y)\n}\n");
  if (!m) return;
  const tr_instr *p = m->entry->root;
  tr_triage_case c;
  memset(&c, 0, sizeof c);
  c.has = c.elem = true;
  c.op = TR_OP_POWER;
  c.dtype = TR_DT_U32;
  c.nargs = c.noperands = 2;
  c.arg_dt[0] = c.arg_dt[1] = TR_DT_U32;
  c.arg_n[0] = c.arg_n[1] = 3;
  c.arg_set[0] = c.arg_set[1] = true;
  c.arg[0] = 3, c.arg_bits[0] = 3;
  c.arg[1] = 64, c.arg_bits[1] = 64; /* 3^64: the exponent's low 6 bits are 0 */
  tr_check_sig sig;
  memset(&sig, 0, sizeof sig);
  snprintf(sig.kind, sizeof sig.kind, "mismatch");
  const char *title = NULL;
  const char *id = tr_known_match("xla-cpu", p, &c, &sig, &title);
  CHECK(id && strcmp(id, "xla-17") == 0 && title && strstr(title, "low 6 bits"));
  id = tr_known_match("xla-cpu@0.4.30", p, &c, &sig, &title);
  CHECK(id && strcmp(id, "xla-17") == 0);
  CHECK(tr_known_match("builtin", p, &c, &sig, &title) == NULL);
  CHECK(tr_known_match("xla-cpux", p, &c, &sig, &title) == NULL);
  c.arg[1] = 5, c.arg_bits[1] = 5; /* an exponent below 64 is computed right */
  CHECK(tr_known_match("xla-cpu", p, &c, &sig, &title) == NULL);
  /* Ids are unique. */
  for (int i = 0; tr_known_id(i); i++)
    for (int j = i + 1; tr_known_id(j); j++) CHECK(strcmp(tr_known_id(i), tr_known_id(j)) != 0);
  tr_module_free(m);
}
