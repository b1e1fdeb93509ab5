/* emit.c - the C emitter (docs/EMITTER.md). A module becomes one C
 * translation unit: a fixed prelude (exact narrow-float conversions that
 * mirror src/ir/dtype.c, integer edge-case helpers, strided copies), then
 * one kernel function per array instruction or loop fusion, then one
 * function per called computation, then the exported entry.
 *
 * Values follow the reference interpreter (src/eval/eval_elem.c) exactly:
 * a float element is held as a double that is exactly representable in
 * its type, each op is computed in double and rounded once to its type
 * (exact for + - * / sqrt since 53 >= 2p + 2); transcendentals call the
 * same long-double libm functions; integers are held canonical in uint64
 * (sign-extended for signed types, masked for unsigned, 0/1 for pred),
 * computed wrapping, and canonicalized after each op. Ops whose reference
 * works on bit patterns (float abs/negate, select, total-order compare,
 * NaN-widening convert, reduce-precision) do the same here when not fused.
 *
 * Buffers: every array leaf an instruction produces is one calloc'd block
 * freed when its computation function returns; tuples, get-tuple-element
 * and parameters only rename leaves, so they cost nothing.
 *
 * This file is the driver (element values, lane loops, loop fusion,
 * computations, the entry); the kernels of other ops are in emit_move.c,
 * emit_dot.c and emit_call.c, the shared state in emitint.h. */
#include "emitint.h"

void tr_emit_opts_init(tr_emit_opts *o) {
  memset(o, 0, sizeof *o);
  o->lanes = 8;
  o->tile = 16;
  o->fuse_loops = true;
}

static const char *opname(const tr_instr *in) {
  return in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
}

tr_status em_unsup(em *e, const tr_instr *in, const char *why) {
  const char *file = e->m->file ? e->m->file : "<module>";
  if (in->line > 0)
    tr_diag_errorf(e->d, "%s:%d:%d: error: in %%%s: unsupported: %s in builtin%s%s%s", file,
                   in->line, in->col, in->name, opname(in), why ? " (" : "", why ? why : "",
                   why ? ")" : "");
  else
    tr_diag_errorf(e->d, "%s: error: in %%%s: unsupported: %s in builtin%s%s%s", file, in->name,
                   opname(in), why ? " (" : "", why ? why : "", why ? ")" : "");
  return TR_ERR_UNSUPPORTED;
}

bool em_window_arrays(const tr_attr *wa, int rank, int64_t *wsize, int64_t *stride, int64_t *padlo,
                      int64_t *ld, int64_t *rd) {
  bool empty = false;
  for (int d = 0; d < rank; d++) {
    const tr_window_dim *w = &wa->u.win[d];
    wsize[d] = w->size;
    stride[d] = w->stride;
    padlo[d] = w->pad_lo;
    ld[d] = w->lhs_dilate;
    rd[d] = w->rhs_dilate;
    empty |= w->size <= 0;
  }
  return empty;
}

/* Whether every array leaf of s has a core element type and static dims. */
static bool shape_ok(const tr_shape *s) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (!shape_ok(s->elems[i])) return false;
    return true;
  }
  if (s->dtype == TR_DT_TOKEN) return true;
  if (!tr_dtype_is_array(s->dtype) || !tr_dtypes[s->dtype].core) return false;
  if (tr_dtypes[s->dtype].kind == TR_DK_COMPLEX) return false;
  if (s->rank > 32) return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

/* Array leaves of s, depth-first, tokens skipped (target.h's
 * tr_shape_leaves order, the order of the entry's in[] and out[]). */
static int shape_leaves(const tr_shape *s, const tr_shape **out, int max) {
  if (s->dtype == TR_DT_TUPLE) {
    int n = 0;
    for (int i = 0; i < s->nelems; i++)
      n += shape_leaves(s->elems[i], out ? out + n : NULL, max - n > 0 ? max - n : 0);
    return n;
  }
  if (!tr_dtype_is_array(s->dtype)) return 0;
  if (out && max > 0) out[0] = s;
  return 1;
}

static int leaf_count(const tr_shape *s) { return shape_leaves(s, NULL, 0); }

static char *xfmt(const char *f, ...) __attribute__((format(printf, 1, 2)));
static char *xfmt(const char *f, ...) {
  tr_buf b = {0};
  va_list ap;
  va_start(ap, f);
  tr_buf_vprintf(&b, f, ap);
  va_end(ap);
  if (!b.p) return tr_xstrdup("");
  return b.p;
}

static void set_leaves(em *e, const tr_instr *in, int n) {
  leaves *l = &e->lv[in->id];
  l->n = n;
  l->leaf = tr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(char *));
  l->shape = tr_xcalloc(n > 0 ? (size_t)n : 1, sizeof(tr_shape *));
}

/* Leaves that are new buffers b[k] of the computation function, freed
 * when it returns. One array, not one variable each: cc -O2 spends
 * seconds on functions with hundreds of pointer locals. */
static void own_leaves(em *e, const tr_instr *in) {
  const tr_shape *sh[TR_EMIT_MAX_LEAVES];
  int n = shape_leaves(in->shape, sh, TR_EMIT_MAX_LEAVES);
  set_leaves(e, in, n);
  for (int j = 0; j < n; j++) {
    e->lv[in->id].leaf[j] = xfmt("b[%d]", e->nb++);
    e->lv[in->id].shape[j] = sh[j];
  }
}

/* Allocates the owned leaves of in. */
static void alloc_leaves(em *e, const tr_instr *in, tr_buf *body) {
  leaves *l = &e->lv[in->id];
  for (int j = 0; j < l->n; j++)
    tr_buf_printf(body, "  if (!(%s = (u8 *)tr_alloc(%lld))) { rc = 1; goto out; }\n", l->leaf[j],
                  (long long)bytes_of(l->shape[j]));
}

static const char *leaf0(em *e, const tr_instr *op) { return e->lv[op->id].leaf[0]; }

/* "{a, b, c}" of every leaf of the given instructions. */
static void leaf_list(em *e, tr_instr *const *ins, int n, tr_buf *b) {
  int k = 0;
  tr_buf_puts(b, "{");
  for (int i = 0; i < n; i++)
    for (int j = 0; j < e->lv[ins[i]->id].n; j++, k++)
      tr_buf_printf(b, "%s%s", k ? ", " : "", e->lv[ins[i]->id].leaf[j]);
  if (k == 0) tr_buf_puts(b, "0");
  tr_buf_puts(b, "}");
}

/* ---- elementwise values ---- */

typedef enum { CMP_EQ, CMP_NE, CMP_LT, CMP_LE, CMP_GT, CMP_GE, CMP_BAD } cmpdir;

static cmpdir cmp_dir(const tr_instr *in, bool *total) {
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIRECTION);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TYPE);
  static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  *total = ta && ta->u.s && strcmp(ta->u.s, "TOTALORDER") == 0;
  for (int i = 0; i < 6; i++)
    if (da && da->u.s && strcmp(da->u.s, names[i]) == 0) return (cmpdir)i;
  return CMP_BAD;
}

static const char *const cmp_c[] = {"==", "!=", "<", "<=", ">", ">="};

/* The elementwise ops em_elem_value spells: ops.def's elementwise ops
 * the emitter takes ('e'), but reduce-precision, which has a kernel of its
 * own (k_reduce_precision). */
bool em_elem_op(tr_op op) {
  return (tr_ops[op].flags & TR_OPF_E) && tr_op_can(op, TR_MODE_EMIT) && op != TR_OP_REDUCE_PRECISION;
}

/* The C spellings of kernels.def, per type family: float, integer, and
 * pred where it differs from integer. */
typedef struct {
  const char *flt, *ints, *pred;
} spelling;

static const spelling spellings[TR_OP_COUNT] = {
#define K1(E, fk, ik, sl, sd, rule, c, ci, cp, cost, u64, u32, un) [TR_OP_##E] = {c, ci, cp},
#define K2(E, fk, ik, c, ci, cp, cost, u64, u32, un) [TR_OP_##E] = {c, ci, cp},
#include "../ir/kernels.def"
#undef K1
#undef K2
};

