#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): f64 atan2 with a positive denormal y and
x < 0 is -pi, and with x a negative denormal too it is pi/2; +pi is right
(with XLA CPU's DAZ and without). Standalone: needs only jax[cpu], numpy.
docs/FINDINGS.md, finding 10.
  python3 xla_atan2_f64_denormal.py
"""
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
y = np.array([5e-324, 1e-310, 0.0, 5e-324])
x = np.array([-1.0, -1.0, -1.0, -2.225073858507201e-308])
got = np.asarray(jax.jit(jnp.arctan2)(y, x))
for a, b, g in zip(y, x, got):
    print("atan2(%r, %r) = %r expected %r %s" % (float(a), float(b), float(g), np.pi,
          "" if abs(g - np.pi) < 1e-15 else "WRONG"))
