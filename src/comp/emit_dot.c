/* emit_dot.c - kernels of reductions and contractions: reduce (also as
 * the root of an input fusion), reduce-window, convolution and dot, with
 * the packed matrix product of big float dots (docs/EMITTER.md). */
#include "emitint.h"

/* ---- reductions and contractions ---- */

/* The root of to_apply is op(param, param) of one scalar type dt
 * (eval.c ev_simple_binary); *p0 is the operand index of parameter 0. */
const tr_instr *em_simple_binary(const tr_comp *c, tr_dtype dt) {
  const tr_instr *r = c ? c->root : NULL;
  if (!r || !em_elem_op(r->op) || r->noperands != 2 || c->nparams != 2) return NULL;
  if (r->op == TR_OP_COMPARE || r->op == TR_OP_SELECT || r->op == TR_OP_CLAMP || r->op == TR_OP_CONVERT)
    return NULL;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER || a == b) return NULL;
  if (a->shape->rank || b->shape->rank || r->shape->rank) return NULL;
  if (a->shape->dtype != dt || b->shape->dtype != dt || r->shape->dtype != dt) return NULL;
  return r;
}

void em_reduce_split(const tr_instr *in, const tr_shape *xs, em_rsplit *s) {
  int n;
  const int64_t *dm = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  int64_t xst[64];
  strides(xs, xst);
  s->nk = s->nr = 0;
  s->nout = s->nred = 1;
  for (int d = 0; d < xs->rank; d++) {
    if (tr_ints_has(dm, n, d)) {
      s->rd[s->nr] = xs->dims[d];
      s->rs[s->nr++] = xst[d];
      s->nred *= xs->dims[d];
    } else {
      s->kd[s->nk] = xs->dims[d];
      s->ks[s->nk++] = xst[d];
      s->nout *= xs->dims[d];
    }
  }
}

/* A reduce of one input whose to_apply is one binary op on its two
 * parameters: the tiled kernel k_reduce; any other reduce calls its
 * to_apply per element (k_reduce_generic). */
bool em_simple_reduce(const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2 || !tr_shape_is_array(in->shape)) return false;
  tr_dtype dt = in->operands[0]->shape->dtype;
  return em_simple_binary(ap, dt) && in->shape->dtype == dt && in->operands[1]->shape->dtype == dt;
}

/* The tiled reduce of instruction in; with fc (an input fusion whose root
 * is the reduce) the reduced elements come from the value function eK
 * computed from the fusion's parameters instead of a stored operand. */
tr_status k_reduce_in(em *e, const tr_instr *in, const tr_comp *fc) {
  const tr_comp *ap = NULL;
  if (fc) in = fc->root;
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  if (ta && ta->kind == TR_AK_COMP) ap = ta->u.comp;
  if (in->noperands != 2) return em_unsup(e, in, "variadic reduce");
  const tr_shape *xs = in->operands[0]->shape;
  tr_dtype dt = xs->dtype;
  const tr_instr *r = em_simple_binary(ap, dt);
  if (!r || in->shape->dtype != dt || in->operands[1]->shape->dtype != dt)
    return em_unsup(e, in, "to_apply other than one binary op");
  em_rsplit sp;
  em_reduce_split(in, xs, &sp);
  int nk = sp.nk, nr = sp.nr;
  int64_t nout = sp.nout, nred = sp.nred;
  const char *args[2];
  args[r->operands[0]->param_index == 0 ? 0 : 1] = "acc[t]";
  args[r->operands[0]->param_index == 0 ? 1 : 0] = "xv";
  tr_buf x = {0};
  if (!em_elem_value(r, args, &x, e->o->inject)) {
    tr_buf_free(&x);
    return em_unsup(e, in, "to_apply op");
  }
  tr_buf *k = &e->cur;
  const char *tn = tr_dtype_name(dt);
  int T = e->o->tile;
  char xload[64], iload[64];
  if (fc) {
    /* The reduced input, element i of its shape, computed in place. */
    tr_buf_printf(k, "static inline %s eK(", lvt(dt));
    for (int i = 0; i < fc->nparams; i++) tr_buf_printf(k, "const u8 *a%d, ", i);
    tr_buf_puts(k, "i64 i) {\n");
    tr_status st = em_fused_values(e, fc, xs, in);
    if (st != TR_OK) {
      tr_buf_free(&x);
      return st;
    }
    tr_buf_printf(k, "  return v%d;\n}\n", in->operands[0]->id);
    const tr_instr *init = in->operands[1];
    if (init->op == TR_OP_PARAMETER) snprintf(iload, sizeof iload, "LD_%s(a%lld, 0)", tn, (long long)init->param_index);
    else snprintf(iload, sizeof iload, "LD_%s(c%d_0, 0)", tn, init->id);
    tr_buf x2 = {0};
    for (int i = 0; i < fc->nparams; i++) tr_buf_printf(&x2, "a%d, ", i);
    snprintf(xload, sizeof xload, "eK(%s", tr_buf_str(&x2));
    tr_buf_free(&x2);
    em_kern_head(e, fc->nparams);
  } else {
    snprintf(iload, sizeof iload, "LD_%s(a1, 0)", tn);
    snprintf(xload, sizeof xload, "LD_%s(a0, ", tn);
    em_kern_head(e, 2);
  }
  emit_i64s(k, "kd", sp.kd, nk);
  emit_i64s(k, "ks", sp.ks, nk);
  emit_i64s(k, "rd", sp.rd, nr);
  emit_i64s(k, "rs", sp.rs, nr);
  int64_t nred_run = nred;
  if (TR_INJECTED(e->o->inject, EMIT_INT_MINMAX_REDUCE_LANES) && !is_flt(dt) && dt != TR_DT_PRED &&
      (r->op == TR_OP_MAXIMUM || r->op == TR_OP_MINIMUM))
    /* defect: int max/min "vectorized" in whole lane chunks only; the
     * last nred % lanes reduced elements are never visited */
    nred_run = nred - nred % e->o->lanes;
  tr_buf_printf(k, "  const i64 nout = %lldLL, nred = %lldLL;\n  const %s iv = %s;\n  %s acc[%d];\n",
                (long long)nout, (long long)nred_run, lvt(dt), iload, lvt(dt), T);
  /* Tiles of outputs; within a tile every output still sees its reduced
   * elements in increasing row-major order, as the reference does. */
  tr_buf_printf(k, "  i64 o0;\n  for (o0 = 0; o0 < nout; o0 += %d) {\n"
                   "    i64 nt = nout - o0 < %d ? nout - o0 : %d, ko[%d], ridx[%d] = {0}, roff = 0, q, t;\n"
                   "    int d;\n"
                   "    for (t = 0; t < nt; t++) {\n      i64 rem = o0 + t;\n      ko[t] = 0;\n"
                   "      for (d = %d; d >= 0; d--) { ko[t] += (rem %% kd[d]) * ks[d]; rem /= kd[d]; }\n"
                   "      %sacc[t] = iv;\n    }\n",
                T, T, T, T, nr > 0 ? nr : 1, nk - 1,
                /* defect: the fused reduce's accumulators take the init value in
                 * the first tile only; later tiles continue from the previous
                 * tile's results */
                fc && TR_INJECTED(e->o->inject, FUSION_REDUCE_INIT_ONCE) ? "if (o0 == 0) " : "");
  /* A full tile's loop has a constant bound, so cc keeps acc[] in
   * registers; the last, partial tile takes the loop bounded by nt. Where
   * four more steps stay inside the innermost reduced dim, a full tile
   * takes them at once: per output four dependent steps in the same
   * order, the tile's outputs independent chains (4x fewer index steps,
   * contiguous loads for a row reduce). */
  tr_buf_printf(k, "    for (q = 0; q < nred; q++) {\n");
  if (nr > 0) {
    tr_buf_printf(k, "      if (nt == %d && q + 4 <= nred && ridx[%d] + 4 <= rd[%d]) {\n"
                     "        for (t = 0; t < %d; t++) {\n", T, nr - 1, nr - 1, T);
    for (int u = 0; u < 4; u++) {
      tr_buf_printf(k, "          { const %s xv = %sko[t] + roff + %d * rs[%d]); acc[t] = ", lvt(dt), xload, u, nr - 1);
      round_to(k, dt, tr_buf_str(&x));
      tr_buf_puts(k, "; }\n");
    }
    tr_buf_printf(k, "        }\n        q += 3;\n        ridx[%d] += 3;\n        roff += 3 * rs[%d];\n      } else ",
                  nr - 1, nr - 1);
  } else {
    tr_buf_puts(k, "      ");
  }
  tr_buf_printf(k, "if (nt == %d)\n        for (t = 0; t < %d; t++) {\n"
                   "          const %s xv = %sko[t] + roff);\n          acc[t] = ", T, T, lvt(dt), xload);
  round_to(k, dt, tr_buf_str(&x));
  tr_buf_printf(k, ";\n        }\n      else\n        for (t = 0; t < nt; t++) {\n"
                   "          const %s xv = %sko[t] + roff);\n          acc[t] = ", lvt(dt), xload);
  round_to(k, dt, tr_buf_str(&x));
  tr_buf_printf(k, ";\n        }\n      for (d = %d; d >= 0; d--) {\n        ridx[d]++;\n        roff += rs[d];\n"
                   "        if (ridx[d] < rd[d]) break;\n        roff -= rs[d] * rd[d];\n        ridx[d] = 0;\n      }\n    }\n"
                   "    for (t = 0; t < nt; t++) ST_%s(r, o0 + t, acc[t]);\n  }\n  return 0;\n}\n",
                nr - 1, tn);
  tr_buf_free(&x);
  return TR_OK;
}

