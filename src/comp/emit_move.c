/* emit_move.c - kernels that move elements (broadcast, transpose,
 * reverse, slice, pad, concatenate, iota, dynamic slices), cholesky and
 * triangular-solve, reduce-precision, bitcast-convert and gather
 * (docs/EMITTER.md). */
#include "emitint.h"

/* ---- data movement ---- */

void emit_i64s(tr_buf *b, const char *name, const int64_t *v, int n) {
  tr_buf_printf(b, "  static const i64 %s[%d] = {", name, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) tr_buf_printf(b, "%s%lldLL", i ? ", " : "", (long long)v[i]);
  if (n == 0) tr_buf_puts(b, "0");
  tr_buf_puts(b, "};\n");
}

/* r = a through a strided view: dims of the result, strides into a. */
static void k_strided(em *e, const tr_instr *in, const int64_t *st, int64_t base) {
  tr_buf *k = &e->cur;
  const tr_shape *s = in->shape;
  em_kern_head(e, 1);
  emit_i64s(k, "dims", s->dims, s->rank);
  emit_i64s(k, "st", st, s->rank);
  tr_buf_printf(k, "  tr_strided(r, a0, %d, %d, dims, st, %lldLL);\n  return 0;\n}\n",
                esp_of(s->dtype), s->rank, (long long)base);
}

tr_status k_move(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  const tr_shape *xs = in->operands[0]->shape;
  int64_t xst[64], st[64];
  strides(xs, xst);
  int n;
  switch (in->op) {
  case TR_OP_BROADCAST: {
    const int64_t *dm = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
    for (int i = 0; i < s->rank; i++) st[i] = 0;
    for (int j = 0; j < n && j < xs->rank; j++) st[dm[j]] = xst[j];
    k_strided(e, in, st, 0);
    return TR_OK;
  }
  case TR_OP_TRANSPOSE: {
    const int64_t *pm = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
    for (int i = 0; i < s->rank; i++) st[i] = xst[pm[i]];
    k_strided(e, in, st, 0);
    return TR_OK;
  }
  case TR_OP_REVERSE: {
    const int64_t *rv = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
    int64_t base = 0;
    for (int i = 0; i < s->rank; i++) {
      bool r = tr_ints_has(rv, n, i);
      st[i] = r ? -xst[i] : xst[i];
      if (r && s->dims[i] > 0) base += (s->dims[i] - 1) * xst[i];
    }
    k_strided(e, in, st, base);
    return TR_OK;
  }
  case TR_OP_SLICE: {
    const tr_attr *at = tr_instr_attr(in, TR_ATTR_SLICE);
    if (!at || at->n != s->rank) return em_unsup(e, in, "slice attribute");
    int64_t base = 0;
    for (int i = 0; i < s->rank; i++) {
      st[i] = at->u.slice[i].stride * xst[i];
      base += at->u.slice[i].start * xst[i];
    }
    k_strided(e, in, st, base);
    return TR_OK;
  }
  default: return em_unsup(e, in, NULL);
  }
}

tr_status k_pad(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape;
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_PADDING);
  if (!at || at->n != s->rank) return em_unsup(e, in, "padding attribute");
  int64_t lo[64], inr[64];
  for (int i = 0; i < s->rank; i++) {
    lo[i] = at->u.pad[i].lo;
    inr[i] = at->u.pad[i].interior;
  }
  tr_buf *k = &e->cur;
  int es = esp_of(s->dtype);
  em_kern_head(e, 2);
  emit_i64s(k, "odims", s->dims, s->rank);
  emit_i64s(k, "idims", xs->dims, xs->rank);
  emit_i64s(k, "lo", lo, s->rank);
  emit_i64s(k, "in", inr, s->rank);
  tr_buf_printf(k, "  i64 i;\n  for (i = 0; i < %lldLL; i++) tr_cp(r, i, a1, 0, %d);\n",
                (long long)count_of(s), es);
  tr_buf_printf(k, "  tr_pad(r, a0, %d, %d, odims, idims, lo, in);\n  return 0;\n}\n", es, s->rank);
  return TR_OK;
}

