/* builtin.c - the "builtin" target: trench's own optimizing compiler
 * (src/comp) behind the target interface. A run clones the module, runs
 * the pass pipeline on the clone (honouring disabled passes and fuel),
 * emits one C translation unit, compiles it through the JIT's cache and
 * runs it in a forked worker, so a kernel that crashes or hangs is a
 * CRASH or HANG verdict and the next run works. */
#include "builtin.h"
#include "../comp/pipeline.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
  int64_t fuel;         /* -1 unlimited */
  char **disable;       /* pass or rule names (heap) */
  int ndisable;
  tr_emit_opts emit;
  tr_jit_opts jit;
  char *cc, *cflags, *tmp_dir; /* owned copies behind jit's pointers */
  double timeout_s;     /* default per run */
  tr_jit_runner *runner; /* backend tcc: forks each run (jit.h); may be NULL */
  /* The module the last run compiled and its code (one reference), kept
   * for the next run only, when that one is the same module
   * (tr_run_opts.same_module): the passes, the emitter and the hash of
   * the C text are a check's largest cost after the reference, and a
   * check runs each module once per input seed. */
  const tr_module *memo_m;
  tr_jit_code *memo_code;
} builtin;

void tr_builtin_config_init(tr_builtin_config *c) {
  memset(c, 0, sizeof *c);
  c->fuel = -1;
  tr_emit_opts_init(&c->emit);
  tr_jit_opts_init(&c->jit);
}

static double now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static char *dup_or_null(const char *s) { return s ? tr_xstrdup(s) : NULL; }

static void set_message(tr_run_result *r, tr_verdict v, const tr_diag *d, const char *fallback) {
  r->verdict = v;
  const char *first = tr_diag_first(d);
  tr_free(r->message);
  r->message = tr_xstrdup(first ? first : fallback);
}

/* Inputs must be the entry parameters' array leaves, in order. */
static tr_status check_inputs(const tr_module *m, tr_tensor *const *inputs, int ninputs,
                              tr_diag *d) {
  const tr_comp *e = m->entry;
  int k = 0;
  for (int p = 0; p < e->nparams; p++) {
    const tr_shape *lv[TR_EMIT_MAX_LEAVES];
    int n = tr_shape_leaves(e->params[p]->shape, lv, TR_EMIT_MAX_LEAVES);
    if (k + n > TR_EMIT_MAX_LEAVES) {
      tr_diag_errorf(d, "unsupported: more than %d inputs in builtin", TR_EMIT_MAX_LEAVES);
      return TR_ERR_UNSUPPORTED;
    }
    for (int j = 0; j < n; j++, k++) {
      if (k >= ninputs) {
        tr_diag_errorf(d, "builtin: the module takes more inputs than the %d given", ninputs);
        return TR_ERR_USAGE;
      }
      const tr_tensor *t = inputs[k];
      bool ok = t->dtype == lv[j]->dtype && t->rank == lv[j]->rank;
      for (int i = 0; ok && i < t->rank; i++) ok = t->dims[i] == lv[j]->dims[i];
      if (!ok) {
        tr_buf want = {0}, got = {0};
        tr_shape_print(&want, lv[j], false);
        tr_tensor_print_type(&got, t);
        tr_diag_errorf(d, "builtin: input %d is %s, the module wants %s", k, tr_buf_str(&got),
                       tr_buf_str(&want));
        tr_buf_free(&want);
        tr_buf_free(&got);
        return TR_ERR_USAGE;
      }
    }
  }
  if (k != ninputs) {
    tr_diag_errorf(d, "builtin: the module takes %d inputs, %d given", k, ninputs);
    return TR_ERR_USAGE;
  }
  return TR_OK;
}

/* Passes that changed the module, in the order they first did. */
static void passes_changed(const tr_bc_ctx *c, tr_run_result *r) {
  for (int i = 0; i < c->nlog; i++) {
    bool seen = false;
    for (int j = 0; j < r->npasses_changed && !seen; j++)
      seen = strcmp(r->passes_changed[j], c->log[i].pass) == 0;
    if (seen) continue;
    r->passes_changed = tr_xrealloc(r->passes_changed, sizeof(char *) * (size_t)(r->npasses_changed + 1));
    r->passes_changed[r->npasses_changed++] = tr_xstrdup(c->log[i].pass);
  }
}

