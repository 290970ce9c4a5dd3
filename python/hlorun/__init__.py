"""hlorun from Python: run HLO programs, and JAX functions, on hlorun's platforms.

    import hlorun, numpy as np
    hlorun.platforms()                        # registered platforms
    exe = hlorun.compile("examples/softmax.hlo", platform="host")
    exe()                                     # -> numpy array
    f = hlorun.jit(jax_function, platform="interpreter")
    f(params, x)                              # -> pytree of numpy arrays
    hlorun.compare(jax_function, params, x, platform="host").ok

The native module (``hlorun._hlorun``, Rust) compiles and runs; this layer
turns NumPy arrays into the (dtype name, shape, bytes) triples it takes and
its output buffers back into arrays. See docs/python.md for what is copied.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any, Optional, Sequence, Tuple, Union

import numpy as np

from . import _hlorun
from ._hlorun import (
    AlreadyExistsError,
    DeadlineExceededError,
    FailedPreconditionError,
    HloError,
    InternalError,
    InvalidArgumentError,
    NotFoundError,
    OutOfRangeError,
    ResourceExhaustedError,
    UnavailableError,
    UnimplementedError,
)

__all__ = [
    "platforms",
    "Platform",
    "compile",
    "Executable",
    "jit",
    "Jitted",
    "compare",
    "CompareResult",
    "HloError",
    "InvalidArgumentError",
    "NotFoundError",
    "AlreadyExistsError",
    "UnimplementedError",
    "ResourceExhaustedError",
    "FailedPreconditionError",
    "OutOfRangeError",
    "DeadlineExceededError",
    "UnavailableError",
    "InternalError",
]

# NumPy / ml_dtypes dtype name -> HLO element type name.
ELEMENT_TYPES = dict(_hlorun.element_types())


@dataclass(frozen=True)
class Platform:
    """A registered platform, as ``hlorun platforms`` lists it."""

    name: str
    aliases: Tuple[str, ...]
    priority: int
    available: bool
    devices: int
    reason: Optional[str]  # why it is unavailable
    default: bool  # the platform used when none is named
    problems: Tuple[str, ...]  # mistakes in its registrations


def platforms() -> list:
    """Every registered platform (available or not), in registry order."""
    out = []
    for d in _hlorun.platforms():
        d = dict(d)
        d["aliases"] = tuple(d["aliases"])
        d["problems"] = tuple(d["problems"])
        out.append(Platform(**d))
    return out


def _numpy_dtype(name: str) -> np.dtype:
    """The NumPy dtype of an element-type name (ml_dtypes' for bfloat16 and narrow types)."""
    try:
        return np.dtype(name)
    except TypeError:
        pass
    try:
        import ml_dtypes
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise UnimplementedError(
            f"element type {name} needs the ml_dtypes package (pip install ml_dtypes)"
        ) from e
    return np.dtype(getattr(ml_dtypes, name))


def _as_array(x: Any) -> np.ndarray:
    """An ndarray for NumPy arrays, objects with ``__array__`` and DLPack exporters."""
    if isinstance(x, np.ndarray):
        return x
    if not hasattr(x, "__array__") and hasattr(x, "__dlpack__"):
        return np.from_dlpack(x)
    return np.asarray(x)


def _arg_spec(index: int, x: Any, what: str = "argument"):
    """``(dtype name, shape, uint8 view)`` of one array for the native layer.

    A C-contiguous, native-endian array is passed as a view (the native layer
    then makes the one copy into hlorun's literal); anything else is first
    copied here into that form.
    """
    a = _as_array(x)
    shape = a.shape
    if a.dtype.byteorder == ">":
        a = a.astype(a.dtype.newbyteorder("="))
    name = a.dtype.name
    if name not in ELEMENT_TYPES:
        raise InvalidArgumentError(
            f"{what} {index} has dtype {a.dtype}, which has no HLO element type "
            f"(supported: {', '.join(sorted(ELEMENT_TYPES))})"
        )
    if not a.flags.c_contiguous:
        a = np.ascontiguousarray(a)
    return (name, list(shape), a.reshape(-1).view(np.uint8))


def _from_output(buf) -> np.ndarray:
    """A NumPy view of one output buffer (no copy; the array keeps the buffer alive)."""
    dtype = _numpy_dtype(buf.dtype)
    shape = tuple(buf.shape)
    if int(np.prod(shape, dtype=np.int64)) == 0:
        return np.zeros(shape, dtype)
    return np.frombuffer(buf, dtype=dtype).reshape(shape)


def _is_python_scalar(x: Any) -> bool:
    return type(x) in (bool, int, float, complex)


class Executable:
    """A compiled HLO program. Call it with arrays; it returns NumPy arrays.

    A program whose result is a tuple returns a Python tuple of arrays (nested
    tuples flattened in preorder, as XLA flattens results).
    """

    def __init__(self, native):
        self._native = native

    @property
    def platform(self) -> str:
        return self._native.platform

    @property
    def name(self) -> str:
        """The module's name."""
        return self._native.name

    @property
    def parameters(self) -> list:
        """``(name, dtype name, shape)`` of each entry parameter."""
        return [(n, d, tuple(s)) for n, d, s in self._native.parameters]

    @property
    def result_shape(self) -> str:
        """The result shape in HLO notation."""
        return self._native.result_shape

    @property
    def devices(self) -> int:
        """The devices it runs on (a partitioned module's partitions, else 1)."""
        return self._native.devices

    @property
    def compile_seconds(self) -> float:
        return self._native.compile_seconds

    def _specs(self, args: Sequence[Any]) -> list:
        # (A partitioned module's parameters are per-device shards; only their
        # dtypes are used here, for Python numbers.)
        params = self._native.parameters
        specs = []
        for i, x in enumerate(args):
            if _is_python_scalar(x) and i < len(params):
                # A Python number takes its parameter's dtype (as JAX treats it).
                x = np.asarray(x, dtype=_numpy_dtype(params[i][1]))
            specs.append(_arg_spec(i, x))
        return specs

    def __call__(self, *args):
        is_tuple, bufs = self._native.run(self._specs(args))
        outs = [_from_output(b) for b in bufs]
        return tuple(outs) if is_tuple else outs[0]

    def __repr__(self) -> str:
        return f"<hlorun.Executable {self.name} on {self.platform}: {self.result_shape}>"


def _source(hlo) -> Tuple[Union[str, bytes], bool]:
    """``(text, path or bytes, is_path)`` of a module given as text, bytes or a
    path. Bytes that are not text (a StableHLO portable artifact, a serialized
    ``jax.export`` module) are passed on as bytes."""
    if isinstance(hlo, os.PathLike):
        return os.fspath(hlo), True
    if isinstance(hlo, (bytes, bytearray)):
        if bytes(hlo[:4]) == b"ML\xefR":
            return bytes(hlo), False
        try:
            hlo = bytes(hlo).decode("utf-8")
        except UnicodeDecodeError:
            return bytes(hlo), False
    if not isinstance(hlo, str):
        raise TypeError(f"expected module text, bytes or a path, not {type(hlo).__name__}")
    is_path = "\n" not in hlo and not hlo.lstrip().startswith("HloModule")
    return hlo, is_path


def compile(  # noqa: A001 - the API's name
    hlo, platform: Optional[str] = None, out_shardings: Optional[Sequence[str]] = None
) -> Executable:
    """Compiles a module for a platform: HLO or StableHLO text, the file at a
    path, or bytes (a StableHLO portable artifact such as
    ``jax.jit(f).lower(x).compiler_ir("stablehlo")`` serialized, or a
    serialized ``jax.export`` module).

    ``platform`` is a name or alias, case-insensitive ("interpreter", "host",
    "cpu", "cuda"); ``None`` means ``$HLORUN_PLATFORM``, else the default
    platform. The GIL is released while it compiles.

    A partitioned module (XLA's output for a sharded ``jax.jit``, with
    ``num_partitions=N``) runs on N devices and is called with global arrays:
    each is cut by its parameter's sharding, and each result assembled by its
    sharding. ``out_shardings`` gives the results' shardings in HLO syntax
    (``"{devices=[4,1]<=[4]}"``, one per result leaf), which XLA's text does
    not carry; without them results must be replicated (the same on every
    device). See docs/distributed.md.
    """
    source, is_path = _source(hlo)
    shardings = list(out_shardings) if out_shardings is not None else None
    return Executable(_hlorun.compile(source, is_path, platform, shardings))


from ._jit import CompareResult, Jitted, compare, jit  # noqa: E402
