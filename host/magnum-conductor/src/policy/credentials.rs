//! The credentials and targets Magnum hands to oslo.policy for a request
//! context (`magnum/common/context.py`, `magnum/common/policy.py`).

use magnum_domain::RequestContext;
use oslo_policy::{Credentials, Enforcer, Target};
use serde_json::Value;

fn str_or_none(s: &str) -> Value {
    if s.is_empty() {
        Value::Null
    } else {
        Value::String(s.to_owned())
    }
}

fn roles(ctx: &RequestContext) -> Value {
    Value::Array(ctx.roles.iter().cloned().map(Value::String).collect())
}

/// The keys of oslo.context's `to_policy_values()` that
/// [`policy_values`] and [`credentials`] share (the service user's keys
/// are only in the former).
fn insert_policy_values(c: &mut Credentials, ctx: &RequestContext) {
    c.insert("user_id".into(), str_or_none(&ctx.user_id));
    c.insert("user_domain_id".into(), str_or_none(&ctx.user_domain_id));
    c.insert("system_scope".into(), Value::Null);
    c.insert("domain_id".into(), Value::Null);
    c.insert("project_id".into(), str_or_none(&ctx.project_id));
    c.insert("project_domain_id".into(), Value::Null);
    c.insert("roles".into(), roles(ctx));
    c.insert("is_admin_project".into(), Value::Bool(true));
}

/// oslo.context's `to_policy_values()` for Magnum's context: the
/// credentials `check_is_admin` evaluates `context_is_admin` with.
///
/// Magnum: magnum/common/context.py never passes the system scope, the
/// domain or the project's domain to oslo.context, so `system_scope`,
/// `domain_id` and `project_domain_id` are always `None` there: every token
/// is evaluated as project-scoped (policies.md §1). They stay null here for
/// the same answers.
pub fn policy_values(ctx: &RequestContext) -> Credentials {
    let mut c = Credentials::new();
    insert_policy_values(&mut c, ctx);
    for key in [
        "service_user_id",
        "service_user_domain_id",
        "service_project_id",
        "service_project_domain_id",
    ] {
        c.insert(key.into(), Value::Null);
    }
    c.insert("service_roles".into(), Value::Array(Vec::new()));
    c
}

/// The credentials Magnum's `policy.enforce` passes to oslo.policy:
/// `RequestContext.to_dict()` — oslo.context's `to_dict` with the
/// `to_policy_values` keys plus Magnum's additions. The token and the
/// service catalog are left out.
pub fn credentials(ctx: &RequestContext) -> Credentials {
    let mut c = Credentials::new();
    insert_policy_values(&mut c, ctx);
    // oslo.context to_dict
    c.insert("user".into(), str_or_none(&ctx.user_id));
    c.insert("project".into(), str_or_none(&ctx.project_id));
    c.insert("domain".into(), Value::Null);
    c.insert("user_domain".into(), str_or_none(&ctx.user_domain_id));
    c.insert("project_domain".into(), Value::Null);
    c.insert("is_admin".into(), Value::Bool(ctx.is_admin));
    c.insert("read_only".into(), Value::Bool(false));
    c.insert("show_deleted".into(), Value::Bool(false));
    c.insert("request_id".into(), str_or_none(&ctx.request_id));
    // Magnum's to_dict additions
    c.insert(
        "user_domain_name".into(),
        str_or_none(&ctx.user_domain_name),
    );
    c.insert("user_name".into(), str_or_none(&ctx.user_name));
    c.insert("project_name".into(), str_or_none(&ctx.project_name));
    c.insert("all_tenants".into(), Value::Bool(ctx.all_projects));
    c
}

/// The target Magnum uses when a handler passes none: the caller's own
/// project and user (magnum/common/policy.py:97-99), `None` when the
/// context has none, as in Magnum.
pub fn caller_target(ctx: &RequestContext) -> Target {
    let mut t = Target::new();
    t.insert("project_id".into(), str_or_none(&ctx.project_id));
    t.insert("user_id".into(), str_or_none(&ctx.user_id));
    t
}

/// Magnum's `check_is_admin` (magnum/common/policy.py): `context_is_admin`
/// with an empty target and the context's policy values, never failing.
/// `RequestContext::is_admin` is computed with it once, when the context is
/// created.
pub fn is_admin(enforcer: &Enforcer, ctx: &RequestContext) -> bool {
    enforcer.is_admin(&policy_values(ctx))
}
