//! Magnum's dialect of JSON Patch: RFC 6902 restricted to `add`, `replace`
//! and `remove`, as WSME decodes a PATCH body into `JsonPatchType`s
//! (`magnum/api/controllers/v1/types.py`), as `magnum.api.utils.
//! apply_jsonpatch` applies them with python-jsonpatch 1.33, with the
//! per-resource attribute lists, and the WSME type checks of the patched
//! structured values (labels, `health_status_reason`, `node_labels`,
//! `node_taints`).
//!
//! Errors carry Magnum's status and exact message ([`Error`]); the API layer
//! turns them into its error bodies unchanged.

use std::fmt;

use python_semantics::decode::{self, DecodeError};
use python_semantics::literal::parse_literal;
use python_semantics::python::{self, PyRepr};
use python_semantics::value::{Dict, PyValue};

/// The class of a patch error: Magnum's exception (or WSME's) behind it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ErrorKind {
    /// WSME's `Invalid input for field/attribute …` (400).
    InvalidInput,
    /// WSME's `Missing argument: "patch"` (400).
    MissingArgument,
    /// WSME's `Unknown attribute for argument patch: …` (400).
    UnknownAttribute,
    /// A `wsme.exc.ClientSideError` raised by Magnum's or WSME's code (400).
    ClientSideError,
    /// Magnum's `PatchError`: `Couldn't apply patch '…'. Reason: …` (400).
    PatchError,
    /// A Python exception Magnum does not handle, with its text.
    ServerError,
}

impl ErrorKind {
    /// The exception class name, as `magnum_domain::MagnumError::kind`
    /// names it.
    pub fn name(self) -> &'static str {
        match self {
            ErrorKind::InvalidInput => "InvalidInput",
            ErrorKind::MissingArgument => "MissingArgument",
            ErrorKind::UnknownAttribute => "UnknownAttribute",
            ErrorKind::ClientSideError => "ClientSideError",
            ErrorKind::PatchError => "PatchError",
            ErrorKind::ServerError => "ServerError",
        }
    }

    /// The HTTP status.
    pub fn status(self) -> u16 {
        // Deviation: Magnum answers 500 for a ServerError (an exception it
        // does not handle); bad input is the client's error, so 400.
        400
    }
}

/// A refused PATCH: Magnum's status and message.
#[derive(Clone, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    message: String,
}

impl Error {
    fn new(kind: ErrorKind, message: impl Into<String>) -> Self {
        Error {
            kind,
            message: message.into(),
        }
    }

    /// The class of the error.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }

    /// The HTTP status.
    pub fn status(&self) -> u16 {
        self.kind.status()
    }

    /// The message, exactly as Magnum writes it.
    pub fn message(&self) -> &str {
        &self.message
    }

    /// The message, by value.
    pub fn into_message(self) -> String {
        self.message
    }

    fn invalid_input(field: &str, shown: &str, reason: &str) -> Self {
        Error::new(
            ErrorKind::InvalidInput,
            format!("Invalid input for field/attribute {field}. Value: '{shown}'. {reason}"),
        )
    }

    fn client(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::ClientSideError, message)
    }

    fn server(message: impl Into<String>) -> Self {
        Error::new(ErrorKind::ServerError, message)
    }

    fn patch(ops: &[Operation], reason: &str) -> Self {
        Error::new(
            ErrorKind::PatchError,
            format!(
                "Couldn't apply patch '{}'. Reason: {reason}",
                python::repr(&PatchList(ops))
            ),
        )
    }
}

impl fmt::Debug for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}({}): {}",
            self.kind.name(),
            self.status(),
            self.message
        )
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

/// A JSON-patch operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Op {
    Add,
    Replace,
    Remove,
}

impl Op {
    /// The operation's name in a patch.
    pub fn as_str(self) -> &'static str {
        match self {
            Op::Add => "add",
            Op::Replace => "replace",
            Op::Remove => "remove",
        }
    }
}

/// One validated JSON-patch operation.
#[derive(Clone, Debug, PartialEq)]
pub struct Operation {
    pub op: Op,
    /// The JSON pointer, matching `^(/[\w-]+)+$`.
    pub path: String,
    /// The value: from a body, a `str`, an `int` or a `bool` (WSME's integer
    /// check lets booleans through); `None` when absent or `null`. After
    /// [`apply`] parsed a literal, any Python value.
    pub value: Option<PyValue>,
}

