/* trench-kernel: ref=chain.hlo expect=bug:shape-shortcut
 * Processes 8 elements at a time, written for sizes that are multiples of
 * 8 (the test shape was 64): the last 4 of 100 are never written. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i + 8 <= 100; i += 8)
    for (int l = 0; l < 8; l++) {
      float s = a[i + l] * b[i + l] + a[i + l];
      out[i + l] = s > 0.0f ? s : 0.0f;
    }
}
