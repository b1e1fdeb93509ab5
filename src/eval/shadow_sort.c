/* shadow_sort.c - shadow rules of sort and topk. Each slice is
 * merge-sorted stably, as the exact interpreter does, but on the shadow
 * values. With a comparator that is one compare of one operand's keys
 * (and for topk), an element is uncertain when its key interval
 * [v - e, v + e] overlaps another key's in the slice: only then can a
 * correct run put it at another position (an element whose interval
 * overlaps none has the same rank for every value in the bounds). Any
 * other comparator is called in shadow mode, and a slice in which some
 * comparison came out uncertain is uncertain as a whole (every comparison
 * sort compares the pairs adjacent in its result, so no flip can hide
 * from the comparisons made). NaN keys make a slice uncertain: a partial
 * order is not a strict weak one, and the result depends on the
 * algorithm, except under a TOTALORDER compare evaluated with
 * tr_shadow_opts.nan_sign: there a NaN an op made (no stored pattern) is
 * the quiet NaN of that sign, below -inf or above +inf, and overlaps no
 * other key (the general compare's rule, shadow_elem.c; conv-zero-pad's
 * references). On a flushing target the fast path compares the keys as the
 * comparator's compare reads them, denormals as zeros (XLA CPU sorts
 * f32 [7.7e-39, -6.6e-39, inf] as it stands); a TOTALORDER compare
 * orders bit patterns and reads them as they are. A float narrower than
 * f32 (bf16) is read flushed by every comparator, TOTALORDER and topk's
 * too: XLA CPU sorts such an operand in f32, and the comparator's
 * convert back to bf16 flushes it (see read_operand). */
#include "shadowint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  sh_ctx *c;
  const tr_instr *in;     /* the sort or topk */
  const tr_comp *k;       /* comparator (general path) */
  sh_val *const *xs;      /* operands */
  const sh_val *kx;       /* fast path: the key operand as compared */
  int n;                  /* operand count */
  const int64_t *off;     /* element offsets of the current slice */
  int key;                /* fast path: the key operand, else -1 */
  bool swap;              /* fast path: compare(p_2i+1, p_2i) */
  bool total;             /* fast path: TOTALORDER */
  int nan_sign;           /* fast path: a made NaN key's sign (total; 0: none) */
  int dir;                /* fast path: 0 EQ 1 NE 2 LT 3 LE 4 GT 5 GE */
  bool unsure;            /* general path: a comparison was uncertain */
  tr_status st;           /* first error */
} sorter;

static long double key_at(const sh_val *a, size_t i) {
  if (sh_is_flt(a)) return sh_get(a, i);
  return a->dt == TR_DT_PRED || tr_dtypes[a->dt].kind == TR_DK_UINT ? (long double)tr_tensor_get_u(a->t, i)
                                                                     : (long double)tr_tensor_get_i(a->t, i);
}

static double err_at(const sh_val *a, size_t i) { return sh_is_flt(a) ? a->e[i] : 0; }

/* A key's place in the total order: -1 below every number (-NaN), +1
 * above (+NaN), 0 a number. */
static int nan_rank(const sorter *s, long double a) { return isnan(a) ? s->nan_sign : 0; }

static bool fast_less(const sorter *s, long double a, long double b) {
  if (s->swap) {
    long double t = a;
    a = b;
    b = t;
  }
  int c3 = (a > b) - (a < b);
  if (s->nan_sign && (isnan(a) || isnan(b))) {
    int ra = nan_rank(s, a), rb = nan_rank(s, b);
    c3 = (ra > rb) - (ra < rb);
  }
  if (s->total && c3 == 0 && a == 0) c3 = (signbit(b) != 0) - (signbit(a) != 0);
  switch (s->dir) {
  case 0: return c3 == 0;
  case 1: return c3 != 0;
  case 2: return c3 < 0;
  case 3: return c3 <= 0;
  case 4: return c3 > 0;
  default: return c3 >= 0;
  }
}

