#!/usr/bin/env python3
"""Performance matrix: op class x element type x shape class, hlorun against XLA CPU.

Generates one HLO program per cell from JAX (`jax.jit(f).lower(...)`, HLO
text), then times each cell with the machinery of `bench/compare_xla.py`:
the same inputs for both sides, XLA and `hlorun bench` alternating round by
round, the median of the round medians kept, peak memory from each side's
buffer assignment. Prints every cell, the geometric mean of the
hlorun/XLA ratios, the worst cells, and every cell above 1.25x.

Cells, by op class (`--class NAME` selects classes):
  dot: element types f32, f64, bf16, bf16->f32 and f16, f16->f32 (products
    of 16-bit floats accumulated in f32, via preferred_element_type, and
    without: a 16-bit result), s8->s32, u8->s32 (quantized matmuls), c64;
    shape classes square (512^3), large (512x1024 @ 1024x1024), tall-skinny
    (4096x512 @ 512x16), matrix-vector (1024x1024 @ 1024), vector-matrix
    (1024 @ 1024x1024), batched attention heads (bhqd,bhkd->bhqk, 4x8 heads
    of 128x64), batch dimension in the middle (qhd,khd->hqk), transposed lhs
    (ki,kj->ij) and transposed rhs (ik,jk->ij);
  conv: 1-D (dilated causal, strided), 2-D NHWC and NCHW (3x3, 1x1, 7x7
    stride 2, stride 2, depthwise, 4 groups, transposed via lhs dilation,
    rhs dilation, bf16 with and without f32 accumulation, f64), both
    gradients (the depthwise kernel gradient is batch-grouped), 3-D;
  reduce: sums over the minor, major, middle and outer dimensions and all
    of them, max, bf16/f64/s32/pred, argmax (variadic) minor and major,
    softmax, layernorm, max and average pooling (reduce-window), GroupNorm +
    SiLU;
  movement: transposes (2-D, heads, NCHW->NHWC, bf16), pad (edge and
    interior), strided slice, concatenate, dynamic-(update-)slice, gathers
    (rows, embedding, take_along_axis), scatters (segment_sum, a graph's
    gather + segment_sum, row set), reverse, bias broadcast;
  elementwise: a transcendental chain in f32, bf16, f16 and f64, gelu,
    integer chains in s32 and u8, pred logic, compare + select, converts;
  loop: fori_loop with a tiny body (the per-iteration cost), an RNN scan,
    a data-dependent while, cond, conjugate gradient (40 matrix-vector
    products in a loop), associative_scan;
  sort: sorts, argsort, top-k, cumulative sums;
  attention: softmax(QK^T/8)V at sequence lengths 128 to 4096 (where a
    fused chain must not lose to the products run apart), causal bf16;
  tiny: programs of a few small ops, whose time is the per-call cost.

Usage (from the repository root):

    cargo build --release -p service --bin hlorun
    python3 bench/perf_matrix.py                          # every cell, 3 rounds
    python3 bench/perf_matrix.py --only s8 --only square  # cells whose name has any
    python3 bench/perf_matrix.py --class conv --class attention
    python3 bench/perf_matrix.py --write-only --out DIR   # just the programs
    python3 bench/perf_matrix.py --json > matrix.json

Options: --hlorun PATH, --platform NAME (default host), --iters N (default
10), --rounds R (default 3), --only SUBSTRING (repeatable), --out DIR (keep
the generated programs there; default a temporary directory), --timeout S.
"""
import argparse
import json
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_xla as cx  # noqa: E402

os.environ.setdefault("JAX_PLATFORMS", "cpu")

# name -> (operand dtype, preferred_element_type or None)
TYPES = {
    "f32": ("float32", None),
    "f64": ("float64", None),
    "bf16": ("bfloat16", None),
    "bf16-f32": ("bfloat16", "float32"),
    "f16": ("float16", None),
    "f16-f32": ("float16", "float32"),
    "s8-s32": ("int8", "int32"),
    "u8-s32": ("uint8", "int32"),
    "c64": ("complex64", None),
}

