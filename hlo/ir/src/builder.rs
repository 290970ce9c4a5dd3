//! Building HLO in code, in the manner of XLA's `XlaBuilder`.
//!
//! An [`HloBuilder`] collects the instructions of one computation. Every method
//! that adds an operation takes [`Value`]s (handles to earlier instructions of the
//! same builder), infers the result shape with [`infer_shape`] and returns a new
//! `Value`, or an error naming the operation and the shapes involved, at the call
//! that went wrong:
//!
//! ```
//! use hlo_ir::builder::HloBuilder;
//! use hlo_ir::{ElementType, Shape};
//!
//! let mut b = HloBuilder::new("do_it");
//! let p0 = b.parameter(0, Shape::array(ElementType::F32, [128]), "p0")?;
//! let p1 = b.parameter(1, Shape::array(ElementType::F32, [2048]), "p1")?;
//! let cc = b.custom_call("do_custom_call", &[p0, p1], Shape::array(ElementType::F32, [2048]), b"")?;
//! let module = b.build(cc)?;
//! assert_eq!(module.entry().instructions.len(), 3);
//! # Ok::<(), hlo_ir::Error>(())
//! ```
//!
//! Computations that an operation calls (reducers, comparators, loop bodies,
//! branches) are built with their own `HloBuilder` and finished with
//! [`HloBuilder::build_computation`], which gives a [`Computation`]: a verified,
//! self-contained piece that any number of operations in any builder can use. The
//! first use attaches a copy (and the computations it calls) to the using builder;
//! later uses of the same `Computation` share that copy. Names stay unique across
//! the module: instruction and computation names from an attached computation are
//! suffixed where they collide.
//!
//! [`HloBuilder::build`] makes the entry computation, appends it after everything
//! attached, and returns an [`HloModule`] that has passed
//! [`verify_module`] and prints to text that parses
//! back to an equal module.
//!
//! Every operation has a method; [`HloBuilder::add_op`] also takes any [`Op`]
//! directly (with computations [`attach`](HloBuilder::attach)ed first) and still
//! infers and checks the shape.

use super::attrs::*;
use super::op::{CustomCallAttrs, Op};
use super::opcode::{BinaryOp, UnaryOp};
use super::shape_inference::{infer_shape, CalledShapes};
use super::verifier::verify_module;
use super::{
    BackendConfig, CompId, HloComputation, HloInstruction, HloModule, InstrId, OpMetadata,
};
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::shape::{ElementType, ProgramShape, Shape};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicU64, Ordering};

/// One method per unary elementwise op, forwarding to [`HloBuilder::unary`].
macro_rules! unary_methods {
    ($($method:ident => $op:ident,)*) => {$(
        #[doc = concat!("`", stringify!($op), "` of `x` (see [`UnaryOp::", stringify!($op), "`]).")]
        pub fn $method(&mut self, x: Value) -> Result<Value> {
            self.unary(UnaryOp::$op, x)
        }
    )*};
}

/// One method per binary elementwise op, forwarding to [`HloBuilder::binary`].
macro_rules! binary_methods {
    ($($method:ident => $op:ident,)*) => {$(
        #[doc = concat!("`", stringify!($op), "` of `a` and `b` (see [`BinaryOp::", stringify!($op), "`]).")]
        pub fn $method(&mut self, a: Value, b: Value) -> Result<Value> {
            self.binary(BinaryOp::$op, a, b)
        }
    )*};
}

/// One method per comparison direction, forwarding to [`HloBuilder::compare`].
macro_rules! compare_methods {
    ($($method:ident => $dir:ident,)*) => {$(
        #[doc = concat!("`compare(a, b), direction=", stringify!($dir), "`: a `pred` array.")]
        pub fn $method(&mut self, a: Value, b: Value) -> Result<Value> {
            self.compare(a, b, ComparisonDirection::$dir)
        }
    )*};
}

/// Source of identities for builders and computations, so a `Value` used with the
/// wrong builder, or a computation attached twice, is recognised.
static NEXT_UID: AtomicU64 = AtomicU64::new(1);

fn next_uid() -> u64 {
    NEXT_UID.fetch_add(1, Ordering::Relaxed)
}

/// A handle to an instruction added by an [`HloBuilder`]; valid only with the
/// builder that made it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Value {
    builder: u64,
    id: InstrId,
}

impl Value {
    /// The instruction's index in the computation being built.
    pub fn id(self) -> InstrId {
        self.id
    }
}

/// A finished, verified computation that operations can call. It is stored as a
/// module whose entry is the computation, preceded by the computations it calls.
#[derive(Clone, Debug)]
pub struct Computation {
    uid: u64,
    module: HloModule,
}

impl Computation {
    /// The computation's name (as built; attaching may suffix it).
    pub fn name(&self) -> &str {
        &self.module.entry().name
    }
    /// Parameter shapes and result shape.
    pub fn program_shape(&self) -> ProgramShape {
        self.module.entry_program_shape()
    }
    /// The computation as a module of its own (entry = this computation).
    pub fn module(&self) -> &HloModule {
        &self.module
    }
    pub fn into_module(self) -> HloModule {
        self.module
    }

    /// Computation `id` of `module`, with every computation it calls, as a
    /// computation a builder can call: how an expansion reuses a body or
    /// reducer the module already has.
    pub fn from_module(module: &HloModule, id: CompId) -> Result<Computation> {
        if id.index() >= module.computations.len() {
            return Err(Error::invalid_argument(format!(
                "module {} has no computation #{}",
                module.name, id.0
            )));
        }
        let graph = crate::rewrite::CallGraph::build(module);
        let order = graph.post_order_from(module, &[id])?;
        let position: HashMap<CompId, u32> = order
            .iter()
            .enumerate()
            .map(|(i, &c)| (c, i as u32))
            .collect();
        let mut computations = Vec::with_capacity(order.len());
        for &c in &order {
            let mut comp = module.computation(c).clone();
            for instr in &mut comp.instructions {
                // Every callee is in `order`, being reachable from `id`.
                instr
                    .op
                    .map_called(|callee| CompId(position.get(&callee).copied().unwrap_or(0)));
            }
            computations.push(comp);
        }
        let entry = CompId(position.get(&id).copied().unwrap_or(0));
        Ok(Computation {
            uid: next_uid(),
            module: HloModule {
                name: module.computation(id).name.clone(),
                config: Default::default(),
                entry,
                computations,
                stack_frames: Default::default(),
            },
        })
    }

