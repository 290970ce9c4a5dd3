//! [`OpByOpProgram`]: a program run one instruction at a time on literals,
//! where the backend supplies only how each op computes ([`OpKernels`]).
//!
//! Many first backends — simulators, a device reached through host buffers,
//! a CPU port — compute op by op. Everything around the ops is the same for
//! all of them and lives here: binding parameters, constants, tuples and
//! `get-tuple-element`, `while` (with the run's step limit) and `conditional`
//! (a `pred` picks branch 0 when true; an out-of-range index runs the last
//! branch, as in XLA), and calling subcomputations for the kernels that take
//! them (`reduce`, `scatter`, `sort`, ...). Errors name the instruction and
//! its computation; nesting is bounded, so a malformed module cannot overflow
//! the stack.
//!
//! Floating-point contraction follows XLA CPU, as the Interpreter does: under
//! `fp_contract` (on unless the compile options say `off`), an f32/f64 `add`
//! or `subtract` that is the only user of a `multiply` is computed as one
//! fused multiply-add ([`OpKernels::fused_multiply_add`]), and the multiply
//! is not computed on its own. The plan (which pairs contract, which
//! instructions are dead) is the reference evaluator's, made once per module.

use super::executable::LiteralProgram;
use crate::evaluator::kernels::CallComputation;
use crate::evaluator::plan::ModulePlan;
use crate::hlo::{CompId, HloComputation, HloInstruction, Op};
use crate::semantics::contraction::{self, Contraction};
use crate::{CompileOptions, Error, HloModule, Literal, Progress, Result, RunOptions, Scalar};

/// How a backend computes each op that is not structural or control flow.
///
/// # Threading
/// Called from stream work, possibly from several executions at once.
pub trait OpKernels: Send + Sync + 'static {
    /// The value of `instr` on `operands` (one literal per operand, row-major).
    /// `calls` evaluates the computations the instruction names (a reducer, a
    /// comparator). An op the backend does not have is `Unimplemented`.
    fn compute(
        &self,
        instr: &HloInstruction,
        operands: &[&Literal],
        calls: &mut dyn CallComputation,
    ) -> Result<Literal>;

    /// `a * b + c` with one rounding, arranged as `how` says (`c` is the
    /// add's or subtract's other operand): the multiply-adds XLA CPU
    /// contracts. The default computes it with the shared semantics.
    fn fused_multiply_add(
        &self,
        how: Contraction,
        a: &Literal,
        b: &Literal,
        c: &Literal,
    ) -> Result<Literal> {
        contraction::fused_multiply_add(how, a, b, c)
    }
}

/// A module run op by op with a backend's [`OpKernels`].
pub struct OpByOpProgram<K> {
    module: HloModule,
    plan: ModulePlan,
    kernels: K,
}

impl<K: OpKernels> OpByOpProgram<K> {
    /// Plans `module` (contraction as `options`' `fp_contract` says).
    pub fn new(module: HloModule, kernels: K, options: &CompileOptions) -> Result<Self> {
        let contract = contraction::fp_contract_option(options.debug_option("fp_contract"))?;
        let plan = ModulePlan::new(&module, contract)?;
        Ok(OpByOpProgram {
            module,
            plan,
            kernels,
        })
    }
}

impl<K: OpKernels> LiteralProgram for OpByOpProgram<K> {
    fn module(&self) -> &HloModule {
        &self.module
    }

    fn run(&self, arguments: Vec<Literal>, options: &RunOptions) -> Result<Literal> {
        let mut run = Run {
            module: &self.module,
            plan: &self.plan,
            kernels: &self.kernels,
            while_step_limit: options.while_step_limit,
            progress: options.progress.as_deref(),
            depth: 0,
        };
        run.eval(self.module.entry, arguments)
    }
}

/// One execution: evaluates computations, recursing into loop bodies,
/// branches and the computations kernels call.
struct Run<'m, K> {
    module: &'m HloModule,
    plan: &'m ModulePlan,
    kernels: &'m K,
    while_step_limit: Option<u64>,
    progress: Option<&'m Progress>,
    depth: usize,
}

/// Computations nest at most this deep (a malformed module could recurse).
const MAX_DEPTH: usize = 256;

