//! Machine code for runs of simple elementwise steps (x86-64 with AVX2 and
//! FMA).
//!
//! A block program runs every elementwise op as one slice kernel call per
//! block: the op reads its operands from block registers in L1 and writes its
//! result to another, so a cheap op (an add, a shift, an xor, a select) costs
//! its loads and its store more than its arithmetic. Here a run of consecutive
//! steps whose operations are simple (integer and float arithmetic, bitwise
//! ops, shifts, comparisons and selects on 4-byte elements and `pred`)
//! becomes one loop of generated code that walks the block eight lanes at a
//! time with every intermediate in a vector register, and stores only the
//! slots read after the run. Random numbers (threefry's rounds of adds,
//! rotates and xors; the normal distribution's `erf_inv`, a polynomial whose
//! coefficients are selected per element) and the arithmetic between
//! transcendental steps are what it is for. Transcendentals keep their slice
//! kernels: they are compute bound, so a pass of their own costs them little.
//!
//! [`form_runs`] replaces such runs in a program's per-block steps with a
//! [`Step::Run`] that keeps the original steps. The runtime takes the machine
//! code only when every input holds the kind of value it was compiled for (a
//! block of elements, or one uniform scalar) and no block it writes partly
//! overlaps one it reads; otherwise it runs the steps one by one. A run that
//! reads a row's value broadcast along the row (softmax's `x - max`,
//! layernorm's `(x - mean) * rstd`) or a row repeated down the block (a bias)
//! has a second loop that takes the row's value as a scalar, called once per
//! row, as the steps themselves go row by row there.
//!
//! # Code generation
//! Values are numbered: the run's inputs, then one per step. A value gets a
//! `ymm` register from a pool of 14 when it is needed; with the pool empty,
//! the value used furthest ahead is evicted (an input is reloaded when needed
//! again, a computed value goes to a stack slot). Uniform scalars are splatted
//! into the stack frame once per call and read as memory operands (a shift by
//! one uses AVX2's count form). A `pred` is a lane mask (all ones or zero)
//! inside the code and a 0/1 byte outside it. An iteration loads inputs as
//! they are first used and stores the run's results at its end, after every
//! load of its lanes, so a result may be written over one of its inputs (in
//! place). The tail of a block (fewer than eight elements) runs the same code
//! one lane at a time. The code gets a mapping of its own, made executable
//! once written; it is position independent (relative branches only, no
//! data).
//!
//! Every operation is the instruction the slice kernels' loops compile to, so
//! results are bit for bit the same, but for which NaN an op on two NaNs
//! returns (the operand order, which LLVM may commute in a kernel): IEEE
//! `add`/`sub`/`mul`/`div` and comparisons, fused multiply-adds rounded once
//! after negating an operand's sign bit (as the kernels do), sign-bit
//! `negate`/`abs`, `maximum`/`minimum` with the hardware's answer fixed for
//! NaNs and signed zeros, and AVX2's variable shifts, which give XLA's results
//! for amounts of the width or more (zero, or the sign for an arithmetic
//! shift).

use super::program::{step_slots, ElemOp, Home, Slot, SlotDom, Step};
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::semantics::contraction::Contraction;
use platform_api::ElementType;

/// Longest run compiled as one loop: bounds the code and the stack frame,
/// which must stay under a page (constants, 48 bytes per scalar input, 32 per
/// computed value: 3,712 bytes at most), so that the code's first write below
/// the caller's frame cannot step over the stack's guard page.
const MAX_STEPS: usize = 64;
/// Most inputs or results of one run (the runtime passes them in arrays).
pub const MAX_PORTS: usize = 32;

/// An operation a run can hold.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum JitOp {
    FAdd,
    FSub,
    FMul,
    FDiv,
    FNeg,
    FAbs,
    /// XLA's `maximum`/`minimum`: NaN propagates (the first operand's when
    /// both are NaN), `-0 < +0`.
    FMax,
    FMin,
    Fma(Contraction),
    /// `convert` from s32 (rounded to nearest).
    S32ToF32,
    IAdd,
    ISub,
    IMul,
    And,
    Or,
    Xor,
    Not,
    Shl,
    ShrLogical,
    ShrArithmetic,
    /// `(x << a) | (x >> b)` (logical), operands `[x, a, b]`.
    ShiftPairOr,
    SMax,
    SMin,
    UMax,
    UMin,
    /// The same bits as another 4-byte type.
    Same,
    /// A comparison, giving a mask (`pred` as all-ones or zero lanes).
    Cmp(ComparisonDirection, Order),
    /// `select(mask, on_true, on_false)`.
    Select,
}

/// How a comparison orders its operands.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Order {
    /// IEEE: every comparison with a NaN is false but `NE`.
    Float,
    Signed,
    Unsigned,
}

