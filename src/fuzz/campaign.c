/* campaign.c - the fuzz campaign (campaign.h). One parent process hands
 * test numbers to J worker processes over pipes and owns everything
 * durable: the log, the findings folder, deduplication, the progress line.
 * A worker makes the test's module (generator or corpus + mutators),
 * checks it with tr_check on its own target and answers one JSON line; a
 * finding's bundle is written by tr_check into work/ and the parent
 * renames it into findings/ when its signature is new. A worker that dies
 * or overruns (trench's own crash or hang) is logged and replaced; the
 * target's crashes and hangs are tr_check's verdicts. */
#include "campaign.h"

#include "mutate.h"
#include "../triage/triage.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

void tr_fuzz_opts_init(tr_fuzz_opts *o) {
  memset(o, 0, sizeof *o);
  tr_target_config_init(&o->tcfg);
  o->nshards = 1;
  o->jobs = 1;
  o->nseeds = 2;
  o->test_timeout_s = 120;
}

double tr_fuzz_test_limit(const tr_fuzz_opts *o) {
  /* The target runs once per seed, and once more for a finding's
   * optimized module (check.c); each run may first start the target's
   * process (a worker's first test, or after a run that hung or crashed,
   * which killed it); the reference gets 20 s per seed. */
  int nseeds = o->nseeds > 0 ? o->nseeds : 1;
  double runs = (nseeds + 1) * (tr_target_run_timeout(o->target) + tr_target_start_timeout(o->target, &o->tcfg)) +
                20.0 * nseeds;
  return runs > o->test_timeout_s ? runs : o->test_timeout_s;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static uint64_t mix(uint64_t a, uint64_t b) {
  uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

/* ---- small file helpers ---- */

static bool write_all(int fd, const char *p, size_t n) {
  while (n) {
    ssize_t w = write(fd, p, n);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return false;
    p += w;
    n -= (size_t)w;
  }
  return true;
}

static bool write_file(const char *path, const char *text) {
  if (!text) { /* a document tr_json_print could not make whole */
    errno = ENOMEM;
    return false;
  }
  int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  if (fd < 0) return false;
  bool ok = write_all(fd, text, strlen(text));
  if (close(fd) != 0) ok = false;
  return ok;
}

/* Removes a folder of plain files (bundles are flat). */
static void remove_tree(const char *dir) {
  DIR *dp = opendir(dir);
  if (dp) {
    struct dirent *e;
    while ((e = readdir(dp))) {
      if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
      char p[4400];
      snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
      struct stat sb;
      if (lstat(p, &sb) == 0 && S_ISDIR(sb.st_mode)) remove_tree(p);
      else unlink(p);
    }
    closedir(dp);
  }
  rmdir(dir);
}

static bool copy_file(const char *from, const char *to) {
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(from, &text, &len, &d) != TR_OK) {
    tr_diag_clear(&d);
    return false;
  }
  int fd = open(to, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
  bool ok = fd >= 0 && write_all(fd, text, len);
  if (fd >= 0 && close(fd) != 0) ok = false;
  tr_free(text);
  return ok;
}

/* Copies a flat folder to a new one beside, then renames it into place. */
static bool copy_bundle(const char *from, const char *to) {
  char tmp[4500];
  snprintf(tmp, sizeof tmp, "%s.part", to);
  remove_tree(tmp);
  if (mkdir(tmp, 0777) != 0) return false;
  DIR *dp = opendir(from);
  bool ok = dp != NULL;
  struct dirent *e;
  while (ok && (e = readdir(dp))) {
    if (e->d_name[0] == '.') continue;
    char a[4800], b[4800];
    snprintf(a, sizeof a, "%s/%s", from, e->d_name);
    snprintf(b, sizeof b, "%s/%s", tmp, e->d_name);
    ok = copy_file(a, b);
  }
  if (dp) closedir(dp);
  if (ok) ok = rename(tmp, to) == 0;
  if (!ok) remove_tree(tmp);
  return ok;
}

/* ---- the corpus ---- */

typedef struct {
  char **paths;
  tr_module **mods;
  int n, cap;
} corpus;

static int cmp_str(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

static void corpus_add_path(corpus *c, const char *p) {
  if (c->n == c->cap) {
    c->cap = c->cap ? c->cap * 2 : 64;
    c->paths = tr_xrealloc(c->paths, sizeof(char *) * (size_t)c->cap);
  }
  c->paths[c->n++] = tr_xstrdup(p);
}

/* Files ending in .hlo or .mlir under dir (one level of sub-folders). */
static void corpus_scan(corpus *c, const char *p, int depth) {
  struct stat sb;
  if (stat(p, &sb) != 0) return;
  if (!S_ISDIR(sb.st_mode)) {
    corpus_add_path(c, p);
    return;
  }
  DIR *dp = opendir(p);
  if (!dp) return;
  struct dirent *e;
  while ((e = readdir(dp))) {
    if (e->d_name[0] == '.') continue;
    char q[4400];
    snprintf(q, sizeof q, "%s/%s", p, e->d_name);
    size_t l = strlen(e->d_name);
    if (stat(q, &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode) && depth < 1) corpus_scan(c, q, depth + 1);
    else if ((l > 4 && strcmp(e->d_name + l - 4, ".hlo") == 0) ||
             (l > 5 && strcmp(e->d_name + l - 5, ".mlir") == 0))
      corpus_add_path(c, q);
  }
  closedir(dp);
}

/* A corpus file as a module: HLO text parsed, or StableHLO/MHLO text
 * (what jax.jit(f).lower(...).as_text() writes) as the campaign's target
 * converts it to HLO (XLA's own conversion; *conv is opened on the first
 * such file and closed by the caller). A test mutates that HLO, so the
 * target is sent the mutated module as HLO text: a mutant has no
 * StableHLO form written by jax. NULL after a located diagnostic. */
static tr_module *corpus_load(const tr_fuzz_opts *o, const char *path, tr_target **conv, bool *tried,
                              tr_diag *d) {
  char *text = NULL;
  size_t len = 0;
  if (tr_read_file(path, &text, &len, d) != TR_OK) return NULL;
  tr_module *m = NULL;
  if (!tr_text_is_mlir(text, len)) {
    m = tr_parse(path, text, len, NULL, d);
  } else {
    if (!*tried) {
      *tried = true;
      tr_diag od = {0};
      if (tr_target_open(o->target, &o->tcfg, conv, &od) != TR_OK) *conv = NULL;
      tr_diag_clear(&od);
    }
    char *hlo = NULL;
    if (!*conv || !((*conv)->caps & TR_CAP_MLIR))
      tr_diag_errorf(d, "%s: StableHLO/MHLO text needs a target that converts it to HLO (xla-cpu), not %s",
                     path, o->target);
    else
      tr_mlir_convert(*conv, path, text, &m, &hlo, d);
    tr_free(hlo);
  }
  tr_free(text);
  return m;
}

/* ---- the campaign's state (parent) ---- */

typedef struct {
  pid_t pid;
  int to, from;     /* pipes: test numbers in, result lines out */
  long t;           /* test in flight, -1 when idle */
  double since;     /* when it started */
  char *line;       /* partial result line */
  size_t nline, capline;
} worker;

typedef struct {
  char name[96];
  long count;
  long first;       /* global index of its first test */
} sig_entry;

typedef struct {
  const tr_fuzz_opts *o;
  corpus cor;
  uint64_t *done;   /* bitmap of shard-local test numbers logged */
  long ndone_cap;
  int log_fd;
  sig_entry *sigs;
  int nsigs, capsigs;
  uint64_t ops[(TR_OP_COUNT + 63) / 64];
  tr_fuzz_stats st;
  bool warned_log;
  double t0;        /* when this run started */
  char *fatal;      /* a worker could not start (the target): why */
  tr_target *t;     /* worker: its target */
  const char *target_name, *target_version;
  /* --triage: bundles waiting, the one being triaged by a child */
  char **tq;
  int ntq, captq;
  pid_t tpid;
  double tsince;
  long triaged, triage_failed;
} camp;

static bool done_get(const camp *c, long t) {
  return t >= 0 && t < c->ndone_cap * 64 && (c->done[t / 64] >> (t % 64)) & 1;
}
static void done_set(camp *c, long t) {
  if (t < 0) return;
  if (t >= c->ndone_cap * 64) {
    long n = c->ndone_cap ? c->ndone_cap : 16;
    while (t >= n * 64) n *= 2;
    c->done = tr_xrealloc(c->done, sizeof(uint64_t) * (size_t)n);
    memset(c->done + c->ndone_cap, 0, sizeof(uint64_t) * (size_t)(n - c->ndone_cap));
    c->ndone_cap = n;
  }
  c->done[t / 64] |= 1ULL << (t % 64);
}

static sig_entry *sig_find(camp *c, const char *name) {
  for (int i = 0; i < c->nsigs; i++)
    if (strcmp(c->sigs[i].name, name) == 0) return &c->sigs[i];
  return NULL;
}
static sig_entry *sig_add(camp *c, const char *name, long first) {
  if (c->nsigs == c->capsigs) {
    c->capsigs = c->capsigs ? c->capsigs * 2 : 16;
    c->sigs = tr_xrealloc(c->sigs, sizeof(sig_entry) * (size_t)c->capsigs);
  }
  sig_entry *s = &c->sigs[c->nsigs++];
  memset(s, 0, sizeof *s);
  snprintf(s->name, sizeof s->name, "%s", name);
  s->first = first;
  return s;
}

/* Appends one event line; fsync when it records a finding. A failing log
 * (full disk) is reported once and the campaign goes on. */
static void log_line(camp *c, cJSON *ev, bool sync) {
  char *s = tr_json_print(ev, false);
  if (!s) errno = ENOMEM;
  size_t n = s ? strlen(s) : 0;
  if (s) {
    s = tr_xrealloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = 0;
  }
  bool ok = s && c->log_fd >= 0 && write_all(c->log_fd, s, n + 1);
  if (ok && sync) ok = fsync(c->log_fd) == 0;
  if (!ok && !c->warned_log) {
    fprintf(stderr, "trench fuzz: cannot write the log: %s (going on)\n", strerror(errno));
    c->warned_log = true;
  }
  tr_free(s);
}

/* Counts one test event into the totals (also when read back on resume). */
static void count_event(camp *c, const cJSON *ev) {
  const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ev"));
  if (!ty) return;
  if (strcmp(ty, "trench-crash") == 0 || strcmp(ty, "trench-hang") == 0) {
    c->st.trench_crash++;
    c->st.tests++;
    return;
  }
  if (strcmp(ty, "test") != 0) return;
  c->st.tests++;
  const char *oc = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "outcome"));
  if (!oc) return;
  if (!strcmp(oc, "pass")) c->st.pass++;
  else if (!strcmp(oc, "weak")) c->st.weak++;
  else if (!strcmp(oc, "unsupported")) c->st.unsupported++;
  else if (!strcmp(oc, "declined")) c->st.declined++;
  else if (!strcmp(oc, "dropped")) c->st.dropped++;
  else if (!strcmp(oc, "error")) c->st.errors++;
  else if (!strcmp(oc, "finding")) {
    c->st.findings++;
    const char *sg = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "sig"));
    cJSON *gi = cJSON_GetObjectItem(ev, "i");
    if (sg) {
      sig_entry *e = sig_find(c, sg);
      if (!e) e = sig_add(c, sg, gi ? (long)gi->valuedouble : -1);
      e->count++;
    }
  }
  const char *ops = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ops"));
  for (int w = 0; ops && w < (int)TR_NELEMS(c->ops) && strlen(ops) >= (size_t)(16 * (w + 1)); w++) {
    char h[17];
    memcpy(h, ops + 16 * w, 16);
    h[16] = 0;
    c->ops[w] |= strtoull(h, NULL, 16);
  }
}

