#!/usr/bin/env python3
"""Generates platform-host/tests/cases/: HLO programs for ops and corner cases
the conformance corpus does not reach, with inputs and the outputs real XLA
(CPU) computes for them.

Each case is a folder like the corpus': module.hlo, argN.npy, outN.npy (tuple
results flattened), case.json (rtol/atol). Programs come either from JAX
(`jax.jit(f).lower(...).as_text(dialect="hlo")`) or are written here as HLO
text when JAX would lower the op to a library call on CPU (cholesky,
triangular-solve) or never emits it (batch-norm, map, ...). Expected outputs
are always XLA's: the HLO text is compiled and run by the CPU backend JAX
ships, so nothing here is hand-computed.

Run: python3 platform-host/scripts/gen_host_cases.py   (needs jax, numpy)
"""

import json
import os
import shutil

import numpy as np
import jax
import jax.numpy as jnp

jax.config.update("jax_enable_x64", True)

from jax._src.lib import xla_client as xc  # noqa: E402
from jax._src import xla_bridge  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "cases")
BACKEND = xla_bridge.get_backend("cpu")
RNG = np.random.default_rng(20240521)


def run_xla(text, args):
    module = xc.hlo.hlo_module_from_text(text)
    mlir = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    exe = BACKEND.compile_and_load(mlir, BACKEND.devices()[:1], xc.CompileOptions())
    bufs = [jax.device_put(a, BACKEND.devices()[0]) for a in args]
    return [np.asarray(o) for o in exe.execute(bufs)]


def uniform_f32(seed):
    """A draw of f32 arrays uniform in [-1, 1) from its own generator, so a
    group of cases with its own seed can be made alone."""
    rng = np.random.default_rng(seed)
    return lambda *shape: rng.uniform(-1.0, 1.0, size=shape).astype(np.float32)


