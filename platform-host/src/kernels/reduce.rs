//! `reduce`, variadic, over any set of dimensions.
//!
//! The operand's dimensions are first grouped: neighbours of the same kind
//! (kept or reduced) merge, size-1 dimensions drop out, so every reduction is a
//! walk over a few (size, stride) groups. Two shapes of walk cover everything:
//!
//! * **inner**: the innermost group is reduced. Each output element folds
//!   contiguous runs; the fold keeps 16 partial accumulators so float sums
//!   vectorize (XLA likewise reassociates reductions). A reduction to a single
//!   value of a large array splits the run over the compute pool and combines
//!   the partial results. Reduced groups outside a kept one are walked
//!   outermost, each output's accumulator kept across them, so the input
//!   streams in order while every output folds its runs in the same order.
//! * **outer**: the innermost group is kept. A row of accumulators (one per
//!   output element of that group) is updated with each contiguous input row,
//!   which streams the input once.
//!
//! Reducers that are a single `add`/`multiply`/`maximum`/`minimum`/`and`/`or`/
//! `xor` of the two parameters run as typed loops (a float `maximum` or
//! `minimum` first by plain comparisons, taken when no NaN or zero makes its
//! answer differ from XLA's: see `extreme_unsafe`); any other reducer (variadic
//! argmax, ...) runs through the [`ScalarProgram`] evaluator in the same walk,
//! up to 64 outputs at a time in its lanes, so the evaluator's per-op dispatch
//! is paid once per 64 elements; every output still folds its elements in
//! order.

use super::argminmax;
use super::scalar_program::{binary_reducer, load_register, Register, ScalarProgram};
use super::strided::unflatten;
use crate::elementwise_ops::{typed_combiner, CombinerVisitor};
use crate::lowering::LowerCtx;
use crate::runtime::pool::{compute_pool, map_tasks, parallel_for};
use crate::thunk::{thunk, BufferSlice, ExecuteContext, Thunk};
use platform_api::hlo::{BinaryOp, InstrId, Op};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

/// Elements per parallel task.
const REDUCE_GRAIN: usize = 1 << 15;

/// Input rows a column reduction folds per call of [`accumulate_at`].
const OFFSET_BATCH: usize = 256;

/// Outputs the general path computes at once (see [`ScalarProgram::lane_evaluator`]).
const LANES: usize = 64;

/// The operand's dimensions grouped for the walk.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReduceLayout {
    /// Kept groups, outermost first: (size, stride in elements).
    pub kept: Vec<(usize, usize)>,
    /// Reduced groups, outermost first.
    pub reduced: Vec<(usize, usize)>,
    /// Whether the innermost group is reduced (or nothing is kept).
    pub inner: bool,
}

impl ReduceLayout {
    pub fn new(dims: &[usize], reduce: &[usize]) -> ReduceLayout {
        let strides = platform_api::shape::row_major_strides(dims);
        let mut kept: Vec<(usize, usize)> = Vec::new();
        let mut reduced: Vec<(usize, usize)> = Vec::new();
        let mut last_kind: Option<bool> = None;
        for d in 0..dims.len() {
            if dims[d] == 1 {
                continue;
            }
            let is_reduced = reduce.contains(&d);
            let groups = if is_reduced { &mut reduced } else { &mut kept };
            match (last_kind, groups.last_mut()) {
                (Some(k), Some(g)) if k == is_reduced => {
                    g.0 *= dims[d];
                    g.1 = strides[d];
                }
                _ => groups.push((dims[d], strides[d])),
            }
            last_kind = Some(is_reduced);
        }
        let inner = last_kind != Some(false);
        ReduceLayout {
            kept,
            reduced,
            inner,
        }
    }

    pub fn output_count(&self) -> usize {
        self.kept.iter().map(|g| g.0).product()
    }

    pub fn reduced_count(&self) -> usize {
        self.reduced.iter().map(|g| g.0).product()
    }
}

/// Offset of multi-index `index` over `groups`.
#[inline]
fn offset(index: &[usize], groups: &[(usize, usize)]) -> usize {
    index.iter().zip(groups).map(|(i, g)| i * g.1).sum()
}

/// Advances `index` over `groups` (row-major); false after the last.
#[inline]
fn next(index: &mut [usize], groups: &[(usize, usize)]) -> bool {
    for d in (0..groups.len()).rev() {
        index[d] += 1;
        if index[d] < groups[d].0 {
            return true;
        }
        index[d] = 0;
    }
    false
}

fn sizes(groups: &[(usize, usize)]) -> Vec<usize> {
    groups.iter().map(|g| g.0).collect()
}

/// Folds `xs` into `init` with 16 partial accumulators.
#[inline(always)]
fn fold_body<T: Copy, F: Fn(T, T) -> T>(init: T, xs: &[T], f: &F) -> T {
    const L: usize = 16;
    if xs.len() < 2 * L {
        return xs.iter().fold(init, |a, &x| f(a, x));
    }
    let mut acc: [T; L] = [xs[0]; L];
    acc.copy_from_slice(&xs[..L]);
    let chunks = xs[L..].chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        // A new array per step keeps the accumulators in registers (see
        // `elementwise_ops::fold_run`).
        acc = combine_lanes(&acc, c, f);
    }
    let mut width = L;
    while width > 1 {
        width /= 2;
        for k in 0..width {
            acc[k] = f(acc[k], acc[k + width]);
        }
    }
    let mut r = f(init, acc[0]);
    for &x in rest {
        r = f(r, x);
    }
    r
}

