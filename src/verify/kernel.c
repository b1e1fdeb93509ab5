/* kernel.c - loads a kernel for trench verify: compiles a C or CUDA source
 * with clang 14 to LLVM IR (-O1, no vectorisation or unrolling: the
 * executor interprets scalar code), reads it with LLVM's C API and decodes
 * every function into vkint.h's form. CUDA sources get trench's prelude
 * (thread and block builtins, dim3, __syncthreads, warp shuffles, atomics,
 * math declarations) in place of the CUDA headers. */
#include "vkint.h"

#include <llvm-c/IRReader.h>
#include <llvm-c/Target.h>

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char cuda_prelude[] =
  "/* trench verify: CUDA prelude (stands in for the CUDA headers) */\n"
  "#define __device__ __attribute__((device))\n"
  "#define __global__ __attribute__((global))\n"
  "#define __shared__ __attribute__((shared))\n"
  "#define __host__ __attribute__((host))\n"
  "#define __forceinline__ __inline__ __attribute__((always_inline))\n"
  "#define __restrict__ __restrict\n"
  "typedef struct { unsigned x, y, z; } uint3;\n"
  "struct dim3 { unsigned x, y, z; };\n"
  "#define threadIdx (uint3{(unsigned)__nvvm_read_ptx_sreg_tid_x(), (unsigned)__nvvm_read_ptx_sreg_tid_y(), (unsigned)__nvvm_read_ptx_sreg_tid_z()})\n"
  "#define blockIdx (uint3{(unsigned)__nvvm_read_ptx_sreg_ctaid_x(), (unsigned)__nvvm_read_ptx_sreg_ctaid_y(), (unsigned)__nvvm_read_ptx_sreg_ctaid_z()})\n"
  "#define blockDim (dim3{(unsigned)__nvvm_read_ptx_sreg_ntid_x(), (unsigned)__nvvm_read_ptx_sreg_ntid_y(), (unsigned)__nvvm_read_ptx_sreg_ntid_z()})\n"
  "#define gridDim (dim3{(unsigned)__nvvm_read_ptx_sreg_nctaid_x(), (unsigned)__nvvm_read_ptx_sreg_nctaid_y(), (unsigned)__nvvm_read_ptx_sreg_nctaid_z()})\n"
  "#define warpSize 32\n"
  "static __device__ __forceinline__ float __shfl_down_sync(unsigned m, float v, unsigned d, int w = 32) { return __nvvm_shfl_sync_down_f32(m, v, d, 0x1f); }\n"
  "static __device__ __forceinline__ float __shfl_up_sync(unsigned m, float v, unsigned d, int w = 32) { return __nvvm_shfl_sync_up_f32(m, v, d, 0); }\n"
  "static __device__ __forceinline__ float __shfl_xor_sync(unsigned m, float v, int d, int w = 32) { return __nvvm_shfl_sync_bfly_f32(m, v, d, 0x1f); }\n"
  "static __device__ __forceinline__ float __shfl_sync(unsigned m, float v, int l, int w = 32) { return __nvvm_shfl_sync_idx_f32(m, v, l, 0x1f); }\n"
  "static __device__ __forceinline__ float atomicAdd(float *p, float v) { return __nvvm_atom_add_gen_f(p, v); }\n"
  "static __device__ __forceinline__ int min(int a, int b) { return a < b ? a : b; }\n"
  "static __device__ __forceinline__ int max(int a, int b) { return a > b ? a : b; }\n"
  "extern \"C\" {\n"
  "__device__ float expf(float); __device__ float logf(float); __device__ float sqrtf(float);\n"
  "__device__ float tanhf(float); __device__ float fmaxf(float, float); __device__ float fminf(float, float);\n"
  "__device__ float fabsf(float); __device__ float rsqrtf(float); __device__ float __expf(float);\n"
  "__device__ float erff(float); __device__ float sinf(float); __device__ float cosf(float);\n"
  "__device__ float __fdividef(float, float);\n"
  "__device__ float floorf(float); __device__ float ceilf(float); __device__ float truncf(float);\n"
  "__device__ float roundf(float); __device__ float rintf(float); __device__ float nearbyintf(float);\n"
  "}\n"
  "#define INFINITY __builtin_inff()\n";

