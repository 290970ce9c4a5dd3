//! Product chains: `dot → row-local fusion → dot` run a few rows at a time.
//!
//! Attention computes scores `S = Q·Kᵀ` (`[batch, M, N]`), a row softmax
//! `P = f(S)` over `N`, and `O = P·V` (or `Vᵀ·Pᵀ`, whichever way the
//! program writes it). Run op by op, `S` and `P` are whole `[batch, M, N]`
//! arrays, by far the largest values of the program (16 MiB for 64 heads of
//! 256 queries and keys), although each row of `P` depends on the same row of
//! `S` only and each row of `O` on the same row of `P` only. A chain runs
//! the three steps on a block of rows of one batch at a time: the block's
//! rows of `S` from a small GEMM, the fusion's block program over those rows
//! ([`super::exec::run_rows`]), then the block's rows of `O` from a second
//! GEMM. Blocks run in parallel on the compute pool.
//!
//! The block of `S` and `P` lives in a per-thread working buffer, like the
//! GEMM's packing buffers: a block holds [`WORK_BYTES`], so it stays in the
//! L2 cache between the three steps, or [`MIN_BLOCK_ROWS`] rows when rows
//! are long (see [`pays`], the cost rule); its size does not grow with the
//! number of rows. Peak memory is then that of the
//! chain's operands and result, as with XLA's own fused attention.
//!
//! The compiler's fusion pass forms chains (`host-chain`, see
//! `compiler::chain_pass`) as a `kCustom` fusion whose computation is
//! exactly `dot`, `fusion`, `dot` over parameters; [`plan`] compiles one
//! and says why when it cannot, and the compiler then runs the computation
//! as a nested sequence of its three instructions, which is always correct.
//!
//! Conditions (checked by [`analyze`], shared by the pass and [`plan`]):
//! f32 or f64 throughout; the first product has one free rhs dimension
//! (`N`, the rows' length); the fusion keeps the product's shape, runs by
//! rows ([`BlockProgram::runs_by_rows`]) over exactly its rows, and reads it
//! only at its own positions; the second product contracts the fusion's last
//! dimension alone and batches over its leading batch dimensions, in order;
//! no dimension is empty (an empty product runs op by op).

use super::exec::run_rows;
use super::program::BlockProgram;
use crate::kernels::dot::{batch_offsets, merged_stride};
use crate::kernels::gemm::{self, Strided, StridedMut};
use crate::runtime::pool::parallel_for;
use crate::thunk::{BufferSlice, ExecuteContext, Thunk};
use platform_api::hlo::shape_inference::{infer_shape, NoComputations};
use platform_api::hlo::{HloComputation, HloInstruction, InstrId, Op};
use platform_api::{ArrayShape, CompileOptions, ElementType, Error, HloModule, Result, Shape};
use std::cell::RefCell;
use std::sync::{Arc, Mutex};

/// Bytes of `S` and `P` a block aims to hold (both together): small enough
/// to stay in a core's L2 cache from the first product to the second.
pub const WORK_BYTES: usize = 128 * 1024;

/// A matrix of every batch of an operand, read in place: batch `b`'s element
/// `(i, j)` is at element `batch_offsets[b] + i·rs + j·cs`.
#[derive(Clone, Debug)]
struct MatrixView {
    operand: usize,
    batch_offsets: Vec<usize>,
    rs: isize,
    cs: isize,
}

impl MatrixView {
    /// Operand `operand` of shape `shape` as `[batch, rows, cols]` matrices,
    /// if `rows` and `cols` each walk as one strided dimension.
    fn new(
        operand: usize,
        shape: &ArrayShape,
        batch: &[usize],
        rows: &[usize],
        cols: &[usize],
    ) -> Option<MatrixView> {
        let strides = platform_api::shape::row_major_strides(&shape.dims);
        Some(MatrixView {
            operand,
            rs: merged_stride(rows, shape, &strides)?,
            cs: merged_stride(cols, shape, &strides)?,
            batch_offsets: batch_offsets(shape, batch, &strides),
        })
    }
}

