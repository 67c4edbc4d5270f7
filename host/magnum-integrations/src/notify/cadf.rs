//! The CADF event of a cluster operation, as Magnum's
//! `notify_about_cluster_operation` builds it with pycadf 4.1.0 and
//! `as_dict()` serialises it: pycadf's field names, its key order (the order
//! the attributes are set), its identifiers and time format.
//!
//! Magnum: magnum/conductor/utils.py:59-154 (`_get_request_audit_info`,
//! `_get_event_target`, `notify_about_cluster_operation`).

use chrono::{DateTime, Utc};
use magnum_domain::models::{Cluster, NodeGroup};
use magnum_domain::{RequestContext, Status};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};
use uuid::Uuid;

use super::envelope::{Priority, primitive_datetime};

/// `typeURI` of a CADF event.
pub const EVENT_TYPE_URI: &str = "http://schemas.dmtf.org/cloud/audit/1.0/event";
/// `typeURI` of the initiator (pycadf's `ACCOUNT_USER`).
pub const INITIATOR_TYPE_URI: &str = "service/security/account/user";
/// `typeURI` of the target, its attachment and the observer.
pub const CLUSTER_TYPE_URI: &str = "service/magnum/cluster";

/// The CADF action of a cluster operation; it names the event type
/// `magnum.cluster.<action>`. Resize, upgrade, CA rotation and rollback
/// are `Update` in Magnum.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Action {
    /// `create`.
    Create,
    /// `update`.
    Update,
    /// `delete`.
    Delete,
}

impl Action {
    /// The CADF action.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Create => "create",
            Action::Update => "update",
            Action::Delete => "delete",
        }
    }

    /// `magnum.cluster.<action>`.
    pub fn event_type(self) -> &'static str {
        match self {
            Action::Create => "magnum.cluster.create",
            Action::Update => "magnum.cluster.update",
            Action::Delete => "magnum.cluster.delete",
        }
    }
}

/// The CADF outcome: the phase of the operation. Magnum sends `Pending`
/// when the conductor starts the operation (before the driver is called),
/// `Failure` when it or the driver fails, and `Success`/`Failure` when the
/// periodic status sync sees the cluster reach `*_COMPLETE`/`*_FAILED`.
/// There are no `.start`/`.end` event types: the outcome is the phase.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Outcome {
    /// `pending`: the operation started.
    Pending,
    /// `success`: the operation finished.
    Success,
    /// `failure`: the operation failed (sent at priority ERROR).
    Failure,
}

impl Outcome {
    /// The CADF outcome.
    pub fn as_str(self) -> &'static str {
        match self {
            Outcome::Pending => "pending",
            Outcome::Success => "success",
            Outcome::Failure => "failure",
        }
    }

    /// `notifier.error` for a failure, `notifier.info` otherwise.
    pub fn priority(self) -> Priority {
        match self {
            Outcome::Failure => Priority::Error,
            Outcome::Pending | Outcome::Success => Priority::Info,
        }
    }
}

/// The event the status sync sends when a cluster reaches `status`:
/// `success` for CREATE/UPDATE/DELETE/ROLLBACK `_COMPLETE`, `failure` for
/// their `_FAILED` (rollback counting as update); `None` for any other
/// status.
///
/// Magnum: magnum/service/periodic.py:51 (`status_to_event`) — a
/// `*_COMPLETE`/`*_FAILED` status outside the table raises there, so
/// nothing is sent for it.
pub fn terminal_event(status: Status) -> Option<(Action, Outcome)> {
    match status {
        Status::CreateComplete => Some((Action::Create, Outcome::Success)),
        Status::CreateFailed => Some((Action::Create, Outcome::Failure)),
        Status::UpdateComplete | Status::RollbackComplete => {
            Some((Action::Update, Outcome::Success))
        }
        Status::UpdateFailed | Status::RollbackFailed => Some((Action::Update, Outcome::Failure)),
        Status::DeleteComplete => Some((Action::Delete, Outcome::Success)),
        Status::DeleteFailed => Some((Action::Delete, Outcome::Failure)),
        _ => None,
    }
}

/// The random UUIDs an event consumes, in the order Magnum's code draws
/// them: the initiator's, the observer's, the event's.
#[derive(Clone, Copy, Debug)]
pub struct EventIds {
    /// Drawn for the initiator resource.
    pub initiator: Uuid,
    /// Drawn for the observer resource.
    pub observer: Uuid,
    /// Drawn for the event.
    pub event: Uuid,
}

/// pycadf's namespace of generated identifiers: the first 128 bits of
/// SHA-256 of `[audit]/namespace` (default `openstack`).
// Deviation: pycadf reads `[audit]/namespace` from the configuration; it
// is always `openstack` here.
fn audit_namespace() -> Uuid {
    let digest = Sha256::digest(b"openstack");
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    Uuid::from_bytes(bytes)
}