tr_status k_concat(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  int n;
  const int64_t *dm = tr_attr_ints(in, TR_ATTR_DIMENSIONS, &n);
  if (n != 1) return em_unsup(e, in, "dimensions attribute");
  int axis = (int)dm[0];
  int64_t outer = 1, inner = es_of(s->dtype);
  for (int i = 0; i < axis; i++) outer *= s->dims[i];
  for (int i = axis + 1; i < s->rank; i++) inner *= s->dims[i];
  tr_buf *k = &e->cur;
  em_kern_head(e, in->noperands);
  if (is4(s->dtype)) {
    /* packed rows may start mid-byte: element by element */
    tr_buf_printf(k, "  i64 o, j, at = 0;\n  for (o = 0; o < %lldLL; o++) {\n", (long long)outer);
    for (int j = 0; j < in->noperands; j++) {
      int64_t row = in->operands[j]->shape->dims[axis] * inner;
      tr_buf_printf(k, "    for (j = 0; j < %lldLL; j++) tr_cp(r, at + j, a%d, o * %lldLL + j, 0);\n"
                       "    at += %lldLL;\n", (long long)row, j, (long long)row, (long long)row);
    }
    tr_buf_puts(k, "  }\n  return 0;\n}\n");
    return TR_OK;
  }
  tr_buf_printf(k, "  i64 o, at = 0;\n  for (o = 0; o < %lldLL; o++) {\n", (long long)outer);
  for (int j = 0; j < in->noperands; j++) {
    int64_t rowb = in->operands[j]->shape->dims[axis] * inner;
    tr_buf_printf(k, "    memcpy(r + at, a%d + o * %lldLL, %lld);\n    at += %lldLL;\n", j,
                  (long long)rowb, (long long)rowb, (long long)rowb);
  }
  tr_buf_puts(k, "  }\n  return 0;\n}\n");
  return TR_OK;
}

tr_status k_iota(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_IOTA_DIMENSION);
  int dim = at ? (int)at->u.i : 0;
  if (s->rank == 0 || dim < 0 || dim >= s->rank) return em_unsup(e, in, "iota dimension");
  int64_t inner = 1;
  for (int i = dim + 1; i < s->rank; i++) inner *= s->dims[i];
  tr_buf *k = &e->cur;
  em_kern_head(e, 0);
  tr_buf_puts(k, "  i64 i;\n  for (i = 0; i < n; i++)\n");
  if (is_flt(s->dtype))
    tr_buf_printf(k, "    ST_%s(r, i, (double)((u64)(i / %lldLL) %% %lluull));\n", tr_dtype_name(s->dtype),
                  (long long)inner, (unsigned long long)s->dims[dim]);
  else
    tr_buf_printf(k, "    ST_%s(r, i, (u64)(i / %lldLL) %% %lluull);\n", tr_dtype_name(s->dtype),
                  (long long)inner, (unsigned long long)s->dims[dim]);
  tr_buf_puts(k, "  return 0;\n}\n");
  return TR_OK;
}

/* dynamic-slice and dynamic-update-slice: start indices read as int64
 * (an unsigned 2^63 or more counts as negative) and clamped to
 * [0, dim - size]. */
tr_status k_dynamic(em *e, const tr_instr *in) {
  bool upd = in->op == TR_OP_DYNAMIC_UPDATE_SLICE;
  const tr_instr *x = in->operands[0];
  const tr_shape *xs = x->shape;
  const tr_shape *part = upd ? in->operands[1]->shape : in->shape;
  int first = upd ? 2 : 1, rank = xs->rank;
  bool vec = in->noperands - first == 1 && in->operands[first]->shape->rank == 1;
  if (!vec && in->noperands - first != rank) return em_unsup(e, in, "index operands");
  int64_t xst[64];
  strides(xs, xst);
  tr_buf *k = &e->cur;
  em_kern_head(e, in->noperands);
  tr_buf_puts(k, "  i64 base = 0, s;\n");
  emit_i64s(k, "dims", part->dims, rank);
  emit_i64s(k, "st", xst, rank);
  for (int i = 0; i < rank; i++) {
    const tr_instr *ix = in->operands[vec ? first : first + i];
    tr_buf_printf(k, "  s = (i64)LD_%s(a%d, %d);\n", tr_dtype_name(ix->shape->dtype), vec ? first : first + i,
                  vec ? i : 0);
    tr_buf_printf(k, "  if (s > %lldLL) s = %lldLL;\n  if (s < 0) s = 0;\n  base += s * %lldLL;\n",
                  (long long)(xs->dims[i] - part->dims[i]), (long long)(xs->dims[i] - part->dims[i]),
                  (long long)xst[i]);
  }
  int es = esp_of(xs->dtype);
  if (upd)
    tr_buf_printf(k, "  memcpy(r, a0, %lld);\n  tr_place(r, a1, %d, %d, dims, st, base);\n",
                  (long long)bytes_of(xs), es, rank);
  else
    tr_buf_printf(k, "  tr_strided(r, a0, %d, %d, dims, st, base);\n", es, rank);
  tr_buf_puts(k, "  return 0;\n}\n");
  return TR_OK;
}

