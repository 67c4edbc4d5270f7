//! The `OpenStack-API-Version` header of the container-infra API, parsed and
//! negotiated as Magnum 23.0.0 does (`magnum/api/controllers/versions.py`
//! and `v1/__init__.py`): no header means 1.1, `latest` means 1.14, three
//! service names are accepted, a malformed value is refused with a plain 406
//! ([`HeaderError`]) and a well-formed value outside 1.1–1.14 with the
//! microversion-unsupported 406 ([`RangeError`]).
//!
//! Magnum reads no other header: a legacy `X-OpenStack-Magnum-API-Version`
//! is ignored like any unknown header.
//!
//! Header values are bytes: WSGI hands them to Python as Latin-1, so each
//! byte is one character of the string Magnum splits and converts with
//! `int()`.

use std::borrow::Cow;
use std::fmt;

use python_semantics::python::{self, PyInt};

/// The request and response header carrying the version.
pub const HEADER: &str = "OpenStack-API-Version";
/// The response header with the lowest supported version.
pub const MIN_HEADER: &str = "OpenStack-API-Minimum-Version";
/// The response header with the highest supported version.
pub const MAX_HEADER: &str = "OpenStack-API-Maximum-Version";
/// The response header naming the request header the answer varies with
/// (pecan writes the name `vary`); its value is [`HEADER`].
pub const VARY_HEADER: &str = "Vary";

/// The service type written in every response header, whatever name the
/// client used.
pub const SERVICE_NAME: &str = "container-infrastructure-management";

/// The service types accepted in a request header, compared
/// case-sensitively (`versions.py:58`).
pub const SERVICE_NAMES: [&str; 3] = [
    "container-infrastructure-management",
    "container-infrastructure",
    "container-infra",
];

/// The value of [`MIN_HEADER`] on every response under `/v1`.
pub const MIN_HEADER_VALUE: &str = "container-infrastructure-management 1.1";
/// The value of [`MAX_HEADER`] on every response under `/v1`.
pub const MAX_HEADER_VALUE: &str = "container-infrastructure-management 1.14";

/// The `code` of the version-range 406 body.
pub const UNSUPPORTED_CODE: &str = "magnum.microversion-unsupported";
/// The `title` of the version-range 406 body.
pub const UNSUPPORTED_TITLE: &str = "Requested microversion is unsupported";
/// The `links[0].href` (rel `help`) of the version-range 406 body.
pub const UNSUPPORTED_HELP_HREF: &str =
    "http://docs.openstack.org/api-guide/compute/microversions.html";

/// The [`HEADER`] values of the supported versions, by minor version.
const HEADER_VALUES: [&str; 15] = [
    "container-infrastructure-management 1.0",
    MIN_HEADER_VALUE,
    "container-infrastructure-management 1.2",
    "container-infrastructure-management 1.3",
    "container-infrastructure-management 1.4",
    "container-infrastructure-management 1.5",
    "container-infrastructure-management 1.6",
    "container-infrastructure-management 1.7",
    "container-infrastructure-management 1.8",
    "container-infrastructure-management 1.9",
    "container-infrastructure-management 1.10",
    "container-infrastructure-management 1.11",
    "container-infrastructure-management 1.12",
    "container-infrastructure-management 1.13",
    MAX_HEADER_VALUE,
];

/// A microversion `major.minor`, ordered numerically (1.10 > 1.9). The
/// negotiated version of a request is always within [`Version::MIN`] and
/// [`Version::MAX`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Version {
    major: u16,
    minor: u16,
}

impl Version {
    /// The lowest supported version (`BASE_VER`).
    pub const MIN: Version = Version::new(1, 1);
    /// The highest supported version (`CURRENT_MAX_VER`); `latest` resolves
    /// to it.
    pub const MAX: Version = Version::new(1, 14);
    /// The version of a request without the header.
    pub const DEFAULT: Version = Version::MIN;

    /// The version `major.minor`, for route tables and comparisons.
    pub const fn new(major: u16, minor: u16) -> Version {
        Version { major, minor }
    }

    /// The major version.
    pub const fn major(self) -> u16 {
        self.major
    }

    /// The minor version.
    pub const fn minor(self) -> u16 {
        self.minor
    }

    /// Whether `self >= other`.
    pub fn at_least(self, other: Version) -> bool {
        self >= other
    }

