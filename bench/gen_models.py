#!/usr/bin/env python3
"""Whole-model benchmark programs, written in JAX and lowered to HLO text.

Each program is what a JAX user runs: a training or inference step of a model,
not one operation. `bench/compare_xla.py --bench-dir bench/models` times them
on hlorun's platforms and XLA CPU side by side. For every program this writes
`bench/models/NAME.hlo` (`jax.jit(f).lower(...).as_text(dialect="hlo")`) and
`NAME.json` (the argument spec compare_xla.py draws inputs from: dtype, shape,
range).

Requires: pip install jax (CPU). Run from anywhere:
  python3 bench/gen_models.py
"""

import json
import os

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "models")


def arg(dtype, shape, lo=-1.0, hi=1.0):
    return {"dtype": dtype, "shape": list(shape), "lo": lo, "hi": hi}


def conv(x, w, stride=1, groups=1):
    return lax.conv_general_dilated(
        x, w, (stride, stride), "SAME",
        dimension_numbers=("NHWC", "HWIO", "NHWC"),
        feature_group_count=groups)


def max_pool(x):
    return lax.reduce_window(x, -jnp.inf, lax.max, (1, 2, 2, 1), (1, 2, 2, 1), "VALID")


def cross_entropy(logits, labels):
    logp = jax.nn.log_softmax(logits)
    return -jnp.mean(jnp.take_along_axis(logp, labels[:, None], axis=1))


# 1. A MobileNet-style block trained one SGD step: a strided 3x3 convolution,
#    a depthwise 3x3 (feature_group_count = channels), a pointwise 1x1, max
#    pooling and a dense classifier; the gradient has the convolutions'
#    backward passes (window dilation, batch_group_count) and select-and-scatter.
def cnn_depthwise_train(x, labels, w1, wd, wp, wf):
    def loss(params):
        w1, wd, wp, wf = params
        h = jax.nn.relu(conv(x, w1, stride=2))
        h = jax.nn.relu(conv(h, wd, groups=h.shape[-1]))
        h = jax.nn.relu(conv(h, wp))
        h = max_pool(h)
        logits = h.reshape(h.shape[0], -1) @ wf
        return cross_entropy(logits, labels)
    params = (w1, wd, wp, wf)
    l, g = jax.value_and_grad(loss)(params)
    return (l,) + tuple(p - 0.01 * d for p, d in zip(params, g))


# 2. Inference through strided convolutions with batch normalization.
def cnn_strided_infer(x, w1, w2, w3, scale, shift):
    h = x
    for w in (w1, w2, w3):
        h = conv(h, w, stride=2)
        mean = jnp.mean(h, axis=(0, 1, 2))
        var = jnp.var(h, axis=(0, 1, 2))
        h = (h - mean) * lax.rsqrt(var + 1e-5) * scale[: h.shape[-1]] + shift[: h.shape[-1]]
        h = jax.nn.relu(h)
    return jnp.mean(h, axis=(1, 2))


