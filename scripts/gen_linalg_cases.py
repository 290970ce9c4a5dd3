"""Writes tests/linalg/: jnp.linalg and jax.scipy.linalg programs as JAX lowers
them for CPU (LAPACK custom calls with the typed FFI, `lapack_?getrf_ffi`,
`lapack_?potrf_ffi`, ...), with XLA CPU's results.

The layout is the conformance corpus' (tests/conformance/README.md): one folder
per case with `module.hlo`, `optimized.hlo`, `argN.npy`, `outN.npy` and
`case.json`, so `hlorun conformance --corpus tests/linalg` runs them.

Decompositions are not unique (the signs or phases of eigenvectors, singular
vectors and of Q's columns), so those cases compute what a program would use
them for: reconstructions (`q @ r`, `u * s @ vh`, `v * w @ v^H`), Gram matrices,
eigenvalues and singular values, solutions, determinants and inverses. Where
LAPACK's result is unique (LU with partial pivoting, Cholesky, triangular
solves, Householder QR as `geqrf` stores it) the raw outputs are compared too.

Inputs are well conditioned (a random matrix plus a multiple of the identity,
or A A^H + n I for the positive definite ones) so that every correct
implementation agrees with XLA's within the tolerances in case.json.

    python scripts/gen_linalg_cases.py [CASE ...]   (with jax 0.10.2 installed)
"""

import os
import shutil
import sys

import jax

jax.config.update("jax_enable_x64", True)
jax.config.update("jax_platforms", "cpu")

import jax.numpy as jnp  # noqa: E402
import jax.scipy.linalg as jsl  # noqa: E402
import numpy as np  # noqa: E402
from jax import lax  # noqa: E402
from jax._src.lax import linalg as lax_linalg  # noqa: E402  (geqrf, householder_product)

from case_writer import case_meta, run_jitted, write_files  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "tests", "linalg")

DT = {"f32": np.float32, "f64": np.float64, "c64": np.complex64, "c128": np.complex128}
ALL = ["f32", "f64", "c64", "c128"]
# (rtol, atol) per element type, for well-conditioned inputs of size <= 8.
TOL = {"f32": (2e-4, 2e-5), "c64": (2e-4, 2e-5), "f64": (1e-9, 1e-11), "c128": (1e-9, 1e-11)}


def rand(d, shape, seed):
    r = np.random.default_rng(seed)
    x = r.uniform(-1.0, 1.0, size=shape)
    if d.startswith("c"):
        x = x + 1j * r.uniform(-1.0, 1.0, size=shape)
    return x.astype(DT[d])


def general(d, shape, seed=0):
    """A random square (or rectangular) matrix, diagonally shifted when square."""
    a = rand(d, shape, seed)
    if shape[-1] == shape[-2]:
        a = a + 2.0 * np.eye(shape[-1], dtype=a.dtype)
    return a


def spd(d, shape, seed=0):
    a = rand(d, shape, seed)
    n = shape[-1]
    h = a @ np.conj(np.swapaxes(a, -1, -2)) + n * np.eye(n)
    return h.astype(DT[d])


def hermitian(d, shape, seed=0):
    a = rand(d, shape, seed)
    return ((a + np.conj(np.swapaxes(a, -1, -2))) / 2).astype(DT[d])


def triangular(d, shape, lower, seed=0):
    a = rand(d, shape, seed) + 3.0 * np.eye(shape[-1])
    a = np.tril(a) if lower else np.triu(a)
    # The other triangle holds junk a solver must not read.
    junk = rand(d, shape, seed + 7) * 100
    a = a + (np.triu(junk, 1) if lower else np.tril(junk, -1))
    return a.astype(DT[d])


def ct(x):
    return jnp.conj(jnp.swapaxes(x, -1, -2))


CASES = {}


def case(name, dtypes=ALL):
    def deco(fn):
        for d in dtypes:
            CASES["%s_%s" % (name, d)] = (fn, d)
        return fn

    return deco


