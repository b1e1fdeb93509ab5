/* trench-kernel: ref=rowmax.hlo expect=bug:init-value
 * trench-launch: grid=8 block=16
 * Thread 0 scans the row from a maximum initialised to 0. */
extern "C" __global__ void kernel(const float *a, float *out) {
  __shared__ float s[16];
  int t = threadIdx.x, row = blockIdx.x;
  s[t] = a[row * 16 + t];
  __syncthreads();
  if (t == 0) {
    float m = 0.0f;
    for (int j = 0; j < 16; j++) m = fmaxf(m, s[j]);
    out[row] = m;
  }
}
