/* exec.c - the executor of trench verify: runs a decoded kernel (vkint.h)
 * with concrete control flow, integers and addresses and float data as vx
 * expressions. A branch on data takes the next recorded decision (or
 * "true" past the end) and records its condition, so the caller explores
 * paths by replaying with other decisions (verify.c). CUDA: the blocks of
 * the grid run one after another; the threads of a block each run until
 * they reach a barrier, a warp shuffle or their end, then the barrier is
 * released or the warp's shuffle exchanged; global and shared accesses
 * are checked for races between threads within a barrier interval (and
 * between blocks, which never synchronise). */
#include "exec.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

bool ex_fail(run *R, const char *fmt, ...) {
  if (R->failed) return false;
  R->failed = true;
  va_list ap;
  va_start(ap, fmt);
  char msg[512];
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  tr_diag_errorf(R->d, "kernel: %s", msg);
  R->r->st = TR_ERR_UNSUPPORTED;
  return false;
}


static int new_buf(run *R, int64_t bytes, int param) {
  if (R->nbufs == R->capbufs) {
    R->capbufs = R->capbufs ? R->capbufs * 2 : 16;
    R->bufs = tr_xrealloc(R->bufs, (size_t)R->capbufs * sizeof *R->bufs);
  }
  mbuf *B = &R->bufs[R->nbufs];
  memset(B, 0, sizeof *B);
  B->bytes = bytes;
  B->cell = tr_xcalloc((size_t)bytes + 1, sizeof *B->cell);
  B->param = param;
  if (R->k->cuda && param >= 0) {
    B->w_thr = tr_xcalloc((size_t)bytes + 1, sizeof(int32_t));
    B->w_ep = tr_xcalloc((size_t)bytes + 1, sizeof(int32_t));
    B->r_thr = tr_xcalloc((size_t)bytes + 1, sizeof(int32_t));
    B->r_ep = tr_xcalloc((size_t)bytes + 1, sizeof(int32_t));
    B->r_multi = tr_xcalloc((size_t)bytes + 1, 1);
  }
  return R->nbufs++;
}

static void track_alloc(mbuf *B) {
  B->w_thr = tr_xcalloc((size_t)B->bytes + 1, sizeof(int32_t));
  B->w_ep = tr_xcalloc((size_t)B->bytes + 1, sizeof(int32_t));
  B->r_thr = tr_xcalloc((size_t)B->bytes + 1, sizeof(int32_t));
  B->r_ep = tr_xcalloc((size_t)B->bytes + 1, sizeof(int32_t));
  B->r_multi = tr_xcalloc((size_t)B->bytes + 1, 1);
}

static void free_buf(mbuf *B) {
  tr_free(B->cell); tr_free(B->w_thr); tr_free(B->w_ep); tr_free(B->r_thr); tr_free(B->r_ep); tr_free(B->r_multi);
  memset(B, 0, sizeof *B);
}

