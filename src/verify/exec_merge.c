/* exec_merge.c - a conditional branch on data whose arms only compute
 * is run as one path: both arms run and the join's phis become ites on
 * the condition (see exec.c for the executor it is part of). */
#include "exec.h"

/* clang guards a division or a select of effects behind a branch (a
 * triangle: the arm computes, the join picks with a phi; a diamond: two
 * arms). When the arms only compute (ex_pure_inst) and meet at one join,
 * both run and the join's phis become ites on the condition: one path
 * instead of two for every element of a loop, which would otherwise
 * double the paths per iteration. */
#define MERGE_MAX_ARM 64    /* instructions of one block of a region */
#define MERGE_MAX_BLOCKS 32 /* blocks of a region */

static bool pure_op(LLVMOpcode op) {
  switch (op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMSDiv: case LLVMUDiv: case LLVMSRem: case LLVMURem:
  case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor:
  case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFDiv: case LLVMFNeg:
  case LLVMICmp: case LLVMFCmp: case LLVMSelect:
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP: case LLVMFPExt:
  case LLVMFPTrunc: case LLVMFreeze:
    return true;
  default: return false;
  }
}

/* Whether block b may be run speculatively: phis, pure instructions and
 * a branch. */
static bool region_block(const vfunc *fn, int b) {
  const vblock *B = &fn->blocks[b];
  if (B->n < 1 || B->n > MERGE_MAX_ARM) return false;
  if (B->ins[B->n - 1].op != LLVMBr) return false;
  for (int i = 0; i < B->n - 1; i++)
    if (B->ins[i].op != LLVMPHI && !pure_op(B->ins[i].op)) return false;
  return true;
}

static bool val_kind_ok(sval v) { return v.k == SV_INT || v.k == SV_BV || v.k == SV_B || v.k == SV_F; }

/* ce ? a : b for a phi of type ty/bits; false when the two cannot be
 * one value (pointers, packs, float bits). */
static bool merge_val(run *R, const vinst *phi, vx *ce, sval a, sval b, sval *out) {
  vx_ctx *c = R->cx;
  if (a.k == b.k && a.buf == b.buf && a.i == b.i && a.e == b.e) { *out = a; return true; }
  if (ce->kind == VX_CONST) { *out = ce->c != 0 ? a : b; return true; }
  if (!val_kind_ok(a) || !val_kind_ok(b)) return false;
  if (phi->ty == VT_F32 || phi->ty == VT_F64) {
    if (a.k != SV_F && a.k != SV_INT) return false;
    if (b.k != SV_F && b.k != SV_INT) return false;
    *out = sv_f(vx_ite(c, ce, ex_as_f(R, a), ex_as_f(R, b)));
    return true;
  }
  if (phi->ty != VT_INT) return false;
  if (phi->bits == 1) {
    vx *x = a.k == SV_B ? a.e : a.k == SV_INT ? vx_const(c, (double)(a.i & 1)) : NULL;
    vx *y = b.k == SV_B ? b.e : b.k == SV_INT ? vx_const(c, (double)(b.i & 1)) : NULL;
    if (!x || !y) return false;
    vx *e = vx_or(c, vx_and(c, ce, x), vx_and(c, vx_not(c, ce), y));
    if (e->kind == VX_CONST) { *out = sv_int(e->c != 0, 1); return true; }
    sval sb = {SV_B, 0, 0, 0, e};
    *out = sb;
    return true;
  }
  if (a.k == SV_F || b.k == SV_F) return false;
  *out = sv_bv(vx_ite(c, ce, ex_as_bv(R, a, phi->bits), ex_as_bv(R, b, phi->bits)));
  return true;
}

typedef struct { int from, to; vx *cond; } medge;
typedef struct {
  int blk[MERGE_MAX_BLOCKS];
  int n;
  medge e[2 * MERGE_MAX_BLOCKS + 2];
  int ne;
} mregion;

static bool in_region(const mregion *M, int b) {
  for (int i = 0; i < M->n; i++) if (M->blk[i] == b) return true;
  return false;
}

/* The value of phi P when control arrives by the region's edges: an ite
 * over the conditions of the edges into its block (exactly one holds). */
static bool phi_value(run *R, thread *T, const mregion *M, int blk, const vinst *P, sval *out) {
  sval acc = {0};
  bool have = false;
  for (int i = M->ne - 1; i >= 0; i--) {
    const medge *E = &M->e[i];
    if (E->to != blk) continue;
    int j = 0;
    while (j < P->nops && P->inblk[j] != E->from) j++;
    if (j == P->nops) return false;
    sval v = ex_oper(R, T, &P->ops[j]);
    if (!have) { acc = v; have = true; }
    else if (!merge_val(R, P, E->cond, v, acc, &acc)) return false;
  }
  if (!have) return false;
  *out = acc;
  return true;
}

static vx *reach_of(run *R, const mregion *M, int blk) {
  vx *r = NULL;
  for (int i = 0; i < M->ne; i++)
    if (M->e[i].to == blk) r = r ? vx_or(R->cx, r, M->e[i].cond) : M->e[i].cond;
  return r;
}

/* Tries to merge the conditional branch I on the data condition cv: the
 * blocks it reaches that only compute (region_block), up to the one block
 * every path of them leads to (the exit), form an acyclic region; every
 * block of it runs, each phi becomes an ite over the conditions of the
 * edges into it, and T continues at the exit. Returns whether it did.
 * When it did not, nothing visible changed: the slots the region wrote
 * are SSA values that the path taken later writes again. */
