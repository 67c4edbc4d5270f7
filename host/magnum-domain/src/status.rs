//! Cluster, nodegroup and federation statuses (`magnum/objects/fields.py`).

use std::fmt;
use std::str::FromStr;

macro_rules! statuses {
    ($($variant:ident => $wire:literal),+ $(,)?) => {
        /// A cluster, nodegroup or federation status; it serialises to Magnum's
        /// wire string (`CREATE_IN_PROGRESS`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum Status {
            $($variant),+
        }

        impl Status {
            /// Every `ClusterStatus` value, in Magnum's order.
            pub const ALL: &'static [Status] = &[$(Status::$variant),+];

            /// The wire strings of [`Status::ALL`], in the same order (what a
            /// WSME enum of `ClusterStatus` accepts).
            pub const NAMES: &'static [&'static str] = &[$($wire),+];

            /// The wire string.
            pub fn as_str(self) -> &'static str {
                match self {
                    $(Status::$variant => $wire),+
                }
            }
        }

        impl FromStr for Status {
            type Err = UnknownStatus;

            fn from_str(s: &str) -> Result<Self, Self::Err> {
                match s {
                    $($wire => Ok(Status::$variant),)+
                    _ => Err(UnknownStatus(s.to_string())),
                }
            }
        }
    };
}

statuses! {
    CreateInProgress => "CREATE_IN_PROGRESS",
    CreateFailed => "CREATE_FAILED",
    CreateComplete => "CREATE_COMPLETE",
    UpdateInProgress => "UPDATE_IN_PROGRESS",
    UpdateFailed => "UPDATE_FAILED",
    UpdateComplete => "UPDATE_COMPLETE",
    DeleteInProgress => "DELETE_IN_PROGRESS",
    DeleteFailed => "DELETE_FAILED",
    DeleteComplete => "DELETE_COMPLETE",
    ResumeComplete => "RESUME_COMPLETE",
    ResumeFailed => "RESUME_FAILED",
    RestoreComplete => "RESTORE_COMPLETE",
    RollbackInProgress => "ROLLBACK_IN_PROGRESS",
    RollbackFailed => "ROLLBACK_FAILED",
    RollbackComplete => "ROLLBACK_COMPLETE",
    SnapshotComplete => "SNAPSHOT_COMPLETE",
    CheckComplete => "CHECK_COMPLETE",
    AdoptComplete => "ADOPT_COMPLETE",
}

impl Status {
    /// The `FederationStatus` values: the first nine cluster statuses.
    pub const FEDERATION: &'static [Status] = &[
        Status::CreateInProgress,
        Status::CreateFailed,
        Status::CreateComplete,
        Status::UpdateInProgress,
        Status::UpdateFailed,
        Status::UpdateComplete,
        Status::DeleteInProgress,
        Status::DeleteFailed,
        Status::DeleteComplete,
    ];

    /// The wire strings of [`Status::FEDERATION`]: the first nine of
    /// [`Status::NAMES`].
    pub const FEDERATION_NAMES: &'static [&'static str] = Status::NAMES.split_at(9).0;
}

/// State guards of the conductor (`magnum/conductor/handlers/*`) and the
/// status poller.
impl Status {
    /// Whether this is one of the `*_COMPLETE` statuses the conductor guards
    /// accept; `DELETE_COMPLETE` is not among them.
    pub fn is_complete(self) -> bool {
        matches!(
            self,
            Status::CreateComplete
                | Status::UpdateComplete
                | Status::ResumeComplete
                | Status::RestoreComplete
                | Status::RollbackComplete
                | Status::SnapshotComplete
                | Status::CheckComplete
                | Status::AdoptComplete
        )
    }

    /// Whether a cluster PATCH (node count, health) may proceed
    /// (`cluster_conductor.py:94`).
    pub fn can_update(self) -> bool {
        self.is_complete()
    }

    /// Whether a resize may proceed: the complete statuses plus
    /// `UPDATE_IN_PROGRESS` and `UPDATE_FAILED`, for the autoscaler
    /// (`cluster_conductor.py:205`).
    pub fn can_resize(self) -> bool {
        self.is_complete() || matches!(self, Status::UpdateInProgress | Status::UpdateFailed)
    }

