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
 * and parameters only rename leaves, so they cost nothing. */
#include "emit.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void tr_emit_opts_init(tr_emit_opts *o) {
  memset(o, 0, sizeof *o);
  o->lanes = 8;
  o->tile = 16;
  o->fuse_loops = true;
}

/* ---- emitter state ---- */

typedef struct {
  int n;                  /* array leaves */
  char **leaf;            /* C expressions of type u8 * (heap) */
  const tr_shape **shape; /* each leaf's shape */
} leaves;

typedef struct {
  const tr_module *m;
  const tr_emit_opts *o;
  tr_diag *d;
  tr_buf kern;      /* constants and kernels */
  tr_buf cur;       /* the kernel being generated, named kK/eK */
  char **ktext;     /* kernels emitted so far, as generated (dedup) */
  int *kid;         /* the id each one was emitted under */
  int nk, capk;
  int nb, nw;       /* buffers b[] and while scratch w[] of the
                       computation being emitted */
  bool unpacked;    /* the kernel being generated sees s4/u4 one per
                       byte (unpacked around its call): LU_ loads */
  bool mm_done[2];  /* tr_mm_f / tr_mm_d emitted (emit_mm) */
  tr_buf funcs;     /* computation functions, callees first */
  leaves *lv;       /* by instruction id */
  bool *done;       /* by computation id: function emitted */
  int nids;         /* m->next_id */
} em;

static const char *opname(const tr_instr *in) {
  return in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
}

