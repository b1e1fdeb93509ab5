#!/usr/bin/env python3
"""swap_binary.py - an example external mutator for `trench fuzz
--mutator-cmd` (docs/FUZZ.md). Reads one HLO module on stdin, replaces the
opcode of one elementwise binary instruction (add, subtract, multiply,
maximum, minimum) by another of them, chosen from $TRENCH_SEED, and prints
the module. These ops take the same operand and result shapes, so the
result verifies; trench checks that anyway and drops what does not."""
import os
import random
import re
import sys

OPS = ["add", "subtract", "multiply", "maximum", "minimum"]
PAT = re.compile(r"(=\s*[a-z0-9]+\[[^\]]*\](?:\{[^}]*\})?\s+)(" + "|".join(OPS) + r")\(")


def main():
    text = sys.stdin.read()
    rng = random.Random(int(os.environ.get("TRENCH_SEED", "0")))
    lines = text.split("\n")
    # pred operands are left alone: these ops do not take pred.
    spots = [i for i, l in enumerate(lines) if PAT.search(l) and "pred[" not in l]
    if spots:
        i = rng.choice(spots)
        m = PAT.search(lines[i])
        new = rng.choice([o for o in OPS if o != m.group(2)])
        lines[i] = lines[i][: m.start(2)] + new + lines[i][m.end(2):]
    sys.stdout.write("\n".join(lines))


if __name__ == "__main__":
    main()
