//! [`ExcessPrecision`]: where XLA CPU keeps a bf16 result in f32.
//!
//! XLA CPU has no bf16 arithmetic: its `FloatNormalization` pass (with the CPU
//! float support) computes every bf16 op in f32, between a conversion of the
//! operands up and of the result back down to bf16, reducers included. The
//! `f32 -> bf16 -> f32` pairs this leaves between two consecutive bf16 ops stay
//! (the pass that drops them, `SimplifyFPConversions` under
//! `xla_allow_excess_precision`, is in XLA's GPU pipeline and, on CPU, only
//! with the oneDNN rewriter, which is off): every bf16 op rounds, as ours do.
//! One pair goes away, though: when the program itself converts the bf16
//! result of an arithmetic op to f32 (`y.astype(jnp.float32)`, softmax's sum
//! of exponentials, a bf16 matmul widened for a loss), that conversion reads
//! the op's f32 value before its bf16 rounding. This was established against
//! JAX 0.10.2's XLA CPU: `(x * y).astype(f32)`, `exp(x).astype(f32)` and a
//! bf16 `dot` converted to f32 give values that are not bf16 numbers, while a
//! `maximum`, `select`, `reshape` or `transpose` between the op and the
//! conversion keeps the rounding; f16 (which XLA CPU computes as f16 apart
//! from `dot` and `convolution`) is rounded in every case.
//!
//! The rewrite: `convert(v)` from bf16 to f32, where `v` is a unary or binary
//! arithmetic op, a `dot` or a `convolution` with a bf16 result, becomes the
//! same op computed in f32 on its operands converted to f32 (`v` stays for its
//! other users). Like [`crate::DivideByReciprocal`] it changes numbers on
//! purpose, is not part of [`crate::standard_pipeline`], and runs when the
//! compile option `excess_precision` is `on` (the default; `off` leaves the
//! module alone), read with [`excess_precision_option`].

use super::{retyped, rewrite_instructions, HloPass};
use hlo_ir::error::{Error, Result};
use hlo_ir::rewrite::ComputationEditor;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloModule, InstrId, Op};

/// Reads the `excess_precision` compile option: `on` (or unset) keeps f32
/// where XLA CPU does, `off` rounds every bf16 result.
pub fn excess_precision_option(value: Option<&str>) -> Result<bool> {
    match value {
        None | Some("on") => Ok(true),
        Some("off") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "excess_precision must be on (the default) or off, not \"{other}\""
        ))),
    }
}

/// The pass (see the module documentation).
#[derive(Debug, Default)]
pub struct ExcessPrecision;

impl ExcessPrecision {
    pub fn new() -> Self {
        ExcessPrecision
    }
}

fn element_type(shape: &Shape) -> Option<ElementType> {
    let a = shape.as_array()?;
    a.dynamic.is_empty().then_some(a.element_type)
}

/// `o` (bf16) in f32. A broadcast is widened before it is broadcast, as XLA
/// CPU's normalization widens it, so a division by it is still a division by
/// a broadcast for [`crate::DivideByReciprocal`].
fn widen(ed: &mut ComputationEditor<'_>, origin: InstrId, o: InstrId, shape: &Shape) -> InstrId {
    let f32_shape = retyped(shape, ElementType::F32);
    if let Op::Broadcast { dimensions } = &ed.instr(o).op {
        let dimensions = dimensions.clone();
        if let [x] = ed.instr(o).operands[..] {
            let x_shape = retyped(&ed.instr(x).shape, ElementType::F32);
            let wx = ed.add_derived(origin, "convert", x_shape, Op::Convert, vec![x]);
            return ed.add_derived(
                origin,
                "broadcast",
                f32_shape,
                Op::Broadcast { dimensions },
                vec![wx],
            );
        }
    }
    ed.add_derived(origin, "convert", f32_shape, Op::Convert, vec![o])
}

/// `convert(v)` (bf16 to f32) of an op XLA CPU computes in f32: that op in
/// f32.
fn rewrite(ed: &mut ComputationEditor<'_>, id: InstrId) -> Option<InstrId> {
    let c = ed.instr(id);
    if !matches!(c.op, Op::Convert) || c.operands.len() != 1 {
        return None;
    }
    if element_type(&c.shape)? != ElementType::F32 {
        return None;
    }
    let v = c.operands[0];
    let vi = ed.instr(v);
    if element_type(&vi.shape)? != ElementType::BF16 {
        return None;
    }
    if !matches!(
        vi.op,
        Op::Unary(_) | Op::Binary(_) | Op::Dot { .. } | Op::Convolution { .. }
    ) || !vi.control_predecessors.is_empty()
    {
        return None;
    }
    let op = vi.op.clone();
    let operands = vi.operands.clone();
    let wide_shape = retyped(&vi.shape, ElementType::F32);
    let mut wide_operands = Vec::with_capacity(operands.len());
    for o in operands {
        let shape = ed.instr(o).shape.clone();
        let w = match element_type(&shape)? {
            ElementType::BF16 => widen(ed, v, o, &shape),
            _ => o,
        };
        wide_operands.push(w);
    }
    let name = ed.instr(v).name.clone();
    Some(ed.add_derived(v, &name, wide_shape, op, wide_operands))
}

impl HloPass for ExcessPrecision {
    fn name(&self) -> &str {
        "excess-precision"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        // Only a conversion to f32 can be rewritten.
        let candidate = |i: &hlo_ir::HloInstruction| {
            matches!(i.op, Op::Convert) && i.shape.element_type() == Some(ElementType::F32)
        };
        rewrite_instructions(module, candidate, rewrite)
    }
}
