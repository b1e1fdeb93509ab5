/* test_anchor.c - one instruction (or group) extracted into a module of
 * its own (src/ir/extract.c), and per-instruction checking
 * (src/oracle/anchor.c): the anchored module, each instruction judged on
 * the target's operand values, a planted defect named at the right
 * instruction, clean modules passing. */
#include "../../src/oracle/anchor.h"
#include "../../src/oracle/inputs.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

static tr_module *parse(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m || tr_verify(m, &d) != TR_OK) {
    tr_diag_print(&d, stderr);
    tr_module_free(m);
    m = NULL;
  }
  tr_diag_clear(&d);
  return m;
}

static const tr_instr *find(const tr_module *m, const char *name) {
  const tr_instr *e = tr_comp_find(m->entry, name);
  if (e) return e;
  for (int k = 0; k < m->ncomps; k++) {
    const tr_instr *in = tr_comp_find(m->comps[k], name);
    if (in) return in;
  }
  return NULL;
}

/* Text of m, printed and parsed back and verified: the extracted module
 * is a real module. */
static bool reparses(const tr_module *m, tr_buf *b) {
  b->n = 0;
  tr_print_module(b, m);
  tr_module *r = parse(tr_buf_str(b));
  bool ok = r != NULL;
  tr_module_free(r);
  return ok;
}

static const char CHAIN[] =
    "HloModule chain, entry_computation_layout={(f32[4,3]{1,0}, f32[3]{0})->f32[4]{0}}\n"
    "sum {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT s = f32[] add(a, b)\n}\n"
    "unused {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT m = f32[] maximum(a, b)\n}\n"
    "ENTRY e {\n"
    "  x = f32[4,3] parameter(0)\n"
    "  w = f32[3] parameter(1)\n"
    "  c = f32[] constant(0.5)\n"
    "  wb = f32[4,3] broadcast(w), dimensions={1}\n"
    "  m = f32[4,3] multiply(x, wb)\n"
    "  cb = f32[4,3] broadcast(c), dimensions={}\n"
    "  a = f32[4,3] add(m, cb)\n"
    "  t = f32[4,3] tanh(a)\n"
    "  z = f32[] constant(0)\n"
    "  ROOT r = f32[4] reduce(t, z), dimensions={1}, to_apply=sum\n"
    "}\n";

