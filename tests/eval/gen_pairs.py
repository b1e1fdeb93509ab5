#!/usr/bin/env python3
"""gen_pairs.py - writes tests/eval/pairs_<T>.hlo (core types) and tests/eval/dtypes/pairs_<T>.hlo
(non-core types): per element type, one instruction per op with inputs whose
exact results are representable in T, so the expected value is the exact
math (no rounding question). Expected values come from the rules of
docs/SEMANTICS.md written out below (integers: wrap, division edges, shift
rules; floats: explicit input/output tables at exactly representable or
special points), never from a run of the reference."""
import sys
from fractions import Fraction as Fr

INF, NINF, NAN = 'inf', '-inf', 'nan'

# name: (ebits, mbits, bias, style)
FLOATS = {
    'f16': (5, 10, 15, 'ieee'), 'bf16': (8, 7, 127, 'ieee'), 'f32': (8, 23, 127, 'ieee'),
    'f64': (11, 52, 1023, 'ieee'), 'f8e4m3fn': (4, 3, 7, 'fn'), 'f8e5m2': (5, 2, 15, 'ieee'),
    'f8e4m3': (4, 3, 7, 'ieee'), 'f8e3m4': (3, 4, 3, 'ieee'), 'f8e4m3fnuz': (4, 3, 8, 'fnuz'),
    'f8e5m2fnuz': (5, 2, 16, 'fnuz'), 'f8e4m3b11fnuz': (4, 3, 11, 'fnuz'),
    'f8e8m0fnu': (8, 0, 127, 'e8m0'), 'f4e2m1fn': (2, 1, 1, 'finite'),
    'f6e3m2fn': (3, 2, 3, 'finite'), 'f6e2m3fn': (2, 3, 1, 'finite'),
}
FBITS = {'f16': 16, 'bf16': 16, 'f32': 32, 'f64': 64, 'f4e2m1fn': 4, 'f6e3m2fn': 6, 'f6e2m3fn': 6}
INTS = {'s1': 1, 's2': 2, 's4': 4, 's8': 8, 's16': 16, 's32': 32, 's64': 64,
        'u1': 1, 'u2': 2, 'u4': 4, 'u8': 8, 'u16': 16, 'u32': 32, 'u64': 64}
CORE = {'pred', 's4', 's8', 's16', 's32', 's64', 'u4', 'u8', 'u16', 'u32', 'u64', 'f16', 'bf16',
        'f32', 'f64', 'f8e4m3fn', 'f8e5m2'}


def fmax(t):
    e, m, b, st = FLOATS[t]
    if st == 'ieee':
        return (2 - Fr(1, 2**m)) * Fr(2)**(2**e - 2 - b)
    if st == 'fn':
        return (2 - Fr(2, 2**m)) * Fr(2)**(2**e - 1 - b)
    if st == 'e8m0':
        return Fr(2)**127
    return (2 - Fr(1, 2**m)) * Fr(2)**(2**e - 1 - b)


def frep(t, v):
    """Whether v (Fraction or special string) is a value of float type t."""
    e, m, b, st = FLOATS[t]
    if v in (INF, NINF):
        return st == 'ieee'
    if v == NAN:
        return st != 'finite'
    v = Fr(v)
    if st == 'e8m0':
        if v <= 0:
            return False
        k = 0
        while v > 1:
            v /= 2; k += 1
        while v < 1:
            v *= 2; k -= 1
        return v == 1 and -127 <= k <= 127
    if v == 0:
        return True
    a = abs(v)
    if a > fmax(t):
        return False
    k = 0
    x = a
    while x >= 2:
        x /= 2; k += 1
    while x < 1:
        x *= 2; k -= 1
    q = max(k, 1 - b) - m  # exponent of the ulp
    return (a / Fr(2)**q).denominator == 1


def fenc(t, v):
    """Bit pattern of an exact finite value of float type t."""
    e, m, b, st = FLOATS[t]
    v = Fr(v)
    s = 1 if v < 0 else 0
    a = abs(v)
    if st == 'e8m0':
        k = 0
        while a > 1:
            a /= 2; k += 1
        while a < 1:
            a *= 2; k -= 1
        return k + 127
    nb = 1 + e + m
    if a == 0:
        return 0
    k = 0
    x = a
    while x >= 2:
        x /= 2; k += 1
    while x < 1:
        x *= 2; k -= 1
    if k < 1 - b:
        field, mant = 0, a / Fr(2)**(1 - b - m)
    else:
        field, mant = k + b, (x - 1) * 2**m
    assert Fr(mant).denominator == 1
    return (s << (nb - 1)) | (field << m) | int(mant)


def fdec(t, bits):
    e, m, b, st = FLOATS[t]
    nb = 1 + e + m
    s = bits >> (nb - 1)
    field = (bits >> m) & ((1 << e) - 1)
    mant = bits & ((1 << m) - 1)
    if field == 0:
        v = Fr(mant) * Fr(2)**(1 - b - m)
    else:
        v = (1 + Fr(mant, 2**m)) * Fr(2)**(field - b)
    return -v if s else v


def ilo(t):
    n = INTS[t]
    return -(1 << (n - 1)) if t[0] == 's' else 0


def ihi(t):
    n = INTS[t]
    return (1 << (n - 1)) - 1 if t[0] == 's' else (1 << n) - 1


def wrap(t, v):
    n = INTS[t]
    v &= (1 << n) - 1
    if t[0] == 's' and v >> (n - 1):
        v -= 1 << n
    return v


