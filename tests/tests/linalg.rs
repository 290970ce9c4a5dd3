//! `tests/linalg/` (made by `scripts/gen_linalg_cases.py`): `jnp.linalg` and
//! `jax.scipy.linalg` programs whose decompositions are XLA CPU's LAPACK custom
//! calls (`lapack_?getrf_ffi`, ...), served by the `xla-lapack` crate, run on
//! the Interpreter and the Host in both forms and compared with XLA CPU's
//! results; plus direct checks of the targets on matrices whose LAPACK answer
//! is known.

use platform_api::{HloModule, Literal};
use service::conformance::{case_dirs, run_corpus, Status};
use std::path::{Path, PathBuf};

// Linking registers the platforms and the targets.
use platform_host as _;
use platform_interpreter as _;
use xla_lapack as _;

const PLATFORMS: [&str; 2] = ["Interpreter", "Host"];

fn linalg_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("linalg")
}

#[test]
fn linalg_cases_on_interpreter_and_host() {
    let dir = linalg_dir();
    let cases = case_dirs(&dir).expect("tests/linalg holds the generated cases");
    assert!(cases.len() >= 100, "{} cases", cases.len());
    let mut problems = Vec::new();
    for platform in PLATFORMS {
        let report = match run_corpus(platform, std::slice::from_ref(&dir)) {
            Ok(report) => report,
            Err(e) => {
                problems.push(format!("{platform}: {e}"));
                continue;
            }
        };
        assert_eq!(
            report.results.len(),
            3 * cases.len(),
            "{platform}: the three forms of every case (module, optimized, stablehlo)"
        );
        for r in &report.results {
            if r.status != Status::Pass {
                println!(
                    "{platform:<12} {:<44} {:<10} {:<12} {}",
                    r.case,
                    r.form,
                    r.status.label(),
                    r.status.detail()
                );
                problems.push(format!(
                    "{platform} {} {}: {}: {}",
                    r.case,
                    r.form,
                    r.status.label(),
                    r.status.detail()
                ));
            }
        }
        println!("{platform}: {}", report.summary());
    }
    assert!(
        problems.is_empty(),
        "linalg problems ({}):\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// Runs a one-custom-call program on `platform`.
fn run(platform: &str, hlo: &str, args: &[Literal]) -> Vec<Literal> {
    let module = HloModule::parse(hlo).unwrap();
    tests::run_program(platform, module, args).unwrap()
}

fn f64s(l: &Literal) -> Vec<f64> {
    l.data::<f64>().unwrap().to_vec()
}

fn i32s(l: &Literal) -> Vec<i32> {
    l.data::<i32>().unwrap().to_vec()
}

const GETRF: &str = r#"
HloModule getrf
ENTRY e {
  a = f64[3,3]{1,0} parameter(0)
  lu = (f64[3,3]{0,1}, s32[3]{0}, s32[]) custom-call(a), custom_call_target="lapack_dgetrf_ffi", operand_layout_constraints={f64[3,3]{0,1}}, api_version=API_VERSION_TYPED_FFI, backend_config={}
  f = f64[3,3]{0,1} get-tuple-element(lu), index=0
  c = f64[3,3]{1,0} copy(f)
  p = s32[3]{0} get-tuple-element(lu), index=1
  i = s32[] get-tuple-element(lu), index=2
  ROOT t = (f64[3,3]{1,0}, s32[3]{0}, s32[]) tuple(c, p, i)
}
"#;

/// `GETRF` of the row-major 3x3 matrix `a` on each platform.
fn getrf_on_each_platform(a: [f64; 9]) -> impl Iterator<Item = (&'static str, Vec<Literal>)> {
    let a = Literal::from_slice(&[3, 3], &a).unwrap();
    PLATFORMS
        .into_iter()
        .map(move |platform| (platform, run(platform, GETRF, std::slice::from_ref(&a))))
}

#[test]
fn getrf_packs_lu_with_lapack_pivots() {
    // Partial pivoting picks 4 (row 2), then 3.5 (row 1 after the swap).
    for (platform, out) in getrf_on_each_platform([1.0, 2.0, 3.0, 2.0, 1.0, 1.0, 4.0, 2.0, 0.0]) {
        // Step 0: swap rows 0 and 2: [4 2 0; 2 1 1; 1 2 3]; l = (.5, .25);
        // rows become [0 1], [1.5 3]. Step 1: |1.5| > 0, swap rows 1 and 2.
        let want = [4.0, 2.0, 0.0, 0.25, 1.5, 3.0, 0.5, 0.0, 1.0];
        let got = f64s(&out[0]);
        assert_eq!(got.len(), want.len(), "{platform}: lu {got:?}");
        for (g, w) in got.iter().zip(want) {
            assert!(
                (g - w).abs() < 1e-12,
                "{platform}: lu {got:?}, want {want:?}"
            );
        }
        assert_eq!(i32s(&out[1]), [3, 3, 3], "{platform}: ipiv");
        assert_eq!(i32s(&out[2]), [0], "{platform}: info");
    }
}

#[test]
fn getrf_reports_a_zero_pivot_and_goes_on() {
    for (platform, out) in getrf_on_each_platform([1.0, 0.0, 2.0, 2.0, 0.0, 1.0, 3.0, 0.0, 5.0]) {
        let got = f64s(&out[0]);
        assert_eq!(got.len(), 9, "{platform}: lu {got:?}");
        assert!(got.iter().all(|x| x.is_finite()), "{platform}: {got:?}");
        assert_eq!(i32s(&out[1]), [3, 2, 3], "{platform}: ipiv");
        assert_eq!(i32s(&out[2]), [2], "{platform}: info names the zero column");
    }
}

const POTRF: &str = r#"
HloModule potrf
ENTRY e {
  a = f32[2,2,2]{2,1,0} parameter(0)
  ch = (f32[2,2,2]{1,2,0}, s32[2]{0}) custom-call(a), custom_call_target="lapack_spotrf_ffi", operand_layout_constraints={f32[2,2,2]{1,2,0}}, api_version=API_VERSION_TYPED_FFI, backend_config={uplo = 76 : ui8}
  f = f32[2,2,2]{1,2,0} get-tuple-element(ch), index=0
  c = f32[2,2,2]{2,1,0} copy(f)
  i = s32[2]{0} get-tuple-element(ch), index=1
  ROOT t = (f32[2,2,2]{2,1,0}, s32[2]{0}) tuple(c, i)
}
"#;

#[test]
fn potrf_factors_and_flags_a_matrix_that_is_not_positive_definite() {
    // [[4, 9], [2, 5]] (the 9 is above the diagonal and never read) = L L^T
    // with L = [[2, 0], [1, 2]]; [[1, 0], [2, 1]] is not positive definite
    // (second pivot 1 - 4 < 0).
    let a = Literal::from_slice(&[2, 2, 2], &[4.0f32, 9.0, 2.0, 5.0, 1.0, 0.0, 2.0, 1.0]).unwrap();
    for platform in PLATFORMS {
        let out = run(platform, POTRF, std::slice::from_ref(&a));
        let got = out[0].data::<f32>().unwrap().to_vec();
        assert_eq!(
            &got[..4],
            &[2.0, 9.0, 1.0, 2.0],
            "{platform}: factor keeps the upper input"
        );
        assert_eq!(i32s(&out[1]), [0, 2], "{platform}: info");
    }
}

#[test]
fn every_target_is_registered_for_both_platforms() {
    for platform in PLATFORMS {
        let registered = platform_api::custom_call::registered_targets(platform);
        for t in xla_lapack::targets() {
            assert!(
                registered.contains(&t),
                "{t} is not registered for {platform}"
            );
        }
    }
}

#[test]
fn geev_left_eigenvectors_are_reported_unimplemented() {
    let hlo = r#"
HloModule geev
ENTRY e {
  a = f64[2,2]{1,0} parameter(0)
  ROOT ev = (f64[2]{0}, f64[2]{0}, c128[2,2]{1,0}, c128[2,2]{1,0}, s32[]) custom-call(a), custom_call_target="lapack_dgeev_ffi", api_version=API_VERSION_TYPED_FFI, backend_config={compute_left = 86 : ui8, compute_right = 86 : ui8}
}
"#;
    let a = Literal::from_slice(&[2, 2], &[1.0f64, 2.0, 3.0, 4.0]).unwrap();
    for platform in PLATFORMS {
        let module = HloModule::parse(hlo).unwrap();
        let err = tests::run_program(platform, module, std::slice::from_ref(&a)).unwrap_err();
        assert_eq!(
            err.code(),
            platform_api::Code::Unimplemented,
            "{platform}: {err}"
        );
        assert!(
            err.to_string().contains("left eigenvectors"),
            "{platform}: {err}"
        );
    }
}

/// A malformed call (attributes, result shapes, operand shapes) is an
/// InvalidArgument error from the handler, not a panic.
#[test]
fn malformed_calls_are_errors() {
    let a = Literal::from_slice(&[2, 2], &[4.0f32, 0.0, 2.0, 5.0]).unwrap();
    let calls = [
        // uplo 'X'.
        (
            "(f32[2,2]{1,0}, s32[])",
            "lapack_spotrf_ffi",
            "uplo = 88 : ui8",
        ),
        // A factor shaped unlike the input.
        (
            "(f32[3,3]{1,0}, s32[])",
            "lapack_spotrf_ffi",
            "uplo = 76 : ui8",
        ),
        // info for a batch the input does not have.
        (
            "(f32[2,2]{1,0}, s32[4])",
            "lapack_spotrf_ffi",
            "uplo = 76 : ui8",
        ),
        // ipiv of the wrong length.
        ("(f32[2,2]{1,0}, s32[1], s32[])", "lapack_sgetrf_ffi", ""),
        // Too few results for getrf.
        ("(f32[2,2]{1,0}, s32[2])", "lapack_sgetrf_ffi", ""),
        // syevd mode 'Q'.
        (
            "(f32[2,2]{1,0}, f32[2]{0}, s32[])",
            "lapack_ssyevd_ffi",
            "mode = 81 : ui8, uplo = 76 : ui8",
        ),
        // eigenvalues of the wrong length.
        (
            "(f32[2,2]{1,0}, f32[3]{0}, s32[])",
            "lapack_ssyevd_ffi",
            "mode = 86 : ui8, uplo = 76 : ui8",
        ),
        // gesdd 'S' with u of the wrong shape.
        (
            "(f32[2,2]{1,0}, f32[2]{0}, f32[3,2]{1,0}, f32[2,2]{1,0}, s32[])",
            "lapack_sgesdd_ffi",
            "mode = 83 : ui8",
        ),
        // geqrf tau of the wrong length.
        ("(f32[2,2]{1,0}, f32[3]{0})", "lapack_sgeqrf_ffi", ""),
        // geev compute_right 'X'.
        (
            "(f32[2]{0}, f32[2]{0}, c64[2,2]{1,0}, c64[2,2]{1,0}, s32[])",
            "lapack_sgeev_ffi",
            "compute_left = 78 : ui8, compute_right = 88 : ui8",
        ),
    ];
    for (results, target, config) in calls {
        let hlo = format!(
            "HloModule bad\nENTRY e {{\n  a = f32[2,2]{{1,0}} parameter(0)\n  ROOT r = {results} custom-call(a), custom_call_target=\"{target}\", api_version=API_VERSION_TYPED_FFI, backend_config={{{config}}}\n}}\n"
        );
        for platform in PLATFORMS {
            let module = HloModule::parse(&hlo).unwrap();
            let err = tests::run_program(platform, module, std::slice::from_ref(&a))
                .expect_err(&format!("{platform}: {target} {results} {{{config}}}"));
            assert_eq!(
                err.code(),
                platform_api::Code::InvalidArgument,
                "{platform}: {target} {results}: {err}"
            );
        }
    }
}
