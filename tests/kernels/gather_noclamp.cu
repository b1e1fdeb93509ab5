/* trench-kernel: ref=gather.hlo expect=correct
 * trench-launch: grid=6 block=8
 * Without the clamp: correct for in-bounds indices (the inputs verify
 * assumes, docs/VERIFY.md). */
extern "C" __global__ void kernel(const float *table, const int *ids, float *out) {
  int i = blockIdx.x, j = threadIdx.x;
  out[i * 8 + j] = table[ids[i] * 8 + j];
}
