"""hlo_torch.py - HLO text (as trench prints it) to a PyTorch function.

Two steps. parse() reads the module into computations of instructions
(name, shape, opcode, operands, attributes). lower() writes Python source:
one function per computation, one line per instruction, calling torch or
the helpers below (module H in the generated code) wherever HLO's meaning
needs more than one torch call. The source is what runs (eager, or under
torch.compile) and is also a standalone reproducer: FINDINGS entries and
the adapter's "optimized_hlo" file show it.

Anything whose HLO meaning cannot be written in torch exactly raises
Unsupported with the reason; nothing is approximated silently.
"""
import re

import numpy as np
import torch


class Unsupported(Exception):
    """The module uses something this translation does not express."""


# --- parsing --------------------------------------------------------------

# Element types by their torch name: a release without one (uint16/32/64
# came in 2.3, float8 in 2.1) leaves it out, and a module using it is
# answered unsupported on that release.
DTYPES = {k: getattr(torch, v) for k, v in (
    ("pred", "bool"), ("s8", "int8"), ("s16", "int16"), ("s32", "int32"), ("s64", "int64"),
    ("u8", "uint8"), ("u16", "uint16"), ("u32", "uint32"), ("u64", "uint64"),
    ("f16", "float16"), ("bf16", "bfloat16"), ("f32", "float32"), ("f64", "float64"),
    ("f8e4m3fn", "float8_e4m3fn"), ("f8e5m2", "float8_e5m2")) if hasattr(torch, v)}
FLOAT8 = tuple(DTYPES[k] for k in ("f8e4m3fn", "f8e5m2") if k in DTYPES)


class Shape:
    """An array shape (dtype name, dims) or a tuple of shapes (elems)."""

    def __init__(self, dtype=None, dims=(), elems=None):
        self.dtype, self.dims, self.elems = dtype, list(dims), elems

    def leaves(self):
        if self.elems is not None:
            return [x for e in self.elems for x in e.leaves()]
        return [] if self.dtype == "token" else [self]

    def torch_dtype(self):
        if self.dtype not in DTYPES:
            raise Unsupported("element type %s has no torch dtype (torch %s)" % (self.dtype, torch.__version__))
        return DTYPES[self.dtype]


class Instr:
    def __init__(self, name, shape, op, operands, attrs, literal, line):
        self.name, self.shape, self.op = name, shape, op
        self.operands, self.attrs, self.literal, self.line = operands, attrs, literal, line


class Comp:
    def __init__(self, name):
        self.name, self.instrs, self.params, self.root = name, [], {}, None


def _match(s, i, open_c, close_c):
    """Index just past the bracket that closes s[i] (== open_c)."""
    depth = 0
    for j in range(i, len(s)):
        if s[j] in "([{":
            depth += 1
        elif s[j] in ")]}":
            depth -= 1
            if depth == 0:
                return j + 1
    raise ValueError("unbalanced %s" % open_c)


def _split_top(s, sep=","):
    """Splits s at sep outside any brackets."""
    out, depth, cur = [], 0, []
    for ch in s:
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        if ch == sep and depth == 0:
            out.append("".join(cur).strip())
            cur = []
        else:
            cur.append(ch)
    if "".join(cur).strip():
        out.append("".join(cur).strip())
    return out


def parse_shape(s, i=0):
    """(Shape, index past it) for the shape starting at s[i]."""
    while s[i] == " ":
        i += 1
    if s[i] == "(":
        end = _match(s, i, "(", ")")
        inner = s[i + 1:end - 1]
        elems = [parse_shape(p)[0] for p in _split_top(inner)] if inner.strip() else []
        return Shape(elems=elems), end
    m = re.compile(r"([a-z0-9]+)\[([^\]]*)\]").match(s, i)
    if not m:
        raise ValueError("expected a shape at '%s'" % s[i:i + 20])
    dims = []
    for d in m.group(2).split(","):
        d = d.strip()
        if not d:
            continue
        if not d.isdigit():
            raise Unsupported("dynamic dimension '%s'" % d)
        dims.append(int(d))
    j = m.end()
    if j < len(s) and s[j] == "{":  # layout
        j = _match(s, j, "{", "}")
    return Shape(m.group(1), dims), j


def parse(text):
    """HLO module text -> (computations by name, entry name)."""
    comps, entry, cur = {}, None, None
    for lineno, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if not line or line.startswith("HloModule") or line.startswith("//"):
            continue
        if cur is None:
            if not line.endswith("{"):
                raise ValueError("line %d: expected a computation" % lineno)
            words = line[:-1].split()
            is_entry = words[0] == "ENTRY"
            name = (words[1] if is_entry else words[0]).lstrip("%")
            name = name.split("(")[0]
            cur = Comp(name)
            if is_entry:
                entry = name
            continue
        if line == "}":
            comps[cur.name] = cur
            cur = None
            continue
        root = line.startswith("ROOT ")
        if root:
            line = line[5:]
        name, rest = line.split("=", 1)
        name = name.strip().lstrip("%")
        shape, i = parse_shape(rest.strip())
        rest = rest.strip()[i:].strip()
        m = re.match(r"([a-z0-9_\-]+)\(", rest)
        if not m:
            raise ValueError("line %d: expected an opcode" % lineno)
        op = m.group(1)
        end = _match(rest, m.end() - 1, "(", ")")
        inner = rest[m.end():end - 1]
        literal, operands = None, []
        if op == "constant":
            literal = inner
        elif op == "parameter":
            literal = inner.strip()
        else:
            operands = [p.split()[-1].lstrip("%") for p in _split_top(inner)]
        attrs = {}
        tail = rest[end:].strip().lstrip(",")
        for a in _split_top(tail):
            if "=" in a:
                k, v = a.split("=", 1)
                attrs[k.strip()] = v.strip().replace("%", "")
        ins = Instr(name, shape, op, operands, attrs, literal, lineno)
        cur.instrs.append(ins)
        if op == "parameter":
            cur.params[int(literal)] = ins
        if root:
            cur.root = ins
    if cur is not None:
        raise ValueError("computation %s is not closed" % cur.name)
    if entry is None:
        raise ValueError("no ENTRY computation")
    for c in comps.values():
        if c.root is None and c.instrs:
            c.root = c.instrs[-1]
    return comps, entry


