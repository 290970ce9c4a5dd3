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

JAX's programs (StableHLO portable artifacts) are read by hlorun's own
StableHLO reader inside the extension; nothing here converts them.

See docs/jax-plugin.md.
"""

from __future__ import annotations

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


__all__ = ["initialize", "library_path"]
