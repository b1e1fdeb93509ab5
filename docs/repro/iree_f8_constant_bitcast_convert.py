#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): an integer convert of a bitcast of an
f8E5M2 constant fails to compile: "internal error: jit global source
initialization order invalid: global "__hoisted_tensor_3xi8" has no
value". XLA compiles and runs it.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I29.
  python3 iree_f8_constant_bitcast_convert.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main() -> tensor<3xi32> {
  %cst = stablehlo.constant dense<[1.000000e+00, -4.687500e-02, 1.500000e+00]> : tensor<3xf8E5M2>
  %0 = stablehlo.bitcast_convert %cst : (tensor<3xf8E5M2>) -> tensor<3xui8>
  %1 = stablehlo.convert %0 : (tensor<3xui8>) -> tensor<3xi32>
  return %1 : tensor<3xi32>
}
"""
with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
    f.write(MLIR)
exe = os.path.join(os.path.dirname(tools.__file__), "..", "_mlir_libs", "iree-compile")
if not os.path.exists(exe):
    exe = os.path.join(os.path.dirname(sys.executable), "iree-compile")
p = subprocess.run([exe, "--iree-hal-target-backends=llvm-cpu", "--iree-input-type=stablehlo",
                    "--iree-llvmcpu-target-cpu=host", f.name, "-o", os.devnull],
                   capture_output=True, text=True)
err = [l.strip() for l in p.stderr.splitlines() if "error:" in l]
if p.returncode < 0 or "Stack dump" in p.stderr:
    print("iree-compile CRASHED (exit %d)" % p.returncode)
elif p.returncode:
    print("FAILS: %s" % (err[0] if err else p.stderr[-300:]))
else:
    print("compiles")
