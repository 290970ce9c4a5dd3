//! `hlorun --custom-call-lib`: custom-call targets written in C, compiled at
//! test time into a shared library and loaded by the `hlorun` binary. The
//! library calls `XlaCustomCallStatusSetFailure` without linking anything of
//! ours, which works because `hlorun` exports the status functions (see
//! `service/build.rs`). Skipped (printing why) only when no C compiler exists,
//! or while the crate has no `hlorun` binary (before the CLI lands).

use crate::custom_call_common::{build_shared_library, temp_dir, values};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Writes a rank-1 `<f4` `.npy` file.
fn write_npy_f32(path: &Path, data: &[f32]) {
    let mut header = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': ({},), }}",
        data.len()
    );
    // Magic (6) + version (2) + length (2) + header + '\n', padded to 64 bytes.
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend((header.len() as u16).to_le_bytes());
    bytes.extend(header.as_bytes());
    for v in data {
        bytes.extend(v.to_le_bytes());
    }
    std::fs::write(path, bytes).unwrap();
}

/// Reads a `<f4` `.npy` file written by hlorun.
fn read_npy_f32(path: &Path) -> Vec<f32> {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let (len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
    };
    let header = String::from_utf8_lossy(&bytes[start..start + len]);
    assert!(
        header.contains("'<f4'") && header.contains("False"),
        "{header}"
    );
    bytes[start + len..]
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

/// Runs the built `hlorun`.
fn hlorun(args: &[&std::ffi::OsStr]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlorun"))
        .args(args)
        .output()
        .expect("run hlorun")
}

const DIVIDE_HLO: &str = r#"
HloModule divide
ENTRY e {
  a = f32[4] parameter(0)
  b = f32[4] parameter(1)
  ROOT cc = f32[4] custom-call(a, b), custom_call_target="checked_divide", api_version=API_VERSION_STATUS_RETURNING
}
"#;

fn divide(dir: &Path, library: &Path, b: &[f32]) -> Output {
    let (module, a_npy, b_npy, out) = (
        dir.join("divide.hlo"),
        dir.join("a.npy"),
        dir.join("b.npy"),
        dir.join("out"),
    );
    std::fs::write(&module, DIVIDE_HLO).unwrap();
    write_npy_f32(&a_npy, &[1.0, 2.0, 3.0, 4.0]);
    write_npy_f32(&b_npy, b);
    hlorun(&[
        "run".as_ref(),
        module.as_os_str(),
        a_npy.as_os_str(),
        b_npy.as_os_str(),
        "--platform".as_ref(),
        "interpreter".as_ref(),
        "--custom-call-lib".as_ref(),
        library.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ])
}

#[test]
fn status_failure_reaches_stderr_and_exit_status_1() {
    let Some(library) = build_shared_library("status_targets.c") else {
        return;
    };
    let dir = temp_dir("cli-divide");
    let failed = divide(&dir, &library, &[1.0, 2.0, 0.0, 4.0]);
    let stderr = String::from_utf8_lossy(&failed.stderr);
    assert_eq!(failed.status.code(), Some(1), "stderr: {stderr}");
    assert!(
        stderr.contains("checked_divide: division by zero at index 2"),
        "stderr: {stderr}"
    );

    let ok = divide(&dir, &library, &[2.0, 4.0, 6.0, 8.0]);
    assert!(
        ok.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&ok.stderr)
    );
    assert_eq!(read_npy_f32(&dir.join("out/out0.npy")), vec![0.5; 4]);
}

#[test]
fn guide_example_in_c_runs_through_hlorun() {
    let Some(library) = build_shared_library("guide_targets.c") else {
        return;
    };
    let dir = temp_dir("cli-guide");
    let module = dir.join("do_it.hlo");
    std::fs::write(
        &module,
        r#"
HloModule do_it
ENTRY do_it {
  p0 = f32[128] parameter(0)
  p1 = f32[2048] parameter(1)
  ROOT cc = f32[2048] custom-call(p0, p1), custom_call_target="do_custom_call"
}
"#,
    )
    .unwrap();
    let (b, c) = (values(128, 1.0), values(2048, 2.0));
    let (b_npy, c_npy, out): (PathBuf, PathBuf, PathBuf) =
        (dir.join("b.npy"), dir.join("c.npy"), dir.join("out"));
    write_npy_f32(&b_npy, &b);
    write_npy_f32(&c_npy, &c);
    let run = hlorun(&[
        "run".as_ref(),
        module.as_os_str(),
        b_npy.as_os_str(),
        c_npy.as_os_str(),
        "-p".as_ref(),
        "interpreter".as_ref(),
        "--custom-call-lib".as_ref(),
        library.as_os_str(),
        "--out".as_ref(),
        out.as_os_str(),
    ]);
    assert!(
        run.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let expected: Vec<f32> = (0..2048).map(|i| b[i % 128] + c[i]).collect();
    assert_eq!(read_npy_f32(&out.join("out0.npy")), expected);
}

#[test]
fn unusable_library_is_reported_with_its_name() {
    let dir = temp_dir("cli-bad");
    let bogus = dir.join("libbogus.so");
    std::fs::write(&bogus, "not a library").unwrap();
    let module = dir.join("m.hlo");
    std::fs::write(
        &module,
        "HloModule m\nENTRY e { ROOT c = f32[] constant(1) }\n",
    )
    .unwrap();
    let run = hlorun(&[
        "run".as_ref(),
        module.as_os_str(),
        "-p".as_ref(),
        "interpreter".as_ref(),
        "--custom-call-lib".as_ref(),
        bogus.as_os_str(),
    ]);
    let stderr = String::from_utf8_lossy(&run.stderr);
    assert_eq!(run.status.code(), Some(1), "stderr: {stderr}");
    assert!(stderr.contains("libbogus.so"), "stderr: {stderr}");
}
