//! Shardings (`sharding={...}`) as values: how XLA's partitioned programs say
//! which part of a global array each device holds.
//!
//! The IR keeps an instruction's sharding as the text it was written in
//! ([`crate::HloInstruction::sharding`]), so that parsing and printing a module
//! never changes a sharding nobody asked about (XLA has spellings this module
//! does not model, such as `shard_as` and `unreduced`). Code that needs the
//! meaning — slicing a global argument into per-device shards, assembling a
//! result — parses that text with [`HloSharding::parse`], which either
//! understands it exactly or says what it does not understand.
//!
//! The forms, as XLA's `HloSharding::ToString` prints them:
//! * `{replicated}`, `{manual}`, `{unknown}`, `{maximal device=N}`;
//! * tiled: `{devices=[2,1,2]<=[4]}`, `{devices=[2,2]<=[2,2]T(1,0)}` (iota device
//!   lists, reshaped and transposed) or `{devices=[2,2]0,2,1,3}` (listed), then
//!   optionally `last_tile_dim_replicate` or `last_tile_dims={manual, replicated}`,
//!   which say the tile assignment's trailing dimensions are subgroups
//!   (replication or manual sharding) rather than data dimensions;
//! * tuples: `{{replicated}, {devices=[4]<=[4]}}`, one per leaf.
//!
//! A tiled dimension of extent `n` split `k` ways gives each tile `ceil(n / k)`
//! elements, XLA's rule; the last tiles hold fewer real elements (padding).

use crate::lexer::{Lexer, Token, TokenKind};
use crate::{ArrayShape, Error, Literal, Result, Shape};
use std::fmt;

/// The largest tile assignment a sharding may name (it is expanded to a list).
const MAX_TILE_DEVICES: usize = 1 << 20;

/// How the device list of a tiled sharding was written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DeviceList {
    /// `<=[reshape]` or `<=[reshape]T(perm)`: iota, reshaped, transposed.
    Iota {
        reshape: Vec<usize>,
        perm: Option<Vec<usize>>,
    },
    /// The ids listed in row-major order of the tile assignment.
    Listed(Vec<usize>),
}

/// A subgroup dimension's kind in `last_tile_dims={...}`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SubgroupKind {
    Replicated,
    Manual,
}

/// A parsed sharding.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HloSharding {
    Replicated,
    Manual,
    Unknown,
    Maximal {
        device: usize,
    },
    Tiled {
        /// Tiles along each dimension of the tile assignment (data dimensions
        /// first, then the subgroup dimensions).
        tiles: Vec<usize>,
        devices: DeviceList,
        /// `last_tile_dim_replicate` (one trailing subgroup dimension, replicated).
        last_tile_dim_replicate: bool,
        /// `last_tile_dims={...}`: the kinds of the trailing subgroup dimensions.
        last_tile_dims: Vec<SubgroupKind>,
    },
    Tuple(Vec<HloSharding>),
}

/// Where each device's tile of an array lies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TileLayout {
    /// Tiles along each data dimension.
    pub tiles: Vec<usize>,
    /// Each device's tile coordinates (one per data dimension), by device id;
    /// `None` for a device the assignment does not name.
    pub coords: Vec<Option<Vec<usize>>>,
}

impl HloSharding {
    /// Parses sharding text, braces included (`{devices=[4,1]<=[4]}`).
    pub fn parse(text: &str) -> Result<HloSharding> {
        let mut p = Reader::new(text)?;
        let sharding = p.sharding()?;
        if p.tok.kind != TokenKind::Eof {
            return Err(p.expected("the end of the sharding"));
        }
        Ok(sharding)
    }

    /// The leaves' shardings: the elements of a tuple sharding, or this one.
    pub fn leaves(&self) -> Vec<&HloSharding> {
        match self {
            HloSharding::Tuple(parts) => parts.iter().flat_map(|p| p.leaves()).collect(),
            other => vec![other],
        }
    }

