//! Running a [`BlockProgram`]: the fusion's thunk.
//!
//! The full domain is split into a fixed number of tasks (ranges of rows, or
//! of row chunks), fixed when the fusion is planned so results never depend on
//! how many threads there are; one task runs inline, more go to the compute
//! pool. A task walks its blocks and runs every step on each; its block
//! registers live in a per-thread register file that is reused by every fusion
//! the thread runs (no allocation per run). Per task, uniform values are
//! computed once and splatted, and a short row repeated down the block (a
//! per-channel vector) is expanded once, into a block the task allocates (one
//! per such row, the only allocation of a run besides the task list). Column reductions accumulate into per-task
//! partial rows in the fusion's scratch and are combined in task order
//! afterwards; with chunked rows, row reductions leave one partial value per
//! chunk, combined (with the outer-domain steps that follow) afterwards.

use super::jit;
use super::program::{
    BlockProgram, Home, LeafPlan, Mode, ReducePlan, Reducer, SlotDom, Source, Step, ROW_CALL_MIN,
};
use super::view::{gather, View};
use crate::elementwise_ops::{self as ops, Arg};
use crate::kernels::scalar_program::{load_register, Register, ScalarEval};
use crate::lowering::BlockProducer;
use crate::runtime::pool::run_tasks;
use crate::thunk::{AddressList, BufferSlice, ExecuteContext, Thunk};
use platform_api::Result;
use smallvec::SmallVec;
use std::cell::RefCell;
use std::sync::Arc;

/// One 64-byte-aligned cache line, the unit of expanded operands.
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Line([u8; 64]);

/// One page of register memory. Registers are the hottest memory of a
/// fusion (every step reads and writes them), so they get whole pages of
/// their own: no allocator header or other thread's data shares a line or a
/// page with them. With 64-byte lines sized to the request, a bf16 chain's
/// widening stores stalled on the register lines and the chain ran 15%
/// slower, depending on where the allocator happened to put them.
#[derive(Clone, Copy)]
#[repr(C, align(4096))]
struct Page([u8; 4096]);

thread_local! {
    static REGISTERS: RefCell<Vec<Page>> = const { RefCell::new(Vec::new()) };
}

/// Runs `f` with at least `bytes` bytes of page-aligned register memory.
fn with_registers<R>(bytes: usize, f: impl FnOnce(*mut u8) -> R) -> R {
    let pages = bytes.div_ceil(4096).max(1);
    REGISTERS.with(|cell| match cell.try_borrow_mut() {
        Ok(mut regs) => {
            if regs.len() < pages {
                regs.resize(pages, Page([0; 4096]));
            }
            f(regs.as_mut_ptr().cast())
        }
        // Re-entered on this thread (not expected): use a fresh block.
        Err(_) => {
            let mut regs = vec![Page([0; 4096]); pages];
            f(regs.as_mut_ptr().cast())
        }
    })
}

/// The addresses one run works on.
struct Env<'p> {
    p: &'p BlockProgram,
    params: AddressList<*const u8>,
    outs: AddressList<*mut u8>,
    consts: AddressList<*const u8>,
    /// Each dynamic slice's offset in elements, for this run.
    dynamic: AddressList<usize>,
    scratch: *mut u8,
    /// The producer of one parameter, run on each block's positions just
    /// before the block (see [`crate::lowering::BlockProducer`]), with its addresses.
    producer: Option<(&'p dyn BlockProducer, AddressList<*mut u8>)>,
}

// SAFETY: the addresses are the run's buffers; tasks write disjoint blocks of
// the outputs and disjoint partial rows of the scratch (see `run_task`).
unsafe impl Sync for Env<'_> {}

/// Which part of the domain a block covers.
#[derive(Clone, Copy)]
struct Block {
    /// First full-domain position and count.
    pos: usize,
    n: usize,
    /// First row and number of rows (whole rows), or the chunk's row.
    row0: usize,
    nr: usize,
    /// Chunked rows: the chunk's index.
    chunk: usize,
    /// The block's first row is the task's first row (column partials start
    /// there).
    task_first: bool,
    task: usize,
}

/// Where readers find a slot's block.
#[derive(Clone, Copy)]
enum Val {
    /// The block's elements (in the slot's register, an output, or a leaf's
    /// memory).
    Block(*mut u8),
    /// One value per row of the block (a row reduction broadcast along the
    /// row), not yet expanded.
    PerRow(*mut u8),
    /// One value for every position (uniform), not yet expanded.
    Scalar(*mut u8),
    /// The same row (`row_len` elements) for every row of the block, read in
    /// place (a broadcast bias).
    RowRepeat(*mut u8),
}

/// Per-task state (its lists on the stack for small programs: a loop body's
/// fusion runs once per iteration, see [`AddressList`]).
struct TaskState<'p> {
    /// Where each slot's block is written (register or output position).
    home: AddressList<*mut u8>,
    val: AddressList<Val>,
    inits: Vec<Vec<Register>>,
    evals: Vec<Option<ScalarEval<'p>>>,
    /// The next block's memory, fetched ahead while this block computes.
    ahead: Ahead,
    /// Short repeated rows (a per-channel scale), expanded to a whole block
    /// once per task: (the row's address, the block).
    expanded: Vec<(*mut u8, Vec<Line>)>,
    /// Periodic leaves ([`LeafPlan::periodic`]), their run repeated over a
    /// block and one period more, once per task: (the run's address, the
    /// repetition).
    periodic: Vec<(*const u8, Vec<Line>)>,
    /// Leaves that read one value over a whole block (a per-channel scale
    /// over an NCHW plane), per leaf slot: the value's address and a
    /// register-sized block of it, refilled only when a block reads another
    /// value.
    splats: Vec<(usize, *const u8, Vec<Line>)>,
}

/// Where [`Env::load`] left a block of a leaf.
enum Loaded {
    /// The block's values, contiguous.
    At(*mut u8),
    /// One value for the whole block, at this element offset in the leaf
    /// (nothing written).
    Splat(isize),
}

/// The contiguous memory the next block will read (its leaves), fetched
/// toward L2 while the current block computes. A block's steps alternate
/// between memory-bound passes (the loads at the start) and compute-bound ones
/// (everything after, on registers in L1); the hardware prefetcher follows
/// demand reads only a few lines ahead, so without this the memory sits idle
/// while a block computes and the core waits when the next block starts. The
/// fetches are touches that start the L2's own streamer on each run (see
/// [`FETCH_STRIDE_LINES`]), issued a share after each step. Only the
/// leaves the planner lists in `fetch_ahead` are fetched.
#[derive(Default)]
struct Ahead {
    /// (first byte, bytes) of each run.
    runs: Vec<(*const u8, usize)>,
    /// Fetches all runs need, and how many have been issued.
    fetches: usize,
    fetched: usize,
    /// Run and line within it that the next fetch reads.
    run: usize,
    line_in_run: usize,
}

const LINE: usize = 64;
/// Lines between two fetches: one line in 16 (1 KiB) starts the L2's own
/// streamer on the run, which brings the lines between without holding the
/// core's fill buffers (a fetch per line stalled on them: elementwise_4m on
/// two cores 4.4 ms with every line, 3.8 with one in 16, mean of 8
/// alternating runs).
const FETCH_STRIDE_LINES: usize = 16;

impl Ahead {
    fn clear(&mut self) {
        self.runs.clear();
        self.fetches = 0;
        self.fetched = 0;
        self.run = 0;
        self.line_in_run = 0;
    }

    fn push(&mut self, start: *const u8, bytes: usize) {
        if bytes >= LINE {
            self.fetches += bytes.div_ceil(LINE * FETCH_STRIDE_LINES);
            self.runs.push((start, bytes));
        }
    }

    /// Issues fetches until `upto` of them (in total) have been issued.
    fn fetch_until(&mut self, upto: usize) {
        while self.fetched < upto.min(self.fetches) {
            let (start, bytes) = self.runs[self.run];
            crate::kernels::prefetch_l2(start.wrapping_add(self.line_in_run * LINE));
            self.fetched += 1;
            self.line_in_run += FETCH_STRIDE_LINES;
            if self.line_in_run * LINE >= bytes {
                self.run += 1;
                self.line_in_run = 0;
            }
        }
    }
}