/// `[f(a[0], b[0]), ..., f(a[L-1], b[L-1])]` as a new array (`b` holds at
/// least `L` elements). Written into a fresh array rather than over `a`, so
/// no lane keeps its old value and LLVM has no conditional store to make of
/// a `max` (see [`fold_columns`]); plain loops, not `std::array::from_fn`,
/// which LLVM did not always inline into the vectorised callers.
#[inline(always)]
pub(crate) fn combine_lanes<T: Copy, const L: usize>(
    a: &[T; L],
    b: &[T],
    f: impl Fn(T, T) -> T,
) -> [T; L] {
    let b = &b[..L];
    let mut r = *a;
    for k in 0..L {
        r[k] = f(a[k], b[k]);
    }
    r
}

/// `acc[c] = f(acc[c], x[offset(j) + c])` for `j` in `0..count` in turn,
/// every column combined in that order.
///
/// A run of columns is held in registers down all `count` inputs and stored
/// once. Updating `acc` in memory input by input let LLVM turn a
/// NaN-propagating `max` (which keeps `acc[c]` when it is NaN) into masked
/// stores, several times slower on AMD processors, and costs a load and a
/// store per element besides.
#[inline(always)]
pub(crate) fn fold_columns<T: Copy>(
    acc: &mut [T],
    x: &[T],
    count: usize,
    offset: impl Fn(usize) -> usize,
    f: impl Fn(T, T) -> T,
) {
    let c0 = fold_column_runs::<T, 32>(acc, 0, x, count, &offset, &f);
    let c0 = fold_column_runs::<T, 8>(acc, c0, x, count, &offset, &f);
    for (c, a) in acc.iter_mut().enumerate().skip(c0) {
        let mut v = *a;
        for j in 0..count {
            v = f(v, x[offset(j) + c]);
        }
        *a = v;
    }
}

/// [`fold_columns`] on whole runs of `L` columns from `c0`; returns the first
/// column left.
#[inline(always)]
fn fold_column_runs<T: Copy, const L: usize>(
    acc: &mut [T],
    mut c0: usize,
    x: &[T],
    count: usize,
    offset: &impl Fn(usize) -> usize,
    f: &impl Fn(T, T) -> T,
) -> usize {
    while c0 + L <= acc.len() {
        let mut v: [T; L] = acc[c0..c0 + L]
            .try_into()
            .unwrap_or_else(|_| unreachable!("a run of L columns"));
        for j in 0..count {
            let at = offset(j) + c0;
            let run = &x[at..at + L];
            v = combine_lanes(&v, run, f);
        }
        acc[c0..c0 + L].copy_from_slice(&v);
        c0 += L;
    }
    c0
}

/// # Safety
/// As `fold_unsafe`.
unsafe fn fold_offsets_unsafe<T: Copy, F: Fn(T, T) -> T>(
    acc: &mut [T],
    x: &[T],
    offsets: &[usize],
    f: &F,
) {
    fold_columns(acc, x, offsets.len(), |j| offsets[j], f)
}

crate::multiversion!(unsafe fn fold_offsets_simd<T: Copy, F: Fn(T, T) -> T>(acc: &mut [T], x: &[T], offsets: &[usize], f: &F) => fold_offsets_unsafe);

/// `acc[c] = f(acc[c], x[o + c])` for each `o` of `offsets` in turn,
/// vectorized for the processor (see [`fold_columns`]).
#[inline]
pub(crate) fn accumulate_at<T: Copy, F: Fn(T, T) -> T>(
    acc: &mut [T],
    x: &[T],
    offsets: &[usize],
    f: &F,
) {
    // SAFETY: the bodies only touch the given slices.
    unsafe { fold_offsets_simd(acc, x, offsets, f) }
}

/// # Safety
/// None beyond the slices' own validity (safe bodies, dispatched by CPU).
unsafe fn fold_unsafe<T: Copy, F: Fn(T, T) -> T>(init: T, xs: &[T], f: &F) -> T {
    fold_body(init, xs, f)
}

crate::multiversion!(unsafe fn fold_simd<T: Copy, F: Fn(T, T) -> T>(init: T, xs: &[T], f: &F) -> T => fold_unsafe);

/// Folds `xs` into `init`, vectorized for the processor.
#[inline]
pub(crate) fn fold<T: Copy, F: Fn(T, T) -> T>(init: T, xs: &[T], f: &F) -> T {
    // SAFETY: the bodies only touch the given slices.
    unsafe { fold_simd(init, xs, f) }
}

/// A float type [`extreme`] folds.
pub(crate) trait Extreme: Copy + PartialOrd {}
impl Extreme for f32 {}
impl Extreme for f64 {}

/// The largest (`pick` keeps `x` when `x > acc`) or smallest element of
/// `init` and `xs` by plain comparisons, and whether any was NaN. Where no
/// NaN was seen and the result is not a zero, it is the value XLA's
/// `maximum`/`minimum` fold gives (the elements equal to it are equal bit
/// for bit); only those two cases need the exact fold, whose per-element
/// NaN and signed-zero checks cost three times the plain compare.
#[inline(always)]
unsafe fn extreme_unsafe<T: Extreme, F: Fn(T, T) -> T>(init: T, xs: &[T], pick: &F) -> (T, bool) {
    const L: usize = 16;
    let mut acc = [init; L];
    let mut nan = [false; L];
    let chunks = xs.chunks_exact(L);
    let rest = chunks.remainder();
    for c in chunks {
        // New arrays per step keep the accumulators in registers (see
        // `combine_lanes`).
        let (mut a, mut n) = (acc, nan);
        for k in 0..L {
            a[k] = pick(acc[k], c[k]);
            // `x != x` only for NaN.
            #[allow(clippy::eq_op)]
            let unordered = c[k] != c[k];
            n[k] = nan[k] | unordered;
        }
        (acc, nan) = (a, n);
    }
    #[allow(clippy::eq_op)]
    let mut any_nan = init != init || nan.iter().any(|&n| n);
    let mut r = init;
    for a in acc {
        r = pick(r, a);
    }
    for &x in rest {
        #[allow(clippy::eq_op)]
        let unordered = x != x;
        any_nan |= unordered;
        r = pick(r, x);
    }
    (r, any_nan)
}

