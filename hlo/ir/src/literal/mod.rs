//! [`Literal`]: a value on the host, as a shape and its bytes.
//!
//! An array literal owns a dense, row-major, little-endian byte buffer of exactly
//! `element_count * byte_size` bytes (whatever layout its shape names: the layout is
//! kept as metadata and applied only when bytes move to or from a device). `pred`
//! elements are single bytes holding 0 or 1. A tuple literal owns its element
//! literals; a token literal holds nothing.
//!
//! The buffer is 8-byte aligned so any element type can be viewed in place as a
//! typed slice ([`Literal::data`]), with no copy.
//!
//! Submodules add the text form ([`text`]), NumPy `.npy` files ([`npy`]).

pub mod layout;
pub mod npy;
pub mod text;

use crate::error::{Error, Result};
use crate::native::{NativeType, Scalar};
use crate::shape::{ArrayShape, ElementType, Shape};

/// A byte buffer whose start is 8-byte aligned: usually backed by `u64`s this
/// buffer allocated, or by memory adopted from another owner (a host
/// platform's device allocation handed to a literal instead of copied; see
/// [`AlignedBytes::adopt`]).
#[derive(Default)]
pub struct AlignedBytes {
    backing: Backing,
    len: usize,
}

enum Backing {
    Words(Vec<u64>),
    /// `len` bytes at `ptr`, kept alive (and exclusively ours) until `owner`
    /// is dropped, which releases them.
    Adopted {
        ptr: std::ptr::NonNull<u8>,
        _owner: Box<dyn Send + Sync>,
    },
}

impl Default for Backing {
    fn default() -> Self {
        Backing::Words(Vec::new())
    }
}

// SAFETY: adopted memory is exclusively this buffer's (`adopt`'s contract) and
// its owner is `Send + Sync`; the bytes are accessed through `&self`/`&mut self`
// like a `Vec`'s.
unsafe impl Send for Backing {}
// SAFETY: as above.
unsafe impl Sync for Backing {}

impl Clone for AlignedBytes {
    /// A deep copy; a copy of adopted memory is an ordinary owned buffer.
    fn clone(&self) -> Self {
        match &self.backing {
            Backing::Words(words) => AlignedBytes {
                backing: Backing::Words(words.clone()),
                len: self.len,
            },
            Backing::Adopted { .. } => AlignedBytes::from_bytes(self.as_slice()),
        }
    }
}

