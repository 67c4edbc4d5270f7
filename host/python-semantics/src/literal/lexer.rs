//! CPython 3.11's tokenizer, as far as an expression source needs it: names,
//! numbers, strings with their prefixes and escapes, operators, brackets,
//! comments, line joining, indentation, and the tokenizer's error texts.
//!
//! The whole source is scanned before parsing, as CPython does before it
//! reports a parser error: a tokenizer error anywhere wins over a parser
//! error. Errors CPython raises only when the parser fetches the failing
//! token are "soft" ([`SoftError`]): the scan stops there with an
//! [`Kind::Err`] token.

use super::{ErrorKind, LiteralError};
use crate::python::{self, INT_MAX_STR_DIGITS, PyInt};
use crate::value::PyValue;

/// CPython's `MAXLEVEL`: brackets nest at most this deep.
pub(super) const MAX_LEVEL: usize = 200;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Kind {
    Name,
    Number,
    Str,
    Op,
    Newline,
    End,
    Indent,
    /// A soft tokenizer error, reported when the parser reaches it.
    Err,
}

/// A string literal's value and the errors CPython raises when its parser
/// builds the constant (so later tokenizer errors win over them).
#[derive(Clone, Debug, Default)]
pub(super) struct StrLit {
    pub bytes: bool,
    pub fstring: bool,
    /// UTF-8 text for a `str`, the bytes of a `bytes` literal.
    pub value: Vec<u8>,
    pub ascii_err: bool,
    pub decode_err: Option<String>,
}

#[derive(Clone, Debug)]
pub(super) enum Payload {
    None,
    Num(PyValue),
    Str(Box<StrLit>),
}

#[derive(Clone, Debug)]
pub(super) struct Token<'a> {
    pub kind: Kind,
    pub text: &'a str,
    pub line: u32,
    /// The bracket depth before the token.
    pub level: u32,
    pub payload: Payload,
}

impl Token<'_> {
    pub fn is_op(&self, op: &str) -> bool {
        self.kind == Kind::Op && self.text == op
    }

    pub fn is_name(&self, name: &str) -> bool {
        self.kind == Kind::Name && self.text == name
    }
}

#[derive(Clone, Copy, Debug)]
pub(super) struct Bracket {
    pub ch: u8,
    pub line: u32,
}

/// A tokenizer error CPython raises only when the parser fetches the failing
/// token. When the parser fails earlier its own error stands, unless it lies
/// on a line after the innermost open bracket, in which case CPython reports
/// that bracket as never closed.
#[derive(Clone, Debug)]
pub(super) struct SoftError {
    pub err: LiteralError,
    pub open: Option<Bracket>,
}

pub(super) struct Lexed<'a> {
    pub tokens: Vec<Token<'a>>,
    pub soft: Option<SoftError>,
    /// A tokenizer error: it wins over the parser's syntax errors, except
    /// an unexpected indent the parser meets first (CPython reports that
    /// without looking at the rest of the source).
    pub hard: Option<LiteralError>,
}

const OPS3: [&str; 5] = ["**=", "//=", ">>=", "<<=", "..."];
const OPS2: [&str; 19] = [
    "**", "//", "<<", ">>", "<=", ">=", "==", "!=", "->", ":=", "+=", "-=", "*=", "/=", "%=", "&=",
    "|=", "^=", "@=",
];

fn syntax(line: u32, msg: impl Into<String>) -> LiteralError {
    LiteralError::new(ErrorKind::SyntaxError, msg, Some(line))
}

/// `is_potential_identifier_start`: what the tokenizer reads as a name
/// before it checks the characters (every non-ASCII byte qualifies).
fn potential_id_start(b: u8) -> bool {
    b == b'_' || b.is_ascii_alphabetic() || b >= 0x80
}

fn potential_id_char(b: u8) -> bool {
    potential_id_start(b) || b.is_ascii_digit()
}

fn closer_of(c: u8) -> u8 {
    match c {
        b'(' => b')',
        b'[' => b']',
        _ => b'}',
    }
}

fn is_string_prefix(w: &str) -> bool {
    matches!(
        w.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "fr" | "rf"
    )
}

fn invalid_character(c: char, line: u32) -> LiteralError {
    let cp = c as u32;
    if python::is_printable(c) {
        syntax(line, format!("invalid character '{c}' (U+{cp:04X})"))
    } else {
        syntax(line, format!("invalid non-printable character U+{cp:04X}"))
    }
}

