//! `sort` → an odd-even transposition network, unrolled.
//!
//! `n` rounds over the sorted dimension (of size `n`); round `r` pairs
//! positions `(i, i + 1)` for every `i ≡ r (mod 2)`, takes the two sides as
//! strided `slice`s, and swaps a pair (with `select`, in every operand) where
//! the comparator says the right one is less than the left. The sides are
//! interleaved back with a new axis, `concatenate` and `reshape`. Swapping only
//! on "strictly less" keeps equal elements in order, so the network is a stable
//! sort, and after `n` rounds it has sorted: with a strict weak order the
//! stable result is unique, hence exactly the evaluator's.
//!
//! The comparator is applied elementwise to whole sides: its instructions are
//! copied into the computation with array shapes (constants broadcast,
//! parameters bound to the sides), so it may use only elementwise ops — any
//! other comparator is declined, as are dimensions longer than [`MAX_SORT`].

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloComputation, InstrId, Op, Opcode, SliceDim};

/// The longest dimension the network is unrolled for (`n` rounds).
pub const MAX_SORT: usize = 256;

/// See the module docs.
pub struct SortExpander;

/// Whether a comparator op can be applied elementwise to arrays: the
/// elementwise ops (and `bitcast-convert`), parameters, constants, and the
/// scalar-to-scalar `broadcast`/`reshape` that are identities here.
fn elementwise(op: &Op) -> bool {
    op.is_elementwise()
        || matches!(
            op,
            Op::Parameter { .. } | Op::Constant { .. } | Op::BitcastConvert | Op::Reshape
        )
        || matches!(op, Op::Broadcast { dimensions } if dimensions.is_empty())
}

impl Expander for SortExpander {
    fn name(&self) -> &'static str {
        "sort"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::Sort || types.is_empty() {
            return None;
        }
        let mut plan = Vec::new();
        for &t in types {
            plan.extend(super::all_of_type(
                t,
                &[Opcode::Slice, Opcode::Reshape, Opcode::Concatenate],
            ));
            plan.push((Opcode::Select, tys(&[t, ElementType::Pred])));
        }
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::Sort {
            dimension,
            comparator,
            ..
        } = &instr.op
        else {
            return false;
        };
        let Ok(comp) = b.computation(*comparator) else {
            return false;
        };
        let Some(&x) = instr.operands.first() else {
            return false;
        };
        let dims = b.instr(x).shape.dims();
        let scalar_only = comp
            .instructions
            .iter()
            .all(|i| i.shape.is_scalar() && elementwise(&i.op));
        scalar_only
            && comp.parameters().len() == 2 * instr.operands.len()
            && dims.get(*dimension).is_some_and(|&n| n <= MAX_SORT)
            && instr
                .operands
                .iter()
                .all(|&o| b.instr(o).shape.dims() == dims)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::Sort {
            dimension: d,
            comparator,
            ..
        } = instr.op
        else {
            return Err(Error::internal("sort expander on another op"));
        };
        let comp = b.computation(comparator)?.clone();
        let mut values = instr.operands.clone();
        let (_, dims) = b.array(values[0])?;
        let n = dims[d];
        let slice_of =
            |dims: &[usize], start: usize, limit: usize, stride: usize| -> Vec<SliceDim> {
                dims.iter()
                    .enumerate()
                    .map(|(k, &len)| {
                        if k == d {
                            SliceDim {
                                start,
                                limit,
                                stride,
                            }
                        } else {
                            SliceDim {
                                start: 0,
                                limit: len,
                                stride: 1,
                            }
                        }
                    })
                    .collect()
            };
        for round in 0..n {
            let start = round % 2;
            let m = (n - start) / 2;
            if m == 0 {
                continue;
            }
            let mut side = dims.clone();
            side[d] = m;
            let mut lefts = Vec::new();
            let mut rights = Vec::new();
            for &v in &values {
                let (t, _) = b.array(v)?;
                let shape = Shape::array(t, side.clone());
                lefts.push(b.add(
                    shape.clone(),
                    Op::Slice {
                        slice: slice_of(&dims, start, start + 2 * m - 1, 2),
                    },
                    vec![v],
                ));
                rights.push(b.add(
                    shape,
                    Op::Slice {
                        slice: slice_of(&dims, start + 1, start + 2 * m, 2),
                    },
                    vec![v],
                ));
            }
            // Swap where right < left: the comparator on (right, left) pairs.
            let mut args = Vec::new();
            for (l, r) in lefts.iter().zip(&rights) {
                args.extend([*r, *l]);
            }
            let swap = apply_elementwise(b, &comp, &args, &side)?;
            let mut next = Vec::with_capacity(values.len());
            for ((&v, &l), &r) in values.iter().zip(&lefts).zip(&rights) {
                let (t, _) = b.array(v)?;
                let new_l = b.select(swap, r, l)?;
                let new_r = b.select(swap, l, r)?;
                let mut axis = side.clone();
                axis.insert(d + 1, 1);
                let l1 = b.add(Shape::array(t, axis.clone()), Op::Reshape, vec![new_l]);
                let r1 = b.add(Shape::array(t, axis.clone()), Op::Reshape, vec![new_r]);
                axis[d + 1] = 2;
                let pair = b.add(
                    Shape::array(t, axis),
                    Op::Concatenate { dimension: d + 1 },
                    vec![l1, r1],
                );
                let mut woven = dims.clone();
                woven[d] = 2 * m;
                let woven_id = b.add(Shape::array(t, woven.clone()), Op::Reshape, vec![pair]);
                let mut parts = Vec::new();
                if start == 1 {
                    let mut one = dims.clone();
                    one[d] = 1;
                    parts.push(b.add(
                        Shape::array(t, one),
                        Op::Slice {
                            slice: slice_of(&dims, 0, 1, 1),
                        },
                        vec![v],
                    ));
                }
                parts.push(woven_id);
                if start + 2 * m < n {
                    let mut one = dims.clone();
                    one[d] = 1;
                    parts.push(b.add(
                        Shape::array(t, one),
                        Op::Slice {
                            slice: slice_of(&dims, n - 1, n, 1),
                        },
                        vec![v],
                    ));
                }
                next.push(if parts.len() == 1 {
                    woven_id
                } else {
                    b.add(
                        Shape::array(t, dims.clone()),
                        Op::Concatenate { dimension: d },
                        parts,
                    )
                });
            }
            values = next;
        }
        if values.len() == 1 && instr.shape.is_array() {
            return Ok(values[0]);
        }
        Ok(b.add(instr.shape.clone(), Op::Tuple, values))
    }
}

