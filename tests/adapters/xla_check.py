#!/usr/bin/env python3
"""xla_check.py - drives adapters/xla/adapter.py over the process protocol,
as trench does, and checks it against real XLA: outputs against values
worked out by hand, dtypes numpy lacks, pass control and pass lists, and
the proof that XLA compiles the module trench sent: XLA's own
before-optimizations dump ("received_hlo") is compared, instruction by
instruction (opcode, shape, attributes; names, metadata and layouts
aside), with trench's printing of tests/hlo modules.

Run with the project venv's python (tests/adapters/test_xla.sh does):
  xla_check.py ROOT TRENCH_BINARY
Prints one line per failed check and ends with "N passed, N failed".
"""
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import ml_dtypes as md
import numpy as np

ROOT, TRENCH = sys.argv[1], sys.argv[2]
ADAPTER = os.path.join(ROOT, "adapters", "xla", "adapter.py")
npass = nfail = 0


def check(cond, what):
    global npass, nfail
    if cond:
        npass += 1
    else:
        nfail += 1
        print("FAIL", what)
    return cond


class Adapter:
    def __init__(self):
        self.err = tempfile.TemporaryFile()
        self.p = subprocess.Popen([sys.executable, ADAPTER], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, stderr=self.err, text=True)
        self.id = 0
        self.tmp = tempfile.mkdtemp(prefix="xla_check_")

    def talk(self, req):
        self.id += 1
        req["id"] = self.id
        self.p.stdin.write(json.dumps(req) + "\n")
        self.p.stdin.flush()
        line = self.p.stdout.readline()
        if not line:
            self.err.seek(0)
            raise RuntimeError("adapter died (%s): %s" % (self.p.wait(),
                               self.err.read()[-2000:].decode(errors="replace")))
        rep = json.loads(line)
        assert rep["id"] == self.id
        return rep

    def run(self, text, inputs, **options):
        d = tempfile.mkdtemp(dir=self.tmp)
        with open(os.path.join(d, "module.hlo"), "w") as f:
            f.write(text)
        paths = []
        for i, a in enumerate(inputs):
            paths.append(os.path.join(d, "in%d.npy" % i))
            np.save(paths[-1], a)
        os.mkdir(os.path.join(d, "out"))
        return self.talk({"op": "run", "module": os.path.join(d, "module.hlo"),
                          "inputs": paths, "outdir": os.path.join(d, "out"),
                          "options": options})

    def close(self):
        self.talk({"op": "shutdown"})
        self.p.wait(timeout=30)
        shutil.rmtree(self.tmp, ignore_errors=True)


def outputs(rep, views=None):
    outs = [np.load(p) for p in rep.get("outputs", [])]
    if views:
        outs = [o.view(v) if v is not None else o for o, v in zip(outs, views)]
    return outs


def descr(path):
    with open(path, "rb") as f:
        return re.search(rb"'descr': '([^']*)'", f.read(128)).group(1).decode()


# ---- outputs worked out by hand ----