/* ---- cholesky and triangular-solve ----
 * The reference's textbook algorithms (eval_linalg.c) in the same order
 * and in long double, from the inputs read as double, each result rounded
 * to double and then to the element type: the reference's bits. */

static bool real_float(tr_dtype dt) {
  return tr_dtypes[dt].kind == TR_DK_FLOAT;
}

tr_status k_cholesky(em *e, const tr_instr *in) {
  const tr_shape *s = in->operands[0]->shape;
  int r = s->rank;
  if (r < 2 || s->dims[r - 1] != s->dims[r - 2]) return em_unsup(e, in, "a non-square cholesky");
  if (!real_float(s->dtype)) return em_unsup(e, in, "a non-real cholesky");
  long long n = s->dims[r - 1], nn = n * n, nb = nn ? (long long)count_of(s) / nn : 0;
  bool lower = tr_attr_bool(in, TR_ATTR_LOWER); /* XLA's default is upper */
  const char *dt = tr_dtype_name(s->dtype);
  tr_buf *k = &e->cur;
  em_kern_head(e, 1);
  /* A(i, j), i >= j, from the triangle XLA reads; l is the factor. */
  tr_buf_printf(k,
    "  long double *l = (long double *)tr_alloc(sizeof(long double) * %lld);\n"
    "  i64 b, i, j, q, N = %lld;\n  (void)n;\n  if (!l) return 1;\n"
    "  for (b = 0; b < %lld; b++) {\n    i64 o = b * N * N;\n"
    "    memset(l, 0, sizeof(long double) * N * N);\n"
    "#define A(i, j) ((long double)LD_%s(a0, o + %s))\n"
    "    for (j = 0; j < N; j++) {\n"
    "      long double s = A(j, j);\n"
    "      for (q = 0; q < j; q++) s -= l[j * N + q] * l[j * N + q];\n"
    "      l[j * N + j] = sqrtl(s);\n"
    "      for (i = j + 1; i < N; i++) {\n"
    "        long double t = A(i, j);\n"
    "        for (q = 0; q < j; q++) t -= l[i * N + q] * l[j * N + q];\n"
    "        l[i * N + j] = t / l[j * N + j];\n      }\n    }\n#undef A\n"
    "    for (i = 0; i < N; i++)\n      for (j = 0; j < N; j++)\n"
    "        ST_%s(r, o + i * N + j, %s);\n  }\n  free(l);\n  return 0;\n}\n",
    nn ? nn : 1, n, nb, dt, lower ? "(i) * N + (j)" : "(j) * N + (i)", dt,
    lower ? "(double)(j <= i ? l[i * N + j] : 0)" : "(double)(i <= j ? l[j * N + i] : 0)");
  return TR_OK;
}

tr_status k_triangular_solve(em *e, const tr_instr *in) {
  const tr_shape *as = in->operands[0]->shape, *bs = in->operands[1]->shape;
  int r = as->rank;
  bool left = tr_attr_bool(in, TR_ATTR_LEFT_SIDE), lower = tr_attr_bool(in, TR_ATTR_LOWER);
  bool unit = tr_attr_bool(in, TR_ATTR_UNIT_DIAGONAL);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TRANSPOSE_A);
  bool trans = ta && ta->u.s && strcmp(ta->u.s, "NO_TRANSPOSE") != 0; /* ADJOINT = TRANSPOSE for reals */
  if (r < 2 || bs->rank != r || as->dims[r - 1] != as->dims[r - 2])
    return em_unsup(e, in, "a malformed triangular-solve");
  if (!real_float(as->dtype) || !real_float(bs->dtype)) return em_unsup(e, in, "a non-real triangular-solve");
  long long m = as->dims[r - 1], rows = bs->dims[r - 2], cols = bs->dims[r - 1];
  long long nrhs = left ? cols : rows, nb = m ? (long long)count_of(as) / (m * m) : 0;
  if ((left ? rows : cols) != m) return em_unsup(e, in, "a malformed triangular-solve");
  /* As in eval_linalg.c: the system matrix is op(a) (left) or op(a)^T
   * (right), lower when exactly one of lower and the transpose holds. */
  bool t_eff = left ? trans : !trans, t_lower = lower != t_eff;
  const char *adt = tr_dtype_name(as->dtype), *bdt = tr_dtype_name(bs->dtype);
  tr_buf *k = &e->cur;
  em_kern_head(e, 2);
  tr_buf_printf(k,
    "  long double *y = (long double *)tr_alloc(sizeof(long double) * %lld);\n"
    "  i64 bi, q, s, i, kk, M = %lld;\n  (void)n;\n  (void)M;\n  if (!y) return 1;\n"
    "  for (bi = 0; bi < %lld; bi++) {\n    i64 ao = bi * %lld, bo = bi * %lld;\n"
    "    for (q = 0; q < %lld; q++) {\n      for (s = 0; s < %lld; s++) {\n",
    m ? m : 1, m, nb, m * m, rows * cols, nrhs, m);
  char tix[96], rix[96];
  snprintf(tix, sizeof tix, t_eff ? "ao + (kk) * %lld + (i)" : "ao + (i) * %lld + (kk)", m);
  if (left) snprintf(rix, sizeof rix, "bo + (i) * %lld + q", cols);
  else snprintf(rix, sizeof rix, "bo + q * %lld + (i)", cols);
  tr_buf_printf(k,
    "        long double v;\n        i = %s;\n        v = (long double)LD_%s(a1, %s);\n",
    t_lower ? "s" : "M - 1 - s", bdt, rix);
  tr_buf_printf(k, t_lower ? "        for (kk = 0; kk < i; kk++)"
                           : "        for (kk = i + 1; kk < %lld; kk++)", m);
  tr_buf_printf(k, " v -= (long double)LD_%s(a0, %s) * y[kk];\n", adt, tix);
  if (unit) tr_buf_puts(k, "        y[i] = v;\n      }\n");
  else {
    char dix[96];
    snprintf(dix, sizeof dix, "ao + i * %lld + i", m);
    tr_buf_printf(k, "        y[i] = v / (long double)LD_%s(a0, %s);\n      }\n", adt, dix);
  }
  tr_buf_printf(k, "      for (i = 0; i < %lld; i++) ST_%s(r, %s, (double)y[i]);\n    }\n  }\n"
                   "  free(y);\n  return 0;\n}\n", m, bdt, rix);
  return TR_OK;
}

