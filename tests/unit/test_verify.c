/* test_verify.c - shape inference (every rule, with the shapes XLA gives)
 * and the verifier's located messages on bad modules. */
#include "../../src/eval/eval.h"
#include "../../src/ir/ir.h"
#include "test.h"

#include <stdlib.h>

static tr_module *parse_ok(const char *text) {
  tr_diag d = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m) {
    fprintf(stderr, "  parse failed:\n");
    tr_diag_print(&d, stderr);
  }
  tr_diag_clear(&d);
  return m;
}

static tr_instr *find(const tr_module *m, const char *name) {
  for (int c = 0; c < m->ncomps; c++) {
    tr_instr *in = tr_comp_find(m->comps[c], name);
    if (in) return in;
  }
  return NULL;
}

/* The shape inferred for instruction name, or "error: <reason>". With
 * use_decl false the declared shape is hidden first, so the result must
 * come from the operands and attributes alone. Caller frees. */
static char *infer(const tr_module *m, const char *name, bool use_decl) {
  tr_instr *in = find(m, name);
  if (!in) return tr_xstrdup("(no such instruction)");
  tr_shape *decl = in->shape;
  if (!use_decl) in->shape = NULL;
  tr_buf why = {0}, out = {0};
  tr_shape *s = tr_infer_shape(m->arena, in, &why);
  in->shape = decl;
  if (s) tr_shape_print(&out, s, false);
  else tr_buf_printf(&out, "error: %s", tr_buf_str(&why));
  tr_buf_free(&why);
  return out.p ? out.p : tr_xstrdup("");
}

#define CHECK_INFER(m, name, want)          \
  do {                                      \
    char *s_ = infer(m, name, false);       \
    CHECK_STR(s_, want);                    \
    free(s_);                               \
  } while (0)

#define CHECK_INFER_DECL(m, name, want)     \
  do {                                      \
    char *s_ = infer(m, name, true);        \
    CHECK_STR(s_, want);                    \
    free(s_);                               \
  } while (0)

/* Every verifier message joined by newlines ("" when it verifies, or
 * "parse failed: ..."). Caller frees. */
static char *verify_text(const char *text) {
  tr_diag d = {0};
  tr_buf b = {0};
  tr_module *m = tr_parse("t.hlo", text, strlen(text), NULL, &d);
  if (!m) {
    tr_buf_printf(&b, "parse failed: %s", tr_diag_first(&d) ? tr_diag_first(&d) : "");
  } else {
    tr_status st = tr_verify(m, &d);
    for (int i = 0; i < d.nmsgs; i++) tr_buf_printf(&b, "%s%s", i ? "\n" : "", d.msgs[i]);
    if ((st == TR_OK) != (d.nmsgs == 0)) tr_buf_puts(&b, "\n(status disagrees with messages)");
    tr_module_free(m);
  }
  tr_diag_clear(&d);
  return b.p ? b.p : tr_xstrdup("");
}

static char *verify_module(const tr_module *m) {
  tr_diag d = {0};
  tr_buf b = {0};
  tr_status st = tr_verify(m, &d);
  for (int i = 0; i < d.nmsgs; i++) tr_buf_printf(&b, "%s%s", i ? "\n" : "", d.msgs[i]);
  if ((st == TR_OK) != (d.nmsgs == 0)) tr_buf_puts(&b, "\n(status disagrees with messages)");
  tr_diag_clear(&d);
  return b.p ? b.p : tr_xstrdup("");
}

#define CHECK_VERIFY(text, want)            \
  do {                                      \
    char *s_ = verify_text(text);           \
    CHECK_STR(s_, want);                    \
    free(s_);                               \
  } while (0)

/* ---- valid modules: verify cleanly, and each rule infers XLA's shape ---- */
static const char *const movement =
    "HloModule movement\n"
    "ENTRY e {\n"
    "  p = f32[2,3] parameter(0)\n"
    "  q = s32[4] parameter(1)\n"
    "  s = f32[] parameter(2)\n"
    "  i = s32[] parameter(3)\n"
    "  pr = pred[2,3] parameter(4)\n"
    "  ps = pred[] parameter(5)\n"
    "  u8s = u8[2,4] parameter(6)\n"
    "  iv = s32[2] parameter(7)\n"
    "  t = f32[3,2] transpose(p), dimensions={1,0}\n"
    "  b = f32[4,2,3] broadcast(p), dimensions={1,2}\n"
    "  bt = f32[3,5,2] broadcast(p), dimensions={2,0}\n"
    "  bs = f32[5] broadcast(s), dimensions={}\n"
    "  bn = f32[5] broadcast(s)\n"
    "  r = f32[6] reshape(p)\n"
    "  rs = s32[2,2] reshape(q)\n"
    "  bc = s32[3,2] bitcast(p)\n"
    "  cv = f16[2,3] convert(p)\n"
    "  bcn = u8[4,4] bitcast-convert(q)\n"
    "  bcw = s32[2] bitcast-convert(u8s)\n"
    "  bce = u32[4] bitcast-convert(q)\n"
    "  sl = f32[2,2] slice(p), slice={[0:2], [0:3:2]}\n"
    "  sl2 = f32[1,1] slice(p), slice={[1:2], [1:3:5]}\n"
    "  ds = f32[1,2] dynamic-slice(p, i, i), dynamic_slice_sizes={1,2}\n"
    "  dsv = f32[2,1] dynamic-slice(p, iv), dynamic_slice_sizes={2,1}\n"
    "  dus = f32[2,3] dynamic-update-slice(p, ds, i, i)\n"
    "  cc = f32[2,9] concatenate(p, p, p), dimensions={1}\n"
    "  pd = f32[5,7] pad(p, s), padding=1_2_0x0_0_2\n"
    "  pn = f32[1,2] pad(p, s), padding=-1_0x0_-1\n"
    "  rv = f32[2,3] reverse(p), dimensions={0,1}\n"
    "  io = s32[3,4] iota(), iota_dimension=1\n"
    "  rid = u32[] replica-id()\n"
    "  pid = u32[] partition-id()\n"
    "  tok = token[] after-all()\n"
    "  tok2 = token[] after-all(tok, tok)\n"
    "  tu = (f32[2,3], s32[4]) tuple(p, q)\n"
    "  g = s32[4] get-tuple-element(tu), index=1\n"
    "  cp = (f32[2,3], s32[4]) copy(tu)\n"
    "  ad = f32[2,3] add-dependency(p, tok)\n"
    "  ROOT out = (f32[2,3], s32[4]) opt-barrier(tu)\n"
    "}\n";

