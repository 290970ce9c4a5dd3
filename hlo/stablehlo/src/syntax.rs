//! The syntax tree the text parser produces: MLIR's generic structure
//! (operations with operands, attributes, regions and types), whichever of the
//! two printed forms an operation came in.
//!
//! The parser writes an op's pretty form into the same fields its generic form
//! fills (`dims = [1, 0]` of a pretty `transpose` becomes the attribute
//! `permutation`), so the conversion reads one representation.

use std::fmt;

/// A 1-based `line:column` in the text; in MLIR bytecode, which has no
/// lines, column 0 and the operation's 1-based ordinal in the file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct Pos {
    pub line: u32,
    pub col: u32,
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.col == 0 {
            write!(f, "operation #{}", self.line)
        } else {
            write!(f, "{}:{}", self.line, self.col)
        }
    }
}

/// An element type as MLIR spells it (`f32`, `i1`, `ui8`, `complex<f32>`, ...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElemType(pub String);

/// A type.
#[derive(Clone, Debug, PartialEq)]
pub enum Type {
    /// `tensor<4x?xf32>`: `None` for a dynamic dimension.
    Tensor {
        dims: Vec<Option<usize>>,
        elem: ElemType,
        /// `#stablehlo.bounds<...>` or another encoding, as written.
        encoding: Option<String>,
    },
    /// `!stablehlo.token`.
    Token,
    /// `tuple<...>`.
    Tuple(Vec<Type>),
    /// A scalar type outside a tensor (`i64` after an integer attribute).
    Scalar(ElemType),
    /// Anything else, as written (`!quant.uniform<...>`, `memref<...>`).
    Other(String),
}

impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::Tensor { dims, elem, .. } => {
                write!(f, "tensor<")?;
                for d in dims {
                    match d {
                        Some(d) => write!(f, "{d}x")?,
                        None => write!(f, "?x")?,
                    }
                }
                write!(f, "{}>", elem.0)
            }
            Type::Token => write!(f, "!stablehlo.token"),
            Type::Tuple(ts) => {
                write!(f, "tuple<")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        write!(f, ", ")?;
                    }
                    write!(f, "{t}")?;
                }
                write!(f, ">")
            }
            Type::Scalar(e) => write!(f, "{}", e.0),
            Type::Other(s) => write!(f, "{s}"),
        }
    }
}

/// One element of a `dense<...>` literal, as written.
#[derive(Clone, Debug, PartialEq)]
pub enum DenseElem {
    Int(i128),
    /// A decimal float, kept as text so each element type parses it itself.
    Float(String),
    Bool(bool),
    /// An element written as its bit pattern (`0x7FC00000`).
    Bits(u128),
    Complex(Box<DenseElem>, Box<DenseElem>),
}

/// Integers stored as raw little-endian elements of `bits` bits each (one
/// byte per element below 8, as MLIR stores booleans and 4-bit integers),
/// sign-extended when `signed`. `None` for widths other than 1 to 64.
pub(crate) fn le_ints(raw: &[u8], bits: u32, signed: bool) -> Option<Vec<i64>> {
    if !(1..=64).contains(&bits) {
        return None;
    }
    let width = bits.div_ceil(8) as usize;
    let shift = 64 - bits;
    Some(
        raw.chunks_exact(width)
            .map(|c| {
                let mut b = [0u8; 8];
                b[..width].copy_from_slice(c);
                let v = u64::from_le_bytes(b) << shift;
                if signed {
                    (v as i64) >> shift
                } else {
                    (v >> shift) as i64
                }
            })
            .collect(),
    )
}

/// The payload of `dense<...>`.
#[derive(Clone, Debug, PartialEq)]
pub enum Dense {
    /// Elements in row-major order; one element is a splat.
    Elems(Vec<DenseElem>),
    /// `dense<"0x...">`: the raw little-endian bytes (one element's worth is a
    /// splat).
    Hex(Vec<u8>),
}

