# XLA CPU: 4-bit integer arithmetic (a convolution, a sum) converted to a wider type keeps the
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

# Plain elementwise arithmetic does it too: the u4 sum alone wraps, the
# same sum converted to u8 does not.
a = np.array([15, 9, 8, 1], ml_dtypes.uint4)
print("u4 a + a:", np.asarray(jax.jit(lambda a: a + a)(a)).tolist(),
      "then to u8:", np.asarray(jax.jit(lambda a: (a + a).astype(jnp.uint8))(a)).tolist(),
      "expected [14, 2, 0, 2] both")
