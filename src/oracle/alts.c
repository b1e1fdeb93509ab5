/* alts.c - the profile's other references (alts.h). */
#include "alts.h"

#include <stdlib.h>
#include <string.h>

/* What shadow_with leaves undefined: reduce inits that are no identity
 * (reduce-init-identity), select-and-scatter windows with a NaN
 * (select-nan-order). */
enum { UNDEF_INIT = 1, UNDEF_SELECT_NAN = 2 };

/* m on ins under p's table widened by mask, evaluated with the
 * deviations so names (its ulps and arg_ulps are set here). NULL when the
 * reference fails. */
static tr_shadow_out *shadow_opts(const tr_profile *p, unsigned mask, tr_shadow_opts so, const tr_module *m,
                                  tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  tr_ulp_table *t = tr_xmalloc(sizeof *t);
  tr_profile_ulp_table(p, mask, t);
  so.ulps = t;
  so.arg_ulps = arg_ulps;
  tr_shadow_out *out = NULL;
  tr_diag d = {0};
  if (tr_eval_shadow(m, &so, ins, nins, &out, n, &d) != TR_OK) out = NULL;
  tr_diag_clear(&d);
  tr_free(t);
  return out;
}

/* m on ins under p's table widened by mask, on a target that flushes
 * the dtypes of flush (NULL: none), whose out-of-range float-to-int
 * converts into the dtypes of undef (NULL: none) give any value and that
 * keeps the dtypes of excess (NULL: none) in f32 between ops. */
static tr_shadow_out *shadow_full(const tr_profile *p, unsigned mask, const bool *flush, const bool *undef,
                                  const bool *flush_res, int undef_flags, const bool *excess,
                                  const tr_module *m, tr_tensor *const *ins, int nins,
                                  const double *arg_ulps, int *n) {
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.flush = flush;
  so.cvt_undef = undef;
  so.flush_results = flush_res;
  so.init_undef = (undef_flags & UNDEF_INIT) != 0;
  so.select_nan_undef = (undef_flags & UNDEF_SELECT_NAN) != 0;
  so.excess = excess;
  so.excess_ops = excess && p->excess_ops;
  return shadow_opts(p, mask, so, m, ins, nins, arg_ulps, n);
}

/* m on ins as a target computes it that contracts products feeding an
 * add or subtract into fmas (fma-contraction): products that overflowed
 * there uncertain. A divide by a broadcast counts as a product where
 * reciprocal-divide widens its dtype's divide (XLA's simplifier turns it
 * into a multiply by the broadcast reciprocal). */
static tr_shadow_out *shadow_fma(const tr_profile *p, const tr_module *m, tr_tensor *const *ins, int nins,
                                 const double *arg_ulps, int *n) {
  bool recip[TR_DT_COUNT];
  for (int dt = 0; dt < TR_DT_COUNT; dt++)
    recip[dt] = tr_profile_widens(p, TR_PR_RECIPROCAL_DIVIDE, TR_OP_DIVIDE, (tr_dtype)dt);
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.fma = true;
  so.fma_recip = recip;
  return shadow_opts(p, 0, so, m, ins, nins, arg_ulps, n);
}

/* Whether m has a TOTALORDER compare of floats. */
static bool has_total_compare(const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      const tr_attr *ta = in->op == TR_OP_COMPARE ? tr_instr_attr(in, TR_ATTR_TYPE) : NULL;
      if (ta && ta->u.s && strcmp(ta->u.s, "TOTALORDER") == 0) return true;
    }
  return false;
}

static tr_shadow_out *shadow_with(const tr_profile *p, unsigned mask, const bool *flush, const bool *undef,
                                  const bool *flush_res, int undef_flags, const tr_module *m,
                                  tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  return shadow_full(p, mask, flush, undef, flush_res, undef_flags, NULL, m, ins, nins, arg_ulps, n);
}

tr_shadow_out *tr_profile_shadow(const tr_profile *p, unsigned mask, const tr_module *m,
                                 tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  return shadow_with(p, mask, NULL, NULL, NULL, false, m, ins, nins, arg_ulps, n);
}

