/* verify.c - the driver of trench verify (verify.h): loads the kernel,
 * explores its data-dependent paths symbolically, picks the output
 * locations, builds the reference's expression for each, decides
 * (structurally, then with Z3), confirms every difference concretely
 * (the C kernel natively in a forked child, a CUDA kernel by the
 * executor in concrete mode; the reference by the shadow evaluator and
 * the comparison policy) and reports. */
#include "verify.h"

#include "../eval/shadow.h"
#include "../ir/tensor.h"
#include "../oracle/compare.h"
#include "../oracle/inputs.h"
#include "ref.h"
#include "solve.h"
#include "vk.h"

#include <dirent.h>
#include <signal.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

typedef struct {
  const tv_opts *o;
  const char *kpath;         /* the kernel as compiled: o->kernel_path, or
                                the wrapper of an emitted unit */
  char wrap[300];
  tr_diag *d;
  FILE *out;
  vk_kernel *k;
  vx_ctx *cx;
  char work[256];
  char so[300];
  bool have_so;
  int nin, nout, nbufs;
  int64_t count[16];
  tr_dtype dtype[16];
  vk_kbench_launch launch;
  bool is_out[16];
  unsigned grid[3], block[3];/* the launch: the options', or a .py's recorded one */
  bool zero_out;             /* outputs start zeroed (a .py's torch::zeros) */
  bool index[16];            /* integer inputs the reference uses as indices:
                                concrete (the base draw), not symbols */
  const tr_shape *shape[16];
  tr_tensor **base;          /* base inputs (seeded), nin */
  vk_result *paths;
  int npaths;
  bool paths_complete;
  tr_status path_st;
  char path_why[300];
  bool saved;
  tv_summary *s;
  void *llvm;                /* the kernel's LLVM context (vk_compile_opts) */
  struct loc *L;             /* the output locations */
  int nl;
  vr_ctx *R;                 /* the reference's symbolic evaluator */
  unsigned char *mask;       /* blocks that run symbolically */
  char oom[512];             /* the reference's out-of-memory verdict that
                                ended the run, "" when none */
} vctx;

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void rm_work(const char *dir) {
  DIR *D = opendir(dir);
  if (!D) return;
  struct dirent *e;
  char p[600];
  while ((e = readdir(D)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      unlink(p);
    }
  closedir(D);
  rmdir(dir);
}

static void print_index(tr_buf *b, const tr_shape *s, int64_t flat) {
  int64_t idx[TR_TENSOR_MAX_RANK];
  for (int i = s->rank - 1; i >= 0; i--) { idx[i] = flat % s->dims[i]; flat /= s->dims[i]; }
  tr_buf_putc(b, '[');
  for (int i = 0; i < s->rank; i++) tr_buf_printf(b, "%s%lld", i ? "," : "", (long long)idx[i]);
  tr_buf_putc(b, ']');
}

/* ---- concrete runs ---- */

typedef struct { const vs_model *m; } undef_lookup;
static double undef_from_model(void *ctx, int64_t buf, int64_t off) {
  const vs_model *m = ((undef_lookup *)ctx)->m;
  for (int i = 0; m && i < m->n; i++)
    if (m->syms[i]->kind == VX_UNDEF && m->syms[i]->a == buf && m->syms[i]->b == off) return m->vals[i];
  return 7777.0;
}

/* The buffers for a concrete run: base inputs with the model's symbols
 * and outputs holding the model's entry values (0 elsewhere). */
static tr_tensor **make_bufs(vctx *V, const vs_model *m) {
  tr_tensor **b = tr_xcalloc((size_t)V->nbufs, sizeof *b);
  for (int p = 0; p < V->nbufs; p++) {
    if (p < V->nin) b[p] = tr_tensor_clone(V->base[p]);
    else {
      const tr_shape *s = V->shape[p];
      b[p] = tr_tensor_new(s->dtype, s->rank, s->dims, V->d);
    }
  }
  for (int i = 0; m && i < m->n; i++) {
    const vx *e = m->syms[i];
    /* integer symbols: their bits, sign-extended for signed types */
    int64_t iv = 0;
    if (e->w && m->bits) {
      vx tmp = *e;
      tmp.a = (int64_t)(m->bits[i] & vx_bvmask(e->w));
      iv = e->a < V->nbufs && tr_dtypes[V->dtype[e->a]].kind == TR_DK_SINT ? vx_bvsigned(&tmp) : tmp.a;
    }
    if (e->kind == VX_SYM && e->a < V->nin && e->b < (int64_t)tr_tensor_count(b[e->a])) {
      if (e->w) tr_tensor_set_i(b[e->a], (size_t)e->b, iv);
      else tr_tensor_set_f(b[e->a], (size_t)e->b, m->vals[i]);
    }
    if (e->kind == VX_UNDEF && e->a >= V->nin && e->a < V->nbufs) {
      int64_t el = e->b / (int64_t)tr_dtype_size(V->dtype[e->a]);
      if (el < (int64_t)tr_tensor_count(b[e->a])) {
        if (e->w) tr_tensor_set_i(b[e->a], (size_t)el, iv);
        else tr_tensor_set_f(b[e->a], (size_t)el, m->vals[i]);
      }
    }
  }
  return b;
}

static void free_bufs(vctx *V, tr_tensor **b) {
  for (int p = 0; b && p < V->nbufs; p++) tr_tensor_free(b[p]);
  tr_free(b);
}

static void fill_cfg(vctx *V, vk_run_cfg *c) {
  memset(c, 0, sizeof *c);
  c->nbufs = V->nbufs;
  c->count = V->count;
  c->dtype = V->dtype;
  c->is_out = V->is_out;
  c->zero_out = V->zero_out;
  for (int i = 0; i < 3; i++) {
    c->grid[i] = V->o->cuda ? V->grid[i] : 1;
    c->block[i] = V->o->cuda ? V->block[i] : 1;
  }
}

/* Runs the kernel concretely on b (outputs in place). Returns 0, a signal
 * number (native crash), or -1 (could not run; diag). */
static int run_concrete_q(vctx *V, tr_tensor **b, const vs_model *m, int guard, bool reverse, int quantum);
static int run_concrete(vctx *V, tr_tensor **b, const vs_model *m, int guard, bool reverse) {
  return run_concrete_q(V, b, m, guard, reverse, 0);
}
static int run_concrete_q(vctx *V, tr_tensor **b, const vs_model *m, int guard, bool reverse, int quantum) {
  if (!V->o->cuda) {
    if (!V->have_so) {
      snprintf(V->so, sizeof V->so, "%s/kernel.so", V->work);
      if (vk_native_build(V->kpath, V->so, V->o->cflags, V->d) != TR_OK) return -1;
      V->have_so = true;
    }
    return vk_native_run(V->so, b, V->nbufs, guard, 20, V->d);
  }
  vk_run_cfg c;
  fill_cfg(V, &c);
  c.conc = b;
  c.concrete = true;
  c.reverse_threads = reverse;
  c.quantum = quantum;
  undef_lookup ul = {m};
  c.undef_value = undef_from_model;
  c.undef_ctx = &ul;
  vx_ctx *cx = vx_ctx_new();
  vk_result r;
  tr_status st = vk_run(V->k, cx, &c, &r, V->d);
  if (st == TR_OK)
    for (int p = V->nin; p < V->nbufs; p++)
      for (int64_t e = 0; e < V->count[p]; e++) {
        if (r.val[p][e] && r.val[p][e]->kind == VX_BVC) tr_tensor_set_i(b[p], (size_t)e, vx_bvsigned(r.val[p][e]));
        else if (r.val[p][e]) tr_tensor_set_f(b[p], (size_t)e, r.val[p][e]->c);
      }
  vk_result_free(&r, V->nbufs);
  vx_ctx_free(cx);
  return st == TR_OK ? 0 : -1;
}

/* Judges the kernel's outputs in b against the reference's shadow run on
 * b's inputs. Returns 1 mismatch (first failing output/element in
 * out and flat), 0 pass, -1 error. */
static int judge(vctx *V, tr_tensor **b, int *out, int64_t *flat, double *kv, double *rv) {
  int want_out = *out;
  int64_t want = *flat;
  tr_shadow_opts so = {0};
  tr_shadow_out *sh = NULL;
  int nsh = 0;
  tr_diag d = {0};
  if (tr_eval_shadow(V->o->m, &so, b, V->nin, &sh, &nsh, &d) != TR_OK) {
    /* The reference out of memory confirms nothing and refutes nothing:
     * the verification as a whole ends without a verdict. */
    const char *first = tr_diag_first(&d);
    if (first && strstr(first, "out of memory") && tr_heap_active()) {
      snprintf(V->oom, sizeof V->oom, "%s", first);
      tr_diag_clear(&d); /* its messages are kept: no unwind frees them */
      tr_heap_raise(0);
    }
    tr_diag_errorf(V->d, "reference: %s", tr_diag_first(&d) ? tr_diag_first(&d) : "shadow evaluation failed");
    tr_diag_clear(&d);
    return -1;
  }
  int res = 0;
  tr_compare_opts co;
  tr_compare_opts_default(&co);
  for (int i = 0; i < nsh && i < V->nout && res == 0; i++) {
    tr_compare_result cr;
    if (tr_compare_output(&sh[i], b[V->nin + i], &co, &cr, &d) != TR_OK) { res = -1; break; }
    if (cr.judgement == TR_JUDGE_MISMATCH) {
      res = 1;
      *out = i;
      *flat = (int64_t)cr.first_fail;
      *kv = cr.first_target;
      *rv = cr.first_value;
      /* name the location asked about when it is among the failures */
      const tr_shadow_out *so_ = &sh[i];
      if (i == want_out && want >= 0 && (size_t)want < so_->n && !so_->uncertain[want] && !so_->value) {
        /* integers and pred: exact */
        int64_t t = tr_tensor_get_i(b[V->nin + i], (size_t)want), val = tr_tensor_get_i(so_->exact, (size_t)want);
        if (t != val) { *flat = want; *kv = (double)t; *rv = (double)val; }
      } else if (i == want_out && want >= 0 && (size_t)want < so_->n && !so_->uncertain[want]) {
        double t = tr_tensor_get_f(b[V->nin + i], (size_t)want), val = so_->value[want];
        double allow = co.k * so_->bound[want] + tr_compare_tiny(so_->dtype);
        if (!(fabs(t - val) <= allow) && !(isnan(t) && isnan(val))) { *flat = want; *kv = t; *rv = val; }
      }
    }
  }
  tr_diag_clear(&d);
  tr_shadow_free(sh, nsh);
  return res;
}

static bool save_bundle(vctx *V, tr_tensor **b, const char *what) {
  const char *dir = V->o->save_dir;
  if (!dir || V->saved) return false;
  V->saved = true;
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "trench verify: cannot create %s: %s\n", dir, strerror(errno));
    return false;
  }
  char p[1200];
  tr_buf t = {0};
  tr_print_module(&t, V->o->m);
  snprintf(p, sizeof p, "%s/module.hlo", dir);
  FILE *f = fopen(p, "w");
  if (f) { fputs(tr_buf_str(&t), f); fclose(f); }
  tr_buf_free(&t);
  char *src = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(V->kpath, &src, &len, &d) == TR_OK) {
    snprintf(p, sizeof p, "%s/kernel.%s", dir, V->o->cuda ? "cu" : "c");
    f = fopen(p, "w");
    if (f) { fwrite(src, 1, len, f); fclose(f); }
  }
  tr_free(src);
  tr_buf cmd = {0};
  tr_buf_printf(&cmd, "trench run %s/module.hlo", dir);
  for (int i = 0; i < V->nin; i++) {
    snprintf(p, sizeof p, "%s/in%d.npy", dir, i);
    tr_npy_write(p, b[i], &d);
    tr_buf_printf(&cmd, " --input %s/in%d.npy", dir, i);
  }
  for (int i = 0; i < V->nout; i++) {
    snprintf(p, sizeof p, "%s/kernel_out%d.npy", dir, i);
    tr_npy_write(p, b[V->nin + i], &d);
  }
  tr_diag_clear(&d);
  snprintf(p, sizeof p, "%s/README", dir);
  f = fopen(p, "w");
  if (f) {
    fprintf(f, "# trench verify counterexample\n\n%s\n\nThe kernel's outputs on these inputs are kernel_outN.npy.\n"
               "The reference's, judged by trench's oracle:\n\n    %s --shadow --out %s/ref\n\n"
               "Verify again:\n\n    trench verify --ref %s/module.hlo --kernel %s/kernel.%s\n",
            what, tr_buf_str(&cmd), dir, dir, dir, V->o->cuda ? "cu" : "c");
    fclose(f);
  }
  tr_buf_free(&cmd);
  return true;
}

