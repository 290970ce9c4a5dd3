//! Compiling a fused computation into a [`BlockProgram`]: a short list of
//! slice operations over *block registers*, run block after block.
//!
//! # Domains
//! The fusion's elements are laid out as a matrix of `rows × row_len` (the
//! *full* domain). Without reductions it is one row holding every output
//! element. A reduction fixes the split: a *row reduction* (its reduced
//! dimensions become the row, the kept ones the row index) produces one value
//! per row, which lives in the *outer* domain (`rows` elements) and may be
//! used by more outer-domain elementwise ops and brought back into the full
//! domain by a broadcast along the row (softmax's `x - max(x)`, layernorm's
//! `(x - mean) * rsqrt(var)`); a *column reduction* (reduced dimensions become
//! the row index, kept ones the row) accumulates rows into one vector, which
//! can only be a result of the fusion. A reduction whose dimensions do not come
//! in that order reads its operand through a transposed view. Values that do
//! not vary at all (a broadcast scalar, an expression of those) are
//! *uniform*: computed once per task and splatted into a register.
//!
//! # Building
//! Instructions are turned into expressions bottom-up. Leaves (parameters,
//! constants, iotas) are read through [`View`]s; a data movement op is pushed
//! down through elementwise ops to the leaves, changing their views (so
//! `transpose(exp(p))` becomes `exp` of a transposed read of `p`). Expressions
//! are hash-consed, so the same value reached twice is computed once.
//!
//! # Scheduling
//! From the outputs, each expression needed in a domain becomes a register
//! *slot* and one [`Step`]; registers are reused once their last reader has
//! run. A block either holds whole rows (so a row's reduction is complete
//! before a later step of the same block broadcasts it back) or, when rows are
//! longer than a block, a chunk of one row (then row reductions produce one
//! partial value per chunk, combined afterwards, and nothing in the full
//! domain may depend on a reduction).

use super::graph::{FusedGraph, Operand};
use super::view::{Movement, View};
use crate::elementwise_ops as ops;
use crate::fma;
use crate::kernels::scalar_program::{binary_reducer, ScalarProgram};
use crate::thunk::ConstantBytes;
use platform_api::hlo::{BinaryOp, ComparisonDirection, ComparisonType, Op, UnaryOp};
use platform_api::semantics::contraction::Contraction;
use platform_api::{ElementType, Error, Result, Shape};
use std::collections::HashMap;
use std::sync::Arc;

/// Elements of a full-domain register (a block) when rows are short.
pub const BLOCK: usize = 4096;
/// [`BLOCK`] for fusions without reductions. Their steps are one pass each
/// over the block, mostly cheap ones (an add, a negate) whose cost is moving
/// the registers: with 4096 elements a handful of live f32 registers is past
/// L1 and every pass streams from L2 (about 0.12 ns/element for an add, 0.03
/// from L1: `bench/l1_l2_add.c`). 1024 keeps them in L1 and still amortises
/// each step's call: `elementwise_4m` 4.58 -> 4.30 ms on two cores, an
/// L2-resident 256x512 copy 0.215 -> 0.193 ms (`bench/ab_hlorun.sh`).
pub const ELEMENTWISE_BLOCK: usize = 1024;
/// Fewest compute steps per block for which a fusion fetches the next
/// block's memory ahead.
pub const FETCH_AHEAD_MIN_OPS: usize = 4;
/// Longest row a block may hold whole (when a reduction is broadcast back).
pub const MAX_ROW: usize = 1 << 16;
/// Element-steps of work per parallel task.
const TASK_WORK: usize = 1 << 18;
/// Most tasks one fusion is split into (fixed, so results do not depend on
/// the number of threads).
const MAX_TASKS: usize = 64;
/// Most expressions one fusion may expand to (pushing data movement down can
/// duplicate subexpressions).
const MAX_EXPRS: usize = 4096;
/// Largest constant expression (elements) evaluated at compile time.
const FOLD_MAX: usize = 1 << 20;

pub type ExprId = usize;

/// Where a leaf's elements come from.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Source {
    Param(usize),
    /// Index into [`BlockProgram::constants`].
    Constant(usize),
    /// The read offsets themselves (iota).
    Index,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Leaf {
    pub source: Source,
    pub view: View,
}

/// An elementwise operation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ElemOp {
    Unary(UnaryOp),
    Binary(BinaryOp),
    Compare(ComparisonDirection, Option<ComparisonType>),
    Select,
    Clamp,
    Convert,
    /// A copy of same-width elements (`bitcast-convert` between equal widths).
    Reinterpret,
    ReducePrecision(u32, u32),
    /// XLA CPU's contraction of a multiply into an add/subtract (the Host's
    /// internal `custom-call`, decoded by `compiler::contraction`).
    FusedMultiplyAdd(Contraction),
}