impl JitOp {
    /// The op for `op` of operands `args` giving `ty`, if a run can hold it.
    pub fn of(op: &ElemOp, args: &[ElementType], ty: ElementType) -> Option<JitOp> {
        use ElementType::{Pred, F32, S32, U32};
        let int = matches!(ty, S32 | U32) && args.iter().all(|&t| t == ty);
        let float = ty == F32 && args.iter().all(|&t| t == F32);
        // Bitwise ops of masks are bitwise ops of their lanes.
        let bits = (int || ty == Pred) && args.iter().all(|&t| t == ty);
        let op = match op {
            ElemOp::Unary(UnaryOp::Negate) if float => JitOp::FNeg,
            ElemOp::Unary(UnaryOp::Abs) if float => JitOp::FAbs,
            ElemOp::Unary(UnaryOp::Not) if bits => JitOp::Not,
            ElemOp::Binary(BinaryOp::And) if bits => JitOp::And,
            ElemOp::Binary(BinaryOp::Or) if bits => JitOp::Or,
            ElemOp::Binary(BinaryOp::Xor) if bits => JitOp::Xor,
            ElemOp::Compare(dir, how) if ty == Pred && args.len() == 2 && args[0] == args[1] => {
                let order = match (args[0], how) {
                    (F32, None | Some(ComparisonType::Float)) => Order::Float,
                    (S32 | U32, Some(ComparisonType::Signed)) | (S32, None) => Order::Signed,
                    (S32 | U32, Some(ComparisonType::Unsigned)) | (U32, None) => Order::Unsigned,
                    _ => return None,
                };
                JitOp::Cmp(*dir, order)
            }
            ElemOp::Select
                if matches!(ty, F32 | S32 | U32)
                    && args.len() == 3
                    && args[0] == Pred
                    && args[1] == ty
                    && args[2] == ty =>
            {
                JitOp::Select
            }
            ElemOp::Binary(b) if float => match b {
                BinaryOp::Add => JitOp::FAdd,
                BinaryOp::Subtract => JitOp::FSub,
                BinaryOp::Multiply => JitOp::FMul,
                BinaryOp::Divide => JitOp::FDiv,
                BinaryOp::Maximum => JitOp::FMax,
                BinaryOp::Minimum => JitOp::FMin,
                _ => return None,
            },
            ElemOp::Binary(b) if int => match (b, ty) {
                (BinaryOp::Add, _) => JitOp::IAdd,
                (BinaryOp::Subtract, _) => JitOp::ISub,
                (BinaryOp::Multiply, _) => JitOp::IMul,
                (BinaryOp::ShiftLeft, _) => JitOp::Shl,
                (BinaryOp::ShiftRightLogical, _) => JitOp::ShrLogical,
                (BinaryOp::ShiftRightArithmetic, _) => JitOp::ShrArithmetic,
                (BinaryOp::Maximum, S32) => JitOp::SMax,
                (BinaryOp::Minimum, S32) => JitOp::SMin,
                (BinaryOp::Maximum, _) => JitOp::UMax,
                (BinaryOp::Minimum, _) => JitOp::UMin,
                _ => return None,
            },
            ElemOp::FusedMultiplyAdd(how) if float => JitOp::Fma(*how),
            ElemOp::Convert if ty == F32 && args == [S32] => JitOp::S32ToF32,
            ElemOp::ShiftPairOr if int => JitOp::ShiftPairOr,
            ElemOp::Reinterpret
                if ty.byte_size() == 4 && args.iter().all(|t| t.byte_size() == 4) =>
            {
                JitOp::Same
            }
            _ => return None,
        };
        (args.len() == op.arity()).then_some(op)
    }

    fn arity(self) -> usize {
        match self {
            JitOp::FNeg | JitOp::FAbs | JitOp::Not | JitOp::Same | JitOp::S32ToF32 => 1,
            JitOp::Fma(_) | JitOp::ShiftPairOr | JitOp::Select => 3,
            _ => 2,
        }
    }
}

/// A slot the generated code reads or writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Port {
    pub slot: usize,
    /// Read as one uniform value (otherwise as a block).
    pub scalar: bool,
    /// A row's value broadcast along the row (a `RowBroadcast` slot): a
    /// scalar for each row when the run goes row by row.
    pub per_row: bool,
    /// Bytes per element: 1 for `pred` (0 or 1; a mask inside the code), 4
    /// otherwise.
    pub width: usize,
}

/// A run of steps and its machine code (see the module doc).
pub struct Run {
    /// The original steps, run one by one when the code cannot be used.
    pub steps: Vec<Step>,
    /// Slots read before the run writes them, in the order the code takes
    /// them.
    pub inputs: Vec<Port>,
    /// Slots written in the run and read after it (or homed in an output),
    /// in the order the code stores them.
    pub outputs: Vec<Port>,
    code: Code,
    /// The code with the `per_row` inputs read as scalars, run once per row
    /// of a block (when some input is a row's value or a repeated row); none
    /// when no input is `per_row` (the code above then serves).
    rows: Option<Code>,
}

impl std::fmt::Debug for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Run({} steps, inputs {:?}, outputs {:?})",
            self.steps.len(),
            self.inputs,
            self.outputs
        )
    }
}

