//! Rewriting HLO safely: editing one computation, and changing a module's set of
//! computations.
//!
//! # Why an editor
//!
//! The IR keeps instructions in a `Vec` in an order where operands come before
//! their users, and refers to them by index. A pass that changes a graph in place
//! would have to keep both properties true after every step. Instead a pass opens
//! a [`ComputationEditor`], makes any number of edits in whatever order is
//! convenient — add instructions (appended at the end, even if earlier
//! instructions will use them), redirect every use of one instruction to another,
//! change operands — and calls [`ComputationEditor::finish`] once. `finish`
//! removes what has become dead, puts the rest back into operands-before-users
//! order (a stable topological sort that only moves what has to move) and
//! renumbers every reference. Each step is linear in the size of the computation,
//! so a pass that edits a computation once stays linear however many rewrites it
//! makes.
//!
//! The editor keeps, for every instruction, the list of instructions that use it,
//! so "replace all uses of `a` with `b`" touches only the users of `a`. The lists
//! may hold stale entries (a user whose operand has since changed, or one that has
//! died); [`ComputationEditor::users`] filters them, so they never leak.
//!
//! # Names
//!
//! Instruction names are unique in the whole module, not only in one computation
//! (the verifier checks it). [`NameGen`] remembers every name in use and hands
//! out fresh ones as XLA does: a name that is free is used as is; otherwise the
//! numeric suffix is replaced by the next free number (`add.3` → `add.4`, `exp` →
//! `exp.1`).
//!
//! # Module level
//!
//! [`CallGraph`] records which instruction calls which computation;
//! [`reachable_computations`], [`add_computation`], [`remove_computations`]
//! (with renumbering of every [`CompId`] through [`Op::map_called`]),
//! [`remove_unreachable_computations`] and [`clone_computation`] change the
//! computation list; [`effectful_computations`] says which computations contain
//! side effects, so dead-code removal keeps a `while` whose body prints.

use super::{CompId, HloComputation, HloInstruction, HloModule, InstrId, Op};
use crate::error::{Error, Result};
use crate::shape::Shape;
use std::collections::{HashMap, HashSet};
use std::hash::{BuildHasherDefault, Hasher};

// ---------------------------------------------------------------------------
// Names

/// Hands out names unique among a set of names (a module's instructions, or its
/// computations).
///
/// Names are remembered by a 64-bit hash, not as strings: building a generator
/// for a module of thousands of instructions then costs no allocation. Two names
/// with the same hash would make the second look taken, which only means a
/// fresh name gets another suffix; a name in use is never handed out.
#[derive(Clone, Debug, Default)]
pub struct NameGen {
    used: HashSet<u64, BuildHasherDefault<PreHashed>>,
    /// Per prefix (a name without its `.N` suffix), the next suffix to try.
    next_suffix: HashMap<String, u64>,
}

impl NameGen {
    /// A generator that knows no names.
    pub fn new() -> NameGen {
        NameGen::default()
    }

    /// A generator that knows every instruction name of the module.
    pub fn for_instructions(module: &HloModule) -> NameGen {
        let mut names = NameGen::new();
        let count = module
            .computations
            .iter()
            .map(|c| c.instructions.len())
            .sum();
        names.used.reserve(count);
        for comp in &module.computations {
            for instr in &comp.instructions {
                names.used.insert(name_hash(&instr.name));
            }
        }
        names
    }

    /// A generator that knows every computation name of the module.
    pub fn for_computations(module: &HloModule) -> NameGen {
        let mut names = NameGen::new();
        for comp in &module.computations {
            names.used.insert(name_hash(&comp.name));
        }
        names
    }

    /// Whether `name` is taken.
    pub fn contains(&self, name: &str) -> bool {
        self.used.contains(&name_hash(name))
    }

    /// Marks `name` as taken; `false` if it already was.
    pub fn reserve(&mut self, name: &str) -> bool {
        self.used.insert(name_hash(name))
    }

    /// `base` itself if it is free, otherwise `prefix.N` with the smallest `N`
    /// (counting from the last one handed out for that prefix) that is free,
    /// where `prefix` is `base` without a trailing `.digits`. The name returned is
    /// marked as taken.
    pub fn fresh(&mut self, base: &str) -> String {
        let base = if base.is_empty() { "tmp" } else { base };
        if self.used.insert(name_hash(base)) {
            return base.to_string();
        }
        let prefix = strip_numeric_suffix(base);
        let mut n = self.next_suffix.get(prefix).copied().unwrap_or(1);
        loop {
            let candidate = format!("{prefix}.{n}");
            n += 1;
            if self.used.insert(name_hash(&candidate)) {
                self.next_suffix.insert(prefix.to_string(), n);
                return candidate;
            }
        }
    }
}