struct Lexer<'a> {
    src: &'a str,
    b: &'a [u8],
    i: usize,
    line: u32,
    toks: Vec<Token<'a>>,
    stack: Vec<Bracket>,
    line_start: bool,
}

/// Tokenizes `src` (newlines already translated to `\n`).
pub(super) fn tokenize(src: &str) -> Lexed<'_> {
    let mut lx = Lexer {
        src,
        b: src.as_bytes(),
        i: 0,
        line: 1,
        toks: Vec::new(),
        stack: Vec::new(),
        line_start: true,
    };
    match lx.run() {
        Ok(None) => {}
        Ok(Some(soft)) => {
            return Lexed {
                tokens: lx.toks,
                soft: Some(soft),
                hard: None,
            };
        }
        Err(hard) => {
            lx.push_err(lx.line);
            return Lexed {
                tokens: lx.toks,
                soft: None,
                hard: Some(hard),
            };
        }
    }
    if lx
        .toks
        .last()
        .is_some_and(|t: &Token<'_>| t.kind != Kind::Newline)
    {
        let line = lx.line;
        lx.push(Kind::Newline, "", line, Payload::None);
    }
    // The end of the source is on the line of its last character.
    let line = if src.ends_with('\n') {
        lx.line.saturating_sub(1).max(1)
    } else {
        lx.line
    };
    lx.push(Kind::End, "", line, Payload::None);
    Lexed {
        tokens: lx.toks,
        soft: None,
        hard: None,
    }
}

impl<'a> Lexer<'a> {
    fn push(&mut self, kind: Kind, text: &'a str, line: u32, payload: Payload) {
        self.push_token(kind, text, line, payload);
        self.line_start = false;
    }

    /// Appends a token at the current bracket depth.
    fn push_token(&mut self, kind: Kind, text: &'a str, line: u32, payload: Payload) {
        self.toks.push(Token {
            kind,
            text,
            line,
            level: self.stack.len() as u32,
            payload,
        });
    }

    /// Appends the [`Kind::Err`] token that ends a scan stopped by an
    /// error on `line`.
    fn push_err(&mut self, line: u32) {
        self.push_token(Kind::Err, "", line, Payload::None);
    }

    /// Ends the scan with a soft error.
    fn soft(&mut self, line: u32, msg: String) -> Option<SoftError> {
        let se = SoftError {
            err: syntax(line, msg),
            open: self.stack.last().copied(),
        };
        self.push_err(line);
        Some(se)
    }

    fn never_closed(&mut self) -> Option<SoftError> {
        let open = self.stack.last().copied()?;
        self.soft(open.line, format!("'{}' was never closed", open.ch as char))
    }

    fn run(&mut self) -> Result<Option<SoftError>, LiteralError> {
        let b = self.b;
        while self.i < b.len() {
            let c = b[self.i];
            if self.line_start && self.stack.is_empty() {
                // The indentation of a new logical line.
                let mut j = self.i;
                while j < b.len() && matches!(b[j], b' ' | b'\t' | b'\x0c') {
                    j += 1;
                }
                // (White space before the end of the source is an indent.)
                if j < b.len() && (b[j] == b'\n' || b[j] == b'#') {
                    // A blank or comment-only line.
                    self.i = j;
                    while self.i < b.len() && b[self.i] != b'\n' {
                        self.i += 1;
                    }
                    if self.i < b.len() {
                        self.i += 1;
                        self.line += 1;
                    }
                    continue;
                }
                // A form feed resets the indentation column, as in CPython.
                let indent = &b[self.i..j];
                let indent = match indent.iter().rposition(|&c| c == b'\x0c') {
                    Some(k) => &indent[k + 1..],
                    None => indent,
                };
                if !indent.is_empty() {
                    // The parser fails on the INDENT token; later tokenizer
                    // errors still take precedence, so the scan goes on.
                    let line = self.line;
                    self.push(Kind::Indent, "", line, Payload::None);
                }
                self.i = j;
                self.line_start = false;
                continue;
            }
            match c {
                b' ' | b'\t' | b'\x0c' => self.i += 1,
                b'#' => {
                    while self.i < b.len() && b[self.i] != b'\n' {
                        self.i += 1;
                    }
                }
                b'\\' => {
                    if b.get(self.i + 1) != Some(&b'\n') {
                        let line = self.line;
                        return Ok(self.soft(
                            line,
                            "unexpected character after line continuation character".into(),
                        ));
                    }
                    self.i += 2;
                    self.line += 1;
                    if self.i >= b.len() {
                        if let Some(se) = self.never_closed() {
                            return Ok(Some(se));
                        }
                        let line = self.line - 1;
                        return Ok(self.soft(line, "unexpected EOF while parsing".into()));
                    }
                }
                b'\n' => {
                    self.i += 1;
                    if self.stack.is_empty() {
                        if self.toks.last().is_some_and(|t| t.kind != Kind::Newline) {
                            let line = self.line;
                            self.push(Kind::Newline, "", line, Payload::None);
                        }
                        self.line_start = true;
                    }
                    self.line += 1;
                }
                b'\'' | b'"' => self.string(self.i, self.i)?,
                b'0'..=b'9' => self.number()?,
                b'.' if b.get(self.i + 1).is_some_and(u8::is_ascii_digit) => self.number()?,
                c if potential_id_start(c) => self.name()?,
                _ => self.operator()?,
            }
        }
        Ok(self.never_closed())
    }

