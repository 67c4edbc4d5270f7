//! Every case of the Go driver's `addons_test.go` (its driver-level
//! `TestCreateClusterAddons` as the pure builders' part of it), and the
//! checks of every label that reaches a manifest.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD as BASE64;
use openkeel_magnum_driver::{DriverError, Labels};
use serde_json::{Value, json};

use super::*;
use crate::fixtures::{STACK_ID, UUID, test_state};
use crate::names::NAMESPACE;

/// Cinder with its `__DEFAULT__` type, a default type whose name needs
/// rewriting and another type.
fn test_volume_types() -> Vec<VolumeType> {
    vec![
        VolumeType {
            name: "__DEFAULT__".into(),
            is_default: false,
        },
        VolumeType {
            name: "SSD_fast".into(),
            is_default: true,
        },
        VolumeType {
            name: "standard".into(),
            is_default: false,
        },
    ]
}

/// Manila with its default type, a type that handles share servers and
/// one that does not say, whose name needs rewriting.
fn test_share_types() -> Vec<ShareType> {
    let st = |name: &str, is_default: bool, dhss: Option<bool>| ShareType {
        id: format!("id-{name}"),
        name: name.into(),
        is_default,
        driver_handles_share_servers: dhss,
    };
    vec![
        st("default", true, Some(false)),
        st("with_servers", false, Some(true)),
        st("Gold Tier", false, None),
    ]
}

/// Go: testAddonInput, the representative cluster with Keystone in
/// RegionOne, an OpenStack CA for the workload cluster and a credential
/// whose secret needs quoting in `cloud.conf`.
fn test_addon_input() -> AddonInput {
    AddonInput {
        namespace: NAMESPACE.into(),
        stack_id: STACK_ID.into(),
        cluster_uuid: UUID.into(),
        project_id: "p1".into(),
        labels: test_state().cluster.labels().clone(),
        cloud: CloudInfo {
            keystone_url: "https://keystone.example.com/v3".into(),
            region: Some("RegionOne".into()),
            endpoint_interface: "public".into(),
            ca_bundle: None,
            verify: true,
            cluster_ca_bundle: Some("-----OPENSTACK CA-----\n".into()),
            cluster_verify_ca: true,
        },
        credential: AppCredential {
            id: "ac-1".into(),
            secret: "s3cr;et".into(),
            ..AppCredential::default()
        },
        keystone_auth_policy: None,
        volume_types: Some(test_volume_types()),
        share_types: Some(test_share_types()),
    }
}

/// The calico manifest of [`test_addon_input`].
fn test_cni(input: &AddonInput) -> CniManifest {
    cni_manifest("calico", &input.labels, None).unwrap()
}

/// The objects of a stream, read as a YAML reader (the ClusterResourceSet
/// controller's) reads it; each must be a Kubernetes object with a name,
/// and the stream must not be empty or hold an empty document.
fn stream(key: &str, text: &str) -> Vec<Value> {
    assert!(!text.trim().is_empty(), "{key} is empty");
    for document in text.split("---\n") {
        assert!(!document.trim().is_empty(), "{key} has an empty document");
    }
    let objects: Vec<Value> =
        serde_saphyr::from_multiple(text).unwrap_or_else(|e| panic!("{key}: {e}"));
    for (i, o) in objects.iter().enumerate() {
        let named = ["apiVersion", "kind"]
            .iter()
            .all(|k| o[k].as_str().is_some_and(|s| !s.is_empty()))
            && o["metadata"]["name"]
                .as_str()
                .is_some_and(|s| !s.is_empty());
        assert!(
            named,
            "{key} document {} is not a Kubernetes object: {o}",
            i + 1
        );
    }
    objects
}

/// The text of a Secret's data key.
fn data(secret: &Value, key: &str) -> String {
    let raw = secret["data"][key]
        .as_str()
        .unwrap_or_else(|| panic!("no data key {key}"));
    String::from_utf8(BASE64.decode(raw).expect("base64")).expect("UTF-8")
}

/// The objects of a Secret's data key.
fn objects(secret: &Value, key: &str) -> Vec<Value> {
    stream(key, &data(secret, key))
}

/// The sorted keys of a Secret's data.
fn keys(secret: &Value) -> Vec<String> {
    secret["data"]
        .as_object()
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

/// `<kind>/<name>` of an object.
fn kind_name_of(o: &Value) -> String {
    format!(
        "{}/{}",
        o["kind"].as_str().unwrap_or(""),
        o["metadata"]["name"].as_str().unwrap_or("")
    )
}

/// The object `<kind>/<name>` of `objs`.
fn find<'a>(objs: &'a [Value], kind_and_name: &str) -> &'a Value {
    objs.iter()
        .find(|o| kind_name_of(o) == kind_and_name)
        .unwrap_or_else(|| panic!("no {kind_and_name}"))
}

/// The containers and init containers of a workload.
fn containers(o: &Value) -> Vec<&Value> {
    let pod = match o["kind"].as_str() {
        Some("Pod") => &o["spec"],
        Some("CronJob") => &o["spec"]["jobTemplate"]["spec"]["template"]["spec"],
        _ => &o["spec"]["template"]["spec"],
    };
    ["initContainers", "containers"]
        .iter()
        .filter_map(|k| pod[k].as_array())
        .flatten()
        .collect()
}

/// The container `name` of a workload.
fn container<'a>(o: &'a Value, name: &str) -> &'a Value {
    containers(o)
        .into_iter()
        .find(|c| c["name"] == name)
        .unwrap_or_else(|| panic!("{} has no container {name}", kind_name_of(o)))
}

/// The value of a container's environment variable, "" when unset.
fn env_value<'a>(c: &'a Value, name: &str) -> &'a str {
    c["env"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["name"] == name)
        .and_then(|e| e["value"].as_str())
        .unwrap_or("")
}

/// The sorted, deduplicated images of `objs`.
fn images(objs: &[Value]) -> Vec<String> {
    let mut out: Vec<String> = objs
        .iter()
        .flat_map(containers)
        .filter_map(|c| c["image"].as_str().map(str::to_string))
        .collect();
    out.sort();
    out.dedup();
    out
}

/// The client error of `result`: status, kind and message.
fn client_error<T: std::fmt::Debug>(result: Result<T, DriverError>) -> (u16, String, String) {
    match result {
        Err(DriverError::Client(m)) => (m.status, m.kind, m.message),
        other => panic!("not a client error: {other:?}"),
    }
}

