//! Differential testing support: running a program on a platform without
//! letting a crash or a hang take the test down, comparing with the reference
//! under per-output tolerances, writing reproducers, and shrinking a failing
//! program to a small one.
//!
//! # Minimizing
//!
//! [`minimize`] works on the entry computation of a failing module and keeps a
//! change only if the failure persists (the same kind: a mismatch stays a
//! mismatch, an error stays an error):
//! 1. a mismatch is narrowed to the first output leaf that differs (the root
//!    becomes that instruction);
//! 2. the root moves to an earlier instruction (for exact outputs only, whose
//!    ancestors are exact too);
//! 3. *cut*: an instruction is replaced by a new parameter whose argument is
//!    the value the reference computes for it — everything upstream disappears,
//!    the numbers downstream stay the same;
//! 4. *bypass*: an instruction is replaced by one of its operands of the same
//!    shape;
//! 5. after every change, dead instructions, unused parameters and unreachable
//!    computations are removed.
//!
//! Candidates nearest the root are tried first, so early cuts remove the most.
//! The search stops when no change helps or the time budget is spent; what it
//! returns always fails.

use crate::random_program::OutputCheck;
use crate::{compare, run_program};
use platform_api::hlo::{CompId, InstrId, Op};
use platform_api::{HloModule, Literal, Result};
use std::path::{Path, PathBuf};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// The reference platform.
pub const REFERENCE: &str = "Interpreter";

/// How a platform disagreed with the reference.
#[derive(Clone, Debug, PartialEq)]
pub enum Failure {
    /// The platform returned an error (or panicked, or hung) where the
    /// reference produced a result.
    Error(String),
    /// A result differs: which output leaf, and the comparison's description
    /// (the first differing elements).
    Mismatch { leaf: usize, detail: String },
}

impl Failure {
    fn same_kind(&self, other: &Failure) -> bool {
        matches!(
            (self, other),
            (Failure::Error(_), Failure::Error(_))
                | (Failure::Mismatch { .. }, Failure::Mismatch { .. })
        )
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Failure::Error(e) => write!(f, "error: {e}"),
            Failure::Mismatch { leaf, detail } => write!(f, "output {leaf}: {detail}"),
        }
    }
}

/// Runs `module` on `platform` in a thread of its own, so that a panic becomes
/// an error and a run longer than `timeout` is reported (and abandoned) instead
/// of hanging the test. Returns the result's array leaves.
pub fn run_guarded(
    platform: &str,
    module: &HloModule,
    args: &[Literal],
    timeout: Duration,
) -> std::result::Result<Vec<Literal>, String> {
    let (tx, rx) = mpsc::channel();
    let (platform_name, module, args) = (platform.to_string(), module.clone(), args.to_vec());
    let spawned = std::thread::Builder::new()
        .name(format!("difftest-{platform}"))
        .spawn(move || {
            let outcome = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                run_program(&platform_name, module, &args)
            }));
            let _ = tx.send(outcome);
        });
    if let Err(e) = spawned {
        return Err(format!("could not start a thread: {e}"));
    }
    match rx.recv_timeout(timeout) {
        Ok(Ok(Ok(leaves))) => Ok(leaves),
        Ok(Ok(Err(e))) => Err(e.to_string()),
        Ok(Err(panic)) => Err(format!("panicked: {}", panic_message(&panic))),
        Err(_) => Err(format!("no result within {timeout:?} (hang?)")),
    }
}

fn panic_message(panic: &Box<dyn std::any::Any + Send>) -> String {
    if let Some(s) = panic.downcast_ref::<&str>() {
        s.to_string()
    } else if let Some(s) = panic.downcast_ref::<String>() {
        s.clone()
    } else {
        "(no message)".to_string()
    }
}

/// Compares a platform's leaves with the reference's under `checks`.
pub fn check(
    got: &[Literal],
    want: &[Literal],
    checks: &[OutputCheck],
) -> std::result::Result<(), Failure> {
    if got.len() != want.len() {
        return Err(Failure::Error(format!(
            "{} output leaves, the reference has {}",
            got.len(),
            want.len()
        )));
    }
    for (leaf, (g, w)) in got.iter().zip(want).enumerate() {
        let atol = checks.get(leaf).map_or(0.0, |c| c.atol);
        compare(g, w, 0.0, atol).map_err(|detail| Failure::Mismatch {
            leaf,
            detail: format!("{detail} (atol {atol:e})"),
        })?;
    }
    Ok(())
}

