/* profile.h - target semantic profiles: the deviations a target makes by
 * design (docs/PROFILES.md), as named rules read from a small config file
 * (profiles/TARGET.conf). The reference stays exact; the comparison
 * (compare.h) applies the rules, and every element a rule excuses is
 * counted under the rule's name, so a report says why it passed. */
#ifndef TR_PROFILE_H
#define TR_PROFILE_H

#include "../eval/shadow.h"

/* The rules a profile may name. */
typedef enum {
  TR_PR_DENORMAL_FLUSH,      /* FTZ/DAZ: denormals read and written as zero */
  TR_PR_FAST_MINMAX,         /* a NaN from min/max may come out as a number */
  TR_PR_TRANSCENDENTAL_ULPS, /* polynomial exp/log/tanh/...: wider ulps */
  TR_PR_RECIPROCAL_DIVIDE,   /* A/C -> A*(1/C): divide gets wider ulps */
  TR_PR_FMA_CONTRACTION,     /* a*b+c single-rounded: covered by the bounds */
  TR_PR_REORDERED_REDUCTION, /* sums re-associated: covered by the bounds */
  TR_PR_LOG_EXP_FOLD,        /* the simplifier's log(exp(x)) -> x */
  TR_PR_INT_CONV_WRAP,       /* integer convolutions wrap (E saturates) */
  TR_PR_FLUSH_RESULTS,       /* an op's results below min normal may be 0 */
  TR_PR_CONV_ZERO_PAD,       /* convolutions multiply their zero padding */
  TR_PR_NARROW_IN_F32,       /* bf16/f16 chains computed in f32: a consumer
                                may see a value the store rounded later */
  TR_PR_DOT_ACCUMULATE,      /* narrow dots accumulate wider: a NARROWING
                                rule, the reference itself changes */
  TR_PR_REDUCE_INIT_IDENTITY, /* a reduce's init is taken to be its
                                reducer's identity (the documented
                                contract; a size-1 reduce may drop it) */
  TR_PR_CONVERT_OUT_OF_RANGE, /* a float->int convert whose truncated
                                value does not fit gives any value (the
                                spec leaves it undefined) */
  TR_PR_INT_POWER_UNIT_BASE, /* signed integer power of -1 to a negative
                                exponent is (-1)^|n| (StableHLO), not 0
                                (XLA, the reference) */
  TR_PR_SELECT_NAN_ORDER,    /* select-and-scatter may pick any position
                                of a window holding a NaN */
  TR_PR_EXCESS_PRECISION,    /* bf16/f16 kept in f32 between fused ops of a
                                whole module: an overflow of the narrow
                                dtype may not happen */
  TR_PR_COUNT
} tr_prule;

const char *tr_prule_name(tr_prule r); /* "denormal-flush", ... */
bool tr_prule_lookup(const char *s, size_t n, tr_prule *r);

typedef struct {
  char *file;                          /* where it was read from (messages) */
  char *target;                        /* the "target" line, or NULL */
  bool on[TR_PR_COUNT];              /* rules the file names */
  bool flush[TR_DT_COUNT];             /* denormal-flush dtypes */
  bool minmax[TR_DT_COUNT];            /* fast-minmax dtypes */
  /* Ulp allowances of the table rules (0: the default stays); an entry
   * only ever widens the default table (tr_profile_ulp_table). */
  float ulps[TR_OP_COUNT][TR_DT_COUNT];
  tr_prule ulps_rule[TR_OP_COUNT][TR_DT_COUNT]; /* which rule set each */
  bool fold[TR_DT_COUNT];              /* log-exp-fold dtypes */
  bool wrap[TR_DT_COUNT];              /* int-conv-wrap dtypes */
  bool flushres[TR_OP_COUNT][TR_DT_COUNT]; /* flush-results ops per dtype */
  bool zpad[TR_DT_COUNT];              /* conv-zero-pad dtypes */
  bool narrow[TR_DT_COUNT];            /* narrow-in-f32 dtypes */
  bool cvt_undef[TR_DT_COUNT];         /* convert-out-of-range: integer
                                          result dtypes of float converts */
  bool ipow_unit[TR_DT_COUNT];         /* int-power-unit-base dtypes */
  bool excess[TR_DT_COUNT];            /* excess-precision dtypes */
  bool excess_ops;                     /* excess-precision ops: converts round */
  tr_dtype dot_acc[TR_DT_COUNT];       /* dot-accumulate: the accumulator
                                          of dots with this result dtype
                                          (TR_DT_PRED: none) */
  /* The stated accuracy contract ("contract DTYPE OP=ULPS": ulps from
   * the exact result that the target's own accuracy tests allow; 0: none
   * stated). No allowance of the profile may exceed it (a parse error),
   * and under the profile the default table is capped by it too. */
  float contract[TR_OP_COUNT][TR_DT_COUNT];
  char *release;                       /* the release lines were kept for
                                          ("@VER" keys), or NULL */
} tr_profile;

