#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): exp(log(pad(v, c))) with a negative pad
value gives arbitrary finite values in the padded elements, different from
run to run (they look like uninitialized memory), where log of a negative
is NaN and so is its exp. log(pad(v, c)) alone is right.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 28.
  python3 xla_exp_log_pad_garbage.py
"""
import numpy as np
import jax
import jax.numpy as jnp

v = jnp.array([1., 2.], dtype=jnp.float32)
f = jax.jit(lambda v: jnp.exp(jnp.log(jnp.pad(v, (2, 1), constant_values=-3.38))))
g = jax.jit(lambda v: jnp.log(jnp.pad(v, (2, 1), constant_values=-3.38)))
print("jax", jax.__version__)
print("exp(log(pad)), want [nan nan 1 2 nan]:", np.asarray(f(v)).tolist())
print("log(pad), right:", np.asarray(g(v)).tolist())
print("BUG" if not np.isnan(np.asarray(f(v))[[0, 1, 4]]).all() else "ok")