/// Runs `module` on the reference and on `platform` and compares.
/// `Err` of the outer result: the reference itself failed (the program, not
/// the platform, is at fault).
pub fn differ(
    platform: &str,
    module: &HloModule,
    args: &[Literal],
    checks: &[OutputCheck],
    timeout: Duration,
) -> std::result::Result<std::result::Result<(), Failure>, String> {
    let want = run_guarded(REFERENCE, module, args, timeout)?;
    Ok(match run_guarded(platform, module, args, timeout) {
        Ok(got) => check(&got, &want, checks),
        Err(e) => Err(Failure::Error(e)),
    })
}

/// Writes `module.hlo` and `arg<i>.npy` into `dir` (created) and returns the
/// `hlorun compare` command that replays the comparison.
pub fn write_case(
    dir: &Path,
    platform: &str,
    module: &HloModule,
    args: &[Literal],
    atol: f64,
) -> Result<String> {
    std::fs::create_dir_all(dir)?;
    let hlo = dir.join("module.hlo");
    std::fs::write(&hlo, module.to_text())?;
    let mut command = format!("hlorun compare {}", hlo.display());
    for (i, a) in args.iter().enumerate() {
        let path = dir.join(format!("arg{i}.npy"));
        a.write_npy(&path)?;
        command.push_str(&format!(" {}", path.display()));
    }
    command.push_str(&format!(
        " --platform {} --rtol 0 --atol {atol:e}",
        platform.to_lowercase()
    ));
    Ok(command)
}

