#!/usr/bin/env python3
"""Model programs for the scale rule of `hlorun compare`, with XLA CPU's outputs.

Each case is a whole model step written in JAX (a GPT-2 style block whose
causal mask writes -inf before the softmax, a post-norm transformer layer, a
CNN, an LSTM over `lax.scan`, a training step with its gradients), lowered to
HLO text and run by XLA CPU on seeded arguments. The case folders (the format
of `tests/conformance/README.md`) go to `tests/model_compare/`;
`tests/tests/model_compare.rs` checks that `compare` with its defaults passes
the Host against the f64 shadow reference and against XLA CPU's outputs, and
still catches one element off by 1%.

The sizes are small so the default test run stays quick. `--large DIR` writes
the same models at full size (sequence 2048, GPT-2 width 768) to DIR instead;
check one with
  hlorun compare DIR/NAME/module.hlo DIR/NAME/arg*.npy --platform host
  hlorun compare DIR/NAME/module.hlo DIR/NAME/arg*.npy --platform host \\
      --expected DIR/NAME/out*.npy
(list the arg/out files in numeric order when there are ten or more).

Requires: pip install jax (CPU). Run from anywhere:
  python3 scripts/gen_model_compare_cases.py [--large DIR]
"""

import os
import shutil
import sys
import zlib

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax import lax  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import case_meta, run_jitted, write_files  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "model_compare")


def layernorm(x, g, b, eps=1e-5):
    mu = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
    return (x - mu) * lax.rsqrt(var + eps) * g + b


