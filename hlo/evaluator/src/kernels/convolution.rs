//! `convolution` with any dimension numbers, strides, padding (negative too),
//! base (lhs) and window (rhs) dilation, window reversal, feature groups and
//! batch groups.
//!
//! Semantics, as XLA's evaluator defines them (and XLA CPU agrees, integer
//! results wrapping):
//! * For output spatial coordinate `o` and kernel position `k` in a spatial
//!   dimension, the input is read at `o * stride - padding_low +
//!   k * window_dilation` of the base-dilated input; a position that falls in
//!   a dilation hole or outside the input contributes nothing. A reversed
//!   window dimension reads kernel element `size - 1 - k` at position `k`.
//! * Feature groups: input features are split into `feature_group_count`
//!   groups of `C / G`; output feature `o` belongs to group `o / (O / G)` and
//!   reads that group's input features against kernel input features
//!   `0..C / G`.
//! * Batch groups: the input batch is split into `batch_group_count` groups of
//!   `N / BG`; output feature `o` belongs to group `o / (O / BG)` and output
//!   batch `b` reads input batch `b + group * (N / BG)`.
//! * Operands are converted to the result type; each output starts at 0 and
//!   adds its products with kernel positions in row-major order (outer) and
//!   input features in order (inner) — the evaluator's order; f16/bf16
//!   accumulate in f32 and round once.
//!
//! The operands are transposed to `[batch, spatial..., feature]` and
//! `[spatial..., in_feature, out_feature]`, and for each output position all
//! output features are accumulated together as a vector over contiguous
//! kernel rows, which keeps every output's sum in that order.

use super::dot::{converted, permuted, run_mac_kernel, Mac, MacKernel};
use super::util::{self, invalid, operand_array};
use super::CallComputation;
use hlo_ir::analysis::convolution::ConvolutionGeometry;
use hlo_ir::analysis::window::input_position;
use hlo_ir::Op;
use hlo_ir::{HloInstruction, Literal, Result};

/// For one spatial dimension: per output coordinate, the valid
/// `(kernel index, input index)` pairs in window order.
type Taps = Vec<Vec<(usize, usize)>>;

struct Conv {
    batch_out: usize,
    in_batch_group_stride: usize,
    in_spatial: Vec<usize>,
    channels: usize,
    out_spatial: Vec<usize>,
    kernel_spatial: Vec<usize>,
    in_features_per_group: usize,
    out_features: usize,
    /// `(first output feature, end, input batch offset in groups, input feature base)`.
    segments: Vec<(usize, usize, usize, usize)>,
    taps: Vec<Taps>,
}

impl MacKernel for Conv {
    fn compute<T: Mac>(&self, lhs: &[T], rhs: &[T]) -> Vec<T> {
        let nsp = self.in_spatial.len();
        let out_positions: usize = self.out_spatial.iter().product();
        let (c, o_n, ig) = (self.channels, self.out_features, self.in_features_per_group);
        let mut out = vec![T::default(); self.batch_out * out_positions * o_n];
        if out.is_empty() {
            return out;
        }
        // Strides of [batch, spatial..., C] and [spatial..., I, O].
        let mut in_dims = vec![0usize];
        in_dims.extend(&self.in_spatial);
        in_dims.push(c);
        let in_strides = util::strides_of(&in_dims);
        let mut k_dims = self.kernel_spatial.clone();
        k_dims.extend([ig, o_n]);
        let k_strides = util::strides_of(&k_dims);
        let batch_stride = in_strides[0];

        let mut out_index = vec![0usize; nsp];
        let mut tap = vec![0usize; nsp];
        for b in 0..self.batch_out {
            for pos in 0..out_positions {
                let acc =
                    &mut out[(b * out_positions + pos) * o_n..(b * out_positions + pos + 1) * o_n];
                let lists: Vec<&Vec<(usize, usize)>> =
                    (0..nsp).map(|d| &self.taps[d][out_index[d]]).collect();
                if lists.iter().all(|l| !l.is_empty()) {
                    tap.iter_mut().for_each(|t| *t = 0);
                    loop {
                        let mut in_off = 0usize;
                        let mut k_off = 0usize;
                        for d in 0..nsp {
                            let (k, i) = lists[d][tap[d]];
                            in_off += i * in_strides[d + 1];
                            k_off += k * k_strides[d];
                        }
                        for &(o0, o1, group, feature_base) in &self.segments {
                            let batch = b + group * self.in_batch_group_stride;
                            let base = batch * batch_stride + in_off + feature_base;
                            for iz in 0..ig {
                                let a = lhs[base + iz];
                                let row = &rhs[k_off + iz * o_n + o0..k_off + iz * o_n + o1];
                                for (acc, &w) in acc[o0..o1].iter_mut().zip(row) {
                                    *acc = T::mac(*acc, a, w);
                                }
                            }
                        }
                        // Next tap, row-major over the spatial dimensions.
                        let mut done = true;
                        let mut d = nsp;
                        while d > 0 {
                            d -= 1;
                            tap[d] += 1;
                            if tap[d] < lists[d].len() {
                                done = false;
                                break;
                            }
                            tap[d] = 0;
                        }
                        if done {
                            break;
                        }
                    }
                }
                hlo_ir::index::next_index(&mut out_index, &self.out_spatial);
            }
        }
        out
    }
}

