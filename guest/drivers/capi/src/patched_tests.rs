//! The class patches applied to the class templates for topology Clusters
//! (Go: `TestPatchedTemplatesMatchCRDs`, every scenario), with the
//! evaluator of [`crate::patch_eval`].
//!
//! The representative cluster's five patched templates are compared with
//! the Go goldens `patched-*.yaml`; as in the Go test, the worker
//! templates are those of the `gpu` MachineDeployment, with its variable
//! overrides. The Go test's other two scenarios were checked against the
//! CRD schemas only, which this crate does not have; here they, and
//! variations of the variables that turn each conditional patch on and
//! off, are checked by the patches that apply and by what they write.

use serde_json::{Value, json};

use crate::classes::class_objects;
use crate::cluster::build_cluster;
use crate::fixtures::test_input;
use crate::golden;
use crate::input::Input;
use crate::names::{CLASS_VERSION, NAMESPACE};
use crate::patch_eval::{Holder, Patched, patch_template};

/// The MachineDeployment topology of the Go test's worker templates.
const GPU: &str = "gpu";
/// The other MachineDeployment topology of the representative cluster.
const DEFAULT_WORKER: &str = "default-worker";

/// The topology Cluster of `input`.
fn cluster_of(input: &Input) -> Value {
    build_cluster(input).expect("cluster")
}

/// The template of `holder` patched for `cluster`.
fn patched(cluster: &Value, holder: Holder<'_>) -> Patched {
    patch_template(&class_objects(NAMESPACE, CLASS_VERSION), cluster, holder)
        .unwrap_or_else(|e| panic!("{holder:?}: {e}"))
}

/// The names of the patches that apply to the template of `holder`.
fn applied(cluster: &Value, holder: Holder<'_>) -> Vec<String> {
    patched(cluster, holder).applied
}

/// The patched `spec.template.spec` of `holder`.
fn spec(cluster: &Value, holder: Holder<'_>) -> Value {
    patched(cluster, holder).template["spec"]["template"]["spec"].take()
}

/// Sets the Cluster variable `name` (not a MachineDeployment override).
fn set_variable(cluster: &mut Value, name: &str, value: Value) {
    let variables = cluster["spec"]["topology"]["variables"]
        .as_array_mut()
        .expect("variables");
    let v = variables
        .iter_mut()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no variable {name}"));
    v["value"] = value;
}

/// Sets the variable override `name` of the MachineDeployment `md`.
fn set_override(cluster: &mut Value, md: &str, name: &str, value: Value) {
    let mds = cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array_mut()
        .expect("machineDeployments");
    let md = mds
        .iter_mut()
        .find(|m| m["name"] == md)
        .unwrap_or_else(|| panic!("no MachineDeployment {md}"));
    let overrides = md["variables"]["overrides"]
        .as_array_mut()
        .expect("overrides");
    let v = overrides
        .iter_mut()
        .find(|v| v["name"] == name)
        .unwrap_or_else(|| panic!("no override {name}"));
    v["value"] = value;
}

/// The `device` of each entry of a kubeadm `diskSetup` list.
fn devices(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|e| e["device"].as_str().expect("device"))
        .collect()
}

/// The `name` of each entry of a list.
fn names(list: &Value) -> Vec<&str> {
    list.as_array()
        .into_iter()
        .flatten()
        .map(|e| e["name"].as_str().expect("name"))
        .collect()
}

// ------------------------------------------------------------- goldens

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"), golden
/// `patched-infrastructure-cluster.yaml`.
#[test]
fn patched_infrastructure_cluster_matches_the_go_golden() {
    let p = patched(&cluster_of(&test_input()), Holder::InfrastructureCluster);
    golden::assert_matches(&p.template, "patched-infrastructure-cluster.yaml");
}

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"), golden
/// `patched-control-plane.yaml`.
#[test]
fn patched_control_plane_matches_the_go_golden() {
    let p = patched(&cluster_of(&test_input()), Holder::ControlPlane);
    golden::assert_matches(&p.template, "patched-control-plane.yaml");
}

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"), golden
/// `patched-control-plane-machines.yaml`.
#[test]
fn patched_control_plane_machines_match_the_go_golden() {
    let p = patched(&cluster_of(&test_input()), Holder::ControlPlaneMachines);
    golden::assert_matches(&p.template, "patched-control-plane-machines.yaml");
}

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"), golden
/// `patched-worker-machines.yaml` (the `gpu` MachineDeployment).
#[test]
fn patched_worker_machines_match_the_go_golden() {
    let p = patched(&cluster_of(&test_input()), Holder::WorkerMachines(GPU));
    golden::assert_matches(&p.template, "patched-worker-machines.yaml");
}

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"), golden
/// `patched-worker-bootstrap.yaml` (the `gpu` MachineDeployment).
#[test]
fn patched_worker_bootstrap_matches_the_go_golden() {
    let p = patched(&cluster_of(&test_input()), Holder::WorkerBootstrap(GPU));
    golden::assert_matches(&p.template, "patched-worker-bootstrap.yaml");
}

