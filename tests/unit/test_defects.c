/* test_defects.c - the defect registry (src/comp/defects.def): for every
 * defect, a hand-written module it breaks (with the defect injected the
 * builtin result differs from the reference at a known element; without
 * it they agree bit for bit) and a module or input where its triggering
 * condition does not hold (right even with the defect injected). */
#include "../../src/comp/defects.h"
#include "../../src/eval/eval.h"
#include "../../src/target/target.h"
#include "test.h"
#include "test_defects.h"

#include <stdlib.h>

/* From test_builtin.c. */
tr_module *tb_parse(const char *text, const char *what);
tr_target *tb_open(const char *spec);

/* simplify-dynamic-slice-nested-lost-clamp: x[k] = 10k, inner start 3,
 * outer start 5 (past the inner slice's 6 - 3). */
static int64_t gen_ds_nested(int p, size_t i) { return p == 0 ? 10 * (int64_t)i : p == 1 ? 3 : 5; }

/* fusion-multi-output-operand-by-shape: three operands that differ
 * everywhere (small enough for s8). */
static int64_t gen_multi_output(int p, size_t i) { return (int64_t)i + 1 + 10 * p; }

static const dcase cases[] = {
  /* 13 elements with 8 lanes: the masked tail has 5, the last is lost.
   * 16 elements: no tail, nothing lost. */
  {"emit-tail-mask-short",
   "HloModule tail\nENTRY e {\n  a = s32[13] parameter(0)\n  b = s32[13] parameter(1)\n"
   "  ROOT r = s32[13] add(a, b)\n}\n",
   {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13}, {100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}},
   12,
   "HloModule notail\nENTRY e {\n  a = s32[16] parameter(0)\n  b = s32[16] parameter(1)\n"
   "  ROOT r = s32[16] add(a, b)\n}\n",
   {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}, {100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100, 100}}, NULL},
  /* 3000000000 read as s32 is negative: 3000000000 < 7 comes out true.
   * Below 2^31 signed and unsigned order agree. */
  {"emit-unsigned-compare-signed",
   "HloModule ucmp\nENTRY e {\n  a = u32[4] parameter(0)\n  b = u32[4] parameter(1)\n"
   "  ROOT r = pred[4] compare(a, b), direction=LT\n}\n",
   {{1, 3000000000LL, 5, 4000000000LL}, {2, 7, 3000000000LL, 4000000001LL}},
   1, NULL,
   {{1, 2147483647LL, 5, 100}, {2, 7, 2147483646LL, 101}}, NULL},
  /* -3 unpacked without sign extension is 253. Non-negative values are
   * the same either way. */
  {"emit-narrow-unpack-zext",
   "HloModule s8cvt\nENTRY e {\n  a = s8[4] parameter(0)\n  ROOT r = s32[4] convert(a)\n}\n",
   {{5, -3, 127, -128}},
   1, NULL,
   {{5, 3, 127, 0}}, NULL},
  /* inner x[1:15:2] (x1 x3 .. x13), outer [2:6] of it: x5 x7 x9 x11; the
   * defect starts at x3. With the outer start 0 the starts agree. */
  {"simplify-slice-of-slice-stride",
   "HloModule ss\nENTRY e {\n  x = s32[16] parameter(0)\n"
   "  i = s32[7] slice(x), slice={[1:15:2]}\n  ROOT o = s32[4] slice(i), slice={[2:6]}\n}\n",
   {{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150}},
   0,
   "HloModule ss0\nENTRY e {\n  x = s32[16] parameter(0)\n"
   "  i = s32[7] slice(x), slice={[1:15:2]}\n  ROOT o = s32[4] slice(i), slice={[0:4]}\n}\n",
   {{0, 10, 20, 30, 40, 50, 60, 70, 80, 90, 100, 110, 120, 130, 140, 150}}, NULL},
  /* x[-1:+2] clamps to x[0:2]; the defect wraps -1 to 7, clamped to 6.
   * A start past the end is clamped the same way with or without it. */
  {"simplify-dynamic-slice-negative-wrap",
   "HloModule dsneg\nENTRY e {\n  x = s32[8] parameter(0)\n  i = s32[] constant(-1)\n"
   "  ROOT d = s32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}\n}\n",
   {{10, 11, 12, 13, 14, 15, 16, 17}},
   0,
   "HloModule dsbig\nENTRY e {\n  x = s32[8] parameter(0)\n  i = s32[] constant(9)\n"
   "  ROOT d = s32[2] dynamic-slice(x, i), dynamic_slice_sizes={2}\n}\n",
   {{10, 11, 12, 13, 14, 15, 16, 17}}, NULL},
  /* i = 0..3 with i <= 3: four trips add 1+2+3+4; unrolled with the
   * defect's count of three, 4 is never added. The same loop as i < 4 is
   * counted right. */
  {"while-trip-count-le",
   "HloModule wle\ncond {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
   "  n = s32[] constant(3)\n  ROOT c = pred[] compare(i, n), direction=LE\n}\n"
   "body {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
   "  a = s32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n"
   "  a1 = s32[] add(a, i1)\n  ROOT t = (s32[], s32[]) tuple(i1, a1)\n}\n"
   "ENTRY e {\n  x = s32[] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], s32[]) tuple(z, x)\n"
   "  w = (s32[], s32[]) while(t), condition=cond, body=body\n"
   "  ROOT g = s32[] get-tuple-element(w), index=1\n}\n",
   {{100}},
   0,
   "HloModule wlt\ncond {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
   "  n = s32[] constant(4)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
   "body {\n  s = (s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
   "  a = s32[] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  i1 = s32[] add(i, one)\n"
   "  a1 = s32[] add(a, i1)\n  ROOT t = (s32[], s32[]) tuple(i1, a1)\n}\n"
   "ENTRY e {\n  x = s32[] parameter(0)\n  z = s32[] constant(0)\n  t = (s32[], s32[]) tuple(z, x)\n"
   "  w = (s32[], s32[]) while(t), condition=cond, body=body\n"
   "  ROOT g = s32[] get-tuple-element(w), index=1\n}\n",
   {{100}}, NULL},
  /* 1.01171875 is f32 0x3f80c000: rounds up to bf16 0x3f81, truncates to
   * 0x3f80. 1.00390625 (0x3f808000) is a tie that rounds down to even, and
   * exact values are exact: truncation agrees on them. */
  {"constfold-bf16-truncate",
   "HloModule bf\nENTRY e {\n  c = f32[4] constant({1, 1.01171875, 3, -2})\n"
   "  ROOT r = bf16[4] convert(c)\n}\n",
   {{0}},
   1,
   "HloModule bfsafe\nENTRY e {\n  c = f32[4] constant({1, 1.00390625, 0.5, -2})\n"
   "  ROOT r = bf16[4] convert(c)\n}\n",
   {{0}}, NULL},
  /* x: s32[1,3] broadcast into [1,4,3] (dims {0,2}) and fused into the
   * add: the defect gives the mapped output dim 0 the stride of operand
   * dim 1 and dim 2 none, so every element reads x[0]. Without a size-1
   * operand dim ([3] into [4,3]) the map is right. */
  {"fusion-broadcast-size1-map",
   "HloModule bc1\nENTRY e {\n  x = s32[1,3] parameter(0)\n  y = s32[1,4,3] parameter(1)\n"
   "  b = s32[1,4,3] broadcast(x), dimensions={0,2}\n  ROOT r = s32[1,4,3] add(b, y)\n}\n",
   {{10, 20, 30}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}},
   1,
   "HloModule bc\nENTRY e {\n  x = s32[3] parameter(0)\n  y = s32[4,3] parameter(1)\n"
   "  b = s32[4,3] broadcast(x), dimensions={1}\n  ROOT r = s32[4,3] add(b, y)\n}\n",
   {{10, 20, 30}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}}, NULL},
  /* x[3:9] then [5:+3] of it: the outer start clamps to 3, so x[6:9].
   * Without its clamp the sum 3 + 5 = 8 is clamped only to 13: x[8:11].
   * With the clamp written out in the module the defect has nothing to
   * drop. */
  {"simplify-dynamic-slice-nested-lost-clamp",
   "HloModule dsn\nENTRY e {\n  x = s32[16] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
   "  y = s32[6] dynamic-slice(x, i), dynamic_slice_sizes={6}\n"
   "  ROOT d = s32[3] dynamic-slice(y, j), dynamic_slice_sizes={3}\n}\n",
   {{0}},
   0,
   "HloModule dsnc\nENTRY e {\n  x = s32[16] parameter(0)\n  i = s32[] parameter(1)\n  j = s32[] parameter(2)\n"
   "  lo = s32[] constant(0)\n  hi = s32[] constant(3)\n  jc = s32[] clamp(lo, j, hi)\n"
   "  y = s32[6] dynamic-slice(x, i), dynamic_slice_sizes={6}\n"
   "  ROOT d = s32[3] dynamic-slice(y, jc), dynamic_slice_sizes={3}\n}\n",
   {{0}},
   gen_ds_nested},
  /* Row 5 of a 4-row operand: scatter skips the window; the defect clamps
   * it to row 3 and adds u there (elements 9..11). A window out of range on
   * the non-inserted dim (column 5) is still skipped. */
  {"simplify-scatter-size1-window-inside",
   "HloModule sc1\nadd {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
   "ENTRY e {\n  x = s32[4,3] parameter(0)\n  u = s32[3] parameter(1)\n  i = s32[2] constant({5, 0})\n"
   "  ROOT s = s32[4,3] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={0}, "
   "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add\n}\n",
   {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {100, 200, 300}},
   9,
   "HloModule sc1\nadd {\n  a = s32[] parameter(0)\n  b = s32[] parameter(1)\n  ROOT s = s32[] add(a, b)\n}\n"
   "ENTRY e {\n  x = s32[4,3] parameter(0)\n  u = s32[3] parameter(1)\n  i = s32[2] constant({1, 5})\n"
   "  ROOT s = s32[4,3] scatter(x, i, u), update_window_dims={0}, inserted_window_dims={0}, "
   "scatter_dims_to_operand_dims={0,1}, index_vector_dim=0, to_apply=add\n}\n",
   {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}, {100, 200, 300}}, NULL},
  /* pad interior 1: 10 0 20 0 30 0 40; stride 3 reads 10 0 40, the
   * defect's stride 3/2 = 1 reads 10 20 30. Stride 2 (a multiple) is
   * folded right. */
  {"simplify-slice-of-dilated-pad-stride",
   "HloModule sdp\nENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
   "  q = s32[7] pad(x, z), padding=0_0_1\n  ROOT s = s32[3] slice(q), slice={[0:7:3]}\n}\n",
   {{10, 20, 30, 40}},
   1,
   "HloModule sdp2\nENTRY e {\n  x = s32[4] parameter(0)\n  z = s32[] constant(0)\n"
   "  q = s32[7] pad(x, z), padding=0_0_1\n  ROOT s = s32[4] slice(q), slice={[0:7:2]}\n}\n",
   {{10, 20, 30, 40}}, NULL},
  /* x = 1..10 sliced to 3..10, window 3 with padding 1_1: out[0] skips
   * the halo tap, 10*3 + 100*4 = 430; folded into padding -1 the tap
   * reads x[1] = 2: 432. With padding 0_2 the fold is right. */
  {"simplify-conv-slice-halo-underflow",
   "HloModule cs\nENTRY e {\n  x = s32[1,10,1] parameter(0)\n  w = s32[3,1,1] parameter(1)\n"
   "  s = s32[1,8,1] slice(x), slice={[0:1], [2:10], [0:1]}\n"
   "  ROOT c = s32[1,8,1] convolution(s, w), window={size=3 pad=1_1}, dim_labels=b0f_0io->b0f\n}\n",
   {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 10, 100}},
   0,
   "HloModule cs2\nENTRY e {\n  x = s32[1,10,1] parameter(0)\n  w = s32[3,1,1] parameter(1)\n"
   "  s = s32[1,8,1] slice(x), slice={[0:1], [2:10], [0:1]}\n"
   "  ROOT c = s32[1,8,1] convolution(s, w), window={size=3 pad=0_2}, dim_labels=b0f_0io->b0f\n}\n",
   {{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, {1, 10, 100}}, NULL},
  /* Sibling fusions -(x + y) and -(x * z) share x; merged, y (and z)
   * take x's parameter, the first of their shape: -(x + x) at element 0
   * already. Operands of distinct shapes (z: s8) are mapped right. */
  {"fusion-multi-output-operand-by-shape",
   "HloModule mo\nENTRY e {\n  x = s32[4] parameter(0)\n  y = s32[4] parameter(1)\n  z = s32[4] parameter(2)\n"
   "  a = s32[4] add(x, y)\n  na = s32[4] negate(a)\n  b = s32[4] multiply(x, z)\n  nb = s32[4] negate(b)\n"
   "  ROOT t = (s32[4], s32[4]) tuple(na, nb)\n}\n",
   {{0}},
   0,
   "HloModule mo2\nENTRY e {\n  x = s32[4] parameter(0)\n  z = s8[4] parameter(1)\n"
   "  a = s32[4] add(x, x)\n  na = s32[4] negate(a)\n  zc = s32[4] convert(z)\n  b = s32[4] multiply(x, zc)\n"
   "  nb = s32[4] negate(b)\n  ROOT t = (s32[4], s32[4]) tuple(na, nb)\n}\n",
   {{0}},
   gen_multi_output},
  /* 2^-15 is the f16 subnormal 0x0200; flushed, it folds to 0. 2^-14 is
   * f16's least normal and is folded right. */
  {"constfold-f16-flush-subnormal",
   "HloModule h\nENTRY e {\n  c = f32[4] constant({1, 3.0517578125e-05, -2, 0.5})\n"
   "  ROOT r = f16[4] convert(c)\n}\n",
   {{0}},
   1,
   "HloModule h2\nENTRY e {\n  c = f32[4] constant({1, 6.103515625e-05, -2, 0})\n"
   "  ROOT r = f16[4] convert(c)\n}\n",
   {{0}}, NULL},
  /* [1,2,3] by {2,0,1} moves 3 before 2: 0 3 1 4 2 5, not a bitcast; the
   * defect reads dim 1 (size 2, not 1) for position 1 and takes it for
   * one. By {0,2,1} both see the swap. */
  {"layout-transpose-size1-wrong-dim",
   "HloModule t1\nENTRY e {\n  x = s32[1,2,3] parameter(0)\n"
   "  ROOT t = s32[3,1,2] transpose(x), dimensions={2,0,1}\n}\n",
   {{0, 1, 2, 3, 4, 5}},
   1,
   "HloModule t2\nENTRY e {\n  x = s32[1,2,3] parameter(0)\n"
   "  ROOT t = s32[1,3,2] transpose(x), dimensions={0,2,1}\n}\n",
   {{0, 1, 2, 3, 4, 5}}, NULL},
  /* x[i][j][k] (2,2,3) through [2,1,2,3] by {2,3,1,0}: the larger dims
   * come as x's 1, 2, 0, so out[a][b][c] = x[c][a][b]: 0 6 1 7 ..; the
   * inverse order 2, 0, 1 gives x[b][c][a]: 0 3 ... A swap (x's 1, 0, 2
   * by {2,1,0,3}) is its own inverse. */
  {"layout-reshape-transpose-inverse-perm",
   "HloModule rt\nENTRY e {\n  x = s32[2,2,3] parameter(0)\n  r = s32[2,1,2,3] reshape(x)\n"
   "  ROOT t = s32[2,3,1,2] transpose(r), dimensions={2,3,1,0}\n}\n",
   {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}},
   1,
   "HloModule rt2\nENTRY e {\n  x = s32[2,2,3] parameter(0)\n  r = s32[2,1,2,3] reshape(x)\n"
   "  ROOT t = s32[2,1,2,3] transpose(r), dimensions={2,1,0,3}\n}\n",
   {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}}, NULL},
  /* State (d, i, a), d dead: pruned to (i, a), the condition still reads
   * index 1, now a = 100 >= 5: no trip, 100 instead of 115. With d last
   * nothing the condition reads moves. */
  {"while-dead-state-cond-index",
   "HloModule wd\ncond {\n  s = (s32[], s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=1\n"
   "  n = s32[] constant(5)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
   "body {\n  s = (s32[], s32[], s32[]) parameter(0)\n  d = s32[] get-tuple-element(s), index=0\n"
   "  i = s32[] get-tuple-element(s), index=1\n  a = s32[] get-tuple-element(s), index=2\n"
   "  three = s32[] constant(3)\n  one = s32[] constant(1)\n  d1 = s32[] multiply(d, three)\n"
   "  i1 = s32[] add(i, one)\n  a1 = s32[] add(a, i1)\n  ROOT t = (s32[], s32[], s32[]) tuple(d1, i1, a1)\n}\n"
   "ENTRY e {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  z = s32[] constant(0)\n"
   "  t = (s32[], s32[], s32[]) tuple(x, z, y)\n  w = (s32[], s32[], s32[]) while(t), condition=cond, body=body\n"
   "  ROOT g = s32[] get-tuple-element(w), index=2\n}\n",
   {{7}, {100}},
   0,
   "HloModule wd2\ncond {\n  s = (s32[], s32[], s32[]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
   "  n = s32[] constant(5)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n"
   "body {\n  s = (s32[], s32[], s32[]) parameter(0)\n  d = s32[] get-tuple-element(s), index=2\n"
   "  i = s32[] get-tuple-element(s), index=0\n  a = s32[] get-tuple-element(s), index=1\n"
   "  three = s32[] constant(3)\n  one = s32[] constant(1)\n  d1 = s32[] multiply(d, three)\n"
   "  i1 = s32[] add(i, one)\n  a1 = s32[] add(a, i1)\n  ROOT t = (s32[], s32[], s32[]) tuple(i1, a1, d1)\n}\n"
   "ENTRY e {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  z = s32[] constant(0)\n"
   "  t = (s32[], s32[], s32[]) tuple(z, y, x)\n  w = (s32[], s32[], s32[]) while(t), condition=cond, body=body\n"
   "  ROOT g = s32[] get-tuple-element(w), index=1\n}\n",
   {{7}, {100}}, NULL},
};

