#!/usr/bin/env python3
"""Reference cases for hlo-semantics (the elementwise semantics), computed by XLA CPU.

Every case is one elementwise op (unary, binary, compare, select, clamp, convert,
bitcast-convert, reduce-precision) on edge-case inputs (+-0, +-inf, NaN, MIN/MAX,
shift amounts around the width, ties for rounding, ...) plus a few random values
for the transcendentals. Each op is written as a one-op StableHLO module and
compiled and run by XLA CPU through jaxlib, with the inputs as parameters (so
nothing is constant-folded). `hlo/semantics/tests/semantics_xla.rs` runs the same
op through `platform_api::semantics` and compares.

Output, in hlo/semantics/tests/data/semantics/:
  cases.json   {"arrays": [[dtype, shape, offset], ...],
                "cases": [{"kind", "op", "in": [array index], "out": array index,
                           optional "ulp", "nan_bits", "compare_type", "to",
                           "exponent_bits", "mantissa_bits"}, ...]}
  arrays.bin   the arrays, row-major little-endian, each at its byte offset
               (16-byte aligned, identical arrays stored once); pred is one byte 0/1.

"ulp" is the tolerance for float outputs (0 = exact apart from NaN payloads;
"nan_bits" asks for NaN payloads to match too); for complex outputs with finite
parts it applies to the error relative to the result's magnitude, since XLA's
complex formulas make each part's error proportional to |z|, not to the part. XLA CPU flushes f32/f64 (and bf16,
computed in f32) denormals to zero; the inputs avoid denormals wherever that
would change a result, and the test accepts a zero where we return a denormal.

Requires: pip install jax (CPU). Run from anywhere:
  python3 scripts/gen_semantics_cases.py
"""

import json
import os
import sys

import numpy as np

import jax

jax.config.update("jax_enable_x64", True)
import ml_dtypes  # noqa: E402
from jax._src import xla_bridge  # noqa: E402
from jax._src.interpreters import mlir  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402
from jax._src.lib.mlir import ir  # noqa: E402

bf16 = ml_dtypes.bfloat16
OUT_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "hlo", "semantics", "tests", "data", "semantics")

# name -> (numpy dtype, MLIR element type)
TYPES = {
    "pred": (np.bool_, "i1"),
    "s8": (np.int8, "i8"),
    "s16": (np.int16, "i16"),
    "s32": (np.int32, "i32"),
    "s64": (np.int64, "i64"),
    "u8": (np.uint8, "ui8"),
    "u16": (np.uint16, "ui16"),
    "u32": (np.uint32, "ui32"),
    "u64": (np.uint64, "ui64"),
    "f16": (np.float16, "f16"),
    "bf16": (bf16, "bf16"),
    "f32": (np.float32, "f32"),
    "f64": (np.float64, "f64"),
    "c64": (np.complex64, "complex<f32>"),
    "c128": (np.complex128, "complex<f64>"),
}
INTS = ["s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64"]
FLOATS = ["f16", "bf16", "f32", "f64"]
COMPLEX = ["c64", "c128"]


def type_name(dtype):
    for name, (dt, _) in TYPES.items():
        if np.dtype(dt) == np.dtype(dtype):
            return name
    raise ValueError(dtype)


