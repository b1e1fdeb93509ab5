/* gen.h - the program generator: random HLO modules that are valid by
 * construction (forward shape inference through the IR builder, attribute
 * choosers per opcode, no solver). The same options and generator version
 * give the same module, byte for byte. docs/FUZZ.md, "Generator". */
#ifndef TR_GEN_H
#define TR_GEN_H

#include "../ir/ir.h"

/* Bumped whenever the same options may give a different module. */
#define TR_GEN_VERSION "gen-6"

enum {
  TR_GEN_NO_CONTROL = 1 << 0,  /* no while, conditional, call */
  TR_GEN_NO_PARAMS = 1 << 1,   /* parameterless: every leaf a constant */
  TR_GEN_NO_LAYOUTS = 1 << 2,  /* default layouts only */
  TR_GEN_NO_BIG = 1 << 3,      /* no sizes past strategy thresholds */
  TR_GEN_CORE_TYPES = 1 << 4   /* core element types only (dtypes.def) */
};

typedef struct {
  uint64_t seed;      /* the module's seed */
  int size;           /* ops to generate in the entry (about); default 20 */
  const char *ops;    /* comma list of op spellings allowed; NULL: all */
  const char *dtypes; /* comma list of element types allowed; NULL: all */
  unsigned flags;     /* TR_GEN_* */
} tr_gen_opts;

void tr_gen_opts_init(tr_gen_opts *o);
/* Generates one verified module into *out (free with tr_module_free).
 * TR_ERR_USAGE with a diagnostic for an unknown op or dtype name, or an
 * allow-list that leaves nothing to generate; never an invalid module. */
tr_status tr_gen_module(const tr_gen_opts *o, tr_module **out, tr_diag *d);
/* Whether the generator can make op at all (the op-coverage test). */
bool tr_gen_can_make(tr_op op);

#endif