    fn name(&mut self) -> Result<(), LiteralError> {
        let b = self.b;
        let start = self.i;
        let mut j = start;
        while j < b.len() && potential_id_char(b[j]) {
            j += 1;
        }
        let word = &self.src[start..j];
        if j < b.len() && (b[j] == b'\'' || b[j] == b'"') && is_string_prefix(word) {
            return self.string(start, j);
        }
        if !word.is_ascii() {
            // verify_identifier: the first character that cannot be in a name.
            for (n, ch) in word.chars().enumerate() {
                let ok = if n == 0 {
                    python::is_id_start(ch)
                } else {
                    python::is_id_continue(ch)
                };
                if !ok {
                    return Err(invalid_character(ch, self.line));
                }
            }
        }
        let line = self.line;
        self.push(Kind::Name, word, line, Payload::None);
        self.i = j;
        Ok(())
    }

    fn operator(&mut self) -> Result<(), LiteralError> {
        let rest = &self.src[self.i..];
        let op = OPS3
            .iter()
            .chain(OPS2.iter())
            .find(|o| rest.starts_with(**o))
            .copied();
        let op = match op {
            Some(op) => op,
            None => {
                let c = self.b[self.i];
                if c < 0x20 || c == 0x7f {
                    return Err(invalid_character(c as char, self.line));
                }
                &rest[..1]
            }
        };
        let line = self.line;
        match op {
            "(" | "[" | "{" => {
                if self.stack.len() >= MAX_LEVEL {
                    return Err(syntax(line, "too many nested parentheses"));
                }
                self.push(Kind::Op, &self.src[self.i..self.i + 1], line, Payload::None);
                self.stack.push(Bracket {
                    ch: op.as_bytes()[0],
                    line,
                });
            }
            ")" | "]" | "}" => {
                let Some(open) = self.stack.last().copied() else {
                    return Err(syntax(line, format!("unmatched '{op}'")));
                };
                if closer_of(open.ch) != op.as_bytes()[0] {
                    let opener = open.ch as char;
                    if open.line != line {
                        return Err(syntax(
                            line,
                            format!(
                                "closing parenthesis '{op}' does not match opening parenthesis \
                                 '{opener}' on line {}",
                                open.line
                            ),
                        ));
                    }
                    return Err(syntax(
                        line,
                        format!(
                            "closing parenthesis '{op}' does not match opening parenthesis \
                             '{opener}'"
                        ),
                    ));
                }
                self.stack.pop();
                self.push(Kind::Op, &self.src[self.i..self.i + 1], line, Payload::None);
            }
            _ => {
                let text = &self.src[self.i..self.i + op.len()];
                self.push(Kind::Op, text, line, Payload::None);
            }
        }
        self.i += op.len();
        Ok(())
    }

