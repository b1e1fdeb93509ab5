/* eval_sort.c - sort in the exact interpreter. Like E (hlo_evaluator.cc
 * ~4278-4470) every sort is stable, whatever is_stable says: each 1-D
 * slice along the sort dimension is merge-sorted by the comparator, called
 * as cmp(a0, b0, a1, b1, ...) with operand k's two elements at parameters
 * 2k and 2k+1, and all operands are permuted alike. For a comparator that
 * is a strict weak order any stable sort gives these results; for one that
 * is not (a partial-order LT with NaNs) the result depends on the
 * algorithm and may differ from E's. A comparator that is a single compare
 * of two parameters runs without calls.
 * topk is XLA's TopkDecomposer: a stable sort along the last dimension by
 * TOTALORDER greater-than (less-than when largest=false) of the values,
 * carrying an s32 iota, then the first k of each. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  ev_ctx *c;
  const tr_tensor *topk;   /* topk: compare these elements by total order */
  bool largest;            /* topk: descending */
  const tr_instr *in;      /* the sort */
  const tr_comp *k;        /* comparator */
  tr_tensor **xs;          /* operands */
  int n;                   /* operand count */
  const int64_t *off;      /* element offsets of the current slice */
  const tr_instr *fastcmp; /* comparator root when it is compare(p_2i, p_2i+1) */
  int fastop;              /* which operand it compares */
  bool fastswap;           /* compare(p_2i+1, p_2i) */
  tr_status st;            /* first error */
} sorter;

/* Whether element i of the slice sorts before element j. */
static bool less(sorter *s, int64_t i, int64_t j) {
  if (s->st != TR_OK) return false;
  if (s->topk) {
    size_t es = (size_t)tr_dtype_size(s->topk->dtype);
    const char *a = (const char *)s->topk->data + (size_t)s->off[i] * es;
    const char *b = (const char *)s->topk->data + (size_t)s->off[j] * es;
    int c3 = ev_total_cmp(s->topk->dtype, a, b);
    return s->largest ? c3 > 0 : c3 < 0;
  }
  if (s->fastcmp) {
    const tr_tensor *t = s->xs[s->fastop];
    size_t es = (size_t)tr_dtype_size(t->dtype);
    const char *a = (const char *)t->data + (size_t)s->off[i] * es;
    const char *b = (const char *)t->data + (size_t)s->off[j] * es;
    return s->fastswap ? ev_compare_slots(s->fastcmp, t->dtype, b, a)
                       : ev_compare_slots(s->fastcmp, t->dtype, a, b);
  }
  tr_value *args[128] = {0};
  int made = 0;
  for (int q = 0; q < s->n && s->st == TR_OK; q++) {
    const tr_tensor *t = s->xs[q];
    if (!(args[made++] = ev_scalar_at(s->c, s->in, t, (size_t)s->off[i], t->dtype)) ||
        !(args[made++] = ev_scalar_at(s->c, s->in, t, (size_t)s->off[j], t->dtype)))
      s->st = TR_ERR_UNSUPPORTED;
  }
  tr_value *r = NULL;
  if (s->st == TR_OK) s->st = ev_call(s->c, s->in, s->k, args, 2 * s->n, &r);
  for (int q = 0; q < made; q++) tr_value_unref(args[q]);
  bool v = false;
  if (s->st == TR_OK) {
    if (!r->t || r->t->dtype != TR_DT_PRED || tr_tensor_count(r->t) != 1)
      s->st = ev_err(s->c, s->in, TR_ERR_INVALID, "sort comparator did not return pred[]");
    else v = ((unsigned char *)r->t->data)[0] != 0;
  }
  tr_value_unref(r);
  return v;
}

/* Stable top-down merge sort of perm[0..n) using tmp; an element of the
 * right run goes first only when it is strictly less. */
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

/* The comparator's root is compare(p_2i, p_2i+1) (or swapped). */
static void find_fast(sorter *s) {
  const tr_instr *r = s->k->root;
  if (!r || r->op != TR_OP_COMPARE || r->noperands != 2) return;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER) return;
  int64_t pa = a->param_index, pb = b->param_index;
  if (pa / 2 != pb / 2 || pa == pb || pa / 2 >= s->n) return;
  if (!a->shape || a->shape->dtype != s->xs[pa / 2]->dtype) return;
  /* Complex keys go through the call: its compare applies the complex
   * rules (EQ, NE; no order). */
  if (tr_dtypes[a->shape->dtype].kind == TR_DK_COMPLEX) return;
  s->fastcmp = r;
  s->fastop = (int)(pa / 2);
  s->fastswap = pa % 2 == 1;
}

