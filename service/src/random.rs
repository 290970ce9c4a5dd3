//! Seeded random arguments for programs run without inputs.
//!
//! [`Prng`] is SplitMix64: tiny, fast, and its output for a seed never changes,
//! so `--seed 7` means the same inputs on every machine and every release. The
//! generators draw every element type:
//!
//! * floats (and each half of a complex number) uniform in `[lo, hi)`, by
//!   default `[-1, 1)`;
//! * integers uniform in `[lo, hi)` rounded to whole numbers, by default a small
//!   range (`[-8, 8)` signed, `[0, 16)` unsigned) that keeps integer programs away
//!   from overflow and out-of-range indices more often than not;
//! * `pred` true or false with equal odds.
//!
//! Ranges can come from a spec file in the format of `../shared/bench/`
//! (`{"args":[{"dtype","shape","lo","hi"}]}`); see [`ArgSpec`].

use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use platform_api::hlo::narrow;
use platform_api::{ElementType, Error, Literal, Result, Scalar, Shape};
use serde::Deserialize;
use std::path::Path;

/// SplitMix64 (Steele, Lea and Flood, 2014).
#[derive(Clone, Debug)]
pub struct Prng {
    state: u64,
}

impl Prng {
    pub fn new(seed: u64) -> Prng {
        Prng { state: seed }
    }

    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9e3779b97f4a7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58476d1ce4e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d049bb133111eb);
        z ^ (z >> 31)
    }

    /// Uniform in `[0, 1)` with 53 random bits.
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Uniform integer in `[0, span)`; `span` must be positive.
    pub fn below(&mut self, span: u128) -> u128 {
        // Multiply-shift on 128 bits: unbiased enough for argument generation and
        // free of the modulo's preference for small values.
        if span <= u128::from(u64::MAX) {
            (u128::from(self.next_u64()) * span) >> 64
        } else {
            let wide = (u128::from(self.next_u64()) << 64) | u128::from(self.next_u64());
            wide % span
        }
    }
}

/// A value range `[lo, hi)` for generated elements.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ValueRange {
    pub lo: f64,
    pub hi: f64,
}

impl ValueRange {
    /// The default range for an element type (see the module docs).
    pub fn default_for(ty: ElementType) -> ValueRange {
        if ty.is_signed_int() {
            ValueRange { lo: -8.0, hi: 8.0 }
        } else if ty.is_unsigned_int() {
            ValueRange { lo: 0.0, hi: 16.0 }
        } else if ty == ElementType::F8E8M0FNU {
            // Powers of two only, no zero, no negatives.
            ValueRange { lo: 0.25, hi: 4.0 }
        } else {
            ValueRange { lo: -1.0, hi: 1.0 }
        }
    }
}

/// The smallest and largest value of an integer type, as i128.
fn int_bounds(ty: ElementType) -> (i128, i128) {
    use ElementType::*;
    match ty {
        S8 => (i8::MIN.into(), i8::MAX.into()),
        S16 => (i16::MIN.into(), i16::MAX.into()),
        S32 => (i32::MIN.into(), i32::MAX.into()),
        S64 => (i64::MIN.into(), i64::MAX.into()),
        U8 => (0, u8::MAX.into()),
        U16 => (0, u16::MAX.into()),
        U32 => (0, u32::MAX.into()),
        U64 => (0, u64::MAX.into()),
        S2 | S4 => {
            let w = ty.bit_width();
            (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1)
        }
        U2 | U4 => (0, (1i128 << ty.bit_width()) - 1),
        _ => (0, 1),
    }
}

fn int_scalar(ty: ElementType, v: i128) -> Scalar {
    use ElementType::*;
    // `v` is within the type's bounds (the caller clamps), so the casts are exact.
    match ty {
        S8 => Scalar::S8(v as i8),
        S16 => Scalar::S16(v as i16),
        S32 => Scalar::S32(v as i32),
        S64 => Scalar::S64(v as i64),
        U8 => Scalar::U8(v as u8),
        U16 => Scalar::U16(v as u16),
        U32 => Scalar::U32(v as u32),
        _ => Scalar::U64(v as u64),
    }
}

