//! [`TransferManager`]: moving [`Literal`]s to and from [`ShapedBuffer`]s.
//!
//! Host literals are row-major; device buffers are in the layout of the device
//! shape. The transfer manager converts between the two, allocates device buffers
//! shaped like a value, and writes the tuple index tables that make a tuple on a
//! device a table of pointers. [`GenericTransferManager`] does all of this through
//! a [`Stream`]'s copies and serves any platform whose memory is byte-addressable
//! (all of ours).

use crate::device::Stream;
use crate::device::StreamExecutor;
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::memory::{preorder_subshapes, ShapedBuffer};
use crate::shape::Shape;

// The byte reorderings moved to the program crate; kept here by name for backends.
pub use hlo_ir::literal::layout::{
    is_row_major, layout_strides, layout_to_row_major, row_major_to_layout,
};
use std::sync::Arc;

/// Moves values between host and device for one platform.
///
/// # Threading
/// Stateless from the caller's view: any method may be called from any thread.
/// Copies are ordered by the stream they are enqueued on.
pub trait TransferManager: Send + Sync {
    /// The platform this transfer manager serves.
    fn platform_id(&self) -> &'static str;

    /// The shape a host value of `host_shape` takes on the device: the same shape,
    /// with the device's layout filled in where the host shape names none.
    fn device_shape(&self, host_shape: &Shape) -> Shape {
        host_shape.with_default_layouts()
    }

    /// Allocates a buffer for a value of `device_shape` on `executor`, with its
    /// tuple index tables written (so it is ready to be an argument or output).
    fn allocate(&self, stream: &Arc<dyn Stream>, device_shape: &Shape) -> Result<ShapedBuffer> {
        let executor = stream.executor();
        let buffer = ShapedBuffer::allocate(&executor, device_shape)?;
        self.write_tuple_index_tables(stream, &buffer)?;
        Ok(buffer)
    }

    /// Copies `literal` into `dst` (whose shape must be compatible), converting to
    /// the device layout, and writes `dst`'s index tables.
    fn transfer_literal_to_device(
        &self,
        stream: &Arc<dyn Stream>,
        literal: &Literal,
        dst: &ShapedBuffer,
    ) -> Result<()>;

    /// Reads a value back into a row-major literal, waiting for the stream.
    fn transfer_literal_from_device(
        &self,
        stream: &Arc<dyn Stream>,
        src: &ShapedBuffer,
    ) -> Result<Literal>;

    /// Reads a value back into a row-major literal, consuming the device
    /// buffer, and waits for the stream. A platform whose device memory is
    /// host memory may hand allocations no other buffer shares to the literal
    /// instead of copying them (the literal then keeps the allocation until
    /// it is dropped; [`Literal::is_adopted`] tells). The default copies, like
    /// [`TransferManager::transfer_literal_from_device`].
    fn take_literal_from_device(
        &self,
        stream: &Arc<dyn Stream>,
        src: ShapedBuffer,
    ) -> Result<Literal> {
        self.transfer_literal_from_device(stream, &src)
    }

    /// Writes each tuple node's table of element pointers.
    fn write_tuple_index_tables(
        &self,
        stream: &Arc<dyn Stream>,
        buffer: &ShapedBuffer,
    ) -> Result<()>;

    /// Allocates a device buffer for `literal` and copies it there.
    fn literal_to_device(
        &self,
        stream: &Arc<dyn Stream>,
        literal: &Literal,
    ) -> Result<ShapedBuffer> {
        let shape = self.device_shape(literal.shape());
        let buffer = ShapedBuffer::allocate(&stream.executor(), &shape)?;
        self.transfer_literal_to_device(stream, literal, &buffer)?;
        Ok(buffer)
    }
}

/// A transfer manager that works through any stream's byte copies.
pub struct GenericTransferManager {
    platform_id: &'static str,
}

impl GenericTransferManager {
    pub const fn new(platform_id: &'static str) -> Self {
        GenericTransferManager { platform_id }
    }
}

