/* trench-kernel: ref=chain.hlo expect=correct
 * trench-launch: grid=4 block=32
 * One thread per element with the tail guarded. */
extern "C" __global__ void kernel(const float *a, const float *b, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 100) out[i] = fmaxf(a[i] * b[i] + a[i], 0.0f);
}
