#!/usr/bin/env python3
"""measure_iree_profile.py - measures IREE CPU's by-design numeric
deviations, the numbers behind profiles/iree-cpu.conf (docs/PROFILES.md,
"IREE CPU").

Every module goes the way trench sends it: through the IREE adapter's own
code (adapters/iree/adapter.py: XLA's HLO -> StableHLO conversion,
iree-compile for llvm-cpu on the host CPU, iree.runtime), with parameters
for every value that matters so that no constant folding hides the
behaviour. References: numpy long double (80-bit x87) and math.erf.

Usage: .venv/iree/bin/python bench/measure_iree_profile.py [--n N]
       (.venv/iree-VER/bin/python for another release)
Prints one section per measurement; the numbers go to docs/PROFILES.md.
"""
import argparse
import math
import os
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "adapters", "iree"))
import adapter as iree  # noqa: E402  (points fd 1 at stderr; we print to its copy)

import numpy as np  # noqa: E402

OUT = iree._PROTO
AD = None
TMP = tempfile.mkdtemp(prefix="iree_measure_")
LD = np.longdouble
COUNT = [0]


def say(s):
    OUT.write(s + "\n")
    OUT.flush()


def run(text, *arrays):
    COUNT[0] += 1
    d = os.path.join(TMP, "r%d" % COUNT[0])
    os.makedirs(os.path.join(d, "out"))
    mod = os.path.join(d, "m.hlo")
    with open(mod, "w") as f:
        f.write(text)
    ins = []
    for i, a in enumerate(arrays):
        p = os.path.join(d, "in%d.npy" % i)
        np.save(p, a)
        ins.append(p)
    rep = AD.run({"module": mod, "inputs": ins, "outdir": os.path.join(d, "out")})
    return [np.load(p) for p in rep["outputs"]]


T = {np.float32: "f32", np.float64: "f64", np.float16: "f16"}


def unary(op, dt, n):
    t = T[dt]
    return "HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  ROOT r = %s[%d] %s(p)\n}\n" % (t, n, t, n, op)


def binary(op, dt, n, out=None):
    t = T[dt]
    cmp = ", direction=GT" if op == "compare" else ""
    return ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  q = %s[%d] parameter(1)\n"
            "  ROOT r = %s[%d] %s(p, q)%s\n}\n" % (t, n, t, n, out or t, n, op, cmp))


def denormals():
    say("\n== denormals (FTZ: denormal results; DAZ: denormal inputs)")
    for dt in (np.float32, np.float64, np.float16):
        fi = np.finfo(dt)
        den = dt(float(fi.smallest_normal) / 4)
        n = 4
        p = np.full(n, den, dt)
        mul1 = run(binary("multiply", dt, n), p, np.ones(n, dt))[0][0]
        add0 = run(binary("add", dt, n), p, np.zeros(n, dt))[0][0]
        gt0 = run(binary("compare", dt, n, "pred"), p, np.zeros(n, dt))[0][0]
        a = np.full(n, dt(math.sqrt(float(fi.smallest_normal)) / 2), dt)
        prod = run(binary("multiply", dt, n), a, a)[0][0]
        say("  %s denormal*1 %r, denormal+0 %r, denormal>0 %s, normal*normal->denormal %r (exact %r)"
            % (T[dt], float(mul1), float(add0), bool(gt0), float(prod), float(a[0]) ** 2))


