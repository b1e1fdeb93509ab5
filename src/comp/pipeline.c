/* pipeline.c - the built-in compiler's pass list, read top to bottom in
 * the table below, and the context that lets every pass and rule be
 * disabled by name, rations rewrites with fuel, dumps the module after a
 * named pass and verifies it between passes. */
#include "compint.h"

#include <stdlib.h>
#include <string.h>

/* ---- the pipeline ---- */
typedef enum {
  STEP_PASS,        /* run one pass */
  STEP_REPEAT,      /* start of a group run until no pass in it changes */
  STEP_END          /* end of that group */
} step_kind;

typedef struct {
  step_kind kind;   /* what this row is */
  const char *name; /* pass name (STEP_PASS) */
  tr_pass_fn fn;    /* the pass; NULL: planned, not built yet (skipped) */
} step;

/* Rounds of a repeat group before giving up on a fixed point: each round
 * costs a full walk, and rule sets that ping-pong must still terminate. */
#define MAX_ROUNDS 8

static const step pipeline[] = {
  {STEP_PASS, "dce", tr_pass_dce},           /* drop dead input first: less to rewrite */
  {STEP_REPEAT, NULL, NULL},
  {STEP_PASS, "simplify", tr_pass_simplify}, /* algebraic rewrite rules (simplify.c) */
  {STEP_PASS, "constant-fold", tr_pass_constfold}, /* evaluate constant instructions (constfold.c) */
  {STEP_PASS, "cse", tr_pass_cse},           /* merge identical instructions */
  {STEP_PASS, "dce", tr_pass_dce},           /* remove what the rewrites orphaned */
  {STEP_END, NULL, NULL},
  {STEP_PASS, "while-simplify", tr_pass_whilesimp}, /* trip counts, dead state, unrolling (whilesimp.c) */
  /* The group again: unrolled bodies carry get-tuple-element(tuple)
   * pairs and dead induction arithmetic. */
  {STEP_REPEAT, NULL, NULL},
  {STEP_PASS, "simplify", tr_pass_simplify},
  {STEP_PASS, "constant-fold", tr_pass_constfold},
  {STEP_PASS, "cse", tr_pass_cse},
  {STEP_PASS, "dce", tr_pass_dce},
  {STEP_END, NULL, NULL},
  {STEP_PASS, "fusion", tr_pass_fusion},     /* producer-consumer, reduce-input, sibling (fusion.c) */
  {STEP_PASS, "dce", tr_pass_dce},
};

/* ---- names ---- */
static const char *const pass_names[] = {"dce", "simplify", "constant-fold", "cse",
                                         "while-simplify", "fusion", NULL};

const char *const *tr_bc_pass_names(void) { return pass_names; }

/* Every rule of every pass and the pass that fires it: the simplifier's
 * rules from their table, then the other passes' (pass_rules.def). */
static const char *const rule_names[] = {
#define X(id, name, op) name,
#include "simplify_rules.def"
#undef X
#define X(name, pass) name,
#include "pass_rules.def"
#undef X
  NULL,
};

static const char *const rule_passes[] = {
#define X(id, name, op) "simplify",
#include "simplify_rules.def"
#undef X
#define X(name, pass) pass,
#include "pass_rules.def"
#undef X
  NULL,
};

const char *const *tr_bc_rule_names(void) { return rule_names; }

const char *tr_bc_rule_pass(const char *rule) {
  for (int i = 0; rule_names[i]; i++)
    if (strcmp(rule_names[i], rule) == 0) return rule_passes[i];
  return NULL;
}

static bool known_rule(const char *name) { return tr_bc_rule_pass(name) != NULL; }

static bool known_pass(const char *name) {
  for (int i = 0; pass_names[i]; i++)
    if (strcmp(pass_names[i], name) == 0) return true;
  return false;
}

/* ---- the context ---- */
void tr_bc_ctx_init(tr_bc_ctx *c) {
  memset(c, 0, sizeof *c);
  c->fuel = -1;
  c->verify = true;
}

void tr_bc_ctx_free(tr_bc_ctx *c) {
  for (int i = 0; i < c->ndisabled_passes; i++) tr_free(c->disabled_passes[i]);
  for (int i = 0; i < c->ndisabled_rules; i++) tr_free(c->disabled_rules[i]);
  for (int i = 0; i < c->nlog; i++) {
    tr_free(c->log[i].comp);
    tr_free(c->log[i].instr);
  }
  tr_free(c->disabled_passes);
  tr_free(c->disabled_rules);
  tr_free(c->log);
  memset(c, 0, sizeof *c);
}

static void push_name(char ***v, int *n, const char *name) {
  *v = tr_xrealloc(*v, sizeof(char *) * (size_t)(*n + 1));
  (*v)[(*n)++] = tr_xstrdup(name);
}

tr_status tr_bc_ctx_disable(tr_bc_ctx *c, const char *name, tr_diag *d) {
  bool pass = known_pass(name), rule = known_rule(name);
  if (!pass && !rule) {
    tr_diag_errorf(d, "error: '%s' is neither a pass nor a rewrite rule of the built-in compiler",
                   name);
    return TR_ERR_USAGE;
  }
  if (pass) push_name(&c->disabled_passes, &c->ndisabled_passes, name);
  if (rule) push_name(&c->disabled_rules, &c->ndisabled_rules, name);
  return TR_OK;
}

