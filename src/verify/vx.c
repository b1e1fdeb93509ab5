/* vx.c - hash-consed real expressions in normal form (vx.h). Every
 * constructor normalises before interning, so structural equality of two
 * results is pointer equality. Sums keep one term per distinct product
 * with a constant coefficient; products keep one constant factor first;
 * max/min drop duplicates and their identities (-inf, +inf). */
#include "vx.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *const vx_fn_names[VX_FN_COUNT] = {
#define X(E, s, f) s,
  VX_FNS(X)
#undef X
};

struct vx_ctx {
  tr_arena *arena;
  vx **tab;
  size_t cap, count;
  uint32_t next_id;
};

vx_ctx *vx_ctx_new(void) {
  vx_ctx *c = tr_xcalloc(1, sizeof *c);
  c->arena = tr_arena_new();
  c->cap = 1 << 12;
  c->tab = tr_xcalloc(c->cap, sizeof *c->tab);
  return c;
}

void vx_ctx_free(vx_ctx *c) {
  if (!c) return;
  tr_arena_free(c->arena);
  tr_free(c->tab);
  tr_free(c);
}

size_t vx_ctx_nodes(const vx_ctx *c) { return c->count; }

static uint32_t mix(uint32_t h, uint64_t v) {
  v ^= v >> 33; v *= 0xff51afd7ed558ccdULL; v ^= v >> 33;
  return (h ^ (uint32_t)v ^ (uint32_t)(v >> 32)) * 16777619u;
}

static void grow(vx_ctx *c) {
  size_t ncap = c->cap * 2;
  vx **nt = tr_xcalloc(ncap, sizeof *nt);
  for (size_t i = 0; i < c->cap; i++)
    for (vx *e = c->tab[i], *nx; e; e = nx) {
      nx = e->next;
      size_t j = e->hash & (ncap - 1);
      e->next = nt[j];
      nt[j] = e;
    }
  tr_free(c->tab);
  c->tab = nt;
  c->cap = ncap;
}

/* The interned node (kind, width, c, a, b, k[0..n)). */
static vx *intern_w(vx_ctx *c, vx_kind kind, int w, double cv, int64_t a, int64_t b, vx **k, int n) {
  uint64_t cbits;
  if (cv == 0) cv = 0; /* -0 and +0 are one real */
  memcpy(&cbits, &cv, sizeof cbits);
  uint32_t h = mix(2166136261u, (uint64_t)kind * 131 + (uint64_t)w);
  h = mix(h, cbits); h = mix(h, (uint64_t)a); h = mix(h, (uint64_t)b);
  for (int i = 0; i < n; i++) h = mix(h, k[i]->id);
  size_t j = h & (c->cap - 1);
  for (vx *e = c->tab[j]; e; e = e->next) {
    if (e->hash != h || e->kind != kind || e->w != w || e->n != n || e->a != a || e->b != b) continue;
    uint64_t eb;
    memcpy(&eb, &e->c, sizeof eb);
    if (eb != cbits) continue;
    int i = 0;
    while (i < n && e->k[i] == k[i]) i++;
    if (i == n) return e;
  }
  vx *e = tr_arena_alloc(c->arena, sizeof *e);
  e->kind = kind; e->w = w; e->n = n; e->c = cv; e->a = a; e->b = b; e->hash = h;
  e->id = c->next_id++;
  if (n) e->k = tr_arena_memdup(c->arena, k, (size_t)n * sizeof *k);
  e->next = c->tab[j];
  c->tab[j] = e;
  if (++c->count > c->cap) grow(c);
  return e;
}

static vx *intern(vx_ctx *c, vx_kind kind, double cv, int64_t a, int64_t b, vx **k, int n) {
  return intern_w(c, kind, 0, cv, a, b, k, n);
}

vx *vx_const(vx_ctx *c, double v) { return intern(c, VX_CONST, v, 0, 0, NULL, 0); }
vx *vx_sym(vx_ctx *c, int64_t input, int64_t index) { return intern(c, VX_SYM, 0, input, index, NULL, 0); }
vx *vx_undef(vx_ctx *c, int64_t buf, int64_t off) { return intern(c, VX_UNDEF, 0, buf, off, NULL, 0); }

