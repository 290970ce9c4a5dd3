//! `argmax`/`argmin` reductions as one typed loop.
//!
//! JAX lowers `jnp.argmax` to a variadic `reduce` of `(values, iota)` whose
//! reducer keeps the accumulator when it compares greater (or less) than the
//! element, when it is NaN, or when it ties with a lower index. Run through
//! the scalar evaluator that costs a dozen dispatched ops per element; as a
//! loop it is a compare and two selects.
//!
//! The reducer is recognised by what it computes, not by how it is written: a
//! reducer made only of comparisons and boolean/select ops on its parameters
//! (no constants, no arithmetic) can only depend on how its four inputs
//! order, so running it on every ordering of a set of probe values (with
//! NaN, infinities and both zeros) and seeing it agree with [`keeps_first`]
//! establishes that it is that function.

use super::scalar_program::ScalarProgram;
use platform_api::hlo::{CompId, Op};
use platform_api::{ElementType, HloModule};

/// Which of the accumulator `(a, ai)` and the element `(b, bi)` the reducer
/// keeps, as `(value from a, index from a)`. With `greater` the accumulator's
/// value stays when `a > b` or `a` is NaN, and its index stays then too or
/// when `a == b` and `ai < bi` (on such a tie the value is `b`'s, which differs
/// from `a` only in the sign of a zero); otherwise (argmin) with `a < b`.
#[inline(always)]
pub fn keeps_first<T: PartialOrd + Copy>(
    greater: bool,
    a: T,
    ai: i64,
    b: T,
    bi: i64,
) -> (bool, bool) {
    #[allow(clippy::eq_op)]
    let nan = a != a;
    let wins = if greater { a > b } else { a < b };
    let value = wins || nan;
    (value, value || (a == b && ai < bi))
}

/// If `comp` is an argmax (`Some(true)`) or argmin (`Some(false)`) reducer
/// over values of `value` type and indices of `index` type.
pub fn recognize(
    module: &HloModule,
    comp: CompId,
    value: ElementType,
    index: ElementType,
) -> Option<bool> {
    if !matches!(value, ElementType::F32 | ElementType::F64)
        || !matches!(index, ElementType::S32 | ElementType::S64)
    {
        return None;
    }
    let computation = module.computations.get(comp.index())?;
    let only_order_ops = computation.instructions.iter().all(|i| {
        matches!(
            i.op,
            Op::Parameter { .. }
                | Op::Compare { .. }
                | Op::Select
                | Op::Tuple
                | Op::Binary(
                    platform_api::hlo::BinaryOp::And
                        | platform_api::hlo::BinaryOp::Or
                        | platform_api::hlo::BinaryOp::Xor
                )
                | Op::Unary(platform_api::hlo::UnaryOp::Not)
        ) && !matches!(
            i.op,
            Op::Compare {
                compare_type: Some(_),
                ..
            }
        )
    });
    if !only_order_ops {
        return None;
    }
    let program = ScalarProgram::compile(module, comp).ok()?;
    if program.param_types() != [value, index, value, index]
        || program.output_types() != [value, index]
    {
        return None;
    }
    [true, false]
        .into_iter()
        .find(|&greater| agrees(&program, value, index, greater))
}

