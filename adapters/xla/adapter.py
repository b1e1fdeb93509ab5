#!/usr/bin/env python3
"""adapter.py - XLA's CPU compiler (through jax/jaxlib) behind trench's
process protocol (docs/PROTOCOL.md).

HLO text goes to XLA this way: XLA's own HLO parser (hlo_module_from_text)
-> HloModuleProto -> StableHLO (hlo_to_stablehlo) -> client.compile_and_load
on the CPU device with a bare CompileOptions (XLA's normal pipeline) ->
execute. No jaxlib release from 0.4.30 to 0.10.x compiles an HLO module
from Python any other way (docs/PROTOCOL.md, "The module XLA receives"),
and XLA's MLIR -> HLO export canonicalizes and folds on the way, so the
module XLA's passes start from can differ from the one sent. The adapter
therefore says what XLA received: with "want_received_hlo" it returns
XLA's own before-optimizations dump, and trench compares it with what it
sent (names aside) and names any change in its verdict.

A module file may also be StableHLO/MHLO text (what jax.jit(f).lower(...)
.as_text() prints): it is compiled unchanged, exactly as jax hands it to
XLA, and the "convert" request returns XLA's own conversion of it to HLO
(what trench's reference evaluates).

Run with the project virtualenv (scripts/venv.sh):
  trench ... --target 'cmd:.venv/bin/python adapters/xla/adapter.py'
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from protocol import PROTOCOL, Refusal, claim_stdout, serve  # noqa: E402

# Replies go to a private copy of stdout (before the compiler is imported).
_PROTO = claim_stdout()

# Before jax is imported: CPU only. XLA_FLAGS is left alone (it is read once
# per process and an unknown flag kills it); everything per-compile goes
# through CompileOptions.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import glob  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import jax  # noqa: E402
import jaxlib  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

jax.config.update("jax_enable_x64", True)  # else device_put narrows 64-bit types

DEV = jax.devices("cpu")[0]
CLIENT = DEV.client


def hlo_ns():
    """Where hlo_module_from_text and HloPrintOptions live."""
    try:
        import jaxlib._hlo as h  # jaxlib >= 0.10.2
        return h
    except ImportError:
        return xc._xla  # 0.4.30 .. 0.10.1


HLO = hlo_ns()

# The last few compiled executables, by (module text, disabled passes).
CACHE = {}


def first_line(e):
    s = str(e).strip()
    return s if len(s) < 4000 else s[:4000] + "..."


def is_mlir(text):
    """StableHLO/MHLO text rather than HLO text: an MLIR module."""
    for line in text.splitlines():
        t = line.strip()
        if not t or t.startswith("//") or t.startswith("#loc"):
            continue
        return t.startswith("module") or t.startswith("func.func")
    return False


def mlir_to_hlo(text):
    """XLA's own conversion of MLIR text to an XlaComputation: the same
    MlirToXlaComputation that compiling runs."""
    try:
        return xc._xla.mlir.mlir_module_to_xla_computation(
            text, use_tuple_args=False, return_tuple=False)
    except Exception as e:
        raise Refusal("unsupported", "XLA cannot convert the MLIR module: " + first_line(e))


def to_mlir(text):
    """Module text -> (MLIR for compile_and_load, program shape). HLO text
    goes through XLA's HLO parser and importer; MLIR text is kept as it is."""
    if is_mlir(text):
        return text, mlir_to_hlo(text).program_shape()
    try:
        mod = HLO.hlo_module_from_text(text)
    except Exception as e:
        raise Refusal("unsupported", "XLA's HLO parser rejected the module: " + first_line(e))
    proto = mod.as_serialized_hlo_module_proto()
    shape = xc.XlaComputation(proto).program_shape()
    m = xc._xla.mlir
    try:
        if hasattr(m, "hlo_to_stablehlo"):
            return m.hlo_to_stablehlo(proto), shape
        return m.xla_computation_to_mlir_module(xc.XlaComputation(proto)), shape
    except Exception as e:
        raise Refusal("unsupported", "HLO -> StableHLO failed: " + first_line(e))


