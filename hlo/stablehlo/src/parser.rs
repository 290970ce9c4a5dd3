//! The text parser: MLIR's syntax, as far as StableHLO modules use it.
//!
//! A hand-written recursive descent over the characters, because MLIR's
//! syntax is context dependent (`4x6xf32` is three tokens inside `tensor<>`,
//! an op's pretty form is its own small grammar). Two passes: the first
//! collects the location aliases (`#loc3 = loc(...)`, printed after the
//! module) by skipping over the module's braces, the second parses the module
//! with them at hand. Every error names the `line:column` it stopped at; no
//! input makes it panic or recurse without bound (regions and nested
//! attributes go through [`hlo_ir::stack::deep`]).

use std::collections::HashMap;

use hlo_ir::{Error, Result};

use crate::syntax::*;

/// Parses StableHLO text into its syntax tree.
pub fn parse(text: &str) -> Result<Module> {
    let aliases = collect_aliases(text)?;
    let mut p = Parser::new(text, &aliases);
    p.module()
}

/// `#name = loc(...)` definitions at the top level, unresolved.
fn collect_aliases(text: &str) -> Result<HashMap<String, LocExpr>> {
    let empty = HashMap::new();
    let mut p = Parser::new(text, &empty);
    let mut out = HashMap::new();
    loop {
        p.ws();
        if p.at_end() {
            break;
        }
        if p.peek() == Some(b'#') {
            let name = p.hash_name()?;
            p.ws();
            p.expect("=")?;
            p.ws();
            if p.looking_at("loc(") {
                let loc = p.loc_expr_paren()?;
                out.insert(name, loc);
            } else {
                // An attribute alias: skip its value.
                p.skip_balanced_line();
            }
        } else if p.peek() == Some(b'!') {
            p.skip_balanced_line();
        } else {
            // `module ... { ... }` or a bare function: skip to the end of its
            // body. Malformed text ends the collection; the main pass reports
            // where it goes wrong.
            if p.skip_to_matching_top_brace().is_err() {
                break;
            }
            p.ws();
            if p.looking_at("loc(") {
                p.loc_expr_paren()?;
            }
        }
    }
    Ok(out)
}

/// A location as written, before aliases are resolved.
#[derive(Clone, Debug)]
pub(crate) enum LocExpr {
    Unknown,
    File(String, i64, i64),
    Name(String, Option<Box<LocExpr>>),
    CallSite(Box<LocExpr>, Box<LocExpr>),
    Fused(Vec<LocExpr>),
    Alias(String),
}

pub(crate) struct Parser<'a> {
    s: &'a [u8],
    i: usize,
    aliases: &'a HashMap<String, LocExpr>,
    /// How deeply the values being read nest (attributes in attributes,
    /// regions in regions, types in types).
    depth: usize,
    /// Where each line starts, for positions in a time logarithmic in the
    /// text's length (every operation records its own).
    line_starts: Vec<usize>,
}

const MAX_ALIAS_DEPTH: usize = 64;

/// Nesting deeper than this is refused: no program needs it, and a tree that
/// deep would cost its own recursion to walk and to drop.
const MAX_NESTING: usize = 1000;

impl<'a> Parser<'a> {
    fn new(text: &'a str, aliases: &'a HashMap<String, LocExpr>) -> Self {
        let line_starts = std::iter::once(0)
            .chain(
                text.bytes()
                    .enumerate()
                    .filter(|&(_, c)| c == b'\n')
                    .map(|(i, _)| i + 1),
            )
            .collect();
        Parser {
            s: text.as_bytes(),
            i: 0,
            aliases,
            depth: 0,
            line_starts,
        }
    }

