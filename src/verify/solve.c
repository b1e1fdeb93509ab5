/* solve.c - the translation of vx expressions to Z3 and the two queries of
 * solve.h. Constants become exact rationals (a double is m * 2^e); the
 * infinities left after normalisation stand for +-1e30. */
#include "solve.h"

#include <z3.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  Z3_context z;
  Z3_sort real;
  Z3_func_decl fns[VX_FN_COUNT];
  /* vx id -> ast */
  uint32_t *keys;
  Z3_ast *vals;
  size_t cap, n;
  vx **syms;
  int nsyms, capsyms;
  Z3_ast *axioms;   /* exp(t) > 0 for every exp application made */
  int naxioms, capaxioms;
  bool err;
} tz;

/* Z3's default handler exits the process. This one returns: the failed
 * call returns NULL (or Z3_L_UNDEF), which the next calls pass on (Z3
 * checks its arguments), so a query that hit an error, running out of
 * memory among them, ends in VS_UNKNOWN with Z3's message (solve). */
static void on_error(Z3_context c, Z3_error_code e) { (void)c; (void)e; }

/* decimal digits of m * 2^k (k >= 0), m < 2^63 */
static void big_dec(uint64_t m, int k, char *out, size_t n) {
  unsigned char dg[400];
  int nd = 0;
  while (m) { dg[nd++] = (unsigned char)(m % 10); m /= 10; }
  if (!nd) dg[nd++] = 0;
  for (int i = 0; i < k; i++) {
    int carry = 0;
    for (int j = 0; j < nd; j++) { int v = dg[j] * 2 + carry; dg[j] = (unsigned char)(v % 10); carry = v / 10; }
    if (carry && nd < 399) dg[nd++] = (unsigned char)carry;
  }
  size_t w = 0;
  for (int j = nd - 1; j >= 0 && w + 1 < n; j--) out[w++] = (char)('0' + dg[j]);
  out[w] = 0;
}

static Z3_ast mk_num(tz *T, double v) {
  if (isinf(v)) v = v > 0 ? 1e30 : -1e30;
  if (isnan(v)) v = 0;
  bool neg = v < 0;
  v = fabs(v);
  char s[900], a[420], b[420];
  if (v == 0) strcpy(s, "0");
  else {
    int e;
    double fr = frexp(v, &e);
    uint64_t m = (uint64_t)ldexp(fr, 53);
    e -= 53;
    while (m && !(m & 1)) { m >>= 1; e++; }
    if (e >= 0) { big_dec(m, e, a, sizeof a); snprintf(s, sizeof s, "%s", a); }
    else { big_dec(m, 0, a, sizeof a); big_dec(1, -e, b, sizeof b); snprintf(s, sizeof s, "%s/%s", a, b); }
  }
  Z3_ast r = Z3_mk_numeral(T->z, s, T->real);
  if (neg) r = Z3_mk_unary_minus(T->z, r);
  return r;
}

static Z3_ast *get(tz *T, uint32_t id) {
  if (!T->cap) return NULL;
  size_t i = (id * 2654435761u) & (T->cap - 1);
  while (T->keys[i]) {
    if (T->keys[i] == id + 1) return &T->vals[i];
    i = (i + 1) & (T->cap - 1);
  }
  return NULL;
}
static void put(tz *T, uint32_t id, Z3_ast a) {
  if (2 * (T->n + 1) > T->cap) {
    uint32_t *ok = T->keys;
    Z3_ast *ov = T->vals;
    size_t oc = T->cap;
    T->cap = T->cap ? T->cap * 2 : 1024;
    T->keys = tr_xcalloc(T->cap, sizeof *T->keys);
    T->vals = tr_xcalloc(T->cap, sizeof *T->vals);
    T->n = 0;
    for (size_t i = 0; i < oc; i++) if (ok[i]) put(T, ok[i] - 1, ov[i]);
    tr_free(ok); tr_free(ov);
  }
  size_t i = (id * 2654435761u) & (T->cap - 1);
  while (T->keys[i]) i = (i + 1) & (T->cap - 1);
  T->keys[i] = id + 1;
  T->vals[i] = a;
  T->n++;
}

static Z3_ast tr(tz *T, const vx *e);
static Z3_ast tr_bv(tz *T, const vx *e);

