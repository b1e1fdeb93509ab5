#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): the constant folder's select-and-scatter with
an empty source (no window fits) leaves its result uninitialized: the
gradient of a max-pool whose window is larger than its constant input
must be all zeros (the scatter's init), and comes back with arbitrary
values that change from run to run. With the input a runtime argument,
or XLA_FLAGS=--xla_disable_hlo_passes=constant_folding, it is all zeros.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 31.
  python3 xla_select_and_scatter_empty_fold.py
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

x = np.linspace(-2.5, 2.5, 127, dtype=np.float32).reshape(1, 127)
pool_sum = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (2, 3), (2, 2), ((0, 0), (1, 0))).sum()
print("jax", jax.__version__)
bad = 0
for i in range(5):
    g = np.asarray(jax.jit(lambda: jax.grad(pool_sum)(x))())  # x a constant: folded
    bad += np.count_nonzero(g)
print("nonzero gradient elements over 5 compiles, constant input:", bad, "(expected 0)")
print("runtime input:", np.count_nonzero(np.asarray(jax.jit(jax.grad(pool_sum))(x))))
