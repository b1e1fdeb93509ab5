#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a while loop with a constant start, step
and bound whose step is larger than the distance to the bound, `i = 0;
while (i < 1) i += 7`, runs zero times: the results are the initial
values. The body must run once (0 < 1 holds). The while-loop simplifier
(simplify-while-loops) removes the loop; with the step or bound a runtime
value the loop is right.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 26.
  python3 xla_while_large_step.py
  XLA_FLAGS=--xla_disable_hlo_passes=simplify-while-loops python3 xla_while_large_step.py   # right
"""
import numpy as np
import jax
from jax import lax

def loop(step, bound):
    return lax.while_loop(lambda c: c[0] < bound, lambda c: (c[0] + step, c[1] + 1), (np.int32(0), np.int32(0)))

for step, bound in ((2147483647, 1), (2147483647, 5), (1 << 30, 1), (7, 1)):
    f = jax.jit(lambda s, b: loop(s, b))
    got = [int(v) for v in f(np.int32(step), np.int32(bound))]
    i, n = 0, 0
    while i < bound:
        i, n = i + step, n + 1
    print("step %d bound %d: i=%d trips=%d, expected i=%d trips=%d %s" % (step, bound, got[0], got[1], i, n,
          "" if got == [i, n] else "WRONG"))
    g = jax.jit(lambda: loop(step, bound))  # step and bound constants
    got = [int(v) for v in g()]
    print("  constants: i=%d trips=%d %s" % (got[0], got[1], "" if got == [i, n] else "WRONG"))
