//! Layout normalization: after this pass every value is a logical array with no
//! layout, laid out row-major in memory.
//!
//! Only two ops give layouts meaning:
//! * `bitcast` reinterprets the operand's physical bytes under the result's
//!   layout. Its logical meaning is: permute the operand into its physical
//!   (major-to-minor) order, reinterpret the element type if it changes (equal
//!   widths only), reshape to the result's physical dimensions, and permute back
//!   to the result's logical order. It is rewritten into exactly those
//!   `transpose` / `bitcast-convert` / `reshape` instructions, skipping the
//!   identity steps.
//! * `copy` between layouts changes only the physical order; logically it is the
//!   identity, which buffer assignment treats as an alias.
//!
//! Every other op means the same thing whatever its layouts, so the pass then
//! drops all layouts (instructions, constants, the entry layout).

use super::{NameGen, Rebuilder};
use platform_api::hlo::{HloComputation, HloInstruction, InstrId, Op};
use platform_api::{ArrayShape, Error, HloModule, Result, Shape};

pub fn run(mut module: HloModule) -> Result<HloModule> {
    let mut names = NameGen::for_module(&module);
    for ci in 0..module.computations.len() {
        let comp = &module.computations[ci];
        if comp
            .instructions
            .iter()
            .any(|i| matches!(i.op, Op::Bitcast))
        {
            let rebuilt = expand_bitcasts(comp, &mut names)?;
            module.computations[ci] = rebuilt;
        }
        for instr in &mut module.computations[ci].instructions {
            instr.shape = instr.shape.without_layout();
            if let Op::Constant { literal } = &mut instr.op {
                strip_literal_layouts(literal);
            }
        }
    }
    if let Some(layout) = &mut module.config.entry_computation_layout {
        layout.parameters = layout.parameters.iter().map(Shape::without_layout).collect();
        layout.result = layout.result.without_layout();
    }
    Ok(module)
}

fn strip_literal_layouts(literal: &mut platform_api::Literal) {
    if literal.is_tuple() {
        let parts: Vec<platform_api::Literal> = literal
            .clone()
            .decompose_tuple()
            .into_iter()
            .map(|mut p| {
                strip_literal_layouts(&mut p);
                p
            })
            .collect();
        *literal = platform_api::Literal::tuple(parts);
    } else {
        literal.set_layout(None);
    }
}

/// Physical dimension order (major to minor) of an array: the reverse of its
/// layout's `minor_to_major`, or row-major.
fn major_to_minor(a: &ArrayShape) -> Result<Vec<usize>> {
    let layout = a.layout_or_default();
    if layout.minor_to_major.is_empty() && a.rank() > 0 {
        return Ok((0..a.rank()).collect());
    }
    let order: Vec<usize> = layout.minor_to_major.iter().rev().copied().collect();
    let mut seen = order.clone();
    seen.sort_unstable();
    if seen != (0..a.rank()).collect::<Vec<_>>() {
        return Err(Error::invalid_argument(format!(
            "layout {layout} is not a permutation of the dimensions of {a}"
        )));
    }
    Ok(order)
}

fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

fn expand_bitcasts(comp: &HloComputation, names: &mut NameGen) -> Result<HloComputation> {
    let mut out = Rebuilder::default();
    let mut map: Vec<InstrId> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let operands: Vec<InstrId> = instr.operands.iter().map(|o| map[o.index()]).collect();
        if !matches!(instr.op, Op::Bitcast) {
            let mut copy = instr.clone();
            copy.operands = operands;
            copy.control_predecessors = instr
                .control_predecessors
                .iter()
                .map(|o| map[o.index()])
                .collect();
            map.push(out.push(copy));
            continue;
        }
        let operand_id = *operands.first().ok_or_else(|| {
            Error::invalid_argument(format!("bitcast %{} has no operand", instr.name))
        })?;
        let operand_shape = comp.instr(instr.operands[0]).shape.clone();
        let id = lower_bitcast(instr, operand_id, &operand_shape, &mut out, names)?;
        map.push(id);
    }
    Ok(HloComputation {
        name: comp.name.clone(),
        root: map[comp.root.index()],
        instructions: out.instructions,
    })
}

