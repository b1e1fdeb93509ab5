/* simplify_int.h - what the algebraic simplifier's files share: the rule
 * state, the rule prototypes (from simplify_rules.def) and small helpers
 * for reading and building instructions. Private to src/comp/simplify*.c. */
#ifndef TR_SIMPLIFY_INT_H
#define TR_SIMPLIFY_INT_H

#include "compint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ranks beyond this are left alone (the interpreter's limit as well). */
#define MAX_RANK 64

typedef struct {
  tr_bc_ctx *ctx; /* disabling, fuel, log */
  tr_module *m;     /* module being rewritten */
  tr_comp *c;       /* computation being rewritten */
  const char *rule; /* name of the rule being tried (for the log) */
} simp;

#define X(id, name, op) bool rule_##id(simp *s, tr_instr *in);
#include "simplify_rules.def"
#undef X

/* ---- reading the IR ---- */

/* Static shapes only: the rules reason about exact sizes. */
static inline bool static_shape(const tr_shape *s) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++)
      if (!static_shape(s->elems[i])) return false;
    return true;
  }
  if (s->dynamic) return false;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] < 0) return false;
  return true;
}

static inline bool all_static(const tr_instr *in) {
  if (!static_shape(in->shape)) return false;
  for (int i = 0; i < in->noperands; i++)
    if (!static_shape(in->operands[i]->shape)) return false;
  return true;
}

static inline tr_dkind kind(const tr_instr *x) { return tr_dtypes[x->shape->dtype].kind; }
static inline bool is_int(const tr_instr *x) { return tr_dtype_is_int(x->shape->dtype); }
static inline bool is_flt(const tr_instr *x) { return tr_dtype_is_float(x->shape->dtype); }

