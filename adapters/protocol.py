"""protocol.py - what the adapters trench ships share (docs/PROTOCOL.md):
the protocol's stream kept apart from whatever a compiler or library
prints, the exception that turns into a non-ok reply, and the request
loop. Imported by adapters/xla, adapters/iree and adapters/torch."""
import json
import os
import sys

PROTOCOL = 1


def claim_stdout():
    """The stream replies go to: a private copy of stdout. fd 1 then points
    at stderr, so nothing a library prints can corrupt the protocol. Call it
    before importing the compiler."""
    proto = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return proto


class Refusal(Exception):
    """A reply status other than ok: (status, message)."""

    def __init__(self, status, message):
        Exception.__init__(self, message)
        self.status = status


def serve(proto, handlers, describe=None):
    """Answers the requests on stdin, one JSON object a line, until shutdown
    or end of input. handlers maps an op to a function of the request that
    returns the reply; shutdown is answered here. A Refusal becomes its
    status; any other exception is an adapter bug, answered "error" with
    describe(e) (default: its type and message), and the loop goes on."""
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        op = req.get("op")
        try:
            if op == "shutdown":
                rep = {"status": "ok"}
            elif op in handlers:
                rep = handlers[op](req)
            else:
                rep = {"status": "unsupported", "message": "unknown op %r" % op}
        except Refusal as e:
            rep = {"status": e.status, "message": str(e)}
        except Exception as e:  # an adapter bug: say so, keep serving
            why = describe(e) if describe else "%s: %s" % (type(e).__name__, e)
            rep = {"status": "error", "message": "adapter: " + why}
        rep["id"] = req.get("id")
        proto.write(json.dumps(rep) + "\n")
        proto.flush()
        if op == "shutdown":
            break
