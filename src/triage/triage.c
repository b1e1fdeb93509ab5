/* triage.c - tr_isolate, which runs the levels in order, and what the
 * levels share: the counted check, the same-bug test and the module
 * surgery (a module returning chosen values, dead-code removal, the
 * reference's values of chosen instructions). */
#include "triageint.h"
#include "../eval/eval.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void tr_triage_opts_init(tr_triage_opts *o) {
  memset(o, 0, sizeof *o);
  o->label = "module";
  o->nseeds = 3;
  o->k = 1;
  o->repro_runs = 3;
}

const char *tr_level_state_name(tr_level_state s) {
  static const char *const names[] = {"skipped", "found", "none", "unresolved", "error"};
  return s <= TR_LEVEL_ERROR ? names[s] : "?";
}

void tr_triage_report_free(tr_triage_report *r) {
  tr_free(r->target);
  tr_free(r->label);
  tr_free(r->module_text);
  tr_inputs_free(r->inputs, r->ninputs);
  tr_free(r->kernel_text);
  tr_free(r->reduced_text);
  tr_inputs_free(r->reduced_inputs, r->nreduced_inputs);
  memset(r, 0, sizeof *r);
}

double tg_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

void tg_note(tr_level *lv, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lv->note, sizeof lv->note, fmt, ap);
  va_end(ap);
}

void tg_progress(tg_ctx *g, const char *fmt, ...) {
  if (!g->o->verbose) return;
  va_list ap;
  va_start(ap, fmt);
  fputs("triage: ", stderr);
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
}

/* ---- out of memory ---- */
/* Keeps the line of msg that holds needle in g->oom and unwinds. */
static void oom_raise(tg_ctx *g, const char *msg, const char *needle) {
  const char *at = msg && tr_heap_active() ? strstr(msg, needle) : NULL;
  if (!at) return;
  const char *ls = at, *le = strchr(at, '\n');
  while (ls > msg && ls[-1] != '\n') ls--;
  size_t n = le ? (size_t)(le - ls) : strlen(ls);
  if (n >= sizeof g->oom) n = sizeof g->oom - 1;
  memcpy(g->oom, ls, n);
  g->oom[n] = 0;
  tr_heap_raise(0);
}

/* trench's own messages (the reference's, a check's diagnostics) say
 * "out of memory" in a few forms (an evaluator's "unsupported: out of
 * memory for a result"); a target's message counts only in the heap
 * frame's own wording, which trench wrote for it (a target that says
 * "out of memory" itself has a verdict of its own). */
void tg_oom(tg_ctx *g, const char *msg) { oom_raise(g, msg, "out of memory"); }

static void oom_target(tg_ctx *g, const char *msg) {
  if (tr_heap_diag_is(msg)) oom_raise(g, msg, ": error: out of memory ");
}

void tg_oom_diag(tg_ctx *g, tr_diag *d) {
  if (!d || !tr_heap_active()) return;
  for (int i = 0; i < d->nmsgs; i++)
    if (strstr(d->msgs[i], "out of memory")) {
      char msg[sizeof g->oom]; /* a copy first: clearing d frees it */
      snprintf(msg, sizeof msg, "%s", d->msgs[i]);
      tr_diag_clear(d);
      oom_raise(g, msg, "out of memory");
    }
}

void tg_check_oom(tg_ctx *g, const tr_check_report *cr) {
  tg_oom(g, cr->declined);
  for (int i = 0; i < cr->nruns; i++) oom_target(g, cr->runs[i].message);
}

typedef struct {
  tg_ctx *g;
  tg_level_fn fn;
  void *arg;
  tr_status st;
} level_job;

static void level_run(void *p) {
  level_job *j = p;
  j->st = j->fn(j->g, j->arg);
}

tr_status tg_level(tg_ctx *g, tr_level *lv, const char *what, tg_level_fn fn, void *arg, bool *oom) {
  tr_triage_report *r = g->r;
  /* The report before the level: its blocks are outside the frame. */
  tr_triage_report before = *r;
  level_job j = {g, fn, arg, TR_OK};
  size_t bytes = 0;
  double t0 = tg_now_ms();
  g->oom[0] = 0;
  if (oom) *oom = false;
  if (tr_heap_run(level_run, &j, &bytes)) return j.st;
  /* What the level wrote into the report (blocks among it) went with the
   * frame; its run counts stay, they happened. */
  int runs = lv->runs, total = r->total_runs;
  *r = before;
  lv->runs = runs;
  r->total_runs = total;
  lv->state = TR_LEVEL_ERROR;
  lv->ms = tg_now_ms() - t0;
  if (g->oom[0]) tg_note(lv, "%s stopped: %s", what, g->oom);
  else tr_heap_msg(lv->note, sizeof lv->note, g->o->label ? g->o->label : "module", what, bytes);
  if (oom) *oom = true;
  return TR_OK;
}

