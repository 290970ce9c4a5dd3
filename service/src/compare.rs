//! Comparing a result with a reference, as the conformance corpus does.
//!
//! The rule (`tests/conformance/README.md`):
//! * integer and `pred` outputs must be equal element for element;
//! * floating outputs must have the same shape, NaN exactly where the reference
//!   has NaN, the same infinities, and elsewhere `|got - want| <= atol + rtol *
//!   |want|`. Complex numbers are held to this rule in each component.
//!
//! Results are compared leaf by leaf (a tuple flattened in preorder, as XLA
//! flattens results). Each leaf reports its largest absolute and relative
//! errors (relative over elements whose reference is non-zero) and its first
//! offending element, so a mismatch report says where to look.

use platform_api::{ElementType, Error, Literal, Result, Scalar, Shape};
use std::fmt;

/// Allowed error for floating outputs.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Tolerance {
    pub rtol: f64,
    pub atol: f64,
}

impl Default for Tolerance {
    /// Suits f32 programs whose reductions may sum in a different order.
    fn default() -> Self {
        Tolerance {
            rtol: 1e-4,
            atol: 1e-5,
        }
    }
}

/// How one output leaf compares.
#[derive(Clone, Debug, PartialEq)]
pub struct LeafComparison {
    /// The leaf's position among the flattened outputs.
    pub index: usize,
    /// The reference's shape.
    pub shape: Shape,
    pub max_abs_error: f64,
    pub max_rel_error: f64,
    /// Elements outside the tolerance (or unequal, for integers).
    pub mismatches: usize,
    /// Why the leaf fails, for the first failing element (or a shape mismatch).
    pub first_failure: Option<String>,
    /// The row-major index of the first failing element; `None` when the leaf
    /// passes or its shape is wrong.
    pub first_failing_element: Option<usize>,
}

impl LeafComparison {
    pub fn ok(&self) -> bool {
        self.first_failure.is_none()
    }
}

impl fmt::Display for LeafComparison {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "out{} {}: max abs error {:.3e}, max rel error {:.3e}",
            self.index, self.shape, self.max_abs_error, self.max_rel_error
        )?;
        match &self.first_failure {
            None => f.write_str(", ok"),
            Some(why) => write!(
                f,
                ", MISMATCH in {} element(s); first: {why}",
                self.mismatches
            ),
        }
    }
}

/// The multi-index of a row-major linear index, for messages.
fn index_text(dims: &[usize], mut linear: usize) -> String {
    let mut index = vec![0usize; dims.len()];
    for (slot, &d) in index.iter_mut().zip(dims).rev() {
        if d > 0 {
            *slot = linear % d;
            linear /= d;
        }
    }
    format!("{index:?}")
}

/// Components of a floating element (one for reals, two for complex).
fn float_parts(s: &Scalar) -> [f64; 2] {
    match *s {
        Scalar::C64(c) => [f64::from(c.re), f64::from(c.im)],
        Scalar::C128(c) => [c.re, c.im],
        _ => [s.to_f64_lossy(), 0.0],
    }
}

/// An integer or pred element as an exact i128.
fn int_value(s: &Scalar) -> i128 {
    match *s {
        Scalar::U64(v) => i128::from(v),
        _ => i128::from(s.to_i64().unwrap_or(0)),
    }
}

/// Compares one array leaf.
pub fn compare_arrays(
    index: usize,
    got: &Literal,
    want: &Literal,
    tol: Tolerance,
) -> Result<LeafComparison> {
    let want_shape = want.shape().without_layout();
    let mut report = LeafComparison {
        index,
        shape: want_shape.clone(),
        max_abs_error: 0.0,
        max_rel_error: 0.0,
        mismatches: 0,
        first_failure: None,
        first_failing_element: None,
    };
    if !got.shape().compatible(want.shape()) {
        report.mismatches = want.element_count();
        report.first_failure = Some(format!(
            "shape {} where {want_shape} was expected",
            got.shape().without_layout()
        ));
        return Ok(report);
    }
    let ty = want.element_type().ok_or_else(|| {
        Error::invalid_argument(format!("cannot compare values of shape {want_shape}"))
    })?;
    let components = if ty.is_complex() { 2 } else { 1 };
    let dims = want.dims().to_vec();
    for i in 0..want.element_count() {
        let (g, w) = (got.get(i)?, want.get(i)?);
        let failure = if ty.is_integer() || ty == ElementType::Pred {
            let (gi, wi) = (int_value(&g), int_value(&w));
            let abs = (gi - wi).unsigned_abs() as f64;
            report.max_abs_error = report.max_abs_error.max(abs);
            if wi != 0 {
                report.max_rel_error = report.max_rel_error.max(abs / (wi.unsigned_abs() as f64));
            }
            (gi != wi).then(|| format!("at {}: got {g}, want {w}", index_text(&dims, i)))
        } else {
            let (gp, wp) = (float_parts(&g), float_parts(&w));
            let mut failure = None;
            for c in 0..components {
                let (gv, wv) = (gp[c], wp[c]);
                let bad = if wv.is_nan() || gv.is_nan() {
                    wv.is_nan() != gv.is_nan()
                } else if wv.is_infinite() || gv.is_infinite() {
                    gv != wv
                } else {
                    let abs = (gv - wv).abs();
                    report.max_abs_error = report.max_abs_error.max(abs);
                    if wv != 0.0 {
                        report.max_rel_error = report.max_rel_error.max(abs / wv.abs());
                    }
                    abs > tol.atol + tol.rtol * wv.abs()
                };
                if bad && failure.is_none() {
                    failure = Some(format!("at {}: got {g}, want {w}", index_text(&dims, i)));
                }
            }
            failure
        };
        if let Some(why) = failure {
            report.mismatches += 1;
            if report.first_failure.is_none() {
                report.first_failure = Some(why);
                report.first_failing_element = Some(i);
            }
        }
    }
    Ok(report)
}

