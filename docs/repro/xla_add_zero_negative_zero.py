#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): x + 0 is folded to x, so -0 + 0 is -0 where
IEEE 754 gives +0: the sign bit and 1 / (x + 0) show it.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 33.
  python3 xla_add_zero_negative_zero.py
"""
import numpy as np
import jax
import jax.numpy as jnp

x = np.array([-0.0, 1.0], np.float32)
print("jax", jax.__version__)
print("signbit(x + 0):", jax.jit(lambda x: jnp.signbit(x + np.float32(0)))(x), "numpy:", np.signbit(x + np.float32(0)))
with np.errstate(divide="ignore"):
    print("1 / (x + 0):  ", jax.jit(lambda x: 1 / (x + np.float32(0)))(x), "numpy:", 1 / (x + np.float32(0)))