def fmt_num(v):
    if isinstance(v, str):
        return v
    if isinstance(v, bool):
        return '1' if v else '0'
    if isinstance(v, int):
        return str(v)
    if isinstance(v, Fr) and v.denominator == 1 and abs(v) >= 2**63:
        d = str(abs(v.numerator))
        return '%s%s.%se%d' % ('-' if v < 0 else '', d[0], d[1:], len(d) - 1)
    v = Fr(v)
    if v.denominator == 1:
        return str(v.numerator)
    # exact decimal of a dyadic rational
    d = v.denominator
    k = d.bit_length() - 1
    assert d == 1 << k
    n = v.numerator * 5**k
    sgn = '-' if n < 0 else ''
    s = str(abs(n)).rjust(k + 1, '0')
    s = s[:-k] + '.' + s[-k:]
    return sgn + s.rstrip('0').rstrip('.')


def fmt(v):
    if isinstance(v, tuple):
        return '(%s, %s)' % (fmt_num(v[0]), fmt_num(v[1]))
    return fmt_num(v)


def lit(vals):
    if isinstance(vals, list):
        if vals and isinstance(vals[0], list):
            return '{' + ', '.join(lit(r) for r in vals) + '}'
        return '{' + ', '.join(fmt(v) for v in vals) + '}'
    return fmt(vals)


def shp(t, dims):
    return '%s[%s]' % (t, ','.join(str(d) for d in dims))


class Mod:
    def __init__(self, t):
        self.t = t
        self.lines = []
        self.outs = []  # (name, shape, literal)
        self.comps = {}
        self.n = 0

    def name(self, base):
        self.n += 1
        return '%s%d' % (base, self.n)

    def const(self, t, vals, dims=None):
        if dims is None:
            dims = [len(vals)] if isinstance(vals, list) else []
        nm = self.name('k')
        self.lines.append('%s = %s constant(%s)' % (nm, shp(t, dims), lit(vals)))
        return nm

    def ins(self, text_fmt, t, dims, expect=None):
        nm = self.name('r')
        self.lines.append('%s = %s %s' % (nm, shp(t, dims), text_fmt))
        if expect is not None:
            self.outs.append((nm, shp(t, dims), lit(expect)))
        return nm

    def comp(self, kind, t):
        key = (kind, t)
        if key in self.comps:
            return self.comps[key][0]
        nm = '%s_%s' % (kind, t)
        if kind in ('max', 'add', 'min'):
            op = {'max': 'maximum', 'add': 'add', 'min': 'minimum'}[kind]
            body = ('  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT z = %s[] %s(x, y)'
                    % (t, t, t, op))
        elif kind == 'second':
            body = '  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n  ROOT z = %s[] copy(y)' % (t, t, t)
        elif kind in ('lt', 'ge'):
            d = 'LT' if kind == 'lt' else 'GE'
            body = ('  x = %s[] parameter(0)\n  y = %s[] parameter(1)\n'
                    '  ROOT z = pred[] compare(x, y), direction=%s' % (t, t, d))
        self.comps[key] = (nm, body)
        return nm

    def text(self, modname, covers):
        out = ['// Covers ' + covers]
        for _, s, l in self.outs:
            out.append('// EXPECT %s %s' % (s, l))
        out.append('HloModule ' + modname)
        out.append('')
        for nm, body in self.comps.values():
            out += ['%s {' % nm, body, '}', '']
        out.append('ENTRY main {')
        out += ['  ' + l for l in self.lines]
        names = [o[0] for o in self.outs]
        shapes = [o[1] for o in self.outs]
        out.append('  ROOT out = (%s) tuple(%s)' % (', '.join(shapes), ', '.join(names)))
        out.append('}')
        return '\n'.join(out) + '\n'


# ---- ordering used by sort, max/min, compare, clamp ----
def key(t, v):
    if isinstance(v, tuple):
        raise ValueError('complex has no order')
    if v == INF:
        return Fr(10)**400
    if v == NINF:
        return -Fr(10)**400
    return Fr(v)


