//! Element types, shapes and layouts: the type system of HLO values.
//!
//! A [`Shape`] is an array (element type, dimensions, optional layout), a tuple of
//! shapes, or a token. Dimensions are `usize`; a dimension may be marked dynamic
//! (`f32[<=8]`), in which case its size is an upper bound. The layout says how a
//! logical array sits in memory (`minor_to_major`, tiling, element size, memory
//! space). Values inside this workspace are always handled in their *logical*
//! row-major order; a layout matters only where XLA gives it meaning (`bitcast`,
//! and the byte order a backend uses in device memory), and it is kept intact
//! through parsing and printing so nothing a user wrote is lost.

use crate::error::{Error, Result};
use std::fmt;

/// The primitive element types of XLA.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ElementType {
    Pred,
    S8,
    S16,
    S32,
    S64,
    U8,
    U16,
    U32,
    U64,
    F16,
    BF16,
    F32,
    F64,
    C64,
    C128,
    // Narrow types: stored one element per byte (the low bits hold the pattern).
    S2,
    S4,
    U2,
    U4,
    F8E5M2,
    F8E4M3,
    F8E4M3FN,
    F8E4M3FNUZ,
    F8E4M3B11FNUZ,
    F8E5M2FNUZ,
    F8E3M4,
    F8E8M0FNU,
    F6E2M3FN,
    F6E3M2FN,
    F4E2M1FN,
}

impl ElementType {
    /// The narrow types (XLA's 2- and 4-bit integers, 8-, 6- and 4-bit floats):
    /// one element per byte in a literal or buffer, the bit pattern in the low
    /// bits (XLA's literals hold them the same way). No backend computes on them
    /// directly: `hlo_passes::legalize::narrow` widens every computation on them
    /// (see there); only `convert`, `bitcast-convert` and plumbing see them.
    pub const NARROW: [ElementType; 15] = [
        ElementType::S2,
        ElementType::S4,
        ElementType::U2,
        ElementType::U4,
        ElementType::F8E5M2,
        ElementType::F8E4M3,
        ElementType::F8E4M3FN,
        ElementType::F8E4M3FNUZ,
        ElementType::F8E4M3B11FNUZ,
        ElementType::F8E5M2FNUZ,
        ElementType::F8E3M4,
        ElementType::F8E8M0FNU,
        ElementType::F6E2M3FN,
        ElementType::F6E3M2FN,
        ElementType::F4E2M1FN,
    ];

    /// Every element type with a native Rust representation, in a fixed order
    /// (useful for tests and tables); the narrow types are in [`Self::NARROW`].
    pub const ALL: [ElementType; 15] = [
        ElementType::Pred,
        ElementType::S8,
        ElementType::S16,
        ElementType::S32,
        ElementType::S64,
        ElementType::U8,
        ElementType::U16,
        ElementType::U32,
        ElementType::U64,
        ElementType::F16,
        ElementType::BF16,
        ElementType::F32,
        ElementType::F64,
        ElementType::C64,
        ElementType::C128,
    ];

