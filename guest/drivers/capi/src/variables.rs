//! The variables the ClusterClass declares (driver-capi.md § 4.1): their
//! names and schemas. Every variable is required, so a Cluster of the
//! class sets all of them; an adopted cluster pinned to another class
//! version must get exactly that version's set.

use serde_json::{Value, json};

use crate::labels::OperatingSystem;

/// The 40 variables of the ClusterClass, sorted by name: the set of
/// magnum-cluster-api's class, with `apiServerLoadBalancerAllowedCIDRs`,
/// `bootVolumeAvailabilityZone` and `disableAPIServerFloatingIPManaged`,
/// which its class does not declare (a cluster pinned to that class does
/// without them).
pub const VARIABLE_NAMES: [&str; 40] = [
    "admissionControlList",
    "apiServerFloatingIP",
    "apiServerLoadBalancer",
    "apiServerLoadBalancerAllowedCIDRs",
    "apiServerSANs",
    "apiServerTLSCipherSuites",
    "aptProxyConfig",
    "auditLog",
    "availabilityZone",
    "bootVolume",
    "bootVolumeAvailabilityZone",
    "clusterIdentityRefName",
    "containerdConfig",
    "controlPlaneAvailabilityZones",
    "controlPlaneFlavor",
    "disableAPIServerFloatingIP",
    "disableAPIServerFloatingIPManaged",
    "dnsNameservers",
    "dockerVolumeSize",
    "dockerVolumeType",
    "enableDockerVolume",
    "enableEtcdVolume",
    "enableKeystoneAuth",
    "etcdVolumeSize",
    "etcdVolumeType",
    "externalNetworkId",
    "fixedNetworkId",
    "fixedSubnetId",
    "flavor",
    "hardwareDiskBus",
    "imageRepository",
    "imageUUID",
    "isServerGroupDiffFailureDomain",
    "kubeletTLSCipherSuites",
    "nodeCidr",
    "openidConnect",
    "operatingSystem",
    "serverGroupId",
    "sshKeyName",
    "systemdProxyConfig",
];

/// The `variables` of the ClusterClass, in the order of
/// [`VARIABLE_NAMES`], each required.
pub fn class_variables() -> Value {
    VARIABLE_NAMES
        .iter()
        .map(|name| {
            json!({
                "name": name,
                "required": true,
                "schema": { "openAPIV3Schema": schema(name) },
            })
        })
        .collect()
}

/// The OpenAPI schema of a variable; a string unless said otherwise.
fn schema(name: &str) -> Value {
    match name {
        "apiServerLoadBalancer" => object(
            &["enabled"],
            &[
                ("enabled", boolean()),
                ("provider", string()),
                ("flavor", string()),
                ("availabilityZone", string()),
            ],
        ),
        // The sizes are strings: they become kube-apiserver arguments.
        "auditLog" => object(
            &["enabled", "maxAge", "maxBackup", "maxSize"],
            &[
                ("enabled", boolean()),
                ("maxAge", string()),
                ("maxBackup", string()),
                ("maxSize", string()),
            ],
        ),
        "bootVolume" => object(
            &["type", "size"],
            &[("type", string()), ("size", integer())],
        ),
        "openidConnect" => {
            let fields = [
                "issuerUrl",
                "clientId",
                "usernameClaim",
                "usernamePrefix",
                "groupsClaim",
                "groupsPrefix",
            ];
            let properties: Vec<(&str, Value)> = fields.iter().map(|f| (*f, string())).collect();
            object(&fields, &properties)
        }
        "operatingSystem" => {
            let names: Vec<&str> = OperatingSystem::ALL.iter().map(|os| os.as_str()).collect();
            json!({ "type": "string", "enum": names })
        }
        "apiServerLoadBalancerAllowedCIDRs"
        | "controlPlaneAvailabilityZones"
        | "dnsNameservers" => {
            json!({ "type": "array", "items": string() })
        }
        "disableAPIServerFloatingIP"
        | "disableAPIServerFloatingIPManaged"
        | "enableDockerVolume"
        | "enableEtcdVolume"
        | "enableKeystoneAuth"
        | "isServerGroupDiffFailureDomain" => boolean(),
        "dockerVolumeSize" | "etcdVolumeSize" => integer(),
        _ => string(),
    }
}

/// The schema of a string.
fn string() -> Value {
    json!({ "type": "string" })
}

/// The schema of a boolean.
fn boolean() -> Value {
    json!({ "type": "boolean" })
}

/// The schema of a 64-bit integer.
fn integer() -> Value {
    json!({ "type": "integer", "format": "int64" })
}

/// The schema of an object with `properties`, of which `required` must be
/// set.
fn object(required: &[&str], properties: &[(&str, Value)]) -> Value {
    let properties: serde_json::Map<String, Value> = properties
        .iter()
        .map(|(name, schema)| (name.to_string(), schema.clone()))
        .collect();
    json!({ "type": "object", "required": required, "properties": properties })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Go: TestClusterClassDeclaresEveryVariable (the count and the
    /// requirement).
    #[test]
    fn the_40_variables_are_sorted_and_required() {
        let mut sorted = VARIABLE_NAMES;
        sorted.sort_unstable();
        assert_eq!(sorted, VARIABLE_NAMES);
        let vars = class_variables();
        let vars = vars.as_array().unwrap();
        assert_eq!(vars.len(), 40);
        for v in vars {
            assert_eq!(v["required"], true, "{}", v["name"]);
            assert!(v["schema"]["openAPIV3Schema"]["type"].is_string());
        }
    }

    #[test]
    fn the_operating_systems_are_an_enum() {
        assert_eq!(
            schema("operatingSystem"),
            json!({ "type": "string", "enum": ["ubuntu", "debian", "flatcar", "rockylinux"] })
        );
    }
}