impl Env<'_> {
    fn leaf_base(&self, leaf: &LeafPlan) -> *const u8 {
        match leaf.source {
            Source::Param(k) => match leaf.dynamic {
                Some(d) => self.params[k].wrapping_add(self.dynamic[d] * leaf.width),
                None => self.params[k],
            },
            Source::Constant(c) => self.consts[c],
            Source::Index => std::ptr::null(),
        }
    }

    /// Reads `n` positions from `start` of a leaf into `dst`; returns where
    /// the values are (`dst`, or the leaf's memory when it is contiguous),
    /// or the one value every position reads (then `dst` is untouched).
    ///
    /// # Safety
    /// `dst` has room for `n` elements; the plan checked every offset.
    unsafe fn load(&self, leaf: &LeafPlan, start: usize, n: usize, dst: *mut u8) -> Loaded {
        let w = leaf.width;
        if let Some(index) = &leaf.index {
            leaf.view.for_each_run(start, n, |pos, off, len, stride| {
                // SAFETY: `dst` holds `n` elements.
                unsafe { index.call(off, stride, len, dst.add(pos * w)) };
            });
            return Loaded::At(dst);
        }
        let base = self.leaf_base(leaf);
        if let Some((outer, r)) = &leaf.repeated {
            // SAFETY: forwarded.
            unsafe { load_repeated(outer, *r, w, base, start, n, dst) };
            return Loaded::At(dst);
        }
        if let Some((dims, strides, at)) = &leaf.short_runs {
            crate::with_width!(w, W => {
                // SAFETY: forwarded; the plan checked every offset of the
                // stage, and `W` is `w` bytes wide.
                unsafe {
                    load_short_runs::<W>(dims, strides, *at, base.cast(), start, n, dst.cast())
                };
                return Loaded::At(dst);
            }, _ => {});
        }
        let mut whole = None;
        let mut first = true;
        leaf.view.for_each_run(start, n, |pos, off, len, stride| {
            if first && len == n && (stride == 1 || stride == 0 && n > 1) {
                whole = Some((off, stride));
                return;
            }
            first = false;
            // SAFETY: the plan checked the offsets; `dst` holds `n`.
            unsafe { gather(w, base, off, len, stride, dst.add(pos * w)) };
        });
        match whole {
            // SAFETY: inside the leaf (checked at plan time).
            Some((off, 1)) => Loaded::At(unsafe { base.offset(off * w as isize).cast_mut() }),
            Some((off, _)) => Loaded::Splat(off),
            None => Loaded::At(dst),
        }
    }
}

/// Loads positions `start..start + n` of a view that reads each value `r`
/// times in a row: the distinct values through `outer`, a chunk at a time
/// into a stack buffer, each then written `r` times.
///
/// # Safety
/// As [`Env::load`]: every offset `outer` reads lies in the leaf at `base`
/// (elements of `w` bytes, at most 16), and `dst` holds `n` elements.
unsafe fn load_repeated(
    outer: &View,
    r: usize,
    w: usize,
    base: *const u8,
    start: usize,
    n: usize,
    dst: *mut u8,
) {
    const CHUNK: usize = 256;
    // Not zeroed (a 4 KiB memset per call): each chunk's values are
    // gathered before they are read.
    let mut values = std::mem::MaybeUninit::<[u8; CHUNK * 16]>::uninit();
    let values = values.as_mut_ptr().cast::<u8>();
    debug_assert!(w <= 16);
    let (first, last) = (start / r, (start + n - 1) / r);
    let mut v0 = first;
    let mut pos = 0;
    while v0 <= last {
        let m = CHUNK.min(last + 1 - v0);
        outer.for_each_run(v0, m, |p, off, len, stride| {
            // SAFETY: the plan checked the offsets; `values` holds `CHUNK`
            // elements of up to 16 bytes.
            unsafe { gather(w, base, off, len, stride, values.add(p * w)) };
        });
        // The first value may start mid-repeat and the last end before its
        // repeats do: those are written one by one, the whole ones in between
        // as one `[W; r]` store each where `r` is a power of two up to 16.
        let head = (start.saturating_sub(v0 * r)).min(r);
        let first_full = usize::from(head > 0);
        let end = start + n;
        let last_full = if (v0 + m) * r > end { m - 1 } else { m };
        macro_rules! expand {
            ($W:ty) => {{
                let src = values.cast_const().cast::<$W>();
                let out = dst.cast::<$W>();
                let partial = |k: usize, pos: &mut usize| {
                    let lo = ((v0 + k) * r).max(start);
                    let hi = ((v0 + k + 1) * r).min(end);
                    // SAFETY: `k < m` values were gathered; positions
                    // `pos..pos + hi - lo` lie in `dst`.
                    unsafe {
                        let v = src.add(k).read_unaligned();
                        for _ in lo..hi {
                            out.add(*pos).write_unaligned(v);
                            *pos += 1;
                        }
                    }
                };
                if first_full == 1 {
                    partial(0, &mut pos);
                }
                let whole = last_full.saturating_sub(first_full);
                // SAFETY: values `first_full..last_full` were gathered and
                // their `whole · r` positions lie in `dst` from `pos`.
                unsafe {
                    let (src, at) = (src.add(first_full), out.add(pos));
                    match r {
                        2 => expand_whole::<$W, 2>(src, whole, at),
                        4 => expand_whole::<$W, 4>(src, whole, at),
                        8 => expand_whole::<$W, 8>(src, whole, at),
                        16 => expand_whole::<$W, 16>(src, whole, at),
                        _ => {
                            for k in 0..whole {
                                let v = src.add(k).read_unaligned();
                                for j in 0..r {
                                    at.add(k * r + j).write_unaligned(v);
                                }
                            }
                        }
                    }
                }
                pos += whole * r;
                if last_full < m && last_full >= first_full {
                    partial(last_full, &mut pos);
                }
            }};
        }
        match w {
            1 => expand!(u8),
            2 => expand!(u16),
            4 => expand!(u32),
            8 => expand!(u64),
            _ => expand!([u8; 16]),
        }
        v0 += m;
    }
    debug_assert_eq!(pos, n);
}

/// Writes each of `m` values at `src` `R` times in a row from `out`, one
/// `[W; R]` store per value.
///
/// # Safety
/// `src` holds `m` values; `out` has room for `m · R`.
#[inline(always)]
unsafe fn expand_whole<W: Copy, const R: usize>(src: *const W, m: usize, out: *mut W) {
    for k in 0..m {
        // SAFETY: forwarded.
        unsafe {
            let v = src.add(k).read_unaligned();
            out.add(k * R).cast::<[W; R]>().write_unaligned([v; R]);
        }
    }
}

/// Loads positions `start..start + n` of a one-stage view (`dims`,
/// `strides`, `at`) whose innermost dimension is a short contiguous run: the
/// second-innermost dimension is walked in a tight loop and each run copied
/// inline, the outer dimensions carried between rows.
///
/// # Safety
/// As [`Env::load`]: every offset the stage reads lies in the leaf at `base`
/// (elements of `W`), `dst` holds `n` elements; `2 <= dims.len() <= 16`.
unsafe fn load_short_runs<W: Copy>(
    dims: &[usize],
    strides: &[isize],
    at: isize,
    base: *const W,
    start: usize,
    n: usize,
    dst: *mut W,
) {
    let rank = dims.len();
    let (r, rows, row_stride) = (dims[rank - 1], dims[rank - 2], strides[rank - 2]);
    let mut idx = [0usize; 16];
    let mut off = at;
    let mut l = start;
    for d in (0..rank).rev() {
        idx[d] = l % dims[d];
        l /= dims[d];
        off += idx[d] as isize * strides[d];
    }
    let mut pos = 0;
    loop {
        // Runs along the second-innermost dimension; `off` is at element
        // `idx[rank - 1]` of row `idx[rank - 2]`.
        while idx[rank - 2] < rows && pos < n {
            let k0 = idx[rank - 1];
            let len = (r - k0).min(n - pos);
            if row_stride == 0 && k0 == 0 && len == r {
                // The same run again and again (a broadcast along the
                // second-innermost dimension, `[n, c]` read as `[n, m, c]`):
                // copied once, then doubled from the output.
                let reps = (rows - idx[rank - 2]).min((n - pos) / r);
                // SAFETY: the run lies in the leaf; the copies stay inside
                // positions `pos..pos + reps * r` of `dst`.
                unsafe {
                    let at = dst.add(pos);
                    std::ptr::copy_nonoverlapping(base.offset(off), at, r);
                    let mut done = 1;
                    while done < reps {
                        let more = done.min(reps - done);
                        std::ptr::copy_nonoverlapping(at, at.add(done * r), more * r);
                        done += more;
                    }
                }
                pos += reps * r;
                idx[rank - 2] += reps;
                continue;
            }
            // SAFETY: the run lies in the leaf and positions `pos..pos + len`
            // in `dst` (the caller's contract).
            unsafe {
                let src = base.offset(off);
                for k in 0..len {
                    dst.add(pos + k).write(src.add(k).read());
                }
            }
            pos += len;
            idx[rank - 1] = 0;
            off += row_stride - k0 as isize;
            idx[rank - 2] += 1;
        }
        if pos >= n {
            return;
        }
        // Carry into the outer dimensions.
        off -= rows as isize * row_stride;
        idx[rank - 2] = 0;
        let mut d = rank - 2;
        while d > 0 {
            d -= 1;
            idx[d] += 1;
            off += strides[d];
            if idx[d] < dims[d] {
                break;
            }
            off -= dims[d] as isize * strides[d];
            idx[d] = 0;
        }
    }
}