/* reduce-window with one input and a one-op to_apply (eval_window.c):
 * per output, the window in row-major order; padding, base-dilation holes
 * and positions outside the input are skipped. */
tr_status k_reduce_window(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2) return em_unsup(e, in, "variadic reduce-window");
  const tr_shape *xs = in->operands[0]->shape, *s = in->shape;
  tr_dtype dt = xs->dtype;
  const tr_instr *r = em_simple_binary(ap, dt);
  if (!r || s->dtype != dt || in->operands[1]->shape->dtype != dt)
    return em_unsup(e, in, "to_apply other than one binary op");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return em_unsup(e, in, "window");
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
  bool empty = em_window_arrays(wa, rank, wsize, stride, padlo, ld, rd);
  /* defect: base dilation dropped, the input read as if undilated */
  if (TR_INJECTED(e->o->inject, EMIT_REDUCE_WINDOW_BASE_DILATION))
    for (int d = 0; d < rank; d++) ld[d] = 1;
  const char *args[2];
  args[r->operands[0]->param_index == 0 ? 0 : 1] = "acc";
  args[r->operands[0]->param_index == 0 ? 1 : 0] = "xv";
  tr_buf x = {0};
  if (!em_elem_value(r, args, &x, e->o->inject)) {
    tr_buf_free(&x);
    return em_unsup(e, in, "to_apply op");
  }
  tr_buf *k = &e->cur;
  const char *tn = tr_dtype_name(dt);
  em_kern_head(e, 2);
  emit_i64s(k, "rdims", s->dims, rank);
  emit_i64s(k, "xdims", xs->dims, rank);
  emit_i64s(k, "xst", xst, rank);
  emit_i64s(k, "wsize", wsize, rank);
  emit_i64s(k, "wstride", stride, rank);
  emit_i64s(k, "padlo", padlo, rank);
  emit_i64s(k, "ldil", ld, rank);
  emit_i64s(k, "rdil", rd, rank);
  tr_buf_printf(k, "  const %s iv = LD_%s(a1, 0);\n  i64 o[%d] = {0}, w[%d], q0, q;\n  int d;\n", vt(dt), tn, rank,
                rank);
  tr_buf_printf(k, "  for (q0 = 0; q0 < n; q0 += %d)\n  for (q = q0; q < n && q < q0 + %d; q++) {\n"
                   "    %s acc = iv;\n", e->o->tile, e->o->tile, vt(dt));
  if (!empty) {
    tr_buf_printf(k, "    for (d = 0; d < %d; d++) w[d] = 0;\n    for (;;) {\n      i64 off = 0;\n      int ok = 1;\n"
                     "      for (d = 0; d < %d && ok; d++) {\n"
                     "        i64 p = o[d] * wstride[d] + w[d] * rdil[d] - padlo[d];\n"
                     "        if (p < 0) { ok = 0; break; }\n"
                     "        if (ldil[d] > 1) { if (p %% ldil[d]) { ok = 0; break; } p /= ldil[d]; }\n"
                     "        if (p >= xdims[d]) { ok = 0; break; }\n"
                     "        off += p * xst[d];\n      }\n"
                     "      if (ok) {\n        const %s xv = LD_%s(a0, off);\n        acc = ",
                  rank, rank, vt(dt), tn);
    round_to(k, dt, tr_buf_str(&x));
    tr_buf_printf(k, ";\n      }\n      for (d = %d; d >= 0; d--) { if (++w[d] < wsize[d]) break; w[d] = 0; }\n"
                     "      if (d < 0) break;\n    }\n", rank - 1);
  }
  tr_buf_printf(k, "    ST_%s(r, q, acc);\n", tn);
  tr_buf_printf(k, "    for (d = %d; d >= 0; d--) { if (++o[d] < rdims[d]) break; o[d] = 0; }\n  }\n  return 0;\n}\n",
                rank - 1);
  tr_buf_free(&x);
  return TR_OK;
}

/* Operands converted to the result type dt into cx/cy (as k_dot). An f32
 * or f64 input of the result's type is not copied (the copy of a 2 MB
 * activation cost the depthwise bench a third of its time, page faults
 * included): it is read in place with LD_t (x_at), and cx is a dummy.
 * Returns whether x is read in place. */
static bool convert_operands(em *e, const tr_shape *xs, const tr_shape *ys, tr_dtype dt, const char *at) {
  tr_buf *k = &e->cur;
  bool direct = xs->dtype == dt && (dt == TR_DT_F32 || dt == TR_DT_F64);
  tr_buf_printf(k, "  const i64 nx = %lldLL, ny = %lldLL;\n"
                   "  %s *cx = malloc(sizeof(%s) * (nx ? nx : 1)), *cy = malloc(sizeof(%s) * (ny ? ny : 1));\n"
                   "  i64 j;\n  if (!cx || !cy) { free(cx); free(cy); return 1; }\n",
                direct ? 0LL : (long long)count_of(xs), (long long)count_of(ys), at, at, at);
  for (int side = direct ? 1 : 0; side < 2; side++) {
    tr_dtype st = (side ? ys : xs)->dtype;
    tr_buf cv = {0}, ld = {0};
    tr_buf_printf(&ld, "LD_%s(a%d, j)", tr_dtype_name(st), side);
    em_convert_value(&cv, st, dt, ld.p, e->o->inject);
    tr_buf_printf(k, "  for (j = 0; j < n%c; j++) c%c[j] = (%s)", side ? 'y' : 'x', side ? 'y' : 'x', at);
    round_to(k, dt, cv.p);
    tr_buf_puts(k, ";\n");
    tr_buf_free(&cv);
    tr_buf_free(&ld);
  }
  return direct;
}

/* The converted input element at index expression idx: cx[idx], or read
 * in place (convert_operands). */
static void x_at(tr_buf *k, bool direct, tr_dtype dt, const char *at, const char *idx) {
  if (direct) tr_buf_printf(k, "(%s)LD_%s(a0, %s)", at, tr_dtype_name(dt), idx);
  else tr_buf_printf(k, "cx[%s]", idx);
}

/* Convolution as the reference computes it (eval_conv.c): per output
 * element, the kernel's spatial positions in row-major order and inside
 * each the input features of its group; integer results saturate. The
 * outputs are walked in tiles of `tile` elements. */

