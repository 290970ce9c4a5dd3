//! `dot` with general dimension numbers, and the multiply-accumulate element
//! model it shares with `convolution`.
//!
//! Semantics, as XLA's evaluator and CPU backend:
//! * Operands whose element type differs from the result's are first converted
//!   to the result type (`s8 x s8 -> s32`, `bf16 x bf16 -> f32`, ...).
//! * Each output element starts at 0 and adds `lhs * rhs` over the contracting
//!   positions in row-major order of the contracting dimensions *as listed* in
//!   the dimension numbers (the last listed varies fastest).
//! * `f16`/`bf16` results accumulate in `f32` and round once at the end (XLA
//!   CPU upcasts these dots to `f32`; checked against it on a 4096-long f16
//!   dot). Integers wrap. `pred` is an OR of ANDs. Complex numbers use the
//!   textbook product.
//! * Result dimensions: batch dimensions, then the lhs free dimensions, then
//!   the rhs free dimensions, each in operand order.
//!
//! The operands are transposed to `[batch, free, contracting]` and
//! `[batch, contracting, free]`, and each output row is accumulated as a
//! vector over a tile of columns: `acc[j] += a[i, k] * b[k, j]` for `k` in
//! order. Every output element still sees its products added in `k` order —
//! the same sum as the per-element loop — while the inner loop runs over
//! contiguous memory.

use super::util::{self, invalid, operand_array};
use super::CallComputation;
use half::{bf16, f16};
use hlo_ir::Op;
use hlo_ir::{ArrayShape, ElementType, HloInstruction, Literal, Result};
use hlo_semantics as semantics;
use num_complex::{Complex32, Complex64};
use std::borrow::Cow;

/// A type products are accumulated in: `acc + a * b` with the element
/// semantics XLA gives that type.
pub(crate) trait Mac: Copy + Default + bytemuck::Pod {
    fn mac(acc: Self, a: Self, b: Self) -> Self;
}

macro_rules! float_mac {
    ($($t:ty),*) => {$(
        impl Mac for $t {
            #[inline(always)]
            fn mac(acc: Self, a: Self, b: Self) -> Self {
                acc + a * b
            }
        }
    )*};
}
float_mac!(f32, f64, Complex32, Complex64);

macro_rules! int_mac {
    ($($t:ty),*) => {$(
        impl Mac for $t {
            #[inline(always)]
            fn mac(acc: Self, a: Self, b: Self) -> Self {
                acc.wrapping_add(a.wrapping_mul(b))
            }
        }
    )*};
}
int_mac!(i8, i16, i32, i64, u8, u16, u32, u64);

/// `literal` converted to `ty` (a no-op when it already has that type).
pub(crate) fn converted<'a>(literal: &'a Literal, ty: ElementType) -> Result<Cow<'a, Literal>> {
    if literal.element_type() == Some(ty) {
        Ok(Cow::Borrowed(literal))
    } else {
        Ok(Cow::Owned(semantics::convert(literal, ty)?))
    }
}

/// A computation over two operands' elements in an accumulation type.
pub(crate) trait MacKernel {
    fn compute<T: Mac>(&self, lhs: &[T], rhs: &[T]) -> Vec<T>;
}

/// Runs `kernel` on operands already converted to `shape`'s element type, in
/// that type's accumulation type (f32 for f16/bf16, 0/1 integers for pred),
/// and builds the result literal from what it returns.
pub(crate) fn run_mac_kernel<K: MacKernel>(
    kernel: &K,
    lhs: &Literal,
    rhs: &Literal,
    shape: &ArrayShape,
) -> Result<Literal> {
    let ty = shape.element_type;
    macro_rules! native {
        ($t:ty) => {{
            let out = kernel.compute::<$t>(lhs.data::<$t>()?, rhs.data::<$t>()?);
            util::literal_from_values(shape, &out)
        }};
    }
    match ty {
        ElementType::F16 => {
            let widen = |l: &Literal| -> Result<Vec<f32>> {
                Ok(l.data::<f16>()?.iter().map(|v| v.to_f32()).collect())
            };
            let out = kernel.compute::<f32>(&widen(lhs)?, &widen(rhs)?);
            let out: Vec<f16> = out.into_iter().map(f16::from_f32).collect();
            util::literal_from_values(shape, &out)
        }
        ElementType::BF16 => {
            let widen = |l: &Literal| -> Result<Vec<f32>> {
                Ok(l.data::<bf16>()?.iter().map(|v| v.to_f32()).collect())
            };
            let out = kernel.compute::<f32>(&widen(lhs)?, &widen(rhs)?);
            let out: Vec<bf16> = out.into_iter().map(bf16::from_f32).collect();
            util::literal_from_values(shape, &out)
        }
        ElementType::Pred => {
            let widen = |l: &Literal| -> Result<Vec<i64>> {
                Ok(l.data::<u8>()?.iter().map(|&v| (v != 0) as i64).collect())
            };
            let out = kernel.compute::<i64>(&widen(lhs)?, &widen(rhs)?);
            let out: Vec<u8> = out.into_iter().map(|v| (v != 0) as u8).collect();
            util::literal_from_values(shape, &out)
        }
        ElementType::S8 => native!(i8),
        ElementType::S16 => native!(i16),
        ElementType::S32 => native!(i32),
        ElementType::S64 => native!(i64),
        ElementType::U8 => native!(u8),
        ElementType::U16 => native!(u16),
        ElementType::U32 => native!(u32),
        ElementType::U64 => native!(u64),
        ElementType::F32 => native!(f32),
        ElementType::F64 => native!(f64),
        ElementType::C64 => native!(Complex32),
        ElementType::C128 => native!(Complex64),
        narrow => Err(hlo_ir::Error::unimplemented(format!(
            "dot on {narrow}: narrow types are computed widened (legalize::narrow)"
        ))),
    }
}

