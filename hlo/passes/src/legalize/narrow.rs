//! Narrow types (`s2` `s4` `u2` `u4`, the f8/f6/f4 floats) computed in a wide
//! type: [`WidenNarrowTypes`].
//!
//! Every value of a narrow type is carried in its wide type
//! ([`ElementType::wide_type`]: `f16` for the floats but `f8e8m0fnu` (`f32`),
//! `s8`/`u8` for the integers), in every computation. Each instruction that computes a narrow
//! array is followed by a round trip `convert` wide → narrow → wide, so the
//! wide value is always exactly a narrow one: one op evaluated in the wide type
//! and rounded once, which is what XLA CPU does with f8 arithmetic (it upcasts
//! to `f16` and rounds the result back), and, for the integers, two's-complement
//! arithmetic wrapped at the narrow width. Only the entry computation's
//! parameters and result keep their narrow types: a `convert` widens each
//! parameter and narrows the result.
//!
//! Why the whole program rather than each op with its own converts: data
//! movement, control flow and subcomputations (reducers, comparators, loop
//! bodies) then need nothing at all, since every computation simply runs in
//! the wide type, and a backend meets a narrow type only in `convert` (to or
//! from it), in `bitcast-convert` (a byte copy for equal widths, bit packing
//! otherwise: `hlo_semantics::repack_bits`) and in the
//! plumbing around the entry's parameters and result (`parameter`, `tuple`,
//! `get-tuple-element`, `constant`). No kernel needs a narrow variant.
//!
//! The rules, per instruction:
//! * `convert` (and `stochastic-convert`) to a narrow type: the op itself,
//!   then a `convert` back to the wide type; `convert`
//!   from one: a `convert` from the wide type, which gives the same value (every
//!   narrow value is exact in its wide type);
//! * `bitcast-convert` to or from a narrow type: narrowed, reinterpreted (or
//!   repacked), widened;
//! * `constant`: kept narrow and widened by a `convert`;
//! * bit ops whose wide result would see the sign extension of a signed narrow
//!   integer (`shift-right-logical`, `count-leading-zeros`) first mask the
//!   operand to the narrow width; `count-leading-zeros` then subtracts the
//!   width difference. `popcnt` is not masked: XLA CPU counts the bits of the
//!   sign-extended `s8` (`popcnt` of `s4` -2 is 7, of -1 is 8, wrapped to -8),
//!   and so does this;
//! * data movement (`reshape`, `slice`, `select`, `gather`, `tuple`, ...) only
//!   changes its shape's element type; everything else computing a narrow
//!   array is rounded as above.
//!
//! XLA's optimized HLO marks `s4` arrays `E(4)` (packed two to a byte in its
//! memory); the pass drops that annotation from narrow arrays' layouts, since
//! here they are always one element per byte.
//!
//! `custom-call`, `infeed`, `outfeed`, `send` and `recv` on a narrow type are
//! refused (`Unimplemented`): their bytes cross the program's boundary.
//!
//! Comparisons compare the wide values, so the order is the numeric one (the
//! fnuz formats' single NaN compares as a NaN, like XLA's).

use crate::HloPass;
use hlo_ir::error::{Error, Result};
use hlo_ir::literal::Literal;
use hlo_ir::rewrite::NameGen;
use hlo_ir::shape::{ArrayShape, ElementType, Shape};
use hlo_ir::{BinaryOp, HloComputation, HloInstruction, HloModule, InstrId, Op, UnaryOp};

/// See the module docs.
#[derive(Debug, Default)]
pub struct WidenNarrowTypes;

impl HloPass for WidenNarrowTypes {
    fn name(&self) -> &str {
        "widen-narrow-types"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        // `needs_widening` and `widen_computation` index operands.
        hlo_ir::rewrite::check_references(module)?;
        let unpacked = drop_packing(module);
        if !needs_widening(module) {
            return Ok(unpacked);
        }
        let mut names = NameGen::for_instructions(module);
        let entry = module.entry;
        for id in module.comp_ids().collect::<Vec<_>>() {
            let comp = module.computation(id);
            let widened = widen_computation(comp, id == entry, &mut names)?;
            *module.computation_mut(id) = widened;
        }
        Ok(true)
    }
}

