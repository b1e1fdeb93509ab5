/* trench-kernel: ref=idiv.hlo expect=correct
 * Integer division with XLA's answers, guarded by branches (clang keeps
 * the branches around the division, which could trap): verify merges
 * them instead of forking per element. */
#include <limits.h>
void kernel(const int *a, const int *b, int *q) {
  for (int i = 0; i < 8; i++) {
    int x = a[i], y = b[i];
    q[i] = y == 0 ? -1 : (x == INT_MIN && y == -1) ? INT_MIN : x / y;
  }
}
