//! Random numbers: `rng-bit-generator` (bit-exact with XLA's ThreeFry and
//! Philox expansions), `rng` and `rng-get-and-update-state`.
//!
//! `rng-bit-generator` follows `RngBitGeneratorExpander` and `prng.cc`:
//! * **ThreeFry** (state `u64[2]` = key, counter): 32-bit outputs split the
//!   shape in halves along its first even dimension (else its largest), feed
//!   counters `counter + j` (`j` the row-major position in the half shape)
//!   through Threefry-2x32 (20 rounds) and interleave the two output words
//!   along that dimension; 64-bit outputs take one counter per element and join
//!   the two words; narrower types keep the low bits of 32-bit outputs. The
//!   counter advances by the number of counters used.
//! * **Philox** (state `u64[2]` or `u64[3]`: key, then the 128-bit counter; a
//!   two-word state holds the counter's low word and uses the key as its high
//!   word, as XLA's expander does): Philox-4x32 (10 rounds) over counters
//!   `counter + i`, the four words of each block laid out consecutively.
//! * `rng_default` is Philox, the CPU pipeline's default.
//!
//! `rng` (uniform or normal, from scalar parameters) is implementation-defined
//! in XLA; here it draws Philox bits from the run's seed and a per-execution
//! counter, maps them to `[a, b)` like XLA's uniform conversion, and uses
//! Box–Muller for the normal distribution.

use crate::lowering::LowerCtx;
use crate::thunk::{thunk, Thunk};
use platform_api::hlo::{InstrId, Op, RandomAlgorithm, RandomDistribution};
use platform_api::semantics::random::{philox4x32, threefry2x32};
use platform_api::{ElementType, Error, Result};
use std::sync::atomic::Ordering;

fn split(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// Writes ThreeFry bits for `dims` into `out`, `width` bytes per element (1,
/// 2, 4 or 8; narrower than 4 keeps the low bytes of 32-bit outputs), and
/// returns the new counter. Straight into the result: a temporary the size
/// of the result could fail to allocate where the result itself fit.
pub fn threefry_into(key: u64, counter: u64, dims: &[usize], out: &mut [u8], width: usize) -> u64 {
    let k = split(key);
    if width == 8 {
        for (j, e) in out.chunks_exact_mut(8).enumerate() {
            let x = threefry2x32(split(counter.wrapping_add(j as u64)), k);
            let v = x[0] as u64 | ((x[1] as u64) << 32);
            e.copy_from_slice(&v.to_le_bytes());
        }
        return counter.wrapping_add((out.len() / 8) as u64);
    }
    // Split along the first even dimension, else the largest.
    let (half, split_dim) = if dims.is_empty() {
        (vec![1usize], None)
    } else {
        let s = dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
            (0..dims.len()).fold(0, |best, i| if dims[i] > dims[best] { i } else { best })
        });
        let mut h = dims.to_vec();
        h[s] = dims[s].div_ceil(2);
        (h, Some(s))
    };
    let half_count: usize = half.iter().product();
    let half_strides = platform_api::shape::row_major_strides(&half);
    for (j, e) in out.chunks_exact_mut(width).enumerate() {
        let (hj, word) = match split_dim {
            None => (0, 0),
            Some(s) => {
                // Position in the half shape, and which of the pair's words.
                let mut coords = super::strided::unflatten(j, dims);
                let word = coords[s] % 2;
                coords[s] /= 2;
                (
                    coords
                        .iter()
                        .zip(&half_strides)
                        .map(|(c, st)| c * st)
                        .sum::<usize>(),
                    word,
                )
            }
        };
        let x = threefry2x32(split(counter.wrapping_add(hj as u64)), k);
        e.copy_from_slice(&x[word].to_le_bytes()[..width]);
    }
    counter.wrapping_add(half_count as u64)
}

