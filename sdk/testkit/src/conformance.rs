//! The driver conformance kit: the checks every driver must pass before
//! the host can rely on it. Each check has a stable name, which a failure
//! names:
//!
//! | check | what it asks |
//! |---|---|
//! | `describe-matches-manifest` | the component loads, and each entry point's `describe` (beta, description, cluster types) is its manifest's |
//! | `answers-within-the-contract` | no call traps, times out or answers out of the contract, whatever it is asked |
//! | `unsupported-answers-not-supported` | an operation the driver does not support answers 400 `NotSupported` and touches nothing (not a `failed`, not a trap) |
//! | `create-idempotent`, `update-idempotent`, `delete-idempotent` | the same call on the same rows twice gives the same answer and leaves the same Kubernetes objects |
//! | `status-pure` | `derive-status` twice over the same snapshot of its watches gives the same answer (effects included) and writes nothing; `poll-status` twice on the same rows gives the same answer |
//! | `granted-kinds-only` | the driver never asked the host for something outside its grants (kinds, verbs, namespaces, OpenStack calls, secrets, files) |
//! | `bad-labels-are-400s` | labels the driver must refuse are refused with a 4xx before anything is built, and nonsense label values never make it fail or trap |

use std::collections::BTreeMap;
use std::fmt;

use driver_host::{CallError, ClusterState, Driver, StatusAnswer, Update};
use magnum_domain::Status;

use crate::Kit;
use crate::fixtures;

/// What to check beyond the defaults.
#[derive(Clone, Debug, Default)]
pub struct Options {
    /// Labels a cluster is created with (a driver that needs some).
    pub labels: BTreeMap<String, String>,
    /// Label sets the driver must refuse with a 4xx (each merged over
    /// [`Options::labels`]).
    pub bad_labels: Vec<BTreeMap<String, String>>,
}

impl Options {
    /// Adds a label set the driver must refuse.
    pub fn refuses(mut self, labels: &[(&str, &str)]) -> Options {
        self.bad_labels.push(
            labels
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        self
    }
}

/// How a check ended.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Outcome {
    Passed,
    /// Why, in one line.
    Failed(String),
    /// The check does not apply (the driver does not support the call).
    Skipped(String),
}

/// One check of one entry point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Check {
    pub name: &'static str,
    pub entry_point: String,
    pub outcome: Outcome,
}

/// Every check's outcome.
#[derive(Clone, Debug, Default)]
pub struct Report {
    pub checks: Vec<Check>,
}

impl Report {
    /// The failed checks.
    pub fn failures(&self) -> Vec<&Check> {
        self.checks
            .iter()
            .filter(|c| matches!(c.outcome, Outcome::Failed(_)))
            .collect()
    }

    /// Whether every check passed or did not apply.
    pub fn passed(&self) -> bool {
        self.failures().is_empty()
    }

    /// The names of the failed checks.
    pub fn failed_names(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self.failures().iter().map(|c| c.name).collect();
        v.dedup();
        v
    }

    /// The outcome of a check (of the first entry point having it).
    pub fn outcome(&self, name: &str) -> Option<&Outcome> {
        self.checks
            .iter()
            .find(|c| c.name == name)
            .map(|c| &c.outcome)
    }

    /// Panics with the report when a check failed.
    #[track_caller]
    pub fn assert_passed(&self) {
        if !self.passed() {
            panic!("the driver fails the conformance kit:\n{self}");
        }
    }
}

impl fmt::Display for Report {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.checks {
            match &c.outcome {
                Outcome::Passed => writeln!(f, "ok      {} [{}]", c.name, c.entry_point)?,
                Outcome::Skipped(why) => {
                    writeln!(f, "skipped {} [{}]: {why}", c.name, c.entry_point)?
                }
                Outcome::Failed(why) => {
                    writeln!(f, "FAILED  {} [{}]: {why}", c.name, c.entry_point)?
                }
            }
        }
        Ok(())
    }
}

/// Nonsense values no driver may fail or trap on.
const NONSENSE: &[&str] = &[
    "",
    " ",
    "-1",
    "999999999999999999999",
    "ünïcødé ✓",
    "a,b,,c",
    "{}",
];

