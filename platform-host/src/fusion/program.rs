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
//! can only be a result of the fusion (and of column-phase ops of it). A
//! reduction of `[A, R, B]` over the middle `R` is a *grouped* column
//! reduction: `A·R` rows of `B`, each group of `R` rows accumulated into its
//! own result row ([`BlockProgram::col_groups`]). Any other reduction whose
//! dimensions do not come in one of those orders reads its operand through a
//! transposed view. Values that do
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
use platform_api::hlo::{
    BinaryOp, ComparisonDirection, ComparisonType, HloInstruction, Op, UnaryOp,
};
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
/// The block of a fusion without reductions whose widest value has
/// `widest` bytes per element: [`ELEMENTWISE_BLOCK`] elements, or [`BLOCK`]
/// when every value is one byte (`u8`, `s8`, `pred`). The registers then
/// take the room of 1024 f32 in L1, and a chain of 8-bit ops pays each
/// step's call once per 4096 elements instead of 1024 (at 1024, the calls
/// were most of a u8 chain's time). 16-bit fusions keep 1024: their ops
/// widen to f32 chunks, and a bf16 chain showed no gain at 2048 on the
/// shared machine.
fn elementwise_block(widest: Option<usize>) -> usize {
    match widest {
        Some(1) => BLOCK,
        _ => ELEMENTWISE_BLOCK,
    }
}

/// Fewest compute steps per block for which a fusion fetches the next
/// block's memory ahead.
pub const FETCH_AHEAD_MIN_OPS: usize = 4;
/// Extra element evaluations past which an operation pushed below a
/// broadcast counts as amplified ([`BlockProgram::amplified`]).
pub const AMPLIFY_MIN: usize = 4096;
/// Longest row a block may hold whole (when a reduction is broadcast back).
pub const MAX_ROW: usize = 1 << 16;
/// Fewest groups (outer extent) for a grouped column reduction: its tasks
/// split the groups, so fewer would leave cores idle.
const MIN_COL_GROUPS: usize = 4;
/// Shortest row of a grouped column reduction: below it, adding row into
/// row costs more in calls than the transposed read it replaces.
const MIN_GROUP_ROW: usize = 16;
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
    /// A `dynamic-slice` of a parameter: index into
    /// [`BlockProgram::dynamic_offsets`], the offset (known only when the
    /// fusion runs) added to the source before the view's offsets.
    pub dynamic: Option<usize>,
}

/// Where a `dynamic-slice` start index comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StartIndex {
    /// Element `offset` of an integer parameter of the fusion (a scalar, or
    /// one element sliced out of an array), read when it runs.
    Param {
        param: usize,
        ty: ElementType,
        offset: usize,
    },
    /// Known when the fusion is compiled.
    Const(i64),
}

/// The offset of a `dynamic-slice` of a parameter: `Σ clamp(start_d, 0,
/// limit_d) · stride_d` elements, each start clamped as HLO specifies so the
/// slice stays inside the operand.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DynamicOffset {
    pub starts: Vec<StartIndex>,
    /// `operand_dim - slice_size` per dimension.
    pub limits: Vec<usize>,
    /// Row-major element strides of the operand.
    pub strides: Vec<usize>,
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
    /// `or(shift-left(x, a), shift-right-logical(x, b))` of operands
    /// `[x, a, b]`: a rotate when `a + b` is the width. Formed from the three
    /// ops when the fusion holds them (see `Builder::op`).
    ShiftPairOr,
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
            ElemOp::Select
            | ElemOp::Clamp
            | ElemOp::Convert
            | ElemOp::Reinterpret
            | ElemOp::ShiftPairOr => {}
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
        accumulate: ops::Accumulate,
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

/// A node being lowered: its instruction, operands and array result.
struct Site<'a> {
    instr: &'a HloInstruction,
    ops: Vec<Operand>,
    ty: ElementType,
    dims: Vec<usize>,
    count: usize,
}

