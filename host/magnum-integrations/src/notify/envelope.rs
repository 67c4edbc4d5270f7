//! The notification message as oslo.messaging 18.3.1 builds and frames it:
//! the message dictionary `Notifier._notify` makes, the request context its
//! AMQP driver packs into it as `_context_*` keys, the `_unique_id`, and the
//! two bodies — format 1.0 (the `messaging` driver: the dictionary itself)
//! and 2.0 (`messagingv2`: `{"oslo.version": "2.0", "oslo.message":
//! "<the dictionary as a JSON string>"}`). Every JSON text is written as
//! Python's `json.dumps` writes it (kombu's serializer and oslo's
//! `jsonutils.dumps` both are), key order included.

use chrono::{DateTime, NaiveDateTime, Timelike, Utc};
use magnum_domain::RequestContext;
use python_semantics::pyjson::dumps_json;
use serde_json::{Map, Value};
use uuid::Uuid;

/// A notification's priority. The message carries it upper-case; the
/// routing key `<topic>.<priority>` lower-case.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Priority {
    /// `AUDIT`.
    Audit,
    /// `DEBUG`.
    Debug,
    /// `INFO`.
    Info,
    /// `WARN`.
    Warn,
    /// `ERROR`.
    Error,
    /// `CRITICAL`.
    Critical,
    /// `SAMPLE`.
    Sample,
}

impl Priority {
    /// The value of the message's `priority` field.
    pub fn as_str(self) -> &'static str {
        match self {
            Priority::Audit => "AUDIT",
            Priority::Debug => "DEBUG",
            Priority::Info => "INFO",
            Priority::Warn => "WARN",
            Priority::Error => "ERROR",
            Priority::Critical => "CRITICAL",
            Priority::Sample => "SAMPLE",
        }
    }

    /// The priority in routing keys and queue names.
    pub fn routing(self) -> &'static str {
        match self {
            Priority::Audit => "audit",
            Priority::Debug => "debug",
            Priority::Info => "info",
            Priority::Warn => "warn",
            Priority::Error => "error",
            Priority::Critical => "critical",
            Priority::Sample => "sample",
        }
    }
}

/// One notification, before any driver frames it: what a listener's
/// endpoint receives.
#[derive(Clone, Debug, PartialEq)]
pub struct Notification {
    /// `message_id`: a random UUID, hyphenated.
    pub message_id: String,
    /// `publisher_id`: `container-infra.<host>` for Magnum.
    pub publisher_id: String,
    /// `event_type`, e.g. `magnum.cluster.create`.
    pub event_type: String,
    /// `priority`.
    pub priority: Priority,
    /// `payload`: the CADF event for Magnum's notifications.
    pub payload: Value,
    /// `timestamp`: Python's `str()` of a naive UTC datetime.
    pub timestamp: String,
    /// The request context as the AMQP driver packs it (without the
    /// `_context_` prefix); its `auth_token` is always `null`.
    pub context: Map<String, Value>,
}

impl Notification {
    /// The message dictionary `Notifier._notify` builds, in its key order
    /// (the `log` driver writes this).
    pub fn message(&self) -> Map<String, Value> {
        let mut m = Map::new();
        m.insert("message_id".into(), self.message_id.clone().into());
        m.insert("publisher_id".into(), self.publisher_id.clone().into());
        m.insert("event_type".into(), self.event_type.clone().into());
        m.insert("priority".into(), self.priority.as_str().into());
        m.insert("payload".into(), self.payload.clone());
        m.insert("timestamp".into(), self.timestamp.clone().into());
        m
    }

    /// The message the AMQP driver sends: the dictionary, then
    /// `_unique_id` (a UUID's 32 hex digits, fresh for every publish: the
    /// listener drops a repeated one as a duplicate), then the context.
    pub fn amqp_message(&self, unique_id: Uuid) -> Map<String, Value> {
        let mut m = self.message();
        m.insert("_unique_id".into(), unique_id.simple().to_string().into());
        for (k, v) in &self.context {
            m.insert(format!("_context_{k}"), v.clone());
        }
        m
    }
}

/// The message format a `messaging*` driver sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Format {
    /// 1.0, the `messaging` driver: the message itself, no envelope.
    V1,
    /// 2.0, the `messagingv2` driver: the message inside the envelope.
    V2,
}

/// The AMQP body of `n` in `format`, as kombu writes it.
pub fn body(n: &Notification, format: Format, unique_id: Uuid) -> Vec<u8> {
    let message = Value::Object(n.amqp_message(unique_id));
    let text = match format {
        Format::V1 => dumps_json(&message),
        Format::V2 => {
            let mut envelope = Map::new();
            envelope.insert("oslo.version".into(), "2.0".into());
            envelope.insert("oslo.message".into(), dumps_json(&message).into());
            dumps_json(&Value::Object(envelope))
        }
    };
    text.into_bytes()
}