TR_TEST(extract_one_instruction) {
  tr_module *m = parse(CHAIN);
  CHECK(m != NULL);
  if (!m) return;
  tr_buf b = {0};
  /* The reduce: its operand becomes parameter 0, the init constant stays
   * a constant, the reducer comes along and the unused computation and
   * the stale entry layout do not. */
  const tr_instr *src[4];
  int ns = -1;
  tr_module *x = tr_extract_instr(m, find(m, "r"), src, &ns);
  CHECK(x != NULL);
  if (x) {
    CHECK_EQ_INT(ns, 1);
    CHECK(src[0] == find(m, "t"));
    CHECK_EQ_INT(x->entry->nparams, 1);
    CHECK_EQ_INT(x->entry->ninstrs, 3);
    CHECK_STR(x->entry->root->name, "r");
    CHECK(x->entry->root->op == TR_OP_REDUCE);
    CHECK(x->entry->params[0]->shape->dims[0] == 4 && x->entry->params[0]->shape->dims[1] == 3);
    CHECK(tr_module_find_comp(x, "sum") != NULL);
    CHECK(tr_module_find_comp(x, "unused") == NULL);
    CHECK_EQ_INT(x->ncomps, 2);
    CHECK(reparses(x, &b));
    CHECK(strstr(tr_buf_str(&b), "entry_computation_layout") == NULL);
    CHECK(strstr(tr_buf_str(&b), "constant(0)") != NULL);
    /* Evaluating it on t's values gives the reduce's values. */
    int64_t dims[2] = {4, 3};
    tr_tensor *tv = tr_tensor_new(TR_DT_F32, 2, dims, NULL);
    for (int i = 0; i < 12; i++) tr_tensor_set_f(tv, (size_t)i, i);
    tr_tensor **outs = NULL;
    int nouts = 0;
    tr_diag d = {0};
    CHECK(tr_eval(x, &tv, 1, &outs, &nouts, &d) == TR_OK);
    if (nouts == 1) {
      CHECK(tr_tensor_get_f(outs[0], 0) == 0 + 1 + 2);
      CHECK(tr_tensor_get_f(outs[0], 3) == 9 + 10 + 11);
    }
    tr_eval_free_outputs(outs, nouts);
    tr_tensor_free(tv);
    tr_diag_clear(&d);
    tr_module_free(x);
  }
  /* add(m, cb): two parameters, in operand order. */
  x = tr_extract_instr(m, find(m, "a"), src, &ns);
  CHECK(x != NULL);
  if (x) {
    CHECK_EQ_INT(ns, 2);
    CHECK(src[0] == find(m, "m") && src[1] == find(m, "cb"));
    CHECK_STR(x->entry->params[0]->name, "m");
    CHECK_STR(x->entry->params[1]->name, "cb");
    CHECK_EQ_INT(x->ncomps, 1);
    CHECK(reparses(x, &b));
    tr_module_free(x);
  }
  /* An instruction inside a called computation. */
  x = tr_extract_instr(m, find(m, "s"), src, &ns);
  CHECK(x != NULL && ns == 2);
  if (x) {
    CHECK(reparses(x, &b));
    tr_module_free(x);
  }
  /* A repeated operand is one parameter; a group keeps its inside
   * edges. */
  tr_module *sq = parse("HloModule sq\nENTRY e {\n  p = f32[2] parameter(0)\n"
                        "  q = f32[2] multiply(p, p)\n  ROOT n = f32[2] negate(q)\n}\n");
  CHECK(sq != NULL);
  if (sq) {
    x = tr_extract_instr(sq, find(sq, "q"), src, &ns);
    CHECK(x && ns == 1 && x->entry->nparams == 1);
    tr_module_free(x);
    const tr_instr *g[2] = {find(sq, "q"), find(sq, "n")};
    x = tr_extract_group(sq, g, 2, src, &ns);
    CHECK(x && ns == 1 && src[0] == find(sq, "p") && x->entry->ninstrs == 3);
    if (x) {
      CHECK_STR(x->entry->root->name, "n");
      CHECK(x->entry->root->operands[0]->op == TR_OP_MULTIPLY);
      CHECK(reparses(x, &b));
    }
    tr_module_free(x);
    /* Not an instruction of that module. */
    CHECK(tr_extract_instr(sq, find(m, "a"), src, &ns) == NULL);
    tr_module_free(sq);
  }
  tr_buf_free(&b);
  tr_module_free(m);
}

/* Runs the per-instruction check of text on target spec with seeded
 * inputs; corrupt, when >= 0, adds delta to element corrupt_elem of the
 * target's value of anchor corrupt (a stand-in for a wrong instruction).
 * Returns the summary (caller frees) and the anchored module. */
static bool run_check(const char *text, const char *spec, bool chains, int corrupt, int corrupt_elem,
                      double delta, tr_anchored *an, tr_anchor_summary *s) {
  memset(s, 0, sizeof *s);
  memset(an, 0, sizeof *an);
  tr_module *m = parse(text);
  if (!m) return false;
  tr_diag d = {0};
  tr_target *t = NULL;
  bool ok = tr_anchor_module(m, chains, an, &d) == TR_OK && tr_target_open(spec, NULL, &t, &d) == TR_OK;
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.seed = 3;
  tr_tensor **ins = NULL;
  int nins = 0;
  ok = ok && tr_inputs_make(m, &cfg, &ins, &nins, &d) == TR_OK;
  tr_run_result res;
  tr_run_result_init(&res);
  tr_run_opts ro = {0};
  ok = ok && tr_anchor_run(an, t, ins, nins, &ro, &res, &d) == TR_OK && res.verdict == TR_VERDICT_OK;
  if (ok && corrupt >= 0) {
    tr_tensor *v = res.outputs[an->anchors[corrupt].first];
    tr_tensor_set_f(v, (size_t)corrupt_elem, tr_tensor_get_f(v, (size_t)corrupt_elem) + delta);
  }
  tr_anchor_opts o;
  tr_anchor_opts_default(&o);
  ok = ok && tr_anchor_judge(an, ins, nins, res.outputs, res.noutputs, &o, s, &d) == TR_OK;
  if (!ok) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_run_result_free(&res);
  tr_inputs_free(ins, nins);
  tr_target_close(t);
  /* The anchors point into m: it lives as long as the test needs them
   * (an->src). */
  return ok;
}

