"""``hlorun.jit`` and ``hlorun.compare``: JAX functions lowered to HLO, run by hlorun."""

from __future__ import annotations

import inspect
import threading
from dataclasses import dataclass
from typing import Any, Callable, Optional

import numpy as np

from . import _hlorun
from . import (
    Executable,
    UnimplementedError,
    _arg_spec,
    _as_array,
    _is_python_scalar,
    _source,
    compile as _compile,
)


def _jax():
    try:
        import jax
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise UnimplementedError(
            "hlorun.jit and hlorun.compare on functions need JAX (pip install jax)"
        ) from e
    return jax


def _tuple(x) -> tuple:
    if x is None:
        return ()
    if isinstance(x, (int, str)):
        return (x,)
    return tuple(x)


def _leaf_key(x: Any):
    """What of one argument leaf a compiled program depends on: its abstract
    value (shape, dtype, weak type) as ``jax.jit`` sees it, never its contents."""
    if _is_python_scalar(x):
        # JAX traces Python numbers as weakly typed scalars of a default dtype.
        return ("py", type(x))
    dtype = getattr(x, "dtype", None)
    shape = getattr(x, "shape", None)
    if dtype is None or shape is None:
        a = _as_array(x)
        dtype, shape = a.dtype, a.shape
    return (tuple(shape), str(dtype), bool(getattr(x, "weak_type", False)))


class _Signature:
    """One compiled signature: the program, how to convert the argument
    leaves to its parameters, and how to rebuild the output pytree."""

    def __init__(self, lowered, platform, sharded=False):
        jax = _jax()
        if sharded:
            # XLA's partitioned program (one per device, with collectives) and
            # the results' shardings, which its text does not carry.
            compiled = lowered.compile()
            self.hlo_text = compiled.as_text()
            out_shapes = [o.shape for o in jax.tree_util.tree_leaves(lowered.out_info)]
            shardings = [
                str(s._to_xla_hlo_sharding(len(shape)))
                for s, shape in zip(jax.tree_util.tree_leaves(compiled.output_shardings), out_shapes)
            ]
            partitioned = "num_partitions=" in self.hlo_text.split("\n", 1)[0]
            self.executable = _compile(
                self.hlo_text, platform, out_shardings=shardings if partitioned else None
            )
        else:
            self.hlo_text = lowered.as_text(dialect="hlo")
            self.executable = _compile(self.hlo_text, platform)
        self.in_tree = lowered.in_tree
        self.out_tree = lowered.out_tree
        self.in_dtypes = [np.dtype(a.dtype) for a in jax.tree_util.tree_leaves(lowered.args_info)]
        params = self.executable.parameters
        if len(params) != len(self.in_dtypes):
            raise UnimplementedError(
                f"JAX lowered {len(self.in_dtypes)} argument leaves to a module with "
                f"{len(params)} parameter(s) (tokens or effects?); hlorun.jit cannot pair them"
            )

    def convert(self, leaves: list) -> list:
        """The leaves as arrays of the parameters' dtypes (as JAX converts them:
        Python numbers to their weak type, float64 to float32 without x64)."""
        out = []
        for x, dtype in zip(leaves, self.in_dtypes):
            if _is_python_scalar(x):
                # Raises (as JAX does) for a Python int outside the dtype's range.
                a = np.asarray(x, dtype=dtype)
            else:
                a = _as_array(x)
                if a.dtype != dtype:
                    a = a.astype(dtype)
            out.append(a)
        return out

    def unflatten(self, result) -> Any:
        jax = _jax()
        n = self.out_tree.num_leaves
        if isinstance(result, tuple):
            leaves = list(result)
        else:
            leaves = [result]
        if len(leaves) != n:
            raise UnimplementedError(
                f"the module returned {len(leaves)} output(s) where JAX's output tree has {n}"
            )
        return jax.tree_util.tree_unflatten(self.out_tree, leaves)