# ----------------------------------------------------------------- LU (getrf)
@case("lu_square")
def _(d):
    return lambda a: lax.linalg.lu(a), [general(d, (5, 5), 1)]


@case("lu_batched")
def _(d):
    return lambda a: lax.linalg.lu(a), [general(d, (3, 4, 4), 2)]


@case("lu_wide")
def _(d):
    return lambda a: lax.linalg.lu(a), [rand(d, (3, 5), 3)]


@case("lu_tall")
def _(d):
    return lambda a: lax.linalg.lu(a), [rand(d, (6, 4), 4)]


@case("lu_singular")
def _(d):
    a = rand(d, (4, 4), 5)
    a[:, 2] = 0  # an exactly zero pivot: info > 0, the factorization goes on
    return lambda a: jsl.lu_factor(a), [a]


@case("lu_factor_solve")
def _(d):
    def f(a, b):
        return jsl.lu_solve(jsl.lu_factor(a), b)

    return f, [general(d, (5, 5), 6), rand(d, (5, 2), 7)]


@case("solve")
def _(d):
    return jnp.linalg.solve, [general(d, (2, 4, 4), 8), rand(d, (2, 4, 3), 9)]


@case("inv")
def _(d):
    return jnp.linalg.inv, [general(d, (2, 5, 5), 10)]


@case("det")
def _(d):
    return jnp.linalg.det, [general(d, (3, 4, 4), 11)]


@case("slogdet")
def _(d):
    return lambda a: tuple(jnp.linalg.slogdet(a)), [general(d, (3, 4, 4), 12)]


# ------------------------------------------------------------ Cholesky (potrf)
@case("cholesky")
def _(d):
    return jnp.linalg.cholesky, [spd(d, (5, 5), 13)]


@case("cholesky_batched")
def _(d):
    return jnp.linalg.cholesky, [spd(d, (2, 3, 4, 4), 14)]


@case("cholesky_upper")
def _(d):
    return lambda a: jsl.cholesky(a, lower=False), [spd(d, (4, 4), 15)]


@case("cholesky_not_pd")
def _(d):
    a = spd(d, (2, 3, 3), 16)
    a[1, 2, 2] = -5  # the second matrix is not positive definite: NaNs
    return jnp.linalg.cholesky, [a]


@case("cho_solve")
def _(d):
    def f(a, b):
        return jsl.cho_solve(jsl.cho_factor(a, lower=True), b)

    return f, [spd(d, (4, 4), 17), rand(d, (4, 3), 18)]


# ------------------------------------------------------ triangular solve (trsm)
@case("solve_triangular_lower")
def _(d):
    f = lambda a, b: jsl.solve_triangular(a, b, lower=True)  # noqa: E731
    return f, [triangular(d, (4, 4), True, 19), rand(d, (4, 3), 20)]


@case("solve_triangular_upper_trans")
def _(d):
    f = lambda a, b: jsl.solve_triangular(a, b, lower=False, trans=1)  # noqa: E731
    return f, [triangular(d, (2, 4, 4), False, 21), rand(d, (2, 4, 2), 22)]


@case("solve_triangular_lower_adjoint_unit")
def _(d):
    def f(a, b):
        return jsl.solve_triangular(a, b, lower=True, trans=2, unit_diagonal=True)

    return f, [triangular(d, (5, 5), True, 23), rand(d, (5, 3), 24)]


@case("triangular_solve_right")
def _(d):
    def f(a, b):
        return lax.linalg.triangular_solve(a, b, left_side=False, lower=False, transpose_a=False)

    return f, [triangular(d, (4, 4), False, 25), rand(d, (3, 4), 26)]


@case("triangular_solve_right_lower_adjoint")
def _(d):
    def f(a, b):
        return lax.linalg.triangular_solve(
            a, b, left_side=False, lower=True, transpose_a=True, conjugate_a=True
        )

    return f, [triangular(d, (2, 4, 4), True, 27), rand(d, (2, 3, 4), 28)]


