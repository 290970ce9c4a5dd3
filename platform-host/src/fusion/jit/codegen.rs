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

/// What an instruction's emission returns.
type Res = Result<(), IcedError>;

type Entry = unsafe extern "sysv64" fn(*const *const u8, *const *mut u8, usize);

/// Executable machine code (see the module doc).
pub struct Code {
    _map: memmap2::Mmap,
    /// The constants the code reads (by address: it must not move).
    _consts: Box<[Lanes]>,
    entry: Entry,
}

/// Sixteen lanes, aligned as a `zmm` load wants them (a `ymm` load reads
/// the first eight).
#[derive(Clone, Copy)]
#[repr(C, align(64))]
struct Lanes([u32; 16]);

impl Code {
    pub(super) fn new(d: &Desc) -> Option<Code> {
        // Per constant: its value in every lane, then its value as a shift
        // count (zero-extended).
        let consts: Box<[Lanes]> = d
            .consts
            .iter()
            .flat_map(|&c| {
                let mut count = [0; 16];
                count[0] = c;
                [Lanes([c; 16]), Lanes(count)]
            })
            .collect();
        let at = consts.as_ptr() as u64;
        let avx512 = crate::vmath::level() >= crate::vmath::Level::Avx512;
        let bytes = match avx512 && d.ops.len() >= ZMM_FROM_OPS {
            true => assemble::<Zmm>(d, at),
            false => assemble::<Ymm>(d, at),
        }
        .ok()?;
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

/// Simple ops (functions written out) from which a run is `zmm` code where
/// the machine has AVX-512. A shorter run is bound by memory, where the
/// `zmm` code measured a few percent slower on Zen 4 (a compare, a subtract,
/// a multiply and a select over 1M f32: 0.455 -> 0.469 ms); a longer one by
/// its instructions, which 16 lanes a register halve.
const ZMM_FROM_OPS: usize = 24;

/// A register or memory operand (a splat in the frame or the constants).
#[derive(Clone, Copy)]
enum Opnd<R> {
    Reg(R),
    Mem(AsmMemoryOperand),
}

/// The instructions that are the same at both widths but for the
/// registers' type: `three` take a register or memory second source
/// (their `ymm` and `zmm` mnemonics), `count` shift by a count in memory,
/// `two` take one register.
macro_rules! uniform_ops {
    ($(three $t:ident: $ty:ident / $tz:ident;)* $(count $c:ident;)* $(two $u:ident;)*) => {
        trait Uniform {
            type R: Copy + PartialEq + 'static;
            $(fn $t(a: &mut CodeAssembler, o: Self::R, x: Self::R, y: Opnd<Self::R>)
                -> Res;)*
            $(fn $c(a: &mut CodeAssembler, o: Self::R, x: Self::R, y: AsmMemoryOperand)
                -> Res;)*
            $(fn $u(a: &mut CodeAssembler, o: Self::R, x: Self::R) -> Res;)*
            fn load(a: &mut CodeAssembler, o: Self::R, m: AsmMemoryOperand) -> Res;
            fn store(a: &mut CodeAssembler, m: AsmMemoryOperand, x: Self::R)
                -> Res;
            /// `o` = `x`'s low lane in every lane.
            fn broadcast(a: &mut CodeAssembler, o: Self::R, x: AsmRegisterXmm)
                -> Res;
            /// [`T0`] = `x`'s lanes' low bits (shifted logically by 31).
            fn low_bits(a: &mut CodeAssembler, x: Self::R) -> Res;
            /// `vroundps` with immediate `imm` (at `zmm` width `vrndscaleps`:
            /// the same low four bits, the scale in the high four zero).
            fn round(a: &mut CodeAssembler, o: Self::R, x: Self::R, imm: i32)
                -> Res;
            /// The lanes' `pred` bytes at `m`, zero-extended to `o`'s lanes.
            fn load_bytes(a: &mut CodeAssembler, o: Self::R, m: AsmMemoryOperand)
                -> Res;
        }
        uniform_impl!(Ymm, AsmRegisterYmm, ymmword_ptr, qword_ptr, ymm14, vroundps;
            $($t = $ty),*; $($c),*; $($u),*);
        uniform_impl!(Zmm, AsmRegisterZmm, zmmword_ptr, xmmword_ptr, zmm14, vrndscaleps;
            $($t = $tz),*; $($c),*; $($u),*);
    };
}

macro_rules! uniform_impl {
    ($w:ident, $r:ty, $ptr:ident, $bytes:ident, $t0:ident, $round:ident;
        $($t:ident = $ti:ident),*; $($c:ident),*; $($u:ident),*) => {
        impl Uniform for $w {
            type R = $r;
            $(fn $t(a: &mut CodeAssembler, o: $r, x: $r, y: Opnd<$r>) -> Res {
                match y {
                    Opnd::Reg(y) => a.$ti(o, x, y),
                    Opnd::Mem(m) => a.$ti(o, x, m),
                }
            })*
            $(fn $c(a: &mut CodeAssembler, o: $r, x: $r, y: AsmMemoryOperand)
                -> Res {
                a.$c(o, x, y)
            })*
            $(fn $u(a: &mut CodeAssembler, o: $r, x: $r) -> Res {
                a.$u(o, x)
            })*
            fn load(a: &mut CodeAssembler, o: $r, m: AsmMemoryOperand) -> Res {
                a.vmovups(o, $ptr(m))
            }
            fn store(a: &mut CodeAssembler, m: AsmMemoryOperand, x: $r) -> Res {
                a.vmovups($ptr(m), x)
            }
            fn broadcast(a: &mut CodeAssembler, o: $r, x: AsmRegisterXmm) -> Res {
                a.vpbroadcastd(o, x)
            }
            fn low_bits(a: &mut CodeAssembler, x: $r) -> Res {
                a.vpsrld($t0, x, 31)
            }
            fn round(a: &mut CodeAssembler, o: $r, x: $r, imm: i32) -> Res {
                a.$round(o, x, imm)
            }
            fn load_bytes(a: &mut CodeAssembler, o: $r, m: AsmMemoryOperand) -> Res {
                a.vpmovzxbd(o, $bytes(m))
            }
        }
    };
}

/// `ymm` code (AVX2 and FMA).
struct Ymm;
/// `zmm` code (AVX-512 F/VL/DQ/BW).
struct Zmm;

uniform_ops! {
    three vaddps: vaddps / vaddps;
    three vsubps: vsubps / vsubps;
    three vmulps: vmulps / vmulps;
    three vdivps: vdivps / vdivps;
    three vmaxps: vmaxps / vmaxps;
    three vminps: vminps / vminps;
    three vandps: vandps / vandps;
    three vorps: vorps / vorps;
    three vxorps: vxorps / vxorps;
    three vpand: vpand / vpandd;
    three vpor: vpor / vpord;
    three vpxor: vpxor / vpxord;
    three vpaddd: vpaddd / vpaddd;
    three vpsubd: vpsubd / vpsubd;
    three vpmulld: vpmulld / vpmulld;
    three vpmaxsd: vpmaxsd / vpmaxsd;
    three vpminsd: vpminsd / vpminsd;
    three vpmaxud: vpmaxud / vpmaxud;
    three vpminud: vpminud / vpminud;
    three vpsllvd: vpsllvd / vpsllvd;
    three vpsrlvd: vpsrlvd / vpsrlvd;
    three vpsravd: vpsravd / vpsravd;
    three vfmadd132ps: vfmadd132ps / vfmadd132ps;
    three vfmadd213ps: vfmadd213ps / vfmadd213ps;
    three vfmadd231ps: vfmadd231ps / vfmadd231ps;
    count vpslld;
    count vpsrld;
    count vpsrad;
    two vmovaps;
    two vpabsd;
    two vsqrtps;
    two vcvtdq2ps;
    two vcvttps2dq;
    two vcvtps2dq;
}

/// A vector width: its registers and the instructions that differ between
/// `ymm` and `zmm` code. AVX-512's comparisons write mask registers, so at
/// `zmm` width a comparison is followed by `vpmovm2d` (a `pred` stays a lane
/// mask in a vector register) and a select reads its mask back with
/// `vpmovd2m`.
trait Width: Uniform {
    /// Lanes per register.
    const LANES: usize;
    /// Every register, by number.
    const REGS: &'static [Self::R];
    /// The registers the allocator hands out (numbers); 14 and 15 are the
    /// ops' scratch ([`T0`], [`T1`]).
    const POOL: &'static [usize];
    /// Memory operand of a register's size.
    fn ptr(m: AsmMemoryOperand) -> AsmMemoryOperand;
    /// Prepares the assembler for this width's encodings.
    fn setup(_: &mut CodeAssembler) {}
    /// `vcmpps` with predicate `imm`, as a lane mask in `o`.
    fn cmpps(a: &mut CodeAssembler, o: Self::R, x: Self::R, y: Opnd<Self::R>, imm: i32) -> Res;
    /// `vpcmpeqd` (`equal`) or `vpcmpgtd`, as a lane mask in `o`.
    fn pcmp(a: &mut CodeAssembler, o: Self::R, x: Self::R, y: Self::R, equal: bool) -> Res;
    /// `o = mask's sign bit ? on_true : on_false`, per lane.
    fn blend(
        a: &mut CodeAssembler,
        o: Self::R,
        on_false: Self::R,
        on_true: Opnd<Self::R>,
        mask: Self::R,
    ) -> Res;
    /// `eax`'s bit per lane: `x < y` (ordered, signalling); `t` is scratch.
    fn lt_bits(a: &mut CodeAssembler, x: Self::R, y: Opnd<Self::R>, t: Self::R) -> Res;
    /// `o`'s lanes (0 or 1) to a lane mask; `zero` and `ones` are splats.
    fn to_mask(
        a: &mut CodeAssembler,
        o: Self::R,
        zero: AsmMemoryOperand,
        ones: AsmMemoryOperand,
    ) -> Res;
    /// [`T0`]'s lanes (0 or 1) as bytes at `m`.
    fn store_bytes(a: &mut CodeAssembler, m: AsmMemoryOperand) -> Res;
}

const XMM: [AsmRegisterXmm; 32] = [
    xmm0, xmm1, xmm2, xmm3, xmm4, xmm5, xmm6, xmm7, xmm8, xmm9, xmm10, xmm11, xmm12, xmm13, xmm14,
    xmm15, xmm16, xmm17, xmm18, xmm19, xmm20, xmm21, xmm22, xmm23, xmm24, xmm25, xmm26, xmm27,
    xmm28, xmm29, xmm30, xmm31,
];
/// The scratch registers' numbers.
const T0: usize = 14;
const T1: usize = 15;

impl Width for Ymm {
    const LANES: usize = 8;
    const REGS: &'static [AsmRegisterYmm] = &[
        ymm0, ymm1, ymm2, ymm3, ymm4, ymm5, ymm6, ymm7, ymm8, ymm9, ymm10, ymm11, ymm12, ymm13,
        ymm14, ymm15,
    ];
    const POOL: &'static [usize] = &[0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13];
    fn ptr(m: AsmMemoryOperand) -> AsmMemoryOperand {
        ymmword_ptr(m)
    }
    fn cmpps(
        a: &mut CodeAssembler,
        o: AsmRegisterYmm,
        x: AsmRegisterYmm,
        y: Opnd<AsmRegisterYmm>,
        imm: i32,
    ) -> Res {
        match y {
            Opnd::Reg(y) => a.vcmpps(o, x, y, imm),
            Opnd::Mem(m) => a.vcmpps(o, x, m, imm),
        }
    }
    fn pcmp(
        a: &mut CodeAssembler,
        o: AsmRegisterYmm,
        x: AsmRegisterYmm,
        y: AsmRegisterYmm,
        equal: bool,
    ) -> Res {
        match equal {
            true => a.vpcmpeqd(o, x, y),
            false => a.vpcmpgtd(o, x, y),
        }
    }
    fn blend(
        a: &mut CodeAssembler,
        o: AsmRegisterYmm,
        on_false: AsmRegisterYmm,
        on_true: Opnd<AsmRegisterYmm>,
        mask: AsmRegisterYmm,
    ) -> Res {
        match on_true {
            Opnd::Reg(y) => a.vblendvps(o, on_false, y, mask),
            Opnd::Mem(m) => a.vblendvps(o, on_false, m, mask),
        }
    }
    fn lt_bits(
        a: &mut CodeAssembler,
        x: AsmRegisterYmm,
        y: Opnd<AsmRegisterYmm>,
        t: AsmRegisterYmm,
    ) -> Res {
        Self::cmpps(a, t, x, y, 1)?; // LT_OS
        a.vmovmskps(eax, t)
    }
    fn to_mask(
        a: &mut CodeAssembler,
        o: AsmRegisterYmm,
        zero: AsmMemoryOperand,
        ones: AsmMemoryOperand,
    ) -> Res {
        a.vpcmpeqd(o, o, ymmword_ptr(zero))?;
        a.vpxor(o, o, ymmword_ptr(ones))
    }
    fn store_bytes(a: &mut CodeAssembler, m: AsmMemoryOperand) -> Res {
        a.vextracti128(xmm15, ymm14, 1)?;
        a.vpackusdw(xmm14, xmm14, xmm15)?;
        a.vpackuswb(xmm14, xmm14, xmm14)?;
        a.vmovq(qword_ptr(m), xmm14)
    }
}

impl Width for Zmm {
    const LANES: usize = 16;
    const REGS: &'static [AsmRegisterZmm] = &[
        zmm0, zmm1, zmm2, zmm3, zmm4, zmm5, zmm6, zmm7, zmm8, zmm9, zmm10, zmm11, zmm12, zmm13,
        zmm14, zmm15, zmm16, zmm17, zmm18, zmm19, zmm20, zmm21, zmm22, zmm23, zmm24, zmm25, zmm26,
        zmm27, zmm28, zmm29, zmm30, zmm31,
    ];
    const POOL: &'static [usize] = &[
        0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 16, 17, 18, 19, 20, 21, 22, 23, 24, 25, 26,
        27, 28, 29, 30, 31,
    ];
    fn ptr(m: AsmMemoryOperand) -> AsmMemoryOperand {
        zmmword_ptr(m)
    }
    /// `xmm16` and up have only EVEX encodings: the one-lane code's scalar
    /// moves must take them.
    fn setup(a: &mut CodeAssembler) {
        a.set_prefer_vex(false);
    }
    fn cmpps(
        a: &mut CodeAssembler,
        o: AsmRegisterZmm,
        x: AsmRegisterZmm,
        y: Opnd<AsmRegisterZmm>,
        imm: i32,
    ) -> Res {
        match y {
            Opnd::Reg(y) => a.vcmpps(k1, x, y, imm)?,
            Opnd::Mem(m) => a.vcmpps(k1, x, m, imm)?,
        }
        a.vpmovm2d(o, k1)
    }
    fn pcmp(
        a: &mut CodeAssembler,
        o: AsmRegisterZmm,
        x: AsmRegisterZmm,
        y: AsmRegisterZmm,
        equal: bool,
    ) -> Res {
        match equal {
            true => a.vpcmpeqd(k1, x, y)?,
            false => a.vpcmpgtd(k1, x, y)?,
        }
        a.vpmovm2d(o, k1)
    }
    fn blend(
        a: &mut CodeAssembler,
        o: AsmRegisterZmm,
        on_false: AsmRegisterZmm,
        on_true: Opnd<AsmRegisterZmm>,
        mask: AsmRegisterZmm,
    ) -> Res {
        a.vpmovd2m(k1, mask)?;
        match on_true {
            Opnd::Reg(y) => a.vblendmps(o.k1(), on_false, y),
            Opnd::Mem(m) => a.vblendmps(o.k1(), on_false, m),
        }
    }
    fn lt_bits(
        a: &mut CodeAssembler,
        x: AsmRegisterZmm,
        y: Opnd<AsmRegisterZmm>,
        _: AsmRegisterZmm,
    ) -> Res {
        match y {
            Opnd::Reg(y) => a.vcmpps(k1, x, y, 1)?, // LT_OS
            Opnd::Mem(m) => a.vcmpps(k1, x, m, 1)?,
        }
        a.kmovw(eax, k1)
    }
    fn to_mask(
        a: &mut CodeAssembler,
        o: AsmRegisterZmm,
        _: AsmMemoryOperand,
        _: AsmMemoryOperand,
    ) -> Res {
        a.vptestmd(k1, o, o)?;
        a.vpmovm2d(o, k1)
    }
    fn store_bytes(a: &mut CodeAssembler, m: AsmMemoryOperand) -> Res {
        a.vpmovdb(xmmword_ptr(m), zmm14)
    }
}

