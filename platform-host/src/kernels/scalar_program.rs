//! A small evaluator for scalar subcomputations: reducers, comparators, scatter
//! combiners, `map` bodies, select-and-scatter's select and scatter.
//!
//! The shared front end (`hlo::analysis::scalar_program`, which the reference
//! evaluator uses too) turns a computation whose parameters and result are
//! scalars (or tuples of scalars) into typed register steps: it inlines calls,
//! drops dead code and decides what compiles. This module only executes them:
//! every register is a 16-byte slot, constants are written into the register
//! template at compile time, and each step calls the op table's kernel for it
//! ([`crate::elementwise_ops`], the same one elementwise thunks and fusions
//! run) with a length of one. The Host's FMA custom call enters through the
//! front end's extension hook.
//! Evaluating is then a short loop of indirect calls with no allocation, which
//! is the general path of kernels whose fast paths recognise common
//! subcomputations ([`binary_reducer`]) and skip it.

use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::fma;
use platform_api::hlo::analysis::combiner::binary_combiner;
use platform_api::hlo::analysis::scalar_program::{self as front, Leaf, ScalarExtension, ScalarOp};
use platform_api::hlo::{BinaryOp, CompId, HloInstruction, InstrId};
use platform_api::semantics::contraction::Contraction;
use platform_api::{ElementType, Error, HloModule, Result};

/// One register: room for any element type (c128 is 16 bytes), 8-byte aligned.
pub type Register = [u64; 2];

enum Step {
    /// `dst = kernel(args[..kernel.arity()])`: an elementwise op of the op
    /// table.
    Op(Kernel, [u16; 3], u16),
    Copy(u16, u16),
}

/// A compiled scalar computation.
pub struct ScalarProgram {
    steps: Vec<Step>,
    template: Vec<Register>,
    /// Register of each parameter leaf, in parameter order (tuple parameters
    /// flattened); parameter leaf `i` is register `i`.
    params: Vec<(u16, ElementType)>,
    /// Register of each result leaf.
    outputs: Vec<(u16, ElementType)>,
    /// Element type held by each register.
    reg_types: Vec<ElementType>,
}

/// The custom calls the Host runs inside scalar programs: its fused
/// multiply-add.
struct HostCustomCalls;

impl ScalarExtension for HostCustomCalls {
    type Op = Contraction;
    fn custom_call(
        &self,
        instr: &HloInstruction,
        _: &[ElementType],
    ) -> Result<Option<Contraction>> {
        fma::fused_multiply_add(instr)
    }
}

fn register(r: u32) -> Result<u16> {
    u16::try_from(r)
        .map_err(|_| Error::unimplemented("subcomputation too large for the scalar evaluator"))
}

fn leaf(l: &Leaf) -> Result<(u16, ElementType)> {
    Ok((register(l.reg)?, l.ty))
}

impl ScalarProgram {
    /// Compiles computation `comp` of `module`.
    pub fn compile(module: &HloModule, comp: CompId) -> Result<ScalarProgram> {
        Self::lower(front::ScalarProgram::compile(
            module,
            comp,
            &HostCustomCalls,
        )?)
    }

    /// Compiles the expression rooted at `root` in computation `comp` as a
    /// program whose parameters are the leaves of the computation's parameter
    /// `param` (a sort key pulled out of a comparator).
    pub fn compile_expression(
        module: &HloModule,
        comp: CompId,
        root: InstrId,
        param: usize,
    ) -> Result<ScalarProgram> {
        Self::lower(front::ScalarProgram::compile_expression(
            module,
            comp,
            root,
            param,
            &HostCustomCalls,
        )?)
    }

