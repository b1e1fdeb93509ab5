#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a dynamic-slice of a dynamic-slice is
merged by the algebraic simplifier into one dynamic-slice whose start is
the sum of the two starts, which ignores the clamping of each start to
its own operand: a start past its operand's end (clamped back) reads the
wrong window. (Starts here are non-negative: jax itself wraps negative
ones before XLA sees them.)
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 25.
  python3 xla_dynamic_slice_of_dynamic_slice.py
  XLA_FLAGS=--xla_disable_hlo_passes=algsimp python3 xla_dynamic_slice_of_dynamic_slice.py   # right
"""
import numpy as np
import jax
from jax import lax

x = np.arange(31, dtype=np.int32)
f = jax.jit(lambda x, i, j: lax.dynamic_slice(lax.dynamic_slice(x, (i,), (25,)), (j,), (22,)))
for i, j in ((14, 0), (14, 2), (2, 5), (2, 1)):
    got = np.asarray(f(x, np.int32(i), np.int32(j)))
    ci = min(max(i, 0), 31 - 25)      # each start clamped to its own operand
    cj = min(max(j, 0), 25 - 22)
    want = x[ci:ci + 25][cj:cj + 22]
    print("i=%d j=%d: starts at %d, expected %d %s" % (i, j, got[0], want[0],
          "" if np.array_equal(got, want) else "WRONG"))