/// Groups of lanes the main loop computes per iteration, their operations
/// interleaved: a written-out function is a long chain of dependent steps,
/// and one group's chain alone leaves the vector units waiting on latency
/// (the out-of-order window holds little more than one iteration of such a
/// run).
const GROUPS: usize = 2;

/// The stack frame, above the `rsp` aligned to a register's size `v`: four
/// constants (sign bits, magnitude bits, all ones, zero), per scalar input
/// its value in all lanes, then per scalar input its value as a shift count
/// (zero-extended, 16 bytes each, padded to `v`), then per group one spill
/// slot per computed value, then (for a run that calls out) the registers
/// saved around the call. The run's constants are not in the frame: they
/// are written once, beside the code, and read through `r11`.
struct Frame {
    /// Bytes per register.
    v: usize,
    n_scalars: usize,
    first_op: usize,
    /// Computed values per group.
    computed: usize,
    calls_out: bool,
    /// Registers the allocator hands out.
    pool: usize,
}

/// The general registers the loop keeps across a call out.
const SAVED_GPRS: [AsmRegister64; 6] = [rdi, rsi, rdx, rcx, r8, r11];

const SIGN: usize = 0;
const MAGNITUDE: usize = 1;
const ONES: usize = 2;
const ZERO: usize = 3;

