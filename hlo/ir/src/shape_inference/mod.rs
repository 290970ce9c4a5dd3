//! Shape inference: the result shape of an operation from its operands' shapes.
//!
//! [`infer_shape`] is the one entry point. Given an [`Op`], the shapes of its
//! operands, the shape the instruction declares and a way to look up the program
//! shapes of called computations ([`CalledShapes`]), it checks every rule XLA's
//! `ShapeInference` and `HloVerifier` apply to that operation and returns the
//! result shape, without layouts. A violated rule is an `InvalidArgument` error
//! whose message starts with the opcode and names the shapes involved
//! (`add: operand shapes f32[2,3] and f32[3,2] differ`).
//!
//! # Why a declared shape goes in
//!
//! HLO text carries part of some operations' meaning only in the result shape: the
//! target element type of `convert`, the output dimensions of `broadcast`,
//! `reshape`, `iota` and `rng`, the whole shape of `parameter`, `custom-call` and
//! `infeed`, the result type of a mixed-precision `dot` or `convolution` (XLA's
//! `preferred_element_type`). For those operations the declared shape is read for
//! exactly that information and the rest is still inferred and checked; for every
//! other operation it is ignored. The verifier then compares the inferred shape
//! with the declared one (layouts and dynamic-dimension markers ignored), so a
//! `reshape` that changes the element type, or a `broadcast` whose dimensions do
//! not fit, is still caught. The builder passes the shape it means to create.
//!
//! # Strictness
//!
//! The rules are those of XLA's verifier with mixed precision disallowed (how XLA
//! CPU runs it): elementwise operands must have the same element type, reducers
//! must take and return exactly the types of the values they combine. `dot` and
//! `convolution` accept any result type XLA's `preferred_element_type` accepts,
//! and operands of different floating-point types or of different integer types
//! (`s8 x s16 -> s32`: each operand is converted to the result type first);
//! without a declared result type the more precise operand type is the result.
//! Arithmetic on dimension sizes is checked, so hostile input gives an error,
//! never an overflow.
//!
//! The rules live in submodules grouped by kind of operation; this module holds the
//! dispatch and the helpers they share.

mod collective;
mod control;
mod elementwise;
mod io;
mod linalg;
mod movement;
mod reduction;

use super::op::Op;
use super::CompId;
use crate::error::{Error, Result};
use crate::shape::{ArrayShape, ElementType, ProgramShape, Shape};
use std::fmt;

/// Access to the signatures of the computations an operation calls.
///
/// The verifier implements it over a module; the builder over the computations it
/// has attached. A closure `Fn(CompId) -> Result<ProgramShape>` works too.
pub trait CalledShapes {
    /// The parameter and result shapes of computation `id`, or an error if there is
    /// no such computation.
    fn program_shape(&self, id: CompId) -> Result<ProgramShape>;

    /// How error messages refer to computation `id` (`%add_f32`).
    fn computation_name(&self, id: CompId) -> String {
        format!("computation #{}", id.0)
    }
}

impl<F: Fn(CompId) -> Result<ProgramShape>> CalledShapes for F {
    fn program_shape(&self, id: CompId) -> Result<ProgramShape> {
        self(id)
    }
}

/// A [`CalledShapes`] for operations that call nothing: every lookup fails.
pub struct NoComputations;

impl CalledShapes for NoComputations {
    fn program_shape(&self, id: CompId) -> Result<ProgramShape> {
        Err(Error::invalid_argument(format!(
            "computation #{} is not available here",
            id.0
        )))
    }
}

/// The result shape (without layout) of `op` applied to operands of the given
/// shapes, or an `InvalidArgument` error naming the rule that fails and the shapes
/// involved.
///
/// `declared` is the shape the instruction states; it is read only by operations
/// whose result is not determined by their operands (see the module docs) and is
/// otherwise ignored. `called` gives the signatures of called computations.
pub fn infer_shape(
    op: &Op,
    operands: &[&Shape],
    declared: &Shape,
    called: &dyn CalledShapes,
) -> Result<Shape> {
    let cx = Cx {
        op,
        name: op.opcode().name(),
        operands,
        declared,
        called,
    };
    let shape = dispatch(&cx)?;
    Ok(normalize(shape))
}

