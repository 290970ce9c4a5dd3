use super::{Desc, JitOp, Order};
use iced_x86::code_asm::*;
use iced_x86::IcedError;
use platform_api::hlo::ComparisonDirection;
use platform_api::semantics::contraction::Contraction;

/// Code that could not be generated (the run then keeps its steps).
#[derive(Debug)]
struct GenError;

impl From<IcedError> for GenError {
    fn from(_: IcedError) -> GenError {
        GenError
    }
}

type Entry = unsafe extern "sysv64" fn(*const *const u8, *const *mut u8, usize);

/// Executable machine code (see the module doc).
pub struct Code {
    _map: memmap2::Mmap,
    /// The constants the code reads (by address: it must not move).
    _consts: Box<[Lanes]>,
    entry: Entry,
}

/// Eight lanes, aligned as a `ymm` load wants them.
#[derive(Clone, Copy)]
#[repr(C, align(32))]
struct Lanes([u32; 8]);

impl Code {
    pub(super) fn new(d: &Desc) -> Option<Code> {
        // Per constant: its value in every lane, then its value as a shift
        // count (zero-extended).
        let consts: Box<[Lanes]> = d
            .consts
            .iter()
            .flat_map(|&c| [Lanes([c; 8]), Lanes([c, 0, 0, 0, 0, 0, 0, 0])])
            .collect();
        let bytes = assemble(d, consts.as_ptr() as u64).ok()?;
        let mut map = memmap2::MmapMut::map_anon(bytes.len()).ok()?;
        map.copy_from_slice(&bytes);
        let map = map.make_exec().ok()?;
        // SAFETY: the mapping holds a function with this signature
        // (`assemble`'s prologue and epilogue follow the System V ABI).
        let entry = unsafe { std::mem::transmute::<*const u8, Entry>(map.as_ptr()) };
        Some(Code {
            _map: map,
            _consts: consts,
            entry,
        })
    }

    /// # Safety
    /// As [`super::Run::call`].
    pub(super) unsafe fn call(&self, ins: *const *const u8, outs: *const *mut u8, n: usize) {
        // SAFETY: forwarded.
        unsafe { (self.entry)(ins, outs, n) }
    }
}

/// Registers the allocator hands out; `ymm14` and `ymm15` are the ops'
/// scratch.
const POOL: usize = 14;
const YMM: [AsmRegisterYmm; 16] = [
    ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13, ymm14,
    ymm15,
];
const XMM: [AsmRegisterXmm; 16] = [
    xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7, xmm8, xmm9, xmm10, xmm11, xmm12, xmm13, xmm14,
    xmm15,
];
const T0: AsmRegisterYmm = ymm14;
const T1: AsmRegisterYmm = ymm15;

/// Groups of eight lanes the main loop computes per iteration, their
/// operations interleaved: a written-out function is a long chain of
/// dependent steps, and one group's chain alone leaves the vector units
/// waiting on latency (the out-of-order window holds little more than one
/// iteration of such a run).
const GROUPS: usize = 2;

/// The stack frame, above the 32-byte aligned `rsp`: four constants
/// (sign bits, magnitude bits, all ones, zero), per scalar input its value
/// in all lanes, then per scalar input its value as a shift count
/// (zero-extended), then per group one spill slot per computed value, then
/// (for a run that calls out) the registers saved around the call. The run's
/// constants are not in the frame: they are written once, beside the code,
/// and read through `r11`.
struct Frame {
    n_scalars: usize,
    first_op: usize,
    /// Computed values per group.
    computed: usize,
    calls_out: bool,
}

/// The call-out area: the pool's registers, the argument and result lanes,
/// and the general registers the loop keeps.
const SAVED_GPRS: [AsmRegister64; 6] = [rdi, rsi, rdx, rcx, r8, r11];
const CALL_AREA: usize = 32 * (POOL + 2) + 8 * SAVED_GPRS.len();

const SIGN: i32 = 0;
const MAGNITUDE: i32 = 32;
const ONES: i32 = 64;
const ZERO: i32 = 96;
const MASKS: usize = 128;