fn lower_bitcast(
    instr: &HloInstruction,
    operand: InstrId,
    operand_shape: &Shape,
    out: &mut Rebuilder,
    names: &mut NameGen,
) -> Result<InstrId> {
    let (Shape::Array(src), Shape::Array(dst)) = (operand_shape, &instr.shape) else {
        return Err(Error::unimplemented(format!(
            "bitcast %{} of {} to {}: only arrays can be bitcast",
            instr.name, operand_shape, instr.shape
        )));
    };
    if src.byte_size() != dst.byte_size() {
        return Err(Error::invalid_argument(format!(
            "bitcast %{} changes the byte size: {} ({} bytes) to {} ({} bytes)",
            instr.name,
            src,
            src.byte_size(),
            dst,
            dst.byte_size()
        )));
    }
    if src.element_type.byte_size() != dst.element_type.byte_size() {
        return Err(Error::unimplemented(format!(
            "bitcast %{} between element types of different widths ({} to {})",
            instr.name, src.element_type, dst.element_type
        )));
    }
    let src_order = major_to_minor(src)?;
    let dst_order = major_to_minor(dst)?;
    let mut current = operand;
    let mut current_type = src.element_type;
    let mut current_dims: Vec<usize> = src.dims.clone();
    let mut emit = |op: Op, shape: Shape, input: InstrId, suffix: &str, last: bool| {
        let mut new = HloInstruction::new(
            if last {
                instr.name.clone()
            } else {
                names.fresh(&format!("{}.{suffix}", instr.name))
            },
            shape,
            op,
            vec![input],
        );
        new.metadata = instr.metadata.clone();
        out.push(new)
    };
    // Steps still to emit decide which one is last (and keeps the bitcast's name).
    let need_src_transpose = !is_identity(&src_order);
    let need_convert = src.element_type != dst.element_type;
    let dst_phys_dims: Vec<usize> = dst_order.iter().map(|&d| dst.dims[d]).collect();
    let src_phys_dims: Vec<usize> = src_order.iter().map(|&d| src.dims[d]).collect();
    let need_reshape = src_phys_dims != dst_phys_dims;
    let need_dst_transpose = !is_identity(&dst_order);
    let steps = [
        need_src_transpose,
        need_convert,
        need_reshape,
        need_dst_transpose,
    ];
    let last_step = steps.iter().rposition(|&s| s);
    if need_src_transpose {
        current_dims = src_phys_dims.clone();
        current = emit(
            Op::Transpose {
                dimensions: src_order.clone(),
            },
            Shape::array(current_type, current_dims.clone()),
            current,
            "physical",
            last_step == Some(0),
        );
    }
    if need_convert {
        current_type = dst.element_type;
        current = emit(
            Op::BitcastConvert,
            Shape::array(current_type, current_dims.clone()),
            current,
            "reinterpret",
            last_step == Some(1),
        );
    }
    if need_reshape {
        current_dims = dst_phys_dims.clone();
        current = emit(
            Op::Reshape,
            Shape::array(current_type, current_dims.clone()),
            current,
            "reshape",
            last_step == Some(2),
        );
    }
    if need_dst_transpose {
        // Physical dimension j of the result is logical dimension dst_order[j];
        // the transpose's dimension d reads the physical dimension holding d.
        let mut inverse = vec![0usize; dst_order.len()];
        for (j, &d) in dst_order.iter().enumerate() {
            inverse[d] = j;
        }
        current = emit(
            Op::Transpose {
                dimensions: inverse,
            },
            Shape::array(current_type, dst.dims.clone()),
            current,
            "logical",
            last_step == Some(3),
        );
    }
    if last_step.is_none() {
        // A bitcast that changes nothing logically: keep a node with its name so
        // users still find it; a reshape to the same dimensions is an alias.
        current = emit(
            Op::Reshape,
            Shape::array(dst.element_type, dst.dims.clone()),
            current,
            "same",
            true,
        );
    }
    Ok(current)
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::hlo::Opcode;

    fn opcodes(m: &HloModule) -> Vec<Opcode> {
        m.entry().instructions.iter().map(|i| i.opcode()).collect()
    }

    #[test]
    fn column_major_bitcast_is_a_transpose() {
        let text = r#"
HloModule m
ENTRY e {
  a = f32[3,4]{1,0} parameter(0)
  ROOT b = f32[4,3]{0,1} bitcast(a)
}
"#;
        let m = run(HloModule::parse(text).unwrap()).unwrap();
        assert_eq!(opcodes(&m), [Opcode::Parameter, Opcode::Transpose]);
        let root = m.entry().root_instr();
        assert_eq!(root.name, "b");
        assert_eq!(root.shape, Shape::array(platform_api::ElementType::F32, [4, 3]));
        match &root.op {
            Op::Transpose { dimensions } => assert_eq!(dimensions, &[1, 0]),
            _ => unreachable!(),
        }
    }

    #[test]
    fn row_major_bitcast_is_a_reshape_and_type_change_a_bitcast_convert() {
        let text = r#"
HloModule m
ENTRY e {
  a = f32[2,3]{1,0} parameter(0)
  ROOT b = s32[6]{0} bitcast(a)
}
"#;
        let m = run(HloModule::parse(text).unwrap()).unwrap();
        assert_eq!(
            opcodes(&m),
            [Opcode::Parameter, Opcode::BitcastConvert, Opcode::Reshape]
        );
        assert!(m
            .entry()
            .instructions
            .iter()
            .all(|i| i.shape.as_array().is_none_or(|a| a.layout.is_none())));
    }
}
