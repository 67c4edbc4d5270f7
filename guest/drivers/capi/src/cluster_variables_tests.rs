//! The label and field mapping of the class variables (Go:
//! `TestVariableMapping`, every case, and the half of
//! `TestClusterClassDeclaresEveryVariable` about a Cluster's variables).

use openkeel_magnum_driver::DriverError;
use serde_json::Value;

use super::*;
use crate::fixtures::test_input;
use crate::input::LiveInfra;
use crate::labels::{DEFAULT_API_SERVER_CIPHER_SUITES, DEFAULT_KUBELET_CIPHER_SUITES};
use crate::variables::VARIABLE_NAMES;

/// A case of the mapping: an edit of the representative input, then
/// either the JSON of some variables or a 400 whose message names
/// something.
struct Case {
    name: &'static str,
    edit: fn(&mut Input),
    vars: Vec<(&'static str, String)>,
    error: &'static str,
}

/// No edit: the representative cluster as it is.
fn unchanged(_: &mut Input) {}

/// Sets a cluster label.
fn set_label(input: &mut Input, key: &str, value: &str) {
    input.state.cluster.set_label(key, value);
}

/// `(name, JSON)` pairs from literals.
fn expect(pairs: &[(&'static str, &str)]) -> Vec<(&'static str, String)> {
    pairs.iter().map(|(n, v)| (*n, v.to_string())).collect()
}

/// The case "defaults without labels".
fn defaults_without_labels() -> Case {
    Case {
        name: "defaults without labels",
        edit: |input| {
            input.state.cluster.labels = Some(Labels::from([("kube_tag", "v1.31.1")]));
            input.state.cluster.docker_volume_size = None;
            input.state.template.docker_volume_size = None;
            input.state.template.http_proxy = None;
            input.state.template.no_proxy = None;
            input.state.template.dns_nameserver = None;
        },
        vars: {
            let mut vars = expect(&[
                ("admissionControlList", r#""NodeRestriction""#),
                ("apiServerFloatingIP", r#""""#),
                ("apiServerSANs", r#""""#),
                ("aptProxyConfig", r#""""#),
                ("systemdProxyConfig", r#""""#),
                (
                    "auditLog",
                    r#"{"enabled":false,"maxAge":"30","maxBackup":"10","maxSize":"100"}"#,
                ),
                ("availabilityZone", r#""""#),
                ("bootVolume", r#"{"size":0,"type":"standard"}"#),
                ("controlPlaneAvailabilityZones", r#"[""]"#),
                ("disableAPIServerFloatingIP", "false"),
                ("disableAPIServerFloatingIPManaged", "false"),
                ("dnsNameservers", "[]"),
                ("dockerVolumeSize", "0"),
                ("enableDockerVolume", "false"),
                ("enableEtcdVolume", "false"),
                ("enableKeystoneAuth", "true"),
                ("etcdVolumeSize", "0"),
                ("imageRepository", r#""""#),
                ("isServerGroupDiffFailureDomain", "false"),
                ("nodeCidr", r#""10.0.0.0/24""#),
                (
                    "openidConnect",
                    r#"{"clientId":"","groupsClaim":"","groupsPrefix":"","issuerUrl":"","usernameClaim":"sub","usernamePrefix":"-"}"#,
                ),
                ("operatingSystem", r#""ubuntu""#),
            ]);
            vars.push((
                "apiServerTLSCipherSuites",
                format!("\"{DEFAULT_API_SERVER_CIPHER_SUITES}\""),
            ));
            vars.push((
                "kubeletTLSCipherSuites",
                format!("\"{DEFAULT_KUBELET_CIPHER_SUITES}\""),
            ));
            vars
        },
        error: "",
    }
}

/// The case "labels of the representative cluster".
fn representative_labels() -> Case {
    Case {
        name: "labels of the representative cluster",
        edit: unchanged,
        vars: expect(&[
            ("admissionControlList", r#""NodeRestriction,PodSecurity""#),
            ("apiServerLoadBalancer", r#"{"enabled":true}"#),
            ("apiServerSANs", r#""- k8s.example.com\n- 10.0.0.10\n""#),
            (
                "auditLog",
                r#"{"enabled":true,"maxAge":"30","maxBackup":"10","maxSize":"100"}"#,
            ),
            ("availabilityZone", r#""nova""#),
            ("bootVolume", r#"{"size":40,"type":"ssd"}"#),
            ("bootVolumeAvailabilityZone", r#""nova""#),
            ("clusterIdentityRefName", r#""kube-abcde-cloud-config""#),
            ("controlPlaneFlavor", r#""m1.large""#),
            ("disableAPIServerFloatingIP", "true"),
            ("disableAPIServerFloatingIPManaged", "true"),
            ("dnsNameservers", r#"["8.8.8.8","1.1.1.1"]"#),
            ("dockerVolumeSize", "20"),
            ("enableDockerVolume", "true"),
            ("enableEtcdVolume", "true"),
            ("etcdVolumeSize", "10"),
            ("etcdVolumeType", r#""standard""#),
            (
                "externalNetworkId",
                r#""33333333-3333-4333-8333-333333333333""#,
            ),
            ("fixedNetworkId", r#""""#),
            ("flavor", r#""m1.medium""#),
            ("imageRepository", r#""registry.example.com/k8s""#),
            ("imageUUID", r#""11111111-1111-4111-8111-111111111111""#),
            ("serverGroupId", r#""44444444-4444-4444-8444-444444444444""#),
            ("sshKeyName", r#""mykey""#),
        ]),
        error: "",
    }
}

/// Every case of `TestVariableMapping`, in its order.
fn cases() -> Vec<Case> {
    vec![
        defaults_without_labels(),
        representative_labels(),
        Case {
            name: "ubuntu-focal is ubuntu, flatcar is flatcar",
            edit: |input| input.state.template.cluster_distro = Some("ubuntu-focal".into()),
            vars: expect(&[("operatingSystem", r#""ubuntu""#)]),
            error: "",
        },
        Case {
            name: "the live OpenStackCluster's immutable fields win",
            edit: |input| {
                set_label(input, "octavia_provider", "ovn");
                input.live = Some(LiveInfra {
                    lb_provider: "amphora".into(),
                    disable_floating_ip: Some(false),
                    ..LiveInfra::default()
                });
            },
            vars: expect(&[
                (
                    "apiServerLoadBalancer",
                    r#"{"enabled":true,"provider":"amphora"}"#,
                ),
                ("disableAPIServerFloatingIP", "false"),
                ("disableAPIServerFloatingIPManaged", "true"),
            ]),
            error: "",
        },
        Case {
            name: "control plane availability zones",
            edit: |input| set_label(input, "control_plane_availability_zones", "az1, az2"),
            vars: expect(&[("controlPlaneAvailabilityZones", r#"["az1","az2"]"#)]),
            error: "",
        },
        Case {
            name: "a malformed boolean label fails",
            edit: |input| set_label(input, "audit_log_enabled", "maybe"),
            vars: Vec::new(),
            error: "audit_log_enabled",
        },
        Case {
            name: "a malformed integer label fails",
            edit: |input| set_label(input, "etcd_volume_size", "ten"),
            vars: Vec::new(),
            error: "etcd_volume_size",
        },
        Case {
            name: "an unsupported distro fails",
            edit: |input| input.state.template.cluster_distro = Some("fedora-coreos".into()),
            vars: Vec::new(),
            error: "fedora-coreos",
        },
    ]
}

/// Go: TestVariableMapping.
#[test]
fn variables_map_the_labels_and_fields() {
    for case in cases() {
        let mut input = test_input();
        (case.edit)(&mut input);
        let result = cluster_variables(&input);
        if !case.error.is_empty() {
            let e = match result {
                Err(DriverError::Client(e)) => e,
                other => panic!("{}: {other:?}, want a client error", case.name),
            };
            assert_eq!(e.status, 400, "{}", case.name);
            assert!(
                e.message.contains(case.error),
                "{}: {:?} does not name {}",
                case.name,
                e.message,
                case.error
            );
            continue;
        }
        let vars = result.unwrap_or_else(|e| panic!("{}: {e}", case.name));
        for (name, want) in &case.vars {
            let want: Value = serde_json::from_str(want).expect("literal JSON");
            assert_eq!(vars.get(name), Some(&want), "{}: {name}", case.name);
        }
    }
}

/// Go: TestClusterClassDeclaresEveryVariable ("a Cluster must set every
/// required variable").
#[test]
fn a_cluster_sets_every_declared_variable() {
    let vars = cluster_variables(&test_input()).expect("variables");
    let names: Vec<&str> = vars.keys().copied().collect();
    assert_eq!(names, VARIABLE_NAMES);
}

#[test]
fn the_topology_list_is_sorted_by_name() {
    let vars = cluster_variables(&test_input()).expect("variables");
    let list = variable_list(&vars);
    let names: Vec<&str> = list
        .as_array()
        .expect("list")
        .iter()
        .map(|v| v["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names, VARIABLE_NAMES);
    assert_eq!(list[0]["value"], "NodeRestriction,PodSecurity");
}

#[test]
fn overrides_read_the_nodegroup_and_its_lookups() {
    let input = test_input();
    let gpu = &input.state.nodegroups[2];
    let vars = node_group_overrides(&input, gpu).expect("overrides");
    let names: Vec<&str> = vars.keys().copied().collect();
    assert_eq!(
        names,
        [
            "bootVolume",
            "flavor",
            "hardwareDiskBus",
            "imageRepository",
            "imageUUID",
            "isServerGroupDiffFailureDomain",
            "serverGroupId",
        ]
    );
    // The cluster label alone spreads a nodegroup too.
    let mut input = test_input();
    set_label(&mut input, "different_failure_domain", "yes");
    let worker = &input.state.nodegroups[1];
    let vars = node_group_overrides(&input, worker).expect("overrides");
    assert_eq!(vars["isServerGroupDiffFailureDomain"], true);
    // A malformed nodegroup label is refused with its name.
    let mut input = test_input();
    input.state.nodegroups[2].set_label("boot_volume_size", "big");
    let Err(DriverError::Client(e)) = node_group_overrides(&input, &input.state.nodegroups[2])
    else {
        panic!("a malformed boot_volume_size was accepted");
    };
    assert_eq!(
        e.message,
        "Label boot_volume_size has an invalid integer value \"big\"."
    );
}

#[test]
fn the_boot_volume_type_falls_back_to_the_options_then_cinder() {
    let mut input = test_input();
    input.state.cluster.labels = Some(Labels::from([("kube_tag", "v1.31.1")]));
    input.default_boot_volume_size = 25;
    input.default_boot_volume_type = Some("fast".into());
    let vars = cluster_variables(&input).expect("variables");
    assert_eq!(
        vars["bootVolume"],
        serde_json::json!({ "size": 25, "type": "fast" })
    );
    assert_eq!(vars["dockerVolumeType"], "standard");
    // The template's key pair stands in for the cluster's.
    input.state.cluster.keypair = None;
    input.state.template.keypair_id = Some("tplkey".into());
    let vars = cluster_variables(&input).expect("variables");
    assert_eq!(vars["sshKeyName"], "tplkey");
}
