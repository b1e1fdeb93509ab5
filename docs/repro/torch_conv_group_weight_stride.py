"""torch.compile (Inductor) computes a grouped conv2d wrongly when the
weight is a channels-last view whose size-1 width dim has a stride other
than the canonical one (torch 2.15.0, x86-64, CPU; docs/FINDINGS.md,
torch 10): weight (9, 3, 2, 1) with strides (6, 1, 3, 54), a permute of
a (1, 9, 2, 3) tensor; 3 groups. Eager torch gives the same result for
the view and a contiguous copy; Inductor's differs from both by more than
the result's own magnitude. A contiguous copy, or strides (6, 1, 3, 3),
or one group, or a 2x2 kernel, is computed right.
    python torch_conv_group_weight_stride.py"""
import torch

print(torch.__version__)
torch.manual_seed(0)
f = lambda x, w, g: torch.nn.functional.conv2d(x, w, groups=g)  # noqa: E731
x = torch.randn(2, 9, 5, 5)
k = torch.randn(1, 9, 2, 3)
w = k.permute(1, 3, 2, 0)  # (out, in/groups, kh, kw) = (9, 3, 2, 1)
print("weight stride", w.stride())
for name, ww in (("view", w), ("contiguous copy", w.contiguous()),
                 ("strides (6, 1, 3, 3)", w.contiguous().as_strided(w.shape, (6, 1, 3, 3)))):
    ref = f(x, ww.contiguous(), 3)
    torch._dynamo.reset()
    got = torch.compile(f)(x, ww, 3)
    print("%-22s eager - contiguous %.3g, compiled - eager %.3g (max |eager| %.3g)" % (
        name, (f(x, ww, 3) - ref).abs().max().item(), (got - ref).abs().max().item(), ref.abs().max().item()))
# view                   eager - contiguous 0, compiled - eager 14.9 (max |eager| 9.39)