fn dispatch(cx: &Cx) -> Result<Shape> {
    use Op::*;
    match cx.op {
        Parameter { .. } => {
            cx.count(0)?;
            Ok(cx.declared.without_layout())
        }
        Constant { literal } => {
            cx.count(0)?;
            Ok(literal.shape().without_layout())
        }
        Iota { dimension } => movement::iota(cx, *dimension),
        ReplicaId | PartitionId => {
            cx.count(0)?;
            Ok(Shape::scalar(ElementType::U32))
        }
        AfterAll => io::after_all(cx),
        Unary(u) => elementwise::unary(cx, *u),
        Binary(b) => elementwise::binary(cx, *b),
        Compare { compare_type, .. } => elementwise::compare(cx, *compare_type),
        Select => elementwise::select(cx),
        Clamp => elementwise::clamp(cx),
        Convert => elementwise::convert(cx),
        BitcastConvert => elementwise::bitcast_convert(cx),
        StochasticConvert => elementwise::stochastic_convert(cx),
        ReducePrecision {
            exponent_bits,
            mantissa_bits,
        } => elementwise::reduce_precision(cx, *exponent_bits, *mantissa_bits),
        Map {
            dimensions,
            to_apply,
        } => control::map(cx, dimensions, *to_apply),
        Broadcast { dimensions } => movement::broadcast(cx, dimensions),
        Reshape => movement::reshape(cx),
        DynamicReshape => movement::dynamic_reshape(cx),
        Transpose { dimensions } => movement::transpose(cx, dimensions),
        Slice { slice } => movement::slice(cx, slice),
        DynamicSlice { sizes } => movement::dynamic_slice(cx, sizes),
        DynamicUpdateSlice => movement::dynamic_update_slice(cx),
        Concatenate { dimension } => movement::concatenate(cx, *dimension),
        Pad { config } => movement::pad(cx, config),
        Reverse { dimensions } => movement::reverse(cx, dimensions),
        Copy => {
            cx.count(1)?;
            Ok(cx.operand(0)?.without_layout())
        }
        Bitcast => movement::bitcast(cx),
        GetDimensionSize { dimension } => movement::get_dimension_size(cx, *dimension),
        SetDimensionSize { dimension } => movement::set_dimension_size(cx, *dimension),
        Gather {
            dnums, slice_sizes, ..
        } => movement::gather(cx, dnums, slice_sizes),
        Scatter {
            dnums, to_apply, ..
        } => reduction::scatter(cx, dnums, *to_apply),
        Dot {
            dnums, precision, ..
        } => linalg::dot(cx, dnums, precision),
        Convolution {
            window,
            dnums,
            feature_group_count,
            batch_group_count,
            precision,
        } => linalg::convolution(
            cx,
            window,
            dnums,
            *feature_group_count,
            *batch_group_count,
            precision,
        ),
        Fft {
            fft_type,
            fft_length,
        } => linalg::fft(cx, *fft_type, fft_length),
        Cholesky { .. } => linalg::cholesky(cx),
        TriangularSolve { options } => linalg::triangular_solve(cx, options),
        Reduce {
            dimensions,
            to_apply,
        } => reduction::reduce(cx, dimensions, *to_apply),
        ReduceWindow { window, to_apply } => reduction::reduce_window(cx, window, *to_apply),
        SelectAndScatter {
            window,
            select,
            scatter,
        } => reduction::select_and_scatter(cx, window, *select, *scatter),
        Sort {
            dimension,
            comparator,
            ..
        } => reduction::sort(cx, *dimension, *comparator),
        TopK { k, .. } => reduction::top_k(cx, *k),
        Scan {
            dimension,
            num_carries,
            to_apply,
            ..
        } => reduction::scan(cx, *dimension, *num_carries, *to_apply),
        BatchNormTraining { feature_index, .. } => {
            linalg::batch_norm(cx, linalg::BatchNormKind::Training, *feature_index)
        }
        BatchNormInference { feature_index, .. } => {
            linalg::batch_norm(cx, linalg::BatchNormKind::Inference, *feature_index)
        }
        BatchNormGrad { feature_index, .. } => {
            linalg::batch_norm(cx, linalg::BatchNormKind::Grad, *feature_index)
        }
        Tuple => Ok(Shape::Tuple(
            cx.operands.iter().map(|s| s.without_layout()).collect(),
        )),
        GetTupleElement { index } => control::get_tuple_element(cx, *index),
        While { condition, body } => control::while_loop(cx, *condition, *body),
        Conditional { branches } => control::conditional(cx, branches),
        Call { to_apply, .. } => control::call(cx, *to_apply),
        Fusion { calls, .. } => control::fusion(cx, *calls),
        CustomCall(attrs) => control::custom_call(cx, attrs),
        OptimizationBarrier => {
            cx.count(1)?;
            Ok(cx.operand(0)?.without_layout())
        }
        AddDependency => io::add_dependency(cx),
        Rng { distribution } => io::rng(cx, *distribution),
        RngBitGenerator { .. } => io::rng_bit_generator(cx),
        RngGetAndUpdateState { .. } => {
            cx.count(0)?;
            Ok(Shape::array(ElementType::U64, vec![2]))
        }
        AllReduce { attrs, to_apply } | AllReduceStart { attrs, to_apply } => {
            collective::all_reduce(cx, attrs, *to_apply)
        }
        AllReduceDone => {
            cx.count(1)?;
            Ok(cx.operand(0)?.without_layout())
        }
        AllGather { attrs, dimension } => collective::all_gather(cx, attrs, *dimension, false),
        AllGatherStart { attrs, dimension } => collective::all_gather(cx, attrs, *dimension, true),
        AllGatherDone | CollectivePermuteDone => io::tuple_element_of_operand(cx, 1),
        ReduceScatter {
            attrs,
            dimension,
            to_apply,
        } => collective::reduce_scatter(cx, attrs, *dimension, *to_apply),
        AllToAll {
            attrs,
            split_dimension,
        } => collective::all_to_all(cx, attrs, *split_dimension),
        CollectivePermute {
            source_target_pairs,
            slice_sizes,
            ..
        } => collective::collective_permute(cx, source_target_pairs, slice_sizes.is_some(), false),
        CollectivePermuteStart {
            source_target_pairs,
            slice_sizes,
            ..
        } => collective::collective_permute(cx, source_target_pairs, slice_sizes.is_some(), true),
        CollectiveBroadcast { attrs } => collective::collective_broadcast(cx, attrs),
        Infeed { .. } => io::infeed(cx),
        Outfeed { outfeed_shape, .. } => io::outfeed(cx, outfeed_shape.as_ref()),
        Send { .. } => io::send(cx),
        SendDone { .. } => io::send_done(cx),
        Recv { .. } => io::recv(cx),
        RecvDone { .. } => io::recv_done(cx),
        AsyncStart { calls, .. } => io::async_start(cx, *calls),
        AsyncUpdate => io::async_update(cx),
        AsyncDone => io::tuple_element_of_operand(cx, 1),
        CopyStart { .. } => io::copy_start(cx),
        CopyDone => io::copy_done(cx),
    }
}

