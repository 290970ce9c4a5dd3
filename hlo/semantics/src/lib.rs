//! `hlo-semantics`: what every elementwise op computes, shared by every backend.
//!
//! What each elementwise HLO op computes is defined here, once, exactly as XLA
//! computes it, so the interpreter, the host compiler and any other backend agree
//! on every bit XLA pins down: integer division by zero and `MIN / -1`, shifts past
//! the width, integer `power`, NaN propagation in `maximum`/`minimum`, float → int
//! saturation, `f16`/`bf16` computed in `f32` and rounded once, total-order
//! comparison, `reduce-precision`'s rounding, XLA's complex formulas. Each fact was
//! checked against XLA CPU (through `jax`), see `tests/semantics_xla.rs` and
//! `scripts/gen_semantics_cases.py`.
//!
//! # Two layers
//!
//! * **Typed** — for code that runs loops itself (a compiler's kernels, SIMD):
//!   - [`int`], [`float`], [`complex`]: one `#[inline]` generic function per op over
//!     the element traits [`IntSemantics`], [`FloatSemantics`],
//!     [`ComplexSemantics`] (e.g. `int::divide::<i32>(a, b)`,
//!     `float::maximum::<f16>(a, b)`), no allocation, no dispatch; [`pred`] for
//!     `pred` bytes;
//!   - [`mod@convert`]: `convert::convert::<F, T>(x)` between any two element types
//!     ([`Pred`] stands for `pred`);
//!   - [`real`]: the `f32`/`f64` math library ([`Real`]) the float ops use;
//!   - [`kernels`]: each op over whole typed slices (matching the op once, then a
//!     tight monomorphised loop).
//! * **Values** — for code that holds [`Literal`]s and [`Scalar`]s (the
//!   interpreter): [`unary`], [`binary`], [`compare`], [`select`], [`clamp`],
//!   [`convert()`], [`bitcast_convert`], [`reduce_precision`] and the `*_scalar`
//!   forms. They check shapes and types (errors name both sides), pick the kernel
//!   for the element type once, and run it over the literal's typed data: there is
//!   no per-element dispatch.
//!
//! Which (op, type) pairs exist is answered by [`unary_result_type`] and
//! [`binary_result_type`]; a pair XLA does not define is an `Unimplemented` error
//! naming the op and the type.
//!
//! # Where this differs from XLA CPU
//!
//! * XLA CPU flushes `f32`/`f64` (so also `bf16`) denormals to zero, inputs and
//!   results; these semantics keep IEEE gradual underflow, like XLA's reference
//!   interpreter. Only magnitudes below the type's smallest normal are affected
//!   (and comparisons or `sign` of such denormals).
//! * Transcendentals come from the C math library; XLA CPU uses its own
//!   approximations for some, so results differ by a few ULP (up to ~100 ULP for
//!   XLA's `f64` `log-plus-one` near -0.41), never on ±0, ±inf, NaN or the
//!   overflow/underflow thresholds.
//! * XLA CPU fuses the multiply-adds inside complex `multiply`/`divide` into FMAs;
//!   here each product is rounded, so parts can differ in the last bit.
//! * `convert` from complex to a real type takes the real part (StableHLO's
//!   definition; HLO's shape inference rejects it), and `abs` of an unsigned
//!   integer is the identity (XLA's emitter; its shape inference rejects it).

pub mod complex;
pub mod contraction;
pub mod convert;
pub mod float;
pub mod int;
pub mod kernels;
pub mod pred;
pub mod random;
pub mod real;

/// Types the exported `with_*_type!` macros name (not part of the API).
#[doc(hidden)]
pub mod __macro_support {
    pub use half::{bf16, f16};
    pub use hlo_ir::ElementType;
    pub use num_complex::{Complex32, Complex64};
}

pub use complex::ComplexSemantics;
pub use convert::{ConvertSource, ConvertTarget, Pred, Repr};
pub use float::FloatSemantics;
pub use int::IntSemantics;
pub use real::Real;

use hlo_ir::native::Scalar;
use hlo_ir::shape::{ArrayShape, ElementType, Shape};
use hlo_ir::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use hlo_ir::{Error, Literal, Result};
use kernels::undefined;
use num_complex::{Complex32, Complex64};

// ---------------------------------------------------------------------------
// Which ops exist on which types.

/// The complex type whose parts are `ty` (`f32 → c64`, `f64 → c128`).
pub fn complex_type_of(ty: ElementType) -> Option<ElementType> {
    match ty {
        ElementType::F32 => Some(ElementType::C64),
        ElementType::F64 => Some(ElementType::C128),
        _ => None,
    }
}

