//! Elementwise ops: unary, binary, compare, select, clamp, convert,
//! bitcast-convert, reduce-precision.
//!
//! Each thunk holds one typed kernel function from [`scalar_ops`] chosen at
//! compile time, and runs it over contiguous chunks of the flat arrays, in
//! parallel on the compute pool when the array is large. A result may share
//! memory with an operand (buffer assignment's in-place reuse): the kernels read
//! element `i` before writing it, through raw pointers.

use super::scalar_ops;
use super::types::Pred;
use crate::lowering::LowerCtx;
use crate::runtime::pool::parallel_for;
use crate::thunk::{thunk, Thunk};
use crate::{with_float, with_int};
use platform_api::hlo::{InstrId, Op};
use platform_api::{ElementType, Error, Result};
use std::sync::Arc;

/// Elements per parallel task: large enough that a task outweighs its hand-off.
pub const ELEMENTWISE_GRAIN: usize = 1 << 15;

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    let out = ctx.result_slice(id)?;
    let n = result.element_count();
    let out_size = result.element_type.byte_size();
    let name = instr.name.clone();
    let category = instr.opcode().name();
    match &instr.op {
        Op::Unary(_) | Op::Convert | Op::ReducePrecision { .. } => {
            let a_shape = ctx.operand_array(instr, 0)?;
            check_same_count(instr, a_shape.element_count(), n)?;
            let f = match &instr.op {
                Op::Unary(op) => {
                    scalar_ops::unary_fn(*op, a_shape.element_type, result.element_type)
                }
                Op::Convert => scalar_ops::convert_fn(a_shape.element_type, result.element_type),
                Op::ReducePrecision {
                    exponent_bits,
                    mantissa_bits,
                } => scalar_ops::reduce_precision_fn(
                    a_shape.element_type,
                    *exponent_bits,
                    *mantissa_bits,
                ),
                _ => unreachable!("matched above"),
            }
            .map_err(|e| e.context(format_args!("%{name}")))?;
            let a = ctx.operand_slice(instr, 0)?;
            let in_size = a_shape.element_type.byte_size();
            Ok(thunk(name, category, move |ctx| {
                let (pa, po) = (ctx.ptr(a) as usize, ctx.ptr(out) as usize);
                parallel_for(n, ELEMENTWISE_GRAIN, |s, e| {
                    f(
                        (pa + s * in_size) as *const u8,
                        (po + s * out_size) as *mut u8,
                        e - s,
                    )
                });
                Ok(())
            }))
        }
        Op::Binary(_) | Op::Compare { .. } => {
            let a_shape = ctx.operand_array(instr, 0)?;
            let b_shape = ctx.operand_array(instr, 1)?;
            check_same_count(instr, a_shape.element_count(), n)?;
            check_same_count(instr, b_shape.element_count(), n)?;
            let f = match &instr.op {
                Op::Binary(op) => {
                    scalar_ops::binary_fn(*op, a_shape.element_type, result.element_type)
                }
                Op::Compare {
                    direction,
                    compare_type,
                } => scalar_ops::compare_fn(*direction, *compare_type, a_shape.element_type),
                _ => unreachable!("matched above"),
            }
            .map_err(|e| e.context(format_args!("%{name}")))?;
            let (a, b) = (ctx.operand_slice(instr, 0)?, ctx.operand_slice(instr, 1)?);
            let in_a = a_shape.element_type.byte_size();
            let in_b = b_shape.element_type.byte_size();
            Ok(thunk(name, category, move |ctx| {
                let (pa, pb, po) = (
                    ctx.ptr(a) as usize,
                    ctx.ptr(b) as usize,
                    ctx.ptr(out) as usize,
                );
                parallel_for(n, ELEMENTWISE_GRAIN, |s, e| {
                    f(
                        (pa + s * in_a) as *const u8,
                        (pb + s * in_b) as *const u8,
                        (po + s * out_size) as *mut u8,
                        e - s,
                    )
                });
                Ok(())
            }))
        }
        Op::BitcastConvert => {
            let a_shape = ctx.operand_array(instr, 0)?;
            if a_shape.byte_size() != result.byte_size() {
                return Err(Error::invalid_argument(format!(
                    "bitcast-convert %{name} changes the byte size: {a_shape} to {result}"
                )));
            }
            // Row-major little-endian bytes are the same whatever the element
            // widths: the reinterpretation is a copy.
            let a = ctx.operand_slice(instr, 0)?;
            Ok(thunk(name, category, move |ctx| {
                let (src, dst) = (ctx.ptr(a), ctx.ptr(out));
                if src != dst {
                    // SAFETY: both slices hold `out.size` bytes.
                    unsafe { std::ptr::copy(src, dst, out.size) };
                }
                Ok(())
            }))
        }
        Op::Select => lower_select(ctx, id),
        Op::Clamp => lower_clamp(ctx, id),
        _ => Err(Error::internal(format!("%{name} is not elementwise"))),
    }
}