    /// `(T[], T[]) -> T[]` applying `op`: the reducer of a sum, product, max, ...
    pub fn scalar_binary(name: &str, op: BinaryOp, ty: ElementType) -> Result<Computation> {
        let mut b = HloBuilder::new(name);
        let x = b.parameter(0, Shape::scalar(ty), "x")?;
        let y = b.parameter(1, Shape::scalar(ty), "y")?;
        let r = b.binary(op, x, y)?;
        b.build_computation(r)
    }

    /// `(T[], T[]) -> pred[]` comparing with `direction`: a sort comparator.
    pub fn comparator(
        name: &str,
        direction: ComparisonDirection,
        ty: ElementType,
    ) -> Result<Computation> {
        let mut b = HloBuilder::new(name);
        let x = b.parameter(0, Shape::scalar(ty), "x")?;
        let y = b.parameter(1, Shape::scalar(ty), "y")?;
        let r = b.compare(x, y, direction)?;
        b.build_computation(r)
    }
}

/// Names in use, and fresh ones on request.
#[derive(Clone, Debug, Default)]
struct NameSet {
    used: HashSet<String>,
    counter: u64,
}

impl NameSet {
    /// `wanted` made lexable (letters, digits, `_`, `.`, `-`) and unique by a
    /// `.N` suffix if taken.
    fn claim(&mut self, wanted: &str) -> String {
        let mut base: String = wanted
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        if base.is_empty() {
            base = "v".to_string();
        }
        let mut name = base.clone();
        while self.used.contains(&name) {
            self.counter += 1;
            name = format!("{base}.{}", self.counter);
        }
        self.used.insert(name.clone());
        name
    }

    /// A fresh `base.N` name (XLA's style for generated names).
    fn fresh(&mut self, base: &str) -> String {
        loop {
            self.counter += 1;
            let name = format!("{base}.{}", self.counter);
            if self.used.insert(name.clone()) {
                return name;
            }
        }
    }
}

/// Builds one computation (and, with [`build`](Self::build), a module). See the
/// module documentation.
#[derive(Debug)]
pub struct HloBuilder {
    uid: u64,
    name: String,
    instructions: Vec<HloInstruction>,
    parameter_numbers: HashSet<usize>,
    /// Computations attached so far, callees before callers; their ids are final.
    computations: Vec<HloComputation>,
    /// `Computation::uid` → where it was attached.
    attached: HashMap<u64, CompId>,
    instr_names: NameSet,
    comp_names: NameSet,
    /// Metadata given to every instruction added while it is set.
    metadata: Option<OpMetadata>,
}

/// Signatures of the computations attached to a builder.
struct Attached<'a>(&'a [HloComputation]);

impl CalledShapes for Attached<'_> {
    fn program_shape(&self, id: CompId) -> Result<ProgramShape> {
        self.0
            .get(id.index())
            .map(HloComputation::program_shape)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "computation #{} is not attached to this builder (attach it with HloBuilder::attach)",
                    id.0
                ))
            })
    }
    fn computation_name(&self, id: CompId) -> String {
        match self.0.get(id.index()) {
            Some(c) => format!("%{}", c.name),
            None => format!("computation #{}", id.0),
        }
    }
}

impl HloBuilder {
    /// A builder for a computation called `name`.
    pub fn new(name: impl Into<String>) -> HloBuilder {
        let mut comp_names = NameSet::default();
        let name = comp_names.claim(&name.into());
        HloBuilder {
            uid: next_uid(),
            name,
            instructions: Vec::new(),
            parameter_numbers: HashSet::new(),
            computations: Vec::new(),
            attached: HashMap::new(),
            instr_names: NameSet::default(),
            comp_names,
            metadata: None,
        }
    }

    /// The name of the computation being built.
    pub fn name(&self) -> &str {
        &self.name
    }

    fn index(&self, v: Value) -> Result<usize> {
        if v.builder != self.uid || v.id.index() >= self.instructions.len() {
            return Err(Error::invalid_argument(format!(
                "a value from another builder was given to builder {:?}",
                self.name
            )));
        }
        Ok(v.id.index())
    }

    /// The instruction behind a value.
    pub fn instruction(&self, v: Value) -> Result<&HloInstruction> {
        let i = self.index(v)?;
        Ok(&self.instructions[i])
    }

    /// Mutable access for attributes the methods do not set (sharding, frontend
    /// attributes, backend config...). A changed shape or operand list is caught
    /// when the module is built and verified.
    pub fn instruction_mut(&mut self, v: Value) -> Result<&mut HloInstruction> {
        let i = self.index(v)?;
        Ok(&mut self.instructions[i])
    }

    /// The shape of a value.
    pub fn shape(&self, v: Value) -> Result<&Shape> {
        Ok(&self.instruction(v)?.shape)
    }

    /// Metadata attached to every instruction added from now on (XLA's
    /// `SetOpMetadata`); `None` stops it.
    pub fn set_metadata(&mut self, metadata: Option<OpMetadata>) {
        self.metadata = metadata;
    }

    /// Attaches `comp` (and what it calls) to this builder, once; returns its id
    /// in the module being built. Methods taking a `&Computation` do this
    /// themselves; call it directly to build an [`Op`] for [`add_op`](Self::add_op).
    pub fn attach(&mut self, comp: &Computation) -> Result<CompId> {
        if let Some(&id) = self.attached.get(&comp.uid) {
            return Ok(id);
        }
        let base = self.computations.len() as u32;
        let sub = &comp.module;
        for c in &sub.computations {
            let mut c = c.clone();
            c.name = self.comp_names.claim(&c.name);
            for instr in &mut c.instructions {
                instr.name = self.instr_names.claim(&instr.name);
                instr.op.map_called(|id| CompId(base + id.0));
            }
            self.computations.push(c);
        }
        let id = CompId(base + sub.entry.0);
        self.attached.insert(comp.uid, id);
        Ok(id)
    }

