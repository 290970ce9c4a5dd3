#!/usr/bin/env python3
"""Conformance cases for HLO operations JAX does not emit, from hand-written HLO.

Some operations XLA accepts never come out of `jax.jit` (today: `scan`, and
dynamic dimensions with `set-dimension-size`/`get-dimension-size`), so
the JAX-lowered corpora cannot cover them. Each case here is HLO text written
by hand; XLA CPU (through jaxlib) parses it, compiles it and runs it on seeded
random arguments, and its outputs and optimized module are stored as a case
folder in `tests/xla_ops/` (the format of `tests/conformance/README.md`).
`tests/tests/xla_ops.rs` runs the folder on every platform.

Requires: pip install jax (CPU). Run from anywhere:
  python3 scripts/gen_xla_op_cases.py [CASE...]
(with names, only those cases are rewritten).
"""

import os
import shutil
import sys
import zlib

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402
from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import case_meta, write_files  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tests", "xla_ops")

ADD_PAIR = """
add_pair {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  sum = f32[] add(x, acc)
  ROOT out = (f32[], f32[]) tuple(sum, sum)
}
"""

ADD_F32 = """
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
"""

SUM_S32 = """
sum_s32 {
  a = s32[] parameter(0)
  b = s32[] parameter(1)
  ROOT s = s32[] add(a, b)
}
"""

COMPOSITE = """
my.scale_add {
  a = f32[4] parameter(0)
  three = f32[] constant(3)
  b3 = f32[4] broadcast(three), dimensions={}
  m = f32[4] multiply(a, b3)
  one = f32[] constant(1)
  b1 = f32[4] broadcast(one), dimensions={}
  ROOT r = f32[4] add(m, b1)
}

ENTRY main {
  x = f32[4] parameter(0)
  c = f32[4] call(x), to_apply=my.scale_add, is_composite=true, frontend_attributes={composite.attributes={scale = 3.000000e+00 : f32},composite.name="my.scale_add",composite.version="2"}
  two = f32[] constant(2)
  b2 = f32[4] broadcast(two), dimensions={}
  ROOT y = f32[4] multiply(c, b2)
}
"""
PRED = """
ENTRY main {
  x = f32[6] parameter(0)
  zero = f32[] constant(0)
  z = f32[6] broadcast(zero), dimensions={}
  p = pred[6] compare(x, z), direction=GT
  b = pred[6] bitcast-convert(p)
  n = pred[6] not(b)
  bb = pred[6] bitcast-convert(n)
  ROOT t = (pred[6], pred[6]) tuple(b, bb)
}
"""
def convert_pred_case():
    """pred converted to every real and complex type, and every real type
    (integral values, then 0, -0, NaN and 0.5) converted to pred."""
    TYPES = ["s8","u8","s16","u16","s32","u32","s64","u64","f16","bf16","f32","f64"]
    lines = ["ENTRY main {", "  x = f32[6] parameter(0)", "  zero = f32[] constant(0)", "  z = f32[6] broadcast(zero), dimensions={}",
     "  p = pred[6] compare(x, z), direction=GT",
     "  two = f32[] constant(2)", "  b2 = f32[6] broadcast(two), dimensions={}", "  x2 = f32[6] multiply(x, b2)",
     "  ax = f32[6] abs(x2)", "  r = f32[6] round-nearest-even(ax)",
     "  special = f32[4] constant({0, -0, nan, 0.5})"]
    outs = []
    for t in TYPES + ["c64", "c128"]:
        lines.append(f"  to_{t} = {t}[6] convert(p)"); outs.append((f"{t}[6]", f"to_{t}"))
    for t in TYPES:
        lines.append(f"  r_{t} = {t}[6] convert(r)")
        lines.append(f"  back_{t} = pred[6] convert(r_{t})"); outs.append(("pred[6]", f"back_{t}"))
    for t in ["f16","bf16","f32","f64"]:
        lines.append(f"  s_{t} = {t}[4] convert(special)")
        lines.append(f"  sp_{t} = pred[4] convert(s_{t})"); outs.append(("pred[4]", f"sp_{t}"))
    lines.append("  ROOT t = (%s) tuple(%s)" % (", ".join(s for s,_ in outs), ", ".join(n for _,n in outs)))
    lines.append("}")
    return "\n" + "\n".join(lines) + "\n"