    /// For a tiled sharding of an array of rank `rank`: each device's tile
    /// (among `device_count` devices). `None` for shardings where every device
    /// holds the whole array (replicated, maximal, manual).
    pub fn tile_layout(&self, rank: usize, device_count: usize) -> Result<Option<TileLayout>> {
        let HloSharding::Tiled {
            tiles,
            devices,
            last_tile_dim_replicate,
            last_tile_dims,
        } = self
        else {
            return Ok(None);
        };
        let subgroups = last_tile_dims.len() + usize::from(*last_tile_dim_replicate);
        if tiles.len() != rank + subgroups {
            return Err(Error::invalid_argument(format!(
                "sharding {self} tiles {} dimension(s), but the array has rank {rank} and the \
                 sharding {subgroups} subgroup dimension(s)",
                tiles.len()
            )));
        }
        let ids = devices.ids(tiles)?;
        let mut coords = vec![None; device_count];
        let strides = crate::shape::row_major_strides(tiles);
        for (linear, &id) in ids.iter().enumerate() {
            let slot = coords.get_mut(id).ok_or_else(|| {
                Error::invalid_argument(format!(
                    "sharding {self} names device {id}, but the program runs on {device_count}"
                ))
            })?;
            let c: Vec<usize> = strides[..rank]
                .iter()
                .zip(tiles)
                .map(|(&s, &t)| linear / s % t)
                .collect();
            if slot.replace(c).is_some() {
                return Err(Error::invalid_argument(format!(
                    "sharding {self} names device {id} twice"
                )));
            }
        }
        Ok(Some(TileLayout {
            tiles: tiles[..rank].to_vec(),
            coords,
        }))
    }
}

impl DeviceList {
    /// The device ids in row-major order of a tile assignment of `tiles`.
    pub fn ids(&self, tiles: &[usize]) -> Result<Vec<usize>> {
        let total = tiles
            .iter()
            .try_fold(1usize, |a, &t| a.checked_mul(t))
            .filter(|&n| n <= MAX_TILE_DEVICES)
            .ok_or_else(|| {
                Error::invalid_argument(format!(
                    "a tile assignment {tiles:?} of more than {MAX_TILE_DEVICES} devices"
                ))
            })?;
        let ids = match self {
            DeviceList::Iota { reshape, perm } => {
                let identity: Vec<usize> = (0..reshape.len()).collect();
                iota_ids(reshape, perm.as_deref().unwrap_or(&identity))?
            }
            DeviceList::Listed(ids) => ids.clone(),
        };
        if ids.len() != total {
            return Err(Error::invalid_argument(format!(
                "a tile assignment {tiles:?} needs {total} device ids, the list has {}",
                ids.len()
            )));
        }
        Ok(ids)
    }
}

/// `iota(prod(reshape))` reshaped to `reshape`, transposed by `perm`, read in
/// row-major order: the device ids of XLA's iota tile assignments and iota
/// replica groups.
pub fn iota_ids(reshape: &[usize], perm: &[usize]) -> Result<Vec<usize>> {
    let ids: Vec<usize> = (0..checked_product(reshape)?).collect();
    transpose_ids(&ids, reshape, perm)
}

fn checked_product(dims: &[usize]) -> Result<usize> {
    dims.iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .filter(|&n| n <= MAX_TILE_DEVICES)
        .ok_or_else(|| {
            Error::invalid_argument(format!(
                "{dims:?} names more than {MAX_TILE_DEVICES} devices"
            ))
        })
}

/// `ids` (row-major over `dims`) transposed by `perm`, read row-major.
pub fn transpose_ids(ids: &[usize], dims: &[usize], perm: &[usize]) -> Result<Vec<usize>> {
    let mut sorted = perm.to_vec();
    sorted.sort_unstable();
    if sorted != (0..dims.len()).collect::<Vec<_>>() {
        return Err(Error::invalid_argument(format!(
            "{perm:?} is not a permutation of the dimensions of {dims:?}"
        )));
    }
    let total = checked_product(dims)?;
    if ids.len() != total {
        return Err(Error::invalid_argument(format!(
            "{} ids do not fill {dims:?}",
            ids.len()
        )));
    }
    let strides = crate::shape::row_major_strides(dims);
    let tdims: Vec<usize> = perm.iter().map(|&p| dims[p]).collect();
    let mut out = Vec::with_capacity(total);
    let mut index = vec![0usize; tdims.len()];
    for _ in 0..total {
        let at: usize = index.iter().zip(perm).map(|(&i, &p)| i * strides[p]).sum();
        out.push(ids[at]);
        for d in (0..tdims.len()).rev() {
            index[d] += 1;
            if index[d] < tdims[d] {
                break;
            }
            index[d] = 0;
        }
    }
    Ok(out)
}

fn list(f: &mut fmt::Formatter<'_>, v: &[usize]) -> fmt::Result {
    let parts: Vec<String> = v.iter().map(|x| x.to_string()).collect();
    f.write_str(&parts.join(","))
}

