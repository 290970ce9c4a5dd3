//! Attributes of a typed custom call, decoded from `backend_config`.
//!
//! XLA's typed FFI reads `backend_config` as an MLIR dictionary attribute:
//! `{n = 42 : i32, name = "x", scale = 5.000000e-01 : f32, flag = true}`. This
//! module parses that syntax without MLIR: integers (decimal or `0x` hex, with an
//! optional `: iN`, `: siN`, `: uiN` or `: index` type; untyped ones are `i64`),
//! floats (decimal with an optional exponent, `inf`/`nan` spellings MLIR prints
//! as hex bit patterns `0x7FC00000 : f32`, an optional `: f16|bf16|f32|f64`;
//! untyped ones are `f64`), `true` / `false`, strings with MLIR's escapes,
//! arrays `[a, b]`, dense arrays `array<i32: 1, 2, 3>`, nested dictionaries, and
//! unit attributes (a bare name).
//!
//! Handlers read values through [`Attributes::get`], which converts to the Rust
//! type asked for: integers to any integer type they fit in, floats to `f32` or
//! `f64`, `i1` integers and `true`/`false` to `bool`. A missing attribute, a
//! value of the wrong kind or one out of range is an error naming the attribute.

use crate::error::{Error, Result};
use std::fmt;

/// One attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// A name without `= value` (MLIR's unit attribute).
    Unit,
    Bool(bool),
    /// An integer and its MLIR type name (`i32`, `ui8`, `index`, ...).
    Int {
        value: i128,
        ty: String,
    },
    /// A float and its MLIR type name (`f32`, `f64`, ...).
    Float {
        value: f64,
        ty: String,
    },
    Str(String),
    /// `[a, b, ...]`.
    Array(Vec<AttrValue>),
    /// `array<ty: a, b, ...>`: every element is an `Int`, `Float` or `Bool` of `ty`.
    DenseArray {
        ty: String,
        values: Vec<AttrValue>,
    },
    Dict(Attributes),
}

impl AttrValue {
    /// What kind of value this is, for error messages.
    pub fn kind(&self) -> String {
        match self {
            AttrValue::Unit => "a unit attribute".into(),
            AttrValue::Bool(_) => "a bool".into(),
            AttrValue::Int { ty, .. } => format!("an integer ({ty})"),
            AttrValue::Float { ty, .. } => format!("a float ({ty})"),
            AttrValue::Str(_) => "a string".into(),
            AttrValue::Array(_) => "an array".into(),
            AttrValue::DenseArray { ty, .. } => format!("a dense array of {ty}"),
            AttrValue::Dict(_) => "a dictionary".into(),
        }
    }
}

/// A dictionary of attributes, in the order written.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Attributes {
    entries: Vec<(String, AttrValue)>,
}

impl Attributes {
    /// Parses a dictionary. Empty text (or only whitespace) is an empty dictionary.
    pub fn parse(text: &str) -> Result<Attributes> {
        if text.trim().is_empty() {
            return Ok(Attributes::default());
        }
        let mut p = Parser { text, pos: 0 };
        p.skip_ws();
        if p.peek() != Some(b'{') {
            return Err(p.error("an attribute dictionary starts with '{'"));
        }
        let dict = p.dict()?;
        p.skip_ws();
        if p.pos != text.len() {
            return Err(p.error("unexpected text after the dictionary"));
        }
        Ok(dict)
    }

