//! `reduce-window` (variadic; padding, strides, base and window dilation) and
//! `select-and-scatter`.
//!
//! Semantics as XLA's emitters: each output element starts from the init value
//! and folds the operand elements its window covers; window positions that fall
//! in padding or between dilated input elements are skipped.
//!
//! Paths:
//! * **scan**: a window spanning a whole dimension from one side (`size >= n`,
//!   stride 1, padding `size-1` on one side: what `cumsum`/`cumprod`/`cummax`
//!   lower to) is a running fold along that dimension, O(n) instead of O(n²).
//!   With a reducer of its own (`cumlogsumexp`) only prefix windows take it,
//!   through the evaluator: their running fold is the windows' own order.
//! * **typed**: a binary reducer (`add`, `maximum`, ...) on one operand runs as
//!   typed loops; when the innermost dimension is untouched by the window (the
//!   channel dimension of an NHWC pooling) the fold runs over whole rows of it.
//! * **general**: any reducer through the [`ScalarProgram`] evaluator.

use super::scalar_program::{binary_reducer, load_register, Register, ScalarProgram};
use super::strided::unflatten;
use crate::elementwise_ops::{typed_combiner, CombinerVisitor};
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, Thunk};
use platform_api::hlo::analysis::window::{input_position, output_size};
use platform_api::hlo::{
    BinaryOp, ComparisonDirection, ComparisonType, InstrId, Op, Window, WindowDim,
};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

const GRAIN: usize = 1 << 14;

/// Window geometry for one operand shape.
#[derive(Clone, Debug)]
struct Geometry {
    in_dims: Vec<usize>,
    out_dims: Vec<usize>,
    window: Vec<WindowDim>,
    in_strides: Vec<usize>,
}

