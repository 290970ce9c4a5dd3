//! Straight-line register programs from small scalar computations.
//!
//! Reduce, sort, scatter, select-and-scatter, map and all-reduce apply a
//! subcomputation once per element. Nearly every such computation is a handful
//! of scalar parameters, constants and elementwise ops, so backends compile it
//! once into a list of steps over registers and run that list per element (or
//! per block of elements). This module is the front end they share: it decides
//! what compiles and says why something does not (naming the instruction),
//! resolves tuples, identities and `call`s away (calls are inlined), drops code
//! the result does not depend on, and gives every register its element type.
//! A backend only decides how to execute a [`ScalarStep`]: the reference
//! evaluator through the shared semantics on `Scalar`s, the Host through its
//! op table on raw 16-byte registers.
//!
//! Register numbering: the parameter leaves come first (`0..params.len()`, in
//! parameter order, tuple parameters flattened), then one register per
//! constant and per step, in program order. Every register is written once.
//!
//! Backend-specific instructions enter through [`ScalarExtension`]: a custom
//! call the backend understands (the Host's fused multiply-add) becomes a
//! [`ScalarOp::Extension`] step with the backend's own payload; every other
//! custom call is `Unimplemented`.
//!
//! Compiling is total: hostile input gives an error, never a panic, and the
//! work is bounded ([`MAX_INLINE_DEPTH`], [`MAX_REGISTERS`]).

use crate::{
    BinaryOp, CompId, ComparisonDirection, ComparisonType, HloComputation, HloInstruction,
    HloModule, InstrId, Op, UnaryOp,
};
use crate::{ElementType, Error, Result, Scalar, Shape};

/// A register number.
pub type Reg = u32;

/// Nested `call`s are inlined up to this depth.
pub const MAX_INLINE_DEPTH: usize = 16;

/// Programs may use at most this many registers (inlining a call graph with
/// fan-out could otherwise grow without bound).
pub const MAX_REGISTERS: usize = 1 << 16;

/// One scalar value of a program: its register and element type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Leaf {
    pub reg: Reg,
    pub ty: ElementType,
}

/// What a step computes. Operand and result types are the registers' types
/// ([`ScalarProgram::reg_types`]).
#[derive(Clone, Debug, PartialEq)]
pub enum ScalarOp<X> {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare {
        direction: ComparisonDirection,
        compare_type: Option<ComparisonType>,
    },
    /// `(pred, on_true, on_false)`; the predicate register is `pred`.
    Select,
    /// `(min, x, max)`.
    Clamp,
    Convert,
    /// Reinterprets the bits; operand and result have the same width.
    BitcastConvert,
    ReducePrecision {
        exponent_bits: u32,
        mantissa_bits: u32,
    },
    /// A backend's own operation (see [`ScalarExtension`]).
    Extension(X),
}

/// `out = op(args)`.
#[derive(Clone, Debug, PartialEq)]
pub struct ScalarStep<X> {
    pub op: ScalarOp<X>,
    pub out: Reg,
    args: [Reg; 3],
    arity: u8,
}

impl<X> ScalarStep<X> {
    /// The operand registers, in operand order.
    pub fn args(&self) -> &[Reg] {
        &self.args[..self.arity as usize]
    }
}

/// A scalar computation compiled to straight-line steps.
#[derive(Clone, Debug)]
pub struct ScalarProgram<X = NoExtension> {
    /// The computation's name, for messages.
    pub name: String,
    /// Parameter leaves in parameter order; leaf `i` is register `i`.
    pub params: Vec<Leaf>,
    /// Registers that hold a constant.
    pub constants: Vec<(Reg, Scalar)>,
    /// The steps, in execution order.
    pub steps: Vec<ScalarStep<X>>,
    /// The result leaves (one for a scalar root, one per element of a tuple
    /// root). A result may be a parameter or constant register.
    pub outputs: Vec<Leaf>,
    /// Element type of every register.
    pub reg_types: Vec<ElementType>,
}

