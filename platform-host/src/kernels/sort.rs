//! `sort` (variadic, stable, any comparator) and top-k (`topk` and the `TopK`
//! custom call XLA's CPU pipeline emits).
//!
//! Sorting a line computes a permutation of its positions and applies it to
//! every operand. How the permutation is found depends on the comparator:
//!
//! * **key comparators**: when the comparator is `compare(f(lhs), f(rhs))` with
//!   direction LT or GT and the same expression `f` of one operand on both
//!   sides (what JAX emits: often `f` canonicalizes NaN and -0 first), the keys
//!   `f(x)` are computed for the whole operand at once with the vectorized
//!   evaluator ([`ScalarProgram::eval_batch`]). Integer keys and float keys
//!   under TOTALORDER become order-preserving unsigned integers and are sorted
//!   with a stable radix sort (long lines) or by (key, position) (short ones).
//! * **any other comparator**: a stable merge sort calling the comparator
//!   through the scalar evaluator. The merge sort tolerates comparators that
//!   are not strict weak orders (NaN under a partial float order): the order it
//!   produces is then unspecified, as in XLA, but it always finishes.

use super::scalar_program::ScalarProgram;
use super::types::Float;
use crate::lowering::LowerCtx;
use crate::thunk::{thunk, BufferSlice, Thunk};
use platform_api::hlo::analysis::sort_comparator::module_key_comparison;
use platform_api::hlo::{CompId, ComparisonDirection, ComparisonType, InstrId, Op};
use platform_api::{ElementType, Error, HloModule, Result};
use std::sync::Arc;

/// Lines at least this long use the radix sort.
const RADIX_MIN: usize = 4096;

/// A comparator recognised as a key comparison.
struct KeyComparator {
    /// The operand whose values the key is computed from.
    operand: usize,
    /// The key expression as a program of one element of that operand.
    key: ScalarProgram,
    key_type: ElementType,
    descending: bool,
    total_order: bool,
}

/// The comparator as a key comparison (the shared analysis), with the key
/// expression compiled on its own.
fn key_comparator(module: &HloModule, comp_id: CompId, n_ops: usize) -> Option<KeyComparator> {
    let comparison = module_key_comparison(module, comp_id, n_ops)?;
    // `compare(f(rhs), f(lhs))` orders the other way round.
    let descending = match comparison.direction {
        ComparisonDirection::Lt => comparison.swapped,
        ComparisonDirection::Gt => !comparison.swapped,
        _ => return None,
    };
    let key = ScalarProgram::compile_expression(
        module,
        comp_id,
        comparison.key,
        comparison.key_parameter,
    )
    .ok()?;
    let &[key_type] = key.output_types().as_slice() else {
        return None;
    };
    if key.param_count() != 1 {
        return None;
    }
    let total_order =
        comparison.compare_type == Some(ComparisonType::TotalOrder) || !key_type.is_float();
    Some(KeyComparator {
        operand: comparison.operand,
        key,
        key_type,
        descending,
        total_order,
    })
}

