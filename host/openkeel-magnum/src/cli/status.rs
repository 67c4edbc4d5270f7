//! `status upgrade-check` (magnum-status upgrade check): oslo.upgradecheck's
//! checks and table — Magnum's policy check, then ours: the schema, the
//! drivers and their grants, the management cluster and the reconciler's
//! lease. Exit status: 0 when every check succeeds, 1 for the worst being a
//! warning, 2 for a failure (magnum-status's codes).

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::Arc;
use std::time::Duration;

use driver_host::{DriverHost, KubeAccess, Refusal};

use super::Failure;
use crate::app;
use crate::db::Db;
use crate::management::ManagementCluster;
use crate::options::Options;

/// What the Kubernetes checks say of `[capi]/management_cluster = memory`.
const IN_MEMORY: &str = "[capi]/management_cluster = memory: the in-memory cluster of an all-in-one process, nothing to check.";

/// The management cluster the Kubernetes checks look at, resolved once.
enum Cluster {
    /// `[capi]/management_cluster = memory`: nothing to check.
    InMemory,
    /// None configured nor inferred.
    None,
    Reached(Arc<ManagementCluster>),
    /// Its configuration is unusable.
    Unusable(String),
}

impl Cluster {
    async fn of(options: &Options) -> Cluster {
        if options.capi.in_memory() {
            return Cluster::InMemory;
        }
        match app::management(options, app::Mode::Api).await {
            Ok(Some(c)) => Cluster::Reached(c),
            Ok(None) => Cluster::None,
            Err(e) => Cluster::Unusable(e.to_string()),
        }
    }
}

/// `f` within [`CHECK_TIMEOUT`]; its error, or the timeout, says that
/// `what` does not answer.
async fn within<T, E: std::fmt::Display>(
    what: &str,
    f: impl std::future::Future<Output = Result<T, E>>,
) -> Result<T, String> {
    match tokio::time::timeout(CHECK_TIMEOUT, f).await {
        Ok(r) => r.map_err(|e| format!("{what} does not answer: {e}")),
        Err(_) => Err(format!(
            "{what} does not answer within {} s.",
            CHECK_TIMEOUT.as_secs()
        )),
    }
}

/// The bound of each call a check makes to the management cluster.
const CHECK_TIMEOUT: Duration = Duration::from_secs(10);

/// An oslo.upgradecheck result code.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Outcome {
    Success = 0,
    Warning = 1,
    Failure = 2,
}

impl Outcome {
    fn name(self) -> &'static str {
        match self {
            Outcome::Success => "Success",
            Outcome::Warning => "Warning",
            Outcome::Failure => "Failure",
        }
    }
}

pub(super) async fn upgrade_check(options: &Options, out: &mut dyn Write) -> Result<(), Failure> {
    let host = app::start_drivers(options).await;
    let db = app::open_database(options).await;
    let cluster = Cluster::of(options).await;
    let checks = [
        ("Policy File JSON to YAML Migration", policy_json(options)),
        ("Database Schema", database(&db).await),
        ("Cluster Drivers", drivers(&host)),
        ("Driver Grants", grants(&host)),
        ("Management Cluster", management(&cluster, &host).await),
        ("Reconciler Lease", lease(options, &cluster, &db).await),
    ];
    if let Ok(d) = db {
        d.close().await;
    }
    let worst = checks
        .iter()
        .map(|(_, (o, _))| *o)
        .max()
        .unwrap_or(Outcome::Success);
    let blocks: Vec<Vec<String>> = checks
        .iter()
        .map(|(name, (outcome, details))| {
            vec![
                format!("Check: {name}"),
                format!("Result: {}", outcome.name()),
                format!("Details: {}", details.as_deref().unwrap_or("None")),
            ]
        })
        .collect();
    print(out, &blocks).map_err(Failure::new)?;
    match worst {
        Outcome::Success => Ok(()),
        o => Err(Failure::status(o as u8)),
    }
}

/// oslo.upgradecheck's layout: a title row and one block per check.
fn print(out: &mut dyn Write, blocks: &[Vec<String>]) -> std::io::Result<()> {
    const TITLE: &str = "Upgrade Check Results";
    let width = blocks
        .iter()
        .flatten()
        .map(|l| l.chars().count())
        .chain([TITLE.len()])
        .max()
        .unwrap_or(0);
    let sep = format!("+{}+", "-".repeat(width + 2));
    let row = |s: &str| format!("| {s}{} |", " ".repeat(width - s.chars().count()));
    writeln!(out, "{sep}\n{}\n{sep}", row(TITLE))?;
    for b in blocks {
        for l in b {
            writeln!(out, "{}", row(l))?;
        }
        writeln!(out, "{sep}")?;
    }
    Ok(())
}

