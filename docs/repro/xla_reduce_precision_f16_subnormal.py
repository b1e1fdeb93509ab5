#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): reduce-precision of an f16 subnormal rounds
its raw mantissa field, not its value. -2.11e-5 has 9 significant bits
(354 * 2^-24) and fits 8 exponent and 7 mantissa bits exactly; XLA gives
-2.098e-5. The values rounded to that format (bf16's) are printed beside.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 34.
  python3 xla_reduce_precision_f16_subnormal.py
"""
import numpy as np
import jax
import ml_dtypes
from jax import lax

x = np.array([-2.11e-05, 3.0e-06, 1e-4], np.float16)
got = np.asarray(jax.jit(lambda x: lax.reduce_precision(x, exponent_bits=8, mantissa_bits=7))(x))
want = x.astype(np.float32).astype(ml_dtypes.bfloat16).astype(np.float16)
print("jax", jax.__version__)
print("XLA:     ", got.tolist())
print("expected:", want.tolist())
