#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f32 sine of large arguments is far outside
[-1, 1]: sin(1e10) = -6.0e21, sin(1e20) = -inf, sin(1.6e38) = inf;
sin(1e5) = 0.0385 (exact 0.0357). Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I16.
  python3 iree_sine_large_argument.py
"""
import math

import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<5xf32>) -> tensor<5xf32> {
  %0 = stablehlo.sine %x : tensor<5xf32>
  return %0 : tensor<5xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
x = np.array([0.5, 1e5, 1e10, 1e20, 1.6e38], np.float32)
got = ctx.modules.module["main"](x).to_host()
for v, g in zip(x, got):
    want = math.sin(float(v))
    print("sin(%-8.3g) = %-12.6g expected %-10.6g %s" % (v, g, want, "" if abs(g - want) < 1e-6 else "WRONG"))