    /// Whether `lo <= self <= hi`; a `None` bound is open.
    pub fn between(self, lo: Option<Version>, hi: Option<Version>) -> bool {
        lo.is_none_or(|lo| self >= lo) && hi.is_none_or(|hi| self <= hi)
    }

    /// The value of the [`HEADER`] response header: always the long service
    /// name (`container-infrastructure-management 1.14`).
    pub fn header_value(self) -> Cow<'static, str> {
        match HEADER_VALUES.get(usize::from(self.minor)) {
            Some(v) if self.major == 1 => Cow::Borrowed(v),
            _ => Cow::Owned(format!("{SERVICE_NAME} {self}")),
        }
    }
}

/// `major.minor`.
impl fmt::Display for Version {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// The version a client asked for: two Python integers, possibly outside
/// the supported range or any machine integer (`1.-1`, `9.9`,
/// `1.123456789012345678901234567890`).
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct RequestedVersion {
    major: PyInt,
    minor: PyInt,
}

impl RequestedVersion {
    /// The negotiated version when it is supported, else the 406
    /// (`v1/__init__.py:199-223`: the major version first, then the range).
    pub fn check(&self) -> Result<Version, RangeError> {
        let major = self.major.to_i64();
        if major != Some(i64::from(Version::MIN.major)) {
            return Err(RangeError {
                requested: self.clone(),
                major_mismatch: true,
            });
        }
        let minor = self.minor.to_i64().and_then(|m| u16::try_from(m).ok());
        match minor.map(|minor| Version::new(Version::MIN.major, minor)) {
            Some(v) if v.between(Some(Version::MIN), Some(Version::MAX)) => Ok(v),
            _ => Err(RangeError {
                requested: self.clone(),
                major_mismatch: false,
            }),
        }
    }

    /// The value of the [`HEADER`] response header echoing this version, as
    /// Magnum sends it with the range 406.
    pub fn header_value(&self) -> String {
        format!("{SERVICE_NAME} {self}")
    }
}

impl From<Version> for RequestedVersion {
    fn from(v: Version) -> Self {
        RequestedVersion {
            major: PyInt::from(i64::from(v.major)),
            minor: PyInt::from(i64::from(v.minor)),
        }
    }
}

/// `major.minor` with Python's integer formatting (no leading zeros, no
/// plus sign).
impl fmt::Display for RequestedVersion {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}", self.major, self.minor)
    }
}

/// A malformed header: Magnum answers a plain WebOb 406, without version
/// headers, whose JSON detail is [`HeaderError::detail`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderError {
    /// Not two tokens, or an unknown service.
    #[error("Invalid service type for OpenStack-API-Version header")]
    InvalidService,
    /// The version is not two integers separated by a dot.
    #[error("Invalid value for OpenStack-API-Version header")]
    InvalidValue,
}

impl HeaderError {
    /// The detail of the 406 (with `Accept: application/json`).
    pub fn detail(self) -> &'static str {
        match self {
            HeaderError::InvalidService => "Invalid service type for OpenStack-API-Version header",
            HeaderError::InvalidValue => "Invalid value for OpenStack-API-Version header",
        }
    }
}

/// A well-formed version outside 1.1–1.14: Magnum answers the
/// [`UNSUPPORTED_CODE`] 406 and keeps the version headers, echoing the
/// requested version ([`RangeError::requested_header_value`]).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{}", self.message())]
pub struct RangeError {
    requested: RequestedVersion,
    major_mismatch: bool,
}

impl RangeError {
    /// The version the client asked for.
    pub fn requested(&self) -> &RequestedVersion {
        &self.requested
    }

    /// Whether the major version was not 1.
    pub fn major_mismatch(&self) -> bool {
        self.major_mismatch
    }

    /// The value of the [`HEADER`] response header: the requested version.
    pub fn requested_header_value(&self) -> String {
        self.requested.header_value()
    }

    /// The `description` of the 406 body (with Magnum's missing space after
    /// `service.` in the major-mismatch case).
    pub fn message(&self) -> String {
        let range = format!("[{MIN_HEADER_VALUE}, {MAX_HEADER_VALUE}].");
        if self.major_mismatch {
            format!(
                "Mutually exclusive versions requested. Version {} requested but not supported \
                 by this service.The supported version range is: {range}",
                self.requested
            )
        } else {
            format!(
                "Version {} was requested but the minor version is not supported by this \
                 service. The supported version range is: {range}",
                self.requested
            )
        }
    }
}