/* Runs argv; stderr goes to errpath. Returns the exit status or -1. */
static int run_cmd(char *const *argv, const char *errpath, const char *workdir) {
  char **env = vk_env(workdir);
  pid_t p = fork();
  if (p < 0) {
    vk_env_free(env);
    return -1;
  }
  if (p == 0) {
    FILE *f = freopen(errpath, "w", stderr);
    (void)f;
    execvpe(argv[0], argv, env);
    _exit(127);
  }
  vk_env_free(env);
  int st;
  while (waitpid(p, &st, 0) < 0)
    if (errno != EINTR) return -1;
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void add_file_diag(tr_diag *d, const char *what, const char *errpath) {
  char *txt = NULL;
  size_t len = 0;
  tr_diag tmp = {0};
  if (tr_read_file(errpath, &txt, &len, &tmp) == TR_OK && len) {
    /* clang's own located messages, first lines */
    if (len > 2000) txt[2000] = 0;
    tr_diag_errorf(d, "%s:\n%s", what, txt);
  } else tr_diag_errorf(d, "%s", what);
  tr_free(txt);
  tr_diag_clear(&tmp);
}

/* Splits extra flags on spaces into argv (no quoting). */
static int split_flags(char *s, char **argv, int max) {
  int n = 0;
  for (char *t = strtok(s, " "); t && n < max; t = strtok(NULL, " ")) argv[n++] = t;
  return n;
}

/* ---- decoding ---- */
typedef struct {
  vk_kernel *k;
  LLVMTargetDataRef td;
  LLVMValueRef *fvals;   /* function refs by index */
  LLVMValueRef *gvals;   /* global refs by index */
  int capg;
  /* value -> slot of the function being decoded (linear probing) */
  LLVMValueRef *keys;
  int *vals;
  size_t cap;
  LLVMBasicBlockRef *blocks;
  int nblocks;
  tr_diag *d;
  bool bad;
} dec;

static size_t hptr(const void *p, size_t cap) {
  uintptr_t x = (uintptr_t)p;
  x ^= x >> 17; x *= 0x9E3779B97F4A7C15ULL;
  return (size_t)(x >> 20) & (cap - 1);
}
static void slot_put(dec *D, LLVMValueRef v, int s) {
  size_t i = hptr(v, D->cap);
  while (D->keys[i] && D->keys[i] != v) i = (i + 1) & (D->cap - 1);
  D->keys[i] = v;
  D->vals[i] = s;
}
static int slot_get(dec *D, LLVMValueRef v) {
  size_t i = hptr(v, D->cap);
  while (D->keys[i]) {
    if (D->keys[i] == v) return D->vals[i];
    i = (i + 1) & (D->cap - 1);
  }
  return -1;
}

static vtype classify(LLVMTypeRef t, int *bits) {
  *bits = 0;
  switch (LLVMGetTypeKind(t)) {
  case LLVMVoidTypeKind: return VT_VOID;
  case LLVMIntegerTypeKind: *bits = (int)LLVMGetIntTypeWidth(t); return VT_INT;
  case LLVMFloatTypeKind: return VT_F32;
  case LLVMDoubleTypeKind: return VT_F64;
  case LLVMPointerTypeKind: return VT_PTR;
  default: return VT_OTHER;
  }
}

static int func_index(dec *D, LLVMValueRef f) {
  for (int i = 0; i < D->k->nfuncs; i++) if (D->fvals[i] == f) return i;
  return -1;
}

static int global_index(dec *D, LLVMValueRef g) {
  for (int i = 0; i < D->k->nglobals; i++) if (D->gvals[i] == g) return i;
  vk_kernel *k = D->k;
  if (k->nglobals == D->capg) {
    D->capg = D->capg ? D->capg * 2 : 8;
    k->globals = tr_xrealloc(k->globals, (size_t)D->capg * sizeof *k->globals);
    D->gvals = tr_xrealloc(D->gvals, (size_t)D->capg * sizeof *D->gvals);
  }
  vglobal *G = &k->globals[k->nglobals];
  memset(G, 0, sizeof *G);
  size_t nl;
  const char *nm = LLVMGetValueName2(g, &nl);
  G->name = tr_arena_strndup(k->arena, nm, nl);
  LLVMTypeRef vt = LLVMGlobalGetValueType(g);
  G->bytes = (int64_t)LLVMABISizeOfType(D->td, vt);
  G->shared = LLVMGetPointerAddressSpace(LLVMTypeOf(g)) == 3;
  LLVMValueRef init = LLVMGetInitializer(g);
  if (init && !G->shared && !LLVMIsUndef(init)) {
    /* a constant table: a flat array of floats or ints */
    LLVMTypeRef et = vt;
    while (LLVMGetTypeKind(et) == LLVMArrayTypeKind) et = LLVMGetElementType(et);
    int bits;
    vtype c = classify(et, &bits);
    G->ety = c;
    G->esize = c == VT_F64 ? 8 : c == VT_INT ? (bits + 7) / 8 : 4;
    G->init = tr_arena_alloc(k->arena, (size_t)G->bytes + 8);
    if (LLVMIsNull(init)) {
      /* zeroinitializer */
    } else if (LLVMIsAConstantDataArray(init) && LLVMGetTypeKind(vt) == LLVMArrayTypeKind) {
      unsigned n = LLVMGetArrayLength(vt);
      for (unsigned i = 0; i < n; i++) {
        LLVMValueRef e = LLVMGetElementAsConstant(init, i);
        unsigned char *p = G->init + (size_t)i * (size_t)G->esize;
        if (c == VT_F32) { LLVMBool lost; float f = (float)LLVMConstRealGetDouble(e, &lost); memcpy(p, &f, 4); }
        else if (c == VT_F64) { LLVMBool lost; double f = LLVMConstRealGetDouble(e, &lost); memcpy(p, &f, 8); }
        else { int64_t v = LLVMConstIntGetSExtValue(e); memcpy(p, &v, (size_t)G->esize); }
      }
    } else {
      tr_diag_errorf(D->d, "kernel: global %s: unsupported initializer (flat arrays of numbers only)", G->name);
      D->bad = true;
    }
  }
  D->gvals[k->nglobals] = g;
  return k->nglobals++;
}

static vinst *decode_inst(dec *D, LLVMValueRef in, LLVMOpcode op);

static voper decode_oper(dec *D, LLVMValueRef v) {
  voper o = {0};
  if (LLVMIsABasicBlock(v)) {
    LLVMBasicBlockRef b = LLVMValueAsBasicBlock(v);
    o.k = VO_BLOCK;
    for (int i = 0; i < D->nblocks; i++) if (D->blocks[i] == b) o.idx = i;
    return o;
  }
  int s = slot_get(D, v);
  if (s >= 0) { o.k = VO_SLOT; o.idx = s; return o; }
  if (LLVMIsAFunction(v)) { o.k = VO_FUNC; o.idx = func_index(D, v); return o; }
  if (LLVMIsAGlobalVariable(v)) { o.k = VO_GLOBAL; o.idx = global_index(D, v); return o; }
  if (LLVMIsUndef(v) || LLVMIsPoison(v)) { o.k = VO_UNDEF; return o; }
  if (LLVMIsAConstantInt(v)) { o.k = VO_INT; o.i = LLVMConstIntGetSExtValue(v); return o; }
  if (LLVMIsAConstantFP(v)) { LLVMBool lost; o.k = VO_FLT; o.f = LLVMConstRealGetDouble(v, &lost); return o; }
  if (LLVMIsAConstantPointerNull(v)) { o.k = VO_NULL; return o; }
  if (LLVMIsAConstantExpr(v)) {
    o.k = VO_CEXPR;
    o.ce = decode_inst(D, v, LLVMGetConstOpcode(v));
    return o;
  }
  o.k = VO_NONE;
  return o;
}

/* nf_from(double, nb, eb, mb, bias, style) and nf_to(bits, ...): the
 * float-format conversions of trench's C emitter (src/comp). */
static bool is_nf_conv(LLVMValueRef f, const char *nm) {
  return LLVMCountParams(f) == 6 && (strcmp(nm, "nf_from") == 0 || strcmp(nm, "nf_to") == 0);
}

static vcall classify_call(const char *nm, int *fn) {
  static const struct { const char *name; vcall c; int fn; } tab[] = {
    {"llvm.fmuladd.", VC_FMA, 0}, {"llvm.fma.", VC_FMA, 0},
    {"llvm.maxnum.", VC_MAXNUM, 0}, {"llvm.minnum.", VC_MINNUM, 0},
    {"llvm.maximum.", VC_MAXNUM, 0}, {"llvm.minimum.", VC_MINNUM, 0},
    {"llvm.fabs.", VC_FABS, 0}, {"llvm.sqrt.", VC_FN, VX_FN_SQRT}, {"llvm.copysign.", VC_COPYSIGN, 0},
    {"llvm.exp.", VC_FN, VX_FN_EXP}, {"llvm.log.", VC_FN, VX_FN_LOG},
    {"llvm.sin.", VC_FN, VX_FN_SIN}, {"llvm.cos.", VC_FN, VX_FN_COS},
    {"llvm.pow.", VC_POW, 0},
    {"llvm.floor.", VC_ROUNDING, 0}, {"llvm.ceil.", VC_ROUNDING, 1}, {"llvm.trunc.", VC_ROUNDING, 2},
    {"llvm.roundeven.", VC_ROUNDING, 4}, {"llvm.round.", VC_ROUNDING, 3},
    {"llvm.rint.", VC_ROUNDING, 4}, {"llvm.nearbyint.", VC_ROUNDING, 4},
    {"llvm.memset.", VC_MEMSET, 0}, {"llvm.memcpy.", VC_MEMCPY, 0}, {"llvm.memmove.", VC_MEMCPY, 0},
    {"llvm.smax.", VC_SMAX, 0}, {"llvm.smin.", VC_SMIN, 0}, {"llvm.umax.", VC_UMAX, 0},
    {"llvm.umin.", VC_UMIN, 0}, {"llvm.abs.", VC_IABS, 0},
    {"llvm.lifetime.", VC_NOP, 0}, {"llvm.dbg.", VC_NOP, 0}, {"llvm.assume", VC_NOP, 0},
    {"llvm.experimental.noalias", VC_NOP, 0}, {"llvm.trap", VC_TRAP, 0},
    {"llvm.nvvm.read.ptx.sreg.tid.", VC_TID, 0}, {"llvm.nvvm.read.ptx.sreg.ctaid.", VC_CTAID, 0},
    {"llvm.nvvm.read.ptx.sreg.ntid.", VC_NTID, 0}, {"llvm.nvvm.read.ptx.sreg.nctaid.", VC_NCTAID, 0},
    {"llvm.nvvm.barrier0", VC_BARRIER, 0}, {"llvm.nvvm.barrier.sync", VC_BARRIER, 0},
    {"llvm.nvvm.shfl.sync.down.f32", VC_SHFL_DOWN, 0}, {"llvm.nvvm.shfl.sync.bfly.f32", VC_SHFL_XOR, 0},
    {"llvm.nvvm.shfl.sync.up.f32", VC_SHFL_UP, 0}, {"llvm.nvvm.shfl.sync.idx.f32", VC_SHFL_IDX, 0},
    {"llvm.nvvm.atomic.load.add.f32", VC_ATOM_ADD_F, 0},
    {"llvm.nvvm.rsqrt.approx.f", VC_RSQRT, 0}, {"llvm.nvvm.sqrt.", VC_FN, VX_FN_SQRT},
    {"llvm.nvvm.fmax.f", VC_MAXNUM, 0}, {"llvm.nvvm.fmin.f", VC_MINNUM, 0},
    {"llvm.nvvm.ex2.approx", VC_NONE, 0},
  };
  static const struct { const char *name; vcall c; int fn; } libm[] = {
    {"expf", VC_FN, VX_FN_EXP}, {"exp", VC_FN, VX_FN_EXP}, {"__expf", VC_FN, VX_FN_EXP},
    {"logf", VC_FN, VX_FN_LOG}, {"log", VC_FN, VX_FN_LOG}, {"__logf", VC_FN, VX_FN_LOG},
    {"sqrtf", VC_FN, VX_FN_SQRT}, {"sqrt", VC_FN, VX_FN_SQRT},
    {"tanhf", VC_FN, VX_FN_TANH}, {"tanh", VC_FN, VX_FN_TANH},
    {"sinf", VC_FN, VX_FN_SIN}, {"cosf", VC_FN, VX_FN_COS}, {"erff", VC_FN, VX_FN_ERF},
    {"erf", VC_FN, VX_FN_ERF}, {"log1pf", VC_FN, VX_FN_LOG1P}, {"expm1f", VC_FN, VX_FN_EXPM1},
    {"fmaxf", VC_MAXNUM, 0}, {"fmax", VC_MAXNUM, 0}, {"fminf", VC_MINNUM, 0}, {"fmin", VC_MINNUM, 0},
    {"fabsf", VC_FABS, 0}, {"fabs", VC_FABS, 0}, {"rsqrtf", VC_RSQRT, 0},
    {"copysign", VC_COPYSIGN, 0}, {"copysignf", VC_COPYSIGN, 0},
    {"fmaf", VC_FMA, 0}, {"fma", VC_FMA, 0}, {"powf", VC_POW, 0},
    {"floorf", VC_ROUNDING, 0}, {"floor", VC_ROUNDING, 0}, {"ceilf", VC_ROUNDING, 1}, {"ceil", VC_ROUNDING, 1},
    {"truncf", VC_ROUNDING, 2}, {"trunc", VC_ROUNDING, 2}, {"roundf", VC_ROUNDING, 3}, {"round", VC_ROUNDING, 3},
    {"rintf", VC_ROUNDING, 4}, {"rint", VC_ROUNDING, 4}, {"nearbyintf", VC_ROUNDING, 4},
    {"nearbyint", VC_ROUNDING, 4},
    {"memcpy", VC_MEMCPY, 0}, {"memmove", VC_MEMCPY, 0}, {"memset", VC_MEMSET, 0},
    {"malloc", VC_MALLOC, 0}, {"calloc", VC_CALLOC, 0}, {"free", VC_NOP, 0},
  };
  *fn = 0;
  for (size_t i = 0; i < sizeof tab / sizeof tab[0]; i++)
    if (strncmp(nm, tab[i].name, strlen(tab[i].name)) == 0) {
      *fn = tab[i].fn;
      if (tab[i].c == VC_TID || tab[i].c == VC_CTAID || tab[i].c == VC_NTID || tab[i].c == VC_NCTAID)
        *fn = nm[strlen(nm) - 1] - 'x';
      return tab[i].c;
    }
  for (size_t i = 0; i < sizeof libm / sizeof libm[0]; i++)
    if (strcmp(nm, libm[i].name) == 0) { *fn = libm[i].fn; return libm[i].c; }
  return VC_NONE;
}

static vinst *decode_inst(dec *D, LLVMValueRef in, LLVMOpcode op) {
  tr_arena *A = D->k->arena;
  vinst *I = tr_arena_alloc(A, sizeof *I);
  I->op = op;
  I->slot = LLVMIsAInstruction(in) ? slot_get(D, in) : -1;
  I->ty = classify(LLVMTypeOf(in), &I->bits);
  int n = LLVMGetNumOperands(in);
  I->nops = n;
  I->ops = tr_arena_alloc(A, (size_t)(n + 1) * sizeof *I->ops);
  if (op == LLVMPHI) {
    n = (int)LLVMCountIncoming(in);
    I->nops = n;
    I->inblk = tr_arena_alloc(A, (size_t)(n + 1) * sizeof *I->inblk);
    for (int i = 0; i < n; i++) {
      I->ops[i] = decode_oper(D, LLVMGetIncomingValue(in, (unsigned)i));
      LLVMBasicBlockRef b = LLVMGetIncomingBlock(in, (unsigned)i);
      for (int j = 0; j < D->nblocks; j++) if (D->blocks[j] == b) I->inblk[i] = j;
    }
    return I;
  }
  for (int i = 0; i < n; i++) I->ops[i] = decode_oper(D, LLVMGetOperand(in, (unsigned)i));
  switch (op) {
  case LLVMICmp: {
    int b;
    I->pred = (int)LLVMGetICmpPredicate(in);
    classify(LLVMTypeOf(LLVMGetOperand(in, 0)), &b);
    I->srcbits = b; /* the operands' width */
    break;
  }
  case LLVMFCmp: I->pred = (int)LLVMGetFCmpPredicate(in); break;
  case LLVMLoad:
    I->mty = classify(LLVMTypeOf(in), &I->mbits);
    I->size = (int64_t)LLVMStoreSizeOfType(D->td, LLVMTypeOf(in));
    break;
  case LLVMStore: {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(in, 0));
    I->mty = classify(t, &I->mbits);
    I->size = (int64_t)LLVMStoreSizeOfType(D->td, t);
    break;
  }
  case LLVMAtomicRMW: {
    LLVMTypeRef t = LLVMTypeOf(LLVMGetOperand(in, 1));
    I->mty = classify(t, &I->mbits);
    I->size = (int64_t)LLVMStoreSizeOfType(D->td, t);
    I->pred = (int)LLVMGetAtomicRMWBinOp(in);
    break;
  }
  case LLVMAlloca:
    I->size = (int64_t)LLVMABISizeOfType(D->td, LLVMGetAllocatedType(in));
    break;
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP: {
    int b;
    classify(LLVMTypeOf(LLVMGetOperand(in, 0)), &b);
    I->srcbits = b;
    break;
  }
  case LLVMGetElementPtr: {
    LLVMTypeRef t = LLVMGetGEPSourceElementType(in);
    I->scale = tr_arena_alloc(A, (size_t)(n + 1) * sizeof *I->scale);
    I->scale[0] = (int64_t)LLVMABISizeOfType(D->td, t);
    for (int j = 2; j < n; j++) {
      LLVMTypeKind tk = LLVMGetTypeKind(t);
      if (tk == LLVMStructTypeKind) {
        unsigned fi = (unsigned)I->ops[j].i;
        I->off += (int64_t)LLVMOffsetOfElement(D->td, t, fi);
        I->scale[j - 1] = 0;
        t = LLVMStructGetTypeAtIndex(t, fi);
      } else if (tk == LLVMArrayTypeKind || tk == LLVMVectorTypeKind) {
        t = LLVMGetElementType(t);
        I->scale[j - 1] = (int64_t)LLVMABISizeOfType(D->td, t);
      } else {
        tr_diag_errorf(D->d, "kernel: unsupported getelementptr through a non-aggregate type");
        D->bad = true;
      }
    }
    break;
  }
  case LLVMCall: {
    LLVMValueRef callee = LLVMGetCalledValue(in);
    size_t nl = 0;
    const char *nm = LLVMIsAFunction(callee) ? LLVMGetValueName2(callee, &nl) : "";
    I->nops = n - 1; /* the callee is the last operand */
    I->call = classify_call(nm, &I->fn);
    /* the float-format conversions of trench's C emitter (src/comp):
     * nf_from(double, nb, eb, mb, bias, style) and nf_to(bits, ...) are
     * taken as the formats' conversions, not run (docs/VERIFY.md) */
    if (I->call == VC_NONE && LLVMIsAFunction(callee) && is_nf_conv(callee, nm))
      I->call = nm[3] == 'f' ? VC_NF_FROM : VC_NF_TO;
    if (I->call == VC_NONE && LLVMIsAFunction(callee) && LLVMCountBasicBlocks(callee) > 0) {
      I->call = VC_USER;
      I->fn = func_index(D, callee);
    }
    if (I->call == VC_NONE && !D->bad) {
      tr_diag_errorf(D->d, "kernel: call of '%s': not modelled (supported: libm math, llvm.* intrinsics of docs/VERIFY.md, functions defined in the kernel file)", nm);
      D->bad = true;
    }
    break;
  }
  case LLVMBr:
    if (n == 1) { I->nsucc = 1; I->succ[0] = I->ops[0].idx; }
    else { I->nsucc = 2; I->succ[0] = I->ops[2].idx; I->succ[1] = I->ops[1].idx; } /* LLVM keeps [cond, false, true] */
    break;
  case LLVMSwitch: {
    I->nsucc = 1;
    I->succ[0] = I->ops[1].idx;
    I->ncase = (n - 2) / 2;
    I->case_val = tr_arena_alloc(A, (size_t)(I->ncase + 1) * sizeof *I->case_val);
    I->case_blk = tr_arena_alloc(A, (size_t)(I->ncase + 1) * sizeof *I->case_blk);
    for (int c = 0; c < I->ncase; c++) {
      I->case_val[c] = I->ops[2 + 2 * c].i;
      I->case_blk[c] = I->ops[3 + 2 * c].idx;
    }
    break;
  }
  default: break;
  }
  return I;
}

