//! The CUDA code generator: a legalized module to a [`Program`].
//!
//! # Design
//! * Legalization first (the backend declares [`supported_ops`]); the
//!   generator then sees a row-major module of a small op set with calls and
//!   fusions inlined.
//! * Fusion is decided per instruction: a value is *materialized* (gets a
//!   buffer) when it is a computation's root, has several users, feeds an op
//!   that needs buffers (`tuple`, `while`, `conditional`, `custom-call`,
//!   `scatter`), is expensive (`dot`, `reduce`: never recomputed), or is not
//!   cheap and would be replicated by a `broadcast` or a `dot` operand.
//!   Everything else is computed inside its user's kernel, element by element
//!   ([`kernel`]): elementwise chains, broadcasts, transposes, slices, pads,
//!   gathers and the producers of reductions fuse into one loop.
//! * Buffers live at fixed offsets of one arena per run (no reuse yet: the
//!   arena is the sum of the program's intermediate values), the entry's
//!   parameters and results in the caller's buffers.
//! * Control flow runs on the host: `while` reads its predicate back each
//!   iteration, `conditional` its branch index.
//! * Every kernel is a grid-stride loop with no shared memory and no
//!   synchronization between threads, so running it as one thread is exact:
//!   that is how the host emulator ([`crate::emulate`]) checks the generated
//!   code without a GPU. `scatter` runs as one thread on the GPU too, so that
//!   duplicate indices combine in XLA's order.

pub mod kernel;
pub mod scalar;

use crate::program::{BufferRef, Kernel, LaunchDims, Program, Thunk};
use kernel::{Functions, KernelBuilder, Producers};
use platform_api::evaluator::plan::ModulePlan;
use platform_api::hlo::{HloComputation, HloModule, InstrId, Op};
use platform_api::semantics::contraction::Contraction;
use platform_api::{ElementType, Error, OpSupport, Opcode, Result, Shape};
use std::collections::HashMap;

/// Types, semantics and macros every generated translation unit starts with.
pub const PRELUDE: &str = include_str!("prelude.h");

/// Arithmetic the kernels compute, on [`TYPES`].
pub const OPS: &[Opcode] = &[
    Opcode::Add,
    Opcode::Multiply,
    Opcode::Divide,
    Opcode::Compare,
    Opcode::Select,
    Opcode::Exp,
    Opcode::Log,
    Opcode::Sqrt,
    Opcode::Tanh,
    Opcode::Sin,
    Opcode::Cos,
    Opcode::And,
    Opcode::Or,
    Opcode::Xor,
    Opcode::ShiftLeft,
    Opcode::ShiftRightLogical,
    Opcode::ShiftRightArithmetic,
    Opcode::Dot,
    Opcode::Reduce,
    Opcode::ReduceWindow,
    Opcode::Scatter,
    Opcode::While,
    Opcode::Conditional,
    Opcode::CustomCall,
    Opcode::OptimizationBarrier,
    Opcode::AddDependency,
    Opcode::AfterAll,
];

/// Data movement, on any element type with a storage type.
pub const MOVEMENT_OPS: &[Opcode] = &[
    Opcode::Convert,
    Opcode::BitcastConvert,
    Opcode::Broadcast,
    Opcode::Reshape,
    Opcode::Transpose,
    Opcode::Slice,
    Opcode::Concatenate,
    Opcode::Pad,
    Opcode::Reverse,
    Opcode::Iota,
    Opcode::DynamicSlice,
    Opcode::DynamicUpdateSlice,
    Opcode::Gather,
];

/// The element types [`OPS`] compute on.
pub const TYPES: &[ElementType] = &[
    ElementType::Pred,
    ElementType::S8,
    ElementType::S16,
    ElementType::S32,
    ElementType::S64,
    ElementType::U8,
    ElementType::U16,
    ElementType::U32,
    ElementType::U64,
    ElementType::F32,
    ElementType::F64,
];

/// What the generator implements; legalization rewrites the rest.
pub fn supported_ops() -> OpSupport {
    OpSupport::new()
        .ops(OPS)
        .types(TYPES)
        .any_type(MOVEMENT_OPS)
}

