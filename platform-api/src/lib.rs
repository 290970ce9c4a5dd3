//! `platform-api`: the contracts every platform implements.
//!
//! A backend crate depends on this crate alone. It holds:
//!
//! * **The contracts** — what a backend implements: [`Platform`] (a kind of
//!   device), the device interface in [`device`] ([`StreamExecutor`]: one
//!   device, its memory, streams and events; [`Stream`] / [`Event`]),
//!   [`TransferManager`] (literals to and from [`ShapedBuffer`]s, built on the
//!   allocations of [`memory`]), [`ComputationPlacer`] / [`DeviceAssignment`],
//!   [`Compiler`] and [`Executable`]. Modules depend downward only: `device`
//!   on nothing but errors, `memory` on `device`, transfers and executables on
//!   both, the registries on the traits they create.
//! * **The registries** — [`registry`], where a backend crate announces itself with
//!   `inventory::submit!` and the service finds it by name.
//! * **Custom calls** — [`custom_call`]: XLA's CPU and GPU custom-call ABIs, the
//!   target registry, shared-library loading and the typed FFI.
//! * **The program, re-exported** — the program lives in its own crates under
//!   `hlo/`, which know nothing of devices: `hlo-ir` (shapes, literals, the IR,
//!   text, verifier, builder) as [`hlo`], [`shape`], [`literal`], [`native`],
//!   [`index`] and [`error`]; `hlo-semantics` (what every elementwise op computes)
//!   as [`semantics`]; `hlo-evaluator` (the reference evaluator) as [`evaluator`];
//!   `hlo-passes` (bit-preserving HLO passes) as [`passes`].
//!
//! Errors everywhere are [`Error`]: a [`Code`] and a message for the person who
//! has to act on it. No function in this crate panics on bad input.

pub mod compiler;
pub mod custom_call;
pub mod device;
pub mod executable;
pub mod kit;
pub mod memory;
pub mod placer;
pub mod platform;
pub mod profile;
pub mod progress;
pub mod registry;
pub mod transfer;

// The program, re-exported so a backend names one dependency. The paths are the
// ones backends have always used (`platform_api::hlo::parser`,
// `platform_api::shape::Shape`, `platform_api::semantics::float`).
pub use hlo_evaluator as evaluator;
pub use hlo_ir as hlo;
pub use hlo_ir::{bail, ensure, error, index, literal, native, shape};
pub use hlo_passes as passes;
pub use hlo_semantics as semantics;
pub use hlo_semantics::{with_any_type, with_complex_type, with_float_type, with_int_type};

/// Re-exported so backend crates register with the same `inventory` version.
pub use inventory;

pub use error::{Code, Error, Result};
pub use hlo::{HloComputation, HloInstruction, HloModule};
pub use literal::Literal;
pub use native::{NativeType, Scalar};
pub use shape::{ArrayShape, ElementType, Layout, ProgramShape, Shape};

pub use compiler::{CompileOptions, Compiler};
pub use device::{
    DeviceDescription, DeviceMemoryBase, Event, EventStatus, HostCallback, MemoryUsage, Stream,
    StreamExecutor,
};
pub use executable::{Executable, RunOptions};
pub use hlo_ir::Opcode;
pub use hlo_passes::legalize::{legalize, Legalize, OpSupport, Unlegalized};
pub use memory::{DeviceAllocation, ShapedBuffer};
pub use placer::{ComputationPlacer, DefaultComputationPlacer, DeviceAssignment};
pub use platform::{Platform, PlatformOptions};
pub use profile::{EventArgs, ProfileEvent, ProfileSink};
pub use progress::Progress;
pub use registry::{
    Availability, CompilerRegistration, ComputationPlacerRegistration, ConformanceGap,
    PlatformRegistration, TransferManagerRegistration,
};
pub use transfer::{GenericTransferManager, TransferManager};
