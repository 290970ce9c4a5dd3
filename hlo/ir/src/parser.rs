//! The HLO text parser.
//!
//! Reads the text XLA and JAX print: the `%`-prefixed long form with computation
//! signatures, layouts and metadata, and the short form JAX's `as_text` gives.
//! Computations may be referenced before they are defined. Every error names the
//! `line:column` where reading stopped and what was expected there.
//!
//! The parser builds an [`HloModule`] and checks only what the grammar implies
//! (names resolve, attributes belong to their opcode, values are in range for their
//! types). Shape rules are the verifier's job ([`super::verifier`]).
//!
//! Beyond the printer's canonical form it reads what XLA's parser reads:
//! instruction names need only be unique within their computation (they are made
//! unique module-wide afterwards, later uses getting `.1`, `.2`, ...); an
//! instruction may leave out its shape when XLA infers it (`a = add(x, y)`, shape
//! inference on the operands); an operand may be an instruction written inline,
//! without name or attributes (`add(f32[] parameter(0), negate(x))`, named
//! `<opcode>.anon`); the module name may be followed by a colon.
//!
//! Any text is safe to feed it: it never panics, recursion is bounded (tuples
//! nest at most [`MAX_TUPLE_NESTING`] deep; constants of any rank are read with an
//! explicit stack), shapes whose byte size overflows 64 bits are refused, and no
//! constant is allocated before the text is known to be long enough to hold its
//! values. The printer's output reads back to an equal module. Both properties are
//! fuzzed (`fuzz/`, `tests/parser_fuzz.rs`), with past failures kept in
//! `tests/data/parser_regressions/`.

use super::attr_names::{AttrName, MetadataField, ValueForm};
use super::attrs::*;
use super::lexer::{Lexer, Token, TokenKind};
use super::op::{CustomCallAttrs, Op};
use super::opcode::{BinaryOp, Opcode, UnaryOp};
use super::{
    BackendConfig, CompId, FileLocation, HloComputation, HloInstruction, HloModule,
    InputOutputAlias, InstrId, ModuleConfig, OpMetadata, SourceLocation, StackFrame,
    StackFrameIndex,
};
use crate::error::{Error, Result};
use crate::literal::Literal;
use crate::native::Scalar;
use crate::shape::{ArrayShape, ElementType, Layout, ProgramShape, Shape, Tile};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};
use std::collections::HashMap;

/// Parses a whole module.
pub fn parse_module(text: &str) -> Result<HloModule> {
    let parsed = Parser::new(text).and_then(|mut p| p.module());
    parsed.map_err(|e| {
        if looks_like_stablehlo(text) {
            Error::new(
                e.code(),
                format!(
                    "{} (this looks like StableHLO/MLIR, not HLO text: lower it to HLO first, e.g. jax.jit(f).lower(*args).as_text(dialect=\"hlo\") or jax.jit(f).lower(*args).compiler_ir(\"hlo\").as_hlo_text())",
                    e.message()
                ),
            )
        } else {
            e
        }
    })
}

/// Whether text is MLIR (StableHLO, MHLO) rather than HLO: it starts with
/// `module` (`module @jit_f attributes {...}`) or defines a `func.func`.
fn looks_like_stablehlo(text: &str) -> bool {
    let start = text.trim_start_matches(|c: char| c.is_whitespace() || c == '\u{feff}');
    start.starts_with("module @")
        || start.starts_with("module {")
        || start.starts_with("module attributes")
        || text.contains("func.func")
}

// The text layer gives the value types their `parse`, so `shape` and
// `literal` know nothing of text.
impl Shape {
    /// Parses HLO shape text: `f32[2,3]{1,0}`, `(s32[], pred[4])`, `token[]`.
    pub fn parse(text: &str) -> Result<Shape> {
        parse_shape(text)
    }
}

/// Parses a shape on its own (`f32[2,3]{1,0}`, `(s32[], pred[])`).
pub fn parse_shape(text: &str) -> Result<Shape> {
    let mut p = Parser::new(text)?;
    let shape = p.shape()?;
    p.expect_eof()?;
    Ok(shape)
}

/// Parses the values of a literal of a known shape, as written inside
/// `constant(...)`: `{ {1, 2}, {3, 4} }`, `7`, `(1, 2)`.
pub fn parse_literal_values(text: &str, shape: &Shape) -> Result<Literal> {
    let mut p = Parser::new(text)?;
    let literal = p.literal(shape)?;
    p.expect_eof()?;
    Ok(literal)
}

/// Parses a literal with its shape in front, the form `Literal`'s `Display`
/// writes: `f32[2] {1, 2}`, `token[] token`, and for tuples either each element
/// with its shape, `(f32[] 1, (s32[2] {1, 2}))`, or the whole tuple shape then
/// the values, `(f32[], s32[2]) (1, {1, 2})`.
pub fn parse_literal(text: &str) -> Result<Literal> {
    let mut p = Parser::new(text)?;
    let literal = p.shaped_literal()?;
    p.expect_eof()?;
    Ok(literal)
}

/// A parsed attribute value, before an opcode claims it.
#[derive(Debug)]
enum Value {
    Word(String),
    Str(String),
    Ints(Vec<i64>),
    Bools(Vec<bool>),
    Words(Vec<String>),
    Comp(CompId),
    Comps(Vec<CompId>),
    Window(Window),
    ConvDnums(ConvDimensionNumbers),
    Slice(Vec<SliceDim>),
    Pad(Vec<PadDim>),
    Metadata(OpMetadata),
    StrMap(Vec<(String, String)>),
    Raw(String),
    Backend(BackendConfig),
    Groups(Vec<Vec<usize>>),
    InstrRefs(Vec<InstrId>),
    Shapes(Vec<Shape>),
    Shape(Shape),
    Aliasing(Vec<OutputOperandAlias>),
}

/// The attributes of one instruction, claimed one by one by the opcode's builder;
/// whatever is left unclaimed is an error.
struct Attrs {
    /// Name, offset of the name, offset of the value, value.
    items: Vec<(AttrName, usize, usize, Value)>,
}

struct Parser<'a> {
    lex: Lexer<'a>,
    tok: Token,
    /// Computation names to provisional ids, in order of first mention.
    comp_ids: HashMap<String, CompId>,
    /// Per provisional id: name, offset of first mention, definition.
    comp_slots: Vec<(String, usize, Option<HloComputation>)>,
    /// Provisional ids in the order their definitions appear.
    definition_order: Vec<CompId>,
    /// Instruction names of the computation being parsed.
    scope: HashMap<String, InstrId>,
    /// Instructions of the computation being parsed, in the order they are
    /// finished (an instruction written inline as an operand comes before its
    /// user).
    instrs: Vec<HloInstruction>,
    /// How many instructions written inline as operands enclose the position.
    nesting: usize,
    /// How many tuple shapes (or tuple literals) enclose the current position.
    depth: usize,
}

/// Deepest nesting of tuple shapes and tuple literals the parser accepts. Real
/// programs nest a few levels; the limit keeps hostile text from exhausting the
/// stack of the recursive descent (and of everything that later walks the shape).
pub const MAX_TUPLE_NESTING: usize = 64;

/// Deepest nesting of instructions written inline as operands
/// (`add(multiply(x, y), z)`), for the same reason.
pub const MAX_INLINE_NESTING: usize = 64;

/// Largest number of device ids an iota `replica_groups` form may expand to.
const MAX_IOTA_DEVICES: usize = 1 << 20;

fn strip_percent(s: &str) -> &str {
    s.strip_prefix('%').unwrap_or(s)
}

impl<'a> Parser<'a> {
    fn new(text: &'a str) -> Result<Self> {
        let mut lex = Lexer::new(text);
        let tok = lex.next_token()?;
        Ok(Parser {
            lex,
            tok,
            comp_ids: HashMap::new(),
            comp_slots: Vec::new(),
            definition_order: Vec::new(),
            scope: HashMap::new(),
            instrs: Vec::new(),
            nesting: 0,
            depth: 0,
        })
    }

    // ---------------------------------------------------------------- tokens

    fn bump(&mut self) -> Result<Token> {
        let next = self.lex.next_token()?;
        Ok(std::mem::replace(&mut self.tok, next))
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.tok.kind == kind
    }

    fn at_word(&self, word: &str) -> bool {
        self.tok.kind == TokenKind::Word && self.tok.text == word
    }

    fn err(&self, offset: usize, message: impl std::fmt::Display) -> Error {
        self.lex.error_at(offset, message)
    }

    fn expected(&self, what: &str) -> Error {
        self.err(
            self.tok.offset,
            format!("expected {what}, found {}", self.tok.describe()),
        )
    }

    fn expect(&mut self, kind: TokenKind, what: &str) -> Result<Token> {
        if self.tok.kind == kind {
            self.bump()
        } else {
            Err(self.expected(what))
        }
    }

    fn eat(&mut self, kind: TokenKind) -> Result<bool> {
        if self.tok.kind == kind {
            self.bump()?;
            Ok(true)
        } else {
            Ok(false)
        }
    }

    fn expect_eof(&self) -> Result<()> {
        if self.at(TokenKind::Eof) {
            Ok(())
        } else {
            Err(self.expected("end of input"))
        }
    }

    fn word(&mut self, what: &str) -> Result<Token> {
        self.expect(TokenKind::Word, what)
    }

    fn expect_word(&mut self, word: &str) -> Result<()> {
        if self.at_word(word) {
            self.bump()?;
            Ok(())
        } else {
            Err(self.expected(&format!("'{word}'")))
        }
    }

    fn name(&mut self, what: &str) -> Result<(String, usize)> {
        let t = self.word(what)?;
        let name = strip_percent(&t.text);
        if name.is_empty() {
            return Err(self.err(t.offset, format!("expected {what}, found '%'")));
        }
        Ok((name.to_string(), t.offset))
    }

    /// Replaces the current `{` token and everything up to its matching `}` by the
    /// raw text, and moves on past it.
    fn raw_braces(&mut self) -> Result<String> {
        if !self.at(TokenKind::LBrace) {
            return Err(self.expected("'{'"));
        }
        let start = self.tok.offset;
        let end = self.lex.matching_brace_end(start)?;
        let raw = self.lex.source()[start..end].to_string();
        self.lex.seek(end);
        self.tok = self.lex.next_token()?;
        Ok(raw)
    }

    // ---------------------------------------------------------------- numbers

    fn int_of(&self, t: &Token) -> Result<i64> {
        t.text.parse::<i64>().map_err(|_| {
            self.err(
                t.offset,
                format!("expected an integer, found {}", t.describe()),
            )
        })
    }

    fn int(&mut self) -> Result<i64> {
        let t = self.word("an integer")?;
        self.int_of(&t)
    }

    fn usize_of(&self, text: &str, offset: usize) -> Result<usize> {
        text.parse::<usize>().map_err(|_| {
            self.err(
                offset,
                format!("expected a non-negative integer, found '{text}'"),
            )
        })
    }

    fn usize(&mut self) -> Result<usize> {
        let t = self.word("a non-negative integer")?;
        self.usize_of(&t.text, t.offset)
    }

    fn bool_of(&self, t: &Token) -> Result<bool> {
        match t.text.as_str() {
            "true" => Ok(true),
            "false" => Ok(false),
            _ => Err(self.err(
                t.offset,
                format!("expected true or false, found {}", t.describe()),
            )),
        }
    }

