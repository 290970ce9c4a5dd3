//! `dot` with any batch and contracting dimensions, as batched GEMMs.
//!
//! The result is `[batch..., lhs free..., rhs free...]`, so each batch is one
//! row-major `M×N` block of `C = A·B` with `A` the lhs as `M×K` and `B` the rhs
//! as `K×N`. When an operand's free dimensions and contracting dimensions each
//! collapse to one strided dimension (true for every plain matrix, transposed
//! or not), the GEMM reads it in place through row and column strides; otherwise
//! (or when its element type must change) it is first copied into a canonical
//! `[batch, M, K]` / `[batch, K, N]` buffer.
//!
//! Which product runs is decided once, when lowering, by (operand types,
//! result type); each product picks its instruction set at run time:
//! * f32/f64: the Host's own GEMM ([`super::gemm`]: packed, AVX-512 / AVX2
//!   micro-kernels, split over the compute pool, subnormals flushed while
//!   packing; `m = 1` or `n = 1` streams the matrix in place);
//! * integer operands and results of at most 32 bits (pred included), bf16
//!   operands with an f32/bf16 result where AVX512-BF16 exists, and f16: the
//!   packed-word GEMM ([`super::gemm::words`]: i16 pairs through
//!   `vpdpwssd`/`vpmaddwd`, i32 through `vpmulld`, bf16 pairs through
//!   `vdpbf16ps`), exact for integers;
//! * c64/c128: matrix-vector products streamed in place, the rest through
//!   the `matrixmultiply` crate;
//! * f16 operands: the packed-word GEMM's f32 kind, converted while
//!   packing;
//! * f16 or bf16 matrix-vector products (`m = 1` or `n = 1`, AVX-512F):
//!   the matrix streamed in place and widened in registers
//!   ([`super::gemm::gemv16`]), ahead of both kinds above;
//! * bf16 without AVX512-BF16: converted to f32, the f32 GEMM, rounded
//!   once; 64-bit integer results: a plain wrapping loop.
//!
//! Many small batches run in parallel on the compute pool.

use super::denormal::MaybeFlushable;
use super::gemm::gemv16;
use super::gemm::narrow::LhsRun;
use super::gemm::words::{self, WordKind, WordSource};
use super::gemm::{Strided, StridedMut};
use super::strided::{unflatten, StridedCopy};
use super::types::Int;
use crate::elementwise_ops::{self as ops, Arg, Kernel};
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, BufferSlice, ExecuteContext, Thunk};
use crate::with_int;
use num_complex::{Complex32, Complex64};
use platform_api::hlo::{InstrId, Op};
use platform_api::{ArrayShape, ElementType, Error, Result};

/// The Host's own GEMM ([`super::gemm`]) as a [`GemmFn`] (`C = A·B`,
/// overwriting `C`). It flushes subnormal operands while packing, as XLA
/// CPU's FTZ/DAZ mode does.
///
/// # Safety
/// The strided matrices must be valid for their extents; `c` must not
/// overlap `a` or `b`.
pub(crate) unsafe fn own_gemm<T: super::gemm::Element>(
    m: usize,
    k: usize,
    n: usize,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
) {
    // SAFETY: forwarded from the caller.
    unsafe { super::gemm::gemm(m, n, k, a, b, c, super::gemm::Options::default()) }
}

/// The own GEMM as a [`SegmentedFn`]: a product with a few columns is
/// one pass of row dot products over all the runs
/// ([`super::gemm::narrow`]); a wider one adds each run's product into `C`.
///
/// # Safety
/// As [`SegmentedFn`].
pub(crate) unsafe fn own_segmented<T: super::gemm::Element>(
    m: usize,
    n: usize,
    runs: &[LhsRun<T>],
    b: Strided<T>,
    c: StridedMut<T>,
) {
    use super::gemm::narrow;
    if narrow::applies(n) && !super::gemm::generic_only() {
        // SAFETY: forwarded from the caller, who flushed the lhs.
        unsafe { narrow::narrow(m, n, runs, b, c, false, true, true, None) };
        return;
    }
    let mut k0 = 0;
    for (i, run) in runs.iter().enumerate() {
        let options = super::gemm::Options {
            accumulate: i > 0,
            ..Default::default()
        };
        let a = Strided {
            ptr: run.a,
            rs: run.rs,
            cs: 1,
        };
        let bs = Strided {
            // SAFETY: rows k0.. of B (the caller's contract).
            ptr: unsafe { b.ptr.offset(k0 as isize * b.rs) },
            ..b
        };
        // SAFETY: forwarded from the caller.
        unsafe { super::gemm::gemm(m, n, run.len, a, bs, c, options) };
        k0 += run.len;
    }
}

