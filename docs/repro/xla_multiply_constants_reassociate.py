#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): (x * c) * c with a constant c is computed as
x * (c * c), one rounding fewer and another: most f32 results differ from
the two multiplies the program asks for (by one unit in the last place).
Fast math is off in jax; XLA's own semantics round every op.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 30.
  python3 xla_multiply_constants_reassociate.py
  XLA_FLAGS=--xla_disable_hlo_passes=algsimp python3 xla_multiply_constants_reassociate.py  # right
"""
import numpy as np
import jax

c = np.float32(2.134)
x = np.random.default_rng(0).uniform(-3, 3, 1000).astype(np.float32)
want = (x * c) * c                      # numpy rounds each multiply
got = np.asarray(jax.jit(lambda x: (x * c) * c)(x))
print("jax", jax.__version__)
print("elements off:", int((got != want).sum()), "of", x.size)
print("all equal to x * (c * c):", bool((got == x * (c * c)).all()))

# Adds of a same-shape constant likewise: ((x + c) + c) + c becomes x + (c + c + c).
c5 = np.array([[2.5, -2.79, -3.28, -0.909, -1.141]], np.float32)
x5 = np.full((1, 5), 6, np.float32)
print("adds:", np.asarray(jax.jit(lambda x: ((x + c5) + c5) + c5)(x5)).tolist(), "want", (((x5 + c5) + c5) + c5).tolist())
