/* trench-kernel: ref=softmax.hlo expect=correct
 * Max-shifted softmax per row. */
#include <math.h>
void kernel(const float *a, float *out) {
  for (int i = 0; i < 4; i++) {
    float m = a[i * 8];
    for (int j = 1; j < 8; j++) m = fmaxf(m, a[i * 8 + j]);
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += expf(a[i * 8 + j] - m);
    for (int j = 0; j < 8; j++) out[i * 8 + j] = expf(a[i * 8 + j] - m) / s;
  }
}
