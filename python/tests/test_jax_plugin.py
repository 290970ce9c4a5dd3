"""The PJRT plugin (docs/jax-plugin.md): JAX programs on hlorun's devices.

Each test runs a script in a fresh interpreter with ``JAX_PLATFORMS=hlorun,cpu``
(JAX picks its backends once per process, and this pytest process already
uses JAX's CPU backend for the other tests): hlorun is JAX's default backend
there, and the script computes every value a second time on JAX's own CPU
backend and compares. Nothing here hard-codes an expected output.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest

try:
    import jax  # noqa: F401
except ImportError:
    if os.environ.get("HLORUN_REQUIRE_JAX"):
        raise
    pytest.skip("JAX is not installed (pip install jax)", allow_module_level=True)

PLATFORMS = ["host", "interpreter"]

# Shared by every script: `check(f, *args)` runs `f` jitted on hlorun's
# default device and on JAX's CPU, and compares the pytrees.
PRELUDE = """
import jax, jax.numpy as jnp, numpy as np
from jax import lax

HL = jax.devices("hlorun")
CPU = jax.devices("cpu")[0]

def on_cpu(f, *args):
    with jax.default_device(CPU):
        args = jax.device_put(args, CPU)
        return jax.jit(f)(*args)

def close(got, want, rtol, atol):
    got_l, got_t = jax.tree.flatten(got)
    want_l, want_t = jax.tree.flatten(want)
    assert got_t == want_t, (got_t, want_t)
    for g, w in zip(got_l, want_l):
        assert g.dtype == w.dtype, (g.dtype, w.dtype)
        assert g.shape == w.shape, (g.shape, w.shape)
        g = np.asarray(g); w = np.asarray(w)
        if g.dtype.kind in "fc" or g.dtype.name == "bfloat16":
            np.testing.assert_allclose(g.astype(np.complex128 if g.dtype.kind == "c"
                                                else np.float64),
                                       w.astype(np.complex128 if w.dtype.kind == "c"
                                                else np.float64),
                                       rtol=rtol, atol=atol)
        else:
            np.testing.assert_array_equal(g, w)

def check(f, *args, rtol=1e-5, atol=1e-6):
    got = jax.jit(f)(*args)
    for leaf in jax.tree.leaves(got):
        assert leaf.devices() <= set(HL), leaf.devices()
    close(got, on_cpu(f, *args), rtol, atol)
    return got
