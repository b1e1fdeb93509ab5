/* test_emit.c - the C emitter and the JIT on their own (no passes): for
 * every element type, one module holding every elementwise op that type
 * takes, at sizes around the lane width (0, 1, 7, 8, 9, 17), evaluated by
 * the reference and by the emitted code on edge values (NaN, -0, inf,
 * INT_MIN, denormals), compared bit for bit (NaN payloads aside, 4 ulp for
 * transcendentals); every convert pair; data movement, reductions and
 * dots at odd sizes and with odd lane and tile widths; clean UNSUPPORTED
 * diagnostics; the JIT's caches; CRASH and HANG verdicts of the worker. */
#include "../../src/comp/emit.h"
#include "../../src/comp/jit.h"
#include "../../src/eval/eval.h"
#include "test.h"

#include <math.h>
#include <stdlib.h>

/* From test_builtin.c. */
void tb_fill(tr_tensor *t, int seed);
tr_module *tb_parse(const char *text, const char *what);

static const char *const binary_ops[] = {
  "add", "subtract", "multiply", "divide", "remainder", "power", "maximum", "minimum", "and",
  "or", "xor", "shift-left", "shift-right-arithmetic", "shift-right-logical", "atan2"};
static const char *const unary_ops[] = {
  "abs", "negate", "sign", "floor", "ceil", "round-nearest-afz", "round-nearest-even",
  "exponential", "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt",
  "tanh", "logistic", "sine", "cosine", "tan", "erf", "is-finite", "not", "popcnt",
  "count-leading-zeros", "copy"};
