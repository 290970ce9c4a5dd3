//! Legalization: rewriting a module into the operations a backend implements.
//!
//! A backend declares what it runs with an [`OpSupport`]: a set of opcodes, the
//! element types they accept (globally, with per-opcode exceptions). [`legalize`]
//! (or the [`Legalize`] pass) then rewrites everything else into declared
//! operations and checks the result. It fails with one `Unimplemented` error
//! that lists *every* instruction kind it could not legalize (opcode, element
//! types, an example instruction), so a backend author sees the whole gap at
//! once instead of one op per compile.
//!
//! # Design
//!
//! * Module-level steps, each only when the backend lacks the op: `copy` and
//!   `bitcast` are removed by [`crate::LayoutNormalization`] (once, first);
//!   `call`s and `fusion`s are inlined ([`crate::CallInliner`],
//!   [`crate::FusionInliner`]) at the start of every round.
//! * Then a sweep of per-instruction [`Expander`]s (one per file), callers
//!   before callees so an expander can read a called computation as written
//!   (a reducer's root op). An expander says, from the opcode and element
//!   types alone, which `(opcode, types)` its expansion would emit
//!   ([`Expander::plan`]); it is a candidate only when every one of those is
//!   itself legal or legalizable (checked recursively to a bounded depth;
//!   `call`/`fusion` count as legalizable, the next round inlines them). So an
//!   expander never turns one unsupported op into another unsupported one, the
//!   error names the op the user wrote, and chains work (`clamp` → `maximum` +
//!   `minimum` → `compare` + `select`). Each instruction takes the first
//!   candidate whose [`Expander::applies`] accepts its attributes. Instructions
//!   an expansion adds are visited in the same sweep.
//! * An expansion may create computations (a reducer, loop bodies built with
//!   `HloBuilder`, `call`ed); they join the module after the sweep of the
//!   computation being edited, and the next round inlines and legalizes them.
//!   Rounds repeat until one changes nothing (at most 8).
//! * Expansions are exact under the evaluator's semantics unless the expander's
//!   docs state a tolerance (`tan`, `log-plus-one`, `exponential-minus-one`,
//!   `convolution`'s summation order) or "up to NaN" (a NaN's sign or payload
//!   may differ; NaN-ness never does).
//! * Structural ops (`parameter`, `constant`, `tuple`, `get-tuple-element`) need
//!   no declaration. Control flow and calls (`while`, `conditional`, `call`,
//!   `fusion`, ...) are checked by opcode only: their element types are those of
//!   the computations they run, which are checked instruction by instruction.
//! * Malformed modules (dangling references) are refused up front with an
//!   error; expanders check the attributes they index with.

mod batchnorm;
mod batchnorm_grad;
mod bitcast;
mod bits;
mod complex;
mod convolution;
mod fmod;
mod half;
mod lanewise;
mod linalg;
mod minmax;
pub mod narrow;
mod precision;
mod remainder;
mod rng;
mod rounding;
pub mod scan;
mod scatter;
mod simple;
mod sorting;
mod special;
pub mod stochastic;
mod transcendental;
mod window;

use crate::{CallInliner, FusionInliner, HloPass, LayoutNormalization};
use hlo_ir::error::{Error, Result};
use hlo_ir::rewrite::{
    effectful_computations, remove_unreachable_computations, CallGraph, ComputationEditor, NameGen,
};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloComputation, HloInstruction, HloModule, InstrId, Op, Opcode};
use std::collections::{BTreeMap, BTreeSet};

