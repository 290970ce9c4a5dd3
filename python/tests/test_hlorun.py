"""Tests of the hlorun Python package (`pip install ./python pytest jax`)."""

import os
import re
import threading
import time
from pathlib import Path

import numpy as np
import pytest

import hlorun

try:
    import jax
    import ml_dtypes
except ImportError:
    # Every test here lowers with JAX or compares with it. CI installs it and
    # sets HLORUN_REQUIRE_JAX, so there a missing JAX is a failure.
    if os.environ.get("HLORUN_REQUIRE_JAX"):
        raise
    pytest.skip("JAX is not installed (pip install jax): the tests compare with it",
                allow_module_level=True)
jnp = jax.numpy
lax = jax.lax

ROOT = Path(__file__).resolve().parents[2]
PLATFORMS = ["host", "interpreter"]

PAIR_HLO = """HloModule pair

ENTRY e {
  x = f32[2,3] parameter(0)
  y = s32[3] parameter(1)
  s = f32[2,3] add(x, x)
  n = s32[3] negate(y)
  ROOT t = (f32[2,3], s32[3]) tuple(s, n)
}
"""


def test_platforms_lists_interpreter_and_host():
    listing = hlorun.platforms()
    by_name = {p.name: p for p in listing}
    assert {"Interpreter", "Host"} <= set(by_name), listing
    assert "cpu" in by_name["Host"].aliases
    for p in listing:
        assert isinstance(p.available, bool)
        assert p.available == (p.reason is None), p
    assert by_name["Interpreter"].available and by_name["Host"].available
    assert sum(p.default for p in listing) == 1, listing


@pytest.mark.parametrize("platform", PLATFORMS)
def test_softmax_example(platform):
    exe = hlorun.compile(str(ROOT / "examples" / "softmax.hlo"), platform=platform)
    assert exe.platform.lower() == platform
    assert exe.parameters == []
    out = exe()
    x = np.arange(4, dtype=np.float64)
    want = np.exp(x - x.max()) / np.exp(x - x.max()).sum()
    assert out.dtype == np.float32 and out.shape == (4,)
    np.testing.assert_allclose(out, want, rtol=1e-6)
    # A path object works too, and the text itself.
    np.testing.assert_array_equal(hlorun.compile(ROOT / "examples" / "softmax.hlo", platform)(), out)
    text = (ROOT / "examples" / "softmax.hlo").read_text()
    np.testing.assert_array_equal(hlorun.compile(text, platform)(), out)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_stablehlo_text_as_jax_prints_it(platform):
    # `lower(...).as_text()` is StableHLO: compiled as is, with no HLO in between.
    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0), jnp.argmax(x, axis=1)

    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    w = np.linspace(0, 2, 18, dtype=np.float32).reshape(6, 3)
    text = jax.jit(f).lower(x, w).as_text()
    assert text.lstrip().startswith(("module", "#loc"))
    got = hlorun.compile(text, platform)(x, w)
    want = jax.jit(f)(x, w)
    np.testing.assert_allclose(got[0], np.asarray(want[0]), rtol=1e-5)
    np.testing.assert_array_equal(got[1], np.asarray(want[1]))
    # And as a file.
    path = ROOT / "tests" / "op_matrix" / "argmax_f32" / "module.mlir"
    arg = np.load(ROOT / "tests" / "op_matrix" / "argmax_f32" / "arg0.npy")
    out = np.load(ROOT / "tests" / "op_matrix" / "argmax_f32" / "out0.npy")
    np.testing.assert_array_equal(hlorun.compile(path, platform)(arg), out)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_tuple_result(platform):
    exe = hlorun.compile(PAIR_HLO, platform=platform)
    assert [p[1:] for p in exe.parameters] == [("float32", (2, 3)), ("int32", (3,))]
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.array([1, -2, 3], dtype=np.int32)
    s, n = exe(x, y)
    np.testing.assert_array_equal(s, x + x)
    np.testing.assert_array_equal(n, -y)
    assert s.dtype == np.float32 and n.dtype == np.int32
    # Outputs are ordinary, writable arrays that own (a view of) their own memory.
    s[0, 0] = 42.0
    assert not np.shares_memory(s, n)
    # Non-contiguous, big-endian and __array__ arguments are accepted.
    class Wrapper:
        def __array__(self, dtype=None, copy=None):
            return x

    xt = np.asfortranarray(x)
    s2, _ = exe(xt, y.astype(">i4"))
    np.testing.assert_array_equal(s2, x + x)
    s3, _ = exe(Wrapper(), y)
    np.testing.assert_array_equal(s3, x + x)


