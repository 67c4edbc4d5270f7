//! Policy checks of the handlers: Magnum's `policy.enforce` with the
//! caller's credentials; a denial (or a rule that cannot be evaluated, or a
//! scope mismatch) is the same 403.

use magnum_domain::{MagnumError, RequestContext};
use python_semantics::Dict;

use magnum_conductor::policy::{self, Enforcer, Target};

/// `rule` for the caller on `target` (the caller's own project and user
/// when `None`).
pub fn enforce(
    enforcer: &Enforcer,
    ctx: &RequestContext,
    rule: &str,
    target: Option<&Target>,
) -> Result<(), MagnumError> {
    let creds = policy::credentials(ctx);
    let own;
    let target = match target {
        Some(t) => t,
        None => {
            own = policy::caller_target(ctx);
            &own
        }
    };
    enforcer
        .authorize(rule, Some(target), &creds)
        .map_err(|denied| {
            tracing::debug!(rule, reason = ?denied.reason, "policy denied");
            MagnumError::policy_not_authorized(rule)
        })
}

/// A resource's `as_dict()` as the policy target Magnum passes for it.
pub fn dict_target(doc: Dict) -> Target {
    let mut out = Target::new();
    for (k, v) in doc.iter() {
        if let (Some(k), Ok(v)) = (k.as_str(), v.to_json()) {
            out.insert(k.to_string(), v);
        }
    }
    out
}
