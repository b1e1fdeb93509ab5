#!/usr/bin/env python3
"""stablehlo.py - the HLO -> StableHLO step of the IREE adapter, run by the
XLA virtualenv's python (.venv, scripts/venv.sh) because the converter is
XLA's own (jaxlib). IREE's packages carry no HLO importer.

The conversion is exactly the XLA adapter's (adapters/xla/adapter.py,
to_mlir: XLA's HLO parser -> HloModuleProto -> hlo_to_stablehlo), imported
from there so both targets start from the same StableHLO. It also gives
the way back: XLA's conversion of that StableHLO to HLO text, which the
IREE adapter returns as the module IREE received, so trench can compare it
with the module it sent and say when the trip changed something.

A child of adapters/iree/adapter.py; one JSON request per line on stdin,
one reply per line on stdout:
  {"module": PATH, "outdir": DIR, "want_hlo": BOOL}
  {"status": "ok", "mlir": PATH, "hlo": PATH or null,
   "params": [[DTYPE, [DIMS]], ...], "results": [[DTYPE, [DIMS]], ...]}
  {"status": "unsupported", "message": WHY}
DTYPE is HLO's name of the element type (f32, bf16, pred, s4, ...); params
and results are the array leaves of the entry's parameters and root,
depth-first, which is also the order of the StableHLO function's arguments
and results.
"""
import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "xla"))
import adapter as xla  # noqa: E402  (takes stdout for replies, as here)

from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402
from jax._src.lib.mlir.dialects import chlo  # noqa: E402


def leaf(shape):
    """[HLO type name, dims]: the name as XLA prints the shape, f32[4,6]{1,0}."""
    return [str(shape).split("[", 1)[0], list(shape.dimensions())]


# XLA's converter keeps the HLO ops StableHLO lacks as mhlo ops, which
# IREE's StableHLO input does not read ("Dialect `mhlo' not found"). Those
# with an exact StableHLO-side form are rewritten to it: copy and
# add-dependency are identities on their (first) operand in HLO (a layout
# copy; a value passed on after a token), erf is CHLO's erf (the op jax
# itself emits for erf), a top-k of the largest integers is CHLO's top_k
# (the k largest, ties by lower index first, as HLO's stable sort gives).
# The rest stay, and IREE refuses them: the collectives, and a float
# top-k, whose CHLO form compares with ">" where HLO's orders by
# TOTALORDER (-0 below +0, NaN placed), so it is not the same op. One
# StableHLO op is rewritten too: a dynamic_slice of a rank-0
# tensor (no start indices) is its operand, and StableHLO's printer writes
# it as text no parser reads ("%x, , sizes = []": XLA's own parser and
# IREE's reject it). The module returned as "received" is converted back
# from the rewritten text, so the comparison with the sent module sees the
# rewrite.
IDENTITY = ("mhlo.copy", "mhlo.add_dependency")


def scalar_dynamic_slice(op):
    return op.name == "stablehlo.dynamic_slice" and len(op.operands) == 1


def integer_topk(op):
    """An mhlo.topk of the largest elements of an integer tensor."""
    if op.name != "mhlo.topk":
        return False
    attrs = op.attributes
    if "largest" in attrs and not ir.BoolAttr(attrs["largest"]).value:
        return False
    try:  # the cast raises unless the element type is an integer
        ir.IntegerType(ir.RankedTensorType(op.operands[0].type).element_type)
    except ValueError:
        return False
    return True


def lower_mhlo(mod):
    found = []

    def visit(op):
        if op.name in IDENTITY or op.name == "mhlo.erf" or scalar_dynamic_slice(op) or \
                integer_topk(op):
            found.append(op)
        return ir.WalkResult.ADVANCE

    mod.operation.walk(visit)
    for op in found:
        if op.name in IDENTITY or scalar_dynamic_slice(op):
            op.results[0].replace_all_uses_with(op.operands[0])
        elif op.name == "mhlo.erf":
            with ir.InsertionPoint(op), op.location:
                new = chlo.ErfOp(op.operands[0])
            op.results[0].replace_all_uses_with(new.result)
        else:  # an integer mhlo.topk
            with ir.InsertionPoint(op), op.location:
                new = chlo.TopKOp(op.operands[0], ir.IntegerAttr(op.attributes["k"]).value)
            op.results[0].replace_all_uses_with(new.values)
            op.results[1].replace_all_uses_with(new.indices)
        op.erase()


def mlir_text(mlir):
    """hlo_to_stablehlo gives MLIR bytecode; IREE is handed text, which
    does not tie it to the bytecode version of jaxlib's MLIR."""
    with jax_mlir.make_ir_context():
        mod = ir.Module.parse(mlir)
        lower_mhlo(mod)
        text = mod.operation.get_asm(enable_debug_info=False)
        try:
            ir.Module.parse(text)
        except Exception as e:
            # The printer wrote what no parser reads: a converter bug, and
            # IREE would only echo the parse error as a compile failure.
            raise xla.Refusal("unsupported", "XLA's StableHLO printer wrote text that its "
                              "own parser rejects: %s" % str(e).strip().splitlines()[0][:300])
        return text


def convert(req):
    with open(req["module"]) as f:
        text = f.read()
    mlir, pshape = xla.to_mlir(text)
    mlir = mlir_text(mlir)
    params = []
    for s in pshape.parameter_shapes():
        params += xla.leaves(s)
    results = xla.leaves(pshape.result_shape())
    p = os.path.join(req["outdir"], "module.mlir")
    with open(p, "w") as f:
        f.write(mlir)
    rep = {"status": "ok", "mlir": p, "hlo": None,
           "params": [leaf(s) for s in params],
           "results": [leaf(s) for s in results]}
    if req.get("want_hlo"):
        comp = xla.mlir_to_hlo(mlir)
        po = xla.HLO.HloPrintOptions()
        po.print_large_constants = True
        mod = xla.HLO.hlo_module_from_text(comp.as_hlo_text())
        h = os.path.join(req["outdir"], "received.hlo")
        with open(h, "w") as f:
            f.write(mod.to_string(po))
        rep["hlo"] = h
    return rep


def main():
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        try:
            rep = convert(req)
        except xla.Refusal as e:
            rep = {"status": e.status, "message": str(e)}
        except Exception as e:  # a converter bug: say so, keep serving
            rep = {"status": "error", "message": "stablehlo.py: %s: %s" % (type(e).__name__, e)}
        xla._PROTO.write(json.dumps(rep) + "\n")
        xla._PROTO.flush()


if __name__ == "__main__":
    main()
