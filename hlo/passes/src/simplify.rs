//! Algebraic simplification that keeps every bit of every result.
//!
//! Each rule below replaces an instruction by a cheaper equivalent, and each is
//! exact for every input of every type it is applied to — NaN payloads, signed
//! zeros, integer wrap-around included; the comment on each rule says why.
//! Rules that hold only approximately (reassociation, `x + 0 → x` on floats,
//! `x * 0 → 0`, `x - x → 0`, ...) are not here.
//!
//! Data movement (pure rearrangement of elements, exact for any type):
//! * `copy(x) → x`: a copy is the identity on values.
//! * `reshape(x) → x` when the shapes agree; `reshape(reshape(x)) → reshape(x)`
//!   (row-major order is preserved by each, so by the composition);
//!   `bitcast` between row-major shapes of one element type → `reshape`.
//! * `transpose` by the identity → `x`; `transpose(transpose(x))` → one
//!   transpose by the composed permutation; a transpose that only moves size-1
//!   dimensions → `reshape` (the row-major order of the elements is unchanged).
//! * `broadcast` to the same shape with dimensions `0..n` → `x`;
//!   `broadcast(broadcast(x))` → one broadcast with composed dimensions; a
//!   broadcast whose operand has size-1 dimensions broadcasts the operand with
//!   those removed (canonical form: a broadcast of a scalar has `dimensions={}`).
//! * `reshape`, `transpose`, `slice`, `reverse` of a broadcast scalar → a
//!   broadcast of that scalar (every element is the scalar either way).
//! * `slice` of the full range → `x`; `slice(slice(x))` → one slice; a slice of
//!   a `concatenate` inside one operand → a slice of that operand.
//! * `dynamic-slice` with constant start indices → `slice` with the starts
//!   clamped as `dynamic-slice` clamps them.
//! * `pad` with no padding → `x`.
//! * `concatenate` of one operand → it; empty operands dropped; nested
//!   concatenates along the same dimension flattened.
//! * `reverse` of no (or only size-1) dimensions → `x`; `reverse(reverse(x))` →
//!   reverse of the dimensions reversed an odd number of times.
//! * `reduce(x, init)` over dimensions of size 1 only, with a reducer that is
//!   one binary op of its two parameters → that op of `broadcast(init)` and
//!   `reshape(x)`, in the reducer's operand order: a reduction of one element
//!   combines the init value with it once, which is this op (JAX's `take`
//!   reduces its bounds check over the size-1 index vector dimension).
//! * `dot(transpose(a), b)`, on either side → `dot(a, b)` with that side's
//!   batch and contracting dimensions renumbered, when the transpose keeps the
//!   operand's free dimensions in order (the same products in the same order).
//! * `get-tuple-element(tuple(...), i)` → operand `i`;
//!   `tuple(gte(t, 0), ..., gte(t, n-1))` → `t` for an `n`-tuple `t`.
//!
//! Element-wise (per type):
//! * `convert` to the same type → `x`; `convert(convert(x))` back to `x`'s
//!   integer/pred type through a type that holds every value of it → `x`.
//! * `select(p, a, a) → a`; `select` with a constant predicate → the branch it
//!   picks; `select(not(p), a, b) → select(p, b, a)`.
//! * An element-wise op on broadcast scalars → the op on the scalars, broadcast
//!   (the same function on the same values, computed once).
//! * `negate(negate(x)) → x`: integer negation wraps (`-(-MIN) = MIN`), float
//!   negation flips the sign bit only.
//! * `not(not(x)) → x` (bitwise, integers and pred).
//! * `abs(abs(x)) → abs(x)`, `abs(negate(x)) → abs(x)` (integers and floats:
//!   float `abs` clears the sign bit; integer `abs(MIN) = MIN = abs(-MIN)`).
//! * `maximum(x, x)`, `minimum(x, x)`, `and(x, x)`, `or(x, x)` → `x`: each
//!   returns one of its operands' bits.
//! * Integers: `x + 0`, `x - 0`, `x * 1`, `x / 1`, `x | 0`, `x ^ 0`,
//!   `x & ~0`, `x << 0`, `x >> 0`, `max(x, MIN)`, `min(x, MAX)` → `x`;
//!   `x * 0`, `x & 0` → the zero operand; `x | ~0` → the all-ones operand.
//!   Two's-complement arithmetic makes each an identity with no exception.
//! * `pred`: `and`/`multiply`/`minimum` with `true` → `x`, with `false` → that
//!   `false`; `or`/`add`/`maximum` with `false` → `x`, with `true` → that `true`;
//!   `xor` with `false` → `x`.
//! * Floats: `maximum(x, -inf)`, `minimum(x, +inf)` → `x` (a NaN `x` is
//!   returned as is; otherwise `x` is the larger, or smaller, of the two).
//! * Only with [`SimplifierOptions::nan_payloads_unspecified`]:
//!   `transpose(dot(a, b))` that swaps the product's free dimensions →
//!   `dot(b, a)`, when the transpose is the product's one user (the product
//!   writes the transposed result itself: no copy, no second buffer).
//! * Floats, only with [`SimplifierOptions::assume_no_signaling_nans`]:
//!   `x * 1`, `x / 1`, `x - (+0)`, `x + (-0)` → `x`. These are exact for every
//!   value except a signaling NaN, which IEEE arithmetic returns quieted (one
//!   payload bit set), so they are off by default.
//!
//! Where a rule would replace an instruction by one with another layout, it is
//! not applied (a layout-sensitive `bitcast` user would read other bytes); after
//! [`super::LayoutNormalization`] there are no layouts.
//!
//! One sweep visits the instructions in order, new ones included; a rule's
//! output is simplified further when the sweep reaches it. Run the pass in a
//! fixed-point group to catch what only later rewrites expose.

