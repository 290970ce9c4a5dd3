//! Running custom calls on platforms whose device memory is host memory
//! (Interpreter, Host).
//!
//! [`HostCustomCall::prepare`] binds one `custom-call` instruction to its target
//! (checking it as [`check_instruction`](super::check_instruction) does) and
//! keeps what every call needs: the target's function, the opaque bytes with a
//! NUL after them, the decoded attributes for a typed handler. It can then be
//! called two ways:
//!
//! * [`HostCustomCall::call`] takes operand [`Literal`]s and returns the result
//!   as a `Literal`: it lays the operands out as the CPU ABI wants (an array is
//!   its buffer in the layout its shape names; a tuple is a table of pointers to
//!   its elements, nested tuples tables of tables), allocates the result the same
//!   way (every leaf, used or not, so an unread tuple element serves as scratch
//!   memory), calls, checks the status and reads the result back. This is what
//!   [`call_host_target`](super::call_host_target) does.
//! * [`HostCustomCall::call_raw`] takes an `out` pointer and an `in` array the
//!   caller has already laid out (the Host platform's own buffers) and only
//!   calls and checks.
//!
//! Output-to-operand aliasing: an aliased result leaf starts out holding the
//! operand's values, and a C target receives that same buffer as the operand
//! (as in XLA, where they are one buffer). A typed handler instead sees the
//! operand's original values as its argument, since Rust cannot hand out a
//! shared and a mutable view of one buffer.

use super::abi::{
    Convention, CpuOriginalFn, CpuStatusReturningFn, CpuStatusReturningUnifiedFn, DeviceKind,
};
use super::attributes::Attributes;
use super::registry::Target;
use super::status::XlaCustomCallStatus;
use super::typed::{array_text, Arg, CallFrame, Ret, TypedClosure, TypedFn};
use super::{custom_call_attrs, resolve, Resolved};
use crate::error::{Error, Result};
use crate::hlo::{CustomCallApiVersion, HloInstruction, OutputOperandAlias};
use crate::literal::Literal;
use crate::shape::{ArrayShape, Shape};
use crate::transfer::{is_row_major, layout_to_row_major, row_major_to_layout};
use std::ffi::c_void;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// How a prepared call reaches its target.
#[derive(Clone)]
enum Callee {
    Original(CpuOriginalFn),
    StatusReturning(CpuStatusReturningFn),
    Unified(CpuStatusReturningUnifiedFn),
    Typed(TypedFn),
    TypedClosure(TypedClosure),
}

/// One `custom-call` instruction bound to its target on a host platform.
#[derive(Clone)]
pub struct HostCustomCall {
    instruction: String,
    target: String,
    callee: Callee,
    /// `backend_config` followed by a NUL (not counted in the length passed).
    opaque: Vec<u8>,
    attributes: Attributes,
    result_shape: Shape,
    num_operands: usize,
    operand_layouts: Option<Vec<Shape>>,
    aliasing: Vec<OutputOperandAlias>,
}

impl std::fmt::Debug for HostCustomCall {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "HostCustomCall(%{} -> \"{}\")",
            self.instruction, self.target
        )
    }
}

/// A zero-sized stand-in that token operands and results point to.
static TOKEN_PLACEHOLDER: u64 = 0;