/// The element type `op` produces from an operand of type `ty`, or
/// `Unimplemented` if XLA does not define `op` on `ty`.
///
/// `pred`: `not`. Integers: `abs`, `negate`, `not`, `popcnt`,
/// `count-leading-zeros`, and `sign` for signed types. Floats: everything but
/// the bit ops (`is-finite` gives `pred`; `real` is the identity, `imag` zero).
/// Complex: `abs`/`real`/`imag` (giving the component type), `negate`, `sign`,
/// `exponential`, `exponential-minus-one`, `log`, `log-plus-one`, `logistic`,
/// `sqrt`, `rsqrt`, `sine`, `cosine`, `tan`, `tanh`.
pub fn unary_result_type(op: UnaryOp, ty: ElementType) -> Result<ElementType> {
    use UnaryOp::*;
    let defined = match ty {
        ElementType::Pred => matches!(op, Not),
        t if t.is_integer() => {
            matches!(op, Abs | Negate | Not | PopCount | Clz) || (op == Sign && t.is_signed_int())
        }
        t if t.is_float() => !matches!(op, Not | PopCount | Clz),
        _ => matches!(
            op,
            Abs | Real
                | Imag
                | Negate
                | Sign
                | Exp
                | Expm1
                | Log
                | Log1p
                | Logistic
                | Sqrt
                | Rsqrt
                | Sin
                | Cos
                | Tan
                | Tanh
        ),
    };
    if !defined {
        return Err(undefined(op.name(), ty));
    }
    Ok(match op {
        IsFinite => ElementType::Pred,
        Abs | Real | Imag => ty.complex_component(),
        _ => ty,
    })
}

/// The element type `op` produces from two operands of type `ty`, or
/// `Unimplemented` if XLA does not define `op` on `ty`.
///
/// `pred`: `and`, `or`, `xor`, and `add`/`maximum` (= `or`), `multiply`/`minimum`
/// (= `and`). Integers: everything but `atan2` and `complex`. Floats: arithmetic,
/// `remainder`, `maximum`, `minimum`, `power`, `atan2`, and `complex` for `f32`/`f64`
/// (giving `c64`/`c128`). Complex: `add`, `subtract`, `multiply`, `divide`,
/// `power`, `atan2`.
pub fn binary_result_type(op: BinaryOp, ty: ElementType) -> Result<ElementType> {
    use BinaryOp::*;
    let defined = match ty {
        ElementType::Pred => matches!(op, And | Or | Xor | Add | Multiply | Maximum | Minimum),
        t if t.is_integer() => !matches!(op, Atan2 | Complex),
        t if t.is_float() => {
            matches!(
                op,
                Add | Subtract | Multiply | Divide | Remainder | Maximum | Minimum | Power | Atan2
            ) || (op == Complex && complex_type_of(t).is_some())
        }
        _ => matches!(op, Add | Subtract | Multiply | Divide | Power | Atan2),
    };
    if !defined {
        return Err(undefined(op.name(), ty));
    }
    Ok(match op {
        Complex => complex_type_of(ty).unwrap_or(ty),
        _ => ty,
    })
}

// ---------------------------------------------------------------------------
// Helpers for the array layer.

/// Views `bytes` as a slice of `T` (the literal buffer is 8-byte aligned and holds
/// whole elements, so this only fails on an internal inconsistency).
fn view<T: bytemuck::Pod>(bytes: &[u8]) -> Result<&[T]> {
    bytemuck::try_cast_slice(bytes).map_err(|e| {
        Error::internal(format!(
            "cannot view {} bytes as {}: {e}",
            bytes.len(),
            std::any::type_name::<T>()
        ))
    })
}

fn view_mut<T: bytemuck::Pod>(bytes: &mut [u8]) -> Result<&mut [T]> {
    let len = bytes.len();
    bytemuck::try_cast_slice_mut(bytes).map_err(|e| {
        Error::internal(format!(
            "cannot view {len} bytes as {}: {e}",
            std::any::type_name::<T>()
        ))
    })
}

fn array_of<'a>(op: &str, role: &str, x: &'a Literal) -> Result<&'a ArrayShape> {
    x.array_shape().map_err(|_| {
        Error::invalid_argument(format!(
            "{op}: {role} must be an array, got a value of shape {}",
            x.shape()
        ))
    })
}

fn same_dims(a: &ArrayShape, b: &ArrayShape) -> bool {
    a.dims == b.dims
}

/// An array shape like `like` (dims, dynamism, layout) with another element type.
fn with_type(like: &ArrayShape, element_type: ElementType) -> Shape {
    Shape::Array(ArrayShape {
        element_type,
        ..like.clone()
    })
}