    pub fn len(&self) -> usize {
        self.entries.len()
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries, in the order written.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &AttrValue)> {
        self.entries.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The raw value of `name`.
    pub fn value(&self, name: &str) -> Option<&AttrValue> {
        self.entries.iter().find(|(k, _)| k == name).map(|(_, v)| v)
    }

    /// The value of `name` converted to `T`; an error if it is missing or does not
    /// convert.
    pub fn get<T: FromAttr>(&self, name: &str) -> Result<T> {
        match self.value(name) {
            Some(v) => T::from_attr(v).map_err(|why| {
                Error::invalid_argument(format!("custom-call attribute `{name}`: {why}"))
            }),
            None => Err(Error::invalid_argument(format!(
                "custom-call attribute `{name}` is missing; attributes given: {}",
                self.names()
            ))),
        }
    }

    /// Like [`Attributes::get`], but a missing attribute is `None`.
    pub fn get_opt<T: FromAttr>(&self, name: &str) -> Result<Option<T>> {
        if self.value(name).is_none() {
            return Ok(None);
        }
        self.get(name).map(Some)
    }

    /// Whether `name` is present (a unit attribute is a flag that is set by
    /// being present).
    pub fn has(&self, name: &str) -> bool {
        self.value(name).is_some()
    }

    fn names(&self) -> String {
        if self.entries.is_empty() {
            return "none".into();
        }
        self.entries
            .iter()
            .map(|(k, _)| k.as_str())
            .collect::<Vec<_>>()
            .join(", ")
    }
}

impl fmt::Display for Attributes {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("{")?;
        for (i, (k, v)) in self.entries.iter().enumerate() {
            if i > 0 {
                f.write_str(", ")?;
            }
            let bare = k.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
                && k.chars()
                    .all(|c| c.is_ascii_alphanumeric() || "_$.-".contains(c));
            if bare {
                write!(f, "{k}")?;
            } else {
                write!(f, "{}", AttrValue::Str(k.clone()))?;
            }
            if *v != AttrValue::Unit {
                write!(f, " = {v}")?;
            }
        }
        f.write_str("}")
    }
}

impl fmt::Display for AttrValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AttrValue::Unit => f.write_str("unit"),
            AttrValue::Bool(b) => write!(f, "{b}"),
            AttrValue::Int { value, ty } => write!(f, "{value} : {ty}"),
            AttrValue::Float { value, ty } => write!(f, "{} : {ty}", float_text(*value, ty)),
            AttrValue::Str(s) => {
                f.write_str("\"")?;
                for &b in s.as_bytes() {
                    match b {
                        b'"' => f.write_str("\\\"")?,
                        b'\\' => f.write_str("\\\\")?,
                        b' '..=b'~' => write!(f, "{}", b as char)?,
                        _ => write!(f, "\\{b:02X}")?,
                    }
                }
                f.write_str("\"")
            }
            AttrValue::Array(items) => {
                f.write_str("[")?;
                for (i, v) in items.iter().enumerate() {
                    if i > 0 {
                        f.write_str(", ")?;
                    }
                    write!(f, "{v}")?;
                }
                f.write_str("]")
            }
            AttrValue::DenseArray { ty, values } => {
                write!(f, "array<{ty}")?;
                for (i, v) in values.iter().enumerate() {
                    f.write_str(if i == 0 { ": " } else { ", " })?;
                    match v {
                        AttrValue::Int { value, .. } => write!(f, "{value}")?,
                        AttrValue::Float { value, .. } => write!(f, "{}", float_text(*value, ty))?,
                        other => write!(f, "{other}")?,
                    }
                }
                f.write_str(">")
            }
            AttrValue::Dict(d) => write!(f, "{d}"),
        }
    }
}

/// A float as MLIR spells it: decimal when finite, else its bit pattern in hex.
fn float_text(value: f64, ty: &str) -> String {
    if value.is_finite() {
        return format!("{value:e}");
    }
    match ty {
        "f32" => format!("0x{:08X}", (value as f32).to_bits()),
        "f16" => format!("0x{:04X}", half::f16::from_f64(value).to_bits()),
        "bf16" => format!("0x{:04X}", half::bf16::from_f64(value).to_bits()),
        _ => format!("0x{:016X}", value.to_bits()),
    }
}

/// A Rust type an attribute value converts to.
pub trait FromAttr: Sized {
    /// Converts, or says why not (the caller adds the attribute's name).
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String>;
}

