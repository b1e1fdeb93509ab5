"""torch.compile (Inductor, CPU) fails to compile a bool sum kept in bool
(torch 2.15.0, x86-64; docs/FINDINGS.md, torch 7): the generated C++ adds
two VecMask values, which have no operator+ (CppCompileError); eager
torch computes it (an "any" over the dimension).
    python torch_sum_bool_compile.py"""
import torch

print(torch.__version__)
x = torch.rand(3, 4, 5) > 0.5
f = lambda x: torch.sum(x, [1], dtype=torch.bool)  # noqa: E731
print("eager", f(x).shape)                            # torch.Size([3, 5])
try:
    print("compiled", torch.compile(f)(x).shape)
except Exception as e:                                # InductorError: CppCompileError
    print("compiled failed:", type(e).__name__, str(e).splitlines()[0][:200])