# name -> (einsum spec, lhs shape, rhs shape)
SHAPES = {
    "square": ("ik,kj->ij", (512, 512), (512, 512)),
    "large": ("ik,kj->ij", (512, 1024), (1024, 1024)),
    "tall": ("ik,kj->ij", (4096, 512), (512, 16)),
    "matvec": ("ik,k->i", (1024, 1024), (1024,)),
    "vecmat": ("k,kj->j", (1024,), (1024, 1024)),
    "heads": ("bhqd,bhkd->bhqk", (4, 8, 128, 64), (4, 8, 128, 64)),
    "midbatch": ("qhd,khd->hqk", (128, 8, 64), (128, 8, 64)),
    "lhsT": ("ki,kj->ij", (512, 512), (512, 512)),
    "rhsT": ("ik,jk->ij", (512, 512), (512, 512)),
}


def arg_spec(dtype, shape):
    if dtype in ("int8",):
        lo, hi = -128, 128
    elif dtype in ("uint8",):
        lo, hi = 0, 256
    else:
        lo, hi = -1.0, 1.0
    return {"dtype": dtype, "shape": list(shape), "lo": lo, "hi": hi}


def dot_cells(jnp):
    """The products: every element type x every shape class."""
    for tname, (dtype, pref) in TYPES.items():
        for sname, (spec, ls, rs) in SHAPES.items():
            pet = None if pref is None else jnp.dtype(pref)

            def f(a, b, spec=spec, pet=pet):
                return jnp.einsum(spec, a, b, preferred_element_type=pet)

            yield f"dot_{tname}_{sname}", f, [arg_spec(dtype, ls), arg_spec(dtype, rs)]


def A(dtype, shape, lo=None, hi=None):
    """An argument: `dtype` and `shape`, uniform in [lo, hi) (defaults by kind)."""
    a = arg_spec(dtype, shape)
    if lo is not None:
        a["lo"], a["hi"] = lo, hi
    return a


