/* evalint.h - what the evaluator's files share: the evaluation context,
 * located errors, limits, element loads and stores in canonical form, the
 * elementwise kernel table (kernels.def) and the
 * per-op kernels (elementwise in eval_elem.c, data movement in
 * eval_move.c, dot in eval_dot.c). Not a public interface. */
#ifndef TR_EVALINT_H
#define TR_EVALINT_H

#include "eval.h"

/* Per-computation facts, built on first use. */
typedef struct {
  unsigned char *live; /* instruction i feeds the root */
  int *lastuse;        /* position of the last live user; ninstrs = never */
} ev_compinfo;

typedef struct {
  const tr_module *m;   /* module being evaluated */
  tr_diag *d;           /* where errors go */
  tr_eval_opts opts;    /* limits */
  int depth;            /* computation nesting, guards against recursion */
  int nids;             /* size of pos and info */
  int *pos;             /* instruction id -> position in its computation */
  ev_compinfo *info;    /* computation id -> facts (live == NULL: not yet) */
  bool fused;           /* f32/f64 dot and convolution sums in any order and
                           rounding (the shadow's value and bound runs) */
  int64_t max_trips;    /* while trip limit; 0 = none */
  double deadline;      /* monotonic time the evaluation must end by; 0 = none */
  unsigned ticks;       /* instructions since the clock was last read */
  const tr_instr *at;   /* the entry instruction being evaluated: named
                           when memory runs out (ev_oom) */
} ev_ctx;

/* ---- limits (core.c) ---- */
/* Sets up the limits of c from c->opts (at the start of an evaluation). */
void ev_limits_start(ev_ctx *c);
/* Called before each instruction: TR_OK, or a located error once the
 * deadline has passed (the clock is read every few hundred calls). */
tr_status ev_tick(ev_ctx *c, const tr_instr *in);
/* Called before each trip after the first `trips` of while loop in: a
 * located error past the trip limit. */
tr_status ev_trip(ev_ctx *c, const tr_instr *in, int64_t trips);

/* The instruction's opcode as written (async sugar keeps its spelling). */
const char *ev_opname(const tr_instr *in);
/* Adds "file:line:col: error: in %name: msg" and returns code. */
tr_status ev_err(ev_ctx *c, const tr_instr *in, tr_status code, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* The verdict of an evaluation whose heap frame ran out of memory
 * (tr_heap_run) on a request of `bytes`: "file:line:col: error: out of
 * memory evaluating %name (N bytes)" at c->at; TR_ERR_UNSUPPORTED (declined,
 * not a finding). */
tr_status ev_oom(ev_ctx *c, size_t bytes);

/* A zero-filled result tensor of the array shape s; NULL after a located
 * error when it is too big. */
tr_tensor *ev_new(ev_ctx *c, const tr_instr *in, tr_dtype dt, int rank,
                  const int64_t *dims);

/* A copy of t; NULL after a located error when memory runs out
 * (budget.c). */
tr_tensor *ev_clone(ev_ctx *c, const tr_instr *in, const tr_tensor *t);
/* k scratch arrays of a kernel, s[i] of n[i] elements of es[i] bytes: all
 * of them, or none (false) after a located "out of memory" error at in
 * (budget.c). The caller frees each. */
bool ev_scratch(ev_ctx *c, const tr_instr *in, int k, const size_t *n, const size_t *es, void **s);

/* Canonical forms: integers and pred as uint64 holding the value sign- or
 * zero-extended from the element type (pred 0/1), floats as the exact
 * double. Stores truncate integers to the type's width and round floats to
 * nearest even, once. */
void ev_load_ints(const tr_tensor *t, uint64_t *v);
void ev_load_flts(const tr_tensor *t, double *v);
void ev_store_ints(tr_tensor *t, const uint64_t *v);
void ev_store_flts(tr_tensor *t, const double *v);
/* Truncates kernel results back to canonical form (wrapping to dt). */
void ev_canon_ints(tr_dtype dt, uint64_t *v, size_t n);
/* Rounds each v[i] to dt's precision in place (keeps the double form). */
void ev_round_flts(tr_dtype dt, double *v, size_t n);
int64_t ev_sext(tr_dtype dt, uint64_t v); /* low bits of v as a signed dt value */

/* ---- calling computations (eval.c, on the core) ---- */
/* Evaluates computation k on params in exact mode; *out gets a new
 * reference. */
tr_status ev_call(ev_ctx *c, const tr_instr *caller, const tr_comp *k, tr_value *const *params,
                  int np, tr_value **out);
/* A new scalar value: element i of t converted to dt. NULL after an error. */
tr_value *ev_scalar_at(ev_ctx *c, const tr_instr *in, const tr_tensor *t, size_t i, tr_dtype dt);
/* Whether k's root is op(param, param) on scalars of type dt (a reducer
 * the binary kernels can run over whole arrays); *swap: op(p1, p0). */
