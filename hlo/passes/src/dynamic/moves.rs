//! Operations that move the elements of a dynamic array.
//!
//! Where an element of a dynamic array sits in its padded buffer depends on
//! the dynamic sizes: row `r` of an `s32[<=4, <=3]` array starts at `3 * r`
//! whatever its size, but the element after the last of row 0 *logically*
//! (row-major over the dynamic sizes) is `(1, 0)`. So concatenation, reverse,
//! pad, reshape and sort place elements with positions computed at run time
//! from the size instructions, and the entry's result is laid out compactly
//! (its logical elements first, in row-major order, then zeros), which is
//! what XLA CPU hands back for a dynamic result.

use super::{strip, Dyn, Padder, Sizes};
use hlo_ir::attrs::{ComparisonDirection, GatherDimensionNumbers, PadDim, SliceDim};
use hlo_ir::error::Result;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{BinaryOp, CompId, HloComputation, HloInstruction, InstrId, Op};

const S32: ElementType = ElementType::S32;

impl Padder<'_, '_> {
    fn size_op(&mut self, op: BinaryOp, a: InstrId, b: InstrId) -> InstrId {
        self.ed
            .add_op("size", Shape::scalar(S32), Op::Binary(op), vec![a, b])
    }

    fn size_compare(&mut self, direction: ComparisonDirection, a: InstrId, b: InstrId) -> InstrId {
        self.ed.add_op(
            "size_test",
            Shape::scalar(ElementType::Pred),
            Op::Compare {
                direction,
                compare_type: None,
            },
            vec![a, b],
        )
    }

    /// The size of dimension `d`: its dynamic size, or its extent.
    pub(super) fn size_at(&mut self, sizes: &Sizes, dims: &[usize], d: usize) -> Result<InstrId> {
        match (sizes.get(d).copied().flatten(), dims.get(d)) {
            (Some(s), _) => Ok(s),
            (None, Some(&extent)) => Ok(self.s32(extent as i64)),
            (None, None) => Err(hlo_ir::error::Error::invalid_argument(format!(
                "dynamic dimensions: dimension {d} of an array of rank {}",
                dims.len()
            ))),
        }
    }

    fn broadcast_to(&mut self, scalar: InstrId, shape: &Shape) -> InstrId {
        self.ed.add_op(
            "size_b",
            shape.clone(),
            Op::Broadcast { dimensions: vec![] },
            vec![scalar],
        )
    }

    /// XLA's rule for an elementwise op whose operands have different dynamic
    /// sizes in one dimension: an operand of size 1 is broadcast along it
    /// (the result has the larger size); otherwise the result has the smaller
    /// size. Returns the result's size and replaces the size-1 operands.
    pub(super) fn elementwise_sizes(
        &mut self,
        id: InstrId,
        operand_dyn: &[Dyn],
        rank: usize,
    ) -> Result<Dyn> {
        let mut operands = self.ed.instr(id).operands.clone();
        let mut sizes: Sizes = vec![None; rank];
        for (d, size) in sizes.iter_mut().enumerate() {
            let mut distinct: Vec<InstrId> = Vec::new();
            for od in operand_dyn {
                if let Dyn::Array(s) = od {
                    if let Some(Some(x)) = s.get(d) {
                        if !distinct.contains(x) {
                            distinct.push(*x);
                        }
                    }
                }
            }
            let Some((&first, rest)) = distinct.split_first() else {
                continue;
            };
            // With the sizes a and b: if the smaller is 1 it is broadcast and
            // the result has the larger, otherwise it has the smaller (equal
            // sizes give either).
            let mut acc = first;
            for &s in rest {
                let one = self.s32(1);
                let larger = self.size_op(BinaryOp::Maximum, s, acc);
                let smaller = self.size_op(BinaryOp::Minimum, s, acc);
                let spreads = self.size_compare(ComparisonDirection::Eq, smaller, one);
                acc = self.ed.add_op(
                    "size",
                    Shape::scalar(S32),
                    Op::Select,
                    vec![spreads, larger, smaller],
                );
            }
            *size = Some(acc);
            if rest.is_empty() {
                continue;
            }
            for (k, od) in operand_dyn.iter().enumerate() {
                if let Dyn::Array(s) = od {
                    if let Some(Some(own)) = s.get(d) {
                        operands[k] = self.spread_if_one(operands[k], d, *own)?;
                    }
                }
            }
        }
        if operands != self.ed.instr(id).operands {
            self.ed.set_operands(id, operands);
        }
        Ok(Dyn::Array(sizes))
    }

