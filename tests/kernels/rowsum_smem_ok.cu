/* trench-kernel: ref=rowsum.hlo expect=correct
 * trench-launch: grid=8 block=32
 * One block per row: a shared-memory tree reduction with a barrier per level. */
extern "C" __global__ void kernel(const float *a, float *out) {
  __shared__ float s[32];
  int t = threadIdx.x, row = blockIdx.x;
  s[t] = a[row * 32 + t];
  __syncthreads();
  for (int w = 16; w > 0; w /= 2) {
    if (t < w) s[t] += s[t + w];
    __syncthreads();
  }
  if (t == 0) out[row] = s[0];
}