/// Go: TestClusterResourceSets.
#[test]
fn cluster_resource_sets_select_the_cluster_by_uuid() {
    let sets = cluster_resource_sets(NAMESPACE, STACK_ID, UUID);
    let want = [
        (UUID.to_string(), None),
        (format!("{STACK_ID}-cloud-provider"), Some("Reconcile")),
    ];
    assert_eq!(sets.len(), want.len());
    for (set, (name, strategy)) in sets.iter().zip(want) {
        let mut expected = json!({
            "apiVersion": "addons.cluster.x-k8s.io/v1beta2",
            "kind": "ClusterResourceSet",
            "metadata": { "name": name, "namespace": NAMESPACE },
            "spec": {
                "clusterSelector": { "matchLabels": { "cluster-uuid": UUID } },
                "resources": [{ "kind": "Secret", "name": name }],
            },
        });
        if let Some(strategy) = strategy {
            expected["spec"]["strategy"] = json!(strategy);
        }
        assert_eq!(*set, expected);
    }
}

/// Go: TestCNIManifest "embedded calico takes calico_tag, the pool and
/// the mirror".
#[test]
fn embedded_calico_takes_its_tag_pool_and_mirror() {
    let labels = Labels::from([
        ("calico_tag", "v3.31.3"),
        ("calico_ipv4pool", "10.200.0.0/16"),
        ("container_infra_prefix", "registry.example.com/k8s"),
    ]);
    assert_eq!(
        cni_manifest_file("calico", &labels).unwrap(),
        "calico/v3.31.3.yaml"
    );
    let cni = cni_manifest("calico", &labels, None).unwrap();
    assert_eq!(cni.key, KEY_CALICO);
    let objs = stream(cni.key, &cni.text);
    assert_eq!(
        images(&objs),
        [
            "registry.example.com/k8s/calico/cni:v3.31.3",
            "registry.example.com/k8s/calico/kube-controllers:v3.31.3",
            "registry.example.com/k8s/calico/node:v3.31.3",
        ]
    );
    let node = container(find(&objs, "DaemonSet/calico-node"), "calico-node");
    assert_eq!(env_value(node, "CALICO_IPV4POOL_CIDR"), "10.200.0.0/16");
    find(
        &objs,
        "CustomResourceDefinition/ippools.crd.projectcalico.org",
    );
}

/// Go: TestCNIManifest "defaults: 10.100.0.0/16 and upstream images".
#[test]
fn calico_defaults() {
    let cni = cni_manifest("calico", &Labels::new(), None).unwrap();
    let objs = stream(cni.key, &cni.text);
    let node = container(find(&objs, "DaemonSet/calico-node"), "calico-node");
    assert_eq!(env_value(node, "CALICO_IPV4POOL_CIDR"), "10.100.0.0/16");
    let want = format!("docker.io/calico/node:{DEFAULT_CALICO_TAG}");
    assert!(images(&objs).contains(&want), "{:?}", images(&objs));
}

/// The operator's manifests of the Go test's directory.
const OPERATOR_CALICO: &str = "apiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: calico-node, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n      - name: calico-node\n        image: docker.io/calico/node:v3.99.0\n---\n";
const OPERATOR_CILIUM: &str = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: cilium-config, namespace: kube-system}\ndata: {cluster-pool-ipv4-cidr: 10.0.0.0/8}\n---\n---\napiVersion: apps/v1\nkind: DaemonSet\nmetadata: {name: cilium, namespace: kube-system}\nspec:\n  template:\n    spec:\n      containers:\n      - name: cilium-agent\n        image: quay.io/cilium/cilium:v1.16.1\n      initContainers:\n      - name: init\n        image: quay.io/cilium/operator-generic:v1.16.1\n";

/// Go: TestCNIManifest "an operator calico manifest wins".
#[test]
fn an_operator_calico_manifest_wins() {
    let labels = Labels::from([("calico_tag", "v3.99.0")]);
    assert_eq!(
        cni_manifest_file("calico", &labels).unwrap(),
        "calico/v3.99.0.yaml"
    );
    let cni = cni_manifest("calico", &labels, Some(OPERATOR_CALICO)).unwrap();
    let objs = stream(cni.key, &cni.text);
    assert_eq!(objs.len(), 1);
    let node = container(&objs[0], "calico-node");
    assert_eq!(env_value(node, "CALICO_IPV4POOL_CIDR"), "10.100.0.0/16");
    assert_eq!(node["image"], "docker.io/calico/node:v3.99.0");
}

/// Go: TestCNIManifest "cilium from the manifests directory".
#[test]
fn cilium_from_the_operator_manifest() {
    let labels = Labels::from([
        ("cilium_tag", "v1.16.1"),
        ("cilium_ipv4pool", "10.77.0.0/16"),
        ("container_infra_prefix", "mirror"),
    ]);
    assert_eq!(
        cni_manifest_file("cilium", &labels).unwrap(),
        "cilium/v1.16.1.yaml"
    );
    let cni = cni_manifest("cilium", &labels, Some(OPERATOR_CILIUM)).unwrap();
    assert_eq!(cni.key, KEY_CILIUM);
    let objs = stream(cni.key, &cni.text);
    assert_eq!(
        images(&objs),
        [
            "mirror/cilium-operator-generic:v1.16.1",
            "mirror/cilium:v1.16.1"
        ]
    );
    assert_eq!(
        find(&objs, "ConfigMap/cilium-config")["data"]["cluster-pool-ipv4-cidr"],
        "10.77.0.0/16"
    );
    // Without the key, the operator's ConfigMap is left as it is.
    let without = OPERATOR_CILIUM.replace("cluster-pool-ipv4-cidr: 10.0.0.0/8", "ipam: kubernetes");
    let cni = cni_manifest("cilium", &labels, Some(&without)).unwrap();
    let objs = stream(cni.key, &cni.text);
    assert_eq!(
        find(&objs, "ConfigMap/cilium-config")["data"],
        json!({ "ipam": "kubernetes" })
    );
}

