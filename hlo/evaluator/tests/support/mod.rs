//! Helpers shared by the evaluator's integration tests: build small modules from
//! HLO text and evaluate them on literals.
#![allow(dead_code)]

use hlo_evaluator::{PreparedModule, RunContext};
use hlo_ir::{Literal, Result};

pub fn parse(text: &str) -> hlo_ir::HloModule {
    hlo_ir::HloModule::parse(text)
        .unwrap_or_else(|e| panic!("test module does not parse: {e}\n{text}"))
}

/// Evaluates the entry computation of `text` on `args`.
pub fn eval(text: &str, args: Vec<Literal>) -> Result<Literal> {
    eval_with(text, args, &RunContext::default())
}

/// The module is verified first (as the compiler would), so every test module is valid HLO.
pub fn eval_with(text: &str, args: Vec<Literal>, ctx: &RunContext) -> Result<Literal> {
    let module = parse(text);
    hlo_ir::verifier::verify_module(&module)?;
    PreparedModule::new(module, true)?.evaluate(args, ctx)
}

/// Evaluates without running the verifier first: for checking that the
/// evaluator's own validation reports malformed instructions.
pub fn eval_unverified(text: &str, args: Vec<Literal>) -> Result<Literal> {
    PreparedModule::new(parse(text), true)?.evaluate(args, &RunContext::default())
}

/// Like [`eval`], panicking with the error.
pub fn eval_ok(text: &str, args: Vec<Literal>) -> Literal {
    eval(text, args).unwrap_or_else(|e| panic!("evaluation failed: {e}"))
}

pub fn f32s(l: &Literal) -> Vec<f32> {
    l.data::<f32>().expect("an f32 literal").to_vec()
}

pub fn s32s(l: &Literal) -> Vec<i32> {
    l.data::<i32>().expect("an s32 literal").to_vec()
}

pub fn u32s(l: &Literal) -> Vec<u32> {
    l.data::<u32>().expect("a u32 literal").to_vec()
}

/// An f32 array `0, 1, 2, ...` of these dimensions.
pub fn counting(dims: &[usize]) -> Literal {
    let n: usize = dims.iter().product();
    Literal::from_slice(dims, &(0..n).map(|i| i as f32).collect::<Vec<_>>()).unwrap()
}