/* Whether element i of the slice sorts before element j. */
static bool less(sorter *s, int64_t i, int64_t j) {
  if (s->st != TR_OK) return false;
  if (s->key >= 0) {
    const sh_val *a = s->kx;
    return fast_less(s, key_at(a, (size_t)s->off[i]), key_at(a, (size_t)s->off[j]));
  }
  sh_val *args[128] = {0};
  int made = 0;
  for (int q = 0; q < s->n && s->st == TR_OK; q++) {
    if (!(args[made++] = sh_scalar_at(s->c, s->in, s->xs[q], (size_t)s->off[i])) ||
        !(args[made++] = sh_scalar_at(s->c, s->in, s->xs[q], (size_t)s->off[j])))
      s->st = TR_ERR_UNSUPPORTED;
  }
  sh_val *r = NULL;
  if (s->st == TR_OK) s->st = sh_call(s->c, s->in, s->k, args, 2 * s->n, &r);
  for (int q = 0; q < made; q++) sh_unref(args[q]);
  bool v = false;
  if (s->st == TR_OK) {
    if (!sh_is_arr(r) || r->dt != TR_DT_PRED || r->n != 1)
      s->st = ev_err(&s->c->ev, s->in, TR_ERR_INVALID, "sort comparator did not return pred[]");
    else {
      v = ((unsigned char *)r->t->data)[0] != 0;
      s->unsure |= r->u[0] != 0;
    }
  }
  sh_unref(r);
  return v;
}

static void merge_sort(sorter *s, int64_t *perm, int64_t *tmp, int64_t n) {
  if (n < 2) return;
  int64_t h = n / 2;
  merge_sort(s, perm, tmp, h);
  merge_sort(s, perm + h, tmp, n - h);
  int64_t i = 0, j = h, o = 0;
  while (i < h && j < n) {
    if (less(s, perm[j], perm[i])) tmp[o++] = perm[j++];
    else tmp[o++] = perm[i++];
  }
  while (i < h) tmp[o++] = perm[i++];
  while (j < n) tmp[o++] = perm[j++];
  memcpy(perm, tmp, sizeof(int64_t) * (size_t)n);
}

typedef struct {
  long double lo, hi; /* the key interval, widened by a hair when not a point */
  int64_t j;          /* slice position */
} ival;

static int by_lo(const void *a, const void *b) {
  const ival *x = a, *y = b;
  return (x->lo > y->lo) - (x->lo < y->lo);
}

/* mark[j] = 1 for each slice element whose key interval overlaps
 * another's (closed intervals; two equal exact keys are a tie that the
 * stable order settles, not an overlap). An uncertain key spans all. A
 * certain NaN key overlaps nothing where its sign is given (nan_sign:
 * made NaNs of one pattern, outside every number, tie with each other),
 * and makes the slice uncertain otherwise. */
static void overlaps(const sh_val *a, int nan_sign, const int64_t *off, int64_t len, unsigned char *mark,
                     ival *iv) {
  bool nan = false;
  int64_t cnt = 0;
  for (int64_t j = 0; j < len; j++) {
    size_t i = (size_t)off[j];
    long double v = key_at(a, i), e = err_at(a, i);
    mark[j] = 0;
    if (isnan(v) && nan_sign && !a->u[i]) continue;
    nan |= isnan(v);
    if (a->u[i]) {
      iv[cnt].lo = -INFINITY;
      iv[cnt].hi = INFINITY;
    } else if (e > 0) {
      /* Strict tests on the widened interval act as closed ones. */
      iv[cnt].lo = nextafterl(v - e, -INFINITY);
      iv[cnt].hi = nextafterl(v + e, INFINITY);
    } else {
      iv[cnt].lo = iv[cnt].hi = v;
    }
    iv[cnt++].j = j;
  }
  if (nan) {
    memset(mark, 1, (size_t)len);
    return;
  }
  qsort(iv, (size_t)cnt, sizeof(ival), by_lo);
  long double maxhi = -INFINITY;
  for (int64_t q = 0; q < cnt; q++) {
    bool before = q > 0 && maxhi > iv[q].lo;
    bool after = q + 1 < cnt && iv[q + 1].lo < iv[q].hi;
    if (before || after) mark[iv[q].j] = 1;
    if (iv[q].hi > maxhi) maxhi = iv[q].hi;
  }
  /* Infinite intervals (uncertain keys) overlap everything, points
   * included. */
  for (int64_t q = 0; q < cnt; q++)
    if (iv[q].lo == -INFINITY && iv[q].hi == INFINITY) {
      memset(mark, 1, (size_t)len);
      return;
    }
}