/// Whether `program` computes the argmax (`greater`) or argmin reducer on
/// every combination of the probe values.
fn agrees(program: &ScalarProgram, value: ElementType, index: ElementType, greater: bool) -> bool {
    const VALUES: [f64; 7] = [
        f64::NEG_INFINITY,
        -1.5,
        -0.0,
        0.0,
        2.0,
        f64::INFINITY,
        f64::NAN,
    ];
    const INDICES: [i64; 3] = [0, 1, 2];
    let mut ev = program.evaluator();
    let bytes_of = |v: f64| -> Vec<u8> {
        match value {
            ElementType::F32 => (v as f32).to_le_bytes().to_vec(),
            _ => v.to_le_bytes().to_vec(),
        }
    };
    let index_bytes = |i: i64| -> Vec<u8> {
        match index {
            ElementType::S32 => (i as i32).to_le_bytes().to_vec(),
            _ => i.to_le_bytes().to_vec(),
        }
    };
    for &a in &VALUES {
        for &b in &VALUES {
            for &ai in &INDICES {
                for &bi in &INDICES {
                    let (va, vb) = (bytes_of(a), bytes_of(b));
                    let (ia, ib) = (index_bytes(ai), index_bytes(bi));
                    // SAFETY: each buffer holds one element of the parameter's type.
                    unsafe {
                        ev.set_param(0, va.as_ptr());
                        ev.set_param(1, ia.as_ptr());
                        ev.set_param(2, vb.as_ptr());
                        ev.set_param(3, ib.as_ptr());
                    }
                    ev.run();
                    let (keep_v, keep_i) = keeps_first(greater, a, ai, b, bi);
                    let want_v = if keep_v { &va } else { &vb };
                    let want_i = if keep_i { &ia } else { &ib };
                    let mut got_v = vec![0u8; va.len()];
                    let mut got_i = vec![0u8; ia.len()];
                    // SAFETY: the buffers have the outputs' widths.
                    unsafe {
                        ev.write_output(0, got_v.as_mut_ptr());
                        ev.write_output(1, got_i.as_mut_ptr());
                    }
                    if &got_v != want_v || &got_i != want_i {
                        return false;
                    }
                }
            }
        }
    }
    true
}

/// Folds one row of values and indices into `(best, index)`, in order.
#[inline]
pub fn fold_row<T: PartialOrd + Copy, I: Copy + Into<i64>>(
    greater: bool,
    mut best: T,
    mut best_i: I,
    values: &[T],
    indices: &[I],
) -> (T, I) {
    for (&v, &i) in values.iter().zip(indices) {
        let (keep_v, keep_i) = keeps_first(greater, best, best_i.into(), v, i.into());
        if !keep_i {
            best_i = i;
        }
        if !keep_v {
            best = v;
        }
    }
    (best, best_i)
}

/// [`fold_row`] where each element's index is its position in the row.
#[inline]
pub fn fold_row_positions<T: PartialOrd + Copy, I: Copy + Into<i64> + TryFrom<i64>>(
    greater: bool,
    best: T,
    best_i: I,
    values: &[T],
) -> (T, I) {
    let (mut best, mut index) = (best, best_i.into());
    for (j, &v) in values.iter().enumerate() {
        let (keep_v, keep_i) = keeps_first(greater, best, index, v, j as i64);
        if !keep_i {
            index = j as i64;
        }
        if !keep_v {
            best = v;
        }
    }
    (best, I::try_from(index).unwrap_or(best_i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reducer(direction: &str, tie: &str) -> HloModule {
        let text = format!(
            "HloModule m
r {{
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  win = pred[] compare(a, b), direction={direction}
  nan = pred[] compare(a, a), direction=NE
  keep = pred[] or(win, nan)
  v = f32[] select(keep, a, b)
  eq = pred[] compare(a, b), direction=EQ
  lower = pred[] compare(ai, bi), direction={tie}
  tie = pred[] and(eq, lower)
  keep_i = pred[] or(keep, tie)
  i = s32[] select(keep_i, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}}
ENTRY e {{
  x = f32[4] parameter(0)
  ROOT y = f32[4] negate(x)
}}
"
        );
        HloModule::parse(&text).unwrap()
    }

    #[test]
    fn jax_argmax_and_argmin_reducers_are_recognised_and_others_not() {
        let (f32_, s32_) = (ElementType::F32, ElementType::S32);
        assert_eq!(
            recognize(&reducer("GT", "LT"), CompId(0), f32_, s32_),
            Some(true)
        );
        assert_eq!(
            recognize(&reducer("LT", "LT"), CompId(0), f32_, s32_),
            Some(false)
        );
        // Ties to the higher index: a different function, left to the evaluator.
        assert_eq!(recognize(&reducer("GT", "GT"), CompId(0), f32_, s32_), None);
        // GE keeps the accumulator on ties whatever the index.
        assert_eq!(recognize(&reducer("GE", "LT"), CompId(0), f32_, s32_), None);
    }
}