// By hand: `Contraction` (a shared semantics type) does not implement `Hash`.
impl std::hash::Hash for ElemOp {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        std::mem::discriminant(self).hash(h);
        match self {
            ElemOp::Unary(op) => op.hash(h),
            ElemOp::Binary(op) => op.hash(h),
            ElemOp::Compare(d, t) => (d, t).hash(h),
            ElemOp::ReducePrecision(e, m) => (e, m).hash(h),
            ElemOp::FusedMultiplyAdd(how) => (*how as u8).hash(h),
            ElemOp::Select | ElemOp::Clamp | ElemOp::Convert | ElemOp::Reinterpret => {}
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Kind {
    Leaf(Leaf),
    Op(ElemOp, Vec<ExprId>),
    RowResult { reduce: usize, index: usize },
    ColResult { reduce: usize, index: usize },
    RowBroadcast(ExprId),
}

/// Which domain an expression must be evaluated in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
enum Dom {
    /// Leaves and elementwise ops of them: whatever domain reads them.
    Any,
    Full,
    Outer,
    /// A column reduction's result (and elementwise ops of it): computed
    /// after every row, one value per column.
    Col,
}

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Key {
    kind: Kind,
    ty: ElementType,
    count: usize,
}

struct Expr {
    key: Key,
    dom: Dom,
    uniform: bool,
    /// Whether a parameter (or a reduction) feeds it: otherwise it is a
    /// constant the compiler can evaluate.
    variable: bool,
    /// The graph node whose operation this is.
    origin: Option<usize>,
}

/// A reduction's combiner.
pub enum Reducer {
    /// One binary op of the two parameters: typed folds.
    Simple {
        op: BinaryOp,
        fold: ops::Fold,
        accumulate: ops::Kernel,
    },
    /// Anything else (variadic argmax, ...): the scalar evaluator, one element
    /// at a time.
    Program(Arc<ScalarProgram>),
}

struct ReduceSpec {
    col: bool,
    operands: Vec<ExprId>,
    inits: Vec<Leaf>,
    types: Vec<ElementType>,
    to_apply: platform_api::hlo::CompId,
}

enum Value {
    One(ExprId),
    Many(Vec<ExprId>),
}

struct Builder<'g, 'a> {
    graph: &'g FusedGraph<'a>,
    exprs: Vec<Expr>,
    intern: HashMap<Key, ExprId>,
    reduces: Vec<ReduceSpec>,
    domain: Option<(usize, usize)>,
    constants: Vec<Arc<ConstantBytes>>,
    constant_counts: Vec<usize>,
    values: Vec<Option<Value>>,
    current: Option<usize>,
    /// Constant expressions already evaluated: their constant leaves.
    folded: HashMap<ExprId, ExprId>,
    /// Treat every reduction as a row reduction (reading column reductions
    /// through a transposed view), so its result can feed other operations.
    rows_only: bool,
}

fn array_dims(shape: &Shape, what: &str) -> Result<(ElementType, Vec<usize>)> {
    match shape {
        Shape::Array(a) => Ok((a.element_type, a.dims.clone())),
        _ => Err(Error::unimplemented(format!(
            "{what} has shape {shape}; fused values must be arrays"
        ))),
    }
}

impl<'g, 'a> Builder<'g, 'a> {
    fn unsupported(&self, what: impl std::fmt::Display) -> Error {
        let at = self
            .current
            .and_then(|i| self.graph.nodes.get(i))
            .map(|n| format!(" (%{})", n.instr.name))
            .unwrap_or_default();
        Error::unimplemented(format!("{}: {what}{at}", self.graph.name))
    }

    fn add(
        &mut self,
        kind: Kind,
        ty: ElementType,
        count: usize,
        dom: Dom,
        uniform: bool,
    ) -> Result<ExprId> {
        let key = Key { kind, ty, count };
        if let Some(&e) = self.intern.get(&key) {
            return Ok(e);
        }
        if self.exprs.len() >= MAX_EXPRS {
            return Err(self.unsupported("the fusion expands to too many expressions"));
        }
        let variable = match &key.kind {
            Kind::Leaf(l) => matches!(l.source, Source::Param(_)),
            Kind::Op(_, children) => children.iter().any(|&c| self.exprs[c].variable),
            _ => true,
        };
        self.intern.insert(key.clone(), self.exprs.len());
        self.exprs.push(Expr {
            key,
            dom,
            uniform,
            variable,
            origin: self.current,
        });
        Ok(self.exprs.len() - 1)
    }

    fn source_count(&self, source: &Source) -> Option<usize> {
        match source {
            Source::Param(k) => self.graph.params.get(*k).map(|s| s.element_count()),
            Source::Constant(c) => self.constant_counts.get(*c).copied(),
            Source::Index => None,
        }
    }

    /// A leaf read through `view` at `count` positions (checked to stay inside
    /// the source).
    fn leaf(
        &mut self,
        source: Source,
        view: View,
        ty: ElementType,
        count: usize,
    ) -> Result<ExprId> {
        if let (Some(n), Some((lo, hi))) = (self.source_count(&source), view.offset_range(count)) {
            if lo < 0 || hi >= n as isize {
                return Err(Error::internal(format!(
                    "{}: a fused read of {source:?} reaches offsets {lo}..={hi} of {n}",
                    self.graph.name
                )));
            }
        }
        // (An empty read is not uniform: there is no element to read.)
        let uniform = count == 1 || (count > 1 && view.splat_offset().is_some());
        self.add(
            Kind::Leaf(Leaf { source, view }),
            ty,
            count,
            Dom::Any,
            uniform,
        )
    }

    fn ty(&self, e: ExprId) -> ElementType {
        self.exprs[e].key.ty
    }

    fn count(&self, e: ExprId) -> usize {
        self.exprs[e].key.count
    }

    fn operand(&mut self, op: Operand) -> Result<ExprId> {
        match op {
            Operand::Node(n) => match self.values.get(n) {
                Some(Some(Value::One(e))) => Ok(*e),
                Some(Some(Value::Many(_))) => Err(self.unsupported("a tuple used as an array")),
                _ => Err(Error::internal("fused operand used before it is defined")),
            },
            Operand::Param(k) => {
                let shape = self
                    .graph
                    .params
                    .get(k)
                    .ok_or_else(|| Error::internal("fused parameter out of range"))?;
                let (ty, dims) = array_dims(shape, &format!("parameter {k}"))?;
                let count = dims.iter().product();
                self.leaf(Source::Param(k), View::identity(), ty, count)
            }
        }
    }

    /// `movement(e)` where `e` is read as an array of `dims`; `count` is the
    /// result's element count.
    fn movement(
        &mut self,
        e: ExprId,
        dims: &[usize],
        movement: &Movement<'_>,
        count: usize,
        memo: &mut HashMap<ExprId, ExprId>,
    ) -> Result<ExprId> {
        if let Some(&r) = memo.get(&e) {
            return Ok(r);
        }
        let original = e;
        // A constant expression (iotas, constants) about to be moved, e.g. a
        // causal mask broadcast over heads: evaluate it once, here, and read
        // the result through views instead of recomputing it per element.
        let e = match self.fold_constant(e)? {
            Some(c) => c,
            None => e,
        };
        let key = self.exprs[e].key.clone();
        let dom = self.exprs[e].dom;
        let result = match (&key.kind, dom) {
            (Kind::Leaf(leaf), _) => {
                let view = leaf.view.apply(dims, movement)?;
                self.leaf(leaf.source.clone(), view, key.ty, count)?
            }
            (Kind::Op(op, children), Dom::Any) => {
                let saved = self.current;
                self.current = self.exprs[e].origin;
                let mut moved = Vec::with_capacity(children.len());
                for &c in children {
                    moved.push(self.movement(c, dims, movement, count, memo)?);
                }
                let r = self.op(op.clone(), moved, key.ty, count);
                self.current = saved;
                r?
            }
            _ => {
                // A value built on a reduction is computed once where it
                // lives: it can only be renamed, or broadcast back along the
                // rows it was reduced from.
                let probe = View::identity().apply(dims, movement)?;
                if probe == View::identity() && count == key.count {
                    e
                } else if let (Movement::Broadcast { .. }, Some((rows, row_len)), Dom::Outer) =
                    (movement, self.domain, dom)
                {
                    if probe == View::rows(rows, row_len) && count == rows * row_len {
                        self.add(Kind::RowBroadcast(e), key.ty, count, Dom::Full, false)?
                    } else {
                        return Err(self.unsupported(
                            "a reduction result is broadcast other than along the reduced row",
                        ));
                    }
                } else {
                    return Err(
                        self.unsupported("data movement of a value computed from a reduction")
                    );
                }
            }
        };
        memo.insert(original, result);
        Ok(result)
    }

    /// The constant leaf holding the values of `e`, when `e` is an
    /// operation of constants and iotas only (and not too large).
    fn fold_constant(&mut self, e: ExprId) -> Result<Option<ExprId>> {
        let expr = &self.exprs[e];
        if !matches!(expr.key.kind, Kind::Op(..))
            || expr.variable
            || expr.uniform
            || expr.dom != Dom::Any
            || expr.key.count > FOLD_MAX
        {
            return Ok(None);
        }
        if let Some(&c) = self.folded.get(&e) {
            return Ok(Some(c));
        }
        let (ty, count) = (expr.key.ty, expr.key.count);
        let mut memo = HashMap::new();
        let words = self.evaluate(e, &mut memo)?;
        let bytes: &[u8] = bytemuck::cast_slice(&words);
        self.constants.push(Arc::new(ConstantBytes::new(
            &bytes[..count * ty.byte_size()],
        )));
        self.constant_counts.push(count);
        let c = self.leaf(
            Source::Constant(self.constants.len() - 1),
            View::identity(),
            ty,
            count,
        )?;
        self.folded.insert(e, c);
        Ok(Some(c))
    }

    /// Every element of constant expression `e` (8-byte aligned words).
    fn evaluate(&self, e: ExprId, memo: &mut HashMap<ExprId, Vec<u64>>) -> Result<Vec<u64>> {
        if let Some(v) = memo.get(&e) {
            return Ok(v.clone());
        }
        let expr = &self.exprs[e];
        let (ty, count) = (expr.key.ty, expr.key.count);
        let w = ty.byte_size();
        let mut out = vec![0u64; (count * w).div_ceil(8).max(1)];
        let dst = out.as_mut_ptr().cast::<u8>();
        match &expr.key.kind {
            Kind::Leaf(leaf) => match leaf.source {
                Source::Constant(c) => {
                    let base = self.constants[c].as_bytes().as_ptr();
                    leaf.view.for_each_run(0, count, |pos, off, len, stride| {
                        // SAFETY: the leaf's offsets were checked against the
                        // constant when the leaf was made; `out` holds `count`.
                        unsafe { super::view::gather(w, base, off, len, stride, dst.add(pos * w)) }
                    });
                }
                Source::Index => {
                    let index = ops::index_gen(ty);
                    leaf.view.for_each_run(0, count, |pos, off, len, stride| {
                        // SAFETY: `out` holds `count` elements.
                        unsafe { index.call(off, stride, len, dst.add(pos * w)) }
                    });
                }
                Source::Param(_) => {
                    return Err(Error::internal("evaluating a parameter at compile time"))
                }
            },
            Kind::Op(op, children) => {
                let mut values = Vec::with_capacity(children.len());
                let mut types = Vec::with_capacity(children.len());
                for &c in children {
                    values.push(self.evaluate(c, memo)?);
                    types.push(self.ty(c));
                }
                let kernel = kernel_for(op, &types, ty)?;
                let args: Vec<ops::Arg> = values
                    .iter()
                    .map(|v| ops::Arg::Ptr(v.as_ptr().cast()))
                    .collect();
                // SAFETY: every operand holds `count` elements, `out` too.
                unsafe { kernel.call(&args, dst, count) };
            }
            _ => return Err(Error::internal("evaluating a reduction at compile time")),
        }
        memo.insert(e, out.clone());
        Ok(out)
    }

    fn op(
        &mut self,
        op: ElemOp,
        children: Vec<ExprId>,
        ty: ElementType,
        count: usize,
    ) -> Result<ExprId> {
        let mut dom = Dom::Any;
        let mut uniform = true;
        for &c in &children {
            let cd = self.exprs[c].dom;
            uniform &= self.exprs[c].uniform;
            dom = match (dom, cd) {
                (d, Dom::Any) => d,
                (Dom::Any, d) => d,
                (a, b) if a == b => a,
                _ => {
                    return Err(self.unsupported("an operation mixes row values and row reductions"))
                }
            };
            if self.count(c) != count {
                return Err(Error::internal(format!(
                    "{}: fused operand of {} elements for a result of {count}",
                    self.graph.name,
                    self.count(c)
                )));
            }
        }
        self.add(
            Kind::Op(op, children),
            ty,
            count,
            dom,
            uniform && dom == Dom::Any,
        )
    }

    /// Operand `k` of node `i`, broadcast to `dims` when it is a scalar and
    /// the result is not (select's predicate, clamp's bounds).
    fn operand_as(&mut self, op: Operand, dims: &[usize]) -> Result<ExprId> {
        let e = self.operand(op)?;
        let count: usize = dims.iter().product();
        if self.count(e) == 1 && count != 1 {
            let mut memo = HashMap::new();
            return self.movement(
                e,
                &[],
                &Movement::Broadcast {
                    result: dims,
                    dims: &[],
                },
                count,
                &mut memo,
            );
        }
        Ok(e)
    }

    fn node(&mut self, i: usize) -> Result<Value> {
        let node = &self.graph.nodes[i];
        let instr = node.instr;
        let ops = node.operands.clone();
        let operand_shape = |k: usize| -> Result<(ElementType, Vec<usize>)> {
            match ops.get(k) {
                Some(Operand::Node(n)) => {
                    array_dims(&self.graph.nodes[*n].instr.shape, "an operand")
                }
                Some(Operand::Param(p)) => array_dims(
                    self.graph
                        .params
                        .get(*p)
                        .ok_or_else(|| Error::internal("param"))?,
                    "a parameter",
                ),
                None => Err(Error::invalid_argument(format!(
                    "%{}: missing operand {k}",
                    instr.name
                ))),
            }
        };
        if let Op::Reduce {
            dimensions,
            to_apply,
        } = &instr.op
        {
            return self.reduce(i, dimensions, *to_apply);
        }
        if let Op::GetTupleElement { index } = &instr.op {
            return match ops.first() {
                Some(Operand::Node(n)) => match &self.values[*n] {
                    Some(Value::Many(v)) => {
                        v.get(*index).map(|&e| Value::One(e)).ok_or_else(|| {
                            Error::invalid_argument(format!("%{}: index out of range", instr.name))
                        })
                    }
                    _ => Err(self.unsupported("get-tuple-element of a non-tuple")),
                },
                _ => Err(self.unsupported("get-tuple-element of a parameter")),
            };
        }
        let (ty, dims) = array_dims(&instr.shape, &format!("%{}", instr.name))?;
        let count: usize = dims.iter().product();
        let one = |r: Result<ExprId>| r.map(Value::One);
        let mut memo = HashMap::new();
        match &instr.op {
            Op::Constant { literal } => {
                let bytes = literal.bytes()?;
                if bytes.len() != count * ty.byte_size() {
                    return Err(Error::invalid_argument(format!(
                        "%{}: constant of the wrong size",
                        instr.name
                    )));
                }
                self.constants.push(Arc::new(ConstantBytes::new(bytes)));
                self.constant_counts.push(count);
                let c = self.constants.len() - 1;
                one(self.leaf(Source::Constant(c), View::identity(), ty, count))
            }
            Op::Iota { dimension } => {
                if *dimension >= dims.len() {
                    return Err(Error::invalid_argument(format!(
                        "%{}: iota dimension",
                        instr.name
                    )));
                }
                one(self.leaf(Source::Index, View::iota(&dims, *dimension), ty, count))
            }
            Op::Reshape | Op::Copy => {
                let e = self.operand(ops[0])?;
                if self.count(e) != count {
                    return Err(Error::invalid_argument(format!(
                        "%{}: reshape changes the element count",
                        instr.name
                    )));
                }
                Ok(Value::One(e))
            }
            Op::Broadcast { dimensions } => {
                let (_, od) = operand_shape(0)?;
                let e = self.operand(ops[0])?;
                one(self.movement(
                    e,
                    &od,
                    &Movement::Broadcast {
                        result: &dims,
                        dims: dimensions,
                    },
                    count,
                    &mut memo,
                ))
            }
            Op::Transpose { dimensions } => {
                let (_, od) = operand_shape(0)?;
                let e = self.operand(ops[0])?;
                one(self.movement(e, &od, &Movement::Transpose(dimensions), count, &mut memo))
            }
            Op::Slice { slice } => {
                let (_, od) = operand_shape(0)?;
                let e = self.operand(ops[0])?;
                let s: Vec<(usize, usize, usize)> =
                    slice.iter().map(|d| (d.start, d.limit, d.stride)).collect();
                one(self.movement(e, &od, &Movement::Slice(&s), count, &mut memo))
            }
            Op::Reverse { dimensions } => {
                let (_, od) = operand_shape(0)?;
                let e = self.operand(ops[0])?;
                one(self.movement(e, &od, &Movement::Reverse(dimensions), count, &mut memo))
            }
            Op::Unary(u) => {
                let a = self.operand(ops[0])?;
                one(self.op(ElemOp::Unary(*u), vec![a], ty, count))
            }
            Op::Binary(b) => {
                let (x, y) = (
                    self.operand(ops[0])?,
                    self.operand(*ops.get(1).ok_or_else(|| self.unsupported("arity"))?)?,
                );
                one(self.op(ElemOp::Binary(*b), vec![x, y], ty, count))
            }
            Op::Compare {
                direction,
                compare_type,
            } => {
                let (x, y) = (
                    self.operand(ops[0])?,
                    self.operand(*ops.get(1).ok_or_else(|| self.unsupported("arity"))?)?,
                );
                one(self.op(
                    ElemOp::Compare(*direction, *compare_type),
                    vec![x, y],
                    ty,
                    count,
                ))
            }
            Op::Select | Op::Clamp => {
                if ops.len() != 3 {
                    return Err(self.unsupported("arity"));
                }
                let (a, b, c) = (ops[0], ops[1], ops[2]);
                let args = vec![
                    self.operand_as(a, &dims)?,
                    self.operand_as(b, &dims)?,
                    self.operand_as(c, &dims)?,
                ];
                let op = if matches!(instr.op, Op::Select) {
                    ElemOp::Select
                } else {
                    ElemOp::Clamp
                };
                one(self.op(op, args, ty, count))
            }
            Op::Convert => {
                let a = self.operand(ops[0])?;
                if self.ty(a) == ty {
                    return Ok(Value::One(a));
                }
                one(self.op(ElemOp::Convert, vec![a], ty, count))
            }
            Op::BitcastConvert => {
                let a = self.operand(ops[0])?;
                if self.ty(a).byte_size() != ty.byte_size() || self.count(a) != count {
                    return Err(self.unsupported("bitcast-convert between element widths"));
                }
                if self.ty(a) == ty {
                    return Ok(Value::One(a));
                }
                one(self.op(ElemOp::Reinterpret, vec![a], ty, count))
            }
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            } => {
                let a = self.operand(ops[0])?;
                one(self.op(
                    ElemOp::ReducePrecision(*exponent_bits, *mantissa_bits),
                    vec![a],
                    ty,
                    count,
                ))
            }
            Op::CustomCall(_) if fma::is_fused_multiply_add(instr) => {
                let how = fma::fused_multiply_add(instr)?
                    .ok_or_else(|| self.unsupported("a fused multiply-add"))?;
                if ops.len() != 3 {
                    return Err(self.unsupported("arity"));
                }
                let args = vec![
                    self.operand(ops[0])?,
                    self.operand(ops[1])?,
                    self.operand(ops[2])?,
                ];
                one(self.op(ElemOp::FusedMultiplyAdd(how), args, ty, count))
            }
            other => Err(self.unsupported(format!(
                "{} inside a block-evaluated fusion",
                other.opcode()
            ))),
        }
    }

    fn reduce(
        &mut self,
        i: usize,
        dimensions: &[usize],
        to_apply: platform_api::hlo::CompId,
    ) -> Result<Value> {
        let node = &self.graph.nodes[i];
        let instr = node.instr;
        let ops = node.operands.clone();
        if ops.is_empty() || !ops.len().is_multiple_of(2) {
            return Err(Error::invalid_argument(format!(
                "%{}: reduce needs inputs and inits",
                instr.name
            )));
        }
        let k = ops.len() / 2;
        let in_shape = match ops[0] {
            Operand::Node(n) => self.graph.nodes[n].instr.shape.clone(),
            Operand::Param(p) => self
                .graph
                .params
                .get(p)
                .cloned()
                .ok_or_else(|| Error::internal("param"))?,
        };
        let (_, in_dims) = array_dims(&in_shape, "a reduce input")?;
        if dimensions.iter().any(|&d| d >= in_dims.len()) {
            return Err(Error::invalid_argument(format!(
                "%{}: reduce dimension out of range",
                instr.name
            )));
        }
        let reduced = |d: usize| dimensions.contains(&d);
        let kept_dims: Vec<usize> = (0..in_dims.len()).filter(|&d| !reduced(d)).collect();
        let red_dims: Vec<usize> = (0..in_dims.len()).filter(|&d| reduced(d)).collect();
        let kept: usize = kept_dims.iter().map(|&d| in_dims[d]).product();
        let red: usize = red_dims.iter().map(|&d| in_dims[d]).product();
        let mut inputs = Vec::with_capacity(k);
        let mut inits = Vec::with_capacity(k);
        let mut types = Vec::with_capacity(k);
        for j in 0..k {
            let x = self.operand(ops[j])?;
            if self.count(x) != kept * red {
                return Err(Error::invalid_argument(format!(
                    "%{}: reduce inputs differ in size",
                    instr.name
                )));
            }
            inputs.push(x);
            let init = self.operand(ops[k + j])?;
            if self.count(init) != 1 {
                return Err(Error::invalid_argument(format!(
                    "%{}: a reduce init must be a scalar",
                    instr.name
                )));
            }
            match &self.exprs[init].key.kind {
                Kind::Leaf(l) => inits.push(l.clone()),
                _ => return Err(self.unsupported("a computed reduce init")),
            }
            types.push(self.ty(init));
        }
        let simple = if k == 1 {
            binary_reducer(self.graph.module, to_apply)
        } else {
            None
        };
        let simple_op = match simple {
            Some((op, ty)) if ty == types[0] && self.ty(inputs[0]) == ty => Some(op),
            _ => None,
        };
        // Reducing only size-1 dimensions: `reducer(init, x)` elementwise.
        if red == 1 {
            if let Some(op) = simple_op {
                let init = self.operand(ops[1])?;
                let count = kept;
                let mut memo = HashMap::new();
                let splat = self.movement(
                    init,
                    &[],
                    &Movement::Broadcast {
                        result: &[count],
                        dims: &[],
                    },
                    count,
                    &mut memo,
                )?;
                return Ok(Value::One(self.op(
                    ElemOp::Binary(op),
                    vec![splat, inputs[0]],
                    types[0],
                    count,
                )?));
            }
        }
        // Does the operand's order already put reduced dims last (row) or
        // first (column)? Size-1 dimensions do not count.
        let sig: Vec<bool> = (0..in_dims.len())
            .filter(|&d| in_dims[d] != 1)
            .map(reduced)
            .collect();
        let natural_row = sig.windows(2).all(|w| !w[0] || w[1]);
        let natural_col = sig.windows(2).all(|w| w[0] || !w[1]);
        let col = match self.domain {
            _ if self.rows_only => {
                if let Some((rows, row_len)) = self.domain {
                    if kept != rows || red != row_len {
                        return Err(self.unsupported("reductions of different shapes"));
                    }
                }
                false
            }
            None => natural_col && !natural_row,
            Some((rows, row_len)) => {
                if natural_row && kept == rows && red == row_len {
                    false
                } else if natural_col && red == rows && kept == row_len {
                    true
                } else if kept == rows && red == row_len {
                    false
                } else if red == rows && kept == row_len {
                    true
                } else {
                    return Err(self.unsupported(format!(
                        "a reduction of {kept}×{red} elements in a fusion whose rows are {rows}×{row_len}"
                    )));
                }
            }
        };
        let (rows, row_len) = if col { (red, kept) } else { (kept, red) };
        self.domain = Some((rows, row_len));
        let perm: Vec<usize> = if col {
            red_dims.iter().chain(&kept_dims).copied().collect()
        } else {
            kept_dims.iter().chain(&red_dims).copied().collect()
        };
        let identity = perm.iter().enumerate().all(|(a, &b)| a == b)
            || View::identity().apply(&in_dims, &Movement::Transpose(&perm))? == View::identity();
        if !identity {
            for x in inputs.iter_mut() {
                if self.exprs[*x].dom != Dom::Any {
                    return Err(self.unsupported(
                        "a reduction over a transposed value that depends on a reduction",
                    ));
                }
                let mut memo = HashMap::new();
                *x = self.movement(
                    *x,
                    &in_dims,
                    &Movement::Transpose(&perm),
                    kept * red,
                    &mut memo,
                )?;
            }
        }
        for &x in &inputs {
            match self.exprs[x].dom {
                Dom::Any | Dom::Full => {}
                _ => return Err(self.unsupported("a reduction of a reduction's result")),
            }
        }
        let r = self.reduces.len();
        self.reduces.push(ReduceSpec {
            col,
            operands: inputs,
            inits,
            types: types.clone(),
            to_apply,
        });
        let results = (0..k)
            .map(|j| {
                let (kind, dom) = if col {
                    (
                        Kind::ColResult {
                            reduce: r,
                            index: j,
                        },
                        Dom::Col,
                    )
                } else {
                    (
                        Kind::RowResult {
                            reduce: r,
                            index: j,
                        },
                        Dom::Outer,
                    )
                };
                self.add(kind, types[j], if col { row_len } else { rows }, dom, false)
            })
            .collect::<Result<Vec<_>>>()?;
        // The result's shape must list the kept dimensions (count check).
        let out_count: usize = match &instr.shape {
            Shape::Array(a) => a.element_count(),
            Shape::Tuple(t) => t.first().map(|s| s.element_count()).unwrap_or(0),
            _ => 0,
        };
        if out_count != kept {
            return Err(Error::invalid_argument(format!(
                "%{}: reduce result size",
                instr.name
            )));
        }
        Ok(if k == 1 && instr.shape.is_array() {
            Value::One(results[0])
        } else {
            Value::Many(results)
        })
    }
}

/// Where a slot's block lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Home {
    /// At this byte offset of the task's register file.
    Register(usize),
    /// In output leaf `k`, at the block's position.
    Output(usize),
}

