//! The driver's operations (driver-capi.md § 8): what each Magnum
//! action declares in the management cluster and in OpenStack, and the
//! rows it moves to `*_IN_PROGRESS`. Every step is idempotent, so a
//! retry after a failure converges; completion arrives later by watch
//! ([`crate::watch`]).

use std::hash::{BuildHasher, Hasher};

use openkeel_magnum_driver::{
    ClusterState, DriverError, HostError, K8sObject, Labels, NodeGroup, ObjectRef, Resize,
    Selector, Status, Update, Upgrade, config, kube,
};
use serde_json::Value;

use crate::addons::{
    AddonInput, cinder_csi_enabled, cloud_provider_secret, cluster_addons_secret,
    cluster_resource_sets, cni_manifest, cni_manifest_file,
};
use crate::cluster::{build_cluster, machine_deployment_topology, settle_autoscaler_bounds};
use crate::input::{Capacity, Image, Input, LiveInfra, Resolved, ResolvedNodeGroup};
use crate::labels::{AUTO_HEALING_ENABLED, KUBE_TAG, KubeVersion, OperatingSystem};
use crate::manila::manila_csi_enabled;
use crate::names::{
    ANNOTATION_DELETE_MACHINE, API_VERSION_CLUSTER, API_VERSION_INFRASTRUCTURE, GROUP_ADDONS,
    KIND_OPENSTACK_CLUSTER, LABEL_CLUSTER_NAME, LABEL_CLUSTER_UUID, LABEL_DEPLOYMENT_NAME,
    SUFFIX_CLOUD_CONFIG, SUFFIX_CLOUD_PROVIDER, app_credential_name, server_group_name,
};
use crate::options::Options;
use crate::secrets::{
    PreviousCredential, app_credential_description, app_credential_from_secret, ca_secrets,
    cloud_config_secret,
};
use crate::services::Services;

/// The network drivers (CNIs) the driver installs.
pub const SUPPORTED_CNIS: [&str; 2] = ["calico", "cilium"];

/// The label of the server group policies, and its default.
const SERVER_GROUP_POLICIES: &str = "server_group_policies";
const DEFAULT_SERVER_GROUP_POLICY: &str = "soft-anti-affinity";

/// The API version of the add-on kinds.
fn api_version_addons() -> String {
    format!("{GROUP_ADDONS}/v1beta2")
}

/// A reference to an object of the driver's namespace.
pub fn reference(api_version: &str, kind: &str, namespace: &str, name: &str) -> ObjectRef {
    ObjectRef {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some(namespace.into()),
        name: name.into(),
    }
}

/// The selector of the objects of a kind that belong to the Cluster
/// `stack_id` (Cluster API labels every object of a cluster with its
/// name).
pub fn cluster_selector(
    api_version: &str,
    kind: &str,
    namespace: &str,
    stack_id: &str,
) -> Selector {
    Selector {
        api_version: api_version.into(),
        kind: kind.into(),
        namespace: Some(namespace.into()),
        labels: Labels::new().with(LABEL_CLUSTER_NAME, stack_id),
    }
}

fn object(v: &Value) -> Result<K8sObject, DriverError> {
    Ok(K8sObject::from_value(v)?)
}

fn apply(v: &Value) -> Result<(), DriverError> {
    kube::apply(&object(v)?).map(drop).map_err(|e| {
        let what = format!(
            "{} {}",
            v["kind"].as_str().unwrap_or("object"),
            v["metadata"]["name"].as_str().unwrap_or("")
        );
        DriverError::failed(format!("the management cluster refused {what}: {e}"))
    })
}

/// A lowercase-alphanumeric suffix of `n` characters from the random
/// numbers the host gives the component.
pub fn random_suffix(n: usize) -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let mut out = String::with_capacity(n);
    while out.len() < n {
        // RandomState is seeded from the system's random source (WASI's
        // random_get in the component).
        let mut bits = std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish();
        for _ in 0..8 {
            if out.len() == n {
                break;
            }
            out.push(char::from(ALPHABET[(bits % 36) as usize]));
            bits /= 36;
        }
    }
    out
}

/// Whether a nodegroup is the control plane.
pub fn is_master(ng: &NodeGroup) -> bool {
    ng.is_master()
}

/// Whether a nodegroup is being deleted.
fn deleting(ng: &NodeGroup) -> bool {
    matches!(
        ng.status,
        Some(Status::DeleteInProgress | Status::DeleteFailed | Status::DeleteComplete)
    )
}

/// A nodegroup name that can become a label value and part of object
/// names: at most 63 lowercase letters, digits and `-`, starting and
/// ending with a letter or digit (magnum-cluster-api fails others while
/// building).
pub fn validate_nodegroup_name(name: &str) -> Result<(), DriverError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
        && !name.starts_with('-')
        && !name.ends_with('-');
    if ok {
        return Ok(());
    }
    Err(DriverError::invalid(format!(
        "Nodegroup name {name:?} is not valid for the Cluster API driver: use at most 63 \
         lowercase letters, digits and '-', starting and ending with a letter or digit."
    )))
}

