/* trench-kernel: ref=softmax.hlo expect=bug:missing-barrier
 * trench-launch: grid=4 block=8
 * The barrier after thread 0 computes the row's max and sum is missing:
 * other threads read red[] before it is written. */
extern "C" __global__ void kernel(const float *a, float *out) {
  __shared__ float x[8];
  __shared__ float red[2];
  int t = threadIdx.x, row = blockIdx.x;
  x[t] = a[row * 8 + t];
  __syncthreads();
  if (t == 0) {
    float m = x[0];
    for (int j = 1; j < 8; j++) m = fmaxf(m, x[j]);
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += expf(x[j] - m);
    red[0] = m;
    red[1] = s;
  }
  out[row * 8 + t] = expf(x[t] - red[0]) / red[1];
}
