//! Linear algebra: dot, convolution, FFT, Cholesky, triangular solve, batch norm.

use super::{
    check_dims, dims_text, higher_precision, plain, same_type_ignoring_fp_precision,
    window_output_dims, Cx,
};
use crate::attrs::{
    ConvDimensionNumbers, DotDimensionNumbers, FftType, Precision, TriangularSolveOptions, Window,
};
use crate::error::Result;
use crate::shape::{ArrayShape, ElementType, Shape};

/// The result element type of a dot or convolution: the declared type when XLA's
/// `preferred_element_type` rule allows it (anything for floating-point inputs; no
/// narrowing for integer or complex inputs), else an error.
fn result_type(cx: &Cx, lhs: &ArrayShape, rhs: &ArrayShape) -> Result<ElementType> {
    if !same_type_ignoring_fp_precision(lhs.element_type, rhs.element_type) {
        return Err(cx.err(format!(
            "operand element types differ: {} and {}",
            plain(lhs),
            plain(rhs)
        )));
    }
    let from = higher_precision(lhs.element_type, rhs.element_type);
    let Some(declared) = cx.declared.element_type() else {
        return Ok(from);
    };
    if declared != from && !from.is_float() && declared.bit_width() < from.bit_width() {
        return Err(cx.err(format!(
            "the result type {declared} is narrower than the operands' type {from}"
        )));
    }
    Ok(declared)
}

fn check_precision(cx: &Cx, precision: &[Precision]) -> Result<()> {
    if !precision.is_empty() && precision.len() != 2 {
        return Err(cx.err(format!(
            "operand_precision needs 2 entries, got {}",
            precision.len()
        )));
    }
    Ok(())
}

/// `dot`: result dimensions are the batch dimensions (in lhs order), then lhs's
/// free dimensions, then rhs's free dimensions.
pub(super) fn dot(cx: &Cx, dn: &DotDimensionNumbers, precision: &[Precision]) -> Result<Shape> {
    cx.count(2)?;
    let lhs = cx.array(0, "lhs")?;
    let rhs = cx.array(1, "rhs")?;
    check_precision(cx, precision)?;
    let shapes = || format!("{} and {}", plain(lhs), plain(rhs));
    for (side, a, batch, contracting) in [
        ("lhs", lhs, &dn.lhs_batch_dims, &dn.lhs_contracting_dims),
        ("rhs", rhs, &dn.rhs_batch_dims, &dn.rhs_contracting_dims),
    ] {
        let all: Vec<usize> = batch.iter().chain(contracting.iter()).copied().collect();
        check_dims(
            cx,
            &format!("{side} batch and contracting dimensions"),
            &all,
            a.rank(),
        )
        .map_err(|e| cx.err(format!("{} (operands {})", inner(&e, cx), shapes())))?;
    }
    if dn.lhs_contracting_dims.len() != dn.rhs_contracting_dims.len() {
        return Err(cx.err(format!(
            "lhs_contracting_dims {} and rhs_contracting_dims {} differ in length (operands {})",
            dims_text(&dn.lhs_contracting_dims),
            dims_text(&dn.rhs_contracting_dims),
            shapes()
        )));
    }
    if dn.lhs_batch_dims.len() != dn.rhs_batch_dims.len() {
        return Err(cx.err(format!(
            "lhs_batch_dims {} and rhs_batch_dims {} differ in length (operands {})",
            dims_text(&dn.lhs_batch_dims),
            dims_text(&dn.rhs_batch_dims),
            shapes()
        )));
    }
    for (kind, l, r) in [
        (
            "contracting",
            &dn.lhs_contracting_dims,
            &dn.rhs_contracting_dims,
        ),
        ("batch", &dn.lhs_batch_dims, &dn.rhs_batch_dims),
    ] {
        for (&ld, &rd) in l.iter().zip(r) {
            if lhs.dims[ld] != rhs.dims[rd] {
                return Err(cx.err(format!(
                    "{kind} dimension {ld} of lhs (size {}) and {rd} of rhs (size {}) differ: {}",
                    lhs.dims[ld],
                    rhs.dims[rd],
                    shapes()
                )));
            }
        }
    }
    let ty = result_type(cx, lhs, rhs)?;
    let mut dims: Vec<usize> = dn.lhs_batch_dims.iter().map(|&d| lhs.dims[d]).collect();
    let free = |a: &ArrayShape, batch: &[usize], contracting: &[usize]| -> Vec<usize> {
        (0..a.rank())
            .filter(|d| !batch.contains(d) && !contracting.contains(d))
            .map(|d| a.dims[d])
            .collect()
    };
    dims.extend(free(lhs, &dn.lhs_batch_dims, &dn.lhs_contracting_dims));
    dims.extend(free(rhs, &dn.rhs_batch_dims, &dn.rhs_contracting_dims));
    Ok(Shape::array(ty, dims))
}