/// Where reproducers go: `$DIFFTEST_DIR`, else `<temp>/difftest`.
pub fn output_dir() -> PathBuf {
    std::env::var_os("DIFFTEST_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| std::env::temp_dir().join("difftest"))
}

// ---------------------------------------------------------------------------
// Minimizing

/// A failing program and how it fails.
#[derive(Clone, Debug)]
pub struct Reproducer {
    pub module: HloModule,
    pub args: Vec<Literal>,
    pub checks: Vec<OutputCheck>,
    pub failure: Failure,
}

impl Reproducer {
    /// Instructions in the entry computation.
    pub fn size(&self) -> usize {
        self.module.entry().instructions.len()
    }
}

/// Shrinks `failing` within `budget` (see the module docs). `failing.failure`
/// must be what `platform` does on it.
pub fn minimize(platform: &str, failing: Reproducer, budget: Duration) -> Reproducer {
    let timeout = Duration::from_secs(20);
    minimize_with(failing, budget, |module, args, checks| {
        match differ(platform, module, args, checks, timeout) {
            Ok(Err(f)) => Some(f),
            _ => None,
        }
    })
}

/// [`minimize`] with the failure test given: `fails(module, args, checks)`
/// says how the candidate fails, if it does.
pub fn minimize_with(
    failing: Reproducer,
    budget: Duration,
    fails: impl Fn(&HloModule, &[Literal], &[OutputCheck]) -> Option<Failure>,
) -> Reproducer {
    let deadline = Instant::now() + budget;
    let timeout = Duration::from_secs(20);
    let kind = failing.failure.clone();
    let still_fails = |module: &HloModule, args: &[Literal], checks: &[OutputCheck]| {
        if platform_api::hlo::verifier::verify_module(module).is_err() {
            return None;
        }
        fails(module, args, checks).filter(|f| f.same_kind(&kind))
    };
    let mut best = failing;
    let accept = |best: &mut Reproducer,
                  module: HloModule,
                  args: Vec<Literal>,
                  checks: Vec<OutputCheck>|
     -> bool {
        match still_fails(&module, &args, &checks) {
            Some(failure) => {
                *best = Reproducer {
                    module,
                    args,
                    checks,
                    failure,
                };
                true
            }
            None => false,
        }
    };

    // 1. Narrow a mismatch to its leaf.
    if let Failure::Mismatch { leaf, .. } = best.failure {
        let root = best.module.entry().root_instr();
        if let (Op::Tuple, Some(&id)) = (&root.op, root.operands.get(leaf)) {
            let mut module = best.module.clone();
            let entry = module.entry;
            module.computation_mut(entry).root = id;
            let checks = vec![best
                .checks
                .get(leaf)
                .copied()
                .unwrap_or(OutputCheck { atol: 0.0 })];
            let (module, args) = prune(module, &best.args);
            accept(&mut best, module, args, checks);
        }
    }

    // 2. Move the root to an earlier instruction while the failure persists.
    // Sound only for exact checks: an exact value's ancestors are exact (the
    // generator derives exact values from exact ones only); integers always are.
    'reroot: while Instant::now() < deadline {
        let exact = best.checks.len() == 1 && best.checks[0].atol == 0.0;
        let entry = best.module.entry();
        let root = entry.root;
        let mut candidates: Vec<InstrId> = entry
            .ids()
            .filter(|&id| {
                let shape = &entry.instr(id).shape;
                let float = shape
                    .element_type()
                    .is_some_and(|t| t.is_floating_or_complex());
                id != root
                    && shape.is_array()
                    && !matches!(
                        entry.instr(id).op,
                        Op::Parameter { .. } | Op::Constant { .. }
                    )
                    && (exact || (!float && best.checks.len() == 1))
            })
            .collect();
        candidates.reverse();
        for id in candidates {
            if Instant::now() >= deadline {
                break 'reroot;
            }
            let mut module = best.module.clone();
            let entry_id = module.entry;
            module.computation_mut(entry_id).root = id;
            let (module, args) = prune(module, &best.args);
            if accept(&mut best, module, args, vec![OutputCheck { atol: 0.0 }]) {
                continue 'reroot;
            }
        }
        break;
    }

    // 3-4. Cut and bypass until nothing helps.
    'outer: while Instant::now() < deadline {
        let entry = best.module.entry();
        let root = entry.root;
        let mut candidates: Vec<InstrId> = entry
            .ids()
            .filter(|&id| {
                id != root
                    && !matches!(
                        entry.instr(id).op,
                        Op::Parameter { .. } | Op::Constant { .. }
                    )
                    && entry.instr(id).shape.is_array()
            })
            .collect();
        candidates.reverse();
        for id in candidates {
            if Instant::now() >= deadline {
                break 'outer;
            }
            // Cut: the reference's value of `id` becomes an argument.
            if let Some(value) = reference_value(&best.module, &best.args, id, timeout) {
                let (module, args) = cut(&best.module, &best.args, id, value);
                let checks = best.checks.clone();
                if accept(&mut best, module, args, checks) {
                    continue 'outer;
                }
            }
            // Bypass: use an operand of the same shape instead.
            let instr = best.module.entry().instr(id).clone();
            for &operand in &instr.operands {
                let same = best.module.entry().instr(operand).shape.without_layout()
                    == instr.shape.without_layout();
                if !same {
                    continue;
                }
                let (module, args) = bypass(&best.module, &best.args, id, operand);
                let checks = best.checks.clone();
                if accept(&mut best, module, args, checks) {
                    continue 'outer;
                }
            }
        }
        break;
    }
    best
}

/// The reference's value of entry instruction `id`.
fn reference_value(
    module: &HloModule,
    args: &[Literal],
    id: InstrId,
    timeout: Duration,
) -> Option<Literal> {
    let mut m = module.clone();
    let entry = m.entry;
    m.computation_mut(entry).root = id;
    // Keep every parameter so the arguments still line up.
    let mut leaves = run_guarded(REFERENCE, &m, args, timeout).ok()?;
    if leaves.len() == 1 {
        leaves.pop()
    } else {
        None
    }
}

/// `id` replaced by a new parameter holding `value`.
fn cut(
    module: &HloModule,
    args: &[Literal],
    id: InstrId,
    value: Literal,
) -> (HloModule, Vec<Literal>) {
    let mut m = module.clone();
    let entry = m.entry;
    let number = m.entry().num_parameters();
    let instr = m.computation_mut(entry).instr_mut(id);
    instr.op = Op::Parameter { number };
    instr.operands.clear();
    instr.control_predecessors.clear();
    instr.shape = instr.shape.without_layout();
    let mut args = args.to_vec();
    args.push(value);
    prune(m, &args)
}

