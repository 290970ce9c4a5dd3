//! NVRTC: CUDA C to PTX for a named architecture, with no device needed.
//!
//! NVRTC is loaded at run time through `cudarc`. `cudarc` opens it by name
//! (`libnvrtc.so.13`, `.12`, ...), which finds it on the loader path. A pip
//! install (`pip install nvidia-cuda-nvrtc`) puts it in
//! `site-packages/nvidia/cu13/lib`, off that path, so [`locate`] first looks in
//! the usual places (`HLORUN_NVRTC`, `CUDA_HOME`/`CUDA_PATH`, `/usr/local/cuda`,
//! the site-packages of every `python3` on `PATH` and of `VIRTUAL_ENV`) and
//! opens the library it finds by its full path; the dynamic loader then
//! answers `cudarc`'s later open by name with that same library (it matches
//! the soname of loaded libraries). Nothing here panics when NVRTC is absent:
//! [`available`] says why it is missing.

use platform_api::{Error, Result};
use std::ffi::CString;
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

/// The library file names tried, newest first.
const NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// Directories that may hold NVRTC besides the loader path.
fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(p) = std::env::var_os("HLORUN_NVRTC") {
        let p = PathBuf::from(p);
        match p.is_dir() {
            true => dirs.push(p),
            false => dirs.extend(p.parent().map(Path::to_path_buf)),
        }
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(root) = std::env::var_os(var) {
            dirs.push(PathBuf::from(&root).join("lib64"));
            dirs.push(PathBuf::from(&root).join("lib"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    for site in site_packages() {
        for cu in ["cu13", "cu12", "cuda_nvrtc"] {
            dirs.push(site.join("nvidia").join(cu).join("lib"));
        }
    }
    dirs
}

/// `site-packages` directories of the active virtual environment and of the
/// Python installations on `PATH` (found by looking, not by running Python).
fn site_packages() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = Vec::new();
    if let Some(venv) = std::env::var_os("VIRTUAL_ENV") {
        roots.push(PathBuf::from(venv));
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            if dir.join("python3").exists() {
                roots.extend(dir.parent().map(Path::to_path_buf));
            }
        }
    }
    if let Some(home) = std::env::var_os("HOME") {
        roots.push(PathBuf::from(home).join(".local"));
    }
    roots.push(PathBuf::from("/usr/local"));
    roots.push(PathBuf::from("/usr"));
    let mut out = Vec::new();
    for root in roots {
        for lib in ["lib", "lib64"] {
            let Ok(entries) = std::fs::read_dir(root.join(lib)) else {
                continue;
            };
            for entry in entries.flatten() {
                let name = entry.file_name();
                if name.to_string_lossy().starts_with("python3") {
                    out.push(entry.path().join("site-packages"));
                    out.push(entry.path().join("dist-packages"));
                }
            }
        }
    }
    out
}

/// Opens NVRTC once; the library stays loaded for the life of the process.
/// Returns the path opened (or "loader path") or why none was found.
pub fn locate() -> std::result::Result<String, String> {
    static FOUND: OnceLock<std::result::Result<String, String>> = OnceLock::new();
    FOUND
        .get_or_init(|| {
            for dir in candidate_dirs() {
                for name in NAMES {
                    let path = dir.join(name);
                    if !path.exists() {
                        continue;
                    }
                    // SAFETY: opening NVRTC runs no initialisers with
                    // preconditions; the handle is kept (leaked) on purpose.
                    if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
                        std::mem::forget(lib);
                        return Ok(path.display().to_string());
                    }
                }
            }
            // SAFETY: only tries to open the library by its usual names.
            if unsafe { cudarc::nvrtc::sys::is_culib_present() } {
                return Ok("the loader path".to_string());
            }
            Err(
                "NVRTC (libnvrtc.so) not found: install it with `pip install nvidia-cuda-nvrtc`, \
                 put it on LD_LIBRARY_PATH, or set HLORUN_NVRTC to its path"
                    .to_string(),
            )
        })
        .clone()
}

/// Whether NVRTC can be used, or why not.
pub fn available() -> std::result::Result<(), String> {
    locate().map(|_| ())
}