/// The geometry of a chain, from its three instructions.
pub struct Analysis {
    ty: ElementType,
    /// Batches, rows of the scores, their length, the first product's
    /// contracting size, and the other operand's free size in the second.
    nb: usize,
    m: usize,
    n: usize,
    k: usize,
    f: usize,
    /// The first product's operands (`M×K` and `K×N` per batch) and the
    /// second's other operand (`N×F` when the fusion's result is its lhs,
    /// `F×N` when it is its rhs).
    lhs: MatrixView,
    rhs: MatrixView,
    other: MatrixView,
    probs_is_lhs: bool,
    /// The fusion's block program, and for each of its parameters the
    /// operand it reads (`None`: the scores).
    program: Arc<BlockProgram>,
    row_params: Vec<Option<usize>>,
}

fn unsupported(why: impl std::fmt::Display) -> Error {
    Error::unimplemented(format!("not a product chain: {why}"))
}

/// Rows of `S` per block: [`WORK_BYTES`] of `S` and `P` where that holds
/// at least [`MIN_BLOCK_ROWS`] rows, else that many rows (long rows: the
/// block outgrows L2 but stays far smaller than `S`), and (rows allowing) a
/// few blocks per thread.
fn rows_per_block(a: &Analysis) -> usize {
    let row_bytes = a.n.max(1) * a.ty.byte_size() * 2;
    let threads = crate::runtime::pool::compute_pool().current_num_threads();
    let blocks_per_batch = (4 * threads).div_ceil(a.nb.max(1));
    (WORK_BYTES / row_bytes)
        .max(MIN_BLOCK_ROWS)
        .min(a.m.div_ceil(blocks_per_batch).max(8))
        .clamp(1, a.m.max(1))
}

/// Fewest rows a block has: each block packs the first product's `K×N`
/// operand and the second's `N×F` one again, which the products run apart
/// pack once per batch, so a block of `r` rows does `r` multiply-adds per
/// element packed. With 4 or 8 rows (what [`WORK_BYTES`] holds of rows
/// 2048 or 4096 long) the repacking made the chain 1.6 and 3.3 times XLA's
/// time where the products apart took 0.7 and 0.6 of it
/// (`bench/perf_matrix.py --class attention`).
pub const MIN_BLOCK_ROWS: usize = 64;

/// Largest working block (`S` and `P` rows of one block): past it the
/// chain is not formed and the products run apart.
pub const MAX_WORK_BYTES: usize = 16 << 20;

/// The cost rule: whether running the chain beats running its three
/// instructions apart, in time (blocks of enough rows, see
/// [`MIN_BLOCK_ROWS`]) and in memory (the chain never holds `S`).
pub fn pays(a: &Analysis) -> bool {
    rows_per_block(a) * a.n * a.ty.byte_size() * 2 <= MAX_WORK_BYTES
}

