/* verify.h - trench verify: one output location of a kernel, for all
 * inputs, against an HLO reference (docs/VERIFY.md). The kernel (C or
 * CUDA) runs symbolically over LLVM IR (vk.h), the reference symbolically
 * over the IR (ref.h), Z3 decides where the two differ (solve.h), and
 * every difference is confirmed by running the kernel and the reference
 * concretely and judging with trench's oracle before it is reported. */
#ifndef TR_VERIFY_H
#define TR_VERIFY_H

#include "../ir/ir.h"
#include <stdio.h>

typedef struct {
  const tr_module *m;        /* the reference */
  const char *kernel_path;   /* .c, .cu or .py (KernelBench style) */
  bool cuda;
  bool python;               /* kernel_path is a .py with load_inline CUDA */
  bool zero_out;             /* outputs start zeroed, not arbitrary */
  bool emitted;              /* kernel_path is C from `trench compile`
                                (entry trench_entry(in, out)) */
  unsigned grid[3], block[3];/* CUDA launch */
  const char *cflags;        /* extra clang flags */
  const char *locations;     /* "i,j;k,l" element indices, "all", or NULL (default set) */
  int64_t tile;              /* tile size for default locations (0: CUDA block.x or none) */
  int nrandom;               /* random interior locations (default 8) */
  int max_locations;         /* cap on the default set (default 64) */
  double budget_s;           /* per location, for the solver (default 10) */
  uint64_t seed;             /* base inputs and random locations */
  const char *save_dir;      /* bundle of the first counterexample, or NULL */
  int random_seeds;          /* > 0: random differential testing instead */
  int max_paths;             /* data-dependent paths explored (default 64) */
  bool first;                /* stop at the first confirmed counterexample */
  bool verbose;
  FILE *out;                 /* report */
  char *guard_tmp;           /* when not NULL (4096 bytes): the scratch
                                folder's path is kept there while it exists,
                                for an interrupt's cleanup (src/cli/guard.c) */
} tv_opts;

typedef struct {
  int locations, equivalent, counterexamples, unknown;
  int kernel_findings;       /* confirmed out-of-bounds, races, overflow */
  int unconfirmed;           /* solver differences the concrete runs did not confirm */
  int random_failing;        /* random mode: seeds that failed */
  int random_first;          /* random mode: first failing seed, -1 none */
  bool found;                /* any confirmed counterexample */
  bool out_of_memory;        /* the verification ran out of memory: no
                                verdict (the diagnostic says where) */
} tv_summary;

tr_status tr_verify_kernel(const tv_opts *o, tv_summary *s, tr_diag *d);

#endif