impl Run {
    /// Runs the code over one row of `n` elements: as [`Self::call`], with
    /// each `per_row` input pointing to its row's one value (a repeated row
    /// is an ordinary block input there).
    ///
    /// # Safety
    /// As [`Self::call`].
    pub unsafe fn call_row(&self, ins: &[*const u8], outs: &[*mut u8], n: usize) {
        debug_assert_eq!(ins.len(), self.inputs.len());
        debug_assert_eq!(outs.len(), self.outputs.len());
        let code = self.rows.as_ref().unwrap_or(&self.code);
        // SAFETY: forwarded.
        unsafe { code.call(ins.as_ptr(), outs.as_ptr(), n) }
    }

    /// Runs the code over `n` elements.
    ///
    /// # Safety
    /// `ins` holds one pointer per input: to one element for a scalar input,
    /// to `n` elements otherwise; `outs` one per output, valid for `n`
    /// elements. Every output's `n` elements are either exactly an input's or
    /// disjoint from it and from every other output's.
    pub unsafe fn call(&self, ins: &[*const u8], outs: &[*mut u8], n: usize) {
        debug_assert_eq!(ins.len(), self.inputs.len());
        debug_assert_eq!(outs.len(), self.outputs.len());
        // SAFETY: forwarded; the code reads and writes only what it is given.
        unsafe { self.code.call(ins.as_ptr(), outs.as_ptr(), n) }
    }
}

/// Whether runs are compiled: on x86-64 at the vector level the slice
/// kernels use ([`crate::vmath::level`]: detected, or lowered with
/// `VMATH_LEVEL`) when it has AVX2 and FMA.
pub fn supported() -> bool {
    cfg!(target_arch = "x86_64") && crate::vmath::level() >= crate::vmath::Level::Avx2
}

/// Replaces runs of at least two consecutive compilable steps in `steps` (a
/// program's per-block steps) with [`Step::Run`]s. `slots` are the program's
/// slots; `read_elsewhere` holds the slots read by steps outside `steps`
/// (the finalize and column phases). Nothing changes where the machine lacks
/// AVX2 or FMA or code cannot be mapped.
pub fn form_runs(steps: &mut Vec<Step>, slots: &[Slot], read_elsewhere: &[usize]) {
    if !supported() {
        return;
    }
    let mut row_values = vec![false; slots.len()];
    for step in steps.iter() {
        if let Step::RowBroadcast { slot, .. } = step {
            row_values[*slot] = true;
        }
    }
    let compilable = |step: &Step| match step {
        Step::Op {
            slot, args, jit, ..
        } => {
            jit.is_some()
                && slots[*slot].dom == SlotDom::Full
                && args
                    .iter()
                    .all(|&a| matches!(slots[a].dom, SlotDom::Full | SlotDom::Uniform))
        }
        _ => false,
    };
    // Runs as index ranges, each at most MAX_STEPS long.
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        if !compilable(&steps[i]) {
            i += 1;
            continue;
        }
        let mut j = i;
        while j < steps.len() && j - i < MAX_STEPS && compilable(&steps[j]) {
            j += 1;
        }
        if j - i >= 2 {
            ranges.push((i, j));
        }
        i = j;
    }
    if ranges.is_empty() {
        return;
    }
    // Slots live after each run: read by a later step or elsewhere, or homed
    // in an output.
    let mut live = vec![false; slots.len()];
    for &s in read_elsewhere {
        live[s] = true;
    }
    for (s, slot) in slots.iter().enumerate() {
        if let Home::Output(_) = slot.home {
            live[s] = true;
        }
    }
    let mut runs: Vec<(usize, usize, Option<Run>)> = Vec::new();
    let mut at = steps.len();
    for &(start, end) in ranges.iter().rev() {
        for step in &steps[end..at] {
            for s in step_slots(step).0 {
                live[s] = true;
            }
        }
        at = end;
        let run = describe(&steps[start..end], slots, &live, &row_values).and_then(|d| {
            let code = Code::new(&d)?;
            // With a row's value among the inputs, the row-by-row code must
            // exist: the other would read that value as a block.
            let rows = match d.inputs.iter().any(|p| p.per_row) {
                true => {
                    let mut by_rows = d.clone();
                    for p in &mut by_rows.inputs {
                        p.scalar |= p.per_row;
                    }
                    Some(Code::new(&by_rows)?)
                }
                false => None,
            };
            Some((d, code, rows))
        });
        runs.push((
            start,
            end,
            run.map(|(d, code, rows)| Run {
                steps: Vec::new(),
                inputs: d.inputs,
                outputs: d.outputs,
                code,
                rows,
            }),
        ));
    }
    // Splice, from the last run back so earlier indices stay valid.
    for (start, end, run) in runs {
        if let Some(mut run) = run {
            run.steps = steps.splice(start..end, std::iter::empty()).collect();
            steps.insert(start, Step::Run(Box::new(run)));
        }
    }
}

