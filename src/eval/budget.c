/* budget.c - the evaluator's memory budget: an estimate of the bytes an
 * evaluation holds at its peak, made from the module alone before any
 * tensor is allocated (so a caller can decline a module that would not fit,
 * in microseconds rather than after swapping), and the copy of a tensor
 * that reports running out of memory as a located error. */
#include "evalint.h"

#include <stdlib.h>
#include <string.h>

tr_tensor *ev_clone(ev_ctx *c, const tr_instr *in, const tr_tensor *t) {
  tr_tensor *r = tr_tensor_clone(t);
  if (!r) {
    tr_buf ty = {0};
    tr_tensor_print_type(&ty, t);
    ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: out of memory copying a %s value (%zu bytes)",
           tr_buf_str(&ty), t->nbytes);
    tr_buf_free(&ty);
  }
  return r;
}

bool ev_scratch(ev_ctx *c, const tr_instr *in, int k, const size_t *n, const size_t *es, void **s) {
  for (int i = 0; i < k; i++) {
    size_t m = n[i] ? n[i] : 1;
    s[i] = m <= SIZE_MAX / es[i] ? tr_try_malloc(m * es[i]) : NULL;
    if (s[i]) continue;
    for (int j = 0; j < i; j++) tr_free(s[j]);
    ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: out of memory for a scratch array of %zu elements of %zu bytes",
           n[i], es[i]);
    return false;
  }
  return true;
}

/* ---- the estimate ----
 * Both modes evaluate each computation in schedule order and drop a value
 * after its last use (eval.c), so the peak of a computation is, over its
 * instructions, what is live before it plus its result plus the peak of
 * what it calls. The count is an upper bound in the ways that matter:
 * every array result is a fresh allocation (pass-through ops that share
 * their operand are counted as zero), and the peaks of the callees of one
 * instruction add up. Scratch buffers inside kernels (a dot's packed
 * panels, a sort's index arrays) are below one result's size and covered
 * by the factor the caller leaves between estimate and budget. */

typedef struct {
  const tr_module *m;
  bool shadow;
  double *peak; /* computation id -> peak bytes, < 0 while unknown */
  int npeak;
  int depth;    /* nesting of calls, against cyclic call graphs */
} est;

/* Bytes one element of dt takes: its own size in exact mode; in shadow
 * mode a float element holds a double value (long double for f64), a
 * double bound and a mark, any other element its value and a mark. */
static double elem_bytes(const est *e, tr_dtype dt) {
  double sz = (double)tr_dtype_size(dt);
  if (!e->shadow) return sz;
  if (tr_dtype_is_float(dt)) return (dt == TR_DT_F64 ? sizeof(long double) : sizeof(double)) + sizeof(double) + 1.0;
  return sz + 1.0;
}

static double shape_bytes(const est *e, const tr_shape *s) {
  if (!s) return 0;
  if (s->dtype == TR_DT_TUPLE) {
    double b = 0;
    for (int i = 0; i < s->nelems; i++) b += shape_bytes(e, s->elems[i]);
    return b;
  }
  if (!tr_dtype_is_array(s->dtype)) return 0;
  double n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i] > 0 ? (double)s->dims[i] : 0;
  return n * elem_bytes(e, s->dtype);
}

/* Results that share their operands' storage. */
static bool shares(const tr_instr *in) {
  switch (in->op) {
  case TR_OP_PARAMETER: case TR_OP_TUPLE: case TR_OP_GET_TUPLE_ELEMENT: case TR_OP_OPT_BARRIER:
  case TR_OP_ADD_DEPENDENCY: case TR_OP_AFTER_ALL: case TR_OP_DOMAIN:
    return true;
  default:
    return false;
  }
}

static double comp_peak(est *e, const tr_comp *k);

static double instr_extra(est *e, const tr_instr *in) {
  tr_comp *called[64];
  int n = tr_instr_called(in, called, 64);
  double b = 0;
  for (int i = 0; i < n && i < 64; i++) b += comp_peak(e, called[i]);
  return b;
}