macro_rules! int_from_attr {
    ($($t:ty),*) => {$(
        impl FromAttr for $t {
            fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
                match value {
                    AttrValue::Int { value: v, ty } => <$t>::try_from(*v).map_err(|_| {
                        format!("{v} : {ty} does not fit in {}", stringify!($t))
                    }),
                    other => Err(format!("expected an integer for {}, got {}", stringify!($t), other.kind())),
                }
            }
        }
    )*};
}
int_from_attr!(i8, i16, i32, i64, u8, u16, u32, u64, usize, isize);

impl FromAttr for f64 {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        match value {
            AttrValue::Float { value, .. } => Ok(*value),
            other => Err(format!("expected a float, got {}", other.kind())),
        }
    }
}

impl FromAttr for f32 {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        f64::from_attr(value).map(|v| v as f32)
    }
}

impl FromAttr for bool {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        match value {
            AttrValue::Bool(b) => Ok(*b),
            AttrValue::Int { value, ty } if ty == "i1" => Ok(*value != 0),
            other => Err(format!("expected a bool, got {}", other.kind())),
        }
    }
}

impl FromAttr for String {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        match value {
            AttrValue::Str(s) => Ok(s.clone()),
            other => Err(format!("expected a string, got {}", other.kind())),
        }
    }
}

impl<T: FromAttr> FromAttr for Vec<T> {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        let items = match value {
            AttrValue::Array(items) => items,
            AttrValue::DenseArray { values, .. } => values,
            other => return Err(format!("expected an array, got {}", other.kind())),
        };
        items
            .iter()
            .enumerate()
            .map(|(i, v)| T::from_attr(v).map_err(|why| format!("element {i}: {why}")))
            .collect()
    }
}

impl FromAttr for Attributes {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        match value {
            AttrValue::Dict(d) => Ok(d.clone()),
            other => Err(format!("expected a dictionary, got {}", other.kind())),
        }
    }
}

impl FromAttr for AttrValue {
    fn from_attr(value: &AttrValue) -> std::result::Result<Self, String> {
        Ok(value.clone())
    }
}

/// Recursive-descent parser over the dictionary text.
struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

