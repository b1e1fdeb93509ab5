/* emitint.h - the C emitter's private state and shared helpers. The
 * emitter is split by kind of kernel: emit.c (the driver: element values,
 * lane loops, loop fusion, computations, the entry), emit_move.c (data
 * movement, cholesky and triangular-solve, bit-level ops, gather),
 * emit_dot.c (reductions, dot, convolution), emit_call.c (ops that
 * call a scalar computation per element) and emit_rng.c
 * (rng-bit-generator). */
#ifndef TR_COMP_EMITINT_H
#define TR_COMP_EMITINT_H

#include "emit.h"

#include <ctype.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* ---- emitter state ---- */

typedef struct {
  int n;                  /* array leaves */
  char **leaf;            /* C expressions of type u8 * (heap) */
  const tr_shape **shape; /* each leaf's shape */
} leaves;

typedef struct {
  const tr_module *m;
  const tr_emit_opts *o;
  tr_diag *d;
  tr_buf kern;      /* constants and kernels */
  tr_buf cur;       /* the kernel being generated, named kK/eK */
  char **ktext;     /* kernels emitted so far, as generated (dedup) */
  int *kid;         /* the id each one was emitted under */
  int nk, capk;
  int nb, nw;       /* buffers b[] and while scratch w[] of the
                       computation being emitted */
  bool unpacked;    /* the kernel being generated sees s4/u4 one per
                       byte (unpacked around its call): LU_ loads */
  bool mm_done[2];  /* tr_mm_f / tr_mm_d emitted (emit_mm) */
  tr_buf funcs;     /* computation functions, callees first */
  leaves *lv;       /* by instruction id */
  bool *done;       /* by computation id: function emitted */
  int nids;         /* m->next_id */
} em;

/* ---- small helpers ---- */

static inline bool is_flt(tr_dtype t) { return tr_dtype_is_float(t); }

static inline bool is_sg(tr_dtype t) { return tr_dtypes[t].kind == TR_DK_SINT; }

static inline int bits_of(tr_dtype t) { return tr_dtypes[t].bits; }

static inline int es_of(tr_dtype t) { return tr_dtype_size(t); }

static inline const char *vt(tr_dtype t) { return is_flt(t) ? "double" : "u64"; }

/* The type of a local element value in elementwise code: f32 values are
 * held in f32v, float (double under libtcc, which would only add
 * conversions), so + - * / compile to float arithmetic that GCC
 * vectorizes. Exact: every f32 value fits a float, and for + - * / sqrt
 * the float op equals the double op rounded to float (53 >= 2 * 24 + 2),
 * the reference's way; every other op's expression converts its float
 * operands to double or long double first (em_elem_value). */
static inline const char *lvt(tr_dtype t) { return t == TR_DT_F32 ? "f32v" : vt(t); }

static inline uint64_t mask_of(int bits) { return bits >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << bits) - 1; }

/* s4/u4: packed two per byte in every buffer of the unit (tr_pack4). */
static inline bool is4(tr_dtype t) { return bits_of(t) == 4 && !is_flt(t); }

/* Element size for the prelude's tr_cp family: 0 means a packed nibble. */
static inline int esp_of(tr_dtype t) { return is4(t) ? 0 : es_of(t); }

static inline int64_t count_of(const tr_shape *s) {
  int64_t n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i];
  return n;
}

/* Bytes of a buffer of shape s inside the unit (s4/u4 packed). */
static inline int64_t bytes_of(const tr_shape *s) {
  return is4(s->dtype) ? (count_of(s) + 1) / 2 : count_of(s) * es_of(s->dtype);
}

static inline void strides(const tr_shape *s, int64_t *st) {
  int64_t k = 1;
  for (int i = s->rank - 1; i >= 0; i--) {
    st[i] = k;
    k *= s->dims[i];
  }
}

