//! Argmax and argmin over positions, without the positions in memory.
//!
//! JAX lowers `jnp.argmax(x, axis)` to a variadic `reduce` of `x` and an
//! `iota` along the reduced dimension (usually a `broadcast` of a 1-D iota).
//! Unfused, that iota is an array as large as `x` written only to be read
//! back: 8 MB for an LM head's 64 x 32000 logits. When the index operand
//! counts along the single reduced dimension and the reducer is an
//! argmax/argmin (`kernels::argminmax::recognize`), the Host rewrites the
//! reduce as an internal `custom-call` to [`ARG_REDUCE_TARGET`] with operands
//! `(values, init value, init index)` and `backend_config` `"DIM,max"` or
//! `"DIM,min"` (the reduced dimension and what the reducer was recognised
//! as, so lowering need not probe it again); the reduce
//! kernel then takes each element's index from its position in the row, and
//! the iota is left to dead-code elimination.
//!
//! Any single reduced dimension qualifies: the reduce kernel folds rows when
//! it is the innermost one that is not of extent 1, and otherwise (an argmax
//! over a major dimension) updates a row of accumulators with each input
//! row, the index being that row's position along the dimension.

use crate::kernels::argminmax;
use platform_api::hlo::{
    BackendConfig, CompId, CustomCallApiVersion, CustomCallAttrs, HloComputation, HloInstruction,
    Op,
};
use platform_api::{HloModule, Result, Shape};

/// The internal custom-call target of an argmax/argmin over positions.
pub const ARG_REDUCE_TARGET: &str = "__host$arg_reduce";

/// The reduced dimension of an [`ARG_REDUCE_TARGET`] call and whether it is
/// an argmax (`true`) or an argmin.
pub fn arg_reduce_of(instr: &HloInstruction) -> Option<(usize, bool)> {
    let Op::CustomCall(attrs) = &instr.op else {
        return None;
    };
    if attrs.target != ARG_REDUCE_TARGET {
        return None;
    }
    let Some(BackendConfig::String(config)) = &instr.backend_config else {
        return None;
    };
    let (dimension, kind) = config.split_once(',')?;
    let greater = match kind {
        "max" => true,
        "min" => false,
        _ => return None,
    };
    Some((dimension.parse().ok()?, greater))
}

/// Rewrites every qualifying reduce outside fused computations; returns
/// whether any was.
pub fn run(module: &mut HloModule) -> Result<bool> {
    let fused = crate::compiler::fused_computations(module);
    let mut changed = false;
    for c in 0..module.computations.len() {
        if fused.contains(&CompId(c as u32)) {
            continue;
        }
        for i in 0..module.computations[c].instructions.len() {
            let Some((dimension, greater)) = qualifies(module, &module.computations[c], i) else {
                continue;
            };
            let instr = &mut module.computations[c].instructions[i];
            let attrs = CustomCallAttrs::new(ARG_REDUCE_TARGET, CustomCallApiVersion::Original);
            instr.operands = vec![instr.operands[0], instr.operands[2], instr.operands[3]];
            instr.op = Op::CustomCall(Box::new(attrs));
            let kind = if greater { "max" } else { "min" };
            instr.backend_config = Some(BackendConfig::String(format!("{dimension},{kind}")));
            changed = true;
        }
    }
    Ok(changed)
}

/// The reduced dimension of instruction `i` of `comp`, and whether it is an
/// argmax, if it is an argmax/argmin over positions along one dimension.
fn qualifies(module: &HloModule, comp: &HloComputation, i: usize) -> Option<(usize, bool)> {
    let instr = &comp.instructions[i];
    let Op::Reduce {
        dimensions,
        to_apply,
    } = &instr.op
    else {
        return None;
    };
    let (&[d], 4) = (dimensions.as_slice(), instr.operands.len()) else {
        return None;
    };
    let values = comp.instructions.get(instr.operands[0].index())?;
    let index = comp.instructions.get(instr.operands[1].index())?;
    let (Shape::Array(v), Shape::Array(ix)) = (&values.shape, &index.shape) else {
        return None;
    };
    if d >= v.dims.len() {
        return None;
    }
    if !counts_along(comp, index, d) {
        return None;
    }
    let greater = argminmax::recognize(module, *to_apply, v.element_type, ix.element_type)?;
    Some((d, greater))
}

/// Whether `index` holds, everywhere, its position along dimension `d`: an
/// iota along `d`, or a 1-D iota broadcast onto `d`.
fn counts_along(comp: &HloComputation, index: &HloInstruction, d: usize) -> bool {
    match &index.op {
        Op::Iota { dimension } => *dimension == d,
        Op::Broadcast { dimensions } if dimensions.as_slice() == [d] => index
            .operands
            .first()
            .and_then(|o| comp.instructions.get(o.index()))
            .is_some_and(|src| matches!(src.op, Op::Iota { dimension: 0 })),
        _ => false,
    }
}
