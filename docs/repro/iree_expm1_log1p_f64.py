#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f64 expm1 and log1p near 0 lose up to 1900 and 127
ulps. Standalone: needs only iree-base-compiler and iree-base-runtime
(pip), numpy. docs/FINDINGS.md, I2.
  python3 iree_expm1_log1p_f64.py
"""
import math
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<3xf64>, %y: tensor<3xf64>) -> (tensor<3xf64>, tensor<3xf64>) {
  %0 = stablehlo.exponential_minus_one %x : tensor<3xf64>
  %1 = stablehlo.log_plus_one %y : tensor<3xf64>
  return %0, %1 : tensor<3xf64>, tensor<3xf64>
}
"""
# IREE demotes f64 to f32 unless told not to.
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host",
                                  "--iree-input-demote-f64-to-f32=false"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
x = np.array([-9.062577912288816e-05, 0.0017152095790216038, 0.5])
y = np.array([0.008529755577737164, 0.25, 1.5])
e, l = (a.to_host() for a in ctx.modules.module["main"](x, y))
for name, f, args, got in (("expm1", math.expm1, x, e), ("log1p", math.log1p, y, l)):
    for a, g in zip(args, got):
        w = f(float(a))
        print("%s(%r) = %r expected %r (%.0f ulps)" % (name, float(a), float(g), w,
              abs(float(g) - w) / math.ulp(w)))