/// The message of an error made by `cx.err`, without the opcode prefix.
fn inner(e: &crate::Error, cx: &Cx) -> String {
    let m = e.message();
    m.strip_prefix(cx.name)
        .and_then(|r| r.strip_prefix(": "))
        .unwrap_or(m)
        .to_string()
}

/// Checks that the batch/feature/spatial numbers of one side of a convolution are
/// a permutation of `0..rank`.
fn check_conv_side(
    cx: &Cx,
    side: &str,
    fixed: [usize; 2],
    spatial: &[usize],
    rank: usize,
) -> Result<()> {
    let all: Vec<usize> = fixed.iter().chain(spatial).copied().collect();
    if all.len() != rank {
        return Err(cx.err(format!(
            "{side} dimension numbers name {} dimensions, the rank is {rank}",
            all.len()
        )));
    }
    check_dims(cx, &format!("{side} dimension numbers"), &all, rank)
}

/// `convolution` with every dimension-number, window, grouping and dilation rule
/// of XLA's `InferConvolveShape`.
pub(super) fn convolution(
    cx: &Cx,
    window: &Window,
    dn: &ConvDimensionNumbers,
    feature_group_count: usize,
    batch_group_count: usize,
    precision: &[Precision],
) -> Result<Shape> {
    cx.count(2)?;
    let lhs = cx.array(0, "the input")?;
    let rhs = cx.array(1, "the kernel")?;
    check_precision(cx, precision)?;
    let shapes = || format!("input {}, kernel {}", plain(lhs), plain(rhs));
    if feature_group_count == 0 || batch_group_count == 0 {
        return Err(cx.err("feature_group_count and batch_group_count must be positive"));
    }
    if feature_group_count > 1 && batch_group_count > 1 {
        return Err(cx.err(format!(
            "feature_group_count {feature_group_count} and batch_group_count {batch_group_count} cannot both exceed 1"
        )));
    }
    let spatial = dn.input_spatial_dimensions.len();
    if dn.kernel_spatial_dimensions.len() != spatial
        || dn.output_spatial_dimensions.len() != spatial
    {
        return Err(cx.err(format!(
            "input, kernel and output have different numbers of spatial dimensions in dim_labels {}",
            dn.to_labels()
        )));
    }
    if window.dims.len() != spatial {
        return Err(cx.err(format!(
            "the window {window} has {} dimensions, dim_labels {} has {spatial} spatial dimensions",
            window.dims.len(),
            dn.to_labels()
        )));
    }
    let rank = spatial + 2;
    if lhs.rank() != rank || rhs.rank() != rank {
        return Err(cx.err(format!(
            "dim_labels {} need operands of rank {rank}, got {}",
            dn.to_labels(),
            shapes()
        )));
    }
    check_conv_side(
        cx,
        "input",
        [dn.input_batch_dimension, dn.input_feature_dimension],
        &dn.input_spatial_dimensions,
        rank,
    )?;
    check_conv_side(
        cx,
        "kernel",
        [
            dn.kernel_input_feature_dimension,
            dn.kernel_output_feature_dimension,
        ],
        &dn.kernel_spatial_dimensions,
        rank,
    )?;
    check_conv_side(
        cx,
        "output",
        [dn.output_batch_dimension, dn.output_feature_dimension],
        &dn.output_spatial_dimensions,
        rank,
    )?;
    let input_batch = lhs.dims[dn.input_batch_dimension];
    let input_features = lhs.dims[dn.input_feature_dimension];
    let kernel_input_features = rhs.dims[dn.kernel_input_feature_dimension];
    let kernel_output_features = rhs.dims[dn.kernel_output_feature_dimension];
    if input_features % feature_group_count != 0
        || input_features / feature_group_count != kernel_input_features
    {
        return Err(cx.err(format!(
            "input features ({input_features}) / feature_group_count ({feature_group_count}) must equal the kernel's input features ({kernel_input_features}): {}",
            shapes()
        )));
    }
    if kernel_output_features % feature_group_count != 0 {
        return Err(cx.err(format!(
            "kernel output features ({kernel_output_features}) must be a multiple of feature_group_count ({feature_group_count}): {}",
            shapes()
        )));
    }
    if kernel_output_features % batch_group_count != 0 || input_batch % batch_group_count != 0 {
        return Err(cx.err(format!(
            "kernel output features ({kernel_output_features}) and input batch ({input_batch}) must be multiples of batch_group_count ({batch_group_count}): {}",
            shapes()
        )));
    }
    for (i, (&kd, w)) in dn
        .kernel_spatial_dimensions
        .iter()
        .zip(&window.dims)
        .enumerate()
    {
        if rhs.dims[kd] != w.size {
            return Err(cx.err(format!(
                "window {window} spatial dimension {i} has size {} but the kernel's is {}: {}",
                w.size,
                rhs.dims[kd],
                shapes()
            )));
        }
    }
    let base: Vec<usize> = dn
        .input_spatial_dimensions
        .iter()
        .map(|&d| lhs.dims[d])
        .collect();
    let spatial_out = window_output_dims(cx, &base, window)?;
    let ty = result_type(cx, lhs, rhs)?;
    let mut dims = vec![0; rank];
    dims[dn.output_batch_dimension] = input_batch / batch_group_count;
    dims[dn.output_feature_dimension] = kernel_output_features;
    for (&d, &size) in dn.output_spatial_dimensions.iter().zip(&spatial_out) {
        dims[d] = size;
    }
    Ok(Shape::array(ty, dims))
}

