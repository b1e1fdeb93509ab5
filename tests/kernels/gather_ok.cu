/* trench-kernel: ref=gather.hlo expect=correct
 * trench-launch: grid=6 block=8
 * One block per looked-up row. */
extern "C" __global__ void kernel(const float *table, const int *ids, float *out) {
  int i = blockIdx.x, j = threadIdx.x;
  int r = min(max(ids[i], 0), 15);
  out[i * 8 + j] = table[r * 8 + j];
}