/// Checks that instructions `first → fusion → second` of `comp` can run as
/// a chain, where `operand_of` names the chain operand a value is (`None`
/// for a value computed in the chain). See the module doc for the
/// conditions.
pub fn analyze(
    module: &HloModule,
    comp: &HloComputation,
    [first_id, fusion_id, second_id]: [InstrId; 3],
    operand_of: &dyn Fn(InstrId) -> Option<usize>,
    options: &CompileOptions,
) -> Result<Analysis> {
    let (first, fusion, second) = (
        comp.instr(first_id),
        comp.instr(fusion_id),
        comp.instr(second_id),
    );
    let operand_shape = |instr: &HloInstruction, k: usize| -> Result<ArrayShape> {
        instr
            .operands
            .get(k)
            .and_then(|&o| comp.instr(o).shape.as_array().cloned())
            .ok_or_else(|| unsupported(format!("operand {k} of %{} is not an array", instr.name)))
    };
    let (Op::Dot { dnums: d1, .. }, Op::Fusion { .. }, Op::Dot { dnums: d2, .. }) =
        (&first.op, &fusion.op, &second.op)
    else {
        return Err(unsupported("not dot, fusion, dot"));
    };
    // For a module that did not go through the verifier: each product's
    // shape must be what its dimension numbers make of its operands' (so
    // every dimension number below is in range and paired sizes agree).
    let consistent = |dot: &HloInstruction| {
        let operands: Vec<&Shape> = dot.operands.iter().map(|&o| &comp.instr(o).shape).collect();
        infer_shape(&dot.op, &operands, &dot.shape, &NoComputations)
            .is_ok_and(|inferred| inferred.compatible(&dot.shape))
    };
    if !consistent(first) || !consistent(second) {
        return Err(unsupported(
            "a product's shape is not what its dimension numbers make of its operands",
        ));
    }
    let array = |i: &HloInstruction| {
        i.shape
            .as_array()
            .cloned()
            .ok_or_else(|| unsupported(format!("%{} is a tuple", i.name)))
    };
    let scores = array(first)?;
    let probs = array(fusion)?;
    let result = array(second)?;
    let ty = scores.element_type;
    if !matches!(ty, ElementType::F32 | ElementType::F64)
        || probs.element_type != ty
        || result.element_type != ty
        || probs.dims != scores.dims
    {
        return Err(unsupported("types or shapes differ along the chain"));
    }
    // The first product: [batch..., M..., N].
    let (Some(q), Some(kk)) = (
        first.operands.first().and_then(|&o| operand_of(o)),
        first.operands.get(1).and_then(|&o| operand_of(o)),
    ) else {
        return Err(unsupported(
            "the first product's operands are computed in the chain",
        ));
    };
    let q_shape = operand_shape(first, 0)?;
    let k_shape = operand_shape(first, 1)?;
    if q_shape.element_type != ty || k_shape.element_type != ty {
        return Err(unsupported("the first product converts its operands"));
    }
    let free = |rank: usize, batch: &[usize], contracting: &[usize]| -> Vec<usize> {
        (0..rank)
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .collect()
    };
    let q_free = free(q_shape.rank(), &d1.lhs_batch_dims, &d1.lhs_contracting_dims);
    let k_free = free(k_shape.rank(), &d1.rhs_batch_dims, &d1.rhs_contracting_dims);
    if k_free.len() != 1 {
        return Err(unsupported("the scores' rows are not one dimension"));
    }
    let nbd = d1.lhs_batch_dims.len();
    let nb: usize = d1.lhs_batch_dims.iter().map(|&d| q_shape.dims[d]).product();
    let m: usize = q_free.iter().map(|&d| q_shape.dims[d]).product();
    let n = k_shape.dims[k_free[0]];
    let k: usize = d1
        .lhs_contracting_dims
        .iter()
        .map(|&d| q_shape.dims[d])
        .product();
    if nb * m * n != scores.element_count() {
        return Err(unsupported("the scores' shape"));
    }
    let lhs = MatrixView::new(
        q,
        &q_shape,
        &d1.lhs_batch_dims,
        &q_free,
        &d1.lhs_contracting_dims,
    )
    .ok_or_else(|| unsupported("the first product's lhs is not a strided matrix"))?;
    let rhs = MatrixView::new(
        kk,
        &k_shape,
        &d1.rhs_batch_dims,
        &d1.rhs_contracting_dims,
        &k_free,
    )
    .ok_or_else(|| unsupported("the first product's rhs is not a strided matrix"))?;

    // The fusion: reads the scores once, at their own positions.
    let scores_param = match fusion.operands.iter().position(|&o| o == first_id) {
        Some(p) if fusion.operands.iter().filter(|&&o| o == first_id).count() == 1 => p,
        _ => return Err(unsupported("the fusion reads the scores more than once")),
    };
    let mut row_params = Vec::with_capacity(fusion.operands.len());
    for (p, &o) in fusion.operands.iter().enumerate() {
        row_params.push(if p == scores_param {
            None
        } else {
            Some(
                operand_of(o)
                    .ok_or_else(|| unsupported("a fusion operand computed in the chain"))?,
            )
        });
    }
    let plan = super::plan(module, fusion, options)?;
    let program = plan.program;
    if !program.runs_by_rows()
        || program.rows != nb * m
        || program.row_len != n
        || !program.own_position_params.contains(&scores_param)
        || program.outputs[0].ty != ty
        || program.outputs[0].count != nb * m * n
    {
        return Err(unsupported(
            "the fusion does not run row by row over the scores",
        ));
    }

    // The second product: contracts the last dimension of the fusion's
    // result, batches over its leading dimensions in order.
    let rank = probs.rank();
    let positions: Vec<usize> = second
        .operands
        .iter()
        .enumerate()
        .filter(|(_, &o)| o == fusion_id)
        .map(|(i, _)| i)
        .collect();
    let probs_is_lhs = match positions[..] {
        [0] => true,
        [1] => false,
        _ => return Err(unsupported("the second product reads the fusion twice")),
    };
    let (p_batch, p_contracting, o_batch, o_contracting) = if probs_is_lhs {
        (
            &d2.lhs_batch_dims,
            &d2.lhs_contracting_dims,
            &d2.rhs_batch_dims,
            &d2.rhs_contracting_dims,
        )
    } else {
        (
            &d2.rhs_batch_dims,
            &d2.rhs_contracting_dims,
            &d2.lhs_batch_dims,
            &d2.lhs_contracting_dims,
        )
    };
    if *p_batch != (0..nbd).collect::<Vec<_>>() || *p_contracting != [rank - 1] {
        return Err(unsupported("the second product does not contract the rows"));
    }
    let v_pos = if probs_is_lhs { 1 } else { 0 };
    let v = second
        .operands
        .get(v_pos)
        .and_then(|&o| operand_of(o))
        .ok_or_else(|| {
            unsupported("the second product's other operand is computed in the chain")
        })?;
    let v_shape = operand_shape(second, v_pos)?;
    if v_shape.element_type != ty {
        return Err(unsupported("the second product converts its operand"));
    }
    let v_free = free(v_shape.rank(), o_batch, o_contracting);
    let f: usize = v_free.iter().map(|&d| v_shape.dims[d]).product();
    if nb * m * f != result.element_count() {
        return Err(unsupported("the result's shape"));
    }
    if [nb, m, n, k, f].contains(&0) {
        return Err(unsupported("an empty product"));
    }
    let other = if probs_is_lhs {
        MatrixView::new(v, &v_shape, o_batch, o_contracting, &v_free)
    } else {
        MatrixView::new(v, &v_shape, o_batch, &v_free, o_contracting)
    }
    .ok_or_else(|| unsupported("the second product's operand is not a strided matrix"))?;
    if lhs.batch_offsets.len() != nb
        || rhs.batch_offsets.len() != nb
        || other.batch_offsets.len() != nb
    {
        return Err(unsupported("batch sizes differ"));
    }
    Ok(Analysis {
        ty,
        nb,
        m,
        n,
        k,
        f,
        lhs,
        rhs,
        other,
        probs_is_lhs,
        program,
        row_params,
    })
}

