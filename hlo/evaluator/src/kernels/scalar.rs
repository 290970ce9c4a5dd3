//! A fast, exact evaluator for the tiny scalar computations kernels call per
//! element: reducers, sort comparators, scatter combiners, select functions.
//!
//! Calling [`CallComputation::call`] for every element builds literals for each
//! argument and result, which is far too slow for a 16M-element reduction or a
//! 1M-element sort. Nearly every such computation is a handful of scalar
//! parameters, constants and elementwise ops, so [`ScalarProgram`] compiles it
//! once into a straight-line list of steps over registers of [`Scalar`]s and
//! evaluates each step with the shared semantics functions
//! (`hlo_semantics`), the same ones the interpreter's elementwise ops
//! use — so a compiled computation computes bit for bit what calling it would.
//!
//! What compiles: `parameter`, `constant`, every unary and binary elementwise op,
//! `compare`, `select`, `clamp`, `convert`, `bitcast-convert`,
//! `reduce-precision`, the identities on scalars (`copy`, `reshape`, `bitcast`,
//! `broadcast` to rank 0), `tuple` / `get-tuple-element`, and `call` (inlined),
//! all on rank-0 values. Anything else makes [`ScalarProgram::compile`] return
//! `None`, and kernels fall back to [`CallComputation::call`] through
//! [`Subcomputation`].
//!
//! [`Subcomputation`] also recognises the most common reducers — the root is a
//! binary op of the two parameters, e.g. `add(p0, p1)` — so kernels can run them
//! as typed loops ([`typed_binary`]) with no per-element dispatch at all.

use super::util::Element;
use super::CallComputation;
use hlo_ir::analysis;
use hlo_ir::{
    BinaryOp, CompId, ComparisonDirection, ComparisonType, HloComputation, InstrId, Op, UnaryOp,
};
use hlo_ir::{ElementType, Error, Literal, Result, Scalar, Shape};
use hlo_semantics as semantics;
use std::cell::RefCell;

type Reg = u32;

/// One step of a compiled program: computes register `out` from other registers.
#[derive(Clone, Debug)]
enum Step {
    Unary {
        op: UnaryOp,
        x: Reg,
        ty: ElementType,
    },
    Binary {
        op: BinaryOp,
        a: Reg,
        b: Reg,
    },
    Compare {
        direction: ComparisonDirection,
        compare_type: Option<ComparisonType>,
        a: Reg,
        b: Reg,
    },
    Select {
        pred: Reg,
        on_true: Reg,
        on_false: Reg,
    },
    Clamp {
        min: Reg,
        x: Reg,
        max: Reg,
    },
    Convert {
        x: Reg,
        to: ElementType,
    },
    BitcastConvert {
        x: Reg,
        to: ElementType,
    },
    ReducePrecision {
        x: Reg,
        exponent_bits: u32,
        mantissa_bits: u32,
    },
}

/// A scalar computation compiled to straight-line steps.
///
/// Registers `0..num_params` hold the arguments, then come the constants
/// (loaded once per [`Frame`]), then one register per step in order.
#[derive(Clone, Debug)]
pub struct ScalarProgram {
    name: String,
    param_types: Vec<ElementType>,
    constants: Vec<(Reg, Scalar)>,
    steps: Vec<(Reg, Step)>,
    outputs: Vec<Reg>,
    output_types: Vec<ElementType>,
    num_regs: usize,
}

/// Working registers for running a [`ScalarProgram`] many times without
/// allocating.
#[derive(Clone, Debug)]
pub struct Frame {
    regs: Vec<Scalar>,
}

/// A value during compilation: one register, or a tuple of registers.
#[derive(Clone, Debug)]
enum Value {
    Scalar(Reg, ElementType),
    Tuple(Vec<(Reg, ElementType)>),
}

struct Compiler<'a> {
    calls: &'a dyn CallComputation,
    constants: Vec<(Reg, Scalar)>,
    steps: Vec<(Reg, Step)>,
    next_reg: Reg,
    depth: usize,
}