static Z3_ast nary(tz *T, const vx *e, Z3_ast (*f)(Z3_context, unsigned, const Z3_ast[])) {
  Z3_ast *a = tr_xmalloc((size_t)e->n * sizeof *a);
  for (int i = 0; i < e->n; i++) a[i] = tr(T, e->k[i]);
  Z3_ast r = f(T->z, (unsigned)e->n, a);
  tr_free(a);
  return r;
}

/* exp stays uninterpreted, with what every exp satisfies: it is positive,
 * exp(a + b) = exp(a) exp(b) and exp(-a) = 1 / exp(a) (applied while
 * translating, so the expressions keep the arguments as written: the
 * overflow check needs them). */
static Z3_ast mk_exp(tz *T, const vx *arg) {
  Z3_context z = T->z;
  if (arg->kind == VX_ADD) {
    Z3_ast *f = tr_xmalloc((size_t)arg->n * sizeof *f);
    for (int i = 0; i < arg->n; i++) f[i] = mk_exp(T, arg->k[i]);
    Z3_ast r = Z3_mk_mul(z, (unsigned)arg->n, f);
    tr_free(f);
    return r;
  }
  if (arg->kind == VX_MUL && arg->n == 2 && arg->k[0]->kind == VX_CONST && arg->k[0]->c == -1)
    return Z3_mk_div(z, mk_num(T, 1), mk_exp(T, arg->k[1]));
  if (arg->kind == VX_CONST && arg->c == 0) return mk_num(T, 1);
  Z3_ast a = tr(T, arg);
  Z3_ast r = Z3_mk_app(z, T->fns[VX_FN_EXP], 1, &a);
  if (T->naxioms == T->capaxioms) {
    T->capaxioms = T->capaxioms ? T->capaxioms * 2 : 32;
    T->axioms = tr_xrealloc(T->axioms, (size_t)T->capaxioms * sizeof *T->axioms);
  }
  T->axioms[T->naxioms++] = Z3_mk_gt(z, r, mk_num(T, 0));
  return r;
}

static Z3_ast tr_bv(tz *T, const vx *e) {
  Z3_context z = T->z;
  Z3_ast a = tr(T, e->k[0]), b = e->n > 1 ? tr(T, e->k[1]) : NULL;
  int aw = e->k[0]->w;
  switch ((vx_bvop)e->a) {
  case BV_ADD: return Z3_mk_bvadd(z, a, b);
  case BV_SUB: return Z3_mk_bvsub(z, a, b);
  case BV_MUL: return Z3_mk_bvmul(z, a, b);
  case BV_AND: return Z3_mk_bvand(z, a, b);
  case BV_OR: return Z3_mk_bvor(z, a, b);
  case BV_XOR: return Z3_mk_bvxor(z, a, b);
  case BV_SHL: return Z3_mk_bvshl(z, a, b);
  case BV_LSHR: return Z3_mk_bvlshr(z, a, b);
  case BV_ASHR: return Z3_mk_bvashr(z, a, b);
  case BV_UDIV: return Z3_mk_bvudiv(z, a, b);
  case BV_SDIV: return Z3_mk_bvsdiv(z, a, b);
  case BV_UREM: return Z3_mk_bvurem(z, a, b);
  case BV_SREM: return Z3_mk_bvsrem(z, a, b);
  case BV_ZEXT: return Z3_mk_zero_ext(z, (unsigned)(e->w - aw), a);
  case BV_SEXT: return Z3_mk_sign_ext(z, (unsigned)(e->w - aw), a);
  case BV_TRUNC: return Z3_mk_extract(z, (unsigned)e->w - 1, 0, a);
  case BV_EQ: return Z3_mk_eq(z, a, b);
  case BV_ULT: return Z3_mk_bvult(z, a, b);
  case BV_ULE: return Z3_mk_bvule(z, a, b);
  case BV_SLT: return Z3_mk_bvslt(z, a, b);
  case BV_SLE: return Z3_mk_bvsle(z, a, b);
  case BV_SREAL: return Z3_mk_int2real(z, Z3_mk_bv2int(z, a, true));
  case BV_UREAL: return Z3_mk_int2real(z, Z3_mk_bv2int(z, a, false));
  case BV_FROMREAL: {
    /* toward zero: floor for x >= 0, -floor(-x) below */
    Z3_ast zero = mk_num(T, 0);
    Z3_ast t = Z3_mk_ite(z, Z3_mk_ge(z, a, zero), Z3_mk_real2int(z, a),
                         Z3_mk_unary_minus(z, Z3_mk_real2int(z, Z3_mk_unary_minus(z, a))));
    return Z3_mk_int2bv(z, (unsigned)e->w, t);
  }
  }
  return a;
}