def conv_cells(jax, jnp):
    """Convolutions 1-D, 2-D and 3-D: strides, both dilations, padding, feature
    and batch groups, forward and both gradients, NHWC and NCHW."""
    lax = jax.lax

    def conv(dn, stride=None, pad="SAME", lhs_dil=None, rhs_dil=None, groups=1,
             dtype=None):
        def f(x, k):
            nd = x.ndim - 2
            return lax.conv_general_dilated(
                x, k, window_strides=stride or (1,) * nd, padding=pad,
                lhs_dilation=lhs_dil, rhs_dilation=rhs_dil, dimension_numbers=dn,
                feature_group_count=groups,
                preferred_element_type=dtype)
        return f

    def grads(fwd, which):
        def f(x, k, g):
            _, vjp = jax.vjp(fwd, x, k)
            return vjp(g)[which]
        return f

    nwc = ("NWC", "WIO", "NWC")
    nhwc = ("NHWC", "HWIO", "NHWC")
    nchw = ("NCHW", "OIHW", "NCHW")
    ndhwc = ("NDHWC", "DHWIO", "NDHWC")
    f32 = "float32"
    # WaveNet: a dilated causal 1-D convolution (the 1.5x program).
    yield "conv1d_dilated_causal", conv(nwc, pad=((4, 0),), rhs_dil=(4,)), [
        A(f32, (4, 4096, 64)), A(f32, (2, 64, 64))]
    yield "conv1d_stride2", conv(nwc, stride=(2,)), [A(f32, (8, 2048, 32)), A(f32, (5, 32, 64))]
    yield "conv2d_3x3_nhwc", conv(nhwc), [A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 64))]
    yield "conv2d_3x3_nchw", conv(nchw), [A(f32, (8, 64, 56, 56)), A(f32, (64, 64, 3, 3))]
    yield "conv2d_1x1", conv(nhwc), [A(f32, (8, 28, 28, 256)), A(f32, (1, 1, 256, 256))]
    # Few output channels against input channels x taps (a U-Net's or a
    # detector's head): the product's N is narrow next to its K.
    yield "conv2d_3x3_narrow_out", conv(nhwc), [A(f32, (4, 64, 64, 64)), A(f32, (3, 3, 64, 16))]
    yield "conv2d_3x3_to_rgb", conv(nhwc), [A(f32, (4, 128, 128, 32)), A(f32, (3, 3, 32, 3))]
    yield "conv2d_7x7_stride2", conv(nhwc, stride=(2, 2)), [
        A(f32, (8, 224, 224, 3)), A(f32, (7, 7, 3, 64))]
    yield "conv2d_3x3_stride2", conv(nhwc, stride=(2, 2)), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 128))]
    yield "conv2d_depthwise", conv(nhwc, groups=64), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 1, 64))]
    yield "conv2d_grouped4", conv(nhwc, groups=4), [
        A(f32, (8, 28, 28, 128)), A(f32, (3, 3, 32, 128))]
    yield "conv2d_transposed", conv(nhwc, pad=((2, 2), (2, 2)), lhs_dil=(2, 2)), [
        A(f32, (8, 28, 28, 64)), A(f32, (3, 3, 64, 32))]
    yield "conv2d_dilated2", conv(nhwc, rhs_dil=(2, 2)), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 64))]
    yield "conv2d_bf16", conv(nhwc), [
        A("bfloat16", (8, 56, 56, 64)), A("bfloat16", (3, 3, 64, 64))]
    yield "conv2d_bf16_f32acc", conv(nhwc, dtype=jnp.float32), [
        A("bfloat16", (8, 56, 56, 64)), A("bfloat16", (3, 3, 64, 64))]
    yield "conv2d_f16", conv(nhwc), [
        A("float16", (8, 56, 56, 64)), A("float16", (3, 3, 64, 64))]
    # Quantized convolutions: byte operands, s32 sums.
    s8, u8, s32 = "int8", "uint8", jnp.int32
    yield "conv2d_s8_s32", conv(nhwc, dtype=s32), [
        A(s8, (8, 56, 56, 64), -127, 127), A(s8, (3, 3, 64, 64), -127, 127)]
    yield "conv2d_u8_s32", conv(nhwc, dtype=s32), [
        A(u8, (8, 56, 56, 64), 0, 255), A(u8, (3, 3, 64, 64), 0, 255)]
    yield "conv2d_s8_depthwise", conv(nhwc, groups=64, dtype=s32), [
        A(s8, (8, 56, 56, 64), -127, 127), A(s8, (3, 3, 1, 64), -127, 127)]
    yield "conv1d_s8_stride2", conv(nwc, stride=(2,), dtype=s32), [
        A(s8, (8, 2048, 32), -127, 127), A(s8, (5, 32, 64), -127, 127)]
    fwd = conv(nhwc)
    yield "conv2d_grad_input", grads(fwd, 0), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 64)), A(f32, (8, 56, 56, 64))]
    yield "conv2d_grad_kernel", grads(fwd, 1), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 64)), A(f32, (8, 56, 56, 64))]
    dw = conv(nhwc, groups=64)
    # The kernel gradient of a depthwise convolution is a batch-grouped one.
    yield "conv2d_depthwise_grad_kernel", grads(dw, 1), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 1, 64)), A(f32, (8, 56, 56, 64))]
    yield "conv2d_stride2_grad_input", grads(conv(nhwc, stride=(2, 2)), 0), [
        A(f32, (8, 56, 56, 64)), A(f32, (3, 3, 64, 128)), A(f32, (8, 28, 28, 128))]
    yield "conv3d_3x3x3", conv(ndhwc), [
        A(f32, (2, 16, 32, 32, 16)), A(f32, (3, 3, 3, 16, 32))]
    yield "conv2d_f64", conv(nhwc), [A("float64", (4, 28, 28, 32)), A("float64", (3, 3, 32, 32))]