impl<K: OpKernels> Run<'_, K> {
    fn eval(&mut self, comp: CompId, args: Vec<Literal>) -> Result<Literal> {
        if self.depth >= MAX_DEPTH {
            return Err(Error::resource_exhausted(format!(
                "computations nested deeper than {MAX_DEPTH}"
            )));
        }
        self.depth += 1;
        let result = self.instructions(comp, args);
        self.depth -= 1;
        result
    }

    fn instructions(&mut self, id: CompId, args: Vec<Literal>) -> Result<Literal> {
        let (module, plans) = (self.module, self.plan);
        let (comp, plan) = module
            .computations
            .get(id.index())
            .zip(plans.computations.get(id.index()))
            .ok_or_else(|| Error::invalid_argument(format!("no computation #{}", id.0)))?;
        let mut values: Vec<Literal> = Vec::with_capacity(comp.instructions.len());
        for (i, instr) in comp.instructions.iter().enumerate() {
            // Dead code is not run; a multiply absorbed into an FMA is run
            // there. Their slots hold a placeholder nothing reads.
            if !plan.live[i] || plan.deferred[i] {
                values.push(Literal::token());
                continue;
            }
            if let Some((k, how)) = plan.contractions[i] {
                let value = self
                    .fused(comp, instr, k, how, &values)
                    .map_err(|e| e.context(format!("%{} in {}", instr.name, comp.name)))?;
                values.push(value);
                continue;
            }
            let operands = instr
                .operands
                .iter()
                .map(|id| values.get(id.index()))
                .collect::<Option<Vec<&Literal>>>()
                .ok_or_else(|| Error::internal("an operand follows its user"))?;
            let value = self
                .instruction(instr, &operands, &args)
                .map_err(|e| e.context(format!("%{} in {}", instr.name, comp.name)))?;
            values.push(value);
        }
        values
            .into_iter()
            .nth(comp.root.index())
            .ok_or_else(|| Error::internal("no root value"))
    }

    /// The contracted `instr` (an add or subtract whose operand `k` is a
    /// multiply used only here).
    fn fused(
        &self,
        comp: &HloComputation,
        instr: &HloInstruction,
        k: usize,
        how: Contraction,
        values: &[Literal],
    ) -> Result<Literal> {
        let value = |id: Option<&crate::hlo::InstrId>| {
            id.and_then(|id| values.get(id.index()))
                .ok_or_else(|| Error::internal("a contracted operand is missing"))
        };
        let multiply = instr
            .operands
            .get(k)
            .and_then(|m| comp.instructions.get(m.index()))
            .ok_or_else(|| Error::internal("a contraction names no multiply"))?;
        let (a, b) = (
            value(multiply.operands.first())?,
            value(multiply.operands.get(1))?,
        );
        let c = value(instr.operands.get(1 - k))?;
        self.kernels.fused_multiply_add(how, a, b, c)
    }

    fn instruction(
        &mut self,
        instr: &HloInstruction,
        operands: &[&Literal],
        args: &[Literal],
    ) -> Result<Literal> {
        let operand = |i: usize| {
            operands
                .get(i)
                .copied()
                .ok_or_else(|| Error::invalid_argument(format!("operand {i} is missing")))
        };
        Ok(match &instr.op {
            Op::Parameter { number } => args
                .get(*number)
                .cloned()
                .ok_or_else(|| Error::internal("missing argument"))?,
            Op::Constant { literal } => literal.clone(),
            Op::Tuple => Literal::tuple(operands.iter().map(|l| (*l).clone()).collect()),
            Op::GetTupleElement { index } => operand(0)?
                .tuple_elements()
                .get(*index)
                .cloned()
                .ok_or_else(|| Error::invalid_argument("tuple index out of range"))?,
            Op::While { condition, body } => self.while_loop(*condition, *body, operand(0)?)?,
            Op::Conditional { branches } => {
                let index = match operand(0)?.get(0)? {
                    // A pred selects branch 0 when true, 1 when false.
                    Scalar::Pred(p) => usize::from(!p),
                    // An out-of-range index runs the last branch, as in XLA.
                    s => usize::try_from(s.to_i64().unwrap_or(-1)).unwrap_or(usize::MAX),
                };
                let k = index.min(branches.len().saturating_sub(1));
                let branch = branches
                    .get(k)
                    .ok_or_else(|| Error::invalid_argument("conditional without branches"))?;
                let arg = operand(k + 1)?.clone();
                self.eval(*branch, vec![arg])?
            }
            _ => {
                let kernels = self.kernels;
                kernels.compute(instr, operands, self)?
            }
        })
    }

    fn while_loop(&mut self, condition: CompId, body: CompId, init: &Literal) -> Result<Literal> {
        let mut state = init.clone();
        let mut steps = 0u64;
        while self.eval(condition, vec![state.clone()])?.get(0)? == Scalar::Pred(true) {
            steps += 1;
            if let Some(p) = self.progress {
                p.loop_iteration();
            }
            if self.while_step_limit.is_some_and(|limit| steps > limit) {
                return Err(Error::resource_exhausted(format!(
                    "while loop ran more than {steps} steps (the run's step limit)"
                )));
            }
            state = self.eval(body, vec![state])?;
        }
        Ok(state)
    }
}

/// Kernels (dot, reduce, scatter, gather) call subcomputations through this.
impl<K: OpKernels> CallComputation for Run<'_, K> {
    fn computation(&self, id: CompId) -> &HloComputation {
        self.module.computation(id)
    }

    fn call(&mut self, id: CompId, args: &[Literal]) -> Result<Literal> {
        self.eval(id, args.to_vec())
    }
}