bool ev_simple_binary(const tr_comp *k, tr_dtype dt, tr_op *op, bool *swap);
/* A value of shape s with every array zero (tokens, tuples nested); NULL
 * after a located error. */
tr_value *ev_zero_value(ev_ctx *c, const tr_instr *in, const tr_shape *s);
/* v's array, or NULL after a located error. */
tr_tensor *ev_want_tensor(ev_ctx *c, const tr_instr *in, tr_value *v, int i);

/* ---- hooks for shadow mode (eval.c; ev_comp_info: core.c) ---- */
/* Liveness and last uses of k's instructions (built on first use). */
ev_compinfo *ev_comp_info(ev_ctx *c, const tr_instr *caller, const tr_comp *k);
/* One instruction in exact mode, on exact operand values. */
tr_status ev_eval_instr(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out);
/* The shape, support and dtype checks eval_instr starts with. */
tr_status ev_check_instr(ev_ctx *c, const tr_instr *in);

/* ---- elementwise (eval_elem.c) ---- */
/* The scalar kernels of one elementwise op (a kernels.def row): array
 * loops per type family, NULL where the op has none; unrounded float
 * results (the store rounds), integer results truncated by the store. */
typedef void ev_flt1(const double *a, double *r, size_t n);
typedef void ev_flt2(const double *a, const double *b, double *r, size_t n);
typedef void ev_int1(tr_dtype dt, const uint64_t *a, uint64_t *r, size_t n);
typedef void ev_int2(tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r, size_t n);
typedef struct {
  bool row;          /* the op has a kernels.def row */
  int arity;         /* 1 (K1) or 2 (K2) */
  ev_flt1 *flt1;
  ev_int1 *int1;
  ev_flt2 *flt2;
  ev_int2 *int2;
  const char *shadow; /* unary: the name of shadow mode's value function ("0": none) */
  const char *srule;  /* unary: the name of its shadow bound rule */
  const char *c;     /* the emitter's float spelling ($0, $1, $f), or NULL */
  const char *c_int; /* its integer spelling ($0, $1, $b, $m, $s, $n, $i), or NULL */
  const char *c_pred; /* its pred spelling where it differs from c_int, or NULL */
  double cost;       /* scalar operations per element */
  float ulps[3];     /* default allowance: f64, f32, narrower types */
} ev_kernel;
extern const ev_kernel ev_kernels[TR_OP_COUNT];
/* Checks the op table against the kernel table: every op of a kernel
 * class (ops.def UFLOAT, UNUM, UINT, BARITH, BBIT) has a row of its arity
 * with a kernel for each type family its types column accepts (unary
 * float ops a shadow value function too), is
 * evaluated (x), has a float spelling where the emitter takes it (e) and
 * floats are accepted; every row belongs to such an op. false with the
 * first problem in *why. */
bool ev_kernels_complete(const tr_op_info *ops, const ev_kernel *kern, tr_buf *why);
/* Kernels on canonical arrays of n elements of type dt; r may alias
 * operands. Unrounded float results; the store rounds. */
void ev_int_binary(tr_op op, tr_dtype dt, const uint64_t *a, const uint64_t *b, uint64_t *r,
                   size_t n);
void ev_flt_binary(tr_op op, tr_dtype dt, const double *a, const double *b, double *r,
                   size_t n);
tr_status ev_unary(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out);
tr_status ev_binary(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                    tr_tensor **out);
tr_status ev_compare(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                     tr_tensor **out);
/* A compare instruction's direction and TOTALORDER flag, and whether a
 * three-way result c3 (-1, 0, 1) satisfies the direction. */
typedef enum { EV_CMP_EQ, EV_CMP_NE, EV_CMP_LT, EV_CMP_LE, EV_CMP_GT, EV_CMP_GE } ev_cmpdir;
ev_cmpdir ev_cmp_attrs(const tr_instr *in, bool *total);
static inline bool ev_cmp_ok(ev_cmpdir d, int c3) {
  switch (d) {
  case EV_CMP_EQ: return c3 == 0;
  case EV_CMP_NE: return c3 != 0;
  case EV_CMP_LT: return c3 < 0;
  case EV_CMP_LE: return c3 <= 0;
  case EV_CMP_GT: return c3 > 0;
  default: return c3 >= 0;
  }
}
/* One element compare with the semantics of compare instruction cmp;
 * a and b point at element slots of type dt. */
bool ev_compare_slots(const tr_instr *cmp, tr_dtype dt, const void *a, const void *b);
/* -1, 0 or 1: TOTALORDER for floats, signed or unsigned order for ints. */
int ev_total_cmp(tr_dtype dt, const void *a, const void *b);
tr_status ev_select(ev_ctx *c, const tr_instr *in, const tr_tensor *p, const tr_tensor *x,
                    const tr_tensor *y, tr_tensor **out);
