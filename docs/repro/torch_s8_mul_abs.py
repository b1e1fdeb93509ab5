"""pytorch/pytorch#113144 (torch 2.1.x; fixed by pytorch/pytorch#113253,
2.2.2 is right): Inductor's C++ keeps (y + 5) * 5 of int8 values in int,
so abs sees 225 instead of the wrapped -31.
    pip install torch==2.1.2 'numpy<2'; python torch_s8_mul_abs.py"""
import torch

def f(y):
    five = torch.tensor(5, dtype=torch.int8)
    return torch.abs((y + five) * five)

y = torch.full((32,), 40, dtype=torch.int8)
print(torch.__version__)
print("eager   ", f(y)[0].item())                 # 31  (225 wraps to -31)
print("compiled", torch.compile(f)(y)[0].item())  # 2.1.2: -31