impl fmt::Display for HloSharding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HloSharding::Replicated => f.write_str("{replicated}"),
            HloSharding::Manual => f.write_str("{manual}"),
            HloSharding::Unknown => f.write_str("{unknown}"),
            HloSharding::Maximal { device } => write!(f, "{{maximal device={device}}}"),
            HloSharding::Tuple(parts) => {
                f.write_str("{")?;
                for (i, p) in parts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{p}")?;
                }
                f.write_str("}")
            }
            HloSharding::Tiled {
                tiles,
                devices,
                last_tile_dim_replicate,
                last_tile_dims,
            } => {
                f.write_str("{devices=[")?;
                list(f, tiles)?;
                f.write_str("]")?;
                match devices {
                    DeviceList::Iota { reshape, perm } => {
                        f.write_str("<=[")?;
                        list(f, reshape)?;
                        f.write_str("]")?;
                        if let Some(perm) = perm {
                            f.write_str("T(")?;
                            list(f, perm)?;
                            f.write_str(")")?;
                        }
                    }
                    DeviceList::Listed(ids) => list(f, ids)?,
                }
                if *last_tile_dim_replicate {
                    f.write_str(" last_tile_dim_replicate")?;
                }
                if !last_tile_dims.is_empty() {
                    let kinds: Vec<&str> = last_tile_dims
                        .iter()
                        .map(|k| match k {
                            SubgroupKind::Manual => "manual",
                            SubgroupKind::Replicated => "replicated",
                        })
                        .collect();
                    write!(f, " last_tile_dims={{{}}}", kinds.join(", "))?;
                }
                f.write_str("}")
            }
        }
    }
}

/// A token reader over one sharding's text.
struct Reader<'a> {
    lex: Lexer<'a>,
    tok: Token,
}

impl<'a> Reader<'a> {
    fn new(text: &'a str) -> Result<Self> {
        let mut lex = Lexer::new(text);
        let tok = lex.next_token()?;
        Ok(Reader { lex, tok })
    }

    fn bump(&mut self) -> Result<Token> {
        let next = self.lex.next_token()?;
        Ok(std::mem::replace(&mut self.tok, next))
    }

