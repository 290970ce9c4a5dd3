//! Deviceless CUDA compilation of the whole corpus: every case, both forms,
//! through the CUDA compiler and NVRTC for sm_80 and sm_90, and each PTX
//! checked by `ptxas` when it is present. This is what CI can check of the
//! CUDA backend without a GPU.
//!
//! NVRTC is loaded at run time; without it the test says it skipped, unless
//! `HLORUN_REQUIRE_NVRTC` is set (CI sets it, after installing NVRTC), in
//! which case its absence is a failure.

use platform_api::{CompileOptions, HloModule};
use platform_cuda::compiler::compile_ptx;
use platform_cuda::nvrtc::{self, Arch};
use service::conformance::{case_dirs, default_corpus, Case, Form};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// `ptxas`: `HLORUN_PTXAS`, beside a pip-installed NVRTC, or on `PATH`.
fn find_ptxas() -> Option<PathBuf> {
    if let Some(p) = std::env::var_os("HLORUN_PTXAS") {
        return Some(PathBuf::from(p));
    }
    if let Ok(lib) = nvrtc::locate() {
        let candidate = Path::new(&lib)
            .parent()?
            .parent()?
            .join("bin")
            .join("ptxas");
        if candidate.exists() {
            return Some(candidate);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join("ptxas"))
        .find(|p| p.exists())
}

/// Where PTX files wait for `ptxas`; removed when the test ends.
fn scratch_dir() -> PathBuf {
    std::env::temp_dir().join(format!("hlorun-ptxas-{}", std::process::id()))
}

fn check_with_ptxas(ptxas: &Path, ptx: &str, arch: Arch, label: &str) -> Result<(), String> {
    let dir = scratch_dir();
    std::fs::create_dir_all(&dir).map_err(|e| e.to_string())?;
    let file = dir.join(format!("{}.ptx", label.replace([' ', '/', '(', ')'], "_")));
    std::fs::write(&file, ptx).map_err(|e| e.to_string())?;
    let out = std::process::Command::new(ptxas)
        .arg(format!("-arch={}", arch.sm()))
        .arg(&file)
        .arg("-o")
        .arg(file.with_extension("cubin"))
        .output()
        .map_err(|e| format!("cannot run {}: {e}", ptxas.display()))?;
    let _ = std::fs::remove_file(&file);
    let _ = std::fs::remove_file(file.with_extension("cubin"));
    if out.status.success() {
        Ok(())
    } else {
        Err(format!("ptxas: {}", String::from_utf8_lossy(&out.stderr)))
    }
}

#[test]
fn corpus_compiles_to_ptx_for_sm80_and_sm90() {
    if let Err(why) = nvrtc::available() {
        assert!(
            std::env::var_os("HLORUN_REQUIRE_NVRTC").is_none(),
            "HLORUN_REQUIRE_NVRTC is set but {why}"
        );
        eprintln!("SKIPPED deviceless CUDA compilation: {why}");
        return;
    }
    let ptxas = find_ptxas();
    eprintln!(
        "NVRTC {:?} at {}; ptxas: {}",
        nvrtc::version().unwrap(),
        nvrtc::locate().unwrap(),
        ptxas
            .as_ref()
            .map_or("not found (PTX not assembled)".into(), |p| p
                .display()
                .to_string())
    );
    let corpus = default_corpus().expect("corpus");
    let mut jobs = Vec::new();
    for dir in case_dirs(&corpus).expect("cases") {
        for form in [Form::Module, Form::Optimized] {
            jobs.push((dir.clone(), form));
        }
    }
    let jobs = Mutex::new(jobs);
    let failures = Mutex::new(Vec::new());
    let compiled = Mutex::new(0usize);
    let archs = [Arch::parse("sm_80").unwrap(), Arch::parse("sm_90").unwrap()];
    std::thread::scope(|s| {
        for _ in 0..2 {
            s.spawn(|| loop {
                let Some((dir, form)) = jobs.lock().unwrap().pop() else {
                    return;
                };
                let case = Case::load(&dir).expect("case");
                for arch in archs {
                    let label = format!("{} ({}) {}", case.name, form.name(), arch.sm());
                    let outcome = case
                        .program(form)
                        .and_then(|text| HloModule::parse(&text))
                        .and_then(|m| compile_ptx(&m, &CompileOptions::default(), arch))
                        .map_err(|e| e.message().chars().take(2000).collect::<String>())
                        .and_then(|(_, ptx)| match &ptxas {
                            Some(p) => check_with_ptxas(p, &ptx, arch, &label),
                            None => Ok(()),
                        });
                    match outcome {
                        Ok(()) => *compiled.lock().unwrap() += 1,
                        Err(e) => failures.lock().unwrap().push(format!("{label}: {e}")),
                    }
                }
            });
        }
    });
    let _ = std::fs::remove_dir_all(scratch_dir());
    let failures = failures.into_inner().unwrap();
    eprintln!(
        "deviceless CUDA: {} compilations pass, {} fail",
        compiled.into_inner().unwrap(),
        failures.len()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