def ints(v):
    """'{1,2}' -> [1, 2]."""
    v = v.strip().strip("{}").strip()
    return [int(x) for x in v.split(",") if x.strip()] if v else []


def parse_literal(text, shape):
    """A constant's literal -> numpy array of the shape's dims."""
    vals = [t for t in re.split(r"[\s,{}()]+", text) if t]
    n = 1
    for d in shape.dims:
        n *= d
    if shape.dtype == "pred":
        arr = np.array([v == "true" or v == "1" for v in vals], dtype=bool)
    elif shape.dtype[0] in "su":
        arr = np.array([int(v, 0) for v in vals], dtype=np.dtype(
            {"s": "int", "u": "uint"}[shape.dtype[0]] + shape.dtype[1:]))
    else:
        arr = np.array([float(v) for v in vals], dtype=np.float64)  # "-nan": sign bit set
    if arr.size != n:
        raise ValueError("constant has %d values, its shape %d" % (arr.size, n))
    return arr.reshape(shape.dims)


# --- helpers the generated code calls --------------------------------------

# The quiet NaN of each float type (sign bit clear), as XLA's literals
# (ml_dtypes) have it: torch's conversion of a NaN makes f8e5m2 0x7F, not
# 0x7E, and drops the sign of a bf16 NaN, which a bitcast-convert shows.
QNAN = {"float8_e5m2": (torch.uint8, 0x7E, 0x80), "float8_e4m3fn": (torch.uint8, 0x7F, 0x80),
        "bfloat16": (torch.int16, 0x7FC0, -0x8000), "float16": (torch.int16, 0x7E00, -0x8000)}


def const(arr, dtype):
    a = np.array(arr, copy=True, order="C").reshape(arr.shape)
    t = torch.from_numpy(a).to(dtype)
    q = QNAN.get(str(dtype).split(".")[1])
    if q is not None and a.dtype.kind == "f" and np.isnan(a).any():
        it, nan, sign = q
        b = t.view(it).clone()
        neg = torch.from_numpy(np.signbit(a))
        b[torch.from_numpy(np.isnan(a))] = nan
        b[torch.from_numpy(np.isnan(a)) & neg] = nan | sign if sign > 0 else nan + sign
        t = b.view(dtype)
    return t


def iinfo(dtype):
    return torch.iinfo(dtype)


def convert(x, dtype):
    """HLO convert: float -> integer saturates and maps NaN to 0 (XLA's
    definition); float -> pred is x != 0."""
    if dtype == torch.bool:
        return x != 0
    if x.is_floating_point() and not dtype.is_floating_point:
        info = torch.iinfo(dtype)
        d = x.double()
        d = torch.where(torch.isnan(d), torch.zeros_like(d), d)
        if info.bits < 64:
            return d.clamp(info.min, info.max).to(dtype)
        hi = d >= float(info.max)
        lo = d <= float(info.min)
        mid = torch.where(hi | lo, torch.zeros_like(d), d).to(dtype)
        mid = torch.where(hi, torch.full_like(mid, info.max), mid)
        return torch.where(lo, torch.full_like(mid, info.min), mid)
    if dtype == DTYPES.get("f8e4m3fn") and x.dtype != torch.bool:
        # torch saturates to +-448 (inf too); HLO rounds, and e4m3fn has
        # no inf: beyond 464 (halfway to 480) the result is NaN. Integers
        # too (s32 2^30 -> NaN, not 448), through f64: exact where it
        # matters (|x| <= 464), and abs(MIN) does not wrap.
        if not x.is_floating_point():
            x = x.double()
        big = x.abs() > 464
        return torch.where(big | torch.isnan(x), torch.full_like(x, float("nan")), x).to(dtype)
    return x.to(dtype)


def f8e4m3fn_op(fn, *xs):
    """fn on f8e4m3fn operands in f32 (exact for +, -, *, min, max of
    f8 values), rounded to f8e4m3fn as HLO does (convert: NaN beyond 464)."""
    return convert(fn(*[x.float() for x in xs]), DTYPES["f8e4m3fn"])


def idiv(x, y):
    """HLO integer divide: truncates; x/0 = -1 (all ones), MIN/-1 = MIN."""
    one = torch.ones_like(y)
    safe = torch.where(y == 0, one, y)
    if x.dtype.is_signed:
        mn = torch.iinfo(x.dtype).min
        safe = torch.where((x == mn) & (y == -1), one, safe)
    q = torch.div(x, safe, rounding_mode="trunc")
    return torch.where(y == 0, torch.full_like(q, -1) if x.dtype.is_signed
                       else torch.full_like(q, torch.iinfo(x.dtype).max), q)


def irem(x, y):
    """HLO integer remainder: sign of the dividend; x%0 = x; MIN%-1 = 0."""
    one = torch.ones_like(y)
    safe = torch.where(y == 0, one, y)
    if x.dtype.is_signed:
        safe = torch.where((x == torch.iinfo(x.dtype).min) & (y == -1), one, safe)
    r = torch.fmod(x, safe)
    return torch.where(y == 0, x, r)


def ipow(x, y):
    """HLO integer power: a negative exponent gives 1 for base 1, else 0."""
    p = torch.pow(x, torch.clamp(y, min=0))
    if not x.dtype.is_signed:
        return p
    neg = torch.where(x == 1, torch.ones_like(x), torch.zeros_like(x))
    return torch.where(y < 0, neg, p)


def cbrt(x):
    """torch has no cbrt: pow(|x|, 1/3) in f64, rounded once to a narrower
    type (f64 itself would be off by an ulp: 1/3 is inexact)."""
    if x.dtype == torch.float64:
        raise Unsupported("cbrt of f64: torch has no cbrt and pow(x, 1/3) is not exact in f64")
    d = x.double()
    return torch.copysign(torch.pow(torch.abs(d), 1.0 / 3.0), d).to(x.dtype)


