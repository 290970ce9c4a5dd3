//! Tokens of HLO text.
//!
//! The lexer is deliberately small: it splits text into punctuation, quoted strings
//! and *words* (maximal runs of letters, digits and `_ . - + % $ #`). A word can be
//! a name (`%add.3`), an opcode (`get-tuple-element`), a number (`-1.5e+10`, `-inf`),
//! or a compound attribute value (`3x3`, `0_0x1_1`, `b01f_01io`); the parser decides
//! which from context, which keeps the lexer free of the ambiguities HLO's grammar
//! has. `->` ends a word so that `b01f_01io->b01f` splits where it should.
//! Comments (`/* ... */` and `// ...` to the end of the line) are skipped.

use crate::error::{Error, Result};

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokenKind {
    Word,
    /// A double-quoted string; its text is the unescaped content (see [`Token::text`]).
    Str,
    LBrace,
    RBrace,
    LParen,
    RParen,
    LBracket,
    RBracket,
    Comma,
    Equals,
    Colon,
    Semicolon,
    Star,
    Arrow,
    LessEq,
    Eof,
}

/// A token: its kind, where it starts (byte offset) and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Token {
    pub kind: TokenKind,
    pub offset: usize,
    /// The word's characters, the string's unescaped content, or the punctuation.
    pub text: String,
}

impl Token {
    /// How the token reads in an error message.
    pub fn describe(&self) -> String {
        match self.kind {
            TokenKind::Eof => "end of input".to_string(),
            TokenKind::Str => format!("string \"{}\"", self.text),
            TokenKind::Word => format!("'{}'", self.text),
            _ => format!("'{}'", self.text),
        }
    }
}

/// A cursor over HLO text producing [`Token`]s. It can be repositioned, which the
/// parser uses to capture raw `{...}` blocks (JSON backend configs, shardings).
pub struct Lexer<'a> {
    src: &'a str,
    pos: usize,
    /// The last position [`Lexer::line_col`] answered for, as (byte offset,
    /// line, column): the parser asks for every instruction in text order, so
    /// each question scans only the text since the previous one (a scan from
    /// the start each time made parsing quadratic in the module's size).
    located: std::cell::Cell<(usize, usize, usize)>,
}

pub(crate) fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-' | b'+' | b'%' | b'$' | b'#')
}

impl<'a> Lexer<'a> {
    pub fn new(src: &'a str) -> Self {
        Lexer {
            src,
            pos: 0,
            located: std::cell::Cell::new((0, 1, 1)),
        }
    }

