#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): reduce_precision of f16 denormals to e8m7 rounds
their raw mantissa bits as if they were normal numbers. Standalone: needs
only iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I4.
  python3 iree_reduce_precision_f16_denormal.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<4xf16>) -> tensor<4xf16> {
  %0 = stablehlo.reduce_precision %x, format = e8m7 : tensor<4xf16>
  return %0 : tensor<4xf16>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
bits = np.array([6, 5, 13, 0x3e00], np.uint16)  # 3 denormals (units of 2^-24), 1.5
x = bits.view(np.float16)
got = ctx.modules.module["main"](x).to_host()
# e8m7 has the f32 exponent range: every f16 value is normal there, and
# these have at most 4 significant bits, so f16 -> e8m7 -> f16 keeps them.
for b, g in zip(bits, got.view(np.uint16)):
    print("f16 bits %5d -> %5d %s" % (b, g, "" if b == g else "WRONG (expected %d)" % b))