    /// The HLO text spelling (`f32`, `pred`, ...).
    pub fn name(self) -> &'static str {
        use ElementType::*;
        match self {
            Pred => "pred",
            S8 => "s8",
            S16 => "s16",
            S32 => "s32",
            S64 => "s64",
            U8 => "u8",
            U16 => "u16",
            U32 => "u32",
            U64 => "u64",
            F16 => "f16",
            BF16 => "bf16",
            F32 => "f32",
            F64 => "f64",
            C64 => "c64",
            C128 => "c128",
            S2 => "s2",
            S4 => "s4",
            U2 => "u2",
            U4 => "u4",
            F8E5M2 => "f8e5m2",
            F8E4M3 => "f8e4m3",
            F8E4M3FN => "f8e4m3fn",
            F8E4M3FNUZ => "f8e4m3fnuz",
            F8E4M3B11FNUZ => "f8e4m3b11fnuz",
            F8E5M2FNUZ => "f8e5m2fnuz",
            F8E3M4 => "f8e3m4",
            F8E8M0FNU => "f8e8m0fnu",
            F6E2M3FN => "f6e2m3fn",
            F6E3M2FN => "f6e3m2fn",
            F4E2M1FN => "f4e2m1fn",
        }
    }

    /// Parses the HLO text spelling; `None` for anything else (including `token`,
    /// which is a shape of its own, not an element type).
    pub fn from_name(name: &str) -> Option<ElementType> {
        ElementType::ALL
            .into_iter()
            .chain(ElementType::NARROW)
            .find(|t| t.name() == name)
    }

    /// Bytes one element occupies in a dense buffer (`pred` is one byte).
    pub fn byte_size(self) -> usize {
        use ElementType::*;
        match self {
            Pred | S8 | U8 => 1,
            S2 | S4 | U2 | U4 | F8E5M2 | F8E4M3 | F8E4M3FN | F8E4M3FNUZ | F8E4M3B11FNUZ
            | F8E5M2FNUZ | F8E3M4 | F8E8M0FNU | F6E2M3FN | F6E3M2FN | F4E2M1FN => 1,
            S16 | U16 | F16 | BF16 => 2,
            S32 | U32 | F32 => 4,
            S64 | U64 | F64 | C64 => 8,
            C128 => 16,
        }
    }

    /// Width in bits of one element (XLA's: 4 for `s4`, 6 for `f6e2m3fn`).
    pub fn bit_width(self) -> usize {
        use ElementType::*;
        match self {
            S2 | U2 => 2,
            S4 | U4 | F4E2M1FN => 4,
            F6E2M3FN | F6E3M2FN => 6,
            _ => self.byte_size() * 8,
        }
    }

    /// One of [`Self::NARROW`].
    pub fn is_narrow(self) -> bool {
        ElementType::NARROW.contains(&self)
    }

    /// The type a narrow type computes in (its values convert to it exactly):
    /// `f16` for the 8-, 6- and 4-bit floats, `f32` for `f8e8m0fnu` (its range
    /// exceeds `f16`'s), `s8`/`u8` for the integers; itself otherwise. `f16`,
    /// not `f32`, because XLA CPU computes f8 ops in `f16` (an `f16` op is
    /// itself computed in `f32` and rounded): the double rounding shows, e.g.
    /// `sqrt` of `f8e3m4` 15.5 is 4, not 3.875 (`tests/narrow`).
    pub fn wide_type(self) -> ElementType {
        use ElementType::*;
        match self {
            S2 | S4 => S8,
            U2 | U4 => U8,
            F8E8M0FNU => F32,
            t if t.is_narrow() => F16,
            t => t,
        }
    }

    pub fn is_float(self) -> bool {
        use ElementType::*;
        matches!(
            self,
            F16 | BF16
                | F32
                | F64
                | F8E5M2
                | F8E4M3
                | F8E4M3FN
                | F8E4M3FNUZ
                | F8E4M3B11FNUZ
                | F8E5M2FNUZ
                | F8E3M4
                | F8E8M0FNU
                | F6E2M3FN
                | F6E3M2FN
                | F4E2M1FN
        )
    }
    pub fn is_complex(self) -> bool {
        matches!(self, ElementType::C64 | ElementType::C128)
    }
    /// Float or complex.
    pub fn is_floating_or_complex(self) -> bool {
        self.is_float() || self.is_complex()
    }
    pub fn is_signed_int(self) -> bool {
        use ElementType::*;
        matches!(self, S8 | S16 | S32 | S64 | S2 | S4)
    }
    pub fn is_unsigned_int(self) -> bool {
        use ElementType::*;
        matches!(self, U8 | U16 | U32 | U64 | U2 | U4)
    }
    /// Signed or unsigned integer (not `pred`).
    pub fn is_integer(self) -> bool {
        self.is_signed_int() || self.is_unsigned_int()
    }
    pub fn is_pred(self) -> bool {
        self == ElementType::Pred
    }
    /// The real type of a complex type's parts (`c64` → `f32`); itself otherwise.
    pub fn complex_component(self) -> ElementType {
        match self {
            ElementType::C64 => ElementType::F32,
            ElementType::C128 => ElementType::F64,
            other => other,
        }
    }
    /// Exponent and mantissa bits of a float type (for `reduce-precision` and tests).
    pub fn float_bits(self) -> Option<(u32, u32)> {
        match self {
            ElementType::F16 => Some((5, 10)),
            ElementType::BF16 => Some((8, 7)),
            ElementType::F32 => Some((8, 23)),
            ElementType::F64 => Some((11, 52)),
            ElementType::F8E5M2 | ElementType::F8E5M2FNUZ => Some((5, 2)),
            ElementType::F8E4M3
            | ElementType::F8E4M3FN
            | ElementType::F8E4M3FNUZ
            | ElementType::F8E4M3B11FNUZ => Some((4, 3)),
            ElementType::F8E3M4 => Some((3, 4)),
            ElementType::F8E8M0FNU => Some((8, 0)),
            ElementType::F6E2M3FN => Some((2, 3)),
            ElementType::F6E3M2FN => Some((3, 2)),
            ElementType::F4E2M1FN => Some((2, 1)),
            _ => None,
        }
    }
}