    /// `{item, item, ...}`, possibly empty; `close` says what is expected where
    /// the list should end.
    fn braced_list<T>(
        &mut self,
        mut item: impl FnMut(&mut Self) -> Result<T>,
        close: &str,
    ) -> Result<Vec<T>> {
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        if !self.at(TokenKind::RBrace) {
            loop {
                out.push(item(self)?);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBrace, close)?;
        Ok(out)
    }

    /// `{1,2,3}` (possibly empty) as integers.
    /// Whether the current `{` is followed by another `{` (a list of lists).
    fn brace_opens_a_list(&self) -> bool {
        self.at(TokenKind::LBrace)
            && self.lex.source().as_bytes()[self.tok.offset + 1..]
                .iter()
                .find(|b| !b.is_ascii_whitespace())
                == Some(&b'{')
    }

    fn int_list(&mut self) -> Result<Vec<i64>> {
        self.braced_list(Self::int, "',' or '}'")
    }

    /// `{a, b}` of words.
    fn word_list(&mut self) -> Result<Vec<Token>> {
        self.braced_list(|p| p.word("a name"), "',' or '}'")
    }

    // ---------------------------------------------------------------- shapes

    fn at_shape_start(&self) -> bool {
        match self.tok.kind {
            TokenKind::LParen => true,
            TokenKind::Word => {
                let next = self
                    .lex
                    .source()
                    .as_bytes()
                    .get(self.tok.offset + self.tok.text.len());
                (ElementType::from_name(&self.tok.text).is_some() || self.tok.text == "token")
                    && next == Some(&b'[')
            }
            _ => false,
        }
    }

    fn shape(&mut self) -> Result<Shape> {
        self.shape_impl(true)
    }

    fn shape_no_layout(&mut self) -> Result<Shape> {
        self.shape_impl(false)
    }

    fn shape_impl(&mut self, with_layout: bool) -> Result<Shape> {
        if self.at(TokenKind::LParen) {
            self.enter_tuple()?;
            self.bump()?;
            let mut elements = Vec::new();
            if !self.at(TokenKind::RParen) {
                loop {
                    elements.push(self.shape_impl(with_layout)?);
                    if !self.eat(TokenKind::Comma)? {
                        break;
                    }
                }
            }
            self.expect(TokenKind::RParen, "',' or ')' in tuple shape")?;
            self.depth -= 1;
            return Ok(Shape::Tuple(elements));
        }
        let t = self.word("a shape")?;
        if t.text == "token" {
            self.expect(TokenKind::LBracket, "'['")?;
            self.expect(TokenKind::RBracket, "']'")?;
            return Ok(Shape::Token);
        }
        let Some(element_type) = ElementType::from_name(&t.text) else {
            return Err(self.err(
                t.offset,
                format!(
                    "expected a shape, found {} (not an element type)",
                    t.describe()
                ),
            ));
        };
        self.expect(TokenKind::LBracket, "'['")?;
        let mut dims = Vec::new();
        let mut dynamic = Vec::new();
        if !self.at(TokenKind::RBracket) {
            loop {
                let is_dynamic = self.eat(TokenKind::LessEq)?;
                if !is_dynamic && self.at(TokenKind::Word) && self.tok.text == "?" {
                    return Err(self.err(
                        self.tok.offset,
                        "unbounded dynamic dimensions are not supported",
                    ));
                }
                dims.push(self.usize()?);
                dynamic.push(is_dynamic);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBracket, "',' or ']' in shape")?;
        if !dynamic.iter().any(|&d| d) {
            dynamic.clear();
        }
        // As XLA does, refuse shapes whose byte size does not fit in 64 bits (a
        // zero dimension makes the array empty whatever the others are).
        if !dims.contains(&0) {
            let bytes = dims
                .iter()
                .try_fold(element_type.byte_size(), |acc, &d| acc.checked_mul(d))
                .filter(|&b| i64::try_from(b).is_ok());
            if bytes.is_none() {
                return Err(self.err(
                    t.offset,
                    format!(
                        "shape {}[{}] is too large: its size in bytes overflows 64 bits",
                        element_type,
                        dims.iter()
                            .map(|d| d.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ));
            }
        }
        let mut layout = if with_layout && self.at(TokenKind::LBrace) && self.brace_opens_layout() {
            Some(self.layout(dims.len())?)
        } else {
            None
        };
        // A scalar's layout `{}` is the only one it can have; XLA prints it as no
        // layout at all, so keep it as none and the text reads back the same.
        if dims.is_empty() && layout.as_ref() == Some(&Layout::default()) {
            layout = None;
        }
        Ok(Shape::Array(ArrayShape {
            element_type,
            dims,
            dynamic,
            layout,
        }))
    }

    /// Counts one more enclosing tuple, failing past [`MAX_TUPLE_NESTING`].
    fn enter_tuple(&mut self) -> Result<()> {
        if self.depth >= MAX_TUPLE_NESTING {
            return Err(self.err(
                self.tok.offset,
                format!("tuples nest more than {MAX_TUPLE_NESTING} deep"),
            ));
        }
        self.depth += 1;
        Ok(())
    }

    /// Whether the current `{` starts a layout rather than, say, a computation body
    /// after a signature's result shape: a layout begins with a digit, `:` or `}`.
    fn brace_opens_layout(&self) -> bool {
        let rest = &self.lex.source()[self.tok.offset + 1..];
        rest.trim_start()
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || b == b':' || b == b'}')
    }

    fn layout(&mut self, rank: usize) -> Result<Layout> {
        let open = self.expect(TokenKind::LBrace, "'{'")?;
        let mut layout = Layout::default();
        if !self.at(TokenKind::RBrace) && !self.at(TokenKind::Colon) {
            loop {
                layout.minor_to_major.push(self.usize()?);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        if self.eat(TokenKind::Colon)? {
            while !self.at(TokenKind::RBrace) {
                let item = self.word("a layout attribute (T, E or S)")?;
                match item.text.as_str() {
                    "T" => {
                        while self.at(TokenKind::LParen) {
                            layout.tiles.push(self.tile()?);
                        }
                    }
                    "E" => layout.element_size_in_bits = Some(self.paren_u64()?),
                    "S" => layout.memory_space = Some(self.paren_u64()?),
                    other => {
                        return Err(self.err(
                            item.offset,
                            format!("unsupported layout attribute '{other}' (supported: T, E, S)"),
                        ))
                    }
                }
            }
        }
        self.expect(TokenKind::RBrace, "'}' closing the layout")?;
        if !layout.minor_to_major.is_empty() || rank == 0 {
            let mut sorted = layout.minor_to_major.clone();
            sorted.sort_unstable();
            if sorted != (0..rank).collect::<Vec<_>>() {
                return Err(self.err(
                    open.offset,
                    format!(
                        "layout {{{}}} is not a permutation of the {rank} dimensions",
                        layout
                            .minor_to_major
                            .iter()
                            .map(|d| d.to_string())
                            .collect::<Vec<_>>()
                            .join(",")
                    ),
                ));
            }
        }
        Ok(layout)
    }

    fn tile(&mut self) -> Result<Tile> {
        self.expect(TokenKind::LParen, "'('")?;
        let mut tile = Vec::new();
        loop {
            if self.eat(TokenKind::Star)? {
                tile.push(None);
            } else {
                tile.push(Some(self.usize()? as u64));
            }
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect(TokenKind::RParen, "')' closing the tile")?;
        Ok(tile)
    }

    fn paren_u64(&mut self) -> Result<u64> {
        self.expect(TokenKind::LParen, "'('")?;
        let v = self.usize()? as u64;
        self.expect(TokenKind::RParen, "')'")?;
        Ok(v)
    }

    fn program_shape(&mut self) -> Result<ProgramShape> {
        self.expect(TokenKind::LParen, "'(' starting the parameter shapes")?;
        let mut parameters = Vec::new();
        if !self.at(TokenKind::RParen) {
            loop {
                parameters.push(self.shape()?);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RParen, "')'")?;
        self.expect(TokenKind::Arrow, "'->'")?;
        let result = self.shape()?;
        Ok(ProgramShape { parameters, result })
    }

    // ---------------------------------------------------------------- literals

    fn literal(&mut self, shape: &Shape) -> Result<Literal> {
        match shape {
            Shape::Token => Err(self.expected("no literal: token constants do not exist")),
            Shape::Tuple(elements) => {
                if !self.at(TokenKind::LParen) {
                    return Err(self.expected("'(' starting a tuple literal"));
                }
                self.enter_tuple()?;
                self.bump()?;
                let mut parts = Vec::new();
                for (i, element_shape) in elements.iter().enumerate() {
                    if i > 0 {
                        self.expect(TokenKind::Comma, "',' between tuple elements")?;
                    }
                    // XLA may write each element's shape before its values.
                    if self.at_shape_start() && !self.at(TokenKind::LParen) {
                        let written = self.shape_no_layout()?;
                        if !written.compatible(element_shape) {
                            return Err(self.err(
                                self.tok.offset,
                                format!("tuple element {i} is written as {written} but the shape says {element_shape}"),
                            ));
                        }
                    }
                    parts.push(self.literal(element_shape)?);
                }
                self.expect(TokenKind::RParen, "')' closing the tuple literal")?;
                self.depth -= 1;
                let mut lit = Literal::tuple(parts);
                // Keep the declared shape (with its layouts).
                if lit.shape() != shape {
                    lit = Literal::tuple(
                        lit.decompose_tuple()
                            .into_iter()
                            .zip(elements)
                            .map(|(mut l, s)| {
                                if let Shape::Array(a) = s {
                                    l.set_layout(a.layout.clone());
                                }
                                l
                            })
                            .collect(),
                    );
                }
                Ok(lit)
            }
            Shape::Array(array) => {
                if array.dims.is_empty() {
                    let mut literal = Literal::zeros(shape);
                    let v = self.scalar(array.element_type)?;
                    literal.set(0, v)?;
                    return Ok(literal);
                }
                if self.at_word("...") || (self.at(TokenKind::LBrace) && self.is_elided()) {
                    return Err(self.err(
                        self.tok.offset,
                        "constant values were elided ('{...}') when this text was printed; \
                         print the module with large constants to run it",
                    ));
                }
                // Every element takes at least one character of text: a shape that
                // claims more elements than the text has left cannot be satisfied,
                // and must not be allocated before that is found out.
                let remaining = self.lex.source().len().saturating_sub(self.tok.offset);
                let count = if array.dims.contains(&0) {
                    Some(0)
                } else {
                    array
                        .dims
                        .iter()
                        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
                };
                if count.is_none_or(|n| n > remaining) {
                    return Err(self.err(
                        self.tok.offset,
                        format!(
                            "a constant of shape {shape} needs more values than the text holds"
                        ),
                    ));
                }
                let mut literal = Literal::zeros(shape);
                self.literal_values(array, &mut literal)?;
                Ok(literal)
            }
        }
    }

    /// A literal with its shape written in front (see [`parse_literal`]).
    fn shaped_literal(&mut self) -> Result<Literal> {
        if self.at(TokenKind::LParen) {
            // `(shapes) (values)` or `(shaped literal, ...)`: try the first, and on
            // failure read it again as the second.
            let saved = (self.lex.position(), self.tok.clone(), self.depth);
            if let Ok(shape) = self.shape_no_layout() {
                if self.at(TokenKind::LParen) {
                    return self.literal(&shape);
                }
            }
            self.lex.seek(saved.0);
            self.tok = saved.1;
            self.depth = saved.2;
            self.enter_tuple()?;
            self.bump()?;
            let mut elements = Vec::new();
            if !self.at(TokenKind::RParen) {
                loop {
                    elements.push(self.shaped_literal()?);
                    if !self.eat(TokenKind::Comma)? {
                        break;
                    }
                }
            }
            self.expect(TokenKind::RParen, "',' or ')' closing the tuple literal")?;
            self.depth -= 1;
            return Ok(Literal::tuple(elements));
        }
        let shape = self.shape_no_layout()?;
        if shape.is_token() {
            self.expect_word("token")?;
            return Ok(Literal::token());
        }
        self.literal(&shape)
    }

    fn is_elided(&self) -> bool {
        let rest = &self.lex.source()[self.tok.offset..];
        rest.starts_with("{...}")
    }

    /// Reads the nested `{...}` values of an array of rank >= 1 into `literal`, in
    /// row-major order. Iterative, so a constant of any rank cannot overflow the
    /// stack: `open` holds, per open brace, its offset and how many entries it has.
    fn literal_values(&mut self, array: &ArrayShape, literal: &mut Literal) -> Result<()> {
        let rank = array.dims.len();
        let mut open: Vec<(usize, usize)> = Vec::with_capacity(rank);
        let mut next = 0usize;
        let first = self.expect(TokenKind::LBrace, "'{'")?;
        open.push((first.offset, 0));
        while let Some(&(brace, count)) = open.last() {
            let level = open.len() - 1;
            let want = array.dims[level];
            // An entry follows at the start of a brace and after each comma.
            let has_entry = if count == 0 {
                !self.at(TokenKind::RBrace)
            } else {
                self.eat(TokenKind::Comma)?
            };
            if !has_entry {
                self.expect(TokenKind::RBrace, "',' or '}' in literal")?;
                if count != want {
                    return Err(self.err(
                        brace,
                        format!(
                            "dimension {level} of {} has {want} elements, but {count} are written",
                            Shape::Array(array.clone())
                        ),
                    ));
                }
                open.pop();
                continue;
            }
            if count == want {
                return Err(self.err(
                    self.tok.offset,
                    format!(
                        "too many elements in dimension {level} of {}: it has {want}",
                        Shape::Array(array.clone())
                    ),
                ));
            }
            if let Some(top) = open.last_mut() {
                top.1 += 1;
            }
            if level + 1 == rank {
                let v = self.scalar(array.element_type)?;
                literal.set(next, v)?;
                next += 1;
            } else {
                let brace = self.expect(TokenKind::LBrace, "'{'")?;
                open.push((brace.offset, 0));
            }
        }
        Ok(())
    }

    fn scalar(&mut self, ty: ElementType) -> Result<Scalar> {
        if ty.is_complex() {
            self.expect(TokenKind::LParen, "'(' starting a complex value")?;
            let re = self.float_scalar(ty.complex_component())?;
            self.expect(TokenKind::Comma, "','")?;
            let im = self.float_scalar(ty.complex_component())?;
            self.expect(TokenKind::RParen, "')'")?;
            return Ok(match (re, im) {
                (Scalar::F32(re), Scalar::F32(im)) => Scalar::C64(Complex32::new(re, im)),
                (Scalar::F64(re), Scalar::F64(im)) => Scalar::C128(Complex64::new(re, im)),
                _ => return Err(Error::internal("complex parts of the wrong type")),
            });
        }
        if ty.is_float() {
            return self.float_scalar(ty);
        }
        let t = self.word(&format!("a {ty} value"))?;
        let (text, offset) = (t.text.as_str(), t.offset);
        if ty == ElementType::Pred {
            return match text {
                "true" | "1" => Ok(Scalar::Pred(true)),
                "false" | "0" => Ok(Scalar::Pred(false)),
                _ => Err(self.err(
                    offset,
                    format!("expected a pred value (true/false), found '{text}'"),
                )),
            };
        }
        let v: i128 = text
            .parse()
            .map_err(|_| self.err(offset, format!("expected a {ty} value, found '{text}'")))?;
        let out_of_range = || self.err(offset, format!("value {v} is out of range for {ty}"));
        Ok(match ty {
            ElementType::S8 => Scalar::S8(i8::try_from(v).map_err(|_| out_of_range())?),
            ElementType::S16 => Scalar::S16(i16::try_from(v).map_err(|_| out_of_range())?),
            ElementType::S32 => Scalar::S32(i32::try_from(v).map_err(|_| out_of_range())?),
            ElementType::S64 => Scalar::S64(i64::try_from(v).map_err(|_| out_of_range())?),
            ElementType::U8 => Scalar::U8(u8::try_from(v).map_err(|_| out_of_range())?),
            ElementType::U16 => Scalar::U16(u16::try_from(v).map_err(|_| out_of_range())?),
            ElementType::U32 => Scalar::U32(u32::try_from(v).map_err(|_| out_of_range())?),
            t if t.is_narrow() => {
                let w = t.bit_width() as u32;
                let (lo, hi) = match t.is_signed_int() {
                    true => (-(1i128 << (w - 1)), (1i128 << (w - 1)) - 1),
                    false => (0, (1i128 << w) - 1),
                };
                if !(lo..=hi).contains(&v) {
                    return Err(out_of_range());
                }
                Scalar::S64(v as i64)
            }
            _ => Scalar::U64(u64::try_from(v).map_err(|_| out_of_range())?),
        })
    }

    /// A value of a real float type: digits, `inf`, `nan`, or `nan(0x<payload>)`,
    /// which sets the NaN's mantissa bits as XLA prints them.
    fn float_scalar(&mut self, ty: ElementType) -> Result<Scalar> {
        let t = self.word(&format!("a {ty} value"))?;
        let (text, offset) = (t.text.as_str(), t.offset);
        let value = match ty {
            ElementType::F32 => Scalar::F32(self.parse_f32(text, offset)?),
            ElementType::F64 => Scalar::F64(self.parse_f64(text, offset)?),
            ElementType::F16 => Scalar::F16(f16::from_f64(self.parse_f64(text, offset)?)),
            // Narrow floats: the literal rounds the value when it is stored.
            t if t.is_narrow() => Scalar::F64(self.parse_f64(text, offset)?),
            _ => Scalar::BF16(bf16::from_f64(self.parse_f64(text, offset)?)),
        };
        if ty.is_narrow() {
            return Ok(value);
        }
        if !(text.ends_with("nan") && self.at(TokenKind::LParen)) {
            return Ok(value);
        }
        self.bump()?;
        let p = self.word("a NaN payload like 0x1")?;
        self.expect(TokenKind::RParen, "')' after the NaN payload")?;
        let mantissa_bits = ty.float_bits().map_or(0, |b| b.1);
        let payload = p
            .text
            .strip_prefix("0x")
            .and_then(|hex| u64::from_str_radix(hex, 16).ok())
            .filter(|&v| v != 0 && v < 1u64 << mantissa_bits)
            .ok_or_else(|| {
                self.err(
                    p.offset,
                    format!(
                        "NaN payload '{}' is not a non-zero hex number of at most \
                         {mantissa_bits} bits (the mantissa of {ty})",
                        p.text
                    ),
                )
            })?;
        let negative = text.starts_with('-');
        Ok(match ty {
            ElementType::F32 => Scalar::F32(f32::from_bits(
                (negative as u32) << 31 | 0x7f80_0000 | payload as u32,
            )),
            ElementType::F64 => Scalar::F64(f64::from_bits(
                (negative as u64) << 63 | 0x7ff0_0000_0000_0000 | payload,
            )),
            ElementType::F16 => Scalar::F16(f16::from_bits(
                (negative as u16) << 15 | 0x7c00 | payload as u16,
            )),
            _ => Scalar::BF16(bf16::from_bits(
                (negative as u16) << 15 | 0x7f80 | payload as u16,
            )),
        })
    }

    fn special_float(text: &str) -> Option<f64> {
        let (neg, body) = match text.strip_prefix('-') {
            Some(rest) => (true, rest),
            None => (false, text.strip_prefix('+').unwrap_or(text)),
        };
        let v = match body {
            "inf" | "infinity" | "Inf" | "INF" => f64::INFINITY,
            "nan" | "NaN" | "NAN" => f64::NAN,
            _ => return None,
        };
        Some(if neg { -v } else { v })
    }

    fn parse_f64(&self, text: &str, offset: usize) -> Result<f64> {
        if let Some(v) = Self::special_float(text) {
            return Ok(v);
        }
        if !text
            .bytes()
            .next()
            .is_some_and(|b| b.is_ascii_digit() || matches!(b, b'-' | b'+' | b'.'))
        {
            return Err(self.err(
                offset,
                format!("expected a floating-point value, found '{text}'"),
            ));
        }
        text.parse::<f64>().map_err(|_| {
            self.err(
                offset,
                format!("expected a floating-point value, found '{text}'"),
            )
        })
    }

    fn parse_f32(&self, text: &str, offset: usize) -> Result<f32> {
        if let Some(v) = Self::special_float(text) {
            return Ok(v as f32);
        }
        // Parse straight to f32 so the decimal is rounded once.
        self.parse_f64(text, offset)?;
        text.parse::<f32>().map_err(|_| {
            self.err(
                offset,
                format!("expected a floating-point value, found '{text}'"),
            )
        })
    }

    // ---------------------------------------------------------------- module

    fn module(&mut self) -> Result<HloModule> {
        self.expect_word("HloModule")?;
        let (name, _) = self.name("the module name")?;
        // XLA's lexer reads `name:` as one name token, so `HloModule m:` is allowed.
        self.eat(TokenKind::Colon)?;
        let mut config = ModuleConfig::default();
        while self.eat(TokenKind::Comma)? {
            self.module_attr(&mut config)?;
        }
        let stack_frames = self.stack_frame_index()?;
        let mut entry: Option<CompId> = None;
        while !self.at(TokenKind::Eof) {
            let offset = self.tok.offset;
            let (id, is_entry) = self.computation()?;
            if is_entry {
                if entry.is_some() {
                    return Err(self.err(offset, "a second ENTRY computation"));
                }
                entry = Some(id);
            }
        }
        // Every mentioned computation must be defined.
        for (name, offset, def) in &self.comp_slots {
            if def.is_none() {
                return Err(self.err(
                    *offset,
                    format!("computation %{name} is used but never defined"),
                ));
            }
        }
        let Some(&last) = self.definition_order.last() else {
            return Err(self.err(self.tok.offset, "the module has no computations"));
        };
        let entry = entry.unwrap_or(last);
        // Renumber computations into definition order.
        let mut new_id = vec![CompId(0); self.comp_slots.len()];
        for (i, old) in self.definition_order.iter().enumerate() {
            new_id[old.index()] = CompId(i as u32);
        }
        let mut slots: Vec<Option<HloComputation>> =
            self.comp_slots.iter_mut().map(|s| s.2.take()).collect();
        let mut computations = Vec::with_capacity(slots.len());
        for old in &self.definition_order {
            let mut comp = slots[old.index()]
                .take()
                .ok_or_else(|| Error::internal("computation defined twice"))?;
            for instr in &mut comp.instructions {
                instr.op.map_called(|c| new_id[c.index()]);
            }
            computations.push(comp);
        }
        uniquify_instruction_names(&mut computations);
        Ok(HloModule {
            name,
            config,
            computations,
            entry: new_id[entry.index()],
            stack_frames,
        })
    }

    fn module_attr(&mut self, config: &mut ModuleConfig) -> Result<()> {
        let key = self.word("a module attribute")?;
        self.expect(TokenKind::Equals, "'='")?;
        match AttrName::from_name(&key.text) {
            Some(AttrName::EntryComputationLayout) => {
                self.expect(TokenKind::LBrace, "'{'")?;
                config.entry_computation_layout = Some(self.program_shape()?);
                self.expect(TokenKind::RBrace, "'}'")?;
            }
            Some(AttrName::IsScheduled) => {
                let t = self.word("true or false")?;
                config.is_scheduled = self.bool_of(&t)?;
            }
            Some(AttrName::ReplicaCount) => config.replica_count = Some(self.usize()?),
            Some(AttrName::NumPartitions) => config.num_partitions = Some(self.usize()?),
            Some(AttrName::FrontendAttributes) => config.frontend_attributes = self.str_map()?,
            Some(AttrName::InputOutputAlias) => config.input_output_alias = self.io_alias()?,
            Some(AttrName::BufferDonor) => {
                self.expect(TokenKind::LBrace, "'{'")?;
                while !self.at(TokenKind::RBrace) {
                    self.expect(TokenKind::LParen, "'('")?;
                    let p = self.usize()?;
                    self.expect(TokenKind::Comma, "','")?;
                    let index = self.index_path()?;
                    self.expect(TokenKind::RParen, "')'")?;
                    config.buffer_donor.push((p, index));
                    if !self.eat(TokenKind::Comma)? {
                        break;
                    }
                }
                self.expect(TokenKind::RBrace, "'}'")?;
            }
            _ => {
                // Any other attribute (partitioning hints, for one): kept as written.
                let value = match self.tok.kind {
                    TokenKind::LBrace => self.raw_braces()?,
                    TokenKind::Str => format!("\"{}\"", super::lexer::escape(&self.bump()?.text)),
                    _ => self.word("a value")?.text,
                };
                config.other.push((key.text, value));
            }
        }
        Ok(())
    }

    /// `{1,0}` index path of a tuple element (`{}` is the root).
    fn index_path(&mut self) -> Result<Vec<usize>> {
        let t = self.tok.offset;
        self.int_list()?
            .into_iter()
            .map(|v| usize::try_from(v).map_err(|_| self.err(t, "negative tuple index")))
            .collect()
    }

    /// `{output_index: (entry), ...}`: an aliasing list, each entry an output's
    /// index path and, in parentheses, what `entry` reads. A trailing comma is
    /// allowed.
    fn alias_list<T>(
        &mut self,
        mut entry: impl FnMut(&mut Self, Vec<usize>) -> Result<T>,
    ) -> Result<Vec<T>> {
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        while !self.at(TokenKind::RBrace) {
            let output_index = self.index_path()?;
            self.expect(TokenKind::Colon, "':'")?;
            self.expect(TokenKind::LParen, "'('")?;
            out.push(entry(self, output_index)?);
            self.expect(TokenKind::RParen, "')'")?;
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect(TokenKind::RBrace, "'}'")?;
        Ok(out)
    }

    /// The module's `input_output_alias`: `{out: (parameter, index[, kind]), ...}`.
    fn io_alias(&mut self) -> Result<Vec<InputOutputAlias>> {
        self.alias_list(|p, output_index| {
            let parameter_number = p.usize()?;
            p.expect(TokenKind::Comma, "','")?;
            let parameter_index = p.index_path()?;
            let mut must_alias = false;
            if p.eat(TokenKind::Comma)? {
                let kind = p.word("may-alias or must-alias")?;
                must_alias = match kind.text.as_str() {
                    "must-alias" => true,
                    "may-alias" => false,
                    _ => {
                        return Err(p.err(
                            kind.offset,
                            format!(
                                "expected may-alias or must-alias, found {}",
                                kind.describe()
                            ),
                        ))
                    }
                };
            }
            Ok(InputOutputAlias {
                output_index,
                parameter_number,
                parameter_index,
                must_alias,
            })
        })
    }

    fn stack_frame_index(&mut self) -> Result<StackFrameIndex> {
        let mut index = StackFrameIndex::default();
        loop {
            let section = match self.tok.text.as_str() {
                "FileNames" | "FunctionNames" | "FileLocations" | "StackFrames"
                    if self.at(TokenKind::Word) =>
                {
                    self.bump()?.text
                }
                _ => return Ok(index),
            };
            while self.at(TokenKind::Word) && self.tok.text.bytes().all(|b| b.is_ascii_digit()) {
                let id = self.int()?;
                match section.as_str() {
                    "FileNames" => {
                        let s = self.expect(TokenKind::Str, "a file name string")?;
                        index.file_names.push((id, s.text));
                    }
                    "FunctionNames" => {
                        let s = self.expect(TokenKind::Str, "a function name string")?;
                        index.function_names.push((id, s.text));
                    }
                    "FileLocations" => {
                        let fields = self.int_fields()?;
                        let get = |k: &str| {
                            fields
                                .iter()
                                .find(|(n, _)| n == k)
                                .map(|f| f.1)
                                .unwrap_or(0)
                        };
                        index.file_locations.push((
                            id,
                            FileLocation {
                                file_name_id: get("file_name_id"),
                                function_name_id: get("function_name_id"),
                                line: get("line"),
                                end_line: get("end_line"),
                                column: get("column"),
                                end_column: get("end_column"),
                            },
                        ));
                    }
                    _ => {
                        let fields = self.int_fields()?;
                        let get = |k: &str| {
                            fields
                                .iter()
                                .find(|(n, _)| n == k)
                                .map(|f| f.1)
                                .unwrap_or(0)
                        };
                        index.stack_frames.push((
                            id,
                            StackFrame {
                                file_location_id: get("file_location_id"),
                                parent_frame_id: get("parent_frame_id"),
                            },
                        ));
                    }
                }
            }
        }
    }

    /// `{a=1 b=2}`: space-separated integer fields.
    fn int_fields(&mut self) -> Result<Vec<(String, i64)>> {
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        while !self.at(TokenKind::RBrace) {
            let k = self.word("a field name")?;
            self.expect(TokenKind::Equals, "'='")?;
            out.push((k.text, self.int()?));
        }
        self.bump()?;
        Ok(out)
    }

    // ---------------------------------------------------------------- computations

    fn comp_ref(&mut self, name: &str, offset: usize) -> CompId {
        if let Some(&id) = self.comp_ids.get(name) {
            return id;
        }
        let id = CompId(self.comp_slots.len() as u32);
        self.comp_ids.insert(name.to_string(), id);
        self.comp_slots.push((name.to_string(), offset, None));
        id
    }

    fn computation(&mut self) -> Result<(CompId, bool)> {
        let is_entry = if self.at_word("ENTRY") {
            self.bump()?;
            true
        } else {
            false
        };
        let (name, name_offset) = self.name("a computation name (or ENTRY)")?;
        let mut declared_result: Option<Shape> = None;
        if self.at(TokenKind::LParen) {
            // Signature: parameter names and shapes. The parameter instructions are
            // the source of truth; the signature is checked against them below.
            self.bump()?;
            if !self.at(TokenKind::RParen) {
                loop {
                    self.name("a parameter name")?;
                    self.expect(TokenKind::Colon, "':'")?;
                    self.shape()?;
                    if !self.eat(TokenKind::Comma)? {
                        break;
                    }
                }
            }
            self.expect(TokenKind::RParen, "')'")?;
            if self.eat(TokenKind::Arrow)? {
                // `-> f32[] {}`: the braces may be a layout or the (empty) body. Only
                // a layout if the body's `{` still follows.
                let saved = (self.lex.position(), self.tok.clone());
                let mut shape = self.shape()?;
                if !self.at(TokenKind::LBrace) {
                    self.lex.seek(saved.0);
                    self.tok = saved.1;
                    shape = self.shape_no_layout()?;
                }
                declared_result = Some(shape);
            }
        }
        let open = self.expect(TokenKind::LBrace, "'{' starting the computation body")?;
        self.scope.clear();
        self.instrs.clear();
        let mut root: Option<InstrId> = None;
        while !self.at(TokenKind::RBrace) {
            if self.at(TokenKind::Eof) {
                return Err(self.err(
                    open.offset,
                    format!("computation %{name} is missing its closing '}}'"),
                ));
            }
            let (id, is_root, offset) = self.instruction()?;
            if is_root {
                if root.is_some() {
                    return Err(self.err(
                        offset,
                        format!("computation %{name} has two ROOT instructions"),
                    ));
                }
                root = Some(id);
            }
        }
        let instructions = std::mem::take(&mut self.instrs);
        self.bump()?;
        if self.at(TokenKind::Comma) {
            // `, execution_thread="..."` after the body.
            self.bump()?;
            let key = self.word("a computation attribute")?;
            if key.text != "execution_thread" {
                return Err(self.err(
                    key.offset,
                    format!("unknown computation attribute {}", key.describe()),
                ));
            }
            self.expect(TokenKind::Equals, "'='")?;
            self.expect(TokenKind::Str, "a thread name")?;
        }
        if instructions.is_empty() {
            return Err(self.err(
                open.offset,
                format!("computation %{name} has no instructions"),
            ));
        }
        let root = root.unwrap_or(InstrId(instructions.len() as u32 - 1));
        // XLA refuses a signature whose result is not the root's shape (an
        // instruction written without a shape, still an empty tuple here, is
        // inferred later and checked by the verifier).
        if let (Some(declared), Some(r)) = (&declared_result, instructions.get(root.index())) {
            let unknown = matches!(&r.shape, Shape::Tuple(t) if t.is_empty());
            if !unknown && !declared.compatible(&r.shape) {
                return Err(self.err(
                    name_offset,
                    format!(
                        "the signature of computation %{name} returns {}, but its root %{} is {}",
                        declared.without_layout(),
                        r.name,
                        r.shape.without_layout()
                    ),
                ));
            }
        }
        let id = self.comp_ref(&name, name_offset);
        if self.comp_slots[id.index()].2.is_some() {
            return Err(self.err(name_offset, format!("duplicate computation name %{name}")));
        }
        self.comp_slots[id.index()].2 = Some(HloComputation {
            name,
            instructions,
            root,
        });
        self.definition_order.push(id);
        Ok((id, is_entry))
    }

    fn instr_ref(&mut self) -> Result<InstrId> {
        let (name, offset) = self.name("an operand name")?;
        self.scope.get(&name).copied().ok_or_else(|| {
            self.err(offset, format!("unknown instruction %{name} (operands must be defined before use, in the same computation)"))
        })
    }

    /// `[ROOT] name = [shape] opcode(operands), attributes`; adds the instruction
    /// (after any written inline among its operands) and returns its id.
    fn instruction(&mut self) -> Result<(InstrId, bool, usize)> {
        let is_root = if self.at_word("ROOT") {
            self.bump()?;
            true
        } else {
            false
        };
        let (name, offset) = self.name("an instruction name")?;
        self.expect(TokenKind::Equals, "'='")?;
        let id = self.instruction_rhs(name, offset, true)?;
        Ok((id, is_root, offset))
    }

    /// What follows `name =`: an optional shape, the opcode, the operands and (when
    /// `with_attrs`) the attributes. Without a shape, the shape is inferred from
    /// the operands, for the opcodes XLA infers. An instruction written inline as
    /// an operand comes here with an empty name and no attributes; it is named
    /// `<opcode>.anon` (made unique with the module's other names at the end).
    fn instruction_rhs(
        &mut self,
        name: String,
        offset: usize,
        with_attrs: bool,
    ) -> Result<InstrId> {
        // A shape starts with `(` or with a word directly followed by `[`; no opcode
        // does, so a misspelt element type is still reported as a bad shape.
        let next_byte = self
            .lex
            .source()
            .as_bytes()
            .get(self.tok.offset + self.tok.text.len());
        let shape = if self.at(TokenKind::LParen)
            || (self.at(TokenKind::Word) && next_byte == Some(&b'['))
        {
            Some(self.shape()?)
        } else {
            None
        };
        let opcode_tok = self.word("an opcode")?;
        let Some(opcode) = Opcode::from_name(&opcode_tok.text) else {
            return Err(self.err(
                opcode_tok.offset,
                format!("unknown opcode '{}'", opcode_tok.text),
            ));
        };
        if shape.is_none() && !can_infer_shape(opcode) {
            return Err(self.err(
                opcode_tok.offset,
                format!("the shape of {opcode} cannot be inferred: write it before the opcode"),
            ));
        }
        self.expect(TokenKind::LParen, "'(' after the opcode")?;
        let (operands, leaf) = self.operands(opcode, shape.as_ref())?;
        self.expect(TokenKind::RParen, "',' or ')' after the operands")?;
        let mut attrs = if with_attrs {
            self.instruction_attrs()?
        } else {
            Attrs { items: Vec::new() }
        };
        let name = if name.is_empty() {
            format!("{}.anon", opcode.name())
        } else {
            name
        };
        let mut instr = HloInstruction::new(
            name,
            shape.clone().unwrap_or(Shape::Tuple(Vec::new())),
            Op::Tuple,
            operands,
        );
        attrs.take_common(&mut instr);
        let (line, column) = self.lex.line_col(offset);
        instr.source = SourceLocation(Some((
            u32::try_from(line).unwrap_or(u32::MAX),
            u32::try_from(column).unwrap_or(u32::MAX),
        )));
        instr.op = match leaf {
            Some(op) => op,
            None => self.build_op(opcode, &mut attrs, opcode_tok.offset)?,
        };
        if let Some((key, offset, _, _)) = attrs.items.first() {
            return Err(self.err(
                *offset,
                format!("attribute {key} does not apply to {opcode}"),
            ));
        }
        if shape.is_none() {
            instr.shape = self.infer(&instr, opcode_tok.offset)?;
        }
        let id = InstrId(self.instrs.len() as u32);
        // Instructions written inline cannot be referred to by name.
        if with_attrs && self.scope.insert(instr.name.clone(), id).is_some() {
            return Err(self.err(
                offset,
                format!("duplicate instruction name %{}", instr.name),
            ));
        }
        self.instrs.push(instr);
        Ok(id)
    }

    /// The shape of an instruction written without one, from its operands' shapes
    /// and the signatures of the computations it calls (which must be defined
    /// earlier in the text, as XLA requires).
    fn infer(&self, instr: &HloInstruction, at: usize) -> Result<Shape> {
        let operands: Vec<&Shape> = instr
            .operands
            .iter()
            .map(|id| {
                self.instrs
                    .get(id.index())
                    .map(|i| &i.shape)
                    .ok_or_else(|| Error::internal("operand id out of range"))
            })
            .collect::<Result<_>>()?;
        let called = |id: CompId| -> Result<ProgramShape> {
            match self.comp_slots.get(id.index()) {
                Some((_, _, Some(comp))) => Ok(comp.program_shape()),
                Some((name, _, None)) => Err(Error::invalid_argument(format!(
                    "computation %{name} must be defined before an instruction without a shape calls it"
                ))),
                None => Err(Error::internal("unknown computation id")),
            }
        };
        // No declared shape: an empty tuple stands for "unknown", which the rules
        // that read a declared shape (only dot's and convolution's result type among
        // the inferable opcodes) take as "not given".
        crate::shape_inference::infer_shape(
            &instr.op,
            &operands,
            &Shape::Tuple(Vec::new()),
            &called,
        )
        .map_err(|e| {
            self.err(
                at,
                format!(
                    "cannot infer the shape of {}: {}",
                    instr.opcode(),
                    e.message()
                ),
            )
        })
    }

    /// What stands between the opcode's parentheses: the operands, or for a
    /// parameter its number and for a constant its values, which make the whole op.
    /// An operand is a name, optionally after its shape (`f32[] x`), or an
    /// instruction written inline without name or attributes
    /// (`add(f32[] parameter(0), multiply(x, y))`).
    fn operands(
        &mut self,
        opcode: Opcode,
        shape: Option<&Shape>,
    ) -> Result<(Vec<InstrId>, Option<Op>)> {
        let mut operands = Vec::new();
        let leaf = match opcode {
            Opcode::Parameter => Some(Op::Parameter {
                number: self.usize()?,
            }),
            Opcode::Constant => {
                let shape = shape.ok_or_else(|| Error::internal("constant without a shape"))?;
                Some(Op::Constant {
                    literal: self.literal(shape)?,
                })
            }
            _ => {
                if !self.at(TokenKind::RParen) {
                    loop {
                        operands.push(self.operand()?);
                        if !self.eat(TokenKind::Comma)? {
                            break;
                        }
                    }
                }
                None
            }
        };
        Ok((operands, leaf))
    }

    /// One operand: `[shape] name` when a `,` or `)` follows the name, else an
    /// instruction written inline.
    fn operand(&mut self) -> Result<InstrId> {
        let saved = (self.lex.position(), self.tok.clone());
        if self.at_shape_start() {
            // Old style: operands written with their shapes.
            self.shape()?;
        }
        if self.at(TokenKind::Word) {
            let here = self.lex.position();
            let next = self.lex.next_token()?.kind;
            self.lex.seek(here);
            if matches!(next, TokenKind::Comma | TokenKind::RParen) {
                return self.instr_ref();
            }
        }
        // An instruction written inline: read again from the start, shape included.
        self.lex.seek(saved.0);
        self.tok = saved.1;
        if self.nesting >= MAX_INLINE_NESTING {
            return Err(self.err(
                self.tok.offset,
                format!("instructions written inline nest deeper than {MAX_INLINE_NESTING}"),
            ));
        }
        let offset = self.tok.offset;
        self.nesting += 1;
        let id = self.instruction_rhs(String::new(), offset, false);
        self.nesting -= 1;
        id
    }

    /// The `, name=value` list after an instruction's operands, each name at most
    /// once, read before the opcode's builder claims them.
    fn instruction_attrs(&mut self) -> Result<Attrs> {
        let mut attrs = Attrs { items: Vec::new() };
        while self.eat(TokenKind::Comma)? {
            let key = self.word("an attribute name")?;
            self.expect(TokenKind::Equals, "'='")?;
            let name = AttrName::from_name(&key.text)
                .filter(|n| n.form() != ValueForm::Module)
                .ok_or_else(|| self.err(key.offset, format!("unknown attribute '{}'", key.text)))?;
            if attrs.items.iter().any(|(k, _, _, _)| *k == name) {
                return Err(self.err(key.offset, format!("attribute {name} is given twice")));
            }
            let value_offset = self.tok.offset;
            let value = self.attr_value(name)?;
            attrs.items.push((name, key.offset, value_offset, value));
        }
        Ok(attrs)
    }

    // ---------------------------------------------------------------- attributes

    /// Reads an instruction attribute's value in the form the name calls for.
    fn attr_value(&mut self, name: AttrName) -> Result<Value> {
        Ok(match name.form() {
            ValueForm::DimList => Value::Ints(self.int_list()?),
            ValueForm::Word => Value::Word(self.word("a value")?.text),
            ValueForm::Computation => {
                let (name, offset) = self.name("a computation name")?;
                Value::Comp(self.comp_ref(&name, offset))
            }
            ValueForm::Computations => {
                let names = self.word_list()?;
                Value::Comps(
                    names
                        .iter()
                        .map(|t| self.comp_ref(strip_percent(&t.text), t.offset))
                        .collect(),
                )
            }
            ValueForm::Quoted => Value::Str(self.expect(TokenKind::Str, "a string")?.text),
            ValueForm::Structured | ValueForm::Module => self.structured_attr_value(name)?,
        })
    }

    /// Reads the value of an attribute whose syntax is its own.
    fn structured_attr_value(&mut self, name: AttrName) -> Result<Value> {
        use AttrName as N;
        Ok(match name {
            N::Window => Value::Window(self.window()?),
            N::DimLabels => Value::ConvDnums(self.dim_labels()?),
            N::Slice => Value::Slice(self.slice_ranges()?),
            N::Padding => Value::Pad(self.pad_config()?),
            N::Metadata => Value::Metadata(self.metadata()?),
            N::FrontendAttributes => Value::StrMap(self.str_map()?),
            N::Sharding | N::Statistics => Value::Raw(self.raw_braces()?),
            N::BackendConfig => Value::Backend(match self.tok.kind {
                TokenKind::Str => BackendConfig::String(self.bump()?.text),
                TokenKind::LBrace => BackendConfig::Raw(self.raw_braces()?),
                _ => return Err(self.expected("a string or '{' for backend_config")),
            }),
            N::OperandPrecision => {
                Value::Words(self.word_list()?.into_iter().map(|t| t.text).collect())
            }
            N::ParameterReplication => {
                let words = self.word_list()?;
                Value::Bools(
                    words
                        .iter()
                        .map(|t| self.bool_of(t))
                        .collect::<Result<_>>()?,
                )
            }
            N::ReplicaGroups => Value::Groups(self.replica_groups()?),
            N::SourceTargetPairs => Value::Groups(self.int_groups()?),
            // `{1,2}` (gather) or, for an in-place collective permute, a
            // list per pair: `{{1,2},{1,2}}`.
            N::SliceSizes => {
                if self.brace_opens_a_list() {
                    Value::Groups(self.int_groups()?)
                } else {
                    Value::Ints(self.int_list()?)
                }
            }
            N::ControlPredecessors => Value::InstrRefs(self.braced_list(Self::instr_ref, "'}'")?),
            N::OperandLayoutConstraints => Value::Shapes(self.braced_list(Self::shape, "'}'")?),
            N::OutfeedShape => Value::Shape(self.shape()?),
            N::OutputToOperandAliasing => Value::Aliasing(self.output_operand_aliasing()?),
            other => {
                return Err(Error::internal(format!(
                    "attribute {other} has no reader of its own"
                )))
            }
        })
    }

    /// A custom call's `{output_index: (operand, operand_index), ...}`.
    fn output_operand_aliasing(&mut self) -> Result<Vec<OutputOperandAlias>> {
        self.alias_list(|p, output_index| {
            let operand = p.usize()?;
            p.expect(TokenKind::Comma, "','")?;
            let operand_index = p.index_path()?;
            Ok(OutputOperandAlias {
                output_index,
                operand,
                operand_index,
            })
        })
    }

    fn str_map(&mut self) -> Result<Vec<(String, String)>> {
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        if !self.at(TokenKind::RBrace) {
            loop {
                let key = match self.tok.kind {
                    TokenKind::Str | TokenKind::Word => self.bump()?.text,
                    _ => return Err(self.expected("an attribute key")),
                };
                self.expect(TokenKind::Equals, "'='")?;
                let value = match self.tok.kind {
                    TokenKind::Str | TokenKind::Word => self.bump()?.text,
                    TokenKind::LBrace => self.raw_braces()?,
                    _ => return Err(self.expected("an attribute value")),
                };
                out.push((key, value));
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBrace, "',' or '}'")?;
        Ok(out)
    }

    fn metadata(&mut self) -> Result<OpMetadata> {
        use MetadataField as F;
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut m = OpMetadata::default();
        while !self.at(TokenKind::RBrace) {
            let key = self.word("a metadata field")?;
            self.expect(TokenKind::Equals, "'='")?;
            let value = match self.tok.kind {
                TokenKind::Str | TokenKind::Word => self.bump()?,
                _ => return Err(self.expected("a metadata value")),
            };
            let int = |p: &Self| p.int_of(&value).map(Some);
            match MetadataField::from_name(&key.text) {
                Some(F::OpType) => m.op_type = Some(value.text),
                Some(F::OpName) => m.op_name = Some(value.text),
                Some(F::SourceFile) => m.source_file = Some(value.text),
                Some(F::SourceLine) => m.source_line = int(self)?,
                Some(F::SourceEndLine) => m.source_end_line = int(self)?,
                Some(F::SourceColumn) => m.source_column = int(self)?,
                Some(F::SourceEndColumn) => m.source_end_column = int(self)?,
                Some(F::StackFrameId) => m.stack_frame_id = int(self)?,
                Some(F::DeduplicatedName) => m.deduplicated_name = Some(value.text),
                Some(F::SchedulingName) => m.scheduling_name = Some(value.text),
                Some(F::PreserveLayout) => m.preserve_layout = Some(self.bool_of(&value)?),
                None => {
                    return Err(
                        self.err(key.offset, format!("unknown metadata field '{}'", key.text))
                    )
                }
            }
        }
        self.bump()?;
        Ok(m)
    }

    /// `{size=3x3 stride=1x1 pad=0_0x1_1 lhs_dilate=1x1 rhs_dilate=1x1 rhs_reversal=0x1}`.
    fn window(&mut self) -> Result<Window> {
        let open = self.expect(TokenKind::LBrace, "'{'")?;
        let mut fields: Vec<(String, usize, Vec<String>)> = Vec::new();
        while !self.at(TokenKind::RBrace) {
            let key = self
                .word("a window field (size, stride, pad, lhs_dilate, rhs_dilate, rhs_reversal)")?;
            self.expect(TokenKind::Equals, "'='")?;
            let value = self.word("a window value like 3x3")?;
            fields.push((
                key.text,
                value.offset,
                value.text.split('x').map(str::to_string).collect(),
            ));
        }
        self.bump()?;
        let Some(rank) = fields.iter().find(|f| f.0 == "size").map(|f| f.2.len()) else {
            if fields.is_empty() {
                return Ok(Window::default());
            }
            return Err(self.err(open.offset, "window has no size"));
        };
        let mut dims = vec![WindowDim::of_size(0); rank];
        for (key, offset, parts) in &fields {
            if parts.len() != rank {
                return Err(self.err(
                    *offset,
                    format!(
                        "window {key} has {} dimensions, size has {rank}",
                        parts.len()
                    ),
                ));
            }
            for (d, part) in dims.iter_mut().zip(parts) {
                match key.as_str() {
                    "size" => d.size = self.usize_of(part, *offset)?,
                    "stride" => d.stride = self.usize_of(part, *offset)?,
                    "lhs_dilate" => d.base_dilation = self.usize_of(part, *offset)?,
                    "rhs_dilate" => d.window_dilation = self.usize_of(part, *offset)?,
                    "rhs_reversal" => d.window_reversal = self.usize_of(part, *offset)? != 0,
                    "pad" => {
                        let (lo, hi) = part.split_once('_').ok_or_else(|| {
                            self.err(*offset, format!("window padding '{part}' is not low_high"))
                        })?;
                        d.padding_low = self.i64_of(lo, *offset)?;
                        d.padding_high = self.i64_of(hi, *offset)?;
                    }
                    other => {
                        return Err(self.err(*offset, format!("unknown window field '{other}'")))
                    }
                }
            }
        }
        Ok(Window { dims })
    }

    fn i64_of(&self, text: &str, offset: usize) -> Result<i64> {
        text.parse::<i64>()
            .map_err(|_| self.err(offset, format!("expected an integer, found '{text}'")))
    }

    /// `b01f_01io->b01f`.
    fn dim_labels(&mut self) -> Result<ConvDimensionNumbers> {
        let lhs_kernel = self.word("convolution dim_labels like b01f_01io->b01f")?;
        self.expect(TokenKind::Arrow, "'->' in dim_labels")?;
        let out = self.word("output dim labels")?;
        let Some((lhs, kernel)) = lhs_kernel.text.split_once('_') else {
            return Err(self.err(
                lhs_kernel.offset,
                format!(
                    "dim_labels '{}' lacks '_' between input and kernel labels",
                    lhs_kernel.text
                ),
            ));
        };
        let offset = lhs_kernel.offset;
        let n = lhs.len();
        if kernel.len() != n || out.text.len() != n || n < 2 {
            return Err(self.err(
                offset,
                "dim_labels of input, kernel and output must have the same rank (at least 2)",
            ));
        }
        let spatial_index = |c: char| -> Option<usize> {
            if c.is_ascii_digit() {
                return Some(c as usize - '0' as usize);
            }
            (10..40).find(|&i| spatial_label(i) == c)
        };
        let parse = |labels: &str,
                     a: char,
                     b: char|
         -> std::result::Result<(usize, usize, Vec<usize>), String> {
            let (mut pa, mut pb) = (None, None);
            let mut spatial = vec![None; n - 2];
            for (dim, c) in labels.chars().enumerate() {
                if c == a && pa.is_none() {
                    pa = Some(dim);
                } else if c == b && pb.is_none() {
                    pb = Some(dim);
                } else if let Some(i) =
                    spatial_index(c).filter(|&i| i < n - 2 && spatial[i].is_none())
                {
                    spatial[i] = Some(dim);
                } else {
                    return Err(format!("unexpected label '{c}' in '{labels}'"));
                }
            }
            match (pa, pb, spatial.iter().copied().collect::<Option<Vec<_>>>()) {
                (Some(pa), Some(pb), Some(s)) => Ok((pa, pb, s)),
                _ => Err(format!(
                    "labels '{labels}' need {a}, {b} and spatial 0..{}",
                    n - 2
                )),
            }
        };
        let (ib, ifeat, isp) = parse(lhs, 'b', 'f').map_err(|m| self.err(offset, m))?;
        let (ki, ko, ksp) = parse(kernel, 'i', 'o').map_err(|m| self.err(offset, m))?;
        let (ob, of, osp) = parse(&out.text, 'b', 'f').map_err(|m| self.err(out.offset, m))?;
        Ok(ConvDimensionNumbers {
            input_batch_dimension: ib,
            input_feature_dimension: ifeat,
            input_spatial_dimensions: isp,
            kernel_input_feature_dimension: ki,
            kernel_output_feature_dimension: ko,
            kernel_spatial_dimensions: ksp,
            output_batch_dimension: ob,
            output_feature_dimension: of,
            output_spatial_dimensions: osp,
        })
    }

    /// `{[0:10:2], [1:5]}`.
    fn slice_ranges(&mut self) -> Result<Vec<SliceDim>> {
        self.braced_list(Self::slice_range, "'}'")
    }

    /// `[start:limit]` or `[start:limit:stride]`.
    fn slice_range(&mut self) -> Result<SliceDim> {
        self.expect(TokenKind::LBracket, "'[' starting a slice range")?;
        let start = self.usize()?;
        self.expect(TokenKind::Colon, "':'")?;
        let limit = self.usize()?;
        let stride = if self.eat(TokenKind::Colon)? {
            self.usize()?
        } else {
            1
        };
        self.expect(TokenKind::RBracket, "']'")?;
        Ok(SliceDim {
            start,
            limit,
            stride,
        })
    }

    /// `0_0x1_1_2`: low_high[_interior] per dimension.
    fn pad_config(&mut self) -> Result<Vec<PadDim>> {
        let t = self.word("a padding config like 0_0x1_1")?;
        let mut out = Vec::new();
        for part in t.text.split('x') {
            let nums: Vec<&str> = part.split('_').collect();
            if nums.len() != 2 && nums.len() != 3 {
                return Err(self.err(
                    t.offset,
                    format!("padding '{part}' is not low_high or low_high_interior"),
                ));
            }
            let interior = if nums.len() == 3 {
                nums[2].parse::<usize>().map_err(|_| {
                    self.err(
                        t.offset,
                        format!(
                            "interior padding '{}' must be a non-negative integer",
                            nums[2]
                        ),
                    )
                })?
            } else {
                0
            };
            out.push(PadDim {
                low: self.i64_of(nums[0], t.offset)?,
                high: self.i64_of(nums[1], t.offset)?,
                interior,
            });
        }
        Ok(out)
    }

    /// `{{0,1},{2,3}}` as groups of non-negative integers.
    fn int_groups(&mut self) -> Result<Vec<Vec<usize>>> {
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut out = Vec::new();
        if !self.at(TokenKind::RBrace) {
            loop {
                let offset = self.tok.offset;
                let group = self.int_list()?;
                out.push(
                    group
                        .into_iter()
                        .map(|v| usize::try_from(v).map_err(|_| self.err(offset, "negative id")))
                        .collect::<Result<_>>()?,
                );
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBrace, "'}'")?;
        Ok(out)
    }

    /// `{{0,1},{2,3}}`, the iota form `[2,2]<=[4]` / `[2,2]<=[2,2]T(1,0)`, or
    /// the mesh-axes form `mesh['x'=2,'y'=2] {'x'}`; the compact forms are
    /// expanded to their groups (and printed as explicit lists).
    fn replica_groups(&mut self) -> Result<Vec<Vec<usize>>> {
        if self.at_word("mesh") || self.at_word("maximal_mesh") {
            return self.mesh_replica_groups();
        }
        if !self.at(TokenKind::LBracket) {
            return self.int_groups();
        }
        let offset = self.tok.offset;
        let group_dims = self.bracket_list()?;
        self.expect(TokenKind::LessEq, "'<='")?;
        let reshape = self.bracket_list()?;
        let mut perm: Vec<usize> = (0..reshape.len()).collect();
        if self.at_word("T") {
            self.bump()?;
            self.expect(TokenKind::LParen, "'('")?;
            perm.clear();
            loop {
                perm.push(self.usize()?);
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
            self.expect(TokenKind::RParen, "')'")?;
        }
        let fits = reshape
            .iter()
            .try_fold(1usize, |acc, &d| acc.checked_mul(d))
            .is_some_and(|n| n <= MAX_IOTA_DEVICES);
        if !fits {
            return Err(self.err(
                offset,
                format!("iota replica groups name more than {MAX_IOTA_DEVICES} devices"),
            ));
        }
        let ids = crate::sharding::iota_ids(&reshape, &perm)
            .map_err(|e| self.err(offset, format!("iota replica groups: {}", e.message())))?;
        if group_dims.len() != 2 || group_dims[0].checked_mul(group_dims[1]) != Some(ids.len()) {
            return Err(self.err(offset, "malformed iota replica groups"));
        }
        Ok(ids
            .chunks(group_dims[1].max(1))
            .map(|c| c.to_vec())
            .collect())
    }

    /// XLA's `MeshAxesReplicaGroupList`: `mesh['a'=2,'b'=2] {'a'}`, with an
    /// optional `, device_ids=(...)` after the mesh (a device order other than
    /// iota) and sub-axes `'a':(1)2` (the size-2 part of axis `a` whose inner
    /// parts have product 1). The groups are the devices that differ only
    /// along the listed axes, in the listed axes' order, as XLA's
    /// `flattened_replica_groups` computes them. `maximal_mesh[device_id=N] {}`
    /// is the one-device group.
    fn mesh_replica_groups(&mut self) -> Result<Vec<Vec<usize>>> {
        let offset = self.tok.offset;
        let bad = |p: &Self, m: String| p.err(offset, format!("mesh replica groups: {m}"));
        if self.at_word("maximal_mesh") {
            self.bump()?;
            self.expect(TokenKind::LBracket, "'['")?;
            self.expect_word("device_id")?;
            self.expect(TokenKind::Equals, "'='")?;
            let device = self.usize()?;
            self.expect(TokenKind::RBracket, "']'")?;
            self.expect(TokenKind::LBrace, "'{'")?;
            self.expect(TokenKind::RBrace, "'}'")?;
            return Ok(vec![vec![device]]);
        }
        self.expect_word("mesh")?;
        self.expect(TokenKind::LBracket, "'['")?;
        let mut names: Vec<String> = Vec::new();
        let mut sizes: Vec<usize> = Vec::new();
        loop {
            let t = self.expect(TokenKind::Str, "a quoted mesh axis name")?;
            self.expect(TokenKind::Equals, "'='")?;
            let size = self.usize()?;
            if size == 0 || names.contains(&t.text) {
                return Err(bad(self, format!("axis '{}' is empty or repeated", t.text)));
            }
            names.push(t.text);
            sizes.push(size);
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect(TokenKind::RBracket, "']'")?;
        let total = sizes
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .filter(|&n| n <= MAX_IOTA_DEVICES)
            .ok_or_else(|| bad(self, format!("more than {MAX_IOTA_DEVICES} devices")))?;
        let mut device_ids: Vec<usize> = (0..total).collect();
        if self.eat(TokenKind::Comma)? {
            self.expect_word("device_ids")?;
            self.expect(TokenKind::Equals, "'='")?;
            self.expect(TokenKind::LParen, "'('")?;
            // The ids in row-major order; nested braces or brackets, if the
            // printer groups them, carry no information.
            let mut ids = Vec::new();
            while !self.at(TokenKind::RParen) {
                match self.tok.kind {
                    TokenKind::Comma
                    | TokenKind::LBrace
                    | TokenKind::RBrace
                    | TokenKind::LBracket
                    | TokenKind::RBracket => {
                        self.bump()?;
                    }
                    _ => ids.push(self.usize()?),
                }
            }
            self.expect(TokenKind::RParen, "')'")?;
            let mut sorted = ids.clone();
            sorted.sort_unstable();
            if sorted != device_ids {
                return Err(bad(
                    self,
                    format!("device_ids {ids:?} are not a permutation of 0..{total}"),
                ));
            }
            device_ids = ids;
        }
        // The grouped axes: (mesh axis, Some((pre-size, size)) for a sub-axis).
        self.expect(TokenKind::LBrace, "'{'")?;
        let mut axes: Vec<(usize, Option<(usize, usize)>)> = Vec::new();
        if !self.at(TokenKind::RBrace) {
            loop {
                let t = self.expect(TokenKind::Str, "a quoted mesh axis name")?;
                let axis = names
                    .iter()
                    .position(|n| *n == t.text)
                    .ok_or_else(|| bad(self, format!("no mesh axis '{}'", t.text)))?;
                let sub = if self.eat(TokenKind::Colon)? {
                    self.expect(TokenKind::LParen, "'('")?;
                    let pre = self.usize()?;
                    self.expect(TokenKind::RParen, "')'")?;
                    let size = self.usize()?;
                    let fits = pre.checked_mul(size).is_some_and(|n| {
                        pre > 0 && size > 1 && n <= sizes[axis] && sizes[axis].is_multiple_of(n)
                    });
                    if !fits {
                        return Err(bad(
                            self,
                            format!(
                                "sub-axis '{}':({pre}){size} does not divide the axis of {}",
                                t.text, sizes[axis]
                            ),
                        ));
                    }
                    Some((pre, size))
                } else {
                    None
                };
                axes.push((axis, sub));
                if !self.eat(TokenKind::Comma)? {
                    break;
                }
            }
        }
        self.expect(TokenKind::RBrace, "'}'")?;
        mesh_groups(&sizes, &device_ids, &axes).map_err(|m| bad(self, m))
    }

    fn bracket_list(&mut self) -> Result<Vec<usize>> {
        self.expect(TokenKind::LBracket, "'['")?;
        let mut out = Vec::new();
        loop {
            out.push(self.usize()?);
            if !self.eat(TokenKind::Comma)? {
                break;
            }
        }
        self.expect(TokenKind::RBracket, "']'")?;
        Ok(out)
    }

    // ---------------------------------------------------------------- ops

    /// Builds the op of an instruction other than a parameter or constant, claiming
    /// the attributes its opcode takes. Each family of ops has its own builder, and
    /// the first that knows the opcode builds it.
    fn build_op(&self, opcode: Opcode, attrs: &mut Attrs, at: usize) -> Result<Op> {
        if let Some(u) = UnaryOp::from_name(opcode.name()) {
            return Ok(Op::Unary(u));
        }
        if let Some(b) = BinaryOp::from_name(opcode.name()) {
            return Ok(Op::Binary(b));
        }
        let mut claim = Claim {
            p: self,
            attrs,
            opcode,
            at,
        };
        let families = [
            Claim::elementwise_op,
            Claim::generator_op,
            Claim::data_movement_op,
            Claim::gather_scatter_op,
            Claim::linear_algebra_op,
            Claim::reduction_op,
            Claim::control_flow_op,
            Claim::custom_call_op,
            Claim::collective_op,
            Claim::transfer_op,
        ];
        for build in families {
            if let Some(op) = build(&mut claim)? {
                return Ok(op);
            }
        }
        match opcode {
            Opcode::Parameter | Opcode::Constant => Err(Error::internal(
                "parameter and constant are built by the caller",
            )),
            other => Err(self.err(
                at,
                format!("opcode {other} is not an elementwise op and has no builder"),
            )),
        }
    }
}

impl Attrs {
    /// Removes an attribute, returning where its value starts and the value.
    fn take(&mut self, key: AttrName) -> Option<(usize, Value)> {
        let i = self.items.iter().position(|(k, _, _, _)| *k == key)?;
        let (_, _, offset, value) = self.items.remove(i);
        Some((offset, value))
    }

    /// Moves the attributes any instruction may carry onto it.
    fn take_common(&mut self, instr: &mut HloInstruction) {
        if let Some((_, Value::Metadata(m))) = self.take(AttrName::Metadata) {
            instr.metadata = Some(m);
        }
        if let Some((_, Value::StrMap(m))) = self.take(AttrName::FrontendAttributes) {
            instr.frontend_attributes = m;
        }
        if let Some((_, Value::Raw(s))) = self.take(AttrName::Sharding) {
            instr.sharding = Some(s);
        }
        if let Some((_, Value::Raw(s))) = self.take(AttrName::Statistics) {
            instr.statistics = Some(s);
        }
        if let Some((_, Value::Backend(b))) = self.take(AttrName::BackendConfig) {
            instr.backend_config = Some(b);
        }
        if let Some((_, Value::InstrRefs(r))) = self.take(AttrName::ControlPredecessors) {
            instr.control_predecessors = r;
        }
        if let Some((_, Value::Bools(b))) = self.take(AttrName::ParameterReplication) {
            instr.parameter_replication = Some(b);
        }
    }
}

/// An instruction's attributes while its opcode's builder claims them, with what
/// an error needs: the parser (offsets become line and column), the opcode and
/// the offset it was written at, where a missing attribute is reported.
struct Claim<'c, 'p> {
    p: &'c Parser<'p>,
    attrs: &'c mut Attrs,
    opcode: Opcode,
    at: usize,
}

/// The ops of each family, built from their attributes. A builder answers `None`
/// for an opcode outside its family.
impl Claim<'_, '_> {
    /// Elementwise ops beyond the plain unary and binary ones.
    fn elementwise_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Compare => Op::Compare {
                direction: self.req_enum(N::Direction, ComparisonDirection::from_name)?,
                compare_type: self.opt_enum(N::Type, ComparisonType::from_name)?,
            },
            Opcode::Select => Op::Select,
            Opcode::Clamp => Op::Clamp,
            Opcode::Convert => Op::Convert,
            Opcode::BitcastConvert => Op::BitcastConvert,
            Opcode::StochasticConvert => Op::StochasticConvert,
            Opcode::ReducePrecision => Op::ReducePrecision {
                exponent_bits: self.req_u32(N::ExponentBits)?,
                mantissa_bits: self.req_u32(N::MantissaBits)?,
            },
            Opcode::Map => Op::Map {
                dimensions: self.opt_dims(N::Dimensions)?.unwrap_or_default(),
                to_apply: self.req_comp(N::ToApply)?,
            },
            _ => return Ok(None),
        }))
    }

    /// Ops that make values from no array operand: iotas, ids, tokens, random bits.
    fn generator_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Iota => Op::Iota {
                dimension: self.req_usize(N::IotaDimension)?,
            },
            Opcode::ReplicaId => Op::ReplicaId,
            Opcode::PartitionId => Op::PartitionId,
            Opcode::AfterAll => Op::AfterAll,
            Opcode::Rng => Op::Rng {
                distribution: self.req_enum(N::Distribution, RandomDistribution::from_name)?,
            },
            Opcode::RngBitGenerator => Op::RngBitGenerator {
                algorithm: self
                    .opt_enum(N::Algorithm, RandomAlgorithm::from_name)?
                    .unwrap_or(RandomAlgorithm::Default),
            },
            Opcode::RngGetAndUpdateState => Op::RngGetAndUpdateState {
                delta: self.req_i64(N::Delta)?,
            },
            _ => return Ok(None),
        }))
    }

    /// Ops that move, copy or reinterpret elements without computing on them.
    fn data_movement_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Broadcast => Op::Broadcast {
                dimensions: self.opt_dims(N::Dimensions)?.unwrap_or_default(),
            },
            Opcode::Reshape => {
                // `inferred_dimension=` names the output dimension a dynamic
                // input dimension splits into. It is read and dropped: XLA
                // CPU (compiling through StableHLO, which has no such
                // attribute) computes these reshapes without it, and the
                // dynamic-shape pass follows XLA CPU's results.
                self.opt_i64(N::InferredDimension)?;
                Op::Reshape
            }
            Opcode::DynamicReshape => Op::DynamicReshape,
            Opcode::Transpose => Op::Transpose {
                dimensions: self.req_dims(N::Dimensions)?,
            },
            Opcode::Slice => Op::Slice {
                slice: match self.attrs.take(N::Slice) {
                    Some((_, Value::Slice(s))) => s,
                    _ => return Err(self.missing(N::Slice)),
                },
            },
            Opcode::DynamicSlice => Op::DynamicSlice {
                sizes: self.req_dims(N::DynamicSliceSizes)?,
            },
            Opcode::DynamicUpdateSlice => Op::DynamicUpdateSlice,
            Opcode::Concatenate => Op::Concatenate {
                dimension: self.req_single_dim(N::Dimensions)?,
            },
            Opcode::Pad => Op::Pad {
                config: match self.attrs.take(N::Padding) {
                    Some((_, Value::Pad(c))) => c,
                    _ => return Err(self.missing(N::Padding)),
                },
            },
            Opcode::Reverse => Op::Reverse {
                dimensions: self.req_dims(N::Dimensions)?,
            },
            Opcode::Copy => Op::Copy,
            Opcode::Bitcast => Op::Bitcast,
            Opcode::GetDimensionSize => Op::GetDimensionSize {
                dimension: self.req_single_dim(N::Dimensions)?,
            },
            Opcode::SetDimensionSize => Op::SetDimensionSize {
                dimension: self.req_single_dim(N::Dimensions)?,
            },
            Opcode::CopyStart => Op::CopyStart {
                cross_program_prefetch_index: self.opt_i64(N::CrossProgramPrefetchIndex)?,
            },
            Opcode::CopyDone => Op::CopyDone,
            _ => return Ok(None),
        }))
    }

