//! The crate's integration tests, linked as one binary.
//!
//! Every test here links the whole stack (all platforms, the service, the CUDA
//! code generator), so a binary per file cost about 300 MB of disk and a link
//! each. One binary holds them all; pick a file's tests by its module name:
//! `cargo test -p tests --test suite op_matrix::`.

mod async_collectives;
mod bf16_parity;
mod compare_scale;
mod conformance;
mod cuda_deviceless;
mod cuda_emulated;
mod differential;
#[path = "example_backend/main.rs"]
mod example_backend;
mod fuzz_findings;
mod jax_export;
mod linalg;
mod model_compare;
mod narrow_types;
mod op_matrix;
mod pipeline_fuzz;
mod sharded;
mod stablehlo_testdata;
mod xla_ops;
mod xla_semantics;