/// FNV-1a, 64 bits: names are short, and only equality matters.
fn name_hash(name: &str) -> u64 {
    name.bytes().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// A `Hasher` for keys that are already hashes (a `u64` passes through).
#[derive(Clone, Copy, Debug, Default)]
pub struct PreHashed(u64);

impl Hasher for PreHashed {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        // Not used for `u64` keys; mix anything else in anyway.
        for &b in bytes {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(0x517c_c1b7_2722_0a95);
        }
    }
    fn write_u64(&mut self, v: u64) {
        self.0 = v;
    }
}

/// A fast, non-cryptographic hasher for the passes' tables (the multiply-rotate
/// scheme rustc uses); keys come from the program, not from an adversary who
/// could exploit collisions, and a collision only costs an equality check.
#[derive(Clone, Copy, Debug, Default)]
pub struct FastHasher(u64);

impl FastHasher {
    #[inline]
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x517c_c1b7_2722_0a95);
    }
}

impl Hasher for FastHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let mut w = [0u8; 8];
            w.copy_from_slice(c);
            self.add(u64::from_le_bytes(w));
        }
        let rest = chunks.remainder();
        if !rest.is_empty() {
            let mut w = [0u8; 8];
            w[..rest.len()].copy_from_slice(rest);
            self.add(u64::from_le_bytes(w) ^ ((rest.len() as u64) << 56));
        }
    }
    fn write_u8(&mut self, v: u8) {
        self.add(v as u64)
    }
    fn write_u32(&mut self, v: u32) {
        self.add(v as u64)
    }
    fn write_u64(&mut self, v: u64) {
        self.add(v)
    }
    fn write_usize(&mut self, v: usize) {
        self.add(v as u64)
    }
}

/// `add.12` → `add`; `add` → `add`; `.5` → `.5` (nothing would be left).
fn strip_numeric_suffix(name: &str) -> &str {
    match name.rfind('.') {
        Some(dot)
            if dot > 0
                && dot + 1 < name.len()
                && name[dot + 1..].bytes().all(|b| b.is_ascii_digit()) =>
        {
            &name[..dot]
        }
        _ => name,
    }
}

// ---------------------------------------------------------------------------
// Call graph and side effects

/// One instruction calling one computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CallSite {
    pub caller: CompId,
    pub instruction: InstrId,
    pub callee: CompId,
}

/// Which computation calls which, built once from a module.
///
/// Ids out of range (a module that has not been verified) are ignored rather than
/// followed, so building never panics.
#[derive(Clone, Debug)]
pub struct CallGraph {
    /// Per computation, the computations it calls (each once, in first-call order).
    callees: Vec<Vec<CompId>>,
    /// Per computation, the places that call it.
    call_sites: Vec<Vec<CallSite>>,
    entry: CompId,
}

impl CallGraph {
    pub fn build(module: &HloModule) -> CallGraph {
        let n = module.computations.len();
        let mut callees = vec![Vec::new(); n];
        let mut call_sites = vec![Vec::new(); n];
        for (c, comp) in module.computations.iter().enumerate() {
            let caller = CompId(c as u32);
            for (i, instr) in comp.instructions.iter().enumerate() {
                for callee in instr.op.called_computations() {
                    if callee.index() >= n {
                        continue;
                    }
                    if !callees[c].contains(&callee) {
                        callees[c].push(callee);
                    }
                    call_sites[callee.index()].push(CallSite {
                        caller,
                        instruction: InstrId(i as u32),
                        callee,
                    });
                }
            }
        }
        CallGraph {
            callees,
            call_sites,
            entry: module.entry,
        }
    }

    /// The computations `comp` calls directly.
    pub fn callees(&self, comp: CompId) -> &[CompId] {
        self.callees.get(comp.index()).map_or(&[], |v| v)
    }

    /// Every instruction that calls `comp`.
    pub fn call_sites(&self, comp: CompId) -> &[CallSite] {
        self.call_sites.get(comp.index()).map_or(&[], |v| v)
    }

    /// Per computation, whether it can be reached from `root` by calls (`root`
    /// included).
    pub fn reachable_from(&self, root: CompId) -> Vec<bool> {
        let mut seen = vec![false; self.callees.len()];
        let mut stack = vec![root];
        while let Some(c) = stack.pop() {
            match seen.get_mut(c.index()) {
                Some(s) if !*s => *s = true,
                _ => continue,
            }
            stack.extend(self.callees(c).iter().copied());
        }
        seen
    }

    /// The computations reachable from the entry, each after every computation it
    /// calls; an error naming a computation on a cycle if calls loop.
    pub fn post_order(&self, module: &HloModule) -> Result<Vec<CompId>> {
        self.post_order_from(module, &[self.entry])
    }

    /// Every computation of the module, each after every computation it calls.
    pub fn post_order_all(&self, module: &HloModule) -> Result<Vec<CompId>> {
        let roots: Vec<CompId> = (0..self.callees.len() as u32).map(CompId).collect();
        self.post_order_from(module, &roots)
    }

