//! Status by watch (§ 5, § 10): the objects the host watches for a
//! cluster, the rows' new state from the host's copy of them
//! (`derive-status`, pure), and the side effects a status asks for
//! (`apply-effects`): the clean-up once the Cluster has gone, the server
//! group of a nodegroup that has gone, and the retirement of a rotated
//! credential.

use openkeel_magnum_driver::{
    ClusterState, DriverError, Effect, K8sObject, Labels, Observation, Selector, Status,
    StatusAnswer, Update, kube,
};

use crate::names::{
    ANNOTATION_CLOUD_CA, API_VERSION_CLUSTER, API_VERSION_CONTROL_PLANE,
    API_VERSION_INFRASTRUCTURE, KIND_OPENSTACK_CLUSTER, LABEL_CLUSTER_UUID, SUFFIX_CA,
    SUFFIX_CLOUD_CONFIG, SUFFIX_ETCD, SUFFIX_FRONT_PROXY, SUFFIX_SA, server_group_name,
};
use crate::ops::{cluster_selector, reference};
use crate::options::Options;
use crate::services::Services;
use crate::status::{self, Observed};

/// The Secrets (by their suffix after the `stack_id`) the clean-up deletes
/// once the Cluster has gone, and the only ones `delete-secret` may name.
const CLEANED_SECRETS: [&str; 5] = [
    SUFFIX_CLOUD_CONFIG,
    SUFFIX_CA,
    SUFFIX_ETCD,
    SUFFIX_FRONT_PROXY,
    SUFFIX_SA,
];

/// Deletes an application credential: detail `<user-id>/<id>`.
pub const EFFECT_DELETE_CREDENTIAL: &str = "delete-credential";
/// Deletes a Secret of the driver's namespace: detail its name.
pub const EFFECT_DELETE_SECRET: &str = "delete-secret";
/// Deletes a Nova server group: detail its name.
pub const EFFECT_DELETE_SERVER_GROUP: &str = "delete-server-group";
/// Writes the cloud-config Secret again with the cloud's CA bundle of
/// now, keeping its credential: detail the cluster's `stack_id`.
pub const EFFECT_REFRESH_CLOUD_CA: &str = "refresh-cloud-ca";
/// Rewrites the cloud-config Secret without the rotated credential's
/// annotation: detail the cluster's `stack_id`.
pub const EFFECT_FORGET_PREVIOUS_CREDENTIAL: &str = "forget-previous-credential";

/// The selectors of a cluster, in the order `derive` reads them: its
/// Cluster (by the label the driver and magnum-cluster-api give it), the
/// control plane, MachineDeployments, Machines and OpenStackCluster (by
/// the Cluster API label naming the Cluster), and its Secrets labelled
/// with its uuid (the cloud-config Secret). None before the cluster has a
/// `stack_id`: the host then polls.
pub fn watches(opts: &Options, st: &ClusterState) -> Vec<Selector> {
    let Some(stack_id) = stack_id(st) else {
        return Vec::new();
    };
    let ns = &opts.namespace;
    let by_uuid = |api_version: &str, kind: &str| Selector {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some(ns.clone()),
        labels: Labels::new().with(LABEL_CLUSTER_UUID, st.cluster.uuid.clone()),
    };
    vec![
        by_uuid(API_VERSION_CLUSTER, "Cluster"),
        cluster_selector(
            API_VERSION_CONTROL_PLANE,
            "KubeadmControlPlane",
            ns,
            stack_id,
        ),
        cluster_selector(API_VERSION_CLUSTER, "MachineDeployment", ns, stack_id),
        cluster_selector(API_VERSION_CLUSTER, "Machine", ns, stack_id),
        cluster_selector(
            API_VERSION_INFRASTRUCTURE,
            KIND_OPENSTACK_CLUSTER,
            ns,
            stack_id,
        ),
        by_uuid("v1", "Secret"),
    ]
}

fn stack_id(st: &ClusterState) -> Option<&str> {
    st.cluster.stack_id.as_deref().filter(|s| !s.is_empty())
}