impl AlignedBytes {
    pub fn zeroed(len: usize) -> Self {
        AlignedBytes {
            backing: Backing::Words(vec![0u64; len.div_ceil(8)]),
            len,
        }
    }
    /// [`AlignedBytes::zeroed`], or `ResourceExhausted` when the allocator
    /// cannot supply `len` bytes (instead of aborting the process).
    pub fn try_zeroed(len: usize) -> Result<Self> {
        let words = len.div_ceil(8);
        if words == 0 {
            return Ok(Self::zeroed(0));
        }
        let exhausted =
            || Error::resource_exhausted(format!("cannot allocate {len} bytes for a literal"));
        let layout = std::alloc::Layout::array::<u64>(words).map_err(|_| exhausted())?;
        // SAFETY: the layout has a non-zero size.
        let ptr = unsafe { std::alloc::alloc_zeroed(layout) }.cast::<u64>();
        if ptr.is_null() {
            return Err(exhausted());
        }
        // SAFETY: `words` zeroed (hence initialised) u64s from the global
        // allocator with exactly this layout.
        let words = unsafe { Vec::from_raw_parts(ptr, words, words) };
        Ok(AlignedBytes {
            backing: Backing::Words(words),
            len,
        })
    }
    /// A buffer of `len` bytes that `fill` writes, never zeroed first.
    ///
    /// # Safety
    /// When `fill` returns `Ok`, it must have written all `len` bytes at the
    /// pointer it was given (and nothing past them).
    pub unsafe fn filled_by(len: usize, fill: impl FnOnce(*mut u8) -> Result<()>) -> Result<Self> {
        let mut words: Vec<u64> = Vec::with_capacity(len.div_ceil(8));
        // The last word's bytes past `len` are padding: zero them so every
        // word is initialised once `fill` has written the rest.
        if !len.is_multiple_of(8) {
            // SAFETY: the capacity holds `len.div_ceil(8)` words.
            unsafe { words.as_mut_ptr().add(len / 8).write(0) };
        }
        fill(words.as_mut_ptr().cast::<u8>())?;
        // SAFETY: `fill` wrote bytes 0..len (the caller's contract) and the
        // padding of the last word is zero, so every word is initialised.
        unsafe { words.set_len(len.div_ceil(8)) };
        Ok(AlignedBytes {
            backing: Backing::Words(words),
            len,
        })
    }
    /// Takes over `len` bytes at `ptr` without copying them; dropping the
    /// buffer drops `owner`, which must release them. This is how a platform
    /// whose device memory is host memory returns a result: the literal keeps
    /// the device allocation alive instead of copying out of it.
    ///
    /// # Safety
    /// `ptr` is 8-byte aligned (or `len` is 0) and valid for reads and writes
    /// of `len` initialised bytes until `owner` is dropped, and nothing else
    /// reads or writes them meanwhile.
    pub unsafe fn adopt(ptr: *mut u8, len: usize, owner: Box<dyn Send + Sync>) -> Self {
        match std::ptr::NonNull::new(ptr) {
            Some(ptr) if len > 0 && (ptr.as_ptr() as usize).is_multiple_of(8) => AlignedBytes {
                backing: Backing::Adopted { ptr, _owner: owner },
                len,
            },
            // Nothing to adopt, or memory we may not view as words: copy
            // (the contract makes the read valid when `len > 0`).
            _ if len == 0 => AlignedBytes::zeroed(0),
            // SAFETY: the caller's contract.
            _ => AlignedBytes::from_bytes(unsafe { std::slice::from_raw_parts(ptr, len) }),
        }
    }
    /// Whether the bytes are adopted memory (see [`AlignedBytes::adopt`]).
    pub fn is_adopted(&self) -> bool {
        matches!(self.backing, Backing::Adopted { .. })
    }
    pub fn from_bytes(bytes: &[u8]) -> Self {
        let mut b = Self::zeroed(bytes.len());
        b.as_mut_slice().copy_from_slice(bytes);
        b
    }
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
    pub fn as_slice(&self) -> &[u8] {
        match &self.backing {
            Backing::Words(words) => &bytemuck::cast_slice(words)[..self.len],
            // SAFETY: `adopt`'s contract: `len` initialised bytes, ours alone.
            Backing::Adopted { ptr, .. } => unsafe {
                std::slice::from_raw_parts(ptr.as_ptr(), self.len)
            },
        }
    }
    pub fn as_mut_slice(&mut self) -> &mut [u8] {
        match &mut self.backing {
            Backing::Words(words) => &mut bytemuck::cast_slice_mut(words)[..self.len],
            // SAFETY: as in `as_slice`; `&mut self` makes the access exclusive.
            Backing::Adopted { ptr, .. } => unsafe {
                std::slice::from_raw_parts_mut(ptr.as_ptr(), self.len)
            },
        }
    }
}

impl PartialEq for AlignedBytes {
    fn eq(&self, other: &Self) -> bool {
        self.as_slice() == other.as_slice()
    }
}

impl std::fmt::Debug for AlignedBytes {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "AlignedBytes({} bytes)", self.len)
    }
}

#[derive(Clone, Debug, PartialEq)]
enum Storage {
    Array(AlignedBytes),
    Tuple(Vec<Literal>),
    Token,
}

/// A host value: an array, a tuple of literals, or a token.
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    shape: Shape,
    storage: Storage,
}

/// Clears the bits above a narrow type's width in its storage bytes (the
/// encoding keeps them zero); other types are left alone.
pub(crate) fn clear_unused_bits(ty: ElementType, bytes: &mut [u8]) {
    if ty.is_narrow() && ty.bit_width() < 8 {
        let mask = ((1u16 << ty.bit_width()) - 1) as u8;
        bytes.iter_mut().for_each(|b| *b &= mask);
    }
}

