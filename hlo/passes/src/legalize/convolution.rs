//! `convolution` → one `dot` per kernel position, summed.
//!
//! Both operands are first transposed to a canonical order — input
//! `[batch, spatial..., feature]`, kernel `[spatial..., in, out]` — and the
//! input is padded with zeros (edge padding, and interior padding for base
//! dilation). For every kernel position `k` (row-major), a strided `slice` of
//! the input holds, for every output position, the input element under `k`;
//! a `dot` with the kernel's `[in, out]` matrix at `k` contracts the features,
//! and the dots are added up. With `feature_group_count = G`, features split
//! into `G` groups and the `dot` is batched over them. The sum is transposed to
//! the output's dimension order.
//!
//! Not bit-exact: the products are summed in another order than one
//! convolution sums them (a float tolerance, like any change of accumulation
//! order), and padding positions are multiplied in as zeros, so an infinite or
//! NaN kernel value next to padding gives NaN where the evaluator, which skips
//! padding, does not. Integer convolutions are exact (wrapping sums commute).
//! `batch_group_count > 1` is declined. The number of kernel positions is
//! bounded ([`MAX_POSITIONS`]).

use super::{single, Emitted, Emitter, Expander};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{DotDimensionNumbers, InstrId, Op, Opcode, PadDim, SliceDim};

/// The most kernel positions (one `dot` each) the expansion unrolls.
pub const MAX_POSITIONS: usize = 1024;

/// See the module docs.
pub struct ConvolutionExpander;

