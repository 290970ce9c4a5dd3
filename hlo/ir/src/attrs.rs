//! Structured attributes of HLO instructions: windows, dimension numbers, enums.
//!
//! Each type here is the typed form of one `name=value` attribute of the HLO text;
//! the parser builds them and the printer writes them back in the same spelling.

use super::opcode::spelled_enum;
use std::fmt;

/// One spatial dimension of a convolution, reduce-window or select-and-scatter window.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct WindowDim {
    pub size: usize,
    pub stride: usize,
    /// Padding before the first element (may be negative: cropping).
    pub padding_low: i64,
    /// Padding after the last element (may be negative).
    pub padding_high: i64,
    /// `rhs_dilate`: holes between window elements.
    pub window_dilation: usize,
    /// `lhs_dilate`: holes between input elements.
    pub base_dilation: usize,
    /// `rhs_reversal`: the window is applied mirrored in this dimension.
    pub window_reversal: bool,
}

impl WindowDim {
    /// A window dimension of the given size with every other field at its default.
    pub fn of_size(size: usize) -> WindowDim {
        WindowDim {
            size,
            stride: 1,
            padding_low: 0,
            padding_high: 0,
            window_dilation: 1,
            base_dilation: 1,
            window_reversal: false,
        }
    }
    /// Size of the window once dilated: `(size - 1) * window_dilation + 1`.
    pub fn dilated_size(&self) -> usize {
        if self.size == 0 {
            0
        } else {
            (self.size - 1) * self.window_dilation + 1
        }
    }
}

/// A window: one [`WindowDim`] per dimension it slides over.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Window {
    pub dims: Vec<WindowDim>,
}

impl fmt::Display for Window {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fn join<T: fmt::Display>(items: impl Iterator<Item = T>) -> String {
            items.map(|x| x.to_string()).collect::<Vec<_>>().join("x")
        }
        let d = &self.dims;
        let mut parts = Vec::new();
        if !d.is_empty() {
            parts.push(format!("size={}", join(d.iter().map(|w| w.size))));
        }
        if d.iter().any(|w| w.stride != 1) {
            parts.push(format!("stride={}", join(d.iter().map(|w| w.stride))));
        }
        if d.iter().any(|w| w.padding_low != 0 || w.padding_high != 0) {
            parts.push(format!(
                "pad={}",
                join(
                    d.iter()
                        .map(|w| format!("{}_{}", w.padding_low, w.padding_high))
                )
            ));
        }
        if d.iter().any(|w| w.base_dilation != 1) {
            parts.push(format!(
                "lhs_dilate={}",
                join(d.iter().map(|w| w.base_dilation))
            ));
        }
        if d.iter().any(|w| w.window_dilation != 1) {
            parts.push(format!(
                "rhs_dilate={}",
                join(d.iter().map(|w| w.window_dilation))
            ));
        }
        if d.iter().any(|w| w.window_reversal) {
            parts.push(format!(
                "rhs_reversal={}",
                join(d.iter().map(|w| w.window_reversal as u8))
            ));
        }
        write!(f, "{{{}}}", parts.join(" "))
    }
}

/// Which dimensions of a convolution's input, kernel and output play which role
/// (`dim_labels=b01f_01io->b01f`).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ConvDimensionNumbers {
    pub input_batch_dimension: usize,
    pub input_feature_dimension: usize,
    pub input_spatial_dimensions: Vec<usize>,
    pub kernel_input_feature_dimension: usize,
    pub kernel_output_feature_dimension: usize,
    pub kernel_spatial_dimensions: Vec<usize>,
    pub output_batch_dimension: usize,
    pub output_feature_dimension: usize,
    pub output_spatial_dimensions: Vec<usize>,
}

