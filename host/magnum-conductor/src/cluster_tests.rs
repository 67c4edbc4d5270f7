//! Tests of the cluster use cases: the atomic quota (on every dialect),
//! inheritance from the template, the state guards, the poll pass and the
//! end of deletions.

use std::sync::Arc;

use magnum_domain::models::{Cluster, ClusterTemplate, StringMap};
use magnum_domain::{MagnumError, RequestContext, Status};

use super::testing::{Env, FailingDeletes, TEMPLATE_UUID, TestConductor, caller, client};
use super::{ClusterCreate, ClusterResize, ClusterUpdate, ClusterUpgrade, Conductor, Error};
use crate::certs::StoreError;
use crate::db::testing::dialect_tests;
use crate::db::{Dialect, Scope};
use crate::openstack::Static;

fn limit_message(limit: i64) -> String {
    MagnumError::resource_limit_exceeded(limit).message
}

// Ports TestClusterQuotaIsAtomic: 64 concurrent creates against a limit of
// 10 — exactly 10 succeed, 54 get 403 ResourceLimitExceeded, 10 rows exist.
async fn quota_is_atomic(d: Dialect) {
    let env = Arc::new(Env::new(d).await);
    env.set_quota("p1", 10).await;
    let mut tasks = Vec::new();
    for _ in 0..64 {
        let env = env.clone();
        tasks.push(tokio::spawn(async move {
            env.create_with(env.c(), "p1").await.map(|_| ())
        }));
    }
    let (mut ok, mut deny, mut other) = (0, 0, Vec::new());
    for t in tasks {
        match t.await.expect("task") {
            Ok(()) => ok += 1,
            Err(Error::Client(e)) if e.status == 403 && e.message == limit_message(10) => deny += 1,
            Err(e) => other.push(e.to_string()),
        }
    }
    assert_eq!((ok, deny, other), (10, 54, Vec::<String>::new()));
    assert_eq!(env.count(Scope::project("p1")).await, 10);
}

// Ports TestClusterQuotaAcrossProcesses: two conductors on one database. A
// process that skips the count because it knows its project is below the
// limit notices the other's creates, and a deletion makes room again.
async fn quota_across_processes(d: Dialect) {
    let env = Env::new(d).await;
    // A second process: same database and parts, its own memory.
    let b = Conductor::new((*env.c().parts).clone());
    let a = env.c().clone();
    env.set_quota("p1", 3).await;
    let refused = |r: &Result<Cluster, Error>| matches!(r, Err(Error::Client(e)) if e.status == 403 && e.message == limit_message(3));
    let mut created = Vec::new();
    let steps: [(&Conductor, &str, bool); 6] = [
        (&a, "p1", false),
        (&a, "p1", false), // a: p1 has at most 2
        (&a, "p2", false), // another project: p1's bound is kept
        (&b, "p1", false), // b takes the last place
        (&a, "p1", true),
        (&b, "p1", true),
    ];
    for (i, (c, project, refuse)) in steps.into_iter().enumerate() {
        let r = env.create_with(c, project).await;
        assert_eq!(refused(&r), refuse, "create {}: {r:?}", i + 1);
        if !refuse {
            let cl = r.unwrap_or_else(|e| panic!("create {}: {e}", i + 1));
            if project == "p1" {
                created.push(cl.uuid);
            }
        }
    }
    // A cluster goes: there is room for one more, in either process.
    env.db()
        .q()
        .delete_cluster_cascade(&created[0])
        .await
        .expect("delete");
    env.create_with(&a, "p1")
        .await
        .expect("create after a deletion");
    let r = env.create_with(&b, "p1").await;
    assert!(refused(&r), "create over the limit: {r:?}");
    assert_eq!(env.count(Scope::project("p1")).await, 3);
}

dialect_tests!(quota_is_atomic, quota_across_processes);

