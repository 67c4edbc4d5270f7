//! Ports of the Go reconciler's tests (internal/reconcile), on SQLite and
//! the fake driver with the fixture's clock.

use std::time::Duration;

use magnum_domain::Status;
use magnum_domain::models::Cluster;

use driver_host::DriverConfig;

use super::{FinishError, PassError, Reconciler, Settings};
use crate::conductor::ClusterCreate;
use crate::conductor::testing::TestConductor;
use crate::conductor::testing::{Env, caller};
use crate::db::Dialect;

fn reconciler(env: &Env, holder: &str) -> Reconciler {
    Reconciler::new(
        env.c().clone(),
        Settings {
            interval: Duration::from_secs(10),
            ..Settings::new(holder)
        },
    )
}

/// A cluster of p1 with two workers and `labels`.
async fn create(env: &Env, labels: &[(&str, &str)]) -> Cluster {
    env.create_from(ClusterCreate {
        node_count: 2,
        ..env.labelled(labels)
    })
    .await
    .expect("create")
}

// Ports TestTickCompletesCreateAndDelete.
#[tokio::test]
async fn a_tick_completes_a_create_and_a_delete() {
    let env = Env::new(Dialect::Sqlite).await;
    let r = reconciler(&env, "a");
    let cl = create(&env, &[]).await;
    assert_eq!(env.status(&cl.uuid).await, Some(Status::CreateInProgress));
    r.tick().await.expect("tick");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateComplete));
    assert!(
        row.api_address.is_some() && row.stack_id.is_some(),
        "{row:?}"
    );
    for ng in env.nodegroups(&cl.uuid).await {
        assert_eq!(ng.status, Some(Status::CreateComplete), "{}", ng.name);
        let addresses = ng.node_addresses.clone().unwrap_or_default();
        assert_eq!(
            i32::try_from(addresses.len()).ok(),
            ng.node_count,
            "{}",
            ng.name
        );
    }
    // The status sync sends Magnum's create success.
    assert_eq!(
        env.events(),
        vec![
            "magnum.cluster.create pending",
            "magnum.cluster.create success"
        ]
    );
    env.c()
        .delete_cluster(&caller("p1"), &row)
        .await
        .expect("delete");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::DeleteInProgress));
    r.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, None, "cluster still there");
    assert!(env.nodegroups(&cl.uuid).await.is_empty());
    assert_eq!(
        env.events(),
        vec![
            "magnum.cluster.delete pending",
            "magnum.cluster.delete success"
        ]
    );
}

// Ports TestTickInjectedFailure: a failure the driver reports on the poll
// leaves the cluster CREATE_FAILED, and a failed cluster is not polled
// again.
#[tokio::test]
async fn a_reported_failure_ends_the_create() {
    let env = Env::new(Dialect::Sqlite).await;
    let r = reconciler(&env, "a");
    let cl = create(&env, &[("fake_fail", "create")]).await;
    r.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::CreateFailed));
    r.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::CreateFailed));
}

// Ports TestDriverErrorMarksFailed: an error of the driver's create leaves
// the cluster CREATE_FAILED with the driver's reason.
#[tokio::test]
async fn a_driver_error_marks_the_cluster_failed() {
    let env = Env::new(Dialect::Sqlite).await;
    let cl = create(&env, &[("fake_error", "create")]).await;
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateFailed));
    assert!(
        row.status_reason.as_deref().is_some_and(|r| !r.is_empty()),
        "{row:?}"
    );
}

// Ports TestLeaseIsExclusive.
#[tokio::test]
async fn the_lease_is_exclusive() {
    let env = Env::new(Dialect::Sqlite).await;
    let (a, b) = (reconciler(&env, "a"), reconciler(&env, "b"));
    a.tick().await.expect("tick");
    let cl = create(&env, &[]).await;
    b.tick().await.expect("tick");
    assert_eq!(
        env.status(&cl.uuid).await,
        Some(Status::CreateInProgress),
        "b reconciled while a held the lease"
    );
    // a stops renewing: after the lease (3 intervals) b takes over.
    env.t.advance(31);
    b.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::CreateComplete));
    let lease = Duration::from_secs(30);
    assert!(
        !env.c()
            .acquire_reconciler_lease("a", lease)
            .await
            .expect("lease")
    );
    env.c()
        .release_reconciler_lease("b")
        .await
        .expect("release");
    assert!(
        env.c()
            .acquire_reconciler_lease("a", lease)
            .await
            .expect("lease")
    );
}

// Ports TestRunStopsOnCancel: the loop stops when told to and gives the
// lease up.
#[tokio::test]
async fn run_stops_and_releases_the_lease() {
    let env = Env::new(Dialect::Sqlite).await;
    let r = Reconciler::new(
        env.c().clone(),
        Settings {
            interval: Duration::from_secs(3600),
            ..Settings::new("a")
        },
    );
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let task = tokio::spawn(r.run(async {
        let _ = stopped.await;
    }));
    // The first tick runs at once and takes the lease.
    tokio::task::yield_now().await;
    let _ = stop.send(());
    tokio::time::timeout(Duration::from_secs(30), task)
        .await
        .expect("run returned")
        .expect("task");
    assert!(
        env.c()
            .acquire_reconciler_lease("b", Duration::from_secs(3600))
            .await
            .expect("lease"),
        "lease not released"
    );
}

