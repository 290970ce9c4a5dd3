//! `service::conformance` and `hlorun conformance`.
//!
//! The library tests run a small corpus written here into a temporary folder
//! (every expected output computed here, independently of any backend) on the
//! service's test platform, which implements only a few ops, and on the
//! Interpreter: each status is produced by a case made to produce it, and the
//! gaps registered below for the test platform apply to it alone. The command
//! line tests copy real cases of the repository's corpus out of the repository
//! (a corpus from anywhere must work) and check the table, the JSON lines and
//! the exit status.

mod common;

use common::NAME;
use platform_api::registry::ConformanceGap;
use platform_api::{Code, Literal};
use service::conformance::{default_corpus, run_corpus, Form, Report, Status};
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

platform_api::inventory::submit! {
    ConformanceGap { platform: "service-test", case: "negate_case", form: None, reason: "no negate yet" }
}
platform_api::inventory::submit! {
    ConformanceGap { platform: NAME, case: "add_mul", form: Some("module"), reason: "stale gap" }
}
platform_api::inventory::submit! {
    ConformanceGap { platform: NAME, case: "no_such_case", form: None, reason: "misspelt" }
}

fn temp_dir(test: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("conformance-{}-{test}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Writes one case folder: the same program as both forms.
fn write_case(corpus: &Path, name: &str, hlo: &str, args: &[&[f32]], outputs: &[Vec<f32>]) {
    let dir = corpus.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("module.hlo"), hlo).unwrap();
    std::fs::write(dir.join("optimized.hlo"), hlo).unwrap();
    for (i, a) in args.iter().enumerate() {
        Literal::vector(a)
            .write_npy(dir.join(format!("arg{i}.npy")))
            .unwrap();
    }
    for (i, o) in outputs.iter().enumerate() {
        Literal::vector(o)
            .write_npy(dir.join(format!("out{i}.npy")))
            .unwrap();
    }
    let declared = vec![serde_json::json!({"dtype": "float32"}); outputs.len()];
    let json = serde_json::json!({"rtol": 1e-5, "atol": 1e-6, "outputs": declared});
    std::fs::write(dir.join("case.json"), json.to_string()).unwrap();
}

const X: [f32; 4] = [1.0, -2.0, 3.5, 0.25];
const Y: [f32; 4] = [0.5, 4.0, -1.0, 2.0];

fn binary(name: &str, op: &str) -> String {
    format!(
        "HloModule {name}\n\nENTRY main {{\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  ROOT r = f32[4] {op}(x, y)\n}}\n"
    )
}

fn unary(name: &str, op: &str) -> String {
    format!(
        "HloModule {name}\n\nENTRY main {{\n  x = f32[4] parameter(0)\n  ROOT r = f32[4] {op}(x)\n}}\n"
    )
}

fn small_corpus(test: &str) -> PathBuf {
    let corpus = temp_dir(test);
    let add_mul = "HloModule add_mul\n\nENTRY main {\n  x = f32[4] parameter(0)\n  y = f32[4] parameter(1)\n  s = f32[4] add(x, y)\n  ROOT p = f32[4] multiply(s, y)\n}\n";
    let want: Vec<f32> = X.iter().zip(&Y).map(|(x, y)| (x + y) * y).collect();
    write_case(&corpus, "add_mul", add_mul, &[&X, &Y], &[want]);
    let negated: Vec<f32> = X.iter().map(|x| -x).collect();
    write_case(
        &corpus,
        "negate_case",
        &unary("n", "negate"),
        &[&X],
        &[negated],
    );
    let exp: Vec<f32> = X.iter().map(|x| x.exp()).collect();
    write_case(
        &corpus,
        "exp_case",
        &unary("e", "exponential"),
        &[&X],
        &[exp],
    );
    let mut off: Vec<f32> = X.iter().zip(&Y).map(|(x, y)| x + y).collect();
    off[2] += 1.0;
    write_case(
        &corpus,
        "wrong_want",
        &binary("w", "add"),
        &[&X, &Y],
        &[off],
    );
    write_case(
        &corpus,
        "bad_text",
        "HloModule broken\nENTRY main {\n  x = f32[4] nonsense(\n",
        &[&X],
        &[X.to_vec()],
    );
    // A case whose case.json lacks the tolerances: an error status, not an abort.
    write_case(
        &corpus,
        "no_tolerance",
        &unary("c", "negate"),
        &[&X],
        &[X.to_vec()],
    );
    std::fs::write(corpus.join("no_tolerance/case.json"), "{\"outputs\": [{}]}").unwrap();
    corpus
}

fn status<'a>(report: &'a Report, case: &str, form: Form) -> &'a Status {
    &report
        .results
        .iter()
        .find(|r| r.case == case && r.form == form)
        .unwrap_or_else(|| panic!("no result for {case} {form}"))
        .status
}

