/* simplify.c - the algebraic simplifier: named rewrite rules of the kinds
 * XLA's AlgebraicSimplifier has (simplify_rules.def lists them in the
 * order they are tried), applied over every computation until none fires.
 * Every rule is exact under the reference's semantics (docs/SEMANTICS.md):
 * the XLA rewrites that change values (x + 0.0 for floats, pow(x, 3) for
 * floats, a reduce init assumed to be the identity) are restricted to the
 * cases where they are exact, as each rule's comment says. "Exact" allows
 * NaN payload and quiet-bit differences, which no oracle judges. A rule builds its
 * replacement before the instruction it replaces and redirects the users;
 * the orphaned instructions are left to DCE. */
#include "compint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Ranks beyond this are left alone (the interpreter's limit as well). */
#define MAX_RANK 64

typedef struct {
  tr_comp_ctx *ctx; /* disabling, fuel, log */
  tr_module *m;     /* module being rewritten */
  tr_comp *c;       /* computation being rewritten */
  const char *rule; /* name of the rule being tried (for the log) */
} simp;

#define X(id, name, op) static bool rule_##id(simp *s, tr_instr *in);
#include "simplify_rules.def"
#undef X

typedef struct {
  const char *name;              /* rule name */
  tr_op op;                      /* opcode it looks at; TR_OP_COUNT = several */
  bool (*fn)(simp *, tr_instr *); /* the rule */
} rule_info;

static const rule_info rules[] = {
#define X(id, name, op) {name, TR_OP_##op, rule_##id},
#include "simplify_rules.def"
#undef X
};

/* ---- reading the IR ---- */

static const int64_t *ints_attr(const tr_instr *in, tr_attr_key k, int *n) {
  const tr_attr *at = tr_instr_attr(in, k);
  *n = at && at->kind == TR_AK_INTS ? at->n : 0;
  return at && at->kind == TR_AK_INTS ? at->u.ints : NULL;
}

static int64_t int_attr(const tr_instr *in, tr_attr_key k, int64_t def) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_INT ? at->u.i : def;
}

static const char *ident_attr(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_IDENT ? at->u.s : NULL;
}

static tr_comp *comp_attr(const tr_instr *in, tr_attr_key k) {
  const tr_attr *at = tr_instr_attr(in, k);
  return at && at->kind == TR_AK_COMP ? at->u.comp : NULL;
}

static bool has(const int64_t *v, int n, int64_t x) {
  for (int i = 0; i < n; i++)
    if (v[i] == x) return true;
  return false;
}

/* Static shapes only: the rules reason about exact sizes. */
static bool static_shape(const tr_shape *s) {
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

static bool all_static(const tr_instr *in) {
  if (!static_shape(in->shape)) return false;
  for (int i = 0; i < in->noperands; i++)
    if (!static_shape(in->operands[i]->shape)) return false;
  return true;
}

static tr_dkind kind(const tr_instr *x) { return tr_dtypes[x->shape->dtype].kind; }
static bool is_int(const tr_instr *x) { return tr_dtype_is_int(x->shape->dtype); }
static bool is_flt(const tr_instr *x) { return tr_dtype_is_float(x->shape->dtype); }

static uint64_t slot_load(const void *data, int es, int64_t i) {
  const unsigned char *p = (const unsigned char *)data + (size_t)i * (size_t)es;
  switch (es) {
  case 1: return *p;
  case 2: { uint16_t v; memcpy(&v, p, 2); return v; }
  case 4: { uint32_t v; memcpy(&v, p, 4); return v; }
  default: { uint64_t v; memcpy(&v, p, 8); return v; }
  }
}

static void slot_store(void *data, int es, int64_t i, uint64_t v) {
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
static bool splat_bits(const tr_instr *x, uint64_t *bits) {
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
static bool splat_int(const tr_instr *x, int64_t *v) {
  uint64_t b;
  if (!(is_int(x) || kind(x) == TR_DK_PRED) || !splat_bits(x, &b)) return false;
  int w = tr_dtype_size(x->shape->dtype) * 8;
  if (kind(x) == TR_DK_SINT && w < 64) *v = (int64_t)(b << (64 - w)) >> (64 - w);
  else *v = (int64_t)b;
  return true;
}

static bool splat_flt(const tr_instr *x, double *v) {
  uint64_t b;
  if (!is_flt(x) || !splat_bits(x, &b)) return false;
  *v = tr_float_to_double(x->shape->dtype, b);
  return true;
}

static bool int_is(const tr_instr *x, int64_t want) {
  int64_t v;
  return splat_int(x, &v) && v == want;
}

/* Float splat equal to want; a zero must also have the wanted sign. */
static bool flt_is(const tr_instr *x, double want) {
  double v;
  return splat_flt(x, &v) && v == want && (want != 0 || !signbit(v) == !signbit(want));
}

static bool is_one(const tr_instr *x) { return is_flt(x) ? flt_is(x, 1.0) : int_is(x, 1); }
static bool is_zero_int(const tr_instr *x) { return !is_flt(x) && int_is(x, 0); }

static bool is_ones(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (kind(x) == TR_DK_PRED) return int_is(x, 1);
  if (kind(x) == TR_DK_SINT) return int_is(x, -1);
  return kind(x) == TR_DK_UINT && int_is(x, (int64_t)tr_int_max(dt));
}

/* The least value of the type: max(x, lowest) = x for every x. */
static bool is_lowest(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (is_flt(x)) return flt_is(x, tr_float_has_inf(dt) ? -INFINITY : -tr_float_max(dt));
  if (kind(x) == TR_DK_SINT) return int_is(x, tr_int_min(dt));
  return (kind(x) == TR_DK_UINT || kind(x) == TR_DK_PRED) && int_is(x, 0);
}

static bool is_highest(const tr_instr *x) {
  tr_dtype dt = x->shape->dtype;
  if (is_flt(x)) return flt_is(x, tr_float_has_inf(dt) ? INFINITY : tr_float_max(dt));
  if (kind(x) == TR_DK_PRED) return int_is(x, 1);
  return is_int(x) && int_is(x, (int64_t)tr_int_max(dt));
}

/* ---- building ---- */

static bool fire(simp *s, tr_instr *in) { return tr_comp_fire(s->ctx, "simplify", s->rule, in); }

static tr_shape *like(simp *s, const tr_instr *in) { return tr_shape_clone(s->m->arena, in->shape); }

static tr_shape *arr(simp *s, tr_dtype dt, int rank, const int64_t *dims) {
  return tr_shape_array(s->m->arena, dt, rank, dims);
}

/* A new instruction just before pos, named after pos. */
static tr_instr *emit(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr **ops, int n) {
  tr_instr *in = tr_instr_new(s->m, op, tr_comp_fresh_name(s->c, pos->name, "s"), shape);
  tr_comp_insert_before(s->c, pos, in);
  if (n) tr_instr_set_operands(in, ops, n);
  return in;
}

static tr_instr *emit1(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr *a) {
  return emit(s, pos, op, shape, &a, 1);
}

static tr_instr *emit2(simp *s, tr_instr *pos, tr_op op, tr_shape *shape, tr_instr *a,
                       tr_instr *b) {
  tr_instr *ops[2] = {a, b};
  return emit(s, pos, op, shape, ops, 2);
}

static void set_ints(simp *s, tr_instr *in, tr_attr_key k, const int64_t *v, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, k, TR_AK_INTS, NULL);
  at->n = n;
  at->u.ints = n ? tr_arena_memdup(s->m->arena, v, sizeof(int64_t) * (size_t)n) : NULL;
}

static void set_int(simp *s, tr_instr *in, tr_attr_key k, int64_t v) {
  tr_instr_add_attr(s->m, in, k, TR_AK_INT, NULL)->u.i = v;
}

static void set_slice(simp *s, tr_instr *in, const tr_slice_dim *d, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, TR_ATTR_SLICE, TR_AK_SLICE, NULL);
  at->n = n;
  at->u.slice = n ? tr_arena_memdup(s->m->arena, d, sizeof(tr_slice_dim) * (size_t)n) : NULL;
}

static void set_pad(simp *s, tr_instr *in, const tr_pad_dim *d, int n) {
  tr_attr *at = tr_instr_add_attr(s->m, in, TR_ATTR_PADDING, TR_AK_PADDING, NULL);
  at->n = n;
  at->u.pad = n ? tr_arena_memdup(s->m->arena, d, sizeof(tr_pad_dim) * (size_t)n) : NULL;
}

/* Copies src's attributes to dst except key skip (and skip2), and never
 * control-predecessors (they order src, not its replacement). Values are
 * shared: attributes are immutable once built. */
static void copy_attrs(simp *s, tr_instr *dst, const tr_instr *src, tr_attr_key skip,
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
static uint64_t int_bits(tr_dtype dt, int64_t v) {
  int w = tr_dtypes[dt].bits;
  if (dt == TR_DT_PRED) return v != 0;
  if (w >= 64) return (uint64_t)v;
  uint64_t u = (uint64_t)v & (((uint64_t)1 << w) - 1);
  if (tr_dtypes[dt].kind == TR_DK_SINT && (u >> (w - 1)) & 1) u |= ~(((uint64_t)1 << w) - 1);
  return u;
}

/* The value 0, 1 (or another small integer) in dt's slot form. */
static uint64_t value_bits(tr_dtype dt, int64_t v) {
  return tr_dtype_is_float(dt) ? tr_float_from_double(dt, (double)v) : int_bits(dt, v);
}

/* A constant of shape (dt, rank, dims) whose elements all hold bits. */
static tr_instr *emit_const(simp *s, tr_instr *pos, tr_dtype dt, int rank, const int64_t *dims,
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
static tr_instr *emit_splat(simp *s, tr_instr *pos, const tr_shape *shape, uint64_t bits) {
  tr_instr *c = emit_const(s, pos, shape->dtype, 0, NULL, bits);
  if (shape->rank == 0) return c;
  tr_instr *b = emit1(s, pos, TR_OP_BROADCAST, tr_shape_clone(s->m->arena, shape), c);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return b;
}

/* Redirects old's users (and root status) to with, which has old's shape. */
static bool replace(simp *s, tr_instr *old, tr_instr *with) {
  (void)s;
  TR_ASSERT(tr_shape_equal(old->shape, with->shape));
  tr_comp_replace_uses(old, with);
  return true;
}

/* fire, then replace: for rules whose replacement already exists. */
static bool fire_replace(simp *s, tr_instr *in, tr_instr *with) {
  if (!fire(s, in)) return false;
  return replace(s, in, with);
}

/* ---- data movement ---- */

/* copy(x) -> x: trench ignores layouts for semantics, and copy only
 * changes the layout. */
static bool rule_copy_elim(simp *s, tr_instr *in) {
  return fire_replace(s, in, in->operands[0]);
}

/* reshape(x) -> x when the dims are x's already. */
static bool rule_reshape_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* reshape(reshape(x)) -> reshape(x): both keep row-major element order. */
static bool rule_reshape_of_reshape(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_RESHAPE || !fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x->operands[0]));
}

static bool broadcast_of_scalar(const tr_instr *x) {
  return x->op == TR_OP_BROADCAST && x->operands[0]->shape->rank == 0;
}

/* reshape(broadcast(scalar)) -> broadcast(scalar) of the new dims. */
static bool rule_reshape_of_broadcast_scalar(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!broadcast_of_scalar(x) || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

static bool same_layout(const tr_shape *a, const tr_shape *b) {
  if (a->has_layout != b->has_layout) return false;
  if (!a->has_layout) return true;
  if (!a->layout != !b->layout) return false;
  if (a->layout && memcmp(a->layout, b->layout, sizeof(int64_t) * (size_t)a->rank) != 0)
    return false;
  if (!a->layout_ext != !b->layout_ext) return false;
  return !a->layout_ext || strcmp(a->layout_ext, b->layout_ext) == 0;
}

/* bitcast(x) -> x when shape and layout are x's: the bits do not move. */
static bool rule_bitcast_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape) || !same_layout(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

static bool perm_identity(const int64_t *p, int n) {
  for (int i = 0; i < n; i++)
    if (p[i] != i) return false;
  return true;
}

/* transpose(x, {0,1,..}) -> x. */
static bool rule_transpose_identity(simp *s, tr_instr *in) {
  int n;
  const int64_t *p = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  if (!perm_identity(p, n)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* transpose(transpose(x, p1), p2) -> transpose(x, q), q[i] = p1[p2[i]]
 * (result dim i is inner dim p2[i], which is x dim p1[p2[i]]); x itself
 * when q is the identity. */
static bool rule_transpose_of_transpose(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_TRANSPOSE) return false;
  int n1, n2;
  const int64_t *p1 = ints_attr(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *p2 = ints_attr(in, TR_ATTR_DIMENSIONS, &n2);
  if (n1 != n2 || n1 > MAX_RANK) return false;
  int64_t q[MAX_RANK];
  for (int i = 0; i < n2; i++) q[i] = p1[p2[i]];
  if (!fire(s, in)) return false;
  if (perm_identity(q, n2)) return replace(s, in, x->operands[0]);
  tr_instr *t = emit1(s, in, TR_OP_TRANSPOSE, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, q, n2);
  return replace(s, in, t);
}

/* transpose(broadcast(scalar)) -> broadcast(scalar): every element is the
 * same. */
static bool rule_transpose_of_broadcast_scalar(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!broadcast_of_scalar(x) || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

/* transpose that only moves size-1 dims -> reshape (XLA's "transpose is a
 * bitcast"): the dims larger than 1 keep their order, so the row-major
 * element order is unchanged. */
static bool rule_transpose_to_reshape(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *p = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  int64_t last = -1;
  for (int i = 0; i < n; i++) {
    if (x->shape->dims[p[i]] == 1) continue;
    if (p[i] < last) return false;
    last = p[i];
  }
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x));
}

/* slice(x) -> x when it keeps every element (same dims imply start 0 and
 * stride 1 on every dim larger than 1). */
static bool rule_slice_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

static const tr_slice_dim *slice_attr(const tr_instr *in, int *n) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_SLICE);
  *n = at ? at->n : 0;
  return at ? at->u.slice : NULL;
}

/* slice(slice(x, s1:l1:t1), s2:l2:t2) -> slice(x, s1+s2*t1 : .. : t1*t2):
 * outer element j is inner element s2+j*t2, which is x element
 * s1+(s2+j*t2)*t1. */
static bool rule_slice_of_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_SLICE) return false;
  int n1, n2;
  const tr_slice_dim *a = slice_attr(x, &n1), *b = slice_attr(in, &n2);
  int r = in->shape->rank;
  if (n1 != r || n2 != r || r > MAX_RANK) return false;
  tr_slice_dim d[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t cnt = in->shape->dims[i];
    d[i].stride = a[i].stride * b[i].stride;
    d[i].start = a[i].start + b[i].start * a[i].stride;
    /* defect: the outer start is not scaled by the inner stride (matters
     * only when that stride != 1 and the outer start != 0) */
    if (TR_INJECTED(s->ctx->inject, SIMP_SLICE_OF_SLICE_STRIDE)) d[i].start = a[i].start + b[i].start;
    d[i].limit = d[i].start + (cnt - 1) * d[i].stride + 1;
    if (cnt == 0) d[i].start = d[i].limit = 0;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x->operands[0]);
  set_slice(s, t, d, r);
  return replace(s, in, t);
}

