//! The host emulator: runs a [`Program`]'s kernels on the CPU.
//!
//! The generated source compiles as C11 with `HLORUN_EMULATE` defined (see
//! `codegen/prelude.h`): each kernel becomes a plain function that one thread
//! runs over all elements. The schedule runs through the same
//! [`crate::run`] code a GPU run uses. This checks what the code generator
//! emits — index arithmetic, fusion, element semantics, loops, branches —
//! on machines without a GPU; it says nothing about the CUDA runtime, timing
//! or races (the kernels have none by construction).
//!
//! Needs a C compiler (`cc`, or `$CC`). It is a test tool, not a platform.

use crate::program::Program;
use crate::run::{run_program, KernelDevice};
use platform_api::{Error, Literal, Result, Shape};
use std::alloc::Layout;
use std::collections::HashMap;
use std::ffi::c_char;
use std::path::PathBuf;
use std::sync::Mutex;

type EmulatedKernel = unsafe extern "C" fn(*mut *mut c_char);

/// A program's kernels compiled for the host.
pub struct Emulator {
    _library: libloading::Library,
    kernels: Vec<EmulatedKernel>,
    _dir: TempDir,
}

struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

impl Emulator {
    /// Compiles `program.source` with the host C compiler.
    pub fn build(program: &Program) -> Result<Emulator> {
        static COUNTER: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::env::temp_dir().join(format!("hlorun-emulate-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).map_err(|e| Error::from(e).context(dir.display()))?;
        let dir = TempDir(dir);
        let src = dir.0.join("program.c");
        let lib = dir.0.join("program.so");
        std::fs::write(&src, &program.source).map_err(|e| Error::from(e).context(src.display()))?;
        let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
        let output = std::process::Command::new(&cc)
            .args([
                "-std=c11",
                "-O1",
                "-DHLORUN_EMULATE",
                "-shared",
                "-fPIC",
                "-w",
                "-o",
            ])
            .arg(&lib)
            .arg(&src)
            .arg("-lm")
            .output()
            .map_err(|e| {
                Error::failed_precondition(format!("cannot run the C compiler `{cc}`: {e}"))
            })?;
        if !output.status.success() {
            return Err(Error::internal(format!(
                "the generated code of {} does not compile as C:\n{}",
                program.name,
                String::from_utf8_lossy(&output.stderr)
                    .chars()
                    .take(6000)
                    .collect::<String>()
            )));
        }
        // SAFETY: the library is the one just built from generated code; its
        // initialisers are the C runtime's.
        let library = unsafe { libloading::Library::new(&lib) }
            .map_err(|e| Error::internal(format!("cannot load {}: {e}", lib.display())))?;
        let mut kernels = Vec::new();
        for kernel in &program.kernels {
            let symbol = format!("{}_emulate", kernel.name);
            // SAFETY: every kernel has an `_emulate` entry of this signature.
            let f: libloading::Symbol<EmulatedKernel> =
                unsafe { library.get(symbol.as_bytes()) }
                    .map_err(|e| Error::internal(format!("{symbol}: {e}")))?;
            kernels.push(*f);
        }
        Ok(Emulator {
            _library: library,
            kernels,
            _dir: dir,
        })
    }

    /// Runs `program` on `args` (one literal per entry parameter).
    pub fn run(&self, program: &Program, args: &[Literal]) -> Result<Literal> {
        let device = HostDevice {
            emulator: self,
            blocks: Mutex::new(HashMap::new()),
        };
        let mut parameters = Vec::new();
        for arg in args {
            for leaf in leaves(arg) {
                let bytes = leaf.bytes()?;
                let p = device.alloc(bytes.len() as u64)?;
                device.upload(p, bytes)?;
                parameters.push(p);
            }
        }
        let result_leaves: Vec<(Shape, usize)> = program
            .result_shape
            .leaves()
            .into_iter()
            .map(|(_, a)| (Shape::Array(a.clone()), a.byte_size()))
            .collect();
        let mut results = Vec::new();
        for (_, bytes) in &result_leaves {
            results.push(device.alloc(*bytes as u64)?);
        }
        run_program(program, &device, &parameters, &results)?;
        let mut values = Vec::new();
        for ((shape, size), &p) in result_leaves.iter().zip(&results) {
            let mut bytes = vec![0u8; *size];
            device.download(p, &mut bytes)?;
            values.push(Literal::from_bytes(shape.clone(), &bytes)?);
        }
        Ok(match program.result_shape {
            Shape::Tuple(_) => rebuild(&program.result_shape, &mut values.into_iter()),
            _ => values.pop().unwrap_or_else(|| Literal::tuple(Vec::new())),
        })
    }
}

fn leaves(literal: &Literal) -> Vec<&Literal> {
    if literal.is_tuple() {
        literal.tuple_elements().iter().flat_map(leaves).collect()
    } else {
        vec![literal]
    }
}

fn rebuild(shape: &Shape, values: &mut impl Iterator<Item = Literal>) -> Literal {
    match shape {
        Shape::Tuple(elements) => {
            Literal::tuple(elements.iter().map(|s| rebuild(s, values)).collect())
        }
        _ => values.next().unwrap_or_else(|| Literal::tuple(Vec::new())),
    }
}

/// Host memory standing in for device memory during one emulated run.
struct HostDevice<'e> {
    emulator: &'e Emulator,
    blocks: Mutex<HashMap<u64, Layout>>,
}

impl KernelDevice for HostDevice<'_> {
    fn alloc(&self, bytes: u64) -> Result<u64> {
        let layout = Layout::from_size_align(bytes.max(1) as usize, 256)
            .map_err(|_| Error::resource_exhausted(format!("cannot allocate {bytes} bytes")))?;
        // SAFETY: the layout has a non-zero size.
        let p = unsafe { std::alloc::alloc_zeroed(layout) };
        if p.is_null() {
            return Err(Error::resource_exhausted(format!(
                "cannot allocate {bytes} bytes"
            )));
        }
        self.blocks
            .lock()
            .map_err(|_| Error::internal("poisoned"))?
            .insert(p as u64, layout);
        Ok(p as u64)
    }