/// Column-phase results per parallel task: below it, the phase runs on the
/// calling thread.
const PARALLEL_COLS: usize = 1 << 15;

/// Splits `0..units` into `tasks` near-equal contiguous ranges.
fn task_range(units: usize, tasks: usize, t: usize) -> (usize, usize) {
    let base = units / tasks;
    let extra = units % tasks;
    let start = t * base + t.min(extra);
    (start, start + base + usize::from(t < extra))
}

/// Folds `len` elements (element `i` of operand `j` at `xs[j] + i·w_j`) into
/// `acc` with a scalar reducer program.
///
/// # Safety
/// Pointers valid for `len` elements.
unsafe fn program_fold(
    eval: &mut ScalarEval<'_>,
    acc: &mut [Register],
    xs: &[*const u8],
    widths: &[usize],
    len: usize,
    stride: usize,
) {
    let k = acc.len();
    for i in 0..len {
        for j in 0..k {
            eval.set_param_register(j, acc[j]);
            // SAFETY: forwarded.
            unsafe { eval.set_param(k + j, xs[j].add(i * stride * widths[j])) };
        }
        eval.run();
        for (j, a) in acc.iter_mut().enumerate() {
            *a = eval.output(j);
        }
    }
}

/// Writes a register's element to `dst`.
///
/// # Safety
/// `dst` has room for `width` bytes.
unsafe fn store_register(r: &Register, width: usize, dst: *mut u8) {
    // SAFETY: a register has 16 bytes; `width <= 16`.
    unsafe { std::ptr::copy_nonoverlapping(r.as_ptr().cast::<u8>(), dst, width) }
}

impl<'p> Env<'p> {
    /// The init values of reduction `r`.
    fn init_registers(&self, r: usize) -> Vec<Register> {
        let p = self.p;
        let plan = &p.reduces[r];
        plan.inits
            .iter()
            .zip(&plan.types)
            .map(|(&l, ty)| {
                let leaf = &p.leaves[l];
                let off = leaf
                    .view
                    .splat_offset()
                    .unwrap_or_else(|| leaf.view.offset(0));
                // SAFETY: the init is one element of its source (checked when
                // the plan was made).
                unsafe {
                    load_register(
                        self.leaf_base(leaf).offset(off * ty.byte_size() as isize),
                        ty.byte_size(),
                    )
                }
            })
            .collect()
    }

