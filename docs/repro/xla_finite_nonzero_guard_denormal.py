#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): XLA CPU reads f32 denormals as zero (DAZ),
except in one fused guard. isfinite(x) & (x != 0) is compiled to a test of
x's bits, which sees a denormal as nonzero, so the branch it guards runs on
the value every other op reads as 0: a safe reciprocal returns inf, and a
converted value 0. On their own, x != 0 says False and the select agrees.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 35.
  python3 xla_finite_nonzero_guard_denormal.py
"""
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
x = np.array([6.02302182e-39, 1e-45, 1.5], np.float32)
guard = jax.jit(lambda x: jnp.isfinite(x) & (x != 0))
alone = jax.jit(lambda x: x != 0)
recip = jax.jit(lambda x: jnp.where(jnp.isfinite(x) & (x != 0), 1 / x, np.float32(0)))
widen = jax.jit(lambda x: jnp.where(jnp.isfinite(x) & (x != 0), x.astype(jnp.float64), 3.0))
print("jax", jax.__version__)
print("isfinite(x) & (x != 0):", np.asarray(guard(x)).tolist(), " x != 0 alone:", np.asarray(alone(x)).tolist())
print("where(guard, 1/x, 0):  ", np.asarray(recip(x)).tolist())
with np.errstate(over="ignore"):
    ieee = (1 / x.astype(np.float64)).astype(np.float32)
print("  expected (IEEE):     ", ieee.tolist(), "; a consistent DAZ target: [0, 0, 0.666...]")
print("where(guard, f64(x), 3):", np.asarray(widen(x)).tolist())
print("  expected (IEEE):      ", x.astype(np.float64).tolist(), "; a consistent DAZ target: [3, 3, 1.5]")
