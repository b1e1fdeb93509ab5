# trench-kernel: ref=rowsum.hlo expect=bug:stale-read
# A KernelBench-style row sum: one block per row, each thread adds its
# strided part with atomicAdd into the output, which the host wrapper
# allocates with torch::empty: the sums start from whatever it held.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

rowsum_source = r"""
#include <torch/extension.h>

__global__ void rowsum_kernel(const float* x, float* out, int cols) {
    int row = blockIdx.x;
    float s = 0.0f;
    for (int j = threadIdx.x; j < cols; j += blockDim.x)
        s += x[row * cols + j];
    atomicAdd(&out[row], s);
}

torch::Tensor rowsum_cuda(torch::Tensor x) {
    int rows = x.size(0), cols = x.size(1);
    auto out = torch::empty({rows}, x.options());
    rowsum_kernel<<<rows, 8>>>(x.data_ptr<float>(), out.data_ptr<float>(), cols);
    return out;
}
"""

rowsum = load_inline(
    name="rowsum",
    cpp_sources="torch::Tensor rowsum_cuda(torch::Tensor x);",
    cuda_sources=rowsum_source,
    functions=["rowsum_cuda"],
)


class ModelNew(nn.Module):
    def forward(self, x):
        return rowsum.rowsum_cuda(x)