    /// Adds an instruction for `op` on `operands`. `shape` is the shape to
    /// declare; the result shape is inferred from the operands (see
    /// [`infer_shape`], which reads `shape` only where HLO keeps part of the
    /// operation in it) and must be compatible with `shape`.
    pub fn add_op(&mut self, op: Op, operands: &[Value], shape: Shape) -> Result<Value> {
        let ids = operands
            .iter()
            .map(|&v| self.index(v).map(|i| InstrId(i as u32)))
            .collect::<Result<Vec<_>>>()?;
        let inferred = self.infer(&op, &ids, &shape)?;
        if !inferred.compatible(&shape) {
            return Err(Error::invalid_argument(format!(
                "{}: the requested shape {} differs from the inferred shape {inferred}",
                op.opcode(),
                shape.without_layout()
            )));
        }
        Ok(self.push(op, ids, shape))
    }

    /// Adds `op` with the inferred shape; `hint` is what `infer_shape` may read.
    fn add_hinted(&mut self, op: Op, operands: &[Value], hint: Shape) -> Result<Value> {
        let ids = operands
            .iter()
            .map(|&v| self.index(v).map(|i| InstrId(i as u32)))
            .collect::<Result<Vec<_>>>()?;
        let shape = self.infer(&op, &ids, &hint)?;
        Ok(self.push(op, ids, shape))
    }

    /// Adds an op whose result shape the operands determine.
    fn add_inferred(&mut self, op: Op, operands: &[Value]) -> Result<Value> {
        self.add_hinted(op, operands, Shape::Token)
    }

    fn infer(&self, op: &Op, ids: &[InstrId], hint: &Shape) -> Result<Shape> {
        let shapes: Vec<&Shape> = ids
            .iter()
            .map(|id| &self.instructions[id.index()].shape)
            .collect();
        infer_shape(op, &shapes, hint, &Attached(&self.computations))
    }

    fn push(&mut self, op: Op, operands: Vec<InstrId>, shape: Shape) -> Value {
        let name = self.instr_names.fresh(op.opcode().name());
        self.push_named(op, operands, shape, name)
    }

    fn push_named(&mut self, op: Op, operands: Vec<InstrId>, shape: Shape, name: String) -> Value {
        let id = InstrId(self.instructions.len() as u32);
        let mut instr = HloInstruction::new(name, shape, op, operands);
        instr.metadata = self.metadata.clone();
        self.instructions.push(instr);
        Value {
            builder: self.uid,
            id,
        }
    }

    /// Finishes the computation with `root` as its result and verifies it.
    pub fn build_computation(self, root: Value) -> Result<Computation> {
        let module = self.into_module(root)?;
        Ok(Computation {
            uid: next_uid(),
            module,
        })
    }

    /// Finishes the computation as the entry of a module named after the builder,
    /// verified.
    pub fn build(self, root: Value) -> Result<HloModule> {
        self.into_module(root)
    }

    fn into_module(mut self, root: Value) -> Result<HloModule> {
        let root = InstrId(self.index(root)? as u32);
        let mut numbers: Vec<usize> = self.parameter_numbers.iter().copied().collect();
        numbers.sort_unstable();
        if let Some((expected, &got)) = numbers.iter().enumerate().find(|(i, &n)| *i != n) {
            return Err(Error::invalid_argument(format!(
                "builder {:?}: parameter numbers must be 0..{} without gaps; {expected} is missing (found {got})",
                self.name,
                numbers.len()
            )));
        }
        let entry = HloComputation {
            name: self.name.clone(),
            instructions: std::mem::take(&mut self.instructions),
            root,
        };
        self.computations.push(entry);
        let module = HloModule {
            name: self.name,
            config: Default::default(),
            entry: CompId(self.computations.len() as u32 - 1),
            computations: self.computations,
            stack_frames: Default::default(),
        };
        verify_module(&module)?;
        Ok(module)
    }

    // ------------------------------------------------------------ leaves

    /// Parameter `number` of the computation, of the given shape, named `name`
    /// (suffixed if the name is taken).
    pub fn parameter(&mut self, number: usize, shape: Shape, name: &str) -> Result<Value> {
        if !self.parameter_numbers.insert(number) {
            return Err(Error::invalid_argument(format!(
                "parameter: builder {:?} already has a parameter {number}",
                self.name
            )));
        }
        let name = self.instr_names.claim(name);
        Ok(self.push_named(Op::Parameter { number }, Vec::new(), shape, name))
    }

    /// A constant holding `literal`.
    pub fn constant(&mut self, literal: Literal) -> Result<Value> {
        let shape = literal.shape().without_layout();
        let mut literal = literal;
        literal.set_layout(None);
        self.add_op(Op::Constant { literal }, &[], shape)
    }

    /// `iota`: `0, 1, 2, ...` along `dimension` of `shape`.
    pub fn iota(&mut self, shape: Shape, dimension: usize) -> Result<Value> {
        self.add_hinted(Op::Iota { dimension }, &[], shape)
    }

    pub fn replica_id(&mut self) -> Result<Value> {
        self.add_inferred(Op::ReplicaId, &[])
    }

    pub fn partition_id(&mut self) -> Result<Value> {
        self.add_inferred(Op::PartitionId, &[])
    }

    /// A token ordered after `tokens` (a fresh token when empty).
    pub fn after_all(&mut self, tokens: &[Value]) -> Result<Value> {
        self.add_inferred(Op::AfterAll, tokens)
    }

    // ------------------------------------------------------------ elementwise

    pub fn unary(&mut self, op: UnaryOp, x: Value) -> Result<Value> {
        self.add_inferred(Op::Unary(op), &[x])
    }