impl TransferManager for GenericTransferManager {
    fn platform_id(&self) -> &'static str {
        self.platform_id
    }

    fn transfer_literal_to_device(
        &self,
        stream: &Arc<dyn Stream>,
        literal: &Literal,
        dst: &ShapedBuffer,
    ) -> Result<()> {
        if !literal.shape().compatible(dst.shape()) {
            return Err(Error::invalid_argument(format!(
                "cannot transfer a literal of shape {} into a device buffer of shape {}",
                literal.shape(),
                dst.shape()
            )));
        }
        for (index, shape, node) in dst.leaves() {
            let leaf = literal_at(literal, &index)?;
            let array = shape.array_or_err()?;
            let bytes = row_major_to_layout(leaf.bytes()?, array);
            stream.memcpy_host_to_device(node.mem(), &bytes)?;
        }
        self.write_tuple_index_tables(stream, dst)
    }

    fn transfer_literal_from_device(
        &self,
        stream: &Arc<dyn Stream>,
        src: &ShapedBuffer,
    ) -> Result<Literal> {
        fn build(
            stream: &Arc<dyn Stream>,
            src: &ShapedBuffer,
            shape: &Shape,
            index: &mut Vec<usize>,
        ) -> Result<Literal> {
            match shape {
                Shape::Token => Ok(Literal::token()),
                Shape::Tuple(elements) => {
                    let mut parts = Vec::with_capacity(elements.len());
                    for (i, e) in elements.iter().enumerate() {
                        index.push(i);
                        parts.push(build(stream, src, e, index)?);
                        index.pop();
                    }
                    Ok(Literal::tuple(parts))
                }
                Shape::Array(array) => {
                    let node = src.buffer(index)?;
                    if is_row_major(array) {
                        // One copy, straight into the literal's buffer.
                        let len = array.byte_size();
                        // SAFETY: the stream copies `len` bytes (the array's
                        // byte size) into the buffer and we wait for it before
                        // the buffer is used or dropped.
                        let mut lit = unsafe {
                            Literal::array_filled_by(shape.clone(), |dst| {
                                if len > 0 {
                                    stream.memcpy_device_to_host(dst, node.mem(), len)?;
                                    stream.block_host_until_done()?;
                                }
                                Ok(())
                            })?
                        };
                        lit.set_layout(array.layout.clone());
                        return Ok(lit);
                    }
                    let bytes = stream.read_to_vec(node.mem(), array.byte_size())?;
                    let row_major = layout_to_row_major(&bytes, array);
                    let mut lit = Literal::from_bytes(shape.clone(), &row_major)?;
                    lit.set_layout(array.layout.clone());
                    Ok(lit)
                }
            }
        }
        build(stream, src, &src.shape().clone(), &mut Vec::new())
    }

    fn write_tuple_index_tables(
        &self,
        stream: &Arc<dyn Stream>,
        buffer: &ShapedBuffer,
    ) -> Result<()> {
        for (index, shape) in preorder_subshapes(buffer.shape()) {
            if let Shape::Tuple(elements) = shape {
                let mut table = Vec::with_capacity(elements.len() * 8);
                for i in 0..elements.len() {
                    let mut child = index.clone();
                    child.push(i);
                    table.extend_from_slice(&buffer.buffer(&child)?.mem().addr().to_le_bytes());
                }
                stream.memcpy_host_to_device(buffer.buffer(&index)?.mem(), &table)?;
            }
        }
        Ok(())
    }
}

fn literal_at<'a>(literal: &'a Literal, index: &[usize]) -> Result<&'a Literal> {
    let mut l = literal;
    for &i in index {
        l = l.tuple_elements().get(i).ok_or_else(|| {
            Error::invalid_argument(format!(
                "literal of shape {} has no element {index:?}",
                literal.shape()
            ))
        })?;
    }
    Ok(l)
}

/// Convenience for tests and tools: the executor of a stream, as the trait object.
pub fn stream_executor(stream: &Arc<dyn Stream>) -> Arc<dyn StreamExecutor> {
    stream.executor()
}
