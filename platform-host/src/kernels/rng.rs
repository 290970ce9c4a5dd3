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

/// ThreeFry bits for `dims` of `bits`-wide elements; returns the raw elements
/// (little-endian, `bits/8` bytes each) and the new counter.
pub fn threefry_bits(key: u64, counter: u64, dims: &[usize], bits: usize) -> (Vec<u8>, u64) {
    let n: usize = dims.iter().product();
    let width = bits / 8;
    let mut out = vec![0u8; n * width];
    let k = split(key);
    if bits == 64 {
        for j in 0..n {
            let x = threefry2x32(split(counter.wrapping_add(j as u64)), k);
            let v = x[0] as u64 | ((x[1] as u64) << 32);
            out[j * 8..j * 8 + 8].copy_from_slice(&v.to_le_bytes());
        }
        return (out, counter.wrapping_add(n as u64));
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
    for j in 0..n {
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
        let v = x[word];
        out[j * width..(j + 1) * width].copy_from_slice(&v.to_le_bytes()[..width]);
    }
    (out, counter.wrapping_add(half_count as u64))
}

/// Philox bits for `n` elements of `bits` width from a 128-bit counter;
/// returns the elements and the new counter.
pub fn philox_bits(key: u64, counter: (u64, u64), n: usize, bits: usize) -> (Vec<u8>, (u64, u64)) {
    let width = bits / 8;
    let words = if bits == 64 { 2 * n } else { n };
    let blocks = words.div_ceil(4);
    let k = split(key);
    let mut all = Vec::with_capacity(blocks * 4);
    for i in 0..blocks {
        let (lo, carry) = counter.0.overflowing_add(i as u64);
        let hi = counter.1.wrapping_add(carry as u64);
        let (l, h) = (split(lo), split(hi));
        all.extend_from_slice(&philox4x32([l[0], l[1], h[0], h[1]], k));
    }
    let mut out = vec![0u8; n * width];
    for j in 0..n {
        if bits == 64 {
            // Block i gives two 64-bit numbers: words (0,1) then (2,3).
            let (i, half) = (j / 2, j % 2);
            let v = all[4 * i + 2 * half] as u64 | ((all[4 * i + 2 * half + 1] as u64) << 32);
            out[j * 8..j * 8 + 8].copy_from_slice(&v.to_le_bytes());
        } else {
            out[j * width..(j + 1) * width].copy_from_slice(&all[j].to_le_bytes()[..width]);
        }
    }
    let (lo, carry) = counter.0.overflowing_add(blocks as u64);
    (out, (lo, counter.1.wrapping_add(carry as u64)))
}

#[allow(clippy::needless_range_loop)] // paired word indexing
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
            let n = data.element_count();
            Ok(thunk(instr.name.clone(), "rng-bit-generator", move |ctx| {
                // SAFETY: a u64[k] state operand.
                let s: Vec<u64> = unsafe { ctx.input::<u64>(src) }.to_vec();
                let (bytes, new_state) = match algorithm {
                    RandomAlgorithm::ThreeFry => {
                        let generate_bits = if bits < 32 { 32 } else { bits };
                        let (raw, ctr) = threefry_bits(s[0], s[1], &dims, generate_bits);
                        let bytes = if bits < 32 {
                            raw.chunks(4).flat_map(|c| c[..bits / 8].to_vec()).collect()
                        } else {
                            raw
                        };
                        (bytes, vec![s[0], ctr])
                    }
                    _ => {
                        let counter = if k >= 3 { (s[1], s[2]) } else { (s[1], s[0]) };
                        let (raw, ctr) = philox_bits(s[0], counter, n, bits.max(32));
                        let bytes = if bits < 32 {
                            raw.chunks(4).flat_map(|c| c[..bits / 8].to_vec()).collect()
                        } else {
                            raw
                        };
                        let st = if k >= 3 {
                            vec![s[0], ctr.0, ctr.1]
                        } else {
                            vec![s[0], ctr.0]
                        };
                        (bytes, st)
                    }
                };
                // SAFETY: the result leaves hold the new state and the bits.
                unsafe {
                    ctx.output::<u64>(out_state).copy_from_slice(&new_state);
                    std::ptr::copy_nonoverlapping(bytes.as_ptr(), ctx.ptr(out_bits), out_bits.size);
                }
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
                let (raw, _) = philox_bits(ctx.run.rng_seed, (ctr, 0x5eed), 2 * n, 32);
                let words: Vec<u32> = raw
                    .chunks(4)
                    .map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                    .collect();
                let unit = |w: u32| (w >> 8) as f64 / (1u64 << 24) as f64;
                // SAFETY: scalar parameters of `ty` and an `n`-element result.
                unsafe {
                    let po = ctx.ptr(out);
                    let (a, b) = (ctx.ptr(pa), ctx.ptr(pb));
                    match (distribution, ty) {
                        (RandomDistribution::Uniform, ElementType::F32) => {
                            let (lo, hi) = (a.cast::<f32>().read(), b.cast::<f32>().read());
                            for j in 0..n {
                                po.cast::<f32>()
                                    .add(j)
                                    .write(lo + (hi - lo) * unit(words[j]) as f32);
                            }
                        }
                        (RandomDistribution::Uniform, ElementType::F64) => {
                            let (lo, hi) = (a.cast::<f64>().read(), b.cast::<f64>().read());
                            for j in 0..n {
                                let u =
                                    ((words[2 * j] as u64) << 32 | words[2 * j + 1] as u64) >> 11;
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
                            for j in 0..n {
                                let u1 = unit(words[2 * j]).max(1e-7);
                                let u2 = unit(words[2 * j + 1]);
                                let z = (-2.0 * u1.ln()).sqrt()
                                    * (2.0 * std::f64::consts::PI * u2).cos();
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
                            let range = (hi - lo).max(1) as u128;
                            for j in 0..n {
                                let r = ((words[2 * j] as u128) << 32 | words[2 * j + 1] as u128)
                                    % range;
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
