/* mutint.h - what the mutator files share (mutate.c: the mutators and
 * their helpers, the table and the driver; mutate_value.c: self-operand
 * and convert-chain, the value-level mutators). */
#ifndef TR_MUTINT_H
#define TR_MUTINT_H

#include "mutate.h"

#include "../ir/build.h"

/* Largest value a mutation may create (elements): keeps checks fast. */
#define MZ_MAX_ELEMS (1 << 20)

typedef struct {
  tr_module *m;  /* the clone being edited */
  uint64_t rng;  /* splitmix64 state */
  tr_buf *why;   /* why nothing applied (the last reason) */
  tr_comp **ctl; /* computations mutated: entry and control-flow bodies */
  int nctl;
} mz;

typedef bool (*mz_filter)(const tr_instr *in);

/* The users of an instruction, captured before new users are added. */
typedef struct {
  tr_instr **u;
  int n;
  bool root;
} mz_uses;

/* mutate.c */
int mz_rndn(mz *z, int n);                       /* [0, n) */
void mz_say(mz *z, const char *s);               /* why nothing applied */
tr_instr *mz_pick(mz *z, mz_filter f);           /* a random instruction f accepts */
bool mz_is_value(const tr_instr *in);
bool mz_is_real(tr_dtype t);
bool mz_is_num_value(const tr_instr *in);
mz_uses mz_uses_of(mz *z, tr_instr *x);
void mz_rewire(mz_uses s, tr_instr *x, tr_instr *y);
void mz_reorder(tr_comp *c);                     /* operands before users */
tr_instr *mz_fin(tr_instr *in);                  /* a name of its own */
uint64_t mz_bits_of(tr_dtype dt, double v);      /* v as dt's bit pattern */
bool mz_add_output(mz *z, tr_comp *c, tr_instr *y);

/* mutate_value.c */
bool mz_self_operand(mz *z);
bool mz_convert_chain(mz *z);

#endif
