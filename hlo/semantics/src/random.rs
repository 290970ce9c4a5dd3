//! The counter-based random bit generators of `rng-bit-generator`, as XLA
//! defines them: Threefry-2x32 (20 rounds) and Philox-4x32 (10 rounds), the
//! Random123 block functions. Every platform turns counters into bits with
//! these (how counters map to elements is each backend's own code), so
//! results are bit-identical to XLA's everywhere.

const THREEFRY_ROTATIONS: [u32; 8] = [13, 15, 26, 6, 17, 29, 16, 24];

/// Threefry-2x32 with 20 rounds: one block of `input` (the counter) under `key`.
pub fn threefry2x32(input: [u32; 2], key: [u32; 2]) -> [u32; 2] {
    let ks = [key[0], key[1], 0x1BD1_1BDA ^ key[0] ^ key[1]];
    let mut x = [input[0].wrapping_add(ks[0]), input[1].wrapping_add(ks[1])];
    let round = |x: &mut [u32; 2], r: u32| {
        x[0] = x[0].wrapping_add(x[1]);
        x[1] = x[1].rotate_left(r);
        x[1] ^= x[0];
    };
    for block in 0..5u32 {
        let rots = if block % 2 == 0 {
            &THREEFRY_ROTATIONS[..4]
        } else {
            &THREEFRY_ROTATIONS[4..]
        };
        for &r in rots {
            round(&mut x, r);
        }
        let i = block as usize + 1;
        x[0] = x[0].wrapping_add(ks[i % 3]);
        x[1] = x[1].wrapping_add(ks[(i + 1) % 3]).wrapping_add(block + 1);
    }
    x
}

/// Philox-4x32 with 10 rounds: one block of `x` (the counter) under `key`.
pub fn philox4x32(mut x: [u32; 4], mut key: [u32; 2]) -> [u32; 4] {
    const M_A: u64 = 0xD251_1F53;
    const M_B: u64 = 0xCD9E_8D57;
    for _ in 0..10 {
        let p0 = x[0] as u64 * M_A;
        let p1 = x[2] as u64 * M_B;
        x = [
            ((p1 >> 32) as u32) ^ x[1] ^ key[0],
            p1 as u32,
            ((p0 >> 32) as u32) ^ x[3] ^ key[1],
            p0 as u32,
        ];
        key = [
            key[0].wrapping_add(0x9E37_79B9),
            key[1].wrapping_add(0xBB67_AE85),
        ];
    }
    x
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn threefry_known_answer() {
        // Random123's published known-answer vectors for Threefry-2x32-20.
        assert_eq!(threefry2x32([0, 0], [0, 0]), [0x6b20_0159, 0x99ba_4efe]);
        assert_eq!(
            threefry2x32([0xffff_ffff, 0xffff_ffff], [0xffff_ffff, 0xffff_ffff]),
            [0x1cb9_96fc, 0xbb00_2be7]
        );
        assert_eq!(
            threefry2x32([0x243f_6a88, 0x85a3_08d3], [0x1319_8a2e, 0x0370_7344]),
            [0xc492_3a9c, 0x483d_f7a0]
        );
    }

    #[test]
    fn philox_known_answer() {
        // Random123's known-answer vectors for Philox-4x32-10.
        assert_eq!(
            philox4x32([0, 0, 0, 0], [0, 0]),
            [0x6627_e8d5, 0xe169_c58d, 0xbc57_ac4c, 0x9b00_dbd8]
        );
        assert_eq!(
            philox4x32([0xffff_ffff; 4], [0xffff_ffff; 2]),
            [0x408f_276d, 0x41c8_3b0e, 0xa20b_c7c6, 0x6d54_51fd]
        );
        assert_eq!(
            philox4x32(
                [0x243f_6a88, 0x85a3_08d3, 0x1319_8a2e, 0x0370_7344],
                [0xa409_3822, 0x299f_31d0]
            ),
            [0xd16c_fe09, 0x94fd_cceb, 0x5001_e420, 0x2412_6ea1]
        );
    }
}
