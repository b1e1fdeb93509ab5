/* trench-kernel: ref=rowsum.hlo expect=correct:reordered
 * trench-launch: grid=8 block=32
 * Every thread adds its element with atomicAdd onto a zeroed output. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  if (t == 0) out[row] = 0.0f;
  __syncthreads();
  atomicAdd(&out[row], a[row * 32 + t]);
}
