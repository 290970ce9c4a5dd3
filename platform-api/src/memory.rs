//! Owned device memory: allocations and [`ShapedBuffer`]s, above the device
//! interface ([`crate::device`], where the plain [`DeviceMemoryBase`] handle is).
//!
//! * [`DeviceAllocation`] owns one allocation and frees it through its executor
//!   when the last `Arc` to it is dropped. Buffers are shared with `Arc` so a
//!   result can alias an argument (a program that returns its parameter) without
//!   copying or double frees.
//! * [`ShapedBuffer`] is a value laid out on a device as XLA lays it out: one
//!   allocation per node of its shape, in preorder; an array node holds the
//!   elements in the layout its shape names; a tuple node holds an *index table*,
//!   one device pointer (8 bytes, little-endian) per element pointing at the
//!   element's node. Custom calls receive these tables as their tuple operands.

pub use crate::device::DeviceMemoryBase;
use crate::device::StreamExecutor;
use crate::error::{Error, Result};
use crate::shape::Shape;
use std::sync::Arc;

/// One allocation on one device, freed through its executor when dropped.
pub struct DeviceAllocation {
    mem: DeviceMemoryBase,
    executor: Arc<dyn StreamExecutor>,
}

impl DeviceAllocation {
    /// Allocates `size` bytes on `executor`'s device.
    pub fn new(executor: &Arc<dyn StreamExecutor>, size: usize) -> Result<Arc<DeviceAllocation>> {
        let mem = executor.allocate(size)?;
        Ok(Arc::new(DeviceAllocation {
            mem,
            executor: executor.clone(),
        }))
    }
    pub fn mem(&self) -> DeviceMemoryBase {
        self.mem
    }
    pub fn size(&self) -> usize {
        self.mem.size
    }
    pub fn executor(&self) -> &Arc<dyn StreamExecutor> {
        &self.executor
    }
}

impl Drop for DeviceAllocation {
    fn drop(&mut self) {
        // SAFETY: `mem` came from `executor.allocate` and this is its only owner;
        // every user holds an `Arc` to this allocation, so none is left.
        unsafe { self.executor.deallocate(self.mem) }
    }
}

impl std::fmt::Debug for DeviceAllocation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DeviceAllocation({:p}, {} bytes, device {})",
            self.mem.opaque,
            self.mem.size,
            self.executor.ordinal()
        )
    }
}

/// Every node of a shape with its index path, in preorder (tuple before elements).
pub fn preorder_subshapes(shape: &Shape) -> Vec<(Vec<usize>, &Shape)> {
    fn walk<'a>(s: &'a Shape, path: &mut Vec<usize>, out: &mut Vec<(Vec<usize>, &'a Shape)>) {
        out.push((path.clone(), s));
        if let Shape::Tuple(elements) = s {
            for (i, e) in elements.iter().enumerate() {
                path.push(i);
                walk(e, path, out);
                path.pop();
            }
        }
    }
    let mut out = Vec::new();
    walk(shape, &mut Vec::new(), &mut out);
    out
}

/// How many nodes (arrays, tuples, tokens) a shape has, itself included.
fn node_count(shape: &Shape) -> usize {
    match shape {
        Shape::Tuple(elements) => 1 + elements.iter().map(node_count).sum::<usize>(),
        _ => 1,
    }
}

/// Bytes a node of a shape occupies on a device: the elements of an array, an
/// index table of 8-byte pointers for a tuple, nothing for a token.
pub fn node_byte_size(shape: &Shape) -> usize {
    match shape {
        Shape::Array(a) => a.byte_size(),
        Shape::Tuple(t) => t.len() * std::mem::size_of::<u64>(),
        Shape::Token => 0,
    }
}

/// A value on a device, laid out as its shape says (see the module docs).
#[derive(Clone, Debug)]
pub struct ShapedBuffer {
    shape: Shape,
    ordinal: usize,
    /// One allocation per node of `shape`, in preorder.
    nodes: Vec<Arc<DeviceAllocation>>,
}

impl ShapedBuffer {
    /// Assembles a shaped buffer from one allocation per node, in preorder. The
    /// allocations must be at least as large as their nodes need.
    pub fn from_nodes(
        shape: Shape,
        ordinal: usize,
        nodes: Vec<Arc<DeviceAllocation>>,
    ) -> Result<Self> {
        let count = node_count(&shape);
        if count != nodes.len() {
            return Err(Error::internal(format!(
                "shape {shape} has {count} nodes but {} buffers were given",
                nodes.len()
            )));
        }
        // Checked in a walk that allocates nothing: results are assembled
        // with this on every launch.
        fn too_small(s: &Shape, nodes: &[Arc<DeviceAllocation>], at: &mut usize) -> bool {
            let small = nodes.get(*at).is_none_or(|n| n.size() < node_byte_size(s));
            *at += 1;
            small
                || match s {
                    Shape::Tuple(elements) => elements.iter().any(|e| too_small(e, nodes, at)),
                    _ => false,
                }
        }
        if too_small(&shape, &nodes, &mut 0) {
            let subshapes = preorder_subshapes(&shape);
            for ((index, s), node) in subshapes.iter().zip(&nodes) {
                if node.size() < node_byte_size(s) {
                    return Err(Error::internal(format!(
                        "buffer at index {index:?} of {shape} has {} bytes, needs {}",
                        node.size(),
                        node_byte_size(s)
                    )));
                }
            }
        }
        Ok(ShapedBuffer {
            shape,
            ordinal,
            nodes,
        })
    }

