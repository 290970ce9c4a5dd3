//! Serialized `jax.export` modules: `Exported.serialize()` writes a
//! flatbuffer (the schema is `jax/_src/export/serialization.fbs`) whose field
//! `mlir_module_serialized` holds a StableHLO portable artifact, beside the
//! calling convention: which of the function's arguments the module kept,
//! the abstract values, shardings and effects.
//!
//! Only the few fields the reader needs are read, by their slots in the
//! schema, with every offset checked against the buffer; a flatbuffer
//! library would need code generated from the schema for the same few reads.

use hlo_ir::{Error, Result};

/// Slots (field numbers) of the `Exported` table that are read.
const SLOT_SERIALIZATION_VERSION: usize = 0;
const SLOT_IN_AVALS: usize = 3;
const SLOT_MLIR_MODULE: usize = 13;
const SLOT_CALLING_CONVENTION: usize = 14;
const SLOT_KEPT_VAR_IDX: usize = 15;

/// The `Exported` table of a buffer.
struct Table<'a> {
    buf: &'a [u8],
    pos: usize,
    vtable: usize,
    vtable_len: usize,
}

fn err(msg: impl std::fmt::Display) -> Error {
    Error::invalid_argument(format!("serialized jax.export module: {msg}"))
}

fn u16_at(buf: &[u8], at: usize) -> Result<u16> {
    buf.get(at..at + 2)
        .map(|b| u16::from_le_bytes([b[0], b[1]]))
        .ok_or_else(|| err(format!("offset {at} is past the end")))
}

fn u32_at(buf: &[u8], at: usize) -> Result<u32> {
    buf.get(at..at + 4)
        .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .ok_or_else(|| err(format!("offset {at} is past the end")))
}

impl<'a> Table<'a> {
    fn root(buf: &'a [u8]) -> Result<Self> {
        let pos = u32_at(buf, 0)? as usize;
        let soffset = u32_at(buf, pos)? as i32;
        let vtable = (pos as i64 - i64::from(soffset))
            .try_into()
            .ok()
            .filter(|&v: &usize| v + 4 <= buf.len())
            .ok_or_else(|| err("the root table's vtable is out of range"))?;
        let vtable_len = usize::from(u16_at(buf, vtable)?);
        if vtable_len < 4 || vtable + vtable_len > buf.len() {
            return Err(err("the root table's vtable is out of range"));
        }
        Ok(Table {
            buf,
            pos,
            vtable,
            vtable_len,
        })
    }

    /// Where field `slot` is, if present.
    fn field(&self, slot: usize) -> Result<Option<usize>> {
        let entry = 4 + 2 * slot;
        if entry + 2 > self.vtable_len {
            return Ok(None);
        }
        let off = u16_at(self.buf, self.vtable + entry)?;
        Ok((off != 0).then_some(self.pos + usize::from(off)))
    }

    fn u16(&self, slot: usize) -> Result<Option<u16>> {
        self.field(slot)?.map(|at| u16_at(self.buf, at)).transpose()
    }

    /// A vector field: its element count and where its elements start.
    fn vector(&self, slot: usize, elem_size: usize) -> Result<Option<(usize, usize)>> {
        let Some(at) = self.field(slot)? else {
            return Ok(None);
        };
        let start = at
            .checked_add(u32_at(self.buf, at)? as usize)
            .ok_or_else(|| err("a vector offset overflows"))?;
        let len = u32_at(self.buf, start)? as usize;
        let data = start + 4;
        if len
            .checked_mul(elem_size)
            .and_then(|n| n.checked_add(data))
            .is_none_or(|end| end > self.buf.len())
        {
            return Err(err("a vector runs past the end"));
        }
        Ok(Some((len, data)))
    }
}

/// Whether `bytes` look like a serialized `jax.export` module: a flatbuffer
/// whose root table has a plausible serialization version and a portable
/// artifact in its module field.
pub fn is_jax_export(bytes: &[u8]) -> bool {
    let Ok(t) = Table::root(bytes) else {
        return false;
    };
    matches!(t.u16(SLOT_SERIALIZATION_VERSION), Ok(Some(1..=1000)))
        && matches!(t.vector(SLOT_MLIR_MODULE, 1), Ok(Some((n, at)))
            if n >= 4 && crate::bytecode::is_bytecode(&bytes[at..at + n]))
}

/// The portable artifact a serialized `jax.export` module holds.
pub(crate) fn module_bytes(bytes: &[u8]) -> Result<&[u8]> {
    let t = Table::root(bytes)?;
    let (n, at) = t
        .vector(SLOT_MLIR_MODULE, 1)?
        .ok_or_else(|| err("no mlir_module_serialized field"))?;
    Ok(&bytes[at..at + n])
}

/// What a serialized `jax.export` module says of its calling convention.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ExportInfo {
    pub serialization_version: u16,
    pub calling_convention_version: u16,
    /// How many arguments the exported function takes.
    pub function_args: usize,
    /// Which of them the module kept (the others were unused and dropped),
    /// in order.
    pub kept_args: Vec<usize>,
}

/// Reads the calling convention of a serialized `jax.export` module.
pub fn export_info(bytes: &[u8]) -> Result<ExportInfo> {
    let t = Table::root(bytes)?;
    let function_args = t.vector(SLOT_IN_AVALS, 4)?.map_or(0, |(n, _)| n);
    let kept_args = match t.vector(SLOT_KEPT_VAR_IDX, 2)? {
        Some((n, at)) => (0..n)
            .map(|i| u16_at(bytes, at + 2 * i).map(usize::from))
            .collect::<Result<_>>()?,
        None => (0..function_args).collect(),
    };
    Ok(ExportInfo {
        serialization_version: t.u16(SLOT_SERIALIZATION_VERSION)?.unwrap_or(0),
        calling_convention_version: t.u16(SLOT_CALLING_CONVENTION)?.unwrap_or(0),
        function_args,
        kept_args,
    })
}
