//! `convolution` with any dimension numbers, strides, padding (negative
//! included), input and kernel dilation, window reversal, feature groups and
//! batch groups: im2col + GEMM, or for unit strides a sum of GEMMs over
//! shifted views of the padded input ([`shifted`]).
//!
//! 1. The input is brought to `[batch, spatial..., feature]` and the kernel to
//!    `[spatial..., in_feature, out_feature]` (skipped when they already are;
//!    converted to the compute type if needed).
//! 2. For each output image, group and block of output positions, an im2col
//!    block is built: one row per output position, one column per (kernel
//!    position, input feature), zeros where the window falls in padding or
//!    between dilated input elements. The block times the kernel's group
//!    columns is a GEMM (`dot::own_gemm` for f32/f64, the packed-word products
//!    for integers) written straight into the
//!    canonical output `[batch, spatial..., out_feature]`.
//! 3. The canonical output is permuted into the result's dimension order.
//!
//! A depthwise convolution (every group reads one input feature) skips im2col
//! for a direct kernel over channel rows, in floats and, on s32 words, in
//! integer types of 32 bits or fewer.
//!
//! Batch groups (`batch_group_count`, used by weight gradients) pair output
//! feature group `j` with input batch group `j`.
//!
//! A convolution with unit strides, no input dilation and no groups (most
//! forward layers and their input gradients) skips step 2's copy: the
//! windows of all output positions are read in place from a zero-padded
//! copy of the input, one GEMM per run of consecutive taps ([`shifted`]).
//! The compile option `host_conv=im2col` turns that form off.

mod shifted;

use super::denormal::MaybeFlushable;
use super::dot::{gemm_c128, gemm_c64, word_kind, GemmKernel};
use super::gemm::words::{word_gemm, word_level};
use super::gemm::{Strided, StridedMut};
use super::strided::StridedCopy;
use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, Thunk};
use num_complex::{Complex32, Complex64};
use platform_api::hlo::analysis::convolution::ConvolutionGeometry;
use platform_api::hlo::analysis::window::input_position;
use platform_api::hlo::{InstrId, Op};
use platform_api::index::next_index;
use platform_api::{ArrayShape, CompileOptions, ElementType, Error, Result};
use shifted::ShiftedPlan;
use std::collections::HashMap;

/// The debug option that picks the convolution form: `auto` (the default:
/// [`shifted`] where it applies, else im2col) or `im2col`.
pub const CONV_OPTION: &str = "host_conv";

/// Whether `options` allow the shifted form.
fn shifted_enabled(options: &CompileOptions) -> Result<bool> {
    match options.debug_option(CONV_OPTION) {
        None | Some("auto") => Ok(true),
        Some("im2col") => Ok(false),
        Some(other) => Err(Error::invalid_argument(format!(
            "{CONV_OPTION} must be auto (the default) or im2col, not \"{other}\""
        ))),
    }
}

/// Target im2col block size, in elements.
const BLOCK_ELEMENTS: usize = 1 << 20;
/// A tap class's im2col chunk, in elements: one task's chunk and its
/// product stay in that core's L2 between the copy, the GEMM and the scatter.
/// (Fewer where the chunk's product would reach the GEMM's parallel
/// threshold: the task's GEMM runs on the task's thread.)
const CLASS_CHUNK_ELEMENTS: usize = 1 << 14;
/// Fewest multiply-adds per task of a tap class (several chunks each).
const TASK_MACS: usize = 1 << 21;

#[derive(Clone, Debug)]
struct ConvPlan {
    /// Input spatial sizes, input features.
    in_spatial: Vec<usize>,
    c_in: usize,
    /// Kernel spatial sizes, input features per group, output features.
    k_spatial: Vec<usize>,
    ci_group: usize,
    c_out: usize,
    /// Output batch and spatial sizes.
    n_out: usize,
    out_spatial: Vec<usize>,
    feature_groups: usize,
    batch_groups: usize,
    /// For each spatial dimension, for each output coordinate, for each kernel
    /// coordinate: the input coordinate, if real.
    taps: Vec<Vec<Vec<Option<usize>>>>,
    /// The output positions grouped by which taps are real, when most taps
    /// are not (see [`TapClass`]).
    classes: Option<Vec<TapClass>>,
}

/// Output positions whose windows have the same real taps.
///
/// With input dilation (a transposed convolution, the input gradient of a
/// strided one) most of a window falls between input elements: a 3x3 window
/// over an input dilated by 2 has 4, 2, 2 or 1 real taps depending on the
/// output position's parity. The dense im2col multiplies the zeros of the
/// other taps too; per class, the GEMM contracts only the real taps (the
/// kernel's rows for them gathered into a smaller kernel matrix), and the
/// product's rows are scattered to the class's positions.
#[derive(Clone, Debug)]
struct TapClass {
    /// Row-major spatial output positions.
    positions: Vec<usize>,
    /// Row-major kernel positions every window of the class reads.
    kernel_positions: Vec<usize>,
}