static const char *const dirs[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
static const int sizes[] = {0, 1, 7, 8, 9, 17};

/* Whether op accepts operands of type dt (ops.def's type classes). */
static bool takes(const char *name, tr_dtype dt) {
  tr_op op;
  if (!tr_op_lookup(name, strlen(name), &op)) return false;
  const char *ty = tr_ops[op].types;
  bool flt = tr_dtype_is_float(dt), pred = dt == TR_DT_PRED;
  if (strcmp(ty, "f") == 0) return flt;
  if (strcmp(ty, "i") == 0) return tr_dtype_is_int(dt);
  if (strcmp(ty, "ip") == 0) return tr_dtype_is_int(dt) || pred;
  if (strcmp(ty, "n") == 0) return !pred;
  return true;
}

/* Reference vs emitted code on one module; returns false on a mismatch
 * or a failure to compile or run (unsupported counts as a failure here:
 * every op in these modules is meant to be supported). */
static bool agree_pre(const tr_module *m, const tr_emit_opts *eo, int seed, bool loose, const char *what,
                      const char *prefix);

static bool agree(const tr_module *m, const tr_emit_opts *eo, int seed, bool loose, const char *what) {
  return agree_pre(m, eo, seed, loose, what, NULL);
}

/* agree, with prefix (C text, e.g. a #define) put before the unit. */
static bool agree_pre(const tr_module *m, const tr_emit_opts *eo, int seed, bool loose, const char *what,
                      const char *prefix) {
  tr_tensor *args[64];
  int nargs = 0;
  const tr_comp *e = m->entry;
  tr_diag d = {0};
  for (int p = 0; p < e->nparams && nargs < 64; p++) {
    const tr_shape *s = e->params[p]->shape;
    args[nargs] = tr_tensor_new(s->dtype, s->rank, s->dims, &d);
    tb_fill(args[nargs], seed + 5 * p);
    nargs++;
  }
  tr_tensor **ref = NULL;
  int nref = 0;
  bool ok = true;
  if (tr_eval(m, args, nargs, &ref, &nref, &d) != TR_OK) {
    fprintf(stderr, "  %s: reference failed:\n", what);
    tr_diag_print(&d, stderr);
    ok = false;
  }
  tr_buf src = {0};
  tr_jit_code *code = NULL;
  if (prefix) tr_buf_puts(&src, prefix);
  if (ok && tr_emit_c(m, eo, &src, &d) != TR_OK) {
    fprintf(stderr, "  %s: emit failed:\n", what);
    tr_diag_print(&d, stderr);
    ok = false;
  }
  if (ok && tr_jit_compile(NULL, tr_buf_str(&src), &code, NULL, &d) != TR_OK) {
    fprintf(stderr, "  %s: compile failed:\n", what);
    tr_diag_print(&d, stderr);
    ok = false;
  }
  tr_tensor *outs[256];
  unsigned char *optr[256], *iptr[64];
  size_t ob[256];
  for (int i = 0; ok && i < nref; i++) {
    outs[i] = tr_tensor_new(ref[i]->dtype, ref[i]->rank, ref[i]->dims, &d);
    optr[i] = outs[i]->data;
    ob[i] = outs[i]->nbytes;
  }
  for (int i = 0; i < nargs; i++) iptr[i] = args[i]->data;
  if (ok) {
    tr_jit_run jr = {0};
    tr_jit_entry fn = tr_jit_symbol(code, TR_EMIT_ENTRY);
    CHECK(fn != NULL);
    if (!fn || tr_jit_run_forked(fn, iptr, optr, ob, nref, 20, &jr, &d) != TR_OK ||
        jr.outcome != TR_JIT_RUN_OK) {
      fprintf(stderr, "  %s: run failed: %s\n", what, fn ? jr.msg : "no entry");
      ok = false;
    }
    for (int i = 0; ok && i < nref; i++) {
      size_t n = tr_tensor_count(ref[i]);
      int w = tr_dtypes[ref[i]->dtype].bits;
      for (size_t j = 0; j < n; j++) {
        uint64_t x = tr_tensor_get_bits(ref[i], j), y = tr_tensor_get_bits(outs[i], j);
        if (x == y) continue;
        if (tr_dtype_is_float(ref[i]->dtype)) {
          double fx = tr_tensor_get_f(ref[i], j), fy = tr_tensor_get_f(outs[i], j);
          if (isnan(fx) && isnan(fy)) continue;
          if (loose && !isnan(fx) && !isnan(fy) && fabs(fx - fy) <= 4 * fabs(fx) * ldexp(1.0, -tr_dtypes[ref[i]->dtype].mbits))
            continue;
        }
        (void)w;
        fprintf(stderr, "  %s: result %d element %zu: reference 0x%llx (%.17g), emitted 0x%llx (%.17g)\n",
                what, i, j, (unsigned long long)x, tr_tensor_get_f(ref[i], j), (unsigned long long)y,
                tr_tensor_get_f(outs[i], j));
        ok = false;
        break;
      }
    }
    for (int i = 0; i < nref; i++) tr_tensor_free(outs[i]);
  }
  tr_jit_release(code);
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_eval_free_outputs(ref, nref);
  for (int i = 0; i < nargs; i++) tr_tensor_free(args[i]);
  if (!ok) tr_test_failed++;
  return ok;
}

static bool agree_text(const char *text, const tr_emit_opts *eo, bool loose, const char *what) {
  tr_module *m = tb_parse(text, what);
  if (!m) return false;
  bool ok = agree(m, eo, 1, loose, what) && agree(m, eo, 4, loose, what);
  tr_module_free(m);
  return ok;
}

static bool transcendental(const char *op) {
  static const char *const t[] = {"exponential", "exponential-minus-one", "log", "log-plus-one",
                                  "rsqrt", "cbrt", "tanh", "logistic", "sine", "cosine", "tan",
                                  "erf", "atan2", "power"};
  for (int i = 0; i < TR_NELEMS(t); i++)
    if (strcmp(op, t[i]) == 0) return true;
  return false;
}

/* One module per element type: every size, every op it takes, as a
 * tuple. Transcendentals go in a second module judged within 4 ulp. */
static void elementwise_for(tr_dtype dt, bool loose) {
  const char *tn = tr_dtype_name(dt);
  tr_buf t = {0}, root = {0};
  tr_buf_puts(&t, "HloModule ew\nENTRY e {\n");
  int nres = 0;
  for (int si = 0; si < TR_NELEMS(sizes); si++) {
    int n = sizes[si];
    tr_buf_printf(&t, "  a%d = %s[%d] parameter(%d)\n  b%d = %s[%d] parameter(%d)\n", n, tn, n, 2 * si,
                  n, tn, n, 2 * si + 1);
    for (int i = 0; i < TR_NELEMS(binary_ops); i++) {
      const char *op = binary_ops[i];
      if (!takes(op, dt) || transcendental(op) != loose) continue;
      tr_buf_printf(&t, "  r%d = %s[%d] %s(a%d, b%d)\n", nres, tn, n, op, n, n);
      tr_buf_printf(&root, "%sr%d", nres ? ", " : "", nres);
      nres++;
    }
    for (int i = 0; i < TR_NELEMS(unary_ops); i++) {
      const char *op = unary_ops[i];
      if (!takes(op, dt) || transcendental(op) != loose) continue;
      if ((!strcmp(op, "abs") || !strcmp(op, "sign")) && tr_dtypes[dt].kind == TR_DK_UINT) continue;
      tr_buf_printf(&t, "  r%d = %s[%d] %s(a%d)\n", nres, strcmp(op, "is-finite") ? tn : "pred", n, op, n);
      tr_buf_printf(&root, "%sr%d", nres ? ", " : "", nres);
      nres++;
    }
    if (!loose) {
      for (int i = 0; i < 6; i++) {
        tr_buf_printf(&t, "  r%d = pred[%d] compare(a%d, b%d), direction=%s\n", nres, n, n, n, dirs[i]);
        tr_buf_printf(&root, "%sr%d", nres ? ", " : "", nres);
        nres++;
        if (tr_dtype_is_float(dt)) {
          tr_buf_printf(&t, "  r%d = pred[%d] compare(a%d, b%d), direction=%s, type=TOTALORDER\n", nres, n,
                        n, n, dirs[i]);
          tr_buf_printf(&root, ", r%d", nres);
          nres++;
        }
      }
      tr_buf_printf(&t, "  p%d = pred[%d] compare(a%d, b%d), direction=LT\n", n, n, n, n);
      tr_buf_printf(&t, "  r%d = %s[%d] select(p%d, a%d, b%d)\n", nres, tn, n, n, n, n);
      tr_buf_printf(&root, ", r%d", nres++);
      if (dt != TR_DT_PRED) {
        tr_buf_printf(&t, "  r%d = %s[%d] clamp(a%d, b%d, a%d)\n", nres, tn, n, n, n, n);
        tr_buf_printf(&root, ", r%d", nres++);
      }
      if (n > 0 && dt != TR_DT_PRED) { /* XLA has no iota of pred (verify.c) */
        tr_buf_printf(&t, "  r%d = %s[%d] iota(), iota_dimension=0\n", nres, tn, n);
        tr_buf_printf(&root, ", r%d", nres++);
      }
    }
  }
  if (nres == 0) {
    tr_buf_free(&t);
    tr_buf_free(&root);
    return;
  }
  tr_buf_printf(&t, "  ROOT t = tuple(%s)\n}\n", tr_buf_str(&root));
  char what[64];
  snprintf(what, sizeof what, "elementwise %s%s", tn, loose ? " (transcendental)" : "");
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(tr_buf_str(&t), &eo, loose, what);
  tr_buf_free(&t);
  tr_buf_free(&root);
}

static const tr_dtype core_types[] = {TR_DT_PRED, TR_DT_S4, TR_DT_S8, TR_DT_S16, TR_DT_S32,
                                      TR_DT_S64, TR_DT_U4, TR_DT_U8, TR_DT_U16, TR_DT_U32,
                                      TR_DT_U64, TR_DT_F16, TR_DT_BF16, TR_DT_F32, TR_DT_F64,
                                      TR_DT_F8E4M3FN, TR_DT_F8E5M2};

TR_TEST(emit_elementwise_every_type_matches_reference) {
  for (int i = 0; i < TR_NELEMS(core_types); i++) elementwise_for(core_types[i], false);
}

TR_TEST(emit_transcendentals_within_4_ulp) {
  for (int i = 0; i < TR_NELEMS(core_types); i++)
    if (tr_dtype_is_float(core_types[i])) elementwise_for(core_types[i], true);
}

/* Every source type to every core type, in two modules (a tuple holds at
 * most 256 leaves). */
static void convert_from(int lo, int hi) {
  tr_buf t = {0}, root = {0};
  tr_buf_puts(&t, "HloModule cv\nENTRY e {\n");
  int nres = 0;
  for (int i = lo; i < hi; i++) {
    const char *sn = tr_dtype_name(core_types[i]);
    tr_buf_printf(&t, "  x%d = %s[23] parameter(%d)\n", i, sn, i - lo);
    for (int j = 0; j < TR_NELEMS(core_types); j++) {
      tr_buf_printf(&t, "  r%d = %s[23] convert(x%d)\n", nres, tr_dtype_name(core_types[j]), i);
      tr_buf_printf(&root, "%sr%d", nres ? ", " : "", nres);
      nres++;
    }
  }
  tr_buf_printf(&t, "  ROOT t = tuple(%s)\n}\n", tr_buf_str(&root));
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(tr_buf_str(&t), &eo, false, "convert pairs");
  tr_buf_free(&t);
  tr_buf_free(&root);
}

TR_TEST(emit_convert_every_pair) {
  convert_from(0, TR_NELEMS(core_types) / 2);
  convert_from(TR_NELEMS(core_types) / 2, TR_NELEMS(core_types));
}

/* Data movement, reductions and dots, with the default widths and with
 * odd lane and tile widths so full chunks, tails and partial tiles all
 * occur. */
static const char movement[] =
  "HloModule mv\n"
  "add_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
  "max_s8 {\n a = s8[] parameter(0)\n b = s8[] parameter(1)\n ROOT s = s8[] maximum(b, a)\n}\n"
  "mul_bf16 {\n a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n ROOT s = bf16[] multiply(a, b)\n}\n"
  "ENTRY e {\n"
  "  x = f32[3,7,5] parameter(0)\n"
  "  y = f32[5,9] parameter(1)\n"
  "  i = s8[17,3] parameter(2)\n"
  "  h = bf16[9,4] parameter(3)\n"
  "  k = s32[] parameter(4)\n"
  "  u = u32[3] parameter(5)\n"
  "  z = f32[] constant(0)\n"
  "  m = s8[] constant(-128)\n"
  "  o = bf16[] constant(1)\n"
  "  t0 = f32[5,3,7] transpose(x), dimensions={2,0,1}\n"
  "  b0 = f32[2,3,7,5] broadcast(x), dimensions={1,2,3}\n"
  "  s0 = f32[2,3,3] slice(x), slice={[1:3], [0:7:3], [0:5:2]}\n"
  "  v0 = f32[3,7,5] reverse(x), dimensions={0,2}\n"
  "  p0 = f32[4,14,5] pad(x, z), padding=0_1x2_-1_1x-1_1\n"
  "  c0 = s8[17,9] concatenate(i, i, i), dimensions={1}\n"
  "  r0 = f32[3,5] reduce(x, z), dimensions={1}, to_apply=add_f32\n"
  "  r1 = s8[3] reduce(i, m), dimensions={0}, to_apply=max_s8\n"
  "  r2 = bf16[] reduce(h, o), dimensions={0,1}, to_apply=mul_bf16\n"
  "  d0 = f32[3,7,9] dot(x, y), lhs_contracting_dims={2}, rhs_contracting_dims={0}\n"
  "  d1 = bf16[4,4] dot(h, h), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
  "  d2 = s32[3,3] dot(i, i), lhs_contracting_dims={0}, rhs_contracting_dims={0}\n"
  "  ds = f32[2,3,2] dynamic-slice(x, k, k, k), dynamic_slice_sizes={2,3,2}\n"
  "  du = f32[3,7,5] dynamic-update-slice(x, s0, k, k, k)\n"
  "  rs = f32[7,15] reshape(x)\n"
  "  rp = f32[3,7,5] reduce-precision(x), exponent_bits=5, mantissa_bits=3\n"
  "  bc = s32[3,7,5] bitcast-convert(x)\n"
  "  uc = u32[3] shift-right-logical(u, u)\n"
  "  ROOT t = (f32[5,3,7], f32[2,3,7,5], f32[2,3,3], f32[3,7,5], f32[4,14,5], s8[17,9], f32[3,5],"
  " s8[3], bf16[], f32[3,7,9], bf16[4,4], s32[3,3], f32[2,3,2], f32[3,7,5], f32[7,15], f32[3,7,5],"
  " s32[3,7,5], u32[3]) tuple(t0, b0, s0, v0, p0, c0, r0, r1, r2, d0, d1, d2, ds, du, rs, rp, bc, uc)\n"
  "}\n";

TR_TEST(emit_movement_reduce_dot_odd_widths) {
  static const int widths[][2] = {{8, 16}, {3, 2}, {1, 1}, {16, 5}};
  for (int w = 0; w < TR_NELEMS(widths); w++) {
    tr_emit_opts eo;
    tr_emit_opts_init(&eo);
    eo.lanes = widths[w][0];
    eo.tile = widths[w][1];
    char what[64];
    snprintf(what, sizeof what, "movement lanes=%d tile=%d", eo.lanes, eo.tile);
    agree_text(movement, &eo, false, what);
  }
}

static const char control[] =
  "HloModule cf\n"
  "cond {\n s = (s32[], f32[5]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
  " n = s32[] constant(6)\n ROOT lt = pred[] compare(i, n), direction=LT\n}\n"
  "body {\n s = (s32[], f32[5]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
  " x = f32[5] get-tuple-element(s), index=1\n one = s32[] constant(1)\n"
  " j = s32[] add(i, one)\n y = f32[5] multiply(x, x)\n ROOT t = (s32[], f32[5]) tuple(j, y)\n}\n"
  "br0 {\n p = f32[5] parameter(0)\n ROOT n = f32[5] negate(p)\n}\n"
  "br1 {\n p = f32[5] parameter(0)\n ROOT n = f32[5] abs(p)\n}\n"
  "br2 {\n p = f32[5] parameter(0)\n ROOT n = f32[5] sqrt(p)\n}\n"
  "fused {\n p0 = f32[5] parameter(0)\n p1 = f32[] parameter(1)\n b = f32[5] broadcast(p1), dimensions={}\n"
  " m = f32[5] multiply(p0, b)\n c = f32[] constant(0.5)\n cb = f32[5] broadcast(c), dimensions={}\n"
  " ROOT a = f32[5] add(m, cb)\n}\n"
  "fused2 {\n p0 = f32[3,5] parameter(0)\n p1 = f32[5] parameter(1)\n"
  " b = f32[3,5] broadcast(p1), dimensions={1}\n c = f32[3] constant({1, 2, 3})\n"
  " cb = f32[3,5] broadcast(c), dimensions={0}\n a = f32[3,5] add(p0, b)\n"
  " ROOT m = f32[3,5] maximum(a, cb)\n}\n"
  "ENTRY e {\n"
  "  x = f32[5] parameter(0)\n"
  "  k = s32[] parameter(1)\n"
  "  q = pred[] parameter(2)\n"
  "  s = f32[] parameter(3)\n"
  "  y = f32[3,5] parameter(4)\n"
  "  zero = s32[] constant(0)\n"
  "  init = (s32[], f32[5]) tuple(zero, x)\n"
  "  w = (s32[], f32[5]) while(init), condition=cond, body=body\n"
  "  wx = f32[5] get-tuple-element(w), index=1\n"
  "  c3 = f32[5] conditional(k, x, x, x), branch_computations={br0, br1, br2}\n"
  "  c2 = f32[5] conditional(q, x, x), true_computation=br0, false_computation=br2\n"
  "  f = f32[5] fusion(x, s), kind=kLoop, calls=fused\n"
  "  f2 = f32[3,5] fusion(y, x), kind=kLoop, calls=fused2\n"
  "  ROOT t = (f32[5], f32[5], f32[5], f32[5], f32[3,5]) tuple(wx, c3, c2, f, f2)\n"
  "}\n";

TR_TEST(emit_control_flow_and_loop_fusion) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(control, &eo, false, "control flow");
  eo.fuse_loops = false;
  agree_text(control, &eo, false, "control flow, fusion called");
  /* The loop fusion really is one kernel (no function for its computation). */
  tr_module *m = tb_parse(control, "control");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts_init(&eo);
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK(strstr(tr_buf_str(&src), "computation fused") == NULL);
  CHECK(strstr(tr_buf_str(&src), "computation fused2") == NULL);
  CHECK_CONTAINS(tr_buf_str(&src), "masked tail");
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}