impl Operation {
    /// An operation with a value.
    pub fn new(op: Op, path: impl Into<String>, value: Option<PyValue>) -> Self {
        Operation {
            op,
            path: path.into(),
            value,
        }
    }
}

/// The operations as Magnum's list of dicts (keys `path`, `op`, `value`),
/// the form its `PatchError` messages show.
struct PatchList<'a>(&'a [Operation]);

impl PyRepr for PatchList<'_> {
    fn write_repr(&self, out: &mut String) {
        out.push('[');
        for (i, op) in self.0.iter().enumerate() {
            if i > 0 {
                out.push_str(", ");
            }
            out.push_str("{'path': ");
            python::write_string_repr(out, &op.path);
            out.push_str(", 'op': ");
            python::write_string_repr(out, op.op.as_str());
            if let Some(v) = &op.value {
                out.push_str(", 'value': ");
                v.write_repr(out);
            }
            out.push('}');
        }
        out.push(']');
    }

    fn class_name(&self) -> &'static str {
        "list"
    }
}

/// The internal paths of a resource: those of every resource
/// (`types.py` `JsonPatchType.internal_attrs`), then the resource's own.
macro_rules! internal_paths {
    ($($own:literal),* $(,)?) => {
        &[
            "/created_at",
            "/id",
            "/links",
            "/updated_at",
            "/uuid",
            "/project_id",
            "/user_id",
            $($own),*
        ]
    };
}

/// The internal attributes of every resource
/// (`types.py` `JsonPatchType.internal_attrs`).
pub const BASE_INTERNAL: &[&str] = internal_paths![];

/// The paths whose `replace` value Magnum parses with `ast.literal_eval`
/// (`utils.py` `apply_jsonpatch`).
pub const DEFAULT_LITERAL_FIELDS: &[&str] = &[
    "/labels",
    "/health_status_reason",
    "/node_labels",
    "/node_taints",
];

/// The attribute lists of one resource's PATCH.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Rules {
    /// Paths that can never be patched ([`BASE_INTERNAL`] included).
    pub internal: &'static [&'static str],
    /// Paths that cannot be removed (the API type's mandatory attributes
    /// and the resource's own non-removable set).
    pub mandatory: &'static [&'static str],
    /// Paths whose `replace` value is a Python literal.
    pub literal_fields: &'static [&'static str],
}

/// Clusters (`cluster.py:278-287`).
pub const CLUSTER: Rules = Rules {
    internal: internal_paths![
        "/api_address",
        "/node_addresses",
        "/master_addresses",
        "/stack_id",
        "/cluster_id",
        "/ca_cert_ref",
        "/magnum_cert_ref",
        "/etcd_ca_cert_ref",
        "/front_proxy_ca_cert_ref",
    ],
    mandatory: &["/cluster_template_id"],
    literal_fields: DEFAULT_LITERAL_FIELDS,
};

/// Cluster templates (`cluster_template.py:230-235`).
pub const CLUSTER_TEMPLATE: Rules = Rules {
    internal: BASE_INTERNAL,
    mandatory: &[
        "/image_id",
        "/network_driver",
        "/external_network_id",
        "/tls_disabled",
        "/public",
        "/server_type",
        "/coe",
        "/registry_enabled",
        "/cluster_distro",
        "/hidden",
    ],
    literal_fields: DEFAULT_LITERAL_FIELDS,
};

/// Nodegroups (`nodegroup.py:322-333`).
pub const NODE_GROUP: Rules = Rules {
    internal: internal_paths![
        "/name",
        "/cluster_id",
        "/docker_volume_size",
        "/labels",
        "/flavor_id",
        "/image_id",
        "/node_addresses",
        "/node_count",
        "/role",
        "/is_default",
        "/stack_id",
        "/status",
        "/status_reason",
        "/version",
    ],
    mandatory: &[],
    literal_fields: DEFAULT_LITERAL_FIELDS,
};

/// Federations.
pub const FEDERATION: Rules = Rules {
    internal: BASE_INTERNAL,
    mandatory: &[],
    literal_fields: DEFAULT_LITERAL_FIELDS,
};

/// The enum's values in the order Magnum's (hash-ordered) set shows them.
const OP_ENUM: &[&str] = &["add", "remove", "replace"];