TR_TEST(verify_movement_ok) {
  tr_module *m = parse_ok(movement);
  CHECK(m != NULL);
  if (!m) return;
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  CHECK_INFER(m, "t", "f32[3,2]");
  CHECK_INFER(m, "cc", "f32[2,9]");
  CHECK_INFER(m, "sl", "f32[2,2]");
  CHECK_INFER(m, "sl2", "f32[1,1]");
  CHECK_INFER(m, "ds", "f32[1,2]");
  CHECK_INFER(m, "dsv", "f32[2,1]");
  CHECK_INFER(m, "dus", "f32[2,3]");
  CHECK_INFER(m, "pd", "f32[5,7]");
  CHECK_INFER(m, "pn", "f32[1,2]");
  CHECK_INFER(m, "rv", "f32[2,3]");
  CHECK_INFER(m, "rid", "u32[]");
  CHECK_INFER(m, "pid", "u32[]");
  CHECK_INFER(m, "tok2", "token[]");
  CHECK_INFER(m, "tu", "(f32[2,3], s32[4])");
  CHECK_INFER(m, "g", "s32[4]");
  CHECK_INFER(m, "cp", "(f32[2,3], s32[4])");
  CHECK_INFER(m, "ad", "f32[2,3]");
  CHECK_INFER(m, "out", "(f32[2,3], s32[4])");
  /* Rules whose result dims or type come from the declared shape. */
  CHECK_INFER_DECL(m, "b", "f32[4,2,3]");
  CHECK_INFER_DECL(m, "bt", "f32[3,5,2]");
  CHECK_INFER_DECL(m, "bs", "f32[5]");
  CHECK_INFER_DECL(m, "bn", "f32[5]");
  CHECK_INFER_DECL(m, "rs", "s32[2,2]");
  CHECK_INFER_DECL(m, "bc", "s32[3,2]");
  CHECK_INFER_DECL(m, "cv", "f16[2,3]");
  CHECK_INFER_DECL(m, "bcn", "u8[4,4]");
  CHECK_INFER_DECL(m, "bcw", "s32[2]");
  CHECK_INFER_DECL(m, "bce", "u32[4]");
  CHECK_INFER_DECL(m, "io", "s32[3,4]");
  CHECK_INFER(m, "b", "error: broadcast needs a declared result shape");
  CHECK_INFER(m, "p", "error: parameter needs a declared shape");
  tr_module_free(m);
}

static const char *const elementwise =
    "HloModule elementwise\n"
    "ENTRY e {\n"
    "  p = f32[2,3] parameter(0)\n"
    "  q = s32[4] parameter(1)\n"
    "  s = f32[] parameter(2)\n"
    "  pr = pred[2,3] parameter(3)\n"
    "  ps = pred[] parameter(4)\n"
    "  u = u16[4] parameter(5)\n"
    "  sel = f32[2,3] select(pr, p, p)\n"
    "  sels = f32[2,3] select(ps, p, p)\n"
    "  cl = f32[2,3] clamp(s, p, s)\n"
    "  cl2 = f32[2,3] clamp(p, p, p)\n"
    "  cmp = pred[2,3] compare(p, p), direction=LT\n"
    "  cmpt = pred[2,3] compare(p, p), direction=EQ, type=TOTALORDER\n"
    "  cmpu = pred[4] compare(u, u), direction=GT, type=UNSIGNED\n"
    "  fin = pred[2,3] is-finite(p)\n"
    "  ad = f32[2,3] add(p, p)\n"
    "  at = f32[2,3] atan2(p, p)\n"
    "  sh = s32[4] shift-left(q, q)\n"
    "  an = pred[2,3] and(pr, pr)\n"
    "  ng = s32[4] negate(q)\n"
    "  ex = f32[2,3] exponential(p)\n"
    "  nt = s32[4] not(q)\n"
    "  pc = s32[4] popcnt(q)\n"
    "  ab = s32[4] abs(q)\n"
    "  rp = f32[2,3] reduce-precision(p), exponent_bits=5, mantissa_bits=10\n"
    "  ROOT mx = u16[4] maximum(u, u)\n"
    "}\n";

TR_TEST(verify_elementwise_ok) {
  tr_module *m = parse_ok(elementwise);
  CHECK(m != NULL);
  if (!m) return;
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  CHECK_INFER(m, "sel", "f32[2,3]");
  CHECK_INFER(m, "sels", "f32[2,3]");
  CHECK_INFER(m, "cl", "f32[2,3]");
  CHECK_INFER(m, "cmp", "pred[2,3]");
  CHECK_INFER(m, "cmpu", "pred[4]");
  CHECK_INFER(m, "fin", "pred[2,3]");
  CHECK_INFER(m, "ad", "f32[2,3]");
  CHECK_INFER(m, "sh", "s32[4]");
  CHECK_INFER(m, "an", "pred[2,3]");
  CHECK_INFER(m, "rp", "f32[2,3]");
  CHECK_INFER(m, "mx", "u16[4]");
  tr_module_free(m);
}

static const char *const reductions =
    "HloModule reductions\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT z = f32[] add(x, y)\n"
    "}\n"
    "add2 {\n"
    "  a0 = f32[] parameter(0)\n"
    "  a1 = s32[] parameter(1)\n"
    "  b0 = f32[] parameter(2)\n"
    "  b1 = s32[] parameter(3)\n"
    "  sum0 = f32[] add(a0, b0)\n"
    "  sum1 = s32[] add(a1, b1)\n"
    "  ROOT t = (f32[], s32[]) tuple(sum0, sum1)\n"
    "}\n"
    "ge {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT z = pred[] compare(x, y), direction=GE\n"
    "}\n"
    "lt2 {\n"
    "  x0 = f32[] parameter(0)\n"
    "  y0 = f32[] parameter(1)\n"
    "  x1 = s32[] parameter(2)\n"
    "  y1 = s32[] parameter(3)\n"
    "  ROOT z = pred[] compare(x0, y0), direction=LT\n"
    "}\n"
    "tof16 {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT z = f16[] convert(x)\n"
    "}\n"
    "ENTRY e {\n"
    "  p = f32[2,3,4] parameter(0)\n"
    "  q = s32[2,3,4] parameter(1)\n"
    "  src = f32[2,3,2] parameter(2)\n"
    "  bp = bf16[2,3,4] parameter(3)\n"
    "  z = f32[] constant(0)\n"
    "  zi = s32[] constant(0)\n"
    "  r1 = f32[3] reduce(p, z), dimensions={0,2}, to_apply=add\n"
    "  rall = f32[] reduce(p, z), dimensions={2,0,1}, to_apply=add\n"
    "  r2 = (f32[2,4], s32[2,4]) reduce(p, q, z, zi), dimensions={1}, to_apply=add2\n"
    "  rmix = f32[2,3] reduce(bp, z), dimensions={2}, to_apply=add\n"
    "  rw = f32[2,4,1] reduce-window(p, z), window={size=1x2x3 stride=1x1x2 pad=0_0x1_1x0_0}, to_apply=add\n"
    "  rwd = f32[2,3,5] reduce-window(p, z), window={size=1x1x2 lhs_dilate=1x1x2 rhs_dilate=1x1x2}, to_apply=add\n"
    "  rw2 = (f32[1,3,4], s32[1,3,4]) reduce-window(p, q, z, zi), window={size=2x1x1}, to_apply=add2\n"
    "  sas = f32[2,3,4] select-and-scatter(p, src, z), window={size=1x1x2 stride=1x1x2}, select=ge, scatter=add\n"
    "  so = f32[2,3,4] sort(p), dimensions={2}, to_apply=ge\n"
    "  so2 = (f32[2,3,4], s32[2,3,4]) sort(p, q), dimensions={0}, is_stable=true, to_apply=lt2\n"
    "  mp = f32[2,3,4] map(p, p), dimensions={0,1,2}, to_apply=add\n"
    "  mph = f16[2,3,4] map(p, p), to_apply=tof16\n"
    "  ar = f32[2,3,4] all-reduce(p), to_apply=add\n"
    "  ar2 = (f32[2,3,4], s32[2,3,4]) all-reduce(p, q), to_apply=add\n"
    "  ROOT tk = (f32[2,3,2], s32[2,3,2]) topk(p), k=2, largest=true\n"
    "}\n";

