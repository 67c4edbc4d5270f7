//! The part of Go's `text/template` that the class's templates use, with
//! the sprig functions they call, for the patch evaluator.
//!
//! Cluster API renders `enabledIf` and `valueFrom.template` with
//! `text/template` and sprig's hermetic functions over the variables
//! decoded from JSON into Go's `interface{}`. This interpreter knows:
//!
//! - text, actions and their trim markers (`{{- ` and ` -}}`);
//! - `if` / `else if` / `else` / `end`;
//! - pipelines (`|`) of commands, parenthesised pipelines, the dot, field
//!   chains (`.a.b`), string, number, boolean and `nil` constants;
//! - Go's builtins `and`, `or` (short-circuit, returning an operand),
//!   `not`, `eq`, `ne`, `lt`, `le`, `gt`, `ge` and `index`;
//! - sprig's `quote`, `toJson`, `int` and `semverCompare`.
//!
//! Anything else (`range`, `with`, variables, other functions, comments)
//! is refused when the template is parsed, so a class template that needs
//! more fails its test instead of being evaluated wrongly.
//!
//! One deliberate difference with Cluster API: a missing map key is an
//! error here (Go's `missingkey=error`, as in the Go driver's evaluator),
//! where Cluster API prints `<no value>` and treats it as false. Every
//! class variable is required, so a missing key can only be a misspelt
//! variable or a builtin Cluster API does not give that template.

use std::collections::BTreeMap;

use serde_json::Value;

use super::{EvalError, semver};

/// A value as a Go template sees it: JSON decoded into `interface{}`
/// (every number a `float64`), plus the `int`s of integer constants and
/// of sprig's `int`.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum GoValue {
    /// A nil interface: JSON `null`, or what `index` finds for a missing
    /// map key.
    Nil,
    /// A `bool`.
    Bool(bool),
    /// An `int`.
    Int(i64),
    /// A `float64`.
    Float(f64),
    /// A `string`.
    Str(String),
    /// A `[]interface{}`.
    List(Vec<GoValue>),
    /// A `map[string]interface{}`; Go prints and encodes maps with their
    /// keys sorted, as a `BTreeMap` iterates.
    Map(BTreeMap<String, GoValue>),
}