/// Complex GEMMs as [`GemmFn`]s: matrix-vector products through
/// [`super::gemm::try_gemv_complex`], the rest through `matrixmultiply`
/// (the own GEMM is real only).
macro_rules! complex_gemm {
    ($name:ident, $T:ty, $R:ty, $gemm:path) => {
        /// # Safety
        /// As [`own_gemm`].
        pub(crate) unsafe fn $name(
            m: usize,
            k: usize,
            n: usize,
            a: Strided<$T>,
            b: Strided<$T>,
            c: StridedMut<$T>,
        ) {
            use matrixmultiply::CGemmOption::Standard;
            let real = |v: Strided<$T>| Strided {
                ptr: v.ptr.cast::<$R>(),
                rs: v.rs,
                cs: v.cs,
            };
            let cr = StridedMut {
                ptr: c.ptr.cast::<$R>(),
                rs: c.rs,
                cs: c.cs,
            };
            // SAFETY: a complex number is two reals; forwarded otherwise.
            if unsafe { super::gemm::try_gemv_complex(m, n, k, real(a), real(b), cr, None) } {
                return;
            }
            // SAFETY: a complex number is two reals, the layout
            // `matrixmultiply`'s complex types have.
            unsafe {
                $gemm(
                    Standard,
                    Standard,
                    m,
                    k,
                    n,
                    [1.0, 0.0],
                    a.ptr.cast(),
                    a.rs,
                    a.cs,
                    b.ptr.cast(),
                    b.rs,
                    b.cs,
                    [0.0, 0.0],
                    c.ptr.cast(),
                    c.rs,
                    c.cs,
                )
            }
        }
    };
}
complex_gemm!(gemm_c64, Complex32, f32, matrixmultiply::cgemm);
complex_gemm!(gemm_c128, Complex64, f64, matrixmultiply::zgemm);

/// Integer GEMM with wrapping arithmetic.
///
/// # Safety
/// As [`own_gemm`].
pub(crate) unsafe fn int_gemm<T: Int>(
    m: usize,
    k: usize,
    n: usize,
    a: Strided<T>,
    b: Strided<T>,
    c: StridedMut<T>,
) {
    let (
        Strided {
            ptr: a,
            rs: rsa,
            cs: csa,
        },
        Strided {
            ptr: b,
            rs: rsb,
            cs: csb,
        },
    ) = (a, b);
    let StridedMut {
        ptr: c,
        rs: rsc,
        cs: csc,
    } = c;
    for i in 0..m as isize {
        for j in 0..n as isize {
            let mut acc = T::zeroed();
            for p in 0..k as isize {
                // SAFETY: forwarded from the caller.
                unsafe {
                    acc = acc.wadd(
                        a.offset(i * rsa + p * csa)
                            .read()
                            .wmul(b.offset(p * rsb + j * csb).read()),
                    )
                };
            }
            // SAFETY: as above.
            unsafe { c.offset(i * rsc + j * csc).write(acc) };
        }
    }
}

/// How the GEMM reads one operand.
#[derive(Clone)]
struct OperandView {
    slice: BufferSlice,
    /// Element offset of each batch.
    batch_offsets: Vec<usize>,
    /// Row and column strides of the `rows×cols` matrix of a batch.
    rs: isize,
    cs: isize,
    /// Set when the operand must first be copied (and converted) into a
    /// canonical row-major buffer of the compute type.
    canonicalize: Option<(StridedCopy, Option<Kernel>)>,
    elements: usize,
}

/// If `dims` (in this order) can be walked as one dimension, its stride.
pub(crate) fn merged_stride(
    dims: &[usize],
    shape: &ArrayShape,
    strides: &[usize],
) -> Option<isize> {
    let live: Vec<usize> = dims
        .iter()
        .copied()
        .filter(|&d| shape.dims[d] != 1)
        .collect();
    for w in live.windows(2) {
        if strides[w[0]] != strides[w[1]] * shape.dims[w[1]] {
            return None;
        }
    }
    Some(live.last().map(|&d| strides[d] as isize).unwrap_or(1))
}