    /// The computations reachable from `roots`, each after every computation
    /// it calls; an error naming a computation on a cycle if calls loop.
    pub fn post_order_from(&self, module: &HloModule, roots: &[CompId]) -> Result<Vec<CompId>> {
        let n = self.callees.len();
        // 0 = new, 1 = on the current path, 2 = emitted.
        let mut state = vec![0u8; n];
        let mut order = Vec::with_capacity(n);
        for &root in roots {
            if root.index() >= n || state[root.index()] != 0 {
                continue;
            }
            let mut path: Vec<(CompId, usize)> = vec![(root, 0)];
            state[root.index()] = 1;
            while let Some(&mut (c, ref mut next)) = path.last_mut() {
                match self.callees(c).get(*next) {
                    Some(&callee) => {
                        *next += 1;
                        match state[callee.index()] {
                            0 => {
                                state[callee.index()] = 1;
                                path.push((callee, 0));
                            }
                            1 => {
                                return Err(Error::invalid_argument(format!(
                                    "the call graph has a cycle through computation %{}",
                                    module.computations[callee.index()].name
                                )))
                            }
                            _ => {}
                        }
                    }
                    None => {
                        state[c.index()] = 2;
                        order.push(c);
                        path.pop();
                    }
                }
            }
        }
        Ok(order)
    }
}

/// Per computation, whether running it can have an effect beyond its result: it
/// contains an instruction whose op has a side effect, or calls a computation
/// that does. Such instructions are never removed or merged.
pub fn effectful_computations(module: &HloModule) -> Vec<bool> {
    let graph = CallGraph::build(module);
    let order = graph
        .post_order_all(module)
        // A cyclic module is invalid; treating everything as effectful is the
        // safe answer (nothing gets removed).
        .unwrap_or_else(|_| Vec::new());
    if order.len() != module.computations.len() {
        return vec![true; module.computations.len()];
    }
    let mut effectful = vec![false; module.computations.len()];
    for c in order {
        let comp = &module.computations[c.index()];
        effectful[c.index()] = comp
            .instructions
            .iter()
            .any(|i| instruction_has_effect(i, &effectful));
    }
    effectful
}

/// Whether an instruction has an effect beyond its result, given which
/// computations are effectful (see [`effectful_computations`]). A called id out
/// of range counts as effectful.
pub fn instruction_has_effect(instr: &HloInstruction, effectful: &[bool]) -> bool {
    instr.op.has_side_effect()
        || instr
            .op
            .called_computations()
            .iter()
            .any(|c| effectful.get(c.index()).copied().unwrap_or(true))
}

/// Per computation, whether the entry reaches it through calls.
pub fn reachable_computations(module: &HloModule) -> Vec<bool> {
    CallGraph::build(module).reachable_from(module.entry)
}

/// Checks the references the rewriting tools index with: the entry and every
/// called computation exist; every computation has a root in range; every
/// operand and control predecessor is an earlier instruction. (A subset of
/// [`super::verifier::verify_module`], linear and cheap, so a pass can refuse
/// a malformed module with an error instead of indexing out of range.)
pub fn check_references(module: &HloModule) -> Result<()> {
    let n = module.computations.len();
    if module.entry.index() >= n {
        return Err(Error::invalid_argument(format!(
            "the entry computation #{} does not exist ({n} computations)",
            module.entry.0
        )));
    }
    for comp in &module.computations {
        if comp.root.index() >= comp.instructions.len() {
            return Err(Error::invalid_argument(format!(
                "computation %{}: root #{} is out of range ({} instructions)",
                comp.name,
                comp.root.0,
                comp.instructions.len()
            )));
        }
        for (i, instr) in comp.instructions.iter().enumerate() {
            let bad = instr
                .operands
                .iter()
                .chain(&instr.control_predecessors)
                .find(|p| p.index() >= i);
            if let Some(p) = bad {
                return Err(Error::invalid_argument(format!(
                    "computation %{}, instruction %{}: refers to #{}, which is not an earlier instruction",
                    comp.name, instr.name, p.0
                )));
            }
            if let Some(c) = instr
                .op
                .called_computations()
                .iter()
                .find(|c| c.index() >= n)
            {
                return Err(Error::invalid_argument(format!(
                    "computation %{}, instruction %{}: calls computation #{}, which does not exist",
                    comp.name, instr.name, c.0
                )));
            }
        }
    }
    Ok(())
}

// ---------------------------------------------------------------------------
// Module-level edits

/// Appends a computation, renaming it `name.N` if its name is taken; returns its
/// id. Its instruction names are the caller's business (see [`clone_computation`]
/// for a copy with fresh ones).
pub fn add_computation(module: &mut HloModule, mut comp: HloComputation) -> CompId {
    if module.computations.iter().any(|c| c.name == comp.name) {
        let mut names = NameGen::for_computations(module);
        comp.name = names.fresh(&comp.name);
    }
    module.computations.push(comp);
    CompId(module.computations.len() as u32 - 1)
}

