#!/usr/bin/env python3
"""IREE (iree-compile 3.13.0, llvm-cpu): a module with an op of a dialect
IREE does not load, in MLIR's generic form (here mhlo.all_to_all, which
XLA's HLO -> StableHLO converter emits for a tuple all-to-all), crashes
iree-compile in FormDispatchRegionsPass (decideFusableLinalgOps) instead of
reporting an error. Standalone: needs only iree-base-compiler (pip).
docs/FINDINGS.md, I3.
  python3 iree_compile_crash_unregistered_op.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
module {
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
    %0 = "mhlo.all_to_all"(%arg0) <{replica_groups = dense<0> : tensor<1x1xi64>}> : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }
}
"""
with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
    f.write(MLIR)
exe = os.path.join(os.path.dirname(tools.__file__), "..", "_mlir_libs", "iree-compile")
if not os.path.exists(exe):
    exe = os.path.join(os.path.dirname(sys.executable), "iree-compile")
p = subprocess.run([exe, "--iree-hal-target-backends=llvm-cpu", "--iree-input-type=stablehlo",
                    f.name, "-o", os.devnull], capture_output=True, text=True)
print("iree-compile exit status", p.returncode)
crashed = "crash backtrace" in p.stderr or "Stack dump" in p.stderr
print("CRASHED:" if crashed else "no crash:", "\n".join(
    l for l in p.stderr.splitlines() if "FormDispatchRegions" in l or "error:" in l)[:600])