/// Turns keys into unsigned integers whose order is the comparison's order
/// (ascending), widened to u64. With `partial` (a plain float comparison), -0
/// and +0 are made equal, and NaN, which has no place in that order, makes the
/// keys unusable (`None`).
fn sortable_keys(ty: ElementType, raw: &[u8], descending: bool, partial: bool) -> Option<Vec<u64>> {
    if partial && ty.is_float() {
        let canonical = canonical_float_keys(ty, raw)?;
        return sortable_keys(ty, &canonical, descending, false);
    }
    fn map<T: bytemuck::Pod>(raw: &[u8], f: impl Fn(T) -> u64) -> Vec<u64> {
        bytemuck::pod_collect_to_vec::<u8, T>(raw)
            .into_iter()
            .map(f)
            .collect()
    }
    let mut keys = match ty {
        ElementType::S8 => map::<i8>(raw, |v| flip_signed(v as i64, 8)),
        ElementType::S16 => map::<i16>(raw, |v| flip_signed(v as i64, 16)),
        ElementType::S32 => map::<i32>(raw, |v| flip_signed(v as i64, 32)),
        ElementType::S64 => map::<i64>(raw, |v| flip_signed(v, 64)),
        ElementType::U8 | ElementType::Pred => map::<u8>(raw, |v| v as u64),
        ElementType::U16 => map::<u16>(raw, |v| v as u64),
        ElementType::U32 => map::<u32>(raw, |v| v as u64),
        ElementType::U64 => map::<u64>(raw, |v| v),
        ElementType::F16 => map::<half::f16>(raw, |v| flip_signed(v.total_order_key(), 16)),
        ElementType::BF16 => map::<half::bf16>(raw, |v| flip_signed(v.total_order_key(), 16)),
        ElementType::F32 => map::<f32>(raw, f32_key),
        ElementType::F64 => map::<f64>(raw, |v| flip_signed(v.total_order_key(), 64)),
        _ => return None,
    };
    if descending {
        for k in &mut keys {
            *k = !*k;
        }
    }
    Some(keys)
}

/// Float keys with -0 replaced by +0, or `None` if any is NaN.
fn canonical_float_keys(ty: ElementType, raw: &[u8]) -> Option<Vec<u8>> {
    fn go<T: Float>(raw: &[u8]) -> Option<Vec<u8>> {
        let mut v = bytemuck::pod_collect_to_vec::<u8, T>(raw);
        for x in &mut v {
            if x.is_nan() {
                return None;
            }
            if x.is_zero() {
                *x = T::positive_zero();
            }
        }
        Some(bytemuck::cast_slice(&v).to_vec())
    }
    match ty {
        ElementType::F16 => go::<half::f16>(raw),
        ElementType::BF16 => go::<half::bf16>(raw),
        ElementType::F32 => go::<f32>(raw),
        ElementType::F64 => go::<f64>(raw),
        _ => Some(raw.to_vec()),
    }
}

/// Stable ascending order of `keys` (a permutation of positions).
fn order_by_keys(keys: &[u64]) -> Vec<u32> {
    let n = keys.len();
    if n < RADIX_MIN {
        let mut idx: Vec<u32> = (0..n as u32).collect();
        idx.sort_unstable_by_key(|&i| (keys[i as usize], i));
        return idx;
    }
    // Only the bits that differ between keys need sorting: subtract the
    // smallest key and count the bits of the largest difference.
    let min = keys.iter().copied().min().unwrap_or(0);
    let span = keys.iter().fold(0u64, |a, &k| a | (k - min));
    let bits = 64 - span.leading_zeros();
    if bits <= 32 {
        let pairs: Vec<(u32, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| ((k - min) as u32, i as u32))
            .collect();
        radix_pairs(pairs, bits, |k| k as u64)
    } else {
        let pairs: Vec<(u64, u32)> = keys
            .iter()
            .enumerate()
            .map(|(i, &k)| (k - min, i as u32))
            .collect();
        radix_pairs(pairs, bits, |k| k)
    }
}

/// LSD radix sort of (key, position) pairs on 11-bit digits, moving the pairs
/// themselves (sequential reads); histograms of every digit are taken in one
/// pass up front. Stable; returns the positions in order.
fn radix_pairs<K: Copy + Default>(
    mut pairs: Vec<(K, u32)>,
    bits: u32,
    wide: impl Fn(K) -> u64,
) -> Vec<u32> {
    const DIGIT: u32 = 11;
    const BUCKETS: usize = 1 << DIGIT;
    let passes = bits.div_ceil(DIGIT) as usize;
    let mut hist = vec![[0usize; BUCKETS]; passes];
    for &(k, _) in &pairs {
        let k = wide(k);
        for (p, h) in hist.iter_mut().enumerate() {
            h[((k >> (p as u32 * DIGIT)) as usize) & (BUCKETS - 1)] += 1;
        }
    }
    let mut tmp = vec![(K::default(), 0u32); pairs.len()];
    for (p, h) in hist.iter().enumerate() {
        if h.contains(&pairs.len()) {
            continue; // every key has the same digit here
        }
        let mut offsets = [0usize; BUCKETS];
        let mut total = 0;
        for (o, &c) in offsets.iter_mut().zip(h.iter()) {
            *o = total;
            total += c;
        }
        let shift = p as u32 * DIGIT;
        for &pair in &pairs {
            let d = ((wide(pair.0) >> shift) as usize) & (BUCKETS - 1);
            tmp[offsets[d]] = pair;
            offsets[d] += 1;
        }
        std::mem::swap(&mut pairs, &mut tmp);
    }
    pairs.into_iter().map(|(_, i)| i).collect()
}