    /// Runs `f` one nesting level deeper, refusing past [`MAX_NESTING`].
    fn nested<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        if self.depth >= MAX_NESTING {
            return Err(self.err(format!("nesting deeper than {MAX_NESTING} levels")));
        }
        self.depth += 1;
        let r = hlo_ir::stack::deep(|| f(self));
        self.depth -= 1;
        r
    }

    // ------------------------------------------------------------ characters

    fn pos_of(&self, i: usize) -> Pos {
        let i = i.min(self.s.len());
        let line = self.line_starts.partition_point(|&start| start <= i);
        let start = self.line_starts[line.saturating_sub(1)];
        Pos {
            line: line as u32,
            col: (i - start) as u32 + 1,
        }
    }

    fn pos(&self) -> Pos {
        self.pos_of(self.i)
    }

    pub(crate) fn err(&self, msg: impl std::fmt::Display) -> Error {
        Error::invalid_argument(format!("{}: {msg}", self.pos()))
    }

    fn at_end(&self) -> bool {
        self.i >= self.s.len()
    }

    pub(crate) fn peek(&self) -> Option<u8> {
        self.s.get(self.i).copied()
    }

    fn peek_at(&self, k: usize) -> Option<u8> {
        self.s.get(self.i + k).copied()
    }

    pub(crate) fn looking_at(&self, lit: &str) -> bool {
        self.s[self.i.min(self.s.len())..].starts_with(lit.as_bytes())
    }

    /// Where the cursor is, to come back to with [`reset`](Self::reset).
    pub(crate) fn mark(&self) -> usize {
        self.i
    }

    pub(crate) fn reset(&mut self, mark: usize) {
        self.i = mark;
    }

    /// Whitespace and `//` comments.
    pub(crate) fn ws(&mut self) {
        while let Some(c) = self.peek() {
            if c.is_ascii_whitespace() {
                self.i += 1;
            } else if c == b'/' && self.peek_at(1) == Some(b'/') {
                while let Some(c) = self.peek() {
                    if c == b'\n' {
                        break;
                    }
                    self.i += 1;
                }
            } else {
                break;
            }
        }
    }

    pub(crate) fn eat(&mut self, lit: &str) -> bool {
        self.ws();
        if self.looking_at(lit) {
            self.i += lit.len();
            true
        } else {
            false
        }
    }

    pub(crate) fn expect(&mut self, lit: &str) -> Result<()> {
        if self.eat(lit) {
            Ok(())
        } else {
            Err(self.err(format!("expected '{lit}', found {}", self.found())))
        }
    }

    /// What stands at the cursor, for messages.
    pub(crate) fn found(&self) -> String {
        if self.at_end() {
            return "the end of the text".into();
        }
        let rest = &self.s[self.i..];
        let end = rest
            .iter()
            .position(|&c| c.is_ascii_whitespace())
            .unwrap_or(rest.len())
            .clamp(1, 24);
        format!("'{}'", String::from_utf8_lossy(&rest[..end]))
    }

    fn is_ident_char(c: u8) -> bool {
        c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'.')
    }

    /// A bare identifier (`stablehlo.add`, `f32`, `dims`).
    pub(crate) fn ident(&mut self) -> Result<String> {
        self.ws();
        let start = self.i;
        match self.peek() {
            Some(c) if c.is_ascii_alphabetic() || c == b'_' => {}
            _ => return Err(self.err(format!("expected a name, found {}", self.found()))),
        }
        while let Some(c) = self.peek() {
            if Self::is_ident_char(c) {
                self.i += 1;
            } else {
                break;
            }
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    pub(crate) fn peek_ident(&mut self) -> Option<String> {
        let save = self.i;
        let r = self.ident().ok();
        self.i = save;
        r
    }

    /// `%name` (with `-` allowed inside, as MLIR's suffix-id).
    pub(crate) fn value_name(&mut self) -> Result<String> {
        self.ws();
        if self.peek() != Some(b'%') {
            return Err(self.err(format!("expected a value (%name), found {}", self.found())));
        }
        let start = self.i;
        self.i += 1;
        while let Some(c) = self.peek() {
            if Self::is_ident_char(c) || c == b'-' {
                self.i += 1;
            } else {
                break;
            }
        }
        if self.i == start + 1 {
            return Err(self.err("expected a value name after '%'"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// `%name` or `%name#index`.
    pub(crate) fn value_ref(&mut self) -> Result<ValueRef> {
        self.ws();
        let pos = self.pos();
        let name = self.value_name()?;
        let mut index = 0;
        if self.peek() == Some(b'#') && self.peek_at(1).is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
            index = self.usize_lit()?;
        }
        Ok(ValueRef { name, index, pos })
    }

    fn hash_name(&mut self) -> Result<String> {
        self.ws();
        if self.peek() != Some(b'#') {
            return Err(self.err(format!("expected '#', found {}", self.found())));
        }
        self.i += 1;
        let start = self.i;
        while let Some(c) = self.peek() {
            if Self::is_ident_char(c) {
                self.i += 1;
            } else {
                break;
            }
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    pub(crate) fn symbol(&mut self) -> Result<String> {
        self.ws();
        if self.peek() != Some(b'@') {
            return Err(self.err(format!("expected a symbol (@name), found {}", self.found())));
        }
        self.i += 1;
        if self.peek() == Some(b'"') {
            return self.string();
        }
        let start = self.i;
        while let Some(c) = self.peek() {
            if Self::is_ident_char(c) || c == b'-' {
                self.i += 1;
            } else {
                break;
            }
        }
        if start == self.i {
            return Err(self.err("expected a symbol name after '@'"));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// A quoted string with MLIR's escapes (`\"`, `\\`, `\n`, `\t`, `\XX`).
    pub(crate) fn string(&mut self) -> Result<String> {
        self.ws();
        if self.peek() != Some(b'"') {
            return Err(self.err(format!("expected a string, found {}", self.found())));
        }
        let start = self.pos();
        self.i += 1;
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(Error::invalid_argument(format!(
                    "{start}: unterminated string"
                )));
            };
            self.i += 1;
            match c {
                b'"' => break,
                b'\\' => {
                    let Some(e) = self.peek() else {
                        return Err(Error::invalid_argument(format!(
                            "{start}: unterminated string"
                        )));
                    };
                    self.i += 1;
                    match e {
                        b'"' | b'\\' => out.push(e),
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        h if h.is_ascii_hexdigit() => {
                            let Some(l) = self.peek().filter(|c| c.is_ascii_hexdigit()) else {
                                return Err(self.err("bad escape in string"));
                            };
                            self.i += 1;
                            let v = (hex_val(h) << 4) | hex_val(l);
                            out.push(v);
                        }
                        _ => return Err(self.err("bad escape in string")),
                    }
                }
                _ => out.push(c),
            }
        }
        Ok(String::from_utf8_lossy(&out).into_owned())
    }

    fn usize_lit(&mut self) -> Result<usize> {
        self.ws();
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        std::str::from_utf8(&self.s[start..self.i])
            .ok()
            .and_then(|t| t.parse().ok())
            .ok_or_else(|| {
                self.i = start;
                self.err(format!(
                    "expected a non-negative integer, found {}",
                    self.found()
                ))
            })
    }

    pub(crate) fn i64_lit(&mut self) -> Result<i64> {
        self.ws();
        let neg = self.eat("-");
        let v = i64::try_from(self.usize_lit()?).map_err(|_| self.err("integer out of range"))?;
        Ok(if neg { -v } else { v })
    }

    /// A number token as written: `-12`, `0x7F`, `1.5e+00`, `inf`, `nan`.
    fn number_text(&mut self) -> Result<String> {
        self.ws();
        let start = self.i;
        if matches!(self.peek(), Some(b'-' | b'+')) {
            self.i += 1;
        }
        if self.looking_at("0x") || self.looking_at("0X") {
            self.i += 2;
            while self.peek().is_some_and(|c| c.is_ascii_hexdigit()) {
                self.i += 1;
            }
        } else if self.looking_at("inf") || self.looking_at("nan") {
            self.i += 3;
        } else {
            while self
                .peek()
                .is_some_and(|c| c.is_ascii_digit() || c == b'.' || c == b'e' || c == b'E')
            {
                let c = self.peek();
                self.i += 1;
                if matches!(c, Some(b'e' | b'E')) && matches!(self.peek(), Some(b'-' | b'+')) {
                    self.i += 1;
                }
            }
        }
        if self.i == start || (self.i == start + 1 && matches!(self.s[start], b'-' | b'+')) {
            self.i = start;
            return Err(self.err(format!("expected a number, found {}", self.found())));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
    }

    /// Skips a top-level `#alias = ...` or `!alias = ...` line.
    fn skip_balanced_line(&mut self) {
        let mut depth = 0i32;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    if self.string().is_err() {
                        self.i = self.s.len();
                    }
                    continue;
                }
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b'>' | b']' | b'}' => depth -= 1,
                b'\n' if depth <= 0 => {
                    self.i += 1;
                    return;
                }
                _ => {}
            }
            self.i += 1;
        }
    }

    /// Skips from here past the brace that closes the first `{` met.
    fn skip_to_matching_top_brace(&mut self) -> Result<()> {
        let start = self.pos();
        let mut depth = 0usize;
        let mut opened = false;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'{' => {
                    depth += 1;
                    opened = true;
                }
                b'}' => {
                    if depth == 0 {
                        return Err(self.err("unbalanced '}'"));
                    }
                    depth -= 1;
                    if depth == 0 {
                        self.i += 1;
                        return Ok(());
                    }
                }
                _ => {}
            }
            self.i += 1;
        }
        if opened {
            Err(Error::invalid_argument(format!(
                "{start}: unterminated '{{' (the text ends inside it)"
            )))
        } else {
            Err(Error::invalid_argument(format!(
                "{start}: expected a module or a function, found {}",
                self.found()
            )))
        }
    }

    /// The text from here to the `close` that balances what is open, `->`
    /// not counting as a bracket; the cursor ends after `close`.
    fn raw_until_close(&mut self, close: u8) -> Result<String> {
        let start = self.i;
        let pos = self.pos();
        let mut depth = 0i32;
        while let Some(c) = self.peek() {
            match c {
                b'"' => {
                    self.string()?;
                    continue;
                }
                b'-' if self.peek_at(1) == Some(b'>') => {
                    self.i += 2;
                    continue;
                }
                b'(' | b'<' | b'[' | b'{' => depth += 1,
                b')' | b'>' | b']' | b'}' => {
                    if depth == 0 {
                        if c != close {
                            return Err(self.err(format!("unbalanced '{}'", c as char)));
                        }
                        let text = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                        self.i += 1;
                        return Ok(text);
                    }
                    depth -= 1;
                }
                _ => {}
            }
            self.i += 1;
        }
        Err(Error::invalid_argument(format!(
            "{pos}: unterminated bracket"
        )))
    }

    // ------------------------------------------------------------ locations

    /// `loc(...)` as an expression.
    fn loc_expr_paren(&mut self) -> Result<LocExpr> {
        self.expect("loc")?;
        self.expect("(")?;
        let e = self.loc_expr()?;
        self.expect(")")?;
        Ok(e)
    }

    fn loc_expr(&mut self) -> Result<LocExpr> {
        self.nested(|p| p.loc_expr_inner())
    }

    fn loc_expr_inner(&mut self) -> Result<LocExpr> {
        self.ws();
        match self.peek() {
            Some(b'#') => Ok(LocExpr::Alias(self.hash_name()?)),
            Some(b'"') => {
                let s = self.string()?;
                self.ws();
                if self.peek() == Some(b':') {
                    self.i += 1;
                    let line = self.i64_lit()?;
                    self.expect(":")?;
                    let col = self.i64_lit()?;
                    // `to L:C` / `to :C` ranges.
                    if self.eat("to") {
                        if !self.eat(":") {
                            self.i64_lit()?;
                            self.expect(":")?;
                        }
                        self.i64_lit()?;
                    }
                    Ok(LocExpr::File(s, line, col))
                } else if self.peek() == Some(b'(') {
                    self.i += 1;
                    let child = self.loc_expr()?;
                    self.expect(")")?;
                    Ok(LocExpr::Name(s, Some(Box::new(child))))
                } else {
                    Ok(LocExpr::Name(s, None))
                }
            }
            _ => {
                let word = self.ident()?;
                match word.as_str() {
                    "unknown" => Ok(LocExpr::Unknown),
                    "callsite" => {
                        self.expect("(")?;
                        let callee = self.loc_expr()?;
                        self.expect("at")?;
                        let caller = self.loc_expr()?;
                        self.expect(")")?;
                        Ok(LocExpr::CallSite(Box::new(callee), Box::new(caller)))
                    }
                    "fused" => {
                        if self.eat("<") {
                            self.raw_until_close(b'>')?;
                        }
                        self.expect("[")?;
                        let mut parts = Vec::new();
                        if !self.eat("]") {
                            loop {
                                parts.push(self.loc_expr()?);
                                if self.eat("]") {
                                    break;
                                }
                                self.expect(",")?;
                            }
                        }
                        Ok(LocExpr::Fused(parts))
                    }
                    other => Err(self.err(format!("unknown location form '{other}'"))),
                }
            }
        }
    }

    /// An optional trailing `loc(...)`, resolved.
    pub(crate) fn opt_loc(&mut self) -> Result<Option<Location>> {
        self.ws();
        if !self.looking_at("loc(") {
            return Ok(None);
        }
        let e = self.loc_expr_paren()?;
        let mut out = Location::default();
        self.resolve(&e, &mut out, 0)?;
        Ok(Some(out))
    }

    fn resolve(&self, e: &LocExpr, out: &mut Location, depth: usize) -> Result<()> {
        if depth > MAX_ALIAS_DEPTH {
            return Err(self.err("location aliases nest too deeply (a cycle?)"));
        }
        match e {
            LocExpr::Unknown => {}
            LocExpr::File(f, l, c) => {
                if out.file.is_none() {
                    out.file = Some(f.clone());
                    out.line = Some(*l);
                    out.column = Some(*c);
                }
            }
            LocExpr::Name(n, child) => {
                if out.name.is_none() {
                    out.name = Some(n.clone());
                }
                if let Some(c) = child {
                    self.resolve(c, out, depth + 1)?;
                }
            }
            LocExpr::CallSite(callee, caller) => {
                self.resolve(callee, out, depth + 1)?;
                self.resolve(caller, out, depth + 1)?;
            }
            LocExpr::Fused(parts) => {
                for p in parts {
                    self.resolve(p, out, depth + 1)?;
                }
            }
            LocExpr::Alias(a) => match self.aliases.get(a) {
                Some(e) => self.resolve(e, out, depth + 1)?,
                None => return Err(self.err(format!("location alias #{a} is not defined"))),
            },
        }
        Ok(())
    }

    // ------------------------------------------------------------ types

    pub(crate) fn ty(&mut self) -> Result<Type> {
        self.nested(|p| p.ty_inner())
    }

    fn ty_inner(&mut self) -> Result<Type> {
        self.ws();
        if self.looking_at("tensor<") {
            self.i += "tensor<".len();
            let mut dims = Vec::new();
            loop {
                self.ws();
                if self.peek() == Some(b'?') && self.peek_at(1) == Some(b'x') {
                    self.i += 2;
                    dims.push(None);
                    continue;
                }
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    let save = self.i;
                    let d = self.usize_lit()?;
                    if self.peek() == Some(b'x') {
                        self.i += 1;
                        dims.push(Some(d));
                        continue;
                    }
                    self.i = save;
                }
                break;
            }
            let elem = self.elem_type()?;
            let mut encoding = None;
            if self.eat(",") {
                self.ws();
                encoding = Some(self.raw_until_close(b'>')?);
            } else {
                self.expect(">")?;
            }
            return Ok(Type::Tensor {
                dims,
                elem,
                encoding,
            });
        }
        if self.looking_at("!stablehlo.token") {
            self.i += "!stablehlo.token".len();
            return Ok(Type::Token);
        }
        if self.peek() == Some(b'!') {
            let start = self.i;
            self.i += 1;
            while self.peek().is_some_and(Self::is_ident_char) {
                self.i += 1;
            }
            if self.peek() == Some(b'<') {
                self.i += 1;
                self.raw_until_close(b'>')?;
            }
            return Ok(Type::Other(
                String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
            ));
        }
        if self.looking_at("tuple<") {
            self.i += "tuple<".len();
            let mut elems = Vec::new();
            if !self.eat(">") {
                loop {
                    elems.push(self.ty()?);
                    if self.eat(">") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            return Ok(Type::Tuple(elems));
        }
        if self.looking_at("memref<") || self.looking_at("vector<") {
            let start = self.i;
            while self.peek() != Some(b'<') {
                self.i += 1;
            }
            self.i += 1;
            self.raw_until_close(b'>')?;
            return Ok(Type::Other(
                String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
            ));
        }
        Ok(Type::Scalar(self.elem_type()?))
    }

    fn elem_type(&mut self) -> Result<ElemType> {
        self.ws();
        if self.looking_at("complex<") {
            self.i += "complex<".len();
            let inner = self.elem_type()?;
            self.expect(">")?;
            return Ok(ElemType(format!("complex<{}>", inner.0)));
        }
        if self.peek() == Some(b'!') {
            // A dialect element type (`!quant.uniform<...>`): kept as text.
            let start = self.i;
            self.i += 1;
            while self.peek().is_some_and(Self::is_ident_char) {
                self.i += 1;
            }
            if self.peek() == Some(b'<') {
                self.i += 1;
                self.raw_until_close(b'>')?;
            }
            return Ok(ElemType(
                String::from_utf8_lossy(&self.s[start..self.i]).into_owned(),
            ));
        }
        Ok(ElemType(self.ident()?))
    }

    /// A comma-separated list of types, or one parenthesized.
    fn type_list(&mut self) -> Result<Vec<Type>> {
        let mut out = vec![self.ty()?];
        while self.eat(",") {
            out.push(self.ty()?);
        }
        Ok(out)
    }

    /// `(T, ...)` -- the parentheses already seen opening.
    fn paren_types_rest(&mut self) -> Result<Vec<Type>> {
        let mut out = Vec::new();
        if self.eat(")") {
            return Ok(out);
        }
        loop {
            out.push(self.ty()?);
            if self.eat(")") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    /// The type signature after an op's `:`: `(A, B) -> C`, `(A) -> (B, C)`,
    /// `A -> B` (CHLO), or a plain list `A, B` (then `operands` is empty and
    /// `results` is the list).
    pub(crate) fn signature(&mut self) -> Result<(Vec<Type>, Vec<Type>, bool)> {
        self.ws();
        let (inputs, paren) = if self.peek() == Some(b'(') {
            self.i += 1;
            (self.paren_types_rest()?, true)
        } else {
            (self.type_list()?, false)
        };
        if self.eat("->") {
            let results = if self.eat("(") {
                self.paren_types_rest()?
            } else {
                vec![self.ty()?]
            };
            Ok((inputs, results, true))
        } else if paren {
            Err(self.err(format!(
                "expected '->' after the operand types, found {}",
                self.found()
            )))
        } else {
            Ok((Vec::new(), inputs, false))
        }
    }

    // ------------------------------------------------------------ attributes

    pub(crate) fn attr_value(&mut self) -> Result<Attr> {
        self.nested(|p| p.attr_value_inner())
    }

    fn attr_value_inner(&mut self) -> Result<Attr> {
        self.ws();
        let c = self.peek();
        let value = match c {
            Some(b'[') => {
                self.i += 1;
                let mut items = Vec::new();
                if !self.eat("]") {
                    loop {
                        items.push(self.attr_value()?);
                        if self.eat("]") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
                Attr::List(items)
            }
            Some(b'{') => {
                let start = self.i;
                let fields = self.attr_dict()?;
                let raw = String::from_utf8_lossy(&self.s[start..self.i]).into_owned();
                Attr::Dict(fields, raw)
            }
            Some(b'"') => Attr::Str(self.string()?),
            Some(b'@') => Attr::Symbol(self.symbol()?),
            Some(b'#') => self.hash_attr()?,
            Some(b'-' | b'+' | b'0'..=b'9') => {
                let t = self.number_text()?;
                number_attr(&t).ok_or_else(|| self.err(format!("bad number '{t}'")))?
            }
            Some(b'(') => {
                // A function type as an attribute value.
                let start = self.i;
                self.i += 1;
                self.raw_until_close(b')')?;
                if self.eat("->") {
                    self.ty()?;
                }
                Attr::Raw(String::from_utf8_lossy(&self.s[start..self.i]).into_owned())
            }
            _ => {
                if self.looking_at("dense<") {
                    self.i += "dense<".len();
                    let d = self.dense_body()?;
                    self.expect(":")?;
                    let t = self.ty()?;
                    return Ok(Attr::Dense(d, t));
                }
                if self.looking_at("dense_resource<") {
                    return Err(Error::unimplemented(format!(
                        "{}: dense_resource constants (blobs kept outside the text) are not supported",
                        self.pos()
                    )));
                }
                if self.looking_at("array<") {
                    self.i += "array<".len();
                    self.elem_type()?;
                    let mut v = Vec::new();
                    if self.eat(":") {
                        loop {
                            self.ws();
                            if self.looking_at("true") {
                                self.i += 4;
                                v.push(1);
                            } else if self.looking_at("false") {
                                self.i += 5;
                                v.push(0);
                            } else {
                                v.push(self.i64_lit()?);
                            }
                            if !self.eat(",") {
                                break;
                            }
                        }
                    }
                    self.expect(">")?;
                    return Ok(Attr::IntArray(v));
                }
                if self.looking_at("tensor<") || self.looking_at("tuple<") || self.looking_at("!") {
                    return Ok(Attr::Type(self.ty()?));
                }
                let word = self.ident()?;
                match word.as_str() {
                    "true" => Attr::Bool(true),
                    "false" => Attr::Bool(false),
                    "unit" => Attr::Unit,
                    _ => Attr::Enum(word),
                }
            }
        };
        // A typed scalar (`1 : i64`, `1.0 : f32`, `"s" : !t`).
        if matches!(
            value,
            Attr::Int(_) | Attr::Float(_) | Attr::Bool(_) | Attr::Str(_)
        ) {
            let save = self.i;
            self.ws();
            if self.peek() == Some(b':') && self.peek_at(1) != Some(b':') {
                self.i += 1;
                if self.ty().is_err() {
                    self.i = save;
                }
            } else {
                self.i = save;
            }
        }
        Ok(value)
    }

    /// `#stablehlo<kind VALUE>`, `#stablehlo.name<...>`, `#alias`.
    fn hash_attr(&mut self) -> Result<Attr> {
        let name = self.hash_name()?;
        if self.peek() != Some(b'<') {
            // An attribute alias (`#map`): not needed by StableHLO programs.
            return Ok(Attr::Raw(format!("#{name}")));
        }
        self.i += 1;
        if !name.contains('.') {
            // `#stablehlo<comparison_direction GT>`: an enumerator; the kind
            // may be absent (`#stablehlo<GT>` in some printers).
            let first = self.ident()?;
            self.ws();
            let value = if self.peek() == Some(b'>') {
                first
            } else {
                self.ident()?
            };
            self.expect(">")?;
            return Ok(Attr::Enum(value));
        }
        self.ws();
        // Structured: `k = v, ...`, or a custom body (`#stablehlo.conv<[b, 0,
        // f]x[...]->[...]>`, `#stablehlo.bounds<?, 4>`) kept raw.
        let save = self.i;
        if self.peek().is_some_and(|c| c.is_ascii_alphabetic()) {
            let mut fields = Vec::new();
            let ok = (|| -> Result<()> {
                loop {
                    let k = self.ident()?;
                    self.expect("=")?;
                    let v = self.attr_value()?;
                    fields.push((k, v));
                    if self.eat(">") {
                        return Ok(());
                    }
                    self.expect(",")?;
                }
            })();
            if ok.is_ok() {
                return Ok(Attr::Struct(name, fields));
            }
            self.i = save;
        }
        if self.eat(">") {
            return Ok(Attr::Struct(name, Vec::new()));
        }
        let raw = self.raw_until_close(b'>')?;
        Ok(Attr::Struct(name, vec![("raw".into(), Attr::Raw(raw))]))
    }

    /// `{name = value, flag, ...}` (the `{` not yet consumed).
    pub(crate) fn attr_dict(&mut self) -> Result<Vec<(String, Attr)>> {
        self.expect("{")?;
        let mut out = Vec::new();
        if self.eat("}") {
            return Ok(out);
        }
        loop {
            self.ws();
            let key = if self.peek() == Some(b'"') {
                self.string()?
            } else {
                self.ident()?
            };
            let value = if self.eat("=") {
                self.attr_value()?
            } else {
                Attr::Unit
            };
            out.push((key, value));
            if self.eat("}") {
                return Ok(out);
            }
            self.expect(",")?;
        }
    }

    /// The body of `dense<...>` (after `dense<`), through its `>`.
    fn dense_body(&mut self) -> Result<Dense> {
        self.ws();
        if self.peek() == Some(b'"') {
            let s = self.string()?;
            self.expect(">")?;
            let hex = s
                .strip_prefix("0x")
                .or_else(|| s.strip_prefix("0X"))
                .ok_or_else(|| self.err("a dense string must be hex bytes (\"0x...\")"))?;
            if hex.len() % 2 != 0 || !hex.bytes().all(|c| c.is_ascii_hexdigit()) {
                return Err(self.err("malformed hex bytes in dense<\"0x...\">"));
            }
            let bytes = hex
                .as_bytes()
                .chunks(2)
                .map(|p| (hex_val(p[0]) << 4) | hex_val(p[1]))
                .collect();
            return Ok(Dense::Hex(bytes));
        }
        let mut elems = Vec::new();
        if !self.eat(">") {
            self.dense_elems(&mut elems)?;
            self.expect(">")?;
        }
        Ok(Dense::Elems(elems))
    }

    fn dense_elems(&mut self, out: &mut Vec<DenseElem>) -> Result<()> {
        self.nested(|p| {
            p.ws();
            if p.eat("[") {
                if p.eat("]") {
                    return Ok(());
                }
                loop {
                    p.dense_elems(out)?;
                    if p.eat("]") {
                        return Ok(());
                    }
                    p.expect(",")?;
                }
            }
            out.push(p.dense_elem()?);
            Ok(())
        })
    }

    fn dense_elem(&mut self) -> Result<DenseElem> {
        self.ws();
        if self.eat("(") {
            // The parts of a complex element are real numbers.
            let re = self.real_elem()?;
            self.expect(",")?;
            let im = self.real_elem()?;
            self.expect(")")?;
            return Ok(DenseElem::Complex(Box::new(re), Box::new(im)));
        }
        self.real_elem()
    }

    fn real_elem(&mut self) -> Result<DenseElem> {
        self.ws();
        if self.looking_at("true") {
            self.i += 4;
            return Ok(DenseElem::Bool(true));
        }
        if self.looking_at("false") {
            self.i += 5;
            return Ok(DenseElem::Bool(false));
        }
        let t = self.number_text()?;
        if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
            return u128::from_str_radix(h, 16)
                .map(DenseElem::Bits)
                .map_err(|_| self.err(format!("bad hex element '{t}'")));
        }
        if t.contains(['.', 'e', 'E', 'n', 'i']) {
            return Ok(DenseElem::Float(t));
        }
        t.parse::<i128>()
            .map(DenseElem::Int)
            .map_err(|_| self.err(format!("bad integer '{t}'")))
    }

    // ------------------------------------------------------------ structure

    fn module(&mut self) -> Result<Module> {
        let mut module = Module::default();
        let mut saw_module = false;
        loop {
            self.ws();
            if self.at_end() {
                break;
            }
            match self.peek() {
                Some(b'#') | Some(b'!') => self.skip_balanced_line(),
                _ => {
                    let word = self.peek_ident().unwrap_or_default();
                    if word == "module" {
                        if saw_module {
                            return Err(self.err("a second top-level module"));
                        }
                        saw_module = true;
                        self.ident()?;
                        self.ws();
                        if self.peek() == Some(b'@') {
                            module.name = Some(self.symbol()?);
                        }
                        if self.eat("attributes") {
                            module.attrs = self.attr_dict()?;
                        }
                        self.expect("{")?;
                        loop {
                            self.ws();
                            if self.eat("}") {
                                break;
                            }
                            if self.at_end() {
                                return Err(self.err("the module is not closed ('}' missing)"));
                            }
                            let f = self.func()?;
                            module.funcs.push(f);
                        }
                        self.opt_loc()?;
                    } else if word == "func.func" {
                        let f = self.func()?;
                        module.funcs.push(f);
                    } else {
                        return Err(self.err(format!(
                            "expected 'module' or 'func.func', found {}",
                            self.found()
                        )));
                    }
                }
            }
        }
        if module.funcs.is_empty() {
            return Err(Error::invalid_argument(
                "no function in the StableHLO text".to_string(),
            ));
        }
        Ok(module)
    }

    fn func(&mut self) -> Result<Func> {
        self.ws();
        let pos = self.pos();
        let word = self.ident()?;
        if word != "func.func" {
            return Err(Error::unimplemented(format!(
                "{pos}: '{word}' at module level is not supported (only func.func)"
            )));
        }
        let mut public = true;
        if let Some(v) = self.peek_ident() {
            if matches!(v.as_str(), "public" | "private" | "nested") {
                self.ident()?;
                public = v == "public";
            }
        }
        let name = self.symbol()?;
        self.expect("(")?;
        let mut args = Vec::new();
        if !self.eat(")") {
            loop {
                let n = self.value_name()?;
                self.expect(":")?;
                let ty = self.ty()?;
                self.ws();
                let attrs = if self.peek() == Some(b'{') {
                    self.attr_dict()?
                } else {
                    Vec::new()
                };
                let loc = self.opt_loc()?;
                args.push(Argument {
                    name: n,
                    ty,
                    attrs,
                    loc,
                });
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        let mut results = Vec::new();
        if self.eat("->") {
            if self.eat("(") {
                if !self.eat(")") {
                    loop {
                        let t = self.ty()?;
                        self.ws();
                        // Inside the parentheses a `{` is the result's attributes.
                        let a = if self.peek() == Some(b'{') {
                            self.attr_dict()?
                        } else {
                            Vec::new()
                        };
                        results.push((t, a));
                        if self.eat(")") {
                            break;
                        }
                        self.expect(",")?;
                    }
                }
            } else {
                // Unparenthesized, a `{` after the type opens the body.
                results.push((self.ty()?, Vec::new()));
            }
        }
        let mut attrs = Vec::new();
        if self.eat("attributes") {
            attrs = self.attr_dict()?;
        }
        self.ws();
        let body = self.region(Vec::new())?;
        self.opt_loc()?;
        Ok(Func {
            name,
            public,
            args,
            results,
            attrs,
            body,
            pos,
        })
    }

    /// `{ (^bb0(%a: T, ...):)? ops }`; `args` are arguments the op's pretty
    /// form declared outside the braces.
    pub(crate) fn region(&mut self, args: Vec<Argument>) -> Result<Region> {
        self.nested(|p| p.region_inner(args))
    }

    fn region_inner(&mut self, mut args: Vec<Argument>) -> Result<Region> {
        self.ws();
        let pos = self.pos();
        self.expect("{")?;
        self.ws();
        if self.peek() == Some(b'^') {
            self.i += 1;
            self.ident()?;
            if self.eat("(") && !self.eat(")") {
                loop {
                    let n = self.value_name()?;
                    self.expect(":")?;
                    let ty = self.ty()?;
                    let loc = self.opt_loc()?;
                    args.push(Argument {
                        name: n,
                        ty,
                        attrs: Vec::new(),
                        loc,
                    });
                    if self.eat(")") {
                        break;
                    }
                    self.expect(",")?;
                }
            }
            self.expect(":")?;
        }
        let mut ops = Vec::new();
        loop {
            self.ws();
            if self.eat("}") {
                break;
            }
            if self.at_end() {
                return Err(Error::invalid_argument(format!(
                    "{pos}: the region is not closed ('}}' missing)"
                )));
            }
            if self.peek() == Some(b'^') {
                return Err(Error::unimplemented(format!(
                    "{}: a region of more than one block is not supported",
                    self.pos()
                )));
            }
            ops.push(self.operation()?);
        }
        Ok(Region { args, ops, pos })
    }

    fn operation(&mut self) -> Result<Operation> {
        self.ws();
        let pos = self.pos();
        let mut results = Vec::new();
        if self.peek() == Some(b'%') {
            loop {
                let n = self.value_name()?;
                let mut count = 1;
                if self.peek() == Some(b':') {
                    self.i += 1;
                    count = self.usize_lit()?;
                }
                results.push((n, count));
                if !self.eat(",") {
                    break;
                }
            }
            self.expect("=")?;
        }
        self.ws();
        let mut op = Operation {
            results,
            name: String::new(),
            operands: Vec::new(),
            attrs: Vec::new(),
            regions: Vec::new(),
            operand_types: Vec::new(),
            result_types: Vec::new(),
            loc: None,
            pos,
        };
        if self.peek() == Some(b'"') {
            op.name = self.string()?;
            self.generic_body(&mut op)?;
        } else {
            op.name = self.ident()?;
            crate::pretty::parse_pretty(self, &mut op)?;
        }
        op.loc = self.opt_loc()?;
        Ok(op)
    }

    /// `(%a, %b) <{props}> ({regions}) {attrs} : (T) -> T`.
    fn generic_body(&mut self, op: &mut Operation) -> Result<()> {
        self.expect("(")?;
        if !self.eat(")") {
            loop {
                op.operands.push(self.value_ref()?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        if self.eat("<{") {
            self.i -= 1;
            let props = self.attr_dict()?;
            self.expect(">")?;
            op.attrs.extend(props);
        }
        self.ws();
        if self.peek() == Some(b'(') {
            self.i += 1;
            loop {
                op.regions.push(self.region(Vec::new())?);
                if self.eat(")") {
                    break;
                }
                self.expect(",")?;
            }
        }
        self.ws();
        if self.peek() == Some(b'{') {
            let a = self.attr_dict()?;
            op.attrs.extend(a);
        }
        self.expect(":")?;
        let (ins, outs, _) = self.signature()?;
        op.operand_types = ins;
        op.result_types = outs;
        Ok(())
    }
}

fn hex_val(c: u8) -> u8 {
    match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => c - b'A' + 10,
    }
}

fn number_attr(t: &str) -> Option<Attr> {
    if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        return i128::from_str_radix(h, 16).ok().map(Attr::Int);
    }
    if t.contains(['.', 'e', 'E', 'n', 'i']) {
        return Some(Attr::Float(t.to_string()));
    }
    t.parse::<i128>().ok().map(Attr::Int)
}
