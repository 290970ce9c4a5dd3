//! Layout normalization: afterwards every value is a logical, row-major array and
//! no shape carries a layout.
//!
//! A layout says how an array's elements sit in memory. Almost no op cares: an
//! `add` of two `f32[2,3]` gives the same logical array whatever their layouts,
//! and the literals, the interpreter and the transfer manager all work on logical
//! values. Two ops do care:
//!
//! * `bitcast` reinterprets the operand's *bytes*, in the operand's layout, as
//!   the result in the result's layout (XLA's optimized HLO also uses it to change
//!   the element type between types of one width: `s32[] bitcast(f32[])`). Its
//!   logical meaning is a sequence of logical ops, each exact:
//!   1. `transpose` the operand into its physical order (dimensions from major to
//!      minor), so its row-major order is its byte order;
//!   2. `bitcast-convert` if the element type changes (through a flat vector and
//!      an added or removed minor dimension when the widths differ);
//!   3. `reshape` to the result's physical dimensions (row-major order, so the
//!      bytes are unchanged);
//!   4. `transpose` back to the result's logical order.
//!
//!   Identity steps are skipped; a `bitcast` between row-major shapes of one
//!   type is a `reshape`.
//! * `copy` into another layout moves bytes but keeps the logical value; once
//!   layouts are gone it is the identity, so its users read its operand instead.
//!
//! Then every instruction shape, constant literal and the module's
//! `entry_computation_layout` lose their layouts (no layout means row-major). The
//! entry's parameter and result shapes keep their element types and dimensions.
//! Tiled layouts are rejected for `bitcast` (no platform here uses tiles);
//! `custom-call`'s `operand_layout_constraints` are kept as written for the
//! backend to honour.

use super::HloPass;
use hlo_ir::error::{Error, Result};
use hlo_ir::literal::Literal;
use hlo_ir::rewrite::{effectful_computations, ComputationEditor, NameGen};
use hlo_ir::shape::{ArrayShape, ElementType, Layout, Shape};
use hlo_ir::{HloModule, InstrId, Op};

/// Rewrites `bitcast`s and layout-changing `copy`s into logical ops and removes
/// every layout.
#[derive(Clone, Debug, Default)]
pub struct LayoutNormalization;

impl LayoutNormalization {
    pub fn new() -> Self {
        LayoutNormalization
    }
}

impl HloPass for LayoutNormalization {
    fn name(&self) -> &str {
        "layout-normalization"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        hlo_ir::rewrite::check_references(module)?;
        let mut changed = false;
        let effectful = effectful_computations(module);
        let mut names = NameGen::for_instructions(module);
        for comp in &mut module.computations {
            let needs_edit = comp
                .instructions
                .iter()
                .any(|i| matches!(i.op, Op::Bitcast | Op::Copy));
            if needs_edit {
                let mut ed = ComputationEditor::new(comp, &mut names);
                // Every bitcast is expanded while all shapes still have their
                // layouts (a bitcast of a bitcast reads the inner one's layout),
                // and only then are uses redirected.
                let original = ed.len();
                let mut replacements = Vec::new();
                for i in 0..original {
                    let id = InstrId(i as u32);
                    if matches!(ed.instr(id).op, Op::Bitcast) {
                        replacements.push((id, expand_bitcast(&mut ed, id)?));
                    }
                }
                for i in 0..original {
                    let id = InstrId(i as u32);
                    if matches!(ed.instr(id).op, Op::Copy) {
                        replacements.push((id, ed.operand(id, 0)?));
                    }
                }
                // A replacement may itself be replaced (a copy of a copy, an
                // identity bitcast of a bitcast): follow the chain.
                let mut replaced_by: Vec<Option<InstrId>> = vec![None; ed.len()];
                for (old, mut new) in replacements {
                    while let Some(next) = replaced_by.get(new.index()).copied().flatten() {
                        new = next;
                    }
                    ed.replace_all_uses(old, new)?;
                    replaced_by[old.index()] = Some(new);
                }
                changed |= ed.finish(&effectful)?;
            }
            for instr in &mut comp.instructions {
                changed |= strip_layouts(&mut instr.shape);
                if let Op::Constant { literal } = &mut instr.op {
                    if has_layout(literal.shape()) {
                        strip_literal_layouts(literal);
                        changed = true;
                    }
                }
            }
        }
        if let Some(layout) = &mut module.config.entry_computation_layout {
            let stripped_any =
                layout.parameters.iter().any(has_layout) || has_layout(&layout.result);
            if stripped_any {
                layout.parameters = layout
                    .parameters
                    .iter()
                    .map(Shape::without_layout)
                    .collect();
                layout.result = layout.result.without_layout();
                changed = true;
            }
        }
        Ok(changed)
    }
}