/// A chain compiled before buffer assignment.
pub struct ChainPlan {
    name: String,
    analysis: Analysis,
    rows_per_block: usize,
}

/// The chain's three instructions inside fused computation `comp`:
/// parameters, then `dot`, `fusion`, `dot` (the root), nothing else.
fn chain_instructions(comp: &HloComputation) -> Option<(InstrId, InstrId, InstrId)> {
    let mut computed = comp
        .ids()
        .filter(|&id| !matches!(comp.instr(id).op, Op::Parameter { .. }));
    let (a, b, c) = (computed.next()?, computed.next()?, computed.next()?);
    if computed.next().is_some() || comp.root != c {
        return None;
    }
    let ok = matches!(comp.instr(a).op, Op::Dot { .. })
        && matches!(comp.instr(b).op, Op::Fusion { .. })
        && matches!(comp.instr(c).op, Op::Dot { .. })
        && comp.instr(b).operands.contains(&a)
        && comp.instr(c).operands.contains(&b);
    ok.then_some((a, b, c))
}

/// Compiles fusion `instr` as a chain, or says why it is not one.
pub fn plan(
    module: &HloModule,
    instr: &HloInstruction,
    options: &CompileOptions,
) -> Result<ChainPlan> {
    let Op::Fusion { calls, .. } = &instr.op else {
        return Err(unsupported("not a fusion"));
    };
    let comp = module
        .computations
        .get(calls.index())
        .ok_or_else(|| Error::internal(format!("%{}: no fused computation", instr.name)))?;
    let (a, b, c) = chain_instructions(comp).ok_or_else(|| unsupported("not dot, fusion, dot"))?;
    let operand_of = |id: InstrId| match comp.instr(id).op {
        Op::Parameter { number } if number < instr.operands.len() => Some(number),
        _ => None,
    };
    let analysis = analyze(module, comp, [a, b, c], &operand_of, options)?;
    let rows_per_block = rows_per_block(&analysis);
    Ok(ChainPlan {
        name: instr.name.clone(),
        analysis,
        rows_per_block,
    })
}