/// Removes `E(n)` (XLA's packed-in-memory annotation, which its optimized HLO
/// puts on `s4` arrays) from narrow arrays' layouts: here they are always one
/// element per byte. Returns whether any layout changed.
fn drop_packing(module: &mut HloModule) -> bool {
    fn strip(shape: &mut Shape) -> bool {
        match shape {
            Shape::Array(a) if a.element_type.is_narrow() => a
                .layout
                .as_mut()
                .is_some_and(|l| l.element_size_in_bits.take().is_some()),
            Shape::Tuple(elements) => elements.iter_mut().fold(false, |c, e| strip(e) | c),
            _ => false,
        }
    }
    let mut changed = false;
    for comp in &mut module.computations {
        for instr in &mut comp.instructions {
            changed |= strip(&mut instr.shape);
        }
    }
    changed
}

/// Whether an instruction other than the plumbing this pass leaves behind
/// (`parameter`, `constant`, `convert`, `stochastic-convert`,
/// `bitcast-convert`, `tuple`, `get-tuple-element`) has a narrow type in its
/// shape or its operands' shapes. The pass does nothing otherwise, so running
/// it twice changes nothing.
pub fn needs_widening(module: &HloModule) -> bool {
    module.computations.iter().any(|c| {
        c.instructions.iter().any(|i| {
            !matches!(
                i.op,
                Op::Parameter { .. }
                    | Op::Constant { .. }
                    | Op::Convert
                    | Op::StochasticConvert
                    | Op::BitcastConvert
                    | Op::Tuple
                    | Op::GetTupleElement { .. }
            ) && (has_narrow(&i.shape) || i.operands.iter().any(|o| has_narrow(&c.instr(*o).shape)))
        })
    })
}

fn has_narrow(shape: &Shape) -> bool {
    match shape {
        Shape::Array(a) => a.element_type.is_narrow(),
        Shape::Tuple(elements) => elements.iter().any(has_narrow),
        Shape::Token => false,
    }
}

/// The shape with every narrow element type replaced by its wide type.
fn widen_shape(shape: &Shape) -> Shape {
    match shape {
        Shape::Array(a) => Shape::Array(retyped(a, a.element_type.wide_type())),
        Shape::Tuple(elements) => Shape::Tuple(elements.iter().map(widen_shape).collect()),
        Shape::Token => Shape::Token,
    }
}

fn retyped(a: &ArrayShape, element_type: ElementType) -> ArrayShape {
    ArrayShape {
        element_type,
        ..a.clone()
    }
}

/// Instructions that only move, select or repackage values: a narrow value in
/// gives a narrow value out, so no rounding is needed after them.
fn moves_values(op: &Op) -> bool {
    matches!(
        op,
        Op::Parameter { .. }
            | Op::GetTupleElement { .. }
            | Op::Tuple
            | Op::Reshape
            | Op::Transpose { .. }
            | Op::Broadcast { .. }
            | Op::Slice { .. }
            | Op::Concatenate { .. }
            | Op::Copy
            | Op::Bitcast
            | Op::DynamicSlice { .. }
            | Op::DynamicUpdateSlice
            | Op::Gather { .. }
            | Op::Pad { .. }
            | Op::Reverse { .. }
            | Op::Select
            | Op::While { .. }
            | Op::Conditional { .. }
            | Op::Call { .. }
            | Op::Sort { .. }
    )
}

struct Builder<'a> {
    out: Vec<HloInstruction>,
    names: &'a mut NameGen,
}