/// Draws a float in `[lo, hi)` and rounds it to the type; a draw that rounds up
/// to `hi` (possible for narrow types) is drawn again.
fn float_in<T: Copy>(
    rng: &mut Prng,
    range: ValueRange,
    round: impl Fn(f64) -> T,
    back: impl Fn(T) -> f64,
) -> T {
    for _ in 0..64 {
        let v = round(range.lo + (range.hi - range.lo) * rng.next_f64());
        if back(v) < range.hi || range.hi <= range.lo {
            return v;
        }
    }
    round(range.lo)
}

/// One random element of `ty` in `range`.
fn random_scalar(
    ty: ElementType,
    rng: &mut Prng,
    range: ValueRange,
    int_span: Option<(i128, u128)>,
) -> Scalar {
    use ElementType::*;
    match ty {
        Pred => Scalar::Pred(rng.next_u64() & 1 == 1),
        F16 => Scalar::F16(float_in(rng, range, f16::from_f64, f16::to_f64)),
        BF16 => Scalar::BF16(float_in(rng, range, bf16::from_f64, bf16::to_f64)),
        F32 => Scalar::F32(float_in(rng, range, |v| v as f32, f64::from)),
        F64 => Scalar::F64(float_in(rng, range, |v| v, |v| v)),
        C64 => {
            let re = float_in(rng, range, |v| v as f32, f64::from);
            let im = float_in(rng, range, |v| v as f32, f64::from);
            Scalar::C64(Complex32::new(re, im))
        }
        C128 => {
            let re = float_in(rng, range, |v| v, |v| v);
            let im = float_in(rng, range, |v| v, |v| v);
            Scalar::C128(Complex64::new(re, im))
        }
        _ => {
            let (lo, span) = int_span.unwrap_or((0, 1));
            int_scalar(ty, lo + rng.below(span) as i128)
        }
    }
}

/// The integer interval `[lo, lo + span)` a range covers for an integer type,
/// clamped to the type. Errors when it holds no integer.
fn int_interval(ty: ElementType, range: ValueRange) -> Result<(i128, u128)> {
    let (min, max) = int_bounds(ty);
    if !range.lo.is_finite() || !range.hi.is_finite() {
        return Err(Error::invalid_argument(format!(
            "the range [{}, {}) for {ty} is not finite",
            range.lo, range.hi
        )));
    }
    // Clamp in f64 first: beyond ±2^127 the casts would saturate anyway.
    let lo = (range.lo.ceil().max(-1.7e38) as i128).max(min);
    let hi_exclusive = (range.hi.ceil().min(1.7e38) as i128).min(max.saturating_add(1));
    if hi_exclusive <= lo {
        return Err(Error::invalid_argument(format!(
            "the range [{}, {}) holds no {ty} value",
            range.lo, range.hi
        )));
    }
    Ok((lo, (hi_exclusive - lo) as u128))
}

/// A random value of `shape`: arrays filled element by element, tuples element
/// by element, tokens as tokens. `range` overrides the element type's default.
pub fn random_literal(shape: &Shape, rng: &mut Prng, range: Option<ValueRange>) -> Result<Literal> {
    match shape {
        Shape::Token => Ok(Literal::token()),
        Shape::Tuple(elements) => Ok(Literal::tuple(
            elements
                .iter()
                .map(|e| random_literal(e, rng, range))
                .collect::<Result<_>>()?,
        )),
        Shape::Array(array) => {
            let ty = array.element_type;
            let range = range.unwrap_or_else(|| ValueRange::default_for(ty));
            let int_span = if ty.is_integer() {
                Some(int_interval(ty, range)?)
            } else {
                None
            };
            let size = ty.byte_size();
            let mut literal = Literal::try_zeros(&Shape::array(ty, array.dims.clone()))?;
            let bytes = literal.bytes_mut()?;
            if ty.is_narrow() {
                // One byte per element: the bit pattern of a value in range.
                for b in bytes.iter_mut() {
                    *b = match int_span {
                        Some((lo, span)) => narrow::int_bits(ty, lo + rng.below(span) as i128),
                        None => float_in(
                            rng,
                            range,
                            |v| narrow::encode(ty, v),
                            |b| narrow::decode(ty, b),
                        ),
                    };
                }
                return Ok(literal);
            }
            for chunk in bytes.chunks_exact_mut(size) {
                random_scalar(ty, rng, range, int_span).write_bytes(chunk);
            }
            Ok(literal)
        }
    }
}

