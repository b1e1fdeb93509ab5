/* eval.c - the exact interpreter: tr_value, the exact value domain of the
 * interpreter core (core.h: frames and the ops that route values live
 * there), instruction dispatch, reduce, single-participant collectives,
 * constants and the public entry points. The op kernels live in eval_*.c
 * (evalint.h). All state lives in an ev_ctx made per tr_eval call. */
#include "core.h"

#include <stdlib.h>
#include <ctype.h>
#include <string.h>

/* ---- values ---- */

/* tr_value is the exact domain's ev_v (its first member). */
#define V(v) ((tr_value *)(v))
#define W(v) ((ev_v *)(v))

static bool x_drop(ev_v *v) {
  tr_tensor_free(V(v)->t);
  return false;
}
static const ev_layout exact_layout = {sizeof(tr_value), x_drop};

tr_value *tr_value_tensor(tr_tensor *t) {
  tr_value *v = V(ev_value_array(&exact_layout));
  v->t = t;
  return v;
}

tr_value *tr_value_tuple(int n, tr_value *const *elems) {
  return V(ev_value_tuple(&exact_layout, n, (ev_v *const *)elems));
}

tr_value *tr_value_token(void) { return V(ev_value_token(&exact_layout)); }
tr_value *tr_value_ref(tr_value *v) { return V(ev_value_ref(W(v))); }
void tr_value_unref(tr_value *v) { ev_value_unref(&exact_layout, W(v)); }

/* ---- errors and results ---- */

const char *ev_opname(const tr_instr *in) {
  return in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
}

tr_status ev_err(ev_ctx *c, const tr_instr *in, tr_status code, const char *fmt, ...) {
  tr_buf b = {0};
  const char *file = c->m->file ? c->m->file : "<module>";
  if (in && in->line > 0) tr_buf_printf(&b, "%s:%d:%d: error: ", file, in->line, in->col);
  else tr_buf_printf(&b, "%s: error: ", file);
  if (in) tr_buf_printf(&b, "in %%%s: ", in->name);
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(&b, fmt, ap);
  va_end(ap);
  tr_diag_errorf(c->d, "%s", tr_buf_str(&b));
  tr_buf_free(&b);
  return code;
}

tr_tensor *ev_new(ev_ctx *c, const tr_instr *in, tr_dtype dt, int rank, const int64_t *dims) {
  if (c->opts.max_bytes > 0 && tr_dtype_is_array(dt) && rank >= 0 && rank <= TR_TENSOR_MAX_RANK) {
    /* Checked before allocating: a fuzz loop's modules may ask for more
     * than it wants to spend. */
    double bytes = tr_dtype_size(dt);
    for (int i = 0; i < rank; i++) bytes *= dims[i] > 0 ? (double)dims[i] : 0;
    if (bytes > (double)c->opts.max_bytes) {
      ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: a result of %.0f bytes is over the limit of %lld",
             bytes, (long long)c->opts.max_bytes);
      return NULL;
    }
  }
  tr_diag local = {0};
  tr_tensor *t = tr_tensor_new(dt, rank, dims, &local);
  if (!t) {
    const char *why = tr_diag_first(&local);
    ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: cannot make the result: %s",
           why ? why : "no memory");
  }
  tr_diag_clear(&local);
  return t;
}

/* ---- shape checks ---- */


/* What desugar.c leaves of a set-dimension-size: a dynamic value whose
 * padding reaches a user that keeps it (an output, an elementwise op). */
static tr_status sds_unsupported(ev_ctx *c, const tr_instr *in) {
  return ev_err(c, in, TR_ERR_UNSUPPORTED,
                "unsupported: set-dimension-size whose padding is not static (evaluated only when every "
                "user is a reduce over the dynamic dim or a get-dimension-size of it)");
}

static bool has_dynamic(const tr_shape *s) {
  if (!s) return false;
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (has_dynamic(s->elems[i])) return true;
    return false;
  }
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return true;
  return false;
}

/* The first array leaf whose element type the arithmetic kernels do not
 * take, or TR_DT_COUNT. Every integer width is taken (values are held
 * canonical and wrapped to the type, 1 to 64 bits), and every real float
 * type: the kernels work on the exact double value and round once to the
 * type (tr_float_from_double has each format's NaN, inf, saturation and
 * fnuz zero rules); complex is gated separately (dtype_gate). */
static tr_dtype noncore(const tr_shape *s) {
  if (!s) return TR_DT_COUNT;
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++) {
      tr_dtype t = noncore(s->elems[i]);
      if (t != TR_DT_COUNT) return t;
    }
    return TR_DT_COUNT;
  }
  tr_dkind k = tr_dtypes[s->dtype].kind;
  if (tr_dtypes[s->dtype].core || k == TR_DK_FLOAT || k == TR_DK_COMPLEX || k == TR_DK_SINT ||
      k == TR_DK_UINT)
    return TR_DT_COUNT; /* tokens and opaque values carry no elements to compute */
  return s->dtype;
}

/* The first c64/c128 leaf of in's result or operands. */
static tr_dtype complex_leaf_of(const tr_shape *s) {
  if (!s) return TR_DT_COUNT;
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++) {
      tr_dtype t = complex_leaf_of(s->elems[i]);
      if (t != TR_DT_COUNT) return t;
    }
    return TR_DT_COUNT;
  }
  return tr_dtypes[s->dtype].kind == TR_DK_COMPLEX ? s->dtype : TR_DT_COUNT;
}