impl HostCustomCall {
    /// Resolves `instr`'s target for `platform` (a platform that runs custom calls
    /// on host memory) and checks that the target's convention is the one the
    /// instruction's `api_version` names.
    pub fn prepare(platform: &str, instr: &HloInstruction) -> Result<HostCustomCall> {
        let attrs = custom_call_attrs(instr)?;
        if DeviceKind::of_platform(platform) != DeviceKind::Host {
            return Err(Error::invalid_argument(format!(
                "custom-call %{}: platform \"{platform}\" runs GPU custom calls; host calling is for host platforms",
                instr.name
            )));
        }
        let resolved = resolve(platform, instr)?;
        let callee = match resolved {
            Resolved::Registered(target) => match target {
                Target::CpuOriginal(f) => Callee::Original(f),
                Target::CpuStatusReturning(f) => Callee::StatusReturning(f),
                Target::CpuStatusReturningUnified(f) => Callee::Unified(f),
                Target::Typed(f) | Target::Builtin(f) => Callee::Typed(f),
                Target::TypedClosure(f) => Callee::TypedClosure(f),
                Target::GpuOriginal(_) | Target::GpuStatusReturning(_) => {
                    // `resolve` refuses these on host platforms; kept total.
                    return Err(Error::internal(format!(
                        "custom-call %{}: a GPU target reached host calling",
                        instr.name
                    )));
                }
            },
            Resolved::Symbol { address, .. } => {
                // SAFETY (of the transmutes below): a C symbol has no signature;
                // as in XLA, the instruction's api_version says which one it was
                // written with, and the author vouches for it. `resolve` has
                // refused TYPED_FFI for symbols.
                let address = address as *const c_void;
                match attrs.api_version {
                    CustomCallApiVersion::Original => Callee::Original(unsafe {
                        std::mem::transmute::<*const c_void, CpuOriginalFn>(address)
                    }),
                    CustomCallApiVersion::StatusReturning => Callee::StatusReturning(unsafe {
                        std::mem::transmute::<*const c_void, CpuStatusReturningFn>(address)
                    }),
                    CustomCallApiVersion::StatusReturningUnified => Callee::Unified(unsafe {
                        std::mem::transmute::<*const c_void, CpuStatusReturningUnifiedFn>(address)
                    }),
                    CustomCallApiVersion::TypedFfi => {
                        return Err(Error::internal(format!(
                            "custom-call %{}: a library symbol reached typed calling",
                            instr.name
                        )))
                    }
                }
            }
        };
        let config = instr
            .backend_config
            .as_ref()
            .map(|b| b.as_str())
            .unwrap_or("");
        let attributes = match callee {
            Callee::Typed(_) | Callee::TypedClosure(_)
                if attrs.api_version == CustomCallApiVersion::TypedFfi =>
            {
                Attributes::parse(config).map_err(|e| {
                    e.context(format_args!("custom-call %{} backend_config", instr.name))
                })?
            }
            _ => Attributes::default(),
        };
        let mut opaque = config.as_bytes().to_vec();
        opaque.push(0);
        Ok(HostCustomCall {
            instruction: instr.name.clone(),
            target: attrs.target.clone(),
            callee,
            opaque,
            attributes,
            result_shape: instr.shape.clone(),
            num_operands: instr.operands.len(),
            operand_layouts: attrs.operand_layout_constraints.clone(),
            aliasing: attrs.output_to_operand_aliasing.clone(),
        })
    }

    /// The convention the target is called with.
    pub fn convention(&self) -> Convention {
        match self.callee {
            Callee::Original(_) => Convention::CpuOriginal,
            Callee::StatusReturning(_) => Convention::CpuStatusReturning,
            Callee::Unified(_) => Convention::CpuStatusReturningUnified,
            Callee::Typed(_) | Callee::TypedClosure(_) => Convention::Typed,
        }
    }

    fn backend_config(&self) -> &[u8] {
        &self.opaque[..self.opaque.len() - 1]
    }

    fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::invalid_argument(format!(
            "custom-call %{} (target \"{}\"): {message}",
            self.instruction, self.target
        ))
    }

    /// Calls the target on operand literals and returns its result. A failure
    /// the target reports (status or `Err`) discards the outputs and comes back
    /// as the error: `Internal` with the target's message for a status failure
    /// (XLA's code), the handler's own error for a typed handler.
    pub fn call(&self, operands: &[&Literal]) -> Result<Literal> {
        if operands.len() != self.num_operands {
            return Err(self.error(format!(
                "the instruction has {} operand(s); {} value(s) were given",
                self.num_operands,
                operands.len()
            )));
        }
        if let Some(layouts) = &self.operand_layouts {
            for (i, (op, want)) in operands.iter().zip(layouts).enumerate() {
                if !op.shape().compatible(want) {
                    return Err(self.error(format!(
                        "operand {i} is {}, but operand_layout_constraints say {want}",
                        op.shape()
                    )));
                }
            }
        }
        let typed = matches!(self.callee, Callee::Typed(_) | Callee::TypedClosure(_));
        let mut results = ResultBuffers::allocate(&self.result_shape);
        if typed {
            // Typed handlers read and write dense row-major buffers.
            results.make_row_major();
        }
        for alias in &self.aliasing {
            self.prefill_alias(alias, operands, &mut results)?;
        }
        match &self.callee {
            Callee::Typed(_) | Callee::TypedClosure(_) => {
                let mut args = Vec::new();
                for op in operands {
                    flatten_literal(op, &mut args);
                }
                let args = args
                    .into_iter()
                    .enumerate()
                    .map(|(i, (shape, bytes))| Arg::new(i, shape, bytes))
                    .collect();
                let rets = results.typed_views();
                self.run_typed(args, rets)?;
            }
            _ => {
                let mut arena = Arena::default();
                let aliased = results.alias_map(&self.aliasing);
                let mut ins = Vec::with_capacity(operands.len());
                for (i, op) in operands.iter().enumerate() {
                    let layout_shape = self
                        .operand_layouts
                        .as_ref()
                        .and_then(|l| l.get(i))
                        .unwrap_or_else(|| op.shape());
                    let mut path = Vec::new();
                    ins.push(lay_out_operand(
                        op,
                        layout_shape,
                        i,
                        &mut path,
                        &aliased,
                        &mut arena,
                    )?);
                }
                let out = results.root_pointer();
                // SAFETY: `ins` and `out` point to buffers and tables laid out as
                // the shapes say, alive until the call returns.
                unsafe { self.call_c(out, ins.as_ptr())? };
            }
        }
        results.into_literal()
    }

    /// Copies operand values into the result leaves that alias them.
    fn prefill_alias(
        &self,
        alias: &OutputOperandAlias,
        operands: &[&Literal],
        results: &mut ResultBuffers,
    ) -> Result<()> {
        let operand = operands.get(alias.operand).ok_or_else(|| {
            self.error(format!(
                "output_to_operand_aliasing names operand {}",
                alias.operand
            ))
        })?;
        let mut source: &Literal = operand;
        for &i in &alias.operand_index {
            source = source.tuple_elements().get(i).ok_or_else(|| {
                self.error(format!(
                    "output_to_operand_aliasing: operand {} has no element {:?}",
                    alias.operand, alias.operand_index
                ))
            })?;
        }
        let mut leaves = Vec::new();
        flatten_literal(source, &mut leaves);
        let targets = results.leaves_under(&alias.output_index);
        if targets.len() != leaves.len() {
            return Err(self.error(format!(
                "output {:?} and operand {} {:?} alias but have different shapes",
                alias.output_index, alias.operand, alias.operand_index
            )));
        }
        for (leaf, (shape, bytes)) in targets.into_iter().zip(leaves) {
            let dest = &mut results.leaves[leaf];
            if !dest.shape.compatible(&shape) {
                return Err(self.error(format!(
                    "output {:?} is {} but aliases operand {} {:?} of {}",
                    alias.output_index,
                    array_text(&dest.shape),
                    alias.operand,
                    alias.operand_index,
                    array_text(&shape)
                )));
            }
            let physical = row_major_to_layout(bytes, &dest.shape);
            dest.bytes_mut().copy_from_slice(&physical);
        }
        Ok(())
    }

    /// Calls a C target and turns a reported failure into an error.
    ///
    /// # Safety
    /// `out` and `ins` are laid out as the result and operand shapes say.
    unsafe fn call_c(&self, out: *mut c_void, ins: *const *const c_void) -> Result<()> {
        let mut status = XlaCustomCallStatus::new();
        // SAFETY: guaranteed by the caller; the opaque bytes outlive the call.
        unsafe {
            match &self.callee {
                Callee::Original(f) => f(out, ins),
                Callee::StatusReturning(f) => f(out, ins, &mut status),
                Callee::Unified(f) => f(
                    out,
                    ins,
                    self.opaque.as_ptr().cast(),
                    self.opaque.len() - 1,
                    &mut status,
                ),
                Callee::Typed(_) | Callee::TypedClosure(_) => {
                    return Err(Error::internal("typed handler reached C calling"))
                }
            }
        }
        match status.failure() {
            None => Ok(()),
            Some(message) => Err(Error::internal(format!(
                "custom-call %{} (target \"{}\") failed: {message}",
                self.instruction, self.target
            ))),
        }
    }

    fn run_typed(&self, args: Vec<Arg<'_>>, rets: Vec<Ret<'_>>) -> Result<()> {
        let mut frame = CallFrame::new(
            &self.target,
            &self.instruction,
            args,
            rets,
            &self.attributes,
            self.backend_config(),
        );
        let outcome = catch_unwind(AssertUnwindSafe(|| match &self.callee {
            Callee::Typed(f) => f(&mut frame),
            Callee::TypedClosure(f) => f(&mut frame),
            _ => Err(Error::internal("C target reached typed calling")),
        }));
        let prefix = format!("custom-call %{} ", self.instruction);
        match outcome {
            Ok(Ok(())) => Ok(()),
            Ok(Err(e)) if e.message().starts_with(&prefix) => Err(e),
            Ok(Err(e)) => Err(e.context(format_args!(
                "custom-call %{} (target \"{}\")",
                self.instruction, self.target
            ))),
            Err(panic) => {
                let what = panic
                    .downcast_ref::<&str>()
                    .map(|s| s.to_string())
                    .or_else(|| panic.downcast_ref::<String>().cloned())
                    .unwrap_or_else(|| "a non-string payload".into());
                Err(Error::internal(format!(
                    "custom-call %{} (target \"{}\"): the handler panicked: {what}",
                    self.instruction, self.target
                )))
            }
        }
    }

    /// Calls the target on buffers the caller has laid out already: `out` is the
    /// result's buffer (for a tuple result, its table of element pointers) and
    /// `ins[i]` operand `i`'s (for a tuple, its table), exactly the CPU ABI.
    /// `operand_shapes` are the operands' shapes (with the layouts their buffers
    /// are in); they are used by typed handlers, which are given views of the
    /// array leaves and need row-major leaves.
    ///
    /// A failure the target reports comes back as the error, as for
    /// [`HostCustomCall::call`]; the result buffers then hold nothing usable.
    ///
    /// # Safety
    /// `ins` holds one pointer per operand and every pointer (and every table
    /// entry below it) points to memory laid out and sized as the shapes say,
    /// readable for operands and writable for the result; the result does not
    /// overlap operands except where the instruction aliases them; nothing else
    /// touches these buffers during the call. Misalignment and null leaves are
    /// detected for typed handlers, not for C targets.
    pub unsafe fn call_raw(
        &self,
        out: *mut c_void,
        ins: *const *const c_void,
        operand_shapes: &[Shape],
    ) -> Result<()> {
        if operand_shapes.len() != self.num_operands {
            return Err(self.error(format!(
                "the instruction has {} operand(s); {} shape(s) were given",
                self.num_operands,
                operand_shapes.len()
            )));
        }
        match &self.callee {
            Callee::Typed(_) | Callee::TypedClosure(_) => {
                let mut arg_leaves = Vec::new();
                for (i, shape) in operand_shapes.iter().enumerate() {
                    // SAFETY: the caller guarantees `ins` has an entry per operand.
                    let ptr = unsafe { *ins.add(i) };
                    // SAFETY: as guaranteed by the caller.
                    unsafe { raw_leaves(ptr, shape, &mut arg_leaves) }
                        .map_err(|e| self.error(format!("operand {i}: {e}")))?;
                }
                let mut ret_leaves = Vec::new();
                // SAFETY: as guaranteed by the caller.
                unsafe { raw_leaves(out.cast_const(), &self.result_shape, &mut ret_leaves) }
                    .map_err(|e| self.error(format!("result: {e}")))?;
                for (what, leaves) in [("operand", &arg_leaves), ("result", &ret_leaves)] {
                    if let Some((shape, _)) = leaves.iter().find(|(s, _)| !is_row_major(s)) {
                        return Err(Error::unimplemented(format!(
                            "custom-call %{} (target \"{}\"): typed handlers take row-major buffers; an {what} leaf is {}",
                            self.instruction,
                            self.target,
                            Shape::Array(shape.clone())
                        )));
                    }
                }
                // Results must not overlap each other; an argument that overlaps a
                // result (aliasing) is read from a snapshot taken before the call.
                for (i, (_, a)) in ret_leaves.iter().enumerate() {
                    for (_, b) in &ret_leaves[i + 1..] {
                        if overlaps(*a, *b) {
                            return Err(self.error("two result buffers overlap"));
                        }
                    }
                }
                let snapshots: Vec<Option<Vec<u64>>> = arg_leaves
                    .iter()
                    .map(|(_, (ptr, len))| {
                        ret_leaves
                            .iter()
                            .any(|(_, r)| overlaps((*ptr, *len), *r))
                            .then(|| {
                                let mut copy = vec![0u64; len.div_ceil(8)];
                                // SAFETY: the argument is readable for `len` bytes.
                                let src = unsafe { std::slice::from_raw_parts(*ptr, *len) };
                                bytemuck::cast_slice_mut::<u64, u8>(&mut copy)[..*len]
                                    .copy_from_slice(src);
                                copy
                            })
                    })
                    .collect();
                let args = arg_leaves
                    .iter()
                    .zip(&snapshots)
                    .enumerate()
                    .map(|(i, ((shape, (ptr, len)), snap))| {
                        let bytes: &[u8] = match snap {
                            Some(copy) => &bytemuck::cast_slice::<u64, u8>(copy)[..*len],
                            // SAFETY: readable for `len` bytes, not written during
                            // the call (it overlaps no result).
                            None => unsafe { slice_or_empty(*ptr, *len) },
                        };
                        Arg::new(i, shape.clone(), bytes)
                    })
                    .collect();
                let rets = ret_leaves
                    .iter()
                    .enumerate()
                    .map(|(i, (shape, (ptr, len)))| {
                        // SAFETY: writable for `len` bytes, overlapping no other view.
                        let bytes = unsafe { slice_mut_or_empty(ptr.cast_mut(), *len) };
                        Ret::new(i, shape.clone(), bytes)
                    })
                    .collect();
                self.run_typed(args, rets)
            }
            // SAFETY: as guaranteed by the caller.
            _ => unsafe { self.call_c(out, ins) },
        }
    }
}

