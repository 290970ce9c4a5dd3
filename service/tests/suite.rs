//! The service's command-line and custom-call tests, linked as one binary
//! (each links the whole stack, about 300 MB of disk apiece as separate
//! binaries). `client` and `conformance` stay binaries of their own: both
//! observe the shared test platform's global record of compiles and runs,
//! which tests of the other would disturb.

#[path = "../../platform-api/tests/custom_call_common/mod.rs"]
mod custom_call_common;

mod cli;
mod cli_run;
mod custom_call_cli;
mod custom_call_status;
mod scratch;
mod spawn;