/// What every rule needs: the operation, its operands and the declared shape.
pub(super) struct Cx<'a> {
    pub op: &'a Op,
    /// The opcode's spelling; every error message starts with it.
    pub name: &'static str,
    pub operands: &'a [&'a Shape],
    pub declared: &'a Shape,
    pub called: &'a dyn CalledShapes,
}

impl Cx<'_> {
    /// An `InvalidArgument` error prefixed with the opcode.
    pub fn err(&self, message: impl fmt::Display) -> Error {
        Error::invalid_argument(format!("{}: {message}", self.name))
    }

    /// Requires exactly `n` operands.
    pub fn count(&self, n: usize) -> Result<()> {
        if self.operands.len() != n {
            return Err(self.err(format!(
                "expects {n} operand{}, got {}",
                if n == 1 { "" } else { "s" },
                self.operands.len()
            )));
        }
        Ok(())
    }

    /// Requires at least `n` operands.
    pub fn at_least(&self, n: usize) -> Result<()> {
        if self.operands.len() < n {
            return Err(self.err(format!(
                "expects at least {n} operand{}, got {}",
                if n == 1 { "" } else { "s" },
                self.operands.len()
            )));
        }
        Ok(())
    }

    pub fn operand(&self, i: usize) -> Result<&Shape> {
        self.operands.get(i).copied().ok_or_else(|| {
            self.err(format!(
                "operand {i} is missing ({} given)",
                self.operands.len()
            ))
        })
    }

    /// Operand `i` as an array; `role` names it in the error (`lhs`, `operand 2`).
    pub fn array(&self, i: usize, role: &str) -> Result<&ArrayShape> {
        let shape = self.operand(i)?;
        shape
            .as_array()
            .ok_or_else(|| self.err(format!("{role} must be an array, got {shape}")))
    }

    /// The declared shape as an array (for ops whose result is an array the
    /// declared shape describes).
    pub fn declared_array(&self) -> Result<&ArrayShape> {
        self.declared.as_array().ok_or_else(|| {
            self.err(format!(
                "the result must be an array, but the declared shape is {}",
                self.declared
            ))
        })
    }

    /// The program shape of a called computation.
    pub fn program(&self, id: CompId) -> Result<ProgramShape> {
        self.called
            .program_shape(id)
            .map_err(|e| self.err(e.message()))
    }

    pub fn comp_name(&self, id: CompId) -> String {
        self.called.computation_name(id)
    }
}

