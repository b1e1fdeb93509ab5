/* print.c - canonical HLO text. The output is XLA's long dump form (%names,
 * program shapes, layouts as written) and reads back through tr_parse to an
 * equal module. */
#include "ir.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tr_shape_print(tr_buf *b, const tr_shape *s, bool layouts) {
  if (s->dtype == TR_DT_TUPLE) {
    tr_buf_putc(b, '(');
    for (int i = 0; i < s->nelems; i++) {
      if (i) tr_buf_puts(b, ", ");
      tr_shape_print(b, s->elems[i], layouts);
    }
    tr_buf_putc(b, ')');
    return;
  }
  if (s->buffer) {
    tr_shape a = *s;
    a.buffer = false;
    tr_buf_puts(b, "b(");
    tr_shape_print(b, &a, layouts);
    tr_buf_putc(b, ')');
    return;
  }
  tr_buf_puts(b, tr_dtype_name(s->dtype));
  tr_buf_putc(b, '[');
  for (int i = 0; i < s->rank; i++) {
    if (i) tr_buf_putc(b, ',');
    if (s->dims[i] < 0) {
      tr_buf_putc(b, '?');
      continue;
    }
    if (s->dynamic && s->dynamic[i]) tr_buf_puts(b, "<=");
    tr_buf_printf(b, "%" PRId64, s->dims[i]);
  }
  tr_buf_putc(b, ']');
  if (layouts && s->has_layout) {
    tr_buf_putc(b, '{');
    for (int i = 0; s->layout && i < s->rank; i++) {
      if (i) tr_buf_putc(b, ',');
      tr_buf_printf(b, "%" PRId64, s->layout[i]);
    }
    if (s->layout_ext) {
      tr_buf_putc(b, ':');
      tr_buf_puts(b, s->layout_ext);
    }
    tr_buf_putc(b, '}');
  }
}

static void put_string(tr_buf *b, const char *s) {
  tr_buf_putc(b, '"');
  for (; *s; s++) {
    unsigned char c = (unsigned char)*s;
    switch (c) {
    case '"': tr_buf_puts(b, "\\\""); break;
    case '\\': tr_buf_puts(b, "\\\\"); break;
    case '\n': tr_buf_puts(b, "\\n"); break;
    case '\t': tr_buf_puts(b, "\\t"); break;
    case '\r': tr_buf_puts(b, "\\r"); break;
    default:
      if (c < 32 || c >= 127) tr_buf_printf(b, "\\%03o", c);
      else tr_buf_putc(b, (char)c);
    }
  }
  tr_buf_putc(b, '"');
}

static uint64_t load_bits(const unsigned char *p, int size) {
  switch (size) {
  case 1: return *p;
  case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

/* Shortest decimal that reads back to the same bits of dt. */
static void put_float(tr_buf *b, tr_dtype dt, uint64_t bits) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  double v = tr_float_to_double(dt, bits);
  if (isnan(v)) {
    bool neg = f->fstyle != TR_FS_FNUZ && f->fstyle != TR_FS_E8M0 && f->bits < 64
                   ? (bits >> (f->bits - 1)) & 1
                   : (f->bits == 64 ? bits >> 63 : 0);
    tr_buf_puts(b, neg ? "-nan" : "nan");
    if (tr_float_has_payload(dt)) {
      uint64_t pl = bits & (((uint64_t)1 << f->mbits) - 1);
      if (pl != (uint64_t)1 << (f->mbits - 1)) tr_buf_printf(b, "(0x%" PRIx64 ")", pl);
    }
    return;
  }
  if (isinf(v)) {
    tr_buf_puts(b, v < 0 ? "-inf" : "inf");
    return;
  }
  if (v == 0 && signbit(v)) {
    /* XLA's lexer reads "-0" as the integer 0 and loses the sign. */
    tr_buf_puts(b, "-0.0");
    return;
  }
  char s[64];
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(s, sizeof s, "%.*g", prec, v);
    if (tr_float_from_double(dt, strtod(s, NULL)) == bits) break;
  }
  /* Whole numbers read better in full (65504, not 6.55e+04). */
  if (strchr(s, 'e') && fabs(v) < 1e16 && v == floor(v)) snprintf(s, sizeof s, "%.0f", v);
  tr_buf_puts(b, s);
}

