#!/usr/bin/env python3
"""adapter.py - PyTorch behind trench's process protocol (docs/PROTOCOL.md).

  adapter.py --mode eager      torch's eager CPU kernels (target torch-eager)
  adapter.py --mode inductor   torch.compile with Inductor on the CPU
                               (target torch-inductor)

The module (HLO text) is translated to Python source calling torch
(hlo_torch.py); an op without an exact torch form is answered
`unsupported` with the reason. With "want_optimized_hlo" the reply names
the generated source (and, for Inductor, the realisation used), so a
finding carries its standalone reproducer.

Realisations. The same function can reach torch in several ways that must
not change its result; which one a run uses is picked from the inputs'
bytes (so a replay with the same inputs picks the same; Inductor: from
the module alone, so the seeds of a check share one compilation) unless
--realisation NAME (trench's --realisation) or TRENCH_TORCH_REALISATION
names one. The reply's "realisation" key and
the optimized file say which:
  plain         inputs as given, under torch.no_grad
  grad          inputs as given, grad mode on (floating inputs require grad)
  noncontig     inputs as non-contiguous views (every other element of a buffer)
  offset        inputs as views at an offset into a larger buffer (not copies)
  channels_last inputs of rank 4 (5) in channels-last (3d) memory format
  mutate        each input arrives negated (bitwise-not for pred) and the
                function first negates it back in place through a flat
                view of it: a mutation of a view of an input
  inplace       element-wise ops as in-place methods on a clone of their
                first operand (a.clone().add_(b))
  out           element-wise ops written into a fresh buffer (out=)
  second        the compiled function is called twice; the second result counts
  dynamic       (inductor) torch._dynamo.maybe_mark_dynamic on every input dim > 1
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from protocol import PROTOCOL, Refusal, claim_stdout, serve  # noqa: E402

# Replies go to a private copy of stdout (before the compiler is imported).
_PROTO = claim_stdout()

import hashlib  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import torch  # noqa: E402
import torch._dynamo  # noqa: E402,F401  (torch 2.1 does not import it with torch)

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import hlo_torch  # noqa: E402

MODE = "eager"
if "--mode" in sys.argv:
    MODE = sys.argv[sys.argv.index("--mode") + 1]
if MODE not in ("eager", "inductor"):
    sys.stderr.write("adapter.py: --mode eager|inductor\n")
    sys.exit(2)
REALISATIONS = ["plain", "grad", "noncontig", "offset", "channels_last", "mutate", "inplace",
                "out", "second"] + (["dynamic"] if MODE == "inductor" else [])
# --realisation NAME (trench check/fuzz --realisation): every run in NAME.
FORCED = None
if "--realisation" in sys.argv:
    FORCED = sys.argv[sys.argv.index("--realisation") + 1]
    if FORCED not in REALISATIONS:
        sys.stderr.write("adapter.py: --realisation %s: torch-%s has %s\n"
                         % (FORCED, MODE, ", ".join(REALISATIONS)))
        sys.exit(2)
FORM = {"inplace": "inplace", "out": "out"}  # realisation -> hlo_torch form
CACHE = {}  # (module text, form) -> (run function, source, entry)
COMPILED = {}  # inductor: the module text compiled last and its functions by variant


LIMITED = ("u16", "u32", "u64", "f8e4m3fn", "f8e5m2")


def ent_comps(text):
    """Every array shape of the module's instructions, per computation."""
    comps, _ = hlo_torch.parse(text)
    return [[leaf for ins in c.instrs for leaf in ins.shape.leaves()] for c in comps.values()]


def short(e):
    s = ("%s: %s" % (type(e).__name__, e)).strip()
    return s if len(s) < 4000 else s[:4000] + "..."


def not_implemented(e):
    """torch's own "this dtype has no kernel" errors: not a finding."""
    s = str(e)
    return isinstance(e, (NotImplementedError, hlo_torch.Unsupported)) or \
        "not implemented for" in s or "Could not run" in s or "not supported for" in s \
        or "NotImplementedError" in s or "Unsupported" in type(e).__name__


def load(path, shape):
    a = np.load(path)
    dt = shape.torch_dtype()
    if dt == torch.bfloat16 or dt in hlo_torch.FLOAT8:
        raw = np.ascontiguousarray(a).view(np.uint16 if dt == torch.bfloat16 else np.uint8)
        t = torch.from_numpy(raw.copy())
        return t.view(dt).reshape(shape.dims)
    return torch.from_numpy(np.ascontiguousarray(a).copy()).reshape(shape.dims)


