/* trench-kernel: ref=chain.hlo expect=bug:data-shortcut
 * A "fast path" for a == b returns a * a, forgetting the + a: random
 * inputs essentially never make two floats equal. */
void kernel(const float *a, const float *b, float *out) {
  for (int i = 0; i < 100; i++) {
    float s = a[i] == b[i] ? a[i] * a[i] : a[i] * b[i] + a[i];
    out[i] = s > 0.0f ? s : 0.0f;
  }
}