/// The checks magnum-cluster-api makes while it builds, made before
/// anything is written (§ 8.1): `kube_tag`, the CNI, the distro, the
/// master count, the nodegroup names and every label the objects read.
pub fn validate_create(st: &ClusterState) -> Result<(), DriverError> {
    KubeVersion::from_labels(st.cluster.labels())?;
    let cni = st.template.network_driver.as_deref().unwrap_or("");
    if !SUPPORTED_CNIS.contains(&cni) {
        return Err(DriverError::invalid_parameter_value(format!(
            "Network driver type {cni} is not supported, expecting a {}/unspecified network driver.",
            SUPPORTED_CNIS.join("/")
        )));
    }
    OperatingSystem::from_distro(st.template.cluster_distro.as_deref().unwrap_or(""))?;
    for ng in &st.nodegroups {
        if is_master(ng) {
            openkeel_magnum_driver::validate_master_size(ng.node_count.unwrap_or(1))?;
        } else {
            validate_nodegroup_name(&ng.name)?;
        }
    }
    // Every label the objects read, read once as the builders will: a
    // malformed one is a 400 now rather than a failed create later.
    let input = Input {
        state: st.clone(),
        stack_id: "kube-check".into(),
        namespace: crate::names::NAMESPACE.into(),
        class_version: crate::names::CLASS_VERSION.into(),
        resolved: placeholder_resolved(st),
        ..Input::default()
    };
    build_cluster(&input)?;
    crate::addons::validate_labels(cni, st.cluster.labels())?;
    if crate::cluster::autoscaling(&st.cluster)? {
        crate::autoscaler::build_autoscaler(&input)?;
    }
    Ok(())
}

/// Lookups that satisfy the builders without asking OpenStack (for the
/// synchronous checks).
fn placeholder_resolved(st: &ClusterState) -> Resolved {
    let mut r = Resolved::default();
    for ng in st.nodegroups.iter().filter(|ng| !is_master(ng)) {
        r.node_groups
            .insert(ng.name.clone(), ResolvedNodeGroup::default());
    }
    r
}

/// The first non-empty value.
fn first<'a>(values: &[Option<&'a String>]) -> &'a str {
    values
        .iter()
        .flatten()
        .map(|s| s.as_str())
        .find(|s| !s.is_empty())
        .unwrap_or("")
}

/// The first policy of a `server_group_policies` value.
fn first_policy(value: Option<&str>) -> String {
    value
        .and_then(|v| v.split(',').map(str::trim).find(|p| !p.is_empty()))
        .unwrap_or(DEFAULT_SERVER_GROUP_POLICY)
        .to_string()
}

fn lookup_error(what: &str, reference: &str, e: HostError) -> DriverError {
    match e {
        // Magnum's own 400s (FlavorNotFound, ImageNotFound…) reach the
        // caller as they are.
        HostError::Client(m) => DriverError::client(m.status, &m.kind, m.message),
        e => DriverError::failed(format!("resolve {what} {reference}: {e}")),
    }
}

/// The operations of one call: the driver's options and the services.
pub struct Ops<'a, S: Services> {
    pub svc: &'a S,
    pub opts: &'a Options,
}