/* ---- paths ---- */

static void explore(vctx *V, const unsigned char *mask) {
  int maxp = V->o->max_paths > 0 ? V->o->max_paths : 64;
  int *dec = NULL, ndec = 0;
  V->paths_complete = false;
  for (;;) {
    if (V->npaths == maxp) {
      snprintf(V->path_why, sizeof V->path_why, "more than %d paths through branches on data", maxp);
      break;
    }
    vk_run_cfg c;
    fill_cfg(V, &c);
    tr_tensor *conc[16] = {0};
    for (int p = 0; p < V->nin; p++) if (V->index[p]) conc[p] = V->base[p];
    c.conc = conc;
    c.block_mask = mask;
    c.dec = dec;
    c.ndec = ndec;
    V->paths = tr_xrealloc(V->paths, (size_t)(V->npaths + 1) * sizeof *V->paths);
    vk_result *r = &V->paths[V->npaths];
    tr_diag d = {0};
    tr_status st = vk_run(V->k, V->cx, &c, r, &d);
    if (st != TR_OK) {
      V->path_st = st;
      snprintf(V->path_why, sizeof V->path_why, "%s", tr_diag_first(&d) ? tr_diag_first(&d) : "kernel run failed");
      tr_diag_clear(&d);
      vk_result_free(r, V->nbufs);
      break;
    }
    tr_diag_clear(&d);
    V->npaths++;
    /* next decision vector: flip the last "true" past which all are taken */
    int j = r->ndec - 1;
    while (j >= 0 && r->dec[j] == 0) j--;
    if (j < 0) { V->paths_complete = true; break; }
    tr_free(dec);
    dec = tr_xmalloc((size_t)(j + 1) * sizeof *dec);
    memcpy(dec, r->dec, (size_t)j * sizeof *dec);
    dec[j] = 0;
    ndec = j + 1;
  }
  tr_free(dec);
}

