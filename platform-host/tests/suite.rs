//! Host's integration tests, linked as one binary.
//!
//! Each test links the platform with its whole kernel library; a binary per
//! file cost about 200 MB of disk and a link each. One binary holds them all;
//! pick a file's tests by its module name:
//! `cargo test -p platform-host --test suite vmath_xla::`.

#[path = "common/rng.rs"]
mod rng;

mod conformance;
mod conv_forms;
mod executable;
mod fusion_bench;
mod fusion_corpus;
mod fusion_diff;
mod half_matvec;
mod op_table;
mod reduce_walks;
mod runtime;
mod small_loop;
mod smoke;
mod subnormal_operands;
mod vmath_accuracy;
mod vmath_semantics;
mod vmath_xla;
