//! MLIR's bytecode container, read into a generic tree of operations.
//!
//! The format (MLIR's `docs/BytecodeFormat.md`) is a magic number, a format
//! version, a producer string and a list of sections: a string table, the
//! dialects and operation names, attributes and types (each one an entry
//! encoded by its dialect, found through an offset table), an optional
//! properties table, optional resources, and the IR: one block of operations,
//! each naming its operation, location, attributes or properties, result
//! types, operands (by value number), and regions, which nest.
//!
//! This module knows the container and the builtin dialect's encodings; the
//! attributes and types of the VHLO dialect are decoded by [`crate::vhlo`]
//! through the [`DialectDecoder`] hook. Entries are decoded on first use and
//! memoised; a reference cycle or nesting deeper than [`MAX_DEPTH`] is an
//! error, so no input can recurse without bound. Every read is bounds-checked:
//! malformed bytes are an `InvalidArgument` naming the byte offset.
//!
//! Versions 0 to 6 of the format are read (StableHLO writes 0 for its 0.9
//! artifacts, 1 to 4 for 0.10 to 0.14, and 6 since 0.15): dialect versions
//! (from 1), isolated regions in sections of their own (from 2), use-list
//! orders (from 3, read and dropped: they change no semantics), block
//! arguments without locations (from 4), and native properties (from 5).

use std::rc::Rc;

use hlo_ir::{Error, Result};

use crate::syntax::Location;

/// The deepest nesting of attributes within attributes (or types) read.
pub(crate) const MAX_DEPTH: usize = 4096;

/// The deepest nesting of regions read. Real programs nest a few dozen
/// deep; the trees built from a file are dropped recursively, so the depth
/// is bounded here rather than by the stack.
pub(crate) const MAX_REGION_DEPTH: usize = 1000;

/// The highest bytecode format version read.
const MAX_VERSION: u64 = 6;
const VERSION_DIALECT_VERSIONING: u64 = 1;
const VERSION_LAZY_LOADING: u64 = 2;
const VERSION_USE_LIST_ORDERS: u64 = 3;
const VERSION_ELIDED_BLOCK_ARG_LOCS: u64 = 4;
const VERSION_NATIVE_PROPERTIES: u64 = 5;

mod section {
    pub const STRING: u8 = 0;
    pub const DIALECT: u8 = 1;
    pub const ATTR_TYPE: u8 = 2;
    pub const ATTR_TYPE_OFFSET: u8 = 3;
    pub const IR: u8 = 4;
    pub const DIALECT_VERSIONS: u8 = 7;
    pub const PROPERTIES: u8 = 8;
    pub const COUNT: usize = 9;
}

mod op_mask {
    pub const ATTRS: u8 = 0b0000_0001;
    pub const RESULTS: u8 = 0b0000_0010;
    pub const OPERANDS: u8 = 0b0000_0100;
    pub const SUCCESSORS: u8 = 0b0000_1000;
    pub const REGIONS: u8 = 0b0001_0000;
    pub const USE_LIST_ORDERS: u8 = 0b0010_0000;
    pub const PROPERTIES: u8 = 0b0100_0000;
}

/// Whether `bytes` start with MLIR bytecode's magic number.
pub fn is_bytecode(bytes: &[u8]) -> bool {
    bytes.starts_with(b"ML\xefR")
}

/// A type, decoded from the builtin or the VHLO dialect.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BType {
    /// `iN`/`siN`/`uiN`: the width and whether it is signless, signed or
    /// unsigned (`None` for signless).
    Int(u32, Option<bool>),
    /// A float type, by its MLIR name (`f32`, `bf16`, `f8E4M3FN`, ...).
    Float(&'static str),
    Bool,
    Index,
    Complex(Rc<BType>),
    Tensor {
        dims: Vec<i64>,
        elem: Rc<BType>,
        encoding: Option<Rc<BAttr>>,
    },
    UnrankedTensor(Rc<BType>),
    Function(Vec<Rc<BType>>, Vec<Rc<BType>>),
    Tuple(Vec<Rc<BType>>),
    Token,
    None,
    /// A type this reader cannot represent, described for the error that
    /// names it if it is used.
    Unsupported(String),
}

/// An attribute, decoded from the builtin or the VHLO dialect (the two
/// dialects' equivalent attributes share a variant).
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum BAttr {
    Array(Vec<Rc<BAttr>>),
    Dict(Vec<(String, Rc<BAttr>)>),
    Str(String),
    Symbol(String),
    Bool(bool),
    Unit,
    /// An integer with its type; the value as read (sign-extended for
    /// signed and signless types, zero-extended for unsigned).
    Int(i128, Rc<BType>),
    /// A float with its type, widened to f64 (exact for every float type an
    /// attribute holds).
    Float(f64, Rc<BType>),
    Type(Rc<BType>),
    /// Dense elements: the tensor type and its raw little-endian bytes (one
    /// element's worth is a splat; booleans one byte each).
    Tensor(Rc<BType>, Vec<u8>),
    /// `array<T: ...>`: the element type, the count and the raw bytes.
    DenseArray(Rc<BType>, u64, Vec<u8>),
    /// An enumerator: the enum's name and the value's name.
    Enum(&'static str, &'static str),
    /// `#stablehlo.output_operand_alias`.
    OutputOperandAlias {
        output_tuple_indices: Vec<i64>,
        operand_index: i64,
        operand_tuple_indices: Vec<i64>,
    },
    /// `#stablehlo.type_extensions<bounds = [...]>`.
    TypeExtensions(Vec<i64>),
    Loc(Location),
    /// An attribute of Shardy's `sdy` dialect.
    Sdy(Rc<crate::sdy::Sdy>),
    /// An attribute this reader cannot represent, described for the error
    /// that names it if it is used.
    Unsupported(String),
}

/// A decoded attribute or type entry.
#[derive(Debug)]
enum Decoded {
    Attr(BAttr),
    Type(BType),
}

