//! `sort` (variadic, any comparator) and `topk`.
//!
//! `sort` permutes every operand along `dimension` by one permutation, chosen
//! so that the comparator `less(lhs_0, rhs_0, lhs_1, rhs_1, ...)` orders the
//! elements. The sort is always stable (a valid result for `is_stable=false`
//! too; XLA CPU may order ties differently there, which only shows when the
//! tied elements differ in another operand). It is a merge sort written here rather than `slice::sort_by`, which
//! may panic when a comparator is not a strict weak order — a user's
//! comparator is input and must not crash the interpreter; with such a
//! comparator the order is whatever the merge produces (XLA calls it
//! implementation-defined).
//!
//! Speed: a comparator called per comparison costs a program run. Almost all
//! comparators compare one *key* per element: `compare(f(p_2k), f(p_2k+1))`
//! with the same expression `f` on both sides (`LT`/`GT` on the operand itself,
//! or JAX's float total-order comparator, which canonicalises NaN and -0 with
//! selects before comparing). That structure is recognised in the comparator's
//! HLO; `f` is compiled alone and evaluated once per element, and the keys are
//! compared directly. When the comparison is a total order on the key type
//! (integers; floats under `TOTALORDER`, or under `FLOAT` when the row has no
//! NaN, with -0 and +0 equal), keys become unsigned integers whose order is
//! that comparison, and `LT`/`GT` sort with the standard library's stable sort;
//! otherwise the merge sort compares keys with the shared `compare` semantics.
//!
//! `topk` returns the `k` largest (or smallest) elements of the last dimension
//! and their `s32` indices, ordered by XLA's total order (NaN above +inf, -0
//! below +0), ties broken by the lower index — the order XLA CPU produces.

use super::scalar::{ScalarProgram, Subcomputation};
use super::util::{self, invalid, operand_array, ordered_key};
use super::CallComputation;
use hlo_ir::analysis::sort_comparator::{key_comparison, KeyComparison};
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result, Scalar, Shape};
use hlo_ir::{CompId, ComparisonDirection, ComparisonType, Op};
use hlo_semantics as semantics;

/// A stable merge sort of `0..n` by `less`, which never panics whatever
/// `less` answers.
fn merge_sort(n: usize, mut less: impl FnMut(u32, u32) -> Result<bool>) -> Result<Vec<u32>> {
    const RUN: usize = 16;
    let mut a: Vec<u32> = (0..n as u32).collect();
    for start in (0..n).step_by(RUN) {
        let end = (start + RUN).min(n);
        for i in start + 1..end {
            let mut j = i;
            while j > start && less(a[j], a[j - 1])? {
                a.swap(j, j - 1);
                j -= 1;
            }
        }
    }
    let mut buf = vec![0u32; n];
    let mut width = RUN;
    while width < n {
        for start in (0..n).step_by(2 * width) {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (left, right) = (&a[start..mid], &a[mid..end]);
            let out = &mut buf[start..end];
            let (mut i, mut j, mut k) = (0, 0, 0);
            while i < left.len() && j < right.len() {
                if less(right[j], left[i])? {
                    out[k] = right[j];
                    j += 1;
                } else {
                    out[k] = left[i];
                    i += 1;
                }
                k += 1;
            }
            out[k..k + left.len() - i].copy_from_slice(&left[i..]);
            let k = k + left.len() - i;
            out[k..].copy_from_slice(&right[j..]);
        }
        std::mem::swap(&mut a, &mut buf);
        width *= 2;
    }
    Ok(a)
}

/// A comparator of the form `compare(f(p_k), f(p_k'))`.
struct KeyComparator {
    /// The operand whose elements the key is computed from.
    operand: usize,
    /// `f`, compiled with one parameter.
    key: ScalarProgram,
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    /// The left side reads the right-hand element (`compare(f(rhs), f(lhs))`).
    swapped: bool,
}

fn key_comparator(
    calls: &dyn CallComputation,
    id: CompId,
    num_operands: usize,
) -> Option<KeyComparator> {
    let KeyComparison {
        operand,
        key: a,
        key_parameter: pa,
        direction,
        compare_type,
        swapped,
    } = key_comparison(calls.computation(id), num_operands)?;
    let key = ScalarProgram::compile_expression(calls, id, a, pa)?;
    if key.output_types().len() != 1 {
        return None;
    }
    Some(KeyComparator {
        operand,
        key,
        direction,
        compare_type,
        swapped,
    })
}