/// Removes every layout from the shape in place; whether there was one.
fn strip_layouts(shape: &mut Shape) -> bool {
    match shape {
        Shape::Array(a) => a.layout.take().is_some(),
        Shape::Tuple(t) => t.iter_mut().fold(false, |any, s| strip_layouts(s) | any),
        Shape::Token => false,
    }
}

/// Whether any array in the shape has a layout set.
fn has_layout(shape: &Shape) -> bool {
    match shape {
        Shape::Array(a) => a.layout.is_some(),
        Shape::Tuple(t) => t.iter().any(has_layout),
        Shape::Token => false,
    }
}

fn strip_literal_layouts(literal: &mut Literal) {
    if literal.is_tuple() {
        let parts = std::mem::replace(literal, Literal::token())
            .decompose_tuple()
            .into_iter()
            .map(|mut part| {
                strip_literal_layouts(&mut part);
                part
            })
            .collect();
        *literal = Literal::tuple(parts);
    } else {
        literal.set_layout(None);
    }
}

/// The layout an array really has: its own, or row-major when it has none (or an
/// empty dimension order).
fn effective_layout(a: &ArrayShape) -> Layout {
    let mut layout = a.layout.clone().unwrap_or_default();
    if layout.minor_to_major.is_empty() {
        layout.minor_to_major = (0..a.rank()).rev().collect();
    }
    layout
}

/// Whether two shapes of one structure put their elements in memory the same way
/// (no layout and a row-major one count as the same).
pub(crate) fn same_layouts(a: &Shape, b: &Shape) -> bool {
    match (a, b) {
        (Shape::Array(x), Shape::Array(y)) => effective_layout(x) == effective_layout(y),
        (Shape::Tuple(x), Shape::Tuple(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| same_layouts(p, q))
        }
        (Shape::Token, Shape::Token) => true,
        _ => false,
    }
}

/// The dimensions from major to minor (the reverse of `minor_to_major`), checked
/// to be a permutation, for a layout without tiles or a custom element size.
fn physical_order(a: &ArrayShape, instr_name: &str) -> Result<Vec<usize>> {
    let layout = effective_layout(a);
    if !layout.tiles.is_empty() || layout.element_size_in_bits.is_some() {
        return Err(Error::unimplemented(format!(
            "bitcast %{instr_name}: layout {layout} of {a} has tiles or a custom element size, which no platform here supports"
        )));
    }
    let order: Vec<usize> = layout.minor_to_major.iter().rev().copied().collect();
    let mut sorted = order.clone();
    sorted.sort_unstable();
    if !sorted.iter().copied().eq(0..a.rank()) {
        return Err(Error::invalid_argument(format!(
            "bitcast %{instr_name}: layout {layout} is not a permutation of the dimensions of {a}"
        )));
    }
    Ok(order)
}

fn is_identity(perm: &[usize]) -> bool {
    perm.iter().enumerate().all(|(i, &p)| i == p)
}