    pub fn binary(&mut self, op: BinaryOp, a: Value, b: Value) -> Result<Value> {
        self.add_inferred(Op::Binary(op), &[a, b])
    }

    /// `compare` with the comparison type left to the element type (XLA's
    /// default).
    pub fn compare(&mut self, a: Value, b: Value, direction: ComparisonDirection) -> Result<Value> {
        self.add_inferred(
            Op::Compare {
                direction,
                compare_type: None,
            },
            &[a, b],
        )
    }

    /// `compare` with an explicit comparison type (`TOTALORDER` for floats...).
    pub fn compare_with_type(
        &mut self,
        a: Value,
        b: Value,
        direction: ComparisonDirection,
        compare_type: ComparisonType,
    ) -> Result<Value> {
        self.add_inferred(
            Op::Compare {
                direction,
                compare_type: Some(compare_type),
            },
            &[a, b],
        )
    }

    /// `select(pred, on_true, on_false)`; `pred` may be a scalar.
    pub fn select(&mut self, pred: Value, on_true: Value, on_false: Value) -> Result<Value> {
        self.add_inferred(Op::Select, &[pred, on_true, on_false])
    }

    /// `clamp(min, x, max)`; the bounds may be scalars.
    pub fn clamp(&mut self, min: Value, x: Value, max: Value) -> Result<Value> {
        self.add_inferred(Op::Clamp, &[min, x, max])
    }

    /// Converts each element to `to` (XLA's `ConvertElementType`).
    pub fn convert(&mut self, x: Value, to: ElementType) -> Result<Value> {
        self.add_hinted(Op::Convert, &[x], Shape::scalar(to))
    }

    /// Reinterprets the bits as `to` (adding or removing a minor dimension when
    /// the widths differ).
    pub fn bitcast_convert(&mut self, x: Value, to: ElementType) -> Result<Value> {
        self.add_hinted(Op::BitcastConvert, &[x], Shape::scalar(to))
    }

    pub fn stochastic_convert(
        &mut self,
        x: Value,
        random: Value,
        to: ElementType,
    ) -> Result<Value> {
        self.add_hinted(Op::StochasticConvert, &[x, random], Shape::scalar(to))
    }

