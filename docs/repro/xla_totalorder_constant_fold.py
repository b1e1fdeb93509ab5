#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a total-order compare of two constants is
folded in IEEE order. jax's total-order primitives (lt_to, le_to, eq_to:
StableHLO compare with TOTALORDER) say -0 < +0 on run-time values, but the
same compare of constants, folded before XLA's passes, says -0 == +0.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 44.
  python3 xla_totalorder_constant_fold.py
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax._src.lax import lax as lax_internal

lt_to = lax_internal.lt_to_p.bind
a = np.array([-0.0, 0.0, -1.0], np.float32)
b = np.array([0.0, -0.0, 1.0], np.float32)
print("jax", jax.__version__)
run = jax.jit(lambda x, y: lt_to(x, y))(a, b)
folded = jax.jit(lambda: lt_to(jnp.asarray(a), jnp.asarray(b)))()
print("total order -0 < 0, 0 < -0, -1 < 1 (expected [True False True])")
print("  run-time values:", np.asarray(run))
print("  constants      :", np.asarray(folded), "<- the bug: -0 < 0 folded to False")
