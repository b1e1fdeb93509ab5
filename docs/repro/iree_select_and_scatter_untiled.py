#!/usr/bin/env python3
"""IREE CPU (llvm-cpu): a select_and_scatter (window 2, stride 2) fails
to compile on tensor<1xi32> (no window fits; the source is
tensor<0xi32>): "'linalg.generic' op unexpected result less than 0 at
expression #0 in (d0, d1) -> (d0 * 2 + d1)", and on tensor<3xi32> (one
window, one element left over): "'linalg.generic' op inferred
input/output operand #1 has shape's dimension #0 to be 3, but found 2";
on 2, 4 and 5 elements it compiles. XLA runs all five.
Standalone: needs only iree-base-compiler (pip). docs/FINDINGS.md, I26.
  python3 iree_select_and_scatter_untiled.py
"""
import iree.compiler as ic

MLIR = """
func.func @main(%p: tensor<Nxi32>, %s: tensor<Mxi32>) -> tensor<Nxi32> {
  %c = stablehlo.constant dense<-4> : tensor<i32>
  %0 = "stablehlo.select_and_scatter"(%p, %s, %c) <{padding = dense<0> : tensor<1x2xi64>,
      window_dimensions = array<i64: 2>, window_strides = array<i64: 2>}> ({
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.compare GE, %a, %b : (tensor<i32>, tensor<i32>) -> tensor<i1>
    stablehlo.return %1 : tensor<i1>
  }, {
  ^bb0(%a: tensor<i32>, %b: tensor<i32>):
    %1 = stablehlo.add %a, %b : tensor<i32>
    stablehlo.return %1 : tensor<i32>
  }) : (tensor<Nxi32>, tensor<Mxi32>, tensor<i32>) -> tensor<Nxi32>
  return %0 : tensor<Nxi32>
}
"""
for n in (1, 2, 3, 4, 5):
    m = (n - 2) // 2 + 1 if n >= 2 else 0
    try:
        ic.compile_str(MLIR.replace("N", str(n)).replace("M", str(m)), target_backends=["llvm-cpu"],
                       input_type="stablehlo", extra_args=["--iree-llvmcpu-target-cpu=host",
                                   "--iree-global-opt-enable-warn-on-uninitialized-values=false"])
        print("operand %d, %d windows: compiles" % (n, m))
    except ic.CompilerToolError as e:
        err = [l for l in str(e).splitlines() if "error:" in l]
        print("operand %d, %d windows: FAILS: %s" % (n, m, err[0].strip() if err else e))