/// pycadf's `generate_uuid()`: a version-5 UUID of a random one, in the
/// audit namespace.
pub fn cadf_id(random: Uuid) -> String {
    Uuid::new_v5(
        &audit_namespace(),
        random.hyphenated().to_string().as_bytes(),
    )
    .hyphenated()
    .to_string()
}

/// pycadf's `eventTime`: `%Y-%m-%dT%H:%M:%S.%f%z` of an aware UTC time.
pub fn event_time(t: DateTime<Utc>) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f+0000").to_string()
}

/// The CADF event of `action` with `outcome` on `cluster` by `ctx`: the
/// payload of the `magnum.cluster.<action>` notification.
pub fn cluster_event(
    ctx: &RequestContext,
    cluster: &Cluster,
    nodegroups: &[NodeGroup],
    action: Action,
    outcome: Outcome,
    ids: EventIds,
    now: DateTime<Utc>,
) -> Value {
    let mut observer = Map::new();
    observer.insert("id".into(), cadf_id(ids.observer).into());
    observer.insert("typeURI".into(), CLUSTER_TYPE_URI.into());

    let mut e = Map::new();
    e.insert("typeURI".into(), EVENT_TYPE_URI.into());
    e.insert("eventType".into(), "activity".into());
    e.insert("id".into(), cadf_id(ids.event).into());
    e.insert("eventTime".into(), event_time(now).into());
    e.insert("action".into(), action.as_str().into());
    e.insert("outcome".into(), outcome.as_str().into());
    e.insert("observer".into(), Value::Object(observer));
    e.insert(
        "initiator".into(),
        Value::Object(initiator(ctx, ids.initiator)),
    );
    e.insert("target".into(), Value::Object(target(cluster, nodegroups)));
    Value::Object(e)
}

/// The initiator: a user resource with the caller's user and project as
/// extra attributes, each only when set. There is no `credential`.
///
/// Magnum: magnum/conductor/utils.py:59 — `domain_id` is read from the
/// context, where Magnum's context never keeps it, so it never appears.
fn initiator(ctx: &RequestContext, random: Uuid) -> Map<String, Value> {
    let mut r = Map::new();
    r.insert("id".into(), cadf_id(random).into());
    r.insert("typeURI".into(), INITIATOR_TYPE_URI.into());
    if !ctx.user_id.is_empty() {
        r.insert("user_id".into(), ctx.user_id.clone().into());
    }
    if !ctx.project_id.is_empty() {
        r.insert("project_id".into(), ctx.project_id.clone().into());
    }
    r
}