/// Adds the logical ops equivalent to bitcast `id` (see the module docs) and
/// returns the one that computes its value.
fn expand_bitcast(ed: &mut ComputationEditor, id: InstrId) -> Result<InstrId> {
    let name = ed.instr(id).name.clone();
    let operand = ed.operand(id, 0)?;
    let from = ed.instr(operand).shape.as_array().cloned().ok_or_else(|| {
        Error::invalid_argument(format!("bitcast %{name}: the operand is not an array"))
    })?;
    let to = ed.instr(id).shape.as_array().cloned().ok_or_else(|| {
        Error::invalid_argument(format!("bitcast %{name}: the result is not an array"))
    })?;
    let from_order = physical_order(&from, &name)?;
    let to_order = physical_order(&to, &name)?;
    let mut cur = operand;
    let mut dims = from.dims.clone();

    // 1. The operand in its byte order.
    if !is_identity(&from_order) {
        dims = from_order.iter().map(|&d| from.dims[d]).collect();
        cur = ed.add_derived(
            id,
            &format!("{name}.physical"),
            Shape::array(from.element_type, dims.clone()),
            Op::Transpose {
                dimensions: from_order.clone(),
            },
            vec![cur],
        );
    }

    // 2. The element type.
    let (ft, tt) = (from.element_type, to.element_type);
    if ft != tt {
        if ft == ElementType::Pred || tt == ElementType::Pred || ft.is_complex() != tt.is_complex()
        {
            return Err(Error::unimplemented(format!(
                "bitcast %{name} from {from} to {to}: reinterpreting between pred, or between complex and real types, is not supported"
            )));
        }
        let (fw, tw) = (ft.byte_size(), tt.byte_size());
        if fw == tw {
            cur = ed.add_derived(
                id,
                &format!("{name}.convert"),
                Shape::array(tt, dims.clone()),
                Op::BitcastConvert,
                vec![cur],
            );
        } else {
            let count = super::checked_count(&dims).ok_or_else(|| {
                Error::invalid_argument(format!("bitcast %{name}: {from} has too many elements"))
            })?;
            let flat = |ed: &mut ComputationEditor, cur: InstrId, ty, d: Vec<usize>| {
                ed.add_derived(
                    id,
                    &format!("{name}.flat"),
                    Shape::array(ty, d),
                    Op::Reshape,
                    vec![cur],
                )
            };
            if fw > tw {
                // Each element becomes `fw / tw` narrower ones along a new minor
                // dimension, in little-endian order: the byte order.
                cur = flat(ed, cur, ft, vec![count]);
                dims = vec![count, fw / tw];
                cur = ed.add_derived(
                    id,
                    &format!("{name}.convert"),
                    Shape::array(tt, dims.clone()),
                    Op::BitcastConvert,
                    vec![cur],
                );
            } else {
                let ratio = tw / fw;
                if count.checked_rem(ratio) != Some(0) {
                    return Err(Error::invalid_argument(format!(
                        "bitcast %{name}: {count} elements of {ft} do not make whole {tt} elements"
                    )));
                }
                cur = flat(ed, cur, ft, vec![count / ratio, ratio]);
                dims = vec![count / ratio];
                cur = ed.add_derived(
                    id,
                    &format!("{name}.convert"),
                    Shape::array(tt, dims.clone()),
                    Op::BitcastConvert,
                    vec![cur],
                );
            }
        }
    }

    // 3. The result's dimensions in its byte order.
    let to_physical_dims: Vec<usize> = to_order.iter().map(|&d| to.dims[d]).collect();
    if dims != to_physical_dims {
        dims = to_physical_dims;
        cur = ed.add_derived(
            id,
            &format!("{name}.reshape"),
            Shape::array(tt, dims.clone()),
            Op::Reshape,
            vec![cur],
        );
    }

    // 4. Back to the result's logical order.
    if !is_identity(&to_order) {
        let mut inverse = vec![0; to_order.len()];
        for (i, &d) in to_order.iter().enumerate() {
            inverse[d] = i;
        }
        cur = ed.add_derived(
            id,
            &format!("{name}.logical"),
            Shape::array(tt, to.dims.clone()),
            Op::Transpose {
                dimensions: inverse,
            },
            vec![cur],
        );
    }
    Ok(cur)
}