def leaves(shape):
    """Array leaves of an XLA shape, depth-first (tokens skipped)."""
    if shape.is_tuple():
        out = []
        for s in shape.tuple_shapes():
            out += leaves(s)
        return out
    return [shape] if shape.is_array() else []


def compile_options(opts, dump_dir=None, pass_re=None):
    o = xc.CompileOptions()
    d = o.executable_build_options.debug_options
    dis = opts.get("disable_passes") or []
    if dis:
        d.xla_disable_hlo_passes = ",".join(dis)
    if dump_dir:
        d.xla_dump_to = dump_dir
        d.xla_dump_hlo_as_text = True
        if pass_re:
            d.xla_dump_hlo_pass_re = pass_re
        else:
            # The received module also as a proto: its text dump elides
            # large constants ('{...}'), which could not be compared.
            d.xla_dump_hlo_as_proto = True
    return o


def compile_mlir(mlir, o):
    try:
        if hasattr(CLIENT, "compile_and_load"):
            return CLIENT.compile_and_load(mlir, [DEV], o)
        return CLIENT.compile(mlir, compile_options=o)
    except Exception as e:
        msg = first_line(e)
        # jaxlib compiles MLIR only: a module XLA's HLO parser took but the
        # StableHLO verifier rejects (an iota of pred, ...) has no form this
        # path can give XLA. Not a compile error of XLA's pipeline.
        if "Failed to parse using StableHLO" in msg:
            raise Refusal("unsupported", "no valid StableHLO form: " + msg)
        raise Refusal("compile_error", msg)


PASS_FILE = re.compile(r"\.(\d{4})\.([^.]+)\.after_(.+?)(?:\.before_.*)?\.txt$")


def dumped_passes(dump_dir):
    """Pass names from per-pass dump file names, in pipeline order, each
    once. With pass regex '.*' XLA dumps only after passes that changed the
    module; with '.+' after every pass that ran."""
    found = []
    for path in glob.glob(os.path.join(dump_dir, "module_*.txt")):
        m = PASS_FILE.search(os.path.basename(path))
        if m and m.group(3) != "pipeline-start":
            found.append((int(m.group(1)), m.group(3)))
    out = []
    for _, name in sorted(found):
        if name not in out:
            out.append(name)
    return out


def pass_dumps(dump_dir, outdir):
    """The module as XLA's passes received it ("received": the first
    pipeline's start), then after every pass that changed it, in pipeline
    order (a pass that ran twice appears twice), copied out of dump_dir:
    [{"pass": NAME, "path": FILE}]. Only the first module's dumps."""
    found = []
    for path in glob.glob(os.path.join(dump_dir, "module_*.txt")):
        base = os.path.basename(path)
        m = PASS_FILE.search(base)
        if m:
            found.append((base.split(".")[0], int(m.group(1)), m.group(3), path))
    if not found:
        return []
    first = sorted(found)[0][0]
    out = []
    for mod, seq, name, path in sorted(found):
        if mod != first or (name == "pipeline-start" and out):
            continue
        p = os.path.join(outdir, "pass_%04d.hlo" % seq)
        shutil.copyfile(path, p)
        out.append({"pass": "received" if name == "pipeline-start" else name, "path": p})
    return out


def proto_field1(b):
    """The bytes of field 1 of a serialized proto message (HloProto's
    hlo_module), or None."""
    i = 0

    def varint():
        nonlocal i
        v = s = 0
        while True:
            c = b[i]
            i += 1
            v |= (c & 0x7F) << s
            s += 7
            if c < 0x80:
                return v
    while i < len(b):
        key = varint()
        field, wire = key >> 3, key & 7
        if wire == 0:
            varint()
        elif wire == 2:
            n = varint()
            if field == 1:
                return b[i:i + n]
            i += n
        elif wire == 1:
            i += 8
        elif wire == 5:
            i += 4
        else:
            return None
    return None


