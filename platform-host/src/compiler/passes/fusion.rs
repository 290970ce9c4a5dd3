//! Fusion decisions: groups the elementwise, data movement and reduction
//! instructions of an unfused program (JAX's `module.hlo`) into `fusion`
//! instructions that the block evaluator (`crate::fusion`) runs in one pass.
//!
//! # What is fused
//! * Elementwise ops, `convert`, compares and selects with their producers:
//!   `kind=kLoop` fusions.
//! * Data movement (`broadcast`, `reshape`, `transpose`, `slice`, `reverse`,
//!   `copy`), `iota` and constants are always cheap to fuse: inside a fusion
//!   they only change how a leaf is read. (Except a large transpose that
//!   moves the innermost dimension: the transpose kernel's cache-blocked copy
//!   beats reading it element by element.) One used by several groups is
//!   duplicated into each, so no broadcast is ever materialised for a fused
//!   consumer. So is one light arithmetic op over such reads whose users all
//!   fuse ([`cheap_flags`]: GroupNorm's `x - mean`, which both the variance
//!   and the normalisation read).
//! * `reduce` with its elementwise producers (`kind=kInput`), and with its
//!   consumers when they broadcast the result back along the reduced rows:
//!   softmax's `exp(x - max(x)) / sum(...)` and layernorm's mean, variance and
//!   normalisation each become one fusion. Column reductions whose results
//!   only feed elementwise ops join too.
//! * A computed value used both inside a group and outside it becomes an
//!   extra output of the group (a tuple-rooted fusion) rather than being
//!   recomputed: no expensive operation is ever duplicated. Nor amplified:
//!   an operation whose result reaches the grown group only through a
//!   broadcast (a batch norm's per-channel `rsqrt(var + eps)`) would run at
//!   the broadcast's size inside it, so it is taken out again and read
//!   through the broadcast (`BlockProgram::amplified`).
//! * Sibling groups reading the same large input (the row and column
//!   reductions of one matrix) are merged into one multi-output fusion, so the
//!   input is read once.
//! * Everything else (`dot`, `convolution`, `gather`, `scatter`, `sort`,
//!   `while`, `dynamic-slice`, `pad`, `concatenate`, custom calls, ...) stays
//!   unfused, as do instructions with control dependencies.
//!
//! # How
//! Per computation that runs as a sequence (the entry and the bodies,
//! conditions and branches of control flow), groups are grown greedily from
//! consumers to producers: each unfused fusible instruction, visited last to
//! first, starts a group that absorbs its operands while that is allowed, until
//! nothing more can be added or it holds `MAX_GROUP_MEMBERS` instructions.
//! A candidate that would close a cycle is tried again in later rounds: the
//! path out of the group and back may run through members not yet added (a
//! producer tried before the users of its user). Every addition is checked twice: the graph with
//! groups contracted must stay acyclic, and the group must compile to a block
//! program with nothing duplicated (the block program compiler is asked
//! directly, through `crate::fusion::graph::FusedGraph::from_group`, so the
//! pass never makes a fusion the evaluator would have to run unfused). A group
//! is kept if it fuses at least two instructions that would otherwise each
//! write an array. Modules that already contain fusions (XLA's
//! `optimized.hlo`) are left as they are, and so is everything compiled under
//! `Strategy::Unfused` (`host_fusion=off`).

use crate::fusion::graph::FusedGraph;
use crate::fusion::program;
use crate::fusion::Strategy;
use platform_api::hlo::{CompId, FusionKind, HloComputation, HloInstruction, InstrId, Op};
use platform_api::passes::{DeadCodeElimination, HloPass};
use platform_api::{HloModule, Result, Shape};
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, HashSet};

/// Inputs smaller than this are not worth merging sibling groups over.
const SIBLING_MIN_ELEMENTS: usize = 1024;

/// A group stops growing at this many instructions. Each addition recompiles
/// the group's block program, so an unbounded group made the pass quadratic in
/// the length of a long elementwise chain; past a few hundred instructions a
/// bigger fusion saves nothing measurable.
const MAX_GROUP_MEMBERS: usize = 128;

pub fn run(mut module: HloModule, strategy: Strategy) -> Result<HloModule> {
    if strategy == Strategy::Unfused {
        return Ok(module);
    }
    let already_fused = module.computations.iter().any(|c| {
        c.instructions
            .iter()
            .any(|i| matches!(i.op, Op::Fusion { .. }))
    });
    if already_fused {
        return Ok(module);
    }
    let mut names = NameGen::for_module(&module);
    let mut comp_names: HashSet<String> =
        module.computations.iter().map(|c| c.name.clone()).collect();
    let mut changed = false;
    for cid in sequential_computations(&module) {
        let groups = decide(&module, cid);
        if groups.is_empty() {
            continue;
        }
        let rewritten = match rewrite(&mut module, cid, &groups, &mut names, &mut comp_names) {
            Some(r) => Some(r),
            None => rewrite_orderable(&mut module, cid, groups, &mut names, &mut comp_names),
        };
        if let Some(rewritten) = rewritten {
            *module.computation_mut(cid) = rewritten;
            changed = true;
        }
    }
    if changed {
        DeadCodeElimination::new().run(&mut module)?;
    }
    Ok(module)
}

/// When the groups together cannot be ordered (two groups, or a group and
/// an unfused instruction, that each need the other's result: a cheap member
/// whose value leaves the group can carry such a dependency past the checks
/// `decide` makes), the largest subset found greedily that can: groups are
/// kept biggest first, each only if the computation still orders with it. One
/// bad group then costs only itself, not every fusion of the computation.
fn rewrite_orderable(
    module: &mut HloModule,
    cid: CompId,
    mut groups: Vec<Group>,
    names: &mut NameGen,
    comp_names: &mut HashSet<String>,
) -> Option<HloComputation> {
    groups.sort_by_key(|g| Reverse(g.members.len()));
    // An attempt adds its fused computations to the module; each probe's are
    // taken out again, and the kept set is rewritten once at the end. Names
    // a probe handed out are only skipped, never reused.
    let base = module.computations.len();
    let mut kept: Vec<Group> = Vec::new();
    for group in groups {
        kept.push(group);
        let orders = rewrite(module, cid, &kept, names, comp_names).is_some();
        module.computations.truncate(base);
        if !orders {
            kept.pop();
        }
    }
    if kept.is_empty() {
        return None;
    }
    rewrite(module, cid, &kept, names, comp_names)
}

/// Hands out instruction names unique within a module.
struct NameGen {
    used: HashSet<String>,
}

impl NameGen {
    fn for_module(module: &HloModule) -> Self {
        let used = module
            .computations
            .iter()
            .flat_map(|c| c.instructions.iter().map(|i| i.name.clone()))
            .collect();
        NameGen { used }
    }

    /// `base` if unused, else `base.1`, `base.2`, ...
    fn fresh(&mut self, base: &str) -> String {
        if self.used.insert(base.to_string()) {
            return base.to_string();
        }
        let mut n = 1usize;
        loop {
            let candidate = format!("{base}.{n}");
            if self.used.insert(candidate.clone()) {
                return candidate;
            }
            n += 1;
        }
    }
}

