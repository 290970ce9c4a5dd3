#!/usr/bin/env python3
"""Generates tests/op_matrix/: one conformance case per (op, element type).

Each case is a single `jax.lax` call (or the few lax calls one HLO op needs),
lowered by JAX to `module.hlo`, compiled by XLA CPU to `optimized.hlo` and run
by XLA CPU to get the expected outputs, in exactly the format of
tests/conformance/ (see tests/conformance/README.md). The folder of a case is
`<op>_<dtype>`, where `<dtype>` is the element type of the op's (first) operand.

Inputs are small (a few dozen elements) and deterministic, and hold the
special values the op allows: 0, -0, +-inf and NaN for floats, min and max for
integers. Combinations JAX rejects are skipped and listed on stdout.

Run: /path/to/venv/bin/python scripts/gen_op_matrix.py   (needs `pip install jax`)
It rewrites tests/op_matrix/ (case folders and README.md) from scratch.
"""

import os
import shutil
import sys

import numpy as np
import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")
# No source lines of this script in the HLO metadata (they change with every edit).
jax.config.update("jax_traceback_in_locations_limit", 0)
import jax.numpy as jnp
from jax import lax
import ml_dtypes

from case_writer import case_meta, run_jitted, write_files

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "op_matrix")

DT = {
    "f32": np.dtype(np.float32),
    "f64": np.dtype(np.float64),
    "f16": np.dtype(np.float16),
    "bf16": np.dtype(ml_dtypes.bfloat16),
    "s8": np.dtype(np.int8),
    "s32": np.dtype(np.int32),
    "s64": np.dtype(np.int64),
    "u8": np.dtype(np.uint8),
    "u32": np.dtype(np.uint32),
    "pred": np.dtype(np.bool_),
    "c64": np.dtype(np.complex64),
}
FLOATS = ["f32", "f64", "f16", "bf16"]
INTS = ["s8", "s32", "s64", "u8", "u32"]
SIGNED = ["s8", "s32", "s64"]
NUMERIC = FLOATS + INTS
ALL = NUMERIC + ["pred", "c64"]

SHAPE = (4, 6)
N = SHAPE[0] * SHAPE[1]


def rng(seed):
    return np.random.default_rng(seed)


# ------------------------------------------------------------------ inputs
# `kind` says which values the op allows:
#   "any":  everything, specials included
#   "small": small integers / dyadic fractions (sums and products stay exact),
#            with 0, -0, +-inf and NaN first
#   "unit": inside (-1, 1)
#   "plain": small dyadic values without specials (FFTs: where NaN and inf
#            land depends on the algorithm)
#   "complex": as "any", for the components of complex values
#   "shift": integer shift amounts, including >= bit width and negative


def float_values(dt, kind, seed):
    r = rng(seed)
    specials = [0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5]
    if kind in ("small", "plain"):
        body = r.integers(-4, 5, size=N).astype(np.float64) * 0.5
        if kind == "small":
            body[:5] = [0.0, -0.0, np.inf, -np.inf, np.nan]
        return body.astype(dt).reshape(SHAPE)
    if kind == "unit":  # (-1, 1): erf_inv, atanh-like domains
        body = r.uniform(-0.99, 0.99, size=N)
        body[:4] = [0.0, -0.0, np.nan, 0.5]
        return body.astype(dt).reshape(SHAPE)
    # Large but finite; for complex operands small enough that no product of
    # two components overflows (XLA CPU contracts a*c - b*d into an FMA, which
    # then differs from the rounded products: inf - inf there, -inf here).
    big = 1e3 if kind == "complex" else 1e4 if dt == np.float16 else 1e30
    body = r.uniform(-8, 8, size=N)
    body[: len(specials)] = specials
    body[len(specials)] = big
    body[len(specials) + 1] = -big
    body[len(specials) + 2] = 2.5  # a round-half-even tie
    body[len(specials) + 3] = -3.5
    return body.astype(dt).reshape(SHAPE)


