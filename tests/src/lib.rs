//! Cross-platform test support: the conformance corpus' location, running a
//! program on a platform through the `platform_api` contracts, and comparing
//! results.
//!
//! Loading and running conformance cases is `service::conformance` (a library
//! and `hlorun conformance`); this crate keeps the corpus itself
//! (`tests/conformance/`, see its README) and the op × element-type matrix
//! (`tests/op_matrix/`, one single-op case per op and type). [`compare`]
//! implements the README's rule for the differential test: integers and `bool`
//! exactly; floats with the same NaNs and infinities and
//! `|got - want| <= atol + rtol * |want|` elsewhere.
//!
//! [`run_program`] drives a platform the way any client of the contracts would
//! — registry → platform → executor → stream, compiler, transfer manager,
//! executable — and deliberately does not use the `service` crate, so that it
//! checks the contracts themselves.
//!
//! [`random_program`] generates seeded random programs with sound per-output
//! tolerances for the differential test (`tests/differential.rs`);
//! [`differential`] runs, compares, and minimizes failing programs.

pub mod differential;
pub mod random_program;

use platform_api::registry;
use platform_api::{CompileOptions, ElementType, HloModule, Literal, Result, RunOptions, Scalar};
use std::path::{Path, PathBuf};

/// The corpus folder inside this crate.
pub fn corpus_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("conformance")
}

/// The op × element-type matrix inside this crate (`op_matrix/`, made by
/// `scripts/gen_op_matrix.py`).
pub fn op_matrix_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("op_matrix")
}

/// Of a report's unmatched gaps (`"case (form)"`), those whose case is a folder
/// of neither the corpus nor the op matrix: misspelt or stale. A test that runs
/// one of the two folders sees the other's gaps unmatched, rightly.
pub fn stale_gaps(unmatched: &[String]) -> Vec<&String> {
    unmatched
        .iter()
        .filter(|gap| {
            let case = gap.split(" (").next().unwrap_or(gap);
            !corpus_dir().join(case).is_dir() && !op_matrix_dir().join(case).is_dir()
        })
        .collect()
}

/// Platforms that run only a core set of ops and answer `Unimplemented`,
/// naming the op, for a program outside it. The cross-platform tests accept
/// that answer from these and from no other. The Example backend is one: a
/// template for backend authors, not a full backend.
pub const PARTIAL_PLATFORMS: [&str; 1] = ["Example"];

/// Whether `error`, as [`differential::run_guarded`] reports it, is a partial
/// platform declining a program outside its core set.
pub fn declined(platform: &str, error: &str) -> bool {
    PARTIAL_PLATFORMS.contains(&platform)
        && error.starts_with(platform_api::Code::Unimplemented.as_str())
}

/// The names of the registered platforms whose probe says *available*.
/// Panics if the Interpreter is not among them: every test binary that asks
/// links it.
pub fn available_platforms() -> Vec<&'static str> {
    let platforms: Vec<&'static str> = registry::list_platforms()
        .expect("the registry lists platforms")
        .into_iter()
        .filter(|p| p.availability.is_available())
        .map(|p| p.name)
        .collect();
    assert!(
        platforms.contains(&"Interpreter"),
        "the interpreter is linked, so it must be available"
    );
    platforms
}

/// Compiles `module` for device 0 of the named platform, runs it on `args` and
/// returns the result's array leaves in order (a tuple flattened).
pub fn run_program(
    platform_name: &str,
    module: HloModule,
    args: &[Literal],
) -> Result<Vec<Literal>> {
    let platform = registry::platform(platform_name)?;
    let executor = platform.executor(0)?;
    let compiler = registry::compiler(platform.id())?;
    let transfer = registry::transfer_manager(platform.id())?;
    let executable = compiler.compile(module, &executor, &CompileOptions::default())?;
    let stream = executor.clone().create_stream()?;
    let buffers = args
        .iter()
        .map(|a| transfer.literal_to_device(&stream, a))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<_> = buffers.iter().collect();
    let result = executable.execute_on_stream(&RunOptions::new(stream.clone()), &refs)?;
    Ok(transfer
        .transfer_literal_from_device(&stream, &result)?
        .flatten_leaves())
}

