//! `hlorun._hlorun`: the native half of the `hlorun` Python package.
//!
//! The package is two layers. This crate is the thin native one: it speaks
//! only `service` (a [`LocalClient`] per platform, [`service::compare`]) and
//! Python's buffer protocol. The pure-Python layer (`python/hlorun/`) does
//! everything that needs NumPy or JAX: dtype names, `__array__`/DLPack
//! arguments, JAX lowering, pytrees and the per-signature compile cache of
//! `hlorun.jit`. Nothing in the workspace depends on this crate.
//!
//! Why the buffer protocol rather than a NumPy C-API binding (rust-numpy):
//! the extension then builds against no NumPy headers or ABI (NumPy 1 and 2
//! alike), and every element type hlorun has, including ml_dtypes' bfloat16
//! and the narrow types, crosses the boundary the same way: as bytes plus an
//! element-type name and dimensions, the dtype applied on the Python side.
//!
//! Data movement:
//! * Arguments: the Python layer hands over a C-contiguous, native-endian
//!   `uint8` view of each array; [`literal_from_buffer`] copies it once into a
//!   [`Literal`] (the platform then makes its own host-to-device transfer).
//! * Results: each output leaf's [`Literal`] is moved, not copied, into an
//!   [`OutputBuffer`], which exports the literal's own bytes through the
//!   buffer protocol; `numpy.frombuffer` views them, and the array keeps the
//!   literal alive. On Host and Interpreter the literal is the device's result
//!   memory itself (adopted, see `platform_api::hlo::literal::AlignedBytes`),
//!   so a result reaches NumPy with no copy at all.
//!
//! Compiling and running release the GIL (`Python::detach`), so other Python
//! threads run meanwhile and two threads can execute programs concurrently
//! (a [`LocalClient`] is thread-safe).
//!
//! Errors are `platform_api::Error`s turned into `hlorun.HloError`
//! subclasses, one per error code (`InvalidArgumentError`, `NotFoundError`,
//! ...), each with a `code` class attribute (`"INVALID_ARGUMENT"`) and the
//! message the `hlorun` command line prints after `hlorun: error: `.

mod pjrt;

use platform_api::hlo::sharding::HloSharding;
use platform_api::registry::{self, Availability};
use platform_api::{Code, CompileOptions, ElementType, Error, HloModule, Literal, Shape};
use pyo3::buffer::PyBuffer;
use pyo3::create_exception;
use pyo3::exceptions::{PyBufferError, PyException};
use pyo3::ffi;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use service::compare::{check_threshold, expected_result, DEFAULT_MAX_ULPS};
use service::sharded::run_global;
use service::{
    compare_by_scale, compare_by_tolerance, ExecuteOptions, LoadedExecutable, LocalClient,
    ScaleRule, Tolerance,
};
use std::collections::HashMap;
use std::os::raw::c_int;
use std::sync::{Arc, Mutex, OnceLock};

create_exception!(
    _hlorun,
    HloError,
    PyException,
    "An error from hlorun; `code` names its kind."
);
create_exception!(_hlorun, InvalidArgumentError, HloError, "INVALID_ARGUMENT");
create_exception!(_hlorun, NotFoundError, HloError, "NOT_FOUND");
create_exception!(_hlorun, AlreadyExistsError, HloError, "ALREADY_EXISTS");
create_exception!(_hlorun, UnimplementedError, HloError, "UNIMPLEMENTED");
create_exception!(
    _hlorun,
    ResourceExhaustedError,
    HloError,
    "RESOURCE_EXHAUSTED"
);
create_exception!(
    _hlorun,
    FailedPreconditionError,
    HloError,
    "FAILED_PRECONDITION"
);
create_exception!(_hlorun, OutOfRangeError, HloError, "OUT_OF_RANGE");
create_exception!(
    _hlorun,
    DeadlineExceededError,
    HloError,
    "DEADLINE_EXCEEDED"
);
create_exception!(_hlorun, UnavailableError, HloError, "UNAVAILABLE");
create_exception!(_hlorun, InternalError, HloError, "INTERNAL");

