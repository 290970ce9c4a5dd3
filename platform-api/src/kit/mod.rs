//! Building blocks for backends whose memory is host memory (or that start
//! there): a backend configures them and writes only what differs.
//!
//! * [`HostMemory`] — an allocator with a ledger (bytes in use, peak, live
//!   allocations, ownership checks), deferred frees and a block cache.
//! * [`HostStream`] / [`HostEvent`] — ordered streams run inline or on a thread
//!   of their own ([`StreamMode`]), keeping the first error as the `Stream`
//!   contract says, and their events.
//! * [`HostDevice`] / [`HostDevices`] — a `StreamExecutor` and a `Platform`
//!   made of the above, configured by [`HostDeviceConfig`].
//! * [`executable`] — argument checks, result allocation with tuple index
//!   tables, literals in and out of buffers, and [`LiteralExecutable`], a whole
//!   `Executable` around a program that computes on literals.
//! * [`op_by_op`] — [`OpByOpProgram`], such a program run one instruction at a
//!   time, with control flow and subcomputations handled: the backend says
//!   only how each op computes ([`OpKernels`]).
//!
//! The Interpreter (inline streams, strict ranges) and the Host (threaded
//! streams, parallel copies) are both made of these, as is the example backend:
//! none keeps a copy of its own.

pub mod device;
pub mod executable;
pub mod memory;
pub mod op_by_op;
pub mod stream;

pub use device::{HostDevice, HostDeviceConfig, HostDevices};
pub use executable::{LiteralExecutable, LiteralProgram};
pub use memory::HostMemory;
pub use op_by_op::{OpByOpProgram, OpKernels};
pub use stream::{CopyFn, HostEvent, HostStream, StreamMode};
