/* trench-kernel: ref=rowsum.hlo expect=correct:reordered
 * Pairwise (tree) summation in a local buffer: the float sum differs from
 * a left-to-right one, the real sum does not. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float t[32];
    for (int j = 0; j < 32; j++) t[j] = a[i * 32 + j];
    for (int w = 16; w > 0; w /= 2)
      for (int j = 0; j < w; j++) t[j] = t[j] + t[j + w];
    out[i] = t[0];
  }
}
