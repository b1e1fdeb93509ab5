#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): add(scatter(p, i, u), c), the scatter with an
add combiner, is rewritten by the algebraic simplifier to
scatter(add(p, c), i, u): (p + c) + u instead of (p + u) + c, so the
rounding of p + c is kept where p + u cancels or is exact. A subtract of
a constant, scatter(p, i, u) - C, goes the same way (algsimp makes it
add(scatter, -C) first); one of a parameter, and C - scatter, do not.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 23.
  python3 xla_scatter_add_reassociate.py
  XLA_FLAGS=--xla_disable_hlo_passes=algsimp python3 xla_scatter_add_reassociate.py   # right
"""
import numpy as np
import jax
import jax.numpy as jnp

idx = jnp.array([0])
f = jax.jit(lambda p, u, c: p.at[idx].add(u) + c)
cases = [
    (np.float32([1e8, 2]), np.float32([-1e8]), np.float32(1)),  # cancellation
    (np.float32([0.75 * 2.0**-24, 2]), np.float32([0.75 * 2.0**-24]), np.float32(1)),  # 1 ulp
    (np.float16([1e4, 2]), np.float16([-1e4]), np.float16(1)),
]
for p, u, c in cases:
    got = np.asarray(f(p, u, c))
    s = p.copy()
    s[0] = p[0] + u[0]  # the scatter, in the array's dtype (exact here)
    want = s + c        # then the add, one rounding
    print("%s: p=%s u=%s c=%s -> %s expected %s %s" % (p.dtype, p.tolist(), u.tolist(), c, got.tolist(),
          want.tolist(), "" if np.array_equal(got, want) else "WRONG"))

# subtract: of a constant (wrong), of a parameter and constant - scatter (right)
p, u, c = np.float32([1e8, 2]), np.float32([-1e8]), np.float32(-1)
forms = [
    ("scatter - C", jax.jit(lambda p, u, c: p.at[idx].add(u) - np.float32(-1)), np.float32([1, 3])),
    ("scatter - c", jax.jit(lambda p, u, c: p.at[idx].add(u) - c), np.float32([1, 3])),
    ("C - scatter", jax.jit(lambda p, u, c: np.float32(-1) - p.at[idx].add(u)), np.float32([-1, -3])),
]
for name, g, want in forms:
    got = np.asarray(g(p, u, c))
    print("%s: p=%s u=%s (C = c = -1) -> %s expected %s %s" % (name, p.tolist(), u.tolist(), got.tolist(),
          want.tolist(), "" if np.array_equal(got, want) else "WRONG"))
