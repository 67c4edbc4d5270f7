//! [`Driver`]: one entry point of a loaded driver package, and the calls
//! the conductor makes on it. Every call runs in a fresh sandboxed
//! instance; see [`CallError`] for how it fails.

use std::sync::Arc;

use magnum_domain::models::{ClusterTemplate, NodeGroup};

use crate::access::Selector;
use crate::bindings::v1_1::openkeel::magnum_driver::types as wt;
use crate::breaker::Health;
use crate::contract::Contract;
use crate::convert;
use crate::error::CallError;
use crate::lowering;
use crate::package::{EntryPointInfo, FromResponse, Origin, Package, Request};
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

/// Declares calls about one cluster: `pub async fn name(args) -> T =
/// Variant(lowered);` is `pub async fn name(&self, c, st, args) ->
/// Result<T, CallError>`,
/// which sends `Request::Variant` with the call's context, the cluster's
/// state and the lowered arguments, as `c`'s caller, and takes the answer
/// as `T`.
macro_rules! cluster_calls {
    ($(
        $(#[$doc:meta])*
        pub async fn $name:ident($($arg:ident: $ty:ty),*) -> $ret:ty
            = $variant:ident($($lowered:expr),*);
    )+) => {$(
        $(#[$doc])*
        pub async fn $name(
            &self,
            c: &CallContext,
            st: &ClusterState,
            $($arg: $ty,)*
        ) -> Result<$ret, CallError> {
            let req = Request::$variant(self.ctx(c), lowering::state_ref(st), $($lowered),*);
            self.run_about(c, st, req).await
        }
    )+};
}

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

    /// Runs a request about the cluster of `st` with `c`'s credentials and
    /// takes its answer (of the named function) as `T`.
    async fn run_about<T: FromResponse>(
        &self,
        c: &CallContext,
        st: &ClusterState,
        req: Request<'_>,
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
        self.pkg.take(f, r)
    }

    /// Runs a check of a master count, about no cluster: `request` is
    /// [`Request::ValidateMasterSize`] or [`Request::ValidateMasterResize`].
    async fn validate_count(
        &self,
        request: fn(String, i32) -> Request<'static>,
        count: i32,
    ) -> Result<(), CallError> {
        let req = request(self.name().to_string(), count);
        let f = req.function();
        let r = self
            .pkg
            .invoke(
                None,
                crate::access::Credentials::admin(),
                String::new(),
                req,
            )
            .await;
        self.pkg.take(f, r)
    }

    /// `master_count` of a new cluster.
    pub async fn validate_master_size(&self, count: i32) -> Result<(), CallError> {
        self.validate_count(Request::ValidateMasterSize, count)
            .await
    }

    /// A resize of the master nodegroup.
    pub async fn validate_master_resize(&self, count: i32) -> Result<(), CallError> {
        self.validate_count(Request::ValidateMasterResize, count)
            .await
    }

    cluster_calls! {
        /// The driver's checks of a cluster about to be created.
        pub async fn validate_create() -> () = ValidateCreate();

        /// The driver's checks of an upgrade to `template`.
        pub async fn validate_upgrade(template: &ClusterTemplate) -> ()
            = ValidateUpgrade(convert::template_to(template));

        /// Whether the cluster's CAs can be rotated (asked before any
        /// certificate is generated).
        pub async fn can_rotate_ca() -> () = CanRotateCa();

        /// Starts building a new cluster; `timeout_minutes` is create_timeout
        /// (0: none).
        pub async fn create_cluster(timeout_minutes: u32) -> Update
            = CreateCluster(timeout_minutes);

        /// A PATCH of node_count (the default worker row has the new count).
        pub async fn update_cluster() -> Update = UpdateCluster();

        /// Starts deleting the cluster.
        pub async fn delete_cluster() -> Update = DeleteCluster();

        /// Resizes one nodegroup.
        pub async fn resize_cluster(req: &Resize) -> Update
            = ResizeCluster(convert::resize_to(req));

        /// Moves the cluster (or one nodegroup) to a template.
        pub async fn upgrade_cluster(req: &Upgrade) -> Update
            = UpgradeCluster(convert::upgrade_to(req));

        /// Starts building `ng`.
        pub async fn create_nodegroup(ng: &NodeGroup) -> Update
            = CreateNodegroup(convert::nodegroup_to(ng));

        /// A PATCH of a nodegroup.
        pub async fn update_nodegroup(ng: &NodeGroup) -> Update
            = UpdateNodegroup(convert::nodegroup_to(ng));

        /// Starts deleting a non-default nodegroup.
        pub async fn delete_nodegroup(ng: &NodeGroup) -> Update
            = DeleteNodegroup(convert::nodegroup_to(ng));

        /// Rolls the cluster onto the CAs the conductor has just generated.
        pub async fn rotate_ca() -> Update = RotateCa();

        /// Replaces the cluster's cloud credential.
        pub async fn rotate_credential() -> Update = RotateCredential();

        /// The objects the host should watch for this cluster (empty: poll).
        pub async fn watches() -> Vec<Selector> = Watches();

        /// The rows' new state from what the host holds of each selector of
        /// `watches` (a 1.0 driver sees the objects alone). Pure: the driver's
        /// imports answer `access-denied` during the call.
        pub async fn derive_status(snapshot: &[Observation]) -> StatusAnswer
            = DeriveStatus(snapshot.iter().map(convert::observation_to).collect());

        /// Magnum's update_cluster_status and health monitor in one.
        pub async fn poll_status() -> StatusAnswer = PollStatus();
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
        self.run_about(c, st, req).await
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
        self.run_about(c, st, req).await
    }
}
