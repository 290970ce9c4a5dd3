//! The text form of literals: `Display` (and `values_text`) and the parser's
//! `parse_literal` / `parse_literal_values` read each other back exactly, bit for
//! bit, for every element type, the special float values, type extremes, empty and
//! nested-empty arrays, ranks 0 to 4 and tuples.

use half::{bf16, f16};
use hlo_ir::parser::{parse_literal, parse_literal_values};
use hlo_ir::{ElementType, Literal, NativeType, Scalar, Shape};
use num_complex::{Complex32, Complex64};

/// Display → parse gives back the same literal (same shape, same bytes).
fn round_trip(literal: &Literal) -> String {
    let text = literal.to_string();
    let back = parse_literal(&text).unwrap_or_else(|e| panic!("parse of {text:?}: {e}"));
    assert_eq!(&back, literal, "{text}");
    // The values alone read back too, given the shape.
    let values = literal.values_text();
    let back = parse_literal_values(&values, literal.shape())
        .unwrap_or_else(|e| panic!("parse of values {values:?}: {e}"));
    assert_eq!(&back, literal, "{values}");
    text
}

fn scalar_text<T: NativeType>(v: T) -> String {
    round_trip(&Literal::scalar(v))
}

#[test]
fn special_float_values_in_every_float_type() {
    // Spellings are HLO's: nan, -nan, inf, -inf, -0.
    assert_eq!(scalar_text(f32::NAN), "f32[] nan");
    assert_eq!(scalar_text(-f32::NAN), "f32[] -nan");
    assert_eq!(scalar_text(f32::INFINITY), "f32[] inf");
    assert_eq!(scalar_text(f32::NEG_INFINITY), "f32[] -inf");
    assert_eq!(scalar_text(-0.0f32), "f32[] -0");
    assert_eq!(scalar_text(-f64::NAN), "f64[] -nan");
    assert_eq!(scalar_text(f64::NEG_INFINITY), "f64[] -inf");
    assert_eq!(scalar_text(-0.0f64), "f64[] -0");
    assert_eq!(scalar_text(-f16::NAN), "f16[] -nan");
    assert_eq!(scalar_text(f16::NEG_INFINITY), "f16[] -inf");
    assert_eq!(scalar_text(f16::NEG_ZERO), "f16[] -0");
    assert_eq!(scalar_text(-bf16::NAN), "bf16[] -nan");
    assert_eq!(scalar_text(bf16::INFINITY), "bf16[] inf");
    assert_eq!(scalar_text(bf16::NEG_ZERO), "bf16[] -0");
}

#[test]
fn nan_payloads_are_kept() {
    // XLA's spelling: the plain quiet NaN is `nan`; any other payload is shown.
    assert_eq!(scalar_text(f32::from_bits(0x7f80_0001)), "f32[] nan(0x1)");
    assert_eq!(
        scalar_text(f32::from_bits(0xffc0_0001)),
        "f32[] -nan(0x400001)"
    );
    assert_eq!(
        scalar_text(f64::from_bits(0x7ff0_0000_0000_0002)),
        "f64[] nan(0x2)"
    );
    assert_eq!(scalar_text(f16::from_bits(0x7c01)), "f16[] nan(0x1)");
    assert_eq!(scalar_text(bf16::from_bits(0xff81)), "bf16[] -nan(0x1)");
    round_trip(&Literal::vector(&[Complex32::new(
        f32::from_bits(0x7fbf_ffff),
        f32::NAN,
    )]));
    for (text, why) in [
        ("f32[] nan(0x0)", "non-zero"),
        ("f32[] nan(0x800000)", "at most 23 bits"),
        ("f16[] nan(0x400)", "at most 10 bits"),
        ("f32[] nan(12)", "hex"),
    ] {
        let err = parse_literal(text).expect_err(text);
        assert!(err.message().contains(why), "{text}: {err}");
    }
}

#[test]
fn float_extremes_and_subnormals_round_trip_exactly() {
    for v in [
        f32::MIN_POSITIVE,
        f32::from_bits(1),         // smallest subnormal
        f32::from_bits(0x7f_ffff), // largest subnormal
        f32::MAX,
        f32::MIN,
        f32::EPSILON,
        0.1,
        1.0 / 3.0,
        16_777_217.0,
    ] {
        round_trip(&Literal::scalar(v));
        round_trip(&Literal::scalar(-v));
    }
    for v in [
        f64::MIN_POSITIVE,
        f64::from_bits(1),
        f64::from_bits(0xf_ffff_ffff_ffff),
        f64::MAX,
        f64::EPSILON,
        0.1,
        1.0 / 3.0,
        9_007_199_254_740_993.0,
    ] {
        round_trip(&Literal::scalar(v));
        round_trip(&Literal::scalar(-v));
    }
    for bits in [1u16, 0x3ff, 0x400, 0x7bff, 0x3555, 0x2e66] {
        round_trip(&Literal::scalar(f16::from_bits(bits)));
        round_trip(&Literal::scalar(f16::from_bits(bits | 0x8000)));
    }
    for bits in [1u16, 0x7f, 0x80, 0x7f7f, 0x3eab, 0x3dcd] {
        round_trip(&Literal::scalar(bf16::from_bits(bits)));
        round_trip(&Literal::scalar(bf16::from_bits(bits | 0x8000)));
    }
}