/// Nested `call`s are inlined up to this depth (a cycle would be a malformed module).
const MAX_INLINE_DEPTH: usize = 16;

fn scalar_type(shape: &Shape) -> Option<ElementType> {
    match shape {
        Shape::Array(a) if a.dims.is_empty() => Some(a.element_type),
        _ => None,
    }
}

impl Compiler<'_> {
    fn reg(&mut self) -> Reg {
        let r = self.next_reg;
        self.next_reg += 1;
        r
    }

    fn push(&mut self, step: Step) -> Reg {
        let r = self.reg();
        self.steps.push((r, step));
        r
    }

    /// Compiles the cone of `root` in `comp`, with parameter `n` bound to
    /// `params[n]` (`None`: that parameter may not be used). Returns the root's value.
    fn compile_cone(
        &mut self,
        comp: &HloComputation,
        root: InstrId,
        params: &[Option<(Reg, ElementType)>],
    ) -> Option<Value> {
        let count = comp.instructions.len();
        if root.index() >= count {
            return None;
        }
        // Only instructions the root depends on are compiled (reducers written by
        // frontends sometimes carry dead code).
        let mut live = vec![false; count];
        live[root.index()] = true;
        for i in (0..count).rev() {
            if live[i] {
                for op in &comp.instructions[i].operands {
                    *live.get_mut(op.index())? = true;
                }
            }
        }
        let mut values: Vec<Option<Value>> = vec![None; count];
        for i in 0..count {
            if !live[i] {
                continue;
            }
            let instr = &comp.instructions[i];
            let operand = |k: usize| -> Option<(Reg, ElementType)> {
                match values.get(instr.operands.get(k)?.index())?.as_ref()? {
                    Value::Scalar(r, t) => Some((*r, *t)),
                    Value::Tuple(_) => None,
                }
            };
            let ty = scalar_type(&instr.shape);
            let value = match &instr.op {
                Op::Parameter { number } => {
                    let (reg, pty) = (*params.get(*number)?)?;
                    if Some(pty) != ty {
                        return None;
                    }
                    Value::Scalar(reg, pty)
                }
                Op::Constant { literal } => {
                    let t = ty?;
                    let v = literal.get(0).ok()?;
                    if v.element_type() != t || literal.element_count() != 1 {
                        return None;
                    }
                    let r = self.reg();
                    self.constants.push((r, v));
                    Value::Scalar(r, t)
                }
                Op::Unary(op) => {
                    let (x, _) = operand(0)?;
                    let t = ty?;
                    Value::Scalar(self.push(Step::Unary { op: *op, x, ty: t }), t)
                }
                Op::Binary(op) => {
                    let (a, _) = operand(0)?;
                    let (b, _) = operand(1)?;
                    Value::Scalar(self.push(Step::Binary { op: *op, a, b }), ty?)
                }
                Op::Compare {
                    direction,
                    compare_type,
                } => {
                    let (a, _) = operand(0)?;
                    let (b, _) = operand(1)?;
                    let step = Step::Compare {
                        direction: *direction,
                        compare_type: *compare_type,
                        a,
                        b,
                    };
                    Value::Scalar(self.push(step), ty?)
                }
                Op::Select => {
                    let (pred, pt) = operand(0)?;
                    let (on_true, _) = operand(1)?;
                    let (on_false, _) = operand(2)?;
                    if pt != ElementType::Pred {
                        return None;
                    }
                    let step = Step::Select {
                        pred,
                        on_true,
                        on_false,
                    };
                    Value::Scalar(self.push(step), ty?)
                }
                Op::Clamp => {
                    let (min, _) = operand(0)?;
                    let (x, _) = operand(1)?;
                    let (max, _) = operand(2)?;
                    Value::Scalar(self.push(Step::Clamp { min, x, max }), ty?)
                }
                Op::Convert => {
                    let (x, _) = operand(0)?;
                    let to = ty?;
                    Value::Scalar(self.push(Step::Convert { x, to }), to)
                }
                Op::BitcastConvert => {
                    let (x, from) = operand(0)?;
                    let to = ty?;
                    if from.byte_size() != to.byte_size() {
                        return None;
                    }
                    Value::Scalar(self.push(Step::BitcastConvert { x, to }), to)
                }
                Op::ReducePrecision {
                    exponent_bits,
                    mantissa_bits,
                } => {
                    let (x, _) = operand(0)?;
                    let step = Step::ReducePrecision {
                        x,
                        exponent_bits: *exponent_bits,
                        mantissa_bits: *mantissa_bits,
                    };
                    Value::Scalar(self.push(step), ty?)
                }
                Op::Copy | Op::Reshape | Op::Bitcast | Op::OptimizationBarrier => {
                    let (x, t) = operand(0)?;
                    if ty != Some(t) {
                        return None;
                    }
                    Value::Scalar(x, t)
                }
                Op::Broadcast { dimensions } if dimensions.is_empty() => {
                    let (x, t) = operand(0)?;
                    if ty != Some(t) {
                        return None;
                    }
                    Value::Scalar(x, t)
                }
                Op::Tuple => {
                    let elements = (0..instr.operands.len())
                        .map(operand)
                        .collect::<Option<Vec<_>>>()?;
                    Value::Tuple(elements)
                }
                Op::GetTupleElement { index } => {
                    match values.get(instr.operands.first()?.index())?.as_ref()? {
                        Value::Tuple(elements) => {
                            let (r, t) = *elements.get(*index)?;
                            Value::Scalar(r, t)
                        }
                        Value::Scalar(..) => return None,
                    }
                }
                Op::Call { to_apply } => {
                    if self.depth >= MAX_INLINE_DEPTH {
                        return None;
                    }
                    let args = (0..instr.operands.len())
                        .map(|k| operand(k).map(Some))
                        .collect::<Option<Vec<_>>>()?;
                    let callee = self.calls.computation(*to_apply);
                    self.depth += 1;
                    let result = self.compile_cone(callee, callee.root, &args);
                    self.depth -= 1;
                    result?
                }
                _ => return None,
            };
            values[i] = Some(value);
        }
        values[root.index()].take()
    }
}