static void done(tr_anchored *an, tr_anchor_summary *s) {
  tr_module *m = (tr_module *)an->src;
  tr_anchor_summary_free(s);
  tr_anchored_free(an);
  tr_module_free(m);
}

TR_TEST(anchor_module_shape) {
  tr_module *m = parse(CHAIN);
  CHECK(m != NULL);
  if (!m) return;
  tr_anchored an;
  tr_diag d = {0};
  CHECK(tr_anchor_module(m, false, &an, &d) == TR_OK);
  /* wb, m, cb, a, t, r: not the parameters or constants. */
  CHECK_EQ_INT(an.nanchors, 6);
  CHECK_EQ_INT(an.norig, 1);
  CHECK_EQ_INT(an.nleaves, 7);
  CHECK_EQ_INT(an.nparts, 1);
  CHECK_STR(an.anchors[0].in->name, "wb");
  CHECK_STR(an.anchors[5].in->name, "r");
  CHECK_EQ_INT(an.anchors[5].first, 6);
  CHECK_EQ_INT(an.parts[0]->entry->root->noperands, 7);
  /* In parts of at most 3 outputs: 1+2, 3, 1 ... the leaves stay in
   * order. */
  CHECK(tr_anchor_split(&an, 3, &d) == TR_OK);
  int total = 0;
  for (int p = 0; p < an.nparts; p++) {
    CHECK(an.parts[p]->entry->root->noperands <= 3);
    total += an.parts[p]->entry->root->noperands;
  }
  CHECK_EQ_INT(total, 7);
  CHECK_EQ_INT(an.nparts, 3);
  tr_anchored_free(&an);
  /* chains: wb and cb (broadcasts with one user) go with their users,
   * m with a, a with t (single-user elementwise), t with r. */
  CHECK(tr_anchor_module(m, true, &an, &d) == TR_OK);
  CHECK_EQ_INT(an.nanchors, 1);
  CHECK_EQ_INT(an.anchors[0].nmembers, 6);
  CHECK_STR(an.anchors[0].in->name, "r");
  tr_anchored_free(&an);
  tr_diag_clear(&d);
  tr_module_free(m);
}

TR_TEST(anchor_clean_modules_pass) {
  const char *specs[] = {"interp", "builtin"};
  for (int k = 0; k < 2; k++)
    for (int chains = 0; chains < 2; chains++) {
      tr_anchored an;
      tr_anchor_summary s;
      CHECK(run_check(CHAIN, specs[k], chains, -1, 0, 0, &an, &s));
      CHECK_EQ_INT(s.mismatch, 0);
      CHECK_EQ_INT(s.skipped, 0);
      CHECK_EQ_INT(s.checked, chains ? 1 : 6);
      CHECK_EQ_INT(s.pass, s.checked);
      CHECK(s.first_bad == -1);
      CHECK(s.worst_ratio <= 1);
      done(&an, &s);
    }
}