def minmax():
    say("\n== min/max and NaN")
    nan = np.nan
    for op in ("maximum", "minimum"):
        for dt in (np.float32, np.float64, np.float16):
            p = np.array([nan, 1.0, nan, -0.0], dt)
            q = np.array([1.0, nan, nan, 0.0], dt)
            r = run(binary(op, dt, 4), p, q)[0]
            say("  %s %s(NaN,1) (1,NaN) (NaN,NaN) (-0,0): %s"
                % (T[dt], op, ", ".join(repr(float(x)) for x in r)))
    for dt in (np.float32, np.float64, np.float16):
        t = T[dt]
        for op, init, sign in (("maximum", "-inf", 1), ("minimum", "inf", -1)):
            for n in (16, 5000):
                got = []
                for i in (0, n // 2, n - 1):
                    x = (sign * np.arange(n) / n * 100).astype(dt)
                    x[i] = nan
                    text = ("HloModule m\nmx { a = %s[] parameter(0)\n b = %s[] parameter(1)\n"
                            " ROOT c = %s[] %s(a, b) }\nENTRY e {\n  p = %s[%d] parameter(0)\n"
                            "  z = %s[] constant(%s)\n  ROOT r = %s[] reduce(p, z), dimensions={0}, to_apply=mx\n}\n"
                            % (t, t, t, op, t, n, t, init, t))
                    got.append(float(run(text, x)[0]))
                say("  reduce-%s %s[%d], NaN first/middle/last: %s"
                    % (op[:3], t, n, ", ".join(repr(v) for v in got)))


def fma():
    say("\n== FMA contraction: a*b+c")
    for dt, e in ((np.float32, 23), (np.float64, 52)):
        t = T[dt]
        n = 8
        a = np.full(n, 1 + 2.0 ** -e, dt)
        b = np.full(n, 1 - 2.0 ** -e, dt)
        c = np.full(n, -1, dt)
        text = ("HloModule m\nENTRY e {\n  a = %s[%d] parameter(0)\n  b = %s[%d] parameter(1)\n"
                "  c = %s[%d] parameter(2)\n  m = %s[%d] multiply(a, b)\n"
                "  ROOT r = %s[%d] add(m, c)\n}\n" % ((t, n) * 5))
        r = float(run(text, a, b, c)[0][0])
        say("  %s (1+2^-%d)(1-2^-%d)-1: %r (0 unfused, -2^-%d fused)" % (t, e, e, r, 2 * e))


def ulps(got, exact, dt):
    """|got - exact| in ulps of dt at exact (the spacing of the rounded
    exact value; denormal range: the smallest spacing)."""
    g = got.astype(LD)
    e = exact.astype(LD)
    ok = np.isfinite(e) & np.isfinite(g)
    sp = np.spacing(np.abs(exact.astype(dt))).astype(LD)
    sp = np.maximum(sp, LD(np.finfo(dt).smallest_subnormal))
    u = np.where(ok, np.abs(g - e) / sp, 0)
    bad = (np.isfinite(e) != np.isfinite(g)) | (np.isnan(g) & ~np.isnan(e))
    return float(np.max(u)), int(np.sum(bad))


def exact_of(op, x):
    X = x.astype(LD)
    f = {
        "exponential": np.exp, "log": np.log, "log-plus-one": np.log1p,
        "exponential-minus-one": np.expm1, "tanh": np.tanh, "sine": np.sin,
        "cosine": np.cos, "tan": np.tan, "sqrt": np.sqrt, "cbrt": np.cbrt,
        "rsqrt": lambda v: 1 / np.sqrt(v), "logistic": lambda v: 1 / (1 + np.exp(-v)),
        "erf": lambda v: np.array([math.erf(float(t)) for t in v], LD),
    }[op]
    return f(X)


RANGES = {
    "exponential": (-80, 80), "log": (1e-30, 1e30), "log-plus-one": (-0.99, 100),
    "exponential-minus-one": (-20, 20), "tanh": (-10, 10), "sine": (-100, 100),
    "cosine": (-100, 100), "tan": (-10, 10), "sqrt": (0, 1e30), "cbrt": (-1e30, 1e30),
    "rsqrt": (1e-30, 1e30), "logistic": (-30, 30), "erf": (-5, 5),
}


def transcendentals(n):
    say("\n== transcendental ulps (max over %d points per op, uniform and log-spaced)" % n)
    rng = np.random.default_rng(1)
    for dt in (np.float32, np.float64, np.float16):
        for op, (lo, hi) in RANGES.items():
            if dt == np.float64 and op == "erf":
                continue  # math.erf is double: no reference finer than f64
            if dt == np.float16:
                lo, hi = max(lo, -60000.0), min(hi, 60000.0)
                if op in ("exponential",):
                    lo, hi = -10, 10
            x = rng.uniform(lo, hi, n)
            if lo > 0:
                x[: n // 2] = np.exp(rng.uniform(math.log(lo), math.log(hi), n // 2))
            x = x.astype(dt)
            try:
                got = run(unary(op, dt, n), x)[0]
            except iree.Refusal as e:
                say("  %s %-22s %s: %s" % (T[dt], op, e.status, str(e)[:100]))
                continue
            with np.errstate(all="ignore"):
                ex = exact_of(op, x)
            m, bad = ulps(got, ex, dt)
            say("  %s %-22s max %.2f ulps%s" % (T[dt], op, m,
                                                 "  (%d non-finite where exact is finite)" % bad if bad else ""))


def divide():
    say("\n== divide by a parameter and by a constant")
    rng = np.random.default_rng(2)
    for dt in (np.float32, np.float64, np.float16):
        t = T[dt]
        n = 4096
        a = rng.uniform(-100, 100, n).astype(dt)
        b = rng.uniform(0.5, 100, n).astype(dt)
        got = run(binary("divide", dt, n), a, b)[0]
        m, _ = ulps(got, a.astype(LD) / b.astype(LD), dt)
        text = ("HloModule m\nENTRY e {\n  p = %s[%d] parameter(0)\n  c = %s[] constant(3)\n"
                "  b = %s[%d] broadcast(c), dimensions={}\n  ROOT r = %s[%d] divide(p, b)\n}\n"
                % (t, n, t, t, n, t, n))
        got2 = run(text, a)[0]
        m2, _ = ulps(got2, a.astype(LD) / 3, dt)
        say("  %s a/b max %.2f ulps; a/3 (constant) max %.2f ulps" % (t, m, m2))


def atan2(n):
    """atan2 over (y, x) pairs of both signs, magnitudes uniform in [0, 100]
    and log-uniform in [1e-20, 1e20], against long double; the worst pairs
    are printed so that a reader can recompute them."""
    say("\n== atan2 ulps (max over %d pairs)" % n)
    rng = np.random.default_rng(3)
    for dt in (np.float32, np.float64, np.float16):
        hi = 60000.0 if dt == np.float16 else 1e20
        lo = 1e-4 if dt == np.float16 else 1e-20
        mag = np.concatenate([rng.uniform(0, 100, (n // 2, 2)),
                              np.exp(rng.uniform(math.log(lo), math.log(hi), (n - n // 2, 2)))])
        yx = (mag * rng.choice([-1.0, 1.0], (n, 2))).astype(dt)
        y, x = np.ascontiguousarray(yx[:, 0]), np.ascontiguousarray(yx[:, 1])
        try:
            got = run(binary("atan2", dt, n), y, x)[0]
        except iree.Refusal as e:
            say("  %s atan2 %s: %s" % (T[dt], e.status, str(e)[:100]))
            continue
        ex = np.arctan2(y.astype(LD), x.astype(LD))
        # a result of the wrong sign is I9 (docs/FINDINGS.md), not an ulp error
        flip = (np.signbit(got) != np.signbit(ex)) & (ex != 0)
        say("  %s atan2: %d of %d results with the wrong sign (docs/FINDINGS.md I9)%s" % (
            T[dt], int(flip.sum()), n, "; e.g. " + ", ".join(
                "atan2(%r, %r) = %r" % (float(y[i]), float(x[i]), float(got[i]))
                for i in np.nonzero(flip)[0][:3]) if flip.any() else ""))
        # results below the smallest normal are FTZ's (denormal-flush), not the op's
        keep = ~flip & (np.abs(ex) >= LD(np.finfo(dt).tiny))
        got, ex, y, x = got[keep], ex[keep], y[keep], x[keep]
        m, bad = ulps(got, ex, dt)
        u = np.abs(got.astype(LD) - ex) / np.maximum(np.spacing(np.abs(ex.astype(dt))).astype(LD),
                                                    LD(np.finfo(dt).smallest_subnormal))
        worst = np.argsort(-u)[:3]
        say("  %s atan2 max %.2f ulps%s; worst: %s" % (
            T[dt], m, "  (%d non-finite where exact is finite)" % bad if bad else "",
            ", ".join("atan2(%r, %r) = %r exact %r (%.1f)" % (float(y[i]), float(x[i]), float(got[i]),
                                                              float(ex[i]), float(u[i])) for i in worst)))


def exhaustive():
    """f16 rsqrt over every positive f16 and f8e5m2 logistic over every
    f8e5m2 value: the target against the exact value and against the
    exact value rounded to the type (the best any implementation can do)."""
    import ml_dtypes
    say("\n== exhaustive: f16 rsqrt, f8e5m2 logistic")
    x = np.arange(1, 0x7c00, dtype=np.uint16).view(np.float16)  # +denormals .. max finite
    got = run(unary("rsqrt", np.float16, x.size), x)[0]
    ex = 1 / np.sqrt(x.astype(LD))
    m, bad = ulps(got, ex, np.float16)
    u = np.abs(got.astype(LD) - ex) / np.spacing(ex.astype(np.float16)).astype(LD)
    cr = ex.astype(np.float64).astype(np.float16)
    off = got != cr
    worst = np.argsort(-u)[:3]
    say("  f16 rsqrt: max %.2f ulps from exact (%d inputs above 1 ulp, %d of them f16 denormals); "
        "%d of %d not the correctly rounded value; worst: %s" % (
            m, int((u > 1).sum()), int(((u > 1) & (x < np.finfo(np.float16).tiny)).sum()),
            int(off.sum()), x.size, ", ".join(
                "rsqrt(%r) = %r, exact %r (%.2f)" % (float(x[i]), float(got[i]), float(ex[i]), float(u[i]))
                for i in worst)))
    f8 = ml_dtypes.float8_e5m2
    bits = np.arange(256, dtype=np.uint8)
    v = bits.view(f8)
    fin = np.isfinite(v.astype(np.float32))
    text = "HloModule m\nENTRY e {\n  p = f8e5m2[256] parameter(0)\n  ROOT r = f8e5m2[256] logistic(p)\n}\n"
    got = run(text, bits)[0].view(np.uint8).view(f8).astype(np.float64)
    xv = v.astype(np.float64)
    with np.errstate(all="ignore"):
        ex = 1 / (1 + np.exp(-xv.astype(LD)))
    cr = ex.astype(np.float64).astype(f8).astype(np.float64)
    off = fin & (got != cr)
    # ulps of f8e5m2 at the exact value: 2 mantissa bits, 2^(e-2)
    e64 = ex.astype(np.float64)
    pos = fin & (e64 > 0)
    sp = np.maximum(np.exp2(np.floor(np.log2(np.where(pos, e64, 1))) - 2), 2.0 ** -16)
    u = np.where(pos, np.abs(got - e64) / sp, 0)
    say("  f8e5m2 logistic: max %.2f ulps from exact (at x = %r); %d of %d finite inputs "
        "not the correctly rounded value%s" % (
        float(u.max()), float(xv[np.argmax(u)]), int(off.sum()), int(fin.sum()), "; " + ", ".join(
            "logistic(%r) = %r, exact %.4f, rounded %r" % (xv[i], got[i], float(ex[i]), cr[i])
            for i in np.nonzero(off)[0][:8]) if off.any() else ""))


def main():
    global AD
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=1 << 16)
    ap.add_argument("--only", help="comma list of sections: denormals, minmax, fma, divide, "
                    "transcendentals, atan2, exhaustive (default: all)")
    args = ap.parse_args()
    only = set(args.only.split(",")) if args.only else None
    AD = iree.Adapter(os.path.join(iree.ROOT, ".venv", "bin", "python"))
    say("IREE compiler %s; flags %s" % (AD.version, " ".join(AD.flags)))
    for name, f in (("denormals", denormals), ("minmax", minmax), ("fma", fma), ("divide", divide),
                    ("transcendentals", lambda: transcendentals(args.n)),
                    ("atan2", lambda: atan2(args.n)), ("exhaustive", exhaustive)):
        if only is None or name in only:
            f()
    AD.conv.close()
    AD.server.close()
    OUT.flush()
    os._exit(0)


if __name__ == "__main__":
    main()
