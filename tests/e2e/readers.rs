//! Two processes on one database: what one writes, the next list of the
//! other shows. This holds the promise any read model or cache of the list
//! path must keep (docs/performance.md): an answer never shows a row older
//! than the last committed write a reader could already have seen. Run on
//! SQLite, MariaDB and PostgreSQL (the last two from
//! `OKM_TEST_MYSQL_URL` and `OKM_TEST_POSTGRES_URL`).

use std::time::Duration;

use serde_json::json;

use crate::harness::{
    ProjectApi, Server, free_port, metric_value, metrics_text, okm_with_conf, service_env,
};
use crate::sql::{FreshDb, runtime};

const PROJECT: &str = "p-readers";

/// The statuses and node counts of the project's clusters, by name, as the
/// detail list of `api` shows them now.
fn listed(api: &ProjectApi<'_>) -> Vec<(String, String, i64)> {
    let page = api.ok("GET", "/v1/clusters/detail?limit=1000", None);
    let mut rows: Vec<(String, String, i64)> = page["clusters"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| {
            (
                c["name"].as_str().unwrap_or_default().to_owned(),
                c["status"].as_str().unwrap_or_default().to_owned(),
                c["node_count"].as_i64().unwrap_or(-1),
            )
        })
        .collect();
    rows.sort();
    rows
}

fn names(api: &ProjectApi<'_>, path: &str, key: &str) -> Vec<String> {
    let page = api.ok("GET", path, None);
    let mut names: Vec<String> = page[key]
        .as_array()
        .into_iter()
        .flatten()
        .map(|c| c["name"].as_str().unwrap_or_default().to_owned())
        .collect();
    names.sort();
    names
}

/// The reader's list cache hits so far, from its `/metrics`.
fn cache_hits(metrics_port: u16) -> f64 {
    metric_value(
        &metrics_text(metrics_port),
        "openkeel_magnum_list_cache_lookups_total{result=\"hit\"}",
    )
    .unwrap_or(0.0)
}