/// Applies a comparison direction to two ordered keys.
fn compare_keys(direction: ComparisonDirection, a: u64, b: u64) -> bool {
    match direction {
        ComparisonDirection::Lt => a < b,
        ComparisonDirection::Gt => a > b,
        ComparisonDirection::Le => a <= b,
        ComparisonDirection::Ge => a >= b,
        ComparisonDirection::Eq => a == b,
        ComparisonDirection::Ne => a != b,
    }
}

/// Keys as unsigned integers whose order is the comparison's, if the
/// comparison is a total order on these keys.
fn ordered_keys(keys: &[Scalar], compare_type: Option<ComparisonType>) -> Option<Vec<u64>> {
    let ty = keys.first()?.element_type();
    let default_type = if ty.is_float() {
        ComparisonType::Float
    } else if ty.is_unsigned_int() || ty.is_pred() {
        ComparisonType::Unsigned
    } else if ty.is_signed_int() {
        ComparisonType::Signed
    } else {
        return None;
    };
    let ct = compare_type.unwrap_or(default_type);
    if ct != default_type && !(ty.is_float() && ct == ComparisonType::TotalOrder) {
        return None;
    }
    if ty.is_float() && ct == ComparisonType::Float {
        // IEEE order is total without NaN, once -0 and +0 compare equal.
        if keys.iter().any(|&k| util::is_nan(k)) {
            return None;
        }
        return keys
            .iter()
            .map(|&k| {
                ordered_key(if k.to_f64_lossy() == 0.0 {
                    Scalar::zero(ty)
                } else {
                    k
                })
            })
            .collect();
    }
    keys.iter().map(|&k| ordered_key(k)).collect()
}

/// Sorts `0..n` by `direction` on `keys` (a stable sort).
fn sort_by_keys(
    keys: &[Scalar],
    direction: ComparisonDirection,
    compare_type: Option<ComparisonType>,
    swapped: bool,
) -> Result<Vec<u32>> {
    let n = keys.len();
    if let Some(ordered) = ordered_keys(keys, compare_type) {
        let less_is_lt = matches!(
            (direction, swapped),
            (ComparisonDirection::Lt, false) | (ComparisonDirection::Gt, true)
        );
        let less_is_gt = matches!(
            (direction, swapped),
            (ComparisonDirection::Gt, false) | (ComparisonDirection::Lt, true)
        );
        if less_is_lt || less_is_gt {
            let mut pairs: Vec<(u64, u32)> = ordered.iter().copied().zip(0u32..).collect();
            if less_is_lt {
                pairs.sort_by_key(|&(k, _)| k);
            } else {
                pairs.sort_by_key(|&(k, _)| std::cmp::Reverse(k));
            }
            return Ok(pairs.into_iter().map(|(_, i)| i).collect());
        }
        return merge_sort(n, |i, j| {
            let (a, b) = if swapped { (j, i) } else { (i, j) };
            Ok(compare_keys(
                direction,
                ordered[a as usize],
                ordered[b as usize],
            ))
        });
    }
    merge_sort(n, |i, j| {
        let (a, b) = if swapped { (j, i) } else { (i, j) };
        semantics::compare_scalar(direction, compare_type, keys[a as usize], keys[b as usize])
    })
}

