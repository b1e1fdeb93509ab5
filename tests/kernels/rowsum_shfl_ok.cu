/* trench-kernel: ref=rowsum.hlo expect=correct:reordered
 * trench-launch: grid=8 block=32
 * A warp-shuffle butterfly reduction per row. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  float v = a[row * 32 + t];
  for (int o = 16; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (t == 0) out[row] = v;
}