static inline uint64_t slot_load(const void *data, int es, int64_t i) {
  const unsigned char *p = (const unsigned char *)data + (size_t)i * (size_t)es;
  switch (es) {
  case 1: return *p;
  case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

static inline void slot_store(void *data, int es, int64_t i, uint64_t v) {
  unsigned char *p = (unsigned char *)data + (size_t)i * (size_t)es;
  switch (es) {
  case 1: *p = (unsigned char)v; break;
  case 2: { uint16_t w = (uint16_t)v; memcpy(p, &w, 2); break; }
  case 4: { uint32_t w = (uint32_t)v; memcpy(p, &w, 4); break; }
  default: memcpy(p, &v, 8); break;
  }
}

/* x is a constant whose elements all hold the same bits, or a broadcast of
 * a scalar constant: *bits is that element's slot contents. */
static inline bool splat_bits(const tr_instr *x, uint64_t *bits) {
  if (x->op == TR_OP_BROADCAST && x->operands[0]->shape->rank == 0) x = x->operands[0];
  if (x->op != TR_OP_CONSTANT || !x->literal || x->literal->elided || !x->literal->data)
    return false;
  tr_dtype dt = x->shape->dtype;
  if (!tr_dtype_is_array(dt) || tr_dtypes[dt].kind == TR_DK_COMPLEX) return false;
  int es = tr_dtype_size(dt);
  int64_t n = tr_shape_count(x->literal->shape);
  if (n <= 0) return false;
  uint64_t b0 = slot_load(x->literal->data, es, 0);
  for (int64_t i = 1; i < n; i++)
    if (slot_load(x->literal->data, es, i) != b0) return false;
  *bits = b0;
  return true;
}

/* Integer (or pred) splat value: signed types sign-extended, unsigned
 * zero-extended into int64 (so u64 max reads as -1). */
static inline bool splat_int(const tr_instr *x, int64_t *v) {
  uint64_t b;
  if (!(is_int(x) || kind(x) == TR_DK_PRED) || !splat_bits(x, &b)) return false;
  int w = tr_dtype_size(x->shape->dtype) * 8;
  if (kind(x) == TR_DK_SINT && w < 64) *v = (int64_t)(b << (64 - w)) >> (64 - w);
  else *v = (int64_t)b;
  return true;
}

static inline bool splat_flt(const tr_instr *x, double *v) {
  uint64_t b;
  if (!is_flt(x) || !splat_bits(x, &b)) return false;
  *v = tr_float_to_double(x->shape->dtype, b);
  return true;
}

static inline bool int_is(const tr_instr *x, int64_t want) {
  int64_t v;
  return splat_int(x, &v) && v == want;
}

/* Float splat equal to want; a zero must also have the wanted sign. */
static inline bool flt_is(const tr_instr *x, double want) {
  double v;
  return splat_flt(x, &v) && v == want && (want != 0 || !signbit(v) == !signbit(want));
}

static inline bool is_one(const tr_instr *x) { return is_flt(x) ? flt_is(x, 1.0) : int_is(x, 1); }
static inline bool is_zero_int(const tr_instr *x) { return !is_flt(x) && int_is(x, 0); }

static inline bool is_ones(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (kind(x) == TR_DK_PRED) return int_is(x, 1);
  if (kind(x) == TR_DK_SINT) return int_is(x, -1);
  return kind(x) == TR_DK_UINT && int_is(x, (int64_t)tr_int_max(dt));
}

/* The least value of the type: max(x, lowest) = x for every x. */
static inline bool is_lowest(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (is_flt(x)) return flt_is(x, tr_float_has_inf(dt) ? -INFINITY : -tr_float_max(dt));
  if (kind(x) == TR_DK_SINT) return int_is(x, tr_int_min(dt));
  return (kind(x) == TR_DK_UINT || kind(x) == TR_DK_PRED) && int_is(x, 0);
}

static inline bool is_highest(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (is_flt(x)) return flt_is(x, tr_float_has_inf(dt) ? INFINITY : tr_float_max(dt));
  if (kind(x) == TR_DK_PRED) return int_is(x, 1);
  return is_int(x) && int_is(x, (int64_t)tr_int_max(dt));
}

/* ---- building ---- */

static inline bool fire(simp *s, tr_instr *in) { return tr_bc_fire(s->ctx, "simplify", s->rule, in); }

static inline tr_shape *like(simp *s, const tr_instr *in) { return tr_shape_clone(s->m->arena, in->shape); }

static inline tr_shape *arr(simp *s, tr_dtype dt, int rank, const int64_t *dims) {
  return tr_shape_array(s->m->arena, dt, rank, dims);
}

/* A new instruction just before pos, named after pos. */
static inline tr_instr *emit(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr **ops, int n) {
  tr_instr *in = tr_instr_new(s->m, op, tr_bc_fresh_name(s->c, pos->name, "s"), shape);
  tr_comp_insert_before(s->c, pos, in);
  if (n) tr_instr_set_operands(in, ops, n);
  return in;
}

static inline tr_instr *emit1(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr *a) {
  return emit(s, pos, op, shape, &a, 1);
}

static inline tr_instr *emit2(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr *a,
                       tr_instr *b) {
  tr_instr *ops[2] = {a, b};
  return emit(s, pos, op, shape, ops, 2);
}

static inline void set_ints(simp *s, tr_instr *in, tr_attr_key k, const int64_t *v, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, k, TR_AK_INTS, NULL);
  at->n = n;
  at->u.ints = n ? tr_arena_memdup(s->m->arena, v, sizeof(int64_t) * (size_t)n) : NULL;
}

static inline void set_int(simp *s, tr_instr *in, tr_attr_key k, int64_t v) {
  tr_instr_add_attr(s->m, in, k, TR_AK_INT, NULL)->u.i = v;
}

static inline void set_slice(simp *s, tr_instr *in, const tr_slice_dim *d, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, TR_ATTR_SLICE, TR_AK_SLICE, NULL);
  at->n = n;
  at->u.slice = n ? tr_arena_memdup(s->m->arena, d, sizeof(tr_slice_dim) * (size_t)n) : NULL;
}

static inline void set_pad(simp *s, tr_instr *in, const tr_pad_dim *d, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, TR_ATTR_PADDING, TR_AK_PADDING, NULL);
  at->n = n;
  at->u.pad = n ? tr_arena_memdup(s->m->arena, d, sizeof(tr_pad_dim) * (size_t)n) : NULL;
}

/* Copies src's attributes to dst except key skip (and skip2), and never
 * control-predecessors (they order src, not its replacement). Values are
 * shared: attributes are immutable once built. */