impl Decoded {
    /// What an entry of a kind this reader cannot represent decodes to.
    fn unsupported(attr: bool, what: String) -> Decoded {
        if attr {
            Decoded::Attr(BAttr::Unsupported(what))
        } else {
            Decoded::Type(BType::Unsupported(what))
        }
    }
}

/// Reads the attributes and types of one dialect.
pub(crate) trait DialectDecoder {
    fn attribute(&self, r: &mut EntryReader<'_, '_>) -> Result<BAttr>;
    fn ty(&self, r: &mut EntryReader<'_, '_>) -> Result<BType>;
}

/// A bounds-checked cursor over a byte range of the file.
#[derive(Clone, Copy)]
pub(crate) struct Cursor<'a> {
    data: &'a [u8],
    /// Where `data` starts in the file, for messages.
    base: usize,
    at: usize,
}

impl<'a> Cursor<'a> {
    fn new(data: &'a [u8], base: usize) -> Self {
        Cursor { data, base, at: 0 }
    }

    pub(crate) fn offset(&self) -> usize {
        self.base + self.at
    }

    pub(crate) fn err(&self, msg: impl std::fmt::Display) -> Error {
        Error::invalid_argument(format!(
            "MLIR bytecode, byte offset {}: {msg}",
            self.offset()
        ))
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.at >= self.data.len()
    }

    fn remaining(&self) -> usize {
        self.data.len().saturating_sub(self.at)
    }

    pub(crate) fn byte(&mut self) -> Result<u8> {
        let b = *self
            .data
            .get(self.at)
            .ok_or_else(|| self.err("unexpected end of data"))?;
        self.at += 1;
        Ok(b)
    }

    pub(crate) fn bytes(&mut self, n: u64) -> Result<&'a [u8]> {
        if n > self.remaining() as u64 {
            return Err(self.err(format!("{n} bytes needed, {} remain", self.remaining())));
        }
        let n = n as usize;
        let s = &self.data[self.at..self.at + n];
        self.at += n;
        Ok(s)
    }

    /// A sub-cursor over the next `n` bytes.
    fn sub(&mut self, n: u64) -> Result<Cursor<'a>> {
        let base = self.offset();
        let data = self.bytes(n)?;
        Ok(Cursor::new(data, base))
    }

    /// MLIR's prefix varint: the count of trailing zero bits of the first
    /// byte is the count of bytes that follow.
    pub(crate) fn varint(&mut self) -> Result<u64> {
        let first = self.byte()?;
        if first & 1 == 1 {
            return Ok(u64::from(first >> 1));
        }
        if first == 0 {
            let b = self.bytes(8)?;
            return Ok(u64::from_le_bytes(b.try_into().expect("eight bytes")));
        }
        let extra = first.trailing_zeros() as u64;
        let rest = self.bytes(extra)?;
        let mut buf = [0u8; 8];
        buf[0] = first;
        buf[1..=rest.len()].copy_from_slice(rest);
        Ok(u64::from_le_bytes(buf) >> (extra + 1))
    }

    pub(crate) fn signed_varint(&mut self) -> Result<i64> {
        let v = self.varint()?;
        Ok(((v >> 1) as i64) ^ -((v & 1) as i64))
    }

    fn varint_with_flag(&mut self) -> Result<(u64, bool)> {
        let v = self.varint()?;
        Ok((v >> 1, v & 1 == 1))
    }

    /// A count that must be plausible for the bytes left (each item takes at
    /// least `min_bytes`), so a hostile count cannot make us allocate.
    pub(crate) fn count(&mut self, min_bytes: usize) -> Result<usize> {
        let n = self.varint()?;
        if n.saturating_mul(min_bytes.max(1) as u64) > self.remaining() as u64 {
            return Err(self.err(format!(
                "a count of {n} exceeds the {} bytes left",
                self.remaining()
            )));
        }
        Ok(n as usize)
    }

    fn nul_string(&mut self) -> Result<&'a str> {
        let rest = &self.data[self.at.min(self.data.len())..];
        let end = rest
            .iter()
            .position(|&b| b == 0)
            .ok_or_else(|| self.err("a string without its terminating NUL"))?;
        let s = std::str::from_utf8(&rest[..end]).map_err(|_| self.err("a string is not UTF-8"))?;
        self.at += end + 1;
        Ok(s)
    }

    /// `id | hasAlign << 7`, a length, an optional alignment and its padding.
    fn section(&mut self) -> Result<(u8, Cursor<'a>)> {
        let start = self.offset();
        let id_and_align = self.byte()?;
        let len = self.varint()?;
        let id = id_and_align & 0x7f;
        if id as usize >= section::COUNT {
            return Err(Error::invalid_argument(format!(
                "MLIR bytecode, byte offset {start}: unknown section id {id}"
            )));
        }
        if id_and_align & 0x80 != 0 {
            let align = self.varint()?;
            if !align.is_power_of_two() || align > 1 << 16 {
                return Err(self.err(format!("section alignment {align} is not a power of two")));
            }
            while !(self.offset() as u64).is_multiple_of(align) {
                if self.byte()? != 0xCB {
                    return Err(self.err("expected alignment padding (0xCB)"));
                }
            }
        }
        Ok((id, self.sub(len)?))
    }
}

/// An attribute or type entry of the table.
struct Entry {
    dialect: usize,
    custom: bool,
    start: usize,
    end: usize,
}

/// The string, dialect, attribute/type and properties tables of a file.
pub(crate) struct Tables<'a> {
    data: &'a [u8],
    version: u64,
    strings: Vec<&'a str>,
    pub(crate) dialects: Vec<&'a str>,
    op_names: Vec<(String, bool)>,
    attr_entries: Vec<Entry>,
    type_entries: Vec<Entry>,
    attr_cache: std::cell::RefCell<Vec<Option<Rc<BAttr>>>>,
    type_cache: std::cell::RefCell<Vec<Option<Rc<BType>>>>,
    /// Entries being decoded, for cycle detection.
    busy: std::cell::RefCell<std::collections::HashSet<(bool, usize)>>,
    depth: std::cell::Cell<usize>,
    /// (start, end) of each properties blob.
    properties: Vec<(usize, usize)>,
    decoders: Vec<(&'static str, &'a dyn DialectDecoder)>,
}