crate::multiversion!(unsafe fn extreme_simd<T: Extreme, F: Fn(T, T) -> T>(init: T, xs: &[T], pick: &F) -> (T, bool) => extreme_unsafe);

/// `init` folded with `xs` by `maximum` (`max`) or `minimum` of `f32` or
/// `f64` (`T` is one of them: [`quick_extreme_of`] checked), when the plain
/// comparison's answer is the exact one (see [`extreme_unsafe`]).
fn quick_extreme<T: bytemuck::Pod>(max: bool, init: T, xs: &[T]) -> Option<T> {
    fn typed<U: Extreme + bytemuck::Pod>(max: bool, init: U, xs: &[U]) -> Option<U> {
        let zero: U = bytemuck::Zeroable::zeroed();
        // SAFETY: the bodies only read `xs`.
        let (r, nan) = if max {
            unsafe { extreme_simd(init, xs, &|a: U, x: U| if x > a { x } else { a }) }
        } else {
            unsafe { extreme_simd(init, xs, &|a: U, x: U| if x < a { x } else { a }) }
        };
        (!nan && r != zero).then_some(r)
    }
    match std::mem::size_of::<T>() {
        4 => typed::<f32>(max, bytemuck::cast(init), bytemuck::cast_slice(xs)).map(bytemuck::cast),
        8 => typed::<f64>(max, bytemuck::cast(init), bytemuck::cast_slice(xs)).map(bytemuck::cast),
        _ => None,
    }
}

/// Whether a reduction by `op` of `ty` elements has [`quick_extreme`]'s
/// path, and which extreme.
fn quick_extreme_of(op: BinaryOp, ty: ElementType) -> Option<bool> {
    let float = matches!(ty, ElementType::F32 | ElementType::F64);
    match op {
        BinaryOp::Maximum if float => Some(true),
        BinaryOp::Minimum if float => Some(false),
        _ => None,
    }
}

