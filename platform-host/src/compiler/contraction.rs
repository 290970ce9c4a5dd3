//! Floating-point contraction, as XLA CPU's code generator does it.
//!
//! XLA CPU lets LLVM fuse a `multiply` into the `add`/`subtract` that is its
//! only use (one rounding instead of two). Programs that amplify rounding (the
//! conformance case `fori_loop`) only agree with XLA, and with the interpreter's
//! default `fp_contract=xla`, when the Host does the same. The rule deciding
//! which pairs contract is shared: [`contraction_candidate`].
//!
//! The rewrite replaces each contracting add/subtract by an internal
//! `custom-call` to [`FMA_TARGET`] whose operands are the multiply's two
//! operands and the add's other operand, and whose `backend_config` says how
//! they combine; the multiply is left without uses and dead-code elimination
//! removes it. The `backend_config` string is only the instruction's form
//! between passes: consumers read it once, through [`fused_multiply_add`],
//! and carry the typed [`Contraction`] from there (the op table's
//! `elementwise_ops::fused_multiply_add` runs it, one fused multiply-add per
//! element). `fp_contract=off` (a compile debug option) turns the rewrite off.

use platform_api::hlo::{
    BackendConfig, CustomCallApiVersion, CustomCallAttrs, HloInstruction, InstrId, Op,
};
use platform_api::semantics::contraction::{contraction_candidate, Contraction};
use platform_api::{CompileOptions, Error, HloModule, Result};

/// The internal custom-call target of a contracted multiply-add.
pub const FMA_TARGET: &str = "__host$fused_multiply_add";

/// Whether contraction is on for these options (default: yes, like XLA CPU).
pub fn enabled(options: &CompileOptions) -> Result<bool> {
    platform_api::semantics::contraction::fp_contract_option(options.debug_option("fp_contract"))
}

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

/// Rewrites every contracting add/subtract of every computation.
#[allow(clippy::needless_range_loop)] // indices cross several per-instruction tables
pub fn run(module: &mut HloModule) -> Result<bool> {
    let mut changed = false;
    for comp in &mut module.computations {
        let n = comp.instructions.len();
        // Live uses only: dead instructions do not keep a multiply shared.
        let mut live = vec![false; n];
        if comp.root.index() < n {
            live[comp.root.index()] = true;
        }
        for i in (0..n).rev() {
            let instr = &comp.instructions[i];
            if instr.op.has_side_effect() {
                live[i] = true;
            }
            if live[i] {
                for o in &instr.operands {
                    if let Some(l) = live.get_mut(o.index()) {
                        *l = true;
                    }
                }
            }
        }
        let mut uses = vec![0u32; n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            if live[i] {
                for o in &instr.operands {
                    if let Some(u) = uses.get_mut(o.index()) {
                        *u += 1;
                    }
                }
            }
        }
        let mut taken = vec![false; n];
        for i in 0..n {
            if !live[i] {
                continue;
            }
            let Some((k, how)) = contraction_candidate(comp, InstrId(i as u32), &uses) else {
                continue;
            };
            let m = comp.instructions[i].operands[k];
            if std::mem::replace(&mut taken[m.index()], true) {
                continue;
            }
            let (a, b) = (
                comp.instructions[m.index()].operands[0],
                comp.instructions[m.index()].operands[1],
            );
            let c = comp.instructions[i].operands[1 - k];
            let instr = &mut comp.instructions[i];
            instr.op = Op::CustomCall(Box::new(CustomCallAttrs {
                target: FMA_TARGET.to_string(),
                api_version: CustomCallApiVersion::Original,
                called_computations: Vec::new(),
                has_side_effect: false,
                operand_layout_constraints: None,
                output_to_operand_aliasing: Vec::new(),
                schedule: None,
            }));
            instr.operands = vec![a, b, c];
            instr.backend_config = Some(BackendConfig::String(config_of(how).to_string()));
            changed = true;
        }
    }
    Ok(changed)
}
