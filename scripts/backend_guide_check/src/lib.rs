//! Platform "Toy": host memory, inline streams, a core op set; everything else
//! is legalized. Written by following docs/writing-a-backend.md.

use platform_api::evaluator::kernels::{self, CallComputation};
use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::HloInstruction;
use platform_api::kit::{
    HostDeviceConfig, HostDevices, LiteralExecutable, OpByOpProgram, OpKernels,
};
use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::{
    inventory, CompileOptions, Compiler, DeviceDescription, ElementType, Executable,
    GenericTransferManager, HloModule, Literal, OpSupport, Opcode, Platform, PlatformOptions,
    Result, StreamExecutor,
};
use std::sync::Arc;

pub const PLATFORM_NAME: &str = "Toy";

inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: &["toy-device"],
        priority: 10,
        probe: || Availability::Available { devices: 1 },
        create: create_platform,
    }
}
inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: || Arc::new(ToyCompiler) }
}
inventory::submit! {
    TransferManagerRegistration {
        platform: PLATFORM_NAME,
        create: || Arc::new(GenericTransferManager::new(PLATFORM_NAME)),
    }
}

fn describe(_ordinal: usize) -> DeviceDescription {
    DeviceDescription {
        name: "Toy".into(),
        core_count: 1,
        ..Default::default()
    }
}

fn create_platform(options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    let config = HostDeviceConfig::inline(PLATFORM_NAME, describe);
    Ok(Arc::new(HostDevices::new(
        config,
        options.device_count.unwrap_or(1),
    )?))
}

pub struct ToyCompiler;

impl Compiler for ToyCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<HloModule> {
        verify_module(&module)?;
        Ok(module)
    }

    fn supported_ops(&self) -> Option<OpSupport> {
        use Opcode::*;
        let ops = [
            Add,
            Multiply,
            Divide,
            Compare,
            Select,
            Exp,
            Log,
            Sqrt,
            Tanh,
            Sin,
            Cos,
            And,
            Or,
            Xor,
            ShiftLeft,
            ShiftRightLogical,
            ShiftRightArithmetic,
            Dot,
            Reduce,
            While,
            Conditional,
            Scatter,
        ];
        let movement = [
            Convert,
            Broadcast,
            Reshape,
            Transpose,
            Slice,
            Concatenate,
            Iota,
            DynamicSlice,
            DynamicUpdateSlice,
            Gather,
            BitcastConvert,
        ];
        use ElementType::*;
        let types = [Pred, S8, S32, S64, U8, U32, U64, F32, F64];
        Some(OpSupport::new().ops(&ops).types(&types).any_type(&movement))
    }

    fn run_backend(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        let program = OpByOpProgram::new(module, ToyKernels, options)?;
        Ok(Arc::new(LiteralExecutable::new(PLATFORM_NAME, program)))
    }
}

/// Where a real device would run its kernels: here, the evaluator's per-op code.
struct ToyKernels;

impl OpKernels for ToyKernels {
    fn compute(
        &self,
        instr: &HloInstruction,
        operands: &[&Literal],
        calls: &mut dyn CallComputation,
    ) -> Result<Literal> {
        kernels::evaluate_op(instr, operands, calls)
    }
}