const PATH_PATTERN: &str = r"^(/[\w-]+)+$";

/// Whether `path` matches WSME's `^(/[\w-]+)+$`: Python's `\w` is
/// `str.isalnum()` or `_`, and its `$` also matches before a final newline.
fn path_matches(path: &str) -> bool {
    let path = path.strip_suffix('\n').unwrap_or(path);
    let Some(rest) = path.strip_prefix('/') else {
        return false;
    };
    rest.split('/')
        .all(|seg| !seg.is_empty() && seg.chars().all(|c| c == '-' || python::is_word(c)))
}

/// Decodes a PATCH body the way WSME converts it into a list of
/// `JsonPatchType` (type checks only; [`parse_and_check`] adds the
/// attribute rules).
pub fn parse(body: &[u8]) -> Result<Vec<Operation>, Error> {
    parse_with(body, None)
}

/// Decodes a PATCH body and applies the resource's attribute rules element
/// by element, in Magnum's order: each element's type checks, then its
/// internal/mandatory/value checks, before the next element.
pub fn parse_and_check(body: &[u8], rules: &Rules) -> Result<Vec<Operation>, Error> {
    parse_with(body, Some(rules))
}

fn parse_with(body: &[u8], rules: Option<&Rules>) -> Result<Vec<Operation>, Error> {
    let missing = || Error::new(ErrorKind::MissingArgument, "Missing argument: \"patch\"");
    if body.trim_ascii().is_empty() {
        return Err(missing());
    }
    let doc = match decode::decode_ordered(body) {
        Ok(doc) => doc,
        Err(DecodeError::Invalid) => {
            return Err(Error::client("Request is not in valid JSON format"));
        }
        Err(DecodeError::TooDeep(msg)) => return Err(Error::server(msg)),
    };
    let list = match doc {
        PyValue::None => return Err(missing()),
        PyValue::List(list) => list,
        other => {
            let shown = python::str_of(&other);
            return Err(Error::invalid_input(
                "patch",
                &shown,
                &format!("Value not a valid list: {shown}"),
            ));
        }
    };
    let mut ops = Vec::with_capacity(list.len());
    for el in list {
        let obj = match el {
            PyValue::Dict(d) => d,
            // Magnum keeps a null element and fails subscripting it.
            PyValue::None => {
                return Err(Error::server("'NoneType' object is not subscriptable"));
            }
            other => {
                return Err(Error::server(format!(
                    "'{}' object has no attribute 'keys'",
                    other.class_name()
                )));
            }
        };
        let op = convert_op(obj)?;
        if let Some(rules) = rules {
            check_op(&op, rules)?;
        }
        ops.push(op);
    }
    Ok(ops)
}

fn convert_op(obj: Dict) -> Result<Operation, Error> {
    let unknown: Vec<&str> = obj
        .keys()
        .filter_map(PyValue::as_str)
        .filter(|k| !matches!(*k, "path" | "op" | "value"))
        .collect();
    if !unknown.is_empty() {
        let noun = if unknown.len() > 1 {
            "attributes"
        } else {
            "attribute"
        };
        return Err(Error::new(
            ErrorKind::UnknownAttribute,
            format!("Unknown {noun} for argument patch: {}", unknown.join(", ")),
        ));
    }
    let mandatory = |field: &str| Error::invalid_input(field, "None", "Mandatory field missing.");
    // WSME converts the attributes in declaration order: path, op, value.
    let path = match obj.get("path") {
        None => return Err(mandatory("path")),
        // A null path passes WSME and breaks Magnum's apply_jsonpatch.
        Some(PyValue::None) => {
            return Err(Error::server("'NoneType' object has no attribute 'count'"));
        }
        Some(PyValue::Str(s)) => {
            if !path_matches(s) {
                return Err(Error::invalid_input(
                    "path",
                    s,
                    &format!("Value should match the pattern {PATH_PATTERN}"),
                ));
            }
            s.clone()
        }
        Some(other) => {
            return Err(Error::invalid_input(
                "path",
                &python::str_of(other),
                "Value should be string",
            ));
        }
    };
    let op = match obj.get("op") {
        None => return Err(mandatory("op")),
        Some(PyValue::None) => return Err(Error::server("Unknown operation None")),
        Some(PyValue::Str(s)) if s == "add" => Op::Add,
        Some(PyValue::Str(s)) if s == "replace" => Op::Replace,
        Some(PyValue::Str(s)) if s == "remove" => Op::Remove,
        Some(other) => {
            return Err(Error::invalid_input(
                "op",
                &python::str_of(other),
                &format!("Value should be one of: {}", OP_ENUM.join(", ")),
            ));
        }
    };
    let value = match obj.get("value") {
        None | Some(PyValue::None) => None,
        Some(v @ (PyValue::Str(_) | PyValue::Int(_) | PyValue::Bool(_))) => Some(v.clone()),
        Some(other) => {
            return Err(Error::invalid_input(
                "value",
                &python::str_of(other),
                &format!(
                    "Wrong type. Expected '(<class 'str'>, <class 'int'>)', got '{}'",
                    python::class_of(other)
                ),
            ));
        }
    };
    Ok(Operation { op, path, value })
}

