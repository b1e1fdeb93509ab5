/* trench-kernel: ref=softmax.hlo expect=bug:overflow
 * trench-launch: grid=4 block=8
 * No max shift: exp overflows for large inputs. */
extern "C" __global__ void kernel(const float *a, float *out) {
  __shared__ float x[8];
  __shared__ float red[1];
  int t = threadIdx.x, row = blockIdx.x;
  x[t] = a[row * 8 + t];
  __syncthreads();
  if (t == 0) {
    float s = 0.0f;
    for (int j = 0; j < 8; j++) s += expf(x[j]);
    red[0] = s;
  }
  __syncthreads();
  out[row * 8 + t] = expf(x[t]) / red[0];
}
