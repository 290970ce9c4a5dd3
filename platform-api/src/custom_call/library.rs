//! Custom-call targets in shared libraries, found by symbol name.
//!
//! XLA resolves a `custom_call_target` it has no registration for by looking the
//! name up as a symbol. Here a user names the libraries to search
//! ([`load_library`], `hlorun --custom-call-lib`); a target missing from the
//! registry is then looked for in them, in the order they were loaded. A C
//! symbol carries no signature, so the instruction's `api_version` decides how it
//! is called, exactly as in XLA.
//!
//! Loading reads the file's dynamic symbol table (ELF) first, to refuse a library
//! that exports no function at all with a clear message and to list what it does
//! export when a target is not found. The library is then opened with
//! `RTLD_NOW`: a library that calls `XlaCustomCallStatusSetFailure` in a program
//! that does not export it fails to load, naming the symbol, instead of crashing
//! at the first call. Libraries are never unloaded, so a resolved symbol stays
//! valid for the life of the process.

use super::status::status_entry_points;
use crate::error::{Error, Result};
use std::ffi::c_void;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

struct LoadedLibrary {
    path: PathBuf,
    /// Defined function symbols it exports (`None`: not an ELF file, so unknown).
    exports: Option<Vec<String>>,
    library: libloading::Library,
}

static LIBRARIES: Mutex<Vec<LoadedLibrary>> = Mutex::new(Vec::new());

fn libraries() -> std::sync::MutexGuard<'static, Vec<LoadedLibrary>> {
    LIBRARIES.lock().unwrap_or_else(|e| e.into_inner())
}

/// Loads the shared library at `path` so its exported functions can serve as
/// custom-call targets on every platform. Loading the same file again does
/// nothing. Errors (`NotFound` for a missing file, `InvalidArgument` otherwise)
/// name the file and say why it cannot be used.
pub fn load_library(path: &Path) -> Result<()> {
    // Every program that can load a library keeps the status functions a
    // library may call (see `status.rs`).
    std::hint::black_box(status_entry_points());

    let canonical = std::fs::canonicalize(path).map_err(|e| {
        Error::new(
            Error::from(e).code(),
            format!(
                "custom-call library {}: cannot open the file",
                path.display()
            ),
        )
    })?;
    if libraries().iter().any(|l| l.path == canonical) {
        return Ok(());
    }
    let bytes = std::fs::read(&canonical).map_err(|e| {
        Error::invalid_argument(format!(
            "custom-call library {}: cannot read it: {e}",
            path.display()
        ))
    })?;
    let exports = match exported_functions(&bytes) {
        Ok(list) => list,
        Err(why) => {
            return Err(Error::invalid_argument(format!(
                "custom-call library {}: not a usable shared library: {why}",
                path.display()
            )))
        }
    };
    if exports.as_ref().is_some_and(|e| e.is_empty()) {
        return Err(Error::invalid_argument(format!(
            "custom-call library {} exports no functions, so it can serve no custom-call target \
             (were the targets declared `static`, or hidden with -fvisibility=hidden?)",
            path.display()
        )));
    }
    let library = open(&canonical).map_err(|why| {
        let hint = if why.contains("XlaCustomCallStatus") {
            "; the program must export the status functions (link it with -rdynamic, as hlorun is)"
        } else {
            ""
        };
        Error::invalid_argument(format!(
            "custom-call library {} cannot be loaded: {why}{hint}",
            path.display()
        ))
    })?;
    libraries().push(LoadedLibrary {
        path: canonical,
        exports,
        library,
    });
    Ok(())
}

#[cfg(unix)]
fn open(path: &Path) -> std::result::Result<libloading::Library, String> {
    use libloading::os::unix::{Library, RTLD_LOCAL, RTLD_NOW};
    // SAFETY: loading runs the library's initialisers; the user asked for this
    // library to be loaded and vouches for it, as with any plug-in.
    unsafe { Library::open(Some(path), RTLD_NOW | RTLD_LOCAL) }
        .map(Into::into)
        .map_err(|e| error_text(&e))
}

#[cfg(not(unix))]
fn open(path: &Path) -> std::result::Result<libloading::Library, String> {
    // SAFETY: as above.
    unsafe { libloading::Library::new(path) }.map_err(|e| error_text(&e))
}