    /// Gives each front-end step its op-table kernel.
    fn lower(program: front::ScalarProgram<Contraction>) -> Result<ScalarProgram> {
        let mut template: Vec<Register> = vec![[0; 2]; program.num_regs()];
        for (r, value) in &program.constants {
            let slot: &mut [u8] = bytemuck::cast_slice_mut(&mut template[*r as usize]);
            value.write_bytes(&mut slot[..value.element_type().byte_size()]);
        }
        let types = &program.reg_types;
        let mut steps = Vec::with_capacity(program.steps.len());
        for step in &program.steps {
            let out_ty = types[step.out as usize];
            let arg_ty = |k: usize| step.args().get(k).map_or(out_ty, |&r| types[r as usize]);
            let d = register(step.out)?;
            let kernel = match &step.op {
                ScalarOp::Unary(op) => ops::unary(*op, arg_ty(0), out_ty),
                ScalarOp::Convert => ops::convert(arg_ty(0), out_ty),
                ScalarOp::ReducePrecision {
                    exponent_bits,
                    mantissa_bits,
                } => ops::reduce_precision(arg_ty(0), *exponent_bits, *mantissa_bits),
                ScalarOp::Binary(op) => ops::binary(*op, arg_ty(0), out_ty),
                ScalarOp::Compare {
                    direction,
                    compare_type,
                } => ops::compare(*direction, *compare_type, arg_ty(0)),
                ScalarOp::Select => ops::select(out_ty),
                ScalarOp::Clamp => ops::clamp(out_ty),
                ScalarOp::Extension(how) => ops::fused_multiply_add(*how, out_ty),
                ScalarOp::BitcastConvert => {
                    steps.push(Step::Copy(register(step.args()[0])?, d));
                    continue;
                }
            }
            .map_err(|e| e.context(format!("in computation %{}", program.name)))?;
            if kernel.arity() != step.args().len() {
                return Err(Error::internal(format!(
                    "%{}: a step with {} operands got a kernel of arity {}",
                    program.name,
                    step.args().len(),
                    kernel.arity()
                )));
            }
            let mut args = [0u16; 3];
            for (a, &r) in args.iter_mut().zip(step.args()) {
                *a = register(r)?;
            }
            steps.push(Step::Op(kernel, args, d));
        }
        Ok(ScalarProgram {
            steps,
            template,
            params: program.params.iter().map(leaf).collect::<Result<_>>()?,
            outputs: program.outputs.iter().map(leaf).collect::<Result<_>>()?,
            reg_types: program.reg_types,
        })
    }

    /// Number of parameter leaves.
    pub fn param_count(&self) -> usize {
        self.params.len()
    }
    /// Element type of each result leaf.
    pub fn output_types(&self) -> Vec<ElementType> {
        self.outputs.iter().map(|(_, t)| *t).collect()
    }
    /// The register holding result leaf `i`.
    pub fn output_register(&self, i: usize) -> u16 {
        self.outputs[i].0
    }
    /// Element type of each parameter leaf.
    pub fn param_types(&self) -> Vec<ElementType> {
        self.params.iter().map(|(_, t)| *t).collect()
    }

