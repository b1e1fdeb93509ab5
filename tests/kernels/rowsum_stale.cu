/* trench-kernel: ref=rowsum.hlo expect=bug:stale-read
 * trench-launch: grid=8 block=32
 * atomicAdd onto the output without zeroing it first. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  atomicAdd(&out[row], a[row * 32 + t]);
}
