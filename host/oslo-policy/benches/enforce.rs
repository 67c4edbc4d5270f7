//! Rule evaluation cost (Go's BenchmarkEnforce and BenchmarkEnforceDenied):
//! the shapes of a service's API rules, three `rule:` hops down to role
//! checks and target substitutions.

use std::hint::black_box;

use criterion::{Criterion, criterion_group, criterion_main};
use oslo_policy::{Credentials, DeprecatedRule, Enforcer, Options, Rule, Target, parse_rule};
use serde_json::{Value, json};

fn deprecated(name: &str, check: &str, old: &str, old_check: &str) -> Rule {
    Rule::new(name, check).replacing(DeprecatedRule::new(old, old_check))
}

fn scoped(name: &str, check: &str) -> Rule {
    let mut r = Rule::new(name, check);
    r.scope_types = vec!["project".into()];
    r
}

/// The rule chains of a typical OpenStack service (Magnum's shapes).
fn defaults() -> Vec<Rule> {
    vec![
        Rule::new("context_is_admin", "role:admin"),
        Rule::new("is_user", "user_id:%(user_id)s"),
        Rule::new(
            "project_member",
            "role:member and project_id:%(project_id)s",
        ),
        Rule::new(
            "project_reader",
            "role:reader and project_id:%(project_id)s",
        ),
        deprecated(
            "admin_or_project_member_user",
            "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
            "rule:admin_or_user",
            "((rule:context_is_admin) or (rule:is_user))",
        ),
        deprecated(
            "admin_or_project_member_deny_cluster_user",
            "(rule:context_is_admin) or (rule:project_member)",
            "rule:admin_or_owner",
            "is_admin:True or project_id:%(project_id)s",
        ),
        scoped("certificate:create", "rule:admin_or_project_member_user"),
        scoped(
            "cluster:delete",
            "rule:admin_or_project_member_deny_cluster_user",
        ),
    ]
}

fn map(v: Value) -> Credentials {
    match v {
        Value::Object(m) => m,
        _ => Credentials::new(),
    }
}

fn enforcer(enforce_new_defaults: bool) -> Enforcer {
    let opts = Options {
        defaults: defaults(),
        enforce_scope: true,
        enforce_new_defaults,
        ..Options::default()
    };
    match Enforcer::new(opts) {
        Ok(e) => e,
        Err(e) => panic!("{e}"),
    }
}

fn bench(c: &mut Criterion) {
    let target: Target = map(json!({"project_id": "p1", "user_id": "u1"}));

    // A member of the resource's project: allowed.
    let e = enforcer(true);
    let member = map(
        json!({"user_id": "u1", "project_id": "p1", "roles": ["member", "reader"], "is_admin": false}),
    );
    assert_eq!(e.enforce("certificate:create", &target, &member), Ok(true));
    c.bench_function("enforce_allowed", |b| {
        b.iter(|| {
            e.enforce(
                black_box("certificate:create"),
                black_box(&target),
                black_box(&member),
            )
        })
    });

    // The slowest common path: every branch is evaluated before it denies
    // (the deprecated alternative is OR-ed in).
    let e = enforcer(false);
    let foreign =
        map(json!({"user_id": "u2", "project_id": "p2", "roles": ["Reader"], "is_admin": false}));
    assert_eq!(e.enforce("cluster:delete", &target, &foreign), Ok(false));
    c.bench_function("enforce_denied", |b| {
        b.iter(|| {
            e.enforce(
                black_box("cluster:delete"),
                black_box(&target),
                black_box(&foreign),
            )
        })
    });

    c.bench_function("parse_rule", |b| {
        b.iter(|| {
            parse_rule(black_box(
                "(rule:context_is_admin) or ((rule:project_member) and (rule:is_user))",
            ))
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
