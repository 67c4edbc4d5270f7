//! How a driver call fails ([`DriverError`]), why the host refused an
//! import ([`HostError`]), and Magnum's answers that every driver gives
//! the same way.

use std::fmt;

use crate::bindings::openkeel::magnum_driver::types as wt;

/// A client-visible error: Magnum's HTTP status (4xx), the name of the
/// Magnum exception and the full message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MagnumError {
    pub status: u16,
    pub kind: String,
    pub message: String,
}

/// How a driver call fails.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DriverError {
    /// A synchronous client error: it reaches the caller with Magnum's
    /// status and message, and no row changes.
    Client(MagnumError),
    /// The operation failed: the rows go `*_FAILED` with the text as
    /// `status_reason`.
    Failed(String),
    /// The operation failed after it had changed something that must be
    /// kept (a `stack_id`, a nodegroup created before the failure): the
    /// rows go `*_FAILED` with `reason`, and what `update` holds is saved
    /// with them. Contract 1.1; a driver built for 1.0 answers `Failed`
    /// with the reason (the update is lost).
    FailedAfter {
        reason: String,
        update: Box<crate::Update>,
    },
}

impl DriverError {
    /// A client error with Magnum's status, exception name and message.
    pub fn client(status: u16, kind: &str, message: impl Into<String>) -> DriverError {
        DriverError::Client(MagnumError {
            status,
            kind: kind.to_string(),
            message: message.into(),
        })
    }

    /// 400 `Invalid` with a literal message (Magnum's `exception.Invalid`).
    pub fn invalid(message: impl Into<String>) -> DriverError {
        DriverError::client(400, "Invalid", message)
    }

    /// 400 `InvalidParameterValue`, whose message is the given text.
    pub fn invalid_parameter_value(message: impl Into<String>) -> DriverError {
        DriverError::client(400, "InvalidParameterValue", message)
    }

    /// 400 `NotSupported` with a literal message.
    pub fn not_supported_message(message: impl Into<String>) -> DriverError {
        DriverError::client(400, "NotSupported", message)
    }

    /// Magnum's answer for a driver function that is not implemented:
    /// 400 `NotSupported`, `'<function>' is not supported by this
    /// driver.` (the base driver's wording for `rotate_ca_certificate`).
    /// Every default of [`Driver`](crate::Driver) answers this.
    pub fn not_supported(function: &str) -> DriverError {
        DriverError::not_supported_message(format!("'{function}' is not supported by this driver."))
    }

    /// The operation failed with this reason.
    pub fn failed(reason: impl Into<String>) -> DriverError {
        DriverError::Failed(reason.into())
    }

    /// The operation failed after `update` was done: see
    /// [`DriverError::FailedAfter`].
    pub fn failed_after(reason: impl Into<String>, update: crate::Update) -> DriverError {
        DriverError::FailedAfter {
            reason: reason.into(),
            update: Box::new(update),
        }
    }

    /// Whether this is a `NotSupported` client error.
    pub fn is_not_supported(&self) -> bool {
        matches!(self, DriverError::Client(m) if m.kind == "NotSupported")
    }
}

impl fmt::Display for DriverError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DriverError::Client(m) => write!(f, "{} ({} {})", m.message, m.status, m.kind),
            DriverError::Failed(s) | DriverError::FailedAfter { reason: s, .. } => f.write_str(s),
        }
    }
}

impl std::error::Error for DriverError {}

/// A host refusal that reaches the driver: a client error passes through,
/// anything else fails the operation with the refusal's text.
impl From<HostError> for DriverError {
    fn from(e: HostError) -> DriverError {
        match e {
            HostError::Client(m) => DriverError::Client(m),
            other => DriverError::Failed(other.to_string()),
        }
    }
}

impl From<DriverError> for wt::DriverError {
    fn from(e: DriverError) -> wt::DriverError {
        match e {
            DriverError::Client(m) => wt::DriverError::Client(wt::MagnumError {
                status: m.status,
                kind: m.kind,
                message: m.message,
            }),
            DriverError::Failed(s) => wt::DriverError::Failed(s),
            #[cfg(feature = "contract-1-1")]
            DriverError::FailedAfter { reason, update } => {
                wt::DriverError::FailedAfter(wt::Failure {
                    reason,
                    update: (*update).into(),
                })
            }
            #[cfg(not(feature = "contract-1-1"))]
            DriverError::FailedAfter { reason, .. } => wt::DriverError::Failed(reason),
        }
    }
}