impl Frame {
    fn splat(&self, k: usize) -> i32 {
        (MASKS + 32 * k) as i32
    }
    fn count(&self, k: usize) -> i32 {
        (MASKS + 32 * self.n_scalars + 16 * k) as i32
    }
    /// Group `g`'s slot for computed value `v`.
    fn spill(&self, g: usize, v: usize) -> i32 {
        (MASKS + 48 * self.n_scalars + 32 * (g * self.computed + v - self.first_op)) as i32
    }
    /// The call-out area (see [`CALL_AREA`]).
    fn call_area(&self) -> i32 {
        (MASKS + 48 * self.n_scalars + 32 * GROUPS * self.computed) as i32
    }
    fn bytes(&self) -> i32 {
        self.call_area() + if self.calls_out { CALL_AREA as i32 } else { 0 }
    }
}

/// Where an operand is: a register, or a splat in the frame (a scalar
/// input or a constant, with its index among the splats).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Src {
    Reg(usize),
    Splat(usize),
}

/// Register state while one loop body is generated.
struct Body<'d> {
    d: &'d Desc,
    frame: &'d Frame,
    /// Per value, its index among the splats (scalar inputs and constants).
    scalar_index: &'d [Option<usize>],
    /// Eight lanes (`true`) or one.
    wide: bool,
    /// Groups computed side by side (one unless `wide`). The body's values
    /// are numbered per group (see [`Body::id`]), and its operations
    /// interleave the groups, op by op.
    groups: usize,
    /// Per value (of every group), the body positions using it, ascending;
    /// `groups * d.ops.len()` stands for the stores at the end (see [`uses`]).
    uses: &'d [Vec<usize>],
    reg: Vec<Option<usize>>,
    holder: [Option<usize>; POOL],
    /// Computed values currently saved in their spill slot.
    saved: Vec<bool>,
    /// Calls out of the loop, emitted after it.
    calls: Vec<CallOut>,
}

/// A call out for the few lanes a simple op cannot compute (see
/// [`JitOp::ExpBelowNormal`]): the code branches to `entry` past the
/// function's end, which saves the registers, calls, restores them, puts the
/// result in `o` and jumps back to `resume`.
struct CallOut {
    entry: CodeLabel,
    resume: CodeLabel,
    x: AsmRegisterYmm,
    e: AsmRegisterYmm,
    o: AsmRegisterYmm,
}

/// The eight lanes' fixup for [`JitOp::ExpBelowNormal`].
///
/// # Safety
/// `x` and `e` point to eight `f32` each.
unsafe extern "sysv64" fn exp_below_normal_lanes(x: *const f32, e: *mut f32) {
    use crate::elementwise_ops::{exp_f32_below_normal, EXP_F32_NORMAL_FROM};
    for i in 0..8 {
        // SAFETY: the caller's contract.
        unsafe {
            let v = *x.add(i);
            if v < EXP_F32_NORMAL_FROM {
                *e.add(i) = exp_f32_below_normal(v);
            }
        }
    }
}

/// `$a.$ins(dst, x, second)` with `second` a register or a splat in the
/// frame.
macro_rules! rm {
    ($self:ident, $a:ident . $ins:ident ($o:expr, $x:expr, $y:expr $(, $imm:expr)?)) => {
        match $y {
            Src::Reg(r) => $a.$ins($o, $x, YMM[r] $(, $imm)?)?,
            Src::Splat(k) => $a.$ins($o, $x, $self.splat(k) $(, $imm)?)?,
        }
    };
}

/// A variable shift, or a shift by a uniform amount (its count in the
/// frame); both give XLA's results past the width.
macro_rules! shift {
    ($self:ident, $a:ident, $var:ident, $uni:ident, $o:expr, $x:expr, $y:expr) => {
        match $y {
            Src::Reg(r) => $a.$var($o, $x, YMM[r])?,
            Src::Splat(k) => $a.$uni($o, $x, $self.count(k))?,
        }
    };
}