def received_hlo(dump_dir):
    """The text of the module XLA's passes received: printed from the
    proto dump with every constant in full where it can be read, else the
    text dump (large constants elided)."""
    pb = glob.glob(os.path.join(dump_dir, "module_*.before_optimizations.hlo.pb"))
    if pb:
        try:
            with open(pb[0], "rb") as f:
                mod = HLO.HloModule.from_serialized_hlo_module_proto(proto_field1(f.read()))
            po = HLO.HloPrintOptions.short_parsable()
            po.print_large_constants = True
            return mod.to_string(po)
        except Exception:  # an older release's proto API: the text dump
            pass
    got = glob.glob(os.path.join(dump_dir, "module_*.before_optimizations.txt"))
    if not got:
        return None
    with open(got[0]) as f:
        return f.read()


def load_npy(path, want):
    """Reads a .npy file as dtype want. Types numpy lacks arrive as raw
    bytes ('<V2', '|V1'), as bit views ('<u2' for bf16) or, for
    float8_e5m2 saved by ml_dtypes, as '<f1', which np.load refuses."""
    with open(path, "rb") as f:
        version = np.lib.format.read_magic(f)
        read_header = (np.lib.format.read_array_header_1_0 if version == (1, 0)
                       else np.lib.format.read_array_header_2_0)
        try:
            shape, fortran, dtype = read_header(f)
        except ValueError:
            f.seek(0)
            data = f.read()
            if b"'<f1'" not in data[:256]:
                raise
            # Same header with a void descr, then read it the ordinary way.
            return load_bytes(data.replace(b"'<f1'", b"'|V1'", 1), want)
        a = np.fromfile(f, dtype=dtype, count=int(np.prod(shape)) if shape else 1)
        a = a.reshape(shape, order="F" if fortran else "C")
    return as_dtype(a, want)


def load_bytes(data, want):
    import io
    return as_dtype(np.load(io.BytesIO(data)), want)


def as_dtype(a, want):
    if a.dtype == want:
        return a.copy(order="C")  # ascontiguousarray would make 0-d arrays 1-d
    if a.dtype.itemsize == want.itemsize and (a.dtype.kind in "Vu" or want.kind not in "biuf"):
        return a.copy(order="C").view(want)  # bits of a type numpy lacks
    raise Refusal("error", "holds %s, the parameter wants %s" % (a.dtype, want))


def load_inputs(paths, params):
    if len(paths) != len(params):
        raise Refusal("error", "%d inputs, the module has %d parameter leaves"
                      % (len(paths), len(params)))
    arrays = []
    for i, (path, ps) in enumerate(zip(paths, params)):
        want = ps.numpy_dtype()
        try:
            a = load_npy(path, want)
        except Refusal as e:
            raise Refusal("error", "input %d %s" % (i, e))
        if tuple(a.shape) != tuple(ps.dimensions()):
            raise Refusal("error", "input %d has shape %s, parameter wants %s"
                          % (i, a.shape, tuple(ps.dimensions())))
        arrays.append(a)
    return arrays