/// Copies the scalar computation `comp` into the current one with every value
/// an array of `dims`: parameter `k` is `args[k]`, a constant is broadcast.
/// Returns the copy of the root.
fn apply_elementwise(
    b: &mut Emitter<'_, '_>,
    comp: &HloComputation,
    args: &[InstrId],
    dims: &[usize],
) -> Result<InstrId> {
    let mut map: Vec<InstrId> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let ty = instr
            .shape
            .element_type()
            .ok_or_else(|| Error::invalid_argument("a comparator value is not an array"))?;
        let shape = Shape::array(ty, dims.to_vec());
        let operands: Vec<InstrId> = instr
            .operands
            .iter()
            .map(|o| {
                map.get(o.index())
                    .copied()
                    .ok_or_else(|| Error::invalid_argument("comparator operand out of order"))
            })
            .collect::<Result<_>>()?;
        let new = match &instr.op {
            Op::Parameter { number } => *args
                .get(*number)
                .ok_or_else(|| Error::invalid_argument("comparator parameter out of range"))?,
            Op::Constant { .. } => {
                let c = b.add(instr.shape.clone(), instr.op.clone(), vec![]);
                b.add(shape, Op::Broadcast { dimensions: vec![] }, vec![c])
            }
            Op::Broadcast { .. } | Op::Reshape | Op::Copy => *operands
                .first()
                .ok_or_else(|| Error::invalid_argument("comparator broadcast without operand"))?,
            op => b.add(shape, op.clone(), operands),
        };
        map.push(new);
    }
    map.get(comp.root.index())
        .copied()
        .ok_or_else(|| Error::invalid_argument("comparator root out of range"))
}

/// `topk(x)` → `sort((x, iota))` along the last dimension, then the first `k`
/// of both. The comparator orders values in total order (descending for
/// `largest`), and the sort is stable, so ties keep ascending indices — the
/// evaluator's `topk` exactly.
pub struct TopKExpander;