TR_TEST(emit_unsupported_is_a_clean_diagnostic) {
  static const struct { const char *text, *want; } cases[] = {
    {"HloModule u\nENTRY e {\n x = f32[4] parameter(0)\n"
     " ROOT c = f32[4] custom-call(x), custom_call_target=\"foo\"\n}\n", "unsupported: custom-call in builtin"},
    {"HloModule u\nENTRY e {\n x = f8e4m3fnuz[4] parameter(0)\n ROOT c = f8e4m3fnuz[4] negate(x)\n}\n",
     "unsupported: parameter in builtin (element type"},
  };
  for (int i = 0; i < TR_NELEMS(cases); i++) {
    tr_module *m = tb_parse(cases[i].text, "unsupported");
    if (!m) continue;
    tr_buf src = {0};
    tr_diag d = {0};
    CHECK(tr_emit_c(m, NULL, &src, &d) == TR_ERR_UNSUPPORTED);
    CHECK_CONTAINS(tr_diag_first(&d), cases[i].want);
    CHECK_CONTAINS(tr_diag_first(&d), "%");
    tr_buf_free(&src);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
}

/* ---- the JIT ---- */

static const char tiny_c[] =
  "int trench_entry(unsigned char **in, unsigned char **out) {\n"
  "  out[0][0] = (unsigned char)(in[0][0] + 1);\n  return 0;\n}\n";

TR_TEST(jit_caches_by_text) {
  tr_jit_code *a = NULL, *b = NULL;
  tr_jit_stats sa, sb;
  tr_diag d = {0};
  CHECK(tr_jit_compile(NULL, tiny_c, &a, &sa, &d) == TR_OK);
  CHECK(tr_jit_compile(NULL, tiny_c, &b, &sb, &d) == TR_OK);
  CHECK(a == b);
  CHECK(sb.memory_hit);
  char h1[33], h2[33];
  tr_jit_hash_text(NULL, tiny_c, h1);
  tr_jit_hash_text(NULL, "int x;", h2);
  CHECK(strcmp(h1, h2) != 0);
  unsigned char x = 41, y = 0, *in[1] = {&x}, *out[1] = {&y};
  size_t ob = 1;
  tr_jit_run r;
  CHECK(tr_jit_run_forked(tr_jit_symbol(a, "trench_entry"), in, out, &ob, 1, 10, &r, &d) == TR_OK);
  CHECK(r.outcome == TR_JIT_RUN_OK);
  CHECK_EQ_INT(y, 42);
  tr_jit_release(a);
  tr_jit_release(b);
  /* Without caches it compiles again. */
  tr_jit_opts o;
  tr_jit_opts_init(&o);
  o.no_cache = true;
  tr_jit_code *c = NULL;
  tr_jit_stats sc;
  CHECK(tr_jit_compile(&o, tiny_c, &c, &sc, &d) == TR_OK);
  CHECK(!sc.memory_hit && !sc.disk_hit);
  tr_jit_release(c);
  /* A compile error is TR_ERR_INVALID with the compiler's words. */
  CHECK(tr_jit_compile(&o, "int f( {", &c, &sc, &d) == TR_ERR_INVALID);
  CHECK_CONTAINS(tr_diag_first(&d), "C compiler failed");
  tr_diag_clear(&d);
}

static const char bad_c[] =
  "int trench_entry(unsigned char **in, unsigned char **out) {\n"
  "  if (in[0][0] == 1) { volatile int *volatile p = 0; *p = 1; }\n"
  "  if (in[0][0] == 2) for (;;) {}\n"
  "  if (in[0][0] == 3) return 7;\n"
  "  out[0][0] = 9;\n  return 0;\n}\n";

TR_TEST(jit_worker_crash_hang_error_then_ok) {
  tr_jit_code *c = NULL;
  tr_diag d = {0};
  CHECK(tr_jit_compile(NULL, bad_c, &c, NULL, &d) == TR_OK);
  tr_jit_entry fn = tr_jit_symbol(c, "trench_entry");
  CHECK(fn != NULL);
  if (!fn) return;
  unsigned char x, y = 0, *in[1] = {&x}, *out[1] = {&y};
  size_t ob = 1;
  tr_jit_run r;
  x = 1;
  CHECK(tr_jit_run_forked(fn, in, out, &ob, 1, 10, &r, &d) == TR_OK);
  CHECK(r.outcome == TR_JIT_RUN_CRASH);
  CHECK_EQ_INT(r.signal, 11);
  x = 2;
  CHECK(tr_jit_run_forked(fn, in, out, &ob, 1, 0.2, &r, &d) == TR_OK);
  CHECK(r.outcome == TR_JIT_RUN_HANG);
  x = 3;
  CHECK(tr_jit_run_forked(fn, in, out, &ob, 1, 10, &r, &d) == TR_OK);
  CHECK(r.outcome == TR_JIT_RUN_ERROR);
  CHECK_EQ_INT(r.code, 7);
  CHECK_EQ_INT(y, 0); /* nothing copied out of a failed run */
  x = 0;
  CHECK(tr_jit_run_forked(fn, in, out, &ob, 1, 10, &r, &d) == TR_OK);
  CHECK(r.outcome == TR_JIT_RUN_OK);
  CHECK_EQ_INT(y, 9);
  tr_jit_release(c);
  tr_diag_clear(&d);
}

/* Ops that call a computation per element, windows, gathers and
 * scatters (indices from the edge-value fill: negative, huge, in range),
 * convolutions with padding, dilation and groups, collectives, tuple
 * constants and width-changing bitcast-converts. */
static const char more_ops[] =
  "HloModule more\n"
  "add_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
  "max_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n"
  "argmax {\n a = f32[] parameter(0)\n ai = s32[] parameter(1)\n b = f32[] parameter(2)\n bi = s32[] parameter(3)\n"
  " gt = pred[] compare(a, b), direction=GT\n v = f32[] select(gt, a, b)\n i = s32[] select(gt, ai, bi)\n"
  " ROOT t = (f32[], s32[]) tuple(v, i)\n}\n"
  "ge_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=GE\n}\n"
  "sq {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n m = f32[] multiply(a, a)\n ROOT s = f32[] subtract(m, b)\n}\n"
  "ENTRY e {\n"
  "  x = f32[5,6] parameter(0)\n"
  "  ix = s32[4,1] parameter(1)\n"
  "  u = f32[4,6] parameter(2)\n"
  "  img = f32[2,7,7,4] parameter(3)\n"
  "  ker = f32[3,3,2,6] parameter(4)\n"
  "  hx = bf16[6,5] parameter(5)\n"
  "  sr = f32[3,3] parameter(6)\n"
  "  z = f32[] constant(0)\n"
  "  mi = f32[] constant(-inf)\n"
  "  zi = s32[] constant(0)\n"
  "  io = s32[5,6] iota(), iota_dimension=0\n"
  "  am = (f32[6], s32[6]) reduce(x, io, mi, zi), dimensions={0}, to_apply=argmax\n"
  "  am0 = f32[6] get-tuple-element(am), index=0\n"
  "  am1 = s32[6] get-tuple-element(am), index=1\n"
  "  mp = f32[5,6] map(x, x), dimensions={0,1}, to_apply=sq\n"
  "  rg = f32[6] reduce(x, z), dimensions={0}, to_apply=sq\n"
  "  rw = f32[3,3] reduce-window(x, mi), window={size=3x2 stride=2x2 pad=1_1x0_0}, to_apply=max_f32\n"
  "  rwv = (f32[3,3], s32[3,3]) reduce-window(x, io, mi, zi), window={size=3x2 stride=2x2 pad=1_1x0_0},"
  " to_apply=argmax\n"
  "  rwv0 = f32[3,3] get-tuple-element(rwv), index=0\n"
  "  rwv1 = s32[3,3] get-tuple-element(rwv), index=1\n"
  "  sas = f32[5,6] select-and-scatter(x, sr, z), window={size=3x2 stride=2x2 pad=1_1x0_0},"
  " select=ge_f32, scatter=add_f32\n"
  "  rw2 = f32[5,6] reduce-window(x, z), window={size=2x3 pad=0_1x1_1 lhs_dilate=1x1 rhs_dilate=1x1}, to_apply=add_f32\n"
  "  g = f32[4,1,6] gather(x, ix), offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0},"
  " index_vector_dim=1, slice_sizes={1,6}\n"
  "  sc = f32[5,6] scatter(x, ix, u), update_window_dims={1}, inserted_window_dims={0},"
  " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_f32\n"
  "  cv = f32[2,4,4,6] convolution(img, ker), window={size=3x3 stride=2x2 pad=1_1x1_1 rhs_dilate=1x1},"
  " dim_labels=b01f_01io->b01f, feature_group_count=2\n"
  "  ar = f32[5,6] all-reduce(x), to_apply=add_f32, replica_groups={}\n"
  "  tc = (s32[2], f32[]) constant(({1, -2}, 0.5))\n"
  "  tc0 = s32[2] get-tuple-element(tc), index=0\n"
  "  bw = u8[5,6,4] bitcast-convert(x)\n"
  "  bn = u16[6,5] bitcast-convert(hx)\n"
  "  ROOT t = (f32[6], s32[6], f32[5,6], f32[6], f32[3,3], f32[5,6], f32[4,1,6], f32[5,6], f32[2,4,4,6],"
  " f32[5,6], s32[2], u8[5,6,4], u16[6,5], f32[3,3], s32[3,3], f32[5,6])"
  " tuple(am0, am1, mp, rg, rw, rw2, g, sc, cv, ar, tc0, bw, bn, rwv0, rwv1, sas)\n"
  "}\n";

TR_TEST(emit_calls_windows_gather_scatter_conv) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(more_ops, &eo, false, "more ops");
  eo.tile = 3;
  agree_text(more_ops, &eo, false, "more ops tile=3");
}

