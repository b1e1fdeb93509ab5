#!/usr/bin/env python3
"""measure_torch.py - measures the deviations profiles/torch-eager.conf and
profiles/torch-inductor.conf list, on this machine's torch (CPU).

  .venv-torch/bin/python bench/measure_torch.py [--mode eager|inductor]

Prints one line per measurement:
  ulps DTYPE OP: worst ulps from the exact result, over contiguous and
      strided inputs (f16 and bf16: every
      finite value; f32 and f64: 2^20 random values of mixed exponents),
      the exact result being the op in f64 (mpmath-free: math's f64 result
      is within 1 f64 ulp, far below a narrow type's ulp; f32/f64 sqrt
      against numpy's correctly rounded sqrt)
  flush DTYPE OP: whether a denormal result comes out as 0 (FTZ) and a
      denormal input is read as 0 (DAZ)
  conv: integer wrap, zero-pad times inf
Each line is a fact the profile cites; nothing here is asserted.
"""
import math
import sys

import numpy as np
import torch

MODE = sys.argv[sys.argv.index("--mode") + 1] if "--mode" in sys.argv else "eager"


def run(fn, *args):
    if MODE == "inductor":
        torch._dynamo.reset()
        return torch.compile(fn)(*args)
    return fn(*args)


def all_values(dt):
    bits = torch.arange(0, 1 << 16, dtype=torch.int32).to(torch.int16)
    x = bits.view(dt)
    return x[torch.isfinite(x.float())]


def random_values(dt, n=1 << 20):
    g = torch.Generator().manual_seed(1)
    m = torch.rand(n, generator=g, dtype=torch.float64) + 0.5
    e = torch.randint(-30, 30, (n,), generator=g).double()
    s = torch.where(torch.rand(n, generator=g) < 0.5, -1.0, 1.0).double()
    return (s * m * torch.pow(2.0, e)).to(dt)


def ulp_of(exact, dt):
    """The ulp of dt at each exact value (f64)."""
    fi = torch.finfo(dt)
    a = exact.abs().clamp(min=fi.tiny)
    e = torch.floor(torch.log2(a))
    return torch.pow(2.0, e) * fi.eps


EXACT = {
    "sqrt": torch.sqrt, "rsqrt": torch.rsqrt, "erf": torch.erf, "exponential": torch.exp,
    "log": torch.log, "tanh": torch.tanh, "log-plus-one": torch.log1p,
    "exponential-minus-one": torch.expm1, "logistic": torch.sigmoid,
    "sine": torch.sin, "cosine": torch.cos, "tan": torch.tan,
}


def ulps(op, dt):
    f = EXACT[op]
    x = all_values(dt) if dt in (torch.float16, torch.bfloat16) else random_values(dt)
    if op in ("sqrt", "rsqrt", "log", "log-plus-one"):
        x = x.abs()
    if op in ("sine", "cosine", "tan"):
        x = x[x.double().abs() < 100]
    if op == "exponential-minus-one" or op == "exponential":
        x = x[x.double().abs() < 80]
    # Contiguous inputs take the vectorized kernels, strided ones the scalar
    # loops; a realisation of trench's torch adapter uses either, so the
    # worst of both counts.
    buf = torch.empty(2 * x.numel(), dtype=dt)[::2]
    buf.copy_(x)
    got, got2 = run(f, x).double(), run(f, buf).double()
    far = (got2 - f(x.double())).abs() > (got - f(x.double())).abs()
    got = torch.where(far, got2, got)
    if dt == torch.float32 and op == "sqrt":
        exact = torch.from_numpy(np.sqrt(x.double().numpy()))
    else:
        exact = f(x.double())
    ok = torch.isfinite(exact) & torch.isfinite(got)
    tiny = torch.finfo(dt).tiny
    normal = ok & (exact.abs() >= tiny)
    err = ((got - exact).abs() / ulp_of(exact, dt))[normal]
    sub = ok & (exact.abs() < tiny) & (exact != 0)
    flushed = int(((got == 0) & sub).sum())
    worst = float(err.max()) if err.numel() else 0.0
    return worst, flushed, int(sub.sum())


