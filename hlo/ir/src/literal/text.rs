//! The text form of literals, as XLA prints them.
//!
//! `Display` for a literal gives the shape (without layout) then the values:
//! `f32[2,2] { {1, 2}, {3, 4} }`, `s32[] 7`, `(f32[] 1, pred[2] {true, false})`.
//! [`Literal::values_text`] gives only the values, the form an HLO `constant(...)`
//! instruction carries. Floats use the shortest digits that read back to the same
//! value (in exponent form below 1e-5 and from 1e16 up, `5e-324` rather than 324
//! digits), and `inf`, `-inf`, `nan`, `-nan`, so printing and parsing a literal
//! loses nothing but NaN payloads: every NaN prints as `nan` or `-nan` and reads
//! back as the canonical quiet NaN of that sign.
//!
//! [`crate::parser::parse_literal`] reads the `Display` form back, tuples and
//! tokens included; `parse_literal_values` reads `values_text` given the shape.
//! Both writing and reading walk the nested braces with an explicit stack, so a
//! literal of any rank is safe to print and to parse.

use super::Literal;
use crate::shape::Shape;
use std::fmt::{self, Write};

impl Literal {
    /// The values alone: `{ {1, 2}, {3, 4} }` for an array, `7` for a scalar,
    /// `(1, {2, 3})` for a tuple.
    pub fn values_text(&self) -> String {
        let mut out = String::new();
        // Writing to a String cannot fail.
        let _ = write_values(&mut out, self);
        out
    }
}

fn write_values(out: &mut String, literal: &Literal) -> fmt::Result {
    match literal.shape() {
        Shape::Token => out.write_str("token"),
        Shape::Tuple(_) => {
            out.write_str("(")?;
            for (i, e) in literal.tuple_elements().iter().enumerate() {
                if i > 0 {
                    out.write_str(", ")?;
                }
                write_values(out, e)?;
            }
            out.write_str(")")
        }
        Shape::Array(a) => {
            if a.dims.is_empty() {
                return match literal.get(0) {
                    Ok(v) => write!(out, "{v}"),
                    Err(_) => Err(fmt::Error),
                };
            }
            write_array(out, literal, &a.dims)
        }
    }
}

/// Writes the nested braces of an array of rank >= 1, row-major. Iterative, so
/// no rank can overflow the stack: `written[level]` counts the entries written so
/// far inside each open brace.
fn write_array(out: &mut String, literal: &Literal, dims: &[usize]) -> fmt::Result {
    let rank = dims.len();
    let open = |out: &mut String, level: usize| -> bool {
        if dims[level] == 0 {
            out.push_str("{}");
            return false;
        }
        out.push_str(if level + 1 == rank { "{" } else { "{ " });
        true
    };
    let mut written: Vec<usize> = Vec::with_capacity(rank);
    if open(out, 0) {
        written.push(0);
    }
    let mut next = 0usize;
    while let Some(&count) = written.last() {
        let level = written.len() - 1;
        if count == dims[level] {
            out.push_str(if level + 1 == rank { "}" } else { " }" });
            written.pop();
            continue;
        }
        if count > 0 {
            out.push_str(", ");
        }
        written[level] += 1;
        if level + 1 == rank {
            let v = literal.get(next).map_err(|_| fmt::Error)?;
            next += 1;
            write!(out, "{v}")?;
        } else if open(out, level + 1) {
            written.push(0);
        }
    }
    Ok(())
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.shape() {
            Shape::Tuple(_) => {
                f.write_str("(")?;
                for (i, e) in self.tuple_elements().iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
            shape => write!(f, "{} {}", shape.without_layout(), self.values_text()),
        }
    }
}

/// Arrays of more elements than this print summarised by default (NumPy's
/// threshold).
pub const SUMMARY_THRESHOLD: usize = 1000;

/// Ranks beyond this print in full: the summary recurses once per dimension.
const MAX_SUMMARY_RANK: usize = 64;

impl Literal {
    /// The `Display` form, but an array of more than `threshold` elements is
    /// summarised as NumPy does: along each dimension longer than `2 · edge`
    /// only the first and last `edge` entries are shown around a `...`, one
    /// row per line. Smaller arrays print exactly as `Display` does.
    pub fn summary_text(&self, threshold: usize, edge: usize) -> String {
        let mut out = String::new();
        self.write_summary(&mut out, threshold, edge.max(1));
        out
    }