    /// Whether an upgrade may proceed (`cluster_conductor.py:271`): the
    /// complete statuses plus `UPDATE_FAILED`.
    // Deviation: Magnum refuses an upgrade from UPDATE_FAILED, so a failed
    // upgrade (a version the webhook refused, a topology that did not
    // reconcile) locks the cluster; here the upgrade can be retried.
    pub fn can_upgrade(self) -> bool {
        self.is_complete() || self == Status::UpdateFailed
    }

    /// Whether a CA rotation may proceed (`ca_conductor.py:73`).
    pub fn can_rotate_ca(self) -> bool {
        self.is_complete()
    }

    /// Whether a credential rotation may proceed
    /// (`credential_conductor.py:26`).
    pub fn can_rotate_credential(self) -> bool {
        self.is_complete() || matches!(self, Status::UpdateInProgress | Status::UpdateFailed)
    }

    /// Whether the status poller follows a cluster in this status.
    pub fn is_in_progress(self) -> bool {
        matches!(
            self,
            Status::CreateInProgress
                | Status::UpdateInProgress
                | Status::DeleteInProgress
                | Status::RollbackInProgress
        )
    }

    /// The `*_FAILED` an operation in this `*_IN_PROGRESS` status ends in
    /// when it fails; `None` for a status that is not in progress.
    pub fn failure(self) -> Option<Status> {
        match self {
            Status::CreateInProgress => Some(Status::CreateFailed),
            Status::UpdateInProgress => Some(Status::UpdateFailed),
            Status::DeleteInProgress => Some(Status::DeleteFailed),
            Status::RollbackInProgress => Some(Status::RollbackFailed),
            _ => None,
        }
    }

    /// Whether the status ends in `_FAILED`.
    pub fn is_failed(self) -> bool {
        self.as_str().ends_with("_FAILED")
    }

    /// Whether this is a `FederationStatus` value.
    pub fn is_federation_status(self) -> bool {
        Status::FEDERATION.contains(&self)
    }

    /// The cluster statuses for which `GET /clusters/{id}` shows the
    /// nodegroups' faults.
    pub const FAULT: &'static [Status] = &[
        Status::CreateFailed,
        Status::UpdateFailed,
        Status::DeleteFailed,
        Status::RollbackFailed,
        Status::ResumeFailed,
    ];

    /// Whether `GET /clusters/{id}` shows the nodegroups' faults for a
    /// cluster in this status.
    pub fn shows_faults(self) -> bool {
        Status::FAULT.contains(&self)
    }
}

/// Whether a nodegroup create may proceed in the nodegroup's `status`; no
/// status (the client sent none) is accepted (`nodegroup_conductor.py:37`).
pub fn can_create_node_group(status: Option<Status>) -> bool {
    status.is_none_or(|s| s.can_resize())
}

/// Whether a nodegroup update may proceed (`nodegroup_conductor.py:94`): the
/// rule of [`can_create_node_group`].
pub fn can_update_node_group(status: Option<Status>) -> bool {
    can_create_node_group(status)
}

/// A cluster's health status.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HealthStatus {
    Healthy,
    Unhealthy,
    Unknown,
}

impl HealthStatus {
    /// Every health status, in Magnum's order.
    pub const ALL: &'static [HealthStatus] = &[
        HealthStatus::Healthy,
        HealthStatus::Unhealthy,
        HealthStatus::Unknown,
    ];

    /// The wire string.
    pub fn as_str(self) -> &'static str {
        match self {
            HealthStatus::Healthy => "HEALTHY",
            HealthStatus::Unhealthy => "UNHEALTHY",
            HealthStatus::Unknown => "UNKNOWN",
        }
    }
}

impl FromStr for HealthStatus {
    type Err = UnknownStatus;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        HealthStatus::ALL
            .iter()
            .copied()
            .find(|h| h.as_str() == s)
            .ok_or_else(|| UnknownStatus(s.to_string()))
    }
}

impl fmt::Display for HealthStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl fmt::Display for Status {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl serde::Serialize for Status {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> serde::Deserialize<'de> for Status {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        s.parse().map_err(serde::de::Error::custom)
    }
}

