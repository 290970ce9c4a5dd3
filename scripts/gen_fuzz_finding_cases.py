#!/usr/bin/env python3
"""Mutants found by fuzzing `hlorun compare --platform host`, with XLA CPU's outputs.

Each program in `../shared/fuzz_findings/` (a mutant of a corpus or StableHLO
test program: infinities, NaNs and values at the edge of the range written
into constants, Cholesky of matrices that are not positive definite, FFT of
non-finite input) once made `compare` fail. XLA CPU (through jaxlib) parses
each, compiles it and runs it on seeded random arguments; the case folders
(the format of `tests/conformance/README.md`) go to `tests/fuzz_findings/`.
`tests/tests/fuzz_findings.rs` checks that `compare` with its defaults
accepts the Host on each, against the f64 shadow reference and against XLA
CPU's outputs (or calls the output undefined where XLA leaves it so); where
XLA refuses the program (`xla_rejects.txt` holds its message), hlorun must
refuse it too.

Requires: pip install jax (CPU). Run from anywhere:
  python3 scripts/gen_fuzz_finding_cases.py [FINDINGS_DIR]
"""

import os
import re
import shutil
import sys
import zlib

import numpy as np

os.environ.setdefault("JAX_PLATFORMS", "cpu")
import jax  # noqa: E402

jax.config.update("jax_enable_x64", True)  # f64 arguments stay f64
from jax._src import xla_bridge  # noqa: E402
from jax._src.lib import xla_client as xc  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from case_writer import case_meta, write_files  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "..", "tests", "fuzz_findings")
FINDINGS = os.path.join(HERE, "..", "..", "shared", "fuzz_findings")


def random_arg(name, i, shape):
    rng = np.random.default_rng(zlib.crc32(("%s/%d" % (name, i)).encode()))
    dtype = shape.numpy_dtype()
    dims = shape.dimensions()
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-3, 4, size=dims).astype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, size=dims).astype(bool)
    return rng.uniform(-1.0, 1.0, size=dims).astype(dtype)


def case_name(file_name):
    """A short folder name: the program's name and the mutant's number."""
    stem = file_name[: -len(".hlo")]
    number = stem.rsplit("_", 1)[-1]
    base = re.sub(r"[^a-z0-9]+", "_", stem.rsplit("_", 1)[0].lower()).strip("_")
    return "%s_%s" % (base[:40].rstrip("_"), number)


def main():
    findings = sys.argv[1] if len(sys.argv) > 1 else FINDINGS
    backend = xla_bridge.get_backend("cpu")
    device = backend.devices()[0]
    if os.path.isdir(OUT):
        shutil.rmtree(OUT)
    os.makedirs(OUT)
    for file_name in sorted(os.listdir(findings)):
        if not file_name.endswith(".hlo"):
            continue
        with open(os.path.join(findings, file_name)) as fh:
            text = fh.read()
        name = case_name(file_name)
        folder = os.path.join(OUT, name)
        os.makedirs(folder)
        try:
            module = xc.hlo.hlo_module_from_text(text)
        except Exception as e:  # XLA refuses the program: so must we.
            with open(os.path.join(folder, "module.hlo"), "w") as fh:
                fh.write(text)
            with open(os.path.join(folder, "xla_rejects.txt"), "w") as fh:
                fh.write(str(e).splitlines()[1] if len(str(e).splitlines()) > 1 else str(e))
            print("%s: XLA rejects it" % name)
            continue
        program = xc.XlaComputation(module.as_serialized_hlo_module_proto()).program_shape()
        mlir = xc._xla.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())
        exe = backend.compile_and_load(mlir, backend.devices()[:1], xc.CompileOptions())
        args = [random_arg(name, i, s) for i, s in enumerate(program.parameter_shapes())]
        outs = exe.execute([jax.device_put(a, device) for a in args])
        outs = [np.asarray(o) for o in outs]
        optimized = exe.hlo_modules()[0].to_string()
        meta = case_meta(name, args, outs, 1e-4, 1e-5)
        meta["source"] = "../shared/fuzz_findings/" + file_name
        write_files(folder, text, optimized, args, outs, meta)
        print("%s: %d argument(s), %d output(s)" % (name, len(args), len(outs)))


if __name__ == "__main__":
    main()
