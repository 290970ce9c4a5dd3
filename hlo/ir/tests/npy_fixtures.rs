//! `.npy` files written by NumPy (`scripts/gen_npy_fixtures.py`) read back as the
//! values the script put in them, and writing those values gives NumPy's bytes.
//!
//! The expected values are rebuilt here from the rules the script documents (type
//! extremes, special floats, `arange`), not read from any file.

use half::{bf16, f16};
use hlo_ir::{Code, ElementType, Literal, NativeType};
use num_complex::{Complex32, Complex64};
use std::path::PathBuf;

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/npy")
        .join(format!("{name}.npy"))
}

fn read(name: &str) -> Literal {
    Literal::read_npy(fixture(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn lit<T: NativeType>(dims: &[usize], values: &[T]) -> Literal {
    Literal::from_slice(dims, values).unwrap()
}

/// `[min, -1 or 1, 0, 1, 2, max]` as 2x3, as `integers()` in the script.
macro_rules! integers {
    ($t:ty) => {{
        let second: $t = if <$t>::MIN == 0 {
            1
        } else {
            (0 as $t).wrapping_sub(1)
        };
        lit::<$t>(&[2, 3], &[<$t>::MIN, second, 0, 1, 2, <$t>::MAX])
    }};
}

/// `0, -0, 1.5, -2.25, inf, -inf, nan, smallest subnormal` as 2x4 (`floats()`).
fn floats<T: NativeType>(from_f64: impl Fn(f64) -> T, nan: T, subnormal: T) -> Literal {
    let mut v: Vec<T> = [0.0, -0.0, 1.5, -2.25, f64::INFINITY, f64::NEG_INFINITY]
        .into_iter()
        .map(from_f64)
        .collect();
    v.push(nan);
    v.push(subnormal);
    lit(&[2, 4], &v)
}

fn expected(name: &str) -> Literal {
    match name {
        "pred" => Literal::from_bools(&[2, 3], &[true, false, false, true, false, false]).unwrap(),
        "s8" => integers!(i8),
        "s16" => integers!(i16),
        "s32" => integers!(i32),
        "s64" => integers!(i64),
        "u8" => integers!(u8),
        "u16" => integers!(u16),
        "u32" => integers!(u32),
        "u64" => integers!(u64),
        "f16" => floats(f16::from_f64, f16::NAN, f16::from_bits(1)),
        "bf16" => floats(bf16::from_f64, bf16::NAN, bf16::from_bits(1)),
        "f32" => floats(|v| v as f32, f32::NAN, f32::from_bits(1)),
        "f64" => floats(|v| v, f64::NAN, f64::from_bits(1)),
        "c64" => Literal::vector(&[
            Complex32::new(1.0, -2.0),
            Complex32::new(0.5, f32::INFINITY),
            Complex32::new(f32::NAN, -0.0),
        ]),
        "c128" => Literal::vector(&[
            Complex64::new(1.0, -2.0),
            Complex64::new(0.5, f64::INFINITY),
            Complex64::new(f64::NAN, -0.0),
        ]),
        other => panic!("no expectation for {other}"),
    }
}

const TYPES: [&str; 15] = [
    "pred", "s8", "s16", "s32", "s64", "u8", "u16", "u32", "u64", "f16", "bf16", "f32", "f64",
    "c64", "c128",
];

#[test]
fn every_element_type_reads_its_values() {
    for name in TYPES {
        let got = read(name);
        let want = expected(name);
        assert_eq!(
            got.element_type(),
            ElementType::from_name(name),
            "{name}: element type"
        );
        assert_eq!(got, want, "{name}: values");
    }
}

#[test]
fn writing_gives_numpys_bytes() {
    for name in TYPES {
        let file = std::fs::read(fixture(name)).unwrap();
        let written = expected(name).to_npy_bytes().unwrap();
        assert_eq!(written, file, "{name}: bytes differ from np.save's");
    }
}

#[test]
fn big_endian_files_convert() {
    for name in TYPES {
        let big = format!("{name}_big_endian");
        if !fixture(&big).exists() {
            // One-byte types have no byte order; bf16 has no big-endian NumPy form.
            assert!(
                matches!(name, "pred" | "s8" | "u8" | "bf16"),
                "{big} fixture missing"
            );
            continue;
        }
        assert_eq!(read(&big), expected(name), "{big}");
    }
}

fn arange<T: NativeType>(dims: &[usize], f: impl Fn(usize) -> T) -> Literal {
    let n: usize = dims.iter().product();
    lit(dims, &(0..n).map(f).collect::<Vec<_>>())
}

#[test]
fn fortran_order_becomes_row_major() {
    assert_eq!(
        read("f32_fortran"),
        arange(&[2, 3, 4], |i| i as f32),
        "f32_fortran"
    );
    assert_eq!(
        read("s16_fortran_big_endian"),
        arange(&[2, 3], |i| i as i16),
        "s16_fortran_big_endian"
    );
}

#[test]
fn scalars_empty_and_high_rank() {
    let mut rank15 = vec![1usize; 15];
    rank15[0] = 0;
    let cases = [
        ("s32_scalar", Literal::scalar(7i32)),
        ("f64_scalar", Literal::scalar(-2.5f64)),
        ("f32_empty", lit::<f32>(&[0], &[])),
        ("f32_empty_2x0x3", lit::<f32>(&[2, 0, 3], &[])),
        ("f32_empty_long", lit::<f32>(&[12345678901, 0], &[])),
        ("f32_empty_rank15", lit::<f32>(&rank15, &[])),
        ("u8_rank4", arange(&[2, 3, 4, 5], |i| i as u8)),
    ];
    for (name, want) in cases {
        let got = read(name);
        assert_eq!(got, want, "{name}");
        assert_eq!(
            got.to_npy_bytes().unwrap(),
            std::fs::read(fixture(name)).unwrap(),
            "{name}: written bytes differ from np.save's"
        );
    }
}

#[test]
fn format_versions_2_and_3() {
    for name in ["s32_v2", "s32_v3"] {
        let bytes = std::fs::read(fixture(name)).unwrap();
        assert_eq!(bytes[6], if name.ends_with('2') { 2 } else { 3 });
        assert_eq!(read(name), expected("s32"), "{name}");
    }
}

fn read_err(name: &str) -> String {
    let err = Literal::read_npy(fixture(name)).expect_err(name);
    assert_eq!(err.code(), Code::InvalidArgument, "{name}: {err}");
    assert!(
        err.message().contains(&format!("{name}.npy")),
        "{name}: message should name the file: {err}"
    );
    err.message().to_string()
}

#[test]
fn unsupported_dtypes_are_refused() {
    assert!(read_err("bad_object").contains("object arrays"));
    assert!(read_err("bad_structured").contains("structured dtypes"));
    assert!(read_err("bad_unicode").contains("string arrays"));
    assert!(read_err("bad_float128").contains("'<f16' is not supported"));
}

#[test]
fn damaged_files_are_refused_with_reasons() {
    let good = std::fs::read(fixture("s32")).unwrap();
    let check = |bytes: &[u8], needle: &str| {
        let err = Literal::from_npy_bytes(bytes).expect_err(needle);
        assert_eq!(err.code(), Code::InvalidArgument, "{err}");
        assert!(err.message().contains(needle), "want {needle:?} in: {err}");
    };
    check(
        &good[..good.len() - 3],
        "truncated: shape (2, 3) of '<i4' needs 24 bytes, but only 21",
    );
    check(&good[..50], "truncated inside its header");
    check(&good[..9], "truncated inside its header length");
    check(&good[..3], "not a .npy file");
    check(b"", "not a .npy file");
    check(b"PK\x03\x04 this is a zip", "not a .npy file");
    let mut longer = good.clone();
    longer.extend_from_slice(&[0, 0, 0, 0]);
    check(&longer, "longer than its header says");
    let mut version = good.clone();
    version[6] = 4;
    check(&version, "unsupported npy format version 4.0");

    // Headers that are not what NumPy writes.
    let with_header = |dict: &str| {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out
    };
    check(&with_header("[1, 2]"), "not a dict");
    check(
        &with_header("{'descr': '<i4', 'shape': (1,)}"),
        "needs the keys",
    );
    check(
        &with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (), 'x': 1}"),
        "unexpected key 'x'",
    );
    check(
        &with_header("{'descr': '<i4', 'fortran_order': 0, 'shape': ()}"),
        "'fortran_order' must be True or False",
    );
    check(
        &with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (-1,)}"),
        "negative",
    );
    check(
        &with_header("{'descr': '<i4', 'fortran_order': False, 'shape': 3}"),
        "'shape' must be a tuple",
    );
    check(
        &with_header("{'descr': '<i4', 'fortran_order': False, 'shape': (1,"),
        "expected",
    );
    check(
        &with_header(&format!(
            "{{'descr': '<i4', 'fortran_order': False, 'shape': {}1{}}}",
            "(".repeat(100),
            ")".repeat(100)
        )),
        "nests too deeply",
    );
    check(
        &with_header(
            "{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296, 4294967296)}",
        ),
        "too large",
    );
    check(
        &with_header("{'descr': '|V8', 'fortran_order': False, 'shape': ()}"),
        "void types",
    );
}

#[test]
fn hand_written_headers_numpy_also_accepts() {
    // Other spellings NumPy's reader takes: named dtypes, '=' and bare codes,
    // Python 2 long integers, a 2-byte void read as bfloat16.
    let file = |dict: &str, data: &[u8]| {
        let mut out = b"\x93NUMPY\x01\x00".to_vec();
        out.extend_from_slice(&(dict.len() as u16).to_le_bytes());
        out.extend_from_slice(dict.as_bytes());
        out.extend_from_slice(data);
        Literal::from_npy_bytes(&out).unwrap_or_else(|e| panic!("{dict}: {e}"))
    };
    let two: Vec<u8> = [1.5f32, -3.0]
        .iter()
        .flat_map(|v| v.to_le_bytes())
        .collect();
    let want = Literal::vector(&[1.5f32, -3.0]);
    for descr in ["float32", "=f4", "f4", "<f4"] {
        let dict = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': (2L,), }}\n");
        assert_eq!(file(&dict, &two), want, "{descr}");
    }
    let bf: Vec<u8> = [bf16::from_f32(1.0), bf16::from_f32(-2.0)]
        .iter()
        .flat_map(|v| v.to_bits().to_le_bytes())
        .collect();
    let want = Literal::vector(&[bf16::from_f32(1.0), bf16::from_f32(-2.0)]);
    for descr in ["|V2", "<V2", "bfloat16"] {
        let dict = format!("{{\"descr\": \"{descr}\", \"fortran_order\": False, \"shape\": (2,)}}");
        assert_eq!(file(&dict, &bf), want, "{descr}");
    }
    let be: Vec<u8> = bf.chunks(2).flat_map(|c| [c[1], c[0]]).collect();
    let dict = "{'descr': '>V2', 'fortran_order': False, 'shape': (2,)}";
    assert_eq!(file(dict, &be), want, ">V2");
    let dict = "{'descr': '?', 'fortran_order': True, 'shape': (3,)}";
    assert_eq!(
        file(dict, &[1, 0, 1]),
        Literal::from_bools(&[3], &[true, false, true]).unwrap()
    );
}

#[test]
fn every_type_round_trips_through_a_file() {
    let dir = std::env::temp_dir().join(format!("npy_fixtures_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for name in TYPES {
        let want = expected(name);
        // Reshape to rank 3 to exercise more than one shape per type.
        let n = want.element_count();
        let reshaped = want.reshape(&[1, n, 1]).unwrap();
        let path = dir.join(format!("{name}.npy"));
        reshaped.write_npy(&path).unwrap();
        assert_eq!(Literal::read_npy(&path).unwrap(), reshaped, "{name}");
    }
    let err = Literal::tuple(vec![Literal::scalar(1i32)])
        .write_npy(dir.join("tuple.npy"))
        .unwrap_err();
    assert!(err.message().contains("tuple.npy"), "{err}");
    assert!(err.message().contains("holds one array"), "{err}");
    let missing = dir.join("does_not_exist.npy");
    let err = Literal::read_npy(&missing).unwrap_err();
    assert_eq!(err.code(), Code::NotFound);
    assert!(err.message().contains("does_not_exist.npy"), "{err}");
    std::fs::remove_dir_all(&dir).unwrap();
}
