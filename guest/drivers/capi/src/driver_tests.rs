//! The driver's operations and status over the SDK's in-memory Kubernetes
//! and a cloud the tests describe: what each operation writes and answers,
//! what the status asks for, and the effects it runs.

use std::cell::RefCell;

use openkeel_magnum_driver::cloud::CloudInfo;
use openkeel_magnum_driver::openstack::{
    ApplicationCredential, Flavor, Image, LoadBalancer, ShareType, VolumeType,
};
use openkeel_magnum_driver::secrets::{ClusterCas, KeyPair};
use openkeel_magnum_driver::{
    CallContext, Caller, ClusterState, Driver, DriverError, HostError, K8sObject, Resize, Status,
    testing,
};
use serde_json::{Value, json};

use crate::driver::{Capi, entry_points};
use crate::fixtures::{STACK_ID, UUID, now, test_state};
use crate::services::Services;
use crate::watch::{
    EFFECT_DELETE_CREDENTIAL, EFFECT_DELETE_SECRET, EFFECT_DELETE_SERVER_GROUP,
    EFFECT_FORGET_PREVIOUS_CREDENTIAL, EFFECT_REFRESH_CLOUD_CA,
};

/// A cloud that answers every lookup and records what was asked.
#[derive(Default)]
struct Cloud {
    calls: RefCell<Vec<String>>,
    load_balancers: Vec<LoadBalancer>,
    /// The cloud's CA bundle, which a test may change.
    ca_bundle: RefCell<Option<String>>,
    /// Manila's share types; None: no Manila in the catalog.
    share_types: Option<Vec<ShareType>>,
}

impl Cloud {
    fn record(&self, call: String) {
        self.calls.borrow_mut().push(call);
    }
    fn calls(&self) -> Vec<String> {
        self.calls.borrow().clone()
    }
}

type R<T> = Result<T, HostError>;

fn pem(kind: &str) -> String {
    format!("-----BEGIN {kind}-----\nMIIB\n-----END {kind}-----\n")
}

impl Services for Cloud {
    fn flavor_name(&self, reference: &str) -> R<String> {
        Ok(reference.to_string())
    }
    fn flavor(&self, reference: &str) -> R<Flavor> {
        Ok(Flavor {
            id: reference.into(),
            name: reference.into(),
            vcpus: 4,
            ram_mb: 8192,
            disk_gb: 40,
            ..Flavor::default()
        })
    }
    fn image(&self, reference: &str) -> R<Image> {
        if reference == "missing" {
            return Err(HostError::Client(openkeel_magnum_driver::MagnumError {
                status: 400,
                kind: "ImageNotFound".into(),
                message: "Image missing could not be found.".into(),
            }));
        }
        Ok(Image {
            id: format!("id-{reference}"),
            disk_bus: None,
        })
    }
    fn network_id(&self, reference: &str) -> R<String> {
        Ok(format!("net-{reference}"))
    }
    fn subnet_id(&self, reference: &str) -> R<String> {
        Ok(format!("subnet-{reference}"))
    }
    fn ensure_server_group(&self, name: &str, policy: &str) -> R<String> {
        self.record(format!("ensure-server-group {name} {policy}"));
        Ok(format!("sg-{name}"))
    }
    fn delete_server_group(&self, name: &str) -> R<()> {
        self.record(format!("delete-server-group {name}"));
        Ok(())
    }
    fn create_credential(&self, name: &str, _description: &str) -> R<ApplicationCredential> {
        self.record(format!("create-credential {name}"));
        Ok(ApplicationCredential {
            id: format!("ac-{}", self.calls.borrow().len()),
            secret: "s3cret".into(),
            name: name.into(),
            user_id: "u1".into(),
        })
    }
    fn delete_credential(&self, user_id: &str, id: &str) -> R<()> {
        self.record(format!("delete-credential {user_id}/{id}"));
        Ok(())
    }
    fn load_balancers(&self, _project_id: &str) -> R<Option<Vec<LoadBalancer>>> {
        Ok(Some(self.load_balancers.clone()))
    }
    fn delete_load_balancer(&self, lb: &LoadBalancer) -> R<()> {
        self.record(format!("delete-load-balancer {}", lb.name));
        Ok(())
    }
    fn volume_types(&self) -> R<Option<Vec<VolumeType>>> {
        Ok(Some(vec![VolumeType {
            name: "ssd".into(),
            is_default: true,
        }]))
    }
    fn share_types(&self) -> R<Option<Vec<ShareType>>> {
        self.record("share-types".into());
        Ok(self.share_types.clone())
    }
    fn cas(&self) -> R<ClusterCas> {
        let pair = || KeyPair {
            cert_pem: pem("CERTIFICATE"),
            key_pem: pem("PRIVATE KEY"),
            passphrase: String::new(),
        };
        Ok(ClusterCas {
            kubernetes: pair(),
            etcd: pair(),
            front_proxy: pair(),
            admin: pair(),
        })
    }
    fn cloud(&self) -> CloudInfo {
        CloudInfo {
            keystone_url: "https://keystone.example.test:5000/v3".into(),
            region: Some("RegionOne".into()),
            endpoint_interface: "public".into(),
            verify: true,
            cluster_verify_ca: true,
            ca_bundle: self.ca_bundle.borrow().clone(),
            ..CloudInfo::default()
        }
    }
}

