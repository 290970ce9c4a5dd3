//! `rng-bit-generator`: XLA's counter-based generators, bit for bit.
//!
//! The state is a `u64` vector whose element 0 is the key and whose remaining
//! elements are a counter. The output bits and the advanced state follow XLA's
//! own expansion of the op (`RngBitGeneratorExpander` over `ThreeFryBitGenerator`
//! and `PhiloxBitGenerator`), so a program gets the same numbers here as on XLA
//! CPU:
//!
//! * **ThreeFry** (Threefry-2x32, 20 rounds). Counter: `state[1]`. For 32-bit
//!   (and narrower) outputs the shape is split in two along its first even
//!   dimension (else its largest): each counter value `state[1] + j`, for `j`
//!   over the half shape in row-major order, yields two words that land at
//!   positions `2h` and `2h+1` of the split dimension. 64-bit outputs use one
//!   counter per element and join the two words (first word low). The counter
//!   advances by the number of counters used.
//! * **Philox** (Philox-4x32, 10 rounds). Counter: a `u128`, `(state[1],
//!   state[2])` low word first when the state has three elements, else
//!   `(state[1], state[0])`. Each counter value yields four words, placed
//!   round-robin (`out[4k+i] = word i of counter k`); 64-bit outputs join word
//!   pairs. Only the low half of the advanced counter is kept when the state has
//!   two elements.
//! * **Default** is Philox, the algorithm XLA's CPU and GPU compilers choose.
//!
//! Outputs narrower than 32 bits are the low bits of 32-bit outputs, as in XLA.

use super::zeros;
use hlo_ir::RandomAlgorithm;
use hlo_ir::{ArrayShape, ElementType, Error, Literal, Result};
use hlo_semantics::random::{philox4x32, threefry2x32};

fn split_u64(v: u64) -> [u32; 2] {
    [v as u32, (v >> 32) as u32]
}

/// ThreeFry 32-bit words for an array of `dims`; returns the words and the counters used.
fn threefry_words32(key: u64, counter: u64, dims: &[usize]) -> (Vec<u32>, u64) {
    let key = split_u64(key);
    if dims.is_empty() {
        return (vec![threefry2x32(split_u64(counter), key)[0]], 1);
    }
    let split = dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
        // No even dimension: the first of the largest.
        let mut best = 0;
        for (i, &d) in dims.iter().enumerate() {
            if d > dims[best] {
                best = i;
            }
        }
        best
    });
    let outer: usize = dims[..split].iter().product();
    let inner: usize = dims[split + 1..].iter().product();
    let n = dims[split];
    let half = n.div_ceil(2);
    let half_count = outer * half * inner;
    let pairs: Vec<[u32; 2]> = (0..half_count)
        .map(|j| threefry2x32(split_u64(counter.wrapping_add(j as u64)), key))
        .collect();
    let mut out = Vec::with_capacity(outer * n * inner);
    for a in 0..outer {
        for p in 0..n {
            let row = (a * half + p / 2) * inner;
            out.extend((0..inner).map(|b| pairs[row + b][p % 2]));
        }
    }
    (out, half_count as u64)
}

fn threefry_words64(key: u64, counter: u64, count: usize) -> Vec<u64> {
    let key = split_u64(key);
    (0..count)
        .map(|j| {
            let w = threefry2x32(split_u64(counter.wrapping_add(j as u64)), key);
            w[0] as u64 | (w[1] as u64) << 32
        })
        .collect()
}

fn philox_block(key: u64, counter: u128, k: usize) -> [u32; 4] {
    let c = counter.wrapping_add(k as u128);
    let (lo, hi) = (c as u64, (c >> 64) as u64);
    philox4x32(
        [lo as u32, (lo >> 32) as u32, hi as u32, (hi >> 32) as u32],
        split_u64(key),
    )
}

