#!/usr/bin/env python3
"""XLA CPU (jaxlib 0.10.2): the algebraic simplifier rewrites sqrt(x*x) to
abs(x) with fast math off (jax's default), so where x*x overflows to inf
the result is |x| instead of inf. XLA's own tests say the rewrite is gated
behind fast math (algebraic_simplifier_test.cc SquaredSqrtIsAbsUnderFastMath,
SquaredSqrtNotFoldedByDefault). Needs only jax/jaxlib (pip).
docs/FINDINGS.md, finding 20.
  python3 xla_cpu_sqrt_of_square.py
"""
import numpy as np
import jax
import jax.numpy as jnp

x = np.array([3e38, 1, -2e20, 1e19], np.float32)
got = np.asarray(jax.jit(lambda v: jnp.sqrt(v * v))(x))
with np.errstate(over="ignore"):
    want = np.sqrt(x * x)
print("got     ", got.tolist())
print("expected", want.tolist(), "" if np.array_equal(got, want) else "WRONG")