    /// Evaluates the program on `n` elements at once: parameter leaf `i` reads
    /// `params[i]` (`n` contiguous elements; null for an unused parameter,
    /// which then reads as zeros), and the values of result leaf `output` are
    /// written to `out`. Works in blocks so the per-register buffers stay in
    /// cache.
    ///
    /// # Safety
    /// Every non-null `params[i]` must hold `n` elements of that parameter's
    /// type, and `out` room for `n` elements of the result leaf's type;
    /// `output` must be below the number of result leaves.
    pub unsafe fn eval_batch(&self, params: &[*const u8], n: usize, output: usize, out: *mut u8) {
        const BLOCK: usize = 2048;
        let register = self.outputs[output].0;
        let mut bufs: Vec<Vec<Register>> = vec![vec![[0; 2]; BLOCK]; self.template.len()];
        // Constants: broadcast the template value into each element slot.
        for (r, value) in self.template.iter().enumerate().skip(self.params.len()) {
            let w = self.reg_types[r].byte_size();
            let bytes: &[u8] = bytemuck::cast_slice(std::slice::from_ref(value));
            let buf: &mut [u8] = bytemuck::cast_slice_mut(&mut bufs[r]);
            for i in 0..BLOCK {
                buf[i * w..(i + 1) * w].copy_from_slice(&bytes[..w]);
            }
        }
        let out_w = self.reg_types[register as usize].byte_size();
        let mut start = 0;
        while start < n {
            let len = BLOCK.min(n - start);
            for (i, &(r, ty)) in self.params.iter().enumerate() {
                let w = ty.byte_size();
                let dst = bufs[r as usize].as_mut_ptr().cast::<u8>();
                match params.get(i) {
                    // SAFETY: the caller's array holds `n` elements.
                    Some(&p) if !p.is_null() => unsafe {
                        std::ptr::copy_nonoverlapping(p.add(start * w), dst, len * w)
                    },
                    // SAFETY: the block buffer holds BLOCK registers.
                    _ => unsafe { std::ptr::write_bytes(dst, 0, len * w) },
                }
            }
            let ptr = |bufs: &mut Vec<Vec<Register>>, r: u16| -> *mut u8 {
                bufs[r as usize].as_mut_ptr().cast::<u8>()
            };
            for step in &self.steps {
                match step {
                    Step::Op(kernel, regs, d) => {
                        let arity = kernel.arity();
                        let mut args = [Arg::Scalar(std::ptr::null()); 3];
                        for (arg, &r) in args.iter_mut().zip(&regs[..arity]) {
                            *arg = Arg::Ptr(ptr(&mut bufs, r).cast_const());
                        }
                        let dst = ptr(&mut bufs, *d);
                        // SAFETY: block buffers hold `len` elements of their
                        // register's type; the destination register is
                        // distinct from every operand's.
                        unsafe { kernel.call(&args[..arity], dst, len) }
                    }
                    Step::Copy(a, d) => {
                        let w = self.reg_types[*d as usize].byte_size();
                        let (pa, pd) = (ptr(&mut bufs, *a), ptr(&mut bufs, *d));
                        // SAFETY: as above.
                        unsafe { std::ptr::copy(pa, pd, len * w) };
                    }
                }
            }
            // SAFETY: `out` holds `n` elements of the register's type.
            unsafe {
                std::ptr::copy_nonoverlapping(
                    bufs[register as usize].as_ptr().cast::<u8>(),
                    out.add(start * out_w),
                    len * out_w,
                )
            };
            start += len;
        }
    }

    /// A fresh evaluator (one per thread).
    pub fn evaluator(&self) -> ScalarEval<'_> {
        ScalarEval {
            program: self,
            regs: self.template.clone(),
        }
    }
}

/// Evaluates a [`ScalarProgram`] on `lanes` independent sets of arguments at
/// once: every register holds one element per lane, and each step runs its
/// op-table kernel over all lanes in one call. A kernel walk that keeps many
/// independent accumulators (one per output of a variadic reduce) pays the
/// per-step dispatch once per `lanes` elements instead of once per element;
/// each lane computes exactly what [`ScalarEval`] would.
pub struct LaneEval<'p> {
    program: &'p ScalarProgram,
    lanes: usize,
    /// Register `r`'s lanes, `lanes` elements of its type, packed.
    regs: Vec<Vec<u64>>,
}

impl ScalarProgram {
    /// A fresh lane evaluator (one per thread) for at most `lanes` lanes.
    pub fn lane_evaluator(&self, lanes: usize) -> LaneEval<'_> {
        let lanes = lanes.max(1);
        let regs = self
            .template
            .iter()
            .zip(&self.reg_types)
            .map(|(value, ty)| {
                let w = ty.byte_size();
                let mut buf = vec![0u64; (lanes * 16).div_ceil(8)];
                let bytes: &mut [u8] = bytemuck::cast_slice_mut(&mut buf);
                let one: &[u8] = bytemuck::cast_slice(value);
                for lane in bytes.chunks_exact_mut(w.max(1)).take(lanes) {
                    lane.copy_from_slice(&one[..w.max(1)]);
                }
                buf
            })
            .collect();
        LaneEval {
            program: self,
            lanes,
            regs,
        }
    }
}

