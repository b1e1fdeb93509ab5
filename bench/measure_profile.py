#!/usr/bin/env python3
"""measure_profile.py - measures XLA CPU's by-design numeric deviations, the
numbers behind profiles/xla-cpu.conf (docs/PROFILES.md).

Drives XLA directly through jax with HLO text, the way adapters/xla/adapter.py
does (XLA's HLO parser -> StableHLO -> compile on the CPU with XLA's normal
pipeline), with parameters for every value that matters so that constant
folding (which uses the HloEvaluator, not the CPU code) cannot hide the
behaviour. References: numpy long double (80-bit x87) where numpy has the
function, math.fsum for exact sums, scipy's double erf (its error is far
below one f32 ulp).

Usage: .venv/bin/python bench/measure_profile.py [--n N] [--json FILE]
       .venv/jax-VER/bin/python bench/measure_profile.py --contract [--n N]
Prints one section per measurement; the numbers go to docs/PROFILES.md.
--contract instead measures every op and dtype that profiles/xla-cpu.conf
states a contract for (adapters/xla/measure_ulps.py's measurement) and says
where the release stands: a max error over the contract is a finding
(docs/FINDINGS.md, "Beyond the contract"); it ends with "N over, N within".
"""
import argparse
import json
import math
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jaxlib  # noqa: E402
import ml_dtypes  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

jax.config.update("jax_enable_x64", True)
DEV = jax.devices("cpu")[0]
CLIENT = DEV.client
try:
    import jaxlib._hlo as HLO  # jaxlib >= 0.10.2
except ImportError:
    HLO = xc._xla

LD = np.longdouble
RESULTS = {}


def compile_hlo(text):
    mod = HLO.hlo_module_from_text(text)
    proto = mod.as_serialized_hlo_module_proto()
    m = xc._xla.mlir
    mlir = m.hlo_to_stablehlo(proto) if hasattr(m, "hlo_to_stablehlo") else \
        m.xla_computation_to_mlir_module(xc.XlaComputation(proto))
    o = xc.CompileOptions()
    if hasattr(CLIENT, "compile_and_load"):
        return CLIENT.compile_and_load(mlir, [DEV], o)
    return CLIENT.compile(mlir, compile_options=o)


def run(text, *arrays):
    exe = compile_hlo(text)
    outs = exe.execute([jax.device_put(a, DEV) for a in arrays])
    return [np.asarray(x) for x in outs]


def optimized(text):
    return "\n".join(m.to_string() for m in compile_hlo(text).hlo_modules())


def hlo_t(dt):
    return {np.float32: "f32", np.float64: "f64", np.float16: "f16",
            ml_dtypes.bfloat16: "bf16"}[dt]


def unary(op, dt, n):
    t = hlo_t(dt)
    return ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n"
            "  ROOT r = %s[%d] %s(p)\n}\n" % (t, n, t, n, op))


def binary(op, dt, n, out=None):
    t = hlo_t(dt)
    o = out or t
    cmp = ", direction=GT" if op == "compare" else ""
    return ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  q = %s[%d] parameter(1)\n"
            "  ROOT r = %s[%d] %s(p, q)%s\n}\n" % (t, n, t, n, o, n, op, cmp))


def section(name):
    print("\n== " + name)


def record(key, value):
    RESULTS[key] = value
    print("  %-44s %s" % (key, value))