    pub fn source(&self) -> &'a str {
        self.src
    }

    pub fn position(&self) -> usize {
        self.pos
    }

    pub fn seek(&mut self, pos: usize) {
        self.pos = pos.min(self.src.len());
    }

    /// `line:column` (both 1-based, column counted in characters) of a byte offset.
    pub fn line_col(&self, offset: usize) -> (usize, usize) {
        let offset = offset.min(self.src.len());
        let (from, mut line, mut col) = self.located.get();
        if offset < from || !self.src.is_char_boundary(offset) {
            return line_col(self.src, offset);
        }
        for &b in &self.src.as_bytes()[from..offset] {
            if b == b'\n' {
                line += 1;
                col = 1;
            } else if b & 0xc0 != 0x80 {
                // The first byte of a character (not a UTF-8 continuation).
                col += 1;
            }
        }
        self.located.set((offset, line, col));
        (line, col)
    }

    /// An `InvalidArgument` error located at `offset`.
    pub fn error_at(&self, offset: usize, message: impl std::fmt::Display) -> Error {
        let (line, col) = self.line_col(offset);
        Error::invalid_argument(format!("{line}:{col}: {message}"))
    }

    fn skip_trivia(&mut self) -> Result<()> {
        let bytes = self.src.as_bytes();
        loop {
            while self.pos < bytes.len() && bytes[self.pos].is_ascii_whitespace() {
                self.pos += 1;
            }
            if bytes[self.pos..].starts_with(b"/*") {
                let start = self.pos;
                match self.src[self.pos + 2..].find("*/") {
                    Some(end) => self.pos += 2 + end + 2,
                    None => return Err(self.error_at(start, "unterminated /* comment")),
                }
            } else if bytes[self.pos..].starts_with(b"//") {
                while self.pos < bytes.len() && bytes[self.pos] != b'\n' {
                    self.pos += 1;
                }
            } else {
                return Ok(());
            }
        }
    }

    /// The next token.
    pub fn next_token(&mut self) -> Result<Token> {
        self.skip_trivia()?;
        let bytes = self.src.as_bytes();
        let start = self.pos;
        let Some(&b) = bytes.get(start) else {
            return Ok(Token {
                kind: TokenKind::Eof,
                offset: start,
                text: String::new(),
            });
        };
        let punct = |lexer: &mut Self, kind: TokenKind, len: usize| {
            lexer.pos += len;
            Ok(Token {
                kind,
                offset: start,
                text: lexer.src[start..start + len].to_string(),
            })
        };
        match b {
            b'{' => return punct(self, TokenKind::LBrace, 1),
            b'}' => return punct(self, TokenKind::RBrace, 1),
            b'(' => return punct(self, TokenKind::LParen, 1),
            b')' => return punct(self, TokenKind::RParen, 1),
            b'[' => return punct(self, TokenKind::LBracket, 1),
            b']' => return punct(self, TokenKind::RBracket, 1),
            b',' => return punct(self, TokenKind::Comma, 1),
            b'=' => return punct(self, TokenKind::Equals, 1),
            b':' => return punct(self, TokenKind::Colon, 1),
            b';' => return punct(self, TokenKind::Semicolon, 1),
            b'*' => return punct(self, TokenKind::Star, 1),
            b'<' if bytes.get(start + 1) == Some(&b'=') => {
                return punct(self, TokenKind::LessEq, 2)
            }
            b'-' if bytes.get(start + 1) == Some(&b'>') => return punct(self, TokenKind::Arrow, 2),
            b'"' => return self.string(),
            b'\'' => return self.quoted_name(),
            _ => {}
        }
        if is_word_byte(b) {
            let mut end = start;
            while end < bytes.len() && is_word_byte(bytes[end]) {
                if bytes[end] == b'-' && bytes.get(end + 1) == Some(&b'>') {
                    break;
                }
                end += 1;
            }
            self.pos = end;
            return Ok(Token {
                kind: TokenKind::Word,
                offset: start,
                text: self.src[start..end].to_string(),
            });
        }
        let ch = self.src[start..].chars().next().unwrap_or('?');
        Err(self.error_at(start, format!("unexpected character '{ch}'")))
    }

    /// A single-quoted name, as XLA prints mesh axis names
    /// (`mesh['x'=4] {'x'}`): no escapes, it ends at the next quote.
    fn quoted_name(&mut self) -> Result<Token> {
        let start = self.pos;
        let rest = &self.src[start + 1..];
        let Some(len) = rest
            .find(['\'', '\n'])
            .filter(|&i| rest.as_bytes()[i] == b'\'')
        else {
            return Err(self.error_at(start, "unterminated quoted name"));
        };
        self.pos = start + 1 + len + 1;
        Ok(Token {
            kind: TokenKind::Str,
            offset: start,
            text: rest[..len].to_string(),
        })
    }

    fn string(&mut self) -> Result<Token> {
        let start = self.pos;
        let bytes = self.src.as_bytes();
        let mut out: Vec<u8> = Vec::new();
        let mut i = start + 1;
        loop {
            let Some(&b) = bytes.get(i) else {
                return Err(self.error_at(start, "unterminated string"));
            };
            match b {
                b'"' => break,
                b'\\' => {
                    let Some(&e) = bytes.get(i + 1) else {
                        return Err(self.error_at(i, "unterminated escape in string"));
                    };
                    i += 2;
                    match e {
                        b'n' => out.push(b'\n'),
                        b't' => out.push(b'\t'),
                        b'r' => out.push(b'\r'),
                        b'"' => out.push(b'"'),
                        b'\'' => out.push(b'\''),
                        b'\\' => out.push(b'\\'),
                        b'0'..=b'7' => {
                            // Up to three octal digits, as C escapes them.
                            let mut v: u32 = (e - b'0') as u32;
                            let mut n = 1;
                            while n < 3 && matches!(bytes.get(i), Some(b'0'..=b'7')) {
                                v = v * 8 + (bytes[i] - b'0') as u32;
                                i += 1;
                                n += 1;
                            }
                            out.push((v & 0xff) as u8);
                        }
                        b'x' => {
                            let mut v: u32 = 0;
                            let mut n = 0;
                            while n < 2 && bytes.get(i).is_some_and(|c| c.is_ascii_hexdigit()) {
                                v = v * 16 + (bytes[i] as char).to_digit(16).unwrap_or(0);
                                i += 1;
                                n += 1;
                            }
                            if n == 0 {
                                return Err(self.error_at(i - 2, "\\x escape without hex digits"));
                            }
                            out.push(v as u8);
                        }
                        _ => {
                            return Err(self.error_at(
                                i - 2,
                                format!("unknown escape '\\{}' in string", e as char),
                            ))
                        }
                    }
                }
                _ => {
                    out.push(b);
                    i += 1;
                }
            }
        }
        self.pos = i + 1;
        let text = String::from_utf8(out)
            .map_err(|_| self.error_at(start, "string is not valid UTF-8 once unescaped"))?;
        Ok(Token {
            kind: TokenKind::Str,
            offset: start,
            text,
        })
    }

    /// Given the offset of a `{`, returns the offset just past its matching `}`,
    /// skipping braces inside strings.
    pub fn matching_brace_end(&self, open: usize) -> Result<usize> {
        let bytes = self.src.as_bytes();
        let mut depth = 0usize;
        let mut i = open;
        let mut in_string = false;
        while i < bytes.len() {
            let b = bytes[i];
            if in_string {
                if b == b'\\' {
                    i += 1;
                } else if b == b'"' {
                    in_string = false;
                }
            } else {
                match b {
                    b'"' => in_string = true,
                    b'{' => depth += 1,
                    b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Ok(i + 1);
                        }
                    }
                    _ => {}
                }
            }
            i += 1;
        }
        Err(self.error_at(open, "unbalanced '{': no matching '}'"))
    }
}