/// What a backend implements: opcodes, and the element types each accepts.
///
/// ```
/// use hlo_ir::{shape::ElementType, Opcode};
/// use hlo_passes::legalize::OpSupport;
/// let support = OpSupport::new()
///     .ops(&[Opcode::Add, Opcode::Multiply, Opcode::Convert])
///     .types(&[ElementType::F32, ElementType::S32, ElementType::Pred])
///     // `convert` also moves f16 in and out of f32.
///     .op_types(Opcode::Convert, &[ElementType::F16, ElementType::F32]);
/// assert!(support.supports(Opcode::Add, &[ElementType::F32]));
/// assert!(!support.supports(Opcode::Add, &[ElementType::F16]));
/// assert!(support.supports(Opcode::Convert, &[ElementType::F16, ElementType::F32]));
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OpSupport {
    ops: BTreeSet<Opcode>,
    /// Types every declared op accepts; `None`: every type.
    types: Option<BTreeSet<ElementType>>,
    /// Per-op types that replace the global ones for that op.
    per_op: BTreeMap<Opcode, Option<BTreeSet<ElementType>>>,
}

impl OpSupport {
    /// Nothing declared (only structural ops are legal).
    pub fn new() -> OpSupport {
        OpSupport::default()
    }

    /// Declares `ops` (with the global types).
    pub fn ops(mut self, ops: &[Opcode]) -> OpSupport {
        self.ops.extend(ops.iter().copied());
        self
    }

    /// Restricts every declared op without its own [`op_types`](Self::op_types)
    /// to these element types (adds to earlier calls). Without any call, all
    /// types are accepted.
    pub fn types(mut self, types: &[ElementType]) -> OpSupport {
        self.types
            .get_or_insert_with(BTreeSet::new)
            .extend(types.iter().copied());
        self
    }

    /// Declares `op` with its own element types (an exception to
    /// [`types`](Self::types); adds to earlier calls for the same op).
    pub fn op_types(mut self, op: Opcode, types: &[ElementType]) -> OpSupport {
        self.ops.insert(op);
        self.per_op
            .entry(op)
            .or_insert_with(|| Some(BTreeSet::new()))
            .get_or_insert_with(BTreeSet::new)
            .extend(types.iter().copied());
        self
    }

    /// Declares `ops` for every element type (data movement that only copies
    /// bytes, say), whatever [`types`](Self::types) says.
    pub fn any_type(mut self, ops: &[Opcode]) -> OpSupport {
        for &op in ops {
            self.ops.insert(op);
            self.per_op.insert(op, None);
        }
        self
    }

    /// Whether `op` is declared for all of `types` (structural ops always are).
    pub fn supports(&self, op: Opcode, types: &[ElementType]) -> bool {
        if is_structural(op) {
            return true;
        }
        if !self.ops.contains(&op) {
            return false;
        }
        let allowed = match self.per_op.get(&op) {
            Some(t) => t.as_ref(),
            None => self.types.as_ref(),
        };
        allowed.is_none_or(|allowed| types.iter().all(|t| allowed.contains(t)))
    }

    /// Whether `instr` is legal as it stands. XLA's `TopK` custom call never
    /// is: it is the `topk` op in custom-call form, which legalization
    /// rewrites into that op (run by the backend or expanded in turn), so a
    /// backend that declares `custom-call` for its own targets is not handed it.
    pub fn supports_instruction(&self, instr: &HloInstruction, comp: &HloComputation) -> bool {
        legal(
            self,
            instr,
            &(instr.opcode(), instruction_types(instr, comp)),
        )
    }

    /// The declared opcodes.
    pub fn opcodes(&self) -> impl Iterator<Item = Opcode> + '_ {
        self.ops.iter().copied()
    }
}

/// [`OpSupport::supports_instruction`] with the instruction's key computed.
fn legal(support: &OpSupport, instr: &HloInstruction, key: &Emitted) -> bool {
    let framework_call = matches!(&instr.op, Op::CustomCall(a) if a.target == sorting::TOPK_TARGET);
    !framework_call && support.supports(key.0, &key.1)
}

/// Ops every backend has by construction: they only name or group values.
fn is_structural(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Parameter | Opcode::Constant | Opcode::Tuple | Opcode::GetTupleElement
    )
}