/// The Python exception for an hlorun error (its class names the code).
fn py_err(e: Error) -> PyErr {
    let message = e.message().to_string();
    match e.code() {
        Code::InvalidArgument => InvalidArgumentError::new_err(message),
        Code::NotFound => NotFoundError::new_err(message),
        Code::AlreadyExists => AlreadyExistsError::new_err(message),
        Code::Unimplemented => UnimplementedError::new_err(message),
        Code::ResourceExhausted => ResourceExhaustedError::new_err(message),
        Code::FailedPrecondition => FailedPreconditionError::new_err(message),
        Code::OutOfRange => OutOfRangeError::new_err(message),
        Code::DeadlineExceeded => DeadlineExceededError::new_err(message),
        Code::Unavailable => UnavailableError::new_err(message),
        Code::Internal => InternalError::new_err(message),
    }
}

/// NumPy's (or ml_dtypes') dtype name of an element type.
fn numpy_name(ty: ElementType) -> &'static str {
    use ElementType::*;
    match ty {
        Pred => "bool",
        S8 => "int8",
        S16 => "int16",
        S32 => "int32",
        S64 => "int64",
        U8 => "uint8",
        U16 => "uint16",
        U32 => "uint32",
        U64 => "uint64",
        F16 => "float16",
        BF16 => "bfloat16",
        F32 => "float32",
        F64 => "float64",
        C64 => "complex64",
        C128 => "complex128",
        narrow => platform_api::literal::npy::ml_dtypes_name(narrow).unwrap_or("?"),
    }
}

/// The element type of a NumPy dtype name, if hlorun has one.
fn element_type_of(name: &str) -> Option<ElementType> {
    ElementType::ALL
        .into_iter()
        .chain(ElementType::NARROW)
        .find(|&t| numpy_name(t) == name)
}

/// One client per platform and device count, shared by every executable
/// compiled for it (its compile cache included): a partitioned program needs
/// a backend with a device per (replica, partition).
fn client(platform: Option<&str>, devices: usize) -> Result<Arc<LocalClient>, Error> {
    type Clients = HashMap<(&'static str, usize), Arc<LocalClient>>;
    static CLIENTS: OnceLock<Mutex<Clients>> = OnceLock::new();
    let name = service::resolve_platform_name(platform)?;
    let mut clients = CLIENTS
        .get_or_init(Default::default)
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    if let Some(c) = clients.get(&(name, devices)) {
        return Ok(c.clone());
    }
    let c = Arc::new(if devices > 1 {
        LocalClient::new(Arc::new(service::Backend::with_options(
            Some(name),
            &platform_api::PlatformOptions {
                device_count: Some(devices),
            },
        )?))
    } else {
        LocalClient::for_platform(Some(name))?
    });
    clients.insert((name, devices), c.clone());
    Ok(c)
}

/// A module from HLO text or a file, errors prefixed with its name as the
/// command line prefixes them.
/// A module as Python hands it over: text (or a path to a file), or bytes
/// (a StableHLO portable artifact, a serialized `jax.export` module).
#[derive(FromPyObject)]
enum Source {
    Text(String),
    Bytes(Vec<u8>),
}

fn load_module(source: &Source, is_path: bool) -> Result<(HloModule, String), Error> {
    let source = match source {
        Source::Text(t) => t.as_str(),
        Source::Bytes(b) => {
            let module =
                service::program::parse_program_bytes(b).map_err(|e| e.context("<bytes>"))?;
            let name = module.name.clone();
            return Ok((module, name));
        }
    };
    let (module, name) = if is_path {
        // A file: HLO or StableHLO text, a portable artifact, a jax.export
        // module.
        let bytes = std::fs::read(source).map_err(|e| Error::from(e).context(source))?;
        (
            service::program::parse_program_bytes(&bytes).map_err(|e| e.context(source))?,
            source.to_string(),
        )
    } else {
        (
            service::program::parse_program(source).map_err(|e| e.context("<text>"))?,
            "<text>".to_string(),
        )
    };
    // Past parsing, text is named by its module (`jit_f`), as a file by its path.
    let name = if is_path { name } else { module.name.clone() };
    Ok((module, name))
}

/// The options the command line compiles a module with (no debug options),
/// and how many devices they run on.
fn compile_options(module: &HloModule, name: &str) -> Result<(CompileOptions, usize), Error> {
    let options = CompileOptions {
        replica_count: module.config.replica_count.unwrap_or(1).max(1),
        num_partitions: module.config.num_partitions.unwrap_or(1).max(1),
        ..CompileOptions::default()
    };
    if options.replica_count > 1 {
        return Err(Error::unimplemented(format!(
            "{name}: the Python package runs single-replica programs; this one has {} \
             replica(s) (use `hlorun run --replicas`)",
            options.replica_count
        )));
    }
    let devices = options.num_partitions;
    Ok((options, devices))
}

/// One array argument as the Python layer passes it: NumPy dtype name,
/// dimensions, and a C-contiguous `uint8` view of its bytes.
type ArgSpec<'py> = (String, Vec<usize>, Bound<'py, PyAny>);