/* The fast path of a big float convolution without groups: im2col in
 * blocks of rows (output positions) times the packed kernel, with tr_mm.
 * Each output still adds its products in the reference's order (kernel
 * positions row-major, then input features); positions the reference
 * skips (padding, dilation holes) are zeros here, and adding 0 * w changes
 * nothing when w is finite (the running sum starts at +0 and is never -0),
 * so the path is taken only when every kernel element is finite. */
static void conv_fast(em *e, const tr_instr *in, int64_t C, int64_t O, int64_t kpos, bool direct) {
  tr_buf *k = &e->cur;
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *ys = in->operands[1]->shape;
  const tr_convdims *cd = tr_instr_attr(in, TR_ATTR_DIM_LABELS)->u.conv;
  int ns = cd->nspatial;
  bool dbl = s->dtype == TR_DT_F64;
  const char *at = dbl ? "double" : "float";
  int nb = dbl ? 16 : 32;
  int64_t xst[64], yst[64], rst[64], odsp[32], P = 1;
  strides(xs, xst);
  strides(ys, yst);
  strides(s, rst);
  for (int i = 0; i < ns; i++) {
    odsp[i] = s->dims[cd->out_spatial[i]];
    P *= odsp[i];
  }
  int64_t K = kpos * C, M = xs->dims[cd->in_batch] * P, RB = 256;
  emit_mm(e, dbl);
  emit_i64s(k, "odsp", odsp, ns);
  tr_buf_printf(k, "  for (j = 0; j < ny && isfinite(cy[j]); j++) {}\n"
                   "  if (j == ny) {\n"
                   "    const i64 K = %lldLL, O = %lldLL, M = %lldLL, P = %lldLL, ns = (O + %d) / %d;\n"
                   "    %s *pa = calloc(%lld * K, sizeof(%s)), *pb = calloc((size_t)(ns * K * %d), sizeof(%s)),"
                   " *pc = malloc(sizeof(%s) * %lld * O);\n"
                   "    i64 row0, rows, t, kq, c, oo, kk2[%d];\n    int d, rc = !pa || !pb || !pc;\n",
                (long long)K, (long long)O, (long long)M, (long long)P, nb - 1, nb, at, (long long)RB, at, nb,
                at, at, (long long)RB, ns > 0 ? ns : 1);
  /* B: kernel position (reversed where asked), input feature, output feature. */
  tr_buf_printf(k, "    for (kq = 0; !rc && kq < %lldLL; kq++) {\n      i64 rem = kq, yo = 0;\n"
                   "      for (d = %d; d >= 0; d--) { i64 w = rem %% wsize[d]; rem /= wsize[d]; yo += (rev[d] ? wsize[d] - 1 - w : w) * yss[d]; }\n"
                   "      for (c = 0; c < %lldLL; c++)\n        for (oo = 0; oo < O; oo++)\n"
                   "          pb[((oo / %d) * K + kq * %lldLL + c) * %d + oo %% %d] = cy[yo + c * %lldLL + oo * %lldLL];\n    }\n",
                (long long)kpos, ns - 1, (long long)C, nb, (long long)C, nb, nb, (long long)yst[cd->k_in],
                (long long)yst[cd->k_out]);
  /* A, RB output positions at a time: row = batch * P + spatial index. */
  tr_buf_printf(k, "    for (row0 = 0; !rc && row0 < M; row0 += %lld) {\n"
                   "      rows = M - row0 < %lld ? M - row0 : %lld;\n"
                   "      for (t = 0; t < rows; t++) {\n"
                   "        i64 rw = row0 + t, nn = rw / P, sp = rw %% P, osd[%d];\n        %s *ar = pa + t * K;\n"
                   "        for (d = %d; d >= 0; d--) { osd[d] = sp %% odsp[d]; sp /= odsp[d]; }\n"
                   "        for (d = 0; d < %d; d++) kk2[d] = 0;\n"
                   "        for (kq = 0; kq < %lldLL; kq++) {\n          i64 xo = nn * %lldLL;\n          int skip = 0;\n"
                   "          for (d = 0; d < %d && !skip; d++) {\n"
                   "            i64 p = osd[d] * wstride[d] - padlo[d] + kk2[d] * rdil[d];\n"
                   "            if (ldil[d] > 1) { if (p %% ldil[d]) { skip = 1; break; } p /= ldil[d]; }\n"
                   "            if (p < 0 || p >= xsp[d]) { skip = 1; break; }\n            xo += p * xss[d];\n          }\n"
                   "          for (c = 0; c < %lldLL; c++) ar[kq * %lldLL + c] = skip ? 0 : ",
                (long long)RB, (long long)RB, (long long)RB, ns > 0 ? ns : 1, at, ns - 1, ns, (long long)kpos,
                (long long)xst[cd->in_batch], ns, (long long)C, (long long)C);
  {
    char idx[64];
    snprintf(idx, sizeof idx, "xo + c * %lldLL", (long long)xst[cd->in_feature]);
    x_at(k, direct, s->dtype, at, idx);
  }
  tr_buf_printf(k, ";\n"
                   "          for (d = %d; d >= 0; d--) { if (++kk2[d] < wsize[d]) break; kk2[d] = 0; }\n        }\n"
                   "      }\n",
                ns - 1);
  /* C block to the result: batch, output feature and spatial dims. */
  tr_buf_printf(k, "      tr_mm_%s(pa, pb, pc, rows, O, K);\n"
                   "      for (t = 0; t < rows; t++) {\n"
                   "        i64 rw = row0 + t, nn = rw / P, sp = rw %% P, ro = nn * %lldLL;\n"
                   "        for (d = %d; d >= 0; d--) { ro += (sp %% odsp[d]) * osst[d]; sp /= odsp[d]; }\n"
                   "        for (oo = 0; oo < O; oo++) ST_%s(r, ro + oo * %lldLL, pc[t * O + oo]);\n      }\n    }\n"
                   "    free(pa);\n    free(pb);\n    free(pc);\n    free(cx);\n    free(cy);\n    return rc;\n  }\n",
                dbl ? "d" : "f", (long long)rst[cd->out_batch], ns - 1, tr_dtype_name(s->dtype),
                (long long)rst[cd->out_feature]);
}

/* The saturation of an integer convolution result (the reference's
 * rule), on the accumulator expression acc. */
static void conv_saturate(tr_buf *k, tr_dtype dt, const char *acc) {
  if (is_flt(dt) || dt == TR_DT_PRED || bits_of(dt) >= 64) return;
  if (is_sg(dt))
    tr_buf_printf(k, "    { i64 v = (i64)%s; %s = (u64)(v < (i64)0x%llxull ? (i64)0x%llxull : v > %lldLL ? %lldLL : v); }\n",
                  acc, acc, (unsigned long long)tr_int_min(dt), (unsigned long long)tr_int_min(dt),
                  (long long)tr_int_max(dt), (long long)tr_int_max(dt));
  else
    tr_buf_printf(k, "    if (%s > 0x%llxull) %s = 0x%llxull;\n", acc, (unsigned long long)tr_int_max(dt), acc,
                  (unsigned long long)tr_int_max(dt));
}

/* The exact convolution loop when the result's last dim is its feature
 * (or batch) dim, as in NHWC: a tile of outputs along that dim shares
 * its window positions, so the bounds and offsets of each position are
 * computed once per tile instead of once per output (grouped and
 * depthwise convolutions, integer ones, small ones). Each output still
 * adds its products in the reference's order: window positions in
 * row-major order, input features of its group in increasing order. */