/// Removes the computations marked in `remove` and renumbers every reference to
/// the others. Returns, per old id, its new id (`None` for removed ones). Fails,
/// changing nothing, if the entry or a computation still called by a kept one
/// would be removed.
pub fn remove_computations(module: &mut HloModule, remove: &[bool]) -> Result<Vec<Option<CompId>>> {
    let n = module.computations.len();
    let removed = |c: usize| remove.get(c).copied().unwrap_or(false);
    if removed(module.entry.index()) {
        return Err(Error::invalid_argument(format!(
            "cannot remove the entry computation %{}",
            module.entry().name
        )));
    }
    for (c, comp) in module.computations.iter().enumerate() {
        if removed(c) {
            continue;
        }
        for instr in &comp.instructions {
            for callee in instr.op.called_computations() {
                if removed(callee.index()) {
                    return Err(Error::invalid_argument(format!(
                        "cannot remove computation %{}: %{} in %{} calls it",
                        module.computations[callee.index()].name,
                        instr.name,
                        comp.name
                    )));
                }
            }
        }
    }
    let mut map = vec![None; n];
    let mut next = 0u32;
    for (c, slot) in map.iter_mut().enumerate() {
        if !removed(c) {
            *slot = Some(CompId(next));
            next += 1;
        }
    }
    let old = std::mem::take(&mut module.computations);
    module.computations = old
        .into_iter()
        .enumerate()
        .filter(|(c, _)| !removed(*c))
        .map(|(_, comp)| comp)
        .collect();
    // Every id still referenced maps to a kept computation (checked above).
    let renumber = |c: CompId| map.get(c.index()).copied().flatten().unwrap_or(c);
    for comp in &mut module.computations {
        for instr in &mut comp.instructions {
            instr.op.map_called(renumber);
        }
    }
    module.entry = renumber(module.entry);
    Ok(map)
}

/// Removes every computation the entry does not reach; returns how many.
pub fn remove_unreachable_computations(module: &mut HloModule) -> Result<usize> {
    let reachable = reachable_computations(module);
    let remove: Vec<bool> = reachable.iter().map(|r| !r).collect();
    let count = remove.iter().filter(|&&r| r).count();
    if count > 0 {
        remove_computations(module, &remove)?;
    }
    Ok(count)
}

/// Gives every `fusion` and `async-start` its own computation: a computation
/// such an instruction calls that has other callers too is cloned (with fresh
/// names) for it. In XLA a fused computation belongs to exactly one fusion, and
/// backends may rely on that; copying (by inlining a `call` twice, say) can
/// break it. Returns how many computations were cloned.
pub fn unshare_owned_computations(module: &mut HloModule) -> Result<usize> {
    let owns = |op: &Op| matches!(op, Op::Fusion { .. } | Op::AsyncStart { .. });
    let mut cloned = 0;
    // Each round clones one level; a clone's own callees are shared again and
    // are handled by the next round. The call graph is acyclic, so rounds end.
    for _ in 0..=module.computations.len() {
        let graph = CallGraph::build(module);
        let mut work: Vec<(CallSite, CompId)> = Vec::new();
        for c in module.comp_ids() {
            let sites = graph.call_sites(c);
            if sites.len() < 2 {
                continue;
            }
            let owning: Vec<CallSite> = sites
                .iter()
                .copied()
                .filter(|s| owns(&module.computation(s.caller).instr(s.instruction).op))
                .collect();
            // If every caller owns it, the first keeps the original.
            let skip = usize::from(owning.len() == sites.len());
            work.extend(owning.into_iter().skip(skip).map(|s| (s, c)));
        }
        if work.is_empty() {
            return Ok(cloned);
        }
        let mut names = NameGen::for_instructions(module);
        for (site, c) in work {
            let copy = clone_computation(module, c, &mut names)?;
            let new = add_computation(module, copy);
            module
                .computation_mut(site.caller)
                .instr_mut(site.instruction)
                .op
                .map_called(|x| if x == c { new } else { x });
            cloned += 1;
        }
    }
    Err(Error::internal(
        "unsharing fused computations did not finish (a cyclic call graph?)",
    ))
}

/// A copy of computation `id` whose instructions have fresh names from `names`
/// (which should know the module's instruction names). The computation keeps its
/// name; [`add_computation`] makes it unique when the copy is added.
pub fn clone_computation(
    module: &HloModule,
    id: CompId,
    names: &mut NameGen,
) -> Result<HloComputation> {
    let comp = module.computations.get(id.index()).ok_or_else(|| {
        Error::invalid_argument(format!(
            "computation #{} does not exist (the module has {})",
            id.0,
            module.computations.len()
        ))
    })?;
    let mut copy = comp.clone();
    for instr in &mut copy.instructions {
        instr.name = names.fresh(&instr.name);
    }
    Ok(copy)
}

// ---------------------------------------------------------------------------
// Editing one computation

