//! [`FusedGraph`]: the instructions of one fusion, seen the same way whether
//! they already form a fused computation (a `fusion` instruction's `calls`)
//! or are a candidate group inside an unfused computation (the fusion pass
//! asking whether a group could run as one block program).

use platform_api::hlo::{CompId, HloComputation, HloInstruction, InstrId, Op};
use platform_api::{Error, HloModule, Result, Shape};
use std::collections::HashMap;

/// Where a node's operand comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// An earlier node of the graph.
    Node(usize),
    /// Parameter `k` of the fusion.
    Param(usize),
}

/// One instruction of the fusion.
pub struct GraphNode<'a> {
    pub instr: &'a HloInstruction,
    pub operands: Vec<Operand>,
}

/// The instructions of a fusion in an order where operands come first, its
/// parameters and its outputs (the result leaves, in order).
pub struct FusedGraph<'a> {
    pub name: String,
    pub module: &'a HloModule,
    pub nodes: Vec<GraphNode<'a>>,
    pub params: Vec<Shape>,
    pub outputs: Vec<Operand>,
}

impl<'a> FusedGraph<'a> {
    /// The graph of fused computation `comp` (called by fusion `name`).
    pub fn from_computation(module: &'a HloModule, comp: CompId, name: &str) -> Result<Self> {
        let c: &'a HloComputation = module.computations.get(comp.index()).ok_or_else(|| {
            Error::invalid_argument(format!("%{name}: no computation #{}", comp.0))
        })?;
        let mut params = Vec::new();
        let mut map: Vec<Option<Operand>> = vec![None; c.instructions.len()];
        for id in c.parameters() {
            let instr = c.instr(id);
            if let Op::Parameter { number } = instr.op {
                if number != params.len() {
                    return Err(Error::invalid_argument(format!(
                        "{}: parameters are not numbered 0..n",
                        c.name
                    )));
                }
                params.push(instr.shape.clone());
                map[id.index()] = Some(Operand::Param(number));
            }
        }
        let root = c.root_instr();
        let root_is_tuple = matches!(root.op, Op::Tuple);
        let mut nodes = Vec::new();
        for (i, instr) in c.instructions.iter().enumerate() {
            if map[i].is_some() || (root_is_tuple && InstrId(i as u32) == c.root) {
                continue;
            }
            let operands = instr
                .operands
                .iter()
                .map(|o| {
                    map.get(o.index()).copied().flatten().ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "%{}: operand order in {}",
                            instr.name, c.name
                        ))
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            map[i] = Some(Operand::Node(nodes.len()));
            nodes.push(GraphNode { instr, operands });
        }
        let lookup = |id: InstrId| -> Result<Operand> {
            map.get(id.index())
                .copied()
                .flatten()
                .ok_or_else(|| Error::invalid_argument(format!("{}: bad root operand", c.name)))
        };
        let outputs = if root_is_tuple {
            root.operands
                .iter()
                .map(|&o| lookup(o))
                .collect::<Result<Vec<_>>>()?
        } else {
            vec![lookup(c.root)?]
        };
        Ok(FusedGraph {
            name: name.to_string(),
            module,
            nodes,
            params,
            outputs,
        })
    }

    /// The graph of instructions `members` of `comp` (in instruction order),
    /// whose operands outside the group become parameters (numbered in order
    /// of first use) and whose `outputs` are the result leaves. Also returns
    /// the instruction behind each parameter.
    pub fn from_group(
        module: &'a HloModule,
        comp: &'a HloComputation,
        members: &[InstrId],
        outputs: &[InstrId],
    ) -> Result<(Self, Vec<InstrId>)> {
        let mut index: HashMap<InstrId, usize> = HashMap::new();
        let mut param_of: HashMap<InstrId, usize> = HashMap::new();
        let mut param_ids = Vec::new();
        let mut params = Vec::new();
        let mut nodes = Vec::new();
        for &m in members {
            let instr = comp.instr(m);
            let mut operands = Vec::with_capacity(instr.operands.len());
            for &o in &instr.operands {
                if let Some(&n) = index.get(&o) {
                    operands.push(Operand::Node(n));
                } else {
                    let k = *param_of.entry(o).or_insert_with(|| {
                        param_ids.push(o);
                        params.push(comp.instr(o).shape.clone());
                        params.len() - 1
                    });
                    operands.push(Operand::Param(k));
                }
            }
            index.insert(m, nodes.len());
            nodes.push(GraphNode { instr, operands });
        }
        let outputs = outputs
            .iter()
            .map(|o| {
                index
                    .get(o)
                    .map(|&n| Operand::Node(n))
                    .ok_or_else(|| Error::internal("a group output is not a member"))
            })
            .collect::<Result<Vec<_>>>()?;
        Ok((
            FusedGraph {
                name: format!("group in {}", comp.name),
                module,
                nodes,
                params,
                outputs,
            },
            param_ids,
        ))
    }
}
