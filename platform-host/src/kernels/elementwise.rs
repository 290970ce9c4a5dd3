//! Elementwise ops as thunks: unary, binary, compare, select, clamp, convert,
//! bitcast-convert, reduce-precision and the contracted multiply-add.
//!
//! Each thunk holds one kernel of the op table ([`crate::elementwise_ops`]),
//! the same one a fusion would run, chosen at compile time, and runs it over
//! contiguous chunks of the flat arrays, in parallel on the compute pool when
//! the array is large. A rank-0 predicate of `select` or rank-0 bounds of
//! `clamp` on a larger result are passed as scalars. A result may share
//! memory with an operand (buffer assignment's in-place reuse): the table's
//! kernels allow a destination that is exactly an operand.

use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::fma;
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, Thunk};
use platform_api::hlo::{InstrId, Op};
use platform_api::semantics::contraction::Contraction;
use platform_api::{ElementType, Error, HloInstruction, Result};

/// Elements per parallel task: large enough that a task outweighs its hand-off.
pub const ELEMENTWISE_GRAIN: usize = 1 << 15;

/// Most operands of an elementwise op (select, clamp, fused multiply-add).
const MAX_ARITY: usize = 3;

/// One operand of an elementwise thunk.
#[derive(Clone, Copy)]
struct Input {
    slice: BufferSlice,
    width: usize,
    /// A rank-0 operand used for every element.
    scalar: bool,
}

/// The op table's kernel for elementwise `op` (not the contracted multiply-add)
/// with operands of `operand_types` and a result of element type `ty`, and the
/// element type each operand must have where the op fixes it. `None` when `op`
/// is not an elementwise op of the table.
pub fn table_kernel(
    op: &Op,
    operand_types: &[ElementType],
    ty: ElementType,
) -> Option<(Result<Kernel>, Vec<Option<ElementType>>)> {
    let operand_type = |k: usize| -> Result<ElementType> {
        operand_types.get(k).copied().ok_or_else(|| {
            Error::invalid_argument(format!("{}: operand {k} is missing", op.opcode()))
        })
    };
    let first = match operand_type(0) {
        Ok(t) => t,
        Err(e) => return Some((Err(e), Vec::new())),
    };
    Some(match op {
        Op::Unary(u) => (ops::unary(*u, first, ty), vec![None]),
        Op::Convert => (ops::convert(first, ty), vec![None]),
        Op::ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => (
            ops::reduce_precision(ty, *exponent_bits, *mantissa_bits),
            vec![Some(ty)],
        ),
        Op::Binary(b) => (ops::binary(*b, first, ty), vec![Some(first), Some(first)]),
        Op::Compare {
            direction,
            compare_type,
        } => (
            ops::compare(*direction, *compare_type, first),
            vec![Some(first), Some(first)],
        ),
        Op::Select => (
            ops::select(ty),
            vec![Some(ElementType::Pred), Some(ty), Some(ty)],
        ),
        Op::Clamp => (ops::clamp(ty), vec![Some(ty); 3]),
        _ => return None,
    })
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    if matches!(instr.op, Op::BitcastConvert) {
        return lower_bitcast_convert(ctx, id);
    }
    let name = &instr.name;
    let result = ctx.result_array(instr)?;
    let ty = result.element_type;
    let opcode = instr.opcode().name();
    let (kernel, want, category): (Result<Kernel>, Vec<Option<ElementType>>, &'static str) =
        match &instr.op {
            Op::CustomCall(_) => {
                let how = fma::fused_multiply_add(instr)?.ok_or_else(|| {
                    Error::internal(format!("%{name} is not a fused multiply-add"))
                })?;
                let category = match how {
                    Contraction::Add => "add",
                    Contraction::SubtractFromProduct | Contraction::SubtractProduct => "subtract",
                };
                (
                    ops::fused_multiply_add(how, ty),
                    vec![Some(ty); 3],
                    category,
                )
            }
            op => {
                let operand_types = (0..instr.operands.len())
                    .map(|k| ctx.operand_array(instr, k).map(|a| a.element_type))
                    .collect::<Result<Vec<_>>>()?;
                let Some((kernel, want)) = table_kernel(op, &operand_types, ty) else {
                    return Err(Error::internal(format!("%{name} is not elementwise")));
                };
                (kernel, want, opcode)
            }
        };
    let kernel = kernel.map_err(|e| e.context(format_args!("%{name}")))?;
    if instr.operands.len() != want.len() || kernel.arity() != want.len() {
        return Err(Error::invalid_argument(format!(
            "%{name}: {} operands, {} expected",
            instr.operands.len(),
            want.len()
        )));
    }
    let n = result.element_count();
    let mut inputs = [None; MAX_ARITY];
    for (k, want) in want.iter().enumerate() {
        let shape = ctx.operand_array(instr, k)?;
        if want.is_some_and(|t| t != shape.element_type) {
            return Err(Error::invalid_argument(format!(
                "%{name}: operand {k} is {shape}, not of element type {}",
                want.map_or(ty, |t| t)
            )));
        }
        let broadcast_scalar = matches!(
            (&instr.op, k),
            (Op::Select, 0) | (Op::Clamp, 0) | (Op::Clamp, 2)
        ) && shape.rank() == 0
            && result.rank() > 0;
        if !broadcast_scalar {
            check_same_count(instr, shape.element_count(), n)?;
        }
        inputs[k] = Some(Input {
            slice: ctx.operand_slice(instr, k)?,
            width: shape.element_type.byte_size(),
            scalar: broadcast_scalar,
        });
    }
    let inputs: Vec<Input> = inputs.into_iter().flatten().collect();
    let out = ctx.result_slice(id)?;
    let out_width = ty.byte_size();
    Ok(thunk(name.clone(), category, move |ctx| {
        let mut bases = [(0usize, 0usize, false); MAX_ARITY];
        for (b, i) in bases.iter_mut().zip(&inputs) {
            *b = (ctx.ptr(i.slice) as usize, i.width, i.scalar);
        }
        let po = ctx.ptr(out) as usize;
        let arity = inputs.len();
        parallel_for(n, ELEMENTWISE_GRAIN, |s, e| {
            let mut args = [Arg::Scalar(std::ptr::null()); MAX_ARITY];
            for (a, &(p, w, scalar)) in args.iter_mut().zip(&bases[..arity]) {
                *a = if scalar {
                    Arg::Scalar(p as *const u8)
                } else {
                    Arg::Ptr((p + s * w) as *const u8)
                };
            }
            // SAFETY: chunk `s..e` of operands and a result of `n` elements
            // of the kernel's types (checked above); a scalar operand holds
            // one; buffer assignment makes the result disjoint from every
            // operand or exactly one of them.
            unsafe { kernel.call(&args[..arity], (po + s * out_width) as *mut u8, e - s) }
        });
        Ok(())
    }))
}

fn check_same_count(instr: &HloInstruction, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::invalid_argument(format!(
            "%{}: operand has {got} elements but the result has {want}",
            instr.name
        )));
    }
    Ok(())
}

