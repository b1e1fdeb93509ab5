#!/usr/bin/env python3
"""measure_torch_excess.py - Inductor's excess precision on f16 and bf16
chains against eager torch: the facts behind `excess-precision` in
profiles/torch-inductor.conf (docs/PROFILES.md, "Excess precision").

  .venv-torch/bin/python bench/measure_torch_excess.py

Each chain runs eagerly, through torch.compile (Inductor, CPU) with the
default config, and through torch.compile with
torch._inductor.config.emulate_precision_casts = True. One line per chain
and mode with its results (as f64 reprs). Nothing here is asserted.
"""
import torch
import torch._dynamo
import torch._inductor.config as icfg

H, B = torch.float16, torch.bfloat16


def chains():
    """(name, fn, args): each fn computes in a narrow dtype and returns f32
    (or the narrow value itself, where the output's own rounding is the
    question)."""
    f = lambda *v: torch.tensor(v, dtype=torch.float32)
    return [
        # f16 overflow: the sum exceeds 65504, then converted to f32
        ("f16 add overflow, convert f32", lambda a, b: (a.to(H) + b.to(H)).float(), (f(40000.0), f(40000.0))),
        # the bundle's case: a downcast that overflows, then an add
        ("f32->f16 convert overflow, add, f32", lambda a, b: (a.to(H) + b.to(H)).float(), (f(-1e7), f(1.0))),
        ("f32->f16->f32 convert pair", lambda a: a.to(H).float(), (f(1e5, 70000.0, 65519.0, 65520.0),)),
        # overflow then cancel: inf - inf = NaN in f16, finite in f32
        ("f16 (a+b)-b", lambda a, b: ((a.to(H) + b.to(H)) - b.to(H)).float(), (f(40000.0), f(40000.0))),
        ("f16 (a+b)-(a+b)*1", lambda a, b: ((a.to(H) + b.to(H)) - (a.to(H) + b.to(H)) * 1).float(),
         (f(40000.0), f(40000.0))),
        ("f16 compare (a+b) < inf", lambda a, b: ((a.to(H) + b.to(H)) < float("inf")).float(),
         (f(40000.0), f(40000.0))),
        ("f16 exp overflow * 0", lambda a: (torch.exp(a.to(H)) * 0).float(), (f(12.0),)),
        # underflow of the narrow type, then scaled up
        ("f16 product underflow * 1e4 * 1e4", lambda a: (((a.to(H) * a.to(H)) * 1e4) * 1e4).float(), (f(1e-4),)),
        ("bf16 product underflow * 2^60", lambda a: ((a.to(B) * a.to(B)) * 2.0**60).float(), (f(1e-21),)),
        # a sum whose f16 rounding matters
        ("f16 (2048+1)-2048", lambda a, b: ((a.to(H) + b.to(H)) - a.to(H)).float(), (f(2048.0), f(1.0))),
        ("bf16 (256+1)-256", lambda a, b: ((a.to(B) + b.to(B)) - a.to(B)).float(), (f(256.0), f(1.0))),
        # bf16 overflow: past bf16's largest value, below f32's
        ("bf16 add overflow, convert f32", lambda a, b: (a.to(B) + b.to(B)).float(), (f(1.7e38), f(1.7e38))),
        # the output itself (stored, so rounded) and a consumer of it
        ("f16 add as output (and consumer)", lambda a, b: ((a.to(H) + b.to(H)), (a.to(H) + b.to(H)).float() - 1),
         (f(40000.0), f(40000.0))),
        # a reduction of f16 (accumulated in f32 by eager as well)
        ("f16 sum [40000,40000,-40000]", lambda a: a.to(H).sum().float(), (f(40000.0, 40000.0, -40000.0),)),
    ]


def show(r):
    if isinstance(r, tuple):
        return " | ".join(show(x) for x in r)
    return "%s %s" % (str(r.dtype).replace("torch.", ""), [float(x) for x in r.double().flatten()])


def main():
    print("torch", torch.__version__)
    for name, fn, args in chains():
        out = [("eager", fn(*args))]
        for emulate in (False, True):
            torch._dynamo.reset()
            icfg.emulate_precision_casts = emulate
            out.append(("inductor" + (" emulate" if emulate else ""), torch.compile(fn)(*args)))
        icfg.emulate_precision_casts = False
        print(name)
        for mode, r in out:
            print("  %-17s %s" % (mode, show(r)))


if __name__ == "__main__":
    main()