/// Ops checked by opcode only (see the module docs).
fn is_type_transparent(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::While
            | Opcode::Conditional
            | Opcode::Call
            | Opcode::Fusion
            | Opcode::OptimizationBarrier
            | Opcode::AfterAll
            | Opcode::AddDependency
            | Opcode::CustomCall
    )
}

fn leaf_types(shape: &Shape, out: &mut Vec<ElementType>) {
    match shape {
        Shape::Array(a) => out.push(a.element_type),
        Shape::Tuple(t) => t.iter().for_each(|s| leaf_types(s, out)),
        Shape::Token => {}
    }
}

/// The element types an instruction is checked for: those of its result and
/// operands, sorted, each once (`compare` of f16 gives `[pred, f16]`).
pub fn instruction_types(instr: &HloInstruction, comp: &HloComputation) -> Vec<ElementType> {
    let mut out = Vec::new();
    if is_type_transparent(instr.opcode()) || is_structural(instr.opcode()) {
        return out;
    }
    leaf_types(&instr.shape, &mut out);
    for op in &instr.operands {
        if let Some(o) = comp.instructions.get(op.index()) {
            leaf_types(&o.shape, &mut out);
        }
    }
    out.sort();
    out.dedup();
    out
}

/// One `(opcode, element types)` an expansion emits.
pub type Emitted = (Opcode, Vec<ElementType>);

/// Rewrites one kind of instruction into others.
pub trait Expander: Sync {
    /// A short name for errors and docs.
    fn name(&self) -> &'static str;
    /// If this expander handles an instruction with this opcode and these
    /// [`instruction_types`], what its expansion emits; `None` if it does not
    /// apply. Must depend on nothing else, so legality can be planned ahead.
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>>;
    /// Adds the expansion of `id` to the computation and returns the
    /// instruction that replaces it (the driver rewires users and removes `id`).
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId>;
    /// Whether the expansion handles this particular instruction (its
    /// attributes, its called computations); an instruction it declines is left
    /// for the error report.
    fn applies(&self, _b: &Emitter<'_, '_>, _id: InstrId) -> bool {
        true
    }
}

/// Every expander, in the order they are tried.
fn expanders() -> &'static [&'static dyn Expander] {
    &[
        &half::HalfThroughF32,
        &simple::SubtractExpander,
        &simple::NegateExpander,
        &simple::NotExpander,
        &minmax::MinMaxExpander,
        &minmax::ClampExpander,
        &simple::AbsExpander,
        &simple::SignExpander,
        &simple::IsFiniteExpander,
        &transcendental::RsqrtExpander,
        &transcendental::TanExpander,
        &remainder::IntRemainderExpander,
        &fmod::FloatRemainderExpander,
        &bits::PopcntExpander,
        &bits::ClzExpander,
        &bitcast::BitsToFloatExpander,
        &bitcast::FloatToBitsExpander,
        &precision::ReducePrecisionExpander,
        &rounding::RoundingExpander,
        &transcendental::Log1pExpander,
        &transcendental::Expm1Expander,
        &window::PadExpander,
        &window::ReverseExpander,
        &window::ReduceWindowExpander,
        &convolution::ConvolutionExpander,
        &batchnorm::BatchNormInferenceExpander,
        &batchnorm::BatchNormTrainingExpander,
        &special::CbrtExpander,
        &special::Atan2Expander,
        &special::ErfExpander,
        &special::PowerExpander,
        &sorting::SortExpander,
        &scan::ScanExpander,
        &sorting::TopKExpander,
        &sorting::TopKCustomCallExpander,
        &complex::ComplexPartExpander,
        &complex::ComplexBridge,
        &complex::ComplexArithmeticExpander,
        &complex::ComplexAbsExpander,
        &complex::FftExpander,
        &scatter::SelectAndScatterExpander,
        &lanewise::MapExpander,
        &rng::RngBitGeneratorExpander,
        &linalg::CholeskyExpander,
        &linalg::TriangularSolveExpander,
        &batchnorm_grad::BatchNormGradExpander,
    ]
}