static int by_id(const void *x, const void *y) {
  const vx *a = *(vx *const *)x, *b = *(vx *const *)y;
  return a->id < b->id ? -1 : a->id > b->id;
}

/* A growable operand list. */
typedef struct { vx **v; int n, cap; vx *inl[16]; } vlist;
static void vl_init(vlist *l) { l->v = l->inl; l->n = 0; l->cap = 16; }
static void vl_push(vlist *l, vx *e) {
  if (l->n == l->cap) {
    int nc = l->cap * 2;
    vx **nv = tr_xmalloc((size_t)nc * sizeof *nv);
    memcpy(nv, l->v, (size_t)l->n * sizeof *nv);
    if (l->v != l->inl) tr_free(l->v);
    l->v = nv; l->cap = nc;
  }
  l->v[l->n++] = e;
}
static void vl_free(vlist *l) { if (l->v != l->inl) tr_free(l->v); }

/* ---- sums: terms coef * base ---- */
typedef struct { vx *base; double coef; } term;

static void split_term(vx_ctx *c, vx *e, double scale, term *t) {
  /* a product with a leading constant is coef * (rest) */
  if (e->kind == VX_MUL && e->k[0]->kind == VX_CONST) {
    double k0 = e->k[0]->c;
    if (e->n == 2) { t->base = e->k[1]; t->coef = scale * k0; return; }
    t->base = intern(c, VX_MUL, 0, 0, 0, e->k + 1, e->n - 1);
    t->coef = scale * k0;
    return;
  }
  t->base = e; t->coef = scale;
}

static int term_cmp(const void *x, const void *y) {
  const term *a = x, *b = y;
  return a->base->id < b->base->id ? -1 : a->base->id > b->base->id;
}

static vx *mk_sum(vx_ctx *c, vx **ops, int n) {
  term *ts = tr_xmalloc(((size_t)n * 4 + 4) * sizeof *ts);
  int nt = 0, cap = n * 4 + 4;
  double k = 0;
  for (int i = 0; i < n; i++) {
    vx *e = ops[i];
    if (e->kind == VX_CONST) { k += e->c; continue; }
    if (e->kind == VX_ADD) {
      for (int j = 0; j < e->n; j++) {
        vx *f = e->k[j];
        if (f->kind == VX_CONST) { k += f->c; continue; }
        if (nt == cap) { cap *= 2; ts = tr_xrealloc(ts, (size_t)cap * sizeof *ts); }
        split_term(c, f, 1, &ts[nt++]);
      }
      continue;
    }
    if (nt == cap) { cap *= 2; ts = tr_xrealloc(ts, (size_t)cap * sizeof *ts); }
    split_term(c, e, 1, &ts[nt++]);
  }
  qsort(ts, (size_t)nt, sizeof *ts, term_cmp);
  vlist out;
  vl_init(&out);
  if (k != 0 || nt == 0) vl_push(&out, vx_const(c, k));
  for (int i = 0; i < nt;) {
    int j = i;
    double coef = 0;
    while (j < nt && ts[j].base == ts[i].base) coef += ts[j++].coef;
    if (coef != 0) {
      vx *t = ts[i].base;
      if (coef != 1) {
        vx *two[2] = {vx_const(c, coef), t};
        vx *pk[64];
        if (t->kind == VX_MUL && t->n < 63) { /* coef * (a*b) stays one flat product */
          pk[0] = two[0];
          memcpy(pk + 1, t->k, (size_t)t->n * sizeof *pk);
          t = intern(c, VX_MUL, 0, 0, 0, pk, t->n + 1);
        } else t = intern(c, VX_MUL, 0, 0, 0, two, 2);
      }
      vl_push(&out, t);
    }
    i = j;
  }
  tr_free(ts);
  vx *r;
  if (out.n == 0) r = vx_const(c, 0);
  else if (out.n == 1) r = out.v[0];
  else {
    /* the constant first (its id may be larger), then terms by id */
    int start = out.v[0]->kind == VX_CONST ? 1 : 0;
    qsort(out.v + start, (size_t)(out.n - start), sizeof *out.v, by_id);
    r = intern(c, VX_ADD, 0, 0, 0, out.v, out.n);
  }
  vl_free(&out);
  return r;
}