    fn expected(&self, what: &str) -> Error {
        self.lex.error_at(
            self.tok.offset,
            format!(
                "in sharding {:?}: expected {what}, found {}",
                self.lex.source(),
                self.tok.describe()
            ),
        )
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> Result<()> {
        if self.tok.kind == kind {
            self.bump()?;
            Ok(())
        } else {
            Err(self.expected(what))
        }
    }

    fn eat(&mut self, kind: TokenKind) -> Result<bool> {
        let here = self.tok.kind == kind;
        if here {
            self.bump()?;
        }
        Ok(here)
    }

    fn word_is(&self, w: &str) -> bool {
        self.tok.kind == TokenKind::Word && self.tok.text == w
    }

    fn number(&mut self) -> Result<usize> {
        if self.tok.kind == TokenKind::Word {
            if let Ok(n) = self.tok.text.parse::<usize>() {
                self.bump()?;
                return Ok(n);
            }
        }
        Err(self.expected("a non-negative integer"))
    }

    /// `n, n, ...` up to (not including) a token that is not a number.
    fn numbers(&mut self) -> Result<Vec<usize>> {
        let mut out = vec![self.number()?];
        while self.eat(TokenKind::Comma)? {
            out.push(self.number()?);
        }
        Ok(out)
    }

    fn bracketed(&mut self) -> Result<Vec<usize>> {
        self.expect(TokenKind::LBracket, "'['")?;
        let v = self.numbers()?;
        self.expect(TokenKind::RBracket, "']'")?;
        Ok(v)
    }

    fn sharding(&mut self) -> Result<HloSharding> {
        self.expect(TokenKind::LBrace, "'{'")?;
        if self.tok.kind == TokenKind::LBrace || self.tok.kind == TokenKind::RBrace {
            // A tuple sharding (possibly of no elements).
            let mut parts = Vec::new();
            while self.tok.kind == TokenKind::LBrace {
                parts.push(self.sharding()?);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
            self.expect(TokenKind::RBrace, "'}' closing the tuple sharding")?;
            return Ok(HloSharding::Tuple(parts));
        }
        let at = self.tok.offset;
        let word = self.tok.text.clone();
        let sharding = match (self.tok.kind, word.as_str()) {
            (TokenKind::Word, "replicated") => {
                self.bump()?;
                HloSharding::Replicated
            }
            (TokenKind::Word, "manual") => {
                self.bump()?;
                HloSharding::Manual
            }
            (TokenKind::Word, "unknown") => {
                self.bump()?;
                HloSharding::Unknown
            }
            (TokenKind::Word, "maximal") => {
                self.bump()?;
                if !self.word_is("device") {
                    return Err(self.expected("'device'"));
                }
                self.bump()?;
                self.expect(TokenKind::Equals, "'='")?;
                HloSharding::Maximal {
                    device: self.number()?,
                }
            }
            (TokenKind::Word, "devices") => {
                self.bump()?;
                self.expect(TokenKind::Equals, "'='")?;
                let tiles = self.bracketed()?;
                let devices = if self.eat(TokenKind::LessEq)? {
                    let reshape = self.bracketed()?;
                    let perm = if self.word_is("T") {
                        self.bump()?;
                        self.expect(TokenKind::LParen, "'('")?;
                        let p = self.numbers()?;
                        self.expect(TokenKind::RParen, "')'")?;
                        Some(p)
                    } else {
                        None
                    };
                    DeviceList::Iota { reshape, perm }
                } else {
                    DeviceList::Listed(self.numbers()?)
                };
                let mut last_tile_dim_replicate = false;
                let mut last_tile_dims = Vec::new();
                if self.word_is("last_tile_dim_replicate") {
                    self.bump()?;
                    last_tile_dim_replicate = true;
                } else if self.word_is("last_tile_dims") {
                    self.bump()?;
                    self.expect(TokenKind::Equals, "'='")?;
                    self.expect(TokenKind::LBrace, "'{'")?;
                    loop {
                        let kind = match self.tok.text.as_str() {
                            "manual" => SubgroupKind::Manual,
                            "replicated" => SubgroupKind::Replicated,
                            _ => return Err(self.expected("'manual' or 'replicated'")),
                        };
                        self.bump()?;
                        last_tile_dims.push(kind);
                        if !self.eat(TokenKind::Comma)? {
                            break;
                        }
                    }
                    self.expect(TokenKind::RBrace, "'}'")?;
                }
                let s = HloSharding::Tiled {
                    tiles: tiles.clone(),
                    devices,
                    last_tile_dim_replicate,
                    last_tile_dims,
                };
                // Expanding checks the list's length and the permutation.
                if let HloSharding::Tiled { devices, .. } = &s {
                    devices
                        .ids(&tiles)
                        .map_err(|e| self.lex.error_at(at, e.message()))?;
                }
                s
            }
            _ => {
                return Err(Error::unimplemented(format!(
                    "sharding {:?}: the form {} is not understood (known: replicated, manual, \
                     unknown, maximal, devices=, tuples)",
                    self.lex.source(),
                    self.tok.describe()
                )))
            }
        };
        if self.word_is("metadata") {
            return Err(Error::unimplemented(format!(
                "sharding {:?}: metadata inside a sharding is not understood",
                self.lex.source()
            )));
        }
        self.expect(TokenKind::RBrace, "'}'")?;
        Ok(sharding)
    }
}

/// Each device's part of `global` under `sharding` (one literal per device of
/// `device_count`): its tile, padded with zeros to the full tile size where
/// the extent does not divide evenly, or the whole array where the sharding
/// replicates it.
pub fn split(
    global: &Literal,
    sharding: &HloSharding,
    device_count: usize,
) -> Result<Vec<Literal>> {
    let shape = global.array_shape()?;
    let Some(layout) = sharding.tile_layout(shape.rank(), device_count)? else {
        return match sharding {
            HloSharding::Tuple(_) => Err(Error::invalid_argument(format!(
                "a tuple sharding {sharding} for the array {shape}"
            ))),
            _ => Ok(vec![global.clone(); device_count]),
        };
    };
    let tile: Vec<usize> = shape
        .dims
        .iter()
        .zip(&layout.tiles)
        .map(|(&d, &t)| d.div_ceil(t.max(1)))
        .collect();
    let width = shape.element_type.byte_size();
    let src = global.bytes()?;
    layout
        .coords
        .iter()
        .enumerate()
        .map(|(device, coords)| {
            let coords = coords.as_ref().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "sharding {sharding} gives device {device} no tile"
                ))
            })?;
            let mut part = Literal::zeros(&Shape::Array(ArrayShape::new(
                shape.element_type,
                tile.clone(),
            )));
            let (origin, extent) = tile_region(&shape.dims, &tile, coords);
            copy_block(
                src,
                &shape.dims,
                &origin,
                part.bytes_mut()?,
                &tile,
                &vec![0; tile.len()],
                &extent,
                width,
            );
            Ok(part)
        })
        .collect()
}

