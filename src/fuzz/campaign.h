/* campaign.h - fuzz campaigns: tests made by the generator or by mutating
 * corpus modules, each checked on a target through tr_check, findings
 * kept as bundles deduplicated by signature. A campaign lives in one
 * folder (docs/FUZZ.md):
 *   campaign.json   what it is (seed, shard, target, corpus, lineage)
 *   log.jsonl       one event a line, appended (findings fsync'ed)
 *   findings/SIG/   one bundle per signature (module, inputs, verdicts,
 *                   fuzz.json with the test's lineage), renamed into place
 *   summary.json    the closing totals
 * Test t of shard K/N is global test K + N*t; its module and inputs depend
 * only on (seed, global index, corpus, versions), so a resumed, sharded or
 * parallel campaign runs the same tests. */
#ifndef TR_CAMPAIGN_H
#define TR_CAMPAIGN_H

#include "../oracle/check.h"

#include <signal.h>

/* A module generator (the seam for src/fuzz/gen.c): seed -> module. */
typedef tr_status (*tr_fuzz_gen_fn)(void *user, uint64_t seed, tr_module **out, tr_diag *d);

typedef struct {
  const char *target;            /* target spec, opened once per worker */
  tr_target_config tcfg;
  const tr_profile *profile;     /* NULL: strict */
  const char *profile_path;
  const char *out;               /* the campaign folder */
  uint64_t seed;
  int shard, nshards;            /* K/N; default 0/1 */
  long count;                    /* tests of this shard; 0: no limit */
  double time_s;                 /* wall time; 0: no limit */
  int jobs;                      /* worker processes; default 1 */
  int nseeds;                    /* input seeds per test; default 2 */
  const char *const *corpus;     /* files and folders of .hlo */
  int ncorpus;
  const char *mutator_cmd;       /* external mutator (sh -c), or NULL */
  const char *generator_cmd;     /* external generator (sh -c), or NULL */
  tr_fuzz_gen_fn gen;            /* built-in generator, or NULL */
  void *gen_user;
  const char *gen_version;
  bool resume;                   /* continue the campaign in out */
  bool until_finding;            /* stop at the first finding */
  bool progress;                 /* a live line on stderr */
  double test_timeout_s;         /* a test (all seeds) on trench's side;
                                    default 120 (tr_fuzz_test_limit) */
  volatile sig_atomic_t *stop;   /* set by a signal handler: wind down */
  FILE *summary;                 /* the closing table; NULL: none */
  bool triage;                   /* isolate and reduce each new finding in
                                    the background (BUNDLE/triage) */
  double triage_timeout_s;       /* one finding's triage; default 600 */
} tr_fuzz_opts;

void tr_fuzz_opts_init(tr_fuzz_opts *o);
/* The watchdog of one test on trench's side (a worker past it is a
 * trench-hang): o->test_timeout_s, raised to what the target's runs may
 * take at most, adapter restarts included. */
double tr_fuzz_test_limit(const tr_fuzz_opts *o);

typedef struct {
  long tests, pass, weak, unsupported, declined, findings, unique, dropped, errors, trench_crash;
  long corpus_skipped;           /* corpus files that do not parse/verify */
  double wall_s;                 /* this run's wall time */
  long run_tests;                /* tests this run (not resumed ones) */
  long triaged, triage_failed;   /* --triage: bundles triaged, failed */
} tr_fuzz_stats;

/* Runs (or resumes) a campaign. TR_OK when it ran to its end, findings
 * or not; non-OK with a diagnostic for trouble that stops it (no corpus
 * and no generator, the folder unusable, --resume of another campaign). */
tr_status tr_fuzz_run(const tr_fuzz_opts *o, tr_fuzz_stats *st, tr_diag *d);

/* Merges campaign folders (shards) into out: findings deduplicated by
 * signature, logs combined in global test order, totals summed. */
tr_status tr_fuzz_merge(const char *out, const char *const *ins, int nins, tr_fuzz_stats *st,
                        FILE *summary, tr_diag *d);

#endif