/* ---- one test (worker side) ---- */

/* Runs CMD through sh with text on stdin (may be NULL) and TRENCH_SEED in
 * the environment; returns its stdout, or NULL when it failed, overran
 * 30 s or printed nothing. */
static char *run_external(const char *cmd, const char *text, uint64_t seed, char *why, size_t nwhy) {
  int in[2], out[2];
  if (pipe(in) != 0) return snprintf(why, nwhy, "pipe: %s", strerror(errno)), NULL;
  if (pipe(out) != 0) {
    close(in[0]);
    close(in[1]);
    return snprintf(why, nwhy, "pipe: %s", strerror(errno)), NULL;
  }
  pid_t pid = fork();
  if (pid == 0) {
    dup2(in[0], 0);
    dup2(out[1], 1);
    close(in[0]);
    close(in[1]);
    close(out[0]);
    close(out[1]);
    char sd[32];
    snprintf(sd, sizeof sd, "%llu", (unsigned long long)seed);
    setenv("TRENCH_SEED", sd, 1);
    execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
    _exit(127);
  }
  close(in[0]);
  close(out[1]);
  if (pid < 0) {
    close(in[1]);
    close(out[0]);
    return snprintf(why, nwhy, "fork: %s", strerror(errno)), NULL;
  }
  /* Feed stdin and read stdout together (a large module would fill both
   * pipes), within the time limit. */
  size_t nin = text ? strlen(text) : 0, sent = 0;
  fcntl(in[1], F_SETFL, O_NONBLOCK);
  if (!nin) {
    close(in[1]);
    in[1] = -1;
  }
  tr_buf res = {0};
  double end = now_s() + 30;
  bool timed_out = false;
  for (;;) {
    struct pollfd p[2] = {{out[0], POLLIN, 0}, {in[1], POLLOUT, 0}};
    int np = in[1] >= 0 ? 2 : 1;
    double left = end - now_s();
    if (left <= 0) {
      timed_out = true;
      break;
    }
    if (poll(p, (nfds_t)np, (int)(left * 1000) + 1) < 0 && errno != EINTR) break;
    if (np == 2 && (p[1].revents & (POLLOUT | POLLERR | POLLHUP))) {
      ssize_t w = write(in[1], text + sent, nin - sent);
      if (w > 0) sent += (size_t)w;
      if (w < 0 && errno != EAGAIN) sent = nin;
      if (sent >= nin) {
        close(in[1]);
        in[1] = -1;
      }
    }
    if (p[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      char buf[65536];
      ssize_t r = read(out[0], buf, sizeof buf);
      if (r > 0) tr_buf_putn(&res, buf, (size_t)r);
      else if (r == 0 || errno != EINTR) break;
    }
  }
  if (in[1] >= 0) close(in[1]);
  close(out[0]);
  if (timed_out) kill(pid, SIGKILL);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
  if (timed_out) snprintf(why, nwhy, "overran 30 s");
  else if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    snprintf(why, nwhy, "%s %d", WIFSIGNALED(status) ? "died of signal" : "exited with",
             WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status));
  else if (!res.n) snprintf(why, nwhy, "printed nothing");
  else return res.p;
  tr_buf_free(&res);
  return NULL;
}

/* Parses and verifies external output; NULL with why when it is not a
 * valid module. */
static tr_module *parse_external(const char *text, char *why, size_t nwhy) {
  tr_diag d = {0};
  tr_module *m = tr_parse("external", text, strlen(text), NULL, &d);
  if (m && tr_verify(m, &d) != TR_OK) {
    tr_module_free(m);
    m = NULL;
  }
  if (!m) snprintf(why, nwhy, "invalid module: %s", tr_diag_first(&d) ? tr_diag_first(&d) : "?");
  tr_diag_clear(&d);
  return m;
}