impl ScalarProgram {
    /// Compiles computation `id`, whose parameters and result must all be scalars
    /// (the result may be a tuple of scalars). `None` if it uses anything the
    /// program cannot express.
    pub fn compile(calls: &dyn CallComputation, id: CompId) -> Option<ScalarProgram> {
        let comp = calls.computation(id);
        let params = comp.parameters();
        let mut param_types = Vec::with_capacity(params.len());
        for (n, &p) in params.iter().enumerate() {
            match comp.instr(p).op {
                Op::Parameter { number } if number == n => {}
                _ => return None,
            }
            param_types.push(scalar_type(&comp.instr(p).shape)?);
        }
        let bound: Vec<Option<(Reg, ElementType)>> = param_types
            .iter()
            .enumerate()
            .map(|(n, &t)| Some((n as Reg, t)))
            .collect();
        Self::compile_with(calls, comp, comp.root, param_types, &bound)
    }

    /// Compiles the expression rooted at `root` of computation `id` as a program
    /// of one parameter bound to the computation's parameter `param`; every other
    /// parameter must be unused. Used to pull a sort key out of a comparator.
    pub fn compile_expression(
        calls: &dyn CallComputation,
        id: CompId,
        root: InstrId,
        param: usize,
    ) -> Option<ScalarProgram> {
        let comp = calls.computation(id);
        let params = comp.parameters();
        let mut bound = vec![None; params.len()];
        let p = *params.get(param)?;
        let ty = scalar_type(&comp.instr(p).shape)?;
        *bound.get_mut(param)? = Some((0, ty));
        Self::compile_with(calls, comp, root, vec![ty], &bound)
    }