/// A typed reduction with a binary reducer `f` (a `maximum` or `minimum` of
/// floats when `extreme` says which: see [`quick_extreme`]).
fn fast_reduce<T: bytemuck::Pod + Send + Sync, F>(
    name: String,
    layout: ReduceLayout,
    f: F,
    extreme: Option<bool>,
    input: BufferSlice,
    init: BufferSlice,
    out: BufferSlice,
) -> Box<dyn Thunk>
where
    F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
{
    let fold_run = move |init: T, xs: &[T]| -> T {
        extreme
            .and_then(|max| quick_extreme(max, init, xs))
            .unwrap_or_else(|| fold(init, xs, &f))
    };
    let n_out = layout.output_count();
    let n_red = layout.reduced_count();
    thunk(name, "reduce", move |ctx| {
        // SAFETY: input and init are operands, out the result: distinct buffers
        // sized by the shapes the layout was built from.
        let (x, init_v, out) = unsafe {
            (
                ctx.input::<T>(input),
                ctx.input::<T>(init)[0],
                ctx.output::<T>(out),
            )
        };
        if n_out == 0 {
            return Ok(());
        }
        if n_red == 0 {
            out.fill(init_v);
            return Ok(());
        }
        let out_addr = out.as_mut_ptr() as usize;
        if layout.inner {
            let (inner_len, _) = *layout.reduced.last().unwrap_or(&(1, 1));
            let outer_red = &layout.reduced[..layout.reduced.len().saturating_sub(1)];
            let kept_sizes = sizes(&layout.kept);
            if n_out == 1 && outer_red.is_empty() && inner_len >= 2 * REDUCE_GRAIN {
                // One long run: partial folds in parallel, combined in order.
                let threads = compute_pool().current_num_threads().max(1);
                let parts = threads * 4;
                let chunk = inner_len.div_ceil(parts);
                let partials: Vec<Option<T>> = map_tasks(parts, |p| {
                    let s = p * chunk;
                    let e = ((p + 1) * chunk).min(inner_len);
                    (s < e).then(|| fold_run(x[s], &x[s + 1..e]))
                });
                let r = partials.into_iter().flatten().fold(init_v, f);
                out[0] = r;
                return Ok(());
            }
            let per_out = n_red.max(1);
            if !outer_red.is_empty() {
                // Reduced groups outside a kept one (a sum over the first
                // and last dimensions): output by output, each output's
                // runs lie a whole slab apart, and a short run is over
                // before the prefetchers follow it. Walking the outer
                // reduced index outside the outputs instead reads the
                // runs of neighbouring outputs one after the other (the
                // input streams), while every output still folds its runs
                // in the same order: the same bits. Tasks take wide output
                // ranges, so each reads long stretches of every slab.
                let threads = compute_pool().current_num_threads().max(1);
                let grain = (REDUCE_GRAIN / per_out)
                    .max(n_out.div_ceil(2 * threads))
                    .max(1);
                parallel_for(n_out, grain, |s, e| {
                    let mut accs = vec![init_v; e - s];
                    let mut ridx = vec![0usize; outer_red.len()];
                    loop {
                        let roff = offset(&ridx, outer_red);
                        let mut kidx = unflatten(s, &kept_sizes);
                        for acc in accs.iter_mut() {
                            let off = offset(&kidx, &layout.kept) + roff;
                            *acc = fold_run(*acc, &x[off..off + inner_len]);
                            next(&mut kidx, &layout.kept);
                        }
                        if !next(&mut ridx, outer_red) {
                            break;
                        }
                    }
                    let out = out_addr as *mut T;
                    for (o, acc) in (s..e).zip(accs) {
                        // SAFETY: `o` < n_out and tasks own disjoint output
                        // ranges.
                        unsafe { out.add(o).write(acc) };
                    }
                });
                return Ok(());
            }
            parallel_for(n_out, (REDUCE_GRAIN / per_out).max(1), |s, e| {
                let out = out_addr as *mut T;
                let mut kidx = unflatten(s, &kept_sizes);
                let mut ridx = vec![0usize; outer_red.len()];
                for o in s..e {
                    let base = offset(&kidx, &layout.kept);
                    let mut acc = init_v;
                    loop {
                        let off = base + offset(&ridx, outer_red);
                        acc = fold_run(acc, &x[off..off + inner_len]);
                        if !next(&mut ridx, outer_red) {
                            break;
                        }
                    }
                    // SAFETY: `o` < n_out and tasks own disjoint output ranges.
                    unsafe { out.add(o).write(acc) };
                    next(&mut kidx, &layout.kept);
                }
            });
        } else {
            let (row_len, _) = *layout.kept.last().unwrap_or(&(1, 1));
            let outer_kept = &layout.kept[..layout.kept.len() - 1];
            let rows: usize = outer_kept.iter().map(|g| g.0).product();
            let red = &layout.reduced;
            let outer_sizes = sizes(outer_kept);
            if let Some(wide) = ShortRows::new(red, row_len) {
                let grain = (REDUCE_GRAIN / (n_red * row_len).max(1)).max(1);
                parallel_for(rows, grain, |s, e| {
                    let out = out_addr as *mut T;
                    let mut acc = vec![init_v; wide.width()];
                    let offsets = wide.offsets(n_red);
                    for row in s..e {
                        let base = offset(&unflatten(row, &outer_sizes), outer_kept);
                        // SAFETY: tasks own disjoint rows of `out`.
                        let out_row = unsafe {
                            std::slice::from_raw_parts_mut(out.add(row * row_len), row_len)
                        };
                        let run = &x[base..base + n_red * row_len];
                        wide.fold(out_row, &mut acc, &offsets, init_v, run, f);
                    }
                });
                return Ok(());
            }
            // Split over rows when there are enough, else over columns.
            // Few rows: split the row into a few wide column bands (wide
            // enough that each reads long contiguous runs of every input row).
            let threads = compute_pool().current_num_threads();
            let col_chunk = if rows >= 2 * threads {
                row_len
            } else {
                row_len.div_ceil(2 * threads).max(512).min(row_len.max(1))
            };
            let col_tasks = row_len.div_ceil(col_chunk);
            let tasks = rows * col_tasks;
            let grain = (REDUCE_GRAIN / (n_red * col_chunk).max(1)).max(1);
            parallel_for(tasks, grain, |s, e| {
                let out = out_addr as *mut T;
                let mut ridx = vec![0usize; red.len()];
                let mut offsets = Vec::with_capacity(OFFSET_BATCH);
                for t in s..e {
                    let row = t / col_tasks;
                    let c0 = (t % col_tasks) * col_chunk;
                    let c1 = (c0 + col_chunk).min(row_len);
                    let base = offset(&unflatten(row, &outer_sizes), outer_kept);
                    // SAFETY: tasks own disjoint (row, column) ranges of `out`.
                    let acc = unsafe {
                        std::slice::from_raw_parts_mut(out.add(row * row_len + c0), c1 - c0)
                    };
                    acc.fill(init_v);
                    // `ridx` is all zeros here: `next` wraps it back. The
                    // input rows are folded a batch of offsets at a time.
                    offsets.clear();
                    loop {
                        offsets.push(base + offset(&ridx, red) + c0);
                        let more = next(&mut ridx, red);
                        if offsets.len() == OFFSET_BATCH || !more {
                            accumulate_at(acc, x, &offsets, &f);
                            offsets.clear();
                        }
                        if !more {
                            break;
                        }
                    }
                }
            });
        }
        Ok(())
    })
}

/// A reduction over one run of rows into a short kept row (`f32[1024, 1024,
/// 3]` summed over the middle dimension): each output row folds `count`
/// input rows of `row_len` elements that lie one after another. Folded a
/// row at a time, the vectors are `row_len` lanes wide and most of the time
/// goes to the loop around them; read instead as rows of `width = row_len ·
/// m` elements (a whole number of 32-lane vectors where `row_len` allows),
/// lane `i · row_len + c` of the wide accumulator folds every `m`-th input
/// row's column `c`, and the `m` lanes of each column are folded together
/// at the end. The order of the fold changes (as in every vectorized
/// fold); each output is still the same bits from run to run.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct ShortRows {
    row_len: usize,
    /// Input rows per wide row.
    m: usize,
}

impl ShortRows {
    /// Rows shorter than this take the wide form.
    const MAX_ROW: usize = 16;

    /// The wide form for these reduced groups and kept row length, if the
    /// reduced elements of each output row are one contiguous run of rows
    /// and there are enough of them.
    fn new(reduced: &[(usize, usize)], row_len: usize) -> Option<ShortRows> {
        let [(count, stride)] = *reduced else {
            return None;
        };
        if stride != row_len || row_len == 0 || row_len >= Self::MAX_ROW {
            return None;
        }
        let m = 32 / gcd(row_len, 32);
        (count >= 2 * m).then_some(ShortRows { row_len, m })
    }

    /// Elements of a wide row.
    fn width(&self) -> usize {
        self.row_len * self.m
    }

    /// Where the wide rows after the first start in a run of `count` input
    /// rows.
    fn offsets(&self, count: usize) -> Vec<usize> {
        let width = self.width();
        (1..count * self.row_len / width)
            .map(|j| j * width)
            .collect()
    }

