#!/usr/bin/env python3
"""Generates the interpreter kernels' expected values with XLA CPU.

Each case is a small HLO module whose ENTRY root is the instruction under test
(its operands are the entry parameters). The module is run by XLA CPU through
jax's bundled XLA client, and the inputs and outputs are written to
hlo/evaluator/tests/data/kernel_cases.txt, which
hlo/evaluator/tests/kernel_cases.rs replays against the kernels.

File format (text, one record per line):
    case NAME
    tol exact | tol RTOL ATOL
    hlo
    ...module text...
    end
    arg SHAPE HEX        (one per parameter, row-major little-endian bytes)
    out SHAPE HEX        (one per result leaf)

"exact" means bit-identical (any NaN matches any NaN). Most float cases use
small integers or dyadic fractions so that every summation order gives the same
bits and the comparison can be exact even where XLA CPU sums in another order.

Run: python3 scripts/gen_kernel_cases.py   (needs `pip install jax`)
"""

import os
import sys

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
from jax._src import xla_bridge
from jax._src.lib import xla_client as xc

OUT = os.path.join(
    os.path.dirname(os.path.abspath(__file__)),
    "..",
    "hlo",
    "evaluator",
    "tests",
    "data",
    "kernel_cases.txt",
)

rng = np.random.default_rng(20240611)
_backend = xla_bridge.get_backend("cpu")
_device = _backend.devices()[0]


def run_xla(hlo, args):
    module = xc.hlo.hlo_module_from_text(hlo)
    mlir = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
    exe = _backend.compile_and_load(mlir, xc.DeviceList((_device,)), xc.CompileOptions())
    outs = exe.execute([jax.device_put(a, _device) for a in args])
    return [np.asarray(o) for o in outs]


DTYPES = {
    np.dtype(np.bool_): "pred",
    np.dtype(np.int8): "s8",
    np.dtype(np.int16): "s16",
    np.dtype(np.int32): "s32",
    np.dtype(np.int64): "s64",
    np.dtype(np.uint8): "u8",
    np.dtype(np.uint16): "u16",
    np.dtype(np.uint32): "u32",
    np.dtype(np.uint64): "u64",
    np.dtype(np.float16): "f16",
    np.dtype(np.float32): "f32",
    np.dtype(np.float64): "f64",
    np.dtype(np.complex64): "c64",
    np.dtype(np.complex128): "c128",
}


def shape_text(a):
    name = DTYPES.get(a.dtype)
    if name is None and a.dtype.name == "bfloat16":
        name = "bf16"
    return "%s[%s]" % (name, ",".join(str(d) for d in a.shape))


def hex_bytes(a):
    a = np.ascontiguousarray(a)
    if a.dtype == np.bool_:
        a = a.astype(np.uint8)
    data = a.tobytes()
    return data.hex() if data else "-"


CASES = []


def case(name, hlo, args, tol="exact"):
    CASES.append((name, hlo.strip(), [np.asarray(a) for a in args], tol))


def ints(shape, lo, hi, dtype=np.float32):
    return rng.integers(lo, hi, size=shape).astype(dtype)


def uniform(shape, dtype=np.float32):
    return rng.uniform(-1, 1, size=shape).astype(dtype)


ADD_F32 = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = f32[] add(a, b)
}
"""


def binop(name, ty, op):
    return """