    fn new_state(&self, regs: *mut u8) -> TaskState<'p> {
        let p = self.p;
        let home: AddressList<*mut u8> = p
            .slots
            .iter()
            .map(|s| match s.home {
                Home::Register(off) => regs.wrapping_add(off),
                Home::Output(_) => std::ptr::null_mut(),
            })
            .collect();
        let inits = (0..p.reduces.len())
            .map(|r| self.init_registers(r))
            .collect();
        let evals = p
            .reduces
            .iter()
            .map(|r| match &r.reducer {
                Reducer::Program(prog) => Some(prog.evaluator()),
                Reducer::Simple { .. } => None,
            })
            .collect();
        TaskState {
            val: home.iter().map(|&h| Val::Block(h)).collect(),
            home,
            inits,
            evals,
            ahead: Ahead::default(),
            expanded: Vec::new(),
            periodic: Vec::new(),
            splats: Vec::new(),
        }
    }

    /// Points output-homed slots at the block's positions.
    fn place_outputs(&self, st: &mut TaskState<'_>, b: &Block) {
        for (s, slot) in self.p.slots.iter().enumerate() {
            if let Home::Output(k) = slot.home {
                let at = match slot.dom {
                    SlotDom::Outer => b.row0,
                    _ => b.pos,
                };
                let ptr = self.outs[k].wrapping_add(at * slot.width);
                st.home[s] = ptr;
                st.val[s] = Val::Block(ptr);
            }
        }
    }

    /// Computes uniform values (one element each, in their registers).
    fn uniforms(&self, st: &mut TaskState<'p>) {
        let p = self.p;
        for step in &p.uniform_steps {
            match step {
                Step::Load { slot, leaf, .. } => {
                    let leaf = &p.leaves[*leaf];
                    let off = leaf
                        .view
                        .splat_offset()
                        .unwrap_or_else(|| leaf.view.offset(0));
                    let dst = st.home[*slot];
                    if let Some(index) = &leaf.index {
                        // SAFETY: one value into a register.
                        unsafe { index.call(off, 0, 1, dst) };
                    } else {
                        // SAFETY: inside the leaf (checked at plan time).
                        unsafe {
                            std::ptr::copy_nonoverlapping(
                                self.leaf_base(leaf).offset(off * leaf.width as isize),
                                dst,
                                leaf.width,
                            )
                        };
                    }
                    st.val[*slot] = Val::Scalar(dst);
                }
                Step::Op {
                    slot, kernel, args, ..
                } => {
                    let a: SmallVec<[Arg; 4]> = args
                        .iter()
                        .map(|&s| Arg::Ptr(st.home[s].cast_const()))
                        .collect();
                    // SAFETY: one element each.
                    unsafe { kernel.call(&a, st.home[*slot], 1) };
                    st.val[*slot] = Val::Scalar(st.home[*slot]);
                }
                _ => {}
            }
        }
    }

    /// The slot's block as contiguous elements, expanding a per-row or
    /// uniform value into the slot's register first.
    fn block(&self, st: &mut TaskState<'p>, s: usize, b: &Block) -> *mut u8 {
        let p = self.p;
        let w = p.slots[s].width;
        match st.val[s] {
            Val::Block(ptr) => ptr,
            Val::PerRow(src) => {
                let dst = st.home[s];
                // SAFETY: `nr` row values; the register holds the block.
                unsafe { ops::fill_rows(w, src, dst, b.nr, p.row_len) };
                st.val[s] = Val::Block(dst);
                dst
            }
            Val::RowRepeat(src) if p.row_len < ROW_CALL_MIN => {
                // Short rows are expanded for every block, and every block's
                // expansion of one row is the same: expand it once per task.
                let bytes = p.row_len * w;
                let at = match st.expanded.iter().position(|(from, _)| *from == src) {
                    Some(k) => k,
                    None => {
                        let rows = p.cap_full.div_ceil(p.row_len.max(1));
                        let mut lines = vec![Line([0; 64]); (rows * bytes).div_ceil(64).max(1)];
                        let dst: *mut u8 = lines.as_mut_ptr().cast();
                        for i in 0..rows {
                            // SAFETY: one row at `src`; `lines` holds `rows`.
                            unsafe {
                                std::ptr::copy_nonoverlapping(src, dst.add(i * bytes), bytes)
                            };
                        }
                        st.expanded.push((src, lines));
                        st.expanded.len() - 1
                    }
                };
                let ptr: *mut u8 = st.expanded[at].1.as_mut_ptr().cast();
                st.val[s] = Val::Block(ptr);
                ptr
            }
            Val::RowRepeat(src) => {
                let dst = st.home[s];
                for i in 0..b.nr {
                    // SAFETY: one row at `src`; the register holds the block.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            src,
                            dst.add(i * p.row_len * w),
                            p.row_len * w,
                        )
                    };
                }
                st.val[s] = Val::Block(dst);
                dst
            }
            Val::Scalar(v) => {
                // A uniform register holds a block of any domain.
                let cap = p.cap_full.max(p.cap_rows).max(p.cap_cols).max(1);
                if cap > 1 {
                    // SAFETY: the register holds `cap` elements.
                    unsafe { ops::fill(w, v, v.add(w), cap - 1) };
                }
                st.val[s] = Val::Block(v);
                v
            }
        }
    }

    /// A block of a periodic leaf (run of `r` elements at offset `at`) from
    /// position `start`: read in place from the run repeated once per task
    /// over the largest block and one period more (never written: every
    /// step writes its own slot's register or an output).
    fn periodic_block(
        &self,
        st: &mut TaskState<'p>,
        leaf: &LeafPlan,
        r: usize,
        at: isize,
        start: usize,
    ) -> *mut u8 {
        let p = self.p;
        let w = leaf.width;
        let src = self.leaf_base(leaf).wrapping_offset(at * w as isize);
        let k = match st.periodic.iter().position(|(from, _)| *from == src) {
            Some(k) => k,
            None => {
                let cap = p.cap_full.max(p.cap_rows).max(p.cap_cols).max(1);
                let bytes = (cap + r) * w;
                let mut lines = vec![Line([0; 64]); bytes.div_ceil(64)];
                let dst: *mut u8 = lines.as_mut_ptr().cast();
                // SAFETY: the run lies in the leaf (checked at plan time);
                // `lines` holds `bytes`, and each copy stays below it.
                unsafe {
                    std::ptr::copy_nonoverlapping(src, dst, r * w);
                    let mut done = r * w;
                    while done < bytes {
                        let more = done.min(bytes - done);
                        std::ptr::copy_nonoverlapping(dst, dst.add(done), more);
                        done += more;
                    }
                }
                st.periodic.push((src, lines));
                st.periodic.len() - 1
            }
        };
        let base: *mut u8 = st.periodic[k].1.as_mut_ptr().cast();
        base.wrapping_add(start % r * w)
    }

    /// A block of one value of a leaf (element `off`), for the leaf loaded
    /// into `slot`: the task's block of that value, filled when the slot
    /// last read another one (a per-channel value is the same for every
    /// block of a plane). Never written by a step, as a periodic block.
    fn splat_block(
        &self,
        st: &mut TaskState<'p>,
        slot: usize,
        leaf: &LeafPlan,
        off: isize,
    ) -> *mut u8 {
        let p = self.p;
        let w = leaf.width;
        let src = self.leaf_base(leaf).wrapping_offset(off * w as isize);
        let k = match st.splats.iter().position(|(s, _, _)| *s == slot) {
            Some(k) => k,
            None => {
                let cap = p.cap_full.max(p.cap_rows).max(p.cap_cols).max(1);
                st.splats.push((
                    slot,
                    std::ptr::null(),
                    vec![Line([0; 64]); (cap * w).div_ceil(64)],
                ));
                st.splats.len() - 1
            }
        };
        let (_, value, lines) = &mut st.splats[k];
        let dst: *mut u8 = lines.as_mut_ptr().cast();
        if *value != src {
            let cap = lines.len() * 64 / w;
            // SAFETY: `src` is one element of the leaf (checked at plan
            // time); `lines` holds `cap` elements.
            unsafe { ops::fill(w, src, dst, cap) };
            *value = src;
        }
        dst
    }

    /// Lists the contiguous memory the fetched-ahead leaves read in block
    /// `b` in `st.ahead` (see [`Ahead`]).
    fn plan_ahead(&self, st: &mut TaskState<'p>, b: &Block) {
        let p = self.p;
        st.ahead.clear();
        for fetch in &p.fetch_ahead {
            let leaf = &p.leaves[fetch.leaf];
            let (start, n) = match fetch.dom {
                SlotDom::Outer => (b.row0, b.nr),
                _ => (b.pos, b.n),
            };
            let base = self.leaf_base(leaf);
            let w = leaf.width;
            leaf.view.for_each_run(start, n, |_, off, len, stride| {
                if stride == 1 {
                    st.ahead
                        .push(base.wrapping_offset(off * w as isize), len * w);
                }
            });
        }
        // Outputs are left to the stores: fetching their lines ahead as well
        // measured slower (elementwise_4m 5.8 -> 4.5 ms on two cores), the
        // fetches competing with the leaves' for the core's fill buffers.
    }

    /// Runs one `Op` step on block `b`.
    ///
    /// # Safety
    /// As [`Self::run_block`].
    unsafe fn run_op(
        &self,
        st: &mut TaskState<'p>,
        slot: usize,
        kernel: &ops::Kernel,
        args: &[usize],
        b: &Block,
    ) {
        let p = self.p;
        let n = match p.slots[slot].dom {
            SlotDom::Outer => b.nr,
            _ => b.n,
        };
        let mut per_row = false;
        for &s in args {
            if let Val::PerRow(_) | Val::RowRepeat(_) = st.val[s] {
                if p.row_len < ROW_CALL_MIN {
                    self.block(st, s, b);
                } else {
                    per_row = true;
                }
            }
        }
        let dst = st.home[slot];
        let mut a = [Arg::Ptr(std::ptr::null()); 3];
        if !per_row {
            for (k, &s) in args.iter().enumerate() {
                a[k] = match st.val[s] {
                    Val::Scalar(v) => Arg::Scalar(v),
                    Val::Block(v) | Val::PerRow(v) | Val::RowRepeat(v) => Arg::Ptr(v),
                };
            }
            // SAFETY: every slot holds the block.
            unsafe { kernel.call(&a[..args.len()], dst, n) };
        } else {
            // Row by row, a per-row value as a scalar operand.
            let w = p.slots[slot].width;
            for r in 0..b.nr {
                for (k, &s) in args.iter().enumerate() {
                    let aw = p.slots[s].width;
                    a[k] = match st.val[s] {
                        Val::Scalar(v) => Arg::Scalar(v),
                        Val::PerRow(v) => Arg::Scalar(v.wrapping_add(r * aw)),
                        Val::RowRepeat(v) => Arg::Ptr(v),
                        Val::Block(v) => Arg::Ptr(v.wrapping_add(r * p.row_len * aw)),
                    };
                }
                // SAFETY: row `r` of every operand and of the result.
                unsafe { kernel.call(&a[..args.len()], dst.add(r * p.row_len * w), p.row_len) };
            }
        }
        st.val[slot] = Val::Block(dst);
    }

    /// Runs a [`Step::Run`] on block `b`: its generated code when every
    /// input holds a kind of value the code was compiled for and no block it
    /// writes partly overlaps one it reads, its steps one by one otherwise.
    /// A row's value broadcast along the row, or a row repeated down the
    /// block, is taken by the row-by-row code (once per row, as the steps do
    /// for rows of at least [`ROW_CALL_MIN`]).
    ///
    /// # Safety
    /// As [`Self::run_block`].
    unsafe fn run_generated(&self, st: &mut TaskState<'p>, run: &jit::Run, b: &Block) {
        let p = self.p;
        let mut vals = [Val::Scalar(std::ptr::null_mut()); jit::MAX_PORTS];
        // Whole blocks, or (`by_rows`) one row at a time.
        let mut usable = true;
        let mut by_rows = false;
        for (k, port) in run.inputs.iter().enumerate() {
            let s = port.slot;
            if !port.scalar && p.row_len < ROW_CALL_MIN {
                if let Val::PerRow(_) | Val::RowRepeat(_) = st.val[s] {
                    self.block(st, s, b);
                }
            }
            vals[k] = st.val[s];
            match (st.val[s], port.scalar) {
                (Val::Block(_), false) | (Val::Scalar(_), true) => {}
                (Val::PerRow(_), false) if port.per_row => by_rows = true,
                (Val::RowRepeat(_), false) => by_rows = true,
                _ => usable = false,
            }
        }
        usable &= !by_rows || b.nr * p.row_len == b.n;
        // Blocks as byte ranges: a written one must be a read one exactly or
        // miss it, miss every other written one, and miss every row value
        // and repeated row (read again after the first row is written).
        let range = |at: *const u8, width: usize, n: usize| (at as usize, at as usize + n * width);
        let overlap = |(a0, a1): (usize, usize), (b0, b1): (usize, usize)| a0 < b1 && b0 < a1;
        let mut outs = [std::ptr::null_mut::<u8>(); jit::MAX_PORTS];
        for (k, port) in run.outputs.iter().enumerate() {
            outs[k] = st.home[port.slot];
            let out = range(outs[k], port.width, b.n);
            for (i, val) in run.inputs.iter().zip(&vals) {
                usable &= match *val {
                    Val::Block(at) => {
                        let r = range(at, i.width, b.n);
                        r == out || !overlap(r, out)
                    }
                    Val::PerRow(at) => !overlap(range(at, i.width, b.nr), out),
                    Val::RowRepeat(at) => !overlap(range(at, i.width, p.row_len), out),
                    Val::Scalar(_) => true,
                };
            }
            usable &= run.outputs[..k]
                .iter()
                .zip(&outs)
                .all(|(o, &at)| !overlap(range(at, o.width, b.n), out));
        }
        if !usable || b.n == 0 {
            for step in &run.steps {
                if let Step::Op {
                    slot, kernel, args, ..
                } = step
                {
                    // SAFETY: forwarded.
                    unsafe { self.run_op(st, *slot, kernel, args, b) };
                }
            }
            return;
        }
        let (n_in, n_out) = (run.inputs.len(), run.outputs.len());
        let mut ins = [std::ptr::null::<u8>(); jit::MAX_PORTS];
        if by_rows {
            let mut row_outs = [std::ptr::null_mut::<u8>(); jit::MAX_PORTS];
            for r in 0..b.nr {
                for (k, (port, val)) in run.inputs.iter().zip(&vals).enumerate() {
                    let w = port.width;
                    ins[k] = match *val {
                        Val::Block(at) => at.wrapping_add(r * p.row_len * w),
                        Val::PerRow(at) => at.wrapping_add(r * w),
                        Val::RowRepeat(at) | Val::Scalar(at) => at,
                    };
                }
                for (k, port) in run.outputs.iter().enumerate() {
                    row_outs[k] = outs[k].wrapping_add(r * p.row_len * port.width);
                }
                // SAFETY: row `r` of every block, its value of every row
                // value, the repeated row, the scalars; checked above.
                unsafe { run.call_row(&ins[..n_in], &row_outs[..n_out], p.row_len) };
            }
        } else {
            for (k, val) in vals[..n_in].iter().enumerate() {
                if let Val::Block(at) | Val::Scalar(at) = *val {
                    ins[k] = at;
                }
            }
            // SAFETY: every input holds its block or scalar, every output's
            // register holds a block, and the blocks are checked above.
            unsafe { run.call(&ins[..n_in], &outs[..n_out], b.n) };
        }
        for port in &run.outputs {
            st.val[port.slot] = Val::Block(st.home[port.slot]);
        }
    }

    /// Runs `steps` on one block.
    ///
    /// # Safety
    /// `b` lies inside the domain; the task owns the block's outputs.
    unsafe fn run_block(&self, st: &mut TaskState<'p>, steps: &[Step], b: &Block) {
        let p = self.p;
        self.place_outputs(st, b);
        let share = st.ahead.fetches.div_ceil(steps.len().max(1));
        for (i, step) in steps.iter().enumerate() {
            st.ahead.fetch_until((i + 1) * share);
            match step {
                Step::Load {
                    slot,
                    leaf,
                    repeat: Some(base),
                } if b.nr > 1 => {
                    let leaf = &p.leaves[*leaf];
                    let at = self
                        .leaf_base(leaf)
                        .wrapping_offset(*base * leaf.width as isize);
                    st.val[*slot] = Val::RowRepeat(at.cast_mut());
                }
                Step::Load { slot, leaf, .. } => {
                    let (start, n) = match p.slots[*slot].dom {
                        SlotDom::Outer => (b.row0, b.nr),
                        _ => (b.pos, b.n),
                    };
                    let leaf = &p.leaves[*leaf];
                    st.val[*slot] = Val::Block(match leaf.periodic {
                        Some((r, at)) => self.periodic_block(st, leaf, r, at, start),
                        // SAFETY: the register holds a block.
                        None => match unsafe { self.load(leaf, start, n, st.home[*slot]) } {
                            Loaded::At(at) => at,
                            Loaded::Splat(off) => self.splat_block(st, *slot, leaf, off),
                        },
                    });
                }
                Step::Op {
                    slot, kernel, args, ..
                } => {
                    // SAFETY: forwarded.
                    unsafe { self.run_op(st, *slot, kernel, args, b) };
                }
                Step::Run(run) => {
                    // SAFETY: forwarded.
                    unsafe { self.run_generated(st, run, b) };
                }
                Step::RowFold {
                    reduce,
                    operands,
                    results,
                } => {
                    // SAFETY: forwarded.
                    unsafe { self.row_fold(st, *reduce, operands, results, b) };
                }
                Step::RowCombine { reduce, results } => {
                    // SAFETY: forwarded.
                    unsafe { self.row_combine(st, *reduce, results, b) };
                }
                Step::RowBroadcast { slot, src } => {
                    let s = self.block(st, *src, b);
                    st.val[*slot] = Val::PerRow(s);
                }
                Step::ColAccumulate { reduce, operands } => {
                    // SAFETY: forwarded.
                    unsafe { self.col_accumulate(st, *reduce, operands, b) };
                }
                Step::ColCombine { reduce, results } => {
                    // SAFETY: forwarded.
                    unsafe { self.col_combine(st, *reduce, results, b) };
                }
                Step::Store { slot, output, dom } => {
                    let w = p.slots[*slot].width;
                    let (at, n) = match dom {
                        SlotDom::Outer => (b.row0, b.nr),
                        _ => (b.pos, b.n),
                    };
                    let dst = self.outs[*output].wrapping_add(at * w);
                    if n == 0 {
                        continue;
                    }
                    // SAFETY: the slot holds the block; the output has room.
                    unsafe {
                        match st.val[*slot] {
                            Val::Block(v) => std::ptr::copy(v, dst, n * w),
                            Val::Scalar(v) => ops::fill(w, v, dst, n),
                            Val::PerRow(v) => ops::fill_rows(w, v, dst, b.nr, p.row_len),
                            Val::RowRepeat(v) => {
                                for i in 0..b.nr {
                                    std::ptr::copy(v, dst.add(i * p.row_len * w), p.row_len * w);
                                }
                            }
                        }
                    }
                }
            }
        }
    }

    unsafe fn row_fold(
        &self,
        st: &mut TaskState<'p>,
        r: usize,
        operands: &[usize],
        results: &[usize],
        b: &Block,
    ) {
        let p = self.p;
        let plan = &p.reduces[r];
        let chunked = matches!(p.mode, Mode::Chunks { .. });
        // Whole rows: one fold per row into the result slots. Chunked: one
        // partial per chunk into the scratch.
        let (rows, len) = if chunked { (1, b.n) } else { (b.nr, p.row_len) };
        if let Reducer::Simple { fold, .. } = &plan.reducer {
            // One operand, one result (a simple reducer has one type): no
            // per-call lists (a block can be one long row, and a few
            // allocations per row were a tenth of a memory-bound sum's time).
            let (operand, result) = (operands[0], results[0]);
            let w = plan.types[0].byte_size();
            let x = self.block(st, operand, b).cast_const();
            if chunked {
                let dst = self.scratch.wrapping_add(plan.partials[0] + b.chunk * w);
                // SAFETY: the chunk's `len` elements; its partial.
                unsafe { fold.call(x, len, std::ptr::null(), dst) };
                return;
            }
            let init = st.inits[r][0].as_ptr().cast::<u8>();
            // SAFETY: the block's `rows` rows; the slot's `rows` elements.
            unsafe { fold.call_rows(x, rows, len, init, st.home[result]) };
            st.val[result] = Val::Block(st.home[result]);
            return;
        }
        let widths: Vec<usize> = plan.types.iter().map(|t| t.byte_size()).collect();
        let bases: Vec<*mut u8> = operands.iter().map(|&s| self.block(st, s, b)).collect();
        // The scalar evaluator's reducers (variadic ones included).
        let Some(eval) = st.evals[r].as_mut() else {
            return;
        };
        // Refilled per row, allocated once per block: rows can be a few
        // elements long (a middle dimension read through a transposed view).
        let mut xs: Vec<*const u8> = Vec::with_capacity(bases.len());
        let mut dsts: Vec<*mut u8> = Vec::with_capacity(widths.len());
        let mut acc: Vec<Register> = Vec::with_capacity(widths.len());
        let mut rest: Vec<*const u8> = Vec::with_capacity(bases.len());
        for i in 0..rows {
            xs.clear();
            xs.extend(
                bases
                    .iter()
                    .zip(&widths)
                    .map(|(&v, &w)| v.wrapping_add(i * len * w).cast_const()),
            );
            dsts.clear();
            if chunked {
                dsts.extend(
                    plan.partials
                        .iter()
                        .zip(&widths)
                        .map(|(&off, &w)| self.scratch.wrapping_add(off + b.chunk * w)),
                );
            } else {
                dsts.extend(
                    results
                        .iter()
                        .zip(&widths)
                        .map(|(&s, &w)| st.home[s].wrapping_add(i * w)),
                );
            }
            let skip = if chunked {
                acc.clear();
                // SAFETY: a chunk has at least one element.
                acc.extend(
                    xs.iter()
                        .zip(&widths)
                        .map(|(&x, &w)| unsafe { load_register(x, w) }),
                );
                1
            } else {
                acc.clone_from(&st.inits[r]);
                0
            };
            rest.clear();
            rest.extend(
                xs.iter()
                    .zip(&widths)
                    .map(|(&x, &w)| x.wrapping_add(skip * w)),
            );
            // SAFETY: forwarded.
            unsafe { program_fold(eval, &mut acc, &rest, &widths, len.saturating_sub(skip), 1) };
            for (j, a) in acc.iter().enumerate() {
                // SAFETY: room for one element.
                unsafe { store_register(a, widths[j], dsts[j]) };
            }
        }
        if !chunked {
            for &s in results {
                st.val[s] = Val::Block(st.home[s]);
            }
        }
    }

    unsafe fn row_combine(&self, st: &mut TaskState<'p>, r: usize, results: &[usize], b: &Block) {
        let p = self.p;
        let plan = &p.reduces[r];
        let Mode::Chunks { chunks_per_row, .. } = p.mode else {
            return;
        };
        let widths: Vec<usize> = plan.types.iter().map(|t| t.byte_size()).collect();
        for i in 0..b.nr {
            let row = b.row0 + i;
            let parts: Vec<*const u8> = plan
                .partials
                .iter()
                .zip(&widths)
                .map(|(&off, &w)| {
                    self.scratch
                        .wrapping_add(off + row * chunks_per_row * w)
                        .cast_const()
                })
                .collect();
            let dsts: Vec<*mut u8> = results
                .iter()
                .zip(&widths)
                .map(|(&s, &w)| st.home[s].wrapping_add(i * w))
                .collect();
            match &plan.reducer {
                Reducer::Simple { fold, .. } => {
                    // SAFETY: `chunks_per_row` partials of the row.
                    unsafe {
                        fold.call(
                            parts[0],
                            chunks_per_row,
                            st.inits[r][0].as_ptr().cast(),
                            dsts[0],
                        )
                    };
                }
                Reducer::Program(_) => {
                    let Some(eval) = st.evals[r].as_mut() else {
                        continue;
                    };
                    let mut acc = st.inits[r].clone();
                    // SAFETY: forwarded.
                    unsafe { program_fold(eval, &mut acc, &parts, &widths, chunks_per_row, 1) };
                    for (j, a) in acc.iter().enumerate() {
                        // SAFETY: room for one element.
                        unsafe { store_register(a, widths[j], dsts[j]) };
                    }
                }
            }
        }
        for &s in results {
            st.val[s] = Val::Block(st.home[s]);
        }
    }

    /// The block's columns of a column reduction: the init combined with
    /// every task's partial row, in task order.
    unsafe fn col_combine(&self, st: &mut TaskState<'p>, r: usize, results: &[usize], b: &Block) {
        let p = self.p;
        if b.n == 0 {
            return;
        }
        let plan = &p.reduces[r];
        let widths: Vec<usize> = plan.types.iter().map(|t| t.byte_size()).collect();
        let row_len = p.row_len;
        // Grouped: one partial row per group, at the results' own positions
        // (`t` is always 0).
        let (parts, row_len) = if p.col_groups > 1 {
            (1, 0)
        } else {
            (p.n_tasks, row_len)
        };
        let part = |j: usize, t: usize| -> *const u8 {
            self.partial_base(plan, plan.partials[j])
                .wrapping_add((t * row_len + b.pos) * widths[j])
                .cast_const()
        };
        match &plan.reducer {
            Reducer::Simple { .. } if plan.partials_in_output.is_some() => {
                // Already combined with the init, at the results' positions.
                let (dst, src) = (st.home[results[0]], part(0, 0));
                if !std::ptr::eq(dst.cast_const(), src) {
                    // SAFETY: the slot and the output hold `n` elements;
                    // a register never overlaps an output.
                    unsafe { std::ptr::copy_nonoverlapping(src, dst, b.n * widths[0]) };
                }
            }
            Reducer::Simple { accumulate, .. } => {
                let dst = st.home[results[0]];
                // SAFETY: the slot holds `n` elements, partial rows `row_len`.
                unsafe {
                    ops::fill(widths[0], st.inits[r][0].as_ptr().cast(), dst, b.n);
                    for t in 0..parts {
                        accumulate.call(dst, part(0, t), 1, b.n);
                    }
                }
            }
            Reducer::Program(_) => {
                let Some(eval) = st.evals[r].as_mut() else {
                    return;
                };
                for c in 0..b.n {
                    let mut acc = st.inits[r].clone();
                    for t in 0..parts {
                        let xs: Vec<*const u8> = (0..widths.len())
                            .map(|j| part(j, t).wrapping_add(c * widths[j]))
                            .collect();
                        // SAFETY: one element each.
                        unsafe { program_fold(eval, &mut acc, &xs, &widths, 1, 1) };
                    }
                    for (j, a) in acc.iter().enumerate() {
                        // SAFETY: element `c` of the slot.
                        unsafe {
                            store_register(a, widths[j], st.home[results[j]].add(c * widths[j]))
                        };
                    }
                }
            }
        }
        for &s in results {
            st.val[s] = Val::Block(st.home[s]);
        }
    }

    /// Where reduction `plan`'s partial values at scratch offset `offset`
    /// are: in the scratch, or at the start of the output holding them.
    fn partial_base(&self, plan: &ReducePlan, offset: usize) -> *mut u8 {
        match plan.partials_in_output {
            Some(k) => self.outs[k],
            None => self.scratch.wrapping_add(offset),
        }
    }

    unsafe fn col_accumulate(
        &self,
        st: &mut TaskState<'p>,
        r: usize,
        operands: &[usize],
        b: &Block,
    ) {
        let p = self.p;
        if p.row_len == 0 || b.nr == 0 {
            return;
        }
        let bases: Vec<*mut u8> = operands.iter().map(|&s| self.block(st, s, b)).collect();
        if p.col_groups <= 1 {
            // SAFETY: forwarded; the task's own partial row.
            unsafe { self.col_accumulate_run(st, r, &bases, b.task, b.task_first, 0, b.nr) };
            return;
        }
        // Grouped: the block's rows split at group boundaries, each run
        // summed into its group's row (a task owns its groups whole).
        let per_group = p.rows / p.col_groups;
        let mut row = b.row0;
        while row < b.row0 + b.nr {
            let g = row / per_group;
            let end = ((g + 1) * per_group).min(b.row0 + b.nr);
            // SAFETY: forwarded; group `g` belongs to this task.
            unsafe {
                self.col_accumulate_run(
                    st,
                    r,
                    &bases,
                    g,
                    row.is_multiple_of(per_group),
                    row - b.row0,
                    end - row,
                )
            };
            row = end;
        }
    }

    /// Folds rows `first_row..first_row + nr` of the block (operand blocks
    /// at `bases`) into partial row `part` of reduction `r`; with `fresh`,
    /// the first of them starts the partial row instead.
    ///
    /// # Safety
    /// The rows lie in the block; partial row `part` is scratch no other
    /// task touches.
    #[allow(clippy::too_many_arguments)]
    unsafe fn col_accumulate_run(
        &self,
        st: &mut TaskState<'p>,
        r: usize,
        bases: &[*mut u8],
        part: usize,
        fresh: bool,
        first_row: usize,
        nr: usize,
    ) {
        let p = self.p;
        let plan = &p.reduces[r];
        let row_len = p.row_len;
        if let Reducer::Simple { accumulate, .. } = &plan.reducer {
            // One operand and one result, so no per-call lists.
            let w = plan.types[0].byte_size();
            let partial = self
                .partial_base(plan, plan.partials[0])
                .wrapping_add(part * row_len * w);
            let x = bases[0].cast_const().wrapping_add(first_row * row_len * w);
            let mut first = 0;
            if fresh && plan.partials_in_output.is_some() {
                // The combine adds nothing: the row starts from the init.
                // SAFETY: the partial row (the group's result row).
                unsafe { ops::fill(w, st.inits[r][0].as_ptr().cast(), partial, row_len) };
            } else if fresh {
                // SAFETY: the run's first row into the partial row.
                unsafe { std::ptr::copy_nonoverlapping(x, partial, row_len * w) };
                first = 1;
            }
            // SAFETY: the run's remaining rows; the partial row (scratch, or
            // the group's row of the output) lies apart from the block.
            unsafe {
                accumulate.call(
                    partial,
                    x.wrapping_add(first * row_len * w),
                    nr.saturating_sub(first),
                    row_len,
                )
            };
            return;
        }
        let widths: Vec<usize> = plan.types.iter().map(|t| t.byte_size()).collect();
        let partial: Vec<*mut u8> = plan
            .partials
            .iter()
            .zip(&widths)
            .map(|(&off, &w)| {
                self.partial_base(plan, off)
                    .wrapping_add(part * row_len * w)
            })
            .collect();
        for i in 0..nr {
            let xs: Vec<*const u8> = bases
                .iter()
                .zip(&widths)
                .map(|(&v, &w)| v.wrapping_add((first_row + i) * row_len * w).cast_const())
                .collect();
            if fresh && i == 0 {
                for j in 0..xs.len() {
                    // SAFETY: a row of the block into the partial row.
                    unsafe {
                        std::ptr::copy_nonoverlapping(xs[j], partial[j], row_len * widths[j])
                    };
                }
                continue;
            }
            // The scalar evaluator's reducers (a simple one returned above).
            let Some(eval) = st.evals[r].as_mut() else {
                continue;
            };
            for c in 0..row_len {
                let mut acc: Vec<Register> = partial
                    .iter()
                    .zip(&widths)
                    // SAFETY: element `c` of the partial row.
                    .map(|(&pp, &w)| unsafe { load_register(pp.add(c * w), w) })
                    .collect();
                let xc: Vec<*const u8> = xs
                    .iter()
                    .zip(&widths)
                    .map(|(&x, &w)| x.wrapping_add(c * w))
                    .collect();
                // SAFETY: one element each.
                unsafe { program_fold(eval, &mut acc, &xc, &widths, 1, 1) };
                for (j, a) in acc.iter().enumerate() {
                    // SAFETY: element `c` of the partial row.
                    unsafe { store_register(a, widths[j], partial[j].add(c * widths[j])) };
                }
            }
        }
    }

    /// Lets the producer write the block's positions of its parameter.
    ///
    /// # Safety
    /// The block is inside the domain and this task's alone.
    #[inline]
    unsafe fn produce(&self, b: &Block) {
        if let Some((producer, addrs)) = &self.producer {
            // SAFETY: the producer's result is a parameter the program reads
            // only at the block's own positions (`BlockFusion`'s contract),
            // which no other task touches.
            unsafe { producer.produce(addrs, b.pos, b.n) };
        }
    }

    /// Runs task `t` on this thread.
    fn run_task(&self, t: usize) {
        let p = self.p;
        with_registers(p.regfile_bytes, |regs| {
            let mut st = self.new_state(regs);
            self.uniforms(&mut st);
            match p.mode {
                Mode::Rows { rows_per_block } => {
                    let (r0, r1) = if p.col_groups > 1 {
                        let per_group = p.rows / p.col_groups;
                        let (g0, g1) = task_range(p.col_groups, p.n_tasks, t);
                        (g0 * per_group, g1 * per_group)
                    } else {
                        task_range(p.rows, p.n_tasks, t)
                    };
                    // SAFETY: the task's own rows, inside the domain.
                    unsafe { self.run_row_range(&mut st, rows_per_block, t, r0, r1) };
                }
                Mode::Chunks {
                    chunk_len,
                    chunks_per_row,
                } => {
                    let (c0, c1) = task_range(p.rows * chunks_per_row, p.n_tasks, t);
                    let chunk_at = |c: usize| {
                        let row = c / chunks_per_row;
                        let start = (c % chunks_per_row) * chunk_len;
                        Block {
                            pos: row * p.row_len + start,
                            n: chunk_len.min(p.row_len - start),
                            row0: row,
                            nr: 1,
                            chunk: c,
                            task_first: false,
                            task: t,
                        }
                    };
                    for c in c0..c1 {
                        let b = chunk_at(c);
                        if !p.fetch_ahead.is_empty() && c + 1 < c1 {
                            self.plan_ahead(&mut st, &chunk_at(c + 1));
                        } else {
                            st.ahead.clear();
                        }
                        // SAFETY: the chunk is inside this task's range.
                        unsafe {
                            self.produce(&b);
                            self.run_block(&mut st, &p.steps, &b)
                        };
                    }
                }
            }
        });
    }

    /// Runs rows `r0..r1` (whole rows, blocks of `rows_per_block`) as task
    /// `t`, fetching each next block ahead while the current one computes.
    ///
    /// # Safety
    /// `r0..r1` lies inside the domain, and no other task runs these rows.
    unsafe fn run_row_range(
        &self,
        st: &mut TaskState<'p>,
        rows_per_block: usize,
        t: usize,
        r0: usize,
        r1: usize,
    ) {
        let p = self.p;
        let block_at = |row: usize| {
            let nr = rows_per_block.min(r1 - row);
            Block {
                pos: row * p.row_len,
                n: nr * p.row_len,
                row0: row,
                nr,
                chunk: 0,
                task_first: row == r0,
                task: t,
            }
        };
        let mut row = r0;
        while row < r1 {
            let b = block_at(row);
            if !p.fetch_ahead.is_empty() && row + b.nr < r1 {
                self.plan_ahead(st, &block_at(row + b.nr));
            } else {
                st.ahead.clear();
            }
            // SAFETY: the block is inside rows the caller owns.
            unsafe {
                self.produce(&b);
                self.run_block(st, &p.steps, &b)
            };
            row += b.nr;
        }
    }

    /// The column phase over result positions `c0..c1`, in blocks.
    fn col_phase(&self, c0: usize, c1: usize) {
        let p = self.p;
        with_registers(p.regfile_bytes, |regs| {
            let mut st = self.new_state(regs);
            self.uniforms(&mut st);
            let mut col = c0;
            while col < c1 {
                let nc = p.cap_cols.min(c1 - col);
                let b = Block {
                    pos: col,
                    n: nc,
                    row0: 0,
                    nr: 0,
                    chunk: 0,
                    task_first: false,
                    task: 0,
                };
                // SAFETY: columns inside the domain.
                unsafe { self.run_block(&mut st, &p.col_steps, &b) };
                col += nc;
            }
        });
    }

    /// After every task: column reductions and chunked rows' outer steps.
    fn finalize(&self) {
        let p = self.p;
        if !p.col_steps.is_empty() {
            let col_len = p.row_len * p.col_groups;
            // Each position's combine reads only its own partials, so the
            // split does not change results.
            let blocks = col_len.div_ceil(p.cap_cols.max(1));
            let tasks = (col_len / PARALLEL_COLS)
                .clamp(1, p.n_tasks.max(1))
                .min(blocks);
            if tasks > 1 {
                run_tasks(tasks, |t| {
                    let (b0, b1) = task_range(blocks, tasks, t);
                    let (c0, c1) = (b0 * p.cap_cols, (b1 * p.cap_cols).min(col_len));
                    self.col_phase(c0, c1);
                });
            } else {
                self.col_phase(0, col_len);
            }
        }
        if p.finalize.is_empty() {
            return;
        }
        with_registers(p.regfile_bytes, |regs| {
            let mut st = self.new_state(regs);
            self.uniforms(&mut st);
            let mut row = 0;
            while !p.finalize.is_empty() && row < p.rows {
                let nr = p.cap_rows.min(p.rows - row);
                let b = Block {
                    pos: 0,
                    n: 0,
                    row0: row,
                    nr,
                    chunk: 0,
                    task_first: false,
                    task: 0,
                };
                // SAFETY: rows inside the domain.
                unsafe { self.run_block(&mut st, &p.finalize, &b) };
                row += nr;
            }
        });
    }
}

