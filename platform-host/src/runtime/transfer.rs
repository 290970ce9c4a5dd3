//! [`HostTransferManager`]: the generic byte-copy transfer manager, with every
//! array on the device in row-major order.
//!
//! Host executables treat every value as a logical row-major array (layout
//! normalization removes layouts from the program), so device buffers must be
//! row-major whatever layout the host value's shape names; the transfer manager
//! permutes on the way in and out.

use crate::PLATFORM_NAME;
use platform_api::{
    GenericTransferManager, Literal, Result, Shape, ShapedBuffer, Stream, TransferManager,
};
use std::sync::Arc;

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

    fn write_tuple_index_tables(
        &self,
        stream: &Arc<dyn Stream>,
        buffer: &ShapedBuffer,
    ) -> Result<()> {
        self.generic.write_tuple_index_tables(stream, buffer)
    }
}
