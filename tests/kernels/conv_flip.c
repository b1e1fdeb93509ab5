/* trench-kernel: ref=conv.hlo expect=bug:wrong-stride
 * The filter is applied flipped (a true convolution instead of XLA's
 * cross-correlation). */
void kernel(const float *x, const float *w, float *out) {
  for (int o = 0; o < 3; o++)
    for (int y = 0; y < 4; y++)
      for (int z = 0; z < 4; z++) {
        float s = 0.0f;
        for (int c = 0; c < 2; c++)
          for (int ky = 0; ky < 3; ky++)
            for (int kx = 0; kx < 3; kx++)
              s += x[(c * 6 + y + ky) * 6 + z + kx] * w[((o * 2 + c) * 3 + 2 - ky) * 3 + 2 - kx];
        out[(o * 4 + y) * 4 + z] = s;
      }
}