static tr_status unsup(em *e, const tr_instr *in, const char *why) {
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

static bool is_flt(tr_dtype t) { return tr_dtype_is_float(t); }
static bool is_sg(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_SINT; }
static int bits_of(tr_dtype t) { return tr_dtypes[t].bits; }
static int es_of(tr_dtype t) { return tr_dtype_size(t); }
static const char *vt(tr_dtype t) { return is_flt(t) ? "double" : "u64"; }
static uint64_t mask_of(int bits) { return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1; }
/* s4/u4: packed two per byte in every buffer of the unit (tr_pack4). */
static bool is4(tr_dtype t) { return bits_of(t) == 4 && !is_flt(t); }
/* Element size for the prelude's tr_cp family: 0 means a packed nibble. */
static int esp_of(tr_dtype t) { return is4(t) ? 0 : es_of(t); }

static int64_t count_of(const tr_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

/* Bytes of a buffer of shape s inside the unit (s4/u4 packed). */
static int64_t bytes_of(const tr_shape *s) {
  return is4(s->dtype) ? (count_of(s) + 1) / 2 : count_of(s) * es_of(s->dtype);
}

static void strides(const tr_shape *s, int64_t *st) {
  int64_t k = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    st[i] = k;
    k *= s->dims[i];
  }
}

static const int64_t *ints_attr(const tr_instr *in, tr_attr_key key, int *n) {
  const tr_attr *at = tr_instr_attr(in, key);
  *n = at && at->kind == TR_AK_INTS ? at->n : 0;
  return at && at->kind == TR_AK_INTS ? at->u.ints : NULL;
}

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
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
  const tr_shape *sh[256];
  int n = shape_leaves(in->shape, sh, 256);
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

/* The load helper's prefix for type t in the kernel being generated. */
static const char *ld_of(const em *e, tr_dtype t) { return e->unpacked && is4(t) ? "LU" : "LD"; }

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

/* Rounds (floats) or canonicalizes (ints) a value expression to t. */
static void round_to(tr_buf *b, tr_dtype t, const char *x) {
  tr_buf_printf(b, "%s_%s(%s)", is_flt(t) ? "RD" : "CN", tr_dtype_name(t), x);
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

static bool elem_op(tr_op op) {
  switch (op) {
  case TR_OP_ABS: case TR_OP_NEGATE: case TR_OP_SIGN: case TR_OP_FLOOR: case TR_OP_CEIL:
  case TR_OP_ROUND_NEAREST_AFZ: case TR_OP_ROUND_NEAREST_EVEN: case TR_OP_EXPONENTIAL:
  case TR_OP_EXPONENTIAL_MINUS_ONE: case TR_OP_LOG: case TR_OP_LOG_PLUS_ONE: case TR_OP_SQRT:
  case TR_OP_RSQRT: case TR_OP_CBRT: case TR_OP_TANH: case TR_OP_LOGISTIC: case TR_OP_SINE:
  case TR_OP_COSINE: case TR_OP_TAN: case TR_OP_ERF: case TR_OP_IS_FINITE: case TR_OP_NOT:
  case TR_OP_POPCNT: case TR_OP_COUNT_LEADING_ZEROS: case TR_OP_ATAN2: case TR_OP_ADD:
  case TR_OP_SUBTRACT: case TR_OP_MULTIPLY: case TR_OP_DIVIDE: case TR_OP_REMAINDER:
  case TR_OP_POWER: case TR_OP_MAXIMUM: case TR_OP_MINIMUM: case TR_OP_AND: case TR_OP_OR:
  case TR_OP_XOR: case TR_OP_SHIFT_LEFT: case TR_OP_SHIFT_RIGHT_ARITHMETIC:
  case TR_OP_SHIFT_RIGHT_LOGICAL: case TR_OP_COMPARE: case TR_OP_SELECT: case TR_OP_CLAMP:
  case TR_OP_CONVERT: case TR_OP_COPY:
    return true;
  default: return false;
  }
}

/* Value of converting a (a value of type st) to dt, unrounded. */
static void convert_value(tr_buf *x, tr_dtype st, tr_dtype dt, const char *a, uint64_t inj) {
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
static bool elem_value(const tr_instr *in, const char *const *a, tr_buf *x, uint64_t inj) {
  tr_op op = in->op;
  if (op == TR_OP_SELECT) {
    tr_buf_printf(x, "((%s) ? (%s) : (%s))", a[0], a[1], a[2]);
    return true;
  }
  if (op == TR_OP_CONVERT) {
    convert_value(x, in->operands[0]->shape->dtype, in->shape->dtype, a[0], inj);
    return true;
  }
  tr_dtype dt = op == TR_OP_CLAMP ? in->operands[1]->shape->dtype : in->operands[0]->shape->dtype;
  int bits = bits_of(dt);
  unsigned long long m = mask_of(bits);
  bool sg = is_sg(dt), pred = dt == TR_DT_PRED;
  int64_t imin = tr_int_min(dt);
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
      tr_buf_printf(x, "(isnan(%s) ? (%s) : isnan(%s) ? (%s) : isnan(%s) ? (%s) : "
                       "(((%s) < (%s) ? (%s) : (%s)) < (%s) ? ((%s) < (%s) ? (%s) : (%s)) : (%s)))",
                    a[0], a[0], a[1], a[1], a[2], a[2], a[1], a[0], a[0], a[1], a[2], a[1], a[0],
                    a[0], a[1], a[2]);
    else if (sg)
      tr_buf_printf(x, "(((i64)((i64)(%s) < (i64)(%s) ? (%s) : (%s))) < (i64)(%s) ? "
                       "((i64)(%s) < (i64)(%s) ? (%s) : (%s)) : (%s))",
                    a[1], a[0], a[0], a[1], a[2], a[1], a[0], a[0], a[1], a[2]);
    else
      tr_buf_printf(x, "((((%s) < (%s) ? (%s) : (%s))) < (%s) ? ((%s) < (%s) ? (%s) : (%s)) : (%s))",
                    a[1], a[0], a[0], a[1], a[2], a[1], a[0], a[0], a[1], a[2]);
    return true;
  }
  if (is_flt(dt)) {
    switch (op) {
    case TR_OP_ABS: tr_buf_printf(x, "fabs(%s)", a[0]); return true;
    case TR_OP_NEGATE: tr_buf_printf(x, "(-(%s))", a[0]); return true;
    case TR_OP_SIGN:
      tr_buf_printf(x, "((isnan(%s) || (%s) == 0) ? (%s) : copysign(1.0, %s))", a[0], a[0], a[0], a[0]);
      return true;
    case TR_OP_FLOOR: tr_buf_printf(x, "floor(%s)", a[0]); return true;
    case TR_OP_CEIL: tr_buf_printf(x, "ceil(%s)", a[0]); return true;
    case TR_OP_ROUND_NEAREST_AFZ: tr_buf_printf(x, "round(%s)", a[0]); return true;
    case TR_OP_ROUND_NEAREST_EVEN: tr_buf_printf(x, "tr_round_even(%s)", a[0]); return true;
    case TR_OP_EXPONENTIAL: tr_buf_printf(x, "(double)expl(%s)", a[0]); return true;
    case TR_OP_EXPONENTIAL_MINUS_ONE: tr_buf_printf(x, "(double)expm1l(%s)", a[0]); return true;
    case TR_OP_LOG: tr_buf_printf(x, "(double)logl(%s)", a[0]); return true;
    case TR_OP_LOG_PLUS_ONE: tr_buf_printf(x, "(double)log1pl(%s)", a[0]); return true;
    case TR_OP_SQRT: tr_buf_printf(x, "sqrt(%s)", a[0]); return true;
    case TR_OP_RSQRT: tr_buf_printf(x, "(double)(1.0L / sqrtl(%s))", a[0]); return true;
    case TR_OP_CBRT: tr_buf_printf(x, "(double)cbrtl(%s)", a[0]); return true;
    case TR_OP_TANH: tr_buf_printf(x, "(double)tanhl(%s)", a[0]); return true;
    case TR_OP_LOGISTIC:
      tr_buf_printf(x, "(double)(1.0L / (1.0L + expl(-(long double)(%s))))", a[0]);
      return true;
    case TR_OP_SINE: tr_buf_printf(x, "(double)sinl(%s)", a[0]); return true;
    case TR_OP_COSINE: tr_buf_printf(x, "(double)cosl(%s)", a[0]); return true;
    case TR_OP_TAN: tr_buf_printf(x, "(double)tanl(%s)", a[0]); return true;
    case TR_OP_ERF: tr_buf_printf(x, "(double)erfl(%s)", a[0]); return true;
    case TR_OP_IS_FINITE: tr_buf_printf(x, "(u64)(isfinite(%s) != 0)", a[0]); return true;
    case TR_OP_ADD: tr_buf_printf(x, "((%s) + (%s))", a[0], a[1]); return true;
    case TR_OP_SUBTRACT: tr_buf_printf(x, "((%s) - (%s))", a[0], a[1]); return true;
    case TR_OP_MULTIPLY: tr_buf_printf(x, "((%s) * (%s))", a[0], a[1]); return true;
    case TR_OP_DIVIDE: tr_buf_printf(x, "((%s) / (%s))", a[0], a[1]); return true;
    case TR_OP_REMAINDER: tr_buf_printf(x, "fmod(%s, %s)", a[0], a[1]); return true;
    case TR_OP_ATAN2: tr_buf_printf(x, "(double)atan2l(%s, %s)", a[0], a[1]); return true;
    case TR_OP_POWER:
      tr_buf_printf(x, "(((%s) == 1 || (%s) == 0) ? 1.0 : (double)powl(%s, %s))", a[0], a[1], a[0], a[1]);
      return true;
    case TR_OP_MAXIMUM:
      tr_buf_printf(x, "(isnan(%s) ? (%s) : isnan(%s) ? (%s) : ((%s) < (%s) ? (%s) : (%s)))", a[0],
                    a[0], a[1], a[1], a[0], a[1], a[1], a[0]);
      return true;
    case TR_OP_MINIMUM:
      tr_buf_printf(x, "(isnan(%s) ? (%s) : isnan(%s) ? (%s) : ((%s) < (%s) ? (%s) : (%s)))", a[0],
                    a[0], a[1], a[1], a[1], a[0], a[1], a[0]);
      return true;
    default: return false;
    }
  }
  switch (op) {
  case TR_OP_ABS: tr_buf_printf(x, "((i64)(%s) < 0 ? 0 - (%s) : (%s))", a[0], a[0], a[0]); return true;
  case TR_OP_NEGATE: tr_buf_printf(x, "(0 - (%s))", a[0]); return true;
  case TR_OP_SIGN:
    if (!sg) tr_buf_printf(x, "(u64)((%s) != 0)", a[0]);
    else tr_buf_printf(x, "(u64)(i64)(((i64)(%s) > 0) - ((i64)(%s) < 0))", a[0], a[0]);
    return true;
  case TR_OP_NOT: tr_buf_printf(x, pred ? "(u64)!(%s)" : "(~(%s))", a[0]); return true;
  case TR_OP_POPCNT: tr_buf_printf(x, "(u64)__builtin_popcountll((%s) & 0x%llxull)", a[0], m); return true;
  case TR_OP_COUNT_LEADING_ZEROS: tr_buf_printf(x, "tr_clz(%s, %d, 0x%llxull)", a[0], bits, m); return true;
  case TR_OP_ADD:
    tr_buf_printf(x, pred ? "((%s) | (%s))" : "((%s) + (%s))", a[0], a[1]);
    return true;
  case TR_OP_SUBTRACT: tr_buf_printf(x, "((%s) - (%s))", a[0], a[1]); return true;
  case TR_OP_MULTIPLY: tr_buf_printf(x, "((%s) * (%s))", a[0], a[1]); return true;
  case TR_OP_DIVIDE:
    tr_buf_printf(x, "tr_idiv(%s, %s, %d, (i64)0x%llxull)", a[0], a[1], sg, (unsigned long long)imin);
    return true;
  case TR_OP_REMAINDER:
    tr_buf_printf(x, "tr_irem(%s, %s, %d, (i64)0x%llxull)", a[0], a[1], sg, (unsigned long long)imin);
    return true;
  case TR_OP_POWER: tr_buf_printf(x, "tr_ipower(%s, %s, %d)", a[0], a[1], sg); return true;
  case TR_OP_MAXIMUM:
    if (sg) tr_buf_printf(x, "((i64)(%s) < (i64)(%s) ? (%s) : (%s))", a[0], a[1], a[1], a[0]);
    else tr_buf_printf(x, "((%s) < (%s) ? (%s) : (%s))", a[0], a[1], a[1], a[0]);
    return true;
  case TR_OP_MINIMUM:
    if (sg) tr_buf_printf(x, "((i64)(%s) < (i64)(%s) ? (%s) : (%s))", a[1], a[0], a[1], a[0]);
    else tr_buf_printf(x, "((%s) < (%s) ? (%s) : (%s))", a[1], a[0], a[1], a[0]);
    return true;
  case TR_OP_AND: tr_buf_printf(x, "((%s) & (%s))", a[0], a[1]); return true;
  case TR_OP_OR: tr_buf_printf(x, "((%s) | (%s))", a[0], a[1]); return true;
  case TR_OP_XOR: tr_buf_printf(x, "((%s) ^ (%s))", a[0], a[1]); return true;
  case TR_OP_SHIFT_LEFT:
    if (TR_INJECTED(inj, EMIT_SHIFT_AMOUNT_MOD_WIDTH) && bits == 32)
      /* defect: the hardware's 32-bit shift, amount mod 32; amounts >= 32
       * should give 0 */
      tr_buf_printf(x, "((u64)((uint32_t)(%s) << ((uint32_t)(%s) & 31u)))", a[0], a[1]);
    else tr_buf_printf(x, "tr_shl(%s, %s, %d, 0x%llxull)", a[0], a[1], bits, m);
    return true;
  case TR_OP_SHIFT_RIGHT_LOGICAL: tr_buf_printf(x, "tr_srl(%s, %s, %d, 0x%llxull)", a[0], a[1], bits, m); return true;
  case TR_OP_SHIFT_RIGHT_ARITHMETIC: tr_buf_printf(x, "tr_sra(%s, %s, %d, 0x%llxull)", a[0], a[1], bits, m); return true;
  default: return false;
  }
}

/* ---- lane loops ---- */

/* Wraps the per-element function eK(r, a..., i) in a loop over n
 * elements: full chunks of `lanes` lanes, then one masked chunk. */
/* Every kernel is int kK(u8 *r, const u8 *a0, ..., i64 n): n is the
 * result's element count, so kernels that differ only in size are one
 * text and are emitted once (finish_kernel). */
static void kern_head(em *e, int nargs) {
  tr_buf *k = &e->cur;
  tr_buf_puts(k, "static int kK(u8 *r");
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
}

/* Wraps the per-element function eK(r, a..., i) in a loop over n
 * elements: full chunks of `lanes` lanes, then one masked chunk. */
static void lane_loop(em *e, int nargs) {
  tr_buf *k = &e->cur;
  kern_head(e, nargs);
  tr_buf_printf(k, "  i64 i0 = 0;\n  int l;\n  for (; i0 + %d <= n; i0 += %d)\n    for (l = 0; l < %d; l++) eK(r",
                e->o->lanes, e->o->lanes, e->o->lanes);
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", a%d", i);
  tr_buf_printf(k, ", i0 + l);\n  /* masked tail: lanes at or past n are off */\n"
                   "  for (l = 0; l < %d; l++)\n    if (i0 + l < n%s) eK(r", e->o->lanes,
                /* defect: the tail's bound is one short (only n % lanes != 0 reaches it) */
                TR_INJECTED(e->o->inject, EMIT_TAIL_MASK_SHORT) ? " - 1" : "");
  for (int i = 0; i < nargs; i++) tr_buf_printf(k, ", a%d", i);
  tr_buf_puts(k, ", i0 + l);\n  return 0;\n}\n");
}

static void elem_head(em *e, int nargs) {
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
  elem_head(e, nop);
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
      tr_buf_printf(k, "  const %s x%d = %s;\n", vt(o->shape->dtype), j, av[j]);
      snprintf(av[j], sizeof av[j], "x%d", j);
    }
    tr_buf x = {0};
    if (!elem_value(in, ap, &x, e->o->inject)) {
      tr_buf_free(&x);
      return unsup(e, in, "this direction or type");
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
  lane_loop(e, nop);
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
      if (!elem_op(in->op)) return false;
    }
  }
  return true;
}