/// `dst[base_out + j*stride_out] = src[base_in + order[j]*stride_in]` for
/// elements of `w` bytes.
///
/// # Safety
/// Every position reached must be inside `src` and `dst`, which must not
/// overlap.
#[allow(clippy::too_many_arguments)]
unsafe fn permute_line(
    src: usize,
    dst: usize,
    w: usize,
    order: &[u32],
    base_in: usize,
    stride_in: usize,
    base_out: usize,
    stride_out: usize,
) {
    crate::with_width!(w, W => {
        let (s, d) = (src as *const W, dst as *mut W);
        for (j, &o) in order.iter().enumerate() {
            // SAFETY: the caller's contract.
            unsafe {
                d.add(base_out + j * stride_out)
                    .write(s.add(base_in + o as usize * stride_in).read())
            };
        }
    }, _ => {
        for (j, &o) in order.iter().enumerate() {
            // SAFETY: as above.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    (src + (base_in + o as usize * stride_in) * w) as *const u8,
                    (dst + (base_out + j * stride_out) * w) as *mut u8,
                    w,
                )
            };
        }
    });
}

/// Stable merge sort of `0..n` by `less`; finishes whatever `less` does.
fn merge_sort(n: usize, mut less: impl FnMut(u32, u32) -> bool) -> Vec<u32> {
    let mut a: Vec<u32> = (0..n as u32).collect();
    let mut b = vec![0u32; n];
    let mut width = 1;
    while width < n {
        let mut start = 0;
        while start < n {
            let mid = (start + width).min(n);
            let end = (start + 2 * width).min(n);
            let (mut i, mut j, mut k) = (start, mid, start);
            while i < mid && j < end {
                // Take from the right only when strictly less: stability.
                if less(a[j], a[i]) {
                    b[k] = a[j];
                    j += 1;
                } else {
                    b[k] = a[i];
                    i += 1;
                }
                k += 1;
            }
            b[k..k + (mid - i)].copy_from_slice(&a[i..mid]);
            k += mid - i;
            b[k..k + (end - j)].copy_from_slice(&a[j..end]);
            start = end;
        }
        std::mem::swap(&mut a, &mut b);
        width *= 2;
    }
    a
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::Sort {
            dimension,
            comparator,
            ..
        } => sort(ctx, id, *dimension, *comparator),
        Op::TopK { k, largest } => top_k(ctx, id, *k, *largest),
        Op::CustomCall(attrs) if attrs.target == "TopK" => {
            let k = instr
                .shape
                .tuple_shapes()
                .first()
                .and_then(|s| s.dims().last().copied())
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "TopK custom call %{} must return (values, indices)",
                        instr.name
                    ))
                })?;
            top_k(ctx, id, k, true)
        }
        _ => Err(Error::internal("not a sort")),
    }
}

