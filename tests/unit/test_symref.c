/* test_symref.c - ops.def's y column against the symbolic reference of
 * trench verify (src/verify/ref.c): every op the generator makes and the
 * column claims is modelled on some generated instance of it (the one
 * instruction extracted, each operand a parameter), and every op the
 * column does not claim is declined by name. */
#include "../../src/fuzz/gen.h"
#include "../../src/verify/ref.h"
#include "test.h"

#include <stdlib.h>
#include <string.h>

/* Evaluates element 0 of the module's output symbolically. 1: modelled,
 * 0: declined (the message in why), -1: the probe does not apply (an
 * empty or tuple result). */
static int probe(const tr_module *m, tr_buf *why) {
  const tr_comp *e = m->entry;
  if (!tr_shape_is_array(e->root->shape) || tr_shape_count(e->root->shape) == 0) return -1;
  bool idx[16] = {false};
  vr_index_params(m, idx);
  tr_tensor *ints[16] = {NULL};
  for (int p = 0; p < e->nparams && p < 16; p++) {
    const tr_shape *s = e->params[p]->shape;
    if (!tr_shape_is_array(s)) return -1;
    if (idx[p]) ints[p] = tr_tensor_new(s->dtype, s->rank, s->dims, NULL);
  }
  vx_ctx *cx = vx_ctx_new();
  vr_ctx *r = vr_new(m, cx, ints);
  tr_diag d = {0};
  vx *v = vr_elem(r, 0, 0, &d);
  if (!v && tr_diag_first(&d)) tr_buf_puts(why, tr_diag_first(&d));
  tr_diag_clear(&d);
  vr_free(r);
  vx_ctx_free(cx);
  for (int p = 0; p < 16; p++) tr_tensor_free(ints[p]);
  return v != NULL;
}

/* Forms the generator rarely makes that the reference models: a power
 * by a constant exponent, a while over a tuple state (tuple,
 * get-tuple-element). Each modelled probe counts for every op in it. */
static const char *const extra[] = {
  "HloModule p\nENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n"
  "  %c = f32[] constant(2)\n  %b = f32[4] broadcast(%c), dimensions={}\n"
  "  ROOT %p = f32[4] power(%x, %b)\n}\n",
  "HloModule w\n%cond (s: (s32[], f32[4])) -> pred[] {\n  %s = (s32[], f32[4]) parameter(0)\n"
  "  %i = s32[] get-tuple-element(%s), index=0\n  %n = s32[] constant(3)\n"
  "  ROOT %lt = pred[] compare(%i, %n), direction=LT\n}\n"
  "%body (s: (s32[], f32[4])) -> (s32[], f32[4]) {\n  %s = (s32[], f32[4]) parameter(0)\n"
  "  %i = s32[] get-tuple-element(%s), index=0\n  %one = s32[] constant(1)\n"
  "  %j = s32[] add(%i, %one)\n  %v = f32[4] get-tuple-element(%s), index=1\n"
  "  %w = f32[4] multiply(%v, %v)\n  ROOT %t = (s32[], f32[4]) tuple(%j, %w)\n}\n"
  "ENTRY %e (x: f32[4]) -> f32[4] {\n  %x = f32[4] parameter(0)\n  %z = s32[] constant(0)\n"
  "  %t = (s32[], f32[4]) tuple(%z, %x)\n  %r = (s32[], f32[4]) while(%t), condition=%cond, body=%body\n"
  "  ROOT %o = f32[4] get-tuple-element(%r), index=1\n}\n",
};

TR_TEST(optable_symbolic_column) {
  int claimed = 0;
  bool by_extra[TR_OP_COUNT] = {false};
  for (size_t k = 0; k < sizeof extra / sizeof *extra; k++) {
    tr_diag d = {0};
    tr_module *m = tr_parse("extra.hlo", extra[k], strlen(extra[k]), NULL, &d);
    CHECK(m != NULL);
    tr_diag_clear(&d);
    if (!m) continue;
    tr_buf why = {0};
    int r = probe(m, &why);
    if (r != 1) fprintf(stderr, "  probe %zu not modelled: %s\n", k, tr_buf_str(&why));
    CHECK(r == 1);
    for (int c = 0; c < m->ncomps && r == 1; c++)
      for (int i = 0; i < m->comps[c]->ninstrs; i++) by_extra[m->comps[c]->instrs[i]->op] = true;
    tr_buf_free(&why);
    tr_module_free(m);
  }
  for (int op = 0; op < TR_OP_COUNT; op++) {
    if ((!tr_gen_can_make((tr_op)op) && !by_extra[op]) || op == TR_OP_PARAMETER) continue;
    bool y = tr_op_can((tr_op)op, TR_MODE_SYMBOLIC);
    int ok = 0, tried = 0;
    tr_buf why = {0};
    for (uint64_t seed = 1; seed <= 24 && !(y && ok); seed++) {
      tr_gen_opts o;
      tr_gen_opts_init(&o);
      o.seed = seed;
      o.size = 3;
      o.ops = tr_ops[op].name;
      o.flags = TR_GEN_NO_BIG | TR_GEN_NO_LAYOUTS | TR_GEN_CORE_TYPES;
      tr_module *m = NULL;
      tr_diag d = {0};
      if (tr_gen_module(&o, &m, &d) != TR_OK) { tr_diag_clear(&d); continue; }
      for (int i = 0; i < m->entry->ninstrs; i++) {
        const tr_instr *in = m->entry->instrs[i];
        if (in->op != (tr_op)op) continue;
        tr_module *x = tr_extract_instr(m, in, NULL, NULL);
        if (!x) continue;
        tr_buf msg = {0};
        int r = probe(x, &msg);
        tr_module_free(x);
        if (r < 0) { tr_buf_free(&msg); continue; }
        tried++;
        ok += r;
        if (!r && !why.n) tr_buf_puts(&why, tr_buf_str(&msg));
        if (!r && !y && !strstr(tr_buf_str(&msg), tr_ops[op].name)) {
          fprintf(stderr, "  %s (not in column y) declined without its name: %s\n", tr_ops[op].name, tr_buf_str(&msg));
          tr_test_failed++;
        }
        tr_buf_free(&msg);
      }
      tr_module_free(m);
    }
    if (by_extra[op]) ok++;
    if (y) {
      claimed++;
      if (!ok) {
        fprintf(stderr, "  %s claims column y but no generated instance (%d tried) is modelled: %s\n",
                tr_ops[op].name, tried, why.n ? tr_buf_str(&why) : "none made");
        tr_test_failed++;
      }
    } else if (ok) {
      fprintf(stderr, "  %s is modelled on %d instances but column y does not claim it\n", tr_ops[op].name, ok);
      tr_test_failed++;
    }
    tr_buf_free(&why);
  }
  CHECK(claimed > 40);
}
