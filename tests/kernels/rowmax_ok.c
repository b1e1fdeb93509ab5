/* trench-kernel: ref=rowmax.hlo expect=correct
 * Row maxima, starting from the first element. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float m = a[i * 16];
    for (int j = 1; j < 16; j++) m = a[i * 16 + j] > m ? a[i * 16 + j] : m;
    out[i] = m;
  }
}
