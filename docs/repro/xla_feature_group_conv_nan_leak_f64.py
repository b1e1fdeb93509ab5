#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): an f64 convolution with feature_group_count=3
turns output feature 1 into NaN when input feature 0 (group 0) holds an
inf, though feature 1 reads only input feature 1 and its own kernel, all
finite; with all-ones inputs it must be 3. f32 comes out right. Like the
batch-group leak (finding 27): the groups' zeros meet the inf.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 27.
  python3 xla_feature_group_conv_nan_leak_f64.py
"""
import numpy as np
import jax
from jax import lax

jax.config.update("jax_enable_x64", True)
x = np.ones((1, 3, 4), np.float64)                 # N C W
x[0, 0, 0] = np.inf                                # input feature 0 only
w = np.ones((3, 1, 3), np.float64)                 # O I W, one input feature a group
f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1,), [(0, 0)], feature_group_count=3))
out = np.asarray(f(x, w))                          # (1, 3, 2)
print("jax", jax.__version__)
print("feature 0 (reads the inf):", out[0, 0].tolist())
print("feature 1 (want 3.0):", out[0, 1].tolist())
print("BUG" if np.isnan(out[0, 1:]).any() else "ok")