static void put_elem(tr_buf *b, tr_dtype dt, const unsigned char *p, bool scalar) {
  const tr_dtype_info *f = &tr_dtypes[dt];
  int size = tr_dtype_size(dt);
  switch (f->kind) {
  case TR_DK_PRED:
    if (scalar) tr_buf_puts(b, *p ? "true" : "false");
    else tr_buf_putc(b, *p ? '1' : '0');
    return;
  case TR_DK_SINT: {
    uint64_t v = load_bits(p, size);
    int bits = size * 8;
    int64_t sv = bits == 64 ? (int64_t)v : (int64_t)(v << (64 - bits)) >> (64 - bits);
    tr_buf_printf(b, "%" PRId64, sv);
    return;
  }
  case TR_DK_UINT: tr_buf_printf(b, "%" PRIu64, load_bits(p, size)); return;
  case TR_DK_FLOAT: put_float(b, dt, load_bits(p, size)); return;
  case TR_DK_COMPLEX: {
    tr_dtype part = dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
    int half = size / 2;
    tr_buf_putc(b, '(');
    put_float(b, part, load_bits(p, half));
    tr_buf_puts(b, ", ");
    put_float(b, part, load_bits(p + half, half));
    tr_buf_putc(b, ')');
    return;
  }
  default: tr_buf_puts(b, "?"); return;
  }
}

static void put_dense(tr_buf *b, const tr_shape *s, int level, const unsigned char *data,
                      int64_t *idx, int esize) {
  bool inner = level == s->rank - 1;
  if (inner) {
    bool spaced = s->rank > 1 && s->dims[level] > 1;
    tr_buf_puts(b, spaced ? "{ " : "{");
    for (int64_t i = 0; i < s->dims[level]; i++) {
      if (i) tr_buf_puts(b, ", ");
      put_elem(b, s->dtype, data + (size_t)(*idx)++ * (size_t)esize, false);
    }
    tr_buf_puts(b, spaced ? " }" : "}");
    return;
  }
  tr_buf_puts(b, "{ ");
  for (int64_t i = 0; i < s->dims[level]; i++) {
    if (i) tr_buf_puts(b, ", ");
    put_dense(b, s, level + 1, data, idx, esize);
  }
  tr_buf_puts(b, " }");
}

void tr_print_literal(tr_buf *b, const tr_literal *lit) {
  const tr_shape *s = lit->shape;
  if (lit->elided) {
    tr_buf_puts(b, "{...}");
    return;
  }
  if (s->dtype == TR_DT_TUPLE) {
    tr_buf_puts(b, "( ");
    for (int i = 0; i < lit->nelems; i++) {
      if (i) tr_buf_puts(b, ", ");
      tr_print_literal(b, lit->elems[i]);
    }
    tr_buf_puts(b, " )");
    return;
  }
  if (s->rank == 0 || lit->single) {
    /* A single value for an array prints as it was written. */
    put_elem(b, s->dtype, lit->single ? lit->one : (const unsigned char *)lit->data, true);
    return;
  }
  int64_t idx = 0;
  put_dense(b, s, 0, lit->data, &idx, tr_dtype_size(s->dtype));
}

static void put_ints(tr_buf *b, const int64_t *v, int n) {
  tr_buf_putc(b, '{');
  for (int i = 0; i < n; i++) tr_buf_printf(b, i ? ",%" PRId64 : "%" PRId64, v[i]);
  tr_buf_putc(b, '}');
}

