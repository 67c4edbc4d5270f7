//! The errors of the driver host: what a driver call answers
//! ([`CallError`]), a driver's misbehaviour ([`DriverFault`]), why a driver
//! is not loaded ([`LoadError`]), and the Magnum errors of driver selection.

use std::fmt;

use magnum_domain::MagnumError;

/// How a driver call failed.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum CallError {
    /// A synchronous client error (a 4xx with Magnum's message): it goes
    /// back to the caller and no row changes.
    #[error("{0}")]
    Client(MagnumError),
    /// The operation failed: the conductor moves the rows to `*_FAILED`
    /// with this text as `status_reason`.
    #[error("{0}")]
    Failed(String),
    /// The operation failed after the driver made something (contract
    /// 1.1's `failed-after`): the conductor saves `update` (checked like
    /// any answer: the identifiers a later delete needs), then fails the
    /// rows as for [`CallError::Failed`].
    #[error("{reason}")]
    FailedAfter {
        reason: String,
        update: Box<crate::types::Update>,
    },
    /// The driver misbehaved (trap, deadline, oversized or malformed
    /// answer) or is shut off by its breaker. The operation fails with the
    /// fault's text; the host keeps serving.
    #[error("{0}")]
    Fault(DriverFault),
}

impl CallError {
    /// The text the conductor writes as `status_reason` when it fails an
    /// operation with this error.
    pub fn status_reason(&self) -> String {
        self.to_string()
    }
}

/// What kind of misbehaviour a [`DriverFault`] is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FaultKind {
    /// The component trapped: a panic, an out-of-bounds access, a refused
    /// memory growth, an `unreachable`.
    Trap,
    /// The call ran past its deadline.
    Timeout,
    /// The answer was larger than the driver's output limit.
    Oversized,
    /// The answer broke the contract (a client error that is not a 4xx, a
    /// time out of range).
    Malformed,
    /// The component could not be instantiated.
    Instantiate,
    /// The answer broke a rule of the host: it named another cluster's
    /// rows, changed what only the host writes, reported a status no
    /// transition allows, or carried a field larger than its column.
    Violation,
    /// The driver's breaker is open after repeated faults: the call was not
    /// made.
    BreakerOpen,
}

impl FaultKind {
    /// A short stable name, for logs and metrics.
    pub fn as_str(self) -> &'static str {
        match self {
            FaultKind::Trap => "trap",
            FaultKind::Timeout => "timeout",
            FaultKind::Oversized => "oversized",
            FaultKind::Malformed => "malformed",
            FaultKind::Instantiate => "instantiate",
            FaultKind::Violation => "violation",
            FaultKind::BreakerOpen => "breaker_open",
        }
    }
}

impl DriverFault {
    /// The client-visible error of a synchronous call that faulted
    /// (`Cluster driver <driver> failed in <function> (<kind>). <reason>`).
    pub fn client_error(&self) -> MagnumError {
        MagnumError::driver_fault(
            &self.driver,
            self.function,
            self.kind.as_str(),
            &self.message,
        )
    }
}

/// A driver misbehaved. Its text names the driver and what happened; it
/// never carries a request body or a secret.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DriverFault {
    /// The driver package's name.
    pub driver: String,
    /// The exported function that was called (`create-cluster`).
    pub function: &'static str,
    pub kind: FaultKind,
    /// What happened, in one line.
    pub message: String,
}

impl fmt::Display for DriverFault {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "driver {} failed in {}: {}",
            self.driver, self.function, self.message
        )
    }
}

impl std::error::Error for DriverFault {}

/// Why a driver package is not loaded. Its text is one line that says what
/// is wrong and, for a refusal, what is required and what this host allows.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct LoadError(pub String);

impl LoadError {
    pub(crate) fn new(msg: impl Into<String>) -> Self {
        LoadError(msg.into())
    }
}

/// The Magnum exception names a driver's client error may carry; any other
/// name is reported as `DriverError`. `MagnumError::kind` is static, and a
/// driver's answer must not grow the host's memory.
const KNOWN_KINDS: &[&str] = &[
    "BadRequest",
    "ClusterTemplateNotFound",
    "ClusterTypeNotSupported",
    "ClusterUpgradeNotSupported",
    "Conflict",
    "ExternalNetworkNotFound",
    "FlavorNotFound",
    "ImageNotFound",
    "Invalid",
    "InvalidClusterTemplateForUpgrade",
    "InvalidParameterValue",
    "InvalidVersion",
    "KeyPairNotFound",
    "MasterNGResizeNotSupported",
    "MasterNGSizeInvalid",
    "NodeGroupNotFound",
    "NotAuthorized",
    "NotFound",
    "NotSupported",
    "ObjectNotFound",
    "OperationInProgress",
    "PolicyNotAuthorized",
    "ResourceLimitExceeded",
    "VolumeTypeNotFound",
    "ZeroNodeCountNotSupported",
];

/// The static name for a kind a driver sent.
pub(crate) fn intern_kind(kind: &str) -> &'static str {
    KNOWN_KINDS
        .iter()
        .find(|k| **k == kind)
        .copied()
        .unwrap_or("DriverError")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_kinds_are_not_interned() {
        assert_eq!(intern_kind("NotSupported"), "NotSupported");
        assert_eq!(intern_kind("SomethingNew"), "DriverError");
    }
}
