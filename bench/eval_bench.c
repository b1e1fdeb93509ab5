/* eval_bench.c - speed of the reference interpreter (src/eval) in exact
 * mode: a synthetic dot/conv/elementwise/reduce suite, a naive-but-blocked
 * C dot compiled into this binary as the yardstick, optionally shadow mode
 * (its time over exact mode's), and every .hlo under a folder of real model
 * dumps. Also a bit-identity helper for kernel work: --variants --hash
 * prints one output hash per randomly shaped dot/convolution, to diff
 * before and after a change (--show I prints variant I and writes its
 * inputs and output as .npy). bench/README.md shows how to run it. */
#include "../src/eval/eval.h"
#include "../src/oracle/inputs.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* Shadow mode is compiled in only when the Makefile's probe found it and
 * this call compiles against it (make bench falls back without). */
#ifdef BENCH_SHADOW
#include "../src/eval/shadow.h"
#endif

/* ---- options ---- */

typedef struct {
  int reps;          /* timed runs per case; the median is reported */
  bool hash;         /* print an FNV-1a hash of every output */
  bool quick;        /* smaller sizes, for a smoke run */
  bool variants;     /* the bit-identity variant set instead of the suite */
  bool no_suite;     /* only the folder */
  int show;          /* --variants: print the HLO of this variant (-1: none) */
  int nvariants;     /* how many variants */
  const char *only;  /* run only cases whose name contains this */
  double file_limit; /* seconds per corpus file before it is skipped */
} opts;

/* --cpu: time is this process's CPU time (all its threads), which other
 * processes on a shared machine disturb far less than wall time; with
 * TRENCH_THREADS=1 it is the work done. Set once in main. */
static bool cpu_clock;

