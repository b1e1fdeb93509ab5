/* trench-kernel: ref=matmul.hlo expect=bug:wrong-stride
 * b is read with the row stride of a (16) and the columns wrapped: wrong
 * elements everywhere but in bounds. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 8; j++) {
      float acc = 0.0f;
      for (int k = 0; k < 16; k++) acc += a[i * 16 + k] * b[(k * 16 + j) % 128];
      out[i * 8 + j] = acc;
    }
}