/// A fusion run as a block program.
pub struct BlockFusion {
    pub name: String,
    pub program: Arc<BlockProgram>,
    pub operands: Vec<BufferSlice>,
    pub results: Vec<BufferSlice>,
    pub scratch: Option<BufferSlice>,
    /// Computes a parameter block by block, right before the block reads it.
    /// Only for a parameter in [`BlockProgram::in_place_params`] (read only
    /// at each block's own positions), whose memory the producer writes.
    pub producer: Option<Box<dyn BlockProducer>>,
}

impl Thunk for BlockFusion {
    fn name(&self) -> &str {
        &self.name
    }
    fn category(&self) -> &str {
        "fusion"
    }
    fn execute(&self, ctx: &ExecuteContext<'_>) -> Result<()> {
        let p = &*self.program;
        let params: AddressList<*const u8> = self
            .operands
            .iter()
            .map(|s| ctx.ptr(*s).cast_const())
            .collect();
        let dynamic = p
            .dynamic_offsets
            .iter()
            // SAFETY: a start parameter holds a value of its type at its
            // offset (checked when the program was compiled against the
            // fusion's shapes).
            .map(|d| unsafe { d.elements(&params) })
            .collect();
        let env = Env {
            p,
            params,
            dynamic,
            outs: self.results.iter().map(|s| ctx.ptr(*s)).collect(),
            consts: p.constants.iter().map(|c| c.as_bytes().as_ptr()).collect(),
            // No scratch: a dangling (aligned, non-null) base for empty partials.
            scratch: self
                .scratch
                .map(|s| ctx.ptr(s))
                .unwrap_or(std::ptr::NonNull::<u64>::dangling().as_ptr().cast()),
            producer: self
                .producer
                .as_deref()
                .map(|pr| (pr, pr.slices().iter().map(|s| ctx.ptr(*s)).collect())),
        };
        run(&env);
        Ok(())
    }
}