/// Where the computations named by `call` come from.
pub trait ComputationSource {
    fn computation(&self, id: CompId) -> Option<&HloComputation>;
}

impl ComputationSource for HloModule {
    fn computation(&self, id: CompId) -> Option<&HloComputation> {
        self.computations.get(id.index())
    }
}

impl ComputationSource for [HloComputation] {
    fn computation(&self, id: CompId) -> Option<&HloComputation> {
        self.get(id.index())
    }
}

/// A backend's hook for the custom calls it can run on scalars.
pub trait ScalarExtension {
    /// The backend's payload of an [`ScalarOp::Extension`] step.
    type Op;
    /// `Some(op)` when the backend runs custom call `instr` (whose operands
    /// have `operand_types`) as one step; `None` leaves it unsupported.
    fn custom_call(
        &self,
        instr: &HloInstruction,
        operand_types: &[ElementType],
    ) -> Result<Option<Self::Op>>;
}

/// The payload of a program with no extension: no value exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NoExtension {}

/// No extension: every custom call is unsupported (`&()` as the hook).
impl ScalarExtension for () {
    type Op = NoExtension;
    fn custom_call(&self, _: &HloInstruction, _: &[ElementType]) -> Result<Option<NoExtension>> {
        Ok(None)
    }
}

/// The element type of a one-element array shape.
fn scalar_type(shape: &Shape) -> Option<ElementType> {
    match shape {
        Shape::Array(a) if a.element_count() == 1 => Some(a.element_type),
        _ => None,
    }
}

/// The leaf types of a shape whose leaves are all one-element arrays.
fn leaf_types(shape: &Shape) -> Option<Vec<ElementType>> {
    shape
        .leaves()
        .into_iter()
        .map(|(_, a)| (a.element_count() == 1).then_some(a.element_type))
        .collect()
}

fn unsupported(
    comp: &HloComputation,
    instr: &HloInstruction,
    why: impl std::fmt::Display,
) -> Error {
    Error::unimplemented(format!(
        "%{} in {}: {why} (scalar subcomputation)",
        instr.name, comp.name
    ))
}

/// The step an elementwise op becomes, and its operand count.
fn elementwise<X>(op: &Op) -> Option<(ScalarOp<X>, usize)> {
    Some(match op {
        Op::Unary(op) => (ScalarOp::Unary(*op), 1),
        Op::Binary(op) => (ScalarOp::Binary(*op), 2),
        Op::Compare {
            direction,
            compare_type,
        } => {
            let op = ScalarOp::Compare {
                direction: *direction,
                compare_type: *compare_type,
            };
            (op, 2)
        }
        Op::Select => (ScalarOp::Select, 3),
        Op::Clamp => (ScalarOp::Clamp, 3),
        Op::Convert => (ScalarOp::Convert, 1),
        Op::BitcastConvert => (ScalarOp::BitcastConvert, 1),
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => {
            let op = ScalarOp::ReducePrecision {
                exponent_bits: *exponent_bits,
                mantissa_bits: *mantissa_bits,
            };
            (op, 1)
        }
        _ => return None,
    })
}

/// A computation with its parameters bound to registers.
struct Bindings<'c> {
    comp: &'c HloComputation,
    /// The bound parameter leaves, registers `0..`.
    params: Vec<Leaf>,
    /// Each parameter's leaves (`None`: not bound), for
    /// [`Compiler::compile_cone`].
    bound: Vec<Option<Vec<Leaf>>>,
}

