/* defects.h - the defect registry (defects.def): named, deliberately
 * planted compiler mistakes for measuring how well trench finds silent
 * wrong results. A compilation carries a bit set of the defects to inject
 * (tr_bc_ctx.inject for passes, tr_emit_opts.inject for the emitter);
 * with none set, the compiler is the correct one. */
#ifndef TR_COMP_DEFECTS_H
#define TR_COMP_DEFECTS_H

#include <stdbool.h>
#include <stdint.h>

typedef enum {
#define X(id, name, cat, pass, desc) TR_DEFECT_##id,
#include "defects.def"
#undef X
  TR_DEFECT_COUNT
} tr_defect;

/* The bit of a defect in an inject set. */
#define TR_DEFECT_BIT(id) ((uint64_t)1 << (TR_DEFECT_##id))
/* Whether inject set s has defect id (ID as spelt in defects.def). */
#define TR_INJECTED(s, id) (((s) & TR_DEFECT_BIT(id)) != 0)

typedef struct {
  const char *name;        /* spelling, e.g. "emit-tail-mask-short" */
  const char *category;    /* emitter, simplifier, fusion, constfold, loop, layout */
  const char *pass;        /* pass (or "emit") it lives in */
  const char *description; /* the mistake and the condition that triggers it */
} tr_defect_info;

/* The registry, in defects.def order; *n gets the count. */
const tr_defect_info *tr_defect_table(int *n);

/* The defect spelt name, or -1 when there is none. */
int tr_defect_lookup(const char *name);

#endif