/* Whether m converts a float to an integer dtype that p's
 * convert-out-of-range rule names. */
static bool has_undef_convert(const tr_profile *p, const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (in->op == TR_OP_CONVERT && in->noperands == 1 && in->shape && in->operands[0]->shape &&
          tr_dtype_is_float(in->operands[0]->shape->dtype) && tr_dtype_is_int(in->shape->dtype) &&
          p->cvt_undef[in->shape->dtype])
        return true;
    }
  return false;
}

/* Whether m has a float instruction of a dtype in dts (an excess-precision
 * dtype). */
static bool has_dtype(const tr_module *m, const bool *dts) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (in->shape && tr_shape_is_array(in->shape) && dts[in->shape->dtype]) return true;
    }
  return false;
}

/* Whether m has a float multiply or divide read by an add or subtract
 * (a product fma-contraction may fuse). */
static bool has_fma_product(const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if ((in->op != TR_OP_MULTIPLY && in->op != TR_OP_DIVIDE) || !in->shape || !tr_shape_is_array(in->shape) ||
          !tr_dtype_is_float(in->shape->dtype))
        continue;
      for (int j = 0; j < in->nusers; j++)
        if (in->users[j]->op == TR_OP_ADD || in->users[j]->op == TR_OP_SUBTRACT) return true;
    }
  return false;
}

/* Whether m has an instruction of opcode op. */
static bool has_op(const tr_module *m, tr_op op) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++)
      if (m->comps[k]->instrs[i]->op == op) return true;
  return false;
}

/* Whether m has a reduce or reduce-window (of one operand, or a variadic
 * reduce: tr_shadow_opts.init_undef judges both). */
static bool has_reduce(const tr_module *m) {
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      const tr_instr *in = m->comps[k]->instrs[i];
      if (((in->op == TR_OP_REDUCE || in->op == TR_OP_REDUCE_WINDOW) && in->noperands == 2) ||
          (in->op == TR_OP_REDUCE && in->noperands >= 4))
        return true;
    }
  return false;
}