TR_TEST(anchor_wrong_value_named) {
  /* A wrong value of a (anchor 3) at element 7, by far more than an add
   * may round: a is named first, with that index. Its user t is judged on
   * the wrong value but the target computed it from the right one, so t
   * mismatches too (at the same element); r passes. */
  tr_anchored an;
  tr_anchor_summary s;
  CHECK(run_check(CHAIN, "interp", false, 3, 7, 0.01, &an, &s));
  CHECK_EQ_INT(s.mismatch, 2);
  CHECK_EQ_INT(s.first_bad, 3);
  CHECK(s.per[4].judgement == TR_JUDGE_MISMATCH && s.per[4].r.first_fail == 7 && s.per[4].r.failing == 1);
  if (s.first_bad == 3) {
    const tr_anchor_result *r = &s.per[3];
    CHECK_STR(an.anchors[3].in->name, "a");
    CHECK(r->judgement == TR_JUDGE_MISMATCH);
    CHECK_EQ_INT(r->r.failing, 1);
    CHECK(r->r.has_fail && r->r.first_fail == 7);
    CHECK(fabs(r->r.first_target - r->r.first_value - 0.01) < 1e-6);
    CHECK(r->r.first_bound < 1e-6);
    tr_buf b = {0};
    tr_anchor_summary_text(&b, "seed 3", &an, &s);
    CHECK(strstr(tr_buf_str(&b), "first mismatch: %a (add) out0 at [2,1]") != NULL);
    tr_buf_free(&b);
  }
  CHECK_EQ_INT(s.pass, 4);
  done(&an, &s);
  /* A broadcast is exact (bound 0): any change to it is named. */
  CHECK(run_check(CHAIN, "interp", false, 0, 0, 1e-3, &an, &s));
  CHECK_EQ_INT(s.first_bad, 0);
  done(&an, &s);
}

/* The built-in compiler's planted fusion-broadcast-size1-map: x's
 * f32[1,3] broadcast into [1,4,3] fused into the add reads x[0] for every
 * element. The per-instruction check must name the add, where the wrong
 * value is made, not the tanh after it (with chains: the group of the
 * tanh that holds the add). */
static const char BCAST[] =
    "HloModule bc1\nENTRY e {\n  x = f32[1,3] parameter(0)\n  y = f32[1,4,3] parameter(1)\n"
    "  m = f32[1,4,3] multiply(y, y)\n"
    "  b = f32[1,4,3] broadcast(x), dimensions={0,2}\n  s = f32[1,4,3] add(b, m)\n"
    "  ROOT r = f32[1,4,3] tanh(s)\n}\n";

TR_TEST(anchor_planted_defect_found) {
  for (int chains = 0; chains < 2; chains++) {
    tr_anchored an;
    tr_anchor_summary s;
    CHECK(run_check(BCAST, "builtin:inject=fusion-broadcast-size1-map", chains, -1, 0, 0, &an, &s));
    CHECK(s.mismatch >= 1);
    CHECK(s.first_bad >= 0);
    if (s.first_bad >= 0) {
      /* chains: s is judged with its single user, the tanh, and the
       * producers fused into it. */
      const tr_anchor *a = &an.anchors[s.first_bad];
      CHECK_STR(a->in->name, chains ? "r" : "s");
      CHECK_EQ_INT(a->nmembers, chains ? 4 : 1);
      CHECK(s.per[s.first_bad].r.has_fail);
    }
    done(&an, &s);
    /* Without the defect: a pass. */
    CHECK(run_check(BCAST, "builtin", chains, -1, 0, 0, &an, &s));
    CHECK_EQ_INT(s.mismatch, 0);
    CHECK_EQ_INT(s.pass, s.checked);
    done(&an, &s);
  }
}

/* A while is one instruction: its tuple operand (a tuple of a constant
 * and an anchor) is rebuilt from the literal and the target's value, its
 * result is an anchor, and a get-tuple-element of it is judged on that. */
static const char WHILE[] =
    "HloModule w\n"
    "cond {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
    "body {\n  p = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(p), index=0\n"
    "  x = f32[4] get-tuple-element(p), index=1\n  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n  x2 = f32[4] multiply(x, x)\n  ROOT t = (s32[], f32[4]) tuple(i2, x2)\n}\n"
    "ENTRY e {\n  a = f32[4] parameter(0)\n  b = f32[4] tanh(a)\n  z = s32[] constant(0)\n"
    "  t0 = (s32[], f32[4]) tuple(z, b)\n  w = (s32[], f32[4]) while(t0), condition=cond, body=body\n"
    "  g = f32[4] get-tuple-element(w), index=1\n  h = f32[4] add(g, a)\n"
    "  ROOT r = (f32[4], f32[4]) tuple(h, b)\n}\n";

