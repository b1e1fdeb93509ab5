/* testutil.h - helpers the compiler tests share: deterministic inputs for
 * every array leaf of a shape, bit-for-bit comparison of results (NaN
 * payloads aside), and compiling with the pipeline or one rule's pass. */
#ifndef TR_TESTUTIL_H
#define TR_TESTUTIL_H

#include "../../src/comp/pipeline.h"
#include "../../src/ir/ir.h"
#include "../../src/ir/tensor.h"

/* Compiles m in place under c: with rule NULL the whole pipeline, else the
 * pass that fires rule alone (tr_bc_rule_pass), so a rule's test does not
 * lean on the passes around it. An unknown rule is TR_ERR_USAGE. */
tr_status tr_test_compile(tr_bc_ctx *c, tr_module *m, const char *rule, tr_diag *d);

/* Deterministic values covering signs, zeros, boundaries and (floats) inf
 * and NaN; seed shifts the pattern between runs. */
void tr_test_fill(tr_tensor *t, int seed);
/* Appends one filled tensor per array leaf of s (tuples depth-first,
 * tokens skipped) to args[*n..max). False when they do not fit. */
bool tr_test_add_inputs(const tr_shape *s, tr_tensor **args, int *n, int max, int seed);
/* Same dtype, dims and bits; NaN payloads and quiet bits are not semantics. */
bool tr_test_same_bits(const tr_tensor *a, const tr_tensor *b);

/* The *.hlo files of tests/SUB, sorted by name. A missing or empty folder
 * is a test failure (a corpus test that scans nothing must not pass). */
typedef struct {
  char **paths; /* "<dir>/<name>", malloc'd */
  int n;        /* number of files */
} tr_test_files;
tr_test_files tr_test_list_hlo(const char *sub);
void tr_test_files_free(tr_test_files *fl);

#endif