/// The domain a slot (and the step writing it) runs in.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SlotDom {
    Full,
    Outer,
    /// Computed once per task; the register holds the value repeated.
    Uniform,
    /// After every row: blocks of columns of column reductions' results.
    Col,
}

#[derive(Debug)]
pub struct Slot {
    pub ty: ElementType,
    pub width: usize,
    pub dom: SlotDom,
    pub home: Home,
}

/// A leaf as the runtime reads it.
pub struct LeafPlan {
    pub source: Source,
    pub view: View,
    pub width: usize,
    /// For an iota: writes the values.
    pub index: Option<ops::IndexGen>,
}

/// Rows shorter than this are not processed row by row (the per-call cost
/// would dominate): per-row values and repeated rows are expanded instead.
pub const ROW_CALL_MIN: usize = 64;

#[derive(Debug)]
pub enum Step {
    Load {
        slot: usize,
        leaf: usize,
        /// Whole-row blocks of a leaf that reads the same row for every row
        /// (a broadcast bias): the offset of that row, read in place.
        repeat: Option<isize>,
    },
    Op {
        slot: usize,
        kernel: ops::Kernel,
        args: Vec<usize>,
    },
    /// Row reduction of the block's rows (whole rows), or of a chunk into a
    /// partial value (chunked rows).
    RowFold {
        reduce: usize,
        operands: Vec<usize>,
        results: Vec<usize>,
    },
    /// Chunked rows: combines a row's partial values (finalize phase).
    RowCombine {
        reduce: usize,
        results: Vec<usize>,
    },
    RowBroadcast {
        slot: usize,
        src: usize,
    },
    ColAccumulate {
        reduce: usize,
        operands: Vec<usize>,
    },
    /// Column phase: combines the tasks' partial rows (and the init) for the
    /// block's columns.
    ColCombine {
        reduce: usize,
        results: Vec<usize>,
    },
    /// Copies a slot's block to output `output` (a leaf read directly from
    /// memory, a uniform value, or a value that is two outputs).
    Store {
        slot: usize,
        output: usize,
        dom: SlotDom,
    },
}