impl Geometry {
    fn new(in_dims: &[usize], window: &Window, what: &str) -> Result<Geometry> {
        if window.dims.len() != in_dims.len() {
            return Err(Error::invalid_argument(format!(
                "{what}: window of rank {} for an operand of rank {}",
                window.dims.len(),
                in_dims.len()
            )));
        }
        let mut out_dims = Vec::new();
        for (d, w) in window.dims.iter().enumerate() {
            out_dims.push(output_size(in_dims[d], w).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "{what}: window dimension {d} ({window}) is malformed or too large"
                ))
            })?);
        }
        Ok(Geometry {
            in_dims: in_dims.to_vec(),
            out_dims,
            window: window.dims.clone(),
            in_strides: platform_api::shape::row_major_strides(in_dims),
        })
    }

    /// Input index along `d` for output coordinate `o` and window coordinate
    /// `w`, if it is a real (not padding, not dilation hole) element.
    #[inline]
    fn input_coord(&self, d: usize, o: usize, w: usize) -> Option<usize> {
        input_position(&self.window[d], self.in_dims[d], o, w)
    }

    /// Calls `f(input_offset)` for every real element of the window of output
    /// coordinates `out` over dimensions `dims` (others fixed at 0).
    #[inline]
    fn for_each_in_window(&self, out: &[usize], dims: usize, mut f: impl FnMut(usize)) {
        if (0..dims).any(|d| self.window[d].size == 0) {
            return;
        }
        // Called once per output row: no allocation for the usual ranks.
        let mut small = [0usize; 8];
        let mut large = Vec::new();
        let w: &mut [usize] = if dims <= small.len() {
            &mut small[..dims]
        } else {
            large.resize(dims, 0);
            &mut large
        };
        'outer: loop {
            let mut off = 0usize;
            let mut ok = true;
            for d in 0..dims {
                match self.input_coord(d, out[d], w[d]) {
                    Some(i) => off += i * self.in_strides[d],
                    None => {
                        ok = false;
                        break;
                    }
                }
            }
            if ok {
                f(off);
            }
            for d in (0..dims).rev() {
                w[d] += 1;
                if w[d] < self.window[d].size {
                    continue 'outer;
                }
                w[d] = 0;
            }
            break;
        }
    }

    /// Whether the innermost dimension is untouched by the window.
    /// How the output is walked: rows of its innermost dimension when that
    /// dimension's window is plain (one walk of the window serves a whole
    /// row), else single elements. Returns the row length and the outer
    /// dimensions the rows are indexed by.
    fn rows(&self) -> (usize, Vec<usize>) {
        let rank = self.out_dims.len();
        if rank > 0 && self.innermost_plain() {
            (self.out_dims[rank - 1], self.out_dims[..rank - 1].to_vec())
        } else {
            (1, self.out_dims.clone())
        }
    }

    fn innermost_plain(&self) -> bool {
        self.window.last().is_some_and(|w| {
            w.size == 1
                && w.stride == 1
                && w.padding_low == 0
                && w.padding_high == 0
                && w.base_dilation == 1
                && w.window_dilation == 1
        })
    }

    /// The scan dimension and direction (true: prefix) if this window is a
    /// running fold along one dimension.
    fn scan(&self) -> Option<(usize, bool)> {
        let mut found = None;
        for (d, w) in self.window.iter().enumerate() {
            let plain = w.size == 1
                && w.stride == 1
                && w.padding_low == 0
                && w.padding_high == 0
                && w.base_dilation == 1
                && w.window_dilation == 1;
            if plain {
                continue;
            }
            let n = self.in_dims[d];
            let simple = w.stride == 1
                && w.base_dilation == 1
                && w.window_dilation == 1
                && w.size >= n
                && n > 0;
            let prefix = simple && w.padding_low == w.size as i64 - 1 && w.padding_high == 0;
            let suffix = simple && w.padding_high == w.size as i64 - 1 && w.padding_low == 0;
            if found.is_some() || !(prefix || suffix) {
                return None;
            }
            found = Some((d, prefix));
        }
        found
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::ReduceWindow { window, to_apply } => {
            let n = instr.operands.len() / 2;
            if n == 0 || instr.operands.len() != 2 * n {
                return Err(Error::invalid_argument(format!(
                    "reduce-window %{} needs as many init values as operands",
                    instr.name
                )));
            }
            let operand = ctx.operand_array(instr, 0)?;
            let geo = Geometry::new(
                &operand.dims,
                window,
                &format!("reduce-window %{}", instr.name),
            )?;
            let results = ctx.result_leaves(id).to_vec();
            let out_count: usize = geo.out_dims.iter().product();
            for k in 0..n {
                let a = ctx.operand_array(instr, k)?;
                if a.dims != operand.dims
                    || results.get(k).map(|r| r.size)
                        != Some(out_count * a.element_type.byte_size())
                {
                    return Err(Error::invalid_argument(format!(
                        "reduce-window %{}: result {} does not match windows {:?} over {}",
                        instr.name, instr.shape, geo.out_dims, a
                    )));
                }
            }
            if n == 1 {
                if let Some((op, ty)) = binary_reducer(ctx.module, *to_apply) {
                    if ty == operand.element_type {
                        let (input, init) =
                            (ctx.operand_slice(instr, 0)?, ctx.operand_slice(instr, 1)?);
                        if let Some(t) = typed(
                            instr.name.clone(),
                            geo.clone(),
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
            general(ctx, id, geo, n, *to_apply)
        }
        Op::SelectAndScatter {
            window,
            select,
            scatter,
        } => select_and_scatter(ctx, id, window, *select, *scatter),
        _ => Err(Error::internal("not a window op")),
    }
}

fn typed(
    name: String,
    geo: Geometry,
    op: BinaryOp,
    ty: ElementType,
    input: BufferSlice,
    init: BufferSlice,
    out: BufferSlice,
) -> Option<Box<dyn Thunk>> {
    struct Make {
        name: String,
        geo: Geometry,
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
            typed_thunk::<T, F>(self.name, self.geo, f, self.input, self.init, self.out)
        }
    }
    let make = Make {
        name,
        geo,
        input,
        init,
        out,
    };
    typed_combiner(op, ty, make)
}

fn typed_thunk<T: bytemuck::Pod + Send + Sync, F>(
    name: String,
    geo: Geometry,
    f: F,
    input: BufferSlice,
    init: BufferSlice,
    out: BufferSlice,
) -> Box<dyn Thunk>
where
    F: Fn(T, T) -> T + Copy + Send + Sync + 'static,
{
    let scan = geo.scan();
    thunk(name, "reduce-window", move |ctx| {
        // SAFETY: operands and result are distinct buffers of the checked shapes.
        let (x, init_v, out) = unsafe {
            (
                ctx.input::<T>(input),
                ctx.input::<T>(init)[0],
                ctx.output::<T>(out),
            )
        };
        let out_addr = out.as_mut_ptr() as usize;
        if let Some((d, prefix)) = scan {
            run_scan(&geo, x, init_v, out_addr, d, prefix, f);
            return Ok(());
        }
        let (row, outer_dims) = geo.rows();
        let (outer_rank, outer): (usize, usize) = (outer_dims.len(), outer_dims.iter().product());
        let window_size: usize = geo.window.iter().map(|w| w.size).product();
        parallel_for(
            outer,
            (GRAIN / (row * window_size).max(1)).max(1),
            |s, e| {
                let out = out_addr as *mut T;
                let mut acc = vec![init_v; row];
                let mut offsets = Vec::with_capacity(window_size);
                let mut index = unflatten(s, &outer_dims);
                for o in s..e {
                    for a in acc.iter_mut() {
                        *a = init_v;
                    }
                    offsets.clear();
                    geo.for_each_in_window(&index, outer_rank, |off| offsets.push(off));
                    super::reduce::accumulate_at(&mut acc, x, &offsets, &f);
                    // SAFETY: row `o` of the result; tasks own disjoint rows.
                    unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), out.add(o * row), row) };
                    platform_api::index::next_index(&mut index, &outer_dims);
                }
            },
        );
        Ok(())
    })
}

