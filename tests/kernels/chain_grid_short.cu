/* trench-kernel: ref=chain.hlo expect=bug:off-by-one-tile
 * trench-launch: grid=3 block=32
 * The kernel is right; its launch is not: the host computed the grid as
 * 100 / 32 = 3 blocks, so the partial last tile (elements 96..99) never
 * runs. */
extern "C" __global__ void kernel(const float *a, const float *b, float *out) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < 100) out[i] = fmaxf(a[i] * b[i] + a[i], 0.0f);
}