/* Sorts with NaN keys under a partial-order comparator (the merge order
 * decides: the emitted sort must be the reference's algorithm), key/value
 * sorts by total order, and topk of floats and ints. */
static const char sorts[] =
  "HloModule sorts\n"
  "lt {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT\n}\n"
  "gt.kv {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n c = s8[] parameter(2)\n d = s8[] parameter(3)\n"
  " ROOT g = pred[] compare(a, b), direction=GT, type=TOTALORDER\n}\n"
  "ENTRY e {\n"
  "  x = f32[17] parameter(0)\n"
  "  m = f32[3,7] parameter(1)\n"
  "  v = s8[3,7] parameter(2)\n"
  "  one = f32[1] parameter(3)\n"
  "  so0 = f32[17] sort(x), dimensions={0}, to_apply=lt\n"
  "  so1 = f32[1] sort(one), dimensions={0}, to_apply=lt\n"
  "  kv = (f32[3,7], s8[3,7]) sort(m, v), dimensions={1}, is_stable=true, to_apply=gt.kv\n"
  "  kv0 = f32[3,7] get-tuple-element(kv), index=0\n"
  "  kv1 = s8[3,7] get-tuple-element(kv), index=1\n"
  "  t0 = (f32[3,4], s32[3,4]) topk(m), k=4, largest=true\n"
  "  t1 = (s8[3,2], s32[3,2]) topk(v), k=2, largest=false\n"
  "  t00 = f32[3,4] get-tuple-element(t0), index=0\n"
  "  t01 = s32[3,4] get-tuple-element(t0), index=1\n"
  "  t10 = s8[3,2] get-tuple-element(t1), index=0\n"
  "  t11 = s32[3,2] get-tuple-element(t1), index=1\n"
  "  ROOT t = (f32[17], f32[1], f32[3,7], s8[3,7], f32[3,4], s32[3,4], s8[3,2], s32[3,2])"
  " tuple(so0, so1, kv0, kv1, t00, t01, t10, t11)\n"
  "}\n";

TR_TEST(emit_sort_and_topk) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(sorts, &eo, false, "sorts");
}

/* ---- random modules ----
 * A small builder (until the project's generator exists): a pool of
 * values of random core types and shapes around the lane width; each
 * step adds an elementwise op, a convert, a compare and select, a
 * reduce, a slice, reverse, transpose, broadcast or dot on pool values.
 * Every value goes into the root tuple, so one compile checks dozens of
 * instructions; the emitter's output must equal the reference's. */

typedef struct {
  uint64_t s;
} xrng;

static uint64_t xr_next(xrng *r) {
  r->s ^= r->s << 13;
  r->s ^= r->s >> 7;
  r->s ^= r->s << 17;
  return r->s;
}

static int xr_below(xrng *r, int n) { return (int)(xr_next(r) % (uint64_t)n); }

typedef struct {
  char name[16];
  tr_dtype dt;
  int rank;
  int64_t dims[2];
} rval;

static void shape_str(const rval *v, char *out, size_t n) {
  if (v->rank == 0) snprintf(out, n, "%s[]", tr_dtype_name(v->dt));
  else if (v->rank == 1) snprintf(out, n, "%s[%lld]", tr_dtype_name(v->dt), (long long)v->dims[0]);
  else snprintf(out, n, "%s[%lld,%lld]", tr_dtype_name(v->dt), (long long)v->dims[0], (long long)v->dims[1]);
}

static const char *const rand_binary[] = {"add", "subtract", "multiply", "divide", "remainder", "maximum",
                                          "minimum", "and", "or", "xor", "shift-left",
                                          "shift-right-arithmetic", "shift-right-logical"};
static const char *const rand_unary[] = {"abs", "negate", "sign", "floor", "ceil", "round-nearest-even",
                                         "sqrt", "not", "popcnt", "count-leading-zeros", "is-finite"};

/* A value of the same type and dims as pool[a], or -1. */
static int find_like(const rval *pool, int n, int a, xrng *r) {
  int start = xr_below(r, n);
  for (int k = 0; k < n; k++) {
    int j = (start + k) % n;
    if (j != a && pool[j].dt == pool[a].dt && pool[j].rank == pool[a].rank &&
        pool[j].dims[0] == pool[a].dims[0] && pool[j].dims[1] == pool[a].dims[1])
      return j;
  }
  return -1;
}

