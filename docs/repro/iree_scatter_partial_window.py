#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a scatter whose update window is narrower than
the operand in a dimension that is not indexed (rows of tensor<2x4xf32>
indexed, each update 2 of the 4 columns) fails to compile:
"'iree_linalg_ext.scatter' op shape of update value dim#1 must match
original value at dim#1". With windows of all 4 columns it compiles. XLA
compiles and runs both. Standalone: needs only iree-base-compiler (pip).
docs/FINDINGS.md, I24.
  python3 iree_scatter_partial_window.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%p: tensor<2x4xf32>, %i: tensor<3x1xi32>, %u: tensor<3xWxf32>) -> tensor<2x4xf32> {
  %0 = "stablehlo.scatter"(%p, %i, %u) <{indices_are_sorted = false,
      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
        inserted_window_dims = [0], scatter_dims_to_operand_dims = [0], index_vector_dim = 1>,
      unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<2x4xf32>, tensor<3x1xi32>, tensor<3xWxf32>) -> tensor<2x4xf32>
  return %0 : tensor<2x4xf32>
}
"""
for w in (4, 2):
    try:
        ic.compile_str(MLIR.replace("W", str(w)), target_backends=["llvm-cpu"], input_type="stablehlo",
                       extra_args=["--iree-llvmcpu-target-cpu=host"])
        print("windows of %d columns: compiles" % w)
    except ic.CompilerToolError as e:
        err = [l for l in str(e).splitlines() if "error:" in l]
        print("windows of %d columns: FAILS: %s" % (w, err[0].strip() if err else e))