/// The global array whose parts under `sharding` are `parts` (one per device,
/// in device order): the inverse of [`split`]. `global_dims` is the global
/// shape where the caller knows it (a tiled extent that does not divide
/// evenly); by default each dimension is its tile size times its tile count.
pub fn assemble(
    parts: &[Literal],
    sharding: &HloSharding,
    global_dims: Option<&[usize]>,
) -> Result<Literal> {
    let first = parts
        .first()
        .ok_or_else(|| Error::invalid_argument("no device results to assemble"))?;
    let shape = first.array_shape()?.clone();
    if let Some(other) = parts
        .iter()
        .find(|p| p.shape().without_layout() != first.shape().without_layout())
    {
        return Err(Error::invalid_argument(format!(
            "devices returned different shapes: {} and {}",
            first.shape(),
            other.shape()
        )));
    }
    let Some(layout) = sharding.tile_layout(shape.rank(), parts.len())? else {
        return match sharding {
            HloSharding::Maximal { device } => parts.get(*device).cloned().ok_or_else(|| {
                Error::invalid_argument(format!(
                    "sharding {sharding} names device {device} of {}",
                    parts.len()
                ))
            }),
            HloSharding::Tuple(_) => Err(Error::invalid_argument(format!(
                "a tuple sharding {sharding} for the array {shape}"
            ))),
            _ => Ok(first.clone()),
        };
    };
    let dims: Vec<usize> = match global_dims {
        Some(d) => d.to_vec(),
        None => shape
            .dims
            .iter()
            .zip(&layout.tiles)
            .map(|(&d, &t)| d * t)
            .collect(),
    };
    let fits = dims.len() == shape.rank()
        && dims
            .iter()
            .zip(&layout.tiles)
            .zip(&shape.dims)
            .all(|((&g, &t), &d)| g.div_ceil(t.max(1)) == d);
    if !fits {
        return Err(Error::invalid_argument(format!(
            "per-device results {shape} under {sharding} cannot make a global array of {dims:?}"
        )));
    }
    let mut out = Literal::zeros(&Shape::Array(ArrayShape::new(
        shape.element_type,
        dims.clone(),
    )));
    let width = shape.element_type.byte_size();
    let mut placed = std::collections::HashSet::new();
    for (device, coords) in layout.coords.iter().enumerate() {
        let Some(coords) = coords else { continue };
        // Devices of a replicated subgroup hold the same tile: the first counts.
        if !placed.insert(coords.clone()) {
            continue;
        }
        let (origin, extent) = tile_region(&dims, &shape.dims, coords);
        copy_block(
            parts[device].bytes()?,
            &shape.dims,
            &vec![0; dims.len()],
            out.bytes_mut()?,
            &dims,
            &origin,
            &extent,
            width,
        );
    }
    Ok(out)
}

/// The origin and extent, within a global array of `dims`, of the tile at
/// `coords` of tiles of size `tile` (the last tiles may be short or empty).
fn tile_region(dims: &[usize], tile: &[usize], coords: &[usize]) -> (Vec<usize>, Vec<usize>) {
    dims.iter()
        .zip(tile)
        .zip(coords)
        .map(|((&d, &t), &c)| {
            let start = (c * t).min(d);
            (start, (start + t).min(d) - start)
        })
        .unzip()
}