/* Writes spelling t over operands a for element type dt (kernels.def's
 * placeholders: $0, $1 the operands, $f 'f' or 'd', $b bits, $m value
 * mask, $s signed, $n minimum, $i "(i64)" when signed). */
static void spell(tr_buf *x, const char *t, const char *const *a, tr_dtype dt) {
  int bits = bits_of(dt);
  bool sg = is_sg(dt);
  for (; *t; t++) {
    char c = t[0] == '$' ? t[1] : 0;
    if (c == '0' || c == '1') tr_buf_puts(x, a[c - '0']);
    else if (c == 'f') tr_buf_putc(x, dt == TR_DT_F32 ? 'f' : 'd');
    else if (c == 'b') tr_buf_printf(x, "%d", bits);
    else if (c == 'm') tr_buf_printf(x, "0x%llxull", (unsigned long long)mask_of(bits));
    else if (c == 's') tr_buf_printf(x, "%d", sg);
    else if (c == 'n') tr_buf_printf(x, "0x%llxull", (unsigned long long)tr_int_min(dt));
    else if (c == 'i') tr_buf_puts(x, sg ? "(i64)" : "");
    else c = 0;
    if (c) t++;
    else tr_buf_putc(x, *t);
  }
}

/* Value of converting a (a value of type st) to dt, unrounded. */
void em_convert_value(tr_buf *x, tr_dtype st, tr_dtype dt, const char *a, uint64_t inj) {
  if (st == dt) {
    tr_buf_puts(x, a);
  } else if (TR_INJECTED(inj, EMIT_NARROW_UNPACK_ZEXT) && is_sg(st) && !is_flt(st) &&
             bits_of(st) <= 8 && (is_flt(dt) || bits_of(dt) > bits_of(st))) {
    /* defect: the narrow value is unpacked as unsigned (no sign extension),
     * so only negative s4/s8 values come out wrong */
    if (is_flt(dt)) tr_buf_printf(x, "(double)((%s) & 0x%llxull)", a, (unsigned long long)mask_of(bits_of(st)));
    else tr_buf_printf(x, "((%s) & 0x%llxull)", a, (unsigned long long)mask_of(bits_of(st)));
  } else if (is_flt(st)) {
    if (TR_INJECTED(inj, EMIT_F8E4M3FN_SATURATE) && dt == TR_DT_F8E4M3FN)
      /* defect: a saturating FP8 cast (as many FP8 libraries do) where the
       * reference overflows to NaN; only |x| >= 464 and infinities differ */
      tr_buf_printf(x, "(fabs(%s) > 448.0 ? copysign(448.0, %s) : (%s))", a, a, a);
    else if (is_flt(dt)) tr_buf_puts(x, a);
    else if (dt == TR_DT_PRED) tr_buf_printf(x, "(u64)((%s) != 0)", a);
    else
      tr_buf_printf(x, "tr_f2i(%s, %d, (i64)0x%llxull, 0x%llxull)", a, is_sg(dt),
                    (unsigned long long)tr_int_min(dt), (unsigned long long)tr_int_max(dt));
  } else if (is_flt(dt)) {
    bool sg = is_sg(st);
    if (dt == TR_DT_F64) tr_buf_printf(x, sg ? "(double)(i64)(%s)" : "(double)(%s)", a);
    else tr_buf_printf(x, sg ? "(double)(float)(i64)(%s)" : "(double)(float)(%s)", a);
  } else {
    tr_buf_puts(x, a);
  }
}

/* The unrounded value of elementwise in over operand values a[] (C
 * expressions of each operand's value type). False: unsupported. */
bool em_elem_value(const tr_instr *in, const char *const *a, tr_buf *x, uint64_t inj) {
  tr_op op = in->op;
  if (op == TR_OP_SELECT) {
    tr_buf_printf(x, "((%s) ? (%s) : (%s))", a[0], a[1], a[2]);
    return true;
  }
  if (op == TR_OP_CONVERT) {
    em_convert_value(x, in->operands[0]->shape->dtype, in->shape->dtype, a[0], inj);
    return true;
  }
  tr_dtype dt = op == TR_OP_CLAMP ? in->operands[1]->shape->dtype : in->operands[0]->shape->dtype;
  int bits = bits_of(dt);
  bool sg = is_sg(dt), pred = dt == TR_DT_PRED;
  if (op == TR_OP_COPY) {
    tr_buf_puts(x, a[0]);
    return true;
  }
  if (op == TR_OP_COMPARE) {
    bool total;
    cmpdir d = cmp_dir(in, &total);
    if (d == CMP_BAD) return false;
    if (is_flt(dt) && total) return false; /* on bit patterns: see k_compare_total */
    if (is_flt(dt) && d == CMP_NE) tr_buf_printf(x, "(u64)!((%s) == (%s))", a[0], a[1]);
    else if (sg) tr_buf_printf(x, "(u64)((i64)(%s) %s (i64)(%s))", a[0], cmp_c[d], a[1]);
    else if (TR_INJECTED(inj, EMIT_UNSIGNED_CMP_SIGNED) && !pred && bits >= 32 && d != CMP_EQ &&
             d != CMP_NE)
      /* defect: an ordered u32/u64 compare on the values read as signed of
       * the same width; only operands with the top bit set come out wrong */
      tr_buf_printf(x, "(u64)((%s)(%s) %s (%s)(%s))", bits == 32 ? "int32_t" : "i64", a[0],
                    cmp_c[d], bits == 32 ? "int32_t" : "i64", a[1]);
    else tr_buf_printf(x, "(u64)((%s) %s (%s))", a[0], cmp_c[d], a[1]);
    return true;
  }
  if (op == TR_OP_CLAMP) {
    /* a NaN lo, x or hi wins (in that order); else min(hi, max(x, lo)) */
    if (is_flt(dt))
      tr_buf_printf(x, "tr_clamp%c(%s, %s, %s)", dt == TR_DT_F32 ? 'f' : 'd', a[0], a[1], a[2]);
    else if (sg)
      tr_buf_printf(x, "(((i64)((i64)(%s) < (i64)(%s) ? (%s) : (%s))) < (i64)(%s) ? "
                       "((i64)(%s) < (i64)(%s) ? (%s) : (%s)) : (%s))",
                    a[1], a[0], a[0], a[1], a[2], a[1], a[0], a[0], a[1], a[2]);
    else
      tr_buf_printf(x, "((((%s) < (%s) ? (%s) : (%s))) < (%s) ? ((%s) < (%s) ? (%s) : (%s)) : (%s))",
                    a[1], a[0], a[0], a[1], a[2], a[1], a[0], a[0], a[1], a[2]);
    return true;
  }
  if (TR_INJECTED(inj, EMIT_SHIFT_AMOUNT_MOD_WIDTH) && op == TR_OP_SHIFT_LEFT && bits == 32) {
    /* defect: the hardware's 32-bit shift, amount mod 32; amounts >= 32
     * should give 0 */
    tr_buf_printf(x, "((u64)((uint32_t)(%s) << ((uint32_t)(%s) & 31u)))", a[0], a[1]);
    return true;
  }
  const spelling *sp = &spellings[op];
  const char *t = is_flt(dt) ? sp->flt : pred && sp->pred ? sp->pred : sp->ints;
  if (!t) return false;
  spell(x, t, a, dt);
  return true;
}

/* ---- lane loops ---- */

/* Wraps the per-element function eK(r, a..., i) in a loop over n
 * elements: full chunks of `lanes` lanes, then one masked chunk. */
/* Every kernel is int kK(u8 *r, const u8 *a0, ..., i64 n): n is the
 * result's element count, so kernels that differ only in size are one
 * text and are emitted once (finish_kernel). */
void em_kern_head(em *e, int nargs) {
  tr_buf *k = &e->cur;
  tr_buf_puts(k, "static int kK(u8 *r");
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
}

