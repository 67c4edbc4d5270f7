//! The server processes: `api`, `all-in-one` and `reconciler`.

use std::sync::Arc;
use std::time::Duration;

use super::Failure;
use crate::app;
use crate::conductor::Conductor;
use crate::options::Options;

/// `openkeel-magnum api`: serves the API on a database already migrated.
pub(super) async fn api(options: Options) -> Result<(), Failure> {
    let traces = app::start_traces(&options)?;
    let db = app::open_database(&options).await?;
    crate::db::check_schema(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::Api, db.clone()).await?;
    let metrics = app::metrics(&options, &conductor);
    let listener = app::serve_metrics(&options, metrics.clone()).await?;
    let served = serve(&options, conductor, metrics).await;
    drop(listener);
    db.close().await;
    if let Some(t) = traces {
        t.shutdown().await;
    }
    served
}

/// `openkeel-magnum all-in-one`: creates or migrates the schema first, and
/// runs the background work beside the API.
pub(super) async fn all_in_one(options: Options) -> Result<(), Failure> {
    let traces = app::start_traces(&options)?;
    let db = app::open_database(&options).await?;
    crate::db::upgrade(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::AllInOne, db.clone()).await?;
    let metrics = app::metrics(&options, &conductor);
    // Bound before anything is started: a taken port stops the process
    // before it writes its service row.
    let listener = app::serve_metrics(&options, metrics.clone()).await?;
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stop = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    // The service row first, before the status loop's lease row (see
    // `reconciler`).
    let heartbeat = app::heartbeat(&options, conductor.clone());
    heartbeat.beat().await;
    let heartbeat = tokio::spawn(heartbeat.run(until_stop(stopped.clone())));
    let reconciler = app::reconciler(&options, app::Mode::AllInOne, conductor.clone()).await?;
    metrics.sample_reconciler(reconciler.clone());
    let reconciler = tokio::spawn(reconciler.run(until_stop(stopped)));
    let served = serve(&options, conductor, metrics).await;
    drop(listener);
    let _ = stop.send(true);
    let _ = heartbeat.await;
    let _ = reconciler.await;
    db.close().await;
    if let Some(t) = traces {
        t.shutdown().await;
    }
    served
}

/// `openkeel-magnum reconciler`: the background work of magnum-conductor —
/// the service heartbeat and the status loop — until SIGINT or SIGTERM.
pub(super) async fn reconciler(options: Options) -> Result<(), Failure> {
    let traces = app::start_traces(&options)?;
    let db = app::open_database(&options).await?;
    crate::db::check_schema(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::Api, db.clone()).await?;
    let metrics = app::metrics(&options, &conductor);
    // Bound before the service row is written: a taken port stops the
    // process first.
    let listener = app::serve_metrics(&options, metrics.clone()).await?;
    let heartbeat = app::heartbeat(&options, conductor.clone());
    // The service row is written before the status loop takes its lease
    // (another magnum_service row): in a fresh database the conductor's row
    // is then the first, id 1, as with Magnum (openstacksdk's functional
    // test of the service list expects it).
    heartbeat.beat().await;
    tracing::info!(host = %heartbeat.host, "reconciler started");
    let (stop, stopped) = tokio::sync::watch::channel(false);
    let until_stop = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
        let _ = rx.wait_for(|s| *s).await;
    };
    let beat = tokio::spawn(heartbeat.run(until_stop(stopped.clone())));
    let status = app::reconciler(&options, app::Mode::Api, conductor).await?;
    metrics.sample_reconciler(status.clone());
    let status = tokio::spawn(status.run(until_stop(stopped)));
    app::shutdown_signal().await;
    drop(listener);
    let _ = stop.send(true);
    let _ = beat.await;
    let _ = status.await;
    db.close().await;
    if let Some(t) = traces {
        t.shutdown().await;
    }
    Ok(())
}

/// Serves the API; cluster creates answer once their rows are written and
/// their create jobs run on the pool, drained at the end (for at most 15
/// seconds; what is left the status loop resumes).
async fn serve(
    options: &Options,
    conductor: Conductor,
    metrics: Arc<crate::metrics::Metrics>,
) -> Result<(), Failure> {
    let enforcer = Arc::new(app::load_policy(options)?);
    let auth = app::authenticator(options, enforcer.clone()).await?;
    metrics.sample_auth(auth.clone());
    conductor.start_create_jobs(app::create_job_workers());
    let served = app::serve(
        options,
        app::tracked(
            options,
            app::application(options, auth, conductor.clone(), enforcer),
            metrics,
        ),
    )
    .await;
    if let Err(e) = conductor.stop_create_jobs(Duration::from_secs(15)).await {
        tracing::warn!(error = %e, "cluster create jobs at shutdown");
    }
    served?;
    Ok(())
}