/// The `convolution` kernel.
pub fn convolution(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Convolution {
        window,
        dnums,
        feature_group_count,
        batch_group_count,
        ..
    } = &instr.op
    else {
        return Err(invalid(instr, "not a convolution"));
    };
    if operands.len() != 2 {
        return Err(invalid(
            instr,
            format!("expects 2 operands, got {}", operands.len()),
        ));
    }
    let (lhs, ls) = operand_array(instr, operands, 0)?;
    let (rhs, rs) = operand_array(instr, operands, 1)?;
    let result = util::result_array(instr)?;
    let geometry = ConvolutionGeometry::new(
        dnums,
        window,
        *feature_group_count,
        *batch_group_count,
        &ls.dims,
        &rs.dims,
        &result.dims,
    )
    .map_err(|e| invalid(instr, e.message()))?;
    let ConvolutionGeometry {
        input_order: lhs_order,
        kernel_order: rhs_order,
        output_order: out_order,
        batch: n,
        input_features: c,
        kernel_input_features: i_k,
        output_features: o_k,
        input_spatial: in_spatial,
        kernel_spatial,
        output_spatial: out_spatial,
        feature_groups: g,
        batch_groups: bg,
        ..
    } = geometry;
    let nsp = in_spatial.len();
    let rank = nsp + 2;
    let taps: Vec<Taps> = (0..nsp)
        .map(|d| {
            let w = &window.dims[d];
            (0..out_spatial[d])
                .map(|o| {
                    (0..w.size)
                        .filter_map(|k| {
                            let at = input_position(w, in_spatial[d], o, k)?;
                            let kernel = if w.window_reversal { w.size - 1 - k } else { k };
                            Some((kernel, at))
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    // Output feature ranges over which the feature group and batch group are constant.
    let (per_fg, per_bg) = (o_k / g, o_k / bg);
    let mut segments = Vec::new();
    let mut o0 = 0;
    while o0 < o_k {
        let o1 = ((o0 / per_fg + 1) * per_fg)
            .min((o0 / per_bg + 1) * per_bg)
            .min(o_k);
        segments.push((o0, o1, o0 / per_bg, (o0 / per_fg) * i_k));
        o0 = o1;
    }
    let conv = Conv {
        batch_out: n / bg,
        in_batch_group_stride: n / bg,
        in_spatial,
        channels: c,
        out_spatial,
        kernel_spatial,
        in_features_per_group: i_k,
        out_features: o_k,
        segments,
        taps,
    };

    let ty = result.element_type;
    let lhs = converted(lhs, ty)?;
    let rhs = converted(rhs, ty)?;
    let lhs_t = permuted(&lhs, &ls.dims, &lhs_order)?;
    let rhs_t = permuted(&rhs, &rs.dims, &rhs_order)?;
    // Computed as [batch, spatial..., feature]; then into the result's order.
    let canonical_dims: Vec<usize> = out_order.iter().map(|&d| result.dims[d]).collect();
    let canonical = hlo_ir::ArrayShape::new(ty, canonical_dims.clone());
    let out = run_mac_kernel(&conv, &lhs_t, &rhs_t, &canonical)?;
    let mut to_result = vec![0usize; rank];
    for (pos, &d) in out_order.iter().enumerate() {
        to_result[d] = pos;
    }
    let out = permuted(&out, &canonical_dims, &to_result)?.into_owned();
    util::literal_from_bytes(result, out.bytes()?)
}