/// Runs domain rows `rows` of `p` on the calling thread: how a fused chain
/// ([`super::chain`]) applies a row-local program to the rows it holds in
/// its working buffers. `params` and `outs` are the addresses the program
/// would be given for the whole domain; only the rows' positions are read
/// or written through them.
///
/// # Safety
/// [`BlockProgram::runs_by_rows`] holds; every address the program computes
/// for these rows from `params` is valid to read, and from `outs[0]` valid to
/// write; nothing else touches those output positions meanwhile.
pub unsafe fn run_rows(
    p: &BlockProgram,
    params: &[*const u8],
    outs: &[*mut u8],
    rows: std::ops::Range<usize>,
) {
    debug_assert!(
        p.runs_by_rows(),
        "%{}: run_rows on a program that does not",
        p.name
    );
    let Mode::Rows { rows_per_block } = p.mode else {
        return;
    };
    run_on_this_thread(p, params, outs, |env, st| {
        // SAFETY: forwarded from the caller.
        unsafe { env.run_row_range(st, rows_per_block, 0, rows.start, rows.end) };
    });
}

/// Runs `f` with an environment for `p` that has no scratch, dynamic
/// offsets or producer (a program [`run_rows`] or [`run_positions`] can
/// run), and a task state whose uniform steps have run.
fn run_on_this_thread<'p>(
    p: &'p BlockProgram,
    params: &[*const u8],
    outs: &[*mut u8],
    f: impl FnOnce(&Env<'p>, &mut TaskState<'p>),
) {
    let env = Env {
        p,
        params: params.into(),
        dynamic: AddressList::new(),
        outs: outs.into(),
        consts: p.constants.iter().map(|c| c.as_bytes().as_ptr()).collect(),
        scratch: std::ptr::NonNull::<u64>::dangling().as_ptr().cast(),
        producer: None,
    };
    with_registers(p.regfile_bytes, |regs| {
        let mut st = env.new_state(regs);
        env.uniforms(&mut st);
        f(&env, &mut st);
    });
}

