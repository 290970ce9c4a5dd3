//! End-to-end tests of `hlorun run`, `compare` and `bench` on the default build's
//! platforms (the Interpreter is always there). Expected values come from JAX
//! (`examples/mlp/expected_out0.npy`, `tests/data/*/outN.npy`, made by XLA CPU)
//! or from mathematics, never from this project's own output.

use crate::scratch::Scratch;
use crate::spawn::{example, hlorun, hlorun_with, repo_root, stderr, stdout};
use platform_api::Literal;
use service::{compare_results, Tolerance};
use std::path::Path;
use std::process::Output;

fn data(path: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data")
        .join(path)
        .display()
        .to_string()
}

fn mlp_args() -> Vec<String> {
    ["x", "w1", "b1", "w2", "b2"]
        .iter()
        .map(|a| example(&format!("mlp/{a}.npy")))
        .collect()
}

fn assert_ok(o: &Output) {
    assert_eq!(o.status.code(), Some(0), "stderr: {}", stderr(o));
}

fn assert_fails_with(o: &Output, needles: &[&str]) {
    let err = stderr(o);
    assert_eq!(o.status.code(), Some(1), "want exit 1; stderr: {err}");
    assert!(!err.contains("panicked"), "a panic is a bug: {err}");
    assert_eq!(err.trim().lines().count(), 1, "want one error line: {err}");
    for needle in needles {
        assert!(err.contains(needle), "stderr lacks {needle:?}: {err}");
    }
}

/// A fresh directory for one test's files, removed when the test ends.
fn scratch_dir(test: &str) -> Scratch {
    Scratch::new("hlorun-run", test)
}