    /// `out[c] = init ⊕ run[c] ⊕ run[row_len + c] ⊕ ...` over the rows of
    /// `run` (a whole number of rows, at least `2m`), folded as described
    /// above; `acc` is `width` elements of room, `offsets` what
    /// [`Self::offsets`] gives for the run.
    fn fold<T: Copy, F: Fn(T, T) -> T>(
        &self,
        out: &mut [T],
        acc: &mut [T],
        offsets: &[usize],
        init: T,
        run: &[T],
        f: F,
    ) {
        let (row_len, m, width) = (self.row_len, self.m, self.width());
        let wide_rows = offsets.len() + 1;
        acc.copy_from_slice(&run[..width]);
        accumulate_at(acc, run, offsets, &f);
        for (c, o) in out.iter_mut().enumerate() {
            let mut v = init;
            for i in 0..m {
                v = f(v, acc[i * row_len + c]);
            }
            for r in wide_rows * m..run.len() / row_len {
                v = f(v, run[r * row_len + c]);
            }
            *o = v;
        }
    }
}

fn gcd(a: usize, b: usize) -> usize {
    if b == 0 {
        a
    } else {
        gcd(b, a % b)
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::Reduce {
        dimensions,
        to_apply,
    } = &instr.op
    else {
        return Err(Error::internal("not a reduce"));
    };
    let n = instr.operands.len() / 2;
    if n == 0 || instr.operands.len() != 2 * n {
        return Err(Error::invalid_argument(format!(
            "reduce %{} needs as many init values as operands",
            instr.name
        )));
    }
    let operand = ctx.operand_array(instr, 0)?;
    for k in 1..n {
        if ctx.operand_array(instr, k)?.dims != operand.dims {
            return Err(Error::invalid_argument(format!(
                "reduce %{}: operands have different dimensions",
                instr.name
            )));
        }
    }
    if let Some(&d) = dimensions.iter().find(|&&d| d >= operand.rank()) {
        return Err(Error::invalid_argument(format!(
            "reduce %{}: dimension {d} out of range for {operand}",
            instr.name
        )));
    }
    let layout = ReduceLayout::new(&operand.dims, dimensions);
    let results = ctx.result_leaves(id).to_vec();
    let out_count: usize = operand
        .dims
        .iter()
        .enumerate()
        .filter(|(d, _)| !dimensions.contains(d))
        .map(|(_, s)| s)
        .product();
    if results.len() != n
        || (0..n).any(|k| {
            results[k].size
                != out_count
                    * ctx
                        .operand_array(instr, k)
                        .map(|a| a.element_type.byte_size())
                        .unwrap_or(0)
        })
    {
        return Err(Error::invalid_argument(format!(
            "reduce %{}: result {} does not match {n} reductions of {operand} over {dimensions:?}",
            instr.name, instr.shape
        )));
    }
    if n == 1 {
        if let Some((op, ty)) = binary_reducer(ctx.module, *to_apply) {
            if ty == operand.element_type {
                let (input, init) = (ctx.operand_slice(instr, 0)?, ctx.operand_slice(instr, 1)?);
                if let Some(t) = fast_path(
                    instr.name.clone(),
                    layout.clone(),
                    op,
                    ty,
                    input,
                    init,
                    results[0],
                ) {
                    return Ok(t);
                }
            }
        }
    }
    if n == 2 && layout.reduced.len() <= 1 {
        let value = operand.element_type;
        let index = ctx.operand_array(instr, 1)?.element_type;
        if let Some(greater) = argminmax::recognize(ctx.module, *to_apply, value, index) {
            let slices = ArgOperands {
                values: ctx.operand_slice(instr, 0)?,
                indices: Some(ctx.operand_slice(instr, 1)?),
                init_value: ctx.operand_slice(instr, 2)?,
                init_index: ctx.operand_slice(instr, 3)?,
            };
            let out = [results[0], results[1]];
            return Ok(typed_arg_reduce(
                instr.name.clone(),
                layout,
                greater,
                (value, index),
                slices,
                out,
            ));
        }
    }
    general(ctx, id, layout, n)
}

/// `__host$arg_reduce(values, init value, init index)`: an argmax/argmin
/// whose indices are positions along the reduced dimension (see
/// [`crate::arg_reduce`]).
pub fn lower_arg_reduce(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let bad = |why: &str| Error::internal(format!("arg-reduce %{}: {why}", instr.name));
    let (dimension, greater) =
        crate::arg_reduce::arg_reduce_of(instr).ok_or_else(|| bad("malformed call"))?;
    let operand = ctx.operand_array(instr, 0)?;
    let results = ctx.result_leaves(id).to_vec();
    let leaves = instr.shape.leaves();
    if instr.operands.len() != 3 || results.len() != 2 || leaves.len() != 2 {
        return Err(bad(
            "needs (values, init value, init index) and two results",
        ));
    }
    let (value, index) = (operand.element_type, leaves[1].1.element_type);
    // The target can also be written by hand in HLO text: only the types the
    // pass rewrites are accepted.
    if !matches!(value, ElementType::F32 | ElementType::F64)
        || !matches!(index, ElementType::S32 | ElementType::S64)
        || leaves[0].1.element_type != value
    {
        return Err(Error::invalid_argument(format!(
            "arg-reduce %{}: needs f32/f64 values and s32/s64 indices, got {}",
            instr.name, instr.shape
        )));
    }
    if dimension >= operand.rank() {
        return Err(bad("reduced dimension out of range"));
    }
    let layout = ReduceLayout::new(&operand.dims, &[dimension]);
    let slices = ArgOperands {
        values: ctx.operand_slice(instr, 0)?,
        indices: None,
        init_value: ctx.operand_slice(instr, 1)?,
        init_index: ctx.operand_slice(instr, 2)?,
    };
    Ok(typed_arg_reduce(
        instr.name.clone(),
        layout,
        greater,
        (value, index),
        slices,
        [results[0], results[1]],
    ))
}

/// The buffers of an argmax/argmin: `indices` is `None` where each element's
/// index is its position in the row.
#[derive(Clone, Copy)]
struct ArgOperands {
    values: BufferSlice,
    indices: Option<BufferSlice>,
    init_value: BufferSlice,
    init_index: BufferSlice,
}

impl ArgOperands {
    /// The values, the index array if any, the two inits, and the two
    /// results' addresses (as integers, to be shared by the tasks).
    ///
    /// # Safety
    /// The slices are an arg-reduce's operands and `results` its results:
    /// distinct buffers of `T` values and `I` indices.
    #[allow(clippy::type_complexity)]
    unsafe fn resolve<'a, T: bytemuck::Pod, I: bytemuck::Pod>(
        &self,
        ctx: &ExecuteContext<'a>,
        results: [BufferSlice; 2],
    ) -> (&'a [T], Option<&'a [I]>, T, I, usize, usize) {
        // SAFETY: the caller's promise.
        unsafe {
            (
                ctx.input::<T>(self.values),
                self.indices.map(|s| ctx.input::<I>(s)),
                ctx.input::<T>(self.init_value)[0],
                ctx.input::<I>(self.init_index)[0],
                ctx.ptr(results[0]) as usize,
                ctx.ptr(results[1]) as usize,
            )
        }
    }
}

