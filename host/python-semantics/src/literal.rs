//! Python literals as `ast.literal_eval` (CPython 3.11) evaluates them:
//! Magnum reads the string form of labels, `health_status_reason`,
//! `node_labels` and `node_taints` in a PATCH with it.
//!
//! The full literal grammar is supported — strings with every prefix and
//! escape and implicit concatenation, bytes, integers of any size in every
//! base, floats, complex numbers, `True`/`False`/`None`/`...`, tuples,
//! lists, dicts, sets and `set()`, unary `+`/`-` and `a ± bj` — with comments
//! and line joining, and enough of the rest of the expression grammar to
//! tell a `SyntaxError` from a `ValueError` exactly where CPython does, with
//! CPython's messages. Magnum catches `SyntaxError` and `ValueError` (a 400
//! `PatchError`); the other exceptions (`TypeError` for an unhashable key,
//! `RecursionError`, `MemoryError`, `OverflowError`) escape it.
//!
//! Known gaps: `\N{…}` escapes (no Unicode name table: refused as unknown
//! names), the contents of f-strings (not parsed: an f-string is a
//! `JoinedStr` node, malformed for `literal_eval`), and the wording of some
//! rarer syntax errors.

mod lexer;
mod parser;

use std::fmt;

use crate::value::PyValue;

/// The Python exception `ast.literal_eval` raises.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// A syntax error (`str()` ends with `(<unknown>, line N)`).
    SyntaxError,
    /// `unexpected indent`, a `SyntaxError` subclass.
    IndentationError,
    /// `malformed node or string …`.
    ValueError,
    /// `unhashable type: 'list'` (a dict key or set member).
    TypeError,
    /// The tree is too deep for CPython to build.
    RecursionError,
    /// CPython's parser ran out of its own stack (`str()` is empty).
    MemoryError,
    /// `int too large to convert to float` (a huge `int + complex`).
    OverflowError,
}

impl ErrorKind {
    /// The Python class name.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::SyntaxError => "SyntaxError",
            ErrorKind::IndentationError => "IndentationError",
            ErrorKind::ValueError => "ValueError",
            ErrorKind::TypeError => "TypeError",
            ErrorKind::RecursionError => "RecursionError",
            ErrorKind::MemoryError => "MemoryError",
            ErrorKind::OverflowError => "OverflowError",
        }
    }

    /// Whether Magnum's `except (SyntaxError, ValueError)` catches it
    /// (`IndentationError` is a `SyntaxError`).
    pub fn caught_by_magnum(self) -> bool {
        matches!(
            self,
            ErrorKind::SyntaxError | ErrorKind::IndentationError | ErrorKind::ValueError
        )
    }
}

/// The exception `ast.literal_eval` raises; `Display` is Python's `str()` of
/// it, which Magnum shows as the reason of its `PatchError`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LiteralError {
    kind: ErrorKind,
    message: String,
    line: Option<u32>,
}

impl LiteralError {
    fn new(kind: ErrorKind, message: impl Into<String>, line: Option<u32>) -> Self {
        LiteralError {
            kind,
            message: message.into(),
            line,
        }
    }

    /// The Python exception class.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The message without the location of a syntax error.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The line of a syntax error (0 for an empty source).
    pub fn line(&self) -> Option<u32> {
        self.line
    }
}

impl fmt::Display for LiteralError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.line {
            Some(line) => write!(f, "{} (<unknown>, line {line})", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for LiteralError {}

/// Evaluates `source` as `ast.literal_eval(source)` does in CPython 3.11.
pub fn parse_literal(source: &str) -> Result<PyValue, LiteralError> {
    // Magnum: ast.literal_eval strips leading spaces and tabs.
    let source = source.trim_start_matches([' ', '\t']);
    if source.contains('\0') {
        return Err(LiteralError::new(
            ErrorKind::SyntaxError,
            "source code string cannot contain null bytes",
            None,
        ));
    }
    // CPython's tokenizer reads "\r\n" and "\r" as "\n" in a string source.
    let translated;
    let source = if source.contains('\r') {
        translated = source.replace("\r\n", "\n").replace('\r', "\n");
        translated.as_str()
    } else {
        source
    };
    let lexed = lexer::tokenize(source);
    // The parser recurses once per bracket (at most 200) and per lambda
    // default (at most about 660, CPython's own limit); a source that nests
    // more than a few levels runs on a thread whose stack fits that bound
    // whatever the caller's stack.
    let brackets = lexed.tokens.iter().map(|t| t.level).max().unwrap_or(0) as usize;
    let lambdas = lexed.tokens.iter().filter(|t| t.is_name("lambda")).count();
    if brackets <= INLINE_BRACKETS && lambdas <= INLINE_LAMBDAS {
        return evaluate(source, &lexed);
    }
    let stack = (1 << 20) + brackets * BRACKET_STACK + lambdas.min(1000) * LAMBDA_STACK;
    std::thread::scope(|scope| {
        match std::thread::Builder::new()
            .name("literal_eval".into())
            .stack_size(stack)
            .spawn_scoped(scope, || evaluate(source, &lexed))
        {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            // CPython's answer when it runs out of memory.
            Err(_) => Err(LiteralError::new(ErrorKind::MemoryError, "", None)),
        }
    })
}

/// Sources nesting at most this deep are parsed on the caller's stack.
const INLINE_BRACKETS: usize = 8;
const INLINE_LAMBDAS: usize = 8;
/// Generous stack bounds per nesting level (unoptimised builds use about
/// 20 KiB per bracket and 6 KiB per lambda default).
const BRACKET_STACK: usize = 48 << 10;
const LAMBDA_STACK: usize = 16 << 10;

/// Parses the tokens and evaluates the tree.
fn evaluate(source: &str, lexed: &lexer::Lexed<'_>) -> Result<PyValue, LiteralError> {
    let mut p = parser::Parser::new(&lexed.tokens, lexed.soft.as_ref(), source.is_empty());
    let node = match p.parse_eval() {
        Ok(node) => node,
        Err(e) => {
            if let Some(hard) = &lexed.hard
                && !matches!(
                    e.err.kind,
                    ErrorKind::IndentationError | ErrorKind::MemoryError
                )
            {
                return Err(hard.clone());
            }
            if let Some(open) = lexed.soft.as_ref().and_then(|s| s.open)
                && !e.soft
                && e.err.line.is_some_and(|l| l > open.line)
            {
                return Err(LiteralError::new(
                    ErrorKind::SyntaxError,
                    format!("'{}' was never closed", open.ch as char),
                    Some(open.line),
                ));
            }
            return Err(e.err);
        }
    };
    // The Expression node holds the tree.
    if node.depth + 1 > parser::MAX_AST_DEPTH {
        return Err(LiteralError::new(
            ErrorKind::RecursionError,
            "maximum recursion depth exceeded during ast construction",
            None,
        ));
    }
    parser::convert(node)
}

#[cfg(test)]
mod tests;