    /// A string literal whose prefix starts at `start` and whose opening
    /// quote is at `q`.
    fn string(&mut self, start: usize, q: usize) -> Result<(), LiteralError> {
        let b = self.b;
        let prefix = self.src[start..q].to_ascii_lowercase();
        let raw = prefix.contains('r');
        let bytes = prefix.contains('b');
        let fstring = prefix.contains('f');
        let quote = b[q];
        let triple = b.len() >= q + 3 && b[q + 1] == quote && b[q + 2] == quote;
        let qlen = if triple { 3 } else { 1 };
        let start_line = self.line;
        let mut line = self.line;
        let mut j = q + qlen;
        let mut body: Vec<u8> = Vec::new();
        loop {
            let Some(&c) = b.get(j) else {
                let what = if triple {
                    "unterminated triple-quoted string literal"
                } else {
                    "unterminated string literal"
                };
                // A newline that ends the source starts no line.
                let detected = if b.last() == Some(&b'\n') {
                    (line - 1).max(start_line)
                } else {
                    line
                };
                return Err(syntax(
                    start_line,
                    format!("{what} (detected at line {detected})"),
                ));
            };
            if c == b'\\' && j + 1 < b.len() {
                body.push(c);
                body.push(b[j + 1]);
                if b[j + 1] == b'\n' {
                    line += 1;
                }
                j += 2;
                continue;
            }
            if c == quote
                && (!triple || (b.get(j + 1) == Some(&quote) && b.get(j + 2) == Some(&quote)))
            {
                j += qlen;
                break;
            }
            if c == b'\n' {
                if !triple {
                    return Err(syntax(
                        start_line,
                        format!("unterminated string literal (detected at line {line})"),
                    ));
                }
                line += 1;
            }
            body.push(c);
            j += 1;
        }
        let mut lit = StrLit {
            bytes,
            fstring,
            ..StrLit::default()
        };
        if fstring {
            lit.decode_err = check_fstring(&body, raw);
        } else {
            if bytes && body.iter().any(|&c| c >= 0x80) {
                lit.ascii_err = true;
            } else if raw {
                lit.value = body;
            } else {
                match decode_escapes(&body, bytes) {
                    Ok(v) => lit.value = v,
                    Err(msg) => lit.decode_err = Some(msg),
                }
            }
        }
        let text = &self.src[start..j];
        self.toks.push(Token {
            kind: Kind::Str,
            text,
            line: start_line,
            level: self.stack.len() as u32,
            payload: Payload::Str(Box::new(lit)),
        });
        self.line_start = false;
        self.line = line;
        self.i = j;
        Ok(())
    }

    /// A number literal, scanned as CPython's `tok_get` does.
    fn number(&mut self) -> Result<(), LiteralError> {
        let b = self.b;
        let start = self.i;
        let line = self.line;
        let at = |j: usize| b.get(j).copied().unwrap_or(0);
        let mut j = start;
        let err = |msg: String| Err(syntax(line, msg));

        if at(j) == b'0' && matches!(at(j + 1) | 0x20, b'x' | b'o' | b'b') {
            let (radix, kind): (u32, &str) = match at(j + 1) | 0x20 {
                b'x' => (16, "hexadecimal"),
                b'o' => (8, "octal"),
                _ => (2, "binary"),
            };
            let is_digit = |c: u8| (c as char).is_digit(radix);
            j += 2;
            loop {
                if at(j) == b'_' {
                    j += 1;
                }
                if !is_digit(at(j)) {
                    if radix != 16 && at(j).is_ascii_digit() {
                        return err(format!(
                            "invalid digit '{}' in {kind} literal",
                            at(j) as char
                        ));
                    }
                    return err(format!("invalid {kind} literal"));
                }
                while is_digit(at(j)) {
                    j += 1;
                }
                if at(j) != b'_' {
                    break;
                }
            }
            if radix != 16 && at(j).is_ascii_digit() {
                return err(format!(
                    "invalid digit '{}' in {kind} literal",
                    at(j) as char
                ));
            }
            self.end_of_number(j, kind)?;
            let digits: String = self.src[start + 2..j]
                .chars()
                .filter(|c| *c != '_')
                .collect();
            let value = radix_int(&digits, radix, line)?;
            return self.emit_number(start, j, line, PyValue::Int(value));
        }

        // Decimal: integer part, fraction, exponent, imaginary suffix.
        let mut is_float = false;
        let leading_zero = at(j) == b'0';
        if at(j) != b'.' {
            j = decimal_tail(b, j, line)?;
        }
        if leading_zero && !matches!(at(j), b'.' | b'e' | b'E' | b'j' | b'J') {
            let digits = &self.src[start..j];
            if digits.bytes().any(|c| c.is_ascii_digit() && c != b'0') {
                return err(
                    "leading zeros in decimal integer literals are not permitted; use an 0o \
                     prefix for octal integers"
                        .into(),
                );
            }
        }
        if at(j) == b'.' {
            is_float = true;
            j += 1;
            if at(j).is_ascii_digit() {
                j = decimal_tail(b, j, line)?;
            }
        }
        if matches!(at(j), b'e' | b'E') {
            let e = j;
            let mut k = j + 1;
            if matches!(at(k), b'+' | b'-') {
                k += 1;
                if !at(k).is_ascii_digit() {
                    return err("invalid decimal literal".into());
                }
            } else if !at(k).is_ascii_digit() {
                // "1else" is a number and a keyword; "1ex" a bad exponent.
                self.end_of_number(e, "decimal")?;
                let text = self.src[start..e].replace('_', "");
                let value = decimal_value(&text, is_float, line)?;
                return self.emit_number(start, e, line, value);
            }
            is_float = true;
            j = decimal_tail(b, k, line)?;
        }
        let text = self.src[start..j].replace('_', "");
        if matches!(at(j), b'j' | b'J') {
            j += 1;
            self.end_of_number(j, "imaginary")?;
            let im = text.parse::<f64>().unwrap_or(f64::NAN);
            let value = PyValue::Complex(python::Complex { re: 0.0, im });
            return self.emit_number(start, j, line, value);
        }
        self.end_of_number(j, "decimal")?;
        let value = decimal_value(&text, is_float, line)?;
        self.emit_number(start, j, line, value)
    }

