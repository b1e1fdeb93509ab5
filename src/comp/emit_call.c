/* emit_call.c - kernels of ops that call a scalar computation per
 * element: general reduce and reduce-window, map, scatter, sort, topk,
 * select-and-scatter (docs/EMITTER.md). */
#include "emitint.h"

/* ---- ops that call a scalar computation per element ---- */

/* Whether to_apply c takes 2*nin scalars (accumulators of types acc[],
 * then elements of types el[]) and returns nin scalars of types acc[]. */
static bool scalar_sig(const tr_comp *c, int nin, const tr_dtype *acc, const tr_dtype *el) {
  if (!c || !c->root || c->nparams != 2 * nin) return false;
  for (int i = 0; i < 2 * nin; i++) {
    const tr_shape *ps = c->params[i] ? c->params[i]->shape : NULL;
    if (!ps || !tr_shape_is_array(ps) || ps->rank != 0 || ps->dtype != (i < nin ? acc[i] : el[i - nin]))
      return false;
  }
  const tr_shape *rs = c->root->shape;
  if (nin == 1) return tr_shape_is_array(rs) && rs->rank == 0 && rs->dtype == acc[0];
  if (rs->dtype != TR_DT_TUPLE || rs->nelems != nin) return false;
  for (int i = 0; i < nin; i++)
    if (!tr_shape_is_array(rs->elems[i]) || rs->elems[i]->rank != 0 || rs->elems[i]->dtype != acc[i])
      return false;
  return true;
}

tr_status k_reduce(em *e, const tr_instr *in) { return k_reduce_in(e, in, NULL); }

/* Any reduce: per output, to_apply called on (accumulators, elements)
 * for each reduced element in increasing row-major order (eval.c's
 * general path). Results go to rs[0..nin). */
tr_status k_reduce_generic(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nin = in->noperands / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin) return em_unsup(e, in, "operands");
  tr_dtype acc[16], el[16];
  const tr_shape *xs = in->operands[0]->shape;
  for (int i = 0; i < nin; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    acc[i] = os->dtype;
    el[i] = in->operands[i]->shape->dtype;
    if (in->operands[nin + i]->shape->dtype != acc[i] || !tr_shape_same_dims(in->operands[i]->shape, xs))
      return em_unsup(e, in, "init of another type");
  }
  if (!scalar_sig(ap, nin, acc, el)) return em_unsup(e, in, "to_apply signature");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  em_rsplit sp;
  em_reduce_split(in, xs, &sp);
  int nk = sp.nk, nr = sp.nr;
  int64_t nout = sp.nout, nred = sp.nred;
  tr_buf *k = &e->cur;
  /* An array result is passed as one pointer, a tuple as an array. */
  bool arr = tr_shape_is_array(in->shape);
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\nstatic int kK(%s", ap->id, arr ? "u8 *r" : "u8 **rs");
  for (int i = 0; i < 2 * nin; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
  if (arr) tr_buf_puts(k, "  u8 *rs[1] = {r};\n");
  emit_i64s(k, "kd", sp.kd, nk);
  emit_i64s(k, "ks", sp.ks, nk);
  emit_i64s(k, "rd", sp.rd, nr);
  emit_i64s(k, "rsd", sp.rs, nr);
  tr_buf_printf(k, "  u8 acc[%d][8], xe[%d][8], res[%d][8];\n  u8 *args[%d] = {", nin, nin, nin, 2 * nin);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "%sacc[%d]", i ? ", " : "", i);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, ", xe[%d]", i);
  tr_buf_printf(k, "};\n  u8 *outs[%d] = {", nin);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "%sres[%d]", i ? ", " : "", i);
  tr_buf_printf(k, "};\n  i64 o, q, ridx[%d], roff, ko;\n  int d, rc;\n", nr > 0 ? nr : 1);
  tr_buf_printf(k, "  for (o = 0; o < %lldLL; o++) {\n    i64 rem = o;\n    ko = 0;\n"
                   "    for (d = %d; d >= 0; d--) { ko += (rem %% kd[d]) * ks[d]; rem /= kd[d]; }\n",
                (long long)nout, nk - 1);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "    memcpy(acc[%d], a%d, %d);\n", i, nin + i, es_of(acc[i]));
  tr_buf_printf(k, "    for (d = 0; d < %d; d++) ridx[d] = 0;\n    roff = 0;\n"
                   "    for (q = 0; q < %lldLL; q++) {\n", nr, (long long)nred);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "      memcpy(xe[%d], a%d + (ko + roff) * %d, %d);\n", i, i, es_of(el[i]), es_of(el[i]));
  tr_buf_printf(k, "      if ((rc = comp%d(args, outs)) != 0) return rc;\n", ap->id);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "      memcpy(acc[%d], res[%d], %d);\n", i, i, es_of(acc[i]));
  tr_buf_printf(k, "      for (d = %d; d >= 0; d--) {\n        ridx[d]++;\n        roff += rsd[d];\n"
                   "        if (ridx[d] < rd[d]) break;\n        roff -= rsd[d] * rd[d];\n        ridx[d] = 0;\n      }\n    }\n",
                nr - 1);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "    memcpy(rs[%d] + o * %d, acc[%d], %d);\n", i, es_of(acc[i]), i, es_of(acc[i]));
  tr_buf_puts(k, "  }\n  return 0;\n}\n");
  return TR_OK;
}

