//! Malformed StableHLO never panics: every prefix of real programs, byte
//! flips, and deep nesting give `Ok` or an error with a position.

use std::path::Path;

fn programs() -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/op_matrix");
    [
        "argmax_f32",
        "while_loop_f32",
        "conv_f32",
        "scatter_f32",
        "sort_kv_f32",
        "cond_f32",
    ]
    .iter()
    .filter_map(|c| std::fs::read_to_string(root.join(c).join("module.mlir")).ok())
    .collect()
}

fn check(text: &str) {
    if let Err(e) = hlo_stablehlo::parse_module(text) {
        assert!(!e.message().is_empty());
    }
}

#[test]
fn every_prefix_parses_or_fails_cleanly() {
    let progs = programs();
    assert!(progs.len() >= 4, "test programs missing");
    for p in &progs {
        let mut cut = 0;
        while cut < p.len() {
            if p.is_char_boundary(cut) {
                check(&p[..cut]);
            }
            cut += 1;
        }
    }
}

#[test]
fn flipped_bytes_parse_or_fail_cleanly() {
    let progs = programs();
    // A fixed linear congruential sequence: the same mutants every run.
    let mut state: u64 = 0x2545_f491_4f6c_dd1d;
    let mut next = || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    const BYTES: &[u8] = b"%#@!()[]{}<>:=,\"x0123456789-. \n";
    for p in &progs {
        for _ in 0..400 {
            let mut b = p.clone().into_bytes();
            for _ in 0..1 + next() % 3 {
                let i = next() % b.len();
                b[i] = BYTES[next() % BYTES.len()];
            }
            if let Ok(t) = String::from_utf8(b) {
                check(&t);
            }
        }
    }
}

#[test]
fn deep_nesting_is_an_error_or_a_result_not_a_crash() {
    let depth = 100_000;
    let text = format!(
        "module {{ func.func @main() -> tensor<f32> {{ %0 = stablehlo.constant {{a = {}{}}} dense<1.0> : tensor<f32> return %0 : tensor<f32> }} }}",
        "[".repeat(depth),
        "]".repeat(depth)
    );
    check(&text);
    let locs = format!(
        "module {{ }} loc({}unknown{})",
        "fused[".repeat(depth),
        "]".repeat(depth)
    );
    check(&locs);
}

#[test]
fn a_huge_splat_constant_is_an_error_not_an_abort() {
    let text = "module { func.func @main() -> tensor<100000000000000xf32> { %0 = stablehlo.constant dense<1.0> : tensor<100000000000000xf32> return %0 : tensor<100000000000000xf32> } }";
    let err = hlo_stablehlo::parse_module(text).unwrap_err();
    assert_eq!(err.code(), hlo_ir::Code::ResourceExhausted, "{err}");
    let text = "module { func.func @main() -> tensor<4294967296x4294967296x4294967296xf32> { %0 = stablehlo.constant dense<1.0> : tensor<4294967296x4294967296x4294967296xf32> return %0 : tensor<4294967296x4294967296x4294967296xf32> } }";
    assert!(hlo_stablehlo::parse_module(text).is_err());
}

/// A splat integer-list attribute of a huge type (found by
/// `fuzz/mutate_run.py`) is refused with its position, not expanded.
#[test]
fn a_huge_splat_attribute_is_an_error() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/op_matrix");
    let text = std::fs::read_to_string(root.join("reduce_window_sum_c64/module.mlir")).unwrap();
    assert!(hlo_stablehlo::parse_module(&text).is_ok());
    for dims in ["4294967296x2", "4294967296x4294967296x4294967296"] {
        let hostile = text.replace(
            "padding = dense<0> : tensor<2x2xi64>",
            &format!("padding = dense<0> : tensor<{dims}xi64>"),
        );
        assert_ne!(hostile, text, "the program no longer has the attribute");
        let e = hlo_stablehlo::parse_module(&hostile).unwrap_err();
        assert!(e.message().contains("too long"), "{}", e.message());
    }
}