// Ports TestClusterQuotaBeforeValidation: the quota is Magnum's first
// check. Over quota, requests that would also fail validation get 403
// ResourceLimitExceeded; under quota they get their own error; nothing is
// written either way.
#[tokio::test]
async fn quota_comes_before_validation() {
    let t = TestConductor::builder()
        .parts(|p| p.lookup = Arc::new(Static::new(false)))
        .build()
        .await;
    let env = Env::with(t).await;
    env.create("p1").await;
    let hidden = ClusterTemplate {
        hidden: Some(true),
        ..env.tmpl.clone()
    };
    let bad_image = ClusterTemplate {
        image_id: Some("no-such-image".into()),
        ..env.tmpl.clone()
    };
    let bad: Vec<(&str, ClusterCreate, u16)> = vec![
        (
            "hidden template",
            ClusterCreate {
                template: hidden,
                ..env.input()
            },
            403,
        ),
        (
            "two masters without a load balancer",
            ClusterCreate {
                master_count: 2,
                master_lb_enabled: Some(false),
                ..env.input()
            },
            400,
        ),
        (
            "unknown image",
            ClusterCreate {
                template: bad_image,
                ..env.input()
            },
            400,
        ),
    ];
    for (limit, want_quota) in [(1, true), (5, false)] {
        env.set_quota("p1", limit).await;
        for (name, input, status) in &bad {
            let (st, msg) = client(env.create_from(input.clone()).await);
            let quota = st == 403 && msg == limit_message(i64::from(limit));
            if want_quota {
                assert!(
                    quota,
                    "limit {limit}, {name}: {st} {msg:?}, want the quota's 403"
                );
            } else {
                assert!(
                    !quota && st == *status,
                    "limit {limit}, {name}: {st} {msg:?}, want its own {status}"
                );
            }
        }
        assert_eq!(env.count(Scope::project("p1")).await, 1, "limit {limit}");
    }
}

// Ports TestCreateClusterInheritance: the values a create derives from the
// template (spec api/logic.md §1) and the two default nodegroups.
#[tokio::test]
async fn create_inherits_from_the_template() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = env
        .create_from(ClusterCreate {
            name: Some("c1".into()),
            flavor_id: Some("m1.medium".into()),
            node_count: 3,
            create_timeout: 15,
            labels: Some(StringMap::from([("a".into(), "1".into())])),
            merge_labels: true,
            ..env.input()
        })
        .await
        .expect("create");
    let got = env.row(&cl.uuid).await.expect("row");
    assert_eq!(got.name, "c1");
    assert_eq!(got.cluster_template_id, TEMPLATE_UUID);
    assert_eq!(got.flavor_id.as_deref(), Some("m1.medium"));
    assert_eq!(got.master_flavor_id.as_deref(), Some("m1.small"));
    let labels = got.labels.clone().unwrap_or_default();
    assert_eq!(labels.get("kube_tag").map(String::as_str), Some("v1.30.0"));
    assert_eq!(labels.get("a").map(String::as_str), Some("1"));
    assert_eq!(got.master_lb_enabled, Some(true));
    assert_eq!(got.create_timeout, Some(15));
    assert_eq!(got.project_id, "p1");
    assert_eq!(got.user_id, "u-p1");
    // The create job ran within the call (no pool started): the fake
    // driver has the cluster in progress.
    assert_eq!(got.status, Some(Status::CreateInProgress));
    let ngs = env.nodegroups(&cl.uuid).await;
    let summary: Vec<String> = ngs
        .iter()
        .map(|n| {
            format!(
                "{} {:?} {:?} {:?}",
                n.name, n.node_count, n.flavor_id, n.is_default
            )
        })
        .collect();
    assert_eq!(
        summary,
        vec![
            "default-master Some(1) Some(\"m1.small\") Some(true)",
            "default-worker Some(3) Some(\"m1.medium\") Some(true)",
        ]
    );

    // Labels replace the template's without merge_labels.
    let cl = env
        .create_from(ClusterCreate {
            labels: Some(StringMap::from([("a".into(), "1".into())])),
            ..env.input()
        })
        .await
        .expect("create");
    let got = env.row(&cl.uuid).await.expect("row");
    assert_eq!(
        got.labels,
        Some(StringMap::from([("a".into(), "1".into())]))
    );
    // An unnamed cluster gets Magnum's generated name.
    let parts: Vec<&str> = got.name.split('-').collect();
    assert_eq!(parts.len(), 3, "{}", got.name);
    assert_eq!(parts[2], "cluster");

    // A hidden template is refused for non-admins.
    let hidden = ClusterTemplate {
        hidden: Some(true),
        ..env.tmpl.clone()
    };
    let r = env
        .create_from(ClusterCreate {
            template: hidden,
            ..env.input()
        })
        .await;
    assert_eq!(client(r), (403, "Not authorized.".into()));

    // Several masters need a load balancer; a refused create writes nothing.
    let n = env.count(Scope::ALL_PROJECTS).await;
    let r = env
        .create_from(ClusterCreate {
            master_count: 3,
            master_lb_enabled: Some(false),
            ..env.input()
        })
        .await;
    assert_eq!(client(r).0, 400);
    assert_eq!(env.count(Scope::ALL_PROJECTS).await, n);
}

