/* trench-kernel: ref=chain.hlo expect=bug:tail-guard
 * trench-launch: grid=4 block=32
 * No tail guard: the 28 threads past element 99 read and write out of
 * bounds. */
extern "C" __global__ void kernel(const float *a, const float *b, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  out[i] = fmaxf(a[i] * b[i] + a[i], 0.0f);
}