/// The request context as the notification carries it. oslo.messaging
/// first takes `redacted_copy()` of Magnum's context, which rebuilds it
/// through Magnum's constructor: the token, `auth_url`,
/// `auth_token_info`, `all_tenants` and everything that constructor does
/// not keep (domain, system scope, project domain) are lost. What is left
/// is Magnum's `to_dict()` of that copy: oslo.context's keys, then the ones
/// Magnum adds.
///
/// Magnum: magnum/common/context.py — `domain_id` is accepted and dropped,
/// so `domain` is always null.
pub fn context(ctx: &RequestContext) -> Map<String, Value> {
    let user = opt(&ctx.user_id);
    let project = opt(&ctx.project_id);
    let user_domain = opt(&ctx.user_domain_id);
    let identity = format!(
        "{} {} - {} -",
        dash(&ctx.user_id),
        dash(&ctx.project_id),
        dash(&ctx.user_domain_id)
    );
    let mut m = Map::new();
    m.insert("user".into(), user.clone());
    m.insert("project_id".into(), project.clone());
    m.insert("system_scope".into(), Value::Null);
    m.insert("project".into(), project);
    m.insert("domain".into(), Value::Null);
    m.insert("user_domain".into(), user_domain.clone());
    m.insert("project_domain".into(), Value::Null);
    m.insert("is_admin".into(), ctx.is_admin.into());
    m.insert("read_only".into(), false.into());
    m.insert("show_deleted".into(), false.into());
    m.insert("auth_token".into(), Value::Null);
    m.insert("request_id".into(), opt(&ctx.request_id));
    m.insert("global_request_id".into(), Value::Null);
    m.insert("resource_uuid".into(), Value::Null);
    m.insert(
        "roles".into(),
        Value::Array(ctx.roles.iter().cloned().map(Value::String).collect()),
    );
    m.insert("user_identity".into(), identity.into());
    m.insert("is_admin_project".into(), true.into());
    m.insert("auth_url".into(), Value::Null);
    m.insert("user_domain_id".into(), user_domain);
    m.insert("user_domain_name".into(), opt(&ctx.user_domain_name));
    m.insert("user_name".into(), opt(&ctx.user_name));
    m.insert("user_id".into(), user);
    m.insert("project_name".into(), opt(&ctx.project_name));
    m.insert("auth_token_info".into(), Value::Null);
    m.insert("all_tenants".into(), false.into());
    m
}

/// An unset context field (`""` here, `None` in Magnum) is `null`.
fn opt(s: &str) -> Value {
    if s.is_empty() {
        Value::Null
    } else {
        Value::String(s.to_owned())
    }
}

/// oslo.context's `user_identity` writes `-` for an unset part.
fn dash(s: &str) -> &str {
    if s.is_empty() { "-" } else { s }
}

/// Python's `str(datetime)` of a naive UTC time, the message `timestamp`:
/// `2026-12-01 08:00:05.123456`, without the fraction when it is zero.
pub fn oslo_timestamp(t: DateTime<Utc>) -> String {
    let t = t.naive_utc();
    if t.nanosecond() / 1_000 == 0 {
        t.format("%Y-%m-%d %H:%M:%S").to_string()
    } else {
        t.format("%Y-%m-%d %H:%M:%S%.6f").to_string()
    }
}

/// oslo.serialization's form of a datetime in a payload
/// (`%Y-%m-%dT%H:%M:%S.%f`, no offset): `2026-11-30T07:59:00.000000`.
pub fn primitive_datetime(t: NaiveDateTime) -> String {
    t.format("%Y-%m-%dT%H:%M:%S%.6f").to_string()
}

#[cfg(test)]
mod tests {
    use super::*;
    use chrono::TimeZone;
    use serde_json::json;

    #[test]
    fn timestamps_are_pythons_str_of_a_naive_datetime() {
        let t = Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 5).unwrap();
        assert_eq!(oslo_timestamp(t), "2026-12-01 08:00:05");
        let t = t + chrono::Duration::microseconds(120);
        assert_eq!(oslo_timestamp(t), "2026-12-01 08:00:05.000120");
        // Nanoseconds below a microsecond are not shown (Python has none).
        let t = Utc.with_ymd_and_hms(2026, 12, 1, 8, 0, 5).unwrap()
            + chrono::Duration::nanoseconds(999);
        assert_eq!(oslo_timestamp(t), "2026-12-01 08:00:05");
    }

    #[test]
    fn payload_datetimes_always_have_six_digits() {
        let t = chrono::NaiveDate::from_ymd_opt(2026, 11, 30)
            .unwrap()
            .and_hms_opt(7, 59, 0)
            .unwrap();
        assert_eq!(primitive_datetime(t), "2026-11-30T07:59:00.000000");
    }

    #[test]
    fn dumps_writes_pythons_form_in_insertion_order() {
        let v = json!({"z": [1, true, null], "a": "caf\u{e9} \"q\" \u{1F600}", "m": {}});
        assert_eq!(
            dumps_json(&v),
            r#"{"z": [1, true, null], "a": "caf\u00e9 \"q\" \ud83d\ude00", "m": {}}"#
        );
    }

    #[test]
    fn priorities_route_lower_case() {
        assert_eq!(Priority::Info.as_str(), "INFO");
        assert_eq!(Priority::Info.routing(), "info");
        assert_eq!(Priority::Error.routing(), "error");
        assert_eq!(Priority::Warn.as_str(), "WARN");
    }

    #[test]
    fn context_of_an_admin_context_is_all_dashes() {
        let ctx = RequestContext {
            request_id: "req-1".into(),
            is_admin: true,
            ..Default::default()
        };
        let c = context(&ctx);
        assert_eq!(c["user_identity"], "- - - - -");
        assert_eq!(c["user"], Value::Null);
        assert_eq!(c["is_admin"], true);
        assert_eq!(c["roles"], json!([]));
    }

    #[test]
    fn the_context_never_carries_the_token() {
        let ctx = RequestContext {
            auth_token: Some("gAAAA-secret".into()),
            user_id: "u".into(),
            domain_id: "d".into(),
            system_scope: "all".into(),
            all_projects: true,
            ..Default::default()
        };
        let c = context(&ctx);
        let text = dumps_json(&Value::Object(c.clone()));
        assert!(!text.contains("secret"), "{text}");
        assert_eq!(c["auth_token"], Value::Null);
        // Lost in Magnum's redacted copy.
        assert_eq!(c["domain"], Value::Null);
        assert_eq!(c["system_scope"], Value::Null);
        assert_eq!(c["all_tenants"], false);
    }
}