impl<S: Services> Ops<'_, S> {
    fn reference(&self, api_version: &str, kind: &str, name: &str) -> ObjectRef {
        reference(api_version, kind, &self.opts.namespace, name)
    }

    fn flavor(&self, reference: &str) -> Result<String, DriverError> {
        if reference.is_empty() {
            return Ok(String::new());
        }
        self.svc
            .flavor_name(reference)
            .map_err(|e| lookup_error("flavor", reference, e))
    }

    fn image(&self, reference: &str) -> Result<Image, DriverError> {
        if reference.is_empty() {
            return Ok(Image::default());
        }
        let img = self
            .svc
            .image(reference)
            .map_err(|e| lookup_error("image", reference, e))?;
        Ok(Image {
            id: img.id,
            disk_bus: img.disk_bus.unwrap_or_default(),
        })
    }

    fn network(&self, reference: &str) -> Result<String, DriverError> {
        if reference.is_empty() {
            return Ok(String::new());
        }
        self.svc
            .network_id(reference)
            .map_err(|e| lookup_error("network", reference, e))
    }

    fn ensure_server_group(
        &self,
        r: &mut Resolved,
        name: String,
        policy: &str,
    ) -> Result<(), DriverError> {
        let id = self
            .svc
            .ensure_server_group(&name, policy)
            .map_err(|e| DriverError::failed(format!("ensure server group {name}: {e}")))?;
        r.server_groups.insert(name, id);
        Ok(())
    }

    /// Looks up flavors, images and networks, and ensures the server
    /// groups of the control plane and of every worker nodegroup.
    fn resolve(&self, st: &ClusterState, stack_id: &str) -> Result<Resolved, DriverError> {
        let (cl, tpl) = (&st.cluster, &st.template);
        let mut r = Resolved {
            control_plane_flavor: self.flavor(first(&[
                cl.master_flavor_id.as_ref(),
                tpl.master_flavor_id.as_ref(),
            ]))?,
            ..Resolved::default()
        };
        let master_image = st.default_master().and_then(|m| m.image_id.as_ref());
        r.control_plane_image = self.image(first(&[master_image, tpl.image_id.as_ref()]))?;
        r.external_network_id = self.network(first(&[tpl.external_network_id.as_ref()]))?;
        r.fixed_network_id = self.network(first(&[
            cl.fixed_network.as_ref(),
            tpl.fixed_network.as_ref(),
        ]))?;
        let subnet = first(&[cl.fixed_subnet.as_ref(), tpl.fixed_subnet.as_ref()]);
        if !subnet.is_empty() {
            r.fixed_subnet_id = self
                .svc
                .subnet_id(subnet)
                .map_err(|e| lookup_error("subnet", subnet, e))?;
        }
        let cluster_policy = cl.label(SERVER_GROUP_POLICIES);
        self.ensure_server_group(
            &mut r,
            server_group_name(stack_id, None),
            &first_policy(cluster_policy),
        )?;
        let autoscaled = crate::cluster::autoscaling(cl)?;
        for ng in st.nodegroups.iter().filter(|ng| !is_master(ng)) {
            let flavor = first(&[
                ng.flavor_id.as_ref(),
                cl.flavor_id.as_ref(),
                tpl.flavor_id.as_ref(),
            ]);
            let rn = ResolvedNodeGroup {
                flavor: self.flavor(flavor)?,
                image: self.image(first(&[ng.image_id.as_ref(), tpl.image_id.as_ref()]))?,
                // What a node of the group holds, for the autoscaler to
                // scale it from zero.
                capacity: if autoscaled && !flavor.is_empty() {
                    let details = self
                        .svc
                        .flavor(flavor)
                        .map_err(|e| lookup_error("flavor", flavor, e))?;
                    Some(Capacity::from_flavor(&details)?)
                } else {
                    None
                },
            };
            r.node_groups.insert(ng.name.clone(), rn);
            if deleting(ng) {
                continue;
            }
            let policy = first_policy(ng.label(SERVER_GROUP_POLICIES).or(cluster_policy));
            self.ensure_server_group(&mut r, server_group_name(stack_id, Some(&ng.name)), &policy)?;
        }
        Ok(r)
    }

    /// The fields of the live OpenStackCluster CAPO does not let change.
    fn live_infra(&self, stack_id: &str) -> Result<Option<LiveInfra>, DriverError> {
        let sel = cluster_selector(
            API_VERSION_INFRASTRUCTURE,
            KIND_OPENSTACK_CLUSTER,
            &self.opts.namespace,
            stack_id,
        );
        let Some(osc) = kube::list(&sel)?.into_iter().next() else {
            return Ok(None);
        };
        let v = osc.value()?;
        let lb = &v["spec"]["apiServerLoadBalancer"];
        let s = |v: &Value| v.as_str().unwrap_or("").to_string();
        Ok(Some(LiveInfra {
            lb_provider: s(&lb["provider"]),
            lb_flavor: s(&lb["flavor"]),
            lb_availability_zone: s(&lb["availabilityZone"]),
            disable_floating_ip: v["spec"]["disableAPIServerFloatingIP"].as_bool(),
        }))
    }

    /// Everything the builders read for `st`.
    fn input(&self, st: &ClusterState, stack_id: &str) -> Result<Input, DriverError> {
        Ok(Input {
            state: st.clone(),
            stack_id: stack_id.into(),
            namespace: self.opts.namespace.clone(),
            class_version: self.opts.class_version.clone(),
            resolved: self.resolve(st, stack_id)?,
            live: self.live_infra(stack_id)?,
            default_boot_volume_size: self.opts.default_boot_volume_size,
            default_boot_volume_type: self.opts.default_boot_volume_type.clone(),
            default_volume_type: String::new(),
            autoscaler_image_repository: self.opts.autoscaler_image_repository.clone(),
            registries: self.opts.registries.clone(),
        })
    }

    /// The live Cluster `stack_id`, if any.
    fn live_cluster(&self, stack_id: &str) -> Result<Option<Value>, DriverError> {
        let r = self.reference(API_VERSION_CLUSTER, "Cluster", stack_id);
        Ok(match kube::get(&r)? {
            Some(o) => Some(o.value()?),
            None => None,
        })
    }

    /// Renders and applies the Cluster of `st`. Unless the call is an
    /// upgrade, a Cluster that already uses another ClusterClass (one
    /// adopted from magnum-cluster-api, pinned to its class) keeps that
    /// class and gets only the variables the class declares (§ 10).
    /// `surge` (an upgrade's `max_batch_size`) becomes the workers'
    /// rollout `maxSurge`; without it, the workers keep the rollout the
    /// live Cluster has.
    fn apply_cluster(
        &self,
        st: &ClusterState,
        stack_id: &str,
        upgrade: bool,
        surge: Option<i32>,
    ) -> Result<(), DriverError> {
        let input = self.input(st, stack_id)?;
        let mut c = build_cluster(&input)?;
        let live = self.live_cluster(stack_id)?;
        if let Some(live) = &live
            && !upgrade
        {
            self.keep_pinned_class(&mut c, live)?;
        }
        set_rollout(&mut c, live.as_ref(), surge);
        apply(&c)?;
        self.apply_autoscaler(&input)
    }

    /// The cluster autoscaler of an autoscaled cluster, applied; removed
    /// from a cluster that is not (or no longer) autoscaled.
    fn apply_autoscaler(&self, input: &Input) -> Result<(), DriverError> {
        if crate::cluster::autoscaling(&input.state.cluster)? {
            for obj in crate::autoscaler::build_autoscaler(input)? {
                apply(&obj)?;
            }
            return Ok(());
        }
        for r in crate::autoscaler::autoscaler_refs(input) {
            kube::delete(&r)?;
        }
        Ok(())
    }

    /// Points `c` at the class the live Cluster uses, when it is not the
    /// driver's, and drops the variables that class does not declare.
    fn keep_pinned_class(&self, c: &mut Value, live: &Value) -> Result<(), DriverError> {
        let live_ref = &live["spec"]["topology"]["classRef"];
        if live_ref["name"] == c["spec"]["topology"]["classRef"]["name"] || live_ref.is_null() {
            return Ok(());
        }
        let class = live_ref["name"].as_str().unwrap_or("");
        let ns = live_ref["namespace"]
            .as_str()
            .filter(|n| !n.is_empty())
            .unwrap_or(&self.opts.namespace);
        let r = reference(API_VERSION_CLUSTER, "ClusterClass", ns, class);
        let cc = kube::get(&r)?
            .ok_or_else(|| {
                DriverError::failed(format!(
                    "the ClusterClass {class} the cluster is pinned to does not exist"
                ))
            })?
            .value()?;
        let declared: Vec<&str> = cc["spec"]["variables"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|v| v["name"].as_str())
            .collect();
        let keep = |vars: &mut Value| {
            if let Some(list) = vars.as_array_mut() {
                list.retain(|v| v["name"].as_str().is_some_and(|n| declared.contains(&n)));
            }
        };
        let topology = &mut c["spec"]["topology"];
        topology["classRef"] = live_ref.clone();
        keep(&mut topology["variables"]);
        if let Some(mds) = topology["workers"]["machineDeployments"].as_array_mut() {
            for md in mds {
                keep(&mut md["variables"]["overrides"]);
            }
        }
        Ok(())
    }

    /// A `kube-xxxxx` name no other cluster's Cluster has.
    fn new_stack_id(&self, cluster_uuid: &str) -> Result<String, DriverError> {
        for _ in 0..10 {
            let name = format!("kube-{}", random_suffix(5));
            match self.live_cluster(&name)? {
                None => return Ok(name),
                Some(c) if c["metadata"]["labels"][LABEL_CLUSTER_UUID] == cluster_uuid => {
                    return Ok(name);
                }
                Some(_) => {}
            }
        }
        Err(DriverError::failed(
            "no free cluster name after 10 attempts",
        ))
    }

    /// Applies the ClusterClass and its templates.
    fn apply_class(&self) -> Result<(), DriverError> {
        for obj in crate::classes::class_objects(&self.opts.namespace, &self.opts.class_version) {
            apply(&obj)?;
        }
        Ok(())
    }

    /// Starts building a cluster (§ 8.1): the class, the cloud credential
    /// and its Secret, the CA Secrets, the add-ons, the server groups and
    /// finally the Cluster. A cluster that already has a `stack_id` keeps
    /// it, so a retried create converges.
    pub fn create_cluster(&self, st: ClusterState) -> Result<Update, DriverError> {
        validate_create(&st)?;
        let stack_id = match st.cluster.stack_id.as_deref().filter(|s| !s.is_empty()) {
            Some(s) => s.to_string(),
            None => self.new_stack_id(&st.cluster.uuid)?,
        };
        let mut cl = st.cluster.clone();
        cl.stack_id = Some(stack_id.clone());
        cl.status = Some(Status::CreateInProgress);
        cl.status_reason = None;
        let mut upd = Update::cluster(cl.clone());
        let mut next = st.clone();
        next.cluster = cl;
        for ng in &mut next.nodegroups {
            if !is_master(ng)
                && let Some(settled) = settle_autoscaler_bounds(&st.cluster, ng)?
            {
                *ng = settled;
            }
            ng.stack_id = Some(stack_id.clone());
            ng.status = Some(Status::CreateInProgress);
            ng.status_reason = None;
            upd = upd.with_nodegroup(ng.clone());
        }
        let built = self
            .apply_class()
            .and_then(|()| self.ensure_cloud_config(&next, &stack_id))
            .and_then(|()| self.apply_ca_secrets(&stack_id))
            .and_then(|()| self.apply_addons(&next, &stack_id, false))
            .and_then(|()| self.apply_cluster(&next, &stack_id, false, None));
        match built {
            Ok(()) => Ok(upd),
            // The rows keep the stack_id: a retry, or the delete, finds
            // what was written.
            Err(e) => Err(DriverError::failed_after(e.to_string(), upd)),
        }
    }

    /// A PATCH of `node_count`: a resize of the default worker to the
    /// count already in its row.
    pub fn update_cluster(&self, st: ClusterState) -> Result<Update, DriverError> {
        let ng = st.default_worker().ok_or_else(|| {
            DriverError::failed(format!(
                "cluster {} has no default worker nodegroup",
                st.cluster.uuid
            ))
        })?;
        let req = Resize {
            nodegroup_uuid: ng.uuid.clone(),
            node_count: ng.node_count.unwrap_or(0),
            nodes_to_remove: Vec::new(),
        };
        self.resize_cluster(st, req)
    }

    /// Resizes one nodegroup (§ 8.2): the Machines `nodes_to_remove`
    /// names get the delete-machine annotation first, so that Cluster API
    /// removes exactly those; then the new size is applied.
    pub fn resize_cluster(&self, st: ClusterState, req: Resize) -> Result<Update, DriverError> {
        let stack_id = require_stack_id(&st)?;
        let mut ng = st.nodegroup(&req.nodegroup_uuid).cloned().ok_or_else(|| {
            DriverError::client(
                404,
                "NodeGroupNotFound",
                format!("Nodegroup {} could not be found.", req.nodegroup_uuid),
            )
        })?;
        if !is_master(&ng) && !req.nodes_to_remove.is_empty() {
            self.mark_machines_for_deletion(&stack_id, &ng.name, &req.nodes_to_remove)?;
        }
        ng.node_count = Some(req.node_count);
        ng.status = Some(Status::UpdateInProgress);
        ng.status_reason = None;
        self.nodegroup_change(st, ng, &stack_id)
    }

    /// The cluster in `UPDATE_IN_PROGRESS` with `ng` changed, applied.
    fn nodegroup_change(
        &self,
        st: ClusterState,
        ng: NodeGroup,
        stack_id: &str,
    ) -> Result<Update, DriverError> {
        let mut cl = st.cluster.clone();
        cl.status = Some(Status::UpdateInProgress);
        cl.status_reason = None;
        let mut next = with_nodegroup(st, ng.clone());
        next.cluster = cl.clone();
        self.apply_cluster(&next, stack_id, false, None)?;
        Ok(Update::cluster(cl).with_nodegroup(ng))
    }

    /// Annotates the Machines of a nodegroup that `nodes` names (a Nova
    /// server uuid, a Machine, Node or OpenStackMachine name); unknown
    /// entries are ignored, as magnum-cluster-api ignores them. Answers
    /// the annotated Machine names, sorted.
    fn mark_machines_for_deletion(
        &self,
        stack_id: &str,
        nodegroup: &str,
        nodes: &[String],
    ) -> Result<Vec<String>, DriverError> {
        let sel = self.nodegroup_selector("Machine", stack_id, nodegroup);
        let want: Vec<&str> = nodes
            .iter()
            .map(|n| n.trim())
            .filter(|n| !n.is_empty())
            .collect();
        let mut marked = Vec::new();
        for m in kube::list(&sel)? {
            let v = m.value()?;
            if !machine_matches(&v, &want) {
                continue;
            }
            // Only metadata: the driver owns nothing else of a Machine.
            let patch = serde_json::json!({
                "apiVersion": API_VERSION_CLUSTER,
                "kind": "Machine",
                "metadata": {
                    "name": m.name,
                    "namespace": self.opts.namespace,
                    "annotations": { ANNOTATION_DELETE_MACHINE: "yes" },
                },
            });
            apply(&patch)?;
            marked.push(m.name.clone());
        }
        marked.sort();
        Ok(marked)
    }

    /// Moves the cluster, or one nodegroup, to a template (§ 8.3), checked
    /// first (at most one minor version up): the cluster takes the
    /// template's `kube_tag` and the driver's current class, every
    /// nodegroup (or the named non-default one) the template's image.
    /// `max_batch_size` becomes the rollout's `maxSurge`.
    pub fn upgrade_cluster(&self, st: ClusterState, req: Upgrade) -> Result<Update, DriverError> {
        let stack_id = require_stack_id(&st)?;
        let kube_tag = req
            .template
            .labels
            .as_ref()
            .and_then(|l| l.0.get(KUBE_TAG))
            .cloned()
            .unwrap_or_default();
        crate::labels::validate_upgrade(st.cluster.label(KUBE_TAG).unwrap_or(""), &kube_tag)?;
        let mut cl = st.cluster.clone();
        cl.cluster_template_id = req.template.uuid.clone();
        cl.set_label(KUBE_TAG, kube_tag.clone());
        cl.status = Some(Status::UpdateInProgress);
        cl.status_reason = None;
        let mut upd = Update::cluster(cl.clone());
        let target = req
            .nodegroup_uuid
            .as_deref()
            .and_then(|u| st.nodegroup(u))
            .filter(|ng| !ng.is_default())
            .map(|ng| ng.uuid.clone());
        let mut next = st.clone();
        for ng in &mut next.nodegroups {
            if target.as_ref().is_some_and(|t| *t != ng.uuid) || deleting(ng) {
                continue;
            }
            if let Some(image) = &req.template.image_id {
                ng.image_id = Some(image.clone());
            }
            ng.set_label(KUBE_TAG, kube_tag.clone());
            ng.status = Some(Status::UpdateInProgress);
            ng.status_reason = None;
            upd = upd.with_nodegroup(ng.clone());
        }
        next.cluster = cl;
        next.template = req.template;
        self.apply_class()?;
        self.apply_addons(&next, &stack_id, true)?;
        let surge = (req.max_batch_size > 0).then_some(req.max_batch_size);
        self.apply_cluster(&next, &stack_id, true, surge)?;
        Ok(upd)
    }

    /// Starts building a new nodegroup (§ 8.4).
    pub fn create_nodegroup(
        &self,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        validate_nodegroup_name(&ng.name)?;
        let stack_id = require_stack_id(&st)?;
        if let Some(settled) = settle_autoscaler_bounds(&st.cluster, &ng)? {
            ng = settled;
        }
        ng.stack_id = Some(stack_id.clone());
        ng.status = Some(Status::CreateInProgress);
        ng.status_reason = None;
        self.nodegroup_change(st, ng, &stack_id)
    }

    /// Re-renders a nodegroup's min/max, labels and taints (§ 8.4). When
    /// its entry in the live Cluster is already what it would be, nothing
    /// is written and no status changes, as in magnum-cluster-api.
    pub fn update_nodegroup(
        &self,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        let stack_id = require_stack_id(&st)?;
        if let Some(live) = self.live_cluster(&stack_id)? {
            let next = with_nodegroup(st.clone(), ng.clone());
            let input = self.input(&next, &stack_id)?;
            let healing = st.cluster.labels().bool(AUTO_HEALING_ENABLED, true)?;
            let want = machine_deployment_topology(&input, &ng, healing)?;
            let same = live["spec"]["topology"]["workers"]["machineDeployments"]
                .as_array()
                .into_iter()
                .flatten()
                .any(|md| {
                    // The rollout an upgrade set is not the nodegroup's.
                    let mut md = md.clone();
                    if let Some(m) = md.as_object_mut() {
                        m.remove("rollout");
                    }
                    md["name"] == ng.name.as_str() && json_equal(&md, &want)
                });
            if same {
                return Ok(Update::none());
            }
        }
        ng.status = Some(Status::UpdateInProgress);
        ng.status_reason = None;
        self.nodegroup_change(st, ng, &stack_id)
    }

    /// Takes a nodegroup out of the topology (§ 8.4). One whose
    /// MachineDeployment and Machines are already gone is destroyed at
    /// once, with its server group.
    pub fn delete_nodegroup(
        &self,
        st: ClusterState,
        mut ng: NodeGroup,
    ) -> Result<Update, DriverError> {
        let stack_id = require_stack_id(&st)?;
        ng.status = Some(Status::DeleteInProgress);
        ng.status_reason = None;
        let upd = self.nodegroup_change(st, ng.clone(), &stack_id)?;
        if self.nodegroup_gone(&stack_id, &ng.name)? {
            // A group already gone is not an error; one that cannot be
            // deleted now is deleted by the cluster's clean-up.
            let _ = self
                .svc
                .delete_server_group(&server_group_name(&stack_id, Some(&ng.name)));
            let mut out = Update::none().with_deleted_nodegroup(ng.uuid);
            out.cluster = upd.cluster;
            return Ok(out);
        }
        Ok(upd)
    }

    /// The selector of a nodegroup's objects of `kind` (Cluster API labels
    /// them with the Cluster's and the MachineDeployment topology's names).
    fn nodegroup_selector(&self, kind: &str, stack_id: &str, nodegroup: &str) -> Selector {
        Selector {
            labels: Labels::new()
                .with(LABEL_CLUSTER_NAME, stack_id)
                .with(LABEL_DEPLOYMENT_NAME, nodegroup),
            ..cluster_selector(API_VERSION_CLUSTER, kind, &self.opts.namespace, stack_id)
        }
    }

    /// Whether a nodegroup's MachineDeployment and Machines are all gone.
    fn nodegroup_gone(&self, stack_id: &str, name: &str) -> Result<bool, DriverError> {
        for kind in ["MachineDeployment", "Machine"] {
            if !kube::list(&self.nodegroup_selector(kind, stack_id, name))?.is_empty() {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Starts deleting the cluster (§ 8.8): the Octavia load balancers the
    /// cloud provider made for it are deleted (without waiting: Octavia
    /// finishes them while Cluster API tears the servers down), then the
    /// add-on sets and their Secrets and the Cluster. What is already gone
    /// is skipped, so a repeated DELETE carries on where the last one
    /// stopped. The credential, the remaining Secrets and the server
    /// groups go once the Cluster has gone (the status' clean-up), so that
    /// the infrastructure provider keeps its credential while it works.
    pub fn delete_cluster(&self, st: ClusterState) -> Result<Update, DriverError> {
        let mut cl = st.cluster.clone();
        cl.status = Some(Status::DeleteInProgress);
        cl.status_reason = None;
        let upd = Update::cluster(cl);
        let Some(stack_id) = st.cluster.stack_id.clone().filter(|s| !s.is_empty()) else {
            return Ok(upd);
        };
        self.delete_load_balancers(&st)?;
        let ns = &self.opts.namespace;
        let addons = api_version_addons();
        let uuid = &st.cluster.uuid;
        let provider = format!("{stack_id}{SUFFIX_CLOUD_PROVIDER}");
        for r in [
            reference(&addons, "ClusterResourceSet", ns, &provider),
            reference("v1", "Secret", ns, &provider),
            reference(&addons, "ClusterResourceSet", ns, uuid),
            reference("v1", "Secret", ns, uuid),
            reference(API_VERSION_CLUSTER, "Cluster", ns, &stack_id),
        ] {
            kube::delete(&r)
                .map_err(|e| DriverError::failed(format!("delete {} {}: {e}", r.kind, r.name)))?;
        }
        let input = Input {
            stack_id: stack_id.clone(),
            namespace: ns.clone(),
            ..Input::default()
        };
        for r in crate::autoscaler::autoscaler_refs(&input) {
            kube::delete(&r)?;
        }
        Ok(upd)
    }

    /// Deletes the load balancers Kubernetes' cloud provider made for the
    /// cluster (its project's, named or described after the cluster),
    /// without waiting for them to go.
    fn delete_load_balancers(&self, st: &ClusterState) -> Result<(), DriverError> {
        let lbs = self
            .svc
            .load_balancers(&st.cluster.project_id)
            .map_err(|e| DriverError::failed(format!("list load balancers: {e}")))?;
        for lb in lbs.unwrap_or_default() {
            if !crate::loadbalancers::owned(&lb, &st.cluster.uuid, &st.cluster.project_id) {
                continue;
            }
            self.svc.delete_load_balancer(&lb).map_err(|e| {
                DriverError::failed(format!("delete load balancer {} ({}): {e}", lb.name, lb.id))
            })?;
        }
        Ok(())
    }

    /// Replaces the cluster's cloud credential (§ 6.2): a new one is made
    /// as the caller and written to the cloud-config Secret, which records
    /// its owner; the old one is recorded there and deleted once the
    /// infrastructure provider works with the new one (the status'
    /// clean-up); the reconciled add-on Secret, which holds the workload
    /// cluster's `cloud.conf`, is rewritten with the new one. The rows do not
    /// change (the Go driver made the caller the cluster's `user_id`, which a
    /// driver may not change).
    pub fn rotate_credential(&self, st: ClusterState) -> Result<Update, DriverError> {
        let stack_id = require_stack_id(&st)?;
        self.rotate_cloud_config(&st, &stack_id)?;
        // The workload cluster's cloud.conf (the reconciled add-on Secret)
        // takes the new credential before the old one is retired.
        self.apply_addons(&st, &stack_id, true)?;
        Ok(Update::none())
    }
}

/// Sets the workers' rollout: `maxSurge` = `surge`, else what each
/// MachineDeployment of the live Cluster has.
fn set_rollout(c: &mut Value, live: Option<&Value>, surge: Option<i32>) {
    let Some(mds) = c["spec"]["topology"]["workers"]["machineDeployments"].as_array_mut() else {
        return;
    };
    for md in mds {
        let rollout = match surge {
            Some(n) => serde_json::json!({
                "strategy": { "type": "RollingUpdate", "rollingUpdate": { "maxSurge": n } },
            }),
            None => live
                .and_then(|l| l["spec"]["topology"]["workers"]["machineDeployments"].as_array())
                .and_then(|l| l.iter().find(|x| x["name"] == md["name"]))
                .map(|x| x["rollout"].clone())
                .unwrap_or(Value::Null),
        };
        if !rollout.is_null() {
            md["rollout"] = rollout;
        }
    }
}

/// The owner of a credential: the one its Secret records, else (a
/// Secret magnum-cluster-api wrote, which records none) the cluster's
/// user, as whom magnum-cluster-api made it.
pub fn owner(recorded: &str, cluster_user: &str) -> String {
    if recorded.is_empty() {
        cluster_user.to_string()
    } else {
        recorded.to_string()
    }
}

/// `st` with `ng` replacing the row of the same uuid, or added.
pub fn with_nodegroup(mut st: ClusterState, ng: NodeGroup) -> ClusterState {
    match st.nodegroups.iter_mut().find(|x| x.uuid == ng.uuid) {
        Some(x) => *x = ng,
        None => st.nodegroups.push(ng),
    }
    st
}

fn require_stack_id(st: &ClusterState) -> Result<String, DriverError> {
    st.cluster
        .stack_id
        .clone()
        .filter(|s| !s.is_empty())
        .ok_or_else(|| DriverError::failed(format!("cluster {} has no stack_id", st.cluster.uuid)))
}

/// Whether a Machine is named by one of `want`: its name, the Nova server
/// of its `providerID` (`openstack:///<uuid>`), its Node or its
/// infrastructure object.
pub fn machine_matches(m: &Value, want: &[&str]) -> bool {
    let has = |v: &Value| {
        v.as_str()
            .is_some_and(|s| !s.is_empty() && want.contains(&s))
    };
    let provider = m["spec"]["providerID"]
        .as_str()
        .and_then(|p| p.rsplit('/').next())
        .map(|s| Value::String(s.to_string()))
        .unwrap_or(Value::Null);
    has(&m["metadata"]["name"])
        || has(&provider)
        || has(&m["status"]["nodeRef"]["name"])
        || has(&m["spec"]["infrastructureRef"]["name"])
}

/// JSON equality where a missing member equals `null`, an empty object or
/// an empty list (the API server drops them).
pub fn json_equal(a: &Value, b: &Value) -> bool {
    fn empty(v: &Value) -> bool {
        match v {
            Value::Null => true,
            Value::Object(m) => m.values().all(empty),
            Value::Array(a) => a.is_empty(),
            _ => false,
        }
    }
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: std::collections::BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            keys.into_iter().all(|k| match (x.get(k), y.get(k)) {
                (Some(p), Some(q)) => json_equal(p, q),
                (Some(v), None) | (None, Some(v)) => empty(v),
                (None, None) => true,
            })
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(p, q)| json_equal(p, q))
        }
        _ => a == b || (empty(a) && empty(b)),
    }
}