fn ctx() -> CallContext {
    CallContext {
        caller: Caller {
            user_id: "u1".into(),
            project_id: "p1".into(),
            ..Caller::default()
        },
        now: Some(now()),
        ..CallContext::default()
    }
}

/// The test cluster as the conductor hands it to a create: no stack_id.
fn new_cluster() -> ClusterState {
    testing::reset();
    let mut st = test_state();
    st.cluster.stack_id = None;
    for ng in &mut st.nodegroups {
        ng.stack_id = None;
    }
    st
}

fn kinds() -> Vec<String> {
    let mut out: Vec<String> = testing::objects()
        .iter()
        .map(|o| format!("{}/{}", o.kind, o.name))
        .collect();
    out.sort();
    out
}

fn object(kind: &str, name: &str) -> Value {
    testing::objects()
        .into_iter()
        .find(|o| o.kind == kind && o.name == name)
        .unwrap_or_else(|| panic!("no {kind} {name} in {:?}", kinds()))
        .value()
        .expect("json")
}

fn put(v: Value) {
    testing::put_object(K8sObject::from_value(&v).expect("object"));
}

/// Creates the test cluster; answers the driver, its update and its
/// stack_id.
fn created() -> (Capi<Cloud>, ClusterState) {
    let d = Capi::<Cloud>::default();
    let st = new_cluster();
    let upd = d.create_cluster(&ctx(), st.clone(), 60).expect("create");
    let cl = upd.cluster.expect("cluster row");
    let mut st = st;
    st.cluster = cl;
    for ng in upd.nodegroups {
        let i = st
            .nodegroups
            .iter()
            .position(|x| x.uuid == ng.uuid)
            .expect("row");
        st.nodegroups[i] = ng;
    }
    (d, st)
}

#[test]
fn the_entry_points_are_the_manifests() {
    let manifest = include_str!("../driver.toml");
    let names: Vec<String> = entry_points().into_iter().map(|e| e.name).collect();
    assert_eq!(names.len(), 6);
    for name in &names {
        assert!(manifest.contains(&format!("name = \"{name}\"")), "{name}");
    }
    assert!(names.contains(&"k8s_cluster_api".to_string()));
}

