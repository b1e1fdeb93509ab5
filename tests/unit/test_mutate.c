/* test_mutate.c - the verifier is the evaluator's gate: every module it
 * accepts must evaluate to a value or a located "unsupported" / limit
 * error, never an internal error (a kernel trusting a shape the verifier
 * let through). Mutants of the shipped corpora (tests/hlo, tests/xla-suite)
 * with one change each (a declared dtype or dim, an integer attribute, an
 * operand) are verified; those accepted are evaluated in exact and shadow
 * mode with small limits. TRENCH_MUTANTS=N sets the mutants per module
 * (default 2; `make fault-san` runs more under the sanitizers). */
#include "../../src/eval/eval.h"
#include "../../src/eval/shadow.h"
#include "../../src/oracle/inputs.h"
#include "test.h"

#include <dirent.h>
#include <stdlib.h>

/* xorshift64*: deterministic mutants from a per-module seed */
static uint64_t rnd(uint64_t *s) {
  *s ^= *s >> 12;
  *s ^= *s << 25;
  *s ^= *s >> 27;
  return *s * 2685821657736338717ull;
}

static tr_instr *pick_instr(const tr_module *m, uint64_t *s) {
  int total = 0;
  for (int c = 0; c < m->ncomps; c++) total += m->comps[c]->ninstrs;
  if (!total) return NULL;
  int k = (int)(rnd(s) % (uint64_t)total);
  for (int c = 0; c < m->ncomps; c++) {
    if (k < m->comps[c]->ninstrs) return m->comps[c]->instrs[k];
    k -= m->comps[c]->ninstrs;
  }
  return NULL;
}

static const tr_dtype some_types[] = {TR_DT_PRED, TR_DT_S8, TR_DT_S32, TR_DT_S64, TR_DT_U8, TR_DT_U32,
                                      TR_DT_U64, TR_DT_F16, TR_DT_BF16, TR_DT_F32, TR_DT_F64, TR_DT_C64,
                                      TR_DT_C128, TR_DT_S4};

/* One change to m; returns false when the picked instruction offers none. */
static bool mutate(tr_module *m, uint64_t *s) {
  tr_instr *in = pick_instr(m, s);
  if (!in) return false;
  switch (rnd(s) % 5) {
  case 0: /* the declared element type (a leaf of a tuple too) */
  case 1: { /* a declared dim */
    tr_shape *sh = tr_shape_clone(m->arena, in->shape);
    tr_shape *leaf = sh;
    while (leaf->dtype == TR_DT_TUPLE && leaf->nelems > 0) leaf = leaf->elems[rnd(s) % (uint64_t)leaf->nelems];
    if (!tr_dtype_is_array(leaf->dtype)) return false;
    if (rnd(s) & 1) {
      leaf->dtype = some_types[rnd(s) % (uint64_t)TR_NELEMS(some_types)];
    } else {
      if (leaf->rank == 0) return false;
      int64_t *dims = tr_arena_alloc(m->arena, sizeof(int64_t) * (size_t)leaf->rank);
      memcpy(dims, leaf->dims, sizeof(int64_t) * (size_t)leaf->rank);
      int d = (int)(rnd(s) % (uint64_t)leaf->rank);
      static const int64_t to[] = {0, 1, 2, 3, 7};
      dims[d] = rnd(s) & 1 ? to[rnd(s) % 5] : dims[d] + 1;
      leaf->dims = dims;
      leaf->layout = NULL;
      leaf->has_layout = false;
    }
    in->shape = sh;
    return true;
  }
  case 2: { /* an integer attribute or one entry of a list */
    int cand = 0;
    for (int i = 0; i < in->nattrs; i++)
      cand += in->attrs[i].kind == TR_AK_INT || (in->attrs[i].kind == TR_AK_INTS && in->attrs[i].n > 0);
    if (!cand) return false;
    int k = (int)(rnd(s) % (uint64_t)cand);
    for (int i = 0; i < in->nattrs; i++) {
      tr_attr *at = &in->attrs[i];
      if (!(at->kind == TR_AK_INT || (at->kind == TR_AK_INTS && at->n > 0)) || k--) continue;
      static const int64_t delta[] = {-1, 1, 2, -2};
      int64_t *v;
      if (at->kind == TR_AK_INT) {
        v = &at->u.i;
      } else {
        int64_t *c = tr_arena_memdup(m->arena, at->u.ints, sizeof(int64_t) * (size_t)at->n);
        at->u.ints = c;
        v = &c[rnd(s) % (uint64_t)at->n];
      }
      *v += delta[rnd(s) % 4];
      return true;
    }
    return false;
  }
  default: { /* an operand replaced by an earlier instruction */
    if (in->noperands == 0) return false;
    tr_comp *c = in->parent;
    int pos = 0;
    while (pos < c->ninstrs && c->instrs[pos] != in) pos++;
    if (pos == 0) return false;
    tr_instr *with = c->instrs[rnd(s) % (uint64_t)pos];
    tr_instr_replace_operand(in, (int)(rnd(s) % (uint64_t)in->noperands), with);
    return true;
  }
  }
}

