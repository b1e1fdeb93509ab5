/* test_ir.c - editing the IR: use lists stay exact through operand
 * replacement, insertion and removal; printing stays parseable when new
 * computations are added after their callers. */
#include "../../src/ir/ir.h"
#include "test.h"

#include <stdlib.h>

static tr_module *parse_ok(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("ir.hlo", text, strlen(text), NULL, &d);
  if (!m) tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  return m;
}

static const char *k_mod =
    "HloModule m\n"
    "ENTRY e {\n"
    "  p = f32[4] parameter(0)\n"
    "  q = f32[4] parameter(1)\n"
    "  a = f32[4] add(p, p)\n"
    "  b = f32[4] multiply(a, q)\n"
    "  ROOT r = f32[4] negate(a)\n"
    "}\n";

TR_TEST(ir_use_lists_after_parse) {
  tr_module *m = parse_ok(k_mod);
  CHECK(m != NULL);
  if (!m) return;
  tr_comp *e = m->entry;
  tr_instr *p = tr_comp_find(e, "p"), *a = tr_comp_find(e, "a");
  CHECK_EQ_INT(p->nusers, 1); /* add(p, p) is one user */
  CHECK_EQ_INT(a->nusers, 2);
  CHECK(a->users[0] == tr_comp_find(e, "b") && a->users[1] == tr_comp_find(e, "r"));
  tr_module_free(m);
}

TR_TEST(ir_replace_uses_and_remove) {
  tr_module *m = parse_ok(k_mod);
  CHECK(m != NULL);
  if (!m) return;
  tr_comp *e = m->entry;
  tr_instr *p = tr_comp_find(e, "p"), *q = tr_comp_find(e, "q"), *a = tr_comp_find(e, "a");
  tr_instr *b = tr_comp_find(e, "b"), *r = tr_comp_find(e, "r");
  /* Replace the root: the root pointer follows. */
  tr_instr_replace_uses(r, b);
  CHECK(e->root == b);
  tr_comp_remove(e, r);
  CHECK_EQ_INT(e->ninstrs, 4);
  CHECK_EQ_INT(a->nusers, 1);
  /* Redirect one of add(p, p)'s operands: p keeps its user until both go. */
  tr_instr_replace_operand(a, 0, q);
  CHECK_EQ_INT(p->nusers, 1);
  tr_instr_replace_operand(a, 1, q);
  CHECK_EQ_INT(p->nusers, 0);
  CHECK_EQ_INT(q->nusers, 2); /* b and a */
  /* A new instruction inserted before its user keeps operands first. */
  tr_instr *n = tr_instr_new(m, TR_OP_NEGATE, "n", tr_shape_clone(m->arena, q->shape));
  tr_comp_insert_before(e, a, n);
  tr_instr_set_operands(n, &q, 1);
  tr_instr_replace_operand(a, 1, n);
  CHECK(e->instrs[2] == n && e->instrs[3] == a);
  tr_buf b1 = {0};
  tr_print_module(&b1, m);
  CHECK_CONTAINS(b1.p, "%n = f32[4] negate(%q)\n  %a = f32[4] add(%q, %n)\n  ROOT %b");
  tr_diag d = {0};
  tr_module *m2 = tr_parse("re.hlo", b1.p, b1.n, NULL, &d);
  CHECK(m2 != NULL);
  CHECK(m2 && tr_verify(m2, &d) == TR_OK);
  tr_module_free(m2);
  tr_diag_clear(&d);
  tr_buf_free(&b1);
  tr_module_free(m);
}