impl Frame {
    /// One of the four constants.
    fn mask(&self, k: usize) -> AsmMemoryOperand {
        rsp + (self.v * k) as i32
    }
    fn masks(&self) -> usize {
        4 * self.v
    }
    fn splat(&self, k: usize) -> i32 {
        (self.masks() + self.v * k) as i32
    }
    fn count(&self, k: usize) -> i32 {
        (self.masks() + self.v * self.n_scalars + 16 * k) as i32
    }
    /// Group `g`'s slot for computed value `v`.
    fn spill(&self, g: usize, v: usize) -> i32 {
        (self.spills() + self.v * (g * self.computed + v - self.first_op)) as i32
    }
    fn spills(&self) -> usize {
        let counts = (16 * self.n_scalars).next_multiple_of(self.v);
        self.masks() + self.v * self.n_scalars + counts
    }
    /// The call-out area: the pool's registers, the argument and result
    /// lanes, and [`SAVED_GPRS`].
    fn call_area(&self) -> i32 {
        (self.spills() + self.v * GROUPS * self.computed) as i32
    }
    fn bytes(&self) -> i32 {
        let call_area = self.v * (self.pool + 2) + 8 * SAVED_GPRS.len();
        self.call_area() + if self.calls_out { call_area as i32 } else { 0 }
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
struct Body<'d, W: Width> {
    d: &'d Desc,
    frame: &'d Frame,
    /// Per value, its index among the splats (scalar inputs and constants).
    scalar_index: &'d [Option<usize>],
    /// A register's lanes (`true`) or one.
    wide: bool,
    /// Groups computed side by side (one unless `wide`). The body's values
    /// are numbered per group (see [`Body::id`]), and its operations
    /// interleave the groups, op by op.
    groups: usize,
    /// Per value (of every group), the body positions using it, ascending;
    /// `groups * d.ops.len()` stands for the stores at the end (see [`uses`]).
    uses: &'d [Vec<usize>],
    /// Per value, its index in `W::POOL` while in a register.
    reg: Vec<Option<usize>>,
    holder: Vec<Option<usize>>,
    /// Computed values currently saved in their spill slot.
    saved: Vec<bool>,
    /// Calls out of the loop, emitted after it.
    calls: Vec<CallOut<W::R>>,
}

/// A call out for the few lanes a simple op cannot compute (see
/// [`JitOp::ExpBelowNormal`]): the code branches to `entry` past the
/// function's end, which saves the registers, calls, restores them, puts the
/// result in `o` and jumps back to `resume`.
struct CallOut<R> {
    entry: CodeLabel,
    resume: CodeLabel,
    x: R,
    e: R,
    o: R,
}

/// The `N` lanes' fixup for [`JitOp::ExpBelowNormal`].
///
/// # Safety
/// `x` and `e` point to `N` `f32` each.
unsafe extern "sysv64" fn exp_below_normal_lanes<const N: usize>(x: *const f32, e: *mut f32) {
    use crate::elementwise_ops::{exp_f32_below_normal, EXP_F32_NORMAL_FROM};
    for i in 0..N {
        // SAFETY: the caller's contract.
        unsafe {
            let v = *x.add(i);
            if v < EXP_F32_NORMAL_FROM {
                *e.add(i) = exp_f32_below_normal(v);
            }
        }
    }
}

impl<W: Width> Body<'_, W> {
    /// Pool register `r`.
    fn r(r: usize) -> W::R {
        W::REGS[W::POOL[r]]
    }

