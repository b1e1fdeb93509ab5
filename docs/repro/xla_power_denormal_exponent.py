#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): power(y + y, y) for a denormal y. XLA CPU
reads denormal operands as zero (DAZ), so y + y is 0 (IEEE: 3e-308, a
normal number); the power then reads the same y as a nonzero exponent, so
0^y = 0 (0^-y = inf). IEEE gives 1 (numpy, float64), and so would a target
that read y as 0 everywhere (0^0 = 1). float32 does the same.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 41.
  python3 xla_power_denormal_exponent.py
"""
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
y = np.array([1.5e-308, 1e-310, 1], np.float64)
f = jax.jit(lambda y: jnp.power(y + y, y))
g = jax.jit(lambda y: jnp.power(y + y, -y))
print("jax", jax.__version__)
print("y + y on XLA (DAZ):   ", np.asarray(jax.jit(lambda y: y + y)(y)).tolist())
print("(y + y) ** y   XLA:", np.asarray(f(y)).tolist(), " numpy:", np.power(y + y, y).tolist())
print("(y + y) ** -y  XLA:", np.asarray(g(y)).tolist(), " numpy:", np.power(y + y, -y).tolist())
y32 = np.array([7e-39, 1], np.float32)
print("f32 (y + y) ** y XLA:", np.asarray(f(y32)).tolist(), " numpy:", np.power(y32 + y32, y32).tolist())
print("BUG" if np.asarray(f(y))[0] != 1 else "ok")