TR_TEST(ir_new_callee_printed_first) {
  tr_module *m = parse_ok(k_mod);
  CHECK(m != NULL);
  if (!m) return;
  /* A fusion computation created after the entry must print before it. */
  tr_comp *f = tr_comp_new(m, "fused");
  tr_instr *fp = tr_instr_new(m, TR_OP_PARAMETER, "fp", tr_shape_array(m->arena, TR_DT_F32, 1, (int64_t[]){4}));
  tr_comp_append(f, fp);
  tr_instr *fr = tr_instr_new(m, TR_OP_ABS, "fr", tr_shape_array(m->arena, TR_DT_F32, 1, (int64_t[]){4}));
  tr_comp_append(f, fr);
  tr_instr_set_operands(fr, &fp, 1);
  f->root = fr;
  f->nparams = 1;
  f->params = tr_arena_alloc(m->arena, sizeof(tr_instr *));
  f->params[0] = fp;
  tr_comp *e = m->entry;
  tr_instr *q = tr_comp_find(e, "q");
  tr_instr *fu = tr_instr_new(m, TR_OP_FUSION, "fu", tr_shape_clone(m->arena, q->shape));
  tr_comp_insert_before(e, tr_comp_find(e, "a"), fu);
  tr_instr_set_operands(fu, &q, 1);
  tr_instr_add_attr(m, fu, TR_ATTR_KIND, TR_AK_IDENT, NULL)->u.s = "kLoop";
  tr_instr_add_attr(m, fu, TR_ATTR_CALLS, TR_AK_COMP, NULL)->u.comp = f;
  tr_comp *order[8];
  tr_module_callee_order(m, order);
  CHECK(order[0] == f && order[1] == e);
  tr_buf b = {0};
  tr_print_module(&b, m);
  CHECK(strstr(b.p, "%fused") < strstr(b.p, "ENTRY"));
  tr_diag d = {0};
  tr_module *m2 = tr_parse("re.hlo", b.p, b.n, NULL, &d);
  CHECK(m2 && tr_verify(m2, &d) == TR_OK);
  if (d.nmsgs) tr_diag_print(&d, stderr);
  tr_module_free(m2);
  tr_diag_clear(&d);
  tr_buf_free(&b);
  tr_module_free(m);
}

/* ---- names-aside structural equality (same.c) ---- */

static const char *k_sent =
    "HloModule sent\n"
    "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT s = f32[] add(x, y)\n}\n"
    "ENTRY e {\n"
    "  p = f32[2,3] parameter(0)\n"
    "  r1 = f32[6] reshape(p)\n"
    "  r2 = f32[3,2] reshape(r1)\n"
    "  z = f32[] constant(0)\n"
    "  red = f32[3] reduce(r2, z), dimensions={1}, to_apply=add, metadata={op_name=\"a\"}\n"
    "  ROOT n = f32[3] negate(red)\n"
    "}\n";

/* The same program as XLA's importer writes it back: other names, default
 * layouts written out, another order, attributes reordered, metadata gone. */
static const char *k_renamed =
    "HloModule main.7, entry_computation_layout={(f32[2,3]{1,0})->f32[3]{0}}\n"
    "region_0.2 {\n  Arg_0.3 = f32[] parameter(0)\n  Arg_1.4 = f32[] parameter(1)\n"
    "  ROOT add.5 = f32[] add(Arg_0.3, Arg_1.4)\n}\n"
    "ENTRY main.7 {\n"
    "  constant.2 = f32[] constant(0)\n"
    "  Arg_0.1 = f32[2,3]{1,0} parameter(0)\n"
    "  reshape.3 = f32[6]{0} reshape(Arg_0.1)\n"
    "  reshape.4 = f32[3,2]{1,0} reshape(reshape.3)\n"
    "  reduce.6 = f32[3]{0} reduce(reshape.4, constant.2), to_apply=region_0.2, dimensions={1}\n"
    "  ROOT negate.7 = f32[3]{0} negate(reduce.6)\n"
    "}\n";

/* The reshape chain folded, as XLA's MLIR canonicalizer does. */
static const char *k_folded =
    "HloModule main\n"
    "region {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT c = f32[] add(a, b)\n}\n"
    "ENTRY main {\n"
    "  p = f32[2,3] parameter(0)\n"
    "  r = f32[3,2] reshape(p)\n"
    "  z = f32[] constant(0)\n"
    "  red = f32[3] reduce(r, z), dimensions={1}, to_apply=region\n"
    "  ROOT n = f32[3] negate(red)\n"
    "}\n";

TR_TEST(ir_same_program_names_aside) {
  tr_module *a = parse_ok(k_sent), *b = parse_ok(k_renamed), *c = parse_ok(k_folded);
  CHECK(a && b && c);
  if (!a || !b || !c) return;
  tr_buf diff = {0};
  bool dead = true;
  CHECK(tr_module_same_program(a, b, &diff, &dead));
  CHECK(!dead && diff.n == 0);
  CHECK(!tr_module_same_program(a, c, &diff, &dead));
  CHECK(!dead);
  /* The chain is named as gone and the single reshape as new. */
  CHECK(strstr(tr_buf_str(&diff), "- f32[6] reshape(parameter)") != NULL);
  CHECK(strstr(tr_buf_str(&diff), "- f32[3,2] reshape(reshape)") != NULL);
  CHECK(strstr(tr_buf_str(&diff), "+ f32[3,2] reshape(parameter)") != NULL);
  tr_buf_free(&diff);
  tr_module_free(a);
  tr_module_free(b);
  tr_module_free(c);
}

