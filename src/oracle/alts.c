/* alts.c - the profile's other references (alts.h). */
#include "alts.h"

#include <stdlib.h>
#include <string.h>

/* m on ins under p's table widened by mask, on a target that flushes
 * the dtypes of flush (NULL: none). */
static tr_shadow_out *shadow_with(const tr_profile *p, unsigned mask, const bool *flush, const tr_module *m,
                                  tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  tr_ulp_table *t = tr_xmalloc(sizeof *t);
  tr_profile_ulp_table(p, mask, t);
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.ulps = t;
  so.arg_ulps = arg_ulps;
  so.flush = flush;
  tr_shadow_out *out = NULL;
  tr_diag d = {0};
  if (tr_eval_shadow(m, &so, ins, nins, &out, n, &d) != TR_OK) out = NULL;
  tr_diag_clear(&d);
  tr_free(t);
  return out;
}

tr_shadow_out *tr_profile_shadow(const tr_profile *p, unsigned mask, const tr_module *m,
                                 tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  return shadow_with(p, mask, NULL, m, ins, nins, arg_ulps, n);
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
        shadow_with(p, 0, p->flush, m, ins, nins, arg_ulps, &a->nalt[TR_PR_DENORMAL_FLUSH]);
  static const tr_prule tables[] = {TR_PR_TRANSCENDENTAL_ULPS, TR_PR_RECIPROCAL_DIVIDE};
  int nrel = 0;
  for (int t = 0; t < TR_NELEMS(tables); t++) {
    tr_prule r = tables[t];
    if (!tr_profile_widens_module(p, r, m)) continue;
    nrel++;
    a->alt[r] = tr_profile_shadow(p, 1u << r, m, ins, nins, arg_ulps, &a->nalt[r]);
  }
  if (nrel > 1) a->tables = tr_profile_shadow(p, ~0u, m, ins, nins, arg_ulps, &a->ntables);
  static const tr_prule rewrites[] = {TR_PR_LOG_EXP_FOLD, TR_PR_INT_CONV_WRAP, TR_PR_CONV_ZERO_PAD,
                                      TR_PR_FAST_MINMAX, TR_PR_REDUCE_INIT_IDENTITY};
  for (int w = 0; w < TR_NELEMS(rewrites); w++) {
    int count;
    tr_module *rm = tr_profile_rewrite(p, rewrites[w], m, &count);
    if (!rm) continue;
    a->alt[rewrites[w]] = tr_profile_shadow(p, 0, rm, ins, nins, arg_ulps, &a->nalt[rewrites[w]]);
    tr_module_free(rm);
  }
}

void tr_profile_alts_free(tr_profile_alts *a) {
  for (int r = 0; r < TR_PR_COUNT; r++) tr_shadow_free(a->alt[r], a->nalt[r]);
  tr_shadow_free(a->tables, a->ntables);
  memset(a, 0, sizeof *a);
}

void tr_profile_alts_use(const tr_profile_alts *a, int i, tr_compare_opts *co) {
  for (int r = 0; r < TR_PR_COUNT; r++) co->alt[r] = a->alt[r] && i < a->nalt[r] ? &a->alt[r][i] : NULL;
  co->alt_tables = a->tables && i < a->ntables ? &a->tables[i] : NULL;
}