    fn write_summary(&self, out: &mut String, threshold: usize, edge: usize) {
        match self.shape() {
            Shape::Tuple(_) => {
                out.push('(');
                for (i, e) in self.tuple_elements().iter().enumerate() {
                    if i > 0 {
                        out.push_str(",\n ");
                    }
                    e.write_summary(out, threshold, edge);
                }
                out.push(')');
            }
            Shape::Array(a)
                if self.element_count() > threshold
                    && !a.dims.is_empty()
                    && a.dims.len() <= MAX_SUMMARY_RANK =>
            {
                let _ = write!(out, "{} ", self.shape().without_layout());
                let dims = a.dims.clone();
                let _ = write_summary_level(out, self, &dims, 0, 0, edge);
            }
            _ => {
                let _ = write!(out, "{self}");
            }
        }
    }
}

/// The indices of a dimension of `n` entries to show: all, or the first and
/// last `edge` with `None` for the elided middle.
fn shown(n: usize, edge: usize) -> Vec<Option<usize>> {
    if n <= 2 * edge {
        (0..n).map(Some).collect()
    } else {
        (0..edge)
            .map(Some)
            .chain(std::iter::once(None))
            .chain((n - edge..n).map(Some))
            .collect()
    }
}

/// One level of a summarised array: the innermost on one line, outer levels
/// one entry per line, indented by depth. Recursion depth is the rank (at
/// most `MAX_SUMMARY_RANK`).
fn write_summary_level(
    out: &mut String,
    literal: &Literal,
    dims: &[usize],
    level: usize,
    offset: usize,
    edge: usize,
) -> fmt::Result {
    let n = dims[level];
    if n == 0 {
        return out.write_str("{}");
    }
    let stride: usize = dims[level + 1..].iter().product();
    if level + 1 == dims.len() {
        out.write_str("{")?;
        for (k, i) in shown(n, edge).into_iter().enumerate() {
            if k > 0 {
                out.write_str(", ")?;
            }
            match i {
                Some(i) => {
                    let v = literal.get(offset + i).map_err(|_| fmt::Error)?;
                    write!(out, "{v}")?;
                }
                None => out.write_str("...")?,
            }
        }
        return out.write_str("}");
    }
    let indent = " ".repeat(2 * (level + 1));
    out.write_str("{\n")?;
    let entries = shown(n, edge);
    for (k, i) in entries.iter().enumerate() {
        out.write_str(&indent)?;
        match i {
            Some(i) => {
                write_summary_level(out, literal, dims, level + 1, offset + i * stride, edge)?
            }
            None => out.write_str("...")?,
        }
        if k + 1 < entries.len() {
            out.write_str(",")?;
        }
        out.write_str("\n")?;
    }
    out.write_str(&" ".repeat(2 * level))?;
    out.write_str("}")
}

#[cfg(test)]
mod summary_tests {
    use super::*;

    #[test]
    fn large_arrays_are_summarised_small_ones_printed_whole() {
        let small = Literal::vector(&[1.0f32, 2.0, 3.0]);
        assert_eq!(small.summary_text(1000, 3), small.to_string());
        let v: Vec<f32> = (0..2000).map(|i| i as f32).collect();
        let long = Literal::vector(&v);
        assert_eq!(
            long.summary_text(1000, 3),
            "f32[2000] {0, 1, 2, ..., 1997, 1998, 1999}"
        );
        let m: Vec<i32> = (0..40 * 50).collect();
        let matrix = Literal::from_slice(&[40, 50], &m).unwrap();
        let text = matrix.summary_text(1000, 2);
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(lines[0], "s32[40,50] {");
        assert_eq!(lines[1], "  {0, 1, ..., 48, 49},");
        assert_eq!(lines[2], "  {50, 51, ..., 98, 99},");
        assert_eq!(lines[3], "  ...,");
        assert_eq!(lines[4], "  {1900, 1901, ..., 1948, 1949},");
        assert_eq!(lines[5], "  {1950, 1951, ..., 1998, 1999}");
        assert_eq!(lines[6], "}");
        // Tuples summarise each element; empty dimensions print as {}.
        let empty = Literal::from_slice::<f32>(&[0, 2000], &[]).unwrap();
        let t = Literal::tuple(vec![long, empty]);
        let text = t.summary_text(1000, 3);
        assert!(text.starts_with("(f32[2000] {0, 1, 2, ..."), "{text}");
        assert!(text.ends_with("f32[0,2000] {})"), "{text}");
    }
}
