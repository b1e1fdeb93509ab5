/* shadowint.h - what shadow mode's files share: shadow values, the
 * context, per-dtype rounding facts and the kernels (elementwise in
 * shadow_elem.c, data movement in shadow_move.c, sums and contractions in
 * shadow_lin.c). Not a public interface. */
#ifndef TR_SHADOWINT_H
#define TR_SHADOWINT_H

#include "evalint.h"
#include "shadow.h"

/* A shadow value: an array, a tuple or a token, shared by reference
 * count like tr_value. An array of floats carries its values (d for
 * types up to 32 bits, lv for f64), e and u; any other array carries its
 * exact values in t (integers are exact) and u. Double holds the values
 * of the narrow types: its 2^-53 is far below their ulps and inside the
 * slack every rule adds, and it keeps the bulk loops in SIMD registers
 * (long double is x87 only); f64 needs more than double. */
/* Big buffers of dropped values, kept for the next results of about the
 * same size: a chain of elementwise ops over large arrays otherwise
 * spends much of its time faulting fresh pages in and handing them back. */
#define SH_POOL 24
#define SH_POOL_MAX_BYTES ((size_t)256 << 20) /* held at most */
/* Scalars (rank 0) of dropped values, whole, per dtype: the calls of a
 * reducer, comparator or map computation make and drop several a
 * element, and a reduce over 100,000 rows otherwise spends most of its
 * time in malloc and free. */
#define SH_SPARE 32
typedef struct sh_val sh_val;
typedef struct {
  int n;
  size_t held;        /* bytes in the pool */
  void *p[SH_POOL];
  size_t bytes[SH_POOL];
  sh_val *spare[TR_DT_COUNT]; /* chained through spare_next */
  int nspare[TR_DT_COUNT];
} sh_pool;

struct sh_val {
  ev_v hd;           /* owners, kind, tuple elements (value.h) */
  tr_dtype dt;       /* array element type */
  int rank;          /* array rank */
  int64_t *dims;     /* array dims (heap) */
  size_t n;          /* array elements */
  tr_tensor *t;      /* non-float arrays: the values */
  double *d;         /* float arrays up to 32 bits: shadow values */
  long double *lv;   /* f64 arrays: shadow values */
  double *e;         /* float arrays: bounds (>= 0) */
  unsigned char *u;  /* arrays: uncertain flags */
  sh_pool *pool;     /* where its buffers go back (arrays) */
  tr_tensor *bits;   /* real float arrays: the stored patterns, kept
                        (owned) when some element is a NaN whose pattern
                        is known (read from a tensor, moved, bitcast);
                        only its NaN elements are read (shadow_bits.c) */
  const tr_tensor *src; /* lazy: a large exact, certain entry argument not
                           yet in shadow form (d, e, u NULL); the caller's,
                           alive for the evaluation. sh_materialize makes
                           the planes; gather, slice and dynamic-slice read
                           it as it is (shadow.c, sh_call) */
  sh_val *spare_next;   /* in its pool's spare scalars */
};

/* Whether a is an array, and a tuple's elements (hd.elems seen as shadow
 * values). */
static inline bool sh_is_arr(const sh_val *a) { return a->hd.kind == EV_ARRAY; }
static inline sh_val **sh_elems(const sh_val *a) { return (sh_val **)a->hd.elems; }

typedef struct {
  ev_ctx ev;              /* the exact evaluator's context: errors, limits, facts */
  const tr_ulp_table *ut; /* rounding allowances */
  tr_module *helpers;     /* f64 combiners for twin kernels, parsed on first use */
  sh_pool pool;           /* buffers for reuse */
  const bool *flush;      /* tr_shadow_opts.flush */
  const bool *cvt_undef;  /* tr_shadow_opts.cvt_undef */
  const bool *flush_res;  /* tr_shadow_opts.flush_results */
  bool init_undef;        /* tr_shadow_opts.init_undef */
  bool sel_nan_undef;     /* tr_shadow_opts.select_nan_undef */
  const bool *excess;     /* tr_shadow_opts.excess */
  bool excess_ops;        /* tr_shadow_opts.excess_ops */
  bool fma;               /* tr_shadow_opts.fma */
  const bool *fma_recip;  /* tr_shadow_opts.fma_recip */
  int nan_sign;           /* tr_shadow_opts.nan_sign */
  bool cplx;              /* the module has complex values (ev_module_complex) */
} sh_ctx;

/* Rounding facts of a float dtype. */
typedef struct {
  int p;               /* significand bits, implicit bit included */
  int emin;            /* exponent of the smallest normal (2^emin) */
  long double lim;     /* magnitudes at or above this round to inf (or NaN) */
  long double maxf;    /* largest finite value */
  double tiny;         /* smallest subnormal: the ulp below 2^emin */
  double slack;        /* relative error of the shadow's own arithmetic
                          and of an implementation's f32 intermediates */
  bool has_inf;        /* overflow gives inf (else NaN) */
} sh_fmt;