fn philox_words32(key: u64, counter: u128, count: usize) -> (Vec<u32>, u64) {
    let blocks = count.div_ceil(4);
    let mut out = Vec::with_capacity(blocks * 4);
    for k in 0..blocks {
        out.extend_from_slice(&philox_block(key, counter, k));
    }
    out.truncate(count);
    (out, blocks as u64)
}

fn philox_words64(key: u64, counter: u128, count: usize) -> (Vec<u64>, u64) {
    let blocks = (count * 2).div_ceil(4);
    let mut out = Vec::with_capacity(blocks * 2);
    for k in 0..blocks {
        let w = philox_block(key, counter, k);
        out.push(w[0] as u64 | (w[1] as u64) << 32);
        out.push(w[2] as u64 | (w[3] as u64) << 32);
    }
    out.truncate(count);
    (out, blocks as u64)
}

/// Words of one output width, before they are written as the output type.
enum Words {
    W32(Vec<u32>),
    W64(Vec<u64>),
}

/// Runs the generator: returns the new state and the random array of shape `data`.
pub fn rng_bit_generator(
    algorithm: RandomAlgorithm,
    state: &Literal,
    data: &ArrayShape,
) -> Result<(Literal, Literal)> {
    let state_shape = state.array_shape()?;
    if state_shape.element_type != ElementType::U64
        || state_shape.rank() != 1
        || state_shape.dims[0] < 2
    {
        return Err(Error::invalid_argument(format!(
            "the rng-bit-generator state must be u64[n] with n >= 2, got {state_shape}"
        )));
    }
    let s = state.data::<u64>()?;
    let key = s[0];
    let width = data.element_type.bit_width();
    if data.element_type.is_pred() || data.element_type.is_complex() || width > 64 {
        return Err(Error::unimplemented(format!(
            "rng-bit-generator cannot produce {}",
            data.element_type
        )));
    }
    let count = data.element_count();
    let mut new_state = s.to_vec();
    let words = match algorithm {
        RandomAlgorithm::ThreeFry => {
            let counter = s[1];
            let (words, used) = if width == 64 {
                (
                    Words::W64(threefry_words64(key, counter, count)),
                    count as u64,
                )
            } else {
                let (w, used) = threefry_words32(key, counter, &data.dims);
                (Words::W32(w), used)
            };
            new_state = vec![key, counter.wrapping_add(used)];
            words
        }
        RandomAlgorithm::Philox | RandomAlgorithm::Default => {
            let three = s.len() >= 3;
            let counter = if three {
                s[1] as u128 | (s[2] as u128) << 64
            } else {
                s[1] as u128 | (s[0] as u128) << 64
            };
            let (words, used) = if width == 64 {
                let (w, used) = philox_words64(key, counter, count);
                (Words::W64(w), used)
            } else {
                let (w, used) = philox_words32(key, counter, count);
                (Words::W32(w), used)
            };
            let advanced = counter.wrapping_add(used as u128);
            new_state[1] = advanced as u64;
            if three {
                new_state[2] = (advanced >> 64) as u64;
            }
            words
        }
    };
    if new_state.len() != s.len() {
        return Err(Error::invalid_argument(format!(
            "{algorithm} produces a state of {} elements; the state operand has {}",
            new_state.len(),
            s.len()
        )));
    }
    let mut out = zeros(data.element_type, &data.dims);
    let bytes = out.bytes_mut()?;
    match (words, width) {
        (Words::W64(w), _) => bytes.copy_from_slice(bytemuck::cast_slice(&w)),
        (Words::W32(w), 32) => bytes.copy_from_slice(bytemuck::cast_slice(&w)),
        (Words::W32(w), 16) => {
            let narrow: Vec<u16> = w.iter().map(|&v| v as u16).collect();
            bytes.copy_from_slice(bytemuck::cast_slice(&narrow));
        }
        (Words::W32(w), _) => {
            let narrow: Vec<u8> = w.iter().map(|&v| v as u8).collect();
            bytes.copy_from_slice(&narrow);
        }
    }
    Ok((Literal::vector(&new_state), out))
}
