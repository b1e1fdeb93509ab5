"""models.py - real XLA dumps of benchmark-sized models (ResNet-50 v1.5,
DLRM, one transformer block in f32 and bf16) with realistic inputs, for
`trench run` and `trench check` (docs/MODELS.md, bench/model_check.sh).

XLA's own CPU benchmark HLO files (resnet50, dlrm) cannot be fetched from
this machine, so this script builds the same models in plain jax and dumps
what jax hands to XLA. The weights are parameters of the jitted function,
not constants, so the HLO text stays small and every value is an input.

Usage:
  .venv/bin/python bench/models.py [--out DIR] [--seeds N] [--batch B]
                                   [--no-cuts] [MODEL ...]
  .venv/bin/python bench/models.py errors MODEL BUNDLE [--cut C | --seg S]
  .venv/bin/python bench/models.py list cuts|segs MODEL
MODEL: resnet50 dlrm transformer_f32 transformer_bf16 (default: all).
DIR defaults to /work/models. Per model it writes
  DIR/NAME.pre.hlo          jax's lowered HLO (the module given to XLA)
  DIR/NAME.opt.hlo          what XLA's CPU pipeline made of it
  DIR/NAME.inputs/pK.npy    parameter K, seed 0 (weights and data)
  DIR/NAME.inputs/seedS/pK.npy   S = 1..N-1: new data inputs only (image,
                            dense features, indices, tokens); the weights
                            are the same for every seed
  DIR/NAME.inputs/params.txt    one line per parameter: K, role, dtype, shape
  DIR/NAME.cut-C.pre.hlo    the model stopped at cut C (same parameters)
  DIR/NAME.seg-S.pre.hlo    segment S: from the previous segment's output
                            (an input, computed by XLA in f32) to S's end,
                            with only the weights S uses; the segments
                            together are the whole model
  DIR/NAME.seg-S.inputs/    its inputs (weights as links into NAME.inputs)
`errors` evaluates a model, cut or segment in f64 with jax on the inputs
of a `trench check --save` bundle and prints the error of the bundle's
ref0.npy, target0.npy (and exact0.npy, if put there) against it.

Values (deterministic, numpy's PCG64 per seed):
  - conv and dense weights: He-normal (std sqrt(2/fan_in)); the last layer
    of each network is scaled so logits come out with a std near 3 (ResNet:
    measured on the calibration batch) or has std 1/sqrt(fan_in) (DLRM,
    transformer).
  - batch norm (ResNet): inference form, y = x*scale + shift per channel.
    gamma ~ U(0.6, 1.2) (U(0.15, 0.35) for the last BN of each bottleneck,
    as trained ResNets have), beta ~ N(0, 0.1); the running mean and
    variance are measured on a separate calibration batch, layer by layer,
    as a trained network's statistics would be. Then
    scale = gamma/sqrt(var+eps), shift = beta - mean*scale.
  - images: N(0,1) per pixel (normalized images).
  - DLRM dense features: log(1 + exponential counts), as Criteo's are fed;
    embedding rows N(0, 1/sqrt(dim)); indices power-law distributed over
    each table (hot rows, duplicates in a bag), always in range.
"""
import argparse
import os
import re
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import numpy as np  # noqa: E402
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

try:
    import ml_dtypes  # noqa: E402
    BF16 = ml_dtypes.bfloat16
except ImportError:  # jax depends on ml_dtypes; keep a clear message anyway
    BF16 = None

DN = ("NHWC", "HWIO", "NHWC")
BN_EPS = 1e-5


def he(rng, shape, fan_in):
    return (rng.standard_normal(shape) * np.sqrt(2.0 / fan_in)).astype(np.float32)


# ---------------------------------------------------------------- ResNet-50

STAGES = [(64, 3, 1), (128, 4, 2), (256, 6, 2), (512, 3, 2)]  # width, blocks, stride