# ---- float tables: (op, [inputs...], expected); the first candidate whose
# values are all representable in T is used. Results are exact (or the
# exact special value of the C library at that point). ----
F1 = {  # unary
    'abs': [([-1, 2, Fr(-1, 2), 0], [1, 2, Fr(1, 2), 0]), ([1, 2, Fr(1, 2), 4], [1, 2, Fr(1, 2), 4])],
    'negate': [([1, -2, Fr(1, 2), -4], [-1, 2, Fr(-1, 2), 4]), ([1, 2], [NAN, NAN])],
    'sign': [([-2, Fr(1, 2), 0, 4], [-1, 1, 0, 1]), ([2, Fr(1, 2), 4], [1, 1, 1])],
    'floor': [([Fr(3, 2), Fr(-3, 2), 2, Fr(-1, 2)], [1, -2, 2, -1]),
              ([Fr(1, 2), Fr(3, 2), Fr(-3, 2), 3], [0, 1, -2, 3]), ([1, 2, 4, 1], [1, 2, 4, 1])],
    'ceil': [([Fr(3, 2), Fr(-3, 2), 2, Fr(1, 2)], [2, -1, 2, 1]),
             ([Fr(1, 2), Fr(3, 2), Fr(-3, 2), 3], [1, 2, -1, 3]), ([1, 2, 4, 1], [1, 2, 4, 1])],
    'round-nearest-afz': [([Fr(1, 2), Fr(-3, 2), Fr(5, 2), 1], [1, -2, 3, 1]),
                          ([Fr(1, 2), Fr(3, 2), Fr(-3, 2), 3], [1, 2, -2, 3]), ([1, 2, 4, 1], [1, 2, 4, 1])],
    'round-nearest-even': [([Fr(1, 2), Fr(-3, 2), Fr(5, 2), 1], [0, -2, 2, 1]),
                           ([Fr(1, 2), Fr(3, 2), Fr(-3, 2), 3], [0, 2, -2, 3]), ([1, 2, 4, 1], [1, 2, 4, 1])],
    'exponential': [([0, NINF, INF], [1, 0, INF]), ([0], [1])],
    'exponential-minus-one': [([0, NINF, INF], [0, -1, INF]), ([0], [0])],
    'log': [([1, 0, INF], [0, NINF, INF]), ([1], [0])],
    'log-plus-one': [([0, -1, INF], [0, NINF, INF]), ([0], [0])],
    'sqrt': [([4, Fr(1, 4), 1, 0], [2, Fr(1, 2), 1, 0]), ([4, 1, 0], [2, 1, 0]),
             ([4, 1, Fr(1, 4)], [2, 1, Fr(1, 2)])],
    'rsqrt': [([4, Fr(1, 4), 1], [Fr(1, 2), 2, 1]), ([4, 1], [Fr(1, 2), 1])],
    'cbrt': [([8, -8, Fr(1, 8), 1], [2, -2, Fr(1, 2), 1]), ([1, -1, 0], [1, -1, 0]),
             ([8, Fr(1, 8), 1], [2, Fr(1, 2), 1])],
    'tanh': [([0, INF, NINF], [0, 1, -1]), ([0], [0])],
    'logistic': [([0, INF, NINF], [Fr(1, 2), 1, 0]), ([0], [Fr(1, 2)])],
    'sine': [([0], [0])],
    'cosine': [([0], [1])],
    'tan': [([0], [0])],
    'erf': [([0, INF, NINF], [0, 1, -1]), ([0], [0])],
}
FIN = [([1, INF, NAN, -1], [1, 0, 0, 1]), ([1, NAN, -1], [1, 0, 1]), ([1, NAN], [1, 0]), ([1, -1], [1, 1])]
F2 = {  # binary
    'add': [([1, 2, Fr(1, 2), -1], [Fr(1, 2), 2, Fr(1, 2), 1], [Fr(3, 2), 4, 1, 0]),
            ([1, 2, Fr(1, 2)], [1, 2, Fr(1, 2)], [2, 4, 1])],
    'subtract': [([1, 2, Fr(1, 2)], [Fr(1, 2), 4, 2], [Fr(1, 2), -2, Fr(-3, 2)]),
                 ([4, 1], [2, Fr(1, 2)], [2, Fr(1, 2)])],
    'multiply': [([Fr(3, 2), -2, Fr(1, 2), 3], [2, Fr(1, 2), Fr(1, 2), 1], [3, -1, Fr(1, 4), 3]),
                 ([Fr(3, 2), -2, 2, 3], [2, Fr(1, 2), 1, 1], [3, -1, 2, 3]),
                 ([2, Fr(1, 2), 4], [Fr(1, 2), Fr(1, 2), 2], [1, Fr(1, 4), 8])],
    'divide': [([3, -1, 1, 6], [2, 4, Fr(1, 2), 3], [Fr(3, 2), Fr(-1, 4), 2, 2]),
               ([3, -1, 1, 6], [2, 1, Fr(1, 2), 3], [Fr(3, 2), -1, 2, 2]),
               ([1, 4], [2, Fr(1, 2)], [Fr(1, 2), 8])],
    'remainder': [([5, -5, Fr(11, 2), 3], [2, 2, 2, 2], [1, -1, Fr(3, 2), 1]),
                  ([3, -3, Fr(3, 2)], [2, 2, 1], [1, -1, Fr(1, 2)]), ([2, 1], [4, 4], [2, 1])],
    'power': [([2, 3, Fr(1, 2), 4], [3, 2, 2, Fr(1, 2)], [8, 9, Fr(1, 4), 2]),
              ([2, -1, 4, 1], [2, 3, Fr(1, 2), 0], [4, -1, 2, 1]), ([2, 4], [2, Fr(1, 2)], [4, 2])],
    'atan2': [([0, 1], [1, INF], [0, 0]), ([0], [1], [0])],
    'maximum': [([1, -2, Fr(1, 2), 3], [2, -1, Fr(1, 2), -3], [2, -1, Fr(1, 2), 3]),
                ([1, 4], [2, Fr(1, 2)], [2, 4])],
    'minimum': [([1, -2, Fr(1, 2), 3], [2, -1, Fr(1, 2), -3], [1, -2, Fr(1, 2), -3]),
                ([1, 4], [2, Fr(1, 2)], [1, Fr(1, 2)])],
}
# f8e8m0fnu holds powers of two only and rounds to the nearest one in value
# (a tie rounds up): the functions at 1 round to the power nearest the true value.
E8M0 = {
    'exponential': ([1], [2]),                 # 2.718 -> 2 (below the midpoint 3)
    'exponential-minus-one': ([1], [2]),       # 1.718 -> 2 (above the midpoint 1.5)
    'log': ([1, 4], [NAN, 1]),                 # 0 -> NaN; 1.386 -> 1 (below 1.5)
    'log-plus-one': ([1], [Fr(1, 2)]),         # 0.693 -> 0.5 (below 0.75)
    'tanh': ([1], [1]),                        # 0.7616 -> 1 (above 0.75)
    'logistic': ([1], [Fr(1, 2)]),             # 0.7311 -> 0.5 (below 0.75)
    'sine': ([1], [1]),                        # 0.8415 -> 1
    'cosine': ([1], [Fr(1, 2)]),               # 0.5403 -> 0.5
    'tan': ([1], [2]),                         # 1.5574 -> 2 (above 1.5)
    'erf': ([1], [1]),                         # 0.8427 -> 1
    'atan2': ([1], [1], [1]),                  # pi/4 = 0.785 -> 1
}
FDOT = [([1, 2], [Fr(1, 2), -1], -Fr(3, 2)), ([1, 2], [1, Fr(1, 2)], 2)]
FCONV = [([1, 2, Fr(1, 2)], [Fr(1, 2), -1], [Fr(-3, 2), Fr(1, 2)]), ([1, 1, 1], [1, 1], [2, 2])]