fn typed_arg_reduce(
    name: String,
    layout: ReduceLayout,
    greater: bool,
    types: (ElementType, ElementType),
    operands: ArgOperands,
    out: [BufferSlice; 2],
) -> Box<dyn Thunk> {
    match types {
        (ElementType::F32, ElementType::S32) => {
            arg_reduce::<f32, i32>(name, layout, greater, operands, out)
        }
        (ElementType::F32, _) => arg_reduce::<f32, i64>(name, layout, greater, operands, out),
        (_, ElementType::S32) => arg_reduce::<f64, i32>(name, layout, greater, operands, out),
        _ => arg_reduce::<f64, i64>(name, layout, greater, operands, out),
    }
}

/// Columns of accumulators one task of [`arg_reduce`]'s column walk holds.
const ARG_COLUMNS: usize = 256;

/// An argmax/argmin reduce over one group of dimensions (see
/// [`argminmax`]), results `[value, index]`. With the reduced group
/// innermost each output folds a contiguous row; otherwise (an argmax over
/// a major dimension) a row of accumulators, one per column of the
/// innermost kept group, is updated with each contiguous input row, so the
/// input streams once instead of being read one strided element at a time.
/// Either way every output folds its elements in order, with the same
/// comparisons.
fn arg_reduce<T, I>(
    name: String,
    layout: ReduceLayout,
    greater: bool,
    operands: ArgOperands,
    results: [BufferSlice; 2],
) -> Box<dyn Thunk>
where
    T: bytemuck::Pod + PartialOrd + Send + Sync,
    I: bytemuck::Pod + Into<i64> + TryFrom<i64> + Send + Sync,
{
    if !layout.inner {
        return arg_reduce_columns::<T, I>(name, layout, greater, operands, results);
    }
    let n_out = layout.output_count();
    let row = layout.reduced.first().map_or(1, |g| g.0);
    let kept_sizes = sizes(&layout.kept);
    thunk(name, "reduce", move |ctx| {
        // SAFETY: the buffers the thunk was made for.
        let (x, idx, init_v, init_i, ov, oi) = unsafe { operands.resolve::<T, I>(ctx, results) };
        parallel_for(n_out, (REDUCE_GRAIN / row.max(1)).max(1), |s, e| {
            let mut kidx = unflatten(s, &kept_sizes);
            for o in s..e {
                let base = offset(&kidx, &layout.kept);
                let values = &x[base..base + row];
                let (v, i) = match idx {
                    Some(idx) => {
                        argminmax::fold_row(greater, init_v, init_i, values, &idx[base..base + row])
                    }
                    None => argminmax::fold_row_positions(greater, init_v, init_i, values),
                };
                // SAFETY: output `o`; tasks own disjoint ranges.
                unsafe {
                    (ov as *mut T).add(o).write(v);
                    (oi as *mut I).add(o).write(i);
                }
                next(&mut kidx, &layout.kept);
            }
        });
        Ok(())
    })
}

