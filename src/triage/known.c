/* known.c - recorded bugs recognised by their trigger (known.def). Each
 * matcher states, over the culprit instruction and its first wrong
 * element (case.c), the condition docs/FINDINGS.md gives for one bug:
 * the op and dtype, the operand values that set it off, the producers
 * around it that a rewrite needs, whether the operands fold. A matcher
 * is as narrow as its finding's description; a finding it does not fit
 * stays unlabelled, which is the safe side. */
#include "triageint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef bool known_fn(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *sig);

/* ---- what matchers ask ---- */

/* Kind tests that take TR_DT_COUNT too: a case without a wrong element
 * (a crash, a compile error) has no dtype. */
static bool is_kind(tr_dtype t, tr_dkind k) { return t < TR_DT_COUNT && tr_dtypes[t].kind == k; }
static bool is_float(tr_dtype t) { return is_kind(t, TR_DK_FLOAT); }
static bool is_sint(tr_dtype t) { return is_kind(t, TR_DK_SINT); }
static bool is_uint(tr_dtype t) { return is_kind(t, TR_DK_UINT); }
static bool is_int(tr_dtype t) { return is_sint(t) || is_uint(t); }
static bool is_complex(tr_dtype t) { return is_kind(t, TR_DK_COMPLEX); }
static bool kind_is(const tr_check_sig *s, const char *k) { return strcmp(s->kind, k) == 0; }

/* Producer of operand k, NULL past the operands. */
static const tr_instr *opnd(const tr_instr *in, int k) { return k < in->noperands ? in->operands[k] : NULL; }
static bool opnd_is(const tr_instr *in, int k, tr_op op) {
  const tr_instr *a = opnd(in, k);
  return a && a->op == op;
}
/* x, or what it moves (through reshape, transpose, broadcast, slice,
 * copy): the op that computed its values. */
static const tr_instr *through_moves(const tr_instr *x) {
  while (x && x->noperands >= 1 &&
         (x->op == TR_OP_BROADCAST || x->op == TR_OP_RESHAPE || x->op == TR_OP_TRANSPOSE || x->op == TR_OP_COPY ||
          x->op == TR_OP_SLICE))
    x = x->operands[0];
  return x;
}
/* A nonzero value of a float type below its smallest normal (complex:
 * of its part's type). */
static bool denormal(tr_dtype t, double v) {
  if (t == TR_DT_C64) t = TR_DT_F32;
  if (t == TR_DT_C128) t = TR_DT_F64;
  if (!is_float(t) || v == 0 || isnan(v)) return false;
  return fabs(v) < ldexp(1.0, 1 - tr_dtypes[t].bias);
}
static bool arg_denormal(const tr_triage_case *c, int k) {
  return k < c->nargs && c->arg_set[k] && denormal(c->arg_dt[k], c->arg[k]);
}
static bool all_folded(const tr_triage_case *c) {
  if (c->noperands == 0 || c->nargs < c->noperands) return false;
  for (int k = 0; k < c->nargs; k++)
    if (!c->arg_folded[k]) return false;
  return true;
}
/* The wrong element's error in units in the last place of dt at ref.
 * ref is the reference's value rounded to dt, half an ulp from the exact
 * one at most: an error measured against the exact value (as the worst
 * cases below were) is up to half an ulp larger against ref. */
static double ulps(tr_dtype dt, double ref, double target) {
  if (!is_float(dt) || !isfinite(ref) || !isfinite(target)) return INFINITY;
  int e = 0;
  frexp(ref, &e); /* ref = f * 2^e, f in [0.5, 1) */
  int emin = 2 - tr_dtypes[dt].bias;
  if (e < emin) e = emin;
  return fabs(target - ref) / ldexp(1.0, e - 1 - tr_dtypes[dt].mbits);
}

/* ---- one matcher a recorded bug ---- */

static bool x1_reduce_nan(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_REDUCE && c->elem && isnan(c->ref) && !isnan(c->target) && c->nargs >= 1 &&
         c->arg_n[0] >= 4096;
}
static bool x2_div_zero(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  return kind_is(s, "crash") && (in->op == TR_OP_DIVIDE || in->op == TR_OP_REMAINDER) &&
         is_int(c->dtype) && all_folded(c) && c->arg_zero[1];
}
static bool x3_popcnt_s4(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_POPCNT && c->dtype == TR_DT_S4;
}
/* Whether constant x (or what it moves) is unsigned and holds an element
 * with its top bit set. */
static bool const_uint_top_bit(const tr_instr *x) {
  x = through_moves(x);
  if (!x || x->op != TR_OP_CONSTANT || !x->literal || !x->literal->data || !tr_shape_is_array(x->shape)) return false;
  tr_dtype t = x->shape->dtype;
  if (!is_uint(t)) return false;
  size_t es = tr_dtype_size(t);
  int bits = tr_dtypes[t].bits;
  if (es == 0 || es > 8 || bits < 1 || bits > 64) return false;
  int64_t n = tr_shape_count(x->shape);
  for (int64_t i = 0; i < n && i < 100000; i++) {
    uint64_t v = 0;
    memcpy(&v, (const char *)x->literal->data + (size_t)i * es, es);
    if ((v >> (bits - 1)) & 1) return true;
  }
  return false;
}
static bool x4_ds_unsigned(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  /* A gather with constant start indices is a dynamic-slice to jax's
   * StableHLO -> HLO step, which folds it to a slice reading u32
   * 2785378565 as negative (session 12, seed 29, mismatch-tuple-bf16). */
  if (in->op == TR_OP_GATHER) return const_uint_top_bit(opnd(in, 1));
  int first = in->op == TR_OP_DYNAMIC_SLICE ? 1 : in->op == TR_OP_DYNAMIC_UPDATE_SLICE ? 2 : -1;
  if (first < 0) return false;
  for (int k = first; k < c->nargs; k++) {
    tr_dtype t = c->arg_dt[k];
    if (is_uint(t) && c->arg_folded[k] && c->arg_set[k] && tr_dtypes[t].bits < 64 &&
        c->arg_bits[k] >= (1ull << (tr_dtypes[t].bits - 1)))
      return true;
    if (t == TR_DT_U64 && c->arg_folded[k] && c->arg_set[k] && c->arg_bits[k] >= (1ull << 63)) return true;
  }
  return false;
}
static bool x5_rng_signed(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  if (!kind_is(s, "protocol_error") || in->op != TR_OP_RNG_BIT_GENERATOR) return false;
  const tr_shape *sh = in->shape;
  return sh->dtype == TR_DT_TUPLE && sh->nelems == 2 && is_sint(sh->elems[1]->dtype);
}
static bool x6_all_to_all(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  return kind_is(s, "crash") && in->op == TR_OP_ALL_TO_ALL && in->shape->dtype == TR_DT_TUPLE;
}
static bool x7_log1p_f64(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  /* 128 ulps in (-0.5, -0.29); elsewhere up to 1.915 (2 million random
   * points of (0.3, 0.8)) where XLA's contract is 1 */
  if (in->op == TR_OP_LOG_PLUS_ONE && c->dtype == TR_DT_F64 && c->arg_set[0])
    return (c->arg[0] > -0.5 && c->arg[0] < -0.29) || (c->elem && ulps(c->dtype, c->ref, c->target) <= 1.92 + 0.5);
  /* log|z| of c128 log and log1p goes through the same f64 log1p. */
  return (in->op == TR_OP_LOG || in->op == TR_OP_LOG_PLUS_ONE) && c->nargs >= 1 && c->arg_dt[0] == TR_DT_C128 &&
         c->elem && isfinite(c->target);
}
/* Whether constant x holds a nonzero denormal of f32, f64 or bf16 (the
 * dtypes XLA CPU's compiled code flushes). */