impl LaneEval<'_> {
    /// The lanes this evaluator holds.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Byte width of parameter leaf `i`.
    pub fn param_width(&self, i: usize) -> usize {
        self.program.params[i].1.byte_size()
    }

    /// Parameter leaf `i`'s lanes, to fill (`lanes * width` bytes).
    pub fn param_lanes(&mut self, i: usize) -> &mut [u8] {
        let (r, ty) = self.program.params[i];
        let n = self.lanes * ty.byte_size();
        &mut bytemuck::cast_slice_mut(&mut self.regs[r as usize])[..n]
    }

    /// Result leaf `i`'s lanes (`lanes * width` bytes).
    pub fn output_lanes(&self, i: usize) -> &[u8] {
        let (r, ty) = self.program.outputs[i];
        let n = self.lanes * ty.byte_size();
        &bytemuck::cast_slice(&self.regs[r as usize])[..n]
    }

    /// Runs the program on the first `active` lanes (at most `lanes`).
    pub fn run(&mut self, active: usize) {
        let n = active.min(self.lanes);
        let types = &self.program.reg_types;
        for step in &self.program.steps {
            match step {
                Step::Op(kernel, regs, d) => {
                    let arity = kernel.arity();
                    let mut args = [Arg::Scalar(std::ptr::null()); 3];
                    for (arg, &r) in args.iter_mut().zip(&regs[..arity]) {
                        *arg = Arg::Ptr(self.regs[r as usize].as_ptr().cast::<u8>());
                    }
                    let dst = self.regs[*d as usize].as_mut_ptr().cast::<u8>();
                    // SAFETY: every register holds `lanes` elements of its
                    // type; the destination is a register of its own, not one
                    // of the arguments.
                    unsafe { kernel.call(&args[..arity], dst, n) }
                }
                Step::Copy(a, d) => {
                    let bytes = n * types[*a as usize].byte_size();
                    let src = self.regs[*a as usize].as_ptr().cast::<u8>();
                    let dst = self.regs[*d as usize].as_mut_ptr().cast::<u8>();
                    // SAFETY: both registers hold `lanes` elements of one width
                    // (a bitcast keeps the width); `copy` allows a == d.
                    unsafe { std::ptr::copy(src, dst, bytes) };
                }
            }
        }
    }
}

/// Evaluates a [`ScalarProgram`] repeatedly with its own registers.
pub struct ScalarEval<'p> {
    program: &'p ScalarProgram,
    regs: Vec<Register>,
}

impl ScalarEval<'_> {
    /// Sets parameter leaf `i` from the element at `src`.
    ///
    /// # Safety
    /// `src` must point at one element of the parameter's type.
    #[inline]
    pub unsafe fn set_param(&mut self, i: usize, src: *const u8) {
        let (r, ty) = self.program.params[i];
        // SAFETY: registers are 16 bytes, enough for any element; `src` holds one.
        unsafe {
            std::ptr::copy_nonoverlapping(
                src,
                self.regs[r as usize].as_mut_ptr().cast::<u8>(),
                ty.byte_size(),
            )
        };
    }

    /// Sets parameter leaf `i` from a register value (e.g. an accumulator).
    #[inline]
    pub fn set_param_register(&mut self, i: usize, value: Register) {
        let (r, _) = self.program.params[i];
        self.regs[r as usize] = value;
    }

    /// Runs the program.
    #[inline]
    pub fn run(&mut self) {
        let base = self.regs.as_mut_ptr();
        let reg = |r: u16| -> *mut u8 { base.wrapping_add(r as usize).cast::<u8>() };
        for step in &self.program.steps {
            match step {
                Step::Op(kernel, regs, d) => {
                    let arity = kernel.arity();
                    let mut args = [Arg::Scalar(std::ptr::null()); 3];
                    for (arg, &r) in args.iter_mut().zip(&regs[..arity]) {
                        *arg = Arg::Ptr(reg(r).cast_const());
                    }
                    // SAFETY: registers are 16-byte slots holding one element
                    // of their type; the destination is a register of its own.
                    unsafe { kernel.call(&args[..arity], reg(*d), 1) }
                }
                Step::Copy(a, d) => {
                    // SAFETY: registers are valid 16-byte slots.
                    unsafe { std::ptr::copy(reg(*a), reg(*d), 16) };
                }
            }
        }
    }

    /// The register holding result leaf `i`.
    #[inline]
    pub fn output(&self, i: usize) -> Register {
        self.regs[self.program.outputs[i].0 as usize]
    }

    /// Writes result leaf `i` to `dst`.
    ///
    /// # Safety
    /// `dst` must have room for one element of the result leaf's type.
    #[inline]
    pub unsafe fn write_output(&self, i: usize, dst: *mut u8) {
        let (r, ty) = self.program.outputs[i];
        // SAFETY: forwarded.
        unsafe {
            std::ptr::copy_nonoverlapping(
                self.regs[r as usize].as_ptr().cast::<u8>(),
                dst,
                ty.byte_size(),
            )
        };
    }

    /// The first byte of result leaf `i` as a boolean (comparators).
    #[inline]
    pub fn output_bool(&self, i: usize) -> bool {
        let r = self.program.outputs[i].0 as usize;
        (self.regs[r][0] & 0xff) != 0
    }
}

