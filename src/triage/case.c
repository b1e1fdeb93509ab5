/* case.c - the culprit's first wrong element, for people and for known.c:
 * which operand values make the culprit go wrong. A report that says
 * "power(u32 3, u32 4294967295) = 1; reference 0" lets a compiler
 * engineer see the bug without running anything, and lets triage name a
 * recorded bug whose trigger is the same (known.c).
 *
 * The culprit is made the root (everything before it kept, so the
 * compiler folds and fuses what it did) and checked on the failing
 * inputs; when that run shows nothing (the context changed), the culprit
 * runs alone on the reference's operand values. The operands' values are
 * the reference's, read at the wrong element. */
#include "triageint.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Whether no parameter (or rng, or infeed) is behind x: the compiler can
 * fold it. A parameter without elements holds nothing (XLA makes it a
 * constant). memo: 0 unknown, 1 yes, 2 no, per id. */
static bool foldable(const tr_instr *x, unsigned char *memo, int nmemo, int depth) {
  if (x->id >= 0 && x->id < nmemo && memo[x->id]) return memo[x->id] == 1;
  bool empty = tr_shape_is_array(x->shape) && tr_shape_count(x->shape) == 0;
  bool ok = depth < 200 && (x->op != TR_OP_PARAMETER || empty) && !(tr_ops[x->op].flags & TR_OPF_S);
  /* An element of a tuple made here is that element (the compiler's
   * tuple simplification forwards it), whatever the others are: a loop's
   * constant state element after triage inlined one trip. */
  int64_t k = x->op == TR_OP_GET_TUPLE_ELEMENT ? tr_attr_int(x, TR_ATTR_INDEX, -1) : -1;
  if (ok && k >= 0 && x->operands[0]->op == TR_OP_TUPLE && k < x->operands[0]->noperands)
    ok = foldable(x->operands[0]->operands[k], memo, nmemo, depth + 1);
  /* A dynamic-update-slice whose update is as large as its operand is the
   * update, whatever the operand and the (clamped) starts. */
  else if (ok && x->op == TR_OP_DYNAMIC_UPDATE_SLICE && x->noperands >= 2 && x->operands[1]->shape &&
           tr_shape_is_array(x->operands[1]->shape) && tr_shape_same_dims(x->operands[1]->shape, x->shape))
    ok = foldable(x->operands[1], memo, nmemo, depth + 1);
  else
    for (int i = 0; ok && i < x->noperands; i++) ok = foldable(x->operands[i], memo, nmemo, depth + 1);
  if (x->id >= 0 && x->id < nmemo) memo[x->id] = ok ? 1 : 2;
  return ok;
}

/* The first failing array leaf of a check's first finding into c; *flat
 * gets its flat index. */
static bool wrong_elem(const tr_check_report *cr, tr_triage_case *c, size_t *flat) {
  if (cr->outcome != TR_CHECK_FINDING || cr->first_finding < 0) return false;
  const tr_check_run *run = &cr->runs[cr->first_finding];
  for (int j = 0; j < run->nouts; j++) {
    const tr_check_output *o = &run->outs[j];
    if (o->protocol_error || !o->cmp.has_fail) continue;
    c->dtype = o->dtype;
    c->target = o->cmp.first_target;
    c->ref = o->cmp.first_value;
    c->bound = o->cmp.first_bound;
    snprintf(c->index, sizeof c->index, "%s", o->index);
    *flat = o->cmp.first_fail;
    return true;
  }
  return false;
}

bool tg_check_alone(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in, tr_check_report *cr) {
  memset(cr, 0, sizeof *cr);
  const tr_instr **src = tr_xcalloc((size_t)in->noperands + 1, sizeof *src);
  int nsrc = 0;
  bool ran = false;
  tr_module *x = tr_extract_instr(m, in, src, &nsrc);
  if (x) {
    int *ids = tr_xcalloc((size_t)nsrc + 1, sizeof *ids);
    for (int i = 0; i < nsrc; i++) ids[i] = src[i]->id;
    tr_tensor **vals = NULL;
    int nvals = 0;
    tr_diag dd = {0};
    tr_status st = nsrc ? tg_ref_values(m, ids, nsrc, g->r->inputs, g->r->ninputs, &vals, &nvals, &dd) : TR_OK;
    tg_oom_diag(g, &dd);
    if (st == TR_OK) {
      ran = tg_check(g, lv, x, vals, nvals, cr) == TR_OK;
      if (!ran) tr_check_report_free(cr);
    }
    tr_diag_clear(&dd);
    tr_eval_free_outputs(vals, nvals);
    tr_free(ids);
    tr_module_free(x);
  }
  tr_free(src);
  return ran;
}