    /// `x` with element 0 of dimension `d` copied along it where `size` is 1.
    fn spread_if_one(&mut self, x: InstrId, d: usize, size: InstrId) -> Result<InstrId> {
        let shape = strip(&self.ed.instr(x).shape);
        let dims = shape.array_or_err()?.dims.clone();
        let ty = shape.array_or_err()?.element_type;
        let mut first_dims = dims.clone();
        first_dims[d] = 1;
        let slice = (0..dims.len())
            .map(|k| SliceDim {
                start: 0,
                limit: first_dims[k],
                stride: 1,
            })
            .collect();
        let first = self.ed.add_op(
            "first",
            Shape::array(ty, first_dims.clone()),
            Op::Slice { slice },
            vec![x],
        );
        let mut kept = dims.clone();
        kept.remove(d);
        let flat = self
            .ed
            .add_op("first", Shape::array(ty, kept), Op::Reshape, vec![first]);
        let spread = self.ed.add_op(
            "spread",
            shape.clone(),
            Op::Broadcast {
                dimensions: (0..dims.len()).filter(|&k| k != d).collect(),
            },
            vec![flat],
        );
        let one = self.s32(1);
        let is_one = self.size_compare(ComparisonDirection::Eq, size, one);
        let pick = self.broadcast_to(is_one, &Shape::array(ElementType::Pred, dims));
        Ok(self
            .ed
            .add_op("spread", shape, Op::Select, vec![pick, spread, x]))
    }

