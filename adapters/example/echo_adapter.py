#!/usr/bin/env python3
"""echo_adapter.py - a tiny compiler behind trench's process protocol
(docs/PROTOCOL.md), and a template for putting a real one there.

It "compiles" modules whose entry computation only uses parameter, negate,
add, subtract, multiply and tuple on f16/f32/f64, integers and pred, and
evaluates them element by element in plain Python; anything else gets the
reply "unsupported". Standard library only (no numpy), so trench's own
tests can run it with any python3.

Run: trench ... --target 'cmd:python3 adapters/example/echo_adapter.py'
"""
import json
import os
import struct
import sys
import time

PROTOCOL = 1
VERSION = "1.0"

# ---- .npy files (format 1.0, little-endian, C order) ----

# descr -> (struct code, kind, bits)
DESCRS = {
    "|b1": ("?", "pred", 8),
    "|i1": ("b", "s", 8), "<i2": ("h", "s", 16), "<i4": ("i", "s", 32),
    "<i8": ("q", "s", 64),
    "|u1": ("B", "u", 8), "<u2": ("H", "u", 16), "<u4": ("I", "u", 32),
    "<u8": ("Q", "u", 64),
    "<f2": ("e", "f", 16), "<f4": ("f", "f", 32), "<f8": ("d", "f", 64),
}
HLO_DESCR = {
    "pred": "|b1", "s8": "|i1", "s16": "<i2", "s32": "<i4", "s64": "<i8",
    "u8": "|u1", "u16": "<u2", "u32": "<u4", "u64": "<u8",
    "f16": "<f2", "f32": "<f4", "f64": "<f8",
}


def npy_load(path):
    """Returns (descr, shape tuple, flat list of values)."""
    import ast
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError("%s: not a .npy file" % path)
    major = data[6]
    if major == 1:
        hlen = struct.unpack("<H", data[8:10])[0]
        start = 10
    else:
        hlen = struct.unpack("<I", data[8:12])[0]
        start = 12
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    descr, shape = header["descr"], tuple(header["shape"])
    if header["fortran_order"]:
        raise ValueError("%s: Fortran order is not handled" % path)
    if descr.startswith("="):
        descr = "<" + descr[1:]
    if descr not in DESCRS:
        raise ValueError("%s: unsupported descr %r" % (path, descr))
    code = DESCRS[descr][0]
    n = 1
    for d in shape:
        n *= d
    body = data[start + hlen:]
    vals = list(struct.unpack("<%d%s" % (n, code), body[:n * struct.calcsize(code)]))
    return descr, shape, vals


def npy_save(path, descr, shape, vals):
    """Writes the bytes np.save writes for the same array."""
    code = DESCRS[descr][0]
    if len(shape) == 1:
        sh = "(%d,)" % shape[0]
    else:
        sh = "(" + ", ".join(str(d) for d in shape) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, sh)
    pad = 64 - (10 + len(header) + 1) % 64
    header += " " * (pad % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)))
        f.write(header.encode("latin1"))
        f.write(struct.pack("<%d%s" % (len(vals), code), *vals))


# ---- a very small reader of HLO text: the entry computation only ----

class Unsupported(Exception):
    pass


def split_top(s, sep=","):
    """Splits s on sep outside (), [] and {}."""
    out, depth, cur = [], 0, ""
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        out.append(cur.strip())
    return out


def parse_shape(s):
    """'f32[2,3]{1,0}' -> ('f32', (2, 3)); tuples -> ('tuple', [shapes])."""
    s = s.strip()
    if s.startswith("("):
        return ("tuple", [parse_shape(e) for e in split_top(s[1:-1])])
    dt, rest = s.split("[", 1)
    dims = rest.split("]", 1)[0]
    return (dt, tuple(int(d) for d in dims.split(",") if d.strip()))


def parse_entry(text):
    """Returns the entry's instructions as dicts, in order, and the root."""
    lines = text.splitlines()
    i = next((k for k, l in enumerate(lines) if l.lstrip().startswith("ENTRY")), None)
    if i is None:
        raise Unsupported("no ENTRY computation")
    instrs, root = [], None
    for line in lines[i + 1:]:
        line = line.strip()
        if line.startswith("}"):
            break
        if not line or line.startswith("//"):
            continue
        is_root = line.startswith("ROOT ")
        if is_root:
            line = line[5:]
        name, rhs = [x.strip() for x in line.split("=", 1)]
        # shape: a balanced (...) or one token
        if rhs.startswith("("):
            depth = 0
            for k, ch in enumerate(rhs):
                depth += ch == "("
                depth -= ch == ")"
                if depth == 0:
                    break
            shape_txt, rest = rhs[:k + 1], rhs[k + 1:].strip()
        else:
            shape_txt, rest = rhs.split(" ", 1)
        op, rest = rest.split("(", 1)
        depth, k = 1, 0
        while depth:
            depth += rest[k] == "("
            depth -= rest[k] == ")"
            k += 1
        args = split_top(rest[:k - 1])
        ins = {"name": name.lstrip("%"), "shape": parse_shape(shape_txt),
               "op": op.strip(), "args": [a.split()[-1].lstrip("%") for a in args]}
        instrs.append(ins)
        if is_root:
            root = ins
    if root is None and instrs:
        root = instrs[-1]
    return instrs, root


