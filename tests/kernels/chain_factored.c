/* trench-kernel: ref=chain.hlo expect=correct:reordered
 * a * (b + 1): the same real value, factored. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 100; i++) {
    float s = a[i] * (b[i] + 1.0f);
    out[i] = s < 0.0f ? 0.0f : s;
  }
}
