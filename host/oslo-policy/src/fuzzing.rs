//! The property the `policy_rule` fuzz target checks, shared with the unit
//! test that runs the seed corpus: no rule text makes the parser or the
//! evaluator panic, parsing is deterministic, and a rule that parses
//! without error means the same as its canonical form.

use serde_json::{Value, json};

use crate::{CheckError, Credentials, DeprecatedRule, Enforcer, Options, Rule, Target, parse_rule};

/// An enforcer with rule chains of the shape services use, built once per
/// fuzzing process.
pub struct Fixture {
    enforcer: Enforcer,
    creds: Credentials,
    target: Target,
}

fn map(v: Value) -> serde_json::Map<String, Value> {
    match v {
        Value::Object(m) => m,
        _ => serde_json::Map::new(),
    }
}

impl Fixture {
    pub fn new() -> Option<Fixture> {
        let deprecated = Rule::new(
            "admin_or_project_member",
            "(rule:context_is_admin) or (rule:project_member)",
        )
        .replacing(DeprecatedRule::new(
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        ));
        let mut scoped = Rule::new("cluster:get", "rule:admin_or_project_member");
        scoped.scope_types = vec!["project".into()];
        let enforcer = Enforcer::new(Options {
            defaults: vec![
                Rule::new("context_is_admin", "role:admin"),
                Rule::new(
                    "project_member",
                    "role:member and project_id:%(project_id)s",
                ),
                Rule::new("is_user", "user_id:%(user_id)s"),
                Rule::new("loop", "rule:loop"),
                deprecated,
                scoped,
            ],
            enforce_new_defaults: false,
            ..Options::default()
        })
        .ok()?;
        Some(Fixture {
            enforcer,
            creds: map(
                json!({"user_id": "u1", "project_id": "p1", "roles": ["admin", "member"],
                "is_admin": true, "groups": ["g", {"x": 1}], "a": {"b": "c"}}),
            ),
            target: map(
                json!({"project_id": "p1", "user_id": "u1", "x": "admin", "a": 1,
                "b": null, "d.e": "c"}),
            ),
        })
    }

    /// Checks the property for one input.
    pub fn run(&self, data: &[u8]) {
        let Ok(rule) = std::str::from_utf8(data) else {
            return;
        };
        let parsed = parse_rule(rule);
        assert_eq!(
            parsed,
            parse_rule(rule),
            "non-deterministic parse of {rule:?}"
        );
        let first = self.enforcer.check(rule, &self.target, &self.creds);
        let _ = self.enforcer.enforce(rule, &self.target, &self.creds);
        if parsed.error.is_some() {
            return;
        }
        // The canonical form of a cleanly parsed rule means the same.
        let again = self
            .enforcer
            .check(&parsed.canonical, &self.target, &self.creds);
        match (first, again) {
            (Ok(a), Ok(b)) => assert_eq!(
                a, b,
                "{rule:?} and its canonical form {:?}",
                parsed.canonical
            ),
            (Err(CheckError::Eval(_)), Err(CheckError::Eval(_))) => {}
            // A canonical form can turn a parenthesised check that starts
            // and ends with a quote into a string token.
            (_, Err(CheckError::Parse(_))) => {}
            (a, b) => panic!(
                "{rule:?} gives {a:?} but its canonical form {:?} gives {b:?}",
                parsed.canonical
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every seed of the fuzz corpus runs without panicking.
    #[test]
    fn seed_corpus() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../fuzz/corpus/seed-policy_rule");
        let Some(fixture) = Fixture::new() else {
            panic!("fixture");
        };
        let entries = match std::fs::read_dir(&dir) {
            Ok(e) => e,
            Err(e) => panic!("{}: {e}", dir.display()),
        };
        let mut n = 0;
        for entry in entries.flatten() {
            let data = std::fs::read(entry.path()).unwrap_or_default();
            fixture.run(&data);
            n += 1;
        }
        assert!(n >= 22, "only {n} seeds in {}", dir.display());
    }
}