/// The `sort` kernel.
pub fn sort(
    instr: &HloInstruction,
    operands: &[&Literal],
    calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Sort {
        dimension,
        comparator,
        ..
    } = &instr.op
    else {
        return Err(invalid(instr, "not a sort"));
    };
    let n_ops = operands.len();
    if n_ops == 0 {
        return Err(invalid(instr, "expects at least one operand"));
    }
    let (_, first) = operand_array(instr, operands, 0)?;
    let dims = first.dims.clone();
    let dim = *dimension;
    if dim >= dims.len() {
        return Err(invalid(
            instr,
            format!(
                "sort dimension {dim} is beyond the rank of {}",
                operands[0].shape()
            ),
        ));
    }
    let mut types = Vec::with_capacity(n_ops);
    for i in 0..n_ops {
        let (lit, shape) = operand_array(instr, operands, i)?;
        if shape.dims != dims {
            return Err(invalid(
                instr,
                format!(
                    "operands {} and {} differ in shape",
                    operands[0].shape(),
                    lit.shape()
                ),
            ));
        }
        types.push(shape.element_type);
    }
    let out_shapes: Vec<ArrayShape> = if n_ops == 1 {
        vec![util::result_array(instr)?.clone()]
    } else {
        (0..n_ops)
            .map(|i| util::result_tuple_element(instr, i).cloned())
            .collect::<Result<_>>()?
    };
    for (i, s) in out_shapes.iter().enumerate() {
        if s.dims != dims || s.element_type != types[i] {
            return Err(invalid(
                instr,
                format!(
                    "result {i} has shape {s}, but operand {i} is {}",
                    operands[i].shape()
                ),
            ));
        }
    }
    let mut sub = Subcomputation::new(calls, *comparator);
    let param_types: Vec<ElementType> = types.iter().flat_map(|&t| [t, t]).collect();
    sub.check_params(&format!("comparator of %{}", instr.name), &param_types)
        .map_err(|e| invalid(instr, e.message()))?;
    let key_cmp = key_comparator(calls, *comparator, n_ops)
        .filter(|k| k.key.param_types() == [types[k.operand]]);

    let strides = util::strides_of(&dims);
    let len = dims[dim];
    if len > u32::MAX as usize {
        return Err(invalid(
            instr,
            format!("cannot sort {len} elements in one row (at most 2^32 - 1)"),
        ));
    }
    let stride = strides[dim];
    let mut outer = dims.clone();
    outer[dim] = 1;
    let mut bases = Vec::new();
    util::walk1(&outer, &strides, |b| bases.push(b));
    let sizes: Vec<usize> = types.iter().map(|t| t.byte_size()).collect();
    let bytes: Vec<&[u8]> = operands.iter().map(|l| l.bytes()).collect::<Result<_>>()?;
    let read = |op: usize, offset: usize| {
        let s = sizes[op];
        Scalar::from_bytes(types[op], &bytes[op][offset * s..offset * s + s])
    };
    let mut results: Vec<Literal> = out_shapes
        .iter()
        .map(|s| Literal::zeros(&Shape::Array(s.clone())))
        .collect();
    let mut key_frame = key_cmp.as_ref().map(|k| k.key.frame());
    let mut keys: Vec<Scalar> = Vec::with_capacity(len);
    let mut args = vec![Scalar::Pred(false); 2 * n_ops];
    for &base in &bases {
        let perm = match (&key_cmp, &mut key_frame) {
            (Some(kc), Some(frame)) => {
                keys.clear();
                for t in 0..len {
                    let x = read(kc.operand, base + t * stride);
                    keys.push(kc.key.run1(frame, &[x])?);
                }
                sort_by_keys(&keys, kc.direction, kc.compare_type, kc.swapped)
            }
            _ => merge_sort(len, |i, j| {
                for op in 0..n_ops {
                    args[2 * op] = read(op, base + i as usize * stride);
                    args[2 * op + 1] = read(op, base + j as usize * stride);
                }
                match sub.apply1(calls, &args)? {
                    Scalar::Pred(b) => Ok(b),
                    other => Err(invalid(
                        instr,
                        format!(
                            "comparator returned {} instead of pred",
                            other.element_type()
                        ),
                    )),
                }
            }),
        }
        .map_err(|e| e.context(format!("%{} (sort)", instr.name)))?;
        for (op, result) in results.iter_mut().enumerate() {
            let s = sizes[op];
            let out = result.bytes_mut()?;
            for (t, &p) in perm.iter().enumerate() {
                let (dst, src) = ((base + t * stride) * s, (base + p as usize * stride) * s);
                out[dst..dst + s].copy_from_slice(&bytes[op][src..src + s]);
            }
        }
    }
    Ok(if n_ops == 1 {
        results.swap_remove(0)
    } else {
        Literal::tuple(results)
    })
}

/// The `topk` kernel.
pub fn topk(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::TopK { k, largest } = &instr.op else {
        return Err(invalid(instr, "not a topk"));
    };
    let (k, largest) = (*k, *largest);
    if operands.len() != 1 {
        return Err(invalid(
            instr,
            format!("expects 1 operand, got {}", operands.len()),
        ));
    }
    let (input, shape) = operand_array(instr, operands, 0)?;
    let Some((&n, outer_dims)) = shape.dims.split_last() else {
        return Err(invalid(instr, "operand must have rank at least 1"));
    };
    if shape.element_type.is_complex() {
        return Err(invalid(
            instr,
            format!("cannot order {} values", shape.element_type),
        ));
    }
    let values_shape = util::result_tuple_element(instr, 0)?;
    let indices_shape = util::result_tuple_element(instr, 1)?;
    let mut want = outer_dims.to_vec();
    want.push(k);
    if k > n
        || values_shape.dims != want
        || indices_shape.dims != want
        || values_shape.element_type != shape.element_type
        || indices_shape.element_type != ElementType::S32
    {
        return Err(invalid(
            instr,
            format!(
                "result {} does not hold the top {k} of {} (k must be at most {n}; indices s32)",
                instr.shape,
                input.shape()
            ),
        ));
    }
    if n > i32::MAX as usize {
        return Err(invalid(
            instr,
            "the last dimension is too long for s32 indices",
        ));
    }
    let ty = shape.element_type;
    let size = ty.byte_size();
    let rows: usize = outer_dims.iter().product();
    let src = input.bytes()?;
    let mut values = Literal::zeros(&Shape::Array(values_shape.clone()));
    let mut indices = vec![0i32; rows * k];
    {
        let dst = values.bytes_mut()?;
        let mut pairs: Vec<(u64, u32)> = Vec::with_capacity(n);
        for row in 0..rows {
            pairs.clear();
            for t in 0..n {
                let off = (row * n + t) * size;
                let key = ordered_key(Scalar::from_bytes(ty, &src[off..off + size])).unwrap_or(0);
                pairs.push((key, t as u32));
            }
            if largest {
                pairs.sort_by_key(|&(key, _)| std::cmp::Reverse(key));
            } else {
                pairs.sort_by_key(|&(key, _)| key);
            }
            for (j, &(_, t)) in pairs.iter().take(k).enumerate() {
                let (d, s) = ((row * k + j) * size, (row * n + t as usize) * size);
                dst[d..d + size].copy_from_slice(&src[s..s + size]);
                indices[row * k + j] = t as i32;
            }
        }
    }
    Ok(Literal::tuple(vec![
        values,
        util::literal_from_values(indices_shape, &indices)?,
    ]))
}

