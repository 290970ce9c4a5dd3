//! The HLO verifier: structural rules and shape inference over a whole module.
//!
//! [`verify_module`] runs in four passes, each relying on the ones before, so that
//! no check ever indexes with an id it has not validated (the verifier runs on
//! parsed, untrusted text and must not panic):
//!
//! 1. **Structure** — the entry id is in range; every computation has
//!    instructions and a root in range; every operand and control predecessor is
//!    an earlier instruction of the same computation; instruction names are unique
//!    in the module and computation names unique; parameter numbers are exactly
//!    `0..n`; called computation ids are in range; shapes are well formed (layouts
//!    are permutations of the dimensions).
//! 2. **Call graph** — no computation calls itself, directly or through others.
//! 3. **Shapes** — every instruction's shape is inferred from its operands with
//!    [`infer_shape`] (which also checks that called computations have the
//!    signature the caller needs) and compared with the declared shape, ignoring
//!    layouts and dynamic-dimension markers.
//! 4. **Module header** — `entry_computation_layout`, `input_output_alias` and
//!    `buffer_donor` agree with the entry computation.
//!
//! The first violation is returned as an `InvalidArgument` error that names the
//! computation and instruction (`%name`), after the instruction's `line:column`
//! when it was parsed from text, and, for shape errors, the opcode and the
//! shapes involved.

use super::shape_inference::{infer_shape, CalledShapes};
use super::{CompId, HloComputation, HloInstruction, HloModule, Op};
use crate::error::{Error, Result};
use crate::shape::{ProgramShape, Shape};
use std::collections::HashMap;

/// Checks every rule listed in the module documentation; `Ok` means the module is
/// well formed and every declared shape is what its operation produces.
pub fn verify_module(module: &HloModule) -> Result<()> {
    check_structure(module)?;
    check_call_graph(module)?;
    // Signatures are computed once: a computation may be called many times.
    let signatures = module
        .computations
        .iter()
        .map(program_shape)
        .collect::<Result<Vec<_>>>()?;
    let called = ModuleSignatures {
        module,
        signatures: &signatures,
    };
    for comp in &module.computations {
        for instr in &comp.instructions {
            verify_instruction(comp, instr, &called)?;
        }
    }
    check_header(module)
}

/// Infers the shape of one instruction of a structurally valid computation and
/// compares it with the declared shape.
fn verify_instruction(
    comp: &HloComputation,
    instr: &HloInstruction,
    called: &dyn CalledShapes,
) -> Result<()> {
    let operands: Vec<&Shape> = instr
        .operands
        .iter()
        .filter_map(|id| comp.instructions.get(id.index()).map(|o| &o.shape))
        .collect();
    let here = || place(comp, instr);
    let inferred = infer_shape(&instr.op, &operands, &instr.shape, called)
        .map_err(|e| Error::invalid_argument(format!("{}: {}", here(), e.message())))?;
    if !inferred.compatible(&instr.shape) {
        let given: Vec<String> = operands
            .iter()
            .map(|s| s.without_layout().to_string())
            .collect();
        return Err(Error::invalid_argument(format!(
            "{}: {}: declared shape {} differs from the shape {} inferred from its operands ({})",
            here(),
            instr.opcode(),
            instr.shape.without_layout(),
            inferred,
            given.join(", ")
        )));
    }
    Ok(())
}

/// How a message names an instruction: `computation %c, instruction %i`, after
/// the instruction's `line:column` in the text it was parsed from, if any.
fn place(comp: &HloComputation, instr: &HloInstruction) -> String {
    format!(
        "{}computation %{}, instruction %{}",
        instr.source, comp.name, instr.name
    )
}

/// Signatures of a module's computations for [`infer_shape`].
struct ModuleSignatures<'a> {
    module: &'a HloModule,
    signatures: &'a [ProgramShape],
}

impl CalledShapes for ModuleSignatures<'_> {
    fn program_shape(&self, id: CompId) -> Result<ProgramShape> {
        self.signatures.get(id.index()).cloned().ok_or_else(|| {
            Error::invalid_argument(format!(
                "computation #{} does not exist (the module has {})",
                id.0,
                self.signatures.len()
            ))
        })
    }

    fn computation_name(&self, id: CompId) -> String {
        match self.module.computations.get(id.index()) {
            Some(c) => format!("%{}", c.name),
            None => format!("computation #{}", id.0),
        }
    }
}