TR_TEST(anchor_while_and_tuples) {
  tr_anchored an;
  tr_anchor_summary s;
  CHECK(run_check(WHILE, "interp", false, -1, 0, 0, &an, &s));
  /* b, w (two leaves), g, h; the root's two leaves first. */
  CHECK_EQ_INT(an.nanchors, 4);
  CHECK_EQ_INT(an.norig, 2);
  CHECK_EQ_INT(an.nleaves, 2 + 1 + 2 + 1 + 1);
  CHECK_STR(an.anchors[1].in->name, "w");
  CHECK_EQ_INT(an.anchors[1].nleaves, 2);
  CHECK_EQ_INT(s.checked, 4);
  CHECK_EQ_INT(s.skipped, 0);
  CHECK_EQ_INT(s.pass, 4);
  done(&an, &s);
  /* A wrong trip counter (the while's first leaf, an integer: exact) is
   * named at the while, leaf 0; g reads the other leaf and passes. */
  CHECK(run_check(WHILE, "interp", false, 1, 0, 1.0, &an, &s));
  CHECK_EQ_INT(s.mismatch, 1);
  CHECK_EQ_INT(s.first_bad, 1);
  if (s.first_bad == 1) {
    CHECK_EQ_INT(s.per[1].leaf, 0);
    CHECK(s.per[1].r.first_target == 4 && s.per[1].r.first_value == 3);
  }
  done(&an, &s);
  CHECK(run_check(WHILE, "builtin", false, -1, 0, 0, &an, &s));
  CHECK_EQ_INT(s.pass, 4);
  done(&an, &s);
}

/* tr_shadow_opts.arg_ulps: a bf16 argument with half an ulp enters with
 * bound 2^-9 |x| at 1 <= |x| < 2 (ulp 2^-7), and a convert to f32 passes
 * it on unchanged (the convert is exact); without it the bound is 0. */
TR_TEST(anchor_arg_ulps_bound) {
  tr_module *m = parse("HloModule cv\nENTRY e {\n  p = bf16[2] parameter(0)\n"
                       "  ROOT r = f32[2] convert(p)\n}\n");
  CHECK(m != NULL);
  if (!m) return;
  int64_t dims[1] = {2};
  tr_tensor *t = tr_tensor_new(TR_DT_BF16, 1, dims, NULL);
  tr_tensor_set_f(t, 0, 1.5);
  tr_tensor_set_f(t, 1, -96);
  double half = 0.5;
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  tr_shadow_out *o = NULL;
  int n = 0;
  tr_diag d = {0};
  for (int with = 0; with < 2; with++) {
    so.arg_ulps = with ? &half : NULL;
    CHECK(tr_eval_shadow(m, &so, &t, 1, &o, &n, &d) == TR_OK);
    if (n == 1) {
      CHECK(o[0].value[0] == 1.5 && o[0].value[1] == -96);
      CHECK(o[0].bound[0] == (with ? ldexp(1, -8) : 0));  /* ulp(1.5) = 2^-7 */
      CHECK(o[0].bound[1] == (with ? ldexp(1, -2) : 0));  /* ulp(96) = 2^-1 */
    }
    tr_shadow_free(o, n);
  }
  tr_diag_clear(&d);
  tr_tensor_free(t);
  tr_module_free(m);
}

/* fma-contraction: a target that fuses add(multiply(a, b), c) into one
 * fma stores round(a*b) for the multiply, but the add saw a*b exactly.
 * a = b = 1 + 2^-12: a*b = 1 + 2^-11 + 2^-24 rounds (tie, to even) to
 * 1 + 2^-11; c = -(1 + 2^-11); fma gives 2^-24, the stored product plus c
 * gives 0. Strict: the add mismatches (bound 0 on exact operands); with a
 * profile naming fma-contraction the product enters with half an ulp
 * (2^-24) and the fma's value passes. */