static void put_window(tr_buf *b, const tr_window_dim *w, int n) {
  tr_buf_putc(b, '{');
  bool stride = false, pad = false, ld = false, rd = false, rev = false;
  for (int i = 0; i < n; i++) {
    stride |= w[i].stride != 1;
    pad |= w[i].pad_lo != 0 || w[i].pad_hi != 0;
    ld |= w[i].lhs_dilate != 1;
    rd |= w[i].rhs_dilate != 1;
    rev |= w[i].reversal;
  }
#define FIELD(cond, label, expr)                                   \
  if (cond) {                                                      \
    if (b->n && b->p[b->n - 1] != '{') tr_buf_putc(b, ' ');        \
    tr_buf_puts(b, label "=");                                     \
    for (int i = 0; i < n; i++) {                                  \
      if (i) tr_buf_putc(b, 'x');                                  \
      expr;                                                        \
    }                                                              \
  }
  FIELD(n > 0, "size", tr_buf_printf(b, "%" PRId64, w[i].size))
  FIELD(stride, "stride", tr_buf_printf(b, "%" PRId64, w[i].stride))
  FIELD(pad, "pad", tr_buf_printf(b, "%" PRId64 "_%" PRId64, w[i].pad_lo, w[i].pad_hi))
  FIELD(ld, "lhs_dilate", tr_buf_printf(b, "%" PRId64, w[i].lhs_dilate))
  FIELD(rd, "rhs_dilate", tr_buf_printf(b, "%" PRId64, w[i].rhs_dilate))
  FIELD(rev, "rhs_reversal", tr_buf_putc(b, w[i].reversal ? '1' : '0'))
#undef FIELD
  tr_buf_putc(b, '}');
}

static void put_dimlabels(tr_buf *b, const tr_convdims *c) {
  int n = c->nspatial + 2;
  char part[3][80];
  const int64_t *sp[3] = {c->in_spatial, c->k_spatial, c->out_spatial};
  int64_t m0[3] = {c->in_batch, c->k_in, c->out_batch};
  int64_t m1[3] = {c->in_feature, c->k_out, c->out_feature};
  const char majors[3][2] = {{'b', 'f'}, {'i', 'o'}, {'b', 'f'}};
  for (int k = 0; k < 3; k++) {
    memset(part[k], '?', (size_t)n);
    part[k][n] = 0;
    part[k][m0[k]] = majors[k][0];
    part[k][m1[k]] = majors[k][1];
    for (int i = 0; i < c->nspatial; i++) part[k][sp[k][i]] = (char)('0' + i);
  }
  tr_buf_printf(b, "%s_%s->%s", part[0], part[1], part[2]);
}

void tr_print_attr_value(tr_buf *b, const tr_attr *at) {
  switch (at->kind) {
  case TR_AK_INT: tr_buf_printf(b, "%" PRId64, at->u.i); break;
  case TR_AK_BOOL: tr_buf_puts(b, at->u.b ? "true" : "false"); break;
  case TR_AK_INTS: put_ints(b, at->u.ints, at->n); break;
  case TR_AK_INTSS:
    tr_buf_putc(b, '{');
    for (int i = 0; i < at->n; i++) {
      if (i) tr_buf_putc(b, ',');
      put_ints(b, at->u.intss.v[i], at->u.intss.lens[i]);
    }
    tr_buf_putc(b, '}');
    break;
  case TR_AK_STR: put_string(b, at->u.s); break;
  case TR_AK_IDENT: case TR_AK_RAW: tr_buf_puts(b, at->u.s); break;
  case TR_AK_COMP: tr_buf_printf(b, "%%%s", at->u.comp->name); break;
  case TR_AK_COMPS:
  case TR_AK_INSTRS:
    tr_buf_putc(b, '{');
    for (int i = 0; i < at->n; i++)
      tr_buf_printf(b, "%s%%%s", i ? ", " : "",
                    at->kind == TR_AK_COMPS ? at->u.comps[i]->name : at->u.instrs[i]->name);
    tr_buf_putc(b, '}');
    break;
  case TR_AK_SLICE: {
    bool strides = false;
    for (int i = 0; i < at->n; i++) strides |= at->u.slice[i].stride != 1;
    tr_buf_putc(b, '{');
    for (int i = 0; i < at->n; i++) {
      const tr_slice_dim *d = &at->u.slice[i];
      tr_buf_printf(b, "%s[%" PRId64 ":%" PRId64, i ? ", " : "", d->start, d->limit);
      if (strides) tr_buf_printf(b, ":%" PRId64, d->stride);
      tr_buf_putc(b, ']');
    }
    tr_buf_putc(b, '}');
    break;
  }
  case TR_AK_PADDING: {
    bool interior = false;
    for (int i = 0; i < at->n; i++) interior |= at->u.pad[i].interior != 0;
    for (int i = 0; i < at->n; i++) {
      const tr_pad_dim *d = &at->u.pad[i];
      tr_buf_printf(b, "%s%" PRId64 "_%" PRId64, i ? "x" : "", d->lo, d->hi);
      if (interior) tr_buf_printf(b, "_%" PRId64, d->interior);
    }
    break;
  }
  case TR_AK_WINDOW: put_window(b, at->u.win, at->n); break;
  case TR_AK_DIMLABELS: put_dimlabels(b, at->u.conv); break;
  }
}

