/* pipeline.h - the built-in optimizing compiler's pass pipeline and its
 * context: which passes and rewrite rules are disabled, the fuel counter
 * that stops rewriting after N applications (so a wrong result can be
 * pinned to one application), --dump-after, and the log of every rewrite
 * applied. The pass list itself is one table in pipeline.c. */
#ifndef TR_COMP_PIPELINE_H
#define TR_COMP_PIPELINE_H

#include "../ir/ir.h"
#include "defects.h"

/* One rewrite application, for reports and fuel bisection. */
typedef struct {
  const char *pass;  /* pass that applied it (static string) */
  const char *rule;  /* rule name (static string) */
  char *comp;        /* computation it happened in (heap) */
  char *instr;       /* instruction rewritten or removed (heap) */
} tr_bc_rewrite;

/* Everything that steers one compilation. Initialize with
 * tr_bc_ctx_init, release with tr_bc_ctx_free. Nothing here is global:
 * several compilations may run at once, each with its own context. */
typedef struct {
  char **disabled_passes;   /* pass names not to run (heap) */
  int ndisabled_passes;
  char **disabled_rules;    /* rule names not to apply, in any pass (heap) */
  int ndisabled_rules;
  int64_t fuel;             /* applications left; -1 = unlimited */
  const char *dump_after;   /* pass whose result is printed, or NULL */
  tr_buf *dump;             /* where dump_after's modules go */
  bool verify;              /* tr_verify after every pass (debug, tests) */
  tr_bc_rewrite *log;     /* every application, in order (heap) */
  int nlog, caplog;
  int64_t napplied;         /* applications so far (== nlog) */
  uint64_t inject;          /* defects to plant: TR_DEFECT_BIT set (defects.h); 0 = none */
  /* Called after every pass that ran, with the module as it left it
   * (translation validation in src/triage/passes.c); NULL: none. run
   * counts the passes run so far, from 1. */
  void (*after_pass)(void *user, const char *pass, int run, bool changed, const tr_module *m);
  void *after_pass_user;
} tr_bc_ctx;

/* Defaults: nothing disabled, unlimited fuel, no dump, verify on. */
void tr_bc_ctx_init(tr_bc_ctx *c);
void tr_bc_ctx_free(tr_bc_ctx *c);

/* Disables a pass or a rule by name. Returns TR_ERR_USAGE with a
 * diagnostic when the name is neither (so a typo on the command line is an
 * error, not a silent no-op). */
tr_status tr_bc_ctx_disable(tr_bc_ctx *c, const char *name, tr_diag *d);
bool tr_bc_pass_enabled(const tr_bc_ctx *c, const char *pass);
bool tr_bc_rule_enabled(const tr_bc_ctx *c, const char *rule);

/* Asked by a pass when a rule has matched at instruction in and before it
 * changes anything: returns false (apply nothing) when the rule is
 * disabled or the fuel is spent; otherwise consumes one unit of fuel, logs
 * the application and returns true. */
bool tr_bc_fire(tr_bc_ctx *c, const char *pass, const char *rule, const tr_instr *in);

/* Runs the pass pipeline on m in place. m must verify (an invalid input is
 * TR_ERR_INVALID with the verifier's diagnostics). With c->verify, a pass
 * that leaves an invalid module is TR_ERR_INVALID with a diagnostic naming
 * the pass, followed by the verifier's. */
tr_status tr_bc_pipeline_run(tr_bc_ctx *c, tr_module *m, tr_diag *d);

/* Runs the one pass named pass on m in place until it changes nothing
 * (rule tests: a rule checked without the rest of the pipeline around
 * it). An unknown pass is TR_ERR_USAGE; otherwise as tr_bc_pipeline_run. */
tr_status tr_bc_pass_run(tr_bc_ctx *c, tr_module *m, const char *pass, tr_diag *d);

/* NULL-terminated lists: the pipeline's passes (each once, in pipeline
 * order), and every rule of every pass. */
const char *const *tr_bc_pass_names(void);
const char *const *tr_bc_rule_names(void);
/* The pass that fires rule, or NULL when there is no such rule. */
const char *tr_bc_rule_pass(const char *rule);

#endif