/// Runs positions `range` of `p`'s one output on the calling thread: how a
/// kernel computes a fused expression over a range of its own iteration
/// ([`super::PositionProgram`]). `params` are the addresses the program would
/// be given for the whole domain; `out` is where position `range.start` goes.
///
/// # Safety
/// [`BlockProgram::runs_by_positions`] holds; every address the program
/// computes for these positions from `params` is valid to read; `out` has
/// room for `range.len()` elements of the output.
pub unsafe fn run_positions(
    p: &BlockProgram,
    params: &[*const u8],
    out: *mut u8,
    range: std::ops::Range<usize>,
) {
    debug_assert!(
        p.runs_by_positions(),
        "%{}: run_positions on a program that does not",
        p.name
    );
    let width = p.outputs.first().map_or(0, |o| o.ty.byte_size());
    let outs = [out.wrapping_sub(range.start * width)];
    let step = p.cap_full.max(1);
    run_on_this_thread(p, params, &outs, |env, st| {
        let mut pos = range.start;
        while pos < range.end {
            let b = Block {
                pos,
                n: step.min(range.end - pos),
                row0: 0,
                nr: 1,
                chunk: 0,
                task_first: false,
                task: 0,
            };
            // SAFETY: positions of the caller's range, in one domain row.
            unsafe { env.run_block(st, &p.steps, &b) };
            pos += b.n;
        }
    });
}