"""


def run(
    script: str,
    platform: str,
    devices: int = 1,
    x64: bool = False,
    jax_platforms: str | None = "hlorun,cpu",
    cpu_devices: int = 1,
) -> str:
    env = dict(os.environ)
    env.pop("JAX_PLATFORMS", None)
    if jax_platforms is not None:
        env["JAX_PLATFORMS"] = jax_platforms
    env.update(
        HLORUN_PJRT_PLATFORM=platform,
        HLORUN_PJRT_DEVICES=str(devices),
        JAX_ENABLE_X64="1" if x64 else "0",
    )
    if cpu_devices > 1:
        # The reference runs on as many CPU devices (jax.pmap needs them).
        env["XLA_FLAGS"] = (
            env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={cpu_devices}"
        ).strip()
    code = PRELUDE + textwrap.dedent(script) + "\nprint('OK')\n"
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0 and "OK" in proc.stdout, (
        f"exit {proc.returncode}\n--- stdout\n{proc.stdout}\n--- stderr\n{proc.stderr[-6000:]}"
    )
    return proc.stdout


@pytest.mark.parametrize("platform", PLATFORMS)
def test_devices_and_default_backend(platform):
    out = run(
        f"""
        assert len(HL) == 3, HL
        assert [d.id for d in HL] == [0, 1, 2]
        assert all(d.platform == "hlorun" for d in HL)
        assert "{platform}" in HL[0].device_kind.lower(), HL[0].device_kind
        assert jax.default_backend() == "hlorun", jax.default_backend()
        assert jax.devices() == HL
        x = jnp.arange(4.0)
        assert x.devices() == {{HL[0]}}
        print("kind", HL[0].device_kind)
        """,
        platform,
        devices=3,
    )
    assert f"hlorun {platform}" in out.lower()


def test_listed_but_not_the_default_without_jax_platforms():
    # Installing hlorun must not move anyone's default device.
    run(
        """
        assert jax.default_backend() == "cpu", jax.default_backend()
        assert len(HL) == 1
        x = jax.device_put(np.arange(3.0, dtype=np.float32), HL[0])
        r = jax.jit(jnp.sin)(x)
        assert r.devices() == {HL[0]}
        np.testing.assert_allclose(np.asarray(r), np.asarray(on_cpu(jnp.sin, np.asarray(x))),
                                   rtol=1e-6)
        """,
        "host",
        jax_platforms=None,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_several_outputs_and_pytrees(platform):
    run(
        """
        x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
        y = np.linspace(0, 1, 20, dtype=np.float32).reshape(4, 5)
        check(lambda a, b: (jnp.tanh(a) @ b, a.sum(), jnp.exp(b).max(axis=0)), x, y)
        params = {"w": y, "b": np.ones(5, np.float32), "layers": [x, (x * 2, 3.0)]}
        def f(p, v):
            h = jnp.maximum(v @ p["w"] + p["b"], 0)
            return {"out": h, "n": [jnp.linalg.norm(h), p["layers"][1][0] * p["layers"][1][1]]}
        check(f, params, x)
        # The same function again: JAX's cache, and hlorun's.
        check(f, params, x)
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_grad_vmap(platform):
    run(
        """
        w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
        xs = np.linspace(0, 2, 20, dtype=np.float32).reshape(5, 4)
        def loss(w, x):
            return jnp.sum(jnp.sin(x @ w) ** 2)
        check(jax.grad(loss), w, xs)
        check(jax.value_and_grad(loss, argnums=(0, 1)), w, xs)
        check(jax.vmap(lambda x: loss(w, x[None])), xs)
        check(jax.vmap(jax.grad(loss), in_axes=(None, 0)), w, xs[:, None, :])
        check(jax.jacfwd(lambda v: jnp.cumsum(v) * v), xs[0])
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_control_flow(platform):
    run(
        """
        xs = np.linspace(-1, 1, 10, dtype=np.float32)
        def cumulative(xs):
            return lax.scan(lambda c, x: (c * 0.9 + x, c), 0.0, xs)
        check(cumulative, xs)
        def collatz(n):
            return lax.while_loop(lambda s: s[0] != 1,
                                  lambda s: (jnp.where(s[0] % 2 == 0, s[0] // 2, 3 * s[0] + 1),
                                             s[1] + 1),
                                  (n, 0))
        check(collatz, np.int32(27))
        check(lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), np.float32(1), xs)
        check(lambda p, x: lax.cond(p > 0, jnp.sin, jnp.cos, x), np.float32(-1), xs)
        check(lambda i, x: lax.switch(i, [jnp.sin, jnp.cos, jnp.tanh], x), np.int32(2), xs)
        check(lambda x: lax.fori_loop(0, 5, lambda i, c: c + i * c, x), xs)
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_random(platform):
    run(
        """
        def draw(seed):
            key = jax.random.key(seed)
            k1, k2, k3 = jax.random.split(key, 3)
            return (jax.random.normal(k1, (4, 5)), jax.random.uniform(k2, (7,)),
                    jax.random.randint(k3, (6,), 0, 100),
                    jax.random.bernoulli(k3, 0.3, (8,)))
        check(draw, np.uint32(0))
        check(draw, np.uint32(42))
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_dtypes(platform):
    run(
        """
        import ml_dtypes
        for dt in [np.float32, np.float16, ml_dtypes.bfloat16]:
            x = np.linspace(-3, 3, 16).astype(dt).reshape(4, 4)
            tol = 1e-5 if dt == np.float32 else 1e-2
            check(lambda a: (a * a + 1, a.sum(axis=0), jnp.abs(a).max()), x, rtol=tol, atol=tol)
        i8 = np.arange(-8, 8, dtype=np.int8).reshape(4, 4)
        check(lambda a: (a * 3, a // 2, jnp.maximum(a, 0), a.astype(np.float32)), i8)
        b = np.array([True, False, True, True])
        check(lambda a: (~a, a & a[::-1], jnp.any(a), a.astype(np.int32)), b)
        c = (np.arange(6) + 1j * np.arange(6)[::-1]).astype(np.complex64).reshape(2, 3)
        check(lambda a: (a * a.conj(), jnp.abs(a), a.real, a @ a.T), c, rtol=1e-5, atol=1e-5)
        i4 = np.arange(-8, 8).astype(ml_dtypes.int4)
        check(lambda a: (a + 1, a.astype(np.int8) * 2), i4)
        u = np.arange(5, dtype=np.uint32)
        check(lambda a: (a << 3, a ^ 7), u)
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_float64_with_x64(platform):
    run(
        """
        x = np.linspace(0, 1, 9, dtype=np.float64).reshape(3, 3)
        got = check(lambda a: (jnp.exp(a) @ a, a.astype(np.int64) + 2**40), x, rtol=1e-12, atol=1e-12)
        assert got[0].dtype == np.float64
        c = (x + 1j * x.T).astype(np.complex128)
        check(lambda a: jnp.linalg.norm(a @ a), c, rtol=1e-12, atol=1e-12)
        """,
        platform,
        x64=True,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_transfers_strides_and_donation(platform):
    run(
        """
        base = np.arange(24, dtype=np.float32).reshape(4, 6)
        for host in [base, base[:, ::2], base.T, np.asfortranarray(base), base[::-1]]:
            d = jax.device_put(host, HL[0])
            np.testing.assert_array_equal(np.asarray(d), host)
            np.testing.assert_array_equal(jax.device_get(d * 2), host * 2)
        # Donation: the argument is consumed, the result is right.
        f = jax.jit(lambda a: a * 2 + 1, donate_argnums=0)
        a = jax.device_put(base, HL[0])
        r = f(a)
        assert a.is_deleted()
        np.testing.assert_array_equal(np.asarray(r), base * 2 + 1)
        try:
            np.asarray(a)
        except RuntimeError as e:
            assert "deleted" in str(e) or "donated" in str(e), e
        else:
            raise AssertionError("a donated array stayed readable")
        # Not donated: stays readable.
        b = jax.device_put(base, HL[0])
        jax.jit(lambda a: a + 1)(b)
        assert not b.is_deleted()
        np.testing.assert_array_equal(np.asarray(b), base)
        # Zero-size and scalar values.
        check(lambda a, s: (a.sum(), a * s, s), np.zeros((0, 3), np.float32), np.float32(2))
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_several_devices(platform):
    run(
        """
        assert len(HL) == 2
        x = np.arange(8, dtype=np.float32)
        on1 = jax.device_put(x, HL[1])
        assert on1.devices() == {HL[1]}
        r = jax.jit(lambda a: jnp.cumsum(a) * 2)(on1)
        assert r.devices() == {HL[1]}, r.devices()
        np.testing.assert_allclose(np.asarray(r), np.asarray(on_cpu(lambda a: jnp.cumsum(a) * 2, x)))
        moved = jax.device_put(r, HL[0])
        assert moved.devices() == {HL[0]}
        np.testing.assert_array_equal(np.asarray(moved), np.asarray(r))
        # A sharded jax.jit over both devices: the global values match CPU's
        # and each device holds its shard.
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        mesh = Mesh(np.array(HL), ("d",))
        rows = NamedSharding(mesh, P("d"))
        m = np.arange(32, dtype=np.float32).reshape(8, 4)
        w = np.linspace(-1, 1, 12, dtype=np.float32).reshape(4, 3)
        everywhere = NamedSharding(mesh, P())
        sm = jax.device_put(m, rows)
        sw = jax.device_put(w, everywhere)
        assert [s.data.shape for s in sm.addressable_shards] == [(4, 4), (4, 4)]
        f = lambda a, b: (jnp.tanh(a @ b), (a * 2).sum())
        out = jax.jit(f, out_shardings=(rows, everywhere))(sm, sw)
        close(out, on_cpu(f, m, w), 1e-5, 1e-6)
        assert out[0].sharding == rows, out[0].sharding
        # Each device holds its own rows (JAX reports the shards' `.shape` as
        # the global one, a known limit: docs/jax-plugin.md).
        np.testing.assert_allclose(np.asarray(out[0].addressable_shards[1].data),
                                   np.asarray(on_cpu(f, m, w)[0])[4:], rtol=1e-5)
        # A sharding constraint inside, and a result split differently.
        cols = NamedSharding(mesh, P(None, "d"))
        def h(a):
            b = jax.lax.with_sharding_constraint(jnp.cumsum(a, axis=1), rows)
            return b * 3
        out = jax.jit(h, out_shardings=cols)(sm)
        # (The reference without the constraint, which names hlorun devices.)
        want = on_cpu(lambda a: jnp.cumsum(a, axis=1) * 3, m)
        close(out, want, 1e-5, 1e-6)
        np.testing.assert_allclose(np.asarray(out.addressable_shards[0].data),
                                   np.asarray(want)[:, :2], rtol=1e-5)
        """,
        platform,
        devices=2,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_errors_carry_hlorun_messages(platform):
    run(
        """
        import jax.numpy as jnp
        def host_cb(x):
            return jax.pure_callback(lambda v: np.asarray(v) * 2,
                                     jax.ShapeDtypeStruct(x.shape, x.dtype), x)
        try:
            jax.jit(host_cb)(jnp.ones(3)).block_until_ready()
        except Exception as e:
            assert "hlorun" in str(e), e
        else:
            raise AssertionError("a host callback ran on hlorun")
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_linalg_decompositions(platform):
    # Lowered as JAX's CPU lowers them, to the LAPACK custom calls hlorun has.
    run(
        """
        r = np.random.RandomState(0).randn(5, 5).astype(np.float32)
        spd = r @ r.T + 5 * np.eye(5, dtype=np.float32)
        check(lambda m: jnp.linalg.eigh(m)[0], spd, rtol=1e-4, atol=1e-4)
        check(lambda m: jnp.linalg.svd(m, compute_uv=False), spd, rtol=1e-4, atol=1e-4)
        check(jnp.linalg.cholesky, spd, rtol=1e-4, atol=1e-4)
        check(lambda m: (jnp.linalg.solve(m, jnp.ones(5)), jnp.linalg.det(m), jnp.linalg.inv(m)),
              spd, rtol=1e-4, atol=1e-4)
        check(lambda m: jnp.abs(jnp.linalg.qr(m)[1]), spd, rtol=1e-4, atol=1e-4)
        check(lambda m: jnp.sort_complex(jnp.linalg.eigvals(m)), spd, rtol=1e-4, atol=1e-4)
        """,
        platform,
    )


# `pcheck(make, *args, n=N)`: `make(devices)` is a pmapped (or shard_map)
# function over those devices; it runs on N hlorun devices and on N CPU
# devices, and the results must match, every hlorun result on the N devices
# with each device holding its own row.
PMAP_PRELUDE = """
CPUS = jax.devices("cpu")

def pcheck(make, *args, n, rtol=1e-5, atol=1e-6):
    got = make(HL[:n])(*args)
    want = make(CPUS[:n])(*args)
    close(got, want, rtol, atol)
    for g, w in zip(jax.tree.leaves(got), jax.tree.leaves(want)):
        assert g.sharding.device_set == set(HL[:n]), g.sharding
        by_device = {s.device: s for s in g.addressable_shards}
        for s in w.addressable_shards:
            mine = by_device[HL[CPUS.index(s.device)]]
            assert mine.index == s.index, (mine.index, s.index)
            close(np.asarray(mine.data), np.asarray(s.data), rtol, atol)
    return got
"""


def run_pmap(script: str, platform: str) -> str:
    """`script` with `pcheck`, on 4 hlorun devices and 4 CPU devices."""
    return run(PMAP_PRELUDE + textwrap.dedent(script), platform, devices=4, cpu_devices=4)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pmap_collectives(platform):
    # jax.pmap over 2 and 4 of 4 devices: each replica's program runs on its
    # device, all at once, meeting at the collectives.
    run_pmap(
        """
        from functools import partial
        pmap = lambda f, **kw: (lambda devs: jax.pmap(f, axis_name="i", devices=devs, **kw))
        for n in (2, 4):
            x = np.linspace(-2, 3, n * 3, dtype=np.float32).reshape(n, 3)
            k = np.arange(n * 5, dtype=np.int32).reshape(n, 5) * 7 - 11
            pcheck(pmap(lambda v: jnp.sin(v) * 2 + 1), x, n=n)
            pcheck(pmap(lambda v: (v / lax.psum(v, "i"), lax.pmean(v, "i"),
                                   lax.pmax(v, "i"), lax.pmin(v, "i"))), x, n=n)
            pcheck(pmap(lambda v: (lax.psum(v, "i"), lax.pmax(v, "i"))), k, n=n)
            ring = [(j, (j + 1) % n) for j in range(n)]
            pcheck(pmap(lambda v, w: (lax.ppermute(v, "i", ring), lax.ppermute(w, "i", ring))),
                   x, k, n=n)
            pcheck(pmap(lambda v: (lax.all_gather(v, "i"), lax.all_gather(v, "i", tiled=True))),
                   x, n=n)
            pcheck(pmap(lambda v: v * lax.axis_index("i") + lax.axis_index("i")), k, n=n)
            sq = np.arange(n * n * 2, dtype=np.float32).reshape(n, n, 2)
            pcheck(pmap(lambda v: lax.all_to_all(v, "i", 0, 0)), sq, n=n)
            # Broadcast (in_axes=None) arguments and nested pytrees in and out.
            tree = {"a": (x, k), "b": [x * 2]}
            def nested(t, scale):
                a, kk = t["a"]
                s = lax.psum(a * scale, "i")
                return {"sum": s, "parts": [kk + lax.axis_index("i"), (t["b"][0] - s,)]}
            pcheck(pmap(nested, in_axes=(0, None)), tree, np.float32(0.5), n=n)
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_pmap_data_parallel_grad_step(platform):
    run_pmap(
        """
        def loss(params, xb, yb):
            h = jnp.tanh(xb @ params["w1"] + params["b1"])
            return jnp.mean((h @ params["w2"] - yb) ** 2)

        def step(params, xb, yb):
            l, g = jax.value_and_grad(loss)(params, xb, yb)
            g = lax.pmean(g, "i")
            new = jax.tree.map(lambda p, d: p - 0.1 * d, params, g)
            return new, lax.pmean(l, "i")

        r = np.random.RandomState(0)
        params = {"w1": r.randn(4, 8).astype(np.float32) * 0.5,
                  "b1": np.zeros(8, np.float32),
                  "w2": r.randn(8, 1).astype(np.float32) * 0.5}
        for n in (2, 4):
            xb = r.randn(n, 6, 4).astype(np.float32)
            yb = r.randn(n, 6, 1).astype(np.float32)
            make = lambda devs: jax.pmap(step, axis_name="i", in_axes=(None, 0, 0), devices=devs)
            new, l = pcheck(make, params, xb, yb, n=n, rtol=1e-5, atol=1e-6)
            # Every replica took the same step.
            for leaf in jax.tree.leaves(new):
                leaf = np.asarray(leaf)
                assert (leaf == leaf[:1]).all()
            # Several steps, each fed the last one's (replicated) parameters
            # straight from the devices, the first donated.
            p_hl = jax.pmap(lambda p: p, devices=HL[:n])(
                jax.tree.map(lambda a: np.stack([a] * n), params))
            p_cpu = jax.tree.map(lambda a: np.stack([a] * n), params)
            train = lambda devs, **kw: jax.pmap(step, axis_name="i", devices=devs, **kw)
            donated = p_hl["w1"]
            for i in range(3):
                p_hl, l_hl = train(HL[:n], donate_argnums=0)(p_hl, xb, yb)
                p_cpu, l_cpu = train(CPUS[:n])(p_cpu, xb, yb)
                if i == 0:
                    assert donated.is_deleted()
            close((p_hl, l_hl), (p_cpu, l_cpu), 1e-5, 1e-6)
        """,
        platform,
    )


@pytest.mark.parametrize("platform", PLATFORMS)
def test_shard_map(platform):
    # jax.jit(shard_map(...)) over the whole mesh: the body runs per device.
    run_pmap(
        """
        from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
        def make(devs):
            mesh = Mesh(np.array(devs).reshape(2, 2), ("x", "y"))
            def body(a, b):
                s = lax.psum(a @ b, "y")
                return (s, lax.psum(s, "x"), lax.all_gather(s, "x", tiled=True),
                        (lax.axis_index("x") * 2 + lax.axis_index("y"))[None])
            ins = (P("x", "y"), P("y", None))
            outs = (P("x", None), P(None, None), P("x", None), P(("x", "y")))
            # (The plugin cannot choose result shardings: they are given,
            # docs/jax-plugin.md.)
            named = lambda specs: tuple(NamedSharding(mesh, s) for s in specs)
            return jax.jit(jax.shard_map(body, mesh=mesh, in_specs=ins, out_specs=outs),
                           in_shardings=named(ins), out_shardings=named(outs))
        a = np.linspace(-1, 1, 8 * 6, dtype=np.float32).reshape(8, 6)
        b = np.linspace(0, 2, 6 * 3, dtype=np.float32).reshape(6, 3)
        pcheck(make, a, b, n=4)

        # A shard_map manual over some mesh axes only needs a partitioner:
        # refused, naming what is missing.
        mesh = Mesh(np.array(HL[:4]).reshape(2, 2), ("x", "y"))
        f = jax.jit(jax.shard_map(lambda v: lax.psum(v, "x"), mesh=mesh, in_specs=P("x"),
                                  out_specs=P(), axis_names={"x"}))
        try:
            f(a).block_until_ready()
        except Exception as e:
            assert "hlorun" in str(e) and "partitioner" in str(e), e
        else:
            raise AssertionError("a partially manual shard_map ran")
        """,
        platform,
    )
