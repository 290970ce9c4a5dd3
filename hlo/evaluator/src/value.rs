//! [`Value`]: what one instruction produces while a computation is evaluated.
//!
//! Arrays are shared (`Arc<Literal>`) and tuples are vectors of values, so
//! passing a value along (a `tuple`, a `get-tuple-element`, a `while` state
//! handed to its condition and body) never copies array data. The evaluator
//! moves a value into its last user; an op that can update an operand in place
//! (`dynamic-update-slice` in a loop) does so when it holds the only reference,
//! which is what keeps a scan writing one row per iteration linear, not
//! quadratic.

use hlo_ir::{Error, Literal, Result, Shape};
use std::sync::Arc;

/// A value of the interpreter: an array, a tuple of values, or a token.
#[derive(Clone, Debug)]
pub enum Value {
    Array(Arc<Literal>),
    Tuple(Vec<Value>),
    Token,
}

impl Value {
    /// Wraps an array literal (a tuple literal is split into a tuple value).
    pub fn from_literal(literal: Literal) -> Value {
        match literal.shape() {
            Shape::Tuple(_) => Value::Tuple(
                literal
                    .decompose_tuple()
                    .into_iter()
                    .map(Value::from_literal)
                    .collect(),
            ),
            Shape::Token => Value::Token,
            Shape::Array(_) => Value::Array(Arc::new(literal)),
        }
    }

    /// The value as a literal (array data is copied only if shared).
    pub fn into_literal(self) -> Literal {
        match self {
            Value::Array(a) => Arc::try_unwrap(a).unwrap_or_else(|shared| (*shared).clone()),
            Value::Tuple(t) => Literal::tuple(t.into_iter().map(Value::into_literal).collect()),
            Value::Token => Literal::token(),
        }
    }

    /// A literal copy of the value.
    pub fn to_literal(&self) -> Literal {
        self.clone().into_literal()
    }

    /// The array literal, or an error naming what it is instead.
    pub fn array(&self) -> Result<&Literal> {
        match self {
            Value::Array(a) => Ok(a),
            Value::Tuple(t) => Err(Error::invalid_argument(format!(
                "expected an array, got a tuple of {} elements",
                t.len()
            ))),
            Value::Token => Err(Error::invalid_argument("expected an array, got a token")),
        }
    }

    /// The array literal, owned (copied only if shared).
    pub fn into_array(self) -> Result<Literal> {
        match self {
            Value::Array(a) => Ok(Arc::try_unwrap(a).unwrap_or_else(|shared| (*shared).clone())),
            other => other.array().cloned(),
        }
    }

    /// The elements of a tuple value.
    pub fn tuple(&self) -> Result<&[Value]> {
        match self {
            Value::Tuple(t) => Ok(t),
            Value::Array(a) => Err(Error::invalid_argument(format!(
                "expected a tuple, got an array of shape {}",
                a.shape()
            ))),
            Value::Token => Err(Error::invalid_argument("expected a tuple, got a token")),
        }
    }

    /// Takes a tuple value apart.
    pub fn into_tuple(self) -> Result<Vec<Value>> {
        match self {
            Value::Tuple(t) => Ok(t),
            other => other.tuple().map(|t| t.to_vec()),
        }
    }

    /// Whether the value's structure, element types and dimensions are those of `shape`.
    pub fn matches(&self, shape: &Shape) -> bool {
        match (self, shape) {
            (Value::Array(a), Shape::Array(s)) => {
                a.array_shape().is_ok_and(|have| have.compatible(s))
            }
            (Value::Tuple(t), Shape::Tuple(s)) => {
                t.len() == s.len() && t.iter().zip(s).all(|(v, s)| v.matches(s))
            }
            (Value::Token, Shape::Token) => true,
            _ => false,
        }
    }

    /// A short description of the value's shape, for error messages.
    pub fn shape_text(&self) -> String {
        match self {
            Value::Array(a) => a.shape().to_string(),
            Value::Tuple(t) => format!(
                "({})",
                t.iter()
                    .map(Value::shape_text)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            Value::Token => "token[]".to_string(),
        }
    }
}

impl From<Literal> for Value {
    fn from(literal: Literal) -> Value {
        Value::from_literal(literal)
    }
}
