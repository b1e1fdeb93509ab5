/* trench-kernel: ref=idiv.hlo expect=bug:unguarded-division
 * Plain C division: undefined (a trap on x86) for a zero divisor and for
 * INT_MIN / -1, where XLA defines -1 and INT_MIN. */
void kernel(const int *a, const int *b, int *q) {
  for (int i = 0; i < 8; i++) q[i] = a[i] / b[i];
}
