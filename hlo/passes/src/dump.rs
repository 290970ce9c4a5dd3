//! Dumps of a module as a compiler transforms it, as XLA's `--xla_dump_to`.
//!
//! A compile with the debug option `dump_to=DIR` (the command line's
//! `--dump DIR`) writes into DIR, for each module, the text after every pass
//! that changed it, numbered in the order they ran
//! (`jit_f.0003.simplify-cse.hlo`), and whatever else its platform explains
//! about the compile (the Host's fusion decisions and buffer plan,
//! `jit_f.0042.host-plan.main.txt`). Files are written as the compile goes, so
//! a pass that fails leaves the dumps up to the module it was given.
//!
//! A failure to write is an error of the compile: a user who asked for dumps
//! and gets none should hear why.

use hlo_ir::error::{Error, Result};
use hlo_ir::HloModule;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The debug option that turns dumping on.
pub const DUMP_OPTION: &str = "dump_to";

/// Where one module's dumps go, and the next file number.
#[derive(Debug)]
pub struct Dump {
    dir: PathBuf,
    module_name: String,
    next: AtomicUsize,
}

impl Dump {
    /// A dump into `dir` for `module` (the directory is created), or `None`
    /// when `dir` is `None` (dumping off).
    pub fn open(dir: Option<&str>, module: &HloModule) -> Result<Option<Dump>> {
        let Some(dir) = dir else { return Ok(None) };
        if dir.is_empty() {
            return Err(Error::invalid_argument(format!(
                "debug option {DUMP_OPTION} needs a directory"
            )));
        }
        std::fs::create_dir_all(dir).map_err(|e| {
            Error::from(e).context(format_args!("creating the dump directory {dir}"))
        })?;
        // The next number continues from what is there, so a second compile
        // (another platform, another module) does not overwrite the first's.
        let next = std::fs::read_dir(dir)
            .map(|entries| entries.filter_map(|e| e.ok()).count())
            .unwrap_or(0);
        Ok(Some(Dump {
            dir: PathBuf::from(dir),
            module_name: file_safe(&module.name),
            next: AtomicUsize::new(next),
        }))
    }

    /// The dump directory.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// Writes `module`'s text as the state after `stage` (a pass name).
    pub fn module(&self, stage: &str, module: &HloModule) -> Result<PathBuf> {
        self.text(stage, "hlo", &module.to_text())
    }

    /// Writes `text` as the file for `stage` with extension `ext`.
    pub fn text(&self, stage: &str, ext: &str, text: &str) -> Result<PathBuf> {
        let n = self.next.fetch_add(1, Ordering::Relaxed);
        let path = self.dir.join(format!(
            "{}.{n:04}.{}.{ext}",
            self.module_name,
            file_safe(stage)
        ));
        std::fs::write(&path, text)
            .map_err(|e| Error::from(e).context(format_args!("writing {}", path.display())))?;
        Ok(path)
    }
}

/// `name` with every character that is awkward in a file name replaced.
fn file_safe(name: &str) -> String {
    let s: String = name
        .chars()
        .take(100)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' || c == '.' {
                c
            } else {
                '-'
            }
        })
        .collect();
    if s.is_empty() {
        "module".to_string()
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dumps_are_numbered_in_order_and_named_safely() {
        let dir = std::env::temp_dir().join(format!("hlo-dump-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let module =
            HloModule::parse("HloModule jit_f\n\nENTRY main {\n  ROOT c = f32[] constant(1)\n}\n")
                .unwrap();
        let dump = Dump::open(dir.to_str(), &module).unwrap().unwrap();
        let a = dump.module("input", &module).unwrap();
        let b = dump.text("simplify/cse", "hlo", "x").unwrap();
        assert_eq!(a.file_name().unwrap(), "jit_f.0000.input.hlo");
        assert_eq!(b.file_name().unwrap(), "jit_f.0001.simplify-cse.hlo");
        assert!(std::fs::read_to_string(&a).unwrap().contains("constant(1)"));
        // Another dump into the same directory continues the numbering.
        let again = Dump::open(dir.to_str(), &module).unwrap().unwrap();
        let c = again.text("input", "hlo", "y").unwrap();
        assert_eq!(c.file_name().unwrap(), "jit_f.0002.input.hlo");
        assert!(Dump::open(None, &module).unwrap().is_none());
        let _ = std::fs::remove_dir_all(&dir);
    }
}