    fn gather_scatter_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Gather => Op::Gather {
                dnums: GatherDimensionNumbers {
                    offset_dims: self.req_dims(N::OffsetDims)?,
                    collapsed_slice_dims: self.req_dims(N::CollapsedSliceDims)?,
                    start_index_map: self.req_dims(N::StartIndexMap)?,
                    operand_batching_dims: self
                        .opt_dims(N::OperandBatchingDims)?
                        .unwrap_or_default(),
                    start_indices_batching_dims: self
                        .opt_dims(N::StartIndicesBatchingDims)?
                        .unwrap_or_default(),
                    index_vector_dim: self.req_usize(N::IndexVectorDim)?,
                },
                slice_sizes: self.req_dims(N::SliceSizes)?,
                indices_are_sorted: self.opt_bool(N::IndicesAreSorted)?.unwrap_or(false),
            },
            Opcode::Scatter => Op::Scatter {
                dnums: ScatterDimensionNumbers {
                    update_window_dims: self.req_dims(N::UpdateWindowDims)?,
                    inserted_window_dims: self.req_dims(N::InsertedWindowDims)?,
                    scatter_dims_to_operand_dims: self.req_dims(N::ScatterDimsToOperandDims)?,
                    input_batching_dims: self.opt_dims(N::InputBatchingDims)?.unwrap_or_default(),
                    scatter_indices_batching_dims: self
                        .opt_dims(N::ScatterIndicesBatchingDims)?
                        .unwrap_or_default(),
                    index_vector_dim: self.req_usize(N::IndexVectorDim)?,
                },
                indices_are_sorted: self.opt_bool(N::IndicesAreSorted)?.unwrap_or(false),
                unique_indices: self.opt_bool(N::UniqueIndices)?.unwrap_or(false),
                to_apply: self.req_comp(N::ToApply)?,
            },
            _ => return Ok(None),
        }))
    }

    /// Dot, convolution, FFT and the matrix decompositions.
    fn linear_algebra_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Dot => Op::Dot {
                dnums: DotDimensionNumbers {
                    lhs_batch_dims: self.opt_dims(N::LhsBatchDims)?.unwrap_or_default(),
                    rhs_batch_dims: self.opt_dims(N::RhsBatchDims)?.unwrap_or_default(),
                    lhs_contracting_dims: self.opt_dims(N::LhsContractingDims)?.unwrap_or_default(),
                    rhs_contracting_dims: self.opt_dims(N::RhsContractingDims)?.unwrap_or_default(),
                },
                precision: self.precision()?,
                // `unset` is what no attribute means.
                algorithm: match self.take_word(N::Algorithm) {
                    None => None,
                    Some((_, w)) if w == "unset" => None,
                    Some((o, w)) => Some(DotAlgorithm::from_name(&w).ok_or_else(|| {
                        self.p.err(o, format!("'{w}' is not a dot algorithm (dot_bf16_bf16_f32, dot_tf32_tf32_f32, dot_f32_f32_f32, ...)"))
                    })?),
                },
            },
            Opcode::Convolution => Op::Convolution {
                window: match self.attrs.take(N::Window) {
                    Some((_, Value::Window(w))) => w,
                    _ => Window::default(),
                },
                dnums: match self.attrs.take(N::DimLabels) {
                    Some((_, Value::ConvDnums(d))) => d,
                    _ => return Err(self.missing(N::DimLabels)),
                },
                feature_group_count: self.opt_usize(N::FeatureGroupCount)?.unwrap_or(1),
                batch_group_count: self.opt_usize(N::BatchGroupCount)?.unwrap_or(1),
                precision: self.precision()?,
            },
            Opcode::Fft => Op::Fft {
                fft_type: self.req_enum(N::FftType, FftType::from_name)?,
                fft_length: self.req_dims(N::FftLength)?,
            },
            Opcode::Cholesky => Op::Cholesky {
                lower: self.opt_bool(N::Lower)?.unwrap_or(false),
            },
            Opcode::TriangularSolve => Op::TriangularSolve {
                options: TriangularSolveOptions {
                    left_side: self.opt_bool(N::LeftSide)?.unwrap_or(false),
                    lower: self.opt_bool(N::Lower)?.unwrap_or(false),
                    unit_diagonal: self.opt_bool(N::UnitDiagonal)?.unwrap_or(false),
                    transpose_a: self
                        .opt_enum(N::TransposeA, TriangularTranspose::from_name)?
                        .unwrap_or(TriangularTranspose::NoTranspose),
                },
            },
            _ => return Ok(None),
        }))
    }

    /// Reductions, windowed reductions, sorting and batch normalization.
    fn reduction_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Reduce => Op::Reduce {
                dimensions: self.req_dims(N::Dimensions)?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::ReduceWindow => Op::ReduceWindow {
                window: self.req_window()?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::SelectAndScatter => Op::SelectAndScatter {
                window: self.req_window()?,
                select: self.req_comp(N::Select)?,
                scatter: self.req_comp(N::Scatter)?,
            },
            Opcode::Sort => Op::Sort {
                dimension: self.req_single_dim(N::Dimensions)?,
                is_stable: self.opt_bool(N::IsStable)?.unwrap_or(false),
                comparator: self.req_comp(N::ToApply)?,
            },
            Opcode::Scan => Op::Scan {
                dimension: self.req_single_dim(N::Dimensions)?,
                num_carries: self.req_usize(N::NumCarries)?,
                is_reverse: self.opt_bool(N::IsReverse)?.unwrap_or(false),
                is_associative: self.opt_bool(N::IsAssociative)?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::TopK => Op::TopK {
                k: self.req_usize(N::K)?,
                largest: self.opt_bool(N::Largest)?.unwrap_or(true),
            },
            Opcode::BatchNormTraining | Opcode::BatchNormInference | Opcode::BatchNormGrad => {
                let epsilon = self.req_f32(N::Epsilon)?;
                let feature_index = self.req_usize(N::FeatureIndex)?;
                match self.opcode {
                    Opcode::BatchNormTraining => Op::BatchNormTraining {
                        epsilon,
                        feature_index,
                    },
                    Opcode::BatchNormInference => Op::BatchNormInference {
                        epsilon,
                        feature_index,
                    },
                    _ => Op::BatchNormGrad {
                        epsilon,
                        feature_index,
                    },
                }
            }
            _ => return Ok(None),
        }))
    }

    /// Tuples, calls of other computations, and ordering-only ops.
    fn control_flow_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Tuple => Op::Tuple,
            Opcode::GetTupleElement => Op::GetTupleElement {
                index: self.req_usize(N::Index)?,
            },
            Opcode::While => Op::While {
                condition: self.req_comp(N::Condition)?,
                body: self.req_comp(N::Body)?,
            },
            Opcode::Conditional => {
                if let Some((_, Value::Comps(branches))) = self.attrs.take(N::BranchComputations) {
                    Op::Conditional { branches }
                } else {
                    let t = self.req_comp(N::TrueComputation)?;
                    let f = self.req_comp(N::FalseComputation)?;
                    Op::Conditional {
                        branches: vec![t, f],
                    }
                }
            }
            Opcode::Call => Op::Call {
                to_apply: self.req_comp(N::ToApply)?,
                is_composite: self.opt_bool(N::IsComposite)?.unwrap_or(false),
            },
            Opcode::Fusion => Op::Fusion {
                kind: self.req_enum(N::Kind, FusionKind::from_name)?,
                calls: self.req_comp(N::Calls)?,
            },
            Opcode::AsyncStart => Op::AsyncStart {
                calls: self.req_comp(N::Calls)?,
                execution_thread: self.opt_str(N::AsyncExecutionThread),
            },
            Opcode::AsyncUpdate => Op::AsyncUpdate,
            Opcode::AsyncDone => Op::AsyncDone,
            Opcode::OptimizationBarrier => Op::OptimizationBarrier,
            Opcode::AddDependency => Op::AddDependency,
            _ => return Ok(None),
        }))
    }

    fn custom_call_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        if self.opcode != Opcode::CustomCall {
            return Ok(None);
        }
        Ok(Some(Op::CustomCall(Box::new(CustomCallAttrs {
            target: match self.attrs.take(N::CustomCallTarget) {
                Some((_, Value::Str(s))) => s,
                _ => return Err(self.missing(N::CustomCallTarget)),
            },
            api_version: self
                .opt_enum(N::ApiVersion, CustomCallApiVersion::from_name)?
                .unwrap_or(CustomCallApiVersion::Original),
            called_computations: match self.attrs.take(N::CalledComputations) {
                Some((_, Value::Comps(c))) => c,
                _ => Vec::new(),
            },
            has_side_effect: self.opt_bool(N::CustomCallHasSideEffect)?.unwrap_or(false),
            operand_layout_constraints: match self.attrs.take(N::OperandLayoutConstraints) {
                Some((_, Value::Shapes(s))) => Some(s),
                _ => None,
            },
            output_to_operand_aliasing: match self.attrs.take(N::OutputToOperandAliasing) {
                Some((_, Value::Aliasing(v))) => v,
                _ => Vec::new(),
            },
            schedule: self.opt_enum(N::CustomCallSchedule, CustomCallSchedule::from_name)?,
        }))))
    }

    /// Ops that exchange data between replicas or partitions.
    fn collective_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::AllReduce => Op::AllReduce {
                attrs: self.collective()?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::AllReduceStart => Op::AllReduceStart {
                attrs: self.collective()?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::AllReduceDone => Op::AllReduceDone,
            Opcode::AllGather => Op::AllGather {
                attrs: self.collective()?,
                dimension: self.req_single_dim(N::Dimensions)?,
            },
            Opcode::AllGatherStart => Op::AllGatherStart {
                attrs: self.collective()?,
                dimension: self.req_single_dim(N::Dimensions)?,
            },
            Opcode::AllGatherDone => Op::AllGatherDone,
            Opcode::ReduceScatter => Op::ReduceScatter {
                attrs: self.collective()?,
                dimension: self.req_single_dim(N::Dimensions)?,
                to_apply: self.req_comp(N::ToApply)?,
            },
            Opcode::AllToAll => Op::AllToAll {
                attrs: self.collective()?,
                split_dimension: match self.opt_dims(N::Dimensions)? {
                    None => None,
                    Some(d) if d.len() == 1 => Some(d[0]),
                    Some(_) => {
                        return Err(self.p.err(self.at, "all-to-all takes one split dimension"))
                    }
                },
            },
            Opcode::CollectivePermute => {
                let attrs = self.collective()?;
                Op::CollectivePermute {
                    attrs,
                    source_target_pairs: self.source_target_pairs()?,
                    slice_sizes: self.permute_slice_sizes()?,
                }
            }
            Opcode::CollectivePermuteStart => {
                let attrs = self.collective()?;
                Op::CollectivePermuteStart {
                    attrs,
                    source_target_pairs: self.source_target_pairs()?,
                    slice_sizes: self.permute_slice_sizes()?,
                }
            }
            Opcode::CollectivePermuteDone => Op::CollectivePermuteDone,
            Opcode::CollectiveBroadcast => Op::CollectiveBroadcast {
                attrs: self.collective()?,
            },
            _ => return Ok(None),
        }))
    }

    /// Infeed, outfeed, send and receive: transfers to and from outside the program.
    fn transfer_op(&mut self) -> Result<Option<Op>> {
        use AttrName as N;
        Ok(Some(match self.opcode {
            Opcode::Infeed => Op::Infeed {
                config: self.opt_str(N::InfeedConfig).unwrap_or_default(),
            },
            Opcode::Outfeed => Op::Outfeed {
                config: self.opt_str(N::OutfeedConfig).unwrap_or_default(),
                outfeed_shape: match self.attrs.take(N::OutfeedShape) {
                    Some((_, Value::Shape(s))) => Some(s),
                    _ => None,
                },
            },
            Opcode::Send | Opcode::SendDone | Opcode::Recv | Opcode::RecvDone => {
                let channel_id = self.opt_i64(N::ChannelId)?;
                let is_host_transfer = self.opt_bool(N::IsHostTransfer)?.unwrap_or(false);
                match self.opcode {
                    Opcode::Send => Op::Send {
                        channel_id,
                        is_host_transfer,
                    },
                    Opcode::SendDone => Op::SendDone {
                        channel_id,
                        is_host_transfer,
                    },
                    Opcode::Recv => Op::Recv {
                        channel_id,
                        is_host_transfer,
                    },
                    _ => Op::RecvDone {
                        channel_id,
                        is_host_transfer,
                    },
                }
            }
            _ => return Ok(None),
        }))
    }
}

