/* build.c - the inferring IR builder (build.h): instructions get the shape
 * tr_infer_shape gives them, so what is built verifies by construction.
 * Names are "<op>.<id>", unique in the module because ids are. */
#include "build.h"

#include <string.h>

static tr_arena *arena_of(const tr_comp *c) { return c->module->arena; }

static const char *auto_name(tr_module *m, const char *op, int id) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s.%d", op, id);
  return tr_arena_strdup(m->arena, buf);
}

tr_comp *tr_build_comp(tr_module *m, const char *name, bool entry) {
  tr_comp *c = tr_comp_new(m, name);
  if (entry) {
    c->is_entry = true;
    m->entry = c;
  }
  return c;
}

static tr_instr *leaf(tr_comp *c, tr_op op, const tr_shape *s) {
  tr_module *m = c->module;
  tr_instr *in = tr_instr_new(m, op, "", tr_shape_clone(m->arena, s));
  in->name = auto_name(m, tr_ops[op].name, in->id);
  tr_comp_append(c, in);
  return in;
}

tr_instr *tr_build_param(tr_comp *c, const tr_shape *s) {
  tr_instr *in = leaf(c, TR_OP_PARAMETER, s);
  in->param_index = c->nparams;
  tr_instr **np = tr_arena_alloc(arena_of(c), sizeof(tr_instr *) * (size_t)(c->nparams + 1));
  if (c->nparams) memcpy(np, c->params, sizeof(tr_instr *) * (size_t)c->nparams);
  np[c->nparams++] = in;
  c->params = np;
  return in;
}

tr_instr *tr_build_constant(tr_comp *c, const tr_shape *s, const void *data) {
  tr_instr *in = leaf(c, TR_OP_CONSTANT, s);
  tr_literal *lit = tr_arena_alloc(arena_of(c), sizeof *lit);
  lit->shape = in->shape;
  int64_t n = tr_shape_count(s);
  size_t bytes = (size_t)(n > 0 ? n : 0) * (size_t)tr_dtype_size(s->dtype);
  lit->data = tr_arena_alloc(arena_of(c), bytes ? bytes : 1);
  if (bytes) memcpy(lit->data, data, bytes);
  in->literal = lit;
  return in;
}

void tr_build_root(tr_comp *c, tr_instr *in) { c->root = in; }

tr_instr *tr_build_begin(tr_comp *c, tr_op op, tr_instr *const *ops, int n) {
  tr_module *m = c->module;
  tr_instr *in = tr_instr_new(m, op, "", NULL);
  in->name = auto_name(m, tr_ops[op].name, in->id);
  /* Operands now, use lists at tr_build_end: a rejected instruction
   * leaves no trace in its operands. */
  in->operands = n ? tr_arena_memdup(m->arena, ops, sizeof(tr_instr *) * (size_t)n) : NULL;
  in->noperands = n;
  in->parent = c;
  return in;
}

static tr_attr *add(tr_instr *in, tr_attr_key k) {
  return tr_instr_add_attr(in->parent->module, in, k, tr_attrs[k].kind, NULL);
}

static void *dup(tr_instr *in, const void *p, size_t n) {
  return n ? tr_arena_memdup(arena_of(in->parent), p, n) : NULL;
}

void tr_build_int(tr_instr *in, tr_attr_key k, int64_t v) { add(in, k)->u.i = v; }
void tr_build_bool(tr_instr *in, tr_attr_key k, bool v) { add(in, k)->u.b = v; }

void tr_build_ints(tr_instr *in, tr_attr_key k, const int64_t *v, int n) {
  tr_attr *at = add(in, k);
  at->n = n;
  at->u.ints = dup(in, v, sizeof(int64_t) * (size_t)n);
}

void tr_build_ident(tr_instr *in, tr_attr_key k, const char *v) {
  add(in, k)->u.s = tr_arena_strdup(arena_of(in->parent), v);
}

void tr_build_callee(tr_instr *in, tr_attr_key k, tr_comp *callee) { add(in, k)->u.comp = callee; }

void tr_build_callees(tr_instr *in, tr_attr_key k, tr_comp *const *callees, int n) {
  tr_attr *at = add(in, k);
  at->n = n;
  at->u.comps = dup(in, callees, sizeof(tr_comp *) * (size_t)n);
}

void tr_build_slice(tr_instr *in, const tr_slice_dim *v, int n) {
  tr_attr *at = add(in, TR_ATTR_SLICE);
  at->n = n;
  at->u.slice = dup(in, v, sizeof *v * (size_t)n);
}

void tr_build_padding(tr_instr *in, const tr_pad_dim *v, int n) {
  tr_attr *at = add(in, TR_ATTR_PADDING);
  at->n = n;
  at->u.pad = dup(in, v, sizeof *v * (size_t)n);
}

void tr_build_window(tr_instr *in, const tr_window_dim *v, int n) {
  tr_attr *at = add(in, TR_ATTR_WINDOW);
  at->n = n;
  at->u.win = dup(in, v, sizeof *v * (size_t)n);
}