bool ex_merge_branch(run *R, thread *T, const vinst *I, sval cv) {
  frame *F = &T->fr[T->nfr - 1];
  const vfunc *fn = &R->k->funcs[F->fn];
  int cur = F->blk, exitb = -1;
  mregion M;
  M.n = M.ne = 0;
  int stack[2 * MERGE_MAX_BLOCKS + 2], sp = 0;
  stack[sp++] = I->succ[1];
  stack[sp++] = I->succ[0];
  while (sp > 0) {
    int b = stack[--sp];
    if (b == cur) return false;
    if (b == exitb || in_region(&M, b)) continue;
    if (!region_block(fn, b)) {
      if (exitb >= 0) return false;
      exitb = b;
      continue;
    }
    if (M.n == MERGE_MAX_BLOCKS) return false;
    M.blk[M.n++] = b;
    const vinst *t = &fn->blocks[b].ins[fn->blocks[b].n - 1];
    for (int k = 0; k < t->nsucc; k++) {
      if (sp == (int)(sizeof stack / sizeof *stack)) return false;
      stack[sp++] = t->succ[k];
    }
  }
  if (exitb < 0) return false;
  /* topological order of the region (Kahn): a cycle is refused */
  int order[MERGE_MAX_BLOCKS], indeg[MERGE_MAX_BLOCKS] = {0}, no = 0;
  for (int i = 0; i < M.n; i++) {
    const vinst *t = &fn->blocks[M.blk[i]].ins[fn->blocks[M.blk[i]].n - 1];
    for (int k = 0; k < t->nsucc; k++)
      for (int j = 0; j < M.n; j++)
        if (M.blk[j] == t->succ[k] && !(k == 1 && t->succ[0] == t->succ[1])) indeg[j]++;
  }
  bool done[MERGE_MAX_BLOCKS] = {false};
  for (bool progress = true; progress;) {
    progress = false;
    for (int j = 0; j < M.n; j++) {
      if (done[j] || indeg[j] != 0) continue;
      done[j] = progress = true;
      order[no++] = j;
      const vinst *t = &fn->blocks[M.blk[j]].ins[fn->blocks[M.blk[j]].n - 1];
      for (int k = 0; k < t->nsucc; k++)
        for (int i = 0; i < M.n; i++)
          if (M.blk[i] == t->succ[k] && !(k == 1 && t->succ[0] == t->succ[1])) indeg[i]--;
    }
  }
  if (no != M.n) return false;
  vx_ctx *c = R->cx;
  vx *ce = cv.k == SV_B ? cv.e : vx_bv(c, BV_EQ, 0, vx_bv(c, BV_TRUNC, 1, cv.e, NULL), vx_bvconst(c, 1, 1));
  if (I->succ[0] == I->succ[1]) M.e[M.ne++] = (medge){cur, I->succ[0], vx_const(c, 1)};
  else {
    M.e[M.ne++] = (medge){cur, I->succ[0], ce};
    M.e[M.ne++] = (medge){cur, I->succ[1], vx_not(c, ce)};
  }
  for (int oi = 0; oi < no; oi++) {
    int b = M.blk[order[oi]];
    const vblock *B = &fn->blocks[b];
    vx *reach = reach_of(R, &M, b);
    int i = 0;
    sval tmp[64];
    for (; i < B->n && B->ins[i].op == LLVMPHI; i++) {
      if (i == 64 || !phi_value(R, T, &M, b, &B->ins[i], &tmp[i])) return false;
    }
    for (int k = 0; k < i; k++) F->slots[B->ins[k].slot] = tmp[k];
    for (; i < B->n - 1 && !R->failed; i++) {
      sval v;
      if (++R->steps > R->max_steps) { ex_fail(R, "instruction budget of %lld exhausted", (long long)R->max_steps); return true; }
      if (!ex_pure_inst(R, T, &B->ins[i], &v)) return false;
      if (B->ins[i].slot >= 0) F->slots[B->ins[i].slot] = v;
    }
    if (R->failed) return true;
    const vinst *t = &B->ins[B->n - 1];
    if (t->nsucc == 1 || t->succ[0] == t->succ[1]) { M.e[M.ne++] = (medge){b, t->succ[0], reach}; continue; }
    sval bc = ex_oper(R, T, &t->ops[0]);
    vx *be;
    if (bc.k == SV_INT) be = vx_const(c, (double)(bc.i & 1));
    else if (bc.k == SV_B) be = bc.e;
    else if (bc.k == SV_BV) be = vx_bv(c, BV_EQ, 0, vx_bv(c, BV_TRUNC, 1, bc.e, NULL), vx_bvconst(c, 1, 1));
    else return false;
    M.e[M.ne++] = (medge){b, t->succ[0], vx_and(c, reach, be)};
    M.e[M.ne++] = (medge){b, t->succ[1], vx_and(c, reach, vx_not(c, be))};
  }
  const vblock *J = &fn->blocks[exitb];
  int nphi = 0;
  while (nphi < J->n && J->ins[nphi].op == LLVMPHI) nphi++;
  if (nphi > 64) return false;
  sval tmp[64];
  for (int i = 0; i < nphi; i++)
    if (!phi_value(R, T, &M, exitb, &J->ins[i], &tmp[i])) return false;
  for (int i = 0; i < nphi; i++) F->slots[J->ins[i].slot] = tmp[i];
  F->prev = cur;
  F->blk = exitb;
  F->pc = nphi;
  return true;
}