/* ---- judging ---- */
tr_status tg_run(tg_ctx *g, tr_level *lv, const tr_module *m, tr_run_opts *ro, tr_run_result *res, tr_diag *d) {
  ro->timeout_s = g->o->timeout_s;
  tr_run_result_init(res);
  tr_status st = tr_target_run(g->t, m, g->r->inputs, g->r->ninputs, ro, res, d);
  lv->runs++;
  g->r->total_runs++;
  oom_target(g, res->message);
  tg_oom_diag(g, d);
  return st;
}

tr_status tg_check(tg_ctx *g, tr_level *lv, const tr_module *m, tr_tensor *const *ins, int nins,
                   tr_check_report *cr) {
  tr_check_opts co;
  tr_check_opts_init(&co);
  co.label = g->o->label;
  co.inputs = ins;
  co.ninputs = nins;
  co.k = g->o->k;
  co.profile = g->o->profile;
  co.timeout_s = g->o->timeout_s;
  tr_diag cd = {0};
  tr_status st = tr_check(g->t, m, &co, cr, &cd);
  if (lv) lv->runs++;
  g->r->total_runs++;
  tg_oom_diag(g, &cd);
  if (st != TR_OK && g->d)
    for (int i = 0; i < cd.nmsgs; i++) tr_diag_errorf(g->d, "%s", cd.msgs[i]);
  tr_diag_clear(&cd);
  tg_check_oom(g, cr);
  return st;
}

bool tg_same_kind(const tr_check_report *cr, const tr_check_sig *want) {
  if (cr->outcome != TR_CHECK_FINDING) return false;
  if (strcmp(cr->sig.kind, want->kind) != 0) return false;
  return true;
}

bool tg_fails(tg_ctx *g, tr_level *lv, const tr_module *m, tr_tensor *const *ins, int nins,
              const tr_check_sig *want) {
  tr_check_report cr;
  bool bad = tg_check(g, lv, m, ins, nins, &cr) == TR_OK && tg_same_kind(&cr, want);
  tr_check_report_free(&cr);
  return bad;
}

/* ---- module surgery ---- */
static bool blamable(const tr_instr *in) {
  if (in->op == TR_OP_PARAMETER || in->op == TR_OP_CONSTANT || in->op == TR_OP_TUPLE) return false;
  if (tr_ops[in->op].flags & TR_OPF_S) return false;
  return tr_shape_leaves(in->shape, NULL, 0) > 0;
}

const tr_instr **tg_blamable(const tr_module *m, int *n) {
  const tr_comp *e = m->entry;
  const tr_instr **out = tr_xcalloc((size_t)e->ninstrs + 1, sizeof *out);
  *n = 0;
  for (int i = 0; i < e->ninstrs; i++)
    if (blamable(e->instrs[i])) out[(*n)++] = e->instrs[i];
  return out;
}

int tg_count(const tr_module *m) { return m->entry ? m->entry->ninstrs : 0; }

int tg_count_all(const tr_module *m) {
  int n = 0;
  for (int i = 0; i < m->ncomps; i++) n += m->comps[i]->ninstrs;
  bool has_entry = false;
  for (int i = 0; i < m->ncomps; i++) has_entry |= m->comps[i] == m->entry;
  return n + (!has_entry && m->entry ? m->entry->ninstrs : 0);
}

static void mark_reach(const tr_comp *c, unsigned char *seen, int nids) {
  if (c->id < 0 || c->id >= nids || seen[c->id]) return;
  seen[c->id] = 1;
  for (int i = 0; i < c->ninstrs; i++) {
    tr_comp *called[64];
    int n = tr_instr_called(c->instrs[i], called, 64);
    for (int k = 0; k < n && k < 64; k++) mark_reach(called[k], seen, nids);
  }
}

/* Dead instructions of c go (never parameters: a computation's
 * signature stays). */
static void dce_comp(tr_comp *c) {
  for (bool again = true; again;) {
    again = false;
    for (int i = c->ninstrs - 1; i >= 0; i--) {
      tr_instr *in = c->instrs[i];
      if (in == c->root || in->op == TR_OP_PARAMETER || in->nusers > 0) continue;
      tr_comp_remove(c, in);
      again = true;
    }
  }
}

void tg_dce(tr_module *m) {
  tr_comp *e = m->entry;
  /* Every computation: a reducer move inside a body leaves its dead
   * instructions there. */
  for (int i = 0; i < m->ncomps; i++) dce_comp(m->comps[i]);
  dce_comp(e);
  unsigned char *seen = tr_xcalloc((size_t)m->next_id + 1, 1);
  mark_reach(e, seen, m->next_id + 1);
  int k = 0;
  for (int i = 0; i < m->ncomps; i++)
    if (m->comps[i]->id >= 0 && m->comps[i]->id <= m->next_id && seen[m->comps[i]->id])
      m->comps[k++] = m->comps[i];
  m->ncomps = k;
  tr_free(seen);
}

static tr_instr *find_id(const tr_comp *c, int id) {
  for (int i = 0; i < c->ninstrs; i++)
    if (c->instrs[i]->id == id) return c->instrs[i];
  return NULL;
}

