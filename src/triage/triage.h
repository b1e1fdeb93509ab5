/* triage.h - hierarchical triage of a finding (docs/TRIAGE.md): from a
 * module a target gets wrong to the outputs that fail, the first wrong
 * instruction (keeping the compiler's context), the pass that broke it
 * (translation validation, pass disabling, fuel bisection to one rewrite),
 * the fused kernel and its wrong body instruction, and a reduced module
 * that still shows the same bug. Every judgement is a tr_check (check.h);
 * every level records what it found and how many target runs it cost.
 *
 * One file per level: outputs.c, bisect.c, passes.c, fusion.c,
 * disable.c; reduce.c the reducer and shrink.c its structural moves;
 * report.c the bundle and the reports; bundle.c a finding's bundle in,
 * triage out (what a fuzz campaign runs per finding); triage.c what they
 * share. */
#ifndef TR_TRIAGE_H
#define TR_TRIAGE_H

#include "../oracle/check.h"

/* What a triage run may do and how it judges. */
typedef struct {
  const char *label;        /* module path, for messages and reports */
  uint64_t seed0;           /* first seed (default 0) */
  int nseeds;               /* seeds tried by the outputs level (3) */
  tr_tensor *const *inputs; /* given inputs instead of seeds (a bundle's) */
  int ninputs;
  double k;                 /* bound multiplier (1) */
  const tr_profile *profile;/* NULL: strict */
  double timeout_s;         /* per target run; <= 0: the target's default */
  int repro_runs;           /* reduce: runs measuring the reproduction rate (3) */
  int max_candidates;       /* reduce: stop after this many candidates (0: 5000) */
  bool no_passes;           /* skip the pass levels (translation validation,
                               disabling, fuel) */
  bool no_kernel;           /* skip the fused-kernel level */
  bool verbose;             /* progress lines on stderr */
} tr_triage_opts;

void tr_triage_opts_init(tr_triage_opts *o);

/* A level's state in the report. */
typedef enum {
  TR_LEVEL_SKIPPED,    /* not run (not applicable, or an earlier level
                          made it pointless) */
  TR_LEVEL_FOUND,      /* named a culprit */
  TR_LEVEL_NONE,       /* ran, named nothing (e.g. every pass keeps the
                          result: code generation) */
  TR_LEVEL_UNRESOLVED, /* ran, could not decide (e.g. disabling breaks
                          compilation; the levels disagree) */
  TR_LEVEL_ERROR       /* trench's own trouble; see note */
} tr_level_state;

const char *tr_level_state_name(tr_level_state s);

typedef struct {
  tr_level_state state;
  int runs;             /* target runs this level made */
  double ms;            /* its wall time */
  char note[512];       /* one line a person reads: what and why */
} tr_level;

/* The culprit's first wrong element (case.c): the culprit (its inner
 * instruction when it wraps computations) made the root and run on the
 * failing inputs, then alone on the reference's operand values when the
 * context run shows nothing; its operands' reference values there (an
 * elementwise op: the element itself; any op: rank-0 operands), and
 * which operands the compiler can fold (no parameter behind them).
 * known.c matches it against recorded bugs; reports print text. */
#define TR_CASE_ARGS 6
typedef struct {
  bool has;                      /* op and args are set */
  bool elem;                     /* a wrong element was seen: index,
                                    target, ref, bound are set */
  bool alone;                    /* ... in the culprit run alone */
  tr_op op;
  tr_dtype dtype;                /* of the wrong leaf (else the result's) */
  double target, ref, bound;
  char index[96];
  int nargs;                     /* operands described (<= TR_CASE_ARGS) */
  int noperands;                 /* the culprit's operands */
  tr_dtype arg_dt[TR_CASE_ARGS];
  int64_t arg_n[TR_CASE_ARGS];   /* elements (-1: a tuple or unknown) */
  bool arg_set[TR_CASE_ARGS];    /* the values below are at the element */
  double arg[TR_CASE_ARGS];      /* as a double (complex: real part) */
  double arg_im[TR_CASE_ARGS];   /* complex: imaginary part */
  uint64_t arg_bits[TR_CASE_ARGS]; /* raw pattern (ints: zero-extended) */
  bool arg_folded[TR_CASE_ARGS]; /* no parameter behind it */
  bool arg_zero[TR_CASE_ARGS];   /* some element is zero */
  bool arg_tiny[TR_CASE_ARGS];   /* some element is a nonzero denormal */
  bool scale_denormal;           /* triangular-solve: an entry of the matrix over
                                    a diagonal entry of its row or column is a
                                    nonzero below the smallest normal */
  char text[400];                /* "power(u32 3, u32 4294967295) at [2] = 1; reference 0 +- 0" */
} tr_triage_case;

