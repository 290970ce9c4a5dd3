#!/usr/bin/env python3
"""Fits the polynomial coefficients used by platform-host's `vmath` kernels.

Each approximated function is rewritten as a smooth "core" g(t) (for example
(e^r - 1 - r) / r^2 for exp) that the kernel evaluates as a polynomial; the core
is interpolated at Chebyshev nodes with mpmath (near-minimax in absolute error),
the coefficients are rounded to the kernel's float type, and the script reports
the largest relative error of the *reconstructed function* on a dense grid, in
units of the target type's epsilon.

Usage: python3 scripts/fit_vmath_poly.py [NAME...]   (no name: all fits)
Prints Rust constant arrays (lowest degree first) ready to paste into
platform-host/src/vmath/poly.rs.
"""
import sys
import mpmath as mp
import numpy as np

mp.mp.dps = 60


def fit(name, core, lo, hi, degree, recon, exact, ftype, grid=4000):
    poly, _err = mp.chebyfit(core, [lo, hi], degree + 1, error=True)
    coeffs = [poly[degree - i] for i in range(degree + 1)]  # lowest first
    cast = np.float32 if ftype == "f32" else np.float64
    rounded = [float(cast(float(c))) for c in coeffs]
    eps = 2.0 ** -23 if ftype == "f32" else 2.0 ** -52
    worst = 0.0
    for i in range(grid + 1):
        t = lo + (hi - lo) * mp.mpf(i) / grid
        p = mp.mpf(0)
        for c in reversed(rounded):
            p = p * t + mp.mpf(c)
        x, got = recon(t, p)
        want = exact(x)
        if want != 0:
            worst = max(worst, float(abs((got - want) / want)))
    print(f"// {name}: [{float(lo):.6g}, {float(hi):.6g}], degree {degree}, max rel err "
          f"{worst / eps:.3f} eps")
    ty = "f32" if ftype == "f32" else "f64"
    body = ", ".join(repr(c) for c in rounded)
    print(f"pub const {name}: [{ty}; {degree + 1}] = [{body}];\n")


def sq(f):
    return lambda z: f(mp.sqrt(z))


LN2H = mp.log(2) / 2
FITS = {}


def reg(name):
    def deco(fn):
        FITS[name] = fn
        return fn
    return deco


def expcore(r):
    return (mp.exp(r) - 1 - r) / r ** 2 if r != 0 else mp.mpf(0.5)


def expm1core(r):
    return (mp.expm1(r) - r - r * r / 2) / r ** 3 if r != 0 else mp.mpf(1) / 6


def logcore(f):
    return (mp.log1p(f) - f + f * f / 2) / f ** 3 if f != 0 else mp.mpf(1) / 3


def tanhcore(z):
    x = mp.sqrt(z)
    return (mp.tanh(x) - x) / x ** 3 if z != 0 else mp.mpf(-1) / 3


def sincore(z):
    x = mp.sqrt(z)
    return (mp.sin(x) - x) / x ** 3 if z != 0 else mp.mpf(-1) / 6


def coscore(z):
    x = mp.sqrt(z)
    return (mp.cos(x) - 1 + z / 2) / z ** 2 if z != 0 else mp.mpf(1) / 24


def atancore(z):
    x = mp.sqrt(z)
    return (mp.atan(x) - x) / x ** 3 if z != 0 else mp.mpf(-1) / 3


def erfcore(z):
    x = mp.sqrt(z)
    return mp.erf(x) / x if z != 0 else 2 / mp.sqrt(mp.pi)


def atanh_core(z):
    # log(1+f) = 2 atanh(s) = 2s + s R(s^2); R(z) = sum_{k>=1} 2 z^k / (2k+1); fit R(z)/z.
    s = mp.sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z) if z != 0 else mp.mpf(2) / 3


@reg("EXP_F32")
def _():
    fit("EXP_F32", expcore, -LN2H, LN2H, 4, lambda r, p: (r, 1 + r + r * r * p), mp.exp, "f32")


@reg("EXP_F64")
def _():
    fit("EXP_F64", expcore, -LN2H, LN2H, 9, lambda r, p: (r, 1 + r + r * r * p), mp.exp, "f64")