def int_values(dt, kind, seed):
    r = rng(seed)
    info = np.iinfo(dt)
    if kind == "shift":
        bits = info.bits
        lo = -2 if info.min < 0 else 0
        body = r.integers(lo, bits + 3, size=N)
        body[:4] = [0, 1, bits - 1, bits]
        return body.astype(dt).reshape(SHAPE)
    if kind in ("small", "unit", "exp"):
        lo = 0 if info.min == 0 else -4
        body = r.integers(lo, 5, size=N)
        return body.astype(dt).reshape(SHAPE)
    lo = max(int(info.min), -1000)
    hi = min(int(info.max), 1000)
    body = r.integers(lo, hi + 1, size=N).astype(np.int64)
    out = body.astype(dt)
    specials = [0, 1, info.max, info.min, info.max - 1]
    if info.min < 0:
        specials += [-1, info.min + 1]
    for i, v in enumerate(specials):
        out[i] = v
    return out.reshape(SHAPE)


def values(dtname, kind="any", seed=0):
    dt = DT[dtname]
    if dtname in FLOATS:
        return float_values(dt, kind, seed)
    if dtname in INTS:
        return int_values(dt, kind, seed)
    if dtname == "pred":
        return (rng(seed).integers(0, 2, size=N) == 1).reshape(SHAPE)
    if dtname == "c64":
        part = kind if kind in ("small", "plain") else "complex"
        re = float_values(np.dtype(np.float32), part, seed)
        im = float_values(np.dtype(np.float32), part, seed + 100)
        # Specials in one component at a time keep the cases meaningful:
        # complex arithmetic with NaN/inf in both parts is mostly NaN.
        out = np.empty(SHAPE, np.complex64)
        out.real = re
        out.imag = np.roll(im, 7)
        return out
    raise ValueError(dtname)


def second(dtname, kind="any"):
    """A second operand: the same kind of values, in another order."""
    return values(dtname, kind, seed=1)


# ------------------------------------------------------------------ tolerances
ULPS = {"f32": 1.2e-7, "f64": 2.3e-16, "f16": 9.8e-4, "bf16": 7.9e-3, "c64": 1.2e-7}


def tol(dtname, ulps):
    """`ulps` few-ulp relative tolerance (and as much absolute, for values near
    zero); 0 means exact."""
    if ulps == 0 or dtname not in ULPS:
        return (0.0, 0.0)
    eps = ULPS[dtname]
    return (ulps * eps, ulps * eps)


# ------------------------------------------------------------------ ops
# Each entry: name -> (dtypes, function of dtname returning (f, args, ulps)).
OPS = {}


def op(name, dtypes):
    def deco(fn):
        OPS[name] = (dtypes, fn)
        return fn

    return deco


def unary(name, f, dtypes, ulps=0, kind="any", ulps_c64=None):
    def build(d):
        u = ulps_c64 if (d == "c64" and ulps_c64 is not None) else ulps
        return f, [values(d, kind)], u

    OPS[name] = (dtypes, build)


def binary(name, f, dtypes, ulps=0, kind="any", kind2=None, ulps_c64=None):
    def build(d):
        u = ulps_c64 if (d == "c64" and ulps_c64 is not None) else ulps
        return f, [values(d, kind), second(d, kind2 or kind)], u

    OPS[name] = (dtypes, build)


TRANS = FLOATS + ["c64"]

# elementwise unary
unary("abs", lax.abs, FLOATS + SIGNED + ["c64"], ulps_c64=4)
unary("neg", lax.neg, FLOATS + INTS + ["c64"])
unary("sign", lax.sign, FLOATS + INTS + ["c64"], ulps_c64=4)
unary("floor", lax.floor, FLOATS)
unary("ceil", lax.ceil, FLOATS)
unary("round_away", lambda x: lax.round(x, lax.RoundingMethod.AWAY_FROM_ZERO), FLOATS)
unary("round_even", lambda x: lax.round(x, lax.RoundingMethod.TO_NEAREST_EVEN), FLOATS)
# Transcendentals: not correctly rounded in XLA CPU, so a few ulps.
for _name in ("exp", "expm1", "log", "log1p", "tanh", "logistic", "sin", "cos", "tan"):
    unary(_name, getattr(lax, _name), TRANS, ulps=4, ulps_c64=16)
# Lowered by JAX to a few HLO ops each (CHLO expansions): the same
# composition runs everywhere, so a few ulps more.
for _name in ("exp2", "asin", "acos", "atan", "sinh", "cosh", "asinh", "acosh", "atanh"):
    unary(_name, getattr(lax, _name), TRANS, ulps=8, ulps_c64=64)