def reduction_cells(jax, jnp):
    """Reductions over minor, major, middle and all dimensions, variadic
    (argmax) and windowed."""
    f32 = "float32"
    m = (1024, 4096)
    yield "reduce_sum_minor", lambda x: jnp.sum(x, axis=1), [A(f32, m)]
    yield "reduce_sum_major", lambda x: jnp.sum(x, axis=0), [A(f32, m)]
    yield "reduce_sum_middle", lambda x: jnp.sum(x, axis=1), [A(f32, (64, 256, 256))]
    yield "reduce_sum_outer2", lambda x: jnp.sum(x, axis=(0, 2)), [A(f32, (64, 256, 256))]
    yield "reduce_sum_all", lambda x: jnp.sum(x), [A(f32, (4096, 1024))]
    yield "reduce_max_minor", lambda x: jnp.max(x, axis=1), [A(f32, m)]
    yield "reduce_sum_minor_bf16", lambda x: jnp.sum(x, axis=1), [A("bfloat16", m)]
    yield "reduce_sum_minor_f64", lambda x: jnp.sum(x, axis=1), [A("float64", m)]
    yield "reduce_sum_minor_s32", lambda x: jnp.sum(x, axis=1), [A("int32", m, -100, 100)]
    yield "reduce_any_minor_pred", lambda x: jnp.any(x, axis=1), [A("bool", m)]
    # Short rows: vectors of three (norms of points), a middle dimension over
    # short rows, and the pairwise form that broadcasts both.
    yield "reduce_norm_xyz", lambda x: jnp.sqrt(jnp.sum(x * x, axis=1)), [A(f32, (1 << 20, 3))]
    yield "reduce_sum_middle_short", lambda x: jnp.sum(x, axis=1), [A(f32, (1024, 1024, 3))]

    def pairwise(p):
        d = p[None, :, :] - p[:, None, :]
        r = jnp.sum(d * d, axis=-1) + 1e-3
        return jnp.sum(d / (r * jnp.sqrt(r))[..., None], axis=1)
    yield "pairwise_forces", pairwise, [A(f32, (512, 3))]
    yield "argmax_minor", lambda x: jnp.argmax(x, axis=1), [A(f32, m)]
    yield "argmax_major", lambda x: jnp.argmax(x, axis=0), [A(f32, m)]
    yield "softmax_minor", lambda x: jax.nn.softmax(x, axis=-1), [A(f32, m)]

    def layernorm(x, g, b):
        mu = jnp.mean(x, axis=-1, keepdims=True)
        var = jnp.mean((x - mu) ** 2, axis=-1, keepdims=True)
        return (x - mu) * jax.lax.rsqrt(var + 1e-5) * g + b
    yield "layernorm", layernorm, [A(f32, m), A(f32, (4096,)), A(f32, (4096,))]

    def maxpool(x):
        return jax.lax.reduce_window(x, -jnp.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1),
                                     "SAME")
    yield "reduce_window_maxpool", maxpool, [A(f32, (8, 112, 112, 64))]

    def avgpool(x):
        return jax.lax.reduce_window(x, 0.0, jax.lax.add, (1, 2, 2, 1), (1, 2, 2, 1),
                                     "VALID") / 4
    yield "reduce_window_avgpool", avgpool, [A(f32, (8, 112, 112, 64))]

    def groupnorm_silu(x):
        n, h, w, c = x.shape
        g = x.reshape(n, h, w, 32, c // 32)
        mu = jnp.mean(g, axis=(1, 2, 4), keepdims=True)
        var = jnp.var(g, axis=(1, 2, 4), keepdims=True)
        y = ((g - mu) * jax.lax.rsqrt(var + 1e-5)).reshape(x.shape)
        return jax.nn.silu(y)
    yield "groupnorm_silu", groupnorm_silu, [A(f32, (2, 64, 64, 128))]


def movement_cells(jax, jnp):
    """Data movement at several ranks."""
    lax = jax.lax
    f32 = "float32"
    yield "transpose_2d", lambda x: x.T, [A(f32, (2048, 2048))]
    yield "transpose_heads", lambda x: jnp.transpose(x, (0, 2, 1, 3)), [A(f32, (8, 512, 16, 64))]
    yield "transpose_nchw_nhwc", lambda x: jnp.transpose(x, (0, 2, 3, 1)), [
        A(f32, (16, 64, 56, 56))]
    yield "transpose_2d_bf16", lambda x: x.T, [A("bfloat16", (2048, 2048))]
    yield "pad_2d", lambda x: jnp.pad(x, ((3, 5), (7, 1))), [A(f32, (2048, 2048))]
    yield "pad_interior", lambda x: lax.pad(x, jnp.float32(0), ((1, 1, 1), (0, 0, 1))), [A(f32, (1024, 1024))]
    yield "slice_strided", lambda x: x[1::2, ::3], [A(f32, (2048, 2048))]
    yield "concatenate", lambda a, b, c: jnp.concatenate([a, b, c, a], axis=1), [
        A(f32, (1024, 512)), A(f32, (1024, 256)), A(f32, (1024, 768))]
    yield "dynamic_slice", lambda x, i: lax.dynamic_slice(x, (i, 0), (512, 2048)), [
        A(f32, (2048, 2048)), A("int32", (), 0, 1536)]
    yield "dynamic_update_slice", lambda x, u, i: lax.dynamic_update_slice(x, u, (i, 0)), [
        A(f32, (2048, 2048)), A(f32, (512, 2048)), A("int32", (), 0, 1536)]
    yield "gather_rows", lambda t, i: t[i], [A(f32, (65536, 128)), A("int32", (16384,), 0, 65536)]
    yield "gather_embedding", lambda t, i: t[i], [
        A(f32, (32000, 256)), A("int32", (16, 512), 0, 32000)]
    yield "gather_take_along", lambda x, i: jnp.take_along_axis(x, i, axis=1), [
        A(f32, (1024, 1024)), A("int32", (1024, 64), 0, 1024)]
    yield "scatter_segment_sum", lambda d, s: jax.ops.segment_sum(d, s, num_segments=20000), [
        A(f32, (200000, 32)), A("int32", (200000,), 0, 20000)]

    def message_passing(x, src, dst):
        return jax.ops.segment_sum(x[src], dst, num_segments=x.shape[0])
    yield "gather_scatter_graph", message_passing, [
        A(f32, (20000, 64)), A("int32", (200000,), 0, 20000), A("int32", (200000,), 0, 20000)]
    yield "scatter_set_rows", lambda x, i, u: x.at[i].set(u), [
        A(f32, (65536, 128)), A("int32", (4096,), 0, 65536), A(f32, (4096, 128))]
    yield "reverse", lambda x: x[::-1, ::-1], [A(f32, (2048, 2048))]
    yield "broadcast_add_bias", lambda x, b: x + b, [A(f32, (4096, 1024)), A(f32, (1024,))]


def elementwise_cells(jax, jnp):
    """Elementwise chains in every common type, with transcendentals."""
    def float_chain(x, y):
        return jnp.tanh(x) * y + jnp.exp(-x * x) * jnp.sin(y) - jnp.log1p(y * y) / (1 + x * x)

    shape = (1024, 1024)
    for t in ("float32", "bfloat16", "float16", "float64"):
        yield f"elementwise_{SHORT[t]}", float_chain, [A(t, shape), A(t, shape)]
    yield "elementwise_gelu_f32", lambda x: jax.nn.gelu(x, approximate=False), [A("float32", shape)]
    yield "elementwise_gelu_tanh_bf16", lambda x: jax.nn.gelu(x), [A("bfloat16", shape)]

    def int_chain(x, y):
        return jnp.maximum((x * 3 + y) >> 2, -x) ^ (y & 255)
    yield "elementwise_s32", int_chain, [A("int32", shape, -1000, 1000),
                                         A("int32", shape, -1000, 1000)]

    def u8_chain(x, y):
        return jnp.minimum(x // 2 + y // 2, jnp.uint8(200)) | (x & y)
    yield "elementwise_u8", u8_chain, [A("uint8", shape), A("uint8", shape)]
    yield "elementwise_pred", lambda a, b, c: (a & b) | ~c, [
        A("bool", shape), A("bool", shape), A("bool", shape)]
    yield "elementwise_select_compare", lambda x, y: jnp.where(x > y, x - y, y * 2), [
        A("float32", shape), A("float32", shape)]
    yield "convert_f32_bf16", lambda x: x.astype(jnp.bfloat16), [A("float32", shape)]
    yield "convert_s8_f32", lambda x: x.astype(jnp.float32) * 0.5, [A("int8", shape)]


def loop_cells(jax, jnp):
    """Loops with small bodies (the per-iteration cost) and conditionals."""
    lax = jax.lax
    f32 = "float32"
    yield "fori_loop_small_body", lambda x: lax.fori_loop(
        0, 1000, lambda i, c: c * 0.999 + 0.001, x), [A(f32, (16,))]

    def rnn_scan(h, xs, w):
        def step(h, x):
            h = jnp.tanh(h @ w + x)
            return h, h
        return lax.scan(step, h, xs)
    yield "scan_rnn", rnn_scan, [A(f32, (8, 64)), A(f32, (256, 8, 64)), A(f32, (64, 64))]

    def while_data(x):
        return lax.while_loop(lambda c: jnp.sum(c) < 1e6, lambda c: c * 1.01 + 1.0, x)
    yield "while_data_dependent", while_data, [A(f32, (64,), 0.0, 1.0)]
    yield "cond", lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), [
        A("int32", (), 0, 2), A(f32, (1024, 1024))]

    def cg(a, b):
        def body(_, s):
            x, r, p, rs = s
            ap = a @ p
            alpha = rs / jnp.dot(p, ap)
            x = x + alpha * p
            r = r - alpha * ap
            rs2 = jnp.dot(r, r)
            return x, r, r + rs2 / rs * p, rs2
        x0 = jnp.zeros_like(b)
        return lax.fori_loop(0, 40, body, (x0, b, b, jnp.dot(b, b)))[0]
    yield "conjugate_gradient", cg, [A(f32, (512, 512)), A(f32, (512,))]

    def linear_recurrence(a, b):
        def op(l, r):
            return l[0] * r[0], r[0] * l[1] + r[1]
        return lax.associative_scan(op, (a, b), axis=1)[1]
    yield "associative_scan", linear_recurrence, [A(f32, (4, 2048, 256)), A(f32, (4, 2048, 256))]


def sort_cells(jax, jnp):
    """Sorting, top-k, cumulative sums."""
    f32 = "float32"
    yield "sort_1d", jnp.sort, [A(f32, (1 << 20,))]
    yield "sort_rows", lambda x: jnp.sort(x, axis=1), [A(f32, (1024, 1024))]
    yield "argsort_rows", lambda x: jnp.argsort(x, axis=1), [A(f32, (1024, 1024))]
    yield "top_k", lambda x: jax.lax.top_k(x, 8), [A(f32, (1024, 4096))]
    yield "cumsum_minor", lambda x: jnp.cumsum(x, axis=1), [A(f32, (1024, 1024))]
    yield "cumsum_major", lambda x: jnp.cumsum(x, axis=0), [A(f32, (1024, 1024))]
    yield "cumsum_s32", lambda x: jnp.cumsum(x, axis=1), [A("int32", (1024, 1024), -9, 9)]


def attention_cells(jax, jnp):
    """softmax(QK^T/8)V over sequence lengths 128 to 4096 (the fusion rule's
    check: a fused form must never lose to its parts)."""
    def attention(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k) / 8.0
        return jnp.einsum("bhqk,bhkd->bhqd", jax.nn.softmax(s, axis=-1), v)

    for n in (128, 512, 2048, 4096):
        shape = (1, 8, n, 64)
        yield f"attention_{n}", attention, [A("float32", shape)] * 3

    def causal_bf16(q, k, v):
        s = jnp.einsum("bhqd,bhkd->bhqk", q, k).astype(jnp.float32) / 8.0
        n = q.shape[2]
        s = jnp.where(jnp.tril(jnp.ones((n, n), bool)), s, -1e9)
        p = jax.nn.softmax(s, axis=-1).astype(q.dtype)
        return jnp.einsum("bhqk,bhkd->bhqd", p, v)
    yield "attention_causal_bf16_1024", causal_bf16, [A("bfloat16", (2, 8, 1024, 64))] * 3


def tiny_cells(jax, jnp):
    """Tiny programs: the time per call a serving loop or a Python driver pays."""
    yield "tiny_add", lambda x: x + 1.0, [A("float32", (4,))]

    def mlp(x, w1, b1, w2, b2):
        return jnp.tanh(x @ w1 + b1) @ w2 + b2
    yield "tiny_mlp", mlp, [A("float32", (4, 8)), A("float32", (8, 16)), A("float32", (16,)),
                            A("float32", (16, 3)), A("float32", (3,))]
    yield "tiny_scalar_chain", lambda x: jnp.sin(x) * 2 + jnp.cos(x), [A("float32", ())]


SHORT = {"float32": "f32", "bfloat16": "bf16", "float16": "f16", "float64": "f64"}
CLASSES = ["dot", "conv", "reduce", "movement", "elementwise", "loop", "sort", "attention",
           "tiny"]


def all_cells(jax, jnp):
    yield from (("dot",) + c for c in dot_cells(jnp))
    yield from (("conv",) + c for c in conv_cells(jax, jnp))
    yield from (("reduce",) + c for c in reduction_cells(jax, jnp))
    yield from (("movement",) + c for c in movement_cells(jax, jnp))
    yield from (("elementwise",) + c for c in elementwise_cells(jax, jnp))
    yield from (("loop",) + c for c in loop_cells(jax, jnp))
    yield from (("sort",) + c for c in sort_cells(jax, jnp))
    yield from (("attention",) + c for c in attention_cells(jax, jnp))
    yield from (("tiny",) + c for c in tiny_cells(jax, jnp))


def generate(out_dir, only, classes):
    import jax
    import jax.numpy as jnp

    names = []
    for cls, name, f, args in all_cells(jax, jnp):
        # 64-bit types only where a cell asks for them: under x64, Python
        # scalars and index literals would become 64-bit in every other cell.
        jax.config.update("jax_enable_x64", any(a["dtype"] in ("float64", "int64")
                                                for a in args))
        if classes and cls not in classes:
            continue
        if only and not any(o in name for o in only):
            continue
        structs = [jax.ShapeDtypeStruct(tuple(a["shape"]), jnp.dtype(a["dtype"])) for a in args]
        # keep_unused: a gradient need not read every argument, and the
        # timing passes them all.
        text = jax.jit(f, keep_unused=True).lower(*structs).as_text(dialect="hlo")
        with open(os.path.join(out_dir, name + ".hlo"), "w") as fh:
            fh.write(text)
        with open(os.path.join(out_dir, name + ".json"), "w") as fh:
            json.dump({"name": name, "class": cls, "args": args,
                       "jax_version": jax.__version__}, fh, indent=1)
        names.append(name)
    return names


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hlorun", default=os.path.join(cx.REPO, "target", "release", "hlorun"))
    p.add_argument("--platform", default="host")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--class", dest="classes", action="append", default=[], choices=CLASSES)
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--write-only", action="store_true")
    args = p.parse_args()

    keep = args.out
    tmp = tempfile.TemporaryDirectory(prefix="perf_matrix_")
    out_dir = keep or tmp.name
    os.makedirs(out_dir, exist_ok=True)
    names = generate(out_dir, args.only, args.classes)
    if args.write_only:
        print(f"wrote {len(names)} programs to {out_dir}")
        return
    if not os.path.exists(args.hlorun):
        sys.exit(f"perf_matrix: {args.hlorun} not found")
    xla = cx.Xla("cpu")
    # f64 inputs stay f64 on the way to XLA's device.
    xla.jax.config.update("jax_enable_x64", True)
    results = []
    for name in names:
        hlo_path = os.path.join(out_dir, name + ".hlo")
        with open(os.path.join(out_dir, name + ".json")) as fh:
            spec = json.load(fh)
        with open(hlo_path) as fh:
            text = fh.read()
        paths, arrays = cx.make_inputs(spec, name, tmp.name)
        rounds = {"xla": [], "host": []}
        for _ in range(args.rounds):
            try:
                rounds["xla"].append(xla.bench(text, arrays, args.iters))
            except Exception as e:
                rounds["xla"].append({"error": f"{type(e).__name__}: {e}".splitlines()[0]})
            rounds["host"].append(cx.run_hlorun(args, args.platform, hlo_path, paths))
        x = cx.combine_rounds(rounds["xla"])
        h = cx.combine_rounds(rounds["host"])
        row = {"cell": name, "xla": x, "host": h}
        if "error" not in x and "error" not in h:
            row["ratio"] = h["execute_ms_median"] / x["execute_ms_median"]
            if h.get("peak_bytes") is not None and x.get("peak_bytes"):
                row["peak_ratio"] = h["peak_bytes"] / x["peak_bytes"]
        results.append(row)
        for path in paths:
            os.remove(path)
        if not args.json:
            if "ratio" in row:
                print(f"{name:28s} XLA {x['execute_ms_median']:9.3f} ms  {args.platform} "
                      f"{h['execute_ms_median']:9.3f} ms  {row['ratio']:6.2f}x"
                      + (f"  peak {row['peak_ratio']:.2f}x" if "peak_ratio" in row else ""),
                      flush=True)
            else:
                print(f"{name:28s} error: xla {x.get('error')} / {args.platform} {h.get('error')}",
                      flush=True)
    ratios = [r["ratio"] for r in results if "ratio" in r]
    worst = sorted((r for r in results if "ratio" in r), key=lambda r: -r["ratio"])
    summary = {
        "cells": len(results),
        "compared": len(ratios),
        "geomean_ratio": cx.geomean(ratios),
        "worst": [(r["cell"], round(r["ratio"], 2)) for r in worst[:5]],
        "above_1_25x": [(r["cell"], round(r["ratio"], 2)) for r in worst if r["ratio"] > 1.25],
        "failed": [r["cell"] for r in results if "ratio" not in r],
    }
    if args.json:
        print(json.dumps({"xla_version": xla.version, "rounds": args.rounds, "iters": args.iters,
                          "results": results, "summary": summary}, indent=1))
    else:
        g = summary["geomean_ratio"]
        print(f"\ngeometric mean {args.platform}/XLA: {g:.3f} over {len(ratios)} cells"
              if g else "\nno cells compared")
        print("worst: " + ", ".join(f"{c} {v}x" for c, v in summary["worst"]))
        print("above 1.25x: " + (", ".join(f"{c} {v}x" for c, v in summary["above_1_25x"])
                                 or "none"))
        if summary["failed"]:
            print("failed: " + ", ".join(summary["failed"]))


if __name__ == "__main__":
    main()
