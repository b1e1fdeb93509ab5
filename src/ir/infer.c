/* infer.c - shape inference: tr_infer_shape computes an instruction's
 * result shape from its operands and attributes by the rules of XLA's shape
 * inference (xla/service/shape_inference.cc; the StableHLO spec for the
 * batching dimensions of gather and scatter). Layouts are ignored; an
 * unbounded dynamic dimension ('?', stored as -1) matches any size.
 * The shared helpers live here, the per-op rules in infer_*.c by family
 * (inferint.h lists them); tr_infer_shape dispatches on the op table. */
#include "inferint.h"

#include <stdlib.h>
#include <string.h>

bool in_bad(in_ctx *c, const char *fmt, ...) {
  if (c->failed) return false;
  c->failed = true;
  va_list ap;
  va_start(ap, fmt);
  tr_buf_vprintf(c->why, fmt, ap);
  va_end(ap);
  return false;
}

static tr_buf *scratch(in_ctx *c) {
  tr_buf *b = &c->tmp[c->ntmp++ % IN_NSCRATCH];
  b->n = 0;
  if (b->p) b->p[0] = 0;
  return b;
}

/* Shape text for messages; valid until IN_NSCRATCH more are made. */
const char *in_str(in_ctx *c, const tr_shape *s) {
  tr_buf *b = scratch(c);
  if (s) tr_shape_print(b, s, false);
  else tr_buf_puts(b, "(no shape)");
  return tr_buf_str(b);
}

/* "{0,1}" for messages. */
const char *in_list(in_ctx *c, const int64_t *v, int n) {
  tr_buf *b = scratch(c);
  tr_buf_putc(b, '{');
  for (int i = 0; i < n; i++) tr_buf_printf(b, "%s%lld", i ? "," : "", (long long)v[i]);
  tr_buf_putc(b, '}');
  return tr_buf_str(b);
}

tr_shape *in_new_array(in_ctx *c, tr_dtype dt, int rank) {
  tr_shape *s = tr_arena_alloc(c->a, sizeof *s);
  s->dtype = dt;
  s->rank = rank;
  if (rank > 0) s->dims = tr_arena_alloc(c->a, sizeof(int64_t) * (size_t)rank);
  return s;
}

bool in_same_dims(const tr_shape *a, const tr_shape *b) {
  if (a->rank != b->rank) return false;
  for (int i = 0; i < a->rank; i++)
    if (!in_dim_eq(a->dims[i], b->dims[i])) return false;
  return true;
}

/* Same element type and dims, tuples elementwise; layouts and dynamic
 * bounds are ignored. */
bool tr_shape_compatible(const tr_shape *a, const tr_shape *b) {
  if (!a || !b || a->dtype != b->dtype) return false;
  if (a->dtype == TR_DT_TUPLE) {
    if (a->nelems != b->nelems) return false;
    for (int i = 0; i < a->nelems; i++)
      if (!tr_shape_compatible(a->elems[i], b->elems[i])) return false;
    return true;
  }
  return in_same_dims(a, b);
}

static bool type_allowed(const char *types, tr_dtype t) {
  if (strcmp(types, "f") == 0) return in_is_float(t) || in_is_complex(t);
  if (strcmp(types, "i") == 0) return in_is_int(t);
  if (strcmp(types, "ip") == 0) return in_is_int(t) || t == TR_DT_PRED;
  if (strcmp(types, "n") == 0) return in_is_int(t) || in_is_float(t) || in_is_complex(t);
  return true;
}

static const char *types_desc(const char *types) {
  if (strcmp(types, "f") == 0) return "a float";
  if (strcmp(types, "i") == 0) return "an integer";
  if (strcmp(types, "ip") == 0) return "an integer or pred";
  if (strcmp(types, "n") == 0) return "a numeric (not pred)";
  return "any";
}

/* ---- attributes ---- */
/* The attribute if present with the kind attrs.def gives it; a wrong kind
 * counts as absent here (tr_verify reports it on its own). */
const tr_attr *in_attr(const in_ctx *c, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(c->in, k);
  return at && at->kind == tr_attrs[k].kind ? at : NULL;
}

const tr_attr *in_need(in_ctx *c, tr_attr_key k) {
  const tr_attr *at = in_attr(c, k);
  if (!at) in_bad(c, "%s needs attribute %s", c->op, tr_attrs[k].name);
  return at;
}

/* An int-list attribute; absent reads as the empty list. */
const int64_t *in_ints(const in_ctx *c, tr_attr_key k, int *n) {
  const tr_attr *at = in_attr(c, k);
  *n = at ? at->n : 0;
  return at ? at->u.ints : NULL;
}

/* Checks a list of dimension numbers: each in [0, bound), no repeats, and
 * ascending when sorted is asked for. */