CONVERT_PRED = convert_pred_case()
FFT_EMPTY = """
ENTRY main {
  a = c64[1,1,1,0] parameter(0)
  fa = c64[1,1,1,0] fft(a), fft_type=FFT, fft_length={1}
  b = c64[0,1,0,1] parameter(1)
  fb = c64[0,1,0,1] fft(b), fft_type=FFT, fft_length={1,1,1}
  c = c64[2,1,0] parameter(2)
  fc = c64[2,1,0] fft(c), fft_type=IFFT, fft_length={1,1}
  d = f32[0,4] parameter(3)
  fd = c64[0,3] fft(d), fft_type=RFFT, fft_length={4}
  e = c64[3,0] parameter(4)
  fe = f32[3,0] fft(e), fft_type=IRFFT, fft_length={0}
  g = c128[0,2] parameter(5)
  fg = c128[0,2] fft(g), fft_type=FFT, fft_length={2}
  ROOT t = (c64[1,1,1,0], c64[0,1,0,1], c64[2,1,0], c64[0,3], f32[3,0], c128[0,2]) tuple(fa, fb, fc, fd, fe, fg)
}
"""
ZERO_OPS = """
lt {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT c = pred[] compare(a, b), direction=LT
}

add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}

ENTRY main {
  x = f32[0,3] parameter(0)
  y = f32[3,0] parameter(1)
  sx = f32[0,3] sort(x), dimensions={1}, to_apply=lt
  sy = f32[3,0] sort(y), dimensions={1}, to_apply=lt
  sy0 = f32[3,0] sort(y), dimensions={0}, to_apply=lt
  zero = f32[] constant(0)
  rw = f32[0,2] reduce-window(x, zero), window={size=1x2}, to_apply=add
  rwy = f32[3,0] reduce-window(y, zero), window={size=2x1 pad=1_0x0_0}, to_apply=add
  img = f32[0,4,4,2] parameter(2)
  k = f32[3,3,2,5] parameter(3)
  conv = f32[0,4,4,5] convolution(img, k), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  img2 = f32[1,4,4,0] parameter(4)
  k2 = f32[3,3,0,5] parameter(5)
  conv2 = f32[1,4,4,5] convolution(img2, k2), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  k3 = f32[3,3,2,0] parameter(6)
  img3 = f32[1,4,4,2] parameter(7)
  conv3 = f32[1,4,4,0] convolution(img3, k3), window={size=3x3 pad=1_1x1_1}, dim_labels=b01f_01io->b01f
  table = f32[5,3] parameter(8)
  idx = s32[0] parameter(9)
  idx2 = s32[0,1] reshape(idx)
  g = f32[0,3] gather(table, idx2), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,3}
  ix = s32[2,1] constant({{1},{4}})
  g2 = f32[2,0] gather(y, ix), offset_dims={1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=1, slice_sizes={1,0}
  ROOT t = (f32[0,3], f32[3,0], f32[3,0], f32[0,2], f32[3,0], f32[0,4,4,5], f32[1,4,4,5], f32[1,4,4,0], f32[0,3], f32[2,0]) tuple(sx, sy, sy0, rw, rwy, conv, conv2, conv3, g, g2)
}
"""


