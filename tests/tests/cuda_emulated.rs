//! Every conformance case, both forms, compiled by the CUDA code generator and
//! run by the host emulator (the generated kernels compiled as C): checks the
//! code the GPU would run on a machine without one. The hand-written cases of
//! `tests/xla_ops` (operations JAX does not emit, such as `scan`) run too.

use platform_api::{CompileOptions, HloModule};
use platform_cuda::compiler::compile_program;
use platform_cuda::emulate::Emulator;
use service::conformance::{case_dirs, compare_outputs_scaled, default_corpus, Case, Form, Status};
use service::ScaleRule;

#[test]
fn corpus_runs_on_the_emulated_generated_code() {
    if std::env::var_os("HLORUN_SKIP_C_TESTS").is_some() {
        eprintln!("SKIPPED: HLORUN_SKIP_C_TESTS is set (the emulator needs a C compiler)");
        return;
    }
    let corpus = default_corpus().expect("corpus");
    let xla_ops = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("xla_ops");
    let mut dirs = case_dirs(&corpus).expect("cases");
    dirs.extend(case_dirs(&xla_ops).expect("tests/xla_ops cases"));
    let mut failures = Vec::new();
    let mut passed = 0;
    for dir in dirs {
        let case = Case::load(&dir).expect("case");
        for form in [Form::Module, Form::Optimized] {
            let status = run(&case, form);
            match status {
                Status::Pass => passed += 1,
                other => failures.push(format!(
                    "{} ({}): {}",
                    case.name,
                    form.name(),
                    other.detail()
                )),
            }
        }
    }
    eprintln!(
        "emulated CUDA code: {passed} runs pass, {} fail",
        failures.len()
    );
    assert!(
        failures.is_empty(),
        "failing runs:\n{}",
        failures.join("\n")
    );
}

fn run(case: &Case, form: Form) -> Status {
    let outcome = case
        .program(form)
        .and_then(|text| HloModule::parse(&text))
        .and_then(|module| {
            let program = compile_program(&module, &CompileOptions::default())?;
            let result = Emulator::build(&program)?.run(&program, &case.args)?;
            Ok((module, result))
        });
    match outcome {
        // Judged as the conformance runner judges every platform.
        Ok((module, result)) => {
            compare_outputs_scaled(&result, case, &module, &case.args, ScaleRule::default())
        }
        Err(e) => Status::Error {
            code: e.code(),
            message: e.message().chars().take(3000).collect(),
        },
    }
}
