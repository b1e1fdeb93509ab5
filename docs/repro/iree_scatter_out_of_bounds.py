#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a scatter whose constant indices fall outside the
operand (-1 and 6 on a dimension of 6) crashes the runtime process
(SIGSEGV) instead of skipping those updates (XLA) or giving some
implementation-defined result (StableHLO). The run happens in a child
process so the crash is reported. Standalone: needs only
iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I13.
  python3 iree_scatter_out_of_bounds.py
"""
import subprocess
import sys

import numpy as np

MLIR = """
func.func @main(%p: tensor<6x4xf32>, %u: tensor<4x4xf32>) -> tensor<6x4xf32> {
  %i = stablehlo.constant dense<[[-1], [5], [6], [3]]> : tensor<4x1xi32>
  %r = "stablehlo.scatter"(%p, %i, %u) ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) {scatter_dimension_numbers = #stablehlo.scatter<update_window_dims = [1],
      inserted_window_dims = [0], scatter_dims_to_operand_dims = [0],
      index_vector_dim = 1>} : (tensor<6x4xf32>, tensor<4x1xi32>, tensor<4x4xf32>) -> tensor<6x4xf32>
  return %r : tensor<6x4xf32>
}
"""

if len(sys.argv) > 1 and sys.argv[1] == "--child":
    import iree.compiler as ic
    import iree.runtime as rt
    vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                          extra_args=["--iree-llvmcpu-target-cpu=host"])
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    p = np.zeros((6, 4), np.float32)
    u = np.ones((4, 4), np.float32)
    print(ctx.modules.module["main"](p, u).to_host())
    sys.exit(0)

r = subprocess.run([sys.executable, __file__, "--child"], capture_output=True, text=True)
print(r.stdout, r.stderr[-500:])
if r.returncode < 0:
    print("WRONG: the run died of signal %d (expected rows 5 and 3 to be 1, the rest 0)" % -r.returncode)
else:
    print("exit status", r.returncode)