static Z3_ast tr_raw(tz *T, const vx *e) {
  Z3_context z = T->z;
  switch (e->kind) {
  case VX_CONST: return mk_num(T, e->c);
  case VX_BVC: return Z3_mk_unsigned_int64(z, (uint64_t)e->a, Z3_mk_bv_sort(z, (unsigned)e->w));
  case VX_BV: return tr_bv(T, e);
  case VX_SYM: case VX_UNDEF: {
    char nm[64];
    if (e->kind == VX_SYM) snprintf(nm, sizeof nm, "in%lld_%lld", (long long)e->a, (long long)e->b);
    else snprintf(nm, sizeof nm, "undef%lld_%lld", (long long)e->a, (long long)e->b);
    if (T->nsyms == T->capsyms) {
      T->capsyms = T->capsyms ? T->capsyms * 2 : 64;
      T->syms = tr_xrealloc(T->syms, (size_t)T->capsyms * sizeof *T->syms);
    }
    T->syms[T->nsyms++] = (vx *)e;
    return Z3_mk_const(z, Z3_mk_string_symbol(z, nm), e->w ? Z3_mk_bv_sort(z, (unsigned)e->w) : T->real);
  }
  case VX_ADD: return nary(T, e, Z3_mk_add);
  case VX_MUL: return nary(T, e, Z3_mk_mul);
  case VX_AND: return nary(T, e, Z3_mk_and);
  case VX_OR: return nary(T, e, Z3_mk_or);
  case VX_INV: return Z3_mk_div(z, mk_num(T, 1), tr(T, e->k[0]));
  case VX_FLOOR: return Z3_mk_int2real(z, Z3_mk_real2int(z, tr(T, e->k[0])));
  case VX_MAX: case VX_MIN: {
    Z3_ast acc = tr(T, e->k[0]);
    for (int i = 1; i < e->n; i++) {
      Z3_ast x = tr(T, e->k[i]);
      Z3_ast c;
      if (e->w && e->a) c = e->kind == VX_MAX ? Z3_mk_bvsgt(z, x, acc) : Z3_mk_bvslt(z, x, acc);
      else if (e->w) c = e->kind == VX_MAX ? Z3_mk_bvugt(z, x, acc) : Z3_mk_bvult(z, x, acc);
      else c = e->kind == VX_MAX ? Z3_mk_gt(z, x, acc) : Z3_mk_lt(z, x, acc);
      acc = Z3_mk_ite(z, c, x, acc);
    }
    return acc;
  }
  case VX_FN:
    if (e->a == VX_FN_EXP) return mk_exp(T, e->k[0]);
    {
      Z3_ast a = tr(T, e->k[0]);
      return Z3_mk_app(z, T->fns[e->a], 1, &a);
    }
  case VX_ITE: {
    Z3_ast c = tr(T, e->k[0]);
    return Z3_mk_ite(z, c, tr(T, e->k[1]), tr(T, e->k[2]));
  }
  case VX_LT: return Z3_mk_lt(z, tr(T, e->k[0]), tr(T, e->k[1]));
  case VX_LE: return Z3_mk_le(z, tr(T, e->k[0]), tr(T, e->k[1]));
  case VX_EQ: return Z3_mk_eq(z, tr(T, e->k[0]), tr(T, e->k[1]));
  case VX_NOT: return Z3_mk_not(z, tr(T, e->k[0]));
  }
  return mk_num(T, 0);
}

/* Booleans in value position (a constant 0/1 used as a condition) */
static Z3_ast as_bool(tz *T, const vx *e) {
  if (e->kind == VX_CONST) return e->c != 0 ? Z3_mk_true(T->z) : Z3_mk_false(T->z);
  return tr(T, e);
}

