//! Machine code for runs of simple elementwise steps (x86-64 with AVX2 and
//! FMA, or AVX-512).
//!
//! A block program runs every elementwise op as one slice kernel call per
//! block: the op reads its operands from block registers in L1 and writes its
//! result to another, so a cheap op (an add, a shift, an xor, a select) costs
//! its loads and its store more than its arithmetic. Here a run of consecutive
//! steps whose operations are simple (integer and float arithmetic, bitwise
//! ops, shifts, comparisons and selects on 4-byte elements and `pred`)
//! becomes one loop of generated code that walks the block a vector at a
//! time with every intermediate in a vector register, and stores only the
//! slots read after the run. Random numbers (threefry's rounds of adds,
//! rotates and xors; the normal distribution's `erf_inv`, a polynomial whose
//! coefficients are selected per element) and elementwise arithmetic around
//! transcendentals are what it is for. The transcendentals whose slice
//! kernels are `vmath`'s own formulas (`exponential`, `tanh`, `logistic`,
//! `log`, `rsqrt`) join runs written out as those formulas' operations
//! ([`math`]), so `tanh(x * y + 1) - exp(-|x|) / (y * y + 1)` is one pass
//! over memory; those taken from the C library (`erf`, `sin`, ...) keep their
//! kernels.
//!
//! The block program puts its loads at the start of each stretch of loads
//! and such ops, so that reading a bias between two ops does not split a
//! run. [`form_runs`] replaces such runs in a program's per-block steps with a
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
//! Values are numbered: the run's inputs, its constants, then one per
//! operation (a function written out is many). The code is `zmm` code (16
//! lanes a register, a pool of 30) at the AVX-512 vector level
//! ([`crate::vmath::level`] when the run is compiled), `ymm` code (8 lanes,
//! a pool of 14) at AVX2's, from one generator over the width (`codegen`'s
//! `Width`): AVX-512's comparisons write mask registers, so there a
//! comparison's mask is moved back into a vector register, and a select
//! moves it back out. A value gets a register
//! from the pool when it is needed; with the pool empty, the value used
//! furthest ahead is evicted (an input is reloaded when needed again, a
//! computed value goes to a stack slot). Uniform scalars are splatted into
//! the stack frame once per call, constants once per run into a table beside
//! the code, and both are read as memory operands (a shift by one uses the
//! count form); a frame larger than a page is
//! touched a page at a time from the top first, so that a short stack meets
//! its guard page. A `pred` is a lane mask (all ones or zero)
//! inside the code and a 0/1 byte outside it. An iteration loads inputs as
//! they are first used and stores the run's results at its end, after every
//! load of its lanes, so a result may be written over one of its inputs (in
//! place). The main loop takes two groups of lanes per iteration, each
//! operation emitted for the first group then the second: a written-out
//! function is a long chain of dependent steps, and with one group the
//! out-of-order window holds too little of the next iteration to hide its
//! latency. A group's lanes left over take one pass of the single-group code,
//! and the tail of a block (fewer than a group) runs the same code one lane
//! at a time. The code gets a mapping of its own, made executable once
//! written; it branches relatively, and holds two absolute addresses: its
//! constants' table (kept with it) and one call: `exponential`'s subnormal
//! results (a masked softmax's `exp(-1e9)`s) are computed as the slice kernel
//! fixes them up, by a call to a Rust function out of line that the loop
//! branches to only for a group with such an argument.
//!
//! Every operation is the instruction the slice kernels' loops compile to, or
//! (in a written-out function, see [`math`]) one that gives the same value on
//! every argument it can see, so results are bit for bit the same, but for
//! which NaN an op on two NaNs
//! returns (the operand order, which LLVM may commute in a kernel): IEEE
//! `add`/`sub`/`mul`/`div` and comparisons, fused multiply-adds rounded once
//! after negating an operand's sign bit (as the kernels do), sign-bit
//! `negate`/`abs`, `maximum`/`minimum` with the hardware's answer fixed for
//! NaNs and signed zeros, and AVX2's variable shifts, which give XLA's results
//! for amounts of the width or more (zero, or the sign for an arithmetic
//! shift).

mod math;