/// Runs `$body` with `$T` bound to the Rust type of an integer element type.
#[macro_export]
macro_rules! with_int_type {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $ty {
            $crate::__macro_support::ElementType::S8 => {
                type $T = i8;
                $body
            }
            $crate::__macro_support::ElementType::S16 => {
                type $T = i16;
                $body
            }
            $crate::__macro_support::ElementType::S32 => {
                type $T = i32;
                $body
            }
            $crate::__macro_support::ElementType::S64 => {
                type $T = i64;
                $body
            }
            $crate::__macro_support::ElementType::U8 => {
                type $T = u8;
                $body
            }
            $crate::__macro_support::ElementType::U16 => {
                type $T = u16;
                $body
            }
            $crate::__macro_support::ElementType::U32 => {
                type $T = u32;
                $body
            }
            $crate::__macro_support::ElementType::U64 => {
                type $T = u64;
                $body
            }
            _ => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of a float element type.
#[macro_export]
macro_rules! with_float_type {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $ty {
            $crate::__macro_support::ElementType::F16 => {
                type $T = $crate::__macro_support::f16;
                $body
            }
            $crate::__macro_support::ElementType::BF16 => {
                type $T = $crate::__macro_support::bf16;
                $body
            }
            $crate::__macro_support::ElementType::F32 => {
                type $T = f32;
                $body
            }
            $crate::__macro_support::ElementType::F64 => {
                type $T = f64;
                $body
            }
            _ => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to the Rust type of a complex element type.
#[macro_export]
macro_rules! with_complex_type {
    ($ty:expr, $T:ident => $body:expr, _ => $other:expr) => {
        match $ty {
            $crate::__macro_support::ElementType::C64 => {
                type $T = $crate::__macro_support::Complex32;
                $body
            }
            $crate::__macro_support::ElementType::C128 => {
                type $T = $crate::__macro_support::Complex64;
                $body
            }
            _ => $other,
        }
    };
}

/// Runs `$body` with `$T` bound to the conversion type of any element type
/// ([`Pred`] for `pred`). Panics on a narrow type (`f8e4m3fn`, `s4`, ...): they
/// have no Rust type; [`convert()`] handles them itself, and nothing else meets
/// them once `hlo_passes::legalize::narrow` has run.
#[macro_export]
macro_rules! with_any_type {
    ($ty:expr, $T:ident => $body:expr) => {
        match $ty {
            $crate::__macro_support::ElementType::Pred => {
                type $T = $crate::Pred;
                $body
            }
            $crate::__macro_support::ElementType::S8 => {
                type $T = i8;
                $body
            }
            $crate::__macro_support::ElementType::S16 => {
                type $T = i16;
                $body
            }
            $crate::__macro_support::ElementType::S32 => {
                type $T = i32;
                $body
            }
            $crate::__macro_support::ElementType::S64 => {
                type $T = i64;
                $body
            }
            $crate::__macro_support::ElementType::U8 => {
                type $T = u8;
                $body
            }
            $crate::__macro_support::ElementType::U16 => {
                type $T = u16;
                $body
            }
            $crate::__macro_support::ElementType::U32 => {
                type $T = u32;
                $body
            }
            $crate::__macro_support::ElementType::U64 => {
                type $T = u64;
                $body
            }
            $crate::__macro_support::ElementType::F16 => {
                type $T = $crate::__macro_support::f16;
                $body
            }
            $crate::__macro_support::ElementType::BF16 => {
                type $T = $crate::__macro_support::bf16;
                $body
            }
            $crate::__macro_support::ElementType::F32 => {
                type $T = f32;
                $body
            }
            $crate::__macro_support::ElementType::F64 => {
                type $T = f64;
                $body
            }
            $crate::__macro_support::ElementType::C64 => {
                type $T = $crate::__macro_support::Complex32;
                $body
            }
            $crate::__macro_support::ElementType::C128 => {
                type $T = $crate::__macro_support::Complex64;
                $body
            }
            narrow => panic!(
                "{narrow} has no Rust element type: computations on narrow types are widened \
                 by hlo_passes::legalize::narrow, and convert handles them before dispatch"
            ),
        }
    };
}

// ---------------------------------------------------------------------------
// The array layer.

/// `op(x)` elementwise; `result` is the instruction's shape (its element type can
/// differ from the operand's: `abs`/`real`/`imag` of complex, `is-finite`).
pub fn unary(op: UnaryOp, x: &Literal, result: &Shape) -> Result<Literal> {
    let xs = array_of(op.name(), "the operand", x)?;
    let ty = xs.element_type;
    let expected = unary_result_type(op, ty)?;
    let rs = result.array_or_err()?;
    if !same_dims(xs, rs) || rs.element_type != expected {
        return Err(Error::invalid_argument(format!(
            "{op} of an operand of shape {} gives {expected}{:?}, not the requested {result}",
            x.shape(),
            xs.dims
        )));
    }
    let mut out = Literal::zeros(result);
    let input = x.bytes()?;
    let output = out.bytes_mut()?;
    with_int_type!(ty, T => kernels::int_unary::<T>(op, view(input)?, view_mut(output)?)?, _ =>
    with_float_type!(ty, T => {
        if op == UnaryOp::IsFinite {
            kernels::float_is_finite::<T>(view(input)?, output)?
        } else {
            kernels::float_unary::<T>(op, view(input)?, view_mut(output)?)?
        }
    }, _ =>
    with_complex_type!(ty, T => {
        if matches!(op, UnaryOp::Abs | UnaryOp::Real | UnaryOp::Imag) {
            kernels::complex_to_part::<T>(op, view(input)?, view_mut(output)?)?
        } else {
            kernels::complex_unary::<T>(op, view(input)?, view_mut(output)?)?
        }
    }, _ => kernels::pred_unary(op, input, output)?)));
    Ok(out)
}

/// Checks that two operands are arrays of one element type and one shape.
fn check_same_arrays<'a>(
    op: &str,
    a: &'a Literal,
    b: &'a Literal,
) -> Result<(&'a ArrayShape, &'a ArrayShape)> {
    let sa = array_of(op, "the first operand", a)?;
    let sb = array_of(op, "the second operand", b)?;
    if sa.element_type != sb.element_type || !same_dims(sa, sb) {
        return Err(Error::invalid_argument(format!(
            "{op} needs operands of one shape and element type, got {} and {}",
            a.shape(),
            b.shape()
        )));
    }
    Ok((sa, sb))
}

/// `op(a, b)` elementwise on same-shaped operands.
pub fn binary(op: BinaryOp, a: &Literal, b: &Literal, result: &Shape) -> Result<Literal> {
    let (sa, _) = check_same_arrays(op.name(), a, b)?;
    let ty = sa.element_type;
    let expected = binary_result_type(op, ty)?;
    let rs = result.array_or_err()?;
    if !same_dims(sa, rs) || rs.element_type != expected {
        return Err(Error::invalid_argument(format!(
            "{op} of operands of shape {} gives {expected}{:?}, not the requested {result}",
            a.shape(),
            sa.dims
        )));
    }
    let mut out = Literal::zeros(result);
    let (ab, bb) = (a.bytes()?, b.bytes()?);
    let output = out.bytes_mut()?;
    if op == BinaryOp::Complex {
        match ty {
            ElementType::F32 => {
                kernels::make_complex::<Complex32>(view(ab)?, view(bb)?, view_mut(output)?)?
            }
            _ => kernels::make_complex::<Complex64>(view(ab)?, view(bb)?, view_mut(output)?)?,
        }
        return Ok(out);
    }
    with_int_type!(ty, T => kernels::int_binary::<T>(op, view(ab)?, view(bb)?, view_mut(output)?)?, _ =>
    with_float_type!(ty, T => kernels::float_binary::<T>(op, view(ab)?, view(bb)?, view_mut(output)?)?, _ =>
    with_complex_type!(ty, T => kernels::complex_binary::<T>(op, view(ab)?, view(bb)?, view_mut(output)?)?,
    _ => kernels::pred_binary(op, ab, bb, output)?)));
    Ok(out)
}

/// Whether a comparison of `ty` operands with `compare_type` uses the total order,
/// or an error if the comparison type does not fit the element type.
fn resolve_comparison(ty: ElementType, compare_type: Option<ComparisonType>) -> Result<bool> {
    let fits = match compare_type {
        None => true,
        Some(ComparisonType::TotalOrder) => true,
        Some(ComparisonType::Float) => ty.is_floating_or_complex(),
        Some(ComparisonType::Signed) => ty.is_signed_int(),
        Some(ComparisonType::Unsigned) => ty.is_unsigned_int() || ty.is_pred(),
    };
    if !fits {
        let ct = compare_type.map(|c| c.name()).unwrap_or("");
        return Err(Error::invalid_argument(format!(
            "compare type {ct} does not fit {ty} operands"
        )));
    }
    Ok(compare_type == Some(ComparisonType::TotalOrder))
}

/// `compare` elementwise; a pred array.
pub fn compare(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    a: &Literal,
    b: &Literal,
) -> Result<Literal> {
    let (sa, _) = check_same_arrays("compare", a, b)?;
    let ty = sa.element_type;
    let total_order = resolve_comparison(ty, compare_type)?;
    let mut out = Literal::zeros(&with_type(sa, ElementType::Pred));
    let (ab, bb) = (a.bytes()?, b.bytes()?);
    let output = out.bytes_mut()?;
    with_int_type!(ty, T => kernels::compare_int::<T>(direction, view(ab)?, view(bb)?, output)?, _ =>
    with_float_type!(ty, T => kernels::compare_float::<T>(direction, total_order, view(ab)?, view(bb)?, output)?, _ =>
    with_complex_type!(ty, T => kernels::compare_complex::<T>(direction, total_order, view(ab)?, view(bb)?, output)?,
    _ => kernels::compare_int::<u8>(direction, ab, bb, output)?)));
    Ok(out)
}

/// `select(pred, on_true, on_false)`; `pred` may be a scalar.
pub fn select(pred: &Literal, on_true: &Literal, on_false: &Literal) -> Result<Literal> {
    let sp = array_of("select", "the predicate", pred)?;
    let (st, _) = check_same_arrays("select", on_true, on_false)?;
    if sp.element_type != ElementType::Pred || !(sp.dims.is_empty() || same_dims(sp, st)) {
        return Err(Error::invalid_argument(format!(
            "select needs a pred scalar or a pred array of the branches' dimensions, got a \
             predicate of shape {} for branches of shape {}",
            pred.shape(),
            on_true.shape()
        )));
    }
    let mut out = Literal::zeros(on_true.shape());
    let p = pred.bytes()?;
    let (t, f) = (on_true.bytes()?, on_false.bytes()?);
    let output = out.bytes_mut()?;
    match st.element_type.byte_size() {
        1 => kernels::select::<u8>(p, t, f, output)?,
        2 => kernels::select::<u16>(p, view(t)?, view(f)?, view_mut(output)?)?,
        4 => kernels::select::<u32>(p, view(t)?, view(f)?, view_mut(output)?)?,
        8 => kernels::select::<u64>(p, view(t)?, view(f)?, view_mut(output)?)?,
        _ => kernels::select::<[u64; 2]>(p, view(t)?, view(f)?, view_mut(output)?)?,
    }
    Ok(out)
}

/// `clamp(min, x, max)`; `min` and `max` may be scalars.
pub fn clamp(min: &Literal, x: &Literal, max: &Literal) -> Result<Literal> {
    let sx = array_of("clamp", "the operand", x)?;
    for (role, bound) in [("min", min), ("max", max)] {
        let sb = array_of("clamp", role, bound)?;
        if sb.element_type != sx.element_type || !(sb.dims.is_empty() || same_dims(sb, sx)) {
            return Err(Error::invalid_argument(format!(
                "clamp needs {role} of the operand's element type and either rank 0 or the \
                 operand's dimensions, got {role} of shape {} for an operand of shape {}",
                bound.shape(),
                x.shape()
            )));
        }
    }
    let ty = sx.element_type;
    let mut out = Literal::zeros(x.shape());
    let (lo, v, hi) = (min.bytes()?, x.bytes()?, max.bytes()?);
    let output = out.bytes_mut()?;
    if ty == ElementType::Pred {
        // Ordered false < true (as `maximum`/`minimum` of pred are `or`/`and`),
        // stored as bytes 0 and 1: clamp them as u8.
        kernels::clamp_int::<u8>(view(lo)?, view(v)?, view(hi)?, view_mut(output)?)?;
        return Ok(out);
    }
    with_int_type!(ty, T => kernels::clamp_int::<T>(view(lo)?, view(v)?, view(hi)?, view_mut(output)?)?, _ =>
    with_float_type!(ty, T => kernels::clamp_float::<T>(view(lo)?, view(v)?, view(hi)?, view_mut(output)?)?,
    _ => return Err(undefined("clamp", ty))));
    Ok(out)
}

/// `convert` to another element type.
pub fn convert(x: &Literal, to: ElementType) -> Result<Literal> {
    let sx = array_of("convert", "the operand", x)?;
    let from = sx.element_type;
    if from == to {
        return Ok(x.clone());
    }
    let mut out = Literal::zeros(&with_type(sx, to));
    let input = x.bytes()?;
    let output = out.bytes_mut()?;
    if from.is_narrow() || to.is_narrow() {
        convert::convert_narrow(from, input, to, output)?;
        return Ok(out);
    }
    with_any_type!(from, S => {
        let src: &[S] = view(input)?;
        with_any_type!(to, D => convert::convert_slice::<S, D>(src, view_mut(output)?))
    });
    Ok(out)
}

/// `bitcast-convert` to `result` (same total bits per element, or a dimension added
/// or removed when the widths differ, as XLA allows).
///
/// The row-major little-endian bytes are reinterpreted unchanged: from a wider type
/// the result gains a minor dimension of `from_bits / to_bits` elements; to a wider
/// type the operand's minor dimension must be `to_bits / from_bits` and is
/// dropped. `pred` and real ↔ complex are rejected, as in XLA.
pub fn bitcast_convert(x: &Literal, result: &Shape) -> Result<Literal> {
    let sx = array_of("bitcast-convert", "the operand", x)?;
    let rs = result.array_or_err()?;
    let (from, to) = (sx.element_type, rs.element_type);
    let mismatch = |why: &str| {
        Error::invalid_argument(format!(
            "bitcast-convert from {} to {result}: {why}",
            x.shape()
        ))
    };
    // pred to pred reinterprets nothing (XLA runs it as a copy); between pred
    // and another type XLA has no byte-level meaning to agree with (StableHLO
    // counts pred as one bit, XLA CPU stores it in a byte).
    if from.is_pred() && to.is_pred() {
        if rs.dims != sx.dims {
            return Err(mismatch("the result dimensions must be the operand's"));
        }
        return Literal::from_bytes(result.clone(), x.bytes()?);
    }
    if from.is_pred() || to.is_pred() {
        return Err(mismatch("pred has no bit representation to reinterpret"));
    }
    if from.is_complex() != to.is_complex() {
        return Err(mismatch("conversion between complex and real types"));
    }
    let (fb, tb) = (from.bit_width(), to.bit_width());
    let packs = (from.is_narrow() || to.is_narrow()) && fb != tb;
    let expected: Vec<usize> = if fb == tb {
        sx.dims.clone()
    } else if fb > tb {
        let mut d = sx.dims.clone();
        d.push(fb / tb);
        d
    } else {
        match sx.dims.split_last() {
            Some((&last, rest)) if last == tb / fb => rest.to_vec(),
            _ => {
                return Err(mismatch(&format!(
                    "to a wider type the operand's last dimension must be {}",
                    tb / fb
                )))
            }
        }
    };
    if rs.dims != expected {
        return Err(mismatch(&format!(
            "the result dimensions must be {expected:?}"
        )));
    }
    if packs {
        let mut out = Literal::zeros(result);
        repack_bits(from, x.bytes()?, to, out.bytes_mut()?);
        return Ok(out);
    }
    Literal::from_bytes(result.clone(), x.bytes()?)
}

/// `bitcast-convert`'s bytes when a narrow type meets a type of another width:
/// the elements' bits form one little-endian bit stream (element 0 in the low
/// bits, as XLA packs `s4` into `u8`: `0x12` is `{2, 1}`), cut into the other
/// type's elements. A narrow element occupies the low bits of its byte;
/// `input` and `output` hold whole elements and the same number of bits.
pub fn repack_bits(from: ElementType, input: &[u8], to: ElementType, output: &mut [u8]) {
    let (fb, tb) = (from.bit_width() as u32, to.bit_width() as u32);
    let (fs, ts) = (from.byte_size(), to.byte_size());
    let mask = |bits: u32| {
        if bits >= 128 {
            u128::MAX
        } else {
            (1u128 << bits) - 1
        }
    };
    let (mut acc, mut have) = (0u128, 0u32);
    let mut next = 0usize;
    for element in input.chunks_exact(fs) {
        let mut word = [0u8; 16];
        word[..fs].copy_from_slice(element);
        acc |= (u128::from_le_bytes(word) & mask(fb)) << have;
        have += fb;
        while have >= tb {
            let value = acc & mask(tb);
            acc = if tb >= 128 { 0 } else { acc >> tb };
            have -= tb;
            if let Some(slot) = output.get_mut(next * ts..(next + 1) * ts) {
                slot.copy_from_slice(&value.to_le_bytes()[..ts]);
            }
            next += 1;
        }
    }
}

/// `reduce-precision` to the given exponent and mantissa widths.
pub fn reduce_precision(x: &Literal, exponent_bits: u32, mantissa_bits: u32) -> Result<Literal> {
    let sx = array_of("reduce-precision", "the operand", x)?;
    if exponent_bits < 1 {
        return Err(Error::invalid_argument(format!(
            "reduce-precision needs at least one exponent bit, got exponent_bits={exponent_bits}"
        )));
    }
    let ty = sx.element_type;
    let mut out = Literal::zeros(x.shape());
    let input = x.bytes()?;
    let output = out.bytes_mut()?;
    with_float_type!(ty, T => kernels::reduce_precision::<T>(view(input)?, exponent_bits, mantissa_bits, view_mut(output)?)?,
    _ => return Err(undefined("reduce-precision", ty)));
    Ok(out)
}

// ---------------------------------------------------------------------------
// The scalar layer: the same kernels on one-element slices on the stack.

/// Runs a same-type unary or binary kernel on one element.
macro_rules! one {
    ($kernel:path, $op:expr, $($x:expr),+) => {{
        let mut o = [Default::default()];
        $kernel($op, $(&[$x],)+ &mut o)?;
        o[0]
    }};
}

/// `op(x)` on one element; `result` is the result element type.
pub fn unary_scalar(op: UnaryOp, x: Scalar, result: ElementType) -> Result<Scalar> {
    let ty = x.element_type();
    let expected = unary_result_type(op, ty)?;
    if expected != result {
        return Err(Error::invalid_argument(format!(
            "{op} of a {ty} value gives {expected}, not the requested {result}"
        )));
    }
    use Scalar as S;
    Ok(match x {
        S::Pred(v) => S::Pred(one!(kernels::pred_unary, op, v as u8) != 0),
        S::S8(v) => S::S8(one!(kernels::int_unary, op, v)),
        S::S16(v) => S::S16(one!(kernels::int_unary, op, v)),
        S::S32(v) => S::S32(one!(kernels::int_unary, op, v)),
        S::S64(v) => S::S64(one!(kernels::int_unary, op, v)),
        S::U8(v) => S::U8(one!(kernels::int_unary, op, v)),
        S::U16(v) => S::U16(one!(kernels::int_unary, op, v)),
        S::U32(v) => S::U32(one!(kernels::int_unary, op, v)),
        S::U64(v) => S::U64(one!(kernels::int_unary, op, v)),
        S::F16(v) if op == UnaryOp::IsFinite => S::Pred(float::is_finite(v)),
        S::BF16(v) if op == UnaryOp::IsFinite => S::Pred(float::is_finite(v)),
        S::F32(v) if op == UnaryOp::IsFinite => S::Pred(float::is_finite(v)),
        S::F64(v) if op == UnaryOp::IsFinite => S::Pred(float::is_finite(v)),
        S::F16(v) => S::F16(one!(kernels::float_unary, op, v)),
        S::BF16(v) => S::BF16(one!(kernels::float_unary, op, v)),
        S::F32(v) => S::F32(one!(kernels::float_unary, op, v)),
        S::F64(v) => S::F64(one!(kernels::float_unary, op, v)),
        S::C64(v) if expected == ElementType::F32 => S::F32(one!(kernels::complex_to_part, op, v)),
        S::C128(v) if expected == ElementType::F64 => S::F64(one!(kernels::complex_to_part, op, v)),
        S::C64(v) => S::C64(one!(kernels::complex_unary, op, v)),
        S::C128(v) => S::C128(one!(kernels::complex_unary, op, v)),
    })
}

/// `op(a, b)` on one element.
pub fn binary_scalar(op: BinaryOp, a: Scalar, b: Scalar) -> Result<Scalar> {
    use Scalar as S;
    let ty = a.element_type();
    if b.element_type() != ty {
        return Err(Error::invalid_argument(format!(
            "{op} needs operands of one element type, got {} and {}",
            ty,
            b.element_type()
        )));
    }
    binary_result_type(op, ty)?;
    Ok(match (a, b) {
        (S::F32(x), S::F32(y)) if op == BinaryOp::Complex => S::C64(Complex32::new(x, y)),
        (S::F64(x), S::F64(y)) if op == BinaryOp::Complex => S::C128(Complex64::new(x, y)),
        (S::Pred(x), S::Pred(y)) => S::Pred(one!(kernels::pred_binary, op, x as u8, y as u8) != 0),
        (S::S8(x), S::S8(y)) => S::S8(one!(kernels::int_binary, op, x, y)),
        (S::S16(x), S::S16(y)) => S::S16(one!(kernels::int_binary, op, x, y)),
        (S::S32(x), S::S32(y)) => S::S32(one!(kernels::int_binary, op, x, y)),
        (S::S64(x), S::S64(y)) => S::S64(one!(kernels::int_binary, op, x, y)),
        (S::U8(x), S::U8(y)) => S::U8(one!(kernels::int_binary, op, x, y)),
        (S::U16(x), S::U16(y)) => S::U16(one!(kernels::int_binary, op, x, y)),
        (S::U32(x), S::U32(y)) => S::U32(one!(kernels::int_binary, op, x, y)),
        (S::U64(x), S::U64(y)) => S::U64(one!(kernels::int_binary, op, x, y)),
        (S::F16(x), S::F16(y)) => S::F16(one!(kernels::float_binary, op, x, y)),
        (S::BF16(x), S::BF16(y)) => S::BF16(one!(kernels::float_binary, op, x, y)),
        (S::F32(x), S::F32(y)) => S::F32(one!(kernels::float_binary, op, x, y)),
        (S::F64(x), S::F64(y)) => S::F64(one!(kernels::float_binary, op, x, y)),
        (S::C64(x), S::C64(y)) => S::C64(one!(kernels::complex_binary, op, x, y)),
        (S::C128(x), S::C128(y)) => S::C128(one!(kernels::complex_binary, op, x, y)),
        _ => {
            return Err(Error::internal(
                "binary_scalar: operand types checked above",
            ))
        }
    })
}

/// `compare` on one element.
pub fn compare_scalar(
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    a: Scalar,
    b: Scalar,
) -> Result<bool> {
    use Scalar as S;
    let ty = a.element_type();
    if b.element_type() != ty {
        return Err(Error::invalid_argument(format!(
            "compare needs operands of one element type, got {} and {}",
            ty,
            b.element_type()
        )));
    }
    let total = resolve_comparison(ty, compare_type)?;
    let mut o = [0u8];
    match (a, b) {
        (S::Pred(x), S::Pred(y)) => {
            kernels::compare_int(direction, &[x as u8], &[y as u8], &mut o)?
        }
        (S::S8(x), S::S8(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::S16(x), S::S16(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::S32(x), S::S32(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::S64(x), S::S64(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::U8(x), S::U8(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::U16(x), S::U16(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::U32(x), S::U32(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::U64(x), S::U64(y)) => kernels::compare_int(direction, &[x], &[y], &mut o)?,
        (S::F16(x), S::F16(y)) => kernels::compare_float(direction, total, &[x], &[y], &mut o)?,
        (S::BF16(x), S::BF16(y)) => kernels::compare_float(direction, total, &[x], &[y], &mut o)?,
        (S::F32(x), S::F32(y)) => kernels::compare_float(direction, total, &[x], &[y], &mut o)?,
        (S::F64(x), S::F64(y)) => kernels::compare_float(direction, total, &[x], &[y], &mut o)?,
        (S::C64(x), S::C64(y)) => kernels::compare_complex(direction, total, &[x], &[y], &mut o)?,
        (S::C128(x), S::C128(y)) => kernels::compare_complex(direction, total, &[x], &[y], &mut o)?,
        _ => {
            return Err(Error::internal(
                "compare_scalar: operand types checked above",
            ))
        }
    }
    Ok(o[0] != 0)
}

/// `convert` of one element.
pub fn convert_scalar(x: Scalar, to: ElementType) -> Scalar {
    use Scalar as S;
    let repr = match x {
        S::Pred(v) => Pred(v as u8).to_repr(),
        S::S8(v) => v.to_repr(),
        S::S16(v) => v.to_repr(),
        S::S32(v) => v.to_repr(),
        S::S64(v) => v.to_repr(),
        S::U8(v) => v.to_repr(),
        S::U16(v) => v.to_repr(),
        S::U32(v) => v.to_repr(),
        S::U64(v) => v.to_repr(),
        S::F16(v) => v.to_repr(),
        S::BF16(v) => v.to_repr(),
        S::F32(v) => v.to_repr(),
        S::F64(v) => v.to_repr(),
        S::C64(v) => v.to_repr(),
        S::C128(v) => v.to_repr(),
    };
    if x.element_type() == to {
        return x;
    }
    match to {
        ElementType::Pred => S::Pred(Pred::from_repr(repr).0 != 0),
        ElementType::S8 => S::S8(ConvertTarget::from_repr(repr)),
        ElementType::S16 => S::S16(ConvertTarget::from_repr(repr)),
        ElementType::S32 => S::S32(ConvertTarget::from_repr(repr)),
        ElementType::S64 => S::S64(ConvertTarget::from_repr(repr)),
        ElementType::U8 => S::U8(ConvertTarget::from_repr(repr)),
        ElementType::U16 => S::U16(ConvertTarget::from_repr(repr)),
        ElementType::U32 => S::U32(ConvertTarget::from_repr(repr)),
        ElementType::U64 => S::U64(ConvertTarget::from_repr(repr)),
        ElementType::F16 => S::F16(ConvertTarget::from_repr(repr)),
        ElementType::BF16 => S::BF16(ConvertTarget::from_repr(repr)),
        ElementType::F32 => S::F32(ConvertTarget::from_repr(repr)),
        ElementType::F64 => S::F64(ConvertTarget::from_repr(repr)),
        ElementType::C64 => S::C64(ConvertTarget::from_repr(repr)),
        ElementType::C128 => S::C128(ConvertTarget::from_repr(repr)),
        // A narrow result is its value in the wide type, as `Scalar` reads them.
        narrow => S::from_bytes(narrow, &[convert::narrow_from_repr(narrow, repr)]),
    }
}