impl ChainPlan {
    /// The thunk that runs the chain with these buffers: the fusion's
    /// operand leaves (in order) and its result.
    pub fn into_thunk(
        self,
        operands: Vec<BufferSlice>,
        result: BufferSlice,
    ) -> Result<Box<dyn Thunk>> {
        let a = &self.analysis;
        let t = a.ty.byte_size();
        // Every element each view can reach must lie in its operand.
        let reach = |v: &MatrixView, rows: usize, cols: usize| -> Option<usize> {
            let last = |stride: isize, count: usize| {
                stride.unsigned_abs().checked_mul(count.saturating_sub(1))
            };
            let max_off = v.batch_offsets.iter().max().copied().unwrap_or(0);
            max_off
                .checked_add(last(v.rs, rows)?)?
                .checked_add(last(v.cs, cols)?)?
                .checked_add(1)?
                .checked_mul(t)
        };
        let (v_rows, v_cols) = if a.probs_is_lhs {
            (a.n, a.f)
        } else {
            (a.f, a.n)
        };
        let fits = |v: &MatrixView, rows, cols| {
            operands
                .get(v.operand)
                .is_some_and(|s| reach(v, rows, cols).is_some_and(|need| need <= s.size))
        };
        let row_params_fit = a
            .row_params
            .iter()
            .zip(&a.program.param_bytes)
            .all(|(p, &bytes)| p.is_none_or(|k| operands.get(k).is_some_and(|s| s.size >= bytes)));
        if !fits(&a.lhs, a.m, a.k)
            || !fits(&a.rhs, a.k, a.n)
            || !fits(&a.other, v_rows, v_cols)
            || !row_params_fit
            || result.size < a.nb * a.m * a.f * t
        {
            return Err(Error::internal(format!(
                "%{}: the chain's operands or result do not fit its buffers",
                self.name
            )));
        }
        Ok(Box::new(ChainThunk {
            plan: self,
            operands,
            result,
        }))
    }
}

/// A product chain with its buffers.
struct ChainThunk {
    plan: ChainPlan,
    operands: Vec<BufferSlice>,
    result: BufferSlice,
}

/// The run's addresses, shared by the blocks.
struct Addresses {
    operands: Vec<*const u8>,
    result: *mut u8,
}

// SAFETY: blocks read the operands and write disjoint parts of the result.
unsafe impl Sync for Addresses {}

thread_local! {
    /// Each thread's working buffer for a block's scores and probabilities.
    static WORK: RefCell<Vec<u64>> = const { RefCell::new(Vec::new()) };
}

impl Thunk for ChainThunk {
    fn name(&self) -> &str {
        &self.plan.name
    }
    fn category(&self) -> &str {
        "fusion"
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        let addresses = Addresses {
            operands: self
                .operands
                .iter()
                .map(|s| ctx.ptr(*s).cast_const())
                .collect(),
            result: ctx.ptr(self.result),
        };
        match self.plan.analysis.ty {
            ElementType::F32 => self.run::<f32>(&addresses),
            _ => self.run::<f64>(&addresses),
        }
    }
}

