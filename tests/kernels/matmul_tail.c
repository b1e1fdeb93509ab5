/* trench-kernel: ref=matmul.hlo expect=bug:tail-guard
 * The k loop runs in chunks of 3 and drops the remainder (16 = 5*3 + 1). */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      float acc = 0.0f;
      for (int k = 0; k + 3 <= 16; k += 3)
        acc += a[i * 16 + k] * b[k * 8 + j] + a[i * 16 + k + 1] * b[(k + 1) * 8 + j] +
               a[i * 16 + k + 2] * b[(k + 2) * 8 + j];
      out[i * 8 + j] = acc;
    }
}
