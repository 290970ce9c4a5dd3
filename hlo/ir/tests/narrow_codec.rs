//! The narrow float codec (`hlo_ir::narrow`) against `ml_dtypes`, on every bit
//! pattern of every format and on `f32` values at every rounding boundary
//! (the midpoints between neighbours and one `f32` ulp either side), the
//! overflow thresholds, infinities, NaNs and zeros. The expected values come
//! from `data/narrow_codec.txt`, written by `scripts/gen_narrow_cases.py`
//! from `ml_dtypes`.

use hlo_ir::narrow::MiniFloat;
use hlo_ir::ElementType;

struct Row {
    kind: String,
    ty: ElementType,
    a: u32,
    b: u32,
}

fn table() -> Vec<Row> {
    let text = include_str!("data/narrow_codec.txt");
    text.lines()
        .filter(|l| !l.starts_with('#') && !l.is_empty())
        .map(|l| {
            let f: Vec<&str> = l.split_whitespace().collect();
            Row {
                kind: f[0].to_string(),
                ty: ElementType::from_name(f[1]).unwrap_or_else(|| panic!("type {}", f[1])),
                a: u32::from_str_radix(f[2], 16).unwrap(),
                b: u32::from_str_radix(f[3], 16).unwrap(),
            }
        })
        .collect()
}

#[test]
fn every_narrow_float_format_is_in_the_table() {
    let rows = table();
    for ty in ElementType::NARROW.into_iter().filter(|t| t.is_float()) {
        let patterns = rows
            .iter()
            .filter(|r| r.ty == ty && r.kind == "decode")
            .count();
        assert_eq!(patterns, 1 << ty.bit_width(), "{ty}");
        assert!(
            rows.iter().any(|r| r.ty == ty && r.kind == "encode"),
            "{ty}"
        );
    }
}

