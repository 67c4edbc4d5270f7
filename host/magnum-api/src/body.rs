//! Request bodies decoded as WSME decodes them into one of Magnum's API
//! types (wsme/rest/json.py `fromjson`, wsme/types.py `validate_value`),
//! with WSME's errors, for every resource: a resource declares its type as
//! a [`Schema`] (its attributes in declaration order) and gets a [`Body`].
//!
//! What WSME does, and so what [`Schema::decode`] does, in order:
//!
//! 1. the body is read with Python's `json.loads` ([`decode_ordered`]):
//!    keys keep the client's order, integers are exact; not JSON → 400
//!    `Request is not in valid JSON format`;
//! 2. keys that are not attributes → 400 `Unknown attribute(s) for argument
//!    <arg>: …` (in the client's order);
//! 3. each attribute in declaration order: absent and mandatory → 400
//!    `… Mandatory field missing.`; present → the conversion from JSON
//!    (`int()` of integers, the dict and list checks), whose failures name
//!    the body argument and quote the whole body as Python prints it
//!    (`Invalid input for field/attribute cluster. Value: '{'name': …}'.
//!    …`); then read-only attributes are refused; then the type's checks
//!    (lengths, patterns, bounds, enums, booleans, UUIDs, labels), whose
//!    failures name the attribute. A JSON `null` sets the attribute to
//!    `None` and skips its checks (and its default, and the mandatory
//!    check).
//!
//! Reading an attribute that was not sent gives its declared default, as
//! WSME does ([`Body::boolean`], [`Body::text`], …); [`Body::has`] tells
//! presence apart.
//!
//! [`Schema::rebuild`] is the other way Magnum builds an API object: from a
//! patched resource dictionary (`ClusterTemplate(**doc)`), with the type
//! checks only, no conversion (`"7"` for an integer is refused, not
//! converted).

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use magnum_domain::MagnumError;
use magnum_domain::models::StringMap;
use magnum_domain::validation::{
    IntegerRange, StringRule, check_string, is_uuid_like, validate_dns_list, validate_range,
};
use magnum_jsonpatch::patch::{self as jsonpatch, Entries};
use python_semantics::decode::{DecodeError, decode_ordered};
use python_semantics::python::{self, PyRepr};
use python_semantics::{Dict, PyValue};

use super::params::strict_bool;

/// The WSME type of an attribute.
#[derive(Clone, Copy, Debug)]
pub enum Type {
    /// `wtypes.text`: any string (`Wrong type` otherwise).
    Text,
    /// `wtypes.StringType`: a string with length bounds and a pattern
    /// (`Value should be string` otherwise).
    String(StringRule),
    /// `wtypes.IntegerType`: `int()` of the JSON value, then the bounds.
    Integer(IntegerRange),
    /// Magnum's `types.boolean`: JSON booleans and oslo.utils' strict
    /// strings (`"yes"`, `"0"`, …); numbers through their `str()`.
    Boolean,
    /// Magnum's `types.uuid`: `Expected a uuid but received <v>.`
    Uuid,
    /// `wtypes.Enum(text, …)`, values listed in this order in the message.
    Enum(&'static [&'static str]),
    /// Magnum's `types.dns_list`: comma-separated IPv4 addresses.
    Dns,
    /// `DictType(text, MultiType(text, int, bool, float))`: values kept as
    /// Magnum stores them, through `str()` (`2` → `"2"`, `true` →
    /// `"True"`).
    Labels,
    /// `DictType(text, text)`.
    StringDict,
    /// `[text]`.
    TextList,
    /// `[DictType(text, text)]` (nodegroup `node_taints`).
    Taints,
    /// `datetime` (`created_at`, `updated_at`), always read-only.
    Datetime,
    /// `[Link]` (`links`), always read-only.
    Links,
}

/// A constant default of an attribute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Const {
    Bool(bool),
    Str(&'static str),
    Int(i64),
}

/// One attribute of an API type.
#[derive(Clone, Copy, Debug)]
pub struct Attr {
    pub name: &'static str,
    pub ty: Type,
    /// `mandatory=True`: absent → 400 (a `null` is not absent).
    pub mandatory: bool,
    /// `readonly=True`: present → 400 `Cannot set read only field.`
    pub readonly: bool,
    /// The value read when the attribute was not set.
    pub default: Option<Const>,
}