impl Literal {
    /// A literal of the given shape with every element zero (`false`), recursively
    /// for tuples.
    pub fn zeros(shape: &Shape) -> Literal {
        let storage = match shape {
            Shape::Array(a) => Storage::Array(AlignedBytes::zeroed(a.byte_size())),
            Shape::Tuple(t) => Storage::Tuple(t.iter().map(Literal::zeros).collect()),
            Shape::Token => Storage::Token,
        };
        Literal {
            shape: shape.clone(),
            storage,
        }
    }

    /// [`Literal::zeros`], or `ResourceExhausted` when memory for it cannot be
    /// had (a program's shape can ask for more than the machine has).
    pub fn try_zeros(shape: &Shape) -> Result<Literal> {
        let storage = match shape {
            Shape::Array(a) => Storage::Array(AlignedBytes::try_zeroed(a.byte_size())?),
            Shape::Tuple(t) => {
                Storage::Tuple(t.iter().map(Literal::try_zeros).collect::<Result<_>>()?)
            }
            Shape::Token => Storage::Token,
        };
        Ok(Literal {
            shape: shape.clone(),
            storage,
        })
    }

    /// An array literal from typed values in row-major order.
    pub fn from_slice<T: NativeType>(dims: &[usize], values: &[T]) -> Result<Literal> {
        Self::from_bytes(
            Shape::array(T::TYPE, dims.to_vec()),
            bytemuck::cast_slice(values),
        )
    }

    /// A rank-1 literal.
    pub fn vector<T: NativeType>(values: &[T]) -> Literal {
        Literal {
            shape: Shape::array(T::TYPE, vec![values.len()]),
            storage: Storage::Array(AlignedBytes::from_bytes(bytemuck::cast_slice(values))),
        }
    }

    /// A rank-0 literal.
    pub fn scalar<T: NativeType>(value: T) -> Literal {
        Literal {
            shape: Shape::scalar(T::TYPE),
            storage: Storage::Array(AlignedBytes::from_bytes(bytemuck::bytes_of(&value))),
        }
    }

    /// A rank-0 literal from a dynamically typed scalar.
    pub fn from_scalar(value: Scalar) -> Literal {
        let ty = value.element_type();
        let mut bytes = AlignedBytes::zeroed(ty.byte_size());
        value.write_bytes(bytes.as_mut_slice());
        Literal {
            shape: Shape::scalar(ty),
            storage: Storage::Array(bytes),
        }
    }

    /// A pred array from booleans.
    pub fn from_bools(dims: &[usize], values: &[bool]) -> Result<Literal> {
        let bytes: Vec<u8> = values.iter().map(|&b| b as u8).collect();
        Self::from_bytes(Shape::array(ElementType::Pred, dims.to_vec()), &bytes)
    }

    /// An array literal from row-major little-endian bytes; the byte count must match
    /// the shape. Pred bytes are normalised to 0 or 1.
    pub fn from_bytes(shape: Shape, bytes: &[u8]) -> Result<Literal> {
        let array = shape.array_or_err()?;
        if array.byte_size() != bytes.len() {
            return Err(Error::invalid_argument(format!(
                "{} bytes given for shape {shape}, which needs {}",
                bytes.len(),
                array.byte_size()
            )));
        }
        let data = AlignedBytes::from_bytes(bytes);
        Ok(Literal::array_of(shape, data))
    }

    /// The same bytes read as another element type of the same byte size (a
    /// `.npy` file's raw `u8` bits as `f8e4m3fn`, say). Bits above a narrow
    /// type's width are cleared.
    pub fn reinterpret(&self, to: ElementType) -> Result<Literal> {
        let array = self.shape().array_or_err()?;
        if array.element_type.byte_size() != to.byte_size() {
            return Err(Error::invalid_argument(format!(
                "cannot reinterpret {} as {to}: the element sizes differ",
                self.shape()
            )));
        }
        let mut bytes = self.bytes()?.to_vec();
        clear_unused_bits(to, &mut bytes);
        let mut shape = array.clone();
        shape.element_type = to;
        Literal::from_bytes(Shape::Array(shape), &bytes)
    }