/* Wraps the per-element function eK(r, a..., i) in a loop over n
 * elements: full chunks of `lanes` lanes, then one masked chunk. indep:
 * lane l writes only element i0 + l and reads nothing the chunk writes,
 * so the chunk's loop is marked TR_IVDEP and GCC vectorizes it at -O2
 * (without the mark it would need a run-time alias check, which -O2's
 * very-cheap cost model refuses). Not for packed s4/u4 results: two lanes
 * read-modify-write one byte. */
void em_lane_loop(em *e, int nargs, bool indep) {
  tr_buf *k = &e->cur;
  em_kern_head(e, nargs);
  tr_buf_printf(k, "  i64 i0 = 0;\n  int l;\n  for (; i0 + %d <= n; i0 += %d)\n    %sfor (l = 0; l < %d; l++) eK(r",
                e->o->lanes, e->o->lanes, indep ? "TR_IVDEP " : "", e->o->lanes);
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", a%d", i);
  tr_buf_printf(k, ", i0 + l);\n  /* masked tail: lanes at or past n are off */\n"
                   "  for (l = 0; l < %d; l++)\n    if (i0 + l < n%s) eK(r", e->o->lanes,
                /* defect: the tail's bound is one short (only n % lanes != 0 reaches it) */
                TR_INJECTED(e->o->inject, EMIT_TAIL_MASK_SHORT) ? " - 1" : "");
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", a%d", i);
  tr_buf_puts(k, ", i0 + l);\n  return 0;\n}\n");
}

void em_elem_head(em *e, int nargs) {
  tr_buf_puts(&e->cur, "static inline void eK(u8 *r");
  for (int i = 0; i < nargs; i++) tr_buf_printf(&e->cur, ", const u8 *a%d", i);
  tr_buf_puts(&e->cur, ", i64 i) {\n");
}

/* Emits the kernel in e->cur under id, or returns the id of an identical
 * one emitted before. */
static int finish_kernel(em *e, int id) {
  const char *t = tr_buf_str(&e->cur);
  for (int i = 0; i < e->nk; i++)
    if (strcmp(e->ktext[i], t) == 0) {
      tr_buf_free(&e->cur);
      return e->kid[i];
    }
  if (e->nk == e->capk) {
    e->capk = e->capk ? 2 * e->capk : 32;
    e->ktext = tr_xrealloc(e->ktext, sizeof(char *) * (size_t)e->capk);
    e->kid = tr_xrealloc(e->kid, sizeof(int) * (size_t)e->capk);
  }
  e->ktext[e->nk] = tr_xstrdup(t);
  e->kid[e->nk++] = id;
  /* The placeholder identifiers kK and eK occur nowhere else. */
  for (const char *p = t; *p; p++) {
    bool start = p == t || !(isalnum((unsigned char)p[-1]) || p[-1] == '_');
    if (start && (p[0] == 'k' || p[0] == 'e') && p[1] == 'K' && !(isalnum((unsigned char)p[2]) || p[2] == '_')) {
      tr_buf_printf(&e->kern, "%c%d", p[0], id);
      p += 1;
    } else {
      tr_buf_putc(&e->kern, *p);
    }
  }
  tr_buf_free(&e->cur);
  return id;
}

/* Index of operand o's element for output element i: scalars broadcast. */
static const char *idx_of(const tr_instr *o) { return o->shape->rank == 0 ? "0" : "i"; }

/* A single elementwise op. Ops whose reference result depends on bit
 * patterns get bit-level bodies. */
static tr_status k_elementwise(em *e, const tr_instr *in) {
  tr_buf *k = &e->cur;
  tr_dtype rt = in->shape->dtype;
  int nop = in->noperands;
  tr_dtype t0 = in->operands[0]->shape->dtype;
  em_elem_head(e, nop);
  bool total = false;
  if (in->op == TR_OP_COMPARE) cmp_dir(in, &total);
  if ((in->op == TR_OP_ABS || in->op == TR_OP_NEGATE) && is_flt(t0)) {
    unsigned long long sign = 1ull << (bits_of(t0) - 1);
    if (in->op == TR_OP_ABS)
      tr_buf_printf(k, "  raw_put(r, %d, i, raw_get(a0, %d, i) & ~0x%llxull);\n", es_of(t0), es_of(t0), sign);
    else
      tr_buf_printf(k, "  raw_put(r, %d, i, raw_get(a0, %d, i) ^ 0x%llxull);\n", es_of(t0), es_of(t0), sign);
  } else if (in->op == TR_OP_SELECT && !is4(rt)) {
    int es = es_of(rt);
    tr_buf_printf(k, "  memcpy(r + %d * i, (LD_pred(a0, %s) ? a1 : a2) + %d * i, %d);\n", es,
                  idx_of(in->operands[0]), es, es);
  } else if (in->op == TR_OP_COPY && !is4(rt)) {
    tr_buf_printf(k, "  memcpy(r + %d * i, a0 + %d * i, %d);\n", es_of(rt), es_of(rt), es_of(rt));
  } else if (in->op == TR_OP_COMPARE && total && is_flt(t0)) {
    bool tt;
    cmpdir d = cmp_dir(in, &tt);
    tr_buf_printf(k, "  i64 ka = tr_tkey(raw_get(a0, %d, i), %d), kb = tr_tkey(raw_get(a1, %d, i), %d);\n",
                  es_of(t0), bits_of(t0), es_of(t0), bits_of(t0));
    tr_buf_printf(k, "  r[i] = ka %s kb;\n", cmp_c[d]);
  } else {
    char av[3][64];
    const char *ap[3];
    for (int j = 0; j < nop && j < 3; j++) {
      const tr_instr *o = in->operands[j];
      snprintf(av[j], sizeof av[j], "LD_%s(a%d, %s)", tr_dtype_name(o->shape->dtype), j, idx_of(o));
      ap[j] = av[j];
      tr_buf_printf(k, "  const %s x%d = %s;\n", lvt(o->shape->dtype), j, av[j]);
      snprintf(av[j], sizeof av[j], "x%d", j);
    }
    tr_buf x = {0};
    if (!em_elem_value(in, ap, &x, e->o->inject)) {
      tr_buf_free(&x);
      return em_unsup(e, in, "this direction or type");
    }
    const tr_dtype_info *sf = &tr_dtypes[t0], *df = &tr_dtypes[rt];
    if (in->op == TR_OP_CONVERT && is_flt(t0) && is_flt(rt) && sf->bits <= 16 &&
        df->mbits > sf->mbits && df->fstyle == TR_FS_IEEE &&
        (sf->fstyle == TR_FS_IEEE || sf->fstyle == TR_FS_FN)) {
      /* A widened NaN keeps its sign and payload at the top of the wider
       * mantissa (eval_elem.c widen_nans). */
      tr_buf_printf(k, "  if (isnan(x0)) {\n    u64 b = raw_get(a0, %d, i);\n"
                       "    raw_put(r, %d, i, (((b >> %d) & 1) << %d) | (0x%llxull << %d) | ((b & 0x%llxull) << %d));\n"
                       "    return;\n  }\n",
                    es_of(t0), es_of(rt), sf->bits - 1, df->bits - 1,
                    (unsigned long long)mask_of(df->ebits), df->mbits,
                    (unsigned long long)mask_of(sf->mbits), df->mbits - sf->mbits);
    }
    tr_buf_printf(k, "  ST_%s(r, i, %s);\n", tr_dtype_name(rt), tr_buf_str(&x));
    tr_buf_free(&x);
  }
  tr_buf_puts(k, "}\n");
  em_lane_loop(e, nop, !is4(rt));
  return TR_OK;
}

/* ---- loop fusion ---- */

/* A parameter or constant of another shape than the root that only
 * broadcasts read: the broadcast loads it at a mapped index. */