# ------------------------------------------------------- QR (geqrf, orgqr/ungqr)
@case("geqrf")
def _(d):
    return lambda a: lax_linalg.geqrf(a), [rand(d, (5, 3), 29)]


@case("geqrf_wide_batched")
def _(d):
    return lambda a: lax_linalg.geqrf(a), [rand(d, (2, 3, 5), 30)]


@case("householder_product")
def _(d):
    def f(a):
        r, taus = lax_linalg.geqrf(a)
        return lax_linalg.householder_product(r, taus)

    return f, [rand(d, (5, 3), 31)]


@case("qr_reduced")
def _(d):
    def f(a):
        q, r = jnp.linalg.qr(a)
        return q, r, q @ r

    return f, [rand(d, (6, 4), 32)]


@case("qr_complete_batched")
def _(d):
    def f(a):
        q, r = jnp.linalg.qr(a, mode="complete")
        return q @ r, ct(q) @ q, r

    return f, [rand(d, (2, 5, 3), 33)]


@case("qr_wide")
def _(d):
    def f(a):
        q, r = jnp.linalg.qr(a)
        return q, r

    return f, [rand(d, (3, 5), 34)]


# ------------------------------------------------ symmetric eigen (syevd/heevd)
@case("eigh")
def _(d):
    def f(a):
        w, v = jnp.linalg.eigh(a)
        return w, (v * w[..., None, :]) @ ct(v), ct(v) @ v

    return f, [hermitian(d, (5, 5), 35)]


@case("eigh_batched")
def _(d):
    def f(a):
        w, v = jnp.linalg.eigh(a)
        return w, jnp.abs(ct(v) @ a @ v)

    return f, [hermitian(d, (3, 4, 4), 36)]


@case("eigvalsh")
def _(d):
    return jnp.linalg.eigvalsh, [hermitian(d, (2, 6, 6), 37)]


@case("eigh_upper")
def _(d):
    def f(a):
        w, v = jsl.eigh(a, lower=False)
        return w, jnp.abs(v[..., 0, :] * jnp.conj(v[..., 1, :]))

    return f, [hermitian(d, (4, 4), 38)]


# ------------------------------------------------------------------ SVD (gesdd)
@case("svd_reduced")
def _(d):
    def f(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=False)
        return s, (u * s[..., None, :]) @ vh, ct(u) @ u, vh @ ct(vh)

    return f, [rand(d, (5, 3), 39)]


@case("svd_full_batched")
def _(d):
    def f(a):
        u, s, vh = jnp.linalg.svd(a, full_matrices=True)
        k = s.shape[-1]
        return s, (u[..., :, :k] * s[..., None, :]) @ vh[..., :k, :], ct(u) @ u, vh @ ct(vh)

    return f, [rand(d, (2, 3, 5), 40)]


@case("svd_qr_algorithm")
def _(d):
    def f(a):
        u, s, vh = lax.linalg.svd(a, full_matrices=False, algorithm=lax.linalg.SvdAlgorithm.QR)
        return s, (u * s[..., None, :]) @ vh

    return f, [rand(d, (2, 4, 3), 48)]


@case("svdvals")
def _(d):
    return lambda a: jnp.linalg.svd(a, compute_uv=False), [rand(d, (2, 4, 6), 41)]


@case("pinv")
def _(d):
    return jnp.linalg.pinv, [rand(d, (5, 3), 42)]


@case("lstsq")
def _(d):
    def f(a, b):
        x, resid, rank, s = jnp.linalg.lstsq(a, b)
        return x, resid, rank, s

    return f, [rand(d, (6, 3), 43), rand(d, (6, 2), 44)]