/// The target: the cluster, with its data as the `cluster_data`
/// attachment.
fn target(c: &Cluster, nodegroups: &[NodeGroup]) -> Map<String, Value> {
    let mut groups: Vec<&NodeGroup> = nodegroups.iter().collect();
    // Magnum lists a cluster's nodegroups by id.
    groups.sort_by_key(|ng| ng.id);
    let is_master = |ng: &NodeGroup| ng.role.as_deref() == Some("master");
    let count = |master: bool| -> i64 {
        groups
            .iter()
            .filter(|ng| is_master(ng) == master)
            .map(|ng| i64::from(ng.node_count.unwrap_or(0)))
            .sum()
    };
    let addresses = |master: bool| -> Value {
        Value::Array(
            groups
                .iter()
                .filter(|ng| is_master(ng) == master)
                .flat_map(|ng| ng.node_addresses.iter().flatten())
                .cloned()
                .map(Value::String)
                .collect(),
        )
    };

    let mut content = Map::new();
    content.insert("status".into(), c.status.map(|s| s.as_str()).into());
    content.insert("status_reason".into(), c.status_reason.clone().into());
    content.insert("project_id".into(), c.project_id.clone().into());
    content.insert("created_at".into(), primitive_datetime(c.created_at).into());
    content.insert(
        "updated_at".into(),
        c.updated_at.map(primitive_datetime).into(),
    );
    content.insert(
        "cluster_template_id".into(),
        c.cluster_template_id.clone().into(),
    );
    content.insert("keypair".into(), c.keypair.clone().into());
    // Magnum: magnum/conductor/utils.py:106 — the key has a colon.
    content.insert("docker_volume_size:".into(), c.docker_volume_size.into());
    content.insert(
        "labels".into(),
        match &c.labels {
            Some(labels) => Value::Object(
                labels
                    .iter()
                    .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                    .collect(),
            ),
            None => Value::Null,
        },
    );
    content.insert("master_flavor_id".into(), c.master_flavor_id.clone().into());
    content.insert("flavor_id".into(), c.flavor_id.clone().into());
    content.insert("stack_id".into(), c.stack_id.clone().into());
    content.insert("health_status".into(), c.health_status.clone().into());
    content.insert("create_timeout".into(), c.create_timeout.into());
    content.insert("api_address".into(), c.api_address.clone().into());
    content.insert("discovery_url".into(), c.discovery_url.clone().into());
    content.insert("node_addresses".into(), addresses(false));
    content.insert("master_addresses".into(), addresses(true));
    content.insert("node_count".into(), count(false).into());
    content.insert("master_count".into(), count(true).into());

    let mut attachment = Map::new();
    attachment.insert("typeURI".into(), CLUSTER_TYPE_URI.into());
    attachment.insert("content".into(), Value::Object(content));
    attachment.insert("name".into(), "cluster_data".into());

    let mut r = Map::new();
    r.insert("id".into(), c.uuid.clone().into());
    r.insert("typeURI".into(), CLUSTER_TYPE_URI.into());
    r.insert("name".into(), c.name.clone().into());
    r.insert(
        "attachments".into(),
        Value::Array(vec![Value::Object(attachment)]),
    );
    r
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;

    fn random(i: u128) -> Uuid {
        Uuid::parse_str(&format!("00000000-0000-4000-8000-{i:012x}")).unwrap()
    }

    #[test]
    fn identifiers_are_pycadfs_uuid5_in_the_openstack_namespace() {
        // uuid.uuid5(AUDIT_NS, "00000000-0000-4000-8000-00000000000N") with
        // pycadf 4.1.0's namespace.
        assert_eq!(cadf_id(random(1)), "020ff9a6-a5e2-5d17-9d45-b71133343510");
        assert_eq!(cadf_id(random(2)), "a05f2e71-8f93-505d-8e79-342f3794a5a7");
        assert_eq!(cadf_id(random(3)), "12dc0fba-4917-5f39-9803-ca1f4baba9e9");
    }

    #[test]
    fn event_time_always_has_microseconds_and_the_offset() {
        let t = Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 5).unwrap();
        assert_eq!(event_time(t), "2026-12-01T08:00:05.000000+0000");
    }

    #[test]
    fn failures_go_out_at_error_the_rest_at_info() {
        assert_eq!(Outcome::Failure.priority(), Priority::Error);
        assert_eq!(Outcome::Pending.priority(), Priority::Info);
        assert_eq!(Outcome::Success.priority(), Priority::Info);
        assert_eq!(Action::Update.event_type(), "magnum.cluster.update");
    }

    #[test]
    fn the_status_sync_maps_terminal_statuses_as_magnum() {
        let sent: Vec<(Status, Option<(Action, Outcome)>)> = Status::ALL
            .iter()
            .map(|s| (*s, terminal_event(*s)))
            .collect();
        let want = [
            (Status::CreateFailed, (Action::Create, Outcome::Failure)),
            (Status::CreateComplete, (Action::Create, Outcome::Success)),
            (Status::UpdateFailed, (Action::Update, Outcome::Failure)),
            (Status::UpdateComplete, (Action::Update, Outcome::Success)),
            (Status::DeleteFailed, (Action::Delete, Outcome::Failure)),
            (Status::DeleteComplete, (Action::Delete, Outcome::Success)),
            (Status::RollbackFailed, (Action::Update, Outcome::Failure)),
            (Status::RollbackComplete, (Action::Update, Outcome::Success)),
        ];
        for (status, event) in sent {
            let expected = want.iter().find(|(s, _)| *s == status).map(|(_, e)| *e);
            assert_eq!(event, expected, "{status}");
        }
    }

    #[test]
    fn counts_and_addresses_come_from_the_nodegroups_by_role() {
        let c = Cluster {
            uuid: "c".into(),
            ..Default::default()
        };
        let ng = |id, role: Option<&str>, n, addrs: &[&str]| NodeGroup {
            id,
            role: role.map(str::to_owned),
            node_count: Some(n),
            node_addresses: Some(addrs.iter().map(|s| s.to_string()).collect()),
            ..Default::default()
        };
        let groups = [
            ng(3, Some("worker"), 2, &["10.0.0.9"]),
            ng(1, Some("master"), 3, &["10.0.0.1", "10.0.0.2"]),
            ng(2, None, 1, &["10.0.0.5"]),
        ];
        let t = target(&c, &groups);
        let content = &t["attachments"][0]["content"];
        assert_eq!(content["node_count"], 3);
        assert_eq!(content["master_count"], 3);
        assert_eq!(
            content["node_addresses"],
            serde_json::json!(["10.0.0.5", "10.0.0.9"])
        );
        assert_eq!(
            content["master_addresses"],
            serde_json::json!(["10.0.0.1", "10.0.0.2"])
        );
        assert_eq!(content["labels"], Value::Null);
    }

    #[test]
    fn the_initiator_leaves_out_what_the_context_does_not_have() {
        let i = initiator(&RequestContext::default(), random(1));
        assert_eq!(i.keys().collect::<Vec<_>>(), ["id", "typeURI"], "{i:?}");
        let ctx = RequestContext {
            user_id: "u".into(),
            project_id: "p".into(),
            domain_id: "d".into(),
            ..Default::default()
        };
        let i = initiator(&ctx, random(1));
        assert_eq!(
            i.keys().collect::<Vec<_>>(),
            ["id", "typeURI", "user_id", "project_id"]
        );
    }
}
