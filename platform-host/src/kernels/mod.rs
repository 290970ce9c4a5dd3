//! Kernels: one module per op family, each turning an instruction into a thunk.
//!
//! # Interface
//! Every family exposes `lower(ctx: &LowerCtx, id: InstrId) -> Result<Box<dyn
//! Thunk>>`. Control flow and fusions are not kernels: the compiler lowers
//! them (`compiler::nested`, [`crate::fusion`]). Lowering
//! runs once per compile: it checks the instruction's shapes and attributes,
//! picks typed inner loops ([`crate::elementwise_ops`], [`types`]) and precomputes index
//! arithmetic, and returns a thunk that at run time only resolves its buffer
//! slices and runs. Large work is split over the shared compute pool
//! ([`crate::runtime::pool::parallel_for`]).
//!
//! [`lower`] dispatches on the opcode. An op no family handles is
//! `Unimplemented`, naming the op and the instruction.

pub mod argminmax;
pub mod batch_norm;
pub mod collectives;
pub mod convolution;
pub mod custom_call;
pub mod data_movement;
pub mod denormal;
pub mod dot;
pub mod elementwise;
pub mod fft;
pub mod gather_scatter;
pub mod gemm;
pub mod linalg;
pub mod misc;
pub mod reduce;
pub mod reduce_window;
pub mod rng;
pub mod scalar_program;
pub mod simd;
pub mod sort;
pub mod strided;
pub mod types;

use crate::lowering::LowerCtx;
use crate::thunk::Thunk;
use platform_api::hlo::{InstrId, Op};
use platform_api::{Error, Result};

/// Lowers instruction `id` (which defines values: not a parameter, constant or
/// alias) to its thunk.
pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = match &instr.op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare { .. }
        | Op::Select
        | Op::Clamp
        | Op::Convert
        | Op::BitcastConvert
        | Op::ReducePrecision { .. } => elementwise::lower(ctx, id),
        Op::Broadcast { .. }
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::Reverse { .. }
        | Op::DynamicSlice { .. }
        | Op::DynamicUpdateSlice
        | Op::Concatenate { .. }
        | Op::Pad { .. }
        | Op::Iota { .. } => data_movement::lower(ctx, id),
        Op::Reduce { .. } => reduce::lower(ctx, id),
        Op::Dot { .. } => dot::lower(ctx, id),
        Op::Convolution { .. } => convolution::lower(ctx, id),
        Op::Gather { .. } | Op::Scatter { .. } => gather_scatter::lower(ctx, id),
        Op::Sort { .. } | Op::TopK { .. } => sort::lower(ctx, id),
        Op::CustomCall(_) => custom_call::lower(ctx, id),
        Op::Fft { .. } => fft::lower(ctx, id),
        Op::Cholesky { .. } | Op::TriangularSolve { .. } => linalg::lower(ctx, id),
        Op::Rng { .. } | Op::RngBitGenerator { .. } | Op::RngGetAndUpdateState { .. } => {
            rng::lower(ctx, id)
        }
        Op::BatchNormTraining { .. }
        | Op::BatchNormInference { .. }
        | Op::BatchNormGrad { .. }
        | Op::Map { .. } => batch_norm::lower(ctx, id),
        Op::AllReduce { .. }
        | Op::AllReduceStart { .. }
        | Op::AllGather { .. }
        | Op::AllGatherStart { .. }
        | Op::ReduceScatter { .. }
        | Op::AllToAll { .. }
        | Op::CollectivePermute { .. }
        | Op::CollectivePermuteStart { .. }
        | Op::CollectiveBroadcast { .. } => collectives::lower(ctx, id),
        Op::ReduceWindow { .. } | Op::SelectAndScatter { .. } => reduce_window::lower(ctx, id),
        Op::ReplicaId | Op::PartitionId | Op::GetDimensionSize { .. } => misc::lower(ctx, id),
        other => Err(Error::unimplemented(format!(
            "the Host platform does not support {} (instruction %{})",
            other.opcode(),
            instr.name
        ))),
    };
    result.map_err(|e| {
        if e.message().contains(&format!("%{}", instr.name)) {
            e
        } else {
            e.context(format_args!("%{} ({})", instr.name, instr.opcode()))
        }
    })
}

/// A hint to bring the line holding `p` into L1 before it is read. Never
/// faults, whatever `p`.
#[inline(always)]
pub(crate) fn prefetch_l1(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing architecturally and
    // never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        _mm_prefetch::<_MM_HINT_T0>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A hint to bring the line holding `p` into L2 before it is read. Never
/// faults, whatever `p`.
#[inline(always)]
pub(crate) fn prefetch_l2(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch is a hint; it reads nothing architecturally and
    // never faults, whatever the address.
    unsafe {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T1};
        _mm_prefetch::<_MM_HINT_T1>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}