/* slice(concatenate(a0, a1, ..)) -> slice(ak) when the slice along the
 * concatenated dim reads only from ak. */
static bool rule_slice_of_concat(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_CONCATENATE) return false;
  int nd, n;
  const int64_t *dd = ints_attr(x, TR_ATTR_DIMENSIONS, &nd);
  const tr_slice_dim *sl = slice_attr(in, &n);
  int r = in->shape->rank;
  if (nd != 1 || n != r || r > MAX_RANK) return false;
  int64_t d = dd[0], cnt = in->shape->dims[d];
  if (cnt == 0) return false;
  int64_t first = sl[d].start, last = sl[d].start + (cnt - 1) * sl[d].stride, off = 0;
  for (int k = 0; k < x->noperands; k++) {
    int64_t size = x->operands[k]->shape->dims[d];
    if (first >= off && last < off + size) {
      if (!fire(s, in)) return false;
      tr_slice_dim nd2[MAX_RANK];
      memcpy(nd2, sl, sizeof(tr_slice_dim) * (size_t)r);
      nd2[d].start = first - off;
      nd2[d].limit = last - off + 1;
      tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x->operands[k]);
      set_slice(s, t, nd2, r);
      return replace(s, in, t);
    }
    off += size;
  }
  return false;
}

static const tr_pad_dim *pad_attr(const tr_instr *in, int *n);

/* slice(pad(x, v)) -> slice(x) when the slice reads no padding: without
 * interior padding, pad element i of a dim is x element i - lo. */
static bool rule_slice_of_pad(simp *s, tr_instr *in) {
  tr_instr *p = in->operands[0];
  if (p->op != TR_OP_PAD) return false;
  tr_instr *x = p->operands[0];
  int n, np;
  const tr_slice_dim *sl = slice_attr(in, &n);
  const tr_pad_dim *pd = pad_attr(p, &np);
  int r = in->shape->rank;
  if (n != r || np != r || r > MAX_RANK) return false;
  tr_slice_dim nd[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t cnt = in->shape->dims[i];
    if (pd[i].interior != 0 || pd[i].lo < 0 || pd[i].hi < 0 || cnt == 0) return false;
    int64_t first = sl[i].start, last = sl[i].start + (cnt - 1) * sl[i].stride;
    if (first < pd[i].lo || last >= pd[i].lo + x->shape->dims[i]) return false;
    nd[i].start = first - pd[i].lo;
    nd[i].limit = last - pd[i].lo + 1;
    nd[i].stride = sl[i].stride;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x);
  set_slice(s, t, nd, r);
  return replace(s, in, t);
}

/* slice(broadcast(y, bd)) -> broadcast(slice(y), bd): a broadcast only
 * maps indices, so slicing commutes with it (the inner slice is left out
 * when it keeps all of y). */
