#!/usr/bin/env python3
"""xla_hlo_accepts.py - does XLA's own HLO text parser accept each file?

Usage: xla_hlo_accepts.py FILE...   (run with the project's .venv python)

Prints one line per file: "ok<TAB>FILE" or "reject<TAB>FILE<TAB>message"
(the first line of XLA's error). The parser is jaxlib's binding of
xla::ParseAndReturnUnverifiedModule (hlo_module_from_text): XLA's parser
without its verifier, so this says what XLA's text format takes.
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")


def parser():
    try:
        import jaxlib._hlo as h  # jaxlib 0.10.2 and later
        return h.hlo_module_from_text
    except (ImportError, AttributeError):
        from jax._src.lib import xla_client as xc
        return xc._xla.hlo_module_from_text


def main(argv):
    parse = parser()
    for path in argv:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
        try:
            parse(text)
            print(f"ok\t{path}")
        except Exception as e:  # XLA raises its own error types
            msg = " ".join(str(e).split())[:300]
            print(f"reject\t{path}\t{msg}")
        sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