static bool read_by_broadcasts(const tr_instr *in, const tr_shape *rs) {
  if (in->op != TR_OP_PARAMETER && in->op != TR_OP_CONSTANT) return false;
  if (in->shape->rank == 0 || tr_shape_same_dims(in->shape, rs) || in->nusers == 0) return false;
  for (int u = 0; u < in->nusers; u++)
    if (in->users[u]->op != TR_OP_BROADCAST) return false;
  return true;
}

/* Whether fusion computation c can become one loop nest: elementwise ops,
 * parameters, constants and broadcasts (of scalars, or of parameters and
 * constants, loaded at the mapped index), every other value either scalar
 * or shaped like the root. */
static bool values_fusable(const tr_comp *c, const tr_shape *rs, const tr_instr *skip) {
  if (!rs || !tr_shape_is_array(rs) || !shape_ok(rs)) return false;
  for (int i = 0; i < c->ninstrs; i++) {
    const tr_instr *in = c->instrs[i];
    const tr_shape *s = in->shape;
    if (in == skip) continue;
    if (!tr_shape_is_array(s) || !shape_ok(s)) return false;
    if (s->rank != 0 && !tr_shape_same_dims(s, rs) && !read_by_broadcasts(in, rs)) return false;
    switch (in->op) {
    case TR_OP_PARAMETER: break;
    case TR_OP_CONSTANT:
      if (!in->literal || !in->literal->data) return false;
      break;
    case TR_OP_BROADCAST: {
      const tr_instr *o = in->operands[0];
      if (o->shape->rank != 0 && !read_by_broadcasts(o, rs)) return false;
      break;
    }
    case TR_OP_COMPARE: {
      bool total;
      if (cmp_dir(in, &total) == CMP_BAD || (total && is_flt(in->operands[0]->shape->dtype)))
        return false;
      break;
    }
    default:
      if (!em_elem_op(in->op)) return false;
    }
  }
  return true;
}

static bool loop_fusable(const tr_comp *c) {
  return c->root && values_fusable(c, c->root->shape, NULL);
}

/* An input fusion the emitter makes one kernel of: the root is a reduce
 * of the tiled kind whose init is a parameter or constant and whose input
 * the rest computes elementwise; the input is then computed inside the
 * reduce loop and never stored. */
static bool input_fusable(const tr_comp *c) {
  const tr_instr *r = c->root;
  if (!r || r->op != TR_OP_REDUCE || !em_simple_reduce(r)) return false;
  const tr_instr *init = r->operands[1], *x = r->operands[0];
  if (init->op != TR_OP_PARAMETER && init->op != TR_OP_CONSTANT) return false;
  if (x->op == TR_OP_PARAMETER) return false; /* nothing to fuse */
  return values_fusable(c, x->shape, r);
}

static void emit_constant_data(em *e, int id, int leaf, const tr_literal *lit, int64_t nbytes) {
  tr_buf *k = &e->kern; /* data, not a kernel */
  tr_buf_printf(k, "static const u8 c%d_%d[%lld] = ", id, leaf, (long long)(nbytes > 0 ? nbytes : 1));
  if (nbytes == 0) {
    tr_buf_puts(k, "{0};\n");
    return;
  }
  /* A string of octal escapes (no terminating zero: the array's size is
   * given): one token per line for the C compiler's lexer instead of two
   * per byte, and no printf per byte here. */
  const unsigned char *p = lit->data;
  bool packed = is4(lit->shape->dtype);
  int64_t n = count_of(lit->shape);
  char esc[4] = {'\\', 0, 0, 0};
  for (int64_t i = 0; i < nbytes; i++) {
    unsigned v = p[i];
    if (packed) { /* two elements of one byte each, low nibble first */
      v = p[2 * i] & 15u;
      if (2 * i + 1 < n) v |= (p[2 * i + 1] & 15u) << 4;
    }
    if (i % 32 == 0) tr_buf_puts(k, i ? "\"\n\"" : "\n\"");
    esc[1] = (char)('0' + (v >> 6));
    esc[2] = (char)('0' + ((v >> 3) & 7));
    esc[3] = (char)('0' + (v & 7));
    tr_buf_putn(k, esc, 4);
  }
  tr_buf_puts(k, "\";\n");
}

/* Emits "const T v<id> = ...;" for every instruction of c but skip, as
 * its value at element i of shape rs (the loop nest's index space). */
tr_status em_fused_values(em *e, const tr_comp *c, const tr_shape *rs, const tr_instr *skip) {
  tr_buf *k = &e->cur;
  for (int i = 0; i < c->ninstrs; i++) {
    const tr_instr *x = c->instrs[i];
    if (x->op == TR_OP_CONSTANT) emit_constant_data(e, x->id, 0, x->literal, bytes_of(x->shape));
  }
  for (int i = 0; i < c->ninstrs; i++) {
    const tr_instr *x = c->instrs[i];
    if (x == skip) continue;
    tr_dtype t = x->shape->dtype;
    const char *ix = x->shape->rank == 0 ? "0" : "i";
    if (read_by_broadcasts(x, rs)) continue; /* loaded by its broadcasts */
    if (x->op == TR_OP_BROADCAST && x->operands[0]->shape->rank != 0) {
      /* The operand's element under output element i: the output index
       * digits of the mapped dims, weighted by the operand's strides. */
      const tr_instr *o = x->operands[0];
      int n;
      const int64_t *dm = tr_attr_ints(x, TR_ATTR_DIMENSIONS, &n);
      int64_t ost[64], st[64];
      strides(o->shape, ost);
      for (int d = 0; d < rs->rank; d++) st[d] = 0;
      if (TR_INJECTED(e->o->inject, FUSION_BCAST_SIZE1_MAP)) {
        /* defect: size-1 operand dims are skipped as "always index 0", but
         * the mapped output dims are then paired by the skipped count, so
         * every later dim lands one place early */
        for (int j = 0, jj = 0; j < n && j < o->shape->rank; j++)
          if (o->shape->dims[j] != 1) st[dm[jj++]] = ost[j];
      } else {
        for (int j = 0; j < n && j < o->shape->rank; j++) st[dm[j]] = ost[j];
      }
      tr_buf_printf(k, "  i64 j%d = 0, q%d = i;\n", x->id, x->id);
      for (int d = rs->rank - 1; d >= 0; d--) {
        if (st[d]) tr_buf_printf(k, "  j%d += (q%d %% %lldLL) * %lldLL;\n", x->id, x->id, (long long)rs->dims[d], (long long)st[d]);
        if (d > 0) tr_buf_printf(k, "  q%d /= %lldLL;\n", x->id, (long long)rs->dims[d]);
      }
      if (o->op == TR_OP_PARAMETER)
        tr_buf_printf(k, "  const %s v%d = LD_%s(a%lld, j%d);\n", lvt(t), x->id, tr_dtype_name(t),
                      (long long)o->param_index, x->id);
      else
        tr_buf_printf(k, "  const %s v%d = LD_%s(c%d_0, j%d);\n", lvt(t), x->id, tr_dtype_name(t), o->id, x->id);
      continue;
    }
    tr_buf_printf(k, "  const %s v%d = ", lvt(t), x->id);
    if (x->op == TR_OP_PARAMETER) {
      tr_buf_printf(k, "LD_%s(a%lld, %s);\n", tr_dtype_name(t), (long long)x->param_index, ix);
    } else if (x->op == TR_OP_CONSTANT) {
      tr_buf_printf(k, "LD_%s(c%d_0, %s);\n", tr_dtype_name(t), x->id, ix);
    } else if (x->op == TR_OP_BROADCAST) {
      tr_buf_printf(k, "v%d;\n", x->operands[0]->id);
    } else {
      char names[3][24];
      const char *ap[3];
      for (int j = 0; j < x->noperands && j < 3; j++) {
        snprintf(names[j], sizeof names[j], "v%d", x->operands[j]->id);
        ap[j] = names[j];
      }
      tr_buf v = {0};
      if (!em_elem_value(x, ap, &v, e->o->inject)) {
        tr_buf_free(&v);
        tr_buf_puts(k, "0;\n}\n");
        return em_unsup(e, x, NULL);
      }
      round_to(k, t, tr_buf_str(&v));
      tr_buf_puts(k, ";\n");
      tr_buf_free(&v);
    }
  }
  return TR_OK;
}