/// Running fold along dimension `d` (prefix or suffix), several lines at a
/// time so the dependent chain of each line overlaps the others'.
fn run_scan<T: Copy + Send + Sync, F: Fn(T, T) -> T + Sync>(
    geo: &Geometry,
    x: &[T],
    init: T,
    out_addr: usize,
    d: usize,
    prefix: bool,
    f: F,
) {
    let n = geo.in_dims[d];
    let inner: usize = geo.in_dims[d + 1..].iter().product();
    let outer: usize = geo.in_dims[..d].iter().product();
    if inner == 1 {
        scan_rows(n, outer, x, init, out_addr, prefix, f);
        return;
    }
    const LINES: usize = 16;
    // Lines are (outer, inner) pairs; consecutive inner positions are
    // neighbours in memory, so blocks of them share cache lines.
    let blocks_per_outer = inner.div_ceil(LINES);
    let jobs = outer * blocks_per_outer;
    parallel_for(jobs, (GRAIN / (n * LINES).max(1)).max(1), |s, e| {
        let out = out_addr as *mut T;
        for job in s..e {
            let o = job / blocks_per_outer;
            let i0 = (job % blocks_per_outer) * LINES;
            let lanes = LINES.min(inner - i0);
            let base = o * n * inner + i0;
            let mut acc = [init; LINES];
            for step in 0..n {
                let t = if prefix { step } else { n - 1 - step };
                let row = base + t * inner;
                for l in 0..lanes {
                    acc[l] = f(acc[l], x[row + l]);
                    // SAFETY: element (o, t, i0 + l) of the result, owned by
                    // this job.
                    unsafe { out.add(row + l).write(acc[l]) };
                }
            }
        }
    });
}