TR_TEST(ir_same_program_dead_code_and_literals) {
  tr_module *a = parse_ok(
      "HloModule a\nENTRY e {\n  p = f32[2] parameter(0)\n  d = f32[2] sine(p)\n"
      "  k = f32[2] constant({1, 2})\n  ROOT r = f32[2] add(p, k)\n}\n");
  tr_module *b = parse_ok(
      "HloModule b\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  k = f32[2] constant({1, 2})\n  ROOT r = f32[2] add(p, k)\n}\n");
  tr_module *c = parse_ok(
      "HloModule c\nENTRY e {\n  p = f32[2] parameter(0)\n"
      "  k = f32[2] constant({1, 3})\n  ROOT r = f32[2] add(p, k)\n}\n");
  CHECK(a && b && c);
  if (!a || !b || !c) return;
  tr_buf diff = {0};
  bool dead = false;
  CHECK(!tr_module_same_program(a, b, &diff, &dead));
  CHECK(dead); /* only the unused sine is gone */
  CHECK(strstr(tr_buf_str(&diff), "- f32[2] sine(parameter)") != NULL);
  tr_buf_free(&diff);
  CHECK(!tr_module_same_program(b, c, &diff, &dead));
  CHECK(!dead); /* another literal is another program */
  tr_buf_free(&diff);
  tr_module_free(a);
  tr_module_free(b);
  tr_module_free(c);
}

/* Canonical forms (tr_module_same_canonical): what XLA's HLO -> MLIR ->
 * HLO trip rewrites without changing a value is equivalent; a folded
 * computation, another literal or another op is not. */
