#!/usr/bin/env python3
"""compile_server.py - IREE's compiler kept loaded between modules: a
child of adapters/iree/adapter.py, run by the IREE virtualenv's python.

iree-compile is a thin main over the compiler library's C API; starting
it loads the 400 MB library and initialises LLVM and MLIR each time,
about 0.25 CPU-seconds of the 0.4-1.3 a small module costs (measured in
docs/IREE.md). This process loads the library once (iree.compiler.api,
the C API through ctypes) and compiles each module in a fresh session
with the adapter's flags: Source.open_file and the VM bytecode output give
the same .vmfb bytes as iree-compile on the same file and flags. It is a
child, not the adapter itself, so that a compiler crash kills only it:
the adapter then reruns iree-compile on the module for the crash's report
(adapter.py, iree_compile).

One JSON request per line on stdin, one reply per line on stdout:
  {"mlir": PATH, "vmfb": PATH, "flags": [FLAG, ...]}
  {"ok": true}                       the .vmfb is written
  {"ok": false, "stderr": TEXT}      the compiler's diagnostics, printed
                                     as iree-compile prints them
The first line, before any request, is {"ok": true, "ready": true}, or
{"ok": false, "stderr": WHY} when the library cannot be loaded.
"""
import json
import os
import sys
import tempfile

# Replies go to a private copy of stdout; anything the library prints to
# stdout goes to stderr instead.
_OUT = os.fdopen(os.dup(1), "w")
os.dup2(2, 1)


def reply(obj):
    _OUT.write(json.dumps(obj) + "\n")
    _OUT.flush()


def compile_one(api, req):
    """Diagnostics go to fd 2, which points at a temporary file meanwhile."""
    log = tempfile.TemporaryFile()
    saved = os.dup(2)
    os.dup2(log.fileno(), 2)
    ok = False
    try:
        s = api.Session()
        try:
            s.set_flags(*req["flags"])
            inv = s.invocation()
            inv.enable_console_diagnostics()
            src = api.Source.open_file(s, req["mlir"])
            ok = inv.parse_source(src) and inv.execute()
            if ok:
                out = api.Output.open_membuffer()
                inv.output_vm_bytecode(out)
                with open(req["vmfb"], "wb") as f:
                    f.write(bytes(out.map_memory()))
                out.close()
            inv.close()
            src.close()
        finally:
            s.close()
    except Exception as e:  # a bad flag, an unwritable output
        sys.stderr.write("error: %s\n" % e)
        ok = False
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(saved)
    log.seek(0)
    text = log.read().decode("utf-8", "replace")
    log.close()
    return {"ok": True} if ok else {"ok": False, "stderr": text}


def main():
    try:
        from iree.compiler.api import ctypes_dl as api
        api.Session().close()  # loads and initialises the library now
    except Exception as e:
        reply({"ok": False, "stderr": "%s: %s" % (type(e).__name__, e)})
        return
    reply({"ok": True, "ready": True})
    for line in sys.stdin:
        if line.strip():
            reply(compile_one(api, json.loads(line)))
    sys.stdout.flush()
    os._exit(0)  # skip the library's global shutdown: nothing is left to do


if __name__ == "__main__":
    main()