static double comp_peak(est *e, const tr_comp *k) {
  if (k->id >= 0 && k->id < e->npeak && e->peak[k->id] >= 0) return e->peak[k->id];
  if (e->depth > 64) return 0; /* the verifier rejects such modules */
  e->depth++;
  int n = k->ninstrs;
  /* last use of each instruction, by position (the module's ids may be
   * sparse: a map from id to position is built per computation) */
  int maxid = 0;
  for (int i = 0; i < n; i++)
    if (k->instrs[i]->id > maxid) maxid = k->instrs[i]->id;
  int *pos = tr_try_malloc(sizeof(int) * ((size_t)maxid + 1));
  int *last = tr_try_malloc(sizeof(int) * ((size_t)n + 1));
  double *bytes = tr_try_malloc(sizeof(double) * ((size_t)n + 1));
  double peak = 0;
  if (pos && last && bytes) {
    for (int i = 0; i < n; i++)
      if (k->instrs[i]->id >= 0) pos[k->instrs[i]->id] = i;
    for (int i = 0; i < n; i++) last[i] = i;
    for (int i = 0; i < n; i++)
      for (int j = 0; j < k->instrs[i]->noperands; j++) {
        const tr_instr *o = k->instrs[i]->operands[j];
        if (o && o->parent == k && o->id >= 0 && o->id <= maxid) last[pos[o->id]] = i;
      }
    if (k->root && k->root->parent == k && k->root->id >= 0 && k->root->id <= maxid)
      last[pos[k->root->id]] = n;
    double live = 0;
    for (int i = 0; i < n; i++) {
      const tr_instr *in = k->instrs[i];
      bytes[i] = shares(in) ? 0 : shape_bytes(e, in->shape);
      double here = live + bytes[i] + instr_extra(e, in);
      if (here > peak) peak = here;
      live += bytes[i];
      for (int j = 0; j < in->noperands; j++) {
        const tr_instr *o = in->operands[j];
        if (o && o->parent == k && o->id >= 0 && o->id <= maxid && last[pos[o->id]] == i) {
          live -= bytes[pos[o->id]];
          bytes[pos[o->id]] = 0; /* an operand used twice is dropped once */
        }
      }
    }
  }
  tr_free(pos);
  tr_free(last);
  tr_free(bytes);
  e->depth--;
  if (k->id >= 0 && k->id < e->npeak) e->peak[k->id] = peak;
  return peak;
}

uint64_t tr_eval_estimate_bytes(const tr_module *m, bool shadow) {
  if (!m || !m->entry) return 0;
  est e = {m, shadow, NULL, 0, 0};
  e.npeak = m->next_id > 0 ? m->next_id : 0;
  e.peak = tr_try_malloc(sizeof(double) * ((size_t)e.npeak + 1));
  if (!e.peak) return UINT64_MAX;
  for (int i = 0; i < e.npeak; i++) e.peak[i] = -1;
  /* The caller's arguments (exact tensors), the entry's copy of them in
   * the evaluation's form, the peak of the entry, and the outputs handed
   * back (exact tensors; in shadow mode also a double value and bound per
   * element). */
  est exact = {m, false, NULL, 0, 0};
  double args = 0;
  for (int i = 0; i < m->entry->nparams; i++)
    if (m->entry->params && m->entry->params[i])
      args += shape_bytes(&exact, m->entry->params[i]->shape) + shape_bytes(&e, m->entry->params[i]->shape);
  double outs = m->entry->root ? shape_bytes(&exact, m->entry->root->shape) : 0;
  if (shadow && m->entry->root) outs += shape_bytes(&e, m->entry->root->shape);
  double total = args + comp_peak(&e, m->entry) + outs;
  tr_free(e.peak);
  return total >= 1.8e19 ? UINT64_MAX : (uint64_t)total;
}