/// Go: TestCNIManifest "… fails with a clear reason", and
/// TestCreateClusterAddons "a cilium cluster without a manifest fails
/// before writing".
#[test]
fn cilium_without_its_manifest_fails_with_a_clear_reason() {
    for (name, labels, manifest) in [
        ("cilium without a manifests directory", Labels::new(), None),
        (
            "cilium tag without a manifest",
            Labels::from([("cilium_tag", "v1.15.3")]),
            None,
        ),
        (
            "a tag that is a path",
            Labels::from([("cilium_tag", "../calico/v3.99.0")]),
            Some(OPERATOR_CALICO),
        ),
    ] {
        let (status, _, msg) = client_error(cni_manifest("cilium", &labels, manifest));
        assert!(
            status == 400 && msg.contains("cilium"),
            "{name}: {status} {msg}"
        );
    }
    let (_, kind, msg) = client_error(cni_manifest("cilium", &Labels::new(), None));
    assert_eq!(kind, "Invalid");
    assert_eq!(
        msg,
        "No cilium manifest for cilium_tag v1.15.3: the operator must place cilium/v1.15.3.yaml in [capi]/addons_manifests_dir."
    );
    let (status, _, msg) = client_error(cni_manifest_file(
        "cilium",
        &Labels::from([("cilium_tag", "../calico/v3.99.0")]),
    ));
    assert_eq!(status, 400);
    assert_eq!(
        msg,
        "Label cilium_tag has an invalid value \"../calico/v3.99.0\": expected an image tag."
    );
}

#[test]
fn an_unsupported_network_driver_is_refused() {
    type Check = fn(&Labels) -> Result<(), DriverError>;
    let checks: [Check; 3] = [
        |l| cni_manifest_file("flannel", l).map(drop),
        |l| cni_manifest("flannel", l, None).map(drop),
        |l| validate_labels("flannel", l),
    ];
    for f in checks {
        let (status, kind, msg) = client_error(f(&Labels::new()));
        assert_eq!((status, kind.as_str()), (400, "InvalidParameterValue"));
        assert_eq!(
            msg,
            "Network driver type flannel is not supported, expecting a calico/cilium/unspecified network driver."
        );
    }
}

#[test]
fn a_malformed_operator_manifest_fails_the_operation() {
    let labels = Labels::from([("cilium_tag", "v1.16.1")]);
    for text in ["a: [\n", "- not an object\n", "kind: ConfigMap\n"] {
        match cni_manifest("cilium", &labels, Some(text)) {
            Err(DriverError::Failed(reason)) => {
                assert!(
                    reason.starts_with("The add-on manifest cilium/v1.16.1.yaml is not valid: "),
                    "{reason}"
                );
            }
            other => panic!("{text:?}: {other:?}"),
        }
    }
}

/// Go: TestCloudConf.
#[test]
fn cloud_conf_of_the_representative_cluster() {
    let got = cloud_conf(&test_addon_input()).unwrap();
    let want = concat!(
        "[Global]\nauth-url=https://keystone.example.com/v3\nregion=RegionOne\napplication-credential-id=ac-1\n",
        "application-credential-secret=\"s3cr;et\"\ntls-insecure=false\nca-file=/etc/config/ca.crt\n\n",
        "[LoadBalancer]\nlb-provider=amphorav2\nlb-method=ROUND_ROBIN\ncreate-monitor=true\n",
    );
    assert_eq!(got, want);
}

/// Go: TestCloudConf "ovn defaults to SOURCE_IP_PORT and refuses other
/// methods".
#[test]
fn ovn_defaults_to_source_ip_port_and_refuses_other_methods() {
    let mut input = test_addon_input();
    input.labels = Labels::from([
        ("octavia_provider", "ovn"),
        ("octavia_lb_healthcheck", "false"),
    ]);
    input.cloud.cluster_verify_ca = false;
    input.cloud.cluster_ca_bundle = None;
    let got = cloud_conf(&input).unwrap();
    for line in [
        "lb-provider=ovn\n",
        "lb-method=SOURCE_IP_PORT\n",
        "create-monitor=false\n",
        "tls-insecure=true\n",
    ] {
        assert!(got.contains(line), "cloud.conf lacks {line:?}:\n{got}");
    }
    assert!(!got.contains("ca-file"), "ca-file without a CA:\n{got}");
    input
        .labels
        .insert("octavia_lb_algorithm".into(), "ROUND_ROBIN".into());
    let (status, _, msg) = client_error(cloud_conf(&input));
    assert_eq!(status, 400);
    assert_eq!(
        msg,
        "Label octavia_lb_algorithm \"ROUND_ROBIN\" is not supported by the ovn Octavia provider, which only supports SOURCE_IP_PORT."
    );
}

#[test]
fn cloud_conf_follows_the_cloud_and_quotes_what_gcfg_would_cut() {
    let mut input = test_addon_input();
    input.cloud.region = None;
    input.credential.secret = " a\"b\\c\nd#".into();
    input.labels = Labels::from([
        ("octavia_lb_algorithm", "LEAST_CONNECTIONS"),
        ("octavia_provider", ""),
    ]);
    let got = cloud_conf(&input).unwrap();
    assert!(!got.contains("region="), "{got}");
    assert!(
        got.contains("\napplication-credential-secret=\" a\\\"b\\\\c\\nd#\"\n"),
        "{got}"
    );
    assert!(
        got.contains("\nlb-provider=amphorav2\nlb-method=LEAST_CONNECTIONS\n"),
        "{got}"
    );
}

/// Go: TestAddonSecrets "names, type and keys".
#[test]
fn addon_secrets_names_type_and_keys() {
    let input = test_addon_input();
    let apply = cluster_addons_secret(&input, &test_cni(&input)).unwrap();
    let provider = cloud_provider_secret(&input).unwrap();
    for (secret, name, want) in [
        (
            &apply,
            UUID.to_string(),
            vec![
                "calico.yml",
                "cloud-config-secret.yaml",
                "keystone-auth.yaml",
            ],
        ),
        (
            &provider,
            format!("{STACK_ID}-cloud-provider"),
            vec![
                "cinder-csi.yaml",
                "cloud-config-secret.yaml",
                "cloud-controller-manager.yaml",
                "csi-nfs.yaml",
                "manila-csi-secret.yaml",
                "manila-csi.yaml",
                "storageclass-block-ssd-fast.yaml",
                "storageclass-block-standard.yaml",
                "storageclass-share-default.yaml",
                "storageclass-share-gold-tier.yaml",
            ],
        ),
    ] {
        assert_eq!(
            (&secret["apiVersion"], &secret["kind"], &secret["type"]),
            (
                &json!("v1"),
                &json!("Secret"),
                &json!("addons.cluster.x-k8s.io/resource-set")
            )
        );
        assert_eq!(
            secret["metadata"],
            json!({ "name": name, "namespace": NAMESPACE })
        );
        assert_eq!(keys(secret), want);
        for key in keys(secret) {
            objects(secret, &key);
        }
    }
}