use super::layout::same_layouts;
use super::HloPass;
use hlo_ir::analysis::combiner::{binary_combiner, BinaryCombiner};
use hlo_ir::error::Result;
use hlo_ir::native::Scalar;
use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
use hlo_ir::shape::{ArrayShape, ElementType, Shape};
use hlo_ir::{BinaryOp, HloModule, InstrId, Op, Opcode, SliceDim, UnaryOp};
use std::collections::HashMap;

/// Choices about rules that are not exact for every input.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SimplifierOptions {
    /// Allow float rules that are exact except that they return a signaling NaN
    /// input as is, where the arithmetic would have quieted it (`x * 1 → x`,
    /// `x / 1 → x`, `x - 0 → x`, `x + (-0) → x`). Off by default.
    pub assume_no_signaling_nans: bool,
    /// Allow rules that are exact except for which payload a NaN result
    /// carries where two NaNs meet: `transpose(dot(a, b)) → dot(b, a)` swaps
    /// every product's operands, and `x * y` of two NaNs returns the first
    /// one's payload. Off by default (the interpreter's results stay bit for
    /// bit); a backend whose own products make no promise about NaN payloads
    /// (a blocked GEMM's sums do not) turns it on.
    pub nan_payloads_unspecified: bool,
}

/// The algebraic simplifier (see the module docs for its rules).
#[derive(Clone, Debug, Default)]
pub struct AlgebraicSimplifier {
    options: SimplifierOptions,
}

impl AlgebraicSimplifier {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn with_options(options: SimplifierOptions) -> Self {
        AlgebraicSimplifier { options }
    }
}

impl HloPass for AlgebraicSimplifier {
    fn name(&self) -> &str {
        "algebraic-simplifier"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let mut changed = false;
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        let combiners: Vec<Option<BinaryCombiner>> =
            module.computations.iter().map(binary_combiner).collect();
        for comp in &mut module.computations {
            let mut ed = ComputationEditor::new(comp, &mut names);
            let mut s = Simplifier {
                ed: &mut ed,
                options: self.options,
                uniform: HashMap::new(),
                combiners: &combiners,
            };
            // New instructions are visited too; the bound keeps a rule that
            // keeps producing rewritable output from looping (none should).
            let budget = 4 * s.ed.len() + 64;
            let mut i = 0;
            while i < s.ed.len() && i < budget {
                let id = InstrId(i as u32);
                i += 1;
                let Some(new) = s.simplify(id) else { continue };
                if new == id {
                    continue;
                }
                let (old_shape, new_shape) = (&s.ed.instr(id).shape, &s.ed.instr(new).shape);
                if !old_shape.compatible(new_shape) || !same_layouts(old_shape, new_shape) {
                    continue;
                }
                s.ed.replace_all_uses(id, new)?;
            }
            changed |= ed.finish(&effectful)?;
        }
        Ok(changed)
    }
}

struct Simplifier<'e, 'a> {
    ed: &'e mut ComputationEditor<'a>,
    options: SimplifierOptions,
    /// Per instruction, its value if every element is the same (see `uniform`).
    uniform: HashMap<InstrId, Option<Scalar>>,
    /// Per computation of the module, its binary-op form (for reducers).
    combiners: &'e [Option<BinaryCombiner>],
}

/// Constants bigger than this are not scanned for a uniform value.
const UNIFORM_SCAN_LIMIT: usize = 1 << 16;

fn identity_perm(p: &[usize]) -> bool {
    p.iter().enumerate().all(|(i, &d)| i == d)
}

impl Simplifier<'_, '_> {
    fn op(&self, id: InstrId) -> &Op {
        &self.ed.instr(id).op
    }
    fn shape(&self, id: InstrId) -> &Shape {
        &self.ed.instr(id).shape
    }
    fn array(&self, id: InstrId) -> Option<&ArrayShape> {
        self.shape(id).as_array()
    }
    fn dims(&self, id: InstrId) -> &[usize] {
        self.shape(id).dims()
    }
    fn elem(&self, id: InstrId) -> Option<ElementType> {
        self.shape(id).element_type()
    }
    fn operands(&self, id: InstrId) -> &[InstrId] {
        &self.ed.instr(id).operands
    }
    fn operand0(&self, id: InstrId) -> Option<InstrId> {
        self.operands(id).first().copied()
    }

    /// The dimensions of `x` if it is a transpose, broadcast or reverse
    /// (matching `want`), cloned; nothing else of `x`'s op is copied.
    fn dims_attr(&self, x: InstrId, want: Opcode) -> Option<Vec<usize>> {
        match self.op(x) {
            Op::Transpose { dimensions } if want == Opcode::Transpose => Some(dimensions.clone()),
            Op::Broadcast { dimensions } if want == Opcode::Broadcast => Some(dimensions.clone()),
            Op::Reverse { dimensions } if want == Opcode::Reverse => Some(dimensions.clone()),
            _ => None,
        }
    }