/// Computation `id` with all its parameters bound, or only parameter `only`.
fn bind_parameters(
    source: &dyn ComputationSource,
    id: CompId,
    only: Option<usize>,
) -> Result<Bindings<'_>> {
    let comp = source
        .computation(id)
        .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", id.0)))?;
    let ids = comp.parameters();
    if let Some(p) = only.filter(|&p| p >= ids.len()) {
        return Err(Error::invalid_argument(format!(
            "{} has no parameter {p}",
            comp.name
        )));
    }
    let mut params = Vec::new();
    let mut bound = Vec::with_capacity(ids.len());
    for (n, &p) in ids.iter().enumerate() {
        let instr = &comp.instructions[p.index()];
        if !matches!(instr.op, Op::Parameter { number } if number == n) {
            return Err(unsupported(
                comp,
                instr,
                "parameters are not numbered 0, 1, ...",
            ));
        }
        if only.is_some_and(|o| o != n) {
            bound.push(None);
            continue;
        }
        let types = leaf_types(&instr.shape).ok_or_else(|| {
            let why = format_args!("parameter shape {} is not made of scalars", instr.shape);
            unsupported(comp, instr, why)
        })?;
        let first = params.len();
        let leaves: Vec<Leaf> = types
            .into_iter()
            .enumerate()
            .map(|(k, ty)| Leaf {
                reg: (first + k) as Reg,
                ty,
            })
            .collect();
        params.extend(leaves.iter().copied());
        bound.push(Some(leaves));
    }
    Ok(Bindings {
        comp,
        params,
        bound,
    })
}

struct Compiler<'a, X> {
    source: &'a dyn ComputationSource,
    extension: &'a dyn ScalarExtension<Op = X>,
    reg_types: Vec<ElementType>,
    constants: Vec<(Reg, Scalar)>,
    steps: Vec<ScalarStep<X>>,
    depth: usize,
}