vx *vx_add(vx_ctx *c, vx *a, vx *b) {
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c + b->c);
  vx *ops[2] = {a, b};
  return mk_sum(c, ops, 2);
}

static vx *mk_prod(vx_ctx *c, vx **ops, int n) {
  double k = 1;
  vlist l;
  vl_init(&l);
  for (int i = 0; i < n; i++) {
    vx *e = ops[i];
    if (e->kind == VX_CONST) { k *= e->c; continue; }
    if (e->kind == VX_MUL) {
      for (int j = 0; j < e->n; j++)
        if (e->k[j]->kind == VX_CONST) k *= e->k[j]->c;
        else vl_push(&l, e->k[j]);
      continue;
    }
    vl_push(&l, e);
  }
  vx *r;
  if (k == 0 || l.n == 0) r = vx_const(c, l.n == 0 ? k : 0);
  else {
    qsort(l.v, (size_t)l.n, sizeof *l.v, by_id);
    /* x * (1/x) cancels over the reals (x != 0 assumed where it divides) */
    for (int i = 0; i < l.n; i++) {
      if (l.v[i]->kind != VX_INV) continue;
      for (int j = 0; j < l.n; j++)
        if (j != i && l.v[j] == l.v[i]->k[0]) {
          int a = i < j ? i : j, b = i < j ? j : i;
          memmove(l.v + b, l.v + b + 1, (size_t)(l.n - b - 1) * sizeof *l.v);
          l.n--;
          memmove(l.v + a, l.v + a + 1, (size_t)(l.n - a - 1) * sizeof *l.v);
          l.n--;
          i = -1;
          break;
        }
    }
    if (l.n == 0) r = vx_const(c, k);
    else if (k == 1 && l.n == 1) r = l.v[0];
    else if (k == 1) r = intern(c, VX_MUL, 0, 0, 0, l.v, l.n);
    else {
      vlist m;
      vl_init(&m);
      vl_push(&m, vx_const(c, k));
      for (int i = 0; i < l.n; i++) vl_push(&m, l.v[i]);
      /* k * (a + b) with a single factor stays a product: sums are not
       * distributed (the solver decides those) */
      r = intern(c, VX_MUL, 0, 0, 0, m.v, m.n);
      vl_free(&m);
    }
  }
  vl_free(&l);
  return r;
}

vx *vx_mul(vx_ctx *c, vx *a, vx *b) {
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c * b->c);
  vx *ops[2] = {a, b};
  return mk_prod(c, ops, 2);
}

vx *vx_neg(vx_ctx *c, vx *a) { return vx_mul(c, vx_const(c, -1), a); }
vx *vx_sub(vx_ctx *c, vx *a, vx *b) { return vx_add(c, a, vx_neg(c, b)); }

vx *vx_floor(vx_ctx *c, vx *a) {
  if (a->kind == VX_CONST) return vx_const(c, floor(a->c));
  if (a->kind == VX_FLOOR) return a;
  return intern(c, VX_FLOOR, 0, 0, 0, &a, 1);
}

vx *vx_ceil(vx_ctx *c, vx *a) { return vx_neg(c, vx_floor(c, vx_neg(c, a))); }

vx *vx_trunc(vx_ctx *c, vx *a) {
  return vx_ite(c, vx_le(c, vx_const(c, 0), a), vx_floor(c, a), vx_ceil(c, a));
}

vx *vx_round_afz(vx_ctx *c, vx *a) {
  vx *h = vx_const(c, 0.5);
  return vx_ite(c, vx_le(c, vx_const(c, 0), a), vx_floor(c, vx_add(c, a, h)), vx_neg(c, vx_floor(c, vx_sub(c, h, a))));
}

vx *vx_round_even(vx_ctx *c, vx *a) {
  vx *f = vx_floor(c, a), *d = vx_sub(c, a, f), *h = vx_const(c, 0.5);
  vx *up = vx_add(c, f, vx_const(c, 1));
  vx *even = vx_eq(c, vx_mul(c, vx_const(c, 2), vx_floor(c, vx_mul(c, h, f))), f);
  return vx_ite(c, vx_lt(c, d, h), f, vx_ite(c, vx_lt(c, h, d), up, vx_ite(c, even, f, up)));
}

