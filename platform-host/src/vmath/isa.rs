//! Instruction-set levels and the machinery that compiles one generic kernel
//! body once per level.
//!
//! A kernel is written once as an `#[inline(always)]` function generic over an
//! [`Isa`] marker type. The marker only carries compile-time facts (is a fused
//! multiply-add available, is there a rounding instruction, ...) that the body
//! uses to pick between two formulations. [`dispatch!`] then calls the body
//! from inside a `#[target_feature]` trampoline for the chosen [`Level`], so
//! LLVM inlines and vectorises it with that level's registers and
//! instructions: the same source gives an SSE2, an AVX2+FMA and an AVX-512 loop.

use std::sync::atomic::{AtomicU8, Ordering};

/// An instruction-set level the kernels are compiled for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// x86-64 baseline (SSE2) or any other architecture: what `rustc` targets by
    /// default. No fused multiply-add, no rounding instruction.
    Baseline,
    /// AVX2 + FMA + F16C (Haswell and later, Zen and later): 256-bit vectors.
    Avx2,
    /// AVX-512 F/VL/DQ/BW on top of [`Level::Avx2`] (Skylake-SP and later, Zen 4):
    /// 512-bit vectors and mask registers.
    Avx512,
}

impl Level {
    /// Every level, lowest first.
    pub const ALL: [Level; 3] = [Level::Baseline, Level::Avx2, Level::Avx512];

    /// The level's lower-case name (`baseline`, `avx2`, `avx512`), as accepted by
    /// `VMATH_LEVEL`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Baseline => "baseline",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// Parses a name as written by [`Level::name`] (case-insensitive).
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this machine can run code compiled for this level.
    pub fn is_supported(self) -> bool {
        self <= detected_level()
    }

    fn code(self) -> u8 {
        self as u8 + 1
    }

    fn from_code(code: u8) -> Level {
        match code {
            3 => Level::Avx512,
            2 => Level::Avx2,
            _ => Level::Baseline,
        }
    }
}