/// The entry and every computation control flow runs as a sequence.
pub(crate) fn sequential_computations(module: &HloModule) -> Vec<CompId> {
    let mut seen = HashSet::new();
    let mut order = Vec::new();
    let mut stack = vec![module.entry];
    while let Some(c) = stack.pop() {
        if c.index() >= module.computations.len() || !seen.insert(c) {
            continue;
        }
        order.push(c);
        for instr in &module.computation(c).instructions {
            match &instr.op {
                Op::While { condition, body } => stack.extend([*condition, *body]),
                Op::Conditional { branches } => stack.extend(branches.iter().copied()),
                Op::Call { to_apply, .. } => stack.push(*to_apply),
                _ => {}
            }
        }
    }
    order
}

/// Arrays from this many elements on are transposed by the transpose kernel
/// (cache-blocked) rather than read element by element through a strided view.
const STRIDED_TRANSPOSE_MIN_ELEMENTS: usize = 1 << 15;
/// Largest distance between the operand elements a fused transpose reads for
/// neighbouring result elements, at any size: up to it the strided read
/// touches every cache line it loads (an NHWC → NCHW transpose of three
/// channels reads each pixel's line three times, close together).
const SHORT_SOURCE_STRIDE: usize = 4;

/// The distance in the operand between neighbours of a transpose's innermost
/// (non-unit) result dimension: 1 when the transpose keeps the operand's
/// innermost dimension innermost (a fused read is then runs of contiguous
/// elements), `None` for a shape with no such dimension or a bad permutation.
fn innermost_source_stride(instr: &HloInstruction, perm: &[usize]) -> Option<usize> {
    let dims = instr.shape.dims();
    let Some(inner) = (0..dims.len()).rev().find(|&d| dims[d] != 1) else {
        return Some(1);
    };
    let &from = perm.get(inner)?;
    let operand_dims: Vec<usize> =
        perm.iter()
            .enumerate()
            .fold(vec![1; perm.len()], |mut acc, (k, &p)| {
                if let (Some(slot), Some(&d)) = (acc.get_mut(p), dims.get(k)) {
                    *slot = d;
                }
                acc
            });
    Some(operand_dims.iter().skip(from + 1).product())
}

/// Instructions a group may contain.
fn fusible_op(instr: &HloInstruction) -> bool {
    let array = instr.shape.is_array();
    if let Op::Transpose { dimensions } = &instr.op {
        return array
            && (instr.shape.element_count() < STRIDED_TRANSPOSE_MIN_ELEMENTS
                || innermost_source_stride(instr, dimensions)
                    .is_some_and(|s| s <= SHORT_SOURCE_STRIDE));
    }
    match &instr.op {
        Op::Unary(_)
        | Op::Binary(_)
        | Op::Compare { .. }
        | Op::Select
        | Op::Clamp
        | Op::Convert
        | Op::BitcastConvert
        | Op::ReducePrecision { .. }
        | Op::Broadcast { .. }
        | Op::Reshape
        | Op::Copy
        | Op::Transpose { .. }
        | Op::Slice { .. }
        | Op::DynamicSlice { .. }
        | Op::Reverse { .. }
        | Op::Iota { .. }
        | Op::Constant { .. } => array,
        // Variadic reductions stay unfused (the reduce kernel handles them).
        Op::Reduce { .. } => array && instr.operands.len() == 2,
        _ => false,
    }
}

/// Instructions that only change how data is read (or are leaves): copied
/// into every group that needs them.
fn cheap_op(op: &Op) -> bool {
    matches!(
        op,
        Op::Broadcast { .. }
            | Op::Reshape
            | Op::Copy
            | Op::Transpose { .. }
            | Op::Slice { .. }
            | Op::DynamicSlice { .. }
            | Op::Reverse { .. }
            | Op::Iota { .. }
            | Op::Constant { .. }
    )
}

/// Whether each group that reads an instruction may compute it itself, as a
/// copy, rather than one group computing it and writing it out for the
/// others: data movement, iotas and constants, and one light arithmetic op
/// (add, subtract, multiply, min/max, negate, abs, logic, a compare or a
/// select) over reads (parameters moved around, or a small value broadcast)
/// whose users all fuse. Recomputing such an op costs each reader one
/// instruction per element where writing it out costs a store and a load; a
/// GroupNorm's `x - mean` feeds both the variance and the normalisation, and
/// as a copy in each neither pass waits for the other's array.
fn cheap_flags(comp: &HloComputation, users: &[Vec<usize>]) -> Vec<bool> {
    let instrs = &comp.instructions;
    // Values that only move memory around: parameters, constants and iotas
    // through data movement. Operands come before their users.
    let mut moved = vec![false; instrs.len()];
    for (i, instr) in instrs.iter().enumerate() {
        moved[i] = match &instr.op {
            Op::Parameter { .. } | Op::Constant { .. } | Op::Iota { .. } => true,
            op if cheap_op(op) => instr.operands.iter().all(|o| moved[o.index()]),
            _ => false,
        };
    }
    let read = |o: usize| {
        moved[o]
            || matches!(instrs[o].op, Op::Broadcast { .. })
                && instrs[o].operands.iter().all(|s| {
                    instrs[s.index()].shape.element_count() < instrs[o].shape.element_count()
                })
    };
    instrs
        .iter()
        .enumerate()
        .map(|(i, instr)| {
            cheap_op(&instr.op)
                || (light_arithmetic(instr)
                    && instr.operands.iter().all(|o| read(o.index()))
                    && !users[i].is_empty()
                    && users[i].iter().all(|&u| fusible_op(&instrs[u])))
        })
        .collect()
}

/// An elementwise op whose cost is one vector instruction per element.
fn light_arithmetic(instr: &HloInstruction) -> bool {
    use platform_api::hlo::{BinaryOp as B, UnaryOp as U};
    if !instr.shape.is_array() || instr.shape.element_type().is_none_or(|t| t.is_complex()) {
        return false;
    }
    match &instr.op {
        Op::Binary(b) => matches!(
            b,
            B::Add | B::Subtract | B::Multiply | B::Maximum | B::Minimum | B::And | B::Or | B::Xor
        ),
        Op::Unary(u) => matches!(u, U::Negate | U::Abs | U::Not),
        Op::Compare { .. } | Op::Select => true,
        _ => false,
    }
}

/// Whether the instruction would write an array of its own if left unfused.
fn materialises(op: &Op) -> bool {
    !matches!(
        op,
        Op::Reshape | Op::Copy | Op::Constant { .. } | Op::Parameter { .. }
    )
}

/// A group of instructions of one computation (indices, ascending).
#[derive(Clone, Debug)]
struct Group {
    /// In instruction order (ascending).
    members: Vec<usize>,
    /// The instruction the group grew from.
    root: usize,
}