static Z3_ast tr(tz *T, const vx *e) {
  Z3_ast *hit = get(T, e->id);
  if (hit) return *hit;
  Z3_ast a;
  if (e->kind == VX_ITE) {
    a = Z3_mk_ite(T->z, as_bool(T, e->k[0]), tr(T, e->k[1]), tr(T, e->k[2]));
  } else if (e->kind == VX_AND || e->kind == VX_OR) {
    Z3_ast xs[2] = {as_bool(T, e->k[0]), as_bool(T, e->k[1])};
    a = e->kind == VX_AND ? Z3_mk_and(T->z, 2, xs) : Z3_mk_or(T->z, 2, xs);
  } else if (e->kind == VX_NOT) {
    a = Z3_mk_not(T->z, as_bool(T, e->k[0]));
  } else a = tr_raw(T, e);
  put(T, e->id, a);
  return a;
}

static bool tz_init(tz *T, unsigned timeout_ms) {
  memset(T, 0, sizeof *T);
  Z3_config cfg = Z3_mk_config();
  if (!cfg) return false;
  char tbuf[32];
  snprintf(tbuf, sizeof tbuf, "%u", timeout_ms ? timeout_ms : 10000);
  Z3_set_param_value(cfg, "timeout", tbuf);
  Z3_set_param_value(cfg, "model", "true");
  T->z = Z3_mk_context(cfg);
  Z3_del_config(cfg);
  if (!T->z) return false;
  Z3_set_error_handler(T->z, on_error);
  T->real = Z3_mk_real_sort(T->z);
  for (int f = 0; f < VX_FN_COUNT; f++)
    T->fns[f] = Z3_mk_func_decl(T->z, Z3_mk_string_symbol(T->z, vx_fn_names[f]), 1, &T->real, T->real);
  return true;
}

static void tz_free(tz *T) {
  Z3_del_context(T->z);
  tr_free(T->keys); tr_free(T->vals); tr_free(T->syms); tr_free(T->axioms);
}

static vs_answer solve(tz *T, Z3_ast goal, const vs_query *q, vs_model *m, char *why, size_t nwhy) {
  Z3_context z = T->z;
  if (!goal) {
    if (why) snprintf(why, nwhy, "z3: %s", Z3_get_error_msg(z, Z3_get_error_code(z)));
    return VS_UNKNOWN;
  }
  Z3_solver s = Z3_mk_solver(z);
  if (!s) {
    if (why) snprintf(why, nwhy, "z3: %s", Z3_get_error_msg(z, Z3_get_error_code(z)));
    return VS_UNKNOWN;
  }
  Z3_solver_inc_ref(z, s);
  Z3_solver_assert(z, s, goal);
  for (int i = 0; i < T->naxioms; i++) Z3_solver_assert(z, s, T->axioms[i]);
  /* the box on every symbol the goal mentions */
  Z3_ast lo = mk_num(T, -q->box), hi = mk_num(T, q->box);
  for (int i = 0; i < T->nsyms; i++) {
    if (T->syms[i]->w) continue; /* bitvectors: their whole range */
    Z3_ast x = *get(T, T->syms[i]->id);
    Z3_solver_assert(z, s, Z3_mk_le(z, lo, x));
    Z3_solver_assert(z, s, Z3_mk_le(z, x, hi));
  }
  Z3_lbool r = Z3_solver_check(z, s);
  vs_answer ans = r == Z3_L_TRUE ? VS_SAT : r == Z3_L_FALSE ? VS_UNSAT : VS_UNKNOWN;
  if (ans == VS_UNKNOWN && why) snprintf(why, nwhy, "z3: %s", Z3_solver_get_reason_unknown(z, s));
  if (ans == VS_SAT && m) {
    Z3_model mod = Z3_solver_get_model(z, s);
    Z3_model_inc_ref(z, mod);
    m->n = T->nsyms;
    m->syms = tr_xmalloc(((size_t)T->nsyms + 1) * sizeof *m->syms);
    m->vals = tr_xmalloc(((size_t)T->nsyms + 1) * sizeof *m->vals);
    m->bits = tr_xcalloc((size_t)T->nsyms + 1, sizeof *m->bits);
    for (int i = 0; i < T->nsyms; i++) {
      Z3_ast out = NULL;
      m->syms[i] = T->syms[i];
      m->vals[i] = 0;
      if (Z3_model_eval(z, mod, *get(T, T->syms[i]->id), true, &out) && out && T->syms[i]->w) {
        uint64_t u = 0;
        if (Z3_get_numeral_uint64(z, out, &u)) { m->bits[i] = u; m->vals[i] = (double)u; }
      } else if (out) {
        Z3_string str = Z3_get_numeral_decimal_string(z, out, 17);
        if (str) m->vals[i] = strtod(str, NULL);
      }
    }
    Z3_model_dec_ref(z, mod);
  }
  Z3_solver_dec_ref(z, s);
  return ans;
}

