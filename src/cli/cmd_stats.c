/* cmd_stats.c - "trench stats": counts what a module is made of (ops,
 * dtypes, fusions) and, over many files, the percentiles that characterise a
 * corpus of production graphs the way their published CDFs do. */
#include "cli.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

static int run(int argc, char **argv);

const cli_cmd cli_cmd_stats = {
  "stats", "count ops, dtypes and fusions of HLO modules",
  "Usage: trench stats [OPTIONS] FILE...\n"
  "\n"
  "Prints for each HLO text FILE (\"-\" reads stdin):\n"
  "  module               the HloModule name\n"
  "  computations         computations, the entry and fusion bodies included\n"
  "  fusion_computations  computations called by a fusion instruction\n"
  "  instructions         instructions in all computations\n"
  "  entry_instructions   instructions in the entry computation\n"
  "  fusions              fusion instructions\n"
  "  fused_instructions   instructions inside fusion computations\n"
  "  parameters           parameter instructions in all computations\n"
  "  entry_parameters     parameters of the entry computation\n"
  "  constants            constant instructions\n"
  "  elided_constants     constants written as {...} (values unknown)\n"
  "  ops                  instructions per opcode, most frequent first\n"
  "  dtypes               result element types (per tuple leaf)\n"
  "With two or more files read, a table follows with the percentiles\n"
  "p0 p10 p25 p50 p75 p90 p100 (nearest rank: always a value some file has)\n"
  "over the files of: instructions, fusions, fused_instructions,\n"
  "computations. A FILE that fails is reported on stderr and skipped.\n"
  "\n"
  "Options:\n"
  "      --json    print the same as one JSON object:\n"
  "                {\"files\": [{\"file\":..., \"module\":..., counts...,\n"
  "                 \"ops\": {op: n}, \"dtypes\": {dtype: n}}, ...],\n"
  "                 \"failed\": [file, ...],\n"
  "                 \"percentiles\": {\"files\": n, \"instructions\": {\"p0\": n,\n"
  "                 ...}, ...}}   (\"percentiles\" only with two or more files)\n"
  "      --verify  also run the verifier; a file that fails it is skipped\n"
  "  -h, --help    show this help\n"
  "\n"
  "Exit codes:\n"
  "  0  every FILE was read\n"
  "  1  some FILE has a syntax (or, with --verify, verify) error\n"
  "  2  usage error or unreadable FILE\n",
  run,
};

/* ---- histograms ---- */
typedef struct {
  const char *name; /* op or dtype spelling */
  long long n;      /* occurrences */
} hist_entry;

typedef struct {
  hist_entry *v; /* entries, unordered until hist_sort */
  int n, cap;
} hist;

static void hist_add(hist *h, const char *name, long long n) {
  if (n == 0) return;
  for (int i = 0; i < h->n; i++)
    if (strcmp(h->v[i].name, name) == 0) {
      h->v[i].n += n;
      return;
    }
  if (h->n == h->cap) {
    h->cap = h->cap ? 2 * h->cap : 32;
    h->v = tr_xrealloc(h->v, (size_t)h->cap * sizeof *h->v);
  }
  h->v[h->n].name = name;
  h->v[h->n].n = n;
  h->n++;
}

static int hist_cmp(const void *pa, const void *pb) {
  const hist_entry *a = pa, *b = pb;
  if (a->n != b->n) return a->n > b->n ? -1 : 1;
  return strcmp(a->name, b->name);
}

static void hist_sort(hist *h) {
  if (h->n > 1) qsort(h->v, (size_t)h->n, sizeof *h->v, hist_cmp);
}

/* ---- one module ---- */
/* Counters shared by text and JSON output, in printing order. */
#define STATS_FIELDS(X)                                                        \
  X(computations) X(fusion_computations) X(instructions)                     \
  X(entry_instructions) X(fusions) X(fused_instructions) X(parameters)       \
  X(entry_parameters) X(constants) X(elided_constants)

typedef struct {
#define X(f) long long f;
  STATS_FIELDS(X)
#undef X
  hist ops;    /* sorted; names may point into the module */
  hist dtypes; /* sorted */
} mod_stats;

static void count_dtypes(long long *counts, const tr_shape *s) {
  if (s->dtype == TR_DT_TUPLE) {
    for (int i = 0; i < s->nelems; i++) count_dtypes(counts, s->elems[i]);
    return;
  }
  counts[s->dtype]++;
}