/// Classes are used when they cut the multiply-adds to at most this share
/// of the dense im2col's.
const CLASS_MAX_SHARE: f64 = 0.75;
/// Nor when there would be more classes than this (each is its own GEMM).
const MAX_CLASSES: usize = 64;
/// Nor over more output positions than this per image.
const MAX_CLASS_POSITIONS: usize = 1 << 22;

/// The output positions grouped by their real taps (see [`TapClass`]),
/// if that saves enough work.
fn tap_classes(
    taps: &[Vec<Vec<Option<usize>>>],
    out_spatial: &[usize],
    k_spatial: &[usize],
) -> Option<Vec<TapClass>> {
    let nd = taps.len();
    if nd == 0 || out_spatial.contains(&0) || k_spatial.contains(&0) {
        return None;
    }
    // The classes list every output position: not for enormous outputs.
    let positions = out_spatial
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))?;
    if positions > MAX_CLASS_POSITIONS {
        return None;
    }
    // Per dimension: (real kernel coordinates, output coordinates having them),
    // found through a map so a long dimension with a long kernel stays linear.
    let mut per_dim: Vec<Vec<(Vec<usize>, Vec<usize>)>> = Vec::with_capacity(nd);
    let mut count = 1usize;
    for dim in taps {
        let mut groups: Vec<(Vec<usize>, Vec<usize>)> = Vec::new();
        let mut index: HashMap<Vec<usize>, usize> = HashMap::new();
        for (o, row) in dim.iter().enumerate() {
            let live: Vec<usize> = (0..row.len()).filter(|&k| row[k].is_some()).collect();
            match index.get(&live) {
                Some(&g) => groups[g].1.push(o),
                None => {
                    if groups.len() == MAX_CLASSES {
                        return None;
                    }
                    index.insert(live.clone(), groups.len());
                    groups.push((live, vec![o]));
                }
            }
        }
        count = count
            .checked_mul(groups.len())
            .filter(|&c| c <= MAX_CLASSES)?;
        per_dim.push(groups);
    }
    let dense = positions as f64 * k_spatial.iter().product::<usize>() as f64;
    let sparse: f64 = {
        // The product over dimensions of (Σ over groups of |outputs|·|live|).
        per_dim
            .iter()
            .map(|g| {
                g.iter()
                    .map(|(l, os)| (l.len() * os.len()) as f64)
                    .sum::<f64>()
            })
            .product()
    };
    if sparse > CLASS_MAX_SHARE * dense {
        return None;
    }
    let out_strides = platform_api::shape::row_major_strides(out_spatial);
    let k_strides = platform_api::shape::row_major_strides(k_spatial);
    let radix: Vec<usize> = per_dim.iter().map(Vec::len).collect();
    let mut pick = vec![0usize; nd];
    let mut classes = Vec::with_capacity(count);
    loop {
        let mut positions = vec![0usize];
        let mut kernel_positions = vec![0usize];
        for d in 0..nd {
            let (live, outs) = &per_dim[d][pick[d]];
            let (os, ks) = (out_strides[d], k_strides[d]);
            positions = positions
                .iter()
                .flat_map(|&p| outs.iter().map(move |&o| p + o * os))
                .collect();
            kernel_positions = kernel_positions
                .iter()
                .flat_map(|&p| live.iter().map(move |&k| p + k * ks))
                .collect();
        }
        classes.push(TapClass {
            positions,
            kernel_positions,
        });
        if !next_index(&mut pick, &radix) {
            return Some(classes);
        }
    }
}

/// Scratch of [`ConvPlan::for_each_tap_run`]: output coordinates, kernel
/// coordinates of the dimensions before the last, and the output position
/// whose coordinates follow from `oc` by counting.
#[derive(Default)]
struct TapWalk {
    oc: Vec<usize>,
    kc: Vec<usize>,
    next_pos: Option<usize>,
}

/// Copies `n` elements, up to 16 of them with inline moves: a call to
/// `memcpy` for each run of a few elements (an im2col row of a 3x3 window
/// over 3 features is three runs of 9) costs more than the copy.
///
/// # Safety
/// As [`std::ptr::copy_nonoverlapping`].
#[inline(always)]
unsafe fn copy_short<T>(src: *const T, dst: *mut T, n: usize) {
    macro_rules! by_count {
        ($($k:literal)*) => {
            // SAFETY: the caller's contract, for `n` elements.
            unsafe {
                match n {
                    $($k => std::ptr::copy_nonoverlapping(src, dst, $k),)*
                    _ => std::ptr::copy_nonoverlapping(src, dst, n),
                }
            }
        };
    }
    by_count!(1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16)
}

/// Row-major strides of the plan's spatial index spaces.
struct SpatialStrides {
    input: Vec<usize>,
    output: Vec<usize>,
}

impl ConvPlan {
    fn strides(&self) -> SpatialStrides {
        let rm = platform_api::shape::row_major_strides;
        SpatialStrides {
            input: rm(&self.in_spatial),
            output: rm(&self.out_spatial),
        }
    }