const MAX_DEPTH: usize = 64;

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn rest(&self) -> &str {
        self.text.get(self.pos..).unwrap_or("")
    }

    fn error(&self, what: &str) -> Error {
        let near: String = self.rest().chars().take(24).collect();
        Error::invalid_argument(format!(
            "custom-call attributes: {what} at byte {} (near `{near}`) in `{}`",
            self.pos, self.text
        ))
    }

    fn skip_ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\n' | b'\r')) {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, c: u8) -> Result<()> {
        if self.eat(c) {
            Ok(())
        } else {
            Err(self.error(&format!("expected '{}'", c as char)))
        }
    }

    /// A bare identifier: letters, digits, `_`, `$`, `.`, `-` (MLIR's
    /// `bare-id`), not starting with a digit.
    fn ident(&mut self) -> Option<&str> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        match bytes.get(start) {
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {}
            _ => return None,
        }
        let mut end = start;
        while bytes
            .get(end)
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.' | b'-'))
        {
            end += 1;
        }
        self.pos = end;
        self.text.get(start..end)
    }

    fn dict_at(&mut self, depth: usize) -> Result<Attributes> {
        if depth > MAX_DEPTH {
            return Err(self.error("attributes nested too deeply"));
        }
        self.expect(b'{')?;
        let mut entries: Vec<(String, AttrValue)> = Vec::new();
        if self.eat(b'}') {
            return Ok(Attributes { entries });
        }
        loop {
            self.skip_ws();
            let name = if self.peek() == Some(b'"') {
                self.string()?
            } else {
                match self.ident() {
                    Some(n) => n.to_string(),
                    None => return Err(self.error("expected an attribute name")),
                }
            };
            if entries.iter().any(|(k, _)| *k == name) {
                return Err(self.error(&format!("attribute `{name}` given twice")));
            }
            let value = if self.eat(b'=') {
                self.value(depth + 1)?
            } else {
                AttrValue::Unit
            };
            entries.push((name, value));
            if self.eat(b',') {
                continue;
            }
            self.expect(b'}')?;
            return Ok(Attributes { entries });
        }
    }

    fn dict(&mut self) -> Result<Attributes> {
        self.dict_at(0)
    }

    fn value(&mut self, depth: usize) -> Result<AttrValue> {
        if depth > MAX_DEPTH {
            return Err(self.error("attributes nested too deeply"));
        }
        self.skip_ws();
        match self.peek() {
            Some(b'{') => Ok(AttrValue::Dict(self.dict_at(depth)?)),
            Some(b'"') => Ok(AttrValue::Str(self.string()?)),
            Some(b'[') => {
                self.pos += 1;
                let mut items = Vec::new();
                if self.eat(b']') {
                    return Ok(AttrValue::Array(items));
                }
                loop {
                    items.push(self.value(depth + 1)?);
                    if self.eat(b',') {
                        continue;
                    }
                    self.expect(b']')?;
                    return Ok(AttrValue::Array(items));
                }
            }
            Some(c) if c == b'-' || c.is_ascii_digit() => self.number(None),
            Some(_) => {
                let save = self.pos;
                match self.ident() {
                    Some("true") => Ok(AttrValue::Bool(true)),
                    Some("false") => Ok(AttrValue::Bool(false)),
                    Some("unit") => Ok(AttrValue::Unit),
                    Some("array") => self.dense_array(),
                    _ => {
                        self.pos = save;
                        Err(self.error("expected an attribute value"))
                    }
                }
            }
            None => Err(self.error("expected an attribute value, found the end")),
        }
    }

    /// `array<ty>` or `array<ty: v, v, ...>`, after the word `array`.
    fn dense_array(&mut self) -> Result<AttrValue> {
        self.expect(b'<')?;
        let ty = match self.ident() {
            Some(t) => t.to_string(),
            None => return Err(self.error("expected an element type in array<...>")),
        };
        check_type(&ty).map_err(|why| self.error(&why))?;
        let mut values = Vec::new();
        if self.eat(b':') {
            loop {
                self.skip_ws();
                let v = if ty == "i1" {
                    match self.ident() {
                        Some("true") => AttrValue::Bool(true),
                        Some("false") => AttrValue::Bool(false),
                        _ => return Err(self.error("expected true or false in array<i1: ...>")),
                    }
                } else {
                    self.number(Some(&ty))?
                };
                values.push(v);
                if !self.eat(b',') {
                    break;
                }
            }
        }
        self.expect(b'>')?;
        Ok(AttrValue::DenseArray { ty, values })
    }

    /// A number, typed by `: ty` after it or by `given` (inside dense arrays).
    fn number(&mut self, given: Option<&str>) -> Result<AttrValue> {
        self.skip_ws();
        let start = self.pos;
        let bytes = self.text.as_bytes();
        let mut end = start;
        if bytes.get(end) == Some(&b'-') {
            end += 1;
        }
        let hex = bytes.get(end) == Some(&b'0') && matches!(bytes.get(end + 1), Some(b'x' | b'X'));
        if hex {
            end += 2;
            while bytes.get(end).is_some_and(|c| c.is_ascii_hexdigit()) {
                end += 1;
            }
        } else {
            while let Some(&c) = bytes.get(end) {
                let sign_after_exp =
                    matches!(c, b'+' | b'-') && matches!(bytes.get(end - 1), Some(b'e' | b'E'));
                if c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'E') || sign_after_exp {
                    end += 1;
                } else {
                    break;
                }
            }
        }
        let literal = self.text.get(start..end).unwrap_or("");
        self.pos = end;
        let ty = match given {
            Some(t) => t.to_string(),
            None => {
                let save = self.pos;
                if self.eat(b':') {
                    match self.ident() {
                        Some(t) => t.to_string(),
                        None => return Err(self.error("expected a type after ':'")),
                    }
                } else {
                    self.pos = save;
                    let is_float = !hex && literal.contains(['.', 'e', 'E']);
                    if is_float { "f64" } else { "i64" }.to_string()
                }
            }
        };
        check_type(&ty).map_err(|why| self.error(&why))?;
        let bad = |p: &Self| p.error(&format!("`{literal}` is not a valid {ty} literal"));
        let (negative, digits) = match literal.strip_prefix('-') {
            Some(d) => (true, d),
            None => (false, literal),
        };
        if is_float_type(&ty) {
            let value = if hex {
                let bits = u64::from_str_radix(&digits[2..], 16).map_err(|_| bad(self))?;
                let v = float_from_bits(&ty, bits).ok_or_else(|| bad(self))?;
                if negative {
                    -v
                } else {
                    v
                }
            } else {
                literal.parse::<f64>().map_err(|_| bad(self))?
            };
            return Ok(AttrValue::Float { value, ty });
        }
        let magnitude: i128 = if hex {
            i128::from_str_radix(&digits[2..], 16).map_err(|_| bad(self))?
        } else {
            digits.parse::<i128>().map_err(|_| bad(self))?
        };
        let value = if negative { -magnitude } else { magnitude };
        let (lo, hi) = int_range(&ty);
        // MLIR accepts a signless literal by its bit pattern as well as its value.
        let value = if value > hi && ty.starts_with('i') && value <= (hi - lo) {
            value - (hi - lo) - 1
        } else {
            value
        };
        if value < lo || value > hi {
            return Err(self.error(&format!("{literal} is out of range for {ty}")));
        }
        if ty == "i1" {
            return Ok(AttrValue::Bool(value != 0));
        }
        Ok(AttrValue::Int { value, ty })
    }

    /// A double-quoted string with MLIR's escapes: `\"`, `\\`, `\n`, `\t`, and
    /// `\XX` (two hex digits, one byte).
    fn string(&mut self) -> Result<String> {
        self.expect(b'"')?;
        let mut out: Vec<u8> = Vec::new();
        let bytes = self.text.as_bytes();
        loop {
            match bytes.get(self.pos) {
                None => return Err(self.error("unterminated string")),
                Some(b'"') => {
                    self.pos += 1;
                    break;
                }
                Some(b'\\') => {
                    let esc = bytes.get(self.pos + 1).copied();
                    match esc {
                        Some(b'"') | Some(b'\\') => {
                            out.push(esc.unwrap_or(b'\\'));
                            self.pos += 2;
                        }
                        Some(b'n') => {
                            out.push(b'\n');
                            self.pos += 2;
                        }
                        Some(b't') => {
                            out.push(b'\t');
                            self.pos += 2;
                        }
                        _ => {
                            let hex = self.text.get(self.pos + 1..self.pos + 3).unwrap_or("");
                            match u8::from_str_radix(hex, 16) {
                                Ok(b) if hex.len() == 2 => {
                                    out.push(b);
                                    self.pos += 3;
                                }
                                _ => return Err(self.error("unknown escape in string")),
                            }
                        }
                    }
                }
                Some(&c) => {
                    out.push(c);
                    self.pos += 1;
                }
            }
        }
        String::from_utf8(out).map_err(|_| self.error("string is not UTF-8"))
    }
}