/// How blocks cover the full domain.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Blocks of whole rows.
    Rows { rows_per_block: usize },
    /// Rows longer than a block: each row in `chunks_per_row` chunks of at
    /// most `chunk_len` elements.
    Chunks {
        chunk_len: usize,
        chunks_per_row: usize,
    },
}

pub struct ReducePlan {
    pub col: bool,
    pub types: Vec<ElementType>,
    pub inits: Vec<usize>,
    pub reducer: Reducer,
    /// Byte offset in the fusion's scratch of each result's partial values
    /// (column: `n_tasks` rows of `row_len`; chunked row: one per chunk).
    pub partials: Vec<usize>,
}

#[derive(Debug)]
pub struct OutputPlan {
    pub count: usize,
    pub ty: ElementType,
}

/// A leaf a block program fetches ahead for the next block (see
/// `exec::Ahead`), with the domain of the slot it loads into (which
/// positions of a block it reads).
#[derive(Clone, Copy, Debug)]
pub struct FetchLeaf {
    pub leaf: usize,
    pub dom: SlotDom,
}

/// A compiled fusion (see the module doc).
pub struct BlockProgram {
    pub name: String,
    pub rows: usize,
    pub row_len: usize,
    pub mode: Mode,
    /// Elements a full-domain register holds.
    pub cap_full: usize,
    /// Elements an outer-domain register holds.
    pub cap_rows: usize,
    pub slots: Vec<Slot>,
    pub uniform_steps: Vec<Step>,
    /// Per block (whole rows), or per chunk (chunked rows).
    pub steps: Vec<Step>,
    /// Chunked rows: per block of rows after every chunk is done.
    pub finalize: Vec<Step>,
    /// Per block of columns after every row is done.
    pub col_steps: Vec<Step>,
    /// Elements a column-phase register holds.
    pub cap_cols: usize,
    pub leaves: Vec<LeafPlan>,
    pub constants: Vec<Arc<ConstantBytes>>,
    pub reduces: Vec<ReducePlan>,
    pub regfile_bytes: usize,
    /// The leaves each block fetches for the next one while it computes
    /// (see `exec::Ahead`): the plain (not generated) leaves its loads read,
    /// and none unless the fusion has enough passes over each block to hide
    /// the fetches behind.
    pub fetch_ahead: Vec<FetchLeaf>,
    pub n_tasks: usize,
    pub outputs: Vec<OutputPlan>,
    pub param_bytes: Vec<usize>,
    pub scratch_bytes: usize,
    /// Graph nodes whose operation runs more than once per element (pushed
    /// through a data movement op into more than one view, or needed in two
    /// domains).
    pub duplicated: Vec<usize>,
    /// Parameters read only at their own positions in the full domain, in
    /// the step that writes the single output's block: the output may be
    /// written over them.
    pub in_place_params: Vec<usize>,
}

