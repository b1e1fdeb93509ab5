/* trench-kernel: ref=rowsum.hlo expect=bug:off-by-one
 * The loop starts at 1: the first column is left out of every sum. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float s = 0.0f;
    for (int j = 1; j < 32; j++) s += a[i * 32 + j];
    out[i] = s;
  }
}