fn is_float_type(ty: &str) -> bool {
    matches!(ty, "f16" | "bf16" | "f32" | "f64")
}

fn check_type(ty: &str) -> std::result::Result<(), String> {
    if is_float_type(ty) || ty == "index" || int_bits(ty).is_some() {
        Ok(())
    } else {
        Err(format!("unsupported attribute type `{ty}`"))
    }
}

/// Width and signedness of `iN` (signless), `siN`, `uiN`.
fn int_bits(ty: &str) -> Option<(u32, bool)> {
    let (digits, unsigned) = if let Some(d) = ty.strip_prefix("ui") {
        (d, true)
    } else if let Some(d) = ty.strip_prefix("si") {
        (d, false)
    } else {
        (ty.strip_prefix('i')?, false)
    };
    let bits: u32 = digits.parse().ok()?;
    matches!(bits, 1 | 8 | 16 | 32 | 64).then_some((bits, unsigned))
}

/// The values an integer type holds.
fn int_range(ty: &str) -> (i128, i128) {
    match int_bits(ty) {
        Some((1, _)) => (0, 1),
        Some((bits, true)) => (0, (1i128 << bits) - 1),
        Some((bits, false)) => (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1),
        None => (i64::MIN as i128, i64::MAX as i128), // index
    }
}

