//! A test's scratch directory under the system's temporary directory,
//! removed when the test ends (passing or not): the CI machine shares its
//! disk, so directories left per test and run add up.

use std::path::{Path, PathBuf};

pub struct Scratch(PathBuf);

impl Scratch {
    /// A fresh, empty `<tmp>/<prefix>-<pid>-<test>`.
    pub fn new(prefix: &str, test: &str) -> Scratch {
        let dir = std::env::temp_dir().join(format!("{prefix}-{}-{test}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        Scratch(dir)
    }
}

impl std::ops::Deref for Scratch {
    type Target = PathBuf;
    fn deref(&self) -> &PathBuf {
        &self.0
    }
}

impl AsRef<Path> for Scratch {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
