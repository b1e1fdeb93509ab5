#!/usr/bin/env python3
"""IREE (iree-compile 3.13.0, llvm-cpu): a while loop carrying a
loop-invariant tensor fails to compile with an error on IREE's own
scf.while. Standalone: needs only iree-base-compiler (pip).
docs/FINDINGS.md, I8.
  python3 iree_while_invariant.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %cst = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0 = stablehlo.broadcast_in_dim %cst, dims = [] : (tensor<f32>) -> tensor<4xf32>
  %1:3 = stablehlo.while(%i = %c, %x = %arg0, %y = %0) : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  cond {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.compare GT, %one, %i : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %2 : tensor<i1>
  } do {
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %i, %one : tensor<i32>
    %3 = stablehlo.negate %x : tensor<4xf32>
    stablehlo.return %2, %x, %3 : tensor<i32>, tensor<4xf32>, tensor<4xf32>
  }
  return %1#2 : tensor<4xf32>
}
"""
try:
    ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo")
    print("compiled (fixed)")
except ic.CompilerToolError as e:
    print("FAILS TO COMPILE:", "\n".join(l for l in str(e).splitlines() if "error:" in l))
