/* genint.h - what the generator's files share: the generation context, its
 * random source, element type and shape choosers, leaves and the value
 * pool. gen.c drives a module; gen_ops.c holds the op makers, one per
 * opcode family, in a table keyed by opcode; gen_convert.c the
 * conversions and the values at their edges; gen_control.c tuples and
 * control flow. */
#ifndef TR_GENINT_H
#define TR_GENINT_H

#include "../ir/build.h"
#include "gen.h"

/* Element type classes (the ops.def types column). */
typedef enum { GC_ANY, GC_FLOAT, GC_INT, GC_INTP, GC_NUM } gen_class;

typedef struct {
  uint64_t rng;              /* splitmix64 state */
  const tr_gen_opts *o;      /* the caller's options */
  tr_module *m;              /* module being made */
  tr_comp *c;                /* computation being filled */
  tr_instr **pool;           /* values of c available as operands */
  int npool, cappool;
  bool op_ok[TR_OP_COUNT];   /* the allow-list */
  bool dt_ok[TR_DT_COUNT];   /* element types that may be chosen */
  bool consts_only;          /* leaves are constants (parameterless) */
  int depth;                 /* sub-computation nesting */
  int nleaves;               /* leaves made in c */
  tr_instr *prefer;          /* the operand gen_pick returns next: the
                                previous op's result (a chain), or NULL */
  tr_buf why;                /* the builder's last refusal */
  tr_instr *watch[2];        /* entry values made outputs whatever uses
                                them (a conversion of edge values) */
  int nwatch;
} gen_ctx;

/* Small helpers of the makers' files. */
static inline bool gen_is_cplx(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_COMPLEX; }
static inline tr_shape *gen_scalar(gen_ctx *g, tr_dtype dt) { return tr_shape_array(g->m->arena, dt, 0, NULL); }
/* Finishes a built instruction; the builder's refusal goes to g->why. */
static inline tr_instr *gen_end(gen_ctx *g, tr_instr *in, const tr_shape *decl) {
  return tr_build_end(in, decl, &g->why);
}

typedef tr_instr *(*gen_maker)(gen_ctx *g, tr_op op);
/* The op makers (gen_ops.c), NULL where the generator makes no op. */
extern const gen_maker gen_makers[TR_OP_COUNT];
/* convert and bitcast-convert (gen_convert.c: values at a conversion's
 * edges). */
tr_instr *gen_mk_convert(gen_ctx *g, tr_op op);
tr_instr *gen_mk_bitcast_convert(gen_ctx *g, tr_op op);
/* tuples and control flow (gen_control.c) */
tr_instr *gen_mk_tuple(gen_ctx *g, tr_op op);
tr_instr *gen_mk_gte(gen_ctx *g, tr_op op);
tr_instr *gen_mk_call(gen_ctx *g, tr_op op);
tr_instr *gen_mk_map(gen_ctx *g, tr_op op);
tr_instr *gen_mk_while(gen_ctx *g, tr_op op);
tr_instr *gen_mk_conditional(gen_ctx *g, tr_op op);
/* A constant of shape s (a float or integer type) whose elements are
 * mostly at the edges of type to (overflow, subnormals, rounding ties,
 * integer ends), stored as s's type holds them, the rest ordinary
 * values. Not pushed to the pool. */
tr_instr *gen_edge_constant(gen_ctx *g, const tr_shape *s, tr_dtype to);
/* One value at an edge of float type t: its largest finite value and
 * just past it, its smallest normal, subnormals and their ties, ties of
 * its rounding, the first integers it cannot hold; either sign. */
double gen_float_edge(gen_ctx *g, tr_dtype t);
/* Whether the edges of to differ from what values of from reach: a float
 * destination from a float or integer, or an integer one from a float. */
bool gen_edges_apply(tr_dtype from, tr_dtype to);

/* ---- random choices ---- */
uint64_t gen_rand(gen_ctx *g);
int64_t gen_below(gen_ctx *g, int64_t n); /* [0, n); 0 when n <= 0 */
bool gen_chance(gen_ctx *g, int percent);
/* A random permutation of 0..n-1 into p. */
void gen_perm(gen_ctx *g, int64_t *p, int n);

/* ---- element types and shapes ---- */
bool gen_in_class(tr_dtype dt, gen_class k);
gen_class gen_class_of(const char *types);
/* An allowed element type of class k (complex only when cplx), weighted
 * toward f32; TR_DT_COUNT when none is allowed. */
tr_dtype gen_dtype(gen_ctx *g, gen_class k, bool cplx);
/* gen_dtype's relative frequency of dt. */
int gen_dtype_weight(tr_dtype dt);
/* One dimension size: 1, small, primes, lane/tile sizes +-1, rarely 0. */
int64_t gen_dim(gen_ctx *g);
int gen_rank(gen_ctx *g);
/* dims of rank n with at most cap elements. */
void gen_dims(gen_ctx *g, int n, int64_t *dims, int64_t cap);
tr_shape *gen_shape(gen_ctx *g, tr_dtype dt, int rank, const int64_t *dims);

/* ---- values ---- */
/* Element bits of one random value of dt (specials, far ranges, ties,
 * denormals, whole integer range), written into out (tr_dtype_size). */
void gen_value(gen_ctx *g, tr_dtype dt, void *out);
/* A leaf of shape s: a parameter or a constant. */
tr_instr *gen_leaf(gen_ctx *g, const tr_shape *s);
tr_instr *gen_constant(gen_ctx *g, const tr_shape *s);
/* A scalar constant of dt holding integer v (or v as a float). */
tr_instr *gen_scalar_const(gen_ctx *g, tr_dtype dt, double v);

/* ---- the pool ---- */
void gen_push(gen_ctx *g, tr_instr *in);
/* An array value of the pool (or a new leaf), recent ones preferred;
 * g->prefer first when it is set (it is used once). */
tr_instr *gen_pick(gen_ctx *g);
/* x converted to class k (unchanged when already in it); NULL when no
 * type of k is allowed. */
tr_instr *gen_to_class(gen_ctx *g, tr_instr *x, gen_class k, bool cplx);
/* x converted to dt. */
tr_instr *gen_to_dtype(gen_ctx *g, tr_instr *x, tr_dtype dt);
/* A value with x's dims and element type dt: from the pool, a broadcast
 * or a new leaf. */
tr_instr *gen_partner(gen_ctx *g, tr_instr *x, tr_dtype dt);
/* A pred value with x's dims (a compare, usually). */
tr_instr *gen_pred_like(gen_ctx *g, tr_instr *x);

/* ---- computations ---- */
/* A scalar (T, T) -> T computation applying op (a combiner, a reducer). */
tr_comp *gen_binary_comp(gen_ctx *g, tr_op op, tr_dtype dt);
/* A reducer op that suits dt (add, multiply, maximum, minimum, and, or). */
tr_op gen_reducer_op(gen_ctx *g, tr_dtype dt);
/* A fresh computation name. */
const char *gen_comp_name(gen_ctx *g, const char *base);
/* Runs f in computation k with its own pool (params pushed first) and
 * restores the caller's. */
typedef struct {
  tr_comp *c;
  tr_instr **pool;
  int npool, cappool, nleaves;
  tr_instr *prefer;
} gen_saved;
void gen_enter(gen_ctx *g, tr_comp *k, gen_saved *s);
void gen_leave(gen_ctx *g, gen_saved *s);
/* A short chain of elementwise ops on x inside the current computation
 * that keeps x's shape and type (bodies and branches). */
tr_instr *gen_chain(gen_ctx *g, tr_instr *x, int n);

#endif
