/* shadow_bits.c - NaN bit patterns in shadow mode. Shadow values hold
 * floats as double or long double, which keep a NaN's class but not the
 * pattern a tensor stored (a signalling NaN, a bf16 payload, the two
 * halves of an f32 seen as bf16[2]). Bitcast-convert hands those patterns
 * on bit for bit (docs/SEMANTICS.md), so a value read from a tensor keeps
 * the tensor beside its planes while it holds a NaN, moves carry it along
 * and rounding back to a tensor writes the NaN elements' patterns from
 * it. A NaN made by arithmetic has no known pattern (payloads are not
 * part of the contract): a bitcast of it to integers is uncertain. */
#include "shadowint.h"

#include <math.h>
#include <string.h>

static bool is_nan_at(const sh_val *a, size_t i) {
  return a->d ? isnan(a->d[i]) : isnan(a->lv[i]);
}

static bool real_flt(const sh_val *a) {
  return sh_is_arr(a) && (a->d || a->lv) && tr_dtypes[a->dt].kind != TR_DK_COMPLEX;
}

void sh_bits_capture(sh_val *v, const tr_tensor *t) {
  if (!real_flt(v) || v->bits || t->dtype != v->dt) return;
  for (size_t i = 0; i < v->n; i++)
    if (is_nan_at(v, i)) {
      v->bits = tr_tensor_clone(t);
      return;
    }
}

void sh_bits_apply(const sh_val *a, tr_tensor *t) {
  if (!a->bits || !real_flt(a) || t->dtype != a->dt) return;
  size_t es = (size_t)tr_dtype_size(a->dt);
  for (size_t i = 0; i < a->n; i++)
    if (is_nan_at(a, i))
      memcpy((char *)t->data + i * es, (const char *)a->bits->data + i * es, es);
}

bool sh_bits_unknown(const sh_val *a) {
  if (!sh_is_arr(a)) {
    for (int i = 0; i < a->hd.nelems; i++)
      if (sh_bits_unknown(sh_elems(a)[i])) return true;
    return false;
  }
  if (a->bits || !real_flt(a)) return false;
  for (size_t i = 0; i < a->n; i++)
    if (is_nan_at(a, i)) return true;
  return false;
}

/* The patterns of a: its bits, or its values rounded (a lazy argument's
 * tensor as it is). */
static tr_tensor *patterns(sh_ctx *c, const tr_instr *in, const sh_val *a) {
  if (a->src) return tr_tensor_clone(a->src);
  if (a->bits) return tr_tensor_clone(a->bits);
  return sh_round_tensor(c, in, a);
}

tr_status sh_bits_move(sh_ctx *c, const tr_instr *in, sh_val **ops, int nops, int nd,
                       const tr_tensor *idx, sh_val *out) {
  if (!real_flt(out) || out->bits) return TR_OK;
  bool any = false;
  for (int i = 0; i < nd; i++) any |= ops[i]->bits != NULL || ops[i]->src != NULL;
  if (!any || nops > 16) return TR_OK;
  /* A NaN made by arithmetic among the moved values has no pattern to
   * carry, and out holds one set of patterns for all its NaNs: it gets
   * none (a dynamic-update-slice of a computed NaN into a constant that
   * holds NaNs once passed the computed one off as the constant's). */
  for (int i = 0; i < nd; i++)
    if (sh_bits_unknown(ops[i])) return TR_OK;
  tr_tensor *ts[16] = {0}, *r = NULL;
  tr_status st = TR_OK;
  for (int i = 0; i < nops && st == TR_OK; i++) {
    if (i >= nd) ts[i] = ops[i]->t;
    else if (!(ts[i] = patterns(c, in, ops[i]))) st = TR_ERR_UNSUPPORTED;
  }
  if (st == TR_OK)
    st = idx ? ev_gather(&c->ev, in, ts[0], idx, &r) : ev_move(&c->ev, in, ts, nops, &r);
  for (int i = 0; i < nd; i++) tr_tensor_free(ts[i]);
  if (st != TR_OK) return st;
  sh_bits_capture(out, r);
  tr_tensor_free(r);
  return TR_OK;
}