/// Edits one computation; see the module documentation.
///
/// Ids handed to the editor's methods must be ids of this computation: ones it
/// had when the editor was opened, or ones [`add`](Self::add) returned. Ids stay
/// valid until [`finish`](Self::finish), which renumbers.
pub struct ComputationEditor<'a> {
    comp: &'a mut HloComputation,
    names: &'a mut NameGen,
    /// Per instruction, instructions that (may) use it; see the module docs.
    users: Vec<Vec<InstrId>>,
    /// Per instruction, instructions that (may) name it as a control predecessor.
    control_users: Vec<Vec<InstrId>>,
    /// Instructions removed explicitly (even if they have an effect).
    removed: Vec<bool>,
    /// Per instruction, the instruction it is to be placed just before (set
    /// for added instructions while an insertion point is set).
    anchors: Vec<Option<InstrId>>,
    insertion_point: Option<InstrId>,
    changed: bool,
}

impl<'a> ComputationEditor<'a> {
    /// Opens `comp` for editing; new names come from `names`, which must know
    /// every instruction name of the module.
    pub fn new(comp: &'a mut HloComputation, names: &'a mut NameGen) -> Self {
        let n = comp.instructions.len();
        let mut users = vec![Vec::new(); n];
        let mut control_users = vec![Vec::new(); n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            let me = InstrId(i as u32);
            for &op in &instr.operands {
                if let Some(u) = users.get_mut(op.index()) {
                    if u.last() != Some(&me) {
                        u.push(me);
                    }
                }
            }
            for &p in &instr.control_predecessors {
                if let Some(u) = control_users.get_mut(p.index()) {
                    u.push(me);
                }
            }
        }
        ComputationEditor {
            comp,
            names,
            users,
            control_users,
            removed: vec![false; n],
            anchors: vec![None; n],
            insertion_point: None,
            changed: false,
        }
    }

    /// The computation as edited so far (not yet compacted: it may hold dead
    /// instructions and be out of order).
    pub fn computation(&self) -> &HloComputation {
        self.comp
    }

    /// Number of instructions, dead ones included; ids are `0..len()`.
    pub fn len(&self) -> usize {
        self.comp.instructions.len()
    }

    pub fn is_empty(&self) -> bool {
        self.comp.instructions.is_empty()
    }

    pub fn instr(&self, id: InstrId) -> &HloInstruction {
        &self.comp.instructions[id.index()]
    }

    /// Mutable access to change an instruction's op, shape or attributes. Its
    /// operands must be changed with [`set_operands`](Self::set_operands) instead,
    /// which keeps the user lists right.
    pub fn instr_mut(&mut self, id: InstrId) -> &mut HloInstruction {
        self.changed = true;
        &mut self.comp.instructions[id.index()]
    }

    /// The `i`-th operand of `id`, or an error naming the instruction.
    pub fn operand(&self, id: InstrId, i: usize) -> Result<InstrId> {
        self.instr(id).operand(i)
    }

    pub fn root(&self) -> InstrId {
        self.comp.root
    }

    pub fn set_root(&mut self, id: InstrId) {
        if self.comp.root != id {
            self.changed = true;
            self.comp.root = id;
        }
    }

    /// Whether anything was changed so far.
    pub fn changed(&self) -> bool {
        self.changed
    }

    /// The instructions that use `id` as an operand now, each once, in id order.
    pub fn users(&self, id: InstrId) -> Vec<InstrId> {
        let mut users: Vec<InstrId> = self.users[id.index()]
            .iter()
            .copied()
            .filter(|&u| self.instr(u).operands.contains(&id))
            .collect();
        users.sort_unstable();
        users.dedup();
        users
    }

    /// Number of distinct users of `id` (see [`users`](Self::users)).
    pub fn user_count(&self, id: InstrId) -> usize {
        self.users(id).len()
    }

    /// A module-wide unique instruction name built on `base`, for an
    /// instruction the caller places in another computation it builds.
    pub fn fresh_name(&mut self, base: &str) -> String {
        self.names.fresh(base)
    }

    /// Adds an instruction at the end and returns its id. Its name is made unique
    /// in the module (`name.N` if taken). Its operands and control predecessors
    /// may be any existing ids of this computation, wherever they are placed:
    /// [`finish`](Self::finish) restores the order.
    pub fn add(&mut self, mut instr: HloInstruction) -> InstrId {
        instr.name = self.names.fresh(&instr.name);
        let id = InstrId(self.comp.instructions.len() as u32);
        for &op in &instr.operands {
            self.users[op.index()].push(id);
        }
        for &p in &instr.control_predecessors {
            self.control_users[p.index()].push(id);
        }
        self.comp.instructions.push(instr);
        self.users.push(Vec::new());
        self.control_users.push(Vec::new());
        self.removed.push(false);
        self.anchors.push(self.insertion_point);
        self.changed = true;
        id
    }