/* ---- the cost ----
 * A lower bound of the scalar operations one evaluation performs, from
 * the shapes alone: every array result element costs one, a dot or a
 * convolution one per multiply-add, a reduction one per element read, a
 * reduce-window one per window element, a sort n log n, and a called
 * computation its own cost once per call (per element for map, reduce,
 * sort and scatter appliers). A while loop counts one trip of its body
 * and a conditional none of its branches: the bound must never exceed
 * what the evaluation does, so that a caller may decline a module whose
 * bound alone cannot finish before the reference's deadline. */

static double elems_of(const tr_shape *s) {
  if (!s) return 0;
  if (s->dtype == TR_DT_TUPLE) {
    double n = 0;
    for (int i = 0; i < s->nelems; i++) n += elems_of(s->elems[i]);
    return n;
  }
  if (!tr_dtype_is_array(s->dtype)) return 0;
  double n = 1;
  for (int i = 0; i < s->rank; i++) n *= s->dims[i] > 0 ? (double)s->dims[i] : 0;
  return n;
}

static double comp_ops(const tr_comp *k, int depth);

static double instr_ops(const tr_instr *in, int depth) {
  double out = elems_of(in->shape);
  const tr_shape *a = in->noperands > 0 && in->operands[0] ? in->operands[0]->shape : NULL;
  const tr_shape *b = in->noperands > 1 && in->operands[1] ? in->operands[1]->shape : NULL;
  tr_comp *apply = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  double per = apply ? comp_ops(apply, depth + 1) : 0;
  switch (in->op) {
  case TR_OP_DOT: {
    int n = 0;
    const int64_t *cd = tr_attr_ints(in, TR_ATTR_LHS_CONTRACTING_DIMS, &n);
    double k = 1;
    for (int i = 0; i < n && a; i++)
      if (cd[i] >= 0 && cd[i] < a->rank) k *= a->dims[cd[i]] > 0 ? (double)a->dims[cd[i]] : 0;
    return out * k;
  }
  case TR_OP_CONVOLUTION: {
    /* each result element reads the kernel once per output feature: the
     * kernel's elements over its largest dim is at most that */
    double kn = elems_of(b), big = 1;
    for (int i = 0; b && i < b->rank; i++)
      if ((double)b->dims[i] > big) big = (double)b->dims[i];
    return out * (kn / big);
  }
  case TR_OP_REDUCE: {
    double n = 0;
    for (int i = 0; i < in->noperands / 2; i++) n += in->operands[i] ? elems_of(in->operands[i]->shape) : 0;
    return n * (1 + per);
  }
  case TR_OP_REDUCE_WINDOW: {
    tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
    double win = 1;
    for (int i = 0; w && w->kind == TR_AK_WINDOW && i < w->n; i++)
      win *= w->u.win[i].size > 0 ? (double)w->u.win[i].size : 0;
    return out * win * (1 + per);
  }
  case TR_OP_SORT: {
    double n = a ? elems_of(a) : 0, lg = 1;
    for (double m = n; m > 2; m /= 2) lg++;
    return n * lg * (1 + per);
  }
  case TR_OP_MAP:
  case TR_OP_SCATTER:
    return out * (1 + per);
  case TR_OP_CONDITIONAL:
    return out;
  default: {
    tr_comp *called[64];
    int n = tr_instr_called(in, called, 64);
    double c = 0;
    for (int i = 0; i < n && i < 64; i++) c += comp_ops(called[i], depth + 1);
    return out + c;
  }
  }
}

static double comp_ops(const tr_comp *k, int depth) {
  if (!k || depth > 64) return 0; /* the verifier rejects deeper nesting */
  double n = 0;
  for (int i = 0; i < k->ninstrs; i++) n += instr_ops(k->instrs[i], depth);
  return n;
}

double tr_eval_estimate_ops(const tr_module *m) {
  return m && m->entry ? comp_ops(m->entry, 0) : 0;
}