def save(path, t, shape):
    t = t.detach().contiguous()
    if list(t.shape) != shape.dims or t.dtype != shape.torch_dtype():
        raise Refusal("error", "translation gave %s%s for %s%s" % (
            t.dtype, list(t.shape), shape.dtype, shape.dims))
    if t.dtype == torch.bfloat16:
        a = t.view(torch.int16).numpy().view(np.uint16)
    elif t.dtype in hlo_torch.FLOAT8:
        a = t.view(torch.uint8).numpy().view(np.dtype("V1"))
    else:
        a = t.numpy()
    np.save(path, a)


def negate(x):
    """The mutate realisation's involution: -x (integers wrap, so -(-MIN) is
    MIN), bitwise-not for pred."""
    return torch.bitwise_not(x) if x.dtype == torch.bool else torch.neg(x)


def mutable(x):
    """Inputs the mutate realisation negates: not float8 and not the
    uint16/32/64 types torch has few kernels for."""
    return x.dtype not in hlo_torch.FLOAT8 and x.dtype not in \
        tuple(hlo_torch.DTYPES[k] for k in LIMITED if k in hlo_torch.DTYPES)


def realise(args, how):
    if how == "noncontig":
        out = []
        for x in args:  # every other element of a buffer twice as wide
            if x.dim() == 0:
                out.append(x)
                continue
            buf = torch.empty(list(x.shape[:-1]) + [2 * x.shape[-1]], dtype=x.dtype)[..., ::2]
            buf.copy_(x)
            out.append(buf)
        return out
    if how == "offset":
        out = []
        for i, x in enumerate(args):  # a view starting 1 + i elements into its buffer
            k = 1 + i
            buf = torch.empty(x.numel() + k, dtype=x.dtype)
            v = buf[k:].view(x.shape)
            v.copy_(x)
            out.append(v)
        return out
    if how == "channels_last":
        fmt = {4: torch.channels_last, 5: torch.channels_last_3d}
        return [x.contiguous(memory_format=fmt[x.dim()]) if x.dim() in fmt else x for x in args]
    if how == "mutate":
        return [negate(x) if mutable(x) else x for x in args]
    if how == "grad":
        return [x.requires_grad_(True) if x.is_floating_point() and x.dtype not in
                hlo_torch.FLOAT8 else x for x in args]
    return args


def mutating(fn):
    """fn behind the mutate realisation: undoes realise()'s negation in
    place, through a flat view of each input, then calls fn."""
    def run(*args):
        for x in args:
            if mutable(x):
                v = x.view(-1)
                if x.dtype == torch.bool:
                    v.bitwise_not_()
                else:
                    v.neg_()
        return fn(*args)
    return run


def pick(text, inputs):
    if FORCED:
        return FORCED
    env = os.environ.get("TRENCH_TORCH_REALISATION")
    if env:
        if env not in REALISATIONS:
            raise Refusal("error", "TRENCH_TORCH_REALISATION=%s: expected one of %s"
                          % (env, ", ".join(REALISATIONS)))
        return env
    h = hashlib.sha256(text.encode())
    if MODE == "eager":
        # Inductor picks from the module alone: every seed of a check then
        # reuses one compiled function (a compile is 10-150 s under load;
        # a realisation of other strides or form would compile again).
        for p in inputs:
            with open(p, "rb") as f:
                h.update(f.read())
    return REALISATIONS[h.digest()[0] % len(REALISATIONS)]


