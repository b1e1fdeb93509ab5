/* trench-kernel: ref=matmul.hlo expect=bug:off-by-one-tile
 * trench-launch: grid=2,2 block=4,4
 * The tile loop stops at k0 < 12: the last tile of the contraction is
 * left out. */
extern "C" __global__ void kernel(const float *a, const float *b, float *out) {
  __shared__ float ta[4][4];
  __shared__ float tb[4][4];
  int tx = threadIdx.x, ty = threadIdx.y;
  int row = blockIdx.y * 4 + ty, col = blockIdx.x * 4 + tx;
  float acc = 0.0f;
  for (int k0 = 0; k0 < 12; k0 += 4) {
    ta[ty][tx] = a[row * 16 + k0 + tx];
    tb[ty][tx] = b[(k0 + ty) * 8 + col];
    __syncthreads();
    for (int k = 0; k < 4; k++) acc += ta[ty][k] * tb[k][tx];
    __syncthreads();
  }
  out[row * 8 + col] = acc;
}
