#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f32 erf of a tiny normal argument is 0 (erf(2e-37)
gives 0, exact 2.257e-37), through chlo.erf, the op jax emits for erf.
erf(1e-36) is right. Standalone: needs only iree-base-compiler and
iree-base-runtime (pip), numpy. docs/FINDINGS.md, I27.
  python3 iree_erf_f32_tiny.py
"""
import math

import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = chlo.erf %x : tensor<4xf32> -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
config = rt.Config("local-task")
ctx = rt.SystemContext(config=config)
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
x = np.array([2e-37, -2.06e-37, 1e-36, 0.5], np.float32)
got = np.asarray(ctx.modules.module["main"](x))
for a, g in zip(x, got):
    want = math.erf(float(a))
    bad = abs(float(g) - want) > 4 * abs(float(np.spacing(np.float32(want))))
    print("erf(%-10.4g) = %-12.6g expected %-12.6g %s" % (a, g, want, "WRONG" if bad else ""))