static tr_dtype complex_leaf(const tr_instr *in) {
  tr_dtype t = complex_leaf_of(in->shape);
  for (int i = 0; i < in->noperands && t == TR_DT_COUNT; i++) t = complex_leaf_of(in->operands[i]->shape);
  return t;
}

/* Ops this interpreter evaluates (ops.def modes 'x'); anything else is
 * "unsupported: op". */
static bool implemented(tr_op op) { return tr_op_can(op, TR_MODE_EXACT); }

/* The element-type checks every op passes before its kernel: non-core
 * types only in ops that move values, complex only where eval_complex.c
 * computes it. */
static tr_status dtype_gate(ev_ctx *c, const tr_instr *in) {
  if (tr_ops[in->op].flags & TR_OPF_M) return TR_OK; /* moves values only (ops.def) */
  tr_dtype bad = noncore(in->shape);
  for (int i = 0; i < in->noperands && bad == TR_DT_COUNT; i++) bad = noncore(in->operands[i]->shape);
  if (bad == TR_DT_COUNT && ev_complex_involved(in) && !ev_complex_ok(in->op))
    bad = complex_leaf(in);
  if (bad != TR_DT_COUNT)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s elements in %s", tr_dtype_name(bad),
                  tr_ops[in->op].name);
  return TR_OK;
}


/* ---- the exact domain (core.h) ---- */

static tr_status eval_instr(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out);

static void x_shape(const ev_v *v, tr_dtype *dt, int *rank, const int64_t **dims) {
  *dt = V(v)->t->dtype;
  *rank = V(v)->t->rank;
  *dims = V(v)->t->dims;
}
static tr_status x_instr(void *dc, const tr_instr *in, ev_v **ops, ev_v **out) {
  return eval_instr(dc, in, (tr_value **)ops, (tr_value **)out);
}
/* Exact values are certain. */
static bool x_control(const ev_v *v, tr_dtype *dt, uint64_t *val, bool *unsure) {
  const tr_tensor *t = V(v)->t;
  if (!t || tr_tensor_count(t) != 1) return false;
  *dt = t->dtype;
  *val = 0;
  if (!tr_dtype_is_float(t->dtype) && tr_dtypes[t->dtype].kind != TR_DK_COMPLEX) ev_load_ints(t, val);
  *unsure = false;
  return true;
}
static ev_v *x_zero(void *dc, const tr_instr *in, const tr_shape *s) {
  return W(ev_zero_value(dc, in, s));
}
static tr_status x_arg(void *dc, const tr_instr *p, const tr_tensor *a, bool top, ev_v **out) {
  tr_tensor *cl = ev_clone(dc, p, a);
  if (!cl) return TR_ERR_UNSUPPORTED; /* ev_clone said why */
  *out = W(tr_value_tensor(cl));
  return TR_OK;
}
/* map over two arrays whose computation is a binary kernel op(p0, p1):
 * the kernel over whole arrays, the same operations per element. */
static tr_status x_map_whole(void *dc, const tr_instr *in, const tr_comp *k, ev_v **ops, ev_v **out) {
  tr_op bop;
  bool swap;
  tr_tensor *r = NULL;
  *out = NULL;
  if (in->noperands != 2 || V(ops[1])->t->dtype != V(ops[0])->t->dtype ||
      !ev_simple_binary(k, V(ops[0])->t->dtype, &bop, &swap))
    return TR_OK;
  const tr_tensor *x = V(ops[0])->t, *y = V(ops[1])->t;
  const tr_instr *fake = k->root;
  tr_status st = swap ? ev_binary(dc, fake, y, x, &r) : ev_binary(dc, fake, x, y, &r);
  if (st == TR_OK) *out = W(tr_value_tensor(r));
  return st;
}
static ev_v *x_array(void *dc, const tr_instr *in, const tr_shape *s) {
  tr_tensor *t = ev_new(dc, in, s->dtype, s->rank, s->dims);
  return t ? W(tr_value_tensor(t)) : NULL;
}
static size_t x_count(const ev_v *a) { return tr_tensor_count(V(a)->t); }
static ev_v *x_scalar_at(void *dc, const tr_instr *in, const ev_v *a, size_t i) {
  const tr_tensor *t = V(a)->t;
  return W(ev_scalar_at(dc, in, t, i, t->dtype));
}
static bool x_put(ev_v *a, size_t i, const ev_v *s) {
  tr_tensor *r = V(a)->t;
  const tr_tensor *t = V(s)->t;
  if (!t || t->dtype != r->dtype || t->rank != 0) return false;
  size_t es = (size_t)tr_dtype_size(r->dtype);
  memcpy((char *)r->data + i * es, t->data, es);
  return true;
}

/* No operand or unsure hooks: exact values are whole and certain. */
static const ev_domain exact_domain = {
  .name = "value", .layout = &exact_layout, .shape = x_shape, .instr = x_instr,
  .control = x_control, .zero = x_zero, .arg = x_arg, .map_whole = x_map_whole,
  .array = x_array, .count = x_count, .scalar_at = x_scalar_at, .put = x_put,
};

tr_status ev_call(ev_ctx *c, const tr_instr *caller, const tr_comp *k, tr_value *const *params,
                  int np, tr_value **out) {
  ev_core core = {&exact_domain, c, c};
  return evc_call(&core, caller, k, (ev_v *const *)params, np, (ev_v **)out);
}