/* mark[j] = 1 for each slice element whose key a flush made zero (kx,
 * from a) while another key of the slice is zero too: equal keys of
 * different values, which a sort that is not stable may put in any
 * order. */
static void flushed_ties(const sh_val *a, const sh_val *kx, const int64_t *off, int64_t len,
                         unsigned char *mark) {
  int64_t zeros = 0;
  for (int64_t j = 0; j < len; j++) zeros += key_at(kx, (size_t)off[j]) == 0;
  if (zeros < 2) return;
  for (int64_t j = 0; j < len; j++) {
    size_t i = (size_t)off[j];
    if (key_at(kx, i) == 0 && key_at(a, i) != 0) mark[j] = 1;
  }
}

/* Whether a flushing target's comparator reads operands of dt flushed
 * whatever it does with them: XLA CPU sorts a float narrower than f32 in
 * f32 and converts each parameter of the comparator back, and that
 * convert flushes (jax 0.10.2: a stable bf16 sort by TOTALORDER LT, or by
 * LT of the bitcast s16 patterns, and a bf16 topk order 1e-40 and 1e-38
 * as the ties +0 and +0, by position, and -1e-40 with -0 below them;
 * seed-28 xla-cpu campaign, mismatch-topk-s32 and mismatch-copy-s32). f16
 * is not flushed (docs/PROFILES.md), and f32 or f64 keys reach the
 * comparator as they are. */
static bool read_flushed(tr_dtype dt) { return tr_dtype_is_float(dt) && tr_dtypes[dt].bits < 32; }

/* Operand a as the comparator reads it: flushed where read_flushed (the
 * flush itself applies only to the dtypes the target flushes), else a
 * itself (one more reference); NULL after a located error. */
static sh_val *read_operand(sh_ctx *c, const tr_instr *in, sh_val *a) {
  return read_flushed(a->dt) ? sh_flush_read(c, in, a) : sh_ref(a);
}

/* The comparator's root is compare(p_2i, p_2i+1) (or swapped) on a
 * parameter of the operand's own type. */
static void find_fast(sorter *s) {
  s->key = -1;
  const tr_instr *r = s->k->root;
  if (!r || r->op != TR_OP_COMPARE || r->noperands != 2) return;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER) return;
  int64_t pa = a->param_index, pb = b->param_index;
  if (pa / 2 != pb / 2 || pa == pb || pa / 2 >= s->n) return;
  const sh_val *x = s->xs[pa / 2];
  if (!a->shape || a->shape->dtype != x->dt) return;
  if (!sh_is_flt(x) && tr_dtypes[x->dt].bits > 63 && tr_dtypes[x->dt].kind == TR_DK_UINT) return;
  const tr_attr *da = tr_instr_attr(r, TR_ATTR_DIRECTION), *ta = tr_instr_attr(r, TR_ATTR_TYPE);
  static const char *names[] = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  s->dir = 0;
  for (int i = 0; i < 6; i++)
    if (da && da->u.s && strcmp(da->u.s, names[i]) == 0) s->dir = i;
  /* EQ, NE, LE and GE are not strict orders: the general path. */
  if (s->dir != 2 && s->dir != 4) return;
  s->total = ta && ta->u.s && strcmp(ta->u.s, "TOTALORDER") == 0;
  s->key = (int)(pa / 2);
  s->swap = pa % 2 == 1;
}

