//! The evaluator: runs a computation instruction by instruction.
//!
//! # Design
//! A computation's instructions are stored operands-first, so evaluation is one
//! pass in storage order with a slot per instruction. Before the pass the
//! [`plan`] gives each instruction its number of uses; when an operand is
//! consumed for the last time its value is *moved* out of its slot (and any
//! other time it is cheaply cloned: arrays are shared). A value therefore lives
//! exactly until its last use, and an op holding the only reference to an array
//! may reuse it in place. Instructions the root does not depend on are skipped
//! unless they have side effects.
//!
//! Dispatch is one `match` on [`Op`]: the ops the interpreter owns live in
//! [`crate::ops`] (data movement, randomness, batch norm) and in this module's
//! children ([`control`] for while/conditional/call/map, [`collectives`]);
//! elementwise ops go to `platform_api::semantics`, the single definition every
//! backend shares; everything else is offered to [`crate::kernels::kernel_for`].
//! An op nobody handles is `Unimplemented`, naming the op and the instruction.
//!
//! Every error leaving an instruction is prefixed with the instruction's name and
//! opcode, so a failure deep in a loop body reads as a path:
//! `%while.3 (while): %dot.7 (dot): ...`.

pub mod collectives;
pub mod control;
pub mod plan;
pub mod value;

use crate::kernels::{self, CallComputation};
use crate::ops::{self, rng::SeededRng};
use collectives::CollectiveContext;
use plan::ModulePlan;
use platform_api::hlo::{CompId, HloComputation, HloInstruction, HloModule, InstrId, Op};
use platform_api::{semantics, ArrayShape, Error, Literal, ProfileSink, Result, Scalar};
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use value::Value;

/// What one execution runs with (from `RunOptions`).
#[derive(Clone, Debug)]
pub struct RunContext {
    pub replica: usize,
    pub partition: usize,
    pub replica_count: usize,
    pub partition_count: usize,
    pub run_id: u64,
    pub rng_seed: u64,
    pub profile: Option<Arc<ProfileSink>>,
    pub while_step_limit: Option<u64>,
}

impl Default for RunContext {
    fn default() -> Self {
        RunContext {
            replica: 0,
            partition: 0,
            replica_count: 1,
            partition_count: 1,
            run_id: 0,
            rng_seed: 0,
            profile: None,
            while_step_limit: None,
        }
    }
}

/// Evaluates the computations of one module for one execution.
pub struct Evaluator<'a> {
    module: &'a HloModule,
    plan: &'a ModulePlan,
    ctx: &'a RunContext,
    rng: SeededRng,
    /// The 128-bit state behind `rng-get-and-update-state`.
    rng_state: u128,
    /// How many times each collective instruction has run in this execution, so
    /// replicas meet at the same dynamic occurrence inside loops.
    occurrences: HashMap<(CompId, InstrId), u64>,
}

impl<'a> Evaluator<'a> {
    pub fn new(module: &'a HloModule, plan: &'a ModulePlan, ctx: &'a RunContext) -> Self {
        Evaluator {
            module,
            plan,
            ctx,
            rng: SeededRng::new(ctx.rng_seed),
            rng_state: ctx.rng_seed as u128,
            occurrences: HashMap::new(),
        }
    }

    /// Evaluates the entry computation.
    pub fn run_entry(&mut self, args: Vec<Value>) -> Result<Value> {
        self.eval_computation(self.module.entry, args)
    }

    /// Evaluates computation `comp` on `args` (one per parameter, in order).
    pub fn eval_computation(&mut self, comp_id: CompId, args: Vec<Value>) -> Result<Value> {
        let comp = self.module.computation(comp_id);
        let plan = self.plan.computation(comp_id);
        let mut params: Vec<Option<Value>> = args.into_iter().map(Some).collect();
        let n = comp.instructions.len();
        let mut slots: Vec<Option<Value>> = vec![None; n];
        let mut remaining = plan.use_counts.clone();
        // Operands of multiplies deferred into their user's FMA (see `plan`).
        let mut pending: Vec<Option<(Value, Value)>> = vec![None; n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            if !plan.live[i] {
                continue;
            }
            let mut operands = Vec::with_capacity(instr.operands.len());
            let mut product: Option<(Value, Value)> = None;
            for op in &instr.operands {
                let k = op.index();
                remaining[k] = remaining[k].saturating_sub(1);
                if plan.deferred[k] {
                    product = pending[k].take();
                    continue;
                }
                let v = if remaining[k] == 0 && k != comp.root.index() {
                    slots[k].take()
                } else {
                    slots[k].clone()
                };
                operands.push(v.ok_or_else(|| {
                    Error::internal(format!(
                        "%{} needs the value of %{}, which is gone",
                        instr.name, comp.instructions[k].name
                    ))
                })?);
            }
            if plan.deferred[i] {
                // A multiply absorbed by its one user: hand its operands over.
                let mut it = operands.into_iter();
                pending[i] = it.next().zip(it.next());
                continue;
            }
            let started = self.ctx.profile.as_ref().map(|_| Instant::now());
            let value = match (plan.contractions[i], product) {
                (Some((_, how)), Some((a, b))) => contract(how, &a, &b, operands.first()),
                _ => {
                    self.eval_instruction(comp_id, InstrId(i as u32), instr, operands, &mut params)
                }
            }
            .map_err(|e| e.context(format!("%{} ({})", instr.name, instr.opcode())))?;
            if let (Some(sink), Some(start)) = (&self.ctx.profile, started) {
                sink.record(
                    instr.name.clone(),
                    instr.opcode().name(),
                    start,
                    self.ctx.replica as u64,
                );
            }
            if remaining[i] > 0 || i == comp.root.index() {
                slots[i] = Some(value);
            }
        }
        slots[comp.root.index()]
            .take()
            .ok_or_else(|| Error::internal(format!("the root of {} produced no value", comp.name)))
    }