/* ---- helpers for ops that call computations ---- */

/* A scalar value holding element i of t, converted to dt. */
tr_value *ev_scalar_at(ev_ctx *c, const tr_instr *in, const tr_tensor *t, size_t i, tr_dtype dt) {
  tr_tensor *s = ev_new(c, in, t->dtype, 0, NULL);
  if (!s) return NULL;
  size_t es = (size_t)tr_dtype_size(t->dtype);
  memcpy(s->data, (const char *)t->data + i * es, es);
  if (dt != t->dtype) {
    tr_tensor *cv = ev_convert_to(c, in, s, dt);
    tr_tensor_free(s);
    if (!cv) return NULL;
    s = cv;
  }
  return tr_value_tensor(s);
}

/* The computation's root is op(param a, param b) on scalars of one type
 * dt with a binary kernel: *swap tells whether it is op(p1, p0). Lets
 * reduce and map run whole arrays through the kernel instead of one call
 * per element. */
bool ev_simple_binary(const tr_comp *k, tr_dtype dt, tr_op *op, bool *swap) {
  const tr_instr *r = k->root;
  if (!r || !tr_op_is_binary_kernel(r->op) || r->noperands != 2 || k->nparams != 2) return false;
  const tr_instr *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER || a == b) return false;
  const tr_shape *sa = a->shape, *sb = b->shape, *sr = r->shape;
  if (!sa || !sb || !sr || sa->rank || sb->rank || sr->rank) return false;
  if (sa->dtype != dt || sb->dtype != dt || sr->dtype != dt) return false;
  /* Complex combiners run as calls (the array kernels are real). */
  if (tr_dtypes[dt].kind == TR_DK_COMPLEX) return false;
  *op = r->op;
  *swap = a->param_index == 1;
  return true;
}

tr_tensor *ev_want_tensor(ev_ctx *c, const tr_instr *in, tr_value *v, int i) {
  if (v && v->t) return v->t;
  ev_err(c, in, TR_ERR_INVALID, "operand %d is not an array", i);
  return NULL;
}

/* ---- reduce ---- */