static tr_status k_loop_fusion(em *e, const tr_instr *in, const tr_comp *c) {
  em_elem_head(e, c->nparams);
  tr_status st = em_fused_values(e, c, c->root->shape, NULL);
  if (st != TR_OK) return st;
  tr_buf_printf(&e->cur, "  ST_%s(r, i, v%d);\n}\n", tr_dtype_name(c->root->shape->dtype), c->root->id);
  em_lane_loop(e, c->nparams, !is4(c->root->shape->dtype));
  return TR_OK;
}

/* ---- computations ---- */

/* Calls computation c with args, results into in's owned leaves. */
static void call_comp(em *e, const tr_comp *c, tr_instr *const *args, int nargs,
                      const tr_instr *in, tr_buf *body) {
  tr_buf_puts(body, "  {\n    u8 *args[] = ");
  leaf_list(e, args, nargs, body);
  tr_buf_puts(body, ";\n    u8 *res[] = ");
  tr_instr *self = (tr_instr *)in;
  leaf_list(e, &self, 1, body);
  tr_buf_printf(body, ";\n    if ((rc = comp%d(args, res)) != 0) goto out;\n  }\n", c->id);
}

static tr_status emit_while(em *e, const tr_instr *in, tr_buf *body) {
  const tr_comp *cond = tr_attr_comp(in, TR_ATTR_CONDITION), *bd = tr_attr_comp(in, TR_ATTR_BODY);
  if (!cond || !bd) return em_unsup(e, in, "condition or body");
  tr_status s = emit_comp(e, cond);
  if (s == TR_OK) s = emit_comp(e, bd);
  if (s != TR_OK) return s;
  own_leaves(e, in);
  leaves *l = &e->lv[in->id];
  const leaves *ol = &e->lv[in->operands[0]->id];
  /* State in the while's own leaves b[k], the body's results in scratch
   * w[k]; swapped after each trip. */
  int w0 = e->nw;
  e->nw += l->n;
  for (int j = 0; j < l->n; j++) {
    long long nb = bytes_of(l->shape[j]);
    tr_buf_printf(body, "  if (!(%s = (u8 *)tr_alloc(%lld)) || !(w[%d] = (u8 *)tr_alloc(%lld))) { rc = 1; goto out; }\n",
                  l->leaf[j], nb, w0 + j, nb);
    tr_buf_printf(body, "  memcpy(%s, %s, %lld);\n", l->leaf[j], ol->leaf[j], nb);
  }
  tr_buf_puts(body, "  for (;;) {\n    u8 pv = 0;\n    u8 *pr[1] = {&pv};\n    u8 *st[] = {");
  for (int j = 0; j < l->n; j++) tr_buf_printf(body, "%s%s", j ? ", " : "", l->leaf[j]);
  if (l->n == 0) tr_buf_puts(body, "0");
  tr_buf_puts(body, "};\n    u8 *nx[] = {");
  for (int j = 0; j < l->n; j++) tr_buf_printf(body, "%sw[%d]", j ? ", " : "", w0 + j);
  if (l->n == 0) tr_buf_puts(body, "0");
  tr_buf_printf(body, "};\n    if ((rc = comp%d(st, pr)) != 0) goto out;\n    if (!pv) break;\n"
                      "    if ((rc = comp%d(st, nx)) != 0) goto out;\n", cond->id, bd->id);
  for (int j = 0; j < l->n; j++)
    tr_buf_printf(body, "    { u8 *t_ = %s; %s = w[%d]; w[%d] = t_; }\n", l->leaf[j], l->leaf[j], w0 + j, w0 + j);
  tr_buf_puts(body, "  }\n");
  return TR_OK;
}

static tr_status emit_conditional(em *e, const tr_instr *in, tr_buf *body) {
  const tr_attr *bc = tr_instr_attr(in, TR_ATTR_BRANCH_COMPUTATIONS);
  const tr_comp *two[2] = {tr_attr_comp(in, TR_ATTR_TRUE_COMPUTATION), tr_attr_comp(in, TR_ATTR_FALSE_COMPUTATION)};
  tr_comp *const *br = bc ? bc->u.comps : (tr_comp *const *)two;
  int nb = bc ? bc->n : 2;
  if (nb < 1 || in->noperands != nb + 1) return em_unsup(e, in, "branches");
  for (int i = 0; i < nb; i++) {
    if (!br[i]) return em_unsup(e, in, "branches");
    tr_status s = emit_comp(e, br[i]);
    if (s != TR_OK) return s;
  }
  own_leaves(e, in);
  alloc_leaves(e, in, body);
  const tr_instr *sel = in->operands[0];
  tr_dtype st = sel->shape->dtype;
  if (st == TR_DT_PRED)
    tr_buf_printf(body, "  {\n    i64 sel = LD_pred(%s, 0) ? 0 : 1;\n", leaf0(e, sel));
  else
    tr_buf_printf(body, "  {\n    i64 sel = (i64)LD_%s(%s, 0);\n", tr_dtype_name(st), leaf0(e, sel));
  tr_buf_printf(body, "    if (sel < 0 || sel >= %d) sel = %d;\n    u8 *res[] = ", nb, nb - 1);
  tr_instr *self = (tr_instr *)in;
  leaf_list(e, &self, 1, body);
  tr_buf_puts(body, ";\n    switch (sel) {\n");
  for (int i = 0; i < nb; i++) {
    tr_buf_printf(body, "    case %d: {\n      u8 *args[] = ", i);
    leaf_list(e, &in->operands[i + 1], 1, body);
    tr_buf_printf(body, ";\n      rc = comp%d(args, res);\n      break;\n    }\n", br[i]->id);
  }
  tr_buf_puts(body, "    }\n    if (rc) goto out;\n  }\n");
  return TR_OK;
}

/* Array leaves of a literal, depth-first; -1 when one is elided. */
static int literal_leaves(const tr_literal *l, const tr_literal **out, int max) {
  if (!l) return -1;
  if (l->shape->dtype == TR_DT_TUPLE) {
    int n = 0;
    for (int i = 0; i < l->nelems; i++) {
      int k = literal_leaves(l->elems[i], out ? out + n : NULL, max - n > 0 ? max - n : 0);
      if (k < 0) return -1;
      n += k;
    }
    return n;
  }
  if (!tr_dtype_is_array(l->shape->dtype)) return 0;
  if (!l->data) return -1; /* elided and not filled */
  if (out && max > 0) out[0] = l;
  return 1;
}

/* Collectives with one replica and one partition (eval.c): each operand
 * comes back unchanged, except that collective-permute gives zeros unless
 * a pair sends replica 0 to itself. */
static tr_status emit_collective(em *e, const tr_instr *in, tr_buf *body) {
  for (int i = 0; i < e->m->nhattrs; i++)
    if ((strcmp(e->m->hattrs[i].name, "replica_count") == 0 ||
         strcmp(e->m->hattrs[i].name, "num_partitions") == 0) && strcmp(e->m->hattrs[i].text, "1") != 0)
      return em_unsup(e, in, "more than one participant");
  const tr_shape *s = in->shape;
  int n = in->noperands;
  bool tuple = s->dtype == TR_DT_TUPLE;
  if ((tuple && s->nelems != n) || (!tuple && n != 1)) return em_unsup(e, in, "operands");
  for (int i = 0; i < n; i++) {
    const tr_shape *es = tuple ? s->elems[i] : s;
    if (!tr_shape_is_array(in->operands[i]->shape) || !tr_shape_equal(es, in->operands[i]->shape))
      return em_unsup(e, in, "a shape change (one participant is modelled)");
  }
  bool zeros = false;
  if (in->op == TR_OP_COLLECTIVE_PERMUTE) {
    const tr_attr *pa = tr_instr_attr(in, TR_ATTR_SOURCE_TARGET_PAIRS);
    zeros = true;
    for (int i = 0; pa && i < pa->n; i++)
      if (pa->u.intss.lens[i] == 2 && pa->u.intss.v[i][0] == 0 && pa->u.intss.v[i][1] == 0) zeros = false;
  }
  if (zeros) {
    own_leaves(e, in);
    alloc_leaves(e, in, body); /* calloc: zeros */
    return TR_OK;
  }
  set_leaves(e, in, n);
  for (int i = 0; i < n; i++) {
    e->lv[in->id].leaf[i] = tr_xstrdup(leaf0(e, in->operands[i]));
    e->lv[in->id].shape[i] = in->operands[i]->shape;
  }
  return TR_OK;
}

