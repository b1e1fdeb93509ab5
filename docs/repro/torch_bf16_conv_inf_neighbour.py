"""Eager torch's bf16 conv2d gives NaN for an output whose window holds
only finite values, when the input column next to the window holds an
inf (torch 2.15.0, x86-64 with AVX512-BF16, CPU; docs/FINDINGS.md, torch
8): a 3x1 kernel of ones over a 3x2 image of ones gives [3, inf]; with an
inf at the bottom right, column 0 (which never reads column 1) is NaN.
f32 and f64 are right, and so is bf16 with oneDNN (mkldnn) disabled.
    python torch_bf16_conv_inf_neighbour.py"""
import torch

print(torch.__version__)
x = torch.ones(1, 1, 3, 2)
x[0, 0, 2, 1] = float("inf")
w = torch.ones(1, 1, 3, 1)
for dt in (torch.float64, torch.float32, torch.bfloat16):
    print(str(dt).ljust(15), torch.nn.functional.conv2d(x.to(dt), w.to(dt)).flatten().tolist())
with torch.backends.mkldnn.flags(enabled=False):
    print("bf16, no mkldnn", torch.nn.functional.conv2d(x.bfloat16(), w.bfloat16()).flatten().tolist())
# torch.float64    [3.0, inf]
# torch.float32    [3.0, inf]
# torch.bfloat16   [nan, inf]
