/* trench-kernel: ref=matmul.hlo expect=bug:off-by-one-tile
 * The last column tile starts one column late (tj = 5 instead of 4), so
 * column 4 is never written and column 8 would be: the bound check hides
 * the write, the unwritten column keeps whatever the buffer held. */
void kernel(const float *a, const float *b, float *out) {
  for (int ti = 0; ti < 8; ti += 4)
    for (int t = 0; t < 2; t++) {
      int tj = t == 0 ? 0 : 5;
      for (int i = ti; i < ti + 4; i++)
        for (int j = tj; j < tj + 4 && j < 8; j++) {
          float acc = 0.0f;
          for (int k = 0; k < 16; k++) acc += a[i * 16 + k] * b[k * 8 + j];
          out[i * 8 + j] = acc;
        }
    }
}