/// `counter + by` in 128 bits (low word first).
fn advance(counter: (u64, u64), by: u64) -> (u64, u64) {
    let (lo, carry) = counter.0.overflowing_add(by);
    (lo, counter.1.wrapping_add(carry as u64))
}

/// Writes Philox bits into `out`, `width` bytes per element, and returns the
/// new 128-bit counter (low word first). Blocks `counter + i` give four
/// 32-bit words each: an element narrower than 8 bytes takes one word (its
/// low bytes), an 8-byte element two.
pub fn philox_into(key: u64, counter: (u64, u64), out: &mut [u8], width: usize) -> (u64, u64) {
    let k = split(key);
    // Bytes of the result one block fills.
    let per_block = if width == 8 { 16 } else { 4 * width };
    for (i, chunk) in out.chunks_mut(per_block).enumerate() {
        let (l, h) = {
            let (lo, hi) = advance(counter, i as u64);
            (split(lo), split(hi))
        };
        let w = philox4x32([l[0], l[1], h[0], h[1]], k);
        if width == 8 {
            // Words (0,1) then (2,3), low word first.
            for (e, pair) in chunk.chunks_mut(8).zip([[w[0], w[1]], [w[2], w[3]]]) {
                let v = pair[0] as u64 | ((pair[1] as u64) << 32);
                e.copy_from_slice(&v.to_le_bytes()[..e.len()]);
            }
        } else {
            for (e, word) in chunk.chunks_mut(width).zip(w) {
                e.copy_from_slice(&word.to_le_bytes()[..e.len()]);
            }
        }
    }
    advance(counter, out.len().div_ceil(per_block) as u64)
}

/// Words of Philox bits `rng` draws at a time (a multiple of four, so that
/// each pass starts on a block).
const RNG_WORDS: usize = 2048;