void te_random_module(uint64_t seed, tr_buf *t);
void te_random_module(uint64_t seed, tr_buf *t) {
  xrng r = {seed * 0x9e3779b97f4a7c15ull + 1};
  static const int64_t sz[] = {1, 7, 8, 9, 17, 3};
  rval pool[128];
  int n = 0;
  tr_buf_puts(t, "HloModule rnd\n"
                 "add_s32 {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] add(a, b)\n}\n"
                 "max_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] maximum(a, b)\n}\n"
                 "add_bf16 {\n a = bf16[] parameter(0)\n b = bf16[] parameter(1)\n ROOT s = bf16[] add(a, b)\n}\n"
                 "ENTRY e {\n");
  for (int p = 0; p < 4; p++) {
    rval *v = &pool[n];
    snprintf(v->name, sizeof v->name, "p%d", p);
    v->dt = core_types[xr_below(&r, TR_NELEMS(core_types))];
    v->rank = 1 + xr_below(&r, 2);
    v->dims[0] = sz[xr_below(&r, TR_NELEMS(sz))];
    v->dims[1] = v->rank == 2 ? sz[xr_below(&r, TR_NELEMS(sz))] : 0;
    char sh[48];
    shape_str(v, sh, sizeof sh);
    tr_buf_printf(t, "  %s = %s parameter(%d)\n", v->name, sh, p);
    n++;
  }
  for (int step = 0; step < 40 && n < 120; step++) {
    int a = xr_below(&r, n);
    rval nv = pool[a];
    snprintf(nv.name, sizeof nv.name, "v%d", step);
    char sh[48], line[256];
    line[0] = 0;
    int kind = xr_below(&r, 14);
    if (kind <= 2) { /* binary on two like values (or a value with itself converted) */
      const char *op = rand_binary[xr_below(&r, TR_NELEMS(rand_binary))];
      int b = find_like(pool, n, a, &r);
      if (!takes(op, nv.dt)) op = "maximum";
      if (b < 0) b = a;
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s %s(%s, %s)", sh, op, pool[a].name, pool[b].name);
    } else if (kind == 3) {
      const char *op = rand_unary[xr_below(&r, TR_NELEMS(rand_unary))];
      if (!takes(op, nv.dt) || ((!strcmp(op, "abs") || !strcmp(op, "sign")) && tr_dtypes[nv.dt].kind == TR_DK_UINT))
        op = "negate";
      if (!takes(op, nv.dt)) op = "not";
      if (!strcmp(op, "is-finite")) nv.dt = TR_DT_PRED;
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s %s(%s)", sh, op, pool[a].name);
    } else if (kind == 4) {
      nv.dt = core_types[xr_below(&r, TR_NELEMS(core_types))];
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s convert(%s)", sh, pool[a].name);
    } else if (kind == 5) { /* compare then select */
      int b = find_like(pool, n, a, &r);
      if (b < 0) b = a;
      rval pv = nv;
      pv.dt = TR_DT_PRED;
      shape_str(&pv, sh, sizeof sh);
      tr_buf_printf(t, "  c%d = %s compare(%s, %s), direction=%s\n", step, sh, pool[a].name, pool[b].name,
                    dirs[xr_below(&r, 6)]);
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s select(c%d, %s, %s)", sh, step, pool[b].name, pool[a].name);
    } else if (kind == 6 && (nv.dt == TR_DT_S32 || nv.dt == TR_DT_F32 || nv.dt == TR_DT_BF16) && nv.rank == 2) {
      const char *fn = nv.dt == TR_DT_S32 ? "add_s32" : nv.dt == TR_DT_F32 ? "max_f32" : "add_bf16";
      int d = xr_below(&r, 2);
      tr_buf_printf(t, "  z%d = %s[] constant(%s)\n", step, tr_dtype_name(nv.dt), nv.dt == TR_DT_F32 ? "-inf" : "0");
      nv.rank = 1;
      nv.dims[0] = pool[a].dims[1 - d];
      nv.dims[1] = 0;
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s reduce(%s, z%d), dimensions={%d}, to_apply=%s", sh, pool[a].name, step, d, fn);
    } else if (kind == 7 && nv.rank == 2) {
      nv.dims[0] = pool[a].dims[1];
      nv.dims[1] = pool[a].dims[0];
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s transpose(%s), dimensions={1,0}", sh, pool[a].name);
    } else if (kind == 8 && nv.rank == 1) {
      nv.rank = 2;
      nv.dims[1] = nv.dims[0];
      nv.dims[0] = sz[xr_below(&r, TR_NELEMS(sz))];
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s broadcast(%s), dimensions={1}", sh, pool[a].name);
    } else if (kind == 9 && nv.rank == 1 && nv.dims[0] >= 3) {
      nv.dims[0] = (nv.dims[0] - 1 + 1) / 2;
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s slice(%s), slice={[1:%lld:2]}", sh, pool[a].name, (long long)pool[a].dims[0]);
    } else if (kind == 10 && nv.rank == 2 && nv.dt != TR_DT_PRED) {
      /* x . x^T: contracting the minor dims of both */
      nv.dims[1] = nv.dims[0];
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s dot(%s, %s), lhs_contracting_dims={1}, rhs_contracting_dims={1}", sh,
               pool[a].name, pool[a].name);
    } else if (kind == 11) {
      nv.dims[0] = 2 * pool[a].dims[0];
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s concatenate(%s, %s), dimensions={0}", sh, pool[a].name, pool[a].name);
    } else if (kind == 12) {
      /* low -1, high 2, interior 1 on dim 0 */
      tr_buf_printf(t, "  pv%d = %s[] constant(%s)\n", step, tr_dtype_name(nv.dt), nv.dt == TR_DT_PRED ? "true" : "1");
      nv.dims[0] = pool[a].dims[0] - 1 + 2 + (pool[a].dims[0] - 1);
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s pad(%s, pv%d), padding=-1_2_1%s", sh, pool[a].name, step,
               nv.rank == 2 ? "x0_0" : "");
    } else if (kind == 13 && nv.rank == 2) {
      /* an input-fusion shape: reduce of an elementwise producer */
      rval pr = nv;
      shape_str(&pr, sh, sizeof sh);
      const char *fn = NULL;
      if (nv.dt == TR_DT_S32) fn = "add_s32";
      else if (nv.dt == TR_DT_F32) fn = "max_f32";
      else if (nv.dt == TR_DT_BF16) fn = "add_bf16";
      if (!fn) {
        snprintf(line, sizeof line, "%s copy(%s)", sh, pool[a].name);
      } else {
        tr_buf_printf(t, "  m%d = %s multiply(%s, %s)\n", step, sh, pool[a].name, pool[a].name);
        tr_buf_printf(t, "  zz%d = %s[] constant(%s)\n", step, tr_dtype_name(nv.dt), nv.dt == TR_DT_F32 ? "-inf" : "0");
        nv.rank = 1;
        nv.dims[1] = 0;
        shape_str(&nv, sh, sizeof sh);
        snprintf(line, sizeof line, "%s reduce(m%d, zz%d), dimensions={1}, to_apply=%s", sh, step, step, fn);
      }
    } else {
      shape_str(&nv, sh, sizeof sh);
      snprintf(line, sizeof line, "%s reverse(%s), dimensions={0}", sh, pool[a].name);
    }
    tr_buf_printf(t, "  %s = %s\n", nv.name, line);
    pool[n++] = nv;
  }
  tr_buf_puts(t, "  ROOT t = tuple(");
  for (int i = 4; i < n; i++) tr_buf_printf(t, "%s%s", i > 4 ? ", " : "", pool[i].name);
  tr_buf_puts(t, ")\n}\n");
}

TR_TEST(emit_random_modules_match_reference) {
  /* TRENCH_TEST_RANDOM=N runs N modules (a longer hunt); 12 by default. */
  const char *env = getenv("TRENCH_TEST_RANDOM");
  int nmod = env && atoi(env) > 0 ? atoi(env) : 12, nok = 0;
  for (uint64_t seed = 1; seed <= (uint64_t)nmod; seed++) {
    tr_buf t = {0};
    te_random_module(seed, &t);
    tr_emit_opts eo;
    tr_emit_opts_init(&eo);
    eo.lanes = 1 + (int)(seed % 9);
    eo.tile = 1 + (int)(seed % 5);
    char what[64];
    snprintf(what, sizeof what, "random module %llu", (unsigned long long)seed);
    if (agree_text(tr_buf_str(&t), &eo, false, what)) nok++;
    else if (getenv("TR_TEST_VERBOSE")) fprintf(stderr, "%s\n", tr_buf_str(&t));
    tr_buf_free(&t);
  }
  CHECK_EQ_INT(nok, nmod);
}

/* An input fusion (reduce of elementwise producers, a broadcast of a
 * per-row parameter among them) becomes one kernel that computes the
 * reduced elements inside the reduce loop; a constant init too. */
