#!/usr/bin/env python3
"""measure_ulps.py - max error in ulps of XLA CPU's unary float ops, per
dtype: every f16 and bf16 value (exhaustive), and sampled f32 and f64
inputs. The numbers behind the transcendental-ulps lines of
profiles/xla-cpu.conf that bench/measure_profile.py does not cover
(narrow types, expm1, log1p, tan, cbrt; docs/PROFILES.md).

XLA is driven the way adapters/xla/adapter.py drives it (HLO text -> XLA's
parser -> StableHLO -> the normal CPU pipeline), the input a runtime
parameter so constant folding cannot take the op. References: numpy long
double (x87, 64-bit mantissa) for f32/f64 inputs, f64 for f16/bf16 (its
error is far below a narrow ulp); logistic as 1/(1+exp(-x)) in long
double, erf with math.erf in double (f16/bf16/f32 only).

Elements where the reference or XLA is not finite, or the exact result is
below the smallest normal of a flushing type (f32, f64, bf16: the
denormal-flush rule), are left out; NaN disagreements are counted apart.

Usage: .venv/bin/python adapters/xla/measure_ulps.py [--n N] [--dtypes f16,f64]
       [--ops log-plus-one,...]
"""
import argparse
import math
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import ml_dtypes  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

jax.config.update("jax_enable_x64", True)
DEV = jax.devices("cpu")[0]
CLIENT = DEV.client
try:
    import jaxlib._hlo as HLO
except ImportError:
    HLO = xc._xla
LD = np.longdouble

NP = {"f16": np.float16, "bf16": ml_dtypes.bfloat16, "f32": np.float32, "f64": np.float64}
FLUSH = {"f16": False, "bf16": True, "f32": True, "f64": True}


def compile_hlo(text):
    mod = HLO.hlo_module_from_text(text)
    proto = mod.as_serialized_hlo_module_proto()
    m = xc._xla.mlir
    mlir = m.hlo_to_stablehlo(proto) if hasattr(m, "hlo_to_stablehlo") else \
        m.xla_computation_to_mlir_module(xc.XlaComputation(proto))  # jaxlib 0.4.30
    o = xc.CompileOptions()
    if hasattr(CLIENT, "compile_and_load"):
        return CLIENT.compile_and_load(mlir, [DEV], o)
    return CLIENT.compile(mlir, compile_options=o)


def xla_unary(op, dt, x):
    text = ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(p)\n}\n"
            % (dt, x.size, dt, x.size, op))
    exe = compile_hlo(text)
    return np.asarray(exe.execute([jax.device_put(x, DEV)])[0])


def logistic(x):
    return 1 / (1 + np.exp(-x))


def erf(x):
    return np.array([math.erf(float(v)) for v in x], dtype=np.float64)


REF = {
    "exponential": np.exp, "exponential-minus-one": np.expm1, "log": np.log,
    "log-plus-one": np.log1p, "tanh": np.tanh, "logistic": logistic, "sine": np.sin,
    "cosine": np.cos, "tan": np.tan, "cbrt": np.cbrt, "sqrt": np.sqrt,
    "rsqrt": lambda x: 1 / np.sqrt(x), "erf": erf,
}
# Useful input range per op for sampled types: (lo, hi) uniform part.
RANGE = {
    "exponential": (-87, 88), "exponential-minus-one": (-20, 20), "log": (0, 1e6),
    "log-plus-one": (-1, 100), "tanh": (-10, 10), "logistic": (-30, 30), "sine": (-100, 100),
    "cosine": (-100, 100), "tan": (-1.5, 1.5), "cbrt": (-1e6, 1e6), "sqrt": (0, 1e6),
    "rsqrt": (0, 1e6), "erf": (-5, 5),
}


def inputs(dt, op, n, rng):
    if dt in ("f16", "bf16"):
        bits = np.arange(1 << 16, dtype=np.uint16)
        x = bits.view(NP[dt])
        return x[np.isfinite(x.astype(np.float64))]
    lo, hi = RANGE[op]
    if dt == "f32":
        lo, hi = (max(lo, -80), min(hi, 80)) if op == "exponential" else (lo, hi)
    u = rng.uniform(lo, hi, n // 2)
    mag = 10 ** rng.uniform(-30, math.log10(max(abs(lo), abs(hi))), n - n // 2)
    sgn = np.where(rng.random(n - n // 2) < 0.5, -1, 1) if lo < 0 else 1
    x = np.concatenate([u, sgn * mag])
    if op == "log-plus-one":
        x = x[x > -1]
    return x.astype(NP[dt])


def ulp_of(y, dt):
    """Spacing of dtype dt at |y| (y exact, as f64/long double)."""
    info = ml_dtypes.finfo(NP[dt]) if dt == "bf16" else np.finfo(NP[dt])
    mbits = int(info.nmant)
    tiny = float(info.smallest_normal)
    ay = np.abs(y.astype(np.float64))
    e = np.floor(np.log2(np.maximum(ay, tiny)))
    return np.ldexp(1.0, (e - mbits).astype(np.int64))


def measure(op, dt, n, rng, normal_only=False):
    x = inputs(dt, op, n, rng)
    got = xla_unary(op, dt, x).astype(np.float64)
    xin = x.astype(LD) if dt in ("f32", "f64") else x.astype(np.float64)
    with np.errstate(all="ignore"):
        ref = REF[op](xin)
    ref = np.asarray(ref)
    info = ml_dtypes.finfo(NP[dt]) if dt == "bf16" else np.finfo(NP[dt])
    reff = ref.astype(np.float64)
    nan_dis = int(np.sum(np.isnan(reff) != np.isnan(got)))
    keep = np.isfinite(reff) & np.isfinite(got) & (np.abs(reff) <= float(info.max))
    if FLUSH[dt] or normal_only:
        keep &= (np.abs(reff) >= float(info.smallest_normal)) | (reff == 0)
        keep &= (np.abs(x.astype(np.float64)) >= float(info.smallest_normal)) | (x == 0)
    if not keep.any():
        return None
    r = ref[keep]
    err = np.abs(got[keep].astype(LD) - r) / ulp_of(r, dt).astype(LD)
    err = err.astype(np.float64)
    i = int(np.argmax(err))
    return {"n": int(keep.sum()), "max": float(err[i]), "mean": float(err.mean()),
            "worst_x": float(x[keep][i]), "nan_disagree": nan_dis}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20, help="sampled inputs per f32/f64 op")
    ap.add_argument("--dtypes", default="f16,bf16,f32,f64")
    ap.add_argument("--ops", default=",".join(REF))
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    print("%-22s %-5s %9s %8s %8s %14s %s" % ("op", "dtype", "inputs", "max ulp", "mean", "worst x", "nan-disagree"))
    for dt in a.dtypes.split(","):
        for op in a.ops.split(","):
            if op == "erf" and dt == "f64":
                continue  # no long double erf to compare with
            r = measure(op, dt, a.n, rng)
            if r is None:
                continue
            print("%-22s %-5s %9d %8.3f %8.3f %14.7g %d" % (op, dt, r["n"], r["max"], r["mean"], r["worst_x"],
                                                         r["nan_disagree"]))
            sys.stdout.flush()


if __name__ == "__main__":
    main()