void sh_fmt_of(tr_dtype dt, sh_fmt *f);
/* ulp of dt at magnitude |x| (x finite). */
long double sh_ulp(const sh_fmt *f, long double x);
/* Completes one float result r of dtype f with propagated error p and an
 * allowance of k ulps: writes value, bound and the overflow rule's mark
 * (ORs into *u). Non-finite r gets bound 0; the caller decides its mark. */
void sh_finish(const sh_fmt *f, long double r, long double p, double k, long double *v, double *e,
               unsigned char *u);
double sh_allow(const sh_ctx *c, tr_op op, tr_dtype dt);

/* Element i's shadow value. */
static inline long double sh_get(const sh_val *a, size_t i) {
  return a->d ? (long double)a->d[i] : a->lv[i];
}
/* Stores value v with bound e into element i; where the storage is
 * double and v is finite, the bound grows by the rounding, rounded up. */
void sh_put(sh_val *a, size_t i, long double v, double e);
/* Copies element j of b (same dtype) into element i of a: value, bound
 * and mark. */
static inline void sh_copy(sh_val *a, size_t i, const sh_val *b, size_t j) {
  if (a->d) a->d[i] = b->d[j];
  else if (a->lv) a->lv[i] = b->lv[j];
  if (a->e) a->e[i] = b->e[j];
  a->u[i] = b->u[j];
}
/* Whether the values of dt are held in double (d). */
static inline bool sh_narrow(tr_dtype dt) { return tr_dtype_is_float(dt) && tr_dtypes[dt].bits <= 32; }

/* ---- buffers (shadow.c) ---- */
/* A buffer, from the pool when a fitting big one is there; zeroed when
 * zero is set (else a reused one holds old bytes). */
void *sh_pool_take(sh_pool *pl, size_t bytes, bool zero);
/* Gives a buffer back (big ones to the pool, small ones to free). */
void sh_pool_give(sh_pool *pl, void *p, size_t bytes);
/* A tensor of an already admitted shape whose data comes from the pool,
 * not zeroed (its users write every element); sh_pool_drop frees it (any
 * tensor), its data back to the pool. */
tr_tensor *sh_pool_tensor(sh_ctx *c, tr_dtype dt, int rank, const int64_t *dims);
void sh_pool_drop(sh_ctx *c, tr_tensor *t);

/* ---- values (shadow.c) ---- */
sh_val *sh_arr_new(sh_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims);
/* The same without zeroing reused buffers: for rules that write every
 * element's value, bound and mark. */
sh_val *sh_arr_new_raw(sh_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims);
sh_val *sh_tuple(int n, sh_val *const *elems); /* takes the refs */
sh_val *sh_ref(sh_val *v);
void sh_unref(sh_val *v);
bool sh_is_flt(const sh_val *a);
/* Gives a lazy value its planes (a no-op for others). */
void sh_materialize(sh_ctx *c, sh_val *v);
/* A fresh float array value with v's values, bounds, marks and bits (v
 * materialized), for a rule to change elements of; NULL after a located
 * error. */
sh_val *sh_dup_flt(sh_ctx *c, const tr_instr *in, const sh_val *v);
/* v as an op of a flushing target reads it (tr_shadow_opts.flush): its
 * denormals of flushed dtypes zeros of their sign, or v itself (one more
 * reference) when nothing changes; NULL after a located error. For rules
 * that compare without calling their computation (sort's keys). */
sh_val *sh_flush_read(sh_ctx *c, const tr_instr *in, sh_val *v);
/* Rounds a long double bound up to a double, so a stored bound never
 * shrinks. */
double sh_up(long double x);
/* Flushing targets (shadow_flush.c). Whether in computes on its operands'
 * values, so that a flushing target flushes what it reads and makes. */
bool sh_flushes(const tr_instr *in);
/* in on a flushing target: its operands flushed, rule run, its partial
 * sums' flushes added to the bound, its result flushed. */
tr_status sh_instr_flushed(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out,
                           tr_status (*rule)(sh_ctx *, const tr_instr *, sh_val **, sh_val **));
/* in's result r on a flush-results target: r itself (one more reference)
 * or a new value whose possibly flushed elements reach 0; NULL after a
 * located error. */
