#!/usr/bin/env python3
"""XLA CPU (jaxlib 0.10.2): the algebraic simplifier folds
compare(x*x, 0, LT) to false for a signed integer x, so
select(x*x < 0, abs(x*x), x*x) returns x*x even where the square wrapped
negative (s8: 13*13 = -87). XLA's own test
DoesNotFoldSignedIntegerSquareAbsSelect (algebraic_simplifier_test.cc)
forbids the fold. Needs only jax/jaxlib (pip). docs/FINDINGS.md, finding 19.
  python3 xla_cpu_signed_square_abs_select.py
"""
import numpy as np
import jax
import jax.numpy as jnp


def f(x):
    sq = x * x
    return jnp.where(sq < 0, jnp.abs(sq), sq)


x = np.array([1, 13, -13, 100], np.int8)
got = np.asarray(jax.jit(f)(x))
sq = (x.astype(np.int32) ** 2).astype(np.int8)  # wraps like s8 multiply
want = np.where(sq < 0, np.abs(sq.astype(np.int32)).astype(np.int8), sq)
print("got     ", got.tolist())
print("expected", want.tolist(), "" if (got == want).all() else "WRONG")
