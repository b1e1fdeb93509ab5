"""torch.compile (Inductor) sums a broadcast uint8 tensor wrongly when the
sum wraps (torch 2.15.0, x86-64, CPU; docs/FINDINGS.md, torch 9): 16
copies of 23 summed in uint8 are 368 mod 256 = 112 (eager), Inductor
gives 192. The same sum of a materialized tensor (torch.full) is right.
    python torch_u8_sum_expand.py"""
import torch

print(torch.__version__)
f = lambda x, n: torch.sum(x.expand(n), 0, dtype=torch.uint8)  # noqa: E731
g = lambda x: torch.sum(x, 0, dtype=torch.uint8)  # noqa: E731
for v, n in ((23, 16), (23, 17), (1, 300), (200, 2)):
    x = torch.tensor([v], dtype=torch.uint8)
    torch._dynamo.reset()
    print("%d x %d: exact %d, eager %d, compiled %d, compiled on torch.full %d" % (
        n, v, v * n % 256, f(x, n).item(), torch.compile(f)(x, n).item(),
        torch.compile(g)(torch.full((n,), v, dtype=torch.uint8)).item()))
# 16 x 23: exact 112, eager 112, compiled 192, compiled on torch.full 112