/// Random arguments for parameters of these shapes, all from one seed.
/// `ranges[i]` (if present and `Some`) sets parameter `i`'s range.
pub fn random_arguments(
    parameters: &[Shape],
    seed: u64,
    ranges: &[Option<ValueRange>],
) -> Result<Vec<Literal>> {
    let mut rng = Prng::new(seed);
    parameters
        .iter()
        .enumerate()
        .map(|(i, shape)| {
            random_literal(shape, &mut rng, ranges.get(i).copied().flatten())
                .map_err(|e| e.context(format!("random argument {i} ({shape})")))
        })
        .collect()
}

/// One argument of a spec file: NumPy dtype name, shape, value range.
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ArgSpec {
    pub dtype: String,
    pub shape: Vec<usize>,
    #[serde(default)]
    pub lo: Option<f64>,
    #[serde(default)]
    pub hi: Option<f64>,
}

/// A spec file: `{"args":[{"dtype","shape","lo","hi"}, ...]}` (other keys ignored).
#[derive(Clone, Debug, Deserialize, PartialEq)]
pub struct ArgsSpec {
    pub args: Vec<ArgSpec>,
}

/// The element type a NumPy dtype name stands for.
pub fn element_type_from_numpy(dtype: &str) -> Option<ElementType> {
    use ElementType::*;
    Some(match dtype {
        "bool" => Pred,
        "int8" => S8,
        "int16" => S16,
        "int32" => S32,
        "int64" => S64,
        "uint8" => U8,
        "uint16" => U16,
        "uint32" => U32,
        "uint64" => U64,
        "float16" => F16,
        "bfloat16" => BF16,
        "float32" => F32,
        "float64" => F64,
        "complex64" => C64,
        "complex128" => C128,
        // ml_dtypes' names of the narrow types (`float8_e4m3fn`, `int4`, ...).
        other => {
            return ElementType::NARROW
                .into_iter()
                .find(|t| platform_api::literal::npy::ml_dtypes_name(*t) == Some(other))
                .or_else(|| ElementType::from_name(other))
        }
    })
}

impl ArgsSpec {
    /// Reads a spec file.
    pub fn read(path: &Path) -> Result<ArgsSpec> {
        let text =
            std::fs::read_to_string(path).map_err(|e| Error::from(e).context(path.display()))?;
        serde_json::from_str(&text).map_err(|e| {
            Error::invalid_argument(format!("{}: not an argument spec: {e}", path.display()))
        })
    }