/* One instruction of a computation function. */
static tr_status emit_instr(em *e, const tr_comp *c, const tr_instr *in, tr_buf *body) {
  if (!shape_ok(in->shape)) return em_unsup(e, in, "element type or dynamic shape");
  if (leaf_count(in->shape) > TR_EMIT_MAX_LEAVES) return em_unsup(e, in, "more than 1024 tuple leaves");
  for (int i = 0; i < in->noperands; i++)
    if (!shape_ok(in->operands[i]->shape)) return em_unsup(e, in, "operand element type or dynamic shape");
  switch (in->op) {
  case TR_OP_PARAMETER: {
    int off = 0;
    for (int64_t p = 0; p < in->param_index && p < c->nparams; p++) off += leaf_count(c->params[p]->shape);
    const tr_shape *sh[TR_EMIT_MAX_LEAVES];
    int n = shape_leaves(in->shape, sh, TR_EMIT_MAX_LEAVES);
    set_leaves(e, in, n);
    for (int j = 0; j < n; j++) {
      e->lv[in->id].leaf[j] = xfmt("p[%d]", off + j);
      e->lv[in->id].shape[j] = sh[j];
    }
    return TR_OK;
  }
  case TR_OP_TUPLE: {
    int n = 0;
    for (int i = 0; i < in->noperands; i++) n += e->lv[in->operands[i]->id].n;
    set_leaves(e, in, n);
    n = 0;
    for (int i = 0; i < in->noperands; i++) {
      const leaves *o = &e->lv[in->operands[i]->id];
      for (int j = 0; j < o->n; j++, n++) {
        e->lv[in->id].leaf[n] = tr_xstrdup(o->leaf[j]);
        e->lv[in->id].shape[n] = o->shape[j];
      }
    }
    return TR_OK;
  }
  case TR_OP_GET_TUPLE_ELEMENT: {
    const tr_attr *ia = tr_instr_attr(in, TR_ATTR_INDEX);
    const tr_shape *ts = in->operands[0]->shape;
    if (!ia || ts->dtype != TR_DT_TUPLE || ia->u.i < 0 || ia->u.i >= ts->nelems) return em_unsup(e, in, "index");
    int off = 0;
    for (int64_t i = 0; i < ia->u.i; i++) off += leaf_count(ts->elems[i]);
    int n = leaf_count(ts->elems[ia->u.i]);
    const leaves *o = &e->lv[in->operands[0]->id];
    set_leaves(e, in, n);
    for (int j = 0; j < n; j++) {
      e->lv[in->id].leaf[j] = tr_xstrdup(o->leaf[off + j]);
      e->lv[in->id].shape[j] = o->shape[off + j];
    }
    return TR_OK;
  }
  case TR_OP_OPT_BARRIER: case TR_OP_DOMAIN: case TR_OP_ADD_DEPENDENCY: {
    const leaves *o = &e->lv[in->operands[0]->id];
    set_leaves(e, in, o->n);
    for (int j = 0; j < o->n; j++) {
      e->lv[in->id].leaf[j] = tr_xstrdup(o->leaf[j]);
      e->lv[in->id].shape[j] = o->shape[j];
    }
    return TR_OK;
  }
  case TR_OP_AFTER_ALL:
    set_leaves(e, in, 0);
    return TR_OK;
  case TR_OP_CONSTANT: {
    /* Each array leaf of the literal is static data c<id>_<j>. */
    const tr_literal *lits[TR_EMIT_MAX_LEAVES];
    int n = literal_leaves(in->literal, lits, TR_EMIT_MAX_LEAVES);
    if (n < 0 || n != leaf_count(in->shape) || n > TR_EMIT_MAX_LEAVES) return em_unsup(e, in, "elided constant");
    set_leaves(e, in, n);
    for (int j = 0; j < n; j++) {
      emit_constant_data(e, in->id, j, lits[j], bytes_of(lits[j]->shape));
      e->lv[in->id].leaf[j] = xfmt("(u8 *)c%d_%d", in->id, j);
      e->lv[in->id].shape[j] = lits[j]->shape;
    }
    return TR_OK;
  }
  case TR_OP_ALL_REDUCE: case TR_OP_ALL_GATHER: case TR_OP_REDUCE_SCATTER: case TR_OP_ALL_TO_ALL:
  case TR_OP_COLLECTIVE_PERMUTE:
    return emit_collective(e, in, body);
  case TR_OP_WHILE: return emit_while(e, in, body);
  case TR_OP_CONDITIONAL: return emit_conditional(e, in, body);
  case TR_OP_CALL: {
    const tr_comp *cc = tr_attr_comp(in, TR_ATTR_TO_APPLY);
    if (!cc) return em_unsup(e, in, "to_apply");
    tr_status s = emit_comp(e, cc);
    if (s != TR_OK) return s;
    own_leaves(e, in);
    alloc_leaves(e, in, body);
    call_comp(e, cc, in->operands, in->noperands, in, body);
    return TR_OK;
  }
  case TR_OP_FUSION: {
    const tr_comp *fc = tr_instr_fused(in);
    if (!fc) return em_unsup(e, in, "calls");
    if (e->o->fuse_loops && (loop_fusable(fc) || input_fusable(fc))) break; /* a kernel below */
    tr_status s = emit_comp(e, fc);
    if (s != TR_OK) return s;
    own_leaves(e, in);
    alloc_leaves(e, in, body);
    call_comp(e, fc, in->operands, in->noperands, in, body);
    return TR_OK;
  }
  default: break;
  }
  /* Array ops: one kernel k<id>(result, operands..., n). Ops that may
   * give a tuple take the result leaves as an array (u8 **rs). */
  bool multi = (in->op == TR_OP_REDUCE && !em_simple_reduce(in)) || in->op == TR_OP_SORT ||
               in->op == TR_OP_RNG_BIT_GENERATOR ||
               in->op == TR_OP_TOPK || in->op == TR_OP_SCATTER ||
               (in->op == TR_OP_REDUCE_WINDOW && !em_simple_reduce_window(in));
  if (!tr_shape_is_array(in->shape) && !multi) return em_unsup(e, in, "tuple result");
  for (int i = 0; i < in->noperands; i++)
    if (!tr_shape_is_array(in->operands[i]->shape)) return em_unsup(e, in, "tuple operand");
  if (in->noperands > TR_EMIT_MAX_LEAVES) return em_unsup(e, in, "more than 1024 operands");
  /* Kernels that move elements as bytes (or hand their addresses to a
   * called computation) see s4/u4 one per byte: their packed operands are
   * unpacked into scratch before the call and their results packed after. */
  bool bytewise = multi || in->op == TR_OP_MAP || in->op == TR_OP_GATHER ||
                  in->op == TR_OP_SELECT_AND_SCATTER || in->op == TR_OP_BITCAST_CONVERT;
  bool any4 = false;
  for (int i = 0; i < in->noperands; i++) any4 |= is4(in->operands[i]->shape->dtype);
  {
    const tr_shape *rsh[TR_EMIT_MAX_LEAVES];
    int nrl = shape_leaves(in->shape, rsh, TR_EMIT_MAX_LEAVES);
    for (int j = 0; j < nrl; j++) any4 |= is4(rsh[j]->dtype);
  }
  /* Kernels of called computations are emitted midway (emit_comp), so
   * the flag is saved and restored around this one. */
  bool unpacked = bytewise && any4, saved_unpacked = e->unpacked;
  e->unpacked = unpacked;
  tr_status s;
  switch (in->op) {
  case TR_OP_FUSION:
    s = loop_fusable(tr_instr_fused(in)) ? k_loop_fusion(e, in, tr_instr_fused(in))
                                         : k_reduce_in(e, in, tr_instr_fused(in));
    break;
  case TR_OP_BROADCAST: case TR_OP_TRANSPOSE: case TR_OP_REVERSE: case TR_OP_SLICE:
    s = k_move(e, in);
    break;
  case TR_OP_RESHAPE: case TR_OP_BITCAST:
    if (in->shape->dtype != in->operands[0]->shape->dtype ||
        count_of(in->shape) != count_of(in->operands[0]->shape))
      return em_unsup(e, in, "a bitcast that changes the element type");
    em_kern_head(e, 1);
    tr_buf_printf(&e->cur, "  memcpy(r, a0, %lld);\n  return 0;\n}\n", (long long)bytes_of(in->shape));
    s = TR_OK;
    break;
  case TR_OP_PAD: s = k_pad(e, in); break;
  case TR_OP_CONCATENATE: s = k_concat(e, in); break;
  case TR_OP_IOTA: s = k_iota(e, in); break;
  case TR_OP_DYNAMIC_SLICE: case TR_OP_DYNAMIC_UPDATE_SLICE: s = k_dynamic(e, in); break;
  case TR_OP_REDUCE_PRECISION: s = k_reduce_precision(e, in); break;
  case TR_OP_BITCAST_CONVERT: s = k_bitcast_convert(e, in); break;
  case TR_OP_REDUCE: s = multi ? k_reduce_generic(e, in) : k_reduce(e, in); break;
  case TR_OP_MAP: s = k_map(e, in); break;
  case TR_OP_GATHER: s = k_gather(e, in); break;
  case TR_OP_SCATTER: s = k_scatter(e, in); break;
  case TR_OP_SORT: s = k_sort(e, in); break;
  case TR_OP_TOPK: s = k_topk(e, in); break;
  case TR_OP_SELECT_AND_SCATTER: s = k_select_and_scatter(e, in); break;
  case TR_OP_CHOLESKY: s = k_cholesky(e, in); break;
  case TR_OP_RNG_BIT_GENERATOR: s = k_rng_bit_generator(e, in); break;
  case TR_OP_TRIANGULAR_SOLVE: s = k_triangular_solve(e, in); break;
  case TR_OP_REPLICA_ID: case TR_OP_PARTITION_ID:
    /* One replica, one partition: the id is 0. */
    em_kern_head(e, 0);
    tr_buf_puts(&e->cur, "  memset(r, 0, 4);\n  return 0;\n}\n");
    s = TR_OK;
    break;
  case TR_OP_DOT: s = k_dot(e, in); break;
  case TR_OP_CONVOLUTION: s = k_convolution(e, in); break;
  case TR_OP_REDUCE_WINDOW:
    s = em_simple_reduce_window(in) ? k_reduce_window(e, in) : k_reduce_window_generic(e, in);
    break;
  default:
    if (!em_elem_op(in->op)) return em_unsup(e, in, NULL);
    s = k_elementwise(e, in);
    break;
  }
  e->unpacked = saved_unpacked;
  if (s != TR_OK) {
    tr_buf_free(&e->cur);
    return s;
  }
  int kid = finish_kernel(e, in->id);
  if (in == c->root && tr_shape_is_array(in->shape)) {
    /* The root's kernel writes straight into the caller's result buffer
     * (never an argument of the same call), saving a buffer and a copy. */
    set_leaves(e, in, 1);
    e->lv[in->id].leaf[0] = tr_xstrdup("r[0]");
    e->lv[in->id].shape[0] = in->shape;
  } else {
    own_leaves(e, in);
    alloc_leaves(e, in, body);
  }
  const leaves *rl = &e->lv[in->id];
  char *args[TR_EMIT_MAX_LEAVES], *res[TR_EMIT_MAX_LEAVES];
  int nres = rl->n < TR_EMIT_MAX_LEAVES ? rl->n : TR_EMIT_MAX_LEAVES;
  for (int i = 0; i < in->noperands && i < TR_EMIT_MAX_LEAVES; i++) {
    const tr_shape *os = in->operands[i]->shape;
    if (unpacked && is4(os->dtype)) {
      args[i] = xfmt("b[%d]", e->nb++);
      tr_buf_printf(body, "  if (!(%s = (u8 *)tr_alloc(%lld))) { rc = 1; goto out; }\n"
                          "  tr_unpack4(%s, %s, %lldLL, %d);\n",
                    args[i], (long long)count_of(os), args[i], leaf0(e, in->operands[i]),
                    (long long)count_of(os), is_sg(os->dtype));
    } else {
      args[i] = tr_xstrdup(leaf0(e, in->operands[i]));
    }
  }
  for (int j = 0; j < nres; j++) {
    if (unpacked && is4(rl->shape[j]->dtype)) {
      res[j] = xfmt("b[%d]", e->nb++);
      tr_buf_printf(body, "  if (!(%s = (u8 *)tr_alloc(%lld))) { rc = 1; goto out; }\n", res[j],
                    (long long)count_of(rl->shape[j]));
    } else {
      res[j] = tr_xstrdup(rl->leaf[j]);
    }
  }
  if (tr_shape_is_array(in->shape)) {
    tr_buf_printf(body, "  if ((rc = k%d(%s", kid, res[0]);
  } else {
    tr_buf_printf(body, "  if ((rc = k%d((u8 *[]){", kid);
    for (int j = 0; j < nres; j++) tr_buf_printf(body, "%s%s", j ? ", " : "", res[j]);
    if (nres == 0) tr_buf_puts(body, "0");
    tr_buf_puts(body, "}");
  }
  for (int i = 0; i < in->noperands; i++) tr_buf_printf(body, ", %s", args[i]);
  tr_buf_printf(body, ", %lldLL)) != 0) goto out;\n",
                (long long)(tr_shape_is_array(in->shape) ? count_of(in->shape) : 0));
  for (int j = 0; j < nres; j++) {
    if (strcmp(res[j], rl->leaf[j]) != 0)
      tr_buf_printf(body, "  tr_pack4(%s, %s, %lldLL, 0);\n", rl->leaf[j], res[j],
                    (long long)count_of(rl->shape[j]));
    tr_free(res[j]);
  }
  for (int i = 0; i < in->noperands; i++) tr_free(args[i]);
  return TR_OK;
}