    /// Where instructions added from now on go in the final order: just before
    /// `before` (as far as their operands allow), or, with `None` (the
    /// default), just before their first user (at the end if unused). An
    /// inliner sets it to the `call` it replaces, so the callee's instructions,
    /// side effects included, run where the call ran.
    pub fn set_insertion_point(&mut self, before: Option<InstrId>) {
        self.insertion_point = before;
    }

    /// Adds `op` on `operands` with result `shape`, named after `name`.
    pub fn add_op(&mut self, name: &str, shape: Shape, op: Op, operands: Vec<InstrId>) -> InstrId {
        self.add(HloInstruction::new(name, shape, op, operands))
    }

    /// Adds `op` like [`add_op`](Self::add_op), copying the metadata of
    /// `origin` (the instruction the new one replaces or comes from) so that
    /// profiles and error messages still point at the user's source line.
    pub fn add_derived(
        &mut self,
        origin: InstrId,
        name: &str,
        shape: Shape,
        op: Op,
        operands: Vec<InstrId>,
    ) -> InstrId {
        let mut instr = HloInstruction::new(name, shape, op, operands);
        instr.metadata = self.instr(origin).metadata.clone();
        self.add(instr)
    }

    /// Replaces the operands of `id`.
    pub fn set_operands(&mut self, id: InstrId, operands: Vec<InstrId>) {
        for &op in &operands {
            self.users[op.index()].push(id);
        }
        self.comp.instructions[id.index()].operands = operands;
        self.changed = true;
    }

    /// Makes `id` wait for `pred` (a control edge).
    pub fn add_control_predecessor(&mut self, id: InstrId, pred: InstrId) {
        let preds = &mut self.comp.instructions[id.index()].control_predecessors;
        if id != pred && !preds.contains(&pred) {
            preds.push(pred);
            self.control_users[pred.index()].push(id);
            self.changed = true;
        }
    }

    /// Removes `id` even if it has an effect (for an instruction whose work now
    /// happens elsewhere, like an inlined `call`). Nothing may use it by the time
    /// [`finish`](Self::finish) runs, or `finish` fails.
    pub fn remove(&mut self, id: InstrId) {
        self.removed[id.index()] = true;
        self.changed = true;
    }

    /// Makes `user` use `new` wherever it used `old`.
    pub fn replace_operand(&mut self, user: InstrId, old: InstrId, new: InstrId) {
        let mut any = false;
        for op in &mut self.comp.instructions[user.index()].operands {
            if *op == old {
                *op = new;
                any = true;
            }
        }
        if any {
            self.users[new.index()].push(user);
            self.changed = true;
        }
    }

    /// Makes every user of `old` (and the root, and every instruction that names
    /// `old` as a control predecessor) refer to `new` instead. The two must have
    /// compatible shapes (layouts aside). `old` stays in place; it is removed by
    /// [`finish`](Self::finish) if nothing else keeps it alive.
    pub fn replace_all_uses(&mut self, old: InstrId, new: InstrId) -> Result<()> {
        self.replace_uses_except(old, new, &[])
    }

    /// Like [`replace_all_uses`](Self::replace_all_uses), but the instructions in
    /// `except` keep using `old` (for inserting `new = f(old)` between `old` and
    /// its users).
    pub fn replace_uses_except(
        &mut self,
        old: InstrId,
        new: InstrId,
        except: &[InstrId],
    ) -> Result<()> {
        if old == new {
            return Ok(());
        }
        let (o, n) = (self.instr(old), self.instr(new));
        if !o.shape.compatible(&n.shape) {
            return Err(Error::internal(format!(
                "cannot replace %{} ({}) with %{} ({}): the shapes differ",
                o.name, o.shape, n.name, n.shape
            )));
        }
        let candidates = std::mem::take(&mut self.users[old.index()]);
        let mut kept = Vec::new();
        for user in candidates {
            if except.contains(&user) {
                kept.push(user);
                continue;
            }
            self.replace_operand(user, old, new);
        }
        self.users[old.index()] = kept;
        if self.comp.root == old {
            self.comp.root = new;
        }
        let control = std::mem::take(&mut self.control_users[old.index()]);
        let mut kept = Vec::new();
        for user in control {
            // `new` waiting for itself would be a cycle: that edge is dropped.
            if except.contains(&user) {
                kept.push(user);
                continue;
            }
            let preds = &mut self.comp.instructions[user.index()].control_predecessors;
            let mut moved = false;
            for p in preds.iter_mut() {
                if *p == old {
                    *p = new;
                    moved = true;
                }
            }
            if user == new {
                preds.retain(|&p| p != new);
            } else if moved {
                self.control_users[new.index()].push(user);
            }
        }
        self.control_users[old.index()] = kept;
        self.changed = true;
        Ok(())
    }