def bits(dtype):
    return torch.iinfo(dtype).bits


def shift(x, n, kind):
    """HLO shifts: the amount is unsigned; an amount >= the width gives 0
    (or the sign for an arithmetic right shift)."""
    w = bits(x.dtype)
    oor = (n < 0) | (n >= w) if x.dtype.is_signed else n >= w
    nc = torch.where(oor, torch.zeros_like(n), n)
    zero = torch.zeros_like(x)
    if kind == "left":
        return torch.where(oor, zero, torch.bitwise_left_shift(x, nc))
    if kind == "arith" and not x.dtype.is_signed:
        # HLO: copies of the top bit, unsigned types too.
        st = {8: torch.int8, 16: torch.int16, 32: torch.int32, 64: torch.int64}[w]
        return shift(x.view(st), n.view(st), "arith").view(x.dtype)
    if kind == "arith":
        fill = torch.where(x < 0, torch.full_like(x, -1), zero) if x.dtype.is_signed else zero
        return torch.where(oor, fill, torch.bitwise_right_shift(x, nc))
    if not x.dtype.is_signed:
        return torch.where(oor, zero, torch.bitwise_right_shift(x, nc))
    if w < 64:
        mask = (1 << w) - 1
        r = torch.bitwise_right_shift(x.long() & mask, nc.long())
        r = torch.where(r > torch.iinfo(x.dtype).max, r - (1 << w), r).to(x.dtype)
        return torch.where(oor, zero, r)
    ar = torch.bitwise_right_shift(x, nc)
    mask = torch.bitwise_left_shift(torch.ones_like(x), 64 - nc) - 1
    r = torch.where(nc == 0, x, ar & mask)
    return torch.where(oor, zero, r)


# Set bits of every byte value: popcnt looks its bytes up (a few ops,
# where a loop over the bits made a graph of 3 ops a bit, 192 for 64-bit
# types, for Inductor to compile).
POP8 = torch.tensor([bin(i).count("1") for i in range(256)], dtype=torch.int64)


def dense(x):
    """x flattened into a fresh buffer with stride 1, which view(dtype) of
    another width needs. clone() keeps a strided view's strides where the
    size is 1 (the noncontig realisation: a u32[1] of stride 2), and
    contiguous() calls such a tensor contiguous."""
    return x.reshape(-1).clone(memory_format=torch.contiguous_format)


def popcnt(x):
    """HLO popcnt: the bytes of each element (cloned: a view at an odd
    storage offset cannot be viewed as bytes of a wider type), looked up."""
    b = dense(x).view(torch.uint8).reshape(list(x.shape) + [x.element_size()])
    return POP8[b.to(torch.int64)].sum(-1).to(x.dtype)


def clz(x):
    w = bits(x.dtype)
    hb = torch.full_like(x, -1) if x.dtype.is_signed else None
    if hb is None:
        raise Unsupported("count-leading-zeros on unsigned types")
    for i in range(w):
        hb = torch.where((torch.bitwise_right_shift(x, i) & 1) == 1, torch.full_like(x, i), hb)
    return (w - 1) - hb


def round_afz(x):
    t = torch.trunc(x)
    return torch.where(torch.abs(x - t) >= 0.5, t + torch.sign(x), t)


def sign(x):
    if x.is_floating_point():
        return torch.where(torch.isnan(x) | (x == 0), x, torch.sign(x))
    return torch.sign(x)


def broadcast(x, dims, out):
    """HLO broadcast: operand dim i becomes output dim dims[i]."""
    order = sorted(range(len(dims)), key=lambda i: dims[i])
    if order != list(range(len(dims))):
        x = x.permute(order)
    sd = sorted(dims)
    view = [1] * len(out)
    for i, d in enumerate(sd):
        view[d] = x.shape[i]
    return x.reshape(view).expand(out)


def iota(dtype, out, dim):
    r = torch.arange(out[dim], dtype=torch.int64)
    view = [1] * len(out)
    view[dim] = out[dim]
    return convert(r.reshape(view).expand(out), dtype).contiguous()


def slice_(x, spec):
    return x[tuple(slice(a, b, s) for a, b, s in spec)]


def pad(x, v, cfg):
    """HLO pad: lo/hi edges (negative ones cut) and interior padding."""
    big, place, cut = [], [], []
    for n, (lo, hi, it) in zip(x.shape, cfg):
        core = n + max(n - 1, 0) * it
        big.append(max(lo, 0) + core + max(hi, 0))
        place.append(slice(max(lo, 0), max(lo, 0) + core, it + 1))
        cut.append(slice(-min(lo, 0), big[-1] + min(hi, 0)))
    out = v.reshape([]).expand(big).clone()
    out[tuple(place)] = x
    return out[tuple(cut)]


# Starts of these types are clamped as tensors: no int() that would break
# dynamo's graph and specialize it on the start's value (a recompile per
# trip of a while loop). Other types (uint16/32/64: torch has few kernels
# for them) are read with int().
TENSOR_STARTS = (torch.int8, torch.int16, torch.int32, torch.int64, torch.uint8)


def _dwindow(x, starts, sizes):
    """Linear indices of the window of x at HLO's clamped starts, or a
    tuple of slices when a start is not a tensor of TENSOR_STARTS."""
    if not all(isinstance(s, torch.Tensor) and s.dtype in TENSOR_STARTS for s in starts):
        return tuple(slice(v, v + k) for v, k in
                     ((min(max(int(s), 0), n - k), k) for n, s, k in zip(x.shape, starts, sizes)))
    r = x.dim()
    lin = torch.zeros([1] * r, dtype=torch.int64)
    stride = 1
    for d in reversed(range(r)):
        n, k = x.shape[d], sizes[d]
        s = starts[d].to(torch.int64).clamp(0, n - k)
        view = [1] * r
        view[d] = k
        lin = lin + (s + torch.arange(k, dtype=torch.int64)).reshape(view) * stride
        stride *= n
    return lin.expand(list(sizes)).reshape(-1)