    /// Walks the kernel positions of output position `pos` in order, calling
    /// `f(kp, len, at)` for runs of them: `len` kernel positions from `kp`,
    /// consecutive along the last spatial dimension, that read consecutive
    /// input spatial positions (row-major over `in_spatial`) from `at`, or
    /// that fall in padding or between dilated input elements (`None`).
    ///
    /// The output coordinates are found once per call and the kernel
    /// coordinates counted, so a tap costs a table lookup, not the divisions
    /// of decoding `pos` and `kp` (an im2col row of a 3x3 window over 3
    /// features spent more time there than its GEMM did).
    fn for_each_tap_run(
        &self,
        strides: &SpatialStrides,
        walk: &mut TapWalk,
        pos: usize,
        mut f: impl FnMut(usize, usize, Option<usize>),
    ) {
        let nd = self.in_spatial.len();
        if nd == 0 {
            f(0, 1, Some(0));
            return;
        }
        if self.k_spatial.contains(&0) {
            return;
        }
        let last = nd - 1;
        if walk.next_pos == Some(pos) && walk.oc.len() == nd {
            // The position after the last one walked: count, don't divide.
            next_index(&mut walk.oc, &self.out_spatial);
        } else {
            walk.oc.clear();
            for d in 0..nd {
                walk.oc
                    .push((pos / strides.output[d]) % self.out_spatial[d]);
            }
        }
        walk.next_pos = Some(pos + 1);
        // Kernel coordinates of the dimensions before the last.
        walk.kc.clear();
        walk.kc.resize(last, 0);
        let row = &self.taps[last][walk.oc[last]];
        let k_last = self.k_spatial[last];
        let mut kp = 0;
        loop {
            let mut base = Some(0);
            for d in 0..last {
                base = match (base, self.taps[d][walk.oc[d]][walk.kc[d]]) {
                    (Some(b), Some(t)) => Some(b + t * strides.input[d]),
                    _ => None,
                };
            }
            match base {
                None => f(kp, k_last, None),
                Some(b) => {
                    let mut j = 0;
                    while j < k_last {
                        let at = row[j];
                        let mut len = 1;
                        if let Some(t) = at {
                            while j + len < k_last && row[j + len] == Some(t + len) {
                                len += 1;
                            }
                        }
                        f(kp + j, len, at.map(|t| b + t * strides.input[last]));
                        j += len;
                    }
                }
            }
            kp += k_last;
            if !next_index(&mut walk.kc, &self.k_spatial[..last]) {
                return;
            }
        }
    }

    fn positions(&self) -> usize {
        self.out_spatial.iter().product()
    }
    fn kernel_positions(&self) -> usize {
        self.k_spatial.iter().product()
    }
}

/// A permutation into canonical order (and conversion), unless already there.
struct Canonical {
    copy: Option<StridedCopy>,
    convert: Option<Kernel>,
    elements: usize,
    in_width: usize,
}

impl Canonical {
    fn new(shape: &ArrayShape, order: &[usize], compute: ElementType) -> Result<Canonical> {
        let strides = StridedCopy::row_major(&shape.dims);
        let identity = order.iter().enumerate().all(|(i, &d)| i == d);
        let dims: Vec<usize> = order.iter().map(|&d| shape.dims[d]).collect();
        let src: Vec<isize> = order.iter().map(|&d| strides[d]).collect();
        Ok(Canonical {
            copy: (!identity).then(|| {
                StridedCopy::new(
                    shape.element_type.byte_size(),
                    &dims,
                    &src,
                    &StridedCopy::row_major(&dims),
                )
            }),
            convert: if shape.element_type != compute {
                Some(ops::convert(shape.element_type, compute)?)
            } else {
                None
            },
            elements: shape.element_count(),
            in_width: shape.element_type.byte_size(),
        })
    }