static double now_s(void) {
  struct timespec ts;
  clock_gettime(cpu_clock ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static double wall_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_dbl(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_dbl);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static uint64_t fnv(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = p;
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

static uint64_t hash_outputs(tr_tensor **outs, int n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; i++) {
    h = fnv(h, &outs[i]->dtype, sizeof outs[i]->dtype);
    h = fnv(h, outs[i]->data, outs[i]->nbytes);
  }
  return h;
}

/* ---- a loaded module with its inputs ---- */

typedef struct {
  tr_module *m;
  tr_tensor **args;
  int nargs;
} loaded;

static void unload(loaded *l) {
  tr_inputs_free(l->args, l->nargs);
  if (l->m) tr_module_free(l->m);
  memset(l, 0, sizeof *l);
}

/* Parses (elided constants filled), verifies and draws inputs with the
 * default policy (seed 0, specials at rate sp). On failure writes the first
 * diagnostic line into why. */
static bool load_text(const char *name, const char *text, size_t len, double sp, loaded *l,
                      char *why, size_t nwhy) {
  tr_diag d = {0};
  tr_parse_opts po = {true};
  memset(l, 0, sizeof *l);
  l->m = tr_parse(name, text, len, &po, &d);
  bool ok = l->m && tr_verify(l->m, &d) == TR_OK;
  if (ok) {
    tr_input_config cfg;
    tr_input_config_init(&cfg);
    cfg.special_rate = sp;
    ok = tr_inputs_make(l->m, &cfg, &l->args, &l->nargs, &d) == TR_OK;
  }
  if (!ok) {
    const char *f = tr_diag_first(&d);
    snprintf(why, nwhy, "%s", f ? f : "failed without a diagnostic");
    char *nl = strchr(why, '\n');
    if (nl) *nl = 0;
    unload(l);
  }
  tr_diag_clear(&d);
  return ok;
}

/* One exact evaluation; seconds, or -1 with why set. *h gets the outputs'
 * hash and *nout their element count. */
static double eval_once(const loaded *l, uint64_t *h, double *nout, char *why, size_t nwhy) {
  tr_eval_opts eo = {0};
  eo.verified = true;
  tr_diag d = {0};
  tr_tensor **outs = NULL;
  int n = 0;
  double t0 = now_s();
  tr_status st = tr_eval_opt(l->m, &eo, l->args, l->nargs, &outs, &n, &d);
  double t = now_s() - t0;
  if (st != TR_OK) {
    const char *f = tr_diag_first(&d);
    snprintf(why, nwhy, "%s", f ? f : "evaluation failed");
    char *nl = strchr(why, '\n');
    if (nl) *nl = 0;
    tr_diag_clear(&d);
    return -1;
  }
  if (h) *h = hash_outputs(outs, n);
  if (nout) {
    *nout = 0;
    for (int i = 0; i < n; i++) *nout += (double)tr_tensor_count(outs[i]);
  }
  tr_eval_free_outputs(outs, n);
  tr_diag_clear(&d);
  return t;
}

#ifdef BENCH_SHADOW
/* One shadow evaluation, or -1; *unc and *nel (when not NULL) get the
 * uncertain and total output element counts. The only place that knows
 * shadow mode's API (src/eval/shadow.h): adjust here if it changes. */
static double shadow_run(const loaded *l, double *unc, double *nel) {
  tr_shadow_opts so;
  memset(&so, 0, sizeof so);
  so.eval.verified = true;
  tr_diag d = {0};
  tr_shadow_out *outs = NULL;
  int n = 0;
  double t0 = now_s();
  tr_status st = tr_eval_shadow(l->m, &so, l->args, l->nargs, &outs, &n, &d);
  double t = now_s() - t0;
  if (st == TR_OK) {
    for (int i = 0; i < n; i++) {
      if (unc) *unc += (double)outs[i].nuncertain;
      if (nel) *nel += (double)outs[i].n;
    }
    tr_shadow_free(outs, n);
  }
  tr_diag_clear(&d);
  return st == TR_OK ? t : -1;
}

static double shadow_once(const loaded *l) { return shadow_run(l, NULL, NULL); }
#endif

/* Median time of reps exact runs (the first one warms up and also counts
 * when reps == 1). */
static double eval_median(const loaded *l, int reps, uint64_t *h, double *nout, char *why,
                          size_t nwhy) {
  double ts[64];
  if (reps > 64) reps = 64;
  double t = eval_once(l, h, nout, why, nwhy);
  if (t < 0) return t;
  if (reps == 1) return t;
  for (int i = 0; i < reps; i++) {
    ts[i] = eval_once(l, NULL, NULL, why, nwhy);
    if (ts[i] < 0) return ts[i];
  }
  return median(ts, reps);
}

/* ---- the yardstick: naive-but-blocked f32 dot ---- */

/* C[m,n] = A[m,k] B[k,n], i-k-j order in 64x64 blocks of (i, k); j runs
 * over whole rows so the compiler vectorizes the inner loop. Each C element
 * still sums its products in increasing k, like the reference's f32 dot,
 * so the two must agree bit for bit. */
static void blocked_dot(const float *A, const float *B, float *C, int m, int n, int k) {
  enum { BS = 64 };
  memset(C, 0, sizeof(float) * (size_t)m * (size_t)n);
  for (int i0 = 0; i0 < m; i0 += BS)
    for (int k0 = 0; k0 < k; k0 += BS)
      for (int i = i0; i < i0 + BS && i < m; i++)
        for (int kk = k0; kk < k0 + BS && kk < k; kk++) {
          float a = A[(size_t)i * (size_t)k + (size_t)kk];
          const float *b = B + (size_t)kk * (size_t)n;
          float *c = C + (size_t)i * (size_t)n;
          for (int j = 0; j < n; j++) {
            float p = a * b[j];
            c[j] = c[j] + p;
          }
        }
}

/* ---- the synthetic suite ---- */

typedef enum { K_DOT, K_CONV, K_ELEM, K_REDUCE } kind;

typedef struct {
  const char *name;
  kind k;
  double flops;   /* dot/conv: 2 per multiply-add */
  int bm, bn, bk, bbatch; /* f32 dots: the yardstick's shape (bbatch >= 1) */
  char *text;     /* HLO */
} bcase;

static char *xsprintf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *xsprintf(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *s = malloc((size_t)n + 1);
  if (!s) abort();
  va_start(ap, fmt);
  vsnprintf(s, (size_t)n + 1, fmt, ap);
  va_end(ap);
  return s;
}

static bcase dot_case(const char *name, const char *dt, const char *rt, int m, int n, int k) {
  bcase c = {name, K_DOT, 2.0 * m * n * k, 0, 0, 0, 0, NULL};
  c.text = xsprintf("HloModule %s\n\nENTRY e {\n"
                    "  a = %s[%d,%d] parameter(0)\n  b = %s[%d,%d] parameter(1)\n"
                    "  ROOT d = %s[%d,%d] dot(a, b), lhs_contracting_dims={1}, "
                    "rhs_contracting_dims={0}\n}\n",
                    name, dt, m, k, dt, k, n, rt, m, n);
  if (strcmp(dt, "f32") == 0 && strcmp(rt, "f32") == 0) {
    c.bm = m;
    c.bn = n;
    c.bk = k;
    c.bbatch = 1;
  }
  return c;
}

static int make_suite(bcase *cs, bool quick) {
  int nc = 0, s = quick ? 2 : 1;
  cs[nc++] = dot_case("dot_f32_256", "f32", "f32", 256 / s, 256 / s, 256 / s);
  cs[nc++] = dot_case("dot_f32_512", "f32", "f32", 512 / s, 512 / s, 512 / s);
  cs[nc++] = dot_case("dot_bf16_f32acc_256", "bf16", "f32", 256 / s, 256 / s, 256 / s);
  {
    int b = 16, m = 128 / s, k = 64, n = 128 / s;
    bcase c = {"dot_f32_batched_16x128x64x128", K_DOT, 2.0 * b * m * n * k, m, n, k, b, NULL};
    c.text = xsprintf("HloModule bdot\n\nENTRY e {\n"
                      "  a = f32[%d,%d,%d] parameter(0)\n  b = f32[%d,%d,%d] parameter(1)\n"
                      "  ROOT d = f32[%d,%d,%d] dot(a, b), lhs_batch_dims={0}, "
                      "lhs_contracting_dims={2}, rhs_batch_dims={0}, rhs_contracting_dims={1}\n}\n",
                      b, m, k, b, k, n, b, m, n);
    cs[nc++] = c;
  }
  {
    /* A transformer-style dot: the rhs contracts its last dim (x . W^T). */
    int m = 256 / s, k = 256 / s, n = 256 / s;
    bcase c = {"dot_f32_256_rhsT", K_DOT, 2.0 * m * n * k, 0, 0, 0, 0, NULL};
    c.text = xsprintf("HloModule dotT\n\nENTRY e {\n"
                      "  a = f32[%d,%d] parameter(0)\n  b = f32[%d,%d] parameter(1)\n"
                      "  ROOT d = f32[%d,%d] dot(a, b), lhs_contracting_dims={1}, "
                      "rhs_contracting_dims={1}\n}\n",
                      m, k, n, k, m, n);
    cs[nc++] = c;
  }
  {
    int N = 8 / s, H = 32, W = 32, C = 64, K = 64;
    bcase c = {"conv_f32_n8_32x32_c64_k64_3x3", K_CONV, 2.0 * N * H * W * K * C * 9, 0, 0, 0, 0,
               NULL};
    c.text = xsprintf("HloModule conv\n\nENTRY e {\n"
                      "  x = f32[%d,%d,%d,%d] parameter(0)\n  w = f32[3,3,%d,%d] parameter(1)\n"
                      "  ROOT c = f32[%d,%d,%d,%d] convolution(x, w), window={size=3x3 "
                      "pad=1_1x1_1}, dim_labels=b01f_01io->b01f\n}\n",
                      N, H, W, C, C, K, N, H, W, K);
    cs[nc++] = c;
  }
  {
    int N = 8 / s, H = 32, W = 32, C = 64, K = 64;
    bcase c = {"conv_f32_nchw_n8_32x32_c64_k64_3x3", K_CONV, 2.0 * N * H * W * K * C * 9, 0, 0,
               0, 0, NULL};
    c.text = xsprintf("HloModule convnchw\n\nENTRY e {\n"
                      "  x = f32[%d,%d,%d,%d] parameter(0)\n  w = f32[%d,%d,3,3] parameter(1)\n"
                      "  ROOT c = f32[%d,%d,%d,%d] convolution(x, w), window={size=3x3 "
                      "pad=1_1x1_1}, dim_labels=bf01_oi01->bf01\n}\n",
                      N, C, H, W, K, C, N, K, H, W);
    cs[nc++] = c;
  }
  int n = (1 << 20) / s;
  {
    bcase c = {"elem_f32_chain10_1M", K_ELEM, 0, 0, 0, 0, 0, NULL};
    c.text = xsprintf(
        "HloModule elem\n\nENTRY e {\n  x = f32[%d] parameter(0)\n  y = f32[%d] parameter(1)\n"
        "  a1 = f32[%d] add(x, y)\n  a2 = f32[%d] multiply(a1, x)\n"
        "  a3 = f32[%d] subtract(a2, y)\n  a4 = f32[%d] maximum(a3, x)\n"
        "  a5 = f32[%d] minimum(a4, y)\n  a6 = f32[%d] divide(a5, a1)\n"
        "  a7 = f32[%d] negate(a6)\n  a8 = f32[%d] abs(a7)\n"
        "  a9 = f32[%d] multiply(a8, a2)\n  ROOT a10 = f32[%d] add(a9, y)\n}\n",
        n, n, n, n, n, n, n, n, n, n, n, n);
    cs[nc++] = c;
  }
  {
    bcase c = {"elem_f32_transcendental10_1M", K_ELEM, 0, 0, 0, 0, 0, NULL};
    c.text = xsprintf(
        "HloModule elemt\n\nENTRY e {\n  x = f32[%d] parameter(0)\n"
        "  a1 = f32[%d] tanh(x)\n  a2 = f32[%d] exponential(a1)\n"
        "  a3 = f32[%d] log(a2)\n  a4 = f32[%d] logistic(a3)\n"
        "  a5 = f32[%d] sqrt(a4)\n  a6 = f32[%d] rsqrt(a5)\n"
        "  a7 = f32[%d] sine(a6)\n  a8 = f32[%d] cosine(a7)\n"
        "  a9 = f32[%d] exponential-minus-one(a8)\n  ROOT a10 = f32[%d] log-plus-one(a9)\n}\n",
        n, n, n, n, n, n, n, n, n, n, n);
    cs[nc++] = c;
  }
  {
    bcase c = {"elem_bf16_chain10_1M", K_ELEM, 0, 0, 0, 0, 0, NULL};
    c.text = xsprintf(
        "HloModule elemb\n\nENTRY e {\n  x = bf16[%d] parameter(0)\n  y = bf16[%d] parameter(1)\n"
        "  a1 = bf16[%d] add(x, y)\n  a2 = bf16[%d] multiply(a1, x)\n"
        "  a3 = bf16[%d] subtract(a2, y)\n  a4 = bf16[%d] maximum(a3, x)\n"
        "  a5 = bf16[%d] minimum(a4, y)\n  a6 = bf16[%d] divide(a5, a1)\n"
        "  a7 = bf16[%d] negate(a6)\n  a8 = bf16[%d] abs(a7)\n"
        "  a9 = bf16[%d] multiply(a8, a2)\n  ROOT a10 = bf16[%d] add(a9, y)\n}\n",
        n, n, n, n, n, n, n, n, n, n, n, n);
    cs[nc++] = c;
  }
  {
    bcase c = {"reduce_f32_add_1M_to_scalar", K_REDUCE, 0, 0, 0, 0, 0, NULL};
    c.text = xsprintf("HloModule red\n\nadd {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(p, q)\n}\n\nENTRY e {\n  x = f32[%d] parameter(0)\n"
                      "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(x, z), dimensions={0}, "
                      "to_apply=add\n}\n",
                      n);
    cs[nc++] = c;
  }
  {
    int rows = 1024 / s;
    bcase c = {"reduce_f32_add_rows_1024x1024", K_REDUCE, 0, 0, 0, 0, 0, NULL};
    c.text = xsprintf("HloModule redr\n\nadd {\n  p = f32[] parameter(0)\n  q = f32[] parameter(1)\n"
                      "  ROOT s = f32[] add(p, q)\n}\n\nENTRY e {\n  x = f32[%d,1024] parameter(0)\n"
                      "  z = f32[] constant(0)\n  ROOT r = f32[%d] reduce(x, z), dimensions={1}, "
                      "to_apply=add\n}\n",
                      rows, rows);
    cs[nc++] = c;
  }
  return nc;
}

/* Elements the case reads (the metric for elementwise and reduce). */
static double input_elems(const loaded *l) {
  double n = 0;
  for (int i = 0; i < l->nargs; i++) n += (double)tr_tensor_count(l->args[i]);
  return n;
}

/* Runs the yardstick on the case's f32 inputs; median seconds, and whether
 * its result has the same bits as the reference's. */
static double yardstick(const bcase *c, const loaded *l, int reps, bool *same) {
  const tr_tensor *a = l->args[0], *b = l->args[1];
  size_t per = (size_t)c->bm * (size_t)c->bn;
  float *C = malloc(sizeof(float) * per * (size_t)c->bbatch);
  if (!C) abort();
  double ts[64];
  if (reps > 64) reps = 64;
  for (int r = 0; r < reps; r++) {
    double t0 = now_s();
    for (int bi = 0; bi < c->bbatch; bi++)
      blocked_dot((const float *)a->data + (size_t)bi * (size_t)c->bm * (size_t)c->bk,
                  (const float *)b->data + (size_t)bi * (size_t)c->bk * (size_t)c->bn,
                  C + (size_t)bi * per, c->bm, c->bn, c->bk);
    ts[r] = now_s() - t0;
  }
  tr_eval_opts eo = {0};
  eo.verified = true;
  tr_diag d = {0};
  tr_tensor **outs = NULL;
  int n = 0;
  *same = false;
  if (tr_eval_opt(l->m, &eo, l->args, l->nargs, &outs, &n, &d) == TR_OK) {
    *same = n == 1 && outs[0]->nbytes == sizeof(float) * per * (size_t)c->bbatch &&
            memcmp(outs[0]->data, C, outs[0]->nbytes) == 0;
    tr_eval_free_outputs(outs, n);
  }
  tr_diag_clear(&d);
  free(C);
  return median(ts, reps);
}

static int run_suite(const opts *o) {
  bcase cs[32];
  int nc = make_suite(cs, o->quick), bad = 0;
  printf("%-36s %10s %14s  %s\n", "case", "ms", "rate", "notes");
  for (int i = 0; i < nc; i++) {
    bcase *c = &cs[i];
    if (o->only && !strstr(c->name, o->only)) {
      free(c->text);
      continue;
    }
    loaded l;
    char why[512];
    if (!load_text(c->name, c->text, strlen(c->text), 0, &l, why, sizeof why)) {
      printf("%-36s skipped: %s\n", c->name, why);
      free(c->text);
      bad++;
      continue;
    }
    uint64_t h = 0;
    double nout = 0;
    double t = eval_median(&l, o->reps, &h, &nout, why, sizeof why);
    if (t < 0) {
      printf("%-36s failed: %s\n", c->name, why);
      bad++;
    } else {
      char rate[64], notes[256] = "";
      size_t nn = 0;
      if (c->k == K_DOT || c->k == K_CONV)
        snprintf(rate, sizeof rate, "%.3f GFLOP/s", c->flops / t * 1e-9);
      else
        snprintf(rate, sizeof rate, "%.1f Melem/s", input_elems(&l) / t * 1e-6);
      if (c->bbatch) {
        bool same;
        double tb = yardstick(c, &l, o->reps, &same);
        nn += (size_t)snprintf(notes + nn, sizeof notes - nn,
                               "blocked-C %.3f GFLOP/s, exact/blocked %.2fx, bits %s",
                               c->flops / tb * 1e-9, t / tb, same ? "same" : "DIFFER");
      }
#ifdef BENCH_SHADOW
      {
        /* Shadow and exact runs interleaved, so a change in the machine's
         * load (it is shared) hits both medians alike. */
        double ts[16], te[16];
        int r = o->reps < 16 ? o->reps : 16, ok = 1;
        for (int k = 0; k < r && ok; k++) {
          ok = (ts[k] = shadow_once(&l)) >= 0;
          te[k] = eval_once(&l, NULL, NULL, why, sizeof why);
          ok = ok && te[k] >= 0;
        }
        /* Both exact medians are shown: a shadow run changes the heap
         * the next exact run allocates from (pages freed or kept), so the
         * interleaved exact time may differ from the one above. */
        if (ok) {
          double ms = median(ts, r), me = median(te, r);
          nn += (size_t)snprintf(notes + nn, sizeof notes - nn,
                                 "%sshadow %.2f ms, shadow/exact %.2fx (exact %.2f ms beside it)",
                                 nn ? ", " : "", ms * 1e3, ms / me, me * 1e3);
        }
        else
          nn += (size_t)snprintf(notes + nn, sizeof notes - nn, "%sshadow failed",
                                 nn ? ", " : "");
      }
#endif
      if (o->hash)
        snprintf(notes + nn, sizeof notes - nn, "%shash %016llx", nn ? ", " : "",
                 (unsigned long long)h);
      printf("%-36s %10.2f %14s  %s\n", c->name, t * 1e3, rate, notes);
    }
    fflush(stdout);
    unload(&l);
    free(c->text);
  }
  return bad ? 1 : 0;
}

/* ---- bit-identity variants: random dot and convolution shapes and
 * elementwise chains ---- */

static uint64_t rng_next(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

static int rnd(uint64_t *s, int lo, int hi) { /* in [lo, hi] */
  return lo + (int)(rng_next(s) % (uint64_t)(hi - lo + 1));
}

static void shuffle(uint64_t *s, int *v, int n) {
  for (int i = n - 1; i > 0; i--) {
    int j = rnd(s, 0, i), t = v[i];
    v[i] = v[j];
    v[j] = t;
  }
}

typedef struct {
  char b[4096];
  size_t n;
} sbuf;

static void sb(sbuf *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb(sbuf *s, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int k = vsnprintf(s->b + s->n, sizeof s->b - s->n, fmt, ap);
  va_end(ap);
  if (k > 0) s->n += (size_t)k;
  if (s->n >= sizeof s->b) s->n = sizeof s->b - 1;
}

static void sb_dims(sbuf *s, const int *d, int n) {
  sb(s, "[");
  for (int i = 0; i < n; i++) sb(s, "%s%d", i ? "," : "", d[i]);
  sb(s, "]");
}

static void sb_list(sbuf *s, const char *name, const int *d, int n) {
  sb(s, ", %s={", name);
  for (int i = 0; i < n; i++) sb(s, "%s%d", i ? "," : "", d[i]);
  sb(s, "}");
}

/* The (operand, result) dtypes a variant uses. */
static void pick_types(uint64_t *s, const char **dt, const char **rt) {
  static const char *ts[][2] = {{"f32", "f32"}, {"f32", "f32"}, {"f64", "f64"},
                                {"bf16", "bf16"}, {"f16", "f16"}, {"bf16", "f32"},
                                {"s32", "s32"}, {"s8", "s8"},   {"u8", "u8"},
                                {"pred", "pred"}, {"s8", "s32"}, {"f8e4m3fn", "f32"}};
  int i = rnd(s, 0, (int)(sizeof ts / sizeof ts[0]) - 1);
  *dt = ts[i][0];
  *rt = ts[i][1];
}

/* A random dot_general: batch, contracting and free dims in random
 * positions of either operand. big: sizes large enough to split between
 * threads. */
static void dot_variant(uint64_t *s, sbuf *t, bool big) {
  const char *dt, *rt;
  pick_types(s, &dt, &rt);
  int nb = rnd(s, 0, 2), nc = rnd(s, 0, 2), nlf = rnd(s, 0, 2), nrf = rnd(s, 0, 2);
  int bsz[2], csz[2], lsz[2], rsz[2];
  int hi = big ? 40 : 9;
  for (int i = 0; i < 2; i++) {
    bsz[i] = rnd(s, 1, big ? 3 : 4);
    csz[i] = rnd(s, big ? 1 : 0, hi + (big ? 60 : 0));
    lsz[i] = rnd(s, big ? 1 : 0, hi + (big ? 60 : 0));
    rsz[i] = rnd(s, big ? 1 : 0, hi + (big ? 60 : 0));
  }
  /* Logical dims 0..nb-1 batch, then contracting, then free; placed at
   * random positions of each operand. */
  int lr = nb + nc + nlf, rr = nb + nc + nrf, lp[6], rp[6];
  for (int i = 0; i < lr; i++) lp[i] = i;
  for (int i = 0; i < rr; i++) rp[i] = i;
  shuffle(s, lp, lr);
  shuffle(s, rp, rr);
  int ld[6], rd[6], od[6], no = 0;
  for (int i = 0; i < nb; i++) ld[lp[i]] = rd[rp[i]] = bsz[i];
  for (int i = 0; i < nc; i++) ld[lp[nb + i]] = rd[rp[nb + i]] = csz[i];
  for (int i = 0; i < nlf; i++) ld[lp[nb + nc + i]] = lsz[i];
  for (int i = 0; i < nrf; i++) rd[rp[nb + nc + i]] = rsz[i];
  for (int i = 0; i < nb; i++) od[no++] = bsz[i];
  for (int p = 0; p < lr; p++) /* lhs free dims in lhs order */
    for (int i = 0; i < nlf; i++)
      if (lp[nb + nc + i] == p) od[no++] = lsz[i];
  for (int p = 0; p < rr; p++)
    for (int i = 0; i < nrf; i++)
      if (rp[nb + nc + i] == p) od[no++] = rsz[i];
  int lb[2], rb[2], lc[2], rc[2];
  for (int i = 0; i < nb; i++) lb[i] = lp[i], rb[i] = rp[i];
  for (int i = 0; i < nc; i++) lc[i] = lp[nb + i], rc[i] = rp[nb + i];
  sb(t, "HloModule v\n\nENTRY e {\n  a = %s", dt);
  sb_dims(t, ld, lr);
  sb(t, " parameter(0)\n  b = %s", dt);
  sb_dims(t, rd, rr);
  sb(t, " parameter(1)\n  ROOT d = %s", rt);
  sb_dims(t, od, no);
  sb(t, " dot(a, b)");
  if (nb) sb_list(t, "lhs_batch_dims", lb, nb);
  sb_list(t, "lhs_contracting_dims", lc, nc);
  if (nb) sb_list(t, "rhs_batch_dims", rb, nb);
  sb_list(t, "rhs_contracting_dims", rc, nc);
  sb(t, "\n}\n");
}

/* A random convolution: layouts, strides, padding (negative too),
 * dilations, reversal, feature or batch groups. */
static bool conv_variant(uint64_t *s, sbuf *t, bool big) {
  const char *dt, *rt;
  pick_types(s, &dt, &rt);
  if (strcmp(dt, "pred") == 0) dt = rt = "f32";
  int ns = rnd(s, 0, 9) < 7 ? 2 : rnd(s, 0, 1) ? 1 : 3;
  int G = 1, B = 1;
  int r = rnd(s, 0, 5);
  if (r == 0) G = rnd(s, 2, 3);
  else if (r == 1) B = rnd(s, 2, 3);
  int N = B * rnd(s, 1, big ? 4 : 2), Cg = rnd(s, 1, big ? 24 : 4), Og = rnd(s, 1, big ? 24 : 4);
  if (G > 1 && rnd(s, 0, 1)) { /* depthwise: one input feature per group, many groups */
    Cg = 1;
    G = rnd(s, 2, big ? 40 : 9);
    Og = rnd(s, 0, 2) ? 1 : rnd(s, 2, 3);
  }
  int C = G * Cg, O = G * B * Og;
  int in[3], ksz[3], st[3], plo[3], phi[3], ld[3], rdl[3], rev[3], out[3];
  for (int i = 0; i < ns; i++) {
    in[i] = rnd(s, 1, big ? (ns == 3 ? 8 : 24) : 7);
    ksz[i] = rnd(s, 1, 3);
    st[i] = rnd(s, 1, 2);
    plo[i] = rnd(s, -1, 2);
    phi[i] = rnd(s, -1, 2);
    ld[i] = rnd(s, 0, 3) ? 1 : 2;
    rdl[i] = rnd(s, 0, 3) ? 1 : 2;
    rev[i] = rnd(s, 0, 4) == 0;
    int padded = (in[i] - 1) * ld[i] + 1 + plo[i] + phi[i];
    int dw = (ksz[i] - 1) * rdl[i] + 1;
    out[i] = padded >= dw ? (padded - dw) / st[i] + 1 : 0;
    if (out[i] <= 0) return false;
  }
  /* Labels: a random order of b, f and the spatial digits per operand. */
  char il[6], kl[6], ol[6];
  int perm[5], nl = ns + 2;
  const char *ib = "bf012", *kb = "io012";
  for (int i = 0; i < nl; i++) perm[i] = i;
  shuffle(s, perm, nl);
  for (int i = 0; i < nl; i++) il[i] = ib[perm[i]];
  il[nl] = 0;
  int idims[5], kdims[5], odims[5];
  for (int i = 0; i < nl; i++)
    idims[i] = perm[i] == 0 ? N : perm[i] == 1 ? C : in[perm[i] - 2];
  shuffle(s, perm, nl);
  for (int i = 0; i < nl; i++) kl[i] = kb[perm[i]];
  kl[nl] = 0;
  for (int i = 0; i < nl; i++)
    kdims[i] = perm[i] == 0 ? Cg : perm[i] == 1 ? O : ksz[perm[i] - 2];
  shuffle(s, perm, nl);
  for (int i = 0; i < nl; i++) ol[i] = ib[perm[i]];
  ol[nl] = 0;
  for (int i = 0; i < nl; i++)
    odims[i] = perm[i] == 0 ? N / B : perm[i] == 1 ? O : out[perm[i] - 2];
  /* Labels use digits 0..ns-1 in the order of the spatial dims. */
  sb(t, "HloModule v\n\nENTRY e {\n  x = %s", dt);
  sb_dims(t, idims, nl);
  sb(t, " parameter(0)\n  w = %s", dt);
  sb_dims(t, kdims, nl);
  sb(t, " parameter(1)\n  ROOT c = %s", rt);
  sb_dims(t, odims, nl);
  sb(t, " convolution(x, w), window={size=");
  for (int i = 0; i < ns; i++) sb(t, "%s%d", i ? "x" : "", ksz[i]);
  sb(t, " stride=");
  for (int i = 0; i < ns; i++) sb(t, "%s%d", i ? "x" : "", st[i]);
  sb(t, " pad=");
  for (int i = 0; i < ns; i++) sb(t, "%s%d_%d", i ? "x" : "", plo[i], phi[i]);
  sb(t, " lhs_dilate=");
  for (int i = 0; i < ns; i++) sb(t, "%s%d", i ? "x" : "", ld[i]);
  sb(t, " rhs_dilate=");
  for (int i = 0; i < ns; i++) sb(t, "%s%d", i ? "x" : "", rdl[i]);
  /* trench's parser rejects "rhs_reversal=0x1" (it seems to lex "0x1" as
   * one hex number; reported), so the field is written only when it
   * starts with 1. */
  if (rev[0]) {
    sb(t, " rhs_reversal=");
    for (int i = 0; i < ns; i++) sb(t, "%s%d", i ? "x" : "", rev[i]);
  }
  sb(t, "}, dim_labels=%s_%s->%s", il, kl, ol);
  if (G > 1) sb(t, ", feature_group_count=%d", G);
  if (B > 1) sb(t, ", batch_group_count=%d", B);
  sb(t, "\n}\n");
  return true;
}

/* A random elementwise chain with every intermediate in the root tuple. */
static void elem_variant(uint64_t *s, sbuf *t) {
  static const char *dts[] = {"f32", "f32", "f32", "f64", "bf16", "f16"};
  static const char *bin[] = {"add", "subtract", "multiply", "divide", "maximum",
                              "minimum", "remainder", "power", "atan2"};
  static const char *un[] = {"negate", "abs", "sqrt", "exponential", "tanh", "floor", "log"};
  const char *dt = dts[rnd(s, 0, 5)];
  int n = rnd(s, 1, 3000), nv = 3, nops = rnd(s, 4, 12);
  sb(t, "HloModule v\n\nENTRY e {\n");
  for (int i = 0; i < 3; i++) sb(t, "  v%d = %s[%d] parameter(%d)\n", i, dt, n, i);
  for (int k = 0; k < nops; k++, nv++) {
    int a = rnd(s, 0, nv - 1), b = rnd(s, 0, nv - 1);
    if (rnd(s, 0, 3))
      sb(t, "  v%d = %s[%d] %s(v%d, v%d)\n", nv, dt, n, bin[rnd(s, 0, 8)], a, b);
    else
      sb(t, "  v%d = %s[%d] %s(v%d)\n", nv, dt, n, un[rnd(s, 0, 6)], a);
  }
  sb(t, "  ROOT r = (");
  for (int i = 3; i < nv; i++) sb(t, "%s%s[%d]", i > 3 ? ", " : "", dt, n);
  sb(t, ") tuple(");
  for (int i = 3; i < nv; i++) sb(t, "%sv%d", i > 3 ? ", " : "", i);
  sb(t, ")\n}\n");
}

static int run_variants(const opts *o) {
  int nfail = 0, nskip = 0;
  for (int v = 0; v < o->nvariants; v++) {
    uint64_t s = 0x5eed0000ull + (uint64_t)v;
    bool big = v % 10 == 9, conv = v % 2 == 1, elem = v % 10 == 4;
    const char *vk = conv ? "conv" : elem ? "elem" : "dot";
    sbuf t = {{0}, 0};
    if (elem) {
      elem_variant(&s, &t);
    } else if (conv) {
      int tries = 0;
      while (!conv_variant(&s, &t, big) && tries++ < 100) t.n = 0;
    } else {
      dot_variant(&s, &t, big);
    }
    loaded l;
    char why[512], name[32];
    snprintf(name, sizeof name, "variant%d", v);
    if (v == o->show) fputs(t.b, stdout);
    /* Specials (NaN, Inf, -0) in a tenth of the variants' elements. */
    if (!load_text(name, t.b, t.n, v % 3 == 0 ? 0.1 : 0, &l, why, sizeof why)) {
      printf("%s %s skip: %s\n", name, vk, why);
      if (o->hash) fputs(t.b, stdout);
      nskip++;
      continue;
    }
    uint64_t h = 0;
    double t0 = eval_once(&l, &h, NULL, why, sizeof why);
    if (v == o->show && t0 >= 0) { /* also write its inputs and output as .npy */
      tr_eval_opts eo = {0};
      tr_diag d = {0};
      tr_tensor **outs = NULL;
      int n = 0;
      if (tr_eval_opt(l.m, &eo, l.args, l.nargs, &outs, &n, &d) == TR_OK) {
        for (int i = 0; i < l.nargs; i++) {
          char *p = xsprintf("variant%d.in%d.npy", v, i);
          tr_npy_write(p, l.args[i], &d);
          free(p);
        }
        for (int i = 0; i < n; i++) {
          char *p = xsprintf("variant%d.out%d.npy", v, i);
          tr_npy_write(p, outs[i], &d);
          free(p);
        }
        tr_eval_free_outputs(outs, n);
      }
      tr_diag_clear(&d);
    }
    if (t0 < 0) {
      printf("%s %s failed: %s\n", name, vk, why);
      nfail++;
    } else {
      printf("%s %s %016llx\n", name, vk, (unsigned long long)h);
    }
    unload(&l);
  }
  fprintf(stderr, "variants: %d, skipped %d, failed %d\n", o->nvariants, nskip, nfail);
  return nfail ? 1 : 0;
}

/* ---- a folder of real dumps ---- */

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void collect(const char *dir, char ***v, int *n, int *cap) {
  DIR *d = opendir(dir);
  if (!d) return;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    char *p = xsprintf("%s/%s", dir, e->d_name);
    struct stat st;
    if (stat(p, &st) == 0 && S_ISDIR(st.st_mode)) {
      collect(p, v, n, cap);
      free(p);
    } else if (strlen(p) > 4 && strcmp(p + strlen(p) - 4, ".hlo") == 0) {
      if (*n == *cap) {
        *cap = *cap ? 2 * *cap : 64;
        *v = realloc(*v, sizeof(char *) * (size_t)*cap);
        if (!*v) abort();
      }
      (*v)[(*n)++] = p;
    } else {
      free(p);
    }
  }
  closedir(d);
}

/* Replaces the drawn inputs of l by the .npy files next to the module, if
 * there are: for DIR/A.B.C.hlo the first of the folders DIR/A.B.C.inputs,
 * DIR/A.B.inputs, DIR/A.inputs that exists, holding p0.npy, p1.npy, ...
 * (or in0.npy, in1.npy, ... as trench run --out writes them), one per
 * entry input leaf in order. Returns the folder used, or NULL (drawn
 * inputs; *why says why when a folder was there but did not fit). */
static char *file_inputs(const char *path, loaded *l, char *why, size_t nwhy) {
  why[0] = 0;
  size_t len = strlen(path) - 4; /* without .hlo */
  const char *base = strrchr(path, '/');
  size_t from = base ? (size_t)(base - path) + 1 : 0;
  for (size_t stem = len; stem > from; stem--) {
    if (stem != len && path[stem] != '.') continue;
    char *dir = xsprintf("%.*s.inputs", (int)stem, path);
    struct stat st;
    if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
      free(dir);
      continue;
    }
    static const char *pfx[2] = {"p", "in"};
    for (int q = 0; q < 2; q++) {
      tr_tensor **ts = calloc((size_t)(l->nargs > 0 ? l->nargs : 1), sizeof *ts);
      if (!ts) abort();
      bool ok = true;
      for (int j = 0; j < l->nargs && ok; j++) {
        char *f = xsprintf("%s/%s%d.npy", dir, pfx[q], j);
        tr_diag d = {0};
        const tr_tensor *want = l->args[j];
        bool there = stat(f, &st) == 0;
        ok = there && tr_npy_read(f, want->dtype, &ts[j], &d) == TR_OK &&
             ts[j]->dtype == want->dtype && ts[j]->rank == want->rank;
        for (int r = 0; ok && r < want->rank; r++) ok = ts[j]->dims[r] == want->dims[r];
        if (!ok && there) snprintf(why, nwhy, "%s does not fit input %d", f, j);
        tr_diag_clear(&d);
        free(f);
      }
      char *extra = xsprintf("%s/%s%d.npy", dir, pfx[q], l->nargs);
      if (ok && stat(extra, &st) == 0) {
        snprintf(why, nwhy, "%s has more files than the %d inputs", dir, l->nargs);
        ok = false;
      }
      free(extra);
      if (ok) {
        why[0] = 0;
        tr_inputs_free(l->args, l->nargs);
        l->args = ts;
        return dir;
      }
      tr_inputs_free(ts, l->nargs);
    }
    free(dir);
    /* The nearest folder that exists decides; a wider one is for
     * another module. */
    return NULL;
  }
  return NULL;
}

/* Evaluates one file in this (child) process and prints its line. */
static int bench_file(const char *path, const opts *o) {
  char *text = NULL, why[512];
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(path, &text, &len, &d) != TR_OK) {
    printf("%-60s skip: cannot read\n", path);
    tr_diag_clear(&d);
    return 0;
  }
  loaded l;
  if (!load_text(path, text, len, 0, &l, why, sizeof why)) {
    printf("%-60s skip: %s\n", path, why);
    free(text);
    return 0;
  }
  free(text);
  char *indir = file_inputs(path, &l, why, sizeof why);
  if (why[0]) printf("%-60s note: %s; drawn inputs\n", path, why);
  uint64_t h = 0;
  double nout = 0;
  double t = eval_once(&l, &h, &nout, why, sizeof why);
  /* Fast files get repeated for a steadier median. */
  if (t >= 0 && t < 0.5 && o->reps > 1) t = eval_median(&l, o->reps, NULL, NULL, why, sizeof why);
  if (t < 0) {
    printf("%-60s skip: %s\n", path, why);
  } else {
    char extra[160] = "";
#ifdef BENCH_SHADOW
    double unc = 0, nel = 0;
    double ts = shadow_run(&l, &unc, &nel);
    /* Fast files: the median of several shadow runs too. */
    if (ts >= 0 && ts < 0.5 && o->reps > 1) {
      double v[16];
      int r = o->reps < 16 ? o->reps : 16, k = 0;
      for (; k < r && (v[k] = shadow_once(&l)) >= 0; k++) {}
      if (k == r) ts = median(v, r);
    }
    if (ts >= 0)
      snprintf(extra, sizeof extra, "  shadow %.3f ms, shadow/exact %.2fx, %.0f of %.0f uncertain",
               ts * 1e3, ts / t, unc, nel);
    else snprintf(extra, sizeof extra, "  shadow failed");
#endif
    double nin = 0;
    for (int j = 0; j < l.nargs; j++) nin += (double)tr_tensor_count(l.args[j]);
    printf("%-44s %9.3f ms %9.0f out %9.3g in/s %9.3g out/s  inputs %s%s", path, t * 1e3, nout,
           t > 0 ? nin / t : 0, t > 0 ? nout / t : 0, indir ? "from .npy" : "drawn", extra);
    if (o->hash) printf("  hash %016llx", (unsigned long long)h);
    printf("\n");
  }
  free(indir);
  unload(&l);
  return 0;
}

/* Each file runs in a child so a crash or a runaway loop skips that file
 * instead of ending the run. */
static int run_folder(const char *dir, const opts *o) {
  char **files = NULL;
  int n = 0, cap = 0, nto = 0, ncrash = 0;
  collect(dir, &files, &n, &cap);
  if (n == 0) {
    fprintf(stderr, "eval_bench: no .hlo files under %s\n", dir);
    return 2;
  }
  qsort(files, (size_t)n, sizeof *files, cmp_str);
  double t0 = wall_s();
  for (int i = 0; i < n; i++) {
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) {
      perror("fork");
      return 2;
    }
    if (pid == 0) {
      int rc = bench_file(files[i], o);
      fflush(stdout);
      _exit(rc);
    }
    double start = wall_s();
    int status = 0;
    for (;;) {
      pid_t w = waitpid(pid, &status, WNOHANG);
      if (w == pid) break;
      if (wall_s() - start > o->file_limit) {
        kill(pid, SIGKILL);
        waitpid(pid, &status, 0);
        printf("%-60s skip: over the %.0f s limit\n", files[i], o->file_limit);
        nto++;
        status = 0;
        break;
      }
      struct timespec ts = {0, 2000000};
      nanosleep(&ts, NULL);
    }
    if (WIFSIGNALED(status)) {
      printf("%-60s skip: crashed (signal %d)\n", files[i], WTERMSIG(status));
      ncrash++;
    }
    free(files[i]);
  }
  free(files);
  printf("folder %s: %d files, %d over the limit, %d crashed, %.1f s\n", dir, n, nto, ncrash,
         wall_s() - t0);
  return 0;
}