static void decode_func(dec *D, LLVMValueRef f, vfunc *F) {
  tr_arena *A = D->k->arena;
  size_t nl;
  F->name = tr_arena_strdup(A, LLVMGetValueName2(f, &nl));
  int nslots = (int)LLVMCountParams(f);
  F->nparams = nslots;
  D->nblocks = (int)LLVMCountBasicBlocks(f);
  D->blocks = tr_xmalloc((size_t)(D->nblocks + 1) * sizeof *D->blocks);
  LLVMGetBasicBlocks(f, D->blocks);
  size_t ninst = 0;
  for (int b = 0; b < D->nblocks; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(D->blocks[b]); i; i = LLVMGetNextInstruction(i)) ninst++;
  D->cap = 64;
  while (D->cap < 2 * (ninst + (size_t)nslots) + 8) D->cap *= 2;
  D->keys = tr_xcalloc(D->cap, sizeof *D->keys);
  D->vals = tr_xcalloc(D->cap, sizeof *D->vals);
  for (int p = 0; p < F->nparams; p++) slot_put(D, LLVMGetParam(f, (unsigned)p), p);
  for (int b = 0; b < D->nblocks; b++)
    for (LLVMValueRef i = LLVMGetFirstInstruction(D->blocks[b]); i; i = LLVMGetNextInstruction(i))
      slot_put(D, i, nslots++);
  F->nslots = nslots;
  F->nblocks = D->nblocks;
  F->blocks = tr_arena_alloc(A, (size_t)(D->nblocks + 1) * sizeof *F->blocks);
  for (int b = 0; b < D->nblocks; b++) {
    int n = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(D->blocks[b]); i; i = LLVMGetNextInstruction(i)) n++;
    F->blocks[b].ins = tr_arena_alloc(A, (size_t)(n + 1) * sizeof(vinst));
    F->blocks[b].n = n;
    int j = 0;
    for (LLVMValueRef i = LLVMGetFirstInstruction(D->blocks[b]); i; i = LLVMGetNextInstruction(i))
      F->blocks[b].ins[j++] = *decode_inst(D, i, LLVMGetInstructionOpcode(i));
  }
  tr_free(D->keys); tr_free(D->vals); tr_free(D->blocks);
  D->keys = NULL; D->vals = NULL; D->blocks = NULL;
}