%s {
  a = %s[] parameter(0)
  b = %s[] parameter(1)
  ROOT r = %s[] %s(a, b)
}
""" % (name, ty, ty, ty, op)


# ---------------------------------------------------------------- dot
case("dot_matmul_f32_exact", """
HloModule m
ENTRY e {
  a = f32[3,5] parameter(0)
  b = f32[5,4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [ints((3, 5), -8, 8), ints((5, 4), -8, 8)])

case("dot_matmul_f32_random", """
HloModule m
ENTRY e {
  a = f32[7,33] parameter(0)
  b = f32[33,9] parameter(1)
  ROOT d = f32[7,9] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [uniform((7, 33)), uniform((33, 9))], tol=(1e-5, 1e-6))

case("dot_batch_two_contracting_out_of_order", """
HloModule m
ENTRY e {
  a = f32[2,3,4,5] parameter(0)
  b = f32[5,2,4,6] parameter(1)
  ROOT d = f32[2,3,6] dot(a, b), lhs_batch_dims={0}, rhs_batch_dims={1}, lhs_contracting_dims={3,2}, rhs_contracting_dims={0,2}
}""", [ints((2, 3, 4, 5), -4, 4), ints((5, 2, 4, 6), -4, 4)])

case("dot_two_batch_dims_transposed", """
HloModule m
ENTRY e {
  a = f32[4,2,3,5] parameter(0)
  b = f32[2,5,4,3] parameter(1)
  ROOT d = f32[2,4,3,3] dot(a, b), lhs_batch_dims={1,0}, rhs_batch_dims={0,2}, lhs_contracting_dims={3}, rhs_contracting_dims={1}
}""", [ints((4, 2, 3, 5), -4, 4), ints((2, 5, 4, 3), -4, 4)])

case("dot_vector_vector", """
HloModule m
ENTRY e {
  a = f32[6] parameter(0)
  b = f32[6] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={0}, rhs_contracting_dims={0}
}""", [ints((6,), -9, 9), ints((6,), -9, 9)])

case("dot_outer_product_no_contracting", """
HloModule m
ENTRY e {
  a = f32[3] parameter(0)
  b = f32[4] parameter(1)
  ROOT d = f32[3,4] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
}""", [ints((3,), -9, 9), ints((4,), -9, 9)])

case("dot_empty_contracting_gives_zeros", """
HloModule m
ENTRY e {
  a = f32[3,0] parameter(0)
  b = f32[0,2] parameter(1)
  ROOT d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [np.zeros((3, 0), np.float32), np.zeros((0, 2), np.float32)])

case("dot_s8_preferred_s32", """
HloModule m
ENTRY e {
  a = s8[4,6] parameter(0)
  b = s8[6,3] parameter(1)
  ROOT d = s32[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [ints((4, 6), -128, 128, np.int8), ints((6, 3), -128, 128, np.int8)])

case("dot_s8_wraps", """
HloModule m
ENTRY e {
  a = s8[4,6] parameter(0)
  b = s8[6,3] parameter(1)
  ROOT d = s8[4,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [ints((4, 6), -128, 128, np.int8), ints((6, 3), -128, 128, np.int8)])

case("dot_u32_wraps", """
HloModule m
ENTRY e {
  a = u32[2,3] parameter(0)
  b = u32[3,2] parameter(1)
  ROOT d = u32[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [ints((2, 3), 0, 2**32, np.uint32), ints((3, 2), 0, 2**32, np.uint32)])

case("dot_f16_accumulates_in_f32", """
HloModule m
ENTRY e {
  a = f16[2,300] parameter(0)
  b = f16[300,3] parameter(1)
  ROOT d = f16[2,3] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [ints((2, 300), -64, 64, np.float16) / np.float16(16), ints((300, 3), -8, 8, np.float16)])

case("dot_f16_operands_f32_result", """
HloModule m
ENTRY e {
  a = f16[3,5] parameter(0)
  b = f16[5,2] parameter(1)
  ROOT d = f32[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [uniform((3, 5), np.float16), uniform((5, 2), np.float16)], tol=(1e-6, 1e-7))

case("dot_f64", """
HloModule m
ENTRY e {
  a = f64[3,4] parameter(0)
  b = f64[4,2] parameter(1)
  ROOT d = f64[3,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [uniform((3, 4), np.float64), uniform((4, 2), np.float64)], tol=(1e-14, 1e-15))

case("dot_c64", """
HloModule m
ENTRY e {
  a = c64[2,3] parameter(0)
  b = c64[3,2] parameter(1)
  ROOT d = c64[2,2] dot(a, b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}""", [(ints((2, 3), -5, 5) + 1j * ints((2, 3), -5, 5)).astype(np.complex64),
       (ints((3, 2), -5, 5) + 1j * ints((3, 2), -5, 5)).astype(np.complex64)])

# ---------------------------------------------------------------- convolution
case("conv2d_nhwc_same", """
HloModule m
ENTRY e {
  x = f32[2,5,6,3] parameter(0)
  k = f32[3,3,3,4] parameter(1)
  ROOT c = f32[2,5,6,4] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}""", [ints((2, 5, 6, 3), -4, 4), ints((3, 3, 3, 4), -4, 4)])

case("conv2d_random_tolerance", """
HloModule m
ENTRY e {
  x = f32[1,7,7,5] parameter(0)
  k = f32[3,3,5,2] parameter(1)
  ROOT c = f32[1,7,7,2] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
}""", [uniform((1, 7, 7, 5)), uniform((3, 3, 5, 2))], tol=(1e-5, 1e-6))

case("conv2d_nchw_strided_negative_pad", """
HloModule m
ENTRY e {
  x = f32[2,3,9,8] parameter(0)
  k = f32[4,3,3,2] parameter(1)
  ROOT c = f32[2,4,4,4] convolution(x, k), window={size=3x2 stride=2x2 pad=1_-1x0_0}, dim_labels=bf01_oi01->bf01
}""", [ints((2, 3, 9, 8), -4, 4), ints((4, 3, 3, 2), -4, 4)])

case("conv2d_dilations_and_reversal", """
HloModule m
ENTRY e {
  x = f32[1,5,4,2] parameter(0)
  k = f32[2,3,2,3] parameter(1)
  ROOT c = f32[1,9,3,3] convolution(x, k), window={size=2x3 pad=1_0x2_1 lhs_dilate=2x1 rhs_dilate=1x2 rhs_reversal=1x0}, dim_labels=b01f_01io->b01f
}""", [ints((1, 5, 4, 2), -4, 4), ints((2, 3, 2, 3), -4, 4)])

case("conv_odd_dim_labels", """
HloModule m
ENTRY e {
  x = f32[3,2,6,5] parameter(0)
  k = f32[3,2,4,2] parameter(1)
  ROOT c = f32[2,6,1,4] convolution(x, k), window={size=2x2 stride=1x2}, dim_labels=f0b1_i0o1->1b0f
}""", [ints((3, 2, 6, 5), -4, 4), ints((3, 2, 4, 2), -4, 4)])

case("conv_feature_groups", """
HloModule m
ENTRY e {
  x = f32[2,6,6] parameter(0)
  k = f32[3,2,6] parameter(1)
  ROOT c = f32[2,4,6] convolution(x, k), window={size=3}, dim_labels=b0f_0io->b0f, feature_group_count=3
}""", [ints((2, 6, 6), -4, 4), ints((3, 2, 6), -4, 4)])

case("conv_depthwise", """
HloModule m
ENTRY e {
  x = f32[1,5,5,4] parameter(0)
  k = f32[3,3,1,8] parameter(1)
  ROOT c = f32[1,5,5,8] convolution(x, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f, feature_group_count=4
}""", [ints((1, 5, 5, 4), -4, 4), ints((3, 3, 1, 8), -4, 4)])

case("conv_batch_groups", """
HloModule m
ENTRY e {
  x = f32[4,5,3] parameter(0)
  k = f32[2,3,6] parameter(1)
  ROOT c = f32[2,4,6] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f, batch_group_count=2
}""", [ints((4, 5, 3), -4, 4), ints((2, 3, 6), -4, 4)])

case("conv_no_spatial_dims", """
HloModule m
ENTRY e {
  x = f32[3,4] parameter(0)
  k = f32[4,5] parameter(1)
  ROOT c = f32[3,5] convolution(x, k), dim_labels=bf_io->bf
}""", [ints((3, 4), -4, 4), ints((4, 5), -4, 4)])

case("conv_s8_wraps", """
HloModule m
ENTRY e {
  x = s8[2,6,3] parameter(0)
  k = s8[2,3,2] parameter(1)
  ROOT c = s8[2,5,2] convolution(x, k), window={size=2}, dim_labels=b0f_0io->b0f
}""", [ints((2, 6, 3), -128, 128, np.int8), ints((2, 3, 2), -128, 128, np.int8)])

case("conv3d", """
HloModule m
ENTRY e {
  x = f32[1,4,4,4,2] parameter(0)
  k = f32[2,2,2,2,3] parameter(1)
  ROOT c = f32[1,2,3,3,3] convolution(x, k), window={size=2x2x2 stride=2x1x1}, dim_labels=b012f_012io->b012f
}""", [ints((1, 4, 4, 4, 2), -4, 4), ints((2, 2, 2, 2, 3), -4, 4)])

# ---------------------------------------------------------------- reduce
case("reduce_sum_rows", ADD_F32 + """
HloModule m
ENTRY e {
  x = f32[4,7] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={1}, to_apply=add
}""".replace("HloModule m\n", ""), [ints((4, 7), -50, 50)])

case("reduce_sum_cols_and_init_once", ADD_F32 + """
ENTRY e {
  x = f32[4,7] parameter(0)
  z = f32[] constant(10)
  ROOT r = f32[7] reduce(x, z), dimensions={0}, to_apply=add
}""", [ints((4, 7), -50, 50)])

case("reduce_sum_dims_0_2", ADD_F32 + """
ENTRY e {
  x = f32[3,4,5] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[4] reduce(x, z), dimensions={2,0}, to_apply=add
}""", [ints((3, 4, 5), -50, 50)])

case("reduce_all_to_scalar", ADD_F32 + """
ENTRY e {
  x = f32[3,4] parameter(0)
  z = f32[] constant(0.5)
  ROOT r = f32[] reduce(x, z), dimensions={0,1}, to_apply=add
}""", [ints((3, 4), -50, 50)])

# XLA CPU's simplifier turns a reduce over no dimensions into its operand
# (assuming the init is an identity); the interpreter computes reducer(init, x),
# so this case uses an identity init, where both agree.
case("reduce_no_dims", ADD_F32 + """
ENTRY e {
  x = f32[3,4] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,4] reduce(x, z), dimensions={}, to_apply=add
}""", [ints((3, 4), -50, 50)])

case("reduce_empty_input_gives_init", ADD_F32 + """
ENTRY e {
  x = f32[3,0] parameter(0)
  z = f32[] constant(7)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=add
}""", [np.zeros((3, 0), np.float32)])

maxnan = ints((3, 5), -9, 9)
maxnan[0, 2] = np.nan
maxnan[2, 4] = np.nan
case("reduce_max_propagates_nan", binop("mx", "f32", "maximum") + """
ENTRY e {
  x = f32[3,5] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[3] reduce(x, z), dimensions={1}, to_apply=mx
}""", [maxnan])

case("reduce_min_signed_zeros", binop("mn", "f32", "minimum") + """
ENTRY e {
  x = f32[2,3] parameter(0)
  z = f32[] constant(inf)
  ROOT r = f32[2] reduce(x, z), dimensions={1}, to_apply=mn
}""", [np.array([[0.0, -0.0, 0.0], [-0.0, 0.0, 1.0]], np.float32)])

case("reduce_s32_wraps", binop("ad", "s32", "add") + """
ENTRY e {
  x = s32[2,4] parameter(0)
  z = s32[] constant(0)
  ROOT r = s32[2] reduce(x, z), dimensions={1}, to_apply=ad
}""", [np.array([[2**31 - 1, 1, 5, 7], [-2**31, -1, 3, 3]], np.int32)])

case("reduce_pred_and_or", binop("an", "pred", "and") + binop("orr", "pred", "or") + """
ENTRY e {
  x = pred[3,4] parameter(0)
  t = pred[] constant(true)
  f = pred[] constant(false)
  a = pred[3] reduce(x, t), dimensions={1}, to_apply=an
  o = pred[4] reduce(x, f), dimensions={0}, to_apply=orr
  ROOT r = (pred[3], pred[4]) tuple(a, o)
}""", [np.array([[1, 1, 1, 1], [1, 0, 1, 1], [0, 0, 0, 0]], np.bool_)])

case("reduce_f16_sum", binop("ad", "f16", "add") + """
ENTRY e {
  x = f16[2,50] parameter(0)
  z = f16[] constant(0)
  ROOT r = f16[2] reduce(x, z), dimensions={1}, to_apply=ad
}""", [ints((2, 50), -30, 30, np.float16)])

case("reduce_variadic_argmax", """
argmax {
  av = f32[] parameter(0)
  ai = s32[] parameter(1)
  bv = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(av, bv), direction=GT
  isnan = pred[] compare(av, av), direction=NE
  eq = pred[] compare(av, bv), direction=EQ
  lti = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lti)
  g1 = pred[] or(gt, isnan)
  pick = pred[] or(g1, tie)
  v = f32[] select(pick, av, bv)
  i = s32[] select(pick, ai, bi)
  ROOT r = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  x = f32[3,6] parameter(0)
  ix = s32[3,6] parameter(1)
  ninf = f32[] constant(-inf)
  zero = s32[] constant(0)
  ROOT r = (f32[3], s32[3]) reduce(x, ix, ninf, zero), dimensions={1}, to_apply=argmax
}""", [np.array([[1, 5, 5, 2, 0, 5], [3, np.nan, 1, 9, 9, 2], [-1, -1, -1, -1, -1, -1]], np.float32),
       np.tile(np.arange(6, dtype=np.int32), (3, 1))])

# ---------------------------------------------------------------- reduce-window
case("reduce_window_cumsum_prefix", ADD_F32 + """
ENTRY e {
  x = f32[3,17] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3,17] reduce-window(x, z), window={size=1x17 pad=0_0x16_0}, to_apply=add
}""", [uniform((3, 17))], tol=(1e-6, 1e-6))

case("reduce_window_cumsum_prefix_exact", ADD_F32 + """
ENTRY e {
  x = f32[17,3] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[17,3] reduce-window(x, z), window={size=17x1 pad=16_0x0_0}, to_apply=add
}""", [ints((17, 3), -100, 100)])

case("reduce_window_reverse_cumsum", ADD_F32 + """
ENTRY e {
  x = f32[2,9] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[2,9] reduce-window(x, z), window={size=1x9 pad=0_0x0_8}, to_apply=add
}""", [ints((2, 9), -100, 100)])

case("reduce_window_cumprod_s32_init", binop("mul", "s32", "multiply") + """
ENTRY e {
  x = s32[10] parameter(0)
  z = s32[] constant(3)
  ROOT r = s32[10] reduce-window(x, z), window={size=10 pad=9_0}, to_apply=mul
}""", [ints((10,), -5, 6, np.int32)])

case("reduce_window_partial_prefix", ADD_F32 + """
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(0.5)
  ROOT r = f32[10] reduce-window(x, z), window={size=4 pad=10_0}, to_apply=add
}""", [ints((3,), -100, 100)])

case("reduce_window_maxpool_padded", binop("mx", "f32", "maximum") + """
ENTRY e {
  x = f32[1,6,7,2] parameter(0)
  z = f32[] constant(-inf)
  ROOT r = f32[1,3,4,2] reduce-window(x, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x1_1x0_0}, to_apply=mx
}""", [uniform((1, 6, 7, 2))])

case("reduce_window_dilated_strided", ADD_F32 + """
ENTRY e {
  x = f32[7,6] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[6,2] reduce-window(x, z), window={size=3x2 stride=2x3 pad=1_1x1_0 lhs_dilate=2x1 rhs_dilate=2x2}, to_apply=add
}""", [ints((7, 6), -100, 100)])

case("reduce_window_negative_padding", ADD_F32 + """
ENTRY e {
  x = f32[9] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[3] reduce-window(x, z), window={size=2 stride=2 pad=-1_-2}, to_apply=add
}""", [ints((9,), -100, 100)])

case("reduce_window_window_larger_than_input", ADD_F32 + """
ENTRY e {
  x = f32[3] parameter(0)
  z = f32[] constant(2)
  ROOT r = f32[1] reduce-window(x, z), window={size=4 pad=1_1 stride=2}, to_apply=add
}""", [ints((3,), -100, 100)])

case("reduce_window_variadic", """
red {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] add(a, c)
  m = s32[] maximum(b, d)
  ROOT r = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  x = f32[5,4] parameter(0)
  y = s32[5,4] parameter(1)
  z = f32[] constant(0)
  w = s32[] constant(-100)
  ROOT r = (f32[4,2], s32[4,2]) reduce-window(x, y, z, w), window={size=2x3 stride=1x1}, to_apply=red
}""", [ints((5, 4), -100, 100), ints((5, 4), -50, 50, np.int32)])

# ---------------------------------------------------------------- select-and-scatter
GE_F32 = """
ge {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT r = pred[] compare(a, b), direction=GE
}
"""
case("select_and_scatter_maxpool_grad", GE_F32 + ADD_F32 + """
ENTRY e {
  x = f32[1,6,6,1] parameter(0)
  s = f32[1,3,3,1] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[1,6,6,1] select-and-scatter(x, s, z), window={size=1x3x3x1 stride=1x2x2x1 pad=0_0x0_1x0_1x0_0}, select=ge, scatter=add
}""", [ints((1, 6, 6, 1), 0, 5), ints((1, 3, 3, 1), 1, 9)])

case("select_and_scatter_overlap_subtract", GE_F32 + binop("sub", "f32", "subtract") + """
ENTRY e {
  x = f32[7] parameter(0)
  s = f32[5] parameter(1)
  z = f32[] constant(100)
  ROOT r = f32[7] select-and-scatter(x, s, z), window={size=3 stride=1}, select=ge, scatter=sub
}""", [np.array([1, 5, 3, 5, 2, 2, 0], np.float32), np.array([1, 2, 4, 8, 16], np.float32)])

case("select_and_scatter_padding_only_windows", GE_F32 + ADD_F32 + """
ENTRY e {
  x = f32[4] parameter(0)
  s = f32[5] parameter(1)
  z = f32[] constant(0)
  ROOT r = f32[4] select-and-scatter(x, s, z), window={size=2 stride=2 pad=3_3}, select=ge, scatter=add
}""", [np.array([1, 2, 3, 4], np.float32), np.array([1, 2, 4, 8, 16], np.float32)])

# ---------------------------------------------------------------- gather
case("gather_take_rows_clamped", """
ENTRY e {
  t = f32[10,4] parameter(0)
  i = s32[6] parameter(1)
  ROOT g = f32[6,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}""", [ints((10, 4), -100, 100), np.array([0, 9, 3, -1, 10, 2**31 - 1], np.int32)])

case("gather_2d_slices_index_vector_first", """
ENTRY e {
  o = f32[5,6] parameter(0)
  i = s64[2,3] parameter(1)
  ROOT g = f32[2,3,3] gather(o, i), offset_dims={0,1}, collapsed_slice_dims={}, start_index_map={1,0}, index_vector_dim=0, slice_sizes={2,3}
}""", [ints((5, 6), -100, 100), np.array([[0, 4, 5], [1, 3, -2]], np.int64)])

case("gather_batching_dims", """
ENTRY e {
  o = f32[2,3,4] parameter(0)
  i = s32[2,5,1] parameter(1)
  ROOT g = f32[2,5,4] gather(o, i), offset_dims={2}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1,4}
}""", [ints((2, 3, 4), -100, 100), np.array([[[0], [2], [5], [-1], [1]], [[1], [1], [0], [2], [9]]], np.int32)])

case("gather_batching_dim_not_leading", """
ENTRY e {
  o = f32[3,2,5] parameter(0)
  i = u8[4,2,2] parameter(1)
  ROOT g = f32[4,2,2] gather(o, i), offset_dims={2}, collapsed_slice_dims={0}, start_index_map={0,2}, operand_batching_dims={1}, start_indices_batching_dims={1}, index_vector_dim=2, slice_sizes={1,1,2}
}""", [ints((3, 2, 5), -100, 100), rng.integers(0, 7, size=(4, 2, 2)).astype(np.uint8)])

case("gather_empty_indices", """
ENTRY e {
  t = f32[10,4] parameter(0)
  i = s32[0] parameter(1)
  ROOT g = f32[0,4] gather(t, i), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,4}
}""", [ints((10, 4), -100, 100), np.zeros((0,), np.int32)])

# ---------------------------------------------------------------- scatter
case("scatter_add_duplicates_and_out_of_bounds", ADD_F32 + """
ENTRY e {
  o = f32[6] parameter(0)
  i = s32[8,1] parameter(1)
  u = f32[8] parameter(2)
  ROOT s = f32[6] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
}""", [ints((6,), -10, 10), np.array([[1], [1], [5], [6], [-1], [0], [1], [100]], np.int32), ints((8,), -10, 10)])

SET_F32 = """
set {
  a = f32[] parameter(0)
  ROOT b = f32[] parameter(1)
}
"""
case("scatter_set_last_wins", SET_F32 + """
ENTRY e {
  o = f32[5] parameter(0)
  i = s32[4] parameter(1)
  u = f32[4] parameter(2)
  ROOT s = f32[5] scatter(o, i, u), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=set
}""", [ints((5,), -10, 10), np.array([2, 0, 2, 7], np.int32), np.array([1, 2, 3, 4], np.float32)])

case("scatter_windows_partially_out_of_bounds_skipped", ADD_F32 + """
ENTRY e {
  o = f32[5,4] parameter(0)
  i = s32[4,2] parameter(1)
  u = f32[4,2,3] parameter(2)
  ROOT s = f32[5,4] scatter(o, i, u), update_window_dims={1,2}, inserted_window_dims={}, scatter_dims_to_operand_dims={0,1}, index_vector_dim=1, to_apply=add
}""", [np.zeros((5, 4), np.float32), np.array([[0, 0], [3, 1], [4, 1], [1, 2]], np.int32), ints((4, 2, 3), 1, 9)])

case("scatter_variadic_pair", """
comb {
  a = f32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = s32[] parameter(3)
  s = f32[] subtract(a, c)
  m = s32[] multiply(b, d)
  ROOT r = (f32[], s32[]) tuple(s, m)
}
ENTRY e {
  o1 = f32[4] parameter(0)
  o2 = s32[4] parameter(1)
  i = s32[5,1] parameter(2)
  ua = f32[5] parameter(3)
  ub = s32[5] parameter(4)
  ROOT s = (f32[4], s32[4]) scatter(o1, o2, i, ua, ub), update_window_dims={}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=comb
}""", [ints((4,), -10, 10), ints((4,), -5, 5, np.int32), np.array([[3], [0], [3], [-2], [3]], np.int32),
       ints((5,), -10, 10), ints((5,), -5, 5, np.int32)])

case("scatter_batching_dims", ADD_F32 + """
ENTRY e {
  o = f32[2,5] parameter(0)
  i = s32[2,3] parameter(1)
  u = f32[2,3] parameter(2)
  ROOT s = f32[2,5] scatter(o, i, u), update_window_dims={}, inserted_window_dims={1}, input_batching_dims={0}, scatter_indices_batching_dims={0}, scatter_dims_to_operand_dims={1}, index_vector_dim=2, to_apply=add
}""", [np.zeros((2, 5), np.float32), np.array([[0, 4, 4], [2, 5, -1]], np.int32), ints((2, 3), 1, 9)])

case("scatter_max_s32", binop("mx", "s32", "maximum") + """
ENTRY e {
  o = s32[3,2] parameter(0)
  i = s32[4,1] parameter(1)
  u = s32[4,2] parameter(2)
  ROOT s = s32[3,2] scatter(o, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=mx
}""", [ints((3, 2), -50, 50, np.int32), np.array([[2], [0], [2], [1]], np.int32), ints((4, 2), -50, 50, np.int32)])

# ---------------------------------------------------------------- sort
TOTAL_ORDER_LT = """
cmp {
  p0 = f32[] parameter(0)
  p1 = f32[] parameter(1)
  ROOT lt = pred[] compare(p0, p1), direction=LT, type=TOTALORDER
}
"""
JAX_LT = """
cmp {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ne = pred[] compare(a, a), direction=NE
  qnan = f32[] constant(nan)
  zero = f32[] constant(0)
  eq = pred[] compare(a, zero), direction=EQ
  sa = f32[] select(eq, zero, a)
  sb = f32[] select(ne, qnan, sa)
  ne2 = pred[] compare(b, b), direction=NE
  eq2 = pred[] compare(b, zero), direction=EQ
  ta = f32[] select(eq2, zero, b)
  tb = f32[] select(ne2, qnan, ta)
  ROOT lt = pred[] compare(sb, tb), direction=LT, type=TOTALORDER
}
"""
special = np.array([3, np.nan, -0.0, 1, -np.inf, 0.0, -np.nan, 3, np.inf, -1, 0.0, -0.0], np.float32)
case("sort_total_order_specials", TOTAL_ORDER_LT + """
ENTRY e {
  x = f32[12] parameter(0)
  ROOT s = f32[12] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
}""", [special])

case("sort_jax_comparator_stable_argsort", JAX_LT.replace("b = f32[] parameter(1)", "b = f32[] parameter(1)\n  i = s32[] parameter(2)\n  j = s32[] parameter(3)") + """
ENTRY e {
  x = f32[2,12] parameter(0)
  i = s32[2,12] parameter(1)
  ROOT s = (f32[2,12], s32[2,12]) sort(x, i), dimensions={1}, is_stable=true, to_apply=cmp
}""", [np.stack([special, special[::-1]]), np.tile(np.arange(12, dtype=np.int32), (2, 1))])

case("sort_gt_s32_dim0", """
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT gt = pred[] compare(a, b), direction=GT
}
ENTRY e {
  x = s32[6,3] parameter(0)
  ROOT s = s32[6,3] sort(x), dimensions={0}, to_apply=cmp
}""", [ints((6, 3), -4, 4, np.int32)])

case("sort_two_keys_lexicographic", """
cmp {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  c = f32[] parameter(2)
  d = f32[] parameter(3)
  e = s32[] parameter(4)
  f = s32[] parameter(5)
  lt0 = pred[] compare(a, b), direction=LT
  eq0 = pred[] compare(a, b), direction=EQ
  lt1 = pred[] compare(c, d), direction=LT, type=TOTALORDER
  both = pred[] and(eq0, lt1)
  ROOT r = pred[] or(lt0, both)
}
ENTRY e {
  x = s32[10] parameter(0)
  y = f32[10] parameter(1)
  z = s32[10] parameter(2)
  ROOT s = (s32[10], f32[10], s32[10]) sort(x, y, z), dimensions={0}, is_stable=true, to_apply=cmp
}""", [ints((10,), 0, 3, np.int32), ints((10,), 0, 3), np.arange(10, dtype=np.int32)])

case("sort_u8_descending_by_reversed_operands", """
cmp {
  a = u8[] parameter(0)
  b = u8[] parameter(1)
  ROOT lt = pred[] compare(b, a), direction=LT
}
ENTRY e {
  x = u8[9] parameter(0)
  ROOT s = u8[9] sort(x), dimensions={0}, is_stable=true, to_apply=cmp
}""", [rng.integers(0, 256, size=(9,)).astype(np.uint8)])

# ---------------------------------------------------------------- topk
topk_in = np.array([[1, np.nan, 3, -0.0, 0.0, 3, 2], [-np.inf, -np.nan, 2, 2, 2, np.inf, -1]], np.float32)
case("topk_largest_nan_ties", """
ENTRY e {
  x = f32[2,7] parameter(0)
  ROOT r = (f32[2,3], s32[2,3]) topk(x), k=3, largest=true
}""", [topk_in])

case("topk_smallest_k_equals_n", """
ENTRY e {
  x = f32[2,7] parameter(0)
  ROOT r = (f32[2,7], s32[2,7]) topk(x), k=7, largest=false
}""", [topk_in])

case("topk_s32_rank3", """
ENTRY e {
  x = s32[2,3,5] parameter(0)
  ROOT r = (s32[2,3,2], s32[2,3,2]) topk(x), k=2, largest=true
}""", [ints((2, 3, 5), -3, 3, np.int32)])

# ---------------------------------------------------------------- fft
def cplx(shape, dtype=np.complex64):
    return (rng.uniform(-1, 1, size=shape) + 1j * rng.uniform(-1, 1, size=shape)).astype(dtype)


for n in (16, 12, 100):
    case("fft_c64_%d" % n, """
ENTRY e {
  x = c64[3,%d] parameter(0)
  ROOT f = c64[3,%d] fft(x), fft_type=FFT, fft_length={%d}
}""" % (n, n, n), [cplx((3, n))], tol=(1e-4, 1e-5))

case("ifft_c64_2d", """
ENTRY e {
  x = c64[2,5,6] parameter(0)
  ROOT f = c64[2,5,6] fft(x), fft_type=IFFT, fft_length={5,6}
}""", [cplx((2, 5, 6))], tol=(1e-4, 1e-6))

case("fft_c128_3d", """
ENTRY e {
  x = c128[3,4,7] parameter(0)
  ROOT f = c128[3,4,7] fft(x), fft_type=FFT, fft_length={3,4,7}
}""", [cplx((3, 4, 7), np.complex128)], tol=(1e-12, 1e-12))

case("rfft_f32_odd", """
ENTRY e {
  x = f32[2,15] parameter(0)
  ROOT f = c64[2,8] fft(x), fft_type=RFFT, fft_length={15}
}""", [uniform((2, 15))], tol=(1e-4, 1e-5))

case("rfft_f32_2d", """
ENTRY e {
  x = f32[4,6] parameter(0)
  ROOT f = c64[4,4] fft(x), fft_type=RFFT, fft_length={4,6}
}""", [uniform((4, 6))], tol=(1e-4, 1e-5))

for n in (16, 15):
    h = n // 2 + 1
    case("irfft_f32_%d" % n, """
ENTRY e {
  x = c64[2,%d] parameter(0)
  ROOT f = f32[2,%d] fft(x), fft_type=IRFFT, fft_length={%d}
}""" % (h, n, n), [cplx((2, h))], tol=(1e-4, 1e-5))

case("irfft_f64_2d", """
ENTRY e {
  x = c128[3,5] parameter(0)
  ROOT f = f64[3,8] fft(x), fft_type=IRFFT, fft_length={3,8}
}""", [cplx((3, 5), np.complex128)], tol=(1e-12, 1e-12))

# ---------------------------------------------------------------- cholesky
def spd(n, dtype):
    a = rng.uniform(-1, 1, size=(n, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, size=(n, n))
    return (a @ a.conj().T + n * np.eye(n)).astype(dtype)


chol_in = np.stack([spd(4, np.float32), spd(4, np.float32) - 8 * np.eye(4, dtype=np.float32), spd(4, np.float32)])
chol_in[2][np.triu_indices(4, 1)] = 1e6  # garbage the lower factor must not read
case("cholesky_lower_batch_with_non_pd", """
ENTRY e {
  a = f32[3,4,4] parameter(0)
  ROOT l = f32[3,4,4] cholesky(a), lower=true
}""", [chol_in], tol=(1e-5, 1e-5))

chol_up = np.stack([spd(5, np.float64), spd(5, np.float64)])
chol_up[0][np.tril_indices(5, -1)] = -7.0  # garbage the upper factor must not read
case("cholesky_upper_f64", """
ENTRY e {
  a = f64[2,5,5] parameter(0)
  ROOT u = f64[2,5,5] cholesky(a), lower=false
}""", [chol_up], tol=(1e-12, 1e-12))

case("cholesky_c64_lower", """
ENTRY e {
  a = c64[3,3] parameter(0)
  ROOT l = c64[3,3] cholesky(a), lower=true
}""", [spd(3, np.complex64)], tol=(1e-5, 1e-5))

# ---------------------------------------------------------------- triangular-solve
def tri_matrix(batch, n, dtype):
    a = rng.uniform(-1, 1, size=(batch, n, n))
    if np.issubdtype(dtype, np.complexfloating):
        a = a + 1j * rng.uniform(-1, 1, size=(batch, n, n))
    a = a + 3 * np.eye(n)
    return a.astype(dtype)


for left in (True, False):
    for lower in (True, False):
        for trans in ("NO_TRANSPOSE", "TRANSPOSE"):
            for unit in (False, True):
                name = "trsm_%s_%s_%s_%s" % ("left" if left else "right", "lower" if lower else "upper",
                                               trans.lower(), "unit" if unit else "diag")
                bshape = (2, 4, 3) if left else (2, 3, 4)
                case(name, """
ENTRY e {
  a = f32[2,4,4] parameter(0)
  b = f32[%s] parameter(1)
  ROOT x = f32[%s] triangular-solve(a, b), left_side=%s, lower=%s, unit_diagonal=%s, transpose_a=%s
}""" % (",".join(map(str, bshape)), ",".join(map(str, bshape)), str(left).lower(), str(lower).lower(),
                    str(unit).lower(), trans), [tri_matrix(2, 4, np.float32), uniform(bshape)], tol=(1e-4, 1e-5))

case("trsm_c64_adjoint_right", """
ENTRY e {
  a = c64[3,3] parameter(0)
  b = c64[2,3] parameter(1)
  ROOT x = c64[2,3] triangular-solve(a, b), left_side=false, lower=true, transpose_a=ADJOINT
}""", [tri_matrix(1, 3, np.complex64)[0], cplx((2, 3))], tol=(1e-4, 1e-5))

case("trsm_c64_adjoint_left_upper", """
ENTRY e {
  a = c64[3,3] parameter(0)
  b = c64[3,2] parameter(1)
  ROOT x = c64[3,2] triangular-solve(a, b), left_side=true, lower=false, transpose_a=ADJOINT
}""", [tri_matrix(1, 3, np.complex64)[0], cplx((3, 2))], tol=(1e-4, 1e-5))

# ---------------------------------------------------------------- scalars and size-1 edges
case("dot_scalars", """
ENTRY e {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT d = f32[] dot(a, b), lhs_contracting_dims={}, rhs_contracting_dims={}
}""", [np.float32(3.5), np.float32(-2.0)])

case("reduce_scalar_input", ADD_F32 + """
ENTRY e {
  x = f32[] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[] reduce(x, z), dimensions={}, to_apply=add
}""", [np.float32(4.25)])

case("reduce_window_size_one_dims", ADD_F32 + """
ENTRY e {
  x = f32[1,5,1] parameter(0)
  z = f32[] constant(0)
  ROOT r = f32[1,4,1] reduce-window(x, z), window={size=1x2x1}, to_apply=add
}""", [ints((1, 5, 1), -9, 9)])

case("sort_size_one_dimension", TOTAL_ORDER_LT + """
ENTRY e {
  x = f32[4,1] parameter(0)
  ROOT s = f32[4,1] sort(x), dimensions={1}, is_stable=true, to_apply=cmp
}""", [ints((4, 1), -9, 9)])

case("topk_k1_all_ties", """
ENTRY e {
  x = s32[3,4] parameter(0)
  ROOT r = (s32[3,1], s32[3,1]) topk(x), k=1, largest=false
}""", [np.array([[2, 2, 2, 2], [5, 1, 1, 5], [0, 3, 0, 3]], np.int32)])

case("fft_size_one_dims_2d", """
ENTRY e {
  x = c64[2,1,6] parameter(0)
  ROOT f = c64[2,1,6] fft(x), fft_type=FFT, fft_length={1,6}
}""", [cplx((2, 1, 6))], tol=(1e-5, 1e-6))

case("cholesky_1x1_and_negative", """
ENTRY e {
  a = f32[2,1,1] parameter(0)
  ROOT l = f32[2,1,1] cholesky(a), lower=true
}""", [np.array([[[9.0]], [[-4.0]]], np.float32)], tol=(1e-6, 0))

case("trsm_1x1_batched", """
ENTRY e {
  a = f32[3,1,1] parameter(0)
  b = f32[3,1,2] parameter(1)
  ROOT x = f32[3,1,2] triangular-solve(a, b), left_side=true, lower=true, transpose_a=NO_TRANSPOSE
}""", [np.array([[[2.0]], [[-4.0]], [[0.5]]], np.float32), ints((3, 1, 2), -9, 9)], tol=(1e-6, 0))

case("gather_scalar_slices_from_3d", """
ENTRY e {
  o = s32[3,4,2] parameter(0)
  i = s32[5,3] parameter(1)
  ROOT g = s32[5] gather(o, i), offset_dims={}, collapsed_slice_dims={0,1,2}, start_index_map={0,1,2}, index_vector_dim=1, slice_sizes={1,1,1}
}""", [np.arange(24, dtype=np.int32).reshape(3, 4, 2), np.array([[0, 0, 0], [2, 3, 1], [5, -1, 9], [1, 2, 0], [0, 3, 1]], np.int32)])


def main():
    lines = ["# Generated by scripts/gen_kernel_cases.py with jax %s (XLA CPU); do not edit." % jax.__version__]
    for name, hlo, args, tol in CASES:
        text = hlo if hlo.lstrip().startswith("HloModule") else "HloModule %s\n%s" % (name, hlo)
        try:
            outs = run_xla(text, args)
        except Exception as e:  # noqa: BLE001
            print("case %s failed on XLA CPU: %s" % (name, e), file=sys.stderr)
            raise
        lines.append("case %s" % name)
        lines.append("tol exact" if tol == "exact" else "tol %r %r" % tol)
        lines.append("hlo")
        lines.extend(text.splitlines())
        lines.append("end")
        for a in args:
            lines.append("arg %s %s" % (shape_text(a), hex_bytes(a)))
        for o in outs:
            lines.append("out %s %s" % (shape_text(o), hex_bytes(o)))
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write("\n".join(lines) + "\n")
    print("wrote %d cases to %s (%d bytes)" % (len(CASES), OUT, os.path.getsize(OUT)))


if __name__ == "__main__":
    main()