void tr_profile_alts_compute(const tr_profile *p, const tr_module *m, tr_tensor *const *ins,
                             int nins, const double *arg_ulps, tr_profile_alts *a) {
  memset(a, 0, sizeof *a);
  if (!p) return;
  /* denormal-flush: the module as a flushing target computes it, every
   * denormal operand and result of a flushed dtype read and written as a
   * zero of its sign (DAZ and FTZ at every op, so a flushed input or
   * intermediate carries its zero through the ops after it). The plain
   * reference and this one differ only on elements with a denormal in
   * their cone of influence. */
  if (p->on[TR_PR_DENORMAL_FLUSH])
    a->alt[TR_PR_DENORMAL_FLUSH] =
        shadow_with(p, 0, p->flush, NULL, NULL, false, m, ins, nins, arg_ulps, &a->nalt[TR_PR_DENORMAL_FLUSH]);
  /* convert-out-of-range: the same module with every out-of-range
   * float-to-int convert's result, and all computed from it, uncertain.
   * It differs from the plain reference only on elements whose cone of
   * influence holds such a convert of such a value. */
  if (p->on[TR_PR_CONVERT_OUT_OF_RANGE] && has_undef_convert(p, m))
    a->alt[TR_PR_CONVERT_OUT_OF_RANGE] = shadow_with(p, 0, NULL, p->cvt_undef, NULL, false, m, ins, nins, arg_ulps,
                                                     &a->nalt[TR_PR_CONVERT_OUT_OF_RANGE]);
  /* flush-results: the module with each named op's results below the
   * smallest normal free to be 0, so an element computed from such a
   * result (a logistic times a constant) allows the flushed value too.
   * It differs from the plain reference only on elements with such a
   * result in their cone of influence. */
  bool fres = false;
  for (int dt = 0; dt < TR_DT_COUNT && !fres; dt++) fres = tr_profile_flushes_results(p, m, (tr_dtype)dt);
  if (fres)
    a->alt[TR_PR_FLUSH_RESULTS] = shadow_with(p, 0, NULL, NULL, &p->flushres[0][0], false, m, ins, nins, arg_ulps,
                                              &a->nalt[TR_PR_FLUSH_RESULTS]);
  static const tr_prule tables[] = {TR_PR_TRANSCENDENTAL_ULPS, TR_PR_RECIPROCAL_DIVIDE};
  int nrel = 0;
  for (int t = 0; t < TR_NELEMS(tables); t++) {
    tr_prule r = tables[t];
    if (!tr_profile_widens_module(p, r, m)) continue;
    nrel++;
    a->alt[r] = tr_profile_shadow(p, 1u << r, m, ins, nins, arg_ulps, &a->nalt[r]);
  }
  if (nrel > 1) a->tables = tr_profile_shadow(p, ~0u, m, ins, nins, arg_ulps, &a->ntables);
  /* reduce-init-identity: the module with every reduce and reduce-window
   * whose init, as run, is not its reducer's identity undefined (its
   * elements uncertain): XLA applies such an init any number of times
   * (dropped over size-1 dims, 3, 5 or 33 times in its vectorized sums).
   * It differs from the plain reference only where such a reduce is in
   * the element's cone of influence. */
  if (p->on[TR_PR_REDUCE_INIT_IDENTITY] && has_reduce(m))
    a->alt[TR_PR_REDUCE_INIT_IDENTITY] = shadow_with(p, 0, NULL, NULL, NULL, UNDEF_INIT, m, ins, nins, arg_ulps,
                                                     &a->nalt[TR_PR_REDUCE_INIT_IDENTITY]);
  /* select-nan-order: the module with every select-and-scatter window
   * that holds a NaN free to send its source to any of its positions.
   * It differs from the plain reference only where such a window is in
   * the element's cone of influence. */
  if (p->on[TR_PR_SELECT_NAN_ORDER] && has_op(m, TR_OP_SELECT_AND_SCATTER))
    a->alt[TR_PR_SELECT_NAN_ORDER] = shadow_with(p, 0, NULL, NULL, NULL, UNDEF_SELECT_NAN, m, ins, nins, arg_ulps,
                                                 &a->nalt[TR_PR_SELECT_NAN_ORDER]);
  /* excess-precision: the module as a target computes it that keeps the
   * listed narrow dtypes in f32 inside a fused kernel, with every element
   * that overflowed such a dtype (and all computed from it) uncertain,
   * outputs nothing else reads excepted (stored, so rounded). It differs
   * from the plain reference only on elements with such an overflow in
   * their cone of influence. */
  if (p->on[TR_PR_EXCESS_PRECISION] && has_dtype(m, p->excess))
    a->alt[TR_PR_EXCESS_PRECISION] = shadow_full(p, 0, NULL, NULL, NULL, 0, p->excess, m, ins, nins, arg_ulps,
                                                 &a->nalt[TR_PR_EXCESS_PRECISION]);
  /* fma-contraction: the module as a target computes it that fuses a
   * product into the add or subtract reading it, with every product
   * element that overflowed from finite operands (and all computed from
   * it) uncertain. It differs from the plain reference only on elements
   * with such an overflow in their cone of influence. */
  if (p->on[TR_PR_FMA_CONTRACTION] && has_fma_product(m))
    a->alt[TR_PR_FMA_CONTRACTION] = shadow_fma(p, m, ins, nins, arg_ulps, &a->nalt[TR_PR_FMA_CONTRACTION]);
  static const tr_prule rewrites[] = {TR_PR_LOG_EXP_FOLD, TR_PR_INT_CONV_WRAP, TR_PR_CONV_ZERO_PAD,
                                      TR_PR_FAST_MINMAX, TR_PR_INT_POWER_UNIT_BASE};
  for (int w = 0; w < TR_NELEMS(rewrites); w++) {
    int count;
    tr_module *rm = tr_profile_rewrite(p, rewrites[w], m, &count);
    if (!rm) continue;
    a->alt[rewrites[w]] = tr_profile_shadow(p, 0, rm, ins, nins, arg_ulps, &a->nalt[rewrites[w]]);
    /* conv-zero-pad's NaN (0 * inf over the padding) reaching a reduce
     * whose init is no identity for NaN (an argmax over a size-1 dim,
     * which XLA drops): both deviations at once, which neither reference
     * alone covers. */
    if (rewrites[w] == TR_PR_CONV_ZERO_PAD && p->on[TR_PR_REDUCE_INIT_IDENTITY] && has_reduce(rm))
      a->zp_init = shadow_with(p, 0, NULL, NULL, NULL, UNDEF_INIT, rm, ins, nins, arg_ulps, &a->nzp_init);
    /* conv-zero-pad's NaN (0 * inf over the padding) ordered by a
     * TOTALORDER compare: its sign is not specified (x86 makes -NaN), so
     * the padded reference leaves such a compare uncertain; one reference
     * per sign says what each gives. */
    if (rewrites[w] == TR_PR_CONV_ZERO_PAD && has_total_compare(rm))
      for (int s = 0; s < 2; s++) {
        tr_shadow_opts so;
        memset(&so, 0, sizeof so);
        so.nan_sign = s ? 1 : -1;
        a->zp_sign[s] = shadow_opts(p, 0, so, rm, ins, nins, arg_ulps, &a->nzp_sign[s]);
      }
    /* fast-minmax's number in place of a NaN being a denormal that the
     * flushing target then reads as zero (max(NaN, -1e-38) as -0): both
     * deviations at once, which neither reference alone covers. */
    if (rewrites[w] == TR_PR_FAST_MINMAX && p->on[TR_PR_DENORMAL_FLUSH])
      a->mm_flush = shadow_with(p, 0, p->flush, NULL, NULL, false, rm, ins, nins, arg_ulps, &a->nmm_flush);
    /* an integer convolution that wraps, its values then chosen by a
     * compare of a denormal the flushing target reads as zero (a
     * conditional on x >= 0 of x = -5.7e-39 returning the wrapped sums:
     * the seed-28 xla-cpu campaign, mismatch-divide-u32): both deviations
     * at once, which neither reference alone covers. */
    if (rewrites[w] == TR_PR_INT_CONV_WRAP && p->on[TR_PR_DENORMAL_FLUSH] && has_dtype(m, p->flush))
      a->cw_flush = shadow_with(p, 0, p->flush, NULL, NULL, false, rm, ins, nins, arg_ulps, &a->ncw_flush);
    tr_module_free(rm);
  }
}