impl Expander for ConvolutionExpander {
    fn name(&self) -> &'static str {
        "convolution"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        let t = single(types)?;
        (op == Opcode::Convolution && (t.is_float() || t.is_integer())).then(|| {
            super::all_of_type(
                t,
                &[
                    Opcode::Transpose,
                    Opcode::Pad,
                    Opcode::Slice,
                    Opcode::Reshape,
                    Opcode::Dot,
                    Opcode::Add,
                ],
            )
        })
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let Op::Convolution {
            window,
            feature_group_count,
            batch_group_count,
            ..
        } = &b.instr(id).op
        else {
            return false;
        };
        let positions = window
            .dims
            .iter()
            .try_fold(1usize, |n, d| n.checked_mul(d.size));
        *batch_group_count == 1
            && *feature_group_count >= 1
            && window
                .dims
                .iter()
                .all(|d| d.stride > 0 && d.base_dilation > 0)
            && matches!(positions, Some(p) if (1..=MAX_POSITIONS).contains(&p))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::Convolution {
            window,
            dnums,
            feature_group_count: groups,
            ..
        } = &instr.op
        else {
            return Err(Error::internal("convolution expander on another op"));
        };
        let bad = |what: &str| Error::invalid_argument(format!("%{}: {what}", instr.name));
        let (lhs, rhs) = (b.operand(0)?, b.operand(1)?);
        let (t, lhs_dims) = b.array(lhs)?;
        let (_, rhs_dims) = b.array(rhs)?;
        let out_dims = instr.shape.dims().to_vec();
        let s = dnums.input_spatial_dimensions.len();
        if window.dims.len() != s
            || dnums.kernel_spatial_dimensions.len() != s
            || dnums.output_spatial_dimensions.len() != s
            || lhs_dims.len() != s + 2
            || rhs_dims.len() != s + 2
            || out_dims.len() != s + 2
        {
            return Err(bad("dimension numbers do not fit the operands"));
        }
        // `x` transposed so that its dimensions come in `perm`'s order.
        let canonical = |b: &mut Emitter<'_, '_>, x: InstrId, dims: &[usize], perm: Vec<usize>| {
            let out: Vec<usize> = perm
                .iter()
                .map(|&d| {
                    dims.get(d)
                        .copied()
                        .ok_or_else(|| bad("dimension out of range"))
                })
                .collect::<Result<_>>()?;
            let id = b.add(
                Shape::array(t, out.clone()),
                Op::Transpose { dimensions: perm },
                vec![x],
            );
            Ok::<_, Error>((id, out))
        };
        // Canonical input [B, spatial..., F] and kernel [spatial..., I, O].
        let mut lhs_perm = vec![dnums.input_batch_dimension];
        lhs_perm.extend(&dnums.input_spatial_dimensions);
        lhs_perm.push(dnums.input_feature_dimension);
        let (lhs_c, lhs_c_dims) = canonical(b, lhs, &lhs_dims, lhs_perm)?;
        let mut rhs_perm = dnums.kernel_spatial_dimensions.clone();
        rhs_perm.push(dnums.kernel_input_feature_dimension);
        rhs_perm.push(dnums.kernel_output_feature_dimension);
        let (rhs_c, rhs_c_dims) = canonical(b, rhs, &rhs_dims, rhs_perm)?;
        let (batch, features) = (lhs_c_dims[0], lhs_c_dims[s + 1]);
        let (in_f, out_f) = (rhs_c_dims[s], rhs_c_dims[s + 1]);
        let g = *groups;
        if g == 0 || features != in_f * g || out_f % g != 0 {
            return Err(bad("feature counts do not fit the feature group count"));
        }
        let out_spatial: Vec<usize> = dnums
            .output_spatial_dimensions
            .iter()
            .map(|&d| {
                out_dims
                    .get(d)
                    .copied()
                    .ok_or_else(|| bad("dimension out of range"))
            })
            .collect::<Result<_>>()?;
        // Zero padding (and base dilation as interior padding).
        let mut config = vec![PadDim {
            low: 0,
            high: 0,
            interior: 0,
        }];
        config.extend(window.dims.iter().map(|w| PadDim {
            low: w.padding_low,
            high: w.padding_high,
            interior: w.base_dilation - 1,
        }));
        config.push(PadDim {
            low: 0,
            high: 0,
            interior: 0,
        });
        let padded = if config.iter().all(|p| {
            *p == PadDim {
                low: 0,
                high: 0,
                interior: 0,
            }
        }) {
            lhs_c
        } else {
            let mut dims = Vec::with_capacity(config.len());
            for (&n, p) in lhs_c_dims.iter().zip(&config) {
                dims.push(
                    usize::try_from(p.padded_size(n))
                        .map_err(|_| bad("padding crops below zero"))?,
                );
            }
            let zero = b.add(
                Shape::scalar(t),
                Op::Constant {
                    literal: hlo_ir::Literal::from_scalar(super::scalar_of(t, 0.0)?),
                },
                vec![],
            );
            b.add(Shape::array(t, dims), Op::Pad { config }, vec![lhs_c, zero])
        };
        let (_, padded_dims) = b.array(padded)?;
        let mut slice_dims = vec![batch];
        slice_dims.extend(&out_spatial);
        slice_dims.push(features);
        let mut acc: Option<InstrId> = None;
        let mut offset = vec![0usize; s];
        loop {
            // The input under kernel position `offset`, for every output.
            let mut slice = vec![SliceDim {
                start: 0,
                limit: batch,
                stride: 1,
            }];
            for (i, w) in window.dims.iter().enumerate() {
                let dim =
                    super::window::window_slice(offset[i], w, out_spatial[i], padded_dims[i + 1])
                        .ok_or_else(|| bad("the window runs past the input"))?;
                slice.push(dim);
            }
            slice.push(SliceDim {
                start: 0,
                limit: features,
                stride: 1,
            });
            let x = b.add(
                Shape::array(t, slice_dims.clone()),
                Op::Slice { slice },
                vec![padded],
            );
            // The kernel's [I, O] matrix at `offset`.
            let mut kslice: Vec<SliceDim> = offset
                .iter()
                .map(|&o| SliceDim {
                    start: o,
                    limit: o + 1,
                    stride: 1,
                })
                .collect();
            kslice.push(SliceDim {
                start: 0,
                limit: in_f,
                stride: 1,
            });
            kslice.push(SliceDim {
                start: 0,
                limit: out_f,
                stride: 1,
            });
            let mut kdims = vec![1; s];
            kdims.extend([in_f, out_f]);
            let k = b.add(
                Shape::array(t, kdims),
                Op::Slice { slice: kslice },
                vec![rhs_c],
            );
            let term = if g == 1 {
                let k = b.add(Shape::array(t, vec![in_f, out_f]), Op::Reshape, vec![k]);
                let mut dims = slice_dims[..=s].to_vec();
                dims.push(out_f);
                b.add(
                    Shape::array(t, dims),
                    Op::Dot {
                        dnums: DotDimensionNumbers {
                            lhs_batch_dims: vec![],
                            rhs_batch_dims: vec![],
                            lhs_contracting_dims: vec![s + 1],
                            rhs_contracting_dims: vec![0],
                        },
                        precision: vec![],
                        algorithm: None,
                    },
                    vec![x, k],
                )
            } else {
                grouped_dot(b, t, x, k, &slice_dims, s, g, in_f, out_f)
            };
            acc = Some(match acc {
                None => term,
                Some(a) => b.binary(BinaryOp::Add, a, term)?,
            });
            if !super::window::next_window_offset(&mut offset, window) {
                break;
            }
        }
        let acc = acc.ok_or_else(|| bad("an empty window"))?;
        // [B, spatial..., O] → the output's order.
        let mut perm = vec![0usize; s + 2];
        perm[dnums.output_batch_dimension.min(s + 1)] = 0;
        perm[dnums.output_feature_dimension.min(s + 1)] = s + 1;
        for (i, &d) in dnums.output_spatial_dimensions.iter().enumerate() {
            perm[d.min(s + 1)] = i + 1;
        }
        let mut seen = perm.clone();
        seen.sort_unstable();
        if seen != (0..s + 2).collect::<Vec<_>>() {
            return Err(bad("output dimension numbers are not a permutation"));
        }
        Ok(b.add(
            instr.shape.clone(),
            Op::Transpose { dimensions: perm },
            vec![acc],
        ))
    }
}

