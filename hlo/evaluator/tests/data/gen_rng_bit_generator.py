"""Reference outputs of XLA's rng-bit-generator, produced by JAX on XLA CPU.

Run from this directory: `python3 gen_rng_bit_generator.py` (needs `pip install jax`).
Writes rng_bit_generator.json, read by tests/rng.rs. Every number is written as a
decimal string so 64-bit values survive JSON.
"""
import json

import jax
import jax.numpy as jnp
import numpy as np

jax.config.update("jax_enable_x64", True)

ALGORITHMS = {
    "rng_three_fry": jax.lax.RandomAlgorithm.RNG_THREE_FRY,
    "rng_philox": jax.lax.RandomAlgorithm.RNG_PHILOX,
    "rng_default": jax.lax.RandomAlgorithm.RNG_DEFAULT,
}
KEYS = [[0, 0, 0, 0], [1, 2, 3, 4], [0xFFFFFFFF, 0xFFFFFFFE, 0xFFFFFFFF, 0xFFFFFFFF], [0x12345678, 0x9ABCDEF0, 7, 0]]
SHAPES = [(3, 5), (7,), (), (2, 3, 4), (5, 3), (1,), (4, 1)]
DTYPES = ["uint32", "uint64", "uint8", "uint16"]


def as_u64_state(key_u32):
    return jax.lax.bitcast_convert_type(key_u32.reshape(2, 2), jnp.uint64)


cases = []
for name, alg in ALGORITHMS.items():
    for ki, key in enumerate(KEYS):
        key = jnp.array(key, dtype=jnp.uint32)
        for si, shape in enumerate(SHAPES):
            for di, dtype in enumerate(DTYPES):
                # Keep the file small: every shape with uint32, every dtype with two shapes.
                if dtype != "uint32" and si not in (0, 4):
                    continue
                if ki >= 2 and (si > 1 or dtype not in ("uint32", "uint64")):
                    continue
                new_key, bits = jax.jit(
                    lambda k: jax.lax.rng_bit_generator(k, shape, dtype=jnp.dtype(dtype), algorithm=alg)
                )(key)
                cases.append(
                    {
                        "algorithm": name,
                        "state": [str(int(v)) for v in np.asarray(as_u64_state(key))],
                        "dtype": dtype,
                        "shape": list(shape),
                        "new_state": [str(int(v)) for v in np.asarray(as_u64_state(new_key))],
                        "data": [str(int(v)) for v in np.asarray(bits).reshape(-1)],
                    }
                )

with open("rng_bit_generator.json", "w") as f:
    json.dump({"jax_version": jax.__version__, "cases": cases}, f, indent=0)
print(len(cases), "cases")