    /// Adds an instruction derived from `origin`, named after it.
    fn add(&mut self, origin: InstrId, shape: Shape, op: Op, operands: Vec<InstrId>) -> InstrId {
        let name = self.ed.instr(origin).name.clone();
        self.ed.add_derived(origin, &name, shape, op, operands)
    }

    /// `x` is `broadcast(s), dimensions={}` of a rank-0 `s`: returns `s`.
    fn broadcast_scalar(&self, x: InstrId) -> Option<InstrId> {
        match self.op(x) {
            Op::Broadcast { dimensions } if dimensions.is_empty() => {
                let s = self.operand0(x)?;
                (self.shape(s).is_scalar()).then_some(s)
            }
            _ => None,
        }
    }

    /// The value of every element of `x`, if `x` is a constant (or a broadcast
    /// of one) whose elements are all the same.
    fn uniform(&mut self, x: InstrId) -> Option<Scalar> {
        if let Some(v) = self.uniform.get(&x) {
            return *v;
        }
        let v = self.compute_uniform(x);
        self.uniform.insert(x, v);
        v
    }

    fn compute_uniform(&mut self, x: InstrId) -> Option<Scalar> {
        match self.op(x) {
            Op::Constant { literal } => {
                let a = literal.array_shape().ok()?;
                let n = a.element_count();
                if n == 0 || n > UNIFORM_SCAN_LIMIT {
                    return None;
                }
                let size = a.element_type.byte_size();
                let bytes = literal.bytes().ok()?;
                let first = bytes.get(..size)?;
                if bytes.chunks_exact(size).all(|c| c == first) {
                    Some(Scalar::from_bytes(a.element_type, first))
                } else {
                    None
                }
            }
            Op::Broadcast { .. } => {
                let o = self.operand0(x)?;
                self.uniform(o)
            }
            _ => None,
        }
    }

    /// The replacement for `id`, if a rule applies.
    fn simplify(&mut self, id: InstrId) -> Option<InstrId> {
        // Attributes are cloned only for the ops that have rules (never a
        // constant's literal).
        match self.op(id) {
            Op::Copy => self.operand0(id),
            Op::Reshape => self.reshape(id),
            Op::Bitcast => self.bitcast(id),
            Op::Transpose { dimensions } => {
                let dimensions = dimensions.clone();
                self.transpose(id, &dimensions)
            }
            Op::Broadcast { dimensions } => {
                let dimensions = dimensions.clone();
                self.broadcast(id, &dimensions)
            }
            Op::Slice { slice } => {
                let slice = slice.clone();
                self.slice(id, &slice)
            }
            Op::DynamicSlice { sizes } => {
                let sizes = sizes.clone();
                self.dynamic_slice(id, &sizes)
            }
            Op::Pad { config } => {
                let zero = config
                    .iter()
                    .all(|p| p.low == 0 && p.high == 0 && p.interior == 0);
                if zero {
                    self.operand0(id)
                } else {
                    None
                }
            }
            Op::Concatenate { dimension } => {
                let dimension = *dimension;
                self.concatenate(id, dimension)
            }
            Op::Reverse { dimensions } => {
                let dimensions = dimensions.clone();
                self.reverse(id, &dimensions)
            }
            Op::Convert => self.convert(id),
            Op::Select => self.select(id),
            Op::GetTupleElement { index } => {
                let index = *index;
                let t = self.operand0(id)?;
                match self.op(t) {
                    Op::Tuple => self.operands(t).get(index).copied(),
                    _ => None,
                }
            }
            Op::Tuple => self.tuple(id),
            Op::Dot { .. } => self.dot_of_transpose(id),
            Op::Unary(u) => {
                let u = *u;
                self.unary(id, u)
            }
            Op::Binary(b) => {
                let b = *b;
                self.binary(id, b)
            }
            Op::Compare { .. } | Op::ReducePrecision { .. } | Op::BitcastConvert => {
                self.elementwise_of_broadcast_scalars(id)
            }
            Op::Reduce {
                dimensions,
                to_apply,
            } => {
                let (dimensions, to_apply) = (dimensions.clone(), *to_apply);
                self.reduce_of_one(id, &dimensions, to_apply)
            }
            _ => None,
        }
    }

    /// `reduce(x, init)` over size-1 dimensions only → `op(init, x)`.
    fn reduce_of_one(
        &mut self,
        id: InstrId,
        dimensions: &[usize],
        to_apply: hlo_ir::CompId,
    ) -> Option<InstrId> {
        let [x, init] = *self.operands(id) else {
            return None;
        };
        let combiner = (*self.combiners.get(to_apply.index())?)?;
        let dims = self.dims(x);
        if dimensions.is_empty() || !dimensions.iter().all(|&d| dims.get(d) == Some(&1)) {
            return None;
        }
        let result = self.shape(id).clone();
        if result.element_type() != Some(combiner.ty)
            || self.elem(x) != Some(combiner.ty)
            || !self.shape(init).is_scalar()
        {
            return None;
        }
        let init_b = self.add(
            id,
            result.clone(),
            Op::Broadcast {
                dimensions: Vec::new(),
            },
            vec![init],
        );
        let x_r = self.add(id, result.clone(), Op::Reshape, vec![x]);
        let operands = if combiner.swapped {
            vec![x_r, init_b]
        } else {
            vec![init_b, x_r]
        };
        Some(self.add(id, result, Op::Binary(combiner.op), operands))
    }