// ------------------------------------------------------------------ helpers

/// `{1,2,3}`, the way HLO text writes a dimension list.
pub(super) fn dims_text(dims: &[usize]) -> String {
    let parts: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("{{{}}}", parts.join(","))
}

/// `a` with another element type and no layout (dynamic markers kept).
pub(super) fn retype(a: &ArrayShape, element_type: ElementType) -> Shape {
    Shape::Array(ArrayShape {
        element_type,
        dims: a.dims.clone(),
        dynamic: a.dynamic.clone(),
        layout: None,
    })
}

/// `a` without its layout.
pub(super) fn plain(a: &ArrayShape) -> Shape {
    retype(a, a.element_type)
}

/// Elements of an array with these dimensions, or `None` on overflow.
pub(super) fn element_count(dims: &[usize]) -> Option<usize> {
    dims.iter().try_fold(1usize, |acc, &d| acc.checked_mul(d))
}

/// Checks that every entry of `dims` is below `rank` and appears once; `what` names
/// the attribute in the error.
pub(super) fn check_dims(cx: &Cx, what: &str, dims: &[usize], rank: usize) -> Result<()> {
    let mut seen = vec![false; rank];
    for &d in dims {
        if d >= rank {
            return Err(cx.err(format!(
                "{what} {} names dimension {d}, out of range for rank {rank}",
                dims_text(dims)
            )));
        }
        if seen[d] {
            return Err(cx.err(format!(
                "{what} {} names dimension {d} twice",
                dims_text(dims)
            )));
        }
        seen[d] = true;
    }
    Ok(())
}

/// Checks that `dims` is strictly increasing (sorted, no repeats).
pub(super) fn check_sorted(cx: &Cx, what: &str, dims: &[usize]) -> Result<()> {
    if dims.windows(2).any(|w| w[0] >= w[1]) {
        return Err(cx.err(format!(
            "{what} {} must be sorted and without repeats",
            dims_text(dims)
        )));
    }
    Ok(())
}

