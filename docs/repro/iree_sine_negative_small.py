#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): f32 sine of small negative arguments is far off;
sin(-x) != -sin(x). Standalone: needs only iree-base-compiler and
iree-base-runtime (pip), numpy. docs/FINDINGS.md, "IREE CPU".
  python3 iree_sine_negative_small.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<6xf32>) -> tensor<6xf32> {
  %0 = stablehlo.sine %x : tensor<6xf32>
  return %0 : tensor<6xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
cfg = rt.Config("local-task")
ctx = rt.SystemContext(config=cfg)
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
x = np.array([1.4228247e-05, -1.4228247e-05, 1e-3, -1e-3, 0.5, -0.5], np.float32)
got = ctx.modules.module["main"](x).to_host()
want = np.sin(x.astype(np.float64)).astype(np.float32)
for a, g, w in zip(x, got, want):
    print("sin(%-14r) = %-14r expected %-14r %s" % (float(a), float(g), float(w),
          "" if g == w else "WRONG (%.3g relative)" % abs((g - w) / w)))