/* Runs m on the builtin target spec and on the reference with inputs in.
 * Returns the first element of output 0 where they differ, -1 when all
 * outputs agree bit for bit, -2 when either failed (a test failure). */
static long first_diff(const char *spec, const tr_module *m, const int64_t in[2][16],
                       int64_t (*gen)(int, size_t), const char *what) {
  tr_tensor *args[8];
  int nargs = m->entry->nparams;
  if (nargs > 8 || (nargs > 2 && !gen)) {
    fprintf(stderr, "  %s: too many parameters for a defect case\n", what);
    tr_test_failed++;
    return -2;
  }
  tr_diag d = {0};
  for (int p = 0; p < nargs; p++) {
    const tr_shape *s = m->entry->params[p]->shape;
    args[p] = tr_tensor_new(s->dtype, s->rank, s->dims, &d);
    for (size_t i = 0; i < tr_tensor_count(args[p]); i++) tr_tensor_set_i(args[p], i, gen ? gen(p, i) : in[p][i]);
  }
  tr_tensor **ref = NULL;
  int nref = 0;
  long ret = -2;
  tr_target *t = tb_open(spec);
  if (t && tr_eval(m, args, nargs, &ref, &nref, &d) == TR_OK) {
    tr_run_result r;
    tr_run_opts o = {0};
    o.timeout_s = 20;
    if (tr_target_run(t, m, args, nargs, &o, &r, &d) == TR_OK && r.verdict == TR_VERDICT_OK &&
        r.noutputs == nref) {
      ret = -1;
      for (int k = 0; k < nref && ret == -1; k++)
        for (size_t i = 0; i < tr_tensor_count(ref[k]); i++)
          if (tr_tensor_get_bits(ref[k], i) != tr_tensor_get_bits(r.outputs[k], i)) {
            ret = k == 0 ? (long)i : 1000000;
            break;
          }
    } else {
      fprintf(stderr, "  %s on %s: run failed (%s)\n", what, spec, r.message ? r.message : "");
      tr_diag_print(&d, stderr);
    }
    tr_run_result_free(&r);
  } else {
    fprintf(stderr, "  %s: reference or target failed\n", what);
    tr_diag_print(&d, stderr);
  }
  if (ret == -2) tr_test_failed++;
  tr_eval_free_outputs(ref, nref);
  for (int p = 0; p < nargs; p++) tr_tensor_free(args[p]);
  if (t) tr_target_close(t);
  tr_diag_clear(&d);
  return ret;
}