/// NVRTC's version, `(major, minor)`.
pub fn version() -> Result<(i32, i32)> {
    available().map_err(Error::failed_precondition)?;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: NVRTC is loaded (checked above); both pointers are valid.
    let status = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
    status
        .result()
        .map_err(|e| Error::internal(format!("nvrtcVersion failed: {e:?}")))?;
    Ok((major, minor))
}

/// A compute capability as NVRTC and PTX name it (`sm_90` is 9.0).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Arch {
    pub major: u32,
    pub minor: u32,
}

impl Arch {
    /// Parses `sm_90`, `sm_80`, `compute_90`, `90` or `9.0`.
    pub fn parse(text: &str) -> Result<Arch> {
        let digits = text
            .trim()
            .trim_start_matches("sm_")
            .trim_start_matches("compute_")
            .trim_end_matches('a');
        let bad = || {
            Error::invalid_argument(format!(
                "bad CUDA target {text:?}: expected a compute capability such as sm_80 or sm_90"
            ))
        };
        let (major, minor) = match digits.split_once('.') {
            Some((a, b)) => (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?),
            None if digits.len() >= 2 && digits.chars().all(|c| c.is_ascii_digit()) => {
                let (a, b) = digits.split_at(digits.len() - 1);
                (a.parse().map_err(|_| bad())?, b.parse().map_err(|_| bad())?)
            }
            None => return Err(bad()),
        };
        if !(5..=20).contains(&major) || minor > 9 {
            return Err(bad());
        }
        Ok(Arch { major, minor })
    }

    /// `sm_90`.
    pub fn sm(&self) -> String {
        format!("sm_{}{}", self.major, self.minor)
    }
}

/// Compiles `source` to PTX for `arch`. The error carries NVRTC's log.
pub fn compile_to_ptx(source: &str, name: &str, arch: Arch) -> Result<String> {
    available().map_err(Error::failed_precondition)?;
    let src = CString::new(source)
        .map_err(|_| Error::internal("generated CUDA source contains a NUL byte"))?;
    let file = CString::new(format!("{name}.cu")).unwrap_or_default();
    let program = cudarc::nvrtc::result::create_program(&src, Some(&file))
        .map_err(|e| Error::internal(format!("nvrtcCreateProgram failed: {e:?}")))?;
    let options = [
        format!("--gpu-architecture=compute_{}{}", arch.major, arch.minor),
        "--std=c++17".to_string(),
        "--fmad=false".to_string(),
    ];
    // SAFETY: `program` is live until destroyed below; options are valid strings.
    let outcome = unsafe { cudarc::nvrtc::result::compile_program(program, &options) };
    let result = match outcome {
        Ok(()) => {
            // SAFETY: compiled successfully, so PTX is available.
            unsafe { cudarc::nvrtc::result::get_ptx(program) }
                .map(|chars| c_chars_to_string(&chars))
                .map_err(|e| Error::internal(format!("nvrtcGetPTX failed: {e:?}")))
        }
        Err(e) => {
            // SAFETY: the program is live.
            let log = unsafe { cudarc::nvrtc::result::get_program_log(program) }
                .map(|chars| c_chars_to_string(&chars))
                .unwrap_or_default();
            Err(Error::internal(format!(
                "NVRTC could not compile the generated CUDA for {} ({e:?}):\n{}",
                arch.sm(),
                log.chars().take(8000).collect::<String>()
            )))
        }
    };
    // SAFETY: destroyed once, after its last use.
    let _ = unsafe { cudarc::nvrtc::result::destroy_program(program) };
    result
}

fn c_chars_to_string(chars: &[std::ffi::c_char]) -> String {
    let bytes: Vec<u8> = chars
        .iter()
        .map(|&c| c as u8)
        .take_while(|&b| b != 0)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn architectures_parse_and_bad_ones_are_refused() {
        assert_eq!(Arch::parse("sm_90").unwrap(), Arch { major: 9, minor: 0 });
        assert_eq!(Arch::parse("80").unwrap().sm(), "sm_80");
        assert_eq!(Arch::parse("8.6").unwrap().sm(), "sm_86");
        assert_eq!(Arch::parse("sm_100a").unwrap().sm(), "sm_100");
        for bad in ["", "sm_", "gpu", "sm_9x", "sm_1", "sm_999"] {
            let e = Arch::parse(bad).unwrap_err();
            assert!(e.message().contains("sm_80"), "{bad}: {}", e.message());
        }
    }
}
