//! Every `.npy` file of the conformance corpus loads with the dtype and shape its
//! `case.json` names, and writing it back gives the same bytes.

use hlo_ir::{ElementType, Literal};
use std::path::PathBuf;

fn element_type_of(numpy_name: &str) -> ElementType {
    match numpy_name {
        "bool" => ElementType::Pred,
        "int8" => ElementType::S8,
        "int16" => ElementType::S16,
        "int32" => ElementType::S32,
        "int64" => ElementType::S64,
        "uint8" => ElementType::U8,
        "uint16" => ElementType::U16,
        "uint32" => ElementType::U32,
        "uint64" => ElementType::U64,
        "float16" => ElementType::F16,
        "bfloat16" => ElementType::BF16,
        "float32" => ElementType::F32,
        "float64" => ElementType::F64,
        "complex64" => ElementType::C64,
        "complex128" => ElementType::C128,
        other => panic!("case.json names unknown dtype {other}"),
    }
}

#[test]
fn corpus_npy_files_load_and_round_trip() {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../tests/conformance");
    let mut checked = 0;
    let mut failures = Vec::new();
    for entry in std::fs::read_dir(&root).unwrap() {
        let dir = entry.unwrap().path();
        let Ok(case) = std::fs::read_to_string(dir.join("case.json")) else {
            continue;
        };
        let case: serde_json::Value = serde_json::from_str(&case).unwrap();
        for (list, prefix) in [("args", "arg"), ("outputs", "out")] {
            let specs = case[list].as_array().unwrap();
            for (i, spec) in specs.iter().enumerate() {
                let path = dir.join(format!("{prefix}{i}.npy"));
                let literal = match Literal::read_npy(&path) {
                    Ok(l) => l,
                    Err(e) => {
                        failures.push(e.to_string());
                        continue;
                    }
                };
                let want_type = element_type_of(spec["dtype"].as_str().unwrap());
                let want_dims: Vec<usize> = spec["shape"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect();
                if literal.element_type() != Some(want_type) || literal.dims() != want_dims {
                    failures.push(format!(
                        "{}: read as {}, case.json says {want_type}{want_dims:?}",
                        path.display(),
                        literal.shape()
                    ));
                }
                let bytes = std::fs::read(&path).unwrap();
                if literal.to_npy_bytes().unwrap() != bytes {
                    failures.push(format!("{}: rewritten bytes differ", path.display()));
                }
                checked += 1;
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    assert!(checked >= 200, "only {checked} corpus .npy files found");
}