static bool rule_slice_of_broadcast(simp *s, tr_instr *in) {
  tr_instr *b = in->operands[0];
  if (b->op != TR_OP_BROADCAST) return false;
  tr_instr *y = b->operands[0];
  int n, nb;
  const tr_slice_dim *sl = slice_attr(in, &n);
  const int64_t *bd = ints_attr(b, TR_ATTR_DIMENSIONS, &nb);
  int yr = y->shape->rank;
  if (n != in->shape->rank || nb != yr || yr > MAX_RANK) return false;
  tr_slice_dim ys[MAX_RANK];
  int64_t dims[MAX_RANK];
  bool full = true;
  for (int i = 0; i < yr; i++) {
    ys[i] = sl[bd[i]];
    dims[i] = in->shape->dims[bd[i]];
    full &= dims[i] == y->shape->dims[i];
  }
  if (!fire(s, in)) return false;
  tr_instr *src = y;
  if (!full) {
    src = emit1(s, in, TR_OP_SLICE, arr(s, y->shape->dtype, yr, dims), y);
    set_slice(s, src, ys, yr);
  }
  tr_instr *t = emit1(s, in, TR_OP_BROADCAST, like(s, in), src);
  set_ints(s, t, TR_ATTR_DIMENSIONS, bd, nb);
  return replace(s, in, t);
}

/* reverse(x, dims) -> x when every reversed dim has at most one element. */
static bool rule_reverse_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *d = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  for (int i = 0; i < n; i++)
    if (x->shape->dims[d[i]] > 1) return false;
  return fire_replace(s, in, x);
}

/* reverse(reverse(x, d1), d2) -> reverse(x, d1 xor d2), or x. */
static bool rule_reverse_of_reverse(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_REVERSE) return false;
  int n1, n2, n = 0;
  const int64_t *d1 = ints_attr(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *d2 = ints_attr(in, TR_ATTR_DIMENSIONS, &n2);
  int64_t d[MAX_RANK];
  if (in->shape->rank > MAX_RANK) return false;
  for (int i = 0; i < in->shape->rank; i++)
    if (has(d1, n1, i) != has(d2, n2, i)) d[n++] = i;
  if (!fire(s, in)) return false;
  if (n == 0) return replace(s, in, x->operands[0]);
  tr_instr *t = emit1(s, in, TR_OP_REVERSE, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, d, n);
  return replace(s, in, t);
}

/* broadcast(x) -> x when it adds no dims and keeps their order. */
static bool rule_broadcast_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const int64_t *d = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  if (!tr_shape_equal(in->shape, x->shape) || !perm_identity(d, n)) return false;
  return fire_replace(s, in, x);
}

/* broadcast(broadcast(x, d1), d2) -> broadcast(x, d2[d1[i]]). */
static bool rule_broadcast_of_broadcast(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_BROADCAST) return false;
  int n1, n2;
  const int64_t *d1 = ints_attr(x, TR_ATTR_DIMENSIONS, &n1);
  const int64_t *d2 = ints_attr(in, TR_ATTR_DIMENSIONS, &n2);
  int r0 = x->operands[0]->shape->rank;
  if (n1 != r0 || n2 != x->shape->rank || r0 > MAX_RANK) return false;
  int64_t d[MAX_RANK];
  for (int i = 0; i < r0; i++) d[i] = d2[d1[i]];
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_BROADCAST, like(s, in), x->operands[0]);
  set_ints(s, t, TR_ATTR_DIMENSIONS, d, r0);
  return replace(s, in, t);
}

/* broadcast(iota(k)) -> iota along the dim that k went to. */
static bool rule_broadcast_of_iota(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_IOTA) return false;
  int n;
  const int64_t *d = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  int64_t k = int_attr(x, TR_ATTR_IOTA_DIMENSION, -1);
  if (k < 0 || k >= n) return false;
  if (!fire(s, in)) return false;
  tr_instr *t = emit(s, in, TR_OP_IOTA, like(s, in), NULL, 0);
  set_int(s, t, TR_ATTR_IOTA_DIMENSION, d[k]);
  return replace(s, in, t);
}

/* Constants this small are cheaper as literals than as broadcasts, and
 * later rules see their values directly. */
#define SPLAT_FOLD_MAX 16

/* broadcast(scalar constant) -> constant when it has at most 16 elements. */
static bool rule_broadcast_scalar_const(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  uint64_t bits;
  int64_t n = tr_shape_count(in->shape);
  if (in->shape->rank == 0 || n <= 0 || n > SPLAT_FOLD_MAX) return false;
  if (x->op != TR_OP_CONSTANT || x->shape->rank != 0 || !splat_bits(x, &bits)) return false;
  if (!fire(s, in)) return false;
  tr_instr *c = emit_const(s, in, in->shape->dtype, in->shape->rank, in->shape->dims, bits);
  c->shape = like(s, in); /* keep the layout the users saw */
  return replace(s, in, c);
}

/* concatenate(x) -> x. */
static bool rule_concat_single(simp *s, tr_instr *in) {
  if (in->noperands != 1) return false;
  return fire_replace(s, in, in->operands[0]);
}

static int64_t concat_dim(const tr_instr *in) {
  int n;
  const int64_t *d = ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  return n == 1 ? d[0] : -1;
}

/* concatenate(.., empty, ..) -> concatenate without the operands that
 * contribute nothing along the concatenated dim. */
static bool rule_concat_empty_operand(simp *s, tr_instr *in) {
  int64_t d = concat_dim(in);
  if (d < 0) return false;
  int keep = 0;
  for (int i = 0; i < in->noperands; i++) keep += in->operands[i]->shape->dims[d] != 0;
  if (keep == in->noperands || keep == 0) return false;
  if (!fire(s, in)) return false;
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)keep);
  int k = 0;
  for (int i = 0; i < in->noperands; i++)
    if (in->operands[i]->shape->dims[d] != 0) ops[k++] = in->operands[i];
  tr_instr *t = k == 1 ? ops[0] : emit(s, in, TR_OP_CONCATENATE, like(s, in), ops, k);
  if (k > 1) copy_attrs(s, t, in, TR_ATTR_COUNT, TR_ATTR_COUNT);
  free(ops);
  return replace(s, in, t);
}

/* Whether slices a and b of the same operand are adjacent along d with
 * stride 1 and identical elsewhere. */
static bool adjacent_slices(const tr_instr *a, const tr_instr *b, int64_t d) {
  if (a->op != TR_OP_SLICE || b->op != TR_OP_SLICE || a->operands[0] != b->operands[0])
    return false;
  int na, nb;
  const tr_slice_dim *sa = slice_attr(a, &na), *sb = slice_attr(b, &nb);
  if (na != nb || na != a->shape->rank || na > MAX_RANK) return false;
  for (int i = 0; i < na; i++) {
    if (i == d) continue;
    if (sa[i].start != sb[i].start || sa[i].limit != sb[i].limit || sa[i].stride != sb[i].stride)
      return false;
  }
  return sa[d].stride == 1 && sb[d].stride == 1 && sa[d].limit == sb[d].start;
}

/* concatenate(slice(x, a:b), slice(x, b:c)) -> slice(x, a:c) along the
 * concatenated dim; every adjacent run merges in one application. */
static bool rule_concat_adjacent_slices(simp *s, tr_instr *in) {
  int64_t d = concat_dim(in);
  int n = in->noperands;
  if (d < 0) return false;
  bool any = false;
  for (int i = 0; i + 1 < n && !any; i++) any = adjacent_slices(in->operands[i], in->operands[i + 1], d);
  if (!any || !fire(s, in)) return false;
  tr_instr **ops = tr_xmalloc(sizeof(tr_instr *) * (size_t)n);
  int k = 0;
  for (int i = 0; i < n;) {
    int j = i;
    while (j + 1 < n && adjacent_slices(in->operands[j], in->operands[j + 1], d)) j++;
    if (j == i) {
      ops[k++] = in->operands[i++];
      continue;
    }
    tr_instr *first = in->operands[i], *lastop = in->operands[j];
    int r;
    const tr_slice_dim *sf = slice_attr(first, &r);
    const tr_slice_dim *sl = slice_attr(lastop, &r);
    tr_slice_dim nd[MAX_RANK];
    int64_t dims[MAX_RANK];
    memcpy(nd, sf, sizeof(tr_slice_dim) * (size_t)r);
    nd[d].limit = sl[d].limit;
    memcpy(dims, first->shape->dims, sizeof(int64_t) * (size_t)r);
    dims[d] = nd[d].limit - nd[d].start;
    tr_instr *t = emit1(s, in, TR_OP_SLICE, arr(s, in->shape->dtype, r, dims), first->operands[0]);
    set_slice(s, t, nd, r);
    ops[k++] = t;
    i = j + 1;
  }
  tr_instr *t;
  if (k == 1) {
    t = ops[0];
    t->shape = like(s, in);
  } else {
    t = emit(s, in, TR_OP_CONCATENATE, like(s, in), ops, k);
    copy_attrs(s, t, in, TR_ATTR_COUNT, TR_ATTR_COUNT);
  }
  free(ops);
  return replace(s, in, t);
}