fn sort(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    dimension: usize,
    comparator: CompId,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let n_ops = instr.operands.len();
    let first = ctx.operand_array(instr, 0)?;
    if dimension >= first.rank().max(1) {
        return Err(Error::invalid_argument(format!(
            "sort %{}: dimension {dimension} out of range for {first}",
            instr.name
        )));
    }
    let dims = first.dims.clone();
    let mut inputs = Vec::new();
    let mut widths = Vec::new();
    for k in 0..n_ops {
        let a = ctx.operand_array(instr, k)?;
        if a.dims != dims {
            return Err(Error::invalid_argument(format!(
                "sort %{}: operands differ in dimensions",
                instr.name
            )));
        }
        inputs.push(ctx.operand_slice(instr, k)?);
        widths.push(a.element_type.byte_size());
    }
    let outputs: Vec<BufferSlice> = ctx.result_leaves(id).to_vec();
    if outputs.len() != n_ops {
        return Err(Error::invalid_argument(format!(
            "sort %{}: result {} should have {n_ops} arrays",
            instr.name, instr.shape
        )));
    }
    let program = Arc::new(ScalarProgram::compile(ctx.module, comparator)?);
    if program.param_count() != 2 * n_ops || program.output_types() != [ElementType::Pred] {
        return Err(Error::invalid_argument(format!(
            "sort %{}: the comparator must take {} scalars and return pred",
            instr.name,
            2 * n_ops
        )));
    }
    let key = key_comparator(ctx.module, comparator, n_ops);
    let n = dims.get(dimension).copied().unwrap_or(1);
    let inner: usize = dims.iter().skip(dimension + 1).product();
    let outer: usize = dims.iter().take(dimension).product();
    let total = first.element_count();
    Ok(thunk(instr.name.clone(), "sort", move |ctx| {
        let ins: Vec<usize> = inputs.iter().map(|s| ctx.ptr(*s) as usize).collect();
        let outs: Vec<usize> = outputs.iter().map(|s| ctx.ptr(*s) as usize).collect();
        // Keys for the whole operand, when the comparator is a key comparison.
        let keys: Option<Vec<u64>> = match &key {
            Some(k) => {
                let params = [ins[k.operand] as *const u8];
                let mut raw = vec![0u8; total * k.key_type.byte_size()];
                // SAFETY: the key operand holds `total` elements; `raw` has room
                // for as many keys.
                unsafe { k.key.eval_batch(&params, total, 0, raw.as_mut_ptr()) };
                sortable_keys(k.key_type, &raw, k.descending, !k.total_order)
            }
            None => None,
        };
        let lines = outer * inner;
        crate::runtime::pool::parallel_for(lines, (1 << 14) / n.max(1) + 1, |s, e| {
            let mut ev = program.evaluator();
            let mut staged: Vec<u8> = Vec::new();
            for line in s..e {
                let (o, i) = (line / inner.max(1), line % inner.max(1));
                let pos = |j: usize| (o * n + j) * inner + i;
                let order: Vec<u32> = match &keys {
                    Some(keys) => {
                        let line_keys: Vec<u64> = (0..n).map(|j| keys[pos(j)]).collect();
                        order_by_keys(&line_keys)
                    }
                    None => {
                        merge_sort(n, |a, b| {
                            let (pa, pb) = (pos(a as usize), pos(b as usize));
                            for k in 0..n_ops {
                                // SAFETY: both positions are inside operand `k`.
                                unsafe {
                                    ev.set_param(2 * k, (ins[k] + pa * widths[k]) as *const u8);
                                    ev.set_param(2 * k + 1, (ins[k] + pb * widths[k]) as *const u8);
                                }
                            }
                            ev.run();
                            ev.output_bool(0)
                        })
                    }
                };
                for k in 0..n_ops {
                    let base = o * n * inner + i;
                    // Sorting in place (buffer assignment put the result over
                    // the operand): the line is staged first, as the
                    // permutation reads positions it has already written.
                    let (src, base_in, stride_in) = if ins[k] == outs[k] {
                        staged.clear();
                        staged.resize(n * widths[k], 0);
                        let w = widths[k];
                        for (j, slot) in staged.chunks_exact_mut(w).enumerate() {
                            // SAFETY: position `j` of this line in operand `k`.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    (ins[k] + (base + j * inner) * w) as *const u8,
                                    slot.as_mut_ptr(),
                                    w,
                                )
                            };
                        }
                        (staged.as_ptr() as usize, 0, 1)
                    } else {
                        (ins[k], base, inner)
                    };
                    // SAFETY: positions of this line in operand and result
                    // `k`; lines are disjoint.
                    unsafe {
                        permute_line(
                            src, outs[k], widths[k], &order, base_in, stride_in, base, inner,
                        )
                    };
                }
            }
        });
        Ok(())
    }))
}