vx *vx_inv(vx_ctx *c, vx *a) {
  if (a->kind == VX_CONST) return vx_const(c, 1.0 / a->c);
  if (a->kind == VX_INV) return a->k[0];
  if (a->kind == VX_MUL && a->k[0]->kind == VX_CONST) {
    /* 1/(k*x) = (1/k) * 1/x */
    vx *rest = a->n == 2 ? a->k[1] : intern(c, VX_MUL, 0, 0, 0, a->k + 1, a->n - 1);
    return vx_mul(c, vx_const(c, 1.0 / a->k[0]->c), vx_inv(c, rest));
  }
  return intern(c, VX_INV, 0, 0, 0, &a, 1);
}

vx *vx_div(vx_ctx *c, vx *a, vx *b) {
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c / b->c);
  return vx_mul(c, a, vx_inv(c, b));
}

static vx *mk_ext(vx_ctx *c, vx_kind kind, vx *a, vx *b) {
  bool mx = kind == VX_MAX;
  double ident = mx ? -INFINITY : INFINITY;
  vlist l;
  vl_init(&l);
  bool have_k = false;
  double k = ident;
  vx *in[2] = {a, b};
  for (int i = 0; i < 2; i++) {
    vx *e = in[i];
    int n = e->kind == kind ? e->n : 1;
    for (int j = 0; j < n; j++) {
      vx *f = e->kind == kind ? e->k[j] : e;
      if (f->kind == VX_CONST) {
        if (isnan(f->c)) { vl_free(&l); return f; }
        k = mx ? fmax(k, f->c) : fmin(k, f->c);
        have_k = true;
      } else vl_push(&l, f);
    }
  }
  qsort(l.v, (size_t)l.n, sizeof *l.v, by_id);
  int w = 0;
  for (int i = 0; i < l.n; i++)
    if (w == 0 || l.v[w - 1] != l.v[i]) l.v[w++] = l.v[i];
  l.n = w;
  vx *r;
  if (l.n == 0) r = vx_const(c, k);
  else {
    vlist m;
    vl_init(&m);
    if (have_k && k != ident) vl_push(&m, vx_const(c, k));
    for (int i = 0; i < l.n; i++) vl_push(&m, l.v[i]);
    r = m.n == 1 ? m.v[0] : intern(c, kind, 0, 0, 0, m.v, m.n);
    vl_free(&m);
  }
  vl_free(&l);
  return r;
}

vx *vx_max(vx_ctx *c, vx *a, vx *b) { return mk_ext(c, VX_MAX, a, b); }
vx *vx_min(vx_ctx *c, vx *a, vx *b) { return mk_ext(c, VX_MIN, a, b); }
vx *vx_abs(vx_ctx *c, vx *a) {
  if (a->kind == VX_CONST) return vx_const(c, fabs(a->c));
  return vx_max(c, a, vx_neg(c, a));
}

vx *vx_fn1(vx_ctx *c, vx_fn f, vx *a) {
  if (a->kind == VX_CONST) {
    double x = a->c, r = 0;
    switch (f) {
#define X(E, s, fun) case VX_FN_##E: r = fun(x); break;
      VX_FNS(X)
#undef X
    case VX_FN_COUNT: break;
    }
    return vx_const(c, r);
  }
  return intern(c, VX_FN, 0, f, 0, &a, 1);
}