/// The element offset of each batch of an array of shape `shape` (row-major
/// `strides`) whose batch dimensions are `batch`, batches in row-major order.
pub(crate) fn batch_offsets(shape: &ArrayShape, batch: &[usize], strides: &[usize]) -> Vec<usize> {
    let sizes: Vec<usize> = batch.iter().map(|&d| shape.dims[d]).collect();
    (0..sizes.iter().product())
        .map(|b| {
            unflatten(b, &sizes)
                .iter()
                .zip(batch)
                .map(|(i, &d)| i * strides[d])
                .sum()
        })
        .collect()
}

/// Plans an operand seen as `[batch, rows, cols]` from the given dimension lists.
fn plan_operand(
    slice: BufferSlice,
    shape: &ArrayShape,
    batch: &[usize],
    rows: &[usize],
    cols: &[usize],
    compute: ElementType,
) -> Result<OperandView> {
    let strides = platform_api::shape::row_major_strides(&shape.dims);
    let nb: usize = batch.iter().map(|&d| shape.dims[d]).product();
    let r: usize = rows.iter().map(|&d| shape.dims[d]).product();
    let c: usize = cols.iter().map(|&d| shape.dims[d]).product();
    let direct = (
        merged_stride(rows, shape, &strides),
        merged_stride(cols, shape, &strides),
    );
    // Read in place only when each batch's matrix is dense (row- or
    // column-major with no gaps): a matrix spread over memory with large
    // strides costs the GEMM's packing far more than one compact copy.
    let dense = |rs: isize, cs: isize| {
        (cs == 1 && (rs == c as isize || r <= 1)) || (rs == 1 && (cs == r as isize || c <= 1))
    };
    if let (Some(rs), Some(cs), true) = (direct.0, direct.1, shape.element_type == compute) {
        if !dense(rs, cs) {
            return plan_canonical(slice, shape, batch, rows, cols, compute, &strides, nb, r, c);
        }
        return Ok(OperandView {
            slice,
            batch_offsets: batch_offsets(shape, batch, &strides),
            rs,
            cs,
            canonicalize: None,
            elements: shape.element_count(),
        });
    }
    plan_canonical(slice, shape, batch, rows, cols, compute, &strides, nb, r, c)
}

/// A view that first copies the operand into a row-major `[batch, rows, cols]`
/// buffer of the compute type.
#[allow(clippy::too_many_arguments)]
fn plan_canonical(
    slice: BufferSlice,
    shape: &ArrayShape,
    batch: &[usize],
    rows: &[usize],
    cols: &[usize],
    compute: ElementType,
    strides: &[usize],
    nb: usize,
    r: usize,
    c: usize,
) -> Result<OperandView> {
    let order: Vec<usize> = batch.iter().chain(rows).chain(cols).copied().collect();
    let dims: Vec<usize> = order.iter().map(|&d| shape.dims[d]).collect();
    let src_strides: Vec<isize> = order.iter().map(|&d| strides[d] as isize).collect();
    let copy = StridedCopy::new(
        shape.element_type.byte_size(),
        &dims,
        &src_strides,
        &StridedCopy::row_major(&dims),
    );
    let convert = if shape.element_type != compute {
        Some(ops::convert(shape.element_type, compute)?)
    } else {
        None
    };
    Ok(OperandView {
        slice,
        batch_offsets: (0..nb).map(|b| b * r * c).collect(),
        rs: c as isize,
        cs: 1,
        canonicalize: Some((copy, convert)),
        elements: shape.element_count(),
    })
}

