/* target.c - what every target shares: verdict names, results, opening a
 * target from its spec, and how shapes map to the flat list of tensors
 * that crosses the interface. */
#include "target.h"

#include "builtin.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const verdict_names[TR_VERDICT_COUNT] = {
  "ok", "crash", "hang", "compile_error", "unsupported", "error",
  "protocol_error"
};

const char *tr_verdict_name(tr_verdict v) {
  return (unsigned)v < TR_VERDICT_COUNT ? verdict_names[v] : "?";
}

void tr_run_result_init(tr_run_result *r) {
  memset(r, 0, sizeof *r);
  r->verdict = TR_VERDICT_OK;
  r->compile_ms = -1;
  r->run_ms = -1;
  r->wall_ms = -1;
}

void tr_run_result_free(tr_run_result *r) {
  for (int i = 0; i < r->noutputs; i++) tr_tensor_free(r->outputs[i]);
  tr_free(r->outputs);
  tr_free(r->optimized_hlo);
  tr_free(r->received_hlo);
  tr_free(r->message);
  tr_free(r->stderr_tail);
  for (int i = 0; i < r->npasses_changed; i++) tr_free(r->passes_changed[i]);
  tr_free(r->passes_changed);
  for (int i = 0; i < r->npass_dumps; i++) {
    tr_free(r->pass_dump_names[i]);
    tr_free(r->pass_dump_texts[i]);
  }
  tr_free(r->pass_dump_names);
  tr_free(r->pass_dump_texts);
  tr_run_result_init(r);
}

void tr_target_config_init(tr_target_config *c) {
  c->timeout_s = 60;
  c->start_timeout_s = 0; /* the target's own (tr_target_start_timeout) */
  c->tmp_dir = NULL;
  c->home = NULL;
  c->guard = NULL;
  c->realisation = NULL;
}

int tr_shape_leaves(const tr_shape *s, const tr_shape **out, int max) {
  if (!s) return 0;
  if (s->dtype == TR_DT_TUPLE) {
    int n = 0;
    for (int i = 0; i < s->nelems; i++)
      n += tr_shape_leaves(s->elems[i], out ? out + n : NULL,
                           max - n > 0 ? max - n : 0);
    return n;
  }
  if (!tr_dtype_is_array(s->dtype)) return 0;
  if (out && max > 0) out[0] = s;
  return 1;
}

/* The adapters trench ships: NAME[@VER] runs HOME/VENV/bin/python (with
 * a release, HOME/VENV_VER<release>/bin/python) on HOME/SCRIPT, ARGS
 * after it. The iree adapter's HLO -> StableHLO step runs under the XLA
 * virtualenv, whose python it is told. run_timeout_s: the per-run
 * timeout a fuzz campaign gives it (0: the default), for compilers whose
 * compile alone takes longer than a quick test allows. start_timeout_s:
 * its start and hello when the caller sets none (0: 120 s). */
typedef struct {
  const char *name, *venv, *venv_ver, *maker, *maker_opt, *example, *script, *args;
  bool jax_python;
  double run_timeout_s, start_timeout_s;
} adapter_kind;

static const adapter_kind adapter_kinds[] = {
  {"xla-cpu", ".venv", ".venv/jax-", "scripts/venv.sh", "--jax", "0.4.30", "adapters/xla/adapter.py", "", false, 0, 0},
  {"iree-cpu", ".venv/iree", ".venv/iree-", "scripts/venv-iree.sh", "--iree", "3.13.0", "adapters/iree/adapter.py", "",
   true, 120, 0},
  {"torch-eager", ".venv-torch", ".venv-torch-", "scripts/venv-torch.sh", "--torch", "2.15.0",
   "adapters/torch/adapter.py", " --mode eager", false, 0, 300},
  {"torch-inductor", ".venv-torch", ".venv-torch-", "scripts/venv-torch.sh", "--torch", "2.15.0",
   "adapters/torch/adapter.py", " --mode inductor", false, 180, 300},
};

static const adapter_kind *adapter_find(const char *spec) {
  size_t n = strcspn(spec, "@");
  for (size_t i = 0; i < sizeof adapter_kinds / sizeof adapter_kinds[0]; i++)
    if (strlen(adapter_kinds[i].name) == n && strncmp(spec, adapter_kinds[i].name, n) == 0)
      return &adapter_kinds[i];
  return NULL;
}