def flush(op, dt):
    """(FTZ seen, DAZ seen) for op on dt."""
    tiny = torch.finfo(dt).tiny
    if op == "erf":
        x = torch.full((64,), tiny / 4, dtype=torch.float64).to(dt)  # erf(x) ~ 1.13x: denormal
        ftz = bool((run(torch.erf, x) == 0).all())
        y = torch.full((64,), tiny / 4, dtype=torch.float64).to(dt)
        daz = bool((run(lambda a: torch.erf(a) * 2 ** (12 if dt == torch.float16 else 60), y) == 0).all())
        return ftz, daz
    if op == "multiply":
        x = torch.full((64,), tiny / 4, dtype=torch.float64).to(dt)
        one = torch.ones(64, dtype=dt)
        ftz = bool((run(torch.mul, x, one) == 0).all())
        big = torch.full((64,), 2.0 ** (12 if dt == torch.float16 else 60), dtype=dt)
        daz = bool((run(torch.mul, x, big) == 0).all())
        return ftz, daz
    if op == "convolution":
        x = torch.full((1, 1, 8), tiny / 4, dtype=torch.float64).to(dt)
        k = torch.full((1, 1, 1), 2.0 ** (12 if dt == torch.float16 else 60), dtype=dt)
        daz = bool((run(torch.nn.functional.conv1d, x, k) == 0).all())
        return None, daz
    raise ValueError(op)


def main():
    print("torch %s, mode %s, cpu capability %s" % (
        torch.__version__, MODE, torch.backends.cpu.get_cpu_capability()))
    for dt in (torch.float32, torch.float64):
        x = random_values(dt)
        got = run(torch.sqrt, x.abs())
        ref = torch.from_numpy(np.sqrt(x.abs().numpy()))
        print("sqrt %s: %.4f of %d results differ from the correctly rounded one" % (
            str(dt)[6:], float((got != ref).double().mean()), x.numel()))
        if dt == torch.float32:
            print("ulps float32 sqrt: %.3f (normal results)" % ulps("sqrt", dt)[0])
    for dt in (torch.float16, torch.bfloat16, torch.float32):
        for op in ("rsqrt", "erf", "exponential", "log", "tanh", "log-plus-one",
                   "exponential-minus-one", "logistic", "sine", "cosine", "tan"):
            print("ulps %s %s: %.3f (normal results); %d of %d denormal results flushed to 0"
                  % ((str(dt)[6:], op) + ulps(op, dt)))
    for dt in (torch.float32, torch.float64, torch.float16, torch.bfloat16):
        for op in ("multiply", "erf", "convolution"):
            print("flush %s %s: ftz %s daz %s" % ((str(dt)[6:], op) + flush(op, dt)))
    x = torch.full((1, 1, 4), 100, dtype=torch.int8)
    k = torch.full((1, 1, 2), 1, dtype=torch.int8)
    print("conv s8 [100,100]*[1,1]: %d (wraps: %s)" % (
        int(run(torch.nn.functional.conv1d, x, k)[0, 0, 0]), int(run(torch.nn.functional.conv1d, x, k)[0, 0, 0]) == -56))
    x = torch.tensor([[[1.0, 1.0, 1.0]]])
    k = torch.tensor([[[math.inf, 1.0, 1.0]]])
    y = run(lambda a, b: torch.nn.functional.conv1d(a, b, padding=1), x, k)
    print("conv f32 pad=1 kernel {inf,1,1}: first output %s" % float(y[0, 0, 0]))
    a = torch.full((64,), 1e38)
    print("fmod f32 1e38 %% 1e-3 over 64 elements: %s (scalar: %s, math.fmod: %s)" % (
        float(run(torch.fmod, a, torch.full((64,), 1e-3))[0]),
        float(torch.fmod(a[:1], torch.full((1,), 1e-3))[0]), math.fmod(float(np.float32(1e38)), float(np.float32(1e-3)))))


if __name__ == "__main__":
    main()
