/* trench-kernel: ref=matmul.hlo expect=correct:reordered
 * The contraction runs backwards: a different float sum, the same real one. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      float acc = 0.0f;
      for (int k = 15; k >= 0; k--) acc += a[i * 16 + k] * b[k * 8 + j];
      out[i * 8 + j] = acc;
    }
}
