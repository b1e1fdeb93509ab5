/* trench-kernel: ref=matmul.hlo expect=correct
 * 4x4 output tiles, the contraction in two halves summed at the end. */
void kernel(const float *a, const float *b, float *out) {
  for (int ti = 0; ti < 8; ti += 4)
    for (int tj = 0; tj < 8; tj += 4)
      for (int i = ti; i < ti + 4; i++)
        for (int j = tj; j < tj + 4; j++) {
          float lo = 0.0f, hi = 0.0f;
          for (int k = 0; k < 8; k++) lo += a[i * 16 + k] * b[k * 8 + j];
          for (int k = 8; k < 16; k++) hi += a[i * 16 + k] * b[k * 8 + j];
          out[i * 8 + j] = lo + hi;
        }
}