static void usage(void) {
  fprintf(stderr,
          "usage: eval_bench [--reps N] [--quick] [--hash] [--cpu] [--only NAME] [--no-suite]\n"
          "                  [--limit SECONDS] [DIR]\n"
          "       eval_bench --variants [N] [--hash] [--show I]\n");
}

/* As the trench command does (src/cli/main.c): large blocks from the
 * heap, freed memory kept, so runs do not fault their pages in afresh. */
static void tune_malloc(void) {
#ifdef __GLIBC__
  mallopt(M_MMAP_THRESHOLD, 32 << 20);
  mallopt(M_TRIM_THRESHOLD, 1 << 30);
#endif
}

int main(int argc, char **argv) {
  tune_malloc();
  opts o = {5, false, false, false, false, -1, 400, NULL, 60};
  const char *dir = NULL;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "--reps") == 0 && i + 1 < argc) o.reps = atoi(argv[++i]);
    else if (strcmp(a, "--quick") == 0) o.quick = true;
    else if (strcmp(a, "--no-suite") == 0) o.no_suite = true;
    else if (strcmp(a, "--show") == 0 && i + 1 < argc) o.show = atoi(argv[++i]);
    else if (strcmp(a, "--hash") == 0) o.hash = true;
    else if (strcmp(a, "--cpu") == 0) cpu_clock = true;
    else if (strcmp(a, "--only") == 0 && i + 1 < argc) o.only = argv[++i];
    else if (strcmp(a, "--limit") == 0 && i + 1 < argc) o.file_limit = atof(argv[++i]);
    else if (strcmp(a, "--variants") == 0) {
      o.variants = true;
      if (i + 1 < argc && argv[i + 1][0] >= '0' && argv[i + 1][0] <= '9')
        o.nvariants = atoi(argv[++i]);
    } else if (a[0] == '-') {
      usage();
      return 2;
    } else dir = a;
  }
  if (o.reps < 1) o.reps = 1;
  if (o.variants) return run_variants(&o);
  int rc = o.no_suite ? 0 : run_suite(&o);
  if (dir) rc |= run_folder(dir, &o);
  return rc;
}