    /// An array literal whose row-major bytes `fill` writes into the new
    /// buffer (device results reach the host with one copy and no zeroing).
    /// Pred bytes are normalised to 0 or 1 afterwards.
    ///
    /// # Safety
    /// When `fill` returns `Ok`, it must have written every byte of the
    /// array (`shape`'s byte size) at the pointer it was given, and nothing
    /// past them.
    pub unsafe fn array_filled_by(
        shape: Shape,
        fill: impl FnOnce(*mut u8) -> Result<()>,
    ) -> Result<Literal> {
        let array = shape.array_or_err()?;
        // SAFETY: forwarded to our caller.
        let data = unsafe { AlignedBytes::filled_by(array.byte_size(), fill)? };
        Ok(Literal::array_of(shape, data))
    }

    /// An array literal over adopted memory (see [`AlignedBytes::adopt`]):
    /// `array.byte_size()` bytes at `ptr` in row-major order, released by
    /// dropping `owner`. `pred` bytes are normalised to 0/1 in place.
    ///
    /// # Safety
    /// As [`AlignedBytes::adopt`], for `shape`'s byte size.
    pub unsafe fn adopt_array(
        shape: Shape,
        ptr: *mut u8,
        owner: Box<dyn Send + Sync>,
    ) -> Result<Literal> {
        let array = shape.array_or_err()?;
        // SAFETY: forwarded to our caller.
        let data = unsafe { AlignedBytes::adopt(ptr, array.byte_size(), owner) };
        Ok(Literal::array_of(shape, data))
    }

    /// Whether this array literal's bytes are adopted device memory rather
    /// than a copy (false for tuples and tokens).
    pub fn is_adopted(&self) -> bool {
        matches!(&self.storage, Storage::Array(b) if b.is_adopted())
    }

    /// The array literal of `shape` over `data` (its byte size), with `pred`
    /// bytes normalised to 0 or 1.
    fn array_of(shape: Shape, mut data: AlignedBytes) -> Literal {
        if shape
            .as_array()
            .is_some_and(|a| a.element_type == ElementType::Pred)
        {
            for b in data.as_mut_slice() {
                *b = (*b != 0) as u8;
            }
        }
        Literal {
            shape,
            storage: Storage::Array(data),
        }
    }

    /// A tuple literal; its shape is the tuple of the elements' shapes.
    pub fn tuple(elements: Vec<Literal>) -> Literal {
        Literal {
            shape: Shape::Tuple(elements.iter().map(|e| e.shape.clone()).collect()),
            storage: Storage::Tuple(elements),
        }
    }

    pub fn token() -> Literal {
        Literal {
            shape: Shape::Token,
            storage: Storage::Token,
        }
    }

    pub fn shape(&self) -> &Shape {
        &self.shape
    }

    /// The array shape, or an error if this is a tuple or token.
    pub fn array_shape(&self) -> Result<&ArrayShape> {
        self.shape.array_or_err()
    }

    pub fn element_type(&self) -> Option<ElementType> {
        self.shape.element_type()
    }

    pub fn dims(&self) -> &[usize] {
        self.shape.dims()
    }

    pub fn element_count(&self) -> usize {
        self.shape.element_count()
    }

    /// Replaces the layout metadata of an array literal (bytes stay row-major).
    pub fn set_layout(&mut self, layout: Option<crate::shape::Layout>) {
        if let Shape::Array(a) = &mut self.shape {
            a.layout = layout;
        }
    }

    /// Raw row-major bytes of an array literal.
    pub fn bytes(&self) -> Result<&[u8]> {
        match &self.storage {
            Storage::Array(b) => Ok(b.as_slice()),
            _ => Err(self.not_array()),
        }
    }

    /// Mutable raw bytes of an array literal. Writers of pred arrays must store 0 or 1.
    pub fn bytes_mut(&mut self) -> Result<&mut [u8]> {
        match &mut self.storage {
            Storage::Array(b) => Ok(b.as_mut_slice()),
            Storage::Tuple(_) | Storage::Token => Err(Error::invalid_argument(format!(
                "expected an array literal, got one of shape {}",
                self.shape
            ))),
        }
    }