static void put_value(tr_buf *b, tr_dtype dt, double v, double im) {
  if (tr_dtypes[dt].kind == TR_DK_COMPLEX) tr_buf_printf(b, "%.9g%+.9gi", v, im);
  else if (dt < TR_DT_COUNT && !tr_dtype_is_float(dt) && isfinite(v)) tr_buf_printf(b, "%.17g", v);
  else if (isnan(v)) tr_buf_puts(b, "nan");
  else if (v == 0 && signbit(v)) tr_buf_puts(b, "-0");
  else tr_buf_printf(b, "%.9g", v);
}

/* Whether some entry of a square matrix (the last two dims of a) over
 * the diagonal entry of its row or column is a nonzero below a's
 * smallest normal: XLA's triangular-solve expander divides the matrix by
 * its diagonal before inverting it, and a flushing target loses such a
 * quotient. */
static bool scale_denormal(const tr_tensor *a) {
  if (!a || a->rank < 2 || !tr_dtype_is_float(a->dtype) || tr_dtypes[a->dtype].kind == TR_DK_COMPLEX) return false;
  int64_t m = a->dims[a->rank - 1];
  if (m != a->dims[a->rank - 2] || m <= 0) return false;
  size_t mm = (size_t)(m * m), nb = tr_tensor_count(a) / mm;
  double mn = ldexp(1.0, 1 - tr_dtypes[a->dtype].bias);
  for (size_t b = 0; b < nb; b++)
    for (int64_t i = 0; i < m; i++)
      for (int64_t j = 0; j < m; j++) {
        double v = tr_tensor_get_f(a, b * mm + (size_t)(i * m + j));
        double di = tr_tensor_get_f(a, b * mm + (size_t)(i * m + i)), dj = tr_tensor_get_f(a, b * mm + (size_t)(j * m + j));
        double q1 = fabs(v / di), q2 = fabs(v / dj);
        if (i != j && ((q1 > 0 && q1 < mn) || (q2 > 0 && q2 < mn))) return true;
      }
  return false;
}

/* The operands' reference values at element flat (elem: one was seen). */
static void args_at(tg_ctx *g, const tr_module *m, const tr_instr *in, size_t flat, bool elem,
                    tr_triage_case *c) {
  int n = c->nargs;
  int64_t outn = tr_shape_is_array(in->shape) ? tr_shape_count(in->shape) : -1;
  bool arrays = true;
  int ids[TR_CASE_ARGS];
  for (int k = 0; k < n; k++) {
    arrays = arrays && c->arg_n[k] >= 0;
    ids[k] = in->operands[k]->id;
  }
  if (!arrays || n == 0) return;
  tr_tensor **vals = NULL;
  int nvals = 0;
  tr_diag dd = {0};
  tr_status st = tg_ref_values(m, ids, n, g->r->inputs, g->r->ninputs, &vals, &nvals, &dd);
  tg_oom_diag(g, &dd);
  if (st == TR_OK && nvals == n) {
    bool ew = (tr_ops[in->op].flags & TR_OPF_E) != 0;
    for (int k = 0; k < n; k++) {
      const tr_tensor *t = vals[k];
      size_t cnt = (size_t)c->arg_n[k];
      bool flt = tr_dtype_is_float(t->dtype) && tr_dtypes[t->dtype].kind != TR_DK_COMPLEX;
      double mn = flt ? ldexp(1.0, 1 - tr_dtypes[t->dtype].bias) : 0;
      for (size_t i = 0; i < cnt && !(c->arg_zero[k] && (c->arg_tiny[k] || !flt)); i++) {
        double re = 0, im = 0;
        if (tr_dtypes[t->dtype].kind == TR_DK_COMPLEX) tr_tensor_get_c(t, i, &re, &im);
        else re = tr_tensor_get_f(t, i);
        c->arg_zero[k] |= re == 0 && im == 0;
        c->arg_tiny[k] |= flt && re != 0 && fabs(re) < mn;
      }
      size_t at;
      if (cnt == 1) at = 0;
      else if (elem && ew && (int64_t)cnt == outn && flat < cnt) at = flat;
      else continue;
      c->arg_set[k] = true;
      if (tr_dtypes[t->dtype].kind == TR_DK_COMPLEX) {
        tr_tensor_get_c(t, at, &c->arg[k], &c->arg_im[k]);
      } else {
        c->arg[k] = tr_tensor_get_f(t, at);
        c->arg_bits[k] = tr_dtype_is_int(t->dtype) || tr_dtypes[t->dtype].kind == TR_DK_PRED
                             ? tr_tensor_get_u(t, at) : tr_tensor_get_bits(t, at);
      }
    }
  }
  if (st == TR_OK && nvals == n && in->op == TR_OP_TRIANGULAR_SOLVE) c->scale_denormal = scale_denormal(vals[0]);
  tr_eval_free_outputs(vals, nvals);
  tr_diag_clear(&dd);
}

