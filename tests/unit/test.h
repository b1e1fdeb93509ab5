/* test.h - a tiny test harness: TR_TEST(name) { ... } registers a test;
 * CHECK* record failures with file:line and keep going. */
#ifndef TR_TEST_H
#define TR_TEST_H

#include <stdio.h>
#include <string.h>
#include <stdint.h>
#include <inttypes.h>

typedef void (*tr_test_fn)(void);
void tr_test_register(const char *name, tr_test_fn fn);
extern int tr_test_failed; /* failures in the running test */
/* Directory holding the test data (tests/), set by the runner. */
extern const char *tr_test_dir;

#define TR_TEST(name)                                               \
  static void test_##name(void);                                    \
  __attribute__((constructor)) static void reg_##name(void) {       \
    tr_test_register(#name, test_##name);                           \
  }                                                                 \
  static void test_##name(void)

#define CHECK(c)                                                           \
  do {                                                                     \
    if (!(c)) {                                                            \
      fprintf(stderr, "  %s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #c); \
      tr_test_failed++;                                                    \
    }                                                                      \
  } while (0)

#define CHECK_EQ_INT(a, b)                                                  \
  do {                                                                      \
    long long va_ = (long long)(a), vb_ = (long long)(b);                   \
    if (va_ != vb_) {                                                       \
      fprintf(stderr, "  %s:%d: %s == %lld, expected %s == %lld\n", __FILE__, \
              __LINE__, #a, va_, #b, vb_);                                  \
      tr_test_failed++;                                                     \
    }                                                                       \
  } while (0)

#define CHECK_STR(a, b)                                                     \
  do {                                                                      \
    const char *sa_ = (a), *sb_ = (b);                                      \
    if (!sa_ || !sb_ || strcmp(sa_, sb_) != 0) {                            \
      fprintf(stderr, "  %s:%d: %s is\n    \"%s\"\n  expected\n    \"%s\"\n", \
              __FILE__, __LINE__, #a, sa_ ? sa_ : "(null)", sb_ ? sb_ : "(null)"); \
      tr_test_failed++;                                                     \
    }                                                                       \
  } while (0)

/* True when haystack contains needle. */
#define CHECK_CONTAINS(hay, needle)                                         \
  do {                                                                      \
    const char *h_ = (hay), *n_ = (needle);                                 \
    if (!h_ || !strstr(h_, n_)) {                                           \
      fprintf(stderr, "  %s:%d: \"%s\" does not contain \"%s\"\n", __FILE__, \
              __LINE__, h_ ? h_ : "(null)", n_);                            \
      tr_test_failed++;                                                     \
    }                                                                       \
  } while (0)

#endif
