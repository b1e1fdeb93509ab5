/* trench-kernel: ref=rowsum.hlo expect=bug:tail-guard
 * Unrolled by 3 with a tail that reads two elements past the row (and,
 * on the last row, past the buffer), masking them by multiplying by 0 -
 * the values are right, the reads are out of bounds. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float s = 0.0f;
    for (int j = 0; j < 32; j += 3) {
      float m1 = j + 1 < 32 ? 1.0f : 0.0f, m2 = j + 2 < 32 ? 1.0f : 0.0f;
      s += a[i * 32 + j] + m1 * a[i * 32 + j + 1] + m2 * a[i * 32 + j + 2];
    }
    out[i] = s;
  }
}