// Ports TestClusterStateGuards: the synchronous 409s of update and resize
// and the 400 of upgrade.
#[tokio::test]
async fn state_guards_answer_at_once() {
    let env = Env::new(Dialect::Sqlite).await;
    let rc = caller("p1");
    let cl = env.create("p1").await;
    let r = env
        .c()
        .update_cluster(
            &rc,
            &cl.uuid,
            ClusterUpdate {
                node_count: 2,
                ..ClusterUpdate::default()
            },
        )
        .await;
    assert_eq!(
        client(r),
        (
            409,
            "Updating a cluster when status is \"CREATE_IN_PROGRESS\" is not supported.".into()
        )
    );
    let r = env
        .c()
        .resize_cluster(
            &rc,
            &cl,
            ClusterResize {
                node_count: 2,
                ..ClusterResize::default()
            },
        )
        .await;
    assert_eq!(client(r).0, 409);
    let r = env
        .c()
        .upgrade_cluster(
            &rc,
            &cl,
            ClusterUpgrade {
                template: env.tmpl.clone(),
                ..ClusterUpgrade::default()
            },
        )
        .await;
    assert_eq!(
        client(r),
        (
            400,
            "Upgrading a cluster when status is \"CREATE_IN_PROGRESS\" is not supported.".into()
        )
    );
    // Nothing of the refused operations was written.
    let ngs = env.nodegroups(&cl.uuid).await;
    assert_eq!(ngs[1].node_count, Some(1));
}

// Ports TestFinishDeleteOnlyUnchangedRows: a poll that reads
// DELETE_COMPLETE writes nothing; finish_deletes then removes the rows only
// if the cluster is still as the poll read it (here a second DELETE changed
// it), and the next poll finishes it.
#[tokio::test]
async fn finish_deletes_only_unchanged_rows() {
    let env = Env::new(Dialect::Sqlite).await;
    let polled = env.deleted_and_polled().await;
    let uuid = polled.uuid.clone();
    let row = env.row(&uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::DeleteInProgress), "unwritten");
    // A second DELETE meanwhile: the poll's view is stale.
    env.t.advance(1);
    env.set_status(&uuid, Status::DeleteInProgress).await;
    env.c()
        .finish_deletes(std::slice::from_ref(&polled))
        .await
        .expect("finish");
    assert!(env.row(&uuid).await.is_some(), "changed since the poll");
    let again = env.poll(&uuid).await;
    env.c()
        .finish_deletes(std::slice::from_ref(&again))
        .await
        .expect("finish");
    assert!(env.row(&uuid).await.is_none(), "cluster still there");
    assert!(env.nodegroups(&uuid).await.is_empty(), "nodegroups left");
    // The certificates rows went with it.
    for r in [&again.ca_cert_ref, &again.magnum_cert_ref] {
        let r = r.as_deref().expect("certificate reference");
        assert!(matches!(
            env.c().certificates().store.get(r).await,
            Err(StoreError::NotFound(_))
        ));
    }
    // Finishing a cluster already gone is not an error.
    env.c()
        .finish_deletes(std::slice::from_ref(&again))
        .await
        .expect("finish again");
}

// Ports TestPollPassKeepsLaterChanges: a pass polls the rows it read at its
// start; a cluster deleted after that is not written back to what the
// driver made of the older row, and the next pass sees the delete.
#[tokio::test]
async fn poll_pass_keeps_later_changes() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = env.create("p1").await;
    let pass = env.c().start_poll_pass(false).await.expect("pass");
    assert_eq!(
        pass.clusters.iter().map(|c| &c.uuid).collect::<Vec<_>>(),
        vec![&cl.uuid]
    );
    env.t.advance(1);
    env.c()
        .delete_cluster(&caller("p1"), &cl)
        .await
        .expect("delete");
    env.c()
        .poll_in_pass(&pass, &pass.clusters[0])
        .await
        .expect("poll");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::DeleteInProgress), "kept");
    let pass = env.c().start_poll_pass(false).await.expect("pass");
    assert_eq!(pass.clusters.len(), 1);
    let polled = env
        .c()
        .poll_in_pass(&pass, &pass.clusters[0])
        .await
        .expect("poll")
        .expect("polled");
    assert_eq!(polled.status, Some(Status::DeleteComplete));
}