def run(req):
    with open(req["module"]) as f:
        text = f.read()
    opts = req.get("options") or {}
    t0 = time.perf_counter()
    how = pick(text, req["inputs"])
    form = FORM.get(how, "call")
    hit = CACHE.get((text, form))
    if hit is None:
        try:
            fn, src, ent = hlo_torch.build(text, form)
        except hlo_torch.Unsupported as e:
            raise Refusal("unsupported", str(e))
        except Exception as e:
            raise Refusal("unsupported", "cannot read the module: " + short(e))
        if len(CACHE) >= 16:  # a campaign sends a new module each time
            CACHE.clear()
        hit = CACHE[(text, form)] = (fn, src, ent)
    fn, src, ent = hit
    params = [ent.params[i].shape for i in sorted(ent.params)]
    leaves = [x for s in params for x in s.leaves()]
    results = ent.root.shape.leaves()
    if len(leaves) != len(req["inputs"]):
        raise Refusal("error", "%d inputs for %d parameter leaves" % (len(req["inputs"]), len(leaves)))
    args = realise([load(p, s) for p, s in zip(req["inputs"], leaves)], how)
    if how == "mutate":
        fn = mutating(fn)
    if MODE == "inductor":
        if COMPILED.get("text") != text:
            # A new module: drop the last one's graphs (dynamo's cache
            # would otherwise grow with every module of a campaign).
            torch._dynamo.reset()
            COMPILED.clear()
            COMPILED["text"] = text
        # One compiled function per source form and wrapper; the other
        # realisations share it (dynamo's guards decide on recompiling).
        variant = "mutate" if how == "mutate" else form
        if variant not in COMPILED:
            COMPILED[variant] = torch.compile(fn, backend="inductor", fullgraph=False)
        target = COMPILED[variant]
        if how == "dynamic":
            for x in args:
                for d in range(x.dim()):
                    if x.shape[d] > 1:
                        torch._dynamo.maybe_mark_dynamic(x, d)
    else:
        target = fn
    t1 = time.perf_counter()
    try:
        with torch.set_grad_enabled(how == "grad"):
            outs = target(*args)
            t2 = time.perf_counter()
            if how == "second":
                outs = target(*realise([load(p, s) for p, s in zip(req["inputs"], leaves)], "plain"))
    except hlo_torch.Unsupported as e:
        raise Refusal("unsupported", str(e))
    except Exception as e:
        if not_implemented(e):
            raise Refusal("unsupported", "torch has no kernel: " + short(e))
        if MODE == "inductor":
            # torch documents uint16/32/64 and float8 as "limited support"
            # types (eager lacks most of their kernels too): Inductor
            # failing on them is that limitation, not a compiler bug.
            if any(s.dtype in LIMITED for s in leaves + results) or \
                    any(s.dtype in LIMITED for c in ent_comps(text) for s in c):
                raise Refusal("unsupported", "torch.compile on a limited-support dtype "
                              "(uint16/32/64, float8): " + short(e))
            # An op eager torch has no kernel for either (bool bmm) is
            # the translation's reach, not a compiler bug.
            try:
                with torch.no_grad():
                    fn(*realise([load(p, s) for p, s in zip(req["inputs"], leaves)], "plain"))
            except Exception as e2:
                if not_implemented(e2):
                    raise Refusal("unsupported", "torch has no kernel (eager too): " + short(e2))
            raise Refusal("compile_error", "Inductor failed: " + short(e))
        raise Refusal("error", "running failed: " + short(e))
    t3 = time.perf_counter()
    if len(outs) != len(results):
        raise Refusal("error", "translation gave %d outputs for %d root leaves" % (len(outs), len(results)))
    paths = []
    for i, (t, s) in enumerate(zip(outs, results)):
        p = os.path.join(req["outdir"], "out%d.npy" % i)
        save(p, t, s)
        paths.append(p)
    rep = {"status": "ok", "outputs": paths, "realisation": how,
           "message": "realisation %s" % how,
           "compile_ms": (t1 - t0) * 1e3 + ((t2 - t1) * 1e3 if MODE == "inductor" else 0),
           "run_ms": (t3 - t2) * 1e3 if how == "second" else (t2 - t1) * 1e3}
    if opts.get("want_optimized_hlo"):
        p = os.path.join(req["outdir"], "optimized.py")
        with open(p, "w") as f:
            f.write("# torch %s, %s, realisation %s\n%s\n" % (torch.__version__, MODE, how, src))
        rep["optimized_hlo"] = p
    return rep


def main():
    torch.set_num_threads(max(1, min(4, os.cpu_count() or 1)))
    hello = {"status": "ok", "protocol": PROTOCOL, "name": "torch-" + MODE,
             "version": "torch %s" % torch.__version__,
             "capabilities": ["optimized_hlo", "timings"]}
    serve(_PROTO, {"hello": lambda req: dict(hello), "run": run}, describe=short)


if __name__ == "__main__":
    main()
