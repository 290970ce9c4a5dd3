//! Spawning the built `hlorun` binary for the end-to-end tests.

use std::io::{ErrorKind, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The path of a file under the repository's `examples/`.
pub fn example(path: &str) -> String {
    repo_root()
        .join("examples")
        .join(path)
        .display()
        .to_string()
}

pub fn hlorun(args: &[&str]) -> Output {
    hlorun_with(args, &[], None)
}

/// Runs `hlorun` with extra environment variables and optional standard input.
///
/// Standard input is fed from a thread of its own, so a program that writes
/// before it reads cannot deadlock against the test. A program may also exit
/// before reading its input (a usage error is found first): the write then
/// meets a closed pipe, which is the program's right, not a test failure.
pub fn hlorun_with(args: &[&str], env: &[(&str, &str)], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hlorun"));
    cmd.args(args)
        .env_remove("HLORUN_PLATFORM")
        .env_remove("RUST_LOG")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for (k, v) in env {
        cmd.env(k, v);
    }
    let mut child = cmd.spawn().expect("spawn hlorun");
    let mut pipe = child.stdin.take().unwrap();
    let text = stdin.unwrap_or("").to_owned();
    let feeder = std::thread::spawn(move || match pipe.write_all(text.as_bytes()) {
        Err(e) if e.kind() != ErrorKind::BrokenPipe => Err(e),
        _ => Ok(()),
    });
    let output = child.wait_with_output().expect("wait for hlorun");
    feeder
        .join()
        .expect("stdin feeder")
        .expect("write hlorun's standard input");
    output
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}