    /// Each operand placed right after the previous one's elements along the
    /// concatenated dimension.
    pub(super) fn concatenate(&mut self, id: InstrId, cd: usize) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let shape = strip(&instr.shape);
        let rank = shape.array_or_err()?.dims.len();
        let mut out: Sizes = vec![None; rank];
        let mut moves = false;
        for &o in &instr.operands {
            let s = self.array_sizes(o);
            for (d, slot) in out.iter_mut().enumerate() {
                let here = s.get(d).copied().flatten();
                if d == cd {
                    moves |= here.is_some();
                } else if slot.is_none() {
                    *slot = here;
                }
            }
        }
        if !moves {
            return Ok(Dyn::Array(out));
        }
        let zero = self.zero_of(id)?;
        let mut acc = self.broadcast_to(zero, &shape);
        let origin = self.s32(0);
        let mut offset = self.s32(0);
        for &o in &instr.operands {
            let mut operands = vec![acc, o];
            operands.extend((0..rank).map(|d| if d == cd { offset } else { origin }));
            acc = self
                .ed
                .add_op("concat", shape.clone(), Op::DynamicUpdateSlice, operands);
            let sizes = self.array_sizes(o);
            let dims = strip(&self.ed.instr(o).shape).array_or_err()?.dims.clone();
            let len = self.size_at(&sizes, &dims, cd)?;
            offset = self.size_op(BinaryOp::Add, offset, len);
        }
        out[cd] = Some(offset);
        self.replaced.push((id, acc));
        Ok(Dyn::Array(out))
    }

    /// A reverse along a dynamic dimension leaves the elements at its end;
    /// they are shifted back to its start.
    pub(super) fn reverse(&mut self, id: InstrId, dimensions: &[usize]) -> Result<Dyn> {
        let x = self.ed.instr(id).operand(0)?;
        let sizes = self.array_sizes(x);
        let shape = strip(&self.ed.instr(id).shape);
        let dims = shape.array_or_err()?.dims.clone();
        let shifted: Vec<usize> = dimensions
            .iter()
            .copied()
            .filter(|&d| sizes.get(d).copied().flatten().is_some())
            .collect();
        if shifted.is_empty() {
            return Ok(Dyn::Array(sizes));
        }
        let ty = shape.array_or_err()?.element_type;
        let config: Vec<PadDim> = (0..dims.len())
            .map(|d| PadDim {
                low: 0,
                high: if shifted.contains(&d) {
                    dims[d] as i64
                } else {
                    0
                },
                interior: 0,
            })
            .collect();
        let wide: Vec<usize> = (0..dims.len())
            .map(|d| dims[d] * if shifted.contains(&d) { 2 } else { 1 })
            .collect();
        // A new reverse: `id` itself is replaced by the shifted one.
        let reversed = self.ed.add_op(
            "reversed",
            shape.clone(),
            Op::Reverse {
                dimensions: dimensions.to_vec(),
            },
            vec![x],
        );
        let zero = self.zero_of(id)?;
        let padded = self.ed.add_op(
            "reversed",
            Shape::array(ty, wide),
            Op::Pad { config },
            vec![reversed, zero],
        );
        let mut operands = vec![padded];
        for (d, &extent) in dims.iter().enumerate() {
            operands.push(match sizes.get(d).copied().flatten() {
                Some(size) if shifted.contains(&d) => {
                    let bound = self.s32(extent as i64);
                    self.size_op(BinaryOp::Subtract, bound, size)
                }
                _ => self.s32(0),
            });
        }
        let out = self.ed.add_op(
            "reversed",
            shape,
            Op::DynamicSlice { sizes: dims },
            operands,
        );
        self.replaced.push((id, out));
        Ok(Dyn::Array(sizes))
    }

    /// The operand's padding becomes the padding value, so the elements after
    /// the last real one read as padding; the size grows by the edges and the
    /// interior padding.
    pub(super) fn pad(&mut self, id: InstrId, config: &[PadDim]) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let (x, value) = (instr.operand(0)?, instr.operand(1)?);
        let sizes = self.array_sizes(x);
        let mut out: Sizes = vec![None; sizes.len()];
        for (d, size) in sizes.iter().enumerate() {
            let (Some(size), Some(p)) = (size, config.get(d)) else {
                continue;
            };
            if p.low < 0 || p.high < 0 {
                return Err(self.unsupported(
                    id,
                    "crops a dynamic dimension with negative padding, which is not supported",
                ));
            }
            let mut grown = *size;
            if p.interior > 0 {
                let one = self.s32(1);
                let zero = self.s32(0);
                let gaps = self.size_op(BinaryOp::Subtract, *size, one);
                let gaps = self.size_op(BinaryOp::Maximum, gaps, zero);
                let interior = self.s32(p.interior as i64);
                let gaps = self.size_op(BinaryOp::Multiply, gaps, interior);
                grown = self.size_op(BinaryOp::Add, grown, gaps);
            }
            let edges = self.s32(p.low + p.high);
            out[d] = Some(self.size_op(BinaryOp::Add, grown, edges));
        }
        let masked = self.mask(x, &sizes, value)?;
        self.ed.replace_operand(id, x, masked);
        Ok(Dyn::Array(out))
    }

    /// Padding sorts after every real element: the sort gets an extra `pred`
    /// operand (whether the element is real) and a comparator that puts real
    /// elements first and otherwise asks the original one.
    pub(super) fn sort(
        &mut self,
        id: InstrId,
        dimension: usize,
        comparator: CompId,
    ) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let rank = strip(&self.ed.instr(instr.operand(0)?).shape)
            .array_or_err()?
            .dims
            .len();
        let mut out: Sizes = vec![None; rank];
        for &o in &instr.operands {
            for (d, s) in self.array_sizes(o).into_iter().enumerate() {
                if d < rank && out[d].is_none() {
                    out[d] = s;
                }
            }
        }
        let result = match &instr.shape {
            Shape::Tuple(e) => Dyn::Tuple(vec![Dyn::Array(out.clone()); e.len()]),
            _ => Dyn::Array(out.clone()),
        };
        let Some(size) = out.get(dimension).copied().flatten() else {
            return Ok(result);
        };
        let dims = strip(&self.ed.instr(instr.operand(0)?).shape)
            .array_or_err()?
            .dims
            .clone();
        let real = self.inside(&dims, dimension, size);
        let n = instr.operands.len();
        let new_comparator = self.real_first(comparator, n)?;
        let mut shapes: Vec<Shape> = instr
            .operands
            .iter()
            .map(|&o| strip(&self.ed.instr(o).shape))
            .collect();
        shapes.push(strip(&self.ed.instr(real).shape));
        let mut operands = instr.operands.clone();
        operands.push(real);
        let is_stable = matches!(
            instr.op,
            Op::Sort {
                is_stable: true,
                ..
            }
        );
        let sorted = self.ed.add_op(
            "sort",
            Shape::Tuple(shapes.clone()),
            Op::Sort {
                dimension,
                is_stable,
                comparator: new_comparator,
            },
            operands,
        );
        let parts: Vec<InstrId> = (0..n)
            .map(|k| {
                self.ed.add_op(
                    "sorted",
                    shapes[k].clone(),
                    Op::GetTupleElement { index: k },
                    vec![sorted],
                )
            })
            .collect();
        let replacement = match &instr.shape {
            Shape::Tuple(_) => self.ed.add_op(
                "sorted",
                Shape::Tuple(shapes[..n].to_vec()),
                Op::Tuple,
                parts,
            ),
            _ => parts[0],
        };
        self.replaced.push((id, replacement));
        Ok(result)
    }

    /// A copy of `comparator` (of `n` operands) with two more `pred`
    /// parameters, `2n` and `2n + 1`, that orders a real element before
    /// padding and otherwise answers as `comparator` does.
    fn real_first(&mut self, comparator: CompId, n: usize) -> Result<CompId> {
        let mut comp = self
            .comparators
            .get(&comparator)
            .cloned()
            .ok_or_else(|| hlo_ir::error::Error::internal("sort comparator out of range"))?;
        for instr in &mut comp.instructions {
            instr.name = self.ed.fresh_name(&instr.name);
        }
        let mut add = |comp: &mut HloComputation, name: &str, op: Op, operands: Vec<InstrId>| {
            let name = self.ed.fresh_name(name);
            let pred = Shape::scalar(ElementType::Pred);
            comp.instructions
                .push(HloInstruction::new(name, pred, op, operands));
            InstrId(comp.instructions.len() as u32 - 1)
        };
        let lhs = add(
            &mut comp,
            "real_lhs",
            Op::Parameter { number: 2 * n },
            vec![],
        );
        let rhs = add(
            &mut comp,
            "real_rhs",
            Op::Parameter { number: 2 * n + 1 },
            vec![],
        );
        let differ = add(
            &mut comp,
            "real_differ",
            Op::Compare {
                direction: ComparisonDirection::Ne,
                compare_type: None,
            },
            vec![lhs, rhs],
        );
        let old_root = comp.root;
        comp.root = add(
            &mut comp,
            "real_first",
            Op::Select,
            vec![differ, lhs, old_root],
        );
        comp.name = format!("{}.real_first", comp.name);
        let id = CompId((self.first_new + self.added.len()) as u32);
        self.added.push(comp);
        Ok(id)
    }

    /// A gather whose output operand dimension takes a whole dynamic
    /// dimension keeps its size; one that takes part of it (a single index)
    /// sees a static dimension. Dynamic batch dimensions of the indices carry
    /// over to the output's batch dimensions.
    pub(super) fn gather(
        &mut self,
        id: InstrId,
        dnums: &GatherDimensionNumbers,
        slice_sizes: &[usize],
    ) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let (x, indices) = (instr.operand(0)?, instr.operand(1)?);
        let rank = strip(&instr.shape).array_or_err()?.dims.len();
        let dims = strip(&self.ed.instr(x).shape).array_or_err()?.dims.clone();
        let mut out: Sizes = vec![None; rank];
        let windowed: Vec<usize> = (0..dims.len())
            .filter(|d| {
                !dnums.collapsed_slice_dims.contains(d) && !dnums.operand_batching_dims.contains(d)
            })
            .collect();
        for (d, size) in self.array_sizes(x).iter().enumerate() {
            let Some(size) = size else { continue };
            if slice_sizes.get(d) == Some(&1) && dims[d] != 1 {
                continue;
            }
            let whole = slice_sizes.get(d) == Some(&dims[d]);
            match windowed.iter().position(|&w| w == d) {
                Some(k) if whole => {
                    if let Some(&o) = dnums.offset_dims.get(k) {
                        out[o] = Some(*size);
                    }
                }
                _ => {
                    return Err(self.unsupported(
                        id,
                        "gathers a window of part of a dynamic dimension, which is not supported",
                    ))
                }
            }
        }
        let batch: Vec<usize> = (0..rank)
            .filter(|o| !dnums.offset_dims.contains(o))
            .collect();
        let index_rank = strip(&self.ed.instr(indices).shape)
            .array_or_err()?
            .dims
            .len();
        let index_dims: Vec<usize> = (0..index_rank)
            .filter(|&d| d != dnums.index_vector_dim)
            .collect();
        for (d, size) in self.array_sizes(indices).iter().enumerate() {
            let Some(size) = size else { continue };
            match index_dims.iter().position(|&k| k == d) {
                Some(k) => {
                    if let Some(&o) = batch.get(k) {
                        out[o] = Some(*size);
                    }
                }
                None => {
                    return Err(self.unsupported(
                        id,
                        "has a dynamic index vector dimension, which is not supported",
                    ))
                }
            }
        }
        Ok(Dyn::Array(out))
    }

    /// See [`reshape_plan`]: sizes for the output, and the elements moved
    /// where the dynamic dimensions are not laid out as the reshape of the
    /// padded buffer would lay them out.
    pub(super) fn reshape(&mut self, id: InstrId) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let x = instr.operand(0)?;
        let from = strip(&self.ed.instr(x).shape).array_or_err()?.dims.clone();
        let declared = instr.shape.array_or_err()?.clone();
        let to = declared.dims.clone();
        let sizes = self.array_sizes(x);
        if sizes.iter().all(Option::is_none) {
            return Ok(Dyn::Array(vec![None; to.len()]));
        }
        let plan = reshape_plan(&from, &to, &sizes, |k| declared.is_dynamic_dim(k));
        let mut in_sizes = Vec::with_capacity(from.len());
        for (d, keep) in plan.input_dynamic.iter().enumerate() {
            in_sizes.push(if *keep {
                self.size_at(&sizes, &from, d)?
            } else {
                self.s32(from[d] as i64)
            });
        }
        let mut out: Sizes = vec![None; to.len()];
        for g in &plan.groups {
            let Some(chosen) = g.output else { continue };
            let mut elements = self.s32(1);
            for d in g.input.clone() {
                elements = self.size_op(BinaryOp::Multiply, elements, in_sizes[d]);
            }
            let others: usize = g
                .outputs
                .clone()
                .filter(|&k| k != chosen)
                .map(|k| to[k])
                .product();
            let others = self.s32(others.max(1) as i64);
            out[chosen] = Some(self.size_op(BinaryOp::Divide, elements, others));
        }
        if plan.moves {
            let mut out_sizes = Vec::with_capacity(to.len());
            for k in 0..to.len() {
                out_sizes.push(self.size_at(&out, &to, k)?);
            }
            let (moved, _) = self.relocate(x, &in_sizes, &to, &out_sizes)?;
            self.replaced.push((id, moved));
        }
        Ok(Dyn::Array(out))
    }

    /// `dynamic-reshape(x, sizes...)`: the output's dynamic dimensions (as
    /// declared) take the given sizes; elements always move to the output's
    /// logical positions.
    pub(super) fn dynamic_reshape(&mut self, id: InstrId) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let x = instr.operand(0)?;
        let declared = instr.shape.array_or_err()?.clone();
        let to = declared.dims.clone();
        if instr.operands.len() != to.len() + 1 {
            return Err(self.unsupported(id, "needs the array and one size per output dimension"));
        }
        let from = strip(&self.ed.instr(x).shape).array_or_err()?.dims.clone();
        let sizes = self.array_sizes(x);
        let mut in_sizes = Vec::with_capacity(from.len());
        for d in 0..from.len() {
            in_sizes.push(self.size_at(&sizes, &from, d)?);
        }
        let out: Sizes = (0..to.len())
            .map(|k| declared.is_dynamic_dim(k).then_some(instr.operands[1 + k]))
            .collect();
        let mut out_sizes = Vec::with_capacity(to.len());
        for k in 0..to.len() {
            out_sizes.push(self.size_at(&out, &to, k)?);
        }
        let moved = if from.is_empty() || to.is_empty() {
            let ty = declared.element_type;
            self.ed
                .add_op("reshaped", Shape::array(ty, to), Op::Reshape, vec![x])
        } else {
            self.relocate(x, &in_sizes, &to, &out_sizes)?.0
        };
        self.replaced.push((id, moved));
        Ok(Dyn::Array(out))
    }

    /// The entry's dynamic result laid out compactly: its logical elements in
    /// row-major order, then zeros.
    pub(super) fn compact(&mut self, x: InstrId, sizes: &Sizes) -> Result<InstrId> {
        let shape = strip(&self.ed.instr(x).shape);
        let dims = shape.array_or_err()?.dims.clone();
        let dynamic: Vec<usize> = (0..dims.len())
            .filter(|&d| sizes.get(d).copied().flatten().is_some())
            .collect();
        // One dynamic dimension with only unit dimensions before it is
        // already compact: the zeroed padding is its tail.
        if dynamic.len() == 1 && dims[..dynamic[0]].iter().all(|&e| e == 1) {
            let zero = self.zero_of(x)?;
            return self.mask(x, sizes, zero);
        }
        let mut logical = Vec::with_capacity(dims.len());
        let mut extents = Vec::with_capacity(dims.len());
        let mut count = self.s32(1);
        for d in 0..dims.len() {
            let s = self.size_at(sizes, &dims, d)?;
            count = self.size_op(BinaryOp::Multiply, count, s);
            logical.push(s);
            extents.push(self.s32(dims[d] as i64));
        }
        let (moved, position) = self.relocate(x, &logical, &dims, &extents)?;
        let index = Shape::array(S32, dims.clone());
        let count = self.broadcast_to(count, &index);
        let inside = self.ed.add_op(
            "compact_inside",
            Shape::array(ElementType::Pred, dims),
            Op::Compare {
                direction: ComparisonDirection::Lt,
                compare_type: None,
            },
            vec![position, count],
        );
        let zero = self.zero_of(x)?;
        let zeros = self.broadcast_to(zero, &shape);
        Ok(self
            .ed
            .add_op("compact", shape, Op::Select, vec![inside, moved, zeros]))
    }

    /// `x` (whose logical sizes are `from_sizes`) gathered into an array of
    /// extents `to`: the output element at logical position `p` (row-major
    /// over `to_sizes`) is `x`'s logical element at row-major position `p`.
    /// Returns the array and the position of each output element.
    fn relocate(
        &mut self,
        x: InstrId,
        from_sizes: &[InstrId],
        to: &[usize],
        to_sizes: &[InstrId],
    ) -> Result<(InstrId, InstrId)> {
        let ty = strip(&self.ed.instr(x).shape).array_or_err()?.element_type;
        let index = Shape::array(S32, to.to_vec());
        let mut position: Option<InstrId> = None;
        let mut stride = self.s32(1);
        for k in (0..to.len()).rev() {
            let iota = self
                .ed
                .add_op("position", index.clone(), Op::Iota { dimension: k }, vec![]);
            let step = self.broadcast_to(stride, &index);
            let term = self.ed.add_op(
                "position",
                index.clone(),
                Op::Binary(BinaryOp::Multiply),
                vec![iota, step],
            );
            position = Some(match position {
                None => term,
                Some(p) => self.ed.add_op(
                    "position",
                    index.clone(),
                    Op::Binary(BinaryOp::Add),
                    vec![p, term],
                ),
            });
            stride = self.size_op(BinaryOp::Multiply, stride, to_sizes[k]);
        }
        let position = match position {
            Some(p) => p,
            None => {
                let zero = self.s32(0);
                self.broadcast_to(zero, &index)
            }
        };
        let rank = from_sizes.len();
        let mut column = to.to_vec();
        column.push(1);
        let column = Shape::array(S32, column);
        let mut columns = vec![position; rank];
        let mut stride = self.s32(1);
        for d in (0..rank).rev() {
            let step = self.broadcast_to(stride, &index);
            let q = self.ed.add_op(
                "coordinate",
                index.clone(),
                Op::Binary(BinaryOp::Divide),
                vec![position, step],
            );
            let one = self.s32(1);
            let modulus = self.size_op(BinaryOp::Maximum, from_sizes[d], one);
            let modulus = self.broadcast_to(modulus, &index);
            let c = self.ed.add_op(
                "coordinate",
                index.clone(),
                Op::Binary(BinaryOp::Remainder),
                vec![q, modulus],
            );
            columns[d] = self
                .ed
                .add_op("coordinate", column.clone(), Op::Reshape, vec![c]);
            stride = self.size_op(BinaryOp::Multiply, stride, from_sizes[d]);
        }
        let mut all = to.to_vec();
        all.push(rank);
        let indices = self.ed.add_op(
            "coordinates",
            Shape::array(S32, all),
            Op::Concatenate {
                dimension: to.len(),
            },
            columns,
        );
        let dnums = GatherDimensionNumbers {
            offset_dims: vec![],
            collapsed_slice_dims: (0..rank).collect(),
            start_index_map: (0..rank).collect(),
            operand_batching_dims: vec![],
            start_indices_batching_dims: vec![],
            index_vector_dim: to.len(),
        };
        let moved = self.ed.add_op(
            "relocated",
            Shape::array(ty, to.to_vec()),
            Op::Gather {
                dnums,
                slice_sizes: vec![1; rank],
                indices_are_sorted: false,
            },
            vec![x, indices],
        );
        Ok((moved, position))
    }
}

