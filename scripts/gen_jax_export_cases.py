#!/usr/bin/env python3
"""Writes serialized `jax.export` modules with their arguments and XLA CPU's
results, for the StableHLO reader's jax.export tests:
tests/stablehlo_bytecode/jax_export/NAME/{module.jaxexport, argN.npy,
outN.npy, case.json}.

`argN.npy` are the exported function's arguments, all of them: the module
keeps only those the function uses (its calling convention says which), and
the reader's user gives the function's arguments, as to the function. The
results are `jax.jit(f)` on XLA CPU. Needs `pip install jax flatbuffers`.

Usage: python3 scripts/gen_jax_export_cases.py
"""
import json
import os
import shutil

import jax
import jax.numpy as jnp
import numpy as np
from jax import export, lax

jax.config.update("jax_enable_x64", True)
ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests/stablehlo_bytecode/jax_export")
rng = np.random.default_rng(44)


def a(shape, dtype=np.float32, lo=-1.0, hi=1.0):
    return rng.uniform(lo, hi, shape).astype(dtype)


def mlp(x, w1, b1, w2, unused):
    h = jax.nn.gelu(x @ w1 + b1)
    return jax.nn.log_softmax(h @ w2, axis=-1)


def lstm(xs, h0, c0, wx, wh):
    def cell(carry, x):
        h, c = carry
        g = x @ wx + h @ wh
        i, f, o, u = jnp.split(g, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    (h, c), hs = lax.scan(cell, (h0, c0), xs)
    return hs, h, c


def convnet(x, w1, w2):
    y = lax.conv_general_dilated(x, w1, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y)
    y = lax.reduce_window(y, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    y = lax.conv_general_dilated(y, w2, (2, 2), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                                 feature_group_count=2)
    return y.mean(axis=(1, 2))


def attention(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 4.0
    mask = jnp.tril(jnp.ones((q.shape[2], k.shape[2]), bool))
    s = jnp.where(mask, s, -1e9)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)


def sort_topk(x, idx):
    vals, pos = lax.top_k(x, 5)
    return jnp.sort(x, axis=0), vals, pos, jnp.cumsum(x, axis=1), x[idx]


def while_newton(x):
    def cond(s):
        i, y = s
        return i < 20
    def body(s):
        i, y = s
        return i + 1, 0.5 * (y + x / y)
    return lax.while_loop(cond, body, (0, jnp.ones_like(x)))[1]


def mixed_precision(x, w):
    h = (x.astype(jnp.bfloat16) @ w.astype(jnp.bfloat16)).astype(jnp.float32)
    return jnp.tanh(h).astype(jnp.float16), jnp.exp(x.astype(jnp.float64)).sum()


def integer_ops(x, y):
    return (x // 3) * y % 7, jnp.argmax(x, axis=1), x.astype(jnp.uint8) >> 2, jnp.where(x > y, x, y)


def random_dropout(seed, x):
    key = jax.random.key(seed)
    keep = jax.random.bernoulli(key, 0.8, x.shape)
    return jnp.where(keep, x / 0.8, 0.0), jax.random.normal(jax.random.fold_in(key, 1), (3, 4))


CASES = {
    "mlp": (mlp, [a((4, 16)), a((16, 32)), a((32,)), a((32, 10)), a((3,))], 1e-5, 1e-6),
    "lstm": (lstm, [a((6, 2, 8)), a((2, 16)), a((2, 16)), a((8, 64)), a((16, 64))], 1e-5, 1e-6),
    "convnet": (convnet, [a((2, 8, 8, 3)), a((3, 3, 3, 8)), a((3, 3, 4, 6))], 1e-5, 1e-6),
    "attention": (attention, [a((1, 2, 8, 16)), a((1, 2, 8, 16)), a((1, 2, 8, 16))], 1e-5, 1e-6),
    "sort_topk": (sort_topk, [a((6, 9)), np.array([2, 0, 5], np.int32)], 0, 0),
    "while_newton": (while_newton, [a((5,), np.float32, 0.5, 4.0)], 1e-6, 0),
    "mixed_precision": (mixed_precision, [a((4, 8)), a((8, 6))], 1e-2, 1e-3),
    "integer_ops": (integer_ops, [rng.integers(-50, 50, (3, 5)).astype(np.int32),
                                  rng.integers(1, 9, (3, 5)).astype(np.int32)], 0, 0),
    "random_dropout": (random_dropout, [np.uint32(7), a((4, 5))], 1e-6, 0),
}


def main():
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    for name, (f, args, rtol, atol) in CASES.items():
        d = os.path.join(OUT, name)
        os.makedirs(d)
        exp = export.export(jax.jit(f))(*args)
        with open(os.path.join(d, "module.jaxexport"), "wb") as fh:
            fh.write(exp.serialize())
        outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
        for i, x in enumerate(args):
            np.save(os.path.join(d, f"arg{i}.npy"), np.asarray(x))
        for i, y in enumerate(outs):
            np.save(os.path.join(d, f"out{i}.npy"), np.asarray(y))
        with open(os.path.join(d, "case.json"), "w") as fh:
            json.dump({
                "name": name,
                "jax_version": jax.__version__,
                "rtol": rtol,
                "atol": atol,
                "kept_args": sorted(exp.module_kept_var_idx),
                "calling_convention_version": exp.calling_convention_version,
            }, fh, indent=1)
        print(name, "kept", sorted(exp.module_kept_var_idx), "of", len(args))


if __name__ == "__main__":
    main()