static bool const_denormal(const tr_instr *x) {
  if (x->op != TR_OP_CONSTANT || !x->literal || !x->literal->data || !tr_shape_is_array(x->shape)) return false;
  tr_dtype t = x->shape->dtype;
  if (t != TR_DT_F32 && t != TR_DT_F64 && t != TR_DT_BF16) return false;
  size_t es = tr_dtype_size(t);
  int64_t n = tr_shape_count(x->shape);
  double mn = ldexp(1.0, 1 - tr_dtypes[t].bias);
  for (int64_t i = 0; i < n && i < 100000; i++) {
    uint64_t bits = 0;
    memcpy(&bits, (const char *)x->literal->data + (size_t)i * es, es);
    double v = tr_float_to_double(t, bits);
    if (v != 0 && fabs(v) < mn) return true;
  }
  return false;
}
/* A float culprit with an operand that the folder computes (not a plain
 * constant) from a constant holding a denormal: the folder keeps the
 * denormal (log(9e-41) is -92) while the compiled code around it reads the
 * same constant as 0 (x <= 0 holds), so one program sees two values of it. */
static bool folded_denormal(const tr_instr *in, const tr_triage_case *c) {
  if (!is_float(c->dtype)) return false;
  for (int k = 0; k < c->nargs && k < in->noperands; k++) {
    const tr_instr *a = in->operands[k];
    /* ... or a denormal the folder computed (remainder(-0.588, 1.5e-323))
     * read by compiled code as 0 (log of it -inf); a denormal constant
     * read directly is findings 9, 10 and 22's trigger. */
    const tr_instr *from = through_moves(a);
    while (from && from->op == TR_OP_ABS) from = through_moves(from->operands[0]);
    if (c->arg_folded[k] && arg_denormal(c, k) && from && from->op != TR_OP_CONSTANT &&
        tr_ops[from->op].cls != TR_OPC_MOVE &&
        (c->arg_dt[k] == TR_DT_F32 || c->arg_dt[k] == TR_DT_F64 || c->arg_dt[k] == TR_DT_BF16))
      return true;
    if (!c->arg_folded[k] || a->op == TR_OP_CONSTANT || tr_ops[a->op].cls == TR_OPC_MOVE) continue;
    for (int j = 0; j < a->noperands; j++) {
      const tr_instr *src = through_moves(a->operands[j]);
      if (src && (const_denormal(src) || (src->op == TR_OP_ABS && const_denormal(through_moves(src->operands[0])))))
        return true;
    }
  }
  return false;
}
static bool x8_folder(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (folded_denormal(in, c)) return true;
  /* An integer convolution or dot of a folded convolution: the fold
   * saturates (a u4 fold: 465 gives 15 but 151 gives 7, its low 4 bits),
   * the compiled code wraps, and no reference does both. */
  if ((in->op == TR_OP_CONVOLUTION || in->op == TR_OP_DOT) && is_int(c->dtype))
    for (int k = 0; k < 2 && k < c->nargs; k++)
      if (c->arg_folded[k] && through_moves(opnd(in, k)) && through_moves(opnd(in, k))->op == TR_OP_CONVOLUTION)
        return true;
  if (!all_folded(c)) return false;
  switch (in->op) {
  case TR_OP_COUNT_LEADING_ZEROS:
    return is_sint(c->dtype) && tr_dtypes[c->dtype].bits < 64 && c->arg_set[0] && c->arg[0] < 0;
  case TR_OP_BITCAST_CONVERT:
    /* Sub-byte results take a byte each; float NaNs are canonicalised. */
    return c->dtype == TR_DT_S4 || c->dtype == TR_DT_U4 ||
           (is_float(c->arg_dt[0]) && c->elem && (isnan(c->ref) || isnan(c->target)));
  case TR_OP_CONVOLUTION: return is_int(c->dtype);
  case TR_OP_ROUND_NEAREST_EVEN:
  case TR_OP_ROUND_NEAREST_AFZ: return c->dtype == TR_DT_F8E3M4;
  case TR_OP_NEGATE: return c->dtype == TR_DT_F8E8M0FNU;
  default: return false;
  }
}
static bool x9_cbrt_denormal(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_CBRT && (c->dtype == TR_DT_F32 || c->dtype == TR_DT_BF16) && arg_denormal(c, 0);
}
static bool x10_atan2_denormal(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_ATAN2 || !arg_denormal(c, 0) || !c->arg_set[1]) return false;
  if (c->dtype == TR_DT_F64) return c->arg[1] < 0 || arg_denormal(c, 1);
  return (c->dtype == TR_DT_F32 || c->dtype == TR_DT_BF16) && arg_denormal(c, 1); /* bf16 is computed in f32 */
}
static bool x11_complex_compare(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  if (!kind_is(s, "crash") || in->op != TR_OP_COMPARE || c->nargs < 1 || !is_complex(c->arg_dt[0])) return false;
  const tr_attr *a = tr_instr_attr(in, TR_ATTR_DIRECTION);
  return a && a->u.s && strcmp(a->u.s, "EQ") != 0 && strcmp(a->u.s, "NE") != 0;
}
static bool x12_csqrt_neg_zero(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_SQRT || !is_complex(c->dtype) || !c->arg_set[0]) return false;
  double re = c->arg[0], im = c->arg_im[0];
  return re <= 0 && ((im == 0 && signbit(im)) || (im < 0 && denormal(c->dtype, im)));
}
static bool x13_div_mul(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c, (void)s;
  if (in->op != TR_OP_MULTIPLY) return false;
  for (int k = 0; k < 2; k++) {
    const tr_instr *d = opnd(in, k), *other = opnd(in, 1 - k);
    if (d && other && d->op == TR_OP_DIVIDE && d->noperands == 2 &&
        (d->operands[1] == other || (d->operands[1]->op == TR_OP_CONSTANT && other->op == TR_OP_CONSTANT)))
      return true;
  }
  return false;
}
static bool x14_cpow_split(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_POWER && c->nargs >= 1 && is_complex(c->arg_dt[0]) && c->elem &&
         (isnan(c->target) || isinf(c->target));
}
static bool x15_cbitcast(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  if ((!kind_is(s, "crash") && !kind_is(s, "compile_error")) || in->op != TR_OP_BITCAST_CONVERT) return false;
  tr_dtype from = in->operands[0]->shape->dtype, to = in->shape->dtype;
  return is_complex(from) && is_complex(to) && from != to;
}
static bool x16_contract(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  /* The largest errors measured on the swept releases
   * (bench/measure_profile.py --contract; docs/FINDINGS.md, 16). */
  static const struct {
    tr_op op;
    tr_dtype dt;
    double ulps;
  } worst[] = {
      {TR_OP_EXPONENTIAL_MINUS_ONE, TR_DT_F32, 4.88}, {TR_OP_EXPONENTIAL_MINUS_ONE, TR_DT_F64, 3.58},
      {TR_OP_EXPONENTIAL_MINUS_ONE, TR_DT_F16, 2.11}, {TR_OP_LOG_PLUS_ONE, TR_DT_F32, 2.31},
      {TR_OP_TANH, TR_DT_F32, 4.03},                  {TR_OP_TANH, TR_DT_F64, 6.79},
      {TR_OP_ERF, TR_DT_F32, 5.21},                   {TR_OP_RSQRT, TR_DT_F32, 1.54},
  };
  if (!c->elem) return false;
  for (size_t i = 0; i < sizeof worst / sizeof worst[0]; i++)
    if (worst[i].op == in->op && worst[i].dt == c->dtype) return ulps(c->dtype, c->ref, c->target) <= worst[i].ulps + 0.5;
  return false;
}
/* Also a signed exponent that is an integer convolution the reference
 * saturated to the dtype's max: the target wraps the sum (the profile's
 * int-conv-wrap excuses that), so the exponent it reads is negative
 * (seed 28, mismatch-tuple-s4: an s4 convolution of 73, 7 in the
 * reference, -7 on the target, and (-1)^-7 = -1 where the wrapped
 * reference gives 0). */