static void ops_hex(const tr_module *m, char *out) {
  uint64_t w[(TR_OP_COUNT + 63) / 64] = {0};
  for (int k = 0; k < m->ncomps; k++)
    for (int i = 0; i < m->comps[k]->ninstrs; i++) {
      int op = m->comps[k]->instrs[i]->op;
      w[op / 64] |= 1ULL << (op % 64);
    }
  for (int i = 0; i < (int)TR_NELEMS(w); i++) sprintf(out + 16 * i, "%016llx", (unsigned long long)w[i]);
}

static const tr_dist data_dists[] = {TR_DIST_NORMAL,   TR_DIST_NORMAL, TR_DIST_NORMAL,  TR_DIST_UNIFORM,
                                     TR_DIST_POSITIVE, TR_DIST_LARGE,  TR_DIST_TINY,    TR_DIST_DENORMAL,
                                     TR_DIST_INTEGER,  TR_DIST_FULL,   TR_DIST_BOUNDARY};
static const tr_dist index_dists[] = {TR_DIST_INDEX, TR_DIST_INDEX, TR_DIST_INDEX_EDGE, TR_DIST_INDEX_OOB,
                                      TR_DIST_INDEX_DUP};

/* The signature as a folder name: kind-op-dtype. */
static void sig_name(const tr_check_sig *s, char *out, size_t n) {
  snprintf(out, n, "%s-%s-%s", s->kind[0] ? s->kind : "finding",
           s->op < TR_OP_COUNT ? tr_ops[s->op].name : "none",
           s->dtype < TR_DT_COUNT ? tr_dtype_name(s->dtype) : "none");
}

/* Makes and checks test t; returns its event (owned by the caller). */
/* The generator and each mutation run in a heap frame (base.h): running
 * out of memory in them drops the test or skips the step, and the
 * campaign goes on. */
typedef struct {
  const tr_fuzz_opts *o;
  uint64_t seed;
  tr_module *m;
  tr_diag *d;
  tr_status st;
} gen_job;

static void gen_fn(void *p) {
  gen_job *j = p;
  j->st = j->o->gen(j->o->gen_user, j->seed, &j->m, j->d);
}

typedef struct {
  const tr_module *m;
  uint64_t seed;
  tr_mutator used;
  tr_module *out;
  tr_status st;
} mutate_job;

static void mutate_fn(void *p) {
  mutate_job *j = p;
  j->st = tr_mutate_any(j->m, j->seed, &j->used, &j->out, NULL);
}

static cJSON *run_test(camp *c, long t) {
  const tr_fuzz_opts *o = c->o;
  long g = o->shard + (long)o->nshards * t;
  uint64_t r = mix(o->seed, (uint64_t)g);
  cJSON *ev = cJSON_CreateObject();
  cJSON_AddStringToObject(ev, "ev", "test");
  cJSON_AddNumberToObject(ev, "t", (double)t);
  cJSON_AddNumberToObject(ev, "i", (double)g);
  cJSON *lin = cJSON_AddArrayToObject(ev, "lineage");
  double t0 = now_s();
  char why[512] = "", buf[600];
  tr_module *m = NULL;
  /* The source: the built-in generator, an external one, or the corpus. */
  int nsrc = (o->gen ? 1 : 0) + (o->generator_cmd ? 1 : 0) + (c->cor.n ? 1 : 0);
  int src = (int)(mix(r, 1) % (uint64_t)(nsrc ? nsrc : 1));
  bool from_corpus = false, external = false;
  if (o->gen && src-- == 0) {
    uint64_t gs = mix(r, 2);
    tr_diag d = {0};
    gen_job gj = {o, gs, NULL, &d, TR_OK};
    size_t oom = 0;
    if (!tr_heap_run(gen_fn, &gj, &oom)) snprintf(why, sizeof why, "generator: out of memory (%zu bytes)", oom);
    else if (gj.st != TR_OK) snprintf(why, sizeof why, "generator: %s", tr_diag_first(&d) ? tr_diag_first(&d) : "failed");
    else m = gj.m;
    tr_diag_clear(&d);
    snprintf(buf, sizeof buf, "gen:%s:%llu", o->gen_version ? o->gen_version : "?", (unsigned long long)gs);
    cJSON_AddItemToArray(lin, cJSON_CreateString(buf));
  } else if (o->generator_cmd && src-- == 0) {
    uint64_t gs = mix(r, 3);
    external = true;
    char *text = run_external(o->generator_cmd, NULL, gs, why, sizeof why);
    if (text) m = parse_external(text, why, sizeof why);
    tr_free(text);
    snprintf(buf, sizeof buf, "generator-cmd:%llu", (unsigned long long)gs);
    cJSON_AddItemToArray(lin, cJSON_CreateString(buf));
  } else if (c->cor.n) {
    int k = (int)(mix(r, 4) % (uint64_t)c->cor.n);
    m = tr_module_clone(c->cor.mods[k]);
    from_corpus = true;
    snprintf(buf, sizeof buf, "corpus:%s", c->cor.paths[k]);
    cJSON_AddItemToArray(lin, cJSON_CreateString(buf));
  }
  /* Mutations: one to three on corpus modules, none to two otherwise. */
  int steps = (int)(mix(r, 5) % 3) + (from_corpus ? 1 : 0);
  for (int s = 0; m && s < steps; s++) {
    uint64_t ms = mix(r, 100 + (uint64_t)s);
    tr_module *nm = NULL;
    if (o->mutator_cmd && mix(ms, 7) % 4 == 0) {
      external = true;
      tr_buf text = {0};
      tr_print_module(&text, m);
      char *res = run_external(o->mutator_cmd, tr_buf_str(&text), ms, why, sizeof why);
      tr_buf_free(&text);
      if (res) nm = parse_external(res, why, sizeof why);
      tr_free(res);
      snprintf(buf, sizeof buf, "mutator-cmd:%llu", (unsigned long long)ms);
      cJSON_AddItemToArray(lin, cJSON_CreateString(buf));
      if (!nm) {
        tr_module_free(m);
        m = NULL;
      }
    } else {
      mutate_job mj = {m, ms, 0, NULL, TR_OK};
      size_t oom = 0;
      if (!tr_heap_run(mutate_fn, &mj, &oom) || mj.st != TR_OK) continue; /* no mutation this step */
      tr_mutator used = mj.used;
      nm = mj.out;
      snprintf(buf, sizeof buf, "%s:%llu", tr_mutators[used].name, (unsigned long long)ms);
      cJSON_AddItemToArray(lin, cJSON_CreateString(buf));
    }
    if (nm) {
      tr_module_free(m);
      m = nm;
    }
  }
  if (!m) {
    cJSON_AddStringToObject(ev, "outcome", "dropped");
    cJSON_AddStringToObject(ev, "why", why[0] ? why : "no module");
    return ev;
  }
  char ops[8 * TR_NELEMS(c->ops) * 2 + 1];
  ops_hex(m, ops);
  cJSON_AddStringToObject(ev, "ops", ops);
  /* Inputs: a data and an index distribution drawn per test. */
  tr_check_opts co;
  tr_check_opts_init(&co);
  co.label = "fuzz";
  co.nseeds = o->nseeds;
  co.seed0 = mix(r, 6) & 0xffffffffULL;
  co.draw.data = data_dists[mix(r, 8) % TR_NELEMS(data_dists)];
  co.draw.index = index_dists[mix(r, 9) % TR_NELEMS(index_dists)];
  /* NaN, +-inf and -0 in a third of the tests, about one element in 20:
   * enough that a small tensor holds one (NaN is what folds of x == x,
   * max(x, x) and min/max reductions get wrong) */
  co.draw.special_rate = mix(r, 10) % 3 == 0 ? 0.05 : 0;
  co.profile = o->profile;
  co.profile_path = o->profile_path;
  /* per target (src/target/target.c): a run that overruns it is a hang */
  co.timeout_s = tr_target_run_timeout(o->target);
  co.ref_timeout_s = 20;
  /* The generator's loops run at most 4 trips a run, and its mutators'
   * wrappers 3, so a generated test's loop past 1,000 is a mutation that
   * broke its counter (x - x, compare(x, x)): declined at once rather
   * than after 100,000 trips. Corpus and external modules keep the wide
   * limit (a real scan may step many times). */
  co.max_trips = from_corpus || external ? 100000 : 1000;
  co.stop_at_finding = true;
  char work[4200];
  snprintf(work, sizeof work, "%s/work/t%ld", o->out, g);
  remove_tree(work);
  co.save_dir = work;
  co.save_findings_only = true;
  cJSON_AddStringToObject(ev, "data", tr_dist_name(co.draw.data));
  cJSON_AddStringToObject(ev, "index", tr_dist_name(co.draw.index));
  tr_check_report rep;
  tr_diag d = {0};
  tr_status st = tr_check(c->t, m, &co, &rep, &d);
  cJSON_AddStringToObject(ev, "outcome", tr_check_outcome_name(rep.outcome));
  if (st != TR_OK || rep.outcome == TR_CHECK_ERROR)
    cJSON_AddStringToObject(ev, "why", tr_diag_first(&d) ? tr_diag_first(&d) : "error");
  if (rep.outcome == TR_CHECK_DECLINED && rep.declined) cJSON_AddStringToObject(ev, "why", rep.declined);
  if (rep.outcome == TR_CHECK_FINDING) {
    char sn[96];
    sig_name(&rep.sig, sn, sizeof sn);
    cJSON_AddStringToObject(ev, "sig", sn);
    if (rep.bundle) {
      /* The bundle's fuzz part: lineage, seeds, the target, the verdicts. */
      cJSON *fz = cJSON_CreateObject();
      cJSON_AddStringToObject(fz, "signature", sn);
      cJSON_AddNumberToObject(fz, "campaign_seed", (double)o->seed);
      cJSON_AddNumberToObject(fz, "test", (double)g);
      cJSON_AddNumberToObject(fz, "input_seed0", (double)co.seed0);
      cJSON_AddNumberToObject(fz, "input_seeds", co.nseeds);
      cJSON_AddStringToObject(fz, "data", tr_dist_name(co.draw.data));
      cJSON_AddStringToObject(fz, "index", tr_dist_name(co.draw.index));
      cJSON_AddNumberToObject(fz, "special_rate", co.draw.special_rate);
      cJSON_AddStringToObject(fz, "target", o->target);
      cJSON_AddStringToObject(fz, "target_name", c->t->name ? c->t->name : "");
      cJSON_AddStringToObject(fz, "target_version", c->t->version ? c->t->version : "");
      cJSON_AddItemToObject(fz, "lineage", cJSON_Duplicate(lin, true));
      char *js = tr_json_print(fz, true);
      char p[4400];
      snprintf(p, sizeof p, "%s/fuzz.json", rep.bundle);
      bool ok = write_file(p, js);
      tr_free(js);
      cJSON_Delete(fz);
      tr_buf vt = {0};
      for (int i = 0; i < rep.nruns; i++) tr_check_run_text(&vt, &rep, i);
      snprintf(p, sizeof p, "%s/verdict.txt", rep.bundle);
      if (ok) ok = write_file(p, tr_buf_str(&vt));
      tr_buf_free(&vt);
      if (ok) cJSON_AddStringToObject(ev, "work", rep.bundle);
      else cJSON_AddStringToObject(ev, "why", "cannot write the bundle (disk full?)");
    } else {
      cJSON_AddStringToObject(ev, "why", tr_diag_first(&d) ? tr_diag_first(&d) : "no bundle written");
    }
  }
  if (rep.outcome != TR_CHECK_FINDING) remove_tree(work);
  double ref_ms = 0, target_ms = 0;
  for (int i = 0; i < rep.nruns; i++) {
    ref_ms += rep.runs[i].ref_ms;
    target_ms += rep.runs[i].target_ms;
  }
  cJSON_AddNumberToObject(ev, "ms", (now_s() - t0) * 1000);
  cJSON_AddNumberToObject(ev, "ref_ms", ref_ms);
  cJSON_AddNumberToObject(ev, "target_ms", target_ms);
  tr_check_report_free(&rep);
  tr_diag_clear(&d);
  tr_module_free(m);
  return ev;
}

