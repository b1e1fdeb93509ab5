#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a zero pad feeding a convolution is folded
into the convolution's window padding, and the compiled f64 convolution
skips padded taps, so the explicit pad's 0 * -inf = NaN is lost. numpy in
float64 (every product counted) gives NaN at the last output; XLA gives 5.
With XLA_FLAGS=--xla_disable_hlo_passes=algsimp the pad stays and XLA
gives NaN. (f32 does the same when the kernel is reversed in the HLO,
rhs_reversal=1; jax has no way to ask for that.)
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 39.
  python3 xla_conv_zero_pad_folded.py
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax

jax.config.update("jax_enable_x64", True)
x = np.array([1, 2, 3, 4, 5], np.float64).reshape(1, 5, 1)   # NWC
k = np.array([1, -np.inf, 1], np.float64).reshape(3, 1, 1)   # WIO


def f(x, k):
    p = jnp.pad(x, ((0, 0), (0, 1), (0, 0)))                 # explicit zero
    return lax.conv_general_dilated(p, k, (1,), [(1, 1)],
                                    dimension_numbers=("NWC", "WIO", "NWC"))


got = np.asarray(jax.jit(f)(x, k)).ravel()
xp = np.pad(x.ravel(), (1, 2))        # window pad 1, explicit pad 1, window pad 1
kk = k.ravel()
with np.errstate(invalid="ignore"):
    want = np.array([sum(xp[i + j] * kk[j] for j in range(3)) for i in range(6)])
print("jax", jax.__version__)
print("xla  ", got.tolist())
print("numpy", want.tolist())
print("BUG" if not np.isnan(got[5]) and np.isnan(want[5]) else "ok")
