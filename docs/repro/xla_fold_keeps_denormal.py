#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): the constant folder keeps a denormal that the
compiled code reads as zero, so one program sees two values of one constant.
log of the f32 constant 9.18e-41 folds to -92.19 (the compiled log of the
same value given as an argument is -inf), while a run-time compare of the
constant with 0 says x <= 0. Standalone: needs only jax[cpu] and numpy.
docs/FINDINGS.md, finding 8.
  python3 xla_fold_keeps_denormal.py
"""
import numpy as np
import jax
import jax.numpy as jnp

x = np.array([9.18354962e-41, 0.5], np.float32)
z = np.zeros(2, np.float32)


def f(z):
    c = jnp.asarray(x)  # a constant of the program
    return jnp.log(c), c <= z, jnp.log(c) * jnp.where(c <= z, np.float32(0.25), c)


folded_log, le_zero, product = jax.jit(f)(z)
print("jax", jax.__version__)
print("log(x), folded:        ", np.asarray(folded_log))
print("log(x), x an argument: ", np.asarray(jax.jit(jnp.log)(x)))
print("x <= 0 at run time:    ", np.asarray(le_zero))
print("log(x) * where(x <= 0, 0.25, x):", np.asarray(product),
      "(expected -8.47e-39 with x a number, -inf with x zero)")
