#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): chlo.top_k on integers breaks ties against the
lower index (CHLO: "If two elements are equal, the lower-index element
appears first") and compares unsigned keys as signed. Standalone: needs
only iree-base-compiler and iree-base-runtime (pip), numpy.
docs/FINDINGS.md, I22.
  python3 iree_topk_integer.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt


def top4(t, x):
    mlir = """
func.func @main(%x: tensor<8xT>) -> (tensor<4xT>, tensor<4xi32>) {
  %v, %i = chlo.top_k(%x, k = 4) : tensor<8xT> -> (tensor<4xT>, tensor<4xi32>)
  return %v, %i : tensor<4xT>, tensor<4xi32>
}""".replace("T", t)
    vmfb = ic.compile_str(mlir, target_backends=["llvm-cpu"], input_type="stablehlo",
                          extra_args=["--iree-llvmcpu-target-cpu=host"])
    ctx = rt.SystemContext(config=rt.Config("local-task"))
    ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
    v, i = ctx.modules.module["main"](x)
    return v.to_host(), i.to_host()


for t, x in (("i32", np.array([3, 7, 3, 1, 7, 0, 3, 2], np.int32)),
             ("ui16", np.array([3, 40000, 3, 1, 65535, 0, 3, 2], np.uint16))):
    v, i = top4(t, x)
    want = np.argsort(-x.astype(np.int64), kind="stable")[:4]  # ties: lower index first
    print("%-4s %s: values %s indices %s, expected values %s indices %s %s" % (
        t, x.tolist(), v.tolist(), i.tolist(), x[want].tolist(), want.tolist(),
        "" if np.array_equal(i, want) else "WRONG"))