/* The worker: test numbers in, one event line each out, until EOF. */
static void worker_main(camp *c, int in, int out) {
  tr_diag d = {0};
  if (tr_target_open(c->o->target, &c->o->tcfg, &c->t, &d) != TR_OK) {
    cJSON *ev = cJSON_CreateObject();
    cJSON_AddStringToObject(ev, "ev", "worker-error");
    cJSON_AddStringToObject(ev, "why", tr_diag_first(&d) ? tr_diag_first(&d) : "cannot open the target");
    char *s = tr_json_print(ev, false);
    if (s) write_all(out, s, strlen(s));
    write_all(out, "\n", 1);
    _exit(3);
  }
  FILE *f = fdopen(in, "r");
  char line[64];
  while (f && fgets(line, sizeof line, f)) {
    long t = strtol(line, NULL, 10);
    cJSON *ev = run_test(c, t);
    char *s = tr_json_print(ev, false);
    if (!s) break; /* the campaign sees the worker go, as after a crash */
    size_t n = strlen(s);
    s = tr_xrealloc(s, n + 2);
    s[n] = '\n';
    s[n + 1] = 0;
    bool ok = write_all(out, s, n + 1);
    tr_free(s);
    cJSON_Delete(ev);
    if (!ok) break;
#ifdef __GLIBC__
    /* The freed memory of this test back to the system: the built-in
     * target forks per run, and a fork copies the page tables of every
     * page the heap still holds; also keeps the worker's RSS flat. */
    malloc_trim(0);
#endif
  }
  tr_target_close(c->t);
  _exit(0);
}

static bool spawn(camp *c, worker *w, worker *all, int nw) {
  int a[2], b[2];
  if (pipe(a) != 0) return false;
  if (pipe(b) != 0) {
    close(a[0]);
    close(a[1]);
    return false;
  }
  fflush(NULL);
  pid_t pid = fork();
  if (pid < 0) return false;
  if (pid == 0) {
    setpgid(0, 0); /* the parent kills the worker and its target together */
    close(a[1]);
    close(b[0]);
    for (int i = 0; i < nw; i++)
      if (all[i].pid > 0) {
        close(all[i].to);
        close(all[i].from);
      }
    if (c->log_fd >= 0) close(c->log_fd);
    worker_main(c, a[0], b[1]);
    _exit(0);
  }
  setpgid(pid, pid);
  close(a[0]);
  close(b[1]);
  fcntl(a[1], F_SETFD, FD_CLOEXEC);
  fcntl(b[0], F_SETFD, FD_CLOEXEC);
  w->pid = pid;
  w->to = a[1];
  w->from = b[0];
  w->t = -1;
  w->nline = 0;
  return true;
}

static void reap(worker *w) {
  tr_free(w->line); /* a restarted worker starts a fresh line */
  w->line = NULL;
  w->capline = w->nline = 0;
  if (w->pid <= 0) return;
  kill(-w->pid, SIGKILL);
  kill(w->pid, SIGKILL);
  close(w->to);
  close(w->from);
  while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR) {}
  w->pid = 0;
}

