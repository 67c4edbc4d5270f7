//! The versions of the driver contract this host implements and the
//! functions a component exports in each. The table of functions is read
//! from the WIT files by the build (`build/contract.rs`): the host finds a
//! component's exports through it, and the SDKs and the test kit are
//! checked against it (`tests/driver_host/contract.rs`).

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

include!(concat!(env!("OUT_DIR"), "/contract_functions.rs"));

/// The functions a component of `c` exports.
pub fn functions(c: Contract) -> impl Iterator<Item = &'static Function> {
    FUNCTIONS.iter().filter(move |f| f.since <= c)
}

/// The build's reader of the WIT, run by the tests on copies of `wit/`.
#[cfg(test)]
#[path = "../build/contract.rs"]
mod generator;

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

    fn wit() -> std::path::PathBuf {
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../wit")
    }

    /// The recipe of docs/architecture.md, "Adding a contract function":
    /// a function declared in a new version's WIT is in the table with
    /// that version, and has its request, with no other declaration.
    #[test]
    fn adding_a_contract_function() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for (version, _) in generator::versions(&wit()).unwrap_or_else(|e| panic!("{e}")) {
            let name = format!("magnum-driver@{}.{}.0", version.0, version.1);
            copy(&wit().join(&name), &dir.path().join(&name), None);
        }
        let new = dir.path().join("magnum-driver@1.2.0");
        copy(
            &wit().join("magnum-driver@1.1.0"),
            &new,
            Some(("1.1.0;", "1.2.0;")),
        );
        let lifecycle = new.join("lifecycle.wit");
        let text = std::fs::read_to_string(&lifecycle).unwrap_or_else(|e| panic!("{e}"));
        let declared = text
            .trim_end()
            .strip_suffix('}')
            .unwrap_or_else(|| panic!("{text}"))
            .to_string()
            + "  /// New in 1.2. Cordons and drains the nodes of `ng`.\n  \
               drain-nodes: func(ctx: call-context, state: cluster-state, ng: nodegroup) \
               -> result<update, driver-error>;\n}\n";
        std::fs::write(&lifecycle, declared).unwrap_or_else(|e| panic!("{e}"));

        let exports = generator::exports(dir.path()).unwrap_or_else(|e| panic!("{e}"));
        let functions = generator::functions_rs(&exports);
        assert!(
            functions.contains(r#"f("lifecycle", "drain-nodes", Contract::V1_2),"#),
            "{functions}"
        );
        assert!(
            functions.contains(r#"f("driver", "validate-nodegroup", Contract::V1_1),"#),
            "{functions}"
        );
        assert!(
            functions.contains(r#"f("driver", "describe", Contract::V1_0),"#),
            "{functions}"
        );
        let request = generator::request_rs(&exports);
        for line in [
            "#[doc = \"New in 1.2. Cordons and drains the nodes of `ng`.\"]",
            "DrainNodes(wt::CallContext, StateRef<'a>, wt::Nodegroup),",
            "Request::DrainNodes(..) => \"drain-nodes\",",
            "DeriveStatus(wt::CallContext, StateRef<'a>, Vec<ws::Observation>),",
            "Request::Describe => \"describe\",",
        ] {
            assert!(request.contains(line), "{line} is not in:\n{request}");
        }
    }

    /// Copies the WIT files of `from` into `to`, with `replace.0` replaced
    /// by `replace.1` in each.
    fn copy(from: &std::path::Path, to: &std::path::Path, replace: Option<(&str, &str)>) {
        std::fs::create_dir_all(to).unwrap_or_else(|e| panic!("{e}"));
        for entry in std::fs::read_dir(from).unwrap_or_else(|e| panic!("{e}")) {
            let path = entry.unwrap_or_else(|e| panic!("{e}")).path();
            let mut text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
            if let Some((a, b)) = replace {
                text = text.replace(a, b);
            }
            let file = path
                .file_name()
                .unwrap_or_else(|| panic!("{}", path.display()));
            std::fs::write(to.join(file), text).unwrap_or_else(|e| panic!("{e}"));
        }
    }
}