# 3. A pre-norm transformer layer, forward and backward (an SGD step).
def transformer_train(x, wq, wk, wv, wo, w1, w2):
    heads = 4

    def layer(params):
        wq, wk, wv, wo, w1, w2 = params
        b, t, d = x.shape

        def norm(h):
            m = jnp.mean(h, -1, keepdims=True)
            v = jnp.var(h, -1, keepdims=True)
            return (h - m) * lax.rsqrt(v + 1e-5)

        h = norm(x)
        q = (h @ wq).reshape(b, t, heads, d // heads)
        k = (h @ wk).reshape(b, t, heads, d // heads)
        v = (h @ wv).reshape(b, t, heads, d // heads)
        s = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // heads)
        mask = jnp.tril(jnp.ones((t, t), bool))
        s = jnp.where(mask, s, -1e9)
        a = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, -1), v).reshape(b, t, d)
        h2 = x + a @ wo
        out = h2 + jax.nn.gelu(norm(h2) @ w1) @ w2
        return jnp.mean(out * out)

    params = (wq, wk, wv, wo, w1, w2)
    l, g = jax.value_and_grad(layer)(params)
    return (l,) + tuple(p - 0.01 * d for p, d in zip(params, g))


# 4. An LSTM over 64 steps with lax.scan (a while loop of small matmuls).
def lstm_scan(xs, h0, c0, wx, wh, b):
    def cell(carry, x):
        h, c = carry
        z = x @ wx + h @ wh + b
        i, f, o, u = jnp.split(z, 4, axis=-1)
        c = jax.nn.sigmoid(f) * c + jax.nn.sigmoid(i) * jnp.tanh(u)
        h = jax.nn.sigmoid(o) * jnp.tanh(c)
        return (h, c), h
    (h, c), hs = lax.scan(cell, (h0, c0), xs)
    return hs, h, c


# 5. A language-model head: logits over a 32000-word vocabulary, log-softmax,
#    the loss at the targets (take_along_axis), greedy argmax and top-8.
def lm_head(x, w, targets):
    logits = x @ w
    logp = jax.nn.log_softmax(logits, axis=-1)
    loss = -jnp.mean(jnp.take_along_axis(logp, targets[:, None], axis=1))
    best = jnp.argmax(logits, axis=-1)
    top_v, top_i = lax.top_k(logits, 8)
    return loss, best, top_v, top_i


# 6. FFT: a spectral filter over a batch of signals and a 2-D transform.
def fft_filter(sig, kernel, img):
    spec = jnp.fft.rfft(sig, axis=-1) * jnp.fft.rfft(kernel, n=sig.shape[-1])
    filtered = jnp.fft.irfft(spec, n=sig.shape[-1], axis=-1)
    power = jnp.abs(jnp.fft.fft2(img)) ** 2
    return filtered, power


# 7. Random numbers: normal noise, dropout masks and a permutation (threefry).
def rng_dropout(key, x):
    k1, k2, k3 = jax.random.split(jax.random.wrap_key_data(key), 3)
    noisy = x + 0.1 * jax.random.normal(k1, x.shape)
    keep = jax.random.bernoulli(k2, 0.9, x.shape)
    dropped = jnp.where(keep, noisy / 0.9, 0.0)
    perm = jax.random.permutation(k3, x.shape[0])
    return dropped[perm]


# 8. A residual block trained one SGD step: 3x3 convolutions at stride 1,
#    batch norm, a skip connection, global average pooling.
def resnet_train(x, labels, w1, w2, w3, wf, g1, b1):
    def bn(h, g, b):
        m = jnp.mean(h, axis=(0, 1, 2))
        v = jnp.var(h, axis=(0, 1, 2))
        return (h - m) * lax.rsqrt(v + 1e-5) * g + b

    def loss(p):
        w1, w2, w3, wf, g1, b1 = p
        h = jax.nn.relu(bn(conv(x, w1), g1, b1))
        r = h
        h = jax.nn.relu(conv(h, w2))
        h = jax.nn.relu(conv(h, w3) + r)
        h = jnp.mean(h, axis=(1, 2))
        return cross_entropy(h @ wf, labels)
    p = (w1, w2, w3, wf, g1, b1)
    l, g = jax.value_and_grad(loss)(p)
    return (l,) + tuple(a - 0.01 * d for a, d in zip(p, g))


# 9. A GRU over 100 steps with lax.scan.
def gru_scan(xs, h0, wx, wh):
    def cell(h, x):
        zx, zh = x @ wx, h @ wh
        r = jax.nn.sigmoid(zx[:, :256] + zh[:, :256])
        z = jax.nn.sigmoid(zx[:, 256:512] + zh[:, 256:512])
        n = jnp.tanh(zx[:, 512:] + r * zh[:, 512:])
        h = (1 - z) * n + z * h
        return h, h
    h, hs = lax.scan(cell, h0, xs)
    return hs, h


# 10. An MLP's gradient and an Adam update of its weights (elementwise-heavy).
def mlp_adam(x, y, w1, w2, m1, m2, v1, v2):
    def loss(p):
        w1, w2 = p
        return jnp.mean((jax.nn.gelu(x @ w1) @ w2 - y) ** 2)
    g1, g2 = jax.grad(loss)((w1, w2))
    out = []
    for w, g, m, v in ((w1, g1, m1, v1), (w2, g2, m2, v2)):
        m = 0.9 * m + 0.1 * g
        v = 0.999 * v + 0.001 * g * g
        out += [w - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v]
    return tuple(out)


# 11. Self-attention inference (8 heads over 256 positions): XLA CPU fuses
#     the two batched products and the softmax between them.
def attention_infer(x, wq, wk, wv, wo):
    b, t, d = x.shape
    heads = 8

    def norm(z):
        m = jnp.mean(z, -1, keepdims=True)
        v = jnp.var(z, -1, keepdims=True)
        return (z - m) * lax.rsqrt(v + 1e-5)
    z = norm(x)
    q, k, v = ((z @ w).reshape(b, t, heads, d // heads) for w in (wq, wk, wv))
    s = jnp.einsum("bthd,bshd->bhts", q, k) / np.sqrt(d // heads)
    a = jnp.einsum("bhts,bshd->bthd", jax.nn.softmax(s, -1), v).reshape(b, t, d)
    return x + a @ wo


# 12. Top-k over a batch of logits, a sort of rows and an argsort.
def topk_sort(x):
    v, i = lax.top_k(x, 16)
    return v, i, jnp.sort(x[:64], axis=-1), jnp.argsort(x[0])


# 13. An embedding bag: rows looked up, summed per bag, then a dense layer.
def embed_bag(table, idx, w):
    return jax.nn.relu(jnp.sum(jnp.take(table, idx, axis=0), axis=1) @ w)


# 14. A transposed convolution (a decoder's upsampling step).
def conv_transpose_up(x, w):
    return jax.nn.relu(lax.conv_transpose(x, w, (2, 2), "SAME",
                                          dimension_numbers=("NHWC", "HWIO", "NHWC")))


MODELS = {
    "cnn_depthwise_train": (cnn_depthwise_train, [
        arg("float32", (16, 64, 64, 16)), arg("int32", (16,), 0, 10),
        arg("float32", (3, 3, 16, 32), -0.2, 0.2), arg("float32", (3, 3, 1, 32), -0.2, 0.2),
        arg("float32", (1, 1, 32, 64), -0.2, 0.2), arg("float32", (16 * 16 * 64, 10), -0.05, 0.05)]),
    "cnn_strided_infer": (cnn_strided_infer, [
        arg("float32", (16, 128, 128, 3)), arg("float32", (3, 3, 3, 32), -0.3, 0.3),
        arg("float32", (3, 3, 32, 64), -0.1, 0.1), arg("float32", (3, 3, 64, 128), -0.1, 0.1),
        arg("float32", (128,), 0.5, 1.5), arg("float32", (128,), -0.1, 0.1)]),
    "transformer_train": (transformer_train, [
        arg("float32", (4, 128, 256)), arg("float32", (256, 256), -0.06, 0.06),
        arg("float32", (256, 256), -0.06, 0.06), arg("float32", (256, 256), -0.06, 0.06),
        arg("float32", (256, 256), -0.06, 0.06), arg("float32", (256, 1024), -0.06, 0.06),
        arg("float32", (1024, 256), -0.03, 0.03)]),
    "lstm_scan": (lstm_scan, [
        arg("float32", (64, 32, 128)), arg("float32", (32, 256)), arg("float32", (32, 256)),
        arg("float32", (128, 1024), -0.1, 0.1), arg("float32", (256, 1024), -0.1, 0.1),
        arg("float32", (1024,), -0.1, 0.1)]),
    "lm_head": (lm_head, [
        arg("float32", (64, 512)), arg("float32", (512, 32000), -0.05, 0.05),
        arg("int32", (64,), 0, 32000)]),
    "fft_filter": (fft_filter, [
        arg("float32", (64, 8192)), arg("float32", (64,)), arg("float32", (256, 256))]),
    "rng_dropout": (rng_dropout, [
        arg("uint32", (2,), 0, 1 << 30), arg("float32", (2048, 512))]),
    "resnet_train": (resnet_train, [
        arg("float32", (16, 32, 32, 32)), arg("int32", (16,), 0, 10),
        arg("float32", (3, 3, 32, 64), -0.1, 0.1), arg("float32", (3, 3, 64, 64), -0.05, 0.05),
        arg("float32", (3, 3, 64, 64), -0.05, 0.05), arg("float32", (64, 10), -0.1, 0.1),
        arg("float32", (64,), 0.5, 1.5), arg("float32", (64,), -0.1, 0.1)]),
    "gru_scan": (gru_scan, [
        arg("float32", (100, 16, 128)), arg("float32", (16, 256)),
        arg("float32", (128, 768), -0.1, 0.1), arg("float32", (256, 768), -0.1, 0.1)]),
    "mlp_adam": (mlp_adam, [
        arg("float32", (256, 512)), arg("float32", (256, 512)),
        arg("float32", (512, 2048), -0.05, 0.05), arg("float32", (2048, 512), -0.02, 0.02),
        arg("float32", (512, 2048), -0.01, 0.01), arg("float32", (2048, 512), -0.01, 0.01),
        arg("float32", (512, 2048), 0.0, 0.01), arg("float32", (2048, 512), 0.0, 0.01)]),
    "attention_infer": (attention_infer, [
        arg("float32", (8, 256, 512)), arg("float32", (512, 512), -0.05, 0.05),
        arg("float32", (512, 512), -0.05, 0.05), arg("float32", (512, 512), -0.05, 0.05),
        arg("float32", (512, 512), -0.05, 0.05)]),
    "topk_sort": (topk_sort, [arg("float32", (256, 32000))]),
    "embed_bag": (embed_bag, [
        arg("float32", (100000, 128)), arg("int32", (512, 32), 0, 100000),
        arg("float32", (128, 256), -0.1, 0.1)]),
    "conv_transpose_up": (conv_transpose_up, [
        arg("float32", (8, 32, 32, 64)), arg("float32", (3, 3, 64, 32), -0.1, 0.1)]),
}


def example(spec):
    dtype = np.dtype(spec["dtype"])
    if np.issubdtype(dtype, np.integer):
        return np.zeros(spec["shape"], dtype)
    return np.zeros(spec["shape"], dtype)


def write_models(models, out):
    """Lowers each `name: (function, argument specs)` of `models` to HLO text
    and writes NAME.hlo and NAME.json (compare_xla.py's argument specs) to
    `out`."""
    os.makedirs(out, exist_ok=True)
    for name, (f, specs) in models.items():
        args = [example(s) for s in specs]
        text = jax.jit(f).lower(*args).as_text(dialect="hlo")
        with open(os.path.join(out, name + ".hlo"), "w") as fh:
            fh.write(text)
        with open(os.path.join(out, name + ".json"), "w") as fh:
            json.dump({"name": name, "args": specs, "jax_version": jax.__version__}, fh, indent=1)
        print(name, len(text), "bytes")


def main():
    write_models(MODELS, OUT)


if __name__ == "__main__":
    main()