static tr_status run_body(tr_target *t, const tr_module *m, tr_tensor *const *inputs, int ninputs,
                         const tr_run_opts *o, tr_run_result *r, tr_diag *d, tr_jit_code **code,
                         double t0) {
  builtin *b = t->impl;
  /* Only a plain run (no pass list, dump or disabled pass asked for) is
   * kept or taken from the memo, which lives until the next run. */
  bool plain = !o->want_optimized_hlo && !o->want_passes && !o->want_pass_dumps && o->ndisable_passes == 0;
  tr_jit_code *memo = NULL;
  if (o->same_module && plain && b->memo_m == m) memo = b->memo_code;
  else tr_jit_release(b->memo_code);
  b->memo_code = NULL;
  b->memo_m = NULL;
  if (!m->entry) {
    tr_jit_release(memo);
    tr_diag_errorf(d, "builtin: the module has no entry computation");
    return TR_ERR_INVALID;
  }
  /* a module the previous run verified is the same now */
  if (!memo && tr_verify(m, d) != TR_OK) return TR_ERR_INVALID;
  tr_status s = check_inputs(m, inputs, ninputs, d);
  if (s != TR_OK) {
    tr_jit_release(memo);
    return s;
  }
  tr_module *opt = NULL;
  tr_diag cd = {0};
  tr_buf src = {0};
  const tr_shape *root = m->entry->root->shape;
  if (o->want_received_hlo) {
    tr_buf h = {0};
    tr_print_module(&h, m);
    r->received_hlo = h.p ? h.p : tr_xstrdup("");
  }
  if (memo) {
    *code = memo; /* the memo's reference, now this run's */
    r->compile_ms = 0;
    goto compiled;
  }

  /* Compile: passes on a clone, so the caller's module stays as given. */
  tr_bc_ctx ctx;
  tr_bc_ctx_init(&ctx);
  ctx.fuel = b->fuel;
  ctx.inject = b->emit.inject; /* one set of defects for passes and emitter */
  for (int i = 0; i < b->ndisable && s == TR_OK; i++) s = tr_bc_ctx_disable(&ctx, b->disable[i], d);
  for (int i = 0; i < o->ndisable_passes && s == TR_OK; i++)
    s = tr_bc_ctx_disable(&ctx, o->disable_passes[i], d);
  if (s != TR_OK) {
    tr_bc_ctx_free(&ctx);
    return s;
  }
  opt = tr_module_clone(m);
  double c0 = now_ms();
  s = tr_bc_pipeline_run(&ctx, opt, &cd);
  if (o->want_passes) passes_changed(&ctx, r);
  tr_bc_ctx_free(&ctx);
  if (s != TR_OK) {
    set_message(r, s == TR_ERR_UNSUPPORTED ? TR_VERDICT_UNSUPPORTED : TR_VERDICT_COMPILE_ERROR, &cd,
                "the pass pipeline failed");
    goto done;
  }
  if (o->want_optimized_hlo) {
    tr_buf h = {0};
    tr_print_module(&h, opt);
    r->optimized_hlo = h.p ? h.p : tr_xstrdup("");
  }
  s = tr_emit_c(opt, &b->emit, &src, &cd);
  if (s != TR_OK) {
    set_message(r, s == TR_ERR_UNSUPPORTED ? TR_VERDICT_UNSUPPORTED : TR_VERDICT_COMPILE_ERROR, &cd,
                "the emitter failed");
    goto done;
  }
  tr_jit_stats js;
  s = tr_jit_compile(&b->jit, tr_buf_str(&src), code, &js, &cd);
  r->compile_ms = now_ms() - c0;
  if (s == TR_ERR_INVALID) {
    set_message(r, TR_VERDICT_COMPILE_ERROR, &cd, "the C compiler failed");
    goto done;
  }
  if (s != TR_OK) {
    /* No compiler or no temporary folder: trouble on trench's side. */
    for (int i = 0; i < cd.nmsgs; i++) tr_diag_errorf(d, "%s", cd.msgs[i]);
    goto fail;
  }
  /* The result as compiled; kept for the next run when it is the
   * module's own (the passes keep the entry's signature). */
  root = opt->entry->root->shape;
  if (plain && tr_shape_equal(root, m->entry->root->shape)) {
    b->memo_m = m;
    b->memo_code = tr_jit_retain(*code);
  }
compiled:;
  tr_jit_entry fn = tr_jit_symbol(*code, TR_EMIT_ENTRY);
  if (!fn) {
    tr_diag_errorf(d, "builtin: the compiled unit has no %s", TR_EMIT_ENTRY);
    s = TR_ERR_IO;
    goto fail;
  }

  /* Run: outputs preallocated as the root's array leaves. */
  {
    const tr_shape *lv[TR_EMIT_MAX_LEAVES];
    int nout = tr_shape_leaves(root, lv, TR_EMIT_MAX_LEAVES);
    if (nout > TR_EMIT_MAX_LEAVES) {
      tr_diag_clear(&cd);
      tr_diag_errorf(&cd, "unsupported: more than %d results in builtin", TR_EMIT_MAX_LEAVES);
      set_message(r, TR_VERDICT_UNSUPPORTED, &cd, "");
      goto done;
    }
    tr_tensor **outs = tr_xcalloc((size_t)(nout > 0 ? nout : 1), sizeof(tr_tensor *));
    unsigned char *optr[TR_EMIT_MAX_LEAVES];
    size_t obytes[TR_EMIT_MAX_LEAVES];
    for (int i = 0; i < nout; i++) {
      outs[i] = tr_tensor_new(lv[i]->dtype, lv[i]->rank, lv[i]->dims, &cd);
      if (!outs[i]) {
        for (int j = 0; j < i; j++) tr_tensor_free(outs[j]);
        tr_free(outs);
        set_message(r, TR_VERDICT_UNSUPPORTED, &cd, "unsupported: cannot make the result");
        goto done;
      }
      optr[i] = outs[i]->data;
      obytes[i] = outs[i]->nbytes;
    }
    unsigned char *iptr[TR_EMIT_MAX_LEAVES];
    size_t ibytes[TR_EMIT_MAX_LEAVES];
    for (int i = 0; i < ninputs; i++) {
      iptr[i] = inputs[i]->data;
      ibytes[i] = inputs[i]->nbytes;
    }
    tr_jit_run jr;
    double timeout = o->timeout_s > 0 ? o->timeout_s : b->timeout_s;
    s = tr_jit_runner_run(b->runner, *code, fn, iptr, ibytes, ninputs, optr, obytes, nout, timeout,
                          &jr, d);
    if (s != TR_OK) {
      for (int i = 0; i < nout; i++) tr_tensor_free(outs[i]);
      tr_free(outs);
      goto fail;
    }
    /* The kernel alone, as XLA's adapter reports its execute; the
     * worker's fork and copies are in wall_ms. */
    r->run_ms = jr.kernel_ms;
    if (jr.outcome == TR_JIT_RUN_OK) {
      r->outputs = outs;
      r->noutputs = nout;
    } else {
      for (int i = 0; i < nout; i++) tr_tensor_free(outs[i]);
      tr_free(outs);
      r->verdict = jr.outcome == TR_JIT_RUN_CRASH ? TR_VERDICT_CRASH
                   : jr.outcome == TR_JIT_RUN_HANG ? TR_VERDICT_HANG
                                                   : TR_VERDICT_ERROR;
      r->message = tr_xstrdup(jr.msg);
    }
  }
done:
  s = TR_OK;
fail:
  tr_jit_release(*code);
  *code = NULL;
  tr_buf_free(&src);
  tr_diag_clear(&cd);
  tr_module_free(opt);
  r->wall_ms = now_ms() - t0;
  return s;
}