def base4(t):
    if t == 'pred':
        return [1, 0, 0, 1]
    if t in FLOATS:
        return [1, 2, Fr(1, 2), 4]
    if t in ('c64', 'c128'):
        return [(1, 2), (3, -1), (Fr(1, 2), 0), (-2, 4)]
    return {'s1': [-1, 0, -1, 0], 's2': [-2, -1, 0, 1], 's4': [-8, -1, 7, 3], 's8': [-128, -7, 100, 7],
            's16': [-32768, -3, 1000, 7], 's32': [-2**31, -3, 100000, 7], 's64': [-2**63, -3, 10**12, 7],
            'u1': [1, 0, 1, 1], 'u2': [3, 0, 2, 1], 'u4': [15, 0, 9, 3], 'u8': [255, 0, 100, 7],
            'u16': [65535, 0, 1000, 7], 'u32': [2**32 - 1, 0, 100000, 7],
            'u64': [2**64 - 1, 0, 10**12, 7]}[t]


def ok(t, vals):
    return all(frep(t, v) for v in vals)


def pick(t, cands):
    for c in cands:
        if all(ok(t, part if isinstance(part, list) else [part]) for part in c):
            return c
    return None


def real_ops(t):
    return t in FLOATS or t in INTS or t == 'pred'


def moves(M, t, skipped):
    b = base4(t)
    a4 = M.const(t, b)
    a22 = M.const(t, [b[0:2], b[2:4]], [2, 2])
    v2 = M.const(t, b[0:2])
    M.ins('broadcast(%s), dimensions={1}' % v2, t, [2, 2], [b[0:2], b[0:2]])
    M.ins('reshape(%s)' % a4, t, [2, 2], [b[0:2], b[2:4]])
    if t not in ('c64', 'c128'):  # bitcast of complex is not evaluated
        M.ins('bitcast(%s)' % a22, t, [4], b)
    M.ins('transpose(%s), dimensions={1,0}' % a22, t, [2, 2], [[b[0], b[2]], [b[1], b[3]]])
    M.ins('copy(%s)' % a4, t, [4], b)
    M.ins('slice(%s), slice={[1:4:2]}' % a4, t, [2], [b[1], b[3]])
    i3 = M.const('s32', 3)
    M.ins('dynamic-slice(%s, %s), dynamic_slice_sizes={2}' % (a4, i3), t, [2], b[2:4])
    M.ins('dynamic-update-slice(%s, %s, %s)' % (a4, v2, i3), t, [4], [b[0], b[1], b[0], b[1]])
    M.ins('concatenate(%s, %s), dimensions={0}' % (v2, a4), t, [6], b[0:2] + b)
    pv = M.const(t, b[3])
    M.ins('pad(%s, %s), padding=1_0_1' % (v2, pv), t, [4], [b[3], b[0], b[3], b[1]])
    M.ins('reverse(%s), dimensions={0}' % a4, t, [4], b[::-1])
    ix = M.const('s32', [[3], [0], [1]], [3, 1])
    M.ins('gather(%s, %s), offset_dims={}, collapsed_slice_dims={0}, start_index_map={0}, '
          'index_vector_dim=1, slice_sizes={1}' % (a4, ix), t, [3], [b[3], b[0], b[1]])
    six = M.const('s32', [[2], [0]], [2, 1])
    upd = M.const(t, [b[3], b[1]])
    M.ins('scatter(%s, %s, %s), update_window_dims={}, inserted_window_dims={0}, '
          'scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%s'
          % (a4, six, upd, M.comp('second', t)), t, [4], [b[1], b[1], b[3], b[3]]) \
        if t not in ('c64', 'c128') else None  # scatter of complex is not evaluated
    p = M.const('pred', [1, 0, 1, 0])
    M.ins('select(%s, %s, %s)' % (p, a4, M.const(t, b[::-1])), t, [4], [b[0], b[2], b[2], b[0]])