/// The reader a dialect decoder gets for one entry.
pub(crate) struct EntryReader<'t, 'a> {
    pub(crate) cur: Cursor<'a>,
    tables: &'t Tables<'a>,
}

impl<'t, 'a> EntryReader<'t, 'a> {
    pub(crate) fn err(&self, msg: impl std::fmt::Display) -> Error {
        self.cur.err(msg)
    }
    pub(crate) fn varint(&mut self) -> Result<u64> {
        self.cur.varint()
    }
    pub(crate) fn signed_varint(&mut self) -> Result<i64> {
        self.cur.signed_varint()
    }
    pub(crate) fn signed_varints(&mut self) -> Result<Vec<i64>> {
        let n = self.cur.count(1)?;
        (0..n).map(|_| self.cur.signed_varint()).collect()
    }
    pub(crate) fn attribute(&mut self) -> Result<Rc<BAttr>> {
        let i = self.cur.varint()?;
        self.tables.attribute(i, &self.cur)
    }
    /// A ranked tensor type as the builtin and VHLO dialects both encode it:
    /// an optional encoding attribute, the dimensions, the element type.
    pub(crate) fn tensor_type(&mut self, with_encoding: bool) -> Result<BType> {
        let encoding = if with_encoding {
            Some(self.attribute()?)
        } else {
            None
        };
        Ok(BType::Tensor {
            encoding,
            dims: self.signed_varints()?,
            elem: self.ty()?,
        })
    }

    /// `readOptionalAttribute`: an index with a presence flag in its low bit.
    pub(crate) fn optional_attribute(&mut self) -> Result<Option<Rc<BAttr>>> {
        let v = self.cur.varint()?;
        if v & 1 == 0 {
            return Ok(None);
        }
        self.tables.attribute(v >> 1, &self.cur).map(Some)
    }
    /// A list of (name, value) pairs, each name a string attribute.
    pub(crate) fn dictionary(&mut self) -> Result<Vec<(String, Rc<BAttr>)>> {
        let n = self.cur.count(2)?;
        let mut entries = Vec::with_capacity(n);
        for _ in 0..n {
            let name = match &*self.attribute()? {
                BAttr::Str(s) => s.clone(),
                other => return Err(self.err(format!("a dictionary key is {other:?}"))),
            };
            entries.push((name, self.attribute()?));
        }
        Ok(entries)
    }
    pub(crate) fn attributes(&mut self) -> Result<Vec<Rc<BAttr>>> {
        let n = self.cur.count(1)?;
        (0..n).map(|_| self.attribute()).collect()
    }
    pub(crate) fn ty(&mut self) -> Result<Rc<BType>> {
        let i = self.cur.varint()?;
        self.tables.ty(i, &self.cur)
    }
    pub(crate) fn types(&mut self) -> Result<Vec<Rc<BType>>> {
        let n = self.cur.count(1)?;
        (0..n).map(|_| self.ty()).collect()
    }
    pub(crate) fn string(&mut self) -> Result<String> {
        let i = self.cur.varint()?;
        self.tables.string(i, &self.cur).map(str::to_string)
    }
    pub(crate) fn blob(&mut self) -> Result<&'a [u8]> {
        let n = self.cur.varint()?;
        self.cur.bytes(n)
    }
    /// `readAPIntWithKnownWidth`: a byte up to 8 bits, a signed varint up to
    /// 64, else a count of 64-bit words, each a signed varint.
    pub(crate) fn apint(&mut self, width: u32) -> Result<u128> {
        if width <= 8 {
            return Ok(u128::from(self.cur.byte()?));
        }
        if width <= 64 {
            let v = self.cur.signed_varint()? as u64;
            let masked = if width == 64 {
                v
            } else {
                v & ((1u64 << width) - 1)
            };
            return Ok(u128::from(masked));
        }
        let words = self.cur.count(1)?;
        let mut v: u128 = 0;
        for w in 0..words {
            let word = self.cur.signed_varint()? as u64;
            if w < 2 {
                v |= u128::from(word) << (64 * w);
            }
        }
        Ok(v)
    }
}

/// Sign-extends the low `width` bits of `v`.
pub(crate) fn sign_extend(v: u128, width: u32) -> i128 {
    if width == 0 || width >= 128 {
        return v as i128;
    }
    let shift = 128 - width;
    ((v << shift) as i128) >> shift
}