static tr_status open_adapter(const adapter_kind *k, const char *spec, const tr_target_config *cfg,
                              tr_target **out, tr_diag *d) {
  const char *home = cfg->home ? cfg->home : getenv("TRENCH_HOME");
  const char *ver = strchr(spec, '@');
  if (!home || !*home) {
    tr_diag_errorf(d, "target '%s' needs trench's source folder (set TRENCH_HOME)", spec);
    return TR_ERR_USAGE;
  }
  if (ver && (!ver[1] || strspn(ver + 1, "0123456789.") != strlen(ver + 1))) {
    tr_diag_errorf(d, "target '%s': expected %s@VERSION such as %s@%s", spec, k->name, k->name, k->example);
    return TR_ERR_USAGE;
  }
  tr_buf py = {0}, cmd = {0};
  if (ver) tr_buf_printf(&py, "%s/%s%s/bin/python", home, k->venv_ver, ver + 1);
  else tr_buf_printf(&py, "%s/%s/bin/python", home, k->venv);
  tr_status s = TR_OK;
  if (cfg->realisation && (strncmp(k->name, "torch-", 6) != 0 || !*cfg->realisation ||
                           strspn(cfg->realisation, "abcdefghijklmnopqrstuvwxyz_") !=
                               strlen(cfg->realisation))) {
    /* the adapter checks the name against its list; here only that it
     * is a word (it goes on a command line) and the target has any */
    tr_diag_errorf(d, "--realisation '%s': %s", cfg->realisation,
                   strncmp(k->name, "torch-", 6) ? "only torch-eager and torch-inductor have realisations"
                                                 : "expected a name such as plain, mutate, channels_last");
    s = TR_ERR_USAGE;
  } else if (access(py.p, X_OK) != 0) {
    tr_diag_errorf(d, "target '%s': no virtualenv at %s; create it with %s%s%s%s%s", spec, py.p, k->maker,
                   ver ? " " : "", ver ? k->maker_opt : "", ver ? " " : "", ver ? ver + 1 : "");
    s = TR_ERR_USAGE;
  } else {
    tr_buf_printf(&cmd, "'%s' '%s/%s'%s", py.p, home, k->script, k->args);
    if (cfg->realisation) tr_buf_printf(&cmd, " --realisation %s", cfg->realisation);
    if (k->jax_python) tr_buf_printf(&cmd, " --jax-python '%s/.venv/bin/python'", home);
    tr_target_config kc = *cfg;
    kc.start_timeout_s = tr_target_start_timeout(spec, cfg);
    s = tr_proc_open(spec, cmd.p, &kc, out, d);
  }
  tr_buf_free(&py);
  tr_buf_free(&cmd);
  return s;
}

double tr_target_run_timeout(const char *spec) {
  const adapter_kind *k = adapter_find(spec);
  if (k && k->run_timeout_s > 0) return k->run_timeout_s;
  /* in-process targets run a test in well under a second; a process
   * target compiles first: one XLA CPU run of a 157-instruction module
   * overran 20 s on a loaded machine (load 15-28 on 2 cores), a false hang */
  if (!strncmp(spec, "builtin", 7) || !strncmp(spec, "interp", 6)) return 20;
  return 60;
}

double tr_target_start_timeout(const char *spec, const tr_target_config *cfg) {
  if (!strncmp(spec, "builtin", 7) || !strncmp(spec, "interp", 6)) return 0; /* in-process */
  if (cfg && cfg->start_timeout_s > 0) return cfg->start_timeout_s;
  const adapter_kind *k = strncmp(spec, "cmd:", 4) ? adapter_find(spec) : NULL;
  return k && k->start_timeout_s > 0 ? k->start_timeout_s : 120;
}

tr_status tr_target_open(const char *spec, const tr_target_config *cfg,
                         tr_target **out, tr_diag *d) {
  tr_target_config def;
  *out = NULL;
  if (!cfg) {
    tr_target_config_init(&def);
    cfg = &def;
  }
  if (strncmp(spec, "cmd:", 4) == 0)
    return tr_proc_open(spec, spec + 4, cfg, out, d);
  if (strcmp(spec, "interp") == 0) return tr_interp_open(out);
  if (strncmp(spec, "builtin", 7) == 0 && (!spec[7] || spec[7] == ':')) return tr_builtin_open(spec, cfg, out, d);
  const adapter_kind *k = adapter_find(spec);
  if (k) return open_adapter(k, spec, cfg, out, d);
  tr_diag_errorf(d, "unknown target '%s' (known: interp, builtin[:OPTIONS], cmd:PROGRAM [ARGS...], "
                 "xla-cpu, iree-cpu, torch-eager, torch-inductor, each also as NAME@VERSION)", spec);
  return TR_ERR_USAGE;
}

tr_status tr_target_run(tr_target *t, const tr_module *m,
                        tr_tensor *const *inputs, int ninputs,
                        const tr_run_opts *o, tr_run_result *r, tr_diag *d) {
  tr_run_opts def;
  if (!o) {
    memset(&def, 0, sizeof def);
    o = &def;
  }
  return t->ops->run(t, m, inputs, ninputs, o, r, d);
}

tr_status tr_target_list_passes(tr_target *t, const tr_module *m,
                                char ***names, int *nnames, tr_diag *d) {
  *names = NULL;
  *nnames = 0;
  if (!t->ops->list_passes) {
    tr_diag_errorf(d, "target '%s' cannot list its passes", t->spec);
    return TR_ERR_UNSUPPORTED;
  }
  return t->ops->list_passes(t, m, names, nnames, d);
}

void tr_target_close(tr_target *t) {
  if (!t) return;
  if (t->ops && t->ops->close) t->ops->close(t); /* NULL: nothing held */
  tr_free(t->spec);
  tr_free(t->name);
  tr_free(t->version);
  tr_free(t);
}