/* The bundle's README names the folder tr_check wrote it in (work/tN);
 * after the rename it names the finding's folder. */
static void retarget_readme(const char *dest, const char *work) {
  char p[4500];
  snprintf(p, sizeof p, "%s/README.md", dest);
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(p, &text, &len, &d) != TR_OK) {
    tr_diag_clear(&d);
    return;
  }
  tr_buf b = {0};
  size_t wl = strlen(work);
  for (const char *q = text; *q;) {
    const char *hit = strstr(q, work);
    if (!hit) {
      tr_buf_puts(&b, q);
      break;
    }
    tr_buf_putn(&b, q, (size_t)(hit - q));
    tr_buf_puts(&b, dest);
    q = hit + wl;
  }
  write_file(p, tr_buf_str(&b));
  tr_buf_free(&b);
  tr_free(text);
}

/* ---- background triage (--triage) ----
 * Each new finding's bundle is isolated and reduced (tr_triage_bundle) by
 * a child process, one at a time, while the workers go on; the child
 * writes BUNDLE/triage (report.md, reduced.hlo, ...) or, when triage
 * fails, BUNDLE/triage.err. A child past triage_timeout_s is killed and
 * its bundle says so. */
static void triage_queue(camp *c, const char *bundle) {
  if (c->ntq == c->captq) {
    c->captq = c->captq ? 2 * c->captq : 8;
    c->tq = tr_xrealloc(c->tq, sizeof(char *) * (size_t)c->captq);
  }
  c->tq[c->ntq++] = tr_xstrdup(bundle);
}

static void triage_note(const char *bundle, const char *what) {
  char p[4400];
  snprintf(p, sizeof p, "%s/triage.err", bundle);
  write_file(p, what);
}

/* Reaps the child when it is done (or past its time, or wait and it is
 * the end), then starts the next bundle unless stopping. */
static void triage_pump(camp *c, bool stopping) {
  const tr_fuzz_opts *o = c->o;
  double limit = o->triage_timeout_s > 0 ? o->triage_timeout_s : 600;
  while (c->tpid > 0) {
    int status = 0;
    pid_t r = waitpid(c->tpid, &status, stopping ? 0 : WNOHANG);
    if (r == c->tpid) {
      bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0;
      c->triaged += ok;
      c->triage_failed += !ok;
      if (!ok && !WIFEXITED(status)) triage_note(c->tq[0], "triage did not finish (killed or crashed)\n");
      c->tpid = 0;
      tr_free(c->tq[0]);
      memmove(c->tq, c->tq + 1, sizeof(char *) * (size_t)--c->ntq);
      break;
    }
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      c->tpid = 0;
      break;
    }
    if (now_s() - c->tsince > limit || (o->stop && *o->stop)) {
      kill(c->tpid, SIGKILL);
      stopping = true; /* reap it now */
      continue;
    }
    return; /* still running */
  }
  if (c->tpid > 0 || c->ntq == 0 || (o->stop && *o->stop)) return;
  pid_t pid = fork();
  if (pid == 0) {
    close(c->log_fd);
    tr_diag d = {0};
    tr_status st = tr_triage_bundle(c->tq[0], o->target, &o->tcfg, o->profile, &d);
    if (st != TR_OK) {
      char msg[1024];
      snprintf(msg, sizeof msg, "%s\n", tr_diag_first(&d) ? tr_diag_first(&d) : "triage failed");
      triage_note(c->tq[0], msg);
    }
    _exit(st == TR_OK ? 0 : 1);
  }
  if (pid < 0) {
    triage_note(c->tq[0], "cannot start the triage process\n");
    tr_free(c->tq[0]);
    memmove(c->tq, c->tq + 1, sizeof(char *) * (size_t)--c->ntq);
    c->triage_failed++;
    return;
  }
  c->tpid = pid;
  c->tsince = now_s();
}

/* A result line from a worker: rename a new finding's bundle into place,
 * log, count. */
static void take_result(camp *c, worker *w, const char *line) {
  cJSON *ev = cJSON_Parse(line);
  if (!ev) return;
  const char *ty = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "ev"));
  if (ty && strcmp(ty, "worker-error") == 0) {
    const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "why"));
    if (!c->fatal) c->fatal = tr_xstrdup(why ? why : "a worker could not start");
    cJSON_Delete(ev);
    return;
  }
  if (ty && strcmp(ty, "test") != 0) {
    cJSON_Delete(ev);
    return;
  }
  const char *work = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "work"));
  const char *sg = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "sig"));
  bool finding = sg != NULL;
  if (finding && work) {
    char dest[4400];
    snprintf(dest, sizeof dest, "%s/findings/%s", c->o->out, sg);
    struct stat sb;
    if (stat(dest, &sb) != 0) {
      if (rename(work, dest) == 0) {
        cJSON_AddStringToObject(ev, "bundle", dest);
        retarget_readme(dest, work);
        if (c->o->triage) triage_queue(c, dest);
      }
      else cJSON_AddStringToObject(ev, "why", "cannot move the bundle into findings/");
    } else {
      cJSON_AddStringToObject(ev, "duplicate_of", dest);
    }
    remove_tree(work);
    cJSON_DeleteItemFromObject(ev, "work");
  }
  bool fresh = finding && !sig_find(c, sg);
  cJSON_AddNumberToObject(ev, "at", now_s() - c->t0);
  log_line(c, ev, finding);
  count_event(c, ev);
  if (fresh) c->st.unique = c->nsigs;
  long t = (long)cJSON_GetObjectItem(ev, "t")->valuedouble;
  done_set(c, t);
  c->st.run_tests++;
  cJSON_Delete(ev);
  w->t = -1;
}

/* Reads what a worker wrote; false at EOF (it died). */
static bool drain(camp *c, worker *w) {
  char buf[65536];
  ssize_t n = read(w->from, buf, sizeof buf);
  if (n < 0 && errno == EINTR) return true;
  if (n <= 0) return false;
  for (ssize_t i = 0; i < n; i++) {
    if (w->nline + 1 >= w->capline) {
      w->capline = w->capline ? w->capline * 2 : 4096;
      w->line = tr_xrealloc(w->line, w->capline);
    }
    if (buf[i] == '\n') {
      w->line[w->nline] = 0;
      take_result(c, w, w->line);
      w->nline = 0;
    } else {
      w->line[w->nline++] = buf[i];
    }
  }
  return true;
}

static void progress(camp *c, double t0, bool final) {
  int ncore = 0, ncov = 0;
  for (int op = 0; op < TR_OP_COUNT; op++)
    if (tr_ops[op].flags & TR_OPF_K) {
      ncore++;
      ncov += (c->ops[op / 64] >> (op % 64)) & 1;
    }
  double el = now_s() - t0;
  long judged = c->st.pass + c->st.weak;
  fprintf(stderr, "\r\033[K[fuzz %.0fs] %ld tests %.1f/s  findings %ld (%d unique)  weak %.1f%%  ops %d/%d%s",
          el, c->st.tests, el > 0 ? (double)c->st.run_tests / el : 0.0, c->st.findings, c->nsigs,
          judged ? 100.0 * (double)c->st.weak / (double)judged : 0.0, ncov, ncore, final ? "\n" : "");
}

/* --triage: the recorded bug the finding's triage named (report.json's
 * levels.instruction.known, docs/TRIAGE.md) into out: its id, "new"
 * (triaged, none matched), or "" (not triaged). */