impl<'a> Tables<'a> {
    pub(crate) fn string(&self, i: u64, at: &Cursor<'_>) -> Result<&'a str> {
        self.strings
            .get(i as usize)
            .copied()
            .ok_or_else(|| at.err(format!("string index {i} is out of range")))
    }

    pub(crate) fn attribute(&self, i: u64, at: &Cursor<'_>) -> Result<Rc<BAttr>> {
        let idx = i as usize;
        if idx >= self.attr_entries.len() {
            return Err(at.err(format!("attribute index {i} is out of range")));
        }
        if let Some(a) = &self.attr_cache.borrow()[idx] {
            return Ok(a.clone());
        }
        let Decoded::Attr(a) = self.decode(true, idx, at)? else {
            return Err(Error::internal("an attribute entry decoded as a type"));
        };
        let a = Rc::new(a);
        self.attr_cache.borrow_mut()[idx] = Some(a.clone());
        Ok(a)
    }

    pub(crate) fn ty(&self, i: u64, at: &Cursor<'_>) -> Result<Rc<BType>> {
        let idx = i as usize;
        if idx >= self.type_entries.len() {
            return Err(at.err(format!("type index {i} is out of range")));
        }
        if let Some(t) = &self.type_cache.borrow()[idx] {
            return Ok(t.clone());
        }
        let Decoded::Type(t) = self.decode(false, idx, at)? else {
            return Err(Error::internal("a type entry decoded as an attribute"));
        };
        let t = Rc::new(t);
        self.type_cache.borrow_mut()[idx] = Some(t.clone());
        Ok(t)
    }

    fn decode(&self, attr: bool, idx: usize, at: &Cursor<'_>) -> Result<Decoded> {
        let what = if attr { "attribute" } else { "type" };
        if !self.busy.borrow_mut().insert((attr, idx)) {
            return Err(at.err(format!("{what} {idx} refers to itself")));
        }
        let depth = self.depth.get() + 1;
        if depth > MAX_DEPTH {
            self.busy.borrow_mut().remove(&(attr, idx));
            return Err(at.err(format!("attributes and types nest deeper than {MAX_DEPTH}")));
        }
        self.depth.set(depth);
        // Nested entries recurse; `deep` moves to a fresh stack segment when
        // this one runs low, so the depth limit, not the stack, bounds them.
        let r = hlo_ir::stack::deep(|| self.decode_entry(attr, idx));
        self.depth.set(depth - 1);
        self.busy.borrow_mut().remove(&(attr, idx));
        r
    }

    fn decode_entry(&self, attr: bool, idx: usize) -> Result<Decoded> {
        let e = if attr {
            &self.attr_entries[idx]
        } else {
            &self.type_entries[idx]
        };
        let dialect = self.dialects[e.dialect];
        let mut r = EntryReader {
            cur: Cursor::new(&self.data[e.start..e.end], e.start),
            tables: self,
        };
        let out = if !e.custom {
            // The text form, written for attributes and types whose dialect
            // has no binary encoding: kept for the error that names it.
            let text = r.cur.nul_string()?;
            Decoded::unsupported(attr, format!("'{text}'"))
        } else if dialect == "builtin" {
            if attr {
                Decoded::Attr(builtin_attribute(&mut r)?)
            } else {
                Decoded::Type(builtin_type(&mut r)?)
            }
        } else {
            match self.decoders.iter().find(|(d, _)| *d == dialect) {
                Some((_, d)) if attr => Decoded::Attr(d.attribute(&mut r)?),
                Some((_, d)) => Decoded::Type(d.ty(&mut r)?),
                // A dialect this reader does not know: its entry is skipped,
                // and an error names it only if the program needs it.
                None => {
                    r.cur.bytes(r.cur.remaining() as u64)?;
                    Decoded::unsupported(
                        attr,
                        format!("an attribute or type of dialect '{dialect}'"),
                    )
                }
            }
        };
        if !r.cur.is_empty() {
            return Err(r.err(format!(
                "trailing bytes after {} {idx} of dialect '{dialect}' ({out:?})",
                if attr { "attribute" } else { "type" }
            )));
        }
        Ok(out)
    }
}

fn builtin_attribute(r: &mut EntryReader<'_, '_>) -> Result<BAttr> {
    let code = r.varint()?;
    Ok(match code {
        0 => BAttr::Array(r.attributes()?),
        1 => BAttr::Dict(r.dictionary()?),
        2 => BAttr::Str(r.string()?),
        3 => {
            let s = r.string()?;
            r.ty()?;
            BAttr::Str(s)
        }
        4 => match &*r.attribute()? {
            BAttr::Str(s) => BAttr::Symbol(s.clone()),
            _ => return Err(r.err("a symbol reference without a name")),
        },
        5 => {
            let root = r.attribute()?;
            let nested = r.attributes()?;
            match (&*root, nested.is_empty()) {
                (BAttr::Str(s), true) => BAttr::Symbol(s.clone()),
                _ => BAttr::Unsupported("a nested symbol reference".into()),
            }
        }
        6 => BAttr::Type(r.ty()?),
        7 => BAttr::Unit,
        8 => {
            let t = r.ty()?;
            let (width, signed) = match &*t {
                BType::Int(w, s) => (*w, *s),
                BType::Index => (64, None),
                BType::Bool => (1, None),
                other => return Err(r.err(format!("an integer attribute of type {other:?}"))),
            };
            let v = r.apint(width)?;
            let v = if signed == Some(false) {
                v as i128
            } else {
                sign_extend(v, width)
            };
            BAttr::Int(v, t)
        }
        9 => {
            let t = r.ty()?;
            let v = read_float(r, &t)?;
            BAttr::Float(v, t)
        }
        10 => {
            let callee = r.attribute()?;
            let caller = r.attribute()?;
            let mut loc = Location::default();
            merge_loc(&mut loc, &callee);
            merge_loc(&mut loc, &caller);
            BAttr::Loc(loc)
        }
        11 => {
            let file = match &*r.attribute()? {
                BAttr::Str(s) => s.clone(),
                _ => return Err(r.err("a file location without a file name")),
            };
            let line = r.varint()? as i64;
            let column = r.varint()? as i64;
            BAttr::Loc(Location {
                name: None,
                file: Some(file),
                line: Some(line),
                column: Some(column),
            })
        }
        12 | 13 => {
            let parts = r.attributes()?;
            if code == 13 {
                r.attribute()?;
            }
            let mut loc = Location::default();
            for p in &parts {
                merge_loc(&mut loc, p);
            }
            BAttr::Loc(loc)
        }
        14 => {
            let name = match &*r.attribute()? {
                BAttr::Str(s) => s.clone(),
                _ => return Err(r.err("a name location without a name")),
            };
            let child = r.attribute()?;
            let mut loc = Location {
                name: Some(name),
                ..Location::default()
            };
            merge_loc(&mut loc, &child);
            BAttr::Loc(loc)
        }
        15 => BAttr::Loc(Location::default()),
        // FileLineColRange (MLIR 20 on): a file name and a list of up to
        // four numbers: line, column, then the range's end.
        22 => {
            let file = match &*r.attribute()? {
                BAttr::Str(s) => s.clone(),
                _ => return Err(r.err("a file location without a file name")),
            };
            let n = r.cur.count(1)?;
            let mut v = Vec::with_capacity(n);
            for _ in 0..n {
                v.push(r.varint()? as i64);
            }
            BAttr::Loc(Location {
                name: None,
                file: Some(file),
                line: Some(v.first().copied().unwrap_or(0)),
                column: Some(v.get(1).copied().unwrap_or(0)),
            })
        }
        17 => {
            let t = r.ty()?;
            let n = r.varint()?;
            let data = r.blob()?.to_vec();
            BAttr::DenseArray(t, n, data)
        }
        18 => {
            let t = r.ty()?;
            let data = r.blob()?;
            let data = unpack_bools(&t, data);
            BAttr::Tensor(t, data)
        }
        16 => BAttr::Unsupported("dense_resource (elements kept in a resource)".into()),
        19 => BAttr::Unsupported("dense string elements".into()),
        20 => BAttr::Unsupported("sparse elements".into()),
        21 => BAttr::Unsupported("a distinct attribute".into()),
        other => BAttr::Unsupported(format!("builtin attribute code {other}")),
    })
}

/// Merges `a` (a location) into `loc` as the text reader resolves
/// locations: the first name and the first file position in preorder.
pub(crate) fn merge_loc(loc: &mut Location, a: &BAttr) {
    if let BAttr::Loc(l) = a {
        if loc.name.is_none() {
            loc.name = l.name.clone();
        }
        if loc.file.is_none() && l.file.is_some() {
            loc.file = l.file.clone();
            loc.line = l.line;
            loc.column = l.column;
        }
    }
}

/// Booleans in dense elements are written one bit each (low bit first), or
/// as one byte 0xFF for a splat of `true`; they are read back one byte
/// each.
pub(crate) fn unpack_bools(t: &BType, data: &[u8]) -> Vec<u8> {
    let BType::Tensor { dims, elem, .. } = t else {
        return data.to_vec();
    };
    if !matches!(&**elem, BType::Bool | BType::Int(1, _)) {
        return data.to_vec();
    }
    let n = dims
        .iter()
        .try_fold(1u64, |acc, &d| acc.checked_mul(d.max(0) as u64))
        .unwrap_or(u64::MAX);
    if data.len() == 1 && data[0] == 0xFF {
        return vec![1];
    }
    let packed = n.div_ceil(8);
    if data.len() as u64 == packed && data.len() as u64 != n {
        return (0..n as usize)
            .map(|i| (data[i / 8] >> (i % 8)) & 1)
            .collect();
    }
    data.to_vec()
}

/// A float of type `t`, as `readAPFloatWithKnownSemantics` writes it.
pub(crate) fn read_float(r: &mut EntryReader<'_, '_>, t: &BType) -> Result<f64> {
    let BType::Float(name) = t else {
        return Err(r.err(format!("a float attribute of type {t:?}")));
    };
    // Every float type's value is read (so the entry ends where it should);
    // the types an attribute of StableHLO's holds are widened.
    let bits = r.apint(float_width(name))?;
    Ok(match *name {
        "f16" => half::f16::from_bits(bits as u16).to_f64(),
        "bf16" => half::bf16::from_bits(bits as u16).to_f64(),
        "f32" => f64::from(f32::from_bits(bits as u32)),
        "f64" => f64::from_bits(bits as u64),
        other => {
            return Err(Error::unimplemented(format!(
                "MLIR bytecode: a float attribute of type {other} is not supported"
            )))
        }
    })
}

/// The storage width of a float type, by name.
pub(crate) fn float_width(name: &str) -> u32 {
    match name {
        "f4E2M1FN" => 4,
        "f6E2M3FN" | "f6E3M2FN" => 6,
        "f16" | "bf16" => 16,
        "tf32" => 19,
        "f32" => 32,
        "f64" => 64,
        "f80" => 80,
        "f128" => 128,
        _ => 8,
    }
}

fn builtin_type(r: &mut EntryReader<'_, '_>) -> Result<BType> {
    let code = r.varint()?;
    Ok(match code {
        0 => {
            let v = r.varint()?;
            let width = u32::try_from(v >> 2).map_err(|_| r.err("integer type too wide"))?;
            let signed = match v & 3 {
                0 => None,
                1 => Some(true),
                2 => Some(false),
                _ => return Err(r.err("bad integer signedness")),
            };
            if width == 1 && signed.is_none() {
                BType::Bool
            } else {
                BType::Int(width, signed)
            }
        }
        1 => BType::Index,
        2 => BType::Function(r.types()?, r.types()?),
        3 => BType::Float("bf16"),
        4 => BType::Float("f16"),
        5 => BType::Float("f32"),
        6 => BType::Float("f64"),
        7 => BType::Float("f80"),
        8 => BType::Float("f128"),
        9 => BType::Complex(r.ty()?),
        12 => BType::None,
        13 | 14 => r.tensor_type(code == 14)?,
        15 => BType::Tuple(r.types()?),
        18 => BType::UnrankedTensor(r.ty()?),
        10 | 11 | 16 | 17 => BType::Unsupported("memref".into()),
        19 | 20 => BType::Unsupported("vector".into()),
        other => BType::Unsupported(format!("builtin type code {other}")),
    })
}

/// One operation of the IR, generic.
#[derive(Debug)]
pub(crate) struct BOp {
    /// `dialect.name`.
    pub(crate) name: String,
    pub(crate) loc: Rc<BAttr>,
    /// The attribute dictionary (discardable attributes, and before format
    /// version 5 the inherent ones too).
    pub(crate) attrs: Vec<(String, Rc<BAttr>)>,
    /// The raw properties (inherent attributes), for the dialect to decode.
    pub(crate) properties: Option<(usize, usize)>,
    pub(crate) result_types: Vec<Rc<BType>>,
    /// The value numbers of the results, unique in the file.
    pub(crate) results: Vec<u32>,
    pub(crate) operands: Vec<u32>,
    pub(crate) regions: Vec<BRegion>,
    /// The op's ordinal in the file (1-based), for messages.
    pub(crate) ordinal: u32,
}

#[derive(Debug, Default)]
pub(crate) struct BRegion {
    pub(crate) blocks: Vec<BBlock>,
}

#[derive(Debug, Default)]
pub(crate) struct BBlock {
    /// (value number, type, location).
    pub(crate) args: Vec<(u32, Rc<BType>, Option<Rc<BAttr>>)>,
    pub(crate) ops: Vec<BOp>,
}

/// A file read: its tables and its top-level operations.
pub(crate) struct BModule<'a> {
    pub(crate) tables: Tables<'a>,
    pub(crate) producer: String,
    pub(crate) version: u64,
    pub(crate) ops: Vec<BOp>,
}