/* map: to_apply called on the operands' elements, one output element at
 * a time (eval.c eval_map; its one-op fast path computes the same). */
tr_status k_map(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nop = in->noperands;
  if (!ap || !ap->root || nop < 1 || nop > 64 || ap->nparams != nop) return em_unsup(e, in, "to_apply");
  for (int i = 0; i < nop; i++) {
    const tr_shape *ps = ap->params[i] ? ap->params[i]->shape : NULL;
    if (!ps || !tr_shape_is_array(ps) || ps->rank || ps->dtype != in->operands[i]->shape->dtype)
      return em_unsup(e, in, "to_apply signature");
  }
  const tr_shape *rs = ap->root->shape;
  if (!tr_shape_is_array(rs) || rs->rank || rs->dtype != in->shape->dtype) return em_unsup(e, in, "to_apply result");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\n", ap->id);
  em_kern_head(e, nop);
  tr_buf_printf(k, "  u8 *args[%d], *res[1];\n  i64 i;\n  int rc;\n  for (i = 0; i < n; i++) {\n", nop);
  for (int i = 0; i < nop; i++)
    tr_buf_printf(k, "    args[%d] = (u8 *)a%d + i * %d;\n", i, i, es_of(in->operands[i]->shape->dtype));
  tr_buf_printf(k, "    res[0] = r + i * %d;\n    if ((rc = comp%d(args, res)) != 0) return rc;\n  }\n  return 0;\n}\n",
                es_of(in->shape->dtype), ap->id);
  return TR_OK;
}

/* scatter, variadic included: to_apply called per update element through
 * a small apply function handed to the prelude's tr_scatter. */