/// Claiming single attributes, each as the type its op stores.
impl Claim<'_, '_> {
    /// The error for an attribute the opcode cannot do without.
    fn missing(&self, name: AttrName) -> Error {
        self.p.err(
            self.at,
            format!("{} requires the attribute {name}", self.opcode),
        )
    }

    /// The error for a missing attribute that has no default.
    fn missing_value(&self, name: AttrName) -> Error {
        self.p.err(self.at, format!("missing attribute {name}"))
    }

    fn take_word(&mut self, name: AttrName) -> Option<(usize, String)> {
        match self.attrs.take(name) {
            Some((o, Value::Word(w))) => Some((o, w)),
            _ => None,
        }
    }

    fn opt_usize(&mut self, name: AttrName) -> Result<Option<usize>> {
        self.take_word(name)
            .map(|(o, w)| self.p.usize_of(&w, o))
            .transpose()
    }

    fn req_usize(&mut self, name: AttrName) -> Result<usize> {
        self.opt_usize(name)?
            .ok_or_else(|| self.missing_value(name))
    }

    fn req_u32(&mut self, name: AttrName) -> Result<u32> {
        let (o, w) = self
            .take_word(name)
            .ok_or_else(|| self.missing_value(name))?;
        w.parse::<u32>().map_err(|_| {
            self.p.err(
                o,
                format!(
                    "{name} must be an integer from 0 to {}, found '{w}'",
                    u32::MAX
                ),
            )
        })
    }

