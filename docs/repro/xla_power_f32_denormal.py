#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): f32 power(d, 0.5) of any denormal d is
2.646978e-23 (2^-75): neither 0 (XLA CPU's DAZ, what sqrt(d) gives) nor
the power of d. Standalone: needs only jax[cpu] and numpy.
docs/FINDINGS.md, finding 19.
  python3 xla_power_f32_denormal.py
"""
import numpy as np
import jax
import jax.numpy as jnp

x = np.array([1e-45, 2.0**-140, 1e-40, 4.0], np.float32)
got = np.asarray(jax.jit(jnp.power)(x, np.float32(0.5)))
daz = np.asarray(jax.jit(jnp.sqrt)(x))
exact = np.power(x.astype(np.float64), 0.5).astype(np.float32)
for a, g, z, e in zip(x, got, daz, exact):
    print("power(%r, 0.5) = %r; DAZ %r, exact %r %s" % (float(a), float(g), float(z), float(e),
          "" if g in (z, e) else "WRONG"))