/// One group of a reshape: input dimensions `input` hold the same elements
/// as output dimensions `outputs`; `output` is the one a dynamic input
/// dimension of the group becomes (`None`: no dynamic input, or XLA CPU
/// cannot tell which, and the group is reshaped as its padded buffer).
struct Group {
    input: std::ops::Range<usize>,
    outputs: std::ops::Range<usize>,
    output: Option<usize>,
}

struct ReshapePlan {
    groups: Vec<Group>,
    /// Per input dimension, whether its dynamic size is kept.
    input_dynamic: Vec<bool>,
    /// Whether elements must move (a gather) rather than keep their offsets.
    moves: bool,
}

/// How a reshape carries dynamic sizes, as XLA's dynamic dimension inference
/// does: dimensions are grouped by common factors (unit-only groups join the
/// next group); in a group with a dynamic input dimension the output
/// dimension that becomes dynamic is the only one, or the one the result's
/// shape declares dynamic, or the only one that is not 1. The group's
/// logical elements divided by the group's other output extents give its
/// size. Elements keep their offsets only where the dynamic dimension is the
/// group's leading (non-unit) dimension on both sides.
fn reshape_plan(
    from: &[usize],
    to: &[usize],
    sizes: &Sizes,
    declared_dynamic: impl Fn(usize) -> bool,
) -> ReshapePlan {
    let dynamic = |d: usize| sizes.get(d).copied().flatten().is_some();
    let mut plan = ReshapePlan {
        groups: Vec::new(),
        input_dynamic: (0..from.len()).map(dynamic).collect(),
        moves: false,
    };
    if from.contains(&0) || to.contains(&0) || to.is_empty() {
        // Nothing to lay out (or a scalar): the padded buffer is reshaped.
        plan.input_dynamic = vec![false; from.len()];
        return plan;
    }
    let mut bounds = vec![(0usize, 0usize)];
    let (mut i, mut j) = (0usize, 0usize);
    let (mut pa, mut pb) = (1u128, 1u128);
    while i < from.len() || j < to.len() {
        if (pa <= pb && i < from.len()) || j == to.len() {
            pa = pa.saturating_mul(from[i] as u128);
            i += 1;
        } else {
            pb = pb.saturating_mul(to[j] as u128);
            j += 1;
        }
        let last = *bounds.last().unwrap_or(&(0, 0));
        if pa == pb && (i, j) != last && i > last.0 && j > last.1 {
            bounds.push((i, j));
        }
    }
    // Trailing unit dimensions join the last group.
    let end = (from.len(), to.len());
    if bounds.len() == 1 {
        bounds.push(end);
    } else if let Some(last) = bounds.last_mut() {
        *last = end;
    }
    for w in bounds.windows(2) {
        let (input, outputs) = (w[0].0..w[1].0, w[0].1..w[1].1);
        let lead_in = input.clone().find(|&d| from[d] != 1);
        let lead_out = outputs.clone().find(|&k| to[k] != 1);
        let dyn_in: Vec<usize> = input.clone().filter(|&d| dynamic(d)).collect();
        let mut group = Group {
            input: input.clone(),
            outputs: outputs.clone(),
            output: None,
        };
        if !dyn_in.is_empty() {
            group.output = if outputs.len() == 1 {
                Some(outputs.start)
            } else if let Some(k) = outputs.clone().rev().find(|&k| declared_dynamic(k)) {
                Some(k)
            } else {
                let non_unit: Vec<usize> = outputs.clone().filter(|&k| to[k] != 1).collect();
                (non_unit.len() == 1).then(|| non_unit[0])
            };
            match group.output {
                None => {
                    for d in input {
                        plan.input_dynamic[d] = false;
                    }
                }
                Some(k) => {
                    let leading = dyn_in.iter().all(|&d| Some(d) == lead_in) && Some(k) == lead_out;
                    plan.moves |= !leading;
                }
            }
        }
        plan.groups.push(group);
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Per group `(input start, input end, output start, output end, the
    /// dynamic output dimension)`.
    type Groups = Vec<(usize, usize, usize, usize, Option<usize>)>;

    fn groups(from: &[usize], to: &[usize], dynamic: &[usize]) -> (Groups, bool) {
        let sizes: Sizes = (0..from.len())
            .map(|d| dynamic.contains(&d).then_some(InstrId(0)))
            .collect();
        let plan = reshape_plan(from, to, &sizes, |_| false);
        (
            plan.groups
                .iter()
                .map(|g| {
                    (
                        g.input.start,
                        g.input.end,
                        g.outputs.start,
                        g.outputs.end,
                        g.output,
                    )
                })
                .collect(),
            plan.moves,
        )
    }

    #[test]
    fn leading_dimension_keeps_offsets() {
        // [<=4, 3] -> [12]: row-major rows are already compact.
        assert_eq!(
            groups(&[4, 3], &[12], &[0]),
            (vec![(0, 2, 0, 1, Some(0))], false)
        );
        // [2, <=3] -> [6]: rows are not.
        assert_eq!(
            groups(&[2, 3], &[6], &[1]),
            (vec![(0, 2, 0, 1, Some(0))], true)
        );
        // A pass-through dimension beside others.
        assert_eq!(
            groups(&[5, 2, 3], &[5, 6], &[0]),
            (vec![(0, 1, 0, 1, Some(0)), (1, 3, 1, 2, None)], false)
        );
    }

    #[test]
    fn unit_dimensions_join_a_group() {
        let (g, moves) = groups(&[1, 2, 5, 1], &[10], &[2]);
        assert_eq!(g, vec![(0, 4, 0, 1, Some(0))]);
        assert!(moves);
    }

    #[test]
    fn ambiguous_split_is_static() {
        // [<=12] -> [2, 3, 2]: no output dimension can be told apart.
        assert_eq!(
            groups(&[12], &[2, 3, 2], &[0]),
            (vec![(0, 1, 0, 3, None)], false)
        );
        // [<=12] -> [1, 12]: the only non-unit one.
        assert_eq!(
            groups(&[12], &[1, 12], &[0]),
            (vec![(0, 1, 0, 2, Some(1))], false)
        );
    }
}