def orders(M, t):
    """sort, topk, max-reduce, reduce-window, select-and-scatter, map, clamp, compare."""
    b = base4(t)
    ks = sorted(b, key=lambda v: key(t, v))
    a4 = M.const(t, b)
    M.ins('sort(%s), dimensions={0}, to_apply=%s' % (a4, M.comp('lt', t)), t, [4], ks)
    if t != 'pred':
        nm = M.name('tk')
        M.lines.append('%s = (%s, s32[2]) topk(%s), k=2, largest=true' % (nm, shp(t, [2]), a4))
        desc = sorted(range(4), key=lambda i: (-key(t, b[i]), i))
        M.ins('get-tuple-element(%s), index=0' % nm, t, [2], [b[desc[0]], b[desc[1]]])
        M.ins('get-tuple-element(%s), index=1' % nm, 's32', [2], [desc[0], desc[1]])
    mx = lambda x, y: x if key(t, x) >= key(t, y) else y
    init = ks[0]
    M.ins('reduce(%s, %s), dimensions={0}, to_apply=%s' % (a4, M.const(t, init), M.comp('max', t)),
          t, [], ks[-1])
    M.ins('reduce-window(%s, %s), window={size=2}, to_apply=%s'
          % (a4, M.const(t, init), M.comp('max', t)), t, [3], [mx(b[i], b[i + 1]) for i in range(3)])
    # select-and-scatter: windows {0,1} and {2,3}; GE keeps the first of equal maxima;
    # scatter=max of the source and the init (the smallest value) is the source.
    src = [ks[1], ks[2]]
    out = [init] * 4
    for w in range(2):
        i0, i1 = 2 * w, 2 * w + 1
        ch = i0 if key(t, b[i0]) >= key(t, b[i1]) else i1
        out[ch] = mx(src[w], out[ch])
    M.ins('select-and-scatter(%s, %s, %s), window={size=2 stride=2}, select=%s, scatter=%s'
          % (a4, M.const(t, src), M.const(t, init), M.comp('ge', t), M.comp('max', t)), t, [4], out)
    r = b[::-1]
    ar = M.const(t, r)
    M.ins('map(%s, %s), dimensions={0}, to_apply=%s' % (a4, ar, M.comp('max', t)), t, [4],
          [mx(x, y) for x, y in zip(b, r)])
    if t != 'pred':
        lo, hi = ks[1], ks[2]
        M.ins('clamp(%s, %s, %s)' % (M.const(t, [lo] * 4), a4, M.const(t, [hi] * 4)), t, [4],
              [lo if key(t, x) < key(t, lo) else hi if key(t, x) > key(t, hi) else x for x in b])
    M.ins('compare(%s, %s), direction=LT' % (a4, ar), 'pred', [4],
          [1 if key(t, x) < key(t, y) else 0 for x, y in zip(b, r)])
    M.ins('maximum(%s, %s)' % (a4, ar), t, [4], [mx(x, y) for x, y in zip(b, r)])
    mn = lambda x, y: x if key(t, x) <= key(t, y) else y
    M.ins('minimum(%s, %s)' % (a4, ar), t, [4], [mn(x, y) for x, y in zip(b, r)])


def iota_vals(t):
    if t in INTS:
        return [wrap(t, i) for i in range(4)]
    if t == 'f8e8m0fnu':
        return [NAN, 1, 2, 4]  # 0 -> NaN; 3 ties up to 4 (SEMANTICS f8e8m0fnu)
    return [0, 1, 2, 3]


def gen_float(t, skipped):
    M = Mod(t)
    moves(M, t, skipped)
    orders(M, t)
    M.ins('iota(), iota_dimension=0', t, [4], iota_vals(t))
    b = base4(t)
    M.ins('convert(%s)' % M.const(t, b), 'f64', [4], b)
    e, m, bias, st = FLOATS[t]
    if t in FBITS and FBITS[t] == 6:
        other = 'f6e3m2fn' if t == 'f6e2m3fn' else 'f6e2m3fn'
        M.ins('bitcast-convert(%s)' % M.const(t, b), other, [4], [fdec(other, fenc(t, v)) for v in b])
    else:
        ut = 'u%d' % FBITS.get(t, 8)
        M.ins('bitcast-convert(%s)' % M.const(t, b), ut, [4], [fenc(t, v) for v in b])
    if m >= 2:  # 1.25 and -1.25 tie to 1.0 (even), 1.75 ties to 2.0, 3 is exact at 1 bit
        M.ins('reduce-precision(%s), exponent_bits=5, mantissa_bits=1'
              % M.const(t, [Fr(5, 4), Fr(7, 4), Fr(-5, 4), 3]), t, [4], [1, 2, -1, 3])
    else:  # values with no mantissa bits stay
        M.ins('reduce-precision(%s), exponent_bits=%d, mantissa_bits=0'
              % (M.const(t, [1, 2, Fr(1, 2), 4]), 8 if st == 'e8m0' else 5), t, [4],
              [1, 2, Fr(1, 2), 4])
    for op, cands in F1.items():
        c = pick(t, cands)
        if c is None and t == 'f8e8m0fnu' and op in E8M0:
            c = E8M0[op]
        if c is None:
            skipped.append('%s:%s' % (op, t)); continue
        x, y = c
        rt = 'pred' if op == 'is-finite' else t
        M.ins('%s(%s)' % (op, M.const(t, x)), rt, [len(x)], y)
    x, y = next(c for c in FIN if ok(t, c[0]))  # is-finite: pred results
    M.ins('is-finite(%s)' % M.const(t, x), 'pred', [len(x)], y)
    # real of a real operand is itself, imag is 0 (SEMANTICS "Complex"; 0 is NaN in f8e8m0fnu)
    M.ins('real(%s)' % M.const(t, b), t, [4], b)
    M.ins('imag(%s)' % M.const(t, b), t, [4], [NAN if st == 'e8m0' else 0] * 4)
    for op, cands in F2.items():
        c = pick(t, cands)
        if c is None and t == 'f8e8m0fnu' and op in E8M0:
            c = E8M0[op]
        if c is None:
            skipped.append('%s:%s' % (op, t)); continue
        x, y, z = c
        M.ins('%s(%s, %s)' % (op, M.const(t, x), M.const(t, y)), t, [len(x)], z)
    c = pick(t, FDOT)
    if c:
        x, y, z = c
        M.ins('dot(%s, %s), lhs_contracting_dims={0}, rhs_contracting_dims={0}'
              % (M.const(t, x), M.const(t, y)), t, [], z)
    else:
        skipped.append('dot:' + t)
    c = pick(t, FCONV)
    if c:
        x, k, z = c
        M.ins('convolution(%s, %s), window={size=2}, dim_labels=b0f_0io->b0f'
              % (M.const(t, [[[v] for v in x]], [1, 3, 1]), M.const(t, [[[v]] for v in k], [2, 1, 1])),
              t, [1, 2, 1], [[[v] for v in z]])
    else:
        skipped.append('convolution:' + t)
    # cholesky of [[4, 2], [2, 2]] is [[2, 0], [1, 1]] (the upper triangle 0, SEMANTICS; 0 is NaN
    # in f8e8m0fnu); solving [[2, 0], [1, 1]] x = [2, 3] gives [1, 2]
    z = NAN if st == 'e8m0' else 0
    M.ins('cholesky(%s), lower=true' % M.const(t, [[4, 2], [2, 2]], [2, 2]), t, [2, 2], [[2, z], [1, 1]])
    if ok(t, [3]):
        M.ins('triangular-solve(%s, %s), left_side=true, lower=true, transpose_a=NO_TRANSPOSE'
              % (M.const(t, [[2, 0], [1, 1]], [2, 2]), M.const(t, [[2], [3]], [2, 1])), t, [2, 1],
              [[1], [2]])
    else:  # unit diagonal, upper triangle not read: x0 = 2, x1 = 4 - 2
        M.ins('triangular-solve(%s, %s), left_side=true, lower=true, unit_diagonal=true, '
              'transpose_a=NO_TRANSPOSE' % (M.const(t, [[1, 1], [1, 1]], [2, 2]),
                                            M.const(t, [[2], [4]], [2, 1])), t, [2, 1], [[2], [2]])
    return M


