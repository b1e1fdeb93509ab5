/* trench-kernel: ref=quant.hlo expect=correct
 * int8 quantization: x / scale rounded half to even (rintf), clamped to
 * [-128, 127], converted. */
#include <math.h>
void kernel(const float *x, signed char *o) {
  for (int i = 0; i < 16; i++) {
    float q = rintf(x[i] / 0.125f);
    q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
    o[i] = (signed char)q;
  }
}
