"""Half-precision JAX programs with XLA CPU's results, for numerics parity.

Writes `tests/bf16/<case>/` in the conformance corpus format (module.hlo,
optimized.hlo, argN.npy, outN.npy, case.json; see tests/conformance/README.md)
with `rtol = atol = 0`: `tests/tests/bf16_parity.rs` requires the Interpreter and
the Host to give XLA CPU's bits on these programs.

The programs are what bf16/f16 models are made of: chains of elementwise ops,
softmax, layernorm, gelu, a small MLP, reductions kept in the half type. Inputs
are seeded normal samples (no special values): what is checked is where XLA
CPU rounds, not special-value semantics (the op matrix covers those).

Regenerate (rewrites the case folders):

    /path/to/venv-with-jax/bin/python scripts/gen_bf16_cases.py
"""

import os
import shutil

import jax
import jax.numpy as jnp
import ml_dtypes
import numpy as np
from jax import lax

from case_writer import case_meta, run_jitted, write_files

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "bf16")
BF16 = np.dtype(ml_dtypes.bfloat16)
F16 = np.dtype(np.float16)
CASES = []


def case(name):
    def deco(fn):
        CASES.append((name, fn))
        return fn

    return deco


def normal(shape, dt, seed, scale=1.0):
    r = np.random.default_rng(seed)
    return (r.standard_normal(shape) * scale).astype(dt)


def chain(x, y):
    a = x * y + x
    b = jnp.exp(a * 0.25) - y
    c = jnp.tanh(b) * 3 + jnp.sqrt(jnp.abs(x))
    return c / (y * y + 1)


@case("chain_bf16")
def _chain_bf16():
    return chain, [normal((64, 96), BF16, 1), normal((64, 96), BF16, 2)]


@case("chain_f16")
def _chain_f16():
    return chain, [normal((64, 96), F16, 3), normal((64, 96), F16, 4)]


@case("softmax_bf16")
def _softmax_bf16():
    return (lambda x: jax.nn.softmax(x, axis=-1)), [normal((32, 128), BF16, 5, 3.0)]


@case("softmax_f16")
def _softmax_f16():
    return (lambda x: jax.nn.softmax(x, axis=-1)), [normal((32, 128), F16, 6, 3.0)]


def layernorm(x, g, b):
    m = x.mean(-1, keepdims=True)
    v = ((x - m) ** 2).mean(-1, keepdims=True)
    return (x - m) * lax.rsqrt(v + 1e-5) * g + b


@case("layernorm_bf16")
def _layernorm_bf16():
    return layernorm, [normal((32, 128), BF16, 7, 2.0), normal((128,), BF16, 8), normal((128,), BF16, 9)]


@case("gelu_bf16")
def _gelu_bf16():
    return (lambda x: jax.nn.gelu(x, approximate=True)), [normal((64, 96), BF16, 10, 2.0)]


@case("gelu_f16")
def _gelu_f16():
    return (lambda x: jax.nn.gelu(x, approximate=True)), [normal((64, 96), F16, 11, 2.0)]


def mlp(x, w1, b1, w2, b2):
    h = jax.nn.relu(x @ w1 + b1)
    return jnp.tanh(h @ w2 + b2)


def mlp_args(dt, seed):
    """`mlp`'s x, w1, b1, w2, b2 of type `dt`, seeded `seed`, `seed + 1`, ..."""
    return [
        normal((16, 64), dt, seed),
        normal((64, 128), dt, seed + 1, 0.125),
        normal((128,), dt, seed + 2, 0.1),
        normal((128, 32), dt, seed + 3, 0.1),
        normal((32,), dt, seed + 4, 0.1),
    ]


@case("mlp_bf16")
def _mlp_bf16():
    return mlp, mlp_args(BF16, 12)


@case("mlp_f16")
def _mlp_f16():
    return mlp, mlp_args(F16, 17)


def mlp_logits(x, w1, b1, w2):
    # The bf16 logits widened for a float32 loss, as mixed-precision training
    # code does (no f32 transcendental after them: those differ by ulps).
    h = jax.nn.relu(x @ w1 + b1)
    return (h @ w2).astype(jnp.float32) * 0.5


@case("mlp_logits_bf16")
def _mlp_logits_bf16():
    return mlp_logits, [
        normal((16, 64), BF16, 25),
        normal((64, 128), BF16, 26, 0.125),
        normal((128,), BF16, 27, 0.1),
        normal((128, 32), BF16, 28, 0.1),
    ]


@case("widened_products_bf16")
def _widened_bf16():
    # bf16 results converted to f32 right away, and through data movement.
    def f(x, y):
        a = (x * y).astype(jnp.float32)
        b = jnp.sqrt(jnp.abs(x) + y * y).astype(jnp.float32)
        c = (x * y).T.astype(jnp.float32)
        return a + b, c

    return f, [normal((32, 48), BF16, 29), normal((32, 48), BF16, 30)]


@case("reduce_sum_bf16")
def _reduce_bf16():
    # A reduction kept in bf16 (lax.reduce, not jnp.sum, which accumulates in f32).
    return (lambda x: lax.reduce(x * x, np.array(0, BF16), lax.add, (1,))), [normal((32, 256), BF16, 22)]


@case("scale_divide_bf16")
def _scale_bf16():
    # Division by a constant and by a broadcast value.
    return (lambda x, s: (x / 3.0) * 7.0 + x / s[:, None]), [normal((32, 64), BF16, 23), normal((32,), BF16, 24)]


def write_case(name, f, args):
    args = [np.asarray(a) for a in args]
    module, optimized, outs = run_jitted(f, args)
    folder = os.path.join(OUT, name)
    if os.path.isdir(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    meta = case_meta(name, args, outs, rtol=0.0, atol=0.0)
    write_files(folder, module, optimized, args, outs, meta)


def main():
    os.makedirs(OUT, exist_ok=True)
    for name, build in CASES:
        f, args = build()
        write_case(name, f, args)
        print(name)


if __name__ == "__main__":
    main()
