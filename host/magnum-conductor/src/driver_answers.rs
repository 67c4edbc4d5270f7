//! The one gate between a driver's answer and the database. A driver is
//! untrusted code: what it answers is checked here before any row is
//! written, and only an answer that passes becomes a [`Checked`] update,
//! the only kind [`Conductor::save_update`] takes.
//!
//! The rules:
//! - an answer changes the cluster the call is about and that cluster's own
//!   nodegroups, nothing else;
//! - ids, uuids, owners, names, the template (except the one an upgrade
//!   moves to), the certificate references, `create_timeout` and creation
//!   times are the host's: an answer must carry them as they were read;
//! - a nodegroup the answer inserts (`id` 0) names no other cluster or
//!   project, has a name no other nodegroup of the cluster has, and gets
//!   the host's uuid; an answer inserts at most [`MAX_INSERTED`];
//! - `deleted-nodegroups` names non-default nodegroups of the cluster;
//! - every status is a transition the operation allows
//!   ([`magnum_domain::transitions`]);
//! - every value fits its column as Magnum's schema declares it.
//!
//! An answer that breaks a rule fails the operation with a reason that
//! names the driver and the rule, counts against the driver's breaker, and
//! changes nothing.

use std::collections::HashSet;

use driver_host::{CallError, ClusterState, Driver, Update};
use magnum_domain::models::{Cluster, NodeGroup, StringMap};
use magnum_domain::status::HealthStatus;
use magnum_domain::transitions::{self, Operation, Row};
use python_semantics::pyjson;

use super::Conductor;

/// The most nodegroups one answer may insert.
pub(crate) const MAX_INSERTED: usize = 16;

/// `VARCHAR(255)`, in characters.
const VARCHAR: usize = 255;
/// `TEXT` in MariaDB, in bytes.
const TEXT: usize = 65_535;
/// `nodegroup.version`, `*.health_status`: `VARCHAR(20)`.
const SHORT: usize = 20;

/// A driver's answer that passed the gate, or an update the host made
/// itself: what [`Conductor::save_update`] writes.
#[derive(Clone, Debug, Default)]
pub(crate) struct Checked(Update);

impl Checked {
    /// An update the host built itself (never a driver's answer).
    pub(crate) fn host(upd: Update) -> Checked {
        Checked(upd)
    }

    /// The update.
    pub(crate) fn update(&self) -> &Update {
        &self.0
    }

    /// The update, for the host to change further (then [`Checked::host`]).
    pub(crate) fn into_update(self) -> Update {
        self.0
    }

    /// The same update without its cluster row when that is the row as
    /// `read` (there is nothing to write).
    pub(crate) fn without_unchanged_cluster(mut self, read: &Cluster) -> Checked {
        if self.0.cluster.as_ref() == Some(read) {
            self.0.cluster = None;
        }
        self
    }
}

/// What a driver call was, for the gate.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Call<'a> {
    pub op: Operation,
    /// The exported function (`create-cluster`).
    pub function: &'static str,
    /// The nodegroup a nodegroup operation is about.
    pub nodegroup: Option<&'a str>,
    /// The template an upgrade moves the cluster to.
    pub template: Option<&'a str>,
}