static const tr_pad_dim *pad_attr(const tr_instr *in, int *n) {
  const tr_attr *at = tr_instr_attr(in, TR_ATTR_PADDING);
  *n = at ? at->n : 0;
  return at ? at->u.pad : NULL;
}

/* pad(x, v, 0_0_0 everywhere) -> x. */
static bool rule_pad_noop(simp *s, tr_instr *in) {
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  for (int i = 0; i < n; i++)
    if (p[i].lo || p[i].hi || p[i].interior) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* Interior padding goes between elements: a dim of 0 or 1 elements has no
 * gaps, so its interior padding is dropped (pad-noop may follow). */
static bool rule_pad_interior_trivial(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  if (n != x->shape->rank || n > MAX_RANK) return false;
  tr_pad_dim q[MAX_RANK];
  bool any = false;
  for (int i = 0; i < n; i++) {
    q[i] = p[i];
    if (p[i].interior && x->shape->dims[i] <= 1) {
      q[i].interior = 0;
      any = true;
    }
  }
  if (!any || !fire(s, in)) return false;
  tr_instr *t = emit2(s, in, TR_OP_PAD, like(s, in), x, in->operands[1]);
  set_pad(s, t, q, n);
  return replace(s, in, t);
}

/* pad with negative edge padding -> slice(pad with the non-negative part):
 * negative padding removes elements from the edges of the interior- and
 * edge-padded array, which is exactly a slice of it. The inner pad is
 * left out when nothing remains of it. */
static bool rule_pad_negative_to_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n;
  const tr_pad_dim *p = pad_attr(in, &n);
  if (n != x->shape->rank || n > MAX_RANK) return false;
  bool neg = false, inner = false;
  for (int i = 0; i < n; i++) {
    neg |= p[i].lo < 0 || p[i].hi < 0;
    inner |= p[i].lo > 0 || p[i].hi > 0 || p[i].interior > 0;
  }
  if (!neg || !fire(s, in)) return false;
  tr_pad_dim q[MAX_RANK];
  tr_slice_dim sl[MAX_RANK];
  int64_t dims[MAX_RANK];
  for (int i = 0; i < n; i++) {
    int64_t m = x->shape->dims[i];
    q[i].lo = p[i].lo > 0 ? p[i].lo : 0;
    q[i].hi = p[i].hi > 0 ? p[i].hi : 0;
    q[i].interior = p[i].interior;
    dims[i] = q[i].lo + q[i].hi + m + (m > 0 ? (m - 1) * p[i].interior : 0);
    sl[i].start = p[i].lo < 0 ? -p[i].lo : 0;
    sl[i].limit = dims[i] - (p[i].hi < 0 ? -p[i].hi : 0);
    sl[i].stride = 1;
  }
  tr_instr *base = x;
  if (inner) {
    base = emit2(s, in, TR_OP_PAD, arr(s, x->shape->dtype, n, dims), x, in->operands[1]);
    set_pad(s, base, q, n);
  }
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), base);
  set_slice(s, t, sl, n);
  return replace(s, in, t);
}

/* dynamic-slice and -update-slice in the scalar-index form: operand i
 * (from `first`) is the start along dim i. The old single-vector form is
 * left alone. */
static bool scalar_indices(const tr_instr *in, int first, int rank) {
  if (in->noperands != first + rank) return false;
  for (int i = first; i < in->noperands; i++)
    if (in->operands[i]->shape->rank != 0 || !is_int(in->operands[i])) return false;
  return true;
}

/* dynamic-slice(x, ..) -> x when the slice is as large as x: every start
 * is clamped to 0. */
static bool rule_dynamic_slice_full(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* XLA's start clamping: the reference reads each index as int64 (a u64 of
 * 2^63 or more is negative) and clamps it to [0, dim - size]. */
static int64_t clamp_start(int64_t v, int64_t dim, int64_t size) {
  if (v > dim - size) v = dim - size;
  if (v < 0) v = 0;
  return v;
}

/* dynamic-slice(x, constant starts) -> slice(x) at the clamped starts. */
static bool rule_dynamic_slice_const(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int r = x->shape->rank;
  if (!scalar_indices(in, 1, r) || r > MAX_RANK) return false;
  tr_slice_dim sl[MAX_RANK];
  for (int i = 0; i < r; i++) {
    int64_t v;
    if (!splat_int(in->operands[1 + i], &v)) return false;
    /* defect: a negative constant start wraps from the end (Python's
     * indexing) before the clamp, instead of clamping to 0 */
    if (TR_INJECTED(s->ctx->inject, SIMP_DYNAMIC_SLICE_NEGATIVE_WRAP) && v < 0 && v >= -x->shape->dims[i])
      v += x->shape->dims[i];
    sl[i].start = clamp_start(v, x->shape->dims[i], in->shape->dims[i]);
    sl[i].limit = sl[i].start + in->shape->dims[i];
    sl[i].stride = 1;
  }
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, like(s, in), x);
  set_slice(s, t, sl, r);
  return replace(s, in, t);
}

/* The start idx clamped to [0, hi] as an s64 instruction (a constant when
 * idx is one). Converting to s64 first matches the reference, which reads
 * every index as int64; clamping in s64 cannot overflow. */
static tr_instr *clamped_s64(simp *s, tr_instr *pos, tr_instr *idx, int64_t hi, int64_t *cval,
                             bool *is_const) {
  int64_t v;
  if (splat_int(idx, &v)) {
    *is_const = true;
    *cval = clamp_start(v, hi, 0);
    return NULL;
  }
  *is_const = false;
  tr_instr *x = idx;
  if (idx->shape->dtype != TR_DT_S64) x = emit1(s, pos, TR_OP_CONVERT, arr(s, TR_DT_S64, 0, NULL), idx);
  tr_instr *lo = emit_const(s, pos, TR_DT_S64, 0, NULL, 0);
  tr_instr *up = emit_const(s, pos, TR_DT_S64, 0, NULL, (uint64_t)hi);
  tr_instr *ops[3] = {lo, x, up};
  return emit(s, pos, TR_OP_CLAMP, arr(s, TR_DT_S64, 0, NULL), ops, 3);
}

/* dynamic-slice(dynamic-slice(x, i), j) -> dynamic-slice(x, i' + j') with
 * i' = clamp(i, 0, X - S1) and j' = clamp(j, 0, S1 - S2) in s64: the
 * inner and outer clamps made explicit. The sum lies in [0, X - S2], so
 * the new slice's own clamp changes nothing. */
static bool rule_dynamic_slice_nested(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_DYNAMIC_SLICE) return false;
  tr_instr *x = y->operands[0];
  int r = x->shape->rank;
  if (r > MAX_RANK || !scalar_indices(in, 1, r) || !scalar_indices(y, 1, r)) return false;
  if (!fire(s, in)) return false;
  tr_instr *ops[1 + MAX_RANK];
  ops[0] = x;
  for (int d = 0; d < r; d++) {
    int64_t X = x->shape->dims[d], S1 = y->shape->dims[d], S2 = in->shape->dims[d];
    int64_t ci, cj;
    bool ki, kj;
    tr_instr *a = clamped_s64(s, in, y->operands[1 + d], X - S1, &ci, &ki);
    tr_instr *b = clamped_s64(s, in, in->operands[1 + d], S1 - S2, &cj, &kj);
    tr_shape *sc = arr(s, TR_DT_S64, 0, NULL);
    if (ki && kj) ops[1 + d] = emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)(ci + cj));
    else if (ki) ops[1 + d] = ci ? emit2(s, in, TR_OP_ADD, sc, emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)ci), b) : b;
    else if (kj) ops[1 + d] = cj ? emit2(s, in, TR_OP_ADD, sc, a, emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)cj)) : a;
    else ops[1 + d] = emit2(s, in, TR_OP_ADD, sc, a, b);
  }
  tr_instr *t = emit(s, in, TR_OP_DYNAMIC_SLICE, like(s, in), ops, 1 + r);
  set_ints(s, t, TR_ATTR_DYNAMIC_SLICE_SIZES, in->shape->dims, r);
  return replace(s, in, t);
}

/* dynamic-update-slice(x, u, ..) -> u when u is as large as x: the start
 * is clamped to 0 and u overwrites everything. */
static bool rule_dus_full(simp *s, tr_instr *in) {
  tr_instr *u = in->operands[1];
  if (!tr_shape_equal(in->shape, u->shape)) return false;
  return fire_replace(s, in, u);
}

/* gather whose slice is the whole operand and that gathers it once ->
 * reshape(operand): every start clamps to 0, and the offset dims keep the
 * operand's order (collapsed dims have size 1). */
static bool rule_gather_whole_operand(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  int n, nb;
  const int64_t *sz = ints_attr(in, TR_ATTR_SLICE_SIZES, &n);
  ints_attr(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nb);
  if (nb || n != x->shape->rank || in->shape->dtype != x->shape->dtype) return false;
  for (int i = 0; i < n; i++)
    if (sz[i] != x->shape->dims[i]) return false;
  if (tr_shape_count(in->shape) != tr_shape_count(x->shape)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), x));
}