static bool x17_int_power(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_POWER || !is_int(c->dtype) || c->nargs < 2 || !c->arg_set[1]) return false;
  if (is_uint(c->arg_dt[1])) return c->arg_bits[1] >= 64;
  const tr_instr *e = through_moves(opnd(in, 1));
  if (e && e->op == TR_OP_CONVOLUTION && c->arg[1] == (double)tr_int_max(c->arg_dt[1])) return true;
  return c->arg[1] >= 64 || c->arg[1] < 0;
}
static bool x18_sort_calls(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  if (!kind_is(s, "crash") || in->op != TR_OP_SORT) return false;
  const tr_attr *a = tr_instr_attr(in, TR_ATTR_TO_APPLY);
  if (!a || !a->u.comp) return false;
  for (int i = 0; i < a->u.comp->ninstrs; i++) {
    tr_op op = a->u.comp->instrs[i]->op;
    if (op == TR_OP_CALL || op == TR_OP_WHILE || op == TR_OP_MAP || op == TR_OP_REDUCE || op == TR_OP_SCATTER ||
        op == TR_OP_DYNAMIC_UPDATE_SLICE || op == TR_OP_CONDITIONAL)
      return true;
  }
  return false;
}
static bool same_operands_multiply(const tr_instr *x) {
  return x && x->op == TR_OP_MULTIPLY && x->noperands == 2 && x->operands[0] == x->operands[1];
}
static bool x19_signed_square(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_COMPARE && c->nargs >= 1 && is_sint(c->arg_dt[0]) &&
         (same_operands_multiply(opnd(in, 0)) || same_operands_multiply(opnd(in, 1)));
}
static bool x20_sqrt_square(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c, (void)s;
  return in->op == TR_OP_SQRT && same_operands_multiply(opnd(in, 0));
}
static bool x21_pred_div(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  const tr_instr *n = opnd(in, 0);
  return in->op == TR_OP_DIVIDE && is_float(c->dtype) && n && n->op == TR_OP_CONVERT &&
         n->operands[0]->shape->dtype == TR_DT_PRED && opnd_is(in, 1, TR_OP_BROADCAST) && c->arg_set[1] &&
         (isnan(c->arg[1]) || c->arg[1] == 0);
}
static bool x22_denormal_log(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  bool f32ish = c->dtype == TR_DT_F32 || c->dtype == TR_DT_BF16;
  /* f64 power likewise reads a denormal base as 2^-1075 (seed 26). */
  if (c->dtype == TR_DT_F64 && in->op == TR_OP_POWER && arg_denormal(c, 0)) return true;
  return f32ish && (in->op == TR_OP_POWER || in->op == TR_OP_LOG) && arg_denormal(c, 0);
}
/* Also subtract(scatter, C) of a constant C (or one that folds), which
 * algsimp first makes add(scatter, -C). */