impl<X> Compiler<'_, X> {
    fn reg(&mut self, ty: ElementType) -> Result<Reg> {
        if self.reg_types.len() >= MAX_REGISTERS {
            return Err(Error::unimplemented(format!(
                "subcomputation needs more than {MAX_REGISTERS} scalar registers"
            )));
        }
        self.reg_types.push(ty);
        Ok((self.reg_types.len() - 1) as Reg)
    }

    fn push(&mut self, op: ScalarOp<X>, args: &[Leaf], ty: ElementType) -> Result<Vec<Leaf>> {
        let out = self.reg(ty)?;
        let mut regs = [0; 3];
        for (r, a) in regs.iter_mut().zip(args) {
            *r = a.reg;
        }
        self.steps.push(ScalarStep {
            op,
            out,
            args: regs,
            arity: args.len() as u8,
        });
        Ok(vec![Leaf { reg: out, ty }])
    }

    /// Compiles the cone of `root` in `comp`, with parameter `n` bound to the
    /// leaves `params[n]` (`None`: that parameter may not be used), and
    /// returns the root's leaves.
    fn compile_cone(
        &mut self,
        comp: &HloComputation,
        root: InstrId,
        params: &[Option<Vec<Leaf>>],
    ) -> Result<Vec<Leaf>> {
        let count = comp.instructions.len();
        if root.index() >= count {
            return Err(Error::invalid_argument(format!(
                "{}: no instruction #{}",
                comp.name, root.0
            )));
        }
        // Reducers written by frontends sometimes carry dead code: compile
        // only what the root depends on. Operands precede their users.
        let mut live = vec![false; count];
        live[root.index()] = true;
        for i in (0..count).rev() {
            if live[i] {
                for op in &comp.instructions[i].operands {
                    if op.index() >= i {
                        return Err(Error::invalid_argument(format!(
                            "{}: %{} uses an operand defined after it",
                            comp.name, comp.instructions[i].name
                        )));
                    }
                    live[op.index()] = true;
                }
            }
        }
        let mut values: Vec<Option<Vec<Leaf>>> = vec![None; count];
        for i in 0..count {
            if live[i] {
                values[i] = Some(self.instruction(comp, i, &values, params)?);
            }
        }
        Ok(values[root.index()].take().unwrap_or_default())
    }

    fn instruction(
        &mut self,
        comp: &HloComputation,
        i: usize,
        values: &[Option<Vec<Leaf>>],
        params: &[Option<Vec<Leaf>>],
    ) -> Result<Vec<Leaf>> {
        let instr = &comp.instructions[i];
        let fail = |why: &dyn std::fmt::Display| unsupported(comp, instr, why);
        // The leaves of operand `k` (live operands are compiled before use).
        let leaves = |k: usize| -> Result<&Vec<Leaf>> {
            let id = instr.operand(k)?;
            values[id.index()]
                .as_ref()
                .ok_or_else(|| Error::internal("operand compiled after its user"))
        };
        // Operand `k` as one scalar: an array shape with one leaf.
        let scalar = |k: usize| -> Result<Leaf> {
            let id = instr.operand(k)?;
            match (leaves(k)?.as_slice(), &comp.instructions[id.index()].shape) {
                ([one], Shape::Array(_)) => Ok(*one),
                _ => Err(fail(&format_args!("operand {k} is not a scalar"))),
            }
        };
        let result_type = || {
            scalar_type(&instr.shape).ok_or_else(|| {
                fail(&format_args!(
                    "result shape {} is not a scalar",
                    instr.shape
                ))
            })
        };
        let arity = |n: usize| -> Result<Vec<Leaf>> {
            if instr.operands.len() != n {
                return Err(Error::invalid_argument(format!(
                    "%{} in {}: {} takes {n} operands, has {}",
                    instr.name,
                    comp.name,
                    instr.op.opcode(),
                    instr.operands.len()
                )));
            }
            (0..n).map(scalar).collect()
        };
        if let Some((op, n)) = elementwise(&instr.op) {
            let args = arity(n)?;
            let ty = result_type()?;
            if matches!(op, ScalarOp::Select) && args[0].ty != ElementType::Pred {
                return Err(fail(&"the predicate is not pred"));
            }
            if matches!(op, ScalarOp::BitcastConvert) && args[0].ty.byte_size() != ty.byte_size() {
                return Err(fail(&"bitcast-convert between widths"));
            }
            return self.push(op, &args, ty);
        }
        Ok(match &instr.op {
            Op::Parameter { number } => {
                let bound = params
                    .get(*number)
                    .ok_or_else(|| fail(&format_args!("parameter {number} does not exist")))?
                    .as_ref()
                    .ok_or_else(|| fail(&"this parameter is not available here"))?;
                let types = leaf_types(&instr.shape).ok_or_else(|| {
                    fail(&format_args!(
                        "parameter shape {} is not made of scalars",
                        instr.shape
                    ))
                })?;
                if types.len() != bound.len() || types.iter().zip(bound).any(|(t, l)| *t != l.ty) {
                    return Err(fail(&"argument types differ from the parameter's"));
                }
                bound.clone()
            }
            Op::Constant { literal } => {
                let ty = result_type()?;
                let value = literal
                    .get(0)
                    .ok()
                    .filter(|v| v.element_type() == ty && literal.element_count() == 1);
                let value =
                    value.ok_or_else(|| fail(&"constant is not a scalar of its shape's type"))?;
                let reg = self.reg(ty)?;
                self.constants.push((reg, value));
                vec![Leaf { reg, ty }]
            }
            Op::Tuple => {
                let mut all = Vec::new();
                for k in 0..instr.operands.len() {
                    all.extend(leaves(k)?.iter().copied());
                }
                all
            }
            Op::GetTupleElement { index } => {
                let tuple = &comp.instructions[instr.operand(0)?.index()].shape;
                let parts = tuple.tuple_shapes();
                let element = parts
                    .get(*index)
                    .ok_or_else(|| fail(&format_args!("{tuple} has no element {index}")))?;
                let start: usize = parts[..*index].iter().map(|s| s.leaves().len()).sum();
                leaves(0)?
                    .get(start..start + element.leaves().len())
                    .ok_or_else(|| {
                        Error::invalid_argument(format!("%{}: bad tuple index", instr.name))
                    })?
                    .to_vec()
            }
            Op::OptimizationBarrier => leaves(0)?.clone(),
            Op::Copy | Op::Reshape | Op::Bitcast | Op::Broadcast { .. } => {
                let [x] = arity(1)?[..] else { unreachable!() };
                if result_type()? != x.ty {
                    return Err(fail(&"changes the element type"));
                }
                vec![x]
            }
            Op::CustomCall(_) => {
                if instr.operands.len() > 3 {
                    return Err(fail(&"custom call with more than 3 operands"));
                }
                let args = arity(instr.operands.len())?;
                let types: Vec<ElementType> = args.iter().map(|a| a.ty).collect();
                match self.extension.custom_call(instr, &types)? {
                    Some(x) => self.push(ScalarOp::Extension(x), &args, result_type()?)?,
                    None => return Err(fail(&"this custom call is not supported")),
                }
            }
            Op::Call { to_apply, .. } => {
                if self.depth >= MAX_INLINE_DEPTH {
                    return Err(fail(&format_args!(
                        "calls nested deeper than {MAX_INLINE_DEPTH}"
                    )));
                }
                let callee = self
                    .source
                    .computation(*to_apply)
                    .ok_or_else(|| fail(&format_args!("no computation #{}", to_apply.0)))?;
                let args = (0..instr.operands.len())
                    .map(|k| leaves(k).map(|l| Some(l.clone())))
                    .collect::<Result<Vec<_>>>()?;
                self.depth += 1;
                let result = self.compile_cone(callee, callee.root, &args);
                self.depth -= 1;
                result?
            }
            other => return Err(fail(&format_args!("{} is not supported", other.opcode()))),
        })
    }
}