def dslice(x, starts, sizes):
    w = _dwindow(x, starts, sizes)
    if isinstance(w, tuple):
        return x[w]
    return x.reshape(-1)[w].reshape(list(sizes))


def dupdate(x, u, starts):
    w = _dwindow(x, starts, list(u.shape))
    out = x.clone()
    if isinstance(w, tuple):
        out[w] = u
        return out
    flat = out.reshape(-1)
    flat[w] = u.reshape(-1)
    return flat.reshape(x.shape)


def clamp(lo, x, hi):
    return torch.minimum(torch.maximum(x, lo), hi)


def dot(a, b, lb, rb, lc, rc, dtype):
    """HLO dot as einsum: batch dims, then lhs free, then rhs free."""
    letters = "abcdefghijklmnopqrstuvwxyz"
    la = [None] * a.dim()
    ra = [None] * b.dim()
    k = 0
    out = []
    for x, y in zip(lb, rb):
        la[x] = ra[y] = letters[k]
        out.append(letters[k])
        k += 1
    for x, y in zip(lc, rc):
        la[x] = ra[y] = letters[k]
        k += 1
    for i in range(a.dim()):
        if la[i] is None:
            la[i] = letters[k]
            out.append(letters[k])
            k += 1
    for i in range(b.dim()):
        if ra[i] is None:
            ra[i] = letters[k]
            out.append(letters[k])
            k += 1
    a, b = convert(a, dtype), convert(b, dtype)
    return torch.einsum("%s,%s->%s" % ("".join(la), "".join(ra), "".join(out)), a, b)


def dilate(x, dims_factors, fill):
    """Inserts factor-1 fill elements between elements along each dim."""
    shape = list(x.shape)
    place = [slice(None)] * x.dim()
    for d, f in dims_factors:
        if f > 1:
            shape[d] = max(shape[d] - 1, 0) * f + 1 if shape[d] else 0
            place[d] = slice(None, None, f)
    if shape == list(x.shape):
        return x
    out = torch.full(shape, fill, dtype=x.dtype) if not torch.is_tensor(fill) \
        else fill.reshape([]).expand(shape).clone()
    out[tuple(place)] = x
    return out