tr_status k_reduce_precision(em *e, const tr_instr *in) {
  const tr_attr *ea = tr_instr_attr(in, TR_ATTR_EXPONENT_BITS);
  const tr_attr *ma = tr_instr_attr(in, TR_ATTR_MANTISSA_BITS);
  if (!ea || !ma || ea->u.i < 1 || ma->u.i < 0 || ea->u.i > 60 || ma->u.i > 60)
    return em_unsup(e, in, "exponent_bits or mantissa_bits");
  tr_dtype dt = in->shape->dtype;
  bool f64 = dt == TR_DT_F64, wide = dt == TR_DT_F64 || dt == TR_DT_F32;
  int width = f64 ? 64 : 32, sm = f64 ? 52 : 23, se = f64 ? 11 : 8;
  long long m = ma->u.i, ex = ea->u.i;
  tr_buf *k = &e->cur;
  em_elem_head(e, 1);
  /* E's algorithm on the stored pattern (eval_elem.c reduce_prec);
   * narrower types go through their exact f32 pattern. */
  if (f64) tr_buf_puts(k, "  u64 x = raw_get(a0, 8, i), orig;\n  int nan = (x & 0x7fffffffffffffffull) > 0x7ff0000000000000ull;\n");
  else if (wide) tr_buf_puts(k, "  u64 x = raw_get(a0, 4, i), orig;\n  int nan = (x & 0x7fffffffu) > 0x7f800000u;\n");
  else
    tr_buf_printf(k, "  double d = LD_%s(a0, i);\n  float f = (float)d;\n  uint32_t fb;\n  u64 x, orig;\n"
                     "  int nan = isnan(d);\n  memcpy(&fb, &f, 4);\n  x = fb;\n", tr_dtype_name(dt));
  tr_buf_puts(k, "  orig = x;\n");
  if (m < sm)
    tr_buf_printf(k, "  { u64 last = (u64)1 << %lld, base = (last >> 1) - 1, xl = (x & last) >> %lld;\n"
                     "    x = (x + xl + base) & ~(last - 1); }\n", sm - m, sm - m);
  if (ex < se) {
    unsigned long long sign = 1ull << (width - 1), expmask = ((1ull << se) - 1) << sm;
    unsigned long long bias = (1ull << (se - 1)) - 1, rbias = (1ull << (ex - 1)) - 1;
    unsigned long long rmax = bias + rbias, rmin = bias - rbias;
    tr_buf_printf(k, "  { u64 xe = x & 0x%llxull, zero = x & 0x%llxull;\n"
                     "    int over = xe > 0x%llxull, under = xe <= 0x%llxull;\n"
                     "    if (over) x = zero | 0x%llxull;\n    if (under) x = zero; }\n",
                  expmask, sign, rmax << sm, rmin << sm, expmask);
  }
  if (m > 0) tr_buf_puts(k, "  if (nan) x = orig;\n");
  else tr_buf_printf(k, "  if (nan) x = 0x%llxull;\n", (unsigned long long)(((1ull << se) - 1) << sm));
  if (wide) tr_buf_printf(k, "  raw_put(r, %d, i, x);\n}\n", width / 8);
  else
    tr_buf_printf(k, "  fb = (uint32_t)x;\n  memcpy(&f, &fb, 4);\n  ST_%s(r, i, (double)f);\n}\n",
                  tr_dtype_name(dt));
  em_lane_loop(e, 1, true);
  return TR_OK;
}

