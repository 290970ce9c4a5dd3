//! `hlo-ir`: the program, knowing nothing of devices.
//!
//! This crate is the bottom of the stack: values, types and the HLO
//! intermediate representation, with its text form and its rules. It holds no
//! notion of a device, a stream or a registry, so the evaluator, the passes and
//! every platform build on it without building on each other.
//!
//! * **Values and types** — [`shape`] (element types, shapes, layouts), [`native`]
//!   (Rust types for elements, the dynamically typed [`Scalar`]), [`literal`]
//!   (host values, their text form and `.npy` files), [`index`] (row-major index
//!   walking) and [`error`] (the [`Error`] every crate returns).
//! * **The IR** — modules, computations and instructions (this page), [`Op`] with
//!   its attributes, [`opcode`] names.
//! * **Text** — [`lexer`], [`parser`] and [`printer`]; attribute names are spelled
//!   once, in one table both directions share, and their typed values are in
//!   [`attrs`].
//! * **Rules** — [`verifier`] and [`shape_inference`]; [`builder`] constructs
//!   modules in code with shapes inferred at each call; [`rewrite`] is the editor
//!   passes use; [`analysis`] recognises the patterns every backend asks about
//!   (standard reducers, key comparators, convolution geometry).
//!
//! # Shape of the IR
//!
//! An [`HloModule`] owns a list of [`HloComputation`]s, one of which is the entry.
//! A computation owns its [`HloInstruction`]s in a `Vec`, in an order where every
//! instruction comes after its operands (the order HLO text is written in); an
//! instruction names its operands by [`InstrId`] (an index into that `Vec`) and
//! the computations it calls by [`CompId`] (an index into the module's list).
//! Indices instead of pointers keep the IR plain data: it clones, compares, hashes
//! and crosses threads without reference counting, and a pass rewrites it by
//! building new vectors.
//!
//! What an instruction does is an [`Op`], an enum whose variants carry exactly the
//! attributes of their opcode. Attributes every instruction may have (metadata,
//! sharding, frontend attributes, backend config, control predecessors) live on the
//! [`HloInstruction`] itself.
//!
//! No function in this crate panics on bad input: malformed text reports line and
//! column, a shape mismatch names both shapes.

pub mod error;
pub mod index;
pub mod literal;
pub mod narrow;
pub mod native;
pub mod shape;
pub mod stack;

pub mod analysis;
mod attr_names;
pub mod attrs;
pub mod builder;
pub mod lexer;
pub mod op;
pub mod opcode;
pub mod parser;
pub mod printer;
pub mod rewrite;
pub mod shape_inference;
pub mod sharding;
pub mod verifier;

pub use attrs::*;
pub use error::{Code, Error, Result};
pub use literal::Literal;
pub use native::{NativeType, Scalar};
pub use op::{CustomCallAttrs, Op};
pub use opcode::{BinaryOp, Opcode, UnaryOp};
pub use shape::{ArrayShape, ElementType, Layout, ProgramShape, Shape};

/// Index of an instruction within its computation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct InstrId(pub u32);

/// Index of a computation within its module.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct CompId(pub u32);

impl InstrId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl CompId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

/// `metadata={...}`: where an instruction came from. Carried for people and tools;
/// it never changes what a program computes.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct OpMetadata {
    pub op_type: Option<String>,
    pub op_name: Option<String>,
    pub source_file: Option<String>,
    pub source_line: Option<i64>,
    pub source_end_line: Option<i64>,
    pub source_column: Option<i64>,
    pub source_end_column: Option<i64>,
    pub deduplicated_name: Option<String>,
    pub preserve_layout: Option<bool>,
    pub stack_frame_id: Option<i64>,
    pub scheduling_name: Option<String>,
}

/// `backend_config`: either a quoted string or a raw `{...}` block (JSON), kept
/// exactly as written so it reaches a custom call or a backend unchanged.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum BackendConfig {
    /// `backend_config="..."`: the string's unescaped bytes.
    String(String),
    /// `backend_config={...}`: the braces and everything between them.
    Raw(String),
}

impl BackendConfig {
    /// The bytes a custom call receives as its opaque argument.
    pub fn as_str(&self) -> &str {
        match self {
            BackendConfig::String(s) | BackendConfig::Raw(s) => s,
        }
    }
}