unary("erfc", lax.erfc, FLOATS, ulps=8)
unary("lgamma", lax.lgamma, FLOATS, ulps=16)
unary("digamma", lax.digamma, FLOATS, ulps=16)
unary("square", lax.square, NUMERIC + ["c64"], ulps_c64=4)
unary("integer_pow", lambda x: lax.integer_pow(x, 3), NUMERIC + ["c64"], ulps=2, ulps_c64=8)
binary("nextafter", lax.nextafter, ["f32", "f64"])
unary("sqrt", lax.sqrt, TRANS, ulps=0, ulps_c64=16)
unary("rsqrt", lax.rsqrt, TRANS, ulps=2, ulps_c64=16)
unary("cbrt", lax.cbrt, FLOATS, ulps=4)
unary("erf", lax.erf, FLOATS, ulps=4)
unary("erf_inv", lax.erf_inv, FLOATS, ulps=8, kind="unit")
unary("is_finite", lax.is_finite, FLOATS)
unary("not", lax.bitwise_not, INTS + ["pred"])
unary("popcount", lax.population_count, INTS)
unary("clz", lax.clz, INTS)
unary("real", lax.real, ["c64"])
unary("imag", lax.imag, ["c64"])
unary("conj", lax.conj, ["c64"])
unary("reduce_precision", lambda x: lax.reduce_precision(x, 5, 10), FLOATS)

# elementwise binary
binary("add", lax.add, NUMERIC + ["c64"])
binary("sub", lax.sub, NUMERIC + ["c64"])
# A complex product's components are sums of two products of components (up
# to 8e3 here), and XLA CPU fuses one of them into an FMA: the error is a few
# ulps of those products, not of the (possibly cancelled) result.
binary("mul", lax.mul, NUMERIC + ["c64"], ulps_c64=(4 * ULPS["c64"], 8e3 * 4 * ULPS["c64"]))
binary("div", lax.div, NUMERIC + ["c64"], ulps_c64=8)
binary("rem", lax.rem, NUMERIC)
binary("max", lax.max, ALL)
binary("min", lax.min, ALL)
binary("pow", lax.pow, TRANS, ulps=8, ulps_c64=64)
binary("atan2", lax.atan2, FLOATS, ulps=4)
binary("complex", lax.complex, ["f32", "f64"])
binary("and", lax.bitwise_and, INTS + ["pred"])
binary("or", lax.bitwise_or, INTS + ["pred"])
binary("xor", lax.bitwise_xor, INTS + ["pred"])
for _name, _f in [
    ("shift_left", lax.shift_left),
    ("shift_right_arithmetic", lax.shift_right_arithmetic),
    ("shift_right_logical", lax.shift_right_logical),
]:
    binary(_name, _f, INTS, kind="any", kind2="shift")
for _name, _f in [
    ("eq", lax.eq),
    ("ne", lax.ne),
    ("lt", lax.lt),
    ("le", lax.le),
    ("gt", lax.gt),
    ("ge", lax.ge),
]:
    binary(_name, _f, ALL if _name in ("eq", "ne") else NUMERIC + ["pred"])


@op("select", ALL)
def _select(d):
    p = values("pred", seed=5)
    return lax.select, [p, values(d), second(d)], 0


@op("clamp", ALL)
def _clamp(d):
    lo = np.array(-2 if d not in ("u8", "u32") else 3, DT[d])
    hi = np.array(5, DT[d])
    if d == "pred":  # the bounds that change something: x clamped to [false, false]
        lo, hi = np.array(False), np.array(False)
    return lax.clamp, [lo, values(d), hi], 0


for _to in ALL:

    def _conv(d, _to=_to):
        return (lambda x: lax.convert_element_type(x, DT[_to])), [values(d)], 0

    _srcs = [s for s in ALL if s != _to]
    if _to != "c64":
        _srcs = [s for s in _srcs if s != "c64"]  # complex -> real is not a convert
    OPS["convert_to_" + _to] = (_srcs, _conv)

BITCAST_TO = {
    "f32": np.int32, "f64": np.int64, "f16": np.int16, "bf16": np.uint16,
    "s8": np.uint8, "s32": np.float32, "s64": np.float64, "u8": np.int8,
    "u32": np.float32, "c64": np.float32,
}


@op("bitcast_convert", list(BITCAST_TO))
def _bitcast(d):
    to = BITCAST_TO[d]
    x = values(d)
    if d in ("s32", "u32", "s64"):  # the bits of ordinary floats, not denormals
        x = values("f64" if d == "s64" else "f32").view(DT[d])
    return (lambda x: lax.bitcast_convert_type(x, to)), [x], 0