/// Applies the resource's attribute rules to each operation
/// (`JsonPatchType.validate`): internal attributes, non-removable
/// attributes, and a value for `add`/`replace`.
pub fn check(ops: &[Operation], rules: &Rules) -> Result<(), Error> {
    ops.iter().try_for_each(|op| check_op(op, rules))
}

fn check_op(op: &Operation, rules: &Rules) -> Result<(), Error> {
    if rules.internal.contains(&op.path.as_str()) {
        return Err(Error::client(format!(
            "'{}' is an internal attribute and can not be updated",
            op.path
        )));
    }
    if op.op == Op::Remove && rules.mandatory.contains(&op.path.as_str()) {
        return Err(Error::client(format!(
            "'{}' is a mandatory attribute and can not be removed",
            op.path
        )));
    }
    if op.op != Op::Remove && op.value.is_none() {
        return Err(Error::client("'add' and 'replace' operations needs value"));
    }
    Ok(())
}

/// Applies `ops` to `doc` with Magnum's semantics and returns the patched
/// copy. `doc` holds the resource's attributes (every column, `None` when
/// unset), in the order its messages should show them.
pub fn apply(doc: &Dict, ops: &[Operation], rules: &Rules) -> Result<Dict, Error> {
    check(ops, rules)?;
    let mut work: Vec<Operation> = ops.to_vec();
    for i in 0..work.len() {
        let op = &work[i];
        // Magnum: magnum/api/utils.py:72 — a top-level "add" must target an
        // existing attribute that is currently unset.
        if op.op == Op::Add && op.path.matches('/').count() == 1 {
            match doc.get(&op.path[1..]) {
                None => {
                    return Err(Error::client(format!(
                        "Adding a new attribute {} to the root of the resource is not allowed.",
                        op.path
                    )));
                }
                Some(v) if !v.is_none() => {
                    return Err(Error::client(format!(
                        "The attribute {} has existed, please use 'replace' operation instead.",
                        op.path
                    )));
                }
                Some(_) => {}
            }
        }
        // Magnum: magnum/api/utils.py:84 — replace of a structured field
        // takes a Python literal string. The list is updated in place, so
        // later messages show the parsed values of earlier operations.
        if op.op == Op::Replace && rules.literal_fields.contains(&op.path.as_str()) {
            match &op.value {
                // Already structured (never from a body).
                Some(PyValue::Dict(_) | PyValue::List(_)) => {}
                Some(PyValue::Str(s)) => match parse_literal(s) {
                    Ok(v) => work[i].value = Some(v),
                    // Magnum catches SyntaxError and ValueError only; the
                    // others (unhashable keys, recursion) escape it.
                    Err(e) if !e.kind().caught_by_magnum() => {
                        return Err(Error::server(e.to_string()));
                    }
                    Err(e) => return Err(Error::patch(&work, &e.to_string())),
                },
                other => {
                    let reason = format!(
                        "malformed node or string: {}",
                        python::repr(&PyValue::from(other.clone()))
                    );
                    return Err(Error::patch(&work, &reason));
                }
            }
        }
    }
    let mut root = PyValue::Dict(doc.clone());
    for op in &work {
        match apply_one(&mut root, op) {
            Ok(()) => {}
            Err(Failure::Conflict(reason)) => return Err(Error::patch(&work, &reason)),
            Err(Failure::Server(msg)) => return Err(Error::server(msg)),
        }
    }
    match root {
        PyValue::Dict(d) => Ok(d),
        _ => Ok(Dict::new()),
    }
}

