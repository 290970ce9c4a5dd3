//! Dynamic dimensions made static, as XLA's DynamicPadder does for its CPU and
//! GPU compilers.
//!
//! A dimension written `<=n` holds at most `n` elements; how many it holds at
//! run time (its *dynamic size*) is set by `set-dimension-size` and read by
//! `get-dimension-size`. XLA keeps such an array in a buffer of the bound and
//! carries the size beside it; the elements past the size are padding that
//! only some operations look at. [`PadDynamicShapes`] does the same in the
//! program itself, so no backend needs dynamic shapes:
//!
//! * every value is its static bound; the dynamic size of each dimension is
//!   an `s32` scalar instruction tracked beside the value (a parameter's
//!   dynamic dimensions are full: an argument always has the bound's size);
//! * `set-dimension-size(x, n)` becomes `x` with size `n`;
//!   `get-dimension-size(x)` becomes that size (or the static extent);
//! * elementwise ops, `broadcast`, `transpose`, `reduce`, `dot` and `gather`
//!   carry sizes to their results; operands of an elementwise op with
//!   different sizes follow XLA's rule (a size-1 operand is broadcast, else
//!   the smaller size wins);
//! * operations that read the padding mask it first: a `reduce` over a dynamic
//!   dimension sees its init value there, a `dot` contracting one sees zeros,
//!   a `pad` sees its padding value;
//! * a `slice` of part of a dynamic dimension makes it static;
//! * operations whose element positions depend on the sizes (`concatenate`,
//!   `reverse`, `reshape`, `dynamic-reshape`, `sort`) compute them at run time
//!   ([`moves`]);
//! * the entry computation's dynamic results are laid out compactly, their
//!   logical elements first and then zeros, which is what XLA CPU hands back.
//!
//! XLA's `SliceToDynamic` and `PadToStatic` custom calls, which its compilers
//! leave in the modules they print, are the same two conversions.
//!
//! Where XLA CPU's answers differ from XLA's own dynamic-padder tests, the pass
//! follows XLA CPU (compiling through StableHLO, as jaxlib does): a reshape's
//! `inferred_dimension` is ignored, so a dynamic dimension split ambiguously
//! is reshaped as its padded buffer, and `get-dimension-size` of a dimension
//! declared static reads its extent.
//!
//! A `scatter` carries its operands' sizes (dynamic indices or updates are
//! refused). A dynamic value reaching an operation not listed (`while`,
//! `conditional`, ...) or crossing into another computation is
//! `Unimplemented`, naming the operation, rather than computed over its
//! padding.

mod moves;

use crate::HloPass;
use hlo_ir::attrs::ComparisonDirection;
use hlo_ir::error::{Error, Result};
use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{BinaryOp, CompId, HloComputation, HloModule, InstrId, Literal, Op, Opcode, Scalar};
use std::collections::HashMap;

/// See the module docs.
#[derive(Debug, Default)]
pub struct PadDynamicShapes;

/// Per dimension, the instruction holding its dynamic size (`None`: full).
type Sizes = Vec<Option<InstrId>>;

/// What is known of a value's dynamic sizes.
#[derive(Clone, Debug, PartialEq)]
enum Dyn {
    /// An array, by dimension.
    Array(Sizes),
    /// A tuple, by element.
    Tuple(Vec<Dyn>),
}

impl Dyn {
    fn is_dynamic(&self) -> bool {
        match self {
            Dyn::Array(s) => s.iter().any(Option::is_some),
            Dyn::Tuple(e) => e.iter().any(Dyn::is_dynamic),
        }
    }
}

/// XLA's own custom calls between dynamic and static arrays, found in the
/// modules its compilers print: `SliceToDynamic(x, sizes...)` gives `x` the
/// sizes (one `s32` per dimension); `PadToStatic(x)` returns `(x, sizes...)`.
const SLICE_TO_DYNAMIC: &str = "SliceToDynamic";
const PAD_TO_STATIC: &str = "PadToStatic";

fn custom_call_target(op: &Op) -> Option<&str> {
    match op {
        Op::CustomCall(cc) => Some(cc.target.as_str()),
        _ => None,
    }
}

fn mentions_dynamic(module: &HloModule) -> bool {
    module
        .computations
        .iter()
        .flat_map(|c| &c.instructions)
        .any(|i| {
            matches!(
                i.opcode(),
                Opcode::SetDimensionSize | Opcode::GetDimensionSize
            ) || matches!(
                custom_call_target(&i.op),
                Some(SLICE_TO_DYNAMIC | PAD_TO_STATIC)
            ) || i.shape.leaves().iter().any(|(_, a)| !a.dynamic.is_empty())
        })
}