static void conv_rows(em *e, const tr_instr *in, int last, int64_t Cg, int64_t Og, int64_t Ob,
                      int64_t Nb, const int64_t *xst, const int64_t *yst, const char *at, bool direct) {
  const tr_shape *s = in->shape;
  const tr_convdims *cd = tr_instr_attr(in, TR_ATTR_DIM_LABELS)->u.conv;
  int ns = cd->nspatial, T = e->o->tile;
  tr_dtype dt = s->dtype;
  tr_buf *k = &e->cur;
  bool lb = last == cd->out_batch;
  tr_buf_printf(k, "  const i64 L = %lldLL;\n  i64 o[%d] = {0}, kk[%d], row, t0, t;\n  int d;\n",
                (long long)s->dims[last], s->rank, ns > 0 ? ns : 1);
  tr_buf_printf(k, "  if (L > 0)\n  for (row = 0; row < n / L; row++) {\n"
                   "    for (t0 = 0; t0 < L; t0 += %d) {\n"
                   "      const i64 nt = L - t0 < %d ? L - t0 : %d;\n"
                   "      i64 xb[%d], yb[%d];\n      %s acc[%d];\n"
                   "      for (t = 0; t < nt; t++) {\n",
                T, T, T, T, T, at, T);
  if (lb) tr_buf_printf(k, "        const i64 ob = t0 + t, of = o[%d];\n", (int)cd->out_feature);
  else tr_buf_printf(k, "        const i64 ob = o[%d], of = t0 + t;\n", (int)cd->out_batch);
  tr_buf_printf(k, "        const i64 fg = %lldLL ? of / %lldLL : 0, bgi = %lldLL ? of / %lldLL : 0;\n"
                   "        xb[t] = (ob + bgi * %lldLL) * %lldLL + fg * %lldLL * %lldLL;\n"
                   "        yb[t] = of * %lldLL;\n        acc[t] = 0;\n      }\n",
                (long long)Og, (long long)Og, (long long)Ob, (long long)Ob, (long long)Nb,
                (long long)xst[cd->in_batch], (long long)Cg, (long long)xst[cd->in_feature],
                (long long)yst[cd->k_out]);
  tr_buf_printf(k, "      for (d = 0; d < %d; d++) kk[d] = 0;\n"
                   "      for (;;) {\n        i64 xo = 0, yo = 0, j;\n        int skip = 0;\n"
                   "        for (d = 0; d < %d && !skip; d++) {\n"
                   "          i64 p = o[osp[d]] * wstride[d] - padlo[d] + kk[d] * rdil[d];\n"
                   "          if (ldil[d] > 1) { if (p %% ldil[d]) { skip = 1; break; } p /= ldil[d]; }\n"
                   "          if (p < 0 || p >= xsp[d]) { skip = 1; break; }\n"
                   "          xo += p * xss[d];\n"
                   "          yo += (rev[d] ? wsize[d] - 1 - kk[d] : kk[d]) * yss[d];\n        }\n",
                ns, ns);
  /* Where the offsets are affine in t (a feature group per output
   * feature or one group, likewise batch groups; or t along the batch),
   * a full tile's loop has a constant bound and constant steps, which cc
   * keeps in registers and vectorizes across t (depthwise: 4x). */
  int64_t xsb = xst[cd->in_batch], xsf = xst[cd->in_feature], xstep = -1, ystep = 0;
  if (lb) {
    xstep = xsb;
  } else if ((Og == 1 || Og == s->dims[last]) && (Ob == 1 || Ob == s->dims[last])) {
    xstep = (Og == 1 ? Cg * xsf : 0) + (Ob == 1 ? Nb * xsb : 0);
    ystep = yst[cd->k_out];
  }
  for (int fast = xstep >= 0 ? 1 : 0; fast >= 0; fast--) {
    if (fast)
      tr_buf_printf(k, "        if (!skip && nt == %d)\n          for (t = 0; t < %d; t++)\n"
                       "            for (j = 0; j < %lldLL; j++) {\n"
                       "              const i64 xi = xb[0] + t * %lldLL + xo + j * %lldLL, yi = yb[0] + t * %lldLL + yo + j * %lldLL;\n",
                    T, T, (long long)Cg, (long long)xstep, (long long)xsf, (long long)ystep,
                    (long long)yst[cd->k_in]);
    else
      tr_buf_printf(k, "        %sif (!skip)\n          for (t = 0; t < nt; t++)\n"
                       "            for (j = 0; j < %lldLL; j++) {\n"
                       "              const i64 xi = xb[t] + xo + j * %lldLL, yi = yb[t] + yo + j * %lldLL;\n",
                    xstep >= 0 ? "else " : "", (long long)Cg, (long long)xsf, (long long)yst[cd->k_in]);
    if (dt == TR_DT_PRED) {
      tr_buf_puts(k, "              acc[t] |= cx[xi] & cy[yi];\n");
    } else {
      tr_buf_printf(k, "              %s p = ", at);
      x_at(k, direct, dt, at, "xi");
      tr_buf_puts(k, " * cy[yi];\n              acc[t] = acc[t] + p;\n");
    }
    tr_buf_puts(k, "            }\n");
  }
  tr_buf_printf(k, "        for (d = %d; d >= 0; d--) { if (++kk[d] < wsize[d]) break; kk[d] = 0; }\n"
                   "        if (d < 0) break;\n      }\n      for (t = 0; t < nt; t++) {\n", ns - 1);
  conv_saturate(k, dt, "acc[t]");
  tr_buf_printf(k, "        ST_%s(r, row * L + t0 + t, acc[t]);\n      }\n    }\n"
                   "    for (d = %d; d >= 0; d--) { if (++o[d] < rdims[d]) break; o[d] = 0; }\n  }\n",
                tr_dtype_name(dt), last - 1);
  tr_buf_puts(k, "  free(cx);\n  free(cy);\n  return 0;\n}\n");
}