impl Builder<'_> {
    fn push(&mut self, base: &str, shape: Shape, op: Op, operands: Vec<InstrId>) -> InstrId {
        let name = self.names.fresh(base);
        self.append(HloInstruction::new(name, shape, op, operands))
    }

    /// Appends `instr` as it is; returns its id.
    fn append(&mut self, instr: HloInstruction) -> InstrId {
        self.out.push(instr);
        InstrId((self.out.len() - 1) as u32)
    }

    /// Each element of the tuple `value`, taken out by a `get-tuple-element`
    /// and passed through `f` with its index.
    fn map_elements(
        &mut self,
        base: &str,
        value: InstrId,
        mut f: impl FnMut(&mut Self, usize, InstrId) -> InstrId,
    ) -> Vec<InstrId> {
        let elements = self.shape(value).tuple_shapes().to_vec();
        elements
            .into_iter()
            .enumerate()
            .map(|(index, shape)| {
                let gte = self.push(base, shape, Op::GetTupleElement { index }, vec![value]);
                f(self, index, gte)
            })
            .collect()
    }

    fn shape(&self, id: InstrId) -> Shape {
        self.out[id.index()].shape.clone()
    }

    /// `value` (of a shape with narrow types) carried in the wide types.
    fn widen(&mut self, base: &str, value: InstrId) -> InstrId {
        let shape = self.shape(value);
        match &shape {
            Shape::Array(a) if a.element_type.is_narrow() => {
                let wide = Shape::Array(retyped(a, a.element_type.wide_type()));
                self.push(base, wide, Op::Convert, vec![value])
            }
            Shape::Tuple(_) if has_narrow(&shape) => {
                let parts = self.map_elements(base, value, |b, _, gte| b.widen(base, gte));
                let shape = widen_shape(&shape);
                self.push(base, shape, Op::Tuple, parts)
            }
            _ => value,
        }
    }

    /// `value` (carried wide) in the narrow types of `target`.
    fn narrow(&mut self, base: &str, value: InstrId, target: &Shape) -> InstrId {
        match target {
            Shape::Array(a) if a.element_type.is_narrow() => {
                self.push(base, target.clone(), Op::Convert, vec![value])
            }
            Shape::Tuple(elements) if has_narrow(target) => {
                if self.shape(value).tuple_shapes().len() != elements.len() {
                    return value;
                }
                let parts = self.map_elements(base, value, |b, index, gte| {
                    b.narrow(base, gte, &elements[index])
                });
                self.push(base, target.clone(), Op::Tuple, parts)
            }
            _ => value,
        }
    }

    /// A wide array value rounded to the narrow type `narrow_type`.
    fn round(&mut self, base: &str, value: InstrId, narrow_type: ElementType) -> InstrId {
        let Shape::Array(a) = self.shape(value) else {
            return value;
        };
        let narrow = self.push(
            base,
            Shape::Array(retyped(&a, narrow_type)),
            Op::Convert,
            vec![value],
        );
        self.push(base, Shape::Array(a), Op::Convert, vec![narrow])
    }

    /// A constant of the wide type of `like`'s shape, every element `value`.
    fn splat(&mut self, base: &str, like: InstrId, value: i64) -> InstrId {
        let Shape::Array(a) = self.shape(like) else {
            return like;
        };
        let scalar = Shape::Array(ArrayShape::new(a.element_type, vec![]));
        let mut literal = Literal::zeros(&scalar);
        let v = hlo_ir::native::Scalar::from_bytes(a.element_type, &[value as u8]);
        // Setting cannot fail on a rank-0 literal of the scalar's own type.
        let _ = literal.set(0, v);
        let c = self.push(base, scalar, Op::Constant { literal }, vec![]);
        self.push(
            base,
            Shape::Array(a),
            Op::Broadcast { dimensions: vec![] },
            vec![c],
        )
    }
}