void tr_build_convdims(tr_instr *in, const tr_convdims *cd) {
  tr_attr *at = add(in, TR_ATTR_DIM_LABELS);
  tr_convdims *d = dup(in, cd, sizeof *cd);
  size_t ns = sizeof(int64_t) * (size_t)cd->nspatial;
  d->in_spatial = dup(in, cd->in_spatial, ns);
  d->k_spatial = dup(in, cd->k_spatial, ns);
  d->out_spatial = dup(in, cd->out_spatial, ns);
  at->n = cd->nspatial;
  at->u.conv = d;
}

tr_instr *tr_build_end(tr_instr *in, const tr_shape *decl, tr_buf *why) {
  tr_comp *c = in->parent;
  tr_arena *a = arena_of(c);
  in->shape = decl ? tr_shape_clone(a, decl) : NULL;
  tr_shape *s = tr_infer_shape(a, in, why);
  if (!s) {
    if (why && !why->n) tr_buf_printf(why, "%s: cannot infer the shape", tr_ops[in->op].name);
    in->parent = NULL;
    return NULL;
  }
  if (decl && decl->has_layout && tr_shape_is_array(s) && s->rank == decl->rank)
    tr_shape_set_layout(a, s, decl->layout);
  in->shape = s;
  for (int i = 0; i < in->noperands; i++) tr_instr_add_user(in->operands[i], in);
  tr_comp_append(c, in);
  return in;
}

tr_instr *tr_build_unary(tr_comp *c, tr_op op, tr_instr *x, tr_buf *why) {
  return tr_build_end(tr_build_begin(c, op, &x, 1), NULL, why);
}

tr_instr *tr_build_binary(tr_comp *c, tr_op op, tr_instr *x, tr_instr *y, tr_buf *why) {
  tr_instr *ops[2] = {x, y};
  return tr_build_end(tr_build_begin(c, op, ops, 2), NULL, why);
}

tr_instr *tr_build_compare(tr_comp *c, tr_instr *x, tr_instr *y, const char *dir, tr_buf *why) {
  tr_instr *ops[2] = {x, y};
  tr_instr *in = tr_build_begin(c, TR_OP_COMPARE, ops, 2);
  tr_build_ident(in, TR_ATTR_DIRECTION, dir);
  return tr_build_end(in, NULL, why);
}

/* An array shape like x's with another element type or dims. */
static tr_shape *like(tr_comp *c, tr_dtype dt, const int64_t *dims, int n) {
  return tr_shape_array(arena_of(c), dt, n, dims);
}

tr_instr *tr_build_convert(tr_comp *c, tr_instr *x, tr_dtype to, tr_buf *why) {
  tr_shape *d = like(c, to, x->shape->dims, x->shape->rank);
  return tr_build_end(tr_build_begin(c, TR_OP_CONVERT, &x, 1), d, why);
}

tr_instr *tr_build_broadcast(tr_comp *c, tr_instr *x, const int64_t *dims, int n,
                             const int64_t *map, tr_buf *why) {
  tr_instr *in = tr_build_begin(c, TR_OP_BROADCAST, &x, 1);
  tr_build_ints(in, TR_ATTR_DIMENSIONS, map, x->shape->rank);
  return tr_build_end(in, like(c, x->shape->dtype, dims, n), why);
}

tr_instr *tr_build_reshape(tr_comp *c, tr_instr *x, const int64_t *dims, int n, tr_buf *why) {
  return tr_build_end(tr_build_begin(c, TR_OP_RESHAPE, &x, 1), like(c, x->shape->dtype, dims, n),
                      why);
}

tr_instr *tr_build_transpose(tr_comp *c, tr_instr *x, const int64_t *perm, tr_buf *why) {
  tr_instr *in = tr_build_begin(c, TR_OP_TRANSPOSE, &x, 1);
  tr_build_ints(in, TR_ATTR_DIMENSIONS, perm, x->shape->rank);
  return tr_build_end(in, NULL, why);
}

tr_instr *tr_build_tuple(tr_comp *c, tr_instr *const *xs, int n, tr_buf *why) {
  return tr_build_end(tr_build_begin(c, TR_OP_TUPLE, xs, n), NULL, why);
}

tr_instr *tr_build_gte(tr_comp *c, tr_instr *t, int64_t index, tr_buf *why) {
  tr_instr *in = tr_build_begin(c, TR_OP_GET_TUPLE_ELEMENT, &t, 1);
  tr_build_int(in, TR_ATTR_INDEX, index);
  return tr_build_end(in, NULL, why);
}

void tr_shape_set_layout(tr_arena *a, tr_shape *s, const int64_t *minor_to_major) {
  s->layout = s->rank ? tr_arena_memdup(a, minor_to_major, sizeof(int64_t) * (size_t)s->rank) : NULL;
  s->has_layout = true;
}
