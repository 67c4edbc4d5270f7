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

// The Magnum errors of driver selection. They are built here with the
// messages of Magnum's exceptions until the catalogue in magnum-domain
// carries them.

/// "Cluster driver (<name>) not supported." (400).
///
/// Magnum: magnum/common/exception.py ClusterDriverNotSupported.
pub fn cluster_driver_not_supported(name: &str) -> MagnumError {
    MagnumError::new(
        400,
        "ClusterDriverNotSupported",
        format!("Cluster driver ({name}) not supported."),
    )
}

/// The 400 when no enabled driver provides the tuple; `supported` lists the
/// tuples enabled drivers provide ("(vm, ubuntu, kubernetes)").
///
/// Magnum: magnum/common/exception.py ClusterTypeNotSupported.
pub fn cluster_type_not_supported(
    server_type: &str,
    os: &str,
    coe: &str,
    supported: &[String],
) -> MagnumError {
    let list = if supported.is_empty() {
        "none (no cluster drivers are loaded)".to_string()
    } else {
        let mut sorted = supported.to_vec();
        sorted.sort();
        sorted.join(", ")
    };
    MagnumError::new(
        400,
        "ClusterTypeNotSupported",
        format!(
            "Cluster type ({server_type}, {os}, {coe}) is not supported by any loaded cluster \
             driver. Loaded drivers support: {list}."
        ),
    )
}

/// The 400 when the tuple's driver is beta and not enabled.
///
/// Magnum: magnum/common/exception.py ClusterTypeBetaNotEnabled.
pub fn cluster_type_beta_not_enabled(
    server_type: &str,
    os: &str,
    coe: &str,
    driver: &str,
) -> MagnumError {
    MagnumError::new(
        400,
        "ClusterTypeBetaNotEnabled",
        format!(
            "Cluster type ({server_type}, {os}, {coe}) is provided by the '{driver}' driver, \
             which is a beta driver and is not enabled. Add '{driver}' to the \
             [drivers]/enabled_beta_drivers configuration option to use it."
        ),
    )
}

/// The base driver's rule for the master count of a new cluster: odd and at
/// least 1, else 400 MasterNGSizeInvalid.
pub fn validate_master_size(count: i32) -> Result<(), MagnumError> {
    if count % 2 == 0 || count < 1 {
        return Err(MagnumError::new(
            400,
            "MasterNGSizeInvalid",
            format!("master nodegroup size of {count} is invalid, size cannot be an even number."),
        ));
    }
    Ok(())
}

/// The base driver's refusal of a CA rotation.
///
/// Magnum: magnum/drivers/common/driver.py:306 raises NotSupported with a
/// literal message.
pub fn ca_rotation_not_supported() -> MagnumError {
    MagnumError::new(
        400,
        "NotSupported",
        "'rotate_ca_certificate' is not supported by this driver.",
    )
}

/// The conductor's answer when the driver does not rotate credentials.
///
/// Magnum: magnum/conductor/handlers/credential_conductor.py:56.
pub fn credential_rotation_not_supported() -> MagnumError {
    MagnumError::new(
        400,
        "NotSupported",
        "Credential rotation is not supported by driver.",
    )
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
    fn master_size_follows_the_base_rule() {
        // Go: TestValidateMasterSize.
        for n in [1, 3, 5] {
            assert_eq!(validate_master_size(n), Ok(()));
        }
        for n in [0, 2, 4, -1] {
            let e = validate_master_size(n).unwrap_err();
            assert_eq!(e.status, 400);
            assert_eq!(
                e.message,
                format!("master nodegroup size of {n} is invalid, size cannot be an even number.")
            );
        }
    }

    #[test]
    fn unknown_kinds_are_not_interned() {
        assert_eq!(intern_kind("NotSupported"), "NotSupported");
        assert_eq!(intern_kind("SomethingNew"), "DriverError");
    }

    #[test]
    fn cluster_type_not_supported_sorts_the_tuples() {
        let e = cluster_type_not_supported(
            "vm",
            "debian",
            "kubernetes",
            &[
                "(vm, ubuntu, kubernetes)".into(),
                "(vm, flatcar, kubernetes)".into(),
            ],
        );
        assert_eq!(
            e.message,
            "Cluster type (vm, debian, kubernetes) is not supported by any loaded cluster driver. \
             Loaded drivers support: (vm, flatcar, kubernetes), (vm, ubuntu, kubernetes)."
        );
    }
}