TR_TEST(verify_reductions_ok) {
  tr_module *m = parse_ok(reductions);
  CHECK(m != NULL);
  if (!m) return;
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  CHECK_INFER(m, "r1", "f32[3]");
  CHECK_INFER(m, "rall", "f32[]");
  CHECK_INFER(m, "r2", "(f32[2,4], s32[2,4])");
  CHECK_INFER(m, "rmix", "f32[2,3]");
  CHECK_INFER(m, "rw", "f32[2,4,1]");
  CHECK_INFER(m, "rwd", "f32[2,3,5]");
  CHECK_INFER(m, "rw2", "(f32[1,3,4], s32[1,3,4])");
  CHECK_INFER(m, "sas", "f32[2,3,4]");
  CHECK_INFER(m, "so", "f32[2,3,4]");
  CHECK_INFER(m, "so2", "(f32[2,3,4], s32[2,3,4])");
  CHECK_INFER(m, "mp", "f32[2,3,4]");
  CHECK_INFER(m, "mph", "f16[2,3,4]");
  CHECK_INFER(m, "ar", "f32[2,3,4]");
  CHECK_INFER(m, "ar2", "(f32[2,3,4], s32[2,3,4])");
  CHECK_INFER(m, "tk", "(f32[2,3,2], s32[2,3,2])");
  tr_module_free(m);
}

static const char *const contractions =
    "HloModule contractions\n"
    "add {\n"
    "  x = f32[] parameter(0)\n"
    "  y = f32[] parameter(1)\n"
    "  ROOT z = f32[] add(x, y)\n"
    "}\n"
    "add2 {\n"
    "  a0 = f32[] parameter(0)\n"
    "  a1 = s32[] parameter(1)\n"
    "  b0 = f32[] parameter(2)\n"
    "  b1 = s32[] parameter(3)\n"
    "  sum0 = f32[] add(a0, b0)\n"
    "  sum1 = s32[] add(a1, b1)\n"
    "  ROOT t = (f32[], s32[]) tuple(sum0, sum1)\n"
    "}\n"
    "ENTRY e {\n"
    "  a = f32[2,3,4] parameter(0)\n"
    "  b = f32[2,4,5] parameter(1)\n"
    "  a8 = s8[3,4] parameter(2)\n"
    "  b8 = s8[4,5] parameter(3)\n"
    "  v3 = f32[3] parameter(4)\n"
    "  v5 = bf16[5] parameter(5)\n"
    "  img = f32[1,5,5,3] parameter(6)\n"
    "  ker = f32[3,3,3,8] parameter(7)\n"
    "  img6 = f32[1,5,5,6] parameter(8)\n"
    "  img4 = f32[4,5,5,3] parameter(9)\n"
    "  x1 = f32[1,4,2] parameter(10)\n"
    "  k1 = f32[3,2,5] parameter(11)\n"
    "  op = f32[3,4,5] parameter(12)\n"
    "  ix = s32[6,2] parameter(13)\n"
    "  ix1 = s32[6] parameter(14)\n"
    "  bop = f32[2,3,4] parameter(15)\n"
    "  bix = s32[2,5,1] parameter(16)\n"
    "  six = s32[6,1] parameter(17)\n"
    "  upd = f32[6,4,5] parameter(18)\n"
    "  in2 = s32[3,4] parameter(19)\n"
    "  in1 = f32[3,4] parameter(20)\n"
    "  ix2 = s32[2] parameter(21)\n"
    "  w1 = f32[2,4] parameter(22)\n"
    "  w2 = s32[2,4] parameter(23)\n"
    "  bupd = f32[2,5,4] parameter(24)\n"
    "  ixt = s32[2,6] parameter(25)\n"
    "  sixt = s32[1,6] parameter(26)\n"
    "  g0 = f32[6,2,5] gather(op, ixt), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=0, slice_sizes={1,2,5}\n"
    "  sc0 = f32[3,4,5] scatter(op, sixt, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=0, to_apply=add\n"
    "  d = f32[2,3,5] dot(a, b), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
    "  d8 = s32[3,5] dot(a8, b8), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
    "  outer = f32[3,5] dot(v3, v5)\n"
    "  dt = f32[5,3] dot(b8, a8), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
    "  cv = f32[1,5,5,8] convolution(img, ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
    "  cvs = f32[1,2,2,8] convolution(img, ker), window={size=3x3 stride=2x2}, dim_labels=b01f_01io->b01f\n"
    "  cvf = f32[1,3,3,8] convolution(img6, ker), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=2\n"
    "  cvb = f32[2,3,3,8] convolution(img4, ker), window={size=3x3}, dim_labels=b01f_01io->b01f, batch_group_count=2\n"
    "  cvt = f32[8,1,3,3] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->fb01\n"
    "  cvd = f32[1,5,5] convolution(x1, k1), window={size=3 lhs_dilate=2}, dim_labels=b0f_0io->b0f\n"
    "  cvr = f32[1,2,5] convolution(x1, k1), window={size=3 pad=1_1 rhs_dilate=2}, dim_labels=b0f_0io->b0f\n"
    "  g = f32[6,2,5] gather(op, ix), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,5}\n"
    "  gi = f32[6,4,5] gather(op, ix1), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4,5}\n"
    "  gm = f32[2,6,5] gather(op, ix), offset_dims={0,2}, collapsed_slice_dims={1}, start_index_map={1,0}, index_vector_dim=1, slice_sizes={2,1,5}\n"
    "  gb = f32[2,5,4] gather(bop, bix), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}\n"
    "  sc = f32[3,4,5] scatter(op, six, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add\n"
    "  sc2 = (f32[3,4], s32[3,4]) scatter(in1, in2, ix2, w1, w2), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add2\n"
    "  ROOT sb = f32[2,3,4] scatter(bop, bix, bupd), update_window_dims={2}, inserted_window_dims={1}, scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, index_vector_dim=2, to_apply=add\n"
    "}\n";

TR_TEST(verify_contractions_ok) {
  tr_module *m = parse_ok(contractions);
  CHECK(m != NULL);
  if (!m) return;
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  CHECK_INFER(m, "d", "f32[2,3,5]");
  /* Without a declared (preferred) type the wider operand type is used. */
  CHECK_INFER(m, "d8", "s8[3,5]");
  CHECK_INFER_DECL(m, "d8", "s32[3,5]");
  CHECK_INFER(m, "outer", "f32[3,5]");
  CHECK_INFER(m, "dt", "s8[5,3]");
  CHECK_INFER(m, "cv", "f32[1,5,5,8]");
  CHECK_INFER(m, "cvs", "f32[1,2,2,8]");
  CHECK_INFER(m, "cvf", "f32[1,3,3,8]");
  CHECK_INFER(m, "cvb", "f32[2,3,3,8]");
  CHECK_INFER(m, "cvt", "f32[8,1,3,3]");
  CHECK_INFER(m, "cvd", "f32[1,5,5]");
  CHECK_INFER(m, "cvr", "f32[1,2,5]");
  CHECK_INFER(m, "g", "f32[6,2,5]");
  CHECK_INFER(m, "gi", "f32[6,4,5]");
  CHECK_INFER(m, "g0", "f32[6,2,5]");
  CHECK_INFER(m, "sc0", "f32[3,4,5]");
  CHECK_INFER(m, "gm", "f32[2,6,5]");
  CHECK_INFER(m, "gb", "f32[2,5,4]");
  CHECK_INFER(m, "sc", "f32[3,4,5]");
  CHECK_INFER(m, "sc2", "(f32[3,4], s32[3,4])");
  CHECK_INFER(m, "sb", "f32[2,3,4]");
  tr_module_free(m);
}