/// The computation's structure, shared by every decision.
struct Ctx<'a> {
    module: &'a HloModule,
    comp: &'a HloComputation,
    users: Vec<Vec<usize>>,
    fusible: Vec<bool>,
    cheap: Vec<bool>,
    /// Committed groups: the owner of each non-copied member.
    owner: Vec<Option<usize>>,
    /// Committed groups that hold a copy of each cheap instruction.
    copies_in: Vec<Vec<usize>>,
    groups: Vec<Group>,
}

/// A group's members split into those it owns and cheap copies (cheap members
/// also used outside the group, which stay in the computation too), and the
/// owned members the rest of the computation reads.
struct Split {
    owned: Vec<usize>,
    outputs: Vec<usize>,
}

/// Splits `members` (see [`Split`]). A cheap member is a copy when something
/// outside the group uses it, including the original of another copy (so a
/// constant under a copied broadcast is copied too, not made an output).
/// Why a candidate group cannot be formed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Unfit {
    /// Contracting the group would close a cycle. This can change as the
    /// group grows: a path out of the group and back in disappears once the
    /// instructions on it join.
    Cycle,
    /// No output, or no block program with nothing computed twice.
    Program,
}

fn split(
    comp: &HloComputation,
    users: &[Vec<usize>],
    cheap: &[bool],
    members: &[usize],
    in_g: &[bool],
) -> Split {
    let root = comp.root.index();
    let mut copy: HashSet<usize> = HashSet::new();
    // Members are in instruction order: a copy's operands come before it, so
    // walking backwards sees every copy before its operands.
    for &m in members.iter().rev() {
        let outside = m == root || users[m].iter().any(|&u| !in_g[u] || copy.contains(&u));
        if cheap[m] && outside && !transposes_a_result(comp, users, cheap, m, in_g) {
            copy.insert(m);
        }
    }
    let owned: Vec<usize> = members
        .iter()
        .copied()
        .filter(|m| !copy.contains(m))
        .collect();
    let outputs = owned
        .iter()
        .copied()
        .filter(|&m| m == root || users[m].iter().any(|&u| !in_g[u] || copy.contains(&u)))
        .collect();
    Split { owned, outputs }
}

/// Whether member `m` is a transpose that only the rest of the computation
/// reads, of a value the group computes: the group then writes the transposed
/// array itself (its block program reads the leaves through transposed
/// views), rather than writing the value for a transpose of its own to copy.
fn transposes_a_result(
    comp: &HloComputation,
    users: &[Vec<usize>],
    cheap: &[bool],
    m: usize,
    in_g: &[bool],
) -> bool {
    let instr = &comp.instructions[m];
    matches!(instr.op, Op::Transpose { .. })
        && users[m].iter().all(|&u| !in_g[u])
        && instr
            .operands
            .iter()
            .all(|o| in_g.get(o.index()) == Some(&true) && !cheap[o.index()])
}

impl<'a> Ctx<'a> {
    fn new(module: &'a HloModule, cid: CompId) -> Self {
        let comp = module.computation(cid);
        let n = comp.instructions.len();
        let mut users = vec![Vec::new(); n];
        let mut controlled = vec![false; n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            for o in &instr.operands {
                if let Some(u) = users.get_mut(o.index()) {
                    u.push(i);
                }
            }
            if !instr.control_predecessors.is_empty() {
                controlled[i] = true;
                for c in &instr.control_predecessors {
                    if let Some(f) = controlled.get_mut(c.index()) {
                        *f = true;
                    }
                }
            }
        }
        for u in &mut users {
            u.dedup();
        }
        let fusible: Vec<bool> = comp
            .instructions
            .iter()
            .enumerate()
            .map(|(i, instr)| fusible_op(instr) && !controlled[i])
            .collect();
        let cheap = cheap_flags(comp, &users);
        Ctx {
            module,
            comp,
            users,
            fusible,
            cheap,
            owner: vec![None; n],
            copies_in: vec![Vec::new(); n],
            groups: Vec::new(),
        }
    }

    fn shape_of(&self, members: &[usize], in_g: &[bool]) -> Split {
        split(self.comp, &self.users, &self.cheap, members, in_g)
    }

    /// Whether the computation with the group contracted (and every committed
    /// group contracted) would have a cycle through the group.
    ///
    /// Instructions come in topological order, so an edge to a user always goes
    /// to a higher index; only a jump inside a contracted group can go back. A
    /// node past the group's last member, all of whose groups start past it
    /// too, therefore reaches nothing in the group and is not walked: without
    /// that bound each check walked everything downstream (quadratic on long
    /// chains).
    fn creates_cycle(&self, members: &[usize], shape: &Split, in_g: &[bool]) -> bool {
        let last_member = members.iter().copied().max().unwrap_or(0);
        let group_start = |h: usize| self.groups[h].members.first().copied().unwrap_or(0);
        let cannot_return = |u: usize| {
            u > last_member
                && self.owner[u].is_none_or(|h| group_start(h) > last_member)
                && self.copies_in[u]
                    .iter()
                    .all(|&h| group_start(h) > last_member)
        };
        let mut visited: HashSet<usize> = HashSet::new();
        let mut expanded = vec![false; self.groups.len()];
        // The group's values leave it through its owned members' users and
        // through the users of a cheap copy computed from an owned member
        // (the copy outside reads that member: an index reshaped for a
        // gather whose result the group consumes).
        let owned: HashSet<usize> = shape.owned.iter().copied().collect();
        let mut from_owned: HashSet<usize> = HashSet::new();
        for &m in members {
            let derived = owned.contains(&m)
                || self.comp.instructions[m]
                    .operands
                    .iter()
                    .any(|o| from_owned.contains(&o.index()));
            if derived {
                from_owned.insert(m);
            }
        }
        let mut stack: Vec<usize> = members
            .iter()
            .filter(|m| from_owned.contains(m))
            .flat_map(|&m| self.users[m].iter().copied())
            .filter(|&u| !in_g[u])
            .collect();
        while let Some(u) = stack.pop() {
            if in_g[u] {
                return true;
            }
            if cannot_return(u) || !visited.insert(u) {
                continue;
            }
            stack.extend(self.users[u].iter().copied());
            let groups = self.owner[u]
                .into_iter()
                .chain(self.copies_in[u].iter().copied());
            for h in groups.collect::<Vec<_>>() {
                if std::mem::replace(&mut expanded[h], true) {
                    continue;
                }
                for &x in &self.groups[h].members {
                    if self.owner[x] == Some(h) {
                        stack.extend(self.users[x].iter().copied());
                    }
                }
            }
        }
        false
    }

    /// The block program of the group `members` (`in_g` its mask), or why
    /// the group cannot be formed.
    fn compile_group(
        &self,
        members: &[usize],
        in_g: &[bool],
    ) -> std::result::Result<program::BlockProgram, Unfit> {
        let shape = self.shape_of(members, in_g);
        if shape.outputs.is_empty() {
            return Err(Unfit::Program);
        }
        if self.creates_cycle(members, &shape, in_g) {
            return Err(Unfit::Cycle);
        }
        let ids: Vec<InstrId> = members.iter().map(|&m| InstrId(m as u32)).collect();
        let outs: Vec<InstrId> = shape.outputs.iter().map(|&m| InstrId(m as u32)).collect();
        let (graph, _) = FusedGraph::from_group(self.module, self.comp, &ids, &outs)
            .map_err(|_| Unfit::Program)?;
        program::compile(&graph).map_err(|_| Unfit::Program)
    }