/// A reduce's input dimensions, split into kept and reduced ones.
struct ReduceShape {
    in_dims: Vec<usize>,
    kept_dims: Vec<usize>,
    red_dims: Vec<usize>,
    /// Elements of the kept dimensions (the results).
    kept: usize,
    /// Elements of the reduced dimensions (combined into each result).
    red: usize,
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
    /// Whether a reduction over middle dimensions may become a grouped
    /// column reduction (see [`BlockProgram::col_groups`]).
    allow_groups: bool,
    /// The domain's column groups: 1, or the outer extent of a grouped
    /// column reduction.
    col_groups: usize,
    dynamic_offsets: Vec<DynamicOffset>,
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
        self.leaf_at(source, view, None, ty, count)
    }

    /// [`Builder::leaf`], at a dynamic offset of its source. The view's
    /// offsets are checked with the offset at zero: a dynamic slice's
    /// clamped start keeps them inside the operand from anywhere.
    fn leaf_at(
        &mut self,
        source: Source,
        view: View,
        dynamic: Option<usize>,
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
            Kind::Leaf(Leaf {
                source,
                view,
                dynamic,
            }),
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
                self.leaf_at(leaf.source.clone(), view, leaf.dynamic, key.ty, count)?
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
        let c = self.constant_leaf(&bytes[..count * ty.byte_size()], ty, count)?;
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
        let (op, children) = self.combined(op, children);
        self.add(
            Kind::Op(op, children),
            ty,
            count,
            dom,
            uniform && dom == Dom::Any,
        )
    }

    /// `op` of `children` as one step where the Host has a kernel for the
    /// whole pattern: `or` of a left and a logical right shift of the same
    /// value (a rotate, as random-number generators write it) becomes
    /// [`ElemOp::ShiftPairOr`], so a block makes one pass instead of three.
    /// The shifts stay expressions of their own and are still computed if
    /// anything else reads them.
    fn combined(&self, op: ElemOp, children: Vec<ExprId>) -> (ElemOp, Vec<ExprId>) {
        let shift = |e: ExprId, which: BinaryOp| match &self.exprs[e].key.kind {
            Kind::Op(ElemOp::Binary(b), args) if *b == which && args.len() == 2 => {
                Some((args[0], args[1]))
            }
            _ => None,
        };
        if let (ElemOp::Binary(BinaryOp::Or), [p, q]) = (&op, children.as_slice()) {
            for (l, r) in [(*p, *q), (*q, *p)] {
                if let (Some((x, a)), Some((y, b))) = (
                    shift(l, BinaryOp::ShiftLeft),
                    shift(r, BinaryOp::ShiftRightLogical),
                ) {
                    if x == y {
                        return (ElemOp::ShiftPairOr, vec![x, a, b]);
                    }
                }
            }
        }
        (op, children)
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

    /// Lowers graph node `i` (its operands already lowered).
    fn node(&mut self, i: usize) -> Result<Value> {
        let instr = self.graph.nodes[i].instr;
        match &instr.op {
            Op::Reduce {
                dimensions,
                to_apply,
            } => return self.reduce(i, dimensions, *to_apply),
            Op::GetTupleElement { index } => return self.get_tuple_element(i, *index),
            _ => {}
        }
        let (ty, dims) = array_dims(&instr.shape, &format!("%{}", instr.name))?;
        let s = Site {
            instr,
            ops: self.graph.nodes[i].operands.clone(),
            ty,
            count: dims.iter().product(),
            dims,
        };
        match &instr.op {
            Op::Constant { literal } => self.constant_node(&s, literal.bytes()?),
            Op::Iota { dimension } => self.iota_node(&s, *dimension),
            Op::Reshape | Op::Copy => self.reshape_node(&s),
            Op::Broadcast { dimensions } => self.moved_node(
                &s,
                &Movement::Broadcast {
                    result: &s.dims,
                    dims: dimensions,
                },
            ),
            Op::Transpose { dimensions } => self.moved_node(&s, &Movement::Transpose(dimensions)),
            Op::Slice { slice } => {
                let slice: Vec<(usize, usize, usize)> =
                    slice.iter().map(|d| (d.start, d.limit, d.stride)).collect();
                self.moved_node(&s, &Movement::Slice(&slice))
            }
            Op::Reverse { dimensions } => self.moved_node(&s, &Movement::Reverse(dimensions)),
            Op::DynamicSlice { sizes } => self.dynamic_slice_node(&s, sizes),
            Op::Unary(u) => self.elementwise_node(&s, ElemOp::Unary(*u), 1),
            Op::Binary(b) => self.elementwise_node(&s, ElemOp::Binary(*b), 2),
            Op::Compare {
                direction,
                compare_type,
            } => self.elementwise_node(&s, ElemOp::Compare(*direction, *compare_type), 2),
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            } => self.elementwise_node(
                &s,
                ElemOp::ReducePrecision(*exponent_bits, *mantissa_bits),
                1,
            ),
            Op::Select => self.ternary_node(&s, ElemOp::Select, true),
            Op::Clamp => self.ternary_node(&s, ElemOp::Clamp, true),
            Op::CustomCall(_) if fma::is_fused_multiply_add(instr) => {
                let how = fma::fused_multiply_add(instr)?
                    .ok_or_else(|| self.unsupported("a fused multiply-add"))?;
                self.ternary_node(&s, ElemOp::FusedMultiplyAdd(how), false)
            }
            Op::Convert => self.convert_node(&s),
            Op::BitcastConvert => self.bitcast_convert_node(&s),
            other => Err(self.unsupported(format!(
                "{} inside a block-evaluated fusion",
                other.opcode()
            ))),
        }
    }

    /// The shape of a node's operand.
    fn operand_shape(&self, op: Operand) -> Result<&Shape> {
        match op {
            Operand::Node(n) => Ok(&self.graph.nodes[n].instr.shape),
            Operand::Param(p) => self
                .graph
                .params
                .get(p)
                .ok_or_else(|| Error::internal("param")),
        }
    }

    /// The array dimensions of operand `k` of the node at `s`.
    fn operand_dims(&self, s: &Site<'_>, k: usize) -> Result<Vec<usize>> {
        let op = *s.ops.get(k).ok_or_else(|| {
            Error::invalid_argument(format!("%{}: missing operand {k}", s.instr.name))
        })?;
        let what = match op {
            Operand::Node(_) => "an operand",
            Operand::Param(_) => "a parameter",
        };
        Ok(array_dims(self.operand_shape(op)?, what)?.1)
    }

    fn get_tuple_element(&self, i: usize, index: usize) -> Result<Value> {
        let node = &self.graph.nodes[i];
        match node.operands.first() {
            Some(Operand::Node(n)) => match &self.values[*n] {
                Some(Value::Many(v)) => v.get(index).map(|&e| Value::One(e)).ok_or_else(|| {
                    Error::invalid_argument(format!("%{}: index out of range", node.instr.name))
                }),
                _ => Err(self.unsupported("get-tuple-element of a non-tuple")),
            },
            _ => Err(self.unsupported("get-tuple-element of a parameter")),
        }
    }

    /// A new constant holding `bytes` (`count` elements of `ty`), read as a
    /// leaf.
    fn constant_leaf(&mut self, bytes: &[u8], ty: ElementType, count: usize) -> Result<ExprId> {
        self.constants.push(Arc::new(ConstantBytes::new(bytes)));
        self.constant_counts.push(count);
        let c = self.constants.len() - 1;
        self.leaf(Source::Constant(c), View::identity(), ty, count)
    }

    fn constant_node(&mut self, s: &Site<'_>, bytes: &[u8]) -> Result<Value> {
        if bytes.len() != s.count * s.ty.byte_size() {
            return Err(Error::invalid_argument(format!(
                "%{}: constant of the wrong size",
                s.instr.name
            )));
        }
        self.constant_leaf(bytes, s.ty, s.count).map(Value::One)
    }

    fn iota_node(&mut self, s: &Site<'_>, dimension: usize) -> Result<Value> {
        if dimension >= s.dims.len() {
            return Err(Error::invalid_argument(format!(
                "%{}: iota dimension",
                s.instr.name
            )));
        }
        let view = View::iota(&s.dims, dimension);
        self.leaf(Source::Index, view, s.ty, s.count)
            .map(Value::One)
    }

    /// A reshape or copy: the same elements in the same order.
    fn reshape_node(&mut self, s: &Site<'_>) -> Result<Value> {
        let e = self.operand(s.ops[0])?;
        if self.count(e) != s.count {
            return Err(Error::invalid_argument(format!(
                "%{}: reshape changes the element count",
                s.instr.name
            )));
        }
        Ok(Value::One(e))
    }

    /// A data movement op: `movement` of operand 0.
    fn moved_node(&mut self, s: &Site<'_>, movement: &Movement<'_>) -> Result<Value> {
        let od = self.operand_dims(s, 0)?;
        let e = self.operand(s.ops[0])?;
        let mut memo = HashMap::new();
        self.movement(e, &od, movement, s.count, &mut memo)
            .map(Value::One)
    }

    /// `op` of the node's first `arity` operands.
    fn elementwise_node(&mut self, s: &Site<'_>, op: ElemOp, arity: usize) -> Result<Value> {
        let mut args = Vec::with_capacity(arity);
        args.push(self.operand(s.ops[0])?);
        for k in 1..arity {
            let o = *s.ops.get(k).ok_or_else(|| self.unsupported("arity"))?;
            args.push(self.operand(o)?);
        }
        self.op(op, args, s.ty, s.count).map(Value::One)
    }

    /// `op` of exactly three operands; with `broadcast_scalars`, scalar
    /// operands of a non-scalar result are broadcast (select, clamp).
    fn ternary_node(&mut self, s: &Site<'_>, op: ElemOp, broadcast_scalars: bool) -> Result<Value> {
        if s.ops.len() != 3 {
            return Err(self.unsupported("arity"));
        }
        let mut args = Vec::with_capacity(3);
        for &o in &s.ops {
            args.push(if broadcast_scalars {
                self.operand_as(o, &s.dims)?
            } else {
                self.operand(o)?
            });
        }
        self.op(op, args, s.ty, s.count).map(Value::One)
    }

    /// `dynamic-slice` of a parameter read whole, at start indices that are
    /// scalar parameters or compile-time constants: a leaf reading the
    /// parameter through a slice view from offset zero, shifted when the
    /// fusion runs by the clamped starts ([`DynamicOffset`]).
    fn dynamic_slice_node(&mut self, s: &Site<'_>, sizes: &[usize]) -> Result<Value> {
        let dims = self.operand_dims(s, 0)?;
        if sizes.len() != dims.len()
            || s.ops.len() != 1 + dims.len()
            || sizes.iter().zip(&dims).any(|(z, d)| z > d)
            || sizes.iter().product::<usize>() != s.count
        {
            return Err(Error::invalid_argument(format!(
                "%{}: dynamic-slice sizes {sizes:?} do not fit an operand of {dims:?}",
                s.instr.name
            )));
        }
        let x = self.operand(s.ops[0])?;
        let param = match &self.exprs[x].key.kind {
            Kind::Leaf(Leaf {
                source: Source::Param(k),
                view,
                dynamic: None,
            }) if *view == View::identity() => *k,
            _ => return Err(self.unsupported("a dynamic slice of a computed value")),
        };
        let mut starts = Vec::with_capacity(dims.len());
        for d in 0..dims.len() {
            let e = self.operand(s.ops[1 + d])?;
            let ty = self.ty(e);
            if self.count(e) != 1 || !is_index_type(ty) {
                return Err(Error::invalid_argument(format!(
                    "%{}: a dynamic-slice start must be an integer scalar",
                    s.instr.name
                )));
            }
            let start = match &self.exprs[e].key.kind {
                Kind::Leaf(Leaf {
                    source: Source::Param(k),
                    view,
                    dynamic: None,
                }) => match view.offset_range(1) {
                    Some((lo, _)) if lo >= 0 => StartIndex::Param {
                        param: *k,
                        ty,
                        offset: lo as usize,
                    },
                    _ => {
                        return Err(Error::internal(
                            "a dynamic-slice start outside its parameter",
                        ))
                    }
                },
                _ if !self.exprs[e].variable => {
                    let bits = self.evaluate(e, &mut HashMap::new())?;
                    StartIndex::Const(index_value(ty, bits[0]))
                }
                _ => return Err(self.unsupported("a dynamic-slice start computed in the fusion")),
            };
            starts.push(start);
        }
        self.dynamic_offsets.push(DynamicOffset {
            starts,
            limits: dims.iter().zip(sizes).map(|(d, z)| d - z).collect(),
            strides: platform_api::shape::row_major_strides(&dims),
        });
        let slice: Vec<(usize, usize, usize)> = sizes.iter().map(|&z| (0, z, 1)).collect();
        let view = View::identity().apply(&dims, &Movement::Slice(&slice))?;
        let id = self.dynamic_offsets.len() - 1;
        self.leaf_at(Source::Param(param), view, Some(id), s.ty, s.count)
            .map(Value::One)
    }

    fn convert_node(&mut self, s: &Site<'_>) -> Result<Value> {
        let a = self.operand(s.ops[0])?;
        if self.ty(a) == s.ty {
            return Ok(Value::One(a));
        }
        self.op(ElemOp::Convert, vec![a], s.ty, s.count)
            .map(Value::One)
    }

    fn bitcast_convert_node(&mut self, s: &Site<'_>) -> Result<Value> {
        let a = self.operand(s.ops[0])?;
        if self.ty(a).byte_size() != s.ty.byte_size() || self.count(a) != s.count {
            return Err(self.unsupported("bitcast-convert between element widths"));
        }
        if self.ty(a) == s.ty {
            return Ok(Value::One(a));
        }
        self.op(ElemOp::Reinterpret, vec![a], s.ty, s.count)
            .map(Value::One)
    }

    /// Lowers reduce node `i`: a row or column reduction fixing the fusion's
    /// domain, or (over size-1 dimensions only) an elementwise op.
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
        let shape = self.reduce_shape(instr, ops[0], dimensions)?;
        let (mut inputs, inits, types) = self.reduce_inputs(instr, &ops, shape.kept * shape.red)?;
        // Reducing only size-1 dimensions: `reducer(init, x)` elementwise.
        if shape.red == 1 {
            if let Some(v) = self.reduce_size_one(to_apply, &ops, &inputs, &types, shape.kept)? {
                return Ok(v);
            }
        }
        let groups = self.column_groups(&shape)?;
        let col = match groups {
            Some(_) => true,
            None => self.reduce_orientation(&shape)?,
        };
        if col && groups.is_none() && self.col_groups > 1 {
            return Err(self.unsupported(
                "a column reduction of another shape after a grouped column reduction",
            ));
        }
        let (rows, row_len) = match groups {
            Some(a) => (a * shape.red, shape.kept / a),
            None if col => (shape.red, shape.kept),
            None => (shape.kept, shape.red),
        };
        self.domain = Some((rows, row_len));
        if let Some(a) = groups {
            self.col_groups = a;
        }
        self.reduce_in_row_order(&mut inputs, &shape, col, groups.is_some())?;
        let spec = ReduceSpec {
            col,
            operands: inputs,
            inits,
            types,
            to_apply,
        };
        let results = self.reduce_results(spec, rows, row_len)?;
        // The result's shape must list the kept dimensions (count check).
        let out_count: usize = match &instr.shape {
            Shape::Array(a) => a.element_count(),
            Shape::Tuple(t) => t.first().map(|s| s.element_count()).unwrap_or(0),
            _ => 0,
        };
        if out_count != shape.kept {
            return Err(Error::invalid_argument(format!(
                "%{}: reduce result size",
                instr.name
            )));
        }
        Ok(if results.len() == 1 && instr.shape.is_array() {
            Value::One(results[0])
        } else {
            Value::Many(results)
        })
    }

    /// The dimensions of a reduce's first input, split by `dimensions`.
    fn reduce_shape(
        &self,
        instr: &HloInstruction,
        input: Operand,
        dimensions: &[usize],
    ) -> Result<ReduceShape> {
        let (_, in_dims) = array_dims(self.operand_shape(input)?, "a reduce input")?;
        if dimensions.iter().any(|&d| d >= in_dims.len()) {
            return Err(Error::invalid_argument(format!(
                "%{}: reduce dimension out of range",
                instr.name
            )));
        }
        let (red_dims, kept_dims): (Vec<usize>, Vec<usize>) =
            (0..in_dims.len()).partition(|d| dimensions.contains(d));
        let kept = kept_dims.iter().map(|&d| in_dims[d]).product();
        let red = red_dims.iter().map(|&d| in_dims[d]).product();
        Ok(ReduceShape {
            in_dims,
            kept_dims,
            red_dims,
            kept,
            red,
        })
    }

    /// A reduce's inputs (each of `count` elements), its inits (scalar
    /// leaves) and their types.
    fn reduce_inputs(
        &mut self,
        instr: &HloInstruction,
        ops: &[Operand],
        count: usize,
    ) -> Result<(Vec<ExprId>, Vec<Leaf>, Vec<ElementType>)> {
        let k = ops.len() / 2;
        let mut inputs = Vec::with_capacity(k);
        let mut inits = Vec::with_capacity(k);
        let mut types = Vec::with_capacity(k);
        for j in 0..k {
            let x = self.operand(ops[j])?;
            if self.count(x) != count {
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
        Ok((inputs, inits, types))
    }

    /// A reduce over size-1 dimensions only (`count` results) whose reducer
    /// is one binary op: `op(init, x)` elementwise. `None` for any other
    /// reducer.
    fn reduce_size_one(
        &mut self,
        to_apply: platform_api::hlo::CompId,
        ops: &[Operand],
        inputs: &[ExprId],
        types: &[ElementType],
        count: usize,
    ) -> Result<Option<Value>> {
        let simple = if inputs.len() == 1 {
            binary_reducer(self.graph.module, to_apply)
        } else {
            None
        };
        let op = match simple {
            Some((op, ty)) if ty == types[0] && self.ty(inputs[0]) == ty => op,
            _ => return Ok(None),
        };
        let init = self.operand(ops[1])?;
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
        let e = self.op(ElemOp::Binary(op), vec![splat, inputs[0]], types[0], count)?;
        Ok(Some(Value::One(e)))
    }

    /// The outer extent `A` when a reduce of `shape` runs as a grouped
    /// column reduction: its input is `[A, R, B]` in memory order (kept
    /// dimensions, then reduced ones, then kept ones, size-1 dimensions
    /// aside), so the domain is `A·R` rows of `B` and each group of `R`
    /// consecutive rows sums into its own result row, reading the input
    /// in place. Otherwise such a reduce reads its input through a
    /// transposed view, one strided element at a time.
    ///
    /// Only for the first reduction of a fusion, one of the same grouping
    /// after it, or one after row reductions of the same rows. After a
    /// grouped one, a row reduction of its rows is fine; any other column
    /// reduction is unsupported (the fusion is then compiled again without
    /// groups).
    fn column_groups(&self, shape: &ReduceShape) -> Result<Option<usize>> {
        if !self.allow_groups || self.rows_only {
            return Ok(None);
        }
        match (self.domain, middle_split(shape)) {
            (None, Some((a, b)))
                if a >= MIN_COL_GROUPS
                    && (MIN_GROUP_ROW..=MAX_ROW).contains(&b)
                    && shape.red > 0 =>
            {
                Ok(Some(a))
            }
            (None, _) => Ok(None),
            (Some(domain), Some((a, b)))
                if self.col_groups > 1 && a == self.col_groups && domain == (a * shape.red, b) =>
            {
                Ok(Some(a))
            }
            // Row reductions already split the domain into these rows (a
            // norm over the short minor dimension, broadcast back and summed
            // over the middle one): grouping keeps the fusion whole, where a
            // transposed read would not fit the rows. Short rows are fine
            // here, as there is no in-place alternative to lose against.
            (Some(domain), Some((a, b)))
                if self.col_groups == 1
                    && a >= MIN_COL_GROUPS
                    && b <= MAX_ROW
                    && shape.red > 0
                    && domain == (a * shape.red, b)
                    && self.reduces.iter().all(|r| !r.col) =>
            {
                Ok(Some(a))
            }
            (Some(_), _) => Ok(None),
        }
    }

    /// Whether a reduce of `shape` is a column reduction (otherwise a row
    /// reduction), given the domain earlier reductions fixed. A first
    /// reduction over middle dimensions that is not grouped (too few groups)
    /// is a column reduction when the kept inner dimensions hold at least
    /// [`MIN_GROUP_ROW`] elements: its transposed read is then runs of
    /// contiguous elements rather than one strided element at a time.
    fn reduce_orientation(&self, shape: &ReduceShape) -> Result<bool> {
        let (kept, red) = (shape.kept, shape.red);
        // Does the operand's order already put reduced dims last (row) or
        // first (column)? Size-1 dimensions do not count.
        let sig: Vec<bool> = (0..shape.in_dims.len())
            .filter(|&d| shape.in_dims[d] != 1)
            .map(|d| shape.red_dims.contains(&d))
            .collect();
        let natural_row = sig.windows(2).all(|w| !w[0] || w[1]);
        let natural_col = sig.windows(2).all(|w| w[0] || !w[1]);
        Ok(match self.domain {
            _ if self.rows_only => {
                if let Some((rows, row_len)) = self.domain {
                    if kept != rows || red != row_len {
                        return Err(self.unsupported("reductions of different shapes"));
                    }
                }
                false
            }
            None => {
                (natural_col && !natural_row)
                    || matches!(middle_split(shape), Some((_, b)) if b >= MIN_GROUP_ROW)
            }
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
        })
    }

    /// Reads a reduce's `inputs` through a transposed view when their
    /// dimensions are not in row order (kept, reduced; for a column
    /// reduction reduced, kept), and checks they can be reduced.
    fn reduce_in_row_order(
        &mut self,
        inputs: &mut [ExprId],
        shape: &ReduceShape,
        col: bool,
        grouped: bool,
    ) -> Result<()> {
        let (first, last) = if col {
            (&shape.red_dims, &shape.kept_dims)
        } else {
            (&shape.kept_dims, &shape.red_dims)
        };
        let perm: Vec<usize> = first.iter().chain(last).copied().collect();
        // A grouped column reduction reads its input in memory order.
        let identity = grouped
            || perm.iter().enumerate().all(|(a, &b)| a == b)
            || View::identity().apply(&shape.in_dims, &Movement::Transpose(&perm))?
                == View::identity();
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
                    &shape.in_dims,
                    &Movement::Transpose(&perm),
                    shape.kept * shape.red,
                    &mut memo,
                )?;
            }
        }
        for &x in inputs.iter() {
            match self.exprs[x].dom {
                Dom::Any | Dom::Full => {}
                _ => return Err(self.unsupported("a reduction of a reduction's result")),
            }
        }
        Ok(())
    }

    /// Records reduction `spec` over `rows × row_len` elements: its results'
    /// expressions (per row, or per column for a column reduction).
    fn reduce_results(
        &mut self,
        spec: ReduceSpec,
        rows: usize,
        row_len: usize,
    ) -> Result<Vec<ExprId>> {
        let reduce = self.reduces.len();
        let (col, types) = (spec.col, spec.types.clone());
        self.reduces.push(spec);
        (0..types.len())
            .map(|index| {
                let (kind, dom, count) = if col {
                    let count = row_len * self.col_groups;
                    (Kind::ColResult { reduce, index }, Dom::Col, count)
                } else {
                    (Kind::RowResult { reduce, index }, Dom::Outer, rows)
                };
                self.add(kind, types[index], count, dom, false)
            })
            .collect()
    }
}