    /// The canonical data: `src` itself, or a copy in `buf` (also made when
    /// the data holds subnormals, which the copy flushes to zero, unless the
    /// GEMM flushes them itself: see [`super::denormal`]).
    fn get<T: MaybeFlushable>(
        &self,
        src: *const u8,
        buf: &mut Vec<T>,
        staging: &mut Vec<u64>,
        gemm_flushes: bool,
    ) -> *const T {
        let flush = T::FLOAT && !gemm_flushes;
        if self.copy.is_none() && self.convert.is_none() {
            if flush {
                // SAFETY: an unconverted operand holds `elements` values of T.
                let data = unsafe { std::slice::from_raw_parts(src.cast::<T>(), self.elements) };
                if T::any_subnormal(data) {
                    buf.clear();
                    buf.extend_from_slice(data);
                    T::flush(buf);
                    return buf.as_ptr();
                }
            }
            return src.cast();
        }
        let mut from = src;
        if let Some(copy) = &self.copy {
            staging.clear();
            staging.resize((self.elements * self.in_width).div_ceil(8), 0);
            // SAFETY: the plan reads the operand and writes `elements` values.
            unsafe { copy.run(src, staging.as_mut_ptr().cast()) };
            from = staging.as_ptr().cast();
        }
        buf.clear();
        buf.resize(self.elements, T::zeroed());
        match &self.convert {
            // SAFETY: `from` holds `elements` values of the operand's type,
            // `buf` room for as many of the compute type.
            Some(k) => unsafe { k.call(&[Arg::Ptr(from)], buf.as_mut_ptr().cast(), self.elements) },
            // SAFETY: `from` holds `elements` values of T.
            None => unsafe {
                std::ptr::copy_nonoverlapping(from.cast::<T>(), buf.as_mut_ptr(), self.elements)
            },
        }
        if flush && T::any_subnormal(buf) {
            T::flush(buf);
        }
        buf.as_ptr()
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::Convolution {
        window,
        dnums,
        feature_group_count,
        batch_group_count,
        ..
    } = &instr.op
    else {
        return Err(Error::internal("not a convolution"));
    };
    let input = ctx.operand_array(instr, 0)?;
    let kernel = ctx.operand_array(instr, 1)?;
    let result = ctx.result_array(instr)?;
    let geometry = ConvolutionGeometry::new(
        dnums,
        window,
        *feature_group_count,
        *batch_group_count,
        &input.dims,
        &kernel.dims,
        &result.dims,
    )
    .map_err(|e| e.context(format!("convolution %{}", instr.name)))?;
    let ns = geometry.spatial_rank();
    // For each spatial dimension, output coordinate and kernel coordinate:
    // the input coordinate read, if real.
    let taps: Vec<Vec<Vec<Option<usize>>>> = (0..ns)
        .map(|s| {
            let w = &window.dims[s];
            let size = geometry.kernel_spatial[s];
            (0..geometry.output_spatial[s])
                .map(|o| {
                    (0..size)
                        .map(|k| {
                            let at = if w.window_reversal { size - 1 - k } else { k };
                            input_position(w, geometry.input_spatial[s], o, at)
                        })
                        .collect()
                })
                .collect()
        })
        .collect();
    let plan = ConvPlan {
        in_spatial: geometry.input_spatial.clone(),
        c_in: geometry.input_features,
        k_spatial: geometry.kernel_spatial.clone(),
        ci_group: geometry.kernel_input_features,
        c_out: geometry.output_features,
        n_out: geometry.output_batch,
        out_spatial: geometry.output_spatial.clone(),
        feature_groups: geometry.feature_groups,
        batch_groups: geometry.batch_groups,
        classes: if geometry.feature_groups == 1 && geometry.batch_groups == 1 {
            tap_classes(&taps, &geometry.output_spatial, &geometry.kernel_spatial)
        } else {
            None
        },
        taps,
    };
    let out_ty = result.element_type;
    let rows = plan.n_out * plan.positions();
    // Every group reads one input feature: a direct kernel, not im2col.
    let depthwise = plan.ci_group == 1 && plan.batch_groups == 1 && plan.feature_groups > 1;
    // An integer depthwise convolution of 32-bit types or narrower runs the
    // direct kernel on s32 words (exact modulo 2^32, all such results keep):
    // as im2col, each group would be a product with one column.
    let word32 = |t: ElementType| {
        use ElementType::*;
        matches!(t, S8 | U8 | S16 | U16 | S32 | U32 | Pred)
    };
    let int_depthwise =
        depthwise && word32(input.element_type) && word32(kernel.element_type) && word32(out_ty);
    // Integer products run over packed words (exact, VNNI or AMX for
    // bytes); the operands stay in their own (or a common) type until the
    // words are packed, and the sums are s32.
    let words = if int_depthwise {
        None
    } else if out_ty.is_integer() || out_ty == ElementType::Pred {
        word_kind(
            input.element_type,
            kernel.element_type,
            out_ty,
            rows,
            plan.c_out,
        )
    } else {
        None
    };
    // `operand`: the canonical operands' type; `compute`: the GEMM's result.
    let (operand, compute) = match words {
        Some((_, source)) => (source, ElementType::S32),
        None => {
            let compute = match out_ty {
                _ if int_depthwise => ElementType::S32,
                ElementType::F16 | ElementType::BF16 => ElementType::F32,
                // XLA's pred dot is an or of ands: an s32 sum of 0/1
                // products, then "nonzero" by the final convert (exact below
                // 2^31 terms).
                ElementType::Pred => ElementType::S32,
                t => t,
            };
            (compute, compute)
        }
    };
    let in_canon = Canonical::new(input, &geometry.input_order, operand)?;
    let k_canon = Canonical::new(kernel, &geometry.kernel_order, operand)?;
    // Canonical output [n, spatial..., c] → result order.
    let canon_dims: Vec<usize> = std::iter::once(plan.n_out)
        .chain(plan.out_spatial.iter().copied())
        .chain(std::iter::once(plan.c_out))
        .collect();
    let canon_strides = StridedCopy::row_major(&canon_dims);
    let mut out_src_strides = vec![0isize; ns + 2];
    out_src_strides[dnums.output_batch_dimension] = canon_strides[0];
    for (s, &d) in dnums.output_spatial_dimensions.iter().enumerate() {
        out_src_strides[d] = canon_strides[s + 1];
    }
    out_src_strides[dnums.output_feature_dimension] = canon_strides[ns + 1];
    let identity_out = out_src_strides == StridedCopy::row_major(&result.dims);
    let out_copy = StridedCopy::new(
        compute.byte_size(),
        &result.dims,
        &out_src_strides,
        &StridedCopy::row_major(&result.dims),
    );
    let finish = if compute != out_ty {
        Some(ops::convert(compute, out_ty)?)
    } else {
        None
    };
    let slices = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.result_slice(id)?,
    );
    let name = instr.name.clone();
    let post = PostProcess {
        identity: identity_out,
        copy: out_copy,
        finish,
        elements: result.element_count(),
    };
    let shifted = if shifted_enabled(ctx.options)? {
        ShiftedPlan::new(&plan, &window.dims)
    } else {
        None
    };
    // A float type's form: depthwise directly, else the shifted form where
    // it applies, else im2col and the own GEMM.
    macro_rules! float {
        ($T:ty) => {{
            let own = GemmKernel::<$T>::own();
            let (direct, gemm_flushes): (Option<DirectFn>, bool) = if depthwise {
                // The direct kernel treats subnormal operands as the GEMM
                // does: as zero.
                let run: fn(&ConvPlan, usize, usize, usize) = run_depthwise::<$T>;
                (Some(Box::new(run)), true)
            } else if let (Some(s), Some(seg)) = (shifted, own.segmented) {
                // The shifted form reads the input in place, flushed
                // beforehand.
                (
                    Some(Box::new(move |p: &ConvPlan, x, k, o| {
                        shifted::run::<$T>(p, &s, x, k, o, seg)
                    })),
                    false,
                )
            } else {
                (None, own.flushes_subnormals)
            };
            Ok(conv_thunk::<$T, $T>(
                name,
                plan,
                (in_canon, k_canon),
                post,
                slices,
                own.run,
                gemm_flushes,
                direct,
            ))
        }};
    }
    macro_rules! plain {
        ($A:ty, $C:ty, $gemm:expr) => {
            Ok(conv_thunk::<$A, $C>(
                name,
                plan,
                (in_canon, k_canon),
                post,
                slices,
                $gemm,
                false,
                None,
            ))
        };
    }
    if int_depthwise {
        let run: fn(&ConvPlan, usize, usize, usize) = run_depthwise::<std::num::Wrapping<i32>>;
        return Ok(conv_thunk::<i32, i32>(
            name,
            plan,
            (in_canon, k_canon),
            post,
            slices,
            super::dot::int_gemm::<i32>,
            false,
            Some(Box::new(run)),
        ));
    }
    if words.is_some() {
        use crate::kernels::gemm::words::WordSource;
        // The words' GEMM with its operands staged as a plain type of their
        // size (the canonical copies), its sums as s32 bits.
        unsafe fn word_block<E: WordSource>(
            m: usize,
            k: usize,
            n: usize,
            a: Strided<E::Stage>,
            b: Strided<E::Stage>,
            c: StridedMut<u32>,
        ) {
            let words = |s: Strided<E::Stage>| Strided {
                ptr: s.ptr.cast::<E>(),
                rs: s.rs,
                cs: s.cs,
            };
            // SAFETY: forwarded; `E::Stage` has `E`'s size and bits, and
            // `word_kind` checked that the kind runs at this level.
            unsafe { word_gemm::<E>(word_level(None), m, n, k, words(a), words(b), c, true) }
        }
        // `word_kind`'s sources for integer results: the narrow operands'
        // common storage type, or s32 (i32 words).
        return match operand {
            ElementType::S8 => plain!(i8, u32, word_block::<i8>),
            ElementType::U8 => plain!(u8, u32, word_block::<u8>),
            ElementType::S16 => plain!(i16, u32, word_block::<i16>),
            ElementType::S32 => plain!(i32, u32, word_block::<i32>),
            _ => Err(Error::internal(format!(
                "convolution %{}: no word product of {operand} operands",
                instr.name
            ))),
        };
    }
    match compute {
        ElementType::F32 => float!(f32),
        ElementType::F64 => float!(f64),
        ElementType::C64 => plain!(Complex32, Complex32, gemm_c64),
        ElementType::C128 => plain!(Complex64, Complex64, gemm_c128),
        t => {
            crate::with_int!(t, T => plain!(T, T, super::dot::int_gemm::<T>), _ => Err(Error::unimplemented(format!(
                "convolution %{} with {t} results",
                instr.name
            ))))
        }
    }
}