impl<'a> BModule<'a> {
    /// A cursor over an op's properties.
    pub(crate) fn properties(&self, span: (usize, usize)) -> EntryReader<'_, 'a> {
        EntryReader {
            cur: Cursor::new(&self.tables.data[span.0..span.1], span.0),
            tables: &self.tables,
        }
    }
}

/// Reads a bytecode file into its tables and operations. `decoders` read
/// the attributes and types of dialects other than builtin.
pub(crate) fn read<'a>(
    data: &'a [u8],
    decoders: Vec<(&'static str, &'a dyn DialectDecoder)>,
) -> Result<BModule<'a>> {
    let mut c = Cursor::new(data, 0);
    if !is_bytecode(data) {
        return Err(c.err("not MLIR bytecode (no 'ML\\xefR' magic number)"));
    }
    c.bytes(4)?;
    let version = c.varint()?;
    if version > MAX_VERSION {
        return Err(Error::unimplemented(format!(
            "MLIR bytecode format version {version} is not supported (read: 0 to {MAX_VERSION})"
        )));
    }
    let producer = c.nul_string()?.to_string();
    let mut sections: [Option<Cursor<'a>>; section::COUNT] = [None; section::COUNT];
    while !c.is_empty() {
        let (id, s) = c.section()?;
        if sections[id as usize].is_some() {
            return Err(c.err(format!("section {id} appears twice")));
        }
        sections[id as usize] = Some(s);
    }
    let need = |id: u8, name: &str| -> Result<Cursor<'a>> {
        sections[id as usize].ok_or_else(|| {
            Error::invalid_argument(format!("MLIR bytecode: the {name} section is missing"))
        })
    };
    let strings = read_strings(need(section::STRING, "string")?)?;
    let mut tables = Tables {
        data,
        version,
        strings,
        dialects: Vec::new(),
        op_names: Vec::new(),
        attr_entries: Vec::new(),
        type_entries: Vec::new(),
        attr_cache: Default::default(),
        type_cache: Default::default(),
        busy: Default::default(),
        depth: Default::default(),
        properties: Vec::new(),
        decoders,
    };
    read_dialects(&mut tables, need(section::DIALECT, "dialect")?)?;
    read_attr_types(
        &mut tables,
        need(section::ATTR_TYPE, "attribute/type")?,
        need(section::ATTR_TYPE_OFFSET, "attribute/type offset")?,
    )?;
    if let Some(p) = sections[section::PROPERTIES as usize] {
        read_properties(&mut tables, p)?;
    } else if version >= VERSION_NATIVE_PROPERTIES {
        return Err(Error::invalid_argument(
            "MLIR bytecode: the properties section is missing".to_string(),
        ));
    }
    let ir = need(section::IR, "IR")?;
    let mut reader = IrReader {
        t: &tables,
        scopes: Vec::new(),
        depth: 0,
        next_value: 0,
        ordinal: 0,
    };
    let ops = reader.top(ir)?;
    Ok(BModule {
        tables,
        producer,
        version,
        ops,
    })
}

