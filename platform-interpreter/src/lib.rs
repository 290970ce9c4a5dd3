//! Platform "Interpreter" (being written): see `kernels` for the kernel contract.

pub mod kernels;