vx *vx_lt(vx_ctx *c, vx *a, vx *b) {
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c < b->c);
  if (a == b) return vx_const(c, 0);
  vx *k[2] = {a, b};
  return intern(c, VX_LT, 0, 0, 0, k, 2);
}
vx *vx_le(vx_ctx *c, vx *a, vx *b) {
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c <= b->c);
  if (a == b) return vx_const(c, 1);
  vx *k[2] = {a, b};
  return intern(c, VX_LE, 0, 0, 0, k, 2);
}
vx *vx_eq(vx_ctx *c, vx *a, vx *b) {
  if (vx_is_bv(a)) return vx_bv(c, BV_EQ, 0, a, b);
  if (a->kind == VX_CONST && b->kind == VX_CONST) return vx_const(c, a->c == b->c);
  if (a == b) return vx_const(c, 1);
  vx *k[2] = {a->id < b->id ? a : b, a->id < b->id ? b : a};
  return intern(c, VX_EQ, 0, 0, 0, k, 2);
}
vx *vx_not(vx_ctx *c, vx *a) {
  if (a->kind == VX_CONST) return vx_const(c, a->c == 0);
  if (a->kind == VX_NOT) return a->k[0];
  /* !(a < b) is b <= a over the reals */
  if (a->kind == VX_LT) return vx_le(c, a->k[1], a->k[0]);
  if (a->kind == VX_LE) return vx_lt(c, a->k[1], a->k[0]);
  return intern(c, VX_NOT, 0, 0, 0, &a, 1);
}
static vx *mk_logic(vx_ctx *c, vx_kind kind, vx *a, vx *b) {
  bool and = kind == VX_AND;
  if (a->kind == VX_CONST) return (a->c != 0) == and ? b : vx_const(c, !and);
  if (b->kind == VX_CONST) return (b->c != 0) == and ? a : vx_const(c, !and);
  if (a == b) return a;
  vx *k[2] = {a->id < b->id ? a : b, a->id < b->id ? b : a};
  return intern(c, kind, 0, 0, 0, k, 2);
}
vx *vx_and(vx_ctx *c, vx *a, vx *b) { return mk_logic(c, VX_AND, a, b); }
vx *vx_or(vx_ctx *c, vx *a, vx *b) { return mk_logic(c, VX_OR, a, b); }

static vx *bv_minmax(vx_ctx *c, bool mx, bool sg, vx *a, vx *b);

vx *vx_ite(vx_ctx *c, vx *cond, vx *a, vx *b) {
  if (cond->kind == VX_CONST) return cond->c != 0 ? a : b;
  if (a == b) return a;
  if (vx_is_bv(a) && cond->kind == VX_BV && cond->a >= BV_ULT && cond->a <= BV_SLE) {
    /* x < y ? y : x is max(x, y) in that order (ties give one value) */
    vx *x = cond->k[0], *y = cond->k[1];
    bool sg = cond->a == BV_SLT || cond->a == BV_SLE;
    if (a == y && b == x) return bv_minmax(c, true, sg, x, y);
    if (a == x && b == y) return bv_minmax(c, false, sg, x, y);
  }
  if (cond->kind == VX_NOT) return vx_ite(c, cond->k[0], b, a);
  if (cond->kind == VX_LT || cond->kind == VX_LE) {
    vx *x = cond->k[0], *y = cond->k[1];
    /* x < y ? y : x is max(x, y); x < y ? x : y is min (over the reals,
     * ties give the same value either way) */
    if (a == y && b == x) return vx_max(c, x, y);
    if (a == x && b == y) return vx_min(c, x, y);
  }
  vx *k[3] = {cond, a, b};
  return intern_w(c, VX_ITE, a->w, 0, 0, 0, k, 3);
}

/* ---- bitvectors ---- */

/* max/min of bitvectors, signed or not (a = 1 signed): flattened, without
 * duplicates, constants folded into one, operands in id order, so any
 * order of a reduction gives one node. */
static vx *bv_minmax(vx_ctx *c, bool mx, bool sg, vx *a, vx *b) {
  vx_kind kind = mx ? VX_MAX : VX_MIN;
  vlist l;
  vl_init(&l);
  vx *in[2] = {a, b}, *k = NULL;
  int w = a->w;
  for (int i = 0; i < 2; i++) {
    vx *e = in[i];
    bool flat = e->kind == kind && e->w == w && e->a == sg;
    for (int j = 0; j < (flat ? e->n : 1); j++) {
      vx *x = flat ? e->k[j] : e;
      if (x->kind == VX_BVC) {
        if (!k) k = x;
        else {
          bool less = sg ? vx_bvsigned(k) < vx_bvsigned(x) : (uint64_t)k->a < (uint64_t)x->a;
          if (less == mx) k = x;
        }
        continue;
      }
      bool dup = false;
      for (int t = 0; t < l.n; t++) dup |= l.v[t] == x;
      if (!dup) vl_push(&l, x);
    }
  }
  if (k) vl_push(&l, k);
  vx *r;
  if (l.n == 1) r = l.v[0];
  else {
    qsort(l.v, (size_t)l.n, sizeof *l.v, by_id);
    r = intern_w(c, kind, w, 0, sg, 0, l.v, l.n);
  }
  vl_free(&l);
  return r;
}