impl OperandView {
    /// The operand's base address for the GEMM, copying into `buffer` first
    /// when the view needs a canonical copy, or when the operand holds
    /// subnormals (then flushed to zero, see [`super::denormal`]).
    fn base<T: MaybeFlushable>(
        &self,
        ctx: &ExecuteContext<'_>,
        in_width: usize,
        buffer: &mut Vec<u64>,
        gemm_flushes: bool,
    ) -> *const u8 {
        let src = ctx.ptr(self.slice);
        let n = self.elements;
        let Some((copy, convert)) = &self.canonicalize else {
            if !T::FLOAT || gemm_flushes {
                return src;
            }
            // SAFETY: a direct view has the compute type: `n` elements of T.
            let data = unsafe { std::slice::from_raw_parts(src.cast::<T>(), n) };
            if !T::any_subnormal(data) {
                return src;
            }
            buffer.clear();
            buffer.resize((n * std::mem::size_of::<T>()).div_ceil(8), 0);
            let copy: &mut [T] = &mut bytemuck::cast_slice_mut::<u64, T>(buffer)[..n];
            copy.copy_from_slice(data);
            T::flush(copy);
            return buffer.as_ptr().cast();
        };
        let staged_bytes = n * in_width;
        let final_bytes = n * std::mem::size_of::<T>();
        buffer.clear();
        buffer.resize((staged_bytes + final_bytes).div_ceil(8) + 2, 0);
        let base = buffer.as_mut_ptr().cast::<u8>();
        // SAFETY: the buffer holds the staged copy followed (8-byte aligned) by
        // the converted one; the copy reads exactly the operand.
        let data = unsafe {
            copy.run(src, base);
            match convert {
                None => base,
                Some(k) => {
                    let dst = base.add(staged_bytes.next_multiple_of(8));
                    k.call(&[Arg::Ptr(base.cast_const())], dst, n);
                    dst
                }
            }
        };
        if T::FLOAT && !gemm_flushes {
            // SAFETY: `data` holds the `n` canonical elements, owned here.
            let vals = unsafe { std::slice::from_raw_parts_mut(data.cast::<T>(), n) };
            if T::any_subnormal(vals) {
                T::flush(vals);
            }
        }
        data
    }
}

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let Op::Dot { dnums, .. } = &instr.op else {
        return Err(Error::internal("not a dot"));
    };
    let lhs = ctx.operand_array(instr, 0)?;
    let rhs = ctx.operand_array(instr, 1)?;
    let result = ctx.result_array(instr)?;
    let bad = |why: String| Error::invalid_argument(format!("dot %{}: {why}", instr.name));
    if dnums.lhs_batch_dims.len() != dnums.rhs_batch_dims.len()
        || dnums.lhs_contracting_dims.len() != dnums.rhs_contracting_dims.len()
    {
        return Err(bad(
            "batch or contracting dimension lists differ in length".into()
        ));
    }
    let all_l: Vec<usize> = dnums
        .lhs_batch_dims
        .iter()
        .chain(&dnums.lhs_contracting_dims)
        .copied()
        .collect();
    let all_r: Vec<usize> = dnums
        .rhs_batch_dims
        .iter()
        .chain(&dnums.rhs_contracting_dims)
        .copied()
        .collect();
    if all_l.iter().any(|&d| d >= lhs.rank()) || all_r.iter().any(|&d| d >= rhs.rank()) {
        return Err(bad("dimension number out of range".into()));
    }
    for (a, b) in all_l.iter().zip(&all_r) {
        if lhs.dims[*a] != rhs.dims[*b] {
            return Err(bad(format!(
                "lhs dimension {a} ({}) and rhs dimension {b} ({}) must match",
                lhs.dims[*a], rhs.dims[*b]
            )));
        }
    }
    let lhs_free: Vec<usize> = (0..lhs.rank()).filter(|d| !all_l.contains(d)).collect();
    let rhs_free: Vec<usize> = (0..rhs.rank()).filter(|d| !all_r.contains(d)).collect();
    let want: Vec<usize> = dnums
        .lhs_batch_dims
        .iter()
        .map(|&d| lhs.dims[d])
        .chain(lhs_free.iter().map(|&d| lhs.dims[d]))
        .chain(rhs_free.iter().map(|&d| rhs.dims[d]))
        .collect();
    if want != result.dims {
        return Err(bad(format!(
            "result {result} should have dimensions {want:?}"
        )));
    }
    let nb: usize = dnums.lhs_batch_dims.iter().map(|&d| lhs.dims[d]).product();
    let m: usize = lhs_free.iter().map(|&d| lhs.dims[d]).product();
    let k: usize = dnums
        .lhs_contracting_dims
        .iter()
        .map(|&d| lhs.dims[d])
        .product();
    let n: usize = rhs_free.iter().map(|&d| rhs.dims[d]).product();
    let out_ty = result.element_type;
    // Both operands as `[batch, M, K]` and `[batch, K, N]` views of `source`
    // elements.
    let plan_both = |source: ElementType| -> Result<(OperandView, OperandView)> {
        let a = plan_operand(
            ctx.operand_slice(instr, 0)?,
            lhs,
            &dnums.lhs_batch_dims,
            &lhs_free,
            &dnums.lhs_contracting_dims,
            source,
        )?;
        let b = plan_operand(
            ctx.operand_slice(instr, 1)?,
            rhs,
            &dnums.rhs_batch_dims,
            &dnums.rhs_contracting_dims,
            &rhs_free,
            source,
        )?;
        Ok((a, b))
    };
    let half = half_gemv(lhs.element_type, rhs.element_type, out_ty, m, n);
    let half = match half {
        Some(half) => {
            let (a, b) = plan_both(lhs.element_type)?;
            // The kernel needs the matrix to have a unit stride. A copied
            // operand is row-major; a view read in place with neither stride
            // 1 goes to the packed products instead.
            let mat = if n == 1 { &a } else { &b };
            let unit = mat.canonicalize.is_some() || mat.rs == 1 || mat.cs == 1;
            unit.then_some((half, a, b))
        }
        None => None,
    };
    if let Some((half, a, b)) = half {
        let finish = if out_ty != ElementType::F32 {
            Some(ops::convert(ElementType::F32, out_ty)?)
        } else {
            None
        };
        let shape = GemmShape { nb, m, k, n };
        let out = ctx.result_slice(id)?;
        return Ok(gemv16_thunk(
            instr.name.clone(),
            half,
            shape,
            a,
            b,
            out,
            finish,
        ));
    }
    if let Some((kind, source)) = word_kind(lhs.element_type, rhs.element_type, out_ty, m, n) {
        let (a, b) = plan_both(source)?;
        let acc_ty = if matches!(kind, WordKind::Bf16Pairs | WordKind::F32) {
            ElementType::F32
        } else {
            ElementType::S32
        };
        let finish = if acc_ty != out_ty {
            Some(ops::convert(acc_ty, out_ty)?)
        } else {
            None
        };
        let shape = GemmShape { nb, m, k, n };
        let out = ctx.result_slice(id)?;
        let name = instr.name.clone();
        let (lt, rt) = (lhs.element_type, rhs.element_type);
        let make = match source {
            ElementType::S8 => word_thunk::<i8>,
            ElementType::U8 | ElementType::Pred => word_thunk::<u8>,
            ElementType::S16 => word_thunk::<i16>,
            ElementType::S32 => word_thunk::<i32>,
            ElementType::F16 => word_thunk::<half::f16>,
            _ => word_thunk::<half::bf16>,
        };
        return Ok(make(
            name,
            shape,
            a,
            b,
            out,
            (lt.byte_size(), rt.byte_size()),
            finish,
        ));
    }
    let compute = match out_ty {
        ElementType::F16 | ElementType::BF16 => ElementType::F32,
        // XLA's pred dot is an or of ands: an s32 sum of 0/1 products, then
        // "nonzero" by the final convert (exact below 2^31 terms).
        ElementType::Pred => ElementType::S32,
        t => t,
    };
    let (a, b) = plan_both(compute)?;
    let out = ctx.result_slice(id)?;
    let finish = if compute != out_ty {
        Some(ops::convert(compute, out_ty)?)
    } else {
        None
    };
    let shape = GemmShape { nb, m, k, n };
    let widths = (
        lhs.element_type.byte_size(),
        rhs.element_type.byte_size(),
        compute.byte_size(),
    );
    let name = instr.name.clone();
    macro_rules! make {
        ($T:ty, $gemm:expr) => {
            Ok(gemm_thunk::<$T>(
                name, shape, a, b, out, widths, finish, $gemm,
            ))
        };
    }
    match compute {
        ElementType::F32 => make!(f32, GemmKernel::<f32>::own()),
        ElementType::F64 => make!(f64, GemmKernel::<f64>::own()),
        ElementType::C64 => make!(Complex32, GemmKernel::plain(gemm_c64)),
        ElementType::C128 => make!(Complex64, GemmKernel::plain(gemm_c128)),
        t => {
            with_int!(t, T => make!(T, GemmKernel::plain(int_gemm::<T>)), _ => Err(Error::unimplemented(format!(
                "dot %{} with {t} results",
                instr.name
            ))))
        }
    }
}

