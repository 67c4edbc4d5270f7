//! The Python values Magnum's PATCH code handles: what `json.loads` makes of
//! a request body and what `ast.literal_eval` makes of a literal string, in
//! one type ([`PyValue`]), with Python's `repr()`, `str()` and class names,
//! Python's equality of dict keys, and the conversions to and from
//! `serde_json`.

use std::collections::HashMap;

use crate::python::{self, Complex, PyInt, PyRepr};

/// A Python value: `None`, `bool`, `int` (any size), `float`, `complex`,
/// `str`, `bytes`, `Ellipsis`, `list`, `tuple`, `set` or `dict`.
///
/// `PartialEq` is structural (`1 != 1.0`, `True != 1`, sets compare in
/// order); Python's own equality of dict keys and set members is what
/// [`Dict`] and the literal parser apply when they de-duplicate.
#[derive(Clone, Debug, PartialEq)]
pub enum PyValue {
    /// `None`.
    None,
    /// `True` or `False`.
    Bool(bool),
    /// An `int`.
    Int(PyInt),
    /// A `float`.
    Float(f64),
    /// A `complex`.
    Complex(Complex),
    /// A `str`.
    ///
    /// Deviation: a Python `str` may hold lone surrogates (`'\ud800'`);
    /// Rust strings cannot, so the literal parser turns them into U+FFFD.
    Str(String),
    /// A `bytes` value.
    Bytes(Vec<u8>),
    /// The `Ellipsis` constant (the literal `...`).
    Ellipsis,
    /// A `list`.
    List(Vec<PyValue>),
    /// A `tuple`.
    Tuple(Vec<PyValue>),
    /// A `set`, members in the order the source gave them (Python iterates a
    /// set in hash order, so its `repr` may list them otherwise).
    Set(Vec<PyValue>),
    /// A `dict`, in insertion order.
    Dict(Dict),
}

impl PyValue {
    /// The string, for a `str`.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            PyValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The dict, for a `dict`.
    pub fn as_dict(&self) -> Option<&Dict> {
        match self {
            PyValue::Dict(d) => Some(d),
            _ => None,
        }
    }

    /// The elements, for a `list`.
    pub fn as_list(&self) -> Option<&[PyValue]> {
        match self {
            PyValue::List(l) => Some(l),
            _ => None,
        }
    }

    /// The integer, for an `int` (not for a `bool`).
    pub fn as_int(&self) -> Option<&PyInt> {
        match self {
            PyValue::Int(n) => Some(n),
            _ => None,
        }
    }

    /// Whether the value is `None`.
    pub fn is_none(&self) -> bool {
        matches!(self, PyValue::None)
    }

    /// The value as plain JSON, as Magnum's code reads it after the type
    /// checks: dicts with `str` keys become objects (in order), lists and
    /// tuples arrays.
    ///
    /// Values that have no JSON form are refused with their Python class
    /// name: sets, bytes, complex numbers, `Ellipsis`, dicts with a key
    /// that is not a `str` (the key's class), and non-finite floats
    /// (`float`). Integers beyond the 64-bit range become floats, as
    /// `serde_json` itself reads them; callers that must keep them exact
    /// work on the `PyValue`.
    pub fn to_json(&self) -> Result<serde_json::Value, NotJson> {
        use serde_json::Value;
        Ok(match self {
            PyValue::None => Value::Null,
            PyValue::Bool(b) => Value::Bool(*b),
            PyValue::Int(n) => match n.to_i64() {
                Some(i) => Value::from(i),
                None => match n.to_string().parse::<u64>() {
                    Ok(u) => Value::from(u),
                    Err(_) => n
                        .to_f64()
                        .and_then(serde_json::Number::from_f64)
                        .map(Value::Number)
                        .ok_or(NotJson { class: "int" })?,
                },
            },
            PyValue::Float(f) => serde_json::Number::from_f64(*f)
                .map(Value::Number)
                .ok_or(NotJson { class: "float" })?,
            PyValue::Str(s) => Value::String(s.clone()),
            PyValue::List(items) | PyValue::Tuple(items) => Value::Array(
                items
                    .iter()
                    .map(PyValue::to_json)
                    .collect::<Result<_, _>>()?,
            ),
            PyValue::Dict(d) => {
                let mut map = serde_json::Map::with_capacity(d.len());
                for (k, v) in d.iter() {
                    let PyValue::Str(k) = k else {
                        return Err(NotJson {
                            class: k.class_name(),
                        });
                    };
                    map.insert(k.clone(), v.to_json()?);
                }
                Value::Object(map)
            }
            other @ (PyValue::Complex(_)
            | PyValue::Bytes(_)
            | PyValue::Ellipsis
            | PyValue::Set(_)) => {
                return Err(NotJson {
                    class: other.class_name(),
                });
            }
        })
    }
}