sh_val *sh_flush_result(sh_ctx *c, const tr_instr *in, sh_val *r);
/* The values of a float tensor as doubles, on both cores where large. */
void sh_load_doubles(const tr_tensor *t, double *d);
/* A new tensor of a's values in its dtype (floats rounded to nearest). */
tr_tensor *sh_round_tensor(sh_ctx *c, const tr_instr *in, const sh_val *a);
/* Whether any element of a is uncertain, or (floats) has a bound. */
bool sh_any_uncertain(const sh_val *a);
bool sh_is_exact(const sh_val *a);
/* Evaluates computation k in shadow mode. */
tr_status sh_call(sh_ctx *c, const tr_instr *caller, const tr_comp *k, sh_val *const *params,
                  int np, sh_val **out);
/* Conservative: the exact kernel on rounded operands, every float result
 * uncertain; integer results (and bitcasts' floats) certain only when
 * every operand is exact and certain and the op leaves no choice. */
tr_status sh_fallback(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
/* A copy of in that computes in f64 with its to_apply replaced by comp
 * (an exact twin run by the exact evaluator): fills *twin and *ts and
 * returns the attribute array it points to, the caller's to tr_free. */
tr_attr *sh_f64_twin(const tr_instr *in, const tr_comp *comp, tr_instr *twin, tr_shape *ts);
/* A scalar holding element i of a (same dtype). */
sh_val *sh_scalar_at(sh_ctx *c, const tr_instr *in, const sh_val *a, size_t i);

/* Sets the marks of every array leaf of v whose element kind is k (or of
 * every leaf when all), and clears float bounds when certain. */
void sh_mark_leaves(sh_val *v, bool all, tr_dkind k, unsigned char u);

/* ---- NaN bit patterns (shadow_bits.c) ---- */
/* Keeps t's patterns in v->bits when t (v's values) holds a NaN. */
void sh_bits_capture(sh_val *v, const tr_tensor *t);
/* Writes a's known NaN patterns into t (a rounded to its dtype). */
void sh_bits_apply(const sh_val *a, tr_tensor *t);
/* Whether a holds a NaN whose pattern is not known. */
bool sh_bits_unknown(const sh_val *a);
/* After a move (or gather: idx set) made out from ops (nd data operands
 * of nops): moves the operands' patterns alike when any has some. */
tr_status sh_bits_move(sh_ctx *c, const tr_instr *in, sh_val **ops, int nops, int nd,
                       const tr_tensor *idx, sh_val *out);

/* ---- excess precision (shadow_excess.c) ---- */
/* in's result r (not NULL) under tr_shadow_opts.excess: r itself (one more
 * reference) unless an element of a listed dtype overflowed in in from
 * finite operands, then a copy with those elements uncertain; NULL after
 * a located error. */
sh_val *sh_excess_mark(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *r);
/* in's result r under tr_shadow_opts.fma: r itself, or a copy whose
 * product elements that overflowed from finite operands, where in feeds
 * an add or subtract, are uncertain; NULL after a located error. */
sh_val *sh_fma_mark(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *r);

/* ---- fft (shadow_fft.c) ---- */
tr_status sh_fft(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);

/* ---- complex (shadow_complex.c) ---- */
/* Whether in is complex arithmetic: an elementwise op, compare, convert,
 * dot or convolution with a complex operand or result, or real, imag,
 * complex. */
bool sh_is_complex_arith(const tr_instr *in);
tr_status sh_complex(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
/* After a reduce-style op's own rule, where complex values are involved:
 * adjusts out's complex bounds and marks. */
tr_status sh_complex_combined(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val *out);

/* ---- elementwise (shadow_elem.c) ---- */
tr_status sh_unary(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out);
tr_status sh_binary(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out);
tr_status sh_compare(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out);
tr_status sh_select(sh_ctx *c, const tr_instr *in, const sh_val *p, const sh_val *x, const sh_val *y,
                    sh_val **out);
tr_status sh_clamp(sh_ctx *c, const tr_instr *in, const sh_val *lo, const sh_val *x, const sh_val *hi,
                   sh_val **out);
tr_status sh_convert(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out);
tr_status sh_reduce_precision(sh_ctx *c, const tr_instr *in, const sh_val *x, sh_val **out);
tr_status sh_iota(sh_ctx *c, const tr_instr *in, sh_val **out);
tr_status sh_from_tensor(sh_ctx *c, const tr_instr *in, const tr_tensor *t, bool certain,
                         sh_val **out);

/* ---- data movement (shadow_move.c) ---- */
tr_status sh_move(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_gather(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);

/* ---- sort, topk (shadow_sort.c) ---- */
tr_status sh_sort(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_topk(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);

/* ---- sums and contractions (shadow_lin.c) ---- */
tr_status sh_reduce(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_scatter(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_select_and_scatter(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_reduce_window(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_dot_conv(sh_ctx *c, const tr_instr *in, const sh_val *x, const sh_val *y, sh_val **out);

/* ---- triangular-solve, cholesky (shadow_linalg.c) ---- */
tr_status sh_triangular_solve(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);
tr_status sh_cholesky(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out);

#endif
