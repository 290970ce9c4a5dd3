#!/usr/bin/env python3
"""A second set of model programs written apart from the repository's own
sets, to look for cliffs neither they nor gen_outside_models.py show: a ViT
block (16x16 patches, 197 tokens), an LSTM scan and a GRU's gradient, a
ConvNeXt block (7x7 depthwise), an LM head with cross-entropy over 32000
classes, an attention backward pass, a Gaussian-process solve (Cholesky),
a k-means step, bilinear resizing, an int8 convolution, f16 attention, u8
image preprocessing, cummax/cumprod, a bf16 3-D convolution, a three-index
einsum, FFT correlation, top-k sampling, dropout, a histogram by
searchsorted, argsort of pairs, a c64 product, KV-cache decoding in a
fori_loop, a bf16 einsum with f32 accumulation, bf16 statistics, a 2-D
scatter-max and a bf16 layernorm's gradient.

Writes NAME.hlo and NAME.json (compare_xla.py's argument specs) to the
directory given; then
  python3 bench/compare_xla.py --bench-dir DIR --iters 5 --rounds 2
(XLA CPU crashes running gp_solve's text, whose LAPACK custom calls the
text-compiled path lacks: time it with --only for the others.)
"""
import os
import sys

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from gen_models import arg, write_models  # noqa: E402

OUT = sys.argv[1] if len(sys.argv) > 1 else "/tmp/cliff_models"


def ln(x, g, b):
    m = x.mean(-1, keepdims=True); v = ((x-m)**2).mean(-1, keepdims=True)
    return (x-m)*lax.rsqrt(v+1e-5)*g + b

def vit_block(img, wp, g1, b1, wqkv, wo, g2, b2, w1, w2):
    p = lax.conv_general_dilated(img, wp, (16,16), "VALID", dimension_numbers=("NHWC","HWIO","NHWC"))
    B = p.shape[0]; x = p.reshape(B, -1, p.shape[-1])
    x = jnp.concatenate([jnp.zeros((B,1,x.shape[-1]), x.dtype), x], 1)  # 197 tokens
    h = 6; d = x.shape[-1]; hd = d//h
    y = ln(x, g1, b1)
    qkv = (y @ wqkv).reshape(B, -1, 3, h, hd)
    q, k, v = qkv[:,:,0], qkv[:,:,1], qkv[:,:,2]
    s = jnp.einsum("bqhd,bkhd->bhqk", q, k)/np.sqrt(hd)
    o = jnp.einsum("bhqk,bkhd->bqhd", jax.nn.softmax(s,-1), v).reshape(B,-1,d)
    x = x + o @ wo
    return x + jax.nn.gelu(ln(x, g2, b2) @ w1) @ w2

def lstm(xs, wx, wh, b):
    def step(c_h, x):
        c, h = c_h
        z = x @ wx + h @ wh + b
        i, f, g, o = jnp.split(z, 4, -1)
        c = jax.nn.sigmoid(f)*c + jax.nn.sigmoid(i)*jnp.tanh(g)
        h = jax.nn.sigmoid(o)*jnp.tanh(c)
        return (c, h), h
    B = xs.shape[1]; H = wh.shape[0]
    _, hs = lax.scan(step, (jnp.zeros((B,H)), jnp.zeros((B,H))), xs)
    return hs

def gru_grad(xs, wx, wh):
    def loss(wx, wh):
        def step(h, x):
            zr = jax.nn.sigmoid(x @ wx[:, :2*wh.shape[0]] + h @ wh[:, :2*wh.shape[0]])
            z, r = jnp.split(zr, 2, -1)
            n = jnp.tanh(x @ wx[:, 2*wh.shape[0]:] + (r*h) @ wh[:, 2*wh.shape[0]:])
            h = (1-z)*n + z*h
            return h, h
        _, hs = lax.scan(step, jnp.zeros((xs.shape[1], wh.shape[0])), xs)
        return (hs**2).mean()
    return jax.grad(loss, argnums=(0,1))(wx, wh)

def convnext_block(x, wd, g, b, w1, w2):
    C = x.shape[-1]
    y = lax.conv_general_dilated(x, wd, (1,1), "SAME", dimension_numbers=("NHWC","HWIO","NHWC"), feature_group_count=C)
    y = ln(y, g, b)
    y = jax.nn.gelu(y @ w1, approximate=False) @ w2
    return x + y

