/* inputs.h - test inputs: named value distributions per dtype, drawn from a
 * counter-based generator so a seed gives the same tensor byte for byte on
 * every machine and in any evaluation order, and a default policy that
 * picks a distribution per entry parameter from its dtype and its uses
 * (index operands get indices bounded by the operand they index).
 * docs/INPUTS.md describes every distribution and the generator. */
#ifndef TR_INPUTS_H
#define TR_INPUTS_H

#include "../ir/ir.h"
#include "../ir/tensor.h"

/* Distributions. Each is defined for every array dtype (docs/INPUTS.md has
 * the table); pred is always a fair coin. The index ones need a bound. */
typedef enum {
  TR_DIST_DEFAULT,    /* let the policy choose (not a distribution itself) */
  TR_DIST_NORMAL,     /* floats N(0,1); ints round(16·N(0,1)) */
  TR_DIST_UNIFORM,    /* floats U[-1,1); ints the s8/u8 range */
  TR_DIST_POSITIVE,   /* floats [1/16,16) per binade; ints [1,127] */
  TR_DIST_LARGE,      /* floats top half of the exponents; ints top half */
  TR_DIST_TINY,       /* floats lowest 8 normal binades; ints -2..2 */
  TR_DIST_DENORMAL,   /* floats subnormals only; else as TINY */
  TR_DIST_INTEGER,    /* floats integer values; ints as UNIFORM */
  TR_DIST_FULL,       /* any finite value (all bit patterns but NaN/Inf) */
  TR_DIST_BOUNDARY,   /* min, max, 0, ±1, powers of two ±1; float edges */
  TR_DIST_INDEX,      /* indices in [0, bound] */
  TR_DIST_INDEX_EDGE, /* 0, 1, bound-1, bound and one past each end */
  TR_DIST_INDEX_OOB,  /* out of bounds only: negative, > bound, extremes */
  TR_DIST_INDEX_DUP,  /* a pool of at most 3 values: many duplicates */
  TR_DIST_COUNT
} tr_dist;

const char *tr_dist_name(tr_dist d); /* "normal", "index-oob", ... */
/* Sets *d from a name; false when unknown. */
bool tr_dist_lookup(const char *name, tr_dist *d);
static inline bool tr_dist_is_index(tr_dist d) {
  return d >= TR_DIST_INDEX && d <= TR_DIST_INDEX_DUP;
}

/* A range of values where some op saturates, overflows or changes
 * algorithm (domain.c's per-op table): drawn in [lo, hi] (by binade when
 * 0 < lo and hi > 16 lo), either sign when sym, moved to the nearest
 * k + 1/2 when half (rounding ties). */
typedef struct {
  double lo, hi;
  bool sym, half;
} tr_domain_range;
#define TR_DOMAIN_MAX 24

/* What to draw for one tensor. */
typedef struct {
  tr_dist dist;        /* never TR_DIST_DEFAULT when filling */
  double special_rate; /* floats: share of elements replaced by NaN, ±Inf
                          or -0.0 (those the dtype has); 0 for none */
  int64_t bound;       /* index dists: the largest in-bounds value (>= 0),
                          for every element when bound_axis < 0 */
  int bound_axis;      /* axis along which the bound varies, or -1 */
  int nbounds;         /* bound_axis >= 0: entries in bounds, = its size */
  int64_t bounds[TR_TENSOR_MAX_RANK]; /* bound per position on bound_axis */
  int ndomain;         /* floats: > 0 draws domain-edge values instead of
                          dist: 3 in 4 elements from these ranges, 3 in 16
                          N(0,1), 1 in 16 a special (NaN, +-inf, -0, +-max,
                          +-smallest subnormal, +-smallest normal) */
  tr_domain_range domain[TR_DOMAIN_MAX];
} tr_input_spec;

/* The domain-edge ranges for values of dtype dt feeding m: the table's
 * entries for m's ops at dt's width, then every float type's overflow
 * and subnormal ranges; at most max into out, returns the count (0 for a
 * non-float dt). For the fuzzer and the default plan. */
int tr_inputs_domain(const tr_module *m, tr_dtype dt, tr_domain_range *out, int max);

/* A spec for dist with no specials and bound 15 (an index dist drawn
 * without a known operand). */
void tr_input_spec_init(tr_input_spec *s, tr_dist dist);
/* "normal", "index-oob bound=[3,7]@1", "normal specials=0.01": for
 * messages and the run summary. */
void tr_input_spec_print(tr_buf *b, const tr_input_spec *s);

/* The generator: 64 random bits for draw k of element `index` of stream
 * `stream` (an entry's leaf number) under seed. Nothing else feeds it:
 * splitmix64's finalizer applied as docs/INPUTS.md writes. */
uint64_t tr_input_bits(uint64_t seed, uint64_t stream, uint64_t index,
                       uint64_t k);

/* Overwrites every element of t from spec: element i depends only on
 * (seed, stream, i). Returns TR_ERR_USAGE with a diagnostic when spec is
 * unusable (TR_DIST_DEFAULT, a rate outside [0,1], bounds that do not
 * match t). */
tr_status tr_input_fill(tr_tensor *t, const tr_input_spec *spec,
                        uint64_t seed, uint64_t stream, tr_diag *d);

/* ---- the default policy over a module's entry parameters ---- */
typedef struct {
  uint64_t seed;       /* the run's seed */
  tr_dist data;        /* dist for data leaves (not index, not pred);
                          TR_DIST_DEFAULT: normal */
  tr_dist index;       /* dist for index leaves; TR_DIST_DEFAULT: index */
  double special_rate; /* given to every float leaf */
  bool no_domain;      /* never domain-edge draws: with data and index
                          DEFAULT, the seeds with seed % 3 == 2 draw float
                          data leaves from the module's op domains
                          (tr_inputs_domain) */
} tr_input_config;

void tr_input_config_init(tr_input_config *c); /* seed 0, defaults, no specials */

/* One array leaf of the entry parameters, in the target protocol's order:
 * parameter order, depth-first inside tuples, tokens left out. */
typedef struct {
  const tr_shape *shape; /* the leaf's array shape (in the module) */
  const tr_instr *param; /* the entry parameter it belongs to */
  bool is_index;         /* feeds start indices, gather/scatter indices or
                            a conditional's branch index */
  tr_input_spec spec;    /* what the policy chose */
} tr_input_leaf;

/* The policy's choice for every leaf of m's entry. Data leaves get
 * cfg->data, pred a fair coin, index leaves cfg->index bounded by what
 * they index (several uses: the smallest bound). Uses are found through
 * position-keeping index arithmetic, tuples, and into and back out of
 * call, fusion and conditional bodies (docs/INPUTS.md says exactly). On success *leaves is a
 * new array of *nleaves (free it). Fails (TR_ERR_UNSUPPORTED, with a
 * diagnostic) on a leaf with an unbounded dynamic dim or an opaque type. */
tr_status tr_inputs_plan(const tr_module *m, const tr_input_config *cfg,
                         tr_input_leaf **leaves, int *nleaves, tr_diag *d);
/* Plans and fills: *outs gets one new tensor per leaf, leaf j drawn with
 * stream j, ready for tr_eval. Free with tr_inputs_free. */
tr_status tr_inputs_make(const tr_module *m, const tr_input_config *cfg,
                         tr_tensor ***outs, int *nouts, tr_diag *d);
void tr_inputs_free(tr_tensor **ts, int n); /* NULL is fine */

#endif