tr_status k_convolution(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *ys = in->operands[1]->shape;
  const tr_attr *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS), *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  const tr_attr *fa = tr_instr_attr(in, TR_ATTR_FEATURE_GROUP_COUNT);
  const tr_attr *ba = tr_instr_attr(in, TR_ATTR_BATCH_GROUP_COUNT);
  if (in->noperands != 2 || !dl || !dl->u.conv) return em_unsup(e, in, "dim_labels");
  const tr_convdims *cd = dl->u.conv;
  int ns = cd->nspatial;
  if (ns + 2 > 32 || (ns > 0 && (!wa || wa->n != ns))) return em_unsup(e, in, "window");
  const tr_window_dim *win = ns > 0 ? wa->u.win : NULL;
  int64_t G = fa ? fa->u.i : 1, B = ba ? ba->u.i : 1;
  tr_dtype dt = s->dtype;
  int64_t xst[64], yst[64], wsize[32], stride[32], padlo[32], ld[32], rd[32], rev[32], xsp[32], xss[32],
      yss[32], osp[32];
  strides(xs, xst);
  strides(ys, yst);
  bool empty = false;
  for (int i = 0; i < ns; i++) {
    wsize[i] = win[i].size;
    stride[i] = win[i].stride;
    /* defect: the high padding taken for the low one */
    padlo[i] = TR_INJECTED(e->o->inject, EMIT_CONV_PAD_LO_HI_SWAP) ? win[i].pad_hi : win[i].pad_lo;
    ld[i] = win[i].lhs_dilate;
    rd[i] = win[i].rhs_dilate;
    rev[i] = win[i].reversal;
    xsp[i] = xs->dims[cd->in_spatial[i]];
    xss[i] = xst[cd->in_spatial[i]];
    yss[i] = yst[cd->k_spatial[i]];
    osp[i] = cd->out_spatial[i];
    empty |= wsize[i] <= 0;
  }
  int64_t N = xs->dims[cd->in_batch], C = xs->dims[cd->in_feature], O = ys->dims[cd->k_out];
  int64_t Cg = G > 0 ? C / G : 0, Og = G > 0 ? O / G : 0, Ob = B > 0 ? O / B : 0, Nb = B > 0 ? N / B : 0;
  const char *at = dt == TR_DT_F64 ? "double" : is_flt(dt) ? "float" : "u64";
  tr_buf *k = &e->cur;
  em_kern_head(e, 2);
  emit_i64s(k, "rdims", s->dims, s->rank);
  emit_i64s(k, "wsize", wsize, ns);
  emit_i64s(k, "wstride", stride, ns);
  emit_i64s(k, "padlo", padlo, ns);
  emit_i64s(k, "ldil", ld, ns);
  emit_i64s(k, "rdil", rd, ns);
  emit_i64s(k, "rev", rev, ns);
  emit_i64s(k, "xsp", xsp, ns);
  emit_i64s(k, "xss", xss, ns);
  emit_i64s(k, "yss", yss, ns);
  emit_i64s(k, "osp", osp, ns);
  bool direct = convert_operands(e, xs, ys, dt, at);
  int64_t kpos = 1;
  for (int i = 0; i < ns; i++) kpos *= wsize[i];
  if (is_flt(dt) && G == 1 && B == 1 && !empty && count_of(s) > 0 && count_of(s) * kpos * C >= 32768) {
    int64_t rst[64], osst[32];
    strides(s, rst);
    for (int i = 0; i < ns; i++) osst[i] = rst[cd->out_spatial[i]];
    emit_i64s(k, "osst", osst, ns);
    conv_fast(e, in, C, O, kpos, direct);
  }
  int last = s->rank - 1;
  if (!empty && last >= 0 && (last == cd->out_feature || last == cd->out_batch)) {
    conv_rows(e, in, last, Cg, Og, Ob, Nb, xst, yst, at, direct);
    return TR_OK;
  }
  tr_buf_printf(k, "  i64 o[%d] = {0}, kk[%d], q0, q;\n  int d;\n", s->rank > 0 ? s->rank : 1, ns > 0 ? ns : 1);
  tr_buf_printf(k, "  for (q0 = 0; q0 < n; q0 += %d)\n  for (q = q0; q < n && q < q0 + %d; q++) {\n", e->o->tile,
                e->o->tile);
  tr_buf_printf(k, "    const i64 ob = o[%d], of = o[%d];\n", (int)cd->out_batch, (int)cd->out_feature);
  tr_buf_printf(k, "    const i64 fg = %lldLL ? of / %lldLL : 0, bgi = %lldLL ? of / %lldLL : 0;\n",
                (long long)Og, (long long)Og, (long long)Ob, (long long)Ob);
  tr_buf_printf(k, "    const i64 xbase = (ob + bgi * %lldLL) * %lldLL, ybase = of * %lldLL;\n", (long long)Nb,
                (long long)xst[cd->in_batch], (long long)yst[cd->k_out]);
  tr_buf_printf(k, "    %s acc = 0;\n    for (d = 0; d < %d; d++) kk[d] = 0;\n", at, ns);
  if (!empty) {
    tr_buf_puts(k, "    for (;;) {\n      i64 xo = xbase, yo = ybase, j;\n      int skip = 0;\n");
    tr_buf_printf(k, "      for (d = 0; d < %d && !skip; d++) {\n"
                     "        i64 p = o[osp[d]] * wstride[d] - padlo[d] + kk[d] * rdil[d];\n"
                     "        if (ldil[d] > 1) { if (p %% ldil[d]) { skip = 1; break; } p /= ldil[d]; }\n"
                     "        if (p < 0 || p >= xsp[d]) { skip = 1; break; }\n"
                     "        xo += p * xss[d];\n"
                     "        yo += (rev[d] ? wsize[d] - 1 - kk[d] : kk[d]) * yss[d];\n      }\n", ns);
    tr_buf_printf(k, "      if (!skip)\n        for (j = 0; j < %lldLL; j++) {\n"
                     "          const i64 xi = xo + (fg * %lldLL + j) * %lldLL, yi = yo + j * %lldLL;\n",
                  (long long)Cg, (long long)Cg, (long long)xst[cd->in_feature], (long long)yst[cd->k_in]);
    if (dt == TR_DT_PRED) {
      tr_buf_puts(k, "          acc |= cx[xi] & cy[yi];\n");
    } else {
      tr_buf_printf(k, "          %s p = ", at);
      x_at(k, direct, dt, at, "xi");
      tr_buf_puts(k, " * cy[yi];\n          acc = acc + p;\n");
    }
    tr_buf_printf(k, "        }\n      for (d = %d; d >= 0; d--) { if (++kk[d] < wsize[d]) break; kk[d] = 0; }\n"
                     "      if (d < 0) break;\n    }\n", ns - 1);
  }
  if (!is_flt(dt) && dt != TR_DT_PRED && bits_of(dt) < 64) {
    if (is_sg(dt))
      tr_buf_printf(k, "    { i64 v = (i64)acc; acc = (u64)(v < (i64)0x%llxull ? (i64)0x%llxull : v > %lldLL ? %lldLL : v); }\n",
                    (unsigned long long)tr_int_min(dt), (unsigned long long)tr_int_min(dt),
                    (long long)tr_int_max(dt), (long long)tr_int_max(dt));
    else
      tr_buf_printf(k, "    if (acc > 0x%llxull) acc = 0x%llxull;\n", (unsigned long long)tr_int_max(dt),
                    (unsigned long long)tr_int_max(dt));
  }
  tr_buf_printf(k, "    ST_%s(r, q, acc);\n", tr_dtype_name(dt));
  tr_buf_printf(k, "    for (d = %d; d >= 0; d--) { if (++o[d] < rdims[d]) break; o[d] = 0; }\n  }\n", s->rank - 1);
  tr_buf_puts(k, "  free(cx);\n  free(cy);\n  return 0;\n}\n");
  return TR_OK;
}

/* The matrix product kernel of big float dots (k_dot), emitted once per
 * unit and element type: C[M,N] = A[M,K] B[K,N] with A packed row-major
 * (rows padded with zeros to a multiple of 4) and B packed in strips of
 * NB columns, [N / NB][K][NB] (padded with zeros). A 4 x NB block of C is
 * held in registers; each lane is one output doing 0 + p0 + p1 + ... in
 * increasing k, products and sums separate: the reference's order (the
 * vectors run across outputs, never across k), so the result is the same
 * bit for bit. The vector variants (emit_mm_vec) are chosen at run time:
 * 64-byte vectors with AVX-512 (one 4 x NB tile per strip; on this AMD
 * EPYC still 1.7x the AVX2 variant's speed standalone, 256^3 f32 0.13 vs
 * 0.27 ms, as each broadcast A element feeds twice the lanes), else
 * 32-byte ones with AVX2; else plain loops that cc vectorizes as it can
 * (also libtcc's path). Padding rows and columns are computed but never
 * stored. */
/* The vector variant of tr_mm (for emit_mm): vb-byte vectors of L lanes
 * under target attribute `target`, a 4-row by 2L-column tile of C in eight
 * vector registers (a strip of NB columns is NB / 2L such tiles), and the
 * contraction cut into blocks of KC = 256 steps so that a block of the B
 * strip stays in L1 while every row group passes over it. Between blocks
 * the running sums are stored to C and reloaded, which changes no bit:
 * the accumulators hold exactly the values C does. Each lane still sums
 * its products in increasing k from +0, products and sums separate. */