impl Body<'_> {
    /// Splat `k` (scalar inputs first, then constants) in every lane.
    fn splat(&self, k: usize) -> AsmMemoryOperand {
        match k.checked_sub(self.frame.n_scalars) {
            None => ymmword_ptr(rsp + self.frame.splat(k)),
            Some(c) => ymmword_ptr(r11 + (64 * c) as i32),
        }
    }

    /// Splat `k` as a shift count.
    fn count(&self, k: usize) -> AsmMemoryOperand {
        match k.checked_sub(self.frame.n_scalars) {
            None => xmmword_ptr(rsp + self.frame.count(k)),
            Some(c) => xmmword_ptr(r11 + (64 * c + 32) as i32),
        }
    }

    fn n_in(&self) -> usize {
        self.d.inputs.len()
    }

    /// Value `v` of group `g`: `g * d.n_values() + v`.
    fn id(&self, g: usize, v: usize) -> usize {
        g * self.d.n_values() + v
    }

    /// A body value's group and value in the run.
    fn split(&self, id: usize) -> (usize, usize) {
        (id / self.d.n_values(), id % self.d.n_values())
    }

    fn next_use(&self, v: usize, from: usize) -> usize {
        self.uses[v]
            .iter()
            .copied()
            .find(|&u| u >= from)
            .unwrap_or(usize::MAX)
    }

    /// A free register, evicting the value used furthest from `pos`
    /// (never one of `pinned`).
    fn free(
        &mut self,
        a: &mut CodeAssembler,
        pos: usize,
        pinned: &[usize],
    ) -> Result<usize, GenError> {
        if let Some(r) = self.holder.iter().position(|h| h.is_none()) {
            return Ok(r);
        }
        let (r, v) = self
            .holder
            .iter()
            .enumerate()
            .filter_map(|(r, h)| h.map(|v| (r, v)))
            .filter(|(_, v)| !pinned.contains(v))
            .max_by_key(|&(_, v)| self.next_use(v, pos))
            .ok_or(GenError)?;
        let (g, orig) = self.split(v);
        if orig >= self.d.first_op() && !self.saved[v] {
            a.vmovups(ymmword_ptr(rsp + self.frame.spill(g, orig)), YMM[r])?;
            self.saved[v] = true;
        }
        self.reg[v] = None;
        self.holder[r] = None;
        Ok(r)
    }

    /// Where `v` is read from: scalar inputs stay in the frame, anything
    /// else is brought into a register.
    fn operand(
        &mut self,
        a: &mut CodeAssembler,
        v: usize,
        pos: usize,
        pinned: &[usize],
    ) -> Result<Src, GenError> {
        let (g, orig) = self.split(v);
        if let Some(k) = self.scalar_index.get(orig).copied().flatten() {
            return Ok(Src::Splat(k));
        }
        if let Some(r) = self.reg[v] {
            return Ok(Src::Reg(r));
        }
        let r = self.free(a, pos, pinned)?;
        if orig < self.n_in() {
            a.mov(r10, qword_ptr(rdi + (orig * 8) as i32))?;
            // Group `g`'s lanes start `8 g` elements on.
            let width = self.d.inputs[orig].width;
            let at = (8 * g * width) as i32;
            if width == 1 {
                // `pred` bytes to a mask: zero-extend, then not-equal
                // to zero.
                if self.wide {
                    a.vpmovzxbd(YMM[r], qword_ptr(r10 + rcx + at))?;
                } else {
                    a.movzx(eax, byte_ptr(r10 + rcx))?;
                    a.vmovd(XMM[r], eax)?;
                }
                a.vpcmpeqd(YMM[r], YMM[r], ymmword_ptr(rsp + ZERO))?;
                a.vpxor(YMM[r], YMM[r], ymmword_ptr(rsp + ONES))?;
            } else if self.wide {
                a.vmovups(YMM[r], ymmword_ptr(r10 + rcx * 4 + at))?;
            } else {
                a.vmovss(XMM[r], dword_ptr(r10 + rcx * 4))?;
            }
        } else {
            a.vmovups(YMM[r], ymmword_ptr(rsp + self.frame.spill(g, orig)))?;
        }
        self.reg[v] = Some(r);
        self.holder[r] = Some(v);
        Ok(Src::Reg(r))
    }

    /// `src` in a register: its own, or scratch `t` loaded with the splat.
    fn in_reg(
        &self,
        a: &mut CodeAssembler,
        src: Src,
        t: AsmRegisterYmm,
    ) -> Result<AsmRegisterYmm, GenError> {
        Ok(match src {
            Src::Reg(r) => YMM[r],
            Src::Splat(k) => {
                a.vmovups(t, self.splat(k))?;
                t
            }
        })
    }

    fn release(&mut self, v: usize) {
        if let Some(r) = self.reg[v].take() {
            self.holder[r] = None;
        }
    }

    fn emit(&mut self, a: &mut CodeAssembler) -> Result<(), GenError> {
        let first_op = self.d.first_op();
        let d = self.d;
        let groups = self.groups;
        let steps = d.ops.iter().enumerate();
        let steps = steps.flat_map(|(k, op)| (0..groups).map(move |g| (k, g, op)));
        for (pos, (step, g, (op, vals))) in steps.enumerate() {
            let vals: Vec<usize> = vals.iter().map(|&v| self.id(g, v)).collect();
            let vals = &vals[..];
            let mut src = [Src::Splat(0); 3];
            for (k, &v) in vals.iter().enumerate() {
                src[k] = self.operand(a, v, pos, vals)?;
            }
            for &v in vals {
                if self.next_use(v, pos + 1) == usize::MAX {
                    self.release(v);
                }
            }
            let dst = self.free(a, pos, vals)?;
            let o = YMM[dst];
            let (sx, sy, sz) = (src[0], src[1], src[2]);
            // Commutative ops take a splat as their second operand. Float
            // arithmetic keeps its order, as the kernels' loops do (with
            // two NaN operands, the order picks the NaN that comes out);
            // `maximum` and `minimum` do not (`clamp`'s bounds are
            // uniform), the one place the NaN may differ from the kernel's.
            let (sx, sy) = match (op, sx, sy) {
                (
                    JitOp::FMax
                    | JitOp::FMin
                    | JitOp::IAdd
                    | JitOp::IMul
                    | JitOp::And
                    | JitOp::Or
                    | JitOp::Xor
                    | JitOp::SMax
                    | JitOp::SMin
                    | JitOp::UMax
                    | JitOp::UMin,
                    Src::Splat(_),
                    Src::Reg(_),
                ) => (sy, sx),
                _ => (sx, sy),
            };
            let x = self.in_reg(a, sx, T0)?;
            match op {
                JitOp::FAdd => rm!(self, a.vaddps(o, x, sy)),
                JitOp::FSub => rm!(self, a.vsubps(o, x, sy)),
                JitOp::FMul => rm!(self, a.vmulps(o, x, sy)),
                JitOp::FDiv => rm!(self, a.vdivps(o, x, sy)),
                JitOp::FMax | JitOp::FMin => {
                    // The hardware's max/min return the second operand
                    // for a NaN or a pair of zeros: the zeros' sign is
                    // fixed with the first operand's bits where the two
                    // compare equal (and for max, or for min), then a
                    // NaN first operand is put back.
                    if x == T0 {
                        // A uniform first operand would need a third
                        // scratch register; such runs keep their steps.
                        return Err(GenError);
                    }
                    if *op == JitOp::FMax {
                        rm!(self, a.vcmpps(T1, x, sy, 4)); // NEQ_UQ
                        a.vorps(T1, T1, x)?;
                        rm!(self, a.vmaxps(T0, x, sy));
                        a.vandps(T0, T0, T1)?;
                    } else {
                        rm!(self, a.vcmpps(T1, x, sy, 0)); // EQ_OQ
                        a.vandps(T1, T1, x)?;
                        rm!(self, a.vminps(T0, x, sy));
                        a.vorps(T0, T0, T1)?;
                    }
                    a.vcmpps(T1, x, x, 3)?; // UNORD_Q
                    a.vblendvps(o, T0, x, T1)?;
                }
                JitOp::S32ToF32 => a.vcvtdq2ps(o, x)?,
                JitOp::Cmp(dir, Order::Float) => {
                    // Ordered and false on NaN, but `NE` (unordered).
                    let predicate = match dir {
                        ComparisonDirection::Eq => 0x00,
                        ComparisonDirection::Lt => 0x01,
                        ComparisonDirection::Le => 0x02,
                        ComparisonDirection::Ne => 0x04,
                        ComparisonDirection::Ge => 0x0d,
                        ComparisonDirection::Gt => 0x0e,
                    };
                    rm!(self, a.vcmpps(o, x, sy, predicate));
                }
                JitOp::Cmp(dir, order) => {
                    // Unsigned: flip both sign bits, then compare signed.
                    let (x, y) = if *order == Order::Unsigned {
                        a.vpxor(T0, x, ymmword_ptr(rsp + SIGN))?;
                        a.vmovups(T1, ymmword_ptr(rsp + SIGN))?;
                        rm!(self, a.vpxor(T1, T1, sy));
                        (T0, T1)
                    } else {
                        (x, self.in_reg(a, sy, T1)?)
                    };
                    use ComparisonDirection as D;
                    let (p, q, equal, negate) = match dir {
                        D::Eq => (x, y, true, false),
                        D::Ne => (x, y, true, true),
                        D::Gt => (x, y, false, false),
                        D::Lt => (y, x, false, false),
                        D::Le => (x, y, false, true),
                        D::Ge => (y, x, false, true),
                    };
                    if equal {
                        a.vpcmpeqd(o, p, q)?;
                    } else {
                        a.vpcmpgtd(o, p, q)?;
                    }
                    if negate {
                        a.vpxor(o, o, ymmword_ptr(rsp + ONES))?;
                    }
                }
                JitOp::Select => {
                    // `x` is the mask; on false in a register, on true
                    // wherever it is.
                    let mask = if x == T0 {
                        a.vmovaps(T1, T0)?;
                        T1
                    } else {
                        x
                    };
                    let on_false = self.in_reg(a, sz, T0)?;
                    rm!(self, a.vblendvps(o, on_false, sy, mask));
                }
                JitOp::FNeg => a.vxorps(o, x, ymmword_ptr(rsp + SIGN))?,
                JitOp::FAbs => a.vandps(o, x, ymmword_ptr(rsp + MAGNITUDE))?,
                JitOp::Fma(Contraction::Add) => {
                    // `o = x * y + z`, rounded once, in whichever form
                    // leaves the result in `o` without moves: the operand
                    // order of a product does not change its rounding. `o`
                    // may be the register of an operand that dies here.
                    let held = |s: Src| matches!(s, Src::Reg(r) if YMM[r] == o);
                    match (sy, sz) {
                        _ if held(sz) => rm!(self, a.vfmadd231ps(o, x, sy)),
                        (Src::Reg(y), _) if o == x => rm!(self, a.vfmadd213ps(o, YMM[y], sz)),
                        (Src::Splat(_), Src::Reg(z)) if o == x => {
                            rm!(self, a.vfmadd132ps(o, YMM[z], sy))
                        }
                        (Src::Splat(_), Src::Splat(k)) if o == x => {
                            a.vmovups(T1, self.splat(k))?;
                            rm!(self, a.vfmadd231ps(T1, x, sy));
                            a.vmovaps(o, T1)?;
                        }
                        _ if held(sy) => rm!(self, a.vfmadd213ps(o, x, sz)),
                        (_, Src::Reg(z)) => {
                            a.vmovaps(o, YMM[z])?;
                            rm!(self, a.vfmadd231ps(o, x, sy));
                        }
                        (_, Src::Splat(k)) => {
                            a.vmovups(o, self.splat(k))?;
                            rm!(self, a.vfmadd231ps(o, x, sy));
                        }
                    }
                }
                // The subtractions as the slice kernels do them: negate an
                // operand (its sign bit), then one fused multiply-add.
                JitOp::Fma(Contraction::SubtractFromProduct) => {
                    a.vmovups(T1, ymmword_ptr(rsp + SIGN))?;
                    rm!(self, a.vxorps(T1, T1, sz));
                    rm!(self, a.vfmadd231ps(T1, x, sy));
                    a.vmovaps(o, T1)?;
                }
                JitOp::Fma(Contraction::SubtractProduct) => {
                    a.vxorps(T1, x, ymmword_ptr(rsp + SIGN))?;
                    let y = self.in_reg(a, sy, T0)?;
                    rm!(self, a.vfmadd213ps(T1, y, sz));
                    a.vmovaps(o, T1)?;
                }
                JitOp::IAdd => rm!(self, a.vpaddd(o, x, sy)),
                JitOp::ISub => rm!(self, a.vpsubd(o, x, sy)),
                JitOp::IMul => rm!(self, a.vpmulld(o, x, sy)),
                JitOp::INeg => {
                    a.vpxor(T1, T1, T1)?;
                    a.vpsubd(o, T1, x)?;
                }
                JitOp::IAbs => a.vpabsd(o, x)?,
                JitOp::And => rm!(self, a.vpand(o, x, sy)),
                JitOp::Or => rm!(self, a.vpor(o, x, sy)),
                JitOp::Xor => rm!(self, a.vpxor(o, x, sy)),
                JitOp::Not => a.vpxor(o, x, ymmword_ptr(rsp + ONES))?,
                JitOp::Shl => shift!(self, a, vpsllvd, vpslld, o, x, sy),
                JitOp::ShrLogical => shift!(self, a, vpsrlvd, vpsrld, o, x, sy),
                JitOp::ShrArithmetic => shift!(self, a, vpsravd, vpsrad, o, x, sy),
                JitOp::ShiftPairOr => {
                    shift!(self, a, vpsllvd, vpslld, T1, x, sy);
                    shift!(self, a, vpsrlvd, vpsrld, o, x, sz);
                    a.vpor(o, o, T1)?;
                }
                JitOp::SMax => rm!(self, a.vpmaxsd(o, x, sy)),
                JitOp::SMin => rm!(self, a.vpminsd(o, x, sy)),
                JitOp::UMax => rm!(self, a.vpmaxud(o, x, sy)),
                JitOp::UMin => rm!(self, a.vpminud(o, x, sy)),
                JitOp::Same => a.vmovaps(o, x)?,
                JitOp::Sqrt => a.vsqrtps(o, x)?,
                JitOp::Round(imm) => a.vroundps(o, x, i32::from(*imm))?,
                JitOp::TruncToS32 => a.vcvttps2dq(o, x)?,
                JitOp::RoundToS32 => a.vcvtps2dq(o, x)?,
                JitOp::PickGreater => rm!(self, a.vmaxps(o, x, sy)),
                JitOp::PickLess => rm!(self, a.vminps(o, x, sy)),
                JitOp::ExpBelowNormal => {
                    // `x` is the argument (maybe in T0), `sy` the result so far,
                    // `sz` the bound.
                    let Src::Reg(e) = sy else {
                        return Err(GenError);
                    };
                    let e = YMM[e];
                    rm!(self, a.vcmpps(T1, x, sz, 1)); // LT_OS
                    a.vmovmskps(eax, T1)?;
                    // The one-lane code has garbage in the other seven.
                    a.test(eax, if self.wide { 0xff } else { 1 })?;
                    let entry = a.create_label();
                    let mut resume = a.create_label();
                    a.jnz(entry)?;
                    if o != e {
                        a.vmovaps(o, e)?;
                    }
                    a.set_label(&mut resume)?;
                    self.calls.push(CallOut {
                        entry,
                        resume,
                        x,
                        e,
                        o,
                    });
                }
                JitOp::FloatPredicate(p) => rm!(self, a.vcmpps(o, x, sy, i32::from(*p))),
                // `math` writes the functions out before code is made.
                JitOp::Func(_) => return Err(GenError),
            }
            let v = self.id(g, first_op + step);
            self.reg[v] = Some(dst);
            self.holder[dst] = Some(v);
            if self.uses[v].is_empty() {
                self.release(v);
            }
        }
        let end = self.groups * d.ops.len();
        let stores = d.output_values.iter().enumerate();
        let stores = (0..groups).flat_map(|g| stores.clone().map(move |o| (g, o)));
        for (g, (k, &v)) in stores {
            let src = self.operand(a, self.id(g, v), end, &[])?;
            let r = self.in_reg(a, src, T0)?;
            a.mov(r10, qword_ptr(rsi + (k * 8) as i32))?;
            let at = (8 * g * d.outputs[k].width) as i32;
            if d.outputs[k].width == 1 {
                // A mask to `pred` bytes: its low bit, packed.
                a.vpsrld(T0, r, 31)?;
                if self.wide {
                    a.vextracti128(xmm15, T0, 1)?;
                    a.vpackusdw(xmm14, xmm14, xmm15)?;
                    a.vpackuswb(xmm14, xmm14, xmm14)?;
                    a.vmovq(qword_ptr(r10 + rcx + at), xmm14)?;
                } else {
                    a.vmovd(eax, xmm14)?;
                    a.mov(byte_ptr(r10 + rcx), al)?;
                }
            } else if self.wide {
                a.vmovups(ymmword_ptr(r10 + rcx * 4 + at), r)?;
            } else {
                let x = XMM[YMM.iter().position(|&y| y == r).ok_or(GenError)?];
                a.vmovss(dword_ptr(r10 + rcx * 4), x)?;
            }
        }
        Ok(())
    }
}