fn read_strings(mut c: Cursor<'_>) -> Result<Vec<&str>> {
    let n = c.count(1)?;
    let mut lens = Vec::with_capacity(n);
    for _ in 0..n {
        lens.push(c.varint()?);
    }
    // The lengths are written last string first; the data is in order, each
    // string with its NUL, and ends the section.
    let data = c.data;
    let mut end = data.len();
    let mut out = vec![""; n];
    for (slot, &len) in out.iter_mut().rev().zip(&lens) {
        if len == 0 || len as usize > end {
            return Err(c.err("a string length exceeds the string data"));
        }
        let start = end - len as usize;
        let s = &data[start..end - 1];
        *slot = std::str::from_utf8(s).map_err(|_| c.err("a string is not UTF-8"))?;
        end = start;
    }
    if end != c.at {
        return Err(c.err("the string lengths do not meet the string data"));
    }
    Ok(out)
}

fn read_dialects(t: &mut Tables<'_>, mut c: Cursor<'_>) -> Result<()> {
    let n = c.count(1)?;
    for _ in 0..n {
        if t.version < VERSION_DIALECT_VERSIONING {
            let i = c.varint()?;
            let name = t.string(i, &c)?;
            t.dialects.push(name);
            continue;
        }
        let (i, versioned) = c.varint_with_flag()?;
        let name = t.string(i, &c)?;
        if versioned {
            let (id, _) = c.section()?;
            if id != section::DIALECT_VERSIONS {
                return Err(c.err("expected a dialect version section"));
            }
        }
        t.dialects.push(name);
    }
    if t.version >= VERSION_ELIDED_BLOCK_ARG_LOCS {
        c.varint()?;
    }
    while !c.is_empty() {
        let d = c.varint()? as usize;
        let dialect = *t
            .dialects
            .get(d)
            .ok_or_else(|| c.err(format!("dialect index {d} is out of range")))?;
        let count = c.count(1)?;
        for _ in 0..count {
            let (i, registered) = if t.version >= VERSION_NATIVE_PROPERTIES {
                c.varint_with_flag()?
            } else {
                (c.varint()?, true)
            };
            let name = t.string(i, &c)?;
            t.op_names.push((format!("{dialect}.{name}"), registered));
        }
    }
    Ok(())
}

