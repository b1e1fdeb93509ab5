/* trench-kernel: ref=quant.hlo expect=bug:overflow
 * No clamp: a value past 127 * scale converts out of the int8 range
 * (wrapping through int, or undefined in C) instead of saturating. */
#include <math.h>
void kernel(const float *x, signed char *o) {
  for (int i = 0; i < 16; i++) o[i] = (signed char)(int)rintf(x[i] / 0.125f);
}