#[cfg(test)]
mod tests {
    use super::*;
    use half::{bf16, f16};

    fn float_specials() -> Vec<Scalar> {
        let values = [
            0.0,
            -0.0,
            1.0,
            -1.0,
            2.5,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            -f64::NAN,
        ];
        let mut out = Vec::new();
        for &v in &values {
            out.push(Scalar::F32(v as f32));
        }
        let f64s: Vec<Scalar> = values.iter().map(|&v| Scalar::F64(v)).collect();
        let f16s: Vec<Scalar> = values
            .iter()
            .map(|&v| Scalar::F16(f16::from_f64(v)))
            .collect();
        let bf16s: Vec<Scalar> = values
            .iter()
            .map(|&v| Scalar::BF16(bf16::from_f64(v)))
            .collect();
        [out, f64s, f16s, bf16s].concat()
    }

    const DIRECTIONS: [ComparisonDirection; 6] = [
        ComparisonDirection::Lt,
        ComparisonDirection::Gt,
        ComparisonDirection::Le,
        ComparisonDirection::Ge,
        ComparisonDirection::Eq,
        ComparisonDirection::Ne,
    ];

    /// The ordered keys the key path sorts by answer every comparison exactly as
    /// the shared `compare` semantics do.
    #[test]
    fn ordered_keys_agree_with_compare_semantics() {
        let specials = float_specials();
        let ints = [
            Scalar::S32(-5),
            Scalar::S32(0),
            Scalar::S32(i32::MAX),
            Scalar::S32(i32::MIN),
            Scalar::U8(0),
            Scalar::U8(255),
            Scalar::S64(-1),
            Scalar::S64(3),
            Scalar::Pred(false),
            Scalar::Pred(true),
        ];
        let all: Vec<Scalar> = specials.iter().chain(ints.iter()).copied().collect();
        let mut checked = 0;
        for &a in &all {
            for &b in &all {
                if a.element_type() != b.element_type() {
                    continue;
                }
                let ty = a.element_type();
                let types: &[Option<ComparisonType>] = if ty.is_float() {
                    &[
                        None,
                        Some(ComparisonType::Float),
                        Some(ComparisonType::TotalOrder),
                    ]
                } else {
                    &[None]
                };
                for &ct in types {
                    let Some(keys) = ordered_keys(&[a, b], ct) else {
                        // Only FLOAT comparisons with a NaN have no ordered keys.
                        assert!(util::is_nan(a) || util::is_nan(b), "{a} {b} {ct:?}");
                        continue;
                    };
                    for &dir in &DIRECTIONS {
                        let want = semantics::compare_scalar(dir, ct, a, b).unwrap();
                        assert_eq!(
                            compare_keys(dir, keys[0], keys[1]),
                            want,
                            "{a} {dir} {b} ({ct:?})"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 1000);
    }

    #[test]
    fn merge_sort_is_stable_and_total() {
        let keys = [
            3, 1, 2, 1, 3, 0, 2, 1, 5, 4, 4, 0, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 1,
        ];
        let got = merge_sort(keys.len(), |i, j| Ok(keys[i as usize] < keys[j as usize])).unwrap();
        let mut want: Vec<u32> = (0..keys.len() as u32).collect();
        want.sort_by_key(|&i| keys[i as usize]);
        assert_eq!(got, want);
        assert!(merge_sort(0, |_, _| Ok(true)).unwrap().is_empty());
    }
}