void tr_print_instr(tr_buf *b, const tr_instr *in) {
  tr_buf_printf(b, "%%%s = ", in->name);
  tr_shape_print(b, in->shape, true);
  tr_buf_printf(b, " %s(", in->opname);
  if (in->op == TR_OP_PARAMETER) {
    tr_buf_printf(b, "%" PRId64, in->param_index);
  } else if (in->op == TR_OP_CONSTANT) {
    tr_print_literal(b, in->literal);
  } else {
    for (int i = 0; i < in->noperands; i++)
      tr_buf_printf(b, "%s%%%s", i ? ", " : "", in->operands[i]->name);
  }
  tr_buf_putc(b, ')');
  /* Modelled attributes in table order, then verbatim ones as written. */
  for (int k = 0; k < TR_ATTR_COUNT; k++) {
    const tr_attr *at = tr_instr_attr(in, (tr_attr_key)k);
    if (!at) continue;
    tr_buf_printf(b, ", %s=", at->name);
    tr_print_attr_value(b, at);
  }
  for (int i = 0; i < in->nattrs; i++) {
    const tr_attr *at = &in->attrs[i];
    if (at->key != TR_ATTR_RAW) continue;
    tr_buf_printf(b, ", %s=", at->name);
    tr_print_attr_value(b, at);
  }
}

static void print_comp(tr_buf *b, const tr_comp *c) {
  if (c->is_entry) tr_buf_puts(b, "ENTRY ");
  tr_buf_printf(b, "%%%s ", c->name);
  bool full = true;
  for (int i = 0; i < c->nparams; i++) full &= c->params[i] != NULL;
  if (full) {
    tr_buf_putc(b, '(');
    for (int i = 0; i < c->nparams; i++) {
      tr_buf_printf(b, "%s%s: ", i ? ", " : "", c->params[i]->name);
      tr_shape_print(b, c->params[i]->shape, false);
    }
    tr_buf_puts(b, ") -> ");
    tr_shape_print(b, c->root->shape, false);
    tr_buf_putc(b, ' ');
  }
  tr_buf_puts(b, "{\n");
  for (int i = 0; i < c->ninstrs; i++) {
    tr_buf_puts(b, c->instrs[i] == c->root ? "  ROOT " : "  ");
    tr_print_instr(b, c->instrs[i]);
    tr_buf_putc(b, '\n');
  }
  tr_buf_putc(b, '}');
  if (c->exec_thread) {
    tr_buf_puts(b, ", execution_thread=");
    put_string(b, c->exec_thread);
  }
  tr_buf_puts(b, "\n\n");
}

void tr_print_module(tr_buf *b, const tr_module *m) {
  tr_buf_printf(b, "HloModule %s", m->name);
  for (int i = 0; i < m->nhattrs; i++)
    tr_buf_printf(b, ", %s=%s", m->hattrs[i].name, m->hattrs[i].text);
  tr_buf_puts(b, "\n\n");
  if (m->frames) {
    tr_buf_puts(b, m->frames);
    tr_buf_puts(b, "\n\n");
  }
  /* Callee-first, so that passes may add computations anywhere. */
  tr_comp **order = tr_xmalloc(sizeof(tr_comp *) * (size_t)(m->ncomps + 1));
  tr_module_callee_order(m, order);
  for (int i = 0; i < m->ncomps; i++) print_comp(b, order[i]);
  tr_free(order);
}