impl ConvDimensionNumbers {
    /// The `dim_labels` spelling: for each dimension of the operand in order, `b`/`f`
    /// (or `i`/`o` for the kernel) or the spatial index.
    pub fn to_labels(&self) -> String {
        fn labels(rank: usize, fixed: [(usize, char); 2], spatial: &[usize]) -> String {
            let mut out = vec!['?'; rank];
            for (dim, c) in fixed {
                if dim < rank {
                    out[dim] = c;
                }
            }
            for (i, &dim) in spatial.iter().enumerate() {
                if dim < rank {
                    out[dim] = spatial_label(i);
                }
            }
            out.into_iter().collect()
        }
        let n = self.input_spatial_dimensions.len() + 2;
        format!(
            "{}_{}->{}",
            labels(
                n,
                [
                    (self.input_batch_dimension, 'b'),
                    (self.input_feature_dimension, 'f')
                ],
                &self.input_spatial_dimensions
            ),
            labels(
                n,
                [
                    (self.kernel_input_feature_dimension, 'i'),
                    (self.kernel_output_feature_dimension, 'o')
                ],
                &self.kernel_spatial_dimensions
            ),
            labels(
                n,
                [
                    (self.output_batch_dimension, 'b'),
                    (self.output_feature_dimension, 'f')
                ],
                &self.output_spatial_dimensions
            ),
        )
    }
}

/// The label of the `i`-th spatial dimension: `0`-`9`, then letters as XLA extends them.
pub fn spatial_label(i: usize) -> char {
    if i < 10 {
        (b'0' + i as u8) as char
    } else {
        // XLA continues with letters that are not otherwise used as labels.
        const EXTRA: &[u8] = b"acdeghjklmnpqrstuvwxyz";
        EXTRA.get(i - 10).map(|&b| b as char).unwrap_or('?')
    }
}

/// Which dimensions of a dot are batch and contracting dimensions.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct DotDimensionNumbers {
    pub lhs_batch_dims: Vec<usize>,
    pub rhs_batch_dims: Vec<usize>,
    pub lhs_contracting_dims: Vec<usize>,
    pub rhs_contracting_dims: Vec<usize>,
}

/// `gather`'s dimension numbers (see XLA's operation semantics).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct GatherDimensionNumbers {
    pub offset_dims: Vec<usize>,
    pub collapsed_slice_dims: Vec<usize>,
    pub start_index_map: Vec<usize>,
    pub operand_batching_dims: Vec<usize>,
    pub start_indices_batching_dims: Vec<usize>,
    pub index_vector_dim: usize,
}

/// `scatter`'s dimension numbers.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ScatterDimensionNumbers {
    pub update_window_dims: Vec<usize>,
    pub inserted_window_dims: Vec<usize>,
    pub scatter_dims_to_operand_dims: Vec<usize>,
    pub input_batching_dims: Vec<usize>,
    pub scatter_indices_batching_dims: Vec<usize>,
    pub index_vector_dim: usize,
}

/// One dimension of a `slice`: `[start:limit:stride]`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct SliceDim {
    pub start: usize,
    pub limit: usize,
    pub stride: usize,
}

impl SliceDim {
    /// Elements this dimension keeps.
    pub fn len(&self) -> usize {
        if self.limit <= self.start || self.stride == 0 {
            0
        } else {
            (self.limit - self.start).div_ceil(self.stride)
        }
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// One dimension of a `pad`: `low_high` or `low_high_interior`.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct PadDim {
    pub low: i64,
    pub high: i64,
    pub interior: usize,
}

impl PadDim {
    /// Size of a dimension of `n` elements after padding (may be negative if the
    /// padding crops more than there is; the verifier rejects that).
    pub fn padded_size(&self, n: usize) -> i64 {
        let interior = if n == 0 {
            0
        } else {
            (n as i64 - 1) * self.interior as i64
        };
        self.low + n as i64 + interior + self.high
    }
}

/// Groups of replica (or device) ids that take part together in a collective.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct ReplicaGroups {
    pub groups: Vec<Vec<usize>>,
}

impl fmt::Display for ReplicaGroups {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, g) in self.groups.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            f.write_str("{")?;
            f.write_str(
                &g.iter()
                    .map(|x| x.to_string())
                    .collect::<Vec<_>>()
                    .join(","),
            )?;
            f.write_str("}")?;
        }
        f.write_str("}")
    }
}

/// Attributes every collective carries.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct CollectiveAttrs {
    pub replica_groups: ReplicaGroups,
    pub channel_id: Option<i64>,
    pub use_global_device_ids: bool,
    pub constrain_layout: bool,
}

spelled_enum! {
    /// `compare`'s `direction=`.
    pub enum ComparisonDirection {
        Eq => "EQ",
        Ne => "NE",
        Ge => "GE",
        Gt => "GT",
        Le => "LE",
        Lt => "LT",
    }
}