ELEMENT_TYPES = [
    ("bool", "pred"),
    ("int8", "s8"),
    ("int16", "s16"),
    ("int32", "s32"),
    ("int64", "s64"),
    ("uint8", "u8"),
    ("uint16", "u16"),
    ("uint32", "u32"),
    ("uint64", "u64"),
    ("float16", "f16"),
    ("bfloat16", "bf16"),
    ("float32", "f32"),
    ("float64", "f64"),
    ("complex64", "c64"),
    ("complex128", "c128"),
]


def _np_dtype(name):
    return np.dtype(getattr(ml_dtypes, name)) if name == "bfloat16" else np.dtype(name)


@pytest.mark.parametrize("platform", PLATFORMS)
@pytest.mark.parametrize("dtype,hlo", ELEMENT_TYPES)
def test_element_types_round_trip(platform, dtype, hlo):
    op = "not" if hlo == "pred" else "add"
    operands = "x" if op == "not" else "x, x"
    text = (
        f"HloModule {hlo}_ops\n\nENTRY e {{\n  x = {hlo}[2,3] parameter(0)\n"
        f"  y = {hlo}[2,3] {op}({operands})\n  ROOT t = ({hlo}[2,3], {hlo}[2,3]) tuple(y, x)\n}}\n"
    )
    dt = _np_dtype(dtype)
    values = np.array([[0, 1, 2], [3, 100, 127]])
    if dtype == "bool":
        x = (values % 2).astype(dt)
        want = ~x
    else:
        x = values.astype(dt)
        if dt.kind == "c":
            x = x + 1j * x[::-1]
        with np.errstate(over="ignore"):
            want = (x + x).astype(dt)
    y, back = hlorun.compile(text, platform)(x)
    assert y.dtype == dt and back.dtype == dt and y.shape == (2, 3)
    np.testing.assert_array_equal(back, x)
    np.testing.assert_array_equal(y, want)


@pytest.mark.parametrize("dtype,hlo", [("int4", "s4"), ("float8_e4m3fn", "f8e4m3fn")])
def test_narrow_element_types(dtype, hlo):
    dt = np.dtype(getattr(ml_dtypes, dtype))
    x = np.array([[-3, -1, 0], [1, 2, 5]]).astype(dt)
    text = (
        f"HloModule narrow\n\nENTRY e {{\n  x = {hlo}[2,3] parameter(0)\n"
        f"  f = f32[2,3] convert(x)\n  ROOT t = (f32[2,3], {hlo}[2,3]) tuple(f, x)\n}}\n"
    )
    f, back = hlorun.compile(text, "interpreter")(x)
    np.testing.assert_array_equal(f, x.astype(np.float32))
    assert back.dtype == dt
    np.testing.assert_array_equal(back.astype(np.float32), x.astype(np.float32))


def test_host_results_reach_numpy_without_a_copy():
    text = "HloModule neg\n\nENTRY e {\n  x = f32[512,512] parameter(0)\n  ROOT r = f32[512,512] negate(x)\n}\n"
    exe = hlorun.compile(text, "host")
    x = np.ones((512, 512), np.float32)
    is_tuple, bufs = exe._native.run([hlorun._arg_spec(0, x)])
    assert not is_tuple and len(bufs) == 1
    # Host hands its result allocation to the literal (no device-to-host copy) ...
    assert bufs[0].adopted
    # ... and NumPy views the literal's bytes (no copy either).
    a, b = hlorun._from_output(bufs[0]), hlorun._from_output(bufs[0])
    assert np.shares_memory(a, b)
    np.testing.assert_array_equal(a, -x)
    del bufs
    a[0, 0] = 7.0  # the array keeps the buffer alive and is writable
    assert b[0, 0] == 7.0


def test_dlpack_argument():
    exe = hlorun.compile(PAIR_HLO, "interpreter")
    x = jnp.arange(6, dtype=jnp.float32).reshape(2, 3)
    y = np.array([1, 2, 3], np.int32)
    s, _ = exe(np.from_dlpack(x), y)
    np.testing.assert_array_equal(s, 2 * np.asarray(x))
    s, _ = exe(x, y)  # a jax.Array through __array__
    np.testing.assert_array_equal(s, 2 * np.asarray(x))


