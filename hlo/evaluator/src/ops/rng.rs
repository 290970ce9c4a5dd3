//! `rng`: random numbers from a distribution, for the legacy stateful op.
//!
//! XLA leaves the generator of `rng` to the backend; the interpreter uses a
//! SplitMix64 stream seeded from `RunOptions::rng_seed`, so a run is
//! reproducible from its seed and different seeds give different numbers.
//! `rng_uniform(a, b)` draws from `[a, b)` (floats and integers; `b <= a` for
//! integers is an error); `rng_normal(mu, sigma)` uses the Box–Muller transform.

use super::zeros;
use half::{bf16, f16};
use hlo_ir::RandomDistribution;
use hlo_ir::{ArrayShape, ElementType, Error, Literal, Result, Scalar};

/// A small, fast, well-mixed 64-bit generator (SplitMix64).
#[derive(Clone, Debug)]
pub struct SeededRng {
    state: u64,
}

impl SeededRng {
    pub fn new(seed: u64) -> Self {
        SeededRng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_unit(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }
}

/// An `f64` rounded to a float element type.
pub fn float_scalar(ty: ElementType, v: f64) -> Result<Scalar> {
    Ok(match ty {
        ElementType::F16 => Scalar::F16(f16::from_f64(v)),
        ElementType::BF16 => Scalar::BF16(bf16::from_f64(v)),
        ElementType::F32 => Scalar::F32(v as f32),
        ElementType::F64 => Scalar::F64(v),
        other => {
            return Err(Error::invalid_argument(format!(
                "{other} is not a real floating-point type"
            )))
        }
    })
}

/// An `i128` wrapped into an integer element type.
pub fn int_scalar(ty: ElementType, v: i128) -> Result<Scalar> {
    Ok(match ty {
        ElementType::S8 => Scalar::S8(v as i8),
        ElementType::S16 => Scalar::S16(v as i16),
        ElementType::S32 => Scalar::S32(v as i32),
        ElementType::S64 => Scalar::S64(v as i64),
        ElementType::U8 => Scalar::U8(v as u8),
        ElementType::U16 => Scalar::U16(v as u16),
        ElementType::U32 => Scalar::U32(v as u32),
        ElementType::U64 => Scalar::U64(v as u64),
        other => {
            return Err(Error::invalid_argument(format!(
                "{other} is not an integer type"
            )))
        }
    })
}

fn int_value(s: Scalar) -> i128 {
    match s {
        Scalar::U64(v) => v as i128,
        other => other.to_i64().unwrap_or(0) as i128,
    }
}

pub fn rng(
    distribution: RandomDistribution,
    a: &Literal,
    b: &Literal,
    result: &ArrayShape,
    rng: &mut SeededRng,
) -> Result<Literal> {
    let ty = result.element_type;
    for (name, p) in [("first", a), ("second", b)] {
        let s = p.array_shape()?;
        if s.element_count() != 1 || s.element_type != ty {
            return Err(Error::invalid_argument(format!(
                "the {name} rng parameter must be a {ty} scalar, got {s}"
            )));
        }
    }
    let (a, b) = (a.get(0)?, b.get(0)?);
    let mut out = zeros(ty, &result.dims);
    let count = result.element_count();
    let size = ty.byte_size();
    let bytes = out.bytes_mut()?;
    let mut put = |i: usize, v: Scalar| v.write_bytes(&mut bytes[i * size..(i + 1) * size]);
    match distribution {
        RandomDistribution::Uniform if ty.is_float() => {
            let (lo, hi) = (a.to_f64_lossy(), b.to_f64_lossy());
            for i in 0..count {
                let mut v = float_scalar(ty, lo + (hi - lo) * rng.next_unit())?;
                // Rounding to a narrow type can land on `hi`; keep the interval half-open.
                if v.to_f64_lossy() >= hi && hi > lo {
                    v = float_scalar(ty, lo)?;
                }
                put(i, v);
            }
        }
        RandomDistribution::Uniform if ty.is_integer() => {
            let (lo, hi) = (int_value(a), int_value(b));
            if hi <= lo {
                return Err(Error::invalid_argument(format!(
                    "rng_uniform over [{lo}, {hi}) is empty"
                )));
            }
            let range = (hi - lo) as u128;
            for i in 0..count {
                let draw = ((rng.next_u64() as u128) << 64 | rng.next_u64() as u128) % range;
                put(i, int_scalar(ty, lo + draw as i128)?);
            }
        }
        RandomDistribution::Normal if ty.is_float() => {
            let (mu, sigma) = (a.to_f64_lossy(), b.to_f64_lossy());
            for i in 0..count {
                let u1 = 1.0 - rng.next_unit(); // (0, 1]
                let u2 = rng.next_unit();
                let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                put(i, float_scalar(ty, mu + sigma * z)?);
            }
        }
        _ => {
            return Err(Error::unimplemented(format!(
                "{distribution} is not defined for {ty}"
            )))
        }
    }
    Ok(out)
}