struct PostProcess {
    identity: bool,
    copy: StridedCopy,
    finish: Option<Kernel>,
    elements: usize,
}

/// A convolution computed on canonical buffers (plan, input, kernel and
/// output addresses) instead of im2col and a block GEMM: the depthwise
/// kernel, or the shifted form.
type DirectFn = Box<dyn Fn(&ConvPlan, usize, usize, usize) + Send + Sync>;

/// A block GEMM: `C = A·B` for `m × k` and `k × n` operands of `A`, the
/// product in `C` (the compute type; for integer operands packed as words,
/// s32 bits). Strides in elements.
type BlockGemm<A, C> = unsafe fn(usize, usize, usize, Strided<A>, Strided<A>, StridedMut<C>);

/// `gemm_flushes`: the GEMM (or the direct form) treats subnormal operands
/// as zero itself, so the canonical copies need not flush them.
#[allow(clippy::too_many_arguments)]
fn conv_thunk<A: MaybeFlushable + Send + Sync, C: bytemuck::Pod + Send + Sync>(
    name: String,
    plan: ConvPlan,
    (in_canon, k_canon): (Canonical, Canonical),
    post: PostProcess,
    (input, kernel, out): (BufferSlice, BufferSlice, BufferSlice),
    gemm: BlockGemm<A, C>,
    gemm_flushes: bool,
    direct_fn: Option<DirectFn>,
) -> Box<dyn Thunk> {
    thunk(name, "convolution", move |ctx| {
        let (mut ibuf, mut kbuf, mut stage) = (Vec::<A>::new(), Vec::<A>::new(), Vec::<u64>::new());
        let x = in_canon.get::<A>(ctx.ptr(input), &mut ibuf, &mut stage, gemm_flushes) as usize;
        let k = k_canon.get::<A>(ctx.ptr(kernel), &mut kbuf, &mut stage, gemm_flushes) as usize;
        let direct = post.identity && post.finish.is_none();
        let mut obuf: Vec<C> = if direct {
            Vec::new()
        } else {
            vec![C::zeroed(); post.elements]
        };
        let o = if direct {
            ctx.ptr(out).cast::<C>()
        } else {
            obuf.as_mut_ptr()
        } as usize;
        match &direct_fn {
            Some(run) => run(&plan, x, k, o),
            None => run_conv::<A, C>(&plan, x, k, o, gemm),
        }
        if !direct {
            let po = ctx.ptr(out);
            match &post.finish {
                None => {
                    // SAFETY: the plan permutes the canonical output into the result.
                    unsafe { post.copy.run(o as *const u8, po) }
                }
                Some(k) => {
                    let mut permuted: Vec<C> = vec![C::zeroed(); post.elements];
                    // SAFETY: as above, into a compute-type buffer first, then
                    // converted from it into the result.
                    unsafe {
                        post.copy.run(o as *const u8, permuted.as_mut_ptr().cast());
                        k.call(&[Arg::Ptr(permuted.as_ptr().cast())], po, post.elements);
                    }
                }
            }
        }
        Ok(())
    })
}

