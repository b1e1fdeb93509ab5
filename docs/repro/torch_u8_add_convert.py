"""pytorch/pytorch#105264 (torch 2.1.x; 2.2.2 is right): Inductor's C++
adds u8 values in int and converts the unwrapped sum to int16.
    pip install torch==2.1.2 'numpy<2'; python torch_u8_add_convert.py"""
import torch

def f(x):
    return (x + x).to(torch.int16)

x = torch.full((32,), 200, dtype=torch.uint8)
print(torch.__version__)
print("eager   ", f(x)[0].item())                 # 144 (200 + 200 wraps to 144)
print("compiled", torch.compile(f)(x)[0].item())  # 2.1.2: 400
