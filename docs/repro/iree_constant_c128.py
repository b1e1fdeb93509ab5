#!/usr/bin/env python3
"""IREE (iree-compile, llvm-cpu): a complex<f64> constant that the
program returns crashes iree-compile (SIGSEGV in
IREE::Util::SizedStorageDenseElementsAttrModel::getStorageSize); a splat
one fails with "'stream.async.splat' op operand #0 must be ... signless
integer, but got 'i128'". complex<f32> compiles. (f64 kept f64:
--iree-input-demote-f64-to-f32=false, as trench's adapter compiles.) Standalone: needs only
iree-base-compiler (pip). docs/FINDINGS.md, I25.
  python3 iree_constant_c128.py
"""
import os
import subprocess
import sys
import tempfile

import iree.compiler.tools as tools

MLIR = """
func.func @main() -> tensor<2xcomplex<T>> {
  %c = stablehlo.constant dense<VALUES> : tensor<2xcomplex<T>>
  return %c : tensor<2xcomplex<T>>
}
"""
exe = os.path.join(os.path.dirname(tools.__file__), "..", "_mlir_libs", "iree-compile")
if not os.path.exists(exe):
    exe = os.path.join(os.path.dirname(sys.executable), "iree-compile")
for t, values in (("f64", "[(1.5,2.0), (-3.0,0.25)]"), ("f64", "(1.5,2.0)"),
                  ("f32", "[(1.5,2.0), (-3.0,0.25)]")):
    with tempfile.NamedTemporaryFile("w", suffix=".mlir", delete=False) as f:
        f.write(MLIR.replace("T", t).replace("VALUES", values))
    p = subprocess.run([exe, "--iree-hal-target-backends=llvm-cpu", "--iree-input-type=stablehlo",
                        "--iree-input-demote-f64-to-f32=false", f.name, "-o", os.devnull],
                       capture_output=True, text=True)
    crashed = p.returncode < 0 or "Stack dump" in p.stderr
    err = [l.strip() for l in p.stderr.splitlines() if "error:" in l]
    print("complex<%s> %-26s exit %d%s" % (t, values, p.returncode,
          " CRASHED" if crashed else (": " + err[0][:160] if err else ": compiles")))