/// The packed-word product ([`super::gemm::words`]) that computes a dot of
/// these operand and result types on this processor, if any: integer
/// operands and results of at most 32 bits (pred included) exactly, through
/// wrapping i32 sums (any narrower result is their truncation); bf16
/// operands with an f32 or bf16 result where `vdpbf16ps` exists; f16
/// operands with an f32 or f16 result (f32 multiply-adds, converted while
/// packing).
pub(crate) fn word_kind(
    lhs: ElementType,
    rhs: ElementType,
    out: ElementType,
    m: usize,
    n: usize,
) -> Option<(WordKind, ElementType)> {
    use ElementType::*;
    let storage = |t| if t == Pred { U8 } else { t };
    let narrow = |t| matches!(t, S8 | U8 | S16 | Pred);
    let int = |t| narrow(t) || matches!(t, U16 | S32 | U32);
    let (kind, source) = if int(lhs) && int(rhs) && int(out) {
        if narrow(lhs) && storage(lhs) == storage(rhs) {
            (WordKind::I16Pairs, storage(lhs))
        } else {
            // Other operands are first converted to s32 (congruent modulo
            // 2^32, which is all a result of 32 bits or fewer keeps).
            (WordKind::I32, S32)
        }
    } else if lhs == BF16 && rhs == BF16 && matches!(out, F32 | BF16) {
        (WordKind::Bf16Pairs, BF16)
    } else if lhs == F16 && rhs == F16 && matches!(out, F32 | F16) && m > 1 && n > 1 {
        // (A matrix-vector f16 product converts once and streams through
        // the f32 matrix-vector kernel instead.)
        (WordKind::F32, F16)
    } else {
        return None;
    };
    (!super::gemm::generic_only() && words::supported(kind, words::word_level(None)))
        .then_some((kind, source))
}