static tr_status decode_module(vk_kernel *k, tr_diag *d) {
  dec D = {0};
  D.k = k;
  D.d = d;
  D.td = LLVMGetModuleDataLayout(k->mod);
  int nf = 0;
  for (LLVMValueRef f = LLVMGetFirstFunction(k->mod); f; f = LLVMGetNextFunction(f))
    if (LLVMCountBasicBlocks(f) > 0) nf++;
  D.fvals = tr_xcalloc((size_t)nf + 1, sizeof *D.fvals);
  k->funcs = tr_arena_alloc(k->arena, (size_t)(nf + 1) * sizeof *k->funcs);
  k->entry = -1;
  for (LLVMValueRef f = LLVMGetFirstFunction(k->mod); f; f = LLVMGetNextFunction(f))
    if (LLVMCountBasicBlocks(f) > 0) {
      size_t nl;
      const char *nm = LLVMGetValueName2(f, &nl);
      if (strcmp(nm, "kernel") == 0) k->entry = k->nfuncs;
      D.fvals[k->nfuncs++] = f;
    }
  if (k->nfuncs == 0) {
    tr_diag_errorf(d, "kernel: the source defines no function");
    tr_free(D.fvals);
    return TR_ERR_INVALID;
  }
  if (k->entry < 0) k->entry = 0;
  for (int i = 0; i < k->nfuncs; i++) {
    size_t nl;
    const char *nm = LLVMGetValueName2(D.fvals[i], &nl);
    if (is_nf_conv(D.fvals[i], nm)) { k->funcs[i].name = nm; continue; } /* taken as a summary, never run */
    decode_func(&D, D.fvals[i], &k->funcs[i]);
  }
  tr_free(D.fvals);
  tr_free(D.gvals);
  return D.bad ? TR_ERR_UNSUPPORTED : TR_OK;
}