bool in_dims_ok(in_ctx *c, const char *name, const int64_t *v, int n, int64_t bound,
                bool sorted) {
  for (int i = 0; i < n; i++) {
    if (v[i] < 0 || v[i] >= bound)
      return in_bad(c, "%s %s=%s: dimension %lld is out of range for rank %lld", c->op, name,
                    in_list(c, v, n), (long long)v[i], (long long)bound);
    for (int j = 0; j < i; j++)
      if (v[j] == v[i])
        return in_bad(c, "%s %s=%s repeats dimension %lld", c->op, name, in_list(c, v, n),
                      (long long)v[i]);
    if (sorted && i > 0 && v[i - 1] > v[i])
      return in_bad(c, "%s %s=%s must be sorted", c->op, name, in_list(c, v, n));
  }
  return true;
}

bool in_disjoint(in_ctx *c, const char *n1, const int64_t *v1, int k1, const char *n2,
                 const int64_t *v2, int k2) {
  for (int i = 0; i < k1; i++)
    if (tr_ints_has(v2, k2, v1[i]))
      return in_bad(c, "%s: dimension %lld is in both %s and %s", c->op, (long long)v1[i], n1, n2);
  return true;
}

/* ---- operands ---- */
bool in_want_array(in_ctx *c, int i) {
  if (in_is_array(in_opnd(c, i))) return true;
  return in_bad(c, "operand %d of %s must be an array but has shape %s", i, c->op,
                in_str(c, in_opnd(c, i)));
}

bool in_want_arrays(in_ctx *c, int from, int to) {
  for (int i = from; i < to; i++)
    if (!in_want_array(c, i)) return false;
  return true;
}

bool in_want_scalar(in_ctx *c, int i, const char *what) {
  if (in_is_scalar(in_opnd(c, i))) return true;
  return in_bad(c, "%s (operand %d) of %s must be a scalar but has shape %s", what, i, c->op,
                in_str(c, in_opnd(c, i)));
}

bool in_min_operands(in_ctx *c, int n) {
  if (in_nopnds(c) >= n) return true;
  return in_bad(c, "%s needs at least %d operand(s) but has %d", c->op, n, in_nopnds(c));
}

/* A declared array shape, needed by rules whose result is not determined
 * by the operands (reshape, broadcast, convert, ...). */
const tr_shape *in_want_decl(in_ctx *c) {
  if (in_is_array(c->decl)) return c->decl;
  if (!c->decl) in_bad(c, "%s needs a declared result shape", c->op);
  else in_bad(c, "%s must produce an array but is declared %s", c->op, in_str(c, c->decl));
  return NULL;
}
/* ---- called computations ---- */
int in_comp_nparams(const tr_comp *k) {
  if (k->params) return k->nparams;
  int n = 0;
  for (int i = 0; i < k->ninstrs; i++)
    if (k->instrs[i]->op == TR_OP_PARAMETER) n++;
  return n;
}

/* Parameter i of k; falls back to a search when the table was not filled
 * (modules built through the API). */
const tr_instr *in_comp_param(const tr_comp *k, int i) {
  if (k->params && i < k->nparams && k->params[i]) return k->params[i];
  for (int j = 0; j < k->ninstrs; j++)
    if (k->instrs[j]->op == TR_OP_PARAMETER && k->instrs[j]->param_index == i) return k->instrs[j];
  return NULL;
}

/* The computation attribute k names, checked to have a root and n
 * parameters (n < 0: any number). */
const tr_comp *in_callee(in_ctx *c, tr_attr_key key, int n) {
  const tr_attr *at = in_attr(c, key);
  const char *an = tr_attrs[key].name;
  if (!at || !at->u.comp) {
    in_bad(c, "%s needs a %s computation", c->op, an);
    return NULL;
  }
  const tr_comp *k = at->u.comp;
  if (!k->root || !k->root->shape) {
    in_bad(c, "%s computation %s has no root", an, k->name);
    return NULL;
  }
  if (n < 0) return k;
  if (in_comp_nparams(k) != n) {
    in_bad(c, "%s computation %s must take %d parameter(s) but takes %d", an, k->name, n,
           in_comp_nparams(k));
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!in_comp_param(k, i) || !in_comp_param(k, i)->shape) {
      in_bad(c, "%s computation %s has no parameter %d", an, k->name, i);
      return NULL;
    }
  return k;
}

/* Parameter i of k must be a scalar of type t. */
bool in_scalar_param(in_ctx *c, const char *an, const tr_comp *k, int i, tr_dtype t) {
  const tr_shape *p = in_param_shape(k, i);
  if (in_is_scalar(p) && p->dtype == t) return true;
  return in_bad(c, "parameter %d of %s computation %s has shape %s but %s[] is needed", i, an,
                k->name, in_str(c, p), tr_dtype_name(t));
}

/* ---- dispatch ---- */
/* Operand count an instruction must have, -1 when variadic. A sparse dot
 * (sparsity=L.1@2:4_R.0@2:4) takes one metadata operand per descriptor. */
int tr_instr_arity(const tr_instr *in) {
  int arity = tr_ops[in->op].arity;
  if (in->op != TR_OP_DOT) return arity;
  for (int i = 0; i < in->nattrs; i++) {
    if (in->attrs[i].key != TR_ATTR_RAW || strcmp(in->attrs[i].name, "sparsity") != 0) continue;
    arity++;
    for (const char *p = in->attrs[i].u.s; *p; p++) arity += *p == '_';
  }
  return arity;
}