/// [`supported_ops`] without `op`.
pub fn supported_ops_without(op: Opcode) -> OpSupport {
    let ops: Vec<Opcode> = OPS.iter().copied().filter(|&o| o != op).collect();
    OpSupport::new()
        .ops(&ops)
        .types(TYPES)
        .any_type(MOVEMENT_OPS)
}

const ALIGN: u64 = 256;
const BLOCK: u32 = 256;
const MAX_GRID: u64 = 1 << 20;
/// The longest chain of instructions fused into one kernel.
const MAX_FUSED_DEPTH: usize = 32;

fn launch_dims(elements: u64) -> LaunchDims {
    let blocks = elements.div_ceil(BLOCK as u64).clamp(1, MAX_GRID);
    LaunchDims {
        grid: blocks as u32,
        block: BLOCK,
    }
}

fn leaf_shapes(shape: &Shape) -> Vec<(ElementType, Vec<usize>)> {
    shape
        .leaves()
        .into_iter()
        .map(|(_, a)| (a.element_type, a.dims.clone()))
        .collect()
}

fn leaf_bytes(ty: ElementType, dims: &[usize]) -> Result<u64> {
    let n = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    n.and_then(|n| n.checked_mul(ty.byte_size() as u64))
        .ok_or_else(|| {
            Error::resource_exhausted(format!("an array of {ty}{dims:?} does not fit in memory"))
        })
}

/// Generates the program for a legalized, layout-free module. With
/// `contract`, multiply-adds fuse as XLA CPU fuses them (the `fp_contract`
/// compile option).
pub fn generate(module: &HloModule, contract: bool) -> Result<Program> {
    let plan = ModulePlan::new(module, contract)?;
    let mut gen = Generator {
        module,
        contractions: plan
            .computations
            .into_iter()
            .map(|c| c.contractions)
            .collect(),
        functions: Functions::default(),
        kernels: Vec::new(),
        kernel_source: String::new(),
        arena: 0,
        constants: Vec::new(),
    };
    let entry = module.computation(module.entry);
    let mut parameter_shapes = Vec::new();
    let mut params: Vec<Vec<BufferRef>> = Vec::new();
    let mut leaf = 0;
    for instr in &entry.instructions {
        if let Op::Parameter { number } = instr.op {
            if params.len() <= number {
                params.resize(number + 1, Vec::new());
                parameter_shapes.resize(number + 1, Shape::Tuple(Vec::new()));
            }
            parameter_shapes[number] = instr.shape.clone();
        }
    }
    for (number, shape) in parameter_shapes.iter().enumerate() {
        for _ in leaf_shapes(shape) {
            params[number].push(BufferRef::Parameter { leaf });
            leaf += 1;
        }
    }
    let mut schedule = Vec::new();
    let root = gen.computation(entry, params, &mut schedule)?;
    let shapes = leaf_shapes(&entry.root_instr().shape);
    for (i, (src, (ty, dims))) in root.iter().zip(&shapes).enumerate() {
        schedule.push(Thunk::Copy {
            dst: BufferRef::Result { leaf: i },
            src: *src,
            bytes: leaf_bytes(*ty, dims)?,
        });
    }
    Ok(Program {
        name: module.name.clone(),
        source: format!(
            "{PRELUDE}\n/* ---- scalar computations ---- */\n{}\n/* ---- kernels ---- */\n{}",
            gen.functions.source, gen.kernel_source
        ),
        kernels: gen.kernels,
        arena_bytes: gen.arena,
        constants: gen.constants,
        schedule,
        parameter_shapes,
        result_shape: entry.root_instr().shape.clone(),
    })
}

struct Generator<'m> {
    module: &'m HloModule,
    /// Per computation: the add/subtract instructions that absorb a multiply.
    contractions: Vec<Vec<Option<(usize, Contraction)>>>,
    functions: Functions,
    kernels: Vec<Kernel>,
    kernel_source: String,
    arena: u64,
    constants: Vec<Vec<u8>>,
}

/// The materialized values of one computation, as [`Producers`] sees them.
struct Materialized<'l> {
    leaves: &'l HashMap<InstrId, Vec<BufferRef>>,
    contractions: &'l [Option<(usize, Contraction)>],
}

