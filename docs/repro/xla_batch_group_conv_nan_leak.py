#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a 2-D convolution with batch_group_count=2
turns output feature 2 into NaN when a kernel tap of output feature 0 is
inf, though feature 2 reads only batch group 1 and its own kernel, all
finite. With all-ones inputs feature 2 must be 9 (3 channels x 3 taps);
feature 0 is inf, as it should be. The same shapes in 1-D do not show it.
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 27.
  python3 xla_batch_group_conv_nan_leak.py
"""
import numpy as np
import jax
from jax import lax

x = np.ones((4, 3, 3, 5), np.float32)              # N C H W
w = np.ones((4, 3, 1, 3), np.float32)              # O I H W
w[0, 0, 0, 1] = np.inf                             # feature 0 (batch group 0) only
f = jax.jit(lambda x, w: lax.conv_general_dilated(x, w, (1, 1), [(0, 0), (0, 0)], batch_group_count=2))
out = np.asarray(f(x, w))                          # (2, 4, 3, 3)
print("jax", jax.__version__)
print("feature 0 (inf tap):", out[0, 0, 0].tolist())
print("feature 2 (want 9.0):", out[0, 2, 0].tolist())
print("BUG" if np.isnan(out[:, 2]).any() else "ok")