/// Copies the block of `extent` at `src_origin` of a row-major `src` array of
/// `src_dims` to `dst_origin` of a row-major `dst` of `dst_dims`; elements are
/// `width` bytes. The caller keeps both blocks inside their arrays.
#[allow(clippy::too_many_arguments)]
fn copy_block(
    src: &[u8],
    src_dims: &[usize],
    src_origin: &[usize],
    dst: &mut [u8],
    dst_dims: &[usize],
    dst_origin: &[usize],
    extent: &[usize],
    width: usize,
) {
    if extent.contains(&0) {
        return;
    }
    let rank = extent.len();
    let src_strides = crate::shape::row_major_strides(src_dims);
    let dst_strides = crate::shape::row_major_strides(dst_dims);
    // Rows along the last dimension are contiguous; walk the others.
    let (row, outer) = match rank {
        0 => (1, &[][..]),
        _ => (extent[rank - 1], &extent[..rank - 1]),
    };
    let mut index = vec![0usize; outer.len()];
    loop {
        let at = |origin: &[usize], strides: &[usize]| -> usize {
            (0..rank)
                .map(|d| (origin[d] + index.get(d).copied().unwrap_or(0)) * strides[d])
                .sum::<usize>()
                * width
        };
        let (s, t) = (at(src_origin, &src_strides), at(dst_origin, &dst_strides));
        dst[t..t + row * width].copy_from_slice(&src[s..s + row * width]);
        let mut d = outer.len();
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            index[d] += 1;
            if index[d] < outer[d] {
                break;
            }
            index[d] = 0;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(text: &str) -> HloSharding {
        let s = HloSharding::parse(text).unwrap_or_else(|e| panic!("{text}: {e}"));
        assert_eq!(s.to_string(), text);
        s
    }

    #[test]
    fn forms_round_trip() {
        round_trip("{replicated}");
        round_trip("{manual}");
        round_trip("{maximal device=3}");
        round_trip("{devices=[4,1]<=[4]}");
        round_trip("{devices=[2,2]<=[2,2]T(1,0)}");
        round_trip("{devices=[2,1,2]<=[4] last_tile_dim_replicate}");
        round_trip("{devices=[2,1,2]<=[2,2]T(1,0) last_tile_dims={manual}}");
        round_trip("{devices=[1,2,2]<=[4] last_tile_dims={manual, replicated}}");
        round_trip("{devices=[2,2]0,2,1,3}");
        round_trip("{{replicated}, {devices=[4]<=[4]}}");
    }

    #[test]
    fn transposed_tiles_place_devices() {
        // iota(4) as [2,2], transposed: [[0,2],[1,3]].
        let s = HloSharding::parse("{devices=[2,2]<=[2,2]T(1,0)}").unwrap();
        let layout = s.tile_layout(2, 4).unwrap().unwrap();
        assert_eq!(layout.coords[2], Some(vec![0, 1]));
        assert_eq!(layout.coords[1], Some(vec![1, 0]));
        // A replicated subgroup: devices 0 and 1 hold the same tile.
        let s = HloSharding::parse("{devices=[2,1,2]<=[4] last_tile_dim_replicate}").unwrap();
        let layout = s.tile_layout(2, 4).unwrap().unwrap();
        assert_eq!(layout.coords[0], layout.coords[1]);
        assert_eq!(layout.coords[3], Some(vec![1, 0]));
    }

    #[test]
    fn split_and_assemble_are_inverse() {
        let values: Vec<f32> = (0..30).map(|i| i as f32).collect();
        let global = Literal::from_slice(&[5, 6], &values).unwrap();
        for text in [
            "{devices=[2,2]<=[2,2]T(1,0)}",
            "{devices=[2,1,2]<=[4] last_tile_dim_replicate}",
            "{devices=[1,3]<=[3]}",
            "{replicated}",
        ] {
            let s = HloSharding::parse(text).unwrap();
            let n = if text.contains("3]") { 3 } else { 4 };
            let parts = split(&global, &s, n).unwrap();
            let back = assemble(&parts, &s, Some(&[5, 6])).unwrap();
            assert_eq!(back, global, "{text}");
        }
        // Uneven: 5 rows in 2 tiles of 3, the second padded with zeros.
        let s = HloSharding::parse("{devices=[2,1]<=[2]}").unwrap();
        let parts = split(&global, &s, 2).unwrap();
        assert_eq!(parts[1].dims(), &[3, 6]);
        assert_eq!(parts[1].data::<f32>().unwrap()[..6], values[18..24]);
        assert_eq!(parts[1].data::<f32>().unwrap()[12..], [0.0; 6]);
    }

    #[test]
    fn bad_shardings_are_errors() {
        for bad in [
            "{devices=[2,2]<=[3]}",
            "{devices=[2,2]0,1,2}",
            "{devices=[2]<=[2]T(0,0)}",
            "{maximal}",
            "{replicated",
            "{shard_as 1}",
        ] {
            assert!(HloSharding::parse(bad).is_err(), "{bad}");
        }
        let s = HloSharding::parse("{devices=[4]<=[4]}").unwrap();
        assert!(s.tile_layout(2, 4).is_err(), "rank mismatch");
        assert!(s.tile_layout(1, 2).is_err(), "device out of range");
    }
}
