/* test_build.c - the inferring IR builder (src/ir/build.c): shapes come
 * from inference, attributes are typed, a refused instruction leaves the
 * computation and its operands' use lists untouched, and what is built
 * verifies and prints as the expected HLO text. */
#include "test.h"

#include "../../src/ir/build.h"

TR_TEST(build_infers_shapes) {
  tr_module *m = tr_module_new("b");
  tr_comp *add = tr_build_comp(m, "add", false);
  tr_shape *sf = tr_shape_array(m->arena, TR_DT_F32, 0, NULL);
  tr_instr *a = tr_build_param(add, sf), *b = tr_build_param(add, sf);
  tr_build_root(add, tr_build_binary(add, TR_OP_ADD, a, b, NULL));
  tr_comp *c = tr_build_comp(m, "main", true);
  int64_t d23[2] = {2, 3}, perm[2] = {1, 0}, m2m[2] = {0, 1};
  tr_shape *s = tr_shape_array(m->arena, TR_DT_F32, 2, d23);
  tr_shape_set_layout(m->arena, s, m2m);
  tr_instr *x = tr_build_param(c, s);
  CHECK(x->shape->has_layout && x->shape->layout[0] == 0);
  float one = 1;
  tr_instr *k = tr_build_constant(c, sf, &one);
  tr_buf why = {0};
  tr_instr *t = tr_build_transpose(c, x, perm, &why);
  CHECK(t && t->shape->dims[0] == 3 && t->shape->dims[1] == 2);
  int64_t none = 0;
  tr_instr *kb = tr_build_broadcast(c, k, t->shape->dims, 2, &none, &why);
  tr_instr *sum = tr_build_binary(c, TR_OP_MULTIPLY, t, kb, &why);
  tr_instr *cmp = tr_build_compare(c, sum, t, "GT", &why);
  CHECK(cmp && cmp->shape->dtype == TR_DT_PRED);
  tr_instr *cv = tr_build_convert(c, cmp, TR_DT_S32, &why);
  CHECK(cv && cv->shape->dtype == TR_DT_S32 && cv->shape->rank == 2);
  int64_t d6[1] = {6};
  tr_instr *r = tr_build_reshape(c, sum, d6, 1, &why);
  tr_instr *ops[2] = {r, k};
  tr_instr *red = tr_build_begin(c, TR_OP_REDUCE, ops, 2);
  int64_t zero = 0;
  tr_build_ints(red, TR_ATTR_DIMENSIONS, &zero, 1);
  tr_build_callee(red, TR_ATTR_TO_APPLY, add);
  red = tr_build_end(red, NULL, &why);
  CHECK(red && red->shape->rank == 0 && red->shape->dtype == TR_DT_F32);
  tr_instr *outs[2] = {cv, red};
  tr_instr *tup = tr_build_tuple(c, outs, 2, &why);
  tr_instr *g = tr_build_gte(c, tup, 1, &why);
  CHECK(g && g->shape->rank == 0);
  tr_build_root(c, tup);
  CHECK_STR(why.n ? tr_buf_str(&why) : "", "");
  tr_diag d = {0};
  CHECK_EQ_INT(tr_verify(m, &d), TR_OK);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  /* the text: layouts kept, names from ids */
  tr_buf txt = {0};
  tr_print_module(&txt, m);
  CHECK_CONTAINS(tr_buf_str(&txt), "f32[2,3]{0,1} parameter(0)");
  CHECK_CONTAINS(tr_buf_str(&txt), "f32[3,2] transpose(%parameter.");
  CHECK_CONTAINS(tr_buf_str(&txt), "f32[] reduce(%reshape.");
  tr_buf_free(&txt);
  tr_buf_free(&why);
  tr_module_free(m);
}

/* An invalid instruction is refused with the inference's reason and
 * leaves no trace: not in the computation, not among its operands' users. */
TR_TEST(build_refuses_without_trace) {
  tr_module *m = tr_module_new("b");
  tr_comp *c = tr_build_comp(m, "main", true);
  int64_t d3[1] = {3}, d4[1] = {4};
  tr_instr *x = tr_build_param(c, tr_shape_array(m->arena, TR_DT_F32, 1, d3));
  tr_instr *y = tr_build_param(c, tr_shape_array(m->arena, TR_DT_F32, 1, d4));
  int n = c->ninstrs;
  tr_buf why = {0};
  CHECK(!tr_build_binary(c, TR_OP_ADD, x, y, &why));
  CHECK(why.n > 0);
  CHECK_EQ_INT(c->ninstrs, n);
  CHECK_EQ_INT(x->nusers, 0);
  CHECK_EQ_INT(y->nusers, 0);
  why.n = 0;
  int64_t d5[1] = {5};
  CHECK(!tr_build_reshape(c, x, d5, 1, &why));
  CHECK_CONTAINS(tr_buf_str(&why), "element count");
  /* a transpose without its required attribute */
  why.n = 0;
  CHECK(!tr_build_end(tr_build_begin(c, TR_OP_TRANSPOSE, &x, 1), NULL, &why));
  CHECK_EQ_INT(c->ninstrs, n);
  tr_build_root(c, tr_build_binary(c, TR_OP_ADD, x, x, &why));
  CHECK_EQ_INT(x->nusers, 1);
  tr_diag d = {0};
  CHECK_EQ_INT(tr_verify(m, &d), TR_OK);
  tr_diag_clear(&d);
  tr_buf_free(&why);
  tr_module_free(m);
}