fn overlaps(a: (*const u8, usize), b: (*const u8, usize)) -> bool {
    let (a0, b0) = (a.0 as usize, b.0 as usize);
    a.1 > 0 && b.1 > 0 && a0 < b0 + b.1 && b0 < a0 + a.1
}

/// # Safety
/// `ptr` is readable for `len` bytes (or `len` is 0).
unsafe fn slice_or_empty<'a>(ptr: *const u8, len: usize) -> &'a [u8] {
    if len == 0 {
        &[]
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    }
}

/// # Safety
/// `ptr` is writable for `len` bytes (or `len` is 0) and nothing else views it.
unsafe fn slice_mut_or_empty<'a>(ptr: *mut u8, len: usize) -> &'a mut [u8] {
    if len == 0 {
        &mut []
    } else {
        // SAFETY: per the contract.
        unsafe { std::slice::from_raw_parts_mut(ptr, len) }
    }
}

/// The array leaves below `ptr` (a buffer, or a table for a tuple), in preorder,
/// with their addresses and sizes.
///
/// # Safety
/// `ptr` is laid out as `shape` says.
unsafe fn raw_leaves(
    ptr: *const c_void,
    shape: &Shape,
    out: &mut Vec<(ArrayShape, (*const u8, usize))>,
) -> std::result::Result<(), String> {
    match shape {
        Shape::Array(a) => {
            let len = a.byte_size();
            if len > 0 {
                if ptr.is_null() {
                    return Err(format!("null buffer for {}", array_text(a)));
                }
                let align = a.element_type.byte_size().min(8);
                if (ptr as usize) & (align - 1) != 0 {
                    return Err(format!(
                        "buffer for {} at {ptr:p} is not {align}-byte aligned",
                        array_text(a)
                    ));
                }
            }
            out.push((a.clone(), (ptr.cast::<u8>(), len)));
        }
        Shape::Tuple(elements) => {
            if ptr.is_null() {
                return Err(format!("null tuple table for {shape}"));
            }
            let table = ptr.cast::<*const c_void>();
            for (i, e) in elements.iter().enumerate() {
                // SAFETY: a tuple's table has one pointer per element.
                let entry = unsafe { table.add(i).read_unaligned() };
                // SAFETY: the entry is laid out as the element's shape.
                unsafe { raw_leaves(entry, e, out) }?;
            }
        }
        Shape::Token => {}
    }
    Ok(())
}