static void stats_compute(const tr_module *m, mod_stats *st) {
  memset(st, 0, sizeof *st);
  long long opcount[TR_OP_COUNT] = {0};
  long long dtcount[TR_DT_COUNT] = {0};
  /* Fusion bodies found in one pass over the fusion instructions, by
   * computation id: tr_comp_is_fusion_body per computation would scan the
   * module once per computation, slow on dumps with thousands of them. */
  int nids = m->next_id > 0 ? m->next_id : 1;
  bool *is_body = tr_xcalloc((size_t)nids, sizeof(bool));
  for (int k = 0; k < m->ncomps; k++) {
    const tr_comp *c = m->comps[k];
    for (int i = 0; i < c->ninstrs; i++) {
      tr_comp *f = tr_instr_fused(c->instrs[i]);
      if (f && f->id >= 0 && f->id < nids) is_body[f->id] = true;
    }
  }
  st->computations = m->ncomps;
  for (int k = 0; k < m->ncomps; k++) {
    const tr_comp *c = m->comps[k];
    bool body = c->id >= 0 && c->id < nids ? is_body[c->id]
                                           : tr_comp_is_fusion_body(m, c);
    if (body) {
      st->fusion_computations++;
      st->fused_instructions += c->ninstrs;
    }
    st->instructions += c->ninstrs;
    if (c == m->entry) {
      st->entry_instructions = c->ninstrs;
      st->entry_parameters = c->nparams;
    }
    for (int i = 0; i < c->ninstrs; i++) {
      const tr_instr *in = c->instrs[i];
      const char *sp = tr_ops[in->op].name;
      /* Async sugar keeps its own spelling (custom-call-start, ...). */
      if (in->opname && strcmp(in->opname, sp) != 0)
        hist_add(&st->ops, in->opname, 1);
      else
        opcount[in->op]++;
      if (in->op == TR_OP_FUSION) st->fusions++;
      if (in->op == TR_OP_PARAMETER) st->parameters++;
      if (in->op == TR_OP_CONSTANT) {
        st->constants++;
        if (in->literal && in->literal->elided) st->elided_constants++;
      }
      if (in->shape) count_dtypes(dtcount, in->shape);
    }
  }
  tr_free(is_body);
  for (int op = 0; op < TR_OP_COUNT; op++)
    hist_add(&st->ops, tr_ops[op].name[0] ? tr_ops[op].name : "?", opcount[op]);
  for (int t = 0; t < TR_DT_COUNT; t++)
    hist_add(&st->dtypes, tr_dtype_name((tr_dtype)t), dtcount[t]);
  hist_sort(&st->ops);
  hist_sort(&st->dtypes);
}

static void stats_free(mod_stats *st) {
  tr_free(st->ops.v);
  tr_free(st->dtypes.v);
}

static void print_hist(const char *title, const hist *h) {
  printf("  %s:\n", title);
  for (int i = 0; i < h->n; i++)
    printf("    %-22s %lld\n", h->v[i].name, h->v[i].n);
}

static void print_text(const char *file, const tr_module *m,
                       const mod_stats *st) {
  printf("file: %s\n", file);
  printf("  %-24s %s\n", "module", m->name ? m->name : "");
#define X(f) printf("  %-24s %lld\n", #f, st->f);
  STATS_FIELDS(X)
#undef X
  print_hist("ops", &st->ops);
  print_hist("dtypes", &st->dtypes);
}

static cJSON *hist_json(const hist *h) {
  cJSON *o = cJSON_CreateObject();
  for (int i = 0; i < h->n; i++)
    cJSON_AddNumberToObject(o, h->v[i].name, (double)h->v[i].n);
  return o;
}

static cJSON *stats_json(const char *file, const tr_module *m,
                         const mod_stats *st) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddStringToObject(o, "file", file);
  cJSON_AddStringToObject(o, "module", m->name ? m->name : "");
#define X(f) cJSON_AddNumberToObject(o, #f, (double)st->f);
  STATS_FIELDS(X)
#undef X
  cJSON_AddItemToObject(o, "ops", hist_json(&st->ops));
  cJSON_AddItemToObject(o, "dtypes", hist_json(&st->dtypes));
  return o;
}

/* ---- percentiles over files ---- */
static const int pcts[] = {0, 10, 25, 50, 75, 90, 100};
enum { NPCT = 7 };

/* Metrics of the percentile table. */
typedef enum { M_INSTRS, M_FUSIONS, M_FUSED, M_COMPS, M_COUNT } metric;
static const char *const metric_names[M_COUNT] = {
  "instructions", "fusions", "fused_instructions", "computations"};