/// Copies one argument into a literal (the one copy an argument costs here).
fn literal_from_buffer(index: usize, arg: &ArgSpec<'_>) -> PyResult<Literal> {
    let (dtype, dims, data) = arg;
    let ty = element_type_of(dtype).ok_or_else(|| {
        InvalidArgumentError::new_err(format!(
            "argument {index} has dtype {dtype}, which has no HLO element type"
        ))
    })?;
    let shape = Shape::array(ty, dims.clone());
    let buffer = PyBuffer::<u8>::get(data)?;
    let len = shape.array_or_err().map_err(py_err)?.byte_size();
    if buffer.len_bytes() != len || !buffer.is_c_contiguous() {
        return Err(InvalidArgumentError::new_err(format!(
            "argument {index}: {} contiguous bytes given for shape {shape}, which needs {len}",
            buffer.len_bytes()
        )));
    }
    let py = data.py();
    // SAFETY: `copy_to_slice` writes exactly `len` bytes (it checked the
    // length above) or fails.
    unsafe {
        Literal::array_filled_by(shape, |ptr| {
            let slice = std::slice::from_raw_parts_mut(ptr, len);
            buffer
                .copy_to_slice(py, slice)
                .map_err(|e| Error::invalid_argument(format!("argument {index}: {e}")))
        })
    }
    .map_err(py_err)
}

/// One output array: a literal whose bytes Python views through the buffer
/// protocol (writable; the view keeps this object, hence the bytes, alive).
#[pyclass(frozen, module = "hlorun._hlorun")]
struct OutputBuffer {
    /// Owns the bytes at `ptr`; never mutated after construction (only Python
    /// writes to the bytes, through the exported buffer).
    literal: Literal,
    /// The literal's bytes (stable: they live on the heap, or in adopted
    /// device memory, for as long as the literal).
    ptr: usize,
    len: usize,
    #[pyo3(get)]
    dtype: &'static str,
    #[pyo3(get)]
    shape: Vec<usize>,
}

impl OutputBuffer {
    fn new(mut literal: Literal) -> Result<OutputBuffer, Error> {
        let ty = literal.element_type().ok_or_else(|| {
            Error::unimplemented(format!(
                "an output of shape {} has no NumPy form",
                literal.shape()
            ))
        })?;
        let shape = literal.dims().to_vec();
        let bytes = literal.bytes_mut()?;
        let (ptr, len) = (bytes.as_mut_ptr() as usize, bytes.len());
        Ok(OutputBuffer {
            literal,
            ptr,
            len,
            dtype: numpy_name(ty),
            shape,
        })
    }
}

#[pymethods]
impl OutputBuffer {
    /// Exports the bytes as a one-dimensional `uint8` buffer.
    unsafe fn __getbuffer__(
        slf: Bound<'_, Self>,
        view: *mut ffi::Py_buffer,
        flags: c_int,
    ) -> PyResult<()> {
        if view.is_null() {
            return Err(PyBufferError::new_err("null Py_buffer"));
        }
        let this = slf.get();
        static FORMAT: &[u8; 2] = b"B\0";
        // SAFETY: `view` is the caller's Py_buffer to fill; the pointer and
        // length are the literal's, which `obj` (a new reference to us) keeps
        // alive until the view is released.
        unsafe {
            (*view).buf = this.ptr as *mut std::ffi::c_void;
            (*view).len = this.len as isize;
            (*view).readonly = 0;
            (*view).itemsize = 1;
            (*view).format = if flags & ffi::PyBUF_FORMAT != 0 {
                FORMAT.as_ptr() as *mut std::os::raw::c_char
            } else {
                std::ptr::null_mut()
            };
            (*view).ndim = 1;
            (*view).shape = if flags & ffi::PyBUF_ND == ffi::PyBUF_ND {
                &mut (*view).len
            } else {
                std::ptr::null_mut()
            };
            (*view).strides = if flags & ffi::PyBUF_STRIDES == ffi::PyBUF_STRIDES {
                &mut (*view).itemsize
            } else {
                std::ptr::null_mut()
            };
            (*view).suboffsets = std::ptr::null_mut();
            (*view).internal = std::ptr::null_mut();
            (*view).obj = slf.into_any().into_ptr();
        }
        Ok(())
    }