def resnet_layout():
    """The conv layers in parameter order: (name, kh, kw, cin, cout, stride,
    pad, last_bn_of_block)."""
    convs = [("stem", 7, 7, 3, 64, 2, 3, False)]
    cin = 64
    for si, (w, n, stride) in enumerate(STAGES):
        for b in range(n):
            s = stride if b == 0 else 1
            p = "s%d.b%d" % (si + 1, b)
            convs.append((p + ".c1", 1, 1, cin, w, 1, 0, False))
            convs.append((p + ".c2", 3, 3, w, w, s, 1, False))  # v1.5: stride here
            convs.append((p + ".c3", 1, 1, w, 4 * w, 1, 0, True))
            if b == 0:
                convs.append((p + ".proj", 1, 1, cin, 4 * w, s, 0, False))
            cin = 4 * w
    return convs


def resnet_forward(x, params, stats=None, cut=None, start=None):
    """params: dict name -> (w, scale, shift) plus 'fc' -> (w, b).
    With stats (a dict), BN statistics are measured on the fly instead:
    calibration mode, eager. cut: return the activation at that point
    (RESNET_CUTS) instead of the probabilities."""
    def conv_bn(h, name, relu):
        lay = LAYOUT[name]
        w = params[name][0]
        y = lax.conv_general_dilated(h, w, (lay[5], lay[5]),
                                     [(lay[6], lay[6])] * 2, dimension_numbers=DN)
        if stats is not None:
            yn = np.asarray(y)
            mean = yn.mean(axis=(0, 1, 2))
            var = yn.var(axis=(0, 1, 2))
            gamma, beta = params[name][1], params[name][2]
            scale = (gamma / np.sqrt(var + BN_EPS)).astype(np.float32)
            shift = (beta - mean * scale).astype(np.float32)
            stats[name] = (scale, shift)
        else:
            scale, shift = params[name][1], params[name][2]
        y = y * scale + shift
        return jax.nn.relu(y) if relu else y

    # start: the segment to begin with (x is its input activation)
    order = ["stem"] + ["s%d.b%d" % (si + 1, b) for si, (_, n, _) in enumerate(STAGES)
                        for b in range(n)] + ["pool"]
    first = order.index(start) if start else 0
    h = x
    if first == 0:
        h = conv_bn(h, "stem", True)
        h = lax.reduce_window(h, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                              [(0, 0), (1, 1), (1, 1), (0, 0)])
    if cut == "stem":
        return h
    for si, (w, n, stride) in enumerate(STAGES):
        for b in range(n):
            p = "s%d.b%d" % (si + 1, b)
            if order.index(p) < first:
                continue
            y = conv_bn(h, p + ".c1", True)
            y = conv_bn(y, p + ".c2", True)
            y = conv_bn(y, p + ".c3", False)
            sc = conv_bn(h, p + ".proj", False) if b == 0 else h
            h = jax.nn.relu(y + sc)
            if cut == p:
                return h
    h = h.mean(axis=(1, 2))
    if stats is not None:
        stats["pooled_rms"] = float(np.sqrt(np.mean(np.square(np.asarray(h)))))
    if cut == "pool":
        return h
    logits = h @ params["fc"][0] + params["fc"][1]
    if cut == "logits":
        return logits
    return jax.nn.softmax(logits, axis=-1)


# Cut points: the stem, the end of each stage, and a few inside stage 3.
RESNET_CUTS = ["stem", "s1.b0", "s1.b2", "s2.b3", "s3.b0", "s3.b2", "s3.b5", "s4.b2",
               "pool", "logits"]


LAYOUT = {c[0]: c for c in resnet_layout()}
RESNET_BLOCKS = ["s%d.b%d" % (si + 1, b) for si, (_, n, _) in enumerate(STAGES) for b in range(n)]