use super::program::{step_slots, ElemOp, Home, Slot, SlotDom, Step};
use math::Val;
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, UnaryOp};
use platform_api::semantics::contraction::Contraction;
use platform_api::ElementType;

/// Most simple ops in one run, the functions counted as written out
/// ([`JitOp::weight`]): bounds the code and the stack frame (at `zmm` width
/// 80 bytes per scalar input, 64 per computed value and group: under 72 KB).
const MAX_OPS: usize = 512;
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
    /// Wrapping `0 - x`.
    INeg,
    /// Wrapping absolute value of an s32 (`i32::MIN` stays itself).
    IAbs,
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
    /// `vcmpps` with this predicate, giving a mask (for the written-out
    /// functions' special cases).
    FloatPredicate(u8),
    /// IEEE square root (one instruction).
    Sqrt,
    /// `vroundps` with this immediate: `floor`, `ceil`,
    /// `round-nearest-even`.
    Round(u8),
    /// `vcvttps2dq`: truncation toward zero, `i32::MIN` for NaN and out of
    /// range (the `convert` function fixes those).
    TruncToS32,
    /// `vcvtps2dq`: to the nearest integer, ties to even (the rounding mode
    /// nothing here changes), `i32::MIN` for NaN and out of range.
    RoundToS32,
    /// `[a, b]`: `a > b ? a : b` (`vmaxps`), so a NaN `b` passes: the
    /// written-out functions' lower clamps, `if x < lo { lo } else { x }`.
    PickGreater,
    /// `[a, b]`: `a < b ? a : b` (`vminps`): upper clamps.
    PickLess,
    /// `[x, e, bound]`: `e`, but where `x < bound` (groups with such
    /// a lane are rare: a masked softmax's `-inf`s) the `exp` kernel's fixup,
    /// by a call out of the code
    /// ([`crate::elementwise_ops::exp_f32_below_normal`]).
    ExpBelowNormal,
    /// A function of the ops above, written out by [`math`] when the run
    /// is compiled (never reaches code generation).
    Func(Function),
}

/// An operation a run holds as a sequence of the simple [`JitOp`]s.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Function {
    /// Element functions of [`crate::vmath::math32`] (`exponential` with the
    /// `exp` kernel's handling of subnormal results).
    Exp,
    Tanh,
    Logistic,
    Log,
    Rsqrt,
    /// `clamp(lo, x, hi)`: `minimum(hi, maximum(lo, x))` in the order's
    /// type.
    Clamp(Order),
    /// `convert` from f32 to s32: truncated, saturated, NaN to 0.
    F32ToS32,
    /// `convert` from `pred`: the mask's lanes and these bits (1 or 1.0).
    FromPred(u32),
}