@case("matrix_rank")
def _(d):
    a = rand(d, (5, 4), 45)
    a[:, 3] = a[:, 0] + a[:, 1]
    return jnp.linalg.matrix_rank, [a]


@case("norm_2")
def _(d):
    return lambda a: jnp.linalg.norm(a, ord=2), [rand(d, (4, 5), 46)]


@case("cond")
def _(d):
    return jnp.linalg.cond, [general(d, (4, 4), 47)]


# ------------------------------------------------- general eigenproblem (geev)
def sorted_eigenvalues(w):
    # The order geev returns them in is not specified; sort by (re, im).
    return w[..., jnp.lexsort((w.imag, w.real))] if w.ndim == 1 else jax.vmap(sorted_eigenvalues)(w)


@case("eig")
def _(d):
    def f(a):
        w, v = jnp.linalg.eig(a)
        return sorted_eigenvalues(w), (v * w[..., None, :]) @ jnp.linalg.inv(v)

    return f, [rand(d, (5, 5), 49)]


@case("eigvals_batched")
def _(d):
    return lambda a: sorted_eigenvalues(jnp.linalg.eigvals(a)), [rand(d, (3, 4, 4), 50)]


# ------------------------------------------------------------------ writing
def write_case(name, f, args, d):
    args = [np.asarray(a) for a in args]
    module, optimized, outs, stablehlo = run_jitted(f, args, with_stablehlo=True)
    rtol, atol = TOL[d]
    folder = os.path.join(OUT, name)
    os.makedirs(folder)
    meta = case_meta(name, args, outs, rtol, atol)
    write_files(folder, module, optimized, args, outs, meta, stablehlo=stablehlo)
    targets = sorted(
        {
            line.split('custom_call_target="')[1].split('"')[0]
            for line in module.splitlines()
            if "custom_call_target=" in line
        }
    )
    return targets


README = """# Linear algebra cases

`jnp.linalg` and `jax.scipy.linalg` programs as JAX %(jax)s lowers them for CPU:
the decompositions are custom calls to XLA CPU's LAPACK targets with the typed
FFI (`api_version=API_VERSION_TYPED_FFI`), which the `xla-lapack` crate
(`custom-calls/lapack`) implements. The format is the conformance corpus'
(`../conformance/README.md`), with each program's StableHLO text as
`module.mlir` too; expected outputs are XLA CPU's.

Decompositions whose result is not unique are checked through what a program
computes from them (reconstructions, Gram matrices, eigenvalues, singular
values, solutions; `eig`'s eigenvalues sorted, since geev's order is not
specified); LU, Cholesky, triangular solves and `geqrf` are also compared raw.

Regenerate (rewrites this folder):

    python3 -m venv /tmp/venv && /tmp/venv/bin/pip install jax==0.10.2
    /tmp/venv/bin/python scripts/gen_linalg_cases.py

Run on a platform:

    cargo run -p service --bin hlorun -- conformance --platform host --corpus tests/linalg

`cargo test -p tests --test suite linalg::` runs every case on Interpreter and Host.

%(count)d cases. Custom-call targets used:

%(targets)s
"""


def main():
    only = set(sys.argv[1:])
    if os.path.isdir(OUT) and not only:
        shutil.rmtree(OUT)
    os.makedirs(OUT, exist_ok=True)
    used = set()
    count = 0
    for name, (build, d) in CASES.items():
        if only and name not in only:
            continue
        folder = os.path.join(OUT, name)
        if os.path.isdir(folder):
            shutil.rmtree(folder)
        f, args = build(d)
        used.update(write_case(name, f, args, d))
        count += 1
    if only:
        return
    with open(os.path.join(OUT, "README.md"), "w") as fh:
        fh.write(
            README
            % {
                "jax": jax.__version__,
                "count": count,
                "targets": "\n".join("- `%s`" % t for t in sorted(used)),
            }
        )
    print("wrote %d cases to %s" % (count, OUT))


if __name__ == "__main__":
    main()
