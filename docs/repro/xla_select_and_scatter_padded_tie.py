#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a select-and-scatter with a padding attribute
and a GE select breaks ties toward the later element of the window. XLA's
semantics call select(a, b) with a's index lexicographically before b's,
so GE picks the first of equal maxima; with `padding` on any dimension
XLA CPU picks a later one. Operand [[0, 1], [1, 0]], window 2x2, padding
0_0x0_1, source [1, 2]: both windows' first maximum is [0, 1], so the
result is [[0, 3], [0, 0]]; XLA gives [[0, 2], [1, 0]]. The same windows
without the padding attribute (the operand padded by a pad op instead,
which is what jax's own lowering does) are right.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 45.
  python3 xla_select_and_scatter_padded_tie.py
"""
import numpy as np
import jax
from jax._src.lib import xla_client as xc

TEXT = """
func.func public @main(%op: tensor<2x2xf32>, %src: tensor<1x2xf32>) -> tensor<2x2xf32> {
  %init = stablehlo.constant dense<0.0> : tensor<f32>
  %r = "stablehlo.select_and_scatter"(%op, %src, %init) <{PADDING
      window_dimensions = array<i64: 2, 2>, window_strides = array<i64: 1, 1>}> ({
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %c = stablehlo.compare GE, %a, %b, FLOAT : (tensor<f32>, tensor<f32>) -> tensor<i1>
    stablehlo.return %c : tensor<i1>
  }, {
  ^bb0(%a: tensor<f32>, %b: tensor<f32>):
    %s = stablehlo.add %a, %b : tensor<f32>
    stablehlo.return %s : tensor<f32>
  }) : (OPT, tensor<1x2xf32>, tensor<f32>) -> OPT
  RESULT
}
"""
padded_attr = TEXT.replace("PADDING", "padding = dense<[[0, 0], [0, 1]]> : tensor<2x2xi64>,").replace(
    "OPT", "tensor<2x2xf32>").replace("RESULT", "return %r : tensor<2x2xf32>")
# The same windows, the column of padding written as a -inf column.
padded_op = TEXT.replace("PADDING", "").replace("OPT", "tensor<2x3xf32>").replace("(%op, %src", "(%p, %src").replace(
    "%init = ", "%ninf = stablehlo.constant dense<0xFF800000> : tensor<f32>\n"
    "  %p = stablehlo.pad %op, %ninf, low = [0, 0], high = [0, 1], interior = [0, 0]"
    " : (tensor<2x2xf32>, tensor<f32>) -> tensor<2x3xf32>\n  %init = ").replace(
    "RESULT", "%q = stablehlo.slice %r [0:2, 0:2] : (tensor<2x3xf32>) -> tensor<2x2xf32>\n"
    "  return %q : tensor<2x2xf32>")

dev = jax.devices("cpu")[0]
op = np.array([[0, 1], [1, 0]], np.float32)
src = np.array([[1, 2]], np.float32)


def run(text):
    c = dev.client
    exe = c.compile_and_load(text, [dev], xc.CompileOptions()) if hasattr(c, "compile_and_load") \
        else c.compile(text, compile_options=xc.CompileOptions())
    args = [jax.device_put(op, dev), jax.device_put(src, dev)]
    return np.asarray(exe.execute(args)[0]).tolist()


print("jax", jax.__version__)
print("padding attribute:", run(padded_attr), "expected [[0.0, 3.0], [0.0, 0.0]]")
print("pad op instead   :", run(padded_op))
