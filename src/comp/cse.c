/* cse.c - common subexpression elimination (rule common-subexpression):
 * within a computation, an instruction identical to an earlier one (same
 * op, operands, attributes, shape with layout, and literal bits) is
 * replaced by the earlier one. Identity is decided on the canonical
 * printed form minus the name, so every attribute kind the printer knows
 * counts, with a hash of a literal's bytes in place of its text, the
 * bytes compared on a match (-0.0 differs from 0.0). Side-effecting ops
 * (TR_OPF_S, which includes rng) are never merged: two draws are two
 * values. A commutative op (ops.def flag C) is keyed with its two operands
 * in a canonical order, so add(a, b) and add(b, a) merge; not float
 * maximum and minimum (C and I): on a tie they return one operand by its
 * position, and +0 ties -0. */
#include "compint.h"

#include <stdlib.h>
#include <string.h>

typedef struct {
  uint64_t hash;   /* FNV-1a of key */
  char *key;       /* printed form after "name = " (heap) */
  tr_instr *in;    /* first instruction with this form */
} slot;

static uint64_t fnv(const char *s) {
  uint64_t h = 1469598103934665603ull;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ull;
  return h;
}

static bool mergeable(const tr_instr *in) {
  if (in->op == TR_OP_PARAMETER || in->shape->dtype == TR_DT_TOKEN) return false;
  if (tr_instr_attr(in, TR_ATTR_CONTROL_PREDECESSORS)) return false;
  /* Elided constants ({...}) print alike but hold unknown values. */
  if (in->op == TR_OP_CONSTANT && (!in->literal || in->literal->elided)) return false;
  return !tr_bc_has_side_effect(in);
}

/* Whether in's operands may be swapped without changing a bit (NaN
 * payloads aside). */
static bool swappable(const tr_instr *in) {
  unsigned f = tr_ops[in->op].flags;
  if (!(f & TR_OPF_C) || in->noperands != 2) return false;
  return !(f & TR_OPF_I) || !tr_dtype_is_float(in->shape->dtype);
}

/* A literal's bytes as the key sees them: element 0 alone for a single
 * value (or a scalar), else every element; n 0 when it holds none. */
static const unsigned char *lit_bytes(const tr_literal *lit, size_t *n) {
  size_t es = (size_t)tr_dtype_size(lit->shape->dtype);
  const unsigned char *p = lit->single ? lit->one : lit->data;
  int64_t count = lit->single || lit->shape->rank == 0 ? 1 : tr_shape_count(lit->shape);
  *n = p && count > 0 ? es * (size_t)count : 0;
  return p;
}

/* A 64-bit hash of a literal's bytes (tuples element by element): the
 * key carries it instead of the bytes, whose hex form cost the pass most
 * of its time on large constants; lit_same settles a match. */
static uint64_t lit_hash(const tr_literal *lit, uint64_t h) {
  h = (h ^ (uint64_t)(lit->elided | lit->single << 1 | (lit->shape->dtype == TR_DT_TUPLE) << 2)) *
      0x100000001b3ull;
  if (lit->elided) return h;
  if (lit->shape->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < lit->nelems; i++) h = lit_hash(lit->elems[i], h);
    return h;
  }
  size_t n, i = 0;
  const unsigned char *p = lit_bytes(lit, &n);
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    h = (h ^ w) * 0x9e3779b97f4a7c15ull;
    h ^= h >> 29;
  }
  for (; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h ^ n;
}

/* Whether two literals whose printed forms (values elided) are the same
 * hold the same bytes. */
static bool lit_same(const tr_literal *a, const tr_literal *b) {
  if (a->elided != b->elided || a->single != b->single || a->nelems != b->nelems) return false;
  if (a->elided) return true;
  if (a->shape->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < a->nelems; i++)
      if (!lit_same(a->elems[i], b->elems[i])) return false;
    return true;
  }
  size_t na, nb;
  const unsigned char *pa = lit_bytes(a, &na), *pb = lit_bytes(b, &nb);
  return na == nb && (na == 0 || memcmp(pa, pb, na) == 0);
}

/* in's printed form, its operands in canonical order (by id) where they
 * may be swapped: the swap is undone before returning. A constant's
 * literal is keyed by the hash of its bytes (lit_hash). */
static void print_key(tr_buf *b, tr_instr *in) {
  if (in->op == TR_OP_CONSTANT && in->literal) {
    tr_literal *lit = in->literal, elided = *lit;
    elided.elided = true;
    in->literal = &elided;
    tr_print_instr(b, in);
    in->literal = lit;
    tr_buf_printf(b, " #%016llx", (unsigned long long)lit_hash(lit, 1469598103934665603ull));
    return;
  }
  bool swap = swappable(in) && in->operands[1]->id < in->operands[0]->id;
  if (swap) {
    tr_instr *t = in->operands[0];
    in->operands[0] = in->operands[1];
    in->operands[1] = t;
  }
  tr_print_instr(b, in);
  if (swap) {
    tr_instr *t = in->operands[0];
    in->operands[0] = in->operands[1];
    in->operands[1] = t;
  }
}

/* Returns false when fuel ran out. */
static bool cse_comp(tr_bc_ctx *c, tr_comp *k, bool *changed) {
  size_t cap = 16;
  while (cap < (size_t)k->ninstrs * 2) cap *= 2;
  slot *tab = tr_xcalloc(cap, sizeof(slot));
  bool fuel = true;
  tr_buf b = {0};
  /* Snapshot: the walk does not add or remove instructions, but be safe
   * against list reallocation. */
  int n = k->ninstrs;
  tr_instr **list = tr_xmalloc(sizeof(tr_instr *) * (size_t)(n ? n : 1));
  memcpy(list, k->instrs, sizeof(tr_instr *) * (size_t)n);
  for (int i = 0; i < n && fuel; i++) {
    tr_instr *in = list[i];
    if (!mergeable(in)) continue;
    b.n = 0;
    print_key(&b, in);
    const char *key = strstr(tr_buf_str(&b), " = ");
    key = key ? key + 3 : tr_buf_str(&b);
    uint64_t h = fnv(key);
    size_t at = (size_t)h & (cap - 1);
    while (tab[at].key && !(tab[at].hash == h && strcmp(tab[at].key, key) == 0 &&
                            (in->op != TR_OP_CONSTANT || lit_same(tab[at].in->literal, in->literal))))
      at = (at + 1) & (cap - 1);
    if (!tab[at].key) {
      tab[at].hash = h;
      tab[at].key = tr_xstrdup(key);
      tab[at].in = in;
      continue;
    }
    if (!in->nusers && in != k->root) continue; /* dead already: DCE's job */
    if (!tr_bc_fire(c, "cse", "common-subexpression", in)) {
      fuel = false;
      break;
    }
    tr_bc_replace_uses(in, tab[at].in);
    *changed = true;
  }
  for (size_t i = 0; i < cap; i++) tr_free(tab[i].key);
  tr_free(tab);
  tr_free(list);
  tr_buf_free(&b);
  return fuel;
}

tr_status tr_pass_cse(tr_bc_ctx *c, tr_module *m, bool *changed, tr_diag *d) {
  (void)d;
  *changed = false;
  for (int i = 0; i < m->ncomps; i++)
    if (!cse_comp(c, m->comps[i], changed)) break;
  return TR_OK;
}