/// How deep [`Legalizer::legalizable`] follows expansions of expansions.
const MAX_PLAN_DEPTH: usize = 8;

struct Legalizer<'s> {
    support: &'s OpSupport,
    /// Memo: the expanders (indices) that can legalize `(op, types)`.
    memo: BTreeMap<Emitted, Vec<usize>>,
}

impl Legalizer<'_> {
    fn legal_or_legalizable(&mut self, key: &Emitted, depth: usize) -> bool {
        // `call` and `fusion` are inlined by the module-level steps of every
        // round.
        matches!(key.0, Opcode::Call | Opcode::Fusion)
            || self.support.supports(key.0, &key.1)
            || !self.candidates(key, depth).is_empty()
    }

    /// The expanders whose plans are entirely legal or legalizable, in
    /// order (several can apply to one key: the two `bitcast-convert`
    /// directions share their types; each instruction takes the first whose
    /// [`Expander::applies`] accepts it).
    fn candidates(&mut self, key: &Emitted, depth: usize) -> Vec<usize> {
        if let Some(m) = self.memo.get(key) {
            return m.clone();
        }
        if depth >= MAX_PLAN_DEPTH {
            return Vec::new();
        }
        let mut found = Vec::new();
        for (i, e) in expanders().iter().enumerate() {
            let Some(plan) = e.plan(key.0, &key.1) else {
                continue;
            };
            if plan
                .iter()
                .all(|k| k != key && self.legal_or_legalizable(k, depth + 1))
            {
                found.push(i);
            }
        }
        // Only answers reached from the top are complete (a depth cut-off below
        // may have hidden a route), so only those are remembered.
        if depth == 0 {
            self.memo.insert(key.clone(), found.clone());
        }
        found
    }
}

/// Builds the instructions of an expansion (a thin layer over the editor that
/// copies the origin's metadata and makes shapes).
pub struct Emitter<'e, 'a> {
    ed: &'e mut ComputationEditor<'a>,
    origin: InstrId,
    /// The module, for reading called computations (the computation being
    /// edited is taken out of it meanwhile).
    module: &'e HloModule,
    /// Computations expansions created (reducers), appended to the module
    /// after this computation's sweep, in order.
    created: &'e mut Vec<HloComputation>,
}

impl Emitter<'_, '_> {
    /// A new scalar reducer computing `op` of its two parameters of type `ty`
    /// (created once per expansion that asks; appended to the module after
    /// the sweep of the current computation, so later sweeps legalize it too).
    pub fn binary_reducer(
        &mut self,
        op: hlo_ir::opcode::BinaryOp,
        ty: ElementType,
    ) -> hlo_ir::CompId {
        let id = hlo_ir::CompId((self.module.computations.len() + self.created.len()) as u32);
        let (mut names, mut comp_names) = self.namers();
        let base = format!("{}.reducer", self.ed.instr(self.origin).name);
        let scalar = Shape::scalar(ty);
        let p0 = HloInstruction::new(
            names.fresh(&format!("{base}.lhs")),
            scalar.clone(),
            Op::Parameter { number: 0 },
            vec![],
        );
        let p1 = HloInstruction::new(
            names.fresh(&format!("{base}.rhs")),
            scalar.clone(),
            Op::Parameter { number: 1 },
            vec![],
        );
        let r = HloInstruction::new(
            names.fresh(&format!("{base}.op")),
            scalar,
            Op::Binary(op),
            vec![InstrId(0), InstrId(1)],
        );
        self.created.push(HloComputation {
            name: comp_names.fresh(&base),
            instructions: vec![p0, p1, r],
            root: InstrId(2),
        });
        id
    }