/// The 16-bit matrix-vector product ([`gemv16`]) that computes a dot of
/// these types and this shape on this processor, if any: f16 or bf16
/// operands (both the same) with an f32 or same-type result, one side a
/// vector (`m = 1` or `n = 1`; both, a dot of two vectors, is one row).
fn half_gemv(
    lhs: ElementType,
    rhs: ElementType,
    out: ElementType,
    m: usize,
    n: usize,
) -> Option<gemv16::Half> {
    let half = match (lhs, rhs) {
        (ElementType::F16, ElementType::F16) => gemv16::Half::F16,
        (ElementType::BF16, ElementType::BF16) => gemv16::Half::Bf16,
        _ => return None,
    };
    let vector = m == 1 || n == 1;
    (vector && (out == ElementType::F32 || out == lhs) && gemv16::supported()).then_some(half)
}

/// A matrix-vector dot through [`gemv16::gemv16`]: f32 sums, written into
/// the result when it is f32, else into a buffer rounded once at the end.
fn gemv16_thunk(
    name: String,
    half: gemv16::Half,
    s: GemmShape,
    a: OperandView,
    b: OperandView,
    out: BufferSlice,
    finish: Option<Kernel>,
) -> Box<dyn Thunk> {
    thunk(name, "dot", move |ctx| {
        let mut a_buf = Vec::new();
        let mut b_buf = Vec::new();
        // No subnormal scan: the kernel flushes bf16 subnormals itself.
        let pa = a.base::<u16>(ctx, 2, &mut a_buf, true) as usize;
        let pb = b.base::<u16>(ctx, 2, &mut b_buf, true) as usize;
        let total = s.nb * s.m * s.n;
        let mut c_buf = Vec::new();
        let pc = sums_target(ctx, out, total, finish.is_some(), &mut c_buf);
        let parallel = !(s.small() && s.nb > 1);
        let refused = std::sync::atomic::AtomicBool::new(false);
        let one = |batch: usize| {
            let (pa, pb) = (pa as *const u16, pb as *const u16);
            // SAFETY: the views stay inside their operands (or staging
            // buffers); batch `batch` of C is its own block of `m·n` f32.
            unsafe {
                let (a0, b0) = (
                    pa.add(a.batch_offsets[batch]),
                    pb.add(b.batch_offsets[batch]),
                );
                let y = (pc as *mut f32).add(batch * s.m * s.n);
                // y = A·b (n = 1) or y = Bᵀ·a (m = 1).
                let ran = if s.n == 1 {
                    let mat = Strided {
                        ptr: a0,
                        rs: a.rs,
                        cs: a.cs,
                    };
                    gemv16::gemv16(half, s.m, s.k, mat, b0, b.rs, y, 1, parallel)
                } else {
                    let mat = Strided {
                        ptr: b0,
                        rs: b.cs,
                        cs: b.rs,
                    };
                    gemv16::gemv16(half, s.n, s.k, mat, a0, a.cs, y, 1, parallel)
                };
                if !ran {
                    refused.store(true, std::sync::atomic::Ordering::Relaxed);
                }
            }
        };
        if total > 0 {
            s.for_each_batch(one);
        }
        if refused.load(std::sync::atomic::Ordering::Relaxed) {
            // The level was lowered (`vmath::set_level`) after lowering.
            return Err(Error::internal(
                "the f16/bf16 matrix-vector kernel is no longer available at this \
                 instruction-set level",
            ));
        }
        if let Some(k) = &finish {
            // SAFETY: `pc` holds `total` f32 sums, distinct from the result's
            // `total` elements.
            unsafe { k.call(&[Arg::Ptr(pc as *const u8)], ctx.ptr(out), total) };
        }
        Ok(())
    })
}

