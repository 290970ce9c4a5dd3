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
