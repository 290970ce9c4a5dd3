//! End-to-end tests of the `hlorun` binary: each spawns the built program and
//! checks its exit status, standard output and standard error.
//!
//! Failures must exit 1 with one `hlorun: error: ...` line naming what was
//! wrong; exit 101 (a panic) is always a bug.

// Links the backends the service links, so this process sees their registrations.
use crate::scratch::Scratch;
use crate::spawn::{example, hlorun, hlorun_with, stderr, stdout};
use service as _;
use std::process::Output;

/// Asserts a clean failure: exit 1, one error line on stderr containing every
/// one of `needles`.
fn assert_fails_with(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "want exit 1; stderr: {err}");
    assert!(!err.contains("panicked"), "a panic is a bug: {err}");
    let lines: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
    assert_eq!(lines.len(), 1, "want one error line, got: {err}");
    assert!(lines[0].starts_with("hlorun: "), "{err}");
    for needle in needles {
        assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    }
}

/// A fresh directory for one test's files, removed when the test ends.
fn scratch_dir(test: &str) -> Scratch {
    Scratch::new("hlorun-test", test)
}

#[test]
fn platforms_lists_every_registered_platform() {
    let o = hlorun(&["platforms"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap_or_default();
    for column in ["NAME", "ALIASES", "PRIORITY", "DEVICES", "STATUS"] {
        assert!(header.contains(column), "{out}");
    }
    // The same registry, seen from this process (which links the same backends).
    let listings = platform_api::registry::list_platforms().unwrap();
    let names: Vec<&str> = listings.iter().map(|l| l.name).collect();
    assert!(names.contains(&"Interpreter"), "{names:?}");
    for listing in listings {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(listing.name))
            .unwrap_or_else(|| panic!("{} missing from:\n{out}", listing.name));
        assert!(line.contains(&listing.priority.to_string()), "{line}");
        let available = line.contains("available") && !line.contains("unavailable");
        assert_eq!(available, listing.availability.is_available(), "{line}");
        assert_eq!(
            line.contains("registration problems"),
            !listing.problems.is_empty(),
            "{line}"
        );
    }
    // Every problem in the registrations is printed (CUDA, for one, registers
    // no compiler yet).
    for problem in platform_api::registry::problems() {
        assert!(out.contains(&problem), "{problem} missing from:\n{out}");
    }
}

#[test]
fn parse_prints_canonical_text() {
    let path = example("mlp/mlp.hlo");
    let o = hlorun(&["parse", &path]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = std::fs::read_to_string(&path).unwrap();
    let canonical = platform_api::HloModule::parse(&text).unwrap().to_text();
    assert_eq!(stdout(&o).trim_end(), canonical.trim_end());
    // Canonical text is a fixed point, also when read from standard input.
    let again = hlorun_with(&["parse", "-"], &[], Some(&stdout(&o)));
    assert_eq!(again.status.code(), Some(0), "{}", stderr(&again));
    assert_eq!(stdout(&again), stdout(&o));
}

#[test]
fn malformed_hlo_is_a_located_error() {
    let dir = scratch_dir("malformed");
    let path = dir.join("bad.hlo");
    std::fs::write(&path, "HloModule bad\n\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[4] frobnicate(x)\n}\n")
        .unwrap();
    let path = path.display().to_string();
    let o = hlorun(&["parse", &path]);
    // The file, then the line (5) and column of the unknown opcode.
    assert_fails_with(&o, &[&path, "5:"]);
    let o = hlorun(&["run", &path]);
    assert_fails_with(&o, &[&path, "5:"]);
    let o = hlorun_with(
        &["parse", "-"],
        &[],
        Some("HloModule m\nENTRY e {\n ROOT x = f32[ parameter(0)\n}\n"),
    );
    assert_fails_with(&o, &["<stdin>", "3:"]);
}

#[test]
fn missing_module_file_is_named() {
    let o = hlorun(&["run", "no/such/module.hlo"]);
    assert_fails_with(&o, &["no/such/module.hlo", "No such file"]);
    let o = hlorun(&["parse", "no/such/module.hlo"]);
    assert_fails_with(&o, &["no/such/module.hlo"]);
}

#[test]
fn unknown_platform_is_named_with_what_is_registered() {
    let o = hlorun(&["run", &example("softmax.hlo"), "--platform", "tpu"]);
    assert_fails_with(&o, &["no platform named \"tpu\"", "registered:", "CUDA"]);
    let o = hlorun_with(
        &["run", &example("softmax.hlo")],
        &[("HLORUN_PLATFORM", "quantum")],
        None,
    );
    assert_fails_with(&o, &["no platform named \"quantum\""]);
    let o = hlorun(&["bench", &example("softmax.hlo"), "--platform", "tpu"]);
    assert_fails_with(&o, &["no platform named \"tpu\""]);
}

#[test]
fn usage_errors_exit_1_and_help_exits_0() {
    let o = hlorun(&["frobnicate"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = hlorun(&["bench", "x.hlo", "--iters", "3", "--seconds", "1"]);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let o = hlorun(&["--help"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("platforms"));
}

#[test]
fn parse_verify_names_the_bad_instruction() {
    let dir = scratch_dir("verify");
    let path = dir.join("shapes.hlo");
    std::fs::write(
        &path,
        "HloModule shapes\n\nENTRY main {\n  x = f32[4] parameter(0)\n  ROOT y = f32[5] negate(x)\n}\n",
    )
    .unwrap();
    let path = path.display().to_string();
    // Parsing alone accepts it (shapes are the verifier's business)...
    assert_eq!(hlorun(&["parse", &path]).status.code(), Some(0));
    // ...verification names the instruction and both shapes.
    let o = hlorun(&["parse", "--verify", &path]);
    assert_fails_with(&o, &[&path, "%y", "f32[5]", "f32[4]"]);
}

#[test]
fn impossible_replica_counts_and_bench_budgets_are_errors() {
    let softmax = example("softmax.hlo");
    for replicas in ["18446744073709551615", "100000"] {
        let o = hlorun(&["run", &softmax, "--replicas", replicas]);
        assert_fails_with(&o, &["replica(s)", "1024"]);
    }
    for seconds in ["1e300", "inf", "-1"] {
        let o = hlorun(&["bench", &softmax, &format!("--seconds={seconds}")]);
        assert_fails_with(&o, &["--seconds"]);
    }
}

#[test]
fn a_npy_file_given_as_the_module_says_so() {
    let dir = scratch_dir("npy-first");
    let npy = dir.join("x.npy");
    platform_api::Literal::vector(&[1.0f32, 2.0])
        .write_npy(&npy)
        .unwrap();
    let o = hlorun(&["run", npy.to_str().unwrap(), &example("softmax.hlo")]);
    assert_fails_with(&o, &[".npy array", "module first"]);
}

#[test]
fn arguments_too_large_to_allocate_are_an_error() {
    let dir = scratch_dir("huge-param");
    let hlo = dir.join("huge.hlo");
    std::fs::write(
        &hlo,
        "HloModule huge\nENTRY e {\n  p = f32[100000000000] parameter(0)\n  \
         ROOT r = f32[100000000000] negate(p)\n}\n",
    )
    .unwrap();
    for command in ["compare", "bench"] {
        let o = hlorun(&[command, hlo.to_str().unwrap()]);
        assert_fails_with(&o, &["allocate"]);
    }
}

#[test]
fn an_empty_fft_of_any_length_runs_without_planning_it() {
    // XLA lets an empty complex transform name any fft_length; planning a
    // transform of 2^32 points (tables of tens of GB) would abort the run.
    let dir = scratch_dir("empty-fft");
    let hlo = dir.join("fft.hlo");
    std::fs::write(
        &hlo,
        "HloModule fft\nENTRY e {\n  a = c64[1,0] parameter(0)\n  \
         f = c64[1,0] fft(a), fft_type=FFT, fft_length={4294967296}\n  \
         b = f32[0,4294967296] parameter(1)\n  \
         r = c64[0,2147483649] fft(b), fft_type=RFFT, fft_length={4294967296}\n  \
         ROOT t = (c64[1,0], c64[0,2147483649]) tuple(f, r)\n}\n",
    )
    .unwrap();
    for platform in ["host", "interpreter"] {
        let o = hlorun(&[
            "bench",
            hlo.to_str().unwrap(),
            "-p",
            platform,
            "--iters",
            "1",
        ]);
        assert!(
            o.status.success(),
            "{platform}: {:?}\n{}",
            o.status,
            stderr(&o)
        );
    }
}

#[test]
fn intermediates_too_large_for_the_shadow_are_an_error() {
    let dir = scratch_dir("huge-intermediate");
    // The Host reads two elements of the broadcast and never holds it (a
    // reduce over it would make the Host add 1e11 numbers first, minutes in a
    // debug build); the f64 shadow would hold it, and must say so instead of
    // aborting.
    let hlo = dir.join("huge.hlo");
    std::fs::write(
        &hlo,
        "HloModule huge\nENTRY e {\n  p = f32[] parameter(0)\n  \
         big = f32[100000000000] broadcast(p), dimensions={}\n  \
         ROOT s = f32[2] slice(big), slice={[0:2]}\n}\n",
    )
    .unwrap();
    let o = hlorun(&["compare", hlo.to_str().unwrap(), "--platform", "host"]);
    assert_fails_with(&o, &["%big (broadcast)", "more than can be allocated"]);
    // A transpose of such an array: whichever side runs out first says so.
    let hlo = dir.join("transpose.hlo");
    std::fs::write(
        &hlo,
        "HloModule huge\nadd {\n  a = f32[] parameter(0)\n  b = f32[] parameter(1)\n  \
         ROOT s = f32[] add(a, b)\n}\nENTRY e {\n  p = f32[1000] parameter(0)\n  \
         big = f32[1000,100000000] broadcast(p), dimensions={0}\n  \
         t = f32[100000000,1000] transpose(big), dimensions={1,0}\n  z = f32[] constant(0)\n  \
         ROOT r = f32[] reduce(t, z), dimensions={0,1}, to_apply=add\n}\n",
    )
    .unwrap();
    let o = hlorun(&["compare", hlo.to_str().unwrap(), "--platform", "host"]);
    assert_fails_with(&o, &["allocat"]);
}

#[test]
fn hostile_names_and_headers_give_one_short_error_line() {
    let dir = scratch_dir("hostile-messages");
    // A custom-call target with line breaks, echoed in "no such target".
    let hlo = dir.join("target.hlo");
    std::fs::write(
        &hlo,
        format!(
            "HloModule m\nENTRY e {{\n  p = f32[] parameter(0)\n  ROOT c = f32[] custom-call(p), \
             custom_call_target=\"a\\nb\\nc{}\"\n}}\n",
            "x".repeat(5000)
        ),
    )
    .unwrap();
    let o = hlorun(&["compare", hlo.to_str().unwrap()]);
    assert_fails_with(&o, &["a\\nb\\nc", "characters ..."]);
    assert!(stderr(&o).len() < 2500, "{}", stderr(&o).len());
    // A .npy header nesting 30000 deep: refused, and not echoed whole.
    let module = dir.join("neg.hlo");
    std::fs::write(
        &module,
        "HloModule n\nENTRY e {\n  p = f32[] parameter(0)\n  ROOT r = f32[] negate(p)\n}\n",
    )
    .unwrap();
    let dict = format!(
        "{{'descr': '<f4', 'fortran_order': False, 'shape': {}{}, }}",
        "(".repeat(30000),
        ")".repeat(30000)
    );
    let mut header = dict.into_bytes();
    while (12 + header.len() + 1) % 64 != 0 {
        header.push(b' ');
    }
    header.push(b'\n');
    let mut npy = b"\x93NUMPY\x02\x00".to_vec();
    npy.extend_from_slice(&(header.len() as u32).to_le_bytes());
    npy.extend_from_slice(&header);
    let arg = dir.join("deep.npy");
    std::fs::write(&arg, npy).unwrap();
    let o = hlorun(&["run", module.to_str().unwrap(), arg.to_str().unwrap()]);
    assert_fails_with(&o, &["npy header", "bytes)"]);
    assert!(stderr(&o).len() < 1000, "{}", stderr(&o).len());
}
