//! Half-precision numerics parity with XLA CPU: the programs of `tests/bf16/`
//! (bf16 and f16 chains of elementwise ops, softmax, layernorm, gelu, a small
//! MLP, a reduction kept in bf16; made by `scripts/gen_bf16_cases.py` with
//! JAX 0.10.2 and XLA CPU's results) on the Interpreter and the Host, in both
//! forms, compared bit for bit.
//!
//! Every (case, form, platform) must give XLA CPU's bits, except the known
//! differences listed in [`KNOWN`], each with its cause; a known difference
//! that disappears fails too, so the list never goes stale. The number of
//! differing elements of every run is printed
//! (`cargo test -p tests --test bf16_parity -- --nocapture`).

use platform_api::{HloModule, Literal};
use service::conformance::{case_dirs, Case, Form};
use std::path::Path;

// Linking a backend registers it.
use platform_host as _;
use platform_interpreter as _;

const PLATFORMS: [&str; 2] = ["Interpreter", "Host"];

/// `(case, form, platform or "*" for both, why)`: runs known to differ from
/// XLA CPU.
const KNOWN: &[(&str, &str, &str, &str)] = &[
    (
        "softmax_bf16",
        "module",
        "*",
        "XLA's simplifier rewrites x / broadcast(s) as x * broadcast(1 / s) (in f32, after bf16 normalization)",
    ),
    (
        "softmax_f16",
        "module",
        "*",
        "XLA's simplifier rewrites x / broadcast(s) as x * broadcast(1 / s) (the reciprocal rounded to f16)",
    ),
    (
        "reduce_sum_bf16",
        "module",
        "*",
        "XLA CPU's tree reduction rewriter sums 32-element windows first: another order of bf16 roundings",
    ),
];

fn known(case: &str, form: Form, platform: &str) -> Option<&'static str> {
    KNOWN
        .iter()
        .find(|(c, f, p, _)| *c == case && *f == form.name() && (*p == "*" || *p == platform))
        .map(|(_, _, _, why)| *why)
}

/// Elements whose bits differ (every output leaf), and the element count.
fn differing(got: &[Literal], want: &[Literal]) -> Result<(usize, usize), String> {
    if got.len() != want.len() {
        return Err(format!("{} outputs, want {}", got.len(), want.len()));
    }
    let (mut diff, mut total) = (0, 0);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        if g.element_type() != w.element_type() || g.element_count() != w.element_count() {
            return Err(format!(
                "output {i}: shape {}, want {}",
                g.shape(),
                w.shape()
            ));
        }
        let (gb, wb) = (
            g.bytes().map_err(|e| e.to_string())?,
            w.bytes().map_err(|e| e.to_string())?,
        );
        let n = w.element_count();
        let width = wb.len().checked_div(n).unwrap_or(1).max(1);
        diff += gb
            .chunks(width)
            .zip(wb.chunks(width))
            .filter(|(a, b)| a != b)
            .count();
        total += n;
    }
    Ok((diff, total))
}

#[test]
fn half_precision_programs_match_xla_cpu_bit_for_bit() {
    let corpus = Path::new(env!("CARGO_MANIFEST_DIR")).join("bf16");
    let mut failures = Vec::new();
    let mut report = String::new();
    for dir in case_dirs(&corpus).expect("tests/bf16 holds cases") {
        let case = Case::load(&dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display()));
        for form in Form::ALL {
            let text = case.program(form).expect("the program text");
            let module =
                HloModule::parse(&text).unwrap_or_else(|e| panic!("{} ({form}): {e}", case.name));
            for platform in PLATFORMS {
                let what = format!("{} ({form}) on {platform}", case.name);
                let got = match tests::run_program(platform, module.clone(), &case.args) {
                    Ok(got) => got,
                    Err(e) => {
                        failures.push(format!("{what}: {e}"));
                        continue;
                    }
                };
                let (diff, total) = match differing(&got, &case.outputs) {
                    Ok(counts) => counts,
                    Err(e) => {
                        failures.push(format!("{what}: {e}"));
                        continue;
                    }
                };
                report.push_str(&format!("{what}: {diff} of {total} elements differ\n"));
                match (diff, known(&case.name, form, platform)) {
                    (0, None) => {}
                    (0, Some(why)) => failures.push(format!(
                        "{what}: now matches XLA CPU; remove it from KNOWN ({why})"
                    )),
                    (_, Some(_)) => {}
                    (_, None) => failures.push(format!(
                        "{what}: {diff} of {total} elements differ from XLA CPU"
                    )),
                }
            }
        }
    }
    println!("{report}");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