    /// Whether `members` may form a group: acyclic, and a block program with
    /// nothing computed twice.
    fn check(&self, members: &[usize], in_g: &[bool]) -> std::result::Result<(), Unfit> {
        let program = self.compile_group(members, in_g)?;
        if program.duplicated.is_empty() {
            Ok(())
        } else {
            Err(Unfit::Program)
        }
    }

    fn valid(&self, members: &[usize], in_g: &[bool]) -> bool {
        self.check(members, in_g).is_ok()
    }

    /// Grows a group from `root` (consumers first), see the module doc, then
    /// sheds what the group would run at a broadcast's size.
    fn grow(&self, root: usize) -> Vec<usize> {
        let members = self.grow_greedy(root);
        self.shed_amplified(root, members)
    }

    /// The members whose operation the group's block program runs on many
    /// more elements than the member has (`BlockProgram::amplified`).
    fn amplified(&self, members: &[usize], in_g: &[bool]) -> Vec<usize> {
        self.compile_group(members, in_g)
            .map(|p| p.amplified.iter().map(|&n| members[n]).collect::<Vec<_>>())
            .unwrap_or_default()
    }

    /// Takes out of a grown group every operation it would run at a
    /// broadcast's size (a batch norm's per-channel `rsqrt(var + eps)`, once
    /// per pixel), with the members that only feed them: they form groups of
    /// their own and the group reads their result through the broadcast.
    /// Judged on the whole group, not per addition: while a group grows, a
    /// layer norm's per-row `rsqrt` looks amplified until the reduction it
    /// comes from joins and makes it a per-row value.
    fn shed_amplified(&self, root: usize, members: Vec<usize>) -> Vec<usize> {
        let n = self.comp.instructions.len();
        let amplified = self.amplified(&members, &membership(n, &members));
        if amplified.is_empty() {
            return members;
        }
        let mut dropped: HashSet<usize> = amplified.into_iter().collect();
        // Members are in instruction order: users come after their operands.
        for &m in members.iter().rev() {
            let inside: Vec<usize> = self.users[m]
                .iter()
                .copied()
                .filter(|u| members.binary_search(u).is_ok())
                .collect();
            if m != root && !inside.is_empty() && inside.iter().all(|u| dropped.contains(u)) {
                dropped.insert(m);
            }
        }
        if dropped.contains(&root) {
            return members;
        }
        let kept: Vec<usize> = members
            .iter()
            .copied()
            .filter(|m| !dropped.contains(m))
            .collect();
        let in_g = membership(n, &kept);
        if self.valid(&kept, &in_g) {
            kept
        } else {
            members
        }
    }

    fn grow_greedy(&self, root: usize) -> Vec<usize> {
        let n = self.comp.instructions.len();
        let mut in_g = vec![false; n];
        in_g[root] = true;
        let mut members = vec![root];
        if self.cheap[root] {
            // A transpose of a computed value: alone it would be a copy with
            // nothing to write, so its operand starts the group with it.
            for o in &self.comp.instructions[root].operands {
                if !in_g[o.index()] {
                    in_g[o.index()] = true;
                    members.push(o.index());
                }
            }
            members.sort_unstable();
        }
        if !self.valid(&members, &in_g) {
            return Vec::new();
        }
        let mut rejected: HashSet<usize> = HashSet::new();
        loop {
            let mut candidates: Vec<usize> = members
                .iter()
                .flat_map(|&m| self.comp.instructions[m].operands.iter().map(|o| o.index()))
                .filter(|&p| {
                    !in_g[p] && self.fusible[p] && self.owner[p].is_none() && !rejected.contains(&p)
                })
                .collect();
            candidates.sort_unstable_by(|a, b| b.cmp(a));
            candidates.dedup();
            let mut progress = false;
            let mut deferred = Vec::new();
            for p in candidates {
                if members.len() >= MAX_GROUP_MEMBERS {
                    return members;
                }
                let inside = self.users[p].iter().all(|&u| in_g[u]);
                if !(inside || self.cheap[p]) {
                    deferred.push(p);
                    continue;
                }
                match self.try_add(p, &mut members, &mut in_g) {
                    Ok(()) => progress = true,
                    Err(Unfit::Program) if inside => {
                        rejected.insert(p);
                    }
                    // A cycle may close once the group also holds the
                    // members between: a producer tried before the users of
                    // its user (GroupNorm's scale, before the SiLU that reads
                    // the scaled value twice). Tried again next round.
                    Err(_) => {}
                }
            }
            if !progress && members.len() < MAX_GROUP_MEMBERS {
                // A value also used outside the group: an extra output.
                for p in deferred {
                    match self.try_add(p, &mut members, &mut in_g) {
                        Ok(()) => {
                            progress = true;
                            break;
                        }
                        Err(Unfit::Program) => {
                            rejected.insert(p);
                        }
                        Err(Unfit::Cycle) => {}
                    }
                }
            }
            if !progress {
                return members;
            }
        }
    }

    fn try_add(
        &self,
        p: usize,
        members: &mut Vec<usize>,
        in_g: &mut [bool],
    ) -> std::result::Result<(), Unfit> {
        in_g[p] = true;
        let pos = members.partition_point(|&m| m < p);
        members.insert(pos, p);
        let verdict = self.check(members, in_g);
        if verdict.is_err() {
            members.remove(pos);
            in_g[p] = false;
        }
        verdict
    }

    fn worth(&self, members: &[usize]) -> bool {
        members
            .iter()
            .filter(|&&m| materialises(&self.comp.instructions[m].op))
            .count()
            >= 2
    }

    fn commit(&mut self, members: Vec<usize>, root: usize) {
        self.groups.push(Group { members, root });
        self.claim(self.groups.len() - 1);
    }

    /// Records group `g` as the owner of its members' owned instructions and
    /// as a holder of copies of the rest.
    fn claim(&mut self, g: usize) {
        let members = self.groups[g].members.clone();
        let in_g = membership(self.comp.instructions.len(), &members);
        let shape = self.shape_of(&members, &in_g);
        for &m in &shape.owned {
            self.owner[m] = Some(g);
        }
        for &m in &members {
            if !shape.owned.contains(&m) {
                self.copies_in[m].push(g);
            }
        }
    }

    /// Forgets group `g`'s ownership and copies (the group itself stays).
    fn release(&mut self, g: usize) {
        for &m in &self.groups[g].members {
            if self.owner[m] == Some(g) {
                self.owner[m] = None;
            }
            self.copies_in[m].retain(|&h| h != g);
        }
    }

