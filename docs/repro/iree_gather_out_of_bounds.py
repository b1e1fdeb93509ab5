#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a gather whose start indices are out of bounds
reads outside the operand instead of clamping them into it, as StableHLO
(and XLA) define: index 12 of a 10-row operand must give row 9 (the last
start that fits the slice), -1 and -100 row 0. Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy. docs/FINDINGS.md,
I19.
  python3 iree_gather_out_of_bounds.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%p: tensor<10x4xf32>, %i: tensor<4x1xi32>) -> tensor<4x4xf32> {
  %0 = "stablehlo.gather"(%p, %i) <{dimension_numbers = #stablehlo.gather<offset_dims = [1],
      collapsed_slice_dims = [0], start_index_map = [0], index_vector_dim = 1>,
      indices_are_sorted = false, slice_sizes = array<i64: 1, 4>}>
      : (tensor<10x4xf32>, tensor<4x1xi32>) -> tensor<4x4xf32>
  return %0 : tensor<4x4xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
p = np.arange(40, dtype=np.float32).reshape(10, 4)
idx = np.array([[-1], [12], [3], [-100]], np.int32)
got = ctx.modules.module["main"](p, idx).to_host()
for (i,), row in zip(idx, got):
    want = p[min(max(i, 0), 10 - 1)]
    print("start %4d: %s expected %s %s" % (i, row.tolist(), want.tolist(),
          "" if np.array_equal(row, want) else "WRONG"))