vx *vx_bvconst(vx_ctx *c, uint64_t v, int w) { return intern_w(c, VX_BVC, w, 0, (int64_t)(v & vx_bvmask(w)), 0, NULL, 0); }
vx *vx_bvsym(vx_ctx *c, int64_t input, int64_t index, int w) { return intern_w(c, VX_SYM, w, 0, input, index, NULL, 0); }
vx *vx_bvundef(vx_ctx *c, int64_t buf, int64_t off, int w) { return intern_w(c, VX_UNDEF, w, 0, buf, off, NULL, 0); }

int64_t vx_bvsigned(const vx *e) {
  uint64_t u = (uint64_t)e->a;
  if (e->w < 64 && (u >> (e->w - 1)) & 1) u |= ~vx_bvmask(e->w);
  return (int64_t)u;
}

static int64_t sx(uint64_t u, int w) {
  if (w < 64 && (u >> (w - 1)) & 1) u |= ~vx_bvmask(w);
  return (int64_t)u;
}

static vx *bv_minmax(vx_ctx *c, bool mx, bool sg, vx *a, vx *b);

/* Constant folding: the machine's results, masked to the width. */
static vx *bv_fold(vx_ctx *c, vx_bvop op, int w, const vx *a, const vx *b) {
  uint64_t x = (uint64_t)a->a, y = b ? (uint64_t)b->a : 0, r = 0;
  int aw = a->w;
  switch (op) {
  case BV_ADD: r = x + y; break;
  case BV_SUB: r = x - y; break;
  case BV_MUL: r = x * y; break;
  case BV_AND: r = x & y; break;
  case BV_OR: r = x | y; break;
  case BV_XOR: r = x ^ y; break;
  case BV_SHL: r = y >= (uint64_t)aw ? 0 : x << y; break;
  case BV_LSHR: r = y >= (uint64_t)aw ? 0 : x >> y; break;
  case BV_ASHR: r = (uint64_t)(sx(x, aw) >> (y >= (uint64_t)aw ? (uint64_t)aw - 1 : y)); break;
  case BV_UDIV: case BV_UREM: {
    uint64_t ux = x & vx_bvmask(aw), uy = y & vx_bvmask(aw);
    r = op == BV_UDIV ? (uy ? ux / uy : ~(uint64_t)0) : (uy ? ux % uy : ux);
    break;
  }
  case BV_SDIV: case BV_SREM: {
    int64_t sxv = sx(x, aw), syv = sx(y, aw);
    if (syv == 0) r = op == BV_SDIV ? (uint64_t)(sxv < 0 ? 1 : -1) : (uint64_t)sxv;
    else if (syv == -1) r = op == BV_SDIV ? 0 - (uint64_t)sxv : 0; /* MIN / -1 wraps */
    else r = (uint64_t)(op == BV_SDIV ? sxv / syv : sxv % syv);
    break;
  }
  case BV_ZEXT: case BV_TRUNC: r = x; break;
  case BV_SEXT: r = (uint64_t)sx(x, aw); break;
  case BV_EQ: return vx_const(c, x == y);
  case BV_ULT: return vx_const(c, x < y);
  case BV_ULE: return vx_const(c, x <= y);
  case BV_SLT: return vx_const(c, sx(x, aw) < sx(y, aw));
  case BV_SLE: return vx_const(c, sx(x, aw) <= sx(y, aw));
  case BV_SREAL: return vx_const(c, (double)sx(x, aw));
  case BV_UREAL: return vx_const(c, (double)x);
  case BV_FROMREAL: break; /* a real operand: vx_bv folds it */
  }
  return vx_bvconst(c, r, w);
}