// The deadlines Heat enforced for Magnum: a create still in progress past
// its create_timeout is failed with a reason.
#[tokio::test]
async fn deadlines_fail_operations_that_run_too_long() {
    // The fake driver keeps operations in progress for an hour (of the
    // host's clock).
    let t = TestConductor::builder()
        .drivers(|d| {
            let mut cfg = DriverConfig::default();
            cfg.options.insert("delay_seconds".into(), "3600".into());
            d.drivers.insert("fake".into(), cfg);
        })
        .build()
        .await;
    let env = Env::with(t).await;
    let r = reconciler(&env, "a");
    let cl = create(&env, &[]).await;
    r.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, Some(Status::CreateInProgress));
    // create_timeout is 60 minutes.
    env.t.advance(61 * 60);
    r.tick().await.expect("tick");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.status, Some(Status::CreateFailed));
    assert_eq!(
        row.status_reason.as_deref(),
        Some("Cluster create did not complete within 60 minutes.")
    );
    for ng in env.nodegroups(&cl.uuid).await {
        assert_ne!(ng.status, Some(Status::CreateInProgress), "{}", ng.name);
    }
}

// Ports TestDeleteHookFailureIsRetried (the hook is the removal of the
// cluster's certificates): while the certificate store fails, the rows stay
// DELETE_COMPLETE and the tick reports the error; the next tick removes
// them.
#[tokio::test]
async fn a_failed_certificate_removal_is_retried() {
    use crate::conductor::testing::FailingDeletes;

    let (env, failing) = FailingDeletes::env().await;
    let r = reconciler(&env, "a");
    let cl = create(&env, &[]).await;
    r.tick().await.expect("tick");
    let row = env.row(&cl.uuid).await.expect("row");
    let ca = row.ca_cert_ref.clone().expect("CA reference");
    failing.fail(&ca);
    env.c()
        .delete_cluster(&caller("p1"), &row)
        .await
        .expect("delete");
    let err = r.tick().await.expect_err("the store's error");
    assert!(
        matches!(&err, PassError::Clusters { unfinished, .. } if unfinished.iter().any(
            |e| matches!(e, FinishError::Unfinished(u) if u.keeps(&cl.uuid))
        )),
        "{err}"
    );
    assert_eq!(env.status(&cl.uuid).await, Some(Status::DeleteComplete));
    failing.heal();
    r.tick().await.expect("tick");
    assert_eq!(env.status(&cl.uuid).await, None, "cluster not removed");
}

// Idle clusters cost nothing: once every cluster is complete, a pass holds
// no cluster, so no driver is asked anything and no row is written.
#[tokio::test]
async fn idle_clusters_are_not_polled() {
    let env = Env::new(Dialect::Sqlite).await;
    let r = reconciler(&env, "a");
    let mut uuids = Vec::new();
    for _ in 0..20 {
        uuids.push(create(&env, &[]).await.uuid);
    }
    assert_eq!(
        env.c()
            .start_poll_pass(false)
            .await
            .expect("pass")
            .clusters
            .len(),
        20
    );
    r.tick().await.expect("tick");
    let before: Vec<Cluster> = {
        let mut rows = Vec::new();
        for u in &uuids {
            let row = env.row(u).await.expect("row");
            assert_eq!(row.status, Some(Status::CreateComplete), "{u}");
            rows.push(row);
        }
        rows
    };
    let pass = env.c().start_poll_pass(false).await.expect("pass");
    assert!(
        pass.clusters.is_empty(),
        "{} idle clusters polled",
        pass.clusters.len()
    );
    env.t.notifications.take();
    env.t.advance(3600);
    r.tick().await.expect("tick");
    for row in &before {
        let now = env.row(&row.uuid).await.expect("row");
        assert_eq!(
            now.updated_at, row.updated_at,
            "{} written by an idle pass",
            row.uuid
        );
        assert_eq!(now.status, row.status);
    }
    let sent = env.t.notifications.take();
    assert!(
        sent.is_empty(),
        "an idle pass sent {} notifications",
        sent.len()
    );
}

// Magnum's health monitor: with a health interval, a pass also polls the
// complete clusters and saves the health their driver reports, in the
// health columns only (`updated_at` stays, so that no operation's answer
// becomes stale); without one, a complete cluster is left alone.
#[tokio::test]
async fn complete_clusters_have_their_health_refreshed() {
    let env = Env::new(Dialect::Sqlite).await;
    let r = reconciler(&env, "a");
    let cl = create(&env, &[]).await;
    r.tick().await.expect("tick");
    let done = env.row(&cl.uuid).await.expect("row");
    assert_eq!(done.status, Some(Status::CreateComplete));
    assert_eq!(done.health_status.as_deref(), Some("HEALTHY"));
    assert_eq!(
        health_lost_then_tick(&env, &r, &cl.uuid).await.as_deref(),
        Some("UNKNOWN"),
        "polled without a health interval"
    );
    let r = Reconciler::new(
        env.c().clone(),
        Settings {
            interval: Duration::from_secs(10),
            health_interval: Some(Duration::from_secs(60)),
            ..Settings::new("a")
        },
    );
    r.tick().await.expect("tick");
    let row = env.row(&cl.uuid).await.expect("row");
    assert_eq!(row.health_status.as_deref(), Some("HEALTHY"));
    assert_eq!(row.health_status_reason, done.health_status_reason);
    assert_eq!(
        row.updated_at, done.updated_at,
        "a health refresh moved updated_at"
    );
    // Not again before the interval has passed.
    assert_eq!(
        health_lost_then_tick(&env, &r, &cl.uuid).await.as_deref(),
        Some("UNKNOWN")
    );
}

/// Loses the health of a complete cluster, as a failed check does, then
/// runs a tick of `r`: the cluster's health after it.
async fn health_lost_then_tick(env: &Env, r: &Reconciler, uuid: &str) -> Option<String> {
    env.c()
        .db()
        .q()
        .set_cluster_health(uuid, Status::CreateComplete, Some("UNKNOWN"), &None)
        .await
        .expect("health");
    r.tick().await.expect("tick");
    env.row(uuid).await.expect("row").health_status
}