/* The load helper's prefix for type t in the kernel being generated. */
static inline const char *ld_of(const em *e, tr_dtype t) { return e->unpacked && is4(t) ? "LU" : "LD"; }

/* Rounds (floats) or canonicalizes (ints) a value expression to t. */
static inline void round_to(tr_buf *b, tr_dtype t, const char *x) {
  tr_buf_printf(b, "%s_%s(%s)", is_flt(t) ? "RD" : "CN", tr_dtype_name(t), x);
}

/* ---- emit.c ---- */

tr_status em_unsup(em *e, const tr_instr *in, const char *why);
bool em_elem_op(tr_op op);
void em_convert_value(tr_buf *x, tr_dtype st, tr_dtype dt, const char *a, uint64_t inj);
bool em_elem_value(const tr_instr *in, const char *const *a, tr_buf *x, uint64_t inj);
void em_kern_head(em *e, int nargs);
/* A window attribute's per-dim size, stride, low padding, lhs and rhs
 * dilation, as the window kernels take them; true when some size is <= 0
 * (an empty window). */
bool em_window_arrays(const tr_attr *wa, int rank, int64_t *wsize, int64_t *stride, int64_t *padlo,
                      int64_t *ld, int64_t *rd);
void em_lane_loop(em *e, int nargs, bool indep);
void em_elem_head(em *e, int nargs);
tr_status em_fused_values(em *e, const tr_comp *c, const tr_shape *rs, const tr_instr *skip);
tr_status emit_comp(em *e, const tr_comp *c);

/* ---- emit_move.c ---- */

void emit_i64s(tr_buf *b, const char *name, const int64_t *v, int n);
tr_status k_move(em *e, const tr_instr *in);
tr_status k_pad(em *e, const tr_instr *in);
tr_status k_concat(em *e, const tr_instr *in);
tr_status k_iota(em *e, const tr_instr *in);
tr_status k_dynamic(em *e, const tr_instr *in);
tr_status k_cholesky(em *e, const tr_instr *in);
tr_status k_triangular_solve(em *e, const tr_instr *in);
tr_status k_reduce_precision(em *e, const tr_instr *in);
tr_status k_bitcast_convert(em *e, const tr_instr *in);
tr_status k_gather(em *e, const tr_instr *in);

/* ---- emit_dot.c ---- */

/* A reduce's operand dims split by its dimensions attribute: the kept ones
 * (sizes kd, strides ks in the operand) and the reduced ones (rd, rs), in
 * order; nout and nred are their element counts. */
typedef struct {
  int64_t kd[64], ks[64], rd[64], rs[64];
  int nk, nr;
  int64_t nout, nred;
} em_rsplit;

void em_reduce_split(const tr_instr *in, const tr_shape *xs, em_rsplit *s);

const tr_instr *em_simple_binary(const tr_comp *c, tr_dtype dt);
bool em_simple_reduce(const tr_instr *in);
tr_status k_reduce_in(em *e, const tr_instr *in, const tr_comp *fc);
tr_status k_reduce_window(em *e, const tr_instr *in);
tr_status k_convolution(em *e, const tr_instr *in);
void emit_mm(em *e, bool dbl);
tr_status k_dot(em *e, const tr_instr *in);

/* ---- emit_call.c ---- */

tr_status k_reduce(em *e, const tr_instr *in);
tr_status k_reduce_generic(em *e, const tr_instr *in);
tr_status k_map(em *e, const tr_instr *in);
tr_status k_scatter(em *e, const tr_instr *in);
tr_status k_sort(em *e, const tr_instr *in);
tr_status k_topk(em *e, const tr_instr *in);
tr_status k_reduce_window_generic(em *e, const tr_instr *in);
bool em_simple_reduce_window(const tr_instr *in);
tr_status k_select_and_scatter(em *e, const tr_instr *in);

/* ---- emit_rng.c ---- */

tr_status k_rng_bit_generator(em *e, const tr_instr *in);

#endif
