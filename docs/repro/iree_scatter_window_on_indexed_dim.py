#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a scatter whose update window spans the indexed
dimension (a window of 2 elements added into tensor<8xf32> at one start
index, no inserted window dims) fails to compile: "'iree_linalg_ext.scatter'
op mismatch in shape of indices and update value at dim#1". XLA compiles
and runs it (x[i:i+2] += u). Standalone: needs only iree-base-compiler
(pip). docs/FINDINGS.md, I23.
  python3 iree_scatter_window_on_indexed_dim.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%p: tensor<8xf32>, %i: tensor<1xi32>, %u: tensor<2xf32>) -> tensor<8xf32> {
  %0 = "stablehlo.scatter"(%p, %i, %u) <{indices_are_sorted = false,
      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0],
        scatter_dims_to_operand_dims = [0]>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<8xf32>, tensor<1xi32>, tensor<2xf32>) -> tensor<8xf32>
  return %0 : tensor<8xf32>
}
"""
try:
    ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                   extra_args=["--iree-llvmcpu-target-cpu=host"])
    print("compiles")
except ic.CompilerToolError as e:
    err = [l for l in str(e).splitlines() if "error:" in l]
    print("FAILS: %s" % (err[0].strip() if err else e))