/// An attribute of type `ty`, optional, writable, without default.
pub const fn attr(name: &'static str, ty: Type) -> Attr {
    Attr {
        name,
        ty,
        mandatory: false,
        readonly: false,
        default: None,
    }
}

impl Attr {
    /// The attribute, mandatory.
    pub const fn mandatory(mut self) -> Attr {
        self.mandatory = true;
        self
    }

    /// The attribute, read-only.
    pub const fn readonly(mut self) -> Attr {
        self.readonly = true;
        self
    }

    /// The attribute with a default.
    pub const fn default(mut self, value: Const) -> Attr {
        self.default = Some(value);
        self
    }
}

/// An API type: the handler's body argument (named in messages) and the
/// attributes in declaration order (the order WSME converts and checks
/// them: the attributes of the class, then `created_at`, `updated_at` of
/// `APIBase`).
#[derive(Clone, Copy, Debug)]
pub struct Schema {
    /// `cluster`, `cluster_template`, `nodegroup`, `quota`, …
    pub arg: &'static str,
    pub attrs: &'static [Attr],
}

/// A converted attribute value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    /// `null`.
    None,
    Str(String),
    Int(i64),
    Bool(bool),
    /// Labels (values as stored) and string dicts, in the client's order.
    Map(Entries),
    List(Vec<String>),
    /// Taints: string dicts, each in the client's order.
    Maps(Vec<Entries>),
}

/// A body converted into an API type: the attributes that were set, and
/// the whole body for messages that quote it.
#[derive(Clone, Debug)]
pub struct Body<'s> {
    schema: &'s Schema,
    doc: Dict,
    values: Vec<(&'static str, Value)>,
}

impl<'s> Body<'s> {
    /// The body as decoded (a dict in the client's key order), for
    /// messages that quote it (`python::str_of(body.doc())`).
    pub fn doc(&self) -> &Dict {
        &self.doc
    }

    /// Whether the attribute was set (a `null` counts).
    pub fn has(&self, name: &str) -> bool {
        self.values.iter().any(|(n, _)| *n == name)
    }

    /// The names of the attributes that were set, in declaration order.
    pub fn present(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.values.iter().map(|(n, _)| *n)
    }

    /// The value set, or `None` when the attribute was not set.
    pub fn value(&self, name: &str) -> Option<&Value> {
        self.values.iter().find(|(n, _)| *n == name).map(|(_, v)| v)
    }

    fn default_of(&self, name: &str) -> Option<Const> {
        self.schema
            .attrs
            .iter()
            .find(|a| a.name == name)
            .and_then(|a| a.default)
    }

    /// A string attribute: the value set, else the default; `None` when
    /// `null` or unset without default.
    pub fn text(&self, name: &str) -> Option<&str> {
        match self.value(name) {
            Some(Value::Str(s)) => Some(s),
            Some(_) => None,
            None => match self.default_of(name) {
                Some(Const::Str(s)) => Some(s),
                _ => None,
            },
        }
    }

    /// An integer attribute, as [`Body::text`].
    pub fn int(&self, name: &str) -> Option<i64> {
        match self.value(name) {
            Some(Value::Int(n)) => Some(*n),
            Some(_) => None,
            None => match self.default_of(name) {
                Some(Const::Int(n)) => Some(n),
                _ => None,
            },
        }
    }

    /// A boolean attribute, as [`Body::text`].
    pub fn boolean(&self, name: &str) -> Option<bool> {
        match self.value(name) {
            Some(Value::Bool(b)) => Some(*b),
            Some(_) => None,
            None => match self.default_of(name) {
                Some(Const::Bool(b)) => Some(b),
                _ => None,
            },
        }
    }

    /// A labels or string-dict attribute's entries in the client's order.
    pub fn entries(&self, name: &str) -> Option<&Entries> {
        match self.value(name) {
            Some(Value::Map(m)) => Some(m),
            _ => None,
        }
    }

    /// A labels or string-dict attribute as stored (sorted keys).
    pub fn string_map(&self, name: &str) -> Option<StringMap> {
        self.entries(name).map(|e| e.iter().cloned().collect())
    }