typedef struct {
  int modules, mutants, accepted, evaluated, values, internal;
} stats;

static bool internal_error(const tr_diag *d) {
  for (int i = 0; i < d->nmsgs; i++)
    if (strstr(d->msgs[i], "internal error")) return true;
  return false;
}

static void eval_mutant(const char *path, const tr_module *m, stats *st) {
  tr_diag d = {0};
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  tr_tensor **ins = NULL;
  int nins = 0;
  if (tr_inputs_make(m, &cfg, &ins, &nins, &d) != TR_OK) {
    tr_diag_clear(&d);
    return;
  }
  st->evaluated++;
  tr_eval_opts eo = {0};
  eo.verified = true;
  eo.max_bytes = (int64_t)64 << 20;
  eo.max_while_trips = 10000;
  eo.deadline_s = 5;
  tr_tensor **outs = NULL;
  int nouts = 0;
  if (tr_eval_opt(m, &eo, ins, nins, &outs, &nouts, &d) == TR_OK) st->values++;
  tr_eval_free_outputs(outs, nouts);
  tr_shadow_opts so = {0};
  so.eval = eo;
  tr_shadow_out *sh = NULL;
  int nsh = 0;
  tr_eval_shadow(m, &so, ins, nins, &sh, &nsh, &d);
  tr_shadow_free(sh, nsh);
  if (internal_error(&d)) {
    st->internal++;
    if (st->internal <= 5) {
      tr_buf b = {0};
      tr_print_module(&b, m);
      fprintf(stderr, "  mutant of %s evaluates to an internal error:\n", path);
      tr_diag_print(&d, stderr);
      fprintf(stderr, "%s\n", tr_buf_str(&b));
      tr_buf_free(&b);
    }
  }
  tr_inputs_free(ins, nins);
  tr_diag_clear(&d);
}

static void mutate_file(const char *path, int per, uint64_t seed, stats *st) {
  tr_diag d = {0};
  tr_module *orig = tr_parse_file(path, NULL, &d);
  if (!orig || tr_verify(orig, &d) != TR_OK) {
    tr_module_free(orig);
    tr_diag_clear(&d);
    return; /* the corpora's deliberately bad modules */
  }
  tr_diag_clear(&d);
  st->modules++;
  for (int k = 0; k < per; k++) {
    tr_module *m = tr_module_clone(orig);
    uint64_t s = seed * 0x9e3779b97f4a7c15ull + (uint64_t)k + 1;
    bool changed = false;
    for (int tries = 0; tries < 8 && !changed; tries++) changed = mutate(m, &s);
    if (changed) {
      tr_module_rebuild_users(m);
      st->mutants++;
      tr_diag vd = {0};
      if (tr_verify(m, &vd) == TR_OK) {
        st->accepted++;
        eval_mutant(path, m, st);
      }
      tr_diag_clear(&vd);
    }
    tr_module_free(m);
  }
  tr_module_free(orig);
}

static int by_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Every .hlo of dir, in name order; every step-th one. */
static int mutate_dir(const char *sub, int step, int per, stats *st) {
  char dir[1024];
  snprintf(dir, sizeof dir, "%s/%s", tr_test_dir, sub);
  DIR *dp = opendir(dir);
  if (!dp) return 0;
  char **names = NULL;
  int n = 0, cap = 0;
  for (struct dirent *e; (e = readdir(dp));) {
    size_t l = strlen(e->d_name);
    if (l < 5 || strcmp(e->d_name + l - 4, ".hlo") != 0) continue;
    if (n == cap) names = tr_xrealloc(names, sizeof(char *) * (size_t)(cap = cap ? cap * 2 : 256));
    names[n++] = tr_xstrdup(e->d_name);
  }
  closedir(dp);
  qsort(names, (size_t)n, sizeof(char *), by_name);
  for (int i = 0; i < n; i++) {
    if (i % step == 0) {
      char path[2048];
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      mutate_file(path, per, (uint64_t)i, st);
    }
    free(names[i]);
  }
  free(names);
  return n;
}

TR_TEST(mutate_verified_never_internal) {
  const char *env = getenv("TRENCH_MUTANTS");
  int per = env ? atoi(env) : 2;
  if (per < 1) per = 1;
  stats st = {0};
  int nh = mutate_dir("hlo", 1, per, &st);
  int nx = mutate_dir("xla-suite", 3, per, &st);
  CHECK(nh > 0 && nx > 0); /* the corpora are there */
  printf("  mutants: %d modules, %d mutants, %d accepted by the verifier, %d evaluated (%d to a value), %d internal errors\n",
         st.modules, st.mutants, st.accepted, st.evaluated, st.values, st.internal);
  /* enough accepted mutants that the test says something */
  CHECK(st.accepted >= 100);
  CHECK_EQ_INT(st.internal, 0);
}