# ---- integers: expected by the SEMANTICS rules ----
def idiv(t, a, b):
    if b == 0:
        return wrap(t, -1)
    if t[0] == 's' and a == ilo(t) and b == -1:
        return a
    q = abs(a) // abs(b)
    return wrap(t, q if (a < 0) == (b < 0) else -q)


def irem(t, a, b):
    if b == 0:
        return a
    if t[0] == 's' and a == ilo(t) and b == -1:
        return 0
    r = abs(a) % abs(b)
    return wrap(t, -r if a < 0 else r)


def ishift(t, op, a, n):
    w = INTS[t]
    un = n & ((1 << w) - 1)  # the amount read as unsigned
    pat = a & ((1 << w) - 1)
    if op == 'shift-left':
        return 0 if un >= w else wrap(t, pat << un)
    if op == 'shift-right-logical':
        return 0 if un >= w else wrap(t, pat >> un)
    top = pat >> (w - 1)
    sv = pat - (1 << w) if top else pat
    if un >= w:
        return wrap(t, -1 if top else 0)
    return wrap(t, sv >> un)


def ipow(t, x, y):
    if x == 1 or y == 0:  # checked first (SEMANTICS: 1 if x == 1 or y == 0; 0 if y < 0)
        return wrap(t, 1)
    if t[0] == 's' and y < 0:
        return 0
    return wrap(t, pow(x, y, 1 << 64))


def gen_int(t, skipped):
    M = Mod(t)
    moves(M, t, skipped)
    orders(M, t)
    M.ins('iota(), iota_dimension=0', t, [4], iota_vals(t))
    w = INTS[t]
    x = base4(t)
    if t[0] == 's':
        y = [wrap(t, v) for v in [-1, 2, 0, -3]]
    else:
        y = [wrap(t, v) for v in [1, 2, 0, 3]]
    cx, cy = M.const(t, x), M.const(t, y)
    bin_ops = {
        'add': lambda a, b: wrap(t, a + b), 'subtract': lambda a, b: wrap(t, a - b),
        'multiply': lambda a, b: wrap(t, a * b), 'divide': lambda a, b: idiv(t, a, b),
        'remainder': lambda a, b: irem(t, a, b),
        'and': lambda a, b: wrap(t, a & b), 'or': lambda a, b: wrap(t, a | b),
        'xor': lambda a, b: wrap(t, a ^ b),
    }
    for op, f in bin_ops.items():
        M.ins('%s(%s, %s)' % (op, cx, cy), t, [4], [f(a, b) for a, b in zip(x, y)])
    n = [wrap(t, v) for v in [1, w, 0, w - 1]]
    cn = M.const(t, n)
    for op in ('shift-left', 'shift-right-logical', 'shift-right-arithmetic'):
        M.ins('%s(%s, %s)' % (op, cx, cn), t, [4], [ishift(t, op, a, k) for a, k in zip(x, n)])
    e = [wrap(t, v) for v in [2, 0, 1, 3]]
    M.ins('power(%s, %s)' % (cx, M.const(t, e)), t, [4], [ipow(t, a, k) for a, k in zip(x, e)])
    un = {'negate': lambda a: wrap(t, -a), 'not': lambda a: wrap(t, ~a),
          'popcnt': lambda a: wrap(t, bin(a & ((1 << w) - 1)).count('1')),
          'count-leading-zeros': lambda a: wrap(t, w - (a & ((1 << w) - 1)).bit_length())}
    if t[0] == 's':
        un['abs'] = lambda a: wrap(t, abs(a))
        un['sign'] = lambda a: (a > 0) - (a < 0)
    for op, f in un.items():
        M.ins('%s(%s)' % (op, cx), t, [4], [f(a) for a in x])
    M.ins('convert(%s)' % cx, 'f64', [4], [Fr(float(v)) if abs(v) < 2**53 else Fr(int(float(v))) for v in x])
    partner = ('u' if t[0] == 's' else 's') + t[1:]
    M.ins('bitcast-convert(%s)' % cx, partner, [4], [wrap(partner, v) for v in x])
    # dot wraps mod 2^n; convolution saturates (SEMANTICS)
    M.ins('dot(%s, %s), lhs_contracting_dims={0}, rhs_contracting_dims={0}' % (cx, cy), t, [],
          wrap(t, sum(a * b for a, b in zip(x, y))))
    xs, ks = x[0:3], y[0:2]
    sat = lambda v: max(ilo(t), min(ihi(t), v))
    M.ins('convolution(%s, %s), window={size=2}, dim_labels=b0f_0io->b0f'
          % (M.const(t, [[[v] for v in xs]], [1, 3, 1]), M.const(t, [[[v]] for v in ks], [2, 1, 1])),
          t, [1, 2, 1], [[[sat(xs[o] * ks[0] + xs[o + 1] * ks[1])] for o in range(2)]])
    return M