/// A grouped convolution whose every group has one input feature (depthwise,
/// with `c_out / groups` outputs per input feature): for each output
/// position, the window's taps times the kernel, accumulated across the
/// channels of a row at once (contiguous in the canonical layouts, so the
/// inner loop vectorises). Rows are split over the pool.
fn run_depthwise<T>(p: &ConvPlan, x: usize, k: usize, o: usize)
where
    T: bytemuck::Pod + Send + Sync + std::ops::Add<Output = T> + std::ops::Mul<Output = T>,
{
    let positions = p.positions();
    let kpos = p.kernel_positions();
    let c_out = p.c_out;
    let groups = p.feature_groups;
    if positions == 0 || c_out == 0 || p.n_out == 0 || groups == 0 {
        return;
    }
    let m = c_out / groups;
    let in_image: usize = p.in_spatial.iter().product::<usize>() * p.c_in;
    let strides = p.strides();
    let rows = p.n_out * positions;
    let per_task = (16_384 / (kpos * c_out).max(1)).max(1);
    parallel_for(rows, per_task, |s, e| {
        let (xp, kp_base, op) = (x as *const T, k as *const T, o as *mut T);
        let mut acc: Vec<T> = vec![T::zeroed(); c_out];
        let mut walk = TapWalk::default();
        for row in s..e {
            let (b, pos) = (row / positions, row % positions);
            acc.fill(T::zeroed());
            p.for_each_tap_run(&strides, &mut walk, pos, |kp0, len, at| {
                let Some(a0) = at else {
                    return;
                };
                for i in 0..len {
                    let (kp, a) = (kp0 + i, a0 + i);
                    // SAFETY: the tap is inside image b (c_in features at
                    // offset a), and the kernel row kp has c_out entries
                    // ([spatial..., 1, c_out]).
                    let (xr, kr) = unsafe {
                        (
                            std::slice::from_raw_parts(xp.add(b * in_image + a * p.c_in), p.c_in),
                            std::slice::from_raw_parts(kp_base.add(kp * c_out), c_out),
                        )
                    };
                    if m == 1 {
                        for ((acc, &xv), &kv) in acc.iter_mut().zip(xr).zip(kr) {
                            *acc = *acc + xv * kv;
                        }
                    } else {
                        for (g, &xv) in xr.iter().enumerate().take(groups) {
                            let (acc, kr) = (&mut acc[g * m..(g + 1) * m], &kr[g * m..(g + 1) * m]);
                            for (acc, &kv) in acc.iter_mut().zip(kr) {
                                *acc = *acc + xv * kv;
                            }
                        }
                    }
                }
            });
            // SAFETY: output row `row` of the canonical output has c_out entries.
            unsafe { std::ptr::copy_nonoverlapping(acc.as_ptr(), op.add(row * c_out), c_out) };
        }
    });
}

