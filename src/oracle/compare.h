/* compare.h - the comparison policy: judges a target's output against the
 * reference's shadow output, element by element, with the reference's
 * error bounds (docs/ORACLE.md). A float element passes when
 * |target - value| <= k * bound + tiny(dtype); integers and predicates
 * compare exactly; NaN and Inf must match where the reference is certain;
 * uncertain elements are not judged. An output the reference cannot say
 * much about is "weak", not "passed". With a target profile (profile.h),
 * an element outside its bound is excused where one of the profile's
 * rules says the target may give that value, and counted under the rule's
 * name; without one (strict) every deviation is a failure. */
#ifndef TR_COMPARE_H
#define TR_COMPARE_H

#include "../eval/shadow.h"
#include "profile.h"

typedef enum {
  TR_JUDGE_PASS,     /* every certain element within its bound */
  TR_JUDGE_MISMATCH, /* at least one certain element outside it */
  TR_JUDGE_WEAK      /* no mismatch, but the check says little (see below) */
} tr_judgement;

const char *tr_judgement_name(tr_judgement j);

typedef struct {
  double k;            /* bound multiplier (1 by default) */
  double weak_uncertain; /* weak when more than this fraction is uncertain */
  const tr_profile *profile; /* NULL: strict, nothing is excused */
  /* Other references of the same output leaf under the profile, each
   * NULL when not computed (the rule then excuses only what it can tell
   * from ref alone):
   *   alt[TR_PR_DENORMAL_FLUSH]: the module evaluated as a flushing
   *     target computes it (tr_shadow_opts.flush: every denormal operand
   *     and result of a flushed dtype read and written as zero);
   *   alt[TR_PR_FLUSH_RESULTS]: with the flush-results ops' results
   *     below the smallest normal free to be 0
   *     (tr_shadow_opts.flush_results);
   *   alt[TR_PR_TRANSCENDENTAL_ULPS], alt[TR_PR_RECIPROCAL_DIVIDE]:
   *     evaluated with the ulp table widened by that rule alone;
   *   alt_tables: widened by every table rule at once (an element that
   *     needs both is named after both);
   *   alt[TR_PR_LOG_EXP_FOLD], alt[TR_PR_INT_CONV_WRAP],
   *     alt[TR_PR_CONV_ZERO_PAD]: the module as
   *     the rule's rewrite leaves it (tr_profile_rewrite);
   *   alt_zp_init: conv-zero-pad's rewritten module evaluated with
   *     reduce-init-identity's undefined inits (both rules at once);
   *   alt_mm_flush: fast-minmax's rewritten module evaluated as a
   *     flushing target (a clamp that returns its denormal bound for a
   *     NaN, read as zero);
   *   alt_cw_flush: int-conv-wrap's rewritten module evaluated as a
   *     flushing target (wrapped sums chosen by a compare of a denormal
   *     read as zero);
   *   alt_zp_sign[s]: conv-zero-pad's rewritten module with every NaN an
   *     op makes taken as -NaN (s = 0) or +NaN (1) by its TOTALORDER
   *     compares (tr_shadow_opts.nan_sign), which are then certain. */
  const tr_shadow_out *alt[TR_PR_COUNT];
  const tr_shadow_out *alt_tables;
  const tr_shadow_out *alt_zp_init;
  const tr_shadow_out *alt_mm_flush;
  const tr_shadow_out *alt_cw_flush;
  const tr_shadow_out *alt_zp_sign[2];
  /* flush-results: the module has an op the rule names with a result of
   * this dtype (tr_profile_flushes_results). */
  bool result_flush[TR_DT_COUNT];
} tr_compare_opts;

void tr_compare_opts_default(tr_compare_opts *o);

/* The numbers behind a judgement of one output. */
typedef struct {
  tr_judgement judgement;
  const char *weak_reason;  /* why weak, or NULL */
  size_t n;                 /* elements */
  size_t checked;           /* certain elements judged */
  size_t uncertain;         /* elements not judged */
  size_t failing;           /* certain elements outside their bound */
  double worst_ratio;       /* max |target - value| / allowance over judged floats */
  size_t worst_index;       /* where worst_ratio was seen */
  bool has_fail;            /* first_* below are set */
  size_t first_fail;        /* flat row-major index of the first failure */
  double first_value;       /* the reference value there */
  double first_target;      /* the target's value there */
  double first_bound;       /* the allowance there (k * bound + tiny) */
  size_t excused;           /* certain elements outside their bound that the
                               profile excused (not in failing) */
  size_t excused_by[TR_PR_COUNT]; /* per rule that excused them */
  size_t excused_tables;    /* excused only by the table rules together */
} tr_compare_result;

/* Judges target against ref (same dtype and dims, else TR_ERR_INVALID with
 * a message). */
tr_status tr_compare_output(const tr_shadow_out *ref, const tr_tensor *target,
                            const tr_compare_opts *opts, tr_compare_result *r, tr_diag *d);

/* The name an excuse count is printed under: the rule's, or
 * "transcendental-ulps+reciprocal-divide" for excused_tables. */
const char *tr_compare_tables_name(void);

/* The smallest positive value of a float dtype (its subnormal step): the
 * absolute slack every comparison allows. */
double tr_compare_tiny(tr_dtype dt);

#endif