void tr_profile_alts_free(tr_profile_alts *a) {
  for (int r = 0; r < TR_PR_COUNT; r++) tr_shadow_free(a->alt[r], a->nalt[r]);
  tr_shadow_free(a->tables, a->ntables);
  tr_shadow_free(a->zp_init, a->nzp_init);
  tr_shadow_free(a->mm_flush, a->nmm_flush);
  tr_shadow_free(a->cw_flush, a->ncw_flush);
  for (int s = 0; s < 2; s++) tr_shadow_free(a->zp_sign[s], a->nzp_sign[s]);
  memset(a, 0, sizeof *a);
}

void tr_profile_alts_use(const tr_profile_alts *a, int i, tr_compare_opts *co) {
  for (int r = 0; r < TR_PR_COUNT; r++) co->alt[r] = a->alt[r] && i < a->nalt[r] ? &a->alt[r][i] : NULL;
  co->alt_tables = a->tables && i < a->ntables ? &a->tables[i] : NULL;
  co->alt_zp_init = a->zp_init && i < a->nzp_init ? &a->zp_init[i] : NULL;
  co->alt_mm_flush = a->mm_flush && i < a->nmm_flush ? &a->mm_flush[i] : NULL;
  co->alt_cw_flush = a->cw_flush && i < a->ncw_flush ? &a->cw_flush[i] : NULL;
  for (int s = 0; s < 2; s++) co->alt_zp_sign[s] = a->zp_sign[s] && i < a->nzp_sign[s] ? &a->zp_sign[s][i] : NULL;
}