/// The array leaves of a literal in preorder, with their row-major bytes.
fn flatten_literal<'a>(lit: &'a Literal, out: &mut Vec<(ArrayShape, &'a [u8])>) {
    match lit.shape() {
        Shape::Array(a) => {
            let mut a = a.clone();
            a.layout = None;
            out.push((a, lit.bytes().unwrap_or(&[])));
        }
        Shape::Tuple(_) => {
            for e in lit.tuple_elements() {
                flatten_literal(e, out);
            }
        }
        Shape::Token => {}
    }
}

/// Keeps physical copies and pointer tables alive for the length of a call.
#[derive(Default)]
struct Arena {
    copies: Vec<Vec<u64>>,
    tables: Vec<Box<[*const c_void]>>,
}

/// Operand `index`'s pointer as the CPU ABI wants it: its buffer (in the layout
/// `layout_shape` names), or a table of its elements for a tuple. Leaves that a
/// result aliases point to that result's buffer.
fn lay_out_operand(
    lit: &Literal,
    layout_shape: &Shape,
    index: usize,
    path: &mut Vec<usize>,
    aliased: &[(usize, Vec<usize>, *mut c_void)],
    arena: &mut Arena,
) -> Result<*const c_void> {
    if let Some((_, _, ptr)) = aliased
        .iter()
        .find(|(op, p, _)| *op == index && p.as_slice() == path.as_slice())
    {
        if lit.shape().is_array() {
            return Ok(ptr.cast_const());
        }
    }
    match lit.shape() {
        Shape::Array(a) => {
            let bytes = lit.bytes()?;
            let layout = match layout_shape {
                Shape::Array(l) => l,
                _ => a,
            };
            if is_row_major(layout) || a.element_count() <= 1 {
                return Ok(bytes.as_ptr().cast());
            }
            let mut physical_shape = a.clone();
            physical_shape.layout = layout.layout.clone();
            let physical = row_major_to_layout(bytes, &physical_shape);
            let mut copy = vec![0u64; physical.len().div_ceil(8)];
            bytemuck::cast_slice_mut::<u64, u8>(&mut copy)[..physical.len()]
                .copy_from_slice(&physical);
            let ptr = copy.as_ptr().cast();
            arena.copies.push(copy);
            Ok(ptr)
        }
        Shape::Tuple(_) => {
            let mut table = Vec::new();
            for (i, e) in lit.tuple_elements().iter().enumerate() {
                let sub_layout = layout_shape.tuple_shapes().get(i).unwrap_or(e.shape());
                path.push(i);
                let p = lay_out_operand(e, sub_layout, index, path, aliased, arena);
                path.pop();
                table.push(p?);
            }
            let table = table.into_boxed_slice();
            let ptr = table.as_ptr().cast();
            arena.tables.push(table);
            Ok(ptr)
        }
        Shape::Token => Ok((&TOKEN_PLACEHOLDER as *const u64).cast()),
    }
}