/// Compares two results leaf by leaf (tuples flattened in preorder).
pub fn compare_results(
    got: &Literal,
    want: &Literal,
    tol: Tolerance,
) -> Result<Vec<LeafComparison>> {
    let got_leaves = got.clone().flatten_leaves();
    let want_leaves = want.clone().flatten_leaves();
    if got_leaves.len() != want_leaves.len() {
        return Err(Error::invalid_argument(format!(
            "the result has {} output(s) ({}) but the reference has {} ({})",
            got_leaves.len(),
            got.shape().without_layout(),
            want_leaves.len(),
            want.shape().without_layout()
        )));
    }
    got_leaves
        .iter()
        .zip(&want_leaves)
        .enumerate()
        .map(|(i, (g, w))| compare_arrays(i, g, w, tol))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn floats_within_and_outside_tolerance() {
        let tol = Tolerance {
            rtol: 1e-3,
            atol: 0.0,
        };
        let want = Literal::vector(&[1.0f32, -2.0, f32::NAN, f32::INFINITY]);
        let close = Literal::vector(&[1.0005f32, -2.001, f32::NAN, f32::INFINITY]);
        let r = compare_arrays(0, &close, &want, tol).unwrap();
        assert!(r.ok(), "{r}");
        assert!((r.max_abs_error - 0.001).abs() < 1e-6);
        let far = Literal::vector(&[1.01f32, -2.0, 0.0, f32::INFINITY]);
        let r = compare_arrays(0, &far, &want, tol).unwrap();
        assert!(!r.ok());
        assert_eq!(r.mismatches, 2);
        assert!(r.first_failure.unwrap().contains("[0]"));
        let wrong_inf = Literal::vector(&[1.0f32, -2.0, f32::NAN, f32::NEG_INFINITY]);
        assert!(!compare_arrays(0, &wrong_inf, &want, tol).unwrap().ok());
    }

    #[test]
    fn integers_must_be_equal_and_shapes_must_match() {
        let want = Literal::from_slice(&[2, 2], &[1i32, 2, 3, 4]).unwrap();
        let got = Literal::from_slice(&[2, 2], &[1i32, 2, 3, 5]).unwrap();
        let r = compare_arrays(0, &got, &want, Tolerance::default()).unwrap();
        assert_eq!(r.mismatches, 1);
        assert!(r.first_failure.as_ref().unwrap().contains("[1, 1]"), "{r}");
        let reshaped = Literal::vector(&[1i32, 2, 3, 4]);
        assert!(!compare_arrays(0, &reshaped, &want, Tolerance::default())
            .unwrap()
            .ok());
        let big = Literal::vector(&[u64::MAX]);
        let big_minus = Literal::vector(&[u64::MAX - 1]);
        assert!(!compare_arrays(0, &big_minus, &big, Tolerance::default())
            .unwrap()
            .ok());
    }

    #[test]
    fn tuples_compare_leaf_by_leaf() {
        let want = Literal::tuple(vec![
            Literal::scalar(1.0f64),
            Literal::vector(&[true, false].map(u8::from)),
        ]);
        let got = want.clone();
        let reports = compare_results(&got, &want, Tolerance::default()).unwrap();
        assert_eq!(reports.len(), 2);
        assert!(reports.iter().all(LeafComparison::ok));
        assert!(compare_results(&Literal::scalar(1.0f64), &want, Tolerance::default()).is_err());
    }
}