/// `(A, B)` when a reduce's input is `[A, R, B]` in memory order: kept
/// dimensions, then every reduced one, then kept ones again (size-1
/// dimensions aside).
fn middle_split(shape: &ReduceShape) -> Option<(usize, usize)> {
    let dims: Vec<(usize, bool)> = (0..shape.in_dims.len())
        .filter(|&d| shape.in_dims[d] != 1)
        .map(|d| (shape.in_dims[d], shape.red_dims.contains(&d)))
        .collect();
    let first = dims.iter().position(|d| d.1)?;
    let last = dims.iter().rposition(|d| d.1)?;
    if first == 0 || last + 1 == dims.len() || !dims[first..=last].iter().all(|d| d.1) {
        return None;
    }
    let a = dims[..first].iter().map(|d| d.0).product();
    let b = dims[last + 1..].iter().map(|d| d.0).product();
    Some((a, b))
}

/// Integer types a `dynamic-slice` start may have.
fn is_index_type(ty: ElementType) -> bool {
    use ElementType::*;
    matches!(ty, S8 | S16 | S32 | S64 | U8 | U16 | U32 | U64)
}

/// The value of an integer of type `ty` held in the low bits of `bits`;
/// unsigned values past `i64::MAX` saturate (any start past the operand
/// clamps to the same place).
pub fn index_value(ty: ElementType, bits: u64) -> i64 {
    use ElementType::*;
    match ty {
        S8 => bits as u8 as i8 as i64,
        S16 => bits as u16 as i16 as i64,
        S32 => bits as u32 as i32 as i64,
        S64 => bits as i64,
        U8 => (bits as u8).into(),
        U16 => (bits as u16).into(),
        U32 => (bits as u32).into(),
        _ => i64::try_from(bits).unwrap_or(i64::MAX),
    }
}