impl fmt::Display for ElementType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One tile of a tiled layout: `T(8,128)`; `None` marks a combined dimension (`*`).
pub type Tile = Vec<Option<u64>>;

/// How an array's logical elements are laid out in memory.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    /// Dimension numbers from the fastest-varying to the slowest.
    pub minor_to_major: Vec<usize>,
    /// Tiles, outermost first (`T(8,128)(2,1)`). Kept, not acted on.
    pub tiles: Vec<Tile>,
    /// `E(n)`: bits per element in memory when it differs from the type's width.
    pub element_size_in_bits: Option<u64>,
    /// `S(n)`: the memory space the buffer lives in.
    pub memory_space: Option<u64>,
}

impl Layout {
    /// Row-major layout (`{n-1,...,1,0}`) for `rank` dimensions.
    pub fn row_major(rank: usize) -> Layout {
        Layout {
            minor_to_major: (0..rank).rev().collect(),
            ..Layout::default()
        }
    }
    /// Whether this layout orders elements row-major with nothing else attached.
    pub fn is_row_major(&self) -> bool {
        self.minor_to_major
            .iter()
            .rev()
            .copied()
            .eq(0..self.minor_to_major.len())
    }
}

impl fmt::Display for Layout {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        write_joined(f, &self.minor_to_major)?;
        let has_extra = !self.tiles.is_empty()
            || self.element_size_in_bits.is_some()
            || self.memory_space.is_some();
        if has_extra {
            f.write_str(":")?;
            // XLA writes `T` once, then each tile: `T(8,128)(2,1)`.
            if !self.tiles.is_empty() {
                f.write_str("T")?;
            }
            for tile in &self.tiles {
                f.write_str("(")?;
                for (i, d) in tile.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    match d {
                        Some(n) => write!(f, "{n}")?,
                        None => f.write_str("*")?,
                    }
                }
                f.write_str(")")?;
            }
            if let Some(e) = self.element_size_in_bits {
                write!(f, "E({e})")?;
            }
            if let Some(s) = self.memory_space {
                write!(f, "S({s})")?;
            }
        }
        f.write_str("}")
    }
}

/// A dense array shape.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ArrayShape {
    pub element_type: ElementType,
    pub dims: Vec<usize>,
    /// Per dimension, whether its size is only an upper bound (`<=n`). Empty when no
    /// dimension is dynamic, so static shapes compare equal however they were built.
    pub dynamic: Vec<bool>,
    pub layout: Option<Layout>,
}