static const char input_fusion[] =
  "HloModule inf\n"
  "add_f32 {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
  "max_s16 {\n a = s16[] parameter(0)\n b = s16[] parameter(1)\n ROOT s = s16[] maximum(a, b)\n}\n"
  "fr {\n x = f32[9,17] parameter(0)\n y = f32[9] parameter(1)\n z = f32[] parameter(2)\n"
  " b = f32[9,17] broadcast(y), dimensions={0}\n m = f32[9,17] multiply(x, b)\n e = f32[9,17] exponential(m)\n"
  " ROOT r = f32[9] reduce(e, z), dimensions={1}, to_apply=add_f32\n}\n"
  "fi {\n x = s16[7,3] parameter(0)\n n = s16[7,3] negate(x)\n c = s16[] constant(-32768)\n"
  " ROOT r = s16[3] reduce(n, c), dimensions={0}, to_apply=max_s16\n}\n"
  "ENTRY e {\n"
  "  x = f32[9,17] parameter(0)\n  y = f32[9] parameter(1)\n  w = s16[7,3] parameter(2)\n"
  "  z = f32[] constant(0)\n"
  "  f = f32[9] fusion(x, y, z), kind=kInput, calls=fr\n"
  "  g = s16[3] fusion(w), kind=kInput, calls=fi\n"
  "  ROOT t = (f32[9], s16[3]) tuple(f, g)\n"
  "}\n";

TR_TEST(emit_input_fusion_is_one_kernel) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(input_fusion, &eo, true, "input fusion");
  eo.tile = 4;
  agree_text(input_fusion, &eo, true, "input fusion tile=4");
  eo.fuse_loops = false;
  agree_text(input_fusion, &eo, true, "input fusion, called");
  tr_module *m = tb_parse(input_fusion, "input fusion");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts_init(&eo);
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK(strstr(tr_buf_str(&src), "computation fr") == NULL);
  CHECK(strstr(tr_buf_str(&src), "computation fi") == NULL);
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* s4/u4 packed two per byte inside the unit (docs/EMITTER.md): every kind
 * of kernel on odd and even element counts, constants, control flow, and
 * the kernels that see them unpacked (sort, gather, scatter, map, general
 * reduce, bitcast-convert), bit for bit against the reference. */
static const char packed4[] =
  "HloModule p4\n"
  "add_s4 {\n a = s4[] parameter(0)\n b = s4[] parameter(1)\n ROOT s = s4[] add(a, b)\n}\n"
  "max_u4 {\n a = u4[] parameter(0)\n b = u4[] parameter(1)\n ROOT s = u4[] maximum(a, b)\n}\n"
  "lt_s4 {\n a = s4[] parameter(0)\n b = s4[] parameter(1)\n ROOT c = pred[] compare(a, b), direction=LT\n}\n"
  "sub_s4 {\n a = s4[] parameter(0)\n ROOT n = s4[] negate(a)\n}\n"
  "red2 {\n a = s4[] parameter(0)\n b = u4[] parameter(1)\n c = s4[] parameter(2)\n d = u4[] parameter(3)\n"
  " s = s4[] add(a, c)\n m = u4[] maximum(b, d)\n ROOT t = (s4[], u4[]) tuple(s, m)\n}\n"
  "cond {\n s = (s32[], s4[7]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
  " n = s32[] constant(3)\n ROOT c = pred[] compare(i, n), direction=LT\n}\n"
  "body {\n s = (s32[], s4[7]) parameter(0)\n i = s32[] get-tuple-element(s), index=0\n"
  " v = s4[7] get-tuple-element(s), index=1\n one = s32[] constant(1)\n i1 = s32[] add(i, one)\n"
  " o = s4[] constant(3)\n ob = s4[7] broadcast(o), dimensions={}\n v1 = s4[7] add(v, ob)\n"
  " ROOT t = (s32[], s4[7]) tuple(i1, v1)\n}\n"
  "ENTRY e {\n"
  "  a = s4[5,3] parameter(0)\n  b = s4[5,3] parameter(1)\n  u = u4[7] parameter(2)\n  v = u4[7] parameter(3)\n"
  "  w = s4[7] parameter(4)\n  ix = s32[2] parameter(5)\n"
  "  x0 = s4[5,3] add(a, b)\n  x1 = s32[5,3] convert(a)\n  x2 = u4[5,3] convert(b)\n"
  "  x3 = pred[7] compare(u, v), direction=GT\n  x4 = u4[7] select(x3, u, v)\n  x5 = s4[7] copy(w)\n"
  "  x6 = s4[3] slice(w), slice={[1:7:2]}\n  x7 = s4[13] concatenate(w, x6, x6), dimensions={0}\n"
  "  x8 = s4[2,7] broadcast(w), dimensions={1}\n  x9 = s4[3,5] transpose(a), dimensions={1,0}\n"
  "  z4 = s4[] constant(-2)\n  x10 = s4[5] reduce(a, z4), dimensions={1}, to_apply=add_s4\n"
  "  zu = u4[] constant(0)\n  x11 = u4[] reduce(u, zu), dimensions={0}, to_apply=max_u4\n"
  "  x12 = s4[13,4] pad(a, z4), padding=1_3_1x0_1\n  x13 = s4[7] reverse(w), dimensions={0}\n"
  "  x14 = s4[15] reshape(a)\n  i0 = s32[1] slice(ix), slice={[0:1]}\n  i1 = s32[] reshape(i0)\n"
  "  x15 = s4[3] dynamic-slice(w, i1), dynamic_slice_sizes={3}\n"
  "  x16 = s4[7] dynamic-update-slice(w, x6, i1)\n"
  "  c4 = s4[5] constant({-8, 7, -1, 0, 3})\n  x17 = s4[5] multiply(x10, c4)\n"
  "  x18 = s32[5,5] dot(a, x9), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  x19 = s4[7] sort(w), dimensions={0}, to_apply=lt_s4\n"
  "  x20 = s4[7] map(w), to_apply=sub_s4\n"
  "  zz = u4[] constant(0)\n  x21 = (s4[5], u4[5]) reduce(a, x2, z4, zz), dimensions={1}, to_apply=red2\n"
  "  x22 = u4[5,3] bitcast-convert(a)\n  ci = s32[] constant(0)\n  st = (s32[], s4[7]) tuple(ci, w)\n"
  "  wl = (s32[], s4[7]) while(st), condition=cond, body=body\n  x23 = s4[7] get-tuple-element(wl), index=1\n"
  "  g0 = s32[2,1] reshape(ix)\n"
  "  x24 = s4[2,5] gather(x9, g0), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0},"
  " index_vector_dim=1, slice_sizes={1,5}\n"
  "  up2 = s4[2] slice(x10), slice={[0:2]}\n"
  "  x25 = s4[5,3] scatter(a, g0, up2), update_window_dims={}, inserted_window_dims={0,1},"
  " scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add_s4\n"
  "  x26 = s4[5,3] iota(), iota_dimension=0\n"
  "  ROOT t = tuple(x0, x1, x2, x3, x4, x5, x6, x7, x8, x9, x10, x11, x12, x13, x14, x15, x16, x17,"
  " x18, x19, x20, x21, x22, x23, x24, x25, x26)\n"
  "}\n";