impl DynamicOffset {
    /// The offset in elements, given each parameter's address.
    ///
    /// # Safety
    /// Each start parameter holds a value of its type at its offset.
    pub unsafe fn elements(&self, params: &[*const u8]) -> usize {
        let mut offset = 0;
        for ((start, &limit), &stride) in self.starts.iter().zip(&self.limits).zip(&self.strides) {
            let v = match *start {
                StartIndex::Const(v) => v,
                StartIndex::Param { param, ty, offset } => {
                    let mut bits = [0u8; 8];
                    let w = ty.byte_size().min(8);
                    // SAFETY: the caller's contract.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            params[param].add(offset * ty.byte_size()),
                            bits.as_mut_ptr(),
                            w,
                        )
                    };
                    index_value(ty, u64::from_le_bytes(bits))
                }
            };
            offset += (v.clamp(0, limit as i64) as usize) * stride;
        }
        offset
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
    /// See [`Leaf::dynamic`].
    pub dynamic: Option<usize>,
    pub width: usize,
    /// For an iota: writes the values.
    pub index: Option<ops::IndexGen>,
    /// A view that reads each value a few times in a row
    /// ([`View::repeated_inner`]): the distinct values' view and the count.
    /// Loaded as the distinct values, then expanded, instead of one short
    /// fill per value.
    pub repeated: Option<(View, usize)>,
    /// A view that reads short contiguous runs ([`View::short_runs`]): its
    /// stage's dimensions, strides and base, walked by a loader that copies
    /// each run inline instead of one gather call per run.
    pub short_runs: Option<(Vec<usize>, Vec<isize>, isize)>,
    /// A view that reads one short run again and again ([`View::periodic`]):
    /// its length and offset. Every block of such a leaf is a window of the
    /// run repeated, so the repetition is written once per task and each
    /// block read in place from it at its phase, instead of copied anew.
    pub periodic: Option<(usize, isize)>,
}