/* Everything triage found. Heap-owned; tr_triage_report_free. */
typedef struct {
  char *target;           /* the target's spec */
  char *label;
  char *module_text;      /* the module as triaged */
  int module_instrs;      /* its entry instructions */
  int module_instrs_all;  /* and those of every computation */
  tr_check_sig sig;       /* the finding's signature */
  uint64_t seed;          /* the failing seed (given: unused) */
  bool given;
  tr_tensor **inputs;     /* the failing run's inputs (owned) */
  int ninputs;

  /* outputs */
  tr_level outputs;
  int nseeds_tried, nseeds_failing;
  char failing_outputs[256]; /* "0,2" leaf indices on the failing seed */
  char first_index[96];      /* first failing element, "[i,j]" */
  double first_value, first_target, first_bound;
  int first_output;

  /* instruction, keeping context (prefix bisection) */
  tr_level instr;
  char culprit[128];      /* instruction name in the module, "" if none */
  tr_op culprit_op;       /* TR_OP_COUNT if none */
  int culprit_pos;        /* its position in the entry's order, -1 */
  int bisect_runs;        /* target runs of the bisection alone */
  char inner[128];        /* a call-like culprit's wrong instruction
                             inside it (inlined and bisected again), "" */
  tr_op inner_op;         /* its op; TR_OP_COUNT if none */
  /* cross-check: the culprit alone fed the reference's operand values,
   * and the anchored per-instruction check's first mismatch */
  char alone[32];         /* "wrong", "right" (needs context), "" */
  char per_instr[128];    /* first mismatch per instruction, "" none */
  bool agree;             /* the checks agree with the bisection */
  tr_triage_case kase;    /* the culprit's first wrong element */
  char known[32];         /* a recorded bug it matches (known.def), "" */
  char known_title[200];  /* its title */

  /* passes: translation validation */
  tr_level passes;
  char guilty_pass[64];   /* "" none; "codegen" when every pass kept it */
  int guilty_run;         /* which run of the pass (1-based overall) */

  /* fused kernel */
  tr_level kernel;
  char kernel_name[128];  /* the fusion (or instruction) of the optimized
                             module that is wrong alone */
  char kernel_instr[128]; /* the wrong instruction inside its body */
  char *kernel_text;      /* the optimized module, or NULL */

  /* pass attribution by disabling, and fuel */
  tr_level disable;
  char disabled_fix[256]; /* passes whose disabling removes the mismatch */
  tr_level fuel;
  int64_t fuel_n;         /* the application that breaks it (1-based) */
  char rule[64];          /* its rule name */
  char rule_pass[64];     /* the pass that applied it */
  char rule_instr[128];   /* the instruction it rewrote */

  /* reduction */
  tr_level reduce;
  int repro_ok, repro_of; /* reproduction rate of the original */
  bool flaky;
  char *reduced_text;     /* the reduced module, or NULL */
  int reduced_instrs;
  int reduced_instrs_all; /* every computation's, the entry's included */
  int candidates, accepted;
  tr_op reduced_op;       /* the culprit's op in the reduced module (it
                             follows the culprit through inlining) */
  tr_tensor **reduced_inputs; /* the reduced module's inputs (owned) */
  int nreduced_inputs;

  int total_runs;         /* target runs, every level */
  double total_ms;
} tr_triage_report;

void tr_triage_report_free(tr_triage_report *r);

/* Isolates m's finding on t level by level: outputs, instruction,
 * passes, fused kernel, disabling, fuel. Returns TR_OK whenever a report
 * was made (r->outputs.state says whether there was a finding at all:
 * NONE when every seed passes); non-OK only for trench's own trouble. */
tr_status tr_isolate(tr_target *t, const tr_module *m, const tr_triage_opts *o,
                     tr_triage_report *r, tr_diag *d);

/* Reduces m keeping its finding's signature (kind, culprit op, guilty
 * pass where known, first wrong element's kind). Run after tr_isolate on
 * the same r (or on a zeroed r: it isolates the outputs first). Fills
 * r->reduce, reduced_text and reduced_inputs. */
tr_status tr_reduce(tr_target *t, const tr_module *m, const tr_triage_opts *o,
                    tr_triage_report *r, tr_diag *d);

/* The reducer's test: whether m on ins shows r's finding with its
 * signature unchanged (kind, op of the first wrong output, first wrong
 * element's kind, guilty pass where known). Counts one candidate. */
bool tr_triage_keeps_sig(tr_target *t, const tr_module *m, tr_tensor *const *ins, int nins,
                         const tr_triage_opts *o, tr_triage_report *r);

/* Writes the triage bundle into dir (created): module.hlo, inN.npy,
 * reduced.hlo and reduced_inN.npy, optimized.hlo, report.json, report.md,
 * report.html and the regression artifacts (regress.hlo with its
 * expectation for builtin; repro.py for xla-cpu). */
tr_status tr_triage_write(const char *dir, const tr_triage_report *r, tr_diag *d);

/* A finding's bundle (tr_check --save: module.hlo, inN.npy): the module
 * (verified) and its inputs (bundle.c). */
tr_status tr_triage_load_bundle(const char *dir, tr_module **m, tr_tensor ***ins, int *nins, tr_diag *d);
/* Isolates and reduces the bundle's finding on target (opened with tc)
 * and writes the triage bundle into DIR/triage. What a fuzz campaign runs
 * in the background for each new finding. */
tr_status tr_triage_bundle(const char *dir, const char *target, const tr_target_config *tc,
                           const tr_profile *profile, tr_diag *d);

/* The recorded bug of target whose trigger the culprit in and its case c
 * match, for a finding of signature sig (known.def; docs/TRIAGE.md): its
 * id ("xla-17"), NULL when none; *title gets its title. */
const char *tr_known_match(const char *target, const tr_instr *in, const tr_triage_case *c,
                           const tr_check_sig *sig, const char **title);
/* Entries of known.def for a completeness test: the i-th id, NULL past
 * the end. */
const char *tr_known_id(int i);

/* The report as JSON (every level), markdown and HTML. */
cJSON *tr_triage_json(const tr_triage_report *r);
void tr_triage_markdown(tr_buf *b, const tr_triage_report *r);
void tr_triage_html(tr_buf *b, const tr_triage_report *r);

#endif