fn run_conv<A: bytemuck::Pod + Send + Sync, C: bytemuck::Pod + Send + Sync>(
    p: &ConvPlan,
    x: usize,
    k: usize,
    o: usize,
    gemm: BlockGemm<A, C>,
) {
    let positions = p.positions();
    let kpos = p.kernel_positions();
    let groups = p.feature_groups.max(p.batch_groups);
    let ci = p.ci_group;
    let co_group = p.c_out / groups;
    let cols = kpos * ci;
    if positions == 0 || p.c_out == 0 || p.n_out == 0 {
        return;
    }
    if let Some(classes) = &p.classes {
        for class in classes {
            run_class::<A, C>(p, class, x, k, o, gemm);
        }
        return;
    }
    let in_image: usize = p.in_spatial.iter().product::<usize>() * p.c_in;
    let strides = p.strides();
    // Without groups every image multiplies the same kernel and the output
    // rows of consecutive images are consecutive, so blocks run across
    // images: one GEMM per block of rows rather than at least one per image,
    // which matters when an image has few positions or the window few taps.
    let across_images = groups == 1;
    let (images, rows) = if across_images {
        (1, p.n_out * positions)
    } else {
        (p.n_out, positions)
    };
    let rows_per_block = (BLOCK_ELEMENTS / cols.max(1)).clamp(1, rows);
    // Not zeroed: every tap of every row is written (copied, or zero in
    // padding) before the GEMM reads the block.
    let mut col_buf: Vec<A> = Vec::new();
    let col = spare(&mut col_buf, rows_per_block * cols);
    let image_bytes = in_image * std::mem::size_of::<A>();
    for b in 0..images {
        for grp in 0..groups {
            // Which input image and features this (image, group) reads.
            let (image, feature0) = if p.batch_groups > 1 {
                (grp * p.n_out + b, 0)
            } else {
                (b, grp * ci)
            };
            let mut p0 = 0;
            while p0 < rows {
                let p1 = (p0 + rows_per_block).min(rows);
                let col_addr = col as usize;
                if let Some(per_task) = 4096usize.checked_div(cols) {
                    parallel_for(p1 - p0, per_task.max(1), |s, e| {
                        let col = col_addr as *mut A;
                        let mut walk = TapWalk::default();
                        // Consecutive taps read consecutive input features
                        // when a tap reads all of them.
                        let whole_taps = ci == p.c_in;
                        for r in s..e {
                            let (img, pos) = if across_images {
                                ((p0 + r) / positions, (p0 + r) % positions)
                            } else {
                                (image, p0 + r)
                            };
                            let xi = (x + img * image_bytes) as *const A;
                            p.for_each_tap_run(&strides, &mut walk, pos, |kp, len, at| {
                                // SAFETY: row r of the block, columns of kernel
                                // positions kp..kp + len; the input offsets are
                                // inside the image.
                                unsafe {
                                    let dst = col.add(r * cols + kp * ci);
                                    match at {
                                        Some(a) if whole_taps => {
                                            copy_short(xi.add(a * p.c_in + feature0), dst, len * ci)
                                        }
                                        Some(a) => {
                                            for i in 0..len {
                                                copy_short(
                                                    xi.add((a + i) * p.c_in + feature0),
                                                    dst.add(i * ci),
                                                    ci,
                                                );
                                            }
                                        }
                                        None => std::ptr::write_bytes(dst, 0, len * ci),
                                    }
                                }
                            });
                        }
                    });
                }
                // Output rows p0..p1 of image b, columns of group grp.
                let out_block =
                    (o as *mut C).wrapping_add((b * positions + p0) * p.c_out + grp * co_group);
                if cols == 0 {
                    for r in 0..(p1 - p0) {
                        // SAFETY: row r of the output block, the group's columns.
                        unsafe { std::ptr::write_bytes(out_block.add(r * p.c_out), 0, co_group) };
                    }
                } else {
                    // SAFETY: the block (rows × cols, written whole above),
                    // the kernel's group columns (cols × co_group, row stride
                    // c_out) and the output block (row stride c_out) are
                    // valid and disjoint.
                    unsafe {
                        gemm(
                            p1 - p0,
                            cols,
                            co_group,
                            Strided {
                                ptr: col.cast_const(),
                                rs: cols as isize,
                                cs: 1,
                            },
                            Strided {
                                ptr: (k as *const A).add(grp * co_group),
                                rs: p.c_out as isize,
                                cs: 1,
                            },
                            StridedMut {
                                ptr: out_block,
                                rs: p.c_out as isize,
                                cs: 1,
                            },
                        )
                    };
                }
                p0 = p1;
            }
        }
    }
}

/// A pointer to room for `n` elements in `buf`'s spare capacity (growing it,
/// not initialising it): the caller writes each element before reading it,
/// through the pointer only (no reference to the uninitialised memory is
/// ever made).
fn spare<T>(buf: &mut Vec<T>, n: usize) -> *mut T {
    buf.clear();
    buf.reserve(n);
    buf.as_mut_ptr()
}