/// `shape` with every dimension static.
fn strip(shape: &Shape) -> Shape {
    match shape {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.dynamic.clear();
            Shape::Array(a)
        }
        Shape::Tuple(e) => Shape::Tuple(e.iter().map(strip).collect()),
        other => other.clone(),
    }
}

fn full(shape: &Shape) -> Dyn {
    match shape {
        Shape::Tuple(e) => Dyn::Tuple(e.iter().map(full).collect()),
        Shape::Array(a) => Dyn::Array(vec![None; a.dims.len()]),
        _ => Dyn::Array(Vec::new()),
    }
}

impl HloPass for PadDynamicShapes {
    fn name(&self) -> &str {
        "pad-dynamic-shapes"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        if !mentions_dynamic(module) {
            return Ok(false);
        }
        hlo_ir::rewrite::check_references(module)?;
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        let entry = module.entry.index();
        let mut changed = false;
        // A sort over a dynamic dimension gets a comparator built from its
        // own; new computations are numbered after the existing ones.
        let comparators: HashMap<CompId, HloComputation> = module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .filter_map(|i| match i.op {
                Op::Sort { comparator, .. } => Some(comparator),
                _ => None,
            })
            .filter_map(|c| Some((c, module.computations.get(c.index())?.clone())))
            .collect();
        let first_new = module.computations.len();
        let mut added = Vec::new();
        for (c, comp) in module.computations.iter_mut().enumerate() {
            let mut ed = ComputationEditor::new(comp, &mut names);
            let mut pass = Padder {
                ed: &mut ed,
                dyns: Vec::new(),
                replaced: Vec::new(),
                comparators: &comparators,
                first_new,
                added: &mut added,
            };
            pass.run(c == entry)?;
            changed |= ed.finish(&effectful)?;
        }
        for comp in added {
            hlo_ir::rewrite::add_computation(module, comp);
            changed = true;
        }
        for comp in module.computations.iter_mut() {
            for instr in comp.instructions.iter_mut() {
                let stripped = strip(&instr.shape);
                if stripped != instr.shape {
                    instr.shape = stripped;
                    changed = true;
                }
            }
        }
        Ok(changed)
    }
}

struct Padder<'e, 'a> {
    ed: &'e mut ComputationEditor<'a>,
    /// Per original instruction, its value's sizes.
    dyns: Vec<Dyn>,
    /// `(instruction, replacement)`, applied once every instruction is
    /// visited: users must still find a `set-dimension-size`'s sizes.
    replaced: Vec<(InstrId, InstrId)>,
    /// The sort comparators of the module as the pass found them.
    comparators: &'e HashMap<CompId, HloComputation>,
    /// The id the first computation the pass adds will have.
    first_new: usize,
    /// Computations the pass builds, added after the existing ones in order.
    added: &'e mut Vec<HloComputation>,
}

impl Padder<'_, '_> {
    fn unsupported(&self, id: InstrId, why: &str) -> Error {
        let instr = self.ed.instr(id);
        Error::unimplemented(format!(
            "dynamic dimensions: %{} ({}) {why}",
            instr.name,
            instr.opcode()
        ))
    }

    /// What is known of `id`'s sizes: nothing (full) for an instruction not
    /// visited yet, which only a malformed module can ask for.
    fn dyn_of(&self, id: InstrId) -> Dyn {
        self.dyns
            .get(id.index())
            .cloned()
            .unwrap_or(Dyn::Array(Vec::new()))
    }

    fn array_sizes(&self, id: InstrId) -> Sizes {
        match self.dyns.get(id.index()) {
            Some(Dyn::Array(s)) => s.clone(),
            _ => Vec::new(),
        }
    }

    fn s32(&mut self, v: i64) -> InstrId {
        let v = i32::try_from(v).unwrap_or(i32::MAX);
        self.ed.add_op(
            "size",
            Shape::scalar(ElementType::S32),
            Op::Constant {
                literal: Literal::from_scalar(Scalar::S32(v)),
            },
            vec![],
        )
    }

    /// A `pred` array of extents `dims`: whether each position's index along
    /// dimension `d` is below `size` (a real element rather than padding).
    fn inside(&mut self, dims: &[usize], d: usize, size: InstrId) -> InstrId {
        let index = Shape::array(ElementType::S32, dims.to_vec());
        let iota = self.ed.add_op(
            "pad_index",
            index.clone(),
            Op::Iota { dimension: d },
            vec![],
        );
        let bound = self.ed.add_op(
            "pad_size",
            index,
            Op::Broadcast { dimensions: vec![] },
            vec![size],
        );
        self.ed.add_op(
            "pad_inside",
            Shape::array(ElementType::Pred, dims.to_vec()),
            Op::Compare {
                direction: ComparisonDirection::Lt,
                compare_type: None,
            },
            vec![iota, bound],
        )
    }

