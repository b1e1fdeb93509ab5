/* alts.c - the profile's other references (alts.h). */
#include "alts.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

tr_shadow_out *tr_profile_shadow(const tr_profile *p, unsigned mask, const tr_module *m,
                                 tr_tensor *const *ins, int nins, const double *arg_ulps, int *n) {
  tr_ulp_table *t = tr_xmalloc(sizeof *t);
  tr_profile_ulp_table(p, mask, t);
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.ulps = t;
  so.arg_ulps = arg_ulps;
  tr_shadow_out *out = NULL;
  tr_diag d = {0};
  if (tr_eval_shadow(m, &so, ins, nins, &out, n, &d) != TR_OK) out = NULL;
  tr_diag_clear(&d);
  free(t);
  return out;
}

void tr_profile_alts_compute(const tr_profile *p, const tr_module *m, tr_tensor *const *ins,
                             int nins, const double *arg_ulps, tr_profile_alts *a) {
  memset(a, 0, sizeof *a);
  if (!p) return;
  /* DAZ: the same inputs with every denormal of a flushed dtype read as a
   * zero of its sign. */
  if (p->on[TR_PR_DENORMAL_FLUSH]) {
    tr_tensor **fl = tr_xcalloc((size_t)nins + 1, sizeof *fl);
    bool any = false, nomem = false;
    for (int i = 0; i < nins && !nomem; i++) {
      const tr_tensor *t = ins[i];
      /* Out of memory: no alternative reference; the strict judgement
       * stands (the profile cannot excuse what was not computed). */
      if (!(fl[i] = tr_tensor_clone(t))) {
        nomem = true;
        break;
      }
      if (!tr_dtype_is_float(t->dtype) || !p->flush[t->dtype]) continue;
      double mn = tr_min_normal(t->dtype);
      size_t n = tr_tensor_count(t);
      for (size_t j = 0; j < n; j++) {
        double v = tr_tensor_get_f(t, j);
        if (v != 0 && fabs(v) < mn) {
          tr_tensor_set_f(fl[i], j, copysign(0.0, v));
          any = true;
        }
      }
    }
    if (any && !nomem)
      a->alt[TR_PR_DENORMAL_FLUSH] =
          tr_profile_shadow(p, 0, m, fl, nins, arg_ulps, &a->nalt[TR_PR_DENORMAL_FLUSH]);
    for (int i = 0; i < nins; i++) tr_tensor_free(fl[i]);
    free(fl);
  }
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
