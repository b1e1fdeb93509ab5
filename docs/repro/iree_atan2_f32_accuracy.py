#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f32 atan2 errs by up to about 40 ulps (atan2 near
0.583, y/x near 0.66), where XLA's CPU budget is 2. Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy. docs/FINDINGS.md,
I17.
  python3 iree_atan2_f32_accuracy.py
"""
import math

import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%y: tensor<4xf32>, %x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = stablehlo.atan2 %y, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
y = np.array([54.67667, 36.206573, -27.645287, 1.0], np.float32)
x = np.array([82.94721, 54.887348, 41.894012, 1.0], np.float32)
got = ctx.modules.module["main"](y, x).to_host()
for a, b, g in zip(y, x, got):
    w = math.atan2(float(a), float(b))  # double: exact to far below an f32 ulp
    ulps = abs(float(g) - w) / float(np.spacing(np.float32(abs(w))))
    print("atan2(%r, %r) = %r expected %r: %.1f ulps %s" % (float(a), float(b), float(g), w, ulps,
          "WRONG" if ulps > 2 else ""))
