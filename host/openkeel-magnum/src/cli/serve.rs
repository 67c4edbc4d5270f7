//! The server processes: `api`, `all-in-one` and `reconciler`.

use std::sync::Arc;

use super::Failure;
use crate::app;
use crate::conductor::Conductor;
use crate::options::Options;

/// `openkeel-magnum api`: serves the API on a database already migrated.
pub(super) async fn api(options: Options) -> Result<(), Failure> {
    let db = app::open_database(&options).await?;
    crate::db::check_schema(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::Api, db.clone()).await?;
    let served = serve(&options, conductor).await;
    db.close().await;
    served
}

/// `openkeel-magnum all-in-one`: creates or migrates the schema first, and
/// runs the background work beside the API.
pub(super) async fn all_in_one(options: Options) -> Result<(), Failure> {
    let db = app::open_database(&options).await?;
    crate::db::upgrade(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::AllInOne, db.clone()).await?;
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    let background = tokio::spawn(app::heartbeat(&options, conductor.clone()).run(async {
        let _ = stopped.await;
    }));
    let served = serve(&options, conductor).await;
    let _ = stop.send(());
    let _ = background.await;
    db.close().await;
    served
}

/// `openkeel-magnum reconciler`: the background work of magnum-conductor —
/// the service heartbeat — until SIGINT or SIGTERM.
pub(super) async fn reconciler(options: Options) -> Result<(), Failure> {
    let db = app::open_database(&options).await?;
    crate::db::check_schema(&db).await.map_err(Failure::new)?;
    let conductor = app::conductor(&options, app::Mode::Api, db.clone()).await?;
    let heartbeat = app::heartbeat(&options, conductor.clone());
    tracing::info!(host = %heartbeat.host, "reconciler started");
    heartbeat.run(app::shutdown_signal()).await;
    db.close().await;
    Ok(())
}

async fn serve(options: &Options, conductor: Conductor) -> Result<(), Failure> {
    let enforcer = Arc::new(app::load_policy(options)?);
    let auth = app::authenticator(options, enforcer.clone()).await?;
    app::serve(
        options,
        app::application(options, auth, conductor, enforcer),
    )
    .await?;
    Ok(())
}
