#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a bf16 x bf16 -> f32 matrix product runs, and
so does its result transposed by the caller, but the transpose inside the
same jit is folded into the dot, and the dot XLA makes then fails when it
runs: "UNIMPLEMENTED: Unsupported element type for DotThunk::Execute:
BF16 x BF16 = F32". Not silent (a loud error on a valid program): a limit.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, "Not silent,
but limits" (the dot of bf16 operands with an f32 result).
  python3 xla_dot_bf16_f32_transposed.py
"""
import numpy as np
import jax
import jax.numpy as jnp

rng = np.random.default_rng(0)
a = jnp.asarray(rng.standard_normal((5, 23)), jnp.bfloat16)
b = jnp.asarray(rng.standard_normal((23, 13)), jnp.bfloat16)
want = (np.asarray(a, np.float64) @ np.asarray(b, np.float64)).T


def dot(x, y):
    return jax.lax.dot(x, y, preferred_element_type=jnp.float32)


print("jax", jax.__version__)
cases = [("dot, transposed after jit", lambda: np.asarray(jax.jit(dot)(a, b)).T),
         ("transpose(dot) in one jit", lambda: np.asarray(jax.jit(lambda x, y: dot(x, y).T)(a, b)))]
for name, run in cases:
    try:
        r = run()
        print(f"{name}: runs, max |err| vs float64 {np.max(np.abs(r - want)):.3g}")
    except Exception as e:  # the limit: the rewritten dot has no CPU kernel
        print(f"{name}: {str(e).splitlines()[0][:150]}")
