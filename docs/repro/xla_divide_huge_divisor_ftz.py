#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): x / y with a scalar (broadcast) divisor is
computed as x * (1 / y); for |y| > 2^(emax-1) the reciprocal is a denormal
that XLA's flush-to-zero makes 0, so every quotient comes out 0.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 24.
  python3 xla_divide_huge_divisor_ftz.py
  XLA_FLAGS=--xla_disable_hlo_passes=algsimp python3 xla_divide_huge_divisor_ftz.py   # right
"""
import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
f = jax.jit(lambda x, y: x / y)
for dt, y in ((np.float32, 3e38), (np.float64, -1.7976931348623157e308)):
    x = np.array([y, y / 2, 1.0], dt)
    got = np.asarray(f(x, dt(y)))
    want = x / dt(y)
    want[np.abs(want) < np.finfo(dt).tiny] = 0  # a denormal quotient may flush (FTZ)
    print("%s: %s / %r = %s expected %s %s" % (np.dtype(dt).name, x.tolist(), y, got.tolist(), want.tolist(),
          "" if np.array_equal(np.abs(got), np.abs(want)) else "WRONG"))