fn error_text(e: &libloading::Error) -> String {
    use std::error::Error as _;
    match e.source() {
        Some(source) => source.to_string(),
        None => e.to_string(),
    }
}

/// The address of the symbol `name` in the first loaded library that exports
/// it, with that library's path.
pub(crate) fn find_symbol(name: &str) -> Option<(*const c_void, PathBuf)> {
    if name.is_empty() || name.contains('\0') {
        return None;
    }
    for lib in libraries().iter() {
        // SAFETY: we only take the symbol's address; nothing is called here.
        let symbol = unsafe { lib.library.get::<*mut c_void>(name) };
        if let Ok(symbol) = symbol {
            let address: *mut c_void = *symbol;
            if !address.is_null() {
                return Some((address.cast_const(), lib.path.clone()));
            }
        }
    }
    None
}

/// One line per loaded library with what it exports, for "not found" errors.
pub(crate) fn describe_libraries() -> String {
    let libs = libraries();
    if libs.is_empty() {
        return "no custom-call libraries are loaded".to_string();
    }
    let parts: Vec<String> = libs
        .iter()
        .map(|l| match &l.exports {
            Some(names) => format!("{} (exports {})", l.path.display(), abbreviate(names)),
            None => format!("{} (exports unknown)", l.path.display()),
        })
        .collect();
    format!("loaded libraries: {}", parts.join("; "))
}

fn abbreviate(names: &[String]) -> String {
    const SHOWN: usize = 20;
    let mut text = names
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if names.len() > SHOWN {
        text.push_str(&format!(", and {} more", names.len() - SHOWN));
    }
    text
}

/// The paths of the loaded libraries, in load order.
pub fn loaded_libraries() -> Vec<PathBuf> {
    libraries().iter().map(|l| l.path.clone()).collect()
}

/// Defined, visible function symbols in an ELF file's dynamic symbol table,
/// sorted. `Ok(None)` for a file that is not ELF (left to the dynamic loader to
/// judge); `Err` for an ELF file that is not a shared library or is damaged.
fn exported_functions(bytes: &[u8]) -> std::result::Result<Option<Vec<String>>, String> {
    if bytes.get(0..4) != Some(b"\x7fELF") {
        return Ok(None);
    }
    let elf = Elf::new(bytes)?;
    let e_type = elf.u16(16)?;
    const ET_DYN: u16 = 3;
    if e_type != ET_DYN {
        return Err(format!("ELF type {e_type} is not a shared object (3)"));
    }
    let (shoff, shentsize, shnum) = if elf.wide {
        (elf.u64(0x28)?, elf.u16(0x3A)?, elf.u16(0x3C)?)
    } else {
        (elf.u32(0x20)? as u64, elf.u16(0x2E)?, elf.u16(0x30)?)
    };
    let section = |i: u64| -> std::result::Result<Section, String> {
        let base = shoff
            .checked_add(i * shentsize as u64)
            .ok_or("section table out of range")?;
        let base = usize::try_from(base).map_err(|_| "section table out of range")?;
        Ok(if elf.wide {
            Section {
                kind: elf.u32(base + 4)?,
                offset: elf.u64(base + 24)?,
                size: elf.u64(base + 32)?,
                link: elf.u32(base + 40)?,
                entsize: elf.u64(base + 56)?,
            }
        } else {
            Section {
                kind: elf.u32(base + 4)?,
                offset: elf.u32(base + 16)? as u64,
                size: elf.u32(base + 20)? as u64,
                link: elf.u32(base + 24)?,
                entsize: elf.u32(base + 36)? as u64,
            }
        })
    };
    const SHT_DYNSYM: u32 = 11;
    let mut names = Vec::new();
    for i in 0..shnum as u64 {
        let dynsym = section(i)?;
        if dynsym.kind != SHT_DYNSYM {
            continue;
        }
        let strtab = section(dynsym.link as u64)?;
        let sym_size: u64 = if elf.wide { 24 } else { 16 };
        let entsize = if dynsym.entsize == 0 {
            sym_size
        } else {
            dynsym.entsize
        };
        let count = dynsym.size / entsize;
        for s in 0..count {
            let base =
                usize::try_from(dynsym.offset + s * entsize).map_err(|_| "symbol out of range")?;
            let (name, info, other, shndx) = if elf.wide {
                (
                    elf.u32(base)?,
                    elf.u8(base + 4)?,
                    elf.u8(base + 5)?,
                    elf.u16(base + 6)?,
                )
            } else {
                (
                    elf.u32(base)?,
                    elf.u8(base + 12)?,
                    elf.u8(base + 13)?,
                    elf.u16(base + 14)?,
                )
            };
            const STT_FUNC: u8 = 2;
            const STT_GNU_IFUNC: u8 = 10;
            const STB_GLOBAL: u8 = 1;
            const STB_WEAK: u8 = 2;
            let is_function = matches!(info & 0xf, STT_FUNC | STT_GNU_IFUNC);
            let is_visible =
                matches!(info >> 4, STB_GLOBAL | STB_WEAK) && matches!(other & 3, 0 | 3);
            if !is_function || !is_visible || shndx == 0 {
                continue;
            }
            let start =
                usize::try_from(strtab.offset + name as u64).map_err(|_| "name out of range")?;
            let end_of_table =
                usize::try_from(strtab.offset + strtab.size).map_err(|_| "name out of range")?;
            let text = bytes
                .get(start..end_of_table.min(bytes.len()))
                .ok_or("symbol name out of range")?;
            let len = text.iter().position(|&b| b == 0).unwrap_or(text.len());
            let name = String::from_utf8_lossy(&text[..len]).into_owned();
            // `_init`, `_fini` and `__`-names belong to the toolchain, not the author.
            if name.is_empty() || name == "_init" || name == "_fini" || name.starts_with("__") {
                continue;
            }
            names.push(name);
        }
    }
    names.sort();
    names.dedup();
    Ok(Some(names))
}