/// The grouped product: `x` `[B, spatial..., G*I]` and kernel `k` with
/// `[I, G*O/G]` entries, as a dot batched over the `G` groups, back in
/// `[B, spatial..., O]` (output features group-major, as XLA orders them).
#[allow(clippy::too_many_arguments)]
fn grouped_dot(
    b: &mut Emitter<'_, '_>,
    t: ElementType,
    x: InstrId,
    k: InstrId,
    slice_dims: &[usize],
    s: usize,
    g: usize,
    in_f: usize,
    out_f: usize,
) -> InstrId {
    let per = out_f / g;
    let mut xd = slice_dims[..=s].to_vec();
    xd.extend([g, in_f]);
    let x = b.add(Shape::array(t, xd), Op::Reshape, vec![x]);
    let k = b.add(Shape::array(t, vec![in_f, g, per]), Op::Reshape, vec![k]);
    // dot result: [G, B, spatial..., O/G].
    let mut dd = vec![g];
    dd.extend(&slice_dims[..=s]);
    dd.push(per);
    let d = b.add(
        Shape::array(t, dd),
        Op::Dot {
            dnums: DotDimensionNumbers {
                lhs_batch_dims: vec![s + 1],
                rhs_batch_dims: vec![1],
                lhs_contracting_dims: vec![s + 2],
                rhs_contracting_dims: vec![0],
            },
            precision: vec![],
            algorithm: None,
        },
        vec![x, k],
    );
    // → [B, spatial..., G, O/G] → [B, spatial..., O].
    let mut perm: Vec<usize> = (1..=s + 1).collect();
    perm.extend([0, s + 2]);
    let mut td = slice_dims[..=s].to_vec();
    td.extend([g, per]);
    let tr = b.add(
        Shape::array(t, td),
        Op::Transpose { dimensions: perm },
        vec![d],
    );
    let mut od = slice_dims[..=s].to_vec();
    od.push(out_f);
    b.add(Shape::array(t, od), Op::Reshape, vec![tr])
}