TR_TEST(emit_s4_u4_packed_two_per_byte) {
  static const int widths[][2] = {{8, 16}, {3, 2}, {1, 1}};
  for (int w = 0; w < TR_NELEMS(widths); w++) {
    tr_emit_opts eo;
    tr_emit_opts_init(&eo);
    eo.lanes = widths[w][0];
    eo.tile = widths[w][1];
    char what[64];
    snprintf(what, sizeof what, "packed s4/u4 lanes=%d tile=%d", eo.lanes, eo.tile);
    agree_text(packed4, &eo, false, what);
    eo.fuse_loops = false;
    agree_text(packed4, &eo, false, "packed s4/u4, fusions called");
  }
  /* The buffers really are packed: a 15-element s4 add allocates 8 bytes,
   * parameters are packed on the way in and results unpacked on the way
   * out; an s8 module keeps the plain entry. */
  tr_module *m = tb_parse("HloModule q\nENTRY e {\n  a = s4[15] parameter(0)\n  b = s4[15] parameter(1)\n"
                          "  c = s4[15] add(a, b)\n  ROOT d = s4[15] multiply(c, b)\n}\n", "packed text");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  eo.fuse_loops = false;
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK_CONTAINS(tr_buf_str(&src), "tr_alloc(8)");
  CHECK_CONTAINS(tr_buf_str(&src), "tr_pack4(pin[0], in[0], 15LL, 0);");
  CHECK_CONTAINS(tr_buf_str(&src), "tr_unpack4(out[0], pout[0], 15LL, 1);");
  tr_buf_free(&src);
  tr_module_free(m);
  m = tb_parse("HloModule q\nENTRY e {\n  a = s8[15] parameter(0)\n  ROOT b = s8[15] negate(a)\n}\n", "s8 text");
  if (!m) return;
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK(strstr(tr_buf_str(&src), "tr_pack4(pin") == NULL);
  CHECK_CONTAINS(tr_buf_str(&src), "return comp");
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* Big float dots and convolutions take the packed matrix-product path
 * (emit_mm: im2col for convolutions); the result must still be the
 * reference's bit for bit. Odd sizes leave partial row groups and column
 * strips; batch dims, transposed operands, f64 and bf16, a product of
 * more than 2^20 multiply-adds, and convolution padding, strides,
 * window and base dilation, reversal and other dim orders; a kernel with
 * an inf takes the exact per-output loop instead. */
static const char bigmm[] =
  "HloModule mm\n"
  "ENTRY e {\n"
  "  a = f32[3,37,41] parameter(0)\n  b = f32[3,41,35] parameter(1)\n"
  "  d0 = f32[3,37,35] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, lhs_contracting_dims={2},"
  " rhs_contracting_dims={1}\n"
  "  at = f32[41,37] parameter(2)\n  bt = f32[35,41] parameter(3)\n"
  "  d1 = f32[37,35] dot(at, bt), lhs_contracting_dims={0}, rhs_contracting_dims={1}\n"
  "  c = f64[29,70] parameter(4)\n  g = f64[70,33] parameter(5)\n"
  "  d2 = f64[29,33] dot(c, g), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  h = bf16[40,64] parameter(6)\n  k = bf16[64,17] parameter(7)\n"
  "  d3 = bf16[40,17] dot(h, k), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  x = f32[2,9,10,6] parameter(8)\n  w = f32[3,3,6,5] parameter(9)\n"
  "  c0 = f32[2,9,10,5] convolution(x, w), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
  "  c1 = f32[2,4,4,5] convolution(x, w), window={size=3x3 stride=2x2 pad=0_1x2_0 rhs_dilate=1x2},"
  " dim_labels=b01f_01io->b01f\n"
  "  y = f32[6,2,11,8] parameter(10)\n  v = f32[6,5,3,2] parameter(11)\n"
  "  c2 = f32[5,2,9,7] convolution(y, v), window={size=3x2 rhs_reversal=1x0}, dim_labels=fb01_io01->fb01\n"
  "  z = f64[4,40,7] parameter(12)\n  u = f64[4,7,9] parameter(13)\n"
  "  c3 = f64[4,41,9] convolution(z, u), window={size=4 pad=2_2}, dim_labels=b0f_0io->b0f\n"
  "  pp = f32[130,96] parameter(14)\n  pq = f32[96,100] parameter(15)\n"
  "  d4 = f32[130,100] dot(pp, pq), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  c4 = f32[2,17,19,5] convolution(x, w), window={size=3x3 pad=1_1x1_1 lhs_dilate=2x2},"
  " dim_labels=b01f_01io->b01f\n"
  "  ROOT t = tuple(d0, d1, d2, d3, c0, c1, c2, c3, d4, c4)\n"
  "}\n";

TR_TEST(emit_big_dot_conv_packed_path_exact) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(bigmm, &eo, false, "packed dot/conv");
  tr_module *m = tb_parse(bigmm, "packed dot/conv");
  if (m) {
    /* the portable loops too (what a machine without AVX-512 runs) */
    agree_pre(m, &eo, 3, false, "packed dot/conv, portable", "#define TR_MM_PORTABLE 1\n");
    tr_buf src = {0};
    tr_diag d = {0};
    CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
    CHECK_CONTAINS(tr_buf_str(&src), "tr_mm_f(pa, pb, pc, M, N, nk);");
    CHECK_CONTAINS(tr_buf_str(&src), "tr_mm_d(pa, pb, pc, rows, O, K);");
    tr_buf_free(&src);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
  /* an inf in the kernel: the exact loop, still bit for bit */
  m = tb_parse("HloModule ci\nENTRY e {\n  x = f32[2,9,10,6] parameter(0)\n"
                          "  w0 = f32[3,3,6,5] parameter(1)\n  i = f32[] constant(inf)\n"
                          "  ib = f32[3,3,6,5] broadcast(i), dimensions={}\n"
                          "  w = f32[3,3,6,5] multiply(w0, ib)\n"
                          "  ROOT c = f32[2,9,10,5] convolution(x, w), window={size=3x3 pad=1_1x1_1},"
                          " dim_labels=b01f_01io->b01f\n}\n", "conv inf");
  if (m) {
    agree(m, &eo, 2, false, "conv with inf kernel");
    tr_module_free(m);
  }
}

/* f32 elementwise code holds values in float and min/max/clamp are
 * selects (tr_maxf...), so the lane loop vectorizes (docs/EMITTER.md);
 * the results must stay the reference's bit for bit on the edge cases:
 * NaN on either side, -0 against +0, infinities, subnormal and
 * overflowing results, ties, division by zero; fused and not, with and
 * without a masked tail. */
static const char minmax_fmt[] =
  "HloModule mm\n"
  "fmax {\n  a = T[13] parameter(0)\n  b = T[13] parameter(1)\n  ROOT r = T[13] maximum(a, b)\n}\n"
  "fmin {\n  a = T[13] parameter(0)\n  b = T[13] parameter(1)\n  ROOT r = T[13] minimum(a, b)\n}\n"
  "fcl {\n  a = T[13] parameter(0)\n  b = T[13] parameter(1)\n  c = T[13] parameter(2)\n"
  "  ROOT r = T[13] clamp(b, a, c)\n}\n"
  "fz {\n  a = T[13] parameter(0)\n  b = T[13] parameter(1)\n  c = T[13] parameter(2)\n"
  "  mx = T[13] maximum(a, b)\n  mn = T[13] minimum(mx, c)\n  m2 = T[13] minimum(a, b)\n"
  "  cl = T[13] clamp(b, mn, c)\n  c2 = T[13] clamp(c, a, b)\n  d = T[13] divide(cl, a)\n"
  "  p = T[13] multiply(d, b)\n  q = T[13] add(p, c2)\n  s = T[13] sqrt(q)\n"
  "  ROOT r = T[13] subtract(s, m2)\n}\n"
  "ENTRY e {\n"
  "  a = T[13] constant({nan, 1, -0, 0, inf, -inf, 3, 1e-45, 3.4e38, -2, nan, 5, 7})\n"
  "  b = T[13] constant({2, nan, 0, -0, -inf, 1, 3, -1e-45, 3.4e38, nan, -nan, 5, -0})\n"
  "  c = T[13] constant({1, 1, 0, -0, nan, 2, -3, 1e-40, 1, -1, 0, nan, 0})\n"
  "  f1 = T[13] fusion(a, b), kind=kLoop, calls=fmax\n  f2 = T[13] fusion(a, b), kind=kLoop, calls=fmin\n"
  "  f3 = T[13] fusion(a, b, c), kind=kLoop, calls=fcl\n"
  "  f4 = T[13] fusion(a, b, c), kind=kLoop, calls=fz\n"
  "  ROOT t = (T[13], T[13], T[13], T[13]) tuple(f1, f2, f3, f4)\n}\n";

/* minmax_fmt with T replaced by ty. */
static void minmax_text(char *out, size_t n, const char *ty) {
  size_t k = 0;
  for (const char *p = minmax_fmt; *p && k + 4 < n; p++)
    if (*p == 'T' && p[1] == '[') {
      memcpy(out + k, ty, strlen(ty));
      k += strlen(ty);
    } else {
      out[k++] = *p;
    }
  out[k] = 0;
}

TR_TEST(emit_f32_float_values_and_selects_exact) {
  const char *types[] = {"f32", "f64"};
  for (int t = 0; t < 2; t++) {
    char text[4096];
    const char *ty = types[t];
    minmax_text(text, sizeof text, ty);
    tr_emit_opts eo;
    tr_emit_opts_init(&eo);
    for (int v = 0; v < 4; v++) {
      eo.lanes = v & 1 ? 4 : 8; /* 13 = 8 + 5 or 3 * 4 + 1: both reach the masked tail */
      eo.fuse_loops = v < 2;
      char what[64];
      snprintf(what, sizeof what, "%s min/max/clamp lanes=%d%s", ty, eo.lanes, eo.fuse_loops ? "" : " unfused");
      agree_text(text, &eo, false, what);
    }
    if (t != 0) continue;
    tr_module *m = tb_parse(text, "f32 min/max");
    if (!m) continue;
    tr_buf src = {0};
    tr_diag d = {0};
    tr_emit_opts_init(&eo);
    CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
    CHECK_CONTAINS(tr_buf_str(&src), "const f32v v");
    CHECK_CONTAINS(tr_buf_str(&src), "tr_maxf(");
    CHECK_CONTAINS(tr_buf_str(&src), "tr_clampf(");
    CHECK_CONTAINS(tr_buf_str(&src), "TR_IVDEP for (l = 0; l < 8; l++)");
    tr_buf_free(&src);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
  /* packed s4 results: two lanes write one byte, so no TR_IVDEP */
  tr_module *m = tb_parse("HloModule p4\nENTRY e {\n  x = s4[9] parameter(0)\n"
                          "  ROOT n = s4[9] negate(x)\n}\n", "s4 negate");
  if (m) {
    tr_emit_opts eo;
    tr_emit_opts_init(&eo);
    tr_buf src = {0};
    tr_diag d = {0};
    CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
    CHECK(strstr(tr_buf_str(&src), "TR_IVDEP for") == NULL);
    agree(m, &eo, 2, false, "s4 negate");
    tr_buf_free(&src);
    tr_diag_clear(&d);
    tr_module_free(m);
  }
}

/* The tiled reduce's four-step path (full tiles, four more steps inside
 * the innermost reduced dim) against the one-step loops: innermost
 * reduced dims of 6 (4 + 2), 37 (9 * 4 + 1) and a strided one, reduced
 * dims that are not adjacent ({0,2}: the innermost one wraps to a far
 * offset); partial last tiles; f32 sums in the reference's order, bit
 * for bit. The input is frac(i * 0.7071067): finite, all different, so a
 * sum in another order or over other elements differs (tb_fill's NaNs
 * would hide that). */
static const char reduce_steps[] =
  "HloModule rs\n"
  "add {\n a = f32[] parameter(0)\n b = f32[] parameter(1)\n ROOT s = f32[] add(a, b)\n}\n"
  "mx {\n a = s32[] parameter(0)\n b = s32[] parameter(1)\n ROOT s = s32[] maximum(a, b)\n}\n"
  "ENTRY e {\n"
  "  xi = f32[8880] iota(), iota_dimension=0\n  k = f32[] constant(0.7071067)\n"
  "  kb = f32[8880] broadcast(k), dimensions={}\n  v = f32[8880] multiply(xi, kb)\n"
  "  fl = f32[8880] floor(v)\n  fr = f32[8880] subtract(v, fl)\n"
  "  x = f32[40,37,6] reshape(fr)\n  y = s32[40,37,6] parameter(0)\n"
  "  z = f32[] constant(0.5)\n  w = s32[] constant(-7)\n"
  "  a = f32[40] reduce(x, z), dimensions={1,2}, to_apply=add\n"
  "  b = f32[40,6] reduce(x, z), dimensions={1}, to_apply=add\n"
  "  c = f32[37,6] reduce(x, z), dimensions={0}, to_apply=add\n"
  "  d = f32[6] reduce(x, z), dimensions={0,1}, to_apply=add\n"
  "  g = f32[37] reduce(x, z), dimensions={0,2}, to_apply=add\n"
  "  m = s32[40,6] reduce(y, w), dimensions={1}, to_apply=mx\n"
  "  ROOT t = (f32[40], f32[40,6], f32[37,6], f32[6], f32[37], s32[40,6]) tuple(a, b, c, d, g, m)\n}\n";

TR_TEST(emit_reduce_four_steps_exact) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(reduce_steps, &eo, false, "reduce steps");
  eo.tile = 3;
  agree_text(reduce_steps, &eo, false, "reduce steps tile=3");
  tr_module *m = tb_parse(reduce_steps, "reduce steps");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts_init(&eo);
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK_CONTAINS(tr_buf_str(&src), "if (nt == 16 && q + 4 <= nred && ridx[1] + 4 <= rd[1])");
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* The exact convolution loop by tiles along the result's last dim
 * (conv_rows): depthwise (affine offsets, full and partial tiles), two
 * feature groups, batch groups, batch as the result's last dim, an int
 * convolution (one group); f32 inputs are frac(i * c), finite and all
 * different, so a product added in another order or at another offset
 * changes the bits. */
static const char conv_rows_mod[] =
  "HloModule cr\n"
  "ENTRY e {\n"
  "  i0 = f32[2400] iota(), iota_dimension=0\n  k0 = f32[] constant(0.7071067)\n"
  "  k0b = f32[2400] broadcast(k0), dimensions={}\n  v0 = f32[2400] multiply(i0, k0b)\n"
  "  f0 = f32[2400] floor(v0)\n  g0 = f32[2400] subtract(v0, f0)\n"
  "  k1 = f32[] constant(0.6180339)\n  k1b = f32[2400] broadcast(k1), dimensions={}\n"
  "  v1 = f32[2400] multiply(i0, k1b)\n  f1 = f32[2400] floor(v1)\n  g1 = f32[2400] subtract(v1, f1)\n"
  "  xs = f32[1200] slice(g0), slice={[0:1200]}\n  x = f32[2,5,6,20] reshape(xs)\n"
  "  wds = f32[180] slice(g1), slice={[0:180]}\n  wd = f32[3,3,1,20] reshape(wds)\n"
  "  wgs = f32[1800] slice(g1), slice={[0:1800]}\n  wg = f32[3,3,10,20] reshape(wgs)\n"
  "  xbs = f32[612] slice(g0), slice={[100:712]}\n  xb = f32[17,3,3,4] reshape(xbs)\n"
  "  wbs = f32[180] slice(g1), slice={[7:187]}\n  wb = f32[3,3,4,5] reshape(wbs)\n"
  "  x4 = f32[4,5,6,20] concatenate(x, x), dimensions={0}\n"
  "  wqs = f32[720] slice(g1), slice={[3:723]}\n  wq = f32[3,3,20,4] reshape(wqs)\n"
  "  y = s32[2,5,6,20] parameter(0)\n  wi = s32[3,3,20,20] parameter(1)\n"
  "  cd = f32[2,5,6,20] convolution(x, wd), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=20\n"
  "  cg = f32[2,5,6,20] convolution(x, wg), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=2\n"
  "  cb = f32[3,3,5,17] convolution(xb, wb), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->01fb\n"
  "  cq = f32[2,5,6,4] convolution(x4, wq), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, batch_group_count=2\n"
  "  ci = s32[2,5,6,20] convolution(y, wi), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n"
  "  ROOT t = (f32[2,5,6,20], f32[2,5,6,20], f32[3,3,5,17], f32[2,5,6,4], s32[2,5,6,20]) tuple(cd, cg, cb, cq, ci)\n"
  "}\n";

TR_TEST(emit_conv_rows_exact) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(conv_rows_mod, &eo, false, "conv rows");
  eo.tile = 3;
  agree_text(conv_rows_mod, &eo, false, "conv rows tile=3");
  tr_module *m = tb_parse(conv_rows_mod, "conv rows");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts_init(&eo);
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  /* depthwise: a feature per group, steps 1 along t */
  CHECK_CONTAINS(tr_buf_str(&src), "xi = xb[0] + t * 1LL + xo + j * 1LL, yi = yb[0] + t * 1LL");
  /* batch last: step of one batch (3*3*4 = 36), kernel offset fixed */
  CHECK_CONTAINS(tr_buf_str(&src), "xi = xb[0] + t * 36LL + xo + j * 1LL, yi = yb[0] + t * 0LL");
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}

/* Integer dots with 32-bit or narrower results accumulate in uint32_t
 * (only the low bits are kept): extreme operands (tb_fill's 4e9, INT_MIN,
 * 65535) so that products and sums wrap, widening operands, odd sizes,
 * full and partial tiles, a batch dim; s64 stays 64-bit. */
static const char int_dots[] =
  "HloModule idot\n"
  "ENTRY e {\n"
  "  a = s32[19,37] parameter(0)\n  b = s32[37,21] parameter(1)\n"
  "  c = u32[3,19,37] parameter(2)\n  d = u32[3,37,5] parameter(3)\n"
  "  e8 = s8[19,37] parameter(4)\n  f8 = s8[37,21] parameter(5)\n"
  "  g = s64[19,37] parameter(6)\n  h = s64[37,21] parameter(7)\n"
  "  a16 = s16[19,37] parameter(8)\n  b16 = s16[37,21] parameter(9)\n"
  "  x = s32[19,21] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  y = u32[3,19,5] dot(c, d), lhs_batch_dims={0}, lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n"
  "  z = s32[19,21] dot(e8, f8), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  w = s16[19,21] dot(a16, b16), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  v = s64[19,21] dot(g, h), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n"
  "  ROOT t = (s32[19,21], u32[3,19,5], s32[19,21], s16[19,21], s64[19,21]) tuple(x, y, z, w, v)\n"
  "}\n";

TR_TEST(emit_int_dot_u32_accumulators_exact) {
  tr_emit_opts eo;
  tr_emit_opts_init(&eo);
  agree_text(int_dots, &eo, false, "int dots");
  eo.tile = 3;
  agree_text(int_dots, &eo, false, "int dots tile=3");
  tr_module *m = tb_parse(int_dots, "int dots");
  if (!m) return;
  tr_buf src = {0};
  tr_diag d = {0};
  tr_emit_opts_init(&eo);
  CHECK(tr_emit_c(m, &eo, &src, &d) == TR_OK);
  CHECK_CONTAINS(tr_buf_str(&src), "uint32_t acc[16];");
  CHECK_CONTAINS(tr_buf_str(&src), "u64 acc[16];"); /* the s64 dot */
  tr_buf_free(&src);
  tr_diag_clear(&d);
  tr_module_free(m);
}