class Jitted:
    """A JAX function compiled by hlorun: once per input signature.

    The signature is what ``jax.jit`` keys its own cache on: the pytree
    structure of the (non-static) positional and keyword arguments, each
    leaf's shape, dtype and weak type (Python numbers are weakly typed
    scalars, their values not part of it), and the values of the static
    arguments (which must be hashable).
    """

    def __init__(
        self,
        fun: Callable,
        platform: Optional[str] = None,
        static_argnums=(),
        static_argnames=(),
        in_shardings=None,
        out_shardings=None,
    ):
        jax = _jax()
        self.fun = fun
        self.platform = platform
        # With shardings, XLA partitions the program for the mesh's devices
        # and hlorun runs every device on global arrays.
        self._sharded = in_shardings is not None or out_shardings is not None
        shard_kwargs = {}
        if in_shardings is not None:
            shard_kwargs["in_shardings"] = in_shardings
        if out_shardings is not None:
            shard_kwargs["out_shardings"] = out_shardings
        nums = set(_tuple(static_argnums))
        names = set(_tuple(static_argnames))
        # Static arguments named one way and passed the other, as jax.jit
        # pairs them (`infer_argnums_and_argnames`).
        try:
            sig = inspect.signature(fun)
        except (TypeError, ValueError):
            sig = None
        if sig is not None:
            params = list(sig.parameters.values())
            positional = [
                p.name
                for p in params
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
            for i, n in enumerate(positional):
                if n in names:
                    nums.add(i)
                if i in nums and params[i].kind == params[i].POSITIONAL_OR_KEYWORD:
                    names.add(n)
        self._static_argnums = frozenset(nums)
        self._static_argnames = frozenset(names)
        self._jax_jit = jax.jit(
            fun,
            static_argnums=tuple(sorted(nums)),
            static_argnames=tuple(sorted(names)),
            keep_unused=True,
            **shard_kwargs,
        )
        self._cache = {}
        self._lock = threading.Lock()
        self.compiles = 0  # how many signatures were lowered and compiled

    @property
    def cache_size(self) -> int:
        """Compiled signatures held."""
        return len(self._cache)

    def _split(self, args: tuple, kwargs: dict):
        """``(key, dynamic leaves, treedef)`` of one call."""
        jax = _jax()
        n = len(args)
        static_nums = {i if i >= 0 else i + n for i in self._static_argnums}
        dyn_args = tuple(a for i, a in enumerate(args) if i not in static_nums)
        dyn_kwargs = {k: v for k, v in kwargs.items() if k not in self._static_argnames}
        static = (
            tuple((i, args[i]) for i in sorted(static_nums) if i < n),
            tuple(sorted((k, v) for k, v in kwargs.items() if k in self._static_argnames)),
        )
        leaves, treedef = jax.tree_util.tree_flatten((dyn_args, dyn_kwargs))
        key = (treedef, tuple(_leaf_key(x) for x in leaves), static)
        try:
            hash(key)
        except TypeError as e:
            raise TypeError(f"static arguments must be hashable, as for jax.jit: {e}") from e
        return key, leaves, treedef

    def _signature(self, args: tuple, kwargs: dict):
        key, leaves, treedef = self._split(args, kwargs)
        sig = self._cache.get(key)
        if sig is None:
            lowered = self._jax_jit.lower(*args, **kwargs)
            if lowered.in_tree != treedef:
                raise UnimplementedError(
                    f"hlorun.jit flattened the arguments as {treedef} but JAX lowered "
                    f"{lowered.in_tree}; pass static arguments as static_argnums/static_argnames"
                )
            sig = _Signature(lowered, self.platform, self._sharded)
            with self._lock:
                if key not in self._cache:
                    self._cache[key] = sig
                    self.compiles += 1
                sig = self._cache[key]
        return sig, leaves

    def lower(self, *args, **kwargs) -> str:
        """The HLO text this call's signature runs (lowering and compiling it if new)."""
        return self._signature(args, kwargs)[0].hlo_text

    def executable(self, *args, **kwargs) -> Executable:
        """The compiled program for this call's signature."""
        return self._signature(args, kwargs)[0].executable

    def __call__(self, *args, **kwargs):
        sig, leaves = self._signature(args, kwargs)
        return sig.unflatten(sig.executable(*sig.convert(leaves)))

    def __repr__(self) -> str:
        name = getattr(self.fun, "__name__", repr(self.fun))
        return f"<hlorun.jit {name} on {self.platform or 'the default platform'}: {self.cache_size} signature(s)>"


def jit(
    fun: Optional[Callable] = None,
    *,
    platform: Optional[str] = None,
    static_argnums=(),
    static_argnames=(),
    in_shardings=None,
    out_shardings=None,
):
    """Compiles a JAX function with hlorun instead of XLA.

    Each new input signature is lowered with ``jax.jit(fun).lower(...)`` to HLO
    text and compiled for ``platform``; calls return NumPy arrays in the
    function's output pytree. Usable as ``@hlorun.jit`` or
    ``@hlorun.jit(platform="host")``.

    With ``in_shardings``/``out_shardings`` (as for ``jax.jit``: shardings over
    a ``Mesh`` of JAX's devices, e.g. 4 CPU devices with
    ``XLA_FLAGS=--xla_force_host_platform_device_count=4``), XLA partitions the
    program and hlorun runs it on that many devices, taking and returning
    global arrays.
    """
    if fun is None:
        return lambda f: Jitted(
            f, platform, static_argnums, static_argnames, in_shardings, out_shardings
        )
    return Jitted(fun, platform, static_argnums, static_argnames, in_shardings, out_shardings)


@dataclass(frozen=True)
class CompareResult:
    """The verdict of :func:`compare`: ``ok``, and the report ``hlorun compare`` prints."""

    ok: bool
    report: str  # the rule, then per output its worst elements (with their scales)
    summary: str  # the failure line ("" when ok)
    rule: str  # "scale" or "tolerance"

    def __bool__(self) -> bool:
        return self.ok

    def __str__(self) -> str:
        return self.report + (self.summary + "\n" if self.summary else "")


def _flat_expected(expected, out_tree=None) -> list:
    if expected is None:
        return None
    if out_tree is not None:
        leaves = _jax().tree_util.tree_leaves(expected)
    elif isinstance(expected, (list, tuple)):
        leaves = list(expected)
    else:
        leaves = [expected]
    return [_arg_spec(i, x, "expected output") for i, x in enumerate(leaves)]


def compare(
    f_or_hlo,
    *args,
    platform: Optional[str] = None,
    reference: str = "interpreter",
    rtol: Optional[float] = None,
    atol: Optional[float] = None,
    max_ulps: Optional[float] = None,
    expected=None,
    static_argnums=(),
    static_argnames=(),
    **kwargs,
) -> CompareResult:
    """Runs a program on ``platform`` and checks its result, as ``hlorun compare``.

    ``f_or_hlo`` is a JAX function (lowered for these arguments, keyword
    arguments included) or HLO text / a path (then ``args`` are its arrays).
    The default is the scale rule: each element within ``max_ulps`` (16) ULPs
    of its type at max(scale, |want|), want and scale from the module evaluated
    in f64. ``rtol``/``atol`` select the old tolerance rule against the
    ``reference`` platform. ``expected`` (the output pytree, or a list of
    arrays for HLO) replaces the reference values.
    """
    if callable(f_or_hlo) and not isinstance(f_or_hlo, (str, bytes)):
        jitted = Jitted(f_or_hlo, platform, static_argnums, static_argnames)
        sig, leaves = jitted._signature(args, kwargs)
        source, is_path = sig.hlo_text, False
        arrays = sig.convert(leaves)
        flat_expected = _flat_expected(expected, sig.out_tree)
    else:
        if kwargs:
            raise TypeError(f"keyword arguments {sorted(kwargs)} given for an HLO module")
        source, is_path = _source(f_or_hlo)
        arrays = list(args)
        flat_expected = _flat_expected(expected)
    specs = [_arg_spec(i, x) for i, x in enumerate(arrays)]
    ok, report, summary = _hlorun.compare(
        source,
        is_path,
        specs,
        platform,
        reference,
        rtol,
        atol,
        max_ulps,
        flat_expected,
    )
    rule = "tolerance" if (rtol is not None or atol is not None) else "scale"
    return CompareResult(ok, report, summary, rule)


__all__ = ["jit", "Jitted", "compare", "CompareResult"]