/// One result leaf: its shape (with the layout its bytes are in) and storage.
struct Leaf {
    /// The leaf's shape, its layout being the physical order of `words`.
    shape: ArrayShape,
    words: Vec<u64>,
}

impl Leaf {
    fn bytes(&self) -> &[u8] {
        &bytemuck::cast_slice::<u64, u8>(&self.words)[..self.shape.byte_size()]
    }
    fn bytes_mut(&mut self) -> &mut [u8] {
        let n = self.shape.byte_size();
        &mut bytemuck::cast_slice_mut::<u64, u8>(&mut self.words)[..n]
    }
}

/// The result's shape tree, pointing into `ResultBuffers`.
enum Node {
    Leaf(usize),
    Tuple { table: usize, elements: Vec<Node> },
    Token,
}

/// Every buffer of a result, allocated (zeroed) for every leaf, plus the tables
/// of its tuples, filled with the leaves' addresses.
struct ResultBuffers {
    /// The instruction's result shape (what the literal read back will have).
    shape: Shape,
    leaves: Vec<Leaf>,
    tables: Vec<Box<[*mut c_void]>>,
    root: Node,
}

impl ResultBuffers {
    fn allocate(shape: &Shape) -> ResultBuffers {
        fn build(
            shape: &Shape,
            leaves: &mut Vec<Leaf>,
            tables: &mut Vec<Box<[*mut c_void]>>,
        ) -> Node {
            match shape {
                Shape::Array(a) => {
                    leaves.push(Leaf {
                        shape: a.clone(),
                        words: vec![0u64; a.byte_size().div_ceil(8)],
                    });
                    Node::Leaf(leaves.len() - 1)
                }
                Shape::Tuple(t) => {
                    let elements: Vec<Node> = t.iter().map(|e| build(e, leaves, tables)).collect();
                    tables.push(vec![std::ptr::null_mut(); t.len()].into_boxed_slice());
                    Node::Tuple {
                        table: tables.len() - 1,
                        elements,
                    }
                }
                Shape::Token => Node::Token,
            }
        }
        let mut leaves = Vec::new();
        let mut tables = Vec::new();
        let root = build(shape, &mut leaves, &mut tables);
        let mut buffers = ResultBuffers {
            shape: shape.clone(),
            leaves,
            tables,
            root,
        };
        buffers.fill_tables();
        buffers
    }

