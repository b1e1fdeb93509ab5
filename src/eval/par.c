/* par.c - the interpreter's pthread fan-out: one thread per chunk for the
 * length of one call. Big kernels (dot, convolution, long elementwise
 * loops) are long enough that creating two threads per call costs
 * nothing measurable; no work outlives the call (a helper that starts
 * after it finds nothing to do and exits). */
#include "par.h"

#include "../base/base.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Below this many multiply-adds a second thread does not pay for its
 * start-up (tens of microseconds). */
#define PAR_MIN_WORK 200000.0
#define PAR_MAX_THREADS 16

/* The online CPU count, read once: glibc's sysconf opens and parses
 * /sys/devices/system/cpu/online on every call, and the evaluator asks
 * per kernel (dozens of times a fuzz test). Set once, read-only after. */
static long online_cpus;
static pthread_once_t online_once = PTHREAD_ONCE_INIT;
static void read_online_cpus(void) { online_cpus = sysconf(_SC_NPROCESSORS_ONLN); }

int ev_par_threads(double work) {
  pthread_once(&online_once, read_online_cpus);
  long cpus = online_cpus;
  int t = cpus < 1 ? 1 : cpus > PAR_MAX_THREADS ? PAR_MAX_THREADS : (int)cpus;
  const char *env = getenv("TRENCH_THREADS");
  if (env && *env) {
    long v = strtol(env, NULL, 10);
    if (v >= 1 && v < t) t = (int)v;
  }
  double by_work = work / PAR_MIN_WORK;
  if (by_work < t) t = by_work < 1 ? 1 : (int)by_work;
  return t;
}

/* Items are handed out in small chunks from a shared counter rather than
 * in fixed halves, and the caller waits only for chunks a helper has
 * taken, not for the helper itself: on a loaded machine a helper may be
 * scheduled milliseconds late, and the caller then does the work alone
 * instead of waiting (a late helper finds nothing left and exits). So the
 * helpers are detached and the job is freed by whoever leaves it last.
 * Running out of memory in a chunk cannot jump across threads: each chunk
 * runs in a heap frame of the thread that runs it (tr_heap_run), a failed
 * one marks the job, the rest are skipped, and the caller raises the
 * failure in its own frame once every taken chunk is accounted for. */
typedef struct {
  ev_par_fn fn;
  void *ctx;
  size_t n, grain;
  atomic_size_t next;   /* first item not yet taken */
  size_t done;          /* items finished (under mu) */
  int refs;             /* threads still holding the job (under mu) */
  atomic_bool oom;      /* a chunk ran out of memory: skip the rest */
  size_t oom_bytes;     /* its request (under mu) */
  pthread_mutex_t mu;
  pthread_cond_t cv;    /* signalled when done reaches n */
} par_job;

/* Drops one reference; the last one frees the job. */
static void par_release(par_job *j) {
  pthread_mutex_lock(&j->mu);
  bool last = --j->refs == 0;
  pthread_mutex_unlock(&j->mu);
  if (last) {
    pthread_mutex_destroy(&j->mu);
    pthread_cond_destroy(&j->cv);
    free(j);
  }
}

typedef struct {
  par_job *j;
  size_t lo, hi;
} par_chunk;

static void par_run_chunk(void *p) {
  par_chunk *c = p;
  c->j->fn(c->j->ctx, c->lo, c->hi);
}

/* Takes and runs chunks until none are left. */
static void par_work(par_job *j) {
  for (;;) {
    size_t lo = atomic_fetch_add(&j->next, j->grain);
    if (lo >= j->n) break;
    size_t hi = j->n - lo < j->grain ? j->n : lo + j->grain;
    par_chunk c = {j, lo, hi};
    size_t bytes = 0;
    if (!atomic_load(&j->oom) && !tr_heap_run(par_run_chunk, &c, &bytes)) {
      pthread_mutex_lock(&j->mu);
      if (!atomic_load(&j->oom)) j->oom_bytes = bytes;
      atomic_store(&j->oom, true);
      pthread_mutex_unlock(&j->mu);
    }
    pthread_mutex_lock(&j->mu);
    j->done += hi - lo;
    if (j->done == j->n) pthread_cond_broadcast(&j->cv);
    pthread_mutex_unlock(&j->mu);
  }
}

static void *par_main(void *p) {
  par_work(p);
  par_release(p);
  return NULL;
}

void ev_par_for(int nthreads, size_t n, ev_par_fn fn, void *ctx) {
  if (nthreads > PAR_MAX_THREADS) nthreads = PAR_MAX_THREADS;
  if ((size_t)nthreads > n) nthreads = (int)n;
  if (nthreads <= 1) {
    if (n) fn(ctx, 0, n);
    return;
  }
  par_job *j = malloc(sizeof *j);
  if (!j) {
    fn(ctx, 0, n);
    return;
  }
  j->fn = fn;
  j->ctx = ctx;
  j->n = n;
  j->grain = n / ((size_t)nthreads * 8);
  if (j->grain < 1) j->grain = 1;
  atomic_init(&j->next, 0);
  j->done = 0;
  j->refs = 1;
  atomic_init(&j->oom, false);
  j->oom_bytes = 0;
  pthread_mutex_init(&j->mu, NULL);
  pthread_cond_init(&j->cv, NULL);
  pthread_attr_t at;
  pthread_attr_init(&at);
  pthread_attr_setdetachstate(&at, PTHREAD_CREATE_DETACHED);
  for (int t = 1; t < nthreads; t++) {
    pthread_t th;
    pthread_mutex_lock(&j->mu);
    j->refs++;
    pthread_mutex_unlock(&j->mu);
    if (pthread_create(&th, &at, par_main, j) != 0) par_release(j); /* the caller does it */
  }
  pthread_attr_destroy(&at);
  par_work(j);
  pthread_mutex_lock(&j->mu);
  while (j->done < j->n) pthread_cond_wait(&j->cv, &j->mu);
  bool oom = atomic_load(&j->oom);
  size_t bytes = j->oom_bytes;
  pthread_mutex_unlock(&j->mu);
  par_release(j);
  if (oom) tr_heap_raise(bytes);
}