    fn emit_number(
        &mut self,
        start: usize,
        end: usize,
        line: u32,
        value: PyValue,
    ) -> Result<(), LiteralError> {
        let text = &self.src[start..end];
        self.push(Kind::Number, text, line, Payload::Num(value));
        self.i = end;
        Ok(())
    }

    /// `verify_end_of_number`: a number may be followed by a keyword that
    /// can follow it in valid code (with a warning), not by other name
    /// characters.
    fn end_of_number(&self, j: usize, kind: &str) -> Result<(), LiteralError> {
        let rest = &self.b[j.min(self.b.len())..];
        let Some(&c) = rest.first() else {
            return Ok(());
        };
        // CPython's lookahead: the whole keyword, not followed by a name
        // character ("if", "in" and "is" are only checked for two letters).
        let whole = |w: &[u8]| {
            rest.starts_with(w) && !rest.get(w.len()).is_some_and(|&b| potential_id_char(b))
        };
        let keyword = match c {
            b'a' => whole(b"and"),
            b'e' => whole(b"else"),
            b'f' => whole(b"for"),
            b'i' => matches!(rest.get(1), Some(b'f' | b'n' | b's')),
            b'o' => whole(b"or"),
            b'n' => whole(b"not"),
            _ => false,
        };
        // A non-ASCII character ends the number (it starts the next token).
        if !keyword && c < 0x80 && potential_id_char(c) {
            return Err(syntax(self.line, format!("invalid {kind} literal")));
        }
        Ok(())
    }
}

/// `tok_decimal_tail`: digits with single underscores between them, from
/// `j`; returns the index after them.
fn decimal_tail(b: &[u8], mut j: usize, line: u32) -> Result<usize, LiteralError> {
    loop {
        while j < b.len() && b[j].is_ascii_digit() {
            j += 1;
        }
        if b.get(j) != Some(&b'_') {
            return Ok(j);
        }
        j += 1;
        if !b.get(j).is_some_and(u8::is_ascii_digit) {
            return Err(syntax(line, "invalid decimal literal"));
        }
    }
}

fn decimal_value(text: &str, is_float: bool, line: u32) -> Result<PyValue, LiteralError> {
    if is_float {
        return Ok(PyValue::Float(text.parse::<f64>().unwrap_or(f64::NAN)));
    }
    let digits = text.trim_start_matches('0');
    if digits.len() > INT_MAX_STR_DIGITS {
        return Err(syntax(
            line,
            format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion: \
                 value has {} digits; use sys.set_int_max_str_digits() to increase the limit - \
                 Consider hexadecimal for huge integer literals to avoid decimal conversion \
                 limits.",
                digits.len()
            ),
        ));
    }
    PyInt::from_decimal(false, text)
        .map(PyValue::Int)
        .ok_or_else(|| syntax(line, "invalid decimal literal"))
}