void td_check_case(const dcase *c) {
  if (!c) {
    fprintf(stderr, "  no such defect case\n");
    tr_test_failed++;
    return;
  }
  char spec[128];
  snprintf(spec, sizeof spec, "builtin:inject=%s", c->defect);
  tr_module *m = tb_parse(c->hlo, c->defect);
  if (!m) return;
  long bad = first_diff(spec, m, c->in, c->gen, c->defect);
  if (bad != c->first_bad)
    fprintf(stderr, "  %s: injected, first difference at %ld, expected %ld\n", c->defect, bad,
            c->first_bad);
  CHECK_EQ_INT(bad, c->first_bad);
  CHECK_EQ_INT(first_diff("builtin", m, c->in, c->gen, c->defect), -1);
  tr_module *safe = c->safe_hlo ? tb_parse(c->safe_hlo, c->defect) : m;
  if (safe) {
    long sb = first_diff(spec, safe, c->safe_in, c->gen, c->defect);
    if (sb != -1) fprintf(stderr, "  %s: condition absent, yet differs at %ld\n", c->defect, sb);
    CHECK_EQ_INT(sb, -1);
    if (safe != m) tr_module_free(safe);
  }
  tr_module_free(m);
}

static const dcase *find_case(const char *name) {
  for (int i = 0; i < TR_NELEMS(cases); i++)
    if (strcmp(cases[i].defect, name) == 0) return &cases[i];
  for (int i = 0; i < td_emit_ncases; i++)
    if (strcmp(td_emit_cases[i].defect, name) == 0) return &td_emit_cases[i];
  return NULL;
}

