//! Platform "Example": a small complete backend, written only against
//! `platform_api`'s public contracts and made of its platform kit. Copy this
//! crate, rename it, and replace the parts that compute.
//!
//! A backend is five pieces and three registrations:
//!
//! | piece | here | what a real backend does instead |
//! | --- | --- | --- |
//! | `Platform` + `StreamExecutor` | the kit's `HostDevices`: host memory with a ledger | enumerates devices found by a driver, allocates device memory |
//! | `Stream` / `Event` | the kit's inline streams and events | enqueue on a device queue |
//! | `TransferManager` | `GenericTransferManager` (shared) | the same, unless memory is not byte-addressable |
//! | [`Compiler`] | checks ops | generates code |
//! | `Executable` | the kit's `LiteralExecutable` and `OpByOpProgram` around [`ExampleKernels`] | launches the generated code |
//!
//! The registrations right below the constants (`inventory::submit!`) are the
//! only way anything finds the backend: the registry and the service name no
//! backend type. Linking the crate (`use example_backend as _;`, or `hlorun`
//! built with `--features example`) is what registers it.
//!
//! The backend implements a core set of about thirty ops ([`OPS`],
//! [`MOVEMENT_OPS`], on [`TYPES`]) and declares it in
//! `Compiler::supported_ops`; the framework's legalization rewrites every other
//! op of a program into those before `run_backend` (calls and fusions inlined,
//! `subtract` into `add` and `negate` into `multiply`, `maximum` into `compare`
//! and `select`, half floats through f32, ...), or fails *at compile time* with
//! one `Unimplemented` error naming every op it could not rewrite. The ops are
//! computed by the shared evaluator's per-op functions, which is where a real
//! backend puts its kernels.

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

/// The registered name; also the key the compiler and transfer manager use.
pub const PLATFORM_NAME: &str = "Example";
pub const ALIASES: &[&str] = &["ex", "skeleton"];
/// Lowest of all: a template must never become anyone's default platform.
pub const PRIORITY: i32 = 5;

// ---------------------------------------------------------------- registration

inventory::submit! {
    PlatformRegistration {
        name: PLATFORM_NAME,
        aliases: ALIASES,
        priority: PRIORITY,
        // A probe must be cheap and side-effect free: it runs for every listing.
        // A hardware backend would look for its driver and answer
        // `Unavailable("libfoo.so not found")` instead of failing.
        probe: || Availability::Available { devices: 1 },
        create: create_platform,
    }
}
inventory::submit! {
    CompilerRegistration { platform: PLATFORM_NAME, create: || Arc::new(ExampleCompiler) }
}
inventory::submit! {
    // Our memory is host memory, so the generic byte-copying manager serves.
    TransferManagerRegistration {
        platform: PLATFORM_NAME,
        create: || Arc::new(GenericTransferManager::new(PLATFORM_NAME)),
    }
}

// ---------------------------------------------------------------- known gaps
//
// A corpus case a backend cannot pass yet is registered in its crate with the
// reason, so `hlorun conformance` reports it as a known gap (and flags it once
// it passes):
//
//     inventory::submit! {
//         ConformanceGap { platform: PLATFORM_NAME, case: "fft_complex",
//                          form: None, reason: "no FFT kernel yet" }
//     }
//
// The Example has none: every case of the corpus passes, in both forms.

// ---------------------------------------------------------------- platform

fn describe(_ordinal: usize) -> DeviceDescription {
    DeviceDescription {
        name: "Example (host memory, inline streams)".into(),
        core_count: 1,
        ..Default::default()
    }
}

/// One device (`options.device_count` is ignored; a host-memory platform may
/// honour it, a hardware one caps it at what the driver found).
fn create_platform(_options: &PlatformOptions) -> Result<Arc<dyn Platform>> {
    let config = HostDeviceConfig::inline(PLATFORM_NAME, describe);
    Ok(Arc::new(HostDevices::new(config, 1)?))
}

// ---------------------------------------------------------------- compiler

/// The ops this backend runs (besides `parameter`, `constant`, `tuple` and
/// `get-tuple-element`, which every backend has). Legalization rewrites every
/// other op of a program into these before `run_backend` sees it, or fails at
/// compile time naming all it could not.
pub const OPS: &[Opcode] = &[
    Opcode::Add,
    Opcode::Multiply,
    Opcode::Divide,
    Opcode::Compare,
    Opcode::Select,
    Opcode::Exp,
    Opcode::Log,
    Opcode::Sqrt,
    Opcode::Tanh,
    Opcode::Sin,
    Opcode::Cos,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::ShiftLeft,
    Opcode::ShiftRightLogical,
    Opcode::ShiftRightArithmetic,
    Opcode::Dot,
    Opcode::Reduce,
    Opcode::While,
    Opcode::Conditional,
    Opcode::Scatter,
];

/// Data movement, which works on any element type.
pub const MOVEMENT_OPS: &[Opcode] = &[
    Opcode::Convert,
    Opcode::Broadcast,
    Opcode::Reshape,
    Opcode::Transpose,
    Opcode::Slice,
    Opcode::Concatenate,
    Opcode::Iota,
    Opcode::DynamicSlice,
    Opcode::DynamicUpdateSlice,
    Opcode::Gather,
    Opcode::BitcastConvert,
];

/// The element types [`OPS`] compute on.
pub const TYPES: &[ElementType] = &[
    ElementType::Pred,
    ElementType::S8,
    ElementType::S32,
    ElementType::S64,
    ElementType::U8,
    ElementType::U32,
    ElementType::U64,
    ElementType::F32,
    ElementType::F64,
];

/// "Compiling" is legalizing (by the provided `Compiler::compile`) and
/// wrapping the module in the kit's `OpByOpProgram` with [`ExampleKernels`].
pub struct ExampleCompiler;

impl Compiler for ExampleCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<HloModule> {
        verify_module(&module)?; // no optimisations: the HLO runs as written,
                                 // except where XLA CPU's numerics differ from op-by-op rounding (as
                                 // on the Interpreter; `excess_precision`, `divide_by_reciprocal`).
        let mut module = module;
        platform_api::passes::xla_numerics(
            &mut module,
            options.debug_option("excess_precision"),
            options.debug_option("divide_by_reciprocal"),
        )?;
        Ok(module)
    }

    fn supported_ops(&self) -> Option<OpSupport> {
        Some(
            OpSupport::new()
                .ops(OPS)
                .types(TYPES)
                .any_type(MOVEMENT_OPS),
        )
    }

    fn run_backend(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        options: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        let program = OpByOpProgram::new(module, ExampleKernels, options)?;
        Ok(Arc::new(LiteralExecutable::new(PLATFORM_NAME, program)))
    }
}

// ---------------------------------------------------------------- program

/// How the Example computes each op: with the shared evaluator's per-op
/// functions (`platform_api::evaluator`). This is the part a real backend
/// replaces with its kernels or generated code; the kit's `OpByOpProgram`
/// does the rest (parameters, tuples, loops, branches, subcomputations).
pub struct ExampleKernels;

impl OpKernels for ExampleKernels {
    fn compute(
        &self,
        instr: &HloInstruction,
        operands: &[&Literal],
        calls: &mut dyn CallComputation,
    ) -> Result<Literal> {
        kernels::evaluate_op(instr, operands, calls)
    }
}