    /// Name generators for new computations' instructions and the
    /// computations themselves: unique against the module, the computation
    /// being edited (taken out of the module meanwhile) and earlier new
    /// computations. (Instructions this sweep adds are named `….legal…`.)
    fn namers(&self) -> (NameGen, NameGen) {
        let mut names = NameGen::for_instructions(self.module);
        let mut comp_names = NameGen::for_computations(self.module);
        let current = self.ed.computation();
        comp_names.reserve(&current.name);
        for i in &current.instructions {
            names.reserve(&i.name);
        }
        for c in self.created.iter() {
            comp_names.reserve(&c.name);
            for i in &c.instructions {
                names.reserve(&i.name);
            }
        }
        (names, comp_names)
    }

    /// Adds a computation built with [`hlo_ir::builder::HloBuilder`] (and the
    /// computations it calls) to the module, with fresh names, and returns its
    /// id. Like [`binary_reducer`](Self::binary_reducer)'s, it joins the module
    /// after the current computation's sweep.
    pub fn attach(&mut self, built: &hlo_ir::builder::Computation) -> Result<hlo_ir::CompId> {
        let offset = self.module.computations.len() + self.created.len();
        let src = built.module();
        let (mut names, mut comp_names) = self.namers();
        let shift = |c: hlo_ir::CompId| hlo_ir::CompId((c.index() + offset) as u32);
        for comp in &src.computations {
            let mut copy = comp.clone();
            copy.name = comp_names.fresh(&comp.name);
            for instr in &mut copy.instructions {
                instr.name = names.fresh(&instr.name);
                instr.op.map_called(shift);
            }
            self.created.push(copy);
        }
        Ok(shift(src.entry))
    }

    /// A `call` of `built` (attached as by [`attach`](Self::attach)) on
    /// `operands`, of `shape`: how an expansion that builds a whole
    /// computation replaces its instruction.
    pub fn call_built(
        &mut self,
        built: &hlo_ir::builder::Computation,
        shape: Shape,
        operands: Vec<InstrId>,
    ) -> Result<InstrId> {
        let callee = self.attach(built)?;
        Ok(self.add(
            shape,
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            operands,
        ))
    }

    /// The module's computation `id` (a reducer, say).
    pub fn computation(&self, id: hlo_ir::CompId) -> Result<&HloComputation> {
        self.module
            .computations
            .get(id.index())
            .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", id.0)))
    }

    pub fn instr(&self, id: InstrId) -> &HloInstruction {
        self.ed.instr(id)
    }

    /// The `i`-th operand of the instruction being expanded.
    pub fn operand(&self, i: usize) -> Result<InstrId> {
        self.ed.operand(self.origin, i)
    }

    /// The dimensions and element type of an array value.
    pub fn array(&self, id: InstrId) -> Result<(ElementType, Vec<usize>)> {
        let a = self.ed.instr(id).shape.array_or_err()?;
        Ok((a.element_type, a.dims.clone()))
    }

    /// Adds `op` with result `shape`.
    pub fn add(&mut self, shape: Shape, op: Op, operands: Vec<InstrId>) -> InstrId {
        let name = format!("{}.legal", self.ed.instr(self.origin).name);
        self.ed.add_derived(self.origin, &name, shape, op, operands)
    }

    /// An elementwise op whose result has the shape of `like` with element
    /// type `ty`.
    pub fn like(
        &mut self,
        like: InstrId,
        ty: ElementType,
        op: Op,
        operands: Vec<InstrId>,
    ) -> Result<InstrId> {
        let (_, dims) = self.array(like)?;
        Ok(self.add(Shape::array(ty, dims), op, operands))
    }

    /// `value` (a scalar of `ty`) broadcast to the shape of `like`.
    pub fn splat(&mut self, like: InstrId, value: hlo_ir::native::Scalar) -> Result<InstrId> {
        let ty = value.element_type();
        let c = self.add(
            Shape::scalar(ty),
            Op::Constant {
                literal: hlo_ir::Literal::from_scalar(value),
            },
            vec![],
        );
        let (_, dims) = self.array(like)?;
        if dims.is_empty() {
            return Ok(c);
        }
        Ok(self.add(
            Shape::array(ty, dims),
            Op::Broadcast { dimensions: vec![] },
            vec![c],
        ))
    }
}