static tr_status eval_reduce(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  int nin = in->noperands / 2;
  const tr_comp *k = tr_attr_comp(in, TR_ATTR_TO_APPLY);
  const tr_attr *da = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
  if (!k || !da || nin < 1) return ev_err(c, in, TR_ERR_INVALID, "malformed reduce");
  tr_tensor *xs[2 * 64];
  if (nin > 64) return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: reduce of more than 64 inputs");
  for (int i = 0; i < 2 * nin; i++)
    if (!(xs[i] = ev_want_tensor(c, in, ops[i], i))) return TR_ERR_INVALID;
  const tr_tensor *x0 = xs[0];
  int rank = x0->rank;
  if (rank > TR_TENSOR_MAX_RANK)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: rank above %d", TR_TENSOR_MAX_RANK);
  int64_t st[TR_TENSOR_MAX_RANK], kd[TR_TENSOR_MAX_RANK], ks[TR_TENSOR_MAX_RANK];
  int64_t rd[TR_TENSOR_MAX_RANK], rs[TR_TENSOR_MAX_RANK];
  ev_strides(x0->dims, rank, st);
  int nk = 0, nr = 0;
  for (int d = 0; d < rank; d++) {
    bool red = false;
    for (int j = 0; j < da->n; j++) red |= da->u.ints[j] == d;
    if (red) {
      rd[nr] = x0->dims[d];
      rs[nr++] = st[d];
    } else {
      kd[nk] = x0->dims[d];
      ks[nk++] = st[d];
    }
  }
  /* Offsets of the kept elements (the outputs) and of the reduced ones in
   * increasing row-major order: the order the reducer sees them. */
  size_t nout = 1, nred = 1;
  for (int i = 0; i < nk; i++) nout *= (size_t)kd[i];
  for (int i = 0; i < nr; i++) nred *= (size_t)rd[i];
  void *offs[2];
  size_t noffs[2] = {nout, nred}, eoffs[2] = {sizeof(int64_t), sizeof(int64_t)};
  if (!ev_scratch(c, in, 2, noffs, eoffs, offs)) return TR_ERR_UNSUPPORTED;
  int64_t *ko = offs[0], *ro = offs[1];
  for (size_t o = 0; o < nout; o++) {
    size_t rem = o;
    ko[o] = 0;
    for (int i = nk - 1; i >= 0; i--) {
      ko[o] += (int64_t)(rem % (size_t)kd[i]) * ks[i];
      rem /= (size_t)kd[i];
    }
  }
  for (size_t q = 0; q < nred; q++) {
    size_t rem = q;
    ro[q] = 0;
    for (int i = nr - 1; i >= 0; i--) {
      ro[q] += (int64_t)(rem % (size_t)rd[i]) * rs[i];
      rem /= (size_t)rd[i];
    }
  }
  tr_tensor *res[64] = {0};
  tr_status stt = TR_OK;
  for (int i = 0; i < nin && stt == TR_OK; i++) {
    const tr_shape *os = in->shape->dtype == TR_DT_TUPLE ? in->shape->elems[i] : in->shape;
    if (!(res[i] = ev_new(c, in, os->dtype, os->rank, os->dims))) stt = TR_ERR_UNSUPPORTED;
  }
  tr_op bop;
  bool swap;
  tr_dtype dt = x0->dtype;
  if (stt != TR_OK) {
    /* fall through to cleanup */
  } else if (nin == 1 && xs[1]->dtype == dt && res[0]->dtype == dt && ev_simple_binary(k, dt, &bop, &swap)) {
    /* Whole rows at a time: acc[o] = f(acc[o], x[o, q]) for q in order;
     * the same sequence of operations per output as one call each. */
    size_t n = tr_tensor_count(x0);
    if (tr_dtype_is_float(dt)) {
      void *s[3];
      size_t ns[3] = {n, nout, nout}, es[3] = {sizeof(double), sizeof(double), sizeof(double)};
      if (!ev_scratch(c, in, 3, ns, es, s)) {
        stt = TR_ERR_UNSUPPORTED;
        goto done;
      }
      double *x = s[0], init, *acc = s[1], *buf = s[2];
      ev_load_flts(x0, x);
      ev_load_flts(xs[1], &init);
      for (size_t o = 0; o < nout; o++) acc[o] = init;
      for (size_t q = 0; q < nred; q++) {
        for (size_t o = 0; o < nout; o++) buf[o] = x[ro[q] + ko[o]];
        if (swap) ev_flt_binary(bop, dt, buf, acc, acc, nout);
        else ev_flt_binary(bop, dt, acc, buf, acc, nout);
        ev_round_flts(dt, acc, nout);
      }
      ev_store_flts(res[0], acc);
      tr_free(x);
      tr_free(acc);
      tr_free(buf);
    } else {
      void *s[3];
      size_t ns[3] = {n, nout, nout}, es[3] = {sizeof(uint64_t), sizeof(uint64_t), sizeof(uint64_t)};
      if (!ev_scratch(c, in, 3, ns, es, s)) {
        stt = TR_ERR_UNSUPPORTED;
        goto done;
      }
      uint64_t *x = s[0], init, *acc = s[1], *buf = s[2];
      ev_load_ints(x0, x);
      ev_load_ints(xs[1], &init);
      for (size_t o = 0; o < nout; o++) acc[o] = init;
      for (size_t q = 0; q < nred; q++) {
        for (size_t o = 0; o < nout; o++) buf[o] = x[ro[q] + ko[o]];
        if (swap) ev_int_binary(bop, dt, buf, acc, acc, nout);
        else ev_int_binary(bop, dt, acc, buf, acc, nout);
        /* Keep the canonical form (e.g. s8 wraps at each step). */
        ev_canon_ints(dt, acc, nout);
      }
      ev_store_ints(res[0], acc);
      tr_free(x);
      tr_free(acc);
      tr_free(buf);
    }
  } else {
    /* One call of to_apply per (output, reduced element). */
    tr_value *args[128];
    for (size_t o = 0; o < nout && stt == TR_OK; o++) {
      tr_value *acc[64] = {0};
      for (int i = 0; i < nin && stt == TR_OK; i++)
        if (!(acc[i] = ev_scalar_at(c, in, xs[nin + i], 0, res[i]->dtype))) stt = TR_ERR_UNSUPPORTED;
      for (size_t q = 0; q < nred && stt == TR_OK; q++) {
        int made = 0;
        for (int i = 0; i < nin; i++) args[i] = acc[i];
        for (int i = 0; i < nin && stt == TR_OK; i++, made++) {
          const tr_instr *p = k->params && i + nin < k->nparams ? k->params[nin + i] : NULL;
          tr_dtype pt = p && p->shape ? p->shape->dtype : xs[i]->dtype;
          if (!(args[nin + i] = ev_scalar_at(c, in, xs[i], (size_t)(ro[q] + ko[o]), pt)))
            stt = TR_ERR_UNSUPPORTED;
        }
        tr_value *r = NULL;
        if (stt == TR_OK) stt = ev_call(c, in, k, args, 2 * nin, &r);
        for (int i = 0; i < made; i++) tr_value_unref(args[nin + i]);
        if (stt != TR_OK) break;
        for (int i = 0; i < nin; i++) {
          tr_value *e = nin == 1 ? r : (i < r->hd.nelems ? tr_value_elems(r)[i] : NULL);
          if (!e || !e->t) {
            stt = ev_err(c, in, TR_ERR_INVALID, "to_apply did not return %d scalar(s)", nin);
            break;
          }
          tr_value_unref(acc[i]);
          acc[i] = tr_value_ref(e);
        }
        tr_value_unref(r);
      }
      for (int i = 0; i < nin; i++) {
        if (stt == TR_OK) {
          size_t es = (size_t)tr_dtype_size(res[i]->dtype);
          if (acc[i]->t->dtype != res[i]->dtype)
            stt = ev_err(c, in, TR_ERR_INVALID, "to_apply returned the wrong type");
          else memcpy((char *)res[i]->data + o * es, acc[i]->t->data, es);
        }
        tr_value_unref(acc[i]);
      }
    }
  }
done:
  tr_free(ko);
  tr_free(ro);
  if (stt != TR_OK) {
    for (int i = 0; i < nin; i++) tr_tensor_free(res[i]);
    return stt;
  }
  if (nin == 1 && in->shape->dtype != TR_DT_TUPLE) {
    *out = tr_value_tensor(res[0]);
  } else {
    tr_value *el[64];
    for (int i = 0; i < nin; i++) el[i] = tr_value_tensor(res[i]);
    *out = tr_value_tuple(nin, el);
  }
  return TR_OK;
}