struct Section {
    kind: u32,
    offset: u64,
    size: u64,
    link: u32,
    entsize: u64,
}

/// Bounds-checked reads from an ELF image of either class and byte order.
struct Elf<'a> {
    bytes: &'a [u8],
    wide: bool,
    little: bool,
}

impl<'a> Elf<'a> {
    fn new(bytes: &'a [u8]) -> std::result::Result<Self, String> {
        let wide = match bytes.get(4) {
            Some(1) => false,
            Some(2) => true,
            _ => return Err("unknown ELF class".into()),
        };
        let little = match bytes.get(5) {
            Some(1) => true,
            Some(2) => false,
            _ => return Err("unknown ELF byte order".into()),
        };
        Ok(Elf {
            bytes,
            wide,
            little,
        })
    }
    fn take<const N: usize>(&self, at: usize) -> std::result::Result<[u8; N], String> {
        let slice = at
            .checked_add(N)
            .and_then(|end| self.bytes.get(at..end))
            .ok_or_else(|| format!("truncated ELF file (read at byte {at})"))?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        if !self.little {
            out.reverse();
        }
        Ok(out)
    }
    fn u8(&self, at: usize) -> std::result::Result<u8, String> {
        Ok(self.take::<1>(at)?[0])
    }
    fn u16(&self, at: usize) -> std::result::Result<u16, String> {
        Ok(u16::from_le_bytes(self.take(at)?))
    }
    fn u32(&self, at: usize) -> std::result::Result<u32, String> {
        Ok(u32::from_le_bytes(self.take(at)?))
    }
    fn u64(&self, at: usize) -> std::result::Result<u64, String> {
        Ok(u64::from_le_bytes(self.take(at)?))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn non_elf_is_left_to_the_loader_and_broken_elf_is_refused() {
        assert_eq!(exported_functions(b"hello"), Ok(None));
        assert!(exported_functions(b"\x7fELF\x02\x01").is_err());
        let mut header = vec![0u8; 64];
        header[..6].copy_from_slice(b"\x7fELF\x02\x01");
        header[16] = 2; // ET_EXEC
        let e = exported_functions(&header).unwrap_err();
        assert!(e.contains("not a shared object"), "{e}");
    }

    #[test]
    fn missing_file_is_not_found() {
        let e = load_library(Path::new("/nonexistent/libnothing.so")).unwrap_err();
        assert_eq!(e.code(), crate::Code::NotFound);
        assert!(e.message().contains("/nonexistent/libnothing.so"), "{e}");
    }
}
