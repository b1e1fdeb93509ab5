#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): f16 x / C, C a constant whose reciprocal
overflows f16, is inf: the divide becomes x * (1 / C). A parameter divisor
gives the quotient. docs/FINDINGS.md, finding 24. Needs only jax[cpu].
  python3 xla_divide_tiny_constant_f16.py
"""
import numpy as np
import jax
import jax.numpy as jnp

x = np.array([0.4, 1.0], np.float16)
c = np.array([-7.3e-06, 2e-05], np.float16)
print("jax", jax.__version__)
print("constant divisor :", jax.jit(lambda x: x / jnp.asarray(c))(x))   # [-inf 4.992e+04]
print("parameter divisor:", jax.jit(lambda x, c: x / c)(x, c))          # [-5.501e+04 4.992e+04]
print("numpy            :", x / c)