/// Up to this `k`, top-k keeps a sorted buffer of the best `k` while it
/// reads the row once: past the first few elements almost every one fails
/// the single comparison with the buffer's worst, so the row costs one read
/// and one compare per element instead of a selection over an index array.
const STREAMING_TOP_K: usize = 64;

/// A signed `bits`-wide key as an unsigned one of the same order.
#[inline(always)]
fn flip_signed(v: i64, bits: u32) -> u64 {
    (v as u64 ^ (1u64 << (bits - 1))) & (u64::MAX >> (64 - bits))
}

/// [`sortable_keys`]' key of one f32 (ascending total order).
#[inline(always)]
fn f32_key(v: f32) -> u64 {
    flip_signed(v.total_order_key(), 32)
}

/// The positions of the `k` smallest `keys`, smallest first, ties by position.
fn top_k_of_keys(keys: &[u64], k: usize) -> Vec<u32> {
    let n = keys.len();
    if k <= STREAMING_TOP_K {
        return streaming_top_k(keys.iter().copied(), k);
    }
    let mut order: Vec<u32> = (0..n as u32).collect();
    let cmp = |a: &u32, b: &u32| (keys[*a as usize], *a).cmp(&(keys[*b as usize], *b));
    if k < n && k > 0 {
        order.select_nth_unstable_by(k - 1, cmp);
    }
    order.truncate(k);
    order.sort_unstable_by(cmp);
    order
}

/// The positions of the `k` smallest keys, smallest first, ties by position.
fn streaming_top_k(keys: impl IntoIterator<Item = u64>, k: usize) -> Vec<u32> {
    let mut best: Vec<(u64, u32)> = Vec::with_capacity(k + 1);
    if k == 0 {
        return Vec::new();
    }
    for (i, key) in keys.into_iter().enumerate() {
        // Every kept element came earlier, so an equal key loses its tie.
        if best.len() == k && key >= best[k - 1].0 {
            continue;
        }
        let at = best.partition_point(|&(b, _)| b <= key);
        best.insert(at, (key, i as u32));
        best.truncate(k);
    }
    best.into_iter().map(|(_, i)| i).collect()
}