TR_TEST(ir_same_canonical_forms) {
  tr_module *a = parse_ok(k_sent), *c = parse_ok(k_folded);
  CHECK(a && c);
  if (a && c) CHECK(tr_module_same_canonical(a, c)); /* the reshape chain */
  tr_module_free(a);
  tr_module_free(c);
  static const char *const equiv[][2] = {
      /* an identity broadcast, a layout, an unused op, a duplicate */
      {"HloModule a\nENTRY e {\n  p = f32[2,3]{0,1} parameter(0)\n"
       "  b = f32[2,3] broadcast(p), dimensions={0,1}\n  s = f32[2,3] sine(p)\n"
       "  x = f32[2,3] exponential(b)\n  y = f32[2,3] exponential(p)\n  ROOT r = f32[2,3] add(x, y)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[2,3] parameter(0)\n  x = f32[2,3] exponential(p)\n"
       "  ROOT r = f32[2,3] add(x, x)\n}\n"},
      /* a splat constant against a broadcast scalar; commutative order */
      {"HloModule a\nENTRY e {\n  p = f32[1,3] parameter(0)\n  k = f32[1,1] constant({ {2.5} })\n"
       "  kb = f32[1,3] broadcast(k), dimensions={0,1}\n  ROOT r = f32[1,3] multiply(kb, p)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[1,3] parameter(0)\n  k = f32[] constant(2.5)\n"
       "  kb = f32[1,3] broadcast(k), dimensions={}\n  ROOT r = f32[1,3] multiply(p, kb)\n}\n"},
      /* a nested output tuple flattened; get-tuple-element of a tuple */
      {"HloModule a\nENTRY e {\n  p = f32[2] parameter(0)\n  n = f32[2] negate(p)\n"
       "  t = (f32[2], f32[2]) tuple(p, n)\n  g = f32[2] get-tuple-element(t), index=1\n"
       "  ROOT r = (f32[2], (f32[2], f32[2])) tuple(g, t)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[2] parameter(0)\n  n = f32[2] negate(p)\n"
       "  ROOT r = (f32[2], f32[2], f32[2]) tuple(n, p, n)\n}\n"},
      /* an iota against a broadcast 1-d iota; identity slices and a
       * reduce-precision that rounds nothing; clamp's scalar bounds */
      {"HloModule a\nENTRY e {\n  p = f32[4,3] parameter(0)\n  i = s32[4,3] iota(), iota_dimension=0\n"
       "  s = f32[4,3] slice(p), slice={[0:4], [0:3]}\n  z = s32[] constant(0)\n"
       "  d = f32[4,3] dynamic-slice(s, z, z), dynamic_slice_sizes={4,3}\n"
       "  r = f32[4,3] reduce-precision(d), exponent_bits=8, mantissa_bits=23\n"
       "  lo = f32[] constant(-1)\n  hi = f32[] constant(1)\n  c = f32[4,3] clamp(lo, r, hi)\n"
       "  ROOT t = (s32[4,3], f32[4,3]) tuple(i, c)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[4,3] parameter(0)\n  i1 = s32[4] iota(), iota_dimension=0\n"
       "  i = s32[4,3] broadcast(i1), dimensions={0}\n  lo = f32[] constant(-1)\n"
       "  lb = f32[4,3] broadcast(lo), dimensions={}\n  hi = f32[] constant(1)\n"
       "  hb = f32[4,3] broadcast(hi), dimensions={}\n  c = f32[4,3] clamp(lb, p, hb)\n"
       "  ROOT t = (s32[4,3], f32[4,3]) tuple(i, c)\n}\n"},
  };
  for (int i = 0; i < (int)(sizeof equiv / sizeof equiv[0]); i++) {
    tr_module *x = parse_ok(equiv[i][0]), *y = parse_ok(equiv[i][1]);
    CHECK(x && y);
    if (x && y) {
      CHECK(!tr_module_same_program(x, y, NULL, NULL));
      if (!tr_module_same_canonical(x, y)) fprintf(stderr, "  equivalent pair %d not found equivalent\n", i);
      CHECK(tr_module_same_canonical(x, y));
    }
    tr_module_free(x);
    tr_module_free(y);
  }
  static const char *const other[][2] = {
      /* a folded computation */
      {"HloModule a\nENTRY e {\n  p = f32[2] parameter(0)\n  k = f32[2] constant({1, 2})\n"
       "  n = f32[2] negate(k)\n  ROOT r = f32[2] add(p, n)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[2] parameter(0)\n  k = f32[2] constant({-1, -2})\n"
       "  ROOT r = f32[2] add(p, k)\n}\n"},
      /* a transpose is no reshape; a non-commutative op keeps its order */
      {"HloModule a\nENTRY e {\n  p = f32[2,2] parameter(0)\n  t = f32[2,2] transpose(p), dimensions={1,0}\n"
       "  ROOT r = f32[2,2] subtract(t, p)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[2,2] parameter(0)\n  t = f32[2,2] reshape(p)\n"
       "  ROOT r = f32[2,2] subtract(p, t)\n}\n"},
      /* another splat value; an output dropped */
      {"HloModule a\nENTRY e {\n  p = f32[3] parameter(0)\n  k = f32[3] constant({2, 2, 2})\n"
       "  ROOT r = (f32[3], f32[3]) tuple(p, k)\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[3] parameter(0)\n  k = f32[] constant(3)\n"
       "  kb = f32[3] broadcast(k), dimensions={}\n  ROOT r = (f32[3]) tuple(kb)\n}\n"},
      /* a reduce-precision that rounds; an iota along another dim */
      {"HloModule a\nENTRY e {\n  p = f32[2] parameter(0)\n"
       "  ROOT r = f32[2] reduce-precision(p), exponent_bits=8, mantissa_bits=10\n}\n",
       "HloModule b\nENTRY e {\n  p = f32[2] parameter(0)\n  ROOT r = f32[2] copy(p)\n}\n"},
      {"HloModule a\nENTRY e {\n  ROOT i = s32[4,3] iota(), iota_dimension=1\n}\n",
       "HloModule b\nENTRY e {\n  i1 = s32[4] iota(), iota_dimension=0\n"
       "  ROOT i = s32[4,3] broadcast(i1), dimensions={0}\n}\n"},
  };
  for (int i = 0; i < (int)(sizeof other / sizeof other[0]); i++) {
    tr_module *x = parse_ok(other[i][0]), *y = parse_ok(other[i][1]);
    CHECK(x && y);
    if (x && y) CHECK(!tr_module_same_canonical(x, y));
    tr_module_free(x);
    tr_module_free(y);
  }
}
