#!/usr/bin/env python3
"""xla_bench_inputs.py - input files for XLA's own CPU benchmark modules
(docs/MODELS.md, "XLA's own benchmark files") whose inputs trench cannot
draw sensibly by itself.

resnet50_keras_jax_f32.hlo takes its 320 weights and batch-norm statistics
as parameters: drawn N(0, 1), a moving variance < 0 makes rsqrt NaN. This
writes Keras ResNet-50 values: kernels He-normal, biases N(0, 0.05), BN gamma
U(0.6, 1.2) (U(0.15, 0.35) before a residual add), beta N(0, 0.1), moving mean N(0, 0.1), moving variance
U(0.5, 1.5), the classifier N(0, 1/2048) and the image N(0, 1) (seeds
S > 0 change the image only).

dlrm_keras_jax_f32_test_step.hlo: trench draws a valid input set by itself
(its ids reach their gathers through a nested jit(_where) call, which the
input planner follows: docs/INPUTS.md), but N(0, 1) weights and features
are far from a trained DLRM's. This writes Keras-like values instead; the
ids are the planner's own (`trench run --seed S --out`: uniform over each
table's rows), so nothing here knows which parameter indexes which table.
It writes, next to the module, DIR/NAME.inputs/pK.npy (one per entry
parameter, as model_check.sh and eval_bench's folder mode read them) and
NAME.inputs/params.txt, and for seeds S > 0 DIR/NAME.inputs/seedS/pK.npy
for the data parameters (ids, features, labels; the weights stay):

  ids     what `trench run --fill-elided --seed S` draws for the leaves it
          plans as indices (checked: exactly the five s32 id parameters)
  tables  N(0, 1/8) (8-wide embeddings); dense kernels He-normal; biases
          N(0, 0.05); the four metric accumulators 0
  data    hour-of-day/week cos and sin of uniform angles, ages U(18, 60),
          ratings (labels) U{1..5}

Usage: .venv/bin/python bench/xla_bench_inputs.py [--seeds N] [DIR]
       (DIR default /work/models/xla-bench; needs build/trench)
"""
import os
import re
import subprocess
import sys
import tempfile

import numpy as np

DLRM = "dlrm_keras_jax_f32_test_step"
B = 3616
TABLES = [3, 796, 22, 1683, 944]  # gender, zip, occupation, movie, user
TRENCH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "build", "trench")