# ---------------------------------------------------------------- denormals
def denormals():
    section("denormals (FTZ: denormal results; DAZ: denormal inputs)")
    for dt in (np.float32, np.float64, ml_dtypes.bfloat16, np.float16):
        t = hlo_t(dt)
        fi = ml_dtypes.finfo(dt)
        tiny = float(fi.smallest_normal)
        den = dt(tiny / 4)  # a denormal of the type
        assert 0 < float(den) < tiny
        n = 4
        # DAZ: a denormal input times 1, plus 0, compared with 0 (all runtime params).
        p = np.full(n, den, dtype=dt)
        one = np.ones(n, dtype=dt)
        zero = np.zeros(n, dtype=dt)
        mul1 = run(binary("multiply", dt, n), p, one)[0]
        add0 = run(binary("add", dt, n), p, zero)[0]
        gt0 = run(binary("compare", dt, n, out="pred"), p, zero)[0]
        big = np.full(n, dt(2.0 ** (fi.nmant + 2)), dtype=dt)
        scaled = run(binary("multiply", dt, n), p, big)[0]
        neg = run(unary("negate", dt, n), p)[0]
        # FTZ: normal inputs whose product is denormal.
        a = np.full(n, dt(math.sqrt(tiny) / 2), dtype=dt)
        prod = run(binary("multiply", dt, n), a, a)[0]
        exact_prod = float(a[0]) * float(a[0])
        # Intermediate: (a*a)*big in one fusion: a flushed intermediate gives 0.
        inter = ("HloModule m\nENTRY e {\n  a = %s[%d] parameter(0)\n  b = %s[%d] parameter(1)\n"
                 "  m = %s[%d] multiply(a, a)\n  ROOT r = %s[%d] multiply(m, b)\n}\n"
                 % (t, n, t, n, t, n, t, n))
        chain = run(inter, a, big)[0]
        record("%s denormal*1 (DAZ if 0)" % t, "%r -> %r" % (float(den), float(mul1[0])))
        record("%s denormal+0 (DAZ if 0)" % t, float(add0[0]))
        record("%s denormal>0 (DAZ if false)" % t, bool(gt0[0]))
        record("%s denormal*2^(p+1) (DAZ if 0)" % t,
               "%r (exact %r)" % (float(scaled[0]), float(den) * float(big[0])))
        record("%s negate(denormal) (bit op)" % t, float(neg[0]))
        record("%s normal*normal->denormal (FTZ if 0)" % t,
               "%r (exact %r)" % (float(prod[0]), exact_prod))
        record("%s (a*a)*big, a*a denormal (FTZ of intermediate if 0)" % t,
               "%r (exact %r)" % (float(chain[0]), exact_prod * float(big[0])))
    # Conversions: does f32->f64 see a denormal f32 (DAZ on cvtss2sd)?
    n = 4
    p = np.full(n, np.float32(1e-40), dtype=np.float32)
    cv = run("HloModule m\nENTRY e {\n  p = f32[4] parameter(0)\n  ROOT r = f64[4] convert(p)\n}\n", p)[0]
    record("convert f32 denormal -> f64 (DAZ if 0)", float(cv[0]))
    q = np.full(n, 1e-40, dtype=np.float64)
    cv2 = run("HloModule m\nENTRY e {\n  p = f64[4] parameter(0)\n  ROOT r = f32[4] convert(p)\n}\n", q)[0]
    record("convert f64 1e-40 -> f32 (FTZ if 0)", float(cv2[0]))
    h = np.full(n, np.float16(1e-6), dtype=np.float16)
    cv3 = run("HloModule m\nENTRY e {\n  p = f16[4] parameter(0)\n  ROOT r = f32[4] convert(p)\n}\n", h)[0]
    record("convert f16 denormal 1e-6 -> f32", "%r (exact %r)" % (float(cv3[0]), float(h[0])))


