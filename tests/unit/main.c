/* main.c - runs every registered unit test, or those whose name contains
 * argv[2]; argv[1] is the tests/ folder. */
#include "test.h"

#include <stdlib.h>

typedef struct { const char *name; tr_test_fn fn; } entry;
static entry *tests;
static int ntests, cap;
int tr_test_failed;
const char *tr_test_dir = "tests";

void tr_test_register(const char *name, tr_test_fn fn) {
  if (ntests == cap) {
    cap = cap ? cap * 2 : 64;
    tests = realloc(tests, sizeof(entry) * (size_t)cap);
    if (!tests) abort();
  }
  tests[ntests].name = name;
  tests[ntests].fn = fn;
  ntests++;
}

static int cmp(const void *a, const void *b) {
  return strcmp(((const entry *)a)->name, ((const entry *)b)->name);
}

int main(int argc, char **argv) {
  if (argc > 1) tr_test_dir = argv[1];
  const char *filter = argc > 2 ? argv[2] : NULL;
  qsort(tests, (size_t)ntests, sizeof(entry), cmp);
  int pass = 0, fail = 0;
  for (int i = 0; i < ntests; i++) {
    if (filter && !strstr(tests[i].name, filter)) continue;
    /* Tests on real XLA need the project virtualenv: they run from
     * tests/adapters/test_xla.sh, which sets TRENCH_TEST_XLA, and are not
     * counted (as passed or failed) elsewhere. */
    if (strncmp(tests[i].name, "target_xla", 10) == 0 && !getenv("TRENCH_TEST_XLA")) continue;
    tr_test_failed = 0;
    tests[i].fn();
    if (tr_test_failed) {
      printf("FAIL %s\n", tests[i].name);
      fail++;
    } else {
      pass++;
    }
    fflush(stdout);
  }
  free(tests);
  printf("%d passed, %d failed\n", pass, fail);
  return fail ? 1 : 0;
}
