/* trench-kernel: ref=layernorm.hlo expect=correct
 * trench-launch: grid=4 block=16
 * One block per row; mean and variance by thread 0 in shared memory. */
extern "C" __global__ void kernel(const float *a, const float *g, float *out) {
  __shared__ float x[16];
  __shared__ float st[2];
  int t = threadIdx.x, row = blockIdx.x;
  x[t] = a[row * 16 + t];
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int j = 0; j < 16; j++) s += x[j];
    float mean = s / 16.0f, v = 0.0f;
    for (int j = 0; j < 16; j++) v += (x[j] - mean) * (x[j] - mean);
    st[0] = mean;
    st[1] = rsqrtf(v / 16.0f + 0.001f);
  }
  __syncthreads();
  out[row * 16 + t] = (x[t] - st[0]) * st[1] * g[t];
}