fn read_attr_types(t: &mut Tables<'_>, data: Cursor<'_>, mut off: Cursor<'_>) -> Result<()> {
    let n_attrs = off.count(1)?;
    let n_types = off.count(1)?;
    let mut at = 0u64;
    for attrs in [true, false] {
        let total = if attrs { n_attrs } else { n_types };
        let mut entries = Vec::with_capacity(total);
        while entries.len() < total {
            let dialect = off.varint()? as usize;
            if dialect >= t.dialects.len() {
                return Err(off.err(format!("dialect index {dialect} is out of range")));
            }
            let count = off.count(1)?;
            for _ in 0..count {
                if entries.len() >= total {
                    return Err(off.err("more attribute/type entries than declared"));
                }
                let (size, custom) = off.varint_with_flag()?;
                let end = at
                    .checked_add(size)
                    .filter(|&e| e <= data.data.len() as u64)
                    .ok_or_else(|| off.err("an attribute/type entry runs past its section"))?;
                entries.push(Entry {
                    dialect,
                    custom,
                    start: data.base + at as usize,
                    end: data.base + end as usize,
                });
                at = end;
            }
        }
        if attrs {
            t.attr_entries = entries;
        } else {
            t.type_entries = entries;
        }
    }
    if !off.is_empty() {
        return Err(off.err("trailing bytes in the attribute/type offset section"));
    }
    *t.attr_cache.borrow_mut() = vec![None; n_attrs];
    *t.type_cache.borrow_mut() = vec![None; n_types];
    Ok(())
}

fn read_properties(t: &mut Tables<'_>, mut c: Cursor<'_>) -> Result<()> {
    if c.is_empty() {
        return Ok(());
    }
    let n = c.count(1)?;
    for _ in 0..n {
        let size = c.varint()?;
        let start = c.offset();
        c.bytes(size)?;
        t.properties.push((start, c.offset()));
    }
    if !c.is_empty() {
        return Err(c.err("trailing bytes in the properties section"));
    }
    Ok(())
}

/// The values visible in one isolated-from-above region and its nested
/// regions, numbered as the writer numbered them.
struct Scope {
    values: Vec<Option<u32>>,
    /// The next value number of each region being read.
    next: Vec<usize>,
}

struct IrReader<'t, 'a> {
    t: &'t Tables<'a>,
    scopes: Vec<Scope>,
    /// How many regions enclose the operation being read.
    depth: usize,
    next_value: u32,
    ordinal: u32,
}

impl<'t, 'a> IrReader<'t, 'a> {
    fn top(&mut self, mut c: Cursor<'a>) -> Result<Vec<BOp>> {
        // The top level defines no values (the writer numbers none there).
        self.scopes.push(Scope {
            values: Vec::new(),
            next: Vec::new(),
        });
        let block = self.block(&mut c)?;
        if !block.args.is_empty() {
            return Err(c.err("the top-level block has arguments"));
        }
        if !c.is_empty() {
            return Err(c.err("trailing bytes after the IR"));
        }
        Ok(block.ops)
    }

    /// A block: its header, its arguments, then its operations.
    fn block(&mut self, c: &mut Cursor<'a>) -> Result<BBlock> {
        let (n_ops, has_args) = c.varint_with_flag()?;
        let mut block = BBlock::default();
        if has_args {
            let n = c.count(1)?;
            for _ in 0..n {
                let (ty, loc) = if self.t.version >= VERSION_ELIDED_BLOCK_ARG_LOCS {
                    let (ti, has_loc) = c.varint_with_flag()?;
                    let ty = self.t.ty(ti, c)?;
                    let loc = if has_loc {
                        let li = c.varint()?;
                        Some(self.t.attribute(li, c)?)
                    } else {
                        None
                    };
                    (ty, loc)
                } else {
                    let ti = c.varint()?;
                    let ty = self.t.ty(ti, c)?;
                    let li = c.varint()?;
                    (ty, Some(self.t.attribute(li, c)?))
                };
                let id = self.define(c)?;
                block.args.push((id, ty, loc));
            }
            if self.t.version >= VERSION_USE_LIST_ORDERS && c.byte()? != 0 {
                skip_use_lists(c, n)?;
            }
        }
        let n_ops = usize::try_from(n_ops).map_err(|_| c.err("too many operations"))?;
        if n_ops > c.remaining() {
            return Err(c.err(format!("{n_ops} operations in {} bytes", c.remaining())));
        }
        for _ in 0..n_ops {
            let op = hlo_ir::stack::deep(|| self.op(c))?;
            block.ops.push(op);
        }
        Ok(block)
    }

    /// Gives the next value of the innermost region a number.
    fn define(&mut self, c: &Cursor<'_>) -> Result<u32> {
        let scope = self.scopes.last_mut().expect("a scope");
        let next = scope
            .next
            .last_mut()
            .ok_or_else(|| c.err("a value defined outside any region"))?;
        let slot = scope
            .values
            .get_mut(*next)
            .ok_or_else(|| c.err("more values defined than the region declares"))?;
        *next += 1;
        let id = self.next_value;
        self.next_value += 1;
        *slot = Some(id);
        Ok(id)
    }