/// One instruction of a computation.
#[derive(Clone, Debug, PartialEq)]
pub struct HloInstruction {
    /// Name without the `%` prefix; unique within the module.
    pub name: String,
    pub shape: Shape,
    pub op: Op,
    pub operands: Vec<InstrId>,
    /// Instructions that must run before this one although it does not use them.
    pub control_predecessors: Vec<InstrId>,
    pub metadata: Option<OpMetadata>,
    /// `frontend_attributes={key="value", ...}` in order.
    pub frontend_attributes: Vec<(String, String)>,
    /// `sharding={...}`, kept as its text between the braces, braces included.
    pub sharding: Option<String>,
    pub backend_config: Option<BackendConfig>,
    /// `parameter_replication={true,false}` on parameters.
    pub parameter_replication: Option<Vec<bool>>,
    /// `statistics={...}`, kept as text.
    pub statistics: Option<String>,
    /// Where the parser read the instruction, for messages (the verifier's
    /// included); not part of the program.
    pub source: SourceLocation,
}

/// A `line:column` (both 1-based) in the HLO text an instruction was parsed
/// from, or nothing for instructions that were built or rewritten. It only
/// locates messages: any two compare equal, so modules parsed from texts laid
/// out differently are still equal.
#[derive(Clone, Copy, Debug, Default)]
pub struct SourceLocation(pub Option<(u32, u32)>);

impl PartialEq for SourceLocation {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

impl std::fmt::Display for SourceLocation {
    /// `line:column: ` when known, else nothing: ready to prefix a message.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.0 {
            Some((line, column)) => write!(f, "{line}:{column}: "),
            None => Ok(()),
        }
    }
}

impl HloInstruction {
    /// An instruction with no optional attributes.
    pub fn new(name: impl Into<String>, shape: Shape, op: Op, operands: Vec<InstrId>) -> Self {
        HloInstruction {
            name: name.into(),
            shape,
            op,
            operands,
            control_predecessors: Vec::new(),
            metadata: None,
            frontend_attributes: Vec::new(),
            sharding: None,
            backend_config: None,
            parameter_replication: None,
            statistics: None,
            source: SourceLocation::default(),
        }
    }
    pub fn opcode(&self) -> Opcode {
        self.op.opcode()
    }
    /// The `i`-th operand id, or an error naming this instruction.
    pub fn operand(&self, i: usize) -> Result<InstrId> {
        self.operands.get(i).copied().ok_or_else(|| {
            Error::invalid_argument(format!(
                "%{} ({}) has {} operands; operand {i} was asked for",
                self.name,
                self.opcode(),
                self.operands.len()
            ))
        })
    }
}

/// A computation: a graph of instructions with one root and numbered parameters.
#[derive(Clone, Debug, PartialEq)]
pub struct HloComputation {
    /// Name without the `%` prefix; unique within the module.
    pub name: String,
    /// Instructions, each after its operands.
    pub instructions: Vec<HloInstruction>,
    pub root: InstrId,
}

impl HloComputation {
    pub fn instr(&self, id: InstrId) -> &HloInstruction {
        &self.instructions[id.index()]
    }
    pub fn instr_mut(&mut self, id: InstrId) -> &mut HloInstruction {
        &mut self.instructions[id.index()]
    }
    pub fn root_instr(&self) -> &HloInstruction {
        self.instr(self.root)
    }
    /// Ids of every instruction, in order (operands before users).
    pub fn ids(&self) -> impl Iterator<Item = InstrId> + '_ {
        (0..self.instructions.len() as u32).map(InstrId)
    }
    /// Parameter instructions ordered by parameter number. Gaps or duplicates are
    /// reported by the verifier, not here.
    pub fn parameters(&self) -> Vec<InstrId> {
        let mut params: Vec<(usize, InstrId)> = self
            .ids()
            .filter_map(|id| match self.instr(id).op {
                Op::Parameter { number } => Some((number, id)),
                _ => None,
            })
            .collect();
        params.sort();
        params.into_iter().map(|(_, id)| id).collect()
    }
    pub fn num_parameters(&self) -> usize {
        self.parameters().len()
    }
    /// Parameter shapes and root shape.
    pub fn program_shape(&self) -> ProgramShape {
        ProgramShape {
            parameters: self
                .parameters()
                .into_iter()
                .map(|id| self.instr(id).shape.clone())
                .collect(),
            result: self.root_instr().shape.clone(),
        }
    }
    /// The id of the instruction with this name.
    pub fn find(&self, name: &str) -> Option<InstrId> {
        self.ids().find(|&id| self.instr(id).name == name)
    }
    /// For each instruction, the instructions that use it as an operand (in order,
    /// one entry per use).
    pub fn users(&self) -> Vec<Vec<InstrId>> {
        let mut users = vec![Vec::new(); self.instructions.len()];
        for id in self.ids() {
            for &op in &self.instr(id).operands {
                users[op.index()].push(id);
            }
        }
        users
    }
}

