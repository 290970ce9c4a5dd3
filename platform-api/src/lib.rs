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
//! * **The contracts** — the traits a backend implements and the registries a
//!   backend joins (added alongside as the platform layer grows).
//!
//! Errors everywhere are [`Error`]: a [`Code`] and a message for the person who
//! has to act on it. No function in this crate panics on bad input.

pub mod error;
pub mod hlo;
pub mod literal;
pub mod native;
pub mod shape;

pub use error::{Code, Error, Result};
pub use hlo::{HloComputation, HloInstruction, HloModule};
pub use literal::Literal;
pub use native::{NativeType, Scalar};
pub use shape::{ArrayShape, ElementType, Layout, ProgramShape, Shape};