/// Rewrites `module` into operations `support` declares; see the module docs.
/// On success every instruction of every computation is legal; otherwise the
/// error lists every illegal `(opcode, types)` with an example instruction.
pub fn legalize(module: &HloModule, support: &OpSupport) -> Result<HloModule> {
    let mut out = module.clone();
    Legalize::new(support.clone()).run(&mut out)?;
    Ok(out)
}

/// One kind of instruction legalization could not rewrite.
#[derive(Clone, Debug, PartialEq)]
pub struct Unlegalized {
    pub opcode: Opcode,
    /// Its [`instruction_types`].
    pub types: Vec<ElementType>,
    /// How many instructions of the kind are left.
    pub count: usize,
    /// The name of one of them.
    pub example: String,
}

impl std::fmt::Display for Unlegalized {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let types: Vec<&str> = self.types.iter().map(|t| t.name()).collect();
        write!(
            f,
            "{} [{}]: {} instruction(s), e.g. %{}",
            self.opcode.name(),
            types.join(", "),
            self.count,
            self.example
        )
    }
}

/// Legalizes `module` in place as far as the expanders reach and returns what
/// is left illegal (empty: fully legal) and whether anything changed. Errors
/// only for a malformed module; [`Legalize`] turns a non-empty list into its
/// `Unimplemented` error.
pub fn legalize_as_far_as_possible(
    module: &mut HloModule,
    support: &OpSupport,
) -> Result<(bool, Vec<Unlegalized>)> {
    // A malformed module gets an error here rather than an out-of-range index
    // in an expander.
    hlo_ir::rewrite::check_references(module)?;
    let lacks = |m: &HloModule, ops: &[Opcode]| {
        ops.iter().any(|&op| {
            !support.supports(op, &[])
                && m.computations
                    .iter()
                    .any(|c| c.instructions.iter().any(|i| i.opcode() == op))
        })
    };
    let mut changed = false;
    if lacks(module, &[Opcode::Copy, Opcode::Bitcast]) {
        changed |= LayoutNormalization::new().run(module)?;
    }
    let mut legalizer = Legalizer {
        support,
        memo: BTreeMap::new(),
    };
    // One round normally suffices (see the module docs); more rounds legalize
    // what expansions added: computations they created, `call`s to them.
    for _ in 0..8 {
        let mut round = false;
        if lacks(module, &[Opcode::Call]) {
            round |= CallInliner::new().run(module)?;
        }
        if lacks(module, &[Opcode::Fusion]) {
            round |= FusionInliner::new().run(module)?;
        }
        round |= sweep(module, &mut legalizer)?;
        changed |= round;
        if !round {
            break;
        }
    }
    if changed {
        remove_unreachable_computations(module)?;
    }
    Ok((changed, unlegalized(module, support)))
}

/// [`legalize`] as a pass (fails the same way).
#[derive(Clone, Debug)]
pub struct Legalize {
    support: OpSupport,
}

impl Legalize {
    pub fn new(support: OpSupport) -> Legalize {
        Legalize { support }
    }
}

impl HloPass for Legalize {
    fn name(&self) -> &str {
        "legalize"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        let (changed, missing) = legalize_as_far_as_possible(module, &self.support)?;
        if missing.is_empty() {
            return Ok(changed);
        }
        let lines: Vec<String> = missing.iter().map(|m| m.to_string()).collect();
        Err(Error::unimplemented(format!(
            "the backend lacks {} operation(s) that no expander can rewrite into what it declares:\n  {}",
            missing.len(),
            lines.join("\n  ")
        )))
    }
}

