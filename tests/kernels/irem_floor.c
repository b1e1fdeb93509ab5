/* trench-kernel: ref=irem.hlo expect=bug:wrong-rounding
 * A floored modulo (the result takes the divisor's sign, as Python's %),
 * where XLA's remainder truncates (the dividend's sign). Zero and -1 are
 * made safe, so only the rounding differs. */
void kernel(const int *a, const int *b, int *r) {
  for (int i = 0; i < 8; i++) {
    int x = a[i], y = b[i];
    int safe = (y == 0 || y == -1) ? 1 : y;
    int m = x % safe;
    int fix = (m != 0 && ((m < 0) != (safe < 0))) ? m + safe : m;
    r[i] = y == 0 ? x : y == -1 ? 0 : fix;
  }
}
