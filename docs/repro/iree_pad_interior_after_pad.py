#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a pad with interior padding of a padded broadcast
fails to compile ("'linalg.generic' op write affecting operations on
global resources are restricted to workgroup distributed contexts"); XLA
compiles and runs it. Standalone: needs only iree-base-compiler (pip).
docs/FINDINGS.md, I21.
  python3 iree_pad_interior_after_pad.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%p: tensor<3x2xf32>) -> tensor<4x4x3xf32> {
  %0 = stablehlo.broadcast_in_dim %p, dims = [1, 2] : (tensor<3x2xf32>) -> tensor<2x3x2xf32>
  %c = stablehlo.constant dense<3.0> : tensor<f32>
  %1 = stablehlo.pad %0, %c, low = [0, 1, 1], high = [0, 0, 0], interior = [0, 0, 0]
      : (tensor<2x3x2xf32>, tensor<f32>) -> tensor<2x4x3xf32>
  %d = stablehlo.constant dense<-1.0> : tensor<f32>
  %2 = stablehlo.pad %1, %d, low = [0, 0, 0], high = [1, 0, 0], interior = [1, 0, 0]
      : (tensor<2x4x3xf32>, tensor<f32>) -> tensor<4x4x3xf32>
  return %2 : tensor<4x4x3xf32>
}
"""
try:
    ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                   extra_args=["--iree-llvmcpu-target-cpu=host"])
    print("compiles")
except ic.CompilerToolError as e:
    err = [l for l in str(e).splitlines() if "error:" in l]
    print("FAILS: %s" % (err[0].strip() if err else e))
