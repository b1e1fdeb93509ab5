#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): cbrt(+-inf) is NaN. Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I5.
  python3 iree_cbrt_inf.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.cbrt %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
x = np.array([-np.inf, np.inf, -8, 8], np.float32)
got = ctx.modules.module["main"](x).to_host()
for a, g in zip(x, got):
    w = np.cbrt(a)
    print("cbrt(%r) = %r expected %r %s" % (float(a), float(g), float(w),
          "" if abs(g - w) <= 1e-6 * abs(w) or g == w else "WRONG"))