def test_argument_errors_name_both_shapes():
    exe = hlorun.compile(PAIR_HLO, "interpreter")
    x = np.zeros((2, 3), np.float32)
    y = np.zeros(3, np.int32)
    with pytest.raises(hlorun.InvalidArgumentError) as e:
        exe(np.zeros((3, 2), np.float32), y)
    assert "f32[3,2]" in str(e.value) and "f32[2,3]" in str(e.value), e.value
    assert e.value.code == "INVALID_ARGUMENT"
    assert isinstance(e.value, hlorun.HloError)
    with pytest.raises(hlorun.InvalidArgumentError) as e:
        exe(x.astype(np.float64), y)
    assert "f64[2,3]" in str(e.value) and "f32[2,3]" in str(e.value), e.value
    with pytest.raises(hlorun.InvalidArgumentError, match=r"takes 2 argument\(s\) but 1 were given"):
        exe(x)
    with pytest.raises(hlorun.InvalidArgumentError, match="has no HLO element type"):
        exe(np.array(["a", "b"]), y)


def test_malformed_hlo_reports_line_and_column():
    bad = "HloModule m\n\nENTRY e {\n  x = f32[2] parameter(0)\n  ROOT y = f32[2] frobnicate(x)\n}\n"
    with pytest.raises(hlorun.HloError) as e:
        hlorun.compile(bad, "interpreter")
    assert re.search(r"\b5:\d+", str(e.value)), e.value
    assert e.value.code == type(e.value).code
    with pytest.raises(hlorun.NotFoundError, match="no/such/module.hlo"):
        hlorun.compile("no/such/module.hlo")
    with pytest.raises(hlorun.NotFoundError):
        hlorun.compile(PAIR_HLO, platform="no-such-platform")


# --- jit on real JAX programs -------------------------------------------------


def _close(got, want, dtype):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape and got.dtype == want.dtype, (got.dtype, want.dtype)
    if np.issubdtype(want.dtype, np.integer) or want.dtype == np.bool_:
        np.testing.assert_array_equal(got, want)
    elif want.dtype == ml_dtypes.bfloat16:
        np.testing.assert_allclose(got.astype(np.float32), want.astype(np.float32), rtol=2e-2, atol=2e-2)
    else:
        np.testing.assert_allclose(got, want, rtol=2e-5, atol=2e-6)


def _check(f, *args, platform, **kwargs):
    got = hlorun.jit(f, platform=platform)(*args, **kwargs)
    want = jax.jit(f)(*args, **kwargs)
    gl, gt = jax.tree_util.tree_flatten(got)
    wl, wt = jax.tree_util.tree_flatten(want)
    assert gt == wt
    for g, w in zip(gl, wl):
        assert isinstance(g, np.ndarray)
        _close(g, w, w.dtype)
    return got


def _mlp(params, x):
    h = jnp.tanh(x @ params["w1"] + params["b1"])
    logits = h @ params["w2"] + params["b2"]
    return {"logits": logits, "probs": jax.nn.softmax(logits, axis=-1)}


def _params(key, sizes=(8, 16, 4)):
    k1, k2, k3, k4 = jax.random.split(key, 4)
    return {
        "w1": jax.random.normal(k1, (sizes[0], sizes[1]), jnp.float32) * 0.3,
        "b1": jax.random.normal(k2, (sizes[1],), jnp.float32),
        "w2": jax.random.normal(k3, (sizes[1], sizes[2]), jnp.float32) * 0.3,
        "b2": jax.random.normal(k4, (sizes[2],), jnp.float32),
    }


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_mlp_with_pytree_params(platform):
    params = _params(jax.random.PRNGKey(0))
    x = np.random.default_rng(0).standard_normal((5, 8)).astype(np.float32)
    out = _check(_mlp, params, x, platform=platform)
    assert set(out) == {"logits", "probs"}


def _layernorm_softmax(x, gamma, beta):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    y = (x - mean) * lax.rsqrt(var + 1e-5) * gamma + beta
    return jax.nn.softmax(y, axis=-1), y


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_layernorm_softmax(platform):
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 32)).astype(np.float32)
    gamma = rng.standard_normal(32).astype(np.float32)
    beta = rng.standard_normal(32).astype(np.float32)
    _check(_layernorm_softmax, x, gamma, beta, platform=platform)


def _scan_and_loop(xs, init):
    def step(carry, x):
        carry = 0.9 * carry + jnp.sin(x)
        return carry, carry * 2.0

    final, ys = lax.scan(step, init, xs)
    total = lax.fori_loop(0, 7, lambda i, acc: acc + i * jnp.cos(acc), final)
    return final, ys, total


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_scan_and_fori_loop(platform):
    rng = np.random.default_rng(2)
    xs = rng.standard_normal((10, 3)).astype(np.float32)
    init = np.zeros(3, np.float32)
    _check(_scan_and_loop, xs, init, platform=platform)


