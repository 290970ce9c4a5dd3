#!/usr/bin/env python3
"""Writes `module.jaxexport` into every op-matrix case: the case's JAX
function, exported with `jax.export` and serialized, so the conformance
runner can run each case's program a fifth way (a jax.export round trip:
JAX's serialization read back by hlorun, checked against XLA CPU's outputs
the case already holds).

The functions and arguments are gen_op_matrix.py's; each case's arguments
are checked to equal its `argN.npy` before its export is written.
Needs `pip install jax flatbuffers`.

Usage: python3 scripts/gen_op_matrix_exports.py
"""
import os
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_op_matrix as g  # noqa: E402
import jax  # noqa: E402
from jax import export  # noqa: E402


def main():
    written, skipped = 0, []
    for name, (dtypes, build) in g.OPS.items():
        for d in dtypes:
            case = "%s_%s" % (name, d)
            folder = os.path.join(g.OUT, case)
            if not os.path.isdir(folder):
                continue
            f, args, _ = build(d)
            args = [np.asarray(a) for a in args]
            for i, a in enumerate(args):
                saved = np.load(os.path.join(folder, "arg%d.npy" % i))
                # (bf16 is saved as raw 2-byte records: compare bytes and shape.)
                if saved.shape != a.shape or saved.tobytes() != a.tobytes():
                    raise SystemExit("%s: argument %d differs from arg%d.npy" % (case, i, i))
            try:
                exp = export.export(jax.jit(f, keep_unused=True))(*args)
                data = exp.serialize()
            except Exception as e:
                skipped.append((case, str(e).splitlines()[0][:120]))
                continue
            with open(os.path.join(folder, "module.jaxexport"), "wb") as fh:
                fh.write(data)
            written += 1
    for case, msg in skipped:
        print("skipped %s: %s" % (case, msg))
    print("%d exports written, %d skipped" % (written, len(skipped)))


if __name__ == "__main__":
    main()