impl Expander for TopKExpander {
    fn name(&self) -> &'static str {
        "topk"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::TopK || types.iter().any(|t| t.is_complex() || t.is_pred()) {
            return None;
        }
        let mut plan = super::all_of_type(ElementType::S32, &[Opcode::Iota, Opcode::Slice]);
        plan.push((Opcode::Sort, types.to_vec()));
        for &t in types {
            plan.push((Opcode::Slice, vec![t]));
        }
        Some(plan)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        use hlo_ir::attrs::{ComparisonDirection as Dir, ComparisonType};
        let Op::TopK { k, largest } = b.instr(id).op else {
            return Err(Error::internal("topk expander on another op"));
        };
        let x = b.operand(0)?;
        let (t, dims) = b.array(x)?;
        let last = dims
            .len()
            .checked_sub(1)
            .ok_or_else(|| Error::invalid_argument("topk of a scalar"))?;
        if k > dims[last] {
            return Err(Error::invalid_argument("topk: k exceeds the dimension"));
        }
        // The comparator: values in total order (integers in their own).
        let mut cb = hlo_ir::builder::HloBuilder::new("topk_compare");
        let a = cb.parameter(0, Shape::scalar(t), "a")?;
        let c = cb.parameter(1, Shape::scalar(t), "b")?;
        cb.parameter(2, Shape::scalar(ElementType::S32), "i")?;
        cb.parameter(3, Shape::scalar(ElementType::S32), "j")?;
        let direction = if largest { Dir::Gt } else { Dir::Lt };
        let cmp = if t.is_float() {
            cb.compare_with_type(a, c, direction, ComparisonType::TotalOrder)?
        } else {
            cb.compare(a, c, direction)?
        };
        let comparator = b.attach(&cb.build_computation(cmp)?)?;
        let iota = b.add(
            Shape::array(ElementType::S32, dims.clone()),
            Op::Iota { dimension: last },
            vec![],
        );
        let sorted_shape = Shape::tuple(vec![
            Shape::array(t, dims.clone()),
            Shape::array(ElementType::S32, dims.clone()),
        ]);
        let sorted = b.add(
            sorted_shape,
            Op::Sort {
                dimension: last,
                is_stable: true,
                comparator,
            },
            vec![x, iota],
        );
        let mut out = Vec::with_capacity(2);
        for (index, ty) in [(0, t), (1, ElementType::S32)] {
            let full = b.add(
                Shape::array(ty, dims.clone()),
                Op::GetTupleElement { index },
                vec![sorted],
            );
            let mut top = dims.clone();
            top[last] = k;
            let slice = dims
                .iter()
                .enumerate()
                .map(|(d, &len)| SliceDim {
                    start: 0,
                    limit: if d == last { k } else { len },
                    stride: 1,
                })
                .collect();
            out.push(b.add(Shape::array(ty, top), Op::Slice { slice }, vec![full]));
        }
        let shape = b.instr(id).shape.clone();
        Ok(b.add(shape, Op::Tuple, out))
    }
}

/// XLA's `TopK` custom call → the `topk` op (largest first in total order,
/// ties by index: what the target computes, whatever comparator XLA attached),
/// which [`TopKExpander`] legalizes in turn. A custom call's element types
/// are not part of its key, so the plan lists nothing; the `topk` it emits is
/// checked like any other instruction.
pub struct TopKCustomCallExpander;

impl Expander for TopKCustomCallExpander {
    fn name(&self) -> &'static str {
        "TopK custom call"
    }
    fn plan(&self, op: Opcode, _types: &[ElementType]) -> Option<Vec<Emitted>> {
        (op == Opcode::CustomCall).then(Vec::new)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::CustomCall(attrs) = &instr.op else {
            return false;
        };
        let leaves = instr.shape.tuple_shapes();
        attrs.target == "TopK"
            && instr.operands.len() == 1
            && leaves.len() == 2
            && leaves.iter().all(|l| l.is_array() && l.rank() >= 1)
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let shape = b.instr(id).shape.clone();
        let k = shape
            .tuple_shapes()
            .first()
            .and_then(|v| v.dims().last().copied())
            .ok_or_else(|| Error::invalid_argument("TopK: the result is not (values, indices)"))?;
        let x = b.operand(0)?;
        Ok(b.add(shape, Op::TopK { k, largest: true }, vec![x]))
    }
}