/// `line:column` of a byte offset in `src` (1-based; the column counts characters).
pub fn line_col(src: &str, offset: usize) -> (usize, usize) {
    let offset = offset.min(src.len());
    let before = &src.as_bytes()[..offset];
    let line = before.iter().filter(|&&b| b == b'\n').count() + 1;
    let line_start = before
        .iter()
        .rposition(|&b| b == b'\n')
        .map_or(0, |p| p + 1);
    let col = String::from_utf8_lossy(&before[line_start..])
        .chars()
        .count()
        + 1;
    (line, col)
}

/// Whether `s` is one `{...}` block exactly as [`Lexer::matching_brace_end`] would
/// capture it: the printer writes such values raw, knowing they read back whole.
pub fn is_raw_block(s: &str) -> bool {
    s.starts_with('{') && Lexer::new(s).matching_brace_end(0) == Ok(s.len())
}

/// Whether `s` lexes as exactly one word token (so it can be printed unquoted).
pub fn is_plain_word(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(is_word_byte) && !s.contains("->")
}

/// Escapes a string the way the printer writes it between double quotes.
pub fn escape(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.push_str(&format!("\\{:03o}", c as u32));
            }
            c => out.push(c),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cached_line_col_agrees_with_a_scan_from_the_start() {
        let src = "HloModule m\n\nENTRY e {\n  p = f32[] parameter(0) /* \u{e9}\u{1F600} */ x\n}\n";
        let lexer = Lexer::new(src);
        let offsets: Vec<usize> = (0..=src.len() + 3)
            .chain([40, 5, 0, src.len(), 12, 12, 60])
            .collect();
        for offset in offsets {
            if offset <= src.len() && !src.is_char_boundary(offset) {
                continue;
            }
            assert_eq!(
                lexer.line_col(offset),
                line_col(src, offset),
                "offset {offset}"
            );
        }
    }

    fn kinds(src: &str) -> Vec<(TokenKind, String)> {
        let mut lexer = Lexer::new(src);
        let mut out = Vec::new();
        loop {
            let t = lexer.next_token().unwrap();
            if t.kind == TokenKind::Eof {
                return out;
            }
            out.push((t.kind, t.text));
        }
    }

    #[test]
    fn splits_dim_labels_at_arrow() {
        let toks = kinds("dim_labels=b01f_01io->b01f");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(texts, ["dim_labels", "=", "b01f_01io", "->", "b01f"]);
    }

    #[test]
    fn words_and_comments() {
        let toks = kinds("(s32[], /*index=5*/u32[]) %get-tuple-element.3 -inf 1e+10");
        let texts: Vec<_> = toks.iter().map(|t| t.1.as_str()).collect();
        assert_eq!(
            texts,
            [
                "(",
                "s32",
                "[",
                "]",
                ",",
                "u32",
                "[",
                "]",
                ")",
                "%get-tuple-element.3",
                "-inf",
                "1e+10"
            ]
        );
    }

    #[test]
    fn strings_unescape() {
        let toks = kinds(r#""a\"b\\c\n\101""#);
        assert_eq!(toks, vec![(TokenKind::Str, "a\"b\\c\nA".to_string())]);
        assert_eq!(escape("a\"b\\c\n"), r#"a\"b\\c\n"#);
    }

    #[test]
    fn errors_are_located() {
        let mut lexer = Lexer::new("a\n  \"open");
        lexer.next_token().unwrap();
        let err = lexer.next_token().unwrap_err();
        assert!(err.message().starts_with("2:3:"), "{}", err.message());
    }

    #[test]
    fn matching_brace_skips_strings() {
        let src = r#"{"a":"}{","b":{}} tail"#;
        let lexer = Lexer::new(src);
        assert_eq!(
            &src[..lexer.matching_brace_end(0).unwrap()],
            r#"{"a":"}{","b":{}}"#
        );
    }
}