    fn compile_with(
        calls: &dyn CallComputation,
        comp: &HloComputation,
        root: InstrId,
        param_types: Vec<ElementType>,
        bound: &[Option<(Reg, ElementType)>],
    ) -> Option<ScalarProgram> {
        let mut compiler = Compiler {
            calls,
            constants: Vec::new(),
            steps: Vec::new(),
            next_reg: param_types.len() as Reg,
            depth: 0,
        };
        let outputs = match compiler.compile_cone(comp, root, bound)? {
            Value::Scalar(r, t) => vec![(r, t)],
            Value::Tuple(elements) => elements,
        };
        Some(ScalarProgram {
            name: comp.name.clone(),
            param_types,
            constants: compiler.constants,
            steps: compiler.steps,
            outputs: outputs.iter().map(|&(r, _)| r).collect(),
            output_types: outputs.iter().map(|&(_, t)| t).collect(),
            num_regs: compiler.next_reg as usize,
        })
    }

    /// Element types of the parameters, in parameter order.
    pub fn param_types(&self) -> &[ElementType] {
        &self.param_types
    }

    /// Element types of the results (one for a scalar root, one per tuple element).
    pub fn output_types(&self) -> &[ElementType] {
        &self.output_types
    }

    /// Registers ready for [`run`](Self::run), with the constants loaded.
    pub fn frame(&self) -> Frame {
        let mut regs = vec![Scalar::Pred(false); self.num_regs];
        for &(r, v) in &self.constants {
            regs[r as usize] = v;
        }
        Frame { regs }
    }

    /// Runs the program on `args` (one per parameter, of the parameter's type),
    /// writing the results into `out` (one per output).
    pub fn run(&self, frame: &mut Frame, args: &[Scalar], out: &mut [Scalar]) -> Result<()> {
        self.execute(frame, args)?;
        for (o, &r) in out.iter_mut().zip(&self.outputs) {
            *o = frame.regs[r as usize];
        }
        Ok(())
    }

    /// Runs a program with exactly one output and returns it.
    pub fn run1(&self, frame: &mut Frame, args: &[Scalar]) -> Result<Scalar> {
        self.execute(frame, args)?;
        Ok(frame.regs[self.outputs[0] as usize])
    }

    fn execute(&self, frame: &mut Frame, args: &[Scalar]) -> Result<()> {
        if args.len() != self.param_types.len() || frame.regs.len() != self.num_regs {
            return Err(Error::internal(format!(
                "computation %{} takes {} scalar arguments, got {}",
                self.name,
                self.param_types.len(),
                args.len()
            )));
        }
        let regs = &mut frame.regs;
        regs[..args.len()].copy_from_slice(args);
        for &(out, ref step) in &self.steps {
            let r = |x: Reg| regs[x as usize];
            let value = match *step {
                Step::Unary { op, x, ty } => semantics::unary_scalar(op, r(x), ty),
                Step::Binary { op, a, b } => semantics::binary_scalar(op, r(a), r(b)),
                Step::Compare {
                    direction,
                    compare_type,
                    a,
                    b,
                } => {
                    semantics::compare_scalar(direction, compare_type, r(a), r(b)).map(Scalar::Pred)
                }
                Step::Select {
                    pred,
                    on_true,
                    on_false,
                } => match r(pred) {
                    Scalar::Pred(true) => Ok(r(on_true)),
                    Scalar::Pred(false) => Ok(r(on_false)),
                    other => Err(Error::invalid_argument(format!(
                        "select predicate must be pred, got {}",
                        other.element_type()
                    ))),
                },
                Step::Clamp { min, x, max } => semantics::clamp(
                    &Literal::from_scalar(r(min)),
                    &Literal::from_scalar(r(x)),
                    &Literal::from_scalar(r(max)),
                )
                .and_then(|l| l.get(0)),
                Step::Convert { x, to } => Ok(semantics::convert_scalar(r(x), to)),
                Step::BitcastConvert { x, to } => {
                    let v = r(x);
                    let size = to.byte_size();
                    let mut bytes = [0u8; 16];
                    v.write_bytes(&mut bytes[..size]);
                    Ok(Scalar::from_bytes(to, &bytes[..size]))
                }
                Step::ReducePrecision {
                    x,
                    exponent_bits,
                    mantissa_bits,
                } => semantics::reduce_precision(
                    &Literal::from_scalar(r(x)),
                    exponent_bits,
                    mantissa_bits,
                )
                .and_then(|l| l.get(0)),
            };
            regs[out as usize] =
                value.map_err(|e| e.context(format!("in computation %{}", self.name)))?;
        }
        Ok(())
    }
}