// Ports TestFinishDeletesBatch: one call for three deleted clusters removes
// the one unchanged since its poll, leaves the one deleted again meanwhile,
// and saves DELETE_COMPLETE on the one whose certificates could not be
// removed.
#[tokio::test]
async fn finish_deletes_in_a_batch() {
    let (env, failing_store) = FailingDeletes::env().await;
    let polled = vec![
        env.deleted_and_polled().await,
        env.deleted_and_polled().await,
        env.deleted_and_polled().await,
    ];
    let (done, stale, failing) = (&polled[0].uuid, &polled[1].uuid, &polled[2].uuid);
    if let Some(r) = &polled[2].ca_cert_ref {
        failing_store.fail(r);
    }
    env.t.advance(1);
    env.set_status(stale, Status::DeleteInProgress).await;
    let err = env
        .c()
        .finish_deletes(&polled)
        .await
        .expect_err("the failing store's error");
    assert!(err.keeps(failing), "{err}");
    assert_eq!((err.kept.len(), err.removal.is_none()), (1, true), "{err}");
    assert!(env.row(done).await.is_none(), "removed");
    assert!(env.nodegroups(done).await.is_empty());
    assert_eq!(env.status(stale).await, Some(Status::DeleteInProgress));
    assert_eq!(env.nodegroups(stale).await.len(), 2);
    assert_eq!(env.status(failing).await, Some(Status::DeleteComplete));
    assert_eq!(env.nodegroups(failing).await.len(), 2);
}

// [quotas]/max_clusters_per_project is the limit of a project without a
// quota row.
#[tokio::test]
async fn the_default_limit_is_the_setting() {
    let t = TestConductor::with_settings(super::Settings {
        max_clusters_per_project: 1,
        ..super::Settings::default()
    })
    .await;
    let env = Env::with(t).await;
    env.create("p1").await;
    let r = env.create_with(env.c(), "p1").await;
    assert_eq!(client(r), (403, limit_message(1)));
    env.create("p2").await;
}

/// A cluster of p1 with `labels`, created and completed by one poll.
async fn complete(env: &Env, labels: &[(&str, &str)]) -> Cluster {
    let cl = env.create_from(env.labelled(labels)).await.expect("create");
    let polled = env.poll(&cl.uuid).await;
    assert_eq!(polled.status, Some(Status::CreateComplete));
    env.t.notifications.take();
    env.t.advance(1);
    polled
}

/// A complete cluster of p1 whose driver fails `op` with `reason`.
async fn failing(env: &Env, op: &str, reason: &str) -> Cluster {
    complete(env, &[("fake_error", op), ("fake_fail_reason", reason)]).await
}

/// Asserts that the cluster is `status` with the driver's `reason`.
async fn assert_failed(env: &Env, uuid: &str, status: Status, reason: &str) {
    let row = env.row(uuid).await.expect("row");
    assert_eq!(row.status, Some(status));
    assert_eq!(row.status_reason.as_deref(), Some(reason));
}

// The PATCH of node_count (cluster_conductor.py:89-164): the default
// worker's count is stored and the driver's update called; the same values
// again are a no-op; a health-only change is saved without the driver.
#[tokio::test]
async fn update_sets_the_node_count_and_the_health() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = complete(&env, &[]).await;
    let rc = caller("p1");
    let update = |n: i32, health: Option<&str>| ClusterUpdate {
        node_count: n,
        health_status: health.map(str::to_string),
        health_status_reason: None,
    };
    env.c()
        .update_cluster(&rc, &cl.uuid, update(3, None))
        .await
        .expect("update");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::UpdateInProgress));
    assert_eq!(env.nodegroups(&cl.uuid).await[1].node_count, Some(3));
    assert_eq!(env.events(), vec!["magnum.cluster.update pending"]);
    let polled = env.poll(&cl.uuid).await;
    assert_eq!(polled.status, Some(Status::UpdateComplete));
    assert_eq!(env.events(), vec!["magnum.cluster.update success"]);
    env.t.advance(1);
    // The same values: nothing happens.
    env.c()
        .update_cluster(&rc, &cl.uuid, update(3, None))
        .await
        .expect("no-op");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::UpdateComplete));
    assert!(env.events().is_empty());
    // Health only: saved, no driver call.
    env.c()
        .update_cluster(&rc, &cl.uuid, update(3, Some("HEALTHY")))
        .await
        .expect("health");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.health_status.as_deref(), Some("HEALTHY"));
    assert_eq!(row.status, Some(Status::UpdateComplete));
    assert!(env.events().is_empty());
    // A cluster that does not exist.
    let r = env
        .c()
        .update_cluster(&rc, "5d12f6fd-a196-4bf0-ae4c-1f639a523a52", update(1, None))
        .await;
    assert_eq!(client(r).0, 404);
}