pub(super) fn fft(cx: &Cx, fft_type: FftType, fft_length: &[usize]) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    let n = fft_length.len();
    if !(1..=3).contains(&n) {
        return Err(cx.err(format!(
            "fft_length {} must have 1 to 3 entries",
            dims_text(fft_length)
        )));
    }
    if a.rank() < n {
        return Err(cx.err(format!(
            "an FFT over {n} dimensions needs an operand of rank at least {n}, got {}",
            plain(a)
        )));
    }
    let inner = &a.dims[a.rank() - n..];
    let last = fft_length[n - 1];
    let t = a.element_type;
    match fft_type {
        FftType::Fft | FftType::Ifft => {
            if !t.is_complex() {
                return Err(cx.err(format!(
                    "{fft_type} needs a complex operand, got {}",
                    plain(a)
                )));
            }
            Ok(plain(a))
        }
        FftType::Rfft => {
            let out = match t {
                ElementType::F32 => ElementType::C64,
                ElementType::F64 => ElementType::C128,
                _ => {
                    return Err(cx.err(format!(
                        "RFFT needs an f32 or f64 operand, got {}",
                        plain(a)
                    )))
                }
            };
            if inner != fft_length {
                return Err(cx.err(format!(
                    "RFFT needs the innermost dimensions of {} to equal fft_length {}",
                    plain(a),
                    dims_text(fft_length)
                )));
            }
            let mut dims = a.dims.clone();
            if last != 0 {
                let r = dims.len() - 1;
                dims[r] = last / 2 + 1;
            }
            Ok(Shape::array(out, dims))
        }
        FftType::Irfft => {
            if !t.is_complex() {
                return Err(cx.err(format!("IRFFT needs a complex operand, got {}", plain(a))));
            }
            let expected_last = if last == 0 { 0 } else { last / 2 + 1 };
            if inner[..n - 1] != fft_length[..n - 1] || inner[n - 1] != expected_last {
                return Err(cx.err(format!(
                    "IRFFT with fft_length {} needs innermost dimensions of {} to be {}{}",
                    dims_text(fft_length),
                    plain(a),
                    fft_length[..n - 1]
                        .iter()
                        .map(|d| format!("{d},"))
                        .collect::<String>(),
                    expected_last
                )));
            }
            let mut dims = a.dims.clone();
            let r = dims.len() - 1;
            dims[r] = last;
            Ok(Shape::array(t.complex_component(), dims))
        }
    }
}

