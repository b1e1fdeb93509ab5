/* test_defects.h - the shape of a defect test case, shared by the test
 * files of the defect registry (test_defects.c: passes; test_defects_emit.c:
 * emitter). Each file keeps its own table; test_defects.c checks that every
 * registry entry has a case in one of them. */
#ifndef TR_TEST_DEFECTS_H
#define TR_TEST_DEFECTS_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const char *defect;    /* registry spelling */
  const char *hlo;       /* module it breaks */
  int64_t in[2][16];     /* each parameter's elements (ints) */
  long first_bad;        /* first element of output 0 that differs */
  const char *safe_hlo;  /* module where the condition does not hold
                            (NULL: hlo again, on safe_in) */
  int64_t safe_in[2][16];
  /* For parameters over 16 elements or more than two: when set, element i
   * of parameter p is gen(p, i) (for both modules) instead of in/safe_in. */
  int64_t (*gen)(int p, size_t i);
} dcase;

/* Checks c: injected, the builtin result first differs from the reference
 * at c->first_bad; not injected, they agree; injected on the safe module,
 * they agree. */
void td_check_case(const dcase *c);

/* The emitter cases (test_defects_emit.c). */
extern const dcase td_emit_cases[];
extern const int td_emit_ncases;

#endif