static tr_shape *infer(in_ctx *c) {
  const tr_instr *in = c->in;
  const tr_op_info *oi = &tr_ops[in->op];
  int arity = tr_instr_arity(in);
  if (arity >= 0 && in->noperands != arity)
    return IN_FAIL("%s takes %d operand(s) but has %d", c->op, arity, in->noperands);
  for (int i = 0; i < in->noperands; i++)
    if (!in->operands[i] || !in->operands[i]->shape)
      return IN_FAIL("operand %d of %s has no shape", i, c->op);
  if (strcmp(oi->types, "a") != 0)
    for (int i = 0; i < in->noperands; i++) {
      if (!in_want_array(c, i)) return NULL;
      if (!type_allowed(oi->types, in_opnd(c, i)->dtype))
        return IN_FAIL("operand %d of %s has shape %s but %s needs %s type", i, c->op,
                       in_str(c, in_opnd(c, i)), c->op, types_desc(oi->types));
    }
  switch (oi->rule) {
  case TR_RULE_PARAMETER: return in_r_parameter(c);
  case TR_RULE_CONSTANT: return in_r_constant(c);
  case TR_RULE_IOTA: return in_r_iota(c);
  case TR_RULE_ID: return in_new_array(c, TR_DT_U32, 0);
  case TR_RULE_AFTER_ALL: return in_r_after_all(c);
  case TR_RULE_BROADCAST: return in_r_broadcast(c);
  case TR_RULE_RESHAPE: return in_r_reshape(c);
  case TR_RULE_BITCAST: return in_r_bitcast(c);
  case TR_RULE_TRANSPOSE: return in_r_transpose(c);
  case TR_RULE_SAME: return in_r_same(c);
  case TR_RULE_CONVERT: return in_r_convert(c);
  case TR_RULE_BITCAST_CONVERT: return in_r_bitcast_convert(c);
  case TR_RULE_SLICE: return in_r_slice(c);
  case TR_RULE_DYNAMIC_SLICE: return in_r_dynamic_slice(c);
  case TR_RULE_DYNAMIC_UPDATE_SLICE: return in_r_dynamic_update_slice(c);
  case TR_RULE_CONCATENATE: return in_r_concatenate(c);
  case TR_RULE_PAD: return in_r_pad(c);
  case TR_RULE_REVERSE: return in_r_reverse(c);
  case TR_RULE_GATHER: return in_r_gather(c);
  case TR_RULE_SCATTER: return in_r_scatter(c);
  case TR_RULE_SELECT: return in_r_select(c);
  case TR_RULE_CLAMP: return in_r_clamp(c);
  case TR_RULE_COMPARE: return in_r_compare(c);
  case TR_RULE_IS_FINITE: return in_r_is_finite(c);
  case TR_RULE_BINARY: return in_r_binary(c);
  case TR_RULE_REDUCE: return in_r_reduce(c);
  case TR_RULE_REDUCE_WINDOW: return in_r_reduce_window(c);
  case TR_RULE_SELECT_AND_SCATTER: return in_r_select_and_scatter(c);
  case TR_RULE_DOT: return in_r_dot(c);
  case TR_RULE_CONVOLUTION: return in_r_convolution(c);
  case TR_RULE_SORT: return in_r_sort(c);
  case TR_RULE_TOPK: return in_r_topk(c);
  case TR_RULE_CHOLESKY: return in_r_cholesky(c);
  case TR_RULE_TRIANGULAR_SOLVE: return in_r_triangular_solve(c);
  case TR_RULE_WHILE: return in_r_while(c);
  case TR_RULE_CONDITIONAL: return in_r_conditional(c);
  case TR_RULE_CALL: return in_r_call(c, TR_ATTR_TO_APPLY);
  case TR_RULE_FUSION: return in_r_call(c, TR_ATTR_CALLS);
  case TR_RULE_MAP: return in_r_map(c);
  case TR_RULE_TUPLE: return in_r_tuple(c);
  case TR_RULE_GTE: return in_r_gte(c);
  case TR_RULE_ADD_DEPENDENCY: return in_clone(c, in_opnd(c, 0));
  case TR_RULE_ALL_REDUCE: return in_r_all_reduce(c);
  case TR_RULE_DECLARED: return in_r_declared(c);
  }
  return IN_FAIL("%s has no shape rule", c->op);
}

tr_shape *tr_infer_shape(tr_arena *a, const tr_instr *in, tr_buf *why) {
  tr_buf local = {0};
  in_ctx c;
  memset(&c, 0, sizeof c);
  c.a = a;
  c.in = in;
  c.decl = in->shape;
  c.op = in->opname && in->opname[0] ? in->opname : tr_ops[in->op].name;
  c.why = why ? why : &local;
  tr_shape *s = infer(&c);
  for (int i = 0; i < IN_NSCRATCH; i++) tr_buf_free(&c.tmp[i]);
  tr_buf_free(&local);
  return s;
}
