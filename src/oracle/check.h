/* check.h - tr_check: judges one module on a target against the reference
 * over several input seeds. The one checking loop of trench: `trench
 * check` renders its report as text or JSON; the fuzzer, the reducer, the
 * isolator and the kernel verifier call the same function.
 *
 * A check draws inputs per seed (or takes given ones), evaluates the
 * reference in shadow mode, runs the target, judges every output element
 * against the reference's bounds with the target's profile in two passes
 * (compare.h), optionally judges every instruction alone
 * (--per-instruction, anchor.h), and can write a bundle of the first
 * finding (crash-safe: written in a temporary folder and renamed into
 * place with a COMPLETE marker). */
#ifndef TR_CHECK_H
#define TR_CHECK_H

#include "../target/target.h"
#include "compare.h"
#include "inputs.h"
#include "profile.h"

#include <cjson/cJSON.h>

/* What a check (one module, all its seeds) amounts to, worst first. */
typedef enum {
  TR_CHECK_PASS,        /* every judged output passed */
  TR_CHECK_WEAK,        /* no finding, but some output said little */
  TR_CHECK_UNSUPPORTED, /* the target declined the module */
  TR_CHECK_DECLINED,    /* the reference declined it (unsupported op, over
                           a limit: memory, trips, deadline); no verdict */
  TR_CHECK_FINDING,     /* mismatch, crash, hang, compile-error, error,
                           protocol-error */
  TR_CHECK_ERROR        /* trench's own trouble (cannot write a file,
                           inputs do not fit); see the diagnostic */
} tr_check_outcome;

const char *tr_check_outcome_name(tr_check_outcome o); /* "pass", ... */

/* The class of a finding: the verdict for target failures, "mismatch"
 * for wrong values, "per-instruction-mismatch" for a mismatch seen only
 * per instruction. */
typedef struct {
  char kind[32];      /* "mismatch", "crash", "hang", ... */
  tr_op op;           /* producer of the first wrong output leaf (the
                         root's operand for tuples); TR_OP_COUNT if none */
  tr_dtype dtype;     /* dtype of that leaf; TR_DT_COUNT if none */
  int output;         /* leaf index, -1 if none */
  char value_kind[16];/* first wrong element: "finite", "nan", "inf",
                         "zero", or "" */
} tr_check_sig;

/* One judged output leaf of one run. */
typedef struct {
  bool protocol_error;   /* the output did not fit (cmp unset) */
  tr_compare_result cmp;
  char index[96];        /* first failing index as "[i,j]", or "" */
  bool first_denormal;   /* the reference there is a denormal */
  tr_dtype dtype;
} tr_check_output;

/* One seed (or the given inputs). */
typedef struct {
  bool given;            /* inputs were given, seed unused */
  uint64_t seed;
  tr_verdict verdict;    /* the target's */
  char *message;         /* the target's words, or NULL */
  tr_check_output *outs; /* verdict OK: one per output leaf */
  int nouts;
  bool finding;          /* this run is a finding */
  bool weak;             /* some output is weak */
  double ref_ms, target_ms; /* wall times of the reference and the target */
  char *pi_text;         /* --per-instruction: its lines, or NULL */
} tr_check_run;

/* Everything a check found. Heap-owned; tr_check_report_free. */
typedef struct {
  tr_check_outcome outcome;
  tr_check_run *runs;
  int nruns;
  int first_finding;     /* index into runs, or -1 */
  tr_check_sig sig;      /* of the first finding (kind "" when none) */
  char *declined;        /* DECLINED: why, else NULL */
  char *bundle;          /* the bundle folder written, or NULL */
  bool received_checked; /* the target said what it received, and it was
                            compared with m (first run) */
  bool received_changed; /* ... and it was another program */
  bool received_equivalent; /* ... or an equivalent form of m (canonical
                               forms only, tr_module_same_canonical) */
  char *received_text;   /* the line about it for people, or NULL */
  int narrowed;          /* dots/convolutions the profile's narrowing rule
                            changed in the reference (0: none) */
  cJSON *json;           /* the whole report, as `trench check --json`
                            prints it (owned) */
} tr_check_report;

void tr_check_report_free(tr_check_report *r);

typedef struct tr_check_opts tr_check_opts;

/* Called after each run is judged (progress, streaming text). */
typedef void (*tr_check_run_fn)(void *user, const tr_check_report *r, int run);

struct tr_check_opts {
  const char *label;        /* module path for messages and bundles */
  uint64_t seed0;           /* first seed (default 0) */
  int nseeds;               /* default 3 */
  tr_input_config draw;     /* how seeds draw inputs */
  tr_tensor *const *inputs; /* given inputs (one run) instead of seeds */
  int ninputs;
  double k;                 /* bound multiplier (default 1) */
  const tr_profile *profile;/* NULL: strict */
  const char *profile_path; /* for the report */
  double timeout_s;         /* target, per run; <= 0: the target's default */
  double ref_timeout_s;     /* reference, per run; <= 0: none */
  int64_t max_trips;        /* reference while-loop trips; 0: the default
                               (TR_EVAL_DEFAULT_TRIPS), < 0: none */
  int per_instruction;      /* 0 off, 1 every instruction, 2 chains */
  bool stop_at_finding;     /* end after the first finding (fuzzing) */
  const char *save_dir;     /* write a bundle here (first finding, else the
                               last seed); NULL: none */
  bool save_findings_only;  /* with save_dir: only when there is a finding */
  const char *module_text;  /* the module as given when it is not HLO
                               (StableHLO text): sent to the target
                               verbatim, written to the bundle; m is its
                               conversion, which the reference evaluates */
  bool show_received;       /* received_text gets the diff too */
  tr_check_run_fn on_run;   /* NULL: none */
  void *user;
};

void tr_check_opts_init(tr_check_opts *o);

/* Checks m on t. Returns TR_OK whenever a report was made (findings,
 * declines and target failures included; r->outcome says which); non-OK
 * only for trench's own trouble, with a diagnostic (r is still valid and
 * says TR_CHECK_ERROR). */
tr_status tr_check(tr_target *t, const tr_module *m, const tr_check_opts *o,
                   tr_check_report *r, tr_diag *d);

/* The text lines of run i as `trench check` prints them. */
void tr_check_run_text(tr_buf *b, const tr_check_report *r, int run);

#endif
