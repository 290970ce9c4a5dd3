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
//! | `Executable` | the kit's `LiteralExecutable` around [`ExampleProgram`] | launches the generated code |
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
use platform_api::evaluator::{array_ops, ops::slicing};
use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::{CompId, HloComputation, HloInstruction, Op};
use platform_api::kit::{HostDeviceConfig, HostDevices, LiteralExecutable, LiteralProgram};
use platform_api::registry::{
    Availability, CompilerRegistration, ConformanceGap, PlatformRegistration,
    TransferManagerRegistration,
};
use platform_api::{
    inventory, CompileOptions, Compiler, DeviceDescription, ElementType, Error, Executable,
    GenericTransferManager, HloModule, Literal, OpSupport, Opcode, Platform, PlatformOptions,
    Result, RunOptions, Scalar, StreamExecutor,
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

/// A conformance-corpus case this backend cannot pass yet, and why (both
/// forms of the case unless `form` names one). `hlorun conformance` reports
/// these as known gaps and flags any that start passing.
macro_rules! gap {
    ($case:literal, $form:expr, $reason:literal) => {
        inventory::submit! {
            ConformanceGap { platform: PLATFORM_NAME, case: $case, form: $form, reason: $reason }
        }
    };
}

gap!(
    "conv2d_nhwc",
    None,
    "convolution: no expander into dots yet"
);
gap!(
    "conv2d_strided_nchw",
    None,
    "convolution: no expander into dots yet"
);
gap!(
    "depthwise_conv",
    None,
    "convolution: no expander into dots yet"
);
gap!(
    "fft_complex",
    None,
    "fft and complex numbers are not in the core set"
);
gap!(
    "half_precision_math",
    Some("module"),
    "an f16 dot: widening it to f32 would change its accumulation"
);
gap!(
    "map_reduce_precision",
    None,
    "reduce-precision: no expander yet"
);
gap!(
    "remainder_pow_int",
    None,
    "f32 remainder and power: no exact expansion"
);
gap!("sort_argsort", None, "sort: no expander yet");
gap!("special_functions", None, "erf and power: no expansion yet");
gap!("top_k", None, "top-k (op or custom call): no expander yet");
gap!("unary_math", None, "atan2 and cbrt: no exact expansion");
gap!(
    "fori_loop",
    None,
    "XLA CPU contracts x*0.9 + i*sin(x) into one FMA and the loop amplifies the \
     difference; the Example rounds every op separately"
);

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
/// wrapping the module in an [`ExampleProgram`].
pub struct ExampleCompiler;

impl Compiler for ExampleCompiler {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn run_hlo_passes(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<HloModule> {
        verify_module(&module)?; // no optimisations: the HLO runs as written
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
        _: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        Ok(Arc::new(LiteralExecutable::new(
            PLATFORM_NAME,
            ExampleProgram { module },
        )))
    }
}

// ---------------------------------------------------------------- program

/// A legalized module, evaluated on literals (the kit reads the arguments
/// from the buffers and writes the result back).
///
/// Each op is computed by the shared evaluator's per-op functions
/// (`platform_api::evaluator`): this is the part a real backend replaces with
/// its kernels or generated code.
pub struct ExampleProgram {
    module: HloModule,
}

impl LiteralProgram for ExampleProgram {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn run(&self, arguments: Vec<Literal>, options: &RunOptions) -> Result<Literal> {
        let mut run = Run {
            module: &self.module,
            while_step_limit: options.while_step_limit,
            depth: 0,
        };
        run.eval(self.module.entry(), arguments)
    }
}

/// One execution: evaluates computations, recursing into loop bodies,
/// branches and the computations kernels call.
struct Run<'m> {
    module: &'m HloModule,
    while_step_limit: Option<u64>,
    depth: usize,
}

/// Computations nest at most this deep (a malformed module could recurse).
const MAX_DEPTH: usize = 256;

impl Run<'_> {
    fn eval(&mut self, comp: &HloComputation, args: Vec<Literal>) -> Result<Literal> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::resource_exhausted(format!(
                "Example: computations nested deeper than {MAX_DEPTH}"
            )));
        }
        self.depth += 1;
        let result = self.instructions(comp, args);
        self.depth -= 1;
        result
    }

    fn instructions(&mut self, comp: &HloComputation, args: Vec<Literal>) -> Result<Literal> {
        let mut values: Vec<Literal> = Vec::with_capacity(comp.instructions.len());
        for instr in &comp.instructions {
            let operands = instr
                .operands
                .iter()
                .map(|id| values.get(id.index()))
                .collect::<Option<Vec<&Literal>>>()
                .ok_or_else(|| Error::internal("an operand follows its user"))?;
            let value = self
                .instruction(instr, &operands, &args)
                .map_err(|e| e.context(format!("%{} in {}", instr.name, comp.name)))?;
            values.push(value);
        }
        values
            .into_iter()
            .nth(comp.root.index())
            .ok_or_else(|| Error::internal("no root value"))
    }

    fn instruction(
        &mut self,
        instr: &HloInstruction,
        operands: &[&Literal],
        args: &[Literal],
    ) -> Result<Literal> {
        let operand = |i: usize| {
            operands
                .get(i)
                .copied()
                .ok_or_else(|| Error::invalid_argument(format!("operand {i} is missing")))
        };
        Ok(match &instr.op {
            Op::Parameter { number } => args
                .get(*number)
                .cloned()
                .ok_or_else(|| Error::internal("missing argument"))?,
            Op::Constant { literal } => literal.clone(),
            Op::Tuple => Literal::tuple(operands.iter().map(|l| (*l).clone()).collect()),
            Op::GetTupleElement { index } => operand(0)?
                .tuple_elements()
                .get(*index)
                .cloned()
                .ok_or_else(|| Error::invalid_argument("tuple index out of range"))?,
            Op::While { condition, body } => self.while_loop(*condition, *body, operand(0)?)?,
            Op::Conditional { branches } => {
                let index = match operand(0)?.get(0)? {
                    // A pred selects branch 0 when true, 1 when false.
                    Scalar::Pred(p) => usize::from(!p),
                    // An out-of-range index runs the last branch, as in XLA.
                    s => usize::try_from(s.to_i64().unwrap_or(-1)).unwrap_or(usize::MAX),
                };
                let k = index.min(branches.len().saturating_sub(1));
                let branch = branches
                    .get(k)
                    .ok_or_else(|| Error::invalid_argument("conditional without branches"))?;
                let arg = operand(k + 1)?.clone();
                self.eval(self.module.computation(*branch), vec![arg])?
            }
            Op::DynamicUpdateSlice => {
                let starts: Vec<&Literal> = operands.iter().skip(2).copied().collect();
                slicing::dynamic_update_slice(operand(0)?.clone(), operand(1)?, &starts)?
            }
            op if array_ops::is_array_op(op) => {
                array_ops::evaluate_array_op(op, operands, &instr.shape)?
            }
            op => match kernels::kernel_for(op.opcode()) {
                Some(kernel) => kernel(instr, operands, self)?,
                None => {
                    return Err(Error::unimplemented(format!(
                        "the Example platform does not implement {}",
                        op.opcode()
                    )))
                }
            },
        })
    }

    fn while_loop(&mut self, condition: CompId, body: CompId, init: &Literal) -> Result<Literal> {
        let (condition, body) = (
            self.module.computation(condition),
            self.module.computation(body),
        );
        let mut state = init.clone();
        let mut steps = 0u64;
        while self.eval(condition, vec![state.clone()])?.get(0)? == Scalar::Pred(true) {
            steps += 1;
            if self.while_step_limit.is_some_and(|limit| steps > limit) {
                return Err(Error::resource_exhausted(format!(
                    "while loop ran more than {steps} steps (the run's step limit)"
                )));
            }
            state = self.eval(body, vec![state])?;
        }
        Ok(state)
    }
}

/// Kernels (dot, reduce, scatter, gather) call subcomputations through this.
impl CallComputation for Run<'_> {
    fn computation(&self, id: CompId) -> &HloComputation {
        self.module.computation(id)
    }

    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal> {
        let comp = self.module.computation(id);
        self.eval(comp, args.to_vec())
    }
}