    fn reshape(&mut self, id: InstrId) -> Option<InstrId> {
        let x = self.operand0(id)?;
        if self.dims(x) == self.dims(id) {
            // Same element type (reshape keeps it) and dimensions: the identity.
            return Some(x);
        }
        if let Op::Reshape = self.op(x) {
            let y = self.operand0(x)?;
            if self.dims(y) == self.dims(id) {
                return Some(y);
            }
            let shape = self.shape(id).clone();
            return Some(self.add(id, shape, Op::Reshape, vec![y]));
        }
        self.movement_of_broadcast_scalar(id, x)
    }

    /// A bitcast between row-major shapes of one element type keeps the
    /// row-major byte order: it is a reshape.
    fn bitcast(&mut self, id: InstrId) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let (a, r) = (self.array(x)?, self.array(id)?);
        let row_major = |s: &ArrayShape| {
            s.layout.as_ref().is_none_or(|l| {
                l.is_row_major()
                    && (l.minor_to_major.len() == s.rank())
                    && l.tiles.is_empty()
                    && l.element_size_in_bits.is_none()
            })
        };
        if a.element_type != r.element_type || !row_major(a) || !row_major(r) {
            return None;
        }
        let shape = self.shape(id).clone();
        Some(self.add(id, shape, Op::Reshape, vec![x]))
    }

    fn transpose(&mut self, id: InstrId, perm: &[usize]) -> Option<InstrId> {
        let x = self.operand0(id)?;
        if identity_perm(perm) {
            return Some(x);
        }
        if let Some(inner) = self.dims_attr(x, Opcode::Transpose) {
            // Result dim i is x's dim perm[i], which is y's dim inner[perm[i]].
            let y = self.operand0(x)?;
            let composed: Vec<usize> = perm
                .iter()
                .map(|&p| inner.get(p).copied())
                .collect::<Option<_>>()?;
            if identity_perm(&composed) {
                return Some(y);
            }
            let shape = self.shape(id).clone();
            return Some(self.add(
                id,
                shape,
                Op::Transpose {
                    dimensions: composed,
                },
                vec![y],
            ));
        }
        if let Some(b) = self.movement_of_broadcast_scalar(id, x) {
            return Some(b);
        }
        if self.options.nan_payloads_unspecified {
            if let Some(d) = self.transpose_of_dot(id, x, perm) {
                return Some(d);
            }
        }
        // Only size-1 dimensions move: the non-trivial ones keep their order, so
        // the row-major sequence of elements is unchanged.
        let dims = self.dims(x);
        let moved: Vec<usize> = perm
            .iter()
            .copied()
            .filter(|&p| dims.get(p).is_some_and(|&n| n != 1))
            .collect();
        if moved.windows(2).all(|w| w[0] < w[1]) {
            let shape = self.shape(id).clone();
            return Some(self.add(id, shape, Op::Reshape, vec![x]));
        }
        None
    }

    /// `transpose(dot(a, b))` that swaps the dot's free dimensions (the lhs's
    /// after the rhs's, each group in order, batch dimensions first and in
    /// place) is `dot(b, a)`: the product writes the transposed result
    /// directly, with no copy and no second buffer. Only when the transpose
    /// is the dot's one user, so the product is still computed once.
    fn transpose_of_dot(&mut self, id: InstrId, x: InstrId, perm: &[usize]) -> Option<InstrId> {
        let Op::Dot {
            dnums,
            precision,
            algorithm,
        } = self.op(x)
        else {
            return None;
        };
        if self.ed.root() == x || self.ed.users(x) != [id] {
            return None;
        }
        let rank = self.dims(x).len();
        let nb = dnums.lhs_batch_dims.len();
        let nl = self
            .dims(self.operands(x).first().copied()?)
            .len()
            .checked_sub(nb + dnums.lhs_contracting_dims.len())?;
        let nr = rank.checked_sub(nb + nl)?;
        let swapped: Vec<usize> = (0..nb)
            .chain(nb + nl..nb + nl + nr)
            .chain(nb..nb + nl)
            .collect();
        if perm != swapped.as_slice() || nl == 0 || nr == 0 {
            return None;
        }
        let dnums = hlo_ir::DotDimensionNumbers {
            lhs_batch_dims: dnums.rhs_batch_dims.clone(),
            rhs_batch_dims: dnums.lhs_batch_dims.clone(),
            lhs_contracting_dims: dnums.rhs_contracting_dims.clone(),
            rhs_contracting_dims: dnums.lhs_contracting_dims.clone(),
        };
        let precision = precision.iter().rev().cloned().collect();
        let algorithm = *algorithm;
        let (a, b) = match self.operands(x) {
            [a, b] => (*a, *b),
            _ => return None,
        };
        let shape = self.shape(id).clone();
        Some(self.add(
            id,
            shape,
            Op::Dot {
                dnums,
                precision,
                algorithm,
            },
            vec![b, a],
        ))
    }

    /// `dot(transpose(a), b)` (either side) is `dot(a, b)` with that side's
    /// batch and contracting dimensions named in `a`'s numbering, when the
    /// transpose keeps the operand's free dimensions in their order (the
    /// product's result lists them in increasing order). The same products
    /// over the same pairs of contracting indices, in the same order: exact.
    /// The product reads `a` in place instead of a transposed copy made first
    /// (in a loop body, one per iteration).
    fn dot_of_transpose(&mut self, id: InstrId) -> Option<InstrId> {
        let Op::Dot {
            dnums,
            precision,
            algorithm,
        } = self.op(id)
        else {
            return None;
        };
        let (mut dnums, precision, algorithm) = (dnums.clone(), precision.clone(), *algorithm);
        let mut operands = match self.operands(id) {
            [a, b] => [*a, *b],
            _ => return None,
        };
        let mut changed = false;
        for (side, operand) in operands.iter_mut().enumerate() {
            let Some(perm) = self.dims_attr(*operand, Opcode::Transpose) else {
                continue;
            };
            let (batch, contracting) = if side == 0 {
                (&mut dnums.lhs_batch_dims, &mut dnums.lhs_contracting_dims)
            } else {
                (&mut dnums.rhs_batch_dims, &mut dnums.rhs_contracting_dims)
            };
            let rank = perm.len();
            if batch.iter().chain(contracting.iter()).any(|&d| d >= rank) {
                continue;
            }
            let free: Vec<usize> = (0..rank)
                .filter(|d| !batch.contains(d) && !contracting.contains(d))
                .map(|d| perm[d])
                .collect();
            if !free.windows(2).all(|w| w[0] < w[1]) {
                continue;
            }
            for d in batch.iter_mut().chain(contracting.iter_mut()) {
                *d = perm[*d];
            }
            *operand = self.operand0(*operand)?;
            changed = true;
        }
        if !changed {
            return None;
        }
        let shape = self.shape(id).clone();
        Some(self.add(
            id,
            shape,
            Op::Dot {
                dnums,
                precision,
                algorithm,
            },
            operands.to_vec(),
        ))
    }

    /// A movement op (`id`) of a broadcast scalar: the same scalar broadcast
    /// to `id`'s shape.
    fn movement_of_broadcast_scalar(&mut self, id: InstrId, x: InstrId) -> Option<InstrId> {
        let s = self.broadcast_scalar(x)?;
        let shape = self.shape(id).clone();
        Some(self.add(id, shape, Op::Broadcast { dimensions: vec![] }, vec![s]))
    }

    fn broadcast(&mut self, id: InstrId, dims: &[usize]) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let xd = self.dims(x).to_vec();
        if xd == self.dims(id) && identity_perm(dims) {
            return Some(x);
        }
        if let Some(inner) = self.dims_attr(x, Opcode::Broadcast) {
            // y's dim k is x's dim inner[k], which is the result's dims[inner[k]].
            let y = self.operand0(x)?;
            let composed: Vec<usize> = inner
                .iter()
                .map(|&k| dims.get(k).copied())
                .collect::<Option<_>>()?;
            let shape = self.shape(id).clone();
            return Some(self.add(
                id,
                shape,
                Op::Broadcast {
                    dimensions: composed,
                },
                vec![y],
            ));
        }
        if xd.contains(&1) {
            // Size-1 operand dimensions carry no index: broadcasting from the
            // operand without them gives every element the same value.
            let kept: Vec<usize> = (0..xd.len()).filter(|&k| xd[k] != 1).collect();
            let ty = self.elem(x)?;
            let squeezed = self.add(
                id,
                Shape::array(ty, kept.iter().map(|&k| xd[k]).collect::<Vec<_>>()),
                Op::Reshape,
                vec![x],
            );
            let new_dims: Vec<usize> = kept
                .iter()
                .map(|&k| dims.get(k).copied())
                .collect::<Option<_>>()?;
            let shape = self.shape(id).clone();
            return Some(self.add(
                id,
                shape,
                Op::Broadcast {
                    dimensions: new_dims,
                },
                vec![squeezed],
            ));
        }
        None
    }

    fn slice(&mut self, id: InstrId, slice: &[SliceDim]) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let xd = self.dims(x).to_vec();
        if slice.len() != xd.len() {
            return None;
        }
        let full = slice
            .iter()
            .zip(&xd)
            .all(|(s, &n)| s.start == 0 && s.limit == n && s.stride == 1);
        if full {
            return Some(x);
        }
        enum Inner {
            Slice(Vec<SliceDim>),
            Concatenate(usize),
            Other,
        }
        let inner = match self.op(x) {
            Op::Slice { slice } => Inner::Slice(slice.clone()),
            Op::Concatenate { dimension } => Inner::Concatenate(*dimension),
            _ => Inner::Other,
        };
        match inner {
            Inner::Slice(inner) if inner.len() == slice.len() => {
                // Element i of the outer slice is element start + i*stride of
                // the inner one, which is inner.start + (start + i*stride)*inner.stride of y.
                let y = self.operand0(x)?;
                let composed: Vec<SliceDim> = slice
                    .iter()
                    .zip(&inner)
                    .map(|(o, i)| {
                        let len = o.len();
                        if len == 0 {
                            // An empty outer slice reads nothing; composing its
                            // start could land past the end of y, so use [0:0].
                            return SliceDim {
                                start: 0,
                                limit: 0,
                                stride: 1,
                            };
                        }
                        let start = i.start + o.start * i.stride;
                        let stride = o.stride * i.stride;
                        SliceDim {
                            start,
                            limit: start + (len - 1) * stride + 1,
                            stride,
                        }
                    })
                    .collect();
                let shape = self.shape(id).clone();
                Some(self.add(id, shape, Op::Slice { slice: composed }, vec![y]))
            }
            Inner::Concatenate(dimension) => {
                // A slice that lies inside one operand reads only that operand.
                let s = slice.get(dimension)?;
                let mut offset = 0;
                for &part in self.operands(x) {
                    let n = *self.dims(part).get(dimension)?;
                    if s.start >= offset && s.limit <= offset + n && s.limit > s.start {
                        let mut within = slice.to_vec();
                        within[dimension] = SliceDim {
                            start: s.start - offset,
                            limit: s.limit - offset,
                            stride: s.stride,
                        };
                        let shape = self.shape(id).clone();
                        return Some(self.add(id, shape, Op::Slice { slice: within }, vec![part]));
                    }
                    offset += n;
                }
                None
            }
            _ => self.movement_of_broadcast_scalar(id, x),
        }
    }

    /// Constant start indices: clamped into `[0, dim - size]` exactly as
    /// `dynamic-slice` clamps them at run time, the op is a static slice.
    fn dynamic_slice(&mut self, id: InstrId, sizes: &[usize]) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let xd = self.dims(x).to_vec();
        let starts = self.operands(id)[1..].to_vec();
        if starts.len() != xd.len() || sizes.len() != xd.len() {
            return None;
        }
        let mut slice = Vec::with_capacity(xd.len());
        for ((&s, &n), &size) in starts.iter().zip(&xd).zip(sizes) {
            if !matches!(self.op(s), Op::Constant { .. }) || !self.shape(s).is_scalar() {
                return None;
            }
            let max = n.checked_sub(size)? as i128;
            let v: i128 = match self.uniform(s)? {
                Scalar::U64(u) => u as i128,
                other => other.to_i64()? as i128,
            };
            let start = v.clamp(0, max) as usize;
            slice.push(SliceDim {
                start,
                limit: start + size,
                stride: 1,
            });
        }
        let shape = self.shape(id).clone();
        Some(self.add(id, shape, Op::Slice { slice }, vec![x]))
    }

    fn concatenate(&mut self, id: InstrId, dimension: usize) -> Option<InstrId> {
        let parts = self.operands(id).to_vec();
        if parts.len() == 1 {
            return Some(parts[0]);
        }
        let mut flat = Vec::with_capacity(parts.len());
        let mut rewritten = false;
        for &p in &parts {
            if self.dims(p).get(dimension) == Some(&0) {
                // Contributes no elements.
                rewritten = true;
                continue;
            }
            match self.op(p) {
                Op::Concatenate { dimension: d } if *d == dimension => {
                    // Concatenation is associative as data movement.
                    flat.extend(self.operands(p).iter().copied());
                    rewritten = true;
                }
                _ => flat.push(p),
            }
        }
        if !rewritten || flat.is_empty() {
            return None;
        }
        if flat.len() == 1 {
            return Some(flat[0]);
        }
        let shape = self.shape(id).clone();
        Some(self.add(id, shape, Op::Concatenate { dimension }, flat))
    }

    fn reverse(&mut self, id: InstrId, dims: &[usize]) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let xd = self.dims(x).to_vec();
        // Reversing a dimension of size 0 or 1 moves nothing; a dimension
        // listed twice is reversed twice.
        let mut odd = vec![false; xd.len()];
        for &d in dims {
            *odd.get_mut(d)? ^= true;
        }
        if let Some(inner) = self.dims_attr(x, Opcode::Reverse) {
            let y = self.operand0(x)?;
            for &d in &inner {
                *odd.get_mut(d)? ^= true;
            }
            let effective: Vec<usize> = (0..xd.len()).filter(|&d| odd[d] && xd[d] > 1).collect();
            if effective.is_empty() {
                return Some(y);
            }
            let shape = self.shape(id).clone();
            return Some(self.add(
                id,
                shape,
                Op::Reverse {
                    dimensions: effective,
                },
                vec![y],
            ));
        }
        let effective: Vec<usize> = (0..xd.len()).filter(|&d| odd[d] && xd[d] > 1).collect();
        if effective.is_empty() {
            return Some(x);
        }
        self.movement_of_broadcast_scalar(id, x)
    }

    fn convert(&mut self, id: InstrId) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let (from, to) = (self.elem(x)?, self.elem(id)?);
        if from == to {
            return Some(x);
        }
        if let Op::Convert = self.op(x) {
            let y = self.operand0(x)?;
            // y: to → x: from → id: to. If `from` holds every value of `to`,
            // the first convert is injective and the second undoes it.
            if self.elem(y) == Some(to) && holds_all_values(from, to) {
                return Some(y);
            }
        }
        self.elementwise_of_broadcast_scalars(id)
    }

    fn select(&mut self, id: InstrId) -> Option<InstrId> {
        let ops = self.operands(id).to_vec();
        let [p, a, b] = ops[..] else { return None };
        if a == b {
            return Some(a);
        }
        if let Some(Scalar::Pred(v)) = self.uniform(p) {
            return Some(if v { a } else { b });
        }
        if let Op::Unary(UnaryOp::Not) = self.op(p) {
            let q = self.operand0(p)?;
            let shape = self.shape(id).clone();
            return Some(self.add(id, shape, Op::Select, vec![q, b, a]));
        }
        self.elementwise_of_broadcast_scalars(id)
    }

    fn tuple(&mut self, id: InstrId) -> Option<InstrId> {
        let ops = self.operands(id).to_vec();
        let mut source = None;
        for (k, &e) in ops.iter().enumerate() {
            match self.op(e) {
                Op::GetTupleElement { index } if *index == k => {
                    let t = self.operand0(e)?;
                    if source.is_some_and(|s| s != t) {
                        return None;
                    }
                    source = Some(t);
                }
                _ => return None,
            }
        }
        let t = source?;
        (self.shape(t).tuple_shapes().len() == ops.len()).then_some(t)
    }

    fn unary(&mut self, id: InstrId, u: UnaryOp) -> Option<InstrId> {
        let x = self.operand0(id)?;
        let ty = self.elem(id)?;
        let inner = match self.op(x) {
            Op::Unary(v) => Some(*v),
            _ => None,
        };
        match (u, inner) {
            (UnaryOp::Negate, Some(UnaryOp::Negate)) if !ty.is_pred() => return self.operand0(x),
            (UnaryOp::Not, Some(UnaryOp::Not)) if ty.is_integer() || ty.is_pred() => {
                return self.operand0(x)
            }
            (UnaryOp::Abs, Some(UnaryOp::Abs)) if ty.is_integer() || ty.is_float() => {
                return Some(x)
            }
            (UnaryOp::Abs, Some(UnaryOp::Negate)) if ty.is_integer() || ty.is_float() => {
                let y = self.operand0(x)?;
                let shape = self.shape(id).clone();
                return Some(self.add(id, shape, Op::Unary(UnaryOp::Abs), vec![y]));
            }
            _ => {}
        }
        self.elementwise_of_broadcast_scalars(id)
    }

    /// An element-wise op all of whose operands are broadcast scalars (the same
    /// broadcast shape): the op on the scalars, then one broadcast. Scalar
    /// operands of `select` and `clamp` count as broadcast too.
    fn elementwise_of_broadcast_scalars(&mut self, id: InstrId) -> Option<InstrId> {
        let op = self.op(id).clone();
        let elementwise = op.is_elementwise()
            || matches!(op, Op::BitcastConvert)
                && self.elem(id).map(ElementType::byte_size)
                    == self
                        .operand0(id)
                        .and_then(|x| self.elem(x))
                        .map(ElementType::byte_size);
        if !elementwise || matches!(op, Op::Copy) || self.shape(id).is_scalar() {
            return None;
        }
        let mut scalars = Vec::new();
        for &o in self.operands(id) {
            if self.shape(o).is_scalar() && matches!(op, Op::Select | Op::Clamp) {
                scalars.push(o);
            } else {
                scalars.push(self.broadcast_scalar(o)?);
            }
        }
        let ty = self.elem(id)?;
        let scalar = self.add(id, Shape::scalar(ty), op, scalars);
        let shape = self.shape(id).clone();
        Some(self.add(
            id,
            shape,
            Op::Broadcast { dimensions: vec![] },
            vec![scalar],
        ))
    }

    fn binary(&mut self, id: InstrId, b: BinaryOp) -> Option<InstrId> {
        let ops = self.operands(id).to_vec();
        let [x, y] = ops[..] else { return None };
        let ty = self.elem(x)?;
        if x == y && matches!(b, BinaryOp::Maximum | BinaryOp::Minimum)
            || x == y
                && matches!(b, BinaryOp::And | BinaryOp::Or)
                && (ty.is_integer() || ty.is_pred())
        {
            return Some(x);
        }
        let (vx, vy) = (self.uniform(x), self.uniform(y));
        let found = if ty.is_integer() {
            integer_identity(b, ty, x, y, vx, vy)
        } else if ty.is_pred() {
            pred_identity(b, x, y, vx, vy)
        } else if ty.is_float() {
            float_identity(b, x, y, vx, vy, self.options)
        } else {
            None
        };
        if found.is_some() {
            return found;
        }
        self.elementwise_of_broadcast_scalars(id)
    }
}