def planned_ids(module, seed):
    """{K: ids} for the leaves trench's input planner draws as indices."""
    with tempfile.TemporaryDirectory() as tmp:
        r = subprocess.run([TRENCH, "run", "--fill-elided", "--seed", str(seed),
                            "--out", tmp, module], capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("trench run failed:\n" + r.stderr)
        ks = [int(k) for k in re.findall(r"^in(\d+): \S+ index", r.stdout, re.M)]
        return {k: np.load(os.path.join(tmp, "in%d.npy" % k)) for k in ks}


def dlrm_params(rng, seed_rng, ids):
    """[(role, array)] in parameter order; data ones drawn from seed_rng,
    ids ({K: array}) from the planner."""
    p = []
    for rows in TABLES:
        p.append(("weight", rng.normal(0, np.sqrt(1 / 8), (rows, 8))))
    dense = [(5, 8), (8,), (8, 8), (8,), (15, 192), (192,), (192, 192), (192,),
             (192, 192), (192,), (192, 1), (1,)]
    for shp in dense:
        if len(shp) == 1:  # biases: small, not 0 (constant broadcasts judge nothing)
            p.append(("weight", rng.normal(0, 0.05, shp)))
        else:
            p.append(("weight", rng.normal(0, np.sqrt(2 / shp[0]), shp)))
    for _ in range(4):
        p.append(("weight", np.zeros(())))  # metric accumulators
    ang_d, ang_w = seed_rng.uniform(0, 2 * np.pi, (2, B, 1))
    # p21 hour_of_day_cos, p22 _sin, p23 hour_of_week_cos, p24 _sin
    for a in (np.cos(ang_d), np.sin(ang_d), np.cos(ang_w), np.sin(ang_w)):
        p.append(("data", a))
    p.append(("data", None))  # p25 movie_id, below
    p.append(("data", seed_rng.uniform(18, 60, (B, 1))))  # p26 raw_user_age
    for _ in range(4):
        p.append(("data", None))  # p27..p30 ids
    p.append(("data", seed_rng.integers(1, 6, B).astype(np.float64)))  # p31 rating
    # p25 movie_id, p27 user_gender, p28 user_id, p29 occupation, p30 zip
    if sorted(ids) != [25, 27, 28, 29, 30]:
        sys.exit("trench planned %s as ids, expected 25, 27-30" % sorted(ids))
    for k, a in ids.items():
        p[k] = ("data", a.astype(np.int32))
    return [(r, a if a.dtype == np.int32 else a.astype(np.float32)) for r, a in p]


RESNET = "resnet50_keras_jax_f32"


def resnet_state0():
    """Roles and shapes of state[0] in Keras ResNet-50 order."""
    out = [("kernel", (7, 7, 3, 64)), ("bias", (64,)), ("gamma", (64,)), ("beta", (64,))]

    def unit(k, g="gamma"):
        return [("kernel", k), ("bias", (k[3],)), (g, (k[3],)), ("beta", (k[3],))]
    for fin, f, o, n in ((64, 64, 256, 3), (256, 128, 512, 4), (512, 256, 1024, 6),
                         (1024, 512, 2048, 3)):
        out += unit((1, 1, fin, f)) + unit((3, 3, f, f))
        out += [("kernel", (1, 1, fin, o)), ("bias", (o,)), ("kernel", (1, 1, f, o)), ("bias", (o,)),
                ("gamma", (o,)), ("beta", (o,)), ("gamma_last", (o,)), ("beta", (o,))]
        for _ in range(n - 1):
            out += unit((1, 1, o, f)) + unit((3, 3, f, f)) + unit((1, 1, f, o), "gamma_last")
    return out + [("dense", (2048, 1000)), ("bias", (1000,))]


def resnet_params(rng, seed_rng, ids):
    p = []
    s0 = resnet_state0()
    assert len(s0) == 214
    for role, shp in s0:
        if role == "kernel":
            a = rng.normal(0, np.sqrt(2 / (shp[0] * shp[1] * shp[2])), shp)
        elif role == "dense":
            a = rng.normal(0, np.sqrt(1 / shp[0]), shp)
        elif role == "gamma":
            a = rng.uniform(0.6, 1.2, shp)
        elif role == "gamma_last":  # the BN before a residual add: keeps the sums near 1
            a = rng.uniform(0.15, 0.35, shp)
        elif role == "beta":
            a = rng.normal(0, 0.1, shp)
        else:  # conv and dense biases: small, not 0 (a 0 bias makes its broadcasts constant: weak)
            a = rng.normal(0, 0.05, shp)
        p.append(("weight", a))
    # state[1]: (moving mean, moving variance) of each BN, in the order the
    # gammas come in state[0]
    for role, shp in s0:
        if role.startswith("gamma"):
            p.append(("weight", rng.normal(0, 0.1, shp)))
            p.append(("weight", rng.uniform(0.5, 1.5, shp)))
    assert len(p) == 320, len(p)
    p.append(("data", seed_rng.normal(0, 1, (1, 224, 224, 3))))
    return [(r, a.astype(np.float32)) for r, a in p]


def write(d, name, make, seeds, ids_from_trench=False):
    out = os.path.join(d, name + ".inputs")
    os.makedirs(out, exist_ok=True)
    for s in range(seeds):
        ids = planned_ids(os.path.join(d, name + ".hlo"), s) if ids_from_trench else {}
        ps = make(np.random.default_rng(1234), np.random.default_rng(s), ids)
        sub = out if s == 0 else os.path.join(out, "seed%d" % s)
        os.makedirs(sub, exist_ok=True)
        for k, (role, a) in enumerate(ps):
            if s == 0 or role == "data":
                np.save(os.path.join(sub, "p%d.npy" % k), a)
        if s == 0:
            with open(os.path.join(out, "params.txt"), "w") as f:
                for k, (role, a) in enumerate(ps):
                    f.write("p%d %s %s %s\n" % (k, role, a.dtype, list(a.shape)))
    print("wrote", out)


def main():
    args = sys.argv[1:]
    seeds = 3
    if len(args) >= 2 and args[0] == "--seeds":
        seeds = int(args[1])
        args = args[2:]
    d = args[0] if args else "/work/models/xla-bench"
    write(d, DLRM, dlrm_params, seeds, ids_from_trench=True)
    write(d, RESNET, resnet_params, seeds)


if __name__ == "__main__":
    main()