static void describe(tr_triage_case *c, const tr_instr *in) {
  tr_buf b = {0};
  tr_buf_printf(&b, "%s(", tr_ops[c->op].name);
  for (int k = 0; k < c->noperands; k++) {
    if (k) tr_buf_puts(&b, ", ");
    if (k >= c->nargs) {
      tr_buf_puts(&b, "...");
      break;
    }
    if (c->arg_set[k]) {
      tr_dtype t = c->arg_dt[k];
      tr_buf_printf(&b, "%s ", tr_dtype_name(t));
      if (tr_dtypes[t].kind == TR_DK_SINT) tr_buf_printf(&b, "%lld", (long long)(int64_t)c->arg_bits[k]);
      else if (tr_dtypes[t].kind == TR_DK_UINT || tr_dtypes[t].kind == TR_DK_PRED)
        tr_buf_printf(&b, "%llu", (unsigned long long)c->arg_bits[k]);
      else put_value(&b, t, c->arg[k], c->arg_im[k]);
    } else {
      tr_shape_print(&b, in->operands[k]->shape, false);
    }
    if (c->arg_folded[k] && in->operands[k]->op != TR_OP_CONSTANT) tr_buf_puts(&b, " (folds)");
    else if (in->operands[k]->op == TR_OP_CONSTANT) tr_buf_puts(&b, " (constant)");
  }
  tr_buf_puts(&b, ")");
  if (c->elem) {
    /* complex elements are judged part by part: the failing part */
    tr_dtype vt = tr_dtypes[c->dtype].kind == TR_DK_COMPLEX ? TR_DT_F64 : c->dtype;
    tr_buf_printf(&b, " at %s = ", c->index[0] ? c->index : "[]");
    put_value(&b, vt, c->target, 0);
    tr_buf_printf(&b, " on the target; reference ");
    put_value(&b, vt, c->ref, 0);
    tr_buf_printf(&b, " +- %.3g%s", c->bound, c->alone ? " (run alone on the reference's operands)" : "");
  } else {
    tr_buf_puts(&b, ": no single wrong element seen");
  }
  snprintf(c->text, sizeof c->text, "%s", tr_buf_str(&b));
  tr_buf_free(&b);
}

void tg_case_static(const tr_module *m, const tr_instr *in, tr_triage_case *c) {
  memset(c, 0, sizeof *c);
  c->op = in->op;
  c->dtype = tr_shape_is_array(in->shape) ? in->shape->dtype : TR_DT_COUNT;
  c->noperands = in->noperands;
  c->nargs = in->noperands < TR_CASE_ARGS ? in->noperands : TR_CASE_ARGS;
  unsigned char *memo = tr_xcalloc((size_t)m->next_id + 1, 1);
  for (int k = 0; k < c->nargs; k++) {
    const tr_instr *a = in->operands[k];
    c->arg_dt[k] = a->shape->dtype;
    c->arg_n[k] = tr_shape_is_array(a->shape) ? tr_shape_count(a->shape) : -1;
    c->arg_folded[k] = foldable(a, memo, m->next_id + 1, 0);
  }
  tr_free(memo);
  c->has = true;
  describe(c, in);
}

void tg_case(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in, tr_triage_case *c) {
  tg_case_static(m, in, c);
  size_t flat = 0;
  /* In context: the culprit as the root, everything before it kept. */
  tr_check_report cr;
  tr_module *x = tg_with_root(m, &in->id, 1);
  if (x) {
    if (tg_check(g, lv, x, g->r->inputs, g->r->ninputs, &cr) == TR_OK) c->elem = wrong_elem(&cr, c, &flat);
    tr_check_report_free(&cr);
  }
  tr_module_free(x);
  /* Else alone, on the reference's values of its operands. */
  if (!c->elem && tg_check_alone(g, lv, m, in, &cr)) {
    c->elem = c->alone = wrong_elem(&cr, c, &flat);
    tr_check_report_free(&cr);
  }
  args_at(g, m, in, flat, c->elem, c);
  describe(c, in);
}
