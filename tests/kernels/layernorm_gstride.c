/* trench-kernel: ref=layernorm.hlo expect=bug:wrong-stride
 * The scale is indexed by the flat element instead of the column, wrapped
 * to stay in bounds: rows after the first use the wrong scale. */
#include <math.h>
void kernel(const float *a, const float *g, float *out) {
  for (int i = 0; i < 4; i++) {
    float s = 0.0f;
    for (int j = 0; j < 16; j++) s += a[i * 16 + j];
    float mean = s / 16.0f, v = 0.0f;
    for (int j = 0; j < 16; j++) { float d = a[i * 16 + j] - mean; v += d * d; }
    float r = 1.0f / sqrtf(v / 16.0f + 0.001f);
    for (int j = 0; j < 16; j++) out[i * 16 + j] = (a[i * 16 + j] - mean) * r * g[(i * 3 + j) % 16];
  }
}
