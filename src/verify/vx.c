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
  free(c->tab);
  free(c);
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
  free(c->tab);
  c->tab = nt;
  c->cap = ncap;
}

/* The interned node (kind, c, a, b, k[0..n)). */
static vx *intern(vx_ctx *c, vx_kind kind, double cv, int64_t a, int64_t b, vx **k, int n) {
  uint64_t cbits;
  if (cv == 0) cv = 0; /* -0 and +0 are one real */
  memcpy(&cbits, &cv, sizeof cbits);
  uint32_t h = mix(2166136261u, (uint64_t)kind);
  h = mix(h, cbits); h = mix(h, (uint64_t)a); h = mix(h, (uint64_t)b);
  for (int i = 0; i < n; i++) h = mix(h, k[i]->id);
  size_t j = h & (c->cap - 1);
  for (vx *e = c->tab[j]; e; e = e->next) {
    if (e->hash != h || e->kind != kind || e->n != n || e->a != a || e->b != b) continue;
    uint64_t eb;
    memcpy(&eb, &e->c, sizeof eb);
    if (eb != cbits) continue;
    int i = 0;
    while (i < n && e->k[i] == k[i]) i++;
    if (i == n) return e;
  }
  vx *e = tr_arena_alloc(c->arena, sizeof *e);
  e->kind = kind; e->n = n; e->c = cv; e->a = a; e->b = b; e->hash = h;
  e->id = c->next_id++;
  if (n) e->k = tr_arena_memdup(c->arena, k, (size_t)n * sizeof *k);
  e->next = c->tab[j];
  c->tab[j] = e;
  if (++c->count > c->cap) grow(c);
  return e;
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
    if (l->v != l->inl) free(l->v);
    l->v = nv; l->cap = nc;
  }
  l->v[l->n++] = e;
}
static void vl_free(vlist *l) { if (l->v != l->inl) free(l->v); }

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
  free(ts);
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

vx *vx_ite(vx_ctx *c, vx *cond, vx *a, vx *b) {
  if (cond->kind == VX_CONST) return cond->c != 0 ? a : b;
  if (a == b) return a;
  if (cond->kind == VX_NOT) return vx_ite(c, cond->k[0], b, a);
  if (cond->kind == VX_LT || cond->kind == VX_LE) {
    vx *x = cond->k[0], *y = cond->k[1];
    /* x < y ? y : x is max(x, y); x < y ? x : y is min (over the reals,
     * ties give the same value either way) */
    if (a == y && b == x) return vx_max(c, x, y);
    if (a == x && b == y) return vx_min(c, x, y);
  }
  vx *k[3] = {cond, a, b};
  return intern(c, VX_ITE, 0, 0, 0, k, 3);
}

static const char *kind_name(vx_kind k) {
  switch (k) {
  case VX_ADD: return "+";
  case VX_MUL: return "*";
  case VX_INV: return "inv";
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

void vx_print(tr_buf *b, const vx *e, int depth) {
  switch (e->kind) {
  case VX_CONST: tr_buf_printf(b, "%.9g", e->c); return;
  case VX_SYM: tr_buf_printf(b, "in%lld[%lld]", (long long)e->a, (long long)e->b); return;
  case VX_UNDEF: tr_buf_printf(b, "undef(buf%lld+%lld)", (long long)e->a, (long long)e->b); return;
  default: break;
  }
  if (depth <= 0) { tr_buf_puts(b, "..."); return; }
  tr_buf_printf(b, "(%s", e->kind == VX_FN ? vx_fn_names[e->a] : kind_name(e->kind));
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
  free(v.seen);
  return n;
}

vx *vx_sum(vx_ctx *c, vx **ops, int n) {
  if (n == 0) return vx_const(c, 0);
  if (n == 1) return ops[0];
  return mk_sum(c, ops, n);
}
