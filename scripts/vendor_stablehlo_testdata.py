#!/usr/bin/env python3
"""Copies a selection of StableHLO's own test programs into tests/stablehlo_testdata/.

openxla/stablehlo's `stablehlo/testdata/*.mlir` are JAX programs with their
inputs and expected outputs embedded, compared by `check.eq` / `check.expect_*`
custom calls (Apache-2.0; the notice is copied beside them). The whole folder
is about 2,300 programs and 20 MB; the repository keeps one program per op
family (the file name up to its first element type) and class of element type
(f32/f64, f16/bf16, integers, bool, complex), the first in sorted order:
every op the folder exercises, on each kind of type it is tested with.
`tests/tests/stablehlo_testdata.rs` runs them; pointing it at a full checkout
runs them all: STABLEHLO_TESTDATA_DIR=.../stablehlo/testdata cargo test -p tests
--test suite stablehlo_testdata.

Run: python3 scripts/vendor_stablehlo_testdata.py STABLEHLO_CHECKOUT [COMMIT]
It rewrites tests/stablehlo_testdata/ from scratch.
"""

import os
import re
import shutil
import sys

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
OUT = os.path.join(ROOT, "tests", "stablehlo_testdata")

TYPES = (
    "bfloat16|float16|float32|float64|int8|int16|int32|int64|uint8|uint16|"
    "uint32|uint64|bool|complex64|complex128|f16|f32|f64|bf16|i1|i8|i16|i32|i64|ui8|ui16|ui32|ui64"
)
FAMILY = re.compile(r"^(.*?)(?:_(?:shape_|dtypes_|lhs_|rhs_|operand_|inshape_)?(?:%s)(?:_|$)).*" % TYPES)


def family(name):
    stem = name[: -len(".mlir")]
    m = FAMILY.match(stem)
    return m.group(1) if m else stem


def type_class(name):
    m = re.search(r"_(%s)(?:_|\.)" % TYPES, name)
    t = m.group(1) if m else ""
    if "complex" in t:
        return "complex"
    if t in ("bool", "i1"):
        return "bool"
    if t.startswith(("bfloat", "float16", "f16", "bf16")):
        return "half"
    if t.startswith(("float", "f")):
        return "float"
    return "int" if t else ""


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    src = sys.argv[1]
    commit = sys.argv[2] if len(sys.argv) > 2 else "unknown"
    testdata = os.path.join(src, "stablehlo", "testdata")
    names = sorted(n for n in os.listdir(testdata) if n.endswith(".mlir"))
    chosen = {}
    for n in names:
        chosen.setdefault((family(n), type_class(n)), n)
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for n in sorted(chosen.values()):
        shutil.copy(os.path.join(testdata, n), os.path.join(OUT, n))
    shutil.copy(os.path.join(src, "LICENSE"), os.path.join(OUT, "LICENSE"))
    with open(os.path.join(OUT, "README.md"), "w") as fh:
        fh.write(
            "# StableHLO's test programs\n\n"
            "A selection of `stablehlo/testdata/*.mlir` from openxla/stablehlo (commit `%s`, "
            "Apache-2.0, see `LICENSE`): one program per op family and kind of element type, "
            "%d of %d, chosen by "
            "`scripts/vendor_stablehlo_testdata.py`. Each computes from embedded inputs and "
            "checks the result against embedded expected values; `tests/tests/stablehlo_testdata.rs` "
            "reads them natively and runs them on the Interpreter and the Host.\n"
            % (commit, len(chosen), len(names))
        )
    print("%d of %d programs" % (len(chosen), len(names)))


if __name__ == "__main__":
    main()
