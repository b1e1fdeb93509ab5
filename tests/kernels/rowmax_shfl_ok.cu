/* trench-kernel: ref=rowmax.hlo expect=correct
 * trench-launch: grid=8 block=16
 * Row maximum by xor shuffles over 16 lanes. */
extern "C" __global__ void kernel(const float *a, float *out) {
  int t = threadIdx.x, row = blockIdx.x;
  float v = a[row * 16 + t];
  for (int o = 8; o > 0; o /= 2) v = fmaxf(v, __shfl_xor_sync(0xffffu, v, o));
  if (t == 0) out[row] = v;
}
