#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a variadic reduce (value, index) whose
reducer returns its index block argument as is, feeding a padded
convolution, fails to compile: "'linalg.yield' op expected number of
yield values (2) to match the number of inits / outs operands of the
enclosing LinalgOp (1)". XLA compiles and runs it.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I33.
  python3 iree_argmin_then_convolution.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main(%arg0: tensor<1x1x2x2xf32>, %arg1: tensor<2x2x1xf32>) -> tensor<5x1x1xf32> {
  %0 = stablehlo.iota dim = 0 : tensor<1x1x2x2xi32>
  %cst = stablehlo.constant dense<0x7F800000> : tensor<f32>
  %c = stablehlo.constant dense<0> : tensor<i32>
  %1:2 = stablehlo.reduce(%arg0 init: %cst), (%0 init: %c) across dimensions = [0] : (tensor<1x1x2x2xf32>, tensor<1x1x2x2xi32>, tensor<f32>, tensor<i32>) -> (tensor<1x2x2xf32>, tensor<1x2x2xi32>)
   reducer(%a: tensor<f32>, %b: tensor<f32>) (%ai: tensor<i32>, %bi: tensor<i32>)  {
    %3 = stablehlo.compare LT, %ai, %bi : (tensor<i32>, tensor<i32>) -> tensor<i1>
    %4 = stablehlo.select %3, %a, %b : tensor<i1>, tensor<f32>
    stablehlo.return %4, %ai : tensor<f32>, tensor<i32>
  }
  %2 = stablehlo.convolution(%1#0, %arg1) dim_numbers = [b, f, 0]x[0, i, o]->[0, b, f], window = {stride = [1], pad = [[2, 2]], lhs_dilate = [1], rhs_dilate = [1], reverse = [false]} {batch_group_count = 1 : i64, feature_group_count = 1 : i64} : (tensor<1x2x2xf32>, tensor<2x2x1xf32>) -> tensor<5x1x1xf32>
  return %2 : tensor<5x1x1xf32>
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