    unsafe fn __releasebuffer__(&self, _view: *mut ffi::Py_buffer) {}

    /// Whether the bytes are the platform's result memory itself (adopted
    /// by the literal) rather than a copy.
    #[getter]
    fn adopted(&self) -> bool {
        self.literal.is_adopted()
    }
}

/// A result as `(is_tuple, leaves)`: a tuple's leaves flattened in preorder
/// (as XLA flattens results), each moved into an [`OutputBuffer`].
fn result_to_python(py: Python<'_>, result: Literal) -> PyResult<(bool, Vec<Py<OutputBuffer>>)> {
    let is_tuple = result.is_tuple();
    let leaves = if is_tuple {
        result.flatten_leaves()
    } else {
        vec![result]
    };
    let mut out = Vec::with_capacity(leaves.len());
    for leaf in leaves {
        out.push(Py::new(py, OutputBuffer::new(leaf).map_err(py_err)?)?);
    }
    Ok((is_tuple, out))
}

/// A compiled program on one platform.
#[pyclass(frozen, module = "hlorun._hlorun")]
struct Executable {
    client: Arc<LocalClient>,
    exe: Arc<LoadedExecutable>,
    /// The module, for its parameters' shardings when it is partitioned.
    module: Arc<HloModule>,
    /// The results' shardings given at compile time (partitioned programs).
    out_shardings: Vec<HloSharding>,
    /// The source's name in messages (a path, or `<text>`).
    #[pyo3(get)]
    source: String,
}

#[pymethods]
impl Executable {
    /// The platform it runs on.
    #[getter]
    fn platform(&self) -> &'static str {
        self.exe.platform()
    }
    /// The module's name.
    #[getter]
    fn name(&self) -> String {
        self.exe.name().to_string()
    }
    /// `(name, dtype, shape)` of each entry parameter.
    #[getter]
    fn parameters(&self) -> Vec<(String, String, Vec<usize>)> {
        self.exe
            .parameters()
            .iter()
            .map(|p| {
                let dtype = p
                    .shape
                    .element_type()
                    .map_or_else(|| p.shape.to_string(), |t| numpy_name(t).to_string());
                (p.name.clone(), dtype, p.shape.dims().to_vec())
            })
            .collect()
    }
    /// The result shape in HLO notation.
    #[getter]
    fn result_shape(&self) -> String {
        self.exe.result_shape().without_layout().to_string()
    }
    /// The devices it runs on (its partitions; 1 for a single-device program).
    #[getter]
    fn devices(&self) -> usize {
        self.exe.options().num_partitions.max(1)
    }
    /// Seconds the compile took.
    #[getter]
    fn compile_seconds(&self) -> f64 {
        self.exe.compile_time().as_secs_f64()
    }
    /// Runs on arguments given as `(dtype, dims, uint8 view)`; returns
    /// `(is_tuple, [OutputBuffer, ...])`. The GIL is released while it runs.
    fn run<'py>(
        &self,
        py: Python<'py>,
        args: Vec<ArgSpec<'py>>,
    ) -> PyResult<(bool, Vec<Py<OutputBuffer>>)> {
        let literals = args
            .iter()
            .enumerate()
            .map(|(i, a)| literal_from_buffer(i, a))
            .collect::<PyResult<Vec<_>>>()?;
        let (client, exe, source) = (&self.client, &self.exe, &self.source);
        let (module, shardings) = (&self.module, &self.out_shardings);
        let result = py
            .detach(|| {
                if exe.options().num_partitions > 1 {
                    // Global arrays in and out, as JAX's sharded jit takes them.
                    run_global(
                        client,
                        module,
                        exe,
                        &literals,
                        shardings,
                        &ExecuteOptions::default(),
                    )?
                    .into_iter()
                    .next()
                    .ok_or_else(|| Error::internal("no replica returned a result"))
                } else {
                    client.execute(exe, &literals)
                }
            })
            .map_err(|e| py_err(e.context(source)))?;
        result_to_python(py, result)
    }
}

