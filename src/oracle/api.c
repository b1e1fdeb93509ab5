/* api.c - the embedding API of include/trench.h over the reference, the
 * targets and tr_check (the IR half is src/ir/api.c). */
#include "../../include/trench.h"
#include "../eval/eval.h"
#include "check.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct trench_report {
  tr_check_report r;
  tr_profile *profile; /* owned: loaded for this check */
};

static char *take_diag(tr_diag *d, const char *fallback) {
  tr_buf b = {0};
  for (int i = 0; i < d->nmsgs; i++) {
    if (i) tr_buf_putc(&b, '\n');
    tr_buf_puts(&b, d->msgs[i]);
  }
  tr_diag_clear(d);
  return b.p ? b.p : tr_xstrdup(fallback);
}

/* trench_tensor is the public name of a tr_tensor (an anonymous struct,
 * so the handle is converted here and nowhere else). */
static const tr_tensor *tens(const trench_tensor *t) { return (const tr_tensor *)(const void *)t; }

int trench_eval(const tr_module *m, unsigned long long seed, trench_tensor ***outs, int *nouts,
                char **err) {
  tr_diag d = {0};
  tr_input_config cfg;
  tr_input_config_init(&cfg);
  cfg.seed = seed;
  tr_tensor **ins = NULL, **res = NULL;
  int nins = 0;
  *outs = NULL;
  *nouts = 0;
  if (tr_inputs_make(m, &cfg, &ins, &nins, &d) != TR_OK || tr_eval(m, ins, nins, &res, nouts, &d) != TR_OK) {
    tr_inputs_free(ins, nins);
    char *msg = take_diag(&d, "evaluation failed");
    if (err) *err = msg;
    else tr_free(msg);
    return -1;
  }
  tr_inputs_free(ins, nins);
  *outs = (trench_tensor **)(void *)res;
  return 0;
}

void trench_tensors_free(trench_tensor **ts, int n) { tr_eval_free_outputs((tr_tensor **)(void *)ts, n); }
const char *trench_tensor_dtype(const trench_tensor *t) { return tr_dtype_name(tens(t)->dtype); }
int trench_tensor_rank(const trench_tensor *t) { return tens(t)->rank; }
long long trench_tensor_dim(const trench_tensor *t, int i) {
  return i >= 0 && i < tens(t)->rank ? (long long)tens(t)->dims[i] : -1;
}
const void *trench_tensor_data(const trench_tensor *t) { return tens(t)->data; }
size_t trench_tensor_nbytes(const trench_tensor *t) { return tens(t)->nbytes; }

trench_target *trench_target_open(const char *spec, const char *home, char **err) {
  tr_target_config c;
  tr_target_config_init(&c);
  c.home = home;
  tr_target *t = NULL;
  tr_diag d = {0};
  if (tr_target_open(spec, &c, &t, &d) != TR_OK) {
    char *msg = take_diag(&d, "cannot open the target");
    if (err) *err = msg;
    else tr_free(msg);
    return NULL;
  }
  return t;
}

void trench_target_close(trench_target *t) { tr_target_close(t); }

void trench_check_options_init(trench_check_options *o) {
  memset(o, 0, sizeof *o);
  o->nseeds = 3;
}

/* HOME/profiles/NAME.conf for a target spec NAME[@VER], when it exists. */
static void default_profile(char *out, size_t n, const char *spec) {
  const char *home = getenv("TRENCH_HOME");
  out[0] = 0;
  if (!home || strchr(spec, ':') || strchr(spec, '/')) return;
  snprintf(out, n, "%s/profiles/%.*s.conf", home, (int)strcspn(spec, "@"), spec);
  if (access(out, R_OK) != 0) out[0] = 0;
}

trench_report *trench_check(trench_target *t, const tr_module *m, const trench_check_options *o,
                            char **err) {
  tr_json_hooks(); /* the report's tree in the check's heap frame (base.h) */
  trench_check_options dflt;
  if (!o) {
    trench_check_options_init(&dflt);
    o = &dflt;
  }
  tr_diag d = {0};
  trench_report *rep = tr_xcalloc(1, sizeof *rep);
  char path[4200] = "";
  if (o->profile) snprintf(path, sizeof path, "%s", o->profile);
  else if (!o->strict) default_profile(path, sizeof path, t->spec);
  if (path[0] && !o->strict && tr_profile_load(path, &rep->profile, &d) != TR_OK) {
    char *msg = take_diag(&d, "cannot load the profile");
    if (err) *err = msg;
    else tr_free(msg);
    tr_free(rep);
    return NULL;
  }
  tr_check_opts co;
  tr_check_opts_init(&co);
  co.label = m->file ? m->file : (m->name ? m->name : "module");
  co.seed0 = o->seed;
  co.nseeds = o->nseeds > 0 ? o->nseeds : 3;
  co.timeout_s = o->timeout_s;
  co.profile = rep->profile;
  co.profile_path = rep->profile ? path : NULL;
  if (tr_check(t, m, &co, &rep->r, &d) != TR_OK) {
    char *msg = take_diag(&d, "the check failed");
    if (err) *err = msg;
    else tr_free(msg);
    trench_report_free(rep);
    return NULL;
  }
  return rep;
}

const char *trench_report_outcome(const trench_report *r) { return tr_check_outcome_name(r->r.outcome); }

char *trench_report_json(const trench_report *r) { return tr_json_print(r->r.json, true); }

char *trench_report_text(const trench_report *r) {
  tr_buf b = {0};
  for (int i = 0; i < r->r.nruns; i++) tr_check_run_text(&b, &r->r, i);
  tr_buf_printf(&b, "check: %s\n", tr_check_outcome_name(r->r.outcome));
  return b.p ? b.p : tr_xstrdup("");
}

void trench_report_free(trench_report *r) {
  if (!r) return;
  tr_check_report_free(&r->r);
  tr_profile_free(r->profile);
  tr_free(r);
}
