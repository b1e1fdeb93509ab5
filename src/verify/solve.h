/* solve.h - Z3 (its C API) for trench verify: searches for inputs where a
 * kernel's expression and the reference's differ over the reals, or where
 * an exp argument of the kernel overflows f32 while the reference's stay
 * in range. Symbols are reals, min/max and ite become Z3 ite, and the
 * uninterpreted functions (exp, log, sqrt, ...) are shared between both
 * sides, so an answer of "no such input" holds for every function. */
#ifndef TR_SOLVE_H
#define TR_SOLVE_H

#include "vx.h"

typedef struct {
  int n;
  vx **syms;      /* VX_SYM and VX_UNDEF leaves */
  double *vals;   /* their values in the model */
  uint64_t *bits; /* bitvector symbols: their bits (vals: the unsigned value) */
} vs_model;
void vs_model_free(vs_model *m);

typedef enum { VS_SAT, VS_UNSAT, VS_UNKNOWN } vs_answer;

typedef struct {
  double box;        /* every symbol in [-box, box] */
  double margin;     /* |kernel - ref| >= margin (0: just different) */
  unsigned timeout_ms;
} vs_query;

/* Inputs with pc true and kernel != ref (by at least margin). */
vs_answer vs_find_diff(vx *pc, vx *kernel, vx *ref, const vs_query *q, vs_model *m, char *why, size_t nwhy);
/* Inputs with pc true, some ka[i] > limit and every ra[j] <= limit. */
vs_answer vs_find_above(vx *pc, vx **ka, int nk, vx **ra, int nr, double limit, const vs_query *q, vs_model *m,
                        char *why, size_t nwhy);

#endif