/// Why python-jsonpatch refused an operation: a `JsonPatchConflict` or
/// `JsonPointerException` (Magnum's `PatchError`), or another exception.
enum Failure {
    Conflict(String),
    Server(String),
}

fn not_indexable(class: &str) -> Failure {
    Failure::Conflict(format!(
        "Document '<class '{class}'>' does not support indexing, must be mapping/sequence or \
         support __getitem__"
    ))
}

/// A place the pointer walks through: inside the document, or a value
/// made on the way (a character of a string, a byte), which nothing can
/// change.
enum Place<'a> {
    In(&'a mut PyValue),
    Made(PyValue),
}

impl Place<'_> {
    fn value(&self) -> &PyValue {
        match self {
            Place::In(v) => v,
            Place::Made(v) => v,
        }
    }
}

/// A sequence index of a pointer (`jsonpointer` `get_part`).
enum Index {
    At(usize),
    End,
}

fn seq_index(part: &str) -> Result<Index, Failure> {
    if part == "-" {
        return Ok(Index::End);
    }
    let valid = part == "0"
        || (!part.is_empty() && !part.starts_with('0') && part.bytes().all(|b| b.is_ascii_digit()));
    if !valid {
        return Err(Failure::Conflict(format!(
            "'{part}' is not a valid sequence index"
        )));
    }
    Ok(Index::At(part.parse().unwrap_or(usize::MAX)))
}

/// One intermediate step of the pointer (`jsonpointer.walk`).
fn walk<'a>(place: Place<'a>, part: &str) -> Result<Place<'a>, Failure> {
    let len = match place.value() {
        PyValue::Dict(_) => None,
        PyValue::List(items) | PyValue::Tuple(items) => Some(items.len()),
        PyValue::Str(s) => Some(s.chars().count()),
        PyValue::Bytes(b) => Some(b.len()),
        other => return Err(not_indexable(other.class_name())),
    };
    let Some(len) = len else {
        // A dict.
        let found = match &place {
            Place::In(PyValue::Dict(d)) | Place::Made(PyValue::Dict(d)) => d.contains_key(part),
            _ => false,
        };
        if !found {
            return Err(Failure::Conflict(format!(
                "member '{part}' not found in {}",
                python::str_of(place.value())
            )));
        }
        return Ok(match place {
            Place::In(PyValue::Dict(d)) => match d.get_mut(part) {
                Some(v) => Place::In(v),
                None => Place::Made(PyValue::None),
            },
            Place::Made(PyValue::Dict(mut d)) => {
                Place::Made(d.remove(part).unwrap_or(PyValue::None))
            }
            _ => Place::Made(PyValue::None),
        });
    };
    let idx = match seq_index(part)? {
        // jsonpointer's EndOfList cannot be walked further.
        Index::End => return Err(not_indexable("jsonpointer.EndOfList")),
        Index::At(i) => i,
    };
    if idx >= len {
        return Err(Failure::Conflict(format!("index '{idx}' is out of bounds")));
    }
    Ok(match place {
        Place::In(PyValue::List(items) | PyValue::Tuple(items)) => Place::In(&mut items[idx]),
        Place::Made(PyValue::List(mut items) | PyValue::Tuple(mut items)) => {
            Place::Made(items.swap_remove(idx))
        }
        other => match other.value() {
            PyValue::Str(s) => Place::Made(PyValue::Str(
                s.chars().nth(idx).map(String::from).unwrap_or_default(),
            )),
            PyValue::Bytes(b) => Place::Made(PyValue::from(i64::from(b[idx]))),
            _ => Place::Made(PyValue::None),
        },
    })
}