/* The queries run in a heap frame of their own: out of memory in the
 * translation's tables or the model disposes of the Z3 context (Z3's
 * memory is no frame's) and goes on unwinding the caller's frame. */
typedef struct {
  tz *T;
  vx *pc, *kernel, *ref;
  vx **ka, **ra;
  int nk, nr;
  double limit;
  const vs_query *q;
  vs_model *m;
  char *why;
  size_t nwhy;
  vs_answer a;
} query;

static void diff_fn(void *p) {
  query *Q = p;
  tz *T = Q->T;
  Z3_context z = T->z;
  Z3_ast k = tr(T, Q->kernel), r = tr(T, Q->ref), pc = as_bool(T, Q->pc);
  Z3_ast differ;
  if (Q->kernel->w || Q->ref->w) differ = Z3_mk_not(z, Z3_mk_eq(z, k, r));
  else if (Q->q->margin > 0) {
    Z3_ast d = Z3_mk_sub(z, 2, (Z3_ast[]){k, r});
    Z3_ast mg = mk_num(T, Q->q->margin);
    differ = Z3_mk_or(z, 2, (Z3_ast[]){Z3_mk_ge(z, d, mg), Z3_mk_le(z, d, Z3_mk_unary_minus(z, mg))});
  } else differ = Z3_mk_not(z, Z3_mk_eq(z, k, r));
  Z3_ast goal = Z3_mk_and(z, 2, (Z3_ast[]){pc, differ});
  Q->a = solve(T, goal, Q->q, Q->m, Q->why, Q->nwhy);
}

static void above_fn(void *p) {
  query *Q = p;
  tz *T = Q->T;
  Z3_context z = T->z;
  Z3_ast lim = mk_num(T, Q->limit);
  Z3_ast *any = tr_xmalloc(((size_t)Q->nk + 1) * sizeof *any);
  for (int i = 0; i < Q->nk; i++) any[i] = Z3_mk_gt(z, tr(T, Q->ka[i]), lim);
  Z3_ast *all = tr_xmalloc(((size_t)Q->nr + 3) * sizeof *all);
  for (int j = 0; j < Q->nr; j++) all[j] = Z3_mk_le(z, tr(T, Q->ra[j]), lim);
  all[Q->nr] = Z3_mk_or(z, (unsigned)Q->nk, any);
  all[Q->nr + 1] = as_bool(T, Q->pc);
  Q->a = solve(T, Z3_mk_and(z, (unsigned)Q->nr + 2, all), Q->q, Q->m, Q->why, Q->nwhy);
  tr_free(any);
  tr_free(all);
}

static vs_answer run_query(void (*fn)(void *), query *Q) {
  tz T;
  if (!tz_init(&T, Q->q->timeout_ms)) {
    if (T.z) Z3_del_context(T.z);
    if (Q->why) snprintf(Q->why, Q->nwhy, "z3: cannot make a context (out of memory)");
    return VS_UNKNOWN;
  }
  Q->T = &T;
  size_t bytes = 0;
  if (!tr_heap_run(fn, Q, &bytes)) {
    Z3_del_context(T.z); /* the tables went with the frame */
    tr_heap_raise(bytes);
  }
  tz_free(&T);
  return Q->a;
}

vs_answer vs_find_diff(vx *pc, vx *kernel, vx *ref, const vs_query *q, vs_model *m, char *why, size_t nwhy) {
  query Q = {NULL, pc, kernel, ref, NULL, NULL, 0, 0, 0, q, m, why, nwhy, VS_UNKNOWN};
  return run_query(diff_fn, &Q);
}

vs_answer vs_find_above(vx *pc, vx **ka, int nk, vx **ra, int nr, double limit, const vs_query *q, vs_model *m,
                        char *why, size_t nwhy) {
  query Q = {NULL, pc, NULL, NULL, ka, ra, nk, nr, limit, q, m, why, nwhy, VS_UNKNOWN};
  return run_query(above_fn, &Q);
}

void vs_model_free(vs_model *m) {
  tr_free(m->syms);
  tr_free(m->vals);
  tr_free(m->bits);
  memset(m, 0, sizeof *m);
}
