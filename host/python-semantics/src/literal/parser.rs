//! The expression grammar of CPython 3.11, as far as `ast.literal_eval`
//! needs it to tell a `SyntaxError` from a `ValueError` and to build the
//! nodes it evaluates, and the evaluation itself (`literal_eval`'s
//! `_convert`).
//!
//! Recursion follows brackets only (at most 200 deep, the tokenizer's limit);
//! chains of prefix operators, powers, conditional expressions and lambdas
//! are parsed in loops, so that no input can exhaust the stack. The depth
//! of the tree CPython would build is tracked for its `RecursionError`, and
//! an estimate of its parser's own stack for its `MemoryError`.

use std::collections::HashMap;

use super::lexer::{Kind, Payload, SoftError, Token};
use super::{ErrorKind, LiteralError};
use crate::python::Complex;
use crate::value::{self, Dict, PyValue};

/// CPython's parser gives up with a `MemoryError` at this many nested rule
/// calls (`MAXSTACK`).
const MAX_PEG_LEVEL: u32 = 6000;
/// The rule calls on the way from the start rule to a plain operand.
const BASE_PEG_LEVEL: u32 = 24;

/// The deepest tree CPython 3.11 turns into Python objects before it raises
/// `RecursionError: maximum recursion depth exceeded during ast
/// construction`: three times the recursion limit (1000), less three times
/// the Python frames of a shallow caller.
pub(super) const MAX_AST_DEPTH: u32 = 2988;

const KEYWORDS: [&str; 35] = [
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

fn is_keyword(s: &str) -> bool {
    KEYWORDS.contains(&s)
}

/// A node of the tree CPython's parser builds, reduced to what evaluation
/// and its messages need.
#[derive(Debug)]
pub(super) struct Node {
    line: u32,
    /// The nesting depth of the subtree (a lone constant is 1).
    pub depth: u32,
    kind: NodeKind,
}

#[derive(Debug)]
enum NodeKind {
    /// `ast.Constant` (booleans are `PyValue::Bool`).
    Const(PyValue),
    Tuple(Vec<Node>),
    List(Vec<Node>),
    Set(Vec<Node>),
    /// Keys are `None` for a `**` unpacking.
    Dict(Vec<(Option<Node>, Node)>),
    /// `set()`, an `ast.Call`.
    EmptySetCall,
    /// `ast.Name`; `set` is remembered for `set()`.
    Name {
        is_set: bool,
    },
    /// `ast.UnaryOp` with `+` or `-`; the operand is shallow.
    Signed {
        negative: bool,
        operand: Box<Node>,
    },
    /// `ast.BinOp` with `+` or `-`; the operands are shallow.
    AddSub {
        subtract: bool,
        left: Box<Node>,
        right: Box<Node>,
    },
    /// Any other expression, by its `ast` class name.
    Other(&'static str),
}

impl Node {
    fn new(kind: NodeKind, line: u32, depth: u32) -> Node {
        Node { line, depth, kind }
    }

    fn other(class: &'static str, line: u32, depth: u32) -> Node {
        Node::new(NodeKind::Other(class), line, depth)
    }

    fn class_name(&self) -> &'static str {
        match &self.kind {
            NodeKind::Const(_) => "Constant",
            NodeKind::Tuple(_) => "Tuple",
            NodeKind::List(_) => "List",
            NodeKind::Set(_) => "Set",
            NodeKind::Dict(_) => "Dict",
            NodeKind::EmptySetCall => "Call",
            NodeKind::Name { .. } => "Name",
            NodeKind::Signed { .. } => "UnaryOp",
            NodeKind::AddSub { .. } => "BinOp",
            NodeKind::Other(class) => class,
        }
    }

    fn is(&self, class: &str) -> bool {
        matches!(self.kind, NodeKind::Other(c) if c == class)
    }

    /// The node as an operand of `+`/`-`: evaluation looks at most one
    /// level below it, so deeper content is dropped (which also keeps the
    /// tree shallow whatever the input).
    fn shallow(self) -> Node {
        match self.kind {
            NodeKind::Const(_) | NodeKind::Signed { .. } => self,
            _ => Node::other(self.class_name(), self.line, self.depth),
        }
    }
}

fn depth_of<'n>(nodes: impl IntoIterator<Item = &'n Node>) -> u32 {
    1 + nodes.into_iter().map(|n| n.depth).max().unwrap_or(0)
}

/// A parser error, and whether it is the tokenizer's pending soft error.
pub(super) struct PErr {
    pub err: LiteralError,
    pub soft: bool,
}

impl From<LiteralError> for PErr {
    fn from(err: LiteralError) -> Self {
        PErr { err, soft: false }
    }
}

type PResult<T> = Result<T, PErr>;

pub(super) struct Parser<'t, 'a> {
    toks: &'t [Token<'a>],
    pos: usize,
    soft: Option<&'t SoftError>,
    /// CPython reports line 0 for an empty source.
    empty: bool,
    /// The estimated depth of CPython's parser stack.
    level: u32,
}