fn check_same_count(instr: &platform_api::HloInstruction, got: usize, want: usize) -> Result<()> {
    if got != want {
        return Err(Error::invalid_argument(format!(
            "%{}: operand has {got} elements but the result has {want}",
            instr.name
        )));
    }
    Ok(())
}

fn lower_select(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    let n = result.element_count();
    let pred_shape = ctx.operand_array(instr, 0)?;
    if !pred_shape.element_type.is_pred() {
        return Err(Error::invalid_argument(format!(
            "select %{}: the predicate must be pred, not {}",
            instr.name, pred_shape
        )));
    }
    let pred_is_scalar = pred_shape.rank() == 0 && result.rank() > 0;
    if !pred_is_scalar {
        check_same_count(instr, pred_shape.element_count(), n)?;
    }
    check_same_count(instr, ctx.operand_array(instr, 1)?.element_count(), n)?;
    check_same_count(instr, ctx.operand_array(instr, 2)?.element_count(), n)?;
    let (p, t, f) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.operand_slice(instr, 2)?,
    );
    let out = ctx.result_slice(id)?;
    let width = result.element_type.byte_size();
    let kernel: Arc<dyn Fn(usize, usize, usize, usize, usize) + Send + Sync> = crate::with_width!(
        width,
        W => Arc::new(move |p: usize, t: usize, f: usize, o: usize, len: usize| {
            let (p, t, f, o) = (p as *const Pred, t as *const W, f as *const W, o as *mut W);
            for i in 0..len {
                // SAFETY: the thunk passes chunk pointers valid for `len`
                // elements; element `i` is read before it is written.
                unsafe {
                    let v = if (*p.add(i)).0 != 0 { t.add(i).read() } else { f.add(i).read() };
                    o.add(i).write(v);
                }
            }
        }),
        _ => return Err(Error::unimplemented(format!("select of {width}-byte elements")))
    );
    Ok(thunk(instr.name.clone(), "select", move |ctx| {
        let (pp, pt, pf, po) = (ctx.ptr(p), ctx.ptr(t), ctx.ptr(f), ctx.ptr(out));
        if pred_is_scalar {
            // SAFETY: a one-byte predicate; the chosen operand and the result
            // hold `out.size` bytes (`copy` allows them to be the same).
            unsafe {
                let src = if *pp != 0 { pt } else { pf };
                if src != po {
                    std::ptr::copy(src, po, out.size);
                }
            }
            return Ok(());
        }
        let (pp, pt, pf, po) = (pp as usize, pt as usize, pf as usize, po as usize);
        parallel_for(n, super::elementwise::ELEMENTWISE_GRAIN, |s, e| {
            kernel(
                pp + s,
                pt + s * width,
                pf + s * width,
                po + s * width,
                e - s,
            )
        });
        Ok(())
    }))
}

/// `clamp(lo, x, hi)` kernel: pointers and whether `lo`/`hi` are scalars.
type ClampFn = Arc<dyn Fn(usize, bool, usize, usize, bool, usize, usize) + Send + Sync>;

fn clamp_kernel<T: bytemuck::Pod>(
    max: impl Fn(T, T) -> T + Send + Sync + 'static,
    min: impl Fn(T, T) -> T + Send + Sync + 'static,
) -> ClampFn {
    Arc::new(move |lo, lo_scalar, x, hi, hi_scalar, o, len| {
        let (lo, x, hi, o) = (lo as *const T, x as *const T, hi as *const T, o as *mut T);
        for i in 0..len {
            // SAFETY: chunk pointers valid for `len` elements (scalar bounds for
            // one); element `i` is read before it is written.
            unsafe {
                let l = lo.add(if lo_scalar { 0 } else { i }).read();
                let h = hi.add(if hi_scalar { 0 } else { i }).read();
                o.add(i).write(min(max(x.add(i).read(), l), h));
            }
        }
    })
}

