"""Regenerates the test data of service/tests/cli_run.rs with JAX (CPU).

Each program is lowered the way a JAX user's program is (`jax.jit(f).lower(...)
.as_text(dialect="hlo")`); inputs are saved as argN.npy and JAX's own results as
outN.npy (a tuple result flattened to its leaves), so the tests compare hlorun's
output with values computed by XLA, not by this project.
"""
import os
import jax
import jax.numpy as jnp
import numpy as np

here = os.path.dirname(os.path.abspath(__file__))


def save(name, f, *args):
    d = os.path.join(here, name)
    os.makedirs(d, exist_ok=True)
    with open(os.path.join(d, "module.hlo"), "w") as fh:
        fh.write(jax.jit(f).lower(*args).as_text(dialect="hlo"))
    for i, a in enumerate(args):
        np.save(os.path.join(d, f"arg{i}.npy"), a)
    outs = jax.tree_util.tree_leaves(jax.jit(f)(*args))
    for i, o in enumerate(outs):
        np.save(os.path.join(d, f"out{i}.npy"), np.asarray(o))


# Two outputs (a tuple result) from elementwise ops only.
def two_outputs(x, y):
    return x * y + x, jnp.maximum(x, y) - 1.0


save("two_outputs", two_outputs,
     np.arange(6, dtype=np.float32).reshape(2, 3) - 2.5,
     np.full((2, 3), 0.75, np.float32))