/// Labels Magnum's drivers read, given nonsense values.
const COMMON_LABELS: &[&str] = &[
    "kube_tag",
    "master_lb_floating_ip_enabled",
    "auto_scaling_enabled",
    "min_node_count",
    "max_node_count",
    "availability_zone",
    "boot_volume_size",
];

/// Runs every check on every entry point of the kit's package.
pub async fn run(kit: &Kit, opts: &Options) -> Report {
    let mut report = Report::default();
    let drivers = match kit.drivers() {
        Ok(d) => d,
        Err(e) => {
            report.checks.push(Check {
                name: "describe-matches-manifest",
                entry_point: String::new(),
                outcome: Outcome::Failed(e),
            });
            return report;
        }
    };
    for (i, d) in drivers.iter().enumerate() {
        let mut run = Run {
            kit,
            driver: d,
            opts,
            report: &mut report,
            next_cluster: (i as u32) * 100,
        };
        run.all().await;
    }
    report
}

struct Run<'a> {
    kit: &'a Kit,
    driver: &'a Driver,
    opts: &'a Options,
    report: &'a mut Report,
    next_cluster: u32,
}

type Answer = Result<Update, CallError>;

fn same<T: PartialEq>(a: &Result<T, CallError>, b: &Result<T, CallError>) -> bool {
    match (a, b) {
        (Ok(x), Ok(y)) => x == y,
        (Err(x), Err(y)) => x.to_string() == y.to_string(),
        _ => false,
    }
}

fn brief(a: &Answer) -> String {
    match a {
        Ok(u) => {
            let mut s = String::from("an update");
            if let Some(c) = &u.cluster {
                s += &format!(
                    " (cluster {} stack_id {:?} status_reason {:?})",
                    c.status.map(|s| s.as_str()).unwrap_or("-"),
                    c.stack_id,
                    c.status_reason
                );
            }
            s
        }
        Err(e) => format!("error {e}"),
    }
}

/// A status answer in brief: its update, and the effects it asks for.
fn brief_status(a: &Result<StatusAnswer, CallError>) -> String {
    let mut s = brief(&a.clone().map(|s| s.update));
    if let Ok(a) = a
        && !a.effects.is_empty()
    {
        let names: Vec<&str> = a.effects.iter().map(|e| e.name.as_str()).collect();
        s += &format!(" asking for {}", names.join(", "));
    }
    s
}

fn is_not_supported(e: &CallError) -> bool {
    matches!(e, CallError::Client(m) if m.kind == "NotSupported")
}