    /// The elements as a typed slice; errors if `T` does not match the element type.
    pub fn data<T: NativeType>(&self) -> Result<&[T]> {
        self.check_view::<T>()?;
        match &self.storage {
            Storage::Array(b) => Ok(bytemuck::cast_slice(b.as_slice())),
            _ => Err(self.not_array()),
        }
    }

    /// The elements as a mutable typed slice.
    pub fn data_mut<T: NativeType>(&mut self) -> Result<&mut [T]> {
        self.check_view::<T>()?;
        match &mut self.storage {
            Storage::Array(b) => Ok(bytemuck::cast_slice_mut(b.as_mut_slice())),
            _ => Err(Error::invalid_argument("expected an array literal")),
        }
    }

    /// Elements of a pred array as booleans.
    pub fn to_bools(&self) -> Result<Vec<bool>> {
        if self.element_type() != Some(ElementType::Pred) {
            return Err(Error::invalid_argument(format!(
                "expected a pred literal, got {}",
                self.shape
            )));
        }
        Ok(self.bytes()?.iter().map(|&b| b != 0).collect())
    }

    /// The element at a row-major linear index.
    pub fn get(&self, linear_index: usize) -> Result<Scalar> {
        let array = self.array_shape()?;
        let size = array.element_type.byte_size();
        let bytes = self.bytes()?;
        let start = linear_index * size;
        let Some(slot) = bytes.get(start..start + size) else {
            return Err(Error::out_of_range(format!(
                "element {linear_index} of a literal with {} elements",
                array.element_count()
            )));
        };
        Ok(Scalar::from_bytes(array.element_type, slot))
    }

    /// Sets the element at a row-major linear index; the scalar's type must match.
    /// A narrow literal takes a real scalar instead (the value is rounded as
    /// `convert` does for floats, wrapped for integers).
    pub fn set(&mut self, linear_index: usize, value: Scalar) -> Result<()> {
        let ty = self.array_shape()?.element_type;
        if ty.is_narrow() && !value.element_type().is_complex() {
            let byte = match (ty.is_integer(), value.to_i64()) {
                (true, Some(v)) => crate::narrow::int_bits(ty, i128::from(v)),
                _ => crate::narrow::encode(ty, value.to_f64_lossy()),
            };
            let count = self.element_count();
            let Some(slot) = self.bytes_mut()?.get_mut(linear_index) else {
                return Err(Error::out_of_range(format!(
                    "element {linear_index} of a literal with {count} elements"
                )));
            };
            *slot = byte;
            return Ok(());
        }
        if value.element_type() != ty {
            return Err(Error::invalid_argument(format!(
                "cannot store a {} value into a {} literal",
                value.element_type(),
                ty
            )));
        }
        let size = ty.byte_size();
        let count = self.element_count();
        let bytes = self.bytes_mut()?;
        let start = linear_index * size;
        let Some(slot) = bytes.get_mut(start..start + size) else {
            return Err(Error::out_of_range(format!(
                "element {linear_index} of a literal with {count} elements"
            )));
        };
        value.write_bytes(slot);
        Ok(())
    }

    /// The single element of a rank-0 (or one-element) array literal.
    pub fn get_first(&self) -> Result<Scalar> {
        self.get(0)
    }

    /// Every element as a scalar, row-major.
    pub fn scalars(&self) -> Result<Vec<Scalar>> {
        (0..self.element_count()).map(|i| self.get(i)).collect()
    }

    /// The same elements under new dimensions (element counts must agree).
    pub fn reshape(&self, dims: &[usize]) -> Result<Literal> {
        let array = self.array_shape()?;
        let new_count: usize = dims.iter().product();
        if new_count != array.element_count() {
            return Err(Error::invalid_argument(format!(
                "cannot reshape {} ({} elements) to {:?} ({} elements)",
                self.shape,
                array.element_count(),
                dims,
                new_count
            )));
        }
        Literal::from_bytes(
            Shape::array(array.element_type, dims.to_vec()),
            self.bytes()?,
        )
    }