/// [`run_scan`] along the last dimension (a cumsum along rows): each row is
/// contiguous, so a job walks four rows side by side with one accumulator
/// each in a register. One row at a time waited on every add (and on the
/// accumulator's trip through memory): 3 ns/element.
fn scan_rows<T: Copy + Send + Sync, F: Fn(T, T) -> T + Sync>(
    n: usize,
    rows: usize,
    x: &[T],
    init: T,
    out_addr: usize,
    prefix: bool,
    f: F,
) {
    const ROWS: usize = 4;
    let jobs = rows.div_ceil(ROWS);
    parallel_for(jobs, (GRAIN / (n * ROWS).max(1)).max(1), |s, e| {
        for job in s..e {
            let r0 = job * ROWS;
            let count = ROWS.min(rows - r0);
            // SAFETY: rows `r0..r0 + count` of the result, owned by this job
            // (the result does not overlap the operand).
            let out = unsafe {
                std::slice::from_raw_parts_mut((out_addr as *mut T).add(r0 * n), count * n)
            };
            let src = &x[r0 * n..(r0 + count) * n];
            let at = |step: usize| if prefix { step } else { n - 1 - step };
            if count == ROWS {
                let (s0, rest) = src.split_at(n);
                let (s1, rest) = rest.split_at(n);
                let (s2, s3) = rest.split_at(n);
                let (o0, rest) = out.split_at_mut(n);
                let (o1, rest) = rest.split_at_mut(n);
                let (o2, o3) = rest.split_at_mut(n);
                let (mut a0, mut a1, mut a2, mut a3) = (init, init, init, init);
                for step in 0..n {
                    let t = at(step);
                    a0 = f(a0, s0[t]);
                    a1 = f(a1, s1[t]);
                    a2 = f(a2, s2[t]);
                    a3 = f(a3, s3[t]);
                    o0[t] = a0;
                    o1[t] = a1;
                    o2[t] = a2;
                    o3[t] = a3;
                }
            } else {
                for r in 0..count {
                    let mut a = init;
                    for step in 0..n {
                        let t = r * n + at(step);
                        a = f(a, src[t]);
                        out[t] = a;
                    }
                }
            }
        }
    });
}