tr_status k_scatter(em *e, const tr_instr *in) {
  int nin = (in->noperands - 1) / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin + 1) return em_unsup(e, in, "operands");
  const tr_shape *xs = in->operands[0]->shape, *is = in->operands[nin]->shape, *us = in->operands[nin + 1]->shape;
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  tr_dtype acc[16], el[16];
  for (int i = 0; i < nin; i++) {
    acc[i] = in->operands[i]->shape->dtype;
    el[i] = in->operands[nin + 1 + i]->shape->dtype;
  }
  if (!scalar_sig(ap, nin, acc, el)) return em_unsup(e, in, "to_apply signature");
  int nuw, niw, nsd, nib, nsb;
  const int64_t *uw = tr_attr_ints(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nuw);
  const int64_t *iw = tr_attr_ints(in, TR_ATTR_INSERTED_WINDOW_DIMS, &niw);
  const int64_t *sd = tr_attr_ints(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nsd);
  const int64_t *ib = tr_attr_ints(in, TR_ATTR_INPUT_BATCHING_DIMS, &nib);
  const int64_t *sb = tr_attr_ints(in, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, &nsb);
  const tr_attr *iv = tr_instr_attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t ivd = iv ? iv->u.i : 0;
  if (nib != nsb || xs->rank > 60 || is->rank > 60 || us->rank > 60) return em_unsup(e, in, "attributes");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  tr_buf *k = &e->cur;
  /* ctx: the results, then the updates. */
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\n"
                   "static int eK(void *ctx, i64 xo, i64 uo) {\n  u8 **c = ctx;\n"
                   "  u8 res[%d][8], *outs[%d], *args[%d];\n  int rc;\n", ap->id, nin, nin, 2 * nin);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "  outs[%d] = res[%d];\n  args[%d] = c[%d] + xo * %d;\n  args[%d] = c[%d] + uo * %d;\n", i, i, i,
                  i, es_of(acc[i]), nin + i, nin + i, es_of(el[i]));
  tr_buf_printf(k, "  if ((rc = comp%d(args, outs)) != 0) return rc;\n", ap->id);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "  memcpy(args[%d], res[%d], %d);\n", i, i, es_of(acc[i]));
  tr_buf_puts(k, "  return 0;\n}\n");
  bool arr = tr_shape_is_array(in->shape);
  tr_buf_printf(k, "static int kK(%s", arr ? "u8 *r" : "u8 **rs");
  for (int i = 0; i < in->noperands; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
  if (arr) tr_buf_puts(k, "  u8 *rs[1] = {r};\n");
  emit_i64s(k, "xd", xs->dims, xs->rank);
  emit_i64s(k, "id", is->dims, is->rank);
  emit_i64s(k, "ud", us->dims, us->rank);
  emit_i64s(k, "uw", uw, nuw);
  emit_i64s(k, "iw", iw, niw);
  emit_i64s(k, "sdm", sd, nsd);
  emit_i64s(k, "ib", ib, nib);
  emit_i64s(k, "sb", sb, nsb);
  tr_buf_printf(k, "  u8 *ctx[%d];\n", 2 * nin);
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "  memcpy(rs[%d], a%d, %lld);\n  ctx[%d] = rs[%d];\n  ctx[%d] = (u8 *)a%d;\n", i, i,
                  (long long)(count_of(in->operands[i]->shape) * es_of(acc[i])), i, i, nin + i, nin + 1 + i);
  int64_t ni = count_of(is);
  tr_buf_printf(k, "  i64 *vals = malloc(sizeof(i64) * %lld), j;\n  int rc;\n  if (!vals) return 1;\n"
                   "  for (j = 0; j < %lldLL; j++) vals[j] = (i64)%s_%s(a%d, j);\n",
                (long long)(ni > 0 ? ni : 1), (long long)ni, ld_of(e, is->dtype), tr_dtype_name(is->dtype), nin);
  tr_buf_printf(k, "  rc = tr_scatter(ctx, vals, %d, xd, %d, id, %d, ud, uw, %d, iw, %d, sdm, %d, ib, sb, %d, %lldLL, eK);\n"
                   "  free(vals);\n  return rc;\n}\n",
                xs->rank, is->rank, us->rank, nuw, niw, nsd, nib, (long long)ivd);
  return TR_OK;
}

/* sort: per 1-D slice along the dimension, the reference's merge sort
 * with the comparator called through a small less function. */