def hand_checks(ad):
    rep = ad.talk({"op": "hello", "protocol": 1})
    check(rep["status"] == "ok" and rep["protocol"] == 1 and rep["name"] == "xla-cpu",
          "hello: %s" % rep)
    check("jax 0.10.2" in rep.get("version", ""), "pinned version: %s" % rep.get("version"))
    check(set(rep["capabilities"]) >= {"optimized_hlo", "disable_passes",
                                       "list_passes", "timings"}, "capabilities")

    a = np.array([[1, 2], [3, 4]], np.float32)
    b = np.array([[0.5, -2], [10, 0.25]], np.float32)
    rep = ad.run("""HloModule add_neg
ENTRY e {
  p0 = f32[2,2] parameter(0)
  p1 = f32[2,2]{1,0} parameter(1)
  a = f32[2,2] add(p0, p1)
  n = f32[2,2] negate(a)
  ROOT t = (f32[2,2], f32[2,2]) tuple(a, n)
}
""", [a, b], want_optimized_hlo=True)
    o = outputs(rep)
    want = np.array([[1.5, 0], [13, 4.25]], np.float32)
    check(rep["status"] == "ok" and len(o) == 2 and o[0].dtype == np.float32
          and (o[0] == want).all() and (o[1] == -want).all(), "add_neg: %s" % rep)
    check(rep.get("compile_ms", -1) > 0 and rep.get("run_ms", -1) >= 0, "timings")
    opt = open(rep["optimized_hlo"]).read() if rep.get("optimized_hlo") else ""
    check("is_scheduled=true" in opt and "ENTRY" in opt, "optimized HLO is XLA's")

    # Integers wrap; 64-bit types survive device_put (x64 on).
    rep = ad.run("""HloModule ints
ENTRY e {
  p0 = s32[3] parameter(0)
  p1 = s32[3] parameter(1)
  p2 = s64[2] parameter(2)
  p3 = f64[2] parameter(3)
  m = s32[3] multiply(p0, p1)
  s = s64[2] add(p2, p2)
  d = f64[2] divide(p3, p3)
  one = f64[] constant(1)
  three = f64[] constant(3)
  third = f64[] divide(one, three)
  bt = f64[2] broadcast(third), dimensions={}
  dd = f64[2] multiply(d, bt)
  ROOT t = (s32[3], s64[2], f64[2]) tuple(m, s, dd)
}
""", [np.array([3, 65536, -7], np.int32), np.array([5, 65536, 6], np.int32),
      np.array([2**40 + 1, -3], np.int64), np.array([2.0, 7.0])])
    o = outputs(rep)
    check(rep["status"] == "ok" and o[0].tolist() == [15, 0, -42]
          and o[1].dtype == np.int64 and o[1].tolist() == [2**41 + 2, -6]
          and o[2].dtype == np.float64 and o[2].tolist() == [1 / 3, 1 / 3],
          "ints and f64: %s %s" % (rep.get("message"), o))

    # bf16 travels as raw '<V2', s4 as one '|V1' byte per element.
    bf = np.array([1.5, -2.25, 3.0, 0.0078125], md.bfloat16)
    i4 = np.array([-3, 7, -8, 2], md.int4)
    rep = ad.run("""HloModule narrow
ENTRY e {
  p0 = bf16[4] parameter(0)
  p1 = s4[4] parameter(1)
  a = bf16[4] add(p0, p0)
  one = s4[] constant(1)
  b1 = s4[4] broadcast(one), dimensions={}
  s = s4[4] add(p1, b1)
  ROOT t = (bf16[4], s4[4]) tuple(a, s)
}
""", [bf, i4])
    ok = rep["status"] == "ok"
    check(ok and descr(rep["outputs"][0]) == "<V2" and descr(rep["outputs"][1]) in ("<V1", "|V1"),
          "narrow descrs: %s" % rep)
    if ok:
        o = outputs(rep, [md.bfloat16, md.int4])
        check(o[0].astype(np.float32).tolist() == [3.0, -4.5, 6.0, 0.015625], "bf16 add")
        # -8 + 1 = -7; 7 + 1 wraps to -8. The byte holds the low 4 bits.
        check(o[1].astype(np.int8).tolist() == [-2, -8, -7, 3], "s4 add wraps: %s" % o[1])
        raw = np.load(rep["outputs"][1]).view(np.uint8).tolist()
        check(raw == [0x0E, 0x08, 0x09, 0x03], "s4 bytes: %s" % raw)

    # float8_e5m2 saved by ml_dtypes carries '<f1', which np.load refuses.
    f8 = np.array([1.0, -2.0, 0.5], md.float8_e5m2)
    rep = ad.run("""HloModule f8
ENTRY e {
  p0 = f8e5m2[3] parameter(0)
  ROOT n = f8e5m2[3] negate(p0)
}
""", [f8])
    ok = check(rep["status"] == "ok", "f8e5m2 '<f1' input: %s" % rep)
    if ok:
        o = np.load(rep["outputs"][0]).view(np.uint8).view(md.float8_e5m2)
        check(o.astype(np.float32).tolist() == [-1.0, 2.0, -0.5], "f8e5m2 negate")

    # A tuple parameter crosses as its flattened leaves; dot and reduce.
    rep = ad.run("""HloModule tup
add {
  x = f32[] parameter(0)
  y = f32[] parameter(1)
  ROOT s = f32[] add(x, y)
}
ENTRY e {
  p = (f32[2,3], f32[3,2]) parameter(0)
  l = f32[2,3] get-tuple-element(p), index=0
  r = f32[3,2] get-tuple-element(p), index=1
  d = f32[2,2] dot(l, r), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  z = f32[] constant(0)
  ROOT s = f32[2] reduce(d, z), dimensions={1}, to_apply=add
}
""", [np.arange(6, dtype=np.float32).reshape(2, 3),
      np.arange(6, dtype=np.float32).reshape(3, 2)])
    o = outputs(rep)
    # [[0,1,2],[3,4,5]] x [[0,1],[2,3],[4,5]] = [[10,13],[28,40]]
    check(rep["status"] == "ok" and o[0].tolist() == [23.0, 68.0],
          "tuple param, dot, reduce: %s %s" % (rep.get("message"), o))

    rep = ad.run("HloModule bad\nENTRY e {\n  p0 = f32[2] parameter(0)\n  ROOT x = f32[2] frobnicate(p0)\n}\n",
                 [np.zeros(2, np.float32)])
    check(rep["status"] == "unsupported" and "parser" in rep.get("message", ""),
          "XLA's parser rejects: %s" % rep)
    rep = ad.run("HloModule m\nENTRY e {\n  p0 = f32[2] parameter(0)\n  ROOT x = f32[2] negate(p0)\n}\n",
                 [np.zeros(3, np.float32)])
    check(rep["status"] == "error" and "shape" in rep.get("message", ""),
          "input shape mismatch: %s" % rep)


