# XLA CPU: a 4-bit integer convolution converted to a wider type keeps the
# bits above its 4 (trench finding 29, docs/FINDINGS.md). Standalone: needs
# only jax (and ml_dtypes, which jax installs).
import jax, jax.numpy as jnp, numpy as np, ml_dtypes
from jax import lax

conv = lambda x, k: lax.conv_general_dilated(x, k, (1,), "VALID")
for name, dt, wide in [("u4", ml_dtypes.uint4, jnp.uint8), ("s4", ml_dtypes.int4, jnp.int8)]:
    x = np.array([[[7, 7, 7, 7]]], dt)
    k = np.array([[[3, 3, 3, 3]]], dt)
    alone = jax.jit(conv)(x, k)                                  # 84 wrapped to 4 bits: 4
    widened = jax.jit(lambda x, k: conv(x, k).astype(wide))(x, k)  # should be 4 as well
    print(name, "conv:", np.asarray(alone).ravel(), "conv then convert:", np.asarray(widened).ravel())
# jax 0.10.2: u4 conv: [4] conv then convert: [84]; s4 likewise (84 is no s4 value).
# The same with 8-bit operands wraps right: u8 conv of 100s and 3s -> u16 gives 176.