static void emit_mm_vec(tr_buf *k, bool dbl, int vb, const char *target) {
  const char *T = dbl ? "double" : "float", *f = dbl ? "d" : "f";
  int nb = dbl ? 16 : 32, L = vb / (dbl ? 8 : 4), W = 2 * L;
  tr_buf_printf(k, "typedef %s tr_v%s%d __attribute__((vector_size(%d)));\n"
                   "__attribute__((target(\"%s\"))) static void tr_mm_%s_v%d(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K, i64 ldb) {\n"
                   "  i64 k0, kc, s, i0, q, col, ld, ns = (N + %d) / %d, Mp = (M + 3) / 4 * 4;\n  int h, r, j;\n  %s bbuf[256 * %d];\n"
                   "  for (k0 = 0; k0 < K; k0 += 256) {\n    kc = K - k0 < 256 ? K - k0 : 256;\n"
                   "    for (s = 0; s < ns; s++) {\n      const %s *bk = pb + (s * K + k0) * %d;\n",
                T, f, vb, vb, target, f, vb, T, T, T, nb - 1, nb, T, nb, T, nb);
  /* ldb != 0: B is row-major [K, ldb], not packed; this block of the strip
   * is copied to bbuf (zeros past N), which stays warm in L1, instead of
   * the whole B to fresh pages. */
  tr_buf_printf(k, "      if (ldb) {\n        for (q = 0; q < kc; q++)\n"
                   "          for (j = 0; j < %d; j++) bbuf[q * %d + j] = s * %d + j < N ? pb[(k0 + q) * ldb + s * %d + j] : 0;\n"
                   "        bk = bbuf;\n      }\n"
                   "      for (h = 0; h < %d; h++)\n        for (i0 = 0; i0 < Mp; i0 += 4) {\n",
                nb, nb, nb, nb, nb / W);
  tr_buf_printf(k, "          const %s *bs = bk + h * %d, *a0 = pa + i0 * K + k0, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;\n"
                   "          tr_v%s%d c00, c01, c10, c11, c20, c21, c30, c31, b0, b1;\n          %s t[4][%d], *cp;\n"
                   "          int full;\n          col = s * %d + h * %d;\n          if (col >= N) continue;\n"
                   "          full = i0 + 4 <= M && col + %d <= N;\n          cp = full ? c + i0 * N + col : t[0];\n          ld = full ? N : %d;\n",
                T, W, f, vb, T, W, nb, W, W, W);
  /* A partial tile (rows past M, columns past N) runs in t, which holds
   * C's valid part of earlier blocks and zeros elsewhere. */
  tr_buf_printf(k, "          if (!full) {\n            memset(t, 0, sizeof t);\n"
                   "            if (k0 > 0)\n              for (r = 0; r < 4 && i0 + r < M; r++)\n"
                   "                for (j = 0; j < %d && col + j < N; j++) t[r][j] = c[(i0 + r) * N + col + j];\n          }\n"
                   "          if (k0 > 0 || !full) {\n"
                   "            memcpy(&c00, cp, sizeof c00); memcpy(&c01, cp + %d, sizeof c01);\n"
                   "            memcpy(&c10, cp + ld, sizeof c10); memcpy(&c11, cp + ld + %d, sizeof c11);\n"
                   "            memcpy(&c20, cp + 2 * ld, sizeof c20); memcpy(&c21, cp + 2 * ld + %d, sizeof c21);\n"
                   "            memcpy(&c30, cp + 3 * ld, sizeof c30); memcpy(&c31, cp + 3 * ld + %d, sizeof c31);\n"
                   "          } else {\n            memset(&c00, 0, sizeof c00);\n            c01 = c10 = c11 = c20 = c21 = c30 = c31 = c00;\n          }\n",
                W, L, L, L, L);
  tr_buf_printf(k, "          for (q = 0; q < kc; q++) {\n"
                   "            memcpy(&b0, bs + q * %d, sizeof b0);\n            memcpy(&b1, bs + q * %d + %d, sizeof b1);\n"
                   "            c00 = c00 + b0 * a0[q]; c01 = c01 + b1 * a0[q];\n"
                   "            c10 = c10 + b0 * a1[q]; c11 = c11 + b1 * a1[q];\n"
                   "            c20 = c20 + b0 * a2[q]; c21 = c21 + b1 * a2[q];\n"
                   "            c30 = c30 + b0 * a3[q]; c31 = c31 + b1 * a3[q];\n          }\n"
                   "          memcpy(cp, &c00, sizeof c00); memcpy(cp + %d, &c01, sizeof c01);\n"
                   "          memcpy(cp + ld, &c10, sizeof c10); memcpy(cp + ld + %d, &c11, sizeof c11);\n"
                   "          memcpy(cp + 2 * ld, &c20, sizeof c20); memcpy(cp + 2 * ld + %d, &c21, sizeof c21);\n"
                   "          memcpy(cp + 3 * ld, &c30, sizeof c30); memcpy(cp + 3 * ld + %d, &c31, sizeof c31);\n"
                   "          if (!full)\n            for (r = 0; r < 4 && i0 + r < M; r++)\n"
                   "              for (j = 0; j < %d && col + j < N; j++) c[(i0 + r) * N + col + j] = t[r][j];\n"
                   "        }\n    }\n  }\n}\n",
                nb, nb, L, L, L, L, L, W);
}

void emit_mm(em *e, bool dbl) {
  if (e->mm_done[dbl]) return;
  e->mm_done[dbl] = true;
  const char *T = dbl ? "double" : "float", *f = dbl ? "d" : "f";
  int nb = dbl ? 16 : 32;
  tr_buf *k = &e->kern;
  /* rows r0..r1 (r0 a multiple of 4) of C, all strips */
  tr_buf_printf(k, "static void tr_mm_%s_c(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K, i64 r0, i64 r1) {\n"
                   "  i64 s, i0, q, ns = (N + %d) / %d;\n  int r, j;\n"
                   "  for (s = 0; s < ns; s++)\n    for (i0 = r0; i0 < r1; i0 += 4) {\n"
                   "      %s acc[4][%d];\n      const %s *bs = pb + s * K * %d, *ar = pa + i0 * K;\n"
                   "      memset(acc, 0, sizeof acc);\n"
                   "      for (q = 0; q < K; q++)\n        for (r = 0; r < 4; r++) {\n"
                   "          const %s x = ar[r * K + q], *bq = bs + q * %d;\n"
                   "          for (j = 0; j < %d; j++) { %s p = x * bq[j]; acc[r][j] = acc[r][j] + p; }\n        }\n"
                   "      for (r = 0; r < 4 && i0 + r < M; r++)\n"
                   "        for (j = 0; j < %d && s * %d + j < N; j++) c[(i0 + r) * N + s * %d + j] = acc[r][j];\n"
                   "    }\n}\n",
                f, T, T, T, nb - 1, nb, T, nb, T, nb, T, nb, nb, T, nb, nb, nb);
  tr_buf_puts(k, "#if defined(__x86_64__) && defined(__GNUC__) && !defined(__TINYC__) && !defined(TR_MM_PORTABLE)\n");
  emit_mm_vec(k, dbl, 32, "avx2");
  emit_mm_vec(k, dbl, 64, "avx512f");
  tr_buf_puts(k, "#define TR_MM_VEC 1\n#endif\n");
  /* One thread: on this project's shared 2-vCPU container, splitting the
   * row groups between two threads (tried: same bits, one thread per
   * output) gained nothing for a dot and made a convolution up to 3x
   * slower in the worker. Row groups are where threads would split on a
   * bigger machine (the kernels take any M). */
  /* ldb: 0, B packed in strips; else B row-major [K, ldb], which the
   * portable path packs here. 1: out of memory. */
  tr_buf_printf(k, "static int tr_mm_%s_ld(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K, i64 ldb) {\n"
                   "  %s *p = NULL;\n  i64 q, j;\n"
                   "#ifdef TR_MM_VEC\n"
                   "  if (__builtin_cpu_supports(\"avx512f\")) { tr_mm_%s_v64(pa, pb, c, M, N, K, ldb); return 0; }\n"
                   "  if (__builtin_cpu_supports(\"avx2\")) { tr_mm_%s_v32(pa, pb, c, M, N, K, ldb); return 0; }\n"
                   "#endif\n"
                   "  if (ldb) {\n    p = calloc((size_t)((N + %d) / %d * K * %d + 1), sizeof(%s));\n    if (!p) return 1;\n"
                   "    for (q = 0; q < K; q++)\n      for (j = 0; j < N; j++) p[((j / %d) * K + q) * %d + j %% %d] = pb[q * ldb + j];\n"
                   "    pb = p;\n  }\n"
                   "  tr_mm_%s_c(pa, pb, c, M, N, K, 0, (M + 3) / 4 * 4);\n  free(p);\n  return 0;\n}\n"
                   "static void tr_mm_%s(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K) {\n"
                   "  (void)tr_mm_%s_ld(pa, pb, c, M, N, K, 0);\n}\n",
                f, T, T, T, T, f, f, nb - 1, nb, nb, T, nb, nb, nb, f, f, T, T, T, f);
}