impl ArrayShape {
    pub fn new(element_type: ElementType, dims: Vec<usize>) -> Self {
        ArrayShape {
            element_type,
            dims,
            dynamic: Vec::new(),
            layout: None,
        }
    }
    pub fn rank(&self) -> usize {
        self.dims.len()
    }
    /// Number of elements (1 for a scalar, 0 if any dimension is 0).
    pub fn element_count(&self) -> usize {
        self.dims.iter().product()
    }
    /// Bytes of a dense row-major buffer holding this array.
    pub fn byte_size(&self) -> usize {
        self.element_count() * self.element_type.byte_size()
    }
    pub fn is_dynamic_dim(&self, d: usize) -> bool {
        self.dynamic.get(d).copied().unwrap_or(false)
    }
    /// Same element type and dimensions; layout and dynamism ignored.
    pub fn compatible(&self, other: &ArrayShape) -> bool {
        self.element_type == other.element_type && self.dims == other.dims
    }
    /// The layout, or row-major when none is set.
    pub fn layout_or_default(&self) -> Layout {
        self.layout
            .clone()
            .unwrap_or_else(|| Layout::row_major(self.rank()))
    }
    /// Row-major strides in elements.
    pub fn strides(&self) -> Vec<usize> {
        row_major_strides(&self.dims)
    }
}

/// Row-major strides, in elements, for the given dimensions.
pub fn row_major_strides(dims: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    strides
}

/// The shape of an HLO value.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Shape {
    Array(ArrayShape),
    Tuple(Vec<Shape>),
    Token,
}

impl Shape {
    /// An array shape without a layout.
    pub fn array(element_type: ElementType, dims: impl Into<Vec<usize>>) -> Shape {
        Shape::Array(ArrayShape::new(element_type, dims.into()))
    }
    /// An array shape with the row-major layout XLA prints by default.
    pub fn array_with_layout(element_type: ElementType, dims: impl Into<Vec<usize>>) -> Shape {
        let dims = dims.into();
        let layout = Some(Layout::row_major(dims.len()));
        Shape::Array(ArrayShape {
            element_type,
            dims,
            dynamic: Vec::new(),
            layout,
        })
    }
    pub fn scalar(element_type: ElementType) -> Shape {
        Shape::array(element_type, Vec::new())
    }
    pub fn tuple(elements: impl Into<Vec<Shape>>) -> Shape {
        Shape::Tuple(elements.into())
    }
    pub fn is_array(&self) -> bool {
        matches!(self, Shape::Array(_))
    }
    pub fn is_tuple(&self) -> bool {
        matches!(self, Shape::Tuple(_))
    }
    pub fn is_token(&self) -> bool {
        matches!(self, Shape::Token)
    }
    pub fn as_array(&self) -> Option<&ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }
    pub fn as_array_mut(&mut self) -> Option<&mut ArrayShape> {
        match self {
            Shape::Array(a) => Some(a),
            _ => None,
        }
    }
    /// The array inside, or an `InvalidArgument` error naming this shape.
    pub fn array_or_err(&self) -> Result<&ArrayShape> {
        self.as_array()
            .ok_or_else(|| Error::invalid_argument(format!("expected an array shape, got {self}")))
    }
    pub fn tuple_shapes(&self) -> &[Shape] {
        match self {
            Shape::Tuple(t) => t,
            _ => &[],
        }
    }
    /// Element type of an array shape.
    pub fn element_type(&self) -> Option<ElementType> {
        self.as_array().map(|a| a.element_type)
    }
    /// Dimensions of an array shape; empty for tuples and tokens.
    pub fn dims(&self) -> &[usize] {
        match self {
            Shape::Array(a) => &a.dims,
            _ => &[],
        }
    }
    pub fn rank(&self) -> usize {
        self.dims().len()
    }
    /// Elements of an array shape (0 for tuples and tokens).
    pub fn element_count(&self) -> usize {
        match self {
            Shape::Array(a) => a.element_count(),
            _ => 0,
        }
    }
    /// Whether this is an array of rank 0.
    pub fn is_scalar(&self) -> bool {
        matches!(self, Shape::Array(a) if a.dims.is_empty())
    }
    /// Same structure, element types and dimensions; layouts ignored.
    pub fn compatible(&self, other: &Shape) -> bool {
        match (self, other) {
            (Shape::Array(a), Shape::Array(b)) => a.compatible(b),
            (Shape::Tuple(a), Shape::Tuple(b)) => {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.compatible(y))
            }
            (Shape::Token, Shape::Token) => true,
            _ => false,
        }
    }
    /// The sub-shape at a tuple index path (`[]` is the shape itself).
    pub fn subshape(&self, index: &[usize]) -> Option<&Shape> {
        let mut shape = self;
        for &i in index {
            shape = shape.tuple_shapes().get(i)?;
        }
        Some(shape)
    }
    /// Every array leaf with its index path, in preorder (the order XLA flattens a
    /// tuple into buffers).
    pub fn leaves(&self) -> Vec<(Vec<usize>, &ArrayShape)> {
        fn walk<'a>(
            s: &'a Shape,
            path: &mut Vec<usize>,
            out: &mut Vec<(Vec<usize>, &'a ArrayShape)>,
        ) {
            match s {
                Shape::Array(a) => out.push((path.clone(), a)),
                Shape::Tuple(t) => {
                    for (i, e) in t.iter().enumerate() {
                        path.push(i);
                        walk(e, path, out);
                        path.pop();
                    }
                }
                Shape::Token => {}
            }
        }
        let mut out = Vec::new();
        walk(self, &mut Vec::new(), &mut out);
        out
    }
    /// A copy with every layout removed (for comparisons that ignore layout).
    pub fn without_layout(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: None,
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(Shape::without_layout).collect()),
            Shape::Token => Shape::Token,
        }
    }
    /// A copy with a row-major layout on every array that has none.
    pub fn with_default_layouts(&self) -> Shape {
        match self {
            Shape::Array(a) => Shape::Array(ArrayShape {
                layout: Some(a.layout_or_default()),
                ..a.clone()
            }),
            Shape::Tuple(t) => Shape::Tuple(t.iter().map(Shape::with_default_layouts).collect()),
            Shape::Token => Shape::Token,
        }
    }
}

