#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a value that a scatter updates and another op
reads is read after the scatter updated it in place. d = x + x, s =
scatter(d, [0], u) with multiply, n = -d; with the results (n, s, -u), n
comes back as -(2x * u) (x = 3, u = 10: -60 instead of -6). With the
results (n, s) alone it is -6. A silent wrong result. Standalone: needs
only iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I35.
  python3 iree_scatter_clobbers_operand.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%x: tensor<1xf32>, %u: tensor<1xf32>) -> (RESULT_TYPES) {
  %d = stablehlo.add %x, %x : tensor<1xf32>
  %n = stablehlo.negate %d : tensor<1xf32>
  %i = stablehlo.constant dense<0> : tensor<1x1xi32>
  %s = "stablehlo.scatter"(%d, %i, %u) <{indices_are_sorted = false,
      scatter_dimension_numbers = #stablehlo.scatter<inserted_window_dims = [0],
        scatter_dims_to_operand_dims = [0], index_vector_dim = 1>, unique_indices = false}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %m = stablehlo.multiply %a, %b : tensor<f32>
    stablehlo.return %m : tensor<f32>
  }) : (tensor<1xf32>, tensor<1x1xi32>, tensor<1xf32>) -> tensor<1xf32>
  %c = stablehlo.negate %u : tensor<1xf32>
  return RESULTS
}
"""
x = np.array([3.0], np.float32)
u = np.array([10.0], np.float32)
for results in (["%n", "%s", "%c"], ["%n", "%s"]):
    text = MLIR.replace("RESULT_TYPES", ", ".join(["tensor<1xf32>"] * len(results)))
    text = text.replace("RESULTS", ", ".join(results) + " : " + ", ".join(["tensor<1xf32>"] * len(results)))
    vmfb = ic.compile_str(text, target_backends=["llvm-cpu"], input_type="stablehlo",
                          extra_args=["--iree-llvmcpu-target-cpu=host"])
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    out = ctx.modules.module["main"](x, u)
    n = float(np.asarray(out[0])[0])
    print("results (%s): n = %g, expected %g %s" % (", ".join(results), n, -2 * x[0],
                                                    "" if n == -2 * x[0] else "WRONG"))