static void triage_known(const camp *c, const char *sig, char *out, size_t n) {
  out[0] = 0;
  char p[4400];
  snprintf(p, sizeof p, "%s/findings/%s/triage/report.json", c->o->out, sig);
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(p, &text, &len, &d) == TR_OK) {
    cJSON *j = cJSON_Parse(text);
    cJSON *lv = cJSON_GetObjectItem(cJSON_GetObjectItem(j, "levels"), "instruction");
    const cJSON *k = cJSON_GetObjectItem(lv, "known");
    snprintf(out, n, "%s", cJSON_IsString(k) && k->valuestring[0] ? k->valuestring : "new");
    cJSON_Delete(j);
    tr_free(text);
  }
  tr_diag_clear(&d);
}

static void summary(camp *c, FILE *f) {
  const tr_fuzz_opts *o = c->o;
  tr_fuzz_stats *s = &c->st;
  long judged = s->pass + s->weak;
  fprintf(f, "fuzz: %s, seed %llu, shard %d/%d, %d job%s, %.1f s\n", o->target, (unsigned long long)o->seed,
          o->shard, o->nshards, o->jobs, o->jobs == 1 ? "" : "s", s->wall_s);
  fprintf(f, "  %-14s %8ld  (this run %ld, %.1f/s, %.1f/s per job)\n", "tests", s->tests, s->run_tests,
          s->wall_s > 0 ? (double)s->run_tests / s->wall_s : 0.0,
          s->wall_s > 0 ? (double)s->run_tests / s->wall_s / o->jobs : 0.0);
  fprintf(f, "  %-14s %8ld\n", "pass", s->pass);
  fprintf(f, "  %-14s %8ld  (%.1f%% of judged tests)\n", "weak", s->weak,
          judged ? 100.0 * (double)s->weak / (double)judged : 0.0);
  fprintf(f, "  %-14s %8ld\n", "unsupported", s->unsupported);
  fprintf(f, "  %-14s %8ld\n", "declined", s->declined);
  fprintf(f, "  %-14s %8ld\n", "dropped", s->dropped);
  fprintf(f, "  %-14s %8ld\n", "errors", s->errors);
  fprintf(f, "  %-14s %8ld\n", "trench-crash", s->trench_crash);
  if (s->corpus_skipped) fprintf(f, "  %-14s %8ld\n", "corpus-skipped", s->corpus_skipped);
  fprintf(f, "  %-14s %8ld  (%d unique)\n", "findings", s->findings, c->nsigs);
  if (o->triage)
    fprintf(f, "  %-14s %8ld  (%ld failed: BUNDLE/triage.err)\n", "triaged", s->triaged, s->triage_failed);
  if (c->nsigs && !o->triage) {
    fprintf(f, "  %-40s %6s %10s  %s\n", "signature", "count", "first test", "bundle");
    for (int i = 0; i < c->nsigs; i++)
      fprintf(f, "  %-40s %6ld %10ld  %s/findings/%s\n", c->sigs[i].name, c->sigs[i].count, c->sigs[i].first,
              o->out, c->sigs[i].name);
  } else if (c->nsigs) {
    /* which are recorded bugs (known.def), which are new: each triage's
     * report read once */
    char (*k)[48] = tr_xcalloc((size_t)c->nsigs, sizeof *k);
    int known = 0, fresh = 0;
    for (int i = 0; i < c->nsigs; i++) {
      triage_known(c, c->sigs[i].name, k[i], sizeof k[i]);
      known += k[i][0] && strcmp(k[i], "new") != 0;
      fresh += strcmp(k[i], "new") == 0;
    }
    fprintf(f, "  %-14s %8d  (of the unique: recorded bugs; %d new, %d not triaged)\n", "known", known, fresh,
            c->nsigs - known - fresh);
    fprintf(f, "  %-40s %6s %10s  %-16s %s\n", "signature", "count", "first test", "known", "bundle");
    for (int i = 0; i < c->nsigs; i++)
      fprintf(f, "  %-40s %6ld %10ld  %-16s %s/findings/%s\n", c->sigs[i].name, c->sigs[i].count,
              c->sigs[i].first, k[i][0] ? k[i] : "-", o->out, c->sigs[i].name);
    tr_free(k);
  }
}

static void write_summary_json(camp *c) {
  cJSON *j = cJSON_CreateObject();
  tr_fuzz_stats *s = &c->st;
  cJSON_AddNumberToObject(j, "tests", (double)s->tests);
  cJSON_AddNumberToObject(j, "pass", (double)s->pass);
  cJSON_AddNumberToObject(j, "weak", (double)s->weak);
  cJSON_AddNumberToObject(j, "unsupported", (double)s->unsupported);
  cJSON_AddNumberToObject(j, "declined", (double)s->declined);
  cJSON_AddNumberToObject(j, "dropped", (double)s->dropped);
  cJSON_AddNumberToObject(j, "errors", (double)s->errors);
  cJSON_AddNumberToObject(j, "trench_crash", (double)s->trench_crash);
  cJSON_AddNumberToObject(j, "findings", (double)s->findings);
  cJSON_AddNumberToObject(j, "unique", c->nsigs);
  if (c->o->triage) {
    cJSON_AddNumberToObject(j, "triaged", (double)s->triaged);
    cJSON_AddNumberToObject(j, "triage_failed", (double)s->triage_failed);
  }
  cJSON_AddNumberToObject(j, "wall_s", s->wall_s);
  cJSON_AddNumberToObject(j, "run_tests", (double)s->run_tests);
  cJSON *sg = cJSON_AddArrayToObject(j, "signatures");
  for (int i = 0; i < c->nsigs; i++) {
    cJSON *e = cJSON_CreateObject();
    cJSON_AddStringToObject(e, "sig", c->sigs[i].name);
    cJSON_AddNumberToObject(e, "count", (double)c->sigs[i].count);
    cJSON_AddNumberToObject(e, "first", (double)c->sigs[i].first);
    if (c->o->triage) {
      char k[48];
      triage_known(c, c->sigs[i].name, k, sizeof k);
      cJSON_AddStringToObject(e, "known", k);
    }
    cJSON_AddItemToArray(sg, e);
  }
  char *txt = tr_json_print(j, true);
  char p[4400];
  snprintf(p, sizeof p, "%s/summary.json", c->o->out);
  write_file(p, txt);
  tr_free(txt);
  cJSON_Delete(j);
}

/* Reads log.jsonl back (resume, merge): every complete line is counted;
 * a torn last line (a kill mid-write) is ignored. */
static void read_log(camp *c, const char *path, cJSON *collect) {
  char *text = NULL;
  size_t len = 0;
  tr_diag d = {0};
  if (tr_read_file(path, &text, &len, &d) != TR_OK) {
    tr_diag_clear(&d);
    return;
  }
  char *p = text;
  while (p && *p) {
    char *nl = strchr(p, '\n');
    if (!nl) break; /* torn */
    *nl = 0;
    cJSON *ev = cJSON_Parse(p);
    if (ev) {
      count_event(c, ev);
      cJSON *tt = cJSON_GetObjectItem(ev, "t");
      if (tt && !collect) done_set(c, (long)tt->valuedouble);
      if (collect) cJSON_AddItemToArray(collect, ev);
      else cJSON_Delete(ev);
    }
    p = nl + 1;
  }
  tr_free(text);
}

static cJSON *campaign_json(const tr_fuzz_opts *o, const corpus *cor) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "kind", "trench-fuzz-campaign");
  cJSON_AddNumberToObject(j, "seed", (double)o->seed);
  cJSON_AddNumberToObject(j, "shard", o->shard);
  cJSON_AddNumberToObject(j, "nshards", o->nshards);
  cJSON_AddStringToObject(j, "target", o->target);
  cJSON_AddNumberToObject(j, "input_seeds", o->nseeds);
  if (o->gen_version && o->gen) cJSON_AddStringToObject(j, "generator", o->gen_version);
  if (o->generator_cmd) cJSON_AddStringToObject(j, "generator_cmd", o->generator_cmd);
  if (o->mutator_cmd) cJSON_AddStringToObject(j, "mutator_cmd", o->mutator_cmd);
  cJSON *cs = cJSON_AddArrayToObject(j, "corpus");
  for (int i = 0; i < cor->n; i++) cJSON_AddItemToArray(cs, cJSON_CreateString(cor->paths[i]));
  return j;
}