fn kernel_for(op: &ElemOp, arg_types: &[ElementType], ty: ElementType) -> Result<ops::Kernel> {
    let first = *arg_types
        .first()
        .ok_or_else(|| Error::internal("an op with no operands"))?;
    match op {
        ElemOp::Unary(u) => ops::unary(*u, first, ty),
        ElemOp::Binary(b) => ops::binary(*b, first, ty),
        ElemOp::Compare(d, t) => ops::compare(*d, *t, first),
        ElemOp::Select => ops::select(ty),
        ElemOp::Clamp => ops::clamp(ty),
        ElemOp::Convert => ops::convert(first, ty),
        ElemOp::Reinterpret => ops::copy(ty.byte_size()),
        ElemOp::ReducePrecision(e, m) => ops::reduce_precision(ty, *e, *m),
        ElemOp::FusedMultiplyAdd(how) => ops::fused_multiply_add(*how, ty),
    }
}

struct Scheduler<'b, 'g, 'a> {
    b: &'b Builder<'g, 'a>,
    rows: usize,
    row_len: usize,
    chunked: bool,
    slots: Vec<Slot>,
    /// Which step (list, index) defines each slot, for output homing.
    writes: Vec<bool>,
    instances: HashMap<(ExprId, SlotDom), usize>,
    uniform_steps: Vec<Step>,
    steps: Vec<Step>,
    finalize: Vec<Step>,
    leaves: Vec<LeafPlan>,
    /// Keyed by element type too: one iota view may be read as two types.
    leaf_ids: HashMap<(Leaf, ElementType), usize>,
    reduce_results: Vec<Option<Vec<usize>>>,
    col_results: Vec<Option<Vec<usize>>>,
    col_steps: Vec<Step>,
    needs_whole_rows: bool,
    origin_instances: HashMap<usize, usize>,
    /// Parameters read other than at their own full-domain positions.
    param_scattered: Vec<bool>,
}