    /// Merges a new group (or a lone instruction) into a committed group that
    /// computes one of its inputs, if the union is a valid group: the input is
    /// then never written out for it and read back. The greedy growth visits
    /// consumers first, so this is the case it misses: a consumer placed
    /// before its producer's group root in the instruction order, grown after
    /// that group already took the producer as an extra output (the last key
    /// addition of a threefry round, after the round's other half).
    fn join_producer(&mut self, members: &[usize]) -> bool {
        let set: HashSet<usize> = members.iter().copied().collect();
        let mut producers: Vec<usize> = members
            .iter()
            .flat_map(|&m| self.comp.instructions[m].operands.iter().map(|o| o.index()))
            .filter(|o| !set.contains(o))
            .filter_map(|o| self.owner[o])
            .collect();
        producers.sort_unstable();
        producers.dedup();
        for h in producers {
            let mut merged: Vec<usize> = members
                .iter()
                .chain(&self.groups[h].members)
                .copied()
                .collect();
            merged.sort_unstable();
            merged.dedup();
            if merged.len() > MAX_GROUP_MEMBERS {
                continue;
            }
            let in_g = membership(self.comp.instructions.len(), &merged);
            // Judged with the producer group's own claims removed.
            self.release(h);
            let ok = self.members_free(&merged, &[]) && self.valid(&merged, &in_g);
            if ok {
                self.groups[h].members = merged;
            }
            self.claim(h);
            if ok {
                return true;
            }
        }
        false
    }

    /// Whether instruction `i` transposes a value a group could compute
    /// (a fusible, not cheap operand): a group may then grow from the
    /// transpose and write the transposed array in one pass.
    fn transposes_computed(&self, i: usize) -> bool {
        let instr = &self.comp.instructions[i];
        matches!(instr.op, Op::Transpose { .. })
            && instr.operands.iter().all(|o| {
                let o = o.index();
                self.fusible[o] && !self.cheap[o] && self.owner[o].is_none()
            })
    }

    fn uncommit_last(&mut self) {
        if let Some(g) = self.groups.len().checked_sub(1) {
            self.release(g);
            self.groups.pop();
        }
    }
}

/// The groups to form in computation `cid`.
fn decide(module: &HloModule, cid: CompId) -> Vec<Group> {
    let mut ctx = Ctx::new(module, cid);
    let n = ctx.comp.instructions.len();
    let mut singles: Vec<Vec<usize>> = Vec::new();
    for i in (0..n).rev() {
        if ctx.owner[i].is_some()
            || !ctx.fusible[i]
            || (ctx.cheap[i] && !ctx.transposes_computed(i))
        {
            continue;
        }
        let members = ctx.grow(i);
        if members.is_empty() {
            continue;
        }
        if ctx.join_producer(&members) {
            continue;
        }
        if ctx.worth(&members) {
            ctx.commit(members, i);
        } else {
            singles.push(members);
        }
    }
    merge_siblings(&mut ctx, singles);
    ctx.groups
}

/// Merges groups (and fusible instructions left alone) that read the same
/// large input into one multi-output group.
fn merge_siblings(ctx: &mut Ctx<'_>, singles: Vec<Vec<usize>>) {
    let n = ctx.comp.instructions.len();
    // Candidates: committed groups, then the singles (not committed yet).
    let mut candidates: Vec<(Vec<usize>, Option<usize>)> = ctx
        .groups
        .iter()
        .enumerate()
        .map(|(g, grp)| (grp.members.clone(), Some(g)))
        .collect();
    candidates.extend(singles.into_iter().map(|m| (m, None)));
    let inputs_of = |members: &[usize]| -> HashSet<usize> {
        let set: HashSet<usize> = members.iter().copied().collect();
        members
            .iter()
            .flat_map(|&m| ctx.comp.instructions[m].operands.iter().map(|o| o.index()))
            .filter(|o| !set.contains(o))
            .filter(|&o| ctx.comp.instructions[o].shape.element_count() >= SIBLING_MIN_ELEMENTS)
            .collect()
    };
    let mut by_input: HashMap<usize, Vec<usize>> = HashMap::new();
    for (k, (members, _)) in candidates.iter().enumerate() {
        for i in inputs_of(members) {
            by_input.entry(i).or_default().push(k);
        }
    }
    let mut keys: Vec<usize> = by_input.keys().copied().collect();
    keys.sort_unstable();
    let mut merged_into: Vec<Option<usize>> = vec![None; candidates.len()];
    let mut merged_any = false;
    for input in keys {
        let list = &by_input[&input];
        if list.len() < 2 {
            continue;
        }
        let list = list.clone();
        for w in 1..list.len() {
            let (a, b) = (list[0], list[w]);
            let resolve = |mut k: usize| {
                while let Some(t) = merged_into[k] {
                    k = t;
                }
                k
            };
            let (a, b) = (resolve(a), resolve(b));
            if a == b {
                continue;
            }
            let mut members: Vec<usize> = candidates[a]
                .0
                .iter()
                .chain(&candidates[b].0)
                .copied()
                .collect();
            members.sort_unstable();
            members.dedup();
            // Judge the merged group with both halves' own groups removed.
            let owned_groups: Vec<usize> = [candidates[a].1, candidates[b].1]
                .into_iter()
                .flatten()
                .collect();
            let saved_owner = ctx.owner.clone();
            let saved_copies = ctx.copies_in.clone();
            for &m in &members {
                if ctx.owner[m].is_some_and(|g| owned_groups.contains(&g)) {
                    ctx.owner[m] = None;
                }
                ctx.copies_in[m].retain(|h| !owned_groups.contains(h));
            }
            let in_g = membership(n, &members);
            let ok = ctx.members_free(&members, &owned_groups) && ctx.valid(&members, &in_g);
            ctx.owner = saved_owner;
            ctx.copies_in = saved_copies;
            if !ok {
                continue;
            }
            let root = members.last().copied().unwrap_or(0);
            candidates.push((members, None));
            let k = candidates.len() - 1;
            merged_into.push(None);
            merged_into[a] = Some(k);
            merged_into[b] = Some(k);
            let _ = root;
            merged_any = true;
        }
    }
    // Rebuild the committed groups: every candidate not merged away.
    let finals: Vec<(Vec<usize>, usize)> = candidates
        .iter()
        .enumerate()
        .filter(|(k, _)| merged_into[*k].is_none())
        .filter_map(|(_, (members, g))| match g {
            Some(g) => Some((members.clone(), ctx.groups[*g].root)),
            None if ctx.worth(members) => {
                Some((members.clone(), members.last().copied().unwrap_or(0)))
            }
            None => None,
        })
        .collect();
    if !merged_any {
        return;
    }
    while !ctx.groups.is_empty() {
        ctx.uncommit_last();
    }
    for (members, root) in finals {
        ctx.commit(members, root);
    }
}

impl Ctx<'_> {
    /// Whether no member of `members` belongs to a committed group other than
    /// `allowed`.
    fn members_free(&self, members: &[usize], allowed: &[usize]) -> bool {
        members
            .iter()
            .all(|&m| self.owner[m].is_none_or(|g| allowed.contains(&g)))
    }
}

enum Item {
    Instr(usize),
    Group(usize),
}