/// oslo.upgradecheck's common policy check: a JSON policy file still in use
/// is a warning.
fn policy_json(options: &Options) -> (Outcome, Option<String>) {
    let settings = app::policy_settings(options);
    if !settings.policy_file.to_ascii_lowercase().ends_with(".json") {
        return (Outcome::Success, None);
    }
    if settings.paths().policy_file.is_file() {
        return (
            Outcome::Warning,
            Some(
                "Your policy file is JSON-formatted which is deprecated. Convert it to YAML and set \
                 [oslo_policy]/policy_file to the new file."
                    .into(),
            ),
        );
    }
    (Outcome::Success, None)
}

async fn database(db: &Result<Db, app::StartError>) -> (Outcome, Option<String>) {
    let d = match db {
        Ok(d) => d,
        Err(e) => return (Outcome::Failure, Some(e.to_string())),
    };
    match crate::db::check_schema(d).await {
        Ok(()) => (Outcome::Success, None),
        Err(e) => (Outcome::Failure, Some(super::one_line(&e.to_string()))),
    }
}

/// Whether a refusal is a grant that does not cover the manifest.
fn is_grant_refusal(r: &Refusal) -> bool {
    r.reason.contains("not granted")
}

/// The drivers load, the default driver exists, and at least one is
/// enabled; a package refused for another reason than its grants is a
/// warning.
fn drivers(host: &Result<DriverHost, app::StartError>) -> (Outcome, Option<String>) {
    let host = match host {
        Ok(h) => h,
        Err(e) => return (Outcome::Failure, Some(e.to_string())),
    };
    let registry = host.registry();
    if let Err(e) = registry.default_name() {
        return (Outcome::Failure, Some(e.message));
    }
    let names = registry.names();
    if names.is_empty() {
        return (
            Outcome::Warning,
            Some("No cluster driver is enabled: cluster template creation will fail.".into()),
        );
    }
    let refused: Vec<String> = host
        .refused()
        .iter()
        .filter(|r| !is_grant_refusal(r))
        .map(|r| format!("{}: {}", r.name, r.reason))
        .collect();
    if !refused.is_empty() {
        return (
            Outcome::Warning,
            Some(format!("Refused driver packages: {}", refused.join("; "))),
        );
    }
    (
        Outcome::Success,
        Some(format!("Installed drivers: {}", names.join(", "))),
    )
}

/// Every installed package is granted what its manifest requests: one that
/// is not is refused at start, and its clusters cannot be served.
fn grants(host: &Result<DriverHost, app::StartError>) -> (Outcome, Option<String>) {
    let Ok(host) = host else {
        return (
            Outcome::Failure,
            Some("The drivers did not start (see Cluster Drivers).".into()),
        );
    };
    let short: Vec<&str> = host
        .refused()
        .iter()
        .filter(|r| is_grant_refusal(r))
        .map(|r| r.reason.as_str())
        .collect();
    if short.is_empty() {
        return (
            Outcome::Success,
            Some("Every installed driver is granted what its manifest requests.".into()),
        );
    }
    (Outcome::Failure, Some(short.join("; ")))
}

/// The Kubernetes kinds the enabled entry points' drivers request, as
/// (api version, kind), and those drivers' names.
fn requested_kinds(host: &DriverHost) -> (BTreeSet<(String, String)>, BTreeSet<String>) {
    let (mut kinds, mut users) = (BTreeSet::new(), BTreeSet::new());
    for d in host.registry().enabled() {
        for rule in &d.capabilities().kube {
            users.insert(d.package().to_owned());
            for k in rule.kinds.iter().filter(|k| k.as_str() != "*") {
                kinds.insert((rule.api_version.clone(), k.clone()));
            }
        }
    }
    (kinds, users)
}

