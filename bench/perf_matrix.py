#!/usr/bin/env python3
"""Performance matrix: op class x element type x shape class, hlorun against XLA CPU.

Generates one HLO program per cell from JAX (`jax.jit(f).lower(...)`, HLO
text), then times each cell with the machinery of `bench/compare_xla.py`:
the same inputs for both sides, XLA and `hlorun bench` alternating round by
round, the median of the round medians kept, peak memory from each side's
buffer assignment. Prints every cell, the geometric mean of the
hlorun/XLA ratios, the worst cells, and every cell above 1.25x.

Cells (op class `dot`, the products):
  element types: f32, f64, bf16, bf16->f32 and f16, f16->f32 (products of
    16-bit floats accumulated in f32, via preferred_element_type, and without:
    a 16-bit result), s8->s32, u8->s32 (quantized matmuls), c64;
  shape classes: square (512^3), large (512x1024 @ 1024x1024), tall-skinny
    (4096x512 @ 512x16), matrix-vector (1024x1024 @ 1024), vector-matrix
    (1024 @ 1024x1024), batched attention heads (bhqd,bhkd->bhqk, 4x8 heads of
    128x64), batch dimension in the middle (qhd,khd->hqk), transposed lhs
    (ki,kj->ij) and transposed rhs (ik,jk->ij).

Usage (from the repository root):

    cargo build --release -p service --bin hlorun
    python3 bench/perf_matrix.py                          # every cell, 3 rounds
    python3 bench/perf_matrix.py --only s8 --only square  # cells whose name has any
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

import ml_dtypes  # installed with jax
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


def generate(out_dir, only):
    import jax
    import jax.numpy as jnp

    jax.config.update("jax_enable_x64", True)
    names = []
    for tname, (dtype, pref) in TYPES.items():
        for sname, (spec, ls, rs) in SHAPES.items():
            name = f"dot_{tname}_{sname}"
            if only and not any(o in name for o in only):
                continue
            dt = jnp.dtype(dtype)
            pet = None if pref is None else jnp.dtype(pref)

            def f(a, b, spec=spec, pet=pet):
                return jnp.einsum(spec, a, b, preferred_element_type=pet)

            text = jax.jit(f).lower(
                jax.ShapeDtypeStruct(ls, dt), jax.ShapeDtypeStruct(rs, dt)
            ).as_text(dialect="hlo")
            with open(os.path.join(out_dir, name + ".hlo"), "w") as fh:
                fh.write(text)
            with open(os.path.join(out_dir, name + ".json"), "w") as fh:
                json.dump({"name": name, "args": [arg_spec(dtype, ls), arg_spec(dtype, rs)],
                           "jax_version": jax.__version__}, fh, indent=1)
            names.append(name)
    return names


def complex_inputs(spec, name, out_dir):
    """compare_xla's inputs, with complex arguments given imaginary parts and
    bf16 ones drawn in f32 and rounded (numpy files bf16 under kind 'V', which
    compare_xla would draw as integers)."""
    drawn = {"complex64": "float32", "bfloat16": "float32"}
    paths, arrays = cx.make_inputs(
        {"args": [dict(a, dtype=drawn.get(a["dtype"], a["dtype"])) for a in spec["args"]]},
        name, out_dir)
    for i, a in enumerate(spec["args"]):
        if a["dtype"] == "complex64":
            x = arrays[i]
            arrays[i] = (x + 1j * x[::-1].copy()).astype(np.complex64)
        elif a["dtype"] == "bfloat16":
            arrays[i] = arrays[i].astype(ml_dtypes.bfloat16)
        else:
            continue
        np.save(paths[i], arrays[i])
    return paths, arrays


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--hlorun", default=os.path.join(cx.REPO, "target", "release", "hlorun"))
    p.add_argument("--platform", default="host")
    p.add_argument("--iters", type=int, default=10)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--only", action="append", default=[])
    p.add_argument("--out", default=None)
    p.add_argument("--timeout", type=float, default=600.0)
    p.add_argument("--json", action="store_true")
    p.add_argument("--write-only", action="store_true")
    args = p.parse_args()

    keep = args.out
    tmp = tempfile.TemporaryDirectory(prefix="perf_matrix_")
    out_dir = keep or tmp.name
    os.makedirs(out_dir, exist_ok=True)
    names = generate(out_dir, args.only)
    if args.write_only:
        print(f"wrote {len(names)} programs to {out_dir}")
        return
    if not os.path.exists(args.hlorun):
        sys.exit(f"perf_matrix: {args.hlorun} not found")
    xla = cx.Xla("cpu")
    results = []
    for name in names:
        hlo_path = os.path.join(out_dir, name + ".hlo")
        with open(os.path.join(out_dir, name + ".json")) as fh:
            spec = json.load(fh)
        with open(hlo_path) as fh:
            text = fh.read()
        paths, arrays = complex_inputs(spec, name, tmp.name)
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
