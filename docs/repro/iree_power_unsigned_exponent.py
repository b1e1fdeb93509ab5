#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): power on unsigned integers reads an exponent with
its top bit set as negative and returns 0: ui8 3^200 gives 0 (3^200 mod
256 = 161), 5^129 gives 0 (5). StableHLO's own interpreter treats only
signed exponents as negative (stablehlo/reference/Element.cpp, power).
Standalone: needs only iree-base-compiler and iree-base-runtime (pip),
numpy. docs/FINDINGS.md, I12.
  python3 iree_power_unsigned_exponent.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%a: tensor<4xui8>, %b: tensor<4xui8>) -> tensor<4xui8> {
  %0 = stablehlo.power %a, %b : tensor<4xui8>
  return %0 : tensor<4xui8>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
a = np.array([3, 3, 5, 2], np.uint8)
b = np.array([200, 2, 129, 7], np.uint8)
got = ctx.modules.module["main"](a, b).to_host()
for x, y, g in zip(a, b, got):
    want = pow(int(x), int(y), 256)
    print("%d^%d = %d expected %d %s" % (x, y, g, want, "" if g == want else "WRONG"))
