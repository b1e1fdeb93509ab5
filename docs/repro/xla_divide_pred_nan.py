#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): convert(pred) / broadcast scalar gives 0
where the pred is false, even when the divisor is NaN or 0 (IEEE: NaN).
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 21.
  python3 xla_divide_pred_nan.py
"""
import numpy as np
import jax
import jax.numpy as jnp

f = jax.jit(lambda b, y: b.astype(jnp.float32) / y)
b = np.array([False, True])
for y in (np.float32(np.nan), np.float32(0.0)):
    got = np.asarray(f(b, y))
    with np.errstate(all="ignore"):
        want = b.astype(np.float32) / y  # numpy: [nan, nan] and [nan, inf]
    print("divide(%s, %r) = %s expected %s %s" % (b.tolist(), float(y), got, want,
          "" if np.array_equal(got, want, equal_nan=True) else "WRONG"))