tr_status k_sort(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  int nop = in->noperands;
  if (!ap || !ap->root || !da || da->n != 1 || nop < 1 || nop > 32 || ap->nparams != 2 * nop)
    return em_unsup(e, in, "comparator or dimensions");
  const tr_shape *xs = in->operands[0]->shape;
  int dim = (int)da->u.ints[0];
  if (dim < 0 || dim >= xs->rank) return em_unsup(e, in, "dimension");
  for (int i = 0; i < 2 * nop; i++) {
    const tr_shape *ps = ap->params[i] ? ap->params[i]->shape : NULL;
    if (!ps || !tr_shape_is_array(ps) || ps->rank || ps->dtype != in->operands[i / 2]->shape->dtype)
      return em_unsup(e, in, "comparator signature");
  }
  const tr_shape *rs = ap->root->shape;
  if (!tr_shape_is_array(rs) || rs->rank || rs->dtype != TR_DT_PRED) return em_unsup(e, in, "comparator result");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  int64_t xst[64];
  strides(xs, xst);
  int64_t len = xs->dims[dim], total = count_of(xs), nslices = len ? total / len : 0;
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\n"
                   "static int eK(tr_sortctx *c, i64 i, i64 j) {\n"
                   "  u8 pv = 0, *outs[1] = {&pv};\n  u8 *args[%d] = {", ap->id, 2 * nop);
  for (int q = 0; q < nop; q++) {
    int es = es_of(in->operands[q]->shape->dtype);
    tr_buf_printf(k, "%s(u8 *)c->xs[%d] + c->off[i] * %d, (u8 *)c->xs[%d] + c->off[j] * %d", q ? ", " : "", q,
                  es, q, es);
  }
  tr_buf_printf(k, "};\n  if (c->rc) return 0;\n  if ((c->rc = comp%d(args, outs)) != 0) return 0;\n"
                   "  return pv != 0;\n}\n", ap->id);
  bool arr = tr_shape_is_array(in->shape);
  tr_buf_printf(k, "static int kK(%s", arr ? "u8 *r" : "u8 **rs");
  for (int i = 0; i < nop; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
  if (arr) tr_buf_puts(k, "  u8 *rs[1] = {r};\n");
  emit_i64s(k, "xd", xs->dims, xs->rank);
  emit_i64s(k, "xst", xst, xs->rank);
  tr_buf_printf(k, "  const u8 *xs[%d] = {", nop);
  for (int i = 0; i < nop; i++) tr_buf_printf(k, "%sa%d", i ? ", " : "", i);
  tr_buf_printf(k, "};\n  i64 *off = malloc(sizeof(i64) * %lld), *perm = malloc(sizeof(i64) * %lld),"
                   " *tmp = malloc(sizeof(i64) * %lld), q, j;\n  int d;\n  tr_sortctx c;\n",
                (long long)(len ? len : 1), (long long)(len ? len : 1), (long long)(len ? len : 1));
  tr_buf_puts(k, "  c.xs = xs;\n  c.off = off;\n  c.rc = 0;\n"
                 "  if (!off || !perm || !tmp) { free(off); free(perm); free(tmp); return 1; }\n");
  tr_buf_printf(k, "  for (q = 0; q < %lldLL && !c.rc; q++) {\n    i64 base = 0, rem = q;\n"
                   "    for (d = %d; d >= 0; d--) {\n      if (d == %d) continue;\n"
                   "      base += (rem %% xd[d]) * xst[d];\n      rem /= xd[d];\n    }\n"
                   "    for (j = 0; j < %lldLL; j++) { off[j] = base + j * %lldLL; perm[j] = j; }\n"
                   "    tr_msort(&c, perm, tmp, %lldLL, eK);\n",
                (long long)nslices, xs->rank - 1, dim, (long long)len, (long long)xst[dim], (long long)len);
  for (int i = 0; i < nop; i++) {
    int es = es_of(in->operands[i]->shape->dtype);
    tr_buf_printf(k, "    for (j = 0; j < %lldLL; j++) memcpy(rs[%d] + off[j] * %d, a%d + off[perm[j]] * %d, %d);\n",
                  (long long)len, i, es, i, es, es);
  }
  tr_buf_puts(k, "  }\n  free(off);\n  free(perm);\n  free(tmp);\n  return c.rc;\n}\n");
  return TR_OK;
}

/* topk (eval_sort.c): the stable merge sort of each last-dim row by total
 * order (descending when largest), values and s32 positions of the first
 * k. */