@reg("EXPM1_F32")
def _():
    fit("EXPM1_F32", expm1core, -LN2H, LN2H, 4,
        lambda r, p: (r, r + r * r / 2 + r ** 3 * p), mp.expm1, "f32")


@reg("EXPM1_F64")
def _():
    fit("EXPM1_F64", expm1core, -LN2H, LN2H, 9,
        lambda r, p: (r, r + r * r / 2 + r ** 3 * p), mp.expm1, "f64")


@reg("LOG_F32")
def _():
    lo, hi = mp.sqrt(0.5) - 1, mp.sqrt(2) - 1
    fit("LOG_F32", logcore, lo, hi, 7, lambda f, p: (f, f - f * f / 2 + f ** 3 * p), mp.log1p, "f32")


@reg("LOG_F64")
def _():
    smax = (mp.sqrt(2) - 1) / (mp.sqrt(2) + 1)
    fit("LOG_F64", atanh_core, mp.mpf(0), smax ** 2, 6,
        lambda z, p: (z, 2 * mp.sqrt(z) + mp.sqrt(z) * z * p),
        lambda z: 2 * mp.atanh(mp.sqrt(z)), "f64")


def fit_rational_tanh_f32(m, n, fit_to):
    """tanh(x) = x P(z) / Q(z), z = x^2, on [0, fit_to], P(0) = Q(0) = 1: the
    weighted least-squares fit of the linearised relative error, reweighted
    toward the largest errors (Lawson) until it levels off. Then the f32
    coefficients are evaluated as `math32::tanh` does (argument clamped at
    TANH_ONE, fused Horner steps, one product, one division, capped at 1, 1
    from TANH_ONE on) on every f32 from 2^-12 to fit_to (below, P and Q round
    to 1 and tanh(x) = x), against f64 tanh."""
    s = fit_to * fit_to
    x = np.unique(np.concatenate([np.linspace(0, fit_to, 40000),
                                  fit_to * np.sin(np.linspace(0, np.pi / 2, 40000)),
                                  np.geomspace(1e-6, 1, 20000)]))
    x = x[x > 0]
    t = x * x / s  # the fit runs in z / fit_to^2, which keeps the system well scaled
    f = np.tanh(x) / x
    w = np.ones_like(t)
    best = None
    for _ in range(300):
        a = np.hstack([t[:, None] ** np.arange(1, m + 1),
                       -f[:, None] * t[:, None] ** np.arange(1, n + 1)])
        sol, *_ = np.linalg.lstsq(a * (w / f)[:, None], (f - 1) * w / f, rcond=None)
        p = np.concatenate([[1.0], sol[:m]])
        q = np.concatenate([[1.0], sol[m:]])
        err = (np.polyval(p[::-1], t) / np.polyval(q[::-1], t) - f) / f
        e = np.max(np.abs(err))
        if best is None or e < best[0]:
            best = (e, p, q)
        w = w * (np.abs(err) / e) ** 0.3 + 1e-12
        w /= w.max()
    e, p, q = best
    pz = (p / s ** np.arange(m + 1)).astype(np.float32)
    qz = (q / s ** np.arange(n + 1)).astype(np.float32)

    # TANH_ONE: the first f32 whose tanh rounds to 1, i.e. 1 - tanh(x) is at
    # most half an ULP of 1 below it (2^-25; the tie rounds to even, 1).
    bits = int(np.float32(8.0).view(np.int32))
    while 1 - mp.tanh(mp.mpf(float(np.int32(bits).view(np.float32)))) > mp.mpf(2) ** -25:
        bits += 1
    one = np.int32(bits).view(np.float32)

    def horner(c, z):
        r = np.full_like(z, c[-1])
        for ck in c[-2::-1]:
            # One rounding per step, as a fused multiply-add.
            r = (r.astype(np.float64) * z + np.float64(ck)).astype(np.float32)
        return r

    worst, at, total, count = 0.0, 0.0, 0.0, 0
    lo = int(np.float32(2.0 ** -12).view(np.int32))
    hi = int(np.float32(fit_to).view(np.int32)) + 1
    for start in range(lo, hi, 1 << 22):
        xs = np.arange(start, min(start + (1 << 22), hi), dtype=np.int32).view(np.float32)
        ac = np.minimum(xs, one)
        z = (ac * ac).astype(np.float32)
        r = np.minimum((ac * horner(pz, z)).astype(np.float32) / horner(qz, z), np.float32(1))
        r = np.where(xs >= one, np.float32(1), r)
        ref = np.tanh(xs.astype(np.float64))
        ulp = np.abs(r - ref) / np.spacing(ref.astype(np.float32)).astype(np.float64)
        i = int(np.argmax(ulp))
        if ulp[i] > worst:
            worst, at = float(ulp[i]), float(xs[i])
        total += float(ulp.sum())
        count += len(xs)
    print(f"// TANH_F32_NUM / TANH_F32_DEN: [0, {fit_to}], degrees {m}/{n} in x^2, fit "
          f"{e / 2.0 ** -24:.3f} ulp; as evaluated in f32 with FMA, every f32 from 2^-12 "
          f"to {fit_to}: max {worst:.2f} ulp (at {at!r}), mean {total / count:.3f}")
    print(f"// TANH_ONE = f32::from_bits({bits:#x}) = {float(one)!r}")
    for name, c in (("TANH_F32_NUM", pz), ("TANH_F32_DEN", qz)):
        body = ", ".join(repr(float(v)) for v in c)
        print(f"pub const {name}: [f32; {len(c)}] = [{body}];\n")