#[test]
fn a_create_writes_every_object_and_moves_the_rows() {
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    assert!(
        stack_id.starts_with("kube-") && stack_id.len() == 10,
        "{stack_id}"
    );
    assert_eq!(st.cluster.status, Some(Status::CreateInProgress));
    assert!(
        st.nodegroups
            .iter()
            .all(|ng| ng.stack_id.as_deref() == Some(&*stack_id))
    );
    let all = kinds();
    for want in [
        format!("Cluster/{stack_id}"),
        "ClusterClass/magnum-v0.38.2-openkeel.1".to_string(),
        "KubeadmControlPlaneTemplate/magnum-v0.38.2-openkeel.1".to_string(),
        format!("Secret/{stack_id}-cloud-config"),
        format!("Secret/{stack_id}-ca"),
        format!("Secret/{stack_id}-etcd"),
        format!("Secret/{stack_id}-proxy"),
        format!("Secret/{stack_id}-sa"),
        format!("Secret/{stack_id}-cloud-provider"),
        format!("Secret/{}", st.cluster.uuid),
        format!("ClusterResourceSet/{stack_id}-cloud-provider"),
        format!("ClusterResourceSet/{}", st.cluster.uuid),
    ] {
        assert!(all.contains(&want), "{want} missing from {all:?}");
    }
    let calls = d.svc.calls();
    assert_eq!(
        calls
            .iter()
            .filter(|c| c.starts_with("create-credential"))
            .count(),
        1,
        "{calls:?}"
    );
    assert!(calls.contains(&format!(
        "ensure-server-group {stack_id} soft-anti-affinity"
    )));
    // The server groups the Cluster names are the ones ensured.
    let cluster = object("Cluster", &stack_id);
    assert!(cluster.to_string().contains(&format!("sg-{stack_id}")));
}

/// The keys of the `-cloud-provider` Secret.
fn cloud_provider_keys(stack_id: &str) -> Vec<String> {
    let secret = object("Secret", &format!("{stack_id}-cloud-provider"));
    secret["data"]
        .as_object()
        .map(|d| d.keys().cloned().collect())
        .unwrap_or_default()
}

#[test]
fn manila_csi_follows_the_catalog_and_the_label() {
    let manila_keys = [
        "csi-nfs.yaml",
        "manila-csi-secret.yaml",
        "manila-csi.yaml",
        "storageclass-share-default.yaml",
    ];
    // Without Manila in the catalog: asked, nothing installed.
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    assert!(d.svc.calls().contains(&"share-types".to_string()));
    let keys = cloud_provider_keys(&stack_id);
    assert!(keys.contains(&"cinder-csi.yaml".to_string()), "{keys:?}");
    for key in manila_keys {
        assert!(!keys.contains(&key.to_string()), "{key} in {keys:?}");
    }
    // With Manila: its objects beside Cinder's.
    let with_manila = || Capi {
        svc: Cloud {
            share_types: Some(vec![ShareType {
                id: "st-1".into(),
                name: "default".into(),
                is_default: true,
                driver_handles_share_servers: Some(false),
            }]),
            ..Cloud::default()
        },
    };
    let d = with_manila();
    let upd = d.create_cluster(&ctx(), new_cluster(), 60).expect("create");
    let stack_id = upd.cluster.expect("row").stack_id.expect("stack_id");
    let keys = cloud_provider_keys(&stack_id);
    for key in manila_keys.iter().chain(&["cinder-csi.yaml"]) {
        assert!(keys.contains(&key.to_string()), "{key} not in {keys:?}");
    }
    // The label turns it off, and the share types are not even asked.
    let d = with_manila();
    let mut st = new_cluster();
    st.cluster.set_label("manila_csi_enabled", "false");
    let upd = d.create_cluster(&ctx(), st, 60).expect("create");
    let stack_id = upd.cluster.expect("row").stack_id.expect("stack_id");
    assert!(!d.svc.calls().contains(&"share-types".to_string()));
    let keys = cloud_provider_keys(&stack_id);
    for key in manila_keys {
        assert!(!keys.contains(&key.to_string()), "{key} in {keys:?}");
    }
}

