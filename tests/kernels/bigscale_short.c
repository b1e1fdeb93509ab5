/* trench-kernel: ref=bigscale.hlo expect=bug:index-overflow
 * The index is kept in an unsigned short: past 65535 it wraps, the last
 * elements are written over the first ones. */
void kernel(const float *a, float *out) {
  for (int i = 0; i < 70000; i++) {
    unsigned short k = (unsigned short)i;
    out[k] = a[i] * 2.0f;
  }
}