    fn opt_i64(&mut self, name: AttrName) -> Result<Option<i64>> {
        self.take_word(name)
            .map(|(o, w)| self.p.i64_of(&w, o))
            .transpose()
    }

    fn req_i64(&mut self, name: AttrName) -> Result<i64> {
        self.opt_i64(name)?.ok_or_else(|| self.missing_value(name))
    }

    fn req_f32(&mut self, name: AttrName) -> Result<f32> {
        let (o, w) = self
            .take_word(name)
            .ok_or_else(|| self.missing_value(name))?;
        self.p.parse_f32(&w, o)
    }

    fn opt_bool(&mut self, name: AttrName) -> Result<Option<bool>> {
        match self.take_word(name) {
            None => Ok(None),
            Some((o, w)) => match w.as_str() {
                "true" => Ok(Some(true)),
                "false" => Ok(Some(false)),
                _ => Err(self
                    .p
                    .err(o, format!("{name} must be true or false, found '{w}'"))),
            },
        }
    }

    fn opt_str(&mut self, name: AttrName) -> Option<String> {
        match self.attrs.take(name) {
            Some((_, Value::Str(s))) => Some(s),
            _ => None,
        }
    }

    fn opt_enum<T>(
        &mut self,
        name: AttrName,
        parse: impl Fn(&str) -> Option<T>,
    ) -> Result<Option<T>> {
        match self.take_word(name) {
            None => Ok(None),
            Some((o, w)) => parse(&w)
                .map(Some)
                .ok_or_else(|| self.p.err(o, format!("'{w}' is not a valid {name}"))),
        }
    }