    fn t0() -> W::R {
        W::REGS[T0]
    }

    fn t1() -> W::R {
        W::REGS[T1]
    }

    /// Splat `k` (scalar inputs first, then constants) in every lane.
    fn splat(&self, k: usize) -> AsmMemoryOperand {
        W::ptr(match k.checked_sub(self.frame.n_scalars) {
            None => rsp + self.frame.splat(k),
            Some(c) => r11 + (128 * c) as i32,
        })
    }

    /// Splat `k` as a shift count.
    fn count(&self, k: usize) -> AsmMemoryOperand {
        xmmword_ptr(match k.checked_sub(self.frame.n_scalars) {
            None => rsp + self.frame.count(k),
            Some(c) => r11 + (128 * c + 64) as i32,
        })
    }

    fn mask(&self, k: usize) -> Opnd<W::R> {
        Opnd::Mem(W::ptr(self.frame.mask(k)))
    }

    fn opnd(&self, s: Src) -> Opnd<W::R> {
        match s {
            Src::Reg(r) => Opnd::Reg(Self::r(r)),
            Src::Splat(k) => Opnd::Mem(self.splat(k)),
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
            W::store(a, rsp + self.frame.spill(g, orig), Self::r(r))?;
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
        let (reg, xmm) = (Self::r(r), XMM[W::POOL[r]]);
        if orig < self.n_in() {
            a.mov(r10, qword_ptr(rdi + (orig * 8) as i32))?;
            // Group `g`'s lanes start `LANES g` elements on.
            let width = self.d.inputs[orig].width;
            let at = (W::LANES * g * width) as i32;
            if width == 1 {
                // `pred` bytes to a mask: zero-extend, then not-equal
                // to zero.
                if self.wide {
                    W::load_bytes(a, reg, r10 + rcx + at)?;
                } else {
                    a.movzx(eax, byte_ptr(r10 + rcx))?;
                    a.vmovd(xmm, eax)?;
                }
                W::to_mask(a, reg, self.frame.mask(ZERO), self.frame.mask(ONES))?;
            } else if self.wide {
                W::load(a, reg, r10 + rcx * 4 + at)?;
            } else {
                a.vmovss(xmm, dword_ptr(r10 + rcx * 4))?;
            }
        } else {
            W::load(a, reg, rsp + self.frame.spill(g, orig))?;
        }
        self.reg[v] = Some(r);
        self.holder[r] = Some(v);
        Ok(Src::Reg(r))
    }

    /// `src` in a register: its own, or scratch `t` loaded with the splat.
    fn in_reg(&self, a: &mut CodeAssembler, src: Src, t: W::R) -> Result<W::R, GenError> {
        Ok(match src {
            Src::Reg(r) => Self::r(r),
            Src::Splat(k) => {
                W::load(a, t, self.splat(k))?;
                t
            }
        })
    }

    fn release(&mut self, v: usize) {
        if let Some(r) = self.reg[v].take() {
            self.holder[r] = None;
        }
    }

    /// A variable shift, or a shift by a uniform amount (its count in the
    /// frame); both give XLA's results past the width.
    #[allow(clippy::type_complexity)]
    fn shift(
        &self,
        a: &mut CodeAssembler,
        var: fn(&mut CodeAssembler, W::R, W::R, Opnd<W::R>) -> Res,
        uni: fn(&mut CodeAssembler, W::R, W::R, AsmMemoryOperand) -> Res,
        o: W::R,
        x: W::R,
        y: Src,
    ) -> Res {
        match y {
            Src::Reg(r) => var(a, o, x, Opnd::Reg(Self::r(r))),
            Src::Splat(k) => uni(a, o, x, self.count(k)),
        }
    }

    fn emit(&mut self, a: &mut CodeAssembler) -> Result<(), GenError> {
        let first_op = self.d.first_op();
        let d = self.d;
        let groups = self.groups;
        let (t0, t1) = (Self::t0(), Self::t1());
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
            let o = Self::r(dst);
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
            let x = self.in_reg(a, sx, t0)?;
            let y = self.opnd(sy);
            match op {
                JitOp::FAdd => W::vaddps(a, o, x, y)?,
                JitOp::FSub => W::vsubps(a, o, x, y)?,
                JitOp::FMul => W::vmulps(a, o, x, y)?,
                JitOp::FDiv => W::vdivps(a, o, x, y)?,
                JitOp::FMax | JitOp::FMin => {
                    // The hardware's max/min return the second operand
                    // for a NaN or a pair of zeros: the zeros' sign is
                    // fixed with the first operand's bits where the two
                    // compare equal (and for max, or for min), then a
                    // NaN first operand is put back.
                    if x == t0 {
                        // A uniform first operand would need a third
                        // scratch register; such runs keep their steps.
                        return Err(GenError);
                    }
                    if *op == JitOp::FMax {
                        W::cmpps(a, t1, x, y, 4)?; // NEQ_UQ
                        W::vorps(a, t1, t1, Opnd::Reg(x))?;
                        W::vmaxps(a, t0, x, y)?;
                        W::vandps(a, t0, t0, Opnd::Reg(t1))?;
                    } else {
                        W::cmpps(a, t1, x, y, 0)?; // EQ_OQ
                        W::vandps(a, t1, t1, Opnd::Reg(x))?;
                        W::vminps(a, t0, x, y)?;
                        W::vorps(a, t0, t0, Opnd::Reg(t1))?;
                    }
                    W::cmpps(a, t1, x, Opnd::Reg(x), 3)?; // UNORD_Q
                    W::blend(a, o, t0, Opnd::Reg(x), t1)?;
                }
                JitOp::S32ToF32 => W::vcvtdq2ps(a, o, x)?,
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
                    W::cmpps(a, o, x, y, predicate)?;
                }
                JitOp::Cmp(dir, order) => {
                    // Unsigned: flip both sign bits, then compare signed.
                    let (x, y) = if *order == Order::Unsigned {
                        W::vpxor(a, t0, x, self.mask(SIGN))?;
                        W::load(a, t1, self.frame.mask(SIGN))?;
                        W::vpxor(a, t1, t1, y)?;
                        (t0, t1)
                    } else {
                        (x, self.in_reg(a, sy, t1)?)
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
                    W::pcmp(a, o, p, q, equal)?;
                    if negate {
                        W::vpxor(a, o, o, self.mask(ONES))?;
                    }
                }
                JitOp::Select => {
                    // `x` is the mask; on false in a register, on true
                    // wherever it is.
                    let mask = if x == t0 {
                        W::vmovaps(a, t1, t0)?;
                        t1
                    } else {
                        x
                    };
                    let on_false = self.in_reg(a, sz, t0)?;
                    W::blend(a, o, on_false, y, mask)?;
                }
                JitOp::FNeg => W::vxorps(a, o, x, self.mask(SIGN))?,
                JitOp::FAbs => W::vandps(a, o, x, self.mask(MAGNITUDE))?,
                JitOp::Fma(Contraction::Add) => {
                    // `o = x * y + z`, rounded once, in whichever form
                    // leaves the result in `o` without moves: the operand
                    // order of a product does not change its rounding. `o`
                    // may be the register of an operand that dies here.
                    let held = |s: Src| matches!(s, Src::Reg(r) if Self::r(r) == o);
                    let z = self.opnd(sz);
                    match (sy, sz) {
                        _ if held(sz) => W::vfmadd231ps(a, o, x, y)?,
                        (Src::Reg(y), _) if o == x => W::vfmadd213ps(a, o, Self::r(y), z)?,
                        (Src::Splat(_), Src::Reg(z)) if o == x => {
                            W::vfmadd132ps(a, o, Self::r(z), y)?
                        }
                        (Src::Splat(_), Src::Splat(k)) if o == x => {
                            W::load(a, t1, self.splat(k))?;
                            W::vfmadd231ps(a, t1, x, y)?;
                            W::vmovaps(a, o, t1)?;
                        }
                        _ if held(sy) => W::vfmadd213ps(a, o, x, z)?,
                        (_, Src::Reg(z)) => {
                            W::vmovaps(a, o, Self::r(z))?;
                            W::vfmadd231ps(a, o, x, y)?;
                        }
                        (_, Src::Splat(k)) => {
                            W::load(a, o, self.splat(k))?;
                            W::vfmadd231ps(a, o, x, y)?;
                        }
                    }
                }
                // The subtractions as the slice kernels do them: negate an
                // operand (its sign bit), then one fused multiply-add.
                JitOp::Fma(Contraction::SubtractFromProduct) => {
                    W::load(a, t1, self.frame.mask(SIGN))?;
                    W::vxorps(a, t1, t1, self.opnd(sz))?;
                    W::vfmadd231ps(a, t1, x, y)?;
                    W::vmovaps(a, o, t1)?;
                }
                JitOp::Fma(Contraction::SubtractProduct) => {
                    W::vxorps(a, t1, x, self.mask(SIGN))?;
                    let y = self.in_reg(a, sy, t0)?;
                    W::vfmadd213ps(a, t1, y, self.opnd(sz))?;
                    W::vmovaps(a, o, t1)?;
                }
                JitOp::IAdd => W::vpaddd(a, o, x, y)?,
                JitOp::ISub => W::vpsubd(a, o, x, y)?,
                JitOp::IMul => W::vpmulld(a, o, x, y)?,
                JitOp::INeg => {
                    W::vpxor(a, t1, t1, Opnd::Reg(t1))?;
                    W::vpsubd(a, o, t1, Opnd::Reg(x))?;
                }
                JitOp::IAbs => W::vpabsd(a, o, x)?,
                JitOp::And => W::vpand(a, o, x, y)?,
                JitOp::Or => W::vpor(a, o, x, y)?,
                JitOp::Xor => W::vpxor(a, o, x, y)?,
                JitOp::Not => W::vpxor(a, o, x, self.mask(ONES))?,
                JitOp::Shl => self.shift(a, W::vpsllvd, W::vpslld, o, x, sy)?,
                JitOp::ShrLogical => self.shift(a, W::vpsrlvd, W::vpsrld, o, x, sy)?,
                JitOp::ShrArithmetic => self.shift(a, W::vpsravd, W::vpsrad, o, x, sy)?,
                JitOp::ShiftPairOr => {
                    self.shift(a, W::vpsllvd, W::vpslld, t1, x, sy)?;
                    self.shift(a, W::vpsrlvd, W::vpsrld, o, x, sz)?;
                    W::vpor(a, o, o, Opnd::Reg(t1))?;
                }
                JitOp::SMax => W::vpmaxsd(a, o, x, y)?,
                JitOp::SMin => W::vpminsd(a, o, x, y)?,
                JitOp::UMax => W::vpmaxud(a, o, x, y)?,
                JitOp::UMin => W::vpminud(a, o, x, y)?,
                JitOp::Same => W::vmovaps(a, o, x)?,
                JitOp::Sqrt => W::vsqrtps(a, o, x)?,
                JitOp::Round(imm) => W::round(a, o, x, i32::from(*imm))?,
                JitOp::TruncToS32 => W::vcvttps2dq(a, o, x)?,
                JitOp::RoundToS32 => W::vcvtps2dq(a, o, x)?,
                JitOp::PickGreater => W::vmaxps(a, o, x, y)?,
                JitOp::PickLess => W::vminps(a, o, x, y)?,
                JitOp::ExpBelowNormal => {
                    // `x` is the argument (maybe in T0), `sy` the result so far,
                    // `sz` the bound.
                    let Src::Reg(e) = sy else {
                        return Err(GenError);
                    };
                    let e = Self::r(e);
                    W::lt_bits(a, x, self.opnd(sz), t1)?;
                    // The one-lane code has garbage in the other lanes.
                    let lanes = if self.wide { (1 << W::LANES) - 1 } else { 1 };
                    a.test(eax, lanes)?;
                    let entry = a.create_label();
                    let mut resume = a.create_label();
                    a.jnz(entry)?;
                    if o != e {
                        W::vmovaps(a, o, e)?;
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
                JitOp::FloatPredicate(p) => W::cmpps(a, o, x, y, i32::from(*p))?,
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
            let r = self.in_reg(a, src, t0)?;
            a.mov(r10, qword_ptr(rsi + (k * 8) as i32))?;
            let at = (W::LANES * g * d.outputs[k].width) as i32;
            if d.outputs[k].width == 1 {
                // A mask to `pred` bytes: its low bit, packed.
                W::low_bits(a, r)?;
                if self.wide {
                    W::store_bytes(a, r10 + rcx + at)?;
                } else {
                    a.vmovd(eax, xmm14)?;
                    a.mov(byte_ptr(r10 + rcx), al)?;
                }
            } else if self.wide {
                W::store(a, r10 + rcx * 4 + at, r)?;
            } else {
                let x = XMM[W::REGS.iter().position(|&y| y == r).ok_or(GenError)?];
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
fn assemble<W: Width>(d: &Desc, consts: u64) -> Result<Vec<u8>, GenError> {
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
    let v = 4 * W::LANES;
    let frame = Frame {
        v,
        n_scalars: scalars.len(),
        first_op: d.first_op(),
        computed: d.ops.len(),
        calls_out: d.ops.iter().any(|(op, _)| *op == JitOp::ExpBelowNormal),
        pool: W::POOL.len(),
    };
    let mut a = CodeAssembler::new(64)?;
    W::setup(&mut a);
    a.push(rbp)?;
    a.mov(rbp, rsp)?;
    a.and(rsp, -(v as i32))?;
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
    let t1 = W::REGS[T1];
    for (k, bits) in [
        (SIGN, 0x8000_0000u32),
        (MAGNITUDE, 0x7fff_ffff),
        (ONES, u32::MAX),
        (ZERO, 0),
    ] {
        a.mov(eax, bits)?;
        a.vmovd(xmm15, eax)?;
        W::broadcast(&mut a, t1, xmm15)?;
        W::store(&mut a, frame.mask(k), t1)?;
    }
    for (k, &s) in scalars.iter().enumerate() {
        a.mov(r10, qword_ptr(rdi + (s * 8) as i32))?;
        if d.inputs[s].width == 1 {
            // A uniform `pred`: its mask in every lane.
            a.cmp(byte_ptr(r10), 0)?;
            a.setne(al)?;
            a.movzx(eax, al)?;
            a.neg(eax)?;
            a.vmovd(xmm15, eax)?;
        } else {
            a.vmovss(xmm15, dword_ptr(r10))?;
        }
        W::broadcast(&mut a, t1, xmm15)?;
        W::store(&mut a, rsp + frame.splat(k), t1)?;
        if d.inputs[s].width == 4 {
            // `vmovd` zero-extends: the count is the amount as unsigned.
            a.vmovd(xmm15, dword_ptr(r10))?;
            a.vmovdqu(xmmword_ptr(rsp + frame.count(k)), xmm15)?;
        }
    }
    a.mov(r11, consts)?;
    a.xor(ecx, ecx)?;
    // The main loop takes GROUPS * LANES elements at a time, then one group
    // if that many are left, then the rest one by one (a masked pass at `zmm`
    // width measured slower on Zen 4: see docs/benchmarks.md).
    let mut main_loop = a.create_label();
    let mut one_group = a.create_label();
    let mut tail = a.create_label();
    let mut done = a.create_label();
    let mut calls = Vec::new();
    let (uses_grouped, uses_single) = (uses(d, GROUPS), uses(d, 1));
    let mut body = |a: &mut CodeAssembler, wide: bool, groups: usize| {
        let mut body = Body::<W> {
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
            holder: vec![None; W::POOL.len()],
            saved: vec![false; groups * n_values],
            calls: Vec::new(),
        };
        body.emit(a)?;
        calls.append(&mut body.calls);
        Ok::<(), GenError>(())
    };
    let lanes = W::LANES as i32;
    a.mov(r8, rdx)?;
    a.and(r8, -lanes * GROUPS as i32)?;
    a.set_label(&mut main_loop)?;
    a.cmp(rcx, r8)?;
    a.jae(one_group)?;
    body(&mut a, true, GROUPS)?;
    a.add(rcx, lanes * GROUPS as i32)?;
    a.jmp(main_loop)?;
    a.set_label(&mut one_group)?;
    a.mov(r8, rdx)?;
    a.and(r8, -lanes)?;
    a.cmp(rcx, r8)?;
    a.jae(tail)?;
    body(&mut a, true, 1)?;
    a.add(rcx, lanes)?;
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
        emit_call_out::<W>(&mut a, &frame, &mut call)?;
    }
    Ok(a.assemble(0)?)
}

/// A [`CallOut`]'s code: everything the loop keeps in registers is saved
/// in the frame around the call (every vector register is the caller's to
/// save in the System V ABI).
fn emit_call_out<W: Width>(
    a: &mut CodeAssembler,
    frame: &Frame,
    call: &mut CallOut<W::R>,
) -> Result<(), GenError> {
    let area = frame.call_area();
    let v = frame.v as i32;
    let x_at = area + v * W::POOL.len() as i32;
    let e_at = x_at + v;
    let gpr_at = e_at + v;
    a.set_label(&mut call.entry)?;
    for (k, &r) in W::POOL.iter().enumerate() {
        W::store(a, rsp + area + v * k as i32, W::REGS[r])?;
    }
    W::store(a, rsp + x_at, call.x)?;
    W::store(a, rsp + e_at, call.e)?;
    for (k, &g) in SAVED_GPRS.iter().enumerate() {
        a.mov(qword_ptr(rsp + gpr_at + 8 * k as i32), g)?;
    }
    a.vzeroupper()?;
    a.lea(rdi, ptr(rsp + x_at))?;
    a.lea(rsi, ptr(rsp + e_at))?;
    let helper: unsafe extern "sysv64" fn(*const f32, *mut f32) = match W::LANES {
        8 => exp_below_normal_lanes::<8>,
        _ => exp_below_normal_lanes::<16>,
    };
    a.mov(rax, helper as usize as u64)?;
    a.call(rax)?;
    for (k, &g) in SAVED_GPRS.iter().enumerate() {
        a.mov(g, qword_ptr(rsp + gpr_at + 8 * k as i32))?;
    }
    for (k, &r) in W::POOL.iter().enumerate() {
        W::load(a, W::REGS[r], rsp + area + v * k as i32)?;
    }
    W::load(a, call.o, rsp + e_at)?;
    a.jmp(call.resume)?;
    Ok(())
}
