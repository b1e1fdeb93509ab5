#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): (a / b) / c is compiled as a / (b * c).
The product b * c can underflow to 0 or overflow to inf where neither
quotient does, so the result is inf (or 0) where IEEE division in the
written order gives a finite number. Standalone: needs only jax[cpu] and
numpy. docs/FINDINGS.md, finding 46.
  python3 xla_divide_divide_reassociate.py
"""
import numpy as np
import jax

tiny = np.finfo(np.float32).tiny  # 2^-126, the smallest normal f32
a = np.array([tiny, 1e-20, 1e20, 3.0], np.float32)
b = np.array([tiny, 1e-20, 1e20, 3.0], np.float32)
c = np.array([tiny, 1e-30, 1e30, 7.0], np.float32)
print("jax", jax.__version__)
got = np.asarray(jax.jit(lambda x, y, z: (x / y) / z)(a, b, c))
want = (a / b) / c
print("numpy (a / b) / c:", want)
print("jax.jit          :", got, "<- inf, inf, 0 where b * c under/overflows")
print("a / (b * c)      :", a / (b * c))