def lm_head_xent(x, w, labels):
    logits = x @ w
    logp = jax.nn.log_softmax(logits, -1)
    return -jnp.take_along_axis(logp, labels[:, None], 1).mean()

def attn_bwd(q, k, v):
    def f(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k)/8.0
        return (jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)**2).sum()
    return jax.grad(f, argnums=(0,1,2))(q, k, v)

def gp_solve(x, y):
    d = ((x[:, None, :] - x[None, :, :])**2).sum(-1)
    K = jnp.exp(-0.5*d) + 1e-2*jnp.eye(x.shape[0])
    L = jnp.linalg.cholesky(K)
    a = jax.scipy.linalg.cho_solve((L, True), y)
    return a, jnp.log(jnp.diagonal(L)).sum()

def kmeans_step(x, c):
    d = (x*x).sum(-1, keepdims=True) - 2*x@c.T + (c*c).sum(-1)
    a = jnp.argmin(d, -1)
    s = jax.ops.segment_sum(x, a, c.shape[0]); n = jax.ops.segment_sum(jnp.ones(x.shape[0]), a, c.shape[0])
    return s / jnp.maximum(n, 1)[:, None]

def resize_up(img):
    return jax.image.resize(img, (img.shape[0], img.shape[1]*2, img.shape[2]*2, img.shape[3]), "bilinear")

def int8_conv(x, w):
    return lax.conv_general_dilated(x, w, (1,1), "SAME", dimension_numbers=("NHWC","HWIO","NHWC"), preferred_element_type=jnp.int32)

def f16_attn(q, k, v):
    s = jnp.einsum("bhqd,bhkd->bhqk", q, k)/jnp.float16(8)
    return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, -1), v)

def u8_preproc(img, mean, std):
    x = (img.astype(jnp.float32)/255.0 - mean)/std
    return x.transpose(0, 3, 1, 2)

def cummax_prod(x):
    return lax.cummax(x, axis=1), lax.cumprod(1+0.01*x, axis=1)

def conv3d_bf16(x, w):
    return lax.conv_general_dilated(x, w, (1,1,1), "SAME", dimension_numbers=("NDHWC","DHWIO","NDHWC"))

def einsum3(a, b):
    return jnp.einsum("bijk,bjkl->bil", a, b)

def fft_c64(x):
    return jnp.fft.ifft(jnp.fft.fft(x, axis=-1) * jnp.conj(jnp.fft.fft(x[:, ::-1], axis=-1)), axis=-1)

def topk_sample(logits):
    v, i = lax.top_k(logits, 50)
    return jax.nn.softmax(v, -1), i

def dropout_mlp(x, w, key):
    h = jax.nn.relu(x @ w)
    keep = jax.random.bernoulli(jax.random.wrap_key_data(key), 0.9, h.shape)
    return jnp.where(keep, h/0.9, 0)

def histo(x, edges):
    idx = jnp.searchsorted(edges, x)
    return jnp.zeros(edges.shape[0]+1, jnp.int32).at[idx].add(1)

def argsort_pairs(k, v):
    i = jnp.argsort(k, axis=-1)
    return jnp.take_along_axis(v, i, -1)

def c64_matmul(a, b):
    return a @ b

def kv_decode(cache_k, cache_v, q0, wq):
    T = cache_k.shape[1]
    def body(t, st):
        ck, cv, q = st
        ck = lax.dynamic_update_slice(ck, q[:, None, :], (0, t, 0))
        cv = lax.dynamic_update_slice(cv, jnp.tanh(q)[:, None, :], (0, t, 0))
        s = jnp.einsum("bd,btd->bt", q, ck)
        s = jnp.where(jnp.arange(T)[None] <= t, s, -1e9)
        o = jnp.einsum("bt,btd->bd", jax.nn.softmax(s, -1), cv)
        return ck, cv, jnp.tanh(o @ wq)
    return lax.fori_loop(0, 64, body, (cache_k, cache_v, q0))

def mixed_einsum_bf16(a, b):
    return jnp.einsum("bqd,kd->bqk", a, b, preferred_element_type=jnp.float32)

def mean_var_bf16(x):
    x32 = x.astype(jnp.float32)
    return x32.mean((0, 1, 2)), x32.var((0, 1, 2))

def scatter_max_2d(x, idx, upd):
    return x.at[idx[:, 0], idx[:, 1]].max(upd)

def layernorm_bwd_bf16(x, g, b):
    def f(x, g, b):
        xf = x.astype(jnp.float32)
        return (ln(xf, g, b)**2).sum()
    return jax.grad(f, argnums=(0,1,2))(x, g, b)