fn top_k(ctx: &LowerCtx<'_>, id: InstrId, k: usize, largest: bool) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let bad = |why: String| Error::invalid_argument(format!("top-k %{}: {why}", instr.name));
    let n = *operand
        .dims
        .last()
        .ok_or_else(|| bad("operand must have rank >= 1".into()))?;
    if k > n {
        return Err(bad(format!("k = {k} exceeds the last dimension {n}")));
    }
    let leaves = ctx.result_leaves(id).to_vec();
    let shapes = instr.shape.leaves();
    if leaves.len() != 2
        || shapes[1].1.element_type != ElementType::S32
        || shapes[0].1.element_type != operand.element_type
    {
        return Err(bad(format!(
            "result {} must be (values, s32 indices)",
            instr.shape
        )));
    }
    let rows = operand.element_count() / n.max(1);
    let ty = operand.element_type;
    if sortable_keys(ty, &[], false, false).is_none() {
        return Err(Error::unimplemented(format!(
            "top-k %{} of {ty} elements",
            instr.name
        )));
    }
    let width = ty.byte_size();
    let input = ctx.operand_slice(instr, 0)?;
    let (values, indices) = (leaves[0], leaves[1]);
    Ok(thunk(instr.name.clone(), "topk", move |ctx| {
        let (x, v, ix) = (
            ctx.ptr(input) as usize,
            ctx.ptr(values) as usize,
            ctx.ptr(indices) as usize,
        );
        crate::runtime::pool::parallel_for(rows, (1 << 14) / n.max(1) + 1, |s, e| {
            for r in s..e {
                // SAFETY: row `r` of the operand.
                let raw = unsafe {
                    std::slice::from_raw_parts((x + r * n * width) as *const u8, n * width)
                };
                // f32 rows stream straight from the buffer, with no key array.
                let direct = match (ty, bytemuck::try_cast_slice::<u8, f32>(raw)) {
                    (ElementType::F32, Ok(xs)) if k <= STREAMING_TOP_K => {
                        let flip = if largest { u64::MAX } else { 0 };
                        Some(streaming_top_k(xs.iter().map(|v| f32_key(*v) ^ flip), k))
                    }
                    _ => None,
                };
                let order = if let Some(order) = direct {
                    order
                } else {
                    let Some(keys) = sortable_keys(ty, raw, largest, false) else {
                        continue;
                    };
                    top_k_of_keys(&keys, k)
                };

                for (j, &src) in order.iter().enumerate() {
                    // SAFETY: row `r` of both results has k slots.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            (x + (r * n + src as usize) * width) as *const u8,
                            (v + (r * k + j) * width) as *mut u8,
                            width,
                        );
                        ((ix + (r * k + j) * 4) as *mut i32).write(src as i32);
                    }
                }
            }
        });
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_top_k_matches_a_full_sort() {
        let mut state = 12345u64;
        for n in [1usize, 2, 7, 100, 1000] {
            // Few distinct keys, so ties are common.
            let keys: Vec<u64> = (0..n)
                .map(|_| {
                    state = state
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    (state >> 33) % 13
                })
                .collect();
            let mut order: Vec<u32> = (0..n as u32).collect();
            order.sort_by_key(|&i| (keys[i as usize], i));
            for k in [0usize, 1, 3, 8, n.min(64)] {
                let k = k.min(n);
                assert_eq!(
                    streaming_top_k(keys.iter().copied(), k),
                    order[..k],
                    "n={n} k={k}"
                );
                assert_eq!(top_k_of_keys(&keys, k), order[..k], "n={n} k={k}");
            }
        }
    }

    #[test]
    fn radix_and_merge_sorts_are_stable() {
        let keys: Vec<u64> = (0..10_000u64).map(|i| (i * 7919) % 97).collect();
        let order = order_by_keys(&keys);
        for w in order.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            assert!(keys[a] < keys[b] || (keys[a] == keys[b] && a < b));
        }
        let order = merge_sort(keys.len(), |a, b| keys[a as usize] < keys[b as usize]);
        for w in order.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            assert!(keys[a] < keys[b] || (keys[a] == keys[b] && a < b));
        }
        // An inconsistent comparator still yields a permutation.
        let order = merge_sort(100, |a, b| (a * 31 + b) % 3 == 0);
        let mut seen = order.clone();
        seen.sort_unstable();
        assert_eq!(seen, (0..100).collect::<Vec<u32>>());
    }

    #[test]
    fn float_keys_follow_total_order() {
        let xs = [1.5f32, -0.0, 0.0, f32::NEG_INFINITY, -2.0];
        let keys =
            sortable_keys(ElementType::F32, bytemuck::cast_slice(&xs), false, false).unwrap();
        let order = order_by_keys(&keys);
        assert_eq!(order, [3, 4, 1, 2, 0]);
        let keys = sortable_keys(
            ElementType::S32,
            bytemuck::cast_slice(&[3i32, -5, 0]),
            true,
            false,
        )
        .unwrap();
        assert_eq!(order_by_keys(&keys), [0, 2, 1]);
        // A plain float comparison treats -0 and +0 as equal and refuses NaN.
        let keys = sortable_keys(
            ElementType::F32,
            bytemuck::cast_slice(&[0.0f32, -0.0]),
            false,
            true,
        )
        .unwrap();
        assert_eq!(order_by_keys(&keys), [0, 1]);
        assert!(sortable_keys(
            ElementType::F32,
            bytemuck::cast_slice(&[f32::NAN]),
            false,
            true
        )
        .is_none());
    }
}