/// Bounds the instructions one computation may grow to, so a hostile module
/// cannot make the sweep run away.
const MAX_INSTRUCTIONS: usize = 1 << 22;

/// Expands every illegal instruction that can be; returns whether any was.
fn sweep(module: &mut HloModule, legalizer: &mut Legalizer<'_>) -> Result<bool> {
    let effectful = effectful_computations(module);
    let mut names = NameGen::for_instructions(module);
    let mut changed = false;
    // Callers first: an expander may read a called computation as written (a
    // reducer's root op), before that computation's own ops are expanded.
    let mut order = CallGraph::build(module).post_order_all(module)?;
    order.reverse();
    for c in order.into_iter().map(|c| c.index()) {
        // Take the computation out so expanders can read the others (a
        // reducer) while it is edited.
        let placeholder = HloComputation {
            name: String::new(),
            instructions: Vec::new(),
            root: InstrId(0),
        };
        let mut comp = std::mem::replace(&mut module.computations[c], placeholder);
        let mut created = Vec::new();
        let result = sweep_computation(
            &mut comp,
            module,
            &mut names,
            legalizer,
            &effectful,
            &mut created,
        );
        module.computations[c] = comp;
        changed |= result?;
        module.computations.extend(created);
    }
    Ok(changed)
}

fn sweep_computation(
    comp: &mut HloComputation,
    module: &HloModule,
    names: &mut NameGen,
    legalizer: &mut Legalizer<'_>,
    effectful: &[bool],
    created: &mut Vec<HloComputation>,
) -> Result<bool> {
    let mut changed = false;
    let mut ed = ComputationEditor::new(comp, names);
    let mut i = 0;
    while i < ed.len() {
        if ed.len() > MAX_INSTRUCTIONS {
            return Err(Error::resource_exhausted(
                "legalization grew a computation past 4M instructions",
            ));
        }
        let id = InstrId(i as u32);
        i += 1;
        let instr = ed.instr(id);
        let key = (instr.opcode(), instruction_types(instr, ed.computation()));
        if legal(legalizer.support, instr, &key) {
            continue;
        }
        // Dead instructions (replaced earlier in this sweep) need no work.
        if ed.user_count(id) == 0 && ed.root() != id {
            continue;
        }
        let mut b = Emitter {
            ed: &mut ed,
            origin: id,
            module,
            created,
        };
        let chosen = legalizer
            .candidates(&key, 0)
            .into_iter()
            .map(|e| expanders()[e])
            .find(|e| e.applies(&b, id));
        let Some(expander) = chosen else {
            continue;
        };
        let new = expander
            .expand(&mut b, id)
            .map_err(|err| err.context(format_args!("legalizing with {}", expander.name())))?;
        ed.replace_all_uses(id, new)?;
        ed.remove(id);
        changed = true;
    }
    // `finish` also drops dead instructions: that is a change too (the pass
    // contract: `false` only for an untouched module).
    changed |= ed.finish(effectful)?;
    Ok(changed)
}

/// Every illegal `(opcode, types)` left in `module`, each with an example.
pub fn unlegalized(module: &HloModule, support: &OpSupport) -> Vec<Unlegalized> {
    let mut missing: BTreeMap<Emitted, (String, usize)> = BTreeMap::new();
    for comp in &module.computations {
        for instr in &comp.instructions {
            let key = (instr.opcode(), instruction_types(instr, comp));
            if !legal(support, instr, &key) {
                missing
                    .entry(key)
                    .or_insert_with(|| (instr.name.clone(), 0))
                    .1 += 1;
            }
        }
    }
    missing
        .into_iter()
        .map(|((opcode, types), (example, count))| Unlegalized {
            opcode,
            types,
            count,
            example,
        })
        .collect()
}