/* Element k of a constant integer array, read as the reference reads
 * indices: as int64 (signed types sign-extended, unsigned zero-extended). */
static bool const_int_at(const tr_instr *x, int64_t k, int64_t *v) {
  if (x->op != TR_OP_CONSTANT || !x->literal || x->literal->elided || !x->literal->data || !is_int(x))
    return false;
  tr_dtype dt = x->shape->dtype;
  int es = tr_dtype_size(dt), w = es * 8;
  uint64_t b = slot_load(x->literal->data, es, k);
  *v = tr_dtypes[dt].kind == TR_DK_SINT && w < 64 ? (int64_t)(b << (64 - w)) >> (64 - w) : (int64_t)b;
  return true;
}

/* gather(x, constant indices) that gathers one slice -> reshape(slice(x))
 * at the clamped start: gather clamps each start so the slice fits, and
 * with a single batch element the output is the slice in row-major order
 * (offset dims follow the operand's order, collapsed dims have size 1). */
static bool rule_gather_const_to_slice(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0], *idx = in->operands[1];
  int n, nmap, nb;
  const int64_t *sz = ints_attr(in, TR_ATTR_SLICE_SIZES, &n);
  const int64_t *map = ints_attr(in, TR_ATTR_START_INDEX_MAP, &nmap);
  ints_attr(in, TR_ATTR_OPERAND_BATCHING_DIMS, &nb);
  int64_t ivd = int_attr(in, TR_ATTR_INDEX_VECTOR_DIM, -1);
  int r = x->shape->rank;
  if (nb || n != r || r > MAX_RANK || ivd < 0 || ivd > idx->shape->rank) return false;
  int64_t ncomp = ivd < idx->shape->rank ? idx->shape->dims[ivd] : 1;
  if (ncomp != nmap || nmap == 0 || tr_shape_count(idx->shape) != ncomp) return false;
  tr_slice_dim sl[MAX_RANK];
  int64_t dims[MAX_RANK];
  for (int d = 0; d < r; d++) {
    sl[d].start = 0;
    sl[d].stride = 1;
    dims[d] = sz[d];
  }
  for (int k = 0; k < nmap; k++) {
    int64_t v;
    if (!const_int_at(idx, k, &v)) return false;
    sl[map[k]].start = clamp_start(v, x->shape->dims[map[k]], sz[map[k]]);
  }
  for (int d = 0; d < r; d++) sl[d].limit = sl[d].start + sz[d];
  if (!fire(s, in)) return false;
  tr_instr *t = emit1(s, in, TR_OP_SLICE, arr(s, x->shape->dtype, r, dims), x);
  set_slice(s, t, sl, r);
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), t));
}

/* scatter with no update elements (or into an empty operand) -> operand. */
static bool rule_scatter_no_updates(simp *s, tr_instr *in) {
  if (in->noperands != 3) return false;
  if (tr_shape_count(in->operands[2]->shape) != 0 && tr_shape_count(in->operands[0]->shape) != 0)
    return false;
  return fire_replace(s, in, in->operands[0]);
}

/* A computation (p0, p1) -> root: the binary op it applies, with swap
 * set when it computes op(p1, p0). */
static bool simple_binary(const tr_comp *k, tr_op *op, bool *swap) {
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

/* scatter(x, zero indices, u) whose combiner returns the update and whose
 * single window covers all of x -> reshape(u). The window is in bounds at
 * start 0, so it is applied, and it overwrites every element. */
static bool rule_scatter_overwrite_whole(simp *s, tr_instr *in) {
  if (in->noperands != 3) return false;
  tr_instr *x = in->operands[0], *idx = in->operands[1], *u = in->operands[2];
  tr_comp *k = comp_attr(in, TR_ATTR_TO_APPLY);
  if (!k || k->nparams != 2 || !k->root || k->root->op != TR_OP_PARAMETER || k->root->param_index != 1)
    return false;
  int nw, nins, nb;
  const int64_t *uw = ints_attr(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nw);
  const int64_t *ins = ints_attr(in, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
  ints_attr(in, TR_ATTR_INPUT_BATCHING_DIMS, &nb);
  if (nb || nw + nins != x->shape->rank || u->shape->dtype != x->shape->dtype) return false;
  /* Window dims of u, in order, are x's non-inserted dims, in order. */
  int w = 0;
  for (int i = 0; i < x->shape->rank; i++) {
    if (has(ins, nins, i)) {
      if (x->shape->dims[i] != 1) return false;
      continue;
    }
    if (w >= nw || u->shape->dims[uw[w]] != x->shape->dims[i]) return false;
    w++;
  }
  if (tr_shape_count(u->shape) != tr_shape_count(x->shape) || !int_is(idx, 0)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_RESHAPE, like(s, in), u));
}

/* scatter(x, constant indices, u) of a single window whose combiner
 * returns the update -> dynamic-update-slice(x, reshape(u), starts) when
 * the window lies inside x, and x itself when it does not: scatter skips
 * a window that would leave the operand (where dynamic-update-slice
 * would clamp it back in), so the bounds decide at compile time. */
static bool rule_scatter_const_to_dus(simp *s, tr_instr *in) {
  if (in->noperands != 3) return false;
  tr_instr *x = in->operands[0], *idx = in->operands[1], *u = in->operands[2];
  tr_comp *k = comp_attr(in, TR_ATTR_TO_APPLY);
  if (!k || k->nparams != 2 || !k->root || k->root->op != TR_OP_PARAMETER || k->root->param_index != 1)
    return false;
  int nw, nins, nb, nmap;
  const int64_t *uw = ints_attr(in, TR_ATTR_UPDATE_WINDOW_DIMS, &nw);
  const int64_t *ins = ints_attr(in, TR_ATTR_INSERTED_WINDOW_DIMS, &nins);
  const int64_t *map = ints_attr(in, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &nmap);
  ints_attr(in, TR_ATTR_INPUT_BATCHING_DIMS, &nb);
  int64_t ivd = int_attr(in, TR_ATTR_INDEX_VECTOR_DIM, -1);
  int r = x->shape->rank;
  if (nb || nw + nins != r || r > MAX_RANK || ivd < 0 || ivd > idx->shape->rank) return false;
  int64_t ncomp = ivd < idx->shape->rank ? idx->shape->dims[ivd] : 1;
  if (ncomp != nmap || tr_shape_count(idx->shape) != ncomp) return false;
  /* The window: inserted dims have size 1, the others take u's window
   * dims in order. One scatter index, so u holds exactly one window. */
  int64_t win[MAX_RANK], start[MAX_RANK];
  for (int d = 0, w = 0; d < r; d++) {
    start[d] = 0;
    if (has(ins, nins, d)) win[d] = 1;
    else if (w < nw) win[d] = u->shape->dims[uw[w++]];
    else return false;
  }
  int64_t wcount = 1;
  for (int d = 0; d < r; d++) wcount *= win[d];
  if (wcount != tr_shape_count(u->shape) || wcount == 0) return false;
  for (int j = 0; j < nmap; j++) {
    int64_t v;
    if (!const_int_at(idx, j, &v)) return false;
    start[map[j]] = v;
  }
  bool inside = true;
  for (int d = 0; d < r; d++) inside &= start[d] >= 0 && start[d] <= x->shape->dims[d] - win[d];
  if (!fire(s, in)) return false;
  if (!inside) return replace(s, in, x);
  tr_instr *ops[1 + 1 + MAX_RANK];
  ops[0] = x;
  ops[1] = emit1(s, in, TR_OP_RESHAPE, arr(s, u->shape->dtype, r, win), u);
  for (int d = 0; d < r; d++) ops[2 + d] = emit_const(s, in, TR_DT_S64, 0, NULL, (uint64_t)start[d]);
  return replace(s, in, emit(s, in, TR_OP_DYNAMIC_UPDATE_SLICE, like(s, in), ops, 2 + r));
}

/* get-tuple-element(tuple(a0, a1, ..), i) -> ai. */
static bool rule_gte_of_tuple(simp *s, tr_instr *in) {
  tr_instr *t = in->operands[0];
  int64_t i = int_attr(in, TR_ATTR_INDEX, -1);
  if (t->op != TR_OP_TUPLE || i < 0 || i >= t->noperands) return false;
  return fire_replace(s, in, t->operands[i]);
}

/* tuple(gte(t, 0), .., gte(t, n-1)) -> t when t has exactly n elements. */
static bool rule_tuple_of_gtes(simp *s, tr_instr *in) {
  if (in->noperands == 0) return false;
  tr_instr *t = NULL;
  for (int i = 0; i < in->noperands; i++) {
    tr_instr *g = in->operands[i];
    if (g->op != TR_OP_GET_TUPLE_ELEMENT || int_attr(g, TR_ATTR_INDEX, -1) != i) return false;
    if (t && g->operands[0] != t) return false;
    t = g->operands[0];
  }
  if (t->shape->dtype != TR_DT_TUPLE || t->shape->nelems != in->noperands ||
      !tr_shape_equal(t->shape, in->shape))
    return false;
  return fire_replace(s, in, t);
}

/* ---- selection and comparison ---- */

/* select(constant predicate, a, b) -> a or b. */
static bool rule_select_const_pred(simp *s, tr_instr *in) {
  int64_t v;
  if (!splat_int(in->operands[0], &v)) return false;
  return fire_replace(s, in, in->operands[v ? 1 : 2]);
}

/* select(p, a, a) -> a. */
static bool rule_select_same(simp *s, tr_instr *in) {
  if (in->operands[1] != in->operands[2]) return false;
  return fire_replace(s, in, in->operands[1]);
}

/* select(not(p), a, b) -> select(p, b, a). */
static bool rule_select_not_pred(simp *s, tr_instr *in) {
  tr_instr *p = in->operands[0];
  if (p->op != TR_OP_NOT || !fire(s, in)) return false;
  tr_instr *ops[3] = {p->operands[0], in->operands[2], in->operands[1]};
  return replace(s, in, emit(s, in, TR_OP_SELECT, like(s, in), ops, 3));
}

/* compare(x, x) -> constant for integers and pred (EQ, GE, LE true; NE,
 * GT, LT false), and for floats under type=TOTALORDER, where x equals
 * itself even when NaN. Not for partial-order floats: NaN != NaN. */
static bool rule_compare_self(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  const char *dir = ident_attr(in, TR_ATTR_DIRECTION), *ty = ident_attr(in, TR_ATTR_TYPE);
  if (x != in->operands[1] || !dir) return false;
  if (!(is_int(x) || kind(x) == TR_DK_PRED || (is_flt(x) && ty && strcmp(ty, "TOTALORDER") == 0)))
    return false;
  bool t = strcmp(dir, "EQ") == 0 || strcmp(dir, "GE") == 0 || strcmp(dir, "LE") == 0;
  if (!fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, t));
}

