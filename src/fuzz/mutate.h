/* mutate.h - mutators: each turns a module, generated or a real dump,
 * into another valid module (verified before it is returned). The table
 * is mutators.def; docs/FUZZ.md describes each. */
#ifndef TR_MUTATE_H
#define TR_MUTATE_H

#include "../ir/ir.h"

typedef enum {
#define X(E, name, desc) TR_MUT_##E,
#include "mutators.def"
#undef X
  TR_MUT_COUNT
} tr_mutator;

typedef struct {
  const char *name;
  const char *desc;
} tr_mutator_info;

extern const tr_mutator_info tr_mutators[TR_MUT_COUNT];
bool tr_mutator_lookup(const char *name, tr_mutator *out);

/* Applies mu to a copy of m at places chosen by seed. TR_OK with *out a
 * verified module; TR_ERR_UNSUPPORTED with the reason in why (may be
 * NULL) when mu finds no place where it applies (a try whose result does
 * not verify counts as not applying). m is not changed. */
tr_status tr_mutate(const tr_module *m, tr_mutator mu, uint64_t seed, tr_module **out, tr_buf *why);

/* A mutator drawn by seed; when it does not apply, the next ones in table
 * order are tried. *used says which applied. */
tr_status tr_mutate_any(const tr_module *m, uint64_t seed, tr_mutator *used, tr_module **out,
                        tr_buf *why);

#endif
