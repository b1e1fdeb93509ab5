/* shadow.h - the reference interpreter, shadow mode: evaluates a module
 * carrying every float in higher precision (double for types up to 32
 * bits, long double for f64) with a first-order bound on how far a
 * correct implementation may be from it, and an uncertain flag where a
 * discontinuous op's input interval straddles its discontinuity. docs/ORACLE.md describes the model, the ulp
 * table and every op's rule. The comparison policy judges a target
 * element by |target - value| <= k * bound + tiny(dtype), skipping the
 * uncertain ones. */
#ifndef TR_SHADOW_H
#define TR_SHADOW_H

#include "eval.h"

/* Rounding allowance of each op, in ulps of its result's dtype at the
 * result's magnitude: what a correct implementation may add on top of
 * the propagated input errors. For sums and contractions (reduce with an
 * add or multiply reducer, dot, convolution, reduce-window) it is the
 * allowance of each addition and product. A target profile widens it. */
typedef struct {
  float ulps[TR_OP_COUNT][TR_DT_COUNT]; /* [op][result dtype] */
} tr_ulp_table;

/* The default table (docs/ORACLE.md): 0.5 for correctly rounded ops,
 * XLA's own CPU accuracy budgets for transcendentals, 0 for exact ops. */
void tr_ulp_table_default(tr_ulp_table *t);

typedef struct {
  tr_eval_opts eval;        /* limits, as in exact mode */
  const tr_ulp_table *ulps; /* NULL: the default table */
  /* Per argument (nargs entries), or NULL: float arguments whose values
   * are themselves computed (the per-instruction check feeds a target's
   * results) enter with a bound of this many ulps of their dtype at each
   * element's magnitude instead of exact. */
  const double *arg_ulps;
  /* NULL, or TR_DT_COUNT flags: evaluate as a target that flushes the
   * denormals of the flagged float dtypes (FTZ and DAZ, docs/PROFILES.md
   * denormal-flush): every op that computes on values (arithmetic,
   * compare, convert, clamp, reductions, contractions) reads a denormal
   * operand as a zero of its sign and writes a denormal result as one.
   * Moves, select, abs, negate and bit ops keep every value. */
  const bool *flush;
  /* NULL, or TR_DT_COUNT flags: a float -> integer convert into a flagged
   * dtype gives an undefined result (StableHLO leaves it TBD) where the
   * truncated input does not fit the dtype (NaN and inf included) for
   * some value within the input's bound: that element is marked
   * uncertain, and so is every element computed from it
   * (docs/PROFILES.md, convert-out-of-range). */
  const bool *cvt_undef;
  /* NULL, or TR_OP_COUNT * TR_DT_COUNT flags, [op * TR_DT_COUNT + dtype]:
   * a flagged op's results of that float dtype may come out as 0 where
   * they are below the dtype's smallest normal (docs/PROFILES.md,
   * flush-results): such an element becomes 0 with a bound reaching its
   * value, so every element computed from it allows both. */
  const bool *flush_results;
  /* Evaluate as a target for which a reduce or reduce-window whose init
   * is not its reducer's identity is undefined (XLA's semantics: the init
   * must be an identity; docs/PROFILES.md, reduce-init-identity): for a
   * reducer with one (add, multiply, maximum, minimum, and, or, xor of its
   * two parameters) and an init, as run, other than it (or not exact),
   * every element of the result is marked uncertain. */
  bool init_undef;
  /* Evaluate as a target whose select-and-scatter may pick any position
   * of a window that holds a NaN (StableHLO defines the selection as a
   * reduce_window, whose order is implementation-defined, and a float
   * comparison is no order once a NaN takes part; docs/PROFILES.md,
   * select-nan-order): each such window's positions are all marked
   * uncertain, as for an uncertain selection, unless the select is a
   * TOTALORDER comparison (which orders NaN). */
  bool select_nan_undef;
  /* NULL, or TR_DT_COUNT flags: evaluate as a target that may keep the
   * values of the flagged float dtypes in f32 between ops and round them
   * only where it stores them (docs/PROFILES.md, excess-precision): an
   * element of a flagged dtype that overflows from finite operands (inf
   * here, finite in f32) is marked uncertain, and so is every element
   * computed from it, unless the instruction is an output of the module
   * that nothing else reads (stored, so rounded). */
  const bool *excess;
  /* With excess: a convert into a flagged dtype rounds as written; only
   * arithmetic results keep the excess precision (XLA CPU computes an
   * f8 op in f16 and drops the rounding to f8 where a convert to f16
   * reads it, but honours an explicit convert to f8). */
  bool excess_ops;
  /* Evaluate as a target that contracts a product feeding an add or
   * subtract into one fused multiply-add (docs/PROFILES.md,
   * fma-contraction), which never rounds the product: where the product
   * overflowed from finite operands the sum may still be finite, so that
   * product element is marked uncertain, and so is every element computed
   * from it. A product is a multiply, or with fma_recip a divide by a
   * broadcast of a flagged dtype (rewritten to a multiply by the
   * broadcast reciprocal, reciprocal-divide). */
  bool fma;
  const bool *fma_recip; /* NULL, or TR_DT_COUNT flags */
  /* 0, or -1 / +1: a TOTALORDER compare takes every NaN operand whose
   * pattern no tensor gave (one an op made: its sign is not specified)
   * as a quiet NaN of that sign, and is certain there (docs/PROFILES.md,
   * conv-zero-pad: the 0 * inf of the padding compared by total order).
   * 0: such a compare is uncertain. */
  int nan_sign;
} tr_shadow_opts;

/* One array leaf of the result. */
typedef struct {
  tr_dtype dtype;           /* element type of the leaf */
  int rank;                 /* number of dims */
  int64_t *dims;            /* rank sizes */
  size_t n;                 /* elements */
  double *value;            /* floats: shadow value per element; NULL for ints */
  double *bound;            /* floats: |correct - value| <= bound; complex: each
                               part of a correct result within bound of exact's;
                               NULL for ints */
  unsigned char *uncertain; /* 1: not to be judged (n entries, every dtype) */
  tr_tensor *exact;         /* the values in the leaf's dtype: ints exactly,
                               floats rounded to nearest */
  size_t nuncertain;        /* count of uncertain elements */
  double max_bound;         /* largest bound over certain finite float elements */
} tr_shadow_out;

/* Evaluates m's entry computation in shadow mode. args are as for
 * tr_eval_opt; each input is exact (bound 0, certain). On success *outs
 * is a new array of *nouts leaves (tuples flattened, tokens left out),
 * freed with tr_shadow_free. On failure returns non-OK with a located
 * diagnostic, as tr_eval_opt does. value is rounded from long double to
 * double, and bound includes that rounding. */
tr_status tr_eval_shadow(const tr_module *m, const tr_shadow_opts *opts, tr_tensor *const *args,
                         int nargs, tr_shadow_out **outs, int *nouts, tr_diag *d);
void tr_shadow_free(tr_shadow_out *outs, int nouts);

#endif
