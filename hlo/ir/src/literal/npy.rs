//! NumPy `.npy` files: reading them into [`Literal`]s and writing literals as them.
//!
//! # The format
//!
//! A `.npy` file is the magic `\x93NUMPY`, a major and minor version byte, the
//! length of a header (2 bytes little-endian in version 1.0, 4 bytes in 2.0 and
//! 3.0), the header itself, then the raw element bytes. The header is a Python
//! dict literal with exactly three keys:
//! `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }`. Version 1.0
//! and 2.0 headers are Latin-1, version 3.0 headers UTF-8; all three are read.
//!
//! # Reading
//!
//! The header is parsed by a small reader for the Python literals it can hold
//! (dicts, tuples, lists, strings, integers, `True`/`False`/`None`), with a depth
//! limit so hostile input cannot exhaust the stack. Any byte order (`<`, `>`, `|`,
//! `=`) is accepted and converted to the little-endian bytes a literal holds (a
//! complex element is swapped one component at a time); `fortran_order: True`
//! data is permuted into row-major order. 0-d arrays (`shape: ()`) become rank-0
//! literals and arrays with a zero dimension become empty literals.
//!
//! Rejected, with an `InvalidArgument` error that names the file (when one is
//! involved) and the problem: a bad magic or unknown version, a header that is
//! not a dict with exactly those three keys, object arrays (`|O`), structured
//! dtypes (a `descr` that is a list), strings, datetimes and other types XLA does
//! not have, data shorter than the header's shape needs (truncated files), and
//! data longer than it (NumPy itself would ignore the excess, but a mismatch
//! almost always means a wrong header or two arrays written into one file).
//!
//! # Element types
//!
//! | XLA | descr written | also read |
//! | --- | --- | --- |
//! | `pred` | `\|b1` | `?`, `bool` |
//! | `s8` `s16` `s32` `s64` | `\|i1` `<i2` `<i4` `<i8` | any byte order, `int8`... |
//! | `u8` `u16` `u32` `u64` | `\|u1` `<u2` `<u4` `<u8` | any byte order, `uint8`... |
//! | `f16` `f32` `f64` | `<f2` `<f4` `<f8` | any byte order, `float16`... |
//! | `c64` `c128` | `<c8` `<c16` | any byte order, `complex64`... |
//! | `bf16` | `<V2` | `\|V2`, `>V2`, `bfloat16` |
//!
//! **bfloat16 convention.** NumPy has no bfloat16. JAX arrays of `jnp.bfloat16`
//! and NumPy arrays of `ml_dtypes.bfloat16` are saved by `np.save` with descr
//! `'<V2'`: `ml_dtypes` registers bfloat16 as a 2-byte "void" type, so the file
//! records only "2 opaque bytes per element" (checked with NumPy 2.4, JAX 0.10
//! and ml_dtypes 0.6; `np.load` gives such a file back as dtype `|V2`). The
//! bytes are the bfloat16 bits in little-endian order. Since XLA has no other
//! 2-byte opaque type, this module reads a 2-byte void descr (`<V2`, `|V2`, and
//! the name `'bfloat16'` some tools write) as `bf16`, and writes `bf16` literals
//! with `'<V2'` exactly as `np.save` does, so the files are byte-identical to
//! JAX's. A reader in Python gets them back with
//! `np.load(f).view(ml_dtypes.bfloat16)`. A `>V2` file is taken to hold
//! big-endian bfloat16 bits and is swapped.
//!
//! **Narrow types** (`s2` `s4` `u2` `u4`, the f8/f6/f4 floats). `np.save` of an
//! `ml_dtypes` array of any of them writes `'<V1'` (one opaque byte; checked
//! with ml_dtypes 0.6 and NumPy 2), except `float8_e5m2`, written `'<f1'`: the
//! file does not say which type it holds. So a 1-byte void or `f1` descr reads
//! as `u8` holding the raw bit patterns, and whoever knows the type (`hlorun`
//! knows each parameter's) reinterprets it with [`Literal::reinterpret`]; a
//! descr naming an ml_dtypes type (`'float8_e4m3fn'`, `'int4'`, ...) reads as
//! that type directly. Narrow literals are written with `'<V1'`, as `np.save`
//! does; Python gets them back with `np.load(f).view(ml_dtypes.float8_e4m3fn)`.
//!
//! # Writing
//!
//! Only array literals can be written (a `.npy` file holds one array). The file is
//! what `np.save` of the same values writes, byte for byte: version 1.0 (2.0 only
//! if the header outgrows 65535 bytes), keys in sorted order, `repr` spacing of
//! the shape tuple, the 21-digit growth allowance NumPy reserves after the dict,
//! then spaces and a newline so the data starts at a multiple of 64 bytes. Data is
//! always written in C (row-major) order, little-endian, whatever layout the
//! literal's shape names (a literal's bytes are row-major regardless).