/* compare(x >= 0) -> true and compare(x < 0) -> false for unsigned x (and
 * the mirrored 0 <= x, 0 > x). */
static bool rule_compare_unsigned_zero(simp *s, tr_instr *in) {
  tr_instr *a = in->operands[0], *b = in->operands[1];
  const char *dir = ident_attr(in, TR_ATTR_DIRECTION), *ty = ident_attr(in, TR_ATTR_TYPE);
  if (kind(a) != TR_DK_UINT || !dir || (ty && strcmp(ty, "UNSIGNED") != 0)) return false;
  int v = -1;
  if (int_is(b, 0)) {
    if (strcmp(dir, "GE") == 0) v = 1;
    if (strcmp(dir, "LT") == 0) v = 0;
  } else if (int_is(a, 0)) {
    if (strcmp(dir, "LE") == 0) v = 1;
    if (strcmp(dir, "GT") == 0) v = 0;
  }
  if (v < 0 || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, (uint64_t)v));
}

/* ---- conversions ---- */

static bool ieee(tr_dtype t) {
  return t == TR_DT_F16 || t == TR_DT_BF16 || t == TR_DT_F32 || t == TR_DT_F64;
}

/* Whether converting a to b keeps every value of a exactly (so converting
 * back, or on to a third type, sees the same value). */
static bool convert_exact(tr_dtype a, tr_dtype b) {
  const tr_dtype_info *fa = &tr_dtypes[a], *fb = &tr_dtypes[b];
  if (a == b || !fa->core || !fb->core) return false;
  switch (fa->kind) {
  case TR_DK_PRED: return fb->kind == TR_DK_SINT || fb->kind == TR_DK_UINT || ieee(b);
  case TR_DK_SINT:
    if (fb->kind == TR_DK_SINT) return fb->bits > fa->bits;
    return ieee(b) && fb->mbits + 1 >= fa->bits - 1;
  case TR_DK_UINT:
    if (fb->kind == TR_DK_SINT || fb->kind == TR_DK_UINT) return fb->bits > fa->bits;
    return ieee(b) && fb->mbits + 1 >= fa->bits;
  case TR_DK_FLOAT:
    return ieee(a) && ieee(b) && fb->ebits >= fa->ebits && fb->mbits >= fa->mbits;
  default: return false;
  }
}

/* convert(x) -> x when the type does not change. */
static bool rule_convert_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (in->shape->dtype != x->shape->dtype) return false;
  return fire_replace(s, in, x);
}

/* convert(convert(x: A -> B) -> A) -> x when A -> B is exact (widening
 * ints, u->s of more bits, small ints to floats, f16/bf16 -> f32 -> f64). */
static bool rule_convert_roundtrip(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_CONVERT) return false;
  tr_instr *x = y->operands[0];
  if (x->shape->dtype != in->shape->dtype || !convert_exact(x->shape->dtype, y->shape->dtype))
    return false;
  return fire_replace(s, in, x);
}

/* convert(convert(x: A -> B) -> C) -> convert(x: A -> C) when A -> B is
 * exact and A, B are both integers (or pred) or both floats: then B -> C
 * converts the same value the same way A -> C does. Not int -> float ->
 * int: float -> int saturates where int -> int wraps. */
static bool rule_convert_chain_exact(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_CONVERT) return false;
  tr_instr *x = y->operands[0];
  tr_dtype a = x->shape->dtype, b = y->shape->dtype, c = in->shape->dtype;
  if (a == c || !convert_exact(a, b)) return false;
  if (tr_dtype_is_float(a) != tr_dtype_is_float(b)) return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit1(s, in, TR_OP_CONVERT, like(s, in), x));
}

/* bitcast-convert(x) -> x when the type does not change. */
static bool rule_bitcast_convert_noop(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!tr_shape_equal(in->shape, x->shape)) return false;
  return fire_replace(s, in, x);
}

/* bitcast-convert(bitcast-convert(x: A -> B) -> A) -> x for types of the
 * same width: the bits come back unchanged. */
static bool rule_bitcast_convert_roundtrip(simp *s, tr_instr *in) {
  tr_instr *y = in->operands[0];
  if (y->op != TR_OP_BITCAST_CONVERT) return false;
  tr_instr *x = y->operands[0];
  if (!tr_shape_equal(in->shape, x->shape) || tr_dtypes[x->shape->dtype].bits != tr_dtypes[y->shape->dtype].bits)
    return false;
  return fire_replace(s, in, x);
}

/* reduce-precision(x) -> x when it keeps every bit. The reference (as
 * XLA's evaluator) reduces narrow floats through f32, where an exponent
 * below 8 bits also flushes their subnormals: so f16 with exponent_bits=5
 * is NOT a no-op, and narrow types need exponent_bits >= 8. */