impl<X> ScalarProgram<X> {
    /// Compiles computation `id`: its parameters must be scalars or tuples of
    /// scalars, its result a scalar or a tuple of them.
    pub fn compile(
        source: &dyn ComputationSource,
        id: CompId,
        extension: &dyn ScalarExtension<Op = X>,
    ) -> Result<Self> {
        let b = bind_parameters(source, id, None)?;
        Self::compile_with(source, extension, b.comp, b.comp.root, b.params, &b.bound)
    }

    /// Compiles the expression rooted at `root` in computation `id` as a
    /// program whose parameters are the leaves of the computation's parameter
    /// `param`; the expression may use no other parameter. Kernels use it to
    /// pull a sort key out of a comparator.
    pub fn compile_expression(
        source: &dyn ComputationSource,
        id: CompId,
        root: InstrId,
        param: usize,
        extension: &dyn ScalarExtension<Op = X>,
    ) -> Result<Self> {
        let b = bind_parameters(source, id, Some(param))?;
        Self::compile_with(source, extension, b.comp, root, b.params, &b.bound)
    }

    fn compile_with(
        source: &dyn ComputationSource,
        extension: &dyn ScalarExtension<Op = X>,
        comp: &HloComputation,
        root: InstrId,
        params: Vec<Leaf>,
        bound: &[Option<Vec<Leaf>>],
    ) -> Result<Self> {
        if params.len() > MAX_REGISTERS {
            return Err(Error::unimplemented(format!(
                "{}: {} scalar parameters, more than the {MAX_REGISTERS} registers a scalar program may use",
                comp.name,
                params.len()
            )));
        }
        let mut compiler = Compiler {
            source,
            extension,
            reg_types: params.iter().map(|l| l.ty).collect(),
            constants: Vec::new(),
            steps: Vec::new(),
            depth: 0,
        };
        let outputs = compiler.compile_cone(comp, root, bound)?;
        Ok(ScalarProgram {
            name: comp.name.clone(),
            params,
            constants: compiler.constants,
            steps: compiler.steps,
            outputs,
            reg_types: compiler.reg_types,
        })
    }

    /// Number of registers.
    pub fn num_regs(&self) -> usize {
        self.reg_types.len()
    }

    /// Element type of each parameter leaf.
    pub fn param_types(&self) -> Vec<ElementType> {
        self.params.iter().map(|l| l.ty).collect()
    }

    /// Element type of each result leaf.
    pub fn output_types(&self) -> Vec<ElementType> {
        self.outputs.iter().map(|l| l.ty).collect()
    }
}
