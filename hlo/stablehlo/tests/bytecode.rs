//! The bytecode reader against the text reader: every op-matrix case's
//! `module.mlirbc` (its `module.mlir` serialized as a portable artifact by
//! jaxlib, `scripts/gen_stablehlo_bytecode.py`) must read into the same HLO
//! module, instruction for instruction and metadata included, as the text.

use std::path::{Path, PathBuf};

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/op_matrix")
}

/// A module's computations and instructions with everything but their
/// names: ops with their attributes, shapes, operands by position, metadata
/// (op names and source lines from locations), configs. (Names differ:
/// MLIR's text names a region's arguments as its author did, bytecode keeps
/// no names.)
fn structure(m: &hlo_ir::HloModule) -> Vec<(String, String)> {
    let mut out = vec![(format!("{:?}", m.config), String::new())];
    for c in &m.computations {
        out.push((
            format!("computation of {} instructions", c.instructions.len()),
            String::new(),
        ));
        for i in &c.instructions {
            out.push((
                format!(
                    "{:?} {} {:?} {:?} {:?}",
                    i.op, i.shape, i.operands, i.backend_config, i.frontend_attributes
                ),
                format!("{:?}", i.metadata),
            ));
        }
    }
    out
}

/// Equal structures; metadata too where the text has it (the text's pretty
/// forms leave the locations of a region's implied ops out, bytecode keeps
/// them).
fn same(text: &[(String, String)], bytecode: &[(String, String)]) -> bool {
    text.len() == bytecode.len()
        && text
            .iter()
            .zip(bytecode)
            .all(|(t, b)| t.0 == b.0 && (t.1 == "None" || t.1 == b.1))
}

/// The first entry where the two structures differ, for a failure message.
fn difference(text: &[(String, String)], bytecode: &[(String, String)]) -> String {
    text.iter()
        .zip(bytecode)
        .find(|(a, b)| !same(&[(*a).clone()], &[(*b).clone()]))
        .map(|(a, b)| format!("text:     {a:?}\nbytecode: {b:?}"))
        .unwrap_or_else(|| "lengths differ".into())
}

#[test]
fn every_op_matrix_artifact_reads_as_its_text_does() {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(corpus())
        .expect("op matrix")
        .map(|e| e.expect("entry").path())
        .filter(|p| p.join("module.mlirbc").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() > 800, "only {} artifacts", dirs.len());
    let mut failures = Vec::new();
    for d in &dirs {
        let name = d.file_name().unwrap().to_string_lossy().to_string();
        let text = std::fs::read_to_string(d.join("module.mlir")).expect("text");
        let bytes = std::fs::read(d.join("module.mlirbc")).expect("bytecode");
        let got = hlo_stablehlo::parse_module_bytes(&bytes).map(|m| structure(&m));
        if text.contains("chlo.") {
            // jaxlib decomposes CHLO ops before serializing (a portable
            // artifact holds none), so the two forms differ in structure;
            // the op-matrix suite checks the artifact's values against XLA's.
            if let Err(e) = got {
                failures.push(format!("{name}: {e}"));
            }
            continue;
        }
        let want = hlo_stablehlo::parse_module(&text).map(|m| structure(&m));
        match (want, got) {
            (Ok(w), Ok(g)) if same(&w, &g) => {}
            (Err(w), Err(g)) if w.code() == g.code() => {}
            (Ok(w), Ok(g)) => {
                failures.push(format!("{name}: modules differ\n{}", difference(&w, &g)));
            }
            (w, g) => failures.push(format!(
                "{name}: text {:?}, bytecode {:?}",
                w.map(|_| ()).map_err(|e| e.to_string()),
                g.map(|_| ()).map_err(|e| e.to_string())
            )),
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} differ:\n{}",
        failures.len(),
        dirs.len(),
        failures
            .iter()
            .take(20)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    );
}

/// Programs written for older StableHLO versions across the compatibility
/// window (`tests/stablehlo_bytecode/versions/NAME@VERSION.mlirbc`): older
/// ops (gather, scatter and dot_general before their v2), older bytecode
/// formats (0 to 6). Each must read into what its text reads into.
#[test]
fn artifacts_of_older_versions_read_as_the_text_does() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/stablehlo_bytecode/versions");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("versions")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 50, "only {} programs", files.len());
    let mut failures = Vec::new();
    for f in &files {
        let stem = f.file_stem().unwrap().to_string_lossy().to_string();
        let (name, _version) = stem.split_once('@').expect("NAME@VERSION");
        let text = std::fs::read_to_string(corpus().join(name).join("module.mlir")).expect("text");
        let want = structure(&hlo_stablehlo::parse_module(&text).expect("text reads"));
        match hlo_stablehlo::parse_module_bytes(&std::fs::read(f).expect("bytes")) {
            Ok(m) if same(&want, &structure(&m)) => {}
            Ok(m) => {
                let got = structure(&m);
                failures.push(format!(
                    "{stem}: modules differ\n{}",
                    difference(&want, &got)
                ));
            }
            Err(e) => failures.push(format!("{stem}: {e}")),
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// An error in a bytecode program names the operation and its source
/// location (bytecode has no lines): here an op the reader refuses, a
/// dynamic-shape op of StableHLO 0.9's tests, read from an artifact.
#[test]
fn an_error_in_bytecode_names_the_operation() {
    // `argmax_f32`'s artifact with its `vhlo.reduce_v1` renamed to an op
    // VHLO does not have (same length: `vhlo.reduce_v1` -> `vhlo.rexuce_v1`).
    let path = corpus().join("argmax_f32/module.mlirbc");
    let mut bytes = std::fs::read(path).expect("artifact");
    let at = bytes
        .windows(9)
        .position(|w| w == b"reduce_v1")
        .expect("a reduce op name");
    bytes[at + 2] = b'x';
    let err = hlo_stablehlo::parse_module_bytes(&bytes).unwrap_err();
    let msg = err.to_string();
    assert!(msg.contains("operation #"), "{msg}");
    assert!(msg.contains("vhlo.rexuce_v1"), "{msg}");
}

/// A conversion error in bytecode names the operation, what it is and
/// where in the user's source it came from.
#[test]
fn a_refused_op_is_named_with_its_source_location() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../../tests/stablehlo_bytecode/errors/einsum.mlirbc");
    let err =
        hlo_stablehlo::parse_module_bytes(&std::fs::read(path).expect("artifact")).unwrap_err();
    let msg = err.to_string();
    assert!(
        msg.contains("op 'stablehlo.einsum' is not supported"),
        "{msg}"
    );
    assert!(msg.contains("(jit(f)/einsum) at model.py:33"), "{msg}");
}
