#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a complex<f32> convolution with padding
and a stride crashes iree-compile (SIGSEGV in
mlir::TypeRange::dereference_iterator). XLA compiles and runs it.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I31.
  python3 iree_convolution_c64_padded.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main(%x: tensor<1x1x1xcomplex<f32>>, %k: tensor<1x1x1xcomplex<f32>>) -> tensor<1x2x1xcomplex<f32>> {
  %0 = stablehlo.convolution(%x, %k) dim_numbers = [0, f, b]x[o, i, 0]->[f, 0, b], window = {stride = [2], pad = [[1, 2]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x1x1xcomplex<f32>>, tensor<1x1x1xcomplex<f32>>) -> tensor<1x2x1xcomplex<f32>>
  return %0 : tensor<1x2x1xcomplex<f32>>
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