fn general(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    geo: Geometry,
    n: usize,
    reducer: platform_api::hlo::CompId,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let program = Arc::new(ScalarProgram::compile(ctx.module, reducer)?);
    if program.param_count() != 2 * n || program.output_types().len() != n {
        return Err(Error::invalid_argument(format!(
            "reduce-window %{}: reducer signature does not fit {n} operands",
            instr.name
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
    let out_dims = geo.out_dims.clone();
    let total: usize = out_dims.iter().product();
    let rank = out_dims.len();
    // A prefix window (what `cumlogsumexp` and other cumulative ops with a
    // reducer of their own lower to) folds each element's window in the same
    // order as the running fold does, so the running fold gives the same bits
    // in O(n) instead of O(n²). Suffix windows fold their elements front to
    // back, which a running fold from the end would reorder: they stay general.
    let prefix_scan = geo.scan().filter(|&(_, prefix)| prefix).map(|(d, _)| {
        let n = geo.in_dims[d];
        let inner: usize = geo.in_dims[d + 1..].iter().product();
        let outer: usize = geo.in_dims[..d].iter().product();
        (n, inner, outer)
    });
    Ok(thunk(instr.name.clone(), "reduce-window", move |ctx| {
        let ins: Vec<usize> = inputs.iter().map(|s| ctx.ptr(*s) as usize).collect();
        let outs: Vec<usize> = results.iter().map(|s| ctx.ptr(*s) as usize).collect();
        // SAFETY: init operands are scalars of the operands' widths.
        let init_regs: Vec<Register> = inits
            .iter()
            .zip(&widths)
            .map(|(s, &w)| unsafe { load_register(ctx.ptr(*s), w) })
            .collect();
        if let Some((len, inner, outer)) = prefix_scan {
            parallel_for(outer * inner, (GRAIN / len.max(1)).max(1), |s, e| {
                let mut ev = program.evaluator();
                let mut acc = init_regs.clone();
                for line in s..e {
                    let base = (line / inner) * len * inner + line % inner;
                    acc.clone_from(&init_regs);
                    for t in 0..len {
                        let at = base + t * inner;
                        for k in 0..n {
                            ev.set_param_register(k, acc[k]);
                            // SAFETY: `at` indexes inside operand `k`, whose
                            // shape the result shares.
                            unsafe { ev.set_param(n + k, (ins[k] + at * widths[k]) as *const u8) };
                        }
                        ev.run();
                        for (k, a) in acc.iter_mut().enumerate() {
                            *a = ev.output(k);
                            // SAFETY: element `at` of result `k`, on this
                            // task's line.
                            unsafe {
                                std::ptr::copy_nonoverlapping(
                                    a.as_ptr().cast::<u8>(),
                                    (outs[k] + at * widths[k]) as *mut u8,
                                    widths[k],
                                )
                            };
                        }
                    }
                }
            });
            return Ok(());
        }
        parallel_for(total, 256, |s, e| {
            let mut ev = program.evaluator();
            let mut index = unflatten(s, &out_dims);
            let mut acc = init_regs.clone();
            for o in s..e {
                acc.clone_from(&init_regs);
                geo.for_each_in_window(&index, rank, |off| {
                    for k in 0..n {
                        ev.set_param_register(k, acc[k]);
                        // SAFETY: `off` indexes inside operand `k`.
                        unsafe { ev.set_param(n + k, (ins[k] + off * widths[k]) as *const u8) };
                    }
                    ev.run();
                    for (k, a) in acc.iter_mut().enumerate() {
                        *a = ev.output(k);
                    }
                });
                for k in 0..n {
                    // SAFETY: element `o` of result `k`, owned by this task.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            acc[k].as_ptr().cast::<u8>(),
                            (outs[k] + o * widths[k]) as *mut u8,
                            widths[k],
                        )
                    };
                }
                platform_api::index::next_index(&mut index, &out_dims);
            }
        });
        Ok(())
    }))
}

fn select_and_scatter(
    ctx: &LowerCtx<'_>,
    id: InstrId,
    window: &Window,
    select: platform_api::hlo::CompId,
    scatter: platform_api::hlo::CompId,
) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let operand = ctx.operand_array(instr, 0)?;
    let source = ctx.operand_array(instr, 1)?;
    let geo = Geometry::new(
        &operand.dims,
        window,
        &format!("select-and-scatter %{}", instr.name),
    )?;
    if geo.out_dims != source.dims {
        return Err(Error::invalid_argument(format!(
            "select-and-scatter %{}: source {source} does not match the {:?} windows of {operand}",
            instr.name, geo.out_dims
        )));
    }
    let select_prog = Arc::new(ScalarProgram::compile(ctx.module, select)?);
    let scatter_prog = Arc::new(ScalarProgram::compile(ctx.module, scatter)?);
    if select_prog.param_count() != 2 || select_prog.output_types() != [ElementType::Pred] {
        return Err(Error::invalid_argument(format!(
            "select-and-scatter %{}: select must map two scalars to pred",
            instr.name
        )));
    }
    if scatter_prog.param_count() != 2 || scatter_prog.output_types().len() != 1 {
        return Err(Error::invalid_argument(format!(
            "select-and-scatter %{}: scatter must combine two scalars",
            instr.name
        )));
    }
    let (op_slice, src_slice, init_slice) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.operand_slice(instr, 2)?,
    );
    let out = ctx.result_slice(id)?;
    let ty = operand.element_type;
    if source.element_type == ty && binary_reducer(ctx.module, scatter) == Some((BinaryOp::Add, ty))
    {
        if let Some(keep) = ordered_select(ctx.module, select, ty) {
            let slices = (op_slice, src_slice, init_slice, out);
            let name = instr.name.clone();
            match ty {
                ElementType::F32 => {
                    return Ok(typed_select_and_scatter::<f32>(name, geo, keep, slices))
                }
                ElementType::F64 => {
                    return Ok(typed_select_and_scatter::<f64>(name, geo, keep, slices))
                }
                _ => {}
            }
        }
    }
    let width = operand.element_type.byte_size();
    let src_width = source.element_type.byte_size();
    let n_out = operand.element_count();
    let src_dims = source.dims.clone();
    let rank = src_dims.len();
    Ok(thunk(
        instr.name.clone(),
        "select-and-scatter",
        move |ctx| {
            let (x, src, init, po) = (
                ctx.ptr(op_slice),
                ctx.ptr(src_slice),
                ctx.ptr(init_slice),
                ctx.ptr(out),
            );
            // Start from the init value everywhere.
            for i in 0..n_out {
                // SAFETY: `po` holds n_out elements; `init` one.
                unsafe { std::ptr::copy_nonoverlapping(init, po.add(i * width), width) };
            }
            let mut sel = select_prog.evaluator();
            let mut sca = scatter_prog.evaluator();
            let total: usize = src_dims.iter().product();
            let mut index = vec![0usize; rank];
            for s in 0..total {
                let mut chosen: Option<usize> = None;
                geo.for_each_in_window(&index, rank, |off| match chosen {
                    None => chosen = Some(off),
                    Some(c) => {
                        // SAFETY: both offsets index the operand.
                        unsafe {
                            sel.set_param(0, x.add(c * width));
                            sel.set_param(1, x.add(off * width));
                        }
                        sel.run();
                        if !sel.output_bool(0) {
                            chosen = Some(off);
                        }
                    }
                });
                if let Some(c) = chosen {
                    // SAFETY: `c` indexes the result (same shape as the operand);
                    // `s` indexes the source.
                    unsafe {
                        sca.set_param(0, po.add(c * width));
                        sca.set_param(1, src.add(s * src_width));
                        sca.run();
                        sca.write_output(0, po.add(c * width));
                    }
                }
                platform_api::index::next_index(&mut index, &src_dims);
            }
            Ok(())
        },
    ))
}