/// Parses and compiles a module (text, or a file when `is_path`) for a
/// platform (name or alias; `None`: `HLORUN_PLATFORM`, else the default).
/// A partitioned module (`num_partitions` > 1) runs on that many devices and
/// takes and returns global arrays; `out_shardings` (HLO syntax, one per
/// result leaf) says how its results are sharded where its text does not.
#[pyfunction]
#[pyo3(signature = (source, is_path, platform=None, out_shardings=None))]
fn compile(
    py: Python<'_>,
    source: Source,
    is_path: bool,
    platform: Option<String>,
    out_shardings: Option<Vec<String>>,
) -> PyResult<Executable> {
    py.detach(|| {
        let (module, name) = load_module(&source, is_path)?;
        let (options, devices) = compile_options(&module, &name)?;
        let out_shardings = out_shardings
            .unwrap_or_default()
            .iter()
            .map(|t| HloSharding::parse(t).map_err(|e| e.context("out_shardings")))
            .collect::<Result<Vec<_>, Error>>()?;
        if devices == 1 && !out_shardings.is_empty() {
            return Err(Error::invalid_argument(format!(
                "{name}: out_shardings are for partitioned modules (num_partitions > 1)"
            )));
        }
        let client = client(platform.as_deref(), devices)?;
        let compiled = client
            .compile(&module, &options)
            .map_err(|e| e.context(&name))?;
        Ok(Executable {
            client,
            exe: compiled.executable,
            module: Arc::new(module),
            out_shardings,
            source: name,
        })
    })
    .map_err(py_err)
}

/// Every registered platform as a dict: name, aliases, priority,
/// available, devices, reason (why unavailable), default, problems.
#[pyfunction]
fn platforms(py: Python<'_>) -> PyResult<Vec<Bound<'_, PyDict>>> {
    let listing = registry::list_platforms().map_err(py_err)?;
    let default = registry::default_platform_name().ok();
    let mut out = Vec::with_capacity(listing.len());
    for p in listing {
        let d = PyDict::new(py);
        d.set_item("name", p.name)?;
        d.set_item("aliases", p.aliases.to_vec())?;
        d.set_item("priority", p.priority)?;
        let (available, devices, reason) = match &p.availability {
            Availability::Available { devices } => (true, *devices, None),
            Availability::Unavailable(why) => (false, 0, Some(why.clone())),
        };
        d.set_item("available", available)?;
        d.set_item("devices", devices)?;
        d.set_item("reason", reason)?;
        d.set_item("default", default == Some(p.name))?;
        d.set_item("problems", p.problems)?;
        out.push(d);
    }
    Ok(out)
}

/// `hlorun compare` as a function: runs the module on `platform` and checks
/// the result under the scale rule (default) or, with `rtol`/`atol`, the
/// tolerance rule against `reference`. `expected` replaces the reference's
/// values (one array per output). Returns `(ok, report, summary)`: the report
/// is the text the command line prints, the summary its failure line (empty
/// when ok).
#[pyfunction]
#[pyo3(signature = (source, is_path, args, platform=None, reference="interpreter".to_string(), rtol=None, atol=None, max_ulps=None, expected=None))]
#[allow(clippy::too_many_arguments)]
fn compare<'py>(
    py: Python<'py>,
    source: Source,
    is_path: bool,
    args: Vec<ArgSpec<'py>>,
    platform: Option<String>,
    reference: String,
    rtol: Option<f64>,
    atol: Option<f64>,
    max_ulps: Option<f64>,
    expected: Option<Vec<ArgSpec<'py>>>,
) -> PyResult<(bool, String, String)> {
    for (what, value) in [("rtol", rtol), ("atol", atol), ("max_ulps", max_ulps)] {
        check_threshold(what, value).map_err(py_err)?;
    }
    if max_ulps.is_some() && (rtol.is_some() || atol.is_some()) {
        return Err(InvalidArgumentError::new_err(
            "max_ulps (the scale rule) cannot be combined with rtol/atol (the tolerance rule)",
        ));
    }
    let arguments = args
        .iter()
        .enumerate()
        .map(|(i, a)| literal_from_buffer(i, a))
        .collect::<PyResult<Vec<_>>>()?;
    let expected = expected
        .map(|e| {
            e.iter()
                .enumerate()
                .map(|(i, a)| {
                    literal_from_buffer(i, a).map_err(|err| {
                        InvalidArgumentError::new_err(format!("expected output {i}: {err}"))
                    })
                })
                .collect::<PyResult<Vec<_>>>()
        })
        .transpose()?;
    py.detach(|| {
        compare_impl(
            &source,
            is_path,
            &arguments,
            platform.as_deref(),
            &reference,
            rtol,
            atol,
            max_ulps,
            expected,
        )
    })
    .map_err(py_err)
}