/// How a kernel evaluates one of its subcomputations per element.
#[derive(Clone, Debug)]
enum Kind {
    /// The root is `op(p0, p1)` (`swapped`: `op(p1, p0)`) of two scalar parameters
    /// of one type: the kernel may run it as a typed loop.
    Binary {
        op: BinaryOp,
        swapped: bool,
        ty: ElementType,
    },
    /// The root is parameter `n` itself (scatter's "replace" combiner).
    Param(usize),
    Program(ScalarProgram),
    /// Not compilable: evaluated through [`CallComputation::call`].
    Call,
}

/// A subcomputation prepared for per-element evaluation: the fastest exact way
/// to run it, and the registers it needs.
#[derive(Clone, Debug)]
pub(crate) struct Subcomputation {
    id: CompId,
    kind: Kind,
    frame: Option<Frame>,
    num_params: usize,
    num_outputs: usize,
    param_types: Vec<Option<ElementType>>,
}

impl Subcomputation {
    pub(crate) fn new(calls: &dyn CallComputation, id: CompId) -> Subcomputation {
        let comp = calls.computation(id);
        let params = comp.parameters();
        let param_types: Vec<Option<ElementType>> = params
            .iter()
            .map(|&p| scalar_type(&comp.instr(p).shape))
            .collect();
        let root = comp.root_instr();
        let num_outputs = match &root.shape {
            Shape::Tuple(t) => t.len(),
            _ => 1,
        };
        let kind = if let Some(b) = analysis::combiner::binary_combiner(comp) {
            Some(Kind::Binary {
                op: b.op,
                swapped: b.swapped,
                ty: b.ty,
            })
        } else {
            analysis::combiner::returned_parameter(comp).map(Kind::Param)
        };
        let kind = kind.unwrap_or_else(|| match ScalarProgram::compile(calls, id) {
            Some(p) => Kind::Program(p),
            None => Kind::Call,
        });
        let frame = match &kind {
            Kind::Program(p) => Some(p.frame()),
            _ => None,
        };
        Subcomputation {
            id,
            kind,
            frame,
            num_params: params.len(),
            num_outputs,
            param_types,
        }
    }

    /// `(op, swapped, type)` when the computation is a plain binary op of its
    /// two parameters.
    pub(crate) fn as_binary(&self) -> Option<(BinaryOp, bool, ElementType)> {
        match self.kind {
            Kind::Binary { op, swapped, ty } => Some((op, swapped, ty)),
            _ => None,
        }
    }

    /// The parameter number when the computation returns one of its parameters.
    pub(crate) fn as_param(&self) -> Option<usize> {
        match self.kind {
            Kind::Param(n) => Some(n),
            _ => None,
        }
    }

    pub(crate) fn num_outputs(&self) -> usize {
        self.num_outputs
    }

    /// Checks that the computation takes `types.len()` scalar parameters of
    /// these types, so per-element evaluation cannot fail on a type mismatch.
    pub(crate) fn check_params(&self, what: &str, types: &[ElementType]) -> Result<()> {
        let ok = self.num_params == types.len()
            && self
                .param_types
                .iter()
                .zip(types)
                .all(|(p, t)| *p == Some(*t));
        if ok {
            Ok(())
        } else {
            let got: Vec<String> = self
                .param_types
                .iter()
                .map(|t| t.map_or("non-scalar".to_string(), |t| t.to_string()))
                .collect();
            let want: Vec<String> = types.iter().map(|t| t.to_string()).collect();
            Err(Error::invalid_argument(format!(
                "{what} must take scalar parameters ({}), but takes ({})",
                want.join(", "),
                got.join(", ")
            )))
        }
    }