/* One run in a heap frame: running out of memory anywhere in the passes,
 * the emitter, the compile or the outputs frees what the run made and is
 * a verdict (declined, not a finding). The compiled code belongs to the
 * jit's cache, not the frame, so it is released here. */
typedef struct {
  tr_target *t;
  const tr_module *m;
  tr_tensor *const *inputs;
  int ninputs;
  const tr_run_opts *o;
  tr_run_result *r;
  tr_diag *d;
  tr_jit_code *code;
  double t0;
  tr_status st;
} run_job;

static void run_job_fn(void *p) {
  run_job *j = p;
  j->st = run_body(j->t, j->m, j->inputs, j->ninputs, j->o, j->r, j->d, &j->code, j->t0);
}

static tr_status builtin_run(tr_target *t, const tr_module *m, tr_tensor *const *inputs,
                             int ninputs, const tr_run_opts *o, tr_run_result *r, tr_diag *d) {
  tr_run_result_init(r);
  run_job j = {t, m, inputs, ninputs, o, r, d, NULL, now_ms(), TR_OK};
  size_t bytes = 0;
  if (tr_heap_run(run_job_fn, &j, &bytes)) return j.st;
  tr_jit_release(j.code);
  tr_run_result_init(r); /* its blocks went with the frame */
  r->verdict = TR_VERDICT_UNSUPPORTED;
  tr_diag od = {0};
  tr_heap_diag(&od, m->file ? m->file : "<module>", "compiling and running the module in builtin",
               bytes);
  r->message = tr_xstrdup(tr_diag_first(&od));
  tr_diag_clear(&od);
  r->wall_ms = now_ms() - j.t0;
  return TR_OK;
}

