//! `hlorun` with the Toy platform linked.
use toy_backend as _;
fn main() -> std::process::ExitCode {
    service::cli::main()
}