static void camp_free(camp *c) {
  for (int i = 0; i < c->cor.n; i++) {
    tr_free(c->cor.paths[i]);
    tr_module_free(c->cor.mods ? c->cor.mods[i] : NULL);
  }
  tr_free(c->cor.paths);
  tr_free(c->cor.mods);
  tr_free(c->done);
  tr_free(c->sigs);
  for (int i = 0; i < c->ntq; i++) tr_free(c->tq[i]);
  tr_free(c->tq);
  if (c->log_fd >= 0) close(c->log_fd);
}

tr_status tr_fuzz_run(const tr_fuzz_opts *o, tr_fuzz_stats *st, tr_diag *d) {
  camp c;
  memset(&c, 0, sizeof c);
  c.o = o;
  c.log_fd = -1;
  memset(st, 0, sizeof *st);
  double t0 = now_s();
  c.t0 = t0;
  /* The corpus: every file parsed and verified once, here; a file that
   * does not is reported and left out. The workers inherit the modules. */
  for (int i = 0; i < o->ncorpus; i++) {
    struct stat sb;
    if (stat(o->corpus[i], &sb) != 0) {
      tr_diag_errorf(d, "corpus %s: %s", o->corpus[i], strerror(errno));
      camp_free(&c);
      return TR_ERR_IO;
    }
    corpus_scan(&c.cor, o->corpus[i], 0);
  }
  if (c.cor.n > 1) qsort(c.cor.paths, (size_t)c.cor.n, sizeof(char *), cmp_str);
  c.cor.mods = tr_xcalloc((size_t)c.cor.n + 1, sizeof(tr_module *));
  int kept = 0;
  tr_target *conv = NULL;
  bool conv_tried = false;
  for (int i = 0; i < c.cor.n; i++) {
    tr_diag pd = {0};
    tr_module *m = corpus_load(o, c.cor.paths[i], &conv, &conv_tried, &pd);
    if (m && tr_verify(m, &pd) != TR_OK) {
      tr_module_free(m);
      m = NULL;
    }
    if (!m) {
      fprintf(stderr, "trench fuzz: corpus file skipped: %s\n", tr_diag_first(&pd) ? tr_diag_first(&pd) : c.cor.paths[i]);
      c.st.corpus_skipped++;
      tr_free(c.cor.paths[i]);
    } else {
      c.cor.paths[kept] = c.cor.paths[i];
      c.cor.mods[kept++] = m;
    }
    tr_diag_clear(&pd);
  }
  c.cor.n = kept;
  /* The workers open their own targets: no adapter outlives the loading. */
  tr_target_close(conv);
  long skipped = c.st.corpus_skipped;
  if (!c.cor.n && !o->gen && !o->generator_cmd) {
    tr_diag_errorf(d, "nothing to test: no corpus module parses and there is no generator");
    camp_free(&c);
    return TR_ERR_USAGE;
  }
  /* The folder: new, or resumed when it is the same campaign. */
  char p[4400];
  mkdir(o->out, 0777);
  snprintf(p, sizeof p, "%s/campaign.json", o->out);
  cJSON *want = campaign_json(o, &c.cor);
  struct stat sb;
  if (stat(p, &sb) == 0) {
    if (!o->resume) {
      tr_diag_errorf(d, "%s holds a campaign already: --resume continues it, or choose another --out", o->out);
      cJSON_Delete(want);
      camp_free(&c);
      return TR_ERR_USAGE;
    }
    char *text = NULL;
    size_t len = 0;
    cJSON *have = tr_read_file(p, &text, &len, d) == TR_OK ? cJSON_Parse(text) : NULL;
    tr_free(text);
    bool same = have && cJSON_Compare(have, want, true);
    cJSON_Delete(have);
    if (!same) {
      tr_diag_errorf(d, "%s: --resume of another campaign (seed, shard, target, corpus or external commands differ)", p);
      cJSON_Delete(want);
      camp_free(&c);
      return TR_ERR_USAGE;
    }
  } else {
    char *txt = tr_json_print(want, true);
    bool ok = write_file(p, txt);
    tr_free(txt);
    if (!ok) {
      tr_diag_errorf(d, "cannot write %s: %s", p, strerror(errno));
      cJSON_Delete(want);
      camp_free(&c);
      return TR_ERR_IO;
    }
  }
  cJSON_Delete(want);
  snprintf(p, sizeof p, "%s/findings", o->out);
  mkdir(p, 0777);
  snprintf(p, sizeof p, "%s/work", o->out);
  remove_tree(p); /* bundles of tests that were cut off: they run again */
  if (mkdir(p, 0777) != 0) {
    tr_diag_errorf(d, "cannot make %s: %s", p, strerror(errno));
    camp_free(&c);
    return TR_ERR_IO;
  }
  snprintf(p, sizeof p, "%s/log.jsonl", o->out);
  read_log(&c, p, NULL);
  c.st.corpus_skipped = skipped;
  c.log_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  if (c.log_fd < 0) {
    tr_diag_errorf(d, "cannot open %s: %s", p, strerror(errno));
    camp_free(&c);
    return TR_ERR_IO;
  }
  /* The workers and the dispatch loop. */
  int nw = o->jobs > 0 ? o->jobs : 1;
  worker *ws = tr_xcalloc((size_t)nw, sizeof *ws);
  signal(SIGPIPE, SIG_IGN);
  long next = 0;
  int idle_deaths = 0;
  bool more = true;
  double deadline = o->time_s > 0 ? t0 + o->time_s : 0, last_prog = 0;
  double test_limit = tr_fuzz_test_limit(o);
  for (int i = 0; i < nw; i++)
    if (!spawn(&c, &ws[i], ws, nw)) {
      tr_diag_errorf(d, "cannot start a worker: %s", strerror(errno));
      more = false;
    }
  for (;;) {
    if ((o->stop && *o->stop) || (deadline && now_s() >= deadline)) more = false;
    if (o->until_finding && c.st.findings) more = false;
    /* Hand a test to every idle worker. */
    for (int i = 0; i < nw && more; i++) {
      if (ws[i].pid <= 0 || ws[i].t >= 0) continue;
      while (done_get(&c, next)) next++;
      if (o->count && next >= o->count) {
        more = false;
        break;
      }
      char line[32];
      snprintf(line, sizeof line, "%ld\n", next);
      if (!write_all(ws[i].to, line, strlen(line))) {
        /* The worker is gone before taking a test (its target did not
         * start, say): read what it left (a fatal message), then replace
         * it; one that keeps dying this way ends the campaign. */
        kill(-ws[i].pid, SIGKILL);
        kill(ws[i].pid, SIGKILL);
        while (drain(&c, &ws[i])) {}
        reap(&ws[i]);
        if (!c.fatal && ++idle_deaths >= 3) c.fatal = tr_xstrdup("its workers die before taking a test");
        if (c.fatal || !spawn(&c, &ws[i], ws, nw)) more = false;
        continue;
      }
      ws[i].t = next++;
      ws[i].since = now_s();
    }
    int busy = 0;
    struct pollfd pf[256];
    int nf = 0;
    for (int i = 0; i < nw && nf < 256; i++)
      if (ws[i].pid > 0 && ws[i].t >= 0) {
        busy++;
        pf[nf].fd = ws[i].from;
        pf[nf].events = POLLIN;
        pf[nf++].revents = 0;
      }
    if (!busy && !more) break;
    poll(pf, (nfds_t)nf, 200);
    for (int i = 0, k = 0; i < nw; i++) {
      if (ws[i].pid <= 0 || ws[i].t < 0) continue;
      worker *w = &ws[i];
      short re = pf[k++].revents;
      bool dead = false;
      if (re & (POLLIN | POLLHUP | POLLERR)) dead = !drain(&c, w);
      if (c.fatal) {
        /* The target does not open: no test can run. */
        more = false;
        reap(w);
        continue;
      }
      bool overran = !dead && w->t >= 0 && now_s() - w->since > test_limit;
      if ((dead || overran) && w->t >= 0) {
        /* trench's own crash or hang on this test: logged, not retried. */
        cJSON *ev = cJSON_CreateObject();
        cJSON_AddStringToObject(ev, "ev", dead ? "trench-crash" : "trench-hang");
        cJSON_AddNumberToObject(ev, "t", (double)w->t);
        cJSON_AddNumberToObject(ev, "i", (double)(o->shard + (long)o->nshards * w->t));
        log_line(&c, ev, true);
        count_event(&c, ev);
        cJSON_Delete(ev);
        done_set(&c, w->t);
        c.st.run_tests++;
        fprintf(stderr, "%strench fuzz: the worker %s on test %ld; replaced\n", o->progress ? "\n" : "",
                dead ? "died" : "overran", w->t);
      }
      if (dead || overran) {
        reap(w);
        if (more && !spawn(&c, w, ws, nw)) more = false;
      }
    }
    if (o->triage) triage_pump(&c, false);
    if (o->progress && now_s() - last_prog > 0.5) {
      progress(&c, t0, false);
      last_prog = now_s();
    }
  }
  for (int i = 0; i < nw; i++) reap(&ws[i]);
  tr_free(ws);
  /* The findings still being triaged or waiting: each within its time. */
  while (c.tpid > 0 || (c.ntq > 0 && !(o->stop && *o->stop))) {
    if (o->progress)
      fprintf(stderr, "\r\033[K[fuzz] triage of %d finding%s", c.ntq, c.ntq == 1 ? "" : "s");
    triage_pump(&c, false);
    if (c.tpid > 0) poll(NULL, 0, 100);
  }
  c.st.triaged = c.triaged;
  c.st.triage_failed = c.triage_failed;
  if (c.fatal) {
    tr_diag_errorf(d, "the target %s does not start: %s", o->target, c.fatal);
    tr_free(c.fatal);
    camp_free(&c);
    return TR_ERR_USAGE;
  }
  c.st.wall_s = now_s() - t0;
  c.st.unique = c.nsigs;
  if (o->progress) progress(&c, t0, true);
  snprintf(p, sizeof p, "%s/work", o->out);
  remove_tree(p);
  write_summary_json(&c);
  if (o->summary) summary(&c, o->summary);
  *st = c.st;
  camp_free(&c);
  return TR_OK;
}