vx *vx_bv(vx_ctx *c, vx_bvop op, int w, vx *a, vx *b) {
  if (op == BV_FROMREAL) {
    if (a->kind == VX_CONST && fabs(a->c) < 9.2e18) return vx_bvconst(c, (uint64_t)(int64_t)trunc(a->c), w);
    vx *k[1] = {a};
    return intern_w(c, VX_BV, w, 0, op, 0, k, 1);
  }
  bool pred = op >= BV_EQ && op <= BV_SLE;
  if (pred || op == BV_SREAL || op == BV_UREAL) w = 0;
  else if (op != BV_ZEXT && op != BV_SEXT && op != BV_TRUNC) w = a->w;
  if (a->kind == VX_BVC && (!b || b->kind == VX_BVC)) return bv_fold(c, op, w, a, b);
  switch (op) {
  case BV_ZEXT: case BV_SEXT: case BV_TRUNC:
    if (a->w == w) return a;
    if (op != BV_TRUNC) break;
    /* truncating an extension back to its source */
    if (a->kind == VX_BV && (a->a == BV_ZEXT || a->a == BV_SEXT) && a->k[0]->w == w) return a->k[0];
    /* the low bits of (x << k) >> k are x's when k leaves them */
    if (a->kind == VX_BV && (a->a == BV_ASHR || a->a == BV_LSHR) && a->k[1]->kind == VX_BVC) {
      vx *sh = a->k[0];
      int64_t k = a->k[1]->a;
      if (sh->kind == VX_BV && sh->a == BV_SHL && sh->k[1] == a->k[1] && k >= 0 && w <= a->w - k)
        return vx_bv(c, BV_TRUNC, w, sh->k[0], NULL);
    }
    /* max/min of sign (zero) extensions in signed (unsigned) order is the
     * extension of the max/min: truncated back, the narrow max/min */
    if ((a->kind == VX_MAX || a->kind == VX_MIN) && a->w > w) {
      vx *acc = NULL;
      for (int i = 0; i < a->n; i++) {
        vx *x = a->k[i], *nx = NULL;
        if (x->kind == VX_BV && x->a == (a->a ? BV_SEXT : BV_ZEXT) && x->k[0]->w == w) nx = x->k[0];
        else if (x->kind == VX_BVC) {
          vx *t = vx_bvconst(c, (uint64_t)x->a, w);
          uint64_t back = a->a ? (uint64_t)vx_bvsigned(t) & vx_bvmask(a->w) : (uint64_t)t->a;
          if (back == (uint64_t)x->a) nx = t;
        }
        if (!nx) { acc = NULL; break; }
        acc = acc ? bv_minmax(c, a->kind == VX_MAX, a->a != 0, acc, nx) : nx;
      }
      if (acc) return acc;
    }
    break;
  case BV_ADD: case BV_OR: case BV_XOR: case BV_SUB:
    if (b->kind == VX_BVC && b->a == 0) return a;
    if (op != BV_SUB && a->kind == VX_BVC && a->a == 0) return b;
    break;
  case BV_SHL: case BV_LSHR: case BV_ASHR:
    if (b->kind == VX_BVC && b->a == 0) return a;
    /* (x << k) >> k keeps the low w - k bits, extended */
    if (op != BV_SHL && b->kind == VX_BVC && b->a > 0 && b->a < w && a->kind == VX_BV && a->a == BV_SHL && a->k[1] == b)
      return vx_bv(c, op == BV_ASHR ? BV_SEXT : BV_ZEXT, w, vx_bv(c, BV_TRUNC, w - (int)b->a, a->k[0], NULL), NULL);
    break;
  case BV_AND:
    if (b->kind == VX_BVC && (uint64_t)b->a == vx_bvmask(w)) return a;
    if (a->kind == VX_BVC && (uint64_t)a->a == vx_bvmask(w)) return b;
    if ((b->kind == VX_BVC && b->a == 0) || (a->kind == VX_BVC && a->a == 0)) return vx_bvconst(c, 0, w);
    break;
  case BV_MUL:
    if (b->kind == VX_BVC && b->a == 1) return a;
    if (a->kind == VX_BVC && a->a == 1) return b;
    break;
  case BV_UDIV: case BV_SDIV: case BV_UREM: case BV_SREM:
    if (b->kind == VX_BVC && b->a == 1) return op == BV_UDIV || op == BV_SDIV ? a : vx_bvconst(c, 0, w);
    /* a divisor made safe by a select (y == 0 ? 1 : y): the division is
     * distributed over it, so the constant arm folds and the other is the
     * plain division a reference writes */
    if (b->kind == VX_ITE && (b->k[1]->kind == VX_BVC || b->k[2]->kind == VX_BVC))
      return vx_ite(c, b->k[0], vx_bv(c, op, w, a, b->k[1]), vx_bv(c, op, w, a, b->k[2]));
    break;
  case BV_EQ:
    if (a == b) return vx_const(c, 1);
    break;
  default: break;
  }
  /* commutative operands in id order */
  if (b && (op == BV_ADD || op == BV_MUL || op == BV_AND || op == BV_OR || op == BV_XOR || op == BV_EQ) && b->id < a->id) {
    vx *t = a; a = b; b = t;
  }
  vx *k[2] = {a, b};
  return intern_w(c, VX_BV, w, 0, op, 0, k, b ? 2 : 1);
}