impl Producers for Materialized<'_> {
    fn buffer(&self, id: InstrId) -> Option<BufferRef> {
        match self.leaves.get(&id) {
            Some(leaves) if leaves.len() == 1 => Some(leaves[0]),
            _ => None,
        }
    }

    fn contraction(&self, id: InstrId) -> Option<(usize, Contraction)> {
        self.contractions.get(id.index()).copied().flatten()
    }
}

/// Ops that produce their value without a kernel of their own or that need
/// their operands in buffers.
fn needs_buffers(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Tuple
            | Opcode::GetTupleElement
            | Opcode::While
            | Opcode::Conditional
            | Opcode::CustomCall
            | Opcode::Scatter
            | Opcode::OptimizationBarrier
            | Opcode::AddDependency
            | Opcode::AfterAll
            | Opcode::Parameter
    )
}

/// Cheap enough to recompute for every element a broadcast or dot replicates.
fn is_cheap(op: Opcode) -> bool {
    matches!(
        op,
        Opcode::Parameter
            | Opcode::Constant
            | Opcode::Iota
            | Opcode::GetTupleElement
            | Opcode::Convert
            | Opcode::Reshape
            | Opcode::Transpose
            | Opcode::Slice
            | Opcode::Broadcast
            | Opcode::BitcastConvert
    )
}

/// `comp`'s entry of [`Generator::contractions`] (none for a computation of
/// another module).
fn contractions_of<'c>(
    all: &'c [Vec<Option<(usize, Contraction)>>],
    module: &HloModule,
    comp: &HloComputation,
) -> &'c [Option<(usize, Contraction)>] {
    module
        .computations
        .iter()
        .position(|c| std::ptr::eq(c, comp))
        .and_then(|i| all.get(i))
        .map_or(&[][..], Vec::as_slice)
}