/// Where a product's `total` 32-bit sums go: the result itself, or, when
/// they are `converted` afterwards, `buf` (made `total` words long).
fn sums_target(
    ctx: &ExecuteContext<'_>,
    out: BufferSlice,
    total: usize,
    converted: bool,
    buf: &mut Vec<u32>,
) -> usize {
    if converted {
        *buf = vec![0; total];
        buf.as_mut_ptr() as usize
    } else {
        ctx.ptr(out) as usize
    }
}

/// A dot through [`words::word_gemm`]: the GEMM writes 32-bit accumulators
/// (into the result when it is 32 bits wide, else into a buffer converted
/// once at the end).
#[allow(clippy::too_many_arguments)]
fn word_thunk<E: WordSource>(
    name: String,
    s: GemmShape,
    a: OperandView,
    b: OperandView,
    out: BufferSlice,
    (a_width, b_width): (usize, usize),
    finish: Option<Kernel>,
) -> Box<dyn Thunk> {
    thunk(name, "dot", move |ctx| {
        let level = words::word_level(None);
        let mut a_buf = Vec::new();
        let mut b_buf = Vec::new();
        // No subnormal scan: packing flushes bf16 subnormals itself.
        let pa = a.base::<E::Stage>(ctx, a_width, &mut a_buf, true) as usize;
        let pb = b.base::<E::Stage>(ctx, b_width, &mut b_buf, true) as usize;
        let total = s.nb * s.m * s.n;
        let mut c_buf = Vec::new();
        let pc = sums_target(ctx, out, total, finish.is_some(), &mut c_buf);
        if s.k == 0 {
            // SAFETY: `pc` holds `total` words (zero bits: 0 and +0.0).
            unsafe { std::ptr::write_bytes(pc as *mut u32, 0, total) };
        } else if total > 0 {
            let small = s.small();
            let one = |batch: usize| {
                // SAFETY: the views stay inside their operands (or staging
                // buffers); batch `batch` of C is its own M×N block; the
                // kind is supported (checked when lowering, same process).
                unsafe {
                    words::word_gemm::<E>(
                        level,
                        s.m,
                        s.n,
                        s.k,
                        Strided {
                            ptr: (pa as *const E).add(a.batch_offsets[batch]),
                            rs: a.rs,
                            cs: a.cs,
                        },
                        Strided {
                            ptr: (pb as *const E).add(b.batch_offsets[batch]),
                            rs: b.rs,
                            cs: b.cs,
                        },
                        StridedMut {
                            ptr: (pc as *mut u32).add(batch * s.m * s.n),
                            rs: s.n as isize,
                            cs: 1,
                        },
                        !(small && s.nb > 1),
                    )
                }
            };
            s.for_each_batch(one);
        }
        if let Some(k) = &finish {
            // SAFETY: `pc` holds `total` 32-bit accumulators, distinct from
            // the result's `total` elements.
            unsafe { k.call(&[Arg::Ptr(pc as *const u8)], ctx.ptr(out), total) };
        }
        Ok(())
    })
}

#[derive(Clone, Copy, Debug)]
struct GemmShape {
    nb: usize,
    m: usize,
    k: usize,
    n: usize,
}

impl GemmShape {
    /// Whether each product is small enough that many of them should run
    /// side by side on the pool rather than each on the GEMM's own threads.
    fn small(&self) -> bool {
        self.m * self.k + self.k * self.n < 1 << 15
    }

    /// Runs `one(batch)` for every batch: small products in parallel over
    /// the batches, large ones in turn (each threads itself).
    fn for_each_batch(&self, one: impl Fn(usize) + Sync) {
        if self.nb > 1 && self.small() {
            parallel_for(
                self.nb,
                (1 << 16) / (self.m * self.k * self.n).max(1) + 1,
                |from, to| (from..to).for_each(&one),
            );
        } else {
            (0..self.nb).for_each(one);
        }
    }
}

