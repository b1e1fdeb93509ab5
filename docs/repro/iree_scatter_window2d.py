#!/usr/bin/env python3
"""IREE (iree-compile 3.13.0, llvm-cpu): a valid StableHLO scatter of 2-d
windows without inserted window dims fails to compile with an error on
IREE's own iree_linalg_ext.scatter. Standalone: needs only
iree-base-compiler (pip). docs/FINDINGS.md, I6.
  python3 iree_scatter_window2d.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%p: tensor<5x6xf32>, %i: tensor<3x2xi32>, %u: tensor<3x2x2xf32>) -> tensor<5x6xf32> {
  %0 = "stablehlo.scatter"(%p, %i, %u) <{indices_are_sorted = false,
      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1, 2],
        scatter_dims_to_operand_dims = [0, 1], index_vector_dim = 1>,
      unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %1 = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %1 : tensor<f32>
  }) : (tensor<5x6xf32>, tensor<3x2xi32>, tensor<3x2x2xf32>) -> tensor<5x6xf32>
  return %0 : tensor<5x6xf32>
}
"""
try:
    ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo")
    print("compiled (fixed)")
except ic.CompilerToolError as e:
    print("FAILS TO COMPILE:", "\n".join(l for l in str(e).splitlines() if "error:" in l))