def run(req):
    opts = req.get("options") or {}
    outdir = req["outdir"]
    with open(req["module"]) as f:
        text = f.read()
    t0 = time.perf_counter()
    mlir, pshape = to_mlir(text)
    t_import = time.perf_counter() - t0  # part of compiling: XLA's parser, MLIR
    params = []
    for s in pshape.parameter_shapes():
        params += leaves(s)
    results = leaves(pshape.result_shape())
    arrays = load_inputs(req["inputs"], params)
    want_dumps = bool(opts.get("want_pass_dumps"))
    want_passes = bool(opts.get("want_passes")) or want_dumps
    want_received = bool(opts.get("want_received_hlo"))
    # trench check sends the same module once per seed: reuse the
    # executable and the module XLA received with it (not when pass dumps
    # are wanted, they come from compiling).
    key = None if want_passes else (text, tuple(opts.get("disable_passes") or []))
    hit = CACHE.get(key) if key else None
    if hit and want_received and hit[1] is None:
        hit = None
    dump_dir = None
    if hit is None and (want_passes or want_received):
        dump_dir = tempfile.mkdtemp(prefix="xla_dump_", dir=outdir)
    o = compile_options(opts, dump_dir, ".*" if want_passes else None)
    t1 = time.perf_counter()
    if hit is None:
        exe = compile_mlir(mlir, o)
        received = received_hlo(dump_dir) if dump_dir else None
        if key:
            if len(CACHE) >= 4:
                CACHE.pop(next(iter(CACHE)))
            CACHE[key] = (exe, received)
    else:
        exe, received = hit
    t2 = time.perf_counter()
    try:
        args = [jax.device_put(a, DEV) for a in arrays]
        t3 = time.perf_counter()
        outs = exe.execute(args)
        for x in outs:
            x.block_until_ready()  # the CPU client dispatches asynchronously
        t4 = time.perf_counter()
        outs = [np.asarray(x) for x in outs]
    except Exception as e:
        raise Refusal("error", "execution failed: " + first_line(e))
    if len(outs) != len(results):
        raise Refusal("error", "XLA returned %d outputs, the module's root has %d leaves"
                      % (len(outs), len(results)))
    paths = []
    for i, a in enumerate(outs):
        p = os.path.join(outdir, "out%d.npy" % i)
        if a.dtype.kind == "f" and a.dtype.itemsize == 1:
            # ml_dtypes' float8_e5m2 would be saved as '<f1', which np.load
            # refuses; raw bytes '<V1' are what trench writes too.
            a = a.view(np.dtype("V1"))
        np.save(p, a)
        paths.append(p)
    rep = {"status": "ok", "outputs": paths,
           "compile_ms": (t_import + (t2 - t1)) * 1e3,
           "run_ms": (t4 - t3) * 1e3}
    if opts.get("want_optimized_hlo"):
        po = HLO.HloPrintOptions()
        po.print_large_constants = True  # '{...}' could not be read back
        p = os.path.join(outdir, "optimized.hlo")
        with open(p, "w") as f:
            f.write("\n\n".join(m.to_string(po) for m in exe.hlo_modules()))
        rep["optimized_hlo"] = p
    if want_passes:
        rep["passes_changed"] = dumped_passes(dump_dir)
    if want_dumps:
        rep["pass_dumps"] = pass_dumps(dump_dir, outdir)
    if want_received and received is not None:
        p = os.path.join(outdir, "received.hlo")
        with open(p, "w") as f:
            f.write(received)
        rep["received_hlo"] = p
    if dump_dir:
        shutil.rmtree(dump_dir, ignore_errors=True)
    return rep


def list_passes(req):
    """Compiles the module with a dump after every pass: the passes that ran."""
    with open(req["module"]) as f:
        text = f.read()
    mlir, _ = to_mlir(text)
    dump_dir = tempfile.mkdtemp(prefix="xla_passes_", dir=req["outdir"])
    try:
        compile_mlir(mlir, compile_options(req.get("options") or {}, dump_dir, ".+"))
        return {"status": "ok", "passes": dumped_passes(dump_dir)}
    finally:
        shutil.rmtree(dump_dir, ignore_errors=True)


def convert(req):
    """XLA's conversion of an MLIR module to HLO text: what XLA's passes
    start from when jax hands it that module."""
    with open(req["module"]) as f:
        text = f.read()
    if not is_mlir(text):
        raise Refusal("error", "convert takes StableHLO/MHLO text")
    comp = mlir_to_hlo(text)
    po = HLO.HloPrintOptions()
    po.print_large_constants = True
    mod = HLO.hlo_module_from_text(comp.as_hlo_text())
    p = os.path.join(req["outdir"], "converted.hlo")
    with open(p, "w") as f:
        f.write(mod.to_string(po))
    return {"status": "ok", "hlo": p}


def main():
    hello = {"status": "ok", "protocol": PROTOCOL, "name": "xla-cpu",
             "version": "jax %s jaxlib %s" % (jax.__version__, jaxlib.__version__),
             "capabilities": ["optimized_hlo", "disable_passes", "list_passes", "timings",
                              "received_hlo", "mlir", "pass_dumps"]}
    serve(_PROTO, {"hello": lambda req: dict(hello), "run": run, "list_passes": list_passes,
                   "convert": convert})


if __name__ == "__main__":
    main()
