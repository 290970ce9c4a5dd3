//! `rng-bit-generator` (ThreeFry, Philox, default = Philox) with integer
//! outputs, as the block functions in 32-bit integer arithmetic.
//!
//! The counters a program needs are an `iota` added to the state's counter
//! (Philox's 128-bit counter with an explicit carry), the key and counter words
//! are split from the `u64`s with masks and shifts, and the rounds of
//! `hlo_semantics::random` are written out on `u32` arrays: `add`, `xor`,
//! rotations as two shifts and an `or`, Philox's 32x32 → 64-bit products as
//! `u64` `multiply`. Words land in the output as the evaluator (after XLA's
//! `RngBitGeneratorExpander`) places them: ThreeFry splits the shape along its
//! first even dimension (else the first largest) and interleaves the two words
//! of a block there, or joins them for 64-bit outputs; Philox puts block
//! words round-robin. Narrower and signed outputs are the `convert`
//! (two's-complement truncation) of those words. The new state advances the
//! counter by the blocks used. Exact, bit for bit.

use super::{tys, Emitted, Emitter, Expander};
use hlo_ir::attrs::ComparisonDirection as Dir;
use hlo_ir::builder::{Computation, HloBuilder, Value};
use hlo_ir::error::{Error, Result};
use hlo_ir::opcode::BinaryOp;
use hlo_ir::shape::{ElementType, Shape};
use hlo_ir::{InstrId, Literal, Op, Opcode, RandomAlgorithm, Scalar};

const U32: ElementType = ElementType::U32;
const U64: ElementType = ElementType::U64;

/// See the module docs.
pub struct RngBitGeneratorExpander;

impl Expander for RngBitGeneratorExpander {
    fn name(&self) -> &'static str {
        "rng-bit-generator"
    }
    fn plan(&self, op: Opcode, types: &[ElementType]) -> Option<Vec<Emitted>> {
        if op != Opcode::RngBitGenerator || !types.iter().all(|t| t.is_integer()) {
            return None;
        }
        let mut plan = Vec::new();
        for t in [U32, U64] {
            for o in [
                Opcode::Add,
                Opcode::Xor,
                Opcode::Or,
                Opcode::And,
                Opcode::ShiftLeft,
                Opcode::ShiftRightLogical,
                Opcode::Broadcast,
                Opcode::Iota,
                Opcode::Reshape,
                Opcode::Concatenate,
                Opcode::Slice,
            ] {
                plan.push((o, vec![t]));
            }
        }
        plan.extend([
            (Opcode::Multiply, vec![U64]),
            (Opcode::Convert, tys(&[U32, U64])),
            (Opcode::Compare, tys(&[U64, ElementType::Pred])),
            (Opcode::Select, tys(&[U64, ElementType::Pred])),
            (Opcode::Call, vec![]),
        ]);
        for &t in types {
            plan.push((Opcode::Convert, tys(&[t, U32])));
            plan.push((Opcode::Convert, tys(&[t, U64])));
        }
        Some(plan)
    }
    fn applies(&self, b: &Emitter<'_, '_>, id: InstrId) -> bool {
        let instr = b.instr(id);
        let Op::RngBitGenerator { algorithm } = instr.op else {
            return false;
        };
        let Shape::Tuple(parts) = &instr.shape else {
            return false;
        };
        let [state_shape, data] = &parts[..] else {
            return false;
        };
        let (Ok(st), Ok(d)) = (state_shape.array_or_err(), data.array_or_err()) else {
            return false;
        };
        let n = match st.dims[..] {
            [n] => n,
            _ => return false,
        };
        let state_ok = st.element_type == U64
            && match algorithm {
                RandomAlgorithm::ThreeFry => n == 2,
                _ => n >= 2,
            };
        state_ok
            && d.element_type.is_integer()
            && instr.operands.len() == 1
            && b.array(instr.operands[0]).is_ok_and(|(t, dd)| t == U64 && dd == st.dims)
            // Empty outputs use no counters; not worth a special case.
            && d.dims
                .iter()
                .try_fold(1usize, |a, &x| a.checked_mul(x))
                .is_some_and(|c| (1..1 << 31).contains(&c))
    }
    fn expand(&self, b: &mut Emitter<'_, '_>, id: InstrId) -> Result<InstrId> {
        let instr = b.instr(id).clone();
        let Op::RngBitGenerator { algorithm } = instr.op else {
            return Err(Error::invalid_argument("not an rng-bit-generator"));
        };
        let Shape::Tuple(parts) = &instr.shape else {
            return Err(Error::invalid_argument(
                "rng-bit-generator result not a tuple",
            ));
        };
        let (st, data) = match &parts[..] {
            [s, d] => (s.array_or_err()?.clone(), d.array_or_err()?.clone()),
            _ => return Err(Error::invalid_argument("rng-bit-generator result")),
        };
        let built = build(algorithm, st.dims[0], data.element_type, &data.dims)?;
        let callee = b.attach(&built)?;
        Ok(b.add(
            instr.shape.clone(),
            Op::Call {
                to_apply: callee,
                is_composite: false,
            },
            instr.operands.clone(),
        ))
    }
}

