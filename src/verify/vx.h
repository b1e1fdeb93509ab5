/* vx.h - the symbolic value domain of trench verify: a hash-consed DAG of
 * real-valued expressions over input symbols, kept in a normal form
 * (constants folded, commutative operands ordered, sums and products
 * flattened with like terms combined) so that two computations equal over
 * the reals by reassociation and reordering get the same node. Both sides
 * of a verification build into one vx_ctx: the kernel's executor
 * (exec.c) and the reference's symbolic evaluator (ref.c). The node set
 * is the interface a symbolic domain of the reference interpreter would
 * offer (docs/VERIFY.md). */
#ifndef TR_VX_H
#define TR_VX_H

#include "../base/base.h"

typedef enum {
  VX_CONST,  /* c */
  VX_SYM,    /* input a, element b */
  VX_UNDEF,  /* memory never written: buffer a, byte offset b (arbitrary, fixed) */
  VX_ADD,    /* n-ary sum */
  VX_MUL,    /* n-ary product */
  VX_INV,    /* 1 / k[0] */
  VX_MAX,    /* n-ary */
  VX_MIN,    /* n-ary */
  VX_FN,     /* uninterpreted unary function a (vx_fn) of k[0] */
  VX_ITE,    /* k[0] ? k[1] : k[2] */
  VX_LT,     /* k[0] < k[1] (boolean) */
  VX_LE,     /* k[0] <= k[1] */
  VX_EQ,     /* k[0] == k[1] */
  VX_NOT,    /* !k[0] */
  VX_AND,    /* n-ary */
  VX_OR,     /* n-ary */
  VX_FLOOR,  /* floor(k[0]) over the reals (rounding of data) */
  VX_BVC,    /* bitvector constant: bits a (zero-extended) of width w */
  VX_BV      /* bitvector operation a (vx_bvop) on k[]: width w, or a
                boolean (predicates) or a real (conversions) with w 0 */
} vx_kind;

/* Integer data: bitvectors of the element type's width, with the machine's
 * wrap-around. Shifts by the width or more give 0 (all sign bits for
 * ASHR), as XLA's shifts and Z3's bvshl. Divisions are Z3's total ones:
 * x udiv 0 = all ones, x urem 0 = x, x sdiv 0 = (x < 0 ? 1 : -1),
 * x srem 0 = x, MIN sdiv -1 = MIN, MIN srem -1 = 0; whoever has other
 * semantics (XLA's divide, C's undefined division) says so with an ite. */
typedef enum {
  BV_ADD, BV_SUB, BV_MUL, BV_AND, BV_OR, BV_XOR, BV_SHL, BV_LSHR, BV_ASHR,
  BV_UDIV, BV_SDIV, BV_UREM, BV_SREM,
  BV_ZEXT, BV_SEXT, BV_TRUNC,        /* k[0] to width w */
  BV_EQ, BV_ULT, BV_ULE, BV_SLT, BV_SLE, /* booleans */
  BV_SREAL, BV_UREAL,                /* the value as a real, signed or not */
  BV_FROMREAL                        /* a real k[0] truncated toward zero,
                                        modulo 2^w (w given) */
} vx_bvop;

/* Functions the solver treats as uninterpreted (shared by both sides). */
#define VX_FNS(X) X(EXP, "exp", exp) X(LOG, "log", log) X(SQRT, "sqrt", sqrt) \
  X(TANH, "tanh", tanh) X(SIN, "sin", sin) X(COS, "cos", cos) X(ERF, "erf", erf) \
  X(LOG1P, "log1p", log1p) X(EXPM1, "expm1", expm1)
typedef enum {
#define X(E, s, f) VX_FN_##E,
  VX_FNS(X)
#undef X
  VX_FN_COUNT
} vx_fn;
extern const char *const vx_fn_names[VX_FN_COUNT];

