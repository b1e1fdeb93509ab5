/* trench-kernel: ref=softmax.hlo expect=correct:reordered
 * Multiplies by the reciprocal of the sum, summed backwards. */
#include <math.h>
void kernel(const float *a, float *out) {
  for (int i = 0; i < 4; i++) {
    float m = a[i * 8 + 7];
    for (int j = 6; j >= 0; j--) m = fmaxf(a[i * 8 + j], m);
    float s = 0.0f;
    for (int j = 7; j >= 0; j--) s += expf(a[i * 8 + j] - m);
    float r = 1.0f / s;
    for (int j = 0; j < 8; j++) out[i * 8 + j] = expf(a[i * 8 + j] - m) * r;
  }
}