/// The cloud-config Secret, the CA Secrets and the add-ons (§ 6, § 3.5).
impl<S: Services> Ops<'_, S> {
    /// The cloud-config Secret of `stack_id`, if any.
    fn cloud_config(&self, stack_id: &str) -> Result<Option<Value>, DriverError> {
        let name = format!("{stack_id}{SUFFIX_CLOUD_CONFIG}");
        Ok(match kube::get(&self.reference("v1", "Secret", &name))? {
            Some(s) => Some(s.value()?),
            None => None,
        })
    }

    /// Makes the cluster's application credential and its Secret, unless
    /// the Secret already holds one (a retried create keeps it).
    fn ensure_cloud_config(&self, st: &ClusterState, stack_id: &str) -> Result<(), DriverError> {
        let existing = self.cloud_config(stack_id)?;
        if existing
            .as_ref()
            .and_then(app_credential_from_secret)
            .is_some()
        {
            return Ok(());
        }
        self.write_cloud_config(st, stack_id, None)
    }

    /// A new application credential of the caller, written to the
    /// cloud-config Secret with `previous` recorded; a credential that
    /// could not be written is deleted again.
    fn write_cloud_config(
        &self,
        st: &ClusterState,
        stack_id: &str,
        previous: Option<PreviousCredential>,
    ) -> Result<(), DriverError> {
        let cl = &st.cluster;
        let name = app_credential_name(&cl.uuid, &random_suffix(5));
        let credential = self
            .svc
            .create_credential(&name, &app_credential_description(cl))
            .map_err(|e| match e {
                HostError::Client(m) => DriverError::client(m.status, &m.kind, m.message),
                e => DriverError::failed(format!("create application credential: {e}")),
            })?;
        let secret = cloud_config_secret(
            &self.opts.namespace,
            stack_id,
            &cl.uuid,
            &self.svc.cloud(),
            &credential,
            previous.as_ref(),
        );
        if let Err(e) = apply(&secret) {
            // Not in use: remove it again (a failure leaves it to the
            // operator, as the error says nothing more can be done here).
            let _ = self
                .svc
                .delete_credential(&credential.user_id, &credential.id);
            return Err(e);
        }
        Ok(())
    }

    /// Replaces the credential of the cloud-config Secret, recording the
    /// one it replaces.
    fn rotate_cloud_config(&self, st: &ClusterState, stack_id: &str) -> Result<(), DriverError> {
        let previous = self
            .cloud_config(stack_id)?
            .as_ref()
            .and_then(app_credential_from_secret)
            .map(|c| PreviousCredential {
                user_id: owner(&c.user_id, &st.cluster.user_id),
                id: c.id,
            });
        self.write_cloud_config(st, stack_id, previous)
    }

    /// The four CA Secrets, from Magnum's certificates of the cluster.
    fn apply_ca_secrets(&self, stack_id: &str) -> Result<(), DriverError> {
        let cas = self
            .svc
            .cas()
            .map_err(|e| DriverError::failed(format!("read the cluster's certificates: {e}")))?;
        for s in ca_secrets(&self.opts.namespace, stack_id, &cas)? {
            apply(&s)?;
        }
        Ok(())
    }

    /// The add-on sets and their Secrets. At create, both sets and both
    /// Secrets (the CNI with the rest of the apply-once Secret); at an
    /// upgrade, only the reconciled `-cloud-provider` set and Secret, which
    /// take the new version's cloud provider.
    fn apply_addons(
        &self,
        st: &ClusterState,
        stack_id: &str,
        upgrade: bool,
    ) -> Result<(), DriverError> {
        let sets = cluster_resource_sets(&self.opts.namespace, stack_id, &st.cluster.uuid);
        let skip = usize::from(upgrade);
        for set in sets.iter().skip(skip) {
            apply(set)?;
        }
        let input = self.addon_input(st, stack_id)?;
        if !upgrade {
            let driver = st.template.network_driver.as_deref().unwrap_or("");
            let labels = st.cluster.labels();
            let file = cni_manifest_file(driver, labels)?;
            // The operator's manifest when the driver is granted a files
            // directory holding it; else the embedded one (calico).
            let operator = config::read_file(&file).ok();
            let cni = cni_manifest(driver, labels, operator.as_deref())?;
            apply(&cluster_addons_secret(&input, &cni)?)?;
        }
        apply(&cloud_provider_secret(&input)?)
    }

    /// What the add-on Secrets read: the credential of the cloud-config
    /// Secret (which must exist) and, with Cinder CSI on, Cinder's types;
    /// with Manila CSI on, Manila's.
    fn addon_input(&self, st: &ClusterState, stack_id: &str) -> Result<AddonInput, DriverError> {
        let labels = st.cluster.labels().clone();
        let credential = self
            .cloud_config(stack_id)?
            .as_ref()
            .and_then(app_credential_from_secret)
            .ok_or_else(|| {
                DriverError::failed(format!(
                    "the Secret {stack_id}{SUFFIX_CLOUD_CONFIG} holds no application credential"
                ))
            })?;
        let volume_types = if cinder_csi_enabled(&labels)? {
            self.svc
                .volume_types()
                .map_err(|e| DriverError::failed(format!("list volume types: {e}")))?
        } else {
            None
        };
        let share_types = if manila_csi_enabled(&labels)? {
            self.svc
                .share_types()
                .map_err(|e| DriverError::failed(format!("list share types: {e}")))?
        } else {
            None
        };
        Ok(AddonInput {
            namespace: self.opts.namespace.clone(),
            stack_id: stack_id.into(),
            cluster_uuid: st.cluster.uuid.clone(),
            project_id: st.cluster.project_id.clone(),
            labels,
            cloud: self.svc.cloud(),
            credential,
            keystone_auth_policy: self.opts.keystone_auth_policy.clone(),
            volume_types,
            share_types,
        })
    }
}