/// A value that has no JSON form; `class` is the Python class that has none.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
#[error("a Python {class} has no JSON form")]
pub struct NotJson {
    /// The Python class name (`set`, `bytes`, `complex`, …).
    pub class: &'static str,
}

/// A JSON value is the Python value `json.loads` makes of it.
impl From<serde_json::Value> for PyValue {
    fn from(v: serde_json::Value) -> Self {
        use serde_json::Value;
        match v {
            Value::Null => PyValue::None,
            Value::Bool(b) => PyValue::Bool(b),
            Value::Number(n) => {
                if let Some(i) = n.as_i64() {
                    PyValue::Int(PyInt::from(i))
                } else if let Some(u) = n.as_u64() {
                    PyInt::from_decimal(false, &u.to_string())
                        .map_or(PyValue::Float(u as f64), PyValue::Int)
                } else {
                    PyValue::Float(n.as_f64().unwrap_or(f64::NAN))
                }
            }
            Value::String(s) => PyValue::Str(s),
            Value::Array(items) => PyValue::List(items.into_iter().map(PyValue::from).collect()),
            Value::Object(map) => PyValue::Dict(
                map.into_iter()
                    .map(|(k, v)| (PyValue::Str(k), PyValue::from(v)))
                    .collect(),
            ),
        }
    }
}

impl From<&str> for PyValue {
    fn from(s: &str) -> Self {
        PyValue::Str(s.to_owned())
    }
}

impl From<String> for PyValue {
    fn from(s: String) -> Self {
        PyValue::Str(s)
    }
}

impl From<i64> for PyValue {
    fn from(n: i64) -> Self {
        PyValue::Int(PyInt::from(n))
    }
}

impl From<PyInt> for PyValue {
    fn from(n: PyInt) -> Self {
        PyValue::Int(n)
    }
}

impl From<bool> for PyValue {
    fn from(b: bool) -> Self {
        PyValue::Bool(b)
    }
}

impl From<f64> for PyValue {
    fn from(f: f64) -> Self {
        PyValue::Float(f)
    }
}

impl From<Dict> for PyValue {
    fn from(d: Dict) -> Self {
        PyValue::Dict(d)
    }
}

impl From<Vec<PyValue>> for PyValue {
    fn from(items: Vec<PyValue>) -> Self {
        PyValue::List(items)
    }
}

impl<T: Into<PyValue>> From<Option<T>> for PyValue {
    fn from(v: Option<T>) -> Self {
        v.map_or(PyValue::None, Into::into)
    }
}

impl PyRepr for PyValue {
    fn write_repr(&self, out: &mut String) {
        match self {
            PyValue::None => out.push_str("None"),
            PyValue::Bool(b) => b.write_repr(out),
            PyValue::Int(n) => n.write_repr(out),
            PyValue::Float(f) => python::write_float_repr(out, *f),
            PyValue::Complex(c) => c.write_repr(out),
            PyValue::Str(s) => python::write_string_repr(out, s),
            PyValue::Bytes(b) => python::write_bytes_repr(out, b),
            PyValue::Ellipsis => out.push_str("Ellipsis"),
            PyValue::List(items) => items.write_repr(out),
            PyValue::Tuple(items) => python::Tuple(items).write_repr(out),
            PyValue::Set(items) => {
                if items.is_empty() {
                    out.push_str("set()");
                } else {
                    out.push('{');
                    for (i, item) in items.iter().enumerate() {
                        if i > 0 {
                            out.push_str(", ");
                        }
                        item.write_repr(out);
                    }
                    out.push('}');
                }
            }
            PyValue::Dict(d) => d.write_repr(out),
        }
    }