TR_TEST(anchor_fma_contraction) {
  tr_module *m = parse("HloModule fma\nENTRY e {\n  a = f32[1] parameter(0)\n  b = f32[1] parameter(1)\n"
                       "  c = f32[1] parameter(2)\n  p = f32[1] multiply(a, b)\n"
                       "  ROOT s = f32[1] add(p, c)\n}\n");
  CHECK(m != NULL);
  if (!m) return;
  int64_t dims[1] = {1};
  tr_tensor *ins[3];
  double v[3] = {1 + ldexp(1, -12), 1 + ldexp(1, -12), -(1 + ldexp(1, -11))};
  for (int i = 0; i < 3; i++) {
    ins[i] = tr_tensor_new(TR_DT_F32, 1, dims, NULL);
    tr_tensor_set_f(ins[i], 0, v[i]);
  }
  const char *ptext = "target t\nfma-contraction covered\n";
  tr_profile *p = NULL;
  tr_diag d = {0};
  CHECK(tr_profile_parse("p.conf", ptext, strlen(ptext), &p, &d) == TR_OK);
  tr_anchored an;
  CHECK(tr_anchor_module(m, false, &an, &d) == TR_OK);
  tr_target *t = NULL;
  CHECK(tr_target_open("interp", NULL, &t, &d) == TR_OK);
  tr_run_result res;
  tr_run_opts ro = {0};
  CHECK(tr_anchor_run(&an, t, ins, 3, &ro, &res, &d) == TR_OK && res.verdict == TR_VERDICT_OK);
  CHECK_EQ_INT(an.nanchors, 2);
  if (res.verdict == TR_VERDICT_OK && an.nanchors == 2) {
    CHECK(tr_tensor_get_f(res.outputs[an.anchors[0].first], 0) == 1 + ldexp(1, -11));
    CHECK(tr_tensor_get_f(res.outputs[an.anchors[1].first], 0) == 0);
    tr_tensor_set_f(res.outputs[an.anchors[1].first], 0, ldexp(1, -24)); /* what the fma gives */
    for (int prof = 0; prof < 2; prof++) {
      tr_anchor_opts o;
      tr_anchor_opts_default(&o);
      o.profile = prof ? p : NULL;
      tr_anchor_summary s;
      CHECK(tr_anchor_judge(&an, ins, 3, res.outputs, res.noutputs, &o, &s, &d) == TR_OK);
      CHECK_EQ_INT(s.mismatch, prof ? 0 : 1);
      CHECK_EQ_INT(s.first_bad, prof ? -1 : 1);
      CHECK_EQ_INT(s.excused_by[TR_PR_FMA_CONTRACTION], prof ? 1 : 0);
      CHECK_EQ_INT(s.excused_by[TR_PR_NARROW_IN_F32], 0);
      if (prof) CHECK(s.per[1].excused == 1u << TR_PR_FMA_CONTRACTION);
      tr_anchor_summary_free(&s);
    }
  }
  tr_run_result_free(&res);
  tr_target_close(t);
  tr_anchored_free(&an);
  tr_profile_free(p);
  for (int i = 0; i < 3; i++) tr_tensor_free(ins[i]);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* narrow-in-f32: XLA CPU computes a bf16 multiply in f32 and, inside a
 * fusion, converts that f32 value, rounding to bf16 only the stored
 * multiply (measured: docs/MODELS.md). a = b = 1 + 2^-7 (bf16): a*b =
 * 1 + 2^-6 + 2^-14, stored as bf16 1 + 2^-6; the convert gives the f32
 * product. Strict, and with a profile that names the rule for f16 only:
 * the convert mismatches (a convert is exact: bound 0) by 2^-14, half a
 * bf16 ulp at most (2^-8 here). With narrow-in-f32 bf16 the stored
 * multiply enters with half an ulp: pass, named after the rule; a value
 * one bf16 ulp off stays a mismatch. */
TR_TEST(anchor_narrow_in_f32) {
  tr_module *m = parse("HloModule nar\nENTRY e {\n  a = bf16[1] parameter(0)\n  b = bf16[1] parameter(1)\n"
                       "  p = bf16[1] multiply(a, b)\n  ROOT r = f32[1] convert(p)\n}\n");
  CHECK(m != NULL);
  if (!m) return;
  int64_t dims[1] = {1};
  tr_tensor *ins[2];
  for (int i = 0; i < 2; i++) {
    ins[i] = tr_tensor_new(TR_DT_BF16, 1, dims, NULL);
    tr_tensor_set_f(ins[i], 0, 1 + ldexp(1, -7));
  }
  static const char *const ptexts[3] = {"narrow-in-f32 bf16\n", "narrow-in-f32 f16\n", NULL};
  tr_profile *ps[3] = {NULL, NULL, NULL};
  tr_diag d = {0};
  for (int i = 0; i < 2; i++)
    CHECK(tr_profile_parse("p.conf", ptexts[i], strlen(ptexts[i]), &ps[i], &d) == TR_OK);
  tr_anchored an;
  CHECK(tr_anchor_module(m, false, &an, &d) == TR_OK);
  tr_target *t = NULL;
  CHECK(tr_target_open("interp", NULL, &t, &d) == TR_OK);
  tr_run_result res;
  tr_run_opts ro = {0};
  CHECK(tr_anchor_run(&an, t, ins, 2, &ro, &res, &d) == TR_OK && res.verdict == TR_VERDICT_OK);
  CHECK_EQ_INT(an.nanchors, 2);
  if (res.verdict == TR_VERDICT_OK && an.nanchors == 2) {
    tr_tensor *pv = res.outputs[an.anchors[0].first], *rv = res.outputs[an.anchors[1].first];
    CHECK(tr_tensor_get_f(pv, 0) == 1 + ldexp(1, -6));
    CHECK(tr_tensor_get_f(rv, 0) == 1 + ldexp(1, -6));
    for (int off = 0; off < 2; off++) {
      /* What XLA gives: the f32 product; then one bf16 ulp (2^-7) off. */
      tr_tensor_set_f(rv, 0, 1 + ldexp(1, -6) + (off ? ldexp(1, -7) : ldexp(1, -14)));
      for (int k = 0; k < 3; k++) {
        tr_anchor_opts o;
        tr_anchor_opts_default(&o);
        o.profile = ps[k];
        tr_anchor_summary s;
        CHECK(tr_anchor_judge(&an, ins, 2, res.outputs, res.noutputs, &o, &s, &d) == TR_OK);
        bool pass = k == 0 && !off;
        CHECK_EQ_INT(s.mismatch, pass ? 0 : 1);
        CHECK_EQ_INT(s.first_bad, pass ? -1 : 1);
        CHECK_EQ_INT(s.excused_by[TR_PR_NARROW_IN_F32], pass ? 1 : 0);
        if (pass) {
          CHECK(s.per[1].excused == 1u << TR_PR_NARROW_IN_F32);
          tr_buf b = {0};
          tr_anchor_summary_text(&b, "seed 0", &an, &s);
          CHECK(strstr(tr_buf_str(&b), "; excused 1 by narrow-in-f32)\n") != NULL);
          tr_buf_free(&b);
        } else {
          CHECK(s.per[1].r.first_target == tr_tensor_get_f(rv, 0));
        }
        tr_anchor_summary_free(&s);
      }
    }
  }
  tr_run_result_free(&res);
  tr_target_close(t);
  tr_anchored_free(&an);
  for (int i = 0; i < 3; i++) tr_profile_free(ps[i]);
  for (int i = 0; i < 2; i++) tr_tensor_free(ins[i]);
  tr_diag_clear(&d);
  tr_module_free(m);
}