impl Generator<'_> {
    fn alloc(&mut self, bytes: u64) -> Result<BufferRef> {
        let offset = self.arena;
        self.arena = bytes
            .checked_next_multiple_of(ALIGN)
            .and_then(|b| offset.checked_add(b))
            .ok_or_else(|| {
                Error::resource_exhausted("the program's buffers exceed the address space")
            })?;
        Ok(BufferRef::Arena { offset })
    }

    fn alloc_leaves(&mut self, shape: &Shape) -> Result<Vec<BufferRef>> {
        leaf_shapes(shape)
            .iter()
            .map(|(ty, dims)| self.alloc(leaf_bytes(*ty, dims)?))
            .collect()
    }

    /// Emits `comp`'s thunks into `out` with its parameters in `params`;
    /// returns the root's leaves.
    fn computation(
        &mut self,
        comp: &HloComputation,
        params: Vec<Vec<BufferRef>>,
        out: &mut Vec<Thunk>,
    ) -> Result<Vec<BufferRef>> {
        let n = comp.instructions.len();
        let mut users: Vec<Vec<usize>> = vec![Vec::new(); n];
        for (i, instr) in comp.instructions.iter().enumerate() {
            for &o in &instr.operands {
                if !users[o.index()].contains(&i) {
                    users[o.index()].push(i);
                }
            }
        }
        // Live: reachable from the root or from a side-effecting custom call.
        let mut live = vec![false; n];
        let mut stack = vec![comp.root.index()];
        for (i, instr) in comp.instructions.iter().enumerate() {
            if let Op::CustomCall(attrs) = &instr.op {
                if attrs.has_side_effect {
                    stack.push(i);
                }
            }
        }
        while let Some(i) = stack.pop() {
            if !std::mem::replace(&mut live[i], true) {
                stack.extend(comp.instructions[i].operands.iter().map(|o| o.index()));
            }
        }
        let materialize = |i: usize| -> bool {
            let instr = &comp.instructions[i];
            let op = instr.op.opcode();
            let live_users: Vec<usize> = users[i].iter().copied().filter(|&u| live[u]).collect();
            if i == comp.root.index() || needs_buffers(op) || live_users.len() != 1 {
                return true;
            }
            if matches!(op, Opcode::Dot | Opcode::Reduce | Opcode::ReduceWindow)
                || !matches!(instr.shape, Shape::Array(_))
            {
                return true;
            }
            if op == Opcode::Constant && instr.shape.element_count() != 1 {
                return true;
            }
            let user = comp.instructions[live_users[0]].op.opcode();
            needs_buffers(user)
                || (matches!(user, Opcode::Broadcast | Opcode::Dot) && !is_cheap(op))
        };
        let mut leaves: HashMap<InstrId, Vec<BufferRef>> = HashMap::new();
        // How deep the fused expression ending at each instruction is; deep
        // chains are cut so kernels (and the generator's recursion) stay small.
        let mut depth = vec![0usize; n];
        for i in 0..n {
            if !live[i] {
                continue;
            }
            let fused_depth = 1 + comp.instructions[i]
                .operands
                .iter()
                .map(|o| depth[o.index()])
                .max()
                .unwrap_or(0);
            if !materialize(i) && fused_depth <= MAX_FUSED_DEPTH {
                depth[i] = fused_depth;
                continue;
            }
            let id = InstrId(i as u32);
            let value = self.materialize(comp, id, &params, &leaves, out)?;
            leaves.insert(id, value);
        }
        leaves
            .get(&comp.root)
            .cloned()
            .ok_or_else(|| Error::internal(format!("root of {} was not materialized", comp.name)))
    }

    fn operand_leaves(
        leaves: &HashMap<InstrId, Vec<BufferRef>>,
        comp: &HloComputation,
        id: InstrId,
        k: usize,
    ) -> Result<Vec<BufferRef>> {
        let o = comp.instr(id).operands[k];
        leaves.get(&o).cloned().ok_or_else(|| {
            Error::internal(format!(
                "operand %{} of %{} has no buffer",
                comp.instr(o).name,
                comp.instr(id).name
            ))
        })
    }

    fn materialize(
        &mut self,
        comp: &HloComputation,
        id: InstrId,
        params: &[Vec<BufferRef>],
        leaves: &HashMap<InstrId, Vec<BufferRef>>,
        out: &mut Vec<Thunk>,
    ) -> Result<Vec<BufferRef>> {
        let instr = comp.instr(id);
        let operand = |k: usize| Self::operand_leaves(leaves, comp, id, k);
        match &instr.op {
            Op::Parameter { number } => params.get(*number).cloned().ok_or_else(|| {
                Error::internal(format!("parameter {number} of {} is not bound", comp.name))
            }),
            Op::GetTupleElement { index } => {
                let Shape::Tuple(elements) = &comp.instr(instr.operands[0]).shape else {
                    return Err(Error::internal(format!(
                        "%{} reads a non-tuple",
                        instr.name
                    )));
                };
                let before: usize = elements[..*index]
                    .iter()
                    .map(|s| leaf_shapes(s).len())
                    .sum();
                let count = leaf_shapes(&elements[*index]).len();
                Ok(operand(0)?[before..before + count].to_vec())
            }
            Op::Tuple => {
                let mut all = Vec::new();
                for k in 0..instr.operands.len() {
                    all.extend(operand(k)?);
                }
                Ok(all)
            }
            Op::OptimizationBarrier | Op::AddDependency => operand(0),
            Op::AfterAll => Ok(Vec::new()),
            Op::Constant { literal } => {
                let targets = self.alloc_leaves(&instr.shape)?;
                let parts: Vec<&platform_api::Literal> = match literal.is_tuple() {
                    true => literal.tuple_elements().iter().collect(),
                    false => vec![literal],
                };
                if parts.len() != targets.len() {
                    return Err(Error::unimplemented(format!(
                        "the CUDA backend takes no nested tuple constants (%{})",
                        instr.name
                    )));
                }
                for (dst, part) in targets.iter().zip(parts) {
                    self.constants.push(part.bytes()?.to_vec());
                    out.push(Thunk::Upload {
                        dst: *dst,
                        data: self.constants.len() - 1,
                    });
                }
                Ok(targets)
            }
            Op::While { condition, body } => {
                let state = self.alloc_leaves(&instr.shape)?;
                let shapes = leaf_shapes(&instr.shape);
                for ((dst, src), (ty, dims)) in state.iter().zip(operand(0)?).zip(&shapes) {
                    out.push(Thunk::Copy {
                        dst: *dst,
                        src,
                        bytes: leaf_bytes(*ty, dims)?,
                    });
                }
                let mut cond_thunks = Vec::new();
                let cond = self.module.computation(*condition);
                let predicate = self.computation(cond, vec![state.clone()], &mut cond_thunks)?;
                let mut body_thunks = Vec::new();
                let body_comp = self.module.computation(*body);
                let next = self.computation(body_comp, vec![state.clone()], &mut body_thunks)?;
                self.copy_back(&next, &state, &shapes, &mut body_thunks)?;
                out.push(Thunk::While {
                    condition: cond_thunks,
                    predicate: *predicate
                        .first()
                        .ok_or_else(|| Error::internal("while condition has no value"))?,
                    body: body_thunks,
                });
                Ok(state)
            }
            Op::Conditional { branches } => {
                let results = self.alloc_leaves(&instr.shape)?;
                let shapes = leaf_shapes(&instr.shape);
                let index = *operand(0)?
                    .first()
                    .ok_or_else(|| Error::internal("conditional without index"))?;
                let index_is_pred = comp
                    .instr(instr.operands[0])
                    .shape
                    .as_array()
                    .map(|a| a.element_type)
                    == Some(ElementType::Pred);
                let mut lists = Vec::new();
                for (b, branch) in branches.iter().enumerate() {
                    let mut thunks = Vec::new();
                    let root = self.computation(
                        self.module.computation(*branch),
                        vec![operand(b + 1)?],
                        &mut thunks,
                    )?;
                    for ((dst, src), (ty, dims)) in results.iter().zip(root).zip(&shapes) {
                        thunks.push(Thunk::Copy {
                            dst: *dst,
                            src,
                            bytes: leaf_bytes(*ty, dims)?,
                        });
                    }
                    lists.push(thunks);
                }
                out.push(Thunk::Conditional {
                    index,
                    index_is_pred,
                    branches: lists,
                });
                Ok(results)
            }
            Op::CustomCall(attrs) => {
                let results = self.alloc_leaves(&instr.shape)?;
                let mut buffers = Vec::new();
                for k in 0..instr.operands.len() {
                    buffers.extend(operand(k)?);
                }
                buffers.extend(results.iter().copied());
                let opaque = instr
                    .backend_config
                    .as_ref()
                    .map(|c| c.as_str().as_bytes().to_vec())
                    .unwrap_or_default();
                out.push(Thunk::CustomCall {
                    instruction: instr.name.clone(),
                    target: attrs.target.clone(),
                    api_version: attrs.api_version,
                    opaque,
                    buffers,
                });
                Ok(results)
            }
            Op::Scatter { .. } => self.scatter(comp, id, leaves, out),
            _ => {
                let results = self.alloc_leaves(&instr.shape)?;
                self.kernel(comp, id, leaves, &results, out)?;
                Ok(results)
            }
        }
    }

    /// Copies a loop body's result into the loop state; results that are
    /// other state slots go through temporaries first so no copy reads a slot
    /// already overwritten.
    fn copy_back(
        &mut self,
        next: &[BufferRef],
        state: &[BufferRef],
        shapes: &[(ElementType, Vec<usize>)],
        out: &mut Vec<Thunk>,
    ) -> Result<()> {
        let mut sources = next.to_vec();
        for i in 0..next.len() {
            if next[i] != state[i] && state.contains(&next[i]) {
                let bytes = leaf_bytes(shapes[i].0, &shapes[i].1)?;
                let temp = self.alloc(bytes)?;
                out.push(Thunk::Copy {
                    dst: temp,
                    src: next[i],
                    bytes,
                });
                sources[i] = temp;
            }
        }
        for i in 0..next.len() {
            if sources[i] != state[i] {
                out.push(Thunk::Copy {
                    dst: state[i],
                    src: sources[i],
                    bytes: leaf_bytes(shapes[i].0, &shapes[i].1)?,
                });
            }
        }
        Ok(())
    }

    fn add_kernel(&mut self, params: &[BufferRef], body: &str) -> usize {
        let index = self.kernels.len();
        let name = format!("k{index}");
        let decl: Vec<String> = (0..params.len()).map(|i| format!("char* p{i}")).collect();
        let call: Vec<String> = (0..params.len()).map(|i| format!("a[{i}]")).collect();
        self.kernel_source += &format!(
            "KERNEL void {name}({}) {{\n{body}}}\n#ifdef HLORUN_EMULATE\nvoid {name}_emulate(char** a) {{ {name}({}); }}\n#endif\n",
            decl.join(", "),
            call.join(", ")
        );
        self.kernels.push(Kernel {
            name,
            params: params.len(),
        });
        index
    }

    /// The kernel computing `id` (all outputs of a variadic reduce) into `results`.
    fn kernel(
        &mut self,
        comp: &HloComputation,
        id: InstrId,
        leaves: &HashMap<InstrId, Vec<BufferRef>>,
        results: &[BufferRef],
        out: &mut Vec<Thunk>,
    ) -> Result<()> {
        let instr = comp.instr(id);
        let shapes = leaf_shapes(&instr.shape);
        let (_, dims) = shapes
            .first()
            .cloned()
            .ok_or_else(|| Error::internal(format!("%{} has no value", instr.name)))?;
        let elements: u64 = dims.iter().map(|&d| d as u64).product();
        if elements == 0 {
            return Ok(());
        }
        let producers = Materialized {
            leaves,
            contractions: contractions_of(&self.contractions, self.module, comp),
        };
        let module = self.module;
        let mut kb = KernelBuilder::new(module, comp, &producers, &mut self.functions);
        let outs: Vec<String> = results.iter().map(|r| kb.param(*r)).collect();
        kb.open(&format!(
            "for (s64 gi = THREAD_START; gi < {elements}LL; gi += THREAD_STRIDE)"
        ));
        let idx = kb.unravel("gi", &dims);
        let values = match (&instr.op, shapes.len()) {
            (Op::Reduce { .. }, n) if n > 1 => kb.reduce(id, &idx)?,
            (Op::ReduceWindow { .. }, n) if n > 1 => kb.reduce_window(id, &idx)?,
            _ => vec![kb.compute(id, &idx)?],
        };
        for ((o, v), (ty, _)) in outs.iter().zip(values).zip(&shapes) {
            kb.line(&format!("(({}*){o})[gi] = {v};", scalar::ctype(*ty)?));
        }
        kb.close();
        let (params, body) = (kb.params, kb.body);
        let kernel = self.add_kernel(&params, &body);
        out.push(Thunk::Launch {
            kernel,
            dims: launch_dims(elements),
            args: params,
        });
        Ok(())
    }

    /// `scatter`: the outputs start as copies of the operands, then one
    /// thread applies every update in XLA's order.
    fn scatter(
        &mut self,
        comp: &HloComputation,
        id: InstrId,
        leaves: &HashMap<InstrId, Vec<BufferRef>>,
        out: &mut Vec<Thunk>,
    ) -> Result<Vec<BufferRef>> {
        let instr = comp.instr(id);
        let Op::Scatter {
            dnums, to_apply, ..
        } = &instr.op
        else {
            return Err(Error::internal("not a scatter"));
        };
        let n = instr.operands.len() / 2;
        let results = self.alloc_leaves(&instr.shape)?;
        let shapes = leaf_shapes(&instr.shape);
        for k in 0..n {
            let src = Self::operand_leaves(leaves, comp, id, k)?[0];
            out.push(Thunk::Copy {
                dst: results[k],
                src,
                bytes: leaf_bytes(shapes[k].0, &shapes[k].1)?,
            });
        }
        let array = |i: InstrId| -> Result<Vec<usize>> {
            comp.instr(i)
                .shape
                .as_array()
                .map(|a| a.dims.clone())
                .ok_or_else(|| Error::internal("scatter operand is not an array"))
        };
        let odims = shapes[0].1.clone();
        let indices = instr.operands[n];
        let idims = array(indices)?;
        let udims = array(instr.operands[n + 1])?;
        let updates_elements: u64 = udims.iter().map(|&d| d as u64).product();
        if updates_elements == 0 {
            return Ok(results);
        }
        let producers = Materialized {
            leaves,
            contractions: contractions_of(&self.contractions, self.module, comp),
        };
        let module = self.module;
        let f = self.functions.scalar_function(module, *to_apply)?;
        let mut kb = KernelBuilder::new(module, comp, &producers, &mut self.functions);
        let outs: Vec<String> = results.iter().map(|r| kb.param(*r)).collect();
        kb.open("if (THREAD_START == 0)");
        let scatter_dims: Vec<usize> = (0..udims.len())
            .filter(|d| !dnums.update_window_dims.contains(d))
            .collect();
        let position_dims: Vec<usize> = (0..idims.len())
            .filter(|&d| d != dnums.index_vector_dim)
            .collect();
        let window_operand_dims: Vec<usize> = (0..odims.len())
            .filter(|d| {
                !dnums.inserted_window_dims.contains(d) && !dnums.input_batching_dims.contains(d)
            })
            .collect();
        let mut uidx = vec![String::new(); udims.len()];
        for &d in &scatter_dims {
            let v = kb.var("q");
            kb.open(&format!("for (s64 {v} = 0; {v} < {}LL; {v}++)", udims[d]));
            uidx[d] = v;
        }
        // Starts of every operand dimension for this position.
        let mut starts = vec!["0LL".to_string(); odims.len()];
        for (k, &od) in dnums.scatter_dims_to_operand_dims.iter().enumerate() {
            let mut iidx = vec![String::new(); idims.len()];
            for (p, &d) in position_dims.iter().enumerate() {
                iidx[d] = uidx[scatter_dims[p]].clone();
            }
            if dnums.index_vector_dim < idims.len() {
                iidx[dnums.index_vector_dim] = format!("{k}LL");
            }
            let v = kb.index_value(indices, &iidx)?;
            starts[od] = format!("({} + {v})", starts[od]);
        }
        for (b, &od) in dnums.input_batching_dims.iter().enumerate() {
            let id_dim = dnums
                .scatter_indices_batching_dims
                .get(b)
                .copied()
                .unwrap_or(0);
            let p = position_dims.iter().position(|&x| x == id_dim).unwrap_or(0);
            starts[od] = uidx[scatter_dims[p]].clone();
        }
        let mut conds = Vec::new();
        let mut start_vars = Vec::new();
        for d in 0..odims.len() {
            let s = kb.var("st");
            kb.line(&format!("s64 {s} = {};", starts[d]));
            let size = match window_operand_dims.iter().position(|&w| w == d) {
                Some(k) => udims[dnums.update_window_dims[k]],
                None => 1,
            };
            conds.push(format!("{s} >= 0 && {s} + {size}LL <= {}LL", odims[d]));
            start_vars.push(s);
        }
        let cond = if conds.is_empty() {
            "1".to_string()
        } else {
            conds.join(" && ")
        };
        kb.open(&format!("if ({cond})"));
        let mut opidx = start_vars.clone();
        for (k, &wd) in dnums.update_window_dims.iter().enumerate() {
            let v = kb.var("w");
            kb.open(&format!("for (s64 {v} = 0; {v} < {}LL; {v}++)", udims[wd]));
            uidx[wd] = v.clone();
            if let Some(&od) = window_operand_dims.get(k) {
                opidx[od] = format!("({} + {v})", start_vars[od]);
            }
        }
        let at = kb.linear(&opidx, &odims);
        let pos = kb.var("at");
        kb.line(&format!("s64 {pos} = {at};"));
        let mut args = Vec::new();
        for (k, o) in outs.iter().enumerate().take(n) {
            args.push(format!("(({}*){o})[{pos}]", scalar::ctype(shapes[k].0)?));
        }
        for k in 0..n {
            args.push(kb.value(instr.operands[n + 1 + k], &uidx)?);
        }
        let mut tmps = Vec::new();
        for (ty, _) in shapes.iter().take(n) {
            let t = kb.var("t");
            kb.line(&format!("{} {t};", scalar::ctype(*ty)?));
            tmps.push(t);
        }
        args.extend(tmps.iter().map(|t| format!("&{t}")));
        kb.line(&format!("{f}({});", args.join(", ")));
        for (k, t) in tmps.iter().enumerate() {
            kb.line(&format!(
                "(({}*){})[{pos}] = {t};",
                scalar::ctype(shapes[k].0)?,
                outs[k]
            ));
        }
        for _ in &dnums.update_window_dims {
            kb.close();
        }
        kb.close();
        for _ in &scatter_dims {
            kb.close();
        }
        kb.close();
        let (params, body) = (kb.params, kb.body);
        let kernel = self.add_kernel(&params, &body);
        out.push(Thunk::Launch {
            kernel,
            dims: LaunchDims { grid: 1, block: 1 },
            args: params,
        });
        Ok(results)
    }
}
