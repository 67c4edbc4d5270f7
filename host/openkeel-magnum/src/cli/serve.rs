//! The server processes: `api`, `all-in-one` and `reconciler`.

use std::sync::Arc;
use std::time::Duration;

use super::Failure;
use crate::app;
use crate::conductor::Conductor;
use crate::options::Options;

/// What every server process starts with, in this order: traces, the
/// database (its schema checked, or migrated by all-in-one), the conductor,
/// the metrics and their listener. The listener is bound before anything
/// else runs: a taken port stops the process before it writes its service
/// row.
struct Started {
    traces: Option<crate::traces::Traces>,
    db: crate::db::Db,
    conductor: Conductor,
    metrics: Arc<crate::metrics::Metrics>,
    listener: Option<app::MetricsListener>,
}

impl Started {
    async fn new(options: &Options, mode: app::Mode) -> Result<Started, Failure> {
        let traces = app::start_traces(options)?;
        let db = app::open_database(options).await?;
        if mode == app::Mode::AllInOne {
            crate::db::upgrade(&db).await.map_err(Failure::new)?;
        } else {
            crate::db::check_schema(&db).await.map_err(Failure::new)?;
        }
        let conductor = app::conductor(options, mode, db.clone()).await?;
        let metrics = app::metrics(options, &conductor);
        let listener = app::serve_metrics(options, metrics.clone()).await?;
        Ok(Started {
            traces,
            db,
            conductor,
            metrics,
            listener,
        })
    }

    /// The heartbeat's first beat, then the heartbeat and the status loop
    /// running until `stop` is sent. The service row is written before the
    /// status loop takes its lease (another magnum_service row): in a fresh
    /// database the conductor's row is then the first, id 1, as with Magnum
    /// (openstacksdk's functional test of the service list expects it).
    async fn background(
        &self,
        options: &Options,
        mode: app::Mode,
        stop: &tokio::sync::watch::Sender<bool>,
    ) -> Result<Vec<tokio::task::JoinHandle<()>>, Failure> {
        let until_stop = |mut rx: tokio::sync::watch::Receiver<bool>| async move {
            let _ = rx.wait_for(|s| *s).await;
        };
        let heartbeat = app::heartbeat(options, self.conductor.clone());
        heartbeat.beat().await;
        tracing::info!(host = %heartbeat.host, "reconciler started");
        let beat = tokio::spawn(heartbeat.run(until_stop(stop.subscribe())));
        let status = app::reconciler(options, mode, self.conductor.clone()).await?;
        self.metrics.sample_reconciler(status.clone());
        let status = tokio::spawn(status.run(until_stop(stop.subscribe())));
        Ok(vec![beat, status])
    }

    /// Stops the metrics listener and the background tasks, closes the
    /// database and flushes the traces.
    async fn finish(
        self,
        stop: Option<tokio::sync::watch::Sender<bool>>,
        tasks: Vec<tokio::task::JoinHandle<()>>,
    ) {
        drop(self.listener);
        if let Some(stop) = stop {
            let _ = stop.send(true);
        }
        for task in tasks {
            let _ = task.await;
        }
        self.db.close().await;
        if let Some(t) = self.traces {
            t.shutdown().await;
        }
    }
}

/// `openkeel-magnum api`: serves the API on a database already migrated.
pub(super) async fn api(options: Options) -> Result<(), Failure> {
    let started = Started::new(&options, app::Mode::Api).await?;
    let served = serve(&options, started.conductor.clone(), started.metrics.clone()).await;
    started.finish(None, Vec::new()).await;
    served
}

/// `openkeel-magnum all-in-one`: creates or migrates the schema first, and
/// runs the background work beside the API.
pub(super) async fn all_in_one(options: Options) -> Result<(), Failure> {
    let started = Started::new(&options, app::Mode::AllInOne).await?;
    let (stop, _) = tokio::sync::watch::channel(false);
    let tasks = started
        .background(&options, app::Mode::AllInOne, &stop)
        .await?;
    let served = serve(&options, started.conductor.clone(), started.metrics.clone()).await;
    started.finish(Some(stop), tasks).await;
    served
}

/// `openkeel-magnum reconciler`: the background work of magnum-conductor —
/// the service heartbeat and the status loop — until SIGINT or SIGTERM.
pub(super) async fn reconciler(options: Options) -> Result<(), Failure> {
    let started = Started::new(&options, app::Mode::Api).await?;
    let (stop, _) = tokio::sync::watch::channel(false);
    let tasks = started.background(&options, app::Mode::Api, &stop).await?;
    app::shutdown_signal().await;
    started.finish(Some(stop), tasks).await;
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
