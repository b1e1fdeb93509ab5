/* trench-kernel: ref=rowsum.hlo expect=correct
 * Row sums, left to right. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float s = 0.0f;
    for (int j = 0; j < 32; j++) s += a[i * 32 + j];
    out[i] = s;
  }
}
