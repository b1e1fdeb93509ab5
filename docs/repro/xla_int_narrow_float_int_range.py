#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): an integer converted to a float type without
infinity (f8e4m3fn) and back to an unsigned integer in one jit ignores the
narrow type's range. u64 33554432 -> f8e4m3fn is NaN (max
448) and NaN -> u64 is 0, as XLA itself gives when the two converts run in
separate jits; together they give 2^64 - 1.
Standalone: needs only jax[cpu], numpy and ml_dtypes. docs/FINDINGS.md,
finding 37.
  python3 xla_int_narrow_float_int_range.py
"""
import numpy as np
import jax
import jax.numpy as jnp
import ml_dtypes

jax.config.update("jax_enable_x64", True)
s = np.array([33554432, 1, 500, 448], np.uint64)
f8 = ml_dtypes.float8_e4m3fn
both = jax.jit(lambda s: s.astype(f8).astype(jnp.uint64))(s)
mid = jax.jit(lambda s: s.astype(f8))(s)
apart = jax.jit(lambda x: x.astype(jnp.uint64))(mid)
print("jax", jax.__version__)
print("u64 -> f8e4m3fn:            ", np.asarray(mid).tolist())
print("-> u64, one jit:            ", np.asarray(both).tolist())
print("-> u64, two jits (expected):", np.asarray(apart).tolist())