/* ---- collectives ---- */

/* The first replica other than 0 that replica_groups (kept verbatim)
 * names, or -1: "{{0,1,2,3}}" names 1; "{}" and "{{0}}" none. The iota
 * form "[G,S]<=[N]..." names replica 1 when G*S > 1. A group of several
 * replicas means a run of that many: an all-reduce over {0,1,2,3} is four
 * times its operand there, not the operand (XLA's simplifier folds it so),
 * so one participant cannot model it. */
static long other_replica(const tr_instr *in) {
  for (int i = 0; i < in->nattrs; i++) {
    const tr_attr *a = &in->attrs[i];
    if (a->key != TR_ATTR_RAW || !a->name || strcmp(a->name, "replica_groups") != 0 || !a->u.s) continue;
    const char *t = a->u.s;
    if (*t == '[') {
      long prod = 1;
      for (const char *q = t + 1; *q && *q != ']'; q++)
        if (isdigit((unsigned char)*q)) {
          char *e;
          prod *= strtol(q, &e, 10);
          q = e - 1;
        }
      return prod > 1 ? 1 : -1;
    }
    for (const char *q = t; *q; q++)
      if (isdigit((unsigned char)*q)) {
        char *e;
        long v = strtol(q, &e, 10);
        if (v != 0) return v;
        q = e - 1;
      }
  }
  return -1;
}

/* With one replica and one partition every collective hands each operand
 * back unchanged (a reduction over one participant is its value), except
 * that collective-permute gives zeros when no pair sends replica 0 to
 * itself. Modules for more participants are unsupported. */
static tr_status eval_collective(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  const tr_module *m = c->m;
  for (int i = 0; i < m->nhattrs; i++)
    if ((strcmp(m->hattrs[i].name, "replica_count") == 0 ||
         strcmp(m->hattrs[i].name, "num_partitions") == 0) &&
        strcmp(m->hattrs[i].text, "1") != 0)
      return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s with %s=%s (one participant is modelled)",
                    ev_opname(in), m->hattrs[i].name, m->hattrs[i].text);
  long rep = other_replica(in);
  if (rep >= 0)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s whose replica_groups name replica %ld (one participant is modelled)",
                  ev_opname(in), rep);
  const tr_shape *s = in->shape;
  int n = in->noperands;
  bool tuple = s->dtype == TR_DT_TUPLE;
  if ((tuple && s->nelems != n) || (!tuple && n != 1))
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s with %d operands and result %s", ev_opname(in),
                  n, tuple ? "a tuple" : "an array");
  for (int i = 0; i < n; i++) {
    const tr_shape *e = tuple ? s->elems[i] : s;
    tr_tensor *t = ev_want_tensor(c, in, ops[i], i);
    if (!t) return TR_ERR_INVALID;
    bool same = e->dtype == t->dtype && e->rank == t->rank;
    for (int d = 0; same && d < e->rank; d++) same = e->dims[d] == t->dims[d];
    if (!same)
      return ev_err(c, in, TR_ERR_UNSUPPORTED,
                    "unsupported: %s changes operand %d's shape (one participant is modelled)", ev_opname(in), i);
  }
  bool zeros = false;
  if (in->op == TR_OP_COLLECTIVE_PERMUTE) {
    const tr_attr *pa = tr_instr_attr(in, TR_ATTR_SOURCE_TARGET_PAIRS);
    zeros = true;
    for (int i = 0; pa && i < pa->n; i++)
      if (pa->u.intss.lens[i] == 2 && pa->u.intss.v[i][0] == 0 && pa->u.intss.v[i][1] == 0) zeros = false;
  }
  tr_value *el[64];
  if (n > 64) return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s of more than 64 operands", ev_opname(in));
  for (int i = 0; i < n; i++) {
    if (!zeros) {
      el[i] = tr_value_ref(ops[i]);
      continue;
    }
    tr_tensor *z = ev_new(c, in, ops[i]->t->dtype, ops[i]->t->rank, ops[i]->t->dims);
    if (!z) {
      for (int j = 0; j < i; j++) tr_value_unref(el[j]);
      return TR_ERR_UNSUPPORTED;
    }
    el[i] = tr_value_tensor(z);
  }
  *out = tuple ? tr_value_tuple(n, el) : el[0];
  return TR_OK;
}

/* ---- custom-call ---- */

/* The custom calls that mean "this value" on one device: sharding
 * annotations and host-offload markers that jax and XLA put into dumps.
 * Any other target is unsupported: its meaning lives outside the module. */
static tr_status eval_custom_call(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  static const char *identity[] = {"Sharding", "SPMDFullToShardShape", "SPMDShardToFullShape",
                                   "MoveToHost", "MoveToDevice", "annotate_device_placement"};
  const tr_attr *ta = tr_instr_attr(in, TR_ATTR_CUSTOM_CALL_TARGET);
  const char *target = ta && ta->u.s ? ta->u.s : "";
  bool known = false;
  for (int i = 0; i < TR_NELEMS(identity); i++) known |= strcmp(target, identity[i]) == 0;
  if (!known || in->noperands != 1 || !ops[0]->t)
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: custom-call target \"%s\"", target);
  const tr_shape *s = in->shape;
  const tr_tensor *t = ops[0]->t;
  bool same = s->dtype == t->dtype && s->rank == t->rank;
  for (int d = 0; same && d < s->rank; d++) same = s->dims[d] == t->dims[d];
  if (!same)
    return ev_err(c, in, TR_ERR_UNSUPPORTED,
                  "unsupported: custom-call \"%s\" that changes the shape (one device is modelled)",
                  target);
  *out = tr_value_ref(ops[0]);
  return TR_OK;
}