static const char *const control =
    "HloModule control\n"
    "cond {\n"
    "  p = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  n = s32[] constant(10)\n"
    "  ROOT lt = pred[] compare(i, n), direction=LT\n"
    "}\n"
    "body {\n"
    "  p = (s32[], f32[4]) parameter(0)\n"
    "  i = s32[] get-tuple-element(p), index=0\n"
    "  v = f32[4] get-tuple-element(p), index=1\n"
    "  one = s32[] constant(1)\n"
    "  i2 = s32[] add(i, one)\n"
    "  ROOT t = (s32[], f32[4]) tuple(i2, v)\n"
    "}\n"
    "br0 {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT y = f32[4] negate(x)\n"
    "}\n"
    "br1 {\n"
    "  x = f32[4] parameter(0)\n"
    "  ROOT y = f32[4] abs(x)\n"
    "}\n"
    "br2 {\n"
    "  x = s32[] parameter(0)\n"
    "  ROOT y = f32[4] broadcast(f32[] constant(2)), dimensions={}\n"
    "}\n"
    "callee {\n"
    "  a = f32[4] parameter(0)\n"
    "  b = f32[4] parameter(1)\n"
    "  ROOT c = f32[4] add(a, b)\n"
    "}\n"
    "fused {\n"
    "  a = f32[4] parameter(0)\n"
    "  ROOT n = f32[4] negate(a)\n"
    "}\n"
    "ENTRY e {\n"
    "  v = f32[4] parameter(0)\n"
    "  i = s32[] parameter(1)\n"
    "  pr = pred[] parameter(2)\n"
    "  m = f32[2,3,3] parameter(3)\n"
    "  b = f32[2,3,5] parameter(4)\n"
    "  br = f32[2,5,3] parameter(5)\n"
    "  t = (s32[], f32[4]) tuple(i, v)\n"
    "  w = (s32[], f32[4]) while(t), condition=cond, body=body\n"
    "  c1 = f32[4] conditional(pr, v, v), true_computation=br0, false_computation=br1\n"
    "  c2 = f32[4] conditional(i, v, v, i), branch_computations={br0, br1, br2}\n"
    "  cl = f32[4] call(v, v), to_apply=callee\n"
    "  fu = f32[4] fusion(v), kind=kLoop, calls=fused\n"
    "  ch = f32[2,3,3] cholesky(m), lower=true\n"
    "  ts = f32[2,3,5] triangular-solve(m, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE\n"
    "  tr = f32[2,5,3] triangular-solve(m, br), left_side=false, transpose_a=TRANSPOSE\n"
    "  cc = f32[8] custom-call(v), custom_call_target=\"foo\"\n"
    "  ag = f32[16] all-gather(v), dimensions={0}\n"
    "  ROOT out = (f32[4], f32[4], f32[4], f32[4]) tuple(c1, c2, cl, fu)\n"
    "}\n";

TR_TEST(verify_control_ok) {
  tr_module *m = parse_ok(control);
  CHECK(m != NULL);
  if (!m) return;
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  CHECK_INFER(m, "w", "(s32[], f32[4])");
  CHECK_INFER(m, "c1", "f32[4]");
  CHECK_INFER(m, "c2", "f32[4]");
  CHECK_INFER(m, "cl", "f32[4]");
  CHECK_INFER(m, "fu", "f32[4]");
  CHECK_INFER(m, "ch", "f32[2,3,3]");
  CHECK_INFER(m, "ts", "f32[2,3,5]");
  CHECK_INFER(m, "tr", "f32[2,5,3]");
  /* Declared ops keep their declared shape; without one nothing is
   * inferred and no reason is given. */
  CHECK_INFER_DECL(m, "cc", "f32[8]");
  CHECK_INFER_DECL(m, "ag", "f32[16]");
  CHECK_INFER(m, "cc", "error: ");
  tr_module_free(m);
}

/* The parser infers omitted result shapes through tr_infer_shape. */
TR_TEST(verify_parser_infers_omitted_shapes) {
  tr_module *m = parse_ok(
      "HloModule omitted\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  q = f32[3,4] parameter(1)\n"
      "  t = transpose(p), dimensions={1,0}\n"
      "  d = dot(p, q), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
      "  c = compare(d, d), direction=NE\n"
      "  ROOT r = tuple(t, c)\n"
      "}\n");
  CHECK(m != NULL);
  if (!m) return;
  tr_buf b = {0};
  tr_shape_print(&b, m->entry->root->shape, false);
  CHECK_STR(tr_buf_str(&b), "(f32[3,2], pred[2,4])");
  tr_buf_free(&b);
  tr_module_free(m);
}

/* Types outside trench's core set still verify structurally. */
TR_TEST(verify_noncore_dtypes) {
  CHECK_VERIFY(
      "HloModule noncore\n"
      "ENTRY e {\n"
      "  a = f8e4m3fnuz[4] parameter(0)\n"
      "  b = c64[2] parameter(1)\n"
      "  c = s2[8] parameter(2)\n"
      "  d = f8e4m3fnuz[4] add(a, a)\n"
      "  x = f8e4m3fnuz[4] exponential(d)\n"
      "  m = c64[2] multiply(b, b)\n"
      "  mag = f32[2] abs(m)\n"
      "  sh = s2[8] shift-left(c, c)\n"
      "  k = u8[4] bitcast-convert(a)\n" /* complex to real: rejected (verify_xla_type_rules) */
      "  f = f6e3m2fn[4] convert(a)\n"
      "  ROOT t = (f8e4m3fnuz[4], c64[2], s2[8], u8[4], f6e3m2fn[4]) tuple(x, m, sh, k, f)\n"
      "}\n",
      "");
}

/* ---- bad modules: one located message per problem ---- */
TR_TEST(verify_wrong_declared_shape) {
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT a = f32[5] add(p, p)\n"
      "}\n",
      "t.hlo:4:8: error: in %a: declared shape f32[5] but operands give f32[4]");
  /* reshape keeps the operand's element type. */
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  ROOT r = f16[6] reshape(p)\n"
      "}\n",
      "t.hlo:4:8: error: in %r: declared shape f16[6] but operands give f32[6]");
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  ROOT c = f32[2,3] compare(p, p), direction=LT\n"
      "}\n",
      "t.hlo:4:8: error: in %c: declared shape f32[2,3] but operands give pred[2,3]");
}

TR_TEST(verify_reports_every_problem) {
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0)\n"
      "  q = s32[4] parameter(1)\n"
      "  m = f32[2,3] parameter(2)\n"
      "  x = f32[5] add(p, p)\n"
      "  y = f32[4] add(p, q)\n"
      "  z = f32[4] add(p)\n"
      "  t = f32[3,2] transpose(m), dimensions={0,0}\n"
      "  ROOT r = f32[4] negate(p)\n"
      "}\n",
      "t.hlo:6:3: error: in %x: declared shape f32[5] but operands give f32[4]\n"
      "t.hlo:7:3: error: in %y: operand 1 of add has shape s32[4] but operand 0 has f32[4]\n"
      "t.hlo:8:3: error: in %z: add takes 2 operand(s) but has 1\n"
      "t.hlo:9:3: error: in %t: transpose dimensions={0,0} repeats dimension 0");
}