/// Why a request's version header was refused.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum NegotiationError {
    /// The plain 406, without version headers.
    #[error(transparent)]
    Header(#[from] HeaderError),
    /// The microversion-unsupported 406, with version headers.
    #[error(transparent)]
    Range(#[from] RangeError),
}

/// The negotiated version of a request from the values of its [`HEADER`]
/// headers (none: the header is absent).
pub fn negotiate<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Result<Version, NegotiationError> {
    Ok(parse(values)?.check()?)
}

/// The method-level 406 detail of a handler that does not exist at the
/// negotiated version (`base.py:95-126`); `method` is the handler's name.
pub fn method_not_supported_message(version: Version, method: &str) -> String {
    format!(
        "Version {version} was requested but the requested API {method} is not supported for \
         this version."
    )
}

/// The version requested by the values of the [`HEADER`] headers (none:
/// absent), which may still be out of range: see
/// [`RequestedVersion::check`].
///
/// Magnum: `versions.py:89-121`. The value is split on white space into
/// exactly two tokens; `latest` (any case) replaces both tokens, so the
/// service is then not checked; the service must be one of
/// [`SERVICE_NAMES`]; the version must be two Python `int`s separated by a
/// dot. A repeated header reaches Magnum joined with commas by the WSGI
/// server, which never makes two tokens.
pub fn parse<'a>(
    values: impl IntoIterator<Item = &'a [u8]>,
) -> Result<RequestedVersion, HeaderError> {
    let mut values = values.into_iter();
    let Some(first) = values.next() else {
        return Ok(Version::DEFAULT.into());
    };
    let joined: Vec<u8>;
    let raw = match values.next() {
        None => first,
        Some(second) => {
            let mut all = first.to_vec();
            for v in std::iter::once(second).chain(values) {
                all.push(b',');
                all.extend_from_slice(v);
            }
            joined = all;
            &joined
        }
    };
    let (service, version) = two_fields(raw).ok_or(HeaderError::InvalidService)?;
    if version.eq_ignore_ascii_case(b"latest") {
        return Ok(Version::MAX.into());
    }
    if !SERVICE_NAMES.iter().any(|n| n.as_bytes() == service) {
        return Err(HeaderError::InvalidService);
    }
    let mut parts = version.split(|c| *c == b'.');
    let (Some(major), Some(minor), None) = (parts.next(), parts.next(), parts.next()) else {
        return Err(HeaderError::InvalidValue);
    };
    let int = |part: &[u8]| python::parse_int(&latin1(part)).map_err(|_| HeaderError::InvalidValue);
    Ok(RequestedVersion {
        major: int(major)?,
        minor: int(minor)?,
    })
}

/// The bytes as the Latin-1 string WSGI gives Python.
fn latin1(bytes: &[u8]) -> Cow<'_, str> {
    match std::str::from_utf8(bytes) {
        Ok(s) if bytes.is_ascii() => Cow::Borrowed(s),
        _ => Cow::Owned(bytes.iter().map(|&b| char::from(b)).collect()),
    }
}

/// Whether the byte, read as a Latin-1 character, is white space for
/// Python's `str.split()`.
fn is_py_space(c: u8) -> bool {
    matches!(c, b'\t'..=b'\r' | 0x1c..=0x1f | b' ' | 0x85 | 0xa0)
}

/// `s.split()` when it yields exactly two fields.
fn two_fields(s: &[u8]) -> Option<(&[u8], &[u8])> {
    let mut fields: [&[u8]; 2] = [&[], &[]];
    let mut n = 0;
    let mut i = 0;
    while i < s.len() {
        while i < s.len() && is_py_space(s[i]) {
            i += 1;
        }
        if i == s.len() {
            break;
        }
        let start = i;
        while i < s.len() && !is_py_space(s[i]) {
            i += 1;
        }
        if n == 2 {
            return None;
        }
        fields[n] = &s[start..i];
        n += 1;
    }
    (n == 2).then_some((fields[0], fields[1]))
}

#[cfg(test)]
mod tests;