/* ---- constants ---- */

static tr_status literal_value(ev_ctx *c, const tr_instr *in, const tr_literal *lit,
                               tr_value **out) {
  const tr_shape *s = lit->shape ? lit->shape : in->shape;
  if (s->dtype == TR_DT_TUPLE) {
    tr_value *v = tr_value_tuple(lit->nelems, NULL);
    for (int i = 0; i < lit->nelems; i++) {
      tr_status st = literal_value(c, in, lit->elems[i], &tr_value_elems(v)[i]);
      if (st != TR_OK) {
        tr_value_unref(v);
        return st;
      }
    }
    *out = v;
    return TR_OK;
  }
  if (s->dtype == TR_DT_TOKEN) {
    *out = tr_value_token();
    return TR_OK;
  }
  if (!lit->data && lit->single) {
    tr_tensor *t1 = ev_new(c, in, s->dtype, s->rank, s->dims);
    if (!t1) return TR_ERR_UNSUPPORTED;
    memset(t1->data, 0, t1->nbytes);
    if (t1->nbytes) memcpy(t1->data, lit->one, (size_t)tr_dtype_size(s->dtype));
    *out = tr_value_tensor(t1);
    return TR_OK;
  }
  if (!lit->data)
    return ev_err(c, in, TR_ERR_UNSUPPORTED,
                  "unsupported: elided constant '%%%s' has no values (use the deterministic fill)",
                  in->name);
  tr_tensor *t = ev_new(c, in, s->dtype, s->rank, s->dims);
  if (!t) return TR_ERR_UNSUPPORTED;
  memcpy(t->data, lit->data, t->nbytes);
  *out = tr_value_tensor(t);
  return TR_OK;
}

/* ---- async ---- */

tr_value *ev_zero_value(ev_ctx *c, const tr_instr *in, const tr_shape *s) {
  if (s->dtype == TR_DT_TOKEN) return tr_value_token();
  if (s->dtype != TR_DT_TUPLE) {
    tr_tensor *t = ev_new(c, in, s->dtype, s->rank, s->dims);
    return t ? tr_value_tensor(t) : NULL;
  }
  tr_value *v = tr_value_tuple(s->nelems, NULL);
  for (int i = 0; i < s->nelems; i++)
    if (!(tr_value_elems(v)[i] = ev_zero_value(c, in, s->elems[i]))) {
      tr_value_unref(v);
      return NULL;
    }
  return v;
}
/* ---- dispatch ---- */