/// Rebuilds computation `cid` with `groups` turned into fusions; `None` if
/// the groups cannot be ordered (then the computation stays as it is).
fn rewrite(
    module: &mut HloModule,
    cid: CompId,
    groups: &[Group],
    names: &mut NameGen,
    comp_names: &mut HashSet<String>,
) -> Option<HloComputation> {
    let comp = module.computation(cid).clone();
    let n = comp.instructions.len();
    let users: Vec<Vec<usize>> = comp
        .users()
        .into_iter()
        .map(|u| {
            let mut u: Vec<usize> = u.into_iter().map(|i| i.index()).collect();
            u.dedup();
            u
        })
        .collect();
    let cheap = cheap_flags(&comp, &users);
    let mut owner: Vec<Option<usize>> = vec![None; n];
    struct Info {
        owned: Vec<usize>,
        outputs: Vec<usize>,
        inputs: Vec<usize>,
    }
    let mut infos = Vec::with_capacity(groups.len());
    for (g, group) in groups.iter().enumerate() {
        let in_g = membership(n, &group.members);
        let Split { owned, outputs, .. } = split(&comp, &users, &cheap, &group.members, &in_g);
        for &m in &owned {
            owner[m] = Some(g);
        }
        let ids: Vec<InstrId> = group.members.iter().map(|&m| InstrId(m as u32)).collect();
        let outs: Vec<InstrId> = outputs.iter().map(|&m| InstrId(m as u32)).collect();
        let (_, inputs) = FusedGraph::from_group(module, &comp, &ids, &outs).ok()?;
        infos.push(Info {
            owned,
            outputs,
            inputs: inputs.into_iter().map(|i| i.index()).collect(),
        });
    }
    // Order: Kahn's algorithm over instructions and groups, earliest first.
    let item_of = |i: usize| -> usize {
        match owner[i] {
            Some(g) => n + g,
            None => i,
        }
    };
    let total = n + groups.len();
    let exists = |k: usize| k >= n || owner[k].is_none();
    let mut indegree = vec![0usize; total];
    let mut dependents: Vec<Vec<usize>> = vec![Vec::new(); total];
    for k in 0..total {
        if !exists(k) {
            continue;
        }
        let deps: Vec<usize> = if k < n {
            let instr = &comp.instructions[k];
            instr
                .operands
                .iter()
                .chain(&instr.control_predecessors)
                .map(|o| item_of(o.index()))
                .collect()
        } else {
            infos[k - n].inputs.iter().map(|&i| item_of(i)).collect()
        };
        for d in deps {
            if d == k {
                return None;
            }
            indegree[k] += 1;
            dependents[d].push(k);
        }
    }
    let key = |k: usize| if k < n { k } else { groups[k - n].root };
    let mut heap: BinaryHeap<Reverse<(usize, usize)>> = (0..total)
        .filter(|&k| exists(k) && indegree[k] == 0)
        .map(|k| Reverse((key(k), k)))
        .collect();
    let mut order = Vec::with_capacity(total);
    while let Some(Reverse((_, k))) = heap.pop() {
        order.push(if k < n {
            Item::Instr(k)
        } else {
            Item::Group(k - n)
        });
        for &d in &dependents[k] {
            indegree[d] -= 1;
            if indegree[d] == 0 {
                heap.push(Reverse((key(d), d)));
            }
        }
    }
    let expected = (0..total).filter(|&k| exists(k)).count();
    if order.len() != expected {
        return None;
    }
    // Emit.
    let mut out: Vec<HloInstruction> = Vec::with_capacity(n);
    let mut map: Vec<Option<InstrId>> = vec![None; n];
    let push = |out: &mut Vec<HloInstruction>, instr: HloInstruction| -> InstrId {
        out.push(instr);
        InstrId(out.len() as u32 - 1)
    };
    for item in order {
        match item {
            Item::Instr(i) => {
                let mut copy = comp.instructions[i].clone();
                copy.operands = copy
                    .operands
                    .iter()
                    .map(|o| map[o.index()])
                    .collect::<Option<Vec<_>>>()?;
                copy.control_predecessors = copy
                    .control_predecessors
                    .iter()
                    .map(|o| map[o.index()])
                    .collect::<Option<Vec<_>>>()?;
                map[i] = Some(push(&mut out, copy));
            }
            Item::Group(g) => {
                let info = &infos[g];
                let group = &groups[g];
                // The fused computation.
                let mut fused: Vec<HloInstruction> = Vec::new();
                let mut inner: HashMap<usize, InstrId> = HashMap::new();
                for (k, &input) in info.inputs.iter().enumerate() {
                    let p = HloInstruction::new(
                        names.fresh(&format!("param_{k}")),
                        comp.instructions[input].shape.clone(),
                        Op::Parameter { number: k },
                        vec![],
                    );
                    fused.push(p);
                    inner.insert(input, InstrId(k as u32));
                }
                let params = inner.clone();
                let mut local: HashMap<usize, InstrId> = HashMap::new();
                for &m in &group.members {
                    let mut copy = comp.instructions[m].clone();
                    if !info.owned.contains(&m) {
                        copy.name = names.fresh(&copy.name);
                    }
                    copy.control_predecessors.clear();
                    copy.operands = copy
                        .operands
                        .iter()
                        .map(|o| {
                            local
                                .get(&o.index())
                                .or_else(|| params.get(&o.index()))
                                .copied()
                        })
                        .collect::<Option<Vec<_>>>()?;
                    fused.push(copy);
                    local.insert(m, InstrId(fused.len() as u32 - 1));
                }
                let out_shapes: Vec<Shape> = info
                    .outputs
                    .iter()
                    .map(|&o| comp.instructions[o].shape.clone())
                    .collect();
                let root = if info.outputs.len() == 1 {
                    local[&info.outputs[0]]
                } else {
                    let operands = info.outputs.iter().map(|o| local[o]).collect();
                    fused.push(HloInstruction::new(
                        names.fresh("tuple"),
                        Shape::tuple(out_shapes.clone()),
                        Op::Tuple,
                        operands,
                    ));
                    InstrId(fused.len() as u32 - 1)
                };
                let mut cname = "fused_computation".to_string();
                let mut k = 0;
                while comp_names.contains(&cname) {
                    k += 1;
                    cname = format!("fused_computation.{k}");
                }
                comp_names.insert(cname.clone());
                module.computations.push(HloComputation {
                    name: cname,
                    instructions: fused,
                    root,
                });
                let calls = CompId(module.computations.len() as u32 - 1);
                let kind = if group
                    .members
                    .iter()
                    .any(|&m| matches!(comp.instructions[m].op, Op::Reduce { .. }))
                {
                    FusionKind::Input
                } else {
                    FusionKind::Loop
                };
                let operands = info
                    .inputs
                    .iter()
                    .map(|&i| map[i])
                    .collect::<Option<Vec<_>>>()?;
                let shape = if out_shapes.len() == 1 {
                    out_shapes[0].clone()
                } else {
                    Shape::tuple(out_shapes.clone())
                };
                let fusion_name = names.fresh("fusion");
                let fusion = push(
                    &mut out,
                    HloInstruction::new(
                        fusion_name.clone(),
                        shape,
                        Op::Fusion { kind, calls },
                        operands,
                    ),
                );
                if info.outputs.len() == 1 {
                    map[info.outputs[0]] = Some(fusion);
                } else {
                    for (k, &o) in info.outputs.iter().enumerate() {
                        let gte = HloInstruction::new(
                            names.fresh(&format!("{fusion_name}.{k}")),
                            out_shapes[k].clone(),
                            Op::GetTupleElement { index: k },
                            vec![fusion],
                        );
                        map[o] = Some(push(&mut out, gte));
                    }
                }
            }
        }
    }
    Some(HloComputation {
        name: comp.name.clone(),
        root: map[comp.root.index()]?,
        instructions: out,
    })
}

