//! A convolution's geometry in one canonical dimension order.
//!
//! HLO lets a convolution name its dimensions in any order (`dim_labels`);
//! every implementation wants them as input `[batch, spatial..., feature]`,
//! kernel `[spatial..., input feature, output feature]` and output `[batch,
//! spatial..., feature]`. [`ConvolutionGeometry::new`] does that mapping and
//! every consistency check an implementation needs before indexing with it
//! (ranks, distinct dimension numbers, group counts, the window against the
//! kernel and the output), so no backend indexes out of bounds on a malformed
//! instruction.

use crate::analysis::window::output_size;
use crate::attrs::{ConvDimensionNumbers, Window};
use crate::error::{Error, Result};

/// The sizes of a convolution, in canonical order (see the module docs).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvolutionGeometry {
    /// The input's dimension numbers in canonical order: batch, spatial...,
    /// feature.
    pub input_order: Vec<usize>,
    /// The kernel's: spatial..., input feature, output feature.
    pub kernel_order: Vec<usize>,
    /// The output's: batch, spatial..., feature.
    pub output_order: Vec<usize>,
    /// Input batch size (all batch groups together).
    pub batch: usize,
    /// Input features (all feature groups together).
    pub input_features: usize,
    /// The kernel's input features: those of one feature group.
    pub kernel_input_features: usize,
    /// Output features (the kernel's output features).
    pub output_features: usize,
    /// Output batch size: `batch / batch_groups`.
    pub output_batch: usize,
    pub input_spatial: Vec<usize>,
    pub kernel_spatial: Vec<usize>,
    pub output_spatial: Vec<usize>,
    pub feature_groups: usize,
    pub batch_groups: usize,
}

/// Whether `dims` names each of `0..rank` exactly once.
fn is_permutation(dims: &[usize], rank: usize) -> bool {
    let mut seen = vec![false; rank];
    dims.len() == rank
        && dims
            .iter()
            .all(|&d| d < rank && !std::mem::replace(&mut seen[d], true))
}

impl ConvolutionGeometry {
    /// Checks a convolution of an `input` by a `kernel` into an `output` (their
    /// dimensions) and returns its geometry. The error says what does not fit,
    /// naming the dimension labels and the window.
    pub fn new(
        dnums: &ConvDimensionNumbers,
        window: &Window,
        feature_group_count: usize,
        batch_group_count: usize,
        input: &[usize],
        kernel: &[usize],
        output: &[usize],
    ) -> Result<ConvolutionGeometry> {
        let spatial = dnums.input_spatial_dimensions.len();
        let rank = spatial + 2;
        let input_order: Vec<usize> = std::iter::once(dnums.input_batch_dimension)
            .chain(dnums.input_spatial_dimensions.iter().copied())
            .chain(std::iter::once(dnums.input_feature_dimension))
            .collect();
        let kernel_order: Vec<usize> = dnums
            .kernel_spatial_dimensions
            .iter()
            .copied()
            .chain([
                dnums.kernel_input_feature_dimension,
                dnums.kernel_output_feature_dimension,
            ])
            .collect();
        let output_order: Vec<usize> = std::iter::once(dnums.output_batch_dimension)
            .chain(dnums.output_spatial_dimensions.iter().copied())
            .chain(std::iter::once(dnums.output_feature_dimension))
            .collect();
        let describe = || {
            format!(
                "{} x {} -> {} with window {window}, dim_labels={}, feature_group_count={feature_group_count}, batch_group_count={batch_group_count}",
                dims_text(input),
                dims_text(kernel),
                dims_text(output),
                dnums.to_labels()
            )
        };
        if input.len() != rank
            || kernel.len() != rank
            || output.len() != rank
            || window.dims.len() != spatial
            || !is_permutation(&input_order, rank)
            || !is_permutation(&kernel_order, rank)
            || !is_permutation(&output_order, rank)
        {
            return Err(Error::invalid_argument(format!(
                "the dimension numbers do not fit the ranks: {}",
                describe()
            )));
        }
        let (g, bg) = (feature_group_count, batch_group_count);
        let batch = input[dnums.input_batch_dimension];
        let input_features = input[dnums.input_feature_dimension];
        let kernel_input_features = kernel[dnums.kernel_input_feature_dimension];
        let output_features = kernel[dnums.kernel_output_feature_dimension];
        let groups_fit = g >= 1
            && bg >= 1
            && !(g > 1 && bg > 1)
            && kernel_input_features.checked_mul(g) == Some(input_features)
            && output_features.is_multiple_of(g)
            && output_features.is_multiple_of(bg)
            && batch.is_multiple_of(bg);
        if !groups_fit {
            return Err(Error::invalid_argument(format!(
                "{input_features} input features, a kernel of {kernel_input_features} -> {output_features} features, {g} feature groups and {bg} batch groups do not fit: {}",
                describe()
            )));
        }
        let output_batch = batch / bg;
        if output[dnums.output_batch_dimension] != output_batch
            || output[dnums.output_feature_dimension] != output_features
        {
            return Err(Error::invalid_argument(format!(
                "the output should have batch {output_batch} and {output_features} features: {}",
                describe()
            )));
        }
        let pick = |dims: &[usize], which: &[usize]| -> Vec<usize> {
            which.iter().map(|&d| dims[d]).collect()
        };
        let input_spatial = pick(input, &dnums.input_spatial_dimensions);
        let kernel_spatial = pick(kernel, &dnums.kernel_spatial_dimensions);
        let output_spatial = pick(output, &dnums.output_spatial_dimensions);
        for (s, w) in window.dims.iter().enumerate() {
            if w.size != kernel_spatial[s]
                || output_size(input_spatial[s], w) != Some(output_spatial[s])
            {
                return Err(Error::invalid_argument(format!(
                    "spatial dimension {s} does not fit the window (kernel {}, output {}): {}",
                    kernel_spatial[s],
                    output_spatial[s],
                    describe()
                )));
            }
        }
        Ok(ConvolutionGeometry {
            input_order,
            kernel_order,
            output_order,
            batch,
            input_features,
            kernel_input_features,
            output_features,
            output_batch,
            input_spatial,
            kernel_spatial,
            output_spatial,
            feature_groups: g,
            batch_groups: bg,
        })
    }