fn write_joined<T: fmt::Display>(f: &mut fmt::Formatter<'_>, items: &[T]) -> fmt::Result {
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            f.write_str(",")?;
        }
        write!(f, "{item}")?;
    }
    Ok(())
}

impl fmt::Display for ArrayShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}[", self.element_type)?;
        for (i, d) in self.dims.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            if self.is_dynamic_dim(i) {
                f.write_str("<=")?;
            }
            write!(f, "{d}")?;
        }
        f.write_str("]")?;
        if let Some(layout) = &self.layout {
            // XLA omits the empty layout of a scalar.
            if !(self.dims.is_empty() && *layout == Layout::default()) {
                write!(f, "{layout}")?;
            }
        }
        Ok(())
    }
}

impl fmt::Display for Shape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Shape::Array(a) => write!(f, "{a}"),
            Shape::Token => f.write_str("token[]"),
            Shape::Tuple(elements) => {
                f.write_str("(")?;
                for (i, e) in elements.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    // XLA marks every fifth element of a long tuple to help readers count.
                    if i > 0 && i % 5 == 0 {
                        write!(f, "/*index={i}*/")?;
                    }
                    write!(f, "{e}")?;
                }
                f.write_str(")")
            }
        }
    }
}

/// Parameter shapes and result shape of a computation.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct ProgramShape {
    pub parameters: Vec<Shape>,
    pub result: Shape,
}

impl fmt::Display for ProgramShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("(")?;
        for (i, p) in self.parameters.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            write!(f, "{p}")?;
        }
        write!(f, ")->{}", self.result)
    }
}
