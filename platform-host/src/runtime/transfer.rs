//! [`HostTransferManager`]: the generic byte-copy transfer manager, with every
//! array on the device in row-major order.
//!
//! Host executables treat every value as a logical row-major array (layout
//! normalization removes layouts from the program), so device buffers must be
//! row-major whatever layout the host value's shape names; the transfer manager
//! permutes on the way in and out.
//!
//! Device memory is host memory, so a result need not be copied at all:
//! [`TransferManager::take_literal_from_device`] hands each large array
//! allocation that no other buffer shares to its literal, which keeps it
//! until dropped (then it returns to the executor's block cache). This is what
//! XLA's CPU client does when jax turns a result into a NumPy array; copying a
//! 16 MB result costs about as much as computing an elementwise program.

use crate::PLATFORM_NAME;
use platform_api::{
    DeviceAllocation, Error, GenericTransferManager, Literal, Result, Shape, ShapedBuffer, Stream,
    TransferManager,
};
use std::sync::Arc;

/// Arrays smaller than this are copied out even when they could be adopted:
/// the copy is cheap and the allocation goes straight back to the executor.
const ADOPT_MIN_BYTES: usize = 64 << 10;

/// Row-major layout on every array of `shape`.
pub fn row_major_device_shape(shape: &Shape) -> Shape {
    shape.without_layout().with_default_layouts()
}

/// The Host platform's transfer manager.
pub struct HostTransferManager {
    generic: GenericTransferManager,
}

impl Default for HostTransferManager {
    fn default() -> Self {
        Self::new()
    }
}

impl HostTransferManager {
    pub const fn new() -> Self {
        HostTransferManager {
            generic: GenericTransferManager::new(PLATFORM_NAME),
        }
    }
}

impl TransferManager for HostTransferManager {
    fn platform_id(&self) -> &'static str {
        PLATFORM_NAME
    }

    fn device_shape(&self, host_shape: &Shape) -> Shape {
        row_major_device_shape(host_shape)
    }

    fn transfer_literal_to_device(
        &self,
        stream: &Arc<dyn Stream>,
        literal: &Literal,
        dst: &ShapedBuffer,
    ) -> Result<()> {
        self.generic
            .transfer_literal_to_device(stream, literal, dst)
    }

    fn transfer_literal_from_device(
        &self,
        stream: &Arc<dyn Stream>,
        src: &ShapedBuffer,
    ) -> Result<Literal> {
        self.generic.transfer_literal_from_device(stream, src)
    }

    fn take_literal_from_device(
        &self,
        stream: &Arc<dyn Stream>,
        src: ShapedBuffer,
    ) -> Result<Literal> {
        stream.block_host_until_done()?;
        let shape = src.shape().clone();
        let mut nodes = src.into_nodes().into_iter();
        let literal = take_node(&shape, &mut nodes)?;
        debug_assert!(nodes.next().is_none(), "one allocation per node");
        Ok(literal)
    }

    fn write_tuple_index_tables(
        &self,
        stream: &Arc<dyn Stream>,
        buffer: &ShapedBuffer,
    ) -> Result<()> {
        self.generic.write_tuple_index_tables(stream, buffer)
    }
}

/// The literal for the node of `shape` next in `nodes` (preorder), adopting
/// or copying each array's allocation. The stream has finished writing them.
fn take_node(
    shape: &Shape,
    nodes: &mut impl Iterator<Item = Arc<DeviceAllocation>>,
) -> Result<Literal> {
    let node = nodes.next().ok_or_else(|| {
        Error::internal(format!("device buffer of shape {shape} is missing a node"))
    })?;
    match shape {
        Shape::Token => Ok(Literal::token()),
        Shape::Tuple(elements) => {
            drop(node); // the index table
            let parts = elements
                .iter()
                .map(|e| take_node(e, nodes))
                .collect::<Result<Vec<_>>>()?;
            Ok(Literal::tuple(parts))
        }
        Shape::Array(array) => {
            let len = array.byte_size();
            if node.size() < len {
                return Err(Error::internal(format!(
                    "device buffer of {} bytes holds a {shape} of {len} bytes",
                    node.size()
                )));
            }
            let ptr = node.mem().opaque.cast::<u8>();
            // Host device buffers are always row-major (`row_major_device_shape`).
            let mut literal = if len >= ADOPT_MIN_BYTES {
                match Arc::try_unwrap(node) {
                    // SAFETY: the allocation is host memory of at least `len`
                    // bytes, 64-byte aligned, written by the finished stream;
                    // it is ours alone (the `Arc` was unique) and the owner
                    // we hand over frees it when the literal is dropped.
                    Ok(alloc) => unsafe {
                        Literal::adopt_array(shape.clone(), ptr, Box::new(alloc))?
                    },
                    // SAFETY: as above, read while `shared` keeps it alive.
                    Err(shared) => unsafe { copy_out(shape, ptr, len, &shared)? },
                }
            } else {
                // SAFETY: as above.
                unsafe { copy_out(shape, ptr, len, &node)? }
            };
            literal.set_layout(array.layout.clone());
            Ok(literal)
        }
    }
}

/// A copy of the `len` bytes at `ptr`, which `_alive` keeps allocated.
///
/// # Safety
/// `ptr` is host memory holding `len` initialised bytes.
unsafe fn copy_out(
    shape: &Shape,
    ptr: *const u8,
    len: usize,
    _alive: &DeviceAllocation,
) -> Result<Literal> {
    let bytes: &[u8] = if len == 0 {
        &[]
    } else {
        // SAFETY: the caller's contract.
        unsafe { std::slice::from_raw_parts(ptr, len) }
    };
    Literal::from_bytes(shape.clone(), bytes)
}
