#!/usr/bin/env python3
"""Measures XLA CPU's f32 `tanh` and `exp` against float64 references.

Runs each function through jax (XLA CPU) on 2M evenly spaced points plus 2M
uniform ones, and prints the largest error in units in the last place of the
correctly rounded f32 result, the mean error, and the fraction of results that
are not correctly rounded. The Host's own accuracy table is in
`platform-host/src/vmath/mod.rs`; this is the other side of that comparison.

Usage: python3 bench/xla_accuracy.py   (needs `pip install jax`)
"""
import jax
import jax.numpy as jnp
import numpy as np


def main():
    grid = np.linspace(-10, 10, 2_000_001, dtype=np.float32)
    rand = np.random.default_rng(0).uniform(-1, 1, 2_000_000).astype(np.float32)
    x = np.concatenate([grid, rand])
    for name, f, ref, scale in [
        ("tanh", jnp.tanh, np.tanh, 1.0),
        ("exp", jnp.exp, np.exp, 8.0),
    ]:
        xs = (x * np.float32(scale)).astype(np.float32)
        got = np.asarray(jax.jit(f)(xs)).astype(np.float64)
        exact = ref(xs.astype(np.float64))
        rounded = exact.astype(np.float32)
        ulp = np.spacing(np.abs(rounded)).astype(np.float64)
        err = np.abs(got - exact) / ulp
        print(
            f"{name}: max {err.max():.2f} ulp at x={xs[err.argmax()]!r}, "
            f"mean {err.mean():.2f} ulp, "
            f"not correctly rounded {np.mean(got != rounded.astype(np.float64)):.1%}"
        )


if __name__ == "__main__":
    main()