static bool x23_scatter_add(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (!is_float(c->dtype)) return false;
  if (in->op == TR_OP_ADD) return opnd_is(in, 0, TR_OP_SCATTER) || opnd_is(in, 1, TR_OP_SCATTER);
  return in->op == TR_OP_SUBTRACT && opnd_is(in, 0, TR_OP_SCATTER) && c->nargs > 1 && c->arg_folded[1];
}
static bool x24_huge_divisor(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_DIVIDE || !is_float(c->dtype) || c->nargs < 2 || !c->arg_set[1]) return false;
  if (!opnd_is(in, 1, TR_OP_BROADCAST) && !c->arg_folded[1]) return false;
  /* x * (1 / y): 1 / y underflows (emax is the bias for IEEE types) or
   * overflows */
  double y = fabs(c->arg[1]);
  return y > ldexp(1.0, tr_dtypes[c->dtype].bias - 1) || (y > 0 && y < 1 / tr_float_max(c->dtype));
}
/* The chain itself, or an op reading it through moves (fused with it,
 * the merged window is read there: a scatter into a dynamic-slice of
 * one, a gather of its transpose). */
static bool x25_ds_of_ds(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c, (void)s;
  const tr_instr *x = through_moves(opnd(in, 0));
  if (in->op == TR_OP_DYNAMIC_SLICE && x && x->op == TR_OP_DYNAMIC_SLICE) return true;
  for (int k = 0; k < in->noperands; k++) {
    const tr_instr *d = through_moves(opnd(in, k));
    const tr_instr *e = d ? through_moves(opnd(d, 0)) : NULL;
    if (d && d->op == TR_OP_DYNAMIC_SLICE && e && e->op == TR_OP_DYNAMIC_SLICE) return true;
  }
  return false;
}
/* A counted loop simplify-while-loops can count: a constant start (a
 * scalar integer constant in the init tuple) and a condition comparing
 * with a constant. */
static bool x26_while_step(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_WHILE) return false;
  if (all_folded(c)) return true;
  const tr_instr *t = opnd(in, 0);
  const tr_attr *ca = tr_instr_attr(in, TR_ATTR_CONDITION);
  if (!t || t->op != TR_OP_TUPLE || !ca || !ca->u.comp || !ca->u.comp->root) return false;
  bool start = false;
  for (int k = 0; k < t->noperands; k++)
    start = start || (t->operands[k]->op == TR_OP_CONSTANT && t->operands[k]->shape->rank == 0 &&
                      tr_dtype_is_int(t->operands[k]->shape->dtype));
  const tr_instr *cmp = ca->u.comp->root;
  return start && cmp->op == TR_OP_COMPARE && (opnd_is(cmp, 0, TR_OP_CONSTANT) || opnd_is(cmp, 1, TR_OP_CONSTANT) ||
                                               opnd_is(cmp, 0, TR_OP_GET_TUPLE_ELEMENT));
}
static bool x27_batch_group_nan(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  /* batch groups (f32 found); feature groups of f64 */
  bool grouped = tr_attr_int(in, TR_ATTR_BATCH_GROUP_COUNT, 1) > 1 ||
                 (c->dtype == TR_DT_F64 && tr_attr_int(in, TR_ATTR_FEATURE_GROUP_COUNT, 1) > 1);
  return in->op == TR_OP_CONVOLUTION && grouped && c->elem && isnan(c->target) && !isnan(c->ref);
}
static bool x28_exp_log_pad(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c, (void)s;
  const tr_instr *l = opnd(in, 0);
  return in->op == TR_OP_EXPONENTIAL && l && l->op == TR_OP_LOG && opnd_is(l, 0, TR_OP_PAD);
}

static bool xtopk_narrow(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  return kind_is(s, "compile_error") && in->op == TR_OP_TOPK && c->nargs >= 1 && tr_dtypes[c->arg_dt[0]].bits < 8;
}

/* A computed 4-bit (2-bit) integer converted to a wider one: the value
 * comes out unwrapped (add, multiply, not, convolution, dot, ...). */
static bool subbyte_widen(const tr_instr *x) {
  const tr_instr *a = opnd(x, 0);
  if (x->op != TR_OP_CONVERT || !a || !x->shape || !tr_shape_is_array(x->shape) || !a->shape) return false;
  tr_dtype from = a->shape->dtype, to = x->shape->dtype;
  tr_opclass k = tr_ops[a->op].cls;
  bool computes = k == TR_OPC_UNUM || k == TR_OPC_UINT || k == TR_OPC_BARITH || k == TR_OPC_BBIT ||
                  k == TR_OPC_LINALG || k == TR_OPC_REDUCE;
  return computes && is_int(from) && is_int(to) && tr_dtypes[from].bits < 8 && tr_dtypes[to].bits > tr_dtypes[from].bits;
}
/* The convert itself; or a call whose computation holds one, which XLA
 * inlines (isolation names the call: seed 28, mismatch-call-s4, an s4
 * subtract converted to s8 in the callee, its minimum converted back). */
static bool x29_subbyte_widen(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (!is_int(c->dtype)) return false;
  if (in->op == TR_OP_CONVERT) return subbyte_widen(in);
  const tr_comp *f = in->op == TR_OP_CALL ? tr_attr_comp(in, TR_ATTR_TO_APPLY) : NULL;
  for (int i = 0; f && i < f->ninstrs; i++)
    if (subbyte_widen(f->instrs[i])) return true;
  return false;
}
/* A constant, or a broadcast of one. */
static bool const_like(const tr_instr *x) {
  return x && (x->op == TR_OP_CONSTANT || (x->op == TR_OP_BROADCAST && opnd_is(x, 0, TR_OP_CONSTANT)));
}
/* A multiply (or a dot with a scalar, a multiply too) of a multiply by a
 * constant by another constant; an add or subtract of an add or subtract
 * of a constant and a constant ((x - C) + C is x: seed 26, f64). */