TR_TEST(defect_emit_tail_mask_short) { td_check_case(find_case("emit-tail-mask-short")); }
TR_TEST(defect_emit_unsigned_compare_signed) { td_check_case(find_case("emit-unsigned-compare-signed")); }
TR_TEST(defect_emit_narrow_unpack_zext) { td_check_case(find_case("emit-narrow-unpack-zext")); }
TR_TEST(defect_simplify_slice_of_slice_stride) { td_check_case(find_case("simplify-slice-of-slice-stride")); }
TR_TEST(defect_simplify_dynamic_slice_negative_wrap) {
  td_check_case(find_case("simplify-dynamic-slice-negative-wrap"));
}
TR_TEST(defect_while_trip_count_le) { td_check_case(find_case("while-trip-count-le")); }
TR_TEST(defect_constfold_bf16_truncate) { td_check_case(find_case("constfold-bf16-truncate")); }
TR_TEST(defect_fusion_broadcast_size1_map) { td_check_case(find_case("fusion-broadcast-size1-map")); }
TR_TEST(defect_simplify_dynamic_slice_nested_lost_clamp) {
  td_check_case(find_case("simplify-dynamic-slice-nested-lost-clamp"));
}
TR_TEST(defect_simplify_scatter_size1_window_inside) {
  td_check_case(find_case("simplify-scatter-size1-window-inside"));
}
TR_TEST(defect_simplify_slice_of_dilated_pad_stride) {
  td_check_case(find_case("simplify-slice-of-dilated-pad-stride"));
}
TR_TEST(defect_simplify_conv_slice_halo_underflow) {
  td_check_case(find_case("simplify-conv-slice-halo-underflow"));
}
TR_TEST(defect_fusion_multi_output_operand_by_shape) {
  td_check_case(find_case("fusion-multi-output-operand-by-shape"));
}
TR_TEST(defect_constfold_f16_flush_subnormal) { td_check_case(find_case("constfold-f16-flush-subnormal")); }
TR_TEST(defect_layout_transpose_size1_wrong_dim) { td_check_case(find_case("layout-transpose-size1-wrong-dim")); }
TR_TEST(defect_layout_reshape_transpose_inverse_perm) {
  td_check_case(find_case("layout-reshape-transpose-inverse-perm"));
}
TR_TEST(defect_while_dead_state_cond_index) { td_check_case(find_case("while-dead-state-cond-index")); }