    /// The number of spatial dimensions.
    pub fn spatial_rank(&self) -> usize {
        self.input_spatial.len()
    }
}

fn dims_text(dims: &[usize]) -> String {
    let inner: Vec<String> = dims.iter().map(|d| d.to_string()).collect();
    format!("[{}]", inner.join(","))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::attrs::WindowDim;

    fn nhwc_hwio() -> ConvDimensionNumbers {
        ConvDimensionNumbers {
            input_batch_dimension: 0,
            input_feature_dimension: 3,
            input_spatial_dimensions: vec![1, 2],
            kernel_input_feature_dimension: 2,
            kernel_output_feature_dimension: 3,
            kernel_spatial_dimensions: vec![0, 1],
            output_batch_dimension: 0,
            output_feature_dimension: 3,
            output_spatial_dimensions: vec![1, 2],
        }
    }

    fn window3x3() -> Window {
        Window {
            dims: vec![WindowDim::of_size(3), WindowDim::of_size(3)],
        }
    }

    #[test]
    fn canonical_sizes() {
        let g = ConvolutionGeometry::new(
            &nhwc_hwio(),
            &window3x3(),
            1,
            1,
            &[8, 10, 12, 4],
            &[3, 3, 4, 16],
            &[8, 8, 10, 16],
        )
        .unwrap();
        assert_eq!(g.input_order, [0, 1, 2, 3]);
        assert_eq!(g.kernel_order, [0, 1, 2, 3]);
        assert_eq!((g.batch, g.input_features, g.output_features), (8, 4, 16));
        assert_eq!(g.output_spatial, [8, 10]);
        assert_eq!(g.spatial_rank(), 2);
    }

    #[test]
    fn malformed_convolutions_are_errors() {
        let d = nhwc_hwio();
        let w = window3x3();
        let bad = [
            // Wrong output size.
            (
                1,
                1,
                vec![8, 10, 12, 4],
                vec![3, 3, 4, 16],
                vec![8, 9, 10, 16],
            ),
            // Features do not fit the groups.
            (
                3,
                1,
                vec![8, 10, 12, 4],
                vec![3, 3, 4, 16],
                vec![8, 8, 10, 16],
            ),
            // Both kinds of groups.
            (
                2,
                2,
                vec![8, 10, 12, 4],
                vec![3, 3, 2, 16],
                vec![4, 8, 10, 16],
            ),
            // Rank mismatch.
            (1, 1, vec![8, 10, 4], vec![3, 3, 4, 16], vec![8, 8, 10, 16]),
            // Zero groups.
            (
                0,
                1,
                vec![8, 10, 12, 4],
                vec![3, 3, 4, 16],
                vec![8, 8, 10, 16],
            ),
        ];
        for (g, bg, i, k, o) in bad {
            assert!(ConvolutionGeometry::new(&d, &w, g, bg, &i, &k, &o).is_err());
        }
        // A dimension named twice.
        let mut twice = nhwc_hwio();
        twice.input_feature_dimension = 0;
        assert!(ConvolutionGeometry::new(
            &twice,
            &w,
            1,
            1,
            &[8, 10, 12, 4],
            &[3, 3, 4, 16],
            &[8, 8, 10, 16]
        )
        .is_err());
    }
}
