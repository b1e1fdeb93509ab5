#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f16 rsqrt and f8e5m2 logistic round every step of
their expansion to the narrow type: f16 rsqrt(x) is f16(1 / f16(sqrt(x)))
(up to 1.33 f16 ulps off), f8e5m2 logistic(x) is
f8(1 / f8(1 + f8(exp(-x)))) (logistic(2) = 1.0, logistic(-0.3125) = 0.5;
up to 1.24 ulps off), where every other f16 op IREE computes in f32 and
rounds once (0.5 ulps). Standalone: needs only iree-base-compiler and
iree-base-runtime (pip), numpy. docs/FINDINGS.md, I18.
  python3 iree_narrow_double_rounding.py
"""
import math

import numpy as np
import iree.compiler as ic
import iree.runtime as rt


def run(mlir, *args):
    vmfb = ic.compile_str(mlir, target_backends=["llvm-cpu"], input_type="stablehlo",
                          extra_args=["--iree-llvmcpu-target-cpu=host"])
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    return ctx.modules.module["main"](*args).to_host()


# f16 rsqrt: every positive finite f16.
x = np.arange(1, 0x7C00, dtype=np.uint16).view(np.float16)
got = run("""
func.func @main(%%x: tensor<%dxf16>) -> tensor<%dxf16> {
  %%0 = stablehlo.rsqrt %%x : tensor<%dxf16>
  return %%0 : tensor<%dxf16>
}""" % ((x.size,) * 4), x)
once = (1 / np.sqrt(x.astype(np.float64))).astype(np.float16)  # rounded once
twice = (np.float16(1) / np.sqrt(x)).astype(np.float16)          # sqrt, then 1/, each in f16
print("f16 rsqrt over %d inputs: %d differ from the once-rounded value, %d from "
      "f16(1 / f16(sqrt(x)))" % (x.size, int((got != once).sum()), int((got != twice).sum())))
i = int(np.nonzero(x == np.float16(1.14453125))[0][0])
print("  rsqrt(1.14453125) = %r, exact %r, rounded once %r WRONG" % (
    float(got[i]), 1 / math.sqrt(1.14453125), float(once[i])))


# f8e5m2 logistic: every finite f8e5m2, passed as f32 and converted (exact
# both ways: f8e5m2 is the top byte of an f16).
BYTES = np.arange(256, dtype=np.uint16)
F8 = (BYTES << 8).view(np.float16).astype(np.float64)  # f8e5m2 is the top byte of an f16
FIN = np.isfinite(F8)


def to_f8(v):
    """Round to f8e5m2: the nearest value, ties to the even byte; from
    61440 (halfway from the largest, 57344, to 2^16) on, inf."""
    vals, even = F8[FIN], (BYTES[FIN] & 1) == 0
    v = np.asarray(v, np.float64)
    big = np.abs(v) >= 61440
    w = np.where(big, 0, v)[:, None]
    d = np.abs(vals[None, :] - w)
    best = d.min(axis=1, keepdims=True)
    pick = (d == best) & np.where((d == best).sum(axis=1, keepdims=True) > 1, even[None, :], True)
    return np.where(big, np.copysign(np.inf, v), vals[np.argmax(pick, axis=1)])


x8 = np.unique(F8[FIN]).astype(np.float32)  # -0 and 0 once
got8 = run("""
func.func @main(%%x: tensor<%dxf32>) -> tensor<%dxf32> {
  %%0 = stablehlo.convert %%x : (tensor<%dxf32>) -> tensor<%dxf8E5M2>
  %%1 = stablehlo.logistic %%0 : tensor<%dxf8E5M2>
  %%2 = stablehlo.convert %%1 : (tensor<%dxf8E5M2>) -> tensor<%dxf32>
  return %%2 : tensor<%dxf32>
}""" % ((x8.size,) * 8), x8).astype(np.float64)
xd = x8.astype(np.float64)
with np.errstate(over="ignore"):
    once8 = to_f8(1 / (1 + np.exp(-xd)))
    steps = to_f8(1 / to_f8(1 + to_f8(np.exp(-xd))))
print("f8e5m2 logistic over %d inputs: %d differ from the once-rounded value, %d from "
      "f8(1 / f8(1 + f8(exp(-x))))" % (x8.size, int((got8 != once8).sum()),
                                        int((got8 != steps).sum())))
for v in (2.0, -0.3125):
    i = int(np.nonzero(x8 == v)[0][0])
    print("  logistic(%r) = %r, exact %.4f, rounded once %r WRONG" % (
        v, got8[i], 1 / (1 + math.exp(-v)), once8[i]))