static bool loop_fusable(const tr_comp *c) {
  return c->root && values_fusable(c, c->root->shape, NULL);
}

static bool simple_reduce(const tr_instr *in);

/* An input fusion the emitter makes one kernel of: the root is a reduce
 * of the tiled kind whose init is a parameter or constant and whose input
 * the rest computes elementwise; the input is then computed inside the
 * reduce loop and never stored. */
static bool input_fusable(const tr_comp *c) {
  const tr_instr *r = c->root;
  if (!r || r->op != TR_OP_REDUCE || !simple_reduce(r)) return false;
  const tr_instr *init = r->operands[1], *x = r->operands[0];
  if (init->op != TR_OP_PARAMETER && init->op != TR_OP_CONSTANT) return false;
  if (x->op == TR_OP_PARAMETER) return false; /* nothing to fuse */
  return values_fusable(c, x->shape, r);
}

static void emit_constant_data(em *e, int id, int leaf, const tr_literal *lit, int64_t nbytes) {
  tr_buf *k = &e->kern; /* data, not a kernel */
  tr_buf_printf(k, "static const u8 c%d_%d[%lld] = {", id, leaf, (long long)(nbytes > 0 ? nbytes : 1));
  const unsigned char *p = lit->data;
  bool packed = is4(lit->shape->dtype);
  for (int64_t i = 0; i < nbytes; i++) {
    unsigned v = p[i];
    if (packed) { /* two elements of one byte each, low nibble first */
      int64_t n = count_of(lit->shape);
      v = p[2 * i] & 15u;
      if (2 * i + 1 < n) v |= (p[2 * i + 1] & 15u) << 4;
    }
    tr_buf_printf(k, "%s%s%u", i ? "," : "", i % 24 ? "" : "\n", v);
  }
  if (nbytes == 0) tr_buf_puts(k, "0");
  tr_buf_puts(k, "};\n");
}

/* Emits "const T v<id> = ...;" for every instruction of c but skip, as
 * its value at element i of shape rs (the loop nest's index space). */
static tr_status fused_values(em *e, const tr_comp *c, const tr_shape *rs, const tr_instr *skip) {
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
      const int64_t *dm = ints_attr(x, TR_ATTR_DIMENSIONS, &n);
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
        tr_buf_printf(k, "  const %s v%d = LD_%s(a%lld, j%d);\n", vt(t), x->id, tr_dtype_name(t),
                      (long long)o->param_index, x->id);
      else
        tr_buf_printf(k, "  const %s v%d = LD_%s(c%d_0, j%d);\n", vt(t), x->id, tr_dtype_name(t), o->id, x->id);
      continue;
    }
    tr_buf_printf(k, "  const %s v%d = ", vt(t), x->id);
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
      if (!elem_value(x, ap, &v, e->o->inject)) {
        tr_buf_free(&v);
        tr_buf_puts(k, "0;\n}\n");
        return unsup(e, x, NULL);
      }
      round_to(k, t, tr_buf_str(&v));
      tr_buf_puts(k, ";\n");
      tr_buf_free(&v);
    }
  }
  return TR_OK;
}

static tr_status k_loop_fusion(em *e, const tr_instr *in, const tr_comp *c) {
  elem_head(e, c->nparams);
  tr_status st = fused_values(e, c, c->root->shape, NULL);
  if (st != TR_OK) return st;
  tr_buf_printf(&e->cur, "  ST_%s(r, i, v%d);\n}\n", tr_dtype_name(c->root->shape->dtype), c->root->id);
  lane_loop(e, c->nparams);
  return TR_OK;
}

/* ---- data movement ---- */

static void emit_i64s(tr_buf *b, const char *name, const int64_t *v, int n) {
  tr_buf_printf(b, "  static const i64 %s[%d] = {", name, n > 0 ? n : 1);
  for (int i = 0; i < n; i++) tr_buf_printf(b, "%s%lldLL", i ? ", " : "", (long long)v[i]);
  if (n == 0) tr_buf_puts(b, "0");
  tr_buf_puts(b, "};\n");
}

/* r = a through a strided view: dims of the result, strides into a. */
static void k_strided(em *e, const tr_instr *in, const int64_t *st, int64_t base) {
  tr_buf *k = &e->cur;
  const tr_shape *s = in->shape;
  kern_head(e, 1);
  emit_i64s(k, "dims", s->dims, s->rank);
  emit_i64s(k, "st", st, s->rank);
  tr_buf_printf(k, "  tr_strided(r, a0, %d, %d, dims, st, %lldLL);\n  return 0;\n}\n",
                esp_of(s->dtype), s->rank, (long long)base);
}

static tr_status k_move(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  const tr_shape *xs = in->operands[0]->shape;
  int64_t xst[64], st[64];
  strides(xs, xst);
  int n;
  switch (in->op) {
  case TR_OP_BROADCAST: {
    const int64_t *dm = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
    for (int i = 0; i < s->rank; i++) st[i] = 0;
    for (int j = 0; j < n && j < xs->rank; j++) st[dm[j]] = xst[j];
    k_strided(e, in, st, 0);
    return TR_OK;
  }
  case TR_OP_TRANSPOSE: {
    const int64_t *pm = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
    for (int i = 0; i < s->rank; i++) st[i] = xst[pm[i]];
    k_strided(e, in, st, 0);
    return TR_OK;
  }
  case TR_OP_REVERSE: {
    const int64_t *rv = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
    int64_t base = 0;
    for (int i = 0; i < s->rank; i++) {
      bool r = has(rv, n, i);
      st[i] = r ? -xst[i] : xst[i];
      if (r && s->dims[i] > 0) base += (s->dims[i] - 1) * xst[i];
    }
    k_strided(e, in, st, base);
    return TR_OK;
  }
  case TR_OP_SLICE: {
    const tr_attr *at = tr_instr_attr(in, TR_ATTR_SLICE);
    if (!at || at->n != s->rank) return unsup(e, in, "slice attribute");
    int64_t base = 0;
    for (int i = 0; i < s->rank; i++) {
      st[i] = at->u.slice[i].stride * xst[i];
      base += at->u.slice[i].start * xst[i];
    }
    k_strided(e, in, st, base);
    return TR_OK;
  }
  default: return unsup(e, in, NULL);
  }
}

static tr_status k_pad(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape;
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_PADDING);
  if (!at || at->n != s->rank) return unsup(e, in, "padding attribute");
  int64_t lo[64], inr[64];
  for (int i = 0; i < s->rank; i++) {
    lo[i] = at->u.pad[i].lo;
    inr[i] = at->u.pad[i].interior;
  }
  tr_buf *k = &e->cur;
  int es = esp_of(s->dtype);
  kern_head(e, 2);
  emit_i64s(k, "odims", s->dims, s->rank);
  emit_i64s(k, "idims", xs->dims, xs->rank);
  emit_i64s(k, "lo", lo, s->rank);
  emit_i64s(k, "in", inr, s->rank);
  tr_buf_printf(k, "  i64 i;\n  for (i = 0; i < %lldLL; i++) tr_cp(r, i, a1, 0, %d);\n",
                (long long)count_of(s), es);
  tr_buf_printf(k, "  tr_pad(r, a0, %d, %d, odims, idims, lo, in);\n  return 0;\n}\n", es, s->rank);
  return TR_OK;
}