    fn eval_instruction(
        &mut self,
        comp: CompId,
        id: InstrId,
        instr: &HloInstruction,
        operands: Vec<Value>,
        params: &mut [Option<Value>],
    ) -> Result<Value> {
        let array_result = || instr.shape.array_or_err();
        let arg = |i: usize| -> Result<&Literal> {
            operands
                .get(i)
                .ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "operand {i} is missing ({} given)",
                        operands.len()
                    ))
                })?
                .array()
                .map_err(|e| e.context(format!("operand {i}")))
        };
        let lit = |l: Literal| Ok(Value::from_literal(l));
        match &instr.op {
            Op::Parameter { number } => {
                let supplied = params.len();
                let slot = params.get_mut(*number).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "parameter {number} was not supplied ({supplied} arguments)"
                    ))
                })?;
                let v = slot.take().ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "parameter {number} is used by two parameter instructions"
                    ))
                })?;
                if !v.matches(&instr.shape) {
                    return Err(Error::invalid_argument(format!(
                        "parameter {number} expects {}, but the argument is {}",
                        instr.shape,
                        v.shape_text()
                    )));
                }
                Ok(v)
            }
            Op::Constant { .. } => self.plan.computation(comp).constants[id.index()]
                .clone()
                .ok_or_else(|| Error::internal("constant without a planned value")),
            Op::Iota { dimension } => lit(ops::iota::iota(*dimension, array_result()?)?),

            // ---- elementwise: the shared semantics ----
            Op::Unary(op) => lit(semantics::unary(*op, arg(0)?, &instr.shape)?),
            Op::Binary(op) => lit(semantics::binary(*op, arg(0)?, arg(1)?, &instr.shape)?),
            Op::Compare {
                direction,
                compare_type,
            } => lit(semantics::compare(
                *direction,
                *compare_type,
                arg(0)?,
                arg(1)?,
            )?),
            Op::Select => lit(semantics::select(arg(0)?, arg(1)?, arg(2)?)?),
            Op::Clamp => lit(semantics::clamp(arg(0)?, arg(1)?, arg(2)?)?),
            Op::Convert => lit(semantics::convert(arg(0)?, array_result()?.element_type)?),
            Op::BitcastConvert => lit(semantics::bitcast_convert(arg(0)?, &instr.shape)?),
            Op::ReducePrecision {
                exponent_bits,
                mantissa_bits,
            } => lit(semantics::reduce_precision(
                arg(0)?,
                *exponent_bits,
                *mantissa_bits,
            )?),
            Op::Map { to_apply, .. } => {
                let args: Vec<&Literal> = (0..operands.len()).map(arg).collect::<Result<_>>()?;
                lit(control::map(self, *to_apply, &args, array_result()?)?)
            }

            // ---- data movement ----
            Op::Broadcast { dimensions } => lit(ops::broadcast::broadcast(
                arg(0)?,
                dimensions,
                array_result()?,
            )?),
            Op::Reshape => {
                let result = array_result()?;
                let a = arg(0)?;
                let have = a.array_shape()?;
                if have.element_type != result.element_type
                    || have.element_count() != result.element_count()
                {
                    return Err(Error::invalid_argument(format!(
                        "cannot reshape {have} to {result}"
                    )));
                }
                lit(Literal::from_bytes(
                    ops::logical_shape(result.element_type, &result.dims),
                    a.bytes()?,
                )?)
            }
            Op::Transpose { dimensions } => lit(ops::transpose::transpose(
                arg(0)?,
                dimensions,
                array_result()?,
            )?),
            Op::Slice { slice } => lit(ops::slicing::slice(arg(0)?, slice, array_result()?)?),
            Op::DynamicSlice { sizes } => {
                let starts: Vec<&Literal> = (1..operands.len()).map(arg).collect::<Result<_>>()?;
                lit(ops::slicing::dynamic_slice(
                    arg(0)?,
                    &starts,
                    sizes,
                    array_result()?,
                )?)
            }
            Op::DynamicUpdateSlice => {
                let mut operands = operands.into_iter();
                let target = operands.next().ok_or_else(|| {
                    Error::invalid_argument("dynamic-update-slice needs an operand")
                })?;
                let rest: Vec<Value> = operands.collect();
                let rest_refs: Vec<&Literal> =
                    rest.iter().map(Value::array).collect::<Result<_>>()?;
                let (update, starts) = rest_refs.split_first().ok_or_else(|| {
                    Error::invalid_argument("dynamic-update-slice needs an update operand")
                })?;
                // Moving the target in lets the update happen in place when no one else holds it.
                lit(ops::slicing::dynamic_update_slice(
                    target.into_array()?,
                    update,
                    starts,
                )?)
            }
            Op::Concatenate { dimension } => {
                let args: Vec<&Literal> = (0..operands.len()).map(arg).collect::<Result<_>>()?;
                lit(ops::concatenate::concatenate(
                    &args,
                    *dimension,
                    array_result()?,
                )?)
            }
            Op::Pad { config } => lit(ops::pad::pad(arg(0)?, arg(1)?, config, array_result()?)?),
            Op::Reverse { dimensions } => lit(ops::reverse::reverse(arg(0)?, dimensions)?),
            Op::Copy => {
                let v = operands
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::invalid_argument("copy needs an operand"))?;
                Ok(v)
            }
            Op::Bitcast => {
                let operand_instr = self.module.computation(comp).instr(instr.operand(0)?);
                lit(ops::bitcast::bitcast(
                    arg(0)?,
                    operand_instr.shape.array_or_err()?,
                    array_result()?,
                )?)
            }
            Op::GetDimensionSize { dimension } => {
                let dims = arg(0)?.dims();
                let size = dims.get(*dimension).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "dimension {dimension} is out of range for a rank-{} operand",
                        dims.len()
                    ))
                })?;
                let size = i32::try_from(*size).map_err(|_| {
                    Error::out_of_range(format!("dimension size {size} does not fit s32"))
                })?;
                lit(Literal::scalar(size))
            }

            // ---- structure and control flow ----
            Op::Tuple => Ok(Value::Tuple(operands)),
            Op::GetTupleElement { index } => {
                let tuple = operands
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::invalid_argument("get-tuple-element needs an operand"))?;
                let len = tuple.tuple()?.len();
                tuple.into_tuple()?.into_iter().nth(*index).ok_or_else(|| {
                    Error::invalid_argument(format!(
                        "tuple index {index} is out of range for a tuple of {len}"
                    ))
                })
            }
            Op::While { condition, body } => {
                control::while_loop(self, instr, *condition, *body, operands)
            }
            Op::Conditional { branches } => control::conditional(self, branches, operands),
            Op::Call { to_apply } => self.eval_computation(*to_apply, operands),
            Op::Fusion { calls, .. } => self.eval_computation(*calls, operands),
            Op::CustomCall(_) => {
                let literals: Vec<Literal> = operands.iter().map(Value::to_literal).collect();
                let refs: Vec<&Literal> = literals.iter().collect();
                let out = platform_api::custom_call::call_host_target(
                    crate::platform::PLATFORM_NAME,
                    instr,
                    &refs,
                )?;
                if !out.shape().compatible(&instr.shape) {
                    return Err(Error::internal(format!(
                        "the custom call returned {}, not the declared {}",
                        out.shape(),
                        instr.shape
                    )));
                }
                lit(out)
            }
            Op::OptimizationBarrier => operands
                .into_iter()
                .next()
                .ok_or_else(|| Error::invalid_argument("opt-barrier needs an operand")),
            Op::AddDependency => operands
                .into_iter()
                .next()
                .ok_or_else(|| Error::invalid_argument("add-dependency needs an operand")),
            Op::AfterAll => Ok(Value::Token),

            // ---- normalisation ----
            Op::BatchNormTraining {
                epsilon,
                feature_index,
            } => {
                let (y, mean, var) =
                    ops::batch_norm::training(arg(0)?, arg(1)?, arg(2)?, *epsilon, *feature_index)?;
                Ok(Value::Tuple(vec![
                    Value::from(y),
                    Value::from(mean),
                    Value::from(var),
                ]))
            }
            Op::BatchNormInference {
                epsilon,
                feature_index,
            } => lit(ops::batch_norm::inference(
                arg(0)?,
                arg(1)?,
                arg(2)?,
                arg(3)?,
                arg(4)?,
                *epsilon,
                *feature_index,
            )?),
            Op::BatchNormGrad {
                epsilon,
                feature_index,
            } => {
                let (dx, dscale, doffset) = ops::batch_norm::grad(
                    arg(0)?,
                    arg(1)?,
                    arg(2)?,
                    arg(3)?,
                    arg(4)?,
                    *epsilon,
                    *feature_index,
                )?;
                Ok(Value::Tuple(vec![
                    Value::from(dx),
                    Value::from(dscale),
                    Value::from(doffset),
                ]))
            }

            // ---- randomness ----
            Op::Rng { distribution } => lit(ops::rng::rng(
                *distribution,
                arg(0)?,
                arg(1)?,
                array_result()?,
                &mut self.rng,
            )?),
            Op::RngBitGenerator { algorithm } => {
                let data_shape = instr
                    .shape
                    .tuple_shapes()
                    .get(1)
                    .ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "rng-bit-generator must return (state, data), not {}",
                            instr.shape
                        ))
                    })?
                    .array_or_err()?;
                let (state, data) =
                    ops::rng_bit_generator::rng_bit_generator(*algorithm, arg(0)?, data_shape)?;
                Ok(Value::Tuple(vec![Value::from(state), Value::from(data)]))
            }
            Op::RngGetAndUpdateState { delta } => {
                let current = self.rng_state;
                self.rng_state = current.wrapping_add(*delta as i128 as u128);
                lit(Literal::vector(&[current as u64, (current >> 64) as u64]))
            }

            // ---- replicas ----
            Op::ReplicaId => lit(Literal::scalar(self.ctx.replica as u32)),
            Op::PartitionId => lit(Literal::scalar(self.ctx.partition as u32)),
            Op::AllReduce { .. }
            | Op::AllGather { .. }
            | Op::ReduceScatter { .. }
            | Op::AllToAll { .. }
            | Op::CollectivePermute { .. }
            | Op::CollectiveBroadcast { .. } => {
                let occurrence = self.occurrences.entry((comp, id)).or_insert(0);
                let this = *occurrence;
                *occurrence += 1;
                let key = CollectiveContext {
                    module: &self.module.name,
                    instruction: &instr.name,
                    occurrence: this,
                };
                collectives::run(self, &key, instr, operands)
            }

            // ---- everything else: a kernel, or unimplemented ----
            other => {
                let opcode = other.opcode();
                let Some(kernel) = kernels::kernel_for(opcode) else {
                    return Err(Error::unimplemented(format!(
                        "the interpreter does not implement {opcode} (instruction %{})",
                        instr.name
                    )));
                };
                // Kernels take literals: arrays are borrowed; any tuple operand is materialised.
                let holders: Vec<Cow<'_, Literal>> = operands
                    .iter()
                    .map(|v| match v {
                        Value::Array(a) => Cow::Borrowed(&**a),
                        other => Cow::Owned(other.to_literal()),
                    })
                    .collect();
                let refs: Vec<&Literal> = holders.iter().map(|c| c.as_ref()).collect();
                let out = kernel(instr, &refs, self)?;
                lit(out)
            }
        }
    }

    /// The run context (for children of this module).
    pub fn context(&self) -> &RunContext {
        self.ctx
    }

    /// The module being evaluated.
    pub fn module(&self) -> &HloModule {
        self.module
    }
}