    pub fn reduce_precision(
        &mut self,
        x: Value,
        exponent_bits: u32,
        mantissa_bits: u32,
    ) -> Result<Value> {
        self.add_inferred(
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            },
            &[x],
        )
    }

    /// Applies the scalar computation `f` elementwise to `operands`.
    pub fn map(&mut self, operands: &[Value], f: &Computation) -> Result<Value> {
        let to_apply = self.attach(f)?;
        let rank = match operands.first() {
            Some(&v) => self.shape(v)?.rank(),
            None => 0,
        };
        self.add_inferred(
            Op::Map {
                dimensions: (0..rank).collect(),
                to_apply,
            },
            operands,
        )
    }

    // ------------------------------------------------------------ named elementwise ops

    unary_methods! {
        abs => Abs, cbrt => Cbrt, ceil => Ceil, clz => Clz, cos => Cos, erf => Erf,
        exp => Exp, expm1 => Expm1, floor => Floor, imag => Imag, is_finite => IsFinite,
        log => Log, log1p => Log1p, logistic => Logistic, neg => Negate, not => Not,
        popcnt => PopCount, real => Real, round_nearest_afz => RoundNearestAfz,
        round_nearest_even => RoundNearestEven, rsqrt => Rsqrt, sign => Sign, sin => Sin,
        sqrt => Sqrt, tan => Tan, tanh => Tanh,
    }

    binary_methods! {
        add => Add, and => And, atan2 => Atan2, complex => Complex, div => Divide,
        max => Maximum, min => Minimum, mul => Multiply, or => Or, pow => Power,
        rem => Remainder, shift_left => ShiftLeft,
        shift_right_arithmetic => ShiftRightArithmetic,
        shift_right_logical => ShiftRightLogical, sub => Subtract, xor => Xor,
    }

    compare_methods! {
        eq => Eq, ne => Ne, lt => Lt, le => Le, gt => Gt, ge => Ge,
    }

    // ------------------------------------------------------------ data movement

    /// XLA's `Broadcast`: new major dimensions `sizes` in front of `x`'s.
    pub fn broadcast(&mut self, x: Value, sizes: &[usize]) -> Result<Value> {
        let operand = self.shape(x)?.clone();
        let mut dims = sizes.to_vec();
        dims.extend_from_slice(operand.dims());
        let dimensions = (sizes.len()..dims.len()).collect();
        let ty = operand.element_type().unwrap_or(ElementType::F32);
        self.add_hinted(Op::Broadcast { dimensions }, &[x], Shape::array(ty, dims))
    }

    /// HLO `broadcast`: `x`'s dimension `i` becomes dimension
    /// `broadcast_dimensions[i]` of a result with dimensions `out_dims`.
    pub fn broadcast_in_dim(
        &mut self,
        x: Value,
        out_dims: &[usize],
        broadcast_dimensions: &[usize],
    ) -> Result<Value> {
        let ty = self.element_type_or_f32(x)?;
        self.add_hinted(
            Op::Broadcast {
                dimensions: broadcast_dimensions.to_vec(),
            },
            &[x],
            Shape::array(ty, out_dims.to_vec()),
        )
    }

    fn element_type_or_f32(&self, x: Value) -> Result<ElementType> {
        // A non-array operand is reported by shape inference; any type will do here.
        Ok(self.shape(x)?.element_type().unwrap_or(ElementType::F32))
    }

    pub fn reshape(&mut self, x: Value, dims: &[usize]) -> Result<Value> {
        let ty = self.element_type_or_f32(x)?;
        self.add_hinted(Op::Reshape, &[x], Shape::array(ty, dims.to_vec()))
    }

    /// `dynamic-reshape`: `bounds` give the result's maximum sizes, `sizes` (one
    /// `s32[]` per dimension) the runtime ones; `dynamic` marks which vary.
    pub fn dynamic_reshape(
        &mut self,
        x: Value,
        sizes: &[Value],
        bounds: &[usize],
        dynamic: &[bool],
    ) -> Result<Value> {
        let ty = self.element_type_or_f32(x)?;
        let mut shape = crate::shape::ArrayShape::new(ty, bounds.to_vec());
        if dynamic.iter().any(|&d| d) {
            shape.dynamic = dynamic.to_vec();
        }
        let mut operands = vec![x];
        operands.extend_from_slice(sizes);
        self.add_hinted(Op::DynamicReshape, &operands, Shape::Array(shape))
    }

    /// Result dimension `i` is `x`'s dimension `permutation[i]`.
    pub fn transpose(&mut self, x: Value, permutation: &[usize]) -> Result<Value> {
        self.add_inferred(
            Op::Transpose {
                dimensions: permutation.to_vec(),
            },
            &[x],
        )
    }

    /// `slice` with per-dimension `[start, limit)` and stride.
    pub fn slice(
        &mut self,
        x: Value,
        starts: &[usize],
        limits: &[usize],
        strides: &[usize],
    ) -> Result<Value> {
        if starts.len() != limits.len() || starts.len() != strides.len() {
            return Err(Error::invalid_argument(format!(
                "slice: {} starts, {} limits and {} strides given; they must be one per dimension",
                starts.len(),
                limits.len(),
                strides.len()
            )));
        }
        let slice = starts
            .iter()
            .zip(limits)
            .zip(strides)
            .map(|((&start, &limit), &stride)| SliceDim {
                start,
                limit,
                stride,
            })
            .collect();
        self.add_inferred(Op::Slice { slice }, &[x])
    }

    /// `dynamic-slice` at runtime `starts` (one integer scalar per dimension).
    pub fn dynamic_slice(&mut self, x: Value, starts: &[Value], sizes: &[usize]) -> Result<Value> {
        let mut operands = vec![x];
        operands.extend_from_slice(starts);
        self.add_inferred(
            Op::DynamicSlice {
                sizes: sizes.to_vec(),
            },
            &operands,
        )
    }

    pub fn dynamic_update_slice(
        &mut self,
        x: Value,
        update: Value,
        starts: &[Value],
    ) -> Result<Value> {
        let mut operands = vec![x, update];
        operands.extend_from_slice(starts);
        self.add_inferred(Op::DynamicUpdateSlice, &operands)
    }

    pub fn concatenate(&mut self, operands: &[Value], dimension: usize) -> Result<Value> {
        self.add_inferred(Op::Concatenate { dimension }, operands)
    }

    /// Pads `x` with the scalar `value` (edge padding may be negative).
    pub fn pad(&mut self, x: Value, value: Value, config: &[PadDim]) -> Result<Value> {
        self.add_inferred(
            Op::Pad {
                config: config.to_vec(),
            },
            &[x, value],
        )
    }

    pub fn reverse(&mut self, x: Value, dimensions: &[usize]) -> Result<Value> {
        self.add_inferred(
            Op::Reverse {
                dimensions: dimensions.to_vec(),
            },
            &[x],
        )
    }

    pub fn copy(&mut self, x: Value) -> Result<Value> {
        self.add_inferred(Op::Copy, &[x])
    }

    /// Reinterprets `x` as `shape` (same number of bytes).
    pub fn bitcast(&mut self, x: Value, shape: Shape) -> Result<Value> {
        self.add_hinted(Op::Bitcast, &[x], shape)
    }

    pub fn get_dimension_size(&mut self, x: Value, dimension: usize) -> Result<Value> {
        self.add_inferred(Op::GetDimensionSize { dimension }, &[x])
    }

    pub fn set_dimension_size(&mut self, x: Value, size: Value, dimension: usize) -> Result<Value> {
        self.add_inferred(Op::SetDimensionSize { dimension }, &[x, size])
    }

    pub fn gather(
        &mut self,
        operand: Value,
        start_indices: Value,
        dnums: GatherDimensionNumbers,
        slice_sizes: &[usize],
        indices_are_sorted: bool,
    ) -> Result<Value> {
        self.add_inferred(
            Op::Gather {
                dnums,
                slice_sizes: slice_sizes.to_vec(),
                indices_are_sorted,
            },
            &[operand, start_indices],
        )
    }

    /// `scatter(operands..., indices, updates...)` combining with `update`.
    #[allow(clippy::too_many_arguments)]
    pub fn scatter(
        &mut self,
        operands: &[Value],
        scatter_indices: Value,
        updates: &[Value],
        update: &Computation,
        dnums: ScatterDimensionNumbers,
        indices_are_sorted: bool,
        unique_indices: bool,
    ) -> Result<Value> {
        let to_apply = self.attach(update)?;
        let mut all = operands.to_vec();
        all.push(scatter_indices);
        all.extend_from_slice(updates);
        self.add_inferred(
            Op::Scatter {
                dnums,
                indices_are_sorted,
                unique_indices,
                to_apply,
            },
            &all,
        )
    }

    // ------------------------------------------------------------ linear algebra

    /// XLA's `Dot`: vector·vector, matrix·vector, vector·matrix or matrix·matrix
    /// (contracting `a`'s last dimension with `b`'s first).
    pub fn dot(&mut self, a: Value, b: Value) -> Result<Value> {
        let (ra, rb) = (self.shape(a)?.rank(), self.shape(b)?.rank());
        if !(1..=2).contains(&ra) || !(1..=2).contains(&rb) {
            return Err(Error::invalid_argument(format!(
                "dot: operands {} and {} must have rank 1 or 2 (use dot_general for others)",
                self.shape(a)?.without_layout(),
                self.shape(b)?.without_layout()
            )));
        }
        let dnums = DotDimensionNumbers {
            lhs_contracting_dims: vec![ra - 1],
            rhs_contracting_dims: vec![0],
            ..Default::default()
        };
        self.dot_general(a, b, dnums, None)
    }

    /// `dot` with explicit dimension numbers; `result_type` is XLA's
    /// `preferred_element_type` (`None`: the operands' type).
    pub fn dot_general(
        &mut self,
        a: Value,
        b: Value,
        dnums: DotDimensionNumbers,
        result_type: Option<ElementType>,
    ) -> Result<Value> {
        let op = Op::Dot {
            dnums,
            precision: Vec::new(),
            algorithm: None,
        };
        self.add_hinted(op, &[a, b], result_hint(result_type))
    }

    /// `convolution`; `result_type` as for [`dot_general`](Self::dot_general).
    #[allow(clippy::too_many_arguments)]
    pub fn convolution(
        &mut self,
        lhs: Value,
        rhs: Value,
        window: Window,
        dnums: ConvDimensionNumbers,
        feature_group_count: usize,
        batch_group_count: usize,
        result_type: Option<ElementType>,
    ) -> Result<Value> {
        let op = Op::Convolution {
            window,
            dnums,
            feature_group_count,
            batch_group_count,
            precision: Vec::new(),
        };
        self.add_hinted(op, &[lhs, rhs], result_hint(result_type))
    }

    pub fn fft(&mut self, x: Value, fft_type: FftType, fft_length: &[usize]) -> Result<Value> {
        self.add_inferred(
            Op::Fft {
                fft_type,
                fft_length: fft_length.to_vec(),
            },
            &[x],
        )
    }

    pub fn cholesky(&mut self, a: Value, lower: bool) -> Result<Value> {
        self.add_inferred(Op::Cholesky { lower }, &[a])
    }

    pub fn triangular_solve(
        &mut self,
        a: Value,
        b: Value,
        options: TriangularSolveOptions,
    ) -> Result<Value> {
        self.add_inferred(Op::TriangularSolve { options }, &[a, b])
    }

    // ------------------------------------------------------------ reductions

    /// Reduces `inputs` over `dimensions` with `reducer`, starting from `inits`
    /// (one per input); more than one input gives a tuple.
    pub fn reduce(
        &mut self,
        inputs: &[Value],
        inits: &[Value],
        reducer: &Computation,
        dimensions: &[usize],
    ) -> Result<Value> {
        let to_apply = self.attach(reducer)?;
        let mut all = inputs.to_vec();
        all.extend_from_slice(inits);
        self.add_inferred(
            Op::Reduce {
                dimensions: dimensions.to_vec(),
                to_apply,
            },
            &all,
        )
    }

    pub fn reduce_window(
        &mut self,
        inputs: &[Value],
        inits: &[Value],
        reducer: &Computation,
        window: Window,
    ) -> Result<Value> {
        let to_apply = self.attach(reducer)?;
        let mut all = inputs.to_vec();
        all.extend_from_slice(inits);
        self.add_inferred(Op::ReduceWindow { window, to_apply }, &all)
    }

    pub fn select_and_scatter(
        &mut self,
        operand: Value,
        select: &Computation,
        window: Window,
        source: Value,
        init: Value,
        scatter: &Computation,
    ) -> Result<Value> {
        let select = self.attach(select)?;
        let scatter = self.attach(scatter)?;
        self.add_inferred(
            Op::SelectAndScatter {
                window,
                select,
                scatter,
            },
            &[operand, source, init],
        )
    }

    /// Sorts `operands` together along `dimension` by `comparator`; more than
    /// one operand gives a tuple.
    pub fn sort(
        &mut self,
        operands: &[Value],
        comparator: &Computation,
        dimension: usize,
        is_stable: bool,
    ) -> Result<Value> {
        let comparator = self.attach(comparator)?;
        self.add_inferred(
            Op::Sort {
                dimension,
                is_stable,
                comparator,
            },
            operands,
        )
    }

    /// The `k` largest (or smallest) entries along the last dimension and their
    /// indices, as a `(values, s32 indices)` tuple.
    pub fn top_k(&mut self, x: Value, k: usize, largest: bool) -> Result<Value> {
        self.add_inferred(Op::TopK { k, largest }, &[x])
    }

    pub fn batch_norm_training(
        &mut self,
        x: Value,
        scale: Value,
        offset: Value,
        epsilon: f32,
        feature_index: usize,
    ) -> Result<Value> {
        self.add_inferred(
            Op::BatchNormTraining {
                epsilon,
                feature_index,
            },
            &[x, scale, offset],
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm_inference(
        &mut self,
        x: Value,
        scale: Value,
        offset: Value,
        mean: Value,
        variance: Value,
        epsilon: f32,
        feature_index: usize,
    ) -> Result<Value> {
        self.add_inferred(
            Op::BatchNormInference {
                epsilon,
                feature_index,
            },
            &[x, scale, offset, mean, variance],
        )
    }

    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm_grad(
        &mut self,
        x: Value,
        scale: Value,
        mean: Value,
        variance: Value,
        grad_output: Value,
        epsilon: f32,
        feature_index: usize,
    ) -> Result<Value> {
        self.add_inferred(
            Op::BatchNormGrad {
                epsilon,
                feature_index,
            },
            &[x, scale, mean, variance, grad_output],
        )
    }

    // ------------------------------------------------------------ structure and control

    pub fn tuple(&mut self, elements: &[Value]) -> Result<Value> {
        self.add_inferred(Op::Tuple, elements)
    }

    pub fn get_tuple_element(&mut self, tuple: Value, index: usize) -> Result<Value> {
        self.add_inferred(Op::GetTupleElement { index }, &[tuple])
    }

    /// `while` loop: runs `body` on the state while `condition` holds.
    pub fn while_loop(
        &mut self,
        condition: &Computation,
        body: &Computation,
        init: Value,
    ) -> Result<Value> {
        let condition = self.attach(condition)?;
        let body = self.attach(body)?;
        self.add_inferred(Op::While { condition, body }, &[init])
    }

    /// Runs `on_true(true_operand)` or `on_false(false_operand)` by `pred`.
    pub fn if_then_else(
        &mut self,
        pred: Value,
        true_operand: Value,
        on_true: &Computation,
        false_operand: Value,
        on_false: &Computation,
    ) -> Result<Value> {
        let t = self.attach(on_true)?;
        let f = self.attach(on_false)?;
        self.add_inferred(
            Op::Conditional {
                branches: vec![t, f],
            },
            &[pred, true_operand, false_operand],
        )
    }

    /// Runs `branches[index](operands[index])`; an out-of-range `s32` index
    /// runs the last branch.
    pub fn conditional(
        &mut self,
        index: Value,
        branches: &[&Computation],
        operands: &[Value],
    ) -> Result<Value> {
        let ids = branches
            .iter()
            .map(|c| self.attach(c))
            .collect::<Result<Vec<_>>>()?;
        let mut all = vec![index];
        all.extend_from_slice(operands);
        self.add_inferred(Op::Conditional { branches: ids }, &all)
    }

    pub fn call(&mut self, computation: &Computation, operands: &[Value]) -> Result<Value> {
        let to_apply = self.attach(computation)?;
        self.add_inferred(
            Op::Call {
                to_apply,
                is_composite: false,
            },
            operands,
        )
    }

    pub fn fusion(
        &mut self,
        kind: FusionKind,
        fused: &Computation,
        operands: &[Value],
    ) -> Result<Value> {
        let calls = self.attach(fused)?;
        self.add_inferred(Op::Fusion { kind, calls }, operands)
    }

    /// A `custom-call` to `target` with the original CPU calling convention
    /// (`void f(void* out, const void** in)`), producing `shape`; `opaque` reaches
    /// the target unchanged (it must be UTF-8, as HLO text stores it as a string).
    pub fn custom_call(
        &mut self,
        target: &str,
        operands: &[Value],
        shape: Shape,
        opaque: &[u8],
    ) -> Result<Value> {
        self.custom_call_with_api_version(
            target,
            operands,
            shape,
            opaque,
            CustomCallApiVersion::Original,
        )
    }

    /// [`custom_call`](Self::custom_call) with another calling convention
    /// (status-returning, unified, typed FFI).
    pub fn custom_call_with_api_version(
        &mut self,
        target: &str,
        operands: &[Value],
        shape: Shape,
        opaque: &[u8],
        api_version: CustomCallApiVersion,
    ) -> Result<Value> {
        let attrs = CustomCallAttrs::new(target, api_version);
        self.custom_call_with_attrs(attrs, operands, shape, opaque)
    }

    /// A `custom-call` with every attribute given (called computations must have
    /// been [`attach`](Self::attach)ed).
    pub fn custom_call_with_attrs(
        &mut self,
        attrs: CustomCallAttrs,
        operands: &[Value],
        shape: Shape,
        opaque: &[u8],
    ) -> Result<Value> {
        let opaque = std::str::from_utf8(opaque).map_err(|_| {
            Error::invalid_argument(format!(
                "custom-call {:?}: the opaque bytes must be UTF-8 to be stored in HLO text",
                attrs.target
            ))
        })?;
        let v = self.add_op(Op::CustomCall(Box::new(attrs)), operands, shape)?;
        if !opaque.is_empty() {
            self.instruction_mut(v)?.backend_config =
                Some(BackendConfig::String(opaque.to_string()));
        }
        Ok(v)
    }

    pub fn optimization_barrier(&mut self, x: Value) -> Result<Value> {
        self.add_inferred(Op::OptimizationBarrier, &[x])
    }

    /// `x`, ordered after `token`.
    pub fn add_dependency(&mut self, x: Value, token: Value) -> Result<Value> {
        self.add_inferred(Op::AddDependency, &[x, token])
    }

    // ------------------------------------------------------------ randomness

    /// Uniform values in `[low, high)` with the dimensions of `shape`.
    pub fn rng_uniform(&mut self, low: Value, high: Value, shape: Shape) -> Result<Value> {
        self.add_hinted(
            Op::Rng {
                distribution: RandomDistribution::Uniform,
            },
            &[low, high],
            shape,
        )
    }

    /// Normal values with mean `mu` and deviation `sigma`, dimensions of `shape`.
    pub fn rng_normal(&mut self, mu: Value, sigma: Value, shape: Shape) -> Result<Value> {
        self.add_hinted(
            Op::Rng {
                distribution: RandomDistribution::Normal,
            },
            &[mu, sigma],
            shape,
        )
    }

    /// `(new state, random bits of shape)` from `state`.
    pub fn rng_bit_generator(
        &mut self,
        algorithm: RandomAlgorithm,
        state: Value,
        shape: Shape,
    ) -> Result<Value> {
        let state_shape = self.shape(state)?.clone();
        self.add_hinted(
            Op::RngBitGenerator { algorithm },
            &[state],
            Shape::Tuple(vec![state_shape, shape]),
        )
    }

    // ------------------------------------------------------------ collectives

    fn groups(groups: &[Vec<usize>]) -> CollectiveAttrs {
        CollectiveAttrs {
            replica_groups: ReplicaGroups {
                groups: groups.to_vec(),
            },
            ..Default::default()
        }
    }

    pub fn all_reduce(
        &mut self,
        operands: &[Value],
        reducer: &Computation,
        replica_groups: &[Vec<usize>],
    ) -> Result<Value> {
        let to_apply = self.attach(reducer)?;
        self.add_inferred(
            Op::AllReduce {
                attrs: Self::groups(replica_groups),
                to_apply,
            },
            operands,
        )
    }

    /// Concatenates every participant's `x` along `dimension`. The number of
    /// participants is the size of a replica group, so groups must be given.
    pub fn all_gather(
        &mut self,
        x: Value,
        dimension: usize,
        replica_groups: &[Vec<usize>],
    ) -> Result<Value> {
        self.require_groups("all-gather", replica_groups)?;
        self.add_inferred(
            Op::AllGather {
                attrs: Self::groups(replica_groups),
                dimension,
            },
            &[x],
        )
    }

    pub fn reduce_scatter(
        &mut self,
        x: Value,
        reducer: &Computation,
        dimension: usize,
        replica_groups: &[Vec<usize>],
    ) -> Result<Value> {
        self.require_groups("reduce-scatter", replica_groups)?;
        let to_apply = self.attach(reducer)?;
        self.add_inferred(
            Op::ReduceScatter {
                attrs: Self::groups(replica_groups),
                dimension,
                to_apply,
            },
            &[x],
        )
    }

    fn require_groups(&self, op: &str, groups: &[Vec<usize>]) -> Result<()> {
        if groups.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{op}: replica groups must be given to know the number of participants"
            )));
        }
        Ok(())
    }

    /// Splits `x` along `dimension` among the group and reassembles the pieces
    /// received along the same dimension.
    pub fn all_to_all(
        &mut self,
        x: Value,
        dimension: usize,
        replica_groups: &[Vec<usize>],
    ) -> Result<Value> {
        self.add_inferred(
            Op::AllToAll {
                attrs: Self::groups(replica_groups),
                split_dimension: Some(dimension),
            },
            &[x],
        )
    }

    pub fn collective_permute(
        &mut self,
        x: Value,
        source_target_pairs: &[(usize, usize)],
    ) -> Result<Value> {
        self.add_inferred(
            Op::CollectivePermute {
                attrs: CollectiveAttrs::default(),
                source_target_pairs: source_target_pairs.to_vec(),
                slice_sizes: None,
            },
            &[x],
        )
    }

    pub fn collective_broadcast(
        &mut self,
        x: Value,
        replica_groups: &[Vec<usize>],
    ) -> Result<Value> {
        self.add_inferred(
            Op::CollectiveBroadcast {
                attrs: Self::groups(replica_groups),
            },
            &[x],
        )
    }

    // ------------------------------------------------------------ host communication

    /// Reads a value of `shape` from the host: `(value, token)`.
    pub fn infeed(&mut self, token: Value, shape: Shape, config: &str) -> Result<Value> {
        self.add_hinted(
            Op::Infeed {
                config: config.to_string(),
            },
            &[token],
            Shape::Tuple(vec![shape, Shape::Token]),
        )
    }

    /// Sends `x` to the host; returns a token.
    pub fn outfeed(&mut self, x: Value, token: Value, config: &str) -> Result<Value> {
        let shape = self.shape(x)?.without_layout();
        self.add_inferred(
            Op::Outfeed {
                config: config.to_string(),
                outfeed_shape: Some(shape),
            },
            &[x, token],
        )
    }

    /// Sends `x` on `channel_id`: the `(x, u32[] context, token)` tuple that
    /// [`send_done`](Self::send_done) completes.
    pub fn send(
        &mut self,
        x: Value,
        token: Value,
        channel_id: i64,
        is_host_transfer: bool,
    ) -> Result<Value> {
        self.add_inferred(
            Op::Send {
                channel_id: Some(channel_id),
                is_host_transfer,
            },
            &[x, token],
        )
    }

    pub fn send_done(
        &mut self,
        send: Value,
        channel_id: i64,
        is_host_transfer: bool,
    ) -> Result<Value> {
        self.add_inferred(
            Op::SendDone {
                channel_id: Some(channel_id),
                is_host_transfer,
            },
            &[send],
        )
    }

    /// Receives a value of `shape` on `channel_id`: the `(value, u32[] context,
    /// token)` tuple that [`recv_done`](Self::recv_done) completes.
    pub fn recv(
        &mut self,
        token: Value,
        shape: Shape,
        channel_id: i64,
        is_host_transfer: bool,
    ) -> Result<Value> {
        self.add_hinted(
            Op::Recv {
                channel_id: Some(channel_id),
                is_host_transfer,
            },
            &[token],
            Shape::Tuple(vec![shape]),
        )
    }

    /// `(value, token)` of a finished receive.
    pub fn recv_done(
        &mut self,
        recv: Value,
        channel_id: i64,
        is_host_transfer: bool,
    ) -> Result<Value> {
        self.add_inferred(
            Op::RecvDone {
                channel_id: Some(channel_id),
                is_host_transfer,
            },
            &[recv],
        )
    }

    // ------------------------------------------------------------ asynchrony

    /// Starts `computation(operands...)` asynchronously: `((operands...), result,
    /// context...)` with the given context shapes.
    pub fn async_start(
        &mut self,
        computation: &Computation,
        operands: &[Value],
        context: &[Shape],
    ) -> Result<Value> {
        let calls = self.attach(computation)?;
        let mut hint = vec![Shape::Token, Shape::Token];
        hint.extend_from_slice(context);
        self.add_hinted(
            Op::AsyncStart {
                calls,
                execution_thread: None,
            },
            operands,
            Shape::Tuple(hint),
        )
    }

    pub fn async_update(&mut self, started: Value) -> Result<Value> {
        self.add_inferred(Op::AsyncUpdate, &[started])
    }

    /// The result of an asynchronous computation.
    pub fn async_done(&mut self, started: Value) -> Result<Value> {
        self.add_inferred(Op::AsyncDone, &[started])
    }

    /// Starts copying `x`: `(destination, source, u32[] context)`.
    pub fn copy_start(&mut self, x: Value) -> Result<Value> {
        self.add_inferred(
            Op::CopyStart {
                cross_program_prefetch_index: None,
            },
            &[x],
        )
    }

    /// The destination of a finished copy.
    pub fn copy_done(&mut self, started: Value) -> Result<Value> {
        self.add_inferred(Op::CopyDone, &[started])
    }

    /// The random-number state advanced by `delta`: a `u64[2]`.
    pub fn rng_get_and_update_state(&mut self, delta: i64) -> Result<Value> {
        self.add_inferred(Op::RngGetAndUpdateState { delta }, &[])
    }
}

/// The declared-shape hint carrying a requested result type (only the element
/// type is read by dot and convolution).
fn result_hint(result_type: Option<ElementType>) -> Shape {
    match result_type {
        Some(t) => Shape::scalar(t),
        None => Shape::Token,
    }
}