/// Per value of `groups` groups (numbered as [`Body::id`]), the positions of
/// the body that read it, ascending; `groups * d.ops.len()` stands for the
/// stores.
fn uses(d: &Desc, groups: usize) -> Vec<Vec<usize>> {
    let n_values = d.n_values();
    let mut uses = vec![Vec::new(); groups * n_values];
    let mut read = |v: usize, pos: usize| {
        if uses[v].last() != Some(&pos) {
            uses[v].push(pos);
        }
    };
    for (k, (_, vals)) in d.ops.iter().enumerate() {
        for g in 0..groups {
            for &v in vals {
                read(g * n_values + v, k * groups + g);
            }
        }
    }
    for g in 0..groups {
        for &v in &d.output_values {
            read(g * n_values + v, groups * d.ops.len());
        }
    }
    uses
}

/// `fn(ins, outs, n)` (System V): `rdi` = inputs, `rsi` = outputs,
/// `rdx` = elements, `rcx` = the element index.
fn assemble(d: &Desc, consts: u64) -> Result<Vec<u8>, GenError> {
    let n_values = d.n_values();
    let mut scalar_index = vec![None; n_values];
    let mut scalars = Vec::new();
    for (v, port) in d.inputs.iter().enumerate() {
        if port.scalar {
            scalar_index[v] = Some(scalars.len());
            scalars.push(v);
        }
    }
    for c in 0..d.consts.len() {
        scalar_index[d.inputs.len() + c] = Some(scalars.len() + c);
    }
    let frame = Frame {
        n_scalars: scalars.len(),
        first_op: d.first_op(),
        computed: d.ops.len(),
        calls_out: d.ops.iter().any(|(op, _)| *op == JitOp::ExpBelowNormal),
    };
    let mut a = CodeAssembler::new(64)?;
    a.push(rbp)?;
    a.mov(rbp, rsp)?;
    a.and(rsp, -32)?;
    let bytes = frame.bytes();
    a.sub(rsp, bytes)?;
    // A frame past a page is touched a page at a time from the top, so that
    // a stack too short for it faults on its guard page rather than writing
    // past it; one within a page cannot step over the guard.
    if bytes > 4096 {
        for page in (0..bytes).step_by(4096).rev() {
            a.or(dword_ptr(rsp + page), 0)?;
        }
    }
    // The masks and the scalars' splats and counts, once per call.
    for (at, bits) in [
        (SIGN, 0x8000_0000u32),
        (MAGNITUDE, 0x7fff_ffff),
        (ONES, u32::MAX),
        (ZERO, 0),
    ] {
        a.mov(eax, bits)?;
        a.vmovd(xmm15, eax)?;
        a.vpbroadcastd(ymm15, xmm15)?;
        a.vmovups(ymmword_ptr(rsp + at), ymm15)?;
    }
    for (k, &v) in scalars.iter().enumerate() {
        a.mov(r10, qword_ptr(rdi + (v * 8) as i32))?;
        if d.inputs[v].width == 1 {
            // A uniform `pred`: its mask in every lane.
            a.cmp(byte_ptr(r10), 0)?;
            a.setne(al)?;
            a.movzx(eax, al)?;
            a.neg(eax)?;
            a.vmovd(xmm15, eax)?;
            a.vpbroadcastd(ymm15, xmm15)?;
        } else {
            a.vbroadcastss(ymm15, dword_ptr(r10))?;
        }
        a.vmovups(ymmword_ptr(rsp + frame.splat(k)), ymm15)?;
        if d.inputs[v].width == 4 {
            // `vmovd` zero-extends: the count is the amount as unsigned.
            a.vmovd(xmm15, dword_ptr(r10))?;
            a.vmovdqu(xmmword_ptr(rsp + frame.count(k)), xmm15)?;
        }
    }
    a.mov(r11, consts)?;
    a.xor(ecx, ecx)?;
    // The main loop takes GROUPS * 8 elements at a time, then one group of
    // eight if that many are left, then the rest one by one.
    let mut main_loop = a.create_label();
    let mut one_group = a.create_label();
    let mut tail = a.create_label();
    let mut done = a.create_label();
    let mut calls = Vec::new();
    let (uses_grouped, uses_single) = (uses(d, GROUPS), uses(d, 1));
    let mut body = |a: &mut CodeAssembler, wide: bool, groups: usize| {
        let mut body = Body {
            d,
            frame: &frame,
            scalar_index: &scalar_index,
            wide,
            groups,
            uses: if groups == 1 {
                &uses_single
            } else {
                &uses_grouped
            },
            reg: vec![None; groups * n_values],
            holder: [None; POOL],
            saved: vec![false; groups * n_values],
            calls: Vec::new(),
        };
        body.emit(a)?;
        calls.append(&mut body.calls);
        Ok::<(), GenError>(())
    };
    a.mov(r8, rdx)?;
    a.and(r8, -8 * GROUPS as i32)?;
    a.set_label(&mut main_loop)?;
    a.cmp(rcx, r8)?;
    a.jae(one_group)?;
    body(&mut a, true, GROUPS)?;
    a.add(rcx, 8 * GROUPS as i32)?;
    a.jmp(main_loop)?;
    a.set_label(&mut one_group)?;
    a.mov(r8, rdx)?;
    a.and(r8, -8)?;
    a.cmp(rcx, r8)?;
    a.jae(tail)?;
    body(&mut a, true, 1)?;
    a.add(rcx, 8)?;
    a.set_label(&mut tail)?;
    a.cmp(rcx, rdx)?;
    a.jae(done)?;
    body(&mut a, false, 1)?;
    a.inc(rcx)?;
    a.jmp(tail)?;
    a.set_label(&mut done)?;
    a.vzeroupper()?;
    a.mov(rsp, rbp)?;
    a.pop(rbp)?;
    a.ret()?;
    for mut call in calls {
        emit_call_out(&mut a, &frame, &mut call)?;
    }
    Ok(a.assemble(0)?)
}

