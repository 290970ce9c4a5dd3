//! `scan` as a `while` loop, as XLA's CPU and GPU compilers lower it.
//!
//! The loop state is `(i, at, carries..., inputs..., outputs...)`. Iteration
//! `i` reads position `at` of every input (`at = i`, or `len - 1 - i` for a
//! reverse scan, kept as a second counter so only `add` is needed) with a
//! `dynamic-slice` and a `reshape` that drops the scanned dimension, calls
//! `to_apply` on the slices and the carries, writes each output into its
//! stacked array at `at` with a `dynamic-update-slice`, and keeps the new
//! carries. The stacked outputs start as zeros; every position is written
//! once. The result is the stacked outputs, then the final carries: the same
//! values in the same order of operations as the evaluator would compute them
//! step by step, so the expansion is exact.
//!
//! [`ExpandScan`] runs this expansion alone, as a pass: platforms that have no
//! `scan` of their own (all of them, today) run it before anything else.

use super::{legalize_as_far_as_possible, Emitted, Emitter, Expander, OpSupport};
use crate::HloPass;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{HloModule, InstrId, Literal, Op, Opcode};

/// See the module docs.
pub struct ScanExpander;

impl Expander for ScanExpander {
    fn name(&self) -> &'static str {
        "scan"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::Scan {
            return None;
        }
        let s32 = ElementType::S32;
        let mut plan = vec![
            (Opcode::While, vec![]),
            (Opcode::Call, vec![]),
            (Opcode::Add, vec![s32]),
            (Opcode::Compare, vec![s32, ElementType::Pred]),
        ];
        for &t in types {
            plan.extend([
                (Opcode::DynamicSlice, vec![t]),
                (Opcode::DynamicUpdateSlice, vec![t]),
                (Opcode::Reshape, vec![t]),
                (Opcode::Broadcast, vec![t]),
            ]);
        }
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::Scan {
            dimension,
            num_carries,
            ..
        } = instr.op
        else {
            return false;
        };
        instr.operands.len() > num_carries
            && b.array(instr.operands[0])
                .is_ok_and(|(_, d)| d.get(dimension).is_some_and(|&n| n <= i32::MAX as usize))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::Scan {
            dimension,
            num_carries,
            is_reverse,
            to_apply,
            ..
        } = instr.op
        else {
            return Err(Error::invalid_argument("not a scan"));
        };
        let operand_shapes: Vec<Shape> = instr
            .operands
            .iter()
            .map(|&o| b.instr(o).shape.without_layout())
            .collect();
        let body = Computation::from_module(b.module, to_apply)?;
        let built = build_scan(
            &operand_shapes,
            &instr.shape.without_layout(),
            dimension,
            num_carries,
            is_reverse,
            &body,
        )?;
        b.call_built(&built, instr.shape.clone(), instr.operands.clone())
    }
}

use super::s32_constant as s32;

