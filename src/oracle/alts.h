/* alts.h - the other references a semantic profile needs before it can
 * excuse a deviation (docs/PROFILES.md): the module evaluated in shadow
 * mode as a denormal-flushing target computes it, with each widening ulp-table rule, with all
 * of them together, and as each rewrite rule leaves it. Each costs a
 * shadow evaluation, so callers compute them only once a strict comparison
 * has failed; the whole-module check (cmd_check.c) and the per-instruction
 * check (anchor.c) share this. */
#ifndef TR_ORACLE_ALTS_H
#define TR_ORACLE_ALTS_H

#include "compare.h"

typedef struct {
  tr_shadow_out *alt[TR_PR_COUNT]; /* per rule; NULL where it does not apply */
  int nalt[TR_PR_COUNT];
  tr_shadow_out *tables;           /* every table rule at once (two or more apply) */
  int ntables;
  tr_shadow_out *zp_init;          /* conv-zero-pad's module with reduce-init-
                                      identity's undefined inits (both apply) */
  int nzp_init;
  tr_shadow_out *mm_flush;         /* fast-minmax's module evaluated as a
                                      denormal-flushing target (both apply) */
  int nmm_flush;
  tr_shadow_out *cw_flush;         /* int-conv-wrap's module evaluated as a
                                      denormal-flushing target (both apply) */
  int ncw_flush;
  tr_shadow_out *zp_sign[2];       /* conv-zero-pad's module with the NaNs ops
                                      make taken as -NaN [0] and +NaN [1] by
                                      TOTALORDER compares (it has one) */
  int nzp_sign[2];
} tr_profile_alts;

/* Shadow outputs of m on ins with the ulp table widened by the rules in
 * mask (0: the profile's plain table); arg_ulps as tr_shadow_opts (NULL:
 * exact inputs). NULL when the reference fails. */
tr_shadow_out *tr_profile_shadow(const tr_profile *p, unsigned mask, const tr_module *m,
                                 tr_tensor *const *ins, int nins, const double *arg_ulps, int *n);

/* Computes every reference p's rules need for m on ins (a is cleared
 * first; p NULL leaves it empty). */
void tr_profile_alts_compute(const tr_profile *p, const tr_module *m, tr_tensor *const *ins,
                             int nins, const double *arg_ulps, tr_profile_alts *a);
void tr_profile_alts_free(tr_profile_alts *a);

/* Points co's references for output leaf i at a's. */
void tr_profile_alts_use(const tr_profile_alts *a, int i, tr_compare_opts *co);

#endif