bool tr_bc_pass_enabled(const tr_bc_ctx *c, const char *pass) {
  for (int i = 0; i < c->ndisabled_passes; i++)
    if (strcmp(c->disabled_passes[i], pass) == 0) return false;
  return true;
}

bool tr_bc_rule_enabled(const tr_bc_ctx *c, const char *rule) {
  for (int i = 0; i < c->ndisabled_rules; i++)
    if (strcmp(c->disabled_rules[i], rule) == 0) return false;
  return true;
}

bool tr_bc_fire(tr_bc_ctx *c, const char *pass, const char *rule, const tr_instr *in) {
  if (!tr_bc_rule_enabled(c, rule)) return false;
  if (c->fuel == 0) return false;
  if (c->fuel > 0) c->fuel--;
  if (c->nlog == c->caplog) {
    c->caplog = c->caplog ? c->caplog * 2 : 64;
    c->log = tr_xrealloc(c->log, sizeof(tr_bc_rewrite) * (size_t)c->caplog);
  }
  tr_bc_rewrite *r = &c->log[c->nlog++];
  r->pass = pass;
  r->rule = rule;
  r->comp = tr_xstrdup(in->parent ? in->parent->name : "");
  r->instr = tr_xstrdup(in->name);
  c->napplied++;
  return true;
}

/* ---- running ---- */
static tr_status run_pass(tr_bc_ctx *c, const step *s, tr_module *m, int *ndumps,
                          int *nruns, bool *changed, tr_diag *d) {
  *changed = false;
  if (!s->fn || !tr_bc_pass_enabled(c, s->name)) return TR_OK;
  tr_status st = s->fn(c, m, changed, d);
  if (st != TR_OK) return st;
  if (c->verify) {
    tr_diag vd = {0};
    if (tr_verify(m, &vd) != TR_OK) {
      tr_diag_errorf(d, "error: pass %s left an invalid module", s->name);
      for (int i = 0; i < vd.nmsgs; i++) tr_diag_errorf(d, "%s", vd.msgs[i]);
      tr_diag_clear(&vd);
      return TR_ERR_INVALID;
    }
    tr_diag_clear(&vd);
  }
  if (c->dump && c->dump_after && strcmp(c->dump_after, s->name) == 0) {
    (*ndumps)++;
    tr_buf_printf(c->dump, "// after pass %s (run %d)%s\n", s->name, *ndumps,
                  *changed ? "" : ", unchanged");
    tr_print_module(c->dump, m);
  }
  (*nruns)++;
  if (c->after_pass) c->after_pass(c->after_pass_user, s->name, *nruns, *changed, m);
  return TR_OK;
}

tr_status tr_bc_pipeline_run(tr_bc_ctx *c, tr_module *m, tr_diag *d) {
  /* Passes trust shapes, so an invalid input must stop here, not crash. */
  if (tr_verify(m, d) != TR_OK) return TR_ERR_INVALID;
  /* One device: async pairs (<op>-start/-done) are their synchronous ops,
   * as the reference evaluates them (desugar.c). */
  tr_desugar_async(m);
  int ndumps = 0, nruns = 0;
  int n = TR_NELEMS(pipeline);
  for (int i = 0; i < n; i++) {
    bool changed;
    if (pipeline[i].kind == STEP_PASS) {
      tr_status st = run_pass(c, &pipeline[i], m, &ndumps, &nruns, &changed, d);
      if (st != TR_OK) return st;
      continue;
    }
    if (pipeline[i].kind != STEP_REPEAT) continue;
    int end = i + 1;
    while (end < n && pipeline[end].kind != STEP_END) end++;
    for (int round = 0; round < MAX_ROUNDS; round++) {
      bool any = false;
      for (int k = i + 1; k < end; k++) {
        tr_status st = run_pass(c, &pipeline[k], m, &ndumps, &nruns, &changed, d);
        if (st != TR_OK) return st;
        any |= changed;
      }
      if (!any) break;
    }
    i = end;
  }
  return TR_OK;
}

/* One pass alone, by name: what a rule's test runs, so that the test does
 * not depend on what the pipeline runs before or after it. The pass runs
 * until it changes nothing (at most MAX_ROUNDS times), as in a repeat
 * group, with the same input checks, verification, dump and hook. */
tr_status tr_bc_pass_run(tr_bc_ctx *c, tr_module *m, const char *pass, tr_diag *d) {
  const step *s = NULL;
  for (int i = 0; i < TR_NELEMS(pipeline) && !s; i++)
    if (pipeline[i].kind == STEP_PASS && strcmp(pipeline[i].name, pass) == 0) s = &pipeline[i];
  if (!s) {
    tr_diag_errorf(d, "error: '%s' is not a pass of the built-in compiler", pass);
    return TR_ERR_USAGE;
  }
  if (tr_verify(m, d) != TR_OK) return TR_ERR_INVALID;
  tr_desugar_async(m);
  int ndumps = 0, nruns = 0;
  for (int round = 0; round < MAX_ROUNDS; round++) {
    bool changed;
    tr_status st = run_pass(c, s, m, &ndumps, &nruns, &changed, d);
    if (st != TR_OK || !changed) return st;
  }
  return TR_OK;
}