/// Array helpers over flat `u32`/`u64` arrays.
struct Bits<'a> {
    f: &'a mut HloBuilder,
}

impl Bits<'_> {
    fn splat(&mut self, v: Scalar, dims: &[usize]) -> Result<Value> {
        let c = self.f.constant(Literal::from_scalar(v))?;
        self.f.broadcast(c, dims)
    }
    fn dims(&self, x: Value) -> Result<Vec<usize>> {
        Ok(self.f.shape(x)?.dims().to_vec())
    }
    fn ty(&self, x: Value) -> Result<ElementType> {
        self.f
            .shape(x)?
            .element_type()
            .ok_or_else(|| Error::internal("not an array"))
    }
    /// `x op c` with the constant `c` of `x`'s type.
    fn op_c(&mut self, op: BinaryOp, x: Value, c: u64) -> Result<Value> {
        let dims = self.dims(x)?;
        let s = if self.ty(x)? == U32 {
            Scalar::U32(c as u32)
        } else {
            Scalar::U64(c)
        };
        let k = self.splat(s, &dims)?;
        self.f.binary(op, x, k)
    }
    fn bin(&mut self, op: BinaryOp, x: Value, y: Value) -> Result<Value> {
        self.f.binary(op, x, y)
    }
    /// The low and high 32-bit words of `u64`s.
    fn split(&mut self, x: Value) -> Result<(Value, Value)> {
        let lo = self.op_c(BinaryOp::And, x, 0xFFFF_FFFF)?;
        let hi = self.op_c(BinaryOp::ShiftRightLogical, x, 32)?;
        Ok((self.f.convert(lo, U32)?, self.f.convert(hi, U32)?))
    }
    /// `lo | hi << 32` as `u64`s.
    fn join(&mut self, lo: Value, hi: Value) -> Result<Value> {
        let lo = self.f.convert(lo, U64)?;
        let hi = self.f.convert(hi, U64)?;
        let hi = self.op_c(BinaryOp::ShiftLeft, hi, 32)?;
        self.bin(BinaryOp::Or, lo, hi)
    }
    fn rotl(&mut self, x: Value, r: u64) -> Result<Value> {
        let l = self.op_c(BinaryOp::ShiftLeft, x, r)?;
        let h = self.op_c(BinaryOp::ShiftRightLogical, x, 32 - r)?;
        self.bin(BinaryOp::Or, l, h)
    }
    /// `x` (`[n]` arrays) broadcast from a scalar.
    fn widen(&mut self, x: Value, dims: &[usize]) -> Result<Value> {
        self.f.broadcast(x, dims)
    }
    /// `k`-th element of the state as a scalar.
    fn element(&mut self, state: Value, k: usize) -> Result<Value> {
        let s = self.f.slice(state, &[k], &[k + 1], &[1])?;
        self.f.reshape(s, &[])
    }
    /// Words stacked along a new last axis and flattened (round-robin).
    fn interleave(&mut self, words: &[Value]) -> Result<Value> {
        let dims = self.dims(words[0])?;
        let mut with_axis = dims.clone();
        with_axis.push(1);
        let cols = words
            .iter()
            .map(|&w| self.f.reshape(w, &with_axis))
            .collect::<Result<Vec<_>>>()?;
        let stacked = self.f.concatenate(&cols, dims.len())?;
        let n: usize = dims.iter().product::<usize>() * words.len();
        self.f.reshape(stacked, &[n])
    }
}