#[test]
fn a_retried_create_keeps_its_stack_id_and_credential() {
    let (d, st) = created();
    let again = d
        .create_cluster(&ctx(), st.clone(), 60)
        .expect("create again");
    assert_eq!(again.cluster.expect("row").stack_id, st.cluster.stack_id);
    let creds = d
        .svc
        .calls()
        .iter()
        .filter(|c| c.starts_with("create-credential"))
        .count();
    assert_eq!(creds, 1, "the second create made another credential");
}

#[test]
fn bad_input_is_refused_before_anything_is_written() {
    let d = Capi::<Cloud>::default();
    type Change = Box<dyn Fn(&mut ClusterState)>;
    let cases: Vec<(&str, Change)> = vec![
        (
            "kube_tag",
            Box::new(|st| st.cluster.set_label("kube_tag", "latest")),
        ),
        (
            "cni",
            Box::new(|st| st.template.network_driver = Some("flannel".into())),
        ),
        (
            "distro",
            Box::new(|st| st.template.cluster_distro = Some("windows".into())),
        ),
        (
            "pool",
            Box::new(|st| st.cluster.set_label("calico_ipv4pool", "10.0.0.0/99")),
        ),
        (
            "name",
            Box::new(|st| st.nodegroups[1].name = "Bad_Name".into()),
        ),
        (
            "mirror",
            Box::new(|st| {
                st.cluster
                    .set_label("registry_mirrors", "docker.io=https://m\".example.com")
            }),
        ),
        (
            "allowed CIDR",
            Box::new(|st| {
                st.cluster
                    .set_label("api_master_lb_allowed_cidrs", "10.0.0.0/33")
            }),
        ),
        (
            "manila_csi_enabled",
            Box::new(|st| st.cluster.set_label("manila_csi_enabled", "maybe")),
        ),
        (
            "manila_csi_share_network_id",
            Box::new(|st| st.cluster.set_label("manila_csi_share_network_id", "net;1")),
        ),
        (
            "insecure registry",
            Box::new(|st| {
                st.cluster
                    .set_label("insecure_registries", "https://r.example.com")
            }),
        ),
    ];
    for (what, change) in cases {
        let mut st = new_cluster();
        change(&mut st);
        let err = d.validate_create(&ctx(), &st).expect_err(what);
        assert!(
            matches!(err, DriverError::Client(ref m) if m.status == 400),
            "{what}: {err:?}"
        );
        assert!(d.create_cluster(&ctx(), st, 60).is_err(), "{what}");
        assert!(testing::objects().is_empty(), "{what}: {:?}", kinds());
    }
}

#[test]
fn a_lookup_refused_by_magnum_keeps_its_error() {
    let d = Capi::<Cloud>::default();
    let mut st = new_cluster();
    st.template.image_id = Some("missing".into());
    for ng in &mut st.nodegroups {
        ng.image_id = None;
    }
    let err = d.create_cluster(&ctx(), st, 60).expect_err("missing image");
    assert!(
        format!("{err:?}").contains("Image missing could not be found"),
        "{err:?}"
    );
}

#[test]
fn a_resize_marks_the_named_machines_first() {
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    for (name, server) in [("m-1", "srv-1"), ("m-2", "srv-2")] {
        put(json!({
            "apiVersion": "cluster.x-k8s.io/v1beta2",
            "kind": "Machine",
            "metadata": {
                "name": name,
                "namespace": "magnum-system",
                "labels": {
                    "cluster.x-k8s.io/cluster-name": stack_id,
                    "topology.cluster.x-k8s.io/deployment-name": "default-worker",
                },
            },
            "spec": { "providerID": format!("openstack:///{server}") },
        }));
    }
    let worker = st.default_worker().expect("worker").uuid.clone();
    let upd = d
        .resize_cluster(
            &ctx(),
            st,
            Resize {
                nodegroup_uuid: worker,
                node_count: 1,
                nodes_to_remove: vec!["srv-2".into()],
            },
        )
        .expect("resize");
    assert_eq!(
        upd.cluster.expect("row").status,
        Some(Status::UpdateInProgress)
    );
    assert_eq!(upd.nodegroups[0].node_count, Some(1));
    let annotated = |n: &str| {
        object("Machine", n)["metadata"]["annotations"]["cluster.x-k8s.io/delete-machine"] == "yes"
    };
    assert!(annotated("m-2"));
    assert!(!annotated("m-1"));
    let cluster = object("Cluster", &stack_id);
    let mds = cluster["spec"]["topology"]["workers"]["machineDeployments"]
        .as_array()
        .expect("workers")
        .clone();
    let worker = mds
        .iter()
        .find(|m| m["name"] == "default-worker")
        .expect("md");
    assert_eq!(worker["replicas"], 1);
}