/// Applies one operation as python-jsonpatch 1.33 does.
fn apply_one(root: &mut PyValue, op: &Operation) -> Result<(), Failure> {
    let parts: Vec<&str> = op.path[1..].split('/').collect();
    let (last, inner) = match parts.split_last() {
        Some(split) => split,
        None => return Ok(()),
    };
    let mut place = Place::In(root);
    for part in inner {
        place = walk(place, part)?;
    }
    let value = op.value.clone().unwrap_or(PyValue::None);
    // Values placed inside values could nest without bound, and Python
    // could not show or copy the result either.
    // Deviation: refused here as a RecursionError; CPython fails later.
    if op.op != Op::Remove && inner.len() + 1 + nesting(&value, MAX_NESTING) > MAX_NESTING {
        return Err(Failure::Server(
            "maximum recursion depth exceeded while getting the repr of an object".into(),
        ));
    }
    let parent = match place {
        Place::In(parent) => parent,
        // A value made on the way: a one-character string or an int.
        Place::Made(v) => return finish_immutable(&v, last, op),
    };
    match parent {
        PyValue::Dict(d) => match op.op {
            Op::Add => {
                d.insert(*last, value);
            }
            Op::Replace => match d.get_mut(last) {
                Some(slot) => *slot = value,
                None => {
                    return Err(Failure::Conflict(format!(
                        "can't replace a non-existent object '{last}'"
                    )));
                }
            },
            Op::Remove => {
                if d.remove(last).is_none() {
                    return Err(Failure::Conflict(format!(
                        "can't remove a non-existent object '{last}'"
                    )));
                }
            }
        },
        PyValue::List(items) => {
            let idx = seq_index(last)?;
            match (op.op, idx) {
                (Op::Add, Index::End) => items.push(value),
                (Op::Add, Index::At(i)) if i > items.len() => {
                    return Err(Failure::Conflict("can't insert outside of list".into()));
                }
                (Op::Add, Index::At(i)) => items.insert(i, value),
                (Op::Replace, Index::End) => {
                    return Err(Failure::Conflict(
                        "'path' with '-' can't be applied to 'replace' operation".into(),
                    ));
                }
                (Op::Replace, Index::At(i)) => match items.get_mut(i) {
                    Some(slot) => *slot = value,
                    None => {
                        return Err(Failure::Conflict("can't replace outside of list".into()));
                    }
                },
                (Op::Remove, Index::End) => {
                    return Err(Failure::Conflict(format!("invalid array index '{last}'")));
                }
                (Op::Remove, Index::At(i)) if i >= items.len() => {
                    return Err(Failure::Conflict(format!(
                        "can't remove a non-existent object '{last}'"
                    )));
                }
                (Op::Remove, Index::At(i)) => {
                    items.remove(i);
                }
            }
        }
        other => return finish_immutable(other, last, op),
    }
    Ok(())
}

/// How deep a patched document may nest (as deep as a decoded body).
const MAX_NESTING: usize = decode::MAX_DEPTH;

/// The nesting depth of `v` (a scalar is 0), counted up to `cap`.
fn nesting(v: &PyValue, cap: usize) -> usize {
    if cap == 0 {
        return 0;
    }
    let inner = match v {
        PyValue::List(items) | PyValue::Tuple(items) | PyValue::Set(items) => {
            items.iter().map(|e| nesting(e, cap - 1)).max().unwrap_or(0)
        }
        PyValue::Dict(d) => d
            .iter()
            .map(|(k, e)| nesting(k, cap - 1).max(nesting(e, cap - 1)))
            .max()
            .unwrap_or(0),
        _ => return 0,
    };
    1 + inner
}

/// The last step on a value that cannot change: immutable sequences fail
/// after the index is resolved, other values cannot be indexed.
fn finish_immutable(parent: &PyValue, last: &str, op: &Operation) -> Result<(), Failure> {
    match parent {
        PyValue::Str(_) | PyValue::Tuple(_) | PyValue::Bytes(_) => {
            let part = match seq_index(last)? {
                Index::End => "-".to_owned(),
                Index::At(i) => i.to_string(),
            };
            if op.op == Op::Remove {
                return Err(Failure::Server(format!(
                    "'{}' object doesn't support item deletion",
                    parent.class_name()
                )));
            }
            Err(Failure::Conflict(format!(
                "unable to fully resolve json pointer {}, part {part}",
                op.path
            )))
        }
        other => Err(not_indexable(other.class_name())),
    }
}

// ------------------------------------------------------------ value checks

/// The entries of a checked string dict, in dict order.
pub type Entries = Vec<(String, String)>;

/// The entries of a dict value, or `None` for anything else.
fn dict_items(v: &PyValue) -> Option<&Dict> {
    v.as_dict()
}

fn wrong_type(field: &str, shown: &PyValue, expected: &str, got: &PyValue) -> Error {
    Error::invalid_input(
        field,
        &python::str_of(shown),
        &format!(
            "Wrong type. Expected '{expected}', got '{}'",
            python::class_of(got)
        ),
    )
}