    /// A `[text]` attribute.
    pub fn list(&self, name: &str) -> Option<&[String]> {
        match self.value(name) {
            Some(Value::List(l)) => Some(l),
            _ => None,
        }
    }

    /// A taints attribute.
    pub fn maps(&self, name: &str) -> Option<&[Entries]> {
        match self.value(name) {
            Some(Value::Maps(m)) => Some(m),
            _ => None,
        }
    }
}

impl Schema {
    /// Decodes a request body into the type, as WSME does (module docs).
    pub fn decode(&self, body: &[u8]) -> Result<Body<'_>, MagnumError> {
        let doc = match decode_ordered(body) {
            Ok(doc) => doc,
            Err(DecodeError::Invalid) => return Err(MagnumError::invalid_json_body()),
            Err(DecodeError::TooDeep(msg)) => return Err(MagnumError::server_error(msg)),
        };
        self.decode_value(doc)
    }

    /// [`Schema::decode`] of an already decoded body.
    pub fn decode_value(&self, doc: PyValue) -> Result<Body<'_>, MagnumError> {
        let doc = match doc {
            PyValue::Dict(d) => d,
            // Deviation: Magnum fails with an unhandled 500 ("'NoneType'
            // object has no attribute …"); a null body is a missing one.
            PyValue::None => return Err(MagnumError::missing_argument(self.arg)),
            // Deviation: Magnum fails with an unhandled 500 ("'list' object
            // has no attribute 'keys'"); we answer WSME's conversion error.
            other => return Err(MagnumError::not_a_valid_dict_in(self.arg, &other, &other)),
        };
        let unknown: Vec<&str> = doc
            .keys()
            .filter_map(PyValue::as_str)
            .filter(|k| !self.attrs.iter().any(|a| a.name == *k))
            .collect();
        if !unknown.is_empty() {
            return Err(MagnumError::unknown_attribute(self.arg, &unknown));
        }
        let mut values = Vec::new();
        for a in self.attrs {
            let Some(v) = doc.get(a.name) else {
                if a.mandatory {
                    return Err(MagnumError::mandatory_field_missing(a.name));
                }
                continue;
            };
            let converted = from_json(self.arg, &doc, a.ty, v)?;
            if a.readonly {
                return Err(MagnumError::read_only_field(a.name, &converted));
            }
            values.push((a.name, validate(a, &converted)?));
        }
        Ok(Body {
            schema: self,
            doc,
            values,
        })
    }

    /// The API object Magnum builds from a patched resource dictionary:
    /// each writable attribute present in `doc` gets the type's checks
    /// (no conversion); absent ones read as their defaults. Read-only
    /// attributes are not rebuilt: the caller keeps the stored values.
    pub fn rebuild(&self, doc: &Dict) -> Result<Body<'_>, MagnumError> {
        let mut values = Vec::new();
        for a in self.attrs.iter().filter(|a| !a.readonly) {
            if let Some(v) = doc.get(a.name) {
                values.push((a.name, validate(a, v)?));
            }
        }
        Ok(Body {
            schema: self,
            doc: doc.clone(),
            values,
        })
    }
}

/// WSME's conversion of a JSON value to the attribute's base type
/// (`fromjson`); a failure names the body argument and shows the body.
fn from_json(arg: &str, body: &Dict, ty: Type, v: &PyValue) -> Result<PyValue, MagnumError> {
    if v.is_none() {
        return Ok(PyValue::None);
    }
    match ty {
        Type::Integer(_) => int_of(arg, body, v).map(PyValue::from),
        Type::Labels | Type::StringDict if v.as_dict().is_none() => {
            Err(MagnumError::not_a_valid_dict_in(arg, body, v))
        }
        Type::TextList | Type::Links if v.as_list().is_none() => {
            Err(MagnumError::not_a_valid_list_in(arg, body, v))
        }
        Type::Taints => {
            let Some(items) = v.as_list() else {
                return Err(MagnumError::not_a_valid_list_in(arg, body, v));
            };
            if let Some(bad) = items.iter().find(|e| e.as_dict().is_none()) {
                return Err(MagnumError::not_a_valid_dict_in(arg, body, bad));
            }
            Ok(v.clone())
        }
        Type::Datetime => match v.as_str().and_then(parse_datetime) {
            Some(shown) => Ok(PyValue::Str(shown)),
            None => Err(MagnumError::unknown_datetime_format(arg, body)),
        },
        _ => Ok(v.clone()),
    }
}