// ----------------------------------------------------------- scenarios

/// Go: TestPatchedTemplatesMatchCRDs ("representative cluster"): the
/// patches behind the goldens, per template, in class order.
#[test]
fn patches_of_the_representative_cluster() {
    let cluster = cluster_of(&test_input());
    assert_eq!(
        applied(&cluster, Holder::InfrastructureCluster),
        [
            "apiServerLoadBalancer",
            "clusterIdentityRefName",
            "disableAPIServerFloatingIP",
            "externalNetworkId",
            "newNetworkConfig",
        ]
    );
    assert_eq!(
        applied(&cluster, Holder::ControlPlane),
        [
            "addEmptyLists",
            "admissionControlList",
            "auditLog",
            "cloudProvider",
            "containerdConfig",
            "systemdProxyConfig",
            "imageRepository",
            "keystoneAuth",
            "openidConnect",
            "aptProxyConfig",
            "TLSCipherSuites",
            "etcdVolume",
            "dockerVolume",
            "etcdAndDockerVolumeForControlPlane",
        ]
    );
    assert_eq!(
        applied(&cluster, Holder::ControlPlaneMachines),
        [
            "addEmptyLists",
            "bootVolume",
            "clusterIdentityRefName",
            "flavors",
            "images",
            "serverGroupId",
            "schedulerHints",
            "sshKeyName",
            "etcdVolume",
            "dockerVolume",
        ]
    );
    // The gpu nodegroup has no boot volume and no image registry.
    assert_eq!(
        applied(&cluster, Holder::WorkerMachines(GPU)),
        [
            "addEmptyLists",
            "clusterIdentityRefName",
            "flavors",
            "images",
            "serverGroupId",
            "schedulerHints",
            "sshKeyName",
            "dockerVolume",
        ]
    );
    assert_eq!(
        applied(&cluster, Holder::WorkerBootstrap(GPU)),
        [
            "addEmptyLists",
            "containerdConfig",
            "systemdProxyConfig",
            "aptProxyConfig",
            "TLSCipherSuites",
            "dockerVolume",
        ]
    );
    // The default worker boots from a volume; the Go test did not patch
    // its templates.
    let machines = patched(&cluster, Holder::WorkerMachines(DEFAULT_WORKER));
    assert_eq!(
        machines.applied,
        [
            "addEmptyLists",
            "bootVolume",
            "clusterIdentityRefName",
            "flavors",
            "images",
            "serverGroupId",
            "schedulerHints",
            "sshKeyName",
            "dockerVolume",
        ]
    );
    let machines = &machines.template["spec"]["template"]["spec"];
    assert_eq!(machines["flavor"], "m1.medium");
    assert_eq!(
        machines["serverGroup"]["id"],
        crate::fixtures::SERVER_GROUP_WORKER_ID
    );
    assert_eq!(
        machines["rootVolume"],
        json!({ "type": "ssd", "sizeGiB": 40, "availabilityZone": { "from": "Name", "name": "nova" } })
    );
}