impl Scheduler<'_, '_, '_> {
    fn new_slot(&mut self, ty: ElementType, dom: SlotDom, writes: bool) -> usize {
        self.slots.push(Slot {
            ty,
            width: ty.byte_size(),
            dom,
            home: Home::Register(0),
        });
        self.writes.push(writes);
        self.slots.len() - 1
    }

    fn push(&mut self, dom: SlotDom, step: Step) {
        match dom {
            SlotDom::Uniform => self.uniform_steps.push(step),
            SlotDom::Full => self.steps.push(step),
            SlotDom::Outer if self.chunked => self.finalize.push(step),
            SlotDom::Outer => self.steps.push(step),
            SlotDom::Col => self.col_steps.push(step),
        }
    }

    fn leaf_plan(&mut self, leaf: &Leaf, ty: ElementType) -> Result<usize> {
        let key = (leaf.clone(), ty);
        if let Some(&l) = self.leaf_ids.get(&key) {
            return Ok(l);
        }
        let index = match leaf.source {
            Source::Index => Some(ops::index_gen(ty)),
            _ => None,
        };
        self.leaves.push(LeafPlan {
            source: leaf.source.clone(),
            view: leaf.view.clone(),
            width: ty.byte_size(),
            index,
        });
        self.leaf_ids.insert(key, self.leaves.len() - 1);
        Ok(self.leaves.len() - 1)
    }

    fn need(&mut self, e: ExprId, dom: SlotDom) -> Result<usize> {
        let expr = &self.b.exprs[e];
        let dom = if expr.uniform { SlotDom::Uniform } else { dom };
        if let Some(&s) = self.instances.get(&(e, dom)) {
            return Ok(s);
        }
        match (expr.dom, dom) {
            (Dom::Any, _)
            | (Dom::Full, SlotDom::Full)
            | (Dom::Outer, SlotDom::Outer)
            | (Dom::Col, SlotDom::Col) => {}
            _ => {
                return Err(self
                    .b
                    .unsupported("a value is needed in a domain it cannot be computed in"))
            }
        }
        let count = expr.key.count;
        let expected = match dom {
            SlotDom::Full => Some(self.rows * self.row_len),
            SlotDom::Outer => Some(self.rows),
            SlotDom::Col => Some(self.row_len),
            SlotDom::Uniform => None,
        };
        if let Some(n) = expected {
            if n != count {
                return Err(self.b.unsupported(format!(
                    "a value of {count} elements in a fusion over {}×{} elements",
                    self.rows, self.row_len
                )));
            }
        }
        let ty = expr.key.ty;
        let kind = expr.key.kind.clone();
        let slot = match kind {
            Kind::Leaf(leaf) => {
                if let Source::Param(k) = leaf.source {
                    if dom != SlotDom::Full || leaf.view != View::identity() {
                        self.param_scattered[k] = true;
                    }
                }
                let l = self.leaf_plan(&leaf, ty)?;
                let slot = self.new_slot(ty, dom, false);
                let repeat = match (dom, &leaf.source) {
                    (SlotDom::Full, Source::Param(_) | Source::Constant(_))
                        if self.row_len >= ROW_CALL_MIN =>
                    {
                        leaf.view.repeat_base(self.rows, self.row_len)
                    }
                    _ => None,
                };
                self.push(
                    dom,
                    Step::Load {
                        slot,
                        leaf: l,
                        repeat,
                    },
                );
                slot
            }
            Kind::Op(op, children) => {
                let mut args = Vec::with_capacity(children.len());
                let mut types = Vec::with_capacity(children.len());
                for &c in &children {
                    args.push(self.need(c, dom)?);
                    types.push(self.b.ty(c));
                }
                let kernel = kernel_for(&op, &types, ty)
                    .map_err(|e| e.context(format_args!("{}", self.b.graph.name)))?;
                if let Some(origin) = self.b.exprs[e].origin {
                    *self.origin_instances.entry(origin).or_insert(0) += 1;
                }
                let slot = self.new_slot(ty, dom, true);
                self.push(dom, Step::Op { slot, kernel, args });
                slot
            }
            Kind::RowResult { reduce, index } => {
                let results = self.row_reduce(reduce)?;
                results[index]
            }
            Kind::RowBroadcast(src) => {
                self.needs_whole_rows = true;
                let src = self.need(src, SlotDom::Outer)?;
                let slot = self.new_slot(ty, SlotDom::Full, true);
                self.push(SlotDom::Full, Step::RowBroadcast { slot, src });
                slot
            }
            Kind::ColResult { reduce, index } => {
                let results = self.col_reduce(reduce)?;
                results[index]
            }
        };
        self.instances.insert((e, dom), slot);
        Ok(slot)
    }

    fn row_reduce(&mut self, r: usize) -> Result<Vec<usize>> {
        if let Some(res) = &self.reduce_results[r] {
            return Ok(res.clone());
        }
        let spec = &self.b.reduces[r];
        let operands = spec
            .operands
            .clone()
            .into_iter()
            .map(|x| self.need(x, SlotDom::Full))
            .collect::<Result<Vec<_>>>()?;
        let types = spec.types.clone();
        let results: Vec<usize> = types
            .iter()
            .map(|&t| self.new_slot(t, SlotDom::Outer, true))
            .collect();
        if self.chunked {
            self.steps.push(Step::RowFold {
                reduce: r,
                operands,
                results: results.clone(),
            });
            self.finalize.push(Step::RowCombine {
                reduce: r,
                results: results.clone(),
            });
        } else {
            self.steps.push(Step::RowFold {
                reduce: r,
                operands,
                results: results.clone(),
            });
        }
        self.reduce_results[r] = Some(results.clone());
        Ok(results)
    }

    fn col_reduce(&mut self, r: usize) -> Result<Vec<usize>> {
        if let Some(res) = &self.col_results[r] {
            return Ok(res.clone());
        }
        let operands = self.b.reduces[r]
            .operands
            .clone()
            .into_iter()
            .map(|x| self.need(x, SlotDom::Full))
            .collect::<Result<Vec<_>>>()?;
        self.steps.push(Step::ColAccumulate {
            reduce: r,
            operands,
        });
        let types = self.b.reduces[r].types.clone();
        let results: Vec<usize> = types
            .iter()
            .map(|&t| self.new_slot(t, SlotDom::Col, true))
            .collect();
        self.col_steps.push(Step::ColCombine {
            reduce: r,
            results: results.clone(),
        });
        self.col_results[r] = Some(results.clone());
        Ok(results)
    }

    fn output(&mut self, k: usize, e: ExprId) -> Result<()> {
        let expr = &self.b.exprs[e];
        let dom = match expr.dom {
            Dom::Full => SlotDom::Full,
            Dom::Outer => SlotDom::Outer,
            Dom::Col => SlotDom::Col,
            _ if expr.key.count == self.rows * self.row_len => SlotDom::Full,
            _ if expr.key.count == self.rows => SlotDom::Outer,
            _ => {
                return Err(self.b.unsupported(format!(
                    "an output of {} elements in a fusion over {}×{} elements",
                    expr.key.count, self.rows, self.row_len
                )))
            }
        };
        let slot = self.need(e, dom)?;
        let homeable = self.writes[slot]
            && self.slots[slot].home == Home::Register(0)
            && self.slots[slot].dom == dom;
        if homeable {
            self.slots[slot].home = Home::Output(k);
        } else {
            let step = Step::Store {
                slot,
                output: k,
                dom,
            };
            self.push(dom, step);
        }
        Ok(())
    }
}