static inline void copy_attrs(simp *s, tr_instr *dst, const tr_instr *src, tr_attr_key skip,
                       tr_attr_key skip2) {
  for (int i = 0; i < src->nattrs; i++) {
    const tr_attr *a = &src->attrs[i];
    if (a->key != TR_ATTR_RAW && (a->key == skip || a->key == skip2 ||
                                  a->key == TR_ATTR_CONTROL_PREDECESSORS))
      continue;
    tr_attr *at = tr_instr_add_attr(s->m, dst, a->key, a->kind, a->name);
    at->n = a->n;
    at->u = a->u;
  }
}

/* An integer value in the slot form of dt: wrapped to its width, then
 * sign-extended (signed) or zero-extended (unsigned) into the slot. */
static inline uint64_t int_bits(tr_dtype dt, int64_t v) {
  int w = tr_dtypes[dt].bits;
  if (dt == TR_DT_PRED) return v != 0;
  if (w >= 64) return (uint64_t)v;
  uint64_t u = (uint64_t)v & (((uint64_t)1 << w) - 1);
  if (tr_dtypes[dt].kind == TR_DK_SINT && (u >> (w - 1)) & 1) u |= ~(((uint64_t)1 << w) - 1);
  return u;
}

/* The value 0, 1 (or another small integer) in dt's slot form. */
static inline uint64_t value_bits(tr_dtype dt, int64_t v) {
  return tr_dtype_is_float(dt) ? tr_float_from_double(dt, (double)v) : int_bits(dt, v);
}

/* A constant of shape (dt, rank, dims) whose elements all hold bits. */
static inline tr_instr *emit_const(simp *s, tr_instr *pos, tr_dtype dt, int rank, const int64_t *dims,
                            uint64_t bits) {
  tr_shape *sh = arr(s, dt, rank, dims);
  tr_literal *lit = tr_arena_alloc(s->m->arena, sizeof *lit);
  lit->shape = sh;
  int64_t n = tr_shape_count(sh);
  int es = tr_dtype_size(dt);
  lit->data = tr_arena_alloc(s->m->arena, (size_t)(n > 0 ? n : 1) * (size_t)es);
  for (int64_t i = 0; i < n; i++) slot_store(lit->data, es, i, bits);
  tr_instr *c = emit(s, pos, TR_OP_CONSTANT, sh, NULL, 0);
  c->literal = lit;
  return c;
}

/* bits everywhere in shape: a scalar constant, broadcast when needed. */
static inline tr_instr *emit_splat(simp *s, tr_instr *pos, const tr_shape *shape, uint64_t bits) {
  tr_instr *c = emit_const(s, pos, shape->dtype, 0, NULL, bits);
  if (shape->rank == 0) return c;
  tr_instr *b = emit1(s, pos, TR_OP_BROADCAST, tr_shape_clone(s->m->arena, shape), c);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return b;
}

/* Redirects old's users (and root status) to with, which has old's shape. */
static inline bool replace(simp *s, tr_instr *old, tr_instr *with) {
  (void)s;
  TR_ASSERT(tr_shape_equal(old->shape, with->shape));
  tr_bc_replace_uses(old, with);
  return true;
}

/* fire, then replace: for rules whose replacement already exists. */
static inline bool fire_replace(simp *s, tr_instr *in, tr_instr *with) {
  if (!fire(s, in)) return false;
  return replace(s, in, with);
}

/* A computation (p0, p1) -> root: the binary op it applies, with swap
 * set when it computes op(p1, p0). */
static inline bool simple_binary(const tr_comp *k, tr_op *op, bool *swap) {
  if (!k || k->nparams != 2 || !k->root || k->root->noperands != 2) return false;
  tr_instr *r = k->root, *a = r->operands[0], *b = r->operands[1];
  if (a->op != TR_OP_PARAMETER || b->op != TR_OP_PARAMETER || a == b) return false;
  if (r->shape->rank != 0) return false;
  switch (r->op) {
  case TR_OP_ADD: case TR_OP_MULTIPLY: case TR_OP_MAXIMUM: case TR_OP_MINIMUM:
  case TR_OP_AND: case TR_OP_OR: break;
  default: return false;
  }
  *op = r->op;
  *swap = a->param_index == 1;
  return true;
}

#endif