/// The management cluster answers and serves every kind the enabled
/// drivers request. None configured is a warning when an enabled driver
/// uses Kubernetes.
async fn management(
    cluster: &Cluster,
    host: &Result<DriverHost, app::StartError>,
) -> (Outcome, Option<String>) {
    let (kinds, users) = match host {
        Ok(h) => requested_kinds(h),
        Err(_) => Default::default(),
    };
    let users = users.into_iter().collect::<Vec<_>>().join(", ");
    let cluster = match cluster {
        Cluster::InMemory => return (Outcome::Success, Some(IN_MEMORY.into())),
        Cluster::Reached(c) => c,
        Cluster::None if users.is_empty() => {
            return (
                Outcome::Success,
                Some("None configured; no enabled driver uses Kubernetes.".into()),
            );
        }
        Cluster::None => {
            return (
                Outcome::Warning,
                Some(format!(
                    "No management cluster: [capi]/kubeconfig is empty and none can be inferred, so \
                     the Kubernetes calls of {users} answer unavailable and their clusters cannot be built."
                )),
            );
        }
        Cluster::Unusable(e) => return (Outcome::Failure, Some(e.clone())),
    };
    let answered = within(
        "The management cluster",
        cluster.client().apiserver_version(),
    )
    .await;
    let version = match answered {
        Ok(v) => v.git_version,
        Err(e) => return (Outcome::Failure, Some(e)),
    };
    let mut missing = Vec::new();
    for (api_version, kind) in &kinds {
        match cluster.served(api_version, kind).await {
            Ok(true) => {}
            Ok(false) => missing.push(format!("{api_version}/{kind}")),
            Err(e) => return (Outcome::Failure, Some(e.to_string())),
        }
    }
    if !missing.is_empty() {
        return (
            Outcome::Warning,
            Some(format!(
                "Kubernetes {version} does not serve {} (requested by {users}): install their \
                 CustomResourceDefinitions (the Cluster API and its OpenStack provider).",
                missing.join(", ")
            )),
        );
    }
    (
        Outcome::Success,
        Some(format!(
            "Kubernetes {version} serves the {} kinds the enabled drivers request.",
            kinds.len()
        )),
    )
}

/// Some reconciler holds the lease: the Lease of the management cluster,
/// else the database's lock row. Nobody holding it means cluster statuses
/// are not being updated.
async fn lease(
    options: &Options,
    cluster: &Cluster,
    db: &Result<Db, app::StartError>,
) -> (Outcome, Option<String>) {
    match cluster {
        Cluster::InMemory => (Outcome::Success, Some(IN_MEMORY.into())),
        Cluster::Reached(c) => kube_lease(options, c.client().clone()).await,
        Cluster::None => database_lease(options, db).await,
        Cluster::Unusable(e) => (Outcome::Failure, Some(e.clone())),
    }
}

async fn kube_lease(options: &Options, client: kube::Client) -> (Outcome, Option<String>) {
    use k8s_openapi::api::coordination::v1::Lease;
    let namespace = options.capi.lease_namespace();
    let api: kube::Api<Lease> = kube::Api::namespaced(client, namespace);
    let name = crate::watch::lease::LEASE_NAME;
    let got = match within(&format!("Lease {namespace}/{name}"), api.get_opt(name)).await {
        Ok(l) => l,
        Err(e) => return (Outcome::Failure, Some(e)),
    };
    let spec = got.and_then(|l| l.spec).unwrap_or_default();
    let holder = spec.holder_identity.filter(|h| !h.is_empty());
    let age = spec.renew_time.map(|t| {
        let now = k8s_openapi::jiff::Timestamp::now();
        now.duration_since(t.0).as_secs()
    });
    let duration = i64::from(spec.lease_duration_seconds.unwrap_or(15));
    match (holder, age) {
        (Some(h), Some(a)) if a <= duration => (
            Outcome::Success,
            Some(format!(
                "Lease {namespace}/{name} held by {h}, renewed {a} s ago."
            )),
        ),
        _ => (
            Outcome::Warning,
            Some(format!(
                "No reconciler holds the Lease {namespace}/{name}: cluster statuses are not being \
                 updated (start openkeel-magnum reconciler)."
            )),
        ),
    }
}

async fn database_lease(
    options: &Options,
    db: &Result<Db, app::StartError>,
) -> (Outcome, Option<String>) {
    use crate::conductor::{LOCK_SERVICE_BINARY, LOCK_SERVICE_HOST};
    let d = match db {
        Ok(d) => d,
        Err(e) => return (Outcome::Failure, Some(e.to_string())),
    };
    let row = d
        .q()
        .get_magnum_service(LOCK_SERVICE_HOST, LOCK_SERVICE_BINARY)
        .await;
    // Three passes of the status loop, as the reconciler's own expiry.
    let ttl = 3 * options.capi.resync_interval.max(1);
    let row = match row {
        Ok(r) => Some(r),
        Err(crate::db::Error::NotFound(_)) => None,
        Err(e) => {
            return (
                Outcome::Failure,
                Some(format!("The database lease cannot be read: {e}")),
            );
        }
    };
    let now = chrono::Utc::now().naive_utc();
    let held = row.and_then(|r| {
        let holder = r.disabled_reason.filter(|h| !h.is_empty())?;
        let age = (now - r.last_seen_up?).num_seconds();
        (age <= ttl).then_some((holder, age))
    });
    match held {
        Some((h, a)) => (
            Outcome::Success,
            Some(format!(
                "The database lease is held by {h}, renewed {a} s ago."
            )),
        ),
        None => (
            Outcome::Warning,
            Some(
                "No reconciler holds the database lease: cluster statuses are not being updated \
                 (start openkeel-magnum reconciler)."
                    .into(),
            ),
        ),
    }
}