static tr_status eval_instr(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  tr_op op = in->op;
  *out = NULL;
  if (!in->shape) return ev_err(c, in, TR_ERR_INVALID, "instruction has no shape");
  if (in->op == TR_OP_SET_DIMENSION_SIZE) return sds_unsupported(c, in);
  if (has_dynamic(in->shape))
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: dynamic dimension in %s", ev_opname(in));
  for (int i = 0; i < in->noperands; i++)
    if (!ops[i]) return ev_err(c, in, TR_ERR_INVALID, "operand %d has no value", i);
  if (!implemented(op)) return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s", ev_opname(in));
  tr_status gst = dtype_gate(c, in);
  if (gst != TR_OK) return gst;
  tr_tensor *t[3] = {NULL, NULL, NULL}, *r = NULL;
  int arrays = 0; /* leading operands that must be arrays */
  switch (op) {
  case TR_OP_CONVERT: case TR_OP_BITCAST: case TR_OP_BITCAST_CONVERT: case TR_OP_BROADCAST:
  case TR_OP_RESHAPE: case TR_OP_TRANSPOSE: case TR_OP_SLICE: case TR_OP_REVERSE:
  case TR_OP_IS_FINITE: case TR_OP_DYNAMIC_SLICE: case TR_OP_CONCATENATE:
  case TR_OP_REDUCE_PRECISION: case TR_OP_CHOLESKY: case TR_OP_REAL: case TR_OP_IMAG:
  case TR_OP_FFT:
    arrays = 1;
    break;
  case TR_OP_PAD: case TR_OP_COMPARE: case TR_OP_DOT: case TR_OP_DYNAMIC_UPDATE_SLICE:
  case TR_OP_GATHER: case TR_OP_CONVOLUTION: case TR_OP_TRIANGULAR_SOLVE: case TR_OP_COMPLEX:
    arrays = 2;
    break;
  case TR_OP_SELECT: case TR_OP_CLAMP: case TR_OP_SELECT_AND_SCATTER:
    arrays = 3;
    break;
  default:
    if (tr_op_is_unary_kernel(op)) arrays = 1;
    else if (tr_op_is_binary_kernel(op)) arrays = 2;
    break;
  }
  if (arrays > in->noperands) return ev_err(c, in, TR_ERR_INVALID, "%s has too few operands", ev_opname(in));
  for (int i = 0; i < arrays; i++)
    if (!(t[i] = ev_want_tensor(c, in, ops[i], i))) return TR_ERR_INVALID;
  tr_status st = TR_OK;
  if (op == TR_OP_REAL || op == TR_OP_IMAG || op == TR_OP_COMPLEX ||
      ((tr_op_is_unary_kernel(op) || tr_op_is_binary_kernel(op) || op == TR_OP_COMPARE) && ev_complex_involved(in))) {
    if ((st = ev_complex_elem(c, in, t, &r)) != TR_OK) return st;
    *out = tr_value_tensor(r);
    return TR_OK;
  }
  if (evc_routes(op)) {
    ev_core core = {&exact_domain, c, c};
    return evc_route(&core, in, (ev_v **)ops, (ev_v **)out);
  }
  switch (op) {
  case TR_OP_CONSTANT:
    if (!in->literal) return ev_err(c, in, TR_ERR_INVALID, "constant has no literal");
    return literal_value(c, in, in->literal, out);
  case TR_OP_IOTA: st = ev_iota(c, in, &r); break;
  case TR_OP_PARTITION_ID:
  case TR_OP_REPLICA_ID:
    /* Single-replica, single-partition semantics: the id is 0. */
    r = ev_new(c, in, TR_DT_U32, 0, NULL);
    if (!r) return TR_ERR_UNSUPPORTED;
    break;
  case TR_OP_AFTER_ALL: *out = tr_value_token(); return TR_OK;
  /* outfeed hands its data to the host: within the module only its token
   * is a value (docs/SEMANTICS.md) */
  case TR_OP_OUTFEED:
    if (in->shape->dtype != TR_DT_TOKEN) return ev_err(c, in, TR_ERR_INVALID, "outfeed's result is a token");
    *out = tr_value_token();
    return TR_OK;
  case TR_OP_COPY: case TR_OP_OPT_BARRIER: case TR_OP_DOMAIN: case TR_OP_ADD_DEPENDENCY:
    /* Values are immutable: a copy can share. */
    *out = tr_value_ref(ops[0]);
    return TR_OK;
  case TR_OP_CONVERT:
    if (!(r = ev_convert_to(c, in, t[0], in->shape->dtype))) return TR_ERR_UNSUPPORTED;
    break;
  case TR_OP_BITCAST:
  case TR_OP_BITCAST_CONVERT: st = ev_bitcast(c, in, t[0], &r); break;
  case TR_OP_BROADCAST: case TR_OP_RESHAPE: case TR_OP_TRANSPOSE: case TR_OP_SLICE:
  case TR_OP_DYNAMIC_SLICE: case TR_OP_DYNAMIC_UPDATE_SLICE: case TR_OP_CONCATENATE:
  case TR_OP_PAD: case TR_OP_REVERSE: {
    tr_tensor **ts = tr_xmalloc(sizeof(tr_tensor *) * (size_t)in->noperands);
    for (int i = 0; i < in->noperands && st == TR_OK; i++)
      if (!(ts[i] = ev_want_tensor(c, in, ops[i], i))) st = TR_ERR_INVALID;
    if (st == TR_OK) st = ev_move(c, in, ts, in->noperands, &r);
    tr_free(ts);
    break;
  }
  case TR_OP_REDUCE_PRECISION: st = ev_reduce_precision(c, in, t[0], &r); break;
  case TR_OP_SELECT: st = ev_select(c, in, t[0], t[1], t[2], &r); break;
  case TR_OP_CLAMP: st = ev_clamp(c, in, t[0], t[1], t[2], &r); break;
  case TR_OP_COMPARE: st = ev_compare(c, in, t[0], t[1], &r); break;
  case TR_OP_DOT: st = ev_dot(c, in, t[0], t[1], &r); break;
  case TR_OP_CONVOLUTION: st = ev_convolution(c, in, t[0], t[1], &r); break;
  case TR_OP_CHOLESKY: st = ev_cholesky(c, in, t[0], &r); break;
  case TR_OP_FFT: st = ev_fft(c, in, t[0], &r); break;
  case TR_OP_TRIANGULAR_SOLVE: st = ev_triangular_solve(c, in, t[0], t[1], &r); break;
  case TR_OP_GATHER: st = ev_gather(c, in, t[0], t[1], &r); break;
  case TR_OP_SCATTER: return ev_scatter(c, in, ops, out);
  case TR_OP_SORT: return ev_sort(c, in, ops, out);
  case TR_OP_CUSTOM_CALL: return eval_custom_call(c, in, ops, out);
  case TR_OP_RNG_BIT_GENERATOR: {
    tr_tensor *x = ev_want_tensor(c, in, ops[0], 0);
    return x ? ev_rng_bit_generator(c, in, x, out) : TR_ERR_INVALID;
  }
  case TR_OP_TOPK: {
    tr_tensor *x = ev_want_tensor(c, in, ops[0], 0);
    return x ? ev_topk(c, in, x, out) : TR_ERR_INVALID;
  }
  case TR_OP_ALL_REDUCE: case TR_OP_ALL_GATHER: case TR_OP_REDUCE_SCATTER: case TR_OP_ALL_TO_ALL:
  case TR_OP_COLLECTIVE_PERMUTE:
    return eval_collective(c, in, ops, out);
  case TR_OP_REDUCE_WINDOW: return ev_reduce_window(c, in, ops, out);
  case TR_OP_SELECT_AND_SCATTER: st = ev_select_and_scatter(c, in, t[0], t[1], t[2], &r); break;
  case TR_OP_REDUCE: return eval_reduce(c, in, ops, out);
  default:
    if (tr_op_is_unary_kernel(op)) st = ev_unary(c, in, t[0], &r);
    else if (tr_op_is_binary_kernel(op)) st = ev_binary(c, in, t[0], t[1], &r);
    else return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s", ev_opname(in));
    break;
  }
  if (st != TR_OK) return st;
  *out = tr_value_tensor(r);
  return TR_OK;
}

