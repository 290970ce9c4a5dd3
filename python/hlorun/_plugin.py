"""JAX's entry point to hlorun: the PJRT plugin (``jax_plugins`` entry point).

After ``pip install ./python``, JAX finds this module through the
``jax_plugins`` entry point and calls :func:`initialize`, which registers the
native extension (``hlorun._hlorun``, which also exports ``GetPjrtApi``) as
the PJRT plugin named ``hlorun``::

    import jax
    jax.devices("hlorun")            # or JAX_PLATFORMS=hlorun for the default

Settings (read when JAX creates the client):

* ``HLORUN_PJRT_PLATFORM``: the hlorun platform behind the JAX devices
  (``host``, ``interpreter``, ... as ``hlorun.platforms()`` lists; default:
  ``HLORUN_PLATFORM``, else hlorun's default).
* ``HLORUN_PJRT_DEVICES``: how many JAX devices the platform shows (default 1).
* ``HLORUN_PJRT_FRONTEND``: ``hlo`` (default: jaxlib turns JAX's StableHLO
  into HLO text for hlorun's HLO parser) or ``stablehlo`` (jaxlib prints the
  module as StableHLO text for hlorun's own StableHLO reader).

See docs/jax-plugin.md.
"""

from __future__ import annotations

import re

_PLUGIN_NAME = "hlorun"


def library_path() -> str:
    """The shared library holding ``GetPjrtApi`` (the extension module)."""
    from . import _hlorun

    return _hlorun.__file__


def initialize() -> None:
    """Registers the plugin with JAX (called by JAX's plugin discovery)."""
    from jax._src import xla_bridge
    from jax._src.interpreters import mlir

    # JAX lowers donation (input-output aliases) only for the platforms on
    # this list; the plugin implements it (a donated argument is consumed).
    donating = getattr(mlir, "_platforms_with_donation", None)
    if isinstance(donating, list) and _PLUGIN_NAME not in donating:
        donating.append(_PLUGIN_NAME)
    _share_cpu_decompositions(mlir)
    # Below JAX's CPU backend (priority 0): installing hlorun must not move
    # anyone's default device; `JAX_PLATFORMS=hlorun` (or `jax.devices("hlorun")`,
    # `jax.default_device`) chooses it.
    xla_bridge.register_plugin(
        _PLUGIN_NAME, priority=-100, library_path=library_path()
    )


# JAX lowers its matrix decompositions per platform (LAPACK custom calls on
# `cpu`) and has no rule for a platform it does not know. hlorun registers the
# same LAPACK targets (`lapack_*_ffi`) on its Host and Interpreter, so the
# plugin lowers these primitives as JAX's CPU does; any other primitive keeps
# JAX's platform-independent rule.
_CPU_DECOMPOSITIONS = (
    "cholesky", "eig", "eigh", "geqrf", "householder_product", "lu", "svd",
)


def _share_cpu_decompositions(mlir) -> None:
    rules = getattr(mlir, "_platform_specific_lowerings", None)
    if rules is None:
        return
    # The rules are registered when jax.lax.linalg is imported.
    import jax._src.lax.linalg  # noqa: F401

    cpu, ours = rules["cpu"], rules[_PLUGIN_NAME]
    for primitive, rule in list(cpu.items()):
        if primitive.name in _CPU_DECOMPOSITIONS and primitive not in ours:
            ours[primitive] = rule


def _mlir_to_text(code: bytes, frontend: str) -> str:
    """JAX's program (a StableHLO portable artifact, or MLIR text) as HLO text
    (``frontend="hlo"``) or StableHLO text (``"stablehlo"``), with jaxlib's
    own MLIR bindings. Called by the plugin's ``PJRT_Client_Compile``."""
    import jax
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import xla_client

    api = getattr(getattr(xla_client, "_xla", None), "mlir", None)
    needed = ("deserialize_portable_artifact", "mlir_module_to_xla_computation")
    if api is None or not all(hasattr(api, n) for n in needed):
        raise RuntimeError(
            f"jax {jax.__version__}: jaxlib has no "
            "xla_client._xla.mlir.deserialize_portable_artifact / "
            "mlir_module_to_xla_computation, which the hlorun plugin uses to read "
            "JAX's programs (supported: jax 0.10.x)"
        )
    context = jax_mlir.make_ir_context()
    if code[:4] == b"ML\xefR":  # MLIR bytecode (a portable artifact)
        module = api.deserialize_portable_artifact(code, context)
    else:
        from jax._src.lib.mlir import ir

        module = ir.Module.parse(code.decode(), context=context)
    if frontend == "stablehlo":
        # Every constant printed (MLIR elides none unless asked to).
        return module.operation.get_asm(enable_debug_info=False)
    # Bytecode, not text, into the converter: nothing is elided or reparsed.
    bytecode = module.operation.get_asm(binary=True)
    computation = api.mlir_module_to_xla_computation(
        bytecode, use_tuple_args=False, return_tuple=False
    )
    return _drop_sharding_markers(computation.as_hlo_text(print_large_constants=True))


# JAX's sharding markers: custom calls that are the identity on the global
# values (`with_sharding_constraint`'s `Sharding`, Shardy's result marker).
# The plugin runs a sharded program as one global program (docs/jax-plugin.md),
# so they become copies; the markers that change shapes (shard_map's
# `SPMDFullToShardShape`) are left for hlorun to refuse.
_MARKER = re.compile(
    r"^(?P<head>\s*(?:ROOT\s+)?[\w.\-]+\s*=\s*.*?)\s+custom-call\((?P<arg>[\w.\-]+)\),"
    r'\s*custom_call_target="(?:Sharding|xla\.sdy\.FuncResultSharding)"(?P<rest>.*)$'
)
_SHARDING = re.compile(r"(?:^|,\s*)(sharding=\{(?:[^{}]|\{[^{}]*\})*\})")


def _drop_sharding_markers(text: str) -> str:
    lines = []
    for line in text.splitlines():
        m = _MARKER.match(line)
        if m:
            sharding = _SHARDING.search(m.group("rest"))
            line = f"{m.group('head')} copy({m.group('arg')})"
            if sharding:
                line += f", {sharding.group(1)}"
        lines.append(line)
    return "\n".join(lines) + "\n"


__all__ = ["initialize", "library_path"]
