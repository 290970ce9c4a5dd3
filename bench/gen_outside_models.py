#!/usr/bin/env python3
"""Model programs written apart from the repository's own sets, to look for
cliffs the sets do not show: a bf16 llama block, top-2 mixture of experts, a
VAE training step, an int8 MLP, a small U-Net, an n-body fori_loop, greedy
decoding in a while loop, an f16 MLP with layernorm, segment statistics, 1-D
pooling with cumlogsumexp, an FFT convolution, batch-norm training, sort-based
unique counts and a bf16 convolution.

Writes NAME.hlo and NAME.json (compare_xla.py's argument specs) to the
directory given (default /tmp/outside_models); then
  python3 bench/compare_xla.py --bench-dir /tmp/outside_models --iters 5 --rounds 2
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_models import arg, write_models  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/outside_models"


def rmsnorm(x, g):
    xf = x.astype(jnp.float32)
    return (xf * lax.rsqrt(jnp.mean(xf * xf, -1, keepdims=True) + 1e-6) * g).astype(x.dtype)

def rope(x):
    t, d = x.shape[-2], x.shape[-1]
    inv = 1.0 / (10000 ** (jnp.arange(0, d, 2) / d))
    ang = jnp.arange(t)[:, None] * inv[None, :]
    c, s = jnp.cos(ang).astype(x.dtype), jnp.sin(ang).astype(x.dtype)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return jnp.stack([x1 * c - x2 * s, x1 * s + x2 * c], -1).reshape(x.shape)

def llama_block_bf16(x, g1, wq, wk, wv, wo, g2, w1, w3, w2):
    b, t, d = x.shape; h = 8; hd = d // h
    y = rmsnorm(x, g1)
    q = (y @ wq).reshape(b, t, h, hd).transpose(0, 2, 1, 3)
    k = (y @ wk).reshape(b, t, h, hd).transpose(0, 2, 1, 3)
    v = (y @ wv).reshape(b, t, h, hd).transpose(0, 2, 1, 3)
    q, k = rope(q), rope(k)
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k, preferred_element_type=jnp.float32) / np.sqrt(hd)
    mask = jnp.tril(jnp.ones((t, t), bool))
    s = jnp.where(mask, s, -1e9)
    p = jax.nn.softmax(s, -1).astype(x.dtype)
    o = jnp.einsum("bhqk,bhkd->bhqd", p, v).transpose(0, 2, 1, 3).reshape(b, t, d)
    x = x + o @ wo
    y = rmsnorm(x, g2)
    return x + (jax.nn.silu(y @ w1) * (y @ w3)) @ w2

def moe_top2(x, wg, w1, w2):
    # x [T, D], wg [D, E], w1 [E, D, F], w2 [E, F, D]
    logits = x @ wg
    vals, idx = lax.top_k(logits, 2)
    gates = jax.nn.softmax(vals, -1)
    e = wg.shape[1]
    disp = jax.nn.one_hot(idx, e) * gates[..., None]   # T,2,E
    comb = disp.sum(1)                                  # T,E
    xe = jnp.einsum("te,td->etd", (comb > 0).astype(x.dtype), x)
    h = jax.nn.gelu(jnp.einsum("etd,edf->etf", xe, w1))
    ye = jnp.einsum("etf,efd->etd", h, w2)
    return jnp.einsum("etd,te->td", ye, comb)

def vae_train(x, we, wmu, wlv, wd1, wd2, key):
    def loss(p):
        we, wmu, wlv, wd1, wd2 = p
        h = jax.nn.relu(x @ we)
        mu, lv = h @ wmu, h @ wlv
        eps = jax.random.normal(jax.random.wrap_key_data(key), mu.shape)
        z = mu + jnp.exp(0.5 * lv) * eps
        r = jax.nn.sigmoid(jax.nn.relu(z @ wd1) @ wd2)
        bce = -jnp.sum(x * jnp.log(r + 1e-7) + (1 - x) * jnp.log(1 - r + 1e-7))
        kl = -0.5 * jnp.sum(1 + lv - mu ** 2 - jnp.exp(lv))
        return (bce + kl) / x.shape[0]
    p = (we, wmu, wlv, wd1, wd2)
    l, g = jax.value_and_grad(loss)(p)
    return l, [a - 1e-3 * b for a, b in zip(p, g)]

def int8_mlp(x, w1q, s1, w2q, s2):
    xq = jnp.clip(jnp.round(x * 32), -127, 127).astype(jnp.int8)
    h = lax.dot(xq, w1q, preferred_element_type=jnp.int32).astype(jnp.float32) * s1 / 32
    h = jax.nn.relu(h)
    hq = jnp.clip(jnp.round(h * 8), -127, 127).astype(jnp.int8)
    return lax.dot(hq, w2q, preferred_element_type=jnp.int32).astype(jnp.float32) * s2 / 8

def unet_small(x, w1, w2, w3, wt, w4):
    c = lambda x, w, s=1: lax.conv_general_dilated(x, w, (s, s), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    a = jax.nn.relu(c(x, w1))
    b = jax.nn.relu(c(a, w2, 2))
    b = jax.nn.relu(c(b, w3))
    u = lax.conv_transpose(b, wt, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
    return c(jnp.concatenate([a, u], -1), w4)

def nbody(pos, vel, mass):
    def step(i, s):
        p, v = s
        d = p[None, :, :] - p[:, None, :]
        r2 = jnp.sum(d * d, -1) + 1e-3
        a = jnp.sum(d * (mass[None, :] / (r2 * jnp.sqrt(r2)))[..., None], 1)
        v = v + 1e-3 * a
        return p + 1e-3 * v, v
    return lax.fori_loop(0, 200, step, (pos, vel))

def greedy_decode(emb, w, h0):
    def body(c):
        i, h, toks = c
        tok = toks[i]
        h = jnp.tanh(emb[tok] + h @ w)
        logits = h @ emb.T
        nt = jnp.argmax(logits).astype(jnp.int32)
        return i + 1, h, toks.at[i + 1].set(nt)
    toks = jnp.zeros(65, jnp.int32)
    _, h, toks = lax.while_loop(lambda c: c[0] < 64, body, (0, h0, toks))
    return h, toks

def f16_mlp_ln(x, w1, w2, g, b):
    m = x.mean(-1, keepdims=True); v = ((x - m) ** 2).mean(-1, keepdims=True)
    y = (x - m) * lax.rsqrt(v + 1e-5) * g + b
    return x + jax.nn.gelu(y @ w1) @ w2

def segment_stats(x, seg):
    n = 1000
    mx = jax.ops.segment_max(x, seg, n)
    sm = jax.ops.segment_sum(x, seg, n)
    ct = jax.ops.segment_sum(jnp.ones_like(seg, jnp.float32), seg, n)
    return mx, sm / jnp.maximum(ct, 1)[:, None]

def pool1d_logsumexp(x):
    m = lax.reduce_window(x, -jnp.inf, lax.max, (1, 5, 1), (1, 2, 1), "SAME")
    a = lax.reduce_window(x, 0.0, lax.add, (1, 5, 1), (1, 2, 1), "SAME") / 5
    return jax.nn.logsumexp(m + a, axis=1), lax.cumlogsumexp(x, axis=1)

def rfft2_conv(img, ker):
    f = jnp.fft.rfft2(img) * jnp.fft.rfft2(ker, s=img.shape[-2:])
    return jnp.fft.irfft2(f, s=img.shape[-2:])

def batchnorm_train(x, w, g, b):
    def loss(p):
        w, g, b = p
        h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NCHW", "OIHW", "NCHW"))
        m = h.mean((0, 2, 3), keepdims=True); v = h.var((0, 2, 3), keepdims=True)
        h = (h - m) / jnp.sqrt(v + 1e-5) * g[None, :, None, None] + b[None, :, None, None]
        return jnp.mean(jax.nn.relu(h) ** 2)
    return jax.grad(loss)((w, g, b))

def cumsum_sort_unique(x):
    s = jnp.sort(x, axis=-1)
    new = jnp.concatenate([jnp.ones_like(s[:, :1], bool), s[:, 1:] != s[:, :-1]], -1)
    return jnp.cumsum(new.astype(jnp.int32), -1), jnp.argsort(-x, axis=-1)[:, :16]

def bf16_conv_bn(x, w, g):
    h = lax.conv_general_dilated(x, w, (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"), preferred_element_type=jnp.float32)
    h = h * g
    return jax.nn.relu(h).astype(jnp.bfloat16)

M = {
 "llama_block_bf16": (llama_block_bf16, [arg("bfloat16",(2,256,512)), arg("float32",(512,),0.5,1.5), arg("bfloat16",(512,512),-.05,.05), arg("bfloat16",(512,512),-.05,.05), arg("bfloat16",(512,512),-.05,.05), arg("bfloat16",(512,512),-.05,.05), arg("float32",(512,),0.5,1.5), arg("bfloat16",(512,1408),-.05,.05), arg("bfloat16",(512,1408),-.05,.05), arg("bfloat16",(1408,512),-.03,.03)]),
 "moe_top2": (moe_top2, [arg("float32",(512,256)), arg("float32",(256,8),-.1,.1), arg("float32",(8,256,512),-.05,.05), arg("float32",(8,512,256),-.05,.05)]),
 "vae_train": (vae_train, [arg("float32",(128,784),0,1), arg("float32",(784,400),-.05,.05), arg("float32",(400,20),-.05,.05), arg("float32",(400,20),-.05,.05), arg("float32",(20,400),-.1,.1), arg("float32",(400,784),-.05,.05), arg("uint32",(2,),0,1<<30)]),
 "int8_mlp": (int8_mlp, [arg("float32",(256,1024)), arg("int8",(1024,2048),-127,127), arg("float32",(2048,),0.001,0.01), arg("int8",(2048,512),-127,127), arg("float32",(512,),0.001,0.01)]),
 "unet_small": (unet_small, [arg("float32",(4,64,64,16)), arg("float32",(3,3,16,32),-.1,.1), arg("float32",(3,3,32,64),-.1,.1), arg("float32",(3,3,64,64),-.05,.05), arg("float32",(2,2,64,32),-.1,.1), arg("float32",(3,3,64,16),-.05,.05)]),
 "nbody": (nbody, [arg("float32",(128,3)), arg("float32",(128,3)), arg("float32",(128,),0.1,1)]),
 "greedy_decode": (greedy_decode, [arg("float32",(4096,256),-.1,.1), arg("float32",(256,256),-.1,.1), arg("float32",(256,))]),
 "f16_mlp_ln": (f16_mlp_ln, [arg("float16",(512,768)), arg("float16",(768,3072),-.03,.03), arg("float16",(3072,768),-.02,.02), arg("float16",(768,),0.5,1.5), arg("float16",(768,),-.1,.1)]),
 "segment_stats": (segment_stats, [arg("float32",(100000,32)), arg("int32",(100000,),0,1000)]),
 "pool1d_logsumexp": (pool1d_logsumexp, [arg("float32",(32,2048,64))]),
 "rfft2_conv": (rfft2_conv, [arg("float32",(16,256,256)), arg("float32",(16,15,15))]),
 "batchnorm_train": (batchnorm_train, [arg("float32",(16,32,32,32)), arg("float32",(64,32,3,3),-.1,.1), arg("float32",(64,),0.5,1.5), arg("float32",(64,),-.1,.1)]),
 "cumsum_sort_unique": (cumsum_sort_unique, [arg("int32",(256,4096),0,1000)]),
 "bf16_conv_bn": (bf16_conv_bn, [arg("bfloat16",(8,56,56,64)), arg("bfloat16",(3,3,64,64),-.1,.1), arg("float32",(64,),0.5,1.5)]),
}
write_models(M, OUT)
