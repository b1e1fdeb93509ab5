/* interp.c - the "interp" target: trench's reference interpreter in exact
 * per-dtype mode (src/eval) behind the target interface, so the oracle,
 * the reducer and tests can treat the reference like any compiler. It runs
 * in-process: a bug in the interpreter is trench's own bug, never a
 * target verdict, and no timeout applies (a runaway while loop is cut by
 * max_while_trips instead). */
#include "target.h"
#include "../eval/eval.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

/* A generous bound on while trips so that a generated infinite loop ends
 * as a verdict, not a stuck campaign. */
#define INTERP_MAX_WHILE_TRIPS 100000000

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static tr_status interp_run(tr_target *t, const tr_module *m,
                            tr_tensor *const *inputs, int ninputs,
                            const tr_run_opts *o, tr_run_result *r,
                            tr_diag *d) {
  (void)t;
  (void)o; /* no passes, no optimized module: the reference runs as given */
  tr_run_result_init(r);
  tr_eval_opts eo = {INTERP_MAX_WHILE_TRIPS, false, 0, 0};
  tr_diag ed = {0};
  double t0 = now_ms();
  tr_status s = tr_eval_opt(m, &eo, inputs, ninputs, &r->outputs,
                            &r->noutputs, &ed);
  r->run_ms = r->wall_ms = now_ms() - t0;
  if (s == TR_OK) {
    tr_diag_clear(&ed);
    return TR_OK;
  }
  if (s == TR_ERR_UNSUPPORTED) {
    r->verdict = TR_VERDICT_UNSUPPORTED;
  } else if (s == TR_ERR_INVALID || s == TR_ERR_USAGE) {
    /* An invalid module or inputs that do not fit: the caller's mistake. */
    for (int i = 0; i < ed.nmsgs; i++) tr_diag_errorf(d, "%s", ed.msgs[i]);
    tr_diag_clear(&ed);
    return s;
  } else {
    r->verdict = TR_VERDICT_ERROR;
  }
  const char *first = tr_diag_first(&ed);
  r->message = tr_xstrdup(first ? first : tr_status_name(s));
  tr_diag_clear(&ed);
  return TR_OK;
}

static const tr_target_ops interp_ops = {"interp", interp_run, NULL, NULL};

tr_status tr_interp_open(tr_target **out) {
  tr_target *t = tr_xcalloc(1, sizeof *t);
  t->ops = &interp_ops;
  t->spec = tr_xstrdup("interp");
  t->name = tr_xstrdup("interp");
  t->version = tr_xstrdup("exact");
  t->caps = TR_CAP_TIMINGS;
  *out = t;
  return TR_OK;
}
