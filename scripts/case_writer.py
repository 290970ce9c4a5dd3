"""Writing one conformance case folder, shared by the case generators.

A case (the format of `tests/conformance/README.md`) is a folder with
`module.hlo` (the jitted program as lowered), `optimized.hlo` (as XLA CPU
compiled it), `arg<i>.npy` and `out<i>.npy` (the arguments and XLA CPU's
outputs) and `case.json` (name, versions, dtypes and shapes, tolerances); and,
where the generator has it, `module.mlir` (the same program as StableHLO text,
as `jax.jit(f).lower(...).as_text()` prints it).
"""

import json
import os

import jax
import ml_dtypes
import numpy as np

BF16 = np.dtype(ml_dtypes.bfloat16)


def dtype_name(a):
    return "bfloat16" if a.dtype == BF16 else a.dtype.name


def run_jitted(f, args, keep_unused=False, with_stablehlo=False):
    """`(module, optimized, outs)` of `jax.jit(f)` on `args`: the lowered and
    the compiled HLO text and the output leaves as numpy arrays; with
    `with_stablehlo`, `(module, optimized, outs, stablehlo)`, the last the
    lowered program as StableHLO text with its source locations."""
    jf = jax.jit(f, keep_unused=keep_unused)
    lowered = jf.lower(*args)
    module = lowered.as_text(dialect="hlo")
    optimized = lowered.compile().as_text()
    outs = [np.asarray(o) for o in jax.tree_util.tree_leaves(jf(*args))]
    if with_stablehlo:
        return module, optimized, outs, lowered.as_text(debug_info=True)
    return module, optimized, outs


def case_meta(name, args, outs, rtol, atol):
    """The `case.json` object of a case."""
    return {
        "name": name,
        "jax_version": jax.__version__,
        "args": [{"dtype": dtype_name(a), "shape": list(a.shape)} for a in args],
        "outputs": [{"dtype": dtype_name(o), "shape": list(o.shape)} for o in outs],
        "rtol": rtol,
        "atol": atol,
    }


def write_files(folder, module, optimized, args, outs, meta, save=np.save, stablehlo=None):
    """Writes the case's files into the existing `folder`; `save(path, array)`
    writes each `.npy`; `stablehlo`, when given, is written as `module.mlir`."""
    with open(os.path.join(folder, "module.hlo"), "w") as fh:
        fh.write(module)
    if stablehlo is not None:
        with open(os.path.join(folder, "module.mlir"), "w") as fh:
            fh.write(stablehlo)
    with open(os.path.join(folder, "optimized.hlo"), "w") as fh:
        fh.write(optimized)
    for i, a in enumerate(args):
        save(os.path.join(folder, "arg%d.npy" % i), a)
    for i, o in enumerate(outs):
        save(os.path.join(folder, "out%d.npy" % i), o)
    with open(os.path.join(folder, "case.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
