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
//! The program evaluates a small op subset — parameter, constant, the
//! elementwise ops (through `platform_api::semantics`, the one definition of
//! their numbers every backend shares), broadcast, reshape, tuple,
//! get-tuple-element and 2-D f32 dot — and the compiler refuses anything else
//! with `Unimplemented` naming the op, *at compile time*: a user learns that a
//! program cannot run before any data is moved.

use platform_api::hlo::verifier::verify_module;
use platform_api::hlo::{DotDimensionNumbers, Op};
use platform_api::index::{for_each_index, linear_index};
use platform_api::kit::{HostDeviceConfig, HostDevices, LiteralExecutable, LiteralProgram};
use platform_api::registry::{
    Availability, CompilerRegistration, PlatformRegistration, TransferManagerRegistration,
};
use platform_api::{
    inventory, semantics, CompileOptions, Compiler, DeviceDescription, ElementType, Error,
    Executable, GenericTransferManager, HloModule, Literal, Platform, PlatformOptions, Result,
    RunOptions, Shape, StreamExecutor,
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

/// "Compiling" is checking: every instruction must be one the executable can
/// evaluate, so an unsupported program fails here, naming the op.
pub struct ExampleCompiler;

fn the_2d_f32_matmul() -> DotDimensionNumbers {
    DotDimensionNumbers {
        lhs_contracting_dims: vec![1],
        rhs_contracting_dims: vec![0],
        ..Default::default()
    }
}

fn check_supported(module: &HloModule) -> Result<()> {
    for instr in &module.entry().instructions {
        let supported = match &instr.op {
            Op::Parameter { .. } | Op::Constant { .. } | Op::Unary(_) | Op::Binary(_) => true,
            Op::Compare { .. } | Op::Select | Op::Clamp | Op::Convert => true,
            Op::Broadcast { .. } | Op::Reshape | Op::Tuple | Op::GetTupleElement { .. } => true,
            Op::Dot { dnums, .. } => {
                *dnums == the_2d_f32_matmul()
                    && instr.shape.element_type() == Some(ElementType::F32)
                    && instr.shape.rank() == 2
            }
            _ => false,
        };
        if !supported {
            let what = match instr.op {
                Op::Dot { .. } => "dot other than a 2-D f32 matrix product".to_string(),
                _ => instr.opcode().to_string(),
            };
            return Err(Error::unimplemented(format!(
                "the Example platform does not implement {what} (%{})",
                instr.name
            )));
        }
    }
    Ok(())
}

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
    fn run_backend(
        &self,
        module: HloModule,
        _: &Arc<dyn StreamExecutor>,
        _: &CompileOptions,
    ) -> Result<Arc<dyn Executable>> {
        check_supported(&module)?;
        Ok(Arc::new(LiteralExecutable::new(
            PLATFORM_NAME,
            ExampleProgram { module },
        )))
    }
}

// ---------------------------------------------------------------- program

/// A checked module, evaluated on literals (the kit reads the arguments from
/// the buffers and writes the result back).
pub struct ExampleProgram {
    module: HloModule,
}

impl LiteralProgram for ExampleProgram {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn run(&self, arguments: Vec<Literal>, _: &RunOptions) -> Result<Literal> {
        evaluate(&self.module, arguments)
    }
}

/// Evaluates the entry computation, one instruction at a time, in order.
fn evaluate(module: &HloModule, args: Vec<Literal>) -> Result<Literal> {
    let comp = module.entry();
    let mut values: Vec<Literal> = Vec::with_capacity(comp.instructions.len());
    for instr in &comp.instructions {
        let operand = |i: usize| -> Result<&Literal> {
            values
                .get(instr.operand(i)?.index())
                .ok_or_else(|| Error::internal("operand after user"))
        };
        let value = match &instr.op {
            Op::Parameter { number } => args
                .get(*number)
                .cloned()
                .ok_or_else(|| Error::internal("missing argument"))?,
            Op::Constant { literal } => literal.clone(),
            Op::Unary(op) => semantics::unary(*op, operand(0)?, &instr.shape)?,
            Op::Binary(op) => semantics::binary(*op, operand(0)?, operand(1)?, &instr.shape)?,
            Op::Compare {
                direction,
                compare_type,
            } => semantics::compare(*direction, *compare_type, operand(0)?, operand(1)?)?,
            Op::Select => semantics::select(operand(0)?, operand(1)?, operand(2)?)?,
            Op::Clamp => semantics::clamp(operand(0)?, operand(1)?, operand(2)?)?,
            Op::Convert => semantics::convert(
                operand(0)?,
                instr.shape.element_type().unwrap_or(ElementType::F32),
            )?,
            Op::Reshape => operand(0)?.reshape(instr.shape.dims())?,
            Op::Broadcast { dimensions } => broadcast(operand(0)?, &instr.shape, dimensions)?,
            Op::Tuple => Literal::tuple(
                (0..instr.operands.len())
                    .map(|i| operand(i).cloned())
                    .collect::<Result<_>>()?,
            ),
            Op::GetTupleElement { index } => operand(0)?
                .tuple_elements()
                .get(*index)
                .cloned()
                .ok_or_else(|| Error::internal("tuple index out of range"))?,
            Op::Dot { .. } => matmul(operand(0)?, operand(1)?)?,
            _ => {
                return Err(Error::unimplemented(format!(
                    "Example: {} (%{})",
                    instr.opcode(),
                    instr.name
                )))
            }
        };
        values.push(value);
    }
    values
        .into_iter()
        .nth(comp.root.index())
        .ok_or_else(|| Error::internal("no root value"))
}

/// Result element at `index` is operand element at `index[dimensions[i]]`
/// along each operand dimension `i`; elements are copied as raw bytes.
fn broadcast(x: &Literal, shape: &Shape, dimensions: &[usize]) -> Result<Literal> {
    let (src, dims) = (x.bytes()?, x.dims());
    let width = shape.element_type().map_or(1, |t| t.byte_size());
    let strides = platform_api::shape::row_major_strides(dims);
    let mut out = Vec::with_capacity(shape.element_count() * width);
    let mut at = vec![0usize; dims.len()];
    for_each_index(shape.dims(), |index| {
        for (a, &d) in at.iter_mut().zip(dimensions) {
            *a = index[d];
        }
        let from = linear_index(&at, &strides) * width;
        out.extend_from_slice(&src[from..from + width]);
    });
    Literal::from_bytes(shape.without_layout(), &out)
}

/// `[m, k] x [k, n] -> [m, n]` in f32, accumulating along k in order.
fn matmul(a: &Literal, b: &Literal) -> Result<Literal> {
    let (&[m, k], &[_, n]) = (a.dims(), b.dims()) else {
        return Err(Error::internal("matmul operands must be 2-D"));
    };
    let (a, b) = (a.data::<f32>()?, b.data::<f32>()?);
    let mut c = vec![0f32; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).fold(0.0, |acc, p| acc + a[i * k + p] * b[p * n + j]);
        }
    }
    Literal::from_slice(&[m, n], &c)
}