/* A kernel that failed to load goes, its context with it. */
static void load_fail(vk_kernel *k, const vk_compile_opts *o) {
  if (o->llvm_ctx) *o->llvm_ctx = NULL;
  vk_free(k);
}

tr_status vk_load(const char *path, const vk_compile_opts *o, vk_kernel **out, tr_diag *d) {
  *out = NULL;
  char ll[4096], err[4096], pre[4096];
  snprintf(ll, sizeof ll, "%s/kernel.bc", o->workdir);
  snprintf(err, sizeof err, "%s/clang.err", o->workdir);
  snprintf(pre, sizeof pre, "%s/trench_cuda_prelude.h", o->workdir);
  char *argv[64];
  int n = 0;
  argv[n++] = "clang-14";
  if (o->cuda) {
    FILE *f = fopen(pre, "w");
    if (!f || fputs(cuda_prelude, f) < 0 || fclose(f) != 0) {
      tr_diag_errorf(d, "kernel: cannot write %s", pre);
      return TR_ERR_IO;
    }
    argv[n++] = "-x"; argv[n++] = "cuda";
    argv[n++] = "--cuda-device-only"; argv[n++] = "-nocudainc"; argv[n++] = "-nocudalib";
    argv[n++] = "--cuda-gpu-arch=sm_70";
    argv[n++] = "-Xclang"; argv[n++] = "-target-feature"; argv[n++] = "-Xclang"; argv[n++] = "+ptx70";
    argv[n++] = "-Wno-unknown-cuda-version";
    argv[n++] = "-include"; argv[n++] = pre;
  } else {
    argv[n++] = "-x"; argv[n++] = "c"; argv[n++] = "-std=c11";
  }
  argv[n++] = "-O1"; argv[n++] = "-fno-vectorize"; argv[n++] = "-fno-slp-vectorize";
  argv[n++] = "-fno-unroll-loops";
  argv[n++] = "-emit-llvm"; argv[n++] = "-c";
  char *flags = o->cflags ? tr_xstrdup(o->cflags) : NULL;
  if (flags) n += split_flags(flags, argv + n, 16);
  argv[n++] = (char *)path; argv[n++] = "-o"; argv[n++] = ll;
  argv[n] = NULL;
  int rc = run_cmd(argv, err, o->workdir);
  tr_free(flags);
  if (rc != 0) {
    add_file_diag(d, rc == 127 ? "kernel: clang-14 is not installed (scripts/deps.sh installs it)"
                               : "kernel: clang-14 failed", err);
    return TR_ERR_INVALID;
  }
  vk_kernel *k = tr_xcalloc(1, sizeof *k);
  k->arena = tr_arena_new();
  k->cuda = o->cuda;
  k->ctx = LLVMContextCreate();
  if (o->llvm_ctx) *o->llvm_ctx = k->ctx;
  LLVMMemoryBufferRef mb;
  char *msg = NULL;
  if (LLVMCreateMemoryBufferWithContentsOfFile(ll, &mb, &msg)) {
    tr_diag_errorf(d, "kernel: cannot read %s: %s", ll, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    load_fail(k, o);
    return TR_ERR_IO;
  }
  if (LLVMParseIRInContext(k->ctx, mb, &k->mod, &msg)) {
    tr_diag_errorf(d, "kernel: cannot parse the IR of %s: %s", path, msg ? msg : "?");
    LLVMDisposeMessage(msg);
    load_fail(k, o);
    return TR_ERR_INVALID;
  }
  tr_status st = decode_module(k, d);
  if (st != TR_OK) {
    load_fail(k, o);
    return st;
  }
  *out = k;
  return TR_OK;
}

void vk_free(vk_kernel *k) {
  if (!k) return;
  if (k->mod) LLVMDisposeModule(k->mod);
  if (k->ctx) LLVMContextDispose(k->ctx);
  tr_free(k->globals);
  tr_arena_free(k->arena);
  tr_free(k);
}

void vk_llvm_dispose(void *ctx) {
  if (ctx) LLVMContextDispose(ctx);
}

int vk_nparams(const vk_kernel *k) { return k->funcs[k->entry].nparams; }

char *vk_ir_text(const vk_kernel *k) {
  char *s = LLVMPrintModuleToString(k->mod);
  char *r = tr_xstrdup(s);
  LLVMDisposeMessage(s);
  return r;
}

const char *vk_issue_name(vk_issue_kind k) {
  switch (k) {
  case VK_ISSUE_OOB_READ: return "out-of-bounds read";
  case VK_ISSUE_OOB_WRITE: return "out-of-bounds write";
  case VK_ISSUE_RACE_WW: return "write-write race";
  case VK_ISSUE_RACE_RW: return "read-write race";
  case VK_ISSUE_UNINIT_SHARED: return "read of never-written memory";
  }
  return "?";
}