def conv(x, k, lhs, rhs, outl, win, groups, dtype):
    """HLO convolution through conv1d/2d/3d. lhs/rhs/outl are the
    dim_labels parts; win the parsed window."""
    ns = len(lhs) - 2
    lp = [lhs.index("b"), lhs.index("f")] + [lhs.index(str(i)) for i in range(ns)]
    rp = [rhs.index("o"), rhs.index("i")] + [rhs.index(str(i)) for i in range(ns)]
    x = convert(x, dtype).permute(lp)
    k = convert(k, dtype).permute(rp)
    x = dilate(x, [(2 + i, win["lhs_dilate"][i]) for i in range(ns)], 0)
    x = pad(x, torch.zeros([], dtype=x.dtype), [(0, 0, 0), (0, 0, 0)] +
            [(lo, hi, 0) for lo, hi in win["pad"]])
    if any(win["rhs_reversal"]):
        k = torch.flip(k, [2 + i for i in range(ns) if win["rhs_reversal"][i]])
    # A window wider than the padded input gives HLO an empty result
    # (size 0 there); torch refuses such a convolution, and empty inputs.
    sp = []
    for i in range(ns):
        span = (k.shape[2 + i] - 1) * win["rhs_dilate"][i] + 1
        sp.append(max(0, (x.shape[2 + i] - span) // win["stride"][i] + 1))
    if 0 in sp or x.numel() == 0 or k.numel() == 0:
        y = torch.zeros([x.shape[0], k.shape[0]] + sp, dtype=x.dtype)
    else:
        fn = {1: torch.nn.functional.conv1d, 2: torch.nn.functional.conv2d,
              3: torch.nn.functional.conv3d}[ns]
        y = fn(x, k, stride=win["stride"], dilation=win["rhs_dilate"], groups=groups)
    # y is (b, f, 0, 1, ...); the output labels say where each goes.
    src = ["b", "f"] + [str(i) for i in range(ns)]
    return y.permute([src.index(c) for c in outl])


REDUCERS = ("add", "multiply", "maximum", "minimum", "and", "or")


def combine(kind, a, b):
    if kind == "add":
        return a + b
    if kind == "multiply":
        return a * b
    if kind == "maximum":
        return torch.maximum(a, b)
    if kind == "minimum":
        return torch.minimum(a, b)
    if kind == "and":
        return a & b
    return a | b


def reduce_dims(kind, x, dims):
    """Reduces x over dims with a standard combiner (no init)."""
    if kind == "add":
        return torch.sum(x, dims, dtype=x.dtype)
    if kind == "multiply":
        keep = [i for i in range(x.dim()) if i not in dims]
        n = 1  # the reduced count, explicit: -1 is ambiguous when a kept dim is 0
        for d in dims:
            n *= x.shape[d]
        y = x.permute(keep + list(dims)).reshape([x.shape[i] for i in keep] + [n])
        return torch.prod(y, -1, dtype=x.dtype)
    if kind == "maximum":
        return torch.amax(x, dims)
    if kind == "minimum":
        return torch.amin(x, dims)
    if x.dtype != torch.bool:
        raise Unsupported("bitwise %s reduction of integers" % kind)
    y = x
    for d in sorted(dims, reverse=True):
        y = torch.all(y, d) if kind == "and" else torch.any(y, d)
    return y


def reduce(kind, x, init, dims):
    if not dims:
        return combine(kind, x, init)
    if any(x.shape[d] == 0 for d in dims):
        keep = [x.shape[i] for i in range(x.dim()) if i not in dims]
        return init.reshape([]).expand(keep).clone()
    return combine(kind, reduce_dims(kind, x, list(dims)), init)


def identity(kind, dtype):
    """The combiner's identity: what padding and base-dilation holes hold,
    so that they contribute nothing (the HloEvaluator skips them; the init
    enters each window once, in reduce(), which matters when it is not an
    identity: a mutated module's init 6 of an add)."""
    if dtype == torch.bool:
        return torch.tensor(kind == "and")
    if kind in ("add", "or"):
        return torch.tensor(-0.0 if dtype.is_floating_point else 0, dtype=dtype)
    if kind in ("multiply", "and"):
        return torch.tensor(1, dtype=dtype)
    if dtype.is_floating_point:
        # max / min: -inf / +inf, or the finite extreme of a type without
        # infinities (f8e4m3fn)
        v = float("-inf") if kind == "maximum" else float("inf")
        t = torch.tensor(v).to(dtype)
        if not torch.isinf(t.float()):
            t = torch.tensor(torch.finfo(dtype).min if kind == "maximum" else torch.finfo(dtype).max).to(dtype)
        return t
    info = torch.iinfo(dtype)
    return torch.tensor(info.min if kind == "maximum" else info.max, dtype=dtype)


def reduce_window(kind, x, init, size, stride, pads, base, wdil):
    r = x.dim()
    fill = identity(kind, x.dtype)
    x = dilate(x, [(d, base[d]) for d in range(r)], fill)
    x = pad(x, fill, [(lo, hi, 0) for lo, hi in pads])
    for d in range(r):
        span = (size[d] - 1) * wdil[d] + 1
        if x.shape[d] < span:
            shape = list(x.shape)
            shape[d] = 0
            x = x.new_empty(shape + [1])  # an empty output along d
            x = x[..., 0]
            continue
        x = x.unfold(d, span, stride[d])
        if wdil[d] > 1:
            x = x[..., ::wdil[d]]
    if any(n == 0 for n in x.shape[:r]):
        return init.reshape([]).expand(list(x.shape[:r])).clone()
    return reduce(kind, x, init, list(range(r, x.dim())))


def _index_vectors(idx, ivd):
    if ivd == idx.dim():
        idx = idx.unsqueeze(-1)
    elif ivd != idx.dim() - 1:
        idx = idx.movedim(ivd, -1)
    return idx.long()


def gather(x, idx, offset_dims, collapsed, sim, ivd, sizes):
    idx = _index_vectors(idx, ivd)
    batch = list(idx.shape[:-1])
    nb, r = len(batch), x.dim()
    lin = torch.zeros(batch + [1] * r, dtype=torch.int64)
    stride = 1
    for d in reversed(range(r)):
        if d in sim:
            s = idx[..., sim.index(d)].clamp(0, x.shape[d] - sizes[d])
        else:
            s = torch.zeros(batch, dtype=torch.int64)
        view = [1] * (nb + r)
        view[nb + d] = sizes[d]
        off = torch.arange(sizes[d], dtype=torch.int64).reshape(view)
        lin = lin + (s.reshape(batch + [1] * r) + off) * stride
        stride *= x.shape[d]
    y = x.reshape(-1)[lin.reshape(-1)].reshape(batch + list(sizes))
    y = y.reshape(batch + [sizes[d] for d in range(r) if d not in collapsed])
    perm, bi = [], 0
    for p in range(nb + r - len(collapsed)):
        if p in offset_dims:
            perm.append(nb + offset_dims.index(p))
        else:
            perm.append(bi)
            bi += 1
    return y.permute(perm)


def scatter(kind, x, idx, upd, uwd, inserted, sd2od, ivd):
    """HLO scatter with one operand; an update whose window is not wholly
    inside the operand is skipped."""
    idx = _index_vectors(idx, ivd)
    batch = list(idx.shape[:-1])
    nb, r = len(batch), x.dim()
    sdims = [d for d in range(upd.dim()) if d not in uwd]
    upd = upd.permute(sdims + list(uwd))
    wdims = [d for d in range(r) if d not in inserted]
    win = [1] * r
    for i, d in enumerate(wdims):
        win[d] = upd.shape[nb + i]
    upd = upd.reshape(batch + win)
    lin = torch.zeros(batch + [1] * r, dtype=torch.int64)
    ok = torch.ones(batch, dtype=torch.bool)
    stride = 1
    for d in reversed(range(r)):
        if d in sd2od:
            s = idx[..., sd2od.index(d)]
        else:
            s = torch.zeros(batch, dtype=torch.int64)
        ok = ok & (s >= 0) & (s <= x.shape[d] - win[d])
        view = [1] * (nb + r)
        view[nb + d] = win[d]
        off = torch.arange(win[d], dtype=torch.int64).reshape(view)
        lin = lin + (s.reshape(batch + [1] * r) + off) * stride
        stride *= x.shape[d]
    ok = ok.reshape(batch + [1] * r).expand(batch + win)
    lin = lin.expand(batch + win)[ok]
    vals = upd[ok]
    out = x.clone().reshape(-1)
    if kind == "overwrite":
        out[lin] = vals
    elif kind == "add":
        out.index_add_(0, lin, vals)
    else:
        red = {"multiply": "prod", "maximum": "amax", "minimum": "amin"}.get(kind)
        if red is None:
            raise Unsupported("scatter combiner %s" % kind)
        out.scatter_reduce_(0, lin, vals, red, include_self=True)
    return out.reshape(x.shape)


def sort(xs, dim, key, descending):
    _, order = torch.sort(xs[key], dim=dim, descending=descending, stable=True)
    return tuple(torch.take_along_dim(x, order, dim) for x in xs)


def total_order(x):
    """A float tensor's elements as signed integers in HLO's TOTALORDER:
    -NaN < -inf < ... < -0 < +0 < ... < inf < +NaN (the bits, with the
    magnitude bits of negatives flipped). torch's sort has -0 == +0 and
    every NaN largest."""
    if not x.is_floating_point():
        return x
    it = {1: torch.int8, 2: torch.int16, 4: torch.int32, 8: torch.int64}[x.element_size()]
    b = x.contiguous().view(it)
    mag = torch.iinfo(it).max
    return torch.bitwise_xor(b, torch.bitwise_and(torch.bitwise_right_shift(b, x.element_size() * 8 - 1), mag))


def topk(x, k, largest):
    """XLA's TopkDecomposer: a stable sort by TOTALORDER, the first k."""
    _, i = torch.sort(total_order(x), dim=-1, descending=largest, stable=True)
    i = i[..., :k]
    return torch.take_along_dim(x, i, -1), i.to(torch.int32)


def bitcast(x, dtype, out):
    """HLO bitcast-convert: flattened first, since torch cannot view a 0-d
    tensor as a type of another width (f32[] -> f8e4m3fn[4]); and cloned,
    since a wider type's view needs an aligned storage offset (an input
    that is a view into a buffer, the offset realisation)."""
    return dense(x).view(dtype).reshape(out)


def branch(i, fs, args):
    """HLO conditional with an index: out of range runs the last branch."""
    i = int(i)
    i = i if 0 <= i < len(fs) else len(fs) - 1
    return fs[i](args[i])


# --- lowering --------------------------------------------------------------

UNARY = {
    "abs": "torch.abs", "negate": "torch.neg", "exponential": "torch.exp",
    "exponential-minus-one": "torch.expm1", "log": "torch.log",
    "log-plus-one": "torch.log1p", "sqrt": "torch.sqrt", "rsqrt": "torch.rsqrt",
    "sine": "torch.sin", "cosine": "torch.cos", "tan": "torch.tan",
    "tanh": "torch.tanh", "logistic": "torch.sigmoid", "floor": "torch.floor",
    "ceil": "torch.ceil", "round-nearest-even": "torch.round",
    "round-nearest-afz": "H.round_afz", "is-finite": "torch.isfinite",
    "erf": "torch.erf", "sign": "H.sign", "popcnt": "H.popcnt",
    "count-leading-zeros": "H.clz", "copy": "torch.clone",
}
BINARY = {
    "add": "torch.add", "subtract": "torch.sub", "multiply": "torch.mul",
    "maximum": "torch.maximum", "minimum": "torch.minimum", "atan2": "torch.atan2",
    "and": "torch.bitwise_and", "or": "torch.bitwise_or", "xor": "torch.bitwise_xor",
}
CMP = {"EQ": "torch.eq", "NE": "torch.ne", "LT": "torch.lt", "LE": "torch.le",
       "GT": "torch.gt", "GE": "torch.ge"}


def _pyname(name):
    return "v_" + re.sub(r"[^0-9A-Za-z_]", "_", name)


def _window(attr, r):
    w = {"size": [1] * r, "stride": [1] * r, "pad": [(0, 0)] * r,
         "lhs_dilate": [1] * r, "rhs_dilate": [1] * r, "rhs_reversal": [0] * r}
    for part in attr.strip("{}").split():
        k, v = part.split("=", 1)
        if k == "pad":
            w["pad"] = [tuple(int(a) for a in re.match(r"(-?\d+)_(-?\d+)", p).groups())
                        for p in v.split("x")]
        elif k in w:
            w[k] = [int(a) for a in v.split("x")]
        else:
            raise Unsupported("window attribute %s" % k)
    return w


# Forms of the element-wise calls (the adapter's realisations): "call"
# writes torch.add(a, b); "inplace" the in-place method on a clone of the
# first operand, a.clone().add_(b); "out" the call into a fresh buffer,
# torch.add(a, b, out=torch.empty_like(a)). Only where the result has the
# first operand's dtype and shape (so neither form changes what is
# computed) and torch has the in-place method.
FORMS = ("call", "inplace", "out")


class Lowering:
    def __init__(self, comps, entry, form="call"):
        self.comps, self.entry, self.form = comps, entry, form
        self.shapes = {}      # instruction name -> Shape, per computation
        self.consts = []      # numpy arrays and dtypes, bound as C[i]
        self.lines = []
        self.done = set()

    def combiner(self, cname, scatter=False):
        """The standard combiner a reduction computation is, or Unsupported."""
        c = self.comps.get(cname)
        if c is None:
            raise Unsupported("no computation %s" % cname)
        r = c.root
        if len(c.params) != 2:
            raise Unsupported("reduction computation %s has %d parameters" % (cname, len(c.params)))
        names = [c.params[0].name, c.params[1].name]
        if scatter and r.op == "parameter" and r.literal == "1":
            return "overwrite"
        if r.op in REDUCERS and len(c.instrs) == 3 and sorted(r.operands) == sorted(names):
            return r.op
        raise Unsupported("reduction computation %s is not a standard combiner "
                          "(add, multiply, maximum, minimum, and, or of its two parameters)" % cname)

    def comparator(self, cname, n):
        """(key operand, descending) for a sort comparator, or Unsupported."""
        c = self.comps[cname]
        r = c.root
        if r.op != "compare" or r.attrs.get("type", "").upper() == "TOTALORDER":
            raise Unsupported("sort comparator %s is not a plain LT/GT compare" % cname)
        pos = {c.params[i].name: i for i in c.params}
        a, b = (pos.get(o) for o in r.operands)
        d = r.attrs.get("direction")
        if a is None or b is None or a // 2 != b // 2 or len(c.instrs) != 2 * n + 1:
            raise Unsupported("sort comparator %s is not a plain compare of one key" % cname)
        if d not in ("LT", "GT"):
            raise Unsupported("sort comparator direction %s" % d)
        desc = (d == "GT") != (a > b)
        return a // 2, desc

    def form_call(self, ins, fn, a):
        """fn(a...) in this lowering's form (FORMS)."""
        plain = "%s(%s)" % (fn, ", ".join(a))
        first = self.shapes.get(ins.operands[0])
        if self.form == "call" or not fn.startswith("torch.") or fn == "torch.clone" or first is None or \
                first.elems is not None or first.dtype != ins.shape.dtype or first.dims != ins.shape.dims:
            return plain
        name = fn[len("torch."):]
        if self.form == "inplace":
            if not hasattr(torch.Tensor, name + "_"):
                return plain
            return "%s.clone().%s_(%s)" % (a[0], name, ", ".join(a[1:]))
        return "%s(%s, out=torch.empty_like(%s))" % (fn, ", ".join(a), a[0])

    def const_ref(self, arr, dtype):
        self.consts.append((arr, dtype))
        return "C[%d]" % (len(self.consts) - 1)

    def function(self, cname):
        if cname in self.done:
            return "f_" + _pyname(cname)
        self.done.add(cname)
        c = self.comps.get(cname)
        if c is None:
            raise Unsupported("no computation %s" % cname)
        body = []
        params = [_pyname(c.params[i].name) for i in sorted(c.params)]
        outer, self.shapes = self.shapes, {ins.name: ins.shape for ins in c.instrs}
        # Only what the root needs, as the reference evaluates: a dead
        # while loop of 2^31 trips (a counter from INT_MIN) is no result
        # of the module, but a Python loop would run all of them.
        byname = {ins.name: ins for ins in c.instrs}
        live, todo = set(), [c.root.name]
        while todo:
            n = todo.pop()
            if n not in live and n in byname:
                live.add(n)
                todo.extend(byname[n].operands)
        for ins in c.instrs:
            if ins.op == "parameter" or ins.name not in live:
                continue
            body.append("    %s = %s" % (_pyname(ins.name), self.expr(ins)))
        self.shapes = outer
        body.append("    return %s" % _pyname(c.root.name))
        self.lines += ["def f_%s(%s):" % (_pyname(cname), ", ".join(params))] + body + [""]
        return "f_" + _pyname(cname)

    def expr(self, ins):
        op, a, at = ins.op, [_pyname(o) for o in ins.operands], ins.attrs
        sh = ins.shape
        dt = lambda: "torch.%s" % str(sh.torch_dtype()).split(".")[1]  # noqa: E731
        if sh.dtype == "f8e4m3fn" and (op in UNARY or op in BINARY or op in ("divide", "power")) \
                and "f8e4m3fn" in DTYPES:
            # torch computes f8e4m3fn arithmetic in float and saturates the
            # result to +-448; HLO rounds it, NaN beyond 464 (convert()).
            fn = UNARY.get(op) or BINARY.get(op) or {"divide": "torch.div", "power": "torch.pow"}[op]
            return "H.f8e4m3fn_op(%s, %s)" % (fn, ", ".join(a))
        if op in UNARY:
            return self.form_call(ins, UNARY[op], a)
        if op == "not":
            return self.form_call(ins, "torch.bitwise_not", a)
        if op in BINARY:
            return self.form_call(ins, BINARY[op], a)
        if op in ("divide", "remainder", "power"):
            ints_ = sh.dtype[0] in "su"
            if op == "divide":
                return ("H.idiv(%s, %s)" if ints_ else "torch.div(%s, %s)") % (a[0], a[1])
            if op == "remainder":
                return ("H.irem(%s, %s)" if ints_ else "torch.fmod(%s, %s)") % (a[0], a[1])
            return ("H.ipow(%s, %s)" if ints_ else "torch.pow(%s, %s)") % (a[0], a[1])
        if op in ("shift-left", "shift-right-arithmetic", "shift-right-logical"):
            kind = {"shift-left": "left", "shift-right-arithmetic": "arith"}.get(op, "logical")
            return "H.shift(%s, %s, %r)" % (a[0], a[1], kind)
        if op == "cbrt":
            return "H.cbrt(%s)" % a[0]
        if op == "compare":
            if at.get("type", "").upper() == "TOTALORDER":
                raise Unsupported("compare with type=TOTALORDER has no torch form")
            return "%s(%s, %s)" % (CMP[at["direction"]], a[0], a[1])
        if op == "select":
            return "torch.where(%s, %s, %s)" % (a[0], a[1], a[2])
        if op == "clamp":
            return "H.clamp(%s, %s, %s)" % (a[0], a[1], a[2])
        if op == "convert":
            return "H.convert(%s, %s)" % (a[0], dt())
        if op == "bitcast-convert":
            return "H.bitcast(%s, %s, %r)" % (a[0], dt(), sh.dims)
        if op == "constant":
            arr = parse_literal(ins.literal, sh)
            return self.const_ref(arr, sh.torch_dtype())
        if op == "iota":
            return "H.iota(%s, %r, %d)" % (dt(), sh.dims, int(at["iota_dimension"]))
        if op == "broadcast":
            return "H.broadcast(%s, %r, %r)" % (a[0], ints(at.get("dimensions", "{}")), sh.dims)
        if op in ("reshape", "bitcast"):
            return "%s.reshape(%r)" % (a[0], sh.dims)
        if op == "transpose":
            return "%s.permute(%r)" % (a[0], ints(at["dimensions"]))
        if op == "reverse":
            return "torch.flip(%s, %r)" % (a[0], ints(at["dimensions"]))
        if op == "concatenate":
            return "torch.cat([%s], %d)" % (", ".join(a), ints(at["dimensions"])[0])
        if op == "slice":
            spec = []
            for part in re.findall(r"\[([^\]]*)\]", at["slice"]):
                v = [int(x) for x in part.split(":")]
                spec.append((v[0], v[1], v[2] if len(v) > 2 else 1))
            return "H.slice_(%s, %r)" % (a[0], spec)
        if op == "pad":
            cfg = []
            for p in at["padding"].split("x"):
                v = [int(x) for x in p.split("_")]
                cfg.append((v[0], v[1], v[2] if len(v) > 2 else 0))
            return "H.pad(%s, %s, %r)" % (a[0], a[1], cfg)
        if op == "dynamic-slice":
            return "H.dslice(%s, [%s], %r)" % (a[0], ", ".join(a[1:]), ints(at["dynamic_slice_sizes"]))
        if op == "dynamic-update-slice":
            return "H.dupdate(%s, %s, [%s])" % (a[0], a[1], ", ".join(a[2:]))
        if op == "tuple":
            return "(%s)" % "".join(x + ", " for x in a)
        if op == "get-tuple-element":
            return "%s[%d]" % (a[0], int(at["index"]))
        if op == "opt-barrier":
            return a[0]
        if op == "dot":
            if at.get("algorithm") or at.get("operand_precision") not in (None, "{default,default}"):
                raise Unsupported("dot with a precision or algorithm attribute")
            return "H.dot(%s, %s, %r, %r, %r, %r, %s)" % (
                a[0], a[1], ints(at.get("lhs_batch_dims", "{}")), ints(at.get("rhs_batch_dims", "{}")),
                ints(at.get("lhs_contracting_dims", "{}")), ints(at.get("rhs_contracting_dims", "{}")), dt())
        if op == "convolution":
            if int(at.get("batch_group_count", "1")) != 1:
                raise Unsupported("convolution with batch_group_count > 1 (no torch form)")
            lab = at["dim_labels"]
            m = re.match(r"(\w+)_(\w+)->(\w+)$", lab)
            lhs, rhs, outl = m.groups()
            ns = len(lhs) - 2
            if ns not in (1, 2, 3):
                raise Unsupported("convolution with %d spatial dims (torch has conv1d-3d)" % ns)
            win = _window(at.get("window", "{}"), ns)
            return "H.conv(%s, %s, %r, %r, %r, %r, %d, %s)" % (
                a[0], a[1], lhs, rhs, outl, win, int(at.get("feature_group_count", "1")), dt())
        if op == "reduce":
            if len(ins.operands) != 2:
                raise Unsupported("variadic reduce (%d operands)" % (len(ins.operands) // 2))
            kind = self.combiner(at["to_apply"])
            return "H.reduce(%r, %s, %s, %r)" % (kind, a[0], a[1], ints(at["dimensions"]))
        if op == "reduce-window":
            if len(ins.operands) != 2:
                raise Unsupported("variadic reduce-window")
            kind = self.combiner(at["to_apply"])
            w = _window(at.get("window", "{}"), len(sh.dims))
            if any(w["rhs_reversal"]):
                raise Unsupported("reduce-window with window reversal")
            return "H.reduce_window(%r, %s, %s, %r, %r, %r, %r, %r)" % (
                kind, a[0], a[1], w["size"], w["stride"], w["pad"], w["lhs_dilate"], w["rhs_dilate"])
        if op == "gather":
            if at.get("operand_batching_dims"):
                raise Unsupported("gather with operand_batching_dims")
            return "H.gather(%s, %s, %r, %r, %r, %d, %r)" % (
                a[0], a[1], ints(at.get("offset_dims", "{}")), ints(at.get("collapsed_slice_dims", "{}")),
                ints(at.get("start_index_map", "{}")), int(at["index_vector_dim"]), ints(at["slice_sizes"]))
        if op == "scatter":
            if len(ins.operands) != 3:
                raise Unsupported("variadic scatter")
            if at.get("input_batching_dims"):
                raise Unsupported("scatter with input_batching_dims")
            kind = self.combiner(at["to_apply"], scatter=True)
            return "H.scatter(%r, %s, %s, %s, %r, %r, %r, %d)" % (
                kind, a[0], a[1], a[2], ints(at.get("update_window_dims", "{}")),
                ints(at.get("inserted_window_dims", "{}")),
                ints(at.get("scatter_dims_to_operand_dims", "{}")), int(at["index_vector_dim"]))
        if op == "sort":
            key, desc = self.comparator(at["to_apply"], len(a))
            d = ints(at["dimensions"])[0]
            if len(a) == 1:
                return "H.sort([%s], %d, 0, %r)[0]" % (a[0], d, desc)
            return "H.sort([%s], %d, %d, %r)" % (", ".join(a), d, key, desc)
        if op == "topk":
            return "H.topk(%s, %d, %s)" % (a[0], int(at["k"]), at.get("largest", "true") == "true")
        if op == "call":
            return "%s(%s)" % (self.function(at["to_apply"]), ", ".join(a))
        if op == "map":
            return "%s(%s)" % (self.function(at["to_apply"]), ", ".join(a))
        if op == "while":
            cf, bf = self.function(at["condition"]), self.function(at["body"])
            return "H.loop(%s, %s, %s)" % (cf, bf, a[0])
        if op == "conditional":
            if "branch_computations" in at:
                fs = [self.function(n.strip().lstrip("%"))
                      for n in at["branch_computations"].strip("{}").split(",")]
                return "H.branch(%s, [%s], [%s])" % (a[0], ", ".join(fs), ", ".join(a[1:]))
            tf, ff = self.function(at["true_computation"]), self.function(at["false_computation"])
            return "(%s(%s) if bool(%s) else %s(%s))" % (tf, a[1], a[0], ff, a[2])
        raise Unsupported("HLO op '%s' has no torch translation" % op)


def loop(cond, body, state):
    """HLO while: a Python loop over the body."""
    while bool(cond(state)):
        state = body(state)
    return state


def lower(text, form="call"):
    """HLO text -> (Python source defining f_main and the entry's name,
    constants list). The source expects names torch, H (this module) and C
    (the constants, as tensors). form: one of FORMS."""
    comps, entry = parse(text)
    lw = Lowering(comps, entry, form)
    for c in comps.values():
        for ins in c.instrs:
            for s in ins.shape.leaves():
                s.torch_dtype()
    fn = lw.function(entry)
    ent = comps[entry]
    return "\n".join(lw.lines), fn, lw.consts, ent


def build(text, form="call"):
    """HLO text -> (python function of the entry's array leaves returning
    its root's leaves as a list, the generated source, entry computation)."""
    src, fn, consts, ent = lower(text, form)
    C = [const(arr, dt) for arr, dt in consts]
    ns = {"torch": torch, "H": __import__(__name__), "C": C}
    exec(compile(src, "<hlo:%s>" % ent.name, "exec"), ns)
    f = ns[fn]
    params = [ent.params[i].shape for i in sorted(ent.params)]

    def unflatten(flat):
        it = iter(flat)

        def build_one(s):
            if s.elems is not None:
                return tuple(build_one(e) for e in s.elems)
            return None if s.dtype == "token" else next(it)
        return [build_one(s) for s in params]

    def flatten(v):
        if isinstance(v, (tuple, list)):
            return [x for e in v for x in flatten(e)]
        return [v]

    def run(*flat):
        return flatten(f(*unflatten(flat)))
    return run, src, ent