/// `members` as a mask over a computation's `n` instructions.
fn membership(n: usize, members: &[usize]) -> Vec<bool> {
    let mut in_g = vec![false; n];
    for &m in members {
        in_g[m] = true;
    }
    in_g
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The module after the Host's passes, fusion included.
    fn optimized(text: &str) -> HloModule {
        crate::compiler::optimize(HloModule::parse(text).unwrap(), &Default::default()).unwrap()
    }

    fn fusions(module: &HloModule) -> Vec<(String, usize)> {
        let entry = module.computation(module.entry);
        entry
            .instructions
            .iter()
            .filter_map(|i| match &i.op {
                Op::Fusion { calls, .. } => Some((
                    i.name.clone(),
                    module.computation(*calls).instructions.len(),
                )),
                _ => None,
            })
            .collect()
    }

    #[test]
    fn softmax_becomes_one_fusion() {
        let text = r#"
HloModule m
mx {
  a0 = f32[] parameter(0)
  b0 = f32[] parameter(1)
  ROOT r0 = f32[] maximum(a0, b0)
}
add {
  a1 = f32[] parameter(0)
  b1 = f32[] parameter(1)
  ROOT r1 = f32[] add(a1, b1)
}
ENTRY e {
  x = f32[16,32] parameter(0)
  ninf = f32[] constant(-inf)
  m = f32[16] reduce(x, ninf), dimensions={1}, to_apply=mx
  bm = f32[16,32] broadcast(m), dimensions={0}
  s = f32[16,32] subtract(x, bm)
  ex = f32[16,32] exponential(s)
  z = f32[] constant(0)
  sum = f32[16] reduce(ex, z), dimensions={1}, to_apply=add
  bs = f32[16,32] broadcast(sum), dimensions={0}
  ROOT d = f32[16,32] divide(ex, bs)
}
"#;
        let m = optimized(text);
        let f = fusions(&m);
        assert_eq!(f.len(), 1, "{f:?}");
        let entry = m.computation(m.entry);
        assert!(matches!(
            entry.root_instr().op,
            Op::Fusion {
                kind: FusionKind::Input,
                ..
            }
        ));
    }

    #[test]
    fn a_transposed_result_is_written_by_the_fusion_that_computes_it() {
        // NHWC → NCHW after a per-channel normalisation (three channels, so
        // the fused read is strided by three at any size): one pass.
        let text = r#"
HloModule m
ENTRY e {
  img = u8[4,64,64,3] parameter(0)
  mean = f32[3] parameter(1)
  x = f32[4,64,64,3] convert(img)
  mb = f32[4,64,64,3] broadcast(mean), dimensions={3}
  d = f32[4,64,64,3] subtract(x, mb)
  ROOT t = f32[4,3,64,64] transpose(d), dimensions={0,3,1,2}
}
"#;
        let m = optimized(text);
        let entry = m.computation(m.entry);
        assert!(
            matches!(entry.root_instr().op, Op::Fusion { .. }),
            "{}",
            m.to_text()
        );
        assert_eq!(fusions(&m).len(), 1, "{}", m.to_text());
        // A transpose whose operand moves its innermost dimension far (a
        // stride of 64 elements) stays the blocked transpose kernel's.
        let far = text
            .replace("u8[4,64,64,3]", "u8[4,64,3,64]")
            .replace("f32[4,64,64,3]", "f32[4,64,3,64]")
            .replace("dimensions={3}", "dimensions={2}")
            .replace(
                "f32[4,3,64,64] transpose(d), dimensions={0,3,1,2}",
                "f32[4,64,64,3] transpose(d), dimensions={0,1,3,2}",
            );
        let m = optimized(&far);
        let entry = m.computation(m.entry);
        assert!(
            matches!(entry.root_instr().op, Op::Transpose { .. }),
            "{}",
            m.to_text()
        );
    }

    #[test]
    fn group_norm_writes_nothing_the_size_of_its_input_but_the_result() {
        // `x - mean` feeds both the variance and the normalisation: light
        // arithmetic over reads, it is a copy in each group rather than an
        // array one writes for the other. The scale by `rsqrt(var)` joins
        // the SiLU group although, tried before the SiLU's own members are
        // in, it first looks like a cycle (through the SiLU's `x` read twice).
        let text = r#"
HloModule m
add {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT s = f32[] add(a, b)
}
ENTRY e {
  x = f32[2,4,4,16] parameter(0)
  g = f32[2,4,4,8,2] reshape(x)
  z = f32[] constant(0)
  sum = f32[2,8] reduce(g, z), dimensions={1,2,4}, to_apply=add
  k = f32[] constant(0.03125)
  kb = f32[2,8] broadcast(k), dimensions={}
  mean = f32[2,8] multiply(sum, kb)
  mb = f32[2,4,4,8,2] broadcast(mean), dimensions={0,3}
  d = f32[2,4,4,8,2] subtract(g, mb)
  sq = f32[2,4,4,8,2] multiply(d, d)
  ss = f32[2,8] reduce(sq, z), dimensions={1,2,4}, to_apply=add
  var = f32[2,8] multiply(ss, kb)
  eps = f32[] constant(1e-5)
  eb = f32[2,8] broadcast(eps), dimensions={}
  ve = f32[2,8] add(var, eb)
  rs = f32[2,8] rsqrt(ve)
  rb = f32[2,4,4,8,2] broadcast(rs), dimensions={0,3}
  y = f32[2,4,4,8,2] multiply(d, rb)
  yr = f32[2,4,4,16] reshape(y)
  ny = f32[2,4,4,16] negate(yr)
  ex = f32[2,4,4,16] exponential(ny)
  one = f32[] constant(1)
  ob = f32[2,4,4,16] broadcast(one), dimensions={}
  den = f32[2,4,4,16] add(ex, ob)
  sig = f32[2,4,4,16] divide(ob, den)
  ROOT o = f32[2,4,4,16] multiply(yr, sig)
}
"#;
        let m = optimized(text);
        let entry = m.computation(m.entry);
        let big: Vec<&str> = entry
            .instructions
            .iter()
            .filter(|i| i.shape.element_count() == 512 && materialises(&i.op))
            .map(|i| i.name.as_str())
            .collect();
        assert_eq!(
            big,
            vec![entry.root_instr().name.as_str()],
            "{}",
            m.to_text()
        );
    }

    #[test]
    fn a_copied_index_feeding_a_gather_the_group_consumes_is_no_cycle() {
        // `take_along_axis`: the wrapped index is computed, reshaped (a cheap
        // member, copied to the gather), range-checked, and the gather's
        // result selected by the check. A group holding both the index and
        // the final select would need the gather's result to compute the
        // gather's index; the group stops below the index, and both the index
        // arithmetic and the checks around the gather still fuse.
        let text = r#"
HloModule m
ENTRY e {
  x = f32[16,32] parameter(0)
  i = s32[16,4] parameter(1)
  zero = s32[] constant(0)
  bz = s32[16,4] broadcast(zero), dimensions={}
  neg = pred[16,4] compare(i, bz), direction=LT
  n = s32[] constant(32)
  bn = s32[16,4] broadcast(n), dimensions={}
  wrapped = s32[16,4] add(i, bn)
  idx = s32[16,4] select(neg, wrapped, i)
  r = s32[16,4,1] reshape(idx)
  z3 = s32[16,4,1] broadcast(zero), dimensions={}
  ge = pred[16,4,1] compare(r, z3), direction=GE
  top = s32[] constant(31)
  t3 = s32[16,4,1] broadcast(top), dimensions={}
  le = pred[16,4,1] compare(r, t3), direction=LE
  ok = pred[16,4,1] and(ge, le)
  g = f32[16,4] gather(x, r), offset_dims={}, collapsed_slice_dims={1}, start_index_map={1}, operand_batching_dims={0}, start_indices_batching_dims={0}, index_vector_dim=2, slice_sizes={1,1}
  nan = f32[] constant(nan)
  bnan = f32[16,4] broadcast(nan), dimensions={}
  ok2 = pred[16,4] reshape(ok)
  ROOT out = f32[16,4] select(ok2, g, bnan)
}
"#;
        let m = optimized(text);
        let f = fusions(&m);
        assert_eq!(f.len(), 2, "{f:?}");
    }

    #[test]
    fn per_channel_math_is_not_fused_below_its_broadcast() {
        // rsqrt(var + eps) of 32 channels, broadcast over 4096 pixels: fused,
        // it would run once per pixel instead of once per channel.
        let text = r#"
HloModule m
ENTRY e {
  x = f32[4096,32] parameter(0)
  var = f32[32] parameter(1)
  eps = f32[] constant(1e-5)
  be = f32[32] broadcast(eps), dimensions={}
  v = f32[32] add(var, be)
  r = f32[32] rsqrt(v)
  br = f32[4096,32] broadcast(r), dimensions={1}
  ROOT y = f32[4096,32] multiply(x, br)
}
"#;
        let m = optimized(text);
        for comp in &m.computations {
            let has_rsqrt = comp
                .instructions
                .iter()
                .any(|i| matches!(i.op, Op::Unary(platform_api::hlo::UnaryOp::Rsqrt)));
            let full_size = comp
                .instructions
                .iter()
                .any(|i| i.shape.element_count() == 4096 * 32);
            assert!(
                !(has_rsqrt && full_size),
                "%{}: rsqrt fused with the full-size multiply",
                comp.name
            );
        }
    }

    #[test]
    fn layernorm_with_scale_and_shift_is_one_fusion() {
        // The per-row rsqrt looks amplified until its reduction joins.
        let text = r#"
HloModule m
add {
  a1 = f32[] parameter(0)
  b1 = f32[] parameter(1)
  ROOT r1 = f32[] add(a1, b1)
}
ENTRY e {
  x = f32[64,256] parameter(0)
  g = f32[256] parameter(1)
  b = f32[256] parameter(2)
  z = f32[] constant(0)
  n = f32[64] broadcast(f32[] constant(256)), dimensions={}
  s = f32[64] reduce(x, z), dimensions={1}, to_apply=add
  mean = f32[64] divide(s, n)
  bm = f32[64,256] broadcast(mean), dimensions={0}
  d = f32[64,256] subtract(x, bm)
  sq = f32[64,256] multiply(d, d)
  ss = f32[64] reduce(sq, z), dimensions={1}, to_apply=add
  var = f32[64] divide(ss, n)
  eps = f32[64] broadcast(f32[] constant(1e-5)), dimensions={}
  ve = f32[64] add(var, eps)
  r = f32[64] rsqrt(ve)
  br = f32[64,256] broadcast(r), dimensions={0}
  y = f32[64,256] multiply(d, br)
  bg = f32[64,256] broadcast(g), dimensions={1}
  yg = f32[64,256] multiply(y, bg)
  bb = f32[64,256] broadcast(b), dimensions={1}
  ROOT o = f32[64,256] add(yg, bb)
}
"#;
        let m = optimized(text);
        let f = fusions(&m);
        assert_eq!(f.len(), 1, "{f:?}");
    }

    #[test]
    fn dots_stay_unfused_and_values_used_twice_become_outputs() {
        let text = r#"
HloModule m
ENTRY e {
  x = f32[8,16] parameter(0)
  w = f32[16,4] parameter(1)
  b = f32[4] parameter(2)
  d = f32[8,4] dot(x, w), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  bb = f32[8,4] broadcast(b), dimensions={1}
  a = f32[8,4] add(d, bb)
  t = f32[8,4] tanh(a)
  w2 = f32[4,4] parameter(3)
  d2 = f32[8,4] dot(a, w2), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  ROOT r = (f32[8,4], f32[8,4]) tuple(t, d2)
}
"#;
        let m = optimized(text);
        let entry = m.computation(m.entry);
        let dots = entry
            .instructions
            .iter()
            .filter(|i| matches!(i.op, Op::Dot { .. }))
            .count();
        assert_eq!(dots, 2);
        // `a` is used by the second dot and by `tanh`: the fusion computing
        // `a` and `tanh(a)` has two outputs.
        let multi = entry
            .instructions
            .iter()
            .any(|i| matches!(i.op, Op::Fusion { .. }) && i.shape.is_tuple());
        assert!(multi, "{}", m);
    }

    #[test]
    fn a_consumer_ordered_before_its_producers_group_joins_it() {
        // `y0` reads `a`, which the group grown from `y1` (visited first)
        // takes as an extra output: `y0` joins that group instead of reading
        // `a` back from memory in a fusion of its own.
        let text = r#"
HloModule m
ENTRY e {
  x0 = u32[64,64] parameter(0)
  x1 = u32[64,64] parameter(1)
  k = u32[] parameter(2)
  a = u32[64,64] add(x0, x1)
  kb = u32[64,64] broadcast(k), dimensions={}
  y0 = u32[64,64] add(a, kb)
  s = u32[64,64] xor(x1, a)
  y1 = u32[64,64] add(s, kb)
  ROOT t = (u32[64,64], u32[64,64]) tuple(y0, y1)
}
"#;
        let m = optimized(text);
        let entry = m.computation(m.entry);
        let fused: Vec<_> = entry
            .instructions
            .iter()
            .filter(|i| matches!(i.op, Op::Fusion { .. }))
            .collect();
        assert_eq!(fused.len(), 1, "{m}");
        assert_eq!(fused[0].shape.tuple_shapes().len(), 2, "{m}");
    }
}
