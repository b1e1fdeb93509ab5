"""jax_dumps.py - writes real XLA HLO dumps of a few small models, before and
after XLA's CPU optimizations, for trench's corpus measurements.

Usage: .venv/bin/python bench/jax_dumps.py OUTDIR
(make the venv with scripts/venv.sh). Each model gives OUTDIR/NAME.mlir
(the StableHLO jax hands to XLA), OUTDIR/NAME.pre.hlo (XLA's HLO of it)
and OUTDIR/NAME.opt.hlo (what XLA's CPU pipeline made of it: fusions,
layouts, scheduled). Then, for example:
    build/trench check OUTDIR/*.pre.hlo --target xla-cpu   # HLO route
    build/trench check OUTDIR/*.mlir --target xla-cpu      # as jax gives it
    bench/parse_corpus.sh OUTDIR
    build/trench stats OUTDIR/*.opt.hlo
"""
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


def mlp(x, w1, b1, w2):
    h = jax.nn.relu(x @ w1 + b1)
    return jax.nn.softmax(h @ w2)


def convnet(x, k1, k2):
    dn = ("NHWC", "HWIO", "NHWC")
    y = jax.lax.conv_general_dilated(x, k1, (1, 1), "SAME", dimension_numbers=dn)
    y = jax.nn.gelu(y)
    y = jax.lax.reduce_window(y, -jnp.inf, jax.lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = jax.lax.conv_general_dilated(y, k2, (2, 2), "SAME", dimension_numbers=dn)
    return y.mean(axis=(1, 2))


def attention(q, k, v):
    s = jnp.einsum("bqd,bkd->bqk", q, k) / jnp.sqrt(q.shape[-1]).astype(q.dtype)
    return jnp.einsum("bqk,bkd->bqd", jax.nn.softmax(s, axis=-1), v)


def layernorm_scan(x, w):
    def step(h, wi):
        h = h @ wi
        mu = h.mean(-1, keepdims=True)
        var = ((h - mu) ** 2).mean(-1, keepdims=True)
        return (h - mu) * jax.lax.rsqrt(var + 1e-5), None
    return jax.lax.scan(step, x, w)[0]


def gather_scatter(table, idx, upd):
    rows = table[idx]
    return table.at[idx].add(upd), rows.sum(0)


def main(out):
    f32, bf16 = jnp.float32, jnp.bfloat16
    key = jax.random.PRNGKey(0)
    r = lambda *s, dt=f32: jax.random.normal(key, s, dt)  # noqa: E731
    models = {
        "mlp": (mlp, [r(32, 64), r(64, 128), r(128), r(128, 10)]),
        "convnet": (convnet, [r(4, 32, 32, 3), r(3, 3, 3, 16), r(3, 3, 16, 32)]),
        "attention_bf16": (attention, [r(2, 16, 64, dt=bf16)] * 3),
        "layernorm_scan": (layernorm_scan, [r(8, 32), r(6, 32, 32)]),
        "gather_scatter": (gather_scatter, [r(100, 16), jnp.arange(0, 40, 3), r(14, 16)]),
    }
    os.makedirs(out, exist_ok=True)
    for name, (fn, args) in models.items():
        lowered = jax.jit(fn).lower(*args)
        with open(os.path.join(out, name + ".mlir"), "w") as f:
            f.write(lowered.as_text())
        with open(os.path.join(out, name + ".pre.hlo"), "w") as f:
            f.write(lowered.compiler_ir("hlo").as_hlo_text())
        with open(os.path.join(out, name + ".opt.hlo"), "w") as f:
            f.write(lowered.compile().as_text())
        print(name)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