#[test]
fn an_upgrade_is_checked_and_carries_the_batch_size() {
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let mut template = st.template.clone();
    template.uuid = "tpl-2".into();
    template.set_label("kube_tag", "v1.33.0");
    let req = |t: &openkeel_magnum_driver::ClusterTemplate| openkeel_magnum_driver::Upgrade {
        template: t.clone(),
        max_batch_size: 2,
        nodegroup_uuid: None,
    };
    // Two minor versions up: refused, synchronously and by the operation.
    assert!(d.validate_upgrade(&ctx(), &st, &template).is_err());
    assert!(
        d.upgrade_cluster(&ctx(), st.clone(), req(&template))
            .is_err()
    );
    template.set_label("kube_tag", "v1.32.4");
    d.validate_upgrade(&ctx(), &st, &template)
        .expect("one minor up");
    let upd = d
        .upgrade_cluster(&ctx(), st, req(&template))
        .expect("upgrade");
    let cl = upd.cluster.expect("row");
    assert_eq!(cl.cluster_template_id, "tpl-2");
    assert_eq!(cl.label("kube_tag"), Some("v1.32.4"));
    let cluster = object("Cluster", &stack_id);
    assert_eq!(cluster["spec"]["topology"]["version"], "v1.32.4");
    let md = &cluster["spec"]["topology"]["workers"]["machineDeployments"][0];
    assert_eq!(md["rollout"]["strategy"]["rollingUpdate"]["maxSurge"], 2);
}