    fn req_enum<T>(&mut self, name: AttrName, parse: impl Fn(&str) -> Option<T>) -> Result<T> {
        self.opt_enum(name, parse)?
            .ok_or_else(|| self.missing_value(name))
    }

    fn opt_dims(&mut self, name: AttrName) -> Result<Option<Vec<usize>>> {
        match self.attrs.take(name) {
            None => Ok(None),
            Some((o, Value::Ints(v))) => v
                .into_iter()
                .map(|x| {
                    usize::try_from(x)
                        .map_err(|_| self.p.err(o, format!("{name} must not be negative")))
                })
                .collect::<Result<Vec<_>>>()
                .map(Some),
            Some((o, _)) => Err(self.p.err(o, format!("{name} must be a list like {{0,1}}"))),
        }
    }

    fn req_dims(&mut self, name: AttrName) -> Result<Vec<usize>> {
        self.opt_dims(name)?.ok_or_else(|| self.missing_value(name))
    }

    fn req_single_dim(&mut self, name: AttrName) -> Result<usize> {
        let dims = self.req_dims(name)?;
        match dims[..] {
            [d] => Ok(d),
            _ => Err(self.p.err(
                self.at,
                format!("{name} must name exactly one dimension, found {dims:?}"),
            )),
        }
    }