def gen_pred(skipped):
    t = 'pred'
    M = Mod(t)
    moves(M, t, skipped)
    orders(M, t)
    x, y = [0, 0, 1, 1], [0, 1, 0, 1]
    cx, cy = M.const(t, x), M.const(t, y)
    # pred add/maximum = or, multiply/minimum = and (SEMANTICS)
    for op, f in (('add', lambda a, b: a | b), ('multiply', lambda a, b: a & b),
                  ('and', lambda a, b: a & b), ('or', lambda a, b: a | b), ('xor', lambda a, b: a ^ b)):
        M.ins('%s(%s, %s)' % (op, cx, cy), t, [4], [f(a, b) for a, b in zip(x, y)])
    M.ins('not(%s)' % cx, t, [4], [1 - a for a in x])
    M.ins('convert(%s)' % cx, 'f32', [4], x)
    M.ins('bitcast-convert(%s)' % cx, t, [4], x)
    # dot: or of ands; one true product only, so any reading gives 1
    M.ins('dot(%s, %s), lhs_contracting_dims={0}, rhs_contracting_dims={0}'
          % (M.const(t, [1, 0]), M.const(t, [1, 1])), t, [], 1)
    M.ins('convolution(%s, %s), window={size=2}, dim_labels=b0f_0io->b0f'
          % (M.const(t, [[[1], [0], [0]]], [1, 3, 1]), M.const(t, [[[1]], [[1]]], [2, 1, 1])),
          t, [1, 2, 1], [[[1], [0]]])
    return M


# ---- complex, exact Gaussian-rational arithmetic ----
def cadd(a, b):
    return (Fr(a[0]) + b[0], Fr(a[1]) + b[1])


def cmul(a, b):
    return (Fr(a[0]) * b[0] - Fr(a[1]) * b[1], Fr(a[0]) * b[1] + Fr(a[1]) * b[0])


def gen_complex(t, skipped):
    M = Mod(t)
    moves(M, t, skipped)
    rt = 'f32' if t == 'c64' else 'f64'
    b = base4(t)
    r = b[::-1]
    ca, cr = M.const(t, b), M.const(t, r)
    M.ins('add(%s, %s)' % (ca, cr), t, [4], [cadd(x, y) for x, y in zip(b, r)])
    M.ins('subtract(%s, %s)' % (ca, cr), t, [4], [(Fr(x[0]) - y[0], Fr(x[1]) - y[1]) for x, y in zip(b, r)])
    M.ins('multiply(%s, %s)' % (ca, cr), t, [4], [cmul(x, y) for x, y in zip(b, r)])
    # negate flips both signs, so a 0 part becomes -0
    M.ins('negate(%s)' % ca, t, [4], [tuple('-0' if Fr(p) == 0 else -Fr(p) for p in x) for x in b])
    # (4+2i)/(1+i) = 3-i; (2+0i)/(2+0i)... divisor scale 1: exact steps
    M.ins('divide(%s, %s)' % (M.const(t, [(4, 2), (-2, 4)]), M.const(t, [(1, 1), (0, 2)])), t, [2],
          [(3, -1), (2, 1)])
    M.ins('abs(%s)' % M.const(t, [(3, 4), (0, -2)]), rt, [2], [5, 2])
    M.ins('sign(%s)' % M.const(t, [(0, 2), (-3, 0)]), t, [2], [(0, 1), (-1, 0)])
    z = M.const(t, [(0, 0)])
    one = M.const(t, [(1, 0)])
    M.ins('exponential(%s)' % z, t, [1], [(1, 0)])
    M.ins('exponential-minus-one(%s)' % z, t, [1], [(0, 0)])
    M.ins('log(%s)' % one, t, [1], [(0, 0)])
    M.ins('log-plus-one(%s)' % z, t, [1], [(0, 0)])
    M.ins('sqrt(%s)' % M.const(t, [(4, 0), (-4, 0)]), t, [2], [(2, 0), (0, 2)])
    M.ins('rsqrt(%s)' % M.const(t, [(4, 0)]), t, [1], [(Fr(1, 2), 0)])
    M.ins('tanh(%s)' % z, t, [1], [(0, 0)])
    M.ins('logistic(%s)' % z, t, [1], [(Fr(1, 2), 0)])
    M.ins('sine(%s)' % z, t, [1], [(0, 0)])
    M.ins('cosine(%s)' % M.const(t, [(0, '-0')]), t, [1], [(1, 0)])
    M.ins('tan(%s)' % z, t, [1], [(0, 0)])
    M.ins('power(%s, %s)' % (ca, M.const(t, [(0, 0)] * 4)), t, [4], [(1, 0)] * 4)
    M.ins('real(%s)' % ca, rt, [4], [x[0] for x in b])
    M.ins('imag(%s)' % ca, rt, [4], [x[1] for x in b])
    M.ins('complex(%s, %s)' % (M.const(rt, [1, -2]), M.const(rt, [Fr(1, 2), 3])), t, [2],
          [(1, Fr(1, 2)), (-2, 3)])
    M.ins('compare(%s, %s), direction=EQ' % (ca, M.const(t, [b[0], (3, 1), b[2], (2, 4)])), 'pred', [4],
          [1, 0, 1, 0])
    M.ins('compare(%s, %s), direction=NE' % (ca, M.const(t, [b[0], (3, 1), b[2], (2, 4)])), 'pred', [4],
          [0, 1, 0, 1])
    M.ins('convert(%s)' % M.const(rt, [1, Fr(-1, 2)]), t, [2], [(1, 0), (Fr(-1, 2), 0)])
    M.ins('dot(%s, %s), lhs_contracting_dims={0}, rhs_contracting_dims={0}' % (ca, cr), t, [],
          (lambda s: s)(__import__('functools').reduce(cadd, [cmul(x, y) for x, y in zip(b, r)], (0, 0))))
    xs, ks = b[0:3], r[0:2]
    M.ins('convolution(%s, %s), window={size=2}, dim_labels=b0f_0io->b0f'
          % (M.const(t, [[[v] for v in xs]], [1, 3, 1]), M.const(t, [[[v]] for v in ks], [2, 1, 1])),
          t, [1, 2, 1], [[[cadd(cmul(xs[o], ks[0]), cmul(xs[o + 1], ks[1]))] for o in range(2)]])
    M.ins('reduce(%s, %s), dimensions={0}, to_apply=%s' % (ca, M.const(t, (0, 0)), M.comp('add', t)),
          t, [], __import__('functools').reduce(cadd, b, (0, 0)))
    M.ins('map(%s, %s), dimensions={0}, to_apply=%s' % (ca, cr, M.comp('add', t)), t, [4],
          [cadd(x, y) for x, y in zip(b, r)])
    return M