fn float_from_bits(ty: &str, bits: u64) -> Option<f64> {
    match ty {
        "f64" => Some(f64::from_bits(bits)),
        "f32" => Some(f32::from_bits(u32::try_from(bits).ok()?) as f64),
        "f16" => Some(half::f16::from_bits(u16::try_from(bits).ok()?).to_f64()),
        "bf16" => Some(half::bf16::from_bits(u16::try_from(bits).ok()?).to_f64()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_the_ffi_dictionary_syntax() {
        let a = Attributes::parse(
            r#"{n = 42 : i32, name = "x\22y\n", scale = 5.000000e-01 : f32, flag = true,
                neg = -7, big = 18446744073709551615 : ui64, sizes = array<i64: 1, 2, 3>,
                list = [1 : i32, "two"], inner = {k = 0x10 : i8}, nan = 0x7FC00000 : f32, on}"#,
        )
        .unwrap();
        assert_eq!(a.get::<i32>("n").unwrap(), 42);
        assert_eq!(a.get::<String>("name").unwrap(), "x\"y\n");
        assert_eq!(a.get::<f32>("scale").unwrap(), 0.5);
        assert!(a.get::<bool>("flag").unwrap());
        assert_eq!(a.get::<i64>("neg").unwrap(), -7);
        assert_eq!(a.get::<u64>("big").unwrap(), u64::MAX);
        assert_eq!(a.get::<Vec<i64>>("sizes").unwrap(), vec![1, 2, 3]);
        assert_eq!(
            a.get::<Attributes>("inner")
                .unwrap()
                .get::<i8>("k")
                .unwrap(),
            16
        );
        assert!(a.get::<f32>("nan").unwrap().is_nan());
        assert!(a.has("on"));
        assert_eq!(a.get_opt::<i32>("absent").unwrap(), None);
        // The printed form reads back to the same dictionary (compared as text,
        // since NaN is not equal to itself).
        let printed = a.to_string();
        assert_eq!(Attributes::parse(&printed).unwrap().to_string(), printed);
    }

    #[test]
    fn errors_name_the_attribute() {
        let a = Attributes::parse("{n = 300 : i32, s = \"x\"}").unwrap();
        let e = a.get::<i8>("n").unwrap_err();
        assert!(
            e.message().contains("`n`") && e.message().contains("i8"),
            "{e}"
        );
        let e = a.get::<i32>("s").unwrap_err();
        assert!(e.message().contains("string"), "{e}");
        let e = a.get::<i32>("m").unwrap_err();
        assert!(
            e.message().contains("missing") && e.message().contains("n, s"),
            "{e}"
        );
        for bad in [
            "n = 1",
            "{n = }",
            "{n = 1",
            "{n = 1 : i9}",
            "{n = 300 : i8}",
            "{a = 1, a = 2}",
            "{s = \"x}",
        ] {
            assert!(Attributes::parse(bad).is_err(), "{bad} should not parse");
        }
        assert!(Attributes::parse("").unwrap().is_empty());
        assert!(Attributes::parse(" {} ").unwrap().is_empty());
    }
}