/* Every registry entry has a case; every case names a registry entry; the
 * table's fields are filled and the category is one of the six. */
TR_TEST(defect_registry_all_tested) {
  int n;
  const tr_defect_info *t = tr_defect_table(&n);
  CHECK(n > 0 && n <= 64);
  static const char *const cats[] = {"emitter", "simplifier", "fusion", "constfold", "loop", "layout"};
  for (int i = 0; i < n; i++) {
    if (!find_case(t[i].name)) {
      fprintf(stderr, "  defect %s has no test case\n", t[i].name);
      tr_test_failed++;
    }
    CHECK_EQ_INT(tr_defect_lookup(t[i].name), i);
    bool cat = false;
    for (int k = 0; k < TR_NELEMS(cats); k++) cat |= strcmp(cats[k], t[i].category) == 0;
    CHECK(cat);
    CHECK(t[i].pass[0] && t[i].description[0]);
  }
  for (int i = 0; i < TR_NELEMS(cases); i++) CHECK(tr_defect_lookup(cases[i].defect) >= 0);
  for (int i = 0; i < td_emit_ncases; i++) CHECK(tr_defect_lookup(td_emit_cases[i].defect) >= 0);
  CHECK_EQ_INT(tr_defect_lookup("no-such-defect"), -1);
}

/* inject=NAME: an unknown name is an error when the target opens; several
 * may be given. */
TR_TEST(defect_inject_option) {
  tr_diag d = {0};
  tr_target *t = NULL;
  CHECK(tr_target_open("builtin:inject=no-such-defect", NULL, &t, &d) == TR_ERR_USAGE);
  CHECK(!t);
  CHECK_CONTAINS(tr_diag_first(&d), "unknown defect 'no-such-defect'");
  tr_diag_clear(&d);
  CHECK(tr_target_open("builtin:inject=emit-tail-mask-short,inject=emit-narrow-unpack-zext", NULL,
                       &t, &d) == TR_OK);
  if (t) tr_target_close(t);
  tr_diag_clear(&d);
  /* both planted at once: each still finds its own module */
  tr_module *m = tb_parse(cases[0].hlo, "tail");
  if (m) {
    CHECK_EQ_INT(first_diff("builtin:inject=emit-narrow-unpack-zext,inject=emit-tail-mask-short", m,
                            cases[0].in, NULL, "two defects"),
                 12);
    tr_module_free(m);
  }
}