/* ---- entry ---- */

/* One evaluation, run in a heap frame: everything it allocates is freed
 * if memory runs out anywhere in it (a kernel, a clone, a worker thread),
 * and the verdict names the entry instruction it was evaluating. */
typedef struct {
  ev_ctx c;
  tr_tensor *const *args;
  int nargs;
  tr_tensor **outs;
  int nouts;
  tr_status st;
} eval_job;

static tr_status eval_body(ev_ctx *c, tr_tensor *const *args, int nargs, tr_tensor ***outs,
                           int *nouts) {
  const tr_module *m = c->m;
  tr_diag *d = c->d;
  if (!c->opts.verified) {
    tr_status vs = tr_verify(m, d);
    if (vs != TR_OK) return vs;
  }
  /* One device: each <op>-start/-done pair is its synchronous op
   * (desugar.c), evaluated on a rewritten copy. */
  tr_module *sync = tr_desugared_copy(m);
  if (sync) {
    tr_eval_opts o2 = c->opts;
    o2.verified = false; /* the inserted ops get their shapes checked */
    tr_status s = tr_eval_opt(sync, &o2, args, nargs, outs, nouts, d);
    tr_module_free(sync);
    return s;
  }
  evc_begin(c, m);
  ev_core core = {&exact_domain, c, c};
  const tr_comp *e = m->entry;
  int np = e->nparams;
  ev_v **params = tr_xcalloc(np > 0 ? (size_t)np : 1, sizeof(ev_v *));
  tr_status st = evc_bind(&core, e, args, nargs, params);
  ev_v *res = NULL;
  if (st == TR_OK) st = evc_call(&core, NULL, e, params, np, &res);
  if (st == TR_OK) {
    ev_v **lv = evc_leaves(&core, res, nouts);
    *outs = tr_xcalloc(*nouts > 0 ? (size_t)*nouts : 1, sizeof(tr_tensor *));
    for (int i = 0; i < *nouts; i++) (*outs)[i] = tr_tensor_clone(V(lv[i])->t);
    tr_free(lv);
    for (int i = 0; i < *nouts && st == TR_OK; i++)
      if (!(*outs)[i]) st = ev_err(c, e->root, TR_ERR_UNSUPPORTED, "unsupported: out of memory copying output %d", i);
    if (st != TR_OK) {
      tr_eval_free_outputs(*outs, *nouts);
      *outs = NULL;
      *nouts = 0;
    }
  }
  tr_value_unref(V(res));
  for (int i = 0; i < np; i++) tr_value_unref(V(params[i]));
  tr_free(params);
  evc_end(c);
  return st;
}

static void eval_run(void *p) {
  eval_job *j = p;
  j->st = eval_body(&j->c, j->args, j->nargs, &j->outs, &j->nouts);
}

tr_status tr_eval_opt(const tr_module *m, const tr_eval_opts *opts, tr_tensor *const *args,
                      int nargs, tr_tensor ***outs, int *nouts, tr_diag *d) {
  *outs = NULL;
  *nouts = 0;
  if (!m->entry) {
    tr_diag_errorf(d, "%s: error: module has no ENTRY computation", m->file ? m->file : "<module>");
    return TR_ERR_INVALID;
  }
  eval_job j;
  memset(&j, 0, sizeof j);
  j.c.m = m;
  j.c.d = d;
  if (opts) j.c.opts = *opts;
  j.args = args;
  j.nargs = nargs;
  size_t bytes = 0;
  if (!tr_heap_run(eval_run, &j, &bytes)) return ev_oom(&j.c, bytes);
  *outs = j.outs;
  *nouts = j.nouts;
  return j.st;
}

/* ---- hooks for shadow mode (shadow.c) ---- */

tr_status ev_eval_instr(ev_ctx *c, const tr_instr *in, tr_value **ops, tr_value **out) {
  return eval_instr(c, in, ops, out);
}

/* The checks eval_instr makes before any kernel, so shadow kernels see
 * the same errors for the same modules. */
tr_status ev_check_instr(ev_ctx *c, const tr_instr *in) {
  if (!in->shape) return ev_err(c, in, TR_ERR_INVALID, "instruction has no shape");
  if (in->op == TR_OP_SET_DIMENSION_SIZE) return sds_unsupported(c, in);
  if (has_dynamic(in->shape))
    return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: dynamic dimension in %s", ev_opname(in));
  if (!implemented(in->op)) return ev_err(c, in, TR_ERR_UNSUPPORTED, "unsupported: %s", ev_opname(in));
  return dtype_gate(c, in);
}

tr_status tr_eval(const tr_module *m, tr_tensor *const *args, int nargs, tr_tensor ***outs,
                  int *nouts, tr_diag *d) {
  return tr_eval_opt(m, NULL, args, nargs, outs, nouts, d);
}

bool tr_eval_supports(tr_op op) { return (unsigned)op < TR_OP_COUNT && implemented(op); }

void tr_eval_free_outputs(tr_tensor **outs, int nouts) {
  if (!outs) return;
  for (int i = 0; i < nouts; i++) tr_tensor_free(outs[i]);
  tr_free(outs);
}
