//! `custom-call`.
//!
//! Targets XLA's own CPU pipeline emits are built in (`TopK`, which runs the
//! top-k kernel), as is the Host's internal fused multiply-add
//! (`compiler::contraction`). Every other target goes through the workspace's custom-call
//! registry (`platform_api::custom_call`): checked when the program is
//! compiled, then called at run time on the operands' values with the calling
//! convention the instruction's `api_version` names. The registry decides
//! whether a target exists; until it has an entry point that takes raw buffers,
//! operands are copied into literals for the call and the result copied back.

use crate::compiler::lower::LowerCtx;
use crate::thunk::{thunk, BufferSlice, Thunk};
use crate::PLATFORM_NAME;
use platform_api::hlo::{InstrId, Op};
use platform_api::{Error, Literal, Result, Shape};

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::CustomCall(attrs) = &instr.op else {
        return Err(Error::internal("not a custom call"));
    };
    if attrs.target == "TopK" {
        return super::sort::lower(ctx, id);
    }
    if attrs.target == crate::compiler::contraction::FMA_TARGET {
        return super::elementwise::lower_fused_multiply_add(ctx, id);
    }
    platform_api::custom_call::check_instruction(PLATFORM_NAME, instr)?;
    let mut operands: Vec<(Shape, Vec<BufferSlice>)> = Vec::new();
    for k in 0..instr.operands.len() {
        operands.push((ctx.operand(instr, k)?.shape.without_layout(), ctx.operand_leaves(instr, k)?.to_vec()));
    }
    let results = ctx.result_leaves(id).to_vec();
    let call = instr.clone();
    Ok(thunk(instr.name.clone(), "custom-call", move |ctx| {
        let mut literals = Vec::with_capacity(operands.len());
        for (shape, leaves) in &operands {
            literals.push(read_literal(ctx, shape, leaves, &mut 0)?);
        }
        let refs: Vec<&Literal> = literals.iter().collect();
        let out = platform_api::custom_call::call_host_target(PLATFORM_NAME, &call, &refs)?;
        let leaves = out.flatten_leaves();
        if leaves.len() != results.len() {
            return Err(Error::internal(format!(
                "custom call %{} returned {} arrays; its shape has {}",
                call.name,
                leaves.len(),
                results.len()
            )));
        }
        for (leaf, slice) in leaves.iter().zip(&results) {
            let bytes = leaf.bytes()?;
            if bytes.len() != slice.size {
                return Err(Error::internal(format!("custom call %{} returned a value of the wrong size", call.name)));
            }
            // SAFETY: the result slice holds `slice.size` bytes.
            unsafe { std::ptr::copy_nonoverlapping(bytes.as_ptr(), ctx.ptr(*slice), bytes.len()) };
        }
        Ok(())
    }))
}

/// Reads a (possibly tuple) value from its leaf slices into a literal.
fn read_literal(
    ctx: &crate::thunk::ExecuteContext<'_>,
    shape: &Shape,
    leaves: &[BufferSlice],
    next: &mut usize,
) -> Result<Literal> {
    match shape {
        Shape::Array(_) => {
            let slice = leaves.get(*next).ok_or_else(|| Error::internal("missing operand leaf"))?;
            *next += 1;
            // SAFETY: the slice holds the array's bytes.
            let bytes = unsafe { std::slice::from_raw_parts(ctx.ptr(*slice), slice.size) };
            Literal::from_bytes(shape.clone(), bytes)
        }
        Shape::Tuple(elements) => {
            let mut parts = Vec::with_capacity(elements.len());
            for e in elements {
                parts.push(read_literal(ctx, e, leaves, next)?);
            }
            Ok(Literal::tuple(parts))
        }
        Shape::Token => Ok(Literal::token()),
    }
}