#[test]
fn decode_matches_ml_dtypes_on_every_bit_pattern() {
    let mut bad = Vec::new();
    for r in table().iter().filter(|r| r.kind == "decode") {
        let f = MiniFloat::of(r.ty).unwrap();
        let got = f.decode(r.a as u8) as f32;
        let want = f32::from_bits(r.b);
        let ok = if want.is_nan() {
            got.is_nan() && f.is_nan(r.a as u8)
        } else {
            got.to_bits() == want.to_bits() && !f.is_nan(r.a as u8)
        };
        if !ok {
            bad.push(format!("{} {:#04x}: got {got:e}, want {want:e}", r.ty, r.a));
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

#[test]
fn decode_then_encode_is_the_identity_off_nan() {
    for ty in ElementType::NARROW.into_iter().filter(|t| t.is_float()) {
        let f = MiniFloat::of(ty).unwrap();
        for bits in 0..(1u16 << ty.bit_width()) {
            let bits = bits as u8;
            if f.is_nan(bits) {
                continue;
            }
            assert_eq!(f.encode(f.decode(bits)), bits, "{ty} {bits:#04x}");
        }
    }
}

#[test]
fn encode_matches_ml_dtypes_at_rounding_boundaries_and_overflow() {
    let mut bad = Vec::new();
    let mut count = 0;
    for r in table().iter().filter(|r| r.kind == "encode") {
        let f = MiniFloat::of(r.ty).unwrap();
        let x = f32::from_bits(r.a);
        let got = f.encode(f64::from(x));
        count += 1;
        // A negative NaN into a format without NaN: XLA CPU gives -0 (as for
        // any NaN, `tests/narrow/convert_f32_f4e2m1fn`), ml_dtypes +0. XLA wins.
        let xla_differs = x.is_nan() && x.is_sign_negative() && f.nan(false).is_none();
        if xla_differs {
            assert_eq!(got, f.encode(f64::NAN), "{}", r.ty);
            continue;
        }
        if u32::from(got) != r.b {
            bad.push(format!(
                "{} encode({x:e} = {:#010x}): got {got:#04x}, want {:#04x}",
                r.ty, r.a, r.b
            ));
        }
    }
    assert!(count > 1000, "only {count} encode rows");
    assert!(
        bad.is_empty(),
        "{} mismatches:\n{}",
        bad.len(),
        bad.join("\n")
    );
}

#[test]
fn narrow_literals_print_and_parse() {
    use hlo_ir::parser::parse_literal;
    let lit = parse_literal("f8e4m3fn[2] {1, 0.5}").unwrap();
    assert_eq!(lit.bytes().unwrap(), &[0x38, 0x30]);
    assert_eq!(lit.to_string(), "f8e4m3fn[2] {1, 0.5}");
    for text in [
        "s4[3] {-8, 7, 0}",
        "u2[2] {3, 0}",
        "f4e2m1fn[3] {6, -0.5, 0}",
        "f8e5m2[3] {inf, -nan, 57344}",
        "f8e4m3fnuz[2] {nan, -240}",
        "f8e8m0fnu[2] {1, 2}",
    ] {
        let lit = parse_literal(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(lit.to_string(), text);
    }
    assert_eq!(
        parse_literal("s4[1] {-8}").unwrap().bytes().unwrap(),
        &[0x8]
    );
    assert!(parse_literal("s4[1] {8}").is_err());
    assert!(parse_literal("u2[1] {-1}").is_err());
}

#[test]
fn narrow_npy_files_hold_raw_bytes_like_np_save() {
    use hlo_ir::literal::Literal;
    let lit = hlo_ir::parser::parse_literal("f8e4m3fn[3] {1, -2, 0.5}").unwrap();
    let bytes = lit.to_npy_bytes().unwrap();
    let header = String::from_utf8_lossy(&bytes[..128]).to_string();
    assert!(header.contains("'descr': '<V1'"), "{header}");
    let back = Literal::from_npy_bytes(&bytes).unwrap();
    assert_eq!(back.shape().element_type(), Some(ElementType::U8));
    let typed = back.reinterpret(ElementType::F8E4M3FN).unwrap();
    assert_eq!(typed, lit);
    // float8_e5m2 is written by np.save as '<f1': read as raw bytes too.
    let mut f1 = bytes.clone();
    let at = f1.windows(3).position(|w| w == b"<V1").unwrap();
    f1[at + 1] = b'f';
    let back = Literal::from_npy_bytes(&f1).unwrap();
    assert_eq!(back.reinterpret(ElementType::F8E4M3FN).unwrap(), lit);
}

#[test]
fn the_byte_helpers_are_total_on_every_type_and_every_byte() {
    // Meant for the narrow types, but public: a wider type is read as its
    // storage byte rather than overflowing a shift.
    let types = ElementType::ALL.into_iter().chain(ElementType::NARROW);
    for ty in types.chain([ElementType::F32, ElementType::S64, ElementType::U64]) {
        for bits in 0..=u8::MAX {
            let v = hlo_ir::narrow::decode(ty, bits);
            let _ = hlo_ir::narrow::encode(ty, v);
            let _ = hlo_ir::narrow::int_bits(ty, i128::MAX);
        }
    }
    assert_eq!(hlo_ir::narrow::int_value(ElementType::S8, 0xff), -1);
    assert_eq!(hlo_ir::narrow::int_value(ElementType::U64, 0xff), 255);
    assert_eq!(hlo_ir::narrow::int_value(ElementType::S4, 0xf), -1);
}

#[test]
fn a_npy_descr_naming_a_narrow_type_clears_the_high_bits_like_reinterpret() {
    use hlo_ir::literal::Literal;
    let data = [0xffu8, 0x17, 0x80];
    let mut dict = format!(
        "{{'descr': 'int4', 'fortran_order': False, 'shape': ({},), }}",
        data.len()
    );
    while (10 + dict.len() + 1) % 64 != 0 {
        dict.push(' ');
    }
    dict.push('\n');
    let mut bytes = b"\x93NUMPY\x01\x00".to_vec();
    bytes.extend_from_slice(&(dict.len() as u16).to_le_bytes());
    bytes.extend_from_slice(dict.as_bytes());
    bytes.extend_from_slice(&data);
    let named = Literal::from_npy_bytes(&bytes).unwrap();
    let raw = Literal::from_slice(&[data.len()], &data).unwrap();
    assert_eq!(named, raw.reinterpret(ElementType::S4).unwrap());
}
