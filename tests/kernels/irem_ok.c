/* trench-kernel: ref=irem.hlo expect=correct
 * Remainder with XLA's answers where C's is undefined: x % 0 is x and
 * INT_MIN % -1 is 0; otherwise the sign of the dividend, as C's. */
void kernel(const int *a, const int *b, int *r) {
  for (int i = 0; i < 8; i++) {
    int x = a[i], y = b[i];
    int safe = (y == 0 || y == -1) ? 1 : y;
    int m = x % safe;
    r[i] = y == 0 ? x : y == -1 ? 0 : m;
  }
}