TR_TEST(verify_error_cap) {
  tr_buf text = {0};
  tr_buf_puts(&text, "HloModule many\nENTRY e {\n  p = f32[4] parameter(0)\n");
  for (int i = 0; i < 30; i++) tr_buf_printf(&text, "  x%d = f32[3] negate(p)\n", i);
  tr_buf_puts(&text, "  ROOT r = f32[4] negate(p)\n}\n");
  char *msgs = verify_text(tr_buf_str(&text));
  int lines = 1;
  for (const char *s = msgs; *s; s++) lines += *s == '\n';
  CHECK_EQ_INT(lines, 21);
  CHECK_CONTAINS(msgs, "t.hlo:4:3: error: in %x0: declared shape f32[3] but operands give f32[4]");
  CHECK_CONTAINS(msgs, "t.hlo: error: too many errors; stopping after 20");
  free(msgs);
  tr_buf_free(&text);
}

TR_TEST(verify_bad_attributes) {
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  ROOT r = f32[2,3] reverse(p), dimensions={2}\n"
      "}\n",
      "t.hlo:4:8: error: in %r: reverse dimensions={2}: dimension 2 is out of range for rank 2");
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  ROOT r = f32[2,3] transpose(p)\n"
      "}\n",
      "t.hlo:4:8: error: in %r: transpose needs attribute dimensions");
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2] parameter(0)\n"
      "  ROOT c = pred[2] compare(p, p), direction=LT, type=SIGNED\n"
      "}\n",
      "t.hlo:4:8: error: in %c: compare type=SIGNED does not fit element type f32");
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  ROOT i = s32[4] iota(), iota_dimension=1\n"
      "}\n",
      "t.hlo:3:8: error: in %i: iota_dimension=1 is out of range for s32[4]");
  /* An identifier outside attrs.def's list (the parser rejects it, so it is
   * planted through the API). */
  tr_module *m = parse_ok(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[2] parameter(0)\n"
      "  ROOT c = pred[2] compare(p, p), direction=LT\n"
      "}\n");
  CHECK(m != NULL);
  if (!m) return;
  tr_attr *at = tr_instr_attr(find(m, "c"), TR_ATTR_DIRECTION);
  at->u.s = "XX";
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "t.hlo:4:8: error: in %c: direction=XX is not one of EQ|NE|GE|GT|LE|LT");
  free(msgs);
  tr_module_free(m);
}

TR_TEST(verify_missing_computation) {
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0)\n"
      "  z = f32[] constant(0)\n"
      "  ROOT r = f32[] reduce(p, z), dimensions={0}\n"
      "}\n",
      "t.hlo:5:8: error: in %r: reduce needs attribute to_apply");
  CHECK_VERIFY(
      "HloModule bad\n"
      "c {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT t = pred[] constant(true)\n"
      "}\n"
      "ENTRY e {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT w = f32[4] while(p), condition=c\n"
      "}\n",
      "t.hlo:8:8: error: in %w: while needs attribute body");
  CHECK_VERIFY(
      "HloModule bad\n"
      "b {\n"
      "  x = f32[4] parameter(0)\n"
      "  ROOT y = f32[4] negate(x)\n"
      "}\n"
      "ENTRY e {\n"
      "  i = s32[] parameter(0)\n"
      "  v = f32[4] parameter(1)\n"
      "  ROOT c = f32[4] conditional(i, v)\n"
      "}\n",
      "t.hlo:9:8: error: in %c: conditional with an s32 selector needs branch_computations");
  /* A computation from another module. */
  tr_module *m = parse_ok(
      "HloModule m\n"
      "f {\n"
      "  a = f32[4] parameter(0)\n"
      "  ROOT n = f32[4] negate(a)\n"
      "}\n"
      "ENTRY e {\n"
      "  v = f32[4] parameter(0)\n"
      "  ROOT c = f32[4] call(v), to_apply=f\n"
      "}\n");
  tr_module *other = tr_module_new("other");
  CHECK(m != NULL);
  if (!m) return;
  tr_instr_attr(find(m, "c"), TR_ATTR_TO_APPLY)->u.comp = tr_comp_new(other, "g");
  char *msgs = verify_module(m);
  CHECK_STR(msgs, "t.hlo:8:8: error: in %c: to_apply names a computation that is not in the module");
  free(msgs);
  tr_module_free(other);
  tr_module_free(m);
}

TR_TEST(verify_structure) {
  /* Parameter numbers with a gap. */
  CHECK_VERIFY(
      "HloModule bad\n"
      "ENTRY e {\n"
      "  a = f32[4] parameter(0)\n"
      "  b = f32[4] parameter(2)\n"
      "  ROOT c = f32[4] add(a, b)\n"
      "}\n",
      "t.hlo:4:3: error: in %b: parameter number 2 is out of range: computation e has 2 parameter(s), numbered 0..1");
  /* No entry and an empty computation, built through the API. */
  tr_module *m = tr_module_new("m");
  tr_comp *k = tr_comp_new(m, "empty");
  k->line = 2;
  k->col = 1;
  char *msgs = verify_module(m);
  CHECK_STR(msgs,
            "<module>: error: module m has no ENTRY computation\n"
            "<module>:2:1: error: in computation %empty: it has no instructions");
  free(msgs);
  /* A computation without a root. */
  tr_instr *p = tr_instr_new(m, TR_OP_PARAMETER, "p", tr_shape_array(m->arena, TR_DT_F32, 0, NULL));
  tr_comp_append(k, p);
  k->is_entry = true;
  m->entry = k;
  msgs = verify_module(m);
  CHECK_STR(msgs, "<module>:2:1: error: in computation %empty: it has no ROOT instruction");
  free(msgs);
  k->root = p;
  msgs = verify_module(m);
  CHECK_STR(msgs, "");
  free(msgs);
  tr_module_free(m);
  /* Unknown operands are the parser's to report. */
  tr_diag d = {0};
  const char *text = "HloModule bad\nENTRY e {\n  ROOT a = f32[4] negate(nope)\n}\n";
  CHECK(tr_parse("t.hlo", text, strlen(text), NULL, &d) == NULL);
  CHECK(d.nmsgs > 0);
  tr_diag_clear(&d);
}

