//! Running a [`Program`]'s schedule on a [`KernelDevice`].
//!
//! The runner is the same for the GPU (a CUDA stream with the program's PTX
//! module loaded) and for the host emulator the tests use, so everything but
//! the device calls themselves is checked on machines without a GPU.

use crate::program::{BufferRef, Program, Thunk};
use platform_api::{Error, Result};

/// What running a schedule needs from a device. One value serves one run on
/// one stream: calls are ordered as made (a stream-ordered device queues them),
/// and only [`download`](Self::download) waits for earlier work.
pub trait KernelDevice {
    /// Allocates `bytes` of device memory; `bytes` may be 0.
    fn alloc(&self, bytes: u64) -> Result<u64>;
    /// Frees `ptr` once the work queued before this call is done.
    ///
    /// # Safety
    /// `ptr` came from [`alloc`](Self::alloc) on this device and is not used by
    /// anything queued after this call.
    unsafe fn free(&self, ptr: u64);
    /// Copies host bytes to device memory; `data` may be dropped on return.
    fn upload(&self, dst: u64, data: &[u8]) -> Result<()>;
    /// Waits for queued work, then copies device memory into `out`.
    fn download(&self, src: u64, out: &mut [u8]) -> Result<()>;
    /// Queues a device-to-device copy of `bytes`.
    fn copy(&self, dst: u64, src: u64, bytes: u64) -> Result<()>;
    /// Queues kernel `kernel` of the program (index into `Program::kernels`),
    /// each argument a device pointer.
    fn launch(&self, kernel: usize, grid: u32, block: u32, args: &[u64]) -> Result<()>;
    /// Queues a custom call with XLA's GPU ABI on this device's stream.
    fn custom_call(
        &self,
        target: &str,
        api_version: platform_api::hlo::CustomCallApiVersion,
        buffers: &[u64],
        opaque: &[u8],
    ) -> Result<()>;
}

/// The addresses of one run's buffers.
pub struct Bindings<'a> {
    pub arena: u64,
    pub parameters: &'a [u64],
    pub results: &'a [u64],
}

impl Bindings<'_> {
    fn address(&self, buffer: BufferRef) -> Result<u64> {
        let leaf = |list: &[u64], leaf: usize, what: &str| {
            list.get(leaf)
                .copied()
                .ok_or_else(|| Error::internal(format!("{what} leaf {leaf} out of range")))
        };
        match buffer {
            BufferRef::Arena { offset } => Ok(self.arena + offset),
            BufferRef::Parameter { leaf: l } => leaf(self.parameters, l, "parameter"),
            BufferRef::Result { leaf: l } => leaf(self.results, l, "result"),
        }
    }
}

/// Runs `program` with its arena allocated (and freed afterwards, also on
/// error) on `device`.
pub fn run_program(
    program: &Program,
    device: &dyn KernelDevice,
    parameters: &[u64],
    results: &[u64],
) -> Result<()> {
    let arena = device.alloc(program.arena_bytes)?;
    let bindings = Bindings {
        arena,
        parameters,
        results,
    };
    let outcome = run_thunks(program, &program.schedule, device, &bindings);
    // SAFETY: the arena came from this device and nothing is queued after.
    unsafe { device.free(arena) };
    outcome
}

/// Runs a list of thunks in order.
pub fn run_thunks(
    program: &Program,
    thunks: &[Thunk],
    device: &dyn KernelDevice,
    at: &Bindings,
) -> Result<()> {
    for thunk in thunks {
        match thunk {
            Thunk::Launch { kernel, dims, args } => {
                let args = args
                    .iter()
                    .map(|b| at.address(*b))
                    .collect::<Result<Vec<_>>>()?;
                device.launch(*kernel, dims.grid, dims.block, &args)?;
            }
            Thunk::Copy { dst, src, bytes } => {
                if *bytes > 0 {
                    device.copy(at.address(*dst)?, at.address(*src)?, *bytes)?;
                }
            }
            Thunk::Upload { dst, data } => {
                let bytes = program
                    .constants
                    .get(*data)
                    .ok_or_else(|| Error::internal(format!("constant {data} out of range")))?;
                if !bytes.is_empty() {
                    device.upload(at.address(*dst)?, bytes)?;
                }
            }
            Thunk::While {
                condition,
                predicate,
                body,
            } => loop {
                run_thunks(program, condition, device, at)?;
                let mut flag = [0u8];
                device.download(at.address(*predicate)?, &mut flag)?;
                if flag[0] == 0 {
                    break;
                }
                run_thunks(program, body, device, at)?;
            },
            Thunk::Conditional {
                index,
                index_is_pred,
                branches,
            } => {
                let chosen = if *index_is_pred {
                    let mut flag = [0u8];
                    device.download(at.address(*index)?, &mut flag)?;
                    if flag[0] != 0 {
                        0
                    } else {
                        1
                    }
                } else {
                    let mut bytes = [0u8; 4];
                    device.download(at.address(*index)?, &mut bytes)?;
                    let i = i32::from_le_bytes(bytes);
                    // Out of range (negative included) runs the last branch.
                    if i < 0 || i as usize >= branches.len() {
                        branches.len().saturating_sub(1)
                    } else {
                        i as usize
                    }
                };
                if let Some(branch) = branches.get(chosen) {
                    run_thunks(program, branch, device, at)?;
                }
            }
            Thunk::CustomCall {
                target,
                api_version,
                opaque,
                buffers,
                ..
            } => {
                let buffers = buffers
                    .iter()
                    .map(|b| at.address(*b))
                    .collect::<Result<Vec<_>>>()?;
                device.custom_call(target, *api_version, &buffers, opaque)?;
            }
        }
    }
    Ok(())
}