/// A [`CallOut`]'s code: everything the loop keeps in registers is saved
/// in the frame around the call (every vector register is the caller's to
/// save in the System V ABI).
fn emit_call_out(a: &mut CodeAssembler, frame: &Frame, call: &mut CallOut) -> Result<(), GenError> {
    let area = frame.call_area();
    let x_at = area + (32 * POOL) as i32;
    let e_at = x_at + 32;
    let gpr_at = e_at + 32;
    a.set_label(&mut call.entry)?;
    for (r, &reg) in YMM[..POOL].iter().enumerate() {
        a.vmovups(ymmword_ptr(rsp + area + 32 * r as i32), reg)?;
    }
    a.vmovups(ymmword_ptr(rsp + x_at), call.x)?;
    a.vmovups(ymmword_ptr(rsp + e_at), call.e)?;
    for (k, &g) in SAVED_GPRS.iter().enumerate() {
        a.mov(qword_ptr(rsp + gpr_at + 8 * k as i32), g)?;
    }
    a.vzeroupper()?;
    a.lea(rdi, ptr(rsp + x_at))?;
    a.lea(rsi, ptr(rsp + e_at))?;
    let helper: unsafe extern "sysv64" fn(*const f32, *mut f32) = exp_below_normal_lanes;
    a.mov(rax, helper as usize as u64)?;
    a.call(rax)?;
    for (k, &g) in SAVED_GPRS.iter().enumerate() {
        a.mov(g, qword_ptr(rsp + gpr_at + 8 * k as i32))?;
    }
    for (r, &reg) in YMM[..POOL].iter().enumerate() {
        a.vmovups(reg, ymmword_ptr(rsp + area + 32 * r as i32))?;
    }
    a.vmovups(call.o, ymmword_ptr(rsp + e_at))?;
    a.jmp(call.resume)?;
    Ok(())
}