    /// Copies `callee`'s instructions into this computation with its parameters
    /// replaced by `args` (parameter `k` by `args[k]`), and returns the id of the
    /// copy of its root (an element of `args` if the root is a parameter). Names
    /// are made unique; metadata and control edges are kept. Argument shapes must
    /// match the parameters' (layouts aside): the caller inserts `copy`s where
    /// layouts matter.
    pub fn inline_computation(
        &mut self,
        callee: &HloComputation,
        args: &[InstrId],
    ) -> Result<InstrId> {
        let mut map: Vec<InstrId> = Vec::with_capacity(callee.instructions.len());
        for (i, instr) in callee.instructions.iter().enumerate() {
            let mapped = match instr.op {
                Op::Parameter { number } => {
                    let arg = *args.get(number).ok_or_else(|| {
                        Error::invalid_argument(format!(
                            "inlining %{}: parameter %{} has number {number} but {} arguments were given",
                            callee.name,
                            instr.name,
                            args.len()
                        ))
                    })?;
                    let arg_shape = &self.instr(arg).shape;
                    if !arg_shape.compatible(&instr.shape) {
                        return Err(Error::invalid_argument(format!(
                            "inlining %{}: argument %{} has shape {}, parameter %{} has {}",
                            callee.name,
                            self.instr(arg).name,
                            arg_shape,
                            instr.name,
                            instr.shape
                        )));
                    }
                    arg
                }
                _ => {
                    let lookup = |ids: &[InstrId], what: &str| -> Result<Vec<InstrId>> {
                        ids.iter()
                            .map(|id| {
                                map.get(id.index()).copied().ok_or_else(|| {
                                    Error::invalid_argument(format!(
                                        "inlining %{}: {what} of %{} is not defined before it",
                                        callee.name, instr.name
                                    ))
                                })
                            })
                            .collect()
                    };
                    let operands = lookup(&instr.operands, "an operand")?;
                    let control = lookup(&instr.control_predecessors, "a control predecessor")?;
                    let mut copy = instr.clone();
                    copy.operands = operands;
                    copy.control_predecessors = control;
                    self.add(copy)
                }
            };
            debug_assert_eq!(map.len(), i);
            map.push(mapped);
        }
        map.get(callee.root.index()).copied().ok_or_else(|| {
            Error::invalid_argument(format!(
                "inlining %{}: root #{} is out of range",
                callee.name, callee.root.0
            ))
        })
    }

    /// Ends the edit: removes every instruction that neither the root, nor a
    /// parameter, nor an instruction with an effect (see
    /// [`instruction_has_effect`] with `effectful`) depends on; restores
    /// operands-before-users order (keeping the existing order wherever it is
    /// already right); renumbers operands, control predecessors and the root.
    /// Returns whether the computation changed in any way since the editor was
    /// opened. Fails if the edits made a cycle.
    pub fn finish(self, effectful: &[bool]) -> Result<bool> {
        let ComputationEditor {
            comp,
            changed,
            removed,
            anchors,
            ..
        } = self;
        Ok(compact(comp, &removed, &anchors, effectful)? || changed)
    }
}

/// Removes the dead instructions of a computation and restores operands-before-
/// users order, as [`ComputationEditor::finish`] does, without opening an editor
/// (no user lists are built). Returns whether anything was removed or moved.
pub fn remove_dead_instructions(comp: &mut HloComputation, effectful: &[bool]) -> Result<bool> {
    compact(comp, &[], &[], effectful)
}

/// The work of [`ComputationEditor::finish`]: `explicitly_removed` marks
/// instructions to drop even if they have effects; `anchors` the instruction
/// each one is to be placed before (missing entries: not removed, no anchor).
/// Returns whether anything was removed or reordered.
fn compact(
    comp: &mut HloComputation,
    explicitly_removed: &[bool],
    anchors: &[Option<InstrId>],
    effectful: &[bool],
) -> Result<bool> {
    let removed = |i: usize| explicitly_removed.get(i).copied().unwrap_or(false);
    let n = comp.instructions.len();
    if comp.root.index() >= n {
        return Err(Error::internal(format!(
            "computation %{}: root #{} is out of range ({n} instructions)",
            comp.name, comp.root.0
        )));
    }

    // Liveness.
    let mut live = vec![false; n];
    let mut stack: Vec<InstrId> = vec![comp.root];
    for (i, instr) in comp.instructions.iter().enumerate() {
        if removed(i) {
            continue;
        }
        if matches!(instr.op, Op::Parameter { .. }) || instruction_has_effect(instr, effectful) {
            stack.push(InstrId(i as u32));
        }
    }
    while let Some(id) = stack.pop() {
        let Some(slot) = live.get_mut(id.index()) else {
            return Err(Error::internal(format!(
                "computation %{}: reference to instruction #{} out of range",
                comp.name, id.0
            )));
        };
        if *slot {
            continue;
        }
        *slot = true;
        let instr = &comp.instructions[id.index()];
        stack.extend(instr.operands.iter().copied());
        stack.extend(instr.control_predecessors.iter().copied());
    }

    if let Some(i) = (0..n).find(|&i| live[i] && removed(i)) {
        return Err(Error::internal(format!(
            "computation %{}: %{} was removed but is still used",
            comp.name, comp.instructions[i].name
        )));
    }

    // Order: keep the current one if it is already operands-before-users and
    // no live instruction waits to be moved to its anchor.
    let anchored = anchors
        .iter()
        .enumerate()
        .any(|(i, a)| a.is_some() && live.get(i).copied().unwrap_or(false));
    let in_order = !anchored
        && comp.instructions.iter().enumerate().all(|(i, instr)| {
            !live[i]
                || instr
                    .operands
                    .iter()
                    .chain(&instr.control_predecessors)
                    .all(|p| p.index() < i)
        });
    let order: Vec<usize> = if in_order {
        (0..n).filter(|&i| live[i]).collect()
    } else {
        topological_order(comp, &live, anchors)?
    };
    if in_order && order.len() == n {
        return Ok(false);
    }

    let mut new_id = vec![u32::MAX; n];
    for (new, &old) in order.iter().enumerate() {
        new_id[old] = new as u32;
    }
    let mut slots: Vec<Option<HloInstruction>> = std::mem::take(&mut comp.instructions)
        .into_iter()
        .map(Some)
        .collect();
    let mut instructions = Vec::with_capacity(order.len());
    for &old in &order {
        let Some(mut instr) = slots[old].take() else {
            return Err(Error::internal("an instruction was ordered twice"));
        };
        for p in instr
            .operands
            .iter_mut()
            .chain(instr.control_predecessors.iter_mut())
        {
            *p = InstrId(new_id[p.index()]);
        }
        instructions.push(instr);
    }
    comp.instructions = instructions;
    comp.root = InstrId(new_id[comp.root.index()]);
    Ok(true)
}