/// Longest run a [`LeafPlan::periodic`] leaf repeats.
pub const PERIOD_MAX: usize = 1024;

/// Longest contiguous run loaded through [`LeafPlan::short_runs`].
pub const SHORT_RUN_MAX: usize = 16;

/// Most repeats of one value loaded through [`LeafPlan::repeated`]; longer
/// fills are cheap enough one by one.
pub const REPEAT_EXPAND_MAX: usize = 32;

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
        /// The op as generated code can run it (see [`super::jit`]).
        jit: Option<super::jit::JitOp>,
    },
    /// Consecutive `Op` steps run as one loop of generated code.
    Run(Box<super::jit::Run>),
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
    /// A grouped column reduction of one simple result that is an output of
    /// its own type and size: that output, which holds each group's partial
    /// row at the group's own result positions (started from the init value)
    /// instead of the scratch, so the combine has nothing left to add.
    pub partials_in_output: Option<usize>,
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
    /// Column reductions' groups: 1, or `G` when the rows fall into `G`
    /// groups of `rows / G` consecutive rows, each reduced into its own
    /// result row (a reduction of `[G, R, B]` over `R`). Column-phase
    /// positions then run over `G · row_len` results, and each task takes
    /// whole groups, so no partial rows are combined across tasks.
    pub col_groups: usize,
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
    /// The offsets of the fusion's dynamic slices (see [`Leaf::dynamic`]).
    pub dynamic_offsets: Vec<DynamicOffset>,
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
    /// Graph nodes whose operation, pushed below a broadcast, runs on at
    /// least twice (and [`AMPLIFY_MIN`] more) as many elements as the node
    /// has: a batch norm's per-channel `rsqrt(var + eps)` evaluated once per
    /// pixel. Cheaper computed on its own and read through the broadcast.
    pub amplified: Vec<usize>,
    /// Parameters read only at their own positions in the full domain, in
    /// the step that writes the single output's block: the output may be
    /// written over them.
    pub in_place_params: Vec<usize>,
    /// Every output that may be written over a parameter, with the parameter
    /// (see [`in_place_outputs`]): a superset of `in_place_params`' pairs.
    pub in_place_outputs: Vec<InPlaceOutput>,
    /// Parameters with one element per domain position, read only at their
    /// own positions: a row of the domain reads only the same row of them.
    pub own_position_params: Vec<usize>,
}

impl BlockProgram {
    /// Turns runs of simple per-block steps into generated code
    /// ([`super::jit::form_runs`]). Done last: the in-place analyses above
    /// read the steps one by one, and a run keeps their order of reads and
    /// writes at each position.
    pub fn form_runs(&mut self) {
        let elsewhere: Vec<usize> = self
            .finalize
            .iter()
            .chain(&self.col_steps)
            .flat_map(|s| step_slots(s).0)
            .collect();
        super::jit::form_runs(&mut self.steps, &self.slots, &elsewhere);
    }

    /// Whether any range of whole rows can run on its own
    /// ([`super::exec::run_rows`]): rows mode, one output, nothing combined
    /// across rows (no column reductions, no chunked rows, no scratch), no
    /// dynamic slices.
    pub fn runs_by_rows(&self) -> bool {
        matches!(self.mode, Mode::Rows { .. }) && self.one_output_without_cross_terms()
    }

    /// One output, nothing combined across rows (no column reductions, no
    /// finalize, no scratch), no dynamic slices.
    fn one_output_without_cross_terms(&self) -> bool {
        self.col_steps.is_empty()
            && self.finalize.is_empty()
            && self.col_groups == 1
            && self.scratch_bytes == 0
            && self.dynamic_offsets.is_empty()
            && self.outputs.len() == 1
    }
}

impl BlockProgram {
    /// Whether any range of positions can run on its own
    /// ([`super::exec::run_positions`]): one domain row, one output, no
    /// reductions, no scratch, no dynamic slices.
    pub fn runs_by_positions(&self) -> bool {
        self.rows == 1 && self.reduces.is_empty() && self.one_output_without_cross_terms()
    }
}

/// Output `output` may be written over parameter `param`'s buffer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InPlaceOutput {
    pub output: usize,
    pub param: usize,
    /// The single output is written by the last step, reading each element
    /// before writing it: the same buffer may also be another parameter.
    /// Otherwise the buffer must be this parameter only.
    pub elementwise: bool,
}

pub(crate) fn kernel_for(
    op: &ElemOp,
    arg_types: &[ElementType],
    ty: ElementType,
) -> Result<ops::Kernel> {
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
        ElemOp::ShiftPairOr => ops::shift_pair_or(ty),
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
    /// Graph nodes whose operation runs at a broadcast's size (see
    /// [`BlockProgram::amplified`]).
    amplified: std::collections::BTreeSet<usize>,
    /// Parameters read other than at their own full-domain positions.
    param_scattered: Vec<bool>,
}

impl<'b, 'g, 'a> Scheduler<'b, 'g, 'a> {
    /// Schedules `outputs` over `rows × row_len` elements, with rows whole
    /// or (`chunked`) in chunks.
    fn run(
        b: &'b Builder<'g, 'a>,
        outputs: &[ExprId],
        rows: usize,
        row_len: usize,
        chunked: bool,
    ) -> Result<Self> {
        let mut s = Scheduler {
            b,
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
            amplified: Default::default(),
            param_scattered: vec![false; b.graph.params.len()],
        };
        for (k, &e) in outputs.iter().enumerate() {
            s.output(k, e)?;
        }
        Ok(s)
    }