/// Deterministic pseudo-random bits (SplitMix64).
fn bits_stream(seed: u64) -> impl FnMut() -> u64 {
    let mut state = seed;
    move || {
        state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
}

#[test]
fn random_bit_patterns_of_every_type_round_trip() {
    let mut next = bits_stream(42);
    for ty in ElementType::ALL {
        let dims = [3usize, 5, 7];
        let mut literal = Literal::zeros(&Shape::array(ty, dims.to_vec()));
        let count = literal.element_count();
        for i in 0..count {
            let mut bytes = [0u8; 16];
            for chunk in bytes.chunks_mut(8) {
                chunk.copy_from_slice(&next().to_le_bytes());
            }
            if ty == ElementType::Pred {
                bytes[0] &= 1;
            }
            // Any bits at all, NaN payloads included: the text keeps them.
            let value = Scalar::from_bytes(ty, &bytes[..ty.byte_size()]);
            literal.set(i, value).unwrap();
        }
        round_trip(&literal);
    }
}

#[test]
fn integer_extremes() {
    macro_rules! extremes {
        ($($t:ty),*) => {$(
            let lit = Literal::vector(&[<$t>::MIN, <$t>::MAX, 0 as $t, 1 as $t]);
            let text = round_trip(&lit);
            assert!(text.contains(&<$t>::MAX.to_string()), "{text}");
            assert!(text.contains(&<$t>::MIN.to_string()), "{text}");
        )*};
    }
    extremes!(i8, i16, i32, i64, u8, u16, u32, u64);
    assert_eq!(
        scalar_text(u64::MAX),
        format!("u64[] {}", u64::MAX),
        "u64 max prints in full"
    );
    assert_eq!(scalar_text(i64::MIN), format!("s64[] {}", i64::MIN));
}

#[test]
fn out_of_range_integers_are_refused() {
    for (text, ty) in [
        ("s8[] 128", "s8"),
        ("s8[] -129", "s8"),
        ("u8[] 256", "u8"),
        ("u8[] -1", "u8"),
        ("s32[] 2147483648", "s32"),
        ("u32[] 4294967296", "u32"),
        ("s64[] 9223372036854775808", "s64"),
        ("u64[] 18446744073709551616", "u64"),
        ("u64[] 99999999999999999999999999999999999999999", "u64"),
    ] {
        let err = parse_literal(text).expect_err(text);
        assert!(
            err.message().contains(&format!("for {ty}")) || err.message().contains(ty),
            "{text}: {err}"
        );
        assert!(err.message().starts_with("1:"), "{text}: {err}");
    }
}

#[test]
fn pred_and_complex() {
    assert_eq!(
        round_trip(&Literal::from_bools(&[3], &[true, false, true]).unwrap()),
        "pred[3] {true, false, true}"
    );
    let c = Literal::vector(&[
        Complex32::new(1.5, -2.0),
        Complex32::new(f32::NAN, f32::NEG_INFINITY),
        Complex32::new(-0.0, f32::from_bits(1)),
    ]);
    assert_eq!(
        round_trip(&c).split(' ').next(),
        Some("c64[3]"),
        "c64 shape"
    );
    assert!(c.to_string().contains("(nan, -inf)"), "{c}");
    round_trip(&Literal::vector(&[
        Complex64::new(f64::MAX, -f64::MIN_POSITIVE),
        Complex64::new(-f64::NAN, 0.1),
    ]));
}

fn iota_f32(dims: &[usize]) -> Literal {
    let n: usize = dims.iter().product();
    Literal::from_slice(dims, &(0..n).map(|i| i as f32 - 3.5).collect::<Vec<_>>()).unwrap()
}

#[test]
fn ranks_zero_to_four() {
    assert_eq!(round_trip(&Literal::scalar(7i32)), "s32[] 7");
    assert_eq!(
        round_trip(&Literal::vector(&[1i32, 2, 3])),
        "s32[3] {1, 2, 3}"
    );
    assert_eq!(
        round_trip(&Literal::from_slice(&[2, 2], &[1i32, 2, 3, 4]).unwrap()),
        "s32[2,2] { {1, 2}, {3, 4} }"
    );
    for dims in [
        &[2usize, 3, 4][..],
        &[2, 1, 3, 2],
        &[1, 1, 1, 1],
        &[3, 2, 1],
    ] {
        round_trip(&iota_f32(dims));
    }
}

#[test]
fn empty_and_nested_empty_arrays() {
    for dims in [
        &[0usize][..],
        &[0, 3],
        &[3, 0],
        &[2, 0, 3],
        &[2, 3, 0],
        &[0, 0],
        &[1, 0, 1, 0],
    ] {
        let literal = Literal::zeros(&Shape::array(ElementType::F32, dims.to_vec()));
        round_trip(&literal);
    }
    assert_eq!(
        Literal::zeros(&Shape::array(ElementType::S32, vec![2, 0])).to_string(),
        "s32[2,0] { {}, {} }"
    );
    assert_eq!(
        Literal::zeros(&Shape::array(ElementType::S32, vec![0, 2])).to_string(),
        "s32[0,2] {}"
    );
    // A count that does not match the shape is an error, located.
    let err = parse_literal("s32[2,0] { {} }").unwrap_err();
    assert!(
        err.message().contains("has 2 elements, but 1 are written"),
        "{err}"
    );
    let err = parse_literal("s32[2] {1, 2, 3}").unwrap_err();
    assert!(err.message().starts_with("1:15:"), "{err}");
}

#[test]
fn tuples_nested_and_empty() {
    let inner = Literal::tuple(vec![Literal::scalar(1.5f32), Literal::vector(&[1u8, 2])]);
    let t = Literal::tuple(vec![
        inner.clone(),
        Literal::tuple(vec![]),
        Literal::from_bools(&[2], &[true, false]).unwrap(),
        Literal::scalar(bf16::from_f32(-2.5)),
        Literal::token(),
    ]);
    let text = round_trip_tuple(&t);
    assert_eq!(
        text,
        "((f32[] 1.5, u8[2] {1, 2}), (), pred[2] {true, false}, bf16[] -2.5, token[] token)"
    );
    assert_eq!(round_trip_tuple(&Literal::tuple(vec![])), "()");
    // The form with the whole tuple shape in front (as constants are written).
    let lit = parse_literal("(f32[], (u8[2])) (1.5, ({1, 2}))").unwrap();
    assert_eq!(
        lit,
        Literal::tuple(vec![
            Literal::scalar(1.5f32),
            Literal::tuple(vec![Literal::vector(&[1u8, 2])])
        ])
    );
    // values_text of a tuple reads back given the shape.
    let back = parse_literal_values(&inner.values_text(), inner.shape()).unwrap();
    assert_eq!(back, inner);
}

/// Tuples with tokens have no `values_text` form to check, only `Display`.
fn round_trip_tuple(literal: &Literal) -> String {
    let text = literal.to_string();
    let back = parse_literal(&text).unwrap_or_else(|e| panic!("parse of {text:?}: {e}"));
    assert_eq!(&back, literal, "{text}");
    text
}

#[test]
fn deep_nesting_is_refused_not_a_stack_overflow() {
    let deep = format!("{}f32[] 1{}", "(".repeat(10_000), ")".repeat(10_000));
    let err = parse_literal(&deep).unwrap_err();
    assert!(err.message().contains("nest more than"), "{err}");
    // High rank is fine: reading and printing are iterative.
    let dims = vec![1usize; 3000];
    let literal = Literal::zeros(&Shape::array(ElementType::S8, dims));
    round_trip(&literal);
}

#[test]
fn accepted_spellings_beyond_the_printed_ones() {
    let cases: &[(&str, Literal)] = &[
        ("f32[] -Inf", Literal::scalar(f32::NEG_INFINITY)),
        ("f32[] +inf", Literal::scalar(f32::INFINITY)),
        ("f32[] 1e+10", Literal::scalar(1e10f32)),
        ("f32[] .5", Literal::scalar(0.5f32)),
        (
            "f64[] nan(0x8000000000001)",
            Literal::scalar(f64::from_bits(0x7ff8_0000_0000_0001)),
        ),
        (
            "pred[2] {1, 0}",
            Literal::from_bools(&[2], &[true, false]).unwrap(),
        ),
        ("s32[] +5", Literal::scalar(5i32)),
        ("f16[] 65520", Literal::scalar(f16::INFINITY)),
        ("bf16[] 1.00390625", Literal::scalar(bf16::from_f32(1.0))),
    ];
    for (text, want) in cases {
        let got = parse_literal(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(&got, want, "{text}");
    }
}