static tr_status builtin_list_passes(tr_target *t, const tr_module *m, char ***names, int *nnames,
                                     tr_diag *d) {
  (void)t;
  (void)m;
  (void)d;
  const char *const *p = tr_bc_pass_names();
  int n = 0;
  while (p[n]) n++;
  *names = tr_xcalloc((size_t)(n > 0 ? n : 1), sizeof(char *));
  for (int i = 0; i < n; i++) (*names)[i] = tr_xstrdup(p[i]);
  *nnames = n;
  return TR_OK;
}

static void builtin_close(tr_target *t) {
  builtin *b = t->impl;
  if (!b) return;
  for (int i = 0; i < b->ndisable; i++) tr_free(b->disable[i]);
  tr_free(b->disable);
  tr_free(b->cc);
  tr_free(b->cflags);
  tr_free(b->tmp_dir);
  tr_jit_release(b->memo_code);
  tr_jit_runner_free(b->runner);
  tr_free(b);
  t->impl = NULL;
}

static const tr_target_ops builtin_ops;

bool tr_builtin_comp_ctx(const tr_target *t, tr_bc_ctx *ctx, tr_diag *d) {
  if (!t || t->ops != &builtin_ops) return false;
  const builtin *b = t->impl;
  tr_bc_ctx_init(ctx);
  ctx->fuel = b->fuel;
  ctx->inject = b->emit.inject;
  for (int i = 0; i < b->ndisable; i++)
    if (tr_bc_ctx_disable(ctx, b->disable[i], d) != TR_OK) return false;
  return true;
}

static const tr_target_ops builtin_ops = {"builtin", builtin_run, builtin_list_passes, builtin_close};

static tr_target *make_target(const char *spec, builtin *b) {
  bool tcc = b->jit.backend == TR_JIT_TCC;
  tr_target *t = tr_xcalloc(1, sizeof *t);
  t->ops = &builtin_ops;
  t->spec = tr_xstrdup(spec);
  t->name = tr_xstrdup("builtin");
  t->version = tr_xstrdup(tcc ? "trench-builtin-1 (libtcc)" : "trench-builtin-1 (cc)");
  t->caps = TR_CAP_OPTIMIZED_HLO | TR_CAP_DISABLE_PASSES | TR_CAP_LIST_PASSES | TR_CAP_TIMINGS;
  t->impl = b;
  /* Started now, while the caller is small: each fork of the runner
   * costs what the runner maps. */
  if (tcc) b->runner = tr_jit_runner_new();
  return t;
}

static void add_disable(builtin *b, const char *name) {
  b->disable = tr_xrealloc(b->disable, sizeof(char *) * (size_t)(b->ndisable + 1));
  b->disable[b->ndisable++] = tr_xstrdup(name);
}

static builtin *from_config(const tr_builtin_config *bc, const tr_target_config *cfg) {
  builtin *b = tr_xcalloc(1, sizeof *b);
  b->fuel = bc->fuel;
  for (int i = 0; i < bc->ndisable; i++) add_disable(b, bc->disable[i]);
  b->emit = bc->emit;
  b->jit = bc->jit;
  b->cc = dup_or_null(bc->jit.cc);
  b->cflags = dup_or_null(bc->jit.cflags);
  b->tmp_dir = dup_or_null(bc->jit.tmp_dir ? bc->jit.tmp_dir : cfg ? cfg->tmp_dir : NULL);
  b->jit.cc = b->cc;
  b->jit.cflags = b->cflags;
  b->jit.tmp_dir = b->tmp_dir;
  b->timeout_s = cfg && cfg->timeout_s > 0 ? cfg->timeout_s : 60;
  return b;
}