/// Why the host refused or could not do what an import asked. Never a
/// trap: the driver decides what to answer (`?` turns it into a
/// [`DriverError`]).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum HostError {
    /// Not granted: capability, kind, verb, namespace, call or file.
    AccessDenied(String),
    /// A malformed request (an envelope that disagrees with its body).
    Invalid(String),
    /// What was named does not exist.
    NotFound(String),
    /// The object changed or exists already.
    Conflict(String),
    /// An argument or answer is larger than the host allows.
    TooLarge(String),
    /// The service is not configured or cannot be reached.
    Unavailable(String),
    /// An error Magnum shows the caller as it is.
    Client(MagnumError),
    /// Anything else.
    Other(String),
}

impl fmt::Display for HostError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HostError::AccessDenied(s) => write!(f, "access denied: {s}"),
            HostError::Invalid(s) => write!(f, "invalid: {s}"),
            HostError::NotFound(s) => write!(f, "not found: {s}"),
            HostError::Conflict(s) => write!(f, "conflict: {s}"),
            HostError::TooLarge(s) => write!(f, "too large: {s}"),
            HostError::Unavailable(s) => write!(f, "unavailable: {s}"),
            HostError::Client(m) => f.write_str(&m.message),
            HostError::Other(s) => f.write_str(s),
        }
    }
}

impl std::error::Error for HostError {}

impl From<wt::HostError> for HostError {
    fn from(e: wt::HostError) -> HostError {
        match e {
            wt::HostError::AccessDenied(s) => HostError::AccessDenied(s),
            wt::HostError::Invalid(s) => HostError::Invalid(s),
            wt::HostError::NotFound(s) => HostError::NotFound(s),
            wt::HostError::Conflict(s) => HostError::Conflict(s),
            wt::HostError::TooLarge(s) => HostError::TooLarge(s),
            wt::HostError::Unavailable(s) => HostError::Unavailable(s),
            wt::HostError::Client(m) => HostError::Client(MagnumError {
                status: m.status,
                kind: m.kind,
                message: m.message,
            }),
            wt::HostError::Other(s) => HostError::Other(s),
        }
    }
}

/// The base driver's rule for the master count of a new cluster: odd and
/// at least 1, else 400 `MasterNGSizeInvalid`.
pub fn validate_master_size(count: i32) -> Result<(), DriverError> {
    if count % 2 == 0 || count < 1 {
        return Err(DriverError::client(
            400,
            "MasterNGSizeInvalid",
            format!("master nodegroup size of {count} is invalid, size cannot be an even number."),
        ));
    }
    Ok(())
}

/// The base driver's refusal of a master nodegroup resize.
pub fn master_resize_not_supported() -> DriverError {
    DriverError::client(
        400,
        "MasterNGResizeNotSupported",
        "Resizing the master nodegroup is not supported by this driver.",
    )
}

/// The base driver's refusal of a CA rotation.
///
/// Magnum: magnum/drivers/common/driver.py:306 raises NotSupported with
/// this literal message.
pub fn ca_rotation_not_supported() -> DriverError {
    DriverError::not_supported_message("'rotate_ca_certificate' is not supported by this driver.")
}

/// The conductor's answer when a driver does not rotate credentials.
///
/// Magnum: magnum/conductor/handlers/credential_conductor.py:56.
pub fn credential_rotation_not_supported() -> DriverError {
    DriverError::not_supported_message("Credential rotation is not supported by driver.")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn master_size_follows_the_base_rule() {
        for n in [1, 3, 5] {
            assert_eq!(validate_master_size(n), Ok(()));
        }
        for n in [0, 2, 4, -1] {
            let Err(DriverError::Client(e)) = validate_master_size(n) else {
                panic!("{n} accepted");
            };
            assert_eq!((e.status, e.kind.as_str()), (400, "MasterNGSizeInvalid"));
            assert_eq!(
                e.message,
                format!("master nodegroup size of {n} is invalid, size cannot be an even number.")
            );
        }
    }

    #[test]
    fn not_supported_names_the_function() {
        let e = DriverError::not_supported("resize_cluster");
        assert!(e.is_not_supported());
        assert_eq!(
            e,
            DriverError::client(
                400,
                "NotSupported",
                "'resize_cluster' is not supported by this driver."
            )
        );
    }

    #[test]
    fn a_host_refusal_fails_the_operation_unless_it_is_a_client_error() {
        let denied = HostError::AccessDenied("driver x is not granted kube".into());
        assert_eq!(
            DriverError::from(denied),
            DriverError::Failed("access denied: driver x is not granted kube".into())
        );
        let m = MagnumError {
            status: 400,
            kind: "FlavorNotFound".into(),
            message: "Unable to find flavor m1.huge.".into(),
        };
        assert_eq!(
            DriverError::from(HostError::Client(m.clone())),
            DriverError::Client(m)
        );
    }
}