static tr_status k_concat(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  int n;
  const int64_t *dm = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  if (n != 1) return unsup(e, in, "dimensions attribute");
  int axis = (int)dm[0];
  int64_t outer = 1, inner = es_of(s->dtype);
  for (int i = 0; i < axis; i++) outer *= s->dims[i];
  for (int i = axis + 1; i < s->rank; i++) inner *= s->dims[i];
  tr_buf *k = &e->cur;
  kern_head(e, in->noperands);
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

static tr_status k_iota(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape;
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_IOTA_DIMENSION);
  int dim = at ? (int)at->u.i : 0;
  if (s->rank == 0 || dim < 0 || dim >= s->rank) return unsup(e, in, "iota dimension");
  int64_t inner = 1;
  for (int i = dim + 1; i < s->rank; i++) inner *= s->dims[i];
  tr_buf *k = &e->cur;
  kern_head(e, 0);
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
static tr_status k_dynamic(em *e, const tr_instr *in) {
  bool upd = in->op == TR_OP_DYNAMIC_UPDATE_SLICE;
  const tr_instr *x = in->operands[0];
  const tr_shape *xs = x->shape;
  const tr_shape *part = upd ? in->operands[1]->shape : in->shape;
  int first = upd ? 2 : 1, rank = xs->rank;
  bool vec = in->noperands - first == 1 && in->operands[first]->shape->rank == 1;
  if (!vec && in->noperands - first != rank) return unsup(e, in, "index operands");
  int64_t xst[64];
  strides(xs, xst);
  tr_buf *k = &e->cur;
  kern_head(e, in->noperands);
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

static bool flag_attr(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->u.b;
}

static bool real_float(tr_dtype dt) {
  return tr_dtypes[dt].kind == TR_DK_FLOAT;
}

static tr_status k_cholesky(em *e, const tr_instr *in) {
  const tr_shape *s = in->operands[0]->shape;
  int r = s->rank;
  if (r < 2 || s->dims[r - 1] != s->dims[r - 2]) return unsup(e, in, "a non-square cholesky");
  if (!real_float(s->dtype)) return unsup(e, in, "a non-real cholesky");
  long long n = s->dims[r - 1], nn = n * n, nb = nn ? (long long)count_of(s) / nn : 0;
  bool lower = flag_attr(in, TR_ATTR_LOWER); /* XLA's default is upper */
  const char *dt = tr_dtype_name(s->dtype);
  tr_buf *k = &e->cur;
  kern_head(e, 1);
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

static tr_status k_triangular_solve(em *e, const tr_instr *in) {
  const tr_shape *as = in->operands[0]->shape, *bs = in->operands[1]->shape;
  int r = as->rank;
  bool left = flag_attr(in, TR_ATTR_LEFT_SIDE), lower = flag_attr(in, TR_ATTR_LOWER);
  bool unit = flag_attr(in, TR_ATTR_UNIT_DIAGONAL);
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TRANSPOSE_A);
  bool trans = ta && ta->u.s && strcmp(ta->u.s, "NO_TRANSPOSE") != 0; /* ADJOINT = TRANSPOSE for reals */
  if (r < 2 || bs->rank != r || as->dims[r - 1] != as->dims[r - 2])
    return unsup(e, in, "a malformed triangular-solve");
  if (!real_float(as->dtype) || !real_float(bs->dtype)) return unsup(e, in, "a non-real triangular-solve");
  long long m = as->dims[r - 1], rows = bs->dims[r - 2], cols = bs->dims[r - 1];
  long long nrhs = left ? cols : rows, nb = m ? (long long)count_of(as) / (m * m) : 0;
  if ((left ? rows : cols) != m) return unsup(e, in, "a malformed triangular-solve");
  /* As in eval_linalg.c: the system matrix is op(a) (left) or op(a)^T
   * (right), lower when exactly one of lower and the transpose holds. */
  bool t_eff = left ? trans : !trans, t_lower = lower != t_eff;
  const char *adt = tr_dtype_name(as->dtype), *bdt = tr_dtype_name(bs->dtype);
  tr_buf *k = &e->cur;
  kern_head(e, 2);
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

static tr_status k_reduce_precision(em *e, const tr_instr *in) {
  const tr_attr *ea = tr_instr_attr(in, TR_ATTR_EXPONENT_BITS);
  const tr_attr *ma = tr_instr_attr(in, TR_ATTR_MANTISSA_BITS);
  if (!ea || !ma || ea->u.i < 1 || ma->u.i < 0 || ea->u.i > 60 || ma->u.i > 60)
    return unsup(e, in, "exponent_bits or mantissa_bits");
  tr_dtype dt = in->shape->dtype;
  bool f64 = dt == TR_DT_F64, wide = dt == TR_DT_F64 || dt == TR_DT_F32;
  int width = f64 ? 64 : 32, sm = f64 ? 52 : 23, se = f64 ? 11 : 8;
  long long m = ma->u.i, ex = ea->u.i;
  tr_buf *k = &e->cur;
  elem_head(e, 1);
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
  lane_loop(e, 1);
  return TR_OK;
}

static tr_status k_bitcast_convert(em *e, const tr_instr *in) {
  tr_dtype st = in->operands[0]->shape->dtype, dt = in->shape->dtype;
  if (bits_of(st) == bits_of(dt) && bits_of(st) % 8 == 0 && st != TR_DT_PRED && dt != TR_DT_PRED) {
    kern_head(e, 1);
    tr_buf_printf(&e->cur, "  memcpy(r, a0, %lld);\n  return 0;\n}\n", (long long)bytes_of(in->shape));
    return TR_OK;
  }
  int64_t ni = count_of(in->operands[0]->shape), no = count_of(in->shape);
  if (ni * bits_of(st) != no * bits_of(dt)) return unsup(e, in, "a change in the number of bits");
  kern_head(e, 1);
  tr_buf_printf(&e->cur, "  tr_bitcast(r, a0, %lldLL, %d, %d, %lldLL, %d, %d, %d, %d);\n  return 0;\n}\n",
                (long long)ni, bits_of(st), es_of(st), (long long)no, bits_of(dt), es_of(dt), is_sg(dt),
                dt == TR_DT_PRED);
  return TR_OK;
}

/* gather: the indices read as int64 (unsigned ones 2^63 and above count
 * as negative, as the reference), then the prelude's tr_gather. */
static tr_status k_gather(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *is = in->operands[1]->shape;
  int noff, ncol, nmap, nss, nob, nib;
  const int64_t *off = ints_attr(in, TR_ATTR_OFFSET_DIMS, &noff);
  const int64_t *col = ints_attr(in, TR_ATTR_COLLAPSED_SLICE_DIMS, &ncol);
  const int64_t *map = ints_attr(in, TR_ATTR_START_INDEX_MAP, &nmap);
  const int64_t *ss = ints_attr(in, TR_ATTR_SLICE_SIZES, &nss);
  const int64_t *ob = ints_attr(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nob);
  const int64_t *ib = ints_attr(in, TR_ATTR_START_INDICES_BATCHING_DIMS, &nib);
  const tr_attr *iv = tr_instr_attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t ivd = iv ? iv->u.i : 0;
  if (nss != xs->rank || nob != nib || xs->rank > 60 || is->rank > 60 || s->rank > 60) return unsup(e, in, "attributes");
  for (int d = 0; d < xs->rank; d++)
    if (ss[d] <= 0 && count_of(s) > 0) return unsup(e, in, "a slice size of 0");
  tr_buf *k = &e->cur;
  kern_head(e, 2);
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

/* ---- reductions and contractions ---- */

/* The root of to_apply is op(param, param) of one scalar type dt
 * (eval.c ev_simple_binary); *p0 is the operand index of parameter 0. */
static const tr_instr *simple_binary(const tr_comp *c, tr_dtype dt) {
  const tr_instr *r = c ? c->root : NULL;
  if (!r || !elem_op(r->op) || r->noperands != 2 || c->nparams != 2) return NULL;
  if (r->op == TR_OP_COMPARE || r->op == TR_OP_SELECT || r->op == TR_OP_CLAMP || r->op == TR_OP_CONVERT)
    return NULL;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER || a == b) return NULL;
  if (a->shape->rank || b->shape->rank || r->shape->rank) return NULL;
  if (a->shape->dtype != dt || b->shape->dtype != dt || r->shape->dtype != dt) return NULL;
  return r;
}

/* A reduce of one input whose to_apply is one binary op on its two
 * parameters: the tiled kernel k_reduce; any other reduce calls its
 * to_apply per element (k_reduce_generic). */
static bool simple_reduce(const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2 || !tr_shape_is_array(in->shape)) return false;
  tr_dtype dt = in->operands[0]->shape->dtype;
  return simple_binary(ap, dt) && in->shape->dtype == dt && in->operands[1]->shape->dtype == dt;
}

/* The tiled reduce of instruction in; with fc (an input fusion whose root
 * is the reduce) the reduced elements come from the value function eK
 * computed from the fusion's parameters instead of a stored operand. */
static tr_status k_reduce_in(em *e, const tr_instr *in, const tr_comp *fc) {
  const tr_comp *ap = NULL;
  if (fc) in = fc->root;
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  if (ta && ta->kind == TR_AK_COMP) ap = ta->u.comp;
  if (in->noperands != 2) return unsup(e, in, "variadic reduce");
  const tr_shape *xs = in->operands[0]->shape;
  tr_dtype dt = xs->dtype;
  const tr_instr *r = simple_binary(ap, dt);
  if (!r || in->shape->dtype != dt || in->operands[1]->shape->dtype != dt)
    return unsup(e, in, "to_apply other than one binary op");
  int n;
  const int64_t *dm = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  int64_t xst[64], kd[64], ks[64], rd[64], rs[64];
  int nk = 0, nr = 0;
  strides(xs, xst);
  int64_t nout = 1, nred = 1;
  for (int d = 0; d < xs->rank; d++) {
    if (has(dm, n, d)) {
      rd[nr] = xs->dims[d];
      rs[nr++] = xst[d];
      nred *= xs->dims[d];
    } else {
      kd[nk] = xs->dims[d];
      ks[nk++] = xst[d];
      nout *= xs->dims[d];
    }
  }
  const char *args[2];
  args[r->operands[0]->param_index == 0 ? 0 : 1] = "acc[t]";
  args[r->operands[0]->param_index == 0 ? 1 : 0] = "xv";
  tr_buf x = {0};
  if (!elem_value(r, args, &x, e->o->inject)) {
    tr_buf_free(&x);
    return unsup(e, in, "to_apply op");
  }
  tr_buf *k = &e->cur;
  const char *tn = tr_dtype_name(dt);
  int T = e->o->tile;
  char xload[64], iload[64];
  if (fc) {
    /* The reduced input, element i of its shape, computed in place. */
    tr_buf_printf(k, "static inline %s eK(", vt(dt));
    for (int i = 0; i < fc->nparams; i++) tr_buf_printf(k, "const u8 *a%d, ", i);
    tr_buf_puts(k, "i64 i) {\n");
    tr_status st = fused_values(e, fc, xs, in);
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
    kern_head(e, fc->nparams);
  } else {
    snprintf(iload, sizeof iload, "LD_%s(a1, 0)", tn);
    snprintf(xload, sizeof xload, "LD_%s(a0, ", tn);
    kern_head(e, 2);
  }
  emit_i64s(k, "kd", kd, nk);
  emit_i64s(k, "ks", ks, nk);
  emit_i64s(k, "rd", rd, nr);
  emit_i64s(k, "rs", rs, nr);
  int64_t nred_run = nred;
  if (TR_INJECTED(e->o->inject, EMIT_INT_MINMAX_REDUCE_LANES) && !is_flt(dt) && dt != TR_DT_PRED &&
      (r->op == TR_OP_MAXIMUM || r->op == TR_OP_MINIMUM))
    /* defect: int max/min "vectorized" in whole lane chunks only; the
     * last nred % lanes reduced elements are never visited */
    nred_run = nred - nred % e->o->lanes;
  tr_buf_printf(k, "  const i64 nout = %lldLL, nred = %lldLL;\n  const %s iv = %s;\n  %s acc[%d];\n",
                (long long)nout, (long long)nred_run, vt(dt), iload, vt(dt), T);
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
  tr_buf_printf(k, "    for (q = 0; q < nred; q++) {\n      for (t = 0; t < nt; t++) {\n"
                   "        const %s xv = %sko[t] + roff);\n        acc[t] = ", vt(dt), xload);
  round_to(k, dt, tr_buf_str(&x));
  tr_buf_printf(k, ";\n      }\n      for (d = %d; d >= 0; d--) {\n        ridx[d]++;\n        roff += rs[d];\n"
                   "        if (ridx[d] < rd[d]) break;\n        roff -= rs[d] * rd[d];\n        ridx[d] = 0;\n      }\n    }\n"
                   "    for (t = 0; t < nt; t++) ST_%s(r, o0 + t, acc[t]);\n  }\n  return 0;\n}\n",
                nr - 1, tn);
  tr_buf_free(&x);
  return TR_OK;
}

/* reduce-window with one input and a one-op to_apply (eval_window.c):
 * per output, the window in row-major order; padding, base-dilation holes
 * and positions outside the input are skipped. */
static tr_status k_reduce_window(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2) return unsup(e, in, "variadic reduce-window");
  const tr_shape *xs = in->operands[0]->shape, *s = in->shape;
  tr_dtype dt = xs->dtype;
  const tr_instr *r = simple_binary(ap, dt);
  if (!r || s->dtype != dt || in->operands[1]->shape->dtype != dt)
    return unsup(e, in, "to_apply other than one binary op");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return unsup(e, in, "window");
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
  bool empty = false;
  for (int d = 0; d < rank; d++) {
    const tr_window_dim *w = &wa->u.win[d];
    wsize[d] = w->size;
    stride[d] = w->stride;
    padlo[d] = w->pad_lo;
    /* defect: base dilation dropped, the input read as if undilated */
    ld[d] = TR_INJECTED(e->o->inject, EMIT_REDUCE_WINDOW_BASE_DILATION) ? 1 : w->lhs_dilate;
    rd[d] = w->rhs_dilate;
    empty |= w->size <= 0;
  }
  const char *args[2];
  args[r->operands[0]->param_index == 0 ? 0 : 1] = "acc";
  args[r->operands[0]->param_index == 0 ? 1 : 0] = "xv";
  tr_buf x = {0};
  if (!elem_value(r, args, &x, e->o->inject)) {
    tr_buf_free(&x);
    return unsup(e, in, "to_apply op");
  }
  tr_buf *k = &e->cur;
  const char *tn = tr_dtype_name(dt);
  kern_head(e, 2);
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

/* Operands converted to the result type dt into cx/cy (as k_dot). */
static void convert_operands(em *e, const tr_shape *xs, const tr_shape *ys, tr_dtype dt, const char *at) {
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "  const i64 nx = %lldLL, ny = %lldLL;\n"
                   "  %s *cx = malloc(sizeof(%s) * (nx ? nx : 1)), *cy = malloc(sizeof(%s) * (ny ? ny : 1));\n"
                   "  i64 j;\n  if (!cx || !cy) { free(cx); free(cy); return 1; }\n",
                (long long)count_of(xs), (long long)count_of(ys), at, at, at);
  for (int side = 0; side < 2; side++) {
    tr_dtype st = (side ? ys : xs)->dtype;
    tr_buf cv = {0}, ld = {0};
    tr_buf_printf(&ld, "LD_%s(a%d, j)", tr_dtype_name(st), side);
    convert_value(&cv, st, dt, ld.p, e->o->inject);
    tr_buf_printf(k, "  for (j = 0; j < n%c; j++) c%c[j] = (%s)", side ? 'y' : 'x', side ? 'y' : 'x', at);
    round_to(k, dt, cv.p);
    tr_buf_puts(k, ";\n");
    tr_buf_free(&cv);
    tr_buf_free(&ld);
  }
}

/* Convolution as the reference computes it (eval_conv.c): per output
 * element, the kernel's spatial positions in row-major order and inside
 * each the input features of its group; integer results saturate. The
 * outputs are walked in tiles of `tile` elements. */
static void emit_mm(em *e, bool dbl);

/* The fast path of a big float convolution without groups: im2col in
 * blocks of rows (output positions) times the packed kernel, with tr_mm.
 * Each output still adds its products in the reference's order (kernel
 * positions row-major, then input features); positions the reference
 * skips (padding, dilation holes) are zeros here, and adding 0 * w changes
 * nothing when w is finite (the running sum starts at +0 and is never -0),
 * so the path is taken only when every kernel element is finite. */
static void conv_fast(em *e, const tr_instr *in, int64_t C, int64_t O, int64_t kpos) {
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
                   "          for (c = 0; c < %lldLL; c++) ar[kq * %lldLL + c] = skip ? 0 : cx[xo + c * %lldLL];\n"
                   "          for (d = %d; d >= 0; d--) { if (++kk2[d] < wsize[d]) break; kk2[d] = 0; }\n        }\n"
                   "      }\n",
                (long long)RB, (long long)RB, (long long)RB, ns > 0 ? ns : 1, at, ns - 1, ns, (long long)kpos,
                (long long)xst[cd->in_batch], ns, (long long)C, (long long)C, (long long)xst[cd->in_feature], ns - 1);
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

static tr_status k_convolution(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *ys = in->operands[1]->shape;
  const tr_attr *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS), *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  const tr_attr *fa = tr_instr_attr(in, TR_ATTR_FEATURE_GROUP_COUNT);
  const tr_attr *ba = tr_instr_attr(in, TR_ATTR_BATCH_GROUP_COUNT);
  if (in->noperands != 2 || !dl || !dl->u.conv) return unsup(e, in, "dim_labels");
  const tr_convdims *cd = dl->u.conv;
  int ns = cd->nspatial;
  if (ns + 2 > 32 || (ns > 0 && (!wa || wa->n != ns))) return unsup(e, in, "window");
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
  kern_head(e, 2);
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
  convert_operands(e, xs, ys, dt, at);
  int64_t kpos = 1;
  for (int i = 0; i < ns; i++) kpos *= wsize[i];
  if (is_flt(dt) && G == 1 && B == 1 && !empty && count_of(s) > 0 && count_of(s) * kpos * C >= 32768) {
    int64_t rst[64], osst[32];
    strides(s, rst);
    for (int i = 0; i < ns; i++) osst[i] = rst[cd->out_spatial[i]];
    emit_i64s(k, "osst", osst, ns);
    conv_fast(e, in, C, O, kpos);
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
    if (dt == TR_DT_PRED) tr_buf_puts(k, "          acc |= cx[xi] & cy[yi];\n");
    else tr_buf_printf(k, "          %s p = cx[xi] * cy[yi];\n          acc = acc + p;\n", at);
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
 * bit for bit. With AVX-512 (checked at run time) a vector is 64 bytes;
 * else plain loops that cc vectorizes as it can. Padding rows and columns
 * are computed but never stored. */
static void emit_mm(em *e, bool dbl) {
  if (e->mm_done[dbl]) return;
  e->mm_done[dbl] = true;
  const char *T = dbl ? "double" : "float", *f = dbl ? "d" : "f";
  int nb = dbl ? 16 : 32, vw = dbl ? 8 : 16;
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
  tr_buf_printf(k, "typedef %s tr_v%s __attribute__((vector_size(64)));\n"
                   "__attribute__((target(\"avx512f\"))) static void tr_mm_%s_v(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K, i64 r0, i64 r1) {\n"
                   "  i64 s, i0, q, ns = (N + %d) / %d;\n  int r, j;\n"
                   "  for (s = 0; s < ns; s++)\n    for (i0 = r0; i0 < r1; i0 += 4) {\n"
                   "      const %s *bs = pb + s * K * %d, *a0 = pa + i0 * K, *a1 = a0 + K, *a2 = a1 + K, *a3 = a2 + K;\n"
                   "      tr_v%s c00, c01, c10, c11, c20, c21, c30, c31, b0, b1;\n      %s t[4][%d];\n"
                   "      memset(&c00, 0, sizeof c00);\n      c01 = c10 = c11 = c20 = c21 = c30 = c31 = c00;\n"
                   "      for (q = 0; q < K; q++) {\n"
                   "        memcpy(&b0, bs + q * %d, sizeof b0);\n        memcpy(&b1, bs + q * %d + %d, sizeof b1);\n"
                   "        c00 = c00 + b0 * a0[q]; c01 = c01 + b1 * a0[q];\n"
                   "        c10 = c10 + b0 * a1[q]; c11 = c11 + b1 * a1[q];\n"
                   "        c20 = c20 + b0 * a2[q]; c21 = c21 + b1 * a2[q];\n"
                   "        c30 = c30 + b0 * a3[q]; c31 = c31 + b1 * a3[q];\n      }\n"
                   "      memcpy(t[0], &c00, sizeof c00); memcpy(t[0] + %d, &c01, sizeof c01);\n"
                   "      memcpy(t[1], &c10, sizeof c10); memcpy(t[1] + %d, &c11, sizeof c11);\n"
                   "      memcpy(t[2], &c20, sizeof c20); memcpy(t[2] + %d, &c21, sizeof c21);\n"
                   "      memcpy(t[3], &c30, sizeof c30); memcpy(t[3] + %d, &c31, sizeof c31);\n"
                   "      for (r = 0; r < 4 && i0 + r < M; r++)\n"
                   "        for (j = 0; j < %d && s * %d + j < N; j++) c[(i0 + r) * N + s * %d + j] = t[r][j];\n"
                   "    }\n}\n",
                T, f, f, T, T, T, nb - 1, nb, T, nb, f, T, nb, nb, nb, vw, vw, vw, vw, vw, nb, nb, nb);
  tr_buf_puts(k, "#define TR_MM_AVX512 1\n#endif\n");
  /* One thread: on this project's shared 2-vCPU container, splitting the
   * row groups between two threads (tried: same bits, one thread per
   * output) gained nothing for a dot and made a convolution up to 3x
   * slower in the worker. The r0..r1 row range is where threads would
   * split on a bigger machine. */
  tr_buf_printf(k, "static void tr_mm_%s(const %s *pa, const %s *pb, %s *c, i64 M, i64 N, i64 K) {\n"
                   "#ifdef TR_MM_AVX512\n"
                   "  if (__builtin_cpu_supports(\"avx512f\")) { tr_mm_%s_v(pa, pb, c, M, N, K, 0, (M + 3) / 4 * 4); return; }\n"
                   "#endif\n  tr_mm_%s_c(pa, pb, c, M, N, K, 0, (M + 3) / 4 * 4);\n}\n",
                f, T, T, T, f, f);
}

static tr_status k_dot(em *e, const tr_instr *in) {
  const tr_shape *s = in->shape, *xs = in->operands[0]->shape, *ys = in->operands[1]->shape;
  tr_dtype dt = s->dtype;
  int nlb, nlc, nrb, nrc;
  const int64_t *lb = ints_attr(in, TR_ATTR_LHS_BATCH_DIMS, &nlb);
  const int64_t *lc = ints_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nlc);
  const int64_t *rb = ints_attr(in, TR_ATTR_RHS_BATCH_DIMS, &nrb);
  const int64_t *rc = ints_attr(in, TR_ATTR_RHS_CONTRACTING_DIMS, &nrc);
  if (in->noperands != 2 || nlb != nrb || nlc != nrc) return unsup(e, in, "sparse or malformed dot");
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
    if (!has(lb, nlb, i) && !has(lc, nlc, i)) {
      odim[no] = xs->dims[i];
      ox[no] = xst[i];
      oy[no++] = 0;
    }
  for (int i = 0; i < ys->rank; i++)
    if (!has(rb, nrb, i) && !has(rc, nrc, i)) {
      odim[no] = ys->dims[i];
      ox[no] = 0;
      oy[no++] = yst[i];
    }
  if (no != s->rank) return unsup(e, in, "dot dimensions");
  int64_t nk = 1;
  for (int i = 0; i < nlc; i++) {
    kdim[i] = xs->dims[lc[i]];
    kxs[i] = xst[lc[i]];
    kys[i] = yst[rc[i]];
    nk *= kdim[i];
  }
  /* As the reference: operands converted to the result type first; floats
   * up to f32 accumulate in float, f64 in double, ints wrap in 64 bits,
   * pred is an OR of ANDs; products and sums are separate statements. */
  const char *at = dt == TR_DT_F64 ? "double" : is_flt(dt) ? "float" : "u64";
  const char *tn = tr_dtype_name(dt);
  tr_buf *k = &e->cur;
  int T = e->o->tile;
  kern_head(e, 2);
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
    convert_value(&cv, st, dt, ld.p, e->o->inject);
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
    emit_mm(e, dbl);
    tr_buf_printf(k, "  {\n    const i64 NBAT = %lldLL, M = %lldLL, N = %lldLL, Mp = (M + 3) / 4 * 4, ns = (N + %d) / %d;\n"
                     "    i64 *ob = malloc(sizeof(i64) * 2 * NBAT), *om = malloc(sizeof(i64) * M), *on = malloc(sizeof(i64) * N), b, i;\n"
                     "    %s *pa = calloc((size_t)(Mp * nk), sizeof(%s)), *pb = calloc((size_t)(ns * nk * %d), sizeof(%s)),"
                     " *pc = malloc(sizeof(%s) * %s);\n"
                     "    int rc = !ob || !om || !on || !pa || !pb || !pc;\n",
                  (long long)nbat, (long long)M, (long long)N, nb - 1, nb, at, at, nb, at, at,
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
    for (int side = 0; side < 2; side++) {
      tr_dtype st = (side ? ys : xs)->dtype;
      tr_buf_printf(&ld, side ? "LD_%s(a1, ob[2 * b + 1] + on[j] + ky[q])" : "LD_%s(a0, ob[2 * b] + om[i] + kx[q])",
                    tr_dtype_name(st));
      tr_buf x = {0};
      convert_value(&x, st, dt, ld.p, e->o->inject);
      tr_buf_printf(&cv[side], "(%s)", at);
      round_to(&cv[side], dt, x.p);
      tr_buf_free(&x);
      tr_buf_free(&ld);
    }
    tr_buf_printf(k, "    for (b = 0; !rc && b < NBAT; b++) {\n"
                     "      for (i = 0; i < M; i++)\n        for (q = 0; q < nk; q++) pa[i * nk + q] = %s;\n"
                     "      for (q = 0; q < nk; q++)\n        for (j = 0; j < N; j++) pb[((j / %d) * nk + q) * %d + j %% %d] = %s;\n",
                  cv[0].p, nb, nb, nb, cv[1].p);
    if (direct)
      tr_buf_printf(k, "      tr_mm_%s(pa, pb, (%s *)(void *)r + b * M * N, M, N, nk);\n    }\n", dbl ? "d" : "f", at);
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

/* ---- ops that call a scalar computation per element ---- */

static tr_status emit_comp(em *e, const tr_comp *c);

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

static tr_status k_reduce(em *e, const tr_instr *in) { return k_reduce_in(e, in, NULL); }

/* Any reduce: per output, to_apply called on (accumulators, elements)
 * for each reduced element in increasing row-major order (eval.c's
 * general path). Results go to rs[0..nin). */
static tr_status k_reduce_generic(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nin = in->noperands / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin) return unsup(e, in, "operands");
  tr_dtype acc[16], el[16];
  const tr_shape *xs = in->operands[0]->shape;
  for (int i = 0; i < nin; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    acc[i] = os->dtype;
    el[i] = in->operands[i]->shape->dtype;
    if (in->operands[nin + i]->shape->dtype != acc[i] || !tr_shape_same_dims(in->operands[i]->shape, xs))
      return unsup(e, in, "init of another type");
  }
  if (!scalar_sig(ap, nin, acc, el)) return unsup(e, in, "to_apply signature");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  int n;
  const int64_t *dm = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  int64_t xst[64], kd[64], ks[64], rd[64], rsd[64];
  int nk = 0, nr = 0;
  strides(xs, xst);
  int64_t nout = 1, nred = 1;
  for (int d = 0; d < xs->rank; d++) {
    if (has(dm, n, d)) {
      rd[nr] = xs->dims[d];
      rsd[nr++] = xst[d];
      nred *= xs->dims[d];
    } else {
      kd[nk] = xs->dims[d];
      ks[nk++] = xst[d];
      nout *= xs->dims[d];
    }
  }
  tr_buf *k = &e->cur;
  /* An array result is passed as one pointer, a tuple as an array. */
  bool arr = tr_shape_is_array(in->shape);
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\nstatic int kK(%s", ap->id, arr ? "u8 *r" : "u8 **rs");
  for (int i = 0; i < 2 * nin; i++) tr_buf_printf(k, ", const u8 *a%d", i);
  tr_buf_puts(k, ", i64 n) {\n");
  if (arr) tr_buf_puts(k, "  u8 *rs[1] = {r};\n");
  emit_i64s(k, "kd", kd, nk);
  emit_i64s(k, "ks", ks, nk);
  emit_i64s(k, "rd", rd, nr);
  emit_i64s(k, "rsd", rsd, nr);
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
static tr_status k_map(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nop = in->noperands;
  if (!ap || !ap->root || nop < 1 || nop > 64 || ap->nparams != nop) return unsup(e, in, "to_apply");
  for (int i = 0; i < nop; i++) {
    const tr_shape *ps = ap->params[i] ? ap->params[i]->shape : NULL;
    if (!ps || !tr_shape_is_array(ps) || ps->rank || ps->dtype != in->operands[i]->shape->dtype)
      return unsup(e, in, "to_apply signature");
  }
  const tr_shape *rs = ap->root->shape;
  if (!tr_shape_is_array(rs) || rs->rank || rs->dtype != in->shape->dtype) return unsup(e, in, "to_apply result");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\n", ap->id);
  kern_head(e, nop);
  tr_buf_printf(k, "  u8 *args[%d], *res[1];\n  i64 i;\n  int rc;\n  for (i = 0; i < n; i++) {\n", nop);
  for (int i = 0; i < nop; i++)
    tr_buf_printf(k, "    args[%d] = (u8 *)a%d + i * %d;\n", i, i, es_of(in->operands[i]->shape->dtype));
  tr_buf_printf(k, "    res[0] = r + i * %d;\n    if ((rc = comp%d(args, res)) != 0) return rc;\n  }\n  return 0;\n}\n",
                es_of(in->shape->dtype), ap->id);
  return TR_OK;
}

/* scatter, variadic included: to_apply called per update element through
 * a small apply function handed to the prelude's tr_scatter. */
static tr_status k_scatter(em *e, const tr_instr *in) {
  int nin = (in->noperands - 1) / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin + 1) return unsup(e, in, "operands");
  const tr_shape *xs = in->operands[0]->shape, *is = in->operands[nin]->shape, *us = in->operands[nin + 1]->shape;
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  tr_dtype acc[16], el[16];
  for (int i = 0; i < nin; i++) {
    acc[i] = in->operands[i]->shape->dtype;
    el[i] = in->operands[nin + 1 + i]->shape->dtype;
  }
  if (!scalar_sig(ap, nin, acc, el)) return unsup(e, in, "to_apply signature");
  int nuw, niw, nsd, nib, nsb;
  const int64_t *uw = ints_attr(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nuw);
  const int64_t *iw = ints_attr(in, TR_ATTR_INSERTED_WINDOW_DIMS, &niw);
  const int64_t *sd = ints_attr(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nsd);
  const int64_t *ib = ints_attr(in, TR_ATTR_INPUT_BATCHING_DIMS, &nib);
  const int64_t *sb = ints_attr(in, TR_ATTR_SCATTER_INDICES_BATCHING_DIMS, &nsb);
  const tr_attr *iv = tr_instr_attr(in, TR_ATTR_INDEX_VECTOR_DIM);
  int64_t ivd = iv ? iv->u.i : 0;
  if (nib != nsb || xs->rank > 60 || is->rank > 60 || us->rank > 60) return unsup(e, in, "attributes");
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
static tr_status k_sort(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  int nop = in->noperands;
  if (!ap || !ap->root || !da || da->n != 1 || nop < 1 || nop > 32 || ap->nparams != 2 * nop)
    return unsup(e, in, "comparator or dimensions");
  const tr_shape *xs = in->operands[0]->shape;
  int dim = (int)da->u.ints[0];
  if (dim < 0 || dim >= xs->rank) return unsup(e, in, "dimension");
  for (int i = 0; i < 2 * nop; i++) {
    const tr_shape *ps = ap->params[i] ? ap->params[i]->shape : NULL;
    if (!ps || !tr_shape_is_array(ps) || ps->rank || ps->dtype != in->operands[i / 2]->shape->dtype)
      return unsup(e, in, "comparator signature");
  }
  const tr_shape *rs = ap->root->shape;
  if (!tr_shape_is_array(rs) || rs->rank || rs->dtype != TR_DT_PRED) return unsup(e, in, "comparator result");
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
static tr_status k_topk(em *e, const tr_instr *in) {
  const tr_attr *ka = tr_instr_attr(in, TR_ATTR_K), *la = tr_instr_attr(in, TR_ATTR_LARGEST);
  const tr_shape *xs = in->operands[0]->shape;
  int64_t kk = ka ? ka->u.i : 0;
  int r = xs->rank;
  if (r < 1 || kk < 0 || kk > xs->dims[r - 1] || in->shape->dtype != TR_DT_TUPLE) return unsup(e, in, "k");
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
static tr_status k_reduce_window_generic(em *e, const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  int nin = in->noperands / 2;
  if (nin < 1 || nin > 16 || in->noperands != 2 * nin) return unsup(e, in, "operands");
  const tr_shape *xs = in->operands[0]->shape;
  const tr_shape *os0 = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[0] : in->shape;
  tr_dtype acc[16], el[16];
  for (int i = 0; i < nin; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    acc[i] = os->dtype;
    el[i] = in->operands[i]->shape->dtype;
    if (in->operands[nin + i]->shape->dtype != acc[i]) return unsup(e, in, "init of another type");
  }
  if (!scalar_sig(ap, nin, acc, el)) return unsup(e, in, "to_apply signature");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return unsup(e, in, "window");
  tr_status st = emit_comp(e, ap);
  if (st != TR_OK) return st;
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
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
static bool simple_reduce_window(const tr_instr *in) {
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  const tr_comp *ap = ta && ta->kind == TR_AK_COMP ? ta->u.comp : NULL;
  if (in->noperands != 2 || !tr_shape_is_array(in->shape)) return false;
  tr_dtype dt = in->operands[0]->shape->dtype;
  return simple_binary(ap, dt) && in->shape->dtype == dt && in->operands[1]->shape->dtype == dt;
}

/* select-and-scatter (eval_window.c): per source element, the first valid
 * window position is the choice and a later one replaces it when
 * select(choice, x) is false; then out[choice] = scatter(source,
 * out[choice]), the reference's argument order. */
static tr_status k_select_and_scatter(em *e, const tr_instr *in) {
  const tr_attr *sa = tr_instr_attr(in, TR_ATTR_SELECT), *ca = tr_instr_attr(in, TR_ATTR_SCATTER);
  const tr_comp *sel = sa && sa->kind == TR_AK_COMP ? sa->u.comp : NULL;
  const tr_comp *sc = ca && ca->kind == TR_AK_COMP ? ca->u.comp : NULL;
  const tr_shape *xs = in->operands[0]->shape, *ss = in->operands[1]->shape, *s = in->shape;
  tr_dtype dt = s->dtype;
  if (!sel || !sc || !sel->root || !sc->root || sel->nparams != 2 || sc->nparams != 2 ||
      in->operands[2]->shape->dtype != dt)
    return unsup(e, in, "select, scatter or init");
  for (int i = 0; i < 2; i++) {
    const tr_shape *p0 = sel->params[i] ? sel->params[i]->shape : NULL;
    const tr_shape *p1 = sc->params[i] ? sc->params[i]->shape : NULL;
    if (!p0 || !p1 || !tr_shape_is_array(p0) || !tr_shape_is_array(p1) || p0->rank || p1->rank ||
        p0->dtype != xs->dtype || p1->dtype != (i == 0 ? ss->dtype : dt))
      return unsup(e, in, "select or scatter signature");
  }
  if (!tr_shape_is_array(sel->root->shape) || sel->root->shape->rank || sel->root->shape->dtype != TR_DT_PRED ||
      !tr_shape_is_array(sc->root->shape) || sc->root->shape->rank || sc->root->shape->dtype != dt)
    return unsup(e, in, "select or scatter result");
  int rank = xs->rank;
  const tr_attr *wa = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (rank == 0 || !wa || wa->n != rank) return unsup(e, in, "window");
  tr_status st = emit_comp(e, sel);
  if (st == TR_OK) st = emit_comp(e, sc);
  if (st != TR_OK) return st;
  int64_t xst[64], wsize[64], stride[64], padlo[64], ld[64], rd[64];
  strides(xs, xst);
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
  int es = es_of(dt), xes = es_of(xs->dtype), ses = es_of(ss->dtype);
  tr_buf *k = &e->cur;
  tr_buf_printf(k, "static int comp%d(u8 **p, u8 **r);\nstatic int comp%d(u8 **p, u8 **r);\n", sel->id, sc->id);
  kern_head(e, 3);
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

/* ---- computations ---- */


static const tr_comp *comp_attr(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_COMP ? at->u.comp : NULL;
}

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
  const tr_comp *cond = comp_attr(in, TR_ATTR_CONDITION), *bd = comp_attr(in, TR_ATTR_BODY);
  if (!cond || !bd) return unsup(e, in, "condition or body");
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
  const tr_comp *two[2] = {comp_attr(in, TR_ATTR_TRUE_COMPUTATION), comp_attr(in, TR_ATTR_FALSE_COMPUTATION)};
  tr_comp *const *br = bc ? bc->u.comps : (tr_comp *const *)two;
  int nb = bc ? bc->n : 2;
  if (nb < 1 || in->noperands != nb + 1) return unsup(e, in, "branches");
  for (int i = 0; i < nb; i++) {
    if (!br[i]) return unsup(e, in, "branches");
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
      return unsup(e, in, "more than one participant");
  const tr_shape *s = in->shape;
  int n = in->noperands;
  bool tuple = s->dtype == TR_DT_TUPLE;
  if ((tuple && s->nelems != n) || (!tuple && n != 1)) return unsup(e, in, "operands");
  for (int i = 0; i < n; i++) {
    const tr_shape *es = tuple ? s->elems[i] : s;
    if (!tr_shape_is_array(in->operands[i]->shape) || !tr_shape_equal(es, in->operands[i]->shape))
      return unsup(e, in, "a shape change (one participant is modelled)");
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
  if (!shape_ok(in->shape)) return unsup(e, in, "element type or dynamic shape");
  if (leaf_count(in->shape) > 256) return unsup(e, in, "more than 256 tuple leaves");
  for (int i = 0; i < in->noperands; i++)
    if (!shape_ok(in->operands[i]->shape)) return unsup(e, in, "operand element type or dynamic shape");
  switch (in->op) {
  case TR_OP_PARAMETER: {
    int off = 0;
    for (int64_t p = 0; p < in->param_index && p < c->nparams; p++) off += leaf_count(c->params[p]->shape);
    const tr_shape *sh[256];
    int n = shape_leaves(in->shape, sh, 256);
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
    if (!ia || ts->dtype != TR_DT_TUPLE || ia->u.i < 0 || ia->u.i >= ts->nelems) return unsup(e, in, "index");
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
    const tr_literal *lits[256];
    int n = literal_leaves(in->literal, lits, 256);
    if (n < 0 || n != leaf_count(in->shape) || n > 256) return unsup(e, in, "elided constant");
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
    const tr_comp *cc = comp_attr(in, TR_ATTR_TO_APPLY);
    if (!cc) return unsup(e, in, "to_apply");
    tr_status s = emit_comp(e, cc);
    if (s != TR_OK) return s;
    own_leaves(e, in);
    alloc_leaves(e, in, body);
    call_comp(e, cc, in->operands, in->noperands, in, body);
    return TR_OK;
  }
  case TR_OP_FUSION: {
    const tr_comp *fc = tr_instr_fused(in);
    if (!fc) return unsup(e, in, "calls");
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
  bool multi = (in->op == TR_OP_REDUCE && !simple_reduce(in)) || in->op == TR_OP_SORT ||
               in->op == TR_OP_TOPK || in->op == TR_OP_SCATTER ||
               (in->op == TR_OP_REDUCE_WINDOW && !simple_reduce_window(in));
  if (!tr_shape_is_array(in->shape) && !multi) return unsup(e, in, "tuple result");
  for (int i = 0; i < in->noperands; i++)
    if (!tr_shape_is_array(in->operands[i]->shape)) return unsup(e, in, "tuple operand");
  if (in->noperands > 256) return unsup(e, in, "more than 256 operands");
  /* Kernels that move elements as bytes (or hand their addresses to a
   * called computation) see s4/u4 one per byte: their packed operands are
   * unpacked into scratch before the call and their results packed after. */
  bool bytewise = multi || in->op == TR_OP_MAP || in->op == TR_OP_GATHER ||
                  in->op == TR_OP_SELECT_AND_SCATTER || in->op == TR_OP_BITCAST_CONVERT;
  bool any4 = false;
  for (int i = 0; i < in->noperands; i++) any4 |= is4(in->operands[i]->shape->dtype);
  {
    const tr_shape *rsh[256];
    int nrl = shape_leaves(in->shape, rsh, 256);
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
      return unsup(e, in, "a bitcast that changes the element type");
    kern_head(e, 1);
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
  case TR_OP_TRIANGULAR_SOLVE: s = k_triangular_solve(e, in); break;
  case TR_OP_REPLICA_ID: case TR_OP_PARTITION_ID:
    /* One replica, one partition: the id is 0. */
    kern_head(e, 0);
    tr_buf_puts(&e->cur, "  memset(r, 0, 4);\n  return 0;\n}\n");
    s = TR_OK;
    break;
  case TR_OP_DOT: s = k_dot(e, in); break;
  case TR_OP_CONVOLUTION: s = k_convolution(e, in); break;
  case TR_OP_REDUCE_WINDOW:
    s = simple_reduce_window(in) ? k_reduce_window(e, in) : k_reduce_window_generic(e, in);
    break;
  default:
    if (!elem_op(in->op)) return unsup(e, in, NULL);
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
  char *args[256], *res[256];
  int nres = rl->n < 256 ? rl->n : 256;
  for (int i = 0; i < in->noperands && i < 256; i++) {
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
    free(res[j]);
  }
  for (int i = 0; i < in->noperands; i++) free(args[i]);
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
  free(stack);
}

static tr_status emit_comp(em *e, const tr_comp *c) {
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
  free(live);
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

bool tr_emit_supports(tr_op op) {
  switch (op) {
  case TR_OP_PARAMETER: case TR_OP_CONSTANT: case TR_OP_TUPLE: case TR_OP_GET_TUPLE_ELEMENT:
  case TR_OP_OPT_BARRIER: case TR_OP_DOMAIN: case TR_OP_ADD_DEPENDENCY: case TR_OP_AFTER_ALL:
  case TR_OP_WHILE: case TR_OP_CONDITIONAL: case TR_OP_CALL: case TR_OP_FUSION:
  case TR_OP_BROADCAST: case TR_OP_TRANSPOSE: case TR_OP_REVERSE: case TR_OP_SLICE:
  case TR_OP_RESHAPE: case TR_OP_BITCAST: case TR_OP_PAD: case TR_OP_CONCATENATE: case TR_OP_IOTA:
  case TR_OP_DYNAMIC_SLICE: case TR_OP_DYNAMIC_UPDATE_SLICE: case TR_OP_REDUCE_PRECISION:
  case TR_OP_BITCAST_CONVERT: case TR_OP_REDUCE: case TR_OP_DOT: case TR_OP_CONVOLUTION:
  case TR_OP_REDUCE_WINDOW: case TR_OP_MAP: case TR_OP_REPLICA_ID: case TR_OP_PARTITION_ID:
  case TR_OP_ALL_REDUCE: case TR_OP_ALL_GATHER: case TR_OP_REDUCE_SCATTER: case TR_OP_ALL_TO_ALL:
  case TR_OP_COLLECTIVE_PERMUTE: case TR_OP_GATHER: case TR_OP_SCATTER: case TR_OP_SORT:
  case TR_OP_TOPK: case TR_OP_SELECT_AND_SCATTER: case TR_OP_CHOLESKY: case TR_OP_TRIANGULAR_SOLVE:
    return true;
  default: return elem_op(op);
  }
}

/* The exported entry. Tensors outside keep s4/u4 one per byte
 * (tensor.h): such parameters are packed into scratch on the way in and
 * such outputs unpacked on the way out; without any, in and out are
 * handed straight to the entry computation. */
static void emit_entry(em *e, tr_buf *out) {
  const tr_comp *c = e->m->entry;
  const tr_shape *in[256], *res[256];
  int nin = 0, nres = shape_leaves(c->root->shape, res, 256);
  bool any4 = false;
  for (int p = 0; p < c->nparams; p++)
    if (c->params[p]) nin += shape_leaves(c->params[p]->shape, in + nin, 256 - nin);
  if (nin > 256) nin = 256;
  if (nres > 256) nres = 256;
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
    free(e.lv);
    free(e.done);
    return TR_ERR_USAGE;
  }
  tr_status s = emit_comp(&e, m->entry);
  if (s == TR_OK) {
    tr_emit_prelude(out);
    tr_buf_puts(out, tr_buf_str(&e.kern));
    tr_buf_puts(out, tr_buf_str(&e.funcs));
    emit_entry(&e, out);
  }
  for (int i = 0; i <= e.nids; i++) {
    for (int j = 0; j < e.lv[i].n; j++) free(e.lv[i].leaf[j]);
    free(e.lv[i].leaf);
    free(e.lv[i].shape);
  }
  free(e.lv);
  free(e.done);
  for (int i = 0; i < e.nk; i++) free(e.ktext[i]);
  free(e.ktext);
  free(e.kid);
  tr_buf_free(&e.kern);
  tr_buf_free(&e.cur);
  tr_buf_free(&e.funcs);
  return s;
}