// A driver failure leaves the cluster and the nodegroup UPDATE_FAILED with
// the driver's reason, and the node count as it was (Magnum's conductor).
#[tokio::test]
async fn a_failed_update_restores_the_node_count() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = failing(&env, "update", "no capacity").await;
    env.c()
        .update_cluster(
            &caller("p1"),
            &cl.uuid,
            ClusterUpdate {
                node_count: 4,
                ..ClusterUpdate::default()
            },
        )
        .await
        .expect("accepted");
    assert_failed(&env, &cl.uuid, Status::UpdateFailed, "no capacity").await;
    let worker = &env.nodegroups(&cl.uuid).await[1];
    assert_eq!(worker.node_count, Some(1));
    assert_eq!(worker.status, Some(Status::UpdateFailed));
    assert_eq!(
        env.events(),
        vec![
            "magnum.cluster.update pending",
            "magnum.cluster.update failure"
        ]
    );
}

// Resize (cluster_actions.py:99-141): the default worker when no nodegroup
// is named, the bounds of a worker (400), an unknown nodegroup (404), and
// the driver's failure with its reason.
#[tokio::test]
async fn resize_checks_its_nodegroup_then_calls_the_driver() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = complete(&env, &[]).await;
    let rc = caller("p1");
    let resize = |ng: Option<&str>, n: i32| ClusterResize {
        nodegroup: ng.map(str::to_string),
        node_count: n,
        nodes_to_remove: Vec::new(),
    };
    let r = env
        .c()
        .resize_cluster(&rc, &cl, resize(Some("no-such-group"), 2))
        .await;
    assert_eq!(
        client(r),
        (404, "Nodegroup no-such-group could not be found.".into())
    );
    let r = env.c().resize_cluster(&rc, &cl, resize(None, -1)).await;
    assert_eq!(client(r).0, 400);
    env.c()
        .resize_cluster(&rc, &cl, resize(Some("default-worker"), 2))
        .await
        .expect("resize");
    let worker = &env.nodegroups(&cl.uuid).await[1];
    assert_eq!(worker.node_count, Some(2));
    assert_eq!(env.status(&cl.uuid).await, Some(Status::UpdateInProgress));
    let polled = env.poll(&cl.uuid).await;
    assert_eq!(polled.status, Some(Status::UpdateComplete));
    // UPDATE_IN_PROGRESS may be resized (the autoscaler does); a deleting
    // cluster may not: the guard answers 409 at once.
    env.set_status(&cl.uuid, Status::UpdateInProgress).await;
    env.c()
        .resize_cluster(&rc, &cl, resize(None, 3))
        .await
        .expect("resize while updating");
    env.set_status(&cl.uuid, Status::DeleteInProgress).await;
    let r = env.c().resize_cluster(&rc, &cl, resize(None, 4)).await;
    assert_eq!(
        client(r),
        (
            409,
            "Resizing a cluster when status is \"DELETE_IN_PROGRESS\" is not supported.".into()
        )
    );
    assert_eq!(env.nodegroups(&cl.uuid).await[1].node_count, Some(3));
}

// A delete that lands between a resize's state guard and its driver call
// (two api processes): the resize does not call the driver, restores the
// node count and answers the guard's 409, and the cluster stays
// DELETE_IN_PROGRESS (the fault suite saw the resize's save turn it back
// into UPDATE_IN_PROGRESS).
#[tokio::test]
async fn a_delete_between_the_resize_guard_and_the_driver_wins() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = complete(&env, &[]).await;
    let rc = caller("p1");
    let worker = env.nodegroups(&cl.uuid).await[1].clone();
    env.set_status(&cl.uuid, Status::DeleteInProgress).await;
    let r = env
        .c()
        .run_update(
            &rc,
            &cl.uuid,
            &worker.uuid,
            Some(1),
            Some(worker.status),
            "resize-cluster",
            |_, _, _| Box::pin(async { panic!("the driver was called") }),
        )
        .await;
    assert_eq!(
        client(r),
        (
            409,
            "Resizing a cluster when status is \"DELETE_IN_PROGRESS\" is not supported.".into()
        )
    );
    assert_eq!(env.status(&cl.uuid).await, Some(Status::DeleteInProgress));
    assert_eq!(env.nodegroups(&cl.uuid).await[1].node_count, Some(1));
}

