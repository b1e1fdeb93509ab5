/* test_defects_emit.c - cases for the emitter's defects of the registry
 * (src/comp/defects.def, category emitter and the fusion defects that live
 * in the emitter). The checking is test_defects.c's td_check_case; each
 * case there has a TR_TEST here. */
#include "test.h"
#include "test_defects.h"

/* A table needs one element; td_emit_ncases says how many are real. */
const dcase td_emit_cases[] = {
  {0},
};
const int td_emit_ncases = 0;