/// `input_output_alias` entry: an output buffer may (or must) reuse a parameter's.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct InputOutputAlias {
    pub output_index: Vec<usize>,
    pub parameter_number: usize,
    pub parameter_index: Vec<usize>,
    pub must_alias: bool,
}

/// The header attributes of a module (`HloModule name, attr=..., ...`).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct ModuleConfig {
    pub entry_computation_layout: Option<ProgramShape>,
    pub is_scheduled: bool,
    pub input_output_alias: Vec<InputOutputAlias>,
    /// `buffer_donor={ (param, {index}), ... }`.
    pub buffer_donor: Vec<(usize, Vec<usize>)>,
    pub replica_count: Option<usize>,
    pub num_partitions: Option<usize>,
    pub frontend_attributes: Vec<(String, String)>,
    /// Header attributes that only steer SPMD partitioning
    /// (`allow_spmd_sharding_propagation_to_output={true}`, ...), kept as written.
    pub other: Vec<(String, String)>,
}

/// One `FileLocations` entry of the stack-frame index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct FileLocation {
    pub file_name_id: i64,
    pub function_name_id: i64,
    pub line: i64,
    pub end_line: i64,
    pub column: i64,
    pub end_column: i64,
}

/// One `StackFrames` entry of the stack-frame index.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct StackFrame {
    pub file_location_id: i64,
    pub parent_frame_id: i64,
}

/// The stack-frame index XLA prints after the header (`FileNames`, `FunctionNames`,
/// `FileLocations`, `StackFrames`); `metadata`'s `stack_frame_id` points into it.
/// Entries keep the ids they were written with.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct StackFrameIndex {
    pub file_names: Vec<(i64, String)>,
    pub function_names: Vec<(i64, String)>,
    pub file_locations: Vec<(i64, FileLocation)>,
    pub stack_frames: Vec<(i64, StackFrame)>,
}

impl StackFrameIndex {
    pub fn is_empty(&self) -> bool {
        self.file_names.is_empty()
            && self.function_names.is_empty()
            && self.file_locations.is_empty()
            && self.stack_frames.is_empty()
    }
}

/// A whole HLO program.
#[derive(Clone, Debug, PartialEq)]
pub struct HloModule {
    pub name: String,
    pub config: ModuleConfig,
    /// Computations in print order (callees before callers in parsed text).
    pub computations: Vec<HloComputation>,
    pub entry: CompId,
    pub stack_frames: StackFrameIndex,
}

impl HloModule {
    pub fn computation(&self, id: CompId) -> &HloComputation {
        &self.computations[id.index()]
    }
    pub fn computation_mut(&mut self, id: CompId) -> &mut HloComputation {
        &mut self.computations[id.index()]
    }
    pub fn entry(&self) -> &HloComputation {
        self.computation(self.entry)
    }
    pub fn comp_ids(&self) -> impl Iterator<Item = CompId> {
        (0..self.computations.len() as u32).map(CompId)
    }
    /// The id of the computation with this name.
    pub fn find_computation(&self, name: &str) -> Option<CompId> {
        self.comp_ids().find(|&c| self.computation(c).name == name)
    }
    /// The entry computation's signature.
    pub fn entry_program_shape(&self) -> ProgramShape {
        self.entry().program_shape()
    }
    /// Parses HLO text (see [`parser`]).
    pub fn parse(text: &str) -> Result<HloModule> {
        parser::parse_module(text)
    }
    /// Canonical HLO text (see [`printer`]).
    pub fn to_text(&self) -> String {
        printer::print_module(self)
    }
    /// Computations in an order where every computation comes after all the
    /// computations it calls, restricted to those reachable from the entry.
    pub fn reachable_post_order(&self) -> Vec<CompId> {
        let mut state = vec![0u8; self.computations.len()]; // 0 new, 1 open, 2 done
        let mut order = Vec::new();
        let mut stack = vec![(self.entry, false)];
        while let Some((c, expanded)) = stack.pop() {
            if expanded {
                if state[c.index()] != 2 {
                    state[c.index()] = 2;
                    order.push(c);
                }
                continue;
            }
            if state[c.index()] != 0 {
                continue;
            }
            state[c.index()] = 1;
            stack.push((c, true));
            for instr in &self.computation(c).instructions {
                for callee in instr.op.called_computations() {
                    if callee.index() < state.len() && state[callee.index()] == 0 {
                        stack.push((callee, false));
                    }
                }
            }
        }
        order
    }
}

impl std::fmt::Display for HloModule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.to_text())
    }
}

impl std::str::FromStr for HloModule {
    type Err = Error;
    fn from_str(s: &str) -> Result<Self> {
        HloModule::parse(s)
    }
}