    /// Allocates every node of `shape` on `executor` (contents undefined; tuple
    /// index tables are *not* written: see `TransferManager::write_tuple_index_tables`).
    pub fn allocate(executor: &Arc<dyn StreamExecutor>, shape: &Shape) -> Result<Self> {
        let nodes = preorder_subshapes(shape)
            .into_iter()
            .map(|(_, s)| DeviceAllocation::new(executor, node_byte_size(s)))
            .collect::<Result<Vec<_>>>()?;
        Ok(ShapedBuffer {
            shape: shape.clone(),
            ordinal: executor.ordinal(),
            nodes,
        })
    }

    /// The on-device shape (with the layouts the device uses).
    pub fn shape(&self) -> &Shape {
        &self.shape
    }
    pub fn device_ordinal(&self) -> usize {
        self.ordinal
    }
    /// Allocations in preorder of the shape's nodes.
    pub fn nodes(&self) -> &[Arc<DeviceAllocation>] {
        &self.nodes
    }
    /// Gives up the allocations, in preorder of the shape's nodes (an
    /// allocation shared with another buffer stays alive through that one).
    pub fn into_nodes(self) -> Vec<Arc<DeviceAllocation>> {
        self.nodes
    }
    /// The root node's memory (an array's elements, or a tuple's index table).
    pub fn root_buffer(&self) -> DeviceMemoryBase {
        self.nodes[0].mem()
    }
    /// The allocation at a tuple index path.
    pub fn buffer(&self, index: &[usize]) -> Result<&Arc<DeviceAllocation>> {
        let (pos, _) = self.locate(index)?;
        Ok(&self.nodes[pos])
    }
    /// The preorder position and shape of the node at `index`, found by walking
    /// the path (not by listing every node: wide tuples made that quadratic).
    fn locate(&self, index: &[usize]) -> Result<(usize, &Shape)> {
        let missing =
            || Error::invalid_argument(format!("no element at index {index:?} of {}", self.shape));
        let mut pos = 0;
        let mut shape = &self.shape;
        for &i in index {
            let Shape::Tuple(elements) = shape else {
                return Err(missing());
            };
            let element = elements.get(i).ok_or_else(missing)?;
            pos += 1 + elements[..i].iter().map(node_count).sum::<usize>();
            shape = element;
        }
        Ok((pos, shape))
    }
    /// Array leaves with their index paths and shapes, in preorder.
    pub fn leaves(&self) -> Vec<(Vec<usize>, &Shape, &Arc<DeviceAllocation>)> {
        preorder_subshapes(&self.shape)
            .into_iter()
            .zip(&self.nodes)
            .filter(|((_, s), _)| s.is_array())
            .map(|((i, s), n)| (i, s, n))
            .collect()
    }
    /// The sub-value at a tuple index path, sharing its allocations.
    pub fn sub_buffer(&self, index: &[usize]) -> Result<ShapedBuffer> {
        let (start, sub_shape) = self.locate(index)?;
        Ok(self.slice_nodes(start, sub_shape.clone()))
    }
    fn slice_nodes(&self, start: usize, shape: Shape) -> ShapedBuffer {
        let count = node_count(&shape);
        ShapedBuffer {
            shape,
            ordinal: self.ordinal,
            nodes: self.nodes[start..start + count].to_vec(),
        }
    }
    /// Splits a tuple into its elements (sharing allocations); an array comes back alone.
    pub fn decompose_tuple(&self) -> Result<Vec<ShapedBuffer>> {
        match &self.shape {
            Shape::Tuple(t) => {
                let mut start = 1;
                let mut parts = Vec::with_capacity(t.len());
                for element in t {
                    let part = self.slice_nodes(start, element.clone());
                    start += part.nodes.len();
                    parts.push(part);
                }
                Ok(parts)
            }
            _ => Ok(vec![self.clone()]),
        }
    }
    /// Total bytes of the distinct allocations this buffer refers to.
    pub fn byte_size(&self) -> usize {
        let mut seen = std::collections::HashSet::new();
        self.nodes
            .iter()
            .filter(|n| seen.insert(Arc::as_ptr(n)))
            .map(|n| n.size())
            .sum()
    }
}