/// [`arg_reduce`] with the innermost group kept: `(outer, R, C)` over `R`,
/// the `C` columns split into runs of [`ARG_COLUMNS`] whose accumulators
/// stay in L1 while the `R` rows stream past.
fn arg_reduce_columns<T, I>(
    name: String,
    layout: ReduceLayout,
    greater: bool,
    operands: ArgOperands,
    results: [BufferSlice; 2],
) -> Box<dyn Thunk>
where
    T: bytemuck::Pod + PartialOrd + Send + Sync,
    I: bytemuck::Pod + Into<i64> + TryFrom<i64> + Send + Sync,
{
    // The innermost kept group is contiguous (its stride is 1); the groups
    // outside it select a block of outputs.
    let (cols, _) = layout.kept.last().copied().unwrap_or((1, 1));
    let outer = layout.kept[..layout.kept.len().saturating_sub(1)].to_vec();
    let outer_sizes = sizes(&outer);
    let n_outer: usize = outer_sizes.iter().product();
    // A reduced dimension of extent 1 leaves no group: one row, position 0.
    let (rows, row_stride) = layout.reduced.first().copied().unwrap_or((1, 0));
    let runs = cols.div_ceil(ARG_COLUMNS);
    let units = n_outer * runs;
    let grain = (REDUCE_GRAIN / (rows * ARG_COLUMNS.min(cols)).max(1)).max(1);
    thunk(name, "reduce", move |ctx| {
        // SAFETY: the buffers the thunk was made for.
        let (x, idx, init_v, init_i, ov, oi) = unsafe { operands.resolve::<T, I>(ctx, results) };
        parallel_for(units, grain, |s, e| {
            let mut best = [init_v; ARG_COLUMNS];
            let mut best_i = [0i64; ARG_COLUMNS];
            for unit in s..e {
                let (o, run) = (unit / runs, unit % runs);
                let c0 = run * ARG_COLUMNS;
                let w = ARG_COLUMNS.min(cols - c0);
                let base = offset(&unflatten(o, &outer_sizes), &outer) + c0;
                let (bv, bi) = (&mut best[..w], &mut best_i[..w]);
                bv.fill(init_v);
                bi.fill(init_i.into());
                for j in 0..rows {
                    let at = base + j * row_stride;
                    let values = &x[at..at + w];
                    match idx {
                        Some(idx) => {
                            fold_columns_arg(greater, bv, bi, values, |c| idx[at + c].into())
                        }
                        None => fold_columns_arg(greater, bv, bi, values, |_| j as i64),
                    }
                }
                let first = o * cols + c0;
                for c in 0..w {
                    // SAFETY: outputs `first..first + w`; tasks own disjoint
                    // units. An index is a position along the reduced
                    // dimension or one of the index operand's, so it fits.
                    unsafe {
                        (ov as *mut T).add(first + c).write(bv[c]);
                        (oi as *mut I)
                            .add(first + c)
                            .write(I::try_from(bi[c]).unwrap_or(init_i));
                    }
                }
            }
        });
        Ok(())
    })
}

/// Folds one input row into a row of argmax/argmin accumulators: column
/// `c` takes `(values[c], index(c))` as [`argminmax::fold_row`] takes an
/// element.
#[inline(always)]
fn fold_columns_arg<T: PartialOrd + Copy>(
    greater: bool,
    best: &mut [T],
    best_i: &mut [i64],
    values: &[T],
    index: impl Fn(usize) -> i64,
) {
    let n = best.len().min(best_i.len()).min(values.len());
    let (best, best_i, values) = (&mut best[..n], &mut best_i[..n], &values[..n]);
    for c in 0..n {
        let (v, i) = (values[c], index(c));
        let (keep_v, keep_i) = argminmax::keeps_first(greater, best[c], best_i[c], v, i);
        if !keep_i {
            best_i[c] = i;
        }
        if !keep_v {
            best[c] = v;
        }
    }
}

fn fast_path(
    name: String,
    layout: ReduceLayout,
    op: BinaryOp,
    ty: ElementType,
    input: BufferSlice,
    init: BufferSlice,
    out: BufferSlice,
) -> Option<Box<dyn Thunk>> {
    struct Make {
        name: String,
        layout: ReduceLayout,
        extreme: Option<bool>,
        input: BufferSlice,
        init: BufferSlice,
        out: BufferSlice,
    }
    impl CombinerVisitor for Make {
        type Out = Box<dyn Thunk>;
        fn visit<T, F>(self, f: F) -> Box<dyn Thunk>
        where
            T: bytemuck::Pod + Send + Sync + 'static,
            F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
        {
            fast_reduce::<T, F>(
                self.name,
                self.layout,
                f,
                self.extreme,
                self.input,
                self.init,
                self.out,
            )
        }
    }
    let make = Make {
        name,
        layout,
        extreme: quick_extreme_of(op, ty),
        input,
        init,
        out,
    };
    typed_combiner(op, ty, make)
}