@reg("TANH_F32_RATIONAL")
def _():
    fit_rational_tanh_f32(4, 4, 9.1)


@reg("TANH_F64")
def _():
    fit("TANH_F64", tanhcore, mp.mpf(0), mp.mpf(0.625) ** 2, 10,
        lambda z, p: (mp.sqrt(z), mp.sqrt(z) + mp.sqrt(z) ** 3 * p), mp.tanh, "f64")


@reg("SIN_F32")
def _():
    fit("SIN_F32", sincore, mp.mpf(0), (mp.pi / 4) ** 2, 3,
        lambda z, p: (mp.sqrt(z), mp.sqrt(z) + mp.sqrt(z) ** 3 * p), mp.sin, "f32")


@reg("COS_F32")
def _():
    fit("COS_F32", coscore, mp.mpf(0), (mp.pi / 4) ** 2, 3,
        lambda z, p: (mp.sqrt(z), 1 - z / 2 + z * z * p), mp.cos, "f32")


@reg("SIN_F64")
def _():
    fit("SIN_F64", sincore, mp.mpf(0), (mp.pi / 4) ** 2, 5,
        lambda z, p: (mp.sqrt(z), mp.sqrt(z) + mp.sqrt(z) ** 3 * p), mp.sin, "f64")


@reg("COS_F64")
def _():
    fit("COS_F64", coscore, mp.mpf(0), (mp.pi / 4) ** 2, 6,
        lambda z, p: (mp.sqrt(z), 1 - z / 2 + z * z * p), mp.cos, "f64")


@reg("ATAN_F32")
def _():
    fit("ATAN_F32", atancore, mp.mpf(0), mp.mpf(1), 8,
        lambda z, p: (mp.sqrt(z), mp.sqrt(z) + mp.sqrt(z) ** 3 * p), mp.atan, "f32")


@reg("ERF_F32")
def _():
    fit("ERF_F32", erfcore, mp.mpf(0), mp.mpf(0.921875) ** 2, 6,
        lambda z, p: (mp.sqrt(z), mp.sqrt(z) * p), mp.erf, "f32")


@reg("ERFC_F32")
def _():
    # erfc(x) = exp(-x^2) * g(x) on [0.921875, 3.92]; fit g in t = 1/x.
    core = lambda t: mp.erfc(1 / t) * mp.exp(1 / t ** 2)
    fit("ERFC_F32", core, 1 / mp.mpf(3.92), 1 / mp.mpf(0.921875), 9,
        lambda t, p: (1 / t, 1 - mp.exp(-1 / t ** 2) * p), mp.erf, "f32")


if __name__ == "__main__":
    names = sys.argv[1:] or list(FITS)
    for n in names:
        FITS[n]()
