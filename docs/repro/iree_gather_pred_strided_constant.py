#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a gather of a strided slice of an i1
constant at constant indices fails to compile: "LLVM Translation failed
for operation: builtin.unrealized_conversion_cast". The same gather of
the unsliced constant compiles; XLA compiles and runs both.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I34.
  python3 iree_gather_pred_strided_constant.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main() -> tensor<2xi1> {
  %c = stablehlo.constant dense<[false, false, true, false, true, false, true, false, true, true, true, false, false, false, true, false, true]> : tensor<17xi1>
  %0 = stablehlo.slice %c [0:17:3] : (tensor<17xi1>) -> tensor<6xi1>
  %i = stablehlo.constant dense<[[5], [4]]> : tensor<2x1xi32>
  %1 = "stablehlo.gather"(%0, %i) <{dimension_numbers = #stablehlo.gather<collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>, indices_are_sorted = false, slice_sizes = array<i64: 1>}> : (tensor<6xi1>, tensor<2x1xi32>) -> tensor<2xi1>
  return %1 : tensor<2xi1>
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