def resnet50(batch, seeds):
    convs = resnet_layout()
    rng = np.random.default_rng(1234)
    raw = {}
    for name, kh, kw, cin, cout, s, p, last in convs:
        w = he(rng, (kh, kw, cin, cout), kh * kw * cin)
        lo, hi = (0.15, 0.35) if last else (0.6, 1.2)
        gamma = rng.uniform(lo, hi, cout).astype(np.float32)
        beta = (rng.standard_normal(cout) * 0.1).astype(np.float32)
        raw[name] = (w, gamma, beta)
    fc_w = rng.standard_normal((2048, 1000)).astype(np.float32)
    fc_b = (rng.standard_normal(1000) * 0.01).astype(np.float32)
    raw["fc"] = (fc_w * np.float32(np.sqrt(1.0 / 2048)), fc_b)
    # Calibration: BN statistics measured on 4 other images, layer by layer.
    calib = rng.standard_normal((4, 224, 224, 3)).astype(np.float32)
    stats = {}
    resnet_forward(jnp.asarray(calib), raw, stats)
    # Logits with a standard deviation near 3, as a trained classifier's
    # are (a peaked softmax rather than a flat one).
    fc_w *= np.float32(3.0 / (stats["pooled_rms"] * np.sqrt(2048)))
    flat = []  # (role, array) in parameter order; the image is first
    for name in [c[0] for c in convs]:
        flat.append((name + ".w", raw[name][0]))
        flat.append((name + ".scale", stats[name][0]))
        flat.append((name + ".shift", stats[name][1]))
    flat.append(("fc.w", fc_w))
    flat.append(("fc.b", fc_b))

    def image(seed):
        r = np.random.default_rng(seed)
        return r.standard_normal((batch, 224, 224, 3)).astype(np.float32)

    args = [("image", image(0))] + flat
    data = {0: lambda s: image(s)}

    def fn(x, *ws, cut=None, start=None):
        params = {}
        for i, c in enumerate(convs):
            params[c[0]] = tuple(ws[3 * i:3 * i + 3])
        params["fc"] = (ws[-2], ws[-1])
        return resnet_forward(x, params, cut=cut, start=start)
    return fn, args, data


# ---------------------------------------------------------------- DLRM

DLRM_ROWS = [100000, 50000, 20000, 10000, 5000, 2000, 1000, 500]
DLRM_DIM = 64
DLRM_BAG = 4
DLRM_BOT = [13, 512, 256, DLRM_DIM]
DLRM_TOP = [512, 256, 1]