    /// `x` (of `like`'s dims) with the elements past `sizes` replaced by
    /// `fill` (a scalar).
    fn mask(&mut self, x: InstrId, sizes: &Sizes, fill: InstrId) -> Result<InstrId> {
        let shape = strip(&self.ed.instr(x).shape);
        let dims = shape.array_or_err()?.dims.clone();
        let pred = Shape::array(ElementType::Pred, dims.clone());
        let mut keep: Option<InstrId> = None;
        for (d, size) in sizes.iter().enumerate() {
            let Some(size) = *size else { continue };
            let inside = self.inside(&dims, d, size);
            keep = Some(match keep {
                None => inside,
                Some(k) => self.ed.add_op(
                    "pad_inside",
                    pred.clone(),
                    Op::Binary(BinaryOp::And),
                    vec![k, inside],
                ),
            });
        }
        let Some(keep) = keep else { return Ok(x) };
        let fill = self.ed.add_op(
            "pad_fill",
            shape.clone(),
            Op::Broadcast { dimensions: vec![] },
            vec![fill],
        );
        Ok(self
            .ed
            .add_op("unpadded", shape, Op::Select, vec![keep, x, fill]))
    }

    fn zero_of(&mut self, x: InstrId) -> Result<InstrId> {
        let ty = self.ed.instr(x).shape.array_or_err()?.element_type;
        Ok(self.ed.add_op(
            "zero",
            Shape::scalar(ty),
            Op::Constant {
                literal: Literal::zeros(&Shape::scalar(ty)),
            },
            vec![],
        ))
    }

    /// The value of `x` with each dynamic leaf laid out compactly (see
    /// [`moves`]).
    fn compact_result(&mut self, x: InstrId, dyn_: &Dyn) -> Result<InstrId> {
        match dyn_ {
            Dyn::Array(sizes) => {
                if sizes.iter().all(Option::is_none) {
                    return Ok(x);
                }
                self.compact(x, sizes)
            }
            Dyn::Tuple(elements) => {
                if !dyn_.is_dynamic() {
                    return Ok(x);
                }
                let shape = strip(&self.ed.instr(x).shape);
                let Shape::Tuple(shapes) = &shape else {
                    return Err(Error::internal("tuple sizes for a non-tuple"));
                };
                let mut parts = Vec::new();
                for (i, (s, e)) in shapes.iter().zip(elements).enumerate() {
                    let gte = self.ed.add_op(
                        "element",
                        s.clone(),
                        Op::GetTupleElement { index: i },
                        vec![x],
                    );
                    parts.push(self.compact_result(gte, e)?);
                }
                Ok(self.ed.add_op("result", shape, Op::Tuple, parts))
            }
        }
    }

    fn run(&mut self, is_entry: bool) -> Result<()> {
        let n = self.ed.len();
        for i in 0..n {
            let id = InstrId(i as u32);
            let d = self.visit(id)?;
            self.dyns.push(d);
        }
        let root = self.ed.root();
        let root_dyn = self.dyn_of(root);
        if root_dyn.is_dynamic() {
            if !is_entry {
                return Err(self.unsupported(
                    root,
                    "returns a value with a dynamic dimension from a computation that is not \
                     the entry, which is not supported",
                ));
            }
            let out = self.compact_result(root, &root_dyn)?;
            self.ed.set_root(out);
        }
        // Latest first: a replacement may use an instruction replaced
        // before it (a `set-dimension-size` of a `set-dimension-size`), or
        // the very instruction it replaces.
        for (old, new) in std::mem::take(&mut self.replaced).into_iter().rev() {
            self.ed.replace_all_uses(old, new)?;
        }
        Ok(())
    }

