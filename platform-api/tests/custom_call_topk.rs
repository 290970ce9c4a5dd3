//! The built-in `TopK` target: the conformance case's `optimized.hlo` (XLA CPU's
//! output for `lax.top_k`) against its `.npy` files, and XLA's ordering rules
//! (largest first, ties by lower index, the total order for NaN and signed zero)
//! against an independent brute force built on `f32::total_cmp`.

mod custom_call_common;

use custom_call_common::custom_call;
use platform_api::custom_call::{call_host_target, check_instruction};
use platform_api::{Code, HloModule, Literal};
use std::path::PathBuf;

/// Reads a little-endian, C-order `.npy` file of `<f4` or `<i4` elements.
fn read_npy(path: &PathBuf) -> (String, Vec<usize>, Vec<u8>) {
    let bytes = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let (header_len, start) = match bytes[6] {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        _ => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
    };
    let header = std::str::from_utf8(&bytes[start..start + header_len]).unwrap();
    assert!(header.contains("'fortran_order': False"), "{header}");
    let descr = header
        .split("'descr': '")
        .nth(1)
        .unwrap()
        .split('\'')
        .next()
        .unwrap()
        .to_string();
    let shape_text = header
        .split("'shape': (")
        .nth(1)
        .unwrap()
        .split(')')
        .next()
        .unwrap();
    let dims = shape_text
        .split(',')
        .filter(|s| !s.trim().is_empty())
        .map(|s| s.trim().parse().unwrap())
        .collect();
    (descr, dims, bytes[start + header_len..].to_vec())
}

#[test]
fn conformance_top_k_optimized_hlo_matches_xla() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/conformance/top_k");
    let text = std::fs::read_to_string(dir.join("optimized.hlo")).unwrap();
    let module = HloModule::parse(&text).unwrap();
    let cc = module.entry().root_instr().clone();
    for platform in ["Interpreter", "Host"] {
        check_instruction(platform, &cc).unwrap();
    }
    let (descr, dims, bytes) = read_npy(&dir.join("arg0.npy"));
    assert_eq!(descr, "<f4");
    let x = Literal::from_bytes(
        platform_api::Shape::array(platform_api::ElementType::F32, dims),
        &bytes,
    )
    .unwrap();
    let out = call_host_target("Interpreter", &cc, &[&x]).unwrap();
    let got = out.tuple_elements();
    assert_eq!(got.len(), 2);
    for (i, want_descr) in [(0, "<f4"), (1, "<i4")] {
        let (descr, dims, bytes) = read_npy(&dir.join(format!("out{i}.npy")));
        assert_eq!(descr, want_descr);
        assert_eq!(got[i].dims(), dims.as_slice(), "out{i} dims");
        // Top-k selects elements, so values compare exactly.
        assert_eq!(
            got[i].bytes().unwrap(),
            bytes.as_slice(),
            "out{i} differs from XLA"
        );
    }
}

/// Indices of the `k` largest of `row` under the total order, largest first,
/// ties by lower index: the brute force.
fn brute_force(row: &[f32], k: usize) -> Vec<i32> {
    let mut idx: Vec<usize> = (0..row.len()).collect();
    idx.sort_by(|&a, &b| row[b].total_cmp(&row[a]).then(a.cmp(&b)));
    idx[..k].iter().map(|&i| i as i32).collect()
}

fn top_k_hlo(batch: Option<usize>, n: usize, k: usize) -> String {
    let (input, values, indices) = match batch {
        Some(b) => (
            format!("f32[{b},{n}]"),
            format!("f32[{b},{k}]"),
            format!("s32[{b},{k}]"),
        ),
        None => (
            format!("f32[{n}]"),
            format!("f32[{k}]"),
            format!("s32[{k}]"),
        ),
    };
    format!(
        r#"
HloModule top_k
gt {{
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  c = s32[] parameter(2)
  d = s32[] parameter(3)
  ROOT r = pred[] compare(a, b), direction=GT
}}
ENTRY e {{
  x = {input} parameter(0)
  ROOT cc = ({values}, {indices}) custom-call(x), custom_call_target="TopK", called_computations={{gt}}
}}
"#
    )
}

#[test]
fn ties_nan_and_signed_zero_follow_the_total_order() {
    let neg_nan = f32::from_bits(0xffc0_0000);
    let pattern = [
        1.0,
        f32::NAN,
        -0.0,
        0.0,
        1.0,
        f32::NEG_INFINITY,
        neg_nan,
        f32::INFINITY,
        1.0,
        -2.0,
        0.0,
        -0.0,
    ];
    let (batch, n) = (3usize, 96usize);
    let rows: Vec<Vec<f32>> = (0..batch)
        .map(|r| {
            (0..n)
                .map(|i| pattern[(i * (r + 1) + r) % pattern.len()])
                .collect()
        })
        .collect();
    let flat: Vec<f32> = rows.concat();
    for k in [0, 1, 5, 40, n] {
        let cc = custom_call(&top_k_hlo(Some(batch), n, k));
        let out = call_host_target(
            "Interpreter",
            &cc,
            &[&Literal::from_slice(&[batch, n], &flat).unwrap()],
        )
        .unwrap();
        let (values, indices) = (&out.tuple_elements()[0], &out.tuple_elements()[1]);
        assert_eq!(values.dims(), &[batch, k]);
        for (r, row) in rows.iter().enumerate() {
            let want = brute_force(row, k);
            let got = &indices.data::<i32>().unwrap()[r * k..(r + 1) * k];
            assert_eq!(got, want.as_slice(), "row {r}, k = {k}");
            let got_values = &values.data::<f32>().unwrap()[r * k..(r + 1) * k];
            for (v, &i) in got_values.iter().zip(&want) {
                assert_eq!(v.to_bits(), row[i as usize].to_bits(), "row {r}, k = {k}");
            }
        }
    }
}

#[test]
fn rank_one_operand() {
    let x: Vec<f32> = (0..50).map(|i| ((i * 37) % 50) as f32 - 25.0).collect();
    let cc = custom_call(&top_k_hlo(None, 50, 7));
    let out = call_host_target("Host", &cc, &[&Literal::vector(&x)]).unwrap();
    assert_eq!(
        out.tuple_elements()[1].data::<i32>().unwrap(),
        brute_force(&x, 7).as_slice()
    );
    assert_eq!(
        out.tuple_elements()[0].data::<f32>().unwrap(),
        &[24.0, 23.0, 22.0, 21.0, 20.0, 19.0, 18.0]
    );
}

#[test]
fn inconsistent_shapes_are_errors() {
    // k larger than the row.
    let cc = custom_call(&top_k_hlo(Some(2), 4, 6));
    let e = call_host_target(
        "Interpreter",
        &cc,
        &[&Literal::from_slice(&[2, 4], &[0f32; 8]).unwrap()],
    )
    .unwrap_err();
    assert_eq!(e.code(), Code::InvalidArgument);
    assert!(e.message().contains("k = 6"), "{e}");
    // Indices that are not s32.
    let text = top_k_hlo(Some(2), 4, 2).replace("s32[2,2]", "s64[2,2]");
    let e = call_host_target(
        "Interpreter",
        &custom_call(&text),
        &[&Literal::from_slice(&[2, 4], &[0f32; 8]).unwrap()],
    )
    .unwrap_err();
    assert!(
        e.message().contains("s64[2,2]") && e.message().contains("TopK"),
        "{e}"
    );
}