/// The rows' new state from the host's copy of the cluster's objects.
/// Nothing changes until every selector is synced: a copy still filling
/// must never read as objects gone. `ca_digest` is the
/// [`crate::secrets::ca_digest`] of the cloud's CA bundle now: a
/// cloud-config Secret that records another asks for its refresh.
pub fn derive(
    opts: &Options,
    now: i64,
    st: &ClusterState,
    snapshot: &[Observation],
    ca_digest: &str,
) -> Result<StatusAnswer, DriverError> {
    if snapshot.iter().any(|o| !o.synced) {
        return Ok(StatusAnswer::none());
    }
    let Some(stack_id) = stack_id(st) else {
        return Ok(without_stack_id(st));
    };
    let objects = snapshot.iter().flat_map(|o| o.objects.iter());
    // Objects of another Cluster labelled with this uuid are not this
    // cluster's (a Cluster is found by its name).
    let own = objects.filter(|o| o.kind != "Cluster" || o.name == stack_id);
    let (capi, secrets): (Vec<&K8sObject>, Vec<&K8sObject>) = own.partition(|o| o.kind != "Secret");
    let obs = Observed::from_objects(capi)
        .map_err(|e| DriverError::failed(format!("a Cluster API object is malformed: {e}")))?;
    let cloud_config = secrets
        .iter()
        .find(|s| s.name == format!("{stack_id}{SUFFIX_CLOUD_CONFIG}"));
    let user = &st.cluster.user_id;

    if st.cluster.status == Some(Status::DeleteInProgress) && obs.cluster.is_none() {
        let credentials = cloud_config
            .map(|s| credentials_of(s, user))
            .unwrap_or_default();
        return Ok(deleted(st, stack_id, &credentials));
    }

    let update = status::derive(st, &obs, &opts.rules(now));
    let mut answer = StatusAnswer::from(update.clone());
    // A nodegroup whose objects have gone takes its server group along.
    for uuid in &update.deleted_nodegroups {
        if let Some(ng) = st.nodegroup(uuid) {
            answer = answer.with_effect(Effect::new(
                EFFECT_DELETE_SERVER_GROUP,
                server_group_name(stack_id, Some(&ng.name)),
            ));
        }
    }
    // The credential a rotation replaced goes once the infrastructure
    // provider is ready again (it works with the new one).
    // Only the annotation is read here: the credential itself (YAML in
    // base64) is parsed only when a deletion needs it.
    let ready = obs.infrastructure.as_ref().is_some_and(|i| i.status.ready);
    let previous = cloud_config
        .filter(|_| ready)
        .and_then(|s| previous_of(s, user));
    if let Some(previous) = &previous {
        answer = answer
            .with_effect(Effect::new(EFFECT_DELETE_CREDENTIAL, previous.clone()))
            .with_effect(Effect::new(EFFECT_FORGET_PREVIOUS_CREDENTIAL, stack_id));
    } else if st.cluster.status != Some(Status::DeleteInProgress)
        && cloud_config.is_some_and(|s| cloud_ca_stale(s, ca_digest))
    {
        // The operator changed the cloud's CA bundle (or the Secret
        // predates the record): the Secret is written again, once. The
        // forgetting above writes it with the bundle of now already.
        answer = answer.with_effect(Effect::new(EFFECT_REFRESH_CLOUD_CA, stack_id));
    }
    Ok(answer)
}

/// A cluster that never got a `stack_id`: a deletion is complete at once;
/// otherwise its health is unknown.
pub fn without_stack_id(st: &ClusterState) -> StatusAnswer {
    let mut cl = st.cluster.clone();
    if cl.status == Some(Status::DeleteInProgress) {
        cl.status = Some(Status::DeleteComplete);
        cl.status_reason = None;
        return StatusAnswer::from(Update::cluster(cl));
    }
    if cl.health_status.as_deref() == Some(status::UNKNOWN) {
        return StatusAnswer::none();
    }
    cl.health_status = Some(status::UNKNOWN.into());
    cl.health_status_reason = Some(Default::default());
    StatusAnswer::from(Update::cluster(cl))
}

/// The credentials the cloud-config Secret records, as `<user>/<id>`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Credentials {
    pub current: Option<String>,
    pub previous: Option<String>,
}

/// What the cloud-config Secret records; a credential without an owner
/// (magnum-cluster-api's) is the cluster user's.
fn credentials_of(secret: &K8sObject, cluster_user: &str) -> Credentials {
    let v = secret.value().unwrap_or_default();
    let current = crate::secrets::app_credential_from_secret(&v)
        .map(|c| format!("{}/{}", crate::ops::owner(&c.user_id, cluster_user), c.id));
    Credentials {
        current,
        previous: previous_of(secret, cluster_user),
    }
}

/// The credential a rotation replaced, as the Secret's annotation records
/// it (`<user-id>/<id>`).
fn previous_of(secret: &K8sObject, cluster_user: &str) -> Option<String> {
    let annotated = serde_json::json!({ "metadata": { "annotations": annotations_of(secret)? } });
    crate::secrets::previous_app_credential(&annotated)
        .map(|p| format!("{}/{}", crate::ops::owner(&p.user_id, cluster_user), p.id))
}