spelled_enum! {
    /// `compare`'s `type=`: how the operands are ordered.
    pub enum ComparisonType {
        Float => "FLOAT",
        TotalOrder => "TOTALORDER",
        Signed => "SIGNED",
        Unsigned => "UNSIGNED",
    }
}

spelled_enum! {
    /// `fft_type=`.
    pub enum FftType {
        Fft => "FFT",
        Ifft => "IFFT",
        Rfft => "RFFT",
        Irfft => "IRFFT",
    }
}

spelled_enum! {
    /// `fusion`'s `kind=`.
    pub enum FusionKind {
        Loop => "kLoop",
        Input => "kInput",
        Output => "kOutput",
        Custom => "kCustom",
    }
}

spelled_enum! {
    /// `rng`'s `distribution=`.
    pub enum RandomDistribution {
        Uniform => "rng_uniform",
        Normal => "rng_normal",
    }
}

spelled_enum! {
    /// `rng-bit-generator`'s `algorithm=`.
    pub enum RandomAlgorithm {
        Default => "rng_default",
        ThreeFry => "rng_three_fry",
        Philox => "rng_philox",
    }
}

spelled_enum! {
    /// `operand_precision=` entries of dot and convolution.
    pub enum Precision {
        Default => "default",
        High => "high",
        Highest => "highest",
    }
}

spelled_enum! {
    /// `dot`'s `algorithm=`: XLA's `PrecisionConfig::Algorithm`, spelled as XLA
    /// prints it (lower case, without the `ALG_` prefix). It asks a backend for a
    /// particular way of computing the products and sums (input types, number of
    /// passes, accumulator type). It is kept and printed; every platform here
    /// computes the dot it annotates as the plain dot of its operand and result
    /// types (what XLA CPU does for the algorithms it accepts: they describe
    /// accelerator tensor-core modes), so a result may be more accurate than the
    /// algorithm promises, never less.
    pub enum DotAlgorithm {
        AnyF8AnyF8F32 => "dot_any_f8_any_f8_f32",
        AnyF8AnyF8F32FastAccum => "dot_any_f8_any_f8_f32_fast_accum",
        F16F16F16 => "dot_f16_f16_f16",
        F16F16F32 => "dot_f16_f16_f32",
        Bf16Bf16Bf16 => "dot_bf16_bf16_bf16",
        Bf16Bf16F32 => "dot_bf16_bf16_f32",
        Bf16Bf16F32X3 => "dot_bf16_bf16_f32_x3",
        Bf16Bf16F32X6 => "dot_bf16_bf16_f32_x6",
        Bf16Bf16F32X9 => "dot_bf16_bf16_f32_x9",
        Tf32Tf32F32 => "dot_tf32_tf32_f32",
        Tf32Tf32F32X3 => "dot_tf32_tf32_f32_x3",
        F32F32F32 => "dot_f32_f32_f32",
        F64F64F64 => "dot_f64_f64_f64",
    }
}

spelled_enum! {
    /// `triangular-solve`'s `transpose_a=`.
    pub enum TriangularTranspose {
        NoTranspose => "NO_TRANSPOSE",
        Transpose => "TRANSPOSE",
        Adjoint => "ADJOINT",
    }
}

spelled_enum! {
    /// `custom-call`'s `api_version=`: which calling convention the target uses.
    pub enum CustomCallApiVersion {
        Original => "API_VERSION_ORIGINAL",
        StatusReturning => "API_VERSION_STATUS_RETURNING",
        StatusReturningUnified => "API_VERSION_STATUS_RETURNING_UNIFIED",
        TypedFfi => "API_VERSION_TYPED_FFI",
    }
}

spelled_enum! {
    /// `custom-call`'s `custom_call_schedule=`.
    pub enum CustomCallSchedule {
        None => "SCHEDULE_NONE",
        Latest => "SCHEDULE_LATEST",
        Earliest => "SCHEDULE_EARLIEST",
    }
}

/// `triangular-solve`'s options.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct TriangularSolveOptions {
    pub left_side: bool,
    pub lower: bool,
    pub unit_diagonal: bool,
    pub transpose_a: TriangularTranspose,
}

/// One `output_to_operand_aliasing` entry of a custom call: output index path
/// aliases operand `operand`'s index path.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct OutputOperandAlias {
    pub output_index: Vec<usize>,
    pub operand: usize,
    pub operand_index: Vec<usize>,
}