impl CallComputation for Evaluator<'_> {
    fn computation(&self, id: CompId) -> &HloComputation {
        self.module.computation(id)
    }

    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal> {
        if id.index() >= self.module.computations.len() {
            return Err(Error::internal(format!("no computation {}", id.0)));
        }
        let args = args.iter().cloned().map(Value::from_literal).collect();
        Ok(self.eval_computation(id, args)?.into_literal())
    }
}

/// A scalar literal's single element (for predicates and indices).
pub fn scalar_of(value: &Value, what: &str) -> Result<Scalar> {
    let l = value.array().map_err(|e| e.context(what))?;
    let shape: &ArrayShape = l.array_shape()?;
    if shape.element_count() != 1 || shape.rank() != 0 {
        return Err(Error::invalid_argument(format!(
            "{what} must be a scalar, got {shape}"
        )));
    }
    l.get(0)
}

/// Evaluates an add/subtract that absorbed a multiply `a * b` as one FMA with
/// its remaining operand `c` (XLA CPU's FP contraction; see `plan`).
fn contract(
    how: platform_api::semantics::contraction::Contraction,
    a: &Value,
    b: &Value,
    c: Option<&Value>,
) -> Result<Value> {
    let c = c.ok_or_else(|| Error::internal("a contracted add lost its other operand"))?;
    platform_api::semantics::contraction::fused_multiply_add(
        how,
        a.array()?,
        b.array()?,
        c.array()?,
    )
    .map(Value::from_literal)
}