    fn req_comp(&mut self, name: AttrName) -> Result<CompId> {
        match self.attrs.take(name) {
            Some((_, Value::Comp(c))) => Ok(c),
            _ => Err(self.missing_value(name)),
        }
    }

    fn req_window(&mut self) -> Result<Window> {
        match self.attrs.take(AttrName::Window) {
            Some((_, Value::Window(w))) => Ok(w),
            _ => Err(self.missing(AttrName::Window)),
        }
    }

    fn precision(&mut self) -> Result<Vec<Precision>> {
        match self.attrs.take(AttrName::OperandPrecision) {
            Some((o, Value::Words(words))) => {
                let precision = words
                    .iter()
                    .map(|w| {
                        Precision::from_name(w).ok_or_else(|| {
                            self.p.err(
                                o,
                                format!("'{w}' is not a precision (default, high, highest)"),
                            )
                        })
                    })
                    .collect::<Result<Vec<_>>>()?;
                // All-default is what no attribute means; keep one spelling of it so
                // the printed text (which omits it) reads back equal.
                if precision.iter().all(|&x| x == Precision::Default) {
                    Ok(Vec::new())
                } else {
                    Ok(precision)
                }
            }
            _ => Ok(Vec::new()),
        }
    }

    fn collective(&mut self) -> Result<CollectiveAttrs> {
        Ok(CollectiveAttrs {
            replica_groups: ReplicaGroups {
                groups: match self.attrs.take(AttrName::ReplicaGroups) {
                    Some((_, Value::Groups(g))) => g,
                    _ => Vec::new(),
                },
            },
            channel_id: self.opt_i64(AttrName::ChannelId)?,
            use_global_device_ids: self
                .opt_bool(AttrName::UseGlobalDeviceIds)?
                .unwrap_or(false),
            constrain_layout: self.opt_bool(AttrName::ConstrainLayout)?.unwrap_or(false),
        })
    }

