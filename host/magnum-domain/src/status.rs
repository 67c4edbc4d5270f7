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
    }
}
