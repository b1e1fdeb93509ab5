#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): two width-changing bitcast-converts in a row
whose widths do not come back to the first fail to compile. u32[3,2] ->
u64[3] -> s16[3,4] is merged into one u32 -> s16 bitcast-convert that keeps
the second's shape, and XLA's own verifier rejects it ("Expected instruction
to have shape equal to s16[3,2,2], actual shape is s16[3,4]").
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 38.
  python3 xla_bitcast_convert_chain.py
"""
import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)
bc = jax.lax.bitcast_convert_type
cases = [
    ("u32[3,2] -> u64 -> s16", np.zeros((3, 2), np.uint32), jnp.uint64, jnp.int16),
    ("f32[3,2] -> f64 -> f16", np.zeros((3, 2), np.float32), jnp.float64, jnp.float16),
    ("u64[3] -> u32 -> u8", np.zeros((3,), np.uint64), jnp.uint32, jnp.uint8),
    ("u32[3,2] -> u64 -> u32 (compiles)", np.zeros((3, 2), np.uint32), jnp.uint64, jnp.uint32),
]
print("jax", jax.__version__)
for name, x, d1, d2 in cases:
    try:
        r = jax.jit(lambda x: bc(bc(x, d1), d2))(x)
        print(f"{name}: compiled, shape {r.shape}")
    except Exception as e:  # the bug: XLA's verifier rejects what XLA made
        print(f"{name}: {str(e).splitlines()[0][:150]}")