tr_module *tg_with_root(const tr_module *m, const int *ids, int nids) {
  tr_module *x = tr_module_clone(m);
  tr_comp *e = x->entry;
  tr_instr **ops = tr_xcalloc((size_t)nids + 1, sizeof *ops);
  for (int i = 0; i < nids; i++) {
    ops[i] = find_id(e, ids[i]);
    if (!ops[i]) {
      tr_free(ops);
      tr_module_free(x);
      return NULL;
    }
  }
  tr_instr *root = ops[0];
  if (nids != 1) {
    tr_shape **el = tr_arena_alloc(x->arena, sizeof(tr_shape *) * (size_t)(nids + 1));
    for (int i = 0; i < nids; i++) el[i] = ops[i]->shape;
    char name[64];
    snprintf(name, sizeof name, "triage.cut.%d", x->next_id);
    root = tr_instr_new(x, TR_OP_TUPLE, tr_arena_strdup(x->arena, name), tr_shape_tuple(x->arena, nids, el));
    tr_comp_append(e, root);
    tr_instr_set_operands(root, ops, nids);
  }
  tr_free(ops);
  e->root = root;
  tr_drop_entry_layout(x);
  tg_dce(x);
  return x;
}

tr_status tg_ref_values(const tr_module *m, const int *ids, int nids, tr_tensor *const *ins,
                        int nins, tr_tensor ***outs, int *nouts, tr_diag *d) {
  *outs = NULL;
  *nouts = 0;
  tr_module *x = tg_with_root(m, ids, nids);
  if (!x) {
    tr_diag_errorf(d, "triage: an instruction to evaluate is not in the entry");
    return TR_ERR_INVALID;
  }
  tr_status st = tr_eval(x, ins, nins, outs, nouts, d);
  tr_module_free(x);
  return st;
}

/* ---- isolate ---- */
typedef struct {
  const tr_module *m;
  tr_module *opt; /* the passes level's optimized module, or NULL */
} iso_arg;

static tr_status lv_outputs(tg_ctx *g, void *p) {
  const tr_module *m = ((iso_arg *)p)->m;
  tr_triage_report *r = g->r;
  r->target = tr_xstrdup(g->t->spec ? g->t->spec : "");
  r->label = tr_xstrdup(g->o->label ? g->o->label : "module");
  tr_buf b = {0};
  tr_print_module(&b, m);
  r->module_text = b.p ? b.p : tr_xstrdup("");
  r->module_instrs = tg_count(m);
  r->module_instrs_all = tg_count_all(m);
  return tg_outputs(g, m);
}

static tr_status lv_bisect(tg_ctx *g, void *p) { return tg_bisect_level(g, ((iso_arg *)p)->m); }
static tr_status lv_passes(tg_ctx *g, void *p) {
  iso_arg *a = p;
  return tg_passes_level(g, a->m, &a->opt);
}
static tr_status lv_kernel(tg_ctx *g, void *p) { return tg_kernel_level(g, ((iso_arg *)p)->opt); }
static tr_status lv_disable(tg_ctx *g, void *p) { return tg_disable_level(g, ((iso_arg *)p)->m); }

tr_status tr_isolate(tr_target *t, const tr_module *m, const tr_triage_opts *o,
                     tr_triage_report *r, tr_diag *d) {
  memset(r, 0, sizeof *r);
  tg_ctx g = {t, o, r, d, ""};
  double t0 = tg_now_ms();
  r->culprit_op = TR_OP_COUNT;
  r->inner_op = TR_OP_COUNT;
  r->reduced_op = TR_OP_COUNT;
  r->culprit_pos = -1;
  iso_arg a = {m, NULL};
  bool oom = false;
  tr_status st = tg_level(&g, &r->outputs, "triaging the outputs", lv_outputs, &a, &oom);
  if (oom) {
    /* No finding to triage is known: trench's own trouble. */
    tr_diag_errorf(d, "%s", r->outputs.note);
    r->total_ms = tg_now_ms() - t0;
    return TR_ERR_UNSUPPORTED;
  }
#define GO (st == TR_OK && !oom && r->outputs.state == TR_LEVEL_FOUND)
  if (GO) st = tg_level(&g, &r->instr, "isolating the instruction", lv_bisect, &a, &oom);
  if (GO && !o->no_passes) {
    st = tg_level(&g, &r->passes, "validating the passes", lv_passes, &a, &oom);
    if (oom) a.opt = NULL; /* it went with the frame */
  }
  if (GO && !o->no_kernel && a.opt) st = tg_level(&g, &r->kernel, "isolating the kernel", lv_kernel, &a, &oom);
  if (GO && !o->no_passes) st = tg_level(&g, &r->disable, "disabling passes", lv_disable, &a, &oom);
#undef GO
  tr_module_free(a.opt);
  r->total_ms = tg_now_ms() - t0;
  return st;
}