/// Whether every value of the integer or pred type `narrow` converts to `wide`
/// and back unchanged: a wider integer type of a suitable signedness, or a float
/// type whose significand holds every value exactly.
fn holds_all_values(wide: ElementType, narrow: ElementType) -> bool {
    use ElementType::*;
    let bits = |t: ElementType| t.bit_width();
    // Significand precision (with the implicit bit) of a float type.
    let precision = match wide {
        F16 => Some(11),
        BF16 => Some(8),
        F32 => Some(24),
        F64 => Some(53),
        _ => None,
    };
    match narrow {
        Pred => wide.is_integer() || precision.is_some(),
        t if t.is_signed_int() => {
            (wide.is_signed_int() && bits(wide) >= bits(t))
                // Magnitudes up to 2^(bits-1): exact with bits-1 significand bits.
                || precision.is_some_and(|p| bits(t) - 1 <= p)
        }
        t if t.is_unsigned_int() => {
            (wide.is_unsigned_int() && bits(wide) >= bits(t))
                || (wide.is_signed_int() && bits(wide) > bits(t))
                || precision.is_some_and(|p| bits(t) <= p)
        }
        _ => false,
    }
}

fn int_is(v: Option<Scalar>, want: i128) -> bool {
    let Some(v) = v else { return false };
    let got: Option<i128> = match v {
        Scalar::U64(u) => Some(u as i128),
        other => other.to_i64().map(|i| i as i128),
    };
    got == Some(want)
}