/// A string that is not one of Magnum's statuses.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown status {0:?}")]
pub struct UnknownStatus(pub String);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wire_strings_round_trip() {
        assert_eq!(Status::ALL.len(), 18);
        for s in Status::ALL {
            assert_eq!(s.as_str().parse::<Status>(), Ok(*s));
        }
        assert!("create_in_progress".parse::<Status>().is_err());
        let names: Vec<&str> = Status::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(Status::NAMES, names.as_slice());
        let federation: Vec<&str> = Status::FEDERATION.iter().map(|s| s.as_str()).collect();
        assert_eq!(Status::FEDERATION_NAMES, federation.as_slice());
    }

    /// Go: `TestStateGuards`. `None` is the nodegroup without a status.
    #[test]
    fn state_guards() {
        use Status::*;
        // status, update, resize, upgrade, rotate CA, rotate credential,
        // nodegroup create and update
        let cases: &[(Option<Status>, [bool; 6])] = &[
            (Some(CreateComplete), [true, true, true, true, true, true]),
            (Some(AdoptComplete), [true, true, true, true, true, true]),
            (
                Some(UpdateInProgress),
                [false, true, false, false, true, true],
            ),
            (Some(UpdateFailed), [false, true, true, false, true, true]),
            (Some(CreateInProgress), [false; 6]),
            (Some(CreateFailed), [false; 6]),
            (Some(DeleteComplete), [false; 6]),
            (Some(RollbackFailed), [false; 6]),
            (None, [false, false, false, false, false, true]),
        ];
        for (status, want) in cases {
            let on = |f: fn(Status) -> bool| status.is_some_and(f);
            let got = [
                on(Status::can_update),
                on(Status::can_resize),
                on(Status::can_upgrade),
                on(Status::can_rotate_ca),
                on(Status::can_rotate_credential),
                can_create_node_group(*status) && can_update_node_group(*status),
            ];
            assert_eq!(
                &got, want,
                "{status:?}: update/resize/upgrade/rotateCA/rotateCred/nodegroup"
            );
        }
        assert!(ResumeFailed.is_failed() && !CreateComplete.is_failed());
        assert!(RollbackInProgress.is_in_progress() && !CreateComplete.is_in_progress());
        for s in Status::ALL {
            assert_eq!(s.failure().is_some(), s.is_in_progress(), "{s}");
        }
        assert_eq!(DeleteInProgress.failure(), Some(DeleteFailed));
        assert!(!CheckComplete.is_federation_status() && DeleteComplete.is_federation_status());
        assert_eq!("UNKNOWN".parse::<HealthStatus>(), Ok(HealthStatus::Unknown));
        assert!("unknown".parse::<HealthStatus>().is_err());
    }

    /// Every guard over every status: the complete set is the eight
    /// `*_COMPLETE` statuses other than `DELETE_COMPLETE`, and the polled,
    /// failed and fault sets are what their names say.
    #[test]
    fn guards_over_every_status() {
        let complete: Vec<&str> = Status::ALL
            .iter()
            .filter(|s| s.is_complete())
            .map(|s| s.as_str())
            .collect();
        assert_eq!(
            complete,
            [
                "CREATE_COMPLETE",
                "UPDATE_COMPLETE",
                "RESUME_COMPLETE",
                "RESTORE_COMPLETE",
                "ROLLBACK_COMPLETE",
                "SNAPSHOT_COMPLETE",
                "CHECK_COMPLETE",
                "ADOPT_COMPLETE"
            ]
        );
        for s in Status::ALL {
            assert_eq!(
                s.is_in_progress(),
                s.as_str().ends_with("_IN_PROGRESS"),
                "{s}"
            );
            assert_eq!(
                s.can_update() || *s == Status::UpdateFailed,
                s.can_upgrade(),
                "{s}"
            );
            assert_eq!(s.can_update(), s.can_rotate_ca(), "{s}");
            assert_eq!(s.can_resize(), s.can_rotate_credential(), "{s}");
            assert_eq!(s.shows_faults(), s.is_failed(), "{s}");
        }
        assert_eq!(Status::FAULT.len(), 5);
    }
}
