#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a while loop that carries the previous
iteration's value of another carried value ((a, k, prev) -> (-a, k + 1,
a)) crashes iree-compile: an abort or a SIGSEGV in memcpy, varying from
run to run. XLA compiles and runs it.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I36.
  python3 iree_while_previous_value.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main(%x: tensor<f32>) -> tensor<f32> {
  %c = stablehlo.constant dense<0> : tensor<i32>
  %z = stablehlo.constant dense<0.000000e+00> : tensor<f32>
  %0:3 = stablehlo.while(%a = %x, %k = %c, %prev = %z) : tensor<f32>, tensor<i32>, tensor<f32>
  cond {
    %1 = stablehlo.compare LE, %k, %c : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  } do {
    %1 = stablehlo.negate %a : tensor<f32>
    %one = stablehlo.constant dense<1> : tensor<i32>
    %2 = stablehlo.add %k, %one : tensor<i32>
    stablehlo.return %1, %2, %a : tensor<f32>, tensor<i32>, tensor<f32>
  }
  return %0#2 : tensor<f32>
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