/// A computation's signature without trusting its root id.
fn program_shape(comp: &HloComputation) -> Result<ProgramShape> {
    let root = comp.instructions.get(comp.root.index()).ok_or_else(|| {
        Error::invalid_argument(format!(
            "computation %{} has root #{} but {} instructions",
            comp.name,
            comp.root.0,
            comp.instructions.len()
        ))
    })?;
    Ok(ProgramShape {
        parameters: comp
            .parameters()
            .into_iter()
            .filter_map(|id| comp.instructions.get(id.index()).map(|p| p.shape.clone()))
            .collect(),
        result: root.shape.clone(),
    })
}

// ------------------------------------------------------------------ pass 1

fn check_structure(module: &HloModule) -> Result<()> {
    let count = module.computations.len();
    if module.entry.index() >= count {
        return Err(Error::invalid_argument(format!(
            "the entry computation id #{} is out of range: the module has {count} computations",
            module.entry.0
        )));
    }
    let mut comp_names: HashMap<&str, usize> = HashMap::new();
    let mut instr_names: HashMap<&str, &str> = HashMap::new();
    for comp in &module.computations {
        if comp_names.insert(&comp.name, 0).is_some() {
            return Err(Error::invalid_argument(format!(
                "two computations are named %{}",
                comp.name
            )));
        }
        let n = comp.instructions.len();
        if n == 0 {
            return Err(Error::invalid_argument(format!(
                "computation %{} has no instructions",
                comp.name
            )));
        }
        if comp.root.index() >= n {
            return Err(Error::invalid_argument(format!(
                "computation %{}: root id #{} is out of range ({n} instructions)",
                comp.name, comp.root.0
            )));
        }
        let mut params: Vec<(usize, &str)> = Vec::new();
        for (i, instr) in comp.instructions.iter().enumerate() {
            let here = || place(comp, instr);
            if instr.name.is_empty() {
                return Err(Error::invalid_argument(format!(
                    "computation %{}: instruction #{i} has an empty name",
                    comp.name
                )));
            }
            if let Some(other) = instr_names.insert(&instr.name, &comp.name) {
                return Err(Error::invalid_argument(format!(
                    "{}: the name is already used in computation %{other} (instruction names must be unique in the module)",
                    here()
                )));
            }
            for (what, ids) in [
                ("operand", &instr.operands),
                ("control predecessor", &instr.control_predecessors),
            ] {
                for (k, id) in ids.iter().enumerate() {
                    if id.index() >= i {
                        let problem = if id.index() >= n {
                            format!("is #{}, out of range ({n} instructions)", id.0)
                        } else {
                            format!(
                                "is %{}, which is not defined before it",
                                comp.instructions[id.index()].name
                            )
                        };
                        return Err(Error::invalid_argument(format!(
                            "{}: {what} {k} {problem}",
                            here()
                        )));
                    }
                }
            }
            for callee in instr.op.called_computations() {
                if callee.index() >= count {
                    return Err(Error::invalid_argument(format!(
                        "{}: {} calls computation #{}, which does not exist ({count} computations)",
                        here(),
                        instr.opcode(),
                        callee.0
                    )));
                }
            }
            check_shape_well_formed(&instr.shape).map_err(|why| {
                Error::invalid_argument(format!("{}: shape {}: {why}", here(), instr.shape))
            })?;
            if let Op::Parameter { number } = instr.op {
                params.push((number, &instr.name));
            }
        }
        params.sort();
        for (expected, window) in params.iter().enumerate() {
            if window.0 != expected {
                let numbers: Vec<String> = params.iter().map(|p| p.0.to_string()).collect();
                return Err(Error::invalid_argument(format!(
                    "computation %{}: parameter numbers are {{{}}}, they must be 0..{} each once (%{} has number {})",
                    comp.name,
                    numbers.join(","),
                    params.len(),
                    window.1,
                    window.0
                )));
            }
        }
    }
    Ok(())
}