impl ChainThunk {
    fn run<T: gemm::Element>(&self, at: &Addresses) -> Result<()> {
        let a = &self.plan.analysis;
        let rows = self.plan.rows_per_block;
        let per_batch = a.m.div_ceil(rows);
        let blocks = a.nb * per_batch;
        let words = (2 * rows * a.n * std::mem::size_of::<T>()).div_ceil(8);
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        parallel_for(blocks, 1, |b0, b1| {
            let done = WORK.with(|work| -> Result<()> {
                let mut work = work.borrow_mut();
                if work.len() < words {
                    let more = words - work.len();
                    work.try_reserve_exact(more).map_err(|_| {
                        Error::resource_exhausted(format!(
                            "%{}: cannot allocate {} bytes of working rows",
                            self.plan.name,
                            words * 8
                        ))
                    })?;
                    work.resize(words, 0);
                }
                let scores = work.as_mut_ptr().cast::<T>();
                for block in b0..b1 {
                    let batch = block / per_batch;
                    let m0 = (block % per_batch) * rows;
                    let nr = rows.min(a.m - m0);
                    // SAFETY: the views fit their operands (checked in
                    // `into_thunk`); the working buffer holds two blocks; each
                    // block writes its own rows of the result.
                    unsafe { self.block(at, batch, m0, nr, scores, scores.add(rows * a.n)) };
                }
                Ok(())
            });
            if let Err(e) = done {
                if let Ok(mut slot) = failed.lock() {
                    slot.get_or_insert(e);
                }
            }
        });
        match failed.into_inner() {
            Ok(Some(e)) => Err(e),
            _ => Ok(()),
        }
    }

    /// Rows `m0..m0 + nr` of batch `batch`: their scores into `s`, the
    /// fusion's values into `p`, their part of the result.
    ///
    /// # Safety
    /// As in [`ChainThunk::run`]: `s` and `p` hold `nr · n` elements each.
    unsafe fn block<T: gemm::Element>(
        &self,
        at: &Addresses,
        batch: usize,
        m0: usize,
        nr: usize,
        s: *mut T,
        p: *mut T,
    ) {
        let a = &self.plan.analysis;
        let (n, m, f) = (a.n, a.m, a.f);
        let base = |v: &MatrixView| {
            at.operands[v.operand]
                .cast::<T>()
                .wrapping_add(v.batch_offsets[batch])
        };
        let serial = gemm::Options {
            accumulate: false,
            parallel: false,
            level: None,
        };
        let q = Strided {
            ptr: base(&a.lhs).wrapping_offset(m0 as isize * a.lhs.rs),
            rs: a.lhs.rs,
            cs: a.lhs.cs,
        };
        let k = Strided {
            ptr: base(&a.rhs),
            rs: a.rhs.rs,
            cs: a.rhs.cs,
        };
        // SAFETY: the caller's contract.
        unsafe {
            gemm::gemm(
                nr,
                n,
                a.k,
                q,
                k,
                StridedMut {
                    ptr: s,
                    rs: n as isize,
                    cs: 1,
                },
                serial,
            )
        };
        // The block program addresses rows by their place in the whole
        // domain: shift the working buffers back by the block's first row,
        // so that only the block's rows are touched through them.
        let row0 = batch * m + m0;
        let shift = row0 * n * std::mem::size_of::<T>();
        let params: crate::thunk::AddressList<*const u8> = a
            .row_params
            .iter()
            .map(|p| match p {
                None => s.cast::<u8>().cast_const().wrapping_sub(shift),
                Some(k) => at.operands[*k],
            })
            .collect();
        let outs = [p.cast::<u8>().wrapping_sub(shift)];
        // SAFETY: the program runs by rows and reads the scores only at the
        // rows' own positions, which the shifted address maps onto `s`.
        unsafe { run_rows(&a.program, &params, &outs, row0..row0 + nr) };
        let out = at.result.cast::<T>();
        let v = Strided {
            ptr: base(&a.other),
            rs: a.other.rs,
            cs: a.other.cs,
        };
        // SAFETY: the caller's contract; the block's part of the result.
        unsafe {
            if a.probs_is_lhs {
                let probs = Strided {
                    ptr: p.cast_const(),
                    rs: n as isize,
                    cs: 1,
                };
                let c = StridedMut {
                    ptr: out.wrapping_add((batch * m + m0) * f),
                    rs: f as isize,
                    cs: 1,
                };
                gemm::gemm(nr, f, n, probs, v, c, serial)
            } else {
                let probs_t = Strided {
                    ptr: p.cast_const(),
                    rs: 1,
                    cs: n as isize,
                };
                let c = StridedMut {
                    ptr: out.wrapping_add(batch * f * m + m0),
                    rs: m as isize,
                    cs: 1,
                };
                gemm::gemm(f, nr, n, v, probs_t, c, serial)
            }
        }
    }
}