    fn write_str(&self, out: &mut String) {
        match self {
            PyValue::Str(s) => out.push_str(s),
            other => other.write_repr(out),
        }
    }

    fn class_name(&self) -> &'static str {
        match self {
            PyValue::None => "NoneType",
            PyValue::Bool(_) => "bool",
            PyValue::Int(_) => "int",
            PyValue::Float(_) => "float",
            PyValue::Complex(_) => "complex",
            PyValue::Str(_) => "str",
            PyValue::Bytes(_) => "bytes",
            PyValue::Ellipsis => "ellipsis",
            PyValue::List(_) => "list",
            PyValue::Tuple(_) => "tuple",
            PyValue::Set(_) => "set",
            PyValue::Dict(_) => "dict",
        }
    }
}

/// A Python `dict`: entries in insertion order, which Python keeps and
/// Magnum's messages show (the first offending label is the first in dict
/// order). Keys may be any hashable value; the accessors by `&str` look at
/// `str` keys only, as Python's `d['x']` finds only a `str` key.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Dict {
    entries: Vec<(PyValue, PyValue)>,
}

impl Dict {
    /// An empty dict.
    pub fn new() -> Self {
        Dict::default()
    }

    /// The number of entries.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the dict is empty.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The entries in order.
    pub fn iter(&self) -> impl ExactSizeIterator<Item = (&PyValue, &PyValue)> {
        self.entries.iter().map(|(k, v)| (k, v))
    }

    /// The keys in order.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &PyValue> {
        self.entries.iter().map(|(k, _)| k)
    }

    fn position(&self, key: &str) -> Option<usize> {
        self.entries
            .iter()
            .position(|(k, _)| matches!(k, PyValue::Str(s) if s == key))
    }

    /// The value under the `str` key `key`.
    pub fn get(&self, key: &str) -> Option<&PyValue> {
        self.position(key).map(|i| &self.entries[i].1)
    }

    /// The value under the `str` key `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut PyValue> {
        self.position(key).map(|i| &mut self.entries[i].1)
    }

    /// Whether the `str` key `key` is present.
    pub fn contains_key(&self, key: &str) -> bool {
        self.position(key).is_some()
    }

    /// `d[key] = value` for a `str` key: an existing key keeps its place.
    /// Returns the value it replaced.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<PyValue>) -> Option<PyValue> {
        let key = key.into();
        let value = value.into();
        match self.position(&key) {
            Some(i) => Some(std::mem::replace(&mut self.entries[i].1, value)),
            None => {
                self.entries.push((PyValue::Str(key), value));
                None
            }
        }
    }

    /// `del d[key]` for a `str` key; returns the value removed.
    pub fn remove(&mut self, key: &str) -> Option<PyValue> {
        self.position(key).map(|i| self.entries.remove(i).1)
    }

    /// Builds a dict from entries whose keys are already distinct under
    /// Python's equality (the literal parser de-duplicates them).
    pub(crate) fn from_distinct(entries: Vec<(PyValue, PyValue)>) -> Self {
        Dict { entries }
    }
}

impl PyRepr for Dict {
    fn write_repr(&self, out: &mut String) {
        python::write_dict(out, self.iter());
    }

    fn class_name(&self) -> &'static str {
        "dict"
    }
}

/// Builds a dict as `dict(pairs)` does: a repeated key keeps its first
/// place and takes the last value. Keys compare as Python compares them.
impl FromIterator<(PyValue, PyValue)> for Dict {
    fn from_iter<I: IntoIterator<Item = (PyValue, PyValue)>>(iter: I) -> Self {
        let mut keys = KeyIndex::default();
        let mut entries: Vec<(PyValue, PyValue)> = Vec::new();
        for (k, v) in iter {
            match keys.position(&entries, &k) {
                Some(i) => entries[i].1 = v,
                None => entries.push((k, v)),
            }
        }
        Dict { entries }
    }
}

/// Finds the entry whose key equals a new key under Python's equality:
/// small dicts of `str` keys by a scan, others through their hash keys.
#[derive(Default)]
pub(crate) struct KeyIndex {
    index: Option<HashMap<String, usize>>,
}

impl KeyIndex {
    const SCAN: usize = 16;

