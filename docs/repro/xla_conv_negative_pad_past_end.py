#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a 2-D f32 convolution whose window padding
on one spatial dim is negative low and as much positive high (-1_1) reads
the taps over the high padding from memory past the input (here the
kernel) instead of 0. x = 1..16 as NCHW [1, 2, 2, 4], kernel of ones
[1, 2, 2, 2], padding (-1, 1) on H: expected (numpy in float64, every
padded tap 0) [38, 42, 46]; XLA gives [42, 46, 50]. A kernel of twos gives
+16 (its own values read as inputs), an input times 100 still +4. f16 and
bf16 the same; f64 is right. Standalone: needs only jax[cpu] and numpy.
docs/FINDINGS.md, finding 42.
  python3 xla_conv_negative_pad_past_end.py
"""
import numpy as np
import jax
from jax import lax

PAD = ((-1, 1), (0, 0))


def f(x, k):
    return lax.conv_general_dilated(x, k, (1, 1), PAD,
                                    dimension_numbers=("NCHW", "OIHW", "NCHW"))


def numpy_conv(x, k):
    xp = np.pad(x.astype(np.float64)[:, :, 1:, :], ((0, 0), (0, 0), (0, 1), (0, 0)))
    n, c, h, w = xp.shape
    o, _, kh, kw = k.shape
    return np.array([[[[sum(xp[b, i, r + a, s + d] * k[q, i, a, d]
                            for i in range(c) for a in range(kh) for d in range(kw))
                        for s in range(w - kw + 1)] for r in range(h - kh + 1)]
                      for q in range(o)] for b in range(n)])


x = np.arange(1, 17, dtype=np.float32).reshape(1, 2, 2, 4)
k = np.ones((1, 2, 2, 2), np.float32)
got = np.asarray(jax.jit(f)(x, k)).ravel()
want = numpy_conv(x, k).ravel()
print("jax", jax.__version__)
print("xla  ", got.tolist())
print("numpy", want.tolist())
print("BUG" if not np.array_equal(got, want) else "ok")