impl<'t, 'a> Parser<'t, 'a> {
    pub fn new(toks: &'t [Token<'a>], soft: Option<&'t SoftError>, empty: bool) -> Self {
        Parser {
            toks,
            pos: 0,
            soft,
            empty,
            level: BASE_PEG_LEVEL,
        }
    }

    fn peek(&self) -> &'t Token<'a> {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> &'t Token<'a> {
        let toks = self.toks;
        &toks[(self.pos + ahead).min(toks.len() - 1)]
    }

    fn next(&mut self) -> &'t Token<'a> {
        let t = self.peek();
        if self.pos < self.toks.len() - 1 {
            self.pos += 1;
        }
        t
    }

    fn is_op(&self, op: &str) -> bool {
        self.peek().is_op(op)
    }

    fn is_name(&self, name: &str) -> bool {
        self.peek().is_name(name)
    }

    fn soft_err(&self) -> PErr {
        match self.soft {
            Some(se) => PErr {
                err: se.err.clone(),
                soft: true,
            },
            None => LiteralError::new(ErrorKind::SyntaxError, "invalid syntax", Some(1)).into(),
        }
    }

    fn syntax(line: u32, msg: &str) -> PErr {
        LiteralError::new(ErrorKind::SyntaxError, msg, Some(line)).into()
    }

    /// One more level of CPython's parser stack; `MemoryError` beyond it.
    fn enter(&mut self, cost: u32) -> PResult<()> {
        self.level += cost;
        if self.level >= MAX_PEG_LEVEL {
            return Err(LiteralError::new(ErrorKind::MemoryError, "", None).into());
        }
        Ok(())
    }

    fn invalid(&self) -> PErr {
        let t = self.peek();
        match t.kind {
            Kind::Err => self.soft_err(),
            Kind::Indent => LiteralError::new(
                ErrorKind::IndentationError,
                "unexpected indent",
                Some(t.line),
            )
            .into(),
            _ => Self::syntax(if self.empty { 0 } else { t.line }, "invalid syntax"),
        }
    }

    /// The `eval` start rule: expressions, then the end of the source.
    pub fn parse_eval(&mut self) -> PResult<Node> {
        let t = self.peek();
        match t.kind {
            Kind::Err => return Err(self.soft_err()),
            Kind::End => {
                return Err(Self::syntax(
                    if self.empty { 0 } else { t.line },
                    "invalid syntax",
                ));
            }
            Kind::Newline => return Err(Self::syntax(t.line, "invalid syntax")),
            _ => {}
        }
        let n = self.parse_expr_list(true)?;
        while self.peek().kind == Kind::Newline {
            self.next();
        }
        if self.peek().kind != Kind::End {
            return Err(self.invalid());
        }
        Ok(n)
    }

    /// `expr (',' expr)* [',']`: a bare tuple when a comma is present.
    fn parse_expr_list(&mut self, top: bool) -> PResult<Node> {
        let first = self.parse_star_or_expr()?;
        if !self.is_op(",") {
            if first.is("Starred") {
                return Err(self.invalid());
            }
            if top {
                self.check_adjacent(&first)?;
            }
            return Ok(first);
        }
        let line = first.line;
        let mut elts = vec![first];
        while self.is_op(",") {
            self.next();
            if !self.starts_expr() {
                break;
            }
            elts.push(self.parse_star_or_expr()?);
        }
        let depth = depth_of(&elts);
        Ok(Node::new(NodeKind::Tuple(elts), line, depth))
    }

    /// Whether the next token can begin an expression.
    fn starts_expr(&self) -> bool {
        let t = self.peek();
        match t.kind {
            Kind::Number | Kind::Str => true,
            Kind::Name => {
                !is_keyword(t.text)
                    || matches!(
                        t.text,
                        "True" | "False" | "None" | "not" | "lambda" | "await"
                    )
            }
            Kind::Op => matches!(t.text, "(" | "[" | "{" | "-" | "+" | "~" | "..." | "*"),
            _ => false,
        }
    }

    /// CPython's "Perhaps you forgot a comma?" hint: two expressions side by
    /// side inside brackets.
    fn check_adjacent(&mut self, prev: &Node) -> PResult<()> {
        let t = self.peek();
        if t.kind == Kind::Err {
            return Err(self.soft_err());
        }
        if !self.starts_expr() || t.is_op("*") {
            return Ok(());
        }
        // CPython parses the second expression before giving the hint; doing
        // so may reach a pending tokenizer error, which then wins.
        let (save, level) = (self.pos, self.level);
        let r = self.parse_expr();
        let reached = self.peek().kind == Kind::Err;
        self.pos = save;
        self.level = level;
        let hit_soft = matches!(&r, Err(e) if e.soft);
        if self.soft.is_some() && (reached || hit_soft) {
            return Err(self.soft_err());
        }
        if matches!(prev.kind, NodeKind::Name { .. }) && t.kind == Kind::Str {
            return Ok(());
        }
        if r.is_err() || t.level == 0 {
            return Ok(());
        }
        Err(Self::syntax(
            prev.line,
            "invalid syntax. Perhaps you forgot a comma?",
        ))
    }

    /// CPython's hint for `name = value` where an expression belongs
    /// (`[a=1]`); finding it parses the value, which may reach a pending
    /// tokenizer error, which then wins.
    fn check_assign(&mut self, prev: &Node) -> PResult<()> {
        if !matches!(prev.kind, NodeKind::Name { .. }) || !self.is_op("=") {
            return Ok(());
        }
        let (save, level) = (self.pos, self.level);
        self.next();
        let r = self.parse_bin();
        let reached = self.peek().kind == Kind::Err;
        let assign_follows = self.is_op("=") || self.is_op(":=");
        self.pos = save;
        self.level = level;
        let hit_soft = matches!(&r, Err(e) if e.soft);
        if self.soft.is_some() && (reached || hit_soft) {
            return Err(self.soft_err());
        }
        if r.is_err() || assign_follows {
            return Ok(());
        }
        Err(Self::syntax(
            prev.line,
            "invalid syntax. Maybe you meant '==' or ':=' instead of '='?",
        ))
    }

    fn parse_star_or_expr(&mut self) -> PResult<Node> {
        let t = self.peek();
        if t.kind == Kind::Name && t.level > 0 && !is_keyword(t.text) && self.peek_at(1).is_op(":=")
        {
            self.next();
            self.next();
            let value = self.parse_expr()?;
            return Ok(Node::other("NamedExpr", t.line, 1 + value.depth.max(1)));
        }
        if t.is_op("*") {
            self.next();
            let e = self.parse_bin()?;
            return Ok(Node::other("Starred", t.line, 1 + e.depth));
        }
        self.parse_expr()
    }

    /// A conditional expression, with the lambdas that may precede each of
    /// its parts: `lambda: a if b else lambda: c`.
    fn parse_expr(&mut self) -> PResult<Node> {
        let level = self.level;
        let r = self.parse_expr_chain();
        self.level = level;
        r
    }

    fn parse_expr_chain(&mut self) -> PResult<Node> {
        // The common case: no lambda, no conditional.
        if self.is_name("lambda") {
            return self.parse_expr_parts(None);
        }
        let body = self.parse_or()?;
        if !self.is_name("if") {
            return Ok(body);
        }
        self.parse_expr_parts(Some(body))
    }

    /// The general case of [`Self::parse_expr_chain`]; `first` is the body
    /// of the first part when it is already parsed (it has no lambda).
    fn parse_expr_parts(&mut self, mut first: Option<Node>) -> PResult<Node> {
        struct Part {
            /// (line, depth of the arguments) of each leading lambda.
            lambdas: Vec<(u32, u32)>,
            body: Node,
            test: Option<Node>,
        }
        let mut parts: Vec<Part> = Vec::new();
        loop {
            let mut lambdas = Vec::new();
            let body = match first.take() {
                Some(body) => body,
                None => {
                    while self.is_name("lambda") {
                        let line = self.next().line;
                        self.enter(2)?;
                        let args = self.parse_lambda_params()?;
                        lambdas.push((line, args));
                    }
                    self.parse_or()?
                }
            };
            if !self.is_name("if") {
                parts.push(Part {
                    lambdas,
                    body,
                    test: None,
                });
                break;
            }
            self.next();
            self.enter(1)?;
            let test = self.parse_or()?;
            if !self.is_name("else") {
                if self.peek().kind == Kind::Err {
                    return Err(self.soft_err());
                }
                if !self.is_op(":") {
                    return Err(Self::syntax(
                        body.line,
                        "expected 'else' after 'if' expression",
                    ));
                }
                return Err(self.invalid());
            }
            self.next();
            parts.push(Part {
                lambdas,
                body,
                test: Some(test),
            });
        }
        let mut acc: Option<Node> = None;
        for part in parts.into_iter().rev() {
            let mut node = match (part.test, acc.take()) {
                (Some(test), Some(orelse)) => Node::other(
                    "IfExp",
                    part.body.line,
                    depth_of([&part.body, &test, &orelse]),
                ),
                (_, _) => part.body,
            };
            for (line, args) in part.lambdas.into_iter().rev() {
                node = Node::other("Lambda", line, 1 + node.depth.max(args));
            }
            acc = Some(node);
        }
        acc.ok_or_else(|| self.invalid())
    }

    /// The parameters of a lambda up to its `:`; returns the depth of its
    /// `arguments` node.
    fn parse_lambda_params(&mut self) -> PResult<u32> {
        let mut depth = 1;
        while !self.is_op(":") {
            let t = self.peek();
            if t.is_op("*") && self.peek_at(1).is_op(":") {
                return Err(Self::syntax(t.line, "named arguments must follow bare *"));
            }
            if (t.kind == Kind::Name && !is_keyword(t.text))
                || t.is_op(",")
                || t.is_op("*")
                || t.is_op("**")
                || t.is_op("/")
            {
                self.next();
                depth = depth.max(2);
            } else if t.is_op("=") {
                self.next();
                // A default costs CPython's parser about nine levels.
                let level = self.level;
                let default = self.enter(7).and_then(|()| self.parse_expr());
                self.level = level;
                depth = depth.max(1 + default?.depth);
            } else {
                return Err(self.invalid());
            }
        }
        self.next();
        Ok(depth)
    }

    fn parse_or(&mut self) -> PResult<Node> {
        self.parse_bool_op("or", Self::parse_and)
    }

    fn parse_and(&mut self) -> PResult<Node> {
        self.parse_bool_op("and", Self::parse_not)
    }

    /// `operand (op operand)*` for the boolean operator `op`: the operand
    /// alone, or a `BoolOp` one level deeper than its deepest operand.
    fn parse_bool_op(
        &mut self,
        op: &str,
        operand: fn(&mut Self) -> PResult<Node>,
    ) -> PResult<Node> {
        let first = operand(self)?;
        if !self.is_name(op) {
            return Ok(first);
        }
        let line = first.line;
        let mut depth = first.depth;
        while self.is_name(op) {
            self.next();
            depth = depth.max(operand(self)?.depth);
        }
        Ok(Node::other("BoolOp", line, depth + 1))
    }

    fn parse_not(&mut self) -> PResult<Node> {
        let level = self.level;
        let mut lines = Vec::new();
        let r = (|| {
            while self.is_name("not") {
                lines.push(self.next().line);
                self.enter(1)?;
            }
            self.parse_comparison()
        })();
        self.level = level;
        let mut node = r?;
        for line in lines.into_iter().rev() {
            node = Node::other("UnaryOp", line, node.depth + 1);
        }
        Ok(node)
    }

    fn parse_comparison(&mut self) -> PResult<Node> {
        let first = self.parse_bin()?;
        let mut depth = first.depth;
        let mut compared = false;
        loop {
            let t = self.peek();
            if (t.kind == Kind::Op && matches!(t.text, "<" | ">" | "==" | ">=" | "<=" | "!="))
                || self.is_name("in")
            {
                self.next();
            } else if self.is_name("not") && self.peek_at(1).is_name("in") {
                self.next();
                self.next();
            } else if self.is_name("is") {
                self.next();
                if self.is_name("not") {
                    self.next();
                }
            } else {
                break;
            }
            depth = depth.max(self.parse_bin()?.depth);
            compared = true;
        }
        if compared {
            return Ok(Node::other("Compare", first.line, depth + 1));
        }
        Ok(first)
    }

    /// The binary operators, by precedence climbing.
    fn parse_bin(&mut self) -> PResult<Node> {
        self.parse_bin_from(0)
    }

    fn parse_bin_from(&mut self, min: u8) -> PResult<Node> {
        let mut left = self.parse_factor()?;
        loop {
            let t = self.peek();
            let prec = match t.kind {
                Kind::Op => match t.text {
                    "|" => 0,
                    "^" => 1,
                    "&" => 2,
                    "<<" | ">>" => 3,
                    "+" | "-" => 4,
                    "*" | "/" | "//" | "%" | "@" => 5,
                    _ => break,
                },
                _ => break,
            };
            if prec < min {
                break;
            }
            self.next();
            let right = self.parse_bin_from(prec + 1)?;
            let line = left.line;
            let depth = depth_of([&left, &right]);
            left = if matches!(t.text, "+" | "-") {
                Node::new(
                    NodeKind::AddSub {
                        subtract: t.text == "-",
                        left: Box::new(left.shallow()),
                        right: Box::new(right.shallow()),
                    },
                    line,
                    depth,
                )
            } else {
                Node::other("BinOp", line, depth)
            };
        }
        Ok(left)
    }

    /// `factor`: prefix `+ - ~` and right-associative `**`, in a loop.
    fn parse_factor(&mut self) -> PResult<Node> {
        let level = self.level;
        let r = self.parse_factor_chain();
        self.level = level;
        r
    }

    fn parse_factor_chain(&mut self) -> PResult<Node> {
        // The common case: a primary without prefix or power.
        let t = self.peek();
        let prefixed = t.kind == Kind::Op && matches!(t.text, "-" | "+" | "~");
        let mut items: Vec<(Vec<(&'a str, u32)>, Node)> = Vec::new();
        if !prefixed && !t.is_name("await") {
            let primary = self.parse_primary()?;
            if !self.is_op("**") {
                return Ok(primary);
            }
            self.next();
            self.enter(2)?;
            items.push((Vec::new(), primary));
        }
        loop {
            let mut prefix = Vec::new();
            loop {
                let t = self.peek();
                if t.kind == Kind::Op && matches!(t.text, "-" | "+" | "~") {
                    self.next();
                    self.enter(1)?;
                    prefix.push((t.text, t.line));
                } else {
                    break;
                }
            }
            let primary = if self.is_name("await") {
                let line = self.next().line;
                let inner = self.parse_primary()?;
                Node::other("Await", line, inner.depth + 1)
            } else {
                self.parse_primary()?
            };
            let power = self.is_op("**");
            items.push((prefix, primary));
            if !power {
                break;
            }
            self.next();
            self.enter(2)?;
        }
        let mut acc: Option<Node> = None;
        for (prefix, primary) in items.into_iter().rev() {
            let mut node = match acc.take() {
                Some(exponent) => {
                    Node::other("BinOp", primary.line, depth_of([&primary, &exponent]))
                }
                None => primary,
            };
            for (op, line) in prefix.into_iter().rev() {
                let depth = node.depth + 1;
                node = match op {
                    "~" => Node::other("UnaryOp", line, depth),
                    _ => Node::new(
                        NodeKind::Signed {
                            negative: op == "-",
                            operand: Box::new(node.shallow()),
                        },
                        line,
                        depth,
                    ),
                };
            }
            acc = Some(node);
        }
        acc.ok_or_else(|| self.invalid())
    }

    /// An atom and its trailers: attributes, calls, subscripts.
    fn parse_primary(&mut self) -> PResult<Node> {
        let mut n = self.parse_atom()?;
        loop {
            if self.is_op(".") {
                self.next();
                let t = self.peek();
                if t.kind != Kind::Name || is_keyword(t.text) {
                    return Err(self.invalid());
                }
                self.next();
                n = Node::other("Attribute", n.line, n.depth + 1);
            } else if self.is_op("(") {
                self.next();
                let level = self.level;
                let r = self.parse_call_args();
                self.level = level;
                let (args, depth) = r?;
                if !self.is_op(")") {
                    return Err(self.invalid());
                }
                self.next();
                n = if matches!(n.kind, NodeKind::Name { is_set: true }) && args == 0 {
                    Node::new(NodeKind::EmptySetCall, n.line, n.depth + 1)
                } else {
                    Node::other("Call", n.line, 1 + n.depth.max(depth))
                };
            } else if self.is_op("[") {
                if self.peek_at(1).is_op("]") {
                    // An empty subscript is not a trailer: CPython's parser
                    // backtracks and sees "[]" as the next expression.
                    return Ok(n);
                }
                self.next();
                let level = self.level;
                let r = self.parse_subscript();
                self.level = level;
                let depth = r?;
                if !self.is_op("]") {
                    return Err(self.invalid());
                }
                self.next();
                n = Node::other("Subscript", n.line, 1 + n.depth.max(depth));
            } else {
                return Ok(n);
            }
        }
    }

    /// The arguments of a call up to its `)`; returns their number and the
    /// depth they add.
    fn parse_call_args(&mut self) -> PResult<(usize, u32)> {
        self.enter(28)?;
        let mut args = 0;
        let mut depth = 0;
        while !self.is_op(")") {
            let mut extra = 0;
            if self.is_op("**") {
                self.next();
                extra = 1;
            } else if self.peek().kind == Kind::Name && self.peek_at(1).is_op("=") {
                self.next();
                self.next();
                extra = 1;
            }
            let e = self.parse_star_or_expr()?;
            self.check_adjacent(&e)?;
            depth = depth.max(e.depth + extra);
            args += 1;
            if !self.is_op(",") {
                break;
            }
            self.next();
        }
        Ok((args, depth))
    }

    /// The slices of a subscript up to its `]`; returns the depth they add.
    fn parse_subscript(&mut self) -> PResult<u32> {
        self.enter(29)?;
        let mut depth = 0;
        let mut items = 0;
        while !self.is_op("]") {
            let mut item = 0;
            if !self.is_op(":") {
                let e = self.parse_star_or_expr()?;
                self.check_adjacent(&e)?;
                self.check_assign(&e)?;
                item = e.depth;
            }
            let mut slice = false;
            while self.is_op(":") {
                self.next();
                slice = true;
                if self.starts_expr() {
                    item = item.max(self.parse_expr()?.depth);
                }
            }
            depth = depth.max(item + u32::from(slice));
            items += 1;
            if !self.is_op(",") {
                break;
            }
            self.next();
        }
        Ok(depth + u32::from(items > 1))
    }

    fn parse_atom(&mut self) -> PResult<Node> {
        let t = self.peek();
        match t.kind {
            Kind::Number => {
                self.next();
                let value = match &t.payload {
                    Payload::Num(v) => v.clone(),
                    _ => PyValue::None,
                };
                Ok(Node::new(NodeKind::Const(value), t.line, 1))
            }
            Kind::Str => self.parse_strings(),
            Kind::Name => {
                let value = match t.text {
                    "True" => PyValue::Bool(true),
                    "False" => PyValue::Bool(false),
                    "None" => PyValue::None,
                    w if is_keyword(w) => return Err(self.invalid()),
                    w => {
                        self.next();
                        return Ok(Node::new(NodeKind::Name { is_set: w == "set" }, t.line, 1));
                    }
                };
                self.next();
                Ok(Node::new(NodeKind::Const(value), t.line, 1))
            }
            Kind::Op => match t.text {
                "..." => {
                    self.next();
                    Ok(Node::new(NodeKind::Const(PyValue::Ellipsis), t.line, 1))
                }
                "(" | "[" | "{" => {
                    let level = self.level;
                    let r = self.parse_bracket(t);
                    self.level = level;
                    r
                }
                _ => Err(self.invalid()),
            },
            _ => Err(self.invalid()),
        }
    }

    fn parse_bracket(&mut self, open: &'t Token<'a>) -> PResult<Node> {
        let line = open.line;
        if open.text == "{" {
            self.enter(29)?;
            return self.parse_brace();
        }
        let (closer, cost) = if open.text == "(" {
            (")", 28)
        } else {
            ("]", 29)
        };
        self.enter(cost)?;
        self.next();
        if self.is_op(closer) {
            self.next();
            let kind = if closer == ")" {
                NodeKind::Tuple(Vec::new())
            } else {
                NodeKind::List(Vec::new())
            };
            return Ok(Node::new(kind, line, 1));
        }
        if closer == ")" && self.is_name("yield") {
            return self.parse_yield(line);
        }
        let first = self.parse_star_or_expr()?;
        if self.is_name("for") || self.is_name("async") {
            let depth = self.parse_comp(closer)?;
            let class = if closer == ")" {
                "GeneratorExp"
            } else {
                "ListComp"
            };
            return Ok(Node::other(class, line, 1 + first.depth.max(depth)));
        }
        if closer == ")" && self.is_op(")") {
            self.next();
            if first.is("Starred") {
                return Err(Self::syntax(line, "cannot use starred expression here"));
            }
            return Ok(first);
        }
        let elts = self.parse_seq_tail(first, closer)?;
        let depth = depth_of(&elts);
        let kind = if closer == ")" {
            NodeKind::Tuple(elts)
        } else {
            NodeKind::List(elts)
        };
        Ok(Node::new(kind, line, depth))
    }

    /// `(yield …)` or `(yield from …)` after the opening parenthesis.
    fn parse_yield(&mut self, line: u32) -> PResult<Node> {
        self.next();
        let node = if self.is_name("from") {
            self.next();
            let e = self.parse_expr()?;
            Node::other("YieldFrom", line, e.depth + 1)
        } else if self.starts_expr() {
            let e = self.parse_expr_list(false)?;
            Node::other("Yield", line, e.depth + 1)
        } else {
            Node::other("Yield", line, 1)
        };
        if !self.is_op(")") {
            return Err(self.invalid());
        }
        self.next();
        Ok(node)
    }

    /// The `for … in … [if …]` clauses of a comprehension and its closing
    /// bracket; returns the depth they add.
    fn parse_comp(&mut self, closer: &str) -> PResult<u32> {
        let mut depth = 0;
        while self.is_name("for") || self.is_name("async") {
            if self.is_name("async") {
                self.next();
            }
            if !self.is_name("for") {
                return Err(self.invalid());
            }
            self.next();
            if self.is_name("in") {
                return Err(self.invalid());
            }
            while !self.is_name("in") {
                if self.is_op(",") || self.is_op("*") {
                    self.next();
                    continue;
                }
                let target = self.parse_bin()?;
                depth = depth.max(target.depth + 1);
                if !self.is_name("in") && !self.is_op(",") {
                    self.check_adjacent(&target)?;
                    return Err(self.invalid());
                }
            }
            self.next();
            depth = depth.max(self.parse_or()?.depth + 1);
            while self.is_name("if") {
                self.next();
                depth = depth.max(self.parse_or()?.depth + 1);
            }
        }
        if !self.is_op(closer) {
            return Err(self.invalid());
        }
        self.next();
        Ok(depth)
    }

    /// `, expr …` up to the closing bracket.
    fn parse_seq_tail(&mut self, first: Node, closer: &str) -> PResult<Vec<Node>> {
        let mut elts = vec![first];
        loop {
            if self.is_op(closer) {
                self.next();
                return Ok(elts);
            }
            if !self.is_op(",") {
                if let Some(last) = elts.last() {
                    self.check_adjacent(last)?;
                    self.check_assign(last)?;
                }
                return Err(self.invalid());
            }
            self.next();
            if self.is_op(closer) {
                self.next();
                return Ok(elts);
            }
            elts.push(self.parse_star_or_expr()?);
        }
    }

    /// A dict or set display (the first item decides which), or a
    /// comprehension.
    fn parse_brace(&mut self) -> PResult<Node> {
        let open = self.next();
        let line = open.line;
        if self.is_op("}") {
            self.next();
            return Ok(Node::new(NodeKind::Dict(Vec::new()), line, 1));
        }
        let mut items: Vec<(Option<Node>, Node)> = Vec::new();
        let mut elts: Vec<Node> = Vec::new();
        let is_dict;
        if self.is_op("**") {
            is_dict = true;
            self.parse_dict_item(&mut items)?;
        } else {
            let first = self.parse_star_or_expr()?;
            if self.is_op(":") && !first.is("Starred") {
                is_dict = true;
                let value = self.parse_dict_value()?;
                if self.is_name("for") || self.is_name("async") {
                    let depth = self.parse_comp("}")?;
                    let d = depth_of([&first, &value]).max(depth + 1);
                    return Ok(Node::other("DictComp", line, d));
                }
                items.push((Some(first), value));
            } else {
                is_dict = false;
                if self.is_name("for") || self.is_name("async") {
                    let depth = self.parse_comp("}")?;
                    return Ok(Node::other("SetComp", line, 1 + first.depth.max(depth)));
                }
                elts.push(first);
            }
        }
        loop {
            if self.is_op("}") {
                self.next();
                break;
            }
            if !self.is_op(",") {
                let last = if is_dict {
                    items.last().map(|(_, v)| v)
                } else {
                    elts.last()
                };
                if let Some(last) = last {
                    self.check_adjacent(last)?;
                    if !is_dict {
                        self.check_assign(last)?;
                    }
                }
                return Err(self.invalid());
            }
            self.next();
            if self.is_op("}") {
                self.next();
                break;
            }
            if is_dict {
                self.parse_dict_item(&mut items)?;
            } else {
                elts.push(self.parse_star_or_expr()?);
            }
        }
        if is_dict {
            let depth = 1 + items
                .iter()
                .map(|(k, v)| k.as_ref().map_or(0, |k| k.depth).max(v.depth))
                .max()
                .unwrap_or(0);
            return Ok(Node::new(NodeKind::Dict(items), line, depth));
        }
        let depth = depth_of(&elts);
        Ok(Node::new(NodeKind::Set(elts), line, depth))
    }

    fn parse_dict_item(&mut self, items: &mut Vec<(Option<Node>, Node)>) -> PResult<()> {
        if self.is_op("**") {
            self.next();
            let value = self.parse_bin()?;
            items.push((None, value));
            return Ok(());
        }
        let key = self.parse_expr()?;
        if !self.is_op(":") {
            if self.peek().kind == Kind::Err {
                return Err(self.soft_err());
            }
            if !items.is_empty() {
                return Err(Self::syntax(key.line, "':' expected after dictionary key"));
            }
            self.check_adjacent(&key)?;
            return Err(self.invalid());
        }
        let value = self.parse_dict_value()?;
        items.push((Some(key), value));
        Ok(())
    }

    /// The value of a dictionary item, from the `:` after its key.
    fn parse_dict_value(&mut self) -> PResult<Node> {
        let colon = self.next();
        if self.is_op("}") || self.is_op(",") {
            return Err(Self::syntax(
                colon.line,
                "expression expected after dictionary key and ':'",
            ));
        }
        self.check_starred_value()?;
        self.parse_expr()
    }

    /// `{k: *v}`: CPython's hint for a starred dict value.
    fn check_starred_value(&self) -> PResult<()> {
        let t = self.peek();
        if t.is_op("*") {
            return Err(Self::syntax(
                t.line,
                "cannot use a starred expression in a dictionary value",
            ));
        }
        Ok(())
    }

    /// Implicitly concatenated string literals.
    fn parse_strings(&mut self) -> PResult<Node> {
        let first = self.peek();
        let mut value: Vec<u8> = Vec::new();
        let (mut any_bytes, mut any_str, mut any_f) = (false, false, false);
        let mut group = Vec::new();
        while self.peek().kind == Kind::Str {
            let t = self.next();
            if let Payload::Str(lit) = &t.payload {
                if lit.bytes {
                    any_bytes = true;
                } else {
                    any_str = true;
                }
                any_f |= lit.fstring;
                value.extend_from_slice(&lit.value);
                group.push((t.line, lit));
            }
        }
        // CPython has fetched the next token before it builds the constant.
        let look = self.peek();
        if look.kind == Kind::Err {
            return Err(self.soft_err());
        }
        if any_bytes && any_str {
            return Err(Self::syntax(
                look.line,
                "cannot mix bytes and nonbytes literals",
            ));
        }
        for (line, lit) in &group {
            if lit.ascii_err {
                return Err(Self::syntax(
                    *line,
                    "bytes can only contain ASCII literal characters",
                ));
            }
            if let Some(msg) = &lit.decode_err {
                return Err(Self::syntax(look.line, msg));
            }
        }
        if any_f {
            return Ok(Node::other("JoinedStr", first.line, 2));
        }
        let value = if any_bytes {
            PyValue::Bytes(value)
        } else {
            PyValue::Str(
                String::from_utf8(value)
                    .unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned()),
            )
        };
        Ok(Node::new(NodeKind::Const(value), first.line, 1))
    }
}

// ---------------------------------------------------------------- evaluation

/// `ValueError: malformed node or string on line N: <ast.X object at …>`.
fn malformed(node: Option<&Node>) -> LiteralError {
    let msg = match node {
        None => "malformed node or string: None".to_owned(),
        // Deviation: CPython prints the node object's memory address; the
        // address is fixed here so that messages are deterministic.
        Some(n) => format!(
            "malformed node or string on line {}: <ast.{} object at 0x7f0000000000>",
            n.line,
            n.class_name()
        ),
    };
    LiteralError::new(ErrorKind::ValueError, msg, None)
}

/// `ast.literal_eval`'s `_convert`.
pub(super) fn convert(node: Node) -> Result<PyValue, LiteralError> {
    match node.kind {
        NodeKind::Const(v) => Ok(v),
        NodeKind::Tuple(elts) => Ok(PyValue::Tuple(convert_all(elts)?)),
        NodeKind::List(elts) => Ok(PyValue::List(convert_all(elts)?)),
        NodeKind::Set(elts) => {
            let mut seen: HashMap<String, ()> = HashMap::new();
            let mut out = Vec::with_capacity(elts.len());
            for e in elts {
                let v = convert(e)?;
                let key = hashable(&v)?;
                if seen.insert(key, ()).is_none() {
                    out.push(v);
                }
            }
            Ok(PyValue::Set(out))
        }
        NodeKind::EmptySetCall => Ok(PyValue::Set(Vec::new())),
        NodeKind::Dict(items) => {
            let mut keys = value::KeyIndex::default();
            let mut entries: Vec<(PyValue, PyValue)> = Vec::with_capacity(items.len());
            for (k, v) in items {
                // dict(zip(map(_convert, keys), map(_convert, values))):
                // each key, then its value, then the insertion.
                let k = match k {
                    Some(k) => convert(k)?,
                    None => return Err(malformed(None)),
                };
                let v = convert(v)?;
                if !matches!(k, PyValue::Str(_)) {
                    hashable(&k)?;
                }
                match keys.position(&entries, &k) {
                    Some(i) => entries[i].1 = v,
                    None => entries.push((k, v)),
                }
            }
            Ok(PyValue::Dict(Dict::from_distinct(entries)))
        }
        NodeKind::AddSub {
            subtract,
            ref left,
            ref right,
        } => {
            let l = convert_signed_num(left)?;
            let r = convert_num(right)?;
            if let PyValue::Complex(c) = r {
                let re = match l {
                    PyValue::Int(n) => n.to_f64().ok_or_else(|| {
                        LiteralError::new(
                            ErrorKind::OverflowError,
                            "int too large to convert to float",
                            None,
                        )
                    })?,
                    PyValue::Float(f) => f,
                    _ => return Err(malformed(Some(&node))),
                };
                // A real number meets a complex one as complex(x, 0.0).
                return Ok(PyValue::Complex(if subtract {
                    Complex {
                        re: re - c.re,
                        im: 0.0 - c.im,
                    }
                } else {
                    Complex {
                        re: re + c.re,
                        im: 0.0 + c.im,
                    }
                }));
            }
            Err(malformed(Some(&node)))
        }
        _ => convert_signed_num(&node),
    }
}

fn convert_all(elts: Vec<Node>) -> Result<Vec<PyValue>, LiteralError> {
    elts.into_iter().map(convert).collect()
}

fn convert_num(node: &Node) -> Result<PyValue, LiteralError> {
    match &node.kind {
        NodeKind::Const(v @ (PyValue::Int(_) | PyValue::Float(_) | PyValue::Complex(_))) => {
            Ok(v.clone())
        }
        _ => Err(malformed(Some(node))),
    }
}

fn convert_signed_num(node: &Node) -> Result<PyValue, LiteralError> {
    let NodeKind::Signed { negative, operand } = &node.kind else {
        return convert_num(node);
    };
    let v = convert_num(operand)?;
    if !negative {
        return Ok(v);
    }
    Ok(match v {
        PyValue::Int(n) => PyValue::Int(-&n),
        PyValue::Float(f) => PyValue::Float(-f),
        PyValue::Complex(c) => PyValue::Complex(Complex {
            re: -c.re,
            im: -c.im,
        }),
        other => other,
    })
}

/// The de-duplication key of a dict key or set member, or Python's
/// `TypeError` for an unhashable one.
fn hashable(v: &PyValue) -> Result<String, LiteralError> {
    value::hash_key(v).ok_or_else(|| {
        LiteralError::new(
            ErrorKind::TypeError,
            format!("unhashable type: '{}'", unhashable_class(v)),
            None,
        )
    })
}

/// The class of the first unhashable part of `v`, as `hash()` meets it.
fn unhashable_class(v: &PyValue) -> &'static str {
    match v {
        PyValue::List(_) => "list",
        PyValue::Dict(_) => "dict",
        PyValue::Set(_) => "set",
        PyValue::Tuple(items) => items
            .iter()
            .find(|e| value::hash_key(e).is_none())
            .map_or("tuple", unhashable_class),
        _ => "object",
    }
}