TR_TEST(verify_bad_called_signatures) {
  const char *hdr =
      "HloModule bad\n"
      "add3 {\n"
      "  x = f32[] parameter(0)\n"
      "  y = f32[] parameter(1)\n"
      "  w = f32[] parameter(2)\n"
      "  ROOT z = f32[] add(x, y)\n"
      "}\n"
      "addi {\n"
      "  x = s32[] parameter(0)\n"
      "  y = s32[] parameter(1)\n"
      "  ROOT z = s32[] add(x, y)\n"
      "}\n"
      "cmpf {\n"
      "  x = f32[] parameter(0)\n"
      "  y = f32[] parameter(1)\n"
      "  ROOT z = f32[] add(x, y)\n"
      "}\n"
      "c {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT t = s32[] constant(1)\n"
      "}\n"
      "b {\n"
      "  p = f32[4] parameter(0)\n"
      "  ROOT t = f32[5] broadcast(f32[] constant(1)), dimensions={}\n"
      "}\n";
  tr_buf t = {0};
  tr_buf_printf(&t,
                "%sENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add3\n}\n",
                hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:29:8: error: in %r: to_apply computation add3 must take 2 parameter(s) but takes 3");
  t.n = 0;
  tr_buf_printf(&t,
                "%sENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=addi\n}\n",
                hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:29:8: error: in %r: init value 0 of reduce has type f32 but to_apply computation addi accumulates s32");
  t.n = 0;
  tr_buf_printf(&t,
                "%sENTRY e {\n  p = f32[4] parameter(0)\n  z = f32[] constant(0)\n"
                "  ROOT r = f32[4] sort(p), dimensions={0}, to_apply=cmpf\n}\n",
                hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:29:8: error: in %r: sort comparator cmpf must return pred[] but returns f32[]");
  t.n = 0;
  tr_buf_printf(&t, "%sENTRY e {\n  p = f32[4] parameter(0)\n  ROOT w = f32[4] while(p), condition=c, body=b\n}\n", hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:28:8: error: in %w: condition computation c must return pred[] but returns s32[]");
  t.n = 0;
  tr_buf_printf(&t, "%sENTRY e {\n  p = f32[4] parameter(0)\n  ROOT w = f32[4] call(p, p), to_apply=b\n}\n", hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:28:8: error: in %w: to_apply computation b must take 2 parameter(s) but takes 1");
  t.n = 0;
  tr_buf_printf(&t, "%sENTRY e {\n  p = f32[4] parameter(0)\n  ROOT w = f32[5] call(p), to_apply=b\n}\n", hdr);
  CHECK_VERIFY(tr_buf_str(&t), "");
  t.n = 0;
  tr_buf_printf(&t, "%sENTRY e {\n  p = f32[5] parameter(0)\n  ROOT w = f32[5] call(p), to_apply=b\n}\n", hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:28:8: error: in %w: parameter 0 of to_apply computation b has shape f32[4] but operand 0 is f32[5]");
  t.n = 0;
  tr_buf_printf(&t,
                "%sENTRY e {\n  p = pred[] parameter(0)\n  v = f32[4] parameter(1)\n"
                "  ROOT k = f32[4] conditional(p, v, v), true_computation=b, false_computation=c\n}\n",
                hdr);
  CHECK_VERIFY(tr_buf_str(&t), "t.hlo:29:8: error: in %k: branch computation c returns s32[] but b returns f32[5]");
  tr_buf_free(&t);
}

/* One wrong instruction per rule, with XLA's reason. */
TR_TEST(verify_rule_errors) {
  static const struct {
    const char *instr; /* the ROOT line, over p = f32[2,3], q = s32[4], s = f32[], i = s32[],
                        * cx = c64[2,3] */
    const char *want;  /* the message after "in %r: " */
  } cases[] = {
      {"f32[2,4] broadcast(p), dimensions={0,1}",
       "broadcast maps operand dimension 1 (size 3) to result dimension 1 of size 4"},
      {"f32[4,2] broadcast(p), dimensions={0,1}",
       "broadcast maps operand dimension 0 (size 2) to result dimension 0 of size 4"},
      {"f32[4] broadcast(p)", "broadcast dimensions={} has 0 entries but the operand f32[2,3] has rank 2"},
      {"f32[5] reshape(p)", "reshape from f32[2,3] to f32[5] changes the element count from 6 to 5"},
      {"f32[5] bitcast(p)", "bitcast from f32[2,3] to f32[5] changes the size from 192 to 160 bits"},
      {"s64[2] bitcast-convert(p)",
       "bitcast-convert from f32[2,3] to the wider s64 needs a last dimension of size 2"},
      {"f32[2,3] slice(p), slice={[0:2], [1:4]}", "slice dimension 1: [1:4] is not within [0:3] of f32[2,3]"},
      {"f32[2,3] slice(p), slice={[0:2]}", "slice has 1 ranges but the operand f32[2,3] has rank 2"},
      {"f32[2,3] slice(p), slice={[0:2], [0:3:0]}", "slice dimension 1 has stride 0; strides must be positive"},
      {"f32[2,3] dynamic-slice(p, i, i), dynamic_slice_sizes={3,1}",
       "dynamic-slice size 3 of dimension 0 is not within [0, 2] of f32[2,3]"},
      {"f32[2,3] dynamic-slice(p, i), dynamic_slice_sizes={1,1}",
       "dynamic-slice of a rank-2 operand needs 2 scalar start indices but has 1"},
      {"f32[2,3] dynamic-slice(p, i, s), dynamic_slice_sizes={1,1}",
       "start index (operand 2) of dynamic-slice must be an integer but has shape f32[]"},
      {"f32[2,3] dynamic-update-slice(p, q, i, i)",
       "update s32[4] of dynamic-update-slice must have the rank and type of operand f32[2,3]"},
      {"f32[2,3] concatenate(p, q), dimensions={0}",
       "operand 1 of concatenate has shape s32[4] but operand 0 has f32[2,3]"},
      {"f32[2,3] concatenate(p, p), dimensions={2}", "concatenate dimension 2 is out of range for f32[2,3]"},
      {"f32[2,3] pad(p, s), padding=0_0x-2_-2", "pad gives dimension 1 of f32[2,3] the negative size -1"},
      {"f32[2,3] pad(p, i), padding=0_0x0_0", "padding value s32[] of pad must have the element type of operand f32[2,3]"},
      {"f32[2,3] pad(p, s), padding=0_0", "padding has 1 dimensions but the operand f32[2,3] has rank 2"},
      {"f32[2,3] select(p, p, p)", "predicate of select must be pred but has shape f32[2,3]"},
      {"f32[2,3] clamp(p, p, q)", "max s32[4] of clamp must be a scalar or have the shape of operand f32[2,3]"},
      {"f32[2,3] floor(i)", "operand 0 of floor has shape s32[] but floor needs a float type"},
      {"s32[4] shift-left(p, p)", "operand 0 of shift-left has shape f32[2,3] but shift-left needs an integer type"},
      {"pred[2,3] is-finite(q)", "operand 0 of is-finite has shape s32[4] but is-finite needs a float type"},
      {"pred[] compare(s, s)", "compare needs attribute direction"},
      {"u32[4] abs(u32[4] convert(q))", "abs needs a signed or float operand, not u32[4]"},
      {"f32[2,3] dot(p, p), lhs_contracting_dims={1}, rhs_contracting_dims={0}",
       "dot contracting dimension 1 of lhs f32[2,3] and 0 of rhs f32[2,3] differ in size"},
      {"f32[2,3] dot(p, p), lhs_batch_dims={0}, rhs_batch_dims={}",
       "dot lhs_batch_dims={0} and rhs_batch_dims={} must have the same length"},
      /* Mixed operand types are fine (as in XLA); the dims are not. */
      {"f32[2,3] dot(p, q)", "declared shape f32[2,3] but operands give f32[2,3,4]"},
      {"f32[3] topk(q), k=5", "topk k=5 is not within [0, 4] of s32[4]"},
      {"f32[2,3] cholesky(p)", "cholesky needs square matrices [..., n, n], not f32[2,3]"},
      {"f32[2,3] get-tuple-element(p), index=0", "operand of get-tuple-element must be a tuple but has shape f32[2,3]"},
      {"f32[2,3] get-tuple-element((f32[2,3], s32[4]) tuple(p, q)), index=2",
       "get-tuple-element index=2 is out of range for (f32[2,3], s32[4])"},
      {"f32[2,3] convert(cx)",
       "convert from complex c64[2,3] to real f32 is not allowed (use real or imag)"},
      {"f32[2,3] reduce-precision(p), exponent_bits=0, mantissa_bits=3",
       "reduce-precision needs exponent_bits >= 1, not 0"},
      {"s32[2,3] iota(), iota_dimension=-1", "iota_dimension=-1 is out of range for s32[2,3]"},
      {"token[] after-all(p)", "operand 0 of after-all must be a token but has shape f32[2,3]"},
  };
  for (int k = 0; k < TR_NELEMS(cases); k++) {
    tr_buf t = {0}, w = {0};
    tr_buf_printf(&t,
                  "HloModule r\nENTRY e {\n  p = f32[2,3] parameter(0)\n  q = s32[4] parameter(1)\n"
                  "  s = f32[] parameter(2)\n  i = s32[] parameter(3)\n  cx = c64[2,3] parameter(4)\n"
                  "  ROOT r = %s\n}\n",
                  cases[k].instr);
    tr_buf_printf(&w, "t.hlo:8:8: error: in %%r: %s", cases[k].want);
    char *msgs = verify_text(tr_buf_str(&t));
    CHECK_STR(msgs, tr_buf_str(&w));
    free(msgs);
    tr_buf_free(&t);
    tr_buf_free(&w);
  }
}

TR_TEST(verify_rule_errors_gather_scatter_conv) {
  static const struct {
    const char *instr; /* ROOT line over op = f32[3,4,5], ix = s32[6,2], ... */
    const char *want;
  } cases[] = {
      {"f32[6,2,5] gather(op, ix), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,2,5}",
       "gather slice size of collapsed or batching dimension 0 must be 0 or 1, not 2"},
      {"f32[6,2,5] gather(op, ix), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2,5}",
       "gather start_index_map={0} has 1 entries but dimension 1 of indices s32[6,2] has size 2"},
      {"f32[6,2,5] gather(op, ix), offset_dims={2,1}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,5}",
       "gather offset_dims={2,1} must be sorted"},
      {"f32[6,2,5] gather(op, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,5}",
       "gather offset_dims (1), collapsed_slice_dims (1) and operand_batching_dims (0) must add up to the operand rank 3"},
      {"f32[6,2,5] gather(op, ix), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=3, slice_sizes={1,2,5}",
       "gather index_vector_dim=3 is out of range for indices s32[6,2]"},
      {"f32[6,2,5] gather(op, ix), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,0}, index_vector_dim=1, slice_sizes={1,2,5}",
       "gather start_index_map={0,0} repeats dimension 0"},
      {"f32[6,2,5] gather(op, fx), offset_dims={1,2}, collapsed_slice_dims={0}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={1,2,5}",
       "start indices of gather must be integers but have shape f32[6,2]"},
      {"f32[2,5,4] gather(bop, bix), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={2}, index_vector_dim=2, slice_sizes={1,1,4}",
       "gather start_indices_batching_dims={2} contains index_vector_dim 2"},
      {"f32[2,5,4] gather(bop, bix), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={0}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}",
       "gather: dimension 0 is in both start_index_map and operand_batching_dims"},
      {"f32[3,4,5] scatter(op, six, upd6), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
       "scatter dimension 0 of updates f32[5,4,5] has size 5 but the indices s32[6,1] give 6"},
      {"f32[3,4,5] scatter(op, six, big), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
       "update window dimension 2 of f32[6,4,6] (size 6) exceeds dimension 2 of input f32[3,4,5]"},
      {"f32[3,4,5] scatter(op, six), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add",
       "scatter needs N inputs, the indices and N updates (an odd count of at least 3), not 2 operands"},
      {"f32[3,4,5] scatter(op, six, upd), update_window_dims={1,2}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=addi",
       "init value 0 of scatter has type f32 but to_apply computation addi accumulates s32"},
      {"f32[1,5,5,8] convolution(img, ker), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2",
       "convolution input features 3 must be feature_group_count 2 times the kernel input features 3"},
      {"f32[1,5,5,8] convolution(img, ker), window={size=2x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f",
       "convolution window size 2 of spatial dimension 0 does not match kernel f32[3,3,3,8]"},
      {"f32[1,5,5,8] convolution(img, ker), window={size=3 pad=1_1}, dim_labels=b01f_01io->b01f",
       "convolution window has 1 dimensions but dim_labels has 2 spatial dimensions"},
      {"f32[1,5,5,8] convolution(img, ker), window={size=3x3 stride=1x0}, dim_labels=b01f_01io->b01f",
       "convolution window dimension 1 has stride 0; strides must be positive"},
      {"f32[1,5,5,8] convolution(img, ker), window={size=3x3}, dim_labels=b01f_01io->b01f, feature_group_count=3, batch_group_count=2",
       "feature_group_count 3 and batch_group_count 2 cannot both exceed 1"},
      {"f32[1,5,5,8] reduce-window(img, z), window={size=3x3}, to_apply=add",
       "window of reduce-window has 2 dimensions but the input f32[1,5,5,3] has rank 4"},
      {"f32[1,5,5,3] select-and-scatter(img, img, z), window={size=1x2x2x1 stride=1x2x2x1}, select=add, scatter=add",
       "source f32[1,5,5,3] of select-and-scatter must have the window-reduced operand shape f32[1,2,2,3]"},
      {"f32[3] reduce(op, z), dimensions={0,0}, to_apply=add", "reduce dimensions={0,0} repeats dimension 0"},
      {"(f32[3], s32[3]) reduce(op, z, z), dimensions={0}, to_apply=add",
       "reduce needs N inputs and N init values (an even count of at least 2), not 3 operands"},
      {"f32[3,4,5] map(op, img), to_apply=add", "operand 1 of map has shape f32[1,5,5,3] but operand 0 has f32[3,4,5]"},
  };
  for (int k = 0; k < TR_NELEMS(cases); k++) {
    tr_buf t = {0}, w = {0};
    tr_buf_printf(&t,
                  "HloModule r\n"
                  "add {\n  x = f32[] parameter(0)\n  y = f32[] parameter(1)\n  ROOT z = f32[] add(x, y)\n}\n"
                  "addi {\n  x = s32[] parameter(0)\n  y = s32[] parameter(1)\n  ROOT z = s32[] add(x, y)\n}\n"
                  "ENTRY e {\n"
                  "  op = f32[3,4,5] parameter(0)\n  ix = s32[6,2] parameter(1)\n  fx = f32[6,2] parameter(2)\n"
                  "  bop = f32[2,3,4] parameter(3)\n  bix = s32[2,5,1] parameter(4)\n  six = s32[6,1] parameter(5)\n"
                  "  upd = f32[6,4,5] parameter(6)\n  upd6 = f32[5,4,5] parameter(7)\n  big = f32[6,4,6] parameter(8)\n"
                  "  img = f32[1,5,5,3] parameter(9)\n  ker = f32[3,3,3,8] parameter(10)\n  z = f32[] parameter(11)\n"
                  "  ROOT r = %s\n}\n",
                  cases[k].instr);
    tr_buf_printf(&w, "t.hlo:25:8: error: in %%r: %s", cases[k].want);
    char *msgs = verify_text(tr_buf_str(&t));
    CHECK_STR(msgs, tr_buf_str(&w));
    free(msgs);
    tr_buf_free(&t);
    tr_buf_free(&w);
  }
}

/* tr_infer_shape never needs tr_verify first: a standalone call on a bad
 * instruction returns NULL with the reason. */
TR_TEST(verify_infer_reports_reason) {
  tr_module *m = parse_ok(
      "HloModule m\n"
      "ENTRY e {\n"
      "  p = f32[2,3] parameter(0)\n"
      "  q = f32[3,2] parameter(1)\n"
      "  ROOT a = f32[2,3] add(p, q)\n"
      "}\n");
  CHECK(m != NULL);
  if (!m) return;
  char *s = infer(m, "a", true);
  CHECK_STR(s, "error: operand 1 of add has shape f32[3,2] but operand 0 has f32[2,3]");
  free(s);
  /* A NULL why is allowed. */
  CHECK(tr_infer_shape(m->arena, find(m, "a"), NULL) == NULL);
  tr_module_free(m);
}

TR_TEST(verify_xla_type_rules) {
  /* Pairs XLA's shape inference and verifier reject that the shape rules
   * alone would take: real/imag of integers and pred, complex of parts
   * other than f32/f32 and f64/f64, iota of pred, bitcast-convert between
   * complex and real. */
  CHECK_VERIFY("HloModule m\n"
               "ENTRY e {\n"
               "  a = s32[2] constant({1, 2})\n"
               "  p = pred[2] constant({1, 0})\n"
               "  h = f16[2] constant({1, 2})\n"
               "  c = c64[2] constant({(1, 2), (3, 4)})\n"
               "  r = s32[2] real(a)\n"
               "  i = pred[2] imag(p)\n"
               "  x = c64[2] complex(h, h)\n"
               "  o = pred[3] iota(), iota_dimension=0\n"
               "  b = s64[2] bitcast-convert(c)\n"
               "  ROOT t = (s32[2], pred[2], c64[2], pred[3], s64[2]) tuple(r, i, x, o, b)\n"
               "}\n",
               "t.hlo:7:3: error: in %r: real of s32: XLA takes only float or complex operands\n"
               "t.hlo:8:3: error: in %i: imag of pred: XLA takes only float or complex operands\n"
               "t.hlo:9:3: error: in %x: complex of f16 and f16: XLA builds c64 from f32 and c128 from "
               "f64 parts only\n"
               "t.hlo:10:3: error: in %o: iota of pred: XLA makes iotas of integer, float and complex "
               "types only\n"
               "t.hlo:11:3: error: in %b: bitcast-convert from c64 to s64: XLA does not convert between "
               "complex and real types");
  /* What XLA allows: real/imag of floats (the value, or 0) and of complex,
   * complex of f64 parts, iota of c64, bitcast-convert c64 to c64. */
  CHECK_VERIFY("HloModule m\n"
               "ENTRY e {\n"
               "  f = f32[2] constant({1, 2})\n"
               "  g = f64[2] constant({1, 2})\n"
               "  c = c64[2] constant({(1, 2), (3, 4)})\n"
               "  r = f32[2] real(f)\n"
               "  i = f32[2] imag(c)\n"
               "  x = c128[2] complex(g, g)\n"
               "  o = c64[3] iota(), iota_dimension=0\n"
               "  b = c64[2] bitcast-convert(c)\n"
               "  ROOT t = (f32[2], f32[2], c128[2], c64[3], c64[2]) tuple(r, i, x, o, b)\n"
               "}\n",
               "");
}

/* Ops whose rule is DECLARED but whose result XLA still determines: the
 * declared shape is checked against the operands. */
TR_TEST(verify_declared_results) {
  static const char *const bad[][2] = {
    {"complex of f32 parts declared f32",
     "HloModule m\nENTRY e {\n  x = f32[4] parameter(0)\n  ROOT c = f32[4] complex(x, x)\n}\n"},
    {"real of c64 declared f64",
     "HloModule m\nENTRY e {\n  x = c64[4] parameter(0)\n  ROOT r = f64[4] real(x)\n}\n"},
    {"imag of c128 declared c128",
     "HloModule m\nENTRY e {\n  x = c128[2] parameter(0)\n  ROOT r = c128[2] imag(x)\n}\n"},
    {"rng-bit-generator whose new state differs",
     "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n"
     "  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_philox\n}\n"},
    {"rng-bit-generator of an s32 state",
     "HloModule m\nENTRY e {\n  s = s32[2] parameter(0)\n"
     "  ROOT r = (s32[2], u32[4]) rng-bit-generator(s), algorithm=rng_philox\n}\n"},
    {"rng-bit-generator of float bits",
     "HloModule m\nENTRY e {\n  s = u64[2] parameter(0)\n"
     "  ROOT r = (u64[2], f32[4]) rng-bit-generator(s), algorithm=rng_philox\n}\n"},
    /* StableHLO C2 (seed 26, compile_error-none-none: XLA CPU's
     * expander makes a u64[2] state and its verifier fails). */
    {"rng-bit-generator three_fry of a 3-word state",
     "HloModule m\nENTRY e {\n  s = u64[3] parameter(0)\n"
     "  ROOT r = (u64[3], u32[4]) rng-bit-generator(s), algorithm=rng_three_fry\n}\n"},
    {"rng-bit-generator philox of a 4-word state",
     "HloModule m\nENTRY e {\n  s = u64[4] parameter(0)\n"
     "  ROOT r = (u64[4], u32[4]) rng-bit-generator(s), algorithm=rng_philox\n}\n"},
  };
  for (int i = 0; i < TR_NELEMS(bad); i++) {
    tr_module *m = parse_ok(bad[i][1]);
    CHECK(m != NULL);
    if (!m) continue;
    tr_diag d = {0};
    if (tr_verify(m, &d) == TR_OK) {
      fprintf(stderr, "  verifier accepts: %s\n", bad[i][0]);
      tr_test_failed++;
    }
    tr_diag_clear(&d);
    tr_module_free(m);
  }
  static const char *const good =
      "HloModule m\nENTRY e {\n  x = f64[3] parameter(0)\n  c = c128[3] complex(x, x)\n"
      "  r = f64[3] real(c)\n  i = f64[3] imag(c)\n  s = u64[2] parameter(1)\n"
      "  g = (u64[2], u8[5]) rng-bit-generator(s), algorithm=rng_three_fry\n"
      "  ROOT t = (f64[3], f64[3], (u64[2], u8[5])) tuple(r, i, g)\n}\n";
  tr_module *m = parse_ok(good);
  tr_diag d = {0};
  CHECK(m && tr_verify(m, &d) == TR_OK);
  tr_diag_print(&d, stderr);
  tr_diag_clear(&d);
  tr_module_free(m);
  /* The sweep of the op table: each DECLARED op the evaluator runs has
   * its result inferred, except those whose evaluation checks the
   * declared shape itself: custom-call (XLA does not check its result
   * either), the collectives (one participant: a result that is not the
   * operand is "unsupported"), the async wrappers (the wrapped
   * computation's shape), the <op>-start/-done pairs (desugar.c rewrites
   * them into their synchronous op, whose result is checked) and fft (ev_fft_spec_of checks the declared type
   * and every dim against fft_type and fft_length before evaluating),
   * scan (core_scan.c checks the result's structure, the scan dimension
   * and each step's element count against to_apply's results) and
   * outfeed (a token, checked when evaluated). */
  static const tr_op self_checked[] = {TR_OP_CUSTOM_CALL, TR_OP_ALL_GATHER, TR_OP_REDUCE_SCATTER,
                                       TR_OP_ALL_TO_ALL, TR_OP_COLLECTIVE_PERMUTE, TR_OP_ASYNC_START,
                                       TR_OP_ASYNC_UPDATE, TR_OP_ASYNC_DONE, TR_OP_FFT, TR_OP_SCAN,
                                       TR_OP_OUTFEED};
  for (int op = 0; op < TR_OP_COUNT; op++) {
    bool skip = tr_ops[op].rule != TR_RULE_DECLARED;
    for (int i = 0; i < TR_NELEMS(self_checked); i++) skip = skip || op == (int)self_checked[i];
    const char *nm = tr_ops[op].name;
    size_t nl = strlen(nm);
    skip = skip || (nl > 6 && strcmp(nm + nl - 6, "-start") == 0) || (nl > 5 && strcmp(nm + nl - 5, "-done") == 0);
    if (skip) continue;
    if (tr_eval_supports((tr_op)op) && !tr_declared_inferred((tr_op)op)) {
      fprintf(stderr, "  %s is evaluated but its declared result is not checked\n", tr_ops[op].name);
      tr_test_failed++;
    }
  }
}