# ---- passes ----

DOUBLE_NEG = """HloModule dn
ENTRY e {
  p0 = f32[8] parameter(0)
  n = f32[8] negate(p0)
  ROOT nn = f32[8] negate(n)
}
"""


def pass_checks(ad):
    x = np.arange(8, dtype=np.float32)
    rep = ad.run(DOUBLE_NEG, [x], want_optimized_hlo=True, want_passes=True)
    opt = open(rep["optimized_hlo"]).read()
    check(rep["status"] == "ok" and "negate" not in opt,
          "algsimp folds negate(negate(x)): %s" % opt)
    check("algsimp" in rep.get("passes_changed", []),
          "passes_changed names algsimp: %s" % rep.get("passes_changed"))
    rep = ad.run(DOUBLE_NEG, [x], want_optimized_hlo=True, want_passes=True,
                 disable_passes=["algsimp"])
    opt = open(rep["optimized_hlo"]).read()
    check(rep["status"] == "ok" and opt.count("negate(") == 2
          and (outputs(rep)[0] == x).all(), "algsimp disabled keeps both negates: %s" % opt)
    check("algsimp" not in rep.get("passes_changed", ["algsimp"]), "disabled pass did not run")
    d = tempfile.mkdtemp(dir=ad.tmp)
    with open(os.path.join(d, "m.hlo"), "w") as f:
        f.write(DOUBLE_NEG)
    rep = ad.talk({"op": "list_passes", "module": os.path.join(d, "m.hlo"), "outdir": d})
    ps = rep.get("passes", [])
    check(rep["status"] == "ok" and "algsimp" in ps and "layout-assignment" in ps
          and len(ps) > 20, "list_passes: %d passes" % len(ps))


# ---- the module XLA received is the module trench sent ----

LAYOUT = re.compile(r"(\[[0-9,]*\])\{[^}]*\}")
NAME = re.compile(r"%[\w.\-]+")


def signature(text):
    """The entry's multiset of instructions printed without names, metadata
    or layouts, and the set of every computation's such multiset."""
    import jaxlib._hlo as h
    m = h.hlo_module_from_text(text)
    comps = []
    entry = None
    for c in m.computations():
        items = collections.Counter()
        for ins in c.instructions():
            s = ins.to_string()
            s = s.split(" = ", 1)[1]
            s = re.sub(r", metadata=\{[^}]*\}", "", s)
            s = re.sub(r"(, )?(frontend_attributes|origin|statistics)=\{[^}]*\}", "", s)
            s = NAME.sub("%", LAYOUT.sub(r"\1", s))
            items[s] += 1
        comps.append(items)
        entry = items  # computations() lists the entry last
    # As a set: the import may give each use of a computation its own copy.
    return entry, sorted(set(tuple(sorted(c.items())) for c in comps))


def random_inputs(text, rng):
    import jaxlib._hlo as h
    from jax._src.lib import xla_client as xc
    m = h.hlo_module_from_text(text)
    ps = xc.XlaComputation(m.as_serialized_hlo_module_proto()).program_shape()

    def leaves(s):
        if s.is_tuple():
            return [x for e in s.tuple_shapes() for x in leaves(e)]
        return [s] if s.is_array() else []
    out = []
    for s in [x for p in ps.parameter_shapes() for x in leaves(p)]:
        dt, dims = s.numpy_dtype(), tuple(s.dimensions())
        if dt == np.bool_:
            a = rng.integers(0, 2, dims).astype(bool)
        elif dt.kind in "iu":
            a = rng.integers(0, 3, dims).astype(dt)
        else:
            a = rng.standard_normal(dims).astype(np.float32).astype(dt)
        out.append(np.asarray(a, dt).reshape(dims))
    return out