static bool x30_mul_constants(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (!is_float(c->dtype) || c->nargs < 2) return false;
  bool sum = in->op == TR_OP_ADD || in->op == TR_OP_SUBTRACT;
  if (in->op != TR_OP_MULTIPLY && in->op != TR_OP_DOT && !sum) return false;
  for (int k = 0; k < 2; k++) {
    const tr_instr *m = opnd(in, k);
    bool inner = m && (sum ? m->op == TR_OP_ADD || m->op == TR_OP_SUBTRACT : m->op == TR_OP_MULTIPLY);
    if (!inner || !c->arg_folded[1 - k]) continue;
    if (const_like(opnd(m, 0)) || const_like(opnd(m, 1))) return true;
  }
  return false;
}

static bool x31_sas_empty(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_SELECT_AND_SCATTER && c->nargs >= 2 && c->arg_n[1] == 0 && c->arg_folded[0];
}
/* A dot of float operands with a wider result: the culprit itself, or
 * one moved by it (transpose(dot) is rewritten into a dot DotThunk then
 * runs; a dynamic-update-slice moves its operand 0's values). An error
 * has no wrong element, so isolate names the first cut that fails. */
static bool mixed_dot(const tr_instr *d) {
  while (d && d->op == TR_OP_DYNAMIC_UPDATE_SLICE && d->noperands >= 1) d = through_moves(d->operands[0]);
  return d && d->op == TR_OP_DOT && d->noperands >= 1 && d->operands[0]->shape &&
         is_float(d->operands[0]->shape->dtype) && d->operands[0]->shape->dtype != d->shape->dtype;
}
static bool xdot_mixed(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  if (!kind_is(s, "error")) return false;
  if (in->op == TR_OP_DOT)
    return c->nargs >= 1 && is_float(c->arg_dt[0]) && c->arg_dt[0] != in->shape->dtype;
  return tr_ops[in->op].cls == TR_OPC_MOVE && mixed_dot(through_moves(in));
}

/* Whether a transpose is among the few ops that lead to x (its layout
 * reaches x through element-wise ops and moves). */
static bool transposed(const tr_instr *x, int depth) {
  if (!x || depth > 4) return false;
  if (x->op == TR_OP_TRANSPOSE) return true;
  for (int i = 0; i < x->noperands; i++)
    if (transposed(x->operands[i], depth + 1)) return true;
  return false;
}
/* A total-order compare of a float whose one side folds from a
 * convolution or a gather (through moves), or folds while the other side
 * is a transpose (the folded keys come out in the transposed order: seed
 * 26; a folded gather's keys come out transposed too: seed 29). */
static bool x32_totalorder_fold(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  const tr_attr *ty = tr_instr_attr(in, TR_ATTR_TYPE);
  if (in->op != TR_OP_COMPARE || !ty || !ty->u.s || strcmp(ty->u.s, "TOTALORDER") != 0) return false;
  for (int k = 0; k < 2 && k < c->nargs; k++) {
    const tr_instr *x = through_moves(opnd(in, k));
    if (!x || !c->arg_folded[k] || !is_float(c->arg_dt[k])) continue;
    if (x->op == TR_OP_CONVOLUTION || x->op == TR_OP_GATHER || transposed(opnd(in, 1 - k), 0)) return true;
  }
  return false;
}

/* Whether v is a scalar float constant zero (either sign). */
static bool const_zero(const tr_instr *v) {
  if (!v || v->op != TR_OP_CONSTANT || !v->literal || !v->literal->data || !tr_shape_is_array(v->shape) ||
      tr_shape_count(v->shape) != 1 || !is_float(v->shape->dtype))
    return false;
  uint64_t bits = 0;
  memcpy(&bits, v->literal->data, (size_t)tr_dtype_size(v->shape->dtype));
  return tr_float_to_double(v->shape->dtype, bits) == 0;
}
/* Whether x is x' + 0 (a constant zero or a broadcast of one, either
 * side, either sign); the outer add of a chain of them is enough. */
static bool adds_zero(const tr_instr *x) {
  if (!x || x->op != TR_OP_ADD) return false;
  for (int k = 0; k < 2; k++) {
    const tr_instr *z = opnd(x, k);
    if (z && z->op == TR_OP_BROADCAST) z = opnd(z, 0);
    if (const_zero(z)) return true;
  }
  return false;
}
/* An op reading x + 0 (a constant zero) where that sum is a zero: the
 * sign is what differs. A topk or sort reading x + 0 orders the keys by
 * their sign: the element is an index or a moved value, so the test is
 * that some key is a zero, or a denormal that a flushing comparator
 * reads as one (seed 28, mismatch-topk-s32: bf16 -1e-40 + 0 stayed -0,
 * below the +0 ties). */
static bool x33_add_zero(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op == TR_OP_TOPK || in->op == TR_OP_SORT)
    for (int k = 0; k < c->nargs; k++)
      if (is_float(c->arg_dt[k]) && (c->arg_zero[k] || c->arg_tiny[k]) && adds_zero(opnd(in, k))) return true;
  for (int k = 0; k < c->nargs; k++) {
    const tr_instr *a = opnd(in, k);
    if (!a || a->op != TR_OP_ADD || !is_float(c->arg_dt[k]) || !c->arg_set[k] || c->arg[k] != 0) continue;
    if (const_like(opnd(a, 0)) || const_like(opnd(a, 1))) return true;
  }
  return false;
}

static bool x34_rp_f16_sub(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_REDUCE_PRECISION && c->dtype == TR_DT_F16 && arg_denormal(c, 0) &&
         tr_attr_int(in, TR_ATTR_MANTISSA_BITS, 10) < 10;
}

/* x when g, through moves and pred ORs, is is-finite(x) AND a test of x
 * against a constant (compare, or convert to pred): the guard XLA fuses
 * into one class test of x's bits. NULL otherwise. */
