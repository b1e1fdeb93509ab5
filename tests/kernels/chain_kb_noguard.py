# trench-kernel: ref=chain.hlo expect=bug:tail-guard
# A KernelBench-style source: the CUDA string of load_inline and its host
# wrapper; trench verify records the wrapper's launch (4 blocks of 32
# threads for the 100 elements) and checks it. No tail guard: the 28
# threads past element 99 read and write out of bounds.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

chain_source = """
#include <torch/extension.h>
#include <cuda_runtime.h>

__global__ void chain_kernel(const float* a, const float* b, float* out, int size) {
    int idx = blockIdx.x * blockDim.x + threadIdx.x;
    {
        out[idx] = fmaxf(a[idx] * b[idx] + a[idx], 0.0f);
    }
}

torch::Tensor chain_cuda(torch::Tensor a, torch::Tensor b) {
    auto size = a.numel();
    auto out = torch::empty_like(a);
    const int block_size = 32;
    const int num_blocks = (size + block_size - 1) / block_size;
    chain_kernel<<<num_blocks, block_size>>>(a.data_ptr<float>(), b.data_ptr<float>(), out.data_ptr<float>(), size);
    return out;
}
"""

chain_cpp_source = "torch::Tensor chain_cuda(torch::Tensor a, torch::Tensor b);"

chain = load_inline(
    name="chain",
    cpp_sources=chain_cpp_source,
    cuda_sources=chain_source,
    functions=["chain_cuda"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.chain = chain

    def forward(self, a, b):
        return self.chain.chain_cuda(a, b)
