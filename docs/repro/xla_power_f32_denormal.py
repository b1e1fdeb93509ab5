#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): f32 power(d, 0.5) of any denormal d is
2.646978e-23 (2^-75): neither 0 (XLA CPU's DAZ, what sqrt(d) gives) nor
the power of d; the log of a denormal constant is log(2^-150) likewise.
Standalone: needs only jax[cpu] and numpy.
docs/FINDINGS.md, finding 22.
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

# The log of a constant holding denormals (padded, so that it is computed
# as a constant operand): log(2^-150) = -103.97208 for each, where the log
# of the same values from a parameter gives -inf (DAZ).
c = np.array([1e-45, 1e-40, 3e-40, 4.0], np.float32)
got = np.asarray(jax.jit(lambda: jnp.log(jnp.pad(jnp.asarray(c), 1, constant_values=-2.84)))())[1:-1]
par = np.asarray(jax.jit(lambda v: jnp.log(jnp.pad(v, 1, constant_values=-2.84)))(c))[1:-1]
exact = np.log(c.astype(np.float64)).astype(np.float32)
for a, g, z, e in zip(c, got, par, exact):
    print("log(const %r) = %r; DAZ %r, exact %r %s" % (float(a), float(g), float(z), float(e),
          "" if g in (z, e) else "WRONG"))