/// Python's `int()` of a JSON value, within 64 bits.
fn int_of(arg: &str, body: &Dict, v: &PyValue) -> Result<i64, MagnumError> {
    match v {
        PyValue::Bool(b) => Ok(i64::from(*b)),
        PyValue::Int(n) => n
            .to_i64()
            .ok_or_else(|| MagnumError::int_too_large(arg, body)),
        PyValue::Float(f) if f.is_infinite() => Err(MagnumError::int_of_infinity(arg, body)),
        // int() truncates toward zero.
        PyValue::Float(f) if f.trunc().abs() < 2f64.powi(63) => Ok(*f as i64),
        PyValue::Float(_) => Err(MagnumError::int_too_large(arg, body)),
        PyValue::Str(s) => match python::parse_int(s) {
            Ok(n) => n
                .to_i64()
                .ok_or_else(|| MagnumError::int_too_large(arg, body)),
            Err(e) => Err(MagnumError::invalid_input(arg, body, e.message())),
        },
        other => Err(MagnumError::int_argument_type(arg, body, other)),
    }
}

/// The largest value of Magnum's INTEGER columns.
const COLUMN_MAX: i64 = i32::MAX as i64;
const COLUMN_MIN: i64 = i32::MIN as i64;

/// WSME's check of a value assigned to the attribute (`validate_value`);
/// a failure names the attribute.
fn validate(a: &Attr, v: &PyValue) -> Result<Value, MagnumError> {
    if v.is_none() {
        return Ok(Value::None);
    }
    let name = a.name;
    Ok(match a.ty {
        Type::Text => match v {
            PyValue::Str(s) => Value::Str(s.clone()),
            other => return Err(MagnumError::wrong_type(name, other, "<class 'str'>")),
        },
        Type::String(rule) => Value::Str(string(name, v, &rule)?),
        Type::Integer(range) => Value::Int(integer(name, v, range)?),
        Type::Boolean => {
            let b = match v {
                PyValue::Bool(b) => Some(*b),
                PyValue::Str(s) => strict_bool(s),
                other => strict_bool(&python::str_of(other)),
            };
            Value::Bool(b.ok_or_else(|| MagnumError::invalid_boolean(name, v))?)
        }
        Type::Uuid => match v {
            PyValue::Str(s) if is_uuid_like(s) => Value::Str(s.clone()),
            other => return Err(MagnumError::invalid_uuid(&python::str_of(other))),
        },
        Type::Enum(allowed) => match v {
            PyValue::Str(s) if allowed.contains(&s.as_str()) => Value::Str(s.clone()),
            other => return Err(MagnumError::invalid_enum(name, other, allowed)),
        },
        Type::Dns => match v {
            PyValue::Str(s) => {
                validate_dns_list(s)?;
                Value::Str(s.clone())
            }
            other => return Err(MagnumError::dns_not_a_string(other)),
        },
        Type::Labels => Value::Map(jsonpatch::labels(name, v)?.unwrap_or_default()),
        Type::StringDict => Value::Map(jsonpatch::string_map(name, v)?.unwrap_or_default()),
        Type::Taints => Value::Maps(jsonpatch::taints(name, v)?.unwrap_or_default()),
        Type::TextList => {
            let Some(items) = v.as_list() else {
                return Err(MagnumError::wrong_type(name, v, "[<class 'str'>]"));
            };
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match item {
                    PyValue::Str(s) => out.push(s.clone()),
                    other => {
                        return Err(MagnumError::wrong_element_type(
                            name,
                            v,
                            other,
                            "<class 'str'>",
                        ));
                    }
                }
            }
            Value::List(out)
        }
        Type::Datetime => Value::Str(python::str_of(v)),
        // Links are never set by a client (read-only) nor stored.
        Type::Links => Value::None,
    })
}

