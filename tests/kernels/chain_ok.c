/* trench-kernel: ref=chain.hlo expect=correct
 * relu(a * b + a), one element at a time. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 100; i++) {
    float s = a[i] * b[i] + a[i];
    out[i] = s > 0.0f ? s : 0.0f;
  }
}