def split_write(M, t, folder, covers):
    outs, lines = M.outs, M.lines
    chunks = [outs[i:i + 60] for i in range(0, len(outs), 60)]
    for k, ch in enumerate(chunks):
        M.outs = ch
        # keep only the instructions these outputs depend on
        import re
        defs = {l.split(' = ')[0]: l for l in lines}
        need, todo = set(), [o[0] for o in ch]
        while todo:
            n = todo.pop()
            if n in need:
                continue
            need.add(n)
            rhs = defs[n].split(' = ', 1)[1]
            todo += [w for w in re.findall(r'[a-z]+[0-9]+', rhs) if w in defs]
        M.lines = [l for l in lines if l.split(' = ')[0] in need]
        suffix = '' if len(chunks) == 1 else '_%d' % (k + 1)
        name = 'pairs_%s%s' % (t, suffix)
        with open('%s/%s.hlo' % (folder, name), 'w') as f:
            f.write(M.text(name, covers))
    M.outs, M.lines = outs, lines


def main(root):
    skipped = []
    types = ['pred'] + list(INTS) + list(FLOATS) + ['c64', 'c128']
    for t in types:
        if t == 'pred':
            M = gen_pred(skipped)
        elif t in INTS:
            M = gen_int(t, skipped)
        elif t in FLOATS:
            M = gen_float(t, skipped)
        else:
            M = gen_complex(t, skipped)
        folder = root + ('/tests/eval' if t in CORE else '/tests/eval/dtypes')
        covers = COVERS[('pred' if t == 'pred' else 'int' if t in INTS else 'float' if t in FLOATS
                         else 'complex')] % {'t': t}
        split_write(M, t, folder, covers)
    print('skipped (no exactly derivable input):', ' '.join(skipped))


COVERS = {
    'pred': ('every op the reference evaluates on %(t)s (issue 3 op/type pairs; tests/unit/test_pairs.c): '
             'moves copy slots (dynamic-slice start 3 clamps to 2, pad low 1 interior 1), sort/max/min/compare '
             'order 0 < 1, add/maximum are or and multiply/minimum are and, dot is an or of ands. '
             'Expected values written from docs/SEMANTICS.md.'),
    'int': ('every op the reference evaluates on %(t)s (issue 3 op/type pairs; tests/unit/test_pairs.c), '
            'from the integer rules of docs/SEMANTICS.md: add/sub/mul/dot wrap to the width, x/0 = -1 and '
            'x%%0 = x, INT_MIN/-1 = INT_MIN, shift amounts read unsigned and >= width give 0 or the sign '
            'fill, power by square-and-multiply (negative exponent 0), popcnt/clz at the width, '
            'convolution saturates, iota wraps, convert to f64 rounds once, bitcast-convert keeps bits; '
            'moves copy slots (dynamic-slice start 3 clamps to 2).'),
    'float': ('every op the reference evaluates on %(t)s (issue 3 op/type pairs; tests/unit/test_pairs.c) '
              'at inputs whose exact results are values of %(t)s, so one rounding changes nothing: '
              'arithmetic on small dyadic values, fmod with the dividend sign, floor/ceil/round ties '
              '(afz vs even), the C library exact points (exp 0 = 1, log 1 = 0, sqrt 4 = 2, cbrt -8 = -2, '
              'tanh/erf of +-inf = +-1, logistic 0 = 0.5, ...), reduce-precision ties to even at 1 mantissa '
              'bit, bitcast-convert bit patterns worked out from the format, cholesky/triangular-solve on '
              'exact 2x2 systems, moves copy slots (dynamic-slice start 3 clamps to 2).'),
    'complex': ('every op the reference evaluates on %(t)s (issue 3 op/type pairs; tests/unit/test_pairs.c) '
                'on Gaussian integers and halves whose products and sums are exact (docs/SEMANTICS.md '
                '"Complex"): multiply ac - bd, ad + bc; divide (4+2i)/(1+i) = 3 - i with the divisor scale '
                '1; abs (3,4) = 5; sign (-3,0) = -1; the libm functions at their exact points (exp 0 = 1, '
                'log 1 = 0, sqrt -4 = 2i, cos(0 - 0i) = 1 + 0i by Annex G, logistic 0 = 0.5); power with '
                'exponent 0 is 1; compare EQ/NE; dot, convolution, reduce and map sum exact products.'),
}

if __name__ == '__main__':
    import os
    main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', '..'))