/// Go: TestPatchedTemplatesMatchCRDs ("flatcar, fixed network, no
/// volumes, no proxy").
#[test]
fn flatcar_fixed_network_no_volumes_no_proxy() {
    let mut input = test_input();
    input.state.template.cluster_distro = Some("flatcar".into());
    input.resolved.fixed_network_id = "77777777-7777-4777-8777-777777777777".into();
    input.resolved.fixed_subnet_id = "88888888-8888-4888-8888-888888888888".into();
    input.state.cluster.docker_volume_size = None;
    input.state.template.docker_volume_size = None;
    let labels = input.state.cluster.labels.as_mut().expect("labels");
    labels.remove("etcd_volume_size");
    labels.remove("boot_volume_size");
    labels.insert("control_plane_availability_zones".into(), "az1,az2".into());
    labels.insert("api_server_floating_ip".into(), "203.0.113.7".into());
    labels.insert("master_lb_floating_ip_enabled".into(), "true".into());
    input.state.template.http_proxy = None;
    let cluster = cluster_of(&input);

    let infrastructure = patched(&cluster, Holder::InfrastructureCluster);
    assert_eq!(
        infrastructure.applied,
        [
            "apiServerFloatingIP",
            "apiServerLoadBalancer",
            "clusterIdentityRefName",
            "controlPlaneAvailabilityZones",
            "externalNetworkId",
            "existingFixedNetworkIdConfig",
            "existingFixedSubnetIdConfig",
        ]
    );
    let infrastructure = &infrastructure.template["spec"]["template"]["spec"];
    assert_eq!(infrastructure["apiServerFloatingIP"], "203.0.113.7");
    // With a floating IP the field is left to CAPO's default.
    assert!(infrastructure.get("disableAPIServerFloatingIP").is_none());
    assert_eq!(
        infrastructure["controlPlaneAvailabilityZones"],
        json!(["az1", "az2"])
    );
    assert_eq!(
        infrastructure["network"],
        json!({ "id": "77777777-7777-4777-8777-777777777777" })
    );
    assert_eq!(
        infrastructure["subnets"],
        json!([{ "id": "88888888-8888-4888-8888-888888888888" }])
    );
    assert!(infrastructure.get("managedSubnets").is_none());

    let control_plane = patched(&cluster, Holder::ControlPlane);
    assert_eq!(
        control_plane.applied,
        [
            "admissionControlList",
            "auditLog",
            "cloudProvider",
            "containerdConfig",
            "imageRepository",
            "keystoneAuth",
            "openidConnect",
            "flatcar",
            "TLSCipherSuites",
        ]
    );
    let kcs = &control_plane.template["spec"]["template"]["spec"]["kubeadmConfigSpec"];
    assert_eq!(kcs["format"], "ignition");
    assert!(
        kcs["ignition"]["containerLinuxConfig"]["additionalConfig"]
            .as_str()
            .is_some_and(|c| !c.is_empty())
    );
    for configuration in ["initConfiguration", "joinConfiguration"] {
        assert_eq!(
            kcs[configuration]["nodeRegistration"]["name"],
            "__REPLACE_NODE_NAME__"
        );
    }
    assert_eq!(
        kcs["preKubeadmCommands"],
        json!([
            "rm -rf /var/lib/etcd/lost+found",
            "bash /run/kubeadm/configure-kube-proxy.sh",
            "systemctl daemon-reload && systemctl restart containerd",
            r#"sed -i "s/__REPLACE_NODE_NAME__/$(hostname -s)/g" /etc/kubeadm.yml"#,
        ])
    );
    let files: Vec<&str> = kcs["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| f["path"].as_str().expect("path"))
        .collect();
    assert_eq!(
        files,
        [
            "/etc/kubernetes/audit-policy/apiserver-audit-policy.yaml",
            "/etc/kubernetes/webhooks/webhookconfig.yaml",
            "/run/kubeadm/configure-kube-proxy.sh",
            "/etc/containerd/config.toml",
        ]
    );
    assert!(kcs.get("diskSetup").is_none() && kcs.get("mounts").is_none());

    let machines = patched(&cluster, Holder::ControlPlaneMachines);
    assert_eq!(
        machines.applied,
        [
            "clusterIdentityRefName",
            "flavors",
            "images",
            "serverGroupId",
            "schedulerHints",
            "sshKeyName",
        ]
    );
    let machines = &machines.template["spec"]["template"]["spec"];
    assert!(machines.get("rootVolume").is_none());
    assert!(machines.get("additionalBlockDevices").is_none());

    assert_eq!(
        applied(&cluster, Holder::WorkerMachines(GPU)),
        [
            "clusterIdentityRefName",
            "flavors",
            "images",
            "serverGroupId",
            "schedulerHints",
            "sshKeyName",
        ]
    );
    let bootstrap = patched(&cluster, Holder::WorkerBootstrap(GPU));
    assert_eq!(
        bootstrap.applied,
        ["containerdConfig", "flatcar", "TLSCipherSuites"]
    );
    let bootstrap = &bootstrap.template["spec"]["template"]["spec"];
    assert_eq!(bootstrap["format"], "ignition");
    assert_eq!(
        bootstrap["joinConfiguration"]["nodeRegistration"]["name"],
        "__REPLACE_NODE_NAME__"
    );
    assert_eq!(
        bootstrap["preKubeadmCommands"],
        json!([
            "systemctl daemon-reload",
            "systemctl restart containerd",
            r#"sed -i "s/__REPLACE_NODE_NAME__/$(hostname -s)/g" /etc/kubeadm.yml"#,
        ])
    );
}

/// Go: TestPatchedTemplatesMatchCRDs ("docker volume only"): containerd's
/// volume is the masters' second disk, and Kubernetes 1.33 has no
/// `cloud-provider` argument for the API server.
#[test]
fn docker_volume_only() {
    let mut input = test_input();
    let labels = input.state.cluster.labels.as_mut().expect("labels");
    labels.remove("etcd_volume_size");
    labels.insert("kube_tag".into(), "v1.33.2".into());
    let cluster = cluster_of(&input);

    let control_plane = patched(&cluster, Holder::ControlPlane);
    assert_eq!(
        control_plane.applied,
        [
            "addEmptyLists",
            "admissionControlList",
            "auditLog",
            "containerdConfig",
            "systemdProxyConfig",
            "imageRepository",
            "keystoneAuth",
            "openidConnect",
            "aptProxyConfig",
            "TLSCipherSuites",
            "dockerVolume",
            "onlyDockerVolumeForControlPlane",
        ]
    );
    let kcs = &control_plane.template["spec"]["template"]["spec"]["kubeadmConfigSpec"];
    assert_eq!(devices(&kcs["diskSetup"]["partitions"]), ["/dev/vdb"]);
    assert_eq!(kcs["diskSetup"]["filesystems"][0]["label"], "docker_disk");
    assert_eq!(
        kcs["mounts"],
        json!([["LABEL=docker_disk", "/var/lib/containerd"]])
    );
    let api_server_args = names(&kcs["clusterConfiguration"]["apiServer"]["extraArgs"]);
    assert!(!api_server_args.contains(&"cloud-provider"));

    let machines = spec(&cluster, Holder::ControlPlaneMachines);
    assert_eq!(names(&machines["additionalBlockDevices"]), ["docker"]);
}

// ---------------------------------------------- variations of variables

/// `cloudProvider` is enabled below Kubernetes 1.33 by semantic version
/// precedence (the Go evaluator compared strings, which would have put
/// 1.100 below 1.33), and a pre-release does not satisfy `<1.33.0`.
#[test]
fn cloud_provider_follows_the_kubernetes_version() {
    for (version, want) in [
        ("v1.31.1", true),
        ("v1.32.9", true),
        ("v1.33.0", false),
        ("v1.34.1", false),
        ("v1.100.0", false),
        ("v1.32.0-rc.1", false),
    ] {
        let mut cluster = cluster_of(&test_input());
        cluster["spec"]["topology"]["version"] = json!(version);
        let applied = applied(&cluster, Holder::ControlPlane);
        assert_eq!(
            applied.iter().any(|p| p == "cloudProvider"),
            want,
            "{version}"
        );
    }
}

/// The etcd and containerd volumes: which disk each gets on the masters
/// and the workers, for each combination of the two.
#[test]
fn volume_patches_follow_the_etcd_and_docker_volumes() {
    for (etcd, docker, control_plane_patches, partitions, blocks) in [
        (false, false, vec![], vec![], vec![]),
        (
            true,
            false,
            vec!["addEmptyLists", "etcdVolume"],
            vec!["/dev/vdb"],
            vec!["etcd"],
        ),
        (
            false,
            true,
            vec![
                "addEmptyLists",
                "dockerVolume",
                "onlyDockerVolumeForControlPlane",
            ],
            vec!["/dev/vdb"],
            vec!["docker"],
        ),
        (
            true,
            true,
            vec![
                "addEmptyLists",
                "etcdVolume",
                "dockerVolume",
                "etcdAndDockerVolumeForControlPlane",
            ],
            vec!["/dev/vdb", "/dev/vdc"],
            vec!["etcd", "docker"],
        ),
    ] {
        let case = format!("etcd {etcd}, docker {docker}");
        let mut cluster = cluster_of(&test_input());
        set_variable(&mut cluster, "enableEtcdVolume", json!(etcd));
        set_variable(&mut cluster, "enableDockerVolume", json!(docker));
        let volume_patches: Vec<String> = applied(&cluster, Holder::ControlPlane)
            .into_iter()
            .filter(|p| p == "addEmptyLists" || p.contains("Volume"))
            .collect();
        assert_eq!(volume_patches, control_plane_patches, "{case}");
        let kcs = &patched(&cluster, Holder::ControlPlane).template["spec"]["template"]["spec"]["kubeadmConfigSpec"];
        assert_eq!(
            devices(&kcs["diskSetup"]["partitions"]),
            partitions,
            "{case}"
        );
        assert_eq!(
            devices(&kcs["diskSetup"]["filesystems"]),
            partitions,
            "{case}"
        );
        let machines = spec(&cluster, Holder::ControlPlaneMachines);
        assert_eq!(names(&machines["additionalBlockDevices"]), blocks, "{case}");

        // The workers only ever get containerd's volume, as their second
        // disk, named by the image's disk bus (scsi for gpu).
        let workers = spec(&cluster, Holder::WorkerBootstrap(GPU));
        let want: Vec<&str> = if docker { vec!["/dev/sdb"] } else { vec![] };
        assert_eq!(devices(&workers["diskSetup"]["partitions"]), want, "{case}");
        let worker_machines = spec(&cluster, Holder::WorkerMachines(GPU));
        let want: Vec<&str> = if docker { vec!["docker"] } else { vec![] };
        assert_eq!(
            names(&worker_machines["additionalBlockDevices"]),
            want,
            "{case}"
        );
    }
}

/// apt's proxy goes only to the Debian family, and only with a proxy.
#[test]
fn apt_proxy_only_on_the_debian_family() {
    for (os, proxy, want) in [
        ("ubuntu", "QWNx", true),
        ("debian", "QWNx", true),
        ("flatcar", "QWNx", false),
        ("rockylinux", "QWNx", false),
        ("ubuntu", "", false),
    ] {
        let mut cluster = cluster_of(&test_input());
        set_variable(&mut cluster, "operatingSystem", json!(os));
        set_variable(&mut cluster, "aptProxyConfig", json!(proxy));
        for holder in [Holder::ControlPlane, Holder::WorkerBootstrap(GPU)] {
            let applied = applied(&cluster, holder);
            assert_eq!(
                applied.iter().any(|p| p == "aptProxyConfig"),
                want,
                "{os}, proxy {proxy:?}, {holder:?}"
            );
        }
    }
}

/// The machines boot from a volume when its size is above 0, in the boot
/// volume's zone when there is one.
#[test]
fn boot_volume_when_sized() {
    for (size, zone, want) in [
        (json!(0), "nova", None),
        (json!(30), "", Some(json!({ "type": "ssd", "sizeGiB": 30 }))),
        (
            json!(30),
            "az2",
            Some(
                json!({ "type": "ssd", "sizeGiB": 30, "availabilityZone": { "from": "Name", "name": "az2" } }),
            ),
        ),
    ] {
        let mut cluster = cluster_of(&test_input());
        set_variable(
            &mut cluster,
            "bootVolume",
            json!({ "type": "ssd", "size": size }),
        );
        set_variable(&mut cluster, "bootVolumeAvailabilityZone", json!(zone));
        let machines = spec(&cluster, Holder::ControlPlaneMachines);
        assert_eq!(
            machines.get("rootVolume"),
            want.as_ref(),
            "{size} in {zone:?}"
        );
    }
    // A MachineDeployment's own boot volume overrides the Cluster's.
    let mut cluster = cluster_of(&test_input());
    set_override(
        &mut cluster,
        GPU,
        "bootVolume",
        json!({ "type": "fast", "size": 100 }),
    );
    let machines = spec(&cluster, Holder::WorkerMachines(GPU));
    assert_eq!(machines["rootVolume"]["type"], "fast");
    assert_eq!(machines["rootVolume"]["sizeGiB"], 100);
}

/// The conditions on single variables: each patch is on exactly when its
/// variable is set (not empty, false or zero).
#[test]
fn patches_on_when_their_variable_is_set() {
    for (patch, holder, variable, off, on) in [
        (
            "admissionControlList",
            Holder::ControlPlane,
            "admissionControlList",
            json!(""),
            json!("NodeRestriction"),
        ),
        (
            "apiServerFloatingIP",
            Holder::InfrastructureCluster,
            "apiServerFloatingIP",
            json!(""),
            json!("203.0.113.7"),
        ),
        (
            "auditLog",
            Holder::ControlPlane,
            "auditLog",
            json!({ "enabled": false, "maxAge": "30", "maxBackup": "10", "maxSize": "100" }),
            json!({ "enabled": true, "maxAge": "30", "maxBackup": "10", "maxSize": "100" }),
        ),
        (
            "controlPlaneAvailabilityZones",
            Holder::InfrastructureCluster,
            "controlPlaneAvailabilityZones",
            json!([""]),
            json!(["az1"]),
        ),
        (
            "disableAPIServerFloatingIP",
            Holder::InfrastructureCluster,
            "disableAPIServerFloatingIPManaged",
            json!(false),
            json!(true),
        ),
        (
            "externalNetworkId",
            Holder::InfrastructureCluster,
            "externalNetworkId",
            json!(""),
            json!("net"),
        ),
        (
            "keystoneAuth",
            Holder::ControlPlane,
            "enableKeystoneAuth",
            json!(false),
            json!(true),
        ),
        (
            "openidConnect",
            Holder::ControlPlane,
            "openidConnect",
            json!({ "issuerUrl": "", "clientId": "", "usernameClaim": "sub", "usernamePrefix": "-", "groupsClaim": "", "groupsPrefix": "" }),
            json!({ "issuerUrl": "https://idp", "clientId": "k", "usernameClaim": "sub", "usernamePrefix": "-", "groupsClaim": "", "groupsPrefix": "" }),
        ),
        (
            "systemdProxyConfig",
            Holder::ControlPlane,
            "systemdProxyConfig",
            json!(""),
            json!("W1NlcnZpY2Vd"),
        ),
        (
            "serverGroupId",
            Holder::ControlPlaneMachines,
            "serverGroupId",
            json!(""),
            json!("44444444-4444-4444-8444-444444444444"),
        ),
        (
            "imageRepository",
            Holder::ControlPlane,
            "imageRepository",
            json!(""),
            json!("registry.example.com/k8s"),
        ),
    ] {
        for (value, want) in [(off, false), (on, true)] {
            let mut cluster = cluster_of(&test_input());
            set_variable(&mut cluster, variable, value.clone());
            let applied = applied(&cluster, holder);
            assert_eq!(
                applied.iter().any(|p| p == patch),
                want,
                "{patch} with {variable} = {value}"
            );
        }
    }
}

/// Without a fixed network CAPO creates the nodes' subnet; with one, the
/// network (and the subnet when given) are the template's.
#[test]
fn network_patches_follow_the_fixed_network() {
    for (network, subnet, want) in [
        ("", "", vec!["newNetworkConfig"]),
        ("net", "", vec!["existingFixedNetworkIdConfig"]),
        (
            "net",
            "sub",
            vec![
                "existingFixedNetworkIdConfig",
                "existingFixedSubnetIdConfig",
            ],
        ),
    ] {
        let mut cluster = cluster_of(&test_input());
        set_variable(&mut cluster, "fixedNetworkId", json!(network));
        set_variable(&mut cluster, "fixedSubnetId", json!(subnet));
        let applied: Vec<String> = applied(&cluster, Holder::InfrastructureCluster)
            .into_iter()
            .filter(|p| {
                [
                    "newNetworkConfig",
                    "existingFixedNetworkIdConfig",
                    "existingFixedSubnetIdConfig",
                ]
                .contains(&p.as_str())
            })
            .collect();
        assert_eq!(applied, want, "network {network:?}, subnet {subnet:?}");
    }
}

/// The Go test's check that no template goes unpatched, for the
/// representative cluster with both MachineDeployments (the scenarios
/// above list their patches per template).
#[test]
fn every_template_is_patched() {
    let cluster = cluster_of(&test_input());
    for holder in [
        Holder::InfrastructureCluster,
        Holder::ControlPlane,
        Holder::ControlPlaneMachines,
        Holder::WorkerMachines(GPU),
        Holder::WorkerBootstrap(GPU),
        Holder::WorkerMachines(DEFAULT_WORKER),
    ] {
        assert!(!applied(&cluster, holder).is_empty(), "{holder:?}");
    }
}

/// Every `enabledIf` and value template of the class is within the
/// evaluator's Go-template subset, whether or not a scenario renders it.
#[test]
fn every_class_template_is_in_the_evaluated_subset() {
    use crate::patch_eval::parse_template;
    let objects = class_objects(NAMESPACE, CLASS_VERSION);
    let class = objects
        .iter()
        .find(|o| o["kind"] == "ClusterClass")
        .expect("class");
    let mut count = 0;
    for p in class["spec"]["patches"].as_array().expect("patches") {
        let mut texts: Vec<&str> = p["enabledIf"].as_str().into_iter().collect();
        for d in p["definitions"].as_array().expect("definitions") {
            for op in d["jsonPatches"].as_array().expect("jsonPatches") {
                texts.extend(op["valueFrom"]["template"].as_str());
            }
        }
        for text in texts {
            count += 1;
            if let Err(e) = parse_template(text) {
                panic!("patch {}: {e}: {text:?}", p["name"]);
            }
        }
    }
    assert!(count > 50, "only {count} templates found");
}

/// `api_master_lb_allowed_cidrs`: the patched OpenStackClusterTemplate's
/// load balancer gets the CIDRs (CAPO v0.14's `allowedCIDRs`, a list of
/// strings beside `enabled`); without the label, or without a load
/// balancer, the patch is off and the load balancer is the golden's.
#[test]
fn allowed_cidrs_reach_the_api_load_balancer() {
    let mut input = test_input();
    input.state.cluster.set_label(
        "api_master_lb_allowed_cidrs",
        "192.0.2.0/24, 10.1.0.0/16;198.51.100.7",
    );
    let cluster = cluster_of(&input);
    assert!(
        applied(&cluster, Holder::InfrastructureCluster)
            .contains(&"apiServerLoadBalancerAllowedCIDRs".to_string())
    );
    assert_eq!(
        spec(&cluster, Holder::InfrastructureCluster)["apiServerLoadBalancer"],
        json!({
            "enabled": true,
            "allowedCIDRs": ["192.0.2.0/24", "10.1.0.0/16", "198.51.100.7/32"],
        })
    );

    input.state.cluster.master_lb_enabled = Some(false);
    input.state.template.master_lb_enabled = Some(false);
    let no_lb = cluster_of(&input);
    assert!(
        !applied(&no_lb, Holder::InfrastructureCluster)
            .contains(&"apiServerLoadBalancerAllowedCIDRs".to_string())
    );
    assert_eq!(
        spec(&no_lb, Holder::InfrastructureCluster)["apiServerLoadBalancer"],
        json!({ "enabled": false })
    );
}

// ------------------------------------------------ defects of the Go class

/// The Go class's `imageRepository` patch added
/// `clusterConfiguration/imageRepository` to the workers'
/// KubeadmConfigTemplate, which has no `clusterConfiguration`, so Cluster
/// API's JSON patch failed ("missing path") for every MachineDeployment
/// whose `imageRepository` is set, the default worker of any cluster with
/// `container_infra_prefix` (the Go test only patched the `gpu`
/// MachineDeployment, whose override is empty).
#[test]
fn default_worker_bootstrap_is_patched() {
    let cluster = cluster_of(&test_input());
    patched(&cluster, Holder::WorkerBootstrap(DEFAULT_WORKER));
}

/// The Go driver spliced `apiServerSANs` into the certificate SANs as
/// YAML list items without quoting, so a wildcard SAN (`*.example.com`)
/// read as a YAML alias and the `TLSCipherSuites` patch failed to render.
#[test]
fn a_wildcard_san_is_a_certificate_name() {
    let mut input = test_input();
    input
        .state
        .cluster
        .set_label("api_server_cert_sans", "*.example.com");
    let cluster = cluster_of(&input);
    let kcs = &patched(&cluster, Holder::ControlPlane).template["spec"]["template"]["spec"]["kubeadmConfigSpec"];
    assert_eq!(
        kcs["clusterConfiguration"]["apiServer"]["certSANs"][4],
        "*.example.com"
    );
}