static const tr_instr *finite_guard(const tr_instr *g, int depth) {
  g = through_moves(g);
  if (!g || depth > 4 || g->noperands != 2 || g->shape->dtype != TR_DT_PRED) return NULL;
  if (g->op == TR_OP_OR || g->op == TR_OP_ADD) {
    const tr_instr *x = finite_guard(g->operands[0], depth + 1);
    return x ? x : finite_guard(g->operands[1], depth + 1);
  }
  if (g->op != TR_OP_AND && g->op != TR_OP_MULTIPLY) return NULL;
  for (int k = 0; k < 2; k++) {
    const tr_instr *f = through_moves(g->operands[k]), *t = through_moves(g->operands[1 - k]);
    if (!f || f->op != TR_OP_IS_FINITE || !t) continue;
    const tr_instr *x = through_moves(f->operands[0]);
    if (t->op == TR_OP_CONVERT && through_moves(t->operands[0]) == x) return x;
    if (t->op == TR_OP_COMPARE)
      for (int j = 0; j < 2; j++)
        if (through_moves(t->operands[j]) == x && const_like(through_moves(t->operands[1 - j]))) return x;
  }
  return NULL;
}
/* Whether x is among the producers of a, a few levels up. */
static bool reads(const tr_instr *a, const tr_instr *x, int depth) {
  if (!a || depth > 6) return false;
  if (a == x) return true;
  for (int k = 0; k < a->noperands; k++)
    if (reads(a->operands[k], x, depth + 1)) return true;
  return false;
}
/* A select guarded by is-finite(x) AND x != 0 (x a float that can be
 * denormal) whose chosen branch is computed from x: the guard saw the
 * denormal, the branch read it as zero. */
static bool x35_finite_guard(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_SELECT || !c->elem || c->nargs < 3 || !c->arg_set[0] || c->arg[0] == 0) return false;
  const tr_instr *x = finite_guard(opnd(in, 0), 0);
  tr_dtype t = x ? x->shape->dtype : TR_DT_PRED;
  return x && (t == TR_DT_F32 || t == TR_DT_F64 || t == TR_DT_BF16) && reads(opnd(in, 1), x, 0);
}

/* Whether x is a complex constant holding an element NaN + y i with y
 * not NaN, or moves (concatenate, transpose, reshape, slice...) values
 * of one. */
static bool const_cnan(const tr_instr *x, int depth) {
  if (!x || depth > 8 || !tr_shape_is_array(x->shape) || !is_complex(x->shape->dtype)) return false;
  if (x->op == TR_OP_CONSTANT) {
    const tr_literal *l = x->literal;
    if (!l || l->elided) return false;
    tr_dtype part = x->shape->dtype == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
    size_t ps = tr_dtype_size(part);
    const unsigned char *p = l->data ? l->data : l->one;
    int64_t n = l->data ? tr_shape_count(x->shape) : 1;
    for (int64_t i = 0; i < n && i < 100000; i++) {
      uint64_t re = 0, im = 0;
      memcpy(&re, p + (size_t)i * 2 * ps, ps);
      memcpy(&im, p + (size_t)i * 2 * ps + ps, ps);
      if (isnan(tr_float_to_double(part, re)) && !isnan(tr_float_to_double(part, im))) return true;
    }
    return false;
  }
  if (tr_ops[x->op].cls != TR_OPC_MOVE) return false;
  for (int k = 0; k < x->noperands; k++)
    if (const_cnan(x->operands[k], depth + 1)) return true;
  return false;
}
/* An op reading a complex constant whose real part is NaN and imaginary
 * part is not: XLA's HLO parser reads it as NaN + NaN i. Elementwise: the
 * operand's element is that value. A move of such a constant (a
 * concatenate, transpose, reshape of it; seed-28 campaign): the wrong
 * element's real part is NaN on both sides (a complex element is
 * reported by its real part), so its imaginary part is what differs. */
static bool x36_parse_cnan(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  for (int k = 0; k < c->nargs; k++)
    if (is_complex(c->arg_dt[k]) && c->arg_folded[k] && c->arg_set[k] && isnan(c->arg[k]) && !isnan(c->arg_im[k]))
      return true;
  return tr_ops[in->op].cls == TR_OPC_MOVE && is_complex(c->dtype) && c->elem && isnan(c->ref) &&
         isnan(c->target) && const_cnan(in, 0);
}

/* A select-and-scatter whose window pads the operand's last dimension and
 * spans more than one element on another: XLA CPU takes, of equal
 * candidates, the first in column order instead of index order (the
 * select sees them in another order), so a tie across rows goes to the
 * wrong element. Without a tie the select's choice is the same in any
 * order: a wrong element is the evidence of one. A source with no
 * element selects nothing (that is xla-31). */
static bool x45_sas_padded_tie(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (in->op != TR_OP_SELECT_AND_SCATTER || !c->elem || c->target == c->ref || c->nargs < 2 || c->arg_n[1] <= 0 ||
      !w || w->kind != TR_AK_WINDOW || w->n < 2)
    return false;
  const tr_window_dim *last = &w->u.win[w->n - 1];
  if (last->pad_lo <= 0 && last->pad_hi <= 0) return false;
  for (int k = 0; k < w->n - 1; k++)
    if (w->u.win[k].size > 1) return true;
  return false;
}

/* An integer converted to a float type without infinity and back to an
 * unsigned integer: the fused pair ignores the narrow type's range. */
static bool x37_int_narrow_int(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  const tr_instr *f = opnd(in, 0);
  if (in->op != TR_OP_CONVERT || !is_uint(c->dtype) || !f || f->op != TR_OP_CONVERT || !c->elem) return false;
  tr_dtype mid = f->shape->dtype;
  return is_float(mid) && !tr_float_has_inf(mid) && tr_dtype_is_int(f->operands[0]->shape->dtype) && c->target != c->ref;
}

/* Two width-changing bitcast-converts in a row whose widths do not come
 * back to the first: merged into one that keeps the second's shape, which
 * XLA's verifier rejects. */
static bool x38_bitcast_chain(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  const tr_instr *m = opnd(in, 0);
  if ((!kind_is(s, "compile_error") && !kind_is(s, "crash")) || in->op != TR_OP_BITCAST_CONVERT || !m ||
      m->op != TR_OP_BITCAST_CONVERT || !m->operands[0]->shape)
    return false;
  int a = tr_dtypes[m->operands[0]->shape->dtype].bits, b = tr_dtypes[m->shape->dtype].bits,
      z = tr_dtypes[in->shape->dtype].bits;
  return a != b && b != z && a != z;
}

