/* trench-kernel: ref=matmul.hlo expect=bug:stale-read
 * Accumulates straight into the output, never zeroing it first: right
 * only when the output buffer happens to hold zeros on entry. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++)
      for (int k = 0; k < 16; k++) out[i * 8 + j] += a[i * 16 + k] * b[k * 8 + j];
}