#[test]
fn every_status_on_a_platform_with_few_ops_and_its_own_gaps() {
    let corpus = small_corpus("statuses");
    let report = run_corpus("SERVICE-TEST", &[corpus]).unwrap();
    assert_eq!(report.platform, NAME);
    assert_eq!(report.results.len(), 12);
    assert!(
        matches!(status(&report, "add_mul", Form::Module), Status::GapNowPasses { reason } if reason == "stale gap")
    );
    assert_eq!(status(&report, "add_mul", Form::Optimized), &Status::Pass);
    for form in Form::ALL {
        match status(&report, "exp_case", form) {
            Status::Unsupported { ops, .. } => assert_eq!(ops, &["exponential"]),
            other => panic!("exp_case {form}: {other:?}"),
        }
        match status(&report, "negate_case", form) {
            Status::KnownGap { reason, observed } => {
                assert_eq!(reason, "no negate yet");
                assert!(
                    observed.contains("unsupported") && observed.contains("negate"),
                    "{observed}"
                );
            }
            other => panic!("negate_case {form}: {other:?}"),
        }
        match status(&report, "wrong_want", form) {
            Status::Wrong {
                output,
                element,
                got,
                want,
                mismatches,
                judged,
            } => {
                assert_eq!((*output, *element, *mismatches), (0, Some(2), 1));
                assert!(judged.contains("ULPs at the error scale"), "{judged}");
                assert_eq!(got.parse::<f32>().unwrap(), X[2] + Y[2]);
                assert_eq!(want.parse::<f32>().unwrap(), X[2] + Y[2] + 1.0);
            }
            other => panic!("wrong_want {form}: {other:?}"),
        }
        match status(&report, "bad_text", form) {
            Status::Error { code, .. } => assert_eq!(*code, Code::InvalidArgument),
            other => panic!("bad_text {form}: {other:?}"),
        }
        match status(&report, "no_tolerance", form) {
            Status::Error { message, .. } => assert!(message.contains("rtol"), "{message}"),
            other => panic!("no_tolerance {form}: {other:?}"),
        }
    }
    assert!(!report.ok());
    assert_eq!(report.count("known-gap"), 2);
    assert_eq!(report.unmatched_gaps, ["no_such_case (both forms)"]);
    let summary = report.summary();
    assert!(
        summary.contains("1 pass") && summary.contains("1 gap-now-passes"),
        "{summary}"
    );
}

#[test]
fn gaps_of_one_platform_do_not_apply_to_another() {
    let corpus = small_corpus("interpreter");
    let report = run_corpus("interpreter", &[corpus]).unwrap();
    assert_eq!(report.platform, "Interpreter");
    for case in ["add_mul", "negate_case", "exp_case"] {
        for form in Form::ALL {
            assert_eq!(status(&report, case, form), &Status::Pass, "{case} {form}");
        }
    }
    // The Interpreter's own gaps (for cases of tests/op_matrix) match nothing
    // here; the test platform's (`no_such_case`) must not show up at all.
    let own: Vec<String> = platform_api::registry::conformance_gaps("Interpreter")
        .iter()
        .map(|g| format!("{} ({})", g.case, g.form.unwrap_or("both forms")))
        .collect();
    assert!(
        report.unmatched_gaps.iter().all(|g| own.contains(g)),
        "{:?}",
        report.unmatched_gaps
    );
    assert!(matches!(
        status(&report, "wrong_want", Form::Module),
        Status::Wrong { .. }
    ));
}

#[test]
fn bad_corpus_folders_and_platforms_are_errors() {
    let empty = temp_dir("empty");
    let err = run_corpus("interpreter", std::slice::from_ref(&empty)).unwrap_err();
    assert!(err.message().contains("holds no case"), "{err}");
    let missing = empty.join("missing");
    let err = run_corpus("interpreter", &[missing]).unwrap_err();
    assert!(err.message().contains("missing"), "{err}");
    let err = run_corpus("tpu", &[small_corpus("tpu")]).unwrap_err();
    assert_eq!(err.code(), Code::NotFound, "{err}");
}

// ---------------------------------------------------------------------------
// The command line

fn hlorun(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_hlorun"))
        .args(args)
        .env_remove("HLORUN_PLATFORM")
        .env_remove("RUST_LOG")
        .output()
        .expect("spawn hlorun")
}