/* A kOutput fusion whose computation adds to a dot something that is not
 * one of its parameters (a broadcast bias), in the culprit's operand cone:
 * XLA CPU's dot fusion emitter takes that operand for a parameter and
 * aborts ("cannot be downcasted to HloParameterInstruction"). */
static bool output_dot_fusion(const tr_instr *x, int depth) {
  if (!x || depth > 6) return false;
  if (x->op == TR_OP_FUSION) {
    const char *kind = tr_attr_ident(x, TR_ATTR_KIND);
    const tr_comp *f = tr_attr_comp(x, TR_ATTR_CALLS);
    if (kind && strcmp(kind, "kOutput") == 0 && f && f->root && f->root->op != TR_OP_DOT)
      for (int i = 0; i < f->ninstrs; i++)
        if (f->instrs[i]->op == TR_OP_DOT) return true;
  }
  for (int i = 0; i < x->noperands; i++)
    if (output_dot_fusion(x->operands[i], depth + 1)) return true;
  return false;
}
static bool xfused_dot(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)c;
  return kind_is(s, "crash") && output_dot_fusion(in, 0);
}

/* Whether pad x pads some dimension at an edge (interior padding alone
 * is not folded so: measured right). */
static bool edge_padded(const tr_instr *x) {
  const tr_attr *a = tr_instr_attr(x, TR_ATTR_PADDING);
  if (!a || a->kind != TR_AK_PADDING) return false;
  for (int k = 0; k < a->n; k++)
    if (a->u.pad[k].lo > 0 || a->u.pad[k].hi > 0) return true;
  return false;
}
/* Whether branch b's root (through moves) is a pad whose value is zero:
 * a constant, or the element of b's parameter that the conditional
 * passes as arg, a tuple holding a zero constant there. */
static bool branch_zero_pad(const tr_comp *b, const tr_instr *arg) {
  const tr_instr *r = b ? through_moves(b->root) : NULL;
  if (!r || r->op != TR_OP_PAD || r->noperands != 2 || !edge_padded(r)) return false;
  const tr_instr *v = r->operands[1];
  if (const_zero(v)) return true;
  if (v->op != TR_OP_GET_TUPLE_ELEMENT || !opnd_is(v, 0, TR_OP_PARAMETER) || !arg || arg->op != TR_OP_TUPLE)
    return false;
  int64_t k = tr_attr_int(v, TR_ATTR_INDEX, -1);
  return k >= 0 && k < arg->noperands && const_zero(arg->operands[k]);
}
/* Whether x (through moves) is a pad with zero, or a conditional each of
 * whose branches returns one (a pad the simplifier sees once the
 * conditional is inlined). */
static bool zero_pad(const tr_instr *x) {
  x = through_moves(x);
  if (!x) return false;
  if (x->op == TR_OP_PAD) return x->noperands == 2 && const_zero(x->operands[1]) && edge_padded(x);
  if (x->op != TR_OP_CONDITIONAL) return false;
  const tr_attr *bc = tr_instr_attr(x, TR_ATTR_BRANCH_COMPUTATIONS);
  const tr_attr *t = tr_instr_attr(x, TR_ATTR_TRUE_COMPUTATION), *f = tr_instr_attr(x, TR_ATTR_FALSE_COMPUTATION);
  if (bc && bc->kind == TR_AK_COMPS) {
    for (int k = 0; k < bc->n; k++)
      if (!branch_zero_pad(bc->u.comps[k], opnd(x, k + 1))) return false;
    return bc->n > 0;
  }
  return t && f && t->kind == TR_AK_COMP && f->kind == TR_AK_COMP && branch_zero_pad(t->u.comp, opnd(x, 1)) &&
         branch_zero_pad(f->u.comp, opnd(x, 2));
}
/* A float convolution of a zero-padded input that is NaN in the
 * reference (0 * inf over the explicit padding) and a number on the
 * target: the pad folded into the window padding, whose taps the
 * compiled convolution skipped. */
static bool x39_conv_pad_fold(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_CONVOLUTION || !c->elem || !isnan(c->ref) || isnan(c->target) || !zero_pad(opnd(in, 0)))
    return false;
  if (c->dtype == TR_DT_F64) return true;
  /* f32 skips padded taps only with a reversed kernel (it multiplies
   * them otherwise: conv-zero-pad); f16 and bf16 multiply them always */
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
  if (c->dtype != TR_DT_F32 || !w || w->kind != TR_AK_WINDOW) return false;
  for (int k = 0; k < w->n; k++)
    if (w->u.win[k].reversal) return true;
  return false;
}

/* An f32 or f64 power whose exponent is a denormal and whose base is not
 * zero in the reference, giving 0 or inf: the base came out of an op
 * that read denormals as zero (DAZ), while the power read the exponent
 * as a nonzero number (0^y); reading it as zero gives 0^0 = 1. The
 * reference's base may be NaN: log of a negative denormal, which the
 * target's log reads as -0 (-inf, and (-inf)^y is inf for the nonzero y
 * the power reads; seed 29). */
static bool x41_pow_denormal_exp(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_POWER && (c->dtype == TR_DT_F32 || c->dtype == TR_DT_F64) && c->elem &&
         arg_denormal(c, 1) && c->arg_set[0] && c->arg[0] != 0 && (c->target == 0 || isinf(c->target));
}

/* The wrong element's index ("[1,0,3]") into v; the count, -1 if it is
 * not one. */
static int elem_index(const char *s, int64_t *v, int max) {
  int n = 0;
  if (*s++ != '[') return -1;
  if (*s == ']') return 0;
  for (;;) {
    char *end;
    long long x = strtoll(s, &end, 10);
    if (end == s || n == max) return -1;
    v[n++] = x;
    if (*end == ']') return n;
    if (*end != ',') return -1;
    s = end + 1;
  }
}
/* An f32, f16 or bf16 convolution of 1 or 2 spatial dims and 2 or more
 * input features, plain windows (stride 1, no dilation or reversal, no
 * groups), no dim of positive total padding and one padded negative low
 * and as much positive high, whose wrong element's window reaches that
 * dim's high padding: XLA CPU reads the taps there from memory past the
 * input, not 0. */
