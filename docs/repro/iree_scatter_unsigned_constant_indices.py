#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a scatter whose indices are a constant of an
unsigned type fails to compile ("'arith.constant' op integer return type
must be signless"); the same constant as si32, or ui32 indices passed as
an argument, compile and run. Standalone: needs only iree-base-compiler
and iree-base-runtime (pip), numpy. docs/FINDINGS.md, I20.
  python3 iree_scatter_unsigned_constant_indices.py
"""
import iree.compiler as ic

TEMPLATE = """
func.func @main(%p: tensor<4xf32>, %u: tensor<1xf32>) -> tensor<4xf32> {
  %c = stablehlo.constant dense<2> : tensor<1xIDX>
  %0 = "stablehlo.scatter"(%p, %c, %u) <{indices_are_sorted = false,
      scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [0],
      scatter_dims_to_operand_dims = [0]>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (tensor<4xf32>, tensor<1xIDX>, tensor<1xf32>) -> tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""
for t in ("i32", "ui32"):
    try:
        ic.compile_str(TEMPLATE.replace("IDX", t), target_backends=["llvm-cpu"], input_type="stablehlo",
                       extra_args=["--iree-llvmcpu-target-cpu=host"])
        print("indices %-4s: compiles" % t)
    except ic.CompilerToolError as e:
        err = [l for l in str(e).splitlines() if "error:" in l]
        print("indices %-4s: FAILS: %s" % (t, err[0].strip() if err else e))