static bool rule_reduce_precision_noop(simp *s, tr_instr *in) {
  tr_dtype dt = in->shape->dtype;
  int64_t e = int_attr(in, TR_ATTR_EXPONENT_BITS, -1), m = int_attr(in, TR_ATTR_MANTISSA_BITS, -1);
  int need_e = dt == TR_DT_F64 ? 11 : 8;
  if (!tr_dtype_is_float(dt) || !tr_dtypes[dt].core || e < need_e || m < tr_dtypes[dt].mbits)
    return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- contractions and reductions ---- */

/* dot whose contracting dims hold no element -> zeros: every output is
 * an empty sum, which the reference starts (and ends) at +0. */
static bool rule_dot_empty_contraction(simp *s, tr_instr *in) {
  int nc;
  const int64_t *c = ints_attr(in, TR_ATTR_LHS_CONTRACTING_DIMS, &nc);
  const tr_instr *a = in->operands[0];
  bool empty = false;
  for (int i = 0; i < nc; i++) empty |= a->shape->dims[c[i]] == 0;
  if (!empty || !tr_dtype_is_array(in->shape->dtype) || kind(in) == TR_DK_COMPLEX || !fire(s, in))
    return false;
  return replace(s, in, emit_splat(s, in, in->shape, value_bits(in->shape->dtype, 0)));
}

/* dot(transpose(a), b) -> dot(a, b) with a's contracting and batch dims
 * renamed through the permutation, when the free dims keep their order
 * (else the result's dims would come out permuted). The contracting list
 * keeps its order, so the reference sums in the same order. One side per
 * application, lhs first. */
static bool rule_dot_transpose_operand(simp *s, tr_instr *in) {
  for (int side = 0; side < 2; side++) {
    tr_instr *t = in->operands[side];
    if (t->op != TR_OP_TRANSPOSE) continue;
    tr_attr_key kb = side ? TR_ATTR_RHS_BATCH_DIMS : TR_ATTR_LHS_BATCH_DIMS;
    tr_attr_key kc = side ? TR_ATTR_RHS_CONTRACTING_DIMS : TR_ATTR_LHS_CONTRACTING_DIMS;
    int np, nb, nc;
    const int64_t *p = ints_attr(t, TR_ATTR_DIMENSIONS, &np);
    const int64_t *b = ints_attr(in, kb, &nb);
    const int64_t *c = ints_attr(in, kc, &nc);
    if (np != t->shape->rank || np > MAX_RANK) continue;
    int64_t last = -1;
    bool ok = true;
    for (int i = 0; i < np && ok; i++) {
      if (has(b, nb, i) || has(c, nc, i)) continue;
      ok = p[i] > last;
      last = p[i];
    }
    if (!ok || !fire(s, in)) continue;
    int64_t nbv[MAX_RANK], ncv[MAX_RANK];
    for (int i = 0; i < nb; i++) nbv[i] = p[b[i]];
    for (int i = 0; i < nc; i++) ncv[i] = p[c[i]];
    tr_instr *ops[2] = {in->operands[0], in->operands[1]};
    ops[side] = t->operands[0];
    tr_instr *d = emit(s, in, TR_OP_DOT, like(s, in), ops, 2);
    copy_attrs(s, d, in, kb, kc);
    if (nb) set_ints(s, d, kb, nbv, nb);
    if (nc) set_ints(s, d, kc, ncv, nc);
    return replace(s, in, d);
  }
  return false;
}

/* Whether v (a splat) is the identity of op on its type: op(v, x) = x for
 * every x. Float add's identity is -0.0 (+0.0 + -0.0 = +0.0). */
static bool is_identity(tr_op op, const tr_instr *v) {
  switch (op) {
  case TR_OP_ADD: return is_flt(v) ? flt_is(v, -0.0) : is_int(v) && int_is(v, 0);
  case TR_OP_MULTIPLY: return is_one(v);
  case TR_OP_MAXIMUM: return is_lowest(v);
  case TR_OP_MINIMUM: return is_highest(v);
  case TR_OP_AND: return is_ones(v);
  case TR_OP_OR: return !is_flt(v) && int_is(v, 0);
  default: return false;
  }
}

/* op(init, x) in the order the reducer applies it: acc = f(acc, elem). */
static tr_instr *emit_combine(simp *s, tr_instr *pos, tr_op op, bool swap, tr_instr *init,
                              tr_instr *x) {
  tr_instr *b = emit1(s, pos, TR_OP_BROADCAST, tr_shape_clone(s->m->arena, x->shape), init);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  tr_shape *sh = tr_shape_clone(s->m->arena, x->shape);
  return swap ? emit2(s, pos, op, sh, x, b) : emit2(s, pos, op, sh, b, x);
}

/* reduce(x, init) over no dims -> x when init is op's identity, else
 * op(init, x) elementwise: the reducer runs once per element, from init. */
static bool rule_reduce_no_dims(simp *s, tr_instr *in) {
  int n;
  tr_op op;
  bool swap;
  ints_attr(in, TR_ATTR_DIMENSIONS, &n);
  if (in->noperands != 2 || n != 0 || !simple_binary(comp_attr(in, TR_ATTR_TO_APPLY), &op, &swap))
    return false;
  tr_instr *x = in->operands[0], *init = in->operands[1];
  if (init->shape->dtype != x->shape->dtype || !fire(s, in)) return false;
  if (is_identity(op, init)) return replace(s, in, x);
  return replace(s, in, emit_combine(s, in, op, swap, init, x));
}

/* reduce over a dim of size 0 -> broadcast(init): no element reaches the
 * reducer. */
static bool rule_reduce_of_empty(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0];
  int nr;
  const int64_t *rd = ints_attr(in, TR_ATTR_DIMENSIONS, &nr);
  bool empty = false;
  for (int i = 0; i < nr; i++) empty |= x->shape->dims[rd[i]] == 0;
  if (!empty || in->operands[1]->shape->dtype != in->shape->dtype || !fire(s, in)) return false;
  tr_instr *b = emit1(s, in, TR_OP_BROADCAST, like(s, in), in->operands[1]);
  set_ints(s, b, TR_ATTR_DIMENSIONS, NULL, 0);
  return replace(s, in, b);
}

/* reduce(broadcast(y), init) over exactly the dims the broadcast added
 * (each non-empty): for max/min/and/or, which are idempotent, every
 * output is op(init, y) (y when init is the identity); for integer add it
 * is init + y*n (n the number of copies), exact in wrapping arithmetic.
 * Not float add: n copies summed one by one round differently from y*n. */
static bool rule_reduce_of_broadcast(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *b = in->operands[0], *init = in->operands[1];
  tr_op op;
  bool swap;
  if (b->op != TR_OP_BROADCAST || !simple_binary(comp_attr(in, TR_ATTR_TO_APPLY), &op, &swap))
    return false;
  tr_instr *y = b->operands[0];
  int nb, nr;
  const int64_t *bd = ints_attr(b, TR_ATTR_DIMENSIONS, &nb);
  const int64_t *rd = ints_attr(in, TR_ATTR_DIMENSIONS, &nr);
  if (nb != y->shape->rank || y->shape->dtype != in->shape->dtype) return false;
  for (int i = 1; i < nb; i++)
    if (bd[i] <= bd[i - 1]) return false;
  int64_t copies = 1;
  for (int d = 0; d < b->shape->rank; d++) {
    if (has(bd, nb, d) == has(rd, nr, d)) return false; /* reduced iff added */
    if (!has(bd, nb, d)) {
      if (b->shape->dims[d] == 0) return false; /* then the result is init */
      copies *= b->shape->dims[d];
    }
  }
  bool idem = op == TR_OP_MAXIMUM || op == TR_OP_MINIMUM || op == TR_OP_AND || op == TR_OP_OR;
  bool iadd = op == TR_OP_ADD && is_int(y);
  if (!(idem || iadd) || !fire(s, in)) return false;
  tr_instr *r = y;
  if (iadd) {
    tr_dtype dt = y->shape->dtype;
    if (copies != 1)
      r = emit2(s, in, TR_OP_MULTIPLY, tr_shape_clone(s->m->arena, y->shape), y,
                emit_splat(s, in, y->shape, int_bits(dt, copies)));
  }
  if (!is_identity(op, init)) r = emit_combine(s, in, op, swap, init, r);
  if (r == y) return replace(s, in, y);
  r->shape = like(s, in);
  return replace(s, in, r);
}

/* reduce(reshape(y), init, dims) where the reshape only drops size-1 dims
 * of y -> reduce(y, init, mapped dims plus the dropped ones): reducing
 * over a size-1 dim adds no element, and the reduced elements come in the
 * same row-major order. */
static bool rule_reduce_of_reshape(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0];
  if (x->op != TR_OP_RESHAPE) return false;
  tr_instr *y = x->operands[0];
  int yr = y->shape->rank, xr = x->shape->rank;
  if (yr <= xr || yr > MAX_RANK) return false;
  int64_t map[MAX_RANK];
  bool dropped[MAX_RANK] = {0};
  int i = 0;
  for (int j = 0; j < xr; j++) {
    while (i < yr && y->shape->dims[i] != x->shape->dims[j]) {
      if (y->shape->dims[i] != 1) return false;
      dropped[i++] = true;
    }
    if (i == yr) return false;
    map[j] = i++;
  }
  for (; i < yr; i++) {
    if (y->shape->dims[i] != 1) return false;
    dropped[i] = true;
  }
  int nr;
  const int64_t *rd = ints_attr(in, TR_ATTR_DIMENSIONS, &nr);
  int64_t nd[MAX_RANK];
  int k = 0;
  for (int d = 0; d < yr; d++) {
    bool red = dropped[d];
    for (int j = 0; j < nr; j++) red |= map[rd[j]] == d;
    if (red) nd[k++] = d;
  }
  if (!fire(s, in)) return false;
  tr_instr *r = emit2(s, in, TR_OP_REDUCE, like(s, in), y, in->operands[1]);
  copy_attrs(s, r, in, TR_ATTR_DIMENSIONS, TR_ATTR_COUNT);
  set_ints(s, r, TR_ATTR_DIMENSIONS, nd, k);
  return replace(s, in, r);
}

/* reduce-window with a 1-element window, stride 1, no padding or
 * dilation -> op(init, x) elementwise (x when init is op's identity): each
 * window reduces one element, starting from init. */
static bool rule_reduce_window_trivial(simp *s, tr_instr *in) {
  if (in->noperands != 2) return false;
  tr_instr *x = in->operands[0], *init = in->operands[1];
  const tr_attr *w = tr_instr_attr(in, TR_ATTR_WINDOW);
  tr_op op;
  bool swap;
  int r = x->shape->rank;
  if ((!w && r > 0) || (w && (w->kind != TR_AK_WINDOW || w->n != r))) return false;
  for (int i = 0; w && i < r; i++) {
    const tr_window_dim *d = &w->u.win[i];
    if (d->size != 1 || d->stride != 1 || d->pad_lo || d->pad_hi || d->lhs_dilate != 1 ||
        d->rhs_dilate != 1 || d->reversal)
      return false;
  }
  if (!simple_binary(comp_attr(in, TR_ATTR_TO_APPLY), &op, &swap)) return false;
  if (init->shape->dtype != x->shape->dtype || in->shape->dtype != x->shape->dtype || !fire(s, in))
    return false;
  if (is_identity(op, init)) return replace(s, in, x);
  tr_instr *t = emit_combine(s, in, op, swap, init, x);
  t->shape = like(s, in);
  return replace(s, in, t);
}

/* ---- identities and absorbing elements ---- */

/* For op(a, b): when pred holds for b (or, commutative, for a), sets
 * *other to the remaining operand and *hit to the one that matched. */
