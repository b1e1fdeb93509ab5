/* par.c - the interpreter's pthread fan-out: one thread per chunk for the
 * length of one call. Big kernels (dot, convolution, long elementwise
 * loops) are long enough that creating two threads per call costs
 * nothing measurable, and nothing outlives the call. */
#include "par.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <unistd.h>

/* Below this many multiply-adds a second thread does not pay for its
 * start-up (tens of microseconds). */
#define PAR_MIN_WORK 200000.0
#define PAR_MAX_THREADS 16

int ev_par_threads(double work) {
  long cpus = sysconf(_SC_NPROCESSORS_ONLN);
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
 * in fixed halves: on a loaded machine a helper thread may start late,
 * and the caller then simply takes more chunks instead of waiting. */
typedef struct {
  ev_par_fn fn;
  void *ctx;
  size_t n, grain;
  atomic_size_t next;
} par_job;

static void *par_main(void *p) {
  par_job *j = p;
  for (;;) {
    size_t lo = atomic_fetch_add(&j->next, j->grain);
    if (lo >= j->n) break;
    j->fn(j->ctx, lo, j->n - lo < j->grain ? j->n : lo + j->grain);
  }
  return NULL;
}

void ev_par_for(int nthreads, size_t n, ev_par_fn fn, void *ctx) {
  if (nthreads > PAR_MAX_THREADS) nthreads = PAR_MAX_THREADS;
  if ((size_t)nthreads > n) nthreads = (int)n;
  if (nthreads <= 1) {
    if (n) fn(ctx, 0, n);
    return;
  }
  par_job j = {fn, ctx, n, n / ((size_t)nthreads * 8), 0};
  if (j.grain < 1) j.grain = 1;
  pthread_t th[PAR_MAX_THREADS];
  bool started[PAR_MAX_THREADS] = {false};
  for (int t = 1; t < nthreads; t++) started[t] = pthread_create(&th[t], NULL, par_main, &j) == 0;
  par_main(&j);
  for (int t = 1; t < nthreads; t++)
    if (started[t]) pthread_join(th[t], NULL);
}