tr_status k_dot(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *ys = in->operands[1]->shape;
  tr_dtype dt = s->dtype;
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = tr_attr_ints(in, TR_ATTR_LHS_BATCH_DIMS, &nlb);
  const int64_t *lc = tr_attr_ints(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = tr_attr_ints(in, TR_ATTR_RHS_BATCH_DIMS, &nrb);
  const int64_t *rc = tr_attr_ints(in, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  if (in->noperands != 2 || nlb != nrb || nlc != nrc) return em_unsup(e, in, "sparse or malformed dot");
  int64_t xst[64], yst[64], odim[64], ox[64], oy[64], kdim[64], kxs[64], kys[64];
  strides(xs, xst);
  strides(ys, yst);
  int no = 0;
  for (int i = 0; i < nlb; i++, no++) {
    odim[no] = xs->dims[lb[i]];
    ox[no] = xst[lb[i]];
    oy[no] = yst[rb[i]];
  }
  for (int i = 0; i < xs->rank; i++)
    if (!tr_ints_has(lb, nlb, i) && !tr_ints_has(lc, nlc, i)) {
      odim[no] = xs->dims[i];
      ox[no] = xst[i];
      oy[no++] = 0;
    }
  for (int i = 0; i < ys->rank; i++)
    if (!tr_ints_has(rb, nrb, i) && !tr_ints_has(rc, nrc, i)) {
      odim[no] = ys->dims[i];
      ox[no] = 0;
      oy[no++] = yst[i];
    }
  if (no != s->rank) return em_unsup(e, in, "dot dimensions");
  int64_t nk = 1;
  for (int i = 0; i < nlc; i++) {
    kdim[i] = xs->dims[lc[i]];
    kxs[i] = xst[lc[i]];
    kys[i] = yst[rc[i]];
    nk *= kdim[i];
  }
  /* As the reference: operands converted to the result type first; floats
   * up to f32 accumulate in float, f64 in double, ints wrap in 64 bits,
   * pred is an OR of ANDs; products and sums are separate statements.
   * Ints of 32 bits or fewer wrap in uint32_t instead: the result keeps
   * only those low bits, and the low 32 bits of a wrapping sum of
   * products depend only on the low 32 bits of the operands (and 32-bit
   * products vectorize: s32 256^3 10.5 -> 3.3 ms standalone). */
  const char *at = dt == TR_DT_F64 ? "double" : is_flt(dt) ? "float"
                   : dt != TR_DT_PRED && bits_of(dt) <= 32 ? "uint32_t" : "u64";
  const char *tn = tr_dtype_name(dt);
  tr_buf *k = &e->cur;
  int T = e->o->tile;
  em_kern_head(e, 2);
  emit_i64s(k, "odim", odim, no);
  emit_i64s(k, "ox", ox, no);
  emit_i64s(k, "oy", oy, no);
  emit_i64s(k, "kdim", kdim, nlc);
  emit_i64s(k, "kxs", kxs, nlc);
  emit_i64s(k, "kys", kys, nlc);
  int64_t nx = count_of(xs), ny = count_of(ys), nres = count_of(s);
  /* Big float dots take the packed matrix product, which converts the
   * operands while packing them (no cx, cy). */
  bool fast = is_flt(dt) && nres > 0 && nk > 0 && nres * nk >= 32768;
  if (fast) nx = ny = 1;
  tr_buf_printf(k, "  const i64 nx = %lldLL, ny = %lldLL, nr = %lldLL, nk = %lldLL;\n  (void)n;\n"
                   "  %s *cx = malloc(sizeof(%s) * (nx ? nx : 1)), *cy = malloc(sizeof(%s) * (ny ? ny : 1));\n"
                   "  i64 *kx = malloc(sizeof(i64) * (nk ? nk : 1)), *ky = malloc(sizeof(i64) * (nk ? nk : 1));\n"
                   "  i64 j, o0, q;\n  int d;\n"
                   "  if (!cx || !cy || !kx || !ky) { free(cx); free(cy); free(kx); free(ky); return 1; }\n",
                (long long)nx, (long long)ny, (long long)nres, (long long)nk, at, at, at);
  for (int side = 0; side < 2 && !fast; side++) {
    tr_dtype st = (side ? ys : xs)->dtype;
    tr_buf cv = {0}, ld = {0};
    tr_buf_printf(&ld, "LD_%s(a%d, j)", tr_dtype_name(st), side);
    em_convert_value(&cv, st, dt, ld.p, e->o->inject);
    tr_buf_printf(k, "  for (j = 0; j < n%c; j++) c%c[j] = (%s)", side ? 'y' : 'x', side ? 'y' : 'x', at);
    round_to(k, dt, cv.p);
    tr_buf_puts(k, ";\n");
    tr_buf_free(&cv);
    tr_buf_free(&ld);
  }
  tr_buf_printf(k, "  for (q = 0; q < nk; q++) {\n    i64 rem = q;\n    kx[q] = ky[q] = 0;\n"
                   "    for (d = %d; d >= 0; d--) {\n      i64 jj = rem %% kdim[d];\n      rem /= kdim[d];\n"
                   "      kx[q] += jj * kxs[d];\n      ky[q] += jj * kys[d];\n    }\n  }\n", nlc - 1);
  if (fast) {
    /* Big float dots: per batch, A and B packed for tr_mm (emit_mm). The
     * output dims are batch, lhs free, rhs free, so batch b's results are
     * the row-major [M, N] block at b * M * N. */
    bool dbl = dt == TR_DT_F64;
    int nb = dbl ? 16 : 32, nlf = xs->rank - nlb - nlc;
    int64_t nbat = 1, M = 1, N = 1;
    for (int i = 0; i < no; i++) {
      if (i < nlb) nbat *= odim[i];
      else if (i < nlb + nlf) M *= odim[i];
      else N *= odim[i];
    }
    /* An f32 (f64) lhs already laid out as row-major [M, K] per batch is
     * the packed A: tr_mm reads it in place and only the last M % 4 rows
     * are copied, zero-padded to 4. In the forked worker every fresh page
     * costs a fault, and the copy's pages were a third of a 256^3 dot. */
    bool adirect = (dt == TR_DT_F32 || dt == TR_DT_F64) && xs->dtype == dt && nlf == 1 && nlc == 1 &&
                   kxs[0] == 1 && ox[nlb] == nk;
    /* Likewise an rhs laid out as row-major [K, N]: tr_mm packs it block
     * by block into a small buffer of its own (ldb = N). */
    bool bdirect = (dt == TR_DT_F32 || dt == TR_DT_F64) && ys->dtype == dt && no - nlb - nlf == 1 &&
                   nlc == 1 && oy[no - 1] == 1 && kys[0] == N;
    emit_mm(e, dbl);
    tr_buf_printf(k, "  {\n    const i64 NBAT = %lldLL, M = %lldLL, N = %lldLL, Mp = %s, ns = (N + %d) / %d;\n"
                     "    i64 *ob = malloc(sizeof(i64) * 2 * NBAT), *om = malloc(sizeof(i64) * M), *on = malloc(sizeof(i64) * N), b, i, j0;\n"
                     "    %s *pa = calloc((size_t)(Mp * nk), sizeof(%s)), *pb = calloc((size_t)(%s * %d), sizeof(%s)),"
                     " *pc = malloc(sizeof(%s) * %s);\n"
                     "    int rc = !ob || !om || !on || !pa || !pb || !pc;\n",
                  (long long)nbat, (long long)M, (long long)N, adirect ? "4" : "(M + 3) / 4 * 4", nb - 1, nb, at, at, bdirect ? "1" : "ns * nk", nb, at, at,
                  dt == TR_DT_F32 || dt == TR_DT_F64 ? "1" : "M * N");
    /* Offsets of each batch, lhs-free and rhs-free index (row-major over
     * their output dims). */
    tr_buf_printf(k, "    for (i = 0; !rc && i < NBAT; i++) {\n      i64 rem = i;\n      ob[2 * i] = ob[2 * i + 1] = 0;\n"
                     "      for (d = %d; d >= 0; d--) { i64 jj = rem %% odim[d]; rem /= odim[d]; ob[2 * i] += jj * ox[d]; ob[2 * i + 1] += jj * oy[d]; }\n    }\n"
                     "    for (i = 0; !rc && i < M; i++) {\n      i64 rem = i;\n      om[i] = 0;\n"
                     "      for (d = %d; d >= %d; d--) { om[i] += (rem %% odim[d]) * ox[d]; rem /= odim[d]; }\n    }\n"
                     "    for (i = 0; !rc && i < N; i++) {\n      i64 rem = i;\n      on[i] = 0;\n"
                     "      for (d = %d; d >= %d; d--) { on[i] += (rem %% odim[d]) * oy[d]; rem /= odim[d]; }\n    }\n",
                  nlb - 1, nlb + nlf - 1, nlb, no - 1, nlb + nlf);
    /* Each operand element converted to the result type as it is packed;
     * f32 and f64 results are written in place. */
    bool direct = dt == TR_DT_F32 || dt == TR_DT_F64;
    tr_buf cv[2] = {{0}}, ld = {0};
    /* With one contracting and one free dim per side (the common case) the
     * offset tables are i * stride: written so, the packing loops read
     * with constant strides, which cc vectorizes, instead of gathering
     * through om/on/kx/ky (most of a 256^3 dot's time went there). */
    char xi[48], xk[48], yj[48], yk[48];
    if (nlf == 1) snprintf(xi, sizeof xi, "i * %lldLL", (long long)ox[nlb]);
    else snprintf(xi, sizeof xi, "om[i]");
    if (no - nlb - nlf == 1) snprintf(yj, sizeof yj, "j * %lldLL", (long long)oy[no - 1]);
    else snprintf(yj, sizeof yj, "on[j]");
    if (nlc == 1) {
      snprintf(xk, sizeof xk, "q * %lldLL", (long long)kxs[0]);
      snprintf(yk, sizeof yk, "q * %lldLL", (long long)kys[0]);
    } else {
      snprintf(xk, sizeof xk, "kx[q]");
      snprintf(yk, sizeof yk, "ky[q]");
    }
    for (int side = 0; side < 2; side++) {
      tr_dtype st = (side ? ys : xs)->dtype;
      if (side) tr_buf_printf(&ld, "LD_%s(a1, ob[2 * b + 1] + %s + %s)", tr_dtype_name(st), yj, yk);
      else tr_buf_printf(&ld, "LD_%s(a0, ob[2 * b] + %s + %s)", tr_dtype_name(st), xi, xk);
      tr_buf x = {0};
      em_convert_value(&x, st, dt, ld.p, e->o->inject);
      tr_buf_printf(&cv[side], "(%s)", at);
      round_to(&cv[side], dt, x.p);
      tr_buf_free(&x);
      tr_buf_free(&ld);
    }
    tr_buf_printf(k, "    for (b = 0; !rc && b < NBAT; b++) {\n"
                     "      for (i = %s; i < M; i++)\n        for (q = 0; q < nk; q++) pa[(i - %s) * nk + q] = %s;\n",
                  adirect ? "M / 4 * 4" : "0", adirect ? "M / 4 * 4" : "0", cv[0].p);
    if (!bdirect)
      tr_buf_printf(k, "      for (j0 = 0; j0 < N; j0 += %d)\n        for (q = 0; q < nk; q++) {\n"
                       "          %s *bq = pb + ((j0 / %d) * nk + q) * %d;\n"
                       "          for (j = j0; j < j0 + %d && j < N; j++) bq[j - j0] = %s;\n        }\n",
                    nb, at, nb, nb, nb, cv[1].p);
    const char *mf = bdirect ? (dbl ? "d_ld" : "f_ld") : dbl ? "d" : "f", *rcs = bdirect ? "rc |= " : "";
    char bsrc[96];
    if (bdirect) snprintf(bsrc, sizeof bsrc, "(const %s *)(const void *)a1 + ob[2 * b + 1], (%s *)(void *)r", at, at);
    else snprintf(bsrc, sizeof bsrc, "pb, (%s *)(void *)r", at);
    const char *ldb = bdirect ? ", N" : "";
    if (adirect)
      tr_buf_printf(k, "      if (M >= 4) %str_mm_%s((const %s *)(const void *)a0 + ob[2 * b], %s + b * M * N, M / 4 * 4, N, nk%s);\n"
                       "      if (M %% 4) %str_mm_%s(pa, %s + (b * M + M / 4 * 4) * N, M %% 4, N, nk%s);\n    }\n",
                    rcs, mf, at, bsrc, ldb, rcs, mf, bsrc, ldb);
    else if (direct)
      tr_buf_printf(k, "      %str_mm_%s(pa, %s + b * M * N, M, N, nk%s);\n    }\n", rcs, mf, bsrc, ldb);
    else
      tr_buf_printf(k, "      tr_mm_%s(pa, pb, pc, M, N, nk);\n"
                       "      for (i = 0; i < M * N; i++) ST_%s(r, b * M * N + i, pc[i]);\n    }\n",
                    dbl ? "d" : "f", tn);
    tr_buf_printf(k, "    free(ob);\n    free(om);\n    free(on);\n    free(pa);\n    free(pb);\n    free(pc);\n"
                     "    free(cx);\n    free(cy);\n    free(kx);\n    free(ky);\n    (void)o0;\n    return rc;\n  }\n}\n");
    tr_buf_free(&cv[0]);
    tr_buf_free(&cv[1]);
    return TR_OK;
  }
  tr_buf_printf(k, "  for (o0 = 0; o0 < nr; o0 += %d) {\n"
                   "    i64 nt = nr - o0 < %d ? nr - o0 : %d, xb[%d], yb[%d], t;\n    %s acc[%d];\n"
                   "    for (t = 0; t < nt; t++) {\n      i64 rem = o0 + t;\n      xb[t] = yb[t] = 0;\n"
                   "      for (d = %d; d >= 0; d--) {\n        i64 jj = rem %% odim[d];\n        rem /= odim[d];\n"
                   "        xb[t] += jj * ox[d];\n        yb[t] += jj * oy[d];\n      }\n      acc[t] = 0;\n    }\n",
                T, T, T, T, T, at, T, no - 1);
  /* The contraction runs in blocks of `tile` (k0..k1); each output still
   * sums its products in increasing q. */
  tr_buf_printf(k, "    i64 k0, k1;\n    int uni = 1;\n    for (t = 1; t < nt; t++) uni &= xb[t] == xb[0] && yb[t] == yb[0] + t;\n"
                   "    for (k0 = 0; k0 < nk; k0 = k1) {\n      k1 = k0 + %d < nk ? k0 + %d : nk;\n", T, T);
  if (TR_INJECTED(e->o->inject, EMIT_DOT_K_BLOCK_REVISIT))
    /* defect: a short last block stepped back to a full one, as an
     * elementwise tail may be; its overlap is accumulated twice */
    tr_buf_printf(k, "      if (k1 - k0 < %d && k0 > 0) k0 = k1 - %d;\n", T, T);
  if (dt != TR_DT_PRED) {
    /* The common tile: one lhs row against consecutive rhs columns. The
     * lhs element is then shared and the rhs run contiguous, so cc can
     * vectorize across the tile. */
    tr_buf_printf(k, "      if (uni) {\n        for (q = k0; q < k1; q++) {\n"
                     "          const %s xv = cx[xb[0] + kx[q]], *yp = cy + yb[0] + ky[q];\n"
                     "          for (t = 0; t < nt; t++) {\n            %s p = xv * yp[t];\n            acc[t] = acc[t] + p;\n"
                     "          }\n        }\n      } else\n", at, at);
  } else {
    tr_buf_puts(k, "      (void)uni;\n");
  }
  tr_buf_puts(k, "      for (q = k0; q < k1; q++)\n        for (t = 0; t < nt; t++) {\n");
  if (dt == TR_DT_PRED)
    tr_buf_puts(k, "          acc[t] |= cx[xb[t] + kx[q]] & cy[yb[t] + ky[q]];\n");
  else
    tr_buf_printf(k, "          %s p = cx[xb[t] + kx[q]] * cy[yb[t] + ky[q]];\n          acc[t] = acc[t] + p;\n", at);
  tr_buf_printf(k, "        }\n    }\n    for (t = 0; t < nt; t++) ST_%s(r, o0 + t, acc[t]);\n  }\n"
                   "  free(cx);\n  free(cy);\n  free(kx);\n  free(ky);\n  return 0;\n}\n", tn);
  return TR_OK;
}