impl<'a> Call<'a> {
    pub(crate) fn new(op: Operation, function: &'static str) -> Call<'a> {
        Call {
            op,
            function,
            nodegroup: None,
            template: None,
        }
    }

    /// A call about the nodegroup `uuid`.
    pub(crate) fn on_nodegroup(mut self, uuid: &'a str) -> Call<'a> {
        self.nodegroup = Some(uuid);
        self
    }

    /// An upgrade to the template `uuid`.
    pub(crate) fn to_template(mut self, uuid: &'a str) -> Call<'a> {
        self.template = Some(uuid);
        self
    }
}

impl Conductor {
    /// A driver's answer through the gate: the checked update, or the
    /// driver's own error, or a fault of the driver naming the rule its
    /// answer broke.
    pub(crate) fn gate(
        &self,
        drv: &Driver,
        call: Call<'_>,
        read: &ClusterState,
        answer: Result<Update, CallError>,
    ) -> Result<Checked, CallError> {
        let refuse = |rule: Broken| {
            drv.refuse_answer(
                call.function,
                format!(
                    "its answer to the {} of cluster {} was refused: {rule}",
                    call.op.as_str(),
                    read.cluster.uuid
                ),
            )
        };
        let upd = match answer {
            Ok(upd) => upd,
            // What a failed operation keeps is checked like any answer
            // (its statuses as the operation's own; the failure moves
            // them to *_FAILED afterwards).
            Err(CallError::FailedAfter { reason, update }) => {
                return match check(call, read, *update, &mut || self.new_uuid()) {
                    Ok(kept) => Err(CallError::FailedAfter {
                        reason,
                        update: Box::new(kept.0),
                    }),
                    Err(rule) => Err(refuse(rule)),
                };
            }
            Err(e) => return Err(e),
        };
        check(call, read, upd, &mut || self.new_uuid()).map_err(refuse)
    }

    /// Saves what a failed operation asked to keep (contract 1.1's
    /// `failed-after`, already through the gate), before its rows are
    /// failed: the identifiers a later delete needs. A failure to save is
    /// logged.
    pub(crate) async fn keep_after_failure(&self, read: &ClusterState, e: &CallError) {
        let CallError::FailedAfter { update, .. } = e else {
            return;
        };
        let kept = Checked((**update).clone()).without_unchanged_cluster(&read.cluster);
        if let Err(e) = self.save_update(&kept, read).await {
            tracing::error!(cluster_uuid = %read.cluster.uuid, error = %e, "save what a failed operation kept");
        }
    }
}

/// The rule an answer broke, in a sentence without its values (an answer
/// may be large).
type Broken = String;

/// Checks `upd`, the answer of `call` about the rows `read`.
pub(crate) fn check(
    call: Call<'_>,
    read: &ClusterState,
    mut upd: Update,
    new_uuid: &mut dyn FnMut() -> String,
) -> Result<Checked, Broken> {
    let cl = &read.cluster;
    if let Some(answer) = &upd.cluster {
        check_cluster(call, cl, answer)?;
    }
    let cluster_status = cl.status;
    if upd.nodegroups.len() > read.nodegroups.len() + MAX_INSERTED {
        return Err(format!(
            "it lists {} nodegroups; the cluster has {} and an answer may add at most {MAX_INSERTED}",
            upd.nodegroups.len(),
            read.nodegroups.len()
        ));
    }
    let mut seen: HashSet<String> = HashSet::new();
    let mut names: HashSet<String> = read.nodegroups.iter().map(|n| n.name.clone()).collect();
    let mut inserted = 0;
    for ng in &mut upd.nodegroups {
        if ng.id == 0 {
            inserted += 1;
            if inserted > MAX_INSERTED {
                return Err(format!("it adds more than {MAX_INSERTED} nodegroups"));
            }
            if ng.name.is_empty() {
                return Err("it adds a nodegroup without a name".into());
            }
            if !ng.cluster_id.is_empty() && ng.cluster_id != cl.uuid {
                return Err("it adds a nodegroup to another cluster".into());
            }
            if !ng.project_id.is_empty() && ng.project_id != cl.project_id {
                return Err("it adds a nodegroup to another project".into());
            }
            if !names.insert(ng.name.clone()) {
                return Err("it adds a nodegroup with the name of another one".into());
            }
            ng.uuid = new_uuid();
            ng.cluster_id = cl.uuid.clone();
            ng.project_id = cl.project_id.clone();
            ng.created_at = cl.created_at;
            ng.updated_at = None;
            let row = Row::NodeGroup { target: true };
            check_status(
                call.op,
                row,
                cluster_status,
                None,
                ng.status,
                "a new nodegroup",
            )?;
            check_nodegroup_columns(ng)?;
            continue;
        }
        let Some(mine) = read.nodegroups.iter().find(|n| n.uuid == ng.uuid) else {
            return Err("it changes a nodegroup that is not one of the cluster's".into());
        };
        if !seen.insert(ng.uuid.clone()) {
            return Err(format!("it lists nodegroup {} twice", mine.uuid));
        }
        check_nodegroup(call, cluster_status, mine, ng)?;
    }
    let mut deleted: Vec<String> = Vec::new();
    for uuid in &upd.deleted_nodegroups {
        let Some(mine) = read.nodegroups.iter().find(|n| &n.uuid == uuid) else {
            return Err("it deletes a nodegroup that is not one of the cluster's".into());
        };
        if mine.is_default == Some(true) {
            return Err(format!("it deletes the default nodegroup {}", mine.uuid));
        }
        if seen.contains(uuid) {
            return Err(format!(
                "it both changes and deletes nodegroup {}",
                mine.uuid
            ));
        }
        if !deleted.contains(uuid) {
            deleted.push(uuid.clone());
        }
    }
    upd.deleted_nodegroups = deleted;
    Ok(Checked(upd))
}

fn check_cluster(call: Call<'_>, read: &Cluster, answer: &Cluster) -> Result<(), Broken> {
    if answer.uuid != read.uuid || answer.id != read.id {
        return Err("it changes another cluster".into());
    }
    let template_ok = answer.cluster_template_id == read.cluster_template_id
        || call.template == Some(answer.cluster_template_id.as_str());
    let host_owned: [(&str, bool); 11] = [
        ("name", answer.name == read.name),
        ("project_id", answer.project_id == read.project_id),
        ("user_id", answer.user_id == read.user_id),
        ("cluster_template_id", template_ok),
        ("ca_cert_ref", answer.ca_cert_ref == read.ca_cert_ref),
        (
            "magnum_cert_ref",
            answer.magnum_cert_ref == read.magnum_cert_ref,
        ),
        (
            "etcd_ca_cert_ref",
            answer.etcd_ca_cert_ref == read.etcd_ca_cert_ref,
        ),
        (
            "front_proxy_ca_cert_ref",
            answer.front_proxy_ca_cert_ref == read.front_proxy_ca_cert_ref,
        ),
        (
            "create_timeout",
            answer.create_timeout == read.create_timeout,
        ),
        ("created_at", answer.created_at == read.created_at),
        ("updated_at", answer.updated_at == read.updated_at),
    ];
    if let Some((column, _)) = host_owned.iter().find(|(_, same)| !same) {
        return Err(format!(
            "it changes the cluster's {column}, which only the host writes"
        ));
    }
    check_status(
        call.op,
        Row::Cluster,
        read.status,
        read.status,
        answer.status,
        "the cluster",
    )?;
    if let Some(h) = &answer.health_status
        && h.parse::<HealthStatus>().is_err()
    {
        return Err("it sets a health_status that is not HEALTHY, UNHEALTHY or UNKNOWN".into());
    }
    let texts: [(&str, &Option<String>, usize); 10] = [
        ("keypair", &answer.keypair, VARCHAR),
        ("master_flavor_id", &answer.master_flavor_id, VARCHAR),
        ("flavor_id", &answer.flavor_id, VARCHAR),
        ("stack_id", &answer.stack_id, VARCHAR),
        ("api_address", &answer.api_address, VARCHAR),
        ("discovery_url", &answer.discovery_url, VARCHAR),
        ("coe_version", &answer.coe_version, VARCHAR),
        ("container_version", &answer.container_version, VARCHAR),
        ("fixed_network", &answer.fixed_network, VARCHAR),
        ("fixed_subnet", &answer.fixed_subnet, VARCHAR),
    ];
    for (column, value, max) in texts {
        fits_chars("cluster", column, value.as_deref(), max, true)?;
    }
    fits_bytes(
        "cluster",
        "status_reason",
        answer.status_reason.as_deref(),
        true,
    )?;
    fits_json("cluster", "labels", answer.labels.as_ref().map(map_json))?;
    fits_json(
        "cluster",
        "health_status_reason",
        answer.health_status_reason.as_ref().map(map_json),
    )?;
    non_negative("cluster", "docker_volume_size", answer.docker_volume_size)
}

fn check_nodegroup(
    call: Call<'_>,
    cluster_status: Option<magnum_domain::Status>,
    read: &NodeGroup,
    answer: &NodeGroup,
) -> Result<(), Broken> {
    let host_owned: [(&str, bool); 8] = [
        ("id", answer.id == read.id),
        ("cluster_id", answer.cluster_id == read.cluster_id),
        ("project_id", answer.project_id == read.project_id),
        ("name", answer.name == read.name),
        ("role", answer.role == read.role),
        ("is_default", answer.is_default == read.is_default),
        ("created_at", answer.created_at == read.created_at),
        ("updated_at", answer.updated_at == read.updated_at),
    ];
    if let Some((column, _)) = host_owned.iter().find(|(_, same)| !same) {
        return Err(format!(
            "it changes the {column} of nodegroup {}, which only the host writes",
            read.uuid
        ));
    }
    let row = Row::NodeGroup {
        target: call.nodegroup == Some(read.uuid.as_str()),
    };
    check_status(
        call.op,
        row,
        cluster_status,
        read.status,
        answer.status,
        &format!("nodegroup {}", read.uuid),
    )?;
    check_nodegroup_columns(answer)
}

/// The columns a driver may write of a nodegroup fit Magnum's schema.
fn check_nodegroup_columns(ng: &NodeGroup) -> Result<(), Broken> {
    let texts: [(&str, &Option<String>, usize); 6] = [
        ("flavor_id", &ng.flavor_id, VARCHAR),
        ("image_id", &ng.image_id, VARCHAR),
        ("role", &ng.role, VARCHAR),
        ("stack_id", &ng.stack_id, VARCHAR),
        ("version", &ng.version, SHORT),
        ("name", &Some(ng.name.clone()), VARCHAR),
    ];
    for (column, value, max) in texts {
        fits_chars("nodegroup", column, value.as_deref(), max, false)?;
    }
    fits_bytes(
        "nodegroup",
        "status_reason",
        ng.status_reason.as_deref(),
        false,
    )?;
    fits_json("nodegroup", "labels", ng.labels.as_ref().map(map_json))?;
    fits_json(
        "nodegroup",
        "node_labels",
        ng.node_labels.as_ref().map(map_json),
    )?;
    fits_json(
        "nodegroup",
        "node_addresses",
        ng.node_addresses
            .as_ref()
            .map(|l| pyjson::dumps_str_list(l.iter())),
    )?;
    fits_json(
        "nodegroup",
        "node_taints",
        ng.node_taints.as_ref().map(|t| pyjson::dumps_taints(t)),
    )?;
    for (column, n) in [
        ("node_count", ng.node_count),
        ("min_node_count", ng.min_node_count),
        ("max_node_count", ng.max_node_count),
        ("docker_volume_size", ng.docker_volume_size),
    ] {
        non_negative("nodegroup", column, n)?;
    }
    Ok(())
}

fn check_status(
    op: Operation,
    row: Row,
    cluster: Option<magnum_domain::Status>,
    current: Option<magnum_domain::Status>,
    reported: Option<magnum_domain::Status>,
    what: &str,
) -> Result<(), Broken> {
    if transitions::driver_may_report(op, row, cluster, current, reported) {
        return Ok(());
    }
    let show = |s: Option<magnum_domain::Status>| s.map_or("None", |s| s.as_str());
    Err(format!(
        "it moves {what} from {} to {}, which a {} does not",
        show(current),
        show(reported),
        op.as_str()
    ))
}

fn map_json(m: &StringMap) -> String {
    pyjson::dumps_str_map(m.iter())
}

/// A `VARCHAR` column: at most `max` characters; in the cluster table
/// (`utf8mb3` in Magnum's schema on MariaDB) only characters of the Basic
/// Multilingual Plane.
fn fits_chars(
    table: &str,
    column: &str,
    value: Option<&str>,
    max: usize,
    bmp_only: bool,
) -> Result<(), Broken> {
    let Some(v) = value else { return Ok(()) };
    if v.chars().count() > max {
        return Err(format!(
            "its {table}.{column} is longer than the column's {max} characters"
        ));
    }
    bmp(table, column, v, bmp_only)
}

/// A `TEXT` column: at most 65,535 bytes.
fn fits_bytes(
    table: &str,
    column: &str,
    value: Option<&str>,
    bmp_only: bool,
) -> Result<(), Broken> {
    let Some(v) = value else { return Ok(()) };
    if v.len() > TEXT {
        return Err(format!(
            "its {table}.{column} is longer than the column's {TEXT} bytes"
        ));
    }
    bmp(table, column, v, bmp_only)
}

/// A JSON column, stored as `TEXT` in Python's `json.dumps` form (which
/// escapes every character outside ASCII).
fn fits_json(table: &str, column: &str, encoded: Option<String>) -> Result<(), Broken> {
    match encoded {
        Some(v) if v.len() > TEXT => Err(format!(
            "its {table}.{column} is longer than the column's {TEXT} bytes once encoded"
        )),
        _ => Ok(()),
    }
}

fn bmp(table: &str, column: &str, v: &str, bmp_only: bool) -> Result<(), Broken> {
    if bmp_only && v.chars().any(|c| u32::from(c) > 0xFFFF) {
        return Err(format!(
            "its {table}.{column} has characters the column cannot store (outside the Basic Multilingual Plane)"
        ));
    }
    Ok(())
}

fn non_negative(table: &str, column: &str, n: Option<i32>) -> Result<(), Broken> {
    match n {
        Some(n) if n < 0 => Err(format!("its {table}.{column} is negative")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use chrono::NaiveDate;
    use driver_host::ClusterState;
    use magnum_domain::Status;
    use magnum_domain::models::{Cluster, ClusterTemplate, NodeGroup};
    use magnum_domain::transitions::Operation;

    use super::{Call, MAX_INSERTED, Update, check};

    const UUID: &str = "11111111-1111-4111-8111-111111111111";
    const OTHER: &str = "22222222-2222-4222-8222-222222222222";

    fn rows() -> ClusterState {
        let t0 = NaiveDate::from_ymd_opt(2026, 1, 2)
            .and_then(|d| d.and_hms_opt(3, 4, 5))
            .unwrap_or_default();
        let ng = |uuid: &str, name: &str, role: &str, default: bool| NodeGroup {
            id: if default { 1 } else { 3 },
            uuid: uuid.into(),
            name: name.into(),
            cluster_id: UUID.into(),
            project_id: "p1".into(),
            node_count: Some(1),
            role: Some(role.into()),
            is_default: Some(default),
            status: Some(Status::CreateInProgress),
            created_at: t0,
            ..NodeGroup::default()
        };
        ClusterState {
            cluster: Cluster {
                id: 7,
                uuid: UUID.into(),
                name: "c1".into(),
                project_id: "p1".into(),
                user_id: "u1".into(),
                cluster_template_id: "t1".into(),
                status: Some(Status::CreateInProgress),
                ca_cert_ref: Some("ca-1".into()),
                create_timeout: Some(60),
                created_at: t0,
                ..Cluster::default()
            },
            template: ClusterTemplate::default(),
            nodegroups: vec![
                ng(
                    "aaaaaaaa-0000-4000-8000-000000000001",
                    "default-worker",
                    "worker",
                    true,
                ),
                ng(
                    "aaaaaaaa-0000-4000-8000-000000000002",
                    "extra",
                    "worker",
                    false,
                ),
            ],
        }
    }

    fn status_call() -> Call<'static> {
        Call::new(Operation::Status, "poll-status")
    }

    fn run(call: Call<'_>, st: &ClusterState, upd: Update) -> Result<Update, String> {
        let mut n = 0;
        check(call, st, upd, &mut || {
            n += 1;
            format!("00000000-0000-4000-8000-{n:012}")
        })
        .map(super::Checked::into_update)
    }

    fn with_cluster(f: impl FnOnce(&mut Cluster)) -> Update {
        let mut cl = rows().cluster;
        f(&mut cl);
        Update {
            cluster: Some(cl),
            ..Update::default()
        }
    }

    #[test]
    fn an_answer_about_its_own_cluster_passes() {
        let st = rows();
        let upd = with_cluster(|c| {
            c.status = Some(Status::CreateComplete);
            c.api_address = Some("https://192.0.2.1:6443".into());
            c.health_status = Some("HEALTHY".into());
        });
        let out = run(status_call(), &st, upd.clone());
        assert_eq!(out.map(|u| u.cluster), Ok(upd.cluster));
    }

    #[test]
    fn an_answer_naming_another_cluster_or_changing_host_columns_is_refused() {
        let st = rows();
        let cases: Vec<(Update, &str)> = vec![
            (with_cluster(|c| c.uuid = OTHER.into()), "another cluster"),
            (with_cluster(|c| c.id = 8), "another cluster"),
            (with_cluster(|c| c.project_id = "p2".into()), "project_id"),
            (
                with_cluster(|c| c.cluster_template_id = "t2".into()),
                "cluster_template_id",
            ),
            (
                with_cluster(|c| c.ca_cert_ref = Some("ca-of-another".into())),
                "ca_cert_ref",
            ),
            (
                with_cluster(|c| c.create_timeout = Some(0)),
                "create_timeout",
            ),
            (
                with_cluster(|c| c.status = Some(Status::AdoptComplete)),
                "CREATE_IN_PROGRESS to ADOPT_COMPLETE",
            ),
            (
                with_cluster(|c| c.status = Some(Status::DeleteComplete)),
                "to DELETE_COMPLETE",
            ),
            (with_cluster(|c| c.status = None), "to None"),
            (
                with_cluster(|c| c.health_status = Some("FINE".into())),
                "health_status",
            ),
            (
                with_cluster(|c| c.api_address = Some("a".repeat(256))),
                "cluster.api_address",
            ),
            (
                with_cluster(|c| c.status_reason = Some("x".repeat(65_536))),
                "cluster.status_reason",
            ),
            (
                with_cluster(|c| c.status_reason = Some("done \u{1F680}".into())),
                "Basic Multilingual Plane",
            ),
            (
                with_cluster(|c| c.docker_volume_size = Some(-1)),
                "negative",
            ),
        ];
        for (upd, rule) in cases {
            let err = run(status_call(), &st, upd).expect_err(rule);
            assert!(err.contains(rule), "{err:?} does not say {rule:?}");
        }
    }

    #[test]
    fn an_upgrade_may_move_the_cluster_to_its_template_only() {
        let st = {
            let mut st = rows();
            st.cluster.status = Some(Status::CreateComplete);
            st
        };
        let call = Call::new(Operation::UpdateCluster, "upgrade-cluster").to_template("t2");
        let to = |t: &str| {
            let mut cl = st.cluster.clone();
            cl.cluster_template_id = t.into();
            cl.status = Some(Status::UpdateInProgress);
            Update {
                cluster: Some(cl),
                ..Update::default()
            }
        };
        assert!(run(call, &st, to("t2")).is_ok());
        assert!(run(call, &st, to("t3")).is_err());
    }

    #[test]
    fn nodegroups_of_another_cluster_are_refused_and_the_defaults_kept() {
        let st = rows();
        let mut other = st.nodegroups[1].clone();
        other.uuid = OTHER.into();
        let upd = Update {
            nodegroups: vec![other],
            ..Update::default()
        };
        assert!(
            run(status_call(), &st, upd).is_err_and(|e| e.contains("not one of the cluster's"))
        );
        let mut moved = st.nodegroups[1].clone();
        moved.cluster_id = OTHER.into();
        let upd = Update {
            nodegroups: vec![moved],
            ..Update::default()
        };
        assert!(run(status_call(), &st, upd).is_err_and(|e| e.contains("cluster_id")));
        let delete = |uuid: &str| Update {
            deleted_nodegroups: vec![uuid.to_string()],
            ..Update::default()
        };
        assert!(run(status_call(), &st, delete(OTHER)).is_err());
        let default = st.nodegroups[0].uuid.clone();
        assert!(run(status_call(), &st, delete(&default)).is_err_and(|e| e.contains("default")));
        let extra = st.nodegroups[1].uuid.clone();
        let mut twice = delete(&extra);
        twice.deleted_nodegroups.push(extra.clone());
        assert_eq!(
            run(status_call(), &st, twice).map(|u| u.deleted_nodegroups),
            Ok(vec![extra])
        );
        let mut negative = st.nodegroups[1].clone();
        negative.node_count = Some(-3);
        let upd = Update {
            nodegroups: vec![negative],
            ..Update::default()
        };
        assert!(run(status_call(), &st, upd).is_err_and(|e| e.contains("node_count")));
    }

    #[test]
    fn an_inserted_nodegroup_gets_the_hosts_ids_and_no_other_cluster() {
        let st = rows();
        let new = |name: &str, cluster: &str| NodeGroup {
            id: 0,
            uuid: "driver-chosen".into(),
            name: name.into(),
            cluster_id: cluster.into(),
            status: Some(Status::CreateInProgress),
            ..NodeGroup::default()
        };
        let upd = Update {
            nodegroups: vec![new("ng-3", "")],
            ..Update::default()
        };
        let out = run(status_call(), &st, upd).unwrap_or_default();
        let ng = &out.nodegroups[0];
        assert_eq!(
            (
                ng.uuid.as_str(),
                ng.cluster_id.as_str(),
                ng.project_id.as_str()
            ),
            ("00000000-0000-4000-8000-000000000001", UUID, "p1")
        );
        let into_other = Update {
            nodegroups: vec![new("ng-3", OTHER)],
            ..Update::default()
        };
        assert!(run(status_call(), &st, into_other).is_err_and(|e| e.contains("another cluster")));
        let same_name = Update {
            nodegroups: vec![new("extra", "")],
            ..Update::default()
        };
        assert!(run(status_call(), &st, same_name).is_err());
        let many = Update {
            nodegroups: (0..=MAX_INSERTED)
                .map(|i| new(&format!("n{i}"), ""))
                .collect(),
            ..Update::default()
        };
        assert!(run(status_call(), &st, many).is_err());
    }
}