fn read_npy(path: impl AsRef<Path>) -> Literal {
    Literal::read_npy(path.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", path.as_ref().display()))
}

/// Asserts `got` matches `want` within f32 tolerances (transcendentals differ
/// from XLA CPU's by a few ULP).
fn assert_close(got: &Literal, want: &Literal) {
    let tol = Tolerance {
        rtol: 1e-5,
        atol: 1e-6,
    };
    for report in compare_results(got, want, tol).unwrap() {
        assert!(report.ok(), "{report}");
    }
}

#[test]
fn run_prints_the_result_as_literal_text() {
    let o = hlorun(&["run", &example("softmax.hlo")]);
    assert_ok(&o);
    let printed = platform_api::hlo::parser::parse_literal(stdout(&o).trim()).unwrap();
    // softmax([0, 1, 2, 3]) from its definition.
    let e: Vec<f64> = (0..4).map(|i| f64::from(i).exp()).collect();
    let sum: f64 = e.iter().sum();
    let want: Vec<f32> = e.iter().map(|v| (v / sum) as f32).collect();
    assert_close(&printed, &Literal::vector(&want));
}

#[test]
fn run_mlp_matches_jax() {
    let dir = scratch_dir("mlp");
    let out_dir = dir.display().to_string();
    let mut args = vec!["run".to_string(), example("mlp/mlp.hlo")];
    args.extend(mlp_args());
    args.extend(["--out".to_string(), out_dir]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = hlorun(&args);
    assert_ok(&o);
    assert_close(
        &read_npy(dir.join("out0.npy")),
        &read_npy(example("mlp/expected_out0.npy")),
    );
    assert!(!dir.join("out1.npy").exists());
}

#[test]
fn run_flattens_a_tuple_result_into_numbered_files() {
    let dir = scratch_dir("tuple");
    let out = dir.join("results");
    let o = hlorun(&[
        "run",
        &data("two_outputs/module.hlo"),
        &data("two_outputs/arg0.npy"),
        &data("two_outputs/arg1.npy"),
        "--out",
        &out.display().to_string(),
    ]);
    assert_ok(&o);
    for i in 0..2 {
        let name = format!("out{i}.npy");
        assert_close(
            &read_npy(out.join(&name)),
            &read_npy(data(&format!("two_outputs/{name}"))),
        );
    }
    // Without --out the tuple prints as one literal with both elements.
    let o = hlorun(&[
        "run",
        &data("two_outputs/module.hlo"),
        &data("two_outputs/arg0.npy"),
        &data("two_outputs/arg1.npy"),
    ]);
    assert_ok(&o);
    let printed = platform_api::hlo::parser::parse_literal(stdout(&o).trim()).unwrap();
    let want = Literal::tuple(vec![
        read_npy(data("two_outputs/out0.npy")),
        read_npy(data("two_outputs/out1.npy")),
    ]);
    assert_close(&printed, &want);
}

#[test]
fn run_reads_the_module_from_stdin_and_the_platform_from_the_environment() {
    let text = std::fs::read_to_string(example("softmax.hlo")).unwrap();
    let from_file = stdout(&hlorun(&["run", &example("softmax.hlo")]));
    for platform in ["interpreter", "INTERPRETER"] {
        let o = hlorun_with(&["run", "-"], &[("HLORUN_PLATFORM", platform)], Some(&text));
        assert_ok(&o);
        assert_eq!(stdout(&o), from_file);
    }
}

#[test]
fn run_profile_writes_a_chrome_trace() {
    let dir = scratch_dir("profile");
    let trace = dir.join("trace.json");
    let mut args = vec!["run".to_string(), example("mlp/mlp.hlo")];
    args.extend(mlp_args());
    args.extend(["--profile".to_string(), trace.display().to_string()]);
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = hlorun(&args);
    assert_ok(&o);
    let json: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let events: Vec<&serde_json::Value> = json["traceEvents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["ph"] == "X")
        .collect();
    let names: Vec<&str> = events.iter().filter_map(|e| e["name"].as_str()).collect();
    assert!(names.contains(&"execute jit_mlp"), "{names:?}");
    for e in &events {
        assert!(
            e["ts"].as_f64().is_some() && e["dur"].as_f64().is_some(),
            "{e}"
        );
        assert!(e["pid"].is_u64() && e["tid"].is_u64(), "{e}");
    }
}

/// A small program whose instructions carry JAX's metadata.
const WITH_METADATA: &str = r#"HloModule jit_f

ENTRY main {
  x = f32[64,64] parameter(0)
  y = f32[64,64] parameter(1)
  d = f32[64,64] dot(x, y), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(f)/dot_general" source_file="/src/model.py" source_line=12}
  e = f32[64,64] exponential(d), metadata={op_name="jit(f)/exp" source_file="/src/model.py" source_line=13}
  ROOT t = f32[64,64] tanh(e), metadata={op_name="jit(f)/tanh" source_file="/src/model.py" source_line=14}
}
"#;

#[test]
fn bench_profile_traces_warm_runs_with_op_names_and_a_table() {
    let dir = scratch_dir("bench-profile");
    let module = dir.join("m.hlo");
    std::fs::write(&module, WITH_METADATA).unwrap();
    let module = module.display().to_string();
    for platform in ["interpreter", "host"] {
        let trace = dir.join(format!("{platform}.json"));
        let trace_arg = trace.display().to_string();
        let o = hlorun(&[
            "bench",
            &module,
            "-p",
            platform,
            "--iters",
            "3",
            "--profile",
            &trace_arg,
            "--profile-runs",
            "2",
        ]);
        assert_ok(&o);
        let out = stdout(&o);
        assert!(out.contains("profile of 2 warm run(s)"), "{out}");
        // The table names the dot with where it came from.
        let dot_row = out
            .lines()
            .find(|l| l.contains("jit(f)/dot_general"))
            .unwrap_or_else(|| panic!("no row for the dot: {out}"));
        assert!(
            dot_row.contains("/src/model.py:12") && dot_row.contains("f32[64,64]"),
            "{out}"
        );
        let json: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
        let events = json["traceEvents"].as_array().unwrap();
        let executions = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["cat"] == "execute")
            .count();
        assert_eq!(executions, 2, "{platform}: only the profiled warm runs");
        let dots: Vec<&serde_json::Value> = events
            .iter()
            .filter(|e| e["ph"] == "X" && e["args"]["op"] == "dot")
            .collect();
        assert_eq!(dots.len(), 2, "{platform}: {events:?}");
        assert_eq!(dots[0]["args"]["source"], "/src/model.py:12");
        assert_eq!(dots[0]["args"]["shape"], "f32[64,64]");
        // Every row of the timeline has a readable name, not a number.
        for m in events.iter().filter(|e| e["name"] == "thread_name") {
            let name = m["args"]["name"].as_str().unwrap();
            assert!(!name.chars().all(|c| c.is_ascii_digit()), "{m}");
        }
    }
}

#[test]
fn run_rejects_bad_arguments_naming_the_file() {
    let dir = scratch_dir("badargs");
    let module = data("two_outputs/module.hlo");
    let arg0 = data("two_outputs/arg0.npy");
    // Too few.
    let o = hlorun(&["run", &module, &arg0]);
    assert_fails_with(&o, &["takes 2 argument(s)", "%y", "1 .npy file(s)"]);
    // Wrong shape.
    let wrong = dir.join("wrong.npy");
    Literal::vector(&[1.0f32; 4]).write_npy(&wrong).unwrap();
    let wrong = wrong.display().to_string();
    let o = hlorun(&["run", &module, &arg0, &wrong]);
    assert_fails_with(&o, &[&wrong, "f32[4]", "f32[2,3]", "parameter 1"]);
    // Not a .npy file at all.
    let junk = dir.join("junk.npy");
    std::fs::write(&junk, b"definitely not numpy").unwrap();
    let junk = junk.display().to_string();
    let o = hlorun(&["run", &module, &arg0, &junk]);
    assert_fails_with(&o, &[&junk]);
    // Missing.
    let o = hlorun(&["run", &module, &arg0, "missing.npy"]);
    assert_fails_with(&o, &["missing.npy"]);
}

#[test]
fn compare_reports_each_output() {
    let o = hlorun(&[
        "compare",
        &data("two_outputs/module.hlo"),
        &data("two_outputs/arg0.npy"),
        &data("two_outputs/arg1.npy"),
        "--platform",
        "interpreter",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    // The default is the scale rule, and the report says so.
    assert!(out.contains("rule: |got - want| <= 16 ULPs"), "{out}");
    for leaf in ["out0 f32[2,3]", "out1 f32[2,3]"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(leaf))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            line.contains("ULPs of the scale") && line.ends_with("ok"),
            "{line}"
        );
    }
    // --rtol/--atol switch to the tolerance rule against the reference platform.
    let o = hlorun(&[
        "compare",
        &data("two_outputs/module.hlo"),
        &data("two_outputs/arg0.npy"),
        &data("two_outputs/arg1.npy"),
        "--platform",
        "interpreter",
        "--rtol",
        "1e-4",
        "--atol",
        "1e-5",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    for leaf in ["out0 f32[2,3]", "out1 f32[2,3]"] {
        let line = out
            .lines()
            .find(|l| l.starts_with(leaf))
            .unwrap_or_else(|| panic!("{out}"));
        assert!(
            line.contains("max abs error")
                && line.contains("max rel error")
                && line.ends_with("ok"),
            "{line}"
        );
    }
    // No arguments: seeded random ones from the signature.
    let o = hlorun(&["compare", &example("mlp/mlp.hlo"), "--seed", "3"]);
    assert_ok(&o);
    assert!(stdout(&o).contains("out0 f32[4,3]"), "{}", stdout(&o));
    // Nonsense tolerances are refused.
    let o = hlorun(&["compare", &example("softmax.hlo"), "--rtol=-1"]);
    assert_fails_with(&o, &["--rtol"]);
}

/// `--expected` checks the platform's outputs against saved arrays; an array
/// with one element changed by 1% fails, naming that element and its scale.
#[test]
fn compare_checks_expected_arrays() {
    let dir = scratch_dir("compare-expected");
    let module = data("two_outputs/module.hlo");
    let (a0, a1) = (data("two_outputs/arg0.npy"), data("two_outputs/arg1.npy"));
    let (e0, e1) = (data("two_outputs/out0.npy"), data("two_outputs/out1.npy"));
    let o = hlorun(&[
        "compare",
        &module,
        &a0,
        &a1,
        "--platform",
        "host",
        "--expected",
        &e0,
        "--expected",
        &e1,
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("--expected arrays"), "{}", stdout(&o));
    let mut bad = Literal::read_npy(&e1).unwrap();
    let v = bad.get(4).unwrap().to_f64_lossy();
    bad.set(4, platform_api::Scalar::F32((v * 1.01) as f32))
        .unwrap();
    let bad_path = dir.join("out1_bad.npy");
    bad.write_npy(&bad_path).unwrap();
    let bad_path = bad_path.to_str().unwrap().to_string();
    let o = hlorun(&[
        "compare",
        &module,
        &a0,
        &a1,
        "--platform",
        "host",
        "--expected",
        &e0,
        "--expected",
        &bad_path,
    ]);
    assert_fails_with(&o, &["differ from the --expected arrays"]);
    let out = stdout(&o);
    assert!(
        out.contains("out1 f32[2,3]")
            && out.contains("MISMATCH in 1 element")
            && out.contains("at [1, 1]")
            && out.contains("scale"),
        "{out}"
    );
    // One file per output.
    let o = hlorun(&["compare", &module, &a0, &a1, "--expected", &e0]);
    assert_fails_with(&o, &["2 output(s)", "1 --expected file(s)"]);
}

#[test]
fn bench_json_is_one_line_with_the_documented_keys() {
    let module = data("two_outputs/module.hlo");
    let o = hlorun(&[
        "bench",
        &module,
        &data("two_outputs/arg0.npy"),
        &data("two_outputs/arg1.npy"),
        "--iters",
        "3",
        "--json",
    ]);
    assert_ok(&o);
    let out = stdout(&o);
    assert_eq!(out.trim().lines().count(), 1, "{out}");
    let line = out.trim();
    let keys = [
        "platform",
        "compile_ms",
        "execute_ms_median",
        "execute_ms_min",
        "iters",
        "peak_bytes",
    ];
    let mut last = 0;
    for key in keys {
        let at = line
            .find(&format!("\"{key}\""))
            .unwrap_or_else(|| panic!("no {key}: {line}"));
        assert!(at >= last, "keys out of order: {line}");
        last = at;
    }
    let v: serde_json::Value = serde_json::from_str(line).unwrap();
    assert_eq!(v["iters"], 3);
    // The default platform is the highest-priority available one among those
    // `service` links (the same registry the binary consults).
    let default = platform_api::registry::default_platform_name().unwrap();
    assert_eq!(v["platform"], default);
    assert!(v["compile_ms"].as_f64().unwrap() > 0.0);
    assert!(v["execute_ms_min"].as_f64().unwrap() <= v["execute_ms_median"].as_f64().unwrap());
    // Two f32[2,3] inputs live on the device during the runs.
    assert!(v["peak_bytes"].as_u64().unwrap() >= 48, "{line}");
}

#[test]
fn bench_without_arguments_uses_the_spec_beside_the_module() {
    // examples/mlp/mlp.json describes the arguments.
    let o = hlorun(&[
        "bench",
        &example("mlp/mlp.hlo"),
        "--iters",
        "2",
        "--seed",
        "5",
    ]);
    assert_ok(&o);
    assert!(stdout(&o).contains("over 2 iteration(s)"), "{}", stdout(&o));
    // A spec that contradicts the module is an error naming the spec file.
    let dir = scratch_dir("spec");
    let module = dir.join("m.hlo");
    std::fs::copy(
        example("softmax.hlo").replace("softmax.hlo", "mlp/mlp.hlo"),
        &module,
    )
    .unwrap();
    std::fs::write(
        dir.join("m.json"),
        r#"{"args":[{"dtype":"float32","shape":[9,9],"lo":-1,"hi":1}]}"#,
    )
    .unwrap();
    let o = hlorun(&["bench", &module.display().to_string(), "--iters", "1"]);
    assert_fails_with(&o, &["m.json", "1 argument(s)", "takes 5"]);
}

#[test]
fn run_replicates_a_module_with_collectives() {
    // replica_count=2 in the header: each replica adds its id, then all-reduce sums.
    let module = data("all_reduce/module.hlo");
    let arg = data("all_reduce/arg0.npy");
    let x = read_npy(&arg);
    let want: Vec<f32> = x
        .data::<f32>()
        .unwrap()
        .iter()
        .map(|v| 2.0 * v + 1.0)
        .collect();
    let o = hlorun(&["run", &module, &arg]);
    assert_ok(&o);
    let out = stdout(&o);
    for replica in 0..2 {
        let prefix = format!("replica {replica}: ");
        let line = out
            .lines()
            .find(|l| l.starts_with(&prefix))
            .unwrap_or_else(|| panic!("{out}"));
        let got = platform_api::hlo::parser::parse_literal(&line[prefix.len()..]).unwrap();
        assert_eq!(got.data::<f32>().unwrap(), want.as_slice());
    }
    // Three replicas do not fit the module's replica groups: a clean error.
    let o = hlorun(&["run", &module, &arg, "--replicas", "3"]);
    assert_fails_with(&o, &["replica 2", "%r"]);
}

/// `--debug-option KEY=VALUE` reaches the compile options: XLA CPU's bf16
/// softmax (`tests/bf16/softmax_bf16`) matches bit for bit by default and not
/// with `excess_precision=off`; malformed or unknown values are one-line errors.
#[test]
fn debug_options_reach_the_compiler() {
    let case = repo_root().join("tests/bf16/softmax_bf16");
    let module = case.join("module.hlo").display().to_string();
    let arg = case.join("arg0.npy").display().to_string();
    let want = std::fs::read(case.join("out0.npy")).unwrap();
    let data = |bytes: &[u8]| bytes[bytes.len() - 4096 * 2..].to_vec();
    for platform in ["interpreter", "host"] {
        let dir = scratch_dir(&format!("debug-option-{platform}"));
        let (on, off) = (dir.join("on"), dir.join("off"));
        let on_s = on.display().to_string();
        let off_s = off.display().to_string();
        assert_ok(&hlorun(&[
            "run", "-p", platform, "--out", &on_s, &module, &arg,
        ]));
        assert_ok(&hlorun(&[
            "run",
            "-p",
            platform,
            "--debug-option",
            "excess_precision=off",
            "--out",
            &off_s,
            &module,
            &arg,
        ]));
        let got_on = std::fs::read(on.join("out0.npy")).unwrap();
        let got_off = std::fs::read(off.join("out0.npy")).unwrap();
        assert_eq!(data(&got_on), data(&want), "{platform}: default options");
        assert_ne!(
            data(&got_off),
            data(&want),
            "{platform}: excess_precision=off"
        );
    }
    assert_fails_with(
        &hlorun(&["run", "--debug-option", "bogus", &module, &arg]),
        &["--debug-option", "KEY=VALUE"],
    );
    assert_fails_with(
        &hlorun(&[
            "run",
            "--debug-option",
            "excess_precision=sometimes",
            &module,
            &arg,
        ]),
        &["excess_precision"],
    );
}

#[test]
fn large_results_print_summarised_unless_full() {
    let iota = "HloModule big\n\nENTRY main {\n  ROOT i = s32[40,50] iota(), iota_dimension=1\n}\n";
    let o = hlorun_with(&["run", "-"], &[], Some(iota));
    assert_ok(&o);
    let text = stdout(&o);
    assert!(
        text.starts_with("s32[40,50] {\n  {0, 1, 2, ..., 47, 48, 49},"),
        "{text}"
    );
    assert_eq!(text.lines().count(), 9, "{text}");
    let o = hlorun_with(&["run", "-", "--full"], &[], Some(iota));
    assert_ok(&o);
    let text = stdout(&o);
    assert_eq!(text.lines().count(), 1);
    let values = text["s32[40,50] ".len()..]
        .split(|c: char| !c.is_ascii_digit())
        .filter(|t| !t.is_empty())
        .count();
    assert_eq!(values, 40 * 50);
}

#[test]
fn fp_contract_is_an_option_of_its_own() {
    // x*y + z with values whose product is inexact: one FMA rounding or two.
    let module = "HloModule fma\n\nENTRY main {\n  x = f32[] constant(1.00000012)\n  \
                  y = f32[] constant(1.00000012)\n  z = f32[] constant(-1.00000024)\n  \
                  m = f32[] multiply(x, y)\n  ROOT r = f32[] add(m, z)\n}\n";
    let fused = hlorun_with(&["run", "-", "-p", "interpreter"], &[], Some(module));
    let separate = hlorun_with(
        &["run", "-", "-p", "interpreter", "--fp-contract", "off"],
        &[],
        Some(module),
    );
    assert_ok(&fused);
    assert_ok(&separate);
    // (1 + 2^-23)^2 - (1 + 2^-22) is 2^-46 exactly; rounded separately, 0.
    let x = 1.0f32 + f32::EPSILON;
    let exact = (x as f64) * (x as f64) - (1.0f64 + 2.0 * f32::EPSILON as f64);
    let value = |o: &Output| -> f32 {
        stdout(o)
            .trim()
            .trim_start_matches("f32[] ")
            .parse()
            .unwrap()
    };
    assert_eq!(value(&fused), exact as f32);
    assert_ne!(exact as f32, 0.0);
    assert_eq!(stdout(&separate).trim(), "f32[] 0");
    let o = hlorun_with(&["run", "-", "--fp-contract", "maybe"], &[], Some(module));
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn dump_writes_each_pass_and_the_host_plan() {
    let dir = scratch_dir("dump");
    let module = dir.join("m.hlo");
    std::fs::write(&module, WITH_METADATA).unwrap();
    let module = module.display().to_string();
    let out = dir.join("dumps");
    let out_arg = out.display().to_string();
    let o = hlorun(&[
        "bench", &module, "-p", "host", "--iters", "1", "--dump", &out_arg,
    ]);
    assert_ok(&o);
    let mut names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names[0], "jit_f.0000.input.hlo", "{names:?}");
    let fusion = names
        .iter()
        .find(|n| n.ends_with(".host-fusion.hlo"))
        .unwrap_or_else(|| panic!("{names:?}"));
    let fused = std::fs::read_to_string(out.join(fusion)).unwrap();
    assert!(fused.contains("fusion("), "{fused}");
    let plan = names
        .iter()
        .find(|n| n.contains(".host-plan.main"))
        .unwrap_or_else(|| panic!("{names:?}"));
    let plan = std::fs::read_to_string(out.join(plan)).unwrap();
    assert!(plan.contains("fuses: exponential, tanh"), "{plan}");
    assert!(plan.contains("allocations:"), "{plan}");
    // Every dumped module parses again.
    for n in names.iter().filter(|n| n.ends_with(".hlo")) {
        let text = std::fs::read_to_string(out.join(n)).unwrap();
        platform_api::HloModule::parse(&text).unwrap_or_else(|e| panic!("{n}: {e}"));
    }
    // The Interpreter dumps what it runs.
    let out2 = dir.join("dumps2");
    let out2_arg = out2.display().to_string();
    let o = hlorun(&[
        "bench",
        &module,
        "-p",
        "interpreter",
        "--iters",
        "1",
        "--dump",
        &out2_arg,
    ]);
    assert_ok(&o);
    assert!(out2.join("jit_f.0000.input.hlo").is_file());
    // A dump directory that cannot be made is an error, not a silent skip.
    let blocked = dir.join("file");
    std::fs::write(&blocked, "x").unwrap();
    let bad = blocked.join("sub").display().to_string();
    let o = hlorun(&[
        "bench", &module, "-p", "host", "--iters", "1", "--dump", &bad,
    ]);
    assert_fails_with(&o, &["dump directory"]);
}

#[test]
fn graph_draws_what_the_host_fused_as_clusters() {
    let dir = scratch_dir("graph");
    let module = example("mlp/mlp.hlo");
    // As written: no fusion.
    let o = hlorun(&["graph", &module]);
    assert_ok(&o);
    let svg = stdout(&o);
    assert!(
        svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"),
        "{svg}"
    );
    assert_eq!(svg.matches("class=\"cluster\"").count(), 0);
    // After the Host's passes: its fusions are clusters.
    let out = dir.join("mlp.svg");
    let out_arg = out.display().to_string();
    let o = hlorun(&["graph", &module, "-p", "host", "-o", &out_arg]);
    assert_ok(&o);
    let svg = std::fs::read_to_string(&out).unwrap();
    assert!(svg.matches("class=\"cluster\"").count() >= 1, "{svg}");
    assert!(svg.contains(">dot<"), "{svg}");
    for format in ["html", "dot"] {
        let o = hlorun(&["graph", &module, "-p", "host", "--format", format]);
        assert_ok(&o);
        let text = stdout(&o);
        match format {
            "html" => assert!(text.starts_with("<!DOCTYPE html>") && text.contains("<svg")),
            _ => assert!(text.starts_with("digraph") && text.contains("subgraph cluster_")),
        }
    }
    let o = hlorun(&["graph", &module, "--computation", "nope"]);
    assert_fails_with(&o, &["no computation \"nope\""]);
}

fn sharded(case: &str, file: &str) -> String {
    repo_root()
        .join("tests/sharded")
        .join(case)
        .join(file)
        .display()
        .to_string()
}

/// A JAX program partitioned over 4 devices runs from global arrays: each
/// argument cut by its parameter's sharding, the results assembled by the
/// result shardings JAX reported (tests/sharded/*/case.json), equal to JAX's.
#[test]
fn run_partitioned_program_on_global_arrays() {
    let dir = std::env::temp_dir().join(format!("hlorun-sharded-{}", std::process::id()));
    let out = dir.display().to_string();
    let (x, w) = (
        sharded("mesh_2d", "arg0.npy"),
        sharded("mesh_2d", "arg1.npy"),
    );
    let module = sharded("mesh_2d", "optimized.hlo");
    for platform in ["interpreter", "host"] {
        let o = hlorun(&[
            "run",
            "-p",
            platform,
            &module,
            &x,
            &w,
            "--out-sharding",
            "{devices=[2,2]<=[4]}",
            "--out-sharding",
            "{devices=[2,2]<=[2,2]T(1,0) last_tile_dim_replicate}",
            "--out",
            &out,
        ]);
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        for i in 0..2 {
            let got = Literal::read_npy(dir.join(format!("out{i}.npy"))).unwrap();
            let want = Literal::read_npy(sharded("mesh_2d", &format!("out{i}.npy"))).unwrap();
            let report = compare_results(&got, &want, Tolerance::default()).unwrap();
            assert!(
                report.iter().all(|r| r.ok()),
                "{platform} out{i}: {report:?}"
            );
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    // Without the result shardings, results that differ between partitions
    // are an error asking for them, not a wrong global array.
    let o = hlorun(&["run", &module, &x, &w]);
    assert!(!o.status.success());
    assert!(
        String::from_utf8_lossy(&o.stderr).contains("--out-sharding"),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

/// `--per-device` takes each device's shard: the ring permute moves device
/// i's block to device i+1 (then adds 1), so device 1 returns device 0's
/// argument plus one — JAX's global result's second block.
#[test]
fn run_partitioned_program_per_device() {
    let x = Literal::read_npy(sharded("permute_ring", "arg0.npy")).unwrap();
    let want = Literal::read_npy(sharded("permute_ring", "out0.npy")).unwrap();
    let dir = std::env::temp_dir().join(format!("hlorun-per-device-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Four blocks of 2 rows of the [8,3] argument.
    let data = x.data::<f32>().unwrap();
    let mut paths = Vec::new();
    for d in 0..4 {
        let block = Literal::from_slice(&[2, 3], &data[d * 6..(d + 1) * 6]).unwrap();
        let p = dir.join(format!("x{d}.npy"));
        block.write_npy(&p).unwrap();
        paths.push(p.display().to_string());
    }
    let out = dir.join("out").display().to_string();
    let module = sharded("permute_ring", "optimized.hlo");
    let mut args = vec!["run", &module, "--per-device", "--out", &out];
    args.extend(paths.iter().map(String::as_str));
    let o = hlorun(&args);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let got = Literal::read_npy(dir.join("out/device1/out0.npy")).unwrap();
    assert_eq!(
        got.data::<f32>().unwrap(),
        &want.data::<f32>().unwrap()[6..12]
    );
    let _ = std::fs::remove_dir_all(&dir);
}
