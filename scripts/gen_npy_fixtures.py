#!/usr/bin/env python3
"""Writes the NumPy-made .npy fixtures under hlo/ir/tests/data/npy/.

The Rust tests (hlo/ir/tests/npy_fixtures.rs) rebuild the same values on
their own from the rules below and check that reading each file gives them, and
that writing them gives back the same bytes wherever NumPy's output is
deterministic (little-endian, C order, format 1.0). Keep the two in step.

Needs: numpy and ml_dtypes (for bfloat16); written with numpy 2.4, ml_dtypes 0.6.
Run from the repository root:  python3 scripts/gen_npy_fixtures.py
"""
import os

import ml_dtypes
import numpy as np

OUT = os.path.join(os.path.dirname(__file__), "..", "hlo", "ir", "tests", "data", "npy")


def save(name, array, version=None):
    path = os.path.join(OUT, name + ".npy")
    if version is None:
        np.save(path, array)
    else:
        with open(path, "wb") as f:
            np.lib.format.write_array(f, array, version=version, allow_pickle=True)


def integers(dtype):
    """[min, -1 (or 1), 0, 1, 2, max] as a 2x3 array: both extremes of the type."""
    info = np.iinfo(dtype)
    low = info.min
    second = -1 if info.min < 0 else 1
    return np.array([low, second, 0, 1, 2, info.max], dtype=dtype).reshape(2, 3)


def floats(dtype, smallest_subnormal):
    """0, -0, 1.5, -2.25, inf, -inf, nan, smallest positive subnormal: a 2x4 array."""
    values = [0.0, -0.0, 1.5, -2.25, np.inf, -np.inf, np.nan, smallest_subnormal]
    return np.array(values, dtype=np.float64).astype(dtype).reshape(2, 4)


def complexes(dtype):
    """(1,-2), (0.5,inf), (nan,-0): a vector of 3."""
    return np.array([1 - 2j, complex(0.5, np.inf), complex(np.nan, -0.0)], dtype=dtype)


def main():
    os.makedirs(OUT, exist_ok=True)
    arrays = {
        "pred": (np.arange(6) % 3 == 0).reshape(2, 3),
        "s8": integers(np.int8),
        "s16": integers(np.int16),
        "s32": integers(np.int32),
        "s64": integers(np.int64),
        "u8": integers(np.uint8),
        "u16": integers(np.uint16),
        "u32": integers(np.uint32),
        "u64": integers(np.uint64),
        "f16": floats(np.float16, 2.0**-24),
        "bf16": floats(ml_dtypes.bfloat16, 2.0**-133),
        "f32": floats(np.float32, 2.0**-149),
        "f64": floats(np.float64, 2.0**-1074),
        "c64": complexes(np.complex64),
        "c128": complexes(np.complex128),
    }
    for name, array in arrays.items():
        save(name, array)
        # The same values in big-endian byte order (no byte order for 1-byte types).
        if array.dtype.itemsize > 1 and array.dtype.kind != "V":
            save(name + "_big_endian", array.astype(array.dtype.newbyteorder(">")))

    # Column-major data: elements are 0..23 of a row-major 2x3x4 array.
    save("f32_fortran", np.asfortranarray(np.arange(24, dtype=np.float32).reshape(2, 3, 4)))
    save("s16_fortran_big_endian",
         np.asfortranarray(np.arange(6, dtype=">i2").reshape(2, 3)))
    # Rank 0, empty arrays, rank 4 (elements 0..N-1 in row-major order).
    save("s32_scalar", np.array(7, dtype=np.int32))
    save("f64_scalar", np.array(-2.5, dtype=np.float64))
    save("f32_empty", np.zeros((0,), dtype=np.float32))
    save("f32_empty_2x0x3", np.zeros((2, 0, 3), dtype=np.float32))
    # Rank 15 with no data: only NumPy's growth padding pushes this header past 128 bytes.
    save("f32_empty_rank15", np.zeros((0,) + (1,) * 14, dtype=np.float32))
    save("u8_rank4", np.arange(120, dtype=np.uint8).reshape(2, 3, 4, 5))
    # A long first dimension (its digits shorten NumPy's growth padding), no data.
    save("f32_empty_long", np.zeros((12345678901, 0), dtype=np.float32))
    # Format versions 2.0 and 3.0: same values as s32.npy.
    save("s32_v2", integers(np.int32), version=(2, 0))
    save("s32_v3", integers(np.int32), version=(3, 0))
    # Files the reader must refuse.
    save("bad_object", np.array([1, "a", None], dtype=object))
    save("bad_structured", np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4")]))
    save("bad_unicode", np.array(["abc", "d"]))
    save("bad_float128", np.zeros(2, dtype=np.longdouble))


if __name__ == "__main__":
    main()
