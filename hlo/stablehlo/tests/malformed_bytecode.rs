//! Malformed MLIR bytecode never panics, hangs or overflows the stack: every
//! prefix of real portable artifacts (and of a jax.export module), random
//! byte changes, and hand-made hostile files (an attribute that contains
//! itself, counts far beyond the data, nesting deeper than any stack) give
//! `Ok` or an error.

use std::path::Path;

fn artifacts() -> Vec<Vec<u8>> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests");
    let mut out: Vec<Vec<u8>> = [
        "op_matrix/argmax_f32/module.mlirbc",
        "op_matrix/while_loop_f32/module.mlirbc",
        "op_matrix/conv_f32/module.mlirbc",
        "op_matrix/scatter_f32/module.mlirbc",
        "op_matrix/sort_key_value_f32/module.mlirbc",
        "op_matrix/gather_s8/module.mlirbc",
        "stablehlo_bytecode/versions/while_loop_f32@0.9.0.mlirbc",
        "stablehlo_bytecode/jax_export/mlp/module.jaxexport",
    ]
    .iter()
    .map(|p| std::fs::read(root.join(p)).unwrap_or_else(|e| panic!("{p}: {e}")))
    .collect();
    out.retain(|b| !b.is_empty());
    out
}

fn check(bytes: &[u8]) {
    if let Err(e) = hlo_stablehlo::parse_module_bytes(bytes) {
        assert!(!e.message().is_empty());
    }
}

#[test]
fn every_prefix_reads_or_fails_cleanly() {
    for a in &artifacts() {
        for cut in 0..a.len() {
            check(&a[..cut]);
        }
    }
}

#[test]
fn changed_bytes_read_or_fail_cleanly() {
    // A fixed linear congruential sequence: the same mutants every run.
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for a in &artifacts() {
        for _ in 0..2000 {
            let mut b = a.clone();
            for _ in 0..1 + next() % 4 {
                let i = 4 + next() % (b.len() - 4);
                b[i] = match next() % 4 {
                    0 => 0,
                    1 => 0xff,
                    2 => b[i] ^ (1 << (next() % 8)),
                    _ => next() as u8,
                };
            }
            check(&b);
        }
    }
}

/// A prefix varint of `v`.
fn varint(out: &mut Vec<u8>, v: u64) {
    if v < 1 << 7 {
        out.push(((v << 1) | 1) as u8);
    } else if v < 1 << 14 {
        out.extend_from_slice(&(((v << 2) | 0b10) as u16).to_le_bytes());
    } else {
        out.push(0);
        out.extend_from_slice(&v.to_le_bytes());
    }
}

fn section(out: &mut Vec<u8>, id: u8, data: &[u8]) {
    out.push(id);
    varint(out, data.len() as u64);
    out.extend_from_slice(data);
}

/// A file of format 6 with the given attribute entries (all of the builtin
/// dialect, custom encoded) and an IR section that uses attribute 0 as an
/// operation's location.
fn file_with_attributes(entries: &[Vec<u8>]) -> Vec<u8> {
    let mut ir = Vec::new();
    varint(&mut ir, 1 << 1); // one op, no block arguments
    varint(&mut ir, 0); // op name 0
    ir.push(0); // no components
    varint(&mut ir, 0); // location: attribute 0
    file_with_ir(entries, &ir)
}

/// [`file_with_attributes`] with the given IR section (its op name 0 is
/// `builtin.module`).
fn file_with_ir(entries: &[Vec<u8>], ir: &[u8]) -> Vec<u8> {
    let mut f = b"ML\xefR".to_vec();
    varint(&mut f, 6);
    f.extend_from_slice(b"test\0");
    // Strings: "builtin", "module".
    let mut strings = Vec::new();
    varint(&mut strings, 2);
    varint(&mut strings, 7);
    varint(&mut strings, 8);
    strings.extend_from_slice(b"builtin\0module\0");
    section(&mut f, 0, &strings);
    // Dialects: builtin (unversioned); op names: builtin.module.
    let mut dialects = Vec::new();
    varint(&mut dialects, 1);
    varint(&mut dialects, 0 << 1);
    varint(&mut dialects, 1);
    varint(&mut dialects, 0);
    varint(&mut dialects, 1);
    varint(&mut dialects, (1 << 1) | 1);
    section(&mut f, 1, &dialects);
    let mut data = Vec::new();
    let mut offsets = Vec::new();
    varint(&mut offsets, entries.len() as u64);
    varint(&mut offsets, 0);
    varint(&mut offsets, 0);
    varint(&mut offsets, entries.len() as u64);
    for e in entries {
        data.extend_from_slice(e);
        varint(&mut offsets, ((e.len() as u64) << 1) | 1);
    }
    section(&mut f, 2, &data);
    section(&mut f, 3, &offsets);
    section(&mut f, 4, ir);
    section(&mut f, 8, &[]);
    f
}

#[test]
fn an_attribute_that_contains_itself_is_an_error() {
    // Attribute 0: a name location whose child is attribute 0.
    let mut e = Vec::new();
    varint(&mut e, 14);
    varint(&mut e, 0);
    varint(&mut e, 0);
    let err = hlo_stablehlo::parse_module_bytes(&file_with_attributes(&[e])).unwrap_err();
    assert!(err.message().contains("refers to itself"), "{err}");
}

#[test]
fn nesting_deeper_than_the_limit_is_an_error() {
    // Attribute i: an array holding attribute i + 1; the last an empty one.
    let n = 100_000;
    let mut entries = Vec::with_capacity(n);
    for i in 0..n {
        let mut e = Vec::new();
        varint(&mut e, 0);
        if i + 1 < n {
            varint(&mut e, 1);
            varint(&mut e, (i + 1) as u64);
        } else {
            varint(&mut e, 0);
        }
        entries.push(e);
    }
    let err = hlo_stablehlo::parse_module_bytes(&file_with_attributes(&entries)).unwrap_err();
    assert!(err.message().contains("nest deeper"), "{err}");
}

#[test]
fn counts_beyond_the_data_are_errors_not_allocations() {
    // An array attribute claiming 2^60 elements.
    let mut e = Vec::new();
    varint(&mut e, 0);
    varint(&mut e, 1 << 60);
    let err = hlo_stablehlo::parse_module_bytes(&file_with_attributes(&[e])).unwrap_err();
    assert!(err.message().contains("exceeds"), "{err}");
}

#[test]
fn regions_nested_deeper_than_any_stack_are_read_or_refused_cleanly() {
    // builtin.module ops, each holding one region of one block holding the
    // next, 200,000 deep.
    let depth = 200_000;
    let mut ir = Vec::new();
    varint(&mut ir, 1 << 1);
    for _ in 0..depth {
        varint(&mut ir, 0); // builtin.module
        ir.push(0b0001_0000); // regions
        varint(&mut ir, 0); // location: attribute 0
        varint(&mut ir, 1 << 1); // one region, not isolated
        varint(&mut ir, 1); // one block
        varint(&mut ir, 0); // no values
        varint(&mut ir, 1 << 1); // one op, no arguments
    }
    varint(&mut ir, 0);
    ir.push(0);
    varint(&mut ir, 0);
    let mut unknown = Vec::new();
    varint(&mut unknown, 15);
    let f = file_with_ir(&[unknown], &ir);
    let err = hlo_stablehlo::parse_module_bytes(&f).unwrap_err();
    assert!(err.message().contains("nest deeper"), "{err}");
}