/// An attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Attr {
    /// An integer, with its type when written (`1 : i64`).
    Int(i128),
    Float(String),
    Bool(bool),
    Str(String),
    /// A name alone in a dictionary (`{is_stable}`), or `unit`.
    Unit,
    /// `[a, b, ...]`.
    List(Vec<Attr>),
    /// `array<i64: 1, 2>` (also `array<i1: true>` as 0/1).
    IntArray(Vec<i64>),
    /// `dense<...> : tensor<...>`.
    Dense(Dense, Type),
    /// `{name = value, ...}` in order, with its text as written (a typed-FFI
    /// `backend_config` reaches its custom call as that text).
    Dict(Vec<(String, Attr)>, String),
    /// An enumerator: `#stablehlo<comparison_direction GT>` or a bare `GT`.
    Enum(String),
    /// `#stablehlo.gather<offset_dims = [1], ...>` and other structured
    /// attributes of a dialect: the name and the fields.
    Struct(String, Vec<(String, Attr)>),
    /// `@name`.
    Symbol(String),
    /// A type used as an attribute value.
    Type(Type),
    /// Anything else, kept as text.
    Raw(String),
}

impl Attr {
    pub fn kind(&self) -> &'static str {
        match self {
            Attr::Int(_) => "an integer",
            Attr::Float(_) => "a float",
            Attr::Bool(_) => "a boolean",
            Attr::Str(_) => "a string",
            Attr::Unit => "a unit attribute",
            Attr::List(_) => "a list",
            Attr::IntArray(_) => "an integer array",
            Attr::Dense(..) => "a dense elements attribute",
            Attr::Dict(..) => "a dictionary",
            Attr::Enum(_) => "an enumerator",
            Attr::Struct(..) => "a structured attribute",
            Attr::Symbol(_) => "a symbol",
            Attr::Type(_) => "a type",
            Attr::Raw(_) => "an attribute",
        }
    }
}

/// A source location, resolved from `loc(...)` and its aliases.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Location {
    /// The innermost name (`loc("jit(f)/sin"(...))`): JAX's op name.
    pub name: Option<String>,
    pub file: Option<String>,
    pub line: Option<i64>,
    pub column: Option<i64>,
}

/// A use of an SSA value: `%name` or `%name#index`.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ValueRef {
    pub name: String,
    pub index: usize,
    pub pos: Pos,
}

/// A block argument (`%arg0: tensor<f32>`), or a function argument with its
/// attributes.
#[derive(Clone, Debug, PartialEq)]
pub struct Argument {
    pub name: String,
    pub ty: Type,
    pub attrs: Vec<(String, Attr)>,
    pub loc: Option<Location>,
}

/// A region: StableHLO's regions hold one block.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Region {
    pub args: Vec<Argument>,
    pub ops: Vec<Operation>,
    pub pos: Pos,
}

/// One operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    /// Result names (`%0`) with how many results each stands for (`%0:2`).
    pub results: Vec<(String, usize)>,
    /// `stablehlo.add`, `func.return`, ...
    pub name: String,
    pub operands: Vec<ValueRef>,
    /// Properties and attributes together, in the order written.
    pub attrs: Vec<(String, Attr)>,
    pub regions: Vec<Region>,
    /// Operand types, when the text gives them.
    pub operand_types: Vec<Type>,
    pub result_types: Vec<Type>,
    pub loc: Option<Location>,
    pub pos: Pos,
}

impl Operation {
    pub fn attr(&self, name: &str) -> Option<&Attr> {
        self.attrs.iter().find(|(n, _)| n == name).map(|(_, a)| a)
    }
    /// How many values the operation defines.
    pub fn result_count(&self) -> usize {
        self.results.iter().map(|(_, n)| n).sum()
    }
}

/// A function (`func.func`).
#[derive(Clone, Debug, PartialEq)]
pub struct Func {
    pub name: String,
    pub public: bool,
    pub args: Vec<Argument>,
    pub results: Vec<(Type, Vec<(String, Attr)>)>,
    pub attrs: Vec<(String, Attr)>,
    pub body: Region,
    pub pos: Pos,
}

/// A module.
#[derive(Clone, Debug, PartialEq, Default)]
pub struct Module {
    pub name: Option<String>,
    pub attrs: Vec<(String, Attr)>,
    pub funcs: Vec<Func>,
}