/// A computation of the scan's operands returning what the scan returns.
fn build_scan(
    operands: &[Shape],
    result: &Shape,
    dim: usize,
    num_carries: usize,
    is_reverse: bool,
    to_apply: &Computation,
) -> Result<Computation> {
    let malformed = || Error::invalid_argument("scan: its operands, body and result do not agree");
    let inputs = operands
        .len()
        .checked_sub(num_carries)
        .ok_or_else(malformed)?;
    let first = operands.first().ok_or_else(malformed)?.array_or_err()?;
    let extent = *first.dims.get(dim).ok_or_else(malformed)?;
    let len = i32::try_from(extent).map_err(|_| Error::invalid_argument("scan too long"))?;
    let program = to_apply.program_shape();
    let returns_tuple = matches!(program.result, Shape::Tuple(_));
    let results: Vec<Shape> = match &program.result {
        Shape::Tuple(e) => e.clone(),
        single => vec![single.clone()],
    };
    let outputs = results
        .len()
        .checked_sub(num_carries)
        .ok_or_else(malformed)?;
    let stacked: Vec<Shape> = match result {
        Shape::Tuple(e) => e.get(..outputs).ok_or_else(malformed)?.to_vec(),
        single if outputs == 1 => vec![single.clone()],
        _ => Vec::new(),
    };
    if stacked.len() != outputs {
        return Err(Error::invalid_argument(
            "scan: its result does not match its body",
        ));
    }
    let s32_scalar = Shape::scalar(ElementType::S32);
    let mut state: Vec<Shape> = vec![s32_scalar.clone(), s32_scalar];
    state.extend(operands[inputs..].iter().cloned());
    state.extend(operands[..inputs].iter().cloned());
    state.extend(stacked.iter().cloned());
    let state_shape = Shape::tuple(state);
    let carries_at = 2;
    let inputs_at = carries_at + num_carries;
    let outputs_at = inputs_at + inputs;

    let mut cb = HloBuilder::new("scan_cond");
    let p = cb.parameter(0, state_shape.clone(), "state")?;
    let i = cb.get_tuple_element(p, 0)?;
    let limit = s32(&mut cb, len)?;
    let go = cb.compare(i, limit, hlo_ir::attrs::ComparisonDirection::Lt)?;
    let cond = cb.build_computation(go)?;

    let mut body = HloBuilder::new("scan_step");
    let p = body.parameter(0, state_shape.clone(), "state")?;
    let i = body.get_tuple_element(p, 0)?;
    let at = body.get_tuple_element(p, 1)?;
    let zero = s32(&mut body, 0)?;
    let mut args = Vec::new();
    let mut kept_inputs = Vec::new();
    for (k, operand) in operands[..inputs].iter().enumerate() {
        let x = body.get_tuple_element(p, inputs_at + k)?;
        kept_inputs.push(x);
        let a = operand.array_or_err()?;
        let mut starts = vec![zero; a.dims.len()];
        starts[dim] = at;
        let mut sizes = a.dims.clone();
        sizes[dim] = 1;
        let slice = body.dynamic_slice(x, &starts, &sizes)?;
        let mut dropped = a.dims.clone();
        dropped.remove(dim);
        args.push(body.reshape(slice, &dropped)?);
    }
    for k in 0..num_carries {
        args.push(body.get_tuple_element(p, carries_at + k)?);
    }
    let called = body.call(to_apply, &args)?;
    let step: Vec<Value> = if returns_tuple {
        (0..results.len())
            .map(|k| body.get_tuple_element(called, k))
            .collect::<Result<_>>()?
    } else {
        vec![called]
    };
    let one = s32(&mut body, 1)?;
    let next_i = body.binary(BinaryOp::Add, i, one)?;
    let delta = s32(&mut body, if is_reverse { -1 } else { 1 })?;
    let next_at = body.binary(BinaryOp::Add, at, delta)?;
    let mut next = vec![next_i, next_at];
    next.extend(step[outputs..].iter().copied());
    next.extend(kept_inputs);
    for (k, shape) in stacked.iter().enumerate() {
        let acc = body.get_tuple_element(p, outputs_at + k)?;
        let a = shape.array_or_err()?;
        let mut one_row = a.dims.clone();
        one_row[dim] = 1;
        let row = body.reshape(step[k], &one_row)?;
        let mut starts = vec![zero; a.dims.len()];
        starts[dim] = at;
        next.push(body.dynamic_update_slice(acc, row, &starts)?);
    }
    let out = body.tuple(&next)?;
    let body = body.build_computation(out)?;

    let mut f = HloBuilder::new("scan");
    let params = operands
        .iter()
        .enumerate()
        .map(|(k, s)| f.parameter(k, s.clone(), &format!("operand{k}")))
        .collect::<Result<Vec<_>>>()?;
    let first = s32(&mut f, if is_reverse { len - 1 } else { 0 })?;
    let mut init = vec![s32(&mut f, 0)?, first];
    init.extend(params[inputs..].iter().copied());
    init.extend(params[..inputs].iter().copied());
    for shape in &stacked {
        let a = shape.array_or_err()?;
        let z = f.constant(Literal::zeros(&Shape::scalar(a.element_type)))?;
        init.push(f.broadcast(z, &a.dims)?);
    }
    let init = f.tuple(&init)?;
    let w = f.while_loop(&cond, &body, init)?;
    let mut out = Vec::new();
    for k in 0..outputs {
        out.push(f.get_tuple_element(w, outputs_at + k)?);
    }
    for k in 0..num_carries {
        out.push(f.get_tuple_element(w, carries_at + k)?);
    }
    let root = match (returns_tuple, out.as_slice()) {
        (false, [one]) => *one,
        (false, _) => {
            return Err(Error::invalid_argument(format!(
                "a scan with {} results returns an array",
                out.len()
            )))
        }
        (true, _) => f.tuple(&out)?,
    };
    f.build_computation(root)
}

/// Expands every `scan` into a `while` loop; see the module docs.
#[derive(Debug, Default)]
pub struct ExpandScan;

impl HloPass for ExpandScan {
    fn name(&self) -> &str {
        "expand-scan"
    }

    fn run(&mut self, module: &mut HloModule) -> Result<bool> {
        let any = module
            .computations
            .iter()
            .flat_map(|c| &c.instructions)
            .any(|i| i.opcode() == Opcode::Scan);
        if !any {
            return Ok(false);
        }
        let everything_else: Vec<Opcode> = Opcode::ALL
            .iter()
            .copied()
            .filter(|&o| o != Opcode::Scan)
            .collect();
        let support = OpSupport::new().any_type(&everything_else);
        let (changed, left) = legalize_as_far_as_possible(module, &support)?;
        if let Some(l) = left.first() {
            return Err(Error::unimplemented(format!(
                "scan: cannot expand {l} (it needs inputs, and a scanned length that fits in s32)"
            )));
        }
        Ok(changed)
    }
}