tr_status ev_clamp(ev_ctx *c, const tr_instr *in, const tr_tensor *lo, const tr_tensor *x,
                   const tr_tensor *hi, tr_tensor **out);
/* Converts x to dtype dt with XLA's convert rules into a new tensor. */
tr_tensor *ev_convert_to(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_dtype dt);
tr_status ev_reduce_precision(ev_ctx *c, const tr_instr *in, const tr_tensor *x,
                              tr_tensor **out);
tr_status ev_iota(ev_ctx *c, const tr_instr *in, tr_tensor **out);
tr_status ev_bitcast(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out);

/* ---- data movement (eval_move.c) ---- */
void ev_strides(const int64_t *dims, int rank, int64_t *st);
/* Copies the box dims[0..rank): the element at multi-index i goes from
 * src[sbase + sum i_k*ss_k] to dst[dbase + sum i_k*ds_k] (in elements of es
 * bytes). */
void ev_copy_box(void *dst, int64_t dbase, const int64_t *ds, const void *src, int64_t sbase,
                 const int64_t *ss, const int64_t *dims, int rank, size_t es);
tr_status ev_move(ev_ctx *c, const tr_instr *in, tr_tensor *const *ops, int nops,
                  tr_tensor **out);

/* ---- gather, scatter (eval_gather.c) ---- */
tr_status ev_gather(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *idx,
                    tr_tensor **out);
tr_status ev_scatter(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out);

/* ---- sort (eval_sort.c) ---- */
tr_status ev_sort(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out);
tr_status ev_topk(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_value **out);

/* ---- windows (eval_window.c) ---- */
tr_status ev_reduce_window(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out);
tr_status ev_select_and_scatter(ev_ctx *c, const tr_instr *in, const tr_tensor *x,
                                const tr_tensor *src, const tr_tensor *init, tr_tensor **out);

/* ---- convolution (eval_conv.c) ---- */
tr_status ev_convolution(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                         tr_tensor **out);

/* ---- rng-bit-generator (eval_rng.c) ---- */
tr_status ev_rng_bit_generator(ev_ctx *c, const tr_instr *in, const tr_tensor *state,
                               tr_value **out);

/* ---- linear algebra (eval_linalg.c) ---- */
tr_status ev_cholesky(ev_ctx *c, const tr_instr *in, const tr_tensor *a, tr_tensor **out);

/* ---- fft (eval_fft.c) ---- */
#define EV_FFT_MAX_RANK 3
enum { EV_FFT_FFT, EV_FFT_IFFT, EV_FFT_RFFT, EV_FFT_IRFFT };
typedef struct {
  int type;                       /* EV_FFT_* */
  int r;                          /* transformed (innermost) axes */
  int64_t len[EV_FFT_MAX_RANK];   /* fft_length */
} ev_fft_spec;
/* Reads and checks in's fft_type and fft_length against operand shape x
 * and the result shape. */
tr_status ev_fft_spec_of(ev_ctx *c, const tr_instr *in, const tr_shape *x, ev_fft_spec *p);
tr_status ev_fft(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_tensor **out);
tr_status ev_triangular_solve(ev_ctx *c, const tr_instr *in, const tr_tensor *a,
                              const tr_tensor *b, tr_tensor **out);

/* ---- complex (eval_complex.c) ---- */
/* Whether a result or operand leaf of in is c64 or c128. */
bool ev_complex_involved(const tr_instr *in);
/* Whether some value of m (an instruction's shape, tuples included) is
 * complex: when none is, no instruction needs the complex checks. */
bool ev_module_complex(const tr_module *m);
/* Ops evaluated with complex operands or results. */
bool ev_complex_ok(tr_op op);
/* Elementwise unary and binary ops, compare (EQ, NE), real, imag and
 * complex on complex values (real, imag, complex also on real ones). */
tr_status ev_complex_elem(ev_ctx *c, const tr_instr *in, tr_tensor *const *t, tr_tensor **out);
/* convert to c64/c128 (from any number type); complex to real is an error. */
tr_tensor *ev_convert_complex(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_dtype dt);
/* The products of ev_dot's offset tables on complex x, y into r. */
void ev_complex_dot(const tr_tensor *x, const tr_tensor *y, tr_tensor *r, const int64_t *xb,
                    const int64_t *xm, const int64_t *kx, const int64_t *yb, const int64_t *ky,
                    const int64_t *yn, size_t nb, size_t m, size_t n, size_t nk);

/* acc (re, im) += x[i] * y[j], rounded as the dot (convolution's step). */
void ev_complex_mac(double *acc, const tr_tensor *x, size_t i, const tr_tensor *y, size_t j);

/* ---- dot (eval_dot.c) ---- */
tr_status ev_dot(ev_ctx *c, const tr_instr *in, const tr_tensor *x, const tr_tensor *y,
                 tr_tensor **out);

#endif