# ---------------------------------------------------------------- min/max
def minmax():
    section("fast min/max: which side's NaN survives")
    nan = np.float32("nan")
    for op in ("maximum", "minimum"):
        for dt in (np.float32, np.float64):
            p = np.array([nan, 1.0, nan, -0.0], dtype=dt)
            q = np.array([1.0, nan, nan, 0.0], dtype=dt)
            r = run(binary(op, dt, 4), p, q)[0]
            record("%s %s(NaN,1) (1,NaN) (NaN,NaN) (-0,0)" % (hlo_t(dt), op),
                   ", ".join(repr(float(x)) for x in r))
    # Reductions: NaN first, in the middle, last; small (MLIR loop) and
    # large (>= 4096: YNNPACK); max and min; every float dtype.
    for dt in (np.float32, np.float64, ml_dtypes.bfloat16, np.float16):
        t = hlo_t(dt)
        for op, init, sign in (("maximum", "-inf", 1), ("minimum", "inf", -1)):
            for n in (16, 5000, 8192):
                got = []
                for pos in ("first", "middle", "last"):
                    x = (sign * np.arange(n) / n * 100).astype(dt)
                    i = {"first": 0, "middle": n // 2, "last": n - 1}[pos]
                    x[i] = nan
                    text = ("HloModule m\nmx { a = %s[] parameter(0)\n b = %s[] parameter(1)\n"
                            " ROOT c = %s[] %s(a, b) }\nENTRY e {\n  p = %s[%d] parameter(0)\n"
                            "  z = %s[] constant(%s)\n  ROOT r = %s[] reduce(p, z), dimensions={0}, to_apply=mx\n}\n"
                            % (t, t, t, op, t, n, t, init, t))
                    got.append(float(run(text, x)[0]))
                record("reduce-%s %s[%d], NaN first/middle/last" % (op[:3], t, n),
                       ", ".join("%r" % v for v in got))


# ---------------------------------------------------------------- FMA
def fma():
    section("FMA contraction: a*b+c in one fusion")
    for dt, e in ((np.float32, 23), (np.float64, 52)):
        t = hlo_t(dt)
        n = 8
        a = np.full(n, 1 + 2.0 ** -e, dtype=dt)
        b = np.full(n, 1 - 2.0 ** -e, dtype=dt)
        c = np.full(n, -1, dtype=dt)
        text = ("HloModule m\nENTRY e {\n  a = %s[%d] parameter(0)\n  b = %s[%d] parameter(1)\n"
                "  c = %s[%d] parameter(2)\n  m = %s[%d] multiply(a, b)\n"
                "  ROOT r = %s[%d] add(m, c)\n}\n" % ((t, n) * 5))
        r = run(text, a, b, c)[0]
        record("%s (1+2^-%d)(1-2^-%d)-1: 0 unfused, -2^-%d fused" % (t, e, e, 2 * e),
               "%r (log2 %s)" % (float(r[0]), math.log2(-float(r[0])) if r[0] < 0 else "-"))
        # The same on many random triples: how many differ from separately rounded?
        rng = np.random.default_rng(1)
        n = 1 << 16
        a = rng.standard_normal(n).astype(dt)
        b = rng.standard_normal(n).astype(dt)
        c = rng.standard_normal(n).astype(dt)
        text = text.replace("[8]", "[%d]" % n)
        r = run(text, a, b, c)[0]
        sep = (a * b).astype(dt) + c
        fused = (a.astype(LD) * b.astype(LD) + c.astype(LD)).astype(dt)
        record("%s random a*b+c: equal to separate / to fused" % t,
               "%d / %d of %d" % (int((r == sep).sum()), int((r == fused).sum()), n))


# ---------------------------------------------------------------- transcendentals
def ulp_f32(ref):
    """ulp of f32 at |ref| (the subnormal step below the normal range)."""
    a = np.abs(ref.astype(np.float64))
    a = np.maximum(a, 2.0 ** -126)
    e = np.floor(np.log2(a))
    # guard rounding of log2 at powers of two
    e = np.where(2.0 ** e > a, e - 1, e)
    e = np.where(2.0 ** (e + 1) <= a, e + 1, e)
    return 2.0 ** (e - 23)


def ulps(got, ref):
    got = got.astype(LD)
    ok = np.isfinite(ref) & np.isfinite(got)
    err = np.abs(got[ok] - ref[ok]) / ulp_f32(ref[ok]).astype(LD)
    return err, ok


def transcendentals(n):
    section("transcendental accuracy, f32, in ulps of the result (long double reference)")
    rng = np.random.default_rng(7)

    def logu(lo, hi, k):
        return np.exp(rng.uniform(np.log(lo), np.log(hi), k))

    def sym(lo, hi, k):
        return logu(lo, hi, k) * rng.choice([-1.0, 1.0], k)

    import scipy.special as sp
    cases = [
        ("exponential", lambda x: np.exp(x), np.concatenate([rng.uniform(-87.3, 88.7, n), sym(1e-8, 1, n // 4)])),
        ("log", lambda x: np.log(x), np.concatenate([logu(1.2e-38, 3e38, n), rng.uniform(0.5, 2, n // 4)])),
        ("tanh", lambda x: np.tanh(x), np.concatenate([rng.uniform(-10, 10, n), sym(1e-6, 1, n // 4)])),
        ("logistic", lambda x: 1 / (1 + np.exp(-x)), np.concatenate([rng.uniform(-80, 80, n), sym(1e-6, 1, n // 4)])),
        ("erf", lambda x: sp.erf(x.astype(np.float64)).astype(LD), np.concatenate([rng.uniform(-4, 4, n), sym(1e-6, 1, n // 4)])),
        ("sine", lambda x: np.sin(x), np.concatenate([rng.uniform(-np.pi, np.pi, n), rng.uniform(-1e4, 1e4, n // 4)])),
        ("cosine", lambda x: np.cos(x), np.concatenate([rng.uniform(-np.pi, np.pi, n), rng.uniform(-1e4, 1e4, n // 4)])),
        ("sqrt", lambda x: np.sqrt(x), logu(1.2e-38, 3e38, n)),
        ("rsqrt", lambda x: 1 / np.sqrt(x), logu(1.2e-38, 3e38, n)),
    ]
    out = {}
    for op, fn, x in cases:
        x = x.astype(np.float32)
        got = run(unary(op, np.float32, len(x)), x)[0]
        ref = fn(x.astype(LD))
        err, ok = ulps(got, ref)
        i = int(np.argmax(err))
        xi = x[ok][i]
        # separate the results XLA flushes or clamps (reference below the
        # normal range): that is the denormal rule's business
        normal = np.abs(ref[ok]) >= 2.0 ** -126
        errn = err[normal]
        mx = float(errn.max()) if errn.size else 0.0
        cls = np.isfinite(ref) != np.isfinite(got.astype(LD))
        out[op] = mx
        record("%s max ulp (normal results) over %d" % (op, int(normal.sum())),
               "%.3f (at x=%r; mean %.3f; class mismatches %d)" %
               (mx, float(x[ok][normal][int(np.argmax(errn))]) if errn.size else float(xi),
                float(errn.mean()) if errn.size else 0.0, int(cls.sum())))
    # pow: x in (0, 100], y in [-10, 10] (results in range)
    x = logu(1e-3, 100, n).astype(np.float32)
    y = rng.uniform(-10, 10, n).astype(np.float32)
    got = run(binary("power", np.float32, n), x, y)[0]
    ref = np.power(x.astype(LD), y.astype(LD))
    err, ok = ulps(got, ref)
    normal = (np.abs(ref[ok]) >= 2.0 ** -126) & (np.abs(ref[ok]) < 3e38)
    out["power"] = float(err[normal].max())
    record("power max ulp (normal results) over %d" % int(normal.sum()), "%.3f" % out["power"])
    # exp near the bottom: where does XLA return 0 / flush?
    x = np.linspace(-104, -87, 2000).astype(np.float32)
    got = run(unary("exponential", np.float32, len(x)), x)[0]
    nz = x[got != 0]
    record("exp: smallest x with a nonzero result", float(nz.min()) if nz.size else None)
    record("exp: smallest nonzero result", float(got[got != 0].min()))
    big = np.array([88.72283, 88.7228394, 88.8, 89.0], dtype=np.float32)
    record("exp(88.72283, 88.7228394, 88.8, 89)", [float(v) for v in run(unary("exponential", np.float32, 4), big)[0]])
    RESULTS["ulps"] = out
    # f64 for the same set (reference long double: 11 extra bits)
    section("transcendental accuracy, f64, in ulps (long double reference; 2^-11 ulp resolution)")
    for op, fn, xs in (("exponential", np.exp, rng.uniform(-700, 700, n)),
                       ("log", np.log, logu(1e-300, 1e300, n)),
                       ("tanh", np.tanh, rng.uniform(-20, 20, n)),
                       ("sine", np.sin, rng.uniform(-np.pi, np.pi, n)),
                       ("cosine", np.cos, rng.uniform(-np.pi, np.pi, n)),
                       ("logistic", lambda v: 1 / (1 + np.exp(-v)), rng.uniform(-40, 40, n)),
                       ("rsqrt", lambda v: 1 / np.sqrt(v), np.exp(rng.uniform(-600, 600, n))),
                       ("sqrt", np.sqrt, np.exp(rng.uniform(-600, 600, n)))):
        got = run(unary(op, np.float64, n), xs)[0]
        ref = fn(xs.astype(LD))
        a = np.maximum(np.abs(ref), LD(2.0) ** -1022)
        ulp = np.exp2(np.floor(np.log2(a)) - 52)
        e = np.abs(got.astype(LD) - ref) / ulp
        record("f64 %s max ulp" % op, "%.3f" % float(e.max()))


# ---------------------------------------------------------------- reductions
def reductions():
    section("reordered reduction: f32 sum of 2^21 elements")
    n = 1 << 21
    text = ("HloModule m\nadd { a = f32[] parameter(0)\n b = f32[] parameter(1)\n"
            " ROOT c = f32[] add(a, b) }\nENTRY e {\n  p = f32[%d] parameter(0)\n"
            "  z = f32[] constant(0)\n  ROOT r = f32[] reduce(p, z), dimensions={0}, to_apply=add\n}\n" % n)
    u = 2.0 ** -24
    rng = np.random.default_rng(3)
    for name, x in (("normal", rng.standard_normal(n)), ("uniform(0,1)", rng.uniform(0, 1, n)),
                    ("1 + tiny", 1 + rng.uniform(0, 1e-3, n))):
        x = x.astype(np.float32)
        got = float(run(text, x)[0])
        seq = float(np.cumsum(x, dtype=np.float32)[-1])  # strictly sequential f32
        exact = math.fsum(x.astype(np.float64))
        bound = (n - 1) * u * float(np.abs(x.astype(np.float64)).sum())
        record("sum %s: xla == sequential" % name, got == seq)
        record("sum %s: |xla-exact|/bound, |seq-exact|/bound" % name,
               "%.3g, %.3g" % (abs(got - exact) / bound, abs(seq - exact) / bound))
    # Long dot (YNNPACK / Eigen): against the same bound.
    k = 1 << 16
    a = rng.standard_normal((4, k)).astype(np.float32)
    b = rng.standard_normal((k, 4)).astype(np.float32)
    text = ("HloModule m\nENTRY e {\n  a = f32[4,%d] parameter(0)\n  b = f32[%d,4] parameter(1)\n"
            "  ROOT r = f32[4,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}\n}\n" % (k, k))
    got = run(text, a, b)[0].astype(np.float64)
    exact = a.astype(np.float64) @ b.astype(np.float64)
    bound = k * u * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    record("dot f32[4,%d]x[%d,4]: max |xla-exact|/(k u sum|ab|)" % (k, k),
           "%.3g" % float((np.abs(got - exact) / bound).max()))


# ---------------------------------------------------------------- divide
def divide(n):
    section("divide by a constant: A / C -> A * (1/C)")
    rng = np.random.default_rng(5)
    xd = rng.uniform(-1e3, 1e3, n)
    for c in (3.0, 7.0, 0.1):
        text = ("HloModule m\nENTRY e {\n  p = f64[%d] parameter(0)\n  c = f64[] constant(%r)\n"
                "  b = f64[%d] broadcast(c), dimensions={}\n  ROOT r = f64[%d] divide(p, b)\n}\n" % (n, c, n, n))
        got = run(text, xd)[0]
        ref = xd.astype(LD) / LD(c)
        a = np.maximum(np.abs(ref), LD(2.0) ** -1022)
        e = np.abs(got.astype(LD) - ref) / np.exp2(np.floor(np.log2(a)) - 52)
        record("f64 x / %r: differ from correctly rounded; max ulp" % c,
               "%d of %d; %.3f" % (int((got != xd / c).sum()), n, float(e.max())))
    # bf16 and f16 (XLA computes them in f32; 1/C may be rounded to the
    # narrow type first)
    for dt, mb, mn in ((ml_dtypes.bfloat16, 7, 2.0 ** -126), (np.float16, 10, 2.0 ** -14)):
        t = hlo_t(dt)
        xn = rng.uniform(-100, 100, n).astype(dt)
        for c in ("3", "7", "0.1"):
            text = ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  c = %s[] constant(%s)\n"
                    "  b = %s[%d] broadcast(c), dimensions={}\n  ROOT r = %s[%d] divide(p, b)\n}\n"
                    % (t, n, t, c, t, n, t, n))
            got = run(text, xn)[0].astype(np.float64)
            ref = xn.astype(np.float64) / float(dt(float(c)))
            ulp = 2.0 ** (np.floor(np.log2(np.maximum(np.abs(ref), mn))) - mb)
            cr = ref.astype(dt).astype(np.float64)
            record("%s x / %s: differ from correctly rounded; max ulp" % (t, c),
                   "%d of %d; %.4f" % (int((got != cr).sum()), n, float((np.abs(got - ref) / ulp).max())))
    x = rng.uniform(-1e3, 1e3, n).astype(np.float32)
    for c in ("3", "7", "0.1", "10"):
        text = ("HloModule m\nENTRY e {\n  p = f32[%d] parameter(0)\n  c = f32[] constant(%s)\n"
                "  b = f32[%d] broadcast(c), dimensions={}\n  ROOT r = f32[%d] divide(p, b)\n}\n" % (n, c, n, n))
        got = run(text, x)[0]
        cr = (x.astype(np.float64) / np.float64(np.float32(float(c)))).astype(np.float32)  # correctly rounded
        ref = x.astype(LD) / LD(np.float32(float(c)))
        err, _ = ulps(got, ref)
        opt = optimized(text)
        record("x / %s: differ from correctly rounded; max ulp; multiply in optimized HLO" % c,
               "%d of %d; %.3f; %s" % (int((got != cr).sum()), n, float(err.max()),
                                        "multiply(" in opt and "divide(" not in opt))
    # divide by a runtime scalar broadcast (one use): also rewritten on CPU?
    text = ("HloModule m\nENTRY e {\n  p = f32[%d] parameter(0)\n  c = f32[] parameter(1)\n"
            "  b = f32[%d] broadcast(c), dimensions={}\n  ROOT r = f32[%d] divide(p, b)\n}\n" % (n, n, n))
    got = run(text, x, np.float32(3))[0]
    cr = (x.astype(np.float64) / 3.0).astype(np.float32)
    record("x / broadcast(param=3): differ from correctly rounded",
           "%d of %d" % (int((got != cr).sum()), n))
    # plain elementwise divide and sqrt: correctly rounded?
    y = rng.uniform(0.1, 10, n).astype(np.float32)
    got = run(binary("divide", np.float32, n), x, y)[0]
    cr = (x.astype(np.float64) / y.astype(np.float64)).astype(np.float32)
    record("x / y elementwise: differ from correctly rounded", "%d of %d" % (int((got != cr).sum()), n))


def read_contract(path):
    """{(op, dtype): ulps} from the profile's 'contract' lines."""
    out = {}
    with open(path) as f:
        for line in f:
            w = line.split("#", 1)[0].split()
            if len(w) >= 3 and w[0] == "contract":
                for kv in w[2:]:
                    op, u = kv.split("=")
                    out[(op, w[1])] = float(u)
    return out


def contract(n):
    """Each contracted op and dtype measured against its contract."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sys.path.insert(0, os.path.join(root, "adapters", "xla"))
    import measure_ulps as mu
    c = read_contract(os.path.join(root, "profiles", "xla-cpu.conf"))
    rng = np.random.default_rng(1)
    over = within = 0
    print("%-22s %-5s %9s %9s %9s %14s %s" % ("op", "dtype", "inputs", "max ulp", "contract", "worst x", "verdict"))
    for (op, dt), cu in sorted(c.items(), key=lambda kv: (kv[0][1], kv[0][0])):
        if op not in mu.REF or dt not in mu.NP or (op == "erf" and dt == "f64"):
            continue  # no reference to measure with
        # Results below the smallest normal are left out: XLA's specs
        # allow an absolute error of about the smallest normal there.
        r = mu.measure(op, dt, n, rng, normal_only=True)
        if r is None:
            continue
        bad = r["max"] > cu
        over += bad
        within += not bad
        RESULTS["contract %s %s" % (op, dt)] = {"max": r["max"], "contract": cu, "over": bad}
        print("%-22s %-5s %9d %9.3f %9.3g %14.7g %s" % (op, dt, r["n"], r["max"], cu, r["worst_x"],
                                                       "OVER (a finding)" if bad else "within"))
        sys.stdout.flush()
    print("contract: %d over, %d within (jax %s)" % (over, within, jax.__version__))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 20, help="inputs per transcendental")
    ap.add_argument("--json", help="also write the numbers here")
    ap.add_argument("--contract", action="store_true",
                    help="measure the contracted ops against profiles/xla-cpu.conf's contract")
    a = ap.parse_args()
    if a.contract:
        contract(a.n)
        if a.json:
            with open(a.json, "w") as f:
                json.dump(RESULTS, f, indent=1, default=str)
        return 0
    print("jax %s jaxlib %s, numpy long double eps %g" % (jax.__version__, jaxlib.__version__,
                                                         float(np.finfo(LD).eps)))
    denormals()
    minmax()
    fma()
    transcendentals(a.n)
    reductions()
    divide(1 << 16)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(RESULTS, f, indent=1, default=str)


if __name__ == "__main__":
    sys.exit(main())