    fn op(&mut self, c: &mut Cursor<'a>) -> Result<BOp> {
        self.ordinal += 1;
        let ordinal = self.ordinal;
        let name_idx = c.varint()? as usize;
        let (name, registered) = self
            .t
            .op_names
            .get(name_idx)
            .cloned()
            .ok_or_else(|| c.err(format!("operation name index {name_idx} is out of range")))?;
        let mask = c.byte()?;
        let li = c.varint()?;
        let loc = self.t.attribute(li, c)?;
        let mut op = BOp {
            name,
            loc,
            attrs: Vec::new(),
            properties: None,
            result_types: Vec::new(),
            results: Vec::new(),
            operands: Vec::new(),
            regions: Vec::new(),
            ordinal,
        };
        if mask & op_mask::ATTRS != 0 {
            let ai = c.varint()?;
            match &*self.t.attribute(ai, c)? {
                BAttr::Dict(d) => op.attrs = d.clone(),
                _ => return Err(c.err("an operation's attributes are not a dictionary")),
            }
        }
        if mask & op_mask::PROPERTIES != 0 {
            if registered {
                let pi = c.varint()? as usize;
                let (start, end) = *self
                    .t
                    .properties
                    .get(pi)
                    .ok_or_else(|| c.err(format!("properties index {pi} is out of range")))?;
                op.properties = Some((start, end));
            } else {
                let ai = c.varint()?;
                if let BAttr::Dict(d) = &*self.t.attribute(ai, c)? {
                    op.attrs.extend(d.iter().cloned());
                }
            }
        }
        if mask & op_mask::RESULTS != 0 {
            let n = c.count(1)?;
            for _ in 0..n {
                let ti = c.varint()?;
                op.result_types.push(self.t.ty(ti, c)?);
            }
        }
        if mask & op_mask::OPERANDS != 0 {
            let n = c.count(1)?;
            for _ in 0..n {
                let vi = c.varint()? as usize;
                let scope = self.scopes.last().expect("a scope");
                match scope.values.get(vi) {
                    Some(Some(id)) => op.operands.push(*id),
                    Some(None) => {
                        return Err(c.err(format!(
                            "operand {vi} of '{}' is used before it is defined",
                            op.name
                        )))
                    }
                    None => return Err(c.err(format!("value index {vi} is out of range"))),
                }
            }
        }
        if mask & op_mask::SUCCESSORS != 0 {
            return Err(Error::unimplemented(format!(
                "MLIR bytecode, byte offset {}: '{}' branches to other blocks; regions of more than one block are not supported",
                c.offset(),
                op.name
            )));
        }
        if mask & op_mask::USE_LIST_ORDERS != 0 && self.t.version >= VERSION_USE_LIST_ORDERS {
            skip_use_lists(c, op.result_types.len())?;
        }
        let mut regions = (0, false);
        if mask & op_mask::REGIONS != 0 {
            let (n, isolated) = c.varint_with_flag()?;
            if n > c.remaining() as u64 {
                return Err(c.err(format!("{n} regions in {} bytes", c.remaining())));
            }
            regions = (n as usize, isolated);
        }
        // Results are defined before the regions are read (the writer
        // numbers them so), and only inside a region.
        let in_region = !self.scopes.last().expect("a scope").next.is_empty();
        for _ in 0..op.result_types.len() {
            if in_region {
                let id = self.define(c)?;
                op.results.push(id);
            } else {
                op.results.push(self.next_value);
                self.next_value += 1;
            }
        }
        let (n_regions, isolated) = regions;
        if n_regions > 0 {
            if isolated {
                self.scopes.push(Scope {
                    values: Vec::new(),
                    next: Vec::new(),
                });
            }
            let result = if isolated && self.t.version >= VERSION_LAZY_LOADING {
                let (id, mut sub) = c.section()?;
                if id != section::IR {
                    return Err(c.err("expected an IR section for an isolated region"));
                }
                let r = self.regions(&mut sub, n_regions);
                if r.is_ok() && !sub.is_empty() {
                    Err(sub.err("trailing bytes after a region"))
                } else {
                    r
                }
            } else {
                self.regions(c, n_regions)
            };
            if isolated {
                self.scopes.pop();
            }
            op.regions = result?;
        }
        Ok(op)
    }

    fn regions(&mut self, c: &mut Cursor<'a>, n: usize) -> Result<Vec<BRegion>> {
        if self.depth >= MAX_REGION_DEPTH {
            return Err(c.err(format!("regions nest deeper than {MAX_REGION_DEPTH}")));
        }
        self.depth += 1;
        let r = self.regions_inner(c, n);
        self.depth -= 1;
        r
    }

    fn regions_inner(&mut self, c: &mut Cursor<'a>, n: usize) -> Result<Vec<BRegion>> {
        let mut out = Vec::with_capacity(n);
        for _ in 0..n {
            let n_blocks = c.varint()?;
            let mut region = BRegion::default();
            if n_blocks == 0 {
                out.push(region);
                continue;
            }
            if n_blocks > 1 {
                return Err(Error::unimplemented(format!(
                    "MLIR bytecode, byte offset {}: a region of {n_blocks} blocks; regions of more than one block are not supported",
                    c.offset()
                )));
            }
            let n_values = c.varint()?;
            if n_values > c.remaining() as u64 * 8 + 64 {
                return Err(c.err(format!("{n_values} values in {} bytes", c.remaining())));
            }
            let scope = self.scopes.last_mut().expect("a scope");
            let start = scope.values.len();
            scope.next.push(start);
            scope.values.resize(start + n_values as usize, None);
            let block = self.block(c);
            let scope = self.scopes.last_mut().expect("a scope");
            scope.values.truncate(start);
            scope.next.pop();
            region.blocks.push(block?);
            out.push(region);
        }
        Ok(out)
    }
}

fn skip_use_lists(c: &mut Cursor<'_>, range: usize) -> Result<()> {
    let n = if range > 1 { c.varint()? } else { 1 };
    for _ in 0..n {
        if range > 1 {
            c.varint()?;
        }
        let (count, _) = c.varint_with_flag()?;
        for _ in 0..count {
            c.varint()?;
        }
    }
    Ok(())
}
