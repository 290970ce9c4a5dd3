//! Half-precision numerics parity with XLA CPU: the programs of `tests/bf16/`
//! (bf16 and f16 chains of elementwise ops, softmax, layernorm, gelu, a small
//! MLP, a reduction kept in bf16; made by `scripts/gen_bf16_cases.py` with
//! JAX 0.10.2 and XLA CPU's results) on the Interpreter and the Host, in both
//! forms, compared bit for bit.
//!
//! Every (case, form, platform) must give XLA CPU's bits, except the known
//! differences listed in [`KNOWN`], each with its cause; a known difference
//! that disappears fails too, so the list never goes stale. [`VARIES`] lists
//! the runs whose agreement depends on the processor (either outcome passes).
//! The number of differing elements of every run is printed
//! (`cargo test -p tests --test suite bf16_parity:: -- --nocapture`).

use platform_api::registry;
use platform_api::{CompileOptions, HloModule, Literal, RunOptions};
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
        "reduce_sum_bf16",
        "module",
        "*",
        "XLA CPU's tree reduction rewriter sums 32-element windows first: another order of bf16 roundings",
    ),
];

/// Runs whose agreement with XLA CPU depends on the processor, in the same
/// format: either outcome passes, and the report says which.
const VARIES: &[(&str, &str, &str, &str)] = &[(
    "mlp_logits_bf16",
    "*",
    "Host",
    "the Host's GEMM tiles and blocks by the vector width and cache sizes, and the f32 \
     products are summed in another order on some processors: 0 of 512 elements differ \
     on a 2-core AMD EPYC with AVX2, while AVX-512 machines differed",
)];

fn varies(case: &str, form: Form, platform: &str) -> Option<&'static str> {
    find(VARIES, case, form, platform)
}

fn known(case: &str, form: Form, platform: &str) -> Option<&'static str> {
    find(KNOWN, case, form, platform)
}

fn find(
    list: &[(&str, &str, &str, &'static str)],
    case: &str,
    form: Form,
    platform: &str,
) -> Option<&'static str> {
    list.iter()
        .find(|(c, f, p, _)| {
            *c == case && (*f == "*" || *f == form.name()) && (*p == "*" || *p == platform)
        })
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

/// Runs `module` on `platform` with the debug options `debug`.
fn run_with(
    platform: &str,
    module: HloModule,
    args: &[Literal],
    debug: &[(&str, &str)],
) -> platform_api::Result<Vec<Literal>> {
    let platform = registry::platform(platform)?;
    let executor = platform.executor(0)?;
    let compiler = registry::compiler(platform.id())?;
    let transfer = registry::transfer_manager(platform.id())?;
    let mut options = CompileOptions::default();
    for (k, v) in debug {
        options.debug_options.push((k.to_string(), v.to_string()));
    }
    let executable = compiler.compile(module, &executor, &options)?;
    let stream = executor.clone().create_stream()?;
    let buffers = args
        .iter()
        .map(|a| transfer.literal_to_device(&stream, a))
        .collect::<platform_api::Result<Vec<_>>>()?;
    let refs: Vec<_> = buffers.iter().collect();
    let result = executable.execute_on_stream(&RunOptions::new(stream.clone()), &refs)?;
    Ok(transfer
        .transfer_literal_from_device(&stream, &result)?
        .flatten_leaves())
}

/// Each numerics option of XLA CPU's, turned off, makes softmax differ from
/// XLA CPU on both platforms alike (the counts when this was written:
/// `excess_precision=off` 449 of 4096 bf16 elements, the sum of exponentials
/// then adds bf16-rounded values; `divide_by_reciprocal=off` 632 of 4096 f16
/// elements, the division then rounds once).
#[test]
fn softmax_differs_from_xla_cpu_with_each_option_off() {
    for (case, option) in [
        ("softmax_bf16", "excess_precision"),
        ("softmax_f16", "divide_by_reciprocal"),
    ] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("bf16")
            .join(case);
        let case = Case::load(&dir).expect("the softmax case");
        let module = HloModule::parse(&case.program(Form::Module).unwrap()).unwrap();
        let mut results = Vec::new();
        for platform in PLATFORMS {
            let off = [(option, "off")];
            let got = run_with(platform, module.clone(), &case.args, &off).unwrap();
            let (diff, total) = differing(&got, &case.outputs).unwrap();
            println!(
                "{} (module) on {platform}, {option}=off: {diff} of {total} elements differ",
                case.name
            );
            assert!(
                diff > 0,
                "{} on {platform}: {option}=off changed nothing",
                case.name
            );
            let on = run_with(platform, module.clone(), &case.args, &[]).unwrap();
            assert_eq!(differing(&on, &case.outputs).unwrap().0, 0, "{platform}");
            results.push(got);
        }
        let apart = differing(&results[0], &results[1]).unwrap().0;
        assert_eq!(
            apart, 0,
            "{}: Interpreter and Host differ with {option}=off",
            case.name
        );
    }
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
                let got = match run_with(platform, module.clone(), &case.args, &[]) {
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
                // The same run without XLA CPU's numerics options, for comparison.
                let off = [("excess_precision", "off"), ("divide_by_reciprocal", "off")];
                let plain = run_with(platform, module.clone(), &case.args, &off)
                    .ok()
                    .and_then(|got| differing(&got, &case.outputs).ok())
                    .map_or("?".to_string(), |(d, _)| d.to_string());
                report.push_str(&format!(
                    "{what}: {diff} of {total} elements differ (with both options off: {plain})\n"
                ));
                if varies(&case.name, form, platform).is_some() {
                    continue;
                }
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