#[test]
fn a_delete_removes_the_load_balancers_and_the_cluster() {
    let (mut d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let project = st.cluster.project_id.clone();
    let lb = |name: String, project: &str| LoadBalancer {
        id: name.clone(),
        name,
        description: String::new(),
        project_id: project.into(),
        provisioning_status: "ACTIVE".into(),
        vip_port_id: "port".into(),
    };
    d.svc.load_balancers = vec![
        lb(format!("kube_service_{UUID}_default_web"), &project),
        lb("someone-else".into(), &project),
    ];
    let upd = d.delete_cluster(&ctx(), st).expect("delete");
    assert_eq!(
        upd.cluster.expect("row").status,
        Some(Status::DeleteInProgress)
    );
    let calls = d.svc.calls();
    assert!(calls.contains(&format!(
        "delete-load-balancer kube_service_{UUID}_default_web"
    )));
    assert!(!calls.contains(&"delete-load-balancer someone-else".to_string()));
    let all = kinds();
    assert!(!all.contains(&format!("Cluster/{stack_id}")), "{all:?}");
    // The credential stays until the Cluster has gone.
    assert!(
        all.contains(&format!("Secret/{stack_id}-cloud-config")),
        "{all:?}"
    );
}

#[test]
fn the_deletion_completes_with_its_clean_up_once_the_cluster_has_gone() {
    let (d, mut st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    st = {
        let upd = d.delete_cluster(&ctx(), st.clone()).expect("delete");
        let mut next = st;
        next.cluster = upd.cluster.expect("row");
        next
    };
    let snapshot = testing::snapshot(&d.watches(&ctx(), &st));
    assert_eq!(snapshot.len(), 6);
    let answer = d.derive(&ctx(), st.clone(), snapshot).expect("derive");
    assert_eq!(
        answer.update.cluster.as_ref().and_then(|c| c.status),
        Some(Status::DeleteComplete)
    );
    let effects: Vec<(String, String)> = answer
        .effects
        .iter()
        .map(|e| (e.name.clone(), e.detail.clone()))
        .collect();
    assert!(
        effects.iter().any(|(n, _)| n == EFFECT_DELETE_CREDENTIAL),
        "{effects:?}"
    );
    assert!(effects.contains(&(EFFECT_DELETE_SECRET.into(), format!("{stack_id}-ca"))));
    for ng in ["", "-default-worker"] {
        assert!(
            effects.contains(&(EFFECT_DELETE_SERVER_GROUP.into(), format!("{stack_id}{ng}"))),
            "{effects:?}"
        );
    }
    // Pure: the same snapshot gives the same answer.
    let again = d
        .derive(
            &ctx(),
            st.clone(),
            testing::snapshot(&d.watches(&ctx(), &st)),
        )
        .expect("derive");
    assert_eq!(again.effects, answer.effects);

    d.apply_effects(&ctx(), &st, answer.effects)
        .expect("effects");
    let all = kinds();
    assert!(
        !all.iter()
            .any(|k| k.starts_with(&format!("Secret/{stack_id}-"))),
        "{all:?}"
    );
    assert!(
        d.svc
            .calls()
            .iter()
            .any(|c| c.starts_with("delete-credential u1/"))
    );
}

#[test]
fn an_unsynced_snapshot_changes_nothing() {
    let (d, mut st) = created();
    st.cluster.status = Some(Status::DeleteInProgress);
    let mut snapshot = testing::snapshot(&d.watches(&ctx(), &st));
    snapshot[0].synced = false;
    let answer = d.derive(&ctx(), st, snapshot).expect("derive");
    assert!(answer.update.is_empty() && answer.effects.is_empty());
}

#[test]
fn a_rotation_records_the_old_credential_until_the_infrastructure_is_ready() {
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let mut other = ctx();
    other.caller.user_id = "u2".into();
    let provider =
        |stack_id: &str| object("Secret", &format!("{stack_id}-cloud-provider")).to_string();
    let before = provider(&stack_id);
    let upd = d.rotate_credential(&other, st.clone()).expect("rotate");
    assert!(upd.is_empty(), "a rotation changes no row: {upd:?}");
    assert_ne!(
        provider(&stack_id),
        before,
        "the workload cluster's cloud.conf keeps the old credential"
    );
    let secret = object("Secret", &format!("{stack_id}-cloud-config"));
    let previous = secret["metadata"]["annotations"][crate::names::ANNOTATION_PREVIOUS_APP_CRED]
        .as_str()
        .expect("previous")
        .to_string();
    let effects = |d: &Capi<Cloud>| {
        d.derive(
            &ctx(),
            st.clone(),
            testing::snapshot(&d.watches(&ctx(), &st)),
        )
        .expect("derive")
        .effects
    };
    // Not ready yet: the old credential stays.
    assert!(effects(&d).is_empty());
    put(json!({
        "apiVersion": "infrastructure.cluster.x-k8s.io/v1beta1",
        "kind": "OpenStackCluster",
        "metadata": {
            "name": stack_id,
            "namespace": "magnum-system",
            "labels": { "cluster.x-k8s.io/cluster-name": stack_id },
        },
        "status": { "ready": true },
    }));
    let asked = effects(&d);
    let names: Vec<&str> = asked.iter().map(|e| e.name.as_str()).collect();
    assert_eq!(
        names,
        [EFFECT_DELETE_CREDENTIAL, EFFECT_FORGET_PREVIOUS_CREDENTIAL]
    );
    assert_eq!(asked[0].detail, previous);
    d.apply_effects(&ctx(), &st, asked).expect("effects");
    assert!(
        d.svc
            .calls()
            .contains(&format!("delete-credential {previous}"))
    );
    assert!(effects(&d).is_empty(), "the record was not removed");
}

/// The operator changes the cloud's CA bundle: the next status pass of
/// each cluster asks for its cloud-config Secret to be written again, and
/// that write carries the new bundle and keeps the credential; with the
/// bundle unchanged a pass asks for nothing (no request for an idle
/// cluster).
#[test]
fn a_new_cloud_ca_is_written_into_the_cloud_config_secret_once() {
    let (d, st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let effects = |d: &Capi<Cloud>| {
        d.derive(
            &ctx(),
            st.clone(),
            testing::snapshot(&d.watches(&ctx(), &st)),
        )
        .expect("derive")
        .effects
    };
    assert!(
        effects(&d).is_empty(),
        "an idle cluster asked for something"
    );

    let new_ca = pem("CERTIFICATE");
    *d.svc.ca_bundle.borrow_mut() = Some(new_ca.clone());
    let asked = effects(&d);
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert_eq!(
        (asked[0].name.as_str(), asked[0].detail.as_str()),
        (EFFECT_REFRESH_CLOUD_CA, stack_id.as_str())
    );
    let before = object("Secret", &format!("{stack_id}-cloud-config"));
    assert!(before["data"].get("cacert").is_none());
    d.apply_effects(&ctx(), &st, asked).expect("effects");
    let after = object("Secret", &format!("{stack_id}-cloud-config"));
    use base64::Engine as _;
    let cacert = base64::engine::general_purpose::STANDARD
        .decode(after["data"]["cacert"].as_str().expect("cacert"))
        .expect("base64");
    assert_eq!(String::from_utf8(cacert).expect("utf-8"), new_ca);
    assert_eq!(after["data"]["clouds.yaml"], before["data"]["clouds.yaml"]);
    assert_eq!(
        after["metadata"]["annotations"][crate::names::ANNOTATION_APP_CRED_USER],
        before["metadata"]["annotations"][crate::names::ANNOTATION_APP_CRED_USER]
    );
    assert!(effects(&d).is_empty(), "the refresh is asked for again");

    // Back to no bundle: `cacert` goes.
    *d.svc.ca_bundle.borrow_mut() = None;
    let asked = effects(&d);
    assert_eq!(asked.len(), 1, "{asked:?}");
    d.apply_effects(&ctx(), &st, asked).expect("effects");
    let after = object("Secret", &format!("{stack_id}-cloud-config"));
    assert!(after["data"].get("cacert").is_none(), "{after}");
    assert!(effects(&d).is_empty());

    // A Secret without a credential could never be written again: it is
    // not asked for at every pass.
    let mut broken = after.clone();
    broken["data"]
        .as_object_mut()
        .expect("data")
        .remove("clouds.yaml");
    put(broken);
    *d.svc.ca_bundle.borrow_mut() = Some(new_ca);
    assert!(effects(&d).is_empty(), "a refresh that cannot be done");
}

#[test]
fn a_nodegroup_gone_takes_its_server_group() {
    let (d, mut st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let gpu = st
        .nodegroups
        .iter_mut()
        .find(|ng| !ng.is_default())
        .expect("non-default nodegroup");
    gpu.status = Some(Status::DeleteInProgress);
    let name = gpu.name.clone();
    let answer = d
        .derive(
            &ctx(),
            st.clone(),
            testing::snapshot(&d.watches(&ctx(), &st)),
        )
        .expect("derive");
    assert_eq!(answer.update.deleted_nodegroups.len(), 1);
    assert!(answer.effects.iter().any(|e| {
        e.name == EFFECT_DELETE_SERVER_GROUP && e.detail == format!("{stack_id}-{name}")
    }));
}

#[test]
fn effects_name_only_the_clusters_own_secrets() {
    let (d, st) = created();
    let err = d
        .apply_effects(
            &ctx(),
            &st,
            vec![openkeel_magnum_driver::Effect::new(
                EFFECT_DELETE_SECRET,
                "kube-other-ca",
            )],
        )
        .expect_err("another cluster's Secret");
    assert!(format!("{err:?}").contains("not one of the cluster's"));
    let _ = STACK_ID;
}

#[test]
fn a_credential_without_an_owner_is_the_cluster_users() {
    // magnum-cluster-api's cloud-config Secret records no owner.
    let (d, mut st) = created();
    let stack_id = st.cluster.stack_id.clone().expect("stack_id");
    let mut secret = object("Secret", &format!("{stack_id}-cloud-config"));
    secret["metadata"]
        .as_object_mut()
        .expect("metadata")
        .remove("annotations");
    put(secret);
    st.cluster.user_id = "owner-1".into();
    st.cluster.status = Some(Status::DeleteInProgress);
    testing::objects()
        .into_iter()
        .filter(|o| o.kind == "Cluster")
        .for_each(|o| {
            openkeel_magnum_driver::kube::delete(&crate::ops::reference(
                &o.api_version,
                "Cluster",
                "magnum-system",
                &o.name,
            ))
            .expect("delete");
        });
    let answer = d
        .derive(
            &ctx(),
            st.clone(),
            testing::snapshot(&d.watches(&ctx(), &st)),
        )
        .expect("derive");
    let creds: Vec<&str> = answer
        .effects
        .iter()
        .filter(|e| e.name == EFFECT_DELETE_CREDENTIAL)
        .map(|e| e.detail.as_str())
        .collect();
    assert_eq!(creds.len(), 1, "{:?}", answer.effects);
    assert!(creds[0].starts_with("owner-1/ac-"), "{creds:?}");
}

#[test]
fn a_cilium_cluster_without_its_manifest_is_a_400_and_with_it_is_built() {
    let d = Capi::<Cloud>::default();
    let mut st = new_cluster();
    st.template.network_driver = Some("cilium".into());
    st.cluster.set_label("cilium_tag", "v1.15.3");
    let err = d.validate_create(&ctx(), &st).expect_err("no manifest");
    assert!(
        matches!(err, DriverError::Client(ref m) if m.status == 400 && m.message.contains("cilium/v1.15.3.yaml")),
        "{err:?}"
    );
    let manifest = r#"{"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cilium-config", "namespace": "kube-system"}, "data": {"cluster-pool-ipv4-cidr": "10.0.0.0/8"}}"#;
    testing::set_file("cilium/v1.15.3.yaml", manifest);
    d.validate_create(&ctx(), &st)
        .expect("with the operator's manifest");
    d.create_cluster(&ctx(), st.clone(), 60).expect("create");
    let addons = object("Secret", &st.cluster.uuid).to_string();
    assert!(addons.contains("cilium.yaml"), "{addons}");
}

#[test]
fn the_operators_keystone_auth_policy_is_installed_for_the_clusters_project() {
    let d = Capi::<Cloud>::default();
    let st = new_cluster();
    testing::set_option(
        "keystone_auth_default_policy",
        r#"[{"resource": {"verbs": ["*"], "resources": ["*"], "version": "*", "namespace": "*"},
             "match": [{"type": "role", "values": ["site-k8s-admin"]},
                       {"type": "project", "values": ["$PROJECT_ID"]}]}]"#,
    );
    d.create_cluster(&ctx(), st.clone(), 60).expect("create");
    let addons = object("Secret", &st.cluster.uuid);
    let raw = addons["data"]["keystone-auth.yaml"]
        .as_str()
        .unwrap_or_else(|| panic!("no keystone-auth.yaml in {addons}"));
    use base64::Engine as _;
    let text = base64::engine::general_purpose::STANDARD
        .decode(raw)
        .expect("base64");
    let text = String::from_utf8(text).expect("UTF-8");
    assert!(text.contains("site-k8s-admin"), "{text}");
    assert!(text.contains(r#"\"p1\""#), "the project: {text}");
    assert!(!text.contains("$PROJECT_ID"), "{text}");
}