    /// Evaluates the computation on scalar `args`, writing its results to `out`.
    pub(crate) fn apply(
        &mut self,
        calls: &mut dyn CallComputation,
        args: &[Scalar],
        out: &mut [Scalar],
    ) -> Result<()> {
        match &self.kind {
            Kind::Binary { op, swapped, .. } => {
                let (a, b) = match args {
                    [a, b] if !*swapped => (*a, *b),
                    [a, b] => (*b, *a),
                    _ => return Err(Error::internal("binary subcomputation needs 2 arguments")),
                };
                out[0] = semantics::binary_scalar(*op, a, b)?;
                Ok(())
            }
            Kind::Param(n) => {
                out[0] = *args
                    .get(*n)
                    .ok_or_else(|| Error::internal("parameter out of range"))?;
                Ok(())
            }
            Kind::Program(p) => {
                let frame = self.frame.get_or_insert_with(|| p.frame());
                p.run(frame, args, out)
            }
            Kind::Call => {
                let literals: Vec<Literal> =
                    args.iter().map(|&a| Literal::from_scalar(a)).collect();
                let result = calls.call(self.id, &literals)?;
                if result.is_tuple() {
                    let elements = result.tuple_elements();
                    if elements.len() != out.len() {
                        return Err(Error::invalid_argument(format!(
                            "subcomputation returned {} values, {} expected",
                            elements.len(),
                            out.len()
                        )));
                    }
                    for (o, e) in out.iter_mut().zip(elements) {
                        *o = e.get(0)?;
                    }
                } else {
                    out[0] = result.get(0)?;
                }
                Ok(())
            }
        }
    }

    /// Evaluates a computation with one scalar result.
    pub(crate) fn apply1(
        &mut self,
        calls: &mut dyn CallComputation,
        args: &[Scalar],
    ) -> Result<Scalar> {
        let mut out = [Scalar::Pred(false)];
        self.apply(calls, args, &mut out)?;
        Ok(out[0])
    }
}

/// Receives a typed combine function from [`typed_binary`].
pub(crate) trait TypedBinary {
    type Output;
    fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, combine: F) -> Self::Output;
}

/// Holds the first error a typed combine hit (only the semantics-backed
/// combines can fail, and only if the semantics reject an op they accepted on
/// the probe — checked after the loop).
#[derive(Default)]
pub(crate) struct CombineError(RefCell<Option<Error>>);

impl CombineError {
    fn record(&self, e: Error) {
        let mut slot = self.0.borrow_mut();
        if slot.is_none() {
            *slot = Some(e);
        }
    }
    /// The first recorded error, if any.
    pub(crate) fn take(&self) -> Result<()> {
        match self.0.borrow_mut().take() {
            Some(e) => Err(e),
            None => Ok(()),
        }
    }
}

