#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): stablehlo.sort with is_stable = true reorders
values of equal keys. Standalone: needs only iree-base-compiler and
iree-base-runtime (pip), numpy. docs/FINDINGS.md, I10.
  python3 iree_sort_stable.py
"""
import numpy as np
import iree.compiler as ic
import iree.runtime as rt

MLIR = """
func.func @main(%k: tensor<16xi8>, %v: tensor<16xf32>) -> (tensor<16xi8>, tensor<16xf32>) {
  %0:2 = "stablehlo.sort"(%k, %v) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i8>, %b: tensor<i8>, %c: tensor<f32>, %d: tensor<f32>):
    %1 = stablehlo.compare GT, %a, %b : (tensor<i8>, tensor<i8>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }) : (tensor<16xi8>, tensor<16xf32>) -> (tensor<16xi8>, tensor<16xf32>)
  return %0#0, %0#1 : tensor<16xi8>, tensor<16xf32>
}
"""
vmfb = ic.compile_str(MLIR, target_backends=["llvm-cpu"], input_type="stablehlo",
                      extra_args=["--iree-llvmcpu-target-cpu=host"])
ctx = rt.SystemContext(config=rt.Config("local-task"))
ctx.add_vm_module(rt.VmModule.copy_buffer(ctx.instance, vmfb))
k = np.array([1, 0] * 8, np.int8)
v = np.arange(16, dtype=np.float32)
_, got = (a.to_host() for a in ctx.modules.module["main"](k, v))
want = v[np.argsort(-k.astype(int), kind="stable")]
print("got     ", got.astype(int).tolist())
print("expected", want.astype(int).tolist(), "" if (got == want).all() else "WRONG (not stable)")
