"""pytorch/pytorch#126848, #135758 (torch 2.4.0 and 2.5.1; 2.2.2, 2.6.0
and 2.15.0 are right): loading Inductor's compiled C++ sets flush-to-zero for
the process; subnormal f32 results become 0, in eager code run after it
too.
    pip install torch==2.4.0; python torch_denormal_ftz.py"""
import torch

def f(x):
    return x * 2.0 ** -124

x = torch.full((32,), 0.1875)
print(torch.__version__)
print("eager before", f(x)[0].item())                 # 8.816207631167156e-39
print("compiled    ", torch.compile(f)(x)[0].item())  # 2.4.0: 0.0
print("eager after ", f(x)[0].item())                 # 2.4.0: 0.0