/// `[batch, m, k] x [batch, k, n] -> [batch, m, n]`, each output the sum of its
/// products in `k` order starting from zero.
struct BatchMatmul {
    batch: usize,
    m: usize,
    k: usize,
    n: usize,
}

/// Columns accumulated together: a tile of the rhs (`k x TILE`) stays in cache
/// while every lhs row passes over it.
const TILE: usize = 256;

impl MacKernel for BatchMatmul {
    fn compute<T: Mac>(&self, lhs: &[T], rhs: &[T]) -> Vec<T> {
        let (m, k, n) = (self.m, self.k, self.n);
        let mut out = vec![T::default(); self.batch * m * n];
        if n == 0 || m == 0 {
            return out;
        }
        for b in 0..self.batch {
            let l = &lhs[b * m * k..(b + 1) * m * k];
            let r = &rhs[b * k * n..(b + 1) * k * n];
            let o = &mut out[b * m * n..(b + 1) * m * n];
            for j0 in (0..n).step_by(TILE) {
                let w = TILE.min(n - j0);
                let mut i = 0;
                // Four rows at a time share each loaded rhs row segment.
                while i + 4 <= m {
                    let (r0, rest) = o[i * n..(i + 4) * n].split_at_mut(n);
                    let (r1, rest) = rest.split_at_mut(n);
                    let (r2, r3) = rest.split_at_mut(n);
                    let (a0, a1, a2, a3) = (
                        &mut r0[j0..j0 + w],
                        &mut r1[j0..j0 + w],
                        &mut r2[j0..j0 + w],
                        &mut r3[j0..j0 + w],
                    );
                    for kk in 0..k {
                        let row = &r[kk * n + j0..kk * n + j0 + w];
                        let (x0, x1, x2, x3) = (
                            l[i * k + kk],
                            l[(i + 1) * k + kk],
                            l[(i + 2) * k + kk],
                            l[(i + 3) * k + kk],
                        );
                        for j in 0..w {
                            let y = row[j];
                            a0[j] = T::mac(a0[j], x0, y);
                            a1[j] = T::mac(a1[j], x1, y);
                            a2[j] = T::mac(a2[j], x2, y);
                            a3[j] = T::mac(a3[j], x3, y);
                        }
                    }
                    i += 4;
                }
                while i < m {
                    let acc = &mut o[i * n + j0..i * n + j0 + w];
                    for kk in 0..k {
                        let row = &r[kk * n + j0..kk * n + j0 + w];
                        let x = l[i * k + kk];
                        for (a, &y) in acc.iter_mut().zip(row) {
                            *a = T::mac(*a, x, y);
                        }
                    }
                    i += 1;
                }
            }
        }
        out
    }
}

/// Checks that `dims` are distinct dimensions of a rank-`rank` operand.
fn check_distinct(
    instr: &HloInstruction,
    what: &str,
    dims: &[usize],
    rank: usize,
    seen: &mut [bool],
) -> Result<()> {
    for &d in dims {
        if d >= rank || seen[d] {
            return Err(invalid(
                instr,
                format!("{what} {dims:?} repeat a dimension or exceed rank {rank}"),
            ));
        }
        seen[d] = true;
    }
    Ok(())
}