CASES = {
    # The form of XLA's own tests: an inclusive prefix sum, reversed, seeded.
    "scan_prefix_sum_reverse": ADD_PAIR + """
ENTRY main {
  x = f32[100] parameter(0)
  seed = f32[] parameter(1)
  scan = (f32[100], f32[]) scan(x, seed), dimensions={0}, num_carries=1, is_reverse=true, is_associative=true, to_apply=add_pair
  out = f32[100] get-tuple-element(scan), index=0
  carry = f32[] get-tuple-element(scan), index=1
  b = f32[100] broadcast(carry), dimensions={}
  ROOT r = f32[100] add(out, b)
}
""",
    # Two inputs of different types along a middle dimension, two carries,
    # two outputs of different types; the order of operations matters
    # (a running product mixed with a sum), so the steps' order is checked.
    "scan_two_inputs_two_carries": """
step {
  x = f32[3,4] parameter(0)
  k = s32[3,4] parameter(1)
  acc = f32[3,4] parameter(2)
  count = s32[3,4] parameter(3)
  half = f32[] constant(0.5)
  halves = f32[3,4] broadcast(half), dimensions={}
  scaled = f32[3,4] multiply(acc, halves)
  kf = f32[3,4] convert(k)
  prod = f32[3,4] multiply(x, kf)
  next = f32[3,4] add(scaled, prod)
  one = s32[] constant(1)
  ones = s32[3,4] broadcast(one), dimensions={}
  next_count = s32[3,4] add(count, ones)
  bigger = pred[3,4] compare(next, acc), direction=GT
  ROOT out = (f32[3,4], pred[3,4], f32[3,4], s32[3,4]) tuple(next, bigger, next, next_count)
}

ENTRY main {
  x = f32[3,7,4] parameter(0)
  k = s32[3,7,4] parameter(1)
  acc0 = f32[3,4] parameter(2)
  zero = s32[] constant(0)
  count0 = s32[3,4] broadcast(zero), dimensions={}
  ROOT scan = (f32[3,7,4], pred[3,7,4], f32[3,4], s32[3,4]) scan(x, k, acc0, count0), dimensions={1}, num_carries=2, to_apply=step
}
""",
    # Outputs only (no carry): the body's one result is stacked.
    "scan_map_no_carry": """
square {
  x = f32[5] parameter(0)
  ROOT y = f32[5] multiply(x, x)
}

ENTRY main {
  x = f32[6,5] parameter(0)
  ROOT scan = f32[6,5] scan(x), dimensions={0}, num_carries=0, to_apply=square
}
""",
    # A carry only (no outputs): a fold whose result is the final carry.
    "scan_fold_carry_only": """
fold {
  x = f32[] parameter(0)
  acc = f32[] parameter(1)
  ax = f32[] multiply(acc, x)
  ROOT next = f32[] add(ax, x)
}

ENTRY main {
  x = f32[9] parameter(0)
  init = f32[] constant(1)
  ROOT scan = f32[] scan(x, init), dimensions={0}, num_carries=1, to_apply=fold
}
""",
    # A recurrent cell: the carries are a state vector and the weights (passed
    # through unchanged), each step a small matmul and tanh, the per-step
    # states stacked on the last dimension.
    "scan_rnn_cell": """
cell {
  x = f32[4] parameter(0)
  h = f32[4] parameter(1)
  w = f32[4,4] parameter(2)
  wh = f32[4] dot(w, h), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  pre = f32[4] add(wh, x)
  next = f32[4] tanh(pre)
  ROOT out = (f32[4], f32[4], f32[4,4]) tuple(next, next, w)
}

ENTRY main {
  xs = f32[4,12] parameter(0)
  h0 = f32[4] parameter(1)
  w = f32[4,4] parameter(2)
  ROOT scan = (f32[4,12], f32[4], f32[4,4]) scan(xs, h0, w), dimensions={1}, num_carries=2, to_apply=cell
}
""",
    # set-dimension-size from an argument; a sum, a max and an elementwise op
    # over the dynamic dimension, its size read back. (No case returns a
    # dynamic array: XLA leaves the elements past its size unspecified.)
    "dynamic_reduce_and_size": ADD_F32 + """

max {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT m = f32[] maximum(a, b)
}

ENTRY main {
  x = f32[10] parameter(0)
  n = s32[] parameter(1)
  d = f32[<=10] set-dimension-size(x, n), dimensions={0}
  zero = f32[] constant(0)
  sum = f32[] reduce(d, zero), dimensions={0}, to_apply=add
  low = f32[] constant(-inf)
  top = f32[] reduce(d, low), dimensions={0}, to_apply=max
  size = s32[] get-dimension-size(d), dimensions={0}
  e = f32[<=10] exponential(d)
  esum = f32[] reduce(e, zero), dimensions={0}, to_apply=add
  ROOT t = (f32[], f32[], s32[], f32[]) tuple(sum, top, size, esum)
}
""",
    # A dynamic contracting dimension (padding must add nothing), a dynamic
    # batch-like dimension carried through broadcast and transpose, and a
    # reduction over the static dimension of a dynamic array.
    "dynamic_dot_broadcast_transpose": ADD_F32 + """

ENTRY main {
  x = f32[8,6] parameter(0)
  w = f32[6,3] parameter(1)
  k = s32[] constant(4)
  rows = s32[] constant(5)
  xk = f32[8,<=6] set-dimension-size(x, k), dimensions={1}
  y = f32[8,3] dot(xk, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  xr = f32[<=8,6] set-dimension-size(x, rows), dimensions={0}
  b = f32[3,<=8,6] broadcast(xr), dimensions={1,2}
  t = f32[6,3,<=8] transpose(b), dimensions={2,0,1}
  zero = f32[] constant(0)
  r = f32[6,<=8] reduce(t, zero), dimensions={1}, to_apply=add
  rr = f32[6] reduce(r, zero), dimensions={1}, to_apply=add
  n = s32[] get-dimension-size(t), dimensions={2}
  ROOT out = (f32[8,3], f32[6], s32[]) tuple(y, rr, n)
}
""",
    # The cases below follow XLA's dynamic-padder execution tests, with sizes
    # read from an argument (clamped into the bound) where the test had a
    # constant. Every result is static or sliced to its real elements: XLA
    # leaves a dynamic result's elements past its size unspecified.
    #
    # Elementwise ops on operands of different sizes: size 1 is broadcast
    # (XLA's implicit broadcast), otherwise the smaller size wins.
    "dynamic_elementwise_mixed_sizes": SUM_S32 + """
ENTRY main {
  x = s32[4,2] parameter(0)
  y = s32[4,2] parameter(1)
  n = s32[] parameter(2)
  lo = s32[] constant(2)
  hi = s32[] constant(4)
  m = s32[] clamp(lo, n, hi)
  one = s32[] constant(1)
  three = s32[] constant(3)
  x1 = s32[<=4,2] set-dimension-size(x, one), dimensions={0}
  y3 = s32[<=4,2] set-dimension-size(y, three), dimensions={0}
  xm = s32[<=4,2] set-dimension-size(x, m), dimensions={0}
  spread = s32[<=4,2] add(x1, y3)
  narrowed = s32[<=4,2] multiply(xm, y3)
  c = s32[<=4,2] clamp(xm, y3, xm)
  zero = s32[] constant(0)
  r0 = s32[2] reduce(spread, zero), dimensions={0}, to_apply=sum_s32
  r1 = s32[2] reduce(narrowed, zero), dimensions={0}, to_apply=sum_s32
  r2 = s32[2] reduce(c, zero), dimensions={0}, to_apply=sum_s32
  size_a = s32[] get-dimension-size(spread), dimensions={0}
  size_b = s32[] get-dimension-size(narrowed), dimensions={0}
  ROOT out = (s32[2], s32[2], s32[2], s32[], s32[]) tuple(r0, r1, r2, size_a, size_b)
}
""",
    # Reshapes that merge dynamic dimensions (the real elements are gathered
    # to the front), keep one, or reach a unit dimension of size 0; a
    # declared-static set-dimension-size still masks.
    "dynamic_reshape_merge": SUM_S32 + """
ENTRY main {
  x = s32[2,3,3] parameter(0)
  y = s32[1,2,5,1] parameter(1)
  n = s32[] parameter(2)
  lo = s32[] constant(1)
  hi = s32[] constant(3)
  k = s32[] clamp(lo, n, hi)
  x1 = s32[2,<=3,3] set-dimension-size(x, k), dimensions={1}
  x2 = s32[2,<=3,<=3] set-dimension-size(x1, k), dimensions={2}
  flat = s32[<=18] reshape(x2)
  zero = s32[] constant(0)
  total = s32[] reduce(flat, zero), dimensions={0}, to_apply=sum_s32
  count = s32[] get-dimension-size(flat), dimensions={0}
  y3 = s32[1,2,5,1] set-dimension-size(y, hi), dimensions={2}
  yflat = s32[10] reshape(y3)
  ytotal = s32[] reduce(yflat, zero), dimensions={0}, to_apply=sum_s32
  ykeep = s32[2,5] reshape(y3)
  yrows = s32[2] reduce(ykeep, zero), dimensions={1}, to_apply=sum_s32
  y0 = s32[1,2,5,1] set-dimension-size(y, zero), dimensions={0}
  y0flat = s32[10] reshape(y0)
  y0total = s32[] reduce(y0flat, zero), dimensions={0}, to_apply=sum_s32
  ROOT out = (s32[], s32[], s32[], s32[2], s32[]) tuple(total, count, ytotal, yrows, y0total)
}
""",
    # A split whose output dimension cannot be told apart: XLA CPU (through
    # StableHLO, which drops inferred_dimension) reshapes the padded buffer.
    "dynamic_reshape_ambiguous_split": SUM_S32 + """
ENTRY main {
  x = s32[12] parameter(0)
  eight = s32[] constant(8)
  xd = s32[12] set-dimension-size(x, eight), dimensions={0}
  r = s32[2,3,2] reshape(xd), inferred_dimension=1
  zero = s32[] constant(0)
  ROOT out = s32[2,2] reduce(r, zero), dimensions={1}, to_apply=sum_s32
}
""",
    # dynamic-reshape merging two dynamic dimensions, and one splitting a
    # dynamic dimension into three, each summed.
    "dynamic_reshape_op": SUM_S32 + """
ENTRY main {
  x = s32[2,3,3] parameter(0)
  v = s32[18] parameter(1)
  two = s32[] constant(2)
  eight = s32[] constant(8)
  x1 = s32[2,<=3,3] set-dimension-size(x, two), dimensions={1}
  x2 = s32[2,<=3,<=3] set-dimension-size(x1, two), dimensions={2}
  merged = s32[<=18] dynamic-reshape(x2, eight)
  zero = s32[] constant(0)
  m = s32[] reduce(merged, zero), dimensions={0}, to_apply=sum_s32
  first = s32[8] slice(merged), slice={[0:8]}
  vd = s32[<=18] set-dimension-size(v, eight), dimensions={0}
  cube = s32[2,<=3,<=3] dynamic-reshape(vd, two, two, two)
  planes = s32[2] reduce(cube, zero), dimensions={1,2}, to_apply=sum_s32
  ROOT out = (s32[], s32[8], s32[2]) tuple(m, first, planes)
}
""",
    # Concatenation and reverse move the real elements; slices of the real
    # part read them back.
    "dynamic_concat_reverse": SUM_S32 + """
ENTRY main {
  a = s32[3] parameter(0)
  b = s32[3] parameter(1)
  c = s32[4,3] parameter(2)
  n = s32[] parameter(3)
  lo = s32[] constant(1)
  hi = s32[] constant(3)
  k = s32[] clamp(lo, n, hi)
  two = s32[] constant(2)
  ad = s32[<=3] set-dimension-size(a, two), dimensions={0}
  cd = s32[<=3] set-dimension-size(b, two), dimensions={0}
  joined = s32[9] concatenate(ad, b, cd), dimensions={0}
  head = s32[7] slice(joined), slice={[0:7]}
  ra = s32[<=3] reverse(ad), dimensions={0}
  rhead = s32[2] slice(ra), slice={[0:2]}
  c1 = s32[<=4,3] set-dimension-size(c, two), dimensions={0}
  c2 = s32[<=4,<=3] set-dimension-size(c1, k), dimensions={1}
  rc = s32[<=4,<=3] reverse(c2), dimensions={0,1}
  zero = s32[] constant(0)
  w = s32[4,3] iota(), iota_dimension=1
  weighted = s32[<=4,<=3] multiply(rc, w)
  rows = s32[<=4] reduce(weighted, zero), dimensions={1}, to_apply=sum_s32
  rrows = s32[2] slice(rows), slice={[0:2]}
  ROOT out = (s32[7], s32[2], s32[2]) tuple(head, rhead, rrows)
}
""",
    # Pad with edges and interior padding; sort keeps padding last; a gather
    # of a whole dynamic dimension keeps its size.
    "dynamic_pad_sort_gather": SUM_S32 + """
descending {
  l = s32[] parameter(0)
  r = s32[] parameter(1)
  ROOT gt = pred[] compare(l, r), direction=GT
}

by_key {
  kl = s32[] parameter(0)
  kr = s32[] parameter(1)
  vl = f32[] parameter(2)
  vr = f32[] parameter(3)
  ROOT lt = pred[] compare(kl, kr), direction=LT
}

ENTRY main {
  x = s32[4] parameter(0)
  v = f32[6] parameter(1)
  g = s32[3,2,1] parameter(2)
  three = s32[] constant(3)
  two = s32[] constant(2)
  one = s32[] constant(1)
  xd = s32[<=4] set-dimension-size(x, three), dimensions={0}
  edges = s32[<=6] pad(xd, two), padding=1_1
  inner = s32[<=7] pad(xd, two), padding=0_0_1
  zero = s32[] constant(0)
  e = s32[] reduce(edges, zero), dimensions={0}, to_apply=sum_s32
  i = s32[] reduce(inner, zero), dimensions={0}, to_apply=sum_s32
  esize = s32[] get-dimension-size(edges), dimensions={0}
  isize = s32[] get-dimension-size(inner), dimensions={0}
  sorted = s32[<=4] sort(xd), dimensions={0}, is_stable=true, to_apply=descending
  top = s32[3] slice(sorted), slice={[0:3]}
  four = s32[] constant(4)
  xx = s32[8] concatenate(x, x), dimensions={0}
  keys = s32[6] slice(xx), slice={[0:6]}
  kd = s32[<=6] set-dimension-size(keys, four), dimensions={0}
  vd = f32[<=6] set-dimension-size(v, four), dimensions={0}
  pair = (s32[<=6], f32[<=6]) sort(kd, vd), dimensions={0}, is_stable=true, to_apply=by_key
  pv = f32[<=6] get-tuple-element(pair), index=1
  pv4 = f32[4] slice(pv), slice={[0:4]}
  gd = s32[3,<=2,1] set-dimension-size(g, one), dimensions={1}
  gathered = s32[<=2,1] gather(gd, one), offset_dims={0,1}, collapsed_slice_dims={0}, start_index_map={0}, index_vector_dim=0, slice_sizes={1,2,1}
  gs = s32[] reduce(gathered, zero), dimensions={0,1}, to_apply=sum_s32
  ROOT out = (s32[], s32[], s32[], s32[], s32[3], f32[4], s32[]) tuple(e, i, esize, isize, top, pv4, gs)
}
""",
    # A scatter into a dynamic operand keeps its size; the sum reads only
    # the real rows.
    "dynamic_scatter_operand": ADD_F32 + """

ENTRY main {
  x = f32[6,3] parameter(0)
  u = f32[2,3] parameter(1)
  n = s32[] parameter(2)
  lo = s32[] constant(2)
  hi = s32[] constant(6)
  k = s32[] clamp(lo, n, hi)
  xd = f32[<=6,3] set-dimension-size(x, k), dimensions={0}
  i = s32[2] constant({0, 4})
  s = f32[<=6,3] scatter(xd, i, u), update_window_dims={1}, inserted_window_dims={0}, scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=add
  zero = f32[] constant(0)
  ROOT cols = f32[3] reduce(s, zero), dimensions={0}, to_apply=add
}
""",
    # get-dimension-size of a dimension declared static reads its extent in
    # XLA CPU, even after set-dimension-size; a declared-dynamic one reads
    # the size.
    "dynamic_get_size_declared": """
ENTRY main {
  x = s32[3] parameter(0)
  two = s32[] constant(2)
  s = s32[3] set-dimension-size(x, two), dimensions={0}
  d = s32[<=3] set-dimension-size(x, two), dimensions={0}
  a = s32[] get-dimension-size(s), dimensions={0}
  b = s32[] get-dimension-size(d), dimensions={0}
  ROOT out = (s32[], s32[]) tuple(a, b)
}
""",
    # Found outside the repo (issue 40): a composite call as lax.composite
    # emits it, bitcast-convert from pred to pred, and zero-sized arrays
    # through FFT (unit fft_length), sort, reduce-window, convolution and
    # gather; convert between pred and every other type.
    "call_composite": COMPOSITE,
    "bitcast_convert_pred": PRED,
    "convert_pred_all_types": CONVERT_PRED,
    "fft_zero_sized": FFT_EMPTY,
    "zero_sized_sort_window_conv_gather": ZERO_OPS,
}