typedef struct vx vx;
struct vx {
  vx_kind kind;
  int n;          /* operands */
  uint32_t id;    /* creation order: the canonical operand order */
  uint32_t hash;
  int w;          /* bitvector width; 0 for reals and booleans */
  double c;       /* VX_CONST */
  int64_t a, b;   /* VX_SYM, VX_UNDEF, VX_FN */
  vx **k;         /* operands */
  vx *next;       /* hash chain */
};

typedef struct vx_ctx vx_ctx;
vx_ctx *vx_ctx_new(void);
void vx_ctx_free(vx_ctx *c);
size_t vx_ctx_nodes(const vx_ctx *c);

vx *vx_const(vx_ctx *c, double v);
vx *vx_sym(vx_ctx *c, int64_t input, int64_t index);
vx *vx_undef(vx_ctx *c, int64_t buf, int64_t off);
vx *vx_add(vx_ctx *c, vx *a, vx *b);
vx *vx_sub(vx_ctx *c, vx *a, vx *b);
vx *vx_mul(vx_ctx *c, vx *a, vx *b);
vx *vx_neg(vx_ctx *c, vx *a);
vx *vx_div(vx_ctx *c, vx *a, vx *b);
vx *vx_inv(vx_ctx *c, vx *a);
vx *vx_max(vx_ctx *c, vx *a, vx *b);
vx *vx_min(vx_ctx *c, vx *a, vx *b);
vx *vx_abs(vx_ctx *c, vx *a);
vx *vx_fn1(vx_ctx *c, vx_fn f, vx *a);
vx *vx_ite(vx_ctx *c, vx *cond, vx *a, vx *b);
vx *vx_lt(vx_ctx *c, vx *a, vx *b);
vx *vx_le(vx_ctx *c, vx *a, vx *b);
vx *vx_eq(vx_ctx *c, vx *a, vx *b);
vx *vx_not(vx_ctx *c, vx *a);
vx *vx_and(vx_ctx *c, vx *a, vx *b);
vx *vx_or(vx_ctx *c, vx *a, vx *b);
/* Rounding of reals to integers (results are reals): floor, ceil, toward
 * zero, half away from zero (C's round), half to even (rint, XLA's
 * round-nearest-even). */
vx *vx_floor(vx_ctx *c, vx *a);
vx *vx_ceil(vx_ctx *c, vx *a);
vx *vx_trunc(vx_ctx *c, vx *a);
vx *vx_round_afz(vx_ctx *c, vx *a);
vx *vx_round_even(vx_ctx *c, vx *a);
/* Bitvectors (w > 0): constants, input symbols, never-written memory,
 * operations (b NULL for the unary ones; predicates and conversions to
 * reals give w 0). vx_ite of two bitvectors is one. */
vx *vx_bvconst(vx_ctx *c, uint64_t v, int w);
vx *vx_bvsym(vx_ctx *c, int64_t input, int64_t index, int w);
vx *vx_bvundef(vx_ctx *c, int64_t buf, int64_t off, int w);
vx *vx_bv(vx_ctx *c, vx_bvop op, int w, vx *a, vx *b);
static inline bool vx_is_bv(const vx *e) { return e->w > 0; }
static inline uint64_t vx_bvmask(int w) { return w >= 64 ? ~(uint64_t)0 : ((uint64_t)1 << w) - 1; }
/* The signed value of a bitvector constant. */
int64_t vx_bvsigned(const vx *e);
/* The sum of n terms in one normalisation (repeated vx_add is quadratic). */
vx *vx_sum(vx_ctx *c, vx **ops, int n);
static inline bool vx_is_const(const vx *e) { return e->kind == VX_CONST; }
static inline bool vx_is_bool(const vx *e) {
  return (e->kind >= VX_LT && e->kind <= VX_OR) || (e->kind == VX_BV && e->a >= BV_EQ && e->a <= BV_SLE);
}
/* Appends a readable form (depth-limited). */
void vx_print(tr_buf *b, const vx *e, int depth);
/* Every node reachable from e whose kind is kind (FN: also of function f
 * when f >= 0), each once; returns how many were written (at most max). */
int vx_collect(const vx *e, vx_kind kind, int f, vx **out, int max);

#endif