    /// An in-place collective permute's `slice_sizes={{2,1},{2,1}}`, one
    /// list per source-target pair.
    fn permute_slice_sizes(&mut self) -> Result<Option<Vec<Vec<usize>>>> {
        match self.attrs.take(AttrName::SliceSizes) {
            None => Ok(None),
            Some((_, Value::Groups(g))) => Ok(Some(g)),
            Some((o, _)) => Err(self.p.err(
                o,
                format!(
                    "a collective permute's {} is a list per pair, like {{{{2,1}},{{2,1}}}}",
                    AttrName::SliceSizes
                ),
            )),
        }
    }

    fn source_target_pairs(&mut self) -> Result<Vec<(usize, usize)>> {
        match self.attrs.take(AttrName::SourceTargetPairs) {
            Some((offset, Value::Groups(g))) => g
                .into_iter()
                .map(|pair| match pair[..] {
                    [s, t] => Ok((s, t)),
                    _ => Err(self.p.err(
                        offset,
                        format!(
                            "{} entries must be {{source,target}}",
                            AttrName::SourceTargetPairs
                        ),
                    )),
                })
                .collect(),
            _ => Ok(Vec::new()),
        }
    }
}

/// Whether an instruction of this opcode may be written without its shape. These
/// are the opcodes XLA's parser infers; the others carry information only in
/// their shape (`convert`'s target type, `reshape`'s dimensions, a parameter's
/// whole shape) or are always written with it in XLA's text.
fn can_infer_shape(opcode: Opcode) -> bool {
    use Opcode::*;
    !matches!(
        opcode,
        AsyncStart
            | AsyncUpdate
            | AsyncDone
            | AllGather
            | AllGatherStart
            | AllGatherDone
            | AllReduce
            | AllReduceStart
            | AllReduceDone
            | AllToAll
            | CollectiveBroadcast
            | CollectivePermute
            | CollectivePermuteStart
            | CollectivePermuteDone
            | CopyStart
            | CopyDone
            | DynamicReshape
            | DynamicSlice
            | DynamicUpdateSlice
            | Recv
            | RecvDone
            | ReduceScatter
            | Send
            | SendDone
            | Slice
            | Bitcast
            | BitcastConvert
            | Constant
            | Convert
            | CustomCall
            | Fusion
            | Infeed
            | Iota
            | Outfeed
            | Parameter
            | ReducePrecision
            | Reshape
            | Rng
            | RngBitGenerator
            | RngGetAndUpdateState
            | StochasticConvert
    )
}

/// Makes instruction names unique across the module, as XLA's parser does: names
/// need only be unique within their computation in the text, but the verifier,
/// the passes and the backends identify instructions by name module-wide. The
/// first use of a name (in definition order) keeps it; later ones become
/// `name.1`, `name.2`, ..., skipping any name already in the module. Instructions
/// are referred to by id, so renaming changes nothing else.
fn uniquify_instruction_names(computations: &mut [HloComputation]) {
    use std::collections::HashSet;
    let mut all: HashSet<String> = HashSet::new();
    let mut duplicated = false;
    for comp in computations.iter() {
        for instr in &comp.instructions {
            duplicated |= !all.insert(instr.name.clone());
        }
    }
    if !duplicated {
        return;
    }
    let mut taken: HashSet<String> = HashSet::new();
    let mut next_suffix: HashMap<String, usize> = HashMap::new();
    for comp in computations.iter_mut() {
        for instr in &mut comp.instructions {
            if taken.insert(instr.name.clone()) {
                continue;
            }
            let base = instr.name.clone();
            let counter = next_suffix.entry(base.clone()).or_insert(1);
            let new_name = loop {
                let candidate = format!("{base}.{counter}");
                *counter += 1;
                if !all.contains(&candidate) && !taken.contains(&candidate) {
                    break candidate;
                }
            };
            all.insert(new_name.clone());
            taken.insert(new_name.clone());
            instr.name = new_name;
        }
    }
}

/// The groups of a mesh of axis `sizes` holding `device_ids` (row-major) that
/// vary along `axes` (a mesh axis, and a sub-axis `(pre-size, size)` of it or
/// the whole axis), in XLA's order: each mesh axis is split into the parts its
/// grouped sub-axes need, the ungrouped parts are moved to the front and the
/// grouped ones, in the order listed, to the back; consecutive runs of the
/// group size are the groups.
fn mesh_groups(
    sizes: &[usize],
    device_ids: &[usize],
    axes: &[(usize, Option<(usize, usize)>)],
) -> std::result::Result<Vec<Vec<usize>>, String> {
    let mut split_sizes: Vec<usize> = Vec::new();
    // For each listed axis, its index among the split dimensions.
    let mut grouped: Vec<Option<usize>> = vec![None; axes.len()];
    for (axis, &full) in sizes.iter().enumerate() {
        let mut mine: Vec<(usize, usize, usize)> = axes
            .iter()
            .enumerate()
            .filter(|(_, (a, _))| *a == axis)
            .map(|(i, (_, sub))| {
                let (pre, size) = sub.unwrap_or((1, full));
                (pre, size, i)
            })
            .collect();
        if mine.is_empty() {
            split_sizes.push(full);
            continue;
        }
        if mine.len() > 1 && mine.iter().any(|&(_, _, i)| axes[i].1.is_none()) {
            return Err(format!("axis {axis} is listed whole and in parts"));
        }
        // Sub-axes in the order of their pre-sizes, as XLA splits them.
        mine.sort_unstable();
        let mut covered = 1usize;
        for (pre, size, i) in mine {
            if pre < covered || !pre.is_multiple_of(covered) {
                return Err(format!("sub-axes of axis {axis} overlap"));
            }
            if pre != covered {
                split_sizes.push(pre / covered);
            }
            grouped[i] = Some(split_sizes.len());
            split_sizes.push(size);
            covered = pre * size;
        }
        if covered != full {
            if !full.is_multiple_of(covered) {
                return Err(format!(
                    "sub-axes of axis {axis} do not divide its size {full}"
                ));
            }
            split_sizes.push(full / covered);
        }
    }
    let grouped: Vec<usize> = grouped.into_iter().flatten().collect();
    let mut perm: Vec<usize> = (0..split_sizes.len())
        .filter(|d| !grouped.contains(d))
        .collect();
    perm.extend(&grouped);
    let group_size: usize = grouped.iter().map(|&d| split_sizes[d]).product();
    let ids = crate::sharding::transpose_ids(device_ids, &split_sizes, &perm)
        .map_err(|e| e.message().to_string())?;
    Ok(ids.chunks(group_size.max(1)).map(|c| c.to_vec()).collect())
}