/// Checks `a` is a (batch of) square floating-point or complex matrices.
fn square_matrices(cx: &Cx, a: &ArrayShape, role: &str) -> Result<()> {
    if !a.element_type.is_floating_or_complex() {
        return Err(cx.err(format!(
            "{role} must be floating point or complex, got {}",
            plain(a)
        )));
    }
    if a.rank() < 2 || a.dims[a.rank() - 1] != a.dims[a.rank() - 2] {
        return Err(cx.err(format!(
            "{role} must be square matrices (rank >= 2, two minor dimensions equal), got {}",
            plain(a)
        )));
    }
    Ok(())
}

pub(super) fn cholesky(cx: &Cx) -> Result<Shape> {
    cx.count(1)?;
    let a = cx.array(0, "the operand")?;
    square_matrices(cx, a, "the operand")?;
    Ok(plain(a))
}

/// `triangular-solve(a, b)`: solves `op(a) x = b` (left side) or `x op(a) = b`.
pub(super) fn triangular_solve(cx: &Cx, options: &TriangularSolveOptions) -> Result<Shape> {
    cx.count(2)?;
    let a = cx.array(0, "a")?;
    let b = cx.array(1, "b")?;
    square_matrices(cx, a, "a")?;
    let shapes = format!("a {} and b {}", plain(a), plain(b));
    if a.element_type != b.element_type || b.rank() != a.rank() {
        return Err(cx.err(format!(
            "a and b must have the same element type and rank: {shapes}"
        )));
    }
    let r = a.rank();
    let shared = if options.left_side {
        b.dims[r - 2]
    } else {
        b.dims[r - 1]
    };
    if a.dims[r - 1] != shared {
        return Err(cx.err(format!(
            "the shared dimension of a and b differs (left_side={}): {shapes}",
            options.left_side
        )));
    }
    if a.dims[..r - 2] != b.dims[..r - 2] {
        return Err(cx.err(format!("batch dimensions differ: {shapes}")));
    }
    Ok(plain(b))
}

#[derive(Clone, Copy)]
pub(super) enum BatchNormKind {
    /// `(operand, scale, offset)` → `(output, mean, variance)`.
    Training,
    /// `(operand, scale, offset, mean, variance)` → output.
    Inference,
    /// `(operand, scale, mean, variance, grad_output)` → `(grad_operand,
    /// grad_scale, grad_offset)`.
    Grad,
}

pub(super) fn batch_norm(cx: &Cx, kind: BatchNormKind, feature_index: usize) -> Result<Shape> {
    let (count, roles): (usize, &[&str]) = match kind {
        BatchNormKind::Training => (3, &["scale", "offset"]),
        BatchNormKind::Inference => (5, &["scale", "offset", "mean", "variance"]),
        BatchNormKind::Grad => (5, &["scale", "mean", "variance"]),
    };
    cx.count(count)?;
    let a = cx.array(0, "the operand")?;
    if !a.element_type.is_float() || a.rank() < 1 {
        return Err(cx.err(format!(
            "the operand must be a floating-point array of rank >= 1, got {}",
            plain(a)
        )));
    }
    if feature_index >= a.rank() {
        return Err(cx.err(format!(
            "feature_index {feature_index} is out of range for {}",
            plain(a)
        )));
    }
    let features = a.dims[feature_index];
    let feature_shape = Shape::array(a.element_type, vec![features]);
    for (i, role) in roles.iter().enumerate() {
        let s = cx.array(i + 1, role)?;
        if s.element_type != a.element_type || s.dims != [features] {
            return Err(cx.err(format!(
                "{role} must be {feature_shape} (one value per feature of {}), got {}",
                plain(a),
                plain(s)
            )));
        }
    }
    match kind {
        BatchNormKind::Training => Ok(Shape::Tuple(vec![
            plain(a),
            feature_shape.clone(),
            feature_shape,
        ])),
        BatchNormKind::Inference => Ok(plain(a)),
        BatchNormKind::Grad => {
            let g = cx.array(4, "grad_output")?;
            if g.element_type != a.element_type || g.dims != a.dims {
                return Err(cx.err(format!(
                    "grad_output {} must have the operand's shape {}",
                    plain(g),
                    plain(a)
                )));
            }
            Ok(Shape::Tuple(vec![
                plain(a),
                feature_shape.clone(),
                feature_shape,
            ]))
        }
    }
}
