#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a sort of (i1, broadcast i32) whose
comparator returns its first block argument as is crashes iree-compile
(SIGSEGV in isIotaOrIotaBroadcast, StableHLOToStableHLO.cpp). Such a
comparator is no strict weak order (the order is unspecified), but the
compiler should not crash.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I30.
  python3 iree_sort_comparator_parameter.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main(%arg0: tensor<4xi1>, %arg1: tensor<i32>) -> (tensor<4xi1>, tensor<4xi32>) {
  %0 = stablehlo.broadcast_in_dim %arg1, dims = [] : (tensor<i32>) -> tensor<4xi32>
  %1:2 = "stablehlo.sort"(%arg0, %0) <{dimension = 0 : i64, is_stable = true}> ({
  ^bb0(%a: tensor<i1>, %b: tensor<i1>, %c: tensor<i32>, %d: tensor<i32>):
    stablehlo.return %a : tensor<i1>
  }) : (tensor<4xi1>, tensor<4xi32>) -> (tensor<4xi1>, tensor<4xi32>)
  return %1#0, %1#1 : tensor<4xi1>, tensor<4xi32>
}
"""
with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
    f.write(MLIR)
exe = os.path.join(os.path.dirname(tools.__file__), "..", "_mlir_libs", "iree-compile")
if not os.path.exists(exe):
    exe = os.path.join(os.path.dirname(sys.executable), "iree-compile")
p = subprocess.run([exe, "--iree-hal-target-backends=llvm-cpu", "--iree-input-type=stablehlo",
                    "--iree-llvmcpu-target-cpu=host", f.name, "-o", os.devnull],
                   capture_output=True, text=True)
err = [l.strip() for l in p.stderr.splitlines() if "error:" in l]
if p.returncode < 0 or "Stack dump" in p.stderr:
    print("iree-compile CRASHED (exit %d)" % p.returncode)
elif p.returncode:
    print("FAILS: %s" % (err[0] if err else p.stderr[-300:]))
else:
    print("compiles")