pub fn lower(ctx: &LowerCtx<'_>, id: InstrId) -> Result<Box<dyn Thunk>> {
    let instr = ctx.instr(id);
    match &instr.op {
        Op::RngBitGenerator { algorithm } => {
            let state = ctx.operand_array(instr, 0)?;
            let leaves = ctx.result_leaves(id).to_vec();
            let shapes = instr.shape.leaves();
            let bad = |why: &str| {
                Error::invalid_argument(format!("rng-bit-generator %{}: {why}", instr.name))
            };
            if state.element_type != ElementType::U64 || state.rank() != 1 || leaves.len() != 2 {
                return Err(bad("needs a u64[k] state and returns (state, bits)"));
            }
            let data = shapes[1].1.clone();
            let bits = data.element_type.bit_width();
            if data.element_type.is_pred()
                || data.element_type.is_complex()
                || !matches!(bits, 8 | 16 | 32 | 64)
            {
                return Err(Error::unimplemented(format!(
                    "rng-bit-generator %{} of {} elements",
                    instr.name, data.element_type
                )));
            }
            let k = state.dims[0];
            let algorithm = match algorithm {
                RandomAlgorithm::ThreeFry => RandomAlgorithm::ThreeFry,
                _ => RandomAlgorithm::Philox,
            };
            let ok = match algorithm {
                RandomAlgorithm::ThreeFry => k == 2,
                _ => k == 2 || k == 3,
            };
            if !ok {
                return Err(bad(&format!(
                    "{algorithm} needs a state of 2 (ThreeFry) or 2-3 (Philox) words, got {k}"
                )));
            }
            let (src, out_state, out_bits) = (ctx.operand_slice(instr, 0)?, leaves[0], leaves[1]);
            let dims = data.dims.clone();
            Ok(thunk(instr.name.clone(), "rng-bit-generator", move |ctx| {
                // SAFETY: a u64[k] state operand.
                let s: Vec<u64> = unsafe { ctx.input::<u64>(src) }.to_vec();
                // SAFETY: the bits leaf holds `n` elements of `bits / 8` bytes.
                let out = unsafe { ctx.output::<u8>(out_bits) };
                let width = bits / 8;
                let new_state = match algorithm {
                    RandomAlgorithm::ThreeFry => {
                        vec![s[0], threefry_into(s[0], s[1], &dims, out, width)]
                    }
                    _ => {
                        let counter = if k >= 3 { (s[1], s[2]) } else { (s[1], s[0]) };
                        let ctr = philox_into(s[0], counter, out, width);
                        if k >= 3 {
                            vec![s[0], ctr.0, ctr.1]
                        } else {
                            vec![s[0], ctr.0]
                        }
                    }
                };
                // SAFETY: the state leaf holds the new state.
                unsafe { ctx.output::<u64>(out_state).copy_from_slice(&new_state) };
                Ok(())
            }))
        }
        Op::Rng { distribution } => {
            let result = ctx.result_array(instr)?;
            let ty = result.element_type;
            let n = result.element_count();
            let a_shape = ctx.operand_array(instr, 0)?;
            if a_shape.rank() != 0 || a_shape.element_type != ty {
                return Err(Error::invalid_argument(format!(
                    "rng %{}: parameters must be {ty} scalars",
                    instr.name
                )));
            }
            let supported = match distribution {
                RandomDistribution::Uniform => matches!(
                    ty,
                    ElementType::F32
                        | ElementType::F64
                        | ElementType::S32
                        | ElementType::S64
                        | ElementType::U32
                        | ElementType::U64
                ),
                RandomDistribution::Normal => matches!(ty, ElementType::F32 | ElementType::F64),
            };
            if !supported {
                return Err(Error::unimplemented(format!(
                    "rng %{} ({distribution}) of {ty}",
                    instr.name
                )));
            }
            let distribution = *distribution;
            let (pa, pb, out) = (
                ctx.operand_slice(instr, 0)?,
                ctx.operand_slice(instr, 1)?,
                ctx.result_slice(id)?,
            );
            Ok(thunk(instr.name.clone(), "rng", move |ctx| {
                let blocks = (2 * n).div_ceil(4) as u64 + 1;
                let ctr = ctx.run.rng_state.fetch_add(blocks, Ordering::Relaxed);
                let base = (ctr, 0x5eed);
                // Element `j` draws word `j` (a uniform f32) or words `2j`
                // and `2j + 1`, a pass of words at a time.
                let per = match (distribution, ty) {
                    (RandomDistribution::Uniform, ElementType::F32) => 1,
                    _ => 2,
                };
                let mut bytes = [0u8; 4 * RNG_WORDS];
                let mut words = [0u32; RNG_WORDS];
                let mut e0 = 0;
                while e0 < n {
                    let e1 = (e0 + RNG_WORDS / per).min(n);
                    let count = (e1 - e0) * per;
                    let at = advance(base, (e0 * per / 4) as u64);
                    philox_into(ctx.run.rng_seed, at, &mut bytes[..4 * count], 4);
                    for (w, b) in words.iter_mut().zip(bytes[..4 * count].chunks_exact(4)) {
                        *w = u32::from_le_bytes([b[0], b[1], b[2], b[3]]);
                    }
                    // SAFETY: scalar parameters of `ty` and an `n`-element
                    // result; `e0..e1` lies inside it.
                    unsafe {
                        draw(
                            distribution,
                            ty,
                            [ctx.ptr(pa), ctx.ptr(pb)],
                            ctx.ptr(out),
                            e0..e1,
                            &words[..count],
                        )
                    };
                    e0 = e1;
                }
                Ok(())
            }))
        }
        Op::RngGetAndUpdateState { delta } => {
            let out = ctx.result_slice(id)?;
            if out.size != 16 {
                return Err(Error::invalid_argument(format!(
                    "rng-get-and-update-state %{} must produce u64[2]",
                    instr.name
                )));
            }
            let delta = *delta as u64;
            Ok(thunk(
                instr.name.clone(),
                "rng-get-and-update-state",
                move |ctx| {
                    let old = ctx.run.rng_state.fetch_add(delta, Ordering::Relaxed);
                    // SAFETY: a u64[2] result.
                    unsafe { ctx.output::<u64>(out).copy_from_slice(&[old, 0]) };
                    Ok(())
                },
            ))
        }
        _ => Err(Error::internal("not an rng op")),
    }
}

