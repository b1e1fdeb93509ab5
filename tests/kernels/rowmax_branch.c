/* trench-kernel: ref=rowmax.hlo expect=correct
 * Row 0 takes a branchy path over its first three elements (each branch
 * on data forks a path; the row's partial maximum is stored as it goes),
 * every row then finishes with fmaxf. */
#include <math.h>
void kernel(const float *a, float *out) {
  for (int i = 0; i < 8; i++) {
    float m = a[i * 16];
    int j = 1;
    if (i == 0)
      for (; j < 4; j++) {
        float x = a[j];
        if (x > m) { m = x; out[0] = m; }
      }
    for (; j < 16; j++) m = fmaxf(m, a[i * 16 + j]);
    out[i] = m;
  }
}
