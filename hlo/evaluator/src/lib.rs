//! `hlo-evaluator`: the reference evaluator of HLO, as a library.
//!
//! It runs a module on host [`Literal`]s one instruction at a time, with the
//! semantics every backend is judged by. The Interpreter platform is a thin
//! layer over it (device buffers in, device buffers out); the passes' constant
//! folding calls [`array_ops::evaluate_array_op`], so a folded constant holds
//! the bits the reference computes at run time; tests and tools evaluate whole
//! modules through [`PreparedModule`]. It knows nothing of devices, streams or
//! registries: what it needs from its host (custom calls, timing) it asks
//! through [`EvalHooks`].
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
//! Dispatch is one `match` on [`Op`]: ops whose value depends on their array
//! operands alone (elementwise ops from `hlo_semantics`, the single definition
//! every backend shares, and plain data movement) are in [`array_ops`]; the
//! evaluator's own ops live in [`ops`] (data movement, randomness, batch norm)
//! and in this crate's [`control`] (while/conditional/call/map) and
//! [`collectives`]; everything else is offered to [`kernels::kernel_for`].
//! An op nobody handles is `Unimplemented`, naming the op and the instruction.
//!
//! Every error leaving an instruction is prefixed with the instruction's name and
//! opcode, so a failure deep in a loop body reads as a path:
//! `%while.3 (while): %dot.7 (dot): ...`.
//!
//! # Threading
//! An [`Evaluator`] runs on one thread. Replicas of one run are one evaluator
//! each, on threads of their own, meeting at collectives through a rendezvous
//! keyed by run id ([`collectives`]).

pub mod array_ops;
pub mod kernels;
pub mod ops;

pub mod collectives;
pub mod control;
pub mod plan;
pub mod shadow;
pub mod value;

use crate::kernels::CallComputation;
use crate::ops::rng::SeededRng;
use collectives::CollectiveContext;
use hlo_ir::{ArrayShape, Error, Literal, Result, Scalar};
use hlo_ir::{CompId, HloComputation, HloInstruction, HloModule, InstrId, Op};
use plan::ModulePlan;
use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;
use std::time::Instant;
use value::Value;

/// What the evaluator needs from the platform that runs it. The evaluator
/// itself knows nothing of devices or registries; a platform (the Interpreter)
/// or a tool supplies these.
///
/// Called from the evaluating thread; with replicas, from one thread per
/// replica at once, hence `Send + Sync`.
pub trait EvalHooks: Send + Sync {
    /// Runs a `custom-call` instruction on host values and returns its result
    /// (checked against the instruction's shape by the evaluator).
    fn custom_call(&self, instr: &HloInstruction, operands: &[&Literal]) -> Result<Literal>;

    /// Whether [`EvalHooks::instruction_done`] wants to be called (reading
    /// the clock per instruction costs time, so only when asked).
    fn wants_timing(&self) -> bool {
        false
    }

    /// Called after each instruction when [`EvalHooks::wants_timing`] says so,
    /// with the instant it started.
    fn instruction_done(&self, instr: &HloInstruction, started: Instant, replica: usize) {
        let _ = (instr, started, replica);
    }

    /// Called once per iteration of any `while` loop, for progress reports.
    fn loop_iteration(&self) {}
}

/// What one execution runs with (from `RunOptions`).
#[derive(Clone)]
pub struct RunContext {
    pub replica: usize,
    pub partition: usize,
    pub replica_count: usize,
    pub partition_count: usize,
    pub run_id: u64,
    pub rng_seed: u64,
    /// What the evaluator asks of whoever runs it: custom calls and timing.
    /// Without hooks a custom call is `Unimplemented` and nothing is timed.
    pub hooks: Option<Arc<dyn EvalHooks>>,
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
            hooks: None,
            while_step_limit: None,
        }
    }
}

impl std::fmt::Debug for RunContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunContext")
            .field("replica", &self.replica)
            .field("partition", &self.partition)
            .field("replica_count", &self.replica_count)
            .field("partition_count", &self.partition_count)
            .field("run_id", &self.run_id)
            .field("rng_seed", &self.rng_seed)
            .field("hooks", &self.hooks.is_some())
            .field("while_step_limit", &self.while_step_limit)
            .finish()
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

