/* trench-kernel: ref=rowsum.hlo expect=bug:off-by-one
 * trench-launch: grid=8 block=32
 * The shuffle reduction starts at offset 8: lanes 16..31 never reach lane 0. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  float v = a[row * 32 + t];
  for (int o = 8; o > 0; o /= 2) v += __shfl_down_sync(0xffffffffu, v, o);
  if (t == 0) out[row] = v;
}
