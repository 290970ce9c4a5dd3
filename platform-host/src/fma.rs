//! The contracted multiply-add's form in HLO, between the pass that writes it
//! (`compiler::contraction`) and everything that runs it (the elementwise
//! thunk, scalar programs, block programs, buffer assignment's in-place rule).
//!
//! HLO has no fused multiply-add, so the Host writes one as an internal
//! `custom-call` to [`FMA_TARGET`] with operands `(a, b, c)` and a
//! `backend_config` naming the [`Contraction`]. That string is only the
//! instruction's form between passes: consumers decode it once, through
//! [`fused_multiply_add`], and carry the typed [`Contraction`] from there (the
//! op table's `elementwise_ops::fused_multiply_add` runs it, one fused
//! multiply-add per element).

use platform_api::hlo::{
    BackendConfig, CustomCallApiVersion, CustomCallAttrs, HloInstruction, InstrId, Op,
};
use platform_api::semantics::contraction::Contraction;
use platform_api::{Error, Result};

/// The internal custom-call target of a contracted multiply-add.
pub const FMA_TARGET: &str = "__host$fused_multiply_add";

/// The `backend_config` spelling of a contraction.
fn config_of(how: Contraction) -> &'static str {
    match how {
        Contraction::Add => "add",
        Contraction::SubtractFromProduct => "subtract_from_product",
        Contraction::SubtractProduct => "subtract_product",
    }
}

/// The contraction a `backend_config` names.
fn contraction_of(config: &str) -> Option<Contraction> {
    match config {
        "add" => Some(Contraction::Add),
        "subtract_from_product" => Some(Contraction::SubtractFromProduct),
        "subtract_product" => Some(Contraction::SubtractProduct),
        _ => None,
    }
}

/// Whether `instr` is a contracted multiply-add (the custom call to
/// [`FMA_TARGET`]), without decoding it.
pub fn is_fused_multiply_add(instr: &HloInstruction) -> bool {
    matches!(&instr.op, Op::CustomCall(attrs) if attrs.target == FMA_TARGET)
}

/// The contraction of a contracted multiply-add: `Ok(None)` for any other
/// instruction, an error for one whose `backend_config` names none.
pub fn fused_multiply_add(instr: &HloInstruction) -> Result<Option<Contraction>> {
    if !is_fused_multiply_add(instr) {
        return Ok(None);
    }
    let config = instr.backend_config.as_ref().map(BackendConfig::as_str);
    config.and_then(contraction_of).map(Some).ok_or_else(|| {
        Error::internal(format!(
            "%{}: a fused multiply-add whose backend_config names no contraction",
            instr.name
        ))
    })
}

/// Turns `instr` (an add or subtract) into the contracted multiply-add
/// `how` of `operands` (`[a, b, c]`).
pub fn rewrite_as_fused_multiply_add(
    instr: &mut HloInstruction,
    how: Contraction,
    operands: [InstrId; 3],
) {
    instr.op = Op::CustomCall(Box::new(CustomCallAttrs::new(
        FMA_TARGET,
        CustomCallApiVersion::Original,
    )));
    instr.operands = operands.to_vec();
    instr.backend_config = Some(BackendConfig::String(config_of(how).to_string()));
}