/// A hexadecimal, octal or binary integer.
fn radix_int(digits: &str, radix: u32, line: u32) -> Result<PyInt, LiteralError> {
    let significant = digits.trim_start_matches('0');
    let bits_per_digit = match radix {
        16 => 4,
        8 => 3,
        _ => 1,
    };
    // Deviation: CPython reads a non-decimal literal of any size and fails
    // only when the number is first shown (str() refuses more than 4300
    // decimal digits, which every use of such a value in Magnum hits: a 500).
    // The number is refused here with that ValueError's text, which also
    // bounds the cost of keeping it in decimal.
    let too_long = || {
        LiteralError::new(
            ErrorKind::ValueError,
            format!(
                "Exceeds the limit ({INT_MAX_STR_DIGITS} digits) for integer string conversion; \
                 use sys.set_int_max_str_digits() to increase the limit"
            ),
            None,
        )
    };
    // 2**14290 has more than 4300 decimal digits.
    if significant.len() * bits_per_digit > 14_300 {
        return Err(too_long());
    }
    let n = PyInt::from_str_radix(
        if significant.is_empty() {
            "0"
        } else {
            significant
        },
        radix,
    )
    .ok_or_else(|| syntax(line, "invalid literal"))?;
    if n.decimal_len() > INT_MAX_STR_DIGITS {
        return Err(too_long());
    }
    Ok(n)
}

/// Interprets backslash escapes as Python's `unicode_escape` (or, for bytes,
/// `escape`) decoder does. Errors are CPython's texts.
fn decode_escapes(body: &[u8], bytes: bool) -> Result<Vec<u8>, String> {
    // CPython reports positions in the body after turning every non-ASCII
    // character into a 10-byte \UXXXXXXXX escape.
    let pos = |k: usize| -> usize {
        let mut n = 0;
        let mut i = 0;
        while i < k {
            let c = body[i];
            if c < 0x80 {
                n += 1;
                i += 1;
            } else {
                n += 10;
                i += utf8_len(c);
            }
        }
        n
    };
    let mut out: Vec<u8> = Vec::with_capacity(body.len());
    let mut k = 0;
    while k < body.len() {
        let c = body[k];
        if c != b'\\' || k + 1 >= body.len() {
            out.push(c);
            k += 1;
            continue;
        }
        let e = body[k + 1];
        match e {
            b'\n' => k += 2,
            b'\\' | b'\'' | b'"' => {
                out.push(e);
                k += 2;
            }
            b'a' | b'b' | b'f' | b'n' | b'r' | b't' | b'v' => {
                out.push(match e {
                    b'a' => 7,
                    b'b' => 8,
                    b'f' => 12,
                    b'n' => b'\n',
                    b'r' => b'\r',
                    b't' => b'\t',
                    _ => 11,
                });
                k += 2;
            }
            b'0'..=b'7' => {
                let mut v: u32 = 0;
                let mut n = 0;
                while n < 3
                    && body
                        .get(k + 1 + n)
                        .is_some_and(|d| (b'0'..=b'7').contains(d))
                {
                    v = v * 8 + u32::from(body[k + 1 + n] - b'0');
                    n += 1;
                }
                if bytes {
                    out.push((v & 0xff) as u8);
                } else {
                    push_char(&mut out, v);
                }
                k += 1 + n;
            }
            b'x' | b'u' | b'U' if !bytes || e == b'x' => {
                let want = match e {
                    b'x' => 2,
                    b'u' => 4,
                    _ => 8,
                };
                let mut n = 0;
                while n < want && body.get(k + 2 + n).is_some_and(u8::is_ascii_hexdigit) {
                    n += 1;
                }
                if n < want {
                    if bytes {
                        return Err(format!("(value error) invalid \\x escape at position {k}"));
                    }
                    let name = match e {
                        b'x' => "\\xXX",
                        b'u' => "\\uXXXX",
                        _ => "\\UXXXXXXXX",
                    };
                    return Err(format!(
                        "(unicode error) 'unicodeescape' codec can't decode bytes in position \
                         {}-{}: truncated {name} escape",
                        pos(k),
                        pos(k) + 1 + n
                    ));
                }
                let hex = std::str::from_utf8(&body[k + 2..k + 2 + n]).unwrap_or("0");
                let v = u32::from_str_radix(hex, 16).unwrap_or(0);
                if bytes {
                    out.push((v & 0xff) as u8);
                } else {
                    if v > 0x10_ffff {
                        return Err(format!(
                            "(unicode error) 'unicodeescape' codec can't decode bytes in \
                             position {}-{}: illegal Unicode character",
                            pos(k),
                            pos(k) + 1 + n
                        ));
                    }
                    push_char(&mut out, v);
                }
                k += 2 + n;
            }
            b'N' if !bytes => {
                // Deviation: there is no Unicode character name table; a
                // \N{...} escape is reported as an unknown name (CPython
                // accepts valid names).
                let open = k + 2;
                if body.get(open) == Some(&b'{')
                    && let Some(close) = body[open..].iter().position(|&c| c == b'}')
                    && close > 1
                {
                    return Err(format!(
                        "(unicode error) 'unicodeescape' codec can't decode bytes in position \
                         {}-{}: unknown Unicode character name",
                        pos(k),
                        pos(open + close)
                    ));
                }
                return Err(format!(
                    "(unicode error) 'unicodeescape' codec can't decode bytes in position {}-{}: \
                     malformed \\N character escape",
                    pos(k),
                    pos(k) + 1
                ));
            }
            _ => {
                // Unknown escapes are kept verbatim (a DeprecationWarning).
                out.push(b'\\');
                k += 1;
            }
        }
    }
    Ok(out)
}