def write(name, text, args, rtol=1e-5, atol=1e-6):
    outs = run_xla(text, args)
    d = os.path.join(OUT, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with open(os.path.join(d, "module.hlo"), "w") as f:
        f.write(text)
    for i, a in enumerate(args):
        np.save(os.path.join(d, f"arg{i}.npy"), a)
    for i, o in enumerate(outs):
        np.save(os.path.join(d, f"out{i}.npy"), o)
    with open(os.path.join(d, "case.json"), "w") as f:
        json.dump({"name": name, "rtol": rtol, "atol": atol, "jax_version": jax.__version__}, f, indent=1)
    print(name, [o.shape for o in outs])


def jit_text(f, *args):
    return jax.jit(f).lower(*args).as_text(dialect="hlo")


def f32(*shape, lo=-1.0, hi=1.0):
    return RNG.uniform(lo, hi, size=shape).astype(np.float32)


def main():
    shutil.rmtree(OUT, ignore_errors=True)
    os.makedirs(OUT)

    # --- rng-bit-generator: bit-exact ThreeFry and Philox -------------------
    key = np.array([0x1234_5678_9ABC, 0xFEDC_BA98_7654_3210], dtype=np.uint64)
    key3 = np.array([42, 7, 3], dtype=np.uint64)
    alg = jax.lax.RandomAlgorithm
    for tag, shape, dtype, algorithm, k in [
        ("threefry_u32_odd", (3, 5), jnp.uint32, alg.RNG_THREE_FRY, key),
        ("threefry_u32_even", (4, 6), jnp.uint32, alg.RNG_THREE_FRY, key),
        ("threefry_u64", (5,), jnp.uint64, alg.RNG_THREE_FRY, key),
        ("threefry_u16", (2, 3), jnp.uint16, alg.RNG_THREE_FRY, key),
        ("philox_u32", (3, 5), jnp.uint32, alg.RNG_PHILOX, key),
        ("philox_u64", (5,), jnp.uint64, alg.RNG_PHILOX, key),
        ("default_u32", (9,), jnp.uint32, alg.RNG_DEFAULT, key),
    ]:
        f = lambda kk, shape=shape, dtype=dtype, algorithm=algorithm: jax.lax.rng_bit_generator(
            kk, shape, dtype=dtype, algorithm=algorithm)
        write(f"rng_bit_generator_{tag}", jit_text(f, k), [k], rtol=0, atol=0)
    # A three-word Philox state (key, 128-bit counter); JAX only makes two.
    write("rng_bit_generator_philox_state3", """HloModule rbg3
ENTRY e {
  k = u64[3] parameter(0)
  ROOT r = (u64[3], u32[7]) rng-bit-generator(k), algorithm=rng_philox
}
""", [key3], rtol=0, atol=0)

    # --- linear algebra (JAX would call LAPACK; written as HLO) --------------
    a = f32(2, 4, 4)
    spd = (a @ np.swapaxes(a, -1, -2) + 4 * np.eye(4, dtype=np.float32)).astype(np.float32)
    for lower in ["true", "false"]:
        text = f"""HloModule cholesky_{lower}
ENTRY e {{
  a = f32[2,4,4] parameter(0)
  c = f32[2,4,4] cholesky(a), lower={lower}
  z = f32[] constant(0)
  zb = f32[2,4,4] broadcast(z), dimensions={{}}
  i0 = s32[4,4] iota(), iota_dimension=0
  i1 = s32[4,4] iota(), iota_dimension=1
  keep = pred[4,4] compare(i0, i1), direction={"GE" if lower == "true" else "LE"}
  kb = pred[2,4,4] broadcast(keep), dimensions={{1,2}}
  ROOT t = f32[2,4,4] select(kb, c, zb)
}}
"""
        write(f"cholesky_lower_{lower}", text, [spd], rtol=1e-4, atol=1e-5)
    tri = (f32(3, 3) + 3 * np.eye(3, dtype=np.float32)).astype(np.float32)
    for left in ["true", "false"]:
        for lower in ["true", "false"]:
            for trans in ["NO_TRANSPOSE", "TRANSPOSE"]:
                for unit in ["false", "true"]:
                    b = f32(3, 2) if left == "true" else f32(2, 3)
                    text = f"""HloModule ts
ENTRY e {{
  a = f32[3,3] parameter(0)
  b = f32{list(b.shape)} parameter(1)
  ROOT x = f32{list(b.shape)} triangular-solve(a, b), left_side={left}, lower={lower}, unit_diagonal={unit}, transpose_a={trans}
}}
""".replace("[3, 2]", "[3,2]").replace("[2, 3]", "[2,3]")
                    tag = f"{'l' if left == 'true' else 'r'}{'lo' if lower == 'true' else 'up'}_{trans.lower()}{'_unit' if unit == 'true' else ''}"
                    write(f"triangular_solve_{tag}", text, [tri, b], rtol=1e-4, atol=1e-5)

    # --- batch norm, map, clamp with scalar bounds ---------------------------
    x = f32(2, 3, 4, 5)
    scale, offset, mean, var = f32(3), f32(3), f32(3), f32(3, lo=0.5, hi=2.0)
    gy = f32(2, 3, 4, 5)
    bn = """HloModule bn
ENTRY e {
  x = f32[2,3,4,5] parameter(0)
  s = f32[3] parameter(1)
  o = f32[3] parameter(2)
  m = f32[3] parameter(3)
  v = f32[3] parameter(4)
  g = f32[2,3,4,5] parameter(5)
  tr = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-training(x, s, o), epsilon=0.001, feature_index=1
  bi = f32[2,3,4,5] batch-norm-inference(x, s, o, m, v), epsilon=0.001, feature_index=1
  gr = (f32[2,3,4,5], f32[3], f32[3]) batch-norm-grad(x, s, m, v, g), epsilon=0.001, feature_index=1
  t0 = f32[2,3,4,5] get-tuple-element(tr), index=0
  t1 = f32[3] get-tuple-element(tr), index=1
  t2 = f32[3] get-tuple-element(tr), index=2
  g0 = f32[2,3,4,5] get-tuple-element(gr), index=0
  g1 = f32[3] get-tuple-element(gr), index=1
  g2 = f32[3] get-tuple-element(gr), index=2
  ROOT r = (f32[2,3,4,5], f32[3], f32[3], f32[2,3,4,5], f32[2,3,4,5], f32[3], f32[3]) tuple(t0, t1, t2, bi, g0, g1, g2)
}
"""
    write("batch_norm_ops", bn, [x, scale, offset, mean, var, gy], rtol=1e-4, atol=1e-5)
    mapped = """HloModule map
fma {
  fa = f32[] parameter(0)
  fb = f32[] parameter(1)
  half = f32[] constant(0.5)
  prod = f32[] multiply(fa, fb)
  ROOT sum = f32[] add(prod, half)
}
ENTRY e {
  x = f32[3,4] parameter(0)
  y = f32[3,4] parameter(1)
  lo = f32[] constant(-0.25)
  hi = f32[] constant(0.5)
  m = f32[3,4] map(x, y), dimensions={0,1}, to_apply=fma
  ROOT c = f32[3,4] clamp(lo, m, hi)
}
"""
    write("map_and_scalar_clamp", mapped, [f32(3, 4), f32(3, 4)])

    # --- control flow whose state elements trade places ----------------------
    swap = """HloModule swap
cond {
  cp = (s32[], f32[4], f32[4]) parameter(0)
  ci = s32[] get-tuple-element(cp), index=0
  cn = s32[] constant(5)
  ROOT lt = pred[] compare(ci, cn), direction=LT
}
body {
  p = (s32[], f32[4], f32[4]) parameter(0)
  i = s32[] get-tuple-element(p), index=0
  a = f32[4] get-tuple-element(p), index=1
  b = f32[4] get-tuple-element(p), index=2
  one = s32[] constant(1)
  j = s32[] add(i, one)
  two = f32[] constant(2)
  tb = f32[4] broadcast(two), dimensions={}
  a2 = f32[4] multiply(a, tb)
  ROOT t = (s32[], f32[4], f32[4]) tuple(j, b, a2)
}
ENTRY e {
  ea = f32[4] parameter(0)
  eb = f32[4] parameter(1)
  z = s32[] constant(0)
  s = (s32[], f32[4], f32[4]) tuple(z, ea, eb)
  w = (s32[], f32[4], f32[4]) while(s), condition=cond, body=body
  r1 = f32[4] get-tuple-element(w), index=1
  r2 = f32[4] get-tuple-element(w), index=2
  ROOT r = (f32[4], f32[4], f32[4]) tuple(r1, r2, ea)
}
"""
    write("while_swapping_state", swap, [f32(4), f32(4)])

    # --- data movement corner cases ------------------------------------------
    v = f32(5, 6)
    write("pad_negative_interior", jit_text(
        lambda t: jax.lax.pad(t, np.float32(9.0), [(-1, 2, 1), (3, -2, 2)]), v), [v])
    idx = np.array([7, -3], dtype=np.int32)
    write("dynamic_slices_clamp", jit_text(
        lambda t, i: (jax.lax.dynamic_slice(t, (i[0], i[1]), (2, 3)),
                      jax.lax.dynamic_update_slice(t, jnp.ones((3, 2), jnp.float32), (i[1], i[0]))), v, idx), [v, idx])
    write("reverse_and_strided_slice", jit_text(lambda t: (jnp.flip(t, (0, 1)), t[1::2, ::3]), v), [v])

    # --- reductions and windows ----------------------------------------------
    z = f32(3, 7, 5)
    write("cumulative_reverse_and_max", jit_text(
        lambda t: (jnp.cumsum(t, axis=1, dtype=jnp.float32)[:, ::-1], jax.lax.cummax(t, axis=2, reverse=True),
                   jnp.cumprod(t, axis=0)), z), [z], rtol=1e-4, atol=1e-5)
    img = f32(2, 9, 9, 3)
    write("reduce_window_dilated", jit_text(
        lambda t: jax.lax.reduce_window(t, -np.inf, jax.lax.max, (1, 3, 2, 1), (1, 2, 1, 1),
                                        ((0, 0), (1, 1), (0, 2), (0, 0)), base_dilation=(1, 2, 1, 1),
                                        window_dilation=(1, 1, 2, 1)), img), [img])
    pool = lambda t: jax.lax.reduce_window(t, -np.inf, jax.lax.max, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    write("maxpool_grad_select_and_scatter", jit_text(
        lambda t: jax.grad(lambda u: jnp.sum(pool(u) ** 2))(t), img), [img], rtol=1e-4, atol=1e-5)
    write("reduce_multi_axis_int_and_pred", jit_text(
        lambda t, m: (jnp.sum(t, axis=(0, 2)), jnp.max(t, axis=1), jnp.all(m, axis=0), jnp.any(m, axis=1)),
        np.arange(60, dtype=np.int32).reshape(3, 4, 5) - 30, RNG.random((4, 5)) > 0.3),
        [np.arange(60, dtype=np.int32).reshape(3, 4, 5) - 30, RNG.random((4, 5)) > 0.3])

    # --- convolutions: groups, dilations, transposed --------------------------
    lhs = f32(2, 8, 7, 8)  # NHWC, 8 features = 2 groups of 4
    rhs = f32(3, 2, 4, 6)  # HWIO: 4 input features per group, 6 outputs
    dn = ("NHWC", "HWIO", "NHWC")
    write("conv_feature_groups_dilated", jit_text(
        lambda a, b: jax.lax.conv_general_dilated(a, b, (2, 1), ((1, 2), (0, 1)), lhs_dilation=(1, 2),
                                                  rhs_dilation=(2, 1), dimension_numbers=dn,
                                                  feature_group_count=2), lhs, rhs),
        [lhs, rhs], rtol=1e-4, atol=1e-5)
    x4 = f32(4, 6, 6, 4)
    w4 = f32(3, 3, 2, 4)
    grad_w = lambda x_, w_: jax.grad(lambda ww: jnp.sum(jax.lax.conv_general_dilated(
        x_, ww, (1, 1), "SAME", dimension_numbers=dn, feature_group_count=2) ** 2))(w_)
    write("conv_weight_grad_batch_groups", jit_text(grad_w, x4, w4), [x4, w4], rtol=1e-4, atol=1e-4)

    # --- sort, top-k, gather/scatter ------------------------------------------
    keys = RNG.integers(0, 4, size=(3, 10)).astype(np.int32)
    vals = f32(3, 10)
    write("sort_two_keys_stable", jit_text(
        lambda k, w: jax.lax.sort((k, w, jnp.broadcast_to(jnp.arange(10, dtype=jnp.int32), (3, 10))), dimension=1,
                                  num_keys=2), keys, vals), [keys, vals], rtol=0, atol=0)
    withnan = np.array([[3.0, np.nan, -1.0, 0.0, -0.0, 2.0, np.inf, -np.inf]], dtype=np.float32)
    write("sort_floats_with_nan", jit_text(lambda t: (jnp.sort(t, axis=1), jnp.argsort(-t, axis=1)), withnan),
          [withnan], rtol=0, atol=0)
    table = f32(6, 4, 5)
    ids = np.array([[0, 5], [3, 1], [2, 2]], dtype=np.int32)
    write("gather_batched_rows", jit_text(
        lambda t, i: jax.vmap(lambda tt, ii: tt[ii])(t[:3], i), table, ids), [table, ids])
    upd = f32(3, 2)
    write("scatter_window_and_oob", jit_text(
        lambda t, i, u: (t.at[i[:, 0], 1:3].set(u, mode="drop"), t.at[i[:, 1] + 3].add(u[:, :1] * jnp.ones((1, 4), jnp.float32), mode="drop")),
        f32(8, 4), np.array([[0, 1], [7, 9], [2, 2]], dtype=np.int32), upd),
        [f32(8, 4), np.array([[0, 1], [7, 9], [2, 2]], dtype=np.int32), upd])
    write_scatter_add_1d()

    # --- fft variants, complex dot, reduce-precision -------------------------
    sig = f32(3, 8, 6)
    write("fft_real_2d", jit_text(lambda t: (jnp.fft.rfft2(t), jnp.fft.irfft2(jnp.fft.rfft2(t), s=(8, 6))), sig),
          [sig], rtol=1e-4, atol=1e-4)
    c = (f32(4, 5) + 1j * f32(4, 5)).astype(np.complex64)
    d = (f32(5, 3) + 1j * f32(5, 3)).astype(np.complex64)
    write("dot_complex", jit_text(lambda p, q: p @ q, c, d), [c, d], rtol=1e-5, atol=1e-5)
    rp = np.array([1.0, 1.0 + 2 ** -10, 3.14159, 1e-20, 70000.0, -1e30, np.nan], dtype=np.float32)
    write("reduce_precision_to_half", jit_text(
        lambda t: (jax.lax.reduce_precision(t, 5, 10), jax.lax.reduce_precision(t, 8, 7)), rp), [rp], rtol=0, atol=0)


def write_scatter_add_1d():
    """The Host's 1-D scalar scatter path: duplicate indices (in order),
    indices out of range on both sides (dropped), s32 and s64 indices."""
    upd = f32(12)
    i32 = np.array([0, 3, 3, 15, 16, -1, -100, 200, 7, 3, 2**31 - 1, -2**31], dtype=np.int32)
    i64 = i32.astype(np.int64) * 3
    write("scatter_add_1d_oob", jit_text(
        lambda t, a, b, u: (t.at[a].add(u, mode="drop"), t.at[b].max(u, mode="drop")),
        f32(16), i32, i64, upd), [f32(16), i32, i64, upd], rtol=0, atol=0)
    # JAX narrows the s64 indices above to s32; XLA itself takes s64 as is.
    text = """HloModule scatter_s64
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY main {
  t = f32[16] parameter(0)
  i = s64[12,1] parameter(1)
  u = f32[12] parameter(2)
  ROOT r = f32[16] scatter(t, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}
"""
    write("scatter_add_1d_s64_oob", text, [f32(16), i64.reshape(12, 1), upd], rtol=0, atol=0)


def write_depthwise_and_pool_grads():
    """Depthwise convolutions (every group one input feature: the Host's direct
    kernel) forward and as JAX differentiates them, and pooling gradients
    (select-and-scatter with an ordering select and an add scatter: the typed
    path) with ties, padding and NaN. Own seed, so they can be made alone
    (`--only depthwise`) without touching the other cases."""
    g = uniform_f32(20261125)
    dn = ("NHWC", "HWIO", "NHWC")
    x = g(2, 9, 8, 6)
    w = g(3, 3, 1, 12)  # channel multiplier 2
    conv = lambda a, b: jax.lax.conv_general_dilated(
        a, b, (2, 1), ((1, 1), (2, 0)), rhs_dilation=(1, 2), dimension_numbers=dn, feature_group_count=6)
    write("conv_depthwise_multiplier_strided", jit_text(conv, x, w), [x, w], rtol=1e-4, atol=1e-5)
    w1 = g(3, 3, 1, 6)
    same = lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "SAME", dimension_numbers=dn,
                                                     feature_group_count=6)
    write("conv_depthwise_grads", jit_text(
        lambda a, b: jax.grad(lambda aa, bb: jnp.sum(jnp.tanh(same(aa, bb))), argnums=(0, 1))(a, b), x, w1),
        [x, w1], rtol=1e-4, atol=1e-4)
    xd = g(1, 6, 6, 3).astype(np.float64)
    wd = g(2, 2, 1, 3).astype(np.float64)
    write("conv_depthwise_f64", jit_text(
        lambda a, b: jax.lax.conv_general_dilated(a, b, (1, 1), "VALID", dimension_numbers=dn,
                                                  feature_group_count=3), xd, wd), [xd, wd], rtol=1e-12, atol=1e-12)
    # Ties (rounded values), a NaN, overlapping windows with padding.
    t = np.round(g(2, 7, 7, 3) * 2) / 2
    t[0, 3, 3, 1] = np.nan
    minpool = lambda u: jax.lax.reduce_window(u, np.inf, jax.lax.min, (1, 3, 3, 1), (1, 2, 2, 1), "SAME")
    maxpool = lambda u: jax.lax.reduce_window(u, -np.inf, jax.lax.max, (1, 2, 2, 1), (1, 1, 1, 1), "VALID")
    write("pool_grads_ties_nan", jit_text(
        lambda u: (jax.grad(lambda v: jnp.sum(minpool(v) * 3.0))(u), jax.grad(lambda v: jnp.sum(maxpool(v) ** 2))(u)),
        t), [t], rtol=1e-5, atol=1e-6)


def write_conv_windows():
    """Convolutions whose im2col rows mix every kind of tap: padding (low,
    high, negative), input dilation (holes between taps), kernel dilation and
    reversal (taps that are not consecutive), strides, three spatial
    dimensions, few input features (runs of consecutive taps copied whole)
    and feature groups (taps that read part of the features). Own seed
    (`--only conv-windows`)."""
    g = uniform_f32(20261128)
    conv = jax.lax.conv_general_dilated
    x, w = g(2, 9, 11, 3), g(3, 4, 3, 7)
    write("conv_windows_2d_few_features", jit_text(
        lambda a, b: (conv(a, b, (1, 2), ((1, 1), (2, 1)), dimension_numbers=("NHWC", "HWIO", "NHWC")),
                      conv(a, b, (2, 1), ((0, 1), (-1, 2)), lhs_dilation=(2, 1), rhs_dilation=(1, 2),
                           dimension_numbers=("NHWC", "HWIO", "NHWC"))), x, w),
        [x, w], rtol=1e-4, atol=1e-5)
    x3, w3 = g(2, 5, 6, 7, 3), g(2, 3, 2, 3, 4)
    write("conv_windows_3d", jit_text(
        lambda a, b: conv(a, b, (1, 2, 1), ((1, 0), (0, 1), (1, 1)), rhs_dilation=(2, 1, 1),
                          dimension_numbers=("NDHWC", "DHWIO", "NDHWC")), x3, w3),
        [x3, w3], rtol=1e-4, atol=1e-5)
    xg, wg = g(2, 8, 8, 6), g(3, 3, 3, 8)
    write("conv_windows_groups_reversed", jit_text(
        lambda a, b: conv(a, jnp.flip(b, axis=0), (1, 1), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"),
                          feature_group_count=2), xg, wg),
        [xg, wg], rtol=1e-4, atol=1e-5)


def write_conv_transposed():
    """Convolutions over a dilated input, where most window taps fall between
    input elements and the Host contracts only the real ones, per class of
    output positions (`convolution::TapClass`): a 2-D transposed
    convolution, the input gradient of a strided convolution, and a 1-D one
    with uneven dilation, padding and a dilated kernel. Own seed
    (`--only conv-transposed`)."""
    g = uniform_f32(20261129)
    conv = jax.lax.conv_general_dilated
    x, w = g(2, 7, 6, 5), g(3, 3, 5, 4)
    write("conv_transposed_2d", jit_text(
        lambda a, b: jax.lax.conv_transpose(a, b, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC")),
        x, w), [x, w], rtol=1e-4, atol=1e-5)
    xs, ws = g(2, 9, 8, 3), g(3, 3, 3, 6)

    def input_grad(a, b):
        f = lambda t: conv(t, b, (2, 2), "SAME", dimension_numbers=("NHWC", "HWIO", "NHWC"))
        y, vjp = jax.vjp(f, a)
        return vjp(jnp.sin(y))[0]
    write("conv_transposed_input_grad", jit_text(input_grad, xs, ws), [xs, ws], rtol=1e-4, atol=1e-5)
    x1, w1 = g(3, 10, 4), g(4, 4, 5)
    write("conv_transposed_1d_uneven", jit_text(
        lambda a, b: conv(a, b, (1,), ((3, 1),), lhs_dilation=(3,), rhs_dilation=(2,),
                          dimension_numbers=("NWC", "WIO", "NWC")), x1, w1),
        [x1, w1], rtol=1e-4, atol=1e-5)


def write_middle_reductions():
    """Reductions over middle dimensions, which the Host runs as grouped
    column reductions (`[A, R, B]`: each group of `R` rows summed into its
    own result row) or, with few groups, as column reductions of a
    transposed read: a sum, a mean over two dimensions scaled per column, a
    max with a single group pair, an argmax (variadic reduce), and a bag of
    embeddings (gather, then a sum over the bag). Own seed
    (`--only middle-reduce`)."""
    g = uniform_f32(20261128)
    x = g(16, 37, 48)
    write("reduce_middle_sum", jit_text(lambda a: jnp.sum(jnp.exp(a), axis=1), x), [x])
    y, w = g(4, 5, 6, 40), g(40)
    write("reduce_middle_mean_scaled", jit_text(lambda a, b: jnp.mean(a, axis=(1, 2)) * b, y, w), [y, w])
    z = g(2, 300, 64)
    write("reduce_middle_max_two_groups", jit_text(lambda a: jnp.max(a * a, axis=1), z), [z])
    v = g(8, 30, 32)
    write("reduce_middle_argmax", jit_text(lambda a: jnp.argmax(a, axis=1).astype(jnp.int32), v), [v])
    table = g(1000, 24)
    idx = np.random.default_rng(20261128).integers(0, 1000, size=(64, 12)).astype(np.int32)
    write("embedding_bag_sum", jit_text(lambda t, i: jnp.take(t, i, axis=0).sum(axis=1), table, idx),
          [table, idx], rtol=1e-5, atol=1e-5)


def write_dynamic_slices():
    """Dynamic slices read in place inside a fusion, at starts the program
    passes in: inside the operand, past its end and below zero (both
    clamped), and a scan whose every step slices its inputs. Own seed
    (`--only dynamic-slice`)."""
    g = uniform_f32(20261130)
    x, h = g(12, 5, 40), g(5, 40)

    def step(a, b, i):
        return jnp.tanh(jax.lax.dynamic_slice(a, (i, np.int32(0), np.int32(0)), (1, 5, 40))[0] + b)
    for name, i in [("inside", 4), ("past_end", 17), ("below_zero", -3)]:
        iv = np.int32(i)
        write(f"dynamic_slice_start_{name}", jit_text(step, x, h, iv), [x, h, iv])
    xs, w, h0 = g(16, 8, 32), g(32, 32), g(8, 32)

    def scan(h, xs, w):
        return jax.lax.scan(lambda c, x: (jnp.tanh(x + c @ w),) * 2, h, xs)[1]
    # Sixteen steps of a tanh recurrence carry XLA's own rounding (its tanh
    # is off by up to 4.6 ULP) forward: its result and the Host's, which
    # `hlorun compare` puts within 0.4 ULP of an f64 evaluation, differ by
    # up to 7e-5 here.
    write("dynamic_slice_scan", jit_text(scan, h0, xs, w), [h0, xs, w], rtol=1e-3, atol=1e-4)


if __name__ == "__main__":
    import sys
    if sys.argv[1:] == ["--only", "depthwise"]:
        write_depthwise_and_pool_grads()
    elif sys.argv[1:] == ["--only", "conv-windows"]:
        write_conv_windows()
    elif sys.argv[1:] == ["--only", "conv-transposed"]:
        write_conv_transposed()
    elif sys.argv[1:] == ["--only", "middle-reduce"]:
        write_middle_reductions()
        write_dynamic_slices()
    elif sys.argv[1:] == ["--only", "dynamic-slice"]:
        write_dynamic_slices()
    else:
        main()
        write_depthwise_and_pool_grads()
        write_conv_windows()
        write_conv_transposed()
        write_middle_reductions()
        write_dynamic_slices()