fn lower_clamp(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    use scalar_ops::Float;
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    let n = result.element_count();
    let ty = result.element_type;
    let lo_scalar = ctx.operand_array(instr, 0)?.rank() == 0 && result.rank() > 0;
    let hi_scalar = ctx.operand_array(instr, 2)?.rank() == 0 && result.rank() > 0;
    check_same_count(instr, ctx.operand_array(instr, 1)?.element_count(), n)?;
    let kernel: ClampFn = with_float!(ty, T => clamp_kernel::<T>(|a, b| a.max_nan(b), |a, b| a.min_nan(b)),
    _ => with_int!(ty, T => clamp_kernel::<T>(Ord::max, Ord::min),
        _ => match ty {
            ElementType::Pred => clamp_kernel::<Pred>(|a, b| Pred(a.0.max(b.0)), |a, b| Pred(a.0.min(b.0))),
            _ => return Err(Error::unimplemented(format!("clamp %{} of {ty}", instr.name))),
        }));
    let (lo, x, hi) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.operand_slice(instr, 2)?,
    );
    let out = ctx.result_slice(id)?;
    let w = ty.byte_size();
    Ok(thunk(instr.name.clone(), "clamp", move |ctx| {
        let (pl, px, ph, po) = (
            ctx.ptr(lo) as usize,
            ctx.ptr(x) as usize,
            ctx.ptr(hi) as usize,
            ctx.ptr(out) as usize,
        );
        parallel_for(n, ELEMENTWISE_GRAIN, |s, e| {
            kernel(
                if lo_scalar { pl } else { pl + s * w },
                lo_scalar,
                px + s * w,
                if hi_scalar { ph } else { ph + s * w },
                hi_scalar,
                po + s * w,
                e - s,
            )
        });
        Ok(())
    }))
}

/// Element types a fused multiply-add runs on.
pub trait FmaElement: Copy + std::ops::Neg<Output = Self> {}
impl FmaElement for f32 {}
impl FmaElement for f64 {}

/// `out[i] = fma(±a[i], b[i], ±c[i])`, one rounding.
///
/// # Safety
/// Pointers valid for `n` elements; `out` may equal any input.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn fma_loop<T: FmaElement, F: Fn(T, T, T) -> T>(
    fma: &F,
    negate_a: bool,
    negate_c: bool,
    a: *const T,
    b: *const T,
    c: *const T,
    out: *mut T,
    n: usize,
) {
    for i in 0..n {
        // SAFETY: the caller's contract; element `i` is read before written.
        unsafe {
            let (x, y, z) = (a.add(i).read(), b.add(i).read(), c.add(i).read());
            let x = if negate_a { -x } else { x };
            let z = if negate_c { -z } else { z };
            out.add(i).write(fma(x, y, z));
        }
    }
}

crate::multiversion!(unsafe fn fma_simd<T: FmaElement, F: Fn(T, T, T) -> T>(fma: &F, negate_a: bool, negate_c: bool, a: *const T, b: *const T, c: *const T, out: *mut T, n: usize) => fma_loop);

/// The Host's contracted multiply-add (see `compiler::contraction`).
pub fn lower_fused_multiply_add(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    use crate::compiler::contraction::contraction_of;
    use platform_api::semantics::contraction::Contraction;
    let instr = ctx.instr(id);
    let result = ctx.result_array(instr)?;
    let n = result.element_count();
    for k in 0..3 {
        let a = ctx.operand_array(instr, k)?;
        if a.element_type != result.element_type || a.element_count() != n {
            return Err(Error::invalid_argument(format!(
                "fused multiply-add %{}: operand {k} is {a}, result {result}",
                instr.name
            )));
        }
    }
    let how = instr
        .backend_config
        .as_ref()
        .and_then(|c| contraction_of(c.as_str()))
        .ok_or_else(|| Error::internal(format!("%{}: unknown contraction", instr.name)))?;
    let (negate_a, negate_c) = match how {
        Contraction::Add => (false, false),
        Contraction::SubtractFromProduct => (false, true),
        Contraction::SubtractProduct => (true, false),
    };
    let (a, b, c) = (
        ctx.operand_slice(instr, 0)?,
        ctx.operand_slice(instr, 1)?,
        ctx.operand_slice(instr, 2)?,
    );
    let out = ctx.result_slice(id)?;
    let ty = result.element_type;
    let w = ty.byte_size();
    let name = instr.name.clone();
    let category = match how {
        Contraction::Add => "add",
        _ => "subtract",
    };
    macro_rules! make {
        ($T:ty, $f:expr) => {
            Ok(thunk(name, category, move |ctx| {
                let (pa, pb, pc, po) = (
                    ctx.ptr(a) as usize,
                    ctx.ptr(b) as usize,
                    ctx.ptr(c) as usize,
                    ctx.ptr(out) as usize,
                );
                parallel_for(n, ELEMENTWISE_GRAIN, |s, e| {
                    // SAFETY: chunk s..e of four arrays of `n` elements.
                    unsafe {
                        fma_simd(
                            &$f,
                            negate_a,
                            negate_c,
                            (pa + s * w) as *const $T,
                            (pb + s * w) as *const $T,
                            (pc + s * w) as *const $T,
                            (po + s * w) as *mut $T,
                            e - s,
                        )
                    }
                });
                Ok(())
            }))
        };
    }
    match ty {
        ElementType::F32 => make!(f32, |x: f32, y: f32, z: f32| x.mul_add(y, z)),
        ElementType::F64 => make!(f64, |x: f64, y: f64, z: f64| x.mul_add(y, z)),
        _ => Err(Error::unimplemented(format!(
            "fused multiply-add %{} of {ty}",
            instr.name
        ))),
    }
}