impl Run<'_> {
    fn record(&mut self, name: &'static str, outcome: Outcome) {
        self.report.checks.push(Check {
            name,
            entry_point: self.driver.name().to_string(),
            outcome,
        });
    }

    /// The rows of a cluster no other check touched.
    fn cluster(&mut self, labels: &BTreeMap<String, String>) -> ClusterState {
        self.next_cluster += 1;
        let target = self
            .driver
            .provides()
            .first()
            .cloned()
            .unwrap_or_else(|| driver_host::Target::new("vm", "fedora-coreos", "kubernetes"));
        let mut all = self.opts.labels.clone();
        all.extend(labels.iter().map(|(k, v)| (k.clone(), v.clone())));
        let mut st = fixtures::new_cluster(self.driver.name(), &target, &all);
        let n = self.next_cluster;
        st.cluster.uuid = format!("{:08x}-0000-4000-8000-00000000c0de", n);
        st.cluster.name = format!("conformance-{n}");
        for (j, ng) in st.nodegroups.iter_mut().enumerate() {
            ng.cluster_id = st.cluster.uuid.clone();
            ng.uuid = format!("{:08x}-0000-4000-8000-0000000{:05x}", n, j + 1);
        }
        st
    }

    async fn all(&mut self) {
        self.describe();
        self.contract().await;
        self.create_update_delete().await;
        self.status().await;
        self.labels().await;
        // Last: every call above counts.
        let refused = self.driver.refused_imports();
        self.record(
            "granted-kinds-only",
            match refused.first() {
                None => Outcome::Passed,
                Some(first) => Outcome::Failed(format!(
                    "the driver asked for {} thing(s) it was not granted; first: {first}",
                    refused.len()
                )),
            },
        );
    }

    fn describe(&mut self) {
        let m = self.kit.manifest();
        let outcome = match m.entry_points.iter().find(|e| e.name == self.driver.name()) {
            None => Outcome::Failed(format!(
                "entry point {} is not in the manifest",
                self.driver.name()
            )),
            Some(e) if e.provides.is_empty() => {
                Outcome::Failed(format!("entry point {} provides no cluster type", e.name))
            }
            Some(e)
                if e.beta != self.driver.beta() || e.description != self.driver.description() =>
            {
                Outcome::Failed(format!(
                    "entry point {}: describe says beta={} {:?}, the manifest beta={} {:?}",
                    e.name,
                    self.driver.beta(),
                    self.driver.description(),
                    e.beta,
                    e.description
                ))
            }
            Some(_) => Outcome::Passed,
        };
        self.record("describe-matches-manifest", outcome);
    }

    /// Every export once on fresh rows (`describe` is the
    /// `describe-matches-manifest` check's): no fault; the unsupported ones
    /// answer `NotSupported` and write nothing.
    async fn contract(&mut self) {
        let d = self.driver;
        let user = fixtures::user();
        let mut faults = Vec::new();
        let mut unsupported_bad = Vec::new();
        let mut note =
            |name: &str, r: Result<(), CallError>, writes_before: usize, writes_after: usize| {
                match r {
                    Err(CallError::Fault(f)) => faults.push(format!("{name}: {f}")),
                    Err(CallError::Failed(t)) => {
                        let l = t.to_lowercase();
                        if l.contains("not supported")
                            || l.contains("unsupported")
                            || l.contains("not implemented")
                        {
                            unsupported_bad.push(format!(
                                "{name} answers failed({t:?}) instead of client(NotSupported)"
                            ));
                        }
                    }
                    Err(CallError::Client(m)) if m.kind == "NotSupported" => {
                        if m.status != 400 {
                            unsupported_bad.push(format!(
                                "{name} answers NotSupported with status {}, not 400",
                                m.status
                            ));
                        } else if writes_after != writes_before {
                            unsupported_bad.push(format!(
                                "{name} answers NotSupported but wrote Kubernetes objects"
                            ));
                        }
                    }
                    _ => {}
                }
            };
        let unit = |r: Result<(), CallError>| r;
        let upd = |r: Result<Update, CallError>| r.map(|_| ());
        let status = |r: Result<StatusAnswer, CallError>| r.map(|_| ());

        let st = self.cluster(&BTreeMap::new());
        let w = || self.kit.kube().writes().len();
        let b = w();
        note(
            "validate-master-size",
            unit(d.validate_master_size(1).await),
            b,
            w(),
        );
        let b = w();
        note(
            "validate-master-resize",
            unit(d.validate_master_resize(3).await),
            b,
            w(),
        );
        let b = w();
        note(
            "validate-create",
            unit(d.validate_create(&user, &st).await),
            b,
            w(),
        );
        let b = w();
        note(
            "validate-upgrade",
            unit(d.validate_upgrade(&user, &st, &st.template).await),
            b,
            w(),
        );
        let b = w();
        note(
            "can-rotate-ca",
            unit(d.can_rotate_ca(&user, &st).await),
            b,
            w(),
        );
        let ng = st.nodegroups.last().cloned().unwrap_or_default();
        let mut extra = ng.clone();
        extra.id = 0;
        extra.uuid = format!("{}-x", &st.cluster.uuid[..8]);
        extra.name = "extra".into();
        extra.is_default = Some(false);
        let b = w();
        note(
            "validate-nodegroup",
            unit(d.validate_nodegroup(&user, &st, &extra).await),
            b,
            w(),
        );
        let resize = driver_host::Resize {
            nodegroup_uuid: ng.uuid.clone(),
            node_count: 3,
            nodes_to_remove: Vec::new(),
        };
        let upgrade = driver_host::Upgrade {
            template: st.template.clone(),
            max_batch_size: 1,
            nodegroup_uuid: None,
        };
        macro_rules! call {
            ($name:expr, $e:expr) => {{
                let b = w();
                let r = upd($e.await);
                note($name, r, b, w());
            }};
        }
        call!("create-cluster", d.create_cluster(&user, &st, 60));
        call!("update-cluster", d.update_cluster(&user, &st));
        call!("delete-cluster", d.delete_cluster(&user, &st));
        call!("rotate-ca", d.rotate_ca(&user, &st));
        call!("rotate-credential", d.rotate_credential(&user, &st));
        call!("resize-cluster", d.resize_cluster(&user, &st, &resize));
        call!("upgrade-cluster", d.upgrade_cluster(&user, &st, &upgrade));
        call!("create-nodegroup", d.create_nodegroup(&user, &st, &extra));
        call!("update-nodegroup", d.update_nodegroup(&user, &st, &ng));
        call!("delete-nodegroup", d.delete_nodegroup(&user, &st, &extra));
        let b = w();
        let r = status(d.derive_status(&fixtures::admin(), &st, &[]).await);
        note("derive-status", r, b, w());
        let b = w();
        let r = status(d.poll_status(&fixtures::admin(), &st).await);
        note("poll-status", r, b, w());
        // An effect the driver never asked for: it may refuse it, not
        // fault on it.
        let b = w();
        let probe = [driver_host::Effect {
            name: "conformance-probe".into(),
            detail: String::new(),
        }];
        let r = d.apply_effects(&fixtures::admin(), &st, &probe).await;
        note("apply-effects", r, b, w());
        let b = w();
        let r = d.watches(&fixtures::admin(), &st).await.map(|_| ());
        note("watches", r, b, w());
        self.record(
            "answers-within-the-contract",
            match faults.first() {
                None => Outcome::Passed,
                Some(f) => Outcome::Failed(f.clone()),
            },
        );
        self.record(
            "unsupported-answers-not-supported",
            match unsupported_bad.first() {
                None => Outcome::Passed,
                Some(f) => Outcome::Failed(f.clone()),
            },
        );
    }

    /// Runs `call` twice on the same rows: same answer, same objects.
    async fn twice<F, Fut>(&mut self, name: &'static str, call: F) -> Option<Answer>
    where
        F: Fn() -> Fut,
        Fut: std::future::Future<Output = Answer>,
    {
        let first = call().await;
        if let Err(e) = &first
            && is_not_supported(e)
        {
            self.record(name, Outcome::Skipped("not supported by the driver".into()));
            return None;
        }
        let snap1 = self.kit.kube().snapshot();
        let second = call().await;
        let snap2 = self.kit.kube().snapshot();
        let outcome = if !same(&first, &second) {
            Outcome::Failed(format!(
                "the same call on the same rows answered {} then {}",
                brief(&first),
                brief(&second)
            ))
        } else if snap1 != snap2 {
            let changed: Vec<String> = snap2
                .iter()
                .filter(|(r, v)| snap1.get(*r) != Some(*v))
                .map(|(r, _)| format!("{}/{} {}", r.api_version, r.kind, r.name))
                .chain(
                    snap1
                        .keys()
                        .filter(|r| !snap2.contains_key(*r))
                        .map(|r| format!("{}/{} {} (removed)", r.api_version, r.kind, r.name)),
                )
                .collect();
            Outcome::Failed(format!(
                "calling it again changed Kubernetes objects: {}",
                changed.join(", ")
            ))
        } else {
            Outcome::Passed
        };
        self.record(name, outcome);
        Some(first)
    }

    async fn create_update_delete(&mut self) {
        let d = self.driver;
        let user = fixtures::user();
        let mut st = self.cluster(&BTreeMap::new());
        let created = {
            let st0 = st.clone();
            self.twice("create-idempotent", || d.create_cluster(&user, &st0, 60))
                .await
        };
        let Some(Ok(u)) = created else {
            for name in ["update-idempotent", "delete-idempotent"] {
                self.record(name, Outcome::Skipped("the cluster was not created".into()));
            }
            return;
        };
        fixtures::save(&mut st, &u);
        fixtures::set_status(&mut st, Status::CreateComplete);
        if let Some(w) = st
            .nodegroups
            .iter_mut()
            .find(|n| n.role.as_deref() != Some("master"))
        {
            w.node_count = Some(w.node_count.unwrap_or(1) + 1);
        }
        {
            let st1 = st.clone();
            self.twice("update-idempotent", || d.update_cluster(&user, &st1))
                .await;
        }
        let st2 = st.clone();
        self.twice("delete-idempotent", || d.delete_cluster(&user, &st2))
            .await;
    }

    async fn status(&mut self) {
        let d = self.driver;
        let admin = fixtures::admin();
        let user = fixtures::user();
        let mut st = self.cluster(&BTreeMap::new());
        if let Ok(u) = d.create_cluster(&user, &st, 60).await {
            fixtures::save(&mut st, &u);
        }
        let mut problems = Vec::new();
        let mut checked = 0;
        // derive-status over what its watches select.
        let watches = d.watches(&admin, &st).await.unwrap_or_default();
        if !watches.is_empty() {
            let observed = self.kit.kube().snapshot_of(&watches);
            let before = self.kit.kube().writes().len();
            let a = d.derive_status(&admin, &st, &observed).await;
            let b = d.derive_status(&admin, &st, &observed).await;
            let after = self.kit.kube().writes().len();
            if !matches!(&a, Err(e) if is_not_supported(e)) {
                checked += 1;
                if !same(&a, &b) {
                    problems.push(format!(
                        "derive-status on the same snapshot answered {} then {}",
                        brief_status(&a),
                        brief_status(&b)
                    ));
                }
                if after != before {
                    problems.push(format!(
                        "derive-status wrote {} Kubernetes object(s)",
                        after - before
                    ));
                }
            }
        }
        let a = d.poll_status(&admin, &st).await;
        let b = d.poll_status(&admin, &st).await;
        if !matches!(&a, Err(e) if is_not_supported(e)) {
            checked += 1;
            if !same(&a, &b) {
                problems.push(format!(
                    "poll-status on the same rows answered {} then {}",
                    brief_status(&a),
                    brief_status(&b)
                ));
            }
        }
        self.record(
            "status-pure",
            match (problems.first(), checked) {
                (Some(p), _) => Outcome::Failed(p.clone()),
                (None, 0) => Outcome::Skipped("no status call is supported".into()),
                (None, _) => Outcome::Passed,
            },
        );
    }

    async fn labels(&mut self) {
        let d = self.driver;
        let user = fixtures::user();
        let mut problems = Vec::new();
        for bad in &self.opts.bad_labels {
            let st = self.cluster(bad);
            let shown = format!("{bad:?}");
            match d.validate_create(&user, &st).await {
                Err(CallError::Client(m)) if (400..500).contains(&m.status) => continue,
                Err(e) => {
                    problems.push(format!("labels {shown}: validate-create answered {e}"));
                    continue;
                }
                Ok(()) => {}
            }
            // Refused by create itself, before anything is built.
            let before = self.kit.kube().snapshot();
            match d.create_cluster(&user, &st, 60).await {
                Err(CallError::Client(m)) if (400..500).contains(&m.status) => {
                    if self.kit.kube().snapshot() != before {
                        problems.push(format!(
                            "labels {shown}: create-cluster refused them after writing objects"
                        ));
                    }
                }
                Err(e) => problems.push(format!("labels {shown}: create-cluster answered {e}")),
                Ok(_) => problems.push(format!(
                    "labels {shown}: accepted (the driver was expected to refuse them with a 400)"
                )),
            }
        }
        for key in COMMON_LABELS {
            for value in NONSENSE {
                let st = self.cluster(&[(key.to_string(), value.to_string())].into());
                match d.validate_create(&user, &st).await {
                    Ok(()) => {}
                    Err(CallError::Client(m)) if (400..500).contains(&m.status) => {}
                    Err(e) => problems.push(format!(
                        "label {key}={value:?}: validate-create answered {e} (expected success or a 4xx)"
                    )),
                }
            }
        }
        self.record(
            "bad-labels-are-400s",
            match problems.first() {
                None => Outcome::Passed,
                Some(p) => Outcome::Failed(p.clone()),
            },
        );
    }
}