fn run(env: &Env<'_>) {
    let tasks = env.p.n_tasks;
    if tasks == 1 {
        env.run_task(0);
    } else if tasks > 1 {
        run_tasks(tasks, |t| env.run_task(t));
    }
    env.finalize();
}

#[cfg(test)]
mod tests {
    use super::{load_short_runs, with_registers};

    /// What [`load_short_runs`] must produce: position `p` of the stage
    /// decoded into its index and read at the summed strides.
    fn naive(dims: &[usize], strides: &[isize], at: isize, src: &[u32], p: usize) -> u32 {
        let (mut l, mut off) = (p, at);
        for d in (0..dims.len()).rev() {
            off += (l % dims[d]) as isize * strides[d];
            l /= dims[d];
        }
        src[off as usize]
    }

    #[test]
    fn short_runs_load_every_window_of_positions() {
        let src: Vec<u32> = (0..4096).collect();
        // Rows of short runs: read in turn, repeated (a zero row stride,
        // the broadcast of `[n, c]` to `[n, m, c]`), and under outer dims.
        let stages: [(&[usize], &[isize], isize); 5] = [
            (&[5, 7, 3], &[40, 5, 1], 2),
            (&[6, 9, 3], &[3, 0, 1], 1),
            (&[4, 5, 2], &[0, 0, 1], 7),
            (&[3, 2, 4, 5], &[200, 0, 9, 1], 3),
            (&[8, 1], &[1, 0], 0),
        ];
        for (dims, strides, at) in stages {
            let total: usize = dims.iter().product();
            for start in [0, 1, 2, 3, 5, total / 2, total - 1] {
                for n in [1, 2, 3, 4, 7, 20, total - start] {
                    if start + n > total {
                        continue;
                    }
                    let mut got = vec![u32::MAX; n];
                    unsafe {
                        load_short_runs::<u32>(
                            dims,
                            strides,
                            at,
                            src.as_ptr(),
                            start,
                            n,
                            got.as_mut_ptr(),
                        )
                    };
                    let want: Vec<u32> = (start..start + n)
                        .map(|p| naive(dims, strides, at, &src, p))
                        .collect();
                    assert_eq!(
                        got, want,
                        "dims {dims:?} strides {strides:?} from {start}, {n}"
                    );
                }
            }
        }
    }

    #[test]
    fn register_memory_is_whole_pages_of_its_own() {
        for bytes in [0, 1, 4096, 4097, 40_000] {
            with_registers(bytes, |p| {
                assert_eq!(p as usize % 4096, 0, "{bytes} bytes");
                // Writable to the end of the page the request reaches.
                let len = bytes.div_ceil(4096).max(1) * 4096;
                unsafe { std::ptr::write_bytes(p, 0xAB, len) };
            });
        }
    }
}