use super::Literal;
use crate::error::{Error, Result};
use crate::shape::{ElementType, Shape};
use std::path::Path;

const MAGIC: &[u8; 6] = b"\x93NUMPY";
/// NumPy aligns the start of the data to this many bytes.
const ARRAY_ALIGN: usize = 64;
/// NumPy leaves room for the growing axis' length to reach this many digits.
const GROWTH_AXIS_MAX_DIGITS: usize = 21;
/// Nesting limit of the header's Python literal (a real header nests two deep).
const MAX_HEADER_DEPTH: usize = 16;

impl Literal {
    /// Reads a `.npy` file. Errors name the file and what is wrong with it.
    pub fn read_npy(path: impl AsRef<Path>) -> Result<Literal> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| Error::from(e).context(format!("reading {}", path.display())))?;
        Self::from_npy_bytes(&bytes).map_err(|e| e.context(path.display()))
    }

    /// Parses the bytes of a `.npy` file.
    pub fn from_npy_bytes(bytes: &[u8]) -> Result<Literal> {
        let (header, data_start) = read_header(bytes)?;
        let data = &bytes[data_start..];
        let element_type = header.dtype.element_type;
        let count = header
            .shape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .and_then(|n| n.checked_mul(element_type.byte_size()).map(|b| (n, b)));
        let Some((count, byte_count)) = count else {
            return Err(Error::invalid_argument(format!(
                "npy shape {} is too large to address",
                shape_repr(&header.shape)
            )));
        };
        if data.len() < byte_count {
            return Err(Error::invalid_argument(format!(
                "npy data is truncated: shape {} of '{}' needs {byte_count} bytes, \
                 but only {} follow the header",
                shape_repr(&header.shape),
                header.dtype.descr,
                data.len()
            )));
        }
        if data.len() > byte_count {
            return Err(Error::invalid_argument(format!(
                "npy data is longer than its header says: shape {} of '{}' needs \
                 {byte_count} bytes, but {} follow the header",
                shape_repr(&header.shape),
                header.dtype.descr,
                data.len()
            )));
        }
        let mut row_major = data.to_vec();
        if header.dtype.swap {
            // Complex numbers are two floats, each stored in the file's byte order.
            let component = match element_type {
                ElementType::C64 | ElementType::C128 => element_type.byte_size() / 2,
                other => other.byte_size(),
            };
            for chunk in row_major.chunks_exact_mut(component) {
                chunk.reverse();
            }
        }
        if header.fortran_order && header.shape.len() > 1 && count > 1 {
            row_major = fortran_to_row_major(&row_major, &header.shape, element_type.byte_size());
        }
        // A descr naming a narrow type (`int4`, ...) reads as that type: its
        // bytes get the same cleared high bits as a reinterpreted `<V1` file.
        super::clear_unused_bits(element_type, &mut row_major);
        Literal::from_bytes(Shape::array(element_type, header.shape), &row_major)
    }

    /// Writes this array literal as a `.npy` file.
    pub fn write_npy(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let bytes = self
            .to_npy_bytes()
            .map_err(|e| e.context(format!("writing {}", path.display())))?;
        std::fs::write(path, bytes)
            .map_err(|e| Error::from(e).context(format!("writing {}", path.display())))
    }

    /// The bytes of a `.npy` file holding this array literal, as `np.save` writes it.
    pub fn to_npy_bytes(&self) -> Result<Vec<u8>> {
        let Shape::Array(array) = self.shape() else {
            return Err(Error::invalid_argument(format!(
                "a .npy file holds one array, but this literal has shape {}",
                self.shape()
            )));
        };
        let descr = write_descr(array.element_type);
        let shape = shape_repr(&array.dims);
        let mut dict =
            format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
        if let Some(&first) = array.dims.first() {
            let digits = first.to_string().len();
            dict.push_str(&" ".repeat(GROWTH_AXIS_MAX_DIGITS.saturating_sub(digits)));
        }
        let data = self.bytes()?;
        let mut out = wrap_header(&dict)?;
        out.extend_from_slice(data);
        Ok(out)
    }
}

