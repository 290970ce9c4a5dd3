//! Cache block sizes for the GEMM, derived from the processor's caches.
//!
//! * `kc` (depth of a slice): an rhs micro-panel (`kc × NR`) should stay in
//!   L1 while every lhs strip of the block streams past it.
//! * `mc` (rows of an lhs block): the packed `mc × kc` block should sit in L2,
//!   where the kernel re-reads it once per rhs micro-panel.
//! * `nc` (columns of an rhs block): the packed `kc × nc` block is read once
//!   per lhs block; it only needs to stay in the last-level cache.
//! * `nc_one_pass` (the same, when one lhs block covers every row, as in a
//!   language-model head's `[64, 512] × [512, 32000]`): the packed block is
//!   read once, right after it is packed, so it is sized to still be in L2
//!   then. Packed to the last-level size, it went out to L3 and came back:
//!   that product took 37 ms instead of 23-24 on a 2-core AMD EPYC (512 KiB
//!   L2), `HOST_GEMM_NC` set to each in turn.
//!
//! * `narrow_panel_bytes` (a tall-skinny product, whose rhs is one
//!   micro-panel): the panel is all the rhs there is, and every tile of `C`
//!   reads it whole, so it only needs to stay in L2 (a quarter of it). Its
//!   depth `kc` is then as large as that allows (up to 4096): each shallower
//!   slice re-reads and re-writes the whole of `C` once more. For
//!   `f32[4096,512] x f32[512,16]`, `kc` 64 (the L1 rule) against 512 took
//!   0.94 against 0.74 ms.
//!
//! Cache sizes come from Linux's sysfs (`/sys/devices/system/cpu/cpu0/cache`),
//! else from conservative defaults (32 KiB L1d, 1 MiB L2, 8 MiB L3).
//! `HOST_GEMM_KC`, `HOST_GEMM_MC` and `HOST_GEMM_NC` override the results
//! (for tuning experiments; read once).

use std::sync::OnceLock;

/// Block sizes of one product.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Blocking {
    pub kc: usize,
    pub mc: usize,
    pub nc: usize,
    pub nc_one_pass: usize,
    /// Bytes of L2 a single rhs micro-panel may fill (0 when `kc` is
    /// overridden); see [`Blocking::kc_for_panel`].
    pub narrow_panel_bytes: usize,
}

/// Data cache sizes in bytes (per core for L1 and L2).
#[derive(Clone, Copy, Debug)]
struct Caches {
    l1: usize,
    l2: usize,
    l3: usize,
}

fn caches() -> Caches {
    static CACHES: OnceLock<Caches> = OnceLock::new();
    *CACHES.get_or_init(|| {
        let mut c = Caches {
            l1: 32 << 10,
            l2: 1 << 20,
            l3: 8 << 20,
        };
        for index in 0..8 {
            let dir = format!("/sys/devices/system/cpu/cpu0/cache/index{index}");
            let read = |f: &str| std::fs::read_to_string(format!("{dir}/{f}")).ok();
            let (Some(level), Some(kind), Some(size)) = (read("level"), read("type"), read("size"))
            else {
                continue;
            };
            if kind.trim() == "Instruction" {
                continue;
            }
            let Some(bytes) = parse_size(size.trim()) else {
                continue;
            };
            match level.trim() {
                "1" => c.l1 = bytes,
                "2" => c.l2 = bytes,
                "3" => c.l3 = bytes,
                _ => {}
            }
        }
        c
    })
}

/// `48K`, `2048K`, `260M`, `1024` → bytes.
fn parse_size(s: &str) -> Option<usize> {
    let (digits, scale) = match s.as_bytes().last()? {
        b'K' | b'k' => (&s[..s.len() - 1], 1 << 10),
        b'M' | b'm' => (&s[..s.len() - 1], 1 << 20),
        b'G' | b'g' => (&s[..s.len() - 1], 1 << 30),
        _ => (s, 1),
    };
    digits.trim().parse::<usize>().ok().map(|v| v * scale)
}

fn env_override(name: &str) -> Option<usize> {
    std::env::var(name).ok()?.trim().parse().ok()
}

impl Blocking {
    /// Block sizes for a `mr × nr` register tile of `T`.
    pub fn for_tile<T>(mr: usize, nr: usize) -> Blocking {
        static OVERRIDES: OnceLock<[Option<usize>; 3]> = OnceLock::new();
        let [kc_o, mc_o, nc_o] = *OVERRIDES.get_or_init(|| {
            [
                env_override("HOST_GEMM_KC"),
                env_override("HOST_GEMM_MC"),
                env_override("HOST_GEMM_NC"),
            ]
        });
        let size = std::mem::size_of::<T>().max(1);
        let c = caches();
        // Half of L1 for the rhs micro-panel, the rest for the lhs strip and C.
        let kc = kc_o
            .unwrap_or_else(|| (c.l1 / 2 / (nr * size)).clamp(64, 512))
            .max(1);
        // Half of L2 for the lhs block.
        let mc = mc_o
            .unwrap_or_else(|| (c.l2 / 2 / (kc * size)).clamp(mr, 4096))
            .max(mr);
        // A quarter of the last-level cache (shared by the cores) for the rhs block.
        let nc = nc_o
            .unwrap_or_else(|| (c.l3.min(64 << 20) / 4 / (kc * size)).clamp(nr, 8192))
            .max(nr);
        // All of L2 for the packed rhs block that one lhs block reads.
        let nc_one_pass = nc_o
            .unwrap_or_else(|| (c.l2 / (kc * size)).clamp(nr, nc))
            .max(nr);
        Blocking {
            kc,
            mc,
            nc,
            nc_one_pass,
            narrow_panel_bytes: if kc_o.is_some() { 0 } else { c.l2 / 4 },
        }
    }

    /// The slice depth for a product whose rhs is one micro-panel with rows
    /// of `row_bytes`: as deep as fits `narrow_panel_bytes`, at least `kc`.
    pub fn kc_for_panel(&self, row_bytes: usize) -> usize {
        (self.narrow_panel_bytes / row_bytes.max(1)).clamp(self.kc, self.kc.max(4096))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("48K"), Some(48 << 10));
        assert_eq!(parse_size("260M"), Some(260 << 20));
        assert_eq!(parse_size("1024"), Some(1024));
        assert_eq!(parse_size("x"), None);
    }

    #[test]
    fn blocks_are_sane() {
        let b = Blocking::for_tile::<f32>(6, 64);
        assert!(b.kc >= 1 && b.mc >= 6 && b.nc >= 64, "{b:?}");
        assert!(b.nc_one_pass >= 64 && b.nc_one_pass <= b.nc, "{b:?}");
    }
}
