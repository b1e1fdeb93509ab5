#!/usr/bin/env python3
"""XLA CPU (jax/jaxlib 0.10.2): a dynamic-update-slice whose update is
computed from a window of its own operand at other starts is emitted in
place, element by element, so the update reads elements the same loop has
already overwritten: t[1:6] = t[0:5] + 1 gives t[0]+1, t[0]+2, ... .
Seen where the in-place fusion writes through a bitcast of its parameter
([6] -> [6,1], [4,6] -> [1,4,6]) while the window reads the parameter
itself; with no bitcast XLA copies first and is right (case 3).
Standalone: needs only jax[cpu] and numpy. docs/FINDINGS.md, finding 43.
  python3 xla_dus_reads_own_operand.py
"""
import numpy as np
import jax
import jax.numpy as jnp
from jax import lax


def report(name, got, want):
    got = np.asarray(got).astype(np.int64).ravel()
    want = np.asarray(want).astype(np.int64).ravel()
    print("%s: got %s expected %s %s" % (name, got.tolist(), want.tolist(),
          "" if np.array_equal(got, want) else "WRONG"))


# 1. integer batch dot -> [6,1]; the update is rows 0..4 of it, plus 1,
#    written at row 1 (seed 26, mismatch-dynamic-update-slice-u16)
x = (np.arange(24) % 7).astype(np.int32).reshape(6, 4, 1)
y = np.ones((6, 4), np.int32)


def f1(x, y, j):
    t = lax.dot_general(x, y, (((1,), (1,)), ((0,), (0,))))   # s32[6,1]
    u = lax.dynamic_slice(t, (j, jnp.int32(0)), (5, 1)) + 1
    return lax.dynamic_update_slice(t, u, (jnp.int32(1), jnp.int32(0)))


t = x[:, :, 0].sum(1).reshape(6, 1)
w = t.copy(); w[1:] = t[:5] + 1
report("dot [6,1]", jax.jit(f1)(x, y, np.int32(0)), w)

# 2. s8 and -> [1,4,6]; columns 0..3 plus 1 written at columns 2..5, one
#    result also converted to u4 (seed 26, mismatch-convert-u4): the s8
#    output is right, the u4 one reads overwritten columns
p = np.array([[-2, 2, -1, 1, -1, -2], [0, -1, -2, -2, -2, -2],
              [-1, -1, -1, -1, 0, 2], [2, 1, 1, 2, -1, -1]], np.int8)
q = np.array([[-2, -2, -1, -2, -1, 0], [-1, -1, 1, 2, -1, 2],
              [0, 2, 0, -2, -2, 1], [2, 0, 0, -2, -1, -2]], np.int8)


def f2(p, q, i, j):
    r = (p & q).reshape(1, 4, 6)
    s = lax.dynamic_slice(r, (jnp.int32(0), i, j), (1, 4, 4)) + jnp.int8(1)
    d = lax.dynamic_update_slice(r, s, (jnp.int32(0), jnp.int32(0), jnp.int32(2)))
    return d.reshape(4, 6), d.astype(jnp.uint8).astype(jnp.uint4)


r = p & q
w = r.copy(); w[:, 2:6] = r[:, 0:4] + 1
a, b = jax.jit(f2)(p, q, np.int32(0), np.int32(0))
report("and s8 out", a, w)
report("and u4 out", np.asarray(b).astype(np.uint8), w.astype(np.uint8) & 15)

# 3. case 1 with t of rank 1 (a sum, no bitcast in the fusion): right
x3 = x[:, :, 0]


def f3(x, y, j):
    t = jnp.sum(x * y, axis=1)
    u = lax.dynamic_slice(t, (j,), (5,)) + 1
    return lax.dynamic_update_slice(t, u, (jnp.int32(1),))


w = t.ravel().copy(); w[1:] = t.ravel()[:5] + 1
report("dot [6] (control)", jax.jit(f3)(x3, y, np.int32(0)), w)