/// The header quoted for a message: whole when short, else its start and its
/// length (a hostile header can be megabytes).
fn quote_header(text: &str) -> String {
    const SHOWN: usize = 120;
    match text.char_indices().nth(SHOWN) {
        None => format!("{text:?}"),
        Some((cut, _)) => format!("{:?}... ({} bytes)", &text[..cut], text.len()),
    }
}

/// Magic, version, header length, header text, padding and newline, as NumPy's
/// `_wrap_header` lays them out: version 1.0 when the length fits 16 bits.
fn wrap_header(dict: &str) -> Result<Vec<u8>> {
    let text_len = dict.len() + 1; // the final newline
    for (major, len_bytes) in [(1u8, 2usize), (2u8, 4usize)] {
        let prefix = MAGIC.len() + 2 + len_bytes;
        let pad = ARRAY_ALIGN - (prefix + text_len) % ARRAY_ALIGN;
        let header_len = text_len + pad;
        let fits = if len_bytes == 2 {
            header_len <= u16::MAX as usize
        } else {
            header_len <= u32::MAX as usize
        };
        if !fits {
            continue;
        }
        let mut out = Vec::with_capacity(prefix + header_len);
        out.extend_from_slice(MAGIC);
        out.extend_from_slice(&[major, 0]);
        if len_bytes == 2 {
            out.extend_from_slice(&(header_len as u16).to_le_bytes());
        } else {
            out.extend_from_slice(&(header_len as u32).to_le_bytes());
        }
        out.extend_from_slice(dict.as_bytes());
        out.resize(out.len() + pad, b' ');
        out.push(b'\n');
        return Ok(out);
    }
    Err(Error::invalid_argument(format!(
        "npy header of {text_len} bytes is too long even for format version 2.0"
    )))
}

