/* mutate.c - the mutators of mutators.def. Each works on a clone of the
 * module: it picks a place with a seeded generator, edits the IR through
 * the inferring builder (src/ir/build.h), restores an operands-first order
 * and verifies. A try that does not verify is dropped and another place is
 * tried; after a few the mutator reports that it does not apply, so no
 * caller ever sees an invalid module. */
#include "mutate.h"

#include "../ir/build.h"

#include <math.h>
#include <string.h>

const tr_mutator_info tr_mutators[TR_MUT_COUNT] = {
#define X(E, name, desc) {name, desc},
#include "mutators.def"
#undef X
};

bool tr_mutator_lookup(const char *name, tr_mutator *out) {
  for (int i = 0; i < TR_MUT_COUNT; i++)
    if (strcmp(tr_mutators[i].name, name) == 0) {
      *out = (tr_mutator)i;
      return true;
    }
  return false;
}

#include "mutint.h"

static uint64_t rnd(mz *z) {
  uint64_t x = (z->rng += 0x9e3779b97f4a7c15ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}
int mz_rndn(mz *z, int n) { return n > 0 ? (int)(rnd(z) % (uint64_t)n) : 0; }

void mz_say(mz *z, const char *s) {
  if (!z->why) return;
  z->why->n = 0;
  if (z->why->p) z->why->p[0] = 0;
  tr_buf_puts(z->why, s);
}

/* ---- places ---- */

/* Entry and the bodies of while, conditional and call, reachable from it:
 * computations whose instructions run as a program (not reducers). */
static void find_control(mz *z) {
  tr_module *m = z->m;
  z->ctl = tr_arena_alloc(m->arena, sizeof(tr_comp *) * (size_t)(m->ncomps + 1));
  z->nctl = 0;
  if (!m->entry) return;
  z->ctl[z->nctl++] = m->entry;
  for (int k = 0; k < z->nctl; k++) {
    tr_comp *c = z->ctl[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_instr *in = c->instrs[i];
      if (in->op != TR_OP_WHILE && in->op != TR_OP_CONDITIONAL && in->op != TR_OP_CALL) continue;
      tr_comp *callees[64];
      int n = tr_instr_called(in, callees, 64);
      for (int j = 0; j < n && j < 64; j++) {
        bool seen = false;
        for (int q = 0; q < z->nctl; q++) seen |= z->ctl[q] == callees[j];
        if (!seen && z->nctl < m->ncomps) z->ctl[z->nctl++] = callees[j];
      }
    }
  }
}


/* A random instruction of the control computations that passes f. */
tr_instr *mz_pick(mz *z, mz_filter f) {
  int n = 0;
  for (int k = 0; k < z->nctl; k++)
    for (int i = 0; i < z->ctl[k]->ninstrs; i++) n += f(z->ctl[k]->instrs[i]);
  if (!n) return NULL;
  int want = mz_rndn(z, n);
  for (int k = 0; k < z->nctl; k++)
    for (int i = 0; i < z->ctl[k]->ninstrs; i++)
      if (f(z->ctl[k]->instrs[i]) && want-- == 0) return z->ctl[k]->instrs[i];
  return NULL;
}

bool mz_is_value(const tr_instr *in) {
  const tr_shape *s = in->shape;
  if (!s || !tr_shape_is_array(s) || !tr_dtype_is_array(s->dtype)) return false;
  if (s->dtype == TR_DT_TOKEN) return false;
  int64_t n = tr_shape_count(s);
  return n >= 0 && n <= MZ_MAX_ELEMS && (tr_ops[in->op].flags & TR_OPF_S) == 0;
}
bool mz_is_real(tr_dtype t) { return tr_dtype_is_float(t) || tr_dtype_is_int(t); }
bool mz_is_num_value(const tr_instr *in) { return mz_is_value(in) && mz_is_real(in->shape->dtype); }
static bool is_ranked_value(const tr_instr *in) { return mz_is_value(in) && in->shape->rank >= 1; }
static bool is_rank2_value(const tr_instr *in) { return mz_is_value(in) && in->shape->rank >= 2; }
static bool is_elementwise(const tr_instr *in) {
  return mz_is_num_value(in) && (tr_ops[in->op].flags & TR_OPF_E) && in->noperands >= 1 &&
         in->op != TR_OP_CONVERT && in->op != TR_OP_BITCAST_CONVERT && in->op != TR_OP_COMPARE &&
         in->op != TR_OP_SELECT && in->op != TR_OP_CLAMP && in->op != TR_OP_IS_FINITE;
}

/* ---- editing helpers ---- */

static tr_arena *A(mz *z) { return z->m->arena; }

/* Users of x, copied before a chain is built on x. */

mz_uses mz_uses_of(mz *z, tr_instr *x) {
  mz_uses s = {NULL, x->nusers, x->parent->root == x};
  if (s.n) s.u = tr_arena_memdup(A(z), x->users, sizeof(tr_instr *) * (size_t)s.n);
  return s;
}

/* Makes the saved users of x (and the root) use y instead. */
void mz_rewire(mz_uses s, tr_instr *x, tr_instr *y) {
  for (int k = 0; k < s.n; k++)
    for (int i = 0; i < s.u[k]->noperands; i++)
      if (s.u[k]->operands[i] == x) tr_instr_replace_operand(s.u[k], i, y);
  if (s.root) x->parent->root = y;
}

/* The builder appends; this puts every computation back in an order where
 * operands come first (depth-first, otherwise keeping the old order). */
void mz_reorder(tr_comp *c) {
  int n = c->ninstrs;
  tr_arena *a = c->module->arena;
  tr_instr **out = tr_arena_alloc(a, sizeof(tr_instr *) * (size_t)(n + 1));
  uint8_t *mark = tr_arena_alloc(a, (size_t)c->module->next_id + 1);
  tr_instr **stack = tr_arena_alloc(a, sizeof(tr_instr *) * (size_t)(n + 1));
  int *next = tr_arena_alloc(a, sizeof(int) * (size_t)(n + 1));
  int no = 0;
  for (int i = 0; i < n; i++) {
    tr_instr *s = c->instrs[i];
    if (mark[s->id]) continue;
    int sp = 0;
    stack[sp] = s;
    next[sp++] = 0;
    mark[s->id] = 1;
    while (sp) {
      tr_instr *t = stack[sp - 1];
      if (next[sp - 1] < t->noperands) {
        tr_instr *o = t->operands[next[sp - 1]++];
        if (o->parent == c && !mark[o->id] && sp < n) {
          mark[o->id] = 1;
          stack[sp] = o;
          next[sp++] = 0;
        }
      } else {
        out[no++] = t;
        sp--;
      }
    }
  }
  memcpy(c->instrs, out, sizeof(tr_instr *) * (size_t)no);
  c->ninstrs = no;
}

/* Finishes a built instruction: a name of its own. */
tr_instr *mz_fin(tr_instr *in) {
  if (!in) return NULL;
  char buf[64];
  snprintf(buf, sizeof buf, "%s.mz%d", tr_ops[in->op].name, in->id);
  in->name = tr_arena_strdup(in->parent->module->arena, buf);
  return in;
}

static tr_instr *scalar_const(tr_comp *c, tr_dtype dt, uint64_t bits) {
  tr_shape *s = tr_shape_array(c->module->arena, dt, 0, NULL);
  char slot[16] = {0};
  memcpy(slot, &bits, (size_t)tr_dtype_size(dt) < 8 ? (size_t)tr_dtype_size(dt) : 8);
  return mz_fin(tr_build_constant(c, s, slot));
}

/* A value of dt as its bit pattern (floats rounded, ints truncated). */
uint64_t mz_bits_of(tr_dtype dt, double v) {
  if (tr_dtype_is_float(dt)) return tr_float_from_double(dt, v);
  if (dt == TR_DT_PRED) return v != 0;
  /* Wrapped into the type's range: sub-byte slots hold the value sign- or
   * zero-extended (ir.h). */
  int b = tr_dtypes[dt].bits;
  uint64_t u = v < 0 ? (uint64_t)(int64_t)v : (uint64_t)v;
  if (b >= 64) return u;
  u &= (1ULL << b) - 1;
  if (tr_dtypes[dt].kind == TR_DK_SINT && (u >> (b - 1)) & 1) u |= ~((1ULL << b) - 1);
  return u;
}

static tr_instr *splat(tr_comp *c, const tr_instr *like, double v) {
  tr_dtype dt = like->shape->dtype;
  tr_instr *k = scalar_const(c, dt, mz_bits_of(dt, v));
  if (!like->shape->rank) return k;
  return mz_fin(tr_build_broadcast(c, k, like->shape->dims, like->shape->rank, NULL, NULL));
}

/* Moves the computation just created (last in the list) to the front:
 * callees are listed before their callers. */
static void comp_to_front(tr_module *m) {
  tr_comp *k = m->comps[m->ncomps - 1];
  memmove(m->comps + 1, m->comps, sizeof(tr_comp *) * (size_t)(m->ncomps - 1));
  m->comps[0] = k;
}

static tr_instr *s32_const(tr_comp *c, int64_t v) { return scalar_const(c, TR_DT_S32, (uint64_t)v); }

/* The condition "counter i (from 0, +1 a trip) runs trips times" in one of
 * the forms compilers meet: i < n, i <= n-1, and mirrored n > i, n-1 >= i. */
static tr_instr *trip_test(mz *z, tr_comp *c, tr_instr *i, int trips) {
  switch (mz_rndn(z, 4)) {
  case 0: return mz_fin(tr_build_compare(c, i, s32_const(c, trips - 1), "LE", NULL));
  case 1: return mz_fin(tr_build_compare(c, s32_const(c, trips), i, "GT", NULL));
  case 2: return mz_fin(tr_build_compare(c, s32_const(c, trips - 1), i, "GE", NULL));
  default: return mz_fin(tr_build_compare(c, i, s32_const(c, trips), "LT", NULL));
  }
}

/* A computation (a, b) -> a op b on scalars of dt, for reducers and
 * scatter combiners. */
static tr_comp *binary_comp(mz *z, tr_op op, tr_dtype dt) {
  char name[48];
  snprintf(name, sizeof name, "mz_%s_%s.%d", tr_ops[op].name, tr_dtype_name(dt), z->m->next_id);
  tr_comp *k = tr_build_comp(z->m, name, false);
  tr_shape *s = tr_shape_array(A(z), dt, 0, NULL);
  tr_instr *a = tr_build_param(k, s), *b = tr_build_param(k, s);
  tr_instr *r = mz_fin(tr_build_binary(k, op, a, b, NULL));
  if (!r) return NULL;
  tr_build_root(k, r);
  comp_to_front(z->m);
  return k;
}

/* ---- forward re-inference (sizes and axes that change downstream) ---- */

/* After the shape of some instruction of c changed, re-infers every later
 * one. Ops whose shape is declared follow their operand where that is
 * well defined (convert, broadcast, copy-like); others must infer. */
static bool reinfer(mz *z, tr_comp *c, int from) {
  for (int i = from; i < c->ninstrs; i++) {
    tr_instr *in = c->instrs[i];
    if (in->op == TR_OP_PARAMETER || in->op == TR_OP_CONSTANT || in->op == TR_OP_IOTA) continue;
    tr_shape *s = NULL;
    if (in->op == TR_OP_CONVERT || in->op == TR_OP_BITCAST_CONVERT) {
      const tr_shape *o = in->operands[0]->shape;
      if (!tr_shape_is_array(o)) return false;
      if (in->op == TR_OP_BITCAST_CONVERT && tr_dtype_size(o->dtype) != tr_dtype_size(in->shape->dtype))
        return false;
      s = tr_shape_array(A(z), in->shape->dtype, o->rank, o->dims);
    } else if (in->op == TR_OP_BROADCAST) {
      const tr_shape *o = in->operands[0]->shape;
      tr_attr *d = tr_instr_attr(in, TR_ATTR_DIMENSIONS);
      if (!d || d->n != o->rank) return false;
      s = tr_shape_array(A(z), in->shape->dtype, in->shape->rank, in->shape->dims);
      for (int k = 0; k < d->n; k++) s->dims[d->u.ints[k]] = o->dims[k];
    } else if (in->op == TR_OP_RESHAPE || in->op == TR_OP_BITCAST) {
      if (tr_shape_count(in->operands[0]->shape) != tr_shape_count(in->shape)) return false;
      continue;
    } else {
      tr_shape *keep = in->shape;
      s = tr_infer_shape(A(z), in, NULL);
      if (!s) return false;
      in->shape = keep;
    }
    int64_t n = tr_shape_is_array(s) ? tr_shape_count(s) : 0;
    if (n > MZ_MAX_ELEMS) return false;
    in->shape = s;
  }
  return true;
}

/* ---- the mutators ---- */

static const int64_t boundary_sizes[] = {0,  1,  2,  3,   5,   7,   8,   9,    15,   16,    17,
                                         31, 32, 33, 49,  50,  51,  63,  64,   65,   127,   128,
                                         129, 255, 256, 257, 1023, 1024, 1025, 16385, 32769};

static bool is_entry_param(const tr_instr *in) {
  return in->op == TR_OP_PARAMETER && in->parent->is_entry && is_ranked_value(in);
}

static bool m_boundary_size(mz *z) {
  tr_instr *p = mz_pick(z, is_entry_param);
  if (!p) return mz_say(z, "no array parameter of rank >= 1 in the entry"), false;
  int d = mz_rndn(z, p->shape->rank);
  int64_t others = tr_shape_count(p->shape) / (p->shape->dims[d] ? p->shape->dims[d] : 1);
  if (!p->shape->dims[d]) others = 1;
  int64_t nsz = boundary_sizes[mz_rndn(z, TR_NELEMS(boundary_sizes))];
  if (nsz == p->shape->dims[d] || nsz * (others ? others : 1) > MZ_MAX_ELEMS)
    return mz_say(z, "the drawn size is the same or too big"), false;
  tr_shape *s = tr_shape_array(A(z), p->shape->dtype, p->shape->rank, p->shape->dims);
  s->dims[d] = nsz;
  p->shape = s;
  tr_drop_entry_layout(z->m);
  int at = 0;
  while (p->parent->instrs[at] != p) at++;
  if (!reinfer(z, p->parent, at + 1)) return mz_say(z, "the graph does not follow the new size"), false;
  return true;
}

/* Boundary values of a type, as doubles the literal encoding rounds. */
static double boundary_value(mz *z, tr_dtype dt) {
  if (tr_dtype_is_float(dt)) {
    double mx = tr_float_max(dt);
    double tiny = ldexp(1.0, 1 - tr_dtypes[dt].bias);
    double cands[] = {0.0,         -0.0,          1.0,   -1.0, mx,  -mx, tiny,
                      tiny / 2,    ldexp(tiny, -tr_dtypes[dt].mbits), 0.5, 2.5, -2.5,
                      5.0 + mz_rndn(z, 16), -(5.0 + mz_rndn(z, 16)), INFINITY, -INFINITY, NAN, 65504.0, 3.0e38,
                      /* the edges of narrower types a convert may meet:
                       * f16's smallest normal, subnormals, bf16/f8 max */
                      ldexp(1.0, -14), ldexp(1.0 + mz_rndn(z, 1023), -24), -ldexp(1.0 + mz_rndn(z, 1023), -24),
                      3.3895313892515355e38, 448.0, 57344.0};
    for (int tries = 0; tries < 8; tries++) {
      double v = cands[mz_rndn(z, TR_NELEMS(cands))];
      if (isinf(v) && !tr_float_has_inf(dt)) continue;
      if (isnan(v) && !tr_float_has_nan(dt)) continue;
      if (fabs(v) > mx && !isinf(v)) continue;
      return v;
    }
    return 1.0;
  }
  if (dt == TR_DT_PRED) return mz_rndn(z, 2);
  double mn = (double)tr_int_min(dt), mx = (double)tr_int_max(dt);
  double cands[] = {0, 1, -1, mn, mx, mn + 1, mx - 1, ldexp(1.0, tr_dtypes[dt].bits - 1), 2, 7};
  for (;;) {
    double v = cands[mz_rndn(z, TR_NELEMS(cands))];
    if (v >= mn && v <= mx) return v;
  }
}

static bool is_real_const(const tr_instr *in) {
  return in->op == TR_OP_CONSTANT && in->literal && in->literal->data && !in->literal->elided &&
         tr_shape_is_array(in->shape) && (mz_is_real(in->shape->dtype) || in->shape->dtype == TR_DT_PRED);
}

static bool m_boundary_const(mz *z) {
  /* Any computation: reducer init values and loop bounds count too. */
  int n = 0;
  for (int k = 0; k < z->m->ncomps; k++)
    for (int i = 0; i < z->m->comps[k]->ninstrs; i++) n += is_real_const(z->m->comps[k]->instrs[i]);
  if (!n) return mz_say(z, "no constant of a real type"), false;
  int want = mz_rndn(z, n);
  tr_instr *c = NULL;
  for (int k = 0; k < z->m->ncomps && !c; k++)
    for (int i = 0; i < z->m->comps[k]->ninstrs && !c; i++)
      if (is_real_const(z->m->comps[k]->instrs[i]) && want-- == 0) c = z->m->comps[k]->instrs[i];
  tr_dtype dt = c->shape->dtype;
  int64_t cnt = tr_shape_count(c->shape);
  if (cnt <= 0) return mz_say(z, "an empty constant"), false;
  int sz = tr_dtype_size(dt);
  char *data = tr_arena_memdup(A(z), c->literal->data, (size_t)(cnt * sz));
  int edits = 1 + mz_rndn(z, cnt < 4 ? (int)cnt : 4);
  bool all = mz_rndn(z, 3) == 0;
  double v = boundary_value(z, dt);
  for (int e = 0; e < (all ? (int)(cnt < 65536 ? cnt : 65536) : edits); e++) {
    int64_t at = all ? e : (int64_t)(rnd(z) % (uint64_t)cnt);
    if (!all) v = boundary_value(z, dt);
    uint64_t b = mz_bits_of(dt, v);
    memcpy(data + at * sz, &b, (size_t)(sz < 8 ? sz : 8));
  }
  tr_literal *lit = tr_arena_alloc(A(z), sizeof *lit);
  *lit = *c->literal;
  lit->data = data;
  c->literal = lit;
  return true;
}

static bool m_dtype_change(mz *z, bool narrow) {
  tr_instr *x = mz_pick(z, is_elementwise);
  if (!x) return mz_say(z, "no elementwise op of a real type"), false;
  tr_dtype dt = x->shape->dtype, to;
  if (tr_dtype_is_float(dt)) {
    static const tr_dtype nf[] = {TR_DT_BF16, TR_DT_F16, TR_DT_F8E4M3FN, TR_DT_F8E5M2};
    to = narrow ? nf[mz_rndn(z, TR_NELEMS(nf))] : TR_DT_F64;
  } else {
    static const tr_dtype ni[] = {TR_DT_S8, TR_DT_U8, TR_DT_S4, TR_DT_U4, TR_DT_S16};
    to = narrow ? ni[mz_rndn(z, TR_NELEMS(ni))] : (tr_dtypes[dt].kind == TR_DK_UINT ? TR_DT_U64 : TR_DT_S64);
  }
  if (to == dt) return mz_say(z, "already that type"), false;
  for (int i = 0; i < x->noperands; i++)
    if (!tr_shape_is_array(x->operands[i]->shape) || x->operands[i]->shape->dtype != dt)
      return mz_say(z, "operands of another type"), false;
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *ops[3];
  for (int i = 0; i < x->noperands && i < 3; i++)
    if (!(ops[i] = mz_fin(tr_build_convert(c, x->operands[i], to, NULL)))) return false;
  tr_instr *y = tr_build_begin(c, x->op, ops, x->noperands);
  for (int i = 0; i < x->nattrs; i++) {
    tr_attr *a = tr_instr_add_attr(z->m, y, x->attrs[i].key, x->attrs[i].kind, x->attrs[i].name);
    *a = x->attrs[i];
  }
  if (!(y = mz_fin(tr_build_end(y, NULL, NULL)))) return mz_say(z, "the op does not take that type"), false;
  tr_instr *back = mz_fin(tr_build_convert(c, y, dt, NULL));
  if (!back) return false;
  mz_rewire(u, x, back);
  return true;
}
static bool m_dtype_narrow(mz *z) { return m_dtype_change(z, true); }
static bool m_dtype_widen(mz *z) { return m_dtype_change(z, false); }

static bool m_transpose_chain(mz *z) {
  tr_instr *x = mz_pick(z, is_rank2_value);
  if (!x) return mz_say(z, "no value of rank >= 2"), false;
  int r = x->shape->rank;
  int64_t perm[8], inv[8];
  for (int i = 0; i < r; i++) perm[i] = i;
  for (int i = r - 1; i > 0; i--) {
    int j = mz_rndn(z, i + 1);
    int64_t t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  for (int i = 0; i < r; i++) inv[perm[i]] = i;
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *t1 = mz_fin(tr_build_transpose(c, x, perm, NULL));
  tr_instr *t2 = t1 ? mz_fin(tr_build_transpose(c, t1, inv, NULL)) : NULL;
  if (!t2) return false;
  mz_rewire(u, x, t2);
  return true;
}

static bool m_reshape_chain(mz *z) {
  tr_instr *x = mz_pick(z, is_ranked_value);
  if (!x) return mz_say(z, "no value of rank >= 1"), false;
  int64_t n = tr_shape_count(x->shape);
  int64_t dims[3];
  int nd;
  /* Flat, or two factors of the element count. */
  int64_t f = 1;
  for (int64_t k = 2; k * k <= n; k++)
    if (n % k == 0 && mz_rndn(z, 2)) f = k;
  if (f > 1 && mz_rndn(z, 2)) {
    dims[0] = f;
    dims[1] = n / f;
    nd = 2;
  } else {
    dims[0] = n;
    nd = 1;
  }
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *a = mz_fin(tr_build_reshape(c, x, dims, nd, NULL));
  tr_instr *b = a ? mz_fin(tr_build_reshape(c, a, x->shape->dims, x->shape->rank, NULL)) : NULL;
  if (!b) return false;
  mz_rewire(u, x, b);
  return true;
}

static tr_dtype same_width_int(tr_dtype dt) {
  switch (tr_dtype_size(dt) * 8) {
  case 8: return tr_dtypes[dt].kind == TR_DK_SINT ? TR_DT_U8 : TR_DT_S8;
  case 16: return tr_dtypes[dt].kind == TR_DK_SINT ? TR_DT_U16 : TR_DT_S16;
  case 32: return tr_dtypes[dt].kind == TR_DK_SINT ? TR_DT_U32 : TR_DT_S32;
  case 64: return tr_dtypes[dt].kind == TR_DK_SINT ? TR_DT_U64 : TR_DT_S64;
  }
  return TR_DT_COUNT;
}

static bool m_bitcast_copy(mz *z) {
  tr_instr *x = mz_pick(z, mz_is_num_value);
  if (!x) return mz_say(z, "no value of a real type"), false;
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *y = mz_fin(tr_build_unary(c, TR_OP_COPY, x, NULL));
  if (!y) return false;
  tr_dtype w = same_width_int(x->shape->dtype);
  if (w != TR_DT_COUNT && tr_dtypes[x->shape->dtype].bits >= 8 && mz_rndn(z, 2)) {
    tr_shape *s = tr_shape_array(A(z), w, x->shape->rank, x->shape->dims);
    tr_instr *b = mz_fin(tr_build_end(tr_build_begin(c, TR_OP_BITCAST_CONVERT, &y, 1), s, NULL));
    tr_shape *s2 = tr_shape_array(A(z), x->shape->dtype, x->shape->rank, x->shape->dims);
    y = b ? mz_fin(tr_build_end(tr_build_begin(c, TR_OP_BITCAST_CONVERT, &b, 1), s2, NULL)) : NULL;
    if (!y) return false;
  }
  if (mz_rndn(z, 2)) {
    tr_shape *s = tr_shape_array(A(z), x->shape->dtype, x->shape->rank, x->shape->dims);
    y = mz_fin(tr_build_end(tr_build_begin(c, TR_OP_BITCAST, &y, 1), s, NULL));
    if (!y) return false;
  }
  mz_rewire(u, x, y);
  return true;
}

static bool m_unit_dim(mz *z) {
  tr_instr *x = mz_pick(z, mz_is_value);
  if (!x) return mz_say(z, "no array value"), false;
  const tr_shape *s = x->shape;
  int64_t dims[9];
  int nd = 0;
  int one = -1;
  for (int i = 0; i < s->rank; i++)
    if (s->dims[i] == 1 && mz_rndn(z, 2)) one = i;
  if (one >= 0) { /* remove a size-1 dim */
    for (int i = 0; i < s->rank; i++)
      if (i != one) dims[nd++] = s->dims[i];
  } else { /* insert one */
    if (s->rank >= 7) return mz_say(z, "rank 7 already"), false;
    int at = mz_rndn(z, s->rank + 1);
    for (int i = 0; i <= s->rank; i++) {
      if (i == at) dims[nd++] = 1;
      if (i < s->rank) dims[nd++] = s->dims[i];
    }
  }
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *a = mz_fin(tr_build_reshape(c, x, dims, nd, NULL));
  tr_instr *b = NULL;
  if (a && one < 0 && mz_rndn(z, 2)) {
    /* Back through a broadcast of the size-1 shape to itself. */
    int64_t map[9];
    for (int i = 0; i < nd; i++) map[i] = i;
    tr_instr *bb = mz_fin(tr_build_broadcast(c, a, dims, nd, map, NULL));
    b = bb ? mz_fin(tr_build_reshape(c, bb, s->dims, s->rank, NULL)) : NULL;
  } else if (a) {
    b = mz_fin(tr_build_reshape(c, a, s->dims, s->rank, NULL));
  }
  if (!b) return false;
  mz_rewire(u, x, b);
  return true;
}

static void random_layout(mz *z, int r, int64_t *l) {
  for (int i = 0; i < r; i++) l[i] = i;
  for (int i = r - 1; i > 0; i--) {
    int j = mz_rndn(z, i + 1);
    int64_t t = l[i];
    l[i] = l[j];
    l[j] = t;
  }
}

static bool m_layout(mz *z) {
  tr_instr *x = mz_pick(z, is_rank2_value);
  if (!x) return mz_say(z, "no value of rank >= 2"), false;
  int64_t l[8];
  random_layout(z, x->shape->rank, l);
  if (x->op == TR_OP_PARAMETER && x->parent->is_entry) {
    tr_shape *s = tr_shape_clone(A(z), x->shape);
    tr_shape_set_layout(A(z), s, l);
    x->shape = s;
    tr_drop_entry_layout(z->m);
    return true;
  }
  /* An intermediate: a copy into the new layout. */
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *y = mz_fin(tr_build_unary(c, TR_OP_COPY, x, NULL));
  if (!y) return false;
  tr_shape *s = tr_shape_clone(A(z), y->shape);
  tr_shape_set_layout(A(z), s, l);
  y->shape = s;
  mz_rewire(u, x, y);
  return true;
}

static bool is_slice(const tr_instr *in) { return in->op == TR_OP_SLICE && mz_is_value(in); }

/* dynamic-slice of x at starts (s32 scalars) with sizes. */
static tr_instr *dyn_slice(mz *z, tr_comp *c, tr_instr *x, const int64_t *starts, const int64_t *sizes) {
  int r = x->shape->rank;
  tr_instr *ops[9];
  ops[0] = x;
  /* In the entry a start is sometimes an input (an index the inputs draw
   * in bounds, at the edges or out of them), else the drawn constant. */
  bool inputs = false;
  for (int i = 0; i < r; i++) {
    if (c->is_entry && mz_rndn(z, 3) == 0) {
      ops[1 + i] = mz_fin(tr_build_param(c, tr_shape_array(A(z), TR_DT_S32, 0, NULL)));
      inputs = true;
    } else {
      ops[1 + i] = s32_const(c, starts[i]);
    }
  }
  if (inputs) tr_drop_entry_layout(z->m);
  tr_instr *in = tr_build_begin(c, TR_OP_DYNAMIC_SLICE, ops, r + 1);
  tr_build_ints(in, TR_ATTR_DYNAMIC_SLICE_SIZES, sizes, r);
  return mz_fin(tr_build_end(in, NULL, NULL));
}

static bool m_dynamic_slice(mz *z) {
  tr_instr *x = mz_pick(z, is_slice);
  if (x && mz_rndn(z, 4)) {
    tr_attr *sa = tr_instr_attr(x, TR_ATTR_SLICE);
    tr_instr *src = x->operands[0];
    int r = src->shape->rank;
    int64_t st[8], sz[8];
    for (int i = 0; i < r; i++) {
      if (!sa || sa->u.slice[i].stride != 1) return mz_say(z, "a strided slice"), false;
      st[i] = sa->u.slice[i].start;
      sz[i] = sa->u.slice[i].limit - sa->u.slice[i].start;
    }
    mz_uses u = mz_uses_of(z, x);
    tr_instr *d = dyn_slice(z, x->parent, src, st, sz);
    if (!d) return false;
    mz_rewire(u, x, d);
    return true;
  }
  /* Slice any value at drawn starts, some past the end (clamped), and pad
   * it back to its shape. */
  x = mz_pick(z, is_ranked_value);
  if (!x) return mz_say(z, "no value of rank >= 1"), false;
  int r = x->shape->rank;
  if (r > 8) return false;
  int64_t st[8], sz[8];
  tr_pad_dim pd[8];
  for (int i = 0; i < r; i++) {
    int64_t d = x->shape->dims[i];
    sz[i] = d > 1 ? d - mz_rndn(z, (int)(d < 3 ? d : 3)) : d;
    int k = mz_rndn(z, 4);
    st[i] = k == 0 ? 0 : k == 1 ? d : k == 2 ? -1 - mz_rndn(z, 5) : mz_rndn(z, (int)(d + 1));
    pd[i].lo = mz_rndn(z, (int)(d - sz[i] + 1));
    pd[i].hi = d - sz[i] - pd[i].lo;
    pd[i].interior = 0;
  }
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *d = dyn_slice(z, c, x, st, sz);
  if (!d) return false;
  tr_instr *pv = scalar_const(c, x->shape->dtype, mz_bits_of(x->shape->dtype, 0));
  tr_instr *ops[2] = {d, pv};
  tr_instr *p = tr_build_begin(c, TR_OP_PAD, ops, 2);
  tr_build_padding(p, pd, r);
  if (!(p = mz_fin(tr_build_end(p, NULL, NULL)))) return false;
  mz_rewire(u, x, p);
  return true;
}

/* dynamic-update-slice of a part of x into x at drawn indices. */
static tr_instr *self_update(mz *z, tr_comp *c, tr_instr *x, tr_instr *idx0) {
  int r = x->shape->rank;
  int64_t st[8], sz[8];
  for (int i = 0; i < r; i++) {
    int64_t d = x->shape->dims[i];
    sz[i] = d > 0 ? 1 + mz_rndn(z, (int)d) : 0;
    st[i] = 0;
  }
  tr_instr *upd = dyn_slice(z, c, x, st, sz);
  if (!upd) return NULL;
  if (tr_dtype_is_float(x->shape->dtype) || tr_dtype_is_int(x->shape->dtype))
    upd = mz_fin(tr_build_binary(c, TR_OP_ADD, upd, splat(c, upd, 1), NULL));
  if (!upd) return NULL;
  tr_instr *ops[9];
  ops[0] = x;
  ops[1] = upd;
  for (int i = 0; i < r; i++) {
    int64_t d = x->shape->dims[i];
    ops[2 + i] = i == 0 && idx0 ? idx0 : s32_const(c, mz_rndn(z, 3) ? mz_rndn(z, (int)d + 1) : d + 3);
  }
  return mz_fin(tr_build_end(tr_build_begin(c, TR_OP_DYNAMIC_UPDATE_SLICE, ops, r + 2), NULL, NULL));
}

static bool is_in_place_target(const tr_instr *in) {
  return is_ranked_value(in) && in->shape->rank <= 7 && tr_shape_count(in->shape) > 0 &&
         in->op != TR_OP_PARAMETER;
}

/* A while loop that updates a buffer in place: state (i, buf), body
 * buf' = dus(buf, buf[0..]+1, i), trips 1..3. */
static tr_instr *loop_update(mz *z, tr_comp *c, tr_instr *x) {
  tr_module *m = z->m;
  int trips = 1 + mz_rndn(z, 3);
  tr_shape *si = tr_shape_array(A(z), TR_DT_S32, 0, NULL);
  tr_shape *el[2] = {si, x->shape};
  tr_shape *st = tr_shape_tuple(A(z), 2, el);
  char name[48];
  snprintf(name, sizeof name, "mz_body.%d", m->next_id);
  tr_comp *body = tr_build_comp(m, name, false);
  comp_to_front(m);
  tr_instr *p = tr_build_param(body, st);
  tr_instr *i = mz_fin(tr_build_gte(body, p, 0, NULL));
  tr_instr *b = mz_fin(tr_build_gte(body, p, 1, NULL));
  tr_instr *i1 = mz_fin(tr_build_binary(body, TR_OP_ADD, i, s32_const(body, 1), NULL));
  tr_instr *nb = self_update(z, body, b, i);
  if (!i1 || !nb) return NULL;
  tr_instr *tv[2] = {i1, nb};
  tr_build_root(body, mz_fin(tr_build_tuple(body, tv, 2, NULL)));
  snprintf(name, sizeof name, "mz_cond.%d", m->next_id);
  tr_comp *cond = tr_build_comp(m, name, false);
  comp_to_front(m);
  tr_instr *q = tr_build_param(cond, st);
  tr_instr *qi = mz_fin(tr_build_gte(cond, q, 0, NULL));
  tr_build_root(cond, trip_test(z, cond, qi, trips));
  tr_instr *init[2] = {s32_const(c, 0), x};
  tr_instr *t = mz_fin(tr_build_tuple(c, init, 2, NULL));
  tr_instr *w = tr_build_begin(c, TR_OP_WHILE, &t, 1);
  tr_build_callee(w, TR_ATTR_CONDITION, cond);
  tr_build_callee(w, TR_ATTR_BODY, body);
  if (!(w = mz_fin(tr_build_end(w, NULL, NULL)))) return NULL;
  return mz_fin(tr_build_gte(c, w, 1, NULL));
}

static bool m_in_place(mz *z) {
  int k = mz_rndn(z, 3);
  if (k == 2) { /* an output that is also an input */
    tr_comp *e = z->m->entry;
    tr_instr *p = NULL;
    for (int i = 0; i < e->nparams; i++)
      if (mz_is_value(e->params[i]) && (!p || mz_rndn(z, 2))) p = e->params[i];
    if (!p) return mz_say(z, "no array parameter"), false;
    tr_instr *r = e->root;
    tr_instr *ys[64];
    int n = 0;
    if (r->op == TR_OP_TUPLE && r->noperands < 63) {
      for (int i = 0; i < r->noperands; i++) ys[n++] = r->operands[i];
    } else {
      ys[n++] = r;
    }
    ys[n++] = p;
    tr_instr *t = mz_fin(tr_build_tuple(e, ys, n, NULL));
    if (!t) return false;
    e->root = t;
    tr_drop_entry_layout(z->m);
    return true;
  }
  tr_instr *x = mz_pick(z, is_in_place_target);
  if (!x) return mz_say(z, "no non-parameter value of rank >= 1"), false;
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *y = k == 0 ? self_update(z, c, x, NULL) : loop_update(z, c, x);
  if (!y) return false;
  mz_rewire(u, x, y);
  return true;
}

static bool is_float_value(const tr_instr *in) {
  return mz_is_value(in) && tr_dtype_is_float(in->shape->dtype);
}

static bool m_producer_chain(mz *z) {
  tr_instr *x = mz_pick(z, mz_is_num_value);
  if (!x) return mz_say(z, "no value of a real type"), false;
  tr_comp *c = x->parent;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *y = x;
  int len = 1 + mz_rndn(z, 4);
  for (int k = 0; k < len && y; k++) {
    switch (mz_rndn(z, 4)) {
    case 0: y = mz_fin(tr_build_binary(c, TR_OP_ADD, y, splat(c, y, 0), NULL)); break;
    case 1: y = mz_fin(tr_build_binary(c, TR_OP_MULTIPLY, splat(c, y, 1), y, NULL)); break;
    case 2:
      if (tr_dtypes[y->shape->dtype].kind == TR_DK_UINT) break;
      y = mz_fin(tr_build_unary(c, TR_OP_NEGATE, y, NULL));
      y = y ? mz_fin(tr_build_unary(c, TR_OP_NEGATE, y, NULL)) : NULL;
      break;
    default: y = mz_fin(tr_build_binary(c, TR_OP_MAXIMUM, y, y, NULL)); break;
    }
  }
  if (!y) return false;
  mz_rewire(u, x, y);
  return true;
}

static bool is_scatter(const tr_instr *in) { return in->op == TR_OP_SCATTER && in->noperands == 3; }

static bool m_scatter_dup(mz *z) {
  tr_instr *x = mz_pick(z, is_scatter);
  if (x && mz_rndn(z, 2)) {
    tr_instr *idx = x->operands[1];
    if (!tr_shape_is_array(idx->shape) || !tr_dtype_is_int(idx->shape->dtype))
      return mz_say(z, "scatter indices of an odd type"), false;
    tr_instr *d = splat(x->parent, idx, mz_rndn(z, 2));
    if (!d) return false;
    tr_instr_replace_operand(x, 1, d);
    return true;
  }
  /* operand[i] += updates[j] at duplicate rows i. */
  x = mz_pick(z, mz_is_num_value);
  if (!x || x->shape->rank < 1 || x->shape->dims[0] < 1) return mz_say(z, "no value of rank >= 1"), false;
  tr_comp *c = x->parent;
  const tr_shape *s = x->shape;
  int r = s->rank;
  int64_t n = 1 + mz_rndn(z, 7);
  /* Rows in range mostly; sometimes one past either end (skipped). */
  int64_t row = mz_rndn(z, 4) ? mz_rndn(z, (int)s->dims[0]) : mz_rndn(z, 2) ? s->dims[0] : -1;
  tr_shape *is = tr_shape_array(A(z), TR_DT_S32, 2, (int64_t[]){n, 1});
  int32_t *iv = tr_arena_alloc(A(z), sizeof(int32_t) * (size_t)n);
  for (int64_t i = 0; i < n; i++) iv[i] = (int32_t)(mz_rndn(z, 4) ? row : mz_rndn(z, (int)s->dims[0]));
  tr_instr *idx = mz_fin(tr_build_constant(c, is, iv));
  int64_t ud[9];
  ud[0] = n;
  for (int i = 1; i < r; i++) ud[i] = s->dims[i];
  if (tr_shape_count(s) / (s->dims[0] ? s->dims[0] : 1) * n > MZ_MAX_ELEMS) return false;
  tr_instr *one = scalar_const(c, s->dtype, mz_bits_of(s->dtype, 1));
  tr_instr *upd = mz_fin(tr_build_broadcast(c, one, ud, r, NULL, NULL));
  tr_op comb = mz_rndn(z, 2) ? TR_OP_ADD : TR_OP_MAXIMUM;
  tr_comp *k = binary_comp(z, comb, s->dtype);
  if (!upd || !k) return false;
  mz_uses u = mz_uses_of(z, x);
  tr_instr *ops[3] = {x, idx, upd};
  tr_instr *sc = tr_build_begin(c, TR_OP_SCATTER, ops, 3);
  int64_t uwd[8], zero = 0;
  for (int i = 1; i < r; i++) uwd[i - 1] = i;
  tr_build_ints(sc, TR_ATTR_UPDATE_WINDOW_DIMS, uwd, r - 1);
  tr_build_ints(sc, TR_ATTR_INSERTED_WINDOW_DIMS, &zero, 1);
  tr_build_ints(sc, TR_ATTR_SCATTER_DIMS_TO_OPERAND_DIMS, &zero, 1);
  tr_build_int(sc, TR_ATTR_INDEX_VECTOR_DIM, 1);
  tr_build_callee(sc, TR_ATTR_TO_APPLY, k);
  if (!(sc = mz_fin(tr_build_end(sc, NULL, NULL)))) return false;
  mz_rewire(u, x, sc);
  return true;
}

static bool is_compare(const tr_instr *in) { return in->op == TR_OP_COMPARE && mz_is_value(in); }

static bool m_compare(mz *z) {
  tr_instr *x = mz_pick(z, is_compare);
  if (!x) return mz_say(z, "no compare"), false;
  tr_attr *d = tr_instr_attr(x, TR_ATTR_DIRECTION);
  tr_dtype dt = x->operands[0]->shape->dtype;
  static const char *dirs[] = {"EQ", "NE", "GE", "GT", "LE", "LT"};
  if (tr_dtype_is_int(dt) && mz_rndn(z, 2)) {
    /* The other signedness: compare bitcasts of both operands. */
    tr_dtype w = same_width_int(dt);
    if (w == TR_DT_COUNT || tr_dtypes[dt].bits < 8) return mz_say(z, "no same-width integer type"), false;
    tr_comp *c = x->parent;
    for (int i = 0; i < 2; i++) {
      tr_instr *o = x->operands[i];
      tr_shape *s = tr_shape_array(A(z), w, o->shape->rank, o->shape->dims);
      tr_instr *b = mz_fin(tr_build_end(tr_build_begin(c, TR_OP_BITCAST_CONVERT, &o, 1), s, NULL));
      if (!b) return false;
      tr_instr_replace_operand(x, i, b);
    }
    tr_attr *ty = tr_instr_attr(x, TR_ATTR_TYPE);
    if (ty) ty->u.s = tr_dtypes[w].kind == TR_DK_SINT ? "SIGNED" : "UNSIGNED";
    return true;
  }
  if (!d) return mz_say(z, "a compare without direction"), false;
  const char *nd = dirs[mz_rndn(z, 6)];
  if (strcmp(nd, d->u.s) == 0) nd = dirs[(mz_rndn(z, 5) + 1) % 6];
  d->u.s = nd;
  return true;
}

static bool is_reduce(const tr_instr *in) {
  return in->op == TR_OP_REDUCE && in->noperands == 2 && tr_shape_is_array(in->operands[0]->shape);
}

static bool m_reduce(mz *z) {
  tr_instr *x = mz_pick(z, is_reduce);
  if (!x) return mz_say(z, "no single-operand reduce"), false;
  tr_comp *c = x->parent;
  if (mz_rndn(z, 2)) { /* another init value */
    tr_dtype dt = x->operands[1]->shape->dtype;
    if (!mz_is_real(dt)) return mz_say(z, "init of an odd type"), false;
    tr_instr *k = scalar_const(c, dt, mz_bits_of(dt, boundary_value(z, dt)));
    tr_instr_replace_operand(x, 1, k);
    return true;
  }
  int r = x->operands[0]->shape->rank;
  int64_t dims[8];
  int nd = 0;
  for (int i = 0; i < r && i < 8; i++)
    if (mz_rndn(z, 2)) dims[nd++] = i;
  tr_attr *a = tr_instr_attr(x, TR_ATTR_DIMENSIONS);
  if (!a) return false;
  a->n = nd;
  a->u.ints = tr_arena_memdup(A(z), dims, sizeof(int64_t) * (size_t)(nd ? nd : 1));
  int at = 0;
  while (c->instrs[at] != x) at++;
  if (!reinfer(z, c, at)) return mz_say(z, "users do not follow the new axes"), false;
  if (c->is_entry) tr_drop_entry_layout(z->m);
  return true;
}

/* Instructions that can move into a body: values computed from array
 * operands, no calls. */
static bool is_wrappable(const tr_instr *in) {
  if (!mz_is_value(in) || in->noperands < 1 || in->noperands > 6) return false;
  if (in->op == TR_OP_PARAMETER || in->op == TR_OP_CONSTANT) return false;
  if (tr_instr_called(in, NULL, 0) > 0) return false;
  for (int i = 0; i < in->noperands; i++)
    if (!tr_shape_is_array(in->operands[i]->shape)) return false;
  return true;
}

/* A computation taking tuple(operands of x) (plus a leading s32 counter
 * when counter) that recomputes x; returns it and the recomputed value. */
static tr_comp *body_of(mz *z, tr_instr *x, bool counter, int dead, tr_shape **state, tr_instr **val,
                        tr_instr **gtes) {
  char name[48];
  snprintf(name, sizeof name, "mz_region.%d", z->m->next_id);
  tr_comp *b = tr_build_comp(z->m, name, false);
  comp_to_front(z->m);
  tr_shape *el[10];
  int n = 0;
  /* dead: a leading element the loop carries and nobody reads */
  if (dead) el[n++] = x->operands[0]->shape;
  if (counter) el[n++] = tr_shape_array(A(z), TR_DT_S32, 0, NULL);
  for (int i = 0; i < x->noperands; i++) el[n++] = x->operands[i]->shape;
  if (counter) el[n++] = x->shape;
  *state = tr_shape_tuple(A(z), n, el);
  tr_instr *p = tr_build_param(b, *state);
  for (int i = 0; i < n; i++) gtes[i] = mz_fin(tr_build_gte(b, p, i, NULL));
  tr_instr *y = tr_build_begin(b, x->op, gtes + dead + (counter ? 1 : 0), x->noperands);
  for (int i = 0; i < x->nattrs; i++) {
    if (x->attrs[i].key == TR_ATTR_CONTROL_PREDECESSORS) continue;
    tr_attr *a = tr_instr_add_attr(z->m, y, x->attrs[i].key, x->attrs[i].kind, x->attrs[i].name);
    *a = x->attrs[i];
  }
  *val = mz_fin(tr_build_end(y, x->shape, NULL));
  return b;
}

static bool m_wrap_while(mz *z) {
  tr_instr *x = mz_pick(z, is_wrappable);
  if (!x) return mz_say(z, "no instruction to wrap"), false;
  tr_comp *c = x->parent;
  tr_shape *st;
  tr_instr *val, *g[10];
  int dead = mz_rndn(z, 2);
  tr_comp *body = body_of(z, x, true, dead, &st, &val, g);
  if (!val) return mz_say(z, "the instruction does not rebuild"), false;
  int n = x->noperands + 2 + dead;
  tr_instr *outs[10];
  for (int i = 0; i < n - 1; i++) outs[i] = g[i];
  outs[dead] = mz_fin(tr_build_binary(body, TR_OP_ADD, g[dead], s32_const(body, 1), NULL));
  outs[n - 1] = val;
  tr_build_root(body, mz_fin(tr_build_tuple(body, outs, n, NULL)));
  char name[48];
  snprintf(name, sizeof name, "mz_cond.%d", z->m->next_id);
  tr_comp *cond = tr_build_comp(z->m, name, false);
  comp_to_front(z->m);
  tr_instr *q = tr_build_param(cond, st);
  tr_instr *qi = mz_fin(tr_build_gte(cond, q, dead, NULL));
  tr_build_root(cond, trip_test(z, cond, qi, 1));
  mz_uses u = mz_uses_of(z, x);
  tr_instr *init[10];
  if (dead) init[0] = x->operands[0];
  init[dead] = s32_const(c, 0);
  for (int i = 0; i < x->noperands; i++) init[dead + 1 + i] = x->operands[i];
  /* The result slot starts as a zero-filled value of x's shape. */
  init[n - 1] = splat(c, x, 0);
  if (!init[n - 1]) return false;
  tr_instr *t = mz_fin(tr_build_tuple(c, init, n, NULL));
  tr_instr *w = tr_build_begin(c, TR_OP_WHILE, &t, 1);
  tr_build_callee(w, TR_ATTR_CONDITION, cond);
  tr_build_callee(w, TR_ATTR_BODY, body);
  if (!(w = mz_fin(tr_build_end(w, NULL, NULL)))) return false;
  tr_instr *y = mz_fin(tr_build_gte(c, w, n - 1, NULL));
  if (!y) return false;
  mz_rewire(u, x, y);
  return true;
}

static bool m_wrap_cond(mz *z) {
  tr_instr *x = mz_pick(z, is_wrappable);
  if (!x) return mz_say(z, "no instruction to wrap"), false;
  tr_comp *c = x->parent;
  tr_shape *st;
  tr_instr *val, *g[10];
  tr_comp *bt = body_of(z, x, false, 0, &st, &val, g);
  if (!val) return mz_say(z, "the instruction does not rebuild"), false;
  tr_build_root(bt, val);
  tr_comp *bf = body_of(z, x, false, 0, &st, &val, g);
  if (!val) return false;
  tr_build_root(bf, val);
  mz_uses u = mz_uses_of(z, x);
  tr_instr *t = mz_fin(tr_build_tuple(c, x->operands, x->noperands, NULL));
  tr_instr *pred;
  if (mz_rndn(z, 2)) {
    pred = scalar_const(c, TR_DT_PRED, (uint64_t)mz_rndn(z, 2));
  } else { /* data-dependent: an element of an operand compared to zero */
    tr_instr *o = x->operands[0];
    if (!mz_is_real(o->shape->dtype)) return mz_say(z, "operand of an odd type"), false;
    tr_instr *e = o;
    if (o->shape->rank) {
      int64_t st0[8] = {0}, one[8];
      for (int i = 0; i < o->shape->rank; i++) one[i] = o->shape->dims[i] ? 1 : 0;
      for (int i = 0; i < o->shape->rank; i++)
        if (!one[i]) return mz_say(z, "an empty operand"), false;
      tr_instr *ds = dyn_slice(z, c, o, st0, one);
      e = ds ? mz_fin(tr_build_reshape(c, ds, NULL, 0, NULL)) : NULL;
      if (!e) return false;
    }
    pred = mz_fin(tr_build_compare(c, e, scalar_const(c, o->shape->dtype, mz_bits_of(o->shape->dtype, 0)), "GT", NULL));
  }
  tr_instr *ops[3] = {pred, t, t};
  tr_instr *cd = tr_build_begin(c, TR_OP_CONDITIONAL, ops, 3);
  tr_build_callee(cd, TR_ATTR_TRUE_COMPUTATION, bt);
  tr_build_callee(cd, TR_ATTR_FALSE_COMPUTATION, bf);
  if (!(cd = mz_fin(tr_build_end(cd, NULL, NULL)))) return false;
  mz_rewire(u, x, cd);
  return true;
}

static bool is_small_entry_param(const tr_instr *in) {
  return in->op == TR_OP_PARAMETER && in->parent->is_entry && mz_is_value(in) &&
         tr_shape_count(in->shape) <= 4096 &&
         (mz_is_real(in->shape->dtype) || in->shape->dtype == TR_DT_PRED);
}

static bool m_param_to_const(mz *z) {
  tr_instr *p = mz_pick(z, is_small_entry_param);
  if (!p) return mz_say(z, "no small parameter of a real type in the entry"), false;
  tr_comp *e = p->parent;
  tr_dtype dt = p->shape->dtype;
  int64_t n = tr_shape_count(p->shape);
  int sz = tr_dtype_size(dt);
  char *data = tr_arena_alloc(A(z), (size_t)(n * sz + 1));
  for (int64_t i = 0; i < n; i++) {
    double v;
    if (tr_dtype_is_float(dt)) v = mz_rndn(z, 8) ? ((double)mz_rndn(z, 2001) - 1000.0) / 100.0 : boundary_value(z, dt);
    else if (dt == TR_DT_PRED) v = mz_rndn(z, 2);
    else v = mz_rndn(z, 4) ? (double)(mz_rndn(z, 21) - (tr_dtypes[dt].kind == TR_DK_SINT ? 10 : 0)) : boundary_value(z, dt);
    uint64_t b = mz_bits_of(dt, v);
    memcpy(data + i * sz, &b, (size_t)(sz < 8 ? sz : 8));
  }
  tr_shape *s = tr_shape_array(A(z), dt, p->shape->rank, p->shape->dims);
  tr_instr *k = mz_fin(tr_build_constant(e, s, data));
  mz_uses u = mz_uses_of(z, p);
  mz_rewire(u, p, k);
  /* Drop the parameter and renumber the others. */
  int j = 0;
  for (int i = 0; i < e->nparams; i++)
    if (e->params[i] != p) {
      e->params[j] = e->params[i];
      e->params[j]->param_index = j;
      j++;
    }
  e->nparams = j;
  tr_comp_remove(e, p);
  tr_drop_entry_layout(z->m);
  return true;
}

static bool is_entry_const(const tr_instr *in) {
  return is_real_const(in) && in->parent->is_entry;
}

static bool m_const_to_param(mz *z) {
  tr_instr *k = mz_pick(z, is_entry_const);
  if (!k) return mz_say(z, "no constant of a real type in the entry"), false;
  tr_comp *e = k->parent;
  mz_uses u = mz_uses_of(z, k);
  tr_shape *s = tr_shape_array(A(z), k->shape->dtype, k->shape->rank, k->shape->dims);
  tr_instr *p = mz_fin(tr_build_param(e, s));
  mz_rewire(u, k, p);
  if (!k->nusers && e->root != k) tr_comp_remove(e, k);
  tr_drop_entry_layout(z->m);
  return true;
}

static bool is_commutative(const tr_instr *in) {
  return mz_is_num_value(in) && (tr_ops[in->op].flags & TR_OPF_C) && in->noperands == 2;
}
static bool is_sub(const tr_instr *in) {
  return in->op == TR_OP_SUBTRACT && mz_is_num_value(in) && tr_dtypes[in->shape->dtype].kind != TR_DK_UINT;
}

static bool m_metamorphic(mz *z) {
  tr_instr *x;
  switch (mz_rndn(z, 5)) {
  case 0:
    if (!(x = mz_pick(z, is_commutative))) break;
    tr_instr *a = x->operands[0], *b = x->operands[1];
    tr_instr_replace_operand(x, 0, b);
    tr_instr_replace_operand(x, 1, a);
    return true;
  case 1: {
    if (!(x = mz_pick(z, is_sub))) break;
    tr_instr *n = mz_fin(tr_build_unary(x->parent, TR_OP_NEGATE, x->operands[1], NULL));
    if (!n) return false;
    x->op = TR_OP_ADD;
    x->opname = tr_ops[TR_OP_ADD].name;
    tr_instr_replace_operand(x, 1, n);
    return true;
  }
  case 2: { /* x*2 -> x+x (exact in binary floating point) */
    if (!(x = mz_pick(z, is_float_value))) break;
    mz_uses u = mz_uses_of(z, x);
    tr_instr *y = mz_fin(tr_build_binary(x->parent, TR_OP_ADD, x, x, NULL));
    tr_instr *h = y ? mz_fin(tr_build_binary(x->parent, TR_OP_MULTIPLY, y, splat(x->parent, x, 0.5), NULL)) : NULL;
    if (!h) return false;
    mz_rewire(u, x, h);
    return true;
  }
  case 3: {
    if (!(x = mz_pick(z, is_ranked_value))) break;
    int64_t d = mz_rndn(z, x->shape->rank);
    tr_comp *c = x->parent;
    mz_uses u = mz_uses_of(z, x);
    tr_instr *r1 = tr_build_begin(c, TR_OP_REVERSE, &x, 1);
    tr_build_ints(r1, TR_ATTR_DIMENSIONS, &d, 1);
    r1 = mz_fin(tr_build_end(r1, NULL, NULL));
    tr_instr *r2 = r1 ? tr_build_begin(c, TR_OP_REVERSE, &r1, 1) : NULL;
    if (!r2) return false;
    tr_build_ints(r2, TR_ATTR_DIMENSIONS, &d, 1);
    if (!(r2 = mz_fin(tr_build_end(r2, NULL, NULL)))) return false;
    mz_rewire(u, x, r2);
    return true;
  }
  default: {
    if (!(x = mz_pick(z, is_ranked_value))) break;
    int64_t d = mz_rndn(z, x->shape->rank);
    if (tr_shape_count(x->shape) * 2 > MZ_MAX_ELEMS) return false;
    tr_comp *c = x->parent;
    mz_uses u = mz_uses_of(z, x);
    tr_instr *two[2] = {x, x};
    tr_instr *cc = tr_build_begin(c, TR_OP_CONCATENATE, two, 2);
    tr_build_ints(cc, TR_ATTR_DIMENSIONS, &d, 1);
    if (!(cc = mz_fin(tr_build_end(cc, NULL, NULL)))) return false;
    tr_slice_dim sd[8];
    int64_t off = mz_rndn(z, 2) ? x->shape->dims[d] : 0;
    for (int i = 0; i < x->shape->rank; i++) {
      sd[i].start = i == d ? off : 0;
      sd[i].limit = sd[i].start + x->shape->dims[i];
      sd[i].stride = 1;
    }
    tr_instr *sl = tr_build_begin(c, TR_OP_SLICE, &cc, 1);
    tr_build_slice(sl, sd, x->shape->rank);
    if (!(sl = mz_fin(tr_build_end(sl, NULL, NULL)))) return false;
    mz_rewire(u, x, sl);
    return true;
  }
  }
  return mz_say(z, "no place for the drawn formulation"), false;
}

static bool is_entry_value(const tr_instr *in) {
  return is_ranked_value(in) && in->parent->is_entry && in->shape->rank <= 6;
}

/* A slice of x: per dim a drawn start, limit and stride 1..3. */
static tr_instr *rand_slice(mz *z, tr_comp *c, tr_instr *x) {
  tr_slice_dim sd[8];
  for (int i = 0; i < x->shape->rank; i++) {
    int64_t d = x->shape->dims[i];
    sd[i].start = d ? mz_rndn(z, (int)d) : 0;
    sd[i].limit = sd[i].start + mz_rndn(z, (int)(d - sd[i].start + 1));
    sd[i].stride = 1 + mz_rndn(z, 3);
  }
  tr_instr *sl = tr_build_begin(c, TR_OP_SLICE, &x, 1);
  tr_build_slice(sl, sd, x->shape->rank);
  return mz_fin(tr_build_end(sl, NULL, NULL));
}


static bool m_side_output(mz *z) {
  tr_instr *x = mz_pick(z, is_entry_value);
  if (!x) return mz_say(z, "no array value of rank 1..6 in the entry"), false;
  tr_comp *c = x->parent;
  int r = x->shape->rank;
  tr_instr *y = NULL;
  switch (mz_rndn(z, 4)) {
  case 0: { /* a slice of a (strided) slice */
    tr_instr *a = rand_slice(z, c, x);
    y = a ? rand_slice(z, c, a) : NULL;
    break;
  }
  case 1: { /* a strided slice of an interior-padded pad */
    tr_pad_dim pd[8];
    for (int i = 0; i < r; i++) {
      pd[i].lo = mz_rndn(z, 3);
      pd[i].hi = mz_rndn(z, 3);
      pd[i].interior = x->shape->dims[i] > 1 ? 1 + mz_rndn(z, 2) : 0;
    }
    tr_instr *ops[2] = {x, scalar_const(c, x->shape->dtype, mz_bits_of(x->shape->dtype, 0))};
    tr_instr *p = tr_build_begin(c, TR_OP_PAD, ops, 2);
    tr_build_padding(p, pd, r);
    p = mz_fin(tr_build_end(p, NULL, NULL));
    if (!p || tr_shape_count(p->shape) > MZ_MAX_ELEMS) break;
    if (mz_rndn(z, 2)) {
      y = rand_slice(z, c, p);
      break;
    }
    /* A slice on the operand's grid inside the pad: starts on an operand
     * element, strides around the dilation. */
    tr_slice_dim sd[8];
    for (int i = 0; i < r; i++) {
      int64_t d = x->shape->dims[i], step = pd[i].interior + 1;
      int64_t k = d ? mz_rndn(z, (int)d) : 0;
      sd[i].start = d ? pd[i].lo + k * step : 0;
      sd[i].stride = 1 + mz_rndn(z, (int)(step + 2));
      int64_t end = d ? pd[i].lo + (d - 1) * step + 1 : 0;
      sd[i].limit = sd[i].start + mz_rndn(z, (int)(end - sd[i].start + 1));
    }
    tr_instr *sl = tr_build_begin(c, TR_OP_SLICE, &p, 1);
    tr_build_slice(sl, sd, r);
    y = mz_fin(tr_build_end(sl, NULL, NULL));
    break;
  }
  case 2: { /* nested dynamic-slices; the inner starts drawn or inputs */
    int64_t st[8], sz[8], st2[8], sz2[8];
    for (int i = 0; i < r; i++) {
      int64_t d = x->shape->dims[i];
      if (!d) return mz_say(z, "an empty dim"), false;
      sz[i] = 1 + mz_rndn(z, (int)d);
      st[i] = mz_rndn(z, 4) ? mz_rndn(z, (int)(d - sz[i] + 1)) : mz_rndn(z, 2) ? d : -2;
      sz2[i] = 1 + mz_rndn(z, (int)sz[i]);
      st2[i] = mz_rndn(z, 3) ? mz_rndn(z, (int)(sz[i] - sz2[i] + 1)) : mz_rndn(z, 2) ? sz[i] : -1;
    }
    tr_instr *a = dyn_slice(z, c, x, st, sz);
    if (!a) return false;
    tr_instr *ops[9];
    ops[0] = a;
    bool param = mz_rndn(z, 2);
    for (int i = 0; i < r; i++)
      ops[1 + i] = param && i == 0 ? mz_fin(tr_build_param(z->m->entry, tr_shape_array(A(z), TR_DT_S32, 0, NULL)))
                                   : s32_const(c, st2[i]);
    if (param) tr_drop_entry_layout(z->m);
    tr_instr *b = tr_build_begin(c, TR_OP_DYNAMIC_SLICE, ops, r + 1);
    tr_build_ints(b, TR_ATTR_DYNAMIC_SLICE_SIZES, sz2, r);
    y = mz_fin(tr_build_end(b, NULL, NULL));
    break;
  }
  default: { /* a transpose around size-1 dims */
    int64_t dims[8], perm[8];
    int nd = 0, ones = 1 + mz_rndn(z, 2);
    for (int i = 0; i <= r && nd < 8; i++) {
      if (i < r) dims[nd++] = x->shape->dims[i];
      if (ones && nd < 8 && mz_rndn(z, 2)) {
        dims[nd++] = 1;
        ones--;
      }
    }
    random_layout(z, nd, perm);
    tr_instr *a = mz_fin(tr_build_reshape(c, x, dims, nd, NULL));
    y = a ? mz_fin(tr_build_transpose(c, a, perm, NULL)) : NULL;
    break;
  }
  }
  if (!y) return mz_say(z, "the drawn chain does not build"), false;
  return mz_add_output(z, c, y);
}

/* y returned as one more output of the entry c. */
bool mz_add_output(mz *z, tr_comp *c, tr_instr *y) {
  tr_instr *root = c->root, *ys[64];
  int n = 0;
  if (root->op == TR_OP_TUPLE && root->noperands < 63) {
    for (int i = 0; i < root->noperands; i++) ys[n++] = root->operands[i];
  } else {
    ys[n++] = root;
  }
  ys[n++] = y;
  tr_instr *t = mz_fin(tr_build_tuple(c, ys, n, NULL));
  if (!t) return false;
  c->root = t;
  tr_drop_entry_layout(z->m);
  return true;
}

static bool has_ranked_operand(const tr_instr *in) {
  if (!mz_is_value(in) || in->op == TR_OP_PARAMETER || !in->parent->is_entry) return false;
  if (tr_instr_called(in, NULL, 0) > 0 && in->op != TR_OP_REDUCE && in->op != TR_OP_REDUCE_WINDOW) return false;
  for (int i = 0; i < in->noperands; i++)
    if (tr_shape_is_array(in->operands[i]->shape) && in->operands[i]->shape->rank >= 1) return true;
  return false;
}

static bool m_operand_slice(mz *z) {
  tr_instr *x = mz_pick(z, has_ranked_operand);
  if (!x) return mz_say(z, "no instruction with an array operand in the entry"), false;
  int k = mz_rndn(z, x->noperands);
  tr_instr *o = x->operands[k];
  if (!tr_shape_is_array(o->shape) || o->shape->rank < 1) return mz_say(z, "the drawn operand is a scalar"), false;
  int r = o->shape->rank, d = mz_rndn(z, r);
  if (o->shape->dims[d] < 2) return mz_say(z, "the drawn dim is too small"), false;
  tr_slice_dim sd[8];
  for (int i = 0; i < r; i++) {
    sd[i].start = 0;
    sd[i].limit = o->shape->dims[i];
    sd[i].stride = 1;
  }
  sd[d].start = 1 + mz_rndn(z, (int)(o->shape->dims[d] - 1));
  tr_comp *c = x->parent;
  tr_instr *sl = tr_build_begin(c, TR_OP_SLICE, &o, 1);
  tr_build_slice(sl, sd, r);
  if (!(sl = mz_fin(tr_build_end(sl, NULL, NULL)))) return false;
  tr_instr_replace_operand(x, k, sl);
  mz_reorder(c);
  int at = 0;
  while (c->instrs[at] != x) at++;
  if (!reinfer(z, c, at)) return mz_say(z, "the graph does not follow the smaller operand"), false;
  tr_drop_entry_layout(z->m);
  return true;
}

/* One drawn movement op on x: a strided slice, a pad (interior, negative
 * or positive edges), a dynamic-slice at clamped or input starts, a
 * reverse, a transpose, a reshape that inserts a size-1 dim, or a
 * concatenate of x with itself. NULL when it does not build. */
static tr_instr *rand_move(mz *z, tr_comp *c, tr_instr *x) {
  int r = x->shape->rank;
  int64_t v[8], w[8];
  switch (mz_rndn(z, 7)) {
  case 0: return rand_slice(z, c, x);
  case 1: {
    tr_pad_dim pd[8];
    for (int i = 0; i < r; i++) {
      int64_t d = x->shape->dims[i];
      pd[i].interior = d > 1 && mz_rndn(z, 2) ? 1 + mz_rndn(z, 2) : 0;
      pd[i].lo = mz_rndn(z, 4) - (d > 2 && mz_rndn(z, 4) == 0 ? 2 : 0);
      pd[i].hi = mz_rndn(z, 3);
    }
    tr_instr *ops[2] = {x, scalar_const(c, x->shape->dtype, mz_bits_of(x->shape->dtype, mz_rndn(z, 2)))};
    tr_instr *p = tr_build_begin(c, TR_OP_PAD, ops, 2);
    tr_build_padding(p, pd, r);
    return mz_fin(tr_build_end(p, NULL, NULL));
  }
  case 2:
    for (int i = 0; i < r; i++) {
      int64_t d = x->shape->dims[i];
      w[i] = d ? 1 + mz_rndn(z, (int)d) : 0;
      /* in bounds, at the end, past it or negative: clamped */
      int k = mz_rndn(z, 4);
      v[i] = k == 0 ? d - w[i] : k == 1 ? d - w[i] + 1 + mz_rndn(z, 3) : k == 2 ? -1 - mz_rndn(z, 2) : mz_rndn(z, (int)(d - w[i] + 1));
    }
    return dyn_slice(z, c, x, v, w);
  case 3: {
    int n = 0;
    for (int i = 0; i < r; i++)
      if (mz_rndn(z, 2)) v[n++] = i;
    if (!n) v[n++] = mz_rndn(z, r);
    tr_instr *in = tr_build_begin(c, TR_OP_REVERSE, &x, 1);
    tr_build_ints(in, TR_ATTR_DIMENSIONS, v, n);
    return mz_fin(tr_build_end(in, NULL, NULL));
  }
  case 4:
    random_layout(z, r, v);
    return mz_fin(tr_build_transpose(c, x, v, NULL));
  case 5: {
    if (r >= 7) return NULL;
    int at = mz_rndn(z, r + 1);
    for (int i = 0, j = 0; i <= r; i++) v[i] = i == at ? 1 : x->shape->dims[j++];
    return mz_fin(tr_build_reshape(c, x, v, r + 1, NULL));
  }
  default: {
    int64_t d = mz_rndn(z, r), n = x->shape->dims[d];
    if (n >= 3 && mz_rndn(z, 2)) {
      /* two or three slices of x along d, concatenated: adjacent, one
       * apart or overlapping by one (the pairs simplifiers merge) */
      tr_instr *parts[3];
      int np = 2 + mz_rndn(z, 2);
      int64_t at = mz_rndn(z, 2);
      for (int k = 0; k < np; k++) {
        int64_t len = 1 + mz_rndn(z, (int)(n / np));
        if (at < 0) at = 0;
        if (at + len > n) len = n - at;
        if (len <= 0) return NULL;
        tr_slice_dim sd[8];
        for (int i = 0; i < r; i++) sd[i] = (tr_slice_dim){0, x->shape->dims[i], 1};
        sd[d].start = at;
        sd[d].limit = at + len;
        tr_instr *sl = tr_build_begin(c, TR_OP_SLICE, &x, 1);
        tr_build_slice(sl, sd, r);
        if (!(parts[k] = mz_fin(tr_build_end(sl, NULL, NULL)))) return NULL;
        at += len + mz_rndn(z, 3) - 1;
      }
      tr_instr *in = tr_build_begin(c, TR_OP_CONCATENATE, parts, np);
      tr_build_ints(in, TR_ATTR_DIMENSIONS, &d, 1);
      return mz_fin(tr_build_end(in, NULL, NULL));
    }
    if (tr_shape_count(x->shape) * 2 > MZ_MAX_ELEMS) return NULL;
    tr_instr *two[2] = {x, x};
    tr_instr *in = tr_build_begin(c, TR_OP_CONCATENATE, two, 2);
    tr_build_ints(in, TR_ATTR_DIMENSIONS, &d, 1);
    return mz_fin(tr_build_end(in, NULL, NULL));
  }
  }
}

/* A chain of two to four drawn movement ops after an intermediate,
 * returned as one more output: the compositions (slice of slice, slice
 * of pad, nested dynamic-slices, transpose of reshape, ...) that
 * rewrite rules merge. */
static bool m_move_chain(mz *z) {
  tr_instr *x = mz_pick(z, is_entry_value);
  if (!x) return mz_say(z, "no array value of rank 1..6 in the entry"), false;
  tr_comp *c = x->parent;
  tr_instr *y = x;
  int n = 2 + mz_rndn(z, 3);
  for (int i = 0; i < n && y; i++) {
    y = rand_move(z, c, y);
    if (y && tr_shape_count(y->shape) > MZ_MAX_ELEMS) y = NULL;
  }
  if (!y) return mz_say(z, "the drawn chain does not build"), false;
  return mz_add_output(z, c, y);
}

typedef bool (*mz_fn)(mz *z);
static const mz_fn mz_fns[TR_MUT_COUNT] = {
  m_boundary_size, m_boundary_const, m_dtype_narrow, m_dtype_widen,  m_transpose_chain,
  m_reshape_chain, m_bitcast_copy,   m_unit_dim,     m_layout,       m_dynamic_slice,
  m_in_place,      m_producer_chain, m_scatter_dup,  m_compare,      m_reduce,
  m_wrap_while,    m_wrap_cond,      m_param_to_const, m_const_to_param, m_metamorphic,
  m_side_output,   m_operand_slice, m_move_chain,   mz_self_operand, mz_convert_chain,
};

/* Tries per mutation: each on a fresh clone with the next seed. */
#define MZ_TRIES 6

tr_status tr_mutate(const tr_module *m, tr_mutator mu, uint64_t seed, tr_module **out, tr_buf *why) {
  *out = NULL;
  if (!m->entry) {
    if (why) tr_buf_puts(why, "the module has no entry computation");
    return TR_ERR_UNSUPPORTED;
  }
  tr_buf last = {0};
  for (int t = 0; t < MZ_TRIES; t++) {
    mz z = {0};
    z.m = tr_module_clone(m);
    z.rng = seed * 0x2545f4914f6cdd1dULL + (uint64_t)t * 0x9e3779b97f4a7c15ULL + (uint64_t)mu;
    z.why = &last;
    find_control(&z);
    last.n = 0;
    bool ok = mz_fns[mu](&z);
    if (ok) {
      for (int k = 0; k < z.m->ncomps; k++) mz_reorder(z.m->comps[k]);
      tr_module_rebuild_users(z.m);
      tr_diag d = {0};
      if (tr_verify(z.m, &d) == TR_OK) {
        tr_diag_clear(&d);
        tr_buf_free(&last);
        *out = z.m;
        return TR_OK;
      }
      last.n = 0;
      tr_buf_printf(&last, "the result did not verify: %s", tr_diag_first(&d) ? tr_diag_first(&d) : "?");
      tr_diag_clear(&d);
    }
    tr_module_free(z.m);
  }
  if (why) {
    tr_buf_printf(why, "%s does not apply", tr_mutators[mu].name);
    if (last.n) tr_buf_printf(why, " (%s)", tr_buf_str(&last));
  }
  tr_buf_free(&last);
  return TR_ERR_UNSUPPORTED;
}

tr_status tr_mutate_any(const tr_module *m, uint64_t seed, tr_mutator *used, tr_module **out,
                        tr_buf *why) {
  int first = (int)((seed * 0x9e3779b97f4a7c15ULL) >> 33) % TR_MUT_COUNT;
  for (int k = 0; k < TR_MUT_COUNT; k++) {
    tr_mutator mu = (tr_mutator)((first + k) % TR_MUT_COUNT);
    if (tr_mutate(m, mu, seed, out, NULL) == TR_OK) {
      if (used) *used = mu;
      return TR_OK;
    }
  }
  if (why) tr_buf_puts(why, "no mutator applies to this module");
  return TR_ERR_UNSUPPORTED;
}