#[allow(clippy::too_many_arguments)]
fn compare_impl(
    source: &Source,
    is_path: bool,
    arguments: &[Literal],
    platform: Option<&str>,
    reference: &str,
    rtol: Option<f64>,
    atol: Option<f64>,
    max_ulps: Option<f64>,
    expected: Option<Vec<Literal>>,
) -> Result<(bool, String, String), Error> {
    let (module, name) = load_module(source, is_path)?;
    let (options, devices) = compile_options(&module, &name)?;
    if devices > 1 {
        return Err(Error::unimplemented(format!(
            "{name}: compare runs single-device programs; this one has {devices} partitions"
        )));
    }
    let tested = client(platform, 1)?;
    let platform = tested.platform_name();
    let exe = tested
        .compile(&module, &options)
        .map_err(|e| e.context(&name))?
        .executable;
    let got = tested
        .execute(&exe, arguments)
        .map_err(|e| e.context(&name))?;
    let expected = expected
        .map(|e| {
            expected_result(e, &got, "expected array(s)", |i| {
                format!("expected output {i}")
            })
        })
        .transpose()?;

    // The rules as `hlorun compare` applies them (`service::compare`).
    let report = if rtol.is_none() && atol.is_none() {
        let rule = ScaleRule {
            max_ulps: max_ulps.unwrap_or(DEFAULT_MAX_ULPS),
        };
        let expected = expected.map(|e| (e, "the expected arrays"));
        compare_by_scale(
            &module, &options, arguments, &got, expected, rule, &name, platform,
        )?
    } else {
        let (want, against) = match expected {
            Some(e) => (e, "the expected arrays".to_string()),
            None => {
                let checker = client(Some(reference), 1)?;
                let reference_exe = checker
                    .compile(&module, &options)
                    .map_err(|e| e.context(&name))?
                    .executable;
                let want = checker
                    .execute(&reference_exe, arguments)
                    .map_err(|e| e.context(&name))?;
                (want, checker.platform_name().to_string())
            }
        };
        let fallback = Tolerance::default();
        let tolerance = Tolerance {
            rtol: rtol.unwrap_or(fallback.rtol),
            atol: atol.unwrap_or(fallback.atol),
        };
        compare_by_tolerance(&[got], &[want], tolerance, &name, platform, against)?
    };
    let summary = report.failure(&name, platform).unwrap_or_default();
    Ok((report.ok(), report.text, summary))
}

/// The dtype names hlorun's element types have in NumPy/ml_dtypes, with
/// their HLO names: `{"float32": "f32", "bfloat16": "bf16", ...}`.
#[pyfunction]
fn element_types() -> HashMap<&'static str, &'static str> {
    ElementType::ALL
        .into_iter()
        .chain(ElementType::NARROW)
        .map(|t| (numpy_name(t), t.name()))
        .collect()
}

#[pymodule]
fn _hlorun(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("HloError", py.get_type::<HloError>())?;
    let classes = [
        (py.get_type::<InvalidArgumentError>(), Code::InvalidArgument),
        (py.get_type::<NotFoundError>(), Code::NotFound),
        (py.get_type::<AlreadyExistsError>(), Code::AlreadyExists),
        (py.get_type::<UnimplementedError>(), Code::Unimplemented),
        (
            py.get_type::<ResourceExhaustedError>(),
            Code::ResourceExhausted,
        ),
        (
            py.get_type::<FailedPreconditionError>(),
            Code::FailedPrecondition,
        ),
        (py.get_type::<OutOfRangeError>(), Code::OutOfRange),
        (
            py.get_type::<DeadlineExceededError>(),
            Code::DeadlineExceeded,
        ),
        (py.get_type::<UnavailableError>(), Code::Unavailable),
        (py.get_type::<InternalError>(), Code::Internal),
    ];
    py.get_type::<HloError>().setattr("code", py.None())?;
    for (class, code) in classes {
        class.setattr("code", code.as_str())?;
        m.add(class.name()?, class)?;
    }
    m.add_class::<Executable>()?;
    m.add_class::<OutputBuffer>()?;
    m.add_function(wrap_pyfunction!(compile, m)?)?;
    m.add_function(wrap_pyfunction!(platforms, m)?)?;
    m.add_function(wrap_pyfunction!(compare, m)?)?;
    m.add_function(wrap_pyfunction!(element_types, m)?)?;
    Ok(())
}
