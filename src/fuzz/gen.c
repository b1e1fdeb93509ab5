/* gen.c - the program generator's driver (gen.h): options, random source,
 * element type and shape choosers, leaf values, the pool of values an op
 * may take as operands, and tr_gen_module, which grows the entry
 * computation op by op (the op is chosen by the ops.def weight column,
 * its operands and attributes by its maker in gen_ops.c), picks the
 * outputs and sometimes adds the same subgraph fed by constants. */
#include "genint.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void tr_gen_opts_init(tr_gen_opts *o) {
  memset(o, 0, sizeof *o);
  o->size = 20;
}

bool tr_gen_can_make(tr_op op) { return (unsigned)op < TR_OP_COUNT && gen_makers[op] != NULL; }

/* ---- random choices ---- */
uint64_t gen_rand(gen_ctx *g) {
  uint64_t z = (g->rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

int64_t gen_below(gen_ctx *g, int64_t n) { return n <= 0 ? 0 : (int64_t)(gen_rand(g) % (uint64_t)n); }
bool gen_chance(gen_ctx *g, int percent) { return gen_below(g, 100) < percent; }

void gen_perm(gen_ctx *g, int64_t *p, int n) {
  for (int i = 0; i < n; i++) p[i] = i;
  for (int i = n - 1; i > 0; i--) {
    int j = (int)gen_below(g, i + 1);
    int64_t t = p[i];
    p[i] = p[j];
    p[j] = t;
  }
}

/* ---- element types ---- */
static bool is_cplx(tr_dtype dt) { return tr_dtypes[dt].kind == TR_DK_COMPLEX; }

bool gen_in_class(tr_dtype dt, gen_class k) {
  tr_dkind kind = tr_dtypes[dt].kind;
  switch (k) {
  case GC_ANY: return tr_dtype_is_array(dt);
  case GC_FLOAT: return kind == TR_DK_FLOAT;
  case GC_INT: return kind == TR_DK_SINT || kind == TR_DK_UINT;
  case GC_INTP: return kind == TR_DK_SINT || kind == TR_DK_UINT || kind == TR_DK_PRED;
  case GC_NUM: return kind == TR_DK_SINT || kind == TR_DK_UINT || kind == TR_DK_FLOAT || kind == TR_DK_COMPLEX;
  }
  return false;
}

gen_class gen_class_of(const char *types) {
  if (strcmp(types, "f") == 0) return GC_FLOAT;
  if (strcmp(types, "i") == 0) return GC_INT;
  if (strcmp(types, "ip") == 0) return GC_INTP;
  if (strcmp(types, "n") == 0) return GC_NUM;
  return GC_ANY;
}

/* Relative frequency of each element type: f32 dominates (the values
 * checks judge best), every other evaluated type stays common enough to
 * meet every op. */
int gen_dtype_weight(tr_dtype dt) {
  switch (dt) {
  case TR_DT_F32: return 12;
  case TR_DT_S32: case TR_DT_F64: case TR_DT_PRED: return 4;
  case TR_DT_F16: case TR_DT_BF16: case TR_DT_S64: case TR_DT_U32: case TR_DT_S8: case TR_DT_U8:
    return 2;
  default: return 1;
  }
}

tr_dtype gen_dtype(gen_ctx *g, gen_class k, bool cplx) {
  int total = 0;
  for (int t = 0; t < TR_DT_COUNT; t++)
    if (g->dt_ok[t] && gen_in_class((tr_dtype)t, k) && (cplx || !is_cplx((tr_dtype)t)))
      total += gen_dtype_weight((tr_dtype)t);
  if (!total) return TR_DT_COUNT;
  int64_t r = gen_below(g, total);
  for (int t = 0; t < TR_DT_COUNT; t++)
    if (g->dt_ok[t] && gen_in_class((tr_dtype)t, k) && (cplx || !is_cplx((tr_dtype)t)) &&
        (r -= gen_dtype_weight((tr_dtype)t)) < 0)
      return (tr_dtype)t;
  return TR_DT_COUNT;
}

/* ---- shapes ---- */
int64_t gen_dim(gen_ctx *g) {
  static const int64_t small[] = {2, 3, 4, 5, 6};
  static const int64_t primes[] = {7, 11, 13, 17, 19, 23, 29, 31, 37};
  static const int64_t lanes[] = {7, 8, 9, 15, 16, 17, 31, 32, 33, 63, 64, 65, 127, 128, 129};
  int r = (int)gen_below(g, 100);
  if (r < 1) return 0;
  if (r < 22) return 1;
  if (r < 55) return small[gen_below(g, TR_NELEMS(small))];
  if (r < 75) return primes[gen_below(g, TR_NELEMS(primes))];
  return lanes[gen_below(g, TR_NELEMS(lanes))];
}

int gen_rank(gen_ctx *g) {
  int r = (int)gen_below(g, 100);
  if (r < 10) return 0;
  if (r < 35) return 1;
  if (r < 65) return 2;
  if (r < 85) return 3;
  if (r < 93) return 4;
  return 5 + (int)gen_below(g, 3);
}

void gen_dims(gen_ctx *g, int n, int64_t *dims, int64_t cap) {
  for (int i = 0; i < n; i++) dims[i] = gen_dim(g);
  /* Shrink the largest dims until the count fits: shapes stay varied but
   * tests stay fast. */
  for (;;) {
    int64_t count = 1;
    int big = -1;
    for (int i = 0; i < n; i++) {
      count *= dims[i] ? dims[i] : 1;
      if (big < 0 || dims[i] > dims[big]) big = i;
    }
    if (count <= cap || big < 0) break;
    dims[big] = dims[big] > 8 ? 1 + gen_below(g, 5) : 1;
  }
}

tr_shape *gen_shape(gen_ctx *g, tr_dtype dt, int rank, const int64_t *dims) {
  return tr_shape_array(g->m->arena, dt, rank, dims);
}

/* ---- values ---- */
static double pow2(int e) { return ldexp(1.0, e); }

static double float_value(gen_ctx *g, tr_dtype dt) {
  double max = tr_float_max(dt);
  int r = (int)gen_below(g, 1000);
  if (r < 30) {
    /* specials and edges */
    double mn = pow2(1 - tr_dtypes[dt].bias);               /* smallest normal */
    double den = tr_dtypes[dt].mbits ? mn / pow2(tr_dtypes[dt].mbits) : mn; /* smallest denormal */
    double sp[] = {0.0, -0.0, 1.0, -1.0, 0.5, 1.5, 2.5, -2.5, max, -max, mn, den, -den, 3 * den,
                   INFINITY, -INFINITY, NAN};
    int n = TR_NELEMS(sp);
    if (!tr_float_has_inf(dt)) n -= 3; /* overflow gives NaN or max there */
    return sp[gen_below(g, n)];
  }
  if (r < 50) {
    /* the edges of a narrower float type (an f16 subnormal, a bf16
     * rounding tie, an f8 overflow): ordinary values here, edges once a
     * conversion, folded or compiled, narrows them */
    tr_dtype nt = (tr_dtype)gen_below(g, TR_DT_COUNT);
    if (tr_dtype_is_float(nt) && tr_dtypes[nt].mbits < tr_dtypes[dt].mbits &&
        tr_dtypes[nt].ebits <= tr_dtypes[dt].ebits)
      return gen_float_edge(g, nt);
  }
  if (r < 100) {
    /* far ranges: |x| of 5 to 20 (transcendentals), large and tiny */
    double s = gen_chance(g, 50) ? -1 : 1;
    if (r < 60) return s * (5 + (double)gen_below(g, 15001) / 1000.0);
    int e = (int)gen_below(g, 60) - 30;
    return s * pow2(e) * (1 + (double)gen_below(g, 1000) / 1000.0);
  }
  /* the common case: a few decimals in [-4, 4] */
  return (double)(gen_below(g, 8001) - 4000) / 1000.0;
}

static void put_bits(void *out, uint64_t bits, int size) { memcpy(out, &bits, (size_t)size); }

void gen_value(gen_ctx *g, tr_dtype dt, void *out) {
  int size = tr_dtype_size(dt);
  switch (tr_dtypes[dt].kind) {
  case TR_DK_PRED: put_bits(out, (uint64_t)gen_below(g, 2), 1); return;
  case TR_DK_FLOAT: put_bits(out, tr_float_from_double(dt, float_value(g, dt)), size); return;
  case TR_DK_COMPLEX: {
    tr_dtype part = dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64;
    int ps = size / 2;
    put_bits(out, tr_float_from_double(part, float_value(g, part)), ps);
    put_bits((char *)out + ps, tr_float_from_double(part, float_value(g, part)), ps);
    return;
  }
  case TR_DK_SINT: case TR_DK_UINT: {
    int64_t lo = tr_int_min(dt);
    uint64_t hi = tr_int_max(dt);
    bool sig = tr_dtypes[dt].kind == TR_DK_SINT;
    int r = (int)gen_below(g, 100);
    uint64_t v;
    if (r < 10) {
      /* the type's edges: min, max, their neighbours, the top bit, -1 */
      switch (gen_below(g, 6)) {
      case 0: v = (uint64_t)lo; break;
      case 1: v = hi; break;
      case 2: v = (uint64_t)lo + 1; break;
      case 3: v = hi - 1; break;
      case 4: v = sig ? (uint64_t)-1 : hi / 2 + 1; break;
      default: v = 0; break;
      }
    } else if (r < 20) {
      /* anywhere in the whole range */
      uint64_t span = hi - (uint64_t)lo;
      v = (uint64_t)lo + (span == UINT64_MAX ? gen_rand(g) : gen_rand(g) % (span + 1));
    } else {
      int64_t s = sig ? gen_below(g, 41) - 20 : gen_below(g, 41);
      if (sig && s < lo) s = lo;
      if ((uint64_t)(s < 0 ? 0 : s) > hi) s = (int64_t)hi;
      v = (uint64_t)s;
    }
    /* sub-byte and narrow types: sign- or zero-extended into their slot */
    if (tr_dtypes[dt].bits < 64) {
      int b = tr_dtypes[dt].bits;
      v &= (1ull << b) - 1;
      if (sig && (v >> (b - 1)) & 1) v |= ~((1ull << b) - 1);
    }
    put_bits(out, v, size);
    return;
  }
  default: return;
  }
}

tr_instr *gen_constant(gen_ctx *g, const tr_shape *s) {
  int64_t n = tr_shape_count(s);
  size_t es = (size_t)tr_dtype_size(s->dtype);
  unsigned char *data = tr_xcalloc((size_t)(n > 0 ? n : 1), es);
  /* Constants are often splats or short repeats (what jax writes) and
   * otherwise element by element. */
  int mode = (int)gen_below(g, 20);
  for (int64_t i = 0; i < n; i++) {
    if (mode == 0 && i > 0) memcpy(data + i * es, data, es);
    else gen_value(g, s->dtype, data + i * es);
  }
  tr_instr *in = tr_build_constant(g->c, s, data);
  tr_free(data);
  return in;
}

tr_instr *gen_scalar_const(gen_ctx *g, tr_dtype dt, double v) {
  unsigned char data[16] = {0};
  int size = tr_dtype_size(dt);
  switch (tr_dtypes[dt].kind) {
  case TR_DK_FLOAT: put_bits(data, tr_float_from_double(dt, v), size); break;
  case TR_DK_COMPLEX:
    put_bits(data, tr_float_from_double(dt == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64, v), size / 2);
    break;
  case TR_DK_PRED: data[0] = v != 0; break;
  default: {
    int64_t lo = tr_int_min(dt);
    uint64_t hi = tr_int_max(dt);
    uint64_t x;
    if (v <= (double)lo) x = (uint64_t)lo;
    else if (v >= (double)hi) x = hi;
    else x = (uint64_t)(int64_t)v;
    put_bits(data, x, size);
  }
  }
  return tr_build_constant(g->c, tr_shape_array(g->m->arena, dt, 0, NULL), data);
}

tr_instr *gen_leaf(gen_ctx *g, const tr_shape *s) {
  tr_instr *in;
  bool param = !g->consts_only && (g->depth > 0 ? false : gen_chance(g, 75));
  if (param) {
    tr_shape *p = tr_shape_clone(g->m->arena, s);
    if (p->rank > 1 && !(g->o->flags & TR_GEN_NO_LAYOUTS) && gen_chance(g, 15)) {
      int64_t m2m[8];
      gen_perm(g, m2m, p->rank);
      tr_shape_set_layout(g->m->arena, p, m2m);
    }
    in = tr_build_param(g->c, p);
  } else {
    in = gen_constant(g, s);
  }
  g->nleaves++;
  gen_push(g, in);
  return in;
}

/* ---- the pool ---- */
void gen_push(gen_ctx *g, tr_instr *in) {
  if (g->npool == g->cappool) {
    g->cappool = g->cappool ? 2 * g->cappool : 32;
    g->pool = tr_xrealloc(g->pool, sizeof(tr_instr *) * (size_t)g->cappool);
  }
  g->pool[g->npool++] = in;
}

static bool usable(const tr_instr *in) { return tr_shape_is_array(in->shape) && in->shape->dtype != TR_DT_TOKEN; }

static tr_instr *new_random_leaf(gen_ctx *g) {
  int64_t dims[8];
  int rank = gen_rank(g);
  gen_dims(g, rank, dims, 512);
  tr_dtype dt = gen_dtype(g, GC_ANY, gen_chance(g, 30));
  if (dt == TR_DT_COUNT) dt = TR_DT_F32;
  return gen_leaf(g, gen_shape(g, dt, rank, dims));
}

tr_instr *gen_pick(gen_ctx *g) {
  tr_instr *p = g->prefer;
  g->prefer = NULL;
  if (p && usable(p)) return p;
  bool fresh = g->npool == 0 || (g->nleaves < 6 && gen_chance(g, 20));
  if (!fresh && gen_chance(g, 40)) {
    /* a value nobody uses yet: fewer dead ends, more of the graph reaches
     * an output */
    int start = (int)gen_below(g, g->npool);
    for (int k = 0; k < g->npool; k++) {
      tr_instr *in = g->pool[(start + k) % g->npool];
      if (in->nusers == 0 && usable(in) && in->op != TR_OP_PARAMETER && in->op != TR_OP_CONSTANT)
        return in;
    }
  }
  if (!fresh) {
    for (int tries = 0; tries < 8; tries++) {
      int n = g->npool;
      /* recent values half the time: long producer/consumer chains */
      int i = gen_chance(g, 50) ? n - 1 - (int)gen_below(g, n < 4 ? n : 4) : (int)gen_below(g, n);
      if (usable(g->pool[i])) return g->pool[i];
    }
  }
  return new_random_leaf(g);
}

tr_instr *gen_to_dtype(gen_ctx *g, tr_instr *x, tr_dtype dt) {
  if (x->shape->dtype == dt) return x;
  tr_instr *y;
  if (is_cplx(x->shape->dtype) && !is_cplx(dt)) {
    /* complex to real goes through real (or abs) */
    y = tr_build_end(tr_build_begin(g->c, gen_chance(g, 50) ? TR_OP_REAL : TR_OP_IMAG, &x, 1),
                     gen_shape(g, x->shape->dtype == TR_DT_C64 ? TR_DT_F32 : TR_DT_F64,
                               x->shape->rank, x->shape->dims),
                     &g->why);
    if (!y) return NULL;
    gen_push(g, y);
    x = y;
    if (x->shape->dtype == dt) return x;
  }
  y = tr_build_convert(g->c, x, dt, &g->why);
  if (y) gen_push(g, y);
  return y;
}

tr_instr *gen_to_class(gen_ctx *g, tr_instr *x, gen_class k, bool cplx) {
  tr_dtype dt = x->shape->dtype;
  if (gen_in_class(dt, k) && (cplx || !is_cplx(dt)) && g->dt_ok[dt]) return x;
  tr_dtype to = gen_dtype(g, k, cplx);
  if (to == TR_DT_COUNT) return NULL;
  return gen_to_dtype(g, x, to);
}

tr_instr *gen_partner(gen_ctx *g, tr_instr *x, tr_dtype dt) {
  const tr_shape *s = x->shape;
  int r = (int)gen_below(g, 100);
  if (r < 60) {
    /* a value of the same dims from the pool: value reuse */
    int start = (int)gen_below(g, g->npool ? g->npool : 1);
    for (int k = 0; k < g->npool; k++) {
      tr_instr *y = g->pool[(start + k) % g->npool];
      /* never x itself: x - x, x / x, compare(x, x) say nothing */
      if (usable(y) && tr_shape_same_dims(y->shape, s) && y != x) {
        if (y->shape->dtype == dt) return y;
        if (!is_cplx(y->shape->dtype) || is_cplx(dt)) return gen_to_dtype(g, y, dt);
      }
    }
  }
  if (r < 75 && s->rank > 0) {
    /* a broadcast of a scalar or of a lower-rank value */
    int keep = (int)gen_below(g, s->rank + 1);
    int64_t map[8], dims[8];
    int64_t all[8];
    gen_perm(g, all, s->rank);
    /* keep the first `keep` dims of a random subset, in increasing order */
    int n = 0;
    for (int d = 0; d < s->rank; d++)
      for (int j = 0; j < keep; j++)
        if (all[j] == d) map[n++] = d;
    for (int i = 0; i < n; i++) dims[i] = s->dims[map[i]];
    tr_instr *small = gen_leaf(g, gen_shape(g, dt, n, dims));
    tr_instr *b = tr_build_broadcast(g->c, small, s->dims, s->rank, map, &g->why);
    if (b) {
      gen_push(g, b);
      return b;
    }
  }
  return gen_leaf(g, gen_shape(g, dt, s->rank, s->dims));
}

tr_instr *gen_pred_like(gen_ctx *g, tr_instr *x) {
  /* an existing pred of the same dims, else a compare of x with a partner */
  for (int k = g->npool - 1; k >= 0; k--) {
    tr_instr *y = g->pool[k];
    if (usable(y) && y->shape->dtype == TR_DT_PRED && tr_shape_same_dims(y->shape, x->shape) &&
        gen_chance(g, 50))
      return y;
  }
  if (is_cplx(x->shape->dtype) || x->shape->dtype == TR_DT_PRED) {
    x = gen_to_dtype(g, x, TR_DT_F32);
    if (!x) return NULL;
  }
  static const char *dirs[] = {"LT", "GT", "LE", "GE"};
  tr_instr *y = gen_partner(g, x, x->shape->dtype);
  if (!y) return NULL;
  tr_instr *p = tr_build_compare(g->c, x, y, dirs[gen_below(g, 4)], &g->why);
  if (p) gen_push(g, p);
  return p;
}

/* ---- computations ---- */
const char *gen_comp_name(gen_ctx *g, const char *base) {
  char buf[64];
  snprintf(buf, sizeof buf, "%s.%d", base, g->m->next_id);
  return tr_arena_strdup(g->m->arena, buf);
}

tr_op gen_reducer_op(gen_ctx *g, tr_dtype dt) {
  if (dt == TR_DT_PRED) return gen_chance(g, 50) ? TR_OP_AND : TR_OP_OR;
  if (is_cplx(dt)) return TR_OP_ADD;
  static const tr_op ops[] = {TR_OP_ADD, TR_OP_ADD, TR_OP_ADD, TR_OP_MAXIMUM, TR_OP_MINIMUM,
                              TR_OP_MULTIPLY};
  return ops[gen_below(g, TR_NELEMS(ops))];
}

tr_comp *gen_binary_comp(gen_ctx *g, tr_op op, tr_dtype dt) {
  tr_comp *k = tr_build_comp(g->m, gen_comp_name(g, tr_ops[op].name), false);
  tr_shape *s = tr_shape_array(g->m->arena, dt, 0, NULL);
  tr_instr *a = tr_build_param(k, s), *b = tr_build_param(k, s);
  tr_instr *r = tr_build_binary(k, op, a, b, NULL);
  tr_build_root(k, r ? r : b);
  return k;
}

void gen_enter(gen_ctx *g, tr_comp *k, gen_saved *s) {
  s->c = g->c;
  s->pool = g->pool;
  s->npool = g->npool;
  s->cappool = g->cappool;
  s->nleaves = g->nleaves;
  s->prefer = g->prefer;
  g->prefer = NULL; /* a value of the caller's computation */
  g->c = k;
  g->pool = NULL;
  g->npool = g->cappool = g->nleaves = 0;
  g->depth++;
  for (int i = 0; i < k->nparams; i++) gen_push(g, k->params[i]);
}

void gen_leave(gen_ctx *g, gen_saved *s) {
  tr_free(g->pool);
  g->c = s->c;
  g->pool = s->pool;
  g->npool = s->npool;
  g->cappool = s->cappool;
  g->nleaves = s->nleaves;
  g->prefer = s->prefer;
  g->depth--;
}

/* Elementwise ops that keep a float, integer or pred value's type. */
tr_instr *gen_chain(gen_ctx *g, tr_instr *x, int n) {
  static const tr_op fl[] = {TR_OP_ADD, TR_OP_MULTIPLY, TR_OP_SUBTRACT, TR_OP_TANH, TR_OP_NEGATE,
                             TR_OP_MAXIMUM, TR_OP_ABS, TR_OP_SINE, TR_OP_MINIMUM};
  static const tr_op in[] = {TR_OP_ADD, TR_OP_MULTIPLY, TR_OP_SUBTRACT, TR_OP_XOR, TR_OP_MAXIMUM,
                             TR_OP_NOT, TR_OP_MINIMUM, TR_OP_AND};
  static const tr_op pr[] = {TR_OP_NOT, TR_OP_XOR, TR_OP_AND, TR_OP_OR};
  tr_dtype dt = x->shape->dtype;
  for (int i = 0; i < n; i++) {
    tr_op op;
    if (tr_dtype_is_float(dt)) op = fl[gen_below(g, TR_NELEMS(fl))];
    else if (dt == TR_DT_PRED) op = pr[gen_below(g, TR_NELEMS(pr))];
    else if (tr_dtype_is_int(dt)) op = in[gen_below(g, TR_NELEMS(in))];
    else op = gen_chance(g, 50) ? TR_OP_ADD : TR_OP_MULTIPLY;
    if ((op == TR_OP_ABS || op == TR_OP_NEGATE) && tr_dtypes[dt].kind == TR_DK_UINT) op = TR_OP_NOT;
    tr_instr *y;
    if (tr_ops[op].arity == 1) {
      y = tr_build_unary(g->c, op, x, &g->why);
    } else {
      tr_instr *z = gen_partner(g, x, dt);
      y = z ? tr_build_binary(g->c, op, x, z, &g->why) : NULL;
    }
    if (y) {
      gen_push(g, y);
      x = y;
    }
  }
  return x;
}

/* ---- options ---- */
static tr_status parse_list(const char *list, const char *what, bool *ok, int n,
                            bool (*lookup)(const char *, size_t, int *), tr_diag *d) {
  for (const char *p = list; *p;) {
    const char *e = p;
    while (*e && *e != ',') e++;
    int v;
    if (e > p && !lookup(p, (size_t)(e - p), &v)) {
      tr_diag_errorf(d, "gen: unknown %s '%.*s'", what, (int)(e - p), p);
      return TR_ERR_USAGE;
    }
    if (e > p) ok[v] = true;
    p = *e ? e + 1 : e;
  }
  (void)n;
  return TR_OK;
}

static bool op_lookup(const char *s, size_t n, int *v) {
  tr_op op;
  if (!tr_op_lookup(s, n, &op)) return false;
  *v = (int)op;
  return true;
}

static bool dt_lookup(const char *s, size_t n, int *v) {
  tr_dtype dt;
  if (!tr_dtype_lookup(s, n, &dt)) return false;
  *v = (int)dt;
  return true;
}

/* Element types the generator makes: those the reference evaluates in
 * every op (the core types) and complex; the other narrow formats only
 * move values there, so ops would decline them. */
static bool gen_type(tr_dtype dt) {
  return tr_dtype_is_array(dt) && (tr_dtypes[dt].core || tr_dtypes[dt].kind == TR_DK_COMPLEX);
}

static tr_status setup(gen_ctx *g, const tr_gen_opts *o, tr_diag *d) {
  if (o->ops) {
    bool any = false;
    if (parse_list(o->ops, "op", g->op_ok, TR_OP_COUNT, op_lookup, d)) return TR_ERR_USAGE;
    for (int i = 0; i < TR_OP_COUNT; i++)
      if (g->op_ok[i] && !gen_makers[i]) {
        tr_diag_errorf(d, "gen: the generator does not make %s", tr_ops[i].name);
        return TR_ERR_USAGE;
      }
    for (int i = 0; i < TR_OP_COUNT; i++) any |= g->op_ok[i];
    if (!any) {
      tr_diag_errorf(d, "gen: the op list is empty");
      return TR_ERR_USAGE;
    }
  } else {
    for (int i = 0; i < TR_OP_COUNT; i++) g->op_ok[i] = gen_makers[i] && tr_ops[i].weight > 0;
  }
  if (o->flags & TR_GEN_NO_CONTROL)
    g->op_ok[TR_OP_WHILE] = g->op_ok[TR_OP_CONDITIONAL] = g->op_ok[TR_OP_CALL] = false;
  if (o->dtypes) {
    if (parse_list(o->dtypes, "element type", g->dt_ok, TR_DT_COUNT, dt_lookup, d)) return TR_ERR_USAGE;
    for (int i = 0; i < TR_DT_COUNT; i++)
      if (g->dt_ok[i] && !gen_type((tr_dtype)i)) {
        tr_diag_errorf(d, "gen: the generator does not make %s elements", tr_dtypes[i].name);
        return TR_ERR_USAGE;
      }
  } else {
    for (int i = 0; i < TR_DT_COUNT; i++) g->dt_ok[i] = gen_type((tr_dtype)i);
  }
  if (o->flags & TR_GEN_CORE_TYPES)
    for (int i = 0; i < TR_DT_COUNT; i++) g->dt_ok[i] &= tr_dtypes[i].core;
  bool any = false;
  for (int i = 0; i < TR_DT_COUNT; i++) any |= g->dt_ok[i];
  if (!any) {
    tr_diag_errorf(d, "gen: no element type is left to generate");
    return TR_ERR_USAGE;
  }
  return TR_OK;
}

/* ---- the module ---- */
static tr_op pick_op(gen_ctx *g) {
  int64_t total = 0;
  /* an explicitly allowed op of weight 0 still gets weight 1 */
  for (int i = 0; i < TR_OP_COUNT; i++)
    if (g->op_ok[i]) total += tr_ops[i].weight > 0 ? tr_ops[i].weight : 1;
  int64_t r = gen_below(g, total);
  for (int i = 0; i < TR_OP_COUNT; i++)
    if (g->op_ok[i] && (r -= tr_ops[i].weight > 0 ? tr_ops[i].weight : 1) < 0) return (tr_op)i;
  return TR_OP_ADD;
}

/* The next op of a chain: one that rewrites meet as a consumer of a
 * producer (movement ops, reduce, dot, convolution), so that slices of
 * slices, pads, concatenates and convolutions, nested dynamic-slices,
 * transposes of reshapes and the like are common. Weighted like pick_op;
 * TR_OP_COUNT when no such op is allowed. */
static bool chain_op(tr_op op) {
  tr_opclass k = tr_ops[op].cls;
  return k == TR_OPC_MOVE || op == TR_OP_REDUCE || op == TR_OP_CONVOLUTION || op == TR_OP_DOT;
}

static tr_op pick_chain_op(gen_ctx *g) {
  int64_t total = 0;
  for (int i = 0; i < TR_OP_COUNT; i++)
    if (g->op_ok[i] && chain_op((tr_op)i)) total += tr_ops[i].weight > 0 ? tr_ops[i].weight : 1;
  if (!total) return TR_OP_COUNT;
  int64_t r = gen_below(g, total);
  for (int i = 0; i < TR_OP_COUNT; i++)
    if (g->op_ok[i] && chain_op((tr_op)i) && (r -= tr_ops[i].weight > 0 ? tr_ops[i].weight : 1) < 0)
      return (tr_op)i;
  return TR_OP_COUNT;
}

/* Whether x is one value many times: a broadcast of a single element,
 * seen through the moves and broadcasts after it (a chain of broadcasts
 * from a scalar is as constant as one). */
static bool splat(const tr_instr *x) {
  bool bcast = false;
  while (x && x->noperands >= 1 &&
         (x->op == TR_OP_BROADCAST || x->op == TR_OP_RESHAPE || x->op == TR_OP_TRANSPOSE || x->op == TR_OP_COPY ||
          x->op == TR_OP_SLICE || x->op == TR_OP_REVERSE)) {
    bcast |= x->op == TR_OP_BROADCAST;
    x = x->operands[0];
    if (bcast && tr_shape_is_array(x->shape) && tr_shape_count(x->shape) <= 1) return true;
  }
  return false;
}

/* An output for x: a pred array picks between two values instead (a
 * mask that happens to be constant then still leaves a varied output). */
static tr_instr *informative(gen_ctx *g, tr_instr *x) {
  if (!tr_shape_is_array(x->shape) || x->shape->dtype != TR_DT_PRED || x->shape->rank == 0) return x;
  tr_dtype dt = gen_dtype(g, GC_FLOAT, false);
  if (dt == TR_DT_COUNT) return x;
  tr_instr *a = gen_partner(g, x, dt), *b = a ? gen_partner(g, x, dt) : NULL;
  if (!b || a == b) return x;
  tr_instr *ops[3] = {x, a, b};
  tr_instr *s = tr_build_end(tr_build_begin(g->c, TR_OP_SELECT, ops, 3), NULL, &g->why);
  return s ? s : x;
}

/* The same instructions again with every parameter replaced by a
 * constant, so constant folding meets what the compiled code computes. */
static void twin(gen_ctx *g, int upto, tr_instr **outs, int *nouts, int maxouts) {
  tr_comp *c = g->c;
  int n = upto;
  tr_instr **map = tr_xcalloc((size_t)g->m->next_id + 1, sizeof(tr_instr *));
  int nbase = *nouts;
  tr_instr *watch[2];
  int nwatch = 0;
  for (int i = 0; i < n; i++) {
    tr_instr *in = c->instrs[i];
    tr_instr *t = NULL;
    if (in->op == TR_OP_PARAMETER) {
      /* a parameter that a convert reads: half the time values at the
       * edges of the convert's type, where folding it goes wrong */
      tr_instr *cv = NULL;
      for (int u = 0; u < in->nusers && !cv; u++)
        if (in->users[u]->op == TR_OP_CONVERT && tr_shape_is_array(in->users[u]->shape))
          cv = in->users[u];
      if (cv && gen_edges_apply(in->shape->dtype, cv->shape->dtype) && gen_chance(g, 50)) {
        t = gen_edge_constant(g, in->shape, cv->shape->dtype);
        /* and the folded conversion is an output (what uses it may
         * make it uncertain) */
        if (nwatch < (int)TR_NELEMS(watch)) watch[nwatch++] = cv;
      } else {
        t = gen_constant(g, in->shape);
      }
    } else if (in->op == TR_OP_CONSTANT) {
      t = in;
    } else {
      tr_instr **ops = tr_xcalloc((size_t)in->noperands + 1, sizeof(tr_instr *));
      for (int k = 0; k < in->noperands; k++) ops[k] = map[in->operands[k]->id];
      t = tr_build_begin(c, in->op, ops, in->noperands);
      tr_free(ops);
      t->attrs = in->attrs; /* shared: attributes are never edited */
      t->nattrs = in->nattrs;
      t->literal = in->literal;
      t = tr_build_end(t, in->shape, &g->why);
    }
    if (!t) break; /* cannot happen: the same operands' shapes */
    map[in->id] = t;
  }
  for (int i = 0; i < nbase && *nouts < maxouts; i++)
    if (map[outs[i]->id]) outs[(*nouts)++] = map[outs[i]->id];
  for (int i = 0; i < nwatch && *nouts < maxouts; i++) {
    tr_instr *t = map[watch[i]->id];
    bool dup = false;
    for (int k = 0; k < *nouts; k++) dup |= outs[k] == t;
    if (t && !dup) outs[(*nouts)++] = t;
  }
  tr_free(map);
}

tr_status tr_gen_module(const tr_gen_opts *o, tr_module **out, tr_diag *d) {
  *out = NULL;
  gen_ctx g;
  memset(&g, 0, sizeof g);
  g.o = o;
  g.rng = o->seed * 0x9e3779b97f4a7c15ull + 0x1234567;
  tr_status st = setup(&g, o, d);
  if (st) return st;
  char name[64];
  snprintf(name, sizeof name, "gen_%llu", (unsigned long long)o->seed);
  g.m = tr_module_new(name);
  g.c = tr_build_comp(g.m, "main", true);
  g.consts_only = (o->flags & TR_GEN_NO_PARAMS) || gen_chance(&g, 5);
  int size = o->size > 0 ? o->size : 20;
  int made = 0;
  tr_op next = TR_OP_COUNT;
  for (int step = 0; made < size && step < 4 * size + 8; step++) {
    tr_op op = next != TR_OP_COUNT ? next : pick_op(&g);
    tr_instr *in = gen_makers[op](&g, op);
    g.prefer = NULL;
    next = TR_OP_COUNT;
    if (in) {
      gen_push(&g, in);
      made++;
      /* Chain bias: the next op often takes this result as its operand
       * and is a movement op, a reduction or a contraction, or the same
       * op again (slice of slice, pad of pad, nested dynamic-slices,
       * transpose of transpose): the producer/consumer chains that
       * rewrite rules and fusion match. Other ops keep the pool's choice
       * (long chains of arithmetic pile up the reference's uncertainty). */
      bool movable = chain_op(in->op) && g.op_ok[in->op];
      if (gen_chance(&g, movable ? 50 : 25)) {
        next = movable && gen_chance(&g, 40) ? in->op : pick_chain_op(&g);
        if (next != TR_OP_COUNT) g.prefer = in;
      }
    }
  }
  /* Outputs: the values nobody uses (leaves only when nothing else),
   * most recent first; several outputs make a tuple. */
  enum { MAXOUT = 8 };
  tr_instr *outs[MAXOUT];
  int nouts = 0;
  for (int i = 0; i < g.nwatch; i++)
    if (g.watch[i]->nusers > 0) outs[nouts++] = g.watch[i];
  for (int i = g.c->ninstrs - 1; i >= 0 && nouts < MAXOUT / 2; i--) {
    tr_instr *in = g.c->instrs[i];
    /* a broadcast scalar is one value many times: a weak output */
    if (in->nusers == 0 && in->op != TR_OP_PARAMETER && in->op != TR_OP_CONSTANT && !splat(in) &&
        in->shape->dtype != TR_DT_TOKEN && tr_shape_count(in->shape) != 0)
      outs[nouts++] = informative(&g, in);
  }
  if (!nouts) outs[nouts++] = gen_pick(&g);
  bool folded = !g.consts_only && gen_chance(&g, 15);
  if (folded) twin(&g, g.c->ninstrs, outs, &nouts, MAXOUT);
  tr_instr *root = outs[0];
  if (nouts > 1 || gen_chance(&g, 10)) {
    if (nouts > 2 && gen_chance(&g, 20)) {
      /* a nested tuple */
      tr_instr *inner = tr_build_tuple(g.c, outs + 1, 2, &g.why);
      if (inner) {
        outs[1] = inner;
        memmove(outs + 2, outs + 3, sizeof(tr_instr *) * (size_t)(nouts - 3));
        nouts--;
      }
    }
    tr_instr *t = tr_build_tuple(g.c, outs, nouts, &g.why);
    if (t) root = t;
  }
  tr_build_root(g.c, root);
  /* callees before callers, the order the text has and a parse gives */
  tr_comp **order = tr_xcalloc((size_t)g.m->ncomps, sizeof(tr_comp *));
  tr_module_callee_order(g.m, order);
  memcpy(g.m->comps, order, sizeof(tr_comp *) * (size_t)g.m->ncomps);
  tr_free(order);
  tr_free(g.pool);
  tr_buf_free(&g.why);
  st = tr_verify(g.m, d);
  if (st) {
    tr_diag_errorf(d, "gen: internal error: seed %llu made a module the verifier rejects",
                   (unsigned long long)o->seed);
    tr_module_free(g.m);
    return TR_ERR_INVALID;
  }
  *out = g.m;
  return TR_OK;
}
