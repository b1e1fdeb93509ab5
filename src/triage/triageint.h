/* triageint.h - what the triage levels share (the files of src/triage): the
 * context of one triage run, the counted check, and the module surgery
 * every level needs (a module returning chosen values, dead-code
 * removal, the reference's values of chosen instructions). */
#ifndef TR_TRIAGEINT_H
#define TR_TRIAGEINT_H

#include "triage.h"

typedef struct {
  tr_target *t;
  const tr_triage_opts *o;
  tr_triage_report *r;
  tr_diag *d;
  char oom[512]; /* the out-of-memory verdict of a check or reference that
                    stopped the level (tg_oom), "" when none */
} tg_ctx;

/* ---- out of memory (issue 16) ----
 * Every level runs in a heap frame (tg_level): running out of memory in
 * triage's own bookkeeping unwinds the level, frees what it made, restores
 * the report as it was before the level and marks the level an error with
 * the out-of-memory verdict; the levels after it are not run and the
 * report is still written. A check, a target run or the reference that
 * itself ran out of memory (its own frame's verdict, tr_heap_diag_is) is
 * no answer to the level's question (a bisection step read as "passes"
 * would blame the wrong instruction): tg_oom unwinds the level too. */
typedef tr_status (*tg_level_fn)(tg_ctx *g, void *arg);
/* Runs fn(g, arg) as level lv in a heap frame; what names the work in
 * the verdict ("isolating the instruction"). Returns fn's status, or
 * TR_OK after an out-of-memory unwind, with *oom set (may be NULL). */
tr_status tg_level(tg_ctx *g, tr_level *lv, const char *what, tg_level_fn fn, void *arg, bool *oom);
/* When msg is an out-of-memory verdict and a frame is open: keeps it in
 * g->oom and unwinds the innermost frame (the level's). */
void tg_oom(tg_ctx *g, const char *msg);
/* tg_oom on a check's decline and its runs' messages. */
void tg_check_oom(tg_ctx *g, const tr_check_report *cr);
/* tg_oom on each message of d, a diagnostic of the level's own (a local):
 * d is cleared before the unwind (a diagnostic's messages outlive frames,
 * tr_heap_keep, so an unwind would leave them behind). */
void tg_oom_diag(tg_ctx *g, tr_diag *d);

/* One judged run of m on the given inputs through tr_check, counted in
 * lv (may be NULL) and in the report's total. cr is filled (free it);
 * non-OK only for trench's own trouble. */
tr_status tg_check(tg_ctx *g, tr_level *lv, const tr_module *m, tr_tensor *const *ins, int nins,
                   tr_check_report *cr);
/* One raw run of m on the report's inputs with run options ro (its
 * timeout set here), counted in lv and in the report's total; res is
 * initialised here (free it). For the levels that read what a target
 * says about its passes rather than a verdict. */
tr_status tg_run(tg_ctx *g, tr_level *lv, const tr_module *m, tr_run_opts *ro, tr_run_result *res, tr_diag *d);
/* Whether a check found the same kind of bug as r's signature (kind, and
 * the first wrong element's kind when both are mismatches). */
bool tg_same_kind(const tr_check_report *cr, const tr_check_sig *want);
/* tg_check reduced to: is it the finding of kind want->kind? */
bool tg_fails(tg_ctx *g, tr_level *lv, const tr_module *m, tr_tensor *const *ins, int nins,
              const tr_check_sig *want);

/* Entry instructions a level may blame: not parameters, constants,
 * tuples or tokens, in program order (operands first). *n gets the
 * count; the array is heap. */
const tr_instr **tg_blamable(const tr_module *m, int *n);
/* A clone of m whose entry returns the instructions with the given ids
 * (one: that instruction; several: a tuple), everything else they do not
 * need removed (parameters stay, so the inputs stay the same). */
tr_module *tg_with_root(const tr_module *m, const int *ids, int nids);
/* Removes dead instructions of every computation (never parameters) and
 * computations nothing reaches. */
void tg_dce(tr_module *m);
/* The reference's exact values of instructions of m (by id) on ins:
 * *outs gets one tensor per array leaf, in order. */
tr_status tg_ref_values(const tr_module *m, const int *ids, int nids, tr_tensor *const *ins,
                        int nins, tr_tensor ***outs, int *nouts, tr_diag *d);
/* Entry instructions of m, parameters included (what reports count). */
int tg_count(const tr_module *m);
/* Instructions of every computation of m (after tg_dce: the reachable
 * ones), the entry's included. */
int tg_count_all(const tr_module *m);

/* Level bookkeeping: wall time from begin to end. */
double tg_now_ms(void);
void tg_note(tr_level *lv, const char *fmt, ...);
void tg_progress(tg_ctx *g, const char *fmt, ...);

/* The levels (one file each). */
tr_status tg_outputs(tg_ctx *g, const tr_module *m);
tr_status tg_bisect_level(tg_ctx *g, const tr_module *m);
/* The culprit in (an entry instruction of m, which runs on the report's
 * inputs) at its first wrong element into c (case.c); one or two target
 * runs, counted in lv. */
void tg_case(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in, tr_triage_case *c);
/* What tg_case knows without running anything: the op, the operands'
 * types and which fold. */
void tg_case_static(const tr_module *m, const tr_instr *in, tr_triage_case *c);
/* The culprit in alone (a module of its own) checked on the reference's
 * values of its operands on the report's inputs; false when it could not
 * run (cr then holds nothing to free). */
bool tg_check_alone(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr *in, tr_check_report *cr);
/* Prefix bisection: the position (index into blamable order bl) of the
 * first instruction whose prefix module fails like want; -1 if none
 * (the whole module must fail). Counts runs in lv. */
int tg_bisect(tg_ctx *g, tr_level *lv, const tr_module *m, const tr_instr **bl, int nbl,
              tr_tensor *const *ins, int nins, const tr_check_sig *want);
/* Translation validation: the first pass run whose output module, on
 * ins, fails the original module's reference bounds. Builtin only: false
 * when t is not builtin (nothing learnt). guilty gets the pass name or
 * "codegen" (every pass kept the result); *opt the final module when
 * asked. */
bool tg_validate_passes(tg_ctx *g, tr_target *t, const tr_module *m, tr_tensor *const *ins, int nins,
                        const tr_triage_opts *o, char *guilty, size_t nguilty, int *run,
                        tr_module **opt, tr_diag *d);
/* Whether tg_validate_passes can judge modules on t (builtin). */
bool tg_can_validate(tr_target *t);
tr_status tg_passes_level(tg_ctx *g, const tr_module *m, tr_module **opt);
tr_status tg_kernel_level(tg_ctx *g, const tr_module *opt);
tr_status tg_disable_level(tg_ctx *g, const tr_module *m);

/* The reducer's structural moves (shrink.c): each returns a new module
 * (and, for shrink and narrow, its inputs in *outs), or NULL when the
 * move does not apply. inline: the call, the conditional's branch taken
 * on ins, or one trip of the while with id; shrink: dim k of parameter
 * pi (and of everything of its dims) cut to n; narrow: the which-th
 * narrowing (f64->f32, s64->s32, u64->u32, c128->c64) everywhere. */
tr_module *tg_move_inline(const tr_module *m, int id, tr_tensor *const *ins, int nins);
tr_module *tg_move_shrink(const tr_module *m, int pi, int k, int64_t n, tr_tensor *const *ins, int nins,
                          tr_tensor ***outs);
int tg_narrow_count(void);
tr_module *tg_move_narrow(const tr_module *m, int which, tr_tensor *const *ins, int nins, tr_tensor ***outs);

#endif