/// The reason of a `DictType(text, text)` failure of `v` (a dict).
fn string_map_entries(v: &Dict) -> Result<Entries, (String, &PyValue)> {
    let mut out = Vec::with_capacity(v.len());
    for (k, val) in v.iter() {
        let PyValue::Str(k) = k else {
            return Err(("<class 'str'>".into(), k));
        };
        let PyValue::Str(val) = val else {
            return Err(("<class 'str'>".into(), val));
        };
        out.push((k.clone(), val.clone()));
    }
    Ok(out)
}

/// Checks a patched value against WSME's `DictType(text, text)`
/// (`health_status_reason`, `node_labels`, federation `properties`) and
/// returns its entries in dict order; `field` names the attribute in the
/// error. `None` for a `None` value.
pub fn string_map(field: &str, v: &PyValue) -> Result<Option<Entries>, Error> {
    if v.is_none() {
        return Ok(None);
    }
    let Some(d) = dict_items(v) else {
        return Err(wrong_type(field, v, "{<class 'str'>: <class 'str'>}", v));
    };
    string_map_entries(d)
        .map(Some)
        .map_err(|(expected, got)| wrong_type(field, v, &expected, got))
}

/// The `str` keys of a patched dict value in dict order (Python's
/// insertion order); empty for other values.
pub fn string_map_order(v: &PyValue) -> Vec<String> {
    dict_items(v)
        .map(|d| {
            d.keys()
                .filter_map(PyValue::as_str)
                .map(String::from)
                .collect()
        })
        .unwrap_or_default()
}

/// Checks a patched labels value against WSME's `DictType(text,
/// MultiType(text, int, bool, float))` and returns its entries in dict
/// order with the values as Magnum stores them, through `str()` (`1` →
/// `"1"`, `True` → `"True"`). `None` for a `None` value.
pub fn labels(field: &str, v: &PyValue) -> Result<Option<Entries>, Error> {
    if v.is_none() {
        return Ok(None);
    }
    let Some(d) = dict_items(v) else {
        return Err(wrong_type(
            field,
            v,
            "{<class 'str'>: <class 'str'> | <class 'int'> | <class 'bool'> | <class 'float'>}",
            v,
        ));
    };
    let mut out = Vec::with_capacity(d.len());
    for (k, val) in d.iter() {
        let PyValue::Str(key) = k else {
            return Err(wrong_type(field, v, "<class 'str'>", k));
        };
        let s = match val {
            PyValue::Str(s) => s.clone(),
            PyValue::Int(_) | PyValue::Bool(_) | PyValue::Float(_) => python::str_of(val),
            PyValue::None => {
                return Err(Error::server(format!(
                    "Field `{field}[{key}]' cannot be None"
                )));
            }
            other => {
                return Err(wrong_type(
                    field,
                    v,
                    "(<class 'str'>, <class 'int'>, <class 'bool'>, <class 'float'>)",
                    other,
                ));
            }
        };
        out.push((key.clone(), s));
    }
    Ok(Some(out))
}

/// Checks a patched `node_taints` value against WSME's
/// `ArrayType(DictType(text, text))`; each taint's entries in dict order.
/// `None` for a `None` value.
pub fn taints(field: &str, v: &PyValue) -> Result<Option<Vec<Entries>>, Error> {
    if v.is_none() {
        return Ok(None);
    }
    let Some(list) = v.as_list() else {
        return Err(wrong_type(field, v, "[{<class 'str'>: <class 'str'>}]", v));
    };
    let mut out = Vec::with_capacity(list.len());
    for e in list {
        let Some(d) = dict_items(e) else {
            return Err(wrong_type(field, v, "{<class 'str'>: <class 'str'>}", e));
        };
        // The element's failure, shown with the whole list.
        let entries = string_map_entries(d)
            .map_err(|(expected, got)| wrong_type(field, v, &expected, got))?;
        out.push(entries);
    }
    Ok(Some(out))
}

/// A refused JSON Patch already carries Magnum's class, status and message.
impl From<Error> for magnum_domain::MagnumError {
    fn from(e: Error) -> Self {
        let (status, kind) = (e.status(), e.kind().name());
        magnum_domain::MagnumError::new(status, kind, e.into_message())
    }
}

#[cfg(test)]
mod tests;