/// The positions of one [`TapClass`] (no groups): im2col over the class's
/// real taps only, the GEMM against the kernel's rows for them, and the
/// product's rows scattered to the positions' output rows.
fn run_class<A: bytemuck::Pod + Send + Sync, C: bytemuck::Pod + Send + Sync>(
    p: &ConvPlan,
    class: &TapClass,
    x: usize,
    k: usize,
    o: usize,
    gemm: BlockGemm<A, C>,
) {
    let (ci, c_out, nd) = (p.c_in, p.c_out, p.in_spatial.len());
    let positions = p.positions();
    let class_positions = class.positions.len();
    let rows = p.n_out * class_positions;
    let taps = class.kernel_positions.len();
    let cols = taps * ci;
    if rows == 0 {
        return;
    }
    let out = o as *mut C;
    if cols == 0 {
        for r in 0..rows {
            let (img, pos) = (r / class_positions, class.positions[r % class_positions]);
            // SAFETY: output row (img, pos) has c_out entries.
            unsafe { std::ptr::write_bytes(out.add((img * positions + pos) * c_out), 0, c_out) };
        }
        return;
    }
    // The kernel's rows for the class's taps: [taps × ci, c_out].
    let mut kernel: Vec<A> = Vec::with_capacity(cols * c_out);
    for &kp in &class.kernel_positions {
        // SAFETY: kernel position kp's rows ([spatial..., ci, c_out]).
        kernel.extend_from_slice(unsafe {
            std::slice::from_raw_parts((k as *const A).add(kp * ci * c_out), ci * c_out)
        });
    }
    let strides = p.strides();
    let k_coords: Vec<Vec<usize>> = class
        .kernel_positions
        .iter()
        .map(|&kp| {
            let mut rest = kp;
            let mut c = vec![0usize; nd];
            for d in (0..nd).rev() {
                c[d] = rest % p.k_spatial[d];
                rest /= p.k_spatial[d];
            }
            c
        })
        .collect();
    let in_image: usize = p.in_spatial.iter().product::<usize>() * ci;
    // Each task takes a range of the class's rows and runs them in chunks
    // that stay in its own cache: the chunk's im2col rows, their product
    // (one thread's GEMM; with few rows it reads the class kernel in place),
    // then the product rows scattered to their output positions. One
    // parallel pass per class, where whole-class blocks needed three with a
    // barrier after each and sent the block through memory between them.
    let serial_rows = (super::gemm::PARALLEL_MIN_MACS - 1) / (cols * c_out).max(1);
    let chunk = (CLASS_CHUNK_ELEMENTS / cols)
        .min(serial_rows)
        .clamp(1, rows);
    let per_task = chunk.max((TASK_MACS / (cols * c_out).max(1)).max(1));
    let kernel_addr = kernel.as_ptr() as usize;
    parallel_for(rows, per_task, |s, e| {
        let mut col_buf: Vec<A> = Vec::new();
        let mut product_buf: Vec<C> = Vec::new();
        let col = spare(&mut col_buf, chunk * cols);
        let product = spare(&mut product_buf, chunk * c_out);
        let mut oc = vec![0usize; nd];
        let mut r0 = s;
        while r0 < e {
            let r1 = (r0 + chunk).min(e);
            for r in r0..r1 {
                let (img, pos) = (r / class_positions, class.positions[r % class_positions]);
                for (d, c) in oc.iter_mut().enumerate() {
                    *c = (pos / strides.output[d]) % p.out_spatial[d];
                }
                let xi = (x as *const A).wrapping_add(img * in_image);
                let row = col.wrapping_add((r - r0) * cols);
                for (j, kc) in k_coords.iter().enumerate() {
                    let mut at = 0;
                    for d in 0..nd {
                        // Every tap of the class is real (`tap_classes`).
                        at += p.taps[d][oc[d]][kc[d]].unwrap_or(0) * strides.input[d];
                    }
                    // SAFETY: row r - r0 of the chunk, the tap's ci columns;
                    // the tap reads ci features inside image img.
                    unsafe { copy_short(xi.add(at * ci), row.add(j * ci), ci) };
                }
            }
            // SAFETY: the chunk (rows × cols, every element written just
            // above: each of the class's taps copies its ci columns), the
            // class kernel (cols × c_out) and the product chunk (rows ×
            // c_out, which the GEMM writes whole) are valid and disjoint.
            unsafe {
                gemm(
                    r1 - r0,
                    cols,
                    c_out,
                    Strided {
                        ptr: col.cast_const(),
                        rs: cols as isize,
                        cs: 1,
                    },
                    Strided {
                        ptr: kernel_addr as *const A,
                        rs: c_out as isize,
                        cs: 1,
                    },
                    StridedMut {
                        ptr: product,
                        rs: c_out as isize,
                        cs: 1,
                    },
                )
            };
            for r in r0..r1 {
                let (img, pos) = (r / class_positions, class.positions[r % class_positions]);
                // SAFETY: product row r - r0 and output row (img, pos), c_out
                // each; the class's positions are distinct, and the tasks'
                // row ranges disjoint.
                unsafe {
                    std::ptr::copy_nonoverlapping(
                        product.add((r - r0) * c_out).cast_const(),
                        (o as *mut C).add((img * positions + pos) * c_out),
                        c_out,
                    )
                };
            }
            r0 = r1;
        }
    });
}