    /// Each argument's range, after checking the spec against the parameter
    /// shapes (count, dtype and shape must all agree).
    pub fn ranges_for(
        &self,
        parameters: &[Shape],
        source: &str,
    ) -> Result<Vec<Option<ValueRange>>> {
        if self.args.len() != parameters.len() {
            return Err(Error::invalid_argument(format!(
                "{source} describes {} argument(s) but the module takes {}",
                self.args.len(),
                parameters.len()
            )));
        }
        self.args
            .iter()
            .zip(parameters)
            .enumerate()
            .map(|(i, (spec, param))| {
                let ty = element_type_from_numpy(&spec.dtype).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "{source}: argument {i} has unknown dtype \"{}\"",
                        spec.dtype
                    ))
                })?;
                let spec_shape = Shape::array(ty, spec.shape.clone());
                if !spec_shape.compatible(param) {
                    return Err(Error::invalid_argument(format!(
                        "{source}: argument {i} is {spec_shape} but parameter {i} is {}",
                        param.without_layout()
                    )));
                }
                Ok(match (spec.lo, spec.hi) {
                    (Some(lo), Some(hi)) => Some(ValueRange { lo, hi }),
                    (None, None) => None,
                    _ => {
                        return Err(Error::invalid_argument(format!(
                            "{source}: argument {i} gives only one of \"lo\" and \"hi\""
                        )))
                    }
                })
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs of SplitMix64 seeded with 1234567, from the reference
        // implementation (Vigna's splitmix64.c).
        let mut rng = Prng::new(1234567);
        assert_eq!(rng.next_u64(), 6457827717110365317);
        assert_eq!(rng.next_u64(), 3203168211198807973);
    }

    #[test]
    fn every_element_type_stays_in_range() {
        let mut rng = Prng::new(3);
        for ty in ElementType::ALL.into_iter().chain(ElementType::NARROW) {
            let lit = random_literal(&Shape::array(ty, vec![257]), &mut rng, None).unwrap();
            let range = ValueRange::default_for(ty);
            for s in lit.scalars().unwrap() {
                let v = s.to_f64_lossy();
                match ty {
                    ElementType::Pred => assert!(v == 0.0 || v == 1.0),
                    _ => assert!(v >= range.lo && v < range.hi, "{ty}: {v}"),
                }
                if let Scalar::C64(c) = s {
                    assert!((-1.0..1.0).contains(&c.im));
                }
            }
        }
    }

    #[test]
    fn integer_ranges_are_half_open_and_clamped() {
        let mut rng = Prng::new(9);
        let range = Some(ValueRange { lo: 0.0, hi: 3.0 });
        let lit =
            random_literal(&Shape::array(ElementType::S32, vec![1000]), &mut rng, range).unwrap();
        let values: Vec<i32> = lit.data::<i32>().unwrap().to_vec();
        assert!(values.iter().all(|v| (0..3).contains(v)));
        for want in 0..3 {
            assert!(values.contains(&want), "{want} never drawn");
        }
        // A range wider than the type is clamped to it.
        let wide = Some(ValueRange {
            lo: -1e30,
            hi: 1e30,
        });
        assert!(random_literal(&Shape::array(ElementType::U8, vec![10]), &mut rng, wide).is_ok());
        let empty = Some(ValueRange { lo: 2.0, hi: 2.0 });
        assert!(random_literal(&Shape::array(ElementType::S8, vec![1]), &mut rng, empty).is_err());
    }

    #[test]
    fn same_seed_same_values() {
        let shapes = [
            Shape::array(ElementType::F32, vec![4]),
            Shape::array(ElementType::S64, vec![4]),
        ];
        let a = random_arguments(&shapes, 42, &[]).unwrap();
        let b = random_arguments(&shapes, 42, &[]).unwrap();
        let c = random_arguments(&shapes, 43, &[]).unwrap();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn spec_checks_shapes_and_reads_ranges() {
        let spec: ArgsSpec = serde_json::from_str(
            r#"{"name":"x","args":[{"dtype":"float32","shape":[2,3],"lo":-2.0,"hi":2.0},{"dtype":"int32","shape":[4],"lo":0,"hi":10}]}"#,
        )
        .unwrap();
        let params = [
            Shape::array(ElementType::F32, vec![2, 3]),
            Shape::array(ElementType::S32, vec![4]),
        ];
        let ranges = spec.ranges_for(&params, "x.json").unwrap();
        assert_eq!(ranges[1], Some(ValueRange { lo: 0.0, hi: 10.0 }));
        let wrong = [
            Shape::array(ElementType::F32, vec![3, 2]),
            Shape::array(ElementType::S32, vec![4]),
        ];
        let err = spec.ranges_for(&wrong, "x.json").unwrap_err();
        assert!(err.message().contains("argument 0"), "{err}");
    }
}