# ---- evaluation ----

def wrap(dt, v):
    """Rounds or wraps v to dtype dt."""
    if dt == "pred":
        return bool(v)
    if dt[0] in "su":
        bits = int(dt[1:])
        v &= (1 << bits) - 1
        if dt[0] == "s" and v >= 1 << (bits - 1):
            v -= 1 << bits
        return v
    code = {"f16": "e", "f32": "f", "f64": "d"}[dt]
    try:
        return struct.unpack(code, struct.pack(code, v))[0]
    except OverflowError:
        return float("inf") if v > 0 else float("-inf")


OPS = {
    "negate": lambda a: -a,
    "add": lambda a, b: a + b,
    "subtract": lambda a, b: a - b,
    "multiply": lambda a, b: a * b,
}


def evaluate(instrs, root, params):
    """params: list of (dtype, shape, flat values). Returns the root's leaves
    as (dtype, shape, values), depth-first."""
    env = {}
    for ins in instrs:
        op, shape = ins["op"], ins["shape"]
        if op == "parameter":
            k = int(ins["args"][0])
            dt, dims, vals = params[k]
            if (dt, tuple(dims)) != shape:
                raise Unsupported("parameter %d is %s%s, the module says %s"
                                  % (k, dt, list(dims), shape))
            env[ins["name"]] = ("array", dt, dims, vals)
        elif op == "tuple":
            env[ins["name"]] = ("tuple", [env[a] for a in ins["args"]])
        elif op in OPS:
            dt, dims = shape
            if dt not in HLO_DESCR or (op == "negate" and dt == "pred"):
                raise Unsupported("%s on %s" % (op, dt))
            ops = [env[a][3] for a in ins["args"]]
            f = OPS[op]
            vals = [wrap(dt, f(*xs)) for xs in zip(*ops)]
            env[ins["name"]] = ("array", dt, dims, vals)
        else:
            raise Unsupported("opcode '%s'" % op)
    out = []

    def leaves(v):
        if v[0] == "tuple":
            for e in v[1]:
                leaves(e)
        else:
            out.append(v[1:])
    leaves(env[root["name"]])
    return out


# ---- the protocol ----

DESCR_HLO = {v: k for k, v in HLO_DESCR.items()}


def run(req):
    """Handles one 'run' request; returns the reply dict (without id)."""
    with open(req["module"]) as f:
        text = f.read()
    t0 = time.perf_counter()
    try:
        instrs, root = parse_entry(text)
        params = []
        for p in req["inputs"]:
            descr, shape, vals = npy_load(p)
            params.append((DESCR_HLO[descr], shape, vals))
        t1 = time.perf_counter()
        leaves = evaluate(instrs, root, params)
    except Unsupported as e:
        return {"status": "unsupported", "message": str(e)}
    t2 = time.perf_counter()
    outs = []
    for i, (dt, dims, vals) in enumerate(leaves):
        path = os.path.join(req["outdir"], "out%d.npy" % i)
        npy_save(path, HLO_DESCR[dt], dims, vals)
        outs.append(path)
    rep = {"status": "ok", "outputs": outs,
           "compile_ms": (t1 - t0) * 1e3, "run_ms": (t2 - t1) * 1e3}
    opts = req.get("options") or {}
    if opts.get("want_optimized_hlo"):
        # Nothing is optimized here: the module ran as it was sent.
        path = os.path.join(req["outdir"], "optimized.hlo")
        with open(path, "w") as f:
            f.write(text)
        rep["optimized_hlo"] = path
    return rep


def serve(run_fn=run, name="echo"):
    """The request loop: one JSON request per stdin line, one JSON reply per
    stdout line. Ends at 'shutdown' or at EOF on stdin (trench went away)."""
    out = sys.stdout
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        if op == "hello":
            rep = {"status": "ok", "protocol": PROTOCOL, "name": name,
                   "version": VERSION,
                   "capabilities": ["optimized_hlo", "timings"]}
        elif op == "run":
            try:
                rep = run_fn(req)
            except Exception as e:  # a bug here is an error reply, not a crash
                rep = {"status": "error", "message": "%s: %s" % (type(e).__name__, e)}
        elif op == "shutdown":
            rep = {"status": "ok"}
        else:
            rep = {"status": "unsupported", "message": "unknown op %r" % op}
        rep["id"] = req.get("id")
        out.write(json.dumps(rep) + "\n")
        out.flush()
        if op == "shutdown":
            break


if __name__ == "__main__":
    serve()