impl std::fmt::Display for Level {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The best level this machine supports (probed once).
pub fn detected_level() -> Level {
    static DETECTED: AtomicU8 = AtomicU8::new(0);
    match DETECTED.load(Ordering::Relaxed) {
        0 => {
            let level = probe();
            DETECTED.store(level.code(), Ordering::Relaxed);
            level
        }
        code => Level::from_code(code),
    }
}

#[cfg(target_arch = "x86_64")]
fn probe() -> Level {
    use std::arch::is_x86_feature_detected as has;
    let avx2 = has!("avx2")
        && has!("fma")
        && has!("f16c")
        && has!("bmi1")
        && has!("bmi2")
        && has!("lzcnt")
        && has!("popcnt")
        && has!("sse4.2");
    let avx512 =
        avx2 && has!("avx512f") && has!("avx512vl") && has!("avx512dq") && has!("avx512bw");
    if avx512 {
        Level::Avx512
    } else if avx2 {
        Level::Avx2
    } else {
        Level::Baseline
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn probe() -> Level {
    Level::Baseline
}

/// The level used by the kernels that take no explicit level: the detected one,
/// lowered by the `VMATH_LEVEL` environment variable (read once) or by
/// [`set_level`]. One relaxed atomic load after the first call.
#[inline]
pub fn level() -> Level {
    match ACTIVE.load(Ordering::Relaxed) {
        0 => init_active(),
        code => Level::from_code(code),
    }
}

static ACTIVE: AtomicU8 = AtomicU8::new(0);

#[cold]
fn init_active() -> Level {
    let detected = detected_level();
    let level = match std::env::var("VMATH_LEVEL") {
        Ok(name) => match Level::from_name(&name) {
            Some(wanted) => wanted.min(detected),
            None => {
                tracing_warn(&name);
                detected
            }
        },
        Err(_) => detected,
    };
    // Another thread may have initialised (or set) it meanwhile; keep theirs.
    match ACTIVE.compare_exchange(0, level.code(), Ordering::Relaxed, Ordering::Relaxed) {
        Ok(_) => level,
        Err(code) => Level::from_code(code),
    }
}

fn tracing_warn(name: &str) {
    eprintln!("vmath: ignoring VMATH_LEVEL={name:?} (expected one of baseline, avx2, avx512)");
}

/// Makes `wanted` the level of every later call without an explicit level (for
/// benchmarks and experiments). A level above what the machine supports is an
/// error naming both; the previous level is returned.
pub fn set_level(wanted: Level) -> platform_api::Result<Level> {
    let detected = detected_level();
    if wanted > detected {
        return Err(platform_api::Error::invalid_argument(format!(
            "vmath level {wanted} is not supported by this CPU (best: {detected})"
        )));
    }
    let previous = level();
    ACTIVE.store(wanted.code(), Ordering::Relaxed);
    Ok(previous)
}

/// Compile-time facts about a level that generic kernel bodies branch on (the
/// branches fold away in each instantiation).
pub trait Isa: Copy + 'static {
    /// A fused multiply-add instruction exists (`f32::mul_add` is one instruction).
    const FMA: bool;
    /// `roundps`/`vrndscaleps` exist (`f32::floor` etc. are one instruction
    /// instead of a call into the C library).
    const ROUND: bool;
    /// Hardware `f16 ↔ f32` conversion (F16C).
    const F16C: bool;
    /// 512-bit vectors.
    const WIDE: bool;
}

/// [`Level::Baseline`].
#[derive(Clone, Copy, Debug)]
pub struct Base;
/// [`Level::Avx2`].
#[derive(Clone, Copy, Debug)]
pub struct Avx2;
/// [`Level::Avx512`].
#[derive(Clone, Copy, Debug)]
pub struct Avx512;

impl Isa for Base {
    const FMA: bool = false;
    const ROUND: bool = false;
    const F16C: bool = false;
    const WIDE: bool = false;
}
impl Isa for Avx2 {
    const FMA: bool = true;
    const ROUND: bool = true;
    const F16C: bool = true;
    const WIDE: bool = false;
}
impl Isa for Avx512 {
    const FMA: bool = true;
    const ROUND: bool = true;
    const F16C: bool = true;
    const WIDE: bool = true;
}

/// Runs `f` compiled with the AVX2 level's features.
///
/// # Safety
/// The CPU must support [`Level::Avx2`].
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt,sse3,ssse3,sse4.1,sse4.2")]
pub(crate) unsafe fn run_avx2<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// Runs `f` compiled with the AVX-512 level's features.
///
/// # Safety
/// The CPU must support [`Level::Avx512`].
#[cfg(target_arch = "x86_64")]
#[target_feature(
    enable = "avx,avx2,fma,f16c,bmi1,bmi2,lzcnt,popcnt,sse3,ssse3,sse4.1,sse4.2,avx512f,avx512vl,avx512dq,avx512bw"
)]
pub(crate) unsafe fn run_avx512<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `dispatch!(level, I => body)`: evaluates `body` with the type alias `I`
/// bound to the [`Isa`] marker of `level`, compiled for that level. A level the
/// CPU does not support is lowered to the best one it does (callers get levels
/// from [`level`] or check [`Level::is_supported`], so this only guards misuse).
macro_rules! dispatch {
    ($level:expr, $I:ident => $body:expr) => {{
        #[allow(unused_imports)]
        use $crate::vmath::isa::Isa as _;
        let level: $crate::vmath::Level = $level;
        let level = level.min($crate::vmath::detected_level());
        match level {
            #[cfg(target_arch = "x86_64")]
            $crate::vmath::Level::Avx512 => {
                let body = || {
                    #[allow(dead_code)]
                    type $I = $crate::vmath::isa::Avx512;
                    $body
                };
                // SAFETY: `level` is at most the detected level, so the CPU has
                // every feature the trampoline enables.
                unsafe { $crate::vmath::isa::run_avx512(body) }
            }
            #[cfg(target_arch = "x86_64")]
            $crate::vmath::Level::Avx2 => {
                let body = || {
                    #[allow(dead_code)]
                    type $I = $crate::vmath::isa::Avx2;
                    $body
                };
                // SAFETY: as above.
                unsafe { $crate::vmath::isa::run_avx2(body) }
            }
            _ => {
                #[allow(dead_code)]
                type $I = $crate::vmath::isa::Base;
                $body
            }
        }
    }};
}
pub(crate) use dispatch;