static const char *kind_name(vx_kind k) {
  switch (k) {
  case VX_ADD: return "+";
  case VX_MUL: return "*";
  case VX_INV: return "inv";
  case VX_FLOOR: return "floor";
  case VX_MAX: return "max";
  case VX_MIN: return "min";
  case VX_ITE: return "ite";
  case VX_LT: return "<";
  case VX_LE: return "<=";
  case VX_EQ: return "==";
  case VX_NOT: return "not";
  case VX_AND: return "and";
  case VX_OR: return "or";
  default: return "?";
  }
}

static const char *bv_name(int64_t op) {
  static const char *const names[] = {"bvadd", "bvsub", "bvmul", "bvand", "bvor", "bvxor", "bvshl", "bvlshr",
    "bvashr", "bvudiv", "bvsdiv", "bvurem", "bvsrem", "zext", "sext", "trunc", "bveq", "bvult", "bvule", "bvslt", "bvsle", "sreal", "ureal", "fromreal"};
  return op >= 0 && op < (int64_t)(sizeof names / sizeof *names) ? names[op] : "bv?";
}

void vx_print(tr_buf *b, const vx *e, int depth) {
  switch (e->kind) {
  case VX_CONST: tr_buf_printf(b, "%.9g", e->c); return;
  case VX_SYM: tr_buf_printf(b, "in%lld[%lld]", (long long)e->a, (long long)e->b); return;
  case VX_BVC: tr_buf_printf(b, "%lld:%d", (long long)vx_bvsigned(e), e->w); return;
  case VX_UNDEF: tr_buf_printf(b, "undef(buf%lld+%lld)", (long long)e->a, (long long)e->b); return;
  default: break;
  }
  if (depth <= 0) { tr_buf_puts(b, "..."); return; }
  tr_buf_printf(b, "(%s", e->kind == VX_FN ? vx_fn_names[e->a] : e->kind == VX_BV ? bv_name(e->a) : kind_name(e->kind));
  int shown = e->n > 12 ? 12 : e->n;
  for (int i = 0; i < shown; i++) {
    tr_buf_putc(b, ' ');
    vx_print(b, e->k[i], depth - 1);
  }
  if (shown < e->n) tr_buf_printf(b, " ...%d more", e->n - shown);
  tr_buf_putc(b, ')');
}

typedef struct { const vx **seen; size_t n, cap; } visit;
static bool seen_add(visit *v, const vx *e) {
  for (size_t i = 0; i < v->n; i++) if (v->seen[i] == e) return false;
  if (v->n == v->cap) { v->cap = v->cap ? v->cap * 2 : 64; v->seen = tr_xrealloc(v->seen, v->cap * sizeof *v->seen); }
  v->seen[v->n++] = e;
  return true;
}
static void collect(visit *v, const vx *e, vx_kind kind, int f, vx **out, int max, int *n) {
  if (e->n == 0 && e->kind != kind) return;
  if (!seen_add(v, e)) return;
  if (e->kind == kind && (kind != VX_FN || f < 0 || e->a == f) && *n < max) out[(*n)++] = (vx *)e;
  for (int i = 0; i < e->n; i++) collect(v, e->k[i], kind, f, out, max, n);
}

int vx_collect(const vx *e, vx_kind kind, int f, vx **out, int max) {
  visit v = {0};
  int n = 0;
  collect(&v, e, kind, f, out, max, &n);
  tr_free(v.seen);
  return n;
}

vx *vx_sum(vx_ctx *c, vx **ops, int n) {
  if (n == 0) return vx_const(c, 0);
  if (n == 1) return ops[0];
  return mk_sum(c, ops, n);
}
