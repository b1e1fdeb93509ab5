/* vkint.h - the decoded kernel shared by kernel.c (which builds it from
 * LLVM IR) and exec.c (which runs it). Instructions keep LLVM's opcode;
 * operands are slots, constants or globals, resolved once. */
#ifndef TR_VKINT_H
#define TR_VKINT_H

#include "vk.h"

#include <llvm-c/Core.h>

typedef enum {
  VO_NONE, VO_SLOT, VO_INT, VO_FLT, VO_NULL, VO_UNDEF, VO_GLOBAL, VO_CEXPR, VO_FUNC, VO_BLOCK
} vo_kind;

typedef struct vinst vinst;
typedef struct {
  vo_kind k;
  int idx;        /* slot, global, function, block */
  int64_t i;      /* VO_INT */
  double f;       /* VO_FLT */
  vinst *ce;      /* VO_CEXPR: a decoded constant expression */
} voper;

/* Value classes. */
typedef enum { VT_VOID, VT_INT, VT_F32, VT_F64, VT_PTR, VT_OTHER } vtype;

/* Calls the executor knows. */
typedef enum {
  VC_NONE, VC_USER, VC_NOP, VC_FMA, VC_MAXNUM, VC_MINNUM, VC_FABS, VC_FN, VC_POW,
  VC_MEMSET, VC_MEMCPY, VC_SMAX, VC_SMIN, VC_UMAX, VC_UMIN, VC_IABS,
  VC_TID, VC_CTAID, VC_NTID, VC_NCTAID, VC_BARRIER, VC_SHFL_DOWN, VC_SHFL_XOR,
  VC_SHFL_UP, VC_SHFL_IDX, VC_ATOM_ADD_F, VC_RSQRT, VC_TRAP, VC_MALLOC, VC_CALLOC,
  VC_COPYSIGN, VC_NF_FROM, VC_NF_TO,
  VC_ROUNDING        /* fn: 0 floor, 1 ceil, 2 trunc, 3 round (half away), 4 rint (half even) */
} vcall;

struct vinst {
  LLVMOpcode op;
  int slot;          /* result slot, -1 none */
  vtype ty;          /* result class */
  int bits;          /* VT_INT width */
  int nops;
  voper *ops;
  int pred;          /* icmp/fcmp predicate; atomicrmw binop */
  int64_t size;      /* load/store/alloca: bytes of the type; alloca: per element */
  vtype mty;         /* load/store/atomic: class of the memory value */
  int mbits;
  /* getelementptr: byte offset = off + sum ops[1+j] * scale[j] */
  int64_t off;
  int64_t *scale;    /* nops-1 entries (0 for struct indices folded into off) */
  /* phi: incoming block per operand */
  int *inblk;
  /* call */
  vcall call;
  int fn;            /* VC_USER: function index; VC_FN: vx_fn; tid/ctaid: dim */
  int srcbits;       /* casts: source int width */
  /* terminators */
  int succ[2];       /* br: [true, false] or [dest]; switch: default */
  int nsucc;
  int64_t *case_val; /* switch */
  int *case_blk;
  int ncase;
};

typedef struct {
  vinst *ins;
  int n;
} vblock;

typedef struct {
  const char *name;
  vblock *blocks;
  int nblocks;
  int nslots;
  int nparams;       /* params occupy slots 0..nparams-1 */
} vfunc;

typedef struct {
  const char *name;
  int64_t bytes;
  bool shared;       /* CUDA __shared__: one copy per block */
  /* initial contents: one entry per 4 bytes, as f32 or i32 (constant
   * tables); NULL: undefined (shared) or zero */
  unsigned char *init;
  vtype ety;         /* element class of init */
  int esize;
} vglobal;

struct vk_kernel {
  LLVMContextRef ctx;
  LLVMModuleRef mod;
  tr_arena *arena;
  vfunc *funcs;
  int nfuncs;
  int entry;
  vglobal *globals;
  int nglobals;
  bool cuda;
};

#endif