/// `v` as a scalar of `ty`: integers wrap (two's complement, so `-1` is the
/// all-ones value of an unsigned type), floats round to nearest-even, `pred` is
/// `v != 0`. Complex types have no such constant here.
pub fn scalar_of(ty: ElementType, v: f64) -> Result<hlo_ir::native::Scalar> {
    use hlo_ir::native::Scalar;
    let bytes: Vec<u8> = match ty {
        ElementType::Pred => vec![u8::from(v != 0.0)],
        ElementType::F16 => hlo_semantics::convert::f16_from_f64(v)
            .to_bits()
            .to_le_bytes()
            .to_vec(),
        ElementType::BF16 => hlo_semantics::convert::bf16_from_f64(v)
            .to_bits()
            .to_le_bytes()
            .to_vec(),
        ElementType::F32 => (v as f32).to_le_bytes().to_vec(),
        ElementType::F64 => v.to_le_bytes().to_vec(),
        t if t.is_integer() => (v as i64).to_le_bytes()[..t.byte_size()].to_vec(),
        t => {
            return Err(Error::unimplemented(format!(
                "no scalar constant of type {}",
                t.name()
            )))
        }
    };
    Ok(Scalar::from_bytes(ty, &bytes))
}

/// Sorted, deduplicated types (the form [`instruction_types`] gives).
/// An `s32` scalar constant in a computation being built.
pub(crate) fn s32_constant(
    bb: &mut hlo_ir::builder::HloBuilder,
    v: i32,
) -> Result<hlo_ir::builder::Value> {
    bb.constant(hlo_ir::Literal::from_scalar(hlo_ir::Scalar::S32(v)))
}

pub(crate) fn tys(types: &[ElementType]) -> Vec<ElementType> {
    let mut v = types.to_vec();
    v.sort();
    v.dedup();
    v
}

/// A plan of `ops`, each on type `t` alone.
pub(crate) fn all_of_type(t: ElementType, ops: &[Opcode]) -> Vec<Emitted> {
    ops.iter().map(|&o| (o, vec![t])).collect()
}

/// The single element type of an elementwise instruction whose operands and
/// result share one type (`None` for mixed or empty lists).
pub(crate) fn single(types: &[ElementType]) -> Option<ElementType> {
    match types {
        [t] => Some(*t),
        _ => None,
    }
}

impl Emitter<'_, '_> {
    /// `compare(a, b)` in `direction` (type: the default for the operands',
    /// or `TOTALORDER` when `total`).
    pub fn compare(
        &mut self,
        a: InstrId,
        b: InstrId,
        direction: hlo_ir::attrs::ComparisonDirection,
        total: bool,
    ) -> Result<InstrId> {
        let compare_type = total.then_some(hlo_ir::attrs::ComparisonType::TotalOrder);
        self.like(
            a,
            ElementType::Pred,
            Op::Compare {
                direction,
                compare_type,
            },
            vec![a, b],
        )
    }

    /// `select(p, t, f)`.
    pub fn select(&mut self, p: InstrId, t: InstrId, f: InstrId) -> Result<InstrId> {
        let (ty, _) = self.array(t)?;
        self.like(t, ty, Op::Select, vec![p, t, f])
    }

    /// A unary or binary elementwise op of the operands' type.
    pub fn unary(&mut self, op: hlo_ir::opcode::UnaryOp, x: InstrId) -> Result<InstrId> {
        let (ty, _) = self.array(x)?;
        self.like(x, ty, Op::Unary(op), vec![x])
    }

    pub fn binary(
        &mut self,
        op: hlo_ir::opcode::BinaryOp,
        x: InstrId,
        y: InstrId,
    ) -> Result<InstrId> {
        let (ty, _) = self.array(x)?;
        self.like(x, ty, Op::Binary(op), vec![x, y])
    }

    /// A constant of `x`'s type and shape (see [`scalar_of`]).
    pub fn constant_like(&mut self, x: InstrId, v: f64) -> Result<InstrId> {
        let (ty, _) = self.array(x)?;
        let s = scalar_of(ty, v)?;
        self.splat(x, s)
    }
}