tr_status sh_sort(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  int n = in->noperands;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  if (!k || !da || da->n != 1 || n < 1 || n > 64) return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed sort");
  for (int i = 0; i < n; i++)
    if (!sh_is_arr(ops[i]) || ops[i]->n != ops[0]->n)
      return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed sort");
  const sh_val *x = ops[0];
  int dim = (int)da->u.ints[0];
  if (x->rank > TR_TENSOR_MAX_RANK || dim < 0 || dim >= x->rank)
    return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed sort");
  sh_val *res[64] = {0};
  for (int i = 0; i < n; i++)
    if (!(res[i] = sh_arr_new(c, in, ops[i]->dt, ops[i]->rank, ops[i]->dims))) {
      for (int j = 0; j < i; j++) sh_unref(res[j]);
      return TR_ERR_UNSUPPORTED;
    }
  int64_t st[TR_TENSOR_MAX_RANK], len = x->dims[dim];
  ev_strides(x->dims, x->rank, st);
  size_t nslices = len ? x->n / (size_t)len : 0, m = (size_t)(len ? len : 1);
  int64_t *off = tr_xmalloc(sizeof(int64_t) * m), *perm = tr_xmalloc(sizeof(int64_t) * m);
  int64_t *tmp = tr_xmalloc(sizeof(int64_t) * m);
  unsigned char *mark = tr_xmalloc(m);
  ival *iv = tr_xmalloc(sizeof(ival) * m);
  /* The operands as the comparator reads them (read_operand). */
  sh_val *rd[64] = {0};
  bool rd_ok = true;
  for (int i = 0; i < n && rd_ok; i++) rd_ok = (rd[i] = read_operand(c, in, ops[i])) != NULL;
  sorter s = {c, in, k, rd, NULL, n, off, -1, false, false, 0, 0, false, rd_ok ? TR_OK : TR_ERR_UNSUPPORTED};
  if (rd_ok) find_fast(&s);
  /* Made NaN keys (no stored pattern) ordered by the given sign; a key
   * holding NaNs read from a tensor keeps them uncertain, as the general
   * compare does. */
  if (s.key >= 0 && s.total && c->nan_sign && !ops[s.key]->bits && !ops[s.key]->src) s.nan_sign = c->nan_sign;
  /* The keys as the comparator reads them: flushed unless it compares
   * bit patterns (TOTALORDER) of operands that reach it unflushed. */
  sh_val *kx = NULL;
  if (s.st != TR_OK ||
      (s.key >= 0 && !(kx = s.total ? sh_ref(rd[s.key]) : sh_flush_read(c, in, rd[s.key])))) {
    for (int i = 0; i < n; i++) {
      sh_unref(res[i]);
      sh_unref(rd[i]);
    }
    tr_free(off);
    tr_free(perm);
    tr_free(tmp);
    tr_free(mark);
    tr_free(iv);
    return TR_ERR_UNSUPPORTED;
  }
  s.kx = kx;
  const tr_attr *sa = tr_instr_attr(in, TR_ATTR_IS_STABLE);
  bool unstable = !(sa && sa->u.b);
  for (size_t q = 0; q < nslices && s.st == TR_OK; q++) {
    int64_t base = 0;
    size_t rem = q;
    for (int d = x->rank - 1; d >= 0; d--) {
      if (d == dim) continue;
      base += (int64_t)(rem % (size_t)x->dims[d]) * st[d];
      rem /= (size_t)x->dims[d];
    }
    for (int64_t j = 0; j < len; j++) {
      off[j] = base + j * st[dim];
      perm[j] = j;
    }
    s.unsure = false;
    merge_sort(&s, perm, tmp, len);
    if (s.key >= 0) overlaps(kx, s.nan_sign, off, len, mark, iv);
    else memset(mark, s.unsure, (size_t)len);
    if (kx && kx != ops[s.key] && unstable) flushed_ties(ops[s.key], kx, off, len, mark);
    for (int i = 0; i < n; i++) {
      const sh_val *a = ops[i];
      sh_val *r = res[i];
      size_t es = sh_is_flt(a) ? 0 : (size_t)tr_dtype_size(a->dt);
      for (int64_t j = 0; j < len; j++) {
        size_t d = (size_t)off[j], sidx = (size_t)off[perm[j]];
        if (es) memcpy((char *)r->t->data + d * es, (const char *)a->t->data + sidx * es, es);
        else sh_copy(r, d, a, sidx);
        r->u[d] = a->u[sidx] | mark[perm[j]];
      }
    }
  }
  tr_free(off);
  tr_free(perm);
  tr_free(tmp);
  tr_free(mark);
  tr_free(iv);
  sh_unref(kx);
  for (int i = 0; i < n; i++) sh_unref(rd[i]);
  if (s.st != TR_OK) {
    for (int i = 0; i < n; i++) sh_unref(res[i]);
    return s.st;
  }
  *out = n == 1 && in->shape->dtype != TR_DT_TUPLE ? res[0] : sh_tuple(n, res);
  return TR_OK;
}