/// What the status reads of a Secret of the snapshot: its annotations and
/// the names of its data keys, without decoding the data.
#[derive(serde::Deserialize)]
struct SecretHead {
    metadata: SecretMeta,
    #[serde(default)]
    data: std::collections::BTreeMap<String, serde::de::IgnoredAny>,
}

#[derive(serde::Deserialize)]
struct SecretMeta {
    #[serde(default)]
    annotations: std::collections::BTreeMap<String, String>,
}

fn secret_head(secret: &K8sObject) -> Option<SecretHead> {
    serde_json::from_str(&secret.json).ok()
}

/// Whether the cloud-config Secret records another CA bundle than
/// `digest` and holds a credential to write it again with (a Secret
/// without one could never be refreshed, and would be asked for at every
/// pass).
fn cloud_ca_stale(secret: &K8sObject, digest: &str) -> bool {
    secret_head(secret).is_some_and(|s| {
        s.data.contains_key(crate::secrets::KEY_CLOUDS_YAML)
            && s.metadata
                .annotations
                .get(ANNOTATION_CLOUD_CA)
                .map(String::as_str)
                != Some(digest)
    })
}

/// The annotations of a Secret of the snapshot.
fn annotations_of(secret: &K8sObject) -> Option<std::collections::BTreeMap<String, String>> {
    secret_head(secret).map(|s| s.metadata.annotations)
}

/// The deletion of a cluster whose Cluster has gone: `DELETE_COMPLETE`,
/// after its credentials, Secrets and server groups (§ 5.5).
fn deleted(st: &ClusterState, stack_id: &str, creds: &Credentials) -> StatusAnswer {
    let mut cl = st.cluster.clone();
    cl.status = Some(Status::DeleteComplete);
    cl.status_reason = None;
    let mut answer = StatusAnswer::from(Update::cluster(cl));
    for c in [&creds.current, &creds.previous].into_iter().flatten() {
        answer = answer.with_effect(Effect::new(EFFECT_DELETE_CREDENTIAL, c.clone()));
    }
    for suffix in CLEANED_SECRETS {
        answer = answer.with_effect(Effect::new(
            EFFECT_DELETE_SECRET,
            format!("{stack_id}{suffix}"),
        ));
    }
    answer = answer.with_effect(Effect::new(
        EFFECT_DELETE_SERVER_GROUP,
        server_group_name(stack_id, None),
    ));
    for ng in st.nodegroups.iter().filter(|ng| !ng.is_master()) {
        answer = answer.with_effect(Effect::new(
            EFFECT_DELETE_SERVER_GROUP,
            server_group_name(stack_id, Some(&ng.name)),
        ));
    }
    answer
}

/// Runs the effects a status asked for, in order.
pub fn apply_effects<S: Services>(
    svc: &S,
    opts: &Options,
    st: &ClusterState,
    effects: Vec<Effect>,
) -> Result<(), DriverError> {
    for e in effects {
        match e.name.as_str() {
            EFFECT_DELETE_CREDENTIAL => {
                let (user, id) = e.detail.split_once('/').unwrap_or(("", &e.detail));
                svc.delete_credential(user, id).map_err(|err| {
                    DriverError::failed(format!("delete application credential {id}: {err}"))
                })?;
            }
            EFFECT_DELETE_SECRET => {
                own_secret(st, &e.detail)?;
                kube::delete(&reference("v1", "Secret", &opts.namespace, &e.detail))?;
            }
            EFFECT_DELETE_SERVER_GROUP => {
                // A group Nova cannot delete now leaks rather than block
                // the deletion, as in magnum-cluster-api.
                if let Err(err) = svc.delete_server_group(&e.detail) {
                    openkeel_magnum_driver::log::warn!(
                        "server group {} not deleted: {err}",
                        e.detail
                    );
                }
            }
            EFFECT_FORGET_PREVIOUS_CREDENTIAL => {
                crate::ops::forget_previous_credential(svc, opts, st)?;
            }
            EFFECT_REFRESH_CLOUD_CA => {
                crate::ops::refresh_cloud_ca(svc, opts, st)?;
            }
            other => return Err(DriverError::failed(format!("unknown effect {other}"))),
        }
    }
    Ok(())
}

/// Effects name the cluster's own objects only.
fn own_secret(st: &ClusterState, name: &str) -> Result<(), DriverError> {
    let ok = stack_id(st).is_some_and(|s| {
        CLEANED_SECRETS
            .iter()
            .any(|suffix| name == format!("{s}{suffix}"))
    });
    if ok {
        return Ok(());
    }
    Err(DriverError::failed(format!(
        "the Secret {name} is not one of the cluster's"
    )))
}