fn widen_computation(
    comp: &HloComputation,
    is_entry: bool,
    names: &mut NameGen,
) -> Result<HloComputation> {
    let mut b = Builder {
        out: Vec::with_capacity(comp.instructions.len() * 2),
        names,
    };
    let mut map: Vec<InstrId> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let base = instr.name.clone();
        let mut new = instr.clone();
        new.operands = instr.operands.iter().map(|o| map[o.index()]).collect();
        new.control_predecessors = instr
            .control_predecessors
            .iter()
            .map(|o| map[o.index()])
            .collect();
        let operand_types: Vec<Option<ElementType>> = instr
            .operands
            .iter()
            .map(|o| comp.instr(*o).shape.element_type())
            .collect();
        let narrow_result = instr.shape.element_type().filter(|t| t.is_narrow());
        let touches_narrow =
            has_narrow(&instr.shape) || operand_types.iter().flatten().any(|t| t.is_narrow());
        if !touches_narrow {
            map.push(b.append(new));
            continue;
        }
        let id = match &instr.op {
            // Kept as they are and widened (`widen` leaves a value without
            // narrow types alone: a conversion from a narrow type reads the
            // wide value, which is the same number).
            Op::Parameter { .. } if is_entry => {
                let p = b.append(new);
                b.widen(&base, p)
            }
            Op::Constant { .. } | Op::Convert | Op::StochasticConvert => {
                let c = b.append(new);
                b.widen(&base, c)
            }
            // A layout `bitcast` may change the element type too (XLA's sort
            // comparators reinterpret f8 as s8): like `bitcast-convert`, it
            // reinterprets the narrow bytes.
            Op::BitcastConvert | Op::Bitcast => {
                let (Some(&from), Some(&x)) = (instr.operands.first(), new.operands.first()) else {
                    return Err(Error::invalid_argument(format!(
                        "%{} in {} has no operand",
                        instr.name, comp.name
                    )));
                };
                let from_shape = comp.instr(from).shape.clone();
                let x = b.narrow(&base, x, &from_shape);
                new.operands = vec![x];
                let r = b.append(new);
                b.widen(&base, r)
            }
            Op::CustomCall(_)
            | Op::Infeed { .. }
            | Op::Outfeed { .. }
            | Op::Send { .. }
            | Op::Recv { .. } => {
                // Their bytes leave or enter the program: widening would
                // change what the other side sees.
                return Err(Error::unimplemented(format!(
                    "{} on a narrow type (%{} in {}): its data crosses the program's \
                     boundary in the narrow layout, which is not supported",
                    instr.op.opcode().name(),
                    instr.name,
                    comp.name
                )));
            }
            op => {
                let op = op.clone();
                new.shape = widen_shape(&instr.shape);
                let signed_narrow = operand_types
                    .first()
                    .copied()
                    .flatten()
                    .filter(|t| t.is_narrow() && t.is_integer());
                let mut clz_adjust = None;
                if let Some(t) = signed_narrow {
                    let mask = (1i64 << t.bit_width()) - 1;
                    let needs_mask = match &op {
                        Op::Binary(BinaryOp::ShiftRightLogical) => t.is_signed_int(),
                        Op::Unary(UnaryOp::Clz) => {
                            clz_adjust = Some(8 - t.bit_width() as i64);
                            t.is_signed_int()
                        }
                        _ => false,
                    };
                    if needs_mask {
                        let x = new.operands[0];
                        let m = b.splat(&base, x, mask);
                        let shape = b.shape(x);
                        new.operands[0] =
                            b.push(&base, shape, Op::Binary(BinaryOp::And), vec![x, m]);
                    }
                }
                let mut r = b.append(new);
                if let Some(k) = clz_adjust {
                    let kc = b.splat(&base, r, k);
                    let shape = b.shape(r);
                    r = b.push(&base, shape, Op::Binary(BinaryOp::Subtract), vec![r, kc]);
                }
                match narrow_result {
                    Some(t) if !moves_values(&op) => b.round(&base, r, t),
                    _ => r,
                }
            }
        };
        map.push(id);
    }
    let mut root = map[comp.root.index()];
    if is_entry && has_narrow(&comp.root_instr().shape) {
        let base = comp.root_instr().name.clone();
        root = b.narrow(&base, root, &comp.root_instr().shape);
    }
    Ok(HloComputation {
        name: comp.name.clone(),
        instructions: b.out,
        root,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> HloModule {
        HloModule::parse(text).expect("parse")
    }

    #[test]
    fn widens_once_and_keeps_the_entry_signature() {
        let mut m = parse(
            "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  b = s4[4] parameter(1)\n  \
             c = f8e4m3fn[4] add(a, a)\n  d = s4[4] multiply(b, b)\n  ROOT t = (f8e4m3fn[4], s4[4]) tuple(c, d)\n}\n",
        );
        assert!(WidenNarrowTypes.run(&mut m).unwrap());
        hlo_ir::verifier::verify_module(&m).unwrap();
        let entry = m.entry();
        assert_eq!(entry.root_instr().shape.to_string(), "(f8e4m3fn[4], s4[4])");
        let add = entry
            .instructions
            .iter()
            .find(|i| matches!(i.op, Op::Binary(BinaryOp::Add)))
            .unwrap();
        assert_eq!(add.shape.element_type(), Some(ElementType::F16));
        let mul = entry
            .instructions
            .iter()
            .find(|i| matches!(i.op, Op::Binary(BinaryOp::Multiply)))
            .unwrap();
        assert_eq!(mul.shape.element_type(), Some(ElementType::S8));
        let before = m.clone();
        assert!(!WidenNarrowTypes.run(&mut m).unwrap());
        assert_eq!(m, before);
    }

    #[test]
    fn refuses_custom_calls_on_narrow_types() {
        let mut m = parse(
            "HloModule m\nENTRY e {\n  a = f8e4m3fn[4] parameter(0)\n  \
             ROOT c = f8e4m3fn[4] custom-call(a), custom_call_target=\"foo\"\n}\n",
        );
        let err = WidenNarrowTypes.run(&mut m).unwrap_err();
        assert_eq!(err.code(), hlo_ir::error::Code::Unimplemented, "{err}");
    }
}