/// Whether a program-shape entry is a scalar of type `ty`.
pub(super) fn is_scalar_of(shape: &Shape, ty: ElementType) -> bool {
    matches!(shape, Shape::Array(a) if a.dims.is_empty() && a.element_type == ty)
}

/// The shape a `%name` computation signature prints as, for messages.
pub(super) fn signature(p: &ProgramShape) -> String {
    let params: Vec<String> = p.parameters.iter().map(|s| s.to_string()).collect();
    format!("({}) -> {}", params.join(", "), p.result)
}

/// A tuple of the given shapes, or the single shape itself when there is one
/// (the convention of variadic reduce, sort, all-reduce, ...).
pub(super) fn one_or_tuple(mut shapes: Vec<Shape>) -> Shape {
    if shapes.len() == 1 {
        shapes.remove(0)
    } else {
        Shape::Tuple(shapes)
    }
}

/// The more precise of two element types that may meet in a `dot` or
/// `convolution`, by XLA's rule: for floating point, more exponent range, then
/// more significand bits (so `bf16` over `f16`); for integers, more bits, then
/// signed over unsigned.
pub(super) fn higher_precision(a: ElementType, b: ElementType) -> ElementType {
    use ElementType::*;
    let key = |t: ElementType| -> (u32, u32, usize, bool) {
        match t {
            F16 => (16, 11, 16, true),
            BF16 => (128, 8, 16, true),
            F32 => (128, 24, 32, true),
            F64 => (1024, 53, 64, true),
            t => (0, 0, t.bit_width(), t.is_signed_int()),
        }
    };
    if key(b) > key(a) {
        b
    } else {
        a
    }
}

/// Whether two element types may meet in one `dot` or `convolution`: equal,
/// both floating point (precision may differ), or both integers (width and
/// signedness may differ). XLA converts each operand to the result type first.
pub(super) fn same_type_ignoring_fp_precision(a: ElementType, b: ElementType) -> bool {
    a == b || (a.is_float() && b.is_float()) || (a.is_integer() && b.is_integer())
}

/// Clears the dynamic-dimension markers of arrays that have none set, so shapes
/// compare equal however they were built (the parser's convention).
fn normalize(shape: Shape) -> Shape {
    match shape {
        Shape::Array(mut a) => {
            if !a.dynamic.iter().any(|&d| d) || a.dynamic.len() != a.dims.len() {
                a.dynamic.clear();
            }
            a.layout = None;
            Shape::Array(a)
        }
        Shape::Tuple(t) => Shape::Tuple(t.into_iter().map(normalize).collect()),
        Shape::Token => Shape::Token,
    }
}

/// The output dimensions of sliding `window` over an array of `base` dimensions
/// (convolution, reduce-window, select-and-scatter): per dimension, the base is
/// dilated and padded, the window dilated, and the number of strided positions
/// where the window fits is the output size.
pub(super) fn window_output_dims(
    cx: &Cx,
    base: &[usize],
    window: &crate::attrs::Window,
) -> Result<Vec<usize>> {
    if window.dims.len() != base.len() {
        return Err(cx.err(format!(
            "the window {window} has {} dimensions, the input {} has {}",
            window.dims.len(),
            dims_text(base),
            base.len()
        )));
    }
    let mut out = Vec::with_capacity(base.len());
    for (d, (w, &n)) in window.dims.iter().zip(base).enumerate() {
        if w.size == 0 || w.stride == 0 || w.base_dilation == 0 || w.window_dilation == 0 {
            return Err(cx.err(format!(
                "window {window} dimension {d} needs a positive size, stride and dilations"
            )));
        }
        let size = crate::analysis::window::output_size(n, w);
        out.push(size.ok_or_else(|| cx.err(format!("window {window} gives an invalid size")))?);
    }
    Ok(out)
}