/// A `select` computation that is `compare(p0, p1)` with an ordering
/// direction on scalars of type `ty` (max pooling's `GE`): the direction.
fn ordered_select(
    module: &platform_api::HloModule,
    select: platform_api::hlo::CompId,
    ty: ElementType,
) -> Option<ComparisonDirection> {
    let comp = module.computations.get(select.index())?;
    let root = comp.root_instr();
    let Op::Compare {
        direction,
        compare_type,
    } = &root.op
    else {
        return None;
    };
    if !matches!(compare_type, None | Some(ComparisonType::Float)) {
        return None;
    }
    let is_param = |k: usize, number: usize| {
        root.operands
            .get(k)
            .and_then(|&o| comp.instructions.get(o.index()))
            .is_some_and(|i| {
                matches!(i.op, Op::Parameter { number: n } if n == number)
                    && i.shape
                        .as_array()
                        .is_some_and(|a| a.dims.is_empty() && a.element_type == ty)
            })
    };
    let ordering = matches!(
        direction,
        ComparisonDirection::Ge
            | ComparisonDirection::Gt
            | ComparisonDirection::Le
            | ComparisonDirection::Lt
    );
    (ordering && root.operands.len() == 2 && is_param(0, 0) && is_param(1, 1)).then_some(*direction)
}

