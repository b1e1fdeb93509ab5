#!/usr/bin/env python3
"""adapter.py - IREE's CPU compiler (iree-compile, llvm-cpu backend) and
runtime behind trench's process protocol (docs/PROTOCOL.md).

An HLO module reaches IREE this way: XLA's HLO parser and StableHLO
converter (adapters/iree/stablehlo.py, a child process run by the XLA
virtualenv's python, since IREE's packages carry no HLO importer) ->
StableHLO text -> iree-compile for the local llvm-cpu device, host CPU ->
a .vmfb module -> iree.runtime's local-task driver, fed the .npy inputs.
With "want_received_hlo" the adapter returns XLA's conversion of that
StableHLO back to HLO, so trench can compare it with what it sent and say
when the trip changed the module (as for xla-cpu).

What IREE refuses to lower (an op or element type its input conversion or
codegen lacks) is answered "unsupported" with iree-compile's own words; a
crash or any other failure of iree-compile on a valid module is a
"compile_error", which is a finding.

Run with the IREE virtualenv (scripts/venv-iree.sh):
  trench ... --target iree-cpu
  trench ... --target 'cmd:.venv/iree/bin/python adapters/iree/adapter.py'
Options: --jax-python PATH  the XLA virtualenv's python (default: .venv/bin/python
                            beside this repository's adapters/)
         --no-compile-server  an iree-compile process per module instead of the
                            kept compiler (compile_server.py): the baseline of
                            bench/iree_throughput.sh
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from protocol import PROTOCOL, Refusal, claim_stdout, serve  # noqa: E402

# Replies go to a private copy of stdout (before the compiler is imported).
_PROTO = claim_stdout()

import json  # noqa: E402
import re  # noqa: E402
import shutil  # noqa: E402
import subprocess  # noqa: E402
import tempfile  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402
import iree.runtime as rt  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BIN = os.path.dirname(sys.executable)
COMPILE = os.path.join(BIN, "iree-compile")
H = rt.HalElementType

# HLO element type -> (numpy dtype of the .npy bytes, IREE element type).
# Types numpy lacks travel as their bits (docs/NPY.md); s4/u4 are one byte
# per element in the file and packed two to a byte in IREE's buffers.
DTYPES = {
    "pred": (np.bool_, H.BOOL_8),
    "s8": (np.int8, H.INT_8), "s16": (np.int16, H.INT_16),
    "s32": (np.int32, H.INT_32), "s64": (np.int64, H.INT_64),
    "u8": (np.uint8, H.INT_8), "u16": (np.uint16, H.INT_16),
    "u32": (np.uint32, H.INT_32), "u64": (np.uint64, H.INT_64),
    "f16": (np.float16, H.FLOAT_16), "f32": (np.float32, H.FLOAT_32),
    "f64": (np.float64, H.FLOAT_64), "bf16": (np.uint16, H.BFLOAT_16),
    "c64": (np.complex64, H.COMPLEX_64), "c128": (np.complex128, H.COMPLEX_128),
    "f8e4m3fn": (np.uint8, H.FLOAT_8_E4M3_FN), "f8e5m2": (np.uint8, H.FLOAT_8_E5M2),
    "f8e4m3fnuz": (np.uint8, H.FLOAT_8_E4M3_FNUZ),
    "f8e5m2fnuz": (np.uint8, H.FLOAT_8_E5M2_FNUZ),
    "f8e8m0fnu": (np.uint8, H.FLOAT_8_E8M0_FNU),
    "s4": (np.uint8, H.INT_4), "u4": (np.uint8, H.INT_4),
}
VOID = {"bf16", "f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e8m0fnu", "s4", "u4"}
NIBBLE = {"s4", "u4"}

# What iree-compile says when it has no lowering for something: the module
# is outside what IREE handles, not a miscompilation. ("Dialect `mhlo' not
# found": XLA's converter keeps the ops StableHLO lacks, erf, topk, ..., as
# mhlo ops, which IREE's StableHLO input does not read. "undefined symbol:
# sin": an op IREE neither approximates nor can call, f64 sin, cos, tanh
# on llvm-cpu, whose executables link no libm. "does not have integral
# number of total bytes": an s4/u4 tensor of odd size, which IREE's packed
# storage cannot hold.)
UNSUPPORTED = re.compile(r"failed to legalize|not supported|unsupported|unhandled|"
                         r"not implemented|unimplemented|no lowering|cannot lower|"
                         r"failed to convert|illegal op|is not a valid|expected .*type|"
                         r"Dialect `mhlo' not found|undefined symbol: |"
                         r"does not have integral number of total bytes",
                         re.I)


def clip(s, n=4000):
    s = s.strip()
    return s if len(s) < n else s[:n] + "..."


class Converter:
    """The stablehlo.py child, started on first use and kept."""

    def __init__(self, python):
        self.python = python
        self.proc = None

    def ask(self, req):
        if self.proc is None or self.proc.poll() is not None:
            if not os.access(self.python, os.X_OK):
                raise Refusal("error", "no XLA virtualenv at %s (scripts/venv.sh)" % self.python)
            self.proc = subprocess.Popen(
                [self.python, os.path.join(HERE, "stablehlo.py")],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        self.proc.stdin.write(json.dumps(req) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            # XLA's own converter crashed (jaxlib 0.10.2 on a tuple all-to-all,
            # docs/FINDINGS.md 6): IREE never saw the module.
            self.proc = None
            raise Refusal("unsupported", "XLA's HLO -> StableHLO converter "
                          "(stablehlo.py under the XLA virtualenv) died on this module")
        return json.loads(line)

    def close(self):
        if self.proc and self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()


def compile_flags():
    """The llvm-cpu flags of this iree-compile: releases before the target
    device flags (2024) name backends with --iree-hal-target-backends."""
    out = subprocess.run([COMPILE, "--help-list-hidden"], capture_output=True, text=True).stdout
    if "--iree-hal-local-target-device-backends" in out:
        dev = ["--iree-hal-target-device=local",
               "--iree-hal-local-target-device-backends=llvm-cpu"]
    else:
        dev = ["--iree-hal-target-backends=llvm-cpu"]
    # IREE demotes f64 to f32 by default (an input option for targets
    # without f64); trench checks the module as written, so f64 stays f64.
    return dev + ["--iree-llvmcpu-target-cpu=host", "--iree-input-type=stablehlo",
                  "--iree-input-demote-f64-to-f32=false"]


def compiler_version():
    out = subprocess.run([COMPILE, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"IREE compiler version (\S+)", out)
    return m.group(1) if m else "?"


class CompileServer:
    """adapters/iree/compile_server.py: the compiler library loaded once
    and kept, instead of an iree-compile process per module (that process's
    start is a third to a half of a small module's compile). None of its
    answers differ from iree-compile's: the same flags on the same file
    give the same bytes, and a crash is handed back to iree-compile for its
    report. Where the library cannot be loaded (a release without the
    C API's Python binding), iree-compile runs as before."""

    def __init__(self):
        self.proc = None
        self.broken = False
        self.served = 0

    def start(self):
        self.proc = subprocess.Popen([sys.executable, os.path.join(HERE, "compile_server.py")],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline()
        if not line or not json.loads(line).get("ok"):
            self.close()
            self.broken = True
        self.served = 0

    def compile(self, mlir_path, vmfb, flags):
        """(True, "") when the .vmfb is written, (False, diagnostics) when
        the compiler refused, None when there is no server or it died."""
        if self.broken:
            return None
        if self.proc is None or self.proc.poll() is not None or self.served >= 500:
            # a fresh process now and then: the library's caches stay bounded
            self.close()
            self.start()
            if self.broken:
                return None
        self.served += 1
        try:
            self.proc.stdin.write(json.dumps({"mlir": mlir_path, "vmfb": vmfb, "flags": flags}) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except OSError:
            line = ""
        if not line:
            self.close()
            return None
        rep = json.loads(line)
        return bool(rep.get("ok")), rep.get("stderr", "")

    def close(self):
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            try:
                self.proc.wait(5)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
            self.proc = None


def iree_compile(mlir_path, flags, workdir, server=None):
    vmfb = os.path.join(workdir, "module.vmfb")
    got = server.compile(mlir_path, vmfb, flags) if server else None
    if got is not None and got[0]:
        with open(vmfb, "rb") as f:
            return f.read()
    if got is not None:
        why = errors_of(got[1])
        if UNSUPPORTED.search(why):
            raise Refusal("unsupported", "IREE: " + why)
        raise Refusal("compile_error", "iree-compile failed (exit 1): %s" % why)
    # No server, or it died on this module: iree-compile itself, whose
    # crash report names the frame.
    p = subprocess.run([COMPILE] + flags + [mlir_path, "-o", vmfb],
                       capture_output=True, text=True)
    if p.returncode < 0:
        raise Refusal("compile_error", "iree-compile died of signal %d: %s"
                      % (-p.returncode, errors_of(p.stderr)))
    if p.returncode != 0 and ("crash backtrace" in p.stderr or "Stack dump" in p.stderr):
        # LLVM's crash handler prints the stack and exits: a compiler crash.
        raise Refusal("compile_error", "iree-compile crashed (exit %d) in %s"
                      % (p.returncode, crash_frame(p.stderr)))
    if p.returncode != 0:
        why = errors_of(p.stderr)
        if UNSUPPORTED.search(why):
            raise Refusal("unsupported", "IREE: " + why)
        raise Refusal("compile_error", "iree-compile failed (exit %d): %s"
                      % (p.returncode, why))
    if server and not server.broken:
        # the library died where iree-compile did not: still a crash of
        # IREE's compiler on this module
        raise Refusal("compile_error", "IREE's compiler library (compile_server.py) died on "
                      "this module; iree-compile compiled it")
    with open(vmfb, "rb") as f:
        return f.read()


def crash_frame(stderr):
    """The first stack frame of a crash past the signal handlers."""
    for line in stderr.splitlines():
        m = re.match(r"\s*#\d+ 0x[0-9a-f]+ (.*)", line)
        if m and not re.search(r"Signals\.cpp|libc\.so|PrintStackTrace|SignalHandler", m.group(1)):
            return m.group(1)[:300]
    return "?"


def errors_of(stderr):
    """iree-compile's error lines, without file names and the target's
    long attribute dump: what a reader needs to see why."""
    out = []
    for line in stderr.splitlines():
        m = re.search(r"error: (.*)", line)
        if m:
            e = re.sub(r"#hal\.executable\.target<.*", "#hal.executable.target<...>", m.group(1))
            e = e if len(e) < 300 else e[:300] + "..."
            if e not in out:
                out.append(e)
    if not out:
        out = [l for l in stderr.splitlines() if l.strip()][-3:]
    return clip("; ".join(out))


def load(path, dtype, dims):
    name = dtype
    io, _ = DTYPES[name]
    a = np.load(path, allow_pickle=False)
    if a.dtype != np.dtype(io):
        if a.dtype.itemsize != np.dtype(io).itemsize or a.dtype.kind not in "Vu" and name in VOID:
            raise Refusal("error", "%s holds %s, the parameter wants %s" % (path, a.dtype, name))
        a = a.view(io)
    if tuple(a.shape) != tuple(dims):
        raise Refusal("error", "%s has shape %s, the parameter wants %s" % (path, a.shape, dims))
    return np.ascontiguousarray(a) if a.ndim else a.copy()


def pack4(a):
    """One byte per s4/u4 element -> IREE's packing, low nibble first."""
    b = (a.reshape(-1) & 0xF).astype(np.uint8)
    if b.size % 2:
        b = np.append(b, np.uint8(0))
    return (b[0::2] | (b[1::2] << 4)).astype(np.uint8)


def unpack4(raw, n, signed):
    b = np.frombuffer(raw, np.uint8)
    out = np.empty(b.size * 2, np.uint8)
    out[0::2] = b & 0xF
    out[1::2] = b >> 4
    out = out[:n]
    return out  # trench reads the low 4 bits (docs/NPY.md)


class Runner:
    """A compiled module loaded into a runtime context."""

    def __init__(self, device, vmfb):
        self.instance = rt.VmInstance()
        self.hal = rt.create_hal_module(self.instance, device)
        self.vm = rt.VmModule.copy_buffer(self.instance, vmfb)
        self.ctx = rt.VmContext(self.instance, modules=[self.hal, self.vm])
        self.fn = self.vm.lookup_function("main")
        if self.fn is None:
            raise Refusal("error", "the compiled module has no function 'main'")


class Adapter:
    def __init__(self, jax_python):
        self.conv = Converter(jax_python)
        self.server = CompileServer()
        self.flags = compile_flags()
        self.version = compiler_version()
        self.device = rt.get_driver("local-task").create_default_device()
        self.cache = {}  # module text -> (Runner, params, results, received HLO text)

    def prepare(self, req, want_received):
        with open(req["module"]) as f:
            text = f.read()
        hit = self.cache.get(text)
        if isinstance(hit, Refusal):
            raise hit  # trench check sends each seed: compile once
        if hit and (hit[3] is not None or not want_received):
            return hit, 0.0
        t0 = time.perf_counter()
        work = tempfile.mkdtemp(prefix="iree_", dir=req["outdir"])
        try:
            rep = self.conv.ask({"module": req["module"], "outdir": work,
                                 "want_hlo": want_received})
            if rep.get("status") != "ok":
                raise Refusal(rep.get("status", "error"), rep.get("message", "?"))
            with open(rep["mlir"]) as f:
                if "stablehlo.rng_bit_generator" in f.read():
                    # StableHLO leaves the bits to the implementation ("not
                    # guaranteed to be deterministic between implementations");
                    # trench's reference draws XLA's.
                    raise Refusal("unsupported", "rng-bit-generator: its bits are "
                                  "implementation-defined in StableHLO, and IREE's need "
                                  "not be XLA's")
            for d, _ in rep["params"] + rep["results"]:
                if d not in DTYPES:
                    raise Refusal("unsupported", "element type %s: IREE's runtime has "
                                  "no buffer element type for it" % d)
            try:
                vmfb = iree_compile(rep["mlir"], self.flags, work, self.server)
            except Refusal as e:
                self.remember(text, e)
                raise
            received = None
            if rep.get("hlo"):
                with open(rep["hlo"]) as f:
                    received = f.read()
            runner = Runner(self.device, vmfb)
        finally:
            shutil.rmtree(work, ignore_errors=True)
        entry = (runner, rep["params"], rep["results"], received)
        self.remember(text, entry)
        return entry, time.perf_counter() - t0

    def remember(self, text, entry):
        if len(self.cache) >= 4:
            self.cache.pop(next(iter(self.cache)))
        self.cache[text] = entry

    def buffer(self, a, dtype):
        _, et = DTYPES[dtype]
        data = pack4(a) if dtype in NIBBLE else a
        raw = np.frombuffer(data.tobytes() or b"\0", np.uint8)
        buf = self.device.allocator.allocate_buffer_copy(
            memory_type=rt.MemoryType.DEVICE_LOCAL,
            allowed_usage=rt.BufferUsage.DEFAULT, device=self.device, buffer=raw)
        return rt.HalBufferView(buf, list(a.shape), et)

    def read(self, bv, dtype, dims):
        io, _ = DTYPES[dtype]
        n = int(np.prod(dims)) if dims else 1
        nbytes = (n + 1) // 2 if dtype in NIBBLE else n * np.dtype(io).itemsize
        raw = b""
        if nbytes:
            raw = bv.map().asarray([bv.byte_length], np.dtype(np.uint8)).tobytes()[:nbytes]
        if dtype in NIBBLE:
            a = unpack4(raw, n, dtype == "s4")
        else:
            a = np.frombuffer(raw, io, count=n).copy()
        a = a.reshape(dims)
        if dtype in VOID:
            a = a.view(np.dtype("V%d" % a.dtype.itemsize))
        return a

    def run(self, req):
        opts = req.get("options") or {}
        want_received = bool(opts.get("want_received_hlo"))
        (runner, params, results, received), t_compile = self.prepare(req, want_received)
        if len(req["inputs"]) != len(params):
            raise Refusal("error", "%d inputs, the module has %d parameter leaves"
                          % (len(req["inputs"]), len(params)))
        arrays = [load(p, d, dims) for p, (d, dims) in zip(req["inputs"], params)]
        try:
            args = rt.VmVariantList(len(arrays))
            for a, (d, _) in zip(arrays, params):
                args.push_ref(self.buffer(a, d))
            rets = rt.VmVariantList(len(results))
            t3 = time.perf_counter()
            runner.ctx.invoke(runner.fn, args, rets)
            t4 = time.perf_counter()
        except Exception as e:
            msg = clip(str(e))
            if "UNIMPLEMENTED" in msg:  # the driver lacks it: collectives on local-task
                raise Refusal("unsupported", "IREE's runtime: " + msg)
            raise Refusal("error", "execution failed: " + msg)
        if len(rets) != len(results):
            raise Refusal("error", "IREE returned %d outputs, the module's root has %d leaves"
                          % (len(rets), len(results)))
        paths = []
        for i, (d, dims) in enumerate(results):
            bv = rets.get_as_object(i, rt.HalBufferView)
            if list(bv.shape) != list(dims):
                raise Refusal("error", "output %d has shape %s, the root wants %s"
                              % (i, list(bv.shape), dims))
            p = os.path.join(req["outdir"], "out%d.npy" % i)
            np.save(p, self.read(bv, d, dims))
            paths.append(p)
        rep = {"status": "ok", "outputs": paths,
               "compile_ms": t_compile * 1e3, "run_ms": (t4 - t3) * 1e3}
        if want_received and received is not None:
            p = os.path.join(req["outdir"], "received.hlo")
            with open(p, "w") as f:
                f.write(received)
            rep["received_hlo"] = p
        return rep


def main():
    jax_python = os.path.join(ROOT, ".venv", "bin", "python")
    args = sys.argv[1:]
    server = True
    while args:
        if len(args) >= 2 and args[0] == "--jax-python":
            jax_python, args = args[1], args[2:]
        elif args[0] == "--no-compile-server":
            server, args = False, args[1:]
        else:
            sys.stderr.write("usage: adapter.py [--jax-python PATH] [--no-compile-server]\n")
            sys.exit(2)
    ad = Adapter(jax_python)
    if not server:
        ad.server.broken = True  # never started: iree_compile runs iree-compile
    hello = {"status": "ok", "protocol": PROTOCOL, "name": "iree-cpu",
             "version": "iree-base-compiler %s (iree-compile %s) iree-base-runtime %s"
             % (pkg_version("iree-base-compiler"), ad.version, pkg_version("iree-base-runtime")),
             "capabilities": ["timings", "received_hlo"]}
    serve(_PROTO, {"hello": lambda req: dict(hello), "run": ad.run})
    ad.conv.close()
    ad.server.close()
    # The runtime's objects crash Python's teardown now and then (a freed
    # device before a mapped buffer): everything is written, leave at once.
    sys.stderr.flush()
    os._exit(0)


def pkg_version(name):
    try:
        from importlib.metadata import version
        return version(name)
    except Exception:
        return "?"


if __name__ == "__main__":
    main()
