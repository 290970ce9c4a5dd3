//! Small ops: `replica-id`, `partition-id`, `get-dimension-size`.
//!
//! Shapes here are static: the standard pipeline's `PadDynamicShapes` has
//! already replaced dynamic sizes by values computed beside the arrays, so a
//! `get-dimension-size` left is of a static dimension and is its extent.
//! `dynamic-reshape` is not lowered: copying the bound through would be a
//! wrong answer.

use crate::lowering::LowerCtx;
use crate::thunk::{thunk, Thunk};
use platform_api::hlo::{InstrId, Op};
use platform_api::{ElementType, Error, Result};

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let out = ctx.result_slice(id)?;
    let result = ctx.result_array(instr)?;
    let name = instr.name.clone();
    let category = instr.opcode().name();
    let write_u32 = |value: fn(&crate::thunk::RunState) -> u32| -> Result<Box<dyn Thunk>> {
        if !matches!(result.element_type, ElementType::U32 | ElementType::S32) || result.rank() != 0
        {
            return Err(Error::invalid_argument(format!(
                "%{}: must produce a u32/s32 scalar, not {result}",
                instr.name
            )));
        }
        Ok(thunk(name.clone(), category, move |ctx| {
            // SAFETY: a 4-byte scalar result.
            unsafe { ctx.ptr(out).cast::<u32>().write(value(ctx.run)) };
            Ok(())
        }))
    };
    match &instr.op {
        Op::ReplicaId => write_u32(|run| run.replica as u32),
        Op::PartitionId => write_u32(|run| run.partition as u32),
        Op::GetDimensionSize { dimension } => {
            let operand = ctx.operand_array(instr, 0)?;
            let size = *operand.dims.get(*dimension).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "%{}: dimension {dimension} out of range for {operand}",
                    instr.name
                ))
            })? as u32;
            if result.byte_size() != 4 {
                return Err(Error::invalid_argument(format!(
                    "%{}: must produce a 32-bit scalar",
                    instr.name
                )));
            }
            Ok(thunk(name, category, move |ctx| {
                // SAFETY: a 4-byte scalar result.
                unsafe { ctx.ptr(out).cast::<u32>().write(size) };
                Ok(())
            }))
        }
        _ => Err(Error::internal(format!("%{} is not a misc op", instr.name))),
    }
}
