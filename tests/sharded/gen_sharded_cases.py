"""Writes tests/sharded/: JAX programs sharded over several CPU devices, with
JAX's own results, for checking that hlorun runs XLA's partitioned programs.

One folder per case, in the conformance layout (tests/conformance/README.md):
`module.hlo` (the program as lowered, before partitioning: shardings as
annotations), `optimized.hlo` (as XLA CPU compiled it for the devices: one
per-device program with `num_partitions`, parameter shardings and
collectives), `argN.npy` and `outN.npy` (the global arrays JAX takes and
returns) and `case.json`, which adds, beside dtypes, shapes and tolerances:

* `devices`: how many devices the program runs on;
* `in_shardings` / `out_shardings`: each argument's and result's sharding in
  HLO syntax (`{devices=[4,1]<=[4]}`, `{replicated}`), as JAX's compiled
  executable reports them. XLA's printed program carries the parameters'
  shardings but not the results', so the results' are recorded here.

    XLA_FLAGS=--xla_force_host_platform_device_count=4 \
        python3 tests/sharded/gen_sharded_cases.py [CASE ...]

(the script sets the flag itself when it is not set).
"""

import json
import os
import shutil
import sys

os.environ.setdefault("XLA_FLAGS", "--xla_force_host_platform_device_count=4")

import jax  # noqa: E402

jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P  # noqa: E402

try:
    from jax import shard_map  # noqa: E402
except ImportError:  # older JAX
    from jax.experimental.shard_map import shard_map  # noqa: E402

OUT = os.path.dirname(os.path.abspath(__file__))


def mesh(shape, names):
    return Mesh(np.array(jax.devices()[: int(np.prod(shape))]).reshape(shape), names)


def rand(shape, seed, lo=-1.0, hi=1.0):
    return np.random.default_rng(seed).uniform(lo, hi, size=shape).astype(np.float32)


def hlo_sharding(s, ndim):
    return str(s._to_xla_hlo_sharding(ndim))


def write_case(name, f, args, in_specs, out_specs, m, rtol=1e-5, atol=1e-6):
    ins = tuple(NamedSharding(m, s) for s in in_specs)
    outs = out_specs if isinstance(out_specs, tuple) else (out_specs,)
    out_sh = tuple(NamedSharding(m, s) for s in outs)
    jf = jax.jit(f, in_shardings=ins, out_shardings=out_sh if isinstance(out_specs, tuple) else out_sh[0])
    lowered = jf.lower(*args)
    compiled = lowered.compile()
    placed = [jax.device_put(a, s) for a, s in zip(args, ins)]
    results = [np.asarray(o) for o in jax.tree_util.tree_leaves(jf(*placed))]
    folder = os.path.join(OUT, name)
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    with open(os.path.join(folder, "module.hlo"), "w") as fh:
        fh.write(lowered.as_text(dialect="hlo"))
    with open(os.path.join(folder, "optimized.hlo"), "w") as fh:
        fh.write(compiled.as_text())
    for i, a in enumerate(args):
        np.save(os.path.join(folder, "arg%d.npy" % i), a)
    for i, o in enumerate(results):
        np.save(os.path.join(folder, "out%d.npy" % i), o)
    out_leaves = jax.tree_util.tree_leaves(compiled.output_shardings)
    meta = {
        "name": name,
        "jax_version": jax.__version__,
        "devices": int(m.devices.size),
        "mesh": {k: int(v) for k, v in m.shape.items()},
        "args": [{"dtype": a.dtype.name, "shape": list(a.shape)} for a in args],
        "outputs": [{"dtype": o.dtype.name, "shape": list(o.shape)} for o in results],
        "in_shardings": [hlo_sharding(s, a.ndim) for s, a in zip(ins, args)],
        "out_shardings": [hlo_sharding(s, o.ndim) for s, o in zip(out_leaves, results)],
        "rtol": rtol,
        "atol": atol,
    }
    with open(os.path.join(folder, "case.json"), "w") as fh:
        json.dump(meta, fh, indent=1)
    print("wrote", folder)