    /// Homes every slot not written into an output in the register file:
    /// a linear scan over uniform, block, finalize and column steps, reusing
    /// a register once its slot's last reader has run. Returns the register
    /// file's size in bytes.
    fn allocate_registers(&mut self, caps: &Capacities) -> usize {
        let order: Vec<&Step> = self
            .uniform_steps
            .iter()
            .chain(&self.steps)
            .chain(&self.finalize)
            .chain(&self.col_steps)
            .collect();
        let n_slots = self.slots.len();
        let last_use = last_uses(&order, n_slots);
        let mut free: Vec<(usize, usize)> = Vec::new(); // (bytes, offset)
        let mut regfile_bytes = 0usize;
        let mut assigned = vec![false; n_slots];
        for (i, step) in order.iter().enumerate() {
            let (_, writes) = step_slots(step);
            for s in writes {
                if assigned[s] || matches!(self.slots[s].home, Home::Output(_)) {
                    assigned[s] = true;
                    continue;
                }
                let need = caps.slot_bytes(&self.slots[s]);
                let offset = match free.iter().position(|&(b, _)| b == need) {
                    Some(p) => free.swap_remove(p).1,
                    None => {
                        regfile_bytes += need;
                        regfile_bytes - need
                    }
                };
                self.slots[s].home = Home::Register(offset);
                assigned[s] = true;
            }
            // Free the registers whose last use is this step (uniform slots live
            // for the whole task).
            for s in 0..n_slots {
                if assigned[s]
                    && last_use[s] == i
                    && self.slots[s].dom != SlotDom::Uniform
                    && i >= self.uniform_steps.len()
                {
                    if let Home::Register(off) = self.slots[s].home {
                        free.push((caps.slot_bytes(&self.slots[s]), off));
                    }
                }
            }
        }
        regfile_bytes
    }

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
            dynamic: leaf.dynamic,
            width: ty.byte_size(),
            repeated: match (&index, ty.byte_size()) {
                (None, 1 | 2 | 4 | 8 | 16) => leaf.view.repeated_inner(REPEAT_EXPAND_MAX),
                _ => None,
            },
            short_runs: match (&index, ty.byte_size()) {
                (None, 1 | 2 | 4 | 8 | 16) => leaf.view.short_runs(SHORT_RUN_MAX),
                _ => None,
            },
            periodic: match index {
                None => leaf.view.periodic(PERIOD_MAX),
                Some(_) => None,
            },
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
            SlotDom::Col => Some(self.row_len * self.b.col_groups),
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
                // A row repeated down the block is read in place (long rows)
                // or expanded once per task (short ones, `exec`), never
                // gathered again for every block.
                let repeat = match (dom, &leaf.source) {
                    (SlotDom::Full, Source::Param(_) | Source::Constant(_)) => {
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
                let jit = super::jit::JitOp::of(&op, &types, ty);
                if let Some(origin) = self.b.exprs[e].origin {
                    *self.origin_instances.entry(origin).or_insert(0) += 1;
                    let own = self.b.graph.nodes[origin].instr.shape.element_count();
                    let count = self.b.exprs[e].key.count;
                    if dom != SlotDom::Uniform && count >= 2 * own && count - own >= AMPLIFY_MIN {
                        self.amplified.insert(origin);
                    }
                }
                let slot = self.new_slot(ty, dom, true);
                self.push(
                    dom,
                    Step::Op {
                        slot,
                        kernel,
                        args,
                        jit,
                    },
                );
                slot
            }
            Kind::RowResult { reduce, index } => {
                let results = self.row_reduce(reduce)?;
                results[index]
            }
            Kind::RowBroadcast(src) => {
                self.needs_whole_rows = true;
                let src = self.need(src, SlotDom::Outer)?;
                // The step is lazy (it writes no block, readers expand the
                // row values), so the slot cannot live in an output: a fusion
                // whose root is the broadcast stores it instead.
                let slot = self.new_slot(ty, SlotDom::Full, false);
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

/// The slots a step reads and the slots it writes.
pub(super) fn step_slots(step: &Step) -> (Vec<usize>, Vec<usize>) {
    match step {
        Step::Run(run) => {
            let reads = run.inputs.iter().map(|p| p.slot).collect();
            let writes = run.steps.iter().flat_map(|s| step_slots(s).1).collect();
            (reads, writes)
        }
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

/// The index in `order` of the last step reading or writing each slot.
fn last_uses(order: &[&Step], n_slots: usize) -> Vec<usize> {
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
    last_use
}

/// Marks the error of a column reduction whose result is used in the fusion.
const COLUMN_RESULT_USED: &str = "a column reduction's result is used inside the fusion";

/// Compiles a fused graph into a block program.
///
/// A fusion that fails with grouped column reductions (one whose result is
/// used inside the fusion, or a second reduction of another shape) is
/// compiled again without them, and one whose column reduction's result is
/// used inside it once more with row reductions only.
pub fn compile(graph: &FusedGraph<'_>) -> Result<BlockProgram> {
    let (first, grouped) = compile_with(graph, false, true);
    let ungrouped = match first {
        Err(_) if grouped => compile_with(graph, false, false).0,
        other => other,
    };
    match ungrouped {
        Err(e) if e.message().contains(COLUMN_RESULT_USED) => compile_with(graph, true, false).0,
        other => other,
    }
}

/// Compiles with the given reduction orientations allowed; also says
/// whether a grouped column reduction was formed.
fn compile_with(
    graph: &FusedGraph<'_>,
    rows_only: bool,
    allow_groups: bool,
) -> (Result<BlockProgram>, bool) {
    let mut b = Builder::new(graph, rows_only, allow_groups);
    let program = compile_built(&mut b);
    (program, b.col_groups > 1)
}

fn compile_built(b: &mut Builder<'_, '_>) -> Result<BlockProgram> {
    let graph = b.graph;
    b.build_nodes()?;
    let outputs = b.outputs()?;
    let (rows, row_len) = match b.domain {
        Some(d) => d,
        None => (1, b.count(outputs[0])),
    };
    let block = if b.reduces.is_empty() {
        elementwise_block(b.exprs.iter().map(|e| e.key.ty.byte_size()).max())
    } else {
        BLOCK
    };
    let (mut sched, mode) = schedule(b, &outputs, rows, row_len, block)?;
    let col_groups = b.col_groups;
    let caps = Capacities::new(mode, rows, row_len, row_len * col_groups, block);
    hoist_loads(&mut sched.steps);
    let regfile_bytes = sched.allocate_registers(&caps);
    let total = rows * row_len;
    let work = total.max(rows) * (sched.steps.len() + sched.finalize.len()).max(1);
    // A grouped column reduction's tasks take whole groups.
    let task_units = if col_groups > 1 {
        col_groups
    } else {
        caps.units
    };
    let n_tasks = task_count(work, task_units);
    let out_plans = outputs
        .iter()
        .map(|&e| OutputPlan {
            count: b.count(e),
            ty: b.ty(e),
        })
        .collect::<Vec<_>>();
    let in_place_params = in_place_params(graph, &sched, mode, &out_plans);
    let in_place_outputs = in_place_outputs(graph, &sched, mode, &out_plans, &in_place_params);
    let homes = grouped_partial_homes(b, &sched, &out_plans, &in_place_outputs);
    let (reduces, scratch_bytes) = reduce_plans(b, &mut sched, mode, n_tasks, caps.units, &homes)?;
    let duplicated = sched
        .origin_instances
        .iter()
        .filter(|&(_, &n)| n > 1)
        .map(|(&o, _)| o)
        .collect();
    let fetch_ahead = fetch_ahead(b, &sched);
    let own_position_params = (0..graph.params.len())
        .filter(|&k| !sched.param_scattered[k] && graph.params[k].element_count() == total)
        .collect();
    Ok(BlockProgram {
        name: graph.name.clone(),
        rows,
        row_len,
        col_groups,
        mode,
        cap_full: caps.full,
        cap_rows: caps.rows,
        slots: sched.slots,
        uniform_steps: sched.uniform_steps,
        steps: sched.steps,
        finalize: sched.finalize,
        col_steps: sched.col_steps,
        cap_cols: caps.cols,
        leaves: sched.leaves,
        dynamic_offsets: b.dynamic_offsets.clone(),
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
        amplified: sched.amplified.iter().copied().collect(),
        in_place_params,
        in_place_outputs,
        own_position_params,
    })
}

impl<'g, 'a> Builder<'g, 'a> {
    fn new(graph: &'g FusedGraph<'a>, rows_only: bool, allow_groups: bool) -> Self {
        Builder {
            rows_only,
            allow_groups,
            col_groups: 1,
            dynamic_offsets: Vec::new(),
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
        }
    }

    /// Lowers every node of the graph, in order.
    fn build_nodes(&mut self) -> Result<()> {
        for i in 0..self.graph.nodes.len() {
            self.current = Some(i);
            let v = self.node(i)?;
            self.values.push(Some(v));
        }
        self.current = None;
        Ok(())
    }

    /// The fusion's outputs, with tuple-valued nodes (variadic reduce roots)
    /// expanded.
    fn outputs(&mut self) -> Result<Vec<ExprId>> {
        let mut outputs: Vec<ExprId> = Vec::new();
        for &o in &self.graph.outputs {
            match o {
                Operand::Node(n) => match &self.values[n] {
                    Some(Value::One(e)) => outputs.push(*e),
                    Some(Value::Many(es)) => outputs.extend(es.iter().copied()),
                    None => return Err(Error::internal("fused output undefined")),
                },
                Operand::Param(_) => outputs.push(self.operand(o)?),
            }
        }
        if outputs.is_empty() {
            return Err(self.unsupported("a fusion without outputs"));
        }
        Ok(outputs)
    }
}

/// Moves every `Load` among per-block steps up to the start of the stretch
/// of loads and elementwise ops it sits in (keeping the loads' order and the
/// ops'), so that a read between two ops does not split them into two
/// passes over the block: layernorm's `(x - mean) * rstd * g + b` reads `g`
/// and `b` after the first product, and with the loads first the whole
/// expression is one generated run ([`super::jit`]). A load has no operand
/// but its leaf, which no step of the fusion writes, so it may run earlier;
/// registers are allocated after this.
fn hoist_loads(steps: &mut [Step]) {
    let movable = |s: &Step| matches!(s, Step::Load { .. } | Step::Op { jit: Some(_), .. });
    let mut i = 0;
    while i < steps.len() {
        let len = steps[i..].iter().take_while(|s| movable(s)).count();
        // Stable: loads first, each group in its order.
        steps[i..i + len].sort_by_key(|s| !matches!(s, Step::Load { .. }));
        i += len.max(1);
    }
}

/// Schedules the outputs over `rows × row_len` and chooses how blocks of
/// `block` elements cover them.
fn schedule<'b, 'g, 'a>(
    b: &'b Builder<'g, 'a>,
    outputs: &[ExprId],
    rows: usize,
    row_len: usize,
    block: usize,
) -> Result<(Scheduler<'b, 'g, 'a>, Mode)> {
    // First pass: schedule assuming whole rows fit; learn whether a
    // reduction is broadcast back (then rows must be whole).
    let sched = Scheduler::run(b, outputs, rows, row_len, false)?;
    let has_col = b.reduces.iter().any(|r| r.col);
    if row_len <= block {
        let rows_per_block = (block / row_len.max(1)).clamp(1, rows.max(1));
        Ok((sched, Mode::Rows { rows_per_block }))
    } else if sched.needs_whole_rows || has_col {
        if row_len > MAX_ROW {
            return Err(b.unsupported(format!(
                "rows of {row_len} elements are too long to hold whole in a block"
            )));
        }
        Ok((sched, Mode::Rows { rows_per_block: 1 }))
    } else {
        let chunks_per_row = row_len.div_ceil(block);
        let sched = Scheduler::run(b, outputs, rows, row_len, true)?;
        let mode = Mode::Chunks {
            chunk_len: row_len.div_ceil(chunks_per_row),
            chunks_per_row,
        };
        Ok((sched, mode))
    }
}

/// Elements a register of each slot domain holds, and the units (rows, or
/// chunks of rows) the full domain is split into.
struct Capacities {
    full: usize,
    rows: usize,
    cols: usize,
    uniform: usize,
    units: usize,
}

impl Capacities {
    /// `col_len`: the elements of a column reduction's results.
    fn new(mode: Mode, rows: usize, row_len: usize, col_len: usize, block: usize) -> Self {
        let (full, cap_rows, units) = match mode {
            Mode::Rows { rows_per_block } => (rows_per_block * row_len, rows_per_block, rows),
            Mode::Chunks {
                chunk_len,
                chunks_per_row,
            } => (chunk_len, rows.clamp(1, block), rows * chunks_per_row),
        };
        let cols = col_len.clamp(1, block);
        Capacities {
            full,
            rows: cap_rows,
            cols,
            uniform: full.max(cap_rows).max(cols).max(1),
            units,
        }
    }

    /// Bytes of a slot's register (whole cache lines).
    fn slot_bytes(&self, slot: &Slot) -> usize {
        let elems = match slot.dom {
            SlotDom::Full => self.full,
            SlotDom::Outer => self.rows,
            SlotDom::Col => self.cols,
            SlotDom::Uniform => self.uniform,
        };
        (elems * slot.width).div_ceil(64).max(1) * 64
    }
}

/// Parallel tasks for `work` element-steps over `units` rows or chunks.
fn task_count(work: usize, units: usize) -> usize {
    if units == 0 {
        0
    } else {
        (work / TASK_WORK).clamp(1, MAX_TASKS).min(units)
    }
}

/// The combiner of a reduction: typed folds for one binary op, the scalar
/// evaluator otherwise.
fn reducer(b: &Builder<'_, '_>, spec: &ReduceSpec) -> Result<Reducer> {
    let module = b.graph.module;
    let reducer = match (spec.types.len(), binary_reducer(module, spec.to_apply)) {
        (1, Some((op, ty))) if ty == spec.types[0] => Reducer::Simple {
            op,
            fold: ops::fold(op, ty)?,
            accumulate: ops::accumulate(op, ty)?,
        },
        _ => Reducer::Program(Arc::new(ScalarProgram::compile(module, spec.to_apply)?)),
    };
    if let Reducer::Program(p) = &reducer {
        if p.param_count() != 2 * spec.types.len() || p.output_types() != spec.types {
            return Err(b.unsupported("a reducer whose signature does not match its reduce"));
        }
    }
    Ok(reducer)
}

/// Reductions: reducers, init leaves and scratch for partial values; with
/// the scratch's size in bytes.
fn reduce_plans(
    b: &Builder<'_, '_>,
    sched: &mut Scheduler<'_, '_, '_>,
    mode: Mode,
    n_tasks: usize,
    units: usize,
    homes: &[Option<usize>],
) -> Result<(Vec<ReducePlan>, usize)> {
    let mut scratch_bytes = 0usize;
    let mut reduces = Vec::with_capacity(b.reduces.len());
    for (r, spec) in b.reduces.iter().enumerate() {
        let reducer = reducer(b, spec)?;
        let partials_in_output = match reducer {
            Reducer::Simple { .. } => homes.get(r).copied().flatten(),
            Reducer::Program(_) => None,
        };
        let mut inits = Vec::new();
        for (leaf, &ty) in spec.inits.iter().zip(&spec.types) {
            inits.push(sched.leaf_plan(leaf, ty)?);
        }
        let mut partials = Vec::new();
        for &ty in &spec.types {
            let per = if partials_in_output.is_some() {
                0
            } else if spec.col && b.col_groups > 1 {
                // One result row per group, summed by the task owning it.
                b.col_groups * sched.row_len
            } else if spec.col {
                n_tasks * sched.row_len
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
            partials_in_output,
        });
    }
    Ok((reduces, scratch_bytes))
}

/// Per reduction, the output that may hold its partial rows
/// ([`ReducePlan::partials_in_output`]): a grouped column reduction (every
/// group at least one row, each group owned by one task) with one result,
/// stored whole and unchanged to an output of its type and size that no
/// parameter shares a buffer with (it is written while the rows are read).
fn grouped_partial_homes(
    b: &Builder<'_, '_>,
    sched: &Scheduler<'_, '_, '_>,
    outputs: &[OutputPlan],
    in_place: &[InPlaceOutput],
) -> Vec<Option<usize>> {
    let groups = b.col_groups;
    let col_len = sched.row_len * groups;
    let grouped = groups > 1 && sched.rows >= groups && sched.rows.is_multiple_of(groups);
    (0..b.reduces.len())
        .map(|r| {
            let spec = &b.reduces[r];
            if !grouped || !spec.col || spec.types.len() != 1 {
                return None;
            }
            let slot = *sched.col_results.get(r)?.as_ref()?.first()?;
            let output = match sched.slots[slot].home {
                Home::Output(k) => k,
                _ => sched.col_steps.iter().find_map(|step| match step {
                    Step::Store {
                        slot: s, output, ..
                    } if *s == slot => Some(*output),
                    _ => None,
                })?,
            };
            let plan = outputs.get(output)?;
            (plan.count == col_len
                && plan.ty == spec.types[0]
                && !in_place.iter().any(|p| p.output == output))
            .then_some(output)
        })
        .collect()
}

/// Parameters whose buffer the single full-domain output may be written
/// over (see [`BlockProgram::in_place_params`]).
fn in_place_params(
    graph: &FusedGraph<'_>,
    sched: &Scheduler<'_, '_, '_>,
    mode: Mode,
    outputs: &[OutputPlan],
) -> Vec<usize> {
    // In place: one full-domain output, written by the last step of a block.
    let single_full_output = outputs.len() == 1
        && matches!(mode, Mode::Rows { .. } | Mode::Chunks { .. })
        && sched.finalize.is_empty()
        && sched.col_steps.is_empty()
        && matches!(sched.steps.last(), Some(Step::Op { slot, .. }) if sched.slots[*slot].home == Home::Output(0) && sched.slots[*slot].dom == SlotDom::Full);
    if !single_full_output {
        return Vec::new();
    }
    let total = sched.rows * sched.row_len;
    (0..graph.params.len())
        .filter(|&k| {
            !sched.param_scattered[k]
                && graph.params[k].element_count() == total
                && graph.params[k].element_type() == Some(outputs[0].ty)
        })
        .collect()
}

/// The (output, parameter) pairs whose buffers may be one (see
/// [`BlockProgram::in_place_outputs`]).
///
/// Beyond the single-output rule of [`in_place_params`]: in a multi-output
/// fusion (a loop body updating several arrays, each from its old value)
/// output `o` may overwrite parameter `k` when `k` is read only at each
/// element's own position in the full domain, and every step reading a value
/// loaded from `k` runs before the block's first write of `o`, or is that
/// write, an elementwise kernel reading each element before writing it.
/// A block's reads of a parameter may point straight into its memory, so it
/// is the last *use* of a loaded value that counts, not the load.
fn in_place_outputs(
    graph: &FusedGraph<'_>,
    sched: &Scheduler<'_, '_, '_>,
    mode: Mode,
    outputs: &[OutputPlan],
    single: &[usize],
) -> Vec<InPlaceOutput> {
    let mut pairs: Vec<InPlaceOutput> = single
        .iter()
        .map(|&param| InPlaceOutput {
            output: 0,
            param,
            elementwise: true,
        })
        .collect();
    if outputs.len() < 2 || !matches!(mode, Mode::Rows { .. } | Mode::Chunks { .. }) {
        return pairs;
    }
    // Steps after the blocks (a column reduction's combine, a chunked row's)
    // read partials, not the outputs' blocks; a parameter they load is left
    // alone all the same.
    let late_loads: Vec<usize> = sched
        .finalize
        .iter()
        .chain(&sched.col_steps)
        .filter_map(|step| match step {
            Step::Load { leaf, .. } => match sched.leaves[*leaf].source {
                Source::Param(k) => Some(k),
                _ => None,
            },
            _ => None,
        })
        .collect();
    let total = sched.rows * sched.row_len;
    let n_params = graph.params.len();
    // The parameter each slot was loaded from, and each parameter's last use.
    let mut loaded_from: Vec<Option<usize>> = vec![None; sched.slots.len()];
    let mut last_use: Vec<Option<usize>> = vec![None; n_params];
    // Per output: the first step writing it, and whether every write is a
    // full-domain block write.
    let mut first_write: Vec<Option<usize>> = vec![None; outputs.len()];
    let mut full_writes = vec![true; outputs.len()];
    let mut note_write = |o: usize, at: usize, full: bool| {
        if let Some(w) = first_write.get_mut(o) {
            w.get_or_insert(at);
            full_writes[o] &= full;
        }
    };
    for (at, step) in sched.steps.iter().enumerate() {
        let reads: &[usize] = match step {
            Step::Load { slot, leaf, .. } => {
                if let Source::Param(k) = sched.leaves[*leaf].source {
                    loaded_from[*slot] = Some(k);
                    last_use[k] = Some(at);
                }
                &[]
            }
            Step::Op { slot, args, .. } => {
                if let Home::Output(o) = sched.slots[*slot].home {
                    note_write(o, at, sched.slots[*slot].dom == SlotDom::Full);
                }
                args
            }
            Step::RowFold { operands, .. } | Step::ColAccumulate { operands, .. } => operands,
            Step::RowBroadcast { src, .. } => std::slice::from_ref(src),
            Step::Store { slot, output, dom } => {
                note_write(*output, at, *dom == SlotDom::Full);
                std::slice::from_ref(slot)
            }
            Step::RowCombine { .. } | Step::ColCombine { .. } => &[],
            // Runs are formed after this analysis; were one here, no output
            // would be written over a parameter.
            Step::Run(_) => {
                for o in 0..outputs.len() {
                    note_write(o, at, false);
                }
                &[]
            }
        };
        for &s in reads {
            if let Some(k) = loaded_from[s] {
                last_use[k] = Some(at);
            }
        }
    }
    for (o, out) in outputs.iter().enumerate() {
        let Some(w) = first_write[o] else { continue };
        if !full_writes[o] || out.count != total {
            continue;
        }
        let write_is_op = matches!(sched.steps[w], Step::Op { .. });
        for (k, used) in last_use.iter().enumerate() {
            let Some(used) = *used else { continue };
            let fits = !sched.param_scattered[k]
                && !late_loads.contains(&k)
                && graph.params[k].element_count() == total
                && graph.params[k].element_type().map(|t| t.byte_size())
                    == Some(out.ty.byte_size());
            let before = used < w || (used == w && write_is_op);
            if fits && before && !pairs.iter().any(|p| p.output == o && p.param == k) {
                pairs.push(InPlaceOutput {
                    output: o,
                    param: k,
                    elementwise: false,
                });
            }
        }
    }
    pairs
}

/// The leaves each block fetches ahead for the next one (see
/// [`BlockProgram::fetch_ahead`]).
/// Smallest leaf source (bytes) a fusion fetches ahead.
const FETCH_AHEAD_MIN_BYTES: usize = 256 << 10;

/// The bytes behind a leaf's source.
fn source_bytes(b: &Builder<'_, '_>, source: &Source) -> usize {
    match source {
        Source::Param(k) => b
            .graph
            .params
            .get(*k)
            .map_or(0, |s| s.leaves().iter().map(|(_, a)| a.byte_size()).sum()),
        Source::Constant(c) => b.constants.get(*c).map_or(0, |c| c.as_bytes().len()),
        Source::Index => 0,
    }
}

fn fetch_ahead(b: &Builder<'_, '_>, sched: &Scheduler<'_, '_, '_>) -> Vec<FetchLeaf> {
    // Prefetching pays where a block's compute passes leave the memory idle;
    // a reduction or a short chain is one streaming pass the hardware
    // prefetcher already keeps fed, and extra fetches only compete with it
    // (reduce_4096x4096 ran 4.4 -> 8.0 ms with them).
    let op_steps = sched
        .steps
        .iter()
        .filter(|s| matches!(s, Step::Op { .. }))
        .count();
    if !b.reduces.is_empty() || op_steps < FETCH_AHEAD_MIN_OPS {
        return Vec::new();
    }
    sched
        .steps
        .iter()
        .filter_map(|s| match s {
            // A leaf whose whole source fits in L2 (a per-channel scale
            // broadcast over the block) stays cached after the first
            // blocks: fetching it again only costs the walk over its runs.
            Step::Load { slot, leaf, .. }
                if sched.leaves[*leaf].index.is_none()
                    && source_bytes(b, &sched.leaves[*leaf].source) >= FETCH_AHEAD_MIN_BYTES =>
            {
                Some(FetchLeaf {
                    leaf: *leaf,
                    dom: sched.slots[*slot].dom,
                })
            }
            _ => None,
        })
        .collect()
}