tr_status k_topk(em *e, const tr_instr *in) {
  const tr_attr *ka = tr_instr_attr(in, TR_ATTR_K), *la = tr_instr_attr(in, TR_ATTR_LARGEST);
  const tr_shape *xs = in->operands[0]->shape;
  int64_t kk = ka ? ka->u.i : 0;
  int r = xs->rank;
  if (r < 1 || kk < 0 || kk > xs->dims[r - 1] || in->shape->dtype != TR_DT_TUPLE) return em_unsup(e, in, "k");
  bool largest = !la || la->u.b;
  tr_dtype dt = xs->dtype;
  int64_t len = xs->dims[r - 1], rows = len ? count_of(xs) / len : 0;
  tr_buf *k = &e->cur;
  tr_buf_puts(k, "static int eK(tr_sortctx *c, i64 i, i64 j) {\n");
  if (is_flt(dt))
    tr_buf_printf(k, "  i64 a = tr_tkey(raw_get(c->xs[0], %d, c->off[i]), %d), b = tr_tkey(raw_get(c->xs[0], %d, c->off[j]), %d);\n",
                  es_of(dt), bits_of(dt), es_of(dt), bits_of(dt));
  else if (is_sg(dt))
    tr_buf_printf(k, "  i64 a = (i64)%s_%s(c->xs[0], c->off[i]), b = (i64)%s_%s(c->xs[0], c->off[j]);\n",
                  ld_of(e, dt), tr_dtype_name(dt), ld_of(e, dt), tr_dtype_name(dt));
  else
    tr_buf_printf(k, "  u64 a = %s_%s(c->xs[0], c->off[i]), b = %s_%s(c->xs[0], c->off[j]);\n",
                  ld_of(e, dt), tr_dtype_name(dt), ld_of(e, dt), tr_dtype_name(dt));
  tr_buf_printf(k, "  return a %s b;\n}\n", largest ? ">" : "<");
  tr_buf_puts(k, "static int kK(u8 **rs, const u8 *a0, i64 n) {\n  const u8 *xs[1] = {a0};\n");
  int es = es_of(dt);
  tr_buf_printf(k, "  i64 *off = malloc(sizeof(i64) * %lld), *perm = malloc(sizeof(i64) * %lld),"
                   " *tmp = malloc(sizeof(i64) * %lld), q, j;\n  tr_sortctx c;\n"
                   "  c.xs = xs;\n  c.off = off;\n  c.rc = 0;\n"
                   "  if (!off || !perm || !tmp) { free(off); free(perm); free(tmp); return 1; }\n",
                (long long)(len ? len : 1), (long long)(len ? len : 1), (long long)(len ? len : 1));
  tr_buf_printf(k, "  for (q = 0; q < %lldLL; q++) {\n"
                   "    for (j = 0; j < %lldLL; j++) { off[j] = q * %lldLL + j; perm[j] = j; }\n"
                   "    tr_msort(&c, perm, tmp, %lldLL, eK);\n"
                   "    for (j = 0; j < %lldLL; j++) {\n"
                   "      memcpy(rs[0] + (q * %lldLL + j) * %d, a0 + off[perm[j]] * %d, %d);\n"
                   "      ST_s32(rs[1], q * %lldLL + j, (u64)perm[j]);\n    }\n  }\n"
                   "  free(off);\n  free(perm);\n  free(tmp);\n  return 0;\n}\n",
                (long long)rows, (long long)len, (long long)len, (long long)len, (long long)kk, (long long)kk,
                es, es, es, (long long)kk);
  return TR_OK;
}

/* reduce-window with any to_apply, variadic included: per output, the
 * window in row-major order, to_apply called on (accumulators, elements)
 * for each position inside the input (eval_window.c's general path). */