/// The real and imaginary parts of an element as `f64` (imaginary 0 for reals).
fn parts(s: Scalar) -> (f64, f64) {
    match s {
        Scalar::C64(c) => (c.re as f64, c.im as f64),
        Scalar::C128(c) => (c.re, c.im),
        other => (other.to_f64_lossy(), 0.0),
    }
}

fn float_close(got: f64, want: f64, rtol: f64, atol: f64) -> bool {
    if want.is_nan() {
        return got.is_nan();
    }
    if want.is_infinite() {
        return got == want;
    }
    got.is_finite() && (got - want).abs() <= atol + rtol * want.abs()
}

/// Compares a result with the expected value as the corpus README says. The
/// error describes the shape difference or the first few differing elements.
pub fn compare(
    got: &Literal,
    want: &Literal,
    rtol: f64,
    atol: f64,
) -> std::result::Result<(), String> {
    let (g, w) = match (got.array_shape(), want.array_shape()) {
        (Ok(g), Ok(w)) => (g, w),
        _ => {
            return Err(format!(
                "expected an array {}, got {}",
                want.shape(),
                got.shape()
            ))
        }
    };
    // A 0-d .npy and a rank-0 result agree; so must every other shape.
    if g.element_type != w.element_type || g.dims != w.dims {
        return Err(format!(
            "shape {} differs from the expected {}",
            got.shape().without_layout(),
            want.shape().without_layout()
        ));
    }
    let ty = w.element_type;
    let exact = !ty.is_floating_or_complex();
    let mut bad = Vec::new();
    let mut count = 0usize;
    for i in 0..w.element_count() {
        let (a, b) = (
            got.get(i).map_err(|e| e.to_string())?,
            want.get(i).map_err(|e| e.to_string())?,
        );
        let ok = if exact {
            a == b
        } else {
            let ((ar, ai), (br, bi)) = (parts(a), parts(b));
            float_close(ar, br, rtol, atol)
                && (ty != ElementType::C64 && ty != ElementType::C128
                    || float_close(ai, bi, rtol, atol))
        };
        if !ok {
            count += 1;
            if bad.len() < 5 {
                bad.push(format!("[{i}] got {a}, want {b}"));
            }
        }
    }
    if count > 0 {
        return Err(format!(
            "{count} of {} elements differ: {}",
            w.element_count(),
            bad.join("; ")
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_follows_the_readme_rules() {
        let f = |v: &[f32]| Literal::vector(v);
        assert!(compare(
            &f(&[1.0, f32::NAN, f32::INFINITY]),
            &f(&[1.0, f32::NAN, f32::INFINITY]),
            0.0,
            0.0
        )
        .is_ok());
        assert!(compare(&f(&[1.0]), &f(&[f32::NAN]), 1.0, 1.0).is_err());
        assert!(compare(&f(&[f32::NAN]), &f(&[1.0]), 1.0, 1.0).is_err());
        assert!(compare(&f(&[f32::NEG_INFINITY]), &f(&[f32::INFINITY]), 1.0, 1.0).is_err());
        assert!(compare(&f(&[f32::INFINITY]), &f(&[1e30]), 1.0, 1.0).is_err());
        // |1.1 - 1| = 0.1 <= 0.05 + 0.1 * 1
        assert!(compare(&f(&[1.1]), &f(&[1.0]), 0.1, 0.05).is_ok());
        assert!(compare(&f(&[1.2]), &f(&[1.0]), 0.1, 0.05).is_err());
        // Integers are exact whatever the tolerance.
        assert!(compare(
            &Literal::vector(&[3i32]),
            &Literal::vector(&[4i32]),
            1.0,
            1.0
        )
        .is_err());
        assert!(compare(
            &Literal::vector(&[3i32]),
            &Literal::vector(&[3i32]),
            0.0,
            0.0
        )
        .is_ok());
        // Shapes must agree.
        assert!(compare(
            &f(&[1.0, 2.0]),
            &Literal::from_slice(&[1, 2], &[1f32, 2.0]).unwrap(),
            1.0,
            1.0
        )
        .is_err());
        assert!(compare(&Literal::vector(&[1i32]), &f(&[1.0]), 1.0, 1.0).is_err());
    }
}
