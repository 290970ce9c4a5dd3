#!/usr/bin/env python3
"""The op-level benchmark set, written in JAX and lowered to HLO text.

These are the sixteen programs of the README's first speed table (the same
names, shapes and input ranges as the set in `../shared/bench`), made here so
the table can be reproduced from a clone: for each one this writes
`bench/programs/NAME.hlo` (`jax.jit(f).lower(...).as_text(dialect="hlo")`) and
`NAME.json` (the argument spec `bench/compare_xla.py` draws inputs from).
`bench/gen_models.py` makes the whole-model set the same way.

Requires: pip install jax (CPU). Run from anywhere:
  python3 bench/gen_bench.py
then
  python3 bench/compare_xla.py --bench-dir bench/programs --iters 20 --rounds 3
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "programs")


def arg(dtype, shape, lo=-1.0, hi=1.0):
    return {"dtype": dtype, "shape": list(shape), "lo": lo, "hi": hi}


def f32(*shape, lo=-1.0, hi=1.0):
    return arg("float32", shape, lo, hi)


def conv3x3(x, k):
    y = lax.conv_general_dilated(x, k, (1, 1), ((1, 1), (1, 1)),
                                 dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return jax.nn.relu(y)


def cumsum(x):
    return jnp.cumsum(x, axis=1)


def elementwise(x, y):
    return jnp.tanh(x * y + 1.0) - jnp.exp(-jnp.abs(x)) / (y * y + 1.0)


def gather_embedding(table, idx):
    return jnp.take(table, idx, axis=0)


def layernorm(x, g, b):
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    return (x - mean) * lax.rsqrt(var + 1e-5) * g + b


def matmul(a, b):
    return a @ b


def mlp(x, w1, b1, w2, b2):
    return jax.nn.gelu(x @ w1 + b1, approximate=True) @ w2 + b2


def mlp_train_step(x, w1, b1, w2, y):
    def loss(params):
        w1, b1, w2 = params
        h = jax.nn.relu(x @ w1 + b1)
        return jnp.mean((h @ w2 - y) ** 2)
    params = (w1, b1, w2)
    grads = jax.grad(loss)(params)
    return tuple(p - 0.01 * g for p, g in zip(params, grads))


def pool(x):
    mx = lax.reduce_window(x, -jnp.inf, lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    avg = lax.reduce_window(x, 0.0, lax.add, (1, 2, 2, 1), (1, 2, 2, 1), "VALID") / 4.0
    return mx, avg


def reduce(x):
    return jnp.sum(x, axis=1), jnp.max(x, axis=1)


def scan_rnn(h0, xs, w):
    def step(h, x):
        h = jnp.tanh(h @ w + x)
        return h, None
    h, _ = lax.scan(step, h0, xs)
    return h


def scatter_add(v, idx):
    return jnp.zeros(65536, jnp.float32).at[idx].add(v)


def softmax(x):
    return jax.nn.softmax(x, axis=-1)


def sort(x):
    return jnp.sort(x)


def transformer_block(x, wq, wk, wv, wo, w1, w2):
    def ln(t):
        m = jnp.mean(t, axis=-1, keepdims=True)
        v = jnp.mean((t - m) ** 2, axis=-1, keepdims=True)
        return (t - m) * lax.rsqrt(v + 1e-5)
    b, s, d = x.shape
    heads = 8
    h = ln(x)
    q, k, v = (h @ wq, h @ wk, h @ wv)
    split = lambda t: t.reshape(b, s, heads, d // heads).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / jnp.sqrt(d // heads).astype(jnp.float32)
    mask = jnp.tril(jnp.ones((s, s), bool))
    scores = jnp.where(mask, scores, -1e9)
    att = jax.nn.softmax(scores, axis=-1) @ v
    x = x + att.transpose(0, 2, 1, 3).reshape(b, s, d) @ wo
    return x + jax.nn.gelu(ln(x) @ w1, approximate=True) @ w2


def transpose(x):
    return jnp.transpose(x, (2, 0, 1)) * 2.0


PROGRAMS = [
    ("conv3x3_8x56x56x64", conv3x3, [f32(8, 56, 56, 64), f32(3, 3, 64, 64)]),
    ("cumsum_1024x4096", cumsum, [f32(1024, 4096)]),
    ("elementwise_4m", elementwise, [f32(2048, 2048), f32(2048, 2048)]),
    ("gather_embedding_50000x256", gather_embedding,
     [f32(50000, 256), arg("int32", (8192,), 0, 50000)]),
    ("layernorm_4096x1024", layernorm, [f32(4096, 1024), f32(1024), f32(1024)]),
    ("matmul_1024", matmul, [f32(1024, 1024), f32(1024, 1024)]),
    ("mlp_256x1024x4096", mlp,
     [f32(256, 1024), f32(1024, 4096), f32(4096), f32(4096, 1024), f32(1024)]),
    ("mlp_train_step_512", mlp_train_step,
     [f32(512, 784), f32(784, 512, lo=-0.05, hi=0.05), f32(512),
      f32(512, 10, lo=-0.05, hi=0.05), f32(512, 10)]),
    ("pool_8x112x112x64", pool, [f32(8, 112, 112, 64)]),
    ("reduce_4096x4096", reduce, [f32(4096, 4096)]),
    ("scan_rnn_64x32x512", scan_rnn,
     [f32(32, 512), f32(64, 32, 512), f32(512, 512, lo=-0.05, hi=0.05)]),
    ("scatter_add_1m_into_64k", scatter_add,
     [f32(1048576), arg("int32", (1048576,), 0, 65536)]),
    ("softmax_2048x1024", softmax, [f32(2048, 1024, lo=-5, hi=5)]),
    ("sort_1m", sort, [f32(1048576)]),
    ("transformer_block_4x256x512", transformer_block,
     [f32(4, 256, 512)] + [f32(512, 512)] * 4 + [f32(512, 2048), f32(2048, 512)]),
    ("transpose_256x512x128", transpose, [f32(256, 512, 128)]),
]


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, f, specs in PROGRAMS:
        shapes = [jax.ShapeDtypeStruct(tuple(s["shape"]), np.dtype(s["dtype"])) for s in specs]
        text = jax.jit(f).lower(*shapes).as_text(dialect="hlo")
        with open(os.path.join(OUT, name + ".hlo"), "w") as out:
            out.write(text)
        with open(os.path.join(OUT, name + ".json"), "w") as out:
            json.dump({"name": name, "args": specs, "jax_version": jax.__version__}, out, indent=1)
        print(name)


if __name__ == "__main__":
    main()