/* Marks the instructions that feed c's root (the only ones the reference
 * evaluates). */
static void mark_live(const tr_comp *c, bool *live) {
  if (!c->root) return;
  tr_instr **stack = tr_xmalloc(sizeof(tr_instr *) * (size_t)(c->ninstrs + 1));
  int n = 0;
  stack[n++] = c->root;
  live[c->root->id] = true;
  while (n > 0) {
    tr_instr *x = stack[--n];
    for (int i = 0; i < x->noperands; i++)
      if (!live[x->operands[i]->id] && n < c->ninstrs + 1) {
        live[x->operands[i]->id] = true;
        stack[n++] = x->operands[i];
      }
  }
  tr_free(stack);
}

tr_status emit_comp(em *e, const tr_comp *c) {
  if (e->done[c->id]) return TR_OK;
  e->done[c->id] = true; /* the verifier forbids recursion */
  bool *live = tr_xcalloc((size_t)e->nids + 1, 1);
  mark_live(c, live);
  tr_buf body = {0};
  int saved_nb = e->nb, saved_nw = e->nw; /* callees are emitted midway */
  e->nb = e->nw = 0;
  tr_status s = TR_OK;
  for (int i = 0; i < c->ninstrs && s == TR_OK; i++)
    if (live[c->instrs[i]->id]) s = emit_instr(e, c, c->instrs[i], &body);
  tr_free(live);
  if (s == TR_OK && !c->root) s = TR_ERR_UNSUPPORTED;
  if (s == TR_OK) {
    tr_buf *f = &e->funcs;
    tr_buf_printf(f, "/* computation %s */\nstatic int comp%d(u8 **p, u8 **r) {\n  int rc = 0;\n", c->name, c->id);
    tr_buf_printf(f, "  u8 *b[%d] = {0}, *w[%d] = {0};\n  int k_;\n", e->nb > 0 ? e->nb : 1, e->nw > 0 ? e->nw : 1);
    tr_buf_puts(f, tr_buf_str(&body));
    const leaves *rl = &e->lv[c->root->id];
    for (int j = 0; j < rl->n; j++) {
      char rj[32];
      snprintf(rj, sizeof rj, "r[%d]", j);
      if (strcmp(rl->leaf[j], rj) != 0)
        tr_buf_printf(f, "  memcpy(r[%d], %s, %lld);\n", j, rl->leaf[j], (long long)bytes_of(rl->shape[j]));
    }
    tr_buf_puts(f, "out:\n");
    tr_buf_printf(f, "  for (k_ = 0; k_ < %d; k_++) free(b[k_]);\n  for (k_ = 0; k_ < %d; k_++) free(w[k_]);\n",
                  e->nb, e->nw);
    tr_buf_puts(f, "  (void)p;\n  (void)r;\n  return rc;\n}\n");
  }
  tr_buf_free(&body);
  e->nb = saved_nb;
  e->nw = saved_nw;
  return s;
}