    /// The sizes of `id`'s value, rewriting `id` where it needs it.
    fn visit(&mut self, id: InstrId) -> Result<Dyn> {
        let instr = self.ed.instr(id).clone();
        let operand_dyn: Vec<Dyn> = instr.operands.iter().map(|&o| self.dyn_of(o)).collect();
        let any_dynamic = operand_dyn.iter().any(Dyn::is_dynamic);
        let rank = match &instr.shape {
            Shape::Array(a) => a.dims.len(),
            _ => 0,
        };
        match &instr.op {
            Op::SetDimensionSize { dimension } => {
                let x = instr.operand(0)?;
                let mut sizes = self.array_sizes(x);
                sizes.resize(rank, None);
                if *dimension >= rank {
                    return Err(self.unsupported(id, "names a dimension out of range"));
                }
                sizes[*dimension] = Some(instr.operand(1)?);
                self.replaced.push((id, x));
                Ok(Dyn::Array(sizes))
            }
            Op::GetDimensionSize { dimension } => {
                let x = instr.operand(0)?;
                // A dimension the operand's shape declares static reads as
                // its extent, as XLA CPU answers (its StableHLO form folds
                // the size of a static dimension).
                let declared = self
                    .ed
                    .instr(x)
                    .shape
                    .array_or_err()?
                    .is_dynamic_dim(*dimension);
                let size = match self.array_sizes(x).get(*dimension) {
                    Some(Some(s)) if declared => *s,
                    _ => {
                        let dims = &self.ed.instr(x).shape.array_or_err()?.dims;
                        let extent = *dims.get(*dimension).ok_or_else(|| {
                            self.unsupported(id, "names a dimension out of range")
                        })?;
                        self.s32(extent as i64)
                    }
                };
                self.replaced.push((id, size));
                Ok(Dyn::Array(Vec::new()))
            }
            op if custom_call_target(op) == Some(SLICE_TO_DYNAMIC) => {
                let x = instr.operand(0)?;
                let shape = instr.shape.array_or_err()?;
                if instr.operands.len() != rank + 1 {
                    return Err(self.unsupported(
                        id,
                        "needs the array and one size per dimension as operands",
                    ));
                }
                let sizes = (0..rank)
                    .map(|d| shape.is_dynamic_dim(d).then_some(instr.operands[1 + d]))
                    .collect();
                self.replaced.push((id, x));
                Ok(Dyn::Array(sizes))
            }
            op if custom_call_target(op) == Some(PAD_TO_STATIC) => {
                let x = instr.operand(0)?;
                let sizes = self.array_sizes(x);
                let dims = self.ed.instr(x).shape.array_or_err()?.dims.clone();
                let mut parts = vec![x];
                for (d, &extent) in dims.iter().enumerate() {
                    parts.push(match sizes.get(d).copied().flatten() {
                        Some(s) => s,
                        None => self.s32(extent as i64),
                    });
                }
                let tuple = self
                    .ed
                    .add_op("padded", strip(&instr.shape), Op::Tuple, parts);
                self.replaced.push((id, tuple));
                Ok(full(&instr.shape))
            }
            Op::DynamicReshape => self.dynamic_reshape(id),
            _ if !any_dynamic => Ok(full(&instr.shape)),
            Op::Clamp => {
                // XLA passes sizes through a clamp: per dimension, the last
                // operand with a dynamic size gives it, nothing is broadcast.
                let mut sizes: Sizes = vec![None; rank];
                for d in &operand_dyn {
                    if let Dyn::Array(s) = d {
                        for (k, size) in s.iter().enumerate() {
                            if k < rank && size.is_some() {
                                sizes[k] = *size;
                            }
                        }
                    }
                }
                Ok(Dyn::Array(sizes))
            }
            op if op.is_elementwise() || matches!(op, Op::Map { .. }) => {
                self.elementwise_sizes(id, &operand_dyn, rank)
            }
            Op::Slice { slice } => {
                // Slicing part of a dynamic dimension makes it static (XLA:
                // the elements past the size read as whatever is there).
                let x = instr.operand(0)?;
                let dims = self.ed.instr(x).shape.array_or_err()?.dims.clone();
                let sizes = self.array_sizes(x);
                Ok(Dyn::Array(
                    slice
                        .iter()
                        .enumerate()
                        .map(|(d, s)| {
                            let whole =
                                s.start == 0 && s.stride == 1 && dims.get(d) == Some(&s.limit);
                            sizes.get(d).copied().flatten().filter(|_| whole)
                        })
                        .collect(),
                ))
            }
            Op::Concatenate { dimension } => self.concatenate(id, *dimension),
            Op::Reverse { dimensions } => self.reverse(id, dimensions),
            Op::Pad { config } => self.pad(id, config),
            Op::Sort {
                dimension,
                comparator,
                ..
            } => self.sort(id, *dimension, *comparator),
            Op::Gather {
                dnums, slice_sizes, ..
            } => self.gather(id, dnums, slice_sizes),
            Op::Scatter { .. } => {
                // The operands' sizes are the results'; updates and indices
                // with a dynamic dimension would need their padding skipped.
                let n = instr.operands.len() / 2;
                if operand_dyn[n..].iter().any(Dyn::is_dynamic) {
                    return Err(self.unsupported(
                        id,
                        "has dynamic indices or updates, which is not supported yet",
                    ));
                }
                let sizes = self.array_sizes(instr.operand(0)?);
                Ok(match &instr.shape {
                    Shape::Tuple(e) => Dyn::Tuple(vec![Dyn::Array(sizes); e.len()]),
                    _ => Dyn::Array(sizes),
                })
            }
            Op::Broadcast { dimensions } => {
                let mut sizes: Sizes = vec![None; rank];
                for (k, size) in self.array_sizes(instr.operand(0)?).iter().enumerate() {
                    if let (Some(&out), Some(s)) = (dimensions.get(k), size) {
                        if out < rank {
                            sizes[out] = Some(*s);
                        }
                    }
                }
                Ok(Dyn::Array(sizes))
            }
            Op::Transpose { dimensions } => {
                let from = self.array_sizes(instr.operand(0)?);
                Ok(Dyn::Array(
                    dimensions
                        .iter()
                        .map(|&p| from.get(p).copied().flatten())
                        .collect(),
                ))
            }
            Op::Reshape => self.reshape(id),
            Op::Reduce { dimensions, .. } => {
                let half = instr.operands.len() / 2;
                for k in 0..half {
                    let x = instr.operands[k];
                    let sizes = self.array_sizes(x);
                    let reduced: Sizes = sizes
                        .iter()
                        .enumerate()
                        .map(|(d, s)| if dimensions.contains(&d) { *s } else { None })
                        .collect();
                    if reduced.iter().any(Option::is_some) {
                        let masked = self.mask(x, &reduced, instr.operands[half + k])?;
                        self.ed.replace_operand(id, x, masked);
                    }
                }
                let sizes = self.array_sizes(instr.operand(0)?);
                let kept: Sizes = sizes
                    .iter()
                    .enumerate()
                    .filter(|(d, _)| !dimensions.contains(d))
                    .map(|(_, s)| *s)
                    .collect();
                Ok(match &instr.shape {
                    Shape::Tuple(e) => Dyn::Tuple(vec![Dyn::Array(kept); e.len()]),
                    _ => Dyn::Array(kept),
                })
            }
            Op::Dot { dnums, .. } => {
                let (lhs, rhs) = (instr.operand(0)?, instr.operand(1)?);
                let (ls, rs) = (self.array_sizes(lhs), self.array_sizes(rhs));
                let lrank = self.ed.instr(lhs).shape.array_or_err()?.dims.len();
                let rrank = self.ed.instr(rhs).shape.array_or_err()?.dims.len();
                let at = |s: &Sizes, d: usize| s.get(d).copied().flatten();
                // Padding on either side of a contraction must contribute zero.
                for (x, sizes, contracting) in [
                    (lhs, &ls, &dnums.lhs_contracting_dims),
                    (rhs, &rs, &dnums.rhs_contracting_dims),
                ] {
                    let masked: Sizes = (0..sizes.len())
                        .map(|d| {
                            if contracting.contains(&d) {
                                at(sizes, d)
                            } else {
                                None
                            }
                        })
                        .collect();
                    if masked.iter().any(Option::is_some) {
                        let zero = self.zero_of(x)?;
                        let m = self.mask(x, &masked, zero)?;
                        self.ed.replace_operand(id, x, m);
                    }
                }
                let mut out: Sizes = Vec::with_capacity(rank);
                for (&l, &r) in dnums.lhs_batch_dims.iter().zip(&dnums.rhs_batch_dims) {
                    out.push(at(&ls, l).or(at(&rs, r)));
                }
                for d in 0..lrank {
                    if !dnums.lhs_batch_dims.contains(&d)
                        && !dnums.lhs_contracting_dims.contains(&d)
                    {
                        out.push(at(&ls, d));
                    }
                }
                for d in 0..rrank {
                    if !dnums.rhs_batch_dims.contains(&d)
                        && !dnums.rhs_contracting_dims.contains(&d)
                    {
                        out.push(at(&rs, d));
                    }
                }
                Ok(Dyn::Array(out))
            }
            Op::Tuple => Ok(Dyn::Tuple(operand_dyn)),
            Op::GetTupleElement { index } => match operand_dyn.first() {
                Some(Dyn::Tuple(e)) => {
                    Ok(e.get(*index).cloned().unwrap_or_else(|| full(&instr.shape)))
                }
                _ => Ok(full(&instr.shape)),
            },
            _ => Err(self.unsupported(
                id,
                "reads a value with a dynamic dimension, which this operation does not support yet",
            )),
        }
    }
}