    /// Elements of a tuple literal (empty for arrays and tokens).
    pub fn tuple_elements(&self) -> &[Literal] {
        match &self.storage {
            Storage::Tuple(t) => t,
            _ => &[],
        }
    }

    /// Takes a tuple literal apart; an array or token comes back as itself alone.
    pub fn decompose_tuple(self) -> Vec<Literal> {
        match self.storage {
            Storage::Tuple(t) => t,
            _ => vec![self],
        }
    }

    /// The array leaves in preorder (a tuple flattened as XLA flattens results).
    pub fn flatten_leaves(self) -> Vec<Literal> {
        match self.storage {
            Storage::Tuple(t) => t.into_iter().flat_map(Literal::flatten_leaves).collect(),
            Storage::Array(_) => vec![self],
            Storage::Token => Vec::new(),
        }
    }

    pub fn is_tuple(&self) -> bool {
        matches!(self.storage, Storage::Tuple(_))
    }

    fn check_view<T: NativeType>(&self) -> Result<()> {
        match self.element_type() {
            Some(ty) if T::can_view(ty) => Ok(()),
            _ => Err(Error::invalid_argument(format!(
                "cannot view a literal of shape {} as {}",
                self.shape,
                std::any::type_name::<T>()
            ))),
        }
    }

    fn not_array(&self) -> Error {
        Error::invalid_argument(format!(
            "expected an array literal, got one of shape {}",
            self.shape
        ))
    }
}

#[cfg(test)]
mod adopt_tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;

    /// Memory lent to a literal, counting its releases.
    struct Lender {
        words: Vec<u64>,
        released: Arc<AtomicUsize>,
    }
    impl Drop for Lender {
        fn drop(&mut self) {
            self.released.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn adopted_memory_is_viewed_in_place_and_released_once() {
        let released = Arc::new(AtomicUsize::new(0));
        let mut lender = Lender {
            words: vec![0; 2],
            released: released.clone(),
        };
        let ptr = lender.words.as_mut_ptr().cast::<u8>();
        // SAFETY: the words hold 16 bytes; pointer writes go through the literal only.
        unsafe { std::ptr::copy_nonoverlapping([1.0f32, 2.0, 3.0, 4.0].as_ptr().cast(), ptr, 16) };
        let shape = Shape::array(ElementType::F32, [4]);
        // SAFETY: `lender` owns the 16 aligned bytes and is moved into the literal.
        let mut lit = unsafe { Literal::adopt_array(shape, ptr, Box::new(lender)).unwrap() };
        assert!(lit.is_adopted());
        assert_eq!(lit.data::<f32>().unwrap(), &[1.0, 2.0, 3.0, 4.0]);
        lit.data_mut::<f32>().unwrap()[0] = 9.0;
        let copy = lit.clone();
        assert!(!copy.is_adopted());
        assert_eq!(copy, lit);
        drop(lit);
        assert_eq!(released.load(Ordering::SeqCst), 1);
        assert_eq!(copy.data::<f32>().unwrap(), &[9.0, 2.0, 3.0, 4.0]);
    }

    #[test]
    fn misaligned_memory_is_copied_and_pred_normalised() {
        let mut words = [0u64; 2];
        // One byte past an 8-byte boundary: never adoptable.
        let ptr = words.as_mut_ptr().cast::<u8>().wrapping_add(1);
        let pattern = [0u8, 1, 2, 0, 255, 1, 0, 7];
        // SAFETY: bytes 1..9 of the 16-byte array.
        unsafe { std::ptr::copy_nonoverlapping(pattern.as_ptr(), ptr, 8) };
        let shape = Shape::array(ElementType::Pred, [8]);
        // SAFETY: 8 initialised bytes at `ptr`, alive for the call, which copies them.
        let lit = unsafe { Literal::adopt_array(shape, ptr, Box::new(())).unwrap() };
        assert!(!lit.is_adopted());
        assert_eq!(lit.bytes().unwrap(), &[0, 1, 1, 0, 1, 1, 0, 1]);
    }
}