tr_status tr_builtin_open_config(const tr_builtin_config *bc, const tr_target_config *cfg,
                                 tr_target **out, tr_diag *d) {
  (void)d;
  *out = make_target("builtin", from_config(bc, cfg));
  return TR_OK;
}

static bool parse_int(const char *s, int64_t lo, int64_t *v) {
  char *end;
  long long x = strtoll(s, &end, 10);
  if (!*s || *end || x < lo) return false;
  *v = x;
  return true;
}

tr_status tr_builtin_open(const char *spec, const tr_target_config *cfg, tr_target **out,
                          tr_diag *d) {
  *out = NULL;
  tr_builtin_config bc;
  tr_builtin_config_init(&bc);
  const char *opts = strncmp(spec, "builtin:", 8) == 0 ? spec + 8 : "";
  char *copy = tr_xstrdup(opts);
  char *names[64];
  int nnames = 0;
  tr_status s = TR_OK;
  for (char *save = NULL, *w = strtok_r(copy, ",", &save); w && s == TR_OK; w = strtok_r(NULL, ",", &save)) {
    char *eq = strchr(w, '=');
    const char *val = eq ? eq + 1 : NULL;
    if (eq) *eq = 0;
    int64_t v;
    if (strcmp(w, "fuel") == 0 && val && parse_int(val, -1, &v)) bc.fuel = v;
    else if (strcmp(w, "disable") == 0 && val && *val && nnames < 64) names[nnames++] = (char *)val;
    else if (strcmp(w, "lanes") == 0 && val && parse_int(val, 1, &v) && v <= 64) bc.emit.lanes = (int)v;
    else if (strcmp(w, "tile") == 0 && val && parse_int(val, 1, &v) && v <= 256) bc.emit.tile = (int)v;
    else if (strcmp(w, "nofuse") == 0 && !val) bc.emit.fuse_loops = false;
    else if (strcmp(w, "nocache") == 0 && !val) bc.jit.no_cache = true;
    else if (strcmp(w, "crash-test") == 0 && !val) bc.emit.test_crash = true;
    else if (strcmp(w, "jit") == 0 && val && strcmp(val, "cc") == 0) bc.jit.backend = TR_JIT_CC;
    else if (strcmp(w, "jit") == 0 && val && strcmp(val, "tcc") == 0) bc.jit.backend = TR_JIT_TCC;
    else if (strcmp(w, "cc") == 0 && val && *val) bc.jit.cc = val;
    else if (strcmp(w, "cflags") == 0 && val) bc.jit.cflags = val;
    else if (strcmp(w, "inject") == 0 && val && tr_defect_lookup(val) >= 0)
      bc.emit.inject |= (uint64_t)1 << tr_defect_lookup(val);
    else if (strcmp(w, "inject") == 0 && val) {
      tr_diag_errorf(d, "target '%s': unknown defect '%s' (see trench defects)", spec, val);
      s = TR_ERR_USAGE;
    }
    else {
      tr_diag_errorf(d, "target '%s': unknown or malformed option '%s%s%s' (known: fuel=N, "
                     "disable=NAME, inject=DEFECT, lanes=N, tile=N, nofuse, nocache, jit=cc|tcc, cc=PROGRAM, "
                     "cflags=FLAGS)",
                     spec, w, val ? "=" : "", val ? val : "");
      s = TR_ERR_USAGE;
    }
  }
  if (s == TR_OK && bc.jit.backend == TR_JIT_TCC && !tr_jit_have_tcc()) {
    tr_diag_errorf(d, "target '%s': this trench was built without libtcc (make TCC=1)", spec);
    s = TR_ERR_USAGE;
  }
  if (s == TR_OK) {
    /* A misspelt pass is an error now, not a silent no-op on every run. */
    tr_bc_ctx probe;
    tr_bc_ctx_init(&probe);
    for (int i = 0; i < nnames && s == TR_OK; i++) s = tr_bc_ctx_disable(&probe, names[i], d);
    tr_bc_ctx_free(&probe);
  }
  if (s == TR_OK) {
    bc.disable = (const char *const *)names;
    bc.ndisable = nnames;
    *out = make_target(spec, from_config(&bc, cfg));
  }
  tr_free(copy);
  return s;
}