def causal_attention(x, w_qkv, w_o, heads, mask_value):
    bsz, seq, width = x.shape
    qkv = x @ w_qkv
    q, k, v = jnp.split(qkv, 3, axis=-1)
    split = lambda t: t.reshape(bsz, seq, heads, width // heads).transpose(0, 2, 1, 3)
    q, k, v = split(q), split(k), split(v)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(width // heads).astype(np.float32)
    tril = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(tril, scores, mask_value)
    att = jax.nn.softmax(scores, axis=-1)
    out = (att @ v).transpose(0, 2, 1, 3).reshape(bsz, seq, width)
    return out @ w_o


def gpt2_block(x, g1, b1, w_qkv, w_o, g2, b2, w_fc, w_proj, heads):
    h = x + causal_attention(layernorm(x, g1, b1), w_qkv, w_o, heads, -jnp.inf)
    return h + jax.nn.gelu(layernorm(h, g2, b2) @ w_fc) @ w_proj


def post_norm_layer(x, w_qkv, w_o, g1, b1, w1, w2, g2, b2, heads):
    # Masked with a large finite value, the other common way.
    h = layernorm(x + causal_attention(x, w_qkv, w_o, heads, -1e9), g1, b1)
    return layernorm(h + jax.nn.relu(h @ w1) @ w2, g2, b2)


def cnn(x, w1, w2, wf):
    conv = lambda x, w: lax.conv_general_dilated(
        x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    pool = lambda x: lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")
    h = pool(jax.nn.relu(conv(x, w1)))
    h = pool(jax.nn.relu(conv(h, w2)))
    return jax.nn.softmax(h.reshape(h.shape[0], -1) @ wf, axis=-1)


def lstm(xs, wx, wh, b, h0, c0):
    def cell(carry, x):
        h, c = carry
        z = x @ wx + h @ wh + b
        i, f, g, o = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(g)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    (h, c), hs = lax.scan(cell, (h0, c0), xs)
    return hs, h, c


def train_step(x, labels, g1, b1, w_qkv, w_o, g2, b2, w_fc, w_proj, w_head, heads):
    params = (g1, b1, w_qkv, w_o, g2, b2, w_fc, w_proj, w_head)

    def loss(params):
        g1, b1, w_qkv, w_o, g2, b2, w_fc, w_proj, w_head = params
        h = gpt2_block(x, g1, b1, w_qkv, w_o, g2, b2, w_fc, w_proj, heads)
        logp = jax.nn.log_softmax(h @ w_head, axis=-1)
        return -jnp.mean(jnp.take_along_axis(logp, labels[..., None], axis=-1))

    l, grads = jax.value_and_grad(loss)(params)
    return (l,) + tuple(p - 0.1 * g for p, g in zip(params, grads))


def weights(rng, *shapes, scale=None):
    out = []
    for s in shapes:
        fan_in = s[0] if len(s) > 1 else 1
        k = scale if scale is not None else 1.0 / np.sqrt(fan_in)
        out.append((rng.standard_normal(s) * k).astype(np.float32))
    return out


def cases(large):
    seq, width, heads = (2048, 768, 12) if large else (64, 64, 4)
    rng = lambda name: np.random.default_rng(zlib.crc32(name.encode()))
    ones = lambda n: np.ones((n,), np.float32)
    zeros = lambda n: np.zeros((n,), np.float32)

    r = rng("gpt2_block")
    x = r.standard_normal((1, seq, width)).astype(np.float32)
    w_qkv, w_o, w_fc, w_proj = weights(r, (width, 3 * width), (width, width), (width, 4 * width), (4 * width, width))
    yield ("gpt2_block", lambda *a: gpt2_block(*a, heads=heads),
           [x, ones(width), zeros(width), w_qkv, w_o, ones(width), zeros(width), w_fc, w_proj])

    r = rng("post_norm_layer")
    x = r.standard_normal((2, seq // 2, width)).astype(np.float32)
    w_qkv, w_o, w1, w2 = weights(r, (width, 3 * width), (width, width), (width, 2 * width), (2 * width, width))
    yield ("post_norm_layer", lambda *a: post_norm_layer(*a, heads=heads),
           [x, w_qkv, w_o, ones(width), zeros(width), w1, w2, ones(width), zeros(width)])

    r = rng("cnn")
    side = 64 if large else 16
    x = r.standard_normal((2, side, side, 3)).astype(np.float32)
    w1, w2 = weights(r, (3, 3, 3, 8), (3, 3, 8, 16), scale=0.3)
    (wf,) = weights(r, ((side // 4) ** 2 * 16, 10))
    yield ("cnn", cnn, [x, w1, w2, wf])

    r = rng("lstm")
    steps, hidden = (256, 256) if large else (16, 32)
    xs = r.standard_normal((steps, 2, 8)).astype(np.float32)
    wx, wh = weights(r, (8, 4 * hidden), (hidden, 4 * hidden))
    yield ("lstm", lstm, [xs, wx, wh, zeros(4 * hidden), zeros(hidden).reshape(1, -1).repeat(2, 0),
                          zeros(hidden).reshape(1, -1).repeat(2, 0)])

    r = rng("train_step")
    tseq, twidth, vocab = (512, 256, 512) if large else (32, 32, 48)
    x = r.standard_normal((2, tseq, twidth)).astype(np.float32)
    labels = r.integers(0, vocab, size=(2, tseq)).astype(np.int32)
    w_qkv, w_o, w_fc, w_proj, w_head = weights(
        r, (twidth, 3 * twidth), (twidth, twidth), (twidth, 4 * twidth), (4 * twidth, twidth), (twidth, vocab))
    yield ("train_step", lambda *a: train_step(*a, heads=4),
           [x, labels, ones(twidth), zeros(twidth), w_qkv, w_o, ones(twidth), zeros(twidth),
            w_fc, w_proj, w_head])


def main():
    large = None
    if sys.argv[1:2] == ["--large"]:
        large = sys.argv[2]
    out = large or OUT
    os.makedirs(out, exist_ok=True)
    for name, f, args in cases(large is not None):
        module, optimized, outs = run_jitted(f, args)
        folder = os.path.join(out, name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        os.makedirs(folder)
        write_files(folder, module, optimized, args, outs, case_meta(name, args, outs, 1e-4, 1e-5))
        print("%s: %d argument(s), %d output(s)" % (name, len(args), len(outs)))


if __name__ == "__main__":
    main()