/* topk: XLA's decomposition, a stable sort by TOTALORDER greater-than
 * (less-than when largest=false) carrying an s32 iota, then the first k;
 * its keys are read as a sort's comparator reads them (read_operand). */
tr_status sh_topk(sh_ctx *c, const tr_instr *in, sh_val **ops, sh_val **out) {
  const tr_attr *ka = tr_instr_attr(in, TR_ATTR_K), *la = tr_instr_attr(in, TR_ATTR_LARGEST);
  int64_t kk = ka ? ka->u.i : 0;
  const sh_val *x = ops[0];
  int r = x->rank;
  if (!sh_is_arr(x) || r < 1 || r > TR_TENSOR_MAX_RANK || kk < 0 || kk > x->dims[r - 1])
    return ev_err(&c->ev, in, TR_ERR_INVALID, "malformed topk");
  int64_t len = x->dims[r - 1], dims[TR_TENSOR_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
  dims[r - 1] = kk;
  sh_val *kx = read_operand(c, in, ops[0]);
  sh_val *vals = kx ? sh_arr_new(c, in, x->dt, r, dims) : NULL;
  sh_val *idx = vals ? sh_arr_new(c, in, TR_DT_S32, r, dims) : NULL;
  if (!idx) {
    sh_unref(vals);
    sh_unref(kx);
    return TR_ERR_UNSUPPORTED;
  }
  size_t rows = len ? x->n / (size_t)len : 0, m = (size_t)(len ? len : 1);
  int64_t *off = tr_xmalloc(sizeof(int64_t) * m), *perm = tr_xmalloc(sizeof(int64_t) * m);
  int64_t *tmp = tr_xmalloc(sizeof(int64_t) * m);
  unsigned char *mark = tr_xmalloc(m);
  ival *iv = tr_xmalloc(sizeof(ival) * m);
  sorter s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.in = in;
  s.xs = ops;
  s.kx = kx; /* TOTALORDER: the patterns as they reach the comparator */
  s.n = 1;
  s.off = off;
  s.key = 0;
  s.total = true;
  s.dir = !la || la->u.b ? 4 : 2;
  if (c->nan_sign && !x->bits && !x->src) s.nan_sign = c->nan_sign;
  s.st = TR_OK;
  bool flt = sh_is_flt(x);
  size_t es = flt ? 0 : (size_t)tr_dtype_size(x->dt);
  for (size_t q = 0; q < rows; q++) {
    for (int64_t j = 0; j < len; j++) {
      off[j] = (int64_t)q * len + j;
      perm[j] = j;
    }
    merge_sort(&s, perm, tmp, len);
    overlaps(kx, s.nan_sign, off, len, mark, iv);
    for (int64_t j = 0; j < kk; j++) {
      size_t o = q * (size_t)kk + (size_t)j, sidx = (size_t)off[perm[j]];
      if (flt) {
        sh_copy(vals, o, x, sidx);
      } else {
        memcpy((char *)vals->t->data + o * es, (const char *)x->t->data + sidx * es, es);
      }
      vals->u[o] = x->u[sidx] | mark[perm[j]];
      int32_t v = (int32_t)perm[j];
      memcpy((char *)idx->t->data + o * 4, &v, 4);
      idx->u[o] = vals->u[o];
    }
  }
  tr_free(off);
  tr_free(perm);
  tr_free(tmp);
  tr_free(mark);
  tr_free(iv);
  sh_unref(kx);
  sh_val *el[2] = {vals, idx};
  *out = sh_tuple(2, el);
  return TR_OK;
}