def _int_ops(a, b, c):
    q = jnp.where(b != 0, a // jnp.where(b == 0, 1, b), 0)
    r = jnp.where(b != 0, a % jnp.where(b == 0, 1, b), 0)
    bits = (a & 0x0F0F) ^ (b | 3) ^ (a << 2) ^ (a >> 1)
    u = (c * np.uint8(7) + np.uint8(200)) >> 1
    return q, r, bits, jnp.cumsum(a), u, (a > b) & (c > 5), jnp.max(a)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_integer_ops_exact(platform):
    rng = np.random.default_rng(3)
    a = rng.integers(-1000, 1000, size=64).astype(np.int32)
    b = rng.integers(-9, 9, size=64).astype(np.int32)
    c = rng.integers(0, 255, size=64).astype(np.uint8)
    _check(_int_ops, a, b, c, platform=platform)


def _bf16_program(x, w):
    y = jnp.dot(x, w, preferred_element_type=jnp.float32)
    return jnp.tanh(y).astype(jnp.bfloat16), (x * 2 + 1).astype(jnp.bfloat16)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_bf16(platform):
    rng = np.random.default_rng(4)
    x = rng.standard_normal((4, 16)).astype(ml_dtypes.bfloat16)
    w = (rng.standard_normal((16, 8)) * 0.2).astype(ml_dtypes.bfloat16)
    got = _check(_bf16_program, x, w, platform=platform)
    assert got[0].dtype == ml_dtypes.bfloat16


def _with_kwargs(x, y=None, *, scale, mode="add"):
    out = x * scale
    if mode == "add":
        out = out + (0 if y is None else y)
    else:
        out = out * (1 if y is None else y)
    return out


@pytest.mark.parametrize("platform", PLATFORMS)
def test_jit_kwargs_and_static_args(platform):
    x = np.arange(4, dtype=np.float32)
    y = np.full(4, 3.0, np.float32)
    f = hlorun.jit(_with_kwargs, platform=platform, static_argnames=("mode",))
    ref = jax.jit(_with_kwargs, static_argnames=("mode",))
    for kwargs in ({"scale": 2.0}, {"scale": 2.0, "y": y}, {"y": y, "scale": 0.5, "mode": "mul"}):
        _close(f(x, **kwargs), ref(x, **kwargs), np.float32)
    _close(f(x, y, scale=np.float32(3), mode="mul"), ref(x, y, scale=np.float32(3), mode="mul"), np.float32)


def _tile(x, k, scale=1.0):
    return jnp.tile(x, k) * scale


@pytest.mark.parametrize("static", [{"static_argnames": ("k",)}, {"static_argnums": (1,)}])
def test_jit_static_argument_by_name_or_position(static):
    x = np.arange(3, dtype=np.float32)
    f = hlorun.jit(_tile, platform="host", **static)
    ref = jax.jit(_tile, static_argnames=("k",))
    for args, kwargs in [((x, 2), {}), ((x,), {"k": 3, "scale": 2.0}), ((x, 2, 0.5), {})]:
        _close(f(*args, **kwargs), ref(*args, **kwargs), np.float32)
    # Empty and None outputs keep their structure.
    assert hlorun.jit(lambda: (jnp.ones(2), {}), platform="host")()[1] == {}
    assert hlorun.jit(lambda x: None, platform="host")(x) is None


def test_jit_compiles_once_per_signature():
    f = hlorun.jit(lambda x, s: (x * s).sum(), platform="interpreter")
    x4 = np.ones(4, np.float32)
    assert f(x4, 2.0) == 8.0
    assert f(x4 + 1, 3.0) == 24.0  # same shapes, a Python scalar's value: no recompile
    assert f.compiles == 1 and f.cache_size == 1
    f(np.ones(5, np.float32), 2.0)  # new shape
    assert f.compiles == 2
    f(np.ones(5, np.int32), 2.0)  # new dtype
    assert f.compiles == 3
    f(np.ones(5, np.int32), 2)  # an int scalar is another weak type
    assert f.compiles == 4
    f(np.ones(5, np.int32), 7)
    assert f.compiles == 4
    g = hlorun.jit(_with_kwargs, platform="interpreter", static_argnames=("mode",))
    g(x4, scale=1.0, mode="add")
    g(x4, scale=5.0, mode="add")
    assert g.compiles == 1
    g(x4, scale=1.0, mode="mul")  # a static argument's value is part of the signature
    assert g.compiles == 2
    g(x4, y=x4, scale=1.0, mode="mul")  # another pytree structure
    assert g.compiles == 3


# --- compare -------------------------------------------------------------------


def test_compare_scale_rule_passes_a_correct_program():
    params = _params(jax.random.PRNGKey(5))
    x = np.random.default_rng(5).standard_normal((3, 8)).astype(np.float32)
    r = hlorun.compare(_mlp, params, x, platform="host")
    assert r.ok and bool(r), r
    assert r.rule == "scale"
    assert "rule: |got - want| <= 16 ULPs" in r.report and "scale" in r.report
    assert r.summary == ""
    r = hlorun.compare(str(ROOT / "examples" / "softmax.hlo"), platform="host")
    assert r.ok, r


def test_compare_reports_a_mismatch():
    x = np.linspace(-2, 2, 16, dtype=np.float32)
    f = lambda x: jnp.tanh(x) * 3.0  # noqa: E731
    wrong = np.asarray(jax.jit(f)(x)).copy()
    wrong[5] += 0.25
    r = hlorun.compare(f, x, platform="host", expected=wrong)
    assert not r.ok
    assert "MISMATCH" in r.report and "at [5]" in r.report and "scale" in r.report, r.report
    assert "differ from" in r.summary
    # The tolerance rule against the reference platform.
    r = hlorun.compare(f, x, platform="host", rtol=1e-5, atol=1e-6)
    assert r.ok and r.rule == "tolerance" and "tolerance rule" in r.report, r
    r = hlorun.compare(f, x, platform="host", rtol=1e-5, atol=1e-6, expected=wrong)
    assert not r.ok and "MISMATCH" in r.report, r
    with pytest.raises(hlorun.InvalidArgumentError, match="output"):
        hlorun.compare(f, x, platform="host", expected=[wrong, wrong])


# --- the GIL ------------------------------------------------------------------


def test_gil_released_while_running():
    """Another Python thread keeps running while a program executes.

    With the GIL held through the native call, the main thread could not run
    during it: its ticks would show a gap as long as the call. Released, the
    main thread runs throughout and its ticks leave no long gap. The program is
    a loop sized to take at least 0.3 s.
    """
    f = hlorun.jit(
        lambda n, x: lax.fori_loop(0, n, lambda i, v: jnp.sin(v) + 0.5, x),
        platform="interpreter",
    )
    x = np.ones(64, np.float32)
    exe = f.executable(np.int32(1), x)
    n = 100
    while True:
        t = time.perf_counter()
        exe(np.int32(n), x)
        if time.perf_counter() - t >= 0.3 or n >= 10**8:
            break
        n *= 4
    window = {}

    def worker():
        window["start"] = time.perf_counter()
        exe(np.int32(n), x)
        window["end"] = time.perf_counter()

    thread = threading.Thread(target=worker)
    ticks = []
    thread.start()
    while thread.is_alive():
        ticks.append(time.perf_counter())
    thread.join()
    duration = window["end"] - window["start"]
    inside = [window["start"]] + [t for t in ticks if window["start"] <= t <= window["end"]]
    inside.append(window["end"])
    longest_gap = max(b - a for a, b in zip(inside, inside[1:]))
    assert longest_gap < 0.5 * duration, (longest_gap, duration)


@pytest.mark.parametrize("platform", PLATFORMS)
def test_compile_portable_artifacts_and_jax_export(platform):
    # The two binary forms JAX hands over: a StableHLO portable artifact (as a
    # PJRT plugin receives it) and a serialized jax.export module, given as
    # bytes or as a file, read by hlorun's own reader.
    from jax import export
    from jax._src.lib import xla_client

    def f(x, w):
        return jnp.tanh(x @ w).sum(axis=0), jnp.argmax(x, axis=1)

    x = np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6)
    w = np.linspace(1, -1, 18, dtype=np.float32).reshape(6, 3)
    want = jax.jit(f)(x, w)
    lowered = jax.jit(f).lower(x, w)
    artifact = xla_client._xla.mlir.serialize_portable_artifact(lowered.as_text(), "1.0.0")
    assert artifact[:4] == b"ML\xefR"
    exported = export.export(jax.jit(f))(x, w).serialize()
    for module in (artifact, exported):
        got = hlorun.compile(module, platform=platform)(x, w)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-6, atol=1e-6)
        np.testing.assert_array_equal(got[1], want[1])


def test_malformed_bytecode_is_an_error_not_a_crash(tmp_path):
    p = tmp_path / "bad.mlirbc"
    p.write_bytes(b"ML\xefR\x0dStableHLO_v1.0.0\x00\x01\x02")
    with pytest.raises(hlorun.InvalidArgumentError, match="MLIR bytecode"):
        hlorun.compile(p)