def trench_print(path):
    r = subprocess.run([TRENCH, "parse", path], capture_output=True, text=True)
    return r.stdout if r.returncode == 0 else None


def diff(a, b):
    ca, cb = collections.Counter(dict(a)), collections.Counter(dict(b))
    return sorted((ca - cb).elements()), sorted((cb - ca).elements())


# Modules whose received HLO equals the sent one, instruction for
# instruction in every computation.
SAME = ["convolution", "layouts_tiled", "linalg", "select_and_scatter",
        "headerless_entry", "header_stack_frames"]
# Modules where the MLIR layer that jaxlib imposes (HLO -> StableHLO -> HLO,
# with the StableHLO canonicalizer and folder, jaxlib 0.10.2) rewrites the
# entry before any XLA pass runs: exactly what it removes and what it adds.
# A wrong result here may come from this layer, not from an XLA pass.
REWRITTEN = {
    # iota along dim 1 of s32[4,6] becomes an s32[6] iota and a broadcast.
    "reduce": (["s32[4,6] iota(), iota_dimension=1"],
               ["s32[4,6] broadcast(%), dimensions={1}",
                "s32[6] iota(), iota_dimension=0"]),
    # The dot's algorithm= is dropped: XLA never sees dot_bf16_bf16_f32.
    "dot": (["f32[2,2] dot(%, %), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
             "operand_precision={highest,default}, algorithm=dot_bf16_bf16_f32"],
            ["f32[2,2] dot(%, %), lhs_contracting_dims={1}, rhs_contracting_dims={0}, "
             "operand_precision={highest,default}"]),
    # bf16 arithmetic on constants is folded before XLA's own folder.
    "binary_arith_short": (["bf16[4] constant({1, 2.5, -3, 0.5})",
                            "bf16[4] multiply(%, %)", "bf16[4] subtract(%, %)"],
                           ["bf16[4] constant({0, 3.75, 12, -0.25})"]),
    # Implicit scalar operands of clamp become explicit broadcasts.
    "compare_select": ([], ["f32[3,2] broadcast(%), dimensions={}"] * 2),
    # Dead instructions are gone.
    "unary_float_long": (["f32[8] cosine(%)", "f32[8] sine(%)", "f32[8] tan(%)"], []),
}


def proof_checks(ad):
    rng = np.random.default_rng(1)
    for name in SAME + sorted(REWRITTEN):
        path = os.path.join(ROOT, "tests", "hlo", name + ".hlo")
        text = trench_print(path)
        if not check(text is not None, "trench parse %s" % path):
            continue
        rep = ad.run(text, random_inputs(text, rng), want_received_hlo=True)
        if not check(rep["status"] == "ok" and rep.get("received_hlo"),
                     "%s ran: %s" % (name, rep)):
            continue
        sent_entry, sent = signature(text)
        got_entry, got = signature(open(rep["received_hlo"]).read())
        gone, new = diff(sent_entry, got_entry)
        if name in REWRITTEN:
            want_gone, want_new = REWRITTEN[name]
            check((gone, new) == (sorted(want_gone), sorted(want_new)),
                  "%s: the known MLIR rewrite changed:\n  gone %s\n  new %s" % (name, gone, new))
        else:
            check(not gone and not new, "%s: XLA received another entry:\n  gone %s\n  new %s"
                  % (name, gone, new))
            check(sent == got, "%s: computations differ" % name)
        check(sum(sent_entry.values()) > 3, "%s: entry has instructions" % name)


def main():
    ad = Adapter()
    try:
        hand_checks(ad)
        pass_checks(ad)
        proof_checks(ad)
    except Exception as e:
        check(False, "exception: %s: %s" % (type(e).__name__, e))
    finally:
        try:
            ad.close()
        except Exception as e:
            check(False, "shutdown: %s" % e)
    print("%d passed, %d failed" % (npass, nfail))
    return 1 if nfail else 0


if __name__ == "__main__":
    sys.exit(main())
