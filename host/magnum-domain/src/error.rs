//! The client-visible error: an HTTP status and Magnum's message.

use std::fmt;

/// A client-visible error: an HTTP status and Magnum's message, named after
/// the Magnum exception class that produces it.
///
/// The API layer renders it as `{"errors":[{…, "title": <first sentence>,
/// "detail": <message>}]}`. The constructors of the catalogue are the only
/// place messages are written.
#[derive(Clone, PartialEq, Eq)]
pub struct MagnumError {
    /// The HTTP status code.
    pub status: u16,
    /// The Magnum exception class (`ClusterNotFound`); for tests and logs,
    /// never sent to clients.
    pub kind: &'static str,
    /// The full message (WSME's `faultstring`).
    pub message: String,
}

impl MagnumError {
    /// An error of `kind` with `status` and `message`.
    pub fn new(status: u16, kind: &'static str, message: impl Into<String>) -> Self {
        MagnumError {
            status,
            kind,
            message: message.into(),
        }
    }

    /// Whether the error was raised as the catalogue's `class`: how callers
    /// tell one error from another (never by comparing the kind's text).
    pub fn is(&self, class: &crate::catalogue::ExceptionClass) -> bool {
        self.kind == class.name
    }

    /// The title Magnum derives from the message: everything up to its first
    /// period (WSME's `faultstring` cut at `.`), or the whole message.
    pub fn title(&self) -> &str {
        match self.message.find('.') {
            Some(i) => &self.message[..i],
            None => &self.message,
        }
    }
}

impl fmt::Debug for MagnumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}({}): {}", self.kind, self.status, self.message)
    }
}

impl fmt::Display for MagnumError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for MagnumError {}