/// A run in value numbers, ready for code generation.
#[derive(Clone)]
struct Desc {
    inputs: Vec<Port>,
    /// Per step: the op and its operands' values.
    ops: Vec<(JitOp, Vec<usize>)>,
    outputs: Vec<Port>,
    /// The value each output stores.
    output_values: Vec<usize>,
}

fn describe(steps: &[Step], slots: &[Slot], live: &[bool], row_values: &[bool]) -> Option<Desc> {
    /// A value while the run is read: an input, or step `k`'s result.
    #[derive(Clone, Copy)]
    enum V {
        In(usize),
        Step(usize),
    }
    let mut inputs = Vec::new();
    let mut value_of: std::collections::HashMap<usize, V> = Default::default();
    let mut read: Vec<(JitOp, Vec<V>)> = Vec::with_capacity(steps.len());
    let mut written = Vec::new();
    for (k, step) in steps.iter().enumerate() {
        let Step::Op {
            slot,
            args,
            jit: Some(op),
            ..
        } = step
        else {
            return None;
        };
        let mut vals = Vec::with_capacity(args.len());
        for &a in args {
            let v = *value_of.entry(a).or_insert_with(|| {
                inputs.push(Port {
                    slot: a,
                    scalar: slots[a].dom == SlotDom::Uniform,
                    per_row: row_values[a],
                    width: slots[a].width,
                });
                V::In(inputs.len() - 1)
            });
            vals.push(v);
        }
        read.push((*op, vals));
        value_of.insert(*slot, V::Step(k));
        if !written.contains(slot) {
            written.push(*slot);
        }
    }
    // Inputs first, then one value per step.
    let n_in = inputs.len();
    let number = |v: V| match v {
        V::In(i) => i,
        V::Step(k) => n_in + k,
    };
    let ops = read
        .into_iter()
        .map(|(op, vals)| (op, vals.into_iter().map(number).collect()))
        .collect();
    let outputs: Vec<Port> = written
        .into_iter()
        .filter(|&s| live[s])
        .map(|s| Port {
            slot: s,
            scalar: false,
            per_row: false,
            width: slots[s].width,
        })
        .collect();
    let widths_ok = inputs
        .iter()
        .chain(&outputs)
        .all(|p| matches!(p.width, 1 | 4));
    if n_in > MAX_PORTS || outputs.len() > MAX_PORTS || !widths_ok {
        return None;
    }
    let output_values = outputs.iter().map(|p| number(value_of[&p.slot])).collect();
    Some(Desc {
        inputs,
        ops,
        outputs,
        output_values,
    })
}

#[cfg(target_arch = "x86_64")]
use codegen::Code;

#[cfg(not(target_arch = "x86_64"))]
enum Code {}

#[cfg(not(target_arch = "x86_64"))]
impl Code {
    fn new(_: &Desc) -> Option<Code> {
        None
    }
    unsafe fn call(&self, _: *const *const u8, _: *const *mut u8, _: usize) {
        match *self {}
    }
}

#[cfg(target_arch = "x86_64")]
mod codegen {
    use super::{Desc, JitOp, Order};
    use iced_x86::code_asm::*;
    use iced_x86::IcedError;
    use platform_api::hlo::ComparisonDirection;
    use platform_api::semantics::contraction::Contraction;

    /// Code that could not be generated (the run then keeps its steps).
    #[derive(Debug)]
    struct GenError;

    impl From<IcedError> for GenError {
        fn from(_: IcedError) -> GenError {
            GenError
        }
    }

    type Entry = unsafe extern "sysv64" fn(*const *const u8, *const *mut u8, usize);

    /// Executable machine code (see the module doc).
    pub struct Code {
        _map: memmap2::Mmap,
        entry: Entry,
    }

    impl Code {
        pub(super) fn new(d: &Desc) -> Option<Code> {
            let bytes = assemble(d).ok()?;
            let mut map = memmap2::MmapMut::map_anon(bytes.len()).ok()?;
            map.copy_from_slice(&bytes);
            let map = map.make_exec().ok()?;
            // SAFETY: the mapping holds a function with this signature
            // (`assemble`'s prologue and epilogue follow the System V ABI).
            let entry = unsafe { std::mem::transmute::<*const u8, Entry>(map.as_ptr()) };
            Some(Code { _map: map, entry })
        }

        /// # Safety
        /// As [`super::Run::call`].
        pub(super) unsafe fn call(&self, ins: *const *const u8, outs: *const *mut u8, n: usize) {
            // SAFETY: forwarded.
            unsafe { (self.entry)(ins, outs, n) }
        }
    }

    /// Registers the allocator hands out; `ymm14` and `ymm15` are the ops'
    /// scratch.
    const POOL: usize = 14;
    const YMM: [AsmRegisterYmm; 16] = [
        ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13,
        ymm14, ymm15,
    ];
    const XMM: [AsmRegisterXmm; 16] = [
        xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7, xmm8, xmm9, xmm10, xmm11, xmm12, xmm13,
        xmm14, xmm15,
    ];
    const T0: AsmRegisterYmm = ymm14;
    const T1: AsmRegisterYmm = ymm15;