/// A `StringType` value: a string within the rule.
fn string(name: &str, v: &PyValue, rule: &StringRule) -> Result<String, MagnumError> {
    match v {
        PyValue::Str(s) => {
            check_string(name, s, rule)?;
            Ok(s.clone())
        }
        other => Err(MagnumError::not_a_string(name, other)),
    }
}

/// An `IntegerType` value (already converted from a body, or as patched)
/// within its bounds and Magnum's 32-bit columns.
fn integer(name: &str, v: &PyValue, range: IntegerRange) -> Result<i64, MagnumError> {
    let n = match v {
        PyValue::Bool(b) => i64::from(*b),
        PyValue::Int(n) => match n.to_i64() {
            Some(n) => n,
            // Python compares integers of any size with the bounds.
            None if n.is_negative() && range.min.is_some() => {
                return Err(MagnumError::below_minimum(
                    name,
                    v,
                    range.min.unwrap_or_default(),
                ));
            }
            None if !n.is_negative() && range.max.is_some() => {
                return Err(MagnumError::above_maximum(
                    name,
                    v,
                    range.max.unwrap_or_default(),
                ));
            }
            // Deviation: Python keeps integers of any size; no column can.
            None => return Err(MagnumError::int_too_large(name, v)),
        },
        // The bounds are compared with what was patched in (a string).
        other => return Err(MagnumError::int_comparison_type(name, other)),
    };
    validate_range(name, n, range)?;
    // Deviation: Magnum's integer columns are 32-bit; MariaDB refuses a
    // larger value with a 500 after the checks. Refused here with WSME's
    // bound message.
    if n > COLUMN_MAX {
        return Err(MagnumError::above_maximum(name, &n, COLUMN_MAX));
    }
    if n < COLUMN_MIN {
        return Err(MagnumError::below_minimum(name, &n, COLUMN_MIN));
    }
    Ok(n)
}

/// Parses a date-time as WSME reads one (ISO 8601 forms, a plain date) and
/// renders it as Python's `str(datetime)`: `2020-01-01 00:00:00[.ffffff]`
/// with `+HH:MM` for an aware value.
fn parse_datetime(s: &str) -> Option<String> {
    let s = s.trim();
    let naive_str = |t: NaiveDateTime| {
        let mut out = t.format("%Y-%m-%d %H:%M:%S").to_string();
        let us = t.and_utc().timestamp_subsec_micros();
        if us != 0 {
            out.push_str(&format!(".{us:06}"));
        }
        out
    };
    if let Ok(t) = DateTime::parse_from_rfc3339(s) {
        return Some(format!("{}{}", naive_str(t.naive_local()), t.format("%:z")));
    }
    for f in ["%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%d %H:%M:%S%.f"] {
        if let Ok(t) = NaiveDateTime::parse_from_str(s, f) {
            return Some(naive_str(t));
        }
    }
    NaiveDate::parse_from_str(s, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
        .map(naive_str)
}

impl PyRepr for Value {
    /// The value as Python shows it (for messages about converted values).
    fn write_repr(&self, out: &mut String) {
        match self {
            Value::None => out.push_str("None"),
            Value::Str(s) => s.write_repr(out),
            Value::Int(n) => n.write_repr(out),
            Value::Bool(b) => b.write_repr(out),
            Value::Map(m) => python::write_dict(out, m.iter().map(|(k, v)| (k, v))),
            Value::List(l) => l.write_repr(out),
            Value::Maps(ms) => {
                out.push('[');
                for (i, m) in ms.iter().enumerate() {
                    if i > 0 {
                        out.push_str(", ");
                    }
                    python::write_dict(out, m.iter().map(|(k, v)| (k, v)));
                }
                out.push(']');
            }
        }
    }

    fn write_str(&self, out: &mut String) {
        match self {
            Value::Str(s) => out.push_str(s),
            other => other.write_repr(out),
        }
    }

    fn class_name(&self) -> &'static str {
        match self {
            Value::None => "NoneType",
            Value::Str(_) => "str",
            Value::Int(_) => "int",
            Value::Bool(_) => "bool",
            Value::Map(_) => "dict",
            Value::List(_) | Value::Maps(_) => "list",
        }
    }
}

#[cfg(test)]
mod tests;