/* Parses a profile. file names it in messages ("FILE:LINE:COL: error:
 * ..."). On error returns TR_ERR_SYNTAX with every bad line reported and
 * *out NULL. */
tr_status tr_profile_parse(const char *file, const char *text, size_t len, tr_profile **out,
                           tr_diag *d);
/* As tr_profile_parse for one release of the target: a line whose first
 * word is "@V1,V2,..." applies only when release is one of them (other
 * lines always); release NULL means the profile's "release VER" line (the
 * release a plain target name runs), or, without one, keyed lines are
 * left out. */
tr_status tr_profile_parse_release(const char *file, const char *text, size_t len,
                                   const char *release, tr_profile **out, tr_diag *d);
tr_status tr_profile_load_release(const char *path, const char *release, tr_profile **out,
                                  tr_diag *d);
/* Reads and parses a file (TR_ERR_IO when unreadable). */
tr_status tr_profile_load(const char *path, tr_profile **out, tr_diag *d);
void tr_profile_free(tr_profile *p); /* NULL is fine */

/* The default ulp table widened by the table rules in mask (bit 1<<rule;
 * ~0u for all of them): each entry is the larger of the default and the
 * rule's, then capped by the contract where one is stated (mask 0: the
 * default table capped). p NULL gives the default table. */
void tr_profile_ulp_table(const tr_profile *p, unsigned mask, tr_ulp_table *t);

/* True when rule r (a table rule) widens some op on dtype dt beyond the
 * default table, so a separate shadow pass with it can excuse more. */
bool tr_profile_widens(const tr_profile *p, tr_prule r, tr_op op, tr_dtype dt);
/* True when rule r widens some float instruction of m. */
bool tr_profile_widens_module(const tr_profile *p, tr_prule r, const tr_module *m);

/* The rewrite rules (log-exp-fold, int-conv-wrap, conv-zero-pad, fast-minmax,
 * reduce-init-identity, int-power-unit-base) are checked against the
 * reference evaluated on the module as the target rewrote it: a clone of m
 * with the rule's rewrite applied wherever it matches, or NULL when it
 * matches nowhere (or p does not name the rule). *count gets the number of
 * places rewritten. Free with tr_module_free. */
tr_module *tr_profile_rewrite(const tr_profile *p, tr_prule r, const tr_module *m, int *count);

/* The narrowing rule (dot-accumulate) does not excuse: it says how the
 * target computes, so under the profile the reference is m with each dot
 * the rule names computed in its accumulator and rounded once to its
 * result dtype (tighter bounds than the dtype's own accumulation, which
 * the default and --strict keep). The rewritten module, or NULL when the
 * rule matches nowhere; *count gets the dots rewritten. Free with
 * tr_module_free. */
tr_module *tr_profile_narrowed(const tr_profile *p, const tr_module *m, int *count);

/* Whether m has an instruction whose result dtype dt and opcode the
 * profile's flush-results rule names. */
bool tr_profile_flushes_results(const tr_profile *p, const tr_module *m, tr_dtype dt);

/* The input allowance, in ulps of its own dtype, that rule r (an
 * input rule of per-instruction checks: narrow-in-f32, fma-contraction)
 * gives an operand of dtype dt; 0 when p does not name r for dt. Both are
 * half an ulp: the consumer saw the value before its one rounding to
 * the stored type. */
double tr_profile_input_ulps(const tr_profile *p, tr_prule r, tr_dtype dt);

/* The smallest normal magnitude of a float dtype: what a flushing target
 * may lose in absolute terms on one value (denormal-flush). */
double tr_min_normal(tr_dtype dt);

#endif
