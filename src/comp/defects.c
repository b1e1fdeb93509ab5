/* defects.c - the defect registry's table and name lookup (defects.def). */
#include "defects.h"

#include <string.h>

_Static_assert(TR_DEFECT_COUNT <= 64, "an inject set is 64 bits");

static const tr_defect_info table[] = {
#define X(id, name, cat, pass, desc) {name, #cat, pass, desc},
#include "defects.def"
#undef X
};

const tr_defect_info *tr_defect_table(int *n) {
  *n = TR_DEFECT_COUNT;
  return table;
}

int tr_defect_lookup(const char *name) {
  for (int i = 0; i < TR_DEFECT_COUNT; i++)
    if (strcmp(table[i].name, name) == 0) return i;
  return -1;
}
