#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a while loop whose constant start is already
past its constant bound, `i = -3; while (i <= -5) { i += 3; x = 2 }`,
runs once: i comes back 0 and x all 2, where the body must not run (the
results are the initial values). With x passed through unchanged, or
the start a runtime value, the loop is right.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 26.
  python3 xla_while_start_past_bound.py
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

body = lambda c: (c[0] + 3, jnp.full((4,), 2, jnp.int32))
x = np.array([-1, 5, 7, 9], np.int32)
f = jax.jit(lambda x: lax.while_loop(lambda c: c[0] <= -5, body, (np.int32(-3), x)))
g = jax.jit(lambda i, x: lax.while_loop(lambda c: c[0] <= -5, body, (i, x)))
print("jax", jax.__version__)
print("constant start:", [np.asarray(v).tolist() for v in f(x)], "expected", [-3, x.tolist()])
print("runtime start :", [np.asarray(v).tolist() for v in g(np.int32(-3), x)])
