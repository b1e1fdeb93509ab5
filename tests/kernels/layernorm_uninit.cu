/* trench-kernel: ref=layernorm.hlo expect=bug:stale-read
 * trench-launch: grid=4 block=16
 * Only the first 15 threads load their element into shared memory: the
 * statistics read x[15], which nobody wrote. */
extern "C" __global__ void kernel(const float *a, const float *g, float *out) {
  __shared__ float x[16];
  __shared__ float st[2];
  int t = threadIdx.x, row = blockIdx.x;
  if (t < 15) x[t] = a[row * 16 + t];
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
  out[row * 16 + t] = (a[row * 16 + t] - st[0]) * st[1] * g[t];
}