def dp_train_step(n=4, name="dp_train_step"):
    """Data parallel: the batch split over `n` devices, the weights
    replicated; one SGD step of a two-layer MLP (gradients all-reduced)."""
    m = mesh((n,), ("data",))

    def step(x, y, w1, w2):
        def loss(w1, w2):
            h = jnp.tanh(x @ w1)
            return jnp.mean((h @ w2 - y) ** 2)

        l, (g1, g2) = jax.value_and_grad(loss, argnums=(0, 1))(w1, w2)
        return w1 - 0.1 * g1, w2 - 0.1 * g2, l

    args = [rand((16, 8), 1), rand((16, 4), 2), rand((8, 16), 3), rand((16, 4), 4)]
    write_case(name, step, args,
               [P("data", None), P("data", None), P(), P()], (P(), P(), P()), m)


def tp_matmul(n=4, name="tp_matmul"):
    """Tensor parallel (Megatron) over `n` devices: the first weight split by
    columns, the second by rows; the hidden layer never gathered, the
    partial products all-reduced; a second result all-gathered."""
    m = mesh((n,), ("model",))

    def mlp(x, w1, w2):
        h = jax.nn.relu(x @ w1)
        return h @ w2, h

    args = [rand((8, 16), 5), rand((16, 32), 6), rand((32, 16), 7)]
    write_case(name, mlp, args,
               [P(), P(None, "model"), P("model", None)], (P(None, "model"), P()), m)


def all_to_all():
    """An all-to-all in shard_map: rows split over devices become columns."""
    m = mesh((4,), ("i",))

    def f(x):
        g = shard_map(lambda b: lax.all_to_all(b, "i", 1, 0, tiled=True), mesh=m,
                      in_specs=P("i", None), out_specs=P(None, "i"))
        return g(x) * 2.0

    write_case("all_to_all", f, [rand((8, 8), 8)], [P("i", None)], P(None, "i"), m)


def permute_ring():
    """A collective-permute ring: each device's block moves to the next."""
    m = mesh((4,), ("i",))

    def f(x):
        n = 4
        g = shard_map(lambda b: lax.ppermute(b, "i", [(j, (j + 1) % n) for j in range(n)]),
                      mesh=m, in_specs=P("i"), out_specs=P("i"))
        return g(x) + 1.0

    write_case("permute_ring", f, [rand((8, 3), 9)], [P("i", None)], P("i", None), m)


def psum_shard_map():
    """psum in shard_map: per-device partial sums, all-reduced."""
    m = mesh((4,), ("i",))

    def f(x, w):
        g = shard_map(lambda b, w: lax.psum(jnp.sin(b) @ w, "i"), mesh=m,
                      in_specs=(P("i", None), P()), out_specs=P())
        return g(x, w)

    write_case("psum_shard_map", f, [rand((8, 6), 10), rand((6, 5), 11)],
               [P("i", None), P()], P(), m)


def reduce_scatter():
    """Row-parallel matmul finished by psum_scatter: partial products summed
    and each device keeps its block of rows (a reduce-scatter)."""
    m = mesh((4,), ("model",))

    def f(x, w):
        g = shard_map(lambda a, b: lax.psum_scatter(a @ b, "model", scatter_dimension=0,
                                                    tiled=True),
                      mesh=m, in_specs=(P(None, "model"), P("model", None)),
                      out_specs=P("model", None))
        return g(x, w)

    write_case("reduce_scatter", f, [rand((8, 16), 14), rand((16, 6), 15)],
               [P(None, "model"), P("model", None)], P("model", None), m)


def mesh_2d():
    """A 2x2 mesh: batch over `data`, features over `model`; one result
    tiled both ways, one reduced over the whole mesh."""
    m = mesh((2, 2), ("data", "model"))

    def f(x, w):
        y = jnp.tanh(x @ w)
        return y, jnp.sum(y * y, axis=0)

    write_case("mesh_2d", f, [rand((8, 12), 12), rand((12, 6), 13)],
               [P("data", None), P(None, "model")], (P("data", "model"), P("model")), m)


def dp_train_step_2dev():
    """The data-parallel step on 2 devices (for 2-rank MPI runs)."""
    dp_train_step(2, "dp_train_step_2dev")


def tp_matmul_2dev():
    """The tensor-parallel MLP on 2 devices (for 2-rank MPI runs)."""
    tp_matmul(2, "tp_matmul_2dev")


CASES = {f.__name__: f for f in [dp_train_step, tp_matmul, all_to_all, permute_ring,
                                 psum_shard_map, reduce_scatter, mesh_2d,
                                 dp_train_step_2dev, tp_matmul_2dev]}

if __name__ == "__main__":
    for name in sys.argv[1:] or CASES:
        CASES[name]()