    /// The stack frame, above the 32-byte aligned `rsp`: four constants
    /// (sign bits, magnitude bits, all ones, zero), per scalar input its value
    /// in all lanes and as a shift count (zero-extended), then one spill slot
    /// per computed value.
    struct Frame {
        n_scalars: usize,
        n_in: usize,
    }

    const SIGN: i32 = 0;
    const MAGNITUDE: i32 = 32;
    const ONES: i32 = 64;
    const ZERO: i32 = 96;
    const MASKS: usize = 128;

    impl Frame {
        fn splat(&self, k: usize) -> i32 {
            (MASKS + 32 * k) as i32
        }
        fn count(&self, k: usize) -> i32 {
            (MASKS + 32 * self.n_scalars + 16 * k) as i32
        }
        fn spill(&self, v: usize) -> i32 {
            (MASKS + 48 * self.n_scalars + 32 * (v - self.n_in)) as i32
        }
        fn bytes(&self, computed: usize) -> i32 {
            (MASKS + 48 * self.n_scalars + 32 * computed) as i32
        }
    }

    /// Where an operand is: a register, or a scalar input's splat in the
    /// frame (with its index among the scalars).
    #[derive(Clone, Copy, PartialEq, Eq)]
    enum Src {
        Reg(usize),
        Splat(usize),
    }