tr_status k_reduce_window_generic(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nin = in->noperands / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin) return em_unsup(e, in, "operands");
  const tr_shape *xs = in->operands[0]->shape;
  const tr_shape *os0 = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[0] : in->shape;
  tr_dtype acc[16], el[16];
  for (int i = 0; i < nin; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    acc[i] = os->dtype;
    el[i] = in->operands[i]->shape->dtype;
    if (in->operands[nin + i]->shape->dtype != acc[i]) return em_unsup(e, in, "init of another type");
  }
  if (!scalar_sig(ap, nin, acc, el)) return em_unsup(e, in, "to_apply signature");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return em_unsup(e, in, "window");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
  bool empty = em_window_arrays(wa, rank, wsize, stride, padlo, ld, rd);
  tr_buf *k = &e->cur;
  bool arr = tr_shape_is_array(in->shape);
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\nstatic int kK(%s", ap->id, arr ? "u8 *r" : "u8 **rs");
  for (int i = 0; i < 2 * nin; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
  if (arr) tr_buf_puts(k, "  u8 *rs[1] = {r};\n");
  emit_i64s(k, "rdims", os0->dims, rank);
  emit_i64s(k, "xdims", xs->dims, rank);
  emit_i64s(k, "xst", xst, rank);
  emit_i64s(k, "wsize", wsize, rank);
  emit_i64s(k, "wstride", stride, rank);
  emit_i64s(k, "padlo", padlo, rank);
  emit_i64s(k, "ldil", ld, rank);
  emit_i64s(k, "rdil", rd, rank);
  tr_buf_printf(k, "  u8 acc[%d][8], xe[%d][8], res[%d][8];\n  u8 *args[%d] = {", nin, nin, nin, 2 * nin);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "%sacc[%d]", i ? ", " : "", i);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, ", xe[%d]", i);
  tr_buf_printf(k, "};\n  u8 *outs[%d] = {", nin);
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "%sres[%d]", i ? ", " : "", i);
  tr_buf_printf(k, "};\n  i64 o[%d] = {0}, w[%d], q, nout = %lldLL;\n  int d, rc;\n", rank, rank,
                (long long)count_of(os0));
  tr_buf_puts(k, "  for (q = 0; q < nout; q++) {\n");
  for (int i = 0; i < nin; i++) tr_buf_printf(k, "    memcpy(acc[%d], a%d, %d);\n", i, nin + i, es_of(acc[i]));
  if (!empty) {
    tr_buf_printf(k, "    for (d = 0; d < %d; d++) w[d] = 0;\n    for (;;) {\n      i64 off = 0;\n      int ok = 1;\n"
                     "      for (d = 0; d < %d && ok; d++) {\n"
                     "        i64 p = o[d] * wstride[d] + w[d] * rdil[d] - padlo[d];\n"
                     "        if (p < 0) { ok = 0; break; }\n"
                     "        if (ldil[d] > 1) { if (p %% ldil[d]) { ok = 0; break; } p /= ldil[d]; }\n"
                     "        if (p >= xdims[d]) { ok = 0; break; }\n"
                     "        off += p * xst[d];\n      }\n      if (ok) {\n", rank, rank);
    for (int i = 0; i < nin; i++)
      tr_buf_printf(k, "        memcpy(xe[%d], a%d + off * %d, %d);\n", i, i, es_of(el[i]), es_of(el[i]));
    tr_buf_printf(k, "        if ((rc = comp%d(args, outs)) != 0) return rc;\n", ap->id);
    for (int i = 0; i < nin; i++) tr_buf_printf(k, "        memcpy(acc[%d], res[%d], %d);\n", i, i, es_of(acc[i]));
    tr_buf_printf(k, "      }\n      for (d = %d; d >= 0; d--) { if (++w[d] < wsize[d]) break; w[d] = 0; }\n"
                     "      if (d < 0) break;\n    }\n", rank - 1);
  }
  for (int i = 0; i < nin; i++)
    tr_buf_printf(k, "    memcpy(rs[%d] + q * %d, acc[%d], %d);\n", i, es_of(acc[i]), i, es_of(acc[i]));
  tr_buf_printf(k, "    for (d = %d; d >= 0; d--) { if (++o[d] < rdims[d]) break; o[d] = 0; }\n  }\n  return 0;\n}\n",
                rank - 1);
  return TR_OK;
}

/* A reduce-window the tiled one-op kernel handles. */
bool em_simple_reduce_window(const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2 || !tr_shape_is_array(in->shape)) return false;
  tr_dtype dt = in->operands[0]->shape->dtype;
  return em_simple_binary(ap, dt) && in->shape->dtype == dt && in->operands[1]->shape->dtype == dt;
}

/* select-and-scatter (eval_window.c): per source element, the first valid
 * window position is the choice and a later one replaces it when
 * select(choice, x) is false; then out[choice] = scatter(source,
 * out[choice]), the reference's argument order. */
