//! [`Driver`]: one entry point of a loaded driver package, and the calls
//! the conductor makes on it. Every call runs in a fresh sandboxed
//! instance; see [`CallError`] for how it fails.

use std::sync::Arc;

use magnum_domain::models::{ClusterTemplate, NodeGroup};

use crate::access::Selector;
use crate::bindings::v1_1::exports::openkeel::magnum_driver::lifecycle as wl;
use crate::bindings::v1_1::openkeel::magnum_driver::types as wt;
use crate::breaker::Health;
use crate::contract::Contract;
use crate::convert;
use crate::error::{CallError, DriverFault};
use crate::lowering;
use crate::package::{Answer, EntryPointInfo, Origin, Package, Request};
use crate::settings::Limits;
use crate::types::{
    CallContext, ClusterState, Effect, Observation, Resize, StatusAnswer, Target, Update, Upgrade,
};

/// One entry point of a loaded driver package: the name stored in
/// `cluster_template.driver`. Cheap to clone.
#[derive(Clone)]
pub struct Driver {
    pkg: Arc<Package>,
    index: usize,
}

impl std::fmt::Debug for Driver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("name", &self.name())
            .field("package", &self.package())
            .finish()
    }
}

/// How the answer of a call becomes what its caller gets: a
/// [`Package`] method such as [`Package::update`].
type Take<T> = fn(&Package, &'static str, Result<Answer, DriverFault>) -> Result<T, CallError>;

impl Driver {
    pub(crate) fn new(pkg: Arc<Package>, index: usize) -> Driver {
        Driver { pkg, index }
    }

    fn ep(&self) -> &EntryPointInfo {
        &self.pkg.entry_points[self.index]
    }

    /// The entry-point name.
    pub fn name(&self) -> &str {
        &self.ep().name
    }

    /// Whether it must be listed in `[drivers]/enabled_beta_drivers` to be
    /// chosen by cluster type.
    pub fn beta(&self) -> bool {
        self.ep().beta
    }

    /// The (server_type, os, coe) tuples it builds.
    pub fn provides(&self) -> &[Target] {
        &self.ep().provides
    }

    /// One line for `driver list`.
    pub fn description(&self) -> &str {
        &self.ep().description
    }

    /// The name of its package (the `[driver:<name>]` group).
    pub fn package(&self) -> &str {
        self.pkg.name()
    }

    /// The package's version.
    pub fn version(&self) -> &semver::Version {
        &self.pkg.manifest.driver.version
    }

    /// The contract version its component is built for.
    pub fn wit_version(&self) -> &semver::Version {
        &self.pkg.wit_version
    }

    /// The contract version its calls follow.
    pub fn contract(&self) -> Contract {
        self.pkg.contract
    }

    /// Built-in or the path it was loaded from.
    pub fn origin(&self) -> &Origin {
        &self.pkg.origin
    }

    /// The sha256 of its component.
    pub fn sha256(&self) -> &str {
        &self.pkg.sha256
    }

    /// The limits its calls run under.
    pub fn limits(&self) -> &Limits {
        &self.pkg.ctx.limits
    }

    /// Its effective capabilities.
    pub fn capabilities(&self) -> &crate::capabilities::Capabilities {
        &self.pkg.ctx.caps
    }

    /// The package's fault count and breaker.
    pub fn health(&self) -> Health {
        self.pkg.health()
    }

    /// Refuses an answer of `function` that broke a rule of the host
    /// (`reason`): a fault of the driver, logged once and counted against
    /// its breaker. The operation fails with the returned error.
    pub fn refuse_answer(&self, function: &'static str, reason: String) -> CallError {
        CallError::Fault(self.pkg.violation(function, reason))
    }

    /// Whether the host may watch `s` for this driver: its grants let it
    /// `list` the kind in the namespace. The refusal names the selector
    /// and what is missing.
    pub fn may_watch(&self, s: &Selector) -> Result<(), String> {
        let ns = s.namespace.as_deref();
        if self
            .pkg
            .ctx
            .caps
            .allows_kube(&s.api_version, &s.kind, "list", ns)
        {
            return Ok(());
        }
        let scope = ns.map_or("cluster-wide".to_string(), |n| format!("in namespace {n}"));
        Err(format!(
            "watches {}/{} {scope}, which its grants do not let it list",
            s.api_version, s.kind
        ))
    }

    /// Records why the host does not watch what this driver declared (its
    /// clusters are polled), logged the first time and shown by `driver
    /// list`; `None` once its watches are accepted.
    pub fn note_watch_refusal(&self, refusal: Option<String>) {
        let mut r = self
            .pkg
            .ctx
            .watch_refusal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if let Some(reason) = &refusal
            && r.as_ref() != Some(reason)
        {
            tracing::warn!(
                driver = %self.pkg.ctx.name,
                "watches refused, its clusters are polled: {reason}"
            );
        }
        *r = refusal;
    }

    /// Why the host does not watch what this driver declared, if it does
    /// not.
    pub fn watch_refusal(&self) -> Option<String> {
        self.pkg
            .ctx
            .watch_refusal
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
    }

    /// The package's latest import calls refused for want of a grant
    /// (`kube apply of v1/Secret in namespace kube-system`), oldest first,
    /// at most 64: what a driver tried beyond its capabilities.
    pub fn refused_imports(&self) -> Vec<String> {
        self.pkg.ctx.denials()
    }

    fn ctx(&self, c: &CallContext) -> wt::CallContext {
        let now = c.now.map_or_else(
            || {
                let t = self.pkg.ctx.services.clock.now();
                let d = t.duration_since(std::time::UNIX_EPOCH).unwrap_or_default();
                i64::try_from(d.as_micros()).unwrap_or(i64::MAX)
            },
            convert::to_micros,
        );
        wt::CallContext {
            entry_point: self.name().to_string(),
            caller: wt::Caller {
                user_id: c.credentials.user_id.clone(),
                project_id: c.credentials.project_id.clone(),
                admin: c.credentials.admin,
            },
            request_id: c.request_id.clone(),
            now,
        }
    }

    async fn run_update(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: Request<'_>,
    ) -> Result<Update, CallError> {
        self.run_about(c, st, req, Package::update).await
    }

    /// Runs a request about the cluster of `st` with `c`'s credentials and
    /// takes its answer (of the named function) with `take`.
    async fn run_about<T>(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: Request<'_>,
        take: Take<T>,
    ) -> Result<T, CallError> {
        let f = req.function();
        let r = self
            .pkg
            .invoke(
                Some(&st.cluster),
                c.credentials.clone(),
                c.request_id.clone(),
                req,
            )
            .await;
        take(&self.pkg, f, r)
    }

    async fn run_unit(
        &self,
        c: Option<&CallContext>,
        st: Option<&ClusterState>,
        req: Request<'_>,
    ) -> Result<(), CallError> {
        let f = req.function();
        let (cred, rid) = match c {
            Some(c) => (c.credentials.clone(), c.request_id.clone()),
            None => (crate::access::Credentials::admin(), String::new()),
        };
        let r = self
            .pkg
            .invoke(st.map(|s| &s.cluster), cred, rid, req)
            .await;
        self.pkg.unit(f, r)
    }

    /// `master_count` of a new cluster.
    pub async fn validate_master_size(&self, count: i32) -> Result<(), CallError> {
        self.run_unit(
            None,
            None,
            Request::ValidateMasterSize(self.name().to_string(), count),
        )
        .await
    }

    /// A resize of the master nodegroup.
    pub async fn validate_master_resize(&self, count: i32) -> Result<(), CallError> {
        self.run_unit(
            None,
            None,
            Request::ValidateMasterResize(self.name().to_string(), count),
        )
        .await
    }

    /// The driver's checks of a cluster about to be created.
    pub async fn validate_create(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<(), CallError> {
        self.run_unit(
            Some(c),
            Some(st),
            Request::ValidateCreate(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// The driver's checks of an upgrade to `template`.
    pub async fn validate_upgrade(
        &self,
        c: &CallContext,
        st: &ClusterState,
        template: &ClusterTemplate,
    ) -> Result<(), CallError> {
        let req = Request::ValidateUpgrade(
            self.ctx(c),
            lowering::state_ref(st),
            convert::template_to(template),
        );
        self.run_unit(Some(c), Some(st), req).await
    }

    /// The driver's checks of a nodegroup about to be created (a 1.0
    /// driver has none).
    pub async fn validate_nodegroup(
        &self,
        c: &CallContext,
        st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<(), CallError> {
        if self.contract() == Contract::V1_0 {
            return Ok(());
        }
        let req = Request::ValidateNodegroup(
            self.ctx(c),
            lowering::state_ref(st),
            convert::nodegroup_to(ng),
        );
        self.run_unit(Some(c), Some(st), req).await
    }

    /// Whether the cluster's CAs can be rotated (asked before any
    /// certificate is generated).
    pub async fn can_rotate_ca(&self, c: &CallContext, st: &ClusterState) -> Result<(), CallError> {
        self.run_unit(
            Some(c),
            Some(st),
            Request::CanRotateCa(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// Starts building a new cluster; `timeout_minutes` is create_timeout
    /// (0: none).
    pub async fn create_cluster(
        &self,
        c: &CallContext,
        st: &ClusterState,
        timeout_minutes: u32,
    ) -> Result<Update, CallError> {
        let req = Request::CreateCluster(self.ctx(c), lowering::state_ref(st), timeout_minutes);
        self.run_update(c, st, req).await
    }

    /// A PATCH of node_count (the default worker row has the new count).
    pub async fn update_cluster(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<Update, CallError> {
        self.run_update(
            c,
            st,
            Request::UpdateCluster(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// Starts deleting the cluster.
    pub async fn delete_cluster(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<Update, CallError> {
        self.run_update(
            c,
            st,
            Request::DeleteCluster(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// Resizes one nodegroup.
    pub async fn resize_cluster(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: &Resize,
    ) -> Result<Update, CallError> {
        let r = wl::Resize {
            nodegroup_uuid: req.nodegroup_uuid.clone(),
            node_count: req.node_count,
            nodes_to_remove: req.nodes_to_remove.clone(),
        };
        self.run_update(
            c,
            st,
            Request::ResizeCluster(self.ctx(c), lowering::state_ref(st), r),
        )
        .await
    }

    /// Moves the cluster (or one nodegroup) to a template.
    pub async fn upgrade_cluster(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: &Upgrade,
    ) -> Result<Update, CallError> {
        let u = wl::Upgrade {
            template: convert::template_to(&req.template),
            max_batch_size: req.max_batch_size,
            nodegroup_uuid: req.nodegroup_uuid.clone(),
        };
        self.run_update(
            c,
            st,
            Request::UpgradeCluster(self.ctx(c), lowering::state_ref(st), u),
        )
        .await
    }

    /// Starts building `ng`.
    pub async fn create_nodegroup(
        &self,
        c: &CallContext,
        st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<Update, CallError> {
        let req = Request::CreateNodegroup(
            self.ctx(c),
            lowering::state_ref(st),
            convert::nodegroup_to(ng),
        );
        self.run_update(c, st, req).await
    }

    /// A PATCH of a nodegroup.
    pub async fn update_nodegroup(
        &self,
        c: &CallContext,
        st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<Update, CallError> {
        let req = Request::UpdateNodegroup(
            self.ctx(c),
            lowering::state_ref(st),
            convert::nodegroup_to(ng),
        );
        self.run_update(c, st, req).await
    }

    /// Starts deleting a non-default nodegroup.
    pub async fn delete_nodegroup(
        &self,
        c: &CallContext,
        st: &ClusterState,
        ng: &NodeGroup,
    ) -> Result<Update, CallError> {
        let req = Request::DeleteNodegroup(
            self.ctx(c),
            lowering::state_ref(st),
            convert::nodegroup_to(ng),
        );
        self.run_update(c, st, req).await
    }

    /// Rolls the cluster onto the CAs the conductor has just generated.
    pub async fn rotate_ca(&self, c: &CallContext, st: &ClusterState) -> Result<Update, CallError> {
        self.run_update(
            c,
            st,
            Request::RotateCa(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// Replaces the cluster's cloud credential.
    pub async fn rotate_credential(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<Update, CallError> {
        self.run_update(
            c,
            st,
            Request::RotateCredential(self.ctx(c), lowering::state_ref(st)),
        )
        .await
    }

    /// The objects the host should watch for this cluster (empty: poll).
    pub async fn watches(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<Vec<Selector>, CallError> {
        let req = Request::Watches(self.ctx(c), lowering::state_ref(st));
        let f = req.function();
        let r = self
            .pkg
            .invoke(
                Some(&st.cluster),
                c.credentials.clone(),
                c.request_id.clone(),
                req,
            )
            .await;
        self.pkg.watches(f, r)
    }

    /// The rows' new state from what the host holds of each selector of
    /// `watches` (a 1.0 driver sees the objects alone). Pure: the driver's
    /// imports answer `access-denied` during the call.
    pub async fn derive_status(
        &self,
        c: &CallContext,
        st: &ClusterState,
        snapshot: &[Observation],
    ) -> Result<StatusAnswer, CallError> {
        let observed = snapshot.iter().map(convert::observation_to).collect();
        let req = Request::DeriveStatus(self.ctx(c), lowering::state_ref(st), observed);
        self.run_status(c, st, req).await
    }

    /// Magnum's update_cluster_status and health monitor in one.
    pub async fn poll_status(
        &self,
        c: &CallContext,
        st: &ClusterState,
    ) -> Result<StatusAnswer, CallError> {
        let req = Request::PollStatus(self.ctx(c), lowering::state_ref(st));
        self.run_status(c, st, req).await
    }

    /// Runs the side effects a status answer asked for (nothing to run:
    /// no call).
    pub async fn apply_effects(
        &self,
        c: &CallContext,
        st: &ClusterState,
        effects: &[Effect],
    ) -> Result<(), CallError> {
        if effects.is_empty() {
            return Ok(());
        }
        let effects = effects.iter().map(convert::effect_to).collect();
        let req = Request::ApplyEffects(self.ctx(c), lowering::state_ref(st), effects);
        self.run_unit(Some(c), Some(st), req).await
    }

    async fn run_status(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: Request<'_>,
    ) -> Result<StatusAnswer, CallError> {
        self.run_about(c, st, req, Package::status).await
    }
}