    /// Register state while one loop body is generated.
    struct Body<'d> {
        d: &'d Desc,
        frame: &'d Frame,
        /// Per input, its index among the scalar inputs.
        scalar_index: &'d [Option<usize>],
        /// Eight lanes (`true`) or one.
        wide: bool,
        /// Per value, the steps using it, ascending; `d.ops.len()` stands for
        /// the stores at the end.
        uses: &'d [Vec<usize>],
        reg: Vec<Option<usize>>,
        holder: [Option<usize>; POOL],
        /// Computed values currently saved in their spill slot.
        saved: Vec<bool>,
    }

    /// `$a.$ins(dst, x, second)` with `second` a register or a splat in the
    /// frame.
    macro_rules! rm {
        ($self:ident, $a:ident . $ins:ident ($o:expr, $x:expr, $y:expr $(, $imm:expr)?)) => {
            match $y {
                Src::Reg(r) => $a.$ins($o, $x, YMM[r] $(, $imm)?)?,
                Src::Splat(k) => $a.$ins($o, $x, ymmword_ptr(rsp + $self.frame.splat(k)) $(, $imm)?)?,
            }
        };
    }

    /// A variable shift, or a shift by a uniform amount (its count in the
    /// frame); both give XLA's results past the width.
    macro_rules! shift {
        ($self:ident, $a:ident, $var:ident, $uni:ident, $o:expr, $x:expr, $y:expr) => {
            match $y {
                Src::Reg(r) => $a.$var($o, $x, YMM[r])?,
                Src::Splat(k) => $a.$uni($o, $x, xmmword_ptr(rsp + $self.frame.count(k)))?,
            }
        };
    }

    impl Body<'_> {
        fn n_in(&self) -> usize {
            self.d.inputs.len()
        }

        fn next_use(&self, v: usize, from: usize) -> usize {
            self.uses[v]
                .iter()
                .copied()
                .find(|&u| u >= from)
                .unwrap_or(usize::MAX)
        }

        /// A free register, evicting the value used furthest from `pos`
        /// (never one of `pinned`).
        fn free(
            &mut self,
            a: &mut CodeAssembler,
            pos: usize,
            pinned: &[usize],
        ) -> Result<usize, GenError> {
            if let Some(r) = self.holder.iter().position(|h| h.is_none()) {
                return Ok(r);
            }
            let (r, v) = self
                .holder
                .iter()
                .enumerate()
                .filter_map(|(r, h)| h.map(|v| (r, v)))
                .filter(|(_, v)| !pinned.contains(v))
                .max_by_key(|&(_, v)| self.next_use(v, pos))
                .ok_or(GenError)?;
            if v >= self.n_in() && !self.saved[v] {
                a.vmovups(ymmword_ptr(rsp + self.frame.spill(v)), YMM[r])?;
                self.saved[v] = true;
            }
            self.reg[v] = None;
            self.holder[r] = None;
            Ok(r)
        }

        /// Where `v` is read from: scalar inputs stay in the frame, anything
        /// else is brought into a register.
        fn operand(
            &mut self,
            a: &mut CodeAssembler,
            v: usize,
            pos: usize,
            pinned: &[usize],
        ) -> Result<Src, GenError> {
            if let Some(k) = self.scalar_index.get(v).copied().flatten() {
                return Ok(Src::Splat(k));
            }
            if let Some(r) = self.reg[v] {
                return Ok(Src::Reg(r));
            }
            let r = self.free(a, pos, pinned)?;
            if v < self.n_in() {
                a.mov(r10, qword_ptr(rdi + (v * 8) as i32))?;
                if self.d.inputs[v].width == 1 {
                    // `pred` bytes to a mask: zero-extend, then not-equal
                    // to zero.
                    if self.wide {
                        a.vpmovzxbd(YMM[r], qword_ptr(r10 + rcx))?;
                    } else {
                        a.movzx(eax, byte_ptr(r10 + rcx))?;
                        a.vmovd(XMM[r], eax)?;
                    }
                    a.vpcmpeqd(YMM[r], YMM[r], ymmword_ptr(rsp + ZERO))?;
                    a.vpxor(YMM[r], YMM[r], ymmword_ptr(rsp + ONES))?;
                } else if self.wide {
                    a.vmovups(YMM[r], ymmword_ptr(r10 + rcx * 4))?;
                } else {
                    a.vmovss(XMM[r], dword_ptr(r10 + rcx * 4))?;
                }
            } else {
                a.vmovups(YMM[r], ymmword_ptr(rsp + self.frame.spill(v)))?;
            }
            self.reg[v] = Some(r);
            self.holder[r] = Some(v);
            Ok(Src::Reg(r))
        }

        /// `src` in a register: its own, or scratch `t` loaded with the splat.
        fn in_reg(
            &self,
            a: &mut CodeAssembler,
            src: Src,
            t: AsmRegisterYmm,
        ) -> Result<AsmRegisterYmm, GenError> {
            Ok(match src {
                Src::Reg(r) => YMM[r],
                Src::Splat(k) => {
                    a.vmovups(t, ymmword_ptr(rsp + self.frame.splat(k)))?;
                    t
                }
            })
        }

        fn release(&mut self, v: usize) {
            if let Some(r) = self.reg[v].take() {
                self.holder[r] = None;
            }
        }

        fn emit(&mut self, a: &mut CodeAssembler) -> Result<(), GenError> {
            let n_in = self.n_in();
            let d = self.d;
            for (pos, (op, vals)) in d.ops.iter().enumerate() {
                let mut src = [Src::Splat(0); 3];
                for (k, &v) in vals.iter().enumerate() {
                    src[k] = self.operand(a, v, pos, vals)?;
                }
                for &v in vals {
                    if self.next_use(v, pos + 1) == usize::MAX {
                        self.release(v);
                    }
                }
                let dst = self.free(a, pos, vals)?;
                let o = YMM[dst];
                let (sx, sy, sz) = (src[0], src[1], src[2]);
                // Commutative integer ops take a splat as their second
                // operand. Float ops keep their order: with two NaN
                // operands, the order picks the NaN that comes out.
                let (sx, sy) = match (op, sx, sy) {
                    (
                        JitOp::IAdd
                        | JitOp::IMul
                        | JitOp::And
                        | JitOp::Or
                        | JitOp::Xor
                        | JitOp::SMax
                        | JitOp::SMin
                        | JitOp::UMax
                        | JitOp::UMin,
                        Src::Splat(_),
                        Src::Reg(_),
                    ) => (sy, sx),
                    _ => (sx, sy),
                };
                let x = self.in_reg(a, sx, T0)?;
                match op {
                    JitOp::FAdd => rm!(self, a.vaddps(o, x, sy)),
                    JitOp::FSub => rm!(self, a.vsubps(o, x, sy)),
                    JitOp::FMul => rm!(self, a.vmulps(o, x, sy)),
                    JitOp::FDiv => rm!(self, a.vdivps(o, x, sy)),
                    JitOp::FMax | JitOp::FMin => {
                        // The hardware's max/min return the second operand
                        // for a NaN or a pair of zeros: the zeros' sign is
                        // fixed with the first operand's bits where the two
                        // compare equal (and for max, or for min), then a
                        // NaN first operand is put back.
                        if x == T0 {
                            // A uniform first operand would need a third
                            // scratch register; such runs keep their steps.
                            return Err(GenError);
                        }
                        if *op == JitOp::FMax {
                            rm!(self, a.vcmpps(T1, x, sy, 4)); // NEQ_UQ
                            a.vorps(T1, T1, x)?;
                            rm!(self, a.vmaxps(T0, x, sy));
                            a.vandps(T0, T0, T1)?;
                        } else {
                            rm!(self, a.vcmpps(T1, x, sy, 0)); // EQ_OQ
                            a.vandps(T1, T1, x)?;
                            rm!(self, a.vminps(T0, x, sy));
                            a.vorps(T0, T0, T1)?;
                        }
                        a.vcmpps(T1, x, x, 3)?; // UNORD_Q
                        a.vblendvps(o, T0, x, T1)?;
                    }
                    JitOp::S32ToF32 => a.vcvtdq2ps(o, x)?,
                    JitOp::Cmp(dir, Order::Float) => {
                        // Ordered and false on NaN, but `NE` (unordered).
                        let predicate = match dir {
                            ComparisonDirection::Eq => 0x00,
                            ComparisonDirection::Lt => 0x01,
                            ComparisonDirection::Le => 0x02,
                            ComparisonDirection::Ne => 0x04,
                            ComparisonDirection::Ge => 0x0d,
                            ComparisonDirection::Gt => 0x0e,
                        };
                        rm!(self, a.vcmpps(o, x, sy, predicate));
                    }
                    JitOp::Cmp(dir, order) => {
                        // Unsigned: flip both sign bits, then compare signed.
                        let (x, y) = if *order == Order::Unsigned {
                            a.vpxor(T0, x, ymmword_ptr(rsp + SIGN))?;
                            a.vmovups(T1, ymmword_ptr(rsp + SIGN))?;
                            rm!(self, a.vpxor(T1, T1, sy));
                            (T0, T1)
                        } else {
                            (x, self.in_reg(a, sy, T1)?)
                        };
                        use ComparisonDirection as D;
                        let (p, q, equal, negate) = match dir {
                            D::Eq => (x, y, true, false),
                            D::Ne => (x, y, true, true),
                            D::Gt => (x, y, false, false),
                            D::Lt => (y, x, false, false),
                            D::Le => (x, y, false, true),
                            D::Ge => (y, x, false, true),
                        };
                        if equal {
                            a.vpcmpeqd(o, p, q)?;
                        } else {
                            a.vpcmpgtd(o, p, q)?;
                        }
                        if negate {
                            a.vpxor(o, o, ymmword_ptr(rsp + ONES))?;
                        }
                    }
                    JitOp::Select => {
                        // `x` is the mask; on false in a register, on true
                        // wherever it is.
                        let mask = if x == T0 {
                            a.vmovaps(T1, T0)?;
                            T1
                        } else {
                            x
                        };
                        let on_false = self.in_reg(a, sz, T0)?;
                        rm!(self, a.vblendvps(o, on_false, sy, mask));
                    }
                    JitOp::FNeg => a.vxorps(o, x, ymmword_ptr(rsp + SIGN))?,
                    JitOp::FAbs => a.vandps(o, x, ymmword_ptr(rsp + MAGNITUDE))?,
                    JitOp::Fma(how) => {
                        // As the slice kernels do: negate an operand (its sign
                        // bit), then one fused multiply-add.
                        match how {
                            Contraction::Add => {
                                let z = self.in_reg(a, sz, T1)?;
                                a.vmovaps(T1, z)?;
                                rm!(self, a.vfmadd231ps(T1, x, sy));
                            }
                            Contraction::SubtractFromProduct => {
                                a.vmovups(T1, ymmword_ptr(rsp + SIGN))?;
                                rm!(self, a.vxorps(T1, T1, sz));
                                rm!(self, a.vfmadd231ps(T1, x, sy));
                            }
                            Contraction::SubtractProduct => {
                                a.vxorps(T1, x, ymmword_ptr(rsp + SIGN))?;
                                let y = self.in_reg(a, sy, T0)?;
                                rm!(self, a.vfmadd213ps(T1, y, sz));
                            }
                        }
                        a.vmovaps(o, T1)?;
                    }
                    JitOp::IAdd => rm!(self, a.vpaddd(o, x, sy)),
                    JitOp::ISub => rm!(self, a.vpsubd(o, x, sy)),
                    JitOp::IMul => rm!(self, a.vpmulld(o, x, sy)),
                    JitOp::And => rm!(self, a.vpand(o, x, sy)),
                    JitOp::Or => rm!(self, a.vpor(o, x, sy)),
                    JitOp::Xor => rm!(self, a.vpxor(o, x, sy)),
                    JitOp::Not => a.vpxor(o, x, ymmword_ptr(rsp + ONES))?,
                    JitOp::Shl => shift!(self, a, vpsllvd, vpslld, o, x, sy),
                    JitOp::ShrLogical => shift!(self, a, vpsrlvd, vpsrld, o, x, sy),
                    JitOp::ShrArithmetic => shift!(self, a, vpsravd, vpsrad, o, x, sy),
                    JitOp::ShiftPairOr => {
                        shift!(self, a, vpsllvd, vpslld, T1, x, sy);
                        shift!(self, a, vpsrlvd, vpsrld, o, x, sz);
                        a.vpor(o, o, T1)?;
                    }
                    JitOp::SMax => rm!(self, a.vpmaxsd(o, x, sy)),
                    JitOp::SMin => rm!(self, a.vpminsd(o, x, sy)),
                    JitOp::UMax => rm!(self, a.vpmaxud(o, x, sy)),
                    JitOp::UMin => rm!(self, a.vpminud(o, x, sy)),
                    JitOp::Same => a.vmovaps(o, x)?,
                }
                let v = n_in + pos;
                self.reg[v] = Some(dst);
                self.holder[dst] = Some(v);
                if self.uses[v].is_empty() {
                    self.release(v);
                }
            }
            let end = d.ops.len();
            for (k, &v) in d.output_values.iter().enumerate() {
                let src = self.operand(a, v, end, &[])?;
                let r = self.in_reg(a, src, T0)?;
                a.mov(r10, qword_ptr(rsi + (k * 8) as i32))?;
                if d.outputs[k].width == 1 {
                    // A mask to `pred` bytes: its low bit, packed.
                    a.vpsrld(T0, r, 31)?;
                    if self.wide {
                        a.vextracti128(xmm15, T0, 1)?;
                        a.vpackusdw(xmm14, xmm14, xmm15)?;
                        a.vpackuswb(xmm14, xmm14, xmm14)?;
                        a.vmovq(qword_ptr(r10 + rcx), xmm14)?;
                    } else {
                        a.vmovd(eax, xmm14)?;
                        a.mov(byte_ptr(r10 + rcx), al)?;
                    }
                } else if self.wide {
                    a.vmovups(ymmword_ptr(r10 + rcx * 4), r)?;
                } else {
                    let x = XMM[YMM.iter().position(|&y| y == r).ok_or(GenError)?];
                    a.vmovss(dword_ptr(r10 + rcx * 4), x)?;
                }
            }
            Ok(())
        }
    }

    /// `fn(ins, outs, n)` (System V): `rdi` = inputs, `rsi` = outputs,
    /// `rdx` = elements, `rcx` = the element index.
    fn assemble(d: &Desc) -> Result<Vec<u8>, GenError> {
        let n_in = d.inputs.len();
        let n_values = n_in + d.ops.len();
        let mut uses = vec![Vec::new(); n_values];
        for (pos, (_, vals)) in d.ops.iter().enumerate() {
            for &v in vals {
                if uses[v].last() != Some(&pos) {
                    uses[v].push(pos);
                }
            }
        }
        for &v in &d.output_values {
            if uses[v].last() != Some(&d.ops.len()) {
                uses[v].push(d.ops.len());
            }
        }
        let mut scalar_index = vec![None; n_values];
        let mut scalars = Vec::new();
        for (v, port) in d.inputs.iter().enumerate() {
            if port.scalar {
                scalar_index[v] = Some(scalars.len());
                scalars.push(v);
            }
        }
        let frame = Frame {
            n_scalars: scalars.len(),
            n_in,
        };
        let mut a = CodeAssembler::new(64)?;
        a.push(rbp)?;
        a.mov(rbp, rsp)?;
        a.and(rsp, -32)?;
        a.sub(rsp, frame.bytes(d.ops.len()))?;
        // The masks and the scalars' splats and counts, once per call.
        for (at, bits) in [
            (SIGN, 0x8000_0000u32),
            (MAGNITUDE, 0x7fff_ffff),
            (ONES, u32::MAX),
            (ZERO, 0),
        ] {
            a.mov(eax, bits)?;
            a.vmovd(xmm15, eax)?;
            a.vpbroadcastd(ymm15, xmm15)?;
            a.vmovups(ymmword_ptr(rsp + at), ymm15)?;
        }
        for (k, &v) in scalars.iter().enumerate() {
            a.mov(r10, qword_ptr(rdi + (v * 8) as i32))?;
            if d.inputs[v].width == 1 {
                // A uniform `pred`: its mask in every lane.
                a.cmp(byte_ptr(r10), 0)?;
                a.setne(al)?;
                a.movzx(eax, al)?;
                a.neg(eax)?;
                a.vmovd(xmm15, eax)?;
                a.vpbroadcastd(ymm15, xmm15)?;
            } else {
                a.vbroadcastss(ymm15, dword_ptr(r10))?;
            }
            a.vmovups(ymmword_ptr(rsp + frame.splat(k)), ymm15)?;
            if d.inputs[v].width == 4 {
                // `vmovd` zero-extends: the count is the amount as unsigned.
                a.vmovd(xmm15, dword_ptr(r10))?;
                a.vmovdqu(xmmword_ptr(rsp + frame.count(k)), xmm15)?;
            }
        }
        a.xor(ecx, ecx)?;
        a.mov(r8, rdx)?;
        a.and(r8, -8)?;
        let mut vec_loop = a.create_label();
        let mut tail = a.create_label();
        let mut done = a.create_label();
        a.set_label(&mut vec_loop)?;
        a.cmp(rcx, r8)?;
        a.jae(tail)?;
        for wide in [true, false] {
            let mut body = Body {
                d,
                frame: &frame,
                scalar_index: &scalar_index,
                wide,
                uses: &uses,
                reg: vec![None; n_values],
                holder: [None; POOL],
                saved: vec![false; n_values],
            };
            body.emit(&mut a)?;
            if wide {
                a.add(rcx, 8)?;
                a.jmp(vec_loop)?;
                a.set_label(&mut tail)?;
                a.cmp(rcx, rdx)?;
                a.jae(done)?;
            } else {
                a.inc(rcx)?;
                a.jmp(tail)?;
            }
        }
        a.set_label(&mut done)?;
        a.vzeroupper()?;
        a.mov(rsp, rbp)?;
        a.pop(rbp)?;
        a.ret()?;
        Ok(a.assemble(0)?)
    }
}