def tensor_type(name, shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + TYPES[name][1] + ">"


# ---- Running one StableHLO op on XLA CPU ----

_backend = xla_bridge.get_backend("cpu")
_compiled = {}


def run(op_text, args, out_type, out_shape):
    """op_text: the right-hand side of `%r = ...`, using %arg0.. and ending with
    the function type; returns the output as a numpy array."""
    ins = ", ".join(f"%arg{i}: {tensor_type(type_name(a.dtype), a.shape)}" for i, a in enumerate(args))
    out = tensor_type(out_type, out_shape)
    text = (
        "module @m {\n"
        f"  func.func public @main({ins}) -> ({out}) {{\n"
        f"    %r = {op_text}\n"
        f"    return %r : {out}\n"
        "  }\n}\n"
    )
    exe = _compiled.get(text)
    if exe is None:
        with mlir.make_ir_context():
            module = ir.Module.parse(text)
        devices = xc.DeviceList(tuple(_backend.devices()[:1]))
        exe = _backend.compile_and_load(mlir.module_to_bytecode(module), devices, xc.CompileOptions())
        _compiled[text] = exe
    device = _backend.devices()[0]
    outs = exe.execute([jax.device_put(a, device) for a in args])
    return np.asarray(outs[0])


def sig(args, out_type, out_shape):
    ins = ", ".join(tensor_type(type_name(a.dtype), a.shape) for a in args)
    return f"({ins}) -> {tensor_type(out_type, out_shape)}"


# ---- Output files ----

blob = bytearray()
arrays = []  # [dtype, shape, offset], deduplicated
_array_index = {}
cases = []


def store(arr):
    """Appends an array to the blob (once per distinct content) and returns its index."""
    arr = np.array(arr, order="C")  # (np.ascontiguousarray would make rank 0 into rank 1)
    if arr.dtype == np.bool_:
        data = arr.astype(np.uint8).tobytes()
    else:
        data = arr.astype(arr.dtype.newbyteorder("<")).tobytes()
    key = (type_name(arr.dtype), arr.shape, data)
    if key in _array_index:
        return _array_index[key]
    while len(blob) % 16:
        blob.append(0)
    arrays.append([type_name(arr.dtype), list(arr.shape), len(blob)])
    blob.extend(data)
    _array_index[key] = len(arrays) - 1
    return _array_index[key]


def add_case(name, kind, op, inputs, output, ulp=0, nan_bits=False, **attrs):
    """One case. `name` is only for reading this script; the test names cases by
    kind, op, types and attributes."""
    del name
    case = {"kind": kind, "op": op, "in": [store(a) for a in inputs], "out": store(output)}
    if ulp:
        case["ulp"] = ulp
    if nan_bits:
        case["nan_bits"] = True
    case.update(attrs)
    cases.append(case)


# ---- Input values ----


def int_values(name):
    dt = np.dtype(TYPES[name][0])
    info = np.iinfo(dt)
    bits = info.bits
    vals = {0, 1, 2, 3, 7, bits - 1, bits, bits + 1, info.max, info.max - 1, info.min, info.min + 1}
    if info.min < 0:
        vals |= {-1, -2, -3, -7, -bits}
    else:
        vals |= {info.max // 2, info.max // 2 + 1}
    return np.array(sorted(v for v in vals if info.min <= v <= info.max), dtype=dt)


def int_core(name):
    """Values for the arithmetic ops: both ends of the range, around zero."""
    dt = np.dtype(TYPES[name][0])
    info = np.iinfo(dt)
    if info.min < 0:
        vals = [info.min, info.min + 1, -7, -2, -1, 0, 1, 2, 3, 7, info.max - 1, info.max]
    else:
        vals = [0, 1, 2, 3, 7, info.max // 2, info.max // 2 + 1, info.max - 1, info.max]
    return np.array(vals, dtype=dt)


def grid(a, b):
    return np.repeat(a, len(b)), np.tile(b, len(a))


def int_pairs(name):
    v = int_core(name)
    return grid(v, v)


def shift_pairs(name):
    """Shift amounts 0, 1, 3, width - 1, width, width + 1, 2 * width, and the ones
    with the sign bit set (negative, or huge unsigned)."""
    dt = np.dtype(TYPES[name][0])
    info = np.iinfo(dt)
    bits = info.bits
    if info.min < 0:
        values = [info.min, -7, -1, 0, 1, 5, info.max]
        amounts = [0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, -1, info.min]
    else:
        values = [0, 1, 5, info.max // 2 + 1, info.max]
        amounts = [0, 1, 3, bits - 1, bits, bits + 1, 2 * bits, info.max, info.max // 2 + 1]
    return grid(np.array(values, dtype=dt), np.array(amounts, dtype=dt))


def power_pairs(name):
    """Bases around +-1 and the ends; exponents around 64 (XLA uses six bits) and
    negative ones."""
    dt = np.dtype(TYPES[name][0])
    info = np.iinfo(dt)
    bases = [b for b in [info.min, -3, -2, -1, 0, 1, 2, 3, 5, info.max] if info.min <= b <= info.max]
    bases += [info.max - 1] if info.min == 0 else []
    exps = [e for e in [0, 1, 2, 3, 5, 7, 31, 62, 63, 64, 65, 100, 127, -1, -2, -3, info.min, info.max]
            if info.min <= e <= info.max]
    return grid(np.array(sorted(set(bases)), dtype=dt), np.array(sorted(set(exps)), dtype=dt))


def float_specials(name):
    dt = TYPES[name][0]
    fi = ml_dtypes.finfo(dt) if name == "bf16" else np.finfo(dt)
    vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5,
            3.0, -7.0, 0.1, -0.3, 10.0, -100.0, float(fi.max), -float(fi.max), float(fi.tiny), -float(fi.tiny)]
    arr = np.array(vals, dtype=np.float64).astype(dt)
    return arr


def float_pairs(name):
    dt = TYPES[name][0]
    fi = ml_dtypes.finfo(dt) if name == "bf16" else np.finfo(dt)
    v = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 2.5, -0.75, 3.0, 7.0, -7.0,
                  float(fi.max), float(fi.tiny)], dtype=np.float64).astype(dt)
    return np.repeat(v, len(v)), np.tile(v, len(v))


rng = np.random.default_rng(20240611)


def random_floats(name, lo, hi, n=32):
    return rng.uniform(lo, hi, n).astype(TYPES[name][0])


# ---- Unary ----

UNARY_INT = ["abs", "negate", "not", "popcnt", "count_leading_zeros", "sign"]
# op -> (stablehlo name, hlo name)
UNARY_FLOAT_EXACT = {
    "abs": "abs", "negate": "negate", "ceil": "ceil", "floor": "floor",
    "round_nearest_afz": "round-nearest-afz", "round_nearest_even": "round-nearest-even",
    "sign": "sign", "sqrt": "sqrt",
}
# op -> (hlo name, f32/f64 ulp, random range)
UNARY_FLOAT_MATH = {
    "exponential": ("exponential", 6, (-20, 20)),
    "exponential_minus_one": ("exponential-minus-one", 6, (-3, 3)),
    "log": ("log", 4, (0.01, 100)),
    "log_plus_one": ("log-plus-one", 4, (-0.9, 10)),
    "logistic": ("logistic", 4, (-20, 20)),
    "rsqrt": ("rsqrt", 2, (0.01, 100)),
    "cbrt": ("cbrt", 4, (-100, 100)),
    "sine": ("sine", 4, (-10, 10)),
    "cosine": ("cosine", 4, (-10, 10)),
    "tan": ("tan", 4, (-1.5, 1.5)),
    "tanh": ("tanh", 8, (-10, 10)),
    "erf": ("erf", 6, (-4, 4)),
}

# Inputs around where a function overflows, underflows, saturates or hits a pole.
THRESHOLDS = {
    (op, t): np.array(v, dtype=np.float64).astype(TYPES[t][0])
    for (op, t), v in {
        ("exponential", "f32"): [88.72283, 88.72284, 88.7229, -87.33, -87.34, -103.9, -104.0],
        ("exponential", "f64"): [709.782, 709.7828, -708.39, -745.1, -745.2],
        ("exponential_minus_one", "f32"): [88.72283, 88.7229, -17.0, -90.0, 1e-7, -1e-7],
        ("exponential_minus_one", "f64"): [709.782, 709.79, -40.0, 1e-17, -1e-17],
        ("logistic", "f32"): [-88.7, -88.8, 88.8, 17.0, 16.0],
        ("logistic", "f64"): [-709.7, -709.8, 37.0, 36.0],
        ("log_plus_one", "f32"): [-0.99999994, -0.9, 1e-7, -1e-7, 3e38],
        ("log_plus_one", "f64"): [-0.9999999999999999, 1e-17, -0.41, -0.42, 1e300],
        ("tanh", "f32"): [7.9, 8.0, 9.0, 9.1, -10.0, 4e-4, 1e-4, -1e-5],
        ("tanh", "f64"): [19.0, 19.1, 20.0, -22.0, 1e-9],
        ("erf", "f32"): [3.83, 3.84, 3.9, -4.0, 1e-6, 0.8],
        ("erf", "f64"): [5.9, 5.93, 6.0, -6.1, 1e-12],
        ("tan", "f32"): [1.5707963, -1.5707964, 3.1415927, 1e4],
        ("tan", "f64"): [1.5707963267948966, 3.141592653589793, 1e8],
        ("sine", "f32"): [3.1415927, 1e4, 1e6],
        ("cosine", "f32"): [1.5707963, 1e4, 1e6],
        ("sine", "f64"): [3.141592653589793, 1e8],
        ("cosine", "f64"): [1.5707963267948966, 1e8],
        ("log", "f32"): [1.0000001, 0.99999994, 3.4e38],
        ("log", "f64"): [1.0000000000000002, 0.9999999999999999, 1e308],
        ("rsqrt", "f32"): [3.4e38, 2e-38, 4.0],
        ("rsqrt", "f64"): [1e308, 1e-307, 4.0],
        ("cbrt", "f32"): [3.4e38, -27.0, 2e-38, 8.0],
        ("cbrt", "f64"): [1e308, -27.0, 1e-307, 8.0],
    }.items()
}

HLO_NAME = {"count_leading_zeros": "count-leading-zeros", "popcnt": "popcnt", "not": "not"}


def unary_op(name, x, out_type):
    if name == "erf":
        text = f'"chlo.erf"(%arg0) : {sig([x], out_type, x.shape)}'
    else:
        text = f"stablehlo.{name} %arg0 : {sig([x], out_type, x.shape)}"
    return run(text, [x], out_type, x.shape)


def gen_unary():
    for t in INTS:
        x = int_values(t)
        for op in UNARY_INT:
            if op == "sign" and t.startswith("u"):
                continue
            if op == "abs" and t.startswith("u"):
                continue
            add_case(f"{op}_{t}", "unary", HLO_NAME.get(op, op), [x], unary_op(op, x, t))
    x = np.array([True, False])
    add_case("not_pred", "unary", "not", [x], unary_op("not", x, "pred"))
    for t in FLOATS:
        x = float_specials(t)
        for op, hlo in UNARY_FLOAT_EXACT.items():
            add_case(f"{op}_{t}", "unary", hlo, [x], unary_op(op, x, t), nan_bits=op in ("abs", "negate"))
        add_case(f"is_finite_{t}", "unary", "is-finite", [x], unary_op("is_finite", x, "pred"))
        for op, (hlo, ulp, (lo, hi)) in UNARY_FLOAT_MATH.items():
            xs = np.concatenate([x, THRESHOLDS.get((op, t), np.array([], TYPES[t][0])), random_floats(t, lo, hi)])
            # 16-bit results round a few-ULP-different f32 value: at most 1 ULP apart.
            tol = ulp if t in ("f32", "f64") else 1
            if t == "f16" and op in ("exponential_minus_one", "logistic"):
                # XLA rounds every step of these to f16; reproduced bit for bit.
                tol = 0
                xs = np.concatenate([xs, np.linspace(-8, 8, 257).astype(np.float16)])
            if (op, t) == ("log_plus_one", "f64"):
                # XLA's f64 log1p (a rational approximation below |x| = sqrt(2) - 1)
                # is ~110 ULP off near x = -0.41; ours is the C library's.
                tol = 256
            add_case(f"{op}_{t}", "unary", hlo, [xs], unary_op(op, xs, t), ulp=tol)
    # Denormal operands for the ops that only move bits.
    for t, bits in [("f32", [0x00000001, 0x807fffff, 0x00400000]), ("f64", [1, 0x800fffffffffffff])]:
        udt = np.uint32 if t == "f32" else np.uint64
        x = np.array(bits, dtype=udt).view(TYPES[t][0])
        for op in ("abs", "negate"):
            add_case(f"{op}_{t}_denormal", "unary", op, [x], unary_op(op, x, t), nan_bits=True)
    # Complex: XLA's own HLO ops (exponential, log, log-plus-one and sqrt are
    # rewritten by the StableHLO importer, so only ordinary values are compared).
    for t in COMPLEX:
        part = "f32" if t == "c64" else "f64"
        sv = np.array([0.0, -0.0, 1.0, -1.0, np.inf, -np.inf, np.nan], dtype=np.float64)
        special = np.empty(len(sv) ** 2, TYPES[t][0])
        special.real = np.repeat(sv, len(sv))
        special.imag = np.tile(sv, len(sv))
        ordinary = np.empty(24, TYPES[t][0])
        ordinary.real = rng.uniform(-3, 3, 24)
        ordinary.imag = rng.uniform(-3, 3, 24)
        for op, hlo, out in [("abs", "abs", part), ("real", "real", part), ("imag", "imag", part)]:
            x = np.concatenate([special, ordinary])
            add_case(f"{op}_{t}", "unary", hlo, [x], unary_op(op, x, out), ulp=4 if op == "abs" else 0)
        for op, hlo, with_special, ulp in [
            ("negate", "negate", True, 0),
            ("sign", "sign", True, 2),
            ("exponential_minus_one", "exponential-minus-one", True, 8),
            ("rsqrt", "rsqrt", True, 8),
            ("sine", "sine", True, 8),
            ("cosine", "cosine", True, 8),
            ("tan", "tan", True, 8),
            ("tanh", "tanh", True, 8),
            ("logistic", "logistic", True, 8),
            ("exponential", "exponential", False, 8),
            ("log", "log", False, 8),
            ("log_plus_one", "log-plus-one", False, 8),
            ("sqrt", "sqrt", False, 8),
        ]:
            x = np.concatenate([special, ordinary]) if with_special else ordinary
            add_case(f"{op}_{t}", "unary", hlo, [x], unary_op(op, x, t), ulp=ulp)


# ---- Binary ----

BINARY_INT = {
    "add": "add", "subtract": "subtract", "multiply": "multiply", "divide": "divide",
    "remainder": "remainder", "maximum": "maximum", "minimum": "minimum", "and": "and",
    "or": "or", "xor": "xor", "shift_left": "shift-left",
    "shift_right_arithmetic": "shift-right-arithmetic",
    "shift_right_logical": "shift-right-logical", "power": "power",
}
BINARY_FLOAT = {
    "add": ("add", 0), "subtract": ("subtract", 0), "multiply": ("multiply", 0),
    "divide": ("divide", 0), "remainder": ("remainder", 0), "maximum": ("maximum", 0),
    "minimum": ("minimum", 0), "power": ("power", 4), "atan2": ("atan2", 4),
}


def binary_op(name, a, b, out_type):
    return run(f"stablehlo.{name} %arg0, %arg1 : {sig([a, b], out_type, a.shape)}", [a, b], out_type, a.shape)


def gen_binary():
    for t in INTS:
        for op, hlo in BINARY_INT.items():
            if op.startswith("shift"):
                a, b = shift_pairs(t)
            elif op == "power":
                a, b = power_pairs(t)
            else:
                a, b = int_pairs(t)
            add_case(f"{op}_{t}", "binary", hlo, [a, b], binary_op(op, a, b, t))
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    for op in ["and", "or", "xor", "add", "multiply", "maximum", "minimum"]:
        add_case(f"{op}_pred", "binary", BINARY_INT[op], [p, q], binary_op(op, p, q, "pred"))
    for t in FLOATS:
        a, b = float_pairs(t)
        for op, (hlo, ulp) in BINARY_FLOAT.items():
            tol = ulp if t in ("f32", "f64") else min(ulp, 1)
            add_case(f"{op}_{t}", "binary", hlo, [a, b], binary_op(op, a, b, t), ulp=tol)
        ra = random_floats(t, -10, 10)
        rb = random_floats(t, -10, 10)
        for op in ("add", "multiply", "divide", "remainder"):
            add_case(f"{op}_{t}_random", "binary", op, [ra, rb], binary_op(op, ra, rb, t))
        pa = random_floats(t, 0.1, 10)
        tol = 4 if t in ("f32", "f64") else 1
        add_case(f"power_{t}_random", "binary", "power", [pa, rb], binary_op("power", pa, rb, t), ulp=tol)
        add_case(f"atan2_{t}_random", "binary", "atan2", [ra, rb], binary_op("atan2", ra, rb, t), ulp=tol)
    for t, c in [("f32", "c64"), ("f64", "c128")]:
        a, b = float_pairs(t)
        add_case(f"complex_{t}", "binary", "complex", [a, b], binary_op("complex", a, b, c), nan_bits=True)
    for t in COMPLEX:
        sv = np.array([0.0, -0.0, 1.0, -2.0, np.inf, -np.inf, np.nan], dtype=np.float64)
        z = np.empty(len(sv) ** 2, TYPES[t][0])
        z.real = np.repeat(sv, len(sv))
        z.imag = np.tile(sv, len(sv))
        a = np.repeat(z, len(z))
        b = np.tile(z, len(z))
        # Keep the file small: every 23rd pair of the full grid of specials.
        a, b = a[::23], b[::23]
        ra = np.empty(24, TYPES[t][0])
        ra.real, ra.imag = rng.uniform(-3, 3, 24), rng.uniform(-3, 3, 24)
        rb = np.empty(24, TYPES[t][0])
        rb.real, rb.imag = rng.uniform(-3, 3, 24), rng.uniform(-3, 3, 24)
        a = np.concatenate([a, ra])
        b = np.concatenate([b, rb])
        # XLA contracts the multiply-adds inside complex multiply and divide into
        # FMAs; the results differ from separately rounded ones in the last bit.
        for op, ulp in [("add", 0), ("subtract", 0), ("multiply", 2), ("divide", 4)]:
            add_case(f"{op}_{t}", "binary", op, [a, b], binary_op(op, a, b, t), ulp=ulp)
        for op in ("power", "atan2"):
            add_case(f"{op}_{t}", "binary", op, [ra, rb], binary_op(op, ra, rb, t), ulp=16)


# ---- Compare ----


def compare_op(direction, ctype, a, b):
    attrs = (f"{{comparison_direction = #stablehlo<comparison_direction {direction}>, "
             f"compare_type = #stablehlo<comparison_type {ctype}>}}")
    text = f'"stablehlo.compare"(%arg0, %arg1) {attrs} : {sig([a, b], "pred", a.shape)}'
    return run(text, [a, b], "pred", a.shape)


def gen_compare():
    dirs = ["EQ", "NE", "LT", "LE", "GT", "GE"]
    for t in INTS:
        a, b = int_pairs(t)
        ctype = "SIGNED" if t.startswith("s") else "UNSIGNED"
        for d in dirs:
            add_case(f"compare_{d}_{t}", "compare", d, [a, b], compare_op(d, ctype, a, b), compare_type=ctype)
    p = np.array([False, False, True, True])
    q = np.array([False, True, False, True])
    for d in dirs:
        add_case(f"compare_{d}_pred", "compare", d, [p, q], compare_op(d, "UNSIGNED", p, q), compare_type="UNSIGNED")
    for t in FLOATS:
        a, b = float_pairs(t)
        for d in dirs:
            add_case(f"compare_{d}_{t}", "compare", d, [a, b], compare_op(d, "FLOAT", a, b), compare_type="FLOAT")
    # Total order, with NaNs of both signs and payloads, and signed zeros.
    for t, bits in [
        ("f32", [0xffc00000, 0xff800001, 0xff800000, 0xbf800000, 0x80000000, 0x00000000,
                 0x3f800000, 0x7f800000, 0x7f800001, 0x7fc00000]),
        ("f64", [0xfff8000000000000, 0xfff0000000000000, 0x8000000000000000, 0x0000000000000000,
                 0x7ff0000000000000, 0x7ff0000000000001, 0x7ff8000000000000]),
        ("f16", [0xfe00, 0xfc00, 0x8000, 0x0000, 0x3c00, 0x7c00, 0x7c01, 0x7e00]),
        ("bf16", [0xffc0, 0xff80, 0x8000, 0x0000, 0x3f80, 0x7f80, 0x7f81, 0x7fc0]),
    ]:
        udt = {"f32": np.uint32, "f64": np.uint64}.get(t, np.uint16)
        v = np.array(bits, dtype=udt).view(TYPES[t][0])
        a, b = np.repeat(v, len(v)), np.tile(v, len(v))
        for d in dirs:
            add_case(f"compare_{d}_{t}_total", "compare", d, [a, b], compare_op(d, "TOTALORDER", a, b),
                     compare_type="TOTALORDER")
    for t in COMPLEX:
        sv = np.array([0.0, -0.0, 1.0, np.inf, np.nan], dtype=np.float64)
        z = np.empty(len(sv) ** 2, TYPES[t][0])
        z.real = np.repeat(sv, len(sv))
        z.imag = np.tile(sv, len(sv))
        a, b = np.repeat(z, len(z))[::7], np.tile(z, len(z))[::7]
        for d in ("EQ", "NE"):
            add_case(f"compare_{d}_{t}", "compare", d, [a, b], compare_op(d, "FLOAT", a, b), compare_type="FLOAT")


# ---- Select, clamp ----


def gen_select_clamp():
    for t in ["s32", "f32", "f64", "c64", "u8", "pred", "f16"]:
        dt = TYPES[t][0]
        on_true = np.arange(6).astype(dt)
        on_false = (np.arange(6) + 10).astype(dt) if t != "pred" else np.ones(6, dt)
        p = np.array([True, False, True, True, False, False])
        text = f"stablehlo.select %arg0, %arg1, %arg2 : {sig([p, on_true, on_false], t, (6,))}"
        add_case(f"select_{t}", "select", "select", [p, on_true, on_false], run(text, [p, on_true, on_false], t, (6,)))
        ps = np.array(False)
        text = f"stablehlo.select %arg0, %arg1, %arg2 : {sig([ps, on_true, on_false], t, (6,))}"
        add_case(f"select_{t}_scalar", "select", "select", [ps, on_true, on_false],
                 run(text, [ps, on_true, on_false], t, (6,)))
    for t in ["f32", "f64", "f16", "bf16"]:
        dt = TYPES[t][0]
        x = np.array([np.nan, 5, -5, 0.0, -0.0, 0.0, -0.0, 1, 1, np.nan, 0.5, np.inf], dtype=np.float64).astype(dt)
        lo = np.array([0, np.nan, 0, -0.0, 0.0, 0.0, -0.0, 2, 0, np.nan, 0, -np.inf], dtype=np.float64).astype(dt)
        hi = np.array([1, 1, np.nan, 0.0, 0.0, -0.0, -0.0, 0, 0, 1, 1, np.inf], dtype=np.float64).astype(dt)
        text = f"stablehlo.clamp %arg0, %arg1, %arg2 : {sig([lo, x, hi], t, x.shape)}"
        add_case(f"clamp_{t}", "clamp", "clamp", [lo, x, hi], run(text, [lo, x, hi], t, x.shape), nan_bits=False)
        s_lo, s_hi = np.array(-1.0, dt), np.array(1.0, dt)
        text = f"stablehlo.clamp %arg0, %arg1, %arg2 : {sig([s_lo, x, s_hi], t, x.shape)}"
        add_case(f"clamp_{t}_scalar_bounds", "clamp", "clamp", [s_lo, x, s_hi], run(text, [s_lo, x, s_hi], t, x.shape))
    for t in ["s32", "u8", "s64", "u64"]:
        v = int_values(t)
        lo = np.full(v.shape, v[len(v) // 3], v.dtype)
        hi = np.full(v.shape, v[2 * len(v) // 3], v.dtype)
        lo[0], hi[0] = hi[0], lo[0]  # one inverted range
        text = f"stablehlo.clamp %arg0, %arg1, %arg2 : {sig([lo, v, hi], t, v.shape)}"
        add_case(f"clamp_{t}", "clamp", "clamp", [lo, v, hi], run(text, [lo, v, hi], t, v.shape))


# ---- Convert, bitcast-convert, reduce-precision ----


def convert_sources(t):
    dt = TYPES[t][0]
    if t == "pred":
        return np.array([True, False])
    if t in INTS:
        info = np.iinfo(dt)
        candidates = {0, 1, 2, 255, 256, 65504, 65519, 65520, 70000, (1 << 24) + (1 << 16) + 1,
                      (1 << 40) + (1 << 32) + 1, int(info.max), int(info.max) - 1, int(info.min),
                      int(info.min) + 1, -1, -2, -129, -65536}
        vals = sorted(v for v in candidates if int(info.min) <= v <= int(info.max))
        return np.array(vals, dtype=dt)
    if t in FLOATS:
        vals = [np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0, 0.5, -0.5, 1.5, -2.5, 2.7, -2.7,
                127.5, 128.0, -128.5, 255.5, 256.0, 65504.0, 65519.0, 65520.0, 1e5, -1e5, 2147483520.0,
                2147483648.0, -2147483904.0, 4294967296.0, 9.2e18, -9.3e18, 1.9e19, 3e38, -3e38, 1e-5, 3e-8]
        if t == "f64":
            vals += [1 + 2 ** -8 + 2 ** -40, 1 + 2 ** -11 + 2 ** -40, 1e300, -1e-300, 65519.99,
                     2 ** -24 * 1.5, 2 ** 63, 2 ** 64, -(2 ** 63)]
        return np.array(vals, dtype=np.float64).astype(dt)
    part = "f32" if t == "c64" else "f64"
    re = convert_sources(part)[:20]
    z = np.empty(len(re), dt)
    z.real = re
    z.imag = np.linspace(-3, 3, len(re))
    return z


def gen_convert():
    all_types = list(TYPES)
    for src in all_types:
        x = convert_sources(src)
        for dst in all_types:
            if src == dst:
                continue
            text = f"stablehlo.convert %arg0 : {sig([x], dst, x.shape)}"
            add_case(f"convert_{src}_{dst}", "convert", "convert", [x], run(text, [x], dst, x.shape), to=dst)
    # NaN payloads through the float conversions.
    for src, bits in [("f32", [0x7f800001, 0xff800001, 0x7fc12345, 0xffc00000]),
                      ("f64", [0x7ff0000000000001, 0xfff8000000012345]),
                      ("f16", [0x7c01, 0xfe12]),
                      ("bf16", [0x7f81, 0xffc3])]:
        udt = {"f32": np.uint32, "f64": np.uint64}.get(src, np.uint16)
        x = np.array(bits, dtype=udt).view(TYPES[src][0])
        for dst in FLOATS:
            if dst == src:
                continue
            text = f"stablehlo.convert %arg0 : {sig([x], dst, x.shape)}"
            add_case(f"convert_{src}_{dst}_nan", "convert", "convert", [x], run(text, [x], dst, x.shape),
                     to=dst, nan_bits=True)
    # Denormal inputs where XLA keeps them (bit-level conversions).
    for src, dst, bits in [("f32", "bf16", [0x00400000, 0x80012345]), ("bf16", "f32", [0x0040, 0x8001]),
                           ("f32", "f16", [0x00400000, 0x33800001])]:
        udt = np.uint32 if src == "f32" else np.uint16
        x = np.array(bits, dtype=udt).view(TYPES[src][0])
        text = f"stablehlo.convert %arg0 : {sig([x], dst, x.shape)}"
        add_case(f"convert_{src}_{dst}_denormal", "convert", "convert", [x], run(text, [x], dst, x.shape),
                 to=dst, nan_bits=True)


def gen_bitcast():
    x = np.array([1.0, -2.5, np.inf, np.nan], dtype=np.float32)
    for dst, shape in [("s32", (4,)), ("u32", (4,)), ("u8", (4, 4)), ("s16", (4, 2)), ("bf16", (4, 2))]:
        text = f"stablehlo.bitcast_convert %arg0 : {sig([x], dst, shape)}"
        add_case(f"bitcast_f32_{dst}", "bitcast", "bitcast-convert", [x], run(text, [x], dst, shape), to=dst,
                 nan_bits=True)
    bytes16 = np.arange(16, dtype=np.uint8) * 17
    for dst, shape in [("f64", (2,)), ("s32", (4,)), ("f16", (8,))]:
        y = bytes16.reshape(shape + (16 // shape[0],))
        text = f"stablehlo.bitcast_convert %arg0 : {sig([y], dst, shape)}"
        add_case(f"bitcast_u8_{dst}", "bitcast", "bitcast-convert", [y], run(text, [y], dst, shape), to=dst,
                 nan_bits=True)


def gen_reduce_precision():
    def rp(x, e, m):
        t = type_name(x.dtype)
        text = (f'"stablehlo.reduce_precision"(%arg0) {{exponent_bits = {e} : i32, mantissa_bits = {m} : i32}} '
                f": {sig([x], t, x.shape)}")
        return run(text, [x], t, x.shape)

    f32 = np.array([1 + 2 ** -8, 1 + 3 * 2 ** -8, 1 + 2 ** -8 + 2 ** -20, 65519, 65520, 1e-5, 6.1e-5, 6.0e-5,
                    3e-8, np.inf, -np.inf, np.nan, -0.0, 1.0, 1.5, 1.75, 2, 3, 4, 0.5, 0.75, -1.25, 0.25,
                    3.4e38, -1e-30, 1e10], dtype=np.float32)
    f32 = np.concatenate([f32, np.array([0x7f800001, 0xff800001, 0x7fffffff, 0x00000001, 0x807fffff],
                                        dtype=np.uint32).view(np.float32)])
    for e, m in [(5, 10), (8, 7), (8, 0), (1, 1), (2, 1), (4, 3), (5, 2), (8, 23), (11, 30), (6, 0)]:
        add_case(f"reduce_precision_f32_{e}_{m}", "reduce_precision", "reduce-precision", [f32], rp(f32, e, m),
                 exponent_bits=e, mantissa_bits=m, nan_bits=True)
    f64 = np.array([1e-310, 1.5, 1e-39, 1 + 2 ** -24, 1e39, 1 + 2 ** -53, np.nan, -np.inf, 65520.0, -3.25e-5],
                   dtype=np.float64)
    for e, m in [(11, 52), (8, 23), (5, 10), (8, 7), (11, 20)]:
        add_case(f"reduce_precision_f64_{e}_{m}", "reduce_precision", "reduce-precision", [f64], rp(f64, e, m),
                 exponent_bits=e, mantissa_bits=m, nan_bits=True)
    f16 = np.array([1e-5, 1.2, 3e-7, 20.0, 16.0, 15.99, -0.0, np.inf, 65504], dtype=np.float16)
    f16 = np.concatenate([f16, np.array([0x7c01, 0xfe00, 0x0001, 0x03ff], dtype=np.uint16).view(np.float16)])
    for e, m in [(5, 2), (3, 10), (4, 5), (5, 0)]:
        add_case(f"reduce_precision_f16_{e}_{m}", "reduce_precision", "reduce-precision", [f16], rp(f16, e, m),
                 exponent_bits=e, mantissa_bits=m, nan_bits=True)
    b16 = np.array([1.1, 1e-39, 3e38, -2.75, np.nan, 1e-5], dtype=np.float64).astype(bf16)
    for e, m in [(8, 3), (5, 7), (5, 2)]:
        add_case(f"reduce_precision_bf16_{e}_{m}", "reduce_precision", "reduce-precision", [b16], rp(b16, e, m),
                 exponent_bits=e, mantissa_bits=m, nan_bits=True)


def main():
    gen_unary()
    gen_binary()
    gen_compare()
    gen_select_clamp()
    gen_convert()
    gen_bitcast()
    gen_reduce_precision()
    os.makedirs(OUT_DIR, exist_ok=True)
    with open(os.path.join(OUT_DIR, "arrays.bin"), "wb") as f:
        f.write(bytes(blob))
    meta = {"generator": "scripts/gen_semantics_cases.py", "jax": jax.__version__, "arrays": arrays, "cases": cases}
    with open(os.path.join(OUT_DIR, "cases.json"), "w") as f:
        # One array or case per line: small, and diffs stay readable.
        f.write("{\n")
        f.write(f'"generator": {json.dumps(meta["generator"])},\n"jax": {json.dumps(meta["jax"])},\n')
        f.write('"arrays": [\n' + ",\n".join(json.dumps(a, separators=(",", ":")) for a in arrays) + "\n],\n")
        f.write('"cases": [\n' + ",\n".join(json.dumps(c, separators=(",", ":")) for c in cases) + "\n]\n}\n")
    size = len(blob) + os.path.getsize(os.path.join(OUT_DIR, "cases.json"))
    print(f"{len(cases)} cases, {len(blob)} bytes of arrays, {size} bytes in all", file=sys.stderr)


if __name__ == "__main__":
    main()
