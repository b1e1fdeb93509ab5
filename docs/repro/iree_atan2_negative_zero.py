#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): atan2 ignores the sign of a zero y, and
atan2 of two zeros is NaN, whatever their signs. Standalone: needs only iree-base-compiler and iree-base-runtime
(pip), numpy. docs/FINDINGS.md, I9.
  python3 iree_atan2_negative_zero.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%a: tensor<6xf32>, %b: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.atan2 %a, %b : tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
a = np.array([-0.0, 0.0, -0.0, -1, 0.0, 0.0], np.float32)
b = np.array([-1, -1, -0.0, -1, 0.0, -0.0], np.float32)
got = ctx.modules.module["main"](a, b).to_host()
for x, y, g in zip(a, b, got):
    w = np.arctan2(np.float64(x), np.float64(y))
    print("atan2(%r, %r) = %r expected %r %s" % (float(x), float(y), float(g), float(w),
          "" if abs(g - w) <= 1e-6 * abs(w) and np.signbit(g) == np.signbit(w) else "WRONG"))