/// Writes elements `range` of an `rng` result at `po` from their words
/// (`words[i]`, or `words[2i]` and `words[2i + 1]`, for the range's `i`-th
/// element; see the caller).
///
/// # Safety
/// `params` point to two scalars of `ty`, `po` to a result of `ty` holding
/// `range`.
unsafe fn draw(
    distribution: RandomDistribution,
    ty: ElementType,
    params: [*mut u8; 2],
    po: *mut u8,
    range: std::ops::Range<usize>,
    words: &[u32],
) {
    let [a, b] = params;
    let unit = |w: u32| (w >> 8) as f64 / (1u64 << 24) as f64;
    // SAFETY (whole body): the caller's contract.
    unsafe {
        match (distribution, ty) {
            (RandomDistribution::Uniform, ElementType::F32) => {
                let (lo, hi) = (a.cast::<f32>().read(), b.cast::<f32>().read());
                for (i, j) in range.enumerate() {
                    po.cast::<f32>()
                        .add(j)
                        .write(lo + (hi - lo) * unit(words[i]) as f32);
                }
            }
            (RandomDistribution::Uniform, ElementType::F64) => {
                let (lo, hi) = (a.cast::<f64>().read(), b.cast::<f64>().read());
                for (i, j) in range.enumerate() {
                    let u = ((words[2 * i] as u64) << 32 | words[2 * i + 1] as u64) >> 11;
                    po.cast::<f64>()
                        .add(j)
                        .write(lo + (hi - lo) * (u as f64 / (1u64 << 53) as f64));
                }
            }
            (RandomDistribution::Normal, _) => {
                let (mu, sigma) = if ty == ElementType::F32 {
                    (a.cast::<f32>().read() as f64, b.cast::<f32>().read() as f64)
                } else {
                    (a.cast::<f64>().read(), b.cast::<f64>().read())
                };
                for (i, j) in range.enumerate() {
                    let u1 = unit(words[2 * i]).max(1e-7);
                    let u2 = unit(words[2 * i + 1]);
                    let z = (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
                    let v = mu + sigma * z;
                    if ty == ElementType::F32 {
                        po.cast::<f32>().add(j).write(v as f32);
                    } else {
                        po.cast::<f64>().add(j).write(v);
                    }
                }
            }
            (_, int) => {
                let (lo, hi) = match int {
                    ElementType::S32 => (
                        a.cast::<i32>().read() as i128,
                        b.cast::<i32>().read() as i128,
                    ),
                    ElementType::S64 => (
                        a.cast::<i64>().read() as i128,
                        b.cast::<i64>().read() as i128,
                    ),
                    ElementType::U32 => (
                        a.cast::<u32>().read() as i128,
                        b.cast::<u32>().read() as i128,
                    ),
                    _ => (
                        a.cast::<u64>().read() as i128,
                        b.cast::<u64>().read() as i128,
                    ),
                };
                let range_size = (hi - lo).max(1) as u128;
                for (i, j) in range.enumerate() {
                    let r = ((words[2 * i] as u128) << 32 | words[2 * i + 1] as u128) % range_size;
                    let v = lo + r as i128;
                    match int {
                        ElementType::S32 => po.cast::<i32>().add(j).write(v as i32),
                        ElementType::S64 => po.cast::<i64>().add(j).write(v as i64),
                        ElementType::U32 => po.cast::<u32>().add(j).write(v as u32),
                        _ => po.cast::<u64>().add(j).write(v as u64),
                    }
                }
            }
        }
    }
}