fn int_bounds(ty: ElementType) -> Option<(i128, i128)> {
    use ElementType::*;
    Some(match ty {
        S8 => (i8::MIN as i128, i8::MAX as i128),
        S16 => (i16::MIN as i128, i16::MAX as i128),
        S32 => (i32::MIN as i128, i32::MAX as i128),
        S64 => (i64::MIN as i128, i64::MAX as i128),
        U8 => (0, u8::MAX as i128),
        U16 => (0, u16::MAX as i128),
        U32 => (0, u32::MAX as i128),
        U64 => (0, u64::MAX as i128),
        _ => return None,
    })
}

/// Integer identities (module docs): `x` op `y` with uniform constant values
/// `vx`, `vy` where known.
fn integer_identity(
    b: BinaryOp,
    ty: ElementType,
    x: InstrId,
    y: InstrId,
    vx: Option<Scalar>,
    vy: Option<Scalar>,
) -> Option<InstrId> {
    use BinaryOp::*;
    let (min, max) = int_bounds(ty)?;
    // All bits set: -1 signed, MAX unsigned.
    let ones = if ty.is_signed_int() { -1 } else { max };
    let is = |v: Option<Scalar>, want: i128| int_is(v, want);
    match b {
        Add | Or | Xor if is(vy, 0) => Some(x),
        Add | Or | Xor if is(vx, 0) => Some(y),
        Subtract | ShiftLeft | ShiftRightLogical | ShiftRightArithmetic if is(vy, 0) => Some(x),
        Multiply if is(vy, 1) => Some(x),
        Multiply if is(vx, 1) => Some(y),
        Multiply | And if is(vy, 0) => Some(y),
        Multiply | And if is(vx, 0) => Some(x),
        Divide if is(vy, 1) => Some(x),
        And if is(vy, ones) => Some(x),
        And if is(vx, ones) => Some(y),
        Or if is(vy, ones) => Some(y),
        Or if is(vx, ones) => Some(x),
        Maximum if is(vy, min) => Some(x),
        Maximum if is(vx, min) => Some(y),
        Minimum if is(vy, max) => Some(x),
        Minimum if is(vx, max) => Some(y),
        _ => None,
    }
}