/// Python's `repr` of a shape tuple: `()`, `(3,)`, `(2, 3)`.
fn shape_repr(dims: &[usize]) -> String {
    match dims {
        [] => "()".to_string(),
        [d] => format!("({d},)"),
        _ => format!(
            "({})",
            dims.iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn write_descr(ty: ElementType) -> &'static str {
    use ElementType::*;
    match ty {
        Pred => "|b1",
        S8 => "|i1",
        S16 => "<i2",
        S32 => "<i4",
        S64 => "<i8",
        U8 => "|u1",
        U16 => "<u2",
        U32 => "<u4",
        U64 => "<u8",
        F16 => "<f2",
        BF16 => "<V2",
        F32 => "<f4",
        F64 => "<f8",
        C64 => "<c8",
        C128 => "<c16",
        // What `np.save` writes for ml_dtypes' one-byte types (see the module doc).
        _ => "<V1",
    }
}

/// Column-major element bytes to row-major.
fn fortran_to_row_major(data: &[u8], dims: &[usize], size: usize) -> Vec<u8> {
    let mut out = vec![0u8; data.len()];
    let strides = crate::shape::row_major_strides(dims);
    // Walk the file's elements in order (first index fastest), placing each at its
    // row-major position.
    let mut index = vec![0usize; dims.len()];
    for element in data.chunks_exact(size) {
        let at = crate::index::linear_index(&index, &strides) * size;
        out[at..at + size].copy_from_slice(element);
        for d in 0..dims.len() {
            index[d] += 1;
            if index[d] < dims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    out
}

// ---------------------------------------------------------------------- header

struct Header {
    dtype: Dtype,
    fortran_order: bool,
    shape: Vec<usize>,
}

struct Dtype {
    element_type: ElementType,
    /// Whether the file's bytes are in the opposite order from a literal's.
    swap: bool,
    /// As written in the file, for messages.
    descr: String,
}

/// Parses magic, version and header dict; returns the header and where data starts.
fn read_header(bytes: &[u8]) -> Result<(Header, usize)> {
    if bytes.len() < MAGIC.len() || &bytes[..MAGIC.len()] != MAGIC {
        let shown: String = bytes
            .iter()
            .take(6)
            .map(|b| {
                if b.is_ascii_graphic() {
                    (*b as char).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect();
        return Err(Error::invalid_argument(format!(
            "not a .npy file: it starts with \"{shown}\" instead of the magic \"\\x93NUMPY\""
        )));
    }
    let (Some(&major), Some(&minor)) = (bytes.get(6), bytes.get(7)) else {
        return Err(Error::invalid_argument(
            "npy file is truncated inside its version bytes",
        ));
    };
    let len_bytes = match (major, minor) {
        (1, 0) => 2,
        (2, 0) | (3, 0) => 4,
        _ => {
            return Err(Error::invalid_argument(format!(
                "unsupported npy format version {major}.{minor} (supported: 1.0, 2.0, 3.0)"
            )))
        }
    };
    let Some(len_field) = bytes.get(8..8 + len_bytes) else {
        return Err(Error::invalid_argument(
            "npy file is truncated inside its header length",
        ));
    };
    let header_len = len_field
        .iter()
        .rev()
        .fold(0usize, |acc, &b| (acc << 8) | b as usize);
    let start = 8 + len_bytes;
    let Some(raw) = bytes.get(start..start + header_len) else {
        return Err(Error::invalid_argument(format!(
            "npy file is truncated inside its header: it says {header_len} header bytes, \
             but the file has {}",
            bytes.len().saturating_sub(start)
        )));
    };
    let text: String = if major == 3 {
        std::str::from_utf8(raw)
            .map_err(|_| Error::invalid_argument("npy 3.0 header is not valid UTF-8"))?
            .to_string()
    } else {
        // Latin-1: every byte is the code point of the same value.
        raw.iter().map(|&b| b as char).collect()
    };
    let value = PyParser::new(&text)
        .parse_all()
        .map_err(|m| Error::invalid_argument(format!("npy header {}: {m}", quote_header(&text))))?;
    let header = interpret_header(value).map_err(|m| {
        Error::invalid_argument(format!("npy header {}: {m}", quote_header(text.trim_end())))
    })?;
    Ok((header, start + header_len))
}

fn interpret_header(value: PyValue) -> std::result::Result<Header, String> {
    let PyValue::Dict(items) = value else {
        return Err("the header is not a dict".to_string());
    };
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    for (key, value) in items {
        let slot = match key.as_str() {
            "descr" => &mut descr,
            "fortran_order" => &mut fortran,
            "shape" => &mut shape,
            other => {
                return Err(format!(
                    "unexpected key '{other}' (a header has exactly 'descr', 'fortran_order' and 'shape')"
                ))
            }
        };
        if slot.replace(value).is_some() {
            return Err(format!("key '{key}' appears twice"));
        }
    }
    let (Some(descr), Some(fortran), Some(shape)) = (descr, fortran, shape) else {
        return Err("a header needs the keys 'descr', 'fortran_order' and 'shape'".to_string());
    };
    let dtype = match descr {
        PyValue::Str(s) => parse_descr(&s)?,
        PyValue::List => {
            return Err(
                "structured dtypes (a list of fields as 'descr') are not supported".to_string(),
            )
        }
        other => return Err(format!("'descr' must be a string, found {}", other.kind())),
    };
    let fortran_order = match fortran {
        PyValue::Bool(b) => b,
        other => {
            return Err(format!(
                "'fortran_order' must be True or False, found {}",
                other.kind()
            ))
        }
    };
    let PyValue::Tuple(dims) = shape else {
        return Err(format!("'shape' must be a tuple, found {}", shape.kind()));
    };
    let shape = dims
        .into_iter()
        .map(|d| match d {
            PyValue::Int(n) => usize::try_from(n)
                .map_err(|_| format!("shape dimension {n} is negative or too large")),
            other => Err(format!(
                "shape dimensions must be integers, found {}",
                other.kind()
            )),
        })
        .collect::<std::result::Result<Vec<_>, _>>()?;
    Ok(Header {
        dtype,
        fortran_order,
        shape,
    })
}

/// ml_dtypes' name of a narrow type (`float8_e4m3fn`, `int4`, ...).
fn ml_dtypes_type(name: &str) -> Option<ElementType> {
    ElementType::NARROW
        .into_iter()
        .find(|t| ml_dtypes_name(*t) == Some(name))
}

/// The dtype name `ml_dtypes` gives a narrow type.
pub fn ml_dtypes_name(ty: ElementType) -> Option<&'static str> {
    use ElementType::*;
    Some(match ty {
        S2 => "int2",
        S4 => "int4",
        U2 => "uint2",
        U4 => "uint4",
        F8E5M2 => "float8_e5m2",
        F8E4M3 => "float8_e4m3",
        F8E4M3FN => "float8_e4m3fn",
        F8E4M3FNUZ => "float8_e4m3fnuz",
        F8E4M3B11FNUZ => "float8_e4m3b11fnuz",
        F8E5M2FNUZ => "float8_e5m2fnuz",
        F8E3M4 => "float8_e3m4",
        F8E8M0FNU => "float8_e8m0fnu",
        F6E2M3FN => "float6_e2m3fn",
        F6E3M2FN => "float6_e3m2fn",
        F4E2M1FN => "float4_e2m1fn",
        _ => return None,
    })
}

/// A NumPy dtype string (`<f4`, `|b1`, `>c16`, `float32`, `bfloat16`, ...).
fn parse_descr(descr: &str) -> std::result::Result<Dtype, String> {
    let unsupported = |why: &str| Err(format!("dtype '{descr}' is not supported: {why}"));
    let named = match descr {
        "bool" => Some(ElementType::Pred),
        "int8" => Some(ElementType::S8),
        "int16" => Some(ElementType::S16),
        "int32" => Some(ElementType::S32),
        "int64" => Some(ElementType::S64),
        "uint8" => Some(ElementType::U8),
        "uint16" => Some(ElementType::U16),
        "uint32" => Some(ElementType::U32),
        "uint64" => Some(ElementType::U64),
        "float16" => Some(ElementType::F16),
        "bfloat16" => Some(ElementType::BF16),
        "float32" => Some(ElementType::F32),
        "float64" => Some(ElementType::F64),
        "complex64" => Some(ElementType::C64),
        "complex128" => Some(ElementType::C128),
        other => ml_dtypes_type(other),
    };
    let host_is_big = cfg!(target_endian = "big");
    if let Some(element_type) = named {
        // Named types are in the writer's native order; assume a little-endian writer
        // unless this host is big-endian.
        return Ok(Dtype {
            element_type,
            swap: host_is_big,
            descr: descr.to_string(),
        });
    }
    let (big_endian, body) = match descr.as_bytes().first() {
        Some(b'<') => (false, &descr[1..]),
        Some(b'>') | Some(b'!') => (true, &descr[1..]),
        Some(b'|') | Some(b'=') => (host_is_big, &descr[1..]),
        _ => (host_is_big, descr),
    };
    if body == "?" {
        return Ok(Dtype {
            element_type: ElementType::Pred,
            swap: false,
            descr: descr.to_string(),
        });
    }
    let Some(kind) = body.chars().next() else {
        return Err("'descr' is empty".to_string());
    };
    let size_text = &body[kind.len_utf8()..];
    let size: Option<usize> = size_text.parse().ok();
    use ElementType::*;
    let element_type = match (kind, size) {
        ('b', Some(1)) => Pred,
        ('i', Some(1)) => S8,
        ('i', Some(2)) => S16,
        ('i', Some(4)) => S32,
        ('i', Some(8)) => S64,
        ('u', Some(1)) => U8,
        ('u', Some(2)) => U16,
        ('u', Some(4)) => U32,
        ('u', Some(8)) => U64,
        ('f', Some(2)) => F16,
        ('f', Some(4)) => F32,
        ('f', Some(8)) => F64,
        ('c', Some(8)) => C64,
        ('c', Some(16)) => C128,
        // The bfloat16 convention (see the module doc).
        ('V', Some(2)) => BF16,
        // One opaque byte, or `float8_e5m2`'s `<f1` (see the module doc).
        ('V' | 'f', Some(1)) => U8,
        ('O', _) => return unsupported("object arrays hold Python objects, not numbers"),
        ('U' | 'S' | 'a', _) => return unsupported("string arrays have no XLA element type"),
        ('M' | 'm', _) => return unsupported("datetimes have no XLA element type"),
        ('V', _) => {
            return unsupported(
                "void types other than 1 byte (raw bits) and 2 bytes (read as bfloat16) have no XLA element type",
            )
        }
        ('f' | 'c', Some(_)) => return unsupported("XLA has no floating-point type of that width"),
        ('b' | 'i' | 'u', Some(_)) => return unsupported("XLA has no integer type of that width"),
        _ => return unsupported("not a NumPy type code XLA has an element type for"),
    };
    Ok(Dtype {
        element_type,
        swap: big_endian != host_is_big && element_type.byte_size() > 1,
        descr: descr.to_string(),
    })
}

// ---------------------------------------------------------------------- Python literals

/// The Python literal values a header can hold.
#[derive(Debug)]
enum PyValue {
    Dict(Vec<(String, PyValue)>),
    Tuple(Vec<PyValue>),
    /// A list; only its presence matters (a list `descr` is a structured dtype).
    List,
    Str(String),
    Int(i128),
    Bool(bool),
    None,
}

impl PyValue {
    fn kind(&self) -> &'static str {
        match self {
            PyValue::Dict(_) => "a dict",
            PyValue::Tuple(_) => "a tuple",
            PyValue::List => "a list",
            PyValue::Str(_) => "a string",
            PyValue::Int(_) => "an integer",
            PyValue::Bool(_) => "a boolean",
            PyValue::None => "None",
        }
    }
}

/// A reader for the subset of Python literal syntax `.npy` headers use.
struct PyParser<'a> {
    chars: std::iter::Peekable<std::str::CharIndices<'a>>,
}

type PyResult<T> = std::result::Result<T, String>;

impl<'a> PyParser<'a> {
    fn new(text: &'a str) -> Self {
        PyParser {
            chars: text.char_indices().peekable(),
        }
    }

    fn parse_all(mut self) -> PyResult<PyValue> {
        let value = self.value(0)?;
        self.skip_space();
        match self.chars.next() {
            None => Ok(value),
            Some((at, c)) => Err(format!("unexpected '{c}' at byte {at} after the dict")),
        }
    }

    fn skip_space(&mut self) {
        while self.chars.next_if(|(_, c)| c.is_whitespace()).is_some() {}
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_space();
        self.chars.peek().map(|&(_, c)| c)
    }

    fn expect(&mut self, want: char) -> PyResult<()> {
        match self.peek() {
            Some(c) if c == want => {
                self.chars.next();
                Ok(())
            }
            Some(c) => Err(format!("expected '{want}', found '{c}'")),
            None => Err(format!("expected '{want}', found the end of the header")),
        }
    }

    fn value(&mut self, depth: usize) -> PyResult<PyValue> {
        if depth > MAX_HEADER_DEPTH {
            return Err("the header nests too deeply".to_string());
        }
        match self.peek() {
            None => Err("expected a value, found the end of the header".to_string()),
            Some('{') => {
                self.chars.next();
                let mut items = Vec::new();
                while self.peek() != Some('}') {
                    let key = match self.value(depth + 1)? {
                        PyValue::Str(s) => s,
                        other => {
                            return Err(format!(
                                "dict keys must be strings, found {}",
                                other.kind()
                            ))
                        }
                    };
                    self.expect(':')?;
                    items.push((key, self.value(depth + 1)?));
                    if self.peek() != Some(',') {
                        break;
                    }
                    self.chars.next();
                }
                self.expect('}')?;
                Ok(PyValue::Dict(items))
            }
            Some(open @ ('(' | '[')) => {
                self.chars.next();
                let close = if open == '(' { ')' } else { ']' };
                let mut items = Vec::new();
                let mut trailing_comma = false;
                while self.peek() != Some(close) {
                    items.push(self.value(depth + 1)?);
                    trailing_comma = false;
                    if self.peek() != Some(',') {
                        break;
                    }
                    self.chars.next();
                    trailing_comma = true;
                }
                self.expect(close)?;
                Ok(if open == '[' {
                    PyValue::List
                } else if items.len() == 1 && !trailing_comma {
                    // `(3)` is a parenthesised value, not a tuple.
                    items.pop().unwrap_or(PyValue::None)
                } else {
                    PyValue::Tuple(items)
                })
            }
            Some(quote @ ('\'' | '"')) => {
                self.chars.next();
                let mut s = String::new();
                loop {
                    match self.chars.next() {
                        None => return Err("unterminated string".to_string()),
                        Some((_, c)) if c == quote => break,
                        Some((_, '\\')) => match self.chars.next() {
                            Some((_, 'n')) => s.push('\n'),
                            Some((_, 't')) => s.push('\t'),
                            Some((_, c @ ('\\' | '\'' | '"'))) => s.push(c),
                            Some((_, c)) => {
                                return Err(format!("unsupported escape '\\{c}' in a string"))
                            }
                            None => return Err("unterminated string".to_string()),
                        },
                        Some((_, c)) => s.push(c),
                    }
                }
                Ok(PyValue::Str(s))
            }
            Some(c) if c.is_ascii_digit() || c == '-' || c == '+' => {
                let mut text = String::new();
                while let Some((_, c)) = self
                    .chars
                    .next_if(|(_, c)| c.is_ascii_alphanumeric() || matches!(c, '-' | '+' | '_'))
                {
                    text.push(c);
                }
                // Python 2 wrote long integers with an `L` suffix.
                let digits = text
                    .strip_suffix(['L', 'l'])
                    .unwrap_or(&text)
                    .replace('_', "");
                digits
                    .parse::<i128>()
                    .map(PyValue::Int)
                    .map_err(|_| format!("'{text}' is not an integer"))
            }
            Some(c) if c.is_alphabetic() => {
                let mut word = String::new();
                while let Some((_, c)) = self
                    .chars
                    .next_if(|(_, c)| c.is_alphanumeric() || *c == '_')
                {
                    word.push(c);
                }
                match word.as_str() {
                    "True" => Ok(PyValue::Bool(true)),
                    "False" => Ok(PyValue::Bool(false)),
                    "None" => Ok(PyValue::None),
                    _ => Err(format!("unexpected name '{word}'")),
                }
            }
            Some(c) => Err(format!("unexpected '{c}'")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_literals() {
        let v =
            PyParser::new("{'a': (1, 2,), \"b\": (3), 'c': (), 'd': (4,), 'e': [True, None], }")
                .parse_all()
                .unwrap();
        let PyValue::Dict(items) = v else { panic!() };
        assert!(matches!(&items[0].1, PyValue::Tuple(t) if t.len() == 2));
        assert!(matches!(&items[1].1, PyValue::Int(3)));
        assert!(matches!(&items[2].1, PyValue::Tuple(t) if t.is_empty()));
        assert!(matches!(&items[3].1, PyValue::Tuple(t) if t.len() == 1));
        assert!(matches!(&items[4].1, PyValue::List));
        assert!(PyParser::new(&"(".repeat(1000)).parse_all().is_err());
        assert!(PyParser::new("{'a': 1} x").parse_all().is_err());
        assert!(PyParser::new("{'a': 12L}").parse_all().is_ok());
    }

    #[test]
    fn fortran_permutation() {
        // A 2x3 array whose elements are their row-major index, stored column-major.
        let column_major: Vec<u8> = vec![0, 3, 1, 4, 2, 5];
        assert_eq!(
            fortran_to_row_major(&column_major, &[2, 3], 1),
            vec![0, 1, 2, 3, 4, 5]
        );
    }

    #[test]
    fn headers_past_64k_use_version_2() {
        // 25000 dimensions of 1 make a header longer than a 16-bit length allows.
        let dims = vec![1usize; 25_000];
        let literal = Literal::from_slice(&dims, &[7i16]).unwrap();
        let bytes = literal.to_npy_bytes().unwrap();
        assert_eq!(&bytes[6..8], &[2, 0]);
        let header_len = u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize;
        assert!(header_len > u16::MAX as usize);
        assert_eq!((12 + header_len) % ARRAY_ALIGN, 0);
        assert_eq!(Literal::from_npy_bytes(&bytes).unwrap(), literal);
    }

    #[test]
    fn header_alignment() {
        let bytes = Literal::vector(&[1.0f32, 2.0]).to_npy_bytes().unwrap();
        let header_len = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
        assert_eq!((10 + header_len) % ARRAY_ALIGN, 0);
        assert_eq!(bytes[10 + header_len - 1], b'\n');
        assert_eq!(bytes.len(), 10 + header_len + 8);
    }
}