/// A GEMM for one element type and what it does to subnormal operands.
#[derive(Clone, Copy)]
pub(crate) struct GemmKernel<T> {
    pub run: GemmFn<T>,
    /// The GEMM flushes subnormal operands to zero itself (while packing),
    /// so callers need not scan and copy them first (see [`super::denormal`]).
    pub flushes_subnormals: bool,
    /// The same GEMM over a lhs given as runs, where it has that form.
    pub segmented: Option<SegmentedFn<T>>,
}

impl<T> GemmKernel<T> {
    /// A GEMM that uses its operands as they are.
    pub(crate) fn plain(run: GemmFn<T>) -> Self {
        GemmKernel {
            run,
            flushes_subnormals: false,
            segmented: None,
        }
    }
}

impl<T: super::gemm::Element> GemmKernel<T> {
    /// The own GEMM.
    pub(crate) fn own() -> Self {
        GemmKernel {
            run: own_gemm::<T>,
            flushes_subnormals: true,
            segmented: Some(own_segmented::<T>),
        }
    }
}

/// A GEMM entry point: `C = A·B` for `m × k` and `k × n` operands, strides
/// in elements.
pub(crate) type GemmFn<T> = unsafe fn(usize, usize, usize, Strided<T>, Strided<T>, StridedMut<T>);

/// `C = A·B` for an `m × n` result whose lhs comes as runs of columns
/// ([`LhsRun`]; `k` their total length, `B` `k × n`).
///
/// # Safety
/// Every run's rows `0..m` valid for `len` reads and free of subnormal
/// values; `b` and `c` valid for their extents; `c` overlaps neither.
pub(crate) type SegmentedFn<T> = unsafe fn(usize, usize, &[LhsRun<T>], Strided<T>, StridedMut<T>);

#[allow(clippy::too_many_arguments)]
fn gemm_thunk<T: MaybeFlushable + Send + Sync>(
    name: String,
    s: GemmShape,
    a: OperandView,
    b: OperandView,
    out: BufferSlice,
    (a_width, b_width, _): (usize, usize, usize),
    finish: Option<Kernel>,
    gemm: GemmKernel<T>,
) -> Box<dyn Thunk> {
    let gemm_flushes = gemm.flushes_subnormals;
    let gemm = gemm.run;
    thunk(name, "dot", move |ctx| {
        let mut a_buf = Vec::new();
        let mut b_buf = Vec::new();
        let pa = a.base::<T>(ctx, a_width, &mut a_buf, gemm_flushes) as usize;
        let pb = b.base::<T>(ctx, b_width, &mut b_buf, gemm_flushes) as usize;
        let total = s.nb * s.m * s.n;
        // With a final conversion the GEMM writes a compute-type buffer first.
        let mut c_buf: Vec<T> = if finish.is_some() {
            vec![T::zeroed(); total]
        } else {
            Vec::new()
        };
        let pc = if finish.is_some() {
            c_buf.as_mut_ptr() as usize
        } else {
            ctx.ptr(out) as usize
        };
        if s.k == 0 {
            // SAFETY: `pc` holds `total` elements.
            unsafe { std::ptr::write_bytes(pc as *mut T, 0, total) };
        } else if total > 0 {
            let one = |batch: usize| {
                // SAFETY: the views stay inside their operands (or staging
                // buffers); batch `batch` of C is its own M×N block.
                unsafe {
                    gemm(
                        s.m,
                        s.k,
                        s.n,
                        Strided {
                            ptr: (pa as *const T).add(a.batch_offsets[batch]),
                            rs: a.rs,
                            cs: a.cs,
                        },
                        Strided {
                            ptr: (pb as *const T).add(b.batch_offsets[batch]),
                            rs: b.rs,
                            cs: b.cs,
                        },
                        StridedMut {
                            ptr: (pc as *mut T).add(batch * s.m * s.n),
                            rs: s.n as isize,
                            cs: 1,
                        },
                    )
                }
            };
            s.for_each_batch(one);
        }
        if let Some(k) = &finish {
            // SAFETY: `pc` holds `total` compute-type elements, distinct from
            // the result's `total` elements.
            unsafe { k.call(&[Arg::Ptr(pc as *const u8)], ctx.ptr(out), total) };
        }
        Ok(())
    })
}