/// Go: TestAddonSecrets "the workload cloud-config Secret".
#[test]
fn the_workload_cloud_config_secret() {
    let input = test_addon_input();
    let apply = cluster_addons_secret(&input, &test_cni(&input)).unwrap();
    let provider = cloud_provider_secret(&input).unwrap();
    let objs = objects(&provider, KEY_CLOUD_CONFIG);
    let s = find(&objs, "Secret/cloud-config");
    assert_eq!(s["metadata"]["namespace"], "kube-system");
    assert_eq!(s["type"], "Opaque");
    assert_eq!(
        s["stringData"],
        json!({ "cloud.conf": cloud_conf(&input).unwrap(), "ca.crt": "-----OPENSTACK CA-----\n" })
    );
    assert_eq!(
        data(&apply, KEY_CLOUD_CONFIG),
        data(&provider, KEY_CLOUD_CONFIG),
        "the two sets carry different cloud-config Secrets"
    );
    // Without a cluster CA bundle there is no ca.crt.
    let mut bare = test_addon_input();
    bare.cloud.cluster_ca_bundle = None;
    let objs = objects(&cloud_provider_secret(&bare).unwrap(), KEY_CLOUD_CONFIG);
    assert!(objs[0]["stringData"].get("ca.crt").is_none());
}

/// Go: TestAddonSecrets "cloud controller manager: cluster name, tag by
/// kube minor, mirror".
#[test]
fn cloud_controller_manager_cluster_name_tag_and_mirror() {
    let provider = cloud_provider_secret(&test_addon_input()).unwrap();
    let objs = objects(&provider, KEY_CLOUD_CONTROLLER_MANAGER);
    let ds = find(&objs, "DaemonSet/openstack-cloud-controller-manager");
    let c = container(ds, "openstack-cloud-controller-manager");
    let args = c["args"].as_array().expect("args");
    assert!(
        args.contains(&json!(format!("--cluster-name={UUID}"))),
        "{args:?}"
    );
    assert_eq!(env_value(c, "CLUSTER_NAME"), UUID);
    assert_eq!(
        c["image"],
        "registry.example.com/k8s/openstack-cloud-controller-manager:v1.31.0"
    );
    // The List of role bindings was flattened.
    find(&objs, "ClusterRoleBinding/system:cloud-controller-manager");
    assert!(objs.iter().all(|o| o["kind"] != "List"));
}

/// Go: TestAddonSecrets "cinder CSI: cluster ID, images".
#[test]
fn cinder_csi_cluster_id_and_images() {
    let provider = cloud_provider_secret(&test_addon_input()).unwrap();
    let objs = objects(&provider, KEY_CINDER_CSI);
    let controller = find(&objs, "Deployment/csi-cinder-controllerplugin");
    assert_eq!(
        env_value(container(controller, "cinder-csi-plugin"), "CLUSTER_NAME"),
        UUID
    );
    assert_eq!(
        images(&objs),
        [
            "registry.example.com/k8s/cinder-csi-plugin:v1.31.0",
            "registry.example.com/k8s/csi-attacher:v4.10.0",
            "registry.example.com/k8s/csi-livenessprobe:v2.17.0",
            "registry.example.com/k8s/csi-node-driver-registrar:v2.15.0",
            "registry.example.com/k8s/csi-provisioner:v5.3.0",
            "registry.example.com/k8s/csi-resizer:v1.14.0",
            "registry.example.com/k8s/csi-snapshotter:v8.4.0",
        ]
    );
    find(&objs, "CSIDriver/cinder.csi.openstack.org");
}

/// Go: TestAddonSecrets "storage classes".
#[test]
fn storage_classes_of_the_volume_types() {
    let provider = cloud_provider_secret(&test_addon_input()).unwrap();
    let ssd = objects(&provider, "storageclass-block-ssd-fast.yaml");
    assert_eq!(
        ssd,
        [json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": {
                "name": "block-ssd-fast",
                "annotations": { "storageclass.kubernetes.io/is-default-class": "true" },
            },
            "provisioner": "cinder.csi.openstack.org",
            "parameters": { "type": "SSD_fast" },
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate",
            "allowVolumeExpansion": true,
        })]
    );
    let standard = objects(&provider, "storageclass-block-standard.yaml");
    assert!(
        standard[0]["metadata"].get("annotations").is_none(),
        "standard is annotated as default: {}",
        standard[0]
    );
}

#[test]
fn one_class_per_name_and_one_default() {
    let vt = |name: &str, is_default: bool| VolumeType {
        name: name.into(),
        is_default,
    };
    let classes = storage_classes(&[
        vt("Fast SSD", false),
        vt("fast_ssd", true),
        vt("fast-ssd", false),
        vt("gold", true),
        vt("***", false),
        vt("__DEFAULT__", true),
        vt(&"a".repeat(49), false),
        vt(&format!("{}-b", "a".repeat(49)), false),
        vt("a: {b}\n- c", false),
    ]);
    let names: Vec<&str> = classes.keys().map(String::as_str).collect();
    let long = "a".repeat(49);
    assert_eq!(names, ["a-b---c", long.as_str(), "fast-ssd", "gold"]);
    // Cinder's default wins its name; only the first default is marked.
    assert_eq!(classes["fast-ssd"]["parameters"]["type"], "fast_ssd");
    let marked: Vec<&str> = classes
        .iter()
        .filter(|(_, c)| c["metadata"].get("annotations").is_some())
        .map(|(n, _)| n.as_str())
        .collect();
    assert_eq!(marked, ["fast-ssd"]);
    // A type's name reaches the class only as data.
    assert_eq!(classes["a-b---c"]["parameters"]["type"], "a: {b}\n- c");
}