M = {
 "vit_block": (vit_block, [arg("float32",(4,224,224,3)), arg("float32",(16,16,3,384),-.05,.05), arg("float32",(384,),.5,1.5), arg("float32",(384,),-.1,.1), arg("float32",(384,1152),-.05,.05), arg("float32",(384,384),-.05,.05), arg("float32",(384,),.5,1.5), arg("float32",(384,),-.1,.1), arg("float32",(384,1536),-.05,.05), arg("float32",(1536,384),-.03,.03)]),
 "lstm_scan": (lstm, [arg("float32",(64,32,128)), arg("float32",(128,1024),-.1,.1), arg("float32",(256,1024),-.1,.1), arg("float32",(1024,),-.1,.1)]),
 "gru_grad": (gru_grad, [arg("float32",(32,16,64)), arg("float32",(64,384),-.1,.1), arg("float32",(128,384),-.1,.1)]),
 "convnext_block": (convnext_block, [arg("float32",(4,28,28,192)), arg("float32",(7,7,1,192),-.1,.1), arg("float32",(192,),.5,1.5), arg("float32",(192,),-.1,.1), arg("float32",(192,768),-.05,.05), arg("float32",(768,192),-.03,.03)]),
 "lm_head_xent": (lm_head_xent, [arg("float32",(256,512)), arg("float32",(512,32000),-.05,.05), arg("int32",(256,),0,32000)]),
 "attn_bwd": (attn_bwd, [arg("float32",(2,4,512,64)), arg("float32",(2,4,512,64)), arg("float32",(2,4,512,64))]),
 "gp_solve": (gp_solve, [arg("float32",(512,4)), arg("float32",(512,3))]),
 "kmeans_step": (kmeans_step, [arg("float32",(20000,32)), arg("float32",(64,32))]),
 "resize_up": (resize_up, [arg("float32",(4,64,64,32))]),
 "int8_conv": (int8_conv, [arg("int8",(4,32,32,64),-127,127), arg("int8",(3,3,64,64),-127,127)]),
 "f16_attn": (f16_attn, [arg("float16",(2,8,256,64)), arg("float16",(2,8,256,64)), arg("float16",(2,8,256,64))]),
 "u8_preproc": (u8_preproc, [arg("uint8",(16,224,224,3),0,255), arg("float32",(3,),.4,.5), arg("float32",(3,),.2,.3)]),
 "cummax_prod": (cummax_prod, [arg("float32",(64,4096))]),
 "conv3d_bf16": (conv3d_bf16, [arg("bfloat16",(2,8,32,32,32)), arg("bfloat16",(3,3,3,32,32),-.1,.1)]),
 "einsum3": (einsum3, [arg("float32",(8,64,32,16)), arg("float32",(8,32,16,128))]),
 "fft_c64": (fft_c64, [arg("complex64",(64,4096))]),
 "topk_sample": (topk_sample, [arg("float32",(64,32000))]),
 "dropout_mlp": (dropout_mlp, [arg("float32",(512,512)), arg("float32",(512,2048),-.05,.05), arg("uint32",(2,),0,1<<30)]),
 "histo": (histo, [arg("float32",(1000000,)), arg("float32",(255,),-1,1)]),
 "argsort_pairs": (argsort_pairs, [arg("float32",(128,8192)), arg("int32",(128,8192),0,100000)]),
 "c64_matmul": (c64_matmul, [arg("complex64",(256,256)), arg("complex64",(256,256))]),
 "kv_decode": (kv_decode, [arg("float32",(4,128,128)), arg("float32",(4,128,128)), arg("float32",(4,128)), arg("float32",(128,128),-.1,.1)]),
 "mixed_einsum_bf16": (mixed_einsum_bf16, [arg("bfloat16",(8,256,128)), arg("bfloat16",(1024,128))]),
 "mean_var_bf16": (mean_var_bf16, [arg("bfloat16",(16,64,64,128))]),
 "scatter_max_2d": (scatter_max_2d, [arg("float32",(512,512)), arg("int32",(50000,2),0,512), arg("float32",(50000,))]),
 "layernorm_bwd_bf16": (layernorm_bwd_bf16, [arg("bfloat16",(2048,1024)), arg("float32",(1024,),.5,1.5), arg("float32",(1024,),-.1,.1)]),
}
write_models(M, OUT)