impl GoValue {
    /// The value `encoding/json` decodes `v` into.
    pub(crate) fn from_json(v: &Value) -> GoValue {
        match v {
            Value::Null => GoValue::Nil,
            Value::Bool(b) => GoValue::Bool(*b),
            // json.Unmarshal into interface{} makes every number a float64.
            Value::Number(n) => GoValue::Float(n.as_f64().unwrap_or(f64::NAN)),
            Value::String(s) => GoValue::Str(s.clone()),
            Value::Array(items) => GoValue::List(items.iter().map(GoValue::from_json).collect()),
            Value::Object(m) => GoValue::Map(
                m.iter()
                    .map(|(k, v)| (k.clone(), GoValue::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The Go type, for error messages.
    fn type_name(&self) -> &'static str {
        match self {
            GoValue::Nil => "<nil>",
            GoValue::Bool(_) => "bool",
            GoValue::Int(_) => "int",
            GoValue::Float(_) => "float64",
            GoValue::Str(_) => "string",
            GoValue::List(_) => "[]interface {}",
            GoValue::Map(_) => "map[string]interface {}",
        }
    }

    /// Go's truth (`if`, `and`, `or`, `not`): false for nil and for the
    /// zero value or empty collection of each type.
    fn truth(&self) -> bool {
        match self {
            GoValue::Nil => false,
            GoValue::Bool(b) => *b,
            GoValue::Int(i) => *i != 0,
            GoValue::Float(f) => *f != 0.0,
            GoValue::Str(s) => !s.is_empty(),
            GoValue::List(l) => !l.is_empty(),
            GoValue::Map(m) => !m.is_empty(),
        }
    }
}

/// A parsed template.
#[derive(Debug)]
pub(crate) struct Template {
    nodes: Vec<Node>,
}

/// Renders `text` with `data` as the dot.
pub(crate) fn render(text: &str, data: &GoValue) -> Result<String, EvalError> {
    Template::parse(text)?.execute(data)
}

impl Template {
    /// Parses `text`, refusing what this subset does not know.
    pub(crate) fn parse(text: &str) -> Result<Template, EvalError> {
        let items = lex(text)?;
        let mut items = items.into_iter();
        let (nodes, end) = parse_list(&mut items)?;
        match end {
            None => Ok(Template { nodes }),
            Some(End::Else(_)) => Err(err("unexpected {{else}}")),
            Some(End::End) => Err(err("unexpected {{end}}")),
        }
    }

    /// Renders the template with `data` as the dot.
    pub(crate) fn execute(&self, data: &GoValue) -> Result<String, EvalError> {
        let mut out = String::new();
        walk(&self.nodes, data, &mut out)?;
        Ok(out)
    }
}

/// An evaluation error.
fn err(message: impl Into<String>) -> EvalError {
    EvalError::new(message)
}

// ---------------------------------------------------------------- lexing

/// A token inside an action.
#[derive(Clone, Debug, PartialEq)]
enum Token {
    /// `.`
    Dot,
    /// `.a.b`: the names of a field chain on the dot.
    Field(Vec<String>),
    /// A function or keyword name.
    Ident(String),
    /// A string, number or boolean constant.
    Const(GoValue),
    /// `nil`
    Nil,
    LeftParen,
    RightParen,
    Pipe,
}

/// Text between actions, or the tokens of one action.
#[derive(Debug)]
enum Item {
    Text(String),
    Action(Vec<Token>),
}

/// Go's space characters, which trim markers remove.
fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\r' | '\n')
}

/// Splits `text` into texts and actions, applying the trim markers: `{{- `
/// trims the spaces before the action, ` -}}` those after it.
fn lex(text: &str) -> Result<Vec<Item>, EvalError> {
    let mut items = Vec::new();
    let mut rest = text;
    let mut trim_next = false;
    while let Some(start) = rest.find("{{") {
        let mut before = &rest[..start];
        if trim_next {
            before = before.trim_start_matches(is_space);
        }
        let mut inside = &rest[start + 2..];
        let mut chars = inside.chars();
        if chars.next() == Some('-') && chars.next().is_some_and(is_space) {
            before = before.trim_end_matches(is_space);
            inside = &inside[2..];
        }
        if !before.is_empty() {
            items.push(Item::Text(before.to_string()));
        }
        let (tokens, after, trim) = lex_action(inside)?;
        items.push(Item::Action(tokens));
        rest = after;
        trim_next = trim;
    }
    let last = if trim_next {
        rest.trim_start_matches(is_space)
    } else {
        rest
    };
    if !last.is_empty() {
        items.push(Item::Text(last.to_string()));
    }
    Ok(items)
}

/// Lexes one action up to its `}}`: its tokens, the text after it and
/// whether it ends with a trim marker.
fn lex_action(input: &str) -> Result<(Vec<Token>, &str, bool), EvalError> {
    let mut tokens = Vec::new();
    let mut s = input;
    loop {
        // A right trim marker is one space, a dash and the delimiter.
        let mut chars = s.chars();
        if let Some(c) = chars.next()
            && is_space(c)
            && chars.as_str().starts_with("-}}")
        {
            return Ok((tokens, &s[c.len_utf8() + 3..], true));
        }
        if let Some(after) = s.strip_prefix("}}") {
            return Ok((tokens, after, false));
        }
        let Some(c) = s.chars().next() else {
            return Err(err("unclosed action"));
        };
        let next = s[c.len_utf8()..].chars().next();
        let (token, len) = match c {
            _ if is_space(c) => {
                s = &s[c.len_utf8()..];
                continue;
            }
            '(' => (Token::LeftParen, 1),
            ')' => (Token::RightParen, 1),
            '|' => (Token::Pipe, 1),
            '"' => lex_quoted(s)?,
            '`' => {
                let end = s[1..]
                    .find('`')
                    .ok_or_else(|| err("unterminated raw quoted string"))?;
                (
                    Token::Const(GoValue::Str(s[1..1 + end].to_string())),
                    end + 2,
                )
            }
            '.' if next.is_some_and(|n| n.is_ascii_digit()) => lex_number(s)?,
            '.' => lex_field(s),
            '+' | '-' if next.is_some_and(|n| n.is_ascii_digit() || n == '.') => lex_number(s)?,
            _ if c.is_ascii_digit() => lex_number(s)?,
            _ if c.is_alphabetic() || c == '_' => {
                let len = s
                    .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                    .unwrap_or(s.len());
                let token = match &s[..len] {
                    "true" => Token::Const(GoValue::Bool(true)),
                    "false" => Token::Const(GoValue::Bool(false)),
                    "nil" => Token::Nil,
                    word => Token::Ident(word.to_string()),
                };
                (token, len)
            }
            '$' => return Err(err("template variables are not supported")),
            '/' if next == Some('*') => return Err(err("comments are not supported")),
            _ => return Err(err(format!("unexpected {c:?} in action"))),
        };
        tokens.push(token);
        s = &s[len..];
    }
}

/// Lexes `.` or a field chain `.a.b` at the start of `s`.
fn lex_field(s: &str) -> (Token, usize) {
    let is_name = |c: char| c.is_alphanumeric() || c == '_';
    let mut names = Vec::new();
    let mut len = 0;
    while s[len..].starts_with('.') && s[len + 1..].starts_with(is_name) {
        let name_len = s[len + 1..]
            .find(|c| !is_name(c))
            .unwrap_or(s.len() - len - 1);
        names.push(s[len + 1..len + 1 + name_len].to_string());
        len += 1 + name_len;
    }
    if names.is_empty() {
        (Token::Dot, 1)
    } else {
        (Token::Field(names), len)
    }
}

/// Lexes a number constant: an `int` unless it is written with a decimal
/// point or an exponent, as Go's ideal constants become values.
fn lex_number(s: &str) -> Result<(Token, usize), EvalError> {
    let bytes = s.as_bytes();
    let hex = s.trim_start_matches(['+', '-']).starts_with("0x");
    let mut len = 1;
    while len < bytes.len() {
        let b = bytes[len];
        let exponent_sign =
            matches!(b, b'+' | b'-') && !hex && matches!(bytes[len - 1], b'e' | b'E');
        if !(b.is_ascii_alphanumeric() || b == b'.' || exponent_sign) {
            break;
        }
        len += 1;
    }
    let text = &s[..len];
    let (negative, digits) = match bytes[0] {
        b'-' => (true, &text[1..]),
        b'+' => (false, &text[1..]),
        _ => (false, text),
    };
    let bad = || err(format!("bad number syntax: {text:?}"));
    let value = if let Some(hex) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        let v = i64::from_str_radix(hex, 16).map_err(|_| bad())?;
        GoValue::Int(if negative { -v } else { v })
    } else if digits.contains(['.', 'e', 'E']) {
        let v: f64 = digits.parse().map_err(|_| bad())?;
        GoValue::Float(if negative { -v } else { v })
    } else {
        let v: i64 = digits.parse().map_err(|_| bad())?;
        GoValue::Int(if negative { -v } else { v })
    };
    Ok((Token::Const(value), len))
}

/// Lexes a double-quoted string with Go's escapes.
fn lex_quoted(s: &str) -> Result<(Token, usize), EvalError> {
    let mut out = String::new();
    let mut chars = s.char_indices().skip(1);
    let unterminated = || err("unterminated quoted string");
    while let Some((i, c)) = chars.next() {
        match c {
            '"' => return Ok((Token::Const(GoValue::Str(out)), i + 1)),
            '\n' => return Err(unterminated()),
            '\\' => {
                let (_, e) = chars.next().ok_or_else(unterminated)?;
                let mut hex = |n: usize| -> Result<char, EvalError> {
                    let digits: String = (0..n)
                        .filter_map(|_| chars.next().map(|(_, c)| c))
                        .collect();
                    u32::from_str_radix(&digits, 16)
                        .ok()
                        .filter(|_| digits.len() == n)
                        .and_then(char::from_u32)
                        .ok_or_else(|| err(format!("invalid escape \\{e}{digits}")))
                };
                out.push(match e {
                    'a' => '\u{7}',
                    'b' => '\u{8}',
                    'f' => '\u{c}',
                    'n' => '\n',
                    'r' => '\r',
                    't' => '\t',
                    'v' => '\u{b}',
                    '\\' => '\\',
                    '"' => '"',
                    'x' => hex(2)?,
                    'u' => hex(4)?,
                    'U' => hex(8)?,
                    _ => return Err(err(format!("unsupported escape \\{e}"))),
                });
            }
            _ => out.push(c),
        }
    }
    Err(unterminated())
}

// --------------------------------------------------------------- parsing

/// A node of the parsed template.
#[derive(Debug)]
enum Node {
    Text(String),
    /// An action printing its pipeline's value.
    Print(Pipeline),
    /// `if`; an `else if` is an `If` alone in `otherwise`.
    If {
        condition: Pipeline,
        then: Vec<Node>,
        otherwise: Vec<Node>,
    },
}

/// Commands joined by `|`: each command's value is the last argument of
/// the next.
#[derive(Debug)]
struct Pipeline(Vec<Command>);

/// A function with its arguments, or a single operand.
#[derive(Debug)]
struct Command(Vec<Operand>);

#[derive(Debug)]
enum Operand {
    Dot,
    Field(Vec<String>),
    Function(Function),
    Const(GoValue),
    Nil,
    Pipeline(Pipeline),
}

/// The functions the subset knows.
#[derive(Clone, Copy, Debug, PartialEq)]
enum Function {
    And,
    Or,
    Not,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Index,
    Quote,
    ToJson,
    Int,
    SemverCompare,
}

impl Function {
    /// The function's name in templates.
    fn name(self) -> &'static str {
        match self {
            Function::And => "and",
            Function::Or => "or",
            Function::Not => "not",
            Function::Eq => "eq",
            Function::Ne => "ne",
            Function::Lt => "lt",
            Function::Le => "le",
            Function::Gt => "gt",
            Function::Ge => "ge",
            Function::Index => "index",
            Function::Quote => "quote",
            Function::ToJson => "toJson",
            Function::Int => "int",
            Function::SemverCompare => "semverCompare",
        }
    }

    fn from_name(name: &str) -> Option<Function> {
        Some(match name {
            "and" => Function::And,
            "or" => Function::Or,
            "not" => Function::Not,
            "eq" => Function::Eq,
            "ne" => Function::Ne,
            "lt" => Function::Lt,
            "le" => Function::Le,
            "gt" => Function::Gt,
            "ge" => Function::Ge,
            "index" => Function::Index,
            "quote" => Function::Quote,
            "toJson" => Function::ToJson,
            "int" => Function::Int,
            "semverCompare" => Function::SemverCompare,
            _ => return None,
        })
    }
}

/// What ends a list of nodes.
enum End {
    /// `{{else}}`, or `{{else if …}}` with its condition.
    Else(Option<Pipeline>),
    End,
}

/// Parses nodes up to an `else` or `end` (returned) or the end of the
/// items (None).
fn parse_list(items: &mut std::vec::IntoIter<Item>) -> Result<(Vec<Node>, Option<End>), EvalError> {
    let mut nodes = Vec::new();
    while let Some(item) = items.next() {
        let tokens = match item {
            Item::Text(text) => {
                nodes.push(Node::Text(text));
                continue;
            }
            Item::Action(tokens) => tokens,
        };
        let mut cursor = Cursor { tokens, pos: 0 };
        match cursor.peek() {
            Some(Token::Ident(word)) if word == "if" => {
                cursor.pos += 1;
                let condition = cursor.whole_pipeline()?;
                nodes.push(parse_if(condition, items)?);
            }
            Some(Token::Ident(word)) if word == "else" => {
                cursor.pos += 1;
                let condition = match cursor.peek() {
                    None => None,
                    Some(Token::Ident(word)) if word == "if" => {
                        cursor.pos += 1;
                        Some(cursor.whole_pipeline()?)
                    }
                    Some(t) => return Err(err(format!("unexpected {t:?} after else"))),
                };
                return Ok((nodes, Some(End::Else(condition))));
            }
            Some(Token::Ident(word)) if word == "end" => {
                if cursor.tokens.len() > 1 {
                    return Err(err("unexpected tokens after end"));
                }
                return Ok((nodes, Some(End::End)));
            }
            Some(Token::Ident(word))
                if matches!(
                    word.as_str(),
                    "range" | "with" | "define" | "template" | "block" | "break" | "continue"
                ) =>
            {
                return Err(err(format!("{{{{{word}}}}} is not supported")));
            }
            _ => nodes.push(Node::Print(cursor.whole_pipeline()?)),
        }
    }
    Ok((nodes, None))
}

/// Parses the body of an `if` whose condition is parsed, through its
/// `end`.
fn parse_if(condition: Pipeline, items: &mut std::vec::IntoIter<Item>) -> Result<Node, EvalError> {
    let (then, end) = parse_list(items)?;
    let otherwise = match end {
        Some(End::End) => Vec::new(),
        Some(End::Else(None)) => match parse_list(items)? {
            (otherwise, Some(End::End)) => otherwise,
            _ => return Err(err("{{else}} without its {{end}}")),
        },
        // `else if` shares the `end` of its `if`.
        Some(End::Else(Some(condition))) => vec![parse_if(condition, items)?],
        None => return Err(err("{{if}} without its {{end}}")),
    };
    Ok(Node::If {
        condition,
        then,
        otherwise,
    })
}

/// A position in the tokens of one action.
struct Cursor {
    tokens: Vec<Token>,
    pos: usize,
}

impl Cursor {
    fn peek(&self) -> Option<&Token> {
        self.tokens.get(self.pos)
    }