tr_status k_select_and_scatter(em *e, const tr_instr *in) {
  const tr_attr *sa = tr_instr_attr(in, TR_ATTR_SELECT), *ca = tr_instr_attr(in, TR_ATTR_SCATTER);
  const tr_comp *sel = sa && sa->kind == TR_AK_COMP ? sa->u.comp : NULL;
  const tr_comp *sc = ca && ca->kind == TR_AK_COMP ? ca->u.comp : NULL;
  const tr_shape *xs = in->operands[0]->shape, *ss = in->operands[1]->shape, *s = in->shape;
  tr_dtype dt = s->dtype;
  if (!sel || !sc || !sel->root || !sc->root || sel->nparams != 2 || sc->nparams != 2 ||
      in->operands[2]->shape->dtype != dt)
    return em_unsup(e, in, "select, scatter or init");
  for (int i = 0; i < 2; i++) {
    const tr_shape *p0 = sel->params[i] ? sel->params[i]->shape : NULL;
    const tr_shape *p1 = sc->params[i] ? sc->params[i]->shape : NULL;
    if (!p0 || !p1 || !tr_shape_is_array(p0) || !tr_shape_is_array(p1) || p0->rank || p1->rank ||
        p0->dtype != xs->dtype || p1->dtype != (i == 0 ? ss->dtype : dt))
      return em_unsup(e, in, "select or scatter signature");
  }
  if (!tr_shape_is_array(sel->root->shape) || sel->root->shape->rank || sel->root->shape->dtype != TR_DT_PRED ||
      !tr_shape_is_array(sc->root->shape) || sc->root->shape->rank || sc->root->shape->dtype != dt)
    return em_unsup(e, in, "select or scatter result");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return em_unsup(e, in, "window");
  tr_status st = emit_comp(e, sel);
  if (st == TR_OK) st = emit_comp(e, sc);
  if (st != TR_OK) return st;
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
  bool empty = em_window_arrays(wa, rank, wsize, stride, padlo, ld, rd);
  int es = es_of(dt), xes = es_of(xs->dtype), ses = es_of(ss->dtype);
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\nstatic int comp%d(u8 **p, u8 **r);\n", sel->id, sc->id);
  em_kern_head(e, 3);
  emit_i64s(k, "sdims", ss->dims, ss->rank);
  emit_i64s(k, "xdims", xs->dims, rank);
  emit_i64s(k, "xst", xst, rank);
  emit_i64s(k, "wsize", wsize, rank);
  emit_i64s(k, "wstride", stride, rank);
  emit_i64s(k, "padlo", padlo, rank);
  emit_i64s(k, "ldil", ld, rank);
  emit_i64s(k, "rdil", rd, rank);
  tr_buf_printf(k, "  u8 pv = 0, *po[1] = {&pv}, res[8], *ro[1] = {res}, *args[2];\n"
                   "  i64 o[%d] = {0}, w[%d], q, best, j;\n  int d, rc;\n"
                   "  for (j = 0; j < n; j++) memcpy(r + j * %d, a2, %d);\n"
                   "  for (q = 0; q < %lldLL; q++) {\n    best = -1;\n",
                rank, rank, es, es, (long long)count_of(ss));
  if (!empty) {
    tr_buf_printf(k, "    for (d = 0; d < %d; d++) w[d] = 0;\n    for (;;) {\n      i64 off = 0;\n      int ok = 1;\n"
                     "      for (d = 0; d < %d && ok; d++) {\n"
                     "        i64 p = o[d] * wstride[d] + w[d] * rdil[d] - padlo[d];\n"
                     "        if (p < 0) { ok = 0; break; }\n"
                     "        if (ldil[d] > 1) { if (p %% ldil[d]) { ok = 0; break; } p /= ldil[d]; }\n"
                     "        if (p >= xdims[d]) { ok = 0; break; }\n"
                     "        off += p * xst[d];\n      }\n"
                     "      if (ok) {\n        if (best < 0) best = off;\n        else {\n"
                     "          args[0] = (u8 *)a0 + best * %d;\n          args[1] = (u8 *)a0 + off * %d;\n"
                     "          if ((rc = comp%d(args, po)) != 0) return rc;\n          if (!pv) best = off;\n"
                     "        }\n      }\n"
                     "      for (d = %d; d >= 0; d--) { if (++w[d] < wsize[d]) break; w[d] = 0; }\n"
                     "      if (d < 0) break;\n    }\n",
                  rank, rank, xes, xes, sel->id, rank - 1);
  }
  tr_buf_printf(k, "    if (best >= 0) {\n      args[0] = (u8 *)a1 + q * %d;\n      args[1] = r + best * %d;\n"
                   "      if ((rc = comp%d(args, ro)) != 0) return rc;\n      memcpy(r + best * %d, res, %d);\n    }\n",
                ses, es, sc->id, es, es);
  tr_buf_printf(k, "    for (d = %d; d >= 0; d--) { if (++o[d] < sdims[d]) break; o[d] = 0; }\n  }\n  return 0;\n}\n",
                ss->rank - 1);
  return TR_OK;
}