# data movement
@op("broadcast", ALL)
def _broadcast(d):
    return (lambda x: lax.broadcast_in_dim(x, (2, 4, 3, 6), (1, 3))), [values(d)], 0


@op("reshape", ALL)
def _reshape(d):
    return (lambda x: lax.reshape(x, (2, 3, 4))), [values(d)], 0


@op("transpose", ALL)
def _transpose(d):
    return (lambda x: lax.transpose(x.reshape(2, 3, 4), (2, 0, 1))), [values(d)], 0


@op("slice", ALL)
def _slice(d):
    return (lambda x: lax.slice(x, (1, 1), (4, 6), (2, 2))), [values(d)], 0


@op("dynamic_slice", ALL)
def _dynamic_slice(d):
    # The second start index is out of range: XLA clamps it.
    idx = [np.array(1, np.int32), np.array(5, np.int32)]
    return (lambda x, i, j: lax.dynamic_slice(x, (i, j), (2, 3))), [values(d)] + idx, 0


@op("dynamic_update_slice", ALL)
def _dynamic_update_slice(d):
    upd = second(d)[:2, :3]
    idx = [np.array(-1, np.int32), np.array(2, np.int32)]
    return (
        (lambda x, u, i, j: lax.dynamic_update_slice(x, u, (i, j))),
        [values(d), upd] + idx,
        0,
    )


@op("concatenate", ALL)
def _concatenate(d):
    return (lambda x, y: lax.concatenate([x, y[:, :2]], 1)), [values(d), second(d)], 0


@op("pad", ALL)
def _pad(d):
    pv = np.array(values(d).flat[1], DT[d])
    return (lambda x, v: lax.pad(x, v, [(1, -1, 1), (-2, 2, 0)])), [values(d), pv], 0


@op("rev", ALL)
def _rev(d):
    return (lambda x: lax.rev(x, (0, 1))), [values(d)], 0


@op("iota", [d for d in ALL if d != "pred"])
def _iota(d):
    return (lambda: lax.broadcasted_iota(DT[d], (3, 5), 1)), [], 0


@op("gather", ALL)
def _gather(d):
    idx = np.array([[0], [3], [2], [7], [-1]], np.int32)  # 7 and -1 are clamped
    dn = lax.GatherDimensionNumbers(
        offset_dims=(1,), collapsed_slice_dims=(0,), start_index_map=(0,)
    )
    return (
        (lambda x, i: lax.gather(x, i, dn, (1, 6), mode=lax.GatherScatterMode.CLIP)),
        [values(d), idx],
        0,
    )


def _scatter_dn():
    return lax.ScatterDimensionNumbers(
        update_window_dims=(1,), inserted_window_dims=(0,), scatter_dims_to_operand_dims=(0,)
    )


@op("scatter", ALL)
def _scatter(d):
    idx = np.array([[2], [0], [9]], np.int32)  # 9 is out of bounds: dropped
    upd = second(d)[:3, :]
    return (
        (lambda x, i, u: lax.scatter(x, i, u, _scatter_dn(), mode=lax.GatherScatterMode.FILL_OR_DROP)),
        [values(d), idx, upd],
        0,
    )


@op("scatter_add", NUMERIC + ["c64"])
def _scatter_add(d):
    idx = np.array([[2], [0], [2]], np.int32)  # a repeated index
    upd = second(d, "small")[:3, :]
    return (
        (lambda x, i, u: lax.scatter_add(x, i, u, _scatter_dn(), mode=lax.GatherScatterMode.FILL_OR_DROP)),
        [values(d, "small"), idx, upd],
        0,
    )


# reductions (small values keep float sums exact whatever the order)
def reduction(name, f, dtypes, kind="small"):
    def build(d):
        return f, [values(d, kind)], 0

    OPS[name] = (dtypes, build)