tr_status k_bitcast_convert(em *e, const tr_instr *in) {
  tr_dtype st = in->operands[0]->shape->dtype, dt = in->shape->dtype;
  if (bits_of(st) == bits_of(dt) && bits_of(st) % 8 == 0 && st != TR_DT_PRED && dt != TR_DT_PRED) {
    em_kern_head(e, 1);
    tr_buf_printf(&e->cur, "  memcpy(r, a0, %lld);\n  return 0;\n}\n", (long long)bytes_of(in->shape));
    return TR_OK;
  }
  int64_t ni = count_of(in->operands[0]->shape), no = count_of(in->shape);
  if (ni * bits_of(st) != no * bits_of(dt)) return em_unsup(e, in, "a change in the number of bits");
  em_kern_head(e, 1);
  tr_buf_printf(&e->cur, "  tr_bitcast(r, a0, %lldLL, %d, %d, %lldLL, %d, %d, %d, %d);\n  return 0;\n}\n",
                (long long)ni, bits_of(st), es_of(st), (long long)no, bits_of(dt), es_of(dt), is_sg(dt),
                dt == TR_DT_PRED);
  return TR_OK;
}

/* gather: the indices read as int64 (unsigned ones 2^63 and above count
 * as negative, as the reference), then the prelude's tr_gather. */
tr_status k_gather(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *is = in->operands[1]->shape;
  int noff, ncol, nmap, nss, nob, nib;
  const int64_t *off = tr_attr_ints(in, TR_ATTR_OFFSET_DIMS, &noff);
  const int64_t *col = tr_attr_ints(in, TR_ATTR_COLLAPSED_SLICE_DIMS, &ncol);
  const int64_t *map = tr_attr_ints(in, TR_ATTR_START_INDEX_MAP, &nmap);
  const int64_t *ss = tr_attr_ints(in, TR_ATTR_SLICE_SIZES, &nss);
  const int64_t *ob = tr_attr_ints(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nob);
  const int64_t *ib = tr_attr_ints(in, TR_ATTR_START_INDICES_BATCHING_DIMS, &nib);
  const tr_attr *iv = tr_instr_attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t ivd = iv ? iv->u.i : 0;
  if (nss != xs->rank || nob != nib || xs->rank > 60 || is->rank > 60 || s->rank > 60) return em_unsup(e, in, "attributes");
  for (int d = 0; d < xs->rank; d++)
    if (ss[d] <= 0 && count_of(s) > 0) return em_unsup(e, in, "a slice size of 0");
  tr_buf *k = &e->cur;
  em_kern_head(e, 2);
  emit_i64s(k, "xd", xs->dims, xs->rank);
  emit_i64s(k, "id", is->dims, is->rank);
  emit_i64s(k, "sd", s->dims, s->rank);
  emit_i64s(k, "off", off, noff);
  emit_i64s(k, "col", col, ncol);
  emit_i64s(k, "map", map, nmap);
  emit_i64s(k, "ss", ss, nss);
  emit_i64s(k, "ob", ob, nob);
  emit_i64s(k, "ib", ib, nib);
  int64_t ni = count_of(is);
  tr_buf_printf(k, "  i64 *vals = malloc(sizeof(i64) * %lld), j;\n  if (!vals) return 1;\n"
                   "  for (j = 0; j < %lldLL; j++) vals[j] = (i64)%s_%s(a1, j);\n",
                (long long)(ni > 0 ? ni : 1), (long long)ni, ld_of(e, is->dtype), tr_dtype_name(is->dtype));
  tr_buf_printf(k, "  tr_gather(r, a0, %d, vals, %d, xd, %d, id, %d, sd, off, %d, col, %d, map, %d, ss, ob, ib, %d, %lldLL);\n"
                   "  free(vals);\n  return 0;\n}\n",
                es_of(xs->dtype), xs->rank, is->rank, s->rank, noff, ncol, nmap, nob, (long long)ivd);
  return TR_OK;
}
