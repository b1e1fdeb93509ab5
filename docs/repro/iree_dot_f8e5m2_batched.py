#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a batched f8E5M2 dot_general (65 batches
of an 8-element inner product) fails to compile: "'vector.mask' op
expects only one operation to mask". XLA compiles and runs it.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I32.
  python3 iree_dot_f8e5m2_batched.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main(%a: tensor<65x8xf8E5M2>, %b: tensor<8x65xf8E5M2>) -> tensor<65xf8E5M2> {
  %0 = stablehlo.dot_general %a, %b, batching_dims = [0] x [1], contracting_dims = [1] x [0] : (tensor<65x8xf8E5M2>, tensor<8x65xf8E5M2>) -> tensor<65xf8E5M2>
  return %0 : tensor<65xf8E5M2>
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
