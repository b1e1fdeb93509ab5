#!/usr/bin/env python3
"""bad_adapter.py - the example echo adapter with one planted misbehaviour,
so trench's tests can check that each becomes the right verdict and that
trench survives it. Standard library only.

Usage: bad_adapter.py MODE [ARG...]
  crash OPCODE        os._exit(3) on a run whose module uses OPCODE
  segv OPCODE         die of SIGSEGV (os.kill) on such a run
  hang                never answer a run
  refuse OPCODE       answer compile_error on a run whose module uses OPCODE
  hang-hello          never answer hello
  garbage             answer a run with a line that is not JSON
  wrong-id            answer a run with another request's id
  bad-outputs         name one output too many
  corrupt IDX DELTA   add DELTA to element IDX of output 0 (a silent
                      wrong result, for the oracle's tests)
  nan-to VALUE        every NaN of output 0 becomes VALUE (NaN turned
                      into a number with no min or max on its path)
  fast-max            maximum returns the other operand when one is NaN
                      (XLA's fast min/max, a by-design deviation)
  spew BYTES          write BYTES of stderr on every run, then answer
  quit                exit(0) without answering a run
  dev-zero            name /dev/zero as output 0
  fifo                name a FIFO (made in the request's out folder) as
                      output 0
  outside             name a regular file outside the request's folder
  rm-folder           on the first run, delete trench's private folder and
                      answer "error"; answer later runs normally
  setsid-crash SECS [MARKER]
                      start a helper in its own session (it keeps stdout
                      open for SECS seconds; MARKER, when given, in its
                      environment as TRENCH_FAULT_MARKER), then exit(3)
                      without answering
  slow-hello SECS     sleep SECS before answering hello
  crash-then-dead MARKER
                      crash on the first run (creating file MARKER); every
                      later start finds MARKER and never answers hello
  pidfile FILE MODE ARG...
                      write the adapter's pid to FILE, then act as MODE
  daemon MARKER MODE ARG...
                      first start a daemon (fork, setsid, fork again: it
                      is re-parented when its first parent exits) that
                      sleeps an hour with MARKER in its environment as
                      TRENCH_FAULT_MARKER and holds the adapter's stdout
                      and stderr, then act as MODE
"""
import json
import os
import signal
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "adapters", "example"))
import echo_adapter as echo  # noqa: E402

mode = sys.argv[1] if len(sys.argv) > 1 else ""
args = sys.argv[2:]
first_run = [True]


def marked_env(marker):
    env = dict(os.environ)
    if marker:
        env["TRENCH_FAULT_MARKER"] = marker
    return env


def start_daemon(marker):
    """A double-forked daemon in its own session: no process group and no
    parent of trench's choosing holds it."""
    pid = os.fork()
    if pid == 0:
        os.setsid()
        if os.fork() == 0:
            os.execve("/bin/sleep", ["sleep", "3600"], marked_env(marker))
        os._exit(0)
    os.waitpid(pid, 0)


if mode == "daemon":
    start_daemon(args[0])
    mode, args = args[1], args[2:]
if mode == "pidfile":
    with open(args[0], "w") as f:
        f.write("%d\n" % os.getpid())
    mode, args = args[1], args[2:]


def uses(req, opcode):
    with open(req["module"]) as f:
        return (" %s(" % opcode) in f.read()


def run(req):
    sys.stderr.write("bad_adapter: run request %s\n" % req.get("id"))
    sys.stderr.flush()
    if mode == "crash" and uses(req, args[0]):
        sys.stderr.write("bad_adapter: crashing on %s\n" % args[0])
        sys.stderr.flush()
        os._exit(3)
    if mode == "segv" and uses(req, args[0]):
        os.kill(os.getpid(), signal.SIGSEGV)
    if mode == "hang":
        time.sleep(3600)
    if mode == "refuse" and uses(req, args[0]):
        return {"status": "compile_error", "message": "refused: %s" % args[0]}
    if mode == "garbage":
        sys.stdout.write("this is not JSON {\n")
        sys.stdout.flush()
        time.sleep(3600)  # the verdict must not wait for this
    if mode == "quit":
        sys.exit(0)
    if mode == "rm-folder" and first_run[0]:
        first_run[0] = False
        import shutil
        # module is PRIVATE/rN/module.hlo
        shutil.rmtree(os.path.dirname(os.path.dirname(req["module"])))
        return {"status": "error", "message": "deleted the private folder"}
    if mode == "setsid-crash":
        import subprocess
        subprocess.Popen(["sleep", args[0]], start_new_session=True,
                         env=marked_env(args[1] if len(args) > 1 else ""))
        os._exit(3)
    if mode == "crash-then-dead":
        open(args[0], "w").close()
        os._exit(3)
    if mode == "spew":
        sys.stderr.write("x" * int(args[0]) + "\nbad_adapter: end of spew\n")
        sys.stderr.flush()
    rep = echo.run(req)
    if mode == "wrong-id":
        rep["id"] = -7
        sys.stdout.write(json.dumps(rep) + "\n")
        sys.stdout.flush()
        time.sleep(3600)
    if mode in ("dev-zero", "fifo", "outside") and rep.get("status") == "ok":
        path = "/dev/zero"
        if mode == "fifo":
            path = os.path.join(req["outdir"], "fifo.npy")
            os.mkfifo(path)
        if mode == "outside":
            path = os.path.abspath(__file__)
        rep["outputs"][0] = path
    if mode == "bad-outputs" and rep.get("status") == "ok":
        rep["outputs"].append(rep["outputs"][0])
    if mode == "corrupt" and rep.get("status") == "ok":
        path = rep["outputs"][0]
        descr, shape, vals = echo.npy_load(path)
        vals[int(args[0])] += type(vals[0])(float(args[1]))
        echo.npy_save(path, descr, shape, vals)
    if mode == "nan-to" and rep.get("status") == "ok":
        path = rep["outputs"][0]
        descr, shape, vals = echo.npy_load(path)
        vals = [float(args[0]) if v != v else v for v in vals]
        echo.npy_save(path, descr, shape, vals)
    return rep


def nan_dropping_max(a, b):
    if a != a:
        return b
    if b != b:
        return a
    return max(a, b)


def nan_propagating_max(a, b):
    return a if a != a else b if b != b else max(a, b)


# The plain echo adapter has no maximum; these modes add one.
echo.OPS["maximum"] = nan_dropping_max if mode == "fast-max" else nan_propagating_max

if mode == "hang-hello":
    time.sleep(3600)
if mode == "slow-hello":
    time.sleep(float(args[0]))
if mode == "crash-then-dead" and os.path.exists(args[0]):
    time.sleep(3600)
echo.serve(run_fn=run, name="bad-" + mode)