/// Last step index (over uniform, block and finalize steps in that order)
/// reading each slot.
fn step_slots(step: &Step) -> (Vec<usize>, Vec<usize>) {
    match step {
        Step::Load { slot, .. } => (vec![], vec![*slot]),
        Step::Op { slot, args, .. } => (args.clone(), vec![*slot]),
        Step::RowFold {
            operands, results, ..
        } => (operands.clone(), results.clone()),
        Step::RowCombine { results, .. } => (vec![], results.clone()),
        Step::RowBroadcast { slot, src } => (vec![*src], vec![*slot]),
        Step::ColAccumulate { operands, .. } => (operands.clone(), vec![]),
        Step::ColCombine { results, .. } => (vec![], results.clone()),
        Step::Store { slot, .. } => (vec![*slot], vec![]),
    }
}

/// Marks the error of a column reduction whose result is used in the fusion.
const COLUMN_RESULT_USED: &str = "a column reduction's result is used inside the fusion";

/// Compiles a fused graph into a block program.
pub fn compile(graph: &FusedGraph<'_>) -> Result<BlockProgram> {
    match compile_with(graph, false) {
        Err(e) if e.message().contains(COLUMN_RESULT_USED) => compile_with(graph, true),
        other => other,
    }
}

fn compile_with(graph: &FusedGraph<'_>, rows_only: bool) -> Result<BlockProgram> {
    let mut b = Builder {
        rows_only,
        folded: HashMap::new(),
        graph,
        exprs: Vec::new(),
        intern: HashMap::new(),
        reduces: Vec::new(),
        domain: None,
        constants: Vec::new(),
        constant_counts: Vec::new(),
        values: Vec::with_capacity(graph.nodes.len()),
        current: None,
    };
    for i in 0..graph.nodes.len() {
        b.current = Some(i);
        let v = b.node(i)?;
        b.values.push(Some(v));
    }
    b.current = None;
    // Outputs, with tuple-valued nodes (variadic reduce roots) expanded.
    let mut outputs: Vec<ExprId> = Vec::new();
    for &o in &graph.outputs {
        match o {
            Operand::Node(n) => match &b.values[n] {
                Some(Value::One(e)) => outputs.push(*e),
                Some(Value::Many(es)) => outputs.extend(es.iter().copied()),
                None => return Err(Error::internal("fused output undefined")),
            },
            Operand::Param(_) => outputs.push(b.operand(o)?),
        }
    }
    if outputs.is_empty() {
        return Err(b.unsupported("a fusion without outputs"));
    }
    let (rows, row_len) = match b.domain {
        Some(d) => d,
        None => (1, b.count(outputs[0])),
    };
    let total = rows * row_len;
    let block = if b.reduces.is_empty() {
        ELEMENTWISE_BLOCK
    } else {
        BLOCK
    };
    let chunked_possible = row_len > block;
    // First pass: schedule assuming whole rows fit; learn whether a
    // reduction is broadcast back (then rows must be whole).
    let build = |chunked: bool| -> Result<Scheduler<'_, '_, '_>> {
        let mut s = Scheduler {
            b: &b,
            rows,
            row_len,
            chunked,
            slots: Vec::new(),
            writes: Vec::new(),
            instances: HashMap::new(),
            uniform_steps: Vec::new(),
            steps: Vec::new(),
            finalize: Vec::new(),
            leaves: Vec::new(),
            leaf_ids: HashMap::new(),
            reduce_results: vec![None; b.reduces.len()],
            col_results: vec![None; b.reduces.len()],
            col_steps: Vec::new(),
            needs_whole_rows: false,
            origin_instances: HashMap::new(),
            param_scattered: vec![false; graph.params.len()],
        };
        for (k, &e) in outputs.iter().enumerate() {
            s.output(k, e)?;
        }
        Ok(s)
    };
    let mut sched = build(false)?;
    let has_col = b.reduces.iter().any(|r| r.col);
    let mode = if row_len <= block {
        Mode::Rows {
            rows_per_block: (block / row_len.max(1)).clamp(1, rows.max(1)),
        }
    } else if sched.needs_whole_rows || has_col {
        if row_len > MAX_ROW {
            return Err(b.unsupported(format!(
                "rows of {row_len} elements are too long to hold whole in a block"
            )));
        }
        Mode::Rows { rows_per_block: 1 }
    } else {
        debug_assert!(chunked_possible);
        let chunks_per_row = row_len.div_ceil(block);
        sched = build(true)?;
        Mode::Chunks {
            chunk_len: row_len.div_ceil(chunks_per_row),
            chunks_per_row,
        }
    };
    let (cap_full, cap_rows, units) = match mode {
        Mode::Rows { rows_per_block } => (rows_per_block * row_len, rows_per_block, rows),
        Mode::Chunks {
            chunk_len,
            chunks_per_row,
        } => (chunk_len, rows.clamp(1, block), rows * chunks_per_row),
    };
    let cap_cols = row_len.clamp(1, block);
    let cap_uniform = cap_full.max(cap_rows).max(cap_cols).max(1);

    // Registers: linear scan over uniform, block and finalize steps.
    let order: Vec<&Step> = sched
        .uniform_steps
        .iter()
        .chain(&sched.steps)
        .chain(&sched.finalize)
        .chain(&sched.col_steps)
        .collect();
    let n_slots = sched.slots.len();
    let mut last_use = vec![0usize; n_slots];
    for (i, step) in order.iter().enumerate() {
        let (reads, writes) = step_slots(step);
        for s in reads.into_iter().chain(writes) {
            last_use[s] = last_use[s].max(i);
        }
    }
    // A row broadcast is lazy: its slot reads the source's register until it
    // is expanded or dies, so the source lives as long as the broadcast.
    for step in order.iter().rev() {
        if let Step::RowBroadcast { slot, src } = step {
            last_use[*src] = last_use[*src].max(last_use[*slot]);
        }
    }
    let bytes_of = |slot: &Slot| -> usize {
        let elems = match slot.dom {
            SlotDom::Full => cap_full,
            SlotDom::Outer => cap_rows,
            SlotDom::Col => cap_cols,
            SlotDom::Uniform => cap_uniform,
        };
        (elems * slot.width).div_ceil(64).max(1) * 64
    };
    let mut free: Vec<(usize, usize)> = Vec::new(); // (bytes, offset)
    let mut regfile_bytes = 0usize;
    let mut assigned = vec![false; n_slots];
    for (i, step) in order.iter().enumerate() {
        let (_, writes) = step_slots(step);
        for s in writes {
            if assigned[s] || matches!(sched.slots[s].home, Home::Output(_)) {
                assigned[s] = true;
                continue;
            }
            let need = bytes_of(&sched.slots[s]);
            let offset = match free.iter().position(|&(b, _)| b == need) {
                Some(p) => free.swap_remove(p).1,
                None => {
                    regfile_bytes += need;
                    regfile_bytes - need
                }
            };
            sched.slots[s].home = Home::Register(offset);
            assigned[s] = true;
        }
        // Free the registers whose last use is this step (uniform slots live
        // for the whole task).
        for s in 0..n_slots {
            if assigned[s]
                && last_use[s] == i
                && sched.slots[s].dom != SlotDom::Uniform
                && i >= sched.uniform_steps.len()
            {
                if let Home::Register(off) = sched.slots[s].home {
                    free.push((bytes_of(&sched.slots[s]), off));
                }
            }
        }
    }

    // Reductions: reducers and scratch for partial values.
    let work = total.max(rows) * (sched.steps.len() + sched.finalize.len()).max(1);
    let n_tasks = if units == 0 {
        0
    } else {
        (work / TASK_WORK).clamp(1, MAX_TASKS).min(units)
    };
    let mut scratch_bytes = 0usize;
    let mut reduces = Vec::with_capacity(b.reduces.len());
    for spec in &b.reduces {
        let reducer = match (
            spec.types.len(),
            binary_reducer(graph.module, spec.to_apply),
        ) {
            (1, Some((op, ty))) if ty == spec.types[0] => Reducer::Simple {
                op,
                fold: ops::fold(op, ty)?,
                accumulate: ops::accumulate(op, ty)?,
            },
            _ => Reducer::Program(Arc::new(ScalarProgram::compile(
                graph.module,
                spec.to_apply,
            )?)),
        };
        if let Reducer::Program(p) = &reducer {
            if p.param_count() != 2 * spec.types.len() || p.output_types() != spec.types {
                return Err(b.unsupported("a reducer whose signature does not match its reduce"));
            }
        }
        let mut inits = Vec::new();
        for (leaf, &ty) in spec.inits.iter().zip(&spec.types) {
            inits.push(sched.leaf_plan(leaf, ty)?);
        }
        let mut partials = Vec::new();
        for &ty in &spec.types {
            let per = if spec.col {
                n_tasks * row_len
            } else if matches!(mode, Mode::Chunks { .. }) {
                units
            } else {
                0
            };
            partials.push(scratch_bytes);
            scratch_bytes += (per * ty.byte_size()).div_ceil(64) * 64;
        }
        reduces.push(ReducePlan {
            col: spec.col,
            types: spec.types.clone(),
            inits,
            reducer,
            partials,
        });
    }
    let out_plans = outputs
        .iter()
        .map(|&e| OutputPlan {
            count: b.count(e),
            ty: b.ty(e),
        })
        .collect::<Vec<_>>();
    let duplicated = sched
        .origin_instances
        .iter()
        .filter(|&(_, &n)| n > 1)
        .map(|(&o, _)| o)
        .collect();
    // In place: one full-domain output, written by the last step of a block.
    let single_full_output = outputs.len() == 1
        && matches!(mode, Mode::Rows { .. } | Mode::Chunks { .. })
        && sched.finalize.is_empty()
        && sched.col_steps.is_empty()
        && matches!(sched.steps.last(), Some(Step::Op { slot, .. }) if sched.slots[*slot].home == Home::Output(0) && sched.slots[*slot].dom == SlotDom::Full);
    let in_place_params = if single_full_output {
        (0..graph.params.len())
            .filter(|&k| {
                !sched.param_scattered[k]
                    && graph.params[k].element_count() == total
                    && graph.params[k].element_type() == Some(out_plans[0].ty)
            })
            .collect()
    } else {
        Vec::new()
    };
    // Prefetching pays where a block's compute passes leave the memory idle;
    // a reduction or a short chain is one streaming pass the hardware
    // prefetcher already keeps fed, and extra fetches only compete with it
    // (reduce_4096x4096 ran 4.4 -> 8.0 ms with them).
    let op_steps = sched
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Op { .. }))
        .count();
    let fetch_ahead = if b.reduces.is_empty() && op_steps >= FETCH_AHEAD_MIN_OPS {
        sched
            .steps
            .iter()
            .filter_map(|s| match s {
                Step::Load { slot, leaf, .. } if sched.leaves[*leaf].index.is_none() => {
                    Some(FetchLeaf {
                        leaf: *leaf,
                        dom: sched.slots[*slot].dom,
                    })
                }
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    Ok(BlockProgram {
        name: graph.name.clone(),
        rows,
        row_len,
        mode,
        cap_full,
        cap_rows,
        slots: sched.slots,
        uniform_steps: sched.uniform_steps,
        steps: sched.steps,
        finalize: sched.finalize,
        col_steps: sched.col_steps,
        cap_cols,
        leaves: sched.leaves,
        constants: b.constants.clone(),
        reduces,
        regfile_bytes,
        fetch_ahead,
        n_tasks,
        outputs: out_plans,
        param_bytes: graph
            .params
            .iter()
            .map(|s| s.leaves().iter().map(|(_, a)| a.byte_size()).sum())
            .collect(),
        scratch_bytes,
        duplicated,
        in_place_params,
    })
}