/// Copies cases of the repository's corpus into a folder outside it.
fn copy_cases(test: &str, cases: &[&str]) -> PathBuf {
    let source = default_corpus().unwrap();
    let corpus = temp_dir(test);
    for case in cases {
        std::fs::create_dir_all(corpus.join(case)).unwrap();
        for entry in std::fs::read_dir(source.join(case)).unwrap() {
            let path = entry.unwrap().path();
            std::fs::copy(&path, corpus.join(case).join(path.file_name().unwrap())).unwrap();
        }
    }
    corpus
}

fn json_lines(out: &Output) -> Vec<serde_json::Value> {
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn cli_runs_a_corpus_from_outside_the_repository() {
    let corpus = copy_cases("cli-pass", &["softmax", "argmax_argmin"]);
    let dir = corpus.display().to_string();
    let out = hlorun(&[
        "conformance",
        "--platform",
        "interpreter",
        "--corpus",
        &dir,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let rows = json_lines(&out);
    assert_eq!(rows.len(), 4, "{rows:?}");
    let mut seen: Vec<(String, String)> = rows
        .iter()
        .map(|r| {
            assert_eq!(r["status"], "pass", "{r}");
            assert_eq!(r["detail"], "", "{r}");
            (
                r["case"].as_str().unwrap().to_string(),
                r["form"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    seen.sort();
    assert_eq!(
        seen,
        [
            ("argmax_argmin", "module"),
            ("argmax_argmin", "optimized"),
            ("softmax", "module"),
            ("softmax", "optimized")
        ]
        .map(|(c, f)| (c.to_string(), f.to_string()))
    );
    let table = hlorun(&["conformance", "-p", "interpreter", "--corpus", &dir]);
    assert_eq!(table.status.code(), Some(0), "{table:?}");
    let text = String::from_utf8_lossy(&table.stdout);
    assert!(text.starts_with("CASE"), "{text}");
    assert!(text.contains("Interpreter: 4 run(s): 4 pass"), "{text}");
}

#[test]
fn cli_reports_a_wrong_value_and_exits_1() {
    let corpus = copy_cases("cli-wrong", &["softmax"]);
    let out0 = corpus.join("softmax/out0.npy");
    let want = Literal::read_npy(&out0).unwrap();
    let mut values = want.data::<f32>().unwrap().to_vec();
    values[0] = values[0] * 2.0 + 1.0;
    Literal::from_slice(want.dims(), &values)
        .unwrap()
        .write_npy(&out0)
        .unwrap();
    let dir = corpus.display().to_string();
    let out = hlorun(&[
        "conformance",
        "-p",
        "interpreter",
        "--corpus",
        &dir,
        "--json",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    for row in json_lines(&out) {
        assert_eq!(row["status"], "wrong", "{row}");
        assert_eq!(row["output"], 0, "{row}");
        assert_eq!(row["element"], 0, "{row}");
        assert_eq!(
            row["want"].as_str().unwrap().parse::<f32>().unwrap(),
            values[0],
            "{row}"
        );
    }
    // Under the case's own tolerance the same element is reported, and the
    // report says which rule judged it.
    let out = hlorun(&[
        "conformance",
        "-p",
        "interpreter",
        "--corpus",
        &dir,
        "--json",
        "--case-tolerance",
    ]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    for row in json_lines(&out) {
        assert_eq!(
            (row["status"].as_str(), row["element"].as_u64()),
            (Some("wrong"), Some(0))
        );
        assert!(
            row["judged"].as_str().unwrap().contains("tolerance"),
            "{row}"
        );
    }
    let table = hlorun(&["conformance", "-p", "interpreter", "--corpus", &dir]);
    assert_eq!(table.status.code(), Some(1));
    // (After a note on the Interpreter's gaps, which name op-matrix cases.)
    let err = String::from_utf8_lossy(&table.stderr);
    assert!(
        err.lines()
            .any(|l| l.starts_with("hlorun: Interpreter: 2 run(s): 2 wrong")),
        "{err}"
    );
}

#[test]
fn cli_errors_are_one_line_and_exit_1() {
    for (args, needle) in [
        (
            vec![
                "conformance",
                "-p",
                "interpreter",
                "--corpus",
                "/no/such/corpus",
            ],
            "/no/such/corpus",
        ),
        (
            vec!["conformance", "-p", "tpu"],
            "no platform named \"tpu\"",
        ),
    ] {
        let out = hlorun(&args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains(needle) && !err.contains("panicked"),
            "{args:?}: {err}"
        );
    }
}