tr_status ev_sort(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  int n = in->noperands;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  if (!k || !da || da->n != 1 || n < 1 || n > 64) return ev_err(c, in, TR_ERR_INVALID, "malformed sort");
  tr_tensor *xs[64], *res[64] = {0};
  for (int i = 0; i < n; i++)
    if (!(xs[i] = ev_want_tensor(c, in, ops[i], i))) return TR_ERR_INVALID;
  const tr_tensor *x = xs[0];
  int dim = (int)da->u.ints[0];
  if (x->rank > TR_TENSOR_MAX_RANK || dim < 0 || dim >= x->rank)
    return ev_err(c, in, TR_ERR_INVALID, "malformed sort");
  for (int i = 0; i < n; i++)
    if (!(res[i] = ev_clone(c, in, xs[i]))) {
      for (int j = 0; j < i; j++) tr_tensor_free(res[j]);
      return TR_ERR_UNSUPPORTED;
    }
  int64_t st[TR_TENSOR_MAX_RANK], len = x->dims[dim];
  ev_strides(x->dims, x->rank, st);
  size_t total = tr_tensor_count(x), nslices = len ? total / (size_t)len : 0;
  int64_t *off = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  int64_t *perm = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  int64_t *tmp = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  sorter s = {c, NULL, false, in, k, xs, n, off, NULL, 0, false, TR_OK};
  find_fast(&s);
  for (size_t q = 0; q < nslices && s.st == TR_OK; q++) {
    /* Slice q: the q-th index of the other dims, row-major. */
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
    merge_sort(&s, perm, tmp, len);
    for (int i = 0; i < n && s.st == TR_OK; i++) {
      size_t es = (size_t)tr_dtype_size(xs[i]->dtype);
      for (int64_t j = 0; j < len; j++)
        memcpy((char *)res[i]->data + (size_t)off[j] * es,
               (const char *)xs[i]->data + (size_t)off[perm[j]] * es, es);
    }
  }
  tr_free(off);
  tr_free(perm);
  tr_free(tmp);
  if (s.st != TR_OK) {
    for (int i = 0; i < n; i++) tr_tensor_free(res[i]);
    return s.st;
  }
  if (n == 1 && in->shape->dtype != TR_DT_TUPLE) {
    *out = tr_value_tensor(res[0]);
  } else {
    tr_value *el[64];
    for (int i = 0; i < n; i++) el[i] = tr_value_tensor(res[i]);
    *out = tr_value_tuple(n, el);
  }
  return TR_OK;
}

tr_status ev_topk(ev_ctx *c, const tr_instr *in, const tr_tensor *x, tr_value **out) {
  const tr_attr *ka = tr_instr_attr(in, TR_ATTR_K), *la = tr_instr_attr(in, TR_ATTR_LARGEST);
  int64_t k = ka ? ka->u.i : 0;
  int r = x->rank;
  if (r < 1 || r > TR_TENSOR_MAX_RANK || k < 0 || k > x->dims[r - 1])
    return ev_err(c, in, TR_ERR_INVALID, "malformed topk");
  int64_t len = x->dims[r - 1], dims[TR_TENSOR_MAX_RANK];
  memcpy(dims, x->dims, sizeof(int64_t) * (size_t)r);
  dims[r - 1] = k;
  tr_tensor *vals = ev_new(c, in, x->dtype, r, dims);
  tr_tensor *idx = vals ? ev_new(c, in, TR_DT_S32, r, dims) : NULL;
  if (!idx) {
    tr_tensor_free(vals);
    return TR_ERR_UNSUPPORTED;
  }
  size_t total = tr_tensor_count(x), rows = len ? total / (size_t)len : 0;
  size_t es = (size_t)tr_dtype_size(x->dtype);
  int64_t *off = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  int64_t *perm = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  int64_t *tmp = tr_xmalloc(sizeof(int64_t) * (size_t)(len ? len : 1));
  sorter s;
  memset(&s, 0, sizeof s);
  s.c = c;
  s.in = in;
  s.topk = x;
  s.largest = !la || la->u.b;
  s.off = off;
  s.st = TR_OK;
  for (size_t q = 0; q < rows; q++) {
    for (int64_t j = 0; j < len; j++) {
      off[j] = (int64_t)q * len + j;
      perm[j] = j;
    }
    merge_sort(&s, perm, tmp, len);
    for (int64_t j = 0; j < k; j++) {
      size_t o = q * (size_t)k + (size_t)j;
      memcpy((char *)vals->data + o * es, (const char *)x->data + (size_t)off[perm[j]] * es, es);
      int32_t v = (int32_t)perm[j];
      memcpy((char *)idx->data + o * 4, &v, 4);
    }
  }
  tr_free(off);
  tr_free(perm);
  tr_free(tmp);
  tr_value *el[2] = {tr_value_tensor(vals), tr_value_tensor(idx)};
  *out = tr_value_tuple(2, el);
  return TR_OK;
}