static void issue(run *R, vk_issue_kind kind, int b, int64_t off, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
static void issue(run *R, vk_issue_kind kind, int b, int64_t off, const char *fmt, ...) {
  vk_result *r = R->r;
  int param = b >= 0 ? R->bufs[b].param : -1;
  for (int i = 0; i < r->nissues; i++)
    if (r->issues[i].kind == kind && r->issues[i].buf == param) return;
  if (r->nissues >= 64) return;
  r->issues = tr_xrealloc(r->issues, (size_t)(r->nissues + 1) * sizeof *r->issues);
  vk_issue *is = &r->issues[r->nissues++];
  is->kind = kind;
  is->buf = param;
  is->off = off;
  int es = param >= 0 ? (int)tr_dtype_size(R->cfg->dtype[param]) : 4;
  is->elem = off >= 0 ? off / es : -((-off + es - 1) / es);
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(is->msg, sizeof is->msg, fmt, ap);
  va_end(ap);
}

/* The linear id of a thread over the grid, for race reports. */
static int gthread(run *R, const thread *T) { return R->blin * R->nthreads + T->lin; }

static void race_check(run *R, int b, int64_t off, int64_t size, const thread *T, bool write) {
  mbuf *B = &R->bufs[b];
  if (!B->w_thr || !T) return;
  int me = gthread(R, T) + 1;
  int ep = R->blin * 65536 + R->epoch + 1;
  for (int64_t o = off; o < off + size; o += size) {
    int w = B->w_thr[o];
    bool wconf = w && w != me && ((w - 1) / R->nthreads != R->blin || B->w_ep[o] == ep);
    if (wconf) {
      issue(R, write ? VK_ISSUE_RACE_WW : VK_ISSUE_RACE_RW, b, o,
            "%s by thread %d and %s by thread %d %s without a barrier between", write ? "write" : "read",
            me - 1, "write", w - 1, (w - 1) / R->nthreads != R->blin ? "(another block)" : "of the same block");
    }
    if (write) {
      int rd = B->r_thr[o];
      bool rconf = rd && (rd != me || B->r_multi[o]) && ((rd - 1) / R->nthreads != R->blin || B->r_ep[o] == ep);
      if (rconf)
        issue(R, VK_ISSUE_RACE_RW, b, o, "write by thread %d and read by thread %d without a barrier between",
              me - 1, rd - 1);
      B->w_thr[o] = me;
      B->w_ep[o] = ep;
    } else {
      int rd = B->r_thr[o];
      if (rd && rd != me && B->r_ep[o] == ep) B->r_multi[o] = 1;
      else { B->r_thr[o] = me; B->r_ep[o] = ep; B->r_multi[o] = 0; }
    }
  }
}

/* The value of an input or output element never written in this run. */
static vx *undef(run *R, int64_t buf, int64_t off) {
  const vk_run_cfg *cfg = R->cfg;
  if (!cfg->concrete) return vx_undef(R->cx, buf, off);
  double v = cfg->undef_value ? cfg->undef_value(cfg->undef_ctx, buf, off) : 7777.0;
  return vx_const(R->cx, (double)(float)v);
}

static sval entry_value(run *R, int b, int64_t off, const vinst *I) {
  mbuf *B = &R->bufs[b];
  const vk_run_cfg *cfg = R->cfg;
  if (B->param >= 0) {
    int p = B->param;
    int es = (int)tr_dtype_size(cfg->dtype[p]);
    int64_t e = off / es;
    const tr_tensor *t = cfg->conc ? cfg->conc[p] : NULL;
    bool isf = tr_dtype_is_float(cfg->dtype[p]);
    if (t && (cfg->concrete || !isf)) {
      if (isf) return sv_f(vx_const(R->cx, tr_tensor_get_f(t, (size_t)e)));
      return sv_int(tr_tensor_get_i(t, (size_t)e), es * 8);
    }
    if (isf && !B->is_out) return sv_f(vx_sym(R->cx, p, e));
    if (B->is_out && cfg->zero_out) return isf ? sv_f(vx_const(R->cx, 0)) : sv_int(0, es * 8);
    if (isf) return sv_f(undef(R, p, off));
    if (cfg->concrete) { ex_fail(R, "integer buffer %d has no values", p); return sv_int(0, 32); }
    /* integer data: a symbol of the element type's width, extended to
     * its storage as the type is (sign for signed types) */
    tr_dtype dt = cfg->dtype[p];
    int w = tr_dtypes[dt].bits;
    if (dt == TR_DT_PRED) w = 1;
    vx *v = B->is_out ? vx_bvundef(R->cx, p, off, es * 8) : vx_bvsym(R->cx, p, e, w);
    if (v->w < es * 8) v = vx_bv(R->cx, tr_dtypes[dt].kind == TR_DK_SINT ? BV_SEXT : BV_ZEXT, es * 8, v, NULL);
    return sv_bv(v);
  }
  if (B->shared)
    issue(R, VK_ISSUE_UNINIT_SHARED, b, off, "shared memory read before any thread wrote it");
  if (I->mty == VT_F32 || I->mty == VT_F64) return sv_f(undef(R, 1000 + b, off));
  ex_fail(R, "an integer or pointer is read from memory never written");
  return sv_int(0, 32);
}

static void note_write(run *R, int p, int64_t e);

/* Memory is a cell per start offset (cells never overlap): loads and
 * stores of one size meet whole cells. Where sizes differ (bytes copied
 * one by one, a constant table of bytes read as a float, a float stored
 * and read back as its bits) the bytes of concrete cells are assembled;
 * only data (symbolic values) must be read with the size it was written. */

/* The start of the cell covering byte o, or -1. */
static int64_t cover(const mbuf *B, int64_t o) {
  for (int64_t s = o; s >= 0 && s > o - 16; s--)
    if (B->cell[s].k != SV_NONE) return s + (B->cell[s].sz ? B->cell[s].sz : 1) > o ? s : -1;
  return -1;
}

/* The bytes of a concrete cell (little-endian), false for data. */
static bool cell_bytes(const sval *c, unsigned char *b) {
  int sz = c->sz ? c->sz : 1;
  if (sz > 8) return false;
  if (c->k == SV_INT) {
    for (int i = 0; i < sz; i++) b[i] = (unsigned char)((uint64_t)c->i >> (8 * i));
    return true;
  }
  if (c->k == SV_F && c->e->kind == VX_CONST && (sz == 4 || sz == 8)) {
    if (sz == 4) { float f = (float)c->e->c; memcpy(b, &f, 4); }
    else { double f = c->e->c; memcpy(b, &f, 8); }
    return true;
  }
  return false;
}

/* A value of class mty and sz bytes from concrete bytes. */
static sval from_bytes(run *R, const unsigned char *b, int64_t sz, vtype mty, int mbits) {
  if (mty == VT_F32 && sz == 4) { float f; memcpy(&f, b, 4); return sv_f(vx_const(R->cx, f)); }
  if (mty == VT_F64 && sz == 8) { double f; memcpy(&f, b, 8); return sv_f(vx_const(R->cx, f)); }
  uint64_t u = 0;
  for (int64_t i = 0; i < sz && i < 8; i++) u |= (uint64_t)b[i] << (8 * i);
  return sv_int((int64_t)u, mbits ? mbits : (int)sz * 8);
}

/* Splits the concrete cell at s into byte cells; false when it is data. */
static bool split_cell(mbuf *B, int64_t s) {
  unsigned char b[8];
  int sz = B->cell[s].sz ? B->cell[s].sz : 1;
  if (sz == 1) return true;
  if (!cell_bytes(&B->cell[s], b)) return false;
  for (int i = 0; i < sz; i++) { B->cell[s + i] = sv_int(b[i], 8); B->cell[s + i].sz = 1; }
  return true;
}

/* Whole cells tiling [off, off + sz) with data among them, read as an
 * integer: a pack; SV_NONE otherwise. */
static sval pack_cells(run *R, const mbuf *B, int64_t off, int64_t sz, const vinst *I) {
  sval none = {0};
  if (I->mty != VT_INT) return none;
  struct pack P = {0};
  bool data = false;
  for (int64_t o = off; o < off + sz;) {
    const sval *c = &B->cell[o];
    int csz = c->sz ? c->sz : 1;
    if (c->k == SV_NONE || o + csz > off + sz || P.n == 16) return none;
    unsigned char b[8];
    data |= !cell_bytes(c, b);
    P.at[P.n] = o - off;
    P.part[P.n++] = *c;
    o += csz;
  }
  if (!data) return none;
  R->packs = tr_xrealloc(R->packs, (size_t)(R->npacks + 1) * sizeof *R->packs);
  R->packs[R->npacks] = P;
  sval v = {SV_PACK, 0, 0, R->npacks++, NULL};
  return v;
}

static sval mem_load(run *R, const thread *T, sval p, const vinst *I) {
  if (p.k != SV_PTR || p.buf < 0) { ex_fail(R, "load through a null or non-pointer value"); return sv_int(0, 32); }
  mbuf *B = &R->bufs[p.buf];
  int64_t off = p.i, sz = I->size;
  if (off < 0 || off + sz > B->bytes) {
    issue(R, VK_ISSUE_OOB_READ, p.buf, off, "read of %lld bytes at byte offset %lld of a %lld-byte buffer",
          (long long)sz, (long long)off, (long long)B->bytes);
    if (I->mty == VT_F32 || I->mty == VT_F64) return sv_f(undef(R, 2000 + p.buf, off));
    ex_fail(R, "an out-of-bounds read gives an integer or pointer (the run stops there)");
    return sv_int(0, 32);
  }
  if (R->k->cuda) race_check(R, p.buf, off, sz, T, false);
  sval c = B->cell[off];
  bool fresh = c.k == SV_NONE && cover(B, off) < 0;
  for (int64_t o = off + 1; o < off + sz && fresh; o++) fresh = B->cell[o].k == SV_NONE;
  if (fresh) {
    c = entry_value(R, p.buf, off, I);
    c.sz = (uint8_t)sz;
    if (B->param < 0 || !B->is_out) B->cell[off] = c;
  } else if (c.k == SV_NONE || c.sz != sz) {
    /* assembled from the bytes of concrete cells */
    unsigned char b[16];
    if (sz > 16) { ex_fail(R, "a memory access of %lld bytes", (long long)sz); return sv_int(0, 32); }
    int64_t s0 = cover(B, off);
    if (s0 >= 0 && B->cell[s0].k == SV_BV && I->mty == VT_INT && off + sz <= s0 + B->cell[s0].sz) {
      /* bytes of integer data: shift and truncate */
      vx *e = B->cell[s0].e;
      if (off > s0) e = vx_bv(R->cx, BV_LSHR, e->w, e, vx_bvconst(R->cx, (uint64_t)(8 * (off - s0)), e->w));
      return sv_bv(vx_bv(R->cx, BV_TRUNC, (int)sz * 8, e, NULL));
    }
    sval pk = pack_cells(R, B, off, sz, I);
    if (pk.k == SV_PACK) return pk;
    for (int64_t o = off; o < off + sz;) {
      int64_t s = cover(B, o);
      unsigned char cb[8];
      if (s < 0 || !cell_bytes(&B->cell[s], cb)) {
        ex_fail(R, "data read with another size than it was written at byte %lld (a %d-byte read)", (long long)off, (int)sz);
        return sv_int(0, 32);
      }
      int csz = B->cell[s].sz ? B->cell[s].sz : 1;
      for (; o < s + csz && o < off + sz; o++) b[o - off] = cb[o - s];
    }
    return from_bytes(R, b, sz, I->mty, I->mbits);
  }
  if ((I->mty == VT_F32 || I->mty == VT_F64) && c.k == SV_INT) {
    unsigned char b[8];
    if (!cell_bytes(&c, b)) { ex_fail(R, "float read of a pointer"); return sv_int(0, 32); }
    return from_bytes(R, b, sz, I->mty, 0);
  }
  if (I->mty == VT_INT && c.k == SV_F && c.e->kind == VX_CONST && (sz == 4 || sz == 8)) {
    unsigned char b[8];
    cell_bytes(&c, b);
    return from_bytes(R, b, sz, VT_INT, I->mbits);
  }
  if (I->mty == VT_INT && c.k == SV_F) {
    int dt = c.buf ? c.buf - 1 : sz == 4 ? TR_DT_F32 : sz == 8 ? TR_DT_F64 : -1;
    if (dt < 0 && B->param >= 0 && tr_dtype_is_float(R->cfg->dtype[B->param]) &&
        tr_dtype_size(R->cfg->dtype[B->param]) == sz)
      dt = R->cfg->dtype[B->param];
    if (dt < 0 || tr_dtype_size((tr_dtype)dt) != sz) { ex_fail(R, "integer read of float data"); return sv_int(0, 32); }
    c.k = SV_FBITS;
    c.buf = dt + 1;
    c.sz = 0;
    return c;
  }
  if (c.k == SV_BV) {
    if (I->mty != VT_INT) { ex_fail(R, "a float or pointer read of integer data"); return sv_int(0, 32); }
    if (c.e->w != I->mbits) return sv_bv(vx_bv(R->cx, BV_TRUNC, I->mbits, c.e, NULL));
    c.sz = 0;
    return c;
  }
  if (I->mty == VT_INT) return sv_int(c.i, I->mbits);
  c.sz = 0;
  return c;
}

static void mem_store(run *R, const thread *T, sval p, sval v, const vinst *I) {
  if (p.k != SV_PTR || p.buf < 0) { ex_fail(R, "store through a null or non-pointer value"); return; }
  mbuf *B = &R->bufs[p.buf];
  int64_t off = p.i, sz = I->size;
  if (off < 0 || off + sz > B->bytes) {
    issue(R, VK_ISSUE_OOB_WRITE, p.buf, off, "write of %lld bytes at byte offset %lld of a %lld-byte buffer",
          (long long)sz, (long long)off, (long long)B->bytes);
    return;
  }
  if (R->k->cuda) race_check(R, p.buf, off, sz, T, true);
  if (v.k == SV_B) { ex_fail(R, "a comparison of data is stored to memory"); return; }
  if (v.k == SV_FBITS) v.k = SV_F;
  if (v.k == SV_PACK) {
    struct pack P = R->packs[v.i];
    for (int j = 0; j < P.n; j++) {
      vinst pi = *I;
      pi.size = P.part[j].sz ? P.part[j].sz : 1;
      sval q = p;
      q.i += P.at[j];
      if (p.i + P.at[j] + pi.size > p.i + sz) { ex_fail(R, "a pack stored with a narrower size"); return; }
      mem_store(R, T, q, P.part[j], &pi);
    }
    return;
  }
  /* cells this store overlaps in part keep their other bytes */
  int64_t s0 = cover(B, off);
  if (s0 >= 0 && s0 < off && !split_cell(B, s0)) { ex_fail(R, "a store into the middle of data at byte %lld", (long long)off); return; }
  for (int64_t o = off + 1; o < off + sz; o++) {
    if (B->cell[o].k == SV_NONE) continue;
    int csz = B->cell[o].sz ? B->cell[o].sz : 1;
    if (o + csz > off + sz && !split_cell(B, o)) { ex_fail(R, "a store over part of data at byte %lld", (long long)o); return; }
    B->cell[o].k = SV_NONE;
  }
  if (B->cell[off].k != SV_NONE && B->cell[off].sz > sz && !split_cell(B, off)) {
    ex_fail(R, "a store over part of data at byte %lld", (long long)off);
    return;
  }
  for (int64_t o = off + 1; o < off + sz; o++) B->cell[o].k = SV_NONE;
  v.sz = (uint8_t)sz;
  B->cell[off] = v;
  if (B->param >= 0 && B->is_out) note_write(R, B->param, off / (int)tr_dtype_size(R->cfg->dtype[B->param]));
}

/* Records that the running block wrote element e of output buffer p. */
static void note_write(run *R, int p, int64_t e) {
  vk_result *r = R->r;
  if (!r->writer_block || !r->writer_block[p]) return;
  r->writer_block[p][e] = R->blin;
  if (r->writer_first[p][e] < 0) r->writer_first[p][e] = R->blin;
}

/* A decision on a data-dependent condition. */
static bool decide(run *R, vx *cond) {
  vk_result *r = R->r;
  int take = 1;
  if (R->idec < R->cfg->ndec) take = R->cfg->dec[R->idec];
  R->idec++;
  r->dec = tr_xrealloc(r->dec, (size_t)(r->ndec + 1) * sizeof *r->dec);
  r->conds = tr_xrealloc(r->conds, (size_t)(r->ndec + 1) * sizeof *r->conds);
  r->dec[r->ndec] = take;
  r->conds[r->ndec] = cond;
  r->ndec++;
  r->pc = vx_and(R->cx, r->pc, take ? cond : vx_not(R->cx, cond));
  if (r->ndec > 4096) ex_fail(R, "more than 4096 branches on data in one run");
  return take != 0;
}

static sval eval_cexpr(run *R, thread *T, const vinst *I);

sval ex_oper(run *R, thread *T, const voper *o) {
  frame *F = &T->fr[T->nfr - 1];
  switch (o->k) {
  case VO_SLOT: return F->slots[o->idx];
  case VO_INT: return sv_int(o->i, 64);
  case VO_FLT: return sv_f(vx_const(R->cx, o->f));
  case VO_NULL: { sval s = {SV_PTR, 0, -1, 0, NULL}; return s; }
  case VO_UNDEF: return sv_int(0, 64); /* undef: any value; 0 is one */
  case VO_GLOBAL: { sval s = {SV_PTR, 0, R->gbuf[o->idx], 0, NULL}; return s; }
  case VO_CEXPR: return eval_cexpr(R, T, o->ce);
  default: ex_fail(R, "unsupported operand"); return sv_int(0, 64);
  }
}

vx *ex_as_f(run *R, sval s) {
  if (s.k == SV_F) return s.e;
  if (s.k == SV_INT) return vx_const(R->cx, (double)s.i);
  ex_fail(R, "float operand expected");
  return vx_const(R->cx, 0);
}

/* Rounds a constant result of an f32 operation as the machine would. */
static vx *round_f(run *R, vx *e, vtype ty) {
  if (ty == VT_F32 && e->kind == VX_CONST) return vx_const(R->cx, (double)(float)e->c);
  return e;
}

/* A boolean value as a concrete 0/1 (deciding when it is data). */
static int64_t truth(run *R, sval c) {
  if (c.k == SV_INT) return c.i & 1;
  if (c.k == SV_BV) return decide(R, vx_bv(R->cx, BV_EQ, 0, vx_bv(R->cx, BV_TRUNC, 1, c.e, NULL), vx_bvconst(R->cx, 1, 1)));
  if (c.k == SV_B) return decide(R, c.e);
  ex_fail(R, "branch on a non-boolean value");
  return 0;
}

static sval gep(run *R, thread *T, const vinst *I) {
  sval p = ex_oper(R, T, &I->ops[0]);
  if (p.k != SV_PTR) { ex_fail(R, "getelementptr on a non-pointer"); return p; }
  int64_t off = p.i + I->off;
  for (int j = 1; j < I->nops; j++) {
    if (!I->scale[j - 1]) continue;
    sval ix = ex_oper(R, T, &I->ops[j]);
    if (ix.k != SV_INT) { ex_fail(R, "an address depends on data (index is not an integer)"); return p; }
    off += ix.i * I->scale[j - 1];
  }
  p.i = off;
  return p;
}

/* An integer operand as a bitvector of width w (a boolean as 0/1). */
vx *ex_as_bv(run *R, sval s, int w) {
  if (s.k == SV_BV) {
    if (s.e->w == w) return s.e;
    return vx_bv(R->cx, s.e->w < w ? BV_ZEXT : BV_TRUNC, w, s.e, NULL);
  }
  if (s.k == SV_B) return vx_ite(R->cx, s.e, vx_bvconst(R->cx, 1, w), vx_bvconst(R->cx, 0, w));
  if (s.k != SV_INT) ex_fail(R, "integer data mixed with a pointer or float");
  return vx_bvconst(R->cx, (uint64_t)s.i, w);
}

static sval icmp(run *R, const vinst *I, sval a, sval b) {
  if (a.k == SV_PTR || b.k == SV_PTR) {
    if (a.k == SV_PTR && b.k == SV_PTR && a.buf == b.buf) { a.k = b.k = SV_INT; }
    else if (I->pred == LLVMIntEQ || I->pred == LLVMIntNE) {
      bool eq = a.k == b.k && a.buf == b.buf && a.i == b.i;
      return sv_int(I->pred == LLVMIntEQ ? eq : !eq, 1);
    } else { ex_fail(R, "comparison of pointers into different buffers"); return sv_int(0, 1); }
  }
  if ((a.k == SV_BV || b.k == SV_BV) && (a.k == SV_INT || a.k == SV_BV || a.k == SV_B) &&
      (b.k == SV_INT || b.k == SV_BV || b.k == SV_B)) {
    int w = I->srcbits ? I->srcbits : a.k == SV_BV ? a.e->w : b.e->w;
    vx *x = ex_as_bv(R, a, w), *y = ex_as_bv(R, b, w);
    vx_ctx *cx = R->cx;
    switch ((LLVMIntPredicate)I->pred) {
    case LLVMIntEQ: return sv_b(vx_bv(cx, BV_EQ, 0, x, y));
    case LLVMIntNE: return sv_b(vx_not(cx, vx_bv(cx, BV_EQ, 0, x, y)));
    case LLVMIntULT: return sv_b(vx_bv(cx, BV_ULT, 0, x, y));
    case LLVMIntULE: return sv_b(vx_bv(cx, BV_ULE, 0, x, y));
    case LLVMIntUGT: return sv_b(vx_bv(cx, BV_ULT, 0, y, x));
    case LLVMIntUGE: return sv_b(vx_bv(cx, BV_ULE, 0, y, x));
    case LLVMIntSLT: return sv_b(vx_bv(cx, BV_SLT, 0, x, y));
    case LLVMIntSLE: return sv_b(vx_bv(cx, BV_SLE, 0, x, y));
    case LLVMIntSGT: return sv_b(vx_bv(cx, BV_SLT, 0, y, x));
    default: return sv_b(vx_bv(cx, BV_SLE, 0, y, x));
    }
  }
  if (a.k != SV_INT || b.k != SV_INT) { ex_fail(R, "integer comparison of data"); return sv_int(0, 1); }
  int bits = 64;
  uint64_t ua = (uint64_t)a.i, ub = (uint64_t)b.i;
  (void)bits;
  bool r;
  switch ((LLVMIntPredicate)I->pred) {
  case LLVMIntEQ: r = a.i == b.i; break;
  case LLVMIntNE: r = a.i != b.i; break;
  case LLVMIntSGT: r = a.i > b.i; break;
  case LLVMIntSGE: r = a.i >= b.i; break;
  case LLVMIntSLT: r = a.i < b.i; break;
  case LLVMIntSLE: r = a.i <= b.i; break;
  default: {
    /* unsigned: compare as the operand width (values are sign-extended) */
    int w = I->ops[0].k == VO_SLOT ? 0 : 0;
    (void)w;
    switch ((LLVMIntPredicate)I->pred) {
    case LLVMIntUGT: r = ua > ub; break;
    case LLVMIntUGE: r = ua >= ub; break;
    case LLVMIntULT: r = ua < ub; break;
    default: r = ua <= ub; break;
    }
  }
  }
  return sv_int(r, 1);
}

static sval fcmp(run *R, const vinst *I, sval a, sval b) {
  vx *x = ex_as_f(R, a), *y = ex_as_f(R, b), *c;
  vx_ctx *cx = R->cx;
  switch ((LLVMRealPredicate)I->pred) {
  case LLVMRealOEQ: case LLVMRealUEQ: c = vx_eq(cx, x, y); break;
  case LLVMRealONE: case LLVMRealUNE: c = vx_not(cx, vx_eq(cx, x, y)); break;
  case LLVMRealOGT: case LLVMRealUGT: c = vx_lt(cx, y, x); break;
  case LLVMRealOGE: case LLVMRealUGE: c = vx_le(cx, y, x); break;
  case LLVMRealOLT: case LLVMRealULT: c = vx_lt(cx, x, y); break;
  case LLVMRealOLE: case LLVMRealULE: c = vx_le(cx, x, y); break;
  case LLVMRealORD: case LLVMRealPredicateTrue: c = vx_const(cx, 1); break;
  default: c = vx_const(cx, 0); break;
  }
  if (c->kind == VX_CONST) return sv_int(c->c != 0, 1);
  sval s = {SV_B, 0, 0, 0, c};
  return s;
}

/* C (and LLVM) leave a division by zero, and MIN / -1 in signed types,
 * undefined, where XLA defines both: there the kernel's result is an
 * arbitrary value of its own (an undef symbol per division it runs), so a
 * kernel that divides without guarding differs from the reference exactly
 * on those inputs, and the concrete run confirms it (SIGFPE). */
static vx *c_division(run *R, vx_bvop op, int bits, vx *x, vx *y, vx *v) {
  vx_ctx *c = R->cx;
  vx *ub = vx_bv(c, BV_EQ, 0, y, vx_bvconst(c, 0, bits));
  if (op == BV_SDIV || op == BV_SREM) {
    vx *min = vx_bvconst(c, (uint64_t)1 << (bits - 1), bits);
    vx *ovf = vx_and(c, vx_bv(c, BV_EQ, 0, x, min), vx_bv(c, BV_EQ, 0, y, vx_bvconst(c, vx_bvmask(bits), bits)));
    ub = vx_or(c, ub, ovf);
  }
  if (ub->kind == VX_CONST) return ub->c != 0 ? vx_bvundef(c, -2 - R->ndiv++, 0, bits) : v;
  return vx_ite(c, ub, vx_bvundef(c, -2 - R->ndiv++, 0, bits), v);
}

static sval ibin(run *R, const vinst *I, sval a, sval b) {
  int bits = I->bits;
  if (bits == 1 && (a.k == SV_B || b.k == SV_B)) {
    vx *x = a.k == SV_B ? a.e : vx_const(R->cx, (double)(a.i & 1));
    vx *y = b.k == SV_B ? b.e : vx_const(R->cx, (double)(b.i & 1));
    vx *c = NULL;
    if (I->op == LLVMAnd) c = vx_and(R->cx, x, y);
    else if (I->op == LLVMOr) c = vx_or(R->cx, x, y);
    else if (I->op == LLVMXor && y->kind == VX_CONST) c = y->c != 0 ? vx_not(R->cx, x) : x;
    else if (I->op == LLVMXor && x->kind == VX_CONST) c = x->c != 0 ? vx_not(R->cx, y) : y;
    if (c) {
      if (c->kind == VX_CONST) return sv_int(c->c != 0, 1);
      sval s = {SV_B, 0, 0, 0, c};
      return s;
    }
  }
  if ((a.k == SV_BV || b.k == SV_BV) && a.k != SV_PTR && b.k != SV_PTR && a.k != SV_FBITS && b.k != SV_FBITS) {
    vx *x = ex_as_bv(R, a, bits), *y = ex_as_bv(R, b, bits);
    vx_bvop op;
    switch (I->op) {
    case LLVMAdd: op = BV_ADD; break;
    case LLVMSub: op = BV_SUB; break;
    case LLVMMul: op = BV_MUL; break;
    case LLVMShl: op = BV_SHL; break;
    case LLVMLShr: op = BV_LSHR; break;
    case LLVMAShr: op = BV_ASHR; break;
    case LLVMAnd: op = BV_AND; break;
    case LLVMOr: op = BV_OR; break;
    case LLVMXor: op = BV_XOR; break;
    case LLVMUDiv: op = BV_UDIV; break;
    case LLVMSDiv: op = BV_SDIV; break;
    case LLVMURem: op = BV_UREM; break;
    case LLVMSRem: op = BV_SREM; break;
    default: ex_fail(R, "integer opcode %d on data", (int)I->op); return sv_int(0, bits);
    }
    vx *v = vx_bv(R->cx, op, bits, x, y);
    if (op >= BV_UDIV && op <= BV_SREM) v = c_division(R, op, bits, x, y, v);
    return sv_bv(v);
  }
  if (a.k == SV_B) a = sv_int(truth(R, a), 1);
  if (b.k == SV_B) b = sv_int(truth(R, b), 1);
  if (a.k == SV_FBITS && b.k == SV_INT && I->op == LLVMAnd) {
    uint64_t m = vx_bvmask(tr_dtypes[a.buf - 1].bits);
    if (((uint64_t)b.i & m) == m) return a; /* a mask that keeps the format's bits */
  }
  if (a.k == SV_FBITS && b.k == SV_INT && I->op == LLVMXor &&
      ((uint64_t)b.i & vx_bvmask(tr_dtypes[a.buf - 1].bits)) == (uint64_t)1 << (tr_dtypes[a.buf - 1].bits - 1)) {
    a.e = vx_neg(R->cx, a.e); /* flipping the sign bit negates */
    return a;
  }
  if (a.k == SV_PTR && b.k == SV_INT && (I->op == LLVMAdd || I->op == LLVMSub)) {
    a.i += I->op == LLVMAdd ? b.i : -b.i;
    return a;
  }
  if (a.k != SV_INT || b.k != SV_INT) {
    ex_fail(R, "integer arithmetic (opcode %d) on %s", (int)I->op, a.k == SV_PTR || b.k == SV_PTR ? "pointers" : "data");
    return sv_int(0, bits);
  }
  int64_t x = a.i, y = b.i;
  uint64_t ux = zext(x, bits), uy = zext(y, bits);
  int64_t r = 0;
  switch (I->op) {
  case LLVMAdd: r = (int64_t)((uint64_t)x + (uint64_t)y); break;
  case LLVMSub: r = (int64_t)((uint64_t)x - (uint64_t)y); break;
  case LLVMMul: r = (int64_t)((uint64_t)x * (uint64_t)y); break;
  case LLVMSDiv: if (!y) { ex_fail(R, "integer division by zero"); break; } r = (y == -1) ? (int64_t)(0 - (uint64_t)x) : x / y; break;
  case LLVMUDiv: if (!uy) { ex_fail(R, "integer division by zero"); break; } r = (int64_t)(ux / uy); break;
  case LLVMSRem: if (!y) { ex_fail(R, "integer division by zero"); break; } r = (y == -1) ? 0 : x % y; break;
  case LLVMURem: if (!uy) { ex_fail(R, "integer division by zero"); break; } r = (int64_t)(ux % uy); break;
  case LLVMShl: r = uy >= 64 ? 0 : (int64_t)((uint64_t)x << uy); break;
  case LLVMLShr: r = uy >= 64 ? 0 : (int64_t)(ux >> uy); break;
  case LLVMAShr: r = uy >= 64 ? (x < 0 ? -1 : 0) : x >> uy; break;
  case LLVMAnd: r = x & y; break;
  case LLVMOr: r = x | y; break;
  case LLVMXor: r = x ^ y; break;
  default: ex_fail(R, "integer op %d", (int)I->op);
  }
  return sv_int(r, bits);
}

static sval fbin(run *R, const vinst *I, sval a, sval b) {
  vx *x = ex_as_f(R, a), *y = ex_as_f(R, b), *r;
  vx_ctx *cx = R->cx;
  switch (I->op) {
  case LLVMFAdd: r = vx_add(cx, x, y); break;
  case LLVMFSub: r = vx_sub(cx, x, y); break;
  case LLVMFMul: r = vx_mul(cx, x, y); break;
  case LLVMFDiv: r = vx_div(cx, x, y); break;
  default:
    if (x->kind == VX_CONST && y->kind == VX_CONST) { r = vx_const(cx, fmod(x->c, y->c)); break; }
    ex_fail(R, "frem of data");
    r = x;
  }
  return sv_f(round_f(R, r, I->ty));
}

static sval cast(run *R, thread *T, const vinst *I) {
  sval a = ex_oper(R, T, &I->ops[0]);
  if (a.k == SV_PACK) {
    if (I->op == LLVMFreeze || (I->op == LLVMBitCast && I->ty == VT_INT)) return a;
    ex_fail(R, "arithmetic on several data cells moved as one integer");
    return sv_int(0, I->bits);
  }
  if (a.k == SV_FBITS) {
    /* float bits: widening, narrowing back and reinterpreting only */
    if (I->op == LLVMZExt || I->op == LLVMSExt || I->op == LLVMFreeze) return a;
    if (I->op == LLVMTrunc && I->bits >= tr_dtypes[a.buf - 1].bits) return a;
    if (I->op == LLVMBitCast && ((I->ty == VT_F32 && a.buf - 1 == TR_DT_F32) || (I->ty == VT_F64 && a.buf - 1 == TR_DT_F64))) {
      a.k = SV_F;
      return a;
    }
    ex_fail(R, "arithmetic on the bits of float data");
    return sv_int(0, I->bits);
  }
  if (a.k == SV_BV || (a.k == SV_B && (I->op == LLVMZExt || I->op == LLVMSExt) && I->bits > 1)) {
    vx_ctx *cx = R->cx;
    vx *e = a.k == SV_B ? vx_bv(cx, BV_TRUNC, 1, ex_as_bv(R, a, 8), NULL) : a.e;
    switch (I->op) {
    case LLVMZExt: return sv_bv(vx_bv(cx, BV_ZEXT, I->bits, e, NULL));
    case LLVMSExt: return sv_bv(vx_bv(cx, BV_SEXT, I->bits, e, NULL));
    case LLVMTrunc:
      if (I->bits == 1) return sv_b(vx_bv(cx, BV_EQ, 0, vx_bv(cx, BV_TRUNC, 1, e, NULL), vx_bvconst(cx, 1, 1)));
      return sv_bv(vx_bv(cx, BV_TRUNC, I->bits, e, NULL));
    case LLVMSIToFP: return sv_f(vx_bv(cx, BV_SREAL, 0, e, NULL));
    case LLVMUIToFP: return sv_f(vx_bv(cx, BV_UREAL, 0, e, NULL));
    case LLVMFreeze: return a;
    case LLVMBitCast: if (I->ty == VT_INT) return a; break;
    default: break;
    }
    ex_fail(R, "a conversion of integer data (cast %d)", (int)I->op);
    return sv_int(0, I->bits);
  }
  switch (I->op) {
  case LLVMZExt:
    if (a.k == SV_B) a = sv_int(truth(R, a), 1);
    return sv_int((int64_t)zext(a.i, I->srcbits), I->bits);
  case LLVMSExt:
    if (a.k == SV_B) a = sv_int(truth(R, a) ? -1 : 0, 1);
    return sv_int(sext(a.i, I->srcbits), I->bits);
  case LLVMTrunc:
    if (a.k == SV_B) a = sv_int(truth(R, a), 1);
    return sv_int(a.i, I->bits);
  case LLVMSIToFP: return sv_f(round_f(R, vx_const(R->cx, (double)sext(a.i, I->srcbits)), I->ty));
  case LLVMUIToFP: return sv_f(round_f(R, vx_const(R->cx, (double)zext(a.i, I->srcbits)), I->ty));
  case LLVMFPToSI: case LLVMFPToUI: {
    vx *e = ex_as_f(R, a);
    if (e->kind != VX_CONST) {
      /* C leaves a value out of the type's range undefined (LLVM: poison):
       * there the result is a fresh unknown, as for a division by zero */
      int w = I->bits;
      double lo = I->op == LLVMFPToSI ? -ldexp(1, w - 1) - 1 : -1, hi = I->op == LLVMFPToSI ? ldexp(1, w - 1) : ldexp(1, w);
      vx *in = vx_and(R->cx, vx_lt(R->cx, vx_const(R->cx, lo), e), vx_lt(R->cx, e, vx_const(R->cx, hi)));
      vx *v = vx_bv(R->cx, BV_FROMREAL, w, e, NULL);
      return sv_bv(vx_ite(R->cx, in, v, vx_bvundef(R->cx, -2 - R->ndiv++, 0, w)));
    }
    if (!(fabs(e->c) < 9.2e18)) { ex_fail(R, "float-to-integer conversion out of range"); return sv_int(0, I->bits); }
    return sv_int((int64_t)e->c, I->bits);
  }
  case LLVMFPExt: return a;
  case LLVMFPTrunc: return sv_f(round_f(R, ex_as_f(R, a), I->ty));
  case LLVMBitCast: case LLVMAddrSpaceCast: case LLVMFreeze:
    if ((I->ty == VT_INT) != (a.k == SV_INT) && a.k != SV_PTR && I->ty != VT_PTR) {
      ex_fail(R, "bitcast between float and integer");
    }
    return a;
  case LLVMPtrToInt:
    if (a.k == SV_PTR && a.buf < 0) return sv_int(a.i, I->bits);
    ex_fail(R, "pointer-to-integer conversion");
    return sv_int(0, I->bits);
  default: ex_fail(R, "cast %d", (int)I->op); return a;
  }
}

static sval eval_cexpr(run *R, thread *T, const vinst *I) {
  switch (I->op) {
  case LLVMGetElementPtr: return gep(R, T, I);
  case LLVMBitCast: case LLVMAddrSpaceCast: return ex_oper(R, T, &I->ops[0]);
  default: ex_fail(R, "constant expression %d", (int)I->op); return sv_int(0, 64);
  }
}

static void push_frame(run *R, thread *T, int fn, int ret_slot) {
  if (T->nfr == T->capfr) {
    T->capfr = T->capfr ? T->capfr * 2 : 4;
    T->fr = tr_xrealloc(T->fr, (size_t)T->capfr * sizeof *T->fr);
  }
  frame *F = &T->fr[T->nfr++];
  F->fn = fn; F->blk = 0; F->prev = -1; F->pc = 0; F->ret_slot = ret_slot;
  F->slots = tr_xcalloc((size_t)R->k->funcs[fn].nslots + 1, sizeof *F->slots);
}

static void pop_frame(thread *T) {
  tr_free(T->fr[T->nfr - 1].slots);
  T->nfr--;
}

/* Jumps to block b of the current frame: phis read the old values. */
static void jump(run *R, thread *T, int b) {
  frame *F = &T->fr[T->nfr - 1];
  const vblock *B = &R->k->funcs[F->fn].blocks[b];
  int from = F->blk;
  int nphi = 0;
  while (nphi < B->n && B->ins[nphi].op == LLVMPHI) nphi++;
  sval tmp[64];
  if (nphi > 64) { ex_fail(R, "more than 64 phis in a block"); return; }
  for (int i = 0; i < nphi; i++) {
    const vinst *I = &B->ins[i];
    int j = 0;
    while (j < I->nops && I->inblk[j] != from) j++;
    if (j == I->nops) { ex_fail(R, "phi without an incoming value"); return; }
    tmp[i] = ex_oper(R, T, &I->ops[j]);
  }
  for (int i = 0; i < nphi; i++) F->slots[B->ins[i].slot] = tmp[i];
  F->prev = from;
  F->blk = b;
  F->pc = nphi;
}

static sval call(run *R, thread *T, const vinst *I, bool *blocked) {
  vx_ctx *cx = R->cx;
  sval a0 = I->nops > 0 ? ex_oper(R, T, &I->ops[0]) : sv_int(0, 32);
  sval a1 = I->nops > 1 ? ex_oper(R, T, &I->ops[1]) : sv_int(0, 32);
  bool iminmax = I->call == VC_SMAX || I->call == VC_SMIN || I->call == VC_UMAX || I->call == VC_UMIN || I->call == VC_IABS;
  if (iminmax && (a0.k == SV_BV || a1.k == SV_BV)) {
    vx *x = ex_as_bv(R, a0, I->bits), *y = I->call == VC_IABS ? vx_bvconst(cx, 0, I->bits) : ex_as_bv(R, a1, I->bits);
    vx *lt = vx_bv(cx, I->call == VC_UMAX || I->call == VC_UMIN ? BV_ULT : BV_SLT, 0, x, y);
    if (I->call == VC_IABS) return sv_bv(vx_ite(cx, lt, vx_bv(cx, BV_SUB, I->bits, y, x), x));
    bool mx = I->call == VC_SMAX || I->call == VC_UMAX;
    return sv_bv(vx_ite(cx, lt, mx ? y : x, mx ? x : y));
  }
  switch (I->call) {
  case VC_NOP: return sv_int(0, 32);
  case VC_FMA: {
    sval a2 = ex_oper(R, T, &I->ops[2]);
    return sv_f(round_f(R, vx_add(cx, vx_mul(cx, ex_as_f(R, a0), ex_as_f(R, a1)), ex_as_f(R, a2)), I->ty));
  }
  case VC_MAXNUM: return sv_f(vx_max(cx, ex_as_f(R, a0), ex_as_f(R, a1)));
  case VC_MINNUM: return sv_f(vx_min(cx, ex_as_f(R, a0), ex_as_f(R, a1)));
  case VC_FABS: return sv_f(vx_abs(cx, ex_as_f(R, a0)));
  case VC_ROUNDING: {
    vx *x = ex_as_f(R, a0);
    switch (I->fn) {
    case 0: return sv_f(vx_floor(cx, x));
    case 1: return sv_f(vx_ceil(cx, x));
    case 2: return sv_f(vx_trunc(cx, x));
    case 3: return sv_f(vx_round_afz(cx, x));
    default: return sv_f(vx_round_even(cx, x));
    }
  }
  case VC_FN: return sv_f(round_f(R, vx_fn1(cx, (vx_fn)I->fn, ex_as_f(R, a0)), I->ty));
  case VC_RSQRT: return sv_f(round_f(R, vx_inv(cx, vx_fn1(cx, VX_FN_SQRT, ex_as_f(R, a0))), I->ty));
  case VC_POW: {
    vx *x = ex_as_f(R, a0), *y = ex_as_f(R, a1);
    if (y->kind == VX_CONST && y->c == 2) return sv_f(vx_mul(cx, x, x));
    if (x->kind == VX_CONST && y->kind == VX_CONST) return sv_f(round_f(R, vx_const(cx, pow(x->c, y->c)), I->ty));
    ex_fail(R, "pow of data");
    return sv_f(x);
  }
  case VC_SMAX: return sv_int(a0.i > a1.i ? a0.i : a1.i, I->bits);
  case VC_SMIN: return sv_int(a0.i < a1.i ? a0.i : a1.i, I->bits);
  case VC_UMAX: return sv_int(zext(a0.i, I->bits) > zext(a1.i, I->bits) ? a0.i : a1.i, I->bits);
  case VC_UMIN: return sv_int(zext(a0.i, I->bits) < zext(a1.i, I->bits) ? a0.i : a1.i, I->bits);
  case VC_IABS: return sv_int(a0.i < 0 ? -a0.i : a0.i, I->bits);
  case VC_MEMSET: {
    sval n = ex_oper(R, T, &I->ops[2]);
    if (a0.k != SV_PTR || a0.buf < 0 || a1.k != SV_INT || n.k != SV_INT) { ex_fail(R, "memset"); return a0; }
    mbuf *B = &R->bufs[a0.buf];
    if (a0.i < 0 || a0.i + n.i > B->bytes) { issue(R, VK_ISSUE_OOB_WRITE, a0.buf, a0.i, "memset past the buffer"); return a0; }
    if ((a1.i & 0xff) != 0) { ex_fail(R, "memset with a nonzero byte"); return a0; }
    for (int64_t o = a0.i; o < a0.i + n.i; o++) { B->cell[o] = sv_int(0, 8); B->cell[o].sz = 1; }
    if (B->param >= 0 && B->is_out) {
      int es = (int)tr_dtype_size(R->cfg->dtype[B->param]);
      for (int64_t o = a0.i; o < a0.i + n.i; o += es) note_write(R, B->param, o / es);
    }
    return a0;
  }
  case VC_MEMCPY: {
    sval n = ex_oper(R, T, &I->ops[2]);
    if (a0.k != SV_PTR || a1.k != SV_PTR || a0.buf < 0 || a1.buf < 0 || n.k != SV_INT) { ex_fail(R, "memcpy"); return a0; }
    mbuf *D = &R->bufs[a0.buf], *S = &R->bufs[a1.buf];
    if (a0.i < 0 || a0.i + n.i > D->bytes || a1.i < 0 || a1.i + n.i > S->bytes) {
      issue(R, VK_ISSUE_OOB_WRITE, a0.buf, a0.i, "memcpy past a buffer");
      return a0;
    }
    for (int64_t o = 0; o < n.i; o++) {
      sval c = S->cell[a1.i + o];
      if (c.k == SV_NONE && S->param >= 0 && o % 4 == 0 && n.i - o >= 4) {
        vinst li = {0};
        li.mty = VT_F32; li.size = 4;
        c = entry_value(R, a1.buf, a1.i + o, &li);
        c.sz = 4;
      }
      D->cell[a0.i + o] = c;
    }
    return a0;
  }
  case VC_TID: return sv_int(T->tid[I->fn], 32);
  case VC_CTAID: return sv_int(R->bid[I->fn], 32);
  case VC_NTID: return sv_int(R->cfg->block[I->fn], 32);
  case VC_NCTAID: return sv_int(R->cfg->grid[I->fn], 32);
  case VC_BARRIER:
    T->state = T_BARRIER;
    *blocked = true;
    return sv_int(0, 32);
  case VC_SHFL_DOWN: case VC_SHFL_XOR: case VC_SHFL_UP: case VC_SHFL_IDX: {
    sval v = ex_oper(R, T, &I->ops[1]);
    sval d = ex_oper(R, T, &I->ops[2]);
    if (d.k != SV_INT) { ex_fail(R, "shuffle lane depends on data"); return v; }
    T->shfl_val = ex_as_f(R, v);
    T->shfl_kind = I->call;
    T->shfl_arg = d.i;
    T->shfl_slot = I->slot;
    T->state = T_SHFL;
    *blocked = true;
    return v;
  }
  case VC_ATOM_ADD_F: {
    vinst li = *I;
    li.mty = VT_F32; li.size = 4;
    sval old = mem_load(R, T, a0, &li);
    mem_store(R, T, a0, sv_f(vx_add(cx, ex_as_f(R, old), ex_as_f(R, a1))), &li);
    return old;
  }
  case VC_COPYSIGN: {
    vx *x = vx_abs(cx, ex_as_f(R, a0)), *y = ex_as_f(R, a1);
    return sv_f(vx_ite(cx, vx_lt(cx, y, vx_const(cx, 0)), vx_neg(cx, x), x));
  }
  case VC_NF_FROM: case VC_NF_TO: {
    /* the emitted unit's float-format conversions (docs/VERIFY.md): over
     * the reals the value is kept, as for every rounding */
    int64_t fp[5];
    for (int j = 0; j < 5; j++) {
      sval q = ex_oper(R, T, &I->ops[1 + j]);
      if (q.k != SV_INT) { ex_fail(R, "a float format that depends on data"); return a0; }
      fp[j] = q.i;
    }
    int dt = -1;
    for (int t = 0; t < TR_DT_COUNT && dt < 0; t++)
      if (tr_dtypes[t].kind == TR_DK_FLOAT && tr_dtypes[t].bits == fp[0] && tr_dtypes[t].ebits == fp[1] &&
          tr_dtypes[t].mbits == fp[2] && tr_dtypes[t].bias == fp[3] && (int64_t)tr_dtypes[t].fstyle == fp[4])
        dt = t;
    if (dt < 0) { ex_fail(R, "a float format trench does not know"); return a0; }
    if (I->call == VC_NF_FROM) {
      vx *v = ex_as_f(R, a0);
      if (v->kind == VX_CONST) return sv_int((int64_t)tr_float_from_double((tr_dtype)dt, v->c), 64);
      sval r = {SV_FBITS, 0, dt + 1, 0, v};
      return r;
    }
    if (a0.k == SV_INT) return sv_f(vx_const(cx, tr_float_to_double((tr_dtype)dt, zext(a0.i, (int)fp[0]))));
    if (a0.k == SV_FBITS) return sv_f(a0.e);
    ex_fail(R, "a float decoded from integer data");
    return sv_f(vx_const(cx, 0));
  }
  case VC_TRAP: ex_fail(R, "the kernel trapped"); return sv_int(0, 32);
  case VC_MALLOC: case VC_CALLOC: {
    int64_t n = I->call == VC_CALLOC ? a0.i * a1.i : a0.i;
    if (a0.k != SV_INT || n < 0 || n > ((int64_t)1 << 30)) { ex_fail(R, "allocation of a size that is not a small constant"); return a0; }
    int b = new_buf(R, n ? n : 1, -1);
    R->bufs[b].local = true;
    if (I->call == VC_CALLOC)
      for (int64_t o = 0; o < n; o++) { R->bufs[b].cell[o] = sv_int(0, 8); R->bufs[b].cell[o].sz = 1; }
    sval p = {SV_PTR, 0, b, 0, NULL};
    return p;
  }
  default: ex_fail(R, "unsupported call"); return sv_int(0, 32);
  }
}

/* The instructions without effects (arithmetic, comparisons, selects,
 * conversions, address arithmetic): *v gets the value. Returns false for
 * any other opcode. Shared by the step loop and the merging of branches. */
bool ex_pure_inst(run *R, thread *T, const vinst *I, sval *out) {
  sval v = {0};
  switch (I->op) {
  case LLVMAdd: case LLVMSub: case LLVMMul: case LLVMSDiv: case LLVMUDiv: case LLVMSRem:
  case LLVMURem: case LLVMShl: case LLVMLShr: case LLVMAShr: case LLVMAnd: case LLVMOr: case LLVMXor:
    v = ibin(R, I, ex_oper(R, T, &I->ops[0]), ex_oper(R, T, &I->ops[1]));
    break;
  case LLVMFAdd: case LLVMFSub: case LLVMFMul: case LLVMFDiv: case LLVMFRem:
    v = fbin(R, I, ex_oper(R, T, &I->ops[0]), ex_oper(R, T, &I->ops[1]));
    break;
  case LLVMFNeg: v = sv_f(vx_neg(R->cx, ex_as_f(R, ex_oper(R, T, &I->ops[0])))); break;
  case LLVMICmp: v = icmp(R, I, ex_oper(R, T, &I->ops[0]), ex_oper(R, T, &I->ops[1])); break;
  case LLVMFCmp: v = fcmp(R, I, ex_oper(R, T, &I->ops[0]), ex_oper(R, T, &I->ops[1])); break;
  case LLVMSelect: {
    sval c = ex_oper(R, T, &I->ops[0]);
    sval a = ex_oper(R, T, &I->ops[1]), b = ex_oper(R, T, &I->ops[2]);
    if (c.k == SV_B && (I->ty == VT_F32 || I->ty == VT_F64)) v = sv_f(vx_ite(R->cx, c.e, ex_as_f(R, a), ex_as_f(R, b)));
    else if (c.k == SV_B && I->ty == VT_INT && I->bits > 1 && a.k != SV_PTR && b.k != SV_PTR && a.k != SV_FBITS &&
             b.k != SV_FBITS && a.k != SV_PACK && b.k != SV_PACK)
      v = sv_bv(vx_ite(R->cx, c.e, ex_as_bv(R, a, I->bits), ex_as_bv(R, b, I->bits)));
    else if (c.k == SV_BV) v = truth(R, c) ? a : b;
    else if (c.k == SV_INT && (a.k == SV_BV || b.k == SV_BV)) v = (c.i & 1) ? a : b;
    else if (c.k == SV_B && I->ty == VT_INT && I->bits == 1 && (a.k == SV_B || a.k == SV_INT) &&
             (b.k == SV_B || b.k == SV_INT)) {
      /* a boolean select (clang's form of && and ||): a formula, no fork */
      vx *x = a.k == SV_B ? a.e : vx_const(R->cx, (double)(a.i & 1));
      vx *y = b.k == SV_B ? b.e : vx_const(R->cx, (double)(b.i & 1));
      vx *e = vx_or(R->cx, vx_and(R->cx, c.e, x), vx_and(R->cx, vx_not(R->cx, c.e), y));
      if (e->kind == VX_CONST) v = sv_int(e->c != 0, 1);
      else { sval sb = {SV_B, 0, 0, 0, e}; v = sb; }
    } else v = truth(R, c) ? a : b;
    break;
  }
  case LLVMZExt: case LLVMSExt: case LLVMTrunc: case LLVMSIToFP: case LLVMUIToFP: case LLVMFPToSI:
  case LLVMFPToUI: case LLVMFPExt: case LLVMFPTrunc: case LLVMBitCast: case LLVMAddrSpaceCast:
  case LLVMFreeze: case LLVMPtrToInt:
    v = cast(R, T, I);
    break;
  case LLVMGetElementPtr: v = gep(R, T, I); break;
  default: return false;
  }
  *out = v;
  return true;
}

/* Runs thread T until it blocks, finishes or the run fails. */
static void step_thread(run *R, thread *T) {
  const vk_kernel *K = R->k;
  int left = R->cfg->quantum > 0 ? R->cfg->quantum : -1;
  while (!R->failed && T->state == T_RUN && left-- != 0) {
    frame *F = &T->fr[T->nfr - 1];
    const vblock *B = &K->funcs[F->fn].blocks[F->blk];
    if (F->pc >= B->n) { ex_fail(R, "fell off a block"); return; }
    const vinst *I = &B->ins[F->pc++];
    if (++R->steps > R->max_steps) { ex_fail(R, "instruction budget of %lld exhausted", (long long)R->max_steps); return; }
    sval v = {0};
    bool has = I->slot >= 0;
    switch (I->op) {
    case LLVMRet: {
      sval rv = I->nops > 0 ? ex_oper(R, T, &I->ops[0]) : sv_int(0, 32);
      int rs = F->ret_slot;
      pop_frame(T);
      if (T->nfr == 0) { T->state = T_DONE; return; }
      if (rs >= 0) T->fr[T->nfr - 1].slots[rs] = rv;
      continue;
    }
    case LLVMBr: {
      if (I->nsucc == 1) { jump(R, T, I->succ[0]); continue; }
      sval c = ex_oper(R, T, &I->ops[0]);
      if ((c.k == SV_B || c.k == SV_BV) && ex_merge_branch(R, T, I, c)) continue;
      jump(R, T, truth(R, c) ? I->succ[0] : I->succ[1]);
      continue;
    }
    case LLVMSwitch: {
      sval c = ex_oper(R, T, &I->ops[0]);
      int to = I->succ[0];
      if (c.k == SV_BV) {
        /* on data: one decision per case, in order, then the default */
        for (int j = 0; j < I->ncase; j++) {
          vx *eq = vx_bv(R->cx, BV_EQ, 0, c.e, vx_bvconst(R->cx, (uint64_t)I->case_val[j], c.e->w));
          if (eq->kind == VX_CONST ? eq->c != 0 : decide(R, eq)) { to = I->case_blk[j]; break; }
        }
        jump(R, T, to);
        continue;
      }
      if (c.k != SV_INT) { ex_fail(R, "switch on a non-integer value"); return; }
      for (int j = 0; j < I->ncase; j++) if (I->case_val[j] == c.i) to = I->case_blk[j];
      jump(R, T, to);
      continue;
    }
    case LLVMUnreachable: ex_fail(R, "reached unreachable code"); return;
    case LLVMAlloca: {
      sval n = I->nops > 0 ? ex_oper(R, T, &I->ops[0]) : sv_int(1, 32);
      int b = new_buf(R, I->size * (n.k == SV_INT && n.i > 0 ? n.i : 1), -1);
      R->bufs[b].local = true;
      v.k = SV_PTR; v.buf = b; v.i = 0;
      break;
    }
    case LLVMLoad: v = mem_load(R, T, ex_oper(R, T, &I->ops[0]), I); break;
    case LLVMStore: mem_store(R, T, ex_oper(R, T, &I->ops[1]), ex_oper(R, T, &I->ops[0]), I); break;
    case LLVMAtomicRMW: {
      sval p = ex_oper(R, T, &I->ops[0]), x = ex_oper(R, T, &I->ops[1]);
      vinst li = *I;
      sval old = mem_load(R, T, p, &li);
      sval nw;
      switch ((LLVMAtomicRMWBinOp)I->pred) {
      case LLVMAtomicRMWBinOpFAdd: nw = sv_f(vx_add(R->cx, ex_as_f(R, old), ex_as_f(R, x))); break;
      case LLVMAtomicRMWBinOpFSub: nw = sv_f(vx_sub(R->cx, ex_as_f(R, old), ex_as_f(R, x))); break;
      case LLVMAtomicRMWBinOpAdd: nw = sv_int(old.i + x.i, I->mbits); break;
      case LLVMAtomicRMWBinOpXchg: nw = x; break;
      case LLVMAtomicRMWBinOpMax: nw = sv_int(old.i > x.i ? old.i : x.i, I->mbits); break;
      case LLVMAtomicRMWBinOpMin: nw = sv_int(old.i < x.i ? old.i : x.i, I->mbits); break;
      default: ex_fail(R, "atomic operation %d", I->pred); return;
      }
      /* atomics do not race with each other: store without tracking */
      if (p.k == SV_PTR && p.buf >= 0 && p.i >= 0 && p.i + I->size <= R->bufs[p.buf].bytes) {
        nw.sz = (uint8_t)I->size;
        R->bufs[p.buf].cell[p.i] = nw;
        mbuf *Bf = &R->bufs[p.buf];
        if (Bf->param >= 0 && Bf->is_out) note_write(R, Bf->param, p.i / (int)tr_dtype_size(R->cfg->dtype[Bf->param]));
      }
      v = old;
      break;
    }
    case LLVMCall:
      if (I->call == VC_USER) {
        int fn = I->fn;
        sval args[32];
        if (I->nops > 32) { ex_fail(R, "call with more than 32 arguments"); return; }
        for (int j = 0; j < I->nops; j++) args[j] = ex_oper(R, T, &I->ops[j]);
        if (T->nfr > 256) { ex_fail(R, "call depth over 256"); return; }
        push_frame(R, T, fn, I->slot);
        for (int j = 0; j < I->nops; j++) T->fr[T->nfr - 1].slots[j] = args[j];
        continue;
      } else {
        bool blocked = false;
        v = call(R, T, I, &blocked);
        if (blocked) return;
      }
      break;
    case LLVMPHI: ex_fail(R, "phi after the head of a block"); return;
    default:
      if (!ex_pure_inst(R, T, I, &v)) { ex_fail(R, "instruction opcode %d is not modelled", (int)I->op); return; }
      break;
    }
    if (has && I->slot >= 0) T->fr[T->nfr - 1].slots[I->slot] = v;
  }
}

static bool resolve_shuffles(run *R, thread *ts, int n) {
  bool any = false;
  for (int w0 = 0; w0 < n; w0 += 32) {
    int w1 = w0 + 32 < n ? w0 + 32 : n;
    bool all = true, some = false;
    for (int t = w0; t < w1; t++) {
      if (ts[t].state == T_SHFL) some = true;
      else if (ts[t].state != T_DONE) all = false;
    }
    if (!some || !all) continue;
    vx *res[32];
    for (int t = w0; t < w1; t++) {
      thread *T = &ts[t];
      if (T->state != T_SHFL) continue;
      int lane = t - w0, src;
      switch (T->shfl_kind) {
      case VC_SHFL_DOWN: src = lane + (int)T->shfl_arg; if (src > 31) src = lane; break;
      case VC_SHFL_UP: src = lane - (int)T->shfl_arg; if (src < 0) src = lane; break;
      case VC_SHFL_XOR: src = lane ^ (int)(T->shfl_arg & 31); break;
      default: src = (int)(T->shfl_arg & 31); break;
      }
      int s = w0 + src;
      res[lane] = (s < w1 && ts[s].state == T_SHFL) ? ts[s].shfl_val : T->shfl_val;
    }
    for (int t = w0; t < w1; t++) {
      thread *T = &ts[t];
      if (T->state != T_SHFL) continue;
      if (T->shfl_slot >= 0) T->fr[T->nfr - 1].slots[T->shfl_slot] = sv_f(res[t - w0]);
      T->state = T_RUN;
    }
    any = true;
  }
  return any;
}

static void run_block(run *R) {
  const vk_kernel *K = R->k;
  const vk_run_cfg *cfg = R->cfg;
  int n = (int)(cfg->block[0] * cfg->block[1] * cfg->block[2]);
  R->nthreads = n;
  R->epoch = 0;
  int first_local = R->nbufs;
  for (int g = 0; g < K->nglobals; g++)
    if (K->globals[g].shared) {
      R->gbuf[g] = new_buf(R, K->globals[g].bytes, -1);
      R->bufs[R->gbuf[g]].shared = true;
      track_alloc(&R->bufs[R->gbuf[g]]);
    }
  thread *ts = tr_xcalloc((size_t)n, sizeof *ts);
  for (int t = 0; t < n; t++) {
    thread *T = &ts[t];
    T->lin = t;
    T->tid[0] = (unsigned)t % cfg->block[0];
    T->tid[1] = ((unsigned)t / cfg->block[0]) % cfg->block[1];
    T->tid[2] = (unsigned)t / (cfg->block[0] * cfg->block[1]);
    push_frame(R, T, K->entry, -1);
    for (int p = 0; p < K->funcs[K->entry].nparams; p++) {
      sval s = {SV_PTR, 0, p, 0, NULL};
      T->fr[0].slots[p] = s;
    }
  }
  while (!R->failed) {
    bool ran = false;
    for (int j = 0; j < n && !R->failed; j++) {
      int t = cfg->reverse_threads ? n - 1 - j : j;
      if (ts[t].state == T_RUN) { step_thread(R, &ts[t]); ran = true; }
    }
    if (R->failed) break;
    if (ran && cfg->quantum > 0) continue; /* turns until every thread blocks */
    if (resolve_shuffles(R, ts, n)) continue;
    int done = 0, bar = 0;
    for (int t = 0; t < n; t++) done += ts[t].state == T_DONE, bar += ts[t].state == T_BARRIER;
    if (done == n) break;
    if (bar + done == n) {
      R->epoch++;
      for (int t = 0; t < n; t++) if (ts[t].state == T_BARRIER) ts[t].state = T_RUN;
      continue;
    }
    ex_fail(R, "threads of block %d wait at different synchronisation points (divergent barrier or partial-warp shuffle)", R->blin);
  }
  for (int t = 0; t < n; t++) {
    while (ts[t].nfr) pop_frame(&ts[t]);
    tr_free(ts[t].fr);
  }
  tr_free(ts);
  for (int b = first_local; b < R->nbufs; b++) free_buf(&R->bufs[b]);
  R->nbufs = first_local;
}

tr_status vk_run(const vk_kernel *k, vx_ctx *cx, const vk_run_cfg *cfg, vk_result *r, tr_diag *d) {
  memset(r, 0, sizeof *r);
  r->pc = vx_const(cx, 1);
  run R = {0};
  R.k = k; R.cx = cx; R.cfg = cfg; R.r = r; R.d = d;
  R.max_steps = cfg->max_steps > 0 ? cfg->max_steps : 200000000;
  int np = vk_nparams(k);
  if (np != cfg->nbufs) {
    tr_diag_errorf(d, "kernel: takes %d parameters, the reference has %d inputs and outputs", np, cfg->nbufs);
    return r->st = TR_ERR_INVALID;
  }
  r->val = tr_xcalloc((size_t)np, sizeof *r->val);
  r->writer_block = tr_xcalloc((size_t)np, sizeof *r->writer_block);
  r->writer_first = tr_xcalloc((size_t)np, sizeof *r->writer_first);
  for (int p = 0; p < np; p++) {
    int64_t bytes = cfg->count[p] * (int64_t)tr_dtype_size(cfg->dtype[p]);
    new_buf(&R, bytes, p);
    R.bufs[p].is_out = cfg->is_out[p];
    if (cfg->is_out[p]) {
      r->writer_block[p] = tr_xmalloc((size_t)(cfg->count[p] + 1) * sizeof(int32_t));
      r->writer_first[p] = tr_xmalloc((size_t)(cfg->count[p] + 1) * sizeof(int32_t));
      for (int64_t e = 0; e < cfg->count[p]; e++) r->writer_block[p][e] = r->writer_first[p][e] = -1;
    }
  }
  R.gbuf = tr_xcalloc((size_t)k->nglobals + 1, sizeof *R.gbuf);
  for (int g = 0; g < k->nglobals; g++) {
    const vglobal *G = &k->globals[g];
    if (G->shared) continue;
    int b = new_buf(&R, G->bytes, -1);
    R.gbuf[g] = b;
    for (int64_t o = 0; G->init && o + G->esize <= G->bytes; o += G->esize) {
      sval s;
      if (G->ety == VT_F32) { float f; memcpy(&f, G->init + o, 4); s = sv_f(vx_const(cx, f)); }
      else if (G->ety == VT_F64) { double f; memcpy(&f, G->init + o, 8); s = sv_f(vx_const(cx, f)); }
      else { int64_t v = 0; memcpy(&v, G->init + o, (size_t)G->esize); s = sv_int(v, G->esize * 8); }
      s.sz = (uint8_t)G->esize;
      R.bufs[b].cell[o] = s;
    }
    if (!G->init) for (int64_t o = 0; o < G->bytes; o++) { R.bufs[b].cell[o] = sv_int(0, 8); R.bufs[b].cell[o].sz = 1; }
  }
  unsigned nb = cfg->grid[0] * cfg->grid[1] * cfg->grid[2];
  for (unsigned b = 0; b < nb && !R.failed; b++) {
    if (cfg->block_mask && !cfg->block_mask[b]) continue;
    R.blin = (int)b;
    R.bid[0] = b % cfg->grid[0];
    R.bid[1] = (b / cfg->grid[0]) % cfg->grid[1];
    R.bid[2] = b / (cfg->grid[0] * cfg->grid[1]);
    run_block(&R);
  }
  /* the outputs' final values */
  for (int p = 0; p < np && !R.failed; p++) {
    if (!cfg->is_out[p]) continue;
    int es = (int)tr_dtype_size(cfg->dtype[p]);
    r->val[p] = tr_xcalloc((size_t)cfg->count[p] + 1, sizeof **r->val);
    bool isf = tr_dtype_is_float(cfg->dtype[p]);
    for (int64_t e = 0; e < cfg->count[p] && !R.failed; e++) {
      sval c = R.bufs[p].cell[e * es];
      if (isf) {
        if (c.k == SV_F) r->val[p][e] = c.e;
        else if (c.k == SV_INT && c.i == 0) r->val[p][e] = vx_const(cx, 0);
        else if (c.k == SV_NONE && cfg->zero_out) r->val[p][e] = vx_const(cx, 0); /* never written, zeroed */
        continue;
      }
      /* integers: the element's bytes as one value (never written: its
       * entry value) */
      vinst li = {0};
      li.mty = VT_INT; li.size = es; li.mbits = es * 8;
      sval at = {SV_PTR, 0, p, e * es, NULL};
      sval v = mem_load(&R, NULL, at, &li);
      if (v.k == SV_INT) r->val[p][e] = vx_bvconst(cx, (uint64_t)v.i, es * 8);
      else if (v.k == SV_BV) r->val[p][e] = v.e;
    }
  }
  r->steps = R.steps;
  for (int b = 0; b < R.nbufs; b++) free_buf(&R.bufs[b]);
  tr_free(R.bufs);
  tr_free(R.gbuf);
  tr_free(R.packs);
  if (R.failed && r->st == TR_OK) r->st = TR_ERR_UNSUPPORTED;
  return r->st;
}

void vk_result_free(vk_result *r, int nbufs) {
  for (int p = 0; r->val && p < nbufs; p++) tr_free(r->val[p]);
  for (int p = 0; r->writer_block && p < nbufs; p++) tr_free(r->writer_block[p]);
  for (int p = 0; r->writer_first && p < nbufs; p++) tr_free(r->writer_first[p]);
  tr_free(r->val);
  tr_free(r->writer_block);
  tr_free(r->writer_first);
  tr_free(r->dec);
  tr_free(r->conds);
  tr_free(r->issues);
  memset(r, 0, sizeof *r);
}