/// A register holding one element read from `src`.
///
/// # Safety
/// `src` must point at `bytes` readable bytes (at most 16).
#[inline]
pub unsafe fn load_register(src: *const u8, bytes: usize) -> Register {
    let mut r: Register = [0; 2];
    // SAFETY: forwarded; a register has 16 bytes.
    unsafe { std::ptr::copy_nonoverlapping(src, r.as_mut_ptr().cast::<u8>(), bytes) };
    r
}

/// If computation `comp` is `op(p0, p1)` on two scalars of one type (either
/// operand order for commutative ops), the op (the shared analysis
/// `hlo::analysis::combiner`).
pub fn binary_reducer(module: &HloModule, comp: CompId) -> Option<(BinaryOp, ElementType)> {
    let combiner = binary_combiner(module.computations.get(comp.index())?)?;
    combiner.in_order().then_some((combiner.op, combiner.ty))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn evaluates_an_argmax_reducer() {
        let text = r#"
HloModule m
argmax {
  a = f32[] parameter(0)
  ai = s32[] parameter(1)
  b = f32[] parameter(2)
  bi = s32[] parameter(3)
  gt = pred[] compare(a, b), direction=GT
  eq = pred[] compare(a, b), direction=EQ
  lt = pred[] compare(ai, bi), direction=LT
  tie = pred[] and(eq, lt)
  take_a = pred[] or(gt, tie)
  v = f32[] select(take_a, a, b)
  i = s32[] select(take_a, ai, bi)
  ROOT t = (f32[], s32[]) tuple(v, i)
}
ENTRY e {
  ROOT p = f32[] parameter(0)
}
"#;
        let m = HloModule::parse(text).unwrap();
        let prog = ScalarProgram::compile(&m, m.find_computation("argmax").unwrap()).unwrap();
        assert_eq!(prog.param_count(), 4);
        let mut ev = prog.evaluator();
        let cases = [
            (1.0f32, 0i32, 3.0f32, 1i32, 3.0f32, 1i32),
            (5.0, 2, 5.0, 7, 5.0, 2),
        ];
        for (a, ai, b, bi, v, i) in cases {
            unsafe {
                ev.set_param(0, (&a as *const f32).cast());
                ev.set_param(1, (&ai as *const i32).cast());
                ev.set_param(2, (&b as *const f32).cast());
                ev.set_param(3, (&bi as *const i32).cast());
            }
            ev.run();
            let (mut got_v, mut got_i) = (0f32, 0i32);
            unsafe {
                ev.write_output(0, (&mut got_v as *mut f32).cast());
                ev.write_output(1, (&mut got_i as *mut i32).cast());
            }
            assert_eq!((got_v, got_i), (v, i));
        }
        assert_eq!(
            binary_reducer(&m, m.find_computation("argmax").unwrap()),
            None
        );
    }
}