static bool x42_conv_negpad_past_end(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_CONVOLUTION || !c->elem ||
      (c->dtype != TR_DT_F32 && c->dtype != TR_DT_F16 && c->dtype != TR_DT_BF16))
    return false;
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW), *dl = tr_instr_attr(in, TR_ATTR_DIM_LABELS);
  const tr_instr *x = opnd(in, 0);
  if (!w || w->kind != TR_AK_WINDOW || !dl || dl->kind != TR_AK_DIMLABELS || !x || !tr_shape_is_array(x->shape) ||
      !tr_shape_is_array(in->shape))
    return false;
  const tr_convdims *cd = dl->u.conv;
  if (cd->nspatial < 1 || cd->nspatial > 2 || w->n != cd->nspatial || x->shape->dims[cd->in_feature] < 2 ||
      tr_attr_int(in, TR_ATTR_FEATURE_GROUP_COUNT, 1) != 1 || tr_attr_int(in, TR_ATTR_BATCH_GROUP_COUNT, 1) != 1)
    return false;
  int64_t idx[8];
  if (elem_index(c->index, idx, 8) != in->shape->rank) return false;
  bool hit = false;
  for (int k = 0; k < w->n; k++) {
    const tr_window_dim *d = &w->u.win[k];
    if (d->stride != 1 || d->lhs_dilate != 1 || d->rhs_dilate != 1 || d->reversal || d->pad_lo + d->pad_hi > 0)
      return false;
    /* the last tap of the element's window, in padded coordinates, at or
     * past the input's end */
    if (d->pad_lo < 0 && d->pad_lo == -d->pad_hi &&
        idx[cd->out_spatial[k]] + d->size - 1 >= x->shape->dims[cd->in_spatial[k]] + d->pad_lo)
      hit = true;
  }
  return hit;
}

/* Whether x, through elementwise ops and moves (depth-bounded), reads a
 * slice or dynamic-slice of base at starts other than the update's own
 * (dus starts from operand 2 on). */
static bool reads_window_of(const tr_instr *x, const tr_instr *base, const tr_instr *dus, int depth) {
  if (!x || depth > 6) return false;
  if ((x->op == TR_OP_SLICE || x->op == TR_OP_DYNAMIC_SLICE) && x->noperands >= 1 &&
      through_moves(x->operands[0]) == base) {
    if (x->op == TR_OP_SLICE) return true;
    bool same = x->noperands == dus->noperands - 1;
    for (int k = 1; same && k < x->noperands; k++) same = x->operands[k] == dus->operands[k + 1];
    return !same;
  }
  if (!(tr_ops[x->op].flags & (TR_OPF_E | TR_OPF_M))) return false;
  for (int k = 0; k < x->noperands; k++)
    if (reads_window_of(x->operands[k], base, dus, depth + 1)) return true;
  return false;
}
/* A dynamic-update-slice whose update is computed from a window of its
 * own operand at other starts: done in place, it reads elements it has
 * already written. */
static bool x43_dus_reads_own(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_DYNAMIC_UPDATE_SLICE || !c->elem || in->noperands < 3) return false;
  const tr_instr *base = through_moves(opnd(in, 0));
  return base && reads_window_of(opnd(in, 1), base, in, 0);
}

/* A total-order compare whose two sides are both folded, at an element
 * where total order and IEEE order differ: zeros of opposite signs or a
 * NaN. The fold (before XLA's passes) compares them as IEEE does. */
static bool x44_totalorder_ieee_fold(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  const tr_attr *ty = tr_instr_attr(in, TR_ATTR_TYPE);
  if (in->op != TR_OP_COMPARE || !ty || !ty->u.s || strcmp(ty->u.s, "TOTALORDER") != 0 || c->nargs < 2) return false;
  if (!c->arg_folded[0] || !c->arg_folded[1] || !is_float(c->arg_dt[0]) || !c->arg_set[0] || !c->arg_set[1])
    return false;
  double a = c->arg[0], b = c->arg[1];
  return (a == 0 && b == 0 && signbit(a) != signbit(b)) || isnan(a) || isnan(b);
}

/* A float divide of a divide (either side) whose wrong element is inf
 * or 0 where the reference is a finite nonzero number: the algebraic
 * simplifier made one divide of a product of two operands, and the
 * product underflowed (inf) or overflowed (0). */
static bool x46_div_div(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  if (in->op != TR_OP_DIVIDE || !is_float(c->dtype) || !c->elem) return false;
  if (!opnd_is(in, 0, TR_OP_DIVIDE) && !opnd_is(in, 1, TR_OP_DIVIDE)) return false;
  return isfinite(c->ref) && c->ref != 0 && (isinf(c->target) || c->target == 0);
}

/* A triangular-solve whose matrix has an entry that, divided by a
 * diagonal entry of its row or column, is a nonzero denormal: XLA's
 * expander scales by the diagonal and the flushed quotient drops a term. */
static bool x47_trsolve_scale_flush(const tr_instr *in, const tr_triage_case *c, const tr_check_sig *s) {
  (void)s;
  return in->op == TR_OP_TRIANGULAR_SOLVE && c->scale_denormal;
}

/* ---- the table ---- */

static const struct {
  const char *id, *target, *title;
  known_fn *fn;
} known[] = {
#define K(ID, TARGET, TITLE, FN) {ID, TARGET, TITLE, FN},
#include "known.def"
#undef K
};
enum { NKNOWN = sizeof known / sizeof known[0] };

const char *tr_known_id(int i) { return i >= 0 && i < NKNOWN ? known[i].id : NULL; }

const char *tr_known_match(const char *target, const tr_instr *in, const tr_triage_case *c,
                           const tr_check_sig *sig, const char **title) {
  if (!target || !in || !c || !c->has) return NULL;
  size_t fam = strcspn(target, "@:");
  for (int i = 0; i < NKNOWN; i++) {
    if (strlen(known[i].target) != fam || strncmp(known[i].target, target, fam) != 0) continue;
    if (known[i].fn(in, c, sig)) {
      if (title) *title = known[i].title;
      return known[i].id;
    }
  }
  return NULL;
}
