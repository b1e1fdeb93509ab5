/* trench-kernel: ref=bigscale.hlo expect=correct
 * Doubles 70000 elements. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 70000; i++) out[i] = a[i] * 2.0f;
}
