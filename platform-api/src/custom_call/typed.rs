//! The typed Rust API for custom-call targets (the role XLA's FFI plays).
//!
//! A typed handler is a Rust function `fn(&mut CallFrame) -> Result<()>`. The
//! frame gives it:
//! * its **arguments**: the array leaves of the operands, in order (a tuple
//!   operand contributes its leaves in preorder, as XLA's FFI flattens them;
//!   tokens contribute nothing), each an [`Arg`] with its element type,
//!   dimensions and a typed `&[T]` view;
//! * its **results**: the array leaves of the result shape, each a [`Ret`] taken
//!   once and viewed as `&mut [T]` (taking them one by one lets a handler hold
//!   several results at once without aliasing);
//! * its **attributes**, decoded from `backend_config` ([`Attributes`]), and the
//!   raw `backend_config` bytes.
//!
//! Every access is checked: asking for an argument that does not exist, for a
//! type the buffer does not hold, or declaring dimensions the buffer does not
//! have is an error naming the call, never undefined behaviour. Buffers are
//! dense and row-major. A handler returns `Err` to fail the execution; a panic
//! inside a handler is caught and reported the same way.

use super::attributes::Attributes;
use crate::error::{Error, Result};
use crate::native::NativeType;
use crate::shape::{ArrayShape, ElementType};
use std::sync::Arc;

/// A typed handler as a plain function (what static registration takes).
pub type TypedFn = fn(&mut CallFrame<'_>) -> Result<()>;

/// A typed handler that captures state (for registration at run time).
pub type TypedClosure = Arc<dyn Fn(&mut CallFrame<'_>) -> Result<()> + Send + Sync>;

/// One argument buffer, read-only.
#[derive(Debug)]
pub struct Arg<'a> {
    index: usize,
    shape: ArrayShape,
    bytes: &'a [u8],
}

impl<'a> Arg<'a> {
    pub(crate) fn new(index: usize, shape: ArrayShape, bytes: &'a [u8]) -> Self {
        Arg {
            index,
            shape,
            bytes,
        }
    }
    pub fn element_type(&self) -> ElementType {
        self.shape.element_type
    }
    pub fn dims(&self) -> &[usize] {
        &self.shape.dims
    }
    pub fn shape(&self) -> &ArrayShape {
        &self.shape
    }
    pub fn element_count(&self) -> usize {
        self.shape.element_count()
    }
    /// The raw row-major little-endian bytes.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// The elements as `&[T]`; an error if the buffer does not hold `T`s.
    pub fn data<T: NativeType>(&self) -> Result<&'a [T]> {
        view::<T>(self.bytes, &self.shape, &format!("argument {}", self.index))
    }
    /// Checks the element type and dimensions, naming both on mismatch.
    pub fn expect(&self, element_type: ElementType, dims: &[usize]) -> Result<&Self> {
        expect_shape(
            &self.shape,
            element_type,
            dims,
            &format!("argument {}", self.index),
        )?;
        Ok(self)
    }
}

/// One result buffer, writable; taken from the frame once.
#[derive(Debug)]
pub struct Ret<'a> {
    index: usize,
    shape: ArrayShape,
    bytes: &'a mut [u8],
}

impl<'a> Ret<'a> {
    pub(crate) fn new(index: usize, shape: ArrayShape, bytes: &'a mut [u8]) -> Self {
        Ret {
            index,
            shape,
            bytes,
        }
    }
    pub fn element_type(&self) -> ElementType {
        self.shape.element_type
    }
    pub fn dims(&self) -> &[usize] {
        &self.shape.dims
    }
    pub fn shape(&self) -> &ArrayShape {
        &self.shape
    }
    pub fn element_count(&self) -> usize {
        self.shape.element_count()
    }
    /// The raw bytes, to write row-major little-endian elements into.
    pub fn bytes_mut(&mut self) -> &mut [u8] {
        self.bytes
    }
    /// The elements as `&mut [T]`, for the rest of the call; an error if the
    /// buffer does not hold `T`s. (Writers of `pred` buffers store 0 or 1.)
    pub fn into_data<T: NativeType>(self) -> Result<&'a mut [T]> {
        let what = format!("result {}", self.index);
        check_view::<T>(self.bytes, &self.shape, &what)?;
        bytemuck::try_cast_slice_mut(self.bytes)
            .map_err(|e| Error::internal(format!("{what}: cannot view the buffer: {e}")))
    }
    /// Checks the element type and dimensions, naming both on mismatch.
    pub fn expect(self, element_type: ElementType, dims: &[usize]) -> Result<Self> {
        expect_shape(
            &self.shape,
            element_type,
            dims,
            &format!("result {}", self.index),
        )?;
        Ok(self)
    }
}

/// Everything a typed handler gets for one call.
pub struct CallFrame<'a> {
    target: &'a str,
    instruction: &'a str,
    args: Vec<Arg<'a>>,
    results: Vec<Option<Ret<'a>>>,
    result_shapes: Vec<ArrayShape>,
    attributes: &'a Attributes,
    backend_config: &'a [u8],
}

