//! A small evaluator for scalar subcomputations: reducers, comparators, scatter
//! combiners, `map` bodies, select-and-scatter's select and scatter.
//!
//! A [`ScalarProgram`] is compiled once from a computation whose parameters and
//! result are scalars (or tuples of scalars): every value gets a 16-byte
//! register, constants are written into the register template at compile time,
//! and each instruction becomes a step that calls the op table's kernel for it
//! ([`crate::elementwise_ops`], the same one elementwise thunks and fusions
//! run) with a length of one.
//! Evaluating is then a short loop of indirect calls with no allocation, which
//! is the general path of kernels whose fast paths recognise common
//! subcomputations ([`binary_reducer`]) and skip it.

use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::fma;
use platform_api::hlo::analysis::combiner::binary_combiner;
use platform_api::hlo::{BinaryOp, CompId, HloComputation, InstrId, Op};
use platform_api::{ElementType, Error, HloModule, Result, Shape};

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
    /// flattened).
    params: Vec<(u16, ElementType)>,
    /// Register of each result leaf.
    outputs: Vec<(u16, ElementType)>,
    /// Element type held by each register.
    reg_types: Vec<ElementType>,
    /// Registers of each instruction's leaves, by instruction index.
    instr_regs: Vec<Vec<(u16, ElementType)>>,
}

fn scalar_type(shape: &Shape, what: &str) -> Result<ElementType> {
    match shape {
        Shape::Array(a) if a.element_count() == 1 => Ok(a.element_type),
        _ => Err(Error::unimplemented(format!(
            "{what} has shape {shape}; subcomputations must work on scalars"
        ))),
    }
}

impl ScalarProgram {
    /// Compiles computation `comp` of `module`.
    pub fn compile(module: &HloModule, comp: CompId) -> Result<ScalarProgram> {
        let comp = module
            .computations
            .get(comp.index())
            .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", comp.0)))?;
        Self::compile_computation(comp)
    }

