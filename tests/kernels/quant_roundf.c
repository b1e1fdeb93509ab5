/* trench-kernel: ref=quant.hlo expect=bug:wrong-rounding
 * roundf rounds halves away from zero where the reference rounds them to
 * even: 2.5 * scale quantizes to 3, not 2. */
#include <math.h>
void kernel(const float *x, signed char *o) {
  for (int i = 0; i < 16; i++) {
    float q = roundf(x[i] / 0.125f);
    q = q < -128.0f ? -128.0f : q > 127.0f ? 127.0f : q;
    o[i] = (signed char)q;
  }
}