const THREEFRY_ROTATIONS: [u64; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// Threefry-2x32-20 on flat arrays of counter words under scalar key words.
fn threefry(bits: &mut Bits<'_>, c: [Value; 2], key: [Value; 2]) -> Result<[Value; 2]> {
    let dims = bits.dims(c[0])?;
    let k0 = bits.widen(key[0], &dims)?;
    let k1 = bits.widen(key[1], &dims)?;
    let k01 = bits.bin(BinaryOp::Xor, k0, k1)?;
    let k2 = bits.op_c(BinaryOp::Xor, k01, 0x1BD1_1BDA)?;
    let ks = [k0, k1, k2];
    let mut x0 = bits.bin(BinaryOp::Add, c[0], ks[0])?;
    let mut x1 = bits.bin(BinaryOp::Add, c[1], ks[1])?;
    for block in 0..5usize {
        let rots = if block % 2 == 0 {
            &THREEFRY_ROTATIONS[..4]
        } else {
            &THREEFRY_ROTATIONS[4..]
        };
        for &r in rots {
            x0 = bits.bin(BinaryOp::Add, x0, x1)?;
            x1 = bits.rotl(x1, r)?;
            x1 = bits.bin(BinaryOp::Xor, x1, x0)?;
        }
        let i = block + 1;
        x0 = bits.bin(BinaryOp::Add, x0, ks[i % 3])?;
        x1 = bits.bin(BinaryOp::Add, x1, ks[(i + 1) % 3])?;
        x1 = bits.op_c(BinaryOp::Add, x1, block as u64 + 1)?;
    }
    Ok([x0, x1])
}

/// Philox-4x32-10 on flat arrays of counter words under scalar key words.
fn philox(bits: &mut Bits<'_>, mut x: [Value; 4], key: [Value; 2]) -> Result<[Value; 4]> {
    let dims = bits.dims(x[0])?;
    let mut k0 = bits.widen(key[0], &dims)?;
    let mut k1 = bits.widen(key[1], &dims)?;
    for _ in 0..10 {
        let a = bits.f.convert(x[0], U64)?;
        let p0 = bits.op_c(BinaryOp::Multiply, a, 0xD251_1F53)?;
        let c = bits.f.convert(x[2], U64)?;
        let p1 = bits.op_c(BinaryOp::Multiply, c, 0xCD9E_8D57)?;
        let (p0_lo, p0_hi) = bits.split(p0)?;
        let (p1_lo, p1_hi) = bits.split(p1)?;
        let y0 = bits.bin(BinaryOp::Xor, p1_hi, x[1])?;
        let y0 = bits.bin(BinaryOp::Xor, y0, k0)?;
        let y2 = bits.bin(BinaryOp::Xor, p0_hi, x[3])?;
        let y2 = bits.bin(BinaryOp::Xor, y2, k1)?;
        x = [y0, p1_lo, y2, p0_lo];
        k0 = bits.op_c(BinaryOp::Add, k0, 0x9E37_79B9)?;
        k1 = bits.op_c(BinaryOp::Add, k1, 0xBB67_AE85)?;
    }
    Ok(x)
}

/// `base + iota(count)` as flat `u64`s.
fn counters(bits: &mut Bits<'_>, base: Value, count: usize) -> Result<Value> {
    let iota = bits.f.iota(Shape::array(U64, vec![count]), 0)?;
    let base = bits.widen(base, &[count])?;
    bits.bin(BinaryOp::Add, iota, base)
}

/// The split dimension of ThreeFry's 32-bit layout (see the module docs).
fn split_dim(dims: &[usize]) -> usize {
    dims.iter().position(|d| d % 2 == 0).unwrap_or_else(|| {
        let mut best = 0;
        for (i, &d) in dims.iter().enumerate() {
            if d > dims[best] {
                best = i;
            }
        }
        best
    })
}

fn build(alg: RandomAlgorithm, n: usize, t: ElementType, dims: &[usize]) -> Result<Computation> {
    let mut f = HloBuilder::new("rng_bit_generator");
    let state = f.parameter(0, Shape::array(U64, vec![n]), "state")?;
    let mut bits = Bits { f: &mut f };
    let key = bits.element(state, 0)?;
    let (key_lo, key_hi) = bits.split(key)?;
    let count: usize = dims.iter().product();
    let wide = t.bit_width() == 64;
    let (words, new_state) = match alg {
        RandomAlgorithm::ThreeFry => {
            let counter = bits.element(state, 1)?;
            let (words, used) = if wide || dims.is_empty() {
                let blocks = count;
                let c = counters(&mut bits, counter, blocks)?;
                let (lo, hi) = bits.split(c)?;
                let [x0, x1] = threefry(&mut bits, [lo, hi], [key_lo, key_hi])?;
                let w = if wide { bits.join(x0, x1)? } else { x0 };
                (w, blocks)
            } else {
                let s = split_dim(dims);
                let outer: usize = dims[..s].iter().product();
                let inner: usize = dims[s + 1..].iter().product();
                let half = dims[s].div_ceil(2);
                let blocks = outer * half * inner;
                let c = counters(&mut bits, counter, blocks)?;
                let (lo, hi) = bits.split(c)?;
                let [x0, x1] = threefry(&mut bits, [lo, hi], [key_lo, key_hi])?;
                // [outer, half, 2, inner] -> [outer, 2 half, inner], cut to n.
                let shaped = [outer, half, 1, inner];
                let x0 = bits.f.reshape(x0, &shaped)?;
                let x1 = bits.f.reshape(x1, &shaped)?;
                let both = bits.f.concatenate(&[x0, x1], 2)?;
                let rows = bits.f.reshape(both, &[outer, 2 * half, inner])?;
                let cut = bits
                    .f
                    .slice(rows, &[0, 0, 0], &[outer, dims[s], inner], &[1, 1, 1])?;
                let flat = bits.f.reshape(cut, &[count])?;
                (flat, blocks)
            };
            let used = bits.splat(Scalar::U64(used as u64), &[])?;
            let next = bits.bin(BinaryOp::Add, counter, used)?;
            let key1 = bits.f.reshape(key, &[1])?;
            let next1 = bits.f.reshape(next, &[1])?;
            let new_state = bits.f.concatenate(&[key1, next1], 0)?;
            (words, new_state)
        }
        RandomAlgorithm::Philox | RandomAlgorithm::Default => {
            let lo = bits.element(state, 1)?;
            let hi = bits.element(state, if n >= 3 { 2 } else { 0 })?;
            let per_block = if wide { 2 } else { 4 };
            let blocks = count.div_ceil(per_block);
            let (words, used) = {
                // 128-bit counters: lo + k with the carry into hi.
                let c_lo = counters(&mut bits, lo, blocks)?;
                let lo_b = bits.widen(lo, &[blocks])?;
                let carry = bits.f.compare(c_lo, lo_b, Dir::Lt)?;
                let hi_b = bits.widen(hi, &[blocks])?;
                let hi1 = bits.op_c(BinaryOp::Add, hi_b, 1)?;
                let c_hi = bits.f.select(carry, hi1, hi_b)?;
                let (w0, w1) = bits.split(c_lo)?;
                let (w2, w3) = bits.split(c_hi)?;
                let out = philox(&mut bits, [w0, w1, w2, w3], [key_lo, key_hi])?;
                let flat = if wide {
                    let a = bits.join(out[0], out[1])?;
                    let b2 = bits.join(out[2], out[3])?;
                    bits.interleave(&[a, b2])?
                } else {
                    bits.interleave(&out)?
                };
                let cut = bits.f.slice(flat, &[0], &[count], &[1])?;
                (cut, blocks)
            };
            // The advanced 128-bit counter.
            let used_c = bits.splat(Scalar::U64(used as u64), &[])?;
            let new_lo = bits.bin(BinaryOp::Add, lo, used_c)?;
            let carry = bits.f.compare(new_lo, lo, Dir::Lt)?;
            let hi1 = bits.op_c(BinaryOp::Add, hi, 1)?;
            let new_hi = bits.f.select(carry, hi1, hi)?;
            let mut pieces = Vec::new();
            for k in 0..n {
                let v = match k {
                    1 => new_lo,
                    2 => new_hi,
                    _ => bits.element(state, k)?,
                };
                pieces.push(bits.f.reshape(v, &[1])?);
            }
            let new_state = bits.f.concatenate(&pieces, 0)?;
            (words, new_state)
        }
    };
    let data = f.reshape(words, dims)?;
    let data = if f.shape(data)?.element_type() == Some(t) {
        data
    } else {
        f.convert(data, t)?
    };
    let root = f.tuple(&[new_state, data])?;
    f.build_computation(root)
}