def random_arg(name, i, shape):
    rng = np.random.default_rng(zlib.crc32(("%s/%d" % (name, i)).encode()))
    dtype = shape.numpy_dtype()
    dims = shape.dimensions()
    if np.issubdtype(dtype, np.integer):
        if not dims:
            # A scalar integer argument is a size or an index here.
            return np.asarray(rng.integers(1, 8), dtype=dtype)
        return rng.integers(-3, 4, size=dims).astype(dtype)
    return rng.uniform(-1.0, 1.0, size=dims).astype(dtype)


def main():
    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    # With case names as arguments, only those are (re)written.
    only = sys.argv[1:]
    if os.path.isdir(OUT) and not only:
        for entry in os.listdir(OUT):
            path = os.path.join(OUT, entry)
            if os.path.isdir(path):
                shutil.rmtree(path)
    os.makedirs(OUT, exist_ok=True)
    for name, body in CASES.items():
        if only and name not in only:
            continue
        text = "HloModule %s\n%s" % (name, body)
        module = xc.hlo.hlo_module_from_text(text)
        program = xc.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape()
        mlir = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        exe = backend.compile_and_load(mlir, backend.devices()[:1], xc.CompileOptions())
        params = program.parameter_shapes()
        args = [random_arg(name, i, s) for i, s in enumerate(params)]
        outs = exe.execute([jax.device_put(a, device) for a in args])
        outs = [np.asarray(o) for o in outs]
        optimized = exe.hlo_modules()[0].to_string()
        folder = os.path.join(OUT, name)
        os.makedirs(folder, exist_ok=True)
        write_files(folder, text, optimized, args, outs, case_meta(name, args, outs, 1e-6, 1e-6))
        print("%s: %d argument(s), %d output(s)" % (name, len(args), len(outs)))


if __name__ == "__main__":
    main()