def dlrm(batch, seeds):
    rng = np.random.default_rng(4321)
    t = len(DLRM_ROWS)
    nint = (t + 1) * t // 2
    bot = []
    for a, b in zip(DLRM_BOT[:-1], DLRM_BOT[1:]):
        bot += [he(rng, (a, b), a), (rng.standard_normal(b) * 0.01).astype(np.float32)]
    tables = [(rng.standard_normal((r, DLRM_DIM)) / np.sqrt(DLRM_DIM)).astype(np.float32)
              for r in DLRM_ROWS]
    top = []
    dims = [DLRM_DIM + nint] + DLRM_TOP
    for i, (a, b) in enumerate(zip(dims[:-1], dims[1:])):
        w = he(rng, (a, b), a) if i < len(dims) - 2 else \
            (rng.standard_normal((a, b)) * np.sqrt(1.0 / a)).astype(np.float32)
        top += [w, (rng.standard_normal(b) * 0.01).astype(np.float32)]
    li, lj = np.tril_indices(t + 1, -1)

    def dense(seed):
        r = np.random.default_rng(seed)
        return np.log1p(r.exponential(20.0, (batch, DLRM_BOT[0]))).astype(np.float32)

    def indices(seed, k):
        r = np.random.default_rng(seed * 100 + k + 1)
        # power law: a few hot rows take most lookups, duplicates happen
        u = r.random((batch, DLRM_BAG))
        return np.minimum((DLRM_ROWS[k] * u ** 4).astype(np.int32), DLRM_ROWS[k] - 1)

    args = [("dense", dense(0))]
    data = {0: dense}
    for k in range(t):
        args.append(("idx%d" % k, indices(0, k)))
        data[1 + k] = (lambda kk: (lambda s: indices(s, kk)))(k)
    args += [("bot.%s%d" % ("wb"[i % 2], i // 2), a) for i, a in enumerate(bot)]
    args += [("emb%d" % k, a) for k, a in enumerate(tables)]
    args += [("top.%s%d" % ("wb"[i % 2], i // 2), a) for i, a in enumerate(top)]
    nb, nt = len(bot), len(top)

    def fn(x, *rest, cut=None, start=None):
        idx = rest[:t]
        bw = rest[t:t + nb]
        emb = rest[t + nb:t + nb + t]
        tw = rest[t + nb + t:t + nb + t + nt]

        def top(g, first, cut):  # top MLP from layer `first`
            for i in range(2 * (first - 1), nt, 2):
                g = g @ tw[i] + tw[i + 1]
                if i + 2 < nt:
                    g = jax.nn.relu(g)
                if cut == "top%d" % (i // 2 + 1):
                    return g
            return jax.nn.sigmoid(g)

        h = x
        for i in range(0, nb if start is None else 0, 2):
            h = jax.nn.relu(h @ bw[i] + bw[i + 1])
        if cut == "bottom":
            return h
        if start and start.startswith("top"):
            return top(x, int(start[3:]), cut)
        pooled = [jnp.take(emb[k], idx[k], axis=0).sum(axis=1) for k in range(t)]
        z = jnp.stack([h] + pooled, axis=1)               # [B, T+1, D]
        if cut == "embed":
            return z
        zz = jnp.einsum("bid,bjd->bij", z, z)             # pairwise dots
        inter = zz[:, li, lj]                             # strict lower triangle
        g = jnp.concatenate([h, inter], axis=1)
        if cut == "interact":
            return g
        return top(g, 1, cut)
    return fn, args, data


DLRM_CUTS = ["bottom", "embed", "interact", "top1", "top2", "top3"]


# ------------------------------------------------ transformer block (pre-LN)

TF_SEQ, TF_DIM, TF_HEADS, TF_FF = 128, 256, 4, 1024


def transformer(dtype):
    def make(batch, seeds):
        rng = np.random.default_rng(777)
        d, f = TF_DIM, TF_FF

        def lin(a, b):
            return (rng.standard_normal((a, b)) * np.sqrt(1.0 / a)).astype(np.float32)

        ws = [("ln1.g", np.ones(d, np.float32) + 0.1 * rng.standard_normal(d).astype(np.float32)),
              ("ln1.b", (0.1 * rng.standard_normal(d)).astype(np.float32)),
              ("wq", lin(d, d)), ("wk", lin(d, d)), ("wv", lin(d, d)), ("wo", lin(d, d)),
              ("ln2.g", np.ones(d, np.float32) + 0.1 * rng.standard_normal(d).astype(np.float32)),
              ("ln2.b", (0.1 * rng.standard_normal(d)).astype(np.float32)),
              ("w1", lin(d, f)), ("b1", (0.01 * rng.standard_normal(f)).astype(np.float32)),
              ("w2", lin(f, d)), ("b2", (0.01 * rng.standard_normal(d)).astype(np.float32))]

        def x_of(seed):
            r = np.random.default_rng(seed)
            return r.standard_normal((batch, TF_SEQ, d)).astype(np.float32)

        cast = (lambda a: a.astype(BF16)) if dtype == "bf16" else (lambda a: a)
        args = [("x", cast(x_of(0)))] + [(n, cast(a)) for n, a in ws]
        data = {0: lambda s: cast(x_of(s))}

        def ln(x, g, b):
            mu = x.mean(-1, keepdims=True)
            var = ((x - mu) ** 2).mean(-1, keepdims=True)
            return (x - mu) * lax.rsqrt(var + jnp.asarray(1e-5, x.dtype)) * g + b

        def fn(x, g1, b1_, wq, wk, wv, wo, g2, b2_, w1, b1, w2, b2, cut=None, start=None):
            bsz = x.shape[0]
            hd = d // TF_HEADS

            def mlp(x):
                h = ln(x, g2, b2_)
                if cut == "ln2":
                    return h
                f = jax.nn.gelu(h @ w1 + b1)
                if cut == "ff1":
                    return f
                return x + f @ w2 + b2
            if start == "mlp":
                return mlp(x)
            h = ln(x, g1, b1_)
            if cut == "ln1":
                return h

            def heads(t):
                return t.reshape(bsz, TF_SEQ, TF_HEADS, hd).transpose(0, 2, 1, 3)
            q, k, v = heads(h @ wq), heads(h @ wk), heads(h @ wv)
            s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / jnp.asarray(np.sqrt(hd), x.dtype)
            mask = jnp.tril(jnp.ones((TF_SEQ, TF_SEQ), bool))
            s = jnp.where(mask, s, jnp.asarray(-1e4, x.dtype))
            if cut == "scores":
                return s
            p = jax.nn.softmax(s, axis=-1)
            if cut == "softmax":
                return p
            a = jnp.einsum("bhqk,bhkd->bhqd", p, v)
            x = x + a.transpose(0, 2, 1, 3).reshape(bsz, TF_SEQ, d) @ wo
            if cut == "attn":
                return x
            return mlp(x)
        return fn, args, data
    return make


TF_CUTS = ["ln1", "scores", "softmax", "attn", "ln2", "ff1"]

# Segments: (label, start, cut, input): the model from `start` to `cut`
# (None: its beginning / its end), fed the activation of the full model at
# cut `input` (None: the model's own first input). Checked one by one they
# cover the whole model with shallow modules (docs/MODELS.md).
RESNET_SEGS = ([("stem", None, "stem", None)]
               + [(p, p, p, q) for q, p in zip(["stem"] + RESNET_BLOCKS[:-1], RESNET_BLOCKS)]
               + [("head", "pool", None, RESNET_BLOCKS[-1])])
DLRM_SEGS = [("bottom", None, "bottom", None), ("interact", "interact", "interact", "bottom"),
             ("top1", "top1", "top1", "interact"), ("top2", "top2", "top2", "top1"),
             ("top3", "top3", None, "top2")]
TF_SEGS = [("attn", None, "attn", None), ("mlp", "mlp", None, "attn")]

MODELS = {
    "resnet50": resnet50,
    "dlrm": dlrm,
    "transformer_f32": transformer("f32"),
    "transformer_bf16": transformer("bf16"),
}
CUTS = {"resnet50": RESNET_CUTS, "dlrm": DLRM_CUTS,
        "transformer_f32": TF_CUTS, "transformer_bf16": TF_CUTS}
SEGS = {"resnet50": RESNET_SEGS, "dlrm": DLRM_SEGS,
        "transformer_f32": TF_SEGS, "transformer_bf16": TF_SEGS}
DEFAULT_BATCH = {"resnet50": 1, "dlrm": 32, "transformer_f32": 1, "transformer_bf16": 1}


def hlo_ns():
    """Where HloPrintOptions lives (as in adapters/xla/adapter.py)."""
    try:
        import jaxlib._hlo as h  # jaxlib >= 0.10.2
        return h
    except ImportError:
        from jax._src.lib import xla_client as xc
        return xc._xla


def save_npy(path, a):
    np.save(path, np.ascontiguousarray(a))


def hlo_text(lowered):
    # large constants in full: '{...}' could not be evaluated
    return lowered.compiler_ir("hlo").as_hlo_text(print_large_constants=True)


def dump(name, out, batch, seeds, cuts):
    fn, args, data = MODELS[name](batch, seeds)
    arrays = [jnp.asarray(a) for _, a in args]
    lowered = jax.jit(fn, keep_unused=True).lower(*arrays)
    with open(os.path.join(out, name + ".pre.hlo"), "w") as f:
        f.write(hlo_text(lowered))
    po = hlo_ns().HloPrintOptions()
    po.print_large_constants = True
    exe = lowered.compile().runtime_executable()
    with open(os.path.join(out, name + ".opt.hlo"), "w") as f:
        f.write("\n\n".join(m.to_string(po) for m in exe.hlo_modules()))
    # Cuts: the same function stopped early, with the same parameter list
    # (keep_unused), so the same input files apply.
    for c in (CUTS[name] if cuts else []):
        low = jax.jit(lambda *a, c=c: fn(*a, cut=c), keep_unused=True).lower(*arrays)
        with open(os.path.join(out, "%s.cut-%s.pre.hlo" % (name, c)), "w") as f:
            f.write(hlo_text(low))
    if cuts:
        dump_segments(name, out, fn, args, data, seeds)
    d = os.path.join(out, name + ".inputs")
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "params.txt"), "w") as f:
        for k, (role, a) in enumerate(args):
            save_npy(os.path.join(d, "p%d.npy" % k), a)
            f.write("%d %s %s %s%s\n" % (k, role, "data" if k in data else "weight",
                                         a.dtype, list(a.shape)))
    for s in range(1, seeds):
        sd = os.path.join(d, "seed%d" % s)
        os.makedirs(sd, exist_ok=True)
        for k, gen in data.items():
            save_npy(os.path.join(sd, "p%d.npy" % k), gen(s))
    print("%s: %d parameters, %d seeds, %d cuts -> %s"
          % (name, len(args), seeds, len(CUTS[name]) if cuts else 0, out))


def used_params(f, arrays):
    """Indices of the arguments f really reads (jax would drop the others)."""
    jx = jax.make_jaxpr(f)(*arrays).jaxpr
    seen = set()
    for e in jx.eqns:
        seen.update(id(v) for v in e.invars)
    seen.update(id(v) for v in jx.outvars)
    return [k for k, v in enumerate(jx.invars) if id(v) in seen]


def segment_fn(fn, seg, keep, nargs):
    """The model from seg's start to its cut, taking only the arguments
    `keep` (indices into the full model's, 0 = the input activation)."""
    _, start, cut, _ = seg

    def f(*a):
        full = [None] * nargs
        for k, v in zip(keep, a):
            full[k] = v
        return fn(*full, cut=cut, start=start)
    return f


def dump_segments(name, out, fn, args, data, seeds):
    """NAME.seg-LABEL.pre.hlo and .inputs/ per segment (SEGS): the input
    activation of each seed is the previous segment's output (XLA's, f32)."""
    nargs = len(args)
    full = {s: [a if (k not in data or s == 0) else data[k](s) for k, (_, a) in enumerate(args)]
            for s in range(seeds)}
    act = {s: full[s][0] for s in range(seeds)}
    for seg in SEGS[name]:
        label = seg[0]
        whole = [act[0]] + full[0][1:]
        keep = used_params(lambda *a: fn(*a, cut=seg[2], start=seg[1]), whole)
        f = jax.jit(segment_fn(fn, seg, keep, nargs), keep_unused=True)
        with open(os.path.join(out, "%s.seg-%s.pre.hlo" % (name, label)), "w") as fh:
            fh.write(hlo_text(f.lower(*[whole[k] for k in keep])))
        d = os.path.join(out, "%s.seg-%s.inputs" % (name, label))
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, "params.txt"), "w") as fh:
            for i, k in enumerate(keep):
                role = "activation" if k == 0 else args[k][0]
                varies = k == 0 or k in data
                a = whole[k]
                fh.write("%d %s %s %s%s full=%d\n" % (i, role, "data" if varies else "weight",
                                                      a.dtype, list(a.shape), k))
                p = os.path.join(d, "p%d.npy" % i)
                if os.path.lexists(p):
                    os.remove(p)
                if varies:
                    save_npy(p, np.asarray(a))
                    for sd in range(1, seeds):
                        sdir = os.path.join(d, "seed%d" % sd)
                        os.makedirs(sdir, exist_ok=True)
                        b = act[sd] if k == 0 else full[sd][k]
                        save_npy(os.path.join(sdir, "p%d.npy" % i), np.asarray(b))
                else:  # the model's own weight file
                    os.symlink(os.path.join("..", name + ".inputs", "p%d.npy" % k), p)
        for sd in range(seeds):
            act[sd] = f(*[([act[sd]] + full[sd][1:])[k] for k in keep])


def load_npy(path):
    a = np.load(path)
    if a.dtype.kind == "V" and a.dtype.itemsize == 2:  # trench writes bf16 raw
        a = a.view(BF16)
    return a


def errors(name, cut, bundle, seg=None):
    """Evaluates the model (or cut) in f64 with jax on the inputs of a
    `trench check --save` bundle and prints how far the reference's exact
    f32 result (ref0.npy) and the target's (target0.npy) are from it."""
    jax.config.update("jax_enable_x64", True)
    n = len([f for f in os.listdir(bundle) if re.fullmatch(r"in\d+\.npy", f)])
    ins = [load_npy(os.path.join(bundle, "in%d.npy" % k)) for k in range(n)]
    batch = ins[0].shape[0]
    fn, args, _ = MODELS[name](batch, 1)
    x64 = [jnp.asarray(a.astype(np.float64) if a.dtype.kind in "fV" or a.dtype == BF16 else a)
           for a in ins]
    if seg:
        keep = [int(ln.split("full=")[1]) for ln in open(seg[1])]
        sg = next(x for x in SEGS[name] if x[0] == seg[0])
        f = segment_fn(fn, sg, keep, len(args))
        label = ".seg-" + seg[0]
    else:
        label = ".cut-" + cut if cut else ""

        def f(*a):
            return fn(*a, cut=cut)
    want = np.asarray(jax.jit(f)(*x64), dtype=np.float64)
    big = np.abs(want).max()
    print("%s%s: f64 max|y| %.6g" % (name, label, big))
    for f in ("ref0.npy", "exact0.npy", "target0.npy"):
        p = os.path.join(bundle, f)
        if not os.path.exists(p):
            continue
        got = load_npy(p).astype(np.float64)
        d = np.abs(got - want)
        i = int(np.argmax(d))
        sig = np.abs(want) > 1e-3 * big
        rel = (d[sig] / np.abs(want[sig])).max() if sig.any() else 0.0
        print("  %-11s max|err| %.3g (at %d: f64 %.9g, got %.9g)  max rel err %.3g"
              " (|y| > 1e-3 max)" % (f[:-4], d.max(), i, want.flat[i], got.flat[i], rel))


def main():
    if len(sys.argv) == 4 and sys.argv[1] == "list" and sys.argv[3] in MODELS:
        # list cuts|segs MODEL: the labels in model order (for model_check.sh)
        print(" ".join(CUTS[sys.argv[3]] if sys.argv[2] == "cuts"
                       else [g[0] for g in SEGS[sys.argv[3]]]))
        return
    if len(sys.argv) > 1 and sys.argv[1] == "errors":
        ap = argparse.ArgumentParser(prog="models.py errors")
        ap.add_argument("model", choices=list(MODELS))
        ap.add_argument("bundle", help="a trench check --save DIR")
        ap.add_argument("--cut", default=None)
        ap.add_argument("--seg", default=None, help="LABEL: a segment; needs --dir")
        ap.add_argument("--dir", default="/work/models")
        a = ap.parse_args(sys.argv[2:])
        seg = None
        if a.seg:
            seg = (a.seg, os.path.join(a.dir, "%s.seg-%s.inputs" % (a.model, a.seg), "params.txt"))
        errors(a.model, a.cut, a.bundle, seg)
        return
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default="/work/models")
    ap.add_argument("--seeds", type=int, default=3)
    ap.add_argument("--batch", type=int, default=0, help="0: per-model default")
    ap.add_argument("--no-cuts", action="store_true")
    ap.add_argument("models", nargs="*")
    a = ap.parse_args()
    names = a.models or list(MODELS)
    for n in names:
        if n not in MODELS:
            sys.exit("models.py: unknown model %r (have: %s)" % (n, " ".join(MODELS)))
    os.makedirs(a.out, exist_ok=True)
    for n in names:
        dump(n, a.out, a.batch or DEFAULT_BATCH[n], max(1, a.seeds), not a.no_cuts)


if __name__ == "__main__":
    main()