/// `writer` (an `all-in-one`, which also runs the status loop) writes and
/// `reader` (an `api`, with its list cache) lists right after each write;
/// `foreign` runs a statement on the database as another program (Python
/// Magnum during a migration) would.
fn writes_are_seen_by_the_other_process(connection: &str, foreign: &dyn Fn(&str)) {
    let conf = format!(
        "[DEFAULT]\nauth_strategy = noauth\n\n[database]\nconnection = {connection}\n\n\
         [drivers]\nenabled_beta_drivers = fake\n\n[quotas]\nmax_clusters_per_project = 100\n"
    );
    let o = okm_with_conf(&conf, &["db", "upgrade"]);
    assert_eq!(o.code, 0, "db upgrade:\n{}{}", o.stdout, o.stderr);
    let w = Server::start(&conf, &["all-in-one"]);
    let metrics_port = free_port();
    let r = Server::start(
        &format!("{conf}\n[metrics]\nenabled = true\nport = {metrics_port}\n"),
        &["api"],
    );
    let writer = ProjectApi {
        url: &w.url,
        project: PROJECT,
    };
    let reader = ProjectApi {
        url: &r.url,
        project: PROJECT,
    };

    // A template, then renamed: each state is the reader's next answer.
    let tpl = writer.template("readers-tpl", "fake");
    assert_eq!(
        names(&reader, "/v1/clustertemplates", "clustertemplates"),
        ["readers-tpl"]
    );
    writer.ok(
        "PATCH",
        &format!("/v1/clustertemplates/{tpl}"),
        Some(json!([{"op": "replace", "path": "/name", "value": "readers-tpl-2"}])),
    );
    assert_eq!(
        names(&reader, "/v1/clustertemplates", "clustertemplates"),
        ["readers-tpl-2"]
    );

    // Each create is in the reader's next list, summary and detail.
    let mut want = Vec::new();
    for i in 0..5 {
        let name = format!("readers-{i}");
        let a = writer.create(&name, &tpl, json!({}));
        assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
        want.push(name);
        assert_eq!(
            names(&reader, "/v1/clusters", "clusters"),
            want,
            "after create {i}"
        );
        let detail: Vec<String> = listed(&reader).into_iter().map(|(n, ..)| n).collect();
        assert_eq!(detail, want, "detail after create {i}");
    }

    // A status the writer's status loop sets, then a resize the writer
    // accepts: the reader's next list shows each.
    for name in &want {
        writer.wait(name, Duration::from_secs(60), |s| s == "CREATE_COMPLETE");
    }
    assert!(
        listed(&reader)
            .iter()
            .all(|(_, status, count)| status == "CREATE_COMPLETE" && *count == 1),
        "{:?}",
        listed(&reader)
    );

    // Nothing written between two lists: the second is the cache's (the
    // writer's health pass may write meanwhile, so a few tries).
    let served_from_cache = (0..20).any(|_| {
        let before = cache_hits(metrics_port);
        let (a, b) = (listed(&reader), listed(&reader));
        a == b && cache_hits(metrics_port) > before
    });
    assert!(served_from_cache, "no list answer came from the cache");

    // A statement from another program, under the cached answer: the next
    // list shows it.
    foreign("UPDATE cluster SET status = 'CREATE_FAILED' WHERE name = 'readers-2'");
    let after = listed(&reader);
    assert!(
        after
            .iter()
            .any(|(n, s, _)| n == "readers-2" && s == "CREATE_FAILED"),
        "{after:?}"
    );
    foreign(
        "UPDATE nodegroup SET node_count = 7 WHERE role = 'worker' AND cluster_id = \
         (SELECT uuid FROM cluster WHERE name = 'readers-3')",
    );
    let after = listed(&reader);
    assert!(
        after
            .iter()
            .any(|(n, _, count)| n == "readers-3" && *count == 7),
        "{after:?}"
    );

    let uuid = writer.cluster("readers-0").expect("cluster")["uuid"]
        .as_str()
        .map(str::to_owned)
        .expect("uuid");
    let a = writer.call(
        "POST",
        &format!("/v1/clusters/{uuid}/actions/resize"),
        Some(json!({"node_count": 3})),
    );
    assert_eq!(a.status, 202, "{}", String::from_utf8_lossy(&a.body));
    let first = listed(&reader).into_iter().next().expect("a cluster");
    assert_eq!(first.0, "readers-0");
    assert_eq!(first.2, 3, "the resized node count: {first:?}");
    assert!(
        first.1 == "UPDATE_IN_PROGRESS" || first.1 == "UPDATE_COMPLETE",
        "{first:?}"
    );

    // A delete: the reader's next list shows it deleting or gone.
    let a = writer.call("DELETE", "/v1/clusters/readers-4", None);
    assert_eq!(a.status, 204, "{}", String::from_utf8_lossy(&a.body));
    let after = listed(&reader);
    assert!(
        after
            .iter()
            .all(|(n, s, _)| n != "readers-4" || s == "DELETE_IN_PROGRESS"),
        "{after:?}"
    );
}

#[test]
fn a_write_by_one_process_is_in_the_next_list_of_another_sqlite() {
    use sqlx::Connection;
    let dir = tempfile::tempdir().expect("tempdir");
    let db = dir.path().join("okm.sqlite");
    let url = format!("sqlite://{}", db.display());
    let foreign = |sql: &str| {
        runtime().block_on(async {
            let mut c = sqlx::SqliteConnection::connect(&url).await.expect("SQLite");
            sqlx::raw_sql(sqlx::AssertSqlSafe(sql.to_string()))
                .execute(&mut c)
                .await
                .expect(sql);
        })
    };
    writes_are_seen_by_the_other_process(&format!("sqlite:///{}", db.display()), &foreign);
}

fn on_server(server: &str) {
    let rt = runtime();
    let db = FreshDb::create(&rt, server, "okm_readers_");
    let foreign = |sql: &str| db.connect(&rt).exec(&rt, sql).expect(sql);
    writes_are_seen_by_the_other_process(&db.sqlalchemy_url, &foreign);
}

#[test]
fn a_write_by_one_process_is_in_the_next_list_of_another_mariadb() {
    if let Some(server) = service_env("OKM_TEST_MYSQL_URL") {
        on_server(&server);
    }
}

#[test]
fn a_write_by_one_process_is_in_the_next_list_of_another_postgresql() {
    if let Some(server) = service_env("OKM_TEST_POSTGRES_URL") {
        on_server(&server);
    }
}
