/* trench-kernel: ref=rowmax.hlo expect=bug:init-value
 * The maximum starts from 0 instead of -inf: wrong only for rows whose
 * elements are all negative. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float m = 0.0f;
    for (int j = 0; j < 16; j++) m = a[i * 16 + j] > m ? a[i * 16 + j] : m;
    out[i] = m;
  }
}
