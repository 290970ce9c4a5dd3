//! Control flow: `while`, `conditional`, and `map`'s per-element calls.
//!
//! A `while` hands its state to the condition as a cheap clone (arrays are
//! shared) and *moves* it into the body, so once the condition's copy is
//! dropped the body holds the only reference and can update arrays in place.
//!
//! `conditional` with an integer selector runs the last branch for an
//! out-of-range index (negative included), as XLA does.

use super::value::Value;
use super::{scalar_of, Evaluator};
use hlo_ir::{ArrayShape, Error, Literal, Result, Scalar};
use hlo_ir::{CompId, HloInstruction};

pub fn while_loop(
    ev: &mut Evaluator<'_>,
    instr: &HloInstruction,
    condition: CompId,
    body: CompId,
    operands: Vec<Value>,
) -> Result<Value> {
    let mut state = operands
        .into_iter()
        .next()
        .ok_or_else(|| Error::invalid_argument("while needs an initial state operand"))?;
    let limit = ev.context().while_step_limit;
    let mut steps: u64 = 0;
    loop {
        let keep_going = ev
            .eval_computation(condition, vec![state.clone()])
            .map_err(|e| e.context("condition"))?;
        match scalar_of(&keep_going, "the while condition's result")? {
            Scalar::Pred(true) => {}
            Scalar::Pred(false) => return Ok(state),
            other => {
                return Err(Error::invalid_argument(format!(
                    "the while condition returned {other}, not a pred"
                )))
            }
        }
        if let Some(hooks) = &ev.context().hooks {
            hooks.loop_iteration();
        }
        if let Some(limit) = limit {
            if steps >= limit {
                return Err(Error::out_of_range(format!(
                    "while loop %{} exceeded the step limit of {limit} iterations",
                    instr.name
                )));
            }
        }
        steps += 1;
        state = ev
            .eval_computation(body, vec![state])
            .map_err(|e| e.context(format!("body, iteration {steps}")))?;
    }
}

pub fn conditional(
    ev: &mut Evaluator<'_>,
    branches: &[CompId],
    operands: Vec<Value>,
) -> Result<Value> {
    let mut operands = operands.into_iter();
    let selector = operands
        .next()
        .ok_or_else(|| Error::invalid_argument("conditional needs a selector operand"))?;
    let branch_args: Vec<Value> = operands.collect();
    let index = match scalar_of(&selector, "the conditional's selector")? {
        // pred form: branches are [true_computation, false_computation].
        Scalar::Pred(p) => {
            if branches.len() != 2 {
                return Err(Error::invalid_argument(format!(
                    "a pred conditional needs 2 branches, has {}",
                    branches.len()
                )));
            }
            if p {
                0
            } else {
                1
            }
        }
        Scalar::S32(i) => {
            if branches.is_empty() {
                return Err(Error::invalid_argument("a conditional needs a branch"));
            }
            // Out of range, negative included: the last branch, as in XLA.
            usize::try_from(i)
                .ok()
                .filter(|&i| i < branches.len())
                .unwrap_or(branches.len() - 1)
        }
        other => {
            return Err(Error::invalid_argument(format!(
                "the selector must be pred or s32, got {}",
                other.element_type()
            )))
        }
    };
    if branch_args.len() != branches.len() {
        return Err(Error::invalid_argument(format!(
            "{} branches but {} branch operands",
            branches.len(),
            branch_args.len()
        )));
    }
    let arg = branch_args
        .into_iter()
        .nth(index)
        .ok_or_else(|| Error::internal("branch operand vanished"))?;
    ev.eval_computation(branches[index], vec![arg])
        .map_err(|e| e.context(format!("branch {index}")))
}

/// Applies `to_apply` to the elements at each index of same-shaped operands.
pub fn map(
    ev: &mut Evaluator<'_>,
    to_apply: CompId,
    operands: &[&Literal],
    result: &ArrayShape,
) -> Result<Literal> {
    for (i, o) in operands.iter().enumerate() {
        if o.dims() != result.dims.as_slice() {
            return Err(Error::invalid_argument(format!(
                "map operand {i} has shape {}, the result {result}",
                o.shape()
            )));
        }
    }
    let mut out = crate::ops::zeros(result.element_type, &result.dims);
    for i in 0..result.element_count() {
        let args = operands
            .iter()
            .map(|o| Ok(Value::from_literal(Literal::from_scalar(o.get(i)?))))
            .collect::<Result<Vec<_>>>()?;
        let v = ev.eval_computation(to_apply, args)?;
        out.set(i, scalar_of(&v, "the mapped computation's result")?)?;
    }
    Ok(out)
}