/* ---- merge ---- */

static int cmp_event(const void *a, const void *b) {
  const cJSON *x = *(cJSON *const *)a, *y = *(cJSON *const *)b;
  cJSON *ix = cJSON_GetObjectItem(x, "i"), *iy = cJSON_GetObjectItem(y, "i");
  double u = ix ? ix->valuedouble : -1, v = iy ? iy->valuedouble : -1;
  return u < v ? -1 : u > v;
}

tr_status tr_fuzz_merge(const char *out, const char *const *ins, int nins, tr_fuzz_stats *st, FILE *sumf,
                        tr_diag *d) {
  camp c;
  memset(&c, 0, sizeof c);
  c.log_fd = -1;
  tr_fuzz_opts o;
  tr_fuzz_opts_init(&o);
  o.out = out;
  o.target = "(merged)";
  c.o = &o;
  memset(st, 0, sizeof *st);
  char p[4400];
  if (mkdir(out, 0777) != 0 && errno != EEXIST) {
    tr_diag_errorf(d, "cannot make %s: %s", out, strerror(errno));
    return TR_ERR_IO;
  }
  snprintf(p, sizeof p, "%s/log.jsonl", out);
  struct stat sb;
  if (stat(p, &sb) == 0) {
    tr_diag_errorf(d, "%s exists: merge into a new folder", p);
    return TR_ERR_USAGE;
  }
  snprintf(p, sizeof p, "%s/findings", out);
  mkdir(p, 0777);
  cJSON *all = cJSON_CreateArray();
  cJSON *camps = cJSON_CreateArray();
  for (int k = 0; k < nins; k++) {
    snprintf(p, sizeof p, "%s/campaign.json", ins[k]);
    char *text = NULL;
    size_t len = 0;
    tr_diag rd = {0};
    if (tr_read_file(p, &text, &len, &rd) != TR_OK) {
      tr_diag_errorf(d, "%s is not a campaign folder (no campaign.json)", ins[k]);
      tr_diag_clear(&rd);
      cJSON_Delete(all);
      cJSON_Delete(camps);
      return TR_ERR_USAGE;
    }
    cJSON *cj = cJSON_Parse(text);
    tr_free(text);
    if (cj) cJSON_AddItemToArray(camps, cj);
    snprintf(p, sizeof p, "%s/log.jsonl", ins[k]);
    cJSON *evs = cJSON_CreateArray();
    read_log(&c, p, evs);
    /* Findings: the first bundle of each signature, in argument order. */
    cJSON *ev;
    cJSON_ArrayForEach(ev, evs) {
      const char *b = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "bundle"));
      const char *sg = cJSON_GetStringValue(cJSON_GetObjectItem(ev, "sig"));
      if (!b || !sg) continue;
      char dest[4400];
      snprintf(dest, sizeof dest, "%s/findings/%s", out, sg);
      if (stat(dest, &sb) == 0) continue;
      if (!copy_bundle(b, dest)) fprintf(stderr, "trench merge: cannot copy %s\n", b);
    }
    while (cJSON_GetArraySize(evs) > 0) cJSON_AddItemToArray(all, cJSON_DetachItemFromArray(evs, 0));
    cJSON_Delete(evs);
  }
  /* The combined log, in global test order; bundles point into out. */
  int n = cJSON_GetArraySize(all);
  cJSON **v = tr_xcalloc((size_t)n + 1, sizeof(cJSON *));
  for (int i = 0; i < n; i++) v[i] = cJSON_GetArrayItem(all, i);
  qsort(v, (size_t)n, sizeof(cJSON *), cmp_event);
  snprintf(p, sizeof p, "%s/log.jsonl", out);
  c.log_fd = open(p, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0666);
  for (int i = 0; i < n; i++) {
    const char *sg = cJSON_GetStringValue(cJSON_GetObjectItem(v[i], "sig"));
    if (sg && cJSON_GetObjectItem(v[i], "bundle")) {
      char dest[4400];
      snprintf(dest, sizeof dest, "%s/findings/%s", out, sg);
      cJSON_ReplaceItemInObject(v[i], "bundle", cJSON_CreateString(dest));
    }
    log_line(&c, v[i], false);
  }
  if (c.log_fd >= 0) fsync(c.log_fd);
  tr_free(v);
  cJSON_Delete(all);
  cJSON *mj = cJSON_CreateObject();
  cJSON_AddStringToObject(mj, "kind", "trench-fuzz-merge");
  cJSON_AddItemToObject(mj, "campaigns", camps);
  char *txt = tr_json_print(mj, true);
  snprintf(p, sizeof p, "%s/campaign.json", out);
  write_file(p, txt);
  tr_free(txt);
  cJSON_Delete(mj);
  c.st.unique = c.nsigs;
  c.st.run_tests = c.st.tests;
  write_summary_json(&c);
  if (sumf) summary(&c, sumf);
  *st = c.st;
  camp_free(&c);
  return TR_OK;
}