reduction("reduce_sum", lambda x: lax.reduce_sum_p.bind(x, axes=(1,), out_sharding=None), NUMERIC + ["c64"])
reduction("reduce_prod", lambda x: lax.reduce_prod_p.bind(x, axes=(0,), out_sharding=None), NUMERIC + ["c64"])
reduction("reduce_max", lambda x: lax.reduce_max_p.bind(x, axes=(1,), out_sharding=None), ALL, kind="any")
reduction("reduce_min", lambda x: lax.reduce_min_p.bind(x, axes=(0,), out_sharding=None), ALL, kind="any")
reduction("reduce_and", lambda x: lax.reduce_and_p.bind(x, axes=(1,)), INTS + ["pred"], kind="any")
reduction("reduce_or", lambda x: lax.reduce_or_p.bind(x, axes=(1,)), INTS + ["pred"], kind="any")
reduction("argmax", lambda x: lax.argmax(x, 1, np.int32), NUMERIC + ["pred"], kind="any")
reduction("argmin", lambda x: lax.argmin(x, 0, np.int32), NUMERIC + ["pred"], kind="any")
reduction(
    "reduce_window_sum",
    lambda x: lax.reduce_window(x, np.array(0, x.dtype), lax.add, (2, 3), (1, 2), "VALID"),
    NUMERIC + ["c64"],
)
reduction(
    "reduce_window_max",
    lambda x: lax.reduce_window(
        x, np.array(np.iinfo(x.dtype).min if x.dtype.kind in "iu" else -np.inf, x.dtype),
        lax.max, (2, 2), (1, 1), [(0, 1), (1, 0)]),
    NUMERIC,
    kind="any",
)
reduction("cumsum", lambda x: lax.cumsum(x, axis=1), NUMERIC + ["c64"])
reduction("cummax", lambda x: lax.cummax(x, axis=0), NUMERIC, kind="any")


@op("dot_general", ALL)
def _dot(d):
    a = values(d, "small").reshape(2, 3, 4)
    b = second(d, "small").reshape(2, 4, 3)
    dn = (((2,), (1,)), ((0,), (0,)))
    return (lambda a, b: lax.dot_general(a, b, dn)), [a, b], 0


@op("conv", ALL)
def _conv_op(d):
    x = values(d, "small").reshape(1, 2, 3, 4)  # NCHW
    k = second(d, "small")[:, :3].reshape(2, 2, 3, 1)[:, :, :2, :]  # OIHW 2x2x2x1
    return (
        (lambda x, k: lax.conv_general_dilated(x, k, (1, 1), [(1, 0), (0, 0)], rhs_dilation=(1, 1))),
        [x, np.ascontiguousarray(k)],
        0,
    )


@op("sort", ALL)
def _sort(d):
    return (lambda x: lax.sort(x, dimension=1)), [values(d)], 0


@op("sort_key_value", ALL)
def _sort_kv(d):
    v = np.arange(N, dtype=np.int32).reshape(SHAPE)
    return (lambda k, v: lax.sort((k, v), dimension=0, num_keys=1, is_stable=True)), [values(d), v], 0


@op("top_k", NUMERIC + ["pred"])
def _top_k(d):
    x = values(d)
    if d in FLOATS:  # NaN ordering in top_k is not specified; keep one NaN-free
        x = np.where(np.isnan(x.astype(np.float32)), np.array(7, x.dtype), x)
    return (lambda x: lax.top_k(x, 3)), [x], 0


@op("fft", ["c64"])
def _fft(d):
    return (lambda x: jnp.fft.fft(x)), [values(d, "plain")], 64


@op("ifft", ["c64"])
def _ifft(d):
    return (lambda x: jnp.fft.ifft(x)), [values(d, "plain")], 64


@op("rfft", ["f32", "f64"])
def _rfft(d):
    return (lambda x: jnp.fft.rfft(x)), [values(d, "plain")], 64


@op("irfft", ["c64"])
def _irfft(d):
    return (lambda x: jnp.fft.irfft(x, n=8)), [values(d, "plain")[:, :5]], 64


# control flow
def _step(x, y):
    if x.dtype == np.bool_:
        return lax.bitwise_xor(x, y)
    return lax.add(x, y)


@op("while_loop", ALL)
def _while(d):
    def f(x, y, n):
        return lax.while_loop(
            lambda c: c[0] < n,
            lambda c: (c[0] + 1, _step(lax.rev(c[1], (1,)), y)),
            (np.int32(0), x),
        )[1]

    return f, [values(d, "small"), second(d, "small"), np.array(3, np.int32)], 0


@op("cond", ALL)
def _cond(d):
    def f(p, x, y):
        return lax.cond(p, lambda a, b: _step(a, b), lambda a, b: lax.rev(a, (0,)), x, y)

    return f, [np.array(True), values(d), second(d)], 0