#[test]
fn volume_type_names_become_dns_labels() {
    for (name, want) in [
        ("SSD_fast", "ssd-fast"),
        ("__DEFAULT__", "default"),
        ("a-_b", "a--b"),
        ("-x-", "x"),
        ("ÄBC", "bc"),
        ("***", ""),
    ] {
        assert_eq!(dns_label(name), want, "{name}");
    }
    let cut = dns_label(&format!("{}-tail", "a".repeat(49)));
    assert_eq!(
        cut,
        "a".repeat(49),
        "cut to 50 characters, without a trailing dash"
    );
}

/// Go: TestAddonSecrets "keystone auth: URL, policy, image".
#[test]
fn keystone_auth_url_policy_and_image() {
    let input = test_addon_input();
    let apply = cluster_addons_secret(&input, &test_cni(&input)).unwrap();
    let objs = objects(&apply, KEY_KEYSTONE_AUTH);
    let c = container(
        find(&objs, "DaemonSet/k8s-keystone-auth"),
        "k8s-keystone-auth",
    );
    let args: Vec<&str> = c["args"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let i = args
        .iter()
        .position(|a| *a == "--keystone-url")
        .expect("--keystone-url");
    assert_eq!(args[i + 1], "https://keystone.example.com/v3");
    assert!(args.contains(&"--keystone-ca-file"), "{args:?}");
    assert_eq!(
        c["image"],
        "registry.example.com/k8s/k8s-keystone-auth:v1.31.0"
    );
    let policy = find(&objs, "ConfigMap/k8s-auth-policy")["data"]["policies"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        policy.contains(r#""values":["p1"]"#) && policy.contains(r#""member""#),
        "{policy}"
    );
    for k in [
        "ServiceAccount/k8s-keystone",
        "ClusterRole/k8s-keystone-auth",
        "ClusterRoleBinding/k8s-keystone-auth",
    ] {
        find(&objs, k);
    }
}

#[test]
fn keystone_auth_finds_v3_and_the_ca_only_when_there_is_one() {
    for url in [
        "https://keystone.example.com",
        "https://keystone.example.com/",
        "https://keystone.example.com/v3/",
    ] {
        let mut input = test_addon_input();
        input.cloud.keystone_url = url.into();
        input.cloud.cluster_ca_bundle = None;
        let ka = keystone_auth_manifest(&input).unwrap();
        let objs = stream(KEY_KEYSTONE_AUTH, &ka);
        let ds = find(&objs, "DaemonSet/k8s-keystone-auth");
        let c = container(ds, "k8s-keystone-auth");
        let args = c["args"].as_array().unwrap();
        assert!(
            args.contains(&json!("https://keystone.example.com/v3")),
            "{url}: {args:?}"
        );
        assert!(!args.contains(&json!("--keystone-ca-file")), "{args:?}");
        assert_eq!(c["volumeMounts"].as_array().map(Vec::len), Some(1));
        assert_eq!(
            ds["spec"]["template"]["spec"]["volumes"]
                .as_array()
                .map(Vec::len),
            Some(1)
        );
    }
}

/// Go: TestAddonSecrets "labels turn add-ons off and pick tags".
#[test]
fn labels_turn_add_ons_off_and_pick_tags() {
    let mut input = test_addon_input();
    let cni = test_cni(&input);
    input.labels = Labels::from([
        ("kube_tag", "v1.30.2"),
        ("keystone_auth_enabled", "false"),
        ("cloud_provider_tag", "v1.30.9"),
        ("cinder_csi_plugin_tag", "v1.29.0"),
        ("csi_attacher_tag", "v4.7.0"),
    ]);
    input.keystone_auth_policy =
        Some(r#"[{"match":[{"type":"project","values":["$PROJECT_ID"]}]}]"#.into());
    input.volume_types = None;
    input.share_types = None;
    let apply = cluster_addons_secret(&input, &cni).unwrap();
    assert_eq!(keys(&apply), ["calico.yml", "cloud-config-secret.yaml"]);
    let provider = cloud_provider_secret(&input).unwrap();
    assert_eq!(
        keys(&provider),
        ["cloud-config-secret.yaml", "cloud-controller-manager.yaml"]
    );
    assert_eq!(
        images(&objects(&provider, KEY_CLOUD_CONTROLLER_MANAGER)),
        ["registry.k8s.io/provider-os/openstack-cloud-controller-manager:v1.30.9"]
    );
    let csi = cinder_csi_manifest(&input).unwrap();
    let got = images(&stream(KEY_CINDER_CSI, &csi));
    for want in [
        "registry.k8s.io/provider-os/cinder-csi-plugin:v1.29.0",
        "registry.k8s.io/sig-storage/csi-attacher:v4.7.0",
    ] {
        assert!(got.iter().any(|i| i == want), "CSI images {got:?}");
    }
    input
        .labels
        .insert("keystone_auth_enabled".into(), "true".into());
    let ka = keystone_auth_manifest(&input).unwrap();
    let objs = stream(KEY_KEYSTONE_AUTH, &ka);
    assert_eq!(
        find(&objs, "ConfigMap/k8s-auth-policy")["data"]["policies"],
        r#"[{"match":[{"type":"project","values":["p1"]}]}]"#
    );
}

#[test]
fn cinder_csi_needs_the_label_and_the_service() {
    let mut input = test_addon_input();
    input.share_types = None;
    input
        .labels
        .insert("cinder_csi_enabled".into(), "false".into());
    let provider = cloud_provider_secret(&input).unwrap();
    assert_eq!(
        keys(&provider),
        ["cloud-config-secret.yaml", "cloud-controller-manager.yaml"]
    );
    input
        .labels
        .insert("cinder_csi_enabled".into(), "true".into());
    input.volume_types = Some(Vec::new());
    assert_eq!(
        keys(&cloud_provider_secret(&input).unwrap()),
        [
            "cinder-csi.yaml",
            "cloud-config-secret.yaml",
            "cloud-controller-manager.yaml"
        ]
    );
    assert_eq!(cinder_csi_enabled(&Labels::new()), Ok(true));
}

#[test]
fn the_keystone_auth_policy_is_json_with_the_project() {
    let default = keystone_auth_policy(Some("  \n"), "p1").unwrap();
    assert_eq!(default, keystone_auth_policy(None, "p1").unwrap());
    assert_eq!(
        serde_json::from_str::<Value>(&default).unwrap(),
        json!([{
            "resource": {
                "verbs": ["list"], "resources": ["pods", "services", "deployments", "pvc"],
                "version": "*", "namespace": "default",
            },
            "match": [
                { "type": "role", "values": ["member"] },
                { "type": "project", "values": ["p1"] },
            ],
        }])
    );
    // The project only ever lands inside strings.
    let policy = keystone_auth_policy(
        Some(r#"[{"match":[{"type":"project","values":["$PROJECT_ID","x-$PROJECT_ID"]}]}]"#),
        r#""],"evil":["#,
    )
    .unwrap();
    let parsed: Value = serde_json::from_str(&policy).unwrap();
    assert_eq!(
        parsed[0]["match"][0]["values"],
        json!([r#""],"evil":["#, r#"x-"],"evil":["#])
    );
    match keystone_auth_policy(Some("{not json"), "p1") {
        Err(DriverError::Failed(reason)) => assert!(
            reason.starts_with("[kubernetes]/keystone_auth_default_policy is not valid JSON"),
            "{reason}"
        ),
        other => panic!("{other:?}"),
    }
}

/// Go: TestCloudProviderTag.
#[test]
fn the_cloud_provider_tag_follows_the_kube_minor() {
    for (kube, want) in [
        ("v1.31.1", "v1.31.0"),
        ("1.24.0", "v1.24.0"),
        ("v1.20.4", "v1.22.0"),
        ("v1.40.0", "v1.36.0"),
        ("", "v1.36.0"),
        ("v2.1.0", "v1.36.0"),
    ] {
        let labels = Labels::from([("kube_tag", kube)]);
        assert_eq!(
            cloud_provider_tag(&labels).unwrap(),
            want,
            "kube_tag {kube:?}"
        );
    }
    let labels = Labels::from([("kube_tag", "v1.31.1"), ("cloud_provider_tag", "v1.30.9")]);
    assert_eq!(cloud_provider_tag(&labels).unwrap(), "v1.30.9");
    let labels = Labels::from([("kube_tag", "v1.31.1"), ("cloud_provider_tag", "")]);
    assert_eq!(cloud_provider_tag(&labels).unwrap(), "v1.31.0");
}

/// Go: TestCreateClusterAddons, the builders' part: both Secrets of the
/// representative cluster with its credential, and an upgrade that
/// re-renders the cloud provider for the new minor.
#[test]
fn create_and_upgrade_render_the_cluster_s_add_ons() {
    let mut input = test_addon_input();
    input.credential = AppCredential {
        id: "ac-1".into(),
        secret: "secret-1".into(),
        ..AppCredential::default()
    };
    let apply = cluster_addons_secret(&input, &test_cni(&input)).unwrap();
    assert_eq!(
        keys(&apply),
        [
            "calico.yml",
            "cloud-config-secret.yaml",
            "keystone-auth.yaml"
        ]
    );
    let conf = objects(&apply, KEY_CLOUD_CONFIG)[0]["stringData"]["cloud.conf"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        conf.contains("application-credential-id=ac-1\n")
            && conf.contains("application-credential-secret=secret-1\n"),
        "cloud.conf:\n{conf}"
    );
    let provider = cloud_provider_secret(&input).unwrap();
    let provider_keys = keys(&provider);
    assert!(provider_keys.iter().any(|k| k == "cinder-csi.yaml"));
    assert!(
        provider_keys
            .iter()
            .any(|k| k == "storageclass-block-standard.yaml")
    );

    // The upgrade's template brings kube_tag v1.32.0.
    input.labels.insert("kube_tag".into(), "v1.32.0".into());
    let provider = cloud_provider_secret(&input).unwrap();
    assert_eq!(
        images(&objects(&provider, KEY_CLOUD_CONTROLLER_MANAGER)),
        ["registry.example.com/k8s/openstack-cloud-controller-manager:v1.32.0"]
    );
}

/// Every label the add-ons read is checked before it reaches a manifest;
/// the builders and [`validate_labels`] refuse the same values.
#[test]
fn every_label_that_reaches_a_manifest_is_checked() {
    for (key, value) in [
        ("container_infra_prefix", "registry.example.com/k8s\n- x"),
        ("container_infra_prefix", "Registry/UPPER"),
        ("calico_tag", "v3.31.3; rm -rf"),
        ("calico_tag", ""),
        ("calico_ipv4pool", "10.100.0.0/33"),
        ("calico_ipv4pool", "10.100.0/16"),
        ("calico_ipv4pool", "fd00::/64"),
        ("calico_ipv4pool", ""),
        ("cloud_provider_tag", "v1.31.0 --v=9"),
        ("cinder_csi_plugin_tag", "v1.31.0@sha256:x"),
        ("csi_attacher_tag", "v4.7.0:x"),
        ("csi_liveness_probe_tag", "../x"),
        ("csi_node_driver_registrar_tag", "v2\""),
        ("csi_provisioner_tag", "v5 "),
        ("csi_resizer_tag", "+x"),
        ("csi_snapshotter_tag", "v8\n"),
        ("octavia_provider", "amphora\n[Global]"),
        ("octavia_lb_algorithm", "RANDOM"),
        ("octavia_lb_healthcheck", "maybe"),
        ("keystone_auth_enabled", "maybe"),
        ("cinder_csi_enabled", "maybe"),
        ("manila_csi_enabled", "maybe"),
        ("manila_csi_plugin_tag", "v1.31.0 --v=9"),
        ("manila_csi_share_network_id", "net-1\n"),
        (
            "manila_csi_share_network_id",
            "0c3a1b52-9d5e-4f0a-8b2f-1e6a7c9d0e1",
        ),
    ] {
        let mut input = test_addon_input();
        input.labels.insert(key.into(), value.into());
        let (status, kind, msg) = client_error(validate_labels("calico", &input.labels));
        assert_eq!((status, kind.as_str()), (400, "Invalid"), "{key}={value:?}");
        assert!(msg.contains(key), "{key}={value:?}: {msg}");
        let built = cni_manifest("calico", &input.labels, None)
            .and_then(|cni| cluster_addons_secret(&input, &cni))
            .and_then(|_| cloud_provider_secret(&input));
        assert_eq!(
            client_error(built),
            (status, kind, msg),
            "the builders refuse {key}={value:?} as validate_labels does"
        );
    }
    for (key, value) in [("cilium_tag", "v1.16.1/x"), ("cilium_ipv4pool", "10.0.0.0")] {
        let labels = Labels::from([(key, value)]);
        let (status, _, msg) = client_error(validate_labels("cilium", &labels));
        assert!(status == 400 && msg.contains(key), "{key}={value:?}: {msg}");
    }
    assert_eq!(
        validate_labels("calico", &test_addon_input().labels),
        Ok(())
    );
    assert_eq!(validate_labels("cilium", &Labels::new()), Ok(()));
}

#[test]
fn pod_cidrs_are_ipv4_cidrs() {
    for good in ["10.100.0.0/16", "0.0.0.0/0", "192.168.1.0/32"] {
        assert!(is_ipv4_cidr(good), "{good}");
    }
    for bad in [
        "",
        "10.0.0.0",
        "10.0.0.0/",
        "10.0.0.0/+8",
        "10.0.0.0/008",
        "10.0.0.0/8/8",
        "10.0.0.256/8",
        " 10.0.0.0/8",
    ] {
        assert!(!is_ipv4_cidr(bad), "{bad:?}");
    }
}

/// What a volume type, a credential or the cloud holds reaches the
/// manifests as data only.
#[test]
fn the_cloud_s_text_stays_data() {
    let mut input = test_addon_input();
    input.credential.secret =
        "x\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: evil}".into();
    input.cloud.cluster_ca_bundle = Some("\"}\n---\n{".into());
    input.volume_types = Some(vec![VolumeType {
        name: "t\n---\nkind: x".into(),
        is_default: false,
    }]);
    input.share_types = Some(vec![ShareType {
        name: "s\n---\nkind: Namespace".into(),
        is_default: true,
        ..ShareType::default()
    }]);
    let provider = cloud_provider_secret(&input).unwrap();
    for key in keys(&provider) {
        for o in objects(&provider, &key) {
            assert_ne!(o["kind"], "Namespace", "{key}");
        }
    }
    let objs = objects(&provider, KEY_CLOUD_CONFIG);
    assert_eq!(objs.len(), 1);
    assert_eq!(objs[0]["stringData"]["ca.crt"], "\"}\n---\n{");
}

/// The Manila CSI objects of the representative cluster: valid objects,
/// NFS only, the cluster's UUID on its shares, the cloud's CA mounted,
/// every image pinned in `manila::IMAGES` and mirrored.
#[test]
fn manila_csi_objects_images_and_cluster_id() {
    let provider = cloud_provider_secret(&test_addon_input()).unwrap();
    let objs = objects(&provider, KEY_MANILA_CSI);
    let mut kinds: Vec<String> = objs.iter().map(kind_name_of).collect();
    kinds.sort();
    assert_eq!(
        kinds,
        [
            "CSIDriver/manila.csi.openstack.org",
            "ClusterRole/manila-csi-controller",
            "ClusterRoleBinding/manila-csi-controller",
            "DaemonSet/manila-csi-node",
            "Deployment/manila-csi-controller",
            "Role/manila-csi-controller",
            "RoleBinding/manila-csi-controller",
            "ServiceAccount/manila-csi-controller",
            "ServiceAccount/manila-csi-node",
        ]
    );
    assert_eq!(
        find(&objs, "CSIDriver/manila.csi.openstack.org")["spec"]["attachRequired"],
        false
    );
    for workload in [
        "Deployment/manila-csi-controller",
        "DaemonSet/manila-csi-node",
    ] {
        let o = find(&objs, workload);
        let selector = &o["spec"]["selector"]["matchLabels"];
        assert_eq!(&o["spec"]["template"]["metadata"]["labels"], selector);
        let plugin = container(o, "manila-csi-plugin");
        let args: Vec<&str> = plugin["args"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        for want in [
            "--share-protocol-selector=NFS",
            "--drivername=manila.csi.openstack.org",
            "--fwdendpoint=unix:///var/lib/kubelet/plugins/csi-nfsplugin/csi.sock",
            &format!("--cluster-id={UUID}"),
        ] {
            assert!(args.contains(&want), "{workload}: {args:?}");
        }
        // Every mount names a volume of the pod.
        let volumes: Vec<&str> = o["spec"]["template"]["spec"]["volumes"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|v| v["name"].as_str())
            .collect();
        for c in containers(o) {
            for m in c["volumeMounts"].as_array().into_iter().flatten() {
                let name = m["name"].as_str().unwrap();
                assert!(
                    volumes.contains(&name),
                    "{workload}: {name} not in {volumes:?}"
                );
            }
        }
        assert!(volumes.contains(&"cloud-config"), "{workload}: {volumes:?}");
    }
    assert_eq!(
        images(&objs),
        [
            "registry.example.com/k8s/csi-node-driver-registrar:v2.15.0",
            "registry.example.com/k8s/csi-provisioner:v5.3.0",
            "registry.example.com/k8s/csi-resizer:v1.14.0",
            "registry.example.com/k8s/manila-csi-plugin:v1.31.0",
        ]
    );
    let nfs = objects(&provider, KEY_CSI_NFS);
    assert_eq!(images(&nfs), ["registry.example.com/k8s/nfsplugin:v4.11.0"]);
    let node = find(&nfs, "DaemonSet/csi-nfs-node");
    assert_eq!(
        container(node, "nfs")["securityContext"]["privileged"],
        true
    );

    // Without a mirror the pinned images stay as they are, the plugin at
    // the cloud provider's tag; the labels retag the plugin and sidecars.
    let mut input = test_addon_input();
    input.labels.remove("container_infra_prefix");
    input.labels.remove("kube_tag");
    let provider = cloud_provider_secret(&input).unwrap();
    let mut want: Vec<&str> = vec![
        manila::IMAGES.manila,
        manila::IMAGES.provisioner,
        manila::IMAGES.resizer,
        manila::IMAGES.registrar,
    ];
    want.sort();
    assert_eq!(images(&objects(&provider, KEY_MANILA_CSI)), want);
    assert_eq!(
        images(&objects(&provider, KEY_CSI_NFS)),
        [manila::IMAGES.nfs]
    );
    input
        .labels
        .insert("manila_csi_plugin_tag".into(), "v1.33.1".into());
    input
        .labels
        .insert("csi_provisioner_tag".into(), "v5.2.0".into());
    let got = images(&objects(
        &cloud_provider_secret(&input).unwrap(),
        KEY_MANILA_CSI,
    ));
    for want in [
        "registry.k8s.io/provider-os/manila-csi-plugin:v1.33.1",
        "registry.k8s.io/sig-storage/csi-provisioner:v5.2.0",
    ] {
        assert!(got.iter().any(|i| i == want), "{got:?}");
    }
}

/// The plugin's credential Secret: the cluster's application credential,
/// the region (Keystone's default when the cloud names none) and the CA
/// only when there is one.
#[test]
fn the_manila_csi_secret() {
    let mut input = test_addon_input();
    let provider = cloud_provider_secret(&input).unwrap();
    let secret = &objects(&provider, KEY_MANILA_CSI_SECRET)[0];
    assert_eq!(kind_name_of(secret), "Secret/csi-manila-secrets");
    assert_eq!(secret["metadata"]["namespace"], "kube-system");
    assert_eq!(
        secret["stringData"],
        json!({
            "os-authURL": "https://keystone.example.com/v3",
            "os-region": "RegionOne",
            "os-applicationCredentialID": "ac-1",
            "os-applicationCredentialSecret": "s3cr;et",
            "os-certAuthorityPath": "/etc/config/ca.crt",
            "os-TLSInsecure": "false",
        })
    );
    input.cloud.cluster_ca_bundle = None;
    input.cloud.region = Some("RegionTwo".into());
    let provider = cloud_provider_secret(&input).unwrap();
    let data = &objects(&provider, KEY_MANILA_CSI_SECRET)[0]["stringData"];
    assert_eq!(data["os-region"], "RegionTwo");
    assert!(data.get("os-TLSInsecure").is_none() && data.get("os-certAuthorityPath").is_none());
    // Nor is the cloud-config Secret mounted then.
    let objs = objects(&provider, KEY_MANILA_CSI);
    assert!(!data_of(&objs).contains("cloud-config"));
    input.cloud.region = None;
    let provider = cloud_provider_secret(&input).unwrap();
    let data = &objects(&provider, KEY_MANILA_CSI_SECRET)[0]["stringData"];
    assert_eq!(data["os-region"], manila::FALLBACK_REGION);
}

/// The text of a list of objects.
fn data_of(objs: &[Value]) -> String {
    objs.iter().map(Value::to_string).collect()
}

/// One class per share type usable without a share network; the ones
/// that handle share servers with `manila_csi_share_network_id`; the
/// default type's class the cluster's default only without Cinder CSI.
#[test]
fn storage_classes_of_the_share_types() {
    let mut input = test_addon_input();
    let provider = cloud_provider_secret(&input).unwrap();
    let default = &objects(&provider, "storageclass-share-default.yaml")[0];
    let secret_params = [
        "provisioner",
        "controller-expand",
        "node-stage",
        "node-publish",
    ];
    let mut parameters = json!({ "type": "default" });
    for call in secret_params {
        parameters[format!("csi.storage.k8s.io/{call}-secret-name")] = json!("csi-manila-secrets");
        parameters[format!("csi.storage.k8s.io/{call}-secret-namespace")] = json!("kube-system");
    }
    assert_eq!(
        default,
        &json!({
            "apiVersion": "storage.k8s.io/v1",
            "kind": "StorageClass",
            "metadata": { "name": "share-default" },
            "provisioner": "manila.csi.openstack.org",
            "parameters": parameters,
            "reclaimPolicy": "Delete",
            "volumeBindingMode": "Immediate",
            "allowVolumeExpansion": true,
        })
    );
    assert_eq!(
        objects(&provider, "storageclass-share-gold-tier.yaml")[0]["parameters"]["type"],
        "Gold Tier"
    );

    let network = "0c3a1b52-9d5e-4f0a-8b2f-1e6a7c9d0e1f";
    input
        .labels
        .insert("manila_csi_share_network_id".into(), network.into());
    input.volume_types = None;
    let provider = cloud_provider_secret(&input).unwrap();
    let servers = &objects(&provider, "storageclass-share-with-servers.yaml")[0];
    assert_eq!(servers["parameters"]["shareNetworkID"], network);
    assert_eq!(servers["parameters"]["type"], "with_servers");
    let default = &objects(&provider, "storageclass-share-default.yaml")[0];
    assert!(default["parameters"].get("shareNetworkID").is_none());
    assert_eq!(
        default["metadata"]["annotations"]["storageclass.kubernetes.io/is-default-class"],
        "true"
    );
    assert!(
        !keys(&provider)
            .iter()
            .any(|k| k.starts_with("storageclass-block-"))
    );
}

#[test]
fn manila_csi_needs_the_label_and_the_service() {
    let manila_keys = |input: &AddonInput| -> Vec<String> {
        keys(&cloud_provider_secret(input).unwrap())
            .into_iter()
            .filter(|k| k.contains("manila") || k.contains("nfs") || k.contains("share"))
            .collect()
    };
    let mut input = test_addon_input();
    input
        .labels
        .insert("manila_csi_enabled".into(), "false".into());
    assert!(manila_keys(&input).is_empty());
    input
        .labels
        .insert("manila_csi_enabled".into(), "true".into());
    input.share_types = None;
    assert!(manila_keys(&input).is_empty());
    input.share_types = Some(Vec::new());
    assert_eq!(
        manila_keys(&input),
        ["csi-nfs.yaml", "manila-csi-secret.yaml", "manila-csi.yaml"]
    );
    assert_eq!(manila::manila_csi_enabled(&Labels::new()), Ok(true));
    let (status, _, msg) = client_error(validate_labels(
        "calico",
        &Labels::from([("manila_csi_enabled", "maybe")]),
    ));
    assert!(status == 400 && msg.contains("manila_csi_enabled"), "{msg}");
    for good in [
        "0c3a1b52-9d5e-4f0a-8b2f-1e6a7c9d0e1f",
        "0C3A1B529D5E4F0A8B2F1E6A7C9D0E1F",
        "",
    ] {
        let labels = Labels::from([("manila_csi_share_network_id", good)]);
        assert_eq!(validate_labels("calico", &labels), Ok(()), "{good}");
    }
    for bad in [
        "0c3a1b52-9d5e-4f0a-8b2f-1e6a7c9d0e1",
        "0c3a1b529-d5e-4f0a-8b2f-1e6a7c9d0e1f",
        "zc3a1b52-9d5e-4f0a-8b2f-1e6a7c9d0e1f",
    ] {
        let labels = Labels::from([("manila_csi_share_network_id", bad)]);
        assert!(validate_labels("calico", &labels).is_err(), "{bad}");
    }
}
