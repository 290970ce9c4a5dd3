//! `hlorun`: the command line of `service::cli`, with the backends this
//! crate's features link.

fn main() -> std::process::ExitCode {
    service::cli::main()
}