// Upgrade (cluster_actions.py:155-194): the driver moves the cluster to the
// template; a non-default nodegroup may only use the cluster's template.
#[tokio::test]
async fn upgrade_moves_the_cluster_to_the_template() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = complete(&env, &[]).await;
    let mut newer = ClusterTemplate {
        uuid: "0b1c2d3e-4f01-4c41-9d3a-7a0c2c1f5e02".into(),
        id: 0,
        name: "newer".into(),
        labels: Some(StringMap::from([("kube_tag".into(), "v1.31.0".into())])),
        ..env.tmpl.clone()
    };
    env.db()
        .q()
        .create_cluster_template(&mut newer)
        .await
        .expect("template");
    env.c()
        .upgrade_cluster(
            &caller("p1"),
            &cl,
            ClusterUpgrade {
                template: newer.clone(),
                ..ClusterUpgrade::default()
            },
        )
        .await
        .expect("upgrade");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.cluster_template_id, newer.uuid);
    assert_eq!(row.status, Some(Status::UpdateInProgress));
    assert_eq!(env.events(), vec!["magnum.cluster.update pending"]);
}

// A delete the driver fails leaves DELETE_FAILED with its reason and sends
// Magnum's delete failure.
#[tokio::test]
async fn a_failed_delete_is_delete_failed() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = failing(&env, "delete", "stuck volume").await;
    env.c()
        .delete_cluster(&caller("p1"), &cl)
        .await
        .expect("accepted");
    assert_failed(&env, &cl.uuid, Status::DeleteFailed, "stuck volume").await;
    assert_eq!(
        env.events(),
        vec![
            "magnum.cluster.delete pending",
            "magnum.cluster.delete failure"
        ]
    );
}

// Lookups of clusters by uuid or name within the caller's scope: another
// project's cluster is 404, a name used twice 409.
#[tokio::test]
async fn clusters_are_found_by_uuid_or_name_in_scope() {
    let env = Env::new(Dialect::Sqlite).await;
    let a = env
        .create_from(ClusterCreate {
            name: Some("same".into()),
            ..env.input()
        })
        .await
        .expect("create");
    let rc = caller("p1");
    assert_eq!(
        env.c().get_cluster(&rc, &a.uuid).await.expect("uuid").uuid,
        a.uuid
    );
    assert_eq!(
        env.c().get_cluster(&rc, "same").await.expect("name").uuid,
        a.uuid
    );
    let r = env.c().get_cluster(&caller("p2"), &a.uuid).await;
    assert_eq!(
        client(r),
        (404, format!("Cluster {} could not be found.", a.uuid))
    );
    env.create_from(ClusterCreate {
        name: Some("same".into()),
        ..env.input()
    })
    .await
    .expect("create");
    let r = env.c().get_cluster(&rc, "same").await;
    assert_eq!(client(r).0, 409);
    let admin = RequestContext {
        is_admin: true,
        all_projects: true,
        ..caller("p2")
    };
    assert_eq!(
        env.c()
            .get_cluster(&admin, &a.uuid)
            .await
            .expect("admin")
            .uuid,
        a.uuid
    );
}

// A delete whose cluster the status poller of another process removed while
// the delete waited for the cluster's lock (a create job of this process
// held it): what was asked is done, so the delete succeeds (the API answers
// 204, not 404).
#[tokio::test]
async fn delete_of_a_cluster_removed_meanwhile_succeeds() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = env.create("p1").await;
    let lock = env.c().lock_cluster(&cl.uuid).await;
    let (c, target) = (env.c().clone(), cl.clone());
    let delete = tokio::spawn(async move { c.delete_cluster(&caller("p1"), &target).await });
    let mut started = false;
    for _ in 0..400 {
        let status = env.row(&cl.uuid).await.and_then(|r| r.status);
        if status == Some(Status::DeleteInProgress) {
            started = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(5)).await;
    }
    assert!(started, "the delete set DELETE_IN_PROGRESS");
    env.db()
        .q()
        .delete_clusters_cascade(std::slice::from_ref(&cl.uuid))
        .await
        .expect("remove the rows");
    drop(lock);
    delete
        .await
        .expect("the delete task")
        .expect("the delete of a cluster removed meanwhile");
    assert!(env.row(&cl.uuid).await.is_none());
}