    fn pointer(&mut self, node_leaf_or_table: &Node) -> *mut c_void {
        match node_leaf_or_table {
            Node::Leaf(i) => self.leaves[*i].words.as_mut_ptr().cast(),
            Node::Tuple { table, .. } => self.tables[*table].as_mut_ptr().cast(),
            Node::Token => (&TOKEN_PLACEHOLDER as *const u64).cast_mut().cast(),
        }
    }

    fn fill_tables(&mut self) {
        let root = std::mem::replace(&mut self.root, Node::Token);
        fn fill(buffers: &mut ResultBuffers, node: &Node) {
            if let Node::Tuple { table, elements } = node {
                for (i, e) in elements.iter().enumerate() {
                    let p = buffers.pointer(e);
                    buffers.tables[*table][i] = p;
                    fill(buffers, e);
                }
            }
        }
        fill(self, &root);
        self.root = root;
    }

    /// `out` for the CPU ABI: the result's buffer, or its table.
    fn root_pointer(&mut self) -> *mut c_void {
        let root = std::mem::replace(&mut self.root, Node::Token);
        let p = self.pointer(&root);
        self.root = root;
        p
    }

    /// Indices of the leaves under the tuple index `path`, in preorder.
    fn leaves_under(&self, path: &[usize]) -> Vec<usize> {
        fn collect(node: &Node, out: &mut Vec<usize>) {
            match node {
                Node::Leaf(i) => out.push(*i),
                Node::Tuple { elements, .. } => elements.iter().for_each(|e| collect(e, out)),
                Node::Token => {}
            }
        }
        let mut node = &self.root;
        for &i in path {
            match node {
                Node::Tuple { elements, .. } if i < elements.len() => node = &elements[i],
                _ => return Vec::new(),
            }
        }
        let mut out = Vec::new();
        collect(node, &mut out);
        out
    }