/* ---- locations ---- */

typedef struct loc { int out; int64_t flat; } loc;

static void add_loc(loc **L, int *n, int out, int64_t flat) {
  for (int i = 0; i < *n; i++) if ((*L)[i].out == out && (*L)[i].flat == flat) return;
  *L = tr_xrealloc(*L, (size_t)(*n + 1) * sizeof **L);
  (*L)[*n].out = out;
  (*L)[(*n)++].flat = flat;
}

static int64_t flat_of(const tr_shape *s, const int64_t *idx) {
  int64_t f = 0;
  for (int i = 0; i < s->rank; i++) f = f * s->dims[i] + idx[i];
  return f;
}

static uint64_t rng_next(uint64_t *st) {
  uint64_t z = (*st += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static bool default_locations(vctx *V, loc **L, int *n) {
  const tv_opts *o = V->o;
  int cap = o->max_locations > 0 ? o->max_locations : 64;
  int64_t tile = o->tile > 0 ? o->tile : o->cuda ? V->block[0] : 0;
  uint64_t rs = o->seed * 7919 + 17;
  for (int out = 0; out < V->nout; out++) {
    const tr_shape *s = V->shape[V->nin + out];
    int64_t idx[TR_TENSOR_MAX_RANK], cnt = tr_shape_count(s);
    if (cnt <= 0) continue;
    /* corners */
    int nc = s->rank < 6 ? 1 << s->rank : 64;
    for (int c = 0; c < nc && *n < cap; c++) {
      for (int i = 0; i < s->rank; i++) idx[i] = (c >> i) & 1 ? s->dims[i] - 1 : 0;
      add_loc(L, n, out, flat_of(s, idx));
    }
    /* boundaries and their neighbours in each dim, others in the middle */
    for (int dm = 0; dm < s->rank; dm++) {
      int64_t pts[64];
      int np = 0;
      int64_t dn = s->dims[dm];
      int64_t base[] = {1, dn - 2, dn / 2};
      for (int j = 0; j < 3; j++) pts[np++] = base[j];
      if (tile > 0)
        for (int64_t t = tile; t < dn && np < 60; t += tile) { pts[np++] = t - 1; pts[np++] = t; }
      for (int j = 0; j < np && *n < cap; j++) {
        if (pts[j] < 0 || pts[j] >= dn) continue;
        for (int i = 0; i < s->rank; i++) idx[i] = s->dims[i] / 2;
        idx[dm] = pts[j];
        add_loc(L, n, out, flat_of(s, idx));
      }
    }
    int nr = o->nrandom > 0 ? o->nrandom : 8;
    for (int j = 0; j < nr && *n < cap + nr; j++) add_loc(L, n, out, (int64_t)(rng_next(&rs) % (uint64_t)cnt));
  }
  return true;
}

static bool parse_locations(vctx *V, const char *spec, loc **L, int *n) {
  if (!strcmp(spec, "all")) {
    for (int out = 0; out < V->nout; out++)
      for (int64_t f = 0; f < tr_shape_count(V->shape[V->nin + out]); f++) add_loc(L, n, out, f);
    return true;
  }
  const char *p = spec;
  while (*p) {
    int out = 0;
    if (p[0] == 'o' && p[1] == 'u' && p[2] == 't') { out = (int)strtol(p + 3, (char **)&p, 10); if (*p == ':') p++; }
    if (out < 0 || out >= V->nout) { tr_diag_errorf(V->d, "--locations: output %d does not exist", out); return false; }
    const tr_shape *s = V->shape[V->nin + out];
    int64_t idx[TR_TENSOR_MAX_RANK];
    for (int i = 0; i < s->rank; i++) {
      char *e;
      idx[i] = strtoll(p, &e, 10);
      if (e == p || idx[i] < 0 || idx[i] >= s->dims[i]) {
        tr_diag_errorf(V->d, "--locations: '%s': expected %d indices within the output's dims, separated by ','", spec, s->rank);
        return false;
      }
      p = e;
      if (i + 1 < s->rank) {
        if (*p != ',') { tr_diag_errorf(V->d, "--locations: '%s': expected ',' after an index", spec); return false; }
        p++;
      }
    }
    add_loc(L, n, out, flat_of(s, idx));
    if (*p == ';') p++;
    else if (*p) { tr_diag_errorf(V->d, "--locations: '%s': expected ';' between locations", spec); return false; }
  }
  return true;
}

/* ---- decision per location ---- */

typedef enum { LV_EQ_STRUCT, LV_EQ_Z3, LV_CEX, LV_UNKNOWN } lverdict;

/* Tries a model: confirmed when the kernel's concrete outputs fail the
 * oracle. */
static bool confirm(vctx *V, const loc *l, const vs_model *m, const char *kind, tr_buf *msg) {
  tr_tensor **b = make_bufs(V, m);
  int rc = run_concrete(V, b, m, 1, false);
  bool ok = false;
  if (rc == 0) {
    int out = l->out;
    int64_t flat = l->flat;
    double kv, rv;
    if (judge(V, b, &out, &flat, &kv, &rv) == 1) {
      ok = true;
      tr_buf_printf(msg, "%s: kernel gives %.9g, reference %.9g at out%d", kind, kv, rv, out);
      print_index(msg, V->shape[V->nin + out], flat);
      if (save_bundle(V, b, tr_buf_str(msg))) tr_buf_printf(msg, "; saved in %s", V->o->save_dir);
    }
  } else if (rc > 0) {
    ok = true;
    if (rc == SIGALRM) tr_buf_printf(msg, "%s: the kernel runs past 20 seconds on these inputs", kind);
    else tr_buf_printf(msg, "%s: the kernel dies of signal %d on these inputs", kind, rc);
    save_bundle(V, b, tr_buf_str(msg));
  }
  free_bufs(V, b);
  return ok;
}

static lverdict decide(vctx *V, const loc *l, vx *ref, tr_buf *msg) {
  const tv_opts *o = V->o;
  int p = V->nin + l->out;
  unsigned tmo = (unsigned)((o->budget_s > 0 ? o->budget_s : 10) * 1000 / 4);
  bool all_struct = true, all_proved = true;
  for (int i = 0; i < V->npaths; i++) {
    vk_result *r = &V->paths[i];
    vx *kv = r->val[p][l->flat];
    int es = tr_dtype_size(V->dtype[p]);
    if (!kv) kv = tr_dtype_is_float(V->dtype[p]) ? vx_undef(V->cx, p, l->flat * es) : vx_bvundef(V->cx, p, l->flat * es, es * 8);
    if (kv == ref) continue;
    all_struct = false;
    static const vs_query ladder[] = {{64, 0, 0}, {64, 1, 0}, {4, 0.01, 0}, {1024, 1, 0}};
    bool proved = false, found = false;
    char why[200] = "";
    for (size_t q = 0; q < sizeof ladder / sizeof ladder[0] && !found; q++) {
      vs_query Q = ladder[q];
      Q.timeout_ms = tmo;
      vs_model m = {0};
      vs_answer a = vs_find_diff(r->pc, kv, ref, &Q, &m, why, sizeof why);
      if (a == VS_UNSAT && q == 0) { proved = true; vs_model_free(&m); break; }
      if (a == VS_SAT) {
        if (confirm(V, l, &m, "value", msg)) found = true;
        else V->s->unconfirmed++;
      }
      vs_model_free(&m);
      if (a == VS_UNKNOWN && q == 0) continue;
    }
    if (found) return LV_CEX;
    if (!proved) {
      all_proved = false;
      if (!msg->n) {
        tr_buf_printf(msg, "differs over the reals on path %d but no model was confirmed concretely%s%s", i,
                      why[0] ? "; " : "", why);
        if (o->verbose) { tr_buf_puts(msg, "\n    kernel: "); vx_print(msg, kv, 4); tr_buf_puts(msg, "\n    ref:    "); vx_print(msg, ref, 4); }
      }
    }
  }
  if (all_struct) return LV_EQ_STRUCT;
  return all_proved ? LV_EQ_Z3 : LV_UNKNOWN;
}

/* exp overflow in the kernel that the reference does not have */
static bool overflow_check(vctx *V, const loc *l, vx *ref, tr_buf *msg) {
  int p = V->nin + l->out;
  vx *rexp[256], *kexp[256], *ra[256], *ka[256];
  int nr = vx_collect(ref, VX_FN, VX_FN_EXP, rexp, 256);
  for (int i = 0; i < nr; i++) ra[i] = rexp[i]->k[0];
  unsigned tmo = (unsigned)((V->o->budget_s > 0 ? V->o->budget_s : 10) * 1000 / 4);
  for (int i = 0; i < V->npaths; i++) {
    vx *kv = V->paths[i].val[p][l->flat];
    if (!kv) continue;
    int nk = vx_collect(kv, VX_FN, VX_FN_EXP, kexp, 256);
    if (!nk) continue;
    int nka = 0;
    for (int j = 0; j < nk; j++) {
      bool shared = false;
      for (int t = 0; t < nr; t++) shared |= rexp[t] == kexp[j];
      if (!shared) ka[nka++] = kexp[j]->k[0];
    }
    if (!nka) continue;
    vs_query Q = {1000, 0, tmo};
    vs_model m = {0};
    char why[200];
    /* 88.8: exp overflows f32 above ln(FLT_MAX) = 88.72 */
    if (vs_find_above(V->paths[i].pc, ka, nka, ra, nr, 88.8, &Q, &m, why, sizeof why) == VS_SAT &&
        confirm(V, l, &m, "overflow (an exp argument of the kernel passes 88.72, the reference's do not)", msg)) {
      vs_model_free(&m);
      return true;
    }
    vs_model_free(&m);
  }
  return false;
}

/* The reference's value of an integer or pred element as the kernel
 * stores it: a bitvector of the storage width, extended as its type. */
static vx *to_storage(vctx *V, int p, vx *ref) {
  tr_dtype dt = V->dtype[p];
  if (tr_dtype_is_float(dt)) return ref;
  int sw = 8 * tr_dtype_size(dt);
  if (ref->kind == VX_CONST) return vx_bvconst(V->cx, (uint64_t)(int64_t)ref->c, sw);
  if (!vx_is_bv(ref)) return vx_ite(V->cx, ref, vx_bvconst(V->cx, 1, sw), vx_bvconst(V->cx, 0, sw));
  if (ref->w < sw) return vx_bv(V->cx, tr_dtypes[dt].kind == TR_DK_SINT ? BV_SEXT : BV_ZEXT, sw, ref, NULL);
  return ref;
}

/* ---- kernel-wide findings ---- */

static void kernel_findings(vctx *V) {
  const tv_opts *o = V->o;
  vk_issue seen[64];
  int ns = 0;
  for (int i = 0; i < V->npaths; i++)
    for (int j = 0; j < V->paths[i].nissues; j++) {
      vk_issue *is = &V->paths[i].issues[j];
      bool dup = false;
      for (int t = 0; t < ns; t++) dup |= seen[t].kind == is->kind && seen[t].buf == is->buf;
      if (!dup && ns < 64) seen[ns++] = *is;
    }
  for (int t = 0; t < ns; t++) {
    vk_issue *is = &seen[t];
    tr_buf msg = {0};
    bool confirmed = false;
    tr_buf how = {0};
    if (is->kind == VK_ISSUE_OOB_READ || is->kind == VK_ISSUE_OOB_WRITE) {
      if (!o->cuda) {
        /* against a guard page on the side the access leaves by */
        tr_tensor **b = make_bufs(V, NULL);
        int rc = run_concrete(V, b, NULL, is->off < 0 ? -1 : 1, false);
        if (rc > 0) { confirmed = true; tr_buf_printf(&how, "confirmed: the native kernel dies of signal %d with buffers against guard pages", rc); save_bundle(V, b, is->msg); }
        free_bufs(V, b);
      } else {
        tr_tensor **b = make_bufs(V, NULL);
        vk_run_cfg c;
        fill_cfg(V, &c);
        c.conc = b;
        c.concrete = true;
        vx_ctx *cx = vx_ctx_new();
        vk_result r;
        tr_diag d = {0};
        if (vk_run(V->k, cx, &c, &r, &d) == TR_OK)
          for (int j = 0; j < r.nissues; j++) confirmed |= r.issues[j].kind == is->kind && r.issues[j].buf == is->buf;
        if (confirmed) tr_buf_puts(&how, "confirmed by a concrete run of the emulated grid (addresses do not depend on data)");
        vk_result_free(&r, V->nbufs);
        tr_diag_clear(&d);
        vx_ctx_free(cx);
        free_bufs(V, b);
      }
    } else if (is->kind == VK_ISSUE_RACE_WW || is->kind == VK_ISSUE_RACE_RW) {
      /* other schedules of the same block: the race is confirmed when one
       * of them fails the oracle */
      static const struct { bool rev; int q; const char *name; } sched[] = {
        {false, 0, "first-last to each barrier"}, {true, 0, "last-first to each barrier"},
        {false, 1, "in lockstep, one instruction each"}};
      for (size_t si = 0; si < sizeof sched / sizeof sched[0] && !confirmed; si++) {
        tr_tensor **f = make_bufs(V, NULL);
        if (run_concrete_q(V, f, NULL, 0, sched[si].rev, sched[si].q) == 0) {
          int out = -1;
          int64_t flat = -1;
          double kv, rv;
          if (judge(V, f, &out, &flat, &kv, &rv) == 1) {
            confirmed = true;
            tr_buf_printf(&how, "confirmed: with the threads scheduled %s, out%d", sched[si].name, out);
            print_index(&how, V->shape[V->nin + out], flat);
            tr_buf_printf(&how, " is %.9g, the reference %.9g", kv, rv);
            save_bundle(V, f, is->msg);
          }
        }
        free_bufs(V, f);
      }
    } else {
      continue; /* reads of never-written shared memory show in the values */
    }
    if (is->buf >= 0) tr_buf_printf(&msg, "buffer %d (%s%d) element %lld", is->buf, is->buf < V->nin ? "in" : "out",
                                     is->buf < V->nin ? is->buf : is->buf - V->nin, (long long)is->elem);
    else tr_buf_puts(&msg, "shared memory");
    fprintf(V->out, "kernel: %s: %s: %s\n  %s\n", confirmed ? "counterexample" : "unconfirmed", vk_issue_name(is->kind),
            tr_buf_str(&msg), is->msg);
    if (confirmed) {
      fprintf(V->out, "  %s\n", tr_buf_str(&how));
      V->s->kernel_findings++;
      V->s->found = true;
    } else V->s->unconfirmed++;
    tr_buf_free(&msg);
    tr_buf_free(&how);
  }
}

/* ---- random differential testing (for comparison, bench/) ---- */

static tr_status random_mode(vctx *V) {
  const tv_opts *o = V->o;
  V->s->random_first = -1;
  for (int seed = 0; seed < o->random_seeds; seed++) {
    tr_input_config ic;
    tr_input_config_init(&ic);
    ic.seed = (uint64_t)seed;
    tr_tensor **ins = NULL;
    int nins = 0;
    if (tr_inputs_make(o->m, &ic, &ins, &nins, V->d) != TR_OK) return TR_ERR_INVALID;
    tr_tensor **old = V->base;
    V->base = ins;
    tr_tensor **b = make_bufs(V, NULL);
    int rc = run_concrete(V, b, NULL, 1, false);
    int out = -1;
    int64_t flat = -1;
    double kv, rv;
    bool bad = rc > 0 || (rc == 0 && judge(V, b, &out, &flat, &kv, &rv) == 1);
    free_bufs(V, b);
    V->base = old;
    tr_inputs_free(ins, nins);
    if (rc < 0) return TR_ERR_INVALID;
    if (bad && o->verbose && rc == 0)
      fprintf(V->out, "random: seed %d: out%d element %lld: kernel %.9g, reference %.9g\n", seed, out,
              (long long)flat, kv, rv);
    if (bad) {
      V->s->random_failing++;
      if (V->s->random_first < 0) V->s->random_first = seed;
    }
  }
  fprintf(V->out, "random: %d of %d seeds fail (first: %d)\n", V->s->random_failing, o->random_seeds,
          V->s->random_first);
  V->s->found = V->s->random_failing > 0;
  return TR_OK;
}

/* ---- the driver ---- */

static tr_status setup(vctx *V) {
  const tv_opts *o = V->o;
  const tr_comp *e = o->m->entry;
  V->nin = e->nparams;
  const tr_instr *root = e->root;
  V->nout = root->op == TR_OP_TUPLE ? root->noperands : 1;
  V->nbufs = V->nin + V->nout;
  if (V->nbufs > 8) {
    tr_diag_errorf(V->d, "verify: kernels take at most 8 buffers (the reference has %d inputs and %d outputs)", V->nin, V->nout);
    return TR_ERR_UNSUPPORTED;
  }
  for (int p = 0; p < V->nbufs; p++) {
    const tr_shape *s = p < V->nin ? e->params[p]->shape : root->op == TR_OP_TUPLE ? root->operands[p - V->nin]->shape : root->shape;
    if (!tr_shape_is_array(s) || tr_shape_count(s) < 0) {
      tr_diag_errorf(V->d, "verify: %s %d is not a static array", p < V->nin ? "parameter" : "output", p < V->nin ? p : p - V->nin);
      return TR_ERR_UNSUPPORTED;
    }
    tr_dtype dt = s->dtype;
    bool ok = tr_dtype_is_float(dt) || tr_dtype_is_int(dt) || dt == TR_DT_PRED;
    if (!ok) {
      tr_diag_errorf(V->d, "verify: %s %d has dtype %s (modelled: floats, integers of every width, pred)",
                     p < V->nin ? "parameter" : "output", p < V->nin ? p : p - V->nin, tr_dtypes[dt].name);
      return TR_ERR_UNSUPPORTED;
    }
    V->shape[p] = s;
    V->dtype[p] = dt;
    V->count[p] = tr_shape_count(s);
    V->is_out[p] = p >= V->nin;
  }
  vr_index_params(o->m, V->index);
  tr_input_config ic;
  tr_input_config_init(&ic);
  ic.seed = o->seed;
  int nins = 0;
  if (tr_inputs_make(o->m, &ic, &V->base, &nins, V->d) != TR_OK) return TR_ERR_INVALID;
  /* The scratch folder in $TMPDIR (as targets' private folders), short
   * enough for the paths made in it (kernel.so, wrap.c). */
  const char *td = getenv("TMPDIR");
  if (!td || !*td) td = "/tmp";
  if (snprintf(V->work, sizeof V->work, "%s/trench-verify-XXXXXX", td) >= (int)sizeof V->work - 40) {
    V->work[0] = 0;
    tr_diag_errorf(V->d, "verify: TMPDIR is too long a path for the scratch folder: %s", td);
    return TR_ERR_IO;
  }
  if (!mkdtemp(V->work)) {
    tr_diag_errorf(V->d, "verify: cannot create a scratch folder in %s: %s", td, strerror(errno));
    V->work[0] = 0;
    return TR_ERR_IO;
  }
  if (o->guard_tmp) snprintf(o->guard_tmp, 4096, "%s", V->work);
  V->kpath = o->kernel_path;
  if (o->emitted) {
    /* the built-in compiler's unit exports trench_entry(in, out); a
     * wrapper gives it the kernel convention */
    char abs[4096];
    if (!realpath(o->kernel_path, abs)) {
      tr_diag_errorf(V->d, "verify: cannot resolve %s: %s", o->kernel_path, strerror(errno));
      return TR_ERR_IO;
    }
    snprintf(V->wrap, sizeof V->wrap, "%s/wrap.c", V->work);
    FILE *f = fopen(V->wrap, "w");
    if (!f) { tr_diag_errorf(V->d, "verify: cannot write %s", V->wrap); return TR_ERR_IO; }
    fprintf(f, "#include \"%s\"\nvoid kernel(", abs);
    for (int p = 0; p < V->nbufs; p++) fprintf(f, "%svoid *b%d", p ? ", " : "", p);
    fprintf(f, ") {\n  u8 *in[%d] = {", V->nin > 0 ? V->nin : 1);
    for (int p = 0; p < V->nin; p++) fprintf(f, "%sb%d", p ? ", " : "", p);
    fprintf(f, "};\n  u8 *out[%d] = {", V->nout);
    for (int p = V->nin; p < V->nbufs; p++) fprintf(f, "%sb%d", p > V->nin ? ", " : "", p);
    fprintf(f, "};\n  trench_entry(in, out);\n}\n");
    /* a caller with unknown formats keeps the float-format conversions'
     * parameters through interprocedural constant propagation: the
     * executor reads the format from them (docs/VERIFY.md); only those
     * the unit holds (the emitter leaves out the helpers it does not
     * call) */
    char *text = NULL;
    size_t tlen = 0;
    tr_diag rd = {0};
    bool from = false, to = false;
    if (tr_read_file(abs, &text, &tlen, &rd) == TR_OK) {
      from = strstr(text, "static u64 nf_from(") != NULL;
      to = strstr(text, "static double nf_to(") != NULL;
    }
    tr_free(text);
    tr_diag_clear(&rd);
    if (from || to)
      fprintf(f, "double trench_verify_formats(double v, u64 b, int nb, int eb, int mb, int bias, int fs) {\n"
                 "  return %s%s%s;\n}\n", from ? "(double)nf_from(v, nb, eb, mb, bias, fs)" : "",
              from && to ? " + " : "", to ? "nf_to(b, nb, eb, mb, bias, fs)" : "");
    fclose(f);
    V->kpath = V->wrap;
  }
  if (o->python) {
    /* a KernelBench-style source: its host wrapper's launch (kbench.c) */
    const tr_shape *shp[16];
    for (int p = 0; p < V->nin; p++) shp[p] = V->shape[p];
    vk_kbench_io io = {V->nin, V->dtype, shp, V->dtype[V->nin], V->work};
    if (V->nout != 1) {
      tr_diag_errorf(V->d, "verify: a .py host wrapper returns one tensor; the reference has %d outputs", V->nout);
      return TR_ERR_UNSUPPORTED;
    }
    tr_status ks = vk_kbench_prepare(o->kernel_path, &io, &V->launch, V->d);
    if (ks != TR_OK) return ks;
    V->kpath = V->launch.cu_path;
    memcpy(V->grid, V->launch.grid, sizeof V->grid);
    memcpy(V->block, V->launch.block, sizeof V->block);
    V->zero_out = V->launch.zero_out;
    fprintf(V->out, "launch: %s<<<(%u,%u,%u), (%u,%u,%u)>>> recorded from the host wrapper; outputs start %s\n",
            V->launch.kernel_name, V->grid[0], V->grid[1], V->grid[2], V->block[0], V->block[1], V->block[2],
            V->zero_out ? "zeroed (torch::zeros)" : "arbitrary (torch::empty)");
  }
  vk_compile_opts co = {o->cuda, V->work, o->cflags, &V->llvm};
  tr_status st = vk_load(V->kpath, &co, &V->k, V->d);
  if (st != TR_OK) return st;
  if (vk_nparams(V->k) != V->nbufs) {
    tr_diag_errorf(V->d, "%s: kernel takes %d pointer parameters; the reference needs %d (its %d inputs, then its %d outputs)",
                   V->kpath, vk_nparams(V->k), V->nbufs, V->nin, V->nout);
    return TR_ERR_INVALID;
  }
  return TR_OK;
}

/* The verification proper, in a heap frame (tr_verify_kernel). */
static tr_status verify_run(vctx *V) {
  const tv_opts *o = V->o;
  tv_summary *s = V->s;
  tr_diag *d = V->d;
  V->cx = vx_ctx_new();
  tr_status st = setup(V);
  if (st != TR_OK) return st;
  if (o->random_seeds > 0) return random_mode(V);
  if (!(o->locations ? parse_locations(V, o->locations, &V->L, &V->nl) : default_locations(V, &V->L, &V->nl)))
    return TR_ERR_USAGE;
  loc *L = V->L;
  int nl = V->nl;
  /* location slicing: a concrete pre-pass says which blocks write the
   * chosen locations; only they run symbolically */
  unsigned nblocks = o->cuda ? V->grid[0] * V->grid[1] * V->grid[2] : 1;
  if (o->cuda && nblocks > 1) {
    tr_tensor **b = make_bufs(V, NULL);
    vk_run_cfg c;
    fill_cfg(V, &c);
    c.conc = b;
    c.concrete = true;
    vx_ctx *cx = vx_ctx_new();
    vk_result r;
    tr_diag dd = {0};
    unsigned char *mask = V->mask = tr_xcalloc(nblocks, 1);
    if (vk_run(V->k, cx, &c, &r, &dd) == TR_OK) {
      for (int i = 0; i < nl; i++) {
        int32_t w = r.writer_block[V->nin + L[i].out][L[i].flat];
        int32_t w0 = r.writer_first[V->nin + L[i].out][L[i].flat];
        if (w >= 0) mask[w] = 1;
        if (w0 >= 0) mask[w0] = 1;
      }
    } else memset(mask, 1, nblocks);
    int nm = 0;
    for (unsigned i = 0; i < nblocks; i++) nm += mask[i];
    if (o->verbose) fprintf(V->out, "slicing: %d of %u blocks write the %d locations\n", nm, nblocks, nl);
    vk_result_free(&r, V->nbufs);
    tr_diag_clear(&dd);
    vx_ctx_free(cx);
    free_bufs(V, b);
  }
  double t0 = now();
  explore(V, V->mask);
  if (o->verbose) fprintf(V->out, "paths: %d%s (%.2fs)\n", V->npaths, V->paths_complete ? "" : " (incomplete)", now() - t0);
  if (V->npaths == 0) {
    tr_diag_errorf(d, "%s: %s", o->kernel_path, V->path_why);
    return V->path_st != TR_OK ? V->path_st : TR_ERR_UNSUPPORTED;
  }
  kernel_findings(V);
  if (o->first && s->found) nl = 0;
  tr_tensor *ints[16] = {0};
  for (int p = 0; p < V->nin; p++) if (V->index[p]) ints[p] = V->base[p];
  vr_ctx *R = V->R = vr_new(o->m, V->cx, ints);
  for (int i = 0; i < nl; i++) {
    double t1 = now();
    tr_buf where = {0}, msg = {0};
    tr_buf_printf(&where, "out%d", L[i].out);
    print_index(&where, V->shape[V->nin + L[i].out], L[i].flat);
    s->locations++;
    vx *ref = vr_elem(R, L[i].out, L[i].flat, d);
    const char *verdict;
    if (ref) ref = to_storage(V, V->nin + L[i].out, ref);
    if (!ref) {
      tr_buf_free(&where);
      return TR_ERR_UNSUPPORTED;
    }
    lverdict v = decide(V, &L[i], ref, &msg);
    if ((v == LV_EQ_STRUCT || v == LV_EQ_Z3) && !msg.n && overflow_check(V, &L[i], ref, &msg)) v = LV_CEX;
    if ((v == LV_EQ_STRUCT || v == LV_EQ_Z3) && !V->paths_complete) {
      v = LV_UNKNOWN;
      tr_buf_printf(&msg, "equal on the %d paths explored; %s", V->npaths, V->path_why);
    }
    switch (v) {
    case LV_EQ_STRUCT: verdict = "equivalent over the reals (same normal form)"; s->equivalent++; break;
    case LV_EQ_Z3: verdict = "equivalent over the reals (z3)"; s->equivalent++; break;
    case LV_CEX: verdict = "counterexample"; s->counterexamples++; s->found = true; break;
    default: verdict = "unknown"; s->unknown++; break;
    }
    fprintf(V->out, "%s: %s%s%s (%.2fs)\n", tr_buf_str(&where), verdict, msg.n ? ": " : "", tr_buf_str(&msg), now() - t1);
    tr_buf_free(&where);
    tr_buf_free(&msg);
    if (o->first && v == LV_CEX) break;
  }
  fprintf(V->out, "summary: %d locations: %d equivalent over the reals, %d counterexamples, %d unknown; "
                 "%d kernel-wide findings; %d paths%s\n",
          s->locations, s->equivalent, s->counterexamples, s->unknown, s->kernel_findings, V->npaths,
          V->paths_complete ? "" : " (incomplete)");
  return st;
}

/* What verify_run made, freed (after it returned). */
static void verify_free(vctx *V) {
  vr_free(V->R);
  tr_free(V->L);
  tr_free(V->mask);
  for (int i = 0; i < V->npaths; i++) vk_result_free(&V->paths[i], V->nbufs);
  tr_free(V->paths);
  if (V->base) tr_inputs_free(V->base, V->nin);
  vk_free(V->k);
  vx_ctx_free(V->cx);
}

typedef struct {
  vctx *V;
  tr_status st;
} verify_job;

static void verify_fn(void *p) {
  verify_job *j = p;
  j->st = verify_run(j->V);
}

/* Running out of memory anywhere (the executor's paths, the reference's
 * expressions, the solver's tables) unwinds the frame: what the heap held
 * is freed with it, the LLVM context is disposed of, the scratch folder
 * removed, and the verdict is "out of memory" (s->out_of_memory), never an
 * abort. */
tr_status tr_verify_kernel(const tv_opts *o, tv_summary *s, tr_diag *d) {
  memset(s, 0, sizeof *s);
  vctx V = {0};
  V.o = o; V.d = d; V.s = s;
  V.out = o->out ? o->out : stdout;
  memcpy(V.grid, o->grid, sizeof V.grid);
  memcpy(V.block, o->block, sizeof V.block);
  V.zero_out = o->zero_out;
  verify_job j = {&V, TR_OK};
  size_t bytes = 0;
  tr_status st;
  if (tr_heap_run(verify_fn, &j, &bytes)) {
    st = j.st;
    verify_free(&V);
  } else {
    vk_llvm_dispose(V.llvm);
    s->out_of_memory = true;
    if (V.oom[0]) tr_diag_errorf(d, "%s", V.oom);
    else tr_heap_diag(d, o->kernel_path ? o->kernel_path : "kernel", "verifying the kernel", bytes);
    st = TR_ERR_UNSUPPORTED;
  }
  if (o->guard_tmp) o->guard_tmp[0] = 0;
  if (V.work[0]) rm_work(V.work);
  return st;
}