/// Every use of `id` replaced by `operand`.
fn bypass(
    module: &HloModule,
    args: &[Literal],
    id: InstrId,
    operand: InstrId,
) -> (HloModule, Vec<Literal>) {
    let mut m = module.clone();
    let entry = m.entry;
    let comp = m.computation_mut(entry);
    for instr in &mut comp.instructions {
        for o in &mut instr.operands {
            if *o == id {
                *o = operand;
            }
        }
    }
    if comp.root == id {
        comp.root = operand;
    }
    prune(m, args)
}

/// Removes entry instructions the root does not need, renumbers the remaining
/// parameters (dropping the unused arguments), and drops computations nothing
/// reachable calls.
pub fn prune(mut module: HloModule, args: &[Literal]) -> (HloModule, Vec<Literal>) {
    module.config.entry_computation_layout = None;
    module.config.input_output_alias.clear();
    module.config.buffer_donor.clear();
    let entry_id = module.entry;
    let comp = module.computation_mut(entry_id);
    let n = comp.instructions.len();
    let mut live = vec![false; n];
    let mut stack = vec![comp.root];
    while let Some(id) = stack.pop() {
        if std::mem::replace(&mut live[id.index()], true) {
            continue;
        }
        let instr = comp.instr(id);
        stack.extend(instr.operands.iter().copied());
        stack.extend(instr.control_predecessors.iter().copied());
    }
    let mut new_index = vec![None; n];
    let mut kept = Vec::new();
    for (i, instr) in std::mem::take(&mut comp.instructions)
        .into_iter()
        .enumerate()
    {
        if live[i] {
            new_index[i] = Some(InstrId(kept.len() as u32));
            kept.push(instr);
        }
    }
    for instr in &mut kept {
        for o in instr
            .operands
            .iter_mut()
            .chain(instr.control_predecessors.iter_mut())
        {
            *o = new_index[o.index()].unwrap_or(*o);
        }
    }
    comp.root = new_index[comp.root.index()].unwrap_or(comp.root);
    // Parameters in their old order, renumbered densely.
    let mut params: Vec<(usize, usize)> = kept
        .iter()
        .enumerate()
        .filter_map(|(i, instr)| match instr.op {
            Op::Parameter { number } => Some((number, i)),
            _ => None,
        })
        .collect();
    params.sort();
    let mut new_args = Vec::new();
    for (new_number, &(old, i)) in params.iter().enumerate() {
        kept[i].op = Op::Parameter { number: new_number };
        if let Some(a) = args.get(old) {
            new_args.push(a.clone());
        }
    }
    comp.instructions = kept;
    (drop_unreachable_computations(module), new_args)
}

fn drop_unreachable_computations(mut module: HloModule) -> HloModule {
    let order = module.reachable_post_order();
    let mut new_id = vec![None; module.computations.len()];
    for (i, c) in order.iter().enumerate() {
        new_id[c.index()] = Some(CompId(i as u32));
    }
    let old = std::mem::take(&mut module.computations);
    let mut slots: Vec<Option<_>> = old.into_iter().map(Some).collect();
    for c in &order {
        if let Some(mut comp) = slots[c.index()].take() {
            for instr in &mut comp.instructions {
                instr.op.map_called(|id| new_id[id.index()].unwrap_or(id));
            }
            module.computations.push(comp);
        }
    }
    module.entry = new_id[module.entry.index()].unwrap_or(CompId(0));
    module
}

#[cfg(test)]
mod tests {
    use super::*;
    use platform_api::hlo::builder::HloBuilder;
    use platform_api::{ElementType, Shape};
    // The reference computes the values that cuts turn into arguments.
    use platform_interpreter as _;

