"""Eager torch's bf16 erf has no relative accuracy near 0 (torch 2.15.0,
x86-64, CPU; docs/FINDINGS.md, torch 6): erf(x) ~ 1.1284 x for small x,
but bf16 gives 0 for 1e-7 and 21% too little at 4.7e-7, on the vectorized
and the scalar path alike; f32 is right.
    python torch_bf16_erf_small.py"""
import torch

print(torch.__version__)
for v in (1e-7, 4.7e-7, 1e-5):
    x = torch.full((16,), v, dtype=torch.bfloat16)
    want = torch.erf(x.double())[0].item()
    print("x=%-8g bf16 vector %-12.6g scalar %-12.6g f64 %-12.6g f32 %.6g" % (
        x[0].item(), torch.erf(x)[0].item(), torch.erf(x[:1])[0].item(), want,
        torch.erf(x.float())[0].item()))
# x=1.00117e-07 bf16 vector 0  scalar 0  f64 1.12969e-07  f32 1.12969e-07