    /// The rest of the action as one pipeline.
    fn whole_pipeline(&mut self) -> Result<Pipeline, EvalError> {
        let pipeline = self.pipeline()?;
        match self.peek() {
            None => Ok(pipeline),
            Some(t) => Err(err(format!("unexpected {t:?} in action"))),
        }
    }

    fn pipeline(&mut self) -> Result<Pipeline, EvalError> {
        let mut commands = vec![self.command()?];
        while self.peek() == Some(&Token::Pipe) {
            self.pos += 1;
            commands.push(self.command()?);
        }
        Ok(Pipeline(commands))
    }

    fn command(&mut self) -> Result<Command, EvalError> {
        let mut operands = Vec::new();
        while let Some(token) = self.peek() {
            if matches!(token, Token::Pipe | Token::RightParen) {
                break;
            }
            operands.push(self.operand()?);
        }
        if operands.is_empty() {
            return Err(err("missing value for command"));
        }
        Ok(Command(operands))
    }

    fn operand(&mut self) -> Result<Operand, EvalError> {
        let token = self.tokens[self.pos].clone();
        self.pos += 1;
        Ok(match token {
            Token::Dot => Operand::Dot,
            Token::Field(names) => Operand::Field(names),
            Token::Const(v) => Operand::Const(v),
            Token::Nil => Operand::Nil,
            Token::Ident(name) => Operand::Function(
                Function::from_name(&name)
                    .ok_or_else(|| err(format!("function {name:?} not defined")))?,
            ),
            Token::LeftParen => {
                let pipeline = self.pipeline()?;
                if self.peek() != Some(&Token::RightParen) {
                    return Err(err("unclosed left paren"));
                }
                self.pos += 1;
                Operand::Pipeline(pipeline)
            }
            Token::RightParen | Token::Pipe => unreachable!("command stops before them"),
        })
    }
}

// ------------------------------------------------------------- execution

fn walk(nodes: &[Node], dot: &GoValue, out: &mut String) -> Result<(), EvalError> {
    for node in nodes {
        match node {
            Node::Text(text) => out.push_str(text),
            Node::Print(pipeline) => {
                let value = eval_pipeline(pipeline, dot)?;
                // text/template prints a nil interface as <no value>.
                match value {
                    GoValue::Nil => out.push_str("<no value>"),
                    v => out.push_str(&go_print(&v)),
                }
            }
            Node::If {
                condition,
                then,
                otherwise,
            } => {
                if eval_pipeline(condition, dot)?.truth() {
                    walk(then, dot, out)?;
                } else {
                    walk(otherwise, dot, out)?;
                }
            }
        }
    }
    Ok(())
}

fn eval_pipeline(pipeline: &Pipeline, dot: &GoValue) -> Result<GoValue, EvalError> {
    let mut piped = None;
    for command in &pipeline.0 {
        piped = Some(eval_command(command, dot, piped)?);
    }
    piped.ok_or_else(|| err("empty pipeline"))
}

fn eval_command(
    command: &Command,
    dot: &GoValue,
    piped: Option<GoValue>,
) -> Result<GoValue, EvalError> {
    let (first, args) = command.0.split_first().expect("a command has an operand");
    match first {
        Operand::Function(f) => call(*f, args, dot, piped),
        Operand::Nil => Err(err("nil is not a command")),
        Operand::Field(names) if !args.is_empty() || piped.is_some() => Err(err(format!(
            "{} is not a method but has arguments",
            names.last().map_or("", String::as_str)
        ))),
        _ if !args.is_empty() || piped.is_some() => Err(err("can't give argument to non-function")),
        operand => eval_operand(operand, dot),
    }
}

fn eval_operand(operand: &Operand, dot: &GoValue) -> Result<GoValue, EvalError> {
    match operand {
        Operand::Dot => Ok(dot.clone()),
        Operand::Field(names) => field(dot, names),
        Operand::Const(v) => Ok(v.clone()),
        Operand::Nil => Ok(GoValue::Nil),
        Operand::Pipeline(p) => eval_pipeline(p, dot),
        // A function as an argument is called without arguments.
        Operand::Function(f) => call(*f, &[], dot, None),
    }
}

/// Follows a field chain from `value`.
fn field(value: &GoValue, names: &[String]) -> Result<GoValue, EvalError> {
    let mut current = value;
    for name in names {
        current = match current {
            GoValue::Map(m) => m
                .get(name)
                .ok_or_else(|| err(format!("map has no entry for key {name:?}")))?,
            GoValue::Nil => {
                return Err(err(format!("nil pointer evaluating interface {{}}.{name}")));
            }
            other => {
                return Err(err(format!(
                    "can't evaluate field {name} in type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(current.clone())
}

/// Calls `f` with `args`, then the piped value, as its arguments.
fn call(
    f: Function,
    args: &[Operand],
    dot: &GoValue,
    piped: Option<GoValue>,
) -> Result<GoValue, EvalError> {
    let count = args.len() + usize::from(piped.is_some());
    // `and` and `or` evaluate their arguments in order and stop at the
    // first that decides, which they return.
    if matches!(f, Function::And | Function::Or) {
        if count == 0 {
            return Err(err(format!(
                "wrong number of args for {}: want at least 1 got 0",
                f.name()
            )));
        }
        let stop_on = f == Function::Or;
        let mut last = GoValue::Nil;
        for arg in args {
            last = eval_operand(arg, dot)?;
            if last.truth() == stop_on {
                return Ok(last);
            }
        }
        return Ok(piped.unwrap_or(last));
    }
    let mut values = args
        .iter()
        .map(|a| eval_operand(a, dot))
        .collect::<Result<Vec<_>, _>>()?;
    values.extend(piped);
    let arity = |want: usize| {
        if values.len() == want {
            Ok(())
        } else {
            Err(err(format!(
                "wrong number of args for {}: want {want} got {}",
                f.name(),
                values.len()
            )))
        }
    };
    match f {
        Function::And | Function::Or => unreachable!("handled above"),
        Function::Not => {
            arity(1)?;
            Ok(GoValue::Bool(!values[0].truth()))
        }
        Function::Eq => {
            let (first, rest) = values
                .split_first()
                .filter(|(_, rest)| !rest.is_empty())
                .ok_or_else(|| err("missing argument for comparison"))?;
            for other in rest {
                if equal(first, other)? {
                    return Ok(GoValue::Bool(true));
                }
            }
            Ok(GoValue::Bool(false))
        }
        Function::Ne => {
            arity(2)?;
            Ok(GoValue::Bool(!equal(&values[0], &values[1])?))
        }
        Function::Lt | Function::Le | Function::Gt | Function::Ge => {
            arity(2)?;
            let (a, b) = (&values[0], &values[1]);
            let result = match f {
                Function::Lt => less(a, b)?,
                Function::Le => less(a, b)? || equal(a, b)?,
                Function::Gt => !(less(a, b)? || equal(a, b)?),
                _ => !less(a, b)?,
            };
            Ok(GoValue::Bool(result))
        }
        Function::Index => {
            let (item, indices) = values
                .split_first()
                .ok_or_else(|| err("wrong number of args for index: want at least 1 got 0"))?;
            index(item, indices)
        }
        Function::Quote => Ok(GoValue::Str(quote(&values))),
        Function::ToJson => {
            arity(1)?;
            Ok(GoValue::Str(go_json(&values[0])))
        }
        Function::Int => {
            arity(1)?;
            Ok(GoValue::Int(to_int(&values[0])))
        }
        Function::SemverCompare => {
            arity(2)?;
            match (&values[0], &values[1]) {
                (GoValue::Str(constraint), GoValue::Str(version)) => {
                    Ok(GoValue::Bool(semver::satisfies(constraint, version)?))
                }
                (a, b) => Err(err(format!(
                    "semverCompare wants two strings, got {} and {}",
                    a.type_name(),
                    b.type_name()
                ))),
            }
        }
    }
}

/// The kinds Go's comparison functions distinguish.
#[derive(PartialEq)]
enum Kind {
    Bool,
    Int,
    Float,
    Str,
    /// Nil, lists and maps: not basic.
    Other,
}

fn kind(v: &GoValue) -> Kind {
    match v {
        GoValue::Bool(_) => Kind::Bool,
        GoValue::Int(_) => Kind::Int,
        GoValue::Float(_) => Kind::Float,
        GoValue::Str(_) => Kind::Str,
        GoValue::Nil | GoValue::List(_) | GoValue::Map(_) => Kind::Other,
    }
}

/// Go's `eq` of two values: values of different kinds are an error, except
/// against nil, which equals only nil; lists and maps are not comparable.
fn equal(a: &GoValue, b: &GoValue) -> Result<bool, EvalError> {
    let incompatible = || {
        err(format!(
            "incompatible types for comparison: {} and {}",
            a.type_name(),
            b.type_name()
        ))
    };
    Ok(match (a, b) {
        (GoValue::Nil, GoValue::Nil) => true,
        (GoValue::Nil, _) | (_, GoValue::Nil) => false,
        (GoValue::Bool(x), GoValue::Bool(y)) => x == y,
        (GoValue::Int(x), GoValue::Int(y)) => x == y,
        (GoValue::Float(x), GoValue::Float(y)) => x == y,
        (GoValue::Str(x), GoValue::Str(y)) => x == y,
        (GoValue::List(_), GoValue::List(_)) | (GoValue::Map(_), GoValue::Map(_)) => {
            return Err(err(format!("non-comparable type {}", a.type_name())));
        }
        _ => return Err(incompatible()),
    })
}

/// Go's `lt`: ordered basic values of the same kind.
fn less(a: &GoValue, b: &GoValue) -> Result<bool, EvalError> {
    let (ka, kb) = (kind(a), kind(b));
    if matches!(ka, Kind::Other | Kind::Bool) || matches!(kb, Kind::Other | Kind::Bool) {
        return Err(err("invalid type for comparison"));
    }
    Ok(match (a, b) {
        (GoValue::Int(x), GoValue::Int(y)) => x < y,
        (GoValue::Float(x), GoValue::Float(y)) => x < y,
        (GoValue::Str(x), GoValue::Str(y)) => x < y,
        _ => {
            return Err(err(format!(
                "incompatible types for comparison: {} and {}",
                a.type_name(),
                b.type_name()
            )));
        }
    })
}

/// Go's `index`: list elements by `int`, map entries by string (nil when
/// absent).
fn index(item: &GoValue, indices: &[GoValue]) -> Result<GoValue, EvalError> {
    let mut current = item.clone();
    for i in indices {
        current = match (&current, i) {
            (GoValue::Nil, _) => return Err(err("index of untyped nil")),
            (GoValue::List(items), GoValue::Int(n)) => usize::try_from(*n)
                .ok()
                .and_then(|n| items.get(n))
                .cloned()
                .ok_or_else(|| err(format!("index out of range: {n}")))?,
            (GoValue::List(_), other) => {
                return Err(err(format!(
                    "cannot index slice/array with type {}",
                    other.type_name()
                )));
            }
            (GoValue::Map(m), GoValue::Str(key)) => m.get(key).cloned().unwrap_or(GoValue::Nil),
            (GoValue::Map(_), other) => {
                return Err(err(format!(
                    "value has type {}; should be string",
                    other.type_name()
                )));
            }
            (other, _) => {
                return Err(err(format!(
                    "can't index item of type {}",
                    other.type_name()
                )));
            }
        };
    }
    Ok(current)
}

// ------------------------------------------------------ sprig functions

/// sprig's `quote`: each non-nil argument as a Go quoted string of its
/// `%v` text, separated by spaces.
fn quote(values: &[GoValue]) -> String {
    values
        .iter()
        .filter(|v| **v != GoValue::Nil)
        .map(|v| go_quote(&go_print(v)))
        .collect::<Vec<_>>()
        .join(" ")
}

/// sprig's `int` (spf13/cast's `ToInt`, its error dropped): numbers
/// truncated, booleans 0 or 1, strings parsed as Go integer literals
/// (`0x`, `0o`, `0b` and a leading `0` for octal, an all-zero fraction
/// allowed), anything else 0.
fn to_int(v: &GoValue) -> i64 {
    match v {
        GoValue::Int(i) => *i,
        // Go's float-to-int conversion truncates toward zero.
        GoValue::Float(f) => *f as i64,
        GoValue::Bool(b) => i64::from(*b),
        GoValue::Str(s) => parse_go_int(trim_zero_decimal(s)).unwrap_or(0),
        GoValue::Nil | GoValue::List(_) | GoValue::Map(_) => 0,
    }
}

/// cast's `trimZeroDecimal`: `12.000` is `12`, `12.5` and `12.` stay.
fn trim_zero_decimal(s: &str) -> &str {
    match s.split_once('.') {
        Some((int, frac)) if !frac.is_empty() && frac.bytes().all(|b| b == b'0') => int,
        _ => s,
    }
}

/// `strconv.ParseInt(s, 0, 64)` without digit separators.
fn parse_go_int(s: &str) -> Option<i64> {
    let (negative, body) = match s.as_bytes().first()? {
        b'-' => (true, &s[1..]),
        b'+' => (false, &s[1..]),
        _ => (false, s),
    };
    let lower = body.to_ascii_lowercase();
    let (radix, digits) = if let Some(d) = lower.strip_prefix("0x") {
        (16, d)
    } else if let Some(d) = lower.strip_prefix("0o") {
        (8, d)
    } else if let Some(d) = lower.strip_prefix("0b") {
        (2, d)
    } else if lower.len() > 1 && lower.starts_with('0') {
        (8, &lower[1..])
    } else {
        (10, lower.as_str())
    };
    if digits.is_empty() || digits.starts_with(['+', '-']) {
        return None;
    }
    let magnitude = i128::from_str_radix(digits, radix).ok()?;
    i64::try_from(if negative { -magnitude } else { magnitude }).ok()
}

// ------------------------------------------------------- Go formatting

/// What `fmt.Sprint` writes for `v` (the `%v` verb).
fn go_print(v: &GoValue) -> String {
    match v {
        GoValue::Nil => "<nil>".into(),
        GoValue::Bool(b) => b.to_string(),
        GoValue::Int(i) => i.to_string(),
        GoValue::Float(f) => go_float(*f),
        GoValue::Str(s) => s.clone(),
        GoValue::List(items) => {
            let items: Vec<String> = items.iter().map(go_print).collect();
            format!("[{}]", items.join(" "))
        }
        GoValue::Map(m) => {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{k}:{}", go_print(v)))
                .collect();
            format!("map[{}]", entries.join(" "))
        }
    }
}

/// The shortest decimal digits of a finite, non-negative `f` that read
/// back as `f`, and the exponent of the first: `f = 0.d₁d₂… × 10^(exp+1)`.
fn shortest_digits(f: f64) -> (String, i32) {
    // Rust's `{:e}` writes the shortest round-trip digits, as Go's
    // strconv does with precision -1.
    let s = format!("{f:e}");
    let (mantissa, exp) = s.split_once('e').expect("{:e} has an exponent");
    (
        mantissa.replace('.', ""),
        exp.parse().expect("{:e} writes an integer exponent"),
    )
}

/// `digits × 10^(exp - len + 1)` without an exponent (strconv's `%f` of
/// the shortest digits).
fn fixed(digits: &str, exp: i32) -> String {
    if exp < 0 {
        let zeros = "0".repeat((-exp - 1) as usize);
        return format!("0.{zeros}{digits}");
    }
    let int_len = exp as usize + 1;
    if digits.len() <= int_len {
        format!("{digits}{}", "0".repeat(int_len - digits.len()))
    } else {
        format!("{}.{}", &digits[..int_len], &digits[int_len..])
    }
}

/// `d.ddd` and the exponent sign and digits, at least `min_exp_digits`.
fn scientific(digits: &str, exp: i32, min_exp_digits: usize) -> String {
    let mantissa = if digits.len() > 1 {
        format!("{}.{}", &digits[..1], &digits[1..])
    } else {
        digits.to_string()
    };
    let sign = if exp < 0 { '-' } else { '+' };
    format!(
        "{mantissa}e{sign}{:0width$}",
        exp.unsigned_abs(),
        width = min_exp_digits
    )
}

/// `%v` of a float64: `%g` with the shortest digits, in exponent form
/// when the decimal exponent is below -4 or at least 6 (strconv's rule
/// for the shortest precision), so that 1000000 prints as `1e+06`.
fn go_float(f: f64) -> String {
    if f.is_nan() {
        return "NaN".into();
    }
    if f.is_infinite() {
        return if f > 0.0 { "+Inf" } else { "-Inf" }.into();
    }
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let (digits, exp) = shortest_digits(f.abs());
    let body = if f == 0.0 {
        "0".to_string()
    } else if !(-4..6).contains(&exp) {
        scientific(&digits, exp, 2)
    } else {
        fixed(&digits, exp)
    };
    format!("{sign}{body}")
}

/// `encoding/json`'s text of a float64: fixed notation unless the value
/// is below 1e-6 or at least 1e21, with a one-digit negative exponent.
fn json_float(f: f64) -> String {
    let sign = if f.is_sign_negative() { "-" } else { "" };
    let abs = f.abs();
    if abs == 0.0 {
        return format!("{sign}0");
    }
    let (digits, exp) = shortest_digits(abs);
    let body = if !(1e-6..1e21).contains(&abs) {
        scientific(&digits, exp, 1)
    } else {
        fixed(&digits, exp)
    };
    format!("{sign}{body}")
}

/// sprig's `toJson` (`json.Marshal`): keys sorted, `<`, `>` and `&`
/// escaped as Go does for HTML safety.
fn go_json(v: &GoValue) -> String {
    match v {
        GoValue::Nil => "null".into(),
        GoValue::Bool(b) => b.to_string(),
        GoValue::Int(i) => i.to_string(),
        // NaN and infinities are refused by json.Marshal, and toJson then
        // writes nothing; JSON variables cannot hold them anyway.
        GoValue::Float(f) if !f.is_finite() => String::new(),
        GoValue::Float(f) => json_float(*f),
        GoValue::Str(s) => json_string(s),
        GoValue::List(items) => {
            let items: Vec<String> = items.iter().map(go_json).collect();
            format!("[{}]", items.join(","))
        }
        GoValue::Map(m) => {
            let entries: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}:{}", json_string(k), go_json(v)))
                .collect();
            format!("{{{}}}", entries.join(","))
        }
    }
}

/// A JSON string as `encoding/json` writes it.
fn json_string(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '<' | '>' | '&' | '\u{2028}' | '\u{2029}' => {
                out.push_str(&format!("\\u{:04x}", c as u32));
            }
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// Go's `%q` of a string (`strconv.Quote`): printable characters as they
/// are, the C escapes, `\x` below space, `\u`/`\U` for the rest.
///
/// Go's notion of printable comes from Unicode tables this crate does not
/// carry; here control characters, spaces other than U+0020 and the
/// common format characters are escaped. Whatever is kept literal that Go
/// would have escaped reads back the same from the YAML double-quoted
/// string the templates put it in, so the patched value does not differ.
fn go_quote(s: &str) -> String {
    let mut out = String::with_capacity(s.len() + 2);
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\u{7}' => out.push_str("\\a"),
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{b}' => out.push_str("\\v"),
            c if (c as u32) < 0x20 || c == '\u{7f}' => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if !is_printable(c) => {
                if (c as u32) < 0x10000 {
                    out.push_str(&format!("\\u{:04x}", c as u32));
                } else {
                    out.push_str(&format!("\\U{:08x}", c as u32));
                }
            }
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// An approximation of Go's `strconv.IsPrint`, see [`go_quote`].
fn is_printable(c: char) -> bool {
    if c == ' ' {
        return true;
    }
    let format = matches!(c as u32,
        0xad | 0x600..=0x605 | 0x61c | 0x6dd | 0x70f | 0x180e | 0x200b..=0x200f
        | 0x202a..=0x202e | 0x2060..=0x206f | 0xfeff | 0xfff9..=0xfffb
        | 0xe000..=0xf8ff | 0xf0000..);
    !(c.is_control() || c.is_whitespace() || format)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The data of the table tests, as CAPI would decode it.
    fn data() -> GoValue {
        GoValue::from_json(&json!({
            "n": null, "s": "x", "f": 40, "big": 1000000, "small": 0.00001,
            "l": ["a", 1, true, null], "m": { "b": 1, "a": "z" }, "e": [], "em": {},
            "z": 0, "neg": -0.5, "h": 123456789, "t": true,
            "nested": { "deep": { "v": "ok" } },
        }))
    }

    fn run(template: &str) -> Result<String, EvalError> {
        render(template, &data())
    }

    /// Each case was checked against Go 1.26's text/template (the outputs
    /// and, for errors, that Go fails too).
    #[test]
    fn renders_as_go_does() {
        for (template, want) in [
            ("{{ .n }}", "<no value>"),
            ("{{ .s }}", "x"),
            ("{{ .f }}", "40"),
            ("{{ .big }}", "1e+06"),
            ("{{ .small }}", "1e-05"),
            ("{{ .h }}", "1.23456789e+08"),
            ("{{ .neg }}", "-0.5"),
            ("{{ .l }}", "[a 1 true <nil>]"),
            ("{{ .m }}", "map[a:z b:1]"),
            ("{{ .nested.deep.v }}", "ok"),
            ("{{ if .e }}t{{ else }}f{{ end }}", "f"),
            ("{{ if .em }}t{{ else }}f{{ end }}", "f"),
            ("{{ if .z }}t{{ else }}f{{ end }}", "f"),
            ("{{ if .n }}t{{ else }}f{{ end }}", "f"),
            ("{{ if .s }}t{{ end }}", "t"),
            ("{{ if false }}a{{ else if .s }}b{{ else }}c{{ end }}", "b"),
            ("{{ if false }}a{{ else if .z }}b{{ else }}c{{ end }}", "c"),
            ("{{ eq .n .s }}", "false"),
            ("{{ eq .s .n }}", "false"),
            ("{{ eq .n .n }}", "true"),
            ("{{ eq .f 40.0 }}", "true"),
            (r#"{{ eq .s "y" "x" }}"#, "true"),
            (r#"{{ ne .s "y" }}"#, "true"),
            (r#"{{ lt .s "y" }}"#, "true"),
            ("{{ gt .f 3.0 }}", "true"),
            ("{{ gt (int .f) 0 }}", "true"),
            ("{{ le (int .z) 0 }}", "true"),
            ("{{ ge .f 40.0 }}", "true"),
            ("{{ index .l 0 }}", "a"),
            (r#"{{ index .m "a" }}"#, "z"),
            (r#"{{ index .m "q" }}"#, "<no value>"),
            ("{{ index .l }}", "[a 1 true <nil>]"),
            ("{{ and .s .z }}", "0"),
            ("{{ or .z .s }}", "x"),
            ("{{ or .z .e }}", "[]"),
            ("{{ not .s }}", "false"),
            ("{{ .s | not }}", "false"),
            ("{{ .s | and 1 }}", "x"),
            ("{{ and (not .z) .t }}", "true"),
            ("a  {{- .s -}}  b", "axb"),
            ("a {{- .s }}\n b", "ax\n b"),
            ("{{ (.s) }}", "x"),
            (r#"{{ "a\tb\u00e9" }}"#, "a\tbé"),
            (r"{{ `raw\n` }}", r"raw\n"),
            ("{{ 1e3 }}", "1000"),
            ("{{ 0x10 }}", "16"),
            ("{{ -3 }}", "-3"),
            ("{{ .5 }}", "0.5"),
        ] {
            assert_eq!(run(template).as_deref(), Ok(want), "{template}");
        }
    }

    /// Go fails on each of these, at parse or execution time.
    #[test]
    fn fails_where_go_fails() {
        for template in [
            "{{ .n.x }}",
            "{{ .s.x }}",
            "{{ eq .s .f }}",
            "{{ eq .l .l }}",
            "{{ eq .m .s }}",
            "{{ eq .f 40 }}",
            "{{ gt .f 3 }}",
            "{{ lt true false }}",
            "{{ lt .n 1 }}",
            "{{ index .l 9 }}",
            "{{ index .e 0 }}",
            "{{ index .n 0 }}",
            "{{ index .l .f }}",
            "{{ and }}",
            "{{ .s 1 }}",
            "{{ 3 | .s }}",
            "{{ nil }}",
            "{{ nope .s }}",
            "{{ if .s }}unclosed",
            "{{ end }}",
            "{{ .s",
            r#"{{ "open }}"#,
        ] {
            assert!(
                run(template).is_err(),
                "{template} rendered {:?}",
                run(template)
            );
        }
    }

    /// The differences with Cluster API that are deliberate or outside
    /// the subset: each is an error rather than a guess.
    #[test]
    fn refuses_what_the_subset_does_not_know() {
        for template in [
            "{{ .missing }}",
            "{{ range .l }}{{ . }}{{ end }}",
            "{{ with .s }}{{ . }}{{ end }}",
            "{{ $x := .s }}",
            "{{/* comment */}}",
            "{{ printf \"%s\" .s }}",
        ] {
            assert!(run(template).is_err(), "{template}");
        }
    }

    #[test]
    fn sprig_quote_is_go_percent_q_of_the_value_text() {
        for (template, want) in [
            ("{{ .s | quote }}", r#""x""#),
            ("{{ .f | quote }}", r#""40""#),
            ("{{ .big | quote }}", r#""1e+06""#),
            ("{{ .t | quote }}", r#""true""#),
            // sprig drops nil arguments.
            ("{{ .n | quote }}", ""),
            (r#"{{ quote .s "y" }}"#, r#""x" "y""#),
        ] {
            assert_eq!(run(template).as_deref(), Ok(want), "{template}");
        }
        // Checked against Go's %q.
        assert_eq!(
            go_quote("a\"b\\c\n\t\u{1}\u{7f}\u{a0}é\u{200b}\u{2028}😀\u{feff}<&>"),
            r#""a\"b\\c\n\t\x01\x7f\u00a0é\u200b\u2028😀\ufeff<&>""#
        );
    }

    #[test]
    fn sprig_to_json_is_go_json_marshal() {
        assert_eq!(
            run("{{ .m | toJson }}").as_deref(),
            Ok(r#"{"a":"z","b":1}"#)
        );
        assert_eq!(
            run("{{ .l | toJson }}").as_deref(),
            Ok(r#"["a",1,true,null]"#)
        );
        // Checked against Go's json.Marshal.
        assert_eq!(
            json_string("a\"b\\c\n\t\u{1}\u{7f}\u{a0}é\u{2028}<&>\u{8}\u{c}"),
            "\"a\\\"b\\\\c\\n\\t\\u0001\u{7f}\u{a0}é\\u2028\\u003c\\u0026\\u003e\\b\\f\""
        );
    }

    /// `%v` and `json.Marshal` of float64s, checked against Go.
    #[test]
    fn floats_are_written_as_go_writes_them() {
        for (f, v, j) in [
            (0.0, "0", "0"),
            (-0.0, "-0", "-0"),
            (40.0, "40", "40"),
            (1e6, "1e+06", "1000000"),
            (1e5, "100000", "100000"),
            (123456.5, "123456.5", "123456.5"),
            (1e21, "1e+21", "1e+21"),
            (1e20, "1e+20", "100000000000000000000"),
            (1e-5, "1e-05", "0.00001"),
            (1e-4, "0.0001", "0.0001"),
            (1.5e-7, "1.5e-07", "1.5e-7"),
            (0.1, "0.1", "0.1"),
            (-2.5, "-2.5", "-2.5"),
            (1.5e300, "1.5e+300", "1.5e+300"),
        ] {
            assert_eq!(go_float(f), v, "%v of {f}");
            assert_eq!(go_json(&GoValue::Float(f)), j, "json of {f}");
        }
    }

    #[test]
    fn sprig_int_is_cast_to_int() {
        for (v, want) in [
            (json!(40), 40),
            (json!(40.9), 40),
            (json!(-3.5), -3),
            (json!("40"), 40),
            (json!("40.00"), 40),
            (json!("40.5"), 0),
            (json!("010"), 8),
            (json!("0x1f"), 31),
            (json!("-7"), -7),
            (json!("x"), 0),
            (json!(true), 1),
            (json!(null), 0),
            (json!([1]), 0),
        ] {
            assert_eq!(to_int(&GoValue::from_json(&v)), want, "int of {v}");
        }
    }
}