/// `pred` identities (module docs): `add`/`maximum` act as `or`,
/// `multiply`/`minimum` as `and`.
fn pred_identity(
    b: BinaryOp,
    x: InstrId,
    y: InstrId,
    vx: Option<Scalar>,
    vy: Option<Scalar>,
) -> Option<InstrId> {
    use BinaryOp::*;
    let is = |v: Option<Scalar>, want: bool| v == Some(Scalar::Pred(want));
    match b {
        And | Multiply | Minimum if is(vy, true) => Some(x),
        And | Multiply | Minimum if is(vx, true) => Some(y),
        And | Multiply | Minimum if is(vy, false) => Some(y),
        And | Multiply | Minimum if is(vx, false) => Some(x),
        Or | Add | Maximum if is(vy, false) => Some(x),
        Or | Add | Maximum if is(vx, false) => Some(y),
        Or | Add | Maximum if is(vy, true) => Some(y),
        Or | Add | Maximum if is(vx, true) => Some(x),
        Xor if is(vy, false) => Some(x),
        Xor if is(vx, false) => Some(y),
        _ => None,
    }
}

/// Float identities (module docs).
fn float_identity(
    b: BinaryOp,
    x: InstrId,
    y: InstrId,
    vx: Option<Scalar>,
    vy: Option<Scalar>,
    options: SimplifierOptions,
) -> Option<InstrId> {
    use BinaryOp::*;
    // (value, sign bit set) of a real float scalar.
    let real = |v: Option<Scalar>| -> Option<(f64, bool)> {
        let f = match v? {
            Scalar::F16(h) => h.to_f64(),
            Scalar::BF16(h) => h.to_f64(),
            Scalar::F32(f) => f as f64,
            Scalar::F64(f) => f,
            _ => return None,
        };
        Some((f, f.is_sign_negative()))
    };
    let is = |v: Option<Scalar>, want: f64| {
        real(v).is_some_and(|(f, neg)| f == want && neg == want.is_sign_negative())
    };
    match b {
        Maximum if is(vy, f64::NEG_INFINITY) => return Some(x),
        Maximum if is(vx, f64::NEG_INFINITY) => return Some(y),
        Minimum if is(vy, f64::INFINITY) => return Some(x),
        Minimum if is(vx, f64::INFINITY) => return Some(y),
        _ => {}
    }
    if !options.assume_no_signaling_nans {
        return None;
    }
    match b {
        Multiply if is(vy, 1.0) => Some(x),
        Multiply if is(vx, 1.0) => Some(y),
        Divide if is(vy, 1.0) => Some(x),
        Subtract if is(vy, 0.0) => Some(x),
        Add if is(vy, -0.0) => Some(x),
        Add if is(vx, -0.0) => Some(y),
        _ => None,
    }
}
