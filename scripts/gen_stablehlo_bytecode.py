#!/usr/bin/env python3
"""Writes StableHLO portable artifacts (VHLO in MLIR bytecode) beside the
repo's StableHLO text programs, with jaxlib's own serializer, for the
bytecode reader's tests:

- tests/op_matrix/*/module.mlirbc: each case's module.mlir at the current
  StableHLO version of the installed jaxlib;
- tests/stablehlo_testdata/*.mlirbc: each StableHLO test program, with its
  CHLO ops decomposed as JAX decomposes them before serializing (a portable
  artifact holds no CHLO);
- tests/stablehlo_bytecode/versions/: a few programs at older target
  versions across StableHLO's compatibility window, where the ops, their
  attributes and the bytecode format itself differ;
- tests/stablehlo_bytecode/errors/: programs the reader refuses, for the
  messages (which must name the operation and its source location).

Usage: python3 scripts/gen_stablehlo_bytecode.py [--check]
(--check only reports what would change.)
"""
import argparse
import glob
import os
import sys

from jax._src.lib import xla_client
from jaxlib.mlir.dialects import stablehlo

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
# Target versions for the version-window programs: the oldest StableHLO
# version jaxlib still writes, the last of each bytecode format, and 1.x
# releases where ops gained versions (gather/scatter v2 at 1.1, dot_general
# v2 at 1.6).
VERSIONS = ["0.9.0", "0.11.0", "0.13.0", "0.14.0", "0.19.0", "1.0.0", "1.5.0", "1.9.0"]
VERSION_PROGRAMS = [
    "add_f32", "gather_f32", "scatter_add_f32", "dot_general_f32", "conv_f32",
    "reduce_window_max_f32", "sort_key_value_f32", "while_loop_f32", "cumsum_f32",
    "argmax_f32", "select_f32", "dot_general_bf16", "gather_s8",
]


# A VHLO op hlorun does not convert (`einsum`, deprecated in StableHLO), with
# a source location.
ERRORS = {
    "einsum": """module @m {
  func.func public @main(%arg0: tensor<2x3xf32>, %arg1: tensor<3x4xf32>) -> tensor<2x4xf32> {
    %0 = "stablehlo.einsum"(%arg0, %arg1) {einsum_config = "ab,bc->ac"} : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x4xf32> loc("jit(f)/einsum"("model.py":33:7))
    return %0 : tensor<2x4xf32>
  }
}
""",
}


def serialize(text, version):
    try:
        return stablehlo.serialize_portable_artifact_str(text, version)
    except Exception:
        # CHLO ops: decomposed as jaxlib does before serializing for a plugin.
        return xla_client._xla.mlir.serialize_portable_artifact(text, version)


def write(path, data, check):
    old = open(path, "rb").read() if os.path.exists(path) else None
    if old == data:
        return 0
    if not check:
        open(path, "wb").write(data)
    return 1


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    current = stablehlo.get_current_version()
    changed = failed = 0
    for pattern in ("tests/op_matrix/*/module.mlir", "tests/stablehlo_testdata/*.mlir"):
        for f in sorted(glob.glob(os.path.join(ROOT, pattern))):
            try:
                changed += write(f[:-5] + ".mlirbc", serialize(open(f).read(), current), a.check)
            except Exception as e:
                failed += 1
                print(f"{f}: {str(e).splitlines()[0]}", file=sys.stderr)
    out = os.path.join(ROOT, "tests/stablehlo_bytecode/versions")
    os.makedirs(out, exist_ok=True)
    for name in VERSION_PROGRAMS:
        src = os.path.join(ROOT, "tests/op_matrix", name, "module.mlir")
        if not os.path.exists(src):
            print(f"{src}: missing", file=sys.stderr)
            failed += 1
            continue
        for v in VERSIONS:
            try:
                changed += write(os.path.join(out, f"{name}@{v}.mlirbc"), serialize(open(src).read(), v), a.check)
            except Exception as e:
                failed += 1
                print(f"{name}@{v}: {str(e).splitlines()[0]}", file=sys.stderr)
    errors = os.path.join(ROOT, "tests/stablehlo_bytecode/errors")
    os.makedirs(errors, exist_ok=True)
    for name, text in ERRORS.items():
        changed += write(os.path.join(errors, f"{name}.mlirbc"), serialize(text, "1.0.0"), a.check)
    print(f"StableHLO {current}: {changed} file(s) {'would change' if a.check else 'written'}, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