impl<'a> CallFrame<'a> {
    pub(crate) fn new(
        target: &'a str,
        instruction: &'a str,
        args: Vec<Arg<'a>>,
        results: Vec<Ret<'a>>,
        attributes: &'a Attributes,
        backend_config: &'a [u8],
    ) -> Self {
        let result_shapes = results.iter().map(|r| r.shape.clone()).collect();
        CallFrame {
            target,
            instruction,
            args,
            results: results.into_iter().map(Some).collect(),
            result_shapes,
            attributes,
            backend_config,
        }
    }

    /// The custom-call target name.
    pub fn target(&self) -> &str {
        self.target
    }
    /// The name of the `custom-call` instruction being run.
    pub fn instruction(&self) -> &str {
        self.instruction
    }
    pub fn num_args(&self) -> usize {
        self.args.len()
    }
    pub fn num_results(&self) -> usize {
        self.result_shapes.len()
    }
    /// Every argument.
    pub fn args(&self) -> &[Arg<'a>] {
        &self.args
    }
    /// The shapes of every result (still known after they are taken).
    pub fn result_shapes(&self) -> &[ArrayShape] {
        &self.result_shapes
    }
    pub fn attributes(&self) -> &'a Attributes {
        self.attributes
    }
    /// `backend_config` exactly as written in the HLO.
    pub fn backend_config(&self) -> &'a [u8] {
        self.backend_config
    }

    /// Fails unless the call has exactly `args` arguments and `results` results.
    pub fn expect_counts(&self, args: usize, results: usize) -> Result<()> {
        if self.args.len() != args || self.result_shapes.len() != results {
            return Err(self.error(format!(
                "the handler takes {args} argument(s) and {results} result(s); the call has {} and {}",
                self.args.len(),
                self.result_shapes.len()
            )));
        }
        Ok(())
    }

    /// Argument `i`.
    pub fn arg(&self, i: usize) -> Result<&Arg<'a>> {
        self.args.get(i).ok_or_else(|| {
            self.error(format!(
                "argument {i} was asked for; the call has {} argument(s)",
                self.args.len()
            ))
        })
    }

    /// Argument `i`'s elements as `&[T]`.
    pub fn arg_data<T: NativeType>(&self, i: usize) -> Result<&'a [T]> {
        self.arg(i)?.data::<T>().map_err(|e| self.context(e))
    }

    /// Takes result `i` (each result can be taken once).
    pub fn take_result(&mut self, i: usize) -> Result<Ret<'a>> {
        let count = self.result_shapes.len();
        match self.results.get_mut(i) {
            Some(slot) => slot
                .take()
                .ok_or_else(|| self.error(format!("result {i} was already taken"))),
            None => Err(self.error(format!(
                "result {i} was asked for; the call has {count} result(s)"
            ))),
        }
    }

    /// Takes result `i` and views it as `&mut [T]`.
    pub fn result_data<T: NativeType>(&mut self, i: usize) -> Result<&'a mut [T]> {
        let ret = self.take_result(i)?;
        ret.into_data::<T>().map_err(|e| self.context(e))
    }

    /// An `InvalidArgument` error naming this call.
    pub fn error(&self, message: impl std::fmt::Display) -> Error {
        Error::invalid_argument(format!(
            "custom-call %{} (target \"{}\"): {message}",
            self.instruction, self.target
        ))
    }

    fn context(&self, e: Error) -> Error {
        e.context(format_args!(
            "custom-call %{} (target \"{}\")",
            self.instruction, self.target
        ))
    }
}

fn check_view<T: NativeType>(bytes: &[u8], shape: &ArrayShape, what: &str) -> Result<()> {
    if !T::can_view(shape.element_type) {
        return Err(Error::invalid_argument(format!(
            "{what} holds {}, which cannot be viewed as {}",
            array_text(shape),
            std::any::type_name::<T>()
        )));
    }
    if bytes.len() != shape.byte_size() {
        return Err(Error::internal(format!(
            "{what}: buffer of {} bytes for {}",
            bytes.len(),
            array_text(shape)
        )));
    }
    Ok(())
}

fn view<'a, T: NativeType>(bytes: &'a [u8], shape: &ArrayShape, what: &str) -> Result<&'a [T]> {
    check_view::<T>(bytes, shape, what)?;
    bytemuck::try_cast_slice(bytes)
        .map_err(|e| Error::internal(format!("{what}: cannot view the buffer: {e}")))
}

fn expect_shape(
    shape: &ArrayShape,
    element_type: ElementType,
    dims: &[usize],
    what: &str,
) -> Result<()> {
    if shape.element_type != element_type || shape.dims != dims {
        return Err(Error::invalid_argument(format!(
            "{what} is {}; the handler expects {}",
            array_text(shape),
            array_text(&ArrayShape::new(element_type, dims.to_vec()))
        )));
    }
    Ok(())
}

/// `f32[4,10]`, the HLO spelling without a layout.
pub(crate) fn array_text(shape: &ArrayShape) -> String {
    let dims: Vec<String> = shape.dims.iter().map(|d| d.to_string()).collect();
    format!("{}[{}]", shape.element_type, dims.join(","))
}