/// Layouts must permute the dimensions; dynamic markers cover every dimension.
fn check_shape_well_formed(shape: &Shape) -> std::result::Result<(), String> {
    match shape {
        Shape::Array(a) => {
            if !a.dynamic.is_empty() && a.dynamic.len() != a.dims.len() {
                return Err("dynamic-dimension markers do not match the rank".into());
            }
            if let Some(layout) = &a.layout {
                let m2m = &layout.minor_to_major;
                if !m2m.is_empty() {
                    let mut sorted = m2m.clone();
                    sorted.sort_unstable();
                    if !sorted.iter().copied().eq(0..a.dims.len()) {
                        return Err(format!(
                            "layout {layout} is not a permutation of the {} dimensions",
                            a.dims.len()
                        ));
                    }
                }
            }
            Ok(())
        }
        Shape::Tuple(t) => t.iter().try_for_each(check_shape_well_formed),
        Shape::Token => Ok(()),
    }
}

// ------------------------------------------------------------------ pass 2

/// Rejects cycles in the call graph, naming the computations on the cycle.
fn check_call_graph(module: &HloModule) -> Result<()> {
    let n = module.computations.len();
    let callees: Vec<Vec<CompId>> = module
        .computations
        .iter()
        .map(|c| {
            let mut v: Vec<CompId> = c
                .instructions
                .iter()
                .flat_map(|i| i.op.called_computations())
                .collect();
            v.sort();
            v.dedup();
            v
        })
        .collect();
    // 0 = unvisited, 1 = on the current path, 2 = finished.
    let mut state = vec![0u8; n];
    for start in 0..n {
        if state[start] != 0 {
            continue;
        }
        // Iterative depth-first search; `path` holds (computation, next callee).
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (c, ref mut next)) = path.last_mut() {
            match callees[c].get(*next) {
                Some(callee) => {
                    *next += 1;
                    let d = callee.index();
                    match state.get(d) {
                        Some(0) => {
                            state[d] = 1;
                            path.push((d, 0));
                        }
                        Some(1) => {
                            let from = path.iter().position(|&(p, _)| p == d).unwrap_or(0);
                            let mut names: Vec<String> = path[from..]
                                .iter()
                                .map(|&(p, _)| format!("%{}", module.computations[p].name))
                                .collect();
                            names.push(format!("%{}", module.computations[d].name));
                            return Err(Error::invalid_argument(format!(
                                "the call graph has a cycle: {}",
                                names.join(" calls ")
                            )));
                        }
                        _ => {}
                    }
                }
                None => {
                    state[c] = 2;
                    path.pop();
                }
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ pass 4

fn check_header(module: &HloModule) -> Result<()> {
    let entry = module.entry();
    let signature = program_shape(entry)?;
    if let Some(layout) = &module.config.entry_computation_layout {
        if layout.parameters.len() != signature.parameters.len() {
            return Err(Error::invalid_argument(format!(
                "entry_computation_layout has {} parameters, the entry computation %{} has {}",
                layout.parameters.len(),
                entry.name,
                signature.parameters.len()
            )));
        }
        for (i, (l, p)) in layout
            .parameters
            .iter()
            .zip(&signature.parameters)
            .enumerate()
        {
            if !l.compatible(p) {
                return Err(Error::invalid_argument(format!(
                    "entry_computation_layout parameter {i} is {}, the entry computation %{} has {}",
                    l.without_layout(),
                    entry.name,
                    p.without_layout()
                )));
            }
        }
        if !layout.result.compatible(&signature.result) {
            return Err(Error::invalid_argument(format!(
                "entry_computation_layout result is {}, the entry computation %{} returns {}",
                layout.result.without_layout(),
                entry.name,
                signature.result.without_layout()
            )));
        }
    }
    for alias in &module.config.input_output_alias {
        let output = signature.result.subshape(&alias.output_index);
        let param = signature
            .parameters
            .get(alias.parameter_number)
            .and_then(|p| p.subshape(&alias.parameter_index));
        match (output, param) {
            (Some(o), Some(p)) if o.compatible(p) => {}
            _ => {
                return Err(Error::invalid_argument(format!(
                    "input_output_alias pairs output {:?} with parameter {} index {:?}, which do not exist in the entry signature {} or differ in shape",
                    alias.output_index,
                    alias.parameter_number,
                    alias.parameter_index,
                    signature
                )))
            }
        }
    }
    for (param, index) in &module.config.buffer_donor {
        let exists = signature
            .parameters
            .get(*param)
            .and_then(|p| p.subshape(index))
            .is_some();
        if !exists {
            return Err(Error::invalid_argument(format!(
                "buffer_donor names parameter {param} index {index:?}, which does not exist in the entry signature {}",
                signature
            )));
        }
    }
    Ok(())
}