    #[test]
    fn check_reports_the_first_differing_leaf_and_respects_tolerances() {
        let a = Literal::vector(&[1.0f32, 2.0]);
        let b = Literal::vector(&[1.0f32, 2.5]);
        let exact = OutputCheck { atol: 0.0 };
        let loose = OutputCheck { atol: 1.0 };
        assert!(check(
            &[a.clone(), a.clone()],
            &[a.clone(), b.clone()],
            &[exact, loose]
        )
        .is_ok());
        match check(
            &[a.clone(), a.clone()],
            &[b.clone(), a.clone()],
            &[exact, exact],
        ) {
            Err(Failure::Mismatch { leaf: 0, detail }) => {
                assert!(detail.contains("[1]"), "{detail}")
            }
            other => panic!("expected a mismatch of leaf 0, got {other:?}"),
        }
        assert!(matches!(
            check(std::slice::from_ref(&a), &[a.clone(), b], &[exact]),
            Err(Failure::Error(_))
        ));
    }

    /// A program where only `cosine` "fails": the minimizer must strip
    /// everything else, keeping a parameter and the cosine.
    #[test]
    fn minimize_keeps_only_what_the_failure_needs() {
        let mut b = HloBuilder::new("m");
        let x = b
            .parameter(0, Shape::array(ElementType::F32, [4]), "x")
            .unwrap();
        let y = b
            .parameter(1, Shape::array(ElementType::F32, [4]), "y")
            .unwrap();
        let e = b.exp(x).unwrap();
        let s = b.add(e, y).unwrap();
        let c = b.cos(s).unwrap();
        let t = b.tanh(c).unwrap();
        let other = b.mul(x, y).unwrap();
        let root = b.tuple(&[other, t]).unwrap();
        let module = b.build(root).unwrap();
        let args = vec![
            Literal::vector(&[0.1f32, 0.2, 0.3, 0.4]),
            Literal::vector(&[1.0f32, 2.0, 3.0, 4.0]),
        ];
        let has_cos = |m: &HloModule, _: &[Literal], _: &[OutputCheck]| {
            m.entry()
                .instructions
                .iter()
                .any(|i| i.op == Op::Unary(platform_api::hlo::UnaryOp::Cos))
                .then(|| Failure::Mismatch {
                    leaf: 0,
                    detail: "cosine".into(),
                })
        };
        let failing = Reproducer {
            module,
            args,
            checks: vec![OutputCheck { atol: 0.0 }; 2],
            failure: Failure::Mismatch {
                leaf: 1,
                detail: "cosine".into(),
            },
        };
        let small = minimize_with(failing, Duration::from_secs(30), has_cos);
        let entry = small.module.entry();
        assert_eq!(entry.instructions.len(), 2, "{}", small.module);
        assert_eq!(
            entry.root_instr().op,
            Op::Unary(platform_api::hlo::UnaryOp::Cos)
        );
        assert_eq!(small.args.len(), 1);
        // The argument is what the reference computed for the cosine's operand.
        let want = [0.1f32, 0.2, 0.3, 0.4]
            .iter()
            .zip([1.0f32, 2.0, 3.0, 4.0])
            .map(|(x, y)| x.exp() + y)
            .collect::<Vec<_>>();
        let got = small.args[0].data::<f32>().unwrap();
        for (g, w) in got.iter().zip(&want) {
            assert!((g - w).abs() <= 1e-6 * w.abs(), "{got:?} vs {want:?}");
        }
        platform_api::hlo::verifier::verify_module(&small.module).unwrap();
    }

    #[test]
    fn prune_renumbers_parameters_and_drops_their_arguments() {
        let mut b = HloBuilder::new("m");
        let x = b
            .parameter(0, Shape::scalar(ElementType::F32), "x")
            .unwrap();
        let y = b
            .parameter(1, Shape::scalar(ElementType::F32), "y")
            .unwrap();
        let _ = b.neg(x).unwrap();
        let r = b.abs(y).unwrap();
        let module = b.build(r).unwrap();
        let args = vec![Literal::scalar(1f32), Literal::scalar(2f32)];
        let (m, a) = prune(module, &args);
        platform_api::hlo::verifier::verify_module(&m).unwrap();
        assert_eq!(m.entry().instructions.len(), 2);
        assert_eq!(a, vec![Literal::scalar(2f32)]);
    }
}