# ------------------------------------------------------------------ writing
def write_case(name, f, args, ulps, d):
    args = [np.asarray(a) for a in args]
    module, optimized, outs, stablehlo = run_jitted(f, args, keep_unused=True, with_stablehlo=True)
    out_types = {("c64" if o.dtype == np.complex64 else d) for o in outs}
    if isinstance(ulps, tuple):  # (rtol, atol) given
        rtol, atol = ulps
    else:
        rtol, atol = tol("c64" if "c64" in out_types else d, ulps)
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    meta = case_meta(name, args, outs, rtol, atol)
    write_files(folder, module, optimized, args, outs, meta, stablehlo=stablehlo)


README_HEAD = """# Op matrix

One conformance case per (op, element type): a single `jax.lax` call (or the
few lax calls one HLO op needs) on small deterministic inputs (a few dozen
elements) that include the special values the op allows (0, -0, +-inf, NaN for
floats; min and max for integers), with XLA CPU's outputs. The format is the
conformance corpus' (`../conformance/README.md`): `module.hlo`,
`optimized.hlo`, `argN.npy`, `outN.npy`, `case.json`, and `module.mlir`, the
same program as the StableHLO text JAX prints (`lower(...).as_text()`), which
`hlo-stablehlo` reads. A case folder is
`<op>_<dtype>`, where `<dtype>` is the element type of the op's (first)
operand; `convert_to_T_S` converts from `S` to `T`.

Tolerances: exact (`rtol = atol = 0`) for integer, bit, movement and correctly
rounded float ops (add, mul, div, sqrt, ...) and for reductions, dots and
convolutions, whose inputs are small dyadic values so any summation order gives
the same bits; a few ulps of the type (both `rtol` and `atol`) for
transcendentals, more for complex ones and FFTs; a complex product is within a
few ulps of its components' products (XLA CPU fuses one into an FMA).
Complex operands stay below 1e3 so no such product overflows, and FFT inputs
hold no NaN or infinity (where those land depends on the FFT algorithm).

`cargo test -p tests --test suite op_matrix::` runs every case in both forms on every
linked platform, prints the table per platform and fails on any wrong result,
error or stale gap; only the Example platform, which legalizes to a small core
set, may answer `unsupported`. A backend that knowingly fails a case registers
a `ConformanceGap` for the `<op>_<dtype>` folder in its own crate.

Regenerate (rewrites this folder):

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install jax==%(jax)s
    /tmp/venv/bin/python scripts/gen_op_matrix.py

Run it on a platform:

    cargo run -p service --bin hlorun --features example -- conformance --platform host --corpus tests/op_matrix

and on every linked platform, with a per-op x per-dtype coverage table:

    cargo test -p tests --test suite op_matrix:: -- --nocapture

Generated with jax %(jax)s: %(count)d cases (%(ops)d ops).

"""


def main():
    only = set(sys.argv[1:])
    if os.path.isdir(OUT) and not only:
        shutil.rmtree(OUT)
    os.makedirs(OUT, exist_ok=True)
    made, skipped = {}, []
    for name, (dtypes, build) in OPS.items():
        for d in dtypes:
            case = "%s_%s" % (name, d)
            if only and name not in only and case not in only:
                continue
            try:
                f, args, ulps = build(d)
                folder = os.path.join(OUT, case)
                if os.path.isdir(folder):
                    shutil.rmtree(folder)
                write_case(case, f, args, ulps, d)
                made.setdefault(name, []).append(d)
            except Exception as e:  # JAX rejects the combination
                folder = os.path.join(OUT, case)
                if os.path.isdir(folder):
                    shutil.rmtree(folder)
                msg = str(e).splitlines()[0].split(". ")[0] if str(e) else type(e).__name__
                skipped.append((case, msg))
                print("skipped %s: %s" % (case, msg))
    if only:
        return
    count = sum(len(v) for v in made.values())
    lines = [README_HEAD % {"jax": jax.__version__, "count": count, "ops": len(made)}]
    lines.append("| op | element types |\n| --- | --- |\n")
    for name, ds in made.items():
        lines.append("| `%s` | %s |\n" % (name, " ".join(ds)))
    if skipped:
        lines.append("\nSkipped (JAX rejects the combination):\n\n")
        for case, msg in skipped:
            lines.append("- `%s`: %s\n" % (case, msg.replace("|", "\\|")))
    with open(os.path.join(OUT, "README.md"), "w") as fh:
        fh.write("".join(lines))
    print("%d cases, %d ops, %d skipped" % (count, len(made), len(skipped)))


if __name__ == "__main__":
    main()