static bool match_const(const tr_instr *in, bool (*pred)(const tr_instr *), bool commutes,
                        tr_instr **other, tr_instr **hit) {
  if (pred(in->operands[1])) {
    *other = in->operands[0];
    *hit = in->operands[1];
    return true;
  }
  if (commutes && pred(in->operands[0])) {
    *other = in->operands[1];
    *hit = in->operands[0];
    return true;
  }
  return false;
}

/* Additive identity: integer 0, float -0.0. */
static bool is_add_identity(const tr_instr *x) { return kind(x) != TR_DK_PRED && is_identity(TR_OP_ADD, x); }

/* x + 0 -> x for integers; x + (-0.0) -> x for floats. x + (+0.0) is NOT
 * folded: -0.0 + +0.0 = +0.0 (XLA folds it; trench's reference is exact). */
static bool rule_add_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_add_identity, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* Subtracting +0.0 is adding -0.0: exact for every x, -0.0 included. */
static bool is_sub_identity(const tr_instr *x) {
  return is_flt(x) ? flt_is(x, 0.0) : is_int(x) && int_is(x, 0);
}

/* x - 0 -> x (integers; floats with +0.0). */
static bool rule_sub_zero(simp *s, tr_instr *in) {
  if (!is_sub_identity(in->operands[1])) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* x - x -> 0 for integers (floats: inf - inf is NaN). */
static bool rule_sub_self_int(simp *s, tr_instr *in) {
  if (in->operands[0] != in->operands[1] || !is_int(in) || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, 0));
}

/* x * 1 -> x for every type: x * 1.0 is x, NaN and -0.0 included. */
static bool rule_mul_one(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_one, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* x * 0 -> 0 for integers and pred only (floats: NaN * 0, inf * 0, -x * 0). */
static bool rule_mul_zero_int(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, true, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* x / 1 -> x for integers and floats. */
static bool rule_div_one(simp *s, tr_instr *in) {
  if (!is_one(in->operands[1])) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* and(x, all ones) -> x. */
static bool rule_and_ones(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_ones, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* and(x, 0) -> 0. */
static bool rule_and_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, true, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* or(x, 0) -> x. */
static bool rule_or_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* or(x, all ones) -> all ones. */
static bool rule_or_ones(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_ones, true, &x, &c)) return false;
  return fire_replace(s, in, c);
}

/* xor(x, 0) -> x. */
static bool rule_xor_zero(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_zero_int, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* xor(x, x) -> 0. */
static bool rule_xor_self(simp *s, tr_instr *in) {
  if (in->operands[0] != in->operands[1] || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, 0));
}

/* max(x, x), min(x, x), and(x, x), or(x, x) -> x (a NaN x stays x). */
static bool rule_idempotent_self(simp *s, tr_instr *in) {
  if (in->op != TR_OP_MAXIMUM && in->op != TR_OP_MINIMUM && in->op != TR_OP_AND && in->op != TR_OP_OR)
    return false;
  if (in->noperands != 2 || in->operands[0] != in->operands[1]) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* max(x, lowest) -> x (lowest: -inf, INT_MIN, 0 unsigned, false; the
 * reference's max returns a NaN operand, and x on ties). */
static bool rule_max_lowest(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_lowest, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* min(x, highest) -> x. */
static bool rule_min_highest(simp *s, tr_instr *in) {
  tr_instr *x, *c;
  if (!match_const(in, is_highest, true, &x, &c)) return false;
  return fire_replace(s, in, x);
}

/* shift(x, 0) -> x for all three shifts. */
static bool rule_shift_zero(simp *s, tr_instr *in) {
  if (in->op != TR_OP_SHIFT_LEFT && in->op != TR_OP_SHIFT_RIGHT_ARITHMETIC &&
      in->op != TR_OP_SHIFT_RIGHT_LOGICAL)
    return false;
  if (!int_is(in->operands[1], 0)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- unary chains ---- */

/* abs(abs(x)) -> abs(x). */
static bool rule_abs_of_abs(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_ABS) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* negate(negate(x)) -> x (ints wrap back: -(-INT_MIN) = INT_MIN). */
static bool rule_negate_of_negate(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_NEGATE) return false;
  return fire_replace(s, in, in->operands[0]->operands[0]);
}

/* not(not(x)) -> x. */
static bool rule_not_of_not(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_NOT) return false;
  return fire_replace(s, in, in->operands[0]->operands[0]);
}

/* sign(sign(x)) -> sign(x) (-1, +-0, 1 and NaN are fixed points). */
static bool rule_sign_of_sign(simp *s, tr_instr *in) {
  if (in->operands[0]->op != TR_OP_SIGN) return false;
  return fire_replace(s, in, in->operands[0]);
}

static bool is_rounding(tr_op op) {
  return op == TR_OP_FLOOR || op == TR_OP_CEIL || op == TR_OP_ROUND_NEAREST_AFZ ||
         op == TR_OP_ROUND_NEAREST_EVEN;
}

/* round(round'(x)) -> round'(x) for floor, ceil and both round-nearest:
 * the inner result is integral (or inf, NaN, +-0), which every rounding
 * keeps. */
static bool rule_rounding_idempotent(simp *s, tr_instr *in) {
  if (!is_rounding(in->op) || !is_rounding(in->operands[0]->op)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* ---- powers ---- */

static bool exponent_is(const tr_instr *e, int64_t v) {
  return is_flt(e) ? flt_is(e, (double)v) || (v == 0 && flt_is(e, -0.0)) : int_is(e, v);
}

/* pow(x, 0) -> 1: the reference (as XLA's evaluator) gives 1 for every x,
 * NaN included; integer x^0 is 1 too. */
static bool rule_pow_zero(simp *s, tr_instr *in) {
  if (!exponent_is(in->operands[1], 0) || !fire(s, in)) return false;
  return replace(s, in, emit_splat(s, in, in->shape, value_bits(in->shape->dtype, 1)));
}

/* pow(x, 1) -> x. */
static bool rule_pow_one(simp *s, tr_instr *in) {
  if (!exponent_is(in->operands[1], 1)) return false;
  return fire_replace(s, in, in->operands[0]);
}

/* pow(x, 2) -> x * x (XLA's rewrite). Exact for integers (both wrap) and
 * for floats of at most 32 bits, whose square is exact in double before
 * the one rounding to the type. Not f64: the reference's powl squares in
 * 64-bit-mantissa long double and rounds twice, x*x rounds once. */
static bool rule_pow_two(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!exponent_is(in->operands[1], 2) || (is_flt(x) && tr_dtypes[x->shape->dtype].bits > 32))
    return false;
  if (!fire(s, in)) return false;
  return replace(s, in, emit2(s, in, TR_OP_MULTIPLY, like(s, in), x, x));
}

/* pow(x, 3) -> x * x * x for integers (wrapping products). Not floats: two
 * roundings instead of one (XLA rewrites them too, changing values). */
static bool rule_pow_three_int(simp *s, tr_instr *in) {
  tr_instr *x = in->operands[0];
  if (!is_int(x) || !exponent_is(in->operands[1], 3) || !fire(s, in)) return false;
  tr_instr *sq = emit2(s, in, TR_OP_MULTIPLY, like(s, in), x, x);
  return replace(s, in, emit2(s, in, TR_OP_MULTIPLY, like(s, in), sq, x));
}

/* ---- the pass ---- */

/* Sweeps over a computation until nothing fires; bounded, because a rule
 * set that ping-pongs must still stop. */
#define MAX_SWEEPS 32

static void simplify_comp(simp *s, tr_comp *c, const bool *enabled, bool *changed) {
  s->c = c;
  for (int sweep = 0; sweep < MAX_SWEEPS; sweep++) {
    bool any = false;
    int n = c->ninstrs;
    tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
    memcpy(list, c->instrs, sizeof(tr_instr *) * (size_t)n);
    for (int i = 0; i < n && s->ctx->fuel != 0; i++) {
      tr_instr *in = list[i];
      /* Dead or already replaced: DCE removes it, rewriting it is waste. */
      if (in->parent != c || (!in->nusers && in != c->root) || !all_static(in)) continue;
      if (tr_comp_has_side_effect(in)) continue;
      for (int r = 0; r < TR_NELEMS(rules); r++) {
        if (!enabled[r] || (rules[r].op != TR_OP_COUNT && rules[r].op != in->op)) continue;
        s->rule = rules[r].name;
        if (rules[r].fn(s, in)) {
          any = true;
          break;
        }
      }
    }
    free(list);
    if (!any) break;
    *changed = true;
  }
}

tr_status tr_pass_simplify(tr_comp_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  bool enabled[TR_NELEMS(rules)];
  for (int r = 0; r < TR_NELEMS(rules); r++) enabled[r] = tr_comp_rule_enabled(c, rules[r].name);
  simp s = {c, m, NULL, NULL};
  int n = m->ncomps;
  tr_comp **comps = tr_xmalloc(sizeof(tr_comp *) * (size_t)(n ? n : 1));
  memcpy(comps, m->comps, sizeof(tr_comp *) * (size_t)n);
  for (int i = 0; i < n && c->fuel != 0; i++) simplify_comp(&s, comps[i], enabled, changed);
  free(comps);
  return TR_OK;
}