/// Select-and-scatter whose select is an ordering comparison and whose
/// scatter adds (the gradient of max or min pooling), typed: for each source
/// element, the window's element the comparison keeps (the first kept when
/// `keep(current, candidate)` holds, exactly as the general path evaluates
/// the select computation, NaN included) gets the source value added.
fn typed_select_and_scatter<T>(
    name: String,
    geo: Geometry,
    keep: ComparisonDirection,
    (op_slice, src_slice, init_slice, out): (BufferSlice, BufferSlice, BufferSlice, BufferSlice),
) -> Box<dyn Thunk>
where
    T: bytemuck::Pod + PartialOrd + std::ops::Add<Output = T> + Send + Sync,
{
    thunk(name, "select-and-scatter", move |ctx| {
        // SAFETY: operands and result are distinct buffers of the checked shapes.
        let (x, src, init, po) = unsafe {
            (
                ctx.input::<T>(op_slice),
                ctx.input::<T>(src_slice),
                ctx.input::<T>(init_slice)[0],
                ctx.output::<T>(out),
            )
        };
        po.fill(init);
        let keeps = |a: T, b: T| match keep {
            ComparisonDirection::Ge => a >= b,
            ComparisonDirection::Gt => a > b,
            ComparisonDirection::Le => a <= b,
            _ => a < b,
        };
        // Windows of rows along the innermost dimension when its window is
        // plain (size 1, stride 1, no padding): one walk of the window per
        // row of `row` elements.
        let (row, outer_dims) = geo.rows();
        let (outer_rank, outer): (usize, usize) = (outer_dims.len(), outer_dims.iter().product());
        let mut index = vec![0usize; outer_rank];
        let (mut best, mut at) = (vec![init; row], vec![usize::MAX; row]);
        for o in 0..outer {
            at.fill(usize::MAX);
            geo.for_each_in_window(&index, outer_rank, |off| {
                for (j, (b, a)) in best.iter_mut().zip(at.iter_mut()).enumerate() {
                    let v = x[off + j];
                    if *a == usize::MAX || !keeps(*b, v) {
                        *b = v;
                        *a = off + j;
                    }
                }
            });
            for (j, &a) in at.iter().enumerate() {
                if a != usize::MAX {
                    po[a] = po[a] + src[o * row + j];
                }
            }
            platform_api::index::next_index(&mut index, &outer_dims);
        }
        Ok(())
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn output_dims_follow_xla_formula() {
        let mut w = WindowDim::of_size(3);
        w.stride = 2;
        w.padding_high = 1;
        let g = Geometry::new(&[112], &Window { dims: vec![w] }, "t").unwrap();
        assert_eq!(g.out_dims, vec![56]);
        let mut w = WindowDim::of_size(4096);
        w.padding_low = 4095;
        let g = Geometry::new(&[4096], &Window { dims: vec![w] }, "t").unwrap();
        assert_eq!(g.out_dims, vec![4096]);
        assert_eq!(g.scan(), Some((0, true)));
        let mut w = WindowDim::of_size(2);
        w.base_dilation = 2;
        let g = Geometry::new(&[3], &Window { dims: vec![w] }, "t").unwrap();
        // dilated input has 5 positions; windows of 2 → 4 outputs
        assert_eq!(g.out_dims, vec![4]);
        assert_eq!(g.input_coord(0, 1, 0), None);
        assert_eq!(g.input_coord(0, 1, 1), Some(1));
    }

    /// Scans along the last dimension (four rows at a time, and the rows left
    /// over) and along an outer one give, bit for bit, one in-order fold per
    /// line, prefix and suffix.
    #[test]
    fn scans_fold_each_line_in_order() {
        for (dims, d) in [
            (vec![7usize, 13], 1usize),
            (vec![9, 5], 0),
            (vec![3, 6, 4], 1),
        ] {
            for prefix in [true, false] {
                let n = dims[d];
                let mut wdims: Vec<WindowDim> =
                    dims.iter().map(|_| WindowDim::of_size(1)).collect();
                wdims[d] = WindowDim::of_size(n);
                if prefix {
                    wdims[d].padding_low = n as i64 - 1;
                } else {
                    wdims[d].padding_high = n as i64 - 1;
                }
                let g = Geometry::new(&dims, &Window { dims: wdims }, "t").unwrap();
                assert_eq!(g.scan(), Some((d, prefix)));
                let total: usize = dims.iter().product();
                let x: Vec<f32> = (0..total)
                    .map(|i| ((i * 7919) % 101) as f32 * 0.37 - 11.3)
                    .collect();
                let mut out = vec![0f32; total];
                run_scan(&g, &x, 0.5, out.as_mut_ptr() as usize, d, prefix, |a, b| {
                    a + b
                });
                let inner: usize = dims[d + 1..].iter().product();
                let outer: usize = dims[..d].iter().product();
                for o in 0..outer {
                    for i in 0..inner {
                        let mut acc = 0.5f32;
                        for step in 0..n {
                            let t = if prefix { step } else { n - 1 - step };
                            let at = (o * n + t) * inner + i;
                            acc += x[at];
                            assert_eq!(
                                out[at].to_bits(),
                                acc.to_bits(),
                                "{dims:?} d={d} prefix={prefix} at {at}"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Cumulative windows with a reducer of their own (neither commutative
    /// nor associative, so any other fold order changes the bits) against the
    /// evaluator's window-by-window fold: prefix windows over a middle and the
    /// last dimension, a variadic one, and a suffix window (the general path).
    #[test]
    fn cumulative_windows_with_a_reducer_of_their_own_fold_in_order() {
        use crate::runner::check::{agrees_with_evaluator, random_literal};
        let one = "c {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
                   h = f32[] constant(0.5)\n  m = f32[] multiply(a, h)\n  \
                   ROOT r = f32[] add(m, b)\n}\n";
        let two = "c {\n  a = f32[] parameter(0)\n  i = s32[] parameter(1)\n  \
                   b = f32[] parameter(2)\n  j = s32[] parameter(3)\n  \
                   h = f32[] constant(0.5)\n  m = f32[] multiply(a, h)\n  \
                   r = f32[] add(m, b)\n  k = s32[] subtract(i, j)\n  \
                   ROOT t = (f32[], s32[]) tuple(r, k)\n}\n";
        let cases = [
            (one, "f32[3,200,5]", "size=1x200x1 pad=0_0x199_0x0_0", false),
            (one, "f32[7,130]", "size=1x130 pad=0_0x129_0", false),
            (two, "f32[4,90,3]", "size=1x90x1 pad=0_0x89_0x0_0", true),
            (one, "f32[3,200,5]", "size=1x200x1 pad=0_0x0_199x0_0", false),
        ];
        for (k, (comb, shape, window, variadic)) in cases.iter().enumerate() {
            let ints = shape.replace("f32", "s32");
            let text = if *variadic {
                format!(
                    "HloModule m\n{comb}ENTRY e {{\n  x = {shape} parameter(0)\n  \
                     y = {ints} parameter(1)\n  z = f32[] constant(1)\n  \
                     w = s32[] constant(3)\n  r = ({shape}, {ints}) \
                     reduce-window(x, y, z, w), window={{{window}}}, to_apply=c\n  \
                     g = {shape} get-tuple-element(r), index=0\n  \
                     i = {ints} get-tuple-element(r), index=1\n  \
                     f = {shape} convert(i)\n  ROOT o = {shape} add(g, f)\n}}\n"
                )
            } else {
                format!(
                    "HloModule m\n{comb}ENTRY e {{\n  x = {shape} parameter(0)\n  \
                     z = f32[] constant(1)\n  ROOT r = {shape} reduce-window(x, z), \
                     window={{{window}}}, to_apply=c\n}}\n"
                )
            };
            let module = platform_api::HloModule::parse(&text).unwrap();
            let args = module
                .entry_program_shape()
                .parameters
                .iter()
                .enumerate()
                .map(|(i, s)| random_literal(s, 70 + 3 * k as u64 + i as u64, -50..50))
                .collect();
            agrees_with_evaluator(&format!("cumulative window {k}"), &text, args);
        }
    }
}
