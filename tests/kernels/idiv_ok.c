/* trench-kernel: ref=idiv.hlo expect=correct
 * Integer division with XLA's answers where C's is undefined: x / 0 is
 * -1 and INT_MIN / -1 is INT_MIN (the wrapping negation). Branch-free:
 * the divisor is made safe first, then the answers are selected. */
void kernel(const int *a, const int *b, int *q) {
  for (int i = 0; i < 8; i++) {
    int x = a[i], y = b[i];
    int safe = (y == 0 || y == -1) ? 1 : y;
    int neg = (int)(0u - (unsigned)x);
    int d = x / safe;
    q[i] = y == 0 ? -1 : y == -1 ? neg : d;
  }
}