/// The `dot` kernel.
pub fn dot(
    instr: &HloInstruction,
    operands: &[&Literal],
    _calls: &mut dyn CallComputation,
) -> Result<Literal> {
    let Op::Dot { dnums, .. } = &instr.op else {
        return Err(invalid(instr, "not a dot"));
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
    let (lr, rr) = (ls.dims.len(), rs.dims.len());
    if dnums.lhs_batch_dims.len() != dnums.rhs_batch_dims.len()
        || dnums.lhs_contracting_dims.len() != dnums.rhs_contracting_dims.len()
    {
        return Err(invalid(
            instr,
            "lhs and rhs must have as many batch and contracting dimensions as each other",
        ));
    }
    let mut lseen = vec![false; lr];
    let mut rseen = vec![false; rr];
    check_distinct(
        instr,
        "lhs batch/contracting dims",
        &dnums.lhs_batch_dims,
        lr,
        &mut lseen,
    )?;
    check_distinct(
        instr,
        "lhs batch/contracting dims",
        &dnums.lhs_contracting_dims,
        lr,
        &mut lseen,
    )?;
    check_distinct(
        instr,
        "rhs batch/contracting dims",
        &dnums.rhs_batch_dims,
        rr,
        &mut rseen,
    )?;
    check_distinct(
        instr,
        "rhs batch/contracting dims",
        &dnums.rhs_contracting_dims,
        rr,
        &mut rseen,
    )?;
    let pairs_match =
        |a: &[usize], b: &[usize]| a.iter().zip(b).all(|(&x, &y)| ls.dims[x] == rs.dims[y]);
    if !pairs_match(&dnums.lhs_batch_dims, &dnums.rhs_batch_dims)
        || !pairs_match(&dnums.lhs_contracting_dims, &dnums.rhs_contracting_dims)
    {
        return Err(invalid(
            instr,
            format!(
                "batch or contracting dimension sizes differ between {} and {}",
                lhs.shape(),
                rhs.shape()
            ),
        ));
    }
    let lfree: Vec<usize> = (0..lr).filter(|&d| !lseen[d]).collect();
    let rfree: Vec<usize> = (0..rr).filter(|&d| !rseen[d]).collect();
    let size = |dims: &[usize], of: &[usize]| -> usize { of.iter().map(|&d| dims[d]).product() };
    let mut want: Vec<usize> = dnums.lhs_batch_dims.iter().map(|&d| ls.dims[d]).collect();
    want.extend(lfree.iter().map(|&d| ls.dims[d]));
    want.extend(rfree.iter().map(|&d| rs.dims[d]));
    if result.dims != want {
        return Err(invalid(
            instr,
            format!(
                "result shape {} should have dimensions {want:?} for {} x {}",
                instr.shape,
                lhs.shape(),
                rhs.shape()
            ),
        ));
    }
    let ty = result.element_type;
    let lhs = converted(lhs, ty)?;
    let rhs = converted(rhs, ty)?;
    let lperm: Vec<usize> = dnums
        .lhs_batch_dims
        .iter()
        .chain(&lfree)
        .chain(&dnums.lhs_contracting_dims)
        .copied()
        .collect();
    let rperm: Vec<usize> = dnums
        .rhs_batch_dims
        .iter()
        .chain(&dnums.rhs_contracting_dims)
        .chain(&rfree)
        .copied()
        .collect();
    let kernel = BatchMatmul {
        batch: size(&ls.dims, &dnums.lhs_batch_dims),
        m: size(&ls.dims, &lfree),
        k: size(&ls.dims, &dnums.lhs_contracting_dims),
        n: size(&rs.dims, &rfree),
    };
    let lhs_t = permuted(&lhs, &ls.dims, &lperm)?;
    let rhs_t = permuted(&rhs, &rs.dims, &rperm)?;
    run_mac_kernel(&kernel, &lhs_t, &rhs_t, result)
}

/// `literal` with its dimensions reordered by `perm` (a copy only when needed).
pub(crate) fn permuted<'a>(
    literal: &'a Literal,
    dims: &[usize],
    perm: &[usize],
) -> Result<Cow<'a, Literal>> {
    if perm.iter().enumerate().all(|(i, &p)| i == p) {
        return Ok(Cow::Borrowed(literal));
    }
    let ty = literal
        .element_type()
        .ok_or_else(|| hlo_ir::Error::internal("permuting a non-array"))?;
    let new_dims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let bytes = literal.bytes()?;
    let out: Vec<u8> = match ty.byte_size() {
        1 => util::permute(bytes, dims, perm),
        2 => bytemuck::cast_slice(&util::permute(
            bytemuck::cast_slice::<u8, u16>(bytes),
            dims,
            perm,
        ))
        .to_vec(),
        4 => bytemuck::cast_slice(&util::permute(
            bytemuck::cast_slice::<u8, u32>(bytes),
            dims,
            perm,
        ))
        .to_vec(),
        8 => bytemuck::cast_slice(&util::permute(
            bytemuck::cast_slice::<u8, u64>(bytes),
            dims,
            perm,
        ))
        .to_vec(),
        _ => bytemuck::cast_slice(&util::permute(
            bytemuck::cast_slice::<u8, [u64; 2]>(bytes),
            dims,
            perm,
        ))
        .to_vec(),
    };
    Ok(Cow::Owned(Literal::from_bytes(
        hlo_ir::Shape::array(ty, new_dims),
        &out,
    )?))
}