    /// For each aliased operand leaf: (operand, index path, result leaf pointer).
    fn alias_map(
        &mut self,
        aliasing: &[OutputOperandAlias],
    ) -> Vec<(usize, Vec<usize>, *mut c_void)> {
        let mut map = Vec::new();
        for alias in aliasing {
            // Leaf paths below the aliased node, relative to it.
            let mut node = &self.root;
            let mut ok = true;
            for &i in &alias.output_index {
                match node {
                    Node::Tuple { elements, .. } if i < elements.len() => node = &elements[i],
                    _ => ok = false,
                }
            }
            if !ok {
                continue;
            }
            let mut rel = Vec::new();
            fn walk(node: &Node, path: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, usize)>) {
                match node {
                    Node::Leaf(i) => out.push((path.clone(), *i)),
                    Node::Tuple { elements, .. } => {
                        for (k, e) in elements.iter().enumerate() {
                            path.push(k);
                            walk(e, path, out);
                            path.pop();
                        }
                    }
                    Node::Token => {}
                }
            }
            walk(node, &mut Vec::new(), &mut rel);
            for (suffix, leaf) in rel {
                let mut path = alias.operand_index.clone();
                path.extend(suffix);
                let ptr: *mut c_void = self.leaves[leaf].words.as_mut_ptr().cast();
                map.push((alias.operand, path, ptr));
            }
        }
        map
    }

    /// Makes every leaf's bytes row-major (typed handlers' convention); only
    /// valid before anything was written.
    fn make_row_major(&mut self) {
        for leaf in &mut self.leaves {
            leaf.shape.layout = None;
        }
    }

    /// Mutable views of every leaf for a typed handler (after `make_row_major`).
    fn typed_views(&mut self) -> Vec<Ret<'_>> {
        self.leaves
            .iter_mut()
            .enumerate()
            .map(|(i, leaf)| {
                let shape = leaf.shape.clone();
                let n = shape.byte_size();
                Ret::new(
                    i,
                    shape,
                    &mut bytemuck::cast_slice_mut::<u64, u8>(&mut leaf.words)[..n],
                )
            })
            .collect()
    }

    /// The result as a literal (row-major), shaped as the instruction says.
    fn into_literal(self) -> Result<Literal> {
        fn build(node: &Node, leaves: &[Leaf], shape: &Shape) -> Result<Literal> {
            match (node, shape) {
                (Node::Leaf(i), Shape::Array(a)) => {
                    let leaf = &leaves[*i];
                    let bytes = layout_to_row_major(leaf.bytes(), &leaf.shape);
                    Literal::from_bytes(Shape::Array(a.clone()), &bytes)
                }
                (Node::Tuple { elements, .. }, Shape::Tuple(shapes)) => Ok(Literal::tuple(
                    elements
                        .iter()
                        .zip(shapes)
                        .map(|(e, s)| build(e, leaves, s))
                        .collect::<Result<Vec<_>>>()?,
                )),
                _ => Ok(Literal::token()),
            }
        }
        build(&self.root, &self.leaves, &self.shape)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prepared_calls_can_be_shared_across_threads() {
        fn send_sync<T: Send + Sync>() {}
        send_sync::<HostCustomCall>();
        send_sync::<Target>();
    }
}