/// Any reducer, through the scalar evaluator.
fn general(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    layout: ReduceLayout,
    n: usize,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::Reduce { to_apply, .. } = &instr.op else {
        return Err(Error::internal("not a reduce"));
    };
    let program = Arc::new(ScalarProgram::compile(ctx.module, *to_apply)?);
    if program.param_count() != 2 * n || program.output_types().len() != n {
        return Err(Error::invalid_argument(format!(
            "reduce %{}: reducer takes {} values and returns {}; {n} operands need {} and {n}",
            instr.name,
            program.param_count(),
            program.output_types().len(),
            2 * n
        )));
    }
    let mut inputs = Vec::new();
    let mut inits = Vec::new();
    let mut widths = Vec::new();
    for k in 0..n {
        inputs.push(ctx.operand_slice(instr, k)?);
        inits.push(ctx.operand_slice(instr, n + k)?);
        widths.push(ctx.operand_array(instr, k)?.element_type.byte_size());
    }
    let results = ctx.result_leaves(id).to_vec();
    let n_out = layout.output_count();
    let n_red = layout.reduced_count();
    // Walk the reduced elements row-major over all reduced groups, for up to
    // `LANES` outputs at once (one evaluator lane each): the order of
    // operations of every output is the sequential one.
    let kept_sizes = sizes(&layout.kept);
    Ok(thunk(instr.name.clone(), "reduce", move |ctx| {
        let ins: Vec<usize> = inputs.iter().map(|s| ctx.ptr(*s) as usize).collect();
        let outs: Vec<usize> = results.iter().map(|s| ctx.ptr(*s) as usize).collect();
        // SAFETY: init operands are scalars of the operands' widths.
        let init_regs: Vec<Register> = inits
            .iter()
            .zip(&widths)
            .map(|(s, &w)| unsafe { load_register(ctx.ptr(*s), w) })
            .collect();
        let threads = compute_pool().current_num_threads().max(1);
        // Few outputs with long reductions: split them evenly over the
        // threads, so each task still fills its lanes.
        let grain = (REDUCE_GRAIN / (n_red.max(1) * 8))
            .max(n_out / (2 * threads))
            .max(1);
        parallel_for(n_out, grain, |s, e| {
            let mut ev = program.lane_evaluator(LANES.min(e - s));
            let mut bases = vec![0usize; ev.lanes()];
            let mut kidx = unflatten(s, &kept_sizes);
            let mut ridx = vec![0usize; layout.reduced.len()];
            // Accumulators, lane-packed per operand.
            let mut acc: Vec<Vec<u8>> = widths.iter().map(|w| vec![0u8; w * ev.lanes()]).collect();
            let mut o0 = s;
            while o0 < e {
                let lanes = ev.lanes().min(e - o0);
                for base in bases.iter_mut().take(lanes) {
                    *base = offset(&kidx, &layout.kept);
                    next(&mut kidx, &layout.kept);
                }
                let contiguous = bases[..lanes].windows(2).all(|p| p[1] == p[0] + 1);
                for k in 0..n {
                    let w = widths[k];
                    let one: &[u8] = bytemuck::cast_slice(&init_regs[k]);
                    for lane in acc[k].chunks_exact_mut(w).take(lanes) {
                        lane.copy_from_slice(&one[..w]);
                    }
                }
                // `ridx` is all zeros here: `next` wraps it back.
                if n_red > 0 {
                    loop {
                        let off = offset(&ridx, &layout.reduced);
                        for k in 0..n {
                            let w = widths[k];
                            ev.param_lanes(k)[..lanes * w].copy_from_slice(&acc[k][..lanes * w]);
                            let dst = ev.param_lanes(n + k);
                            if contiguous {
                                // SAFETY: the `lanes` elements from `bases[0] + off`
                                // lie inside operand `k`.
                                unsafe {
                                    std::ptr::copy_nonoverlapping(
                                        (ins[k] + (bases[0] + off) * w) as *const u8,
                                        dst.as_mut_ptr(),
                                        lanes * w,
                                    )
                                };
                            } else {
                                for (j, lane) in dst.chunks_exact_mut(w).take(lanes).enumerate() {
                                    // SAFETY: `bases[j] + off` indexes inside operand `k`.
                                    unsafe {
                                        std::ptr::copy_nonoverlapping(
                                            (ins[k] + (bases[j] + off) * w) as *const u8,
                                            lane.as_mut_ptr(),
                                            w,
                                        )
                                    };
                                }
                            }
                        }
                        ev.run(lanes);
                        for (k, a) in acc.iter_mut().enumerate() {
                            let w = widths[k];
                            a[..lanes * w].copy_from_slice(&ev.output_lanes(k)[..lanes * w]);
                        }
                        if !next(&mut ridx, &layout.reduced) {
                            break;
                        }
                    }
                }
                for k in 0..n {
                    let w = widths[k];
                    // SAFETY: outputs `o0..o0 + lanes` of result `k`; tasks own
                    // disjoint ranges.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            acc[k].as_ptr(),
                            (outs[k] + o0 * w) as *mut u8,
                            lanes * w,
                        )
                    };
                }
                o0 += lanes;
            }
        });
        Ok(())
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layout_groups_merge_and_drop_unit_dims() {
        let l = ReduceLayout::new(&[4, 1, 5, 6], &[2, 3]);
        assert_eq!(l.kept, vec![(4, 30)]);
        assert_eq!(l.reduced, vec![(30, 1)]);
        assert!(l.inner);
        let l = ReduceLayout::new(&[4, 5, 6], &[0]);
        assert_eq!(l.kept, vec![(30, 1)]);
        assert_eq!(l.reduced, vec![(4, 30)]);
        assert!(!l.inner);
        let l = ReduceLayout::new(&[2, 3, 4, 5], &[1, 3]);
        assert_eq!(l.kept, vec![(2, 60), (4, 5)]);
        assert_eq!(l.reduced, vec![(3, 20), (5, 1)]);
        assert!(l.inner);
    }

    #[test]
    fn the_quick_extreme_is_the_exact_fold_or_declines() {
        use platform_api::semantics::float::{maximum, minimum};
        // Values with NaNs, both zeros, infinities and repeats, at lengths
        // around the 16 lanes.
        let specials = [
            f32::NAN,
            0.0,
            -0.0,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1.5,
            -1.5,
        ];
        let mut state = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = || {
            state ^= state << 13;
            state ^= state >> 7;
            state ^= state << 17;
            state
        };
        let (mut exact_cases, mut declined) = (0, 0);
        for case in 0..4000 {
            let n = (next() % 70) as usize;
            let rare = case % 3;
            let xs: Vec<f32> = (0..n)
                .map(|_| {
                    let r = next();
                    if rare > 0 && r % 23 == 0 {
                        specials[(r >> 8) as usize % specials.len()]
                    } else {
                        ((r >> 16) % 2001) as f32 / 100.0 - 10.0
                    }
                })
                .collect();
            let init = if case % 5 == 0 {
                -0.0
            } else {
                f32::NEG_INFINITY
            };
            for max in [true, false] {
                let f = if max { maximum::<f32> } else { minimum::<f32> };
                let want = xs.iter().fold(init, |a, &x| f(a, x));
                match quick_extreme(max, init, &xs) {
                    Some(got) => {
                        assert_eq!(got.to_bits(), want.to_bits(), "{xs:?} max={max}");
                        exact_cases += 1;
                    }
                    None => {
                        assert!(want.is_nan() || want == 0.0 || xs.iter().any(|x| x.is_nan()));
                        declined += 1;
                    }
                }
            }
        }
        assert!(
            exact_cases > 1000 && declined > 100,
            "{exact_cases} {declined}"
        );
    }

    #[test]
    fn fold_matches_a_sequential_sum_on_integers() {
        let xs: Vec<i64> = (0..1000).map(|i| i * 7 - 300).collect();
        let want: i64 = 5 + xs.iter().sum::<i64>();
        assert_eq!(fold(5i64, &xs, &|a, b| a + b), want);
    }
}
