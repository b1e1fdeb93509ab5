#!/usr/bin/env python3
"""gen.py - writes the XLA CPU acceptance suite (tests/xla-suite/*.hlo).

Small modules, one op (or one op's few attribute variants) per module, for
every opcode the reference evaluates and every core dtype the op accepts:
pred, s4, s8..s64, u4, u8..u64, f16, bf16, f32, f64, f8e4m3fn, f8e5m2.
tests/adapters/xla_suite.sh checks each with `trench check --target
xla-cpu`. The generated files are committed; rerun after editing:

    python3 tests/xla-suite/gen.py          # rewrites tests/xla-suite/*.hlo

Naming: OP[_VARIANT]_DTYPE.hlo. Shapes are small (tens of elements) so
that a module compiles and runs in milliseconds.
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

SINT = ["s8", "s16", "s32", "s64"]
UINT = ["u8", "u16", "u32", "u64"]
INT = SINT + UINT
NARROW_INT = ["s4", "u4"]
FLOAT = ["f16", "bf16", "f32", "f64"]
F8 = ["f8e4m3fn", "f8e5m2"]
ALLF = FLOAT + F8
NUM = INT + NARROW_INT + ALLF
ALL = ["pred"] + NUM

MODULES = {}


def add(name, body, comps="", params=None):
    """body: ENTRY lines (without the braces); comps: text before ENTRY."""
    name = name.replace(".", "_")
    if name in MODULES:
        raise SystemExit("duplicate module " + name)
    text = "HloModule %s\n\n%sENTRY main {\n%s}\n" % (name, comps, "".join("  " + l + "\n" for l in body))
    MODULES[name] = text


def binop_comp(name, op, t):
    return ("%s {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = %s[] %s(a, b)\n}\n\n"
            % (name, t, t, t, op))


S = "[4,6]"

# ---- element-wise unary ----
UN_FLOAT = ["floor", "ceil", "round-nearest-afz", "round-nearest-even", "exponential",
            "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt", "tanh",
            "logistic", "sine", "cosine", "tan", "erf"]
for op in UN_FLOAT:
    for t in ALLF:
        add("%s_%s" % (op, t), ["p = %s%s parameter(0)" % (t, S), "ROOT r = %s%s %s(p)" % (t, S, op)])
for t in ALLF:
    add("is-finite_%s" % t, ["p = %s%s parameter(0)" % (t, S), "ROOT r = pred%s is-finite(p)" % S])
for op in ["abs", "negate", "sign"]:
    for t in SINT + ["s4"] + ALLF + (UINT + ["u4"] if op == "negate" else []):
        add("%s_%s" % (op, t), ["p = %s%s parameter(0)" % (t, S), "ROOT r = %s%s %s(p)" % (t, S, op)])
for t in ["pred"] + INT + NARROW_INT:
    add("not_%s" % t, ["p = %s%s parameter(0)" % (t, S), "ROOT r = %s%s not(p)" % (t, S)])
for op in ["popcnt", "count-leading-zeros"]:
    for t in INT + NARROW_INT:
        add("%s_%s" % (op, t), ["p = %s%s parameter(0)" % (t, S), "ROOT r = %s%s %s(p)" % (t, S, op)])

# ---- element-wise binary ----
BIN = {
    "add": ["pred"] + NUM, "subtract": NUM, "multiply": ["pred"] + NUM, "divide": NUM,
    "remainder": NUM, "power": NUM, "maximum": ALL, "minimum": ALL, "atan2": ALLF,
    "and": ["pred"] + INT + NARROW_INT, "or": ["pred"] + INT + NARROW_INT,
    "xor": ["pred"] + INT + NARROW_INT, "shift-left": INT + NARROW_INT,
    "shift-right-arithmetic": INT + NARROW_INT, "shift-right-logical": INT + NARROW_INT,
}
for op, ts in BIN.items():
    for t in ts:
        add("%s_%s" % (op, t), ["p = %s%s parameter(0)" % (t, S), "q = %s%s parameter(1)" % (t, S),
                                "ROOT r = %s%s %s(p, q)" % (t, S, op)])
# Shifts by every amount 0..width+1 and a negative one, as constants in
# the module (random shift amounts are mostly out of range).
for t in INT:
    w = int(t[1:])
    amts = list(range(0, w + 2)) + [-1]
    n = len(amts)
    c = "{%s}" % ", ".join(str(a if t[0] == "s" else a % (1 << w)) for a in amts)
    for op in ["shift-left", "shift-right-arithmetic", "shift-right-logical"]:
        add("%s_amounts_%s" % (op, t), [
            "p = %s[%d] parameter(0)" % (t, n), "c = %s[%d] constant(%s)" % (t, n, c),
            "ROOT r = %s[%d] %s(p, c)" % (t, n, op)])
# Integer divide/remainder by zero and MIN / -1, through parameters and
# through constants (the constant folder's semantics).
for t in SINT:
    w = int(t[1:])
    mn = -(1 << (w - 1))
    vals = "{%d, 7, -7, 0, %d, %d}" % (mn, mn, 5)
    dens = "{-1, 0, 0, 0, 1, -1}"
    for op in ["divide", "remainder"]:
        add("%s_edges_%s" % (op, t), [
            "p = %s[6] parameter(0)" % t, "a = %s[6] constant(%s)" % (t, vals),
            "b = %s[6] constant(%s)" % (t, dens), "x = %s[6] %s(a, b)" % (t, op),
            "y = %s[6] %s(p, b)" % (t, op), "ROOT r = (%s[6], %s[6]) tuple(x, y)" % (t, t)])
# compare: the six directions in one module, and TOTALORDER for floats;
# q takes p's value where s is true, so about half the pairs are equal.
for t in ALL:
    dirs = ["EQ", "NE", "LT", "LE", "GT", "GE"]
    body = ["p = %s%s parameter(0)" % (t, S), "q0 = %s%s parameter(1)" % (t, S),
            "s = pred%s parameter(2)" % S, "q = %s%s select(s, p, q0)" % (t, S)]
    for d in dirs:
        body.append("c%s = pred%s compare(p, q), direction=%s" % (d, S, d))
    body.append("ROOT r = (%s) tuple(%s)" % (", ".join(["pred" + S] * 6), ", ".join("c" + d for d in dirs)))
    add("compare_%s" % t, body)
for t in ALLF:
    dirs = ["EQ", "NE", "LT", "LE", "GT", "GE"]
    body = ["p = %s%s parameter(0)" % (t, S), "q0 = %s%s parameter(1)" % (t, S),
            "s = pred%s parameter(2)" % S, "q = %s%s select(s, p, q0)" % (t, S)]
    for d in dirs:
        body.append("c%s = pred%s compare(p, q), direction=%s, type=TOTALORDER" % (d, S, d))
    body.append("ROOT r = (%s) tuple(%s)" % (", ".join(["pred" + S] * 6), ", ".join("c" + d for d in dirs)))
    add("compare_totalorder_%s" % t, body)
for t in ALL:
    add("select_%s" % t, ["s = pred%s parameter(0)" % S, "p = %s%s parameter(1)" % (t, S),
                          "q = %s%s parameter(2)" % (t, S), "ROOT r = %s%s select(s, p, q)" % (t, S)])
for t in NUM:
    add("clamp_%s" % t, ["lo = %s%s parameter(0)" % (t, S), "p = %s%s parameter(1)" % (t, S),
                         "hi = %s%s parameter(2)" % (t, S), "ROOT r = %s%s clamp(lo, p, hi)" % (t, S)])
    add("clamp_scalar_%s" % t, ["lo = %s[] parameter(0)" % t, "p = %s%s parameter(1)" % (t, S),
                                "hi = %s[] parameter(2)" % t, "ROOT r = %s%s clamp(lo, p, hi)" % (t, S)])

# ---- conversions ----
for src in ALL:
    dsts = [d for d in ALL if d != src]
    body = ["p = %s%s parameter(0)" % (src, S)]
    for i, d in enumerate(dsts):
        body.append("c%d = %s%s convert(p)" % (i, d, S))
    body.append("ROOT r = (%s) tuple(%s)" % (", ".join(d + S for d in dsts),
                                             ", ".join("c%d" % i for i in range(len(dsts)))))
    add("convert_from_%s" % src, body)
WIDTH = {8: ["s8", "u8"] + F8, 16: ["s16", "u16", "f16", "bf16"], 32: ["s32", "u32", "f32"],
         64: ["s64", "u64", "f64"]}
for w, ts in WIDTH.items():
    for a in ts:
        for b in ts:
            if a != b:
                add("bitcast-convert_%s_%s" % (a, b), ["p = %s%s parameter(0)" % (a, S),
                                                       "ROOT r = %s%s bitcast-convert(p)" % (b, S)])
for a, b, sh_a, sh_b in [("f32", "u8", "[4,6]", "[4,6,4]"), ("u8", "f32", "[4,6,4]", "[4,6]"),
                         ("f64", "s16", "[6]", "[6,4]"), ("s16", "f64", "[6,4]", "[6]"),
                         ("s8", "s4", "[8]", "[8,2]"), ("s4", "s8", "[8,2]", "[8]"),
                         ("u8", "u4", "[8]", "[8,2]"), ("u4", "u8", "[8,2]", "[8]")]:
    add("bitcast-convert_%s_%s_resize" % (a, b), ["p = %s%s parameter(0)" % (a, sh_a),
                                                  "ROOT r = %s%s bitcast-convert(p)" % (b, sh_b)])
for t in ALLF:
    for e, m in [(5, 10), (8, 7), (4, 3), (5, 2), (8, 23)]:
        add("reduce-precision_e%dm%d_%s" % (e, m, t), [
            "p = %s%s parameter(0)" % (t, S),
            "ROOT r = %s%s reduce-precision(p), exponent_bits=%d, mantissa_bits=%d" % (t, S, e, m)])

# ---- leaves and data movement ----
for t in ALL:
    if t != "pred":  # XLA's shape inference rejects iota of pred (so does the verifier)
        add("iota_%s" % t, ["a = %s[4,6] iota(), iota_dimension=0" % t, "b = %s[4,6] iota(), iota_dimension=1" % t,
                            "ROOT r = (%s[4,6], %s[4,6]) tuple(a, b)" % (t, t)])
    add("constant_%s" % t, ["p = %s[3] parameter(0)" % t,
                            "c = %s[3] constant({%s})" % (t, "true, false, true" if t == "pred" else "0, 1, 2"),
                            "ROOT r = (%s[3], %s[3]) tuple(p, c)" % (t, t)])
MOVE_T = ALL
for t in MOVE_T:
    P = "p = %s[2,3,4] parameter(0)" % t
    add("broadcast_%s" % t, [P, "ROOT r = %s[5,2,3,4] broadcast(p), dimensions={1,2,3}" % t])
    add("broadcast_perm_%s" % t, ["p = %s[3,4] parameter(0)" % t,
                                  "ROOT r = %s[4,2,3] broadcast(p), dimensions={2,0}" % t])
    add("reshape_%s" % t, [P, "ROOT r = %s[6,4] reshape(p)" % t])
    add("transpose_%s" % t, [P, "ROOT r = %s[4,2,3] transpose(p), dimensions={2,0,1}" % t])
    add("copy_%s" % t, [P, "ROOT r = %s[2,3,4] copy(p)" % t])
    add("reverse_%s" % t, [P, "ROOT r = %s[2,3,4] reverse(p), dimensions={0,2}" % t])
    add("slice_%s" % t, [P, "ROOT r = %s[1,2,2] slice(p), slice={[1:2], [0:3:2], [1:4:2]}" % t])
    add("concatenate_%s" % t, [P, "q = %s[2,1,4] parameter(1)" % t,
                               "ROOT r = %s[2,4,4] concatenate(p, q), dimensions={1}" % t])
    pv = "false" if t == "pred" else "0"
    add("pad_%s" % t, ["p = %s[3,4] parameter(0)" % t, "v = %s[] parameter(1)" % t,
                       "a = %s[6,9] pad(p, v), padding=1_2x2_3" % t,
                       "b = %s[7,6] pad(p, v), padding=0_0_2x-1_0_1" % t,
                       "c = %s[1,2] pad(p, v), padding=-1_-1x-1_-1" % t,
                       "ROOT r = (%s[6,9], %s[7,6], %s[1,2]) tuple(a, b, c)" % (t, t, t)])
    add("dynamic-slice_%s" % t, ["p = %s[5,6] parameter(0)" % t, "i = s32[] parameter(1)",
                                 "j = s32[] parameter(2)",
                                 "ROOT r = %s[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}" % t])
    add("dynamic-update-slice_%s" % t, ["p = %s[5,6] parameter(0)" % t, "u = %s[2,3] parameter(1)" % t,
                                        "i = s32[] parameter(2)", "j = s32[] parameter(3)",
                                        "ROOT r = %s[5,6] dynamic-update-slice(p, u, i, j)" % t])
    add("gather_%s" % t, ["p = %s[5,4] parameter(0)" % t, "i = s32[3,1] parameter(1)",
                          "ROOT r = %s[3,4] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
                          "start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}" % t])
# Dynamic-slice / update start indices out of bounds (clamped), of several
# index dtypes, as constants and parameters.
for it, vals in [("s32", [(-3, 9), (4, -1), (100, 2)]), ("s64", [(7, 7), (-9223372036854775808, 3)]),
                 ("u32", [(4294967295, 1), (3, 6)]), ("s8", [(-128, 127)]), ("u8", [(255, 0)])]:
    for k, (a, b) in enumerate(vals):
        add("dynamic-slice_oob%d_%s" % (k, it), [
            "p = f32[5,6] parameter(0)", "i = %s[] constant(%d)" % (it, a), "j = %s[] constant(%d)" % (it, b),
            "x = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}",
            "u = f32[2,3] parameter(1)", "y = f32[5,6] dynamic-update-slice(p, u, i, j)",
            "ROOT r = (f32[2,3], f32[5,6]) tuple(x, y)"])
for it in ["s64", "u32", "s16", "u8"]:
    add("dynamic-slice_index_%s" % it, [
        "p = f32[5,6] parameter(0)", "i = %s[] parameter(1)" % it, "j = %s[] parameter(2)" % it,
        "x = f32[2,3] dynamic-slice(p, i, j), dynamic_slice_sizes={2,3}",
        "u = f32[2,3] parameter(3)", "y = f32[5,6] dynamic-update-slice(p, u, i, j)",
        "ROOT r = (f32[2,3], f32[5,6]) tuple(x, y)"])

# ---- gather / scatter variants ----
G = [
    ("embed", "f32[10,4]", "s32[6]", "f32[6,4]",
     "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
    ("window2d", "f32[3,4,5]", "s32[2,2]", "f32[2,2,3,5]",
     "offset_dims={2,3}, collapsed_slice_dims={1}, start_index_map={1}, index_vector_dim=2, slice_sizes={3,1,5}"),
    ("vec2", "f32[6,7]", "s32[4,2]", "f32[4,2,3]",
     "offset_dims={1,2}, collapsed_slice_dims={}, start_index_map={0,1}, index_vector_dim=1, slice_sizes={2,3}"),
    ("ivd0", "f32[6,7]", "s32[2,4]", "f32[4]",
     "offset_dims={}, collapsed_slice_dims={0,1}, start_index_map={1,0}, index_vector_dim=0, slice_sizes={1,1}"),
    ("batched", "f32[2,5,4]", "s32[2,3,1]", "f32[2,3,4]",
     "offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, "
     "start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}"),
    ("s64idx", "f32[10,4]", "s64[6,1]", "f32[6,4]",
     "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}"),
    ("u8idx", "s32[10,4]", "u8[6,1]", "s32[6,4]",
     "offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,2}"),
]
for name, op_s, ix_s, out_s, attrs in G:
    if name == "u8idx":
        out_s = "s32[6,2]"
    add("gather_%s" % name, ["p = %s parameter(0)" % op_s, "i = %s parameter(1)" % ix_s,
                             "ROOT r = %s gather(p, i), %s" % (out_s, attrs)])
# Out-of-bounds gather starts are clamped into the operand.
add("gather_oob_const", ["p = f32[10,4] parameter(0)", "i = s32[5,1] constant({{-5},{9},{10},{1000},{-2147483648}})",
                         "ROOT r = f32[5,3] gather(p, i), offset_dims={1}, collapsed_slice_dims={0}, "
                         "start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}"])
for t in ["f32", "f64", "f16", "bf16", "s32", "u8", "s64", "pred"]:
    comb = "or" if t == "pred" else "add"
    comps = binop_comp("comb", comb, t)
    add("scatter_add_%s" % t, ["p = %s[6,4] parameter(0)" % t, "i = s32[5,1] parameter(1)",
                               "u = %s[5,4] parameter(2)" % t,
                               "ROOT r = %s[6,4] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                               "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb" % t], comps)
for t in ["f32", "s32", "s8"]:
    comps = ("assign {\n  a = %s[] parameter(0)\n  ROOT b = %s[] parameter(1)\n}\n\n" % (t, t))
    add("scatter_overwrite_%s" % t, ["p = %s[6,4] parameter(0)" % t, "i = s32[3,1] constant({{4},{0},{2}})",
                                     "u = %s[3,4] parameter(1)" % t,
                                     "ROOT r = %s[6,4] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                                     "scatter_dims_to_operand_dims={0}, index_vector_dim=1, unique_indices=true, "
                                     "to_apply=assign" % t], comps)
for op in ["maximum", "minimum", "multiply"]:
    add("scatter_%s_f32" % op, ["p = f32[6,4] parameter(0)", "i = s32[5,1] parameter(1)", "u = f32[5,4] parameter(2)",
                                "ROOT r = f32[6,4] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                                "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb"],
        binop_comp("comb", op, "f32"))
add("scatter_window2d_f32", ["p = f32[5,6] parameter(0)", "i = s32[3,2] parameter(1)", "u = f32[3,2,2] parameter(2)",
                             "ROOT r = f32[5,6] scatter(p, i, u), update_window_dims={1,2}, inserted_window_dims={}, "
                             "scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=comb"],
    binop_comp("comb", "add", "f32"))
# Scatter drops out-of-bounds updates (no clamping, unlike gather).
add("scatter_oob_const_f32", ["p = f32[6,4] parameter(0)", "i = s32[4,1] constant({{-1},{5},{6},{3}})",
                              "u = f32[4,4] parameter(1)",
                              "ROOT r = f32[6,4] scatter(p, i, u), update_window_dims={1}, inserted_window_dims={0}, "
                              "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb"],
    binop_comp("comb", "add", "f32"))
add("scatter_batched_f32", ["p = f32[2,5,4] parameter(0)", "i = s32[2,3,1] parameter(1)", "u = f32[2,3,4] parameter(2)",
                            "ROOT r = f32[2,5,4] scatter(p, i, u), update_window_dims={2}, inserted_window_dims={1}, "
                            "scatter_dims_to_operand_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, "
                            "index_vector_dim=2, to_apply=comb"], binop_comp("comb", "add", "f32"))
add("scatter_variadic", ["p = f32[5,4] parameter(0)", "q = s32[5,4] parameter(1)", "i = s32[3,1] parameter(2)",
                         "u = f32[3,4] parameter(3)", "v = s32[3,4] parameter(4)",
                         "ROOT r = (f32[5,4], s32[5,4]) scatter(p, q, i, u, v), update_window_dims={1}, "
                         "inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=pair"],
    "pair {\n  a0 = f32[] parameter(0)\n  a1 = s32[] parameter(1)\n  b0 = f32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
    "  x0 = f32[] add(a0, b0)\n  x1 = s32[] add(a1, b1)\n  ROOT r = (f32[], s32[]) tuple(x0, x1)\n}\n\n")

# ---- reductions ----
RED = {"add": NUM + ["pred"], "multiply": NUM, "maximum": ALL, "minimum": ALL,
       "and": ["pred"] + INT, "or": ["pred"] + INT}
INIT = {"add": "0", "multiply": "1", "and": "-1", "or": "0"}


def init_val(op, t):
    if t == "pred":
        return {"add": "false", "multiply": "true", "maximum": "false", "minimum": "true", "and": "true",
                "or": "false"}[op]
    if op in ("maximum", "minimum"):
        if t in ALLF and t != "f8e4m3fn":
            return "-inf" if op == "maximum" else "inf"
        if t == "f8e4m3fn":
            return "-448" if op == "maximum" else "448"
        w = int(t[1:])
        if t[0] == "s":
            return str(-(1 << (w - 1))) if op == "maximum" else str((1 << (w - 1)) - 1)
        return "0" if op == "maximum" else str((1 << w) - 1)
    if op == "and":
        return str((1 << int(t[1:])) - 1) if t[0] == "u" else "-1"
    return INIT[op]


for op, ts in RED.items():
    for t in ts:
        comps = binop_comp("comb", op, t)
        add("reduce_%s_%s" % (op, t), [
            "p = %s[3,4,5] parameter(0)" % t, "z = %s[] constant(%s)" % (t, init_val(op, t)),
            "a = %s[3,5] reduce(p, z), dimensions={1}, to_apply=comb" % t,
            "b = %s[4] reduce(p, z), dimensions={0,2}, to_apply=comb" % t,
            "c = %s[] reduce(p, z), dimensions={0,1,2}, to_apply=comb" % t,
            "ROOT r = (%s[3,5], %s[4], %s[]) tuple(a, b, c)" % (t, t, t)], comps)
for t in ["f32", "f64", "s32", "bf16"]:
    add("reduce_argmax_%s" % t, [
        "p = %s[4,7] parameter(0)" % t, "i = s32[4,7] iota(), iota_dimension=1",
        "z = %s[] constant(%s)" % (t, "-inf" if t[0] in "fb" else "-2147483648"), "zi = s32[] constant(0)",
        "ROOT r = (%s[4], s32[4]) reduce(p, i, z, zi), dimensions={1}, to_apply=argmax" % t],
        "argmax {\n  av = %s[] parameter(0)\n  ai = s32[] parameter(1)\n  bv = %s[] parameter(2)\n"
        "  bi = s32[] parameter(3)\n  gt = pred[] compare(av, bv), direction=GT\n"
        "  eq = pred[] compare(av, bv), direction=EQ\n  lt = pred[] compare(ai, bi), direction=LT\n"
        "  tie = pred[] and(eq, lt)\n  take = pred[] or(gt, tie)\n  v = %s[] select(take, av, bv)\n"
        "  i = s32[] select(take, ai, bi)\n  ROOT r = (%s[], s32[]) tuple(v, i)\n}\n\n" % (t, t, t, t))
RW = [
    ("pool", "[1,6,6,2]", "[1,3,3,2]", "size=1x2x2x1 stride=1x2x2x1"),
    ("pad", "[1,6,6,2]", "[1,6,6,2]", "size=1x3x3x1 pad=0_0x1_1x1_1x0_0"),
    ("stride", "[8,9]", "[3,4]", "size=3x2 stride=2x2"),
    ("basedil", "[4,5]", "[6,8]", "size=2x2 lhs_dilate=2x2"),
    ("windil", "[8,9]", "[5,5]", "size=2x3 rhs_dilate=3x2 stride=1x1"),
    ("negpad", "[8,9]", "[6,8]", "size=2x1 pad=-1_0x0_-1"),
    ("cumsum", "[40]", "[40]", "size=40 pad=39_0"),
]
for name, sa, sb, win in RW:
    for op, ts in [("add", ["f32", "f64", "f16", "bf16", "s32", "u8", "s64"]), ("maximum", ["f32", "s8", "u32", "f64"]),
                   ("minimum", ["f32", "s16"])]:
        for t in ts:
            add("reduce-window_%s_%s_%s" % (name, op, t), [
                "p = %s%s parameter(0)" % (t, sa), "z = %s[] constant(%s)" % (t, init_val(op, t)),
                "ROOT r = %s%s reduce-window(p, z), window={%s}, to_apply=comb" % (t, sb, win)],
                binop_comp("comb", op, t))
for t in ["f32", "f64", "s32", "bf16"]:
    add("select-and-scatter_%s" % t, [
        "p = %s[1,6,6,1] parameter(0)" % t, "s = %s[1,3,3,1] parameter(1)" % t, "z = %s[] constant(0)" % t,
        "ROOT r = %s[1,6,6,1] select-and-scatter(p, s, z), window={size=1x2x2x1 stride=1x2x2x1}, "
        "select=ge, scatter=sum" % t],
        "ge {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GE\n}\n\n"
        % (t, t) + binop_comp("sum", "add", t))
add("select-and-scatter_pad_f32", [
    "p = f32[1,5,5,1] parameter(0)", "s = f32[1,3,3,1] parameter(1)", "z = f32[] constant(0)",
    "ROOT r = f32[1,5,5,1] select-and-scatter(p, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x1_1x1_1x0_0}, "
    "select=ge, scatter=sum"],
    "ge {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=GE\n}\n\n"
    + binop_comp("sum", "add", "f32"))

# ---- dot ----
DOT_T = ["f32", "f64", "f16", "bf16", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "pred"] + F8
for t in DOT_T:
    add("dot_mm_%s" % t, ["a = %s[4,5] parameter(0)" % t, "b = %s[5,3] parameter(1)" % t,
                          "ROOT r = %s[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" % t])
for t in ["f32", "f64", "s32", "bf16"]:
    add("dot_batch_%s" % t, ["a = %s[2,4,5] parameter(0)" % t, "b = %s[2,3,5] parameter(1)" % t,
                             "ROOT r = %s[2,4,3] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={0}, "
                             "lhs_contracting_dims={2}, rhs_contracting_dims={2}" % t])
    add("dot_vec_%s" % t, ["a = %s[7] parameter(0)" % t, "b = %s[7] parameter(1)" % t,
                           "ROOT r = %s[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}" % t])
    add("dot_outer_%s" % t, ["a = %s[3] parameter(0)" % t, "b = %s[4] parameter(1)" % t,
                             "ROOT r = %s[3,4] dot(a, b)" % t])
    add("dot_contract0_%s" % t, ["a = %s[5,4] parameter(0)" % t, "b = %s[3,5] parameter(1)" % t,
                                 "ROOT r = %s[4,3] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={1}" % t])
    add("dot_twocontract_%s" % t, ["a = %s[2,3,4] parameter(0)" % t, "b = %s[3,4,5] parameter(1)" % t,
                                   "ROOT r = %s[2,5] dot(a, b), lhs_contracting_dims={1,2}, rhs_contracting_dims={0,1}" % t])
for a, b, o in [("s8", "s8", "s32"), ("u8", "u8", "u32"), ("bf16", "bf16", "f32"), ("f16", "f16", "f32"),
                ("s8", "s8", "f32"), ("f32", "f32", "f64")]:
    add("dot_mixed_%s_%s" % (a, o), ["a = %s[4,5] parameter(0)" % a, "b = %s[5,3] parameter(1)" % b,
                                     "ROOT r = %s[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" % o])
add("dot_long_f32", ["a = f32[2,300] parameter(0)", "b = f32[300,2] parameter(1)",
                     "ROOT r = f32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}"])

# ---- convolution ----
CONV = [
    ("basic", "[1,5,5,2]", "[3,3,2,4]", "[1,3,3,4]", "size=3x3", "b01f_01io->b01f", ""),
    ("pad", "[1,5,5,2]", "[3,3,2,4]", "[1,5,5,4]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f", ""),
    ("stride", "[1,7,7,2]", "[3,3,2,3]", "[1,3,3,3]", "size=3x3 stride=2x2", "b01f_01io->b01f", ""),
    ("lhsdil", "[2,3,4,4]", "[6,3,2,2]", "[2,6,6,5]", "size=2x2 lhs_dilate=2x2 rhs_dilate=1x2", "bf01_oi01->bf01",
     ""),
    ("rhsdil", "[1,7,7,2]", "[2,2,2,3]", "[1,5,3,3]", "size=2x2 rhs_dilate=2x4", "b01f_01io->b01f", ""),
    ("negpad", "[1,6,6,2]", "[2,2,2,3]", "[1,4,3,3]", "size=2x2 pad=-1_0x0_-2", "b01f_01io->b01f", ""),
    ("groups", "[1,6,6,4]", "[3,3,1,4]", "[1,6,6,4]", "size=3x3 pad=1_1x1_1", "b01f_01io->b01f",
     ", feature_group_count=4"),
    ("groups2", "[2,5,5,6]", "[3,3,3,4]", "[2,3,3,4]", "size=3x3", "b01f_01io->b01f", ", feature_group_count=2"),
    ("batchgroups", "[4,5,3]", "[2,3,6]", "[2,4,6]", "size=2", "b0f_0io->b0f", ", batch_group_count=2"),
    ("conv1d", "[2,9,3]", "[4,3,5]", "[2,6,5]", "size=4", "b0f_0io->b0f", ""),
    ("reversal", "[1,6,1]", "[3,1,1]", "[1,6,1]", "size=3 pad=1_1 rhs_reversal=1", "b0f_0io->b0f", ""),
    ("layout", "[2,5,5,1]", "[2,3,3,4]", "[3,3,1,4]", "size=3x3", "f01b_i01o->01bf", ""),
    ("all", "[1,5,5,2]", "[3,3,2,4]", "[1,4,5,4]", "size=3x3 stride=2x2 pad=1_1x1_1 lhs_dilate=2x2 rhs_dilate=2x1",
     "b01f_01io->b01f", ""),
]
for name, sl, sk, so, win, labels, extra in CONV:
    for t in (["f32", "f64", "f16", "bf16", "s32", "s8"] if name in ("basic", "pad") else ["f32"]):
        add("convolution_%s_%s" % (name, t), [
            "x = %s%s parameter(0)" % (t, sl), "k = %s%s parameter(1)" % (t, sk),
            "ROOT r = %s%s convolution(x, k), window={%s}, dim_labels=%s%s" % (t, so, win, labels, extra)])

# ---- sort / topk ----
for t in NUM + ["pred"]:
    add("sort_%s" % t, ["p = %s[4,9] parameter(0)" % t,
                        "ROOT r = %s[4,9] sort(p), dimensions={1}, to_apply=lt" % t],
        "lt {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n"
        % (t, t))
for t in ALLF:
    add("sort_totalorder_%s" % t, ["p = %s[4,9] parameter(0)" % t,
                                   "ROOT r = %s[4,9] sort(p), dimensions={1}, is_stable=true, to_apply=lt" % t],
        "lt {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n"
        "  ROOT r = pred[] compare(a, b), direction=LT, type=TOTALORDER\n}\n\n" % (t, t))
for t in ["f32", "s32", "u8", "f64", "bf16"]:
    add("sort_kv_stable_%s" % t, ["k = s8[3,10] parameter(0)", "v = %s[3,10] parameter(1)" % t,
                                  "ROOT r = (s8[3,10], %s[3,10]) sort(k, v), dimensions={1}, is_stable=true, to_apply=gt" % t],
        "gt {\n  a = s8[] parameter(0)\n  b = s8[] parameter(1)\n  c = %s[] parameter(2)\n  d = %s[] parameter(3)\n"
        "  ROOT r = pred[] compare(a, b), direction=GT\n}\n\n" % (t, t))
add("sort_dim0_f32", ["p = f32[7,3] parameter(0)", "ROOT r = f32[7,3] sort(p), dimensions={0}, to_apply=lt"],
    "lt {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  ROOT r = pred[] compare(a, b), direction=LT\n}\n\n")
add("sort_three_f32", ["a = f32[12] parameter(0)", "b = s32[12] parameter(1)", "c = f16[12] parameter(2)",
                       "ROOT r = (f32[12], s32[12], f16[12]) sort(a, b, c), dimensions={0}, is_stable=true, to_apply=lex"],
    "lex {\n  a0 = f32[] parameter(0)\n  a1 = f32[] parameter(1)\n  b0 = s32[] parameter(2)\n  b1 = s32[] parameter(3)\n"
    "  c0 = f16[] parameter(4)\n  c1 = f16[] parameter(5)\n  ROOT r = pred[] compare(b0, b1), direction=LT\n}\n\n")
for t in ["f32", "s32", "bf16", "f64", "u16"]:
    add("topk_%s" % t, ["p = %s[3,10] parameter(0)" % t,
                        "ROOT r = (%s[3,4], s32[3,4]) topk(p), k=4, largest=true" % t])

# ---- linear algebra ----
for t in ["f32", "f64"]:
    spd = ["x = %s[4,4] parameter(0)" % t,
           "xt = %s[4,4] dot(x, x), lhs_contracting_dims={1}, rhs_contracting_dims={1}" % t,
           "e = %s[4,4] iota(), iota_dimension=0" % t, "f = %s[4,4] iota(), iota_dimension=1" % t,
           "eq = pred[4,4] compare(e, f), direction=EQ", "four = %s[] constant(4)" % t,
           "zero = %s[] constant(0)" % t, "fb = %s[4,4] broadcast(four), dimensions={}" % t,
           "zb = %s[4,4] broadcast(zero), dimensions={}" % t, "id = %s[4,4] select(eq, fb, zb)" % t,
           "a = %s[4,4] add(xt, id)" % t]
    add("cholesky_%s" % t, spd + ["ROOT r = %s[4,4] cholesky(a), lower=true" % t])
    add("cholesky_upper_%s" % t, spd + ["ROOT r = %s[4,4] cholesky(a), lower=false" % t])
    add("triangular-solve_%s" % t, spd + [
        "l = %s[4,4] cholesky(a), lower=true" % t, "b = %s[4,3] parameter(1)" % t,
        "ROOT r = %s[4,3] triangular-solve(l, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE" % t])
    add("triangular-solve_right_t_%s" % t, spd + [
        "l = %s[4,4] cholesky(a), lower=true" % t, "b = %s[3,4] parameter(1)" % t,
        "ROOT r = %s[3,4] triangular-solve(l, b), left_side=false, lower=true, transpose_a=TRANSPOSE" % t])

# ---- control flow and structure ----
add("while_count", ["p = f32[4] parameter(0)", "z = s32[] constant(0)", "t = (s32[], f32[4]) tuple(z, p)",
                    "w = (s32[], f32[4]) while(t), condition=cond, body=body",
                    "ROOT r = f32[4] get-tuple-element(w), index=1"],
    "cond {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  n = s32[] constant(5)\n  ROOT c = pred[] compare(i, n), direction=LT\n}\n\n"
    "body {\n  s = (s32[], f32[4]) parameter(0)\n  i = s32[] get-tuple-element(s), index=0\n"
    "  x = f32[4] get-tuple-element(s), index=1\n  one = s32[] constant(1)\n  j = s32[] add(i, one)\n"
    "  h = f32[] constant(0.5)\n  hb = f32[4] broadcast(h), dimensions={}\n  y = f32[4] multiply(x, hb)\n"
    "  e = f32[4] sine(y)\n  ROOT t = (s32[], f32[4]) tuple(j, e)\n}\n\n")
add("conditional_pred", ["c = pred[] parameter(0)", "p = f32[4] parameter(1)",
                         "ROOT r = f32[4] conditional(c, p, p), true_computation=tb, false_computation=fb"],
    "tb {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] exponential(x)\n}\n\n"
    "fb {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] negate(x)\n}\n\n")
add("conditional_index", ["c = s32[] parameter(0)", "p = f32[4] parameter(1)",
                          "ROOT r = f32[4] conditional(c, p, p, p), branch_computations={b0, b1, b2}"],
    "b0 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] exponential(x)\n}\n\n"
    "b1 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] negate(x)\n}\n\n"
    "b2 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] abs(x)\n}\n\n")
for k, v in enumerate([-1, 7, 2]):
    add("conditional_oob%d" % k, ["c = s32[] constant(%d)" % v, "p = f32[4] parameter(0)",
                                  "ROOT r = f32[4] conditional(c, p, p, p), branch_computations={b0, b1, b2}"],
        "b0 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] exponential(x)\n}\n\n"
        "b1 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] negate(x)\n}\n\n"
        "b2 {\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] abs(x)\n}\n\n")
add("call", ["p = f32[4] parameter(0)", "q = f32[4] parameter(1)", "ROOT r = f32[4] call(p, q), to_apply=f"],
    "f {\n  a = f32[4] parameter(0)\n  b = f32[4] parameter(1)\n  m = f32[4] multiply(a, b)\n"
    "  ROOT r = f32[4] add(m, a)\n}\n\n")
for t in ["f32", "s32", "f16"]:
    add("map_%s" % t, ["p = %s[4,3] parameter(0)" % t, "q = %s[4,3] parameter(1)" % t,
                       "ROOT r = %s[4,3] map(p, q), dimensions={0,1}, to_apply=f" % t],
        "f {\n  a = %s[] parameter(0)\n  b = %s[] parameter(1)\n  m = %s[] multiply(a, b)\n"
        "  ROOT r = %s[] subtract(m, b)\n}\n\n" % (t, t, t, t))
add("tuple_gte", ["p = (f32[3], (s32[2], pred[4])) parameter(0)", "a = f32[3] get-tuple-element(p), index=0",
                  "b = (s32[2], pred[4]) get-tuple-element(p), index=1", "c = pred[4] get-tuple-element(b), index=1",
                  "d = s32[2] get-tuple-element(b), index=0", "ROOT r = (pred[4], f32[3], s32[2]) tuple(c, a, d)"])
add("opt-barrier", ["p = f32[4] parameter(0)", "q = s32[2] parameter(1)", "t = (f32[4], s32[2]) tuple(p, q)",
                    "b = (f32[4], s32[2]) opt-barrier(t)", "x = f32[4] get-tuple-element(b), index=0",
                    "ROOT r = f32[4] exponential(x)"])
# No `bitcast`: it is a layout-level op (after layout assignment); XLA's
# HLO -> StableHLO import rejects it in a module without layouts.
add("ids", ["a = u32[] partition-id()", "b = u32[] replica-id()", "ROOT r = (u32[], u32[]) tuple(a, b)"])
add("after-all", ["p = f32[4] parameter(0)", "t = token[] after-all()", "q = f32[4] add-dependency(p, t)",
                  "ROOT r = f32[4] negate(q)"])
for alg in ["rng_three_fry", "rng_philox"]:
    for t in ["u32", "u64", "s32", "u8", "u16", "s16", "s64"]:
        add("rng-bit-generator_%s_%s" % (alg[4:], t), [
            "s = u64[%d] parameter(0)" % (3 if alg == "rng_philox" else 2),
            "ROOT r = (u64[%d], %s[4,5]) rng-bit-generator(s), algorithm=%s" % (3 if alg == "rng_philox" else 2, t, alg)])

# ---- collectives (one replica) ----
add("all-reduce", ["p = f32[4] parameter(0)", "ROOT r = f32[4] all-reduce(p), replica_groups={}, to_apply=add"],
    binop_comp("add", "add", "f32"))
add("all-gather", ["p = f32[4] parameter(0)", "ROOT r = f32[4] all-gather(p), replica_groups={}, dimensions={0}"])
add("reduce-scatter", ["p = f32[4] parameter(0)",
                       "ROOT r = f32[4] reduce-scatter(p), replica_groups={}, dimensions={0}, to_apply=add"],
    binop_comp("add", "add", "f32"))
add("all-to-all", ["p = f32[4,2] parameter(0)", "ROOT r = f32[4,2] all-to-all(p), replica_groups={{0}}, dimensions={0}"])
# The tuple form (no split dimension): XLA's StableHLO -> HLO export
# segfaults on it (docs/FINDINGS.md).
add("all-to-all_tuple", ["p = f32[4] parameter(0)", "ROOT r = (f32[4]) all-to-all(p), replica_groups={{0}}"])
add("collective-permute", ["p = f32[4] parameter(0)",
                           "ROOT r = f32[4] collective-permute(p), source_target_pairs={{0,0}}"])


# ---- the constant folder ----
# The same ops on constant operands only: XLA folds them at compile time
# with its HloEvaluator, a second implementation of every op (findings 3
# and 8 of docs/FINDINGS.md were found this way). No zero divisors: a
# constant integer division by zero kills jaxlib (finding 2, covered by
# divide_edges_*). One dummy parameter keeps the entry a function.
def fold_values(t, k):
    """8 constants of dtype t (k: 0 or 1, two different vectors)."""
    if t == "pred":
        v = ["true", "false", "true", "false", "false", "true", "true", "false"]
        return v if k == 0 else v[::-1]
    if t in ("s4", "u4") or t in INT:
        w = int(t[1:])
        if t[0] == "s":
            lo, hi = -(1 << (w - 1)), (1 << (w - 1)) - 1
            v = [lo, -1, 0, 1, hi, -5, 7, lo + 1] if k == 0 else [3, -2, 5, -1, 2, 1, -3, 6]
        else:
            hi = (1 << w) - 1
            v = [0, 1, hi, hi - 1, 5, 7, hi // 2, hi // 2 + 1] if k == 0 else [3, 2, 5, 1, 2, 1, 3, 6]
        return [str(x) for x in v]
    if k == 0:
        v = ["0", "-0", "1", "-1.5", "2.5", "100", "0.001", "-3.75"]
    else:
        v = ["2", "-0.5", "3", "1.25", "-2", "0.75", "4", "-8"]
    return v


def fold_const(t, k=0):
    return "{%s}" % ", ".join(fold_values(t, k))


FOLD_UNARY_F = ["floor", "ceil", "round-nearest-afz", "round-nearest-even", "exponential",
                "exponential-minus-one", "log", "log-plus-one", "sqrt", "rsqrt", "cbrt", "tanh",
                "logistic", "sine", "cosine", "tan", "erf", "abs", "negate", "sign"]
for t in ALL:
    ops = []
    if t in ALLF:
        ops = FOLD_UNARY_F + ["is-finite"]
    elif t != "pred":
        ops = ["negate", "popcnt", "count-leading-zeros", "not"] + (["abs", "sign"] if t[0] == "s" else [])
    else:
        ops = ["not"]
    for op in ops:
        rt = "pred" if op == "is-finite" else t
        add("fold_%s_%s" % (op, t), ["d = f32[] parameter(0)", "c = %s[8] constant(%s)" % (t, fold_const(t)),
                                     "ROOT r = %s[8] %s(c)" % (rt, op)])
    bins = ["add", "multiply", "maximum", "minimum"]
    if t != "pred":
        bins += ["subtract", "divide", "remainder", "power"]
    if t in ALLF:
        bins += ["atan2"]
    if t == "pred" or t not in ALLF:
        bins += ["and", "or", "xor"]
    if t not in ALLF and t != "pred":
        bins += ["shift-left", "shift-right-arithmetic", "shift-right-logical"]
    for op in bins:
        add("fold_%s_%s" % (op, t), ["d = f32[] parameter(0)", "a = %s[8] constant(%s)" % (t, fold_const(t, 0)),
                                     "b = %s[8] constant(%s)" % (t, fold_const(t, 1)),
                                     "ROOT r = %s[8] %s(a, b)" % (t, op)])
    dsts = [x for x in ALL if x != t]
    body = ["d = f32[] parameter(0)", "c = %s[8] constant(%s)" % (t, fold_const(t))]
    for i, x in enumerate(dsts):
        body.append("c%d = %s[8] convert(c)" % (i, x))
    body.append("ROOT r = (%s) tuple(%s)" % (", ".join(x + "[8]" for x in dsts),
                                             ", ".join("c%d" % i for i in range(len(dsts)))))
    add("fold_convert_from_%s" % t, body)
    body = ["d = f32[] parameter(0)", "a = %s[8] constant(%s)" % (t, fold_const(t, 0)),
            "b = %s[8] constant(%s)" % (t, fold_const(t, 1))]
    for dname in ["EQ", "NE", "LT", "LE", "GT", "GE"]:
        body.append("c%s = pred[8] compare(a, b), direction=%s" % (dname, dname))
    body.append("ROOT r = (%s) tuple(%s)" % (", ".join(["pred[8]"] * 6),
                                             ", ".join("c" + x for x in ["EQ", "NE", "LT", "LE", "GT", "GE"])))
    add("fold_compare_%s" % t, body)
for w, ts in WIDTH.items():
    for a in ts:
        for b in ts:
            if a != b:
                add("fold_bitcast-convert_%s_%s" % (a, b), [
                    "d = f32[] parameter(0)", "c = %s[8] constant(%s)" % (a, fold_const(a)),
                    "ROOT r = %s[8] bitcast-convert(c)" % b])
for a, b, n, sh_b in [("s8", "s4", 8, "[8,2]"), ("u8", "u4", 8, "[8,2]"), ("f32", "u8", 8, "[8,4]"),
                      ("s32", "s16", 8, "[8,2]"), ("u16", "u8", 8, "[8,2]")]:
    add("fold_bitcast-convert_%s_%s_resize" % (a, b), [
        "d = f32[] parameter(0)", "c = %s[8] constant(%s)" % (a, fold_const(a)),
        "ROOT r = %s%s bitcast-convert(c)" % (b, sh_b)])
for t in ["s8", "s32", "u8", "s16", "u32"]:
    add("fold_convolution_%s" % t, [
        "d = f32[] parameter(0)", "x = %s[1,8,1] constant({{%s}})" % (t, ", ".join("{%s}" % v for v in fold_values(t, 1))),
        "k = %s[2,1,1] constant({{{2}}, {{3}}})" % t,
        "ROOT r = %s[1,7,1] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f" % t])
    add("fold_dot_%s" % t, [
        "d = f32[] parameter(0)", "a = %s[2,4] constant({{%s}, {%s}})" % (t, ", ".join(fold_values(t, 1)[:4]),
                                                                     ", ".join(fold_values(t, 1)[4:])),
        "b = %s[4] constant({%s})" % (t, ", ".join(fold_values(t, 1)[:4])),
        "ROOT r = %s[2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}" % t])


def main():
    only_check = "--check" in sys.argv  # exit 1 when a file would change
    changed = 0
    for name, text in sorted(MODULES.items()):
        path = os.path.join(HERE, name + ".hlo")
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            changed += 1
            if not only_check:
                with open(path, "w") as f:
                    f.write(text)
    stale = [f for f in os.listdir(HERE) if f.endswith(".hlo") and f[:-4] not in MODULES]
    for f in stale:
        changed += 1
        if not only_check:
            os.remove(os.path.join(HERE, f))
    print("%d modules, %d changed" % (len(MODULES), changed))
    return 1 if only_check and changed else 0


if __name__ == "__main__":
    sys.exit(main())
