//! The versions of the driver contract this host implements and the
//! functions a component exports in each: the one table from which the
//! host finds a component's exports, and against which the WIT files, the
//! SDKs and the test kit are checked (`tests/driver_host/contract.rs`
//! parses `wit/`).

use semver::Version;

/// A version of `openkeel:magnum-driver` the host implements.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Contract {
    /// 1.0.0, frozen.
    V1_0,
    /// 1.1.0: the call's time, snapshots for `derive-status`, side effects
    /// after a status, `validate-nodegroup`, the cloud's configuration,
    /// flavor details and share types, decrypted CA keys, `served`, and
    /// `failed-after`.
    V1_1,
}

impl Contract {
    /// Every version, oldest first.
    pub const ALL: [Contract; 2] = [Contract::V1_0, Contract::V1_1];

    /// The newest.
    pub const LATEST: Contract = Contract::V1_1;

    /// The package version.
    pub fn version(self) -> Version {
        match self {
            Contract::V1_0 => Version::new(1, 0, 0),
            Contract::V1_1 => Version::new(1, 1, 0),
        }
    }

    /// The version a component built for `v` is served as: the newest
    /// implemented one of the same major version not newer than `v`.
    pub fn of(v: &Version) -> Option<Contract> {
        Contract::ALL.iter().rev().copied().find(|c| {
            let cv = c.version();
            cv.major == v.major && cv <= *v
        })
    }

    /// `1.1.0`.
    pub fn as_str(self) -> &'static str {
        match self {
            Contract::V1_0 => "1.0.0",
            Contract::V1_1 => "1.1.0",
        }
    }
}

/// One exported function of the contract.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Function {
    /// `driver`, `lifecycle` or `status`.
    pub interface: &'static str,
    /// The WIT name (`create-cluster`).
    pub name: &'static str,
    /// The version that introduced it.
    pub since: Contract,
}

const fn f(interface: &'static str, name: &'static str, since: Contract) -> Function {
    Function {
        interface,
        name,
        since,
    }
}

/// Every function a component exports, in the WIT files' order.
pub const FUNCTIONS: &[Function] = &[
    f("driver", "describe", Contract::V1_0),
    f("driver", "validate-master-size", Contract::V1_0),
    f("driver", "validate-master-resize", Contract::V1_0),
    f("driver", "validate-create", Contract::V1_0),
    f("driver", "validate-upgrade", Contract::V1_0),
    f("driver", "validate-nodegroup", Contract::V1_1),
    f("driver", "can-rotate-ca", Contract::V1_0),
    f("lifecycle", "create-cluster", Contract::V1_0),
    f("lifecycle", "update-cluster", Contract::V1_0),
    f("lifecycle", "delete-cluster", Contract::V1_0),
    f("lifecycle", "resize-cluster", Contract::V1_0),
    f("lifecycle", "upgrade-cluster", Contract::V1_0),
    f("lifecycle", "create-nodegroup", Contract::V1_0),
    f("lifecycle", "update-nodegroup", Contract::V1_0),
    f("lifecycle", "delete-nodegroup", Contract::V1_0),
    f("lifecycle", "rotate-ca", Contract::V1_0),
    f("lifecycle", "rotate-credential", Contract::V1_0),
    f("status", "watches", Contract::V1_0),
    f("status", "derive-status", Contract::V1_0),
    f("status", "poll-status", Contract::V1_0),
    f("status", "apply-effects", Contract::V1_1),
];

/// The functions a component of `c` exports.
pub fn functions(c: Contract) -> impl Iterator<Item = &'static Function> {
    FUNCTIONS.iter().filter(move |f| f.since <= c)
}

/// The interfaces a component exports.
pub const EXPORTED_INTERFACES: [&str; 3] = ["driver", "lifecycle", "status"];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_component_is_served_as_the_newest_version_it_can_be() {
        let v = |s: &str| Version::parse(s).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(Contract::of(&v("1.0.0")), Some(Contract::V1_0));
        assert_eq!(Contract::of(&v("1.0.3")), Some(Contract::V1_0));
        assert_eq!(Contract::of(&v("1.1.0")), Some(Contract::V1_1));
        assert_eq!(Contract::of(&v("1.4.0")), Some(Contract::V1_1));
        assert_eq!(Contract::of(&v("2.0.0")), None);
        assert_eq!(Contract::of(&v("0.9.0")), None);
        assert_eq!(functions(Contract::V1_0).count(), 19);
        assert_eq!(functions(Contract::V1_1).count(), 21);
    }
}