/// The errors of an f-string's literal parts, as CPython's
/// `fstring_find_literal` meets them: escapes decoded chunk by chunk (a
/// doubled brace ends a chunk), a single `}` refused, a replacement field
/// closed and not empty. The expressions in the fields are not parsed.
fn check_fstring(body: &[u8], raw: bool) -> Option<String> {
    let decode = |chunk: &[u8]| {
        if raw {
            None
        } else {
            decode_escapes(chunk, false).err()
        }
    };
    let mut s = 0;
    let mut start = 0;
    while s < body.len() {
        let mut ch = body[s];
        s += 1;
        if !raw && ch == b'\\' && s < body.len() {
            ch = body[s];
            s += 1;
            if ch == b'N' {
                // "\N{name}": its braces are not a replacement field.
                if s < body.len() {
                    s += 1;
                    if body[s - 1] == b'{' {
                        while s < body.len() {
                            s += 1;
                            if body[s - 1] == b'}' {
                                break;
                            }
                        }
                    }
                }
                continue;
            }
        }
        if ch == b'{' || ch == b'}' {
            if body.get(s) == Some(&ch) {
                if let Some(err) = decode(&body[start..s]) {
                    return Some(err);
                }
                s += 1;
                start = s;
                continue;
            }
            if ch == b'}' {
                return Some("f-string: single '}' is not allowed".into());
            }
            if let Some(err) = decode(&body[start..s - 1]) {
                return Some(err);
            }
            // A replacement field, up to its closing brace (brackets
            // inside it nest). Its expression is not parsed.
            let expr_start = s;
            let mut depth = 0usize;
            loop {
                let Some(&c) = body.get(s) else {
                    return Some("f-string: expecting '}'".into());
                };
                s += 1;
                match c {
                    b'(' | b'[' | b'{' => depth += 1,
                    b')' | b']' => depth = depth.saturating_sub(1),
                    b'}' if depth > 0 => depth -= 1,
                    b'}' => break,
                    _ => {}
                }
            }
            let expr = &body[expr_start..s - 1];
            let field = expr
                .split(|&c| c == b'!' || c == b':')
                .next()
                .unwrap_or(expr);
            if field
                .iter()
                .all(|c| matches!(c, b' ' | b'\t' | b'\n' | b'\x0c'))
            {
                return Some("f-string: empty expression not allowed".into());
            }
            start = s;
        }
    }
    decode(&body[start..])
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xf0..=0xff => 4,
        0xe0..=0xef => 3,
        0xc0..=0xdf => 2,
        _ => 1,
    }
}

fn push_char(out: &mut Vec<u8>, v: u32) {
    // Deviation: a lone surrogate (\ud800) has no UTF-8 form; it becomes
    // U+FFFD.
    let c = char::from_u32(v).unwrap_or('\u{fffd}');
    let mut buf = [0u8; 4];
    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
}