    /// The position of the entry with key `k`, or `None` after noting that
    /// `k` will be the key of the next entry pushed.
    pub(crate) fn position(
        &mut self,
        entries: &[(PyValue, PyValue)],
        k: &PyValue,
    ) -> Option<usize> {
        if self.index.is_none() {
            let all_str = matches!(k, PyValue::Str(_))
                && entries.iter().all(|(e, _)| matches!(e, PyValue::Str(_)));
            if all_str && entries.len() < Self::SCAN {
                return entries.iter().position(|(e, _)| e == k);
            }
            let mut index = HashMap::with_capacity(entries.len() * 2);
            for (i, (e, _)) in entries.iter().enumerate() {
                if let Some(h) = hash_key(e) {
                    index.entry(h).or_insert(i);
                }
            }
            self.index = Some(index);
        }
        let index = self.index.as_mut()?;
        // An unhashable key cannot come from JSON or a literal (the parser
        // refuses it first); it is kept as a distinct entry.
        let h = hash_key(k)?;
        match index.get(&h) {
            Some(&i) => Some(i),
            None => {
                index.insert(h, entries.len());
                None
            }
        }
    }
}

impl FromIterator<(String, PyValue)> for Dict {
    fn from_iter<I: IntoIterator<Item = (String, PyValue)>>(iter: I) -> Self {
        iter.into_iter()
            .map(|(k, v)| (PyValue::Str(k), v))
            .collect()
    }
}

impl<'a> FromIterator<(&'a str, PyValue)> for Dict {
    fn from_iter<I: IntoIterator<Item = (&'a str, PyValue)>>(iter: I) -> Self {
        iter.into_iter()
            .map(|(k, v)| (PyValue::from(k), v))
            .collect()
    }
}

/// A text that is equal for two hashable values exactly when Python's `==`
/// holds between them (`1 == 1.0 == True`, `0 == -0.0 == False`,
/// `1 == (1+0j)`), so that dict keys and set members de-duplicate as in
/// Python. `None` for an unhashable value (list, dict, set, or a tuple
/// holding one).
pub(crate) fn hash_key(v: &PyValue) -> Option<String> {
    let mut out = String::new();
    write_hash_key(v, &mut out).then_some(out)
}

fn write_hash_key(v: &PyValue, out: &mut String) -> bool {
    match v {
        PyValue::None => out.push('N'),
        PyValue::Ellipsis => out.push('E'),
        PyValue::Str(s) => {
            out.push('s');
            push_len_prefixed(out, s);
        }
        PyValue::Bytes(b) => {
            out.push('b');
            push_len_prefixed(out, &python::bytes_repr(b));
        }
        PyValue::Bool(b) => {
            out.push('n');
            out.push(if *b { '1' } else { '0' });
        }
        PyValue::Int(n) => {
            out.push('n');
            out.push_str(&n.to_string());
        }
        PyValue::Float(f) => write_real_key(*f, out),
        PyValue::Complex(c) if c.im == 0.0 => write_real_key(c.re, out),
        PyValue::Complex(c) => {
            out.push('c');
            write_real_key(c.re, out);
            out.push(',');
            write_real_key(c.im, out);
        }
        PyValue::Tuple(items) => {
            out.push_str("t(");
            for item in items {
                let mut k = String::new();
                if !write_hash_key(item, &mut k) {
                    return false;
                }
                push_len_prefixed(out, &k);
            }
            out.push(')');
        }
        PyValue::List(_) | PyValue::Set(_) | PyValue::Dict(_) => return false,
    }
    true
}

fn push_len_prefixed(out: &mut String, s: &str) {
    out.push_str(&s.len().to_string());
    out.push(':');
    out.push_str(s);
}

/// A real number: integral values (whatever their type) by their exact
/// decimal digits, others by their shortest repr.
fn write_real_key(f: f64, out: &mut String) {
    if f.is_finite() && f.fract() == 0.0 {
        out.push('n');
        if f == 0.0 {
            out.push('0');
        } else {
            // `{:.0}` prints the exact integer value of an integral float.
            out.push_str(&format!("{f:.0}"));
        }
    } else {
        out.push('f');
        python::write_float_repr(out, f);
    }
}