    fn compile_computation(comp: &HloComputation) -> Result<ScalarProgram> {
        let mut template: Vec<Register> = Vec::new();
        let mut regs: Vec<Vec<(u16, ElementType)>> = Vec::with_capacity(comp.instructions.len());
        let mut steps = Vec::new();
        let new_reg = |template: &mut Vec<Register>| -> Result<u16> {
            template.push([0; 2]);
            u16::try_from(template.len() - 1).map_err(|_| {
                Error::unimplemented("subcomputation too large for the scalar evaluator")
            })
        };
        let mut params: Vec<(usize, Vec<(u16, ElementType)>)> = Vec::new();
        for instr in &comp.instructions {
            let what = format!("%{} in {}", instr.name, comp.name);
            let operand = |k: usize| -> Result<&Vec<(u16, ElementType)>> {
                let id: InstrId = instr.operand(k)?;
                regs.get(id.index())
                    .ok_or_else(|| Error::invalid_argument(format!("{what}: operand order")))
            };
            let single = |k: usize| -> Result<(u16, ElementType)> {
                match operand(k)?.as_slice() {
                    [one] => Ok(*one),
                    _ => Err(Error::unimplemented(format!(
                        "{what}: operand {k} is not a scalar"
                    ))),
                }
            };
            let mine: Vec<(u16, ElementType)> = match &instr.op {
                Op::Parameter { number } => {
                    let mut leaves = Vec::new();
                    for (_, leaf) in instr.shape.leaves() {
                        let ty = scalar_type(&Shape::Array(leaf.clone()), &what)?;
                        leaves.push((new_reg(&mut template)?, ty));
                    }
                    params.push((*number, leaves.clone()));
                    leaves
                }
                Op::Constant { literal } => {
                    let ty = scalar_type(literal.shape(), &what)?;
                    let r = new_reg(&mut template)?;
                    let bytes = literal.bytes()?;
                    let slot: &mut [u8] = bytemuck::cast_slice_mut(&mut template[r as usize]);
                    slot[..bytes.len()].copy_from_slice(bytes);
                    vec![(r, ty)]
                }
                Op::Tuple => {
                    let mut all = Vec::new();
                    for k in 0..instr.operands.len() {
                        all.extend(operand(k)?.iter().copied());
                    }
                    all
                }
                Op::GetTupleElement { index } => {
                    let src = operand(0)?;
                    let op_shape = &comp.instr(instr.operand(0)?).shape;
                    let start: usize = op_shape
                        .tuple_shapes()
                        .iter()
                        .take(*index)
                        .map(|s| s.leaves().len())
                        .sum();
                    let count = op_shape
                        .tuple_shapes()
                        .get(*index)
                        .map(|s| s.leaves().len())
                        .unwrap_or(0);
                    src.get(start..start + count)
                        .ok_or_else(|| Error::invalid_argument(format!("{what}: bad tuple index")))?
                        .to_vec()
                }
                Op::Reshape | Op::Copy | Op::Broadcast { .. } | Op::OptimizationBarrier => {
                    scalar_type(&instr.shape, &what)?;
                    vec![single(0)?]
                }
                Op::BitcastConvert => {
                    let (a, in_ty) = single(0)?;
                    let out_ty = scalar_type(&instr.shape, &what)?;
                    if in_ty.byte_size() != out_ty.byte_size() {
                        return Err(Error::unimplemented(format!(
                            "{what}: bitcast-convert between widths in a scalar subcomputation"
                        )));
                    }
                    let d = new_reg(&mut template)?;
                    steps.push(Step::Copy(a, d));
                    vec![(d, out_ty)]
                }
                Op::Unary(_)
                | Op::Convert
                | Op::ReducePrecision { .. }
                | Op::Binary(_)
                | Op::Compare { .. }
                | Op::Select
                | Op::Clamp
                | Op::CustomCall(_) => {
                    let out_ty = scalar_type(&instr.shape, &what)?;
                    let mut args = [0u16; 3];
                    let mut types = [out_ty; 3];
                    if instr.operands.len() > args.len() {
                        return Err(Error::unimplemented(format!("{what}: arity")));
                    }
                    for k in 0..instr.operands.len() {
                        (args[k], types[k]) = single(k)?;
                    }
                    let kernel = match &instr.op {
                        Op::Unary(op) => ops::unary(*op, types[0], out_ty),
                        Op::Convert => ops::convert(types[0], out_ty),
                        Op::ReducePrecision {
                            exponent_bits,
                            mantissa_bits,
                        } => ops::reduce_precision(types[0], *exponent_bits, *mantissa_bits),
                        Op::Binary(op) => ops::binary(*op, types[0], out_ty),
                        Op::Compare {
                            direction,
                            compare_type,
                        } => ops::compare(*direction, *compare_type, types[0]),
                        Op::Select => ops::select(out_ty),
                        Op::Clamp => ops::clamp(out_ty),
                        _ => match fma::fused_multiply_add(instr)? {
                            Some(how) => ops::fused_multiply_add(how, out_ty),
                            None => Err(Error::unimplemented(format!(
                                "{what}: custom-call is not supported in scalar subcomputations"
                            ))),
                        },
                    }
                    .map_err(|e| e.context(&what))?;
                    if kernel.arity() != instr.operands.len() {
                        return Err(Error::invalid_argument(format!(
                            "{what}: {} operands, {} expected",
                            instr.operands.len(),
                            kernel.arity()
                        )));
                    }
                    let d = new_reg(&mut template)?;
                    steps.push(Step::Op(kernel, args, d));
                    vec![(d, out_ty)]
                }
                other => {
                    return Err(Error::unimplemented(format!(
                        "{what}: {} is not supported in scalar subcomputations",
                        other.opcode()
                    )))
                }
            };
            regs.push(mine);
        }
        params.sort_by_key(|(n, _)| *n);
        let params = params.into_iter().flat_map(|(_, l)| l).collect();
        let outputs = regs
            .get(comp.root.index())
            .cloned()
            .ok_or_else(|| Error::invalid_argument(format!("{}: no root", comp.name)))?;
        let mut reg_types = vec![ElementType::U8; template.len()];
        for leaves in &regs {
            for &(r, t) in leaves {
                reg_types[r as usize] = t;
            }
        }
        Ok(ScalarProgram {
            steps,
            template,
            params,
            outputs,
            reg_types,
            instr_regs: regs,
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

    /// The registers holding instruction `index`'s leaves.
    pub fn instruction_registers(&self, index: usize) -> &[(u16, ElementType)] {
        self.instr_regs.get(index).map(Vec::as_slice).unwrap_or(&[])
    }

    /// Evaluates the program on `n` elements at once: parameter leaf `i` reads
    /// `params[i]` (`n` contiguous elements; null for an unused parameter,
    /// which then reads as zeros), and the values of `register` (of
    /// [`Self::instruction_registers`] or an output) are written to `out`.
    /// Works in blocks so the per-register buffers stay in cache.
    ///
    /// # Safety
    /// Every non-null `params[i]` must hold `n` elements of that parameter's
    /// type, and `out` room for `n` elements of the register's type.
    pub unsafe fn eval_batch(&self, params: &[*const u8], n: usize, register: u16, out: *mut u8) {
        const BLOCK: usize = 2048;
        let mut bufs: Vec<Vec<Register>> = vec![vec![[0; 2]; BLOCK]; self.template.len()];
        // Constants: broadcast the template value into each element slot.
        let is_param = |r: usize| self.params.iter().any(|&(p, _)| p as usize == r);
        for (r, value) in self.template.iter().enumerate() {
            if is_param(r) {
                continue;
            }
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
