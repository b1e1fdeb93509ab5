#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): power of a negative base with an integral exponent
is NaN. Standalone: needs only iree-base-compiler and iree-base-runtime
(pip), numpy. docs/FINDINGS.md, I7.
  python3 iree_power_negative_base.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.power %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
a = np.array([-3.75, -2, -2, 2], np.float32)
b = np.array([-8, 3, 2, 0.5], np.float32)
got = ctx.modules.module["main"](a, b).to_host()
for x, y, g in zip(a, b, got):
    w = np.power(np.float64(x), np.float64(y))
    print("pow(%r, %r) = %r expected %r %s" % (float(x), float(y), float(g), float(w),
          "" if abs(g - w) <= 1e-6 * abs(w) else "WRONG"))