static int ll_cmp(const void *pa, const void *pb) {
  long long a = *(const long long *)pa, b = *(const long long *)pb;
  return (a > b) - (a < b);
}

/* Nearest rank: the smallest value with at least p% of the files at or
 * below it; p0 is the minimum. Sorts v. */
static void percentiles(long long *v, int n, long long out[NPCT]) {
  qsort(v, (size_t)n, sizeof *v, ll_cmp);
  for (int i = 0; i < NPCT; i++) {
    long long r = ((long long)pcts[i] * n + 99) / 100; /* ceil(p*n/100) */
    int idx = r > 0 ? (int)r - 1 : 0;
    out[i] = v[idx];
  }
}

static void print_percentiles(long long p[M_COUNT][NPCT], int n) {
  printf("percentiles over %d files:\n  %-20s", n, "metric");
  for (int i = 0; i < NPCT; i++) {
    char key[8];
    snprintf(key, sizeof key, "p%d", pcts[i]);
    printf(" %9s", key);
  }
  printf("\n");
  for (int j = 0; j < M_COUNT; j++) {
    printf("  %-20s", metric_names[j]);
    for (int i = 0; i < NPCT; i++) printf(" %9lld", p[j][i]);
    printf("\n");
  }
}

static int run(int argc, char **argv) {
  const cli_cmd *cmd = &cli_cmd_stats;
  bool json = false, verify = false;
  char **files = tr_xcalloc((size_t)argc, sizeof(char *));
  int nfiles = 0;
  cli_opts o;
  cli_opts_init(&o, cmd, argc, argv);
  for (int k; (k = cli_opts_next(&o)) != 0;) {
    if (k == 'f') {
      files[nfiles++] = (char *)o.arg;
      continue;
    }
    cli_opt_help(&o);
    if (cli_opt_flag(&o, NULL, "--json"))
      json = true;
    else if (cli_opt_flag(&o, NULL, "--verify"))
      verify = true;
    else
      cli_usage_error(cmd, "unknown option '%s'", o.arg);
  }
  if (nfiles == 0) cli_usage_error(cmd, "no input files");

  long long *vals[M_COUNT];
  for (int j = 0; j < M_COUNT; j++)
    vals[j] = tr_xcalloc((size_t)nfiles, sizeof(long long));
  int nok = 0, rc = CLI_EXIT_OK;
  cJSON *root = json ? cJSON_CreateObject() : NULL;
  cJSON *jfiles = json ? cJSON_AddArrayToObject(root, "files") : NULL;
  cJSON *jfailed = json ? cJSON_AddArrayToObject(root, "failed") : NULL;
  for (int i = 0; i < nfiles; i++) {
    int frc;
    const char *name = cli_input_name(files[i]);
    tr_module *m = cli_load(files[i], verify, &frc);
    rc = cli_worse(rc, frc);
    if (!m) {
      if (json) cJSON_AddItemToArray(jfailed, cJSON_CreateString(name));
      continue;
    }
    mod_stats st;
    stats_compute(m, &st);
    if (json) {
      cJSON_AddItemToArray(jfiles, stats_json(name, m, &st));
    } else {
      if (nok > 0) printf("\n");
      print_text(name, m, &st);
    }
    vals[M_INSTRS][nok] = st.instructions;
    vals[M_FUSIONS][nok] = st.fusions;
    vals[M_FUSED][nok] = st.fused_instructions;
    vals[M_COMPS][nok] = st.computations;
    nok++;
    stats_free(&st);
    tr_module_free(m);
  }
  if (nok >= 2) {
    long long p[M_COUNT][NPCT];
    for (int j = 0; j < M_COUNT; j++) percentiles(vals[j], nok, p[j]);
    if (json) {
      cJSON *jp = cJSON_AddObjectToObject(root, "percentiles");
      cJSON_AddNumberToObject(jp, "files", nok);
      for (int j = 0; j < M_COUNT; j++) {
        cJSON *row = cJSON_AddObjectToObject(jp, metric_names[j]);
        for (int i = 0; i < NPCT; i++) {
          char key[8];
          snprintf(key, sizeof key, "p%d", pcts[i]);
          cJSON_AddNumberToObject(row, key, (double)p[j][i]);
        }
      }
    } else {
      printf("\n");
      print_percentiles(p, nok);
    }
  }
  if (json) {
    char *s = cJSON_Print(root);
    if (s) printf("%s\n", s);
    tr_free(s);
    cJSON_Delete(root);
  }
  for (int j = 0; j < M_COUNT; j++) tr_free(vals[j]);
  tr_free(files);
  return rc;
}
