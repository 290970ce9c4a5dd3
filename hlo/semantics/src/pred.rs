//! `pred` semantics on bytes holding 0 or 1 (how `pred` is stored).
//!
//! XLA treats `pred` arithmetic as `int8(x) op int8(y) != 0`, which for 0/1 values
//! makes `add` and `maximum` the same as `or`, and `multiply` and `minimum` the same
//! as `and`; `not` is logical. Comparisons order `false < true`.

/// `not`: logical.
#[inline]
pub fn not(x: u8) -> u8 {
    (x == 0) as u8
}

/// `and`, also `multiply` and `minimum`.
#[inline]
pub fn and(a: u8, b: u8) -> u8 {
    a & b
}

/// `or`, also `add` and `maximum`.
#[inline]
pub fn or(a: u8, b: u8) -> u8 {
    a | b
}

/// `xor`.
#[inline]
pub fn xor(a: u8, b: u8) -> u8 {
    a ^ b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn truth_tables() {
        assert_eq!([not(0), not(1)], [1, 0]);
        assert_eq!([and(0, 0), and(0, 1), and(1, 0), and(1, 1)], [0, 0, 0, 1]);
        assert_eq!([or(0, 0), or(0, 1), or(1, 0), or(1, 1)], [0, 1, 1, 1]);
        assert_eq!([xor(0, 0), xor(0, 1), xor(1, 0), xor(1, 1)], [0, 1, 1, 0]);
    }
}
