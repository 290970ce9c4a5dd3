//! `platform-api`: the contracts every platform implements, and the HLO they run.
//!
//! This crate is the only one every other crate depends on, and it depends on none
//! of ours. It holds three kinds of things:
//!
//! * **Values and types** — [`shape`] (element types, shapes, layouts), [`native`]
//!   (Rust types for elements, the dynamically typed [`Scalar`]) and [`literal`]
//!   (host values, their text form and `.npy` files).
//! * **The program** — [`hlo`]: the IR, its text parser and printer, the verifier
//!   with shape inference, and a builder.
//! * **The contracts** — what a backend implements: [`Platform`] (a kind of
//!   device), [`StreamExecutor`] (one device: memory, streams, events),
//!   [`Stream`] / [`Event`], [`TransferManager`] (literals to and from
//!   [`ShapedBuffer`]s), [`ComputationPlacer`] / [`DeviceAssignment`],
//!   [`Compiler`] and [`Executable`]; and [`registry`], where a backend crate
//!   announces itself with `inventory::submit!` and the service finds it by name.
//!
//! Errors everywhere are [`Error`]: a [`Code`] and a message for the person who
//! has to act on it. No function in this crate panics on bad input.

pub mod compiler;
pub mod custom_call;
pub mod error;
pub mod executable;
pub mod executor;
pub mod hlo;
pub mod index;
pub mod literal;
pub mod memory;
pub mod native;
pub mod passes;
pub mod placer;
pub mod platform;
pub mod registry;
pub mod semantics;
pub mod shape;
pub mod stream;
pub mod transfer;

/// Re-exported so backend crates register with the same `inventory` version.
pub use inventory;

/// Types the exported `with_*_type!` macros name (not part of the API).
#[doc(hidden)]
pub mod __macro_support {
    pub use half::{bf16, f16};
    pub use num_complex::{Complex32, Complex64};
}

pub use error::{Code, Error, Result};
pub use hlo::{HloComputation, HloInstruction, HloModule};
pub use literal::Literal;
pub use native::{NativeType, Scalar};
pub use shape::{ArrayShape, ElementType, Layout, ProgramShape, Shape};

pub use compiler::{CompileOptions, Compiler};
pub use executable::{Executable, ProfileEvent, ProfileSink, RunOptions};
pub use executor::{DeviceDescription, MemoryUsage, StreamExecutor};
pub use memory::{DeviceAllocation, DeviceMemoryBase, ShapedBuffer};
pub use placer::{ComputationPlacer, DefaultComputationPlacer, DeviceAssignment};
pub use platform::{Platform, PlatformOptions};
pub use registry::{
    Availability, CompilerRegistration, ComputationPlacerRegistration, PlatformRegistration,
    TransferManagerRegistration,
};
pub use stream::{Event, EventStatus, HostCallback, Stream};
pub use transfer::{GenericTransferManager, TransferManager};