/// The live instructions in an operands-before-users order that keeps the given
/// order where it can: instructions are taken in index order — an anchored one
/// just before its anchor — each preceded by those of its (transitive) operands
/// not yet placed.
fn topological_order(
    comp: &HloComputation,
    live: &[bool],
    anchors: &[Option<InstrId>],
) -> Result<Vec<usize>> {
    let n = comp.instructions.len();
    // The visiting sequence: anchored instructions go into their anchor's list
    // (following anchors that are themselves anchored, a bounded number of
    // steps), the rest visit at their own index.
    let anchor_of = |i: usize| -> Option<usize> {
        let mut a = anchors.get(i).copied().flatten()?.index();
        for _ in 0..n {
            match anchors.get(a).copied().flatten() {
                Some(next) if next.index() != a => a = next.index(),
                _ => break,
            }
        }
        (a < n && a != i).then_some(a)
    };
    let mut before: Vec<Vec<usize>> = vec![Vec::new(); n];
    let mut own_turn = vec![true; n];
    for (i, turn) in own_turn.iter_mut().enumerate() {
        if let Some(a) = anchor_of(i) {
            before[a].push(i);
            *turn = false;
        }
    }
    let mut sequence = Vec::with_capacity(n);
    for i in 0..n {
        sequence.extend(before[i].iter().copied());
        if own_turn[i] {
            sequence.push(i);
        }
    }
    // 0 = not placed, 1 = waiting for its operands, 2 = placed.
    let mut state = vec![0u8; n];
    let mut order = Vec::with_capacity(n);
    for start in sequence {
        if !live[start] || state[start] != 0 {
            continue;
        }
        let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
        state[start] = 1;
        while let Some(&mut (i, ref mut next)) = stack.last_mut() {
            let instr = &comp.instructions[i];
            let deps = instr.operands.len() + instr.control_predecessors.len();
            if *next < deps {
                let dep = if *next < instr.operands.len() {
                    instr.operands[*next]
                } else {
                    instr.control_predecessors[*next - instr.operands.len()]
                }
                .index();
                *next += 1;
                match state[dep] {
                    0 => {
                        state[dep] = 1;
                        stack.push((dep, 0));
                    }
                    1 => {
                        return Err(Error::internal(format!(
                            "computation %{}: the rewrite made a cycle through %{}",
                            comp.name, comp.instructions[dep].name
                        )))
                    }
                    _ => {}
                }
            } else {
                state[i] = 2;
                order.push(i);
                stack.pop();
            }
        }
    }
    Ok(order)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fresh_names_follow_xla_style() {
        let mut names = NameGen::new();
        assert_eq!(names.fresh("add"), "add");
        assert_eq!(names.fresh("add"), "add.1");
        assert_eq!(names.fresh("add.1"), "add.2");
        assert!(names.reserve("mul.1"));
        assert_eq!(names.fresh("mul"), "mul");
        assert_eq!(names.fresh("mul"), "mul.2");
        assert_eq!(names.fresh(""), "tmp");
        assert_eq!(strip_numeric_suffix("x.12"), "x");
        assert_eq!(strip_numeric_suffix("x.1a"), "x.1a");
        assert_eq!(strip_numeric_suffix(".5"), ".5");
    }
}
