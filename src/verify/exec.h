/* exec.h - the executor's private state, shared by exec.c (the step
 * loop, memory, calls, CUDA blocks) and exec_merge.c (branches on data
 * merged into ites). Not part of the verify interface (vk.h). */
#ifndef TR_VERIFY_EXEC_H
#define TR_VERIFY_EXEC_H

#include "vkint.h"

/* SV_FBITS: an integer holding the bit pattern of float data (e) of the
 * float type buf - 1 (f32, f64, or a narrow format such as bf16), as code
 * that moves floats through integer copies makes; it may be widened,
 * narrowed back to the format's width, masked to it, stored, decoded and
 * reinterpreted as a float, nothing else. A float cell stored from one
 * keeps its format in buf. */
/* SV_PACK: several whole cells moved as one wider integer (a memcpy of
 * two floats becomes one 8-byte load and store); i indexes the run's
 * packs. It may only be stored back. */
/* SV_BV: integer data, a bitvector vx of the value's width. */
enum { SV_NONE, SV_INT, SV_PTR, SV_F, SV_B, SV_FBITS, SV_PACK, SV_BV };
typedef struct {
  uint8_t k;
  uint8_t sz;     /* bytes when in memory */
  int32_t buf;    /* SV_PTR: buffer, -1 null */
  int64_t i;      /* SV_INT value (sign-extended), SV_PTR offset */
  vx *e;          /* SV_F, SV_B */
} sval;

typedef struct {
  int64_t bytes;
  sval *cell;           /* per byte offset */
  int param;            /* parameter index or -1 */
  bool shared, is_out, local;
  int32_t *w_thr, *w_ep, *r_thr, *r_ep; /* race tracking per byte (thread+1, epoch) */
  uint8_t *r_multi;
} mbuf;

typedef struct { int fn, blk, prev, pc, ret_slot; sval *slots; } frame;
enum { T_RUN, T_BARRIER, T_SHFL, T_DONE };
typedef struct {
  frame *fr;
  int nfr, capfr;
  int state;
  unsigned tid[3];
  int lin;              /* linear thread index in the block */
  vx *shfl_val;         /* at a shuffle: this lane's value */
  int shfl_kind;
  int64_t shfl_arg;
  int shfl_slot;
} thread;

typedef struct {
  const vk_kernel *k;
  vx_ctx *cx;
  const vk_run_cfg *cfg;
  vk_result *r;
  tr_diag *d;
  mbuf *bufs;
  int nbufs, capbufs;
  int *gbuf;            /* global index -> buffer (shared: this block's) */
  unsigned bid[3];
  int blin;             /* linear block index */
  int epoch;            /* barrier intervals passed in this block */
  int64_t steps, max_steps;
  int idec;
  int ndiv;             /* undefined results (divisions, conversions) so far: each is a symbol */
  bool failed;
  int nthreads;         /* per block */
  struct pack { int n; int64_t at[16]; sval part[16]; } *packs;
  int npacks;
} run;

static inline int64_t sext(int64_t v, int bits) {
  if (bits <= 0 || bits >= 64) return v;
  uint64_t u = (uint64_t)v << (64 - bits);
  return (int64_t)u >> (64 - bits);
}
static inline uint64_t zext(int64_t v, int bits) {
  if (bits <= 0 || bits >= 64) return (uint64_t)v;
  return (uint64_t)v & ((UINT64_C(1) << bits) - 1);
}

static inline sval sv_int(int64_t v, int bits) { sval s = {SV_INT, 0, 0, sext(v, bits), NULL}; return s; }
static inline sval sv_f(vx *e) { sval s = {SV_F, 0, 0, 0, e}; return s; }
/* Integer data; a constant result is a plain integer again. */
static inline sval sv_bv(vx *e) {
  if (e->kind == VX_BVC) return sv_int(e->a, e->w);
  sval s = {SV_BV, 0, 0, 0, e};
  return s;
}
static inline sval sv_b(vx *e) {
  if (e->kind == VX_CONST) return sv_int(e->c != 0, 1);
  sval s = {SV_B, 0, 0, 0, e};
  return s;
}

/* exec.c */
bool ex_fail(run *R, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
sval ex_oper(run *R, thread *T, const voper *o);
vx *ex_as_f(run *R, sval s);
vx *ex_as_bv(run *R, sval s, int w);
bool ex_pure_inst(run *R, thread *T, const vinst *I, sval *out);

/* exec_merge.c */
bool ex_merge_branch(run *R, thread *T, const vinst *I, sval cv);

#endif