/// `ResourceExhausted` naming the instruction when its large result (see
/// `ComputationPlan::probe_bytes`) cannot be allocated.
fn check_result_allocatable(instr: &HloInstruction, need: usize) -> Result<()> {
    hlo_ir::literal::AlignedBytes::try_zeroed(need)
        .map(drop)
        .map_err(|_| {
            Error::resource_exhausted(format!(
                "%{} needs {need} bytes for its result {}, more than can be allocated",
                instr.name, instr.shape
            ))
        })
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
        // Nested computations recurse through here: see `hlo_ir::stack`.
        hlo_ir::stack::deep(|| self.eval_computation_on_this_stack(comp_id, args))
    }

    fn eval_computation_on_this_stack(
        &mut self,
        comp_id: CompId,
        args: Vec<Value>,
    ) -> Result<Value> {
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
            if plan.probe_bytes[i] > 0 {
                check_result_allocatable(instr, plan.probe_bytes[i])?;
            }
            let started = self
                .ctx
                .hooks
                .as_ref()
                .filter(|h| h.wants_timing())
                .map(|_| Instant::now());
            let value = match (plan.contractions[i], product) {
                (Some((_, how)), Some((a, b))) => contract(how, &a, &b, operands.first()),
                _ => {
                    self.eval_instruction(comp_id, InstrId(i as u32), instr, operands, &mut params)
                }
            }
            .map_err(|e| e.context(format!("%{} ({})", instr.name, instr.opcode())))?;
            if let (Some(hooks), Some(start)) = (&self.ctx.hooks, started) {
                hooks.instruction_done(instr, start, self.ctx.replica);
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
            Op::Map { to_apply, .. } => {
                let args: Vec<&Literal> = (0..operands.len()).map(arg).collect::<Result<_>>()?;
                lit(control::map(self, *to_apply, &args, array_result()?)?)
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
            Op::Call { to_apply, .. } => self.eval_computation(*to_apply, operands),
            Op::Fusion { calls, .. } => self.eval_computation(*calls, operands),
            Op::CustomCall(call) => {
                let literals: Vec<Literal> = operands.iter().map(Value::to_literal).collect();
                let refs: Vec<&Literal> = literals.iter().collect();
                let out = match &self.ctx.hooks {
                    Some(hooks) => hooks.custom_call(instr, &refs)?,
                    None => {
                        return Err(Error::unimplemented(format!(
                            "custom-call: this evaluation has no custom-call handler (RunContext::hooks) for target {:?}",
                            call.target
                        )))
                    }
                };
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
            // The asynchronous pairs run as one: the start does the work (a
            // run is synchronous, so there is nothing to overlap) and the done
            // only hands on its result. An all-reduce-start's value is the
            // result itself; the other starts' values are tuples whose
            // element 1 is the result.
            Op::AllReduceDone => operands
                .into_iter()
                .next()
                .ok_or_else(|| Error::invalid_argument("all-reduce-done needs an operand")),
            Op::AllGatherDone | Op::CollectivePermuteDone => match operands.into_iter().next() {
                Some(Value::Tuple(mut elements)) if elements.len() >= 2 => {
                    Ok(elements.swap_remove(1))
                }
                _ => Err(Error::invalid_argument(format!(
                    "{} %{} needs the tuple its start returns",
                    instr.opcode(),
                    instr.name
                ))),
            },
            Op::AllReduce { .. }
            | Op::AllReduceStart { .. }
            | Op::AllGather { .. }
            | Op::AllGatherStart { .. }
            | Op::ReduceScatter { .. }
            | Op::AllToAll { .. }
            | Op::CollectivePermute { .. }
            | Op::CollectivePermuteStart { .. }
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

            // ---- ops whose value depends on their array operands alone ----
            other if array_ops::is_array_op(other) => {
                let args: Vec<&Literal> = (0..operands.len()).map(arg).collect::<Result<_>>()?;
                lit(array_ops::evaluate_array_op(other, &args, &instr.shape)?)
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
    how: hlo_semantics::contraction::Contraction,
    a: &Value,
    b: &Value,
    c: Option<&Value>,
) -> Result<Value> {
    let c = c.ok_or_else(|| Error::internal("a contracted add lost its other operand"))?;
    hlo_semantics::contraction::fused_multiply_add(how, a.array()?, b.array()?, c.array()?)
        .map(Value::from_literal)
}

/// A module planned for evaluation: the plan (use counts, liveness, constants,
/// contraction pairs) is built once and every [`PreparedModule::evaluate`] reuses
/// it. Shareable across threads.
pub struct PreparedModule {
    module: HloModule,
    plan: ModulePlan,
}

impl PreparedModule {
    /// Plans `module`. `contract` chooses XLA CPU's floating-point contraction
    /// (a single-use multiply feeding an add becomes one FMA; see
    /// `hlo_semantics::contraction`) or HLO's op-by-op rounding.
    pub fn new(module: HloModule, contract: bool) -> Result<Self> {
        let plan = ModulePlan::new(&module, contract)?;
        Ok(PreparedModule { module, plan })
    }

    /// The module being evaluated.
    pub fn module(&self) -> &HloModule {
        &self.module
    }

    /// The plan built for it.
    pub fn plan(&self) -> &ModulePlan {
        &self.plan
    }

    /// Evaluates the entry computation on `args`, one per entry parameter.
    pub fn evaluate(&self, args: Vec<Literal>, ctx: &RunContext) -> Result<Literal> {
        let params = self.module.entry_program_shape().parameters;
        if params.len() != args.len() {
            return Err(Error::invalid_argument(format!(
                "the entry computation takes {} arguments; {} were given",
                params.len(),
                args.len()
            )));
        }
        let mut evaluator = Evaluator::new(&self.module, &self.plan, ctx);
        Ok(evaluator
            .run_entry(args.into_iter().map(Value::from_literal).collect())?
            .into_literal())
    }
}