/// Calls `visitor.run` with a typed function computing `op(a, b)` (or `op(b, a)`
/// when `swapped`) on elements of type `ty`, bit-identical to
/// `semantics::binary_scalar`.
///
/// Integer add/mul (wrapping), and/or/xor and max/min are native Rust ops,
/// which are exactly XLA's; float add/mul/max/min and complex add/mul call the
/// shared semantics' typed functions (`semantics::float::maximum::<f32>`, ...),
/// so they are the same code the elementwise ops run, inlined. Any other op
/// calls `semantics::binary_scalar` per element; a probe call on zeros first
/// makes sure the semantics implement the op for this type, so `None` means
/// "no typed loop, use the generic path" (which reports the error).
pub(crate) fn typed_binary<V: TypedBinary>(
    op: BinaryOp,
    ty: ElementType,
    swapped: bool,
    errors: &CombineError,
    visitor: V,
) -> Option<V::Output> {
    use half::{bf16, f16};
    use hlo_semantics::{complex, float};
    use num_complex::{Complex32, Complex64};
    use BinaryOp as B;
    use ElementType as E;

    macro_rules! go {
        ($t:ty, $f:expr) => {{
            let f = $f;
            if swapped {
                Some(visitor.run::<$t, _>(move |a: $t, b: $t| f(b, a)))
            } else {
                Some(visitor.run::<$t, _>(f))
            }
        }};
    }
    macro_rules! ints {
        ($t:ty) => {
            match op {
                B::Add => go!($t, |a: $t, b: $t| a.wrapping_add(b)),
                B::Multiply => go!($t, |a: $t, b: $t| a.wrapping_mul(b)),
                B::Maximum => go!($t, |a: $t, b: $t| a.max(b)),
                B::Minimum => go!($t, |a: $t, b: $t| a.min(b)),
                B::And => go!($t, |a: $t, b: $t| a & b),
                B::Or => go!($t, |a: $t, b: $t| a | b),
                B::Xor => go!($t, |a: $t, b: $t| a ^ b),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    macro_rules! floats {
        ($t:ty) => {
            match op {
                B::Add => go!($t, float::add::<$t>),
                B::Multiply => go!($t, float::multiply::<$t>),
                B::Maximum => go!($t, float::maximum::<$t>),
                B::Minimum => go!($t, float::minimum::<$t>),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    macro_rules! complexes {
        ($t:ty) => {
            match op {
                B::Add => go!($t, complex::add::<$t>),
                B::Multiply => go!($t, complex::multiply::<$t>),
                _ => semantic::<$t, V>(op, ty, swapped, errors, visitor),
            }
        };
    }
    match ty {
        E::Pred => match op {
            B::And => go!(u8, |a: u8, b: u8| a & b),
            B::Or => go!(u8, |a: u8, b: u8| a | b),
            B::Xor => go!(u8, |a: u8, b: u8| a ^ b),
            _ => semantic::<u8, V>(op, ty, swapped, errors, visitor),
        },
        E::S8 => ints!(i8),
        E::S16 => ints!(i16),
        E::S32 => ints!(i32),
        E::S64 => ints!(i64),
        E::U8 => ints!(u8),
        E::U16 => ints!(u16),
        E::U32 => ints!(u32),
        E::U64 => ints!(u64),
        E::F16 => floats!(f16),
        E::BF16 => floats!(bf16),
        E::F32 => floats!(f32),
        E::F64 => floats!(f64),
        E::C64 => complexes!(Complex32),
        E::C128 => complexes!(Complex64),
    }
}

/// A typed combine that calls `semantics::binary_scalar` per element.
fn semantic<T: Element, V: TypedBinary>(
    op: BinaryOp,
    ty: ElementType,
    swapped: bool,
    errors: &CombineError,
    visitor: V,
) -> Option<V::Output> {
    let zero = Scalar::zero(ty);
    match semantics::binary_scalar(op, zero, zero) {
        Ok(v) if v.element_type() == ty => {}
        _ => return None,
    }
    let combine = move |a: T, b: T| -> T {
        let (a, b) = if swapped { (b, a) } else { (a, b) };
        let (sa, sb) = (
            super::util::to_scalar_of(a, ty),
            super::util::to_scalar_of(b, ty),
        );
        match semantics::binary_scalar(op, sa, sb) {
            Ok(v) => match T::from_scalar(v) {
                Some(v) => v,
                None => {
                    errors.record(Error::internal(format!(
                        "{op} on {ty} returned a {} value",
                        v.element_type()
                    )));
                    a
                }
            },
            Err(e) => {
                errors.record(e);
                a
            }
        }
    };
    Some(visitor.run::<T, _>(combine))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernels::util::to_scalar_of;
    use half::{bf16, f16};
    use num_complex::{Complex32, Complex64};

    /// Applies the typed combine to every pair.
    struct Pairs<'a>(&'a [(Scalar, Scalar)], ElementType);

    impl TypedBinary for Pairs<'_> {
        type Output = Vec<Scalar>;
        fn run<T: Element, F: Fn(T, T) -> T + Copy>(self, f: F) -> Vec<Scalar> {
            self.0
                .iter()
                .map(|&(a, b)| {
                    let (a, b) = (T::from_scalar(a).unwrap(), T::from_scalar(b).unwrap());
                    to_scalar_of(f(a, b), self.1)
                })
                .collect()
        }
    }

    fn specials(ty: ElementType) -> Vec<Scalar> {
        let floats = [
            0.0,
            -0.0,
            1.0,
            -1.5,
            3.25,
            f64::INFINITY,
            f64::NEG_INFINITY,
            f64::NAN,
            1e30,
            -1e-30,
        ];
        match ty {
            ElementType::Pred => vec![Scalar::Pred(false), Scalar::Pred(true)],
            ElementType::F16 => floats
                .iter()
                .map(|&v| Scalar::F16(f16::from_f64(v)))
                .collect(),
            ElementType::BF16 => floats
                .iter()
                .map(|&v| Scalar::BF16(bf16::from_f64(v)))
                .collect(),
            ElementType::F32 => floats.iter().map(|&v| Scalar::F32(v as f32)).collect(),
            ElementType::F64 => floats.iter().map(|&v| Scalar::F64(v)).collect(),
            ElementType::C64 => floats
                .iter()
                .zip(floats.iter().rev())
                .map(|(&a, &b)| Scalar::C64(Complex32::new(a as f32, b as f32)))
                .collect(),
            ElementType::C128 => floats
                .iter()
                .zip(floats.iter().rev())
                .map(|(&a, &b)| Scalar::C128(Complex64::new(a, b)))
                .collect(),
            _ => [0i64, 1, -1, 7, i64::MIN, i64::MAX, 200, -129]
                .iter()
                .map(|&v| semantics::convert_scalar(Scalar::S64(v), ty))
                .collect(),
        }
    }

    fn same(a: Scalar, b: Scalar) -> bool {
        let mut x = [0u8; 16];
        let mut y = [0u8; 16];
        a.write_bytes(&mut x[..a.element_type().byte_size()]);
        b.write_bytes(&mut y[..b.element_type().byte_size()]);
        a.element_type() == b.element_type() && x == y
    }

    #[test]
    fn typed_combines_are_bit_identical_to_binary_scalar() {
        use BinaryOp as B;
        let ops = [
            B::Add,
            B::Multiply,
            B::Maximum,
            B::Minimum,
            B::And,
            B::Or,
            B::Xor,
            B::Subtract,
            B::Divide,
        ];
        let mut checked = 0;
        for &ty in &ElementType::ALL {
            let values = specials(ty);
            let pairs: Vec<(Scalar, Scalar)> = values
                .iter()
                .flat_map(|&a| values.iter().map(move |&b| (a, b)))
                .collect();
            for &op in &ops {
                for swapped in [false, true] {
                    let errors = CombineError::default();
                    let Some(got) = typed_binary(op, ty, swapped, &errors, Pairs(&pairs, ty))
                    else {
                        // No typed loop means the semantics do not define the op here.
                        assert!(
                            semantics::binary_scalar(op, values[0], values[0]).is_err(),
                            "{op} {ty}"
                        );
                        continue;
                    };
                    errors.take().unwrap();
                    for (&(a, b), g) in pairs.iter().zip(got) {
                        let (x, y) = if swapped { (b, a) } else { (a, b) };
                        let want = semantics::binary_scalar(op, x, y).unwrap();
                        assert!(
                            same(g, want),
                            "{op} {ty} swapped={swapped}: {a} {b}: {g} vs {want}"
                        );
                        checked += 1;
                    }
                }
            }
        }
        assert!(checked > 5000);
    }
}