bool tr_emit_supports(tr_op op) { return tr_op_can(op, TR_MODE_EMIT); }

/* The exported entry. Tensors outside keep s4/u4 one per byte
 * (tensor.h): such parameters are packed into scratch on the way in and
 * such outputs unpacked on the way out; without any, in and out are
 * handed straight to the entry computation. */
static void emit_entry(em *e, tr_buf *out) {
  const tr_comp *c = e->m->entry;
  const tr_shape *in[TR_EMIT_MAX_LEAVES], *res[TR_EMIT_MAX_LEAVES];
  int nin = 0, nres = shape_leaves(c->root->shape, res, TR_EMIT_MAX_LEAVES);
  bool any4 = false;
  for (int p = 0; p < c->nparams; p++)
    if (c->params[p]) nin += shape_leaves(c->params[p]->shape, in + nin, TR_EMIT_MAX_LEAVES - nin);
  if (nin > TR_EMIT_MAX_LEAVES) nin = TR_EMIT_MAX_LEAVES;
  if (nres > TR_EMIT_MAX_LEAVES) nres = TR_EMIT_MAX_LEAVES;
  for (int j = 0; j < nin; j++) any4 |= is4(in[j]->dtype);
  for (int j = 0; j < nres; j++) any4 |= is4(res[j]->dtype);
  tr_buf_printf(out, "int " TR_EMIT_ENTRY "(u8 **in, u8 **out) {\n");
  if (e->o->test_crash) tr_buf_puts(out, "  { volatile int *volatile np = 0; *np = 1; }\n");
  if (!any4) {
    tr_buf_printf(out, "  return comp%d(in, out);\n}\n", c->id);
    return;
  }
  /* defect: the odd last element packed into the high nibble */
  int tail = TR_INJECTED(e->o->inject, EMIT_PACKED_NIBBLE_ORDER) ? 4 : 0;
  tr_buf_printf(out, "  u8 *pin[%d] = {0}, *pout[%d] = {0};\n  int rc = 1;\n", nin > 0 ? nin : 1,
                nres > 0 ? nres : 1);
  for (int j = 0; j < nin; j++) {
    long long n = (long long)count_of(in[j]);
    if (is4(in[j]->dtype))
      tr_buf_printf(out, "  if (!(pin[%d] = (u8 *)tr_alloc(%lld))) goto out;\n  tr_pack4(pin[%d], in[%d], %lldLL, %d);\n",
                    j, (n + 1) / 2, j, j, n, tail);
    else
      tr_buf_printf(out, "  pin[%d] = in[%d];\n", j, j);
  }
  for (int j = 0; j < nres; j++) {
    if (is4(res[j]->dtype))
      tr_buf_printf(out, "  if (!(pout[%d] = (u8 *)tr_alloc(%lld))) goto out;\n", j,
                    ((long long)count_of(res[j]) + 1) / 2);
    else
      tr_buf_printf(out, "  pout[%d] = out[%d];\n", j, j);
  }
  tr_buf_printf(out, "  if ((rc = comp%d(pin, pout)) != 0) goto out;\n", c->id);
  for (int j = 0; j < nres; j++)
    if (is4(res[j]->dtype))
      tr_buf_printf(out, "  tr_unpack4(out[%d], pout[%d], %lldLL, %d);\n", j, j, (long long)count_of(res[j]),
                    is_sg(res[j]->dtype));
  tr_buf_puts(out, "out:\n");
  for (int j = 0; j < nin; j++)
    if (is4(in[j]->dtype)) tr_buf_printf(out, "  free(pin[%d]);\n", j);
  for (int j = 0; j < nres; j++)
    if (is4(res[j]->dtype)) tr_buf_printf(out, "  free(pout[%d]);\n", j);
  tr_buf_puts(out, "  return rc;\n}\n");
}

tr_status tr_emit_c(const tr_module *m, const tr_emit_opts *o, tr_buf *out, tr_diag *d) {
  tr_emit_opts def;
  if (!o) {
    tr_emit_opts_init(&def);
    o = &def;
  }
  if (!m->entry) {
    tr_diag_errorf(d, "emit: the module has no entry computation");
    return TR_ERR_INVALID;
  }
  em e = {0};
  e.m = m;
  e.o = o;
  e.d = d;
  e.nids = m->next_id;
  e.lv = tr_xcalloc((size_t)e.nids + 1, sizeof(leaves));
  e.done = tr_xcalloc((size_t)e.nids + 1, 1);
  if (o->lanes < 1 || o->tile < 1) {
    tr_diag_errorf(d, "emit: lanes and tile must be at least 1");
    tr_free(e.lv);
    tr_free(e.done);
    return TR_ERR_USAGE;
  }
  /* The entry's in[] and out[] hold at most TR_EMIT_MAX_LEAVES each. */
  int nin = 0;
  for (int p = 0; p < m->entry->nparams; p++)
    if (m->entry->params[p]) nin += leaf_count(m->entry->params[p]->shape);
  tr_status s = TR_OK;
  if (m->entry->root && (nin > TR_EMIT_MAX_LEAVES || leaf_count(m->entry->root->shape) > TR_EMIT_MAX_LEAVES))
    s = em_unsup(&e, m->entry->root, "more than 1024 entry parameter or result leaves");
  if (s == TR_OK) s = emit_comp(&e, m->entry);
  if (s == TR_OK) {
    tr_buf unit = {0};
    tr_buf_puts(&unit, tr_buf_str(&e.kern));
    tr_buf_puts(&unit, tr_buf_str(&e.funcs));
    emit_entry(&e, &unit);
    tr_emit_prelude(out, tr_buf_str(&unit));
    tr_buf_puts(out, tr_buf_str(&unit));
    tr_buf_free(&unit);
  }
  for (int i = 0; i <= e.nids; i++) {
    for (int j = 0; j < e.lv[i].n; j++) tr_free(e.lv[i].leaf[j]);
    tr_free(e.lv[i].leaf);
    tr_free(e.lv[i].shape);
  }
  tr_free(e.lv);
  tr_free(e.done);
  for (int i = 0; i < e.nk; i++) tr_free(e.ktext[i]);
  tr_free(e.ktext);
  tr_free(e.kid);
  tr_buf_free(&e.kern);
  tr_buf_free(&e.cur);
  tr_buf_free(&e.funcs);
  return s;
}
