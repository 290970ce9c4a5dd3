//! `custom-call`.
//!
//! Targets XLA's own CPU pipeline emits are built in (`TopK` runs the top-k
//! kernel), as is the Host's internal fused multiply-add
//! (`compiler::contraction`). Every other target goes through the workspace's
//! custom-call registry (`platform_api::custom_call`): it is resolved and
//! checked against the instruction's `api_version` when the program is
//! compiled ([`HostCustomCall::prepare`]), and called at run time directly on
//! the device buffers with XLA's CPU ABI ([`HostCustomCall::call_raw`]): array
//! operands by address, tuple operands and a tuple result as tables of element
//! pointers (nested tuples as nested tables), built per call. An
//! `output_to_operand_aliasing` entry is honoured by copying the operand into
//! the result first and passing the result's buffer as that operand.

use crate::lowering::LowerCtx;
use crate::thunk::{thunk, BufferSlice, Thunk};
use crate::PLATFORM_NAME;
use platform_api::custom_call::HostCustomCall;
use platform_api::hlo::{InstrId, Op};
use platform_api::{Error, Result, Shape};
use std::ffi::c_void;

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::CustomCall(attrs) = &instr.op else {
        return Err(Error::internal("not a custom call"));
    };
    if attrs.target == "TopK" {
        return super::sort::lower(ctx, id);
    }
    if attrs.target == crate::fma::FMA_TARGET {
        return super::elementwise::lower(ctx, id);
    }
    if attrs.target == crate::arg_reduce::ARG_REDUCE_TARGET {
        return super::reduce::lower_arg_reduce(ctx, id);
    }
    let call = HostCustomCall::prepare(PLATFORM_NAME, instr)?;
    let mut operands: Vec<(Shape, Vec<BufferSlice>)> = Vec::new();
    for k in 0..instr.operands.len() {
        operands.push((
            ctx.operand(instr, k)?
                .shape
                .without_layout()
                .with_default_layouts(),
            ctx.operand_leaves(instr, k)?.to_vec(),
        ));
    }
    let result_shape = instr.shape.without_layout().with_default_layouts();
    let results = ctx.result_leaves(id).to_vec();
    // (result leaf, operand, operand leaf) for each aliasing entry.
    let mut aliases = Vec::new();
    for a in &attrs.output_to_operand_aliasing {
        let leaf_index = |shape: &Shape, path: &[usize]| -> Option<usize> {
            shape
                .leaves()
                .iter()
                .position(|(p, _)| p.as_slice() == path)
        };
        let (Some(r), Some((shape, _))) = (
            leaf_index(&result_shape, &a.output_index),
            operands.get(a.operand),
        ) else {
            return Err(Error::invalid_argument(format!(
                "custom-call %{}: output_to_operand_aliasing entry names no array",
                instr.name
            )));
        };
        let o = leaf_index(shape, &a.operand_index).ok_or_else(|| {
            Error::invalid_argument(format!(
                "custom-call %{}: aliased operand index names no array",
                instr.name
            ))
        })?;
        aliases.push((r, a.operand, o));
    }
    let operand_shapes: Vec<Shape> = operands.iter().map(|(s, _)| s.clone()).collect();
    Ok(thunk(instr.name.clone(), "custom-call", move |ctx| {
        let result_ptrs: Vec<*mut u8> = results.iter().map(|s| ctx.ptr(*s)).collect();
        let mut operand_ptrs: Vec<Vec<*mut u8>> = operands
            .iter()
            .map(|(_, leaves)| leaves.iter().map(|s| ctx.ptr(*s)).collect())
            .collect();
        for &(r, k, o) in &aliases {
            let (src, dst) = (operand_ptrs[k][o], result_ptrs[r]);
            if src != dst {
                // SAFETY: same-size leaves (the verifier checked the aliasing).
                unsafe { std::ptr::copy_nonoverlapping(src, dst, results[r].size) };
            }
            operand_ptrs[k][o] = dst;
        }
        // Tables for tuples; kept alive until the call returns.
        let mut tables: Vec<Vec<u64>> = Vec::new();
        let mut ins: Vec<*const c_void> = Vec::with_capacity(operands.len());
        for ((shape, _), leaves) in operands.iter().zip(&operand_ptrs) {
            ins.push(layout(shape, leaves, &mut 0, &mut tables) as *const c_void);
        }
        let out = layout(&result_shape, &result_ptrs, &mut 0, &mut tables);
        // SAFETY: every pointer is a live buffer of this execution laid out as
        // the shapes say (tables built above); results do not overlap operands
        // except through the aliasing handled above.
        unsafe { call.call_raw(out.cast(), ins.as_ptr(), &operand_shapes) }
    }))
}

/// The address to pass for a value of `shape` whose array leaves are `leaves`
/// (starting at `*next`): the leaf itself, or a table of its elements'
/// addresses.
fn layout(
    shape: &Shape,
    leaves: &[*mut u8],
    next: &mut usize,
    tables: &mut Vec<Vec<u64>>,
) -> *mut u8 {
    match shape {
        Shape::Tuple(elements) => {
            let table: Vec<u64> = elements
                .iter()
                .map(|e| layout(e, leaves, next, tables) as usize as u64)
                .collect();
            tables.push(table);
            tables
                .last_mut()
                .map(|t| t.as_mut_ptr().cast())
                .unwrap_or(std::ptr::null_mut())
        }
        Shape::Array(_) => {
            let p = leaves.get(*next).copied().unwrap_or(std::ptr::null_mut());
            *next += 1;
            p
        }
        Shape::Token => std::ptr::null_mut(),
    }
}