fn lower_bitcast_convert(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let name = instr.name.clone();
    let result = ctx.result_array(instr)?;
    let a_shape = ctx.operand_array(instr, 0)?;
    let (from, to) = (a_shape.element_type, result.element_type);
    if (from.is_narrow() || to.is_narrow()) && from.bit_width() != to.bit_width() {
        // Narrow elements (one per byte) packed into or out of wider ones.
        let a = ctx.operand_slice(instr, 0)?;
        let out = ctx.result_slice(id)?;
        let in_size = a_shape.byte_size();
        return Ok(thunk(name, "bitcast-convert", move |ctx| {
            let (src, dst) = (ctx.ptr(a), ctx.ptr(out));
            // SAFETY: the slices hold the operand's and the result's bytes; the
            // input is copied first in case buffer assignment shares them.
            let input = unsafe { std::slice::from_raw_parts(src, in_size) }.to_vec();
            let output = unsafe { std::slice::from_raw_parts_mut(dst, out.size) };
            platform_api::semantics::repack_bits(from, &input, to, output);
            Ok(())
        }));
    }
    if a_shape.byte_size() != result.byte_size() {
        return Err(Error::invalid_argument(format!(
            "bitcast-convert %{name} changes the byte size: {a_shape} to {result}"
        )));
    }
    // Row-major little-endian bytes are the same whatever the element widths:
    // the reinterpretation is a copy.
    let a = ctx.operand_slice(instr, 0)?;
    let out = ctx.result_slice(id)?;
    Ok(thunk(name, "bitcast-convert", move |ctx| {
        let (src, dst) = (ctx.ptr(a), ctx.ptr(out));
        if src != dst {
            // SAFETY: both slices hold `out.size` bytes.
            unsafe { std::ptr::copy(src, dst, out.size) };
        }
        Ok(())
    }))
}
