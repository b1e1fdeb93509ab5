/* trench-kernel: ref=rowsum.hlo expect=bug:race
 * trench-launch: grid=8 block=32
 * The atomicAdd replaced by a plain read-modify-write: threads of a block
 * overwrite each other's partial sums. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  if (t == 0) out[row] = 0.0f;
  __syncthreads();
  out[row] = out[row] + a[row * 32 + t];
}
