//! The cluster list views: the same filter, pagination, order and errors
//! as [`Queries::list_clusters`], selecting only the columns a list shows.

use magnum_domain::models::Cluster;
pub use magnum_domain::query::ClusterView;

use super::Result;
use super::clusters::{ClusterFilter, TABLE};
use super::queries::{Columns, ListOptions, Queries};

/// The columns of the summary view (`GET /v1/clusters`, see
/// [`ClusterView::Summary`]).
const SUMMARY: Columns = Columns::Only(&[
    // What the cluster is.
    "uuid",
    "name",
    "cluster_template_id",
    // Where its operations are.
    "stack_id",
    "status",
    "health_status",
    "create_timeout",
    // What its nodes are.
    "keypair",
    "docker_volume_size",
    "labels",
    "master_flavor_id",
    "flavor_id",
]);

/// The columns of the detail view: all but the certificate references,
/// which no list shows.
const DETAIL: Columns = Columns::Except(&[
    "ca_cert_ref",
    "magnum_cert_ref",
    "etcd_ca_cert_ref",
    "front_proxy_ca_cert_ref",
]);

impl Queries<'_> {
    /// [`Queries::list_clusters`] (same filter, pagination, order and
    /// errors) reading only the columns of `view`: the other fields of the
    /// returned clusters are left at their defaults.
    pub async fn list_clusters_view(
        &mut self,
        f: &ClusterFilter,
        o: &ListOptions,
        view: ClusterView,
    ) -> Result<Vec<Cluster>> {
        let cols = match view {
            ClusterView::Summary => SUMMARY,
            ClusterView::Detail => DETAIL,
        };
        self.list(&TABLE, cols, f.cond()?, o).await
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use magnum_domain::models::{Cluster, NodeGroup};

    use crate::exec::Arg;
    use crate::testing::{
        Check, dialect_tests, fresh_clocked, migrated, new_cluster, string_map, ticking_clock,
    };
    use crate::{ClusterFilter, ClusterView, Dialect, Error, ListOptions, Scope, upgrade};

    dialect_tests!(
        list_clusters_view,
        list_nodegroup_sizes_of_clusters,
        change_stamp_grows_with_every_committed_write
    );

    /// The change stamp of the list cache (migration 3): every committed
    /// insert, update and delete of a cluster, nodegroup or template raises
    /// it, a raw statement as a foreign writer would send too; a read, a
    /// write to another table and a rolled-back write do not.
    async fn change_stamp_grows_with_every_committed_write(d: Dialect) {
        use crate::testing::{new_nodegroup, new_template};
        let db = migrated(d).await;
        let stamp = async || db.q().change_stamp().await.check("stamp");
        let last = std::cell::Cell::new(stamp().await);
        let grew = async |what: &str| {
            let now = stamp().await;
            assert!(now > last.get(), "{d} {what}: {now} after {}", last.get());
            last.set(now);
        };
        let mut t = new_template(1, "p1", false, false);
        db.q()
            .create_cluster_template(&mut t)
            .await
            .check("template");
        grew("template insert").await;
        let mut c = new_cluster(1, "p1");
        c.cluster_template_id = t.uuid.clone();
        db.q().create_cluster(&mut c).await.check("cluster");
        grew("cluster insert").await;
        let mut ng = new_nodegroup(&c.uuid, "worker", "p1");
        db.q().create_nodegroup(&mut ng).await.check("nodegroup");
        grew("nodegroup insert").await;
        ng.node_count = Some(5);
        db.q()
            .update_nodegroup(&mut ng, &["node_count"])
            .await
            .check("nodegroup update");
        grew("nodegroup update").await;
        db.q()
            .write(
                "foreign".into(),
                "UPDATE cluster SET status = ? WHERE uuid = ?",
                vec![Arg::from("CREATE_FAILED"), Arg::from(&c.uuid)],
            )
            .await
            .check("raw update");
        grew("a raw cluster update").await;
        // Reads, and writes to tables a list does not show, leave it.
        let all = ClusterFilter::scope(Scope::ALL_PROJECTS);
        db.q()
            .list_clusters(&all, &ListOptions::default())
            .await
            .check("list");
        db.q()
            .write(
                "other table".into(),
                "UPDATE magnum_service SET host = host",
                vec![],
            )
            .await
            .check("other table");
        assert_eq!(stamp().await, last.get(), "{d}: a read or another table");
        // A write rolled back leaves it.
        let uuid = c.uuid.clone();
        let rolled: Result<(), Error> = db
            .in_tx(|tx| {
                let uuid = uuid.clone();
                Box::pin(async move {
                    tx.q().delete_cluster(&uuid).await?;
                    Err(Error::NotFound("rolled back".into()))
                })
            })
            .await;
        assert!(rolled.is_err());
        assert_eq!(stamp().await, last.get(), "{d}: a write rolled back");
        db.q().delete_cluster(&c.uuid).await.check("delete");
        grew("cluster delete").await;
        db.q()
            .delete_cluster_template(&t.uuid)
            .await
            .check("template delete");
        grew("template delete").await;
    }

    fn summary(c: &Cluster) -> Cluster {
        Cluster {
            id: c.id,
            uuid: c.uuid.clone(),
            name: c.name.clone(),
            cluster_template_id: c.cluster_template_id.clone(),
            keypair: c.keypair.clone(),
            docker_volume_size: c.docker_volume_size,
            labels: c.labels.clone(),
            master_flavor_id: c.master_flavor_id.clone(),
            flavor_id: c.flavor_id.clone(),
            create_timeout: c.create_timeout,
            stack_id: c.stack_id.clone(),
            status: c.status,
            health_status: c.health_status.clone(),
            ..Cluster::default()
        }
    }

    fn detail(c: &Cluster) -> Cluster {
        Cluster {
            ca_cert_ref: None,
            magnum_cert_ref: None,
            etcd_ca_cert_ref: None,
            front_proxy_ca_cert_ref: None,
            ..c.clone()
        }
    }

    fn same_error(a: &Error, b: &Error) -> bool {
        std::mem::discriminant(a) == std::mem::discriminant(b)
    }

    /// Go `TestListClustersView`: the view reads return the full reads'
    /// rows, order, pagination and errors, with exactly the view's fields
    /// set.
    async fn list_clusters_view(d: Dialect) {
        let db = fresh_clocked(d, ticking_clock()).await;
        upgrade(&db).await.check("upgrade");
        let mut uuids = Vec::new();
        for i in 0..7u32 {
            let mut c = new_cluster(i, ["p1", "p2"][i as usize % 2]);
            c.name = format!("c-{}", 7 - i);
            c.keypair = Some("kp".into());
            c.api_address = Some("https://10.0.0.1:6443".into());
            c.health_status_reason = Some(string_map(&[("api", "ok"), ("i", &i.to_string())]));
            c.ca_cert_ref = Some("ca-ref".into());
            c.docker_volume_size = Some(i as i32);
            if i == 3 {
                c.labels = Some(string_map(&[("é", "\u{2028}"), ("q", "\"")]));
                c.keypair = None;
            }
            db.q().create_cluster(&mut c).await.check("create");
            if i == 5 {
                db.q()
                    .update_cluster(&mut c, &["status"])
                    .await
                    .check("update");
            }
            uuids.push(c.uuid);
        }
        db.q()
            .write(
                "raw".into(),
                "UPDATE cluster SET labels = ? WHERE uuid = ?",
                vec![Arg::from(r#"{"n": 1, "b": false}"#), Arg::from(&uuids[4])],
            )
            .await
            .check("raw update");
        let all = ClusterFilter::scope(Scope::ALL_PROJECTS);
        let o = |marker: Option<&String>,
                 limit: Option<u64>,
                 key: Option<&str>,
                 dir: Option<&str>| ListOptions {
            marker: marker.cloned(),
            limit,
            sort_key: key.map(String::from),
            sort_dir: dir.map(String::from),
        };
        let no_such = "no-such-uuid".to_string();
        let cases = [
            (all.clone(), o(None, None, None, None)),
            (
                ClusterFilter::scope(Scope::project("p1")),
                o(None, Some(2), None, None),
            ),
            (all.clone(), o(Some(&uuids[2]), Some(3), None, None)),
            (
                all.clone(),
                o(Some(&uuids[5]), None, Some("name"), Some("desc")),
            ),
            (all.clone(), o(None, None, Some("labels"), None)),
            (
                all.clone(),
                o(Some(&uuids[3]), None, Some("keypair"), Some("asc")),
            ),
            (all.clone(), o(None, None, Some("node_count"), None)),
            (all.clone(), o(None, None, None, Some("up"))),
            (all.clone(), o(Some(&no_such), None, None, None)),
            (ClusterFilter::default(), o(None, None, None, None)),
        ];
        for (f, opts) in &cases {
            let full = db.q().list_clusters(f, opts).await;
            for (view, project) in [
                (ClusterView::Summary, summary as fn(&Cluster) -> Cluster),
                (ClusterView::Detail, detail),
            ] {
                let got = db.q().list_clusters_view(f, opts, view).await;
                match (&full, got) {
                    (Ok(full), Ok(got)) => {
                        let want: Vec<Cluster> = full.iter().map(project).collect();
                        assert_eq!(got, want, "{f:?} {opts:?} {view:?}");
                    }
                    (Err(fe), Err(ge)) => {
                        assert!(same_error(fe, &ge), "{f:?} {opts:?} {view:?}: {ge} vs {fe}")
                    }
                    (full, got) => panic!("{f:?} {opts:?} {view:?}: {got:?} vs {full:?}"),
                }
            }
        }
        // The cases read rows and refused bad options both.
        assert!(matches!(db.q().list_clusters(&all, &cases[0].1).await, Ok(v) if v.len() == 7));
    }

    /// Go `TestListNodeGroupSizesOfClusters`: the view read of nodegroups
    /// against `list_nodegroups_of_clusters`, with nodegroups of several
    /// clusters interleaved in id order.
    async fn list_nodegroup_sizes_of_clusters(d: Dialect) {
        let db = migrated(d).await;
        let add = async |cluster: &str,
                         name: &str,
                         role: Option<&str>,
                         count: Option<i32>,
                         addrs: Option<Vec<&str>>| {
            let mut ng = NodeGroup {
                uuid: format!("{cluster}-{name}"),
                name: name.into(),
                cluster_id: cluster.into(),
                project_id: "p1".into(),
                role: role.map(String::from),
                node_count: count,
                node_addresses: addrs.map(|a| a.into_iter().map(String::from).collect()),
                labels: Some(string_map(&[("a", "b")])),
                node_labels: Some(string_map(&[("x", "y")])),
                ..NodeGroup::default()
            };
            db.q().create_nodegroup(&mut ng).await.check("create");
        };
        add(
            "c1",
            "master",
            Some("master"),
            Some(1),
            Some(vec!["10.0.0.1"]),
        )
        .await;
        add(
            "c2",
            "master",
            Some("master"),
            Some(3),
            Some(vec!["10.1.0.1", "10.1.0.2", "10.1.0.3"]),
        )
        .await;
        add(
            "c1",
            "worker",
            Some("worker"),
            Some(2),
            Some(vec!["10.0.1.1", "é\u{2028}"]),
        )
        .await;
        add("c3", "odd", None, None, None).await;
        add("c2", "worker", Some("worker"), Some(0), Some(vec![])).await;
        add("c1", "extra", Some("gpu"), Some(4), None).await;
        db.q()
            .write(
                "raw".into(),
                "UPDATE nodegroup SET node_addresses = ? WHERE uuid = ?",
                vec![Arg::from(r#"["x", 1]"#), Arg::from("c1-extra")],
            )
            .await
            .check("raw update");
        let ids = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        for clusters in [
            ids(&["c1", "c2", "c3", "c4"]),
            ids(&["c2"]),
            ids(&[]),
            ids(&["none"]),
        ] {
            let full = db
                .q()
                .list_nodegroups_of_clusters(&clusters)
                .await
                .check("full");
            for with_addresses in [false, true] {
                let got = db
                    .q()
                    .list_nodegroup_sizes_of_clusters(&clusters, with_addresses)
                    .await
                    .check("sizes");
                let want: HashMap<String, Vec<NodeGroup>> = full
                    .iter()
                    .map(|(id, ngs)| {
                        let v = ngs
                            .iter()
                            .map(|ng| NodeGroup {
                                cluster_id: ng.cluster_id.clone(),
                                role: ng.role.clone(),
                                node_count: ng.node_count,
                                node_addresses: if with_addresses {
                                    ng.node_addresses.clone()
                                } else {
                                    None
                                },
                                ..NodeGroup::default()
                            })
                            .collect();
                        (id.clone(), v)
                    })
                    .collect();
                assert_eq!(got, want, "{clusters:?} addresses {with_addresses}");
            }
        }
        let full = db
            .q()
            .list_nodegroups_of_clusters(&ids(&["c1"]))
            .await
            .check("full");
        let c1: Vec<&str> = full["c1"].iter().map(|n| n.name.as_str()).collect();
        assert_eq!(c1, ["master", "worker", "extra"]);
        let extra = full["c1"][2].node_addresses.clone();
        assert_eq!(extra, Some(vec!["x".to_string(), "1".to_string()]));
    }

    /// Go `TestFastJSONColumnsMatchEncodingJSON` (the reference half): our
    /// JSON reader agrees with serde_json on what is JSON and on the values,
    /// on the column spellings and on generated token soup.
    #[test]
    fn json_reader_agrees_with_serde_json() {
        use python_semantics::pyjson::{self, Value};
        fn same(ours: &Value, theirs: &serde_json::Value) -> bool {
            match (ours, theirs) {
                (Value::Null, serde_json::Value::Null) => true,
                (Value::Bool(a), serde_json::Value::Bool(b)) => a == b,
                (Value::Number(a), serde_json::Value::Number(b)) => {
                    a.parse::<f64>().ok() == b.as_f64()
                }
                (Value::String(a), serde_json::Value::String(b)) => a == b,
                (Value::Array(a), serde_json::Value::Array(b)) => {
                    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| same(x, y))
                }
                (Value::Object(a), serde_json::Value::Object(b)) => {
                    a.len() == b.len()
                        && a.iter().all(|(k, v)| b.get(k).is_some_and(|w| same(v, w)))
                }
                _ => false,
            }
        }
        let mut inputs: Vec<String> = [
            "{}",
            " { } ",
            r#"{"a": "b"}"#,
            r#"{"k": "1", "k": "2"}"#,
            r#"{"a": 1}"#,
            r#"{"a": true, "b": null}"#,
            r#"{"a": "\u00e9"}"#,
            r#"{"a": "x\"y"}"#,
            r#"{"a": ["x"]}"#,
            r#"{"a": {"b": "c"}}"#,
            "null",
            "[]",
            r#"["a", 1, null, true]"#,
            r#"["\ud83d\ude80"]"#,
            "[1.5e3]",
            "[-0.0, 10E-2, 3e+1]",
            r#"{"a": "b"} trailing"#,
            r#"{"a": "b",}"#,
            "{",
            "[",
            r#"["a",]"#,
            r#""str""#,
            "12",
            "",
            " ",
            "\t[\"a\"]\r\n",
            "{\"a\": \"tab\tinside\"}",
            "01",
            "1.",
            ".5",
            "-",
            "tru",
            "nul",
            r#""\x""#,
            r#""\u12g4""#,
            "[1 2]",
            r#"{"a":1 "b":2}"#,
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let tokens = [
            "{", "}", "[", "]", r#""a""#, r#""é""#, r#""\n""#, ":", ",", " ", "1", "-2.5e3",
            "null", "true", r#""""#,
        ];
        let mut state: u64 = 0x5eed;
        for _ in 0..5000 {
            let mut s = String::new();
            let mut next = || {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                state
            };
            for _ in 0..next() % 10 {
                s.push_str(tokens[(next() % tokens.len() as u64) as usize]);
            }
            inputs.push(s);
        }
        let mut values = 0;
        for s in &inputs {
            let ours = pyjson::parse(s);
            let theirs = serde_json::from_str::<serde_json::Value>(s);
            match (&ours, &theirs) {
                (Ok(a), Ok(b)) => {
                    assert!(same(a, b), "{s:?}: {a:?} vs {b:?}");
                    values += 1;
                }
                (Err(_), Err(_)) => {}
                // Numbers keep their text (as Go's json.Number does), so a
                // number beyond f64 is read; serde_json refuses it.
                (Ok(_), Err(e)) if e.to_string().contains("number out of range") => {}
                _ => panic!("{s:?}: ours {ours:?}, serde_json {theirs:?}"),
            }
        }
        assert!(values > 100, "only {values} inputs were JSON");
    }
}