    unsafe fn free(&self, ptr: u64) {
        if let Some(layout) = self.blocks.lock().ok().and_then(|mut b| b.remove(&ptr)) {
            // SAFETY: allocated by `alloc` with this layout.
            unsafe { std::alloc::dealloc(ptr as *mut u8, layout) };
        }
    }

    fn upload(&self, dst: u64, data: &[u8]) -> Result<()> {
        // SAFETY: `dst` points into a block at least `data.len()` long (the
        // schedule's sizes come from the shapes the blocks were sized by).
        unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst as *mut u8, data.len()) };
        Ok(())
    }

    fn download(&self, src: u64, out: &mut [u8]) -> Result<()> {
        // SAFETY: as in `upload`.
        unsafe { std::ptr::copy_nonoverlapping(src as *const u8, out.as_mut_ptr(), out.len()) };
        Ok(())
    }

    fn copy(&self, dst: u64, src: u64, bytes: u64) -> Result<()> {
        // SAFETY: as in `upload`; the schedule never copies between overlapping ranges.
        unsafe { std::ptr::copy(src as *const u8, dst as *mut u8, bytes as usize) };
        Ok(())
    }

    fn launch(&self, kernel: usize, _grid: u32, _block: u32, args: &[u64]) -> Result<()> {
        let f = self
            .emulator
            .kernels
            .get(kernel)
            .ok_or_else(|| Error::internal(format!("kernel {kernel} out of range")))?;
        let mut pointers: Vec<*mut c_char> = args.iter().map(|&a| a as *mut c_char).collect();
        // SAFETY: the kernel takes exactly these buffers, all live for the run.
        unsafe { f(pointers.as_mut_ptr()) };
        Ok(())
    }

    fn custom_call(
        &self,
        target: &str,
        _api_version: platform_api::hlo::CustomCallApiVersion,
        _buffers: &[u64],
        _opaque: &[u8],
    ) -> Result<()> {
        Err(Error::unimplemented(format!(
            "the host emulator runs no custom calls (target {target:?})"
        )))
    }
}
