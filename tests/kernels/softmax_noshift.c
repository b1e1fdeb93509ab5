/* trench-kernel: ref=softmax.hlo expect=bug:overflow
 * Softmax without the max shift: equal over the reals, but exp overflows
 * for inputs above 88.7 where the reference's shifted exp stays finite. */
#include <math.h>
void kernel(const float *a, float *out) {
  for (int i = 0; i < 4; i++) {
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += expf(a[i * 8 + j]);
    for (int j = 0; j < 8; j++) out[i * 8 + j] = expf(a[i * 8 + j]) / s;
  }
}