impl Function {
    /// At least the number of simple ops the function becomes.
    fn weight(self) -> usize {
        match self {
            Function::Exp => 32,
            Function::Tanh => 40,
            Function::Logistic => 35,
            Function::Log => 40,
            Function::Rsqrt | Function::Clamp(_) => 2,
            Function::F32ToS32 => 5,
            Function::FromPred(_) => 1,
        }
    }
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
            ElemOp::Unary(UnaryOp::Negate) if int => JitOp::INeg,
            ElemOp::Unary(UnaryOp::Abs) if int && ty == S32 => JitOp::IAbs,
            ElemOp::Unary(UnaryOp::Sqrt) if float => JitOp::Sqrt,
            // `vroundps`'s immediate: the rounding, and no precision
            // exception (as `f32::floor` and the others compile).
            ElemOp::Unary(UnaryOp::Floor) if float => JitOp::Round(0x9),
            ElemOp::Unary(UnaryOp::Ceil) if float => JitOp::Round(0xa),
            ElemOp::Unary(UnaryOp::RoundNearestEven) if float => JitOp::Round(0x8),
            ElemOp::Unary(UnaryOp::Rsqrt) if float => JitOp::Func(Function::Rsqrt),
            ElemOp::Unary(UnaryOp::Exp) if float => JitOp::Func(Function::Exp),
            ElemOp::Unary(UnaryOp::Tanh) if float => JitOp::Func(Function::Tanh),
            ElemOp::Unary(UnaryOp::Logistic) if float => JitOp::Func(Function::Logistic),
            ElemOp::Unary(UnaryOp::Log) if float => JitOp::Func(Function::Log),
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
            ElemOp::Convert if ty == S32 && args == [F32] => JitOp::Func(Function::F32ToS32),
            ElemOp::Convert if ty == F32 && args == [Pred] => {
                JitOp::Func(Function::FromPred(1f32.to_bits()))
            }
            ElemOp::Convert if matches!(ty, S32 | U32) && args == [Pred] => {
                JitOp::Func(Function::FromPred(1))
            }
            ElemOp::Clamp if args.len() == 3 && args.iter().all(|&t| t == ty) => {
                JitOp::Func(Function::Clamp(match ty {
                    F32 => Order::Float,
                    S32 => Order::Signed,
                    U32 => Order::Unsigned,
                    _ => return None,
                }))
            }
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
            JitOp::FNeg
            | JitOp::FAbs
            | JitOp::INeg
            | JitOp::IAbs
            | JitOp::Not
            | JitOp::Same
            | JitOp::S32ToF32
            | JitOp::Sqrt
            | JitOp::Round(_)
            | JitOp::TruncToS32
            | JitOp::RoundToS32 => 1,
            JitOp::Fma(_)
            | JitOp::ShiftPairOr
            | JitOp::Select
            | JitOp::ExpBelowNormal
            | JitOp::Func(Function::Clamp(_)) => 3,
            JitOp::Func(_) => 1,
            _ => 2,
        }
    }

    /// At least the number of simple ops the op becomes.
    fn weight(self) -> usize {
        match self {
            JitOp::Func(f) => f.weight(),
            _ => 1,
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
    // A step a run can hold, with its weight.
    let compilable = |step: &Step| match step {
        Step::Op {
            slot,
            args,
            jit: Some(op),
            ..
        } if slots[*slot].dom == SlotDom::Full
            && args
                .iter()
                .all(|&a| matches!(slots[a].dom, SlotDom::Full | SlotDom::Uniform)) =>
        {
            Some(op.weight())
        }
        _ => None,
    };
    // Runs as index ranges, each at most MAX_OPS long written out.
    let mut ranges = Vec::new();
    let mut i = 0;
    while i < steps.len() {
        if compilable(&steps[i]).is_none() {
            i += 1;
            continue;
        }
        let mut j = i;
        let mut ops = 0;
        while let Some(weight) = steps.get(j).and_then(compilable) {
            ops += weight;
            if ops > MAX_OPS {
                break;
            }
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

/// A run in value numbers, ready for code generation: the inputs, then the
/// constants, then one value per op.
#[derive(Clone)]
struct Desc {
    inputs: Vec<Port>,
    /// Constants' bits, read in every lane.
    consts: Vec<u32>,
    /// Per op (simple ones only: functions are written out): the op and its
    /// operands' values.
    ops: Vec<(JitOp, Vec<usize>)>,
    outputs: Vec<Port>,
    /// The value each output stores.
    output_values: Vec<usize>,
}

impl Desc {
    /// The first op's value.
    fn first_op(&self) -> usize {
        self.inputs.len() + self.consts.len()
    }

    /// Values in all: inputs, constants, ops.
    fn n_values(&self) -> usize {
        self.first_op() + self.ops.len()
    }
}

fn describe(steps: &[Step], slots: &[Slot], live: &[bool], row_values: &[bool]) -> Option<Desc> {
    let mut inputs = Vec::new();
    let mut value_of: std::collections::HashMap<usize, Val> = Default::default();
    let mut b = math::Builder::default();
    let mut written = Vec::new();
    for step in steps {
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
                Val::In(inputs.len() - 1)
            });
            vals.push(v);
        }
        let v = b.apply(*op, &vals);
        value_of.insert(*slot, v);
        if !written.contains(slot) {
            written.push(*slot);
        }
    }
    let n_in = inputs.len();
    let n_consts = b.consts.len();
    let number = |v: Val| match v {
        Val::In(i) => i,
        Val::Const(c) => n_in + c,
        Val::Op(k) => n_in + n_consts + k,
    };
    let ops = b
        .ops
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
        consts: b.consts,
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
mod codegen;