/// Rewrites the cloud-config Secret of `st` without the record of the
/// credential a rotation replaced (that credential has been deleted).
pub fn forget_previous_credential<S: Services>(
    svc: &S,
    opts: &Options,
    st: &ClusterState,
) -> Result<(), DriverError> {
    let stack_id = require_stack_id(st)?;
    let ops = Ops { svc, opts };
    let Some(current) = ops
        .cloud_config(&stack_id)?
        .as_ref()
        .and_then(app_credential_from_secret)
    else {
        return Ok(());
    };
    let secret = cloud_config_secret(
        &opts.namespace,
        &stack_id,
        &st.cluster.uuid,
        &ops.svc.cloud(),
        &current,
        None,
    );
    apply(&secret)
}

/// Writes the cloud-config Secret of `st` again with the cloud's CA bundle
/// of now, keeping its credential and the record of a replaced one (the
/// operator changed `[capi_client]/ca_file` or
/// `[keystone_authtoken]/cafile`). Nothing without a Secret or a
/// credential in it.
pub fn refresh_cloud_ca<S: Services>(
    svc: &S,
    opts: &Options,
    st: &ClusterState,
) -> Result<(), DriverError> {
    let stack_id = require_stack_id(st)?;
    let ops = Ops { svc, opts };
    let Some(live) = ops.cloud_config(&stack_id)? else {
        return Ok(());
    };
    let Some(current) = app_credential_from_secret(&live) else {
        return Ok(());
    };
    let previous = crate::secrets::previous_app_credential(&live);
    let secret = cloud_config_secret(
        &opts.namespace,
        &stack_id,
        &st.cluster.uuid,
        &ops.svc.cloud(),
        &current,
        previous.as_ref(),
    );
    apply(&secret)
}
